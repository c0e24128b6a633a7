/* rpe-cli-parse.h: the one parser of the numbers on `rpe`'s command line.
 *
 * Every number an option takes goes through these functions: decimal only (no leading zero ("010", octal to some tools),
 * no hex "0x10", no sign unless the range allows negative values, no spaces, no "inf" or
 * "nan"), checked against the option's range, and refused with a message that names the
 * option and repeats the text as given.  Errors are RPE_ERROR_INVALID_ARGUMENT (exit 2).
 * Pure functions of their arguments: no state (tools/../fuzz/fuzz-options.c runs them).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A whole number in [min, max]: "-"? then 1..19 digits without a leading zero ("010" is refused:
 * octal to some tools). */
gboolean
rpe_cli_parse_int (const char *option, const char *text, gint64 min, gint64 max, gint64 *value, GError **error);

/* A finite number in [min, max]: "-"? digits ["." digits] [("e"|"E") ["+"|"-"] digits], or with
 * the digits after the point only (".5"). */
gboolean
rpe_cli_parse_double (const char *option, const char *text, double min, double max, double *value, GError **error);

/* A size in bytes, at least 1: a decimal number (a fraction allowed) with an optional binary
 * unit K, M, G or T (KiB = 1024 bytes; "Ki"/"KB"/"KiB" spelled out too), or "P%", 0 < P <= 100,
 * of `total` (the physical memory for a memory budget). */
gboolean rpe_cli_parse_size (const char *option, const char *text, guint64 total, guint64 *bytes, GError **error);

/* "A,B,C": 1 .. max_count whole numbers in [min, max] (spaces around the commas allowed);
 * *values is a new array of gint64. */
gboolean rpe_cli_parse_int_list (const char *option,
                                 const char *text,
                                 gint64      min,
                                 gint64      max,
                                 guint       max_count,
                                 GArray    **values,
                                 GError    **error);

/* "A,B,C": 1 .. max_count finite numbers in [min, max], or in (min, max] with min_open; *values
 * is a new array of double. */
gboolean rpe_cli_parse_double_list (const char *option,
                                    const char *text,
                                    double      min,
                                    gboolean    min_open,
                                    double      max,
                                    guint       max_count,
                                    GArray    **values,
                                    GError    **error);

/* "N1xN2": two whole numbers in [1, max] (an image grid). */
gboolean rpe_cli_parse_grid (const char *option, const char *text, gint64 max, gsize *n1, gsize *n2, GError **error);

/* "A:B" with 0 <= A < B <= n; an empty B is n ("A:"). */
gboolean rpe_cli_parse_range (const char *option, const char *text, gsize n, gsize *a, gsize *b, GError **error);

G_END_DECLS

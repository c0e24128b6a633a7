/* rpe-cli-parse.c: the one parser of the numbers on `rpe`'s command line (rpe-cli-parse.h). */
#include "config.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "rpe-error.h"

#include "rpe-cli-parse.h"

/* The text as given, for a message: at most 64 characters, control characters escaped. */
static char *
shown (const char *text)
{
  g_autofree char *cut = g_utf8_make_valid (text, MIN (strlen (text), (gsize) 64));
  GString         *s = g_string_new (NULL);

  for (const char *p = cut; *p != '\0'; p++)
    if ((guchar) *p < 0x20 || *p == 0x7f)
      g_string_append_printf (s, "\\x%02X", (guchar) *p);
    else
      g_string_append_c (s, *p);
  if (strlen (text) > 64)
    g_string_append (s, "...");
  return g_string_free (s, FALSE);
}

/* Digits only, at least one; *end after them. */
static gboolean
digits (const char *p, const char **end)
{
  const char *q = p;

  while (g_ascii_isdigit (*q))
    q++;
  *end = q;
  return q > p;
}

/* A leading zero before another digit ("010", "-07"): octal to C and to some tools, so
 * refused rather than guessed. */
static gboolean
leading_zero (const char *text)
{
  const char *p = text != NULL && *text == '-' ? text + 1 : text;

  return p != NULL && p[0] == '0' && g_ascii_isdigit (p[1]);
}

/* "-"? digits, no leading zero, the whole text, into an int64 (FALSE on overflow or anything else). */
static gboolean
decimal_int (const char *text, gboolean negative_ok, gint64 *value)
{
  const char *p = text, *end;
  gboolean    negative = FALSE;
  guint64     v = 0, limit;

  if (*p == '-' && negative_ok)
    {
      negative = TRUE;
      p++;
    }
  if (!digits (p, &end) || *end != '\0' || (end - p > 1 && *p == '0'))
    return FALSE;
  limit = negative ? (guint64) G_MAXINT64 + 1 : (guint64) G_MAXINT64;
  for (; p < end; p++)
    {
      guint d = (guint) (*p - '0');

      if (v > (limit - d) / 10)
        return FALSE;
      v = v * 10 + d;
    }
  *value = negative ? (v == (guint64) G_MAXINT64 + 1 ? G_MININT64 : -(gint64) v) : (gint64) v;
  return TRUE;
}

gboolean
rpe_cli_parse_int (const char *option, const char *text, gint64 min, gint64 max, gint64 *value, GError **error)
{
  gint64 v;

  if (text == NULL || !decimal_int (text, min < 0, &v) || v < min || v > max)
    {
      g_autofree char *got = shown (text != NULL ? text : "");

      if (leading_zero (text))
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                              _("%s: '%s' has a leading zero (octal to some tools): write the number in decimal "
                                "without it"),
                              option, got);
      return rpe_set_error (
        error, RPE_ERROR_INVALID_ARGUMENT,
        _("%s takes a whole number from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT ", written in decimal (got '%s')"),
        option, min, max, got);
    }
  *value = v;
  return TRUE;
}

/* The syntax of rpe_cli_parse_double, the whole text; *end after the number. */
static gboolean
decimal_number (const char *text, gboolean negative_ok, const char **end)
{
  const char *p = text, *q;
  gboolean    whole, fraction = FALSE;

  if (*p == '-' && negative_ok)
    p++;
  whole = digits (p, &q);
  if (q - p > 1 && *p == '0')
    return FALSE;                       /* "010": octal to some tools */
  p = q;
  if (*p == '.')
    {
      fraction = digits (p + 1, &q);
      p = fraction ? q : p + 1;
    }
  if (!whole && !fraction)
    return FALSE;
  if (*p == 'e' || *p == 'E')
    {
      p++;
      if (*p == '+' || *p == '-')
        p++;
      if (!digits (p, &q))
        return FALSE;
      p = q;
    }
  *end = p;
  return TRUE;
}

static void
format_double (char *buf, gsize size, double v)
{
  g_ascii_formatd (buf, (int) size, "%g", v);
}

gboolean
rpe_cli_parse_double (const char *option, const char *text, double min, double max, double *value, GError **error)
{
  const char *end;
  double      v = NAN;

  if (text != NULL && decimal_number (text, min < 0, &end) && *end == '\0')
    v = g_ascii_strtod (text, NULL);
  if (!isfinite (v) || v < min || v > max)
    {
      g_autofree char *got = shown (text != NULL ? text : "");
      char             lo[G_ASCII_DTOSTR_BUF_SIZE], hi[G_ASCII_DTOSTR_BUF_SIZE];

      format_double (lo, sizeof lo, min);
      format_double (hi, sizeof hi, max);
      return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("%s takes a decimal number from %s to %s (got '%s')"),
                            option, lo, hi, got);
    }
  *value = v;
  return TRUE;
}

gboolean
rpe_cli_parse_size (const char *option, const char *text, guint64 total, guint64 *bytes, GError **error)
{
  const char *end = NULL;
  double      v = NAN, scale = 1.0, b = NAN;

  if (text != NULL && decimal_number (text, FALSE, &end) && end[0] != 'e' && strpbrk (text, "eE") == NULL)
    {
      v = g_ascii_strtod (text, NULL);
      if (g_str_equal (end, "%"))
        b = v > 0 && v <= 100 ? floor ((double) total * (v / 100.0)) : NAN;
      else
        {
          switch (g_ascii_toupper (*end))
            {
            case 'K':
              scale = 1024.0;
              end++;
              break;
            case 'M':
              scale = 1024.0 * 1024.0;
              end++;
              break;
            case 'G':
              scale = 1024.0 * 1024.0 * 1024.0;
              end++;
              break;
            case 'T':
              scale = 1024.0 * 1024.0 * 1024.0 * 1024.0;
              end++;
              break;
            default:
              break;
            }
          if (scale > 1.0 && (*end == 'i' || *end == 'I'))
            end++;
          if (*end == 'b' || *end == 'B')
            end++;
          if (*end == '\0')
            b = floor (v * scale);
        }
    }
  /* 2^64 is exact in a double: anything from there up does not fit */
  if (!(b >= 1.0 && b < 18446744073709551616.0))
    {
      g_autofree char *got = shown (text != NULL ? text : "");

      return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                            _("%s takes a size such as 512M, 2G or 50%% (of the memory), at least one byte "
                              "(got '%s')"),
                            option, got);
    }
  *bytes = (guint64) b;
  return TRUE;
}

gboolean
rpe_cli_parse_int_list (const char *option,
                        const char *text,
                        gint64      min,
                        gint64      max,
                        guint       max_count,
                        GArray    **values,
                        GError    **error)
{
  g_auto (GStrv) parts = g_strsplit (text != NULL ? text : "", ",", -1);
  g_autoptr (GArray) list = g_array_new (FALSE, FALSE, sizeof (gint64));
  guint n = g_strv_length (parts);

  if (n == 0 || n > max_count)
    {
      g_autofree char *got = shown (text != NULL ? text : "");

      return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                            _("%s takes 1 to %u comma-separated whole numbers (got '%s')"), option, max_count, got);
    }
  for (guint i = 0; i < n; i++)
    {
      gint64 v;

      if (!decimal_int (g_strstrip (parts[i]), min < 0, &v) || v < min || v > max)
        {
          g_autofree char *got = shown (text);

          return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                                _("%s takes comma-separated whole numbers from %" G_GINT64_FORMAT
                                  " to %" G_GINT64_FORMAT ", written in decimal (got '%s')"),
                                option, min, max, got);
        }
      g_array_append_val (list, v);
    }
  *values = g_steal_pointer (&list);
  return TRUE;
}

gboolean
rpe_cli_parse_double_list (const char *option,
                           const char *text,
                           double      min,
                           gboolean    min_open,
                           double      max,
                           guint       max_count,
                           GArray    **values,
                           GError    **error)
{
  g_auto (GStrv) parts = g_strsplit (text != NULL ? text : "", ",", -1);
  g_autoptr (GArray) list = g_array_new (FALSE, FALSE, sizeof (double));
  guint n = g_strv_length (parts);

  for (guint i = 0; i < n && n <= max_count; i++)
    {
      const char *s = g_strstrip (parts[i]), *end;
      double      v = NAN;

      if (decimal_number (s, min < 0, &end) && *end == '\0')
        v = g_ascii_strtod (s, NULL);
      if (!isfinite (v) || v < min || (min_open && v == min) || v > max)
        break;
      g_array_append_val (list, v);
    }
  if (n == 0 || list->len != n)
    {
      g_autofree char *got = shown (text != NULL ? text : "");
      char             lo[G_ASCII_DTOSTR_BUF_SIZE], hi[G_ASCII_DTOSTR_BUF_SIZE];

      format_double (lo, sizeof lo, min);
      format_double (hi, sizeof hi, max);
      return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                            _("%s takes 1 to %u comma-separated decimal numbers %s %s and at most %s (got '%s')"),
                            option, max_count, min_open ? _("above") : _("from"), lo, hi, got);
    }
  *values = g_steal_pointer (&list);
  return TRUE;
}

gboolean
rpe_cli_parse_grid (const char *option, const char *text, gint64 max, gsize *n1, gsize *n2, GError **error)
{
  g_auto (GStrv) parts = g_strsplit (text != NULL ? text : "", "x", 3);
  gint64 a = 0, b = 0;

  if (g_strv_length (parts) != 2 || !decimal_int (parts[0], FALSE, &a) || !decimal_int (parts[1], FALSE, &b) || a < 1
      || b < 1 || a > max || b > max)
    {
      g_autofree char *got = shown (text != NULL ? text : "");

      return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                            _("%s must look like N1xN2 with each side 1..%" G_GINT64_FORMAT " (got '%s')"), option,
                            max, got);
    }
  *n1 = (gsize) a;
  *n2 = (gsize) b;
  return TRUE;
}

gboolean
rpe_cli_parse_range (const char *option, const char *text, gsize n, gsize *a, gsize *b, GError **error)
{
  g_auto (GStrv) part = g_strsplit (text != NULL ? text : "", ":", 2);
  gint64 va = -1, vb = (gint64) MIN (n, (gsize) G_MAXINT64);

  if (part[0] == NULL || part[1] == NULL || !decimal_int (part[0], FALSE, &va)
      || (part[1][0] != '\0' && !decimal_int (part[1], FALSE, &vb)) || va < 0
      || vb > (gint64) MIN (n, (gsize) G_MAXINT64) || va >= vb)
    {
      g_autofree char *got = shown (text != NULL ? text : "");

      return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                            _("%s must be A:B with 0 <= A < B <= N = %zu (got '%s')"), option, (size_t) n, got);
    }
  *a = (gsize) va;
  *b = (gsize) vb;
  return TRUE;
}

/* rpe-error.h: the GError domain of the core's file readers and request layer.
 * Error codes are RpeStatus values. */
#pragma once

#include <glib.h>

#include "rpe-findings.h"
#include "rpe-status.h"

G_BEGIN_DECLS

#define RPE_ERROR (rpe_error_quark ())
GQuark rpe_error_quark (void);

/* Sets *error (if error != NULL) to code `status` with a printf-style message. Returns FALSE. */
gboolean rpe_set_error (GError     **error,
                        RpeStatus    status,
                        const char  *format,
                        ...) G_GNUC_PRINTF (3, 4);

/* A size for a message: "512 bytes", "1.5 KiB", "12.0 MiB", "3.25 GiB"
 * (never "0.0 MiB").  Newly allocated. */
char    *rpe_format_bytes (guint64 bytes);

G_END_DECLS

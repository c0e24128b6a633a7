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

/* What a refused size did not fit in, for a message: "the memory budget (N
 * bytes)" for RPE_ERROR_NO_MEMORY, the system's limit on this process for
 * RPE_ERROR_SYSTEM_MEMORY.  Newly allocated. */
char    *rpe_memory_limit_text (RpeStatus status);

G_END_DECLS

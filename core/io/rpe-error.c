#include "config.h"

#include "rpe-error.h"
#include "rpe-file.h"

G_DEFINE_QUARK (rpe-error-quark, rpe_error)

gboolean
rpe_set_error (GError     **error,
               RpeStatus    status,
               const char  *format,
               ...)
{
  va_list args;
  char *message, *safe;

  if (error == NULL)
    return FALSE;
  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  /* names and strings from files end up in messages: no control character or
   * invalid UTF-8 from a file may reach a terminal or a label through one */
  safe = rpe_escape_message (message);
  g_propagate_error (error, g_error_new_literal (RPE_ERROR, (int) status, safe));
  g_free (safe);
  g_free (message);
  return FALSE;
}

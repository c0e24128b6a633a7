#include "config.h"

#include "rpe-error.h"

G_DEFINE_QUARK (rpe-error-quark, rpe_error)

gboolean
rpe_set_error (GError     **error,
               RpeStatus    status,
               const char  *format,
               ...)
{
  va_list args;

  if (error == NULL)
    return FALSE;
  va_start (args, format);
  g_propagate_error (error, g_error_new_valist (RPE_ERROR, (int) status, format, args));
  va_end (args);
  return FALSE;
}

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

char *
rpe_format_bytes (guint64 bytes)
{
  if (bytes < 1024)
    return g_strdup_printf ("%" G_GUINT64_FORMAT " byte%s", bytes, bytes == 1 ? "" : "s");
  if (bytes < ((guint64) 1 << 20))
    return g_strdup_printf ("%.1f KiB", (double) bytes / 1024.0);
  if (bytes < ((guint64) 1 << 30))
    return g_strdup_printf ("%.1f MiB", (double) bytes / (1024.0 * 1024.0));
  return g_strdup_printf ("%.2f GiB", (double) bytes / (1024.0 * 1024.0 * 1024.0));
}

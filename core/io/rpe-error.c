#include "config.h"

#include "rpe-alloc.h"
#include "rpe-error.h"
#include "rpe-file.h"
#include "rpe-findings.h"

/* An extended domain: every RPE_ERROR carries an optional finding
 * (rpe-findings.h), copied and freed with the error. */
typedef struct
{
  RpeFinding *finding;
} RpeErrorPrivate;

static void
rpe_error_private_init (RpeErrorPrivate *priv)
{
  priv->finding = NULL;
}

static void
rpe_error_private_copy (const RpeErrorPrivate *src,
                        RpeErrorPrivate       *dest)
{
  dest->finding = NULL;
  if (src->finding != NULL)
    dest->finding = rpe_finding_new (src->finding->kind, rpe_finding_candidates (src->finding),
                                     "%s", src->finding->text);
}

static void
rpe_error_private_clear (RpeErrorPrivate *priv)
{
  g_clear_pointer (&priv->finding, rpe_finding_free);
}

G_DEFINE_EXTENDED_ERROR (RpeError, rpe_error)

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
rpe_memory_limit_text (RpeStatus status)
{
  if (status == RPE_ERROR_SYSTEM_MEMORY)
    {
      size_t room = rpe_os_memory_usable ();

      if (room == SIZE_MAX)
        return g_strdup ("the memory the system has left");
      return g_strdup_printf ("what the system lets this process have (its memory limit, ulimit -v or -d, "
                              "leaves room for %" G_GSIZE_FORMAT " bytes)", room);
    }
  return g_strdup_printf ("the memory budget (%" G_GSIZE_FORMAT " bytes)", rpe_budget_get ());
}

gboolean
rpe_set_error_finding (GError            **error,
                       RpeStatus           status,
                       RpeFindingKind      kind,
                       const char *const  *candidates,
                       const char         *format,
                       ...)
{
  va_list args;
  g_autofree char *text = NULL;
  g_autofree char *message = NULL;
  g_autofree char *safe = NULL;
  RpeFinding *finding;
  GError *e;

  if (error == NULL)
    return FALSE;
  va_start (args, format);
  text = g_strdup_vprintf (format, args);
  va_end (args);
  finding = rpe_finding_new (kind, candidates, "%s", text);
  message = rpe_finding_to_message (finding);
  safe = rpe_escape_message (message);
  e = g_error_new_literal (RPE_ERROR, (int) status, safe);
  rpe_error_get_private (e)->finding = finding;
  g_propagate_error (error, e);
  return FALSE;
}

RpeFindingKind
rpe_error_get_finding (const GError        *error,
                       const char         **text,
                       const char *const  **candidates)
{
  const RpeFinding *f;

  if (text != NULL)
    *text = NULL;
  if (candidates != NULL)
    *candidates = NULL;
  if (error == NULL || error->domain != RPE_ERROR || (f = rpe_error_get_private (error)->finding) == NULL)
    return RPE_FINDING_NONE;
  if (text != NULL)
    *text = f->text;
  if (candidates != NULL)
    *candidates = rpe_finding_candidates (f);
  return f->kind;
}

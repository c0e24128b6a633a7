/* rpe-findings.c: findings, their messages and their place in RPE_ERROR
 * GErrors (see rpe-findings.h). */
#include "config.h"

#include "rpe-error.h"
#include "rpe-findings.h"

static RpeRemedyFunc remedy_func;

void
rpe_findings_set_remedy_func (RpeRemedyFunc func)
{
  remedy_func = func;
}

static GPtrArray *
candidates_copy (const char *const *candidates)
{
  GPtrArray *a = g_ptr_array_new_null_terminated (0, g_free, TRUE);

  for (gsize i = 0; candidates != NULL && candidates[i] != NULL; i++)
    g_ptr_array_add (a, g_strdup (candidates[i]));
  return a;
}

static RpeFinding *
finding_new_valist (RpeFindingKind      kind,
                    const char *const  *candidates,
                    const char         *format,
                    va_list             args) G_GNUC_PRINTF (3, 0);

static RpeFinding *
finding_new_valist (RpeFindingKind      kind,
                    const char *const  *candidates,
                    const char         *format,
                    va_list             args)
{
  RpeFinding *f = g_new0 (RpeFinding, 1);

  f->kind = kind;
  f->text = g_strdup_vprintf (format, args);
  f->candidates = candidates_copy (candidates);
  return f;
}

RpeFinding *
rpe_finding_new (RpeFindingKind      kind,
                 const char *const  *candidates,
                 const char         *format,
                 ...)
{
  va_list args;
  RpeFinding *f;

  va_start (args, format);
  f = finding_new_valist (kind, candidates, format, args);
  va_end (args);
  return f;
}

void
rpe_finding_free (RpeFinding *finding)
{
  if (finding == NULL)
    return;
  g_free (finding->text);
  g_ptr_array_unref (finding->candidates);
  g_free (finding);
}

const char *const *
rpe_finding_candidates (const RpeFinding *finding)
{
  static const char *const none[] = { NULL };

  return finding->candidates->len > 0 ? (const char *const *) finding->candidates->pdata : none;
}

char *
rpe_finding_to_message (const RpeFinding *finding)
{
  g_autofree char *remedy = NULL;

  if (finding->kind != RPE_FINDING_NONE && remedy_func != NULL)
    remedy = remedy_func (finding->kind, rpe_finding_candidates (finding));
  if (remedy == NULL || remedy[0] == '\0')
    return g_strdup (finding->text);
  return g_strdup_printf ("%s; %s", finding->text, remedy);
}


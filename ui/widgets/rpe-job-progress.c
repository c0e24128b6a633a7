/* rpe-job-progress.c: percent done and time left of a long job, and the full-N budget check. */
#include "config.h"

#include <glib/gi18n.h>

#include "rpe-job-progress.h"

void
rpe_job_progress_begin (GtkProgressBar      *bar,
                        RpeProgressEstimate *estimate)
{
  g_return_if_fail (GTK_IS_PROGRESS_BAR (bar) && estimate != NULL);
  rpe_progress_estimate_start (estimate, NULL, NULL);
  gtk_progress_bar_set_fraction (bar, 0.0);
  gtk_progress_bar_set_show_text (bar, TRUE);
  gtk_progress_bar_set_text (bar, "0 %");
}

void
rpe_job_progress_update (GtkProgressBar      *bar,
                         RpeProgressEstimate *estimate,
                         double               fraction)
{
  g_autofree char *text = NULL;

  g_return_if_fail (GTK_IS_PROGRESS_BAR (bar) && estimate != NULL);
  rpe_progress_estimate_update (estimate, fraction);
  text = rpe_progress_estimate_format (estimate);
  gtk_progress_bar_set_fraction (bar, estimate->fraction);
  gtk_progress_bar_set_text (bar, text);
}

gboolean
rpe_job_full_n_allowed (RpeComputeJobKind  kind,
                        RpeExplorerState  *state,
                        char             **refusal)
{
  g_autoptr (RpeExplorerSnapshot) s = rpe_explorer_state_snapshot (state);
  g_autoptr (GError) error = NULL;

  g_clear_pointer (refusal, g_free);
  if (rpe_compute_check_budget (kind, s, s->n, &error))
    return TRUE;
  *refusal = g_strdup_printf (_("Not computed at full N: %s."), error->message);
  return FALSE;
}

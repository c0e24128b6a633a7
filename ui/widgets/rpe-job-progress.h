/* rpe-job-progress.h: what a long job shows of itself (GTK): a progress bar whose text is the
 * percent done and, once enough is done to say, the time left (RpeProgressEstimate,
 * ui/explore/rpe-job.h); and the memory-budget check of "Compute at Full N".  Used by the figure
 * pages (rpe-figure-page.c) and the Fit dialog.
 */
#pragma once

#include <gtk/gtk.h>

#include "rpe-compute.h"
#include "rpe-job.h"

G_BEGIN_DECLS

void     rpe_job_progress_begin  (GtkProgressBar      *bar,
                                  RpeProgressEstimate *estimate);
void     rpe_job_progress_update (GtkProgressBar      *bar,
                                  RpeProgressEstimate *estimate,
                                  double               fraction);

/* "Compute at Full N": whether a job of that kind at the state's N fits the memory
 * budget.  *refusal is replaced: NULL, or the cap line's "Not computed at full N: …". */
gboolean rpe_job_full_n_allowed  (RpeComputeJobKind   kind,
                                  RpeExplorerState   *state,
                                  char              **refusal);

G_END_DECLS

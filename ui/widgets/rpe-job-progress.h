/* rpe-job-progress.h: what every view with long jobs shows of them (GTK).
 *
 * A progress bar whose text is the percent done and, once enough is done to
 * say, the time left (RpeProgressEstimate, ui/explore/rpe-job.h); and a cap bar
 * that says when a view computed at a smaller N than asked, with a
 * "Compute at Full N" button, or that the map shown is stale.
 */
#pragma once

#include <gtk/gtk.h>

#include "rpe-compute.h"
#include "rpe-job.h"

G_BEGIN_DECLS

void rpe_job_progress_begin  (GtkProgressBar      *bar,
                              RpeProgressEstimate *estimate);
void rpe_job_progress_update (GtkProgressBar      *bar,
                              RpeProgressEstimate *estimate,
                              double               fraction);

typedef struct
{
  GtkWidget *box;      /* hidden while there is nothing to say */
  GtkLabel  *label;
  GtkWidget *button;   /* "Compute at Full N" */
} RpeCapBar;

/* clicked (GtkButton *, gpointer data) runs the full-N job. */
void rpe_cap_bar_init (RpeCapBar  *bar,
                       GCallback   clicked,
                       gpointer    data);
/* Shows "Computed at N = n of n_asked" with the button when n < n_asked, then the note
 * (stale, refused) if any; hides the bar when there is nothing to say. */
void rpe_cap_bar_set  (RpeCapBar  *bar,
                       gsize       n,
                       gsize       n_asked,
                       const char *note);

/* Both, for a view with one job: a progress row (bar + Cancel) above the cap bar. */
typedef struct
{
  GtkWidget           *box;           /* vertical: append it to the view */
  GtkWidget           *progress_row;  /* visible while a job runs */
  GtkProgressBar      *progress;
  GtkWidget           *cancel;
  RpeProgressEstimate  estimate;
  RpeCapBar            cap;
} RpeJobBar;

/* cancel_clicked and full_clicked: (GtkButton *, gpointer data). */
void rpe_job_bar_init     (RpeJobBar *bar,
                           GCallback  cancel_clicked,
                           GCallback  full_clicked,
                           gpointer   data);
void rpe_job_bar_begin    (RpeJobBar *bar);
void rpe_job_bar_progress (RpeJobBar *bar,
                           double     fraction);
void rpe_job_bar_set_busy (RpeJobBar *bar,
                           gboolean   busy);
/* The cap bar's text ("" while hidden), for tests. */
const char *rpe_job_bar_get_cap_text (RpeJobBar *bar);

/* "Compute at Full N": whether a job of that kind at the state's N fits the memory
 * budget.  *refusal is replaced: NULL, or the cap line's "Not computed at full N: …". */
gboolean rpe_job_full_n_allowed (RpeComputeJobKind  kind,
                                 RpeExplorerState  *state,
                                 char             **refusal);

G_END_DECLS

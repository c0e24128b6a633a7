/* rpe-job.h: the plumbing every worker job shares (no GTK).
 *
 * RpeJobMonitor joins a GTask to the numeric core's RpeMonitor:
 * - the GCancellable of the task raises the core's atomic cancel flag;
 * - the core's progress (called on the worker) is relayed to the main context
 *   the task was created on, at most 20 times a second, and never after the
 *   cancellable was cancelled or the task completed;
 * - the job counts itself in rpe_compute_jobs_alive () from creation until the
 *   monitor is freed (with the task's data).
 *
 * RpeProgressEstimate turns the fractions a view receives into "42 % · about
 * 8 s left"; its clock is injectable so tests drive it without sleeping.
 */
#pragma once

#include <gio/gio.h>

#include "rpe-status.h"

G_BEGIN_DECLS

typedef void (*RpeComputeProgressFunc) (double   fraction,
                                        gpointer user_data);

/* Microseconds on a monotonic clock (g_get_monotonic_time by default). */
typedef gint64 (*RpeClockFunc) (gpointer user_data);

#define RPE_JOB_PROGRESS_INTERVAL_US (G_USEC_PER_SEC / 20)

typedef struct _RpeJobMonitor RpeJobMonitor;

/* Made on the thread that owns the task's context, before g_task_run_in_thread.
 * task is not referenced: free the monitor with the task's data. */
RpeJobMonitor    *rpe_job_monitor_new       (GTask                  *task,
                                             RpeComputeProgressFunc  progress,
                                             gpointer                progress_data);
void              rpe_job_monitor_free      (RpeJobMonitor          *monitor);
/* Tests: the clock the throttle reads (NULL: the monotonic clock). */
void              rpe_job_monitor_set_clock (RpeJobMonitor          *monitor,
                                             RpeClockFunc            clock,
                                             gpointer                clock_data);
/* On the worker, around the computation: links the task's cancellable to the
 * flag and returns the core's monitor (valid until rpe_job_monitor_end). */
const RpeMonitor *rpe_job_monitor_begin     (RpeJobMonitor          *monitor);
void              rpe_job_monitor_end       (RpeJobMonitor          *monitor);
/* The core's cancel flag (for sub-monitors without progress). */
const atomic_int *rpe_job_monitor_get_flag  (RpeJobMonitor          *monitor);
/* Progress events queued to the main context so far (after the throttle). */
guint             rpe_job_monitor_get_sent  (RpeJobMonitor          *monitor);

/* The error of a job that failed with the core's status: G_IO_ERROR_CANCELLED ("Computation
 * cancelled") for RPE_ERROR_CANCELLED, else RPE_ERROR "Cannot compute WHAT: REASON" (what: an
 * N_() marked noun, translated here).  Always FALSE.  The one wording of every job's errors. */
gboolean          rpe_job_status_error      (RpeStatus               status,
                                             const char             *what,
                                             GError                **error);

/* The number of jobs created and not yet finalised (their callback has run and their
 * data is freed).  Tests wait for it to reach 0 instead of sleeping. */
guint             rpe_compute_jobs_alive    (void);
/* The number of jobs created since the program started (tests: one change, one job). */
guint             rpe_compute_jobs_started  (void);

/* ---- Percent done and time left ---- */

typedef struct
{
  RpeClockFunc clock;
  gpointer     clock_data;
  gint64       start_us;     /* when the job started */
  gint64       now_us;       /* the last update */
  double       fraction;     /* the last fraction, 0 .. 1 */
} RpeProgressEstimate;

/* Shown only after this much of the job and this much time (before: percent only). */
#define RPE_PROGRESS_ESTIMATE_MIN_FRACTION 0.05
#define RPE_PROGRESS_ESTIMATE_MIN_US       (G_USEC_PER_SEC / 2)

/* The clock estimates started with clock NULL read (NULL: g_get_monotonic_time).  For UI
 * tests that drive the views' time-left text without waiting. */
void    rpe_progress_estimate_set_default_clock (RpeClockFunc clock,
                                                 gpointer     clock_data);
/* clock NULL: the default clock. */
void    rpe_progress_estimate_start        (RpeProgressEstimate *estimate,
                                            RpeClockFunc         clock,
                                            gpointer             clock_data);
void    rpe_progress_estimate_update       (RpeProgressEstimate *estimate,
                                            double               fraction);
/* Seconds left from the mean rate since the start, or a negative value while
 * too little is done (or too little time has passed) to say. */
double  rpe_progress_estimate_seconds_left (const RpeProgressEstimate *estimate);
/* "42 %" or "42 % · about 8 s left" / "about 3 min left" / "about 2 h left". */
char   *rpe_progress_estimate_format       (const RpeProgressEstimate *estimate);

G_END_DECLS

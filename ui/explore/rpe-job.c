/* rpe-job.c: the job plumbing shared by rpe-compute.c, rpe-fit-job.c and
 * rpe-outputs-job.c, and the time-left estimate of the progress bars. */
#include "config.h"

#include "rpe-job.h"

#include <math.h>
#include <stdatomic.h>

#include <glib/gi18n.h>

#include "rpe-error.h"

static gint jobs_alive;
static gint jobs_started;

struct _RpeJobMonitor
{
  atomic_int              cancel;         /* the core's flag, raised by the cancellable */
  RpeMonitor              core;
  RpeComputeProgressFunc  progress;
  gpointer                progress_data;
  GTask                  *task;           /* not a reference: the monitor lives in its data */
  GMainContext           *context;        /* where progress is delivered */
  RpeClockFunc            clock;
  gpointer                clock_data;
  gint64                  last_progress;  /* worker thread only */
  gboolean                sent_any;
  guint                   sent;
  gulong                  handler;
};

guint
rpe_compute_jobs_alive (void)
{
  return (guint) g_atomic_int_get (&jobs_alive);
}

guint
rpe_compute_jobs_started (void)
{
  return (guint) g_atomic_int_get (&jobs_started);
}

gboolean
rpe_job_status_error (RpeStatus    status,
                      const char  *what,
                      GError     **error)
{
  if (status == RPE_ERROR_CANCELLED)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, _("Computation cancelled"));
      return FALSE;
    }
  return rpe_set_error (error, status, _("Cannot compute %s: %s"), _(what), rpe_status_to_string (status));
}

typedef struct
{
  GTask         *task;
  RpeJobMonitor *monitor;  /* alive while task is */
  double         fraction;
} ProgressEvent;

static void
progress_event_free (gpointer data)
{
  ProgressEvent *event = data;

  g_object_unref (event->task);
  g_free (event);
}

static gboolean
progress_event_dispatch (gpointer data)
{
  ProgressEvent *event = data;
  GCancellable *cancellable = g_task_get_cancellable (event->task);

  if (!g_task_get_completed (event->task)
      && (cancellable == NULL || !g_cancellable_is_cancelled (cancellable)))
    event->monitor->progress (event->fraction, event->monitor->progress_data);
  return G_SOURCE_REMOVE;
}

static gint64
monitor_now (RpeJobMonitor *monitor)
{
  return monitor->clock != NULL ? monitor->clock (monitor->clock_data) : g_get_monotonic_time ();
}

/* Called by the core on the worker thread: forwards at most 20 Hz. */
static void
monitor_progress (double  fraction,
                  void   *user_data)
{
  RpeJobMonitor *monitor = user_data;
  gint64 now = monitor_now (monitor);
  ProgressEvent *event;
  GSource *source;

  if (monitor->sent_any && now - monitor->last_progress < RPE_JOB_PROGRESS_INTERVAL_US)
    return;
  monitor->sent_any = TRUE;
  monitor->last_progress = now;
  monitor->sent++;

  event = g_new (ProgressEvent, 1);
  event->task = g_object_ref (monitor->task);
  event->monitor = monitor;
  event->fraction = fraction;
  source = g_idle_source_new ();
  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_callback (source, progress_event_dispatch, event, progress_event_free);
  g_source_attach (source, monitor->context);
  g_source_unref (source);
}

static void
monitor_cancelled (GCancellable *cancellable,
                   gpointer      user_data)
{
  RpeJobMonitor *monitor = user_data;

  atomic_store (&monitor->cancel, 1);
}

RpeJobMonitor *
rpe_job_monitor_new (GTask                  *task,
                     RpeComputeProgressFunc  progress,
                     gpointer                progress_data)
{
  RpeJobMonitor *monitor;

  g_return_val_if_fail (G_IS_TASK (task), NULL);
  monitor = g_new0 (RpeJobMonitor, 1);
  atomic_init (&monitor->cancel, 0);
  monitor->task = task;
  monitor->context = g_main_context_ref (g_task_get_context (task));
  monitor->progress = progress;
  monitor->progress_data = progress_data;
  monitor->core.cancel = &monitor->cancel;
  monitor->core.progress = progress != NULL ? monitor_progress : NULL;
  monitor->core.user_data = monitor;
  g_atomic_int_inc (&jobs_alive);
  g_atomic_int_inc (&jobs_started);
  return monitor;
}

void
rpe_job_monitor_free (RpeJobMonitor *monitor)
{
  if (monitor == NULL)
    return;
  g_clear_pointer (&monitor->context, g_main_context_unref);
  g_free (monitor);
  (void) g_atomic_int_dec_and_test (&jobs_alive);
}

void
rpe_job_monitor_set_clock (RpeJobMonitor *monitor,
                           RpeClockFunc   clock,
                           gpointer       clock_data)
{
  g_return_if_fail (monitor != NULL);
  monitor->clock = clock;
  monitor->clock_data = clock_data;
}

const RpeMonitor *
rpe_job_monitor_begin (RpeJobMonitor *monitor)
{
  GCancellable *cancellable;

  g_return_val_if_fail (monitor != NULL, NULL);
  cancellable = g_task_get_cancellable (monitor->task);
  if (cancellable != NULL && monitor->handler == 0)
    monitor->handler = g_cancellable_connect (cancellable, G_CALLBACK (monitor_cancelled), monitor, NULL);
  return &monitor->core;
}

void
rpe_job_monitor_end (RpeJobMonitor *monitor)
{
  GCancellable *cancellable;

  g_return_if_fail (monitor != NULL);
  cancellable = g_task_get_cancellable (monitor->task);
  if (cancellable != NULL && monitor->handler != 0)
    g_cancellable_disconnect (cancellable, monitor->handler);
  monitor->handler = 0;
}

const atomic_int *
rpe_job_monitor_get_flag (RpeJobMonitor *monitor)
{
  g_return_val_if_fail (monitor != NULL, NULL);
  return &monitor->cancel;
}

guint
rpe_job_monitor_get_sent (RpeJobMonitor *monitor)
{
  g_return_val_if_fail (monitor != NULL, 0);
  return monitor->sent;
}

/* ------------------------------------------------------------ time left */

static RpeClockFunc default_clock;
static gpointer     default_clock_data;

void
rpe_progress_estimate_set_default_clock (RpeClockFunc clock,
                                         gpointer     clock_data)
{
  default_clock = clock;
  default_clock_data = clock_data;
}

static gint64
estimate_now (const RpeProgressEstimate *estimate)
{
  return estimate->clock != NULL ? estimate->clock (estimate->clock_data) : g_get_monotonic_time ();
}

void
rpe_progress_estimate_start (RpeProgressEstimate *estimate,
                             RpeClockFunc         clock,
                             gpointer             clock_data)
{
  g_return_if_fail (estimate != NULL);
  estimate->clock = clock != NULL ? clock : default_clock;
  estimate->clock_data = clock != NULL ? clock_data : default_clock_data;
  estimate->start_us = estimate_now (estimate);
  estimate->now_us = estimate->start_us;
  estimate->fraction = 0.0;
}

void
rpe_progress_estimate_update (RpeProgressEstimate *estimate,
                              double               fraction)
{
  g_return_if_fail (estimate != NULL);
  if (!isfinite (fraction))
    return;
  estimate->fraction = CLAMP (fraction, 0.0, 1.0);
  estimate->now_us = estimate_now (estimate);
}

double
rpe_progress_estimate_seconds_left (const RpeProgressEstimate *estimate)
{
  double elapsed, f;

  g_return_val_if_fail (estimate != NULL, -1.0);
  f = estimate->fraction;
  elapsed = (double) (estimate->now_us - estimate->start_us) / G_USEC_PER_SEC;
  if (f < RPE_PROGRESS_ESTIMATE_MIN_FRACTION
      || estimate->now_us - estimate->start_us < RPE_PROGRESS_ESTIMATE_MIN_US)
    return -1.0;
  if (f >= 1.0)
    return 0.0;
  /* the mean rate so far: f per elapsed second */
  return elapsed * (1.0 - f) / f;
}

char *
rpe_progress_estimate_format (const RpeProgressEstimate *estimate)
{
  double left;
  int percent;

  g_return_val_if_fail (estimate != NULL, NULL);
  /* floor: "100 %" only when done */
  percent = (int) floor (estimate->fraction * 100.0);
  left = rpe_progress_estimate_seconds_left (estimate);
  if (left <= 0.0)
    return g_strdup_printf ("%d %%", percent);
  if (left < 59.5)
    return g_strdup_printf ("%d %% · about %.0f s left", percent, fmax (1.0, ceil (left)));
  if (left < 99.5 * 60.0)
    return g_strdup_printf ("%d %% · about %.0f min left", percent, round (left / 60.0));
  return g_strdup_printf ("%d %% · about %.0f h left", percent, round (left / 3600.0));
}

/* rpe-compute.c: the UI's long computations, run off the main loop
 * (worker pattern: copy the input, g_task_run_in_thread, results and progress
 * back on the caller's main context, cancellation through the core's flag). */
#include "config.h"

#include "rpe-compute.h"

#include <math.h>
#include <stdatomic.h>

#include "rpe-alloc.h"
#include "rpe-error.h"

#define PROGRESS_INTERVAL_US (G_USEC_PER_SEC / 20)   /* at most 20 Hz */

/* ------------------------------------------------------------- templates */

static void
rpe_templates_clear (gpointer data)
{
  RpeTemplates *templates = data;

  rpe_free (templates->values);
}

RpeTemplates *
rpe_templates_ref (RpeTemplates *templates)
{
  g_return_val_if_fail (templates != NULL, NULL);
  return g_atomic_rc_box_acquire (templates);
}

void
rpe_templates_unref (RpeTemplates *templates)
{
  if (templates != NULL)
    g_atomic_rc_box_release_full (templates, rpe_templates_clear);
}

G_DEFINE_BOXED_TYPE (RpeTemplates, rpe_templates, rpe_templates_ref, rpe_templates_unref)

const float *
rpe_templates_get_feature (const RpeTemplates *templates,
                           gsize               d)
{
  g_return_val_if_fail (templates != NULL, NULL);
  if (d >= templates->n_features)
    return NULL;
  /* (d * n) * n cannot overflow: the whole (D, N, N) block was allocated. */
  return templates->values + d * templates->n * templates->n;
}

GBytes *
rpe_templates_dup_feature_bytes (RpeTemplates *templates,
                                 gsize         d)
{
  const float *feature = rpe_templates_get_feature (templates, d);

  if (feature == NULL)
    return NULL;
  return g_bytes_new_with_free_func (feature, templates->n * templates->n * sizeof (float),
                                     (GDestroyNotify) rpe_templates_unref,
                                     rpe_templates_ref (templates));
}

/* ------------------------------------------------------------------- jobs */

typedef struct
{
  RpeSpeParams            params;         /* our copy */
  gsize                   head;
  gsize                   n;
  gboolean                gated;
  atomic_int              cancel;         /* the core's flag, raised by the cancellable */
  RpeComputeProgressFunc  progress;
  gpointer                progress_data;
  GTask                  *task;           /* not a reference: the job lives in it */
  GMainContext           *context;        /* where progress is delivered */
  gint64                  last_progress;  /* worker thread only */
} TemplatesJob;

static void
templates_job_free (gpointer data)
{
  TemplatesJob *job = data;

  rpe_spe_params_clear (&job->params);
  g_clear_pointer (&job->context, g_main_context_unref);
  g_free (job);
}

typedef struct
{
  GTask  *task;
  double  fraction;
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
  TemplatesJob *job = g_task_get_task_data (event->task);
  GCancellable *cancellable = g_task_get_cancellable (event->task);

  if (!g_task_get_completed (event->task)
      && (cancellable == NULL || !g_cancellable_is_cancelled (cancellable)))
    job->progress (event->fraction, job->progress_data);
  return G_SOURCE_REMOVE;
}

/* Called by the core on the worker thread: forwards at most 20 Hz. */
static void
job_progress (double  fraction,
              void   *user_data)
{
  TemplatesJob *job = user_data;
  gint64 now = g_get_monotonic_time ();
  ProgressEvent *event;
  GSource *source;

  if (job->last_progress != 0 && now - job->last_progress < PROGRESS_INTERVAL_US)
    return;
  job->last_progress = now;

  event = g_new (ProgressEvent, 1);
  event->task = g_object_ref (job->task);
  event->fraction = fraction;
  source = g_idle_source_new ();
  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_callback (source, progress_event_dispatch, event, progress_event_free);
  g_source_attach (source, job->context);
  g_source_unref (source);
}

static void
job_cancelled (GCancellable *cancellable,
               gpointer      user_data)
{
  TemplatesJob *job = user_data;

  atomic_store (&job->cancel, 1);
}

static RpeStatus
compute_templates (const TemplatesJob  *job,
                   const RpeMonitor    *monitor,
                   RpeTemplates       **out)
{
  const RpeSpeParams *params = &job->params;
  gsize count, per_feature;
  RpeStatus status = RPE_OK;
  RpeTemplates *templates;
  double lo = INFINITY, hi = -INFINITY;

  if (job->n == 0 || job->head >= params->n_heads || params->n_features == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (job->n, job->n, &per_feature)
      || !rpe_size_mul (per_feature, params->n_features, &count))
    return RPE_ERROR_OVERFLOW;

  templates = g_atomic_rc_box_new0 (RpeTemplates);
  templates->method = params->method;
  templates->head = job->head;
  templates->n_features = params->n_features;
  templates->n = job->n;
  templates->size = params->method == RPE_SPE_SINE ? params->n_sines : params->kernel;
  templates->gated = job->gated && params->gate != NULL;
  templates->values = rpe_alloc (count, sizeof (float), &status);
  if (templates->values == NULL)
    goto fail;

  for (gsize d = 0; d < params->n_features; d++)
    {
      float *out_d = templates->values + d * per_feature;

      if (rpe_monitor_cancelled (monitor))
        {
          status = RPE_ERROR_CANCELLED;
          goto fail;
        }
      status = rpe_spe_template (params, job->head, d, job->n, templates->gated, out_d);
      if (status != RPE_OK)
        goto fail;
      for (gsize i = 0; i < per_feature; i++)
        if (isfinite (out_d[i]))
          {
            lo = fmin (lo, out_d[i]);
            hi = fmax (hi, out_d[i]);
          }
      rpe_monitor_progress (monitor, (double) (d + 1) / (double) params->n_features);
    }
  templates->vmin = lo <= hi ? lo : 0.0;
  templates->vmax = lo <= hi ? hi : 0.0;
  *out = templates;
  return RPE_OK;

fail:
  rpe_templates_unref (templates);
  return status;
}

static void
templates_worker (GTask        *task,
                  gpointer      source_object,
                  gpointer      task_data,
                  GCancellable *cancellable)
{
  TemplatesJob *job = task_data;
  RpeMonitor monitor = { &job->cancel, job->progress != NULL ? job_progress : NULL, job };
  RpeTemplates *templates = NULL;
  RpeStatus status;
  gulong handler = 0;

  if (cancellable != NULL)
    handler = g_cancellable_connect (cancellable, G_CALLBACK (job_cancelled), job, NULL);

  status = compute_templates (job, &monitor, &templates);

  if (cancellable != NULL)
    g_cancellable_disconnect (cancellable, handler);

  if (status == RPE_OK)
    g_task_return_pointer (task, templates, (GDestroyNotify) rpe_templates_unref);
  else if (status == RPE_ERROR_CANCELLED)
    g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "Computation cancelled");
  else
    g_task_return_new_error (task, RPE_ERROR, status, "Cannot compute the templates of head %zu: %s",
                             job->head, rpe_status_to_string (status));
}

void
rpe_compute_templates_async_full (const RpeSpeParams     *params,
                                  gsize                   head,
                                  gsize                   n,
                                  gboolean                gated,
                                  RpeComputeProgressFunc  progress,
                                  gpointer                progress_data,
                                  GCancellable           *cancellable,
                                  GAsyncReadyCallback     callback,
                                  gpointer                user_data)
{
  g_autoptr (GTask) task = NULL;
  TemplatesJob *job;
  RpeStatus status;

  g_return_if_fail (params != NULL);
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, rpe_compute_templates_async_full);
  g_task_set_name (task, "[rpe] templates");
  g_task_set_return_on_cancel (task, FALSE);

  job = g_new0 (TemplatesJob, 1);
  job->head = head;
  job->n = n;
  job->gated = gated;
  job->progress = progress;
  job->progress_data = progress_data;
  job->task = task;
  job->context = g_main_context_ref (g_task_get_context (task));
  atomic_init (&job->cancel, 0);
  g_task_set_task_data (task, job, templates_job_free);

  status = rpe_spe_params_copy (&job->params, params);
  if (status != RPE_OK)
    {
      g_task_return_new_error (task, RPE_ERROR, status, "Cannot copy the parameters: %s",
                               rpe_status_to_string (status));
      return;
    }

  g_task_run_in_thread (task, templates_worker);
}

void
rpe_compute_templates_async (const RpeSpeParams  *params,
                             gsize                head,
                             gsize                n,
                             gboolean             gated,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  rpe_compute_templates_async_full (params, head, n, gated, NULL, NULL,
                                    cancellable, callback, user_data);
}

RpeTemplates *
rpe_compute_templates_finish (GAsyncResult  *result,
                              GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == rpe_compute_templates_async_full, NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/* rpe-fit-job.c: fitting SPE to another relative bias on a worker. */
#include "config.h"

#include "rpe-fit-job.h"

#include <math.h>
#include <string.h>

#include "rpe-alloc.h"
#include "rpe-error.h"
#include "rpe-job.h"

#include <glib/gi18n.h>

/* ---------------------------------------------------------------- result */

static void
result_clear (gpointer data)
{
  RpeFitResult *r = data;

  rpe_spe_params_clear (&r->params);
  rpe_free (r->target);
  rpe_free (r->fit);
  rpe_free (r->attention);
}

RpeFitResult *
rpe_fit_result_ref (RpeFitResult *result)
{
  g_return_val_if_fail (result != NULL, NULL);
  return g_atomic_rc_box_acquire (result);
}

void
rpe_fit_result_unref (RpeFitResult *result)
{
  if (result != NULL)
    g_atomic_rc_box_release_full (result, result_clear);
}

G_DEFINE_BOXED_TYPE (RpeFitResult, rpe_fit_result, rpe_fit_result_ref, rpe_fit_result_unref)

/* ------------------------------------------------------------------- run */

/* Row m of head h: softmax over k of fit_h(tau = m - k). */
static void
induced_attention (const double *fit,
                   gsize         H,
                   gsize         n,
                   float        *out)
{
  gsize len = 2 * n - 1;

  for (gsize h = 0; h < H; h++)
    for (gsize m = 0; m < n; m++)
      {
        const double *l = fit + h * len;
        float *row = out + (h * n + m) * n;
        double mx = -INFINITY, sum = 0.0;

        for (gsize k = 0; k < n; k++)
          mx = MAX (mx, l[m - k + n - 1]);
        for (gsize k = 0; k < n; k++)
          sum += exp (l[m - k + n - 1] - mx);
        for (gsize k = 0; k < n; k++)
          row[k] = (float) (exp (l[m - k + n - 1] - mx) / sum);
      }
}

RpeFitResult *
rpe_fit_run (const RpeFitConfig *config,
             gsize               n,
             const double       *target,
             const RpeMonitor   *monitor,
             GError            **error)
{
  gint64 start = g_get_monotonic_time ();
  RpeFitResult *result;
  RpeStatus st = RPE_OK;
  gsize H, len, count, cells;

  g_return_val_if_fail (config != NULL && target != NULL, NULL);
  H = config->n_heads;
  if (n < 1 || n > RPE_FIT_JOB_MAX_LENGTH || H < 1 || H > RPE_FIT_JOB_MAX_HEADS
      || config->n_features < 1 || config->n_features > RPE_FIT_JOB_MAX_FEAT
      || config->size < 1 || config->size > RPE_FIT_JOB_MAX_SIZE)
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                     _("A fit needs 1 <= N <= %d, 1 <= H <= %d, 1 <= D <= %d and 1 <= K or L <= %d"),
                     RPE_FIT_JOB_MAX_LENGTH, RPE_FIT_JOB_MAX_HEADS, RPE_FIT_JOB_MAX_FEAT, RPE_FIT_JOB_MAX_SIZE);
      return NULL;
    }
  len = 2 * n - 1;
  if (!rpe_size_mul (H, len, &count) || !rpe_size_mul (n, n, &cells) || !rpe_size_mul (cells, H, &cells))
    {
      rpe_job_status_error (RPE_ERROR_OVERFLOW, N_("the fit"), error);
      return NULL;
    }
  if (!rpe_all_finite_d (target, count))
    {
      rpe_set_error (error, RPE_ERROR_NOT_FINITE, _("The target holds NaN or infinity"));
      return NULL;
    }

  result = g_atomic_rc_box_new0 (RpeFitResult);
  result->config = *config;
  result->n = n;
  result->target = rpe_alloc (count, sizeof (double), &st);
  if (result->target != NULL)
    result->fit = rpe_alloc (count, sizeof (double), &st);
  if (result->fit != NULL)
    result->attention = rpe_alloc (cells, sizeof (float), &st);
  if (result->attention == NULL)
    {
      rpe_job_status_error (st, N_("the fit"), error);
      rpe_fit_result_unref (result);
      return NULL;
    }
  memcpy (result->target, target, count * sizeof (double));
  st = rpe_fit_spe (config, n, target, &result->params, monitor);
  if (st == RPE_OK)
    st = rpe_fit_profile (&result->params, n, config->gated, result->fit);
  if (st != RPE_OK)
    {
      rpe_job_status_error (st, N_("the fit"), error);
      rpe_fit_result_unref (result);
      return NULL;
    }
  result->error = rpe_fit_relative_error (H, n, result->target, result->fit);
  induced_attention (result->fit, H, n, result->attention);
  result->seconds = (g_get_monotonic_time () - start) / 1e6;
  return result;
}

/* ------------------------------------------------------------------- job */

typedef struct
{
  RpeJobMonitor          *monitor;       /* cancel flag, progress, the jobs-alive count */
  RpeFitConfig            config;
  gsize                   n;
  double                 *target;
  guint64                 serial;
} Job;

static void
job_free (gpointer data)
{
  Job *job = data;

  g_free (job->target);
  g_clear_pointer (&job->monitor, rpe_job_monitor_free);
  g_free (job);
}

static void
job_worker (GTask        *task,
            gpointer      source_object,
            gpointer      task_data,
            GCancellable *cancellable)
{
  Job *job = task_data;
  const RpeMonitor *monitor = rpe_job_monitor_begin (job->monitor);
  GError *error = NULL;
  RpeFitResult *result;

  result = rpe_fit_run (&job->config, job->n, job->target, monitor, &error);
  rpe_job_monitor_end (job->monitor);
  if (result != NULL)
    {
      result->serial = job->serial;
      g_task_return_pointer (task, result, (GDestroyNotify) rpe_fit_result_unref);
    }
  else
    g_task_return_error (task, error);
}

void
rpe_compute_fit_async (const RpeFitConfig     *config,
                       gsize                   n,
                       const double           *target,
                       guint64                 serial,
                       RpeComputeProgressFunc  progress,
                       gpointer                progress_data,
                       GCancellable           *cancellable,
                       GAsyncReadyCallback     callback,
                       gpointer                user_data)
{
  GTask *task;
  Job *job;

  g_return_if_fail (config != NULL && target != NULL && n >= 1 && n <= RPE_FIT_JOB_MAX_LENGTH);
  g_return_if_fail (config->n_heads >= 1 && config->n_heads <= RPE_FIT_JOB_MAX_HEADS);
  task = g_task_new (NULL, cancellable, callback, user_data);
  job = g_new0 (Job, 1);
  g_task_set_source_tag (task, rpe_compute_fit_async);
  g_task_set_name (task, "the fit");
  g_task_set_return_on_cancel (task, FALSE);
  job->monitor = rpe_job_monitor_new (task, progress, progress_data);
  job->config = *config;
  job->n = n;
  job->serial = serial;
  /* sizes bounded above: H * (2N-1) doubles cannot overflow */
  job->target = g_memdup2 (target, config->n_heads * (2 * n - 1) * sizeof (double));
  g_task_set_task_data (task, job, job_free);
  g_task_run_in_thread (task, job_worker);
  g_object_unref (task);
}

RpeFitResult *
rpe_compute_fit_finish (GAsyncResult  *result,
                        GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == rpe_compute_fit_async, NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

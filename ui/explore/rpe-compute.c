/* rpe-compute.c: the UI's long computations, run off the main loop
 * (worker pattern: copy the input, g_task_run_in_thread, results and progress
 * back on the caller's main context, cancellation through the core's flag). */
#include "config.h"

#include "rpe-compute.h"

#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include <glib/gi18n.h>

#include "rpe-alloc.h"
#include "rpe-attention.h"
#include "rpe-demos.h"
#include "rpe-error.h"
#include "rpe-fastrpb.h"
#include "rpe-figure-names.h"
#include "rpe-linear-attention.h"
#include "rpe-checkpoint-lrpe.h"
#include "rpe-conv-spe-2d.h"
#include "rpe-lrpe.h"
#include "rpe-parallel.h"

#define ROW_BLOCK_FLOATS     (1u << 22)              /* 16 MiB of attention rows per block */
#define FULL_MAP_BLOCK_FLOATS (1u << 20)             /* 4 MiB: progress and cancel between blocks */

/* ------------------------------------------------------------- templates */

/* One spare (D, N, N) values block.  The live loop computes the same grid again on every
 * parameter change: a fresh block costs a page fault per 4 KiB page when it is filled (as
 * much time as the fill itself) and an unmap when it is freed.  The block of templates no
 * longer shown waits here for the next grid of the same size (at most SPARE_MAX_BYTES). */
#define SPARE_MAX_BYTES ((gsize) 64 << 20)

static GMutex spare_lock;
static float *spare_values;
static gsize  spare_count;

/* A block of count floats (contents undefined): the spare if it has that size, else new. */
static float *
values_take (gsize      count,
             RpeStatus *status)
{
  float *values = NULL;

  g_mutex_lock (&spare_lock);
  if (spare_values != NULL && spare_count == count)
    {
      values = spare_values;
      spare_values = NULL;
    }
  g_mutex_unlock (&spare_lock);
  if (values == NULL)
    return rpe_alloc (count, sizeof (float), status);
  /* the memory budget as rpe_alloc would check it */
  if ((*status = rpe_budget_check (count * sizeof (float))) != RPE_OK)
    {
      rpe_free (values);
      return NULL;
    }
  return values;
}

/* Frees a block of count floats, or keeps it as the spare (freeing the previous one). */
static void
values_give (float *values,
             gsize  count)
{
  float *old = values;

  if (values != NULL && count <= SPARE_MAX_BYTES / sizeof (float))
    {
      g_mutex_lock (&spare_lock);
      old = spare_values;
      spare_values = values;
      spare_count = count;
      g_mutex_unlock (&spare_lock);
    }
  rpe_free (old);
}

static void
rpe_templates_clear (gpointer data)
{
  RpeTemplates *templates = data;

  values_give (templates->values, templates->n_features * templates->n * templates->n);
  rpe_free (templates->profiles);
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

/* -------------------------------------------------------- other results */

static void
attention_image_clear (gpointer data)
{
  RpeAttentionImage *image = data;

  rpe_free (image->values);
}

RpeAttentionImage *
rpe_attention_image_ref (RpeAttentionImage *image)
{
  g_return_val_if_fail (image != NULL, NULL);
  return g_atomic_rc_box_acquire (image);
}

void
rpe_attention_image_unref (RpeAttentionImage *image)
{
  if (image != NULL)
    g_atomic_rc_box_release_full (image, attention_image_clear);
}

G_DEFINE_BOXED_TYPE (RpeAttentionImage, rpe_attention_image, rpe_attention_image_ref, rpe_attention_image_unref)

GBytes *
rpe_attention_image_dup_bytes (RpeAttentionImage *image)
{
  g_return_val_if_fail (image != NULL, NULL);
  return g_bytes_new_with_free_func (image->values, image->rows * image->cols * sizeof (float),
                                     (GDestroyNotify) rpe_attention_image_unref,
                                     rpe_attention_image_ref (image));
}

static void
teaching_clear (gpointer data)
{
  RpeTeaching *t = data;

  rpe_free (t->exact);
  rpe_free (t->estimate);
  rpe_free (t->difference);
  g_free (t->curve_r);
  g_free (t->curve_mean);
  g_free (t->curve_sd);
}

RpeTeaching *
rpe_teaching_ref (RpeTeaching *teaching)
{
  g_return_val_if_fail (teaching != NULL, NULL);
  return g_atomic_rc_box_acquire (teaching);
}

void
rpe_teaching_unref (RpeTeaching *teaching)
{
  if (teaching != NULL)
    g_atomic_rc_box_release_full (teaching, teaching_clear);
}

G_DEFINE_BOXED_TYPE (RpeTeaching, rpe_teaching, rpe_teaching_ref, rpe_teaching_unref)

GBytes *
rpe_teaching_dup_bytes (RpeTeaching *teaching,
                        guint        which)
{
  const float *maps[3];

  g_return_val_if_fail (teaching != NULL && which < 3, NULL);
  maps[0] = teaching->exact;
  maps[1] = teaching->estimate;
  maps[2] = teaching->difference;
  return g_bytes_new_with_free_func (maps[which], teaching->n * teaching->n * sizeof (float),
                                     (GDestroyNotify) rpe_teaching_unref, rpe_teaching_ref (teaching));
}

static void
curves_clear (gpointer data)
{
  RpeCurves *c = data;

  rpe_curve_table_free (c->profile);
  rpe_curve_table_free (c->error);
  rpe_curve_table_free (c->extrapolation);
}

RpeCurves *
rpe_curves_ref (RpeCurves *curves)
{
  g_return_val_if_fail (curves != NULL, NULL);
  return g_atomic_rc_box_acquire (curves);
}

void
rpe_curves_unref (RpeCurves *curves)
{
  if (curves != NULL)
    g_atomic_rc_box_release_full (curves, curves_clear);
}

G_DEFINE_BOXED_TYPE (RpeCurves, rpe_curves, rpe_curves_ref, rpe_curves_unref)

static void
checkpoint_data_clear (gpointer data)
{
  RpeCheckpointData *c = data;

  g_free (c->path);
  g_clear_pointer (&c->set, rpe_tensor_set_free);
  g_clear_pointer (&c->modules, g_ptr_array_unref);
  g_clear_pointer (&c->lrpe_modules, g_ptr_array_unref);
  g_clear_pointer (&c->fastrpb_modules, g_ptr_array_unref);
  g_clear_pointer (&c->print, rpe_model_print_unref);
  rpe_spe_params_clear (&c->sine);
  rpe_spe_params_clear (&c->conv);
  rpe_spe_params_clear (&c->conv2d);
  g_free (c->conv2d_prefix);
  g_free (c->sine_prefix);
  g_free (c->conv_prefix);
}

RpeCheckpointData *
rpe_checkpoint_data_ref (RpeCheckpointData *data)
{
  g_return_val_if_fail (data != NULL, NULL);
  return g_atomic_rc_box_acquire (data);
}

void
rpe_checkpoint_data_unref (RpeCheckpointData *data)
{
  if (data != NULL)
    g_atomic_rc_box_release_full (data, checkpoint_data_clear);
}

G_DEFINE_BOXED_TYPE (RpeCheckpointData, rpe_checkpoint_data, rpe_checkpoint_data_ref, rpe_checkpoint_data_unref)

/* ------------------------------------------------------------------- jobs */

typedef struct _Job Job;

/* Runs on the worker; on RPE_OK sets *result and *result_free.  May set
 * job->error for a more precise message. */
typedef RpeStatus (*JobRunFunc) (Job               *job,
                                 const RpeMonitor  *monitor,
                                 gpointer          *result,
                                 GDestroyNotify    *result_free);

struct _Job
{
  RpeJobMonitor          *monitor;        /* cancel flag, progress, the jobs-alive count */
  GTask                  *task;           /* not a reference: the job lives in it */
  JobRunFunc              run;
  const char             *what;           /* for error messages */
  GError                 *error;

  /* inputs (which ones depends on the job) */
  RpeExplorerSnapshot    *snapshot;
  RpeSpeParams            params;         /* templates (old API) */
  gsize                   head;
  gsize                   n;
  gboolean                gated;
  gsize                   n_cap;
  gboolean                with_curve;
  RpeAttentionRequest     request;
  char                   *path;
};

static void
job_free (gpointer data)
{
  Job *job = data;

  rpe_spe_params_clear (&job->params);
  g_clear_pointer (&job->snapshot, rpe_explorer_snapshot_unref);
  g_clear_error (&job->error);
  g_free (job->path);
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
  gpointer result = NULL;
  GDestroyNotify result_free = NULL;
  RpeStatus status;

  status = job->run (job, monitor, &result, &result_free);
  rpe_job_monitor_end (job->monitor);

  if (status == RPE_OK)
    g_task_return_pointer (task, result, result_free);
  else if (job->error != NULL && status != RPE_ERROR_CANCELLED)
    g_task_return_error (task, g_steal_pointer (&job->error));
  else
    {
      GError *error = NULL;

      rpe_job_status_error (status, job->what, &error);
      g_task_return_error (task, error);
    }
}

static Job *
job_new (gpointer                source_tag,
         const char             *what,
         JobRunFunc              run,
         RpeComputeProgressFunc  progress,
         gpointer                progress_data,
         GCancellable           *cancellable,
         GAsyncReadyCallback     callback,
         gpointer                user_data)
{
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);
  Job *job = g_new0 (Job, 1);

  g_task_set_source_tag (task, source_tag);
  g_task_set_name (task, what);
  g_task_set_return_on_cancel (task, FALSE);
  job->what = what;
  job->run = run;
  job->task = task;
  job->monitor = rpe_job_monitor_new (task, progress, progress_data);
  g_task_set_task_data (task, job, job_free);
  return job;
}

static void
job_start (Job *job)
{
  GTask *task = job->task;

  g_task_run_in_thread (task, job_worker);
  g_object_unref (task);
}

static void
job_fail (Job       *job,
          RpeStatus  status,
          const char *message)
{
  GTask *task = job->task;

  g_task_return_new_error (task, RPE_ERROR, status, "%s: %s", message, rpe_status_to_string (status));
  g_object_unref (task);
}

static double
elapsed_s (gint64 start)
{
  return (g_get_monotonic_time () - start) / 1e6;
}

/* ------------------------------------------------------ analytic templates */

/* The Toeplitz fills of compute_templates, features split over the workers. */
typedef struct
{
  RpeTemplates     *templates;
  const RpeMonitor *monitor;
  atomic_int        failed;
} FillJob;

static void
fill_worker (size_t  worker,
             size_t  n_workers,
             void   *data)
{
  FillJob *job = data;
  RpeTemplates *t = job->templates;
  gsize n = t->n, lags = 2 * n - 1;

  for (gsize d = worker; d < t->n_features; d += n_workers)
    {
      RpeStatus st;

      if (rpe_monitor_cancelled (job->monitor) || atomic_load (&job->failed) != RPE_OK)
        return;
      if ((st = rpe_spe_template_rows (t->profiles + d * lags, n, 0, n, t->values + d * n * n)) != RPE_OK)
        atomic_store (&job->failed, (int) st);
    }
}

/* Each P_d (gated or not) is stationary, P_d(m, n) = P_d(m - n) (docs/math.md, sections 1-3), so
 * one lag profile per feature (2N - 1 values, kept in templates->profiles) gives the whole
 * N x N cell by a Toeplitz fill (on every core: the fill is as much page faults as copying),
 * and the range over the cells is the range over the profiles: every lag tau in (-N, N)
 * occurs in the matrix. */
static RpeStatus
compute_templates (const RpeSpeParams  *params,
                   gsize                head,
                   gsize                n,
                   gboolean             gated,
                   const RpeMonitor    *monitor,
                   RpeTemplates       **out)
{
  gsize count, per_feature, lags, n_profiles;
  RpeStatus status = RPE_OK;
  RpeTemplates *templates;
  double lo = INFINITY, hi = -INFINITY;
  FillJob fill;

  if (n == 0 || head >= params->n_heads || params->n_features == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (n, n, &per_feature)
      || !rpe_size_mul (per_feature, params->n_features, &count)
      || !rpe_size_mul (n, 2, &lags)
      || !rpe_size_mul (lags - 1, params->n_features, &n_profiles))
    return RPE_ERROR_OVERFLOW;
  lags -= 1;

  templates = g_atomic_rc_box_new0 (RpeTemplates);
  templates->method = params->method;
  templates->head = head;
  templates->n_features = params->n_features;
  templates->n = n;
  templates->size = params->method == RPE_SPE_SINE ? params->n_sines : params->kernel;
  templates->gated = gated && params->gate != NULL;
  templates->values = values_take (count, &status);
  if (templates->values == NULL)
    goto fail;
  templates->profiles = rpe_alloc (n_profiles, sizeof (float), &status);
  if (templates->profiles == NULL)
    goto fail;

  for (gsize d = 0; d < params->n_features; d++)
    {
      float *lag_d = templates->profiles + d * lags;

      if (rpe_monitor_cancelled (monitor))
        {
          status = RPE_ERROR_CANCELLED;
          goto fail;
        }
      if ((status = rpe_spe_template_lags (params, head, d, n, templates->gated, lag_d)) != RPE_OK)
        goto fail;
      for (gsize i = 0; i < lags; i++)
        if (isfinite (lag_d[i]))
          {
            lo = lag_d[i] < lo ? lag_d[i] : lo;
            hi = lag_d[i] > hi ? lag_d[i] : hi;
          }
    }
  rpe_monitor_progress (monitor, 0.1);

  fill.templates = templates;
  fill.monitor = monitor;
  atomic_init (&fill.failed, RPE_OK);
  rpe_parallel_run (MIN (rpe_parallel_threads (), params->n_features), fill_worker, &fill);
  if ((status = (RpeStatus) atomic_load (&fill.failed)) != RPE_OK)
    goto fail;
  if (rpe_monitor_cancelled (monitor))
    {
      status = RPE_ERROR_CANCELLED;
      goto fail;
    }
  rpe_monitor_progress (monitor, 1.0);
  templates->vmin = lo <= hi ? lo : 0.0;
  templates->vmax = lo <= hi ? hi : 0.0;
  *out = templates;
  return RPE_OK;

fail:
  rpe_templates_unref (templates);
  return status;
}

static RpeStatus
templates_run (Job               *job,
               const RpeMonitor  *monitor,
               gpointer          *result,
               GDestroyNotify    *result_free)
{
  RpeTemplates *templates = NULL;
  RpeStatus status = compute_templates (&job->params, job->head, job->n, job->gated, monitor, &templates);

  if (status == RPE_OK)
    {
      *result = templates;
      *result_free = (GDestroyNotify) rpe_templates_unref;
    }
  else if (status == RPE_ERROR_INVALID_ARGUMENT)
    job->error = g_error_new (RPE_ERROR, status, _("Cannot compute the templates of head %zu: %s"),
                              job->head, rpe_status_to_string (status));
  return status;
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
  Job *job;
  RpeStatus status;

  g_return_if_fail (params != NULL);
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  job = job_new (rpe_compute_templates_async_full, N_("the templates"), templates_run,
                 progress, progress_data, cancellable, callback, user_data);
  job->head = head;
  job->n = n;
  job->gated = gated;
  status = rpe_spe_params_copy (&job->params, params);
  if (status != RPE_OK)
    {
      job_fail (job, status, _("Cannot copy the parameters"));
      return;
    }
  job_start (job);
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
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == rpe_compute_templates_async_full
                        || g_task_get_source_tag (G_TASK (result)) == rpe_compute_template_grid_async, NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ------------------------------------------------- one head's SPE draw */

/* Parameters of head h alone (H = 1), so the codes of one head can be computed
 * without the others'. */
static RpeStatus
head_params (const RpeSpeParams *p,
             gsize               h,
             gboolean            gated,
             RpeSpeParams       *out)
{
  gsize D = p->n_features;
  RpeStatus status;

  status = rpe_spe_params_init (out, p->method, 1, D,
                                p->method == RPE_SPE_SINE ? p->n_sines : p->kernel,
                                gated && p->gate != NULL);
  if (status != RPE_OK)
    return status;
  if (p->method == RPE_SPE_SINE)
    {
      gsize per = D * p->n_sines;

      memcpy (out->freqs, p->freqs + h * per, per * sizeof (float));
      memcpy (out->offsets, p->offsets + h * per, per * sizeof (float));
      memcpy (out->gains, p->gains + h * per, per * sizeof (float));
    }
  else
    {
      gsize per = D * p->kernel;

      memcpy (out->wq, p->wq + h * per, per * sizeof (float));
      memcpy (out->wk, p->wk + h * per, per * sizeof (float));
    }
  if (out->gate != NULL)
    memcpy (out->gate, p->gate + h * D, D * sizeof (float));
  return RPE_OK;
}

/* The slice of head h of the full module's draw (seed, R): z for the H = 1
 * parameters and eps (D, R) (NULL when ungated).  Caller frees both. */
static RpeStatus
head_noise (const RpeSpeParams *p,
            gsize               h,
            gsize               n,
            gsize               r,
            guint64             seed,
            gboolean            gated,
            float             **z_out,
            float             **eps_out)
{
  gsize D = p->n_features, count, per;
  RpeStatus status = RPE_OK;
  float *z = NULL, *eps = NULL;

  if (p->method == RPE_SPE_SINE)
    {
      if (!rpe_size_mul (D * 2 * p->n_sines, r, &per))
        return RPE_ERROR_OVERFLOW;
      z = rpe_alloc (per, sizeof (float), &status);
      if (z == NULL)
        return status;
      status = rpe_spe_noise_fill_range (p, n, r, seed, h * per, per, z);
    }
  else
    {
      gsize width;

      if (!rpe_size_add (n, 4 * p->kernel, &width) || !rpe_size_mul (D, width, &per)
          || !rpe_size_mul (per, r, &count))
        return RPE_ERROR_OVERFLOW;
      z = rpe_alloc (count, sizeof (float), &status);
      if (z == NULL)
        return status;
      for (gsize i = 0; i < r && status == RPE_OK; i++)
        status = rpe_spe_noise_fill_range (p, n, r, seed, (i * p->n_heads + h) * per, per, z + i * per);
    }
  if (status == RPE_OK && gated && p->gate != NULL)
    {
      gsize all = p->n_heads * D * r;

      eps = rpe_alloc (all, sizeof (float), &status);
      if (eps != NULL)
        {
          status = rpe_spe_gate_noise_fill (p, r, seed, eps);
          memmove (eps, eps + h * D * r, D * r * sizeof (float));
        }
    }
  if (status != RPE_OK)
    {
      rpe_free (z);
      rpe_free (eps);
      return status;
    }
  *z_out = z;
  *eps_out = eps;
  return RPE_OK;
}

/* --------------------------------------------------------- template grid */

/* The progress of a part of a job: fractions 0..1 of the part map to lo..hi of the job. */
typedef struct
{
  const RpeMonitor *parent;
  double            lo, hi;
} PartProgress;

static void
part_progress (double  fraction,
               void   *user_data)
{
  PartProgress *part = user_data;

  rpe_monitor_progress (part->parent, part->lo + (part->hi - part->lo) * fraction);
}

static RpeStatus
grid_run (Job               *job,
          const RpeMonitor  *monitor,
          gpointer          *result,
          GDestroyNotify    *result_free)
{
  const RpeExplorerSnapshot *s = job->snapshot;
  const RpeSpeParams *p = &s->spe;
  gsize n = MIN (s->n, job->n_cap), D, per;
  RpeTemplates *t = NULL;
  RpeSpeParams hp = { 0 };
  float *z = NULL, *eps = NULL, *qbar = NULL, *kbar = NULL, *emp = NULL;
  RpeStatus status;
  double lo = INFINITY, hi = -INFINITY, num = 0.0, den = 0.0;
  gboolean draw = s->template_kind != RPE_TEMPLATE_ANALYTIC;
  RpeMonitor sub = { monitor->cancel, NULL, NULL };
  PartProgress part = { monitor, 0.0, draw ? 0.15 : 0.95 };
  RpeMonitor first = { monitor->cancel, part_progress, &part };

  if (!s->have_spe)
    return RPE_ERROR_NOT_FOUND;
  D = p->n_features;
  status = compute_templates (p, s->head, n, s->gated, &first, &t);
  if (status != RPE_OK)
    return status;
  t->serial = s->serial;
  t->n_asked = s->n;
  t->kind = s->template_kind;
  t->r = s->r;
  per = n * n;
  /* compute_templates filled t->profiles, the lag profiles the cells were expanded from */
  rpe_monitor_progress (monitor, draw ? 0.2 : 1.0);

  if (draw)
    {
      gsize codes;

      if (!rpe_size_mul (n * D, s->r, &codes))
        {
          status = RPE_ERROR_OVERFLOW;
          goto out;
        }
      if ((status = head_params (p, s->head, t->gated, &hp)) != RPE_OK
          || (status = head_noise (p, s->head, n, s->r, s->seed, t->gated, &z, &eps)) != RPE_OK)
        goto out;
      qbar = rpe_alloc (codes, sizeof (float), &status);
      kbar = qbar != NULL ? rpe_alloc (codes, sizeof (float), &status) : NULL;
      emp = kbar != NULL ? rpe_alloc (per, sizeof (float), &status) : NULL;
      if (emp == NULL)
        goto out;
      if ((status = rpe_spe_codes (&hp, n, s->r, z, qbar, kbar, &sub)) != RPE_OK
          || (status = rpe_spe_gate_codes (&hp, n, s->r, eps, qbar, kbar)) != RPE_OK)
        goto out;
      rpe_monitor_progress (monitor, 0.5);
      for (gsize d = 0; d < D; d++)
        {
          float *td = t->values + d * per;

          if (rpe_monitor_cancelled (monitor))
            {
              status = RPE_ERROR_CANCELLED;
              goto out;
            }
          status = rpe_spe_empirical_template (n, 1, D, s->r, qbar, kbar, 0, d, emp);
          if (status != RPE_OK)
            goto out;
          for (gsize i = 0; i < per; i++)
            {
              double diff = (double) emp[i] - td[i];

              num += diff * diff;
              den += (double) td[i] * td[i];
              td[i] = s->template_kind == RPE_TEMPLATE_EMPIRICAL ? emp[i] : (float) diff;
            }
          rpe_monitor_progress (monitor, 0.5 + 0.5 * (d + 1) / D);
        }
      t->error = den > 0 ? sqrt (num / den) : NAN;
      for (gsize i = 0; i < D * per; i++)
        if (isfinite (t->values[i]))
          {
            lo = fmin (lo, t->values[i]);
            hi = fmax (hi, t->values[i]);
          }
      t->vmin = lo <= hi ? lo : 0.0;
      t->vmax = lo <= hi ? hi : 0.0;
    }

out:
  rpe_spe_params_clear (&hp);
  rpe_free (z);
  rpe_free (eps);
  rpe_free (qbar);
  rpe_free (kbar);
  rpe_free (emp);
  if (status != RPE_OK)
    {
      rpe_templates_unref (t);
      return status;
    }
  *result = t;
  *result_free = (GDestroyNotify) rpe_templates_unref;
  return RPE_OK;
}

void
rpe_compute_template_grid_async (RpeExplorerSnapshot    *snapshot,
                                 gsize                   n_cap,
                                 RpeComputeProgressFunc  progress,
                                 gpointer                progress_data,
                                 GCancellable           *cancellable,
                                 GAsyncReadyCallback     callback,
                                 gpointer                user_data)
{
  Job *job;

  g_return_if_fail (snapshot != NULL);
  job = job_new (rpe_compute_template_grid_async, N_("the templates"), grid_run,
                 progress, progress_data, cancellable, callback, user_data);
  job->snapshot = rpe_explorer_snapshot_ref (snapshot);
  job->n_cap = MAX (n_cap, 2);
  job_start (job);
}

/* --------------------------------------------------------- attention rows */

/* Everything needed to produce attention rows of one head of one method. */
typedef struct
{
  RpeExplorerMethod  method;
  gsize              n;
  gsize              d;          /* D */
  gboolean           causal;
  float             *q;          /* (N, D) content of the head */
  float             *k;
  float             *qhat;       /* (N, R) SPE, LINEAR */
  float             *khat;
  float             *phi_q;      /* (N, M) LINEAR */
  float             *phi_k;
  gsize              m;
  float             *lags;       /* (D, 2N-1) EXACT */
  float             *enc_q;      /* (N, W) LRPE */
  float             *enc_k;
  float             *w;          /* (2N-1) FASTRPB */
  gboolean           model;      /* the trained model's own attention on its capture (phi_q, phi_k;
                                    LRPE: enc_q, enc_k of the feature-mapped rows, row-normalised scores) */
  RpeLogitsSpec      spec;
} RowSource;

/* Whether a method draws the trained model's own computation: its trained module (learned APE,
 * FastRPB bias, LRPE parameters) in use on a capture's queries and keys. */
static gboolean
draws_model (const RpeExplorerSnapshot *s, RpeExplorerMethod method)
{
  gboolean trained = (method == RPE_EXPLORER_METHOD_APE && s->ape_trained)
                     || (method == RPE_EXPLORER_METHOD_FASTRPB && s->fastrpb_trained)
                     || (method == RPE_EXPLORER_METHOD_LRPE && s->lrpe_trained != NULL);

  return trained && rpe_explorer_snapshot_captured (s, NULL, NULL, NULL, NULL);
}

/* The features phi_q, phi_k (n, m) of query and key rows q, k (n, width) with the snapshot's
 * feature map (the demos' elu + 1 by default): the linear method's and the trained models'. */
static RpeStatus
feature_rows (const RpeExplorerSnapshot *s,
              gsize                      n,
              gsize                      width,
              const float               *q,
              const float               *k,
              gsize                     *m,
              float                    **phi_q,
              float                    **phi_k,
              const RpeMonitor          *monitor)
{
  RpeFeatureOptions options = { s->seed, 64, TRUE, 1 };
  RpeStatus         status = rpe_feature_map_dim (s->feature_map, &options, width, m);
  gsize             count;

  if (status != RPE_OK)
    return status;
  if (!rpe_size_mul (n, *m, &count))
    return RPE_ERROR_OVERFLOW;
  if ((*phi_q = rpe_alloc (count, sizeof (float), &status)) == NULL
      || (*phi_k = rpe_alloc (count, sizeof (float), &status)) == NULL)
    return status;
  status = rpe_feature_map_apply (s->feature_map, &options, RPE_FEATURE_QUERY, n, 1, width, q, *phi_q, monitor);
  if (status == RPE_OK)
    status = rpe_feature_map_apply (s->feature_map, &options, RPE_FEATURE_KEY, n, 1, width, k, *phi_k, monitor);
  return status;
}

static void
row_source_clear (RowSource *src)
{
  rpe_free (src->q);
  rpe_free (src->k);
  rpe_free (src->qhat);
  rpe_free (src->khat);
  rpe_free (src->phi_q);
  rpe_free (src->phi_k);
  rpe_free (src->lags);
  rpe_free (src->enc_q);
  rpe_free (src->enc_k);
  rpe_free (src->w);
  memset (src, 0, sizeof *src);
}

static RpeStatus
row_source_init (RowSource                 *src,
                 const RpeExplorerSnapshot *s,
                 RpeExplorerMethod          method,
                 gsize                      n,
                 const RpeMonitor          *monitor)
{
  const RpeSpeParams *p = &s->spe;
  gsize H, D, head, count, all;
  float *qa = NULL, *ka = NULL;
  RpeStatus status = RPE_OK;

  memset (src, 0, sizeof *src);
  if (n < 1 || s->content_heads < 1 || s->content_dim < 1)
    return RPE_ERROR_INVALID_ARGUMENT;
  /* SPE, exact and linear read the SPE module; the others need a shape for the content: the SPE
   * module's, the trained modules' or the trained LRPE parameters' */
  if (!s->have_spe
      && (method == RPE_EXPLORER_METHOD_SPE || method == RPE_EXPLORER_METHOD_EXACT
          || method == RPE_EXPLORER_METHOD_LINEAR
          || (s->trained == NULL && !(method == RPE_EXPLORER_METHOD_LRPE && s->lrpe_trained != NULL))))
    return RPE_ERROR_INVALID_ARGUMENT;
  H = s->content_heads;
  D = s->content_dim;
  head = s->content_head;
  src->method = method;
  src->n = n;
  src->d = D;
  src->causal = s->causal;

  /* The head's content, (N, D). */
  if (!rpe_size_mul (n, D, &count) || !rpe_size_mul (count, H, &all))
    return RPE_ERROR_OVERFLOW;
  qa = rpe_alloc (all, sizeof (float), &status);
  ka = qa != NULL ? rpe_alloc (all, sizeof (float), &status) : NULL;
  src->q = ka != NULL ? rpe_alloc (count, sizeof (float), &status) : NULL;
  src->k = src->q != NULL ? rpe_alloc (count, sizeof (float), &status) : NULL;
  if (src->k == NULL)
    goto out;
  status = rpe_explorer_snapshot_fill_content (s, n, qa, ka);
  if (status != RPE_OK)
    goto out;
  for (gsize i = 0; i < n; i++)
    {
      memcpy (src->q + i * D, qa + (i * H + head) * D, D * sizeof (float));
      memcpy (src->k + i * D, ka + (i * H + head) * D, D * sizeof (float));
    }
  g_clear_pointer (&qa, rpe_free);
  g_clear_pointer (&ka, rpe_free);

  src->spec.n = n;
  src->spec.n_heads = 1;
  src->spec.d = D;
  src->spec.q = src->q;
  src->spec.k = src->k;
  src->spec.kind = RPE_LOGITS_DOT;
  src->model = draws_model (s, method);

  switch (method)
    {
    case RPE_EXPLORER_METHOD_SPE:
    case RPE_EXPLORER_METHOD_LINEAR:
      {
        RpeSpeParams hp = { 0 };
        float *z = NULL, *eps = NULL;
        gsize codes;

        if (!rpe_size_mul (n, s->r, &codes))
          return RPE_ERROR_OVERFLOW;
        status = head_params (p, s->head, s->gated, &hp);
        if (status == RPE_OK)
          status = head_noise (p, s->head, n, s->r, s->seed, s->gated, &z, &eps);
        if (status == RPE_OK)
          src->qhat = rpe_alloc (codes, sizeof (float), &status);
        if (src->qhat != NULL)
          src->khat = rpe_alloc (codes, sizeof (float), &status);
        if (src->khat != NULL)
          status = rpe_spe_encode_fused (&hp, n, s->r, z, eps, src->q, src->k, src->qhat, src->khat, monitor);
        rpe_spe_params_clear (&hp);
        rpe_free (z);
        rpe_free (eps);
        if (status != RPE_OK)
          goto out;
        src->spec.d = s->r;
        src->spec.q = src->qhat;
        src->spec.k = src->khat;
        if (method == RPE_EXPLORER_METHOD_LINEAR)
          status = feature_rows (s, n, s->r, src->qhat, src->khat, &src->m, &src->phi_q, &src->phi_k, monitor);
      }
      break;

    case RPE_EXPLORER_METHOD_EXACT:
      {
        gsize lags = 2 * n - 1, total;

        if (!rpe_size_mul (lags, D, &total))
          return RPE_ERROR_OVERFLOW;
        src->lags = rpe_alloc (total, sizeof (float), &status);
        for (gsize d = 0; src->lags != NULL && d < D && status == RPE_OK; d++)
          status = rpe_spe_template_lags (p, s->head, d, n, s->gated, src->lags + d * lags);
      }
      break;

    case RPE_EXPLORER_METHOD_APE:
      if (!s->ape_trained || s->trained->heads != H || s->trained->dim != D)
        {
          /* the sinusoidal embedding */
          src->model = FALSE;
          src->spec.kind = RPE_LOGITS_APE;
          break;
        }
      /* the learned embedding added to q and k at positions below its P (nothing beyond) */
      for (gsize i = 0; i < MIN (n, s->trained->ape_positions); i++)
        for (gsize d = 0; d < D; d++)
          {
            float e = s->trained->ape[(i * H + head) * D + d];

            src->q[i * D + d] += e;
            src->k[i * D + d] += e;
          }
      if (src->model)
        {
          status = feature_rows (s, n, D, src->q, src->k, &src->m, &src->phi_q, &src->phi_k, monitor);
        }
      break;

    case RPE_EXPLORER_METHOD_LRPE:
      {
        RpeLrpe *lrpe = NULL;
        gsize width, enc;
        float scale;

        if (src->model)
          {
            /* the model's placement: the feature map first, then Lambda P on the features */
            status = feature_rows (s, n, D, src->q, src->k, &src->m, &src->phi_q, &src->phi_k, monitor);
            if (status != RPE_OK)
              goto out;
            lrpe = rpe_explorer_snapshot_new_lrpe (s, src->m, &status);
            if (lrpe == NULL)
              goto out;
            width = rpe_lrpe_out_width (lrpe);
            if (!rpe_size_mul (n, width, &enc))
              {
                rpe_lrpe_free (lrpe);
                status = RPE_ERROR_OVERFLOW;
                goto out;
              }
            src->enc_q = rpe_alloc (enc, sizeof (float), &status);
            src->enc_k = src->enc_q != NULL ? rpe_alloc (enc, sizeof (float), &status) : NULL;
            if (src->enc_k != NULL)
              status = rpe_lrpe_encode (lrpe, n, 1, 0, src->phi_q, src->enc_q, monitor);
            if (status == RPE_OK && src->enc_k != NULL)
              status = rpe_lrpe_encode (lrpe, n, 1, 0, src->phi_k, src->enc_k, monitor);
            rpe_lrpe_free (lrpe);
            src->m = width;
            break;
          }
        lrpe = rpe_explorer_snapshot_new_lrpe (s, D, &status);
        if (lrpe == NULL)
          goto out;
        width = rpe_lrpe_out_width (lrpe);
        if (!rpe_size_mul (n, width, &enc))
          {
            rpe_lrpe_free (lrpe);
            return RPE_ERROR_OVERFLOW;
          }
        src->enc_q = rpe_alloc (enc, sizeof (float), &status);
        src->enc_k = src->enc_q != NULL ? rpe_alloc (enc, sizeof (float), &status) : NULL;
        if (src->enc_k != NULL)
          status = rpe_lrpe_encode (lrpe, n, 1, 0, src->q, src->enc_q, monitor);
        if (status == RPE_OK && src->enc_k != NULL)
          status = rpe_lrpe_encode (lrpe, n, 1, 0, src->k, src->enc_k, monitor);
        rpe_lrpe_free (lrpe);
        if (status != RPE_OK)
          goto out;
        /* RoPE-style softmax of Re ((Lambda(m) P q)^H (Lambda(n) P k)) / sqrt(D): the
         * DOT kind divides by sqrt(W), so scale q by sqrt(W / D). */
        scale = (float) sqrt ((double) width / (double) D);
        for (gsize i = 0; i < enc; i++)
          src->enc_q[i] *= scale;
        src->spec.d = width;
        src->spec.q = src->enc_q;
        src->spec.k = src->enc_k;
      }
      break;

    case RPE_EXPLORER_METHOD_FASTRPB:
      src->w = rpe_alloc (2 * n - 1, sizeof (float), &status);
      if (src->w != NULL)
        rpe_explorer_snapshot_fastrpb_weights (s, n, src->w);
      if (src->w != NULL && src->model)
        {
          /* the model's linear attention on the features, W V added beside it */
          status = feature_rows (s, n, D, src->q, src->k, &src->m, &src->phi_q, &src->phi_k, monitor);
        }
      break;

    case RPE_EXPLORER_N_METHODS:
    default:
      status = RPE_ERROR_INVALID_ARGUMENT;
    }

out:
  rpe_free (qa);
  rpe_free (ka);
  if (status != RPE_OK)
    row_source_clear (src);
  return status;
}

char *
rpe_compute_method_parameters (const RpeExplorerSnapshot *s, RpeExplorerMethod method)
{
  const char      *what;
  g_autofree char *layer = NULL;

  switch (method)
    {
    case RPE_EXPLORER_METHOD_APE:
      what = s->ape_trained ? _("learned embedding") : _("sinusoidal");
      break;
    case RPE_EXPLORER_METHOD_LRPE:
      what = s->lrpe_trained != NULL ? _("trained parameters") : _("seeded parameters");
      break;
    case RPE_EXPLORER_METHOD_FASTRPB:
      if (s->fastrpb_trained)
        {
          const RpeExplorerFastrpbLayer *l = rpe_explorer_trained_fastrpb (s->trained, s->layer);

          what = layer = l->layer != RPE_EXPLORER_TRAINED_NO_LAYER
                           ? g_strdup_printf (_("trained bias, layer %u"), l->layer)
                           : g_strdup_printf (_("trained bias “%s”"), l->prefix);
        }
      else
        what = _("edited weights");
      break;
    case RPE_EXPLORER_METHOD_SPE:
    case RPE_EXPLORER_METHOD_EXACT:
    case RPE_EXPLORER_METHOD_LINEAR:
    case RPE_EXPLORER_N_METHODS:
    default:
      return g_strdup ("");
    }
  if (draws_model (s, method))
    return g_strdup_printf (_("%s, on capture"), what);
  return g_strdup (what);
}

/* Exact logits (docs/math.md, section 4): l(m, n) = sum_d q[m,d] k[n,d] Ptilde_d(m - n) / sqrt(D). */
RpeStatus
rpe_compute_exact_logits_rows (const float *q,
                               const float *k,
                               const float *lags,
                               gsize        n,
                               gsize        D,
                               gboolean     causal,
                               gsize        m0,
                               gsize        n_rows,
                               gsize        n_cols,
                               float       *out)
{
  gsize n_lags = 2 * n - 1;
  float inv = (float) (1.0 / sqrt ((double) D));

  for (gsize i = 0; i < n_rows; i++)
    {
      gsize m = m0 + i;
      const float *qm = q + m * D;
      float *row = out + i * n_cols;

      for (gsize c = 0; c < n_cols; c++)
        {
          const float *kn = k + c * D;
          gsize        lag = m + (n - 1) - c;
          float acc = 0.0f;

          if (causal && c > m)
            {
              row[c] = -INFINITY;
              continue;
            }
          for (gsize d = 0; d < D; d++)
            acc += qm[d] * kn[d] * lags[d * n_lags + lag];
          row[c] = acc * inv;
        }
    }
  return RPE_OK;
}

static RpeStatus
exact_logits_rows (size_t m0, size_t n_rows, size_t n_cols, float *out, void *user_data)
{
  const RowSource *src = user_data;

  return rpe_compute_exact_logits_rows (src->q, src->k, src->lags, src->n, src->d, src->causal, m0, n_rows, n_cols,
                                        out);
}

/* Rows m0 .. m0 + n_rows - 1 of the map, out (n_rows, N). */
static RpeStatus
row_source_rows (RowSource        *src,
                 gsize             m0,
                 gsize             n_rows,
                 float            *out,
                 const RpeMonitor *monitor)
{
  gsize n = src->n;
  RpeStatus status;

  switch (src->method)
    {
    case RPE_EXPLORER_METHOD_EXACT:
      return rpe_attention_rows_func (n, m0, n_rows, n_rows, src->causal, exact_logits_rows, src, out, NULL);
    case RPE_EXPLORER_METHOD_LINEAR:
      return rpe_linear_attention_map_rows (n, 1, src->m, src->phi_q, src->phi_k, src->causal,
                                            0, m0, n_rows, out, NULL);
    case RPE_EXPLORER_METHOD_FASTRPB:
      status = src->model ? rpe_linear_attention_map_rows (n, 1, src->m, src->phi_q, src->phi_k, src->causal, 0, m0,
                                                           n_rows, out, NULL)
                          : rpe_attention_rows (&src->spec, 0, m0, n_rows, src->causal, out, NULL);
      if (status != RPE_OK)
        return status;
      /* the operator applied to V: A + W, W[m, n] = w_{m-n} (causal: zero for n > m) */
      for (gsize i = 0; i < n_rows; i++)
        {
          gsize m = m0 + i;
          gsize end = src->causal ? m + 1 : n;

          for (gsize c = 0; c < end; c++)
            out[i * n + c] += src->w[m + (n - 1) - c];
        }
      return RPE_OK;
    case RPE_EXPLORER_METHOD_APE:
      if (src->model)
        return rpe_linear_attention_map_rows (n, 1, src->m, src->phi_q, src->phi_k, src->causal, 0, m0, n_rows, out,
                                              NULL);
      return rpe_attention_rows (&src->spec, 0, m0, n_rows, src->causal, out, NULL);
    case RPE_EXPLORER_METHOD_LRPE:
      if (src->model)
        return rpe_lrpe_attention_map_rows (n, src->m, src->m, src->enc_q, src->enc_k, src->causal, TRUE, m0, n_rows,
                                            out);
      return rpe_attention_rows (&src->spec, 0, m0, n_rows, src->causal, out, NULL);
    case RPE_EXPLORER_METHOD_SPE:
    case RPE_EXPLORER_N_METHODS:
    default:
      return rpe_attention_rows (&src->spec, 0, m0, n_rows, src->causal, out, NULL);
    }
  (void) monitor;
}

static RpeStatus
attention_run (Job               *job,
               const RpeMonitor  *monitor,
               gpointer          *result,
               GDestroyNotify    *result_free)
{
  const RpeExplorerSnapshot *s = job->snapshot;
  const RpeAttentionRequest *req = &job->request;
  gint64 start = g_get_monotonic_time ();
  RpeMonitor sub = { monitor->cancel, NULL, NULL };
  RpeAttentionImage *img;
  RowSource src;
  gsize n = s->n, m0, m1, n0, n1, rows, cols, block, count;
  double *acc = NULL;
  gsize *row_bin = NULL, *col_bin = NULL, *row_cnt = NULL, *col_cnt = NULL;
  float *buf = NULL;
  RpeStatus status;
  gboolean use_max = req->reduce == RPE_HEATMAP_REDUCE_MAX;
  double lo = INFINITY, hi = -INFINITY;

  m0 = MIN (req->m0, n - 1);
  m1 = req->m1 == 0 ? n : MIN (req->m1, n);
  n0 = MIN (req->n0, n - 1);
  n1 = req->n1 == 0 ? n : MIN (req->n1, n);
  if (m1 <= m0 || n1 <= n0)
    return RPE_ERROR_INVALID_ARGUMENT;
  rows = MIN (m1 - m0, MAX (req->max_rows, 1));
  cols = MIN (n1 - n0, MAX (req->max_cols, 1));

  status = row_source_init (&src, s, s->method, n, &sub);
  if (status != RPE_OK)
    return status;
  rpe_monitor_progress (monitor, 0.02);

  img = g_atomic_rc_box_new0 (RpeAttentionImage);
  img->serial = s->serial;
  img->method = s->method;
  img->causal = s->causal;
  img->n = n;
  img->head = s->content_head;
  img->m0 = m0;
  img->m1 = m1;
  img->n0 = n0;
  img->n1 = n1;
  img->rows = rows;
  img->cols = cols;
  img->reduce = use_max ? RPE_HEATMAP_REDUCE_MAX : RPE_HEATMAP_REDUCE_MEAN;

  if (!rpe_size_mul (rows, cols, &count))
    {
      status = RPE_ERROR_OVERFLOW;
      goto out;
    }
  block = MAX (1, MIN (m1 - m0, ROW_BLOCK_FLOATS / n));
  img->values = rpe_alloc (count, sizeof (float), &status);
  acc = img->values != NULL ? rpe_alloc (count, sizeof (double), &status) : NULL;
  buf = acc != NULL ? rpe_alloc (block * n, sizeof (float), &status) : NULL;
  row_bin = buf != NULL ? rpe_alloc (m1 - m0, sizeof (gsize), &status) : NULL;
  col_bin = row_bin != NULL ? rpe_alloc (n1 - n0, sizeof (gsize), &status) : NULL;
  row_cnt = col_bin != NULL ? rpe_alloc0 (rows, sizeof (gsize), &status) : NULL;
  col_cnt = row_cnt != NULL ? rpe_alloc0 (cols, sizeof (gsize), &status) : NULL;
  if (col_cnt == NULL)
    goto out;
  /* The whole map of a logits-spec method (SPE, APE, LRPE): the core's fused path, logits
   * tiles through an online softmax straight into the pixels, threaded (the same binning,
   * floor (offset * pixels / N); the values of the loop below to float rounding). */
  if (m0 == 0 && m1 == n && n0 == 0 && n1 == n && !src.model
      && (s->method == RPE_EXPLORER_METHOD_SPE || s->method == RPE_EXPLORER_METHOD_APE
          || s->method == RPE_EXPLORER_METHOD_LRPE))
    {
      status = rpe_attention_map_reduce (&src.spec, 0, src.causal, rows, cols,
                                         use_max ? RPE_MAP_REDUCE_MAX : RPE_MAP_REDUCE_MEAN, img->values, monitor);
      if (status != RPE_OK)
        goto out;
      for (gsize i = 0; i < count; i++)
        if (isfinite (img->values[i]))
          {
            lo = fmin (lo, img->values[i]);
            hi = fmax (hi, img->values[i]);
          }
      img->vmin = lo <= hi ? lo : 0.0;
      img->vmax = lo <= hi ? hi : 0.0;
      img->seconds = elapsed_s (start);
      goto out;
    }
  for (gsize i = 0; i < count; i++)
    acc[i] = use_max ? -INFINITY : 0.0;
  /* pixel of each row / column: floor (offset * pixels / span) */
  for (gsize m = m0; m < m1; m++)
    {
      row_bin[m - m0] = (gsize) (((guint64) (m - m0) * rows) / (m1 - m0));
      row_cnt[row_bin[m - m0]]++;
    }
  for (gsize c = n0; c < n1; c++)
    {
      col_bin[c - n0] = (gsize) (((guint64) (c - n0) * cols) / (n1 - n0));
      col_cnt[col_bin[c - n0]]++;
    }

  for (gsize b = m0; b < m1; b += block)
    {
      gsize nb = MIN (block, m1 - b);

      if (rpe_monitor_cancelled (monitor))
        {
          status = RPE_ERROR_CANCELLED;
          goto out;
        }
      status = row_source_rows (&src, b, nb, buf, monitor);
      if (status != RPE_OK)
        goto out;
      for (gsize i = 0; i < nb; i++)
        {
          double *arow = acc + row_bin[b + i - m0] * cols;
          const float *row = buf + i * n;

          if (use_max)
            for (gsize c = n0; c < n1; c++)
              {
                double *cell = arow + col_bin[c - n0];

                if (row[c] > *cell)
                  *cell = row[c];
              }
          else
            for (gsize c = n0; c < n1; c++)
              arow[col_bin[c - n0]] += row[c];
        }
      rpe_monitor_progress (monitor, 0.02 + 0.98 * (double) (b + nb - m0) / (double) (m1 - m0));
    }

  for (gsize i = 0; i < rows; i++)
    for (gsize j = 0; j < cols; j++)
      {
        double v = acc[i * cols + j];

        if (!use_max)
          v /= (double) row_cnt[i] * (double) col_cnt[j];
        img->values[i * cols + j] = (float) v;
        if (isfinite (v))
          {
            lo = fmin (lo, v);
            hi = fmax (hi, v);
          }
      }
  img->vmin = lo <= hi ? lo : 0.0;
  img->vmax = lo <= hi ? hi : 0.0;
  img->seconds = elapsed_s (start);

out:
  row_source_clear (&src);
  rpe_free (acc);
  rpe_free (buf);
  rpe_free (row_bin);
  rpe_free (col_bin);
  rpe_free (row_cnt);
  rpe_free (col_cnt);
  if (status != RPE_OK)
    {
      rpe_attention_image_unref (img);
      return status;
    }
  *result = img;
  *result_free = (GDestroyNotify) rpe_attention_image_unref;
  return RPE_OK;
}

void
rpe_compute_attention_async (RpeExplorerSnapshot       *snapshot,
                             const RpeAttentionRequest *request,
                             RpeComputeProgressFunc     progress,
                             gpointer                   progress_data,
                             GCancellable              *cancellable,
                             GAsyncReadyCallback        callback,
                             gpointer                   user_data)
{
  Job *job;

  g_return_if_fail (snapshot != NULL && request != NULL);
  job = job_new (rpe_compute_attention_async, N_("the attention map"), attention_run,
                 progress, progress_data, cancellable, callback, user_data);
  job->snapshot = rpe_explorer_snapshot_ref (snapshot);
  job->request = *request;
  job_start (job);
}

RpeAttentionImage *
rpe_compute_attention_finish (GAsyncResult  *result,
                              GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == rpe_compute_attention_async, NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

RpeStatus
rpe_compute_attention_cell (const RpeExplorerSnapshot *snapshot,
                            gsize                      m,
                            gsize                      n,
                            double                    *value)
{
  RowSource src;
  float *row;
  RpeStatus status;

  if (m >= snapshot->n || n >= snapshot->n)
    return RPE_ERROR_INVALID_ARGUMENT;
  status = row_source_init (&src, snapshot, snapshot->method, snapshot->n, NULL);
  if (status != RPE_OK)
    return status;
  row = rpe_alloc (snapshot->n, sizeof (float), &status);
  if (row != NULL)
    status = row_source_rows (&src, m, 1, row, NULL);
  if (status == RPE_OK)
    *value = row[n];
  rpe_free (row);
  row_source_clear (&src);
  return status;
}

/* --------------------------------------------------------------- teaching */

/* The whole (n, n) map, in blocks of rows: cancellable between blocks, progress after each. */
static RpeStatus
full_map (const RpeExplorerSnapshot *s,
          RpeExplorerMethod          method,
          gsize                      n,
          float                     *out,
          const RpeMonitor          *monitor)
{
  RpeMonitor sub = { monitor->cancel, NULL, NULL };
  gsize block = MAX ((gsize) 1, MIN (n, FULL_MAP_BLOCK_FLOATS / n));
  RowSource src;
  RpeStatus status = row_source_init (&src, s, method, n, &sub);

  for (gsize m = 0; m < n && status == RPE_OK; m += block)
    {
      gsize nb = MIN (block, n - m);

      if (rpe_monitor_cancelled (monitor))
        status = RPE_ERROR_CANCELLED;
      else
        status = row_source_rows (&src, m, nb, out + m * n, &sub);
      rpe_monitor_progress (monitor, (double) (m + nb) / (double) n);
    }
  row_source_clear (&src);
  return status;
}

static RpeStatus
teaching_run (Job               *job,
              const RpeMonitor  *monitor,
              gpointer          *result,
              GDestroyNotify    *result_free)
{
  const RpeExplorerSnapshot *s = job->snapshot;
  gsize n = MIN (s->n, job->n_cap), per;
  RpeTeaching *t;
  RpeStatus status = RPE_OK;
  double num = 0.0, den = 0.0;
  /* the share of the two maps in the job: all of it, or most of it when they are large */
  double maps = !job->with_curve ? 1.0 : n >= 256 ? 0.8 : 0.2;
  PartProgress exact_part = { monitor, 0.0, 0.45 * maps }, spe_part = { monitor, 0.45 * maps, 0.9 * maps };
  RpeMonitor exact_mon = { monitor->cancel, part_progress, &exact_part };
  RpeMonitor spe_mon = { monitor->cancel, part_progress, &spe_part };

  if (!s->have_spe)
    return RPE_ERROR_NOT_FOUND;
  if (!rpe_size_mul (n, n, &per))
    return RPE_ERROR_OVERFLOW;
  t = g_atomic_rc_box_new0 (RpeTeaching);
  t->serial = s->serial;
  t->n = n;
  t->n_asked = s->n;
  t->r = s->r;
  t->head = s->head;
  t->exact = rpe_alloc (per, sizeof (float), &status);
  t->estimate = t->exact != NULL ? rpe_alloc (per, sizeof (float), &status) : NULL;
  t->difference = t->estimate != NULL ? rpe_alloc (per, sizeof (float), &status) : NULL;
  if (t->difference == NULL)
    goto out;
  if ((status = full_map (s, RPE_EXPLORER_METHOD_EXACT, n, t->exact, &exact_mon)) != RPE_OK
      || (status = full_map (s, RPE_EXPLORER_METHOD_SPE, n, t->estimate, &spe_mon)) != RPE_OK)
    goto out;
  for (gsize i = 0; i < per; i++)
    {
      t->difference[i] = t->estimate[i] - t->exact[i];
      num += (double) t->difference[i] * t->difference[i];
      den += (double) t->exact[i] * t->exact[i];
    }
  t->error = den > 0 ? sqrt (num / den) : NAN;
  rpe_monitor_progress (monitor, maps);

  if (job->with_curve)
    {
      RpeCurveErrorConfig config = { &s->spe, MIN (n, 128), s->gated, s->head, RPE_CURVE_ALL, 3, 1000 };
      RpeMonitor cm = { monitor->cancel, NULL, NULL };
      gsize rl[16], nr = 0;

      /* every R the explorer takes (the teaching view's slider spans the same range) */
      for (gsize r = 1; r <= RPE_EXPLORER_MAX_R && nr < G_N_ELEMENTS (rl); r *= 2)
        rl[nr++] = r;
      t->n_curve = nr;
      t->curve_r = g_new0 (double, nr);
      t->curve_mean = g_new0 (double, nr);
      t->curve_sd = g_new0 (double, nr);
      for (gsize i = 0; i < nr; i++)
        {
          t->curve_r[i] = (double) rl[i];
          status = rpe_curve_error_vs_r (&config, rl + i, 1, t->curve_mean + i, NULL, t->curve_sd + i, &cm);
          if (status != RPE_OK)
            goto out;
          rpe_monitor_progress (monitor, maps + (1.0 - maps) * (double) (i + 1) / (double) nr);
        }
      t->slope = NAN;
      rpe_curve_fit_loglog (t->curve_r, t->curve_mean, nr, &t->slope, NULL, NULL);
    }

out:
  if (status != RPE_OK)
    {
      rpe_teaching_unref (t);
      return status;
    }
  *result = t;
  *result_free = (GDestroyNotify) rpe_teaching_unref;
  return RPE_OK;
}

void
rpe_compute_teaching_async (RpeExplorerSnapshot    *snapshot,
                            gsize                   n_cap,
                            gboolean                with_curve,
                            RpeComputeProgressFunc  progress,
                            gpointer                progress_data,
                            GCancellable           *cancellable,
                            GAsyncReadyCallback     callback,
                            gpointer                user_data)
{
  Job *job;

  g_return_if_fail (snapshot != NULL);
  job = job_new (rpe_compute_teaching_async, N_("the SPE estimate"), teaching_run,
                 progress, progress_data, cancellable, callback, user_data);
  job->snapshot = rpe_explorer_snapshot_ref (snapshot);
  job->n_cap = MAX (n_cap, 2);
  job->with_curve = with_curve;
  job_start (job);
}

RpeTeaching *
rpe_compute_teaching_finish (GAsyncResult  *result,
                             GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == rpe_compute_teaching_async, NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ----------------------------------------------------------------- curves */

static RpeStatus
curves_run (Job               *job,
            const RpeMonitor  *monitor,
            gpointer          *result,
            GDestroyNotify    *result_free)
{
  const RpeExplorerSnapshot *s = job->snapshot;
  const RpeSpeParams *p = &s->spe;
  RpeMonitor sub = { monitor->cancel, NULL, NULL };
  gsize n = MIN (s->n, job->n_cap), D;
  RpeCurves *c;
  RpeLrpe *lrpe = NULL, *lrpe_x = NULL;
  float *w = NULL, *bias = NULL;
  RpeStatus status = RPE_OK;

  if (!s->have_spe)
    return RPE_ERROR_NOT_FOUND;
  D = p->n_features;
  c = g_atomic_rc_box_new0 (RpeCurves);
  c->serial = s->serial;
  c->n = n;
  c->n_asked = s->n;

  /* 1. profiles */
  c->profile = rpe_curve_profile_new (n, &status);
  if (c->profile == NULL)
    goto out;
  if ((status = rpe_curve_profile_add_spe (c->profile, "spe_d", p, s->head, s->feature, s->gated, &sub)) != RPE_OK
      || (status = rpe_curve_profile_add_spe (c->profile, "spe_mean", p, s->head, RPE_CURVE_ALL, s->gated, &sub)) != RPE_OK)
    goto out;
  lrpe = rpe_explorer_snapshot_new_lrpe (s, D, &status);
  if (lrpe == NULL && s->lrpe_trained != NULL)
    {
      /* trained parameters of another width: their profile (unit content) at their width */
      gsize dt = rpe_lrpe_trained_dim (s->lrpe_trained);

      lrpe = rpe_explorer_snapshot_new_lrpe (s, dt > 0 ? dt : s->content_dim, &status);
    }
  if (lrpe == NULL || (status = rpe_curve_profile_add_lrpe (c->profile, "lrpe", lrpe, NULL, NULL)) != RPE_OK)
    goto out;
  w = rpe_alloc (2 * n - 1, sizeof (float), &status);
  if (w == NULL)
    goto out;
  rpe_explorer_snapshot_fastrpb_weights (s, n, w);
  if ((status = rpe_curve_profile_add_fastrpb (c->profile, "fastrpb", w, s->causal)) != RPE_OK)
    goto out;
  rpe_monitor_progress (monitor, 0.1);

  /* 2. estimator error against R */
  {
    RpeCurveErrorConfig config = { p, MIN (n, 96), s->gated, s->head, RPE_CURVE_ALL, 2, s->seed };
    gsize rl[16], nr = 0;
    double mean[16], sd[16], rr[16];
    double slope = NAN;

    for (gsize r = 1; r <= 512; r *= 2)
      {
        rr[nr] = (double) r;
        rl[nr++] = r;
      }
    if ((status = rpe_curve_error_vs_r (&config, rl, nr, mean, NULL, sd, &sub)) != RPE_OK)
      goto out;
    c->error = rpe_curve_table_new (nr, &status);
    if (c->error == NULL
        || (status = rpe_curve_table_add_column (c->error, "R", rr, NULL)) != RPE_OK
        || (status = rpe_curve_table_add_column (c->error, "mean", mean, NULL)) != RPE_OK
        || (status = rpe_curve_table_add_column (c->error, "sd", sd, NULL)) != RPE_OK)
      goto out;
    if (rpe_curve_fit_loglog (rr, mean, nr, &slope, NULL, NULL) == RPE_OK)
      rpe_curve_table_set_meta_double (c->error, "slope", slope);
  }
  rpe_monitor_progress (monitor, 0.4);

  /* 3. extrapolation beyond N_train */
  {
    RpeCurveExtrapolationConfig config = { 0 };
    RpeCurveModel models[5];
    gsize n_train = s->train_length > 0 ? MIN (s->train_length, 256) : MAX (n / 2, 2);
    gsize n_max = MIN (MAX (n, 2 * n_train), 512);
    RpeExplorerSnapshot tmp;

    c->n_train = n_train;
    config.n_train = n_train;
    config.n_max = n_max;
    config.n_heads = p->n_heads;
    config.n_features = D;
    config.causal = s->causal;
    memset (models, 0, sizeof models);
    models[0].kind = RPE_CURVE_MODEL_APE;
    models[0].name = "ape";
    models[1].kind = RPE_CURVE_MODEL_SPE_EXACT;
    models[1].name = "spe_exact";
    models[1].spe = p;
    models[1].gated = s->gated;
    models[2].kind = RPE_CURVE_MODEL_SPE_ESTIMATE;
    models[2].name = "spe_estimate";
    models[2].spe = p;
    models[2].gated = s->gated;
    models[2].realizations = s->r;
    models[2].seed = s->seed;
    tmp = *s;
    tmp.train_length = n_train;
    lrpe_x = rpe_explorer_snapshot_new_lrpe (&tmp, D, &status);
    if (lrpe_x == NULL && tmp.lrpe_trained != NULL)
      {
        /* the table runs every model on the SPE module's D features: trained LRPE parameters of
         * another width cannot take part, the seeded choices stand in */
        tmp.lrpe_trained = NULL;
        lrpe_x = rpe_explorer_snapshot_new_lrpe (&tmp, D, &status);
      }
    if (lrpe_x == NULL)
      goto out;
    models[3].kind = RPE_CURVE_MODEL_LRPE;
    models[3].name = "lrpe";
    models[3].lrpe = lrpe_x;
    bias = rpe_alloc (2 * n_max - 1, sizeof (float), &status);
    if (bias == NULL)
      goto out;
    rpe_explorer_snapshot_fastrpb_weights (s, n_max, bias);
    models[4].kind = RPE_CURVE_MODEL_FASTRPB;
    models[4].name = "fastrpb";
    models[4].bias = bias;
    c->extrapolation = rpe_curve_extrapolation_table (&config, models, 5, s->head, &status, &sub);
    if (c->extrapolation == NULL)
      goto out;
  }
  rpe_monitor_progress (monitor, 1.0);

out:
  rpe_lrpe_free (lrpe);
  rpe_lrpe_free (lrpe_x);
  rpe_free (w);
  rpe_free (bias);
  if (status != RPE_OK)
    {
      rpe_curves_unref (c);
      return status;
    }
  *result = c;
  *result_free = (GDestroyNotify) rpe_curves_unref;
  return RPE_OK;
}

void
rpe_compute_curves_async (RpeExplorerSnapshot    *snapshot,
                          gsize                   n_cap,
                          RpeComputeProgressFunc  progress,
                          gpointer                progress_data,
                          GCancellable           *cancellable,
                          GAsyncReadyCallback     callback,
                          gpointer                user_data)
{
  Job *job;

  g_return_if_fail (snapshot != NULL);
  job = job_new (rpe_compute_curves_async, N_("the curves"), curves_run,
                 progress, progress_data, cancellable, callback, user_data);
  job->snapshot = rpe_explorer_snapshot_ref (snapshot);
  job->n_cap = MAX (n_cap, 2);
  job_start (job);
}

RpeCurves *
rpe_compute_curves_finish (GAsyncResult  *result,
                           GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == rpe_compute_curves_async, NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ------------------------------------------------------------ 2-D grid */

static void
grid_image_clear (gpointer data)
{
  RpeGridImage *img = data;

  rpe_free (img->lags);
  rpe_free (img->attention);
}

RpeGridImage *
rpe_grid_image_ref (RpeGridImage *image)
{
  return g_atomic_rc_box_acquire (image);
}

void
rpe_grid_image_unref (RpeGridImage *image)
{
  if (image != NULL)
    g_atomic_rc_box_release_full (image, grid_image_clear);
}

G_DEFINE_BOXED_TYPE (RpeGridImage, rpe_grid_image, rpe_grid_image_ref, rpe_grid_image_unref)

static RpeStatus
grid2d_run (Job               *job,
            const RpeMonitor  *monitor,
            gpointer          *result,
            GDestroyNotify    *result_free)
{
  const RpeExplorerSnapshot *s = job->snapshot;
  const RpeSpeParams *p = &s->conv2d;
  RpeExplorerSnapshot content = *s;
  gsize n1 = s->grid_n1, n2 = s->grid_n2, n, H, D, lw, all, qk, h;
  gsize qi, qj;
  float *lags = NULL, *q = NULL, *k = NULL;
  double *logits = NULL;
  RpeGridImage *img = NULL;
  RpeStatus status = RPE_OK;

  if (!s->have_conv2d)
    return RPE_ERROR_NOT_FOUND;
  if (n1 < 1 || n2 < 1 || n1 > RPE_EXPLORER_MAX_GRID || n2 > RPE_EXPLORER_MAX_GRID)
    return RPE_ERROR_INVALID_ARGUMENT;
  n = n1 * n2;
  H = p->n_heads;
  D = p->n_features;
  h = s->conv2d_head;
  lw = (2 * n1 - 1) * (2 * n2 - 1);
  if (!rpe_size_mul (lw, D, &all) || !rpe_size_mul (n, H * D, &qk))
    return RPE_ERROR_OVERFLOW;
  img = g_atomic_rc_box_new0 (RpeGridImage);
  img->serial = s->serial;
  img->n1 = n1;
  img->n2 = n2;
  img->head = h;
  img->feature = s->conv2d_feature;
  img->query = s->grid_query;
  img->gated = s->conv2d_gated;
  lags = rpe_alloc (all, sizeof (float), &status);
  if (lags != NULL)
    img->lags = rpe_alloc (lw, sizeof (float), &status);
  if (img->lags != NULL)
    img->attention = rpe_alloc (n, sizeof (float), &status);
  if (img->attention != NULL)
    q = rpe_alloc (qk, sizeof (float), &status);
  if (q != NULL)
    k = rpe_alloc (qk, sizeof (float), &status);
  if (k != NULL)
    logits = g_try_new (double, n);
  if (k != NULL && logits == NULL)
    status = RPE_ERROR_NO_MEMORY;
  if (status != RPE_OK)
    goto out;

  /* the template of every feature of the head, at every lag of the grid */
  for (gsize d = 0; d < D && status == RPE_OK; d++)
    {
      if (rpe_monitor_cancelled (monitor))
        {
          status = RPE_ERROR_CANCELLED;
          goto out;
        }
      status = rpe_conv_spe_2d_template_lags (p, h, d, n1, n2, img->gated, lags + d * lw);
      rpe_monitor_progress (monitor, 0.8 * (double) (d + 1) / (double) D);
    }
  if (status != RPE_OK)
    goto out;
  memcpy (img->lags, lags + img->feature * lw, lw * sizeof (float));

  /* the content of the 2-D module's shape (loaded content only when it has that shape) */
  if (s->content_heads != H || s->content_dim != D)
    content.npy_data = NULL;
  content.content_heads = H;
  content.content_dim = D;
  status = rpe_explorer_snapshot_fill_content (&content, n, q, k);
  if (status != RPE_OK)
    goto out;

  /* one query's exact attention over the grid */
  qi = img->query / n2;
  qj = img->query % n2;
  {
    const float *qv = q + (img->query * H + h) * D;
    double mx = -INFINITY, sum = 0;

    for (gsize t = 0; t < n; t++)
      {
        gsize ti = t / n2, tj = t % n2;
        gsize lag = (qi + n1 - 1 - ti) * (2 * n2 - 1) + (qj + n2 - 1 - tj);
        const float *kv = k + (t * H + h) * D;
        double acc = 0;

        for (gsize d = 0; d < D; d++)
          acc += (double) qv[d] * kv[d] * lags[d * lw + lag];
        logits[t] = acc / sqrt ((double) D);
        mx = fmax (mx, logits[t]);
      }
    for (gsize t = 0; t < n; t++)
      sum += exp (logits[t] - mx);
    for (gsize t = 0; t < n; t++)
      img->attention[t] = (float) (exp (logits[t] - mx) / sum);
  }
  rpe_monitor_progress (monitor, 1.0);

out:
  rpe_free (lags);
  rpe_free (q);
  rpe_free (k);
  g_free (logits);
  if (status != RPE_OK)
    {
      rpe_grid_image_unref (img);
      return status;
    }
  *result = img;
  *result_free = (GDestroyNotify) rpe_grid_image_unref;
  return RPE_OK;
}

void
rpe_compute_grid_async (RpeExplorerSnapshot *snapshot,
                        GCancellable        *cancellable,
                        GAsyncReadyCallback  callback,
                        gpointer             user_data)
{
  Job *job;

  g_return_if_fail (snapshot != NULL);
  job = job_new (rpe_compute_grid_async, N_("the 2-D grid"), grid2d_run, NULL, NULL, cancellable, callback, user_data);
  job->snapshot = rpe_explorer_snapshot_ref (snapshot);
  job_start (job);
}

RpeGridImage *
rpe_compute_grid_finish (GAsyncResult  *result,
                         GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == rpe_compute_grid_async, NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ------------------------------------------------------------- checkpoints */

static RpeStatus
checkpoint_run (Job               *job,
                const RpeMonitor  *monitor,
                gpointer          *result,
                GDestroyNotify    *result_free)
{
  RpeCheckpointData *c = g_atomic_rc_box_new0 (RpeCheckpointData);
  g_autofree char *base = g_path_get_basename (job->path);

  c->path = g_strdup (job->path);
  /* "demo:NAME" is a trained demo embedded in the program, unless a file has that name */
  c->set = rpe_demos_read_or_file (job->path, &job->error);
  if (c->set == NULL)
    goto fail;
  if (rpe_monitor_cancelled (monitor))
    {
      rpe_checkpoint_data_unref (c);
      return RPE_ERROR_CANCELLED;
    }
  /* the fingerprint a capture opened with it is checked against */
  c->print = rpe_model_print_new (c->set, job->path);
  c->modules = rpe_checkpoint_find_modules (c->set);
  c->lrpe_modules = rpe_checkpoint_find_lrpe_modules (c->set);
  c->fastrpb_modules = rpe_checkpoint_find_fastrpb_modules (c->set);
  if (c->modules == NULL)
    c->modules = g_ptr_array_new_with_free_func ((GDestroyNotify) rpe_spe_module_info_free);
  if (c->modules->len == 0)
    {
      if (rpe_tensor_set_size (c->set) > 0)
        {
          /* LRPE / FastRPB only, or nothing recognised (the tensor browser maps roles): the
           * SPE modules in use stay */
          *result = c;
          *result_free = (GDestroyNotify) rpe_checkpoint_data_unref;
          return RPE_OK;
        }
      job->error = g_error_new (RPE_ERROR, RPE_ERROR_NOT_FOUND,
                                _("“%s” holds no tensor"), base);
      goto fail;
    }
  for (guint i = 0; i < c->modules->len; i++)
    {
      const RpeSpeModuleInfo *info = g_ptr_array_index (c->modules, i);
      gboolean *have = info->method == RPE_SPE_SINE ? &c->have_sine : &c->have_conv;
      g_autoptr (GError) load_error = NULL;

      if (info->method == RPE_SPE_CONV && info->size2 > 0)
        {
          /* 2-D convSPE: its own slot (the grid window), never the 1-D conv module */
          if (!c->have_conv2d && rpe_checkpoint_load_spe (c->set, info->prefix, -1, &c->conv2d, &load_error))
            {
              c->have_conv2d = TRUE;
              c->conv2d_prefix = g_strdup (info->prefix);
            }
          else if (!c->have_conv2d && job->error == NULL)
            job->error = g_steal_pointer (&load_error);
          continue;
        }
      if (*have)
        continue;
      /* a module that cannot be loaded as found (ambiguous gates, bad shapes) is
       * left for the tensor browser, where it can be mapped; fail only if none loads */
      if (!rpe_checkpoint_load_spe (c->set, info->prefix, -1,
                                    info->method == RPE_SPE_SINE ? &c->sine : &c->conv, &load_error))
        {
          if (job->error == NULL)
            job->error = g_steal_pointer (&load_error);
          continue;
        }
      *have = TRUE;
      if (info->method == RPE_SPE_SINE)
        c->sine_prefix = g_strdup (info->prefix);
      else
        c->conv_prefix = g_strdup (info->prefix);
    }
  if (!c->have_sine && !c->have_conv && !c->have_conv2d)
    goto fail;
  g_clear_error (&job->error);
  *result = c;
  *result_free = (GDestroyNotify) rpe_checkpoint_data_unref;
  return RPE_OK;

fail:
  rpe_checkpoint_data_unref (c);
  return job->error != NULL && job->error->domain == RPE_ERROR ? (RpeStatus) job->error->code
                                                                : RPE_ERROR_IO;
}

void
rpe_compute_open_checkpoint_async (const char          *path,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  Job *job;

  g_return_if_fail (path != NULL);
  job = job_new (rpe_compute_open_checkpoint_async, N_("the checkpoint"), checkpoint_run,
                 NULL, NULL, cancellable, callback, user_data);
  job->path = g_strdup (path);
  job_start (job);
}

RpeCheckpointData *
rpe_compute_open_checkpoint_finish (GAsyncResult  *result,
                                    GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == rpe_compute_open_checkpoint_async, NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ---------------------------------------------------------------- slots */

void
rpe_job_slot_init (RpeJobSlot      *slot,
                   RpeJobStartFunc  start,
                   gpointer         owner)
{
  memset (slot, 0, sizeof *slot);
  slot->start = start;
  slot->owner = owner;
}

static void
slot_start (RpeJobSlot *slot)
{
  slot->pending = FALSE;
  slot->running = g_cancellable_new ();
  slot->start (slot->owner, slot->running);
}

void
rpe_job_slot_request (RpeJobSlot *slot)
{
  if (slot->running != NULL)
    {
      g_cancellable_cancel (slot->running);
      slot->pending = TRUE;
      return;
    }
  slot_start (slot);
}

void
rpe_job_slot_cancel (RpeJobSlot *slot)
{
  slot->pending = FALSE;
  if (slot->running != NULL)
    {
      g_cancellable_cancel (slot->running);
      g_clear_object (&slot->running);
    }
}

gboolean
rpe_job_slot_done (RpeJobSlot   *slot,
                   GAsyncResult *result)
{
  GCancellable *cancellable = g_task_get_cancellable (G_TASK (result));
  gboolean cancelled;

  if (slot->running == NULL || cancellable != slot->running)
    return FALSE;   /* a job the slot already forgot (cancelled by rpe_job_slot_cancel) */
  cancelled = g_cancellable_is_cancelled (cancellable);
  g_clear_object (&slot->running);
  if (slot->pending)
    {
      slot_start (slot);
      return FALSE;
    }
  return !cancelled;
}

gboolean
rpe_job_slot_busy (const RpeJobSlot *slot)
{
  return slot->running != NULL || slot->pending;
}

void
rpe_job_slot_clear (RpeJobSlot *slot)
{
  rpe_job_slot_cancel (slot);
  slot->start = NULL;
  slot->owner = NULL;
}

/* ------------------------------------------------------------------ sweeps */

static void
flag_raise (GCancellable *cancellable,
            gpointer      user_data)
{
  atomic_store ((atomic_int *) user_data, 1);
}

/* Runs a job's body on the calling thread (a worker of the caller's), with the same
 * cancellation and errors as job_worker. */
static gpointer
job_run_sync (JobRunFunc                 run,
              const char                *what,
              RpeExplorerSnapshot       *snapshot,
              gsize                      n_cap,
              const RpeAttentionRequest *request,   /* the attention map's; NULL: none */
              GCancellable              *cancellable,
              GError                   **error)
{
  Job job = { 0 };
  atomic_int cancel;
  RpeMonitor monitor = { &cancel, NULL, NULL };
  gpointer result = NULL;
  GDestroyNotify result_free = NULL;
  RpeStatus status;
  gulong handler = 0;

  atomic_init (&cancel, 0);
  job.what = what;
  job.snapshot = snapshot;
  job.n_cap = MAX (n_cap, 2);
  if (request != NULL)
    job.request = *request;
  if (cancellable != NULL)
    handler = g_cancellable_connect (cancellable, G_CALLBACK (flag_raise), &cancel, NULL);
  status = run (&job, &monitor, &result, &result_free);
  if (cancellable != NULL)
    g_cancellable_disconnect (cancellable, handler);
  if (status == RPE_OK)
    return result;
  if (job.error != NULL && status != RPE_ERROR_CANCELLED)
    g_propagate_error (error, g_steal_pointer (&job.error));
  else
    rpe_job_status_error (status, what, error);
  g_clear_error (&job.error);
  return NULL;
}

RpeCheckpointData *
rpe_compute_open_checkpoint (const char  *path,
                             GError     **error)
{
  Job job = { 0 };
  atomic_int cancel;
  RpeMonitor monitor = { &cancel, NULL, NULL };
  gpointer result = NULL;
  GDestroyNotify result_free = NULL;
  RpeStatus status;

  g_return_val_if_fail (path != NULL, NULL);
  atomic_init (&cancel, 0);
  job.what = N_("the checkpoint");
  job.path = g_strdup (path);
  status = checkpoint_run (&job, &monitor, &result, &result_free);
  g_free (job.path);
  if (status == RPE_OK)
    {
      g_clear_error (&job.error);   /* a note for a failure that did not happen */
      return result;
    }
  if (job.error != NULL)
    g_propagate_error (error, g_steal_pointer (&job.error));
  else
    rpe_job_status_error (status, job.what, error);
  return NULL;
}

RpeTemplates *
rpe_compute_template_grid (RpeExplorerSnapshot  *snapshot,
                           gsize                 n_cap,
                           GCancellable         *cancellable,
                           GError              **error)
{
  g_return_val_if_fail (snapshot != NULL, NULL);
  return job_run_sync (grid_run, N_("the templates"), snapshot, n_cap, NULL, cancellable, error);
}

RpeAttentionImage *
rpe_compute_attention (RpeExplorerSnapshot       *snapshot,
                       const RpeAttentionRequest *request,
                       GCancellable              *cancellable,
                       GError                   **error)
{
  g_return_val_if_fail (snapshot != NULL && request != NULL, NULL);
  return job_run_sync (attention_run, N_("the attention map"), snapshot, 0, request, cancellable, error);
}

RpeTeaching *
rpe_compute_teaching (RpeExplorerSnapshot  *snapshot,
                      gsize                 n_cap,
                      GCancellable         *cancellable,
                      GError              **error)
{
  g_return_val_if_fail (snapshot != NULL, NULL);
  return job_run_sync (teaching_run, N_("the SPE estimate"), snapshot, n_cap, NULL, cancellable, error);
}

/* ------------------------------------------------------------------- caps */

guint64
rpe_compute_job_bytes (RpeComputeJobKind          kind,
                       const RpeExplorerSnapshot *snapshot,
                       gsize                      n)
{
  guint64 cells = (guint64) n * n, d;

  g_return_val_if_fail (snapshot != NULL, G_MAXUINT64);
  d = MAX (snapshot->spe.n_features, 1);
  if (n > G_MAXUINT32)
    return G_MAXUINT64;
  switch (kind)
    {
    case RPE_COMPUTE_JOB_TEACHING:
      /* exact, estimate, difference; the three figures the view colours (4 bytes a cell each) */
      return cells * sizeof (float) * 6;
    case RPE_COMPUTE_JOB_TEMPLATE_GRID:
      /* D (N, N) templates, one empirical map, and the D figures the grid colours */
      if (cells > G_MAXUINT64 / (sizeof (float) * (2 * d + 1)))
        return G_MAXUINT64;
      return cells * sizeof (float) * (2 * d + 1);
    case RPE_COMPUTE_JOB_CURVES:
    default:
      /* profiles of 2N - 1 lags for a few series (the error and extrapolation parts are fixed) */
      return (guint64) (2 * n) * sizeof (double) * (d + 8);
    }
}

gboolean
rpe_compute_check_budget (RpeComputeJobKind          kind,
                          const RpeExplorerSnapshot *snapshot,
                          gsize                      n,
                          GError                   **error)
{
  guint64 bytes = rpe_compute_job_bytes (kind, snapshot, n);
  g_autofree char *need = NULL;
  g_autofree char *budget = NULL;

  if (bytes <= G_MAXSIZE && rpe_budget_check ((size_t) bytes) == RPE_OK)
    return TRUE;
  need = bytes == G_MAXUINT64 ? g_strdup (_("more than can be counted")) : g_format_size_full (bytes, G_FORMAT_SIZE_IEC_UNITS);
  budget = g_format_size_full (rpe_budget_get (), G_FORMAT_SIZE_IEC_UNITS);
  g_set_error (error, RPE_ERROR, RPE_ERROR_NO_MEMORY,
               _("Computing at N = %zu needs about %s, more than the memory budget of %s "
                 "(RPE_MEMORY_BUDGET)"), n, need, budget);
  return FALSE;
}

void
rpe_attention_figure_fill (RpeFigure                 *fig,
                           const RpeAttentionImage   *img,
                           const RpeExplorerSnapshot *s,
                           const RpeColormap         *cmap,
                           guint                      train,
                           RpeHeatmapTransform        transform,
                           double                     param,
                           char                      *strings[3],
                           gboolean                  *has_attention)
{
  RpeHeatmapData *d;
  gboolean whole = img->m0 == 0 && img->n0 == 0 && img->m1 == img->n && img->n1 == img->n;

  rpe_figure_init (fig, RPE_FIGURE_HEATMAP);
  d = &fig->heatmap;
  rpe_heatmap_data_init (d);
  d->values = img->values;
  d->rows = img->rows;
  d->cols = img->cols;
  /* the window [m0, m1) x [n0, n1) of the map, numbered by its absolute positions (a pixel
   * may stand for several positions) */
  d->row_origin = img->m0;
  d->row_positions = img->m1 - img->m0;
  d->col_origin = img->n0;
  d->col_positions = img->n1 - img->n0;
  d->colormap = cmap;
  d->reduce = img->reduce;
  d->equal_aspect = TRUE;
  d->scale = RPE_HEATMAP_SCALE_LINEAR;
  *has_attention = img->method != RPE_EXPLORER_METHOD_FASTRPB && img->method != RPE_EXPLORER_METHOD_LRPE;
  /* the SPE paper's transform maps attention weights only */
  d->transform = transform == RPE_HEATMAP_TRANSFORM_ATTENTION && !*has_attention ? RPE_HEATMAP_TRANSFORM_NONE
                                                                               : transform;
  d->transform_param = d->transform == transform ? param : 0.0;
  /* N_train where it falls in the window (a zoom elsewhere keeps no room for its label) */
  d->train_length = whole || (train > img->m0 && train < img->m1) || (train > img->n0 && train < img->n1) ? train : 0;
  strings[0] = strings[1] = NULL;
  /* a capture's tokens label the axes where their cells have room (the default labels say so) */
  {
    const RpeTensor *tokens = NULL;

    if (rpe_explorer_snapshot_captured (s, NULL, NULL, NULL, &tokens) && tokens != NULL)
      {
        d->tokens = tokens->data;
        d->n_tokens = tokens->n_elements;
      }
  }
  if (img->cols == img->n1 - img->n0)
    d->x_label = d->tokens != NULL ? NULL : _("key position n");
  else
    d->x_label = strings[0] = g_strdup_printf ("%s%s", _("key position n"), _(" (reduced to pixels)"));
  if (img->rows == img->m1 - img->m0)
    d->y_label = d->tokens != NULL ? NULL : _("query position m");
  else
    d->y_label = strings[1] = g_strdup_printf ("%s%s", _("query position m"), _(" (reduced to pixels)"));
  d->colorbar_label = _("attention weight");
  switch (img->method)
    {
    case RPE_EXPLORER_METHOD_SPE:
    case RPE_EXPLORER_METHOD_EXACT:
      strings[2] = rpe_figure_attention_title (s->spe_kind == RPE_SPE_SINE, s->gated,
                                               img->method == RPE_EXPLORER_METHOD_EXACT, img->head, s->r,
                                               img->causal);
      break;
    case RPE_EXPLORER_METHOD_APE:
    case RPE_EXPLORER_METHOD_LRPE:
    case RPE_EXPLORER_METHOD_FASTRPB:
      {
        /* which parameters: trained (and on a capture the trained model's own map) or seeded/edited */
        g_autofree char *what = rpe_compute_method_parameters (s, img->method);

        strings[2] = g_strdup_printf (_("%s attention, head %zu%s (%s)"), _(rpe_explorer_method_name (img->method)),
                                      img->head, img->causal ? _(", causal") : "", what);
      }
      break;
    case RPE_EXPLORER_METHOD_LINEAR:
    case RPE_EXPLORER_N_METHODS:
    default:
      strings[2] = g_strdup_printf (_("%s attention, head %zu%s"), _(rpe_explorer_method_name (img->method)), img->head,
                                    img->causal ? _(", causal") : "");
      break;
    }
  fig->title = strings[2];
}

/* ---- the Curves page's figure (shared by the window and `rpe export curves`) ---- */

static void
add_column_series (RpeCurveSeries      *series,
                   gsize               *n_series,
                   const RpeCurveTable *table,
                   const char          *x_name,
                   const char          *y_name,
                   const char          *label)
{
  long xi = rpe_curve_table_find (table, x_name);
  long yi = rpe_curve_table_find (table, y_name);
  RpeCurveSeries *s = &series[*n_series];

  if (xi < 0 || yi < 0)
    return;
  memset (s, 0, sizeof *s);
  s->x = rpe_curve_table_column_const (table, (gsize) xi);
  s->y = rpe_curve_table_column_const (table, (gsize) yi);
  s->n = rpe_curve_table_n_rows (table);
  s->label = label;
  (*n_series)++;
}

/* The page's four plots for c: plots[p] uses series[p * RPE_CURVES_MAX_SERIES ..];
 * ntrain labels the N_train marker.  Strings are static or ntrain. */
void
rpe_curves_fill_plots (RpeCurves      *c,
                       RpeCurvePlot    plots[4],
                       RpeCurveSeries *series,
                       const char     *ntrain)
{
  static const char *models[5][2] = {
    { "ape", "APE" }, { "spe_exact", N_("SPE, exact") }, { "spe_estimate", N_("SPE, estimate") },
    { "lrpe", "LRPE" }, { "fastrpb", "FastRPB" },
  };
  static const char *cols[2][5] = {
    { "ape_distance", "spe_exact_distance", "spe_estimate_distance", "lrpe_distance", "fastrpb_distance" },
    { "ape_ti", "spe_exact_ti", "spe_estimate_ti", "lrpe_ti", "fastrpb_ti" },
  };
  RpeCurveSeries *s;
  gsize n;

  /* profiles */
  s = series;
  n = 0;
  add_column_series (s, &n, c->profile, "tau", "spe_d", "SPE, " RPE_FIG_P_TILDE "<sub>d</sub>(τ)");
  add_column_series (s, &n, c->profile, "tau", "spe_mean", _("SPE, mean over d"));
  add_column_series (s, &n, c->profile, "tau", "lrpe", _("LRPE (unit content)"));
  add_column_series (s, &n, c->profile, "tau", "fastrpb", _("FastRPB, w<sub>τ</sub>"));
  rpe_curve_plot_init (&plots[0]);
  plots[0].series = s;
  plots[0].n_series = n;
  plots[0].title = _("Template profiles");
  plots[0].x_label = _("lag τ = m − n");
  plots[0].y_label = RPE_FIG_P_TILDE "(τ)";

  /* estimator error */
  s = series + RPE_CURVES_MAX_SERIES;
  n = 0;
  add_column_series (s, &n, c->error, "R", "mean", _("mean relative error"));
  if (n == 1)
    {
      long sd = rpe_curve_table_find (c->error, "sd");

      s[0].y_err = sd >= 0 ? rpe_curve_table_column_const (c->error, (gsize) sd) : NULL;
      s[0].marker = RPE_CURVE_MARKER_CIRCLE;
    }
  rpe_curve_plot_init (&plots[1]);
  plots[1].series = s;
  plots[1].n_series = n;
  plots[1].title = "Template error " RPE_FIG_TEMPLATE_ERROR;
  plots[1].x_label = _("realizations R");
  plots[1].y_label = _("relative error");
  plots[1].x_log = TRUE;
  plots[1].y_log = TRUE;

  /* extrapolation: attended distance and translation invariance */
  for (guint which = 0; which < 2; which++)
    {
      RpeCurvePlot *plot = &plots[2 + which];

      s = series + (2 + which) * RPE_CURVES_MAX_SERIES;
      n = 0;
      for (guint i = 0; i < 5; i++)
        add_column_series (s, &n, c->extrapolation, "m", cols[which][i], _(models[i][1]));
      rpe_curve_plot_init (plot);
      plot->series = s;
      plot->n_series = n;
      plot->title = which == 0 ? _("Extrapolation: mean attended distance") : _("Extrapolation: translation invariance (lower is better)");
      plot->x_label = _("query position m");
      plot->y_label = which == 0 ? RPE_FIG_SIGMA "<sub>n</sub> a(m, n) |m " RPE_FIG_MINUS " n|" : "TI(m)";
      plot->x_marker = (double) c->n_train;
      plot->x_marker_label = ntrain;
    }
}

RpeCurves *
rpe_compute_curves (RpeExplorerSnapshot  *snapshot,
                    gsize                 n_cap,
                    GCancellable         *cancellable,
                    GError              **error)
{
  g_return_val_if_fail (snapshot != NULL, NULL);
  return job_run_sync (curves_run, N_("the curves"), snapshot, MAX (n_cap, 2), NULL, cancellable, error);
}

void
rpe_curves_figure_fill (RpeFigure      *fig,
                        RpeCurves      *c,
                        guint           head,
                        RpeCurvePlot    plots[4],
                        RpeCurveSeries *series,
                        char           *strings[2])
{
  strings[0] = g_strdup_printf (RPE_FIG_N_TRAIN " = %zu", c->n_train);
  strings[1] = g_strdup_printf (_("Profiles, estimator error and extrapolation (head %u, %s = %zu)"),
                                head, RPE_FIG_N_TRAIN, c->n_train);
  rpe_figure_init (fig, RPE_FIGURE_CURVES);
  rpe_curves_fill_plots (c, plots, series, strings[0]);
  plots[0].legend = RPE_CURVE_LEGEND_BEST;
  fig->plots = plots;
  fig->n_plots = 4;
  fig->n_plot_columns = 2;
  fig->table = c->extrapolation;
  fig->title = strings[1];
}

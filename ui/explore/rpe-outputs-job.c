/* rpe-outputs-job.c: the Outputs view's computation on a worker. */
#include "config.h"

#include "rpe-outputs-job.h"

#include <string.h>

#include "rpe-alloc.h"
#include "rpe-error.h"
#include "rpe-job.h"
#include "rpe-npy.h"

#include <glib/gi18n.h>

/* ---------------------------------------------------------------- result */

static void
result_clear (gpointer data)
{
  RpeOutputsResult *r = data;

  rpe_outputs_clear (&r->outputs);
}

RpeOutputsResult *
rpe_outputs_result_ref (RpeOutputsResult *result)
{
  g_return_val_if_fail (result != NULL, NULL);
  return g_atomic_rc_box_acquire (result);
}

void
rpe_outputs_result_unref (RpeOutputsResult *result)
{
  if (result != NULL)
    g_atomic_rc_box_release_full (result, result_clear);
}

G_DEFINE_BOXED_TYPE (RpeOutputsResult, rpe_outputs_result, rpe_outputs_result_ref, rpe_outputs_result_unref)

const char *
rpe_feature_map_name (RpeFeatureMap map)
{
  switch (map)
    {
    case RPE_FEATURE_RELU:
      return "relu";
    case RPE_FEATURE_ELU1:
      return "elu1";
    case RPE_FEATURE_EXP:
      return "exp";
    case RPE_FEATURE_PERFORMER:
      return "performer";
    case RPE_FEATURE_DPFP:
      return "dpfp";
    default:
      return "?";
    }
}

/* ------------------------------------------------------------------- run */

/* V (N, Dv) for the request; *dv_out the channels. */
static float *
make_values (const RpeExplorerSnapshot *s,
             const RpeOutputsRequest   *req,
             gsize                     *dv_out,
             GError                   **error)
{
  gsize n = s->n, dv = req->dv, positions[RPE_OUTPUTS_MAX_POSITIONS];
  RpeStatus st = RPE_OK;
  float *v;
  const RpeTensor *cv = NULL;

  /* the captured values, when asked for: the model's own values of the head */
  if (req->captured)
    {
      if (!rpe_explorer_snapshot_captured (s, NULL, NULL, &cv, NULL) || cv == NULL)
        {
          rpe_set_error (error, RPE_ERROR_NOT_FOUND,
                         _("The content is not a captured layer with values: choose other values"));
          return NULL;
        }
      if (cv->ndim != 3 || cv->shape[1] != s->spe.n_heads || cv->shape[2] < 1
          || cv->shape[2] > RPE_OUTPUTS_MAX_CHANNELS)
        {
          g_autofree char *shape = rpe_tensor_shape_string (cv);

          rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                         _("The captured values of layer %u have shape %s; the module needs (N, %zu, Dv) with "
                           "1 <= Dv <= %d"),
                         s->capture_layer, shape, (size_t) s->spe.n_heads, RPE_OUTPUTS_MAX_CHANNELS);
          return NULL;
        }
      dv = cv->shape[2];
      v = rpe_alloc (n, dv * sizeof (float), &st);
      if (v != NULL)
        st = rpe_outputs_values_from_array (cv->data, cv->shape[0], cv->shape[1], dv, s->head, n, v);
      if (st != RPE_OK)
        {
          rpe_free (v);
          rpe_job_status_error (st, N_("the captured values"), error);
          return NULL;
        }
      *dv_out = dv;
      return v;
    }
  if (req->kind == RPE_VALUES_ARRAY)
    {
      g_autoptr (RpeTensor) t = NULL;
      gsize heads = 0;

      if (req->npy_path == NULL)
        {
          rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("No values file chosen"));
          return NULL;
        }
      t = rpe_npy_read (req->npy_path, error);
      if (t == NULL)
        return NULL;
      if (t->ndim == 3)
        {
          heads = t->shape[1];
          if (heads != s->spe.n_heads)
            {
              rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                             _("%s: values of shape (N, H, Dv) must have H = %zu (got %zu)"), req->npy_path,
                             (size_t) s->spe.n_heads, (size_t) heads);
              return NULL;
            }
        }
      else if (t->ndim != 2)
        {
          g_autofree char *shape = rpe_tensor_shape_string (t);

          rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                         _("%s: values must have shape (N, Dv) or (N, H, Dv), got %s"), req->npy_path, shape);
          return NULL;
        }
      dv = t->shape[t->ndim - 1];
      if (t->shape[0] == 0 || dv == 0 || dv > RPE_OUTPUTS_MAX_CHANNELS)
        {
          rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("%s: values need N >= 1 and 1 <= Dv <= %d"),
                         req->npy_path, RPE_OUTPUTS_MAX_CHANNELS);
          return NULL;
        }
      v = rpe_alloc (n, dv * sizeof (float), &st);
      if (v != NULL)
        st = rpe_outputs_values_from_array (t->data, t->shape[0], heads, dv, s->head, n, v);
      if (st != RPE_OK)
        {
          rpe_free (v);
          rpe_set_error (error, st, "%s: %s", req->npy_path,
                         st == RPE_ERROR_NOT_FINITE ? _("the values hold NaN or infinity") : rpe_status_to_string (st));
          return NULL;
        }
      *dv_out = dv;
      return v;
    }

  if (dv < 1 || dv > RPE_OUTPUTS_MAX_CHANNELS || req->n_positions > RPE_OUTPUTS_MAX_POSITIONS)
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("Channels must be between 1 and %d"),
                     RPE_OUTPUTS_MAX_CHANNELS);
      return NULL;
    }
  for (gsize i = 0; req->kind == RPE_VALUES_IMPULSE && i < req->n_positions; i++)
    {
      if (req->positions[i] >= n)
        {
          rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("Impulse position %zu is beyond the sequence (N = %zu)"),
                         (size_t) req->positions[i], (size_t) n);
          return NULL;
        }
      positions[i] = req->positions[i];
    }
  v = rpe_alloc (n, dv * sizeof (float), &st);
  if (v != NULL)
    st = rpe_outputs_values (req->kind, n, dv, positions, req->kind == RPE_VALUES_IMPULSE ? req->n_positions : 0,
                             s->seed, v);
  if (st != RPE_OK)
    {
      rpe_free (v);
      rpe_job_status_error (st, N_("the values"), error);
      return NULL;
    }
  *dv_out = dv;
  return v;
}

RpeOutputsResult *
rpe_outputs_run (const RpeExplorerSnapshot *s,
                 const RpeOutputsRequest   *req,
                 const RpeMonitor          *monitor,
                 GError                   **error)
{
  gint64 start = g_get_monotonic_time ();
  gsize H, D, n, dv = 0, all, count;
  float *qa = NULL, *ka = NULL, *q = NULL, *k = NULL, *v = NULL;
  RpeOutputsResult *result = NULL;
  RpeOutputsSpec spec = { 0 };
  RpeStatus st = RPE_OK;

  g_return_val_if_fail (s != NULL && req != NULL, NULL);
  if (!s->have_spe)
    {
      rpe_set_error (error, RPE_ERROR_NOT_FOUND, _("No SPE module to compute outputs with"));
      return NULL;
    }
  if (req->n_draws < 1 || (unsigned) req->compare >= RPE_OUTPUTS_N_COMPARES)
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("Invalid outputs request"));
      return NULL;
    }
  H = s->spe.n_heads;
  D = s->spe.n_features;
  n = s->n;
  v = make_values (s, req, &dv, error);
  if (v == NULL)
    return NULL;
  if (!rpe_size_mul (n, D, &count) || !rpe_size_mul (count, H, &all))
    st = RPE_ERROR_OVERFLOW;
  if (st == RPE_OK)
    qa = rpe_alloc (all, sizeof (float), &st);
  if (qa != NULL)
    ka = rpe_alloc (all, sizeof (float), &st);
  if (ka != NULL)
    q = rpe_alloc (count, sizeof (float), &st);
  if (q != NULL)
    k = rpe_alloc (count, sizeof (float), &st);
  if (k != NULL)
    {
      /* the content of the SPE module's shape (LRPE with trained parameters of another width
       * gives the snapshot another content shape, whose loaded content does not fit here) */
      RpeExplorerSnapshot spe_content = *s;

      if (s->content_heads != H || s->content_dim != D)
        {
          spe_content.content_heads = H;
          spe_content.content_dim = D;
          spe_content.npy_data = NULL;
        }
      st = rpe_explorer_snapshot_fill_content (&spe_content, n, qa, ka);
    }
  if (st != RPE_OK)
    {
      rpe_job_status_error (st, N_("the queries and keys"), error);
      goto out;
    }
  for (gsize m = 0; m < n; m++)
    {
      memcpy (q + m * D, qa + (m * H + s->head) * D, D * sizeof (float));
      memcpy (k + m * D, ka + (m * H + s->head) * D, D * sizeof (float));
    }
  g_clear_pointer (&qa, rpe_free);
  g_clear_pointer (&ka, rpe_free);

  spec.params = &s->spe;
  spec.head = s->head;
  spec.n = n;
  spec.r = s->r;
  spec.gated = s->gated && s->spe.gate != NULL;
  spec.causal = s->causal;
  spec.feature_map = s->feature_map;
  spec.compare = req->compare;
  spec.q = q;
  spec.k = k;
  spec.v = v;
  spec.dv = dv;

  result = g_atomic_rc_box_new0 (RpeOutputsResult);
  result->serial = s->serial;
  result->method = s->spe.method;
  result->feature_map = s->feature_map;
  st = rpe_outputs_compute (&spec, s->seed, req->n_draws, s->train_length, &result->outputs, monitor);
  if (st != RPE_OK)
    {
      rpe_job_status_error (st, N_("the outputs"), error);
      g_clear_pointer (&result, rpe_outputs_result_unref);
      goto out;
    }
  result->seconds = (g_get_monotonic_time () - start) / 1e6;

out:
  rpe_free (qa);
  rpe_free (ka);
  rpe_free (q);
  rpe_free (k);
  rpe_free (v);
  return result;
}

/* ------------------------------------------------------------------- job */

typedef struct
{
  RpeJobMonitor          *monitor;       /* cancel flag, progress, the jobs-alive count */
  RpeExplorerSnapshot    *snapshot;
  RpeOutputsRequest       request;
  char                   *npy_path;
} Job;

static void
job_free (gpointer data)
{
  Job *job = data;

  g_clear_pointer (&job->snapshot, rpe_explorer_snapshot_unref);
  g_free (job->npy_path);
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
  RpeOutputsResult *result;

  result = rpe_outputs_run (job->snapshot, &job->request, monitor, &error);
  rpe_job_monitor_end (job->monitor);
  if (result != NULL)
    g_task_return_pointer (task, result, (GDestroyNotify) rpe_outputs_result_unref);
  else
    g_task_return_error (task, error);
}

void
rpe_compute_outputs_async (RpeExplorerSnapshot     *snapshot,
                           const RpeOutputsRequest *request,
                           RpeComputeProgressFunc   progress,
                           gpointer                 progress_data,
                           GCancellable            *cancellable,
                           GAsyncReadyCallback      callback,
                           gpointer                 user_data)
{
  GTask *task;
  Job *job;

  g_return_if_fail (snapshot != NULL && request != NULL);
  task = g_task_new (NULL, cancellable, callback, user_data);
  job = g_new0 (Job, 1);
  g_task_set_source_tag (task, rpe_compute_outputs_async);
  g_task_set_name (task, "the outputs");
  g_task_set_return_on_cancel (task, FALSE);
  job->monitor = rpe_job_monitor_new (task, progress, progress_data);
  job->snapshot = rpe_explorer_snapshot_ref (snapshot);
  job->request = *request;
  job->npy_path = g_strdup (request->npy_path);
  job->request.npy_path = job->npy_path;
  g_task_set_task_data (task, job, job_free);
  g_task_run_in_thread (task, job_worker);
  g_object_unref (task);
}

RpeOutputsResult *
rpe_compute_outputs_finish (GAsyncResult  *result,
                            GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == rpe_compute_outputs_async, NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

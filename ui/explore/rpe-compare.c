/* rpe-compare.c: Compare (A | B | A - B) and Overview (every layer and head) on workers. */
#include "config.h"

#include "rpe-compare.h"

#include <math.h>
#include <string.h>

#include "rpe-alloc.h"
#include "rpe-checkpoint.h"
#include "rpe-demos.h"
#include "rpe-error.h"
#include "rpe-job.h"

const char *
rpe_compare_mode_name (RpeCompareMode mode)
{
  static const char *names[] = { "off", "pinned", "head", "layer", "method", "checkpoint", "capture" };

  return (guint) mode < G_N_ELEMENTS (names) ? names[mode] : "?";
}

/* ------------------------------------------------------------------ sides */

void
rpe_compare_side_init (RpeCompareSide            *side,
                       const RpeExplorerSnapshot *snapshot)
{
  memset (side, 0, sizeof *side);
  side->snapshot = rpe_explorer_snapshot_ref ((RpeExplorerSnapshot *) snapshot);
  side->layer = -1;
  side->spe_kind = -1;
  side->head = -1;
  side->method = -1;
  side->capture_layer = -1;
}

void
rpe_compare_side_clear (RpeCompareSide *side)
{
  g_clear_pointer (&side->snapshot, rpe_explorer_snapshot_unref);
  g_clear_pointer (&side->checkpoint, g_free);
  g_clear_pointer (&side->label, g_free);
  g_clear_pointer (&side->capture, rpe_explorer_capture_unref);
  g_clear_pointer (&side->model_print, rpe_model_print_unref);
}

void
rpe_compare_side_copy (RpeCompareSide       *dest,
                       const RpeCompareSide *src)
{
  *dest = *src;
  dest->snapshot = rpe_explorer_snapshot_ref (src->snapshot);
  dest->checkpoint = g_strdup (src->checkpoint);
  dest->label = g_strdup (src->label);
  dest->capture = src->capture != NULL ? rpe_explorer_capture_ref (src->capture) : NULL;
  dest->model_print = src->model_print != NULL ? rpe_model_print_ref (src->model_print) : NULL;
}

RpeTensorSet *
rpe_compare_read_checkpoint (const char  *path,
                             GError     **error)
{
  return rpe_demos_read_or_file (path, error);
}

static gboolean
load_params (const RpeTensorSet *set,
             const char         *path,
             int                 kind,
             int                 layer,
             gboolean            no_gate,
             RpeSpeParams       *params,
             GError            **error)
{
  RpeSpeSelection sel = RPE_SPE_SELECTION_INIT;
  g_autofree char *note = NULL;

  sel.method = kind;
  sel.layer = layer;
  sel.no_gate = no_gate;
  if (!rpe_checkpoint_load_spe_full (set, &sel, params, &note, error))
    {
      g_prefix_error (error, "%s: ", path);
      return FALSE;
    }
  return TRUE;
}

/* Whether method draws a checkpoint's trained modules' model (rpe-explorer-trained.h): a
 * window-drawn method with a trained set held (its (H, D) is the content's). */
static gboolean
trained_model (const RpeExplorerSnapshot *s, RpeExplorerMethod method)
{
  return s->trained != NULL
         && (method == RPE_EXPLORER_METHOD_APE || method == RPE_EXPLORER_METHOD_LRPE
             || method == RPE_EXPLORER_METHOD_FASTRPB)
         && s->content_heads == s->trained->heads && s->content_dim == s->trained->dim;
}

/* The snapshot the side computes from (a new reference). */
static RpeExplorerSnapshot *
side_snapshot (const RpeCompareSide *side,
               const RpeTensorSet   *set,
               int                   layer,
               GError              **error)
{
  RpeExplorerSnapshot *s;
  int kind = side->spe_kind >= 0 ? side->spe_kind : (int) side->snapshot->spe_kind;
  gboolean             trained;

  if (set != NULL)
    {
      RpeSpeParams params = { 0 };

      /* another model that has only the other kind of SPE module: that one (its caption says which) */
      if (side->spe_kind < 0 && !load_params (set, side->checkpoint, kind, layer, side->no_gate, &params, NULL))
        kind = -1;
      rpe_spe_params_clear (&params);
      if (!load_params (set, side->checkpoint, kind, layer, side->no_gate, &params, error))
        return NULL;
      s = rpe_explorer_snapshot_copy (side->snapshot, &params);
      rpe_spe_params_clear (&params);
    }
  else
    s = rpe_explorer_snapshot_copy (side->snapshot, NULL);
  if (side->method >= 0 && side->method < RPE_EXPLORER_N_METHODS)
    s->method = (RpeExplorerMethod) side->method;
  /* a checkpoint's trained modules (FastRPB, learned APE, LRPE) need no SPE module: their heads
   * are the trained model's, their layer picks the FastRPB bias */
  trained = trained_model (s, s->method);
  if (!s->have_spe && !trained)
    {
      rpe_explorer_snapshot_unref (s);
      g_set_error (error, RPE_ERROR, RPE_ERROR_NOT_FOUND, "no SPE module to compare");
      return NULL;
    }
  if (side->head >= 0)
    {
      gsize H = trained ? s->content_heads : s->spe.n_heads;

      if ((gsize) side->head >= H)
        {
          g_set_error (error, RPE_ERROR, RPE_ERROR_INVALID_ARGUMENT, "head %zd is out of range (H = %zu)", side->head,
                       H);
          rpe_explorer_snapshot_unref (s);
          return NULL;
        }
      s->head = (gsize) side->head;
      s->content_head = MIN (s->head, MAX (s->content_heads, 1) - 1);
    }
  if (trained && layer >= 0)
    s->layer = (guint) layer;
  /* captured content: the capture's own layer where it has one */
  if (layer >= 0 && s->capture != NULL && rpe_capture_has_layer (s->capture, (guint) layer))
    s->capture_layer = (guint) layer;
  return s;
}

static char *
side_caption (const RpeCompareSide      *side,
              const RpeExplorerSnapshot *s,
              RpeCompareWhat             what,
              int                        layer)
{
  static const char *kinds[] = { "analytic", "empirical", "empirical − analytic" };
  GString *c = g_string_new (NULL);

  if (side->label != NULL)
    g_string_append_printf (c, "%s, ", side->label);
  if (side->checkpoint != NULL)
    {
      g_autofree char *base = g_path_get_basename (side->checkpoint);

      g_string_append_printf (c, "%s, ", base);
    }
  if (layer >= 0)
    g_string_append_printf (c, "layer %d, ", layer);
  g_string_append_printf (c, "head %zu, %s SPE%s", s->head, s->spe_kind == RPE_SPE_SINE ? "sine" : "conv",
                          s->gated ? " gated" : "");
  if (what == RPE_COMPARE_ATTENTION && rpe_explorer_snapshot_captured (s, NULL, NULL, NULL, NULL))
    g_string_append_printf (c, ", on %s layer %u", rpe_capture_name (s->capture), s->capture_layer);
  if (what == RPE_COMPARE_TEMPLATES)
    g_string_append_printf (c, ", d = %zu, %s", s->feature, kinds[MIN ((guint) s->template_kind, 2)]);
  else
    {
      g_string_append_printf (c, ", %s", rpe_explorer_method_name (s->method));
      if (s->method == RPE_EXPLORER_METHOD_SPE || s->method == RPE_EXPLORER_METHOD_LINEAR)
        g_string_append_printf (c, ", R = %zu", s->r);
      if (s->causal)
        g_string_append (c, ", causal");
    }
  return g_string_free (c, FALSE);
}

/* The map of snapshot s (what) into a new buffer. */
static gboolean
snapshot_map (RpeExplorerSnapshot *s,
              RpeCompareWhat       what,
              gsize                n_cap,
              gsize                max_side,
              GCancellable        *cancellable,
              float              **values,
              gsize               *rows,
              gsize               *cols,
              gsize               *n,
              GError             **error)
{
  RpeStatus status = RPE_OK;

  if (what == RPE_COMPARE_TEMPLATES)
    {
      g_autoptr (RpeTemplates) t = rpe_compute_template_grid (s, n_cap, cancellable, error);
      const float *src;

      if (t == NULL)
        return FALSE;
      src = rpe_templates_get_feature (t, MIN (s->feature, t->n_features - 1));
      *values = rpe_alloc (t->n * t->n, sizeof (float), &status);
      if (*values == NULL)
        return rpe_set_error (error, status, "no memory for the template");
      memcpy (*values, src, t->n * t->n * sizeof (float));
      *rows = *cols = *n = t->n;
      return TRUE;
    }
  else
    {
      RpeAttentionRequest req = { 0 };
      g_autoptr (RpeAttentionImage) img = NULL;

      req.max_rows = req.max_cols = max_side > 0 ? max_side : s->n;
      req.reduce = RPE_HEATMAP_REDUCE_MEAN;
      img = rpe_compute_attention (s, &req, cancellable, error);
      if (img == NULL)
        return FALSE;
      *values = rpe_alloc (img->rows * img->cols, sizeof (float), &status);
      if (*values == NULL)
        return rpe_set_error (error, status, "no memory for the attention map");
      memcpy (*values, img->values, img->rows * img->cols * sizeof (float));
      *rows = img->rows;
      *cols = img->cols;
      *n = img->n;
      return TRUE;
    }
}

gboolean
rpe_compare_side_compute (const RpeCompareSide *side,
                          RpeCompareWhat        what,
                          gsize                 n_cap,
                          gsize                 max_side,
                          GCancellable         *cancellable,
                          float               **values,
                          gsize                *rows,
                          gsize                *cols,
                          gsize                *n,
                          char                **caption,
                          GError              **error)
{
  g_autoptr (RpeTensorSet) set = NULL;
  g_autoptr (RpeExplorerSnapshot) s = NULL;

  g_return_val_if_fail (side != NULL && side->snapshot != NULL, FALSE);
  *values = NULL;
  if (side->checkpoint != NULL)
    {
      set = rpe_compare_read_checkpoint (side->checkpoint, error);
      if (set == NULL)
        return FALSE;
    }
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;
  s = side_snapshot (side, set, side->layer, error);
  if (s == NULL)
    return FALSE;
  if (side->capture != NULL)
    {
      /* another capture: checked against the side's model and module as the state checks its own */
      g_autoptr (RpeModelPrint) print = NULL;
      const RpeCapture    *cap = side->capture->capture;
      guint                layer = side->capture_layer >= 0 ? (guint) side->capture_layer
                                   : side->layer >= 0 && rpe_capture_has_layer (cap, (guint) side->layer) ? (guint) side->layer
                                                                                                          : rpe_capture_layer (cap, 0);
      RpeExplorerSnapshot *with;

      if (set != NULL)
        print = rpe_model_print_new (set, side->checkpoint);
      else if (side->model_print != NULL)
        print = rpe_model_print_ref (side->model_print);
      if (!rpe_explorer_capture_check_trained (side->capture, layer, print, s->have_spe ? &s->spe : NULL,
                                               trained_model (s, s->method) ? s->trained : NULL, error))
        return FALSE;
      with = rpe_explorer_snapshot_with_capture (s, side->capture, layer);
      rpe_explorer_snapshot_unref (s);
      s = with;
    }
  else if (set != NULL && s->content == RPE_CONTENT_CAPTURE && s->capture != NULL)
    {
      /* the snapshot's capture under another checkpoint's module: it must be that model's too */
      g_autoptr (RpeModelPrint) print = rpe_model_print_new (set, side->checkpoint);

      if (!rpe_capture_check_model (s->capture, print, NULL, error))
        return FALSE;
      if (!rpe_explorer_snapshot_captured (s, NULL, NULL, NULL, NULL))
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                              "%s, layer %u does not fit the module of %s (H = %zu heads of D = %zu features)",
                              rpe_capture_name (s->capture), s->capture_layer, side->checkpoint,
                              (size_t) s->spe.n_heads, (size_t) s->spe.n_features);
    }
  if (!snapshot_map (s, what, n_cap, max_side, cancellable, values, rows, cols, n, error))
    return FALSE;
  if (caption != NULL)
    *caption = side_caption (side, s, what, side->checkpoint != NULL ? side->layer : -1);
  return TRUE;
}

/* ------------------------------------------------------------- comparison */

static void
comparison_clear (gpointer data)
{
  RpeComparison *c = data;

  for (guint i = 0; i < 3; i++)
    rpe_free (c->values[i]);
  g_free (c->caption[0]);
  g_free (c->caption[1]);
}

RpeComparison *
rpe_comparison_ref (RpeComparison *comparison)
{
  return g_atomic_rc_box_acquire (comparison);
}

void
rpe_comparison_unref (RpeComparison *comparison)
{
  if (comparison != NULL)
    g_atomic_rc_box_release_full (comparison, comparison_clear);
}

G_DEFINE_BOXED_TYPE (RpeComparison, rpe_comparison, rpe_comparison_ref, rpe_comparison_unref)

static RpeComparison *
compare_run (const RpeCompareSide   *a,
             const RpeCompareSide   *b,
             RpeCompareWhat          what,
             gsize                   n_cap,
             gsize                   max_side,
             void                  (*half_done) (gpointer),
             gpointer                half_data,
             GCancellable           *cancellable,
             GError                **error)
{
  RpeComparison *c = g_atomic_rc_box_new0 (RpeComparison);
  gsize rows_b = 0, cols_b = 0, n_b = 0, count;
  double lo = INFINITY, hi = -INFINITY, dmax = 0.0;
  RpeStatus status = RPE_OK;

  c->what = what;
  if (!rpe_compare_side_compute (a, what, n_cap, max_side, cancellable, &c->values[0], &c->rows, &c->cols, &c->n,
                                 &c->caption[0], error))
    goto fail;
  if (half_done != NULL)
    half_done (half_data);
  if (!rpe_compare_side_compute (b, what, n_cap, max_side, cancellable, &c->values[1], &rows_b, &cols_b, &n_b,
                                 &c->caption[1], error))
    goto fail;
  if (rows_b != c->rows || cols_b != c->cols || n_b != c->n)
    {
      g_set_error (error, RPE_ERROR, RPE_ERROR_INVALID_ARGUMENT,
                   "A and B have different sizes (%zu x %zu and %zu x %zu)", c->rows, c->cols, rows_b, cols_b);
      goto fail;
    }
  count = c->rows * c->cols;
  c->values[2] = rpe_alloc (count, sizeof (float), &status);
  if (c->values[2] == NULL)
    {
      rpe_set_error (error, status, "no memory for A - B");
      goto fail;
    }
  for (gsize i = 0; i < count; i++)
    {
      float va = c->values[0][i], vb = c->values[1][i];

      c->values[2][i] = va - vb;
      if (isfinite (va))
        lo = fmin (lo, va), hi = fmax (hi, va);
      if (isfinite (vb))
        lo = fmin (lo, vb), hi = fmax (hi, vb);
      if (isfinite (c->values[2][i]))
        dmax = fmax (dmax, fabs (c->values[2][i]));
    }
  c->vmin = lo <= hi ? lo : 0.0;
  c->vmax = lo <= hi ? hi : 0.0;
  c->dmax = dmax;
  return c;

fail:
  rpe_comparison_unref (c);
  return NULL;
}

RpeComparison *
rpe_compare_compute (const RpeCompareSide  *a,
                     const RpeCompareSide  *b,
                     RpeCompareWhat         what,
                     gsize                  n_cap,
                     gsize                  max_side,
                     GCancellable          *cancellable,
                     GError               **error)
{
  g_return_val_if_fail (a != NULL && b != NULL, NULL);
  return compare_run (a, b, what, n_cap, max_side, NULL, NULL, cancellable, error);
}

typedef struct
{
  RpeCompareSide          a, b;
  RpeCompareWhat          what;
  gsize                   n_cap, max_side;
  guint64                 serial;
  GMainContext           *context;
  GTask                  *task;
  RpeJobMonitor          *monitor;      /* counts the job in rpe_compute_jobs_alive; progress */
  const RpeMonitor       *core;         /* on the worker, between begin and end */
  /* overview */
  RpeOverview            *overview;
  RpeOverviewCellFunc     cell_func;
  gpointer                cell_data;
} CompareJob;

static void
compare_job_free (gpointer data)
{
  CompareJob *job = data;

  rpe_compare_side_clear (&job->a);
  rpe_compare_side_clear (&job->b);
  g_clear_pointer (&job->context, g_main_context_unref);
  g_clear_pointer (&job->overview, rpe_overview_unref);
  rpe_job_monitor_free (job->monitor);
  g_free (job);
}

/* Main thread: cell i is in values; widen the range. */
static void
overview_mark_done (RpeOverview *ov,
                    gsize        i)
{
  const float *cell = ov->values + i * ov->rows * ov->cols;
  double lo = INFINITY, hi = -INFINITY;

  for (gsize k = 0; k < ov->rows * ov->cols; k++)
    if (isfinite (cell[k]))
      lo = fmin (lo, cell[k]), hi = fmax (hi, cell[k]);
  ov->done[i] = TRUE;
  ov->n_done++;
  if (lo > hi)
    return;
  ov->vmin = ov->n_done == 1 ? lo : fmin (ov->vmin, lo);
  ov->vmax = ov->n_done == 1 ? hi : fmax (ov->vmax, hi);
}

typedef struct
{
  GTask  *task;
  gsize   index;    /* overview cell */
} JobEvent;

static gboolean
job_event_dispatch (gpointer data)
{
  JobEvent *event = data;
  CompareJob *job = g_task_get_task_data (event->task);
  GCancellable *cancellable = g_task_get_cancellable (event->task);

  if (g_task_get_completed (event->task) || (cancellable != NULL && g_cancellable_is_cancelled (cancellable)))
    return G_SOURCE_REMOVE;
  if (job->cell_func != NULL && job->overview != NULL)
    {
      RpeOverview *ov = job->overview;
      gsize i = event->index;

      if (!ov->done[i])
        overview_mark_done (ov, i);
      job->cell_func (ov, i, job->cell_data);
    }
  return G_SOURCE_REMOVE;
}

static void
job_event_free (gpointer data)
{
  JobEvent *event = data;

  g_object_unref (event->task);
  g_free (event);
}

static void
post_event (CompareJob *job,
            gsize       index)
{
  JobEvent *event = g_new (JobEvent, 1);
  GSource *source = g_idle_source_new ();

  event->task = g_object_ref (job->task);
  event->index = index;
  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_callback (source, job_event_dispatch, event, job_event_free);
  g_source_attach (source, job->context);
  g_source_unref (source);
}

static void
half_done (gpointer data)
{
  CompareJob *job = data;

  rpe_monitor_progress (job->core, 0.5);
}

static void
compare_worker (GTask        *task,
                gpointer      source_object,
                gpointer      task_data,
                GCancellable *cancellable)
{
  CompareJob *job = task_data;
  GError *error = NULL;
  RpeComparison *c;

  job->core = rpe_job_monitor_begin (job->monitor);
  c = compare_run (&job->a, &job->b, job->what, job->n_cap, job->max_side, half_done, job, cancellable, &error);
  rpe_job_monitor_end (job->monitor);

  if (c == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  c->serial = job->serial;
  g_task_return_pointer (task, c, (GDestroyNotify) rpe_comparison_unref);
}

static CompareJob *
compare_job_new (gpointer                tag,
                 RpeComputeProgressFunc  progress,
                 gpointer                progress_data,
                 GCancellable           *cancellable,
                 GAsyncReadyCallback     callback,
                 gpointer                user_data)
{
  CompareJob *job = g_new0 (CompareJob, 1);

  job->task = g_task_new (NULL, cancellable, callback, user_data);
  job->monitor = rpe_job_monitor_new (job->task, progress, progress_data);
  g_task_set_source_tag (job->task, tag);
  g_task_set_return_on_cancel (job->task, FALSE);
  job->context = g_main_context_ref (g_task_get_context (job->task));
  g_task_set_task_data (job->task, job, compare_job_free);
  return job;
}

void
rpe_compare_compute_async (const RpeCompareSide   *a,
                           const RpeCompareSide   *b,
                           RpeCompareWhat          what,
                           gsize                   n_cap,
                           gsize                   max_side,
                           guint64                 serial,
                           RpeComputeProgressFunc  progress,
                           gpointer                progress_data,
                           GCancellable           *cancellable,
                           GAsyncReadyCallback     callback,
                           gpointer                user_data)
{
  CompareJob *job;
  GTask *task;

  g_return_if_fail (a != NULL && b != NULL);
  job = compare_job_new (rpe_compare_compute_async, progress, progress_data, cancellable, callback, user_data);
  task = job->task;
  rpe_compare_side_copy (&job->a, a);
  rpe_compare_side_copy (&job->b, b);
  job->what = what;
  job->n_cap = n_cap;
  job->max_side = max_side;
  job->serial = serial;
  g_task_run_in_thread (task, compare_worker);
  g_object_unref (task);
}

RpeComparison *
rpe_compare_compute_finish (GAsyncResult  *result,
                            GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* --------------------------------------------------------------- overview */

static void
overview_clear (gpointer data)
{
  RpeOverview *ov = data;

  g_free (ov->layers);
  rpe_free (ov->values);
  g_free (ov->done);
  g_free (ov->caption);
}

RpeOverview *
rpe_overview_ref (RpeOverview *overview)
{
  return g_atomic_rc_box_acquire (overview);
}

void
rpe_overview_unref (RpeOverview *overview)
{
  if (overview != NULL)
    g_atomic_rc_box_release_full (overview, overview_clear);
}

G_DEFINE_BOXED_TYPE (RpeOverview, rpe_overview, rpe_overview_ref, rpe_overview_unref)

/* The overview's shape (layers of the module, heads); values are allocated by the first cell. */
static RpeOverview *
overview_new (const RpeCompareSide *base,
              RpeCompareWhat        what,
              RpeTensorSet        **set_out,
              GError              **error)
{
  RpeOverview *ov = g_atomic_rc_box_new0 (RpeOverview);
  g_autoptr (RpeTensorSet) set = NULL;
  int kind = base->spe_kind >= 0 ? base->spe_kind : (int) base->snapshot->spe_kind;
  const RpeExplorerSnapshot *s = base->snapshot;
  GString *caption = g_string_new (NULL);

  ov->what = what;
  ov->n_layers = 1;
  ov->layers = g_new (int, 1);
  ov->layers[0] = -1;
  ov->n_heads = s->have_spe ? s->spe.n_heads : 0;
  if (trained_model (s, base->method >= 0 ? (RpeExplorerMethod) base->method : s->method))
    {
      /* the trained model: its heads; the layers of its FastRPB biases, else of the capture */
      const RpeExplorerTrained *t = s->trained;
      gboolean                  fastrpb =
        (base->method >= 0 ? base->method : (gssize) s->method) == RPE_EXPLORER_METHOD_FASTRPB && s->fastrpb_trained;
      guint count = fastrpb ? t->n_fastrpb : s->capture != NULL ? rpe_capture_n_layers (s->capture) : 0;

      ov->n_heads = s->content_heads;
      if (count > 0)
        {
          ov->n_layers = count;
          g_free (ov->layers);
          ov->layers = g_new (int, count);
          for (guint l = 0; l < count; l++)
            ov->layers[l] = fastrpb
                              ? (t->fastrpb[l].layer == RPE_EXPLORER_TRAINED_NO_LAYER ? -1 : (int) t->fastrpb[l].layer)
                              : (int) rpe_capture_layer (s->capture, l);
        }
      g_string_append_printf (caption, "%s: ", t->source);
    }
  else if (base->checkpoint != NULL)
    {
      g_autoptr (GPtrArray) modules = NULL;
      g_autofree char *bname = g_path_get_basename (base->checkpoint);

      set = rpe_compare_read_checkpoint (base->checkpoint, error);
      if (set == NULL)
        goto fail;
      modules = rpe_checkpoint_find_modules (set);
      for (guint i = 0; modules != NULL && i < modules->len; i++)
        {
          const RpeSpeModuleInfo *info = g_ptr_array_index (modules, i);

          if ((int) info->method != kind)
            continue;
          ov->n_heads = info->n_heads;
          if (info->layers != NULL && info->layers->len > 0)
            {
              ov->n_layers = info->layers->len;
              g_free (ov->layers);
              ov->layers = g_new (int, ov->n_layers);
              for (guint l = 0; l < info->layers->len; l++)
                ov->layers[l] = g_array_index (info->layers, int, l);
            }
          g_string_append_printf (caption, "%s, module %s: ", bname, info->prefix);
          break;
        }
    }
  if (ov->n_heads == 0)
    {
      g_set_error (error, RPE_ERROR, RPE_ERROR_NOT_FOUND, "no SPE module of that kind to show");
      goto fail;
    }
  ov->done = g_new0 (gboolean, ov->n_layers * ov->n_heads);
  if (what == RPE_COMPARE_TEMPLATES)
    g_string_append_printf (caption, "template of feature d = %zu of every layer and head", s->feature);
  else
    g_string_append_printf (caption, "%s attention of every layer and head",
                            rpe_explorer_method_name (s->method));
  ov->caption = g_string_free (caption, FALSE);
  *set_out = g_steal_pointer (&set);
  return ov;

fail:
  g_string_free (caption, TRUE);
  rpe_overview_unref (ov);
  return NULL;
}

static gboolean
overview_run (RpeOverview          *ov,
              const RpeCompareSide *base,
              const RpeTensorSet   *set,
              gsize                 n_cap,
              gsize                 max_side,
              CompareJob           *job,
              GCancellable         *cancellable,
              GError              **error)
{
  RpeStatus status = RPE_OK;

  for (gsize l = 0; l < ov->n_layers; l++)
    for (gsize h = 0; h < ov->n_heads; h++)
      {
        RpeCompareSide side;
        g_autoptr (RpeExplorerSnapshot) s = NULL;
        float *values = NULL;
        gsize rows, cols, n, index = l * ov->n_heads + h;
        gboolean ok;

        if (g_cancellable_set_error_if_cancelled (cancellable, error))
          return FALSE;
        rpe_compare_side_copy (&side, base);
        side.head = (gssize) h;
        s = side_snapshot (&side, set, ov->layers[l], error);
        rpe_compare_side_clear (&side);
        if (s == NULL)
          return FALSE;
        ok = snapshot_map (s, ov->what, n_cap, max_side, cancellable, &values, &rows, &cols, &n, error);
        if (!ok)
          return FALSE;
        if (ov->values == NULL)
          {
            gsize count;

            ov->rows = rows;
            ov->cols = cols;
            ov->n = n;
            if ((status = rpe_size_bytes (&count, 1, ov->n_layers, ov->n_heads, rows, cols)) == RPE_OK)
              ov->values = rpe_alloc0 (count, sizeof (float), &status);
            if (ov->values == NULL)
              {
                g_autofree char *limit = rpe_memory_limit_text (status);

                rpe_free (values);
                return rpe_set_error (error, status == RPE_ERROR_OVERFLOW ? RPE_ERROR_NO_MEMORY : status,
                                      "the overview of %zu layers x %zu heads of %zu x %zu cells needs more "
                                      "than %s", (size_t) ov->n_layers, (size_t) ov->n_heads, (size_t) rows,
                                      (size_t) cols, limit);
              }
          }
        if (rows != ov->rows || cols != ov->cols)
          {
            rpe_free (values);
            return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, "the cells differ in size");
          }
        memcpy (ov->values + index * rows * cols, values, rows * cols * sizeof (float));
        rpe_free (values);
        if (job != NULL)
          post_event (job, index);
        else
          {
            ov->done[index] = TRUE;
            ov->n_done++;
          }
      }
  if (job == NULL)
    {
      gsize count = ov->n_layers * ov->n_heads * ov->rows * ov->cols;
      double lo = INFINITY, hi = -INFINITY;

      for (gsize i = 0; i < count; i++)
        if (isfinite (ov->values[i]))
          lo = fmin (lo, ov->values[i]), hi = fmax (hi, ov->values[i]);
      ov->vmin = lo <= hi ? lo : 0.0;
      ov->vmax = lo <= hi ? hi : 0.0;
    }
  return TRUE;
}

RpeOverview *
rpe_overview_compute (const RpeCompareSide  *base,
                      RpeCompareWhat         what,
                      gsize                  n_cap,
                      gsize                  max_side,
                      GCancellable          *cancellable,
                      GError               **error)
{
  g_autoptr (RpeTensorSet) set = NULL;
  RpeOverview *ov;

  g_return_val_if_fail (base != NULL && base->snapshot != NULL, NULL);
  ov = overview_new (base, what, &set, error);
  if (ov == NULL)
    return NULL;
  if (!overview_run (ov, base, set, n_cap, max_side, NULL, cancellable, error))
    {
      rpe_overview_unref (ov);
      return NULL;
    }
  return ov;
}

static void
overview_worker (GTask        *task,
                 gpointer      source_object,
                 gpointer      task_data,
                 GCancellable *cancellable)
{
  CompareJob *job = task_data;
  g_autoptr (RpeTensorSet) set = NULL;
  GError *error = NULL;
  RpeOverview *ov = overview_new (&job->a, job->what, &set, &error);

  if (ov == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  ov->serial = job->serial;
  job->overview = rpe_overview_ref (ov);
  if (!overview_run (ov, &job->a, set, job->n_cap, job->max_side, job, cancellable, &error))
    {
      rpe_overview_unref (ov);
      g_task_return_error (task, error);
      return;
    }
  g_task_return_pointer (task, ov, (GDestroyNotify) rpe_overview_unref);
}

void
rpe_overview_compute_async (const RpeCompareSide  *base,
                            RpeCompareWhat         what,
                            gsize                  n_cap,
                            gsize                  max_side,
                            guint64                serial,
                            RpeOverviewCellFunc    cell_func,
                            gpointer               cell_data,
                            GCancellable          *cancellable,
                            GAsyncReadyCallback    callback,
                            gpointer               user_data)
{
  CompareJob *job;
  GTask *task;

  g_return_if_fail (base != NULL && base->snapshot != NULL);
  job = compare_job_new (rpe_overview_compute_async, NULL, NULL, cancellable, callback, user_data);
  task = job->task;
  rpe_compare_side_copy (&job->a, base);
  job->what = what;
  job->n_cap = n_cap;
  job->max_side = max_side;
  job->serial = serial;
  job->cell_func = cell_func;
  job->cell_data = cell_data;
  g_task_run_in_thread (task, overview_worker);
  g_object_unref (task);
}

RpeOverview *
rpe_overview_compute_finish (GAsyncResult  *result,
                             GError       **error)
{
  RpeOverview *ov;

  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  ov = g_task_propagate_pointer (G_TASK (result), error);
  /* cells whose announcement had not run yet */
  for (gsize i = 0; ov != NULL && i < ov->n_layers * ov->n_heads; i++)
    if (!ov->done[i])
      overview_mark_done (ov, i);
  return ov;
}

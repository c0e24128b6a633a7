/* rpe-explorer-state.c: the explorer's parameters (a GObject on the main
 * thread) and their immutable snapshots for the workers. */
#include "config.h"

#include "rpe-explorer-state.h"
#include "rpe-compute.h"

#include <math.h>
#include <string.h>

#include "rpe-alloc.h"
#include "rpe-conv-spe-2d.h"
#include "rpe-error.h"
#include "rpe-tensor.h"
#include "rpe-rng.h"

/* ------------------------------------------------------------- the flags */

GType
rpe_explorer_change_get_type (void)
{
  static gsize type_id = 0;

  if (g_once_init_enter (&type_id))
    {
      static const GFlagsValue values[] = {
        { RPE_EXPLORER_CHANGE_METHOD, "RPE_EXPLORER_CHANGE_METHOD", "method" },
        { RPE_EXPLORER_CHANGE_SPE_KIND, "RPE_EXPLORER_CHANGE_SPE_KIND", "spe-kind" },
        { RPE_EXPLORER_CHANGE_SPE_PARAMS, "RPE_EXPLORER_CHANGE_SPE_PARAMS", "spe-params" },
        { RPE_EXPLORER_CHANGE_GATE, "RPE_EXPLORER_CHANGE_GATE", "gate" },
        { RPE_EXPLORER_CHANGE_LENGTH, "RPE_EXPLORER_CHANGE_LENGTH", "length" },
        { RPE_EXPLORER_CHANGE_REALIZATIONS, "RPE_EXPLORER_CHANGE_REALIZATIONS", "realizations" },
        { RPE_EXPLORER_CHANGE_SEED, "RPE_EXPLORER_CHANGE_SEED", "seed" },
        { RPE_EXPLORER_CHANGE_HEAD, "RPE_EXPLORER_CHANGE_HEAD", "head" },
        { RPE_EXPLORER_CHANGE_FEATURE, "RPE_EXPLORER_CHANGE_FEATURE", "feature" },
        { RPE_EXPLORER_CHANGE_CAUSAL, "RPE_EXPLORER_CHANGE_CAUSAL", "causal" },
        { RPE_EXPLORER_CHANGE_GATED, "RPE_EXPLORER_CHANGE_GATED", "gated" },
        { RPE_EXPLORER_CHANGE_FEATURE_MAP, "RPE_EXPLORER_CHANGE_FEATURE_MAP", "feature-map" },
        { RPE_EXPLORER_CHANGE_TEMPLATE_KIND, "RPE_EXPLORER_CHANGE_TEMPLATE_KIND", "template-kind" },
        { RPE_EXPLORER_CHANGE_CONTENT, "RPE_EXPLORER_CHANGE_CONTENT", "content" },
        { RPE_EXPLORER_CHANGE_LRPE, "RPE_EXPLORER_CHANGE_LRPE", "lrpe" },
        { RPE_EXPLORER_CHANGE_FASTRPB, "RPE_EXPLORER_CHANGE_FASTRPB", "fastrpb" },
        { RPE_EXPLORER_CHANGE_TRAIN_LENGTH, "RPE_EXPLORER_CHANGE_TRAIN_LENGTH", "train-length" },
        { RPE_EXPLORER_CHANGE_MODULES, "RPE_EXPLORER_CHANGE_MODULES", "modules" },
        { RPE_EXPLORER_CHANGE_COLORMAP, "RPE_EXPLORER_CHANGE_COLORMAP", "colormap" },
        { RPE_EXPLORER_CHANGE_COMPARE, "RPE_EXPLORER_CHANGE_COMPARE", "compare" },
        { RPE_EXPLORER_CHANGE_COLOR_SCALE, "RPE_EXPLORER_CHANGE_COLOR_SCALE", "color-scale" },
        { RPE_EXPLORER_CHANGE_GRID, "RPE_EXPLORER_CHANGE_GRID", "grid" },
        { 0, NULL, NULL }
      };
      GType type = g_flags_register_static (g_intern_static_string ("RpeExplorerChange"), values);

      g_once_init_leave (&type_id, type);
    }
  return type_id;
}

const char *
rpe_explorer_method_name (RpeExplorerMethod method)
{
  static const char *names[] = { "SPE estimate", "Exact RPE", "APE", "LRPE", "FastRPB", "Linear (implied)" };

  return (guint) method < G_N_ELEMENTS (names) ? names[method] : "?";
}

/* -------------------------------------------------------------- snapshots */

typedef struct
{
  RpeExplorerSnapshot public;
  float              *npy_copy;
  gsize               npy_count;
  RpeLrpeTrained     *trained_copy;
  RpeExplorerCapture *capture;        /* a reference: public.capture is its capture */
  RpeExplorerTrained *trained;        /* a reference: public.trained */
} SnapshotPrivate;

static void
snapshot_clear (gpointer data)
{
  SnapshotPrivate *priv = data;

  rpe_spe_params_clear (&priv->public.spe);
  rpe_spe_params_clear (&priv->public.conv2d);
  rpe_free (priv->npy_copy);
  rpe_lrpe_trained_free (priv->trained_copy);
  rpe_explorer_capture_unref (priv->capture);
  rpe_explorer_trained_unref (priv->trained);
}

RpeExplorerSnapshot *
rpe_explorer_snapshot_ref (RpeExplorerSnapshot *snapshot)
{
  g_return_val_if_fail (snapshot != NULL, NULL);
  return (RpeExplorerSnapshot *) g_atomic_rc_box_acquire ((gpointer) snapshot);
}

void
rpe_explorer_snapshot_unref (RpeExplorerSnapshot *snapshot)
{
  if (snapshot != NULL)
    g_atomic_rc_box_release_full ((gpointer) snapshot, snapshot_clear);
}

G_DEFINE_BOXED_TYPE (RpeExplorerSnapshot, rpe_explorer_snapshot,
                     rpe_explorer_snapshot_ref, rpe_explorer_snapshot_unref)

RpeExplorerSnapshot *
rpe_explorer_snapshot_copy (const RpeExplorerSnapshot *snapshot,
                            const RpeSpeParams        *params)
{
  const SnapshotPrivate *from = (const SnapshotPrivate *) snapshot;
  SnapshotPrivate *priv;
  RpeExplorerSnapshot *s;
  const RpeSpeParams *spe = params != NULL ? params : snapshot->have_spe ? &snapshot->spe : NULL;

  g_return_val_if_fail (snapshot != NULL, NULL);
  priv = g_atomic_rc_box_new0 (SnapshotPrivate);
  s = &priv->public;
  *s = *snapshot;
  memset (&s->spe, 0, sizeof s->spe);
  s->have_spe = FALSE;
  s->npy_data = NULL;
  s->npy_n = 0;
  if (spe != NULL && rpe_spe_params_copy (&s->spe, spe) == RPE_OK)
    s->have_spe = TRUE;
  memset (&s->conv2d, 0, sizeof s->conv2d);
  s->have_conv2d = snapshot->have_conv2d && rpe_spe_params_copy (&s->conv2d, &snapshot->conv2d) == RPE_OK;
  if (s->have_spe && params != NULL)
    {
      gboolean content_follows = snapshot->have_spe && snapshot->content_heads == snapshot->spe.n_heads
                                 && snapshot->content_dim == snapshot->spe.n_features;

      s->head = MIN (snapshot->head, s->spe.n_heads - 1);
      s->feature = MIN (snapshot->feature, s->spe.n_features - 1);
      s->spe_kind = s->spe.method;
      s->gated = s->spe.gate != NULL
                 && (snapshot->gated || !snapshot->have_spe || snapshot->spe.gate == NULL);
      if (content_follows || !snapshot->have_spe)
        {
          s->content_heads = s->spe.n_heads;
          s->content_dim = s->spe.n_features;
        }
      s->content_head = MIN (s->head, MAX (s->content_heads, 1) - 1);
    }
  if (from->npy_copy != NULL && s->content_heads == snapshot->content_heads
      && s->content_dim == snapshot->content_dim)
    {
      gsize count = from->npy_count;
      RpeStatus status;

      if ((priv->npy_copy = rpe_alloc (count, sizeof (float), &status)) != NULL)
        {
          memcpy (priv->npy_copy, from->npy_copy, count * sizeof (float));
          priv->npy_count = count;
          s->npy_data = priv->npy_copy;
          s->npy_n = snapshot->npy_n;
        }
    }
  priv->trained_copy = rpe_lrpe_trained_copy (from->trained_copy);
  s->lrpe_trained = snapshot->lrpe_trained != NULL ? priv->trained_copy : NULL;
  priv->capture = from->capture != NULL ? rpe_explorer_capture_ref (from->capture) : NULL;
  priv->trained = from->trained != NULL ? rpe_explorer_trained_ref (from->trained) : NULL;
  return s;
}

RpeExplorerSnapshot *
rpe_explorer_snapshot_with_capture_layer (const RpeExplorerSnapshot *snapshot,
                                          guint                      layer)
{
  RpeExplorerSnapshot *s;

  g_return_val_if_fail (snapshot != NULL, NULL);
  s = rpe_explorer_snapshot_copy (snapshot, NULL);
  if (s->capture != NULL && rpe_capture_has_layer (s->capture, layer))
    s->capture_layer = layer;
  return s;
}

RpeExplorerSnapshot *
rpe_explorer_snapshot_with_capture (const RpeExplorerSnapshot *snapshot, RpeExplorerCapture *capture, guint layer)
{
  RpeExplorerSnapshot *s;
  SnapshotPrivate     *priv;
  const RpeTensor     *q;

  g_return_val_if_fail (snapshot != NULL && capture != NULL, NULL);
  s = rpe_explorer_snapshot_copy (snapshot, NULL);
  priv = (SnapshotPrivate *) s;
  rpe_explorer_capture_ref (capture);
  rpe_explorer_capture_unref (priv->capture);
  priv->capture = capture;
  s->capture = capture->capture;
  s->capture_layer = layer;
  s->content = RPE_CONTENT_CAPTURE;
  q = rpe_capture_get (capture->capture, layer, RPE_CAPTURE_QUERIES);
  if (q != NULL && q->ndim == 3)
    s->n = q->shape[0];
  return s;
}

gboolean
rpe_explorer_snapshot_captured (const RpeExplorerSnapshot *s,
                                const RpeTensor          **queries,
                                const RpeTensor          **keys,
                                const RpeTensor          **values,
                                const RpeTensor          **tokens)
{
  const RpeTensor *q, *k, *v;

  g_return_val_if_fail (s != NULL, FALSE);
  if (s->content != RPE_CONTENT_CAPTURE || s->capture == NULL)
    return FALSE;
  q = rpe_capture_get (s->capture, s->capture_layer, RPE_CAPTURE_QUERIES);
  k = rpe_capture_get (s->capture, s->capture_layer, RPE_CAPTURE_KEYS);
  v = rpe_capture_get (s->capture, s->capture_layer, RPE_CAPTURE_VALUES);
  /* the reader checked: queries and keys (N, H, D) alike, values (N, H, Dv) */
  if (q == NULL || k == NULL || q->ndim != 3 || q->shape[1] != s->content_heads || q->shape[2] != s->content_dim)
    return FALSE;
  if (queries != NULL)
    *queries = q;
  if (keys != NULL)
    *keys = k;
  if (values != NULL)
    *values = v;
  if (tokens != NULL)
    *tokens = rpe_capture_tokens (s->capture);
  return TRUE;
}

/* A deep copy (own parameters and content) with one sweep parameter changed
 * (declared in rpe-compute.h). */
RpeExplorerSnapshot *
rpe_explorer_snapshot_with_sweep (const RpeExplorerSnapshot *snapshot,
                                  RpeSweepParam              param,
                                  gint64                     value)
{
  RpeExplorerSnapshot *s;

  g_return_val_if_fail (snapshot != NULL, NULL);
  s = rpe_explorer_snapshot_copy (snapshot, NULL);
  switch (param)
    {
    case RPE_SWEEP_REALIZATIONS:
      s->r = (gsize) CLAMP (value, 1, RPE_EXPLORER_MAX_R);
      break;
    case RPE_SWEEP_LENGTH:
      s->n = (gsize) CLAMP (value, 2, RPE_EXPLORER_MAX_LENGTH);
      break;
    case RPE_SWEEP_SEED:
    default:
      s->seed = (guint64) MAX (value, 0);
      break;
    }
  return s;
}

RpeStatus
rpe_explorer_snapshot_fill_content (const RpeExplorerSnapshot *s,
                                    gsize                      n,
                                    float                     *q,
                                    float                     *k)
{
  gsize H = MAX (s->content_heads, 1);
  gsize D = MAX (s->content_dim, 1);
  gsize row, count;

  if (!rpe_size_mul (H, D, &row) || !rpe_size_mul (row, n, &count))
    return RPE_ERROR_OVERFLOW;

  switch (s->content)
    {
    case RPE_CONTENT_RANDOM:
      rpe_rng_normal (s->seed, RPE_STREAM_QUERIES, 0, q, count);
      rpe_rng_normal (s->seed, RPE_STREAM_KEYS, 0, k, count);
      return RPE_OK;

    case RPE_CONTENT_CAPTURE:
      {
        const RpeTensor *cq, *ck;

        if (rpe_explorer_snapshot_captured (s, &cq, &ck, NULL, NULL))
          {
            gsize cn = cq->shape[0];

            /* positions beyond the capture's N cycle, as for loaded .npy content */
            for (gsize m = 0; m < n; m++)
              {
                memcpy (q + m * row, cq->data + (m % cn) * row, row * sizeof (float));
                memcpy (k + m * row, ck->data + (m % cn) * row, row * sizeof (float));
              }
            return RPE_OK;
          }
      }
      /* no capture of that shape: unit content */
      for (gsize i = 0; i < count; i++)
        q[i] = k[i] = 1.0f;
      return RPE_OK;

    case RPE_CONTENT_NPY:
      if (s->npy_data != NULL && s->npy_n > 0)
        {
          gsize width = s->npy_per_head ? row : D;

          for (gsize m = 0; m < n; m++)
            {
              const float *src = s->npy_data + (m % s->npy_n) * width;

              for (gsize h = 0; h < H; h++)
                {
                  memcpy (q + m * row + h * D, s->npy_per_head ? src + h * D : src, D * sizeof (float));
                  memcpy (k + m * row + h * D, s->npy_per_head ? src + h * D : src, D * sizeof (float));
                }
            }
          return RPE_OK;
        }
      G_GNUC_FALLTHROUGH;

    case RPE_CONTENT_UNIT:
    case RPE_CONTENT_N_KINDS:
    default:
      for (gsize i = 0; i < count; i++)
        q[i] = k[i] = 1.0f;
      return RPE_OK;
    }
}

void
rpe_explorer_snapshot_fastrpb_weights (const RpeExplorerSnapshot *s,
                                       gsize                      n,
                                       float                     *w)
{
  const long T = RPE_EXPLORER_FASTRPB_TAPS;
  const RpeExplorerFastrpbLayer *l = s->fastrpb_trained ? rpe_explorer_trained_fastrpb (s->trained, s->layer) : NULL;

  if (l != NULL)
    {
      /* the trained bias of the layer, the content head's row, every offset it holds */
      gsize        h = MIN (s->content_head, s->trained->heads - 1), width = 2 * l->taps - 1;
      const float *row = l->w + h * width;

      for (gsize i = 0; i < 2 * n - 1; i++)
        {
          gsize a = i < n - 1 ? n - 1 - i : i - (n - 1); /* |tau| */

          w[i] = a < l->taps ? row[i + l->taps - n] : 0.0f;
        }
      return;
    }

  for (gsize i = 0; i < 2 * n - 1; i++)
    {
      long tau = (long) i - (long) (n - 1);

      w[i] = labs (tau) < T ? s->fastrpb_w[tau + T - 1] : 0.0f;
    }
}

RpeLrpe *
rpe_explorer_snapshot_new_lrpe (const RpeExplorerSnapshot *s,
                                gsize                      f,
                                RpeStatus                 *status)
{
  RpeLrpeConfig config = { 0 };

  config.dim = f;
  config.length = s->train_length > 0 ? s->train_length : s->n;
  config.p = s->lrpe_p;
  config.lambda = s->lrpe_lambda;
  config.theta_kind = s->lrpe_theta;
  config.seed = s->seed;
  if (s->lrpe_trained != NULL)
    {
      RpeStatus st = rpe_lrpe_trained_apply (s->lrpe_trained, &config);

      if (st != RPE_OK)
        {
          if (status != NULL)
            *status = st;
          return NULL;
        }
    }
  return rpe_lrpe_new (&config, status);
}

/* ------------------------------------------------------------------ state */

struct _RpeExplorerState
{
  GObject             parent_instance;

  guint64             serial;
  RpeExplorerMethod   method;
  RpeSpeMethod        spe_kind;
  RpeSpeParams        modules[2];      /* indexed by RpeSpeMethod */
  gboolean            have[2];
  char               *source[2];
  guint               n;
  guint               r;
  guint               seed;
  guint               head;
  guint               feature;
  gboolean            causal;
  gboolean            gated;
  RpeFeatureMap       feature_map;
  RpeTemplateKind     template_kind;
  RpeExplorerContent  content;
  float              *npy;
  gsize               npy_n;
  gboolean            npy_per_head;
  gsize               npy_shape[3];
  RpeExplorerCapture *capture;
  guint               capture_layer;
  RpeModelPrint      *model_print;
  RpeLrpeP            lrpe_p;
  RpeLrpeLambda       lrpe_lambda;
  RpeLrpeTheta        lrpe_theta;
  RpeLrpeTrained     *lrpe_trained;
  char               *lrpe_trained_source;
  gboolean            lrpe_use_trained;
  RpeExplorerTrained *trained; /* a checkpoint's FastRPB biases and learned APE, or NULL */
  gboolean            fastrpb_use_trained;
  gboolean            ape_use_trained;
  RpeSpeParams        conv2d;
  gboolean            have_conv2d;
  char               *conv2d_source;
  guint               grid_rows;
  guint               grid_cols;
  guint               grid_query;
  float               fastrpb_w[2 * RPE_EXPLORER_FASTRPB_TAPS - 1];
  guint               train_length;
  char               *colormap;
  /* Compare (rpe-compare.h): scalars only, so that sessions save them as properties */
  guint               compare_mode;
  guint               compare_what;
  guint               compare_a_layer;
  guint               compare_b_layer;
  guint               compare_b_head;
  guint               compare_b_method;
  char               *compare_b_checkpoint;
  char               *compare_b_capture;
  guint               color_scale;       /* RpeHeatmapTransform */
  guint               color_range;       /* RpeColorRange */
  double              color_gamma;
  double              color_percentile;
};

G_DEFINE_FINAL_TYPE (RpeExplorerState, rpe_explorer_state, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_METHOD,
  PROP_SPE_KIND,
  PROP_LENGTH,
  PROP_REALIZATIONS,
  PROP_SEED,
  PROP_HEAD,
  PROP_FEATURE,
  PROP_CAUSAL,
  PROP_GATED,
  PROP_FEATURE_MAP,
  PROP_TEMPLATE_KIND,
  PROP_CONTENT,
  PROP_LRPE_P,
  PROP_LRPE_LAMBDA,
  PROP_LRPE_THETA,
  PROP_TRAIN_LENGTH,
  PROP_COLORMAP,
  PROP_COMPARE_MODE,
  PROP_COMPARE_WHAT,
  PROP_COMPARE_A_LAYER,
  PROP_COMPARE_B_LAYER,
  PROP_COMPARE_B_HEAD,
  PROP_COMPARE_B_METHOD,
  PROP_COMPARE_B_CHECKPOINT,
  PROP_COMPARE_B_CAPTURE,
  PROP_COLOR_SCALE,
  PROP_COLOR_GAMMA,
  PROP_COLOR_PERCENTILE,
  PROP_COLOR_RANGE,
  PROP_LRPE_TRAINED,
  PROP_GRID_ROWS,
  PROP_GRID_COLS,
  PROP_GRID_QUERY,
  PROP_CAPTURE_LAYER,
  PROP_FASTRPB_TRAINED,
  PROP_APE_TRAINED,
  N_PROPS
};

enum {
  SIGNAL_CHANGED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

static void
emit_changed (RpeExplorerState  *self,
              RpeExplorerChange  what)
{
  self->serial++;
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0, what);
}

/* The guint field behind a property and the change it makes. */
static guint *
uint_field (RpeExplorerState   *self,
            guint               prop_id,
            RpeExplorerChange  *what)
{
  switch (prop_id)
    {
    case PROP_METHOD:        *what = RPE_EXPLORER_CHANGE_METHOD;        return (guint *) &self->method;
    case PROP_SPE_KIND:      *what = RPE_EXPLORER_CHANGE_SPE_KIND;      return (guint *) &self->spe_kind;
    case PROP_LENGTH:        *what = RPE_EXPLORER_CHANGE_LENGTH;        return &self->n;
    case PROP_REALIZATIONS:  *what = RPE_EXPLORER_CHANGE_REALIZATIONS;  return &self->r;
    case PROP_SEED:          *what = RPE_EXPLORER_CHANGE_SEED;          return &self->seed;
    case PROP_HEAD:          *what = RPE_EXPLORER_CHANGE_HEAD;          return &self->head;
    case PROP_FEATURE:       *what = RPE_EXPLORER_CHANGE_FEATURE;       return &self->feature;
    case PROP_FEATURE_MAP:   *what = RPE_EXPLORER_CHANGE_FEATURE_MAP;   return (guint *) &self->feature_map;
    case PROP_TEMPLATE_KIND: *what = RPE_EXPLORER_CHANGE_TEMPLATE_KIND; return (guint *) &self->template_kind;
    case PROP_CONTENT:       *what = RPE_EXPLORER_CHANGE_CONTENT;       return (guint *) &self->content;
    case PROP_CAPTURE_LAYER: *what = RPE_EXPLORER_CHANGE_CONTENT;       return &self->capture_layer;
    case PROP_LRPE_P:        *what = RPE_EXPLORER_CHANGE_LRPE;          return (guint *) &self->lrpe_p;
    case PROP_LRPE_LAMBDA:   *what = RPE_EXPLORER_CHANGE_LRPE;          return (guint *) &self->lrpe_lambda;
    case PROP_LRPE_THETA:    *what = RPE_EXPLORER_CHANGE_LRPE;          return (guint *) &self->lrpe_theta;
    case PROP_TRAIN_LENGTH:  *what = RPE_EXPLORER_CHANGE_TRAIN_LENGTH;  return &self->train_length;
    case PROP_COMPARE_MODE:     *what = RPE_EXPLORER_CHANGE_COMPARE; return &self->compare_mode;
    case PROP_COMPARE_WHAT:     *what = RPE_EXPLORER_CHANGE_COMPARE; return &self->compare_what;
    case PROP_COMPARE_A_LAYER:  *what = RPE_EXPLORER_CHANGE_COMPARE; return &self->compare_a_layer;
    case PROP_COMPARE_B_LAYER:  *what = RPE_EXPLORER_CHANGE_COMPARE; return &self->compare_b_layer;
    case PROP_COMPARE_B_HEAD:   *what = RPE_EXPLORER_CHANGE_COMPARE; return &self->compare_b_head;
    case PROP_COMPARE_B_METHOD: *what = RPE_EXPLORER_CHANGE_COMPARE; return &self->compare_b_method;
    case PROP_COLOR_SCALE:   *what = RPE_EXPLORER_CHANGE_COLOR_SCALE;   return &self->color_scale;
    case PROP_COLOR_RANGE:   *what = RPE_EXPLORER_CHANGE_COLOR_SCALE;   return &self->color_range;
    case PROP_GRID_ROWS:     *what = RPE_EXPLORER_CHANGE_GRID;          return &self->grid_rows;
    case PROP_GRID_COLS:     *what = RPE_EXPLORER_CHANGE_GRID;          return &self->grid_cols;
    case PROP_GRID_QUERY:    *what = RPE_EXPLORER_CHANGE_GRID;          return &self->grid_query;
    default:                 return NULL;
    }
}

static void
rpe_explorer_state_get_property (GObject    *object,
                                 guint       prop_id,
                                 GValue     *value,
                                 GParamSpec *pspec)
{
  RpeExplorerState *self = RPE_EXPLORER_STATE (object);
  RpeExplorerChange what;
  guint *field;

  switch (prop_id)
    {
    case PROP_CAUSAL:
      g_value_set_boolean (value, self->causal);
      return;
    case PROP_GATED:
      g_value_set_boolean (value, self->gated);
      return;
    case PROP_COLORMAP:
      g_value_set_string (value, self->colormap);
      return;
    case PROP_COMPARE_B_CHECKPOINT:
      g_value_set_string (value, self->compare_b_checkpoint);
      return;
    case PROP_COMPARE_B_CAPTURE:
      g_value_set_string (value, self->compare_b_capture);
      return;
    case PROP_COLOR_GAMMA:
      g_value_set_double (value, self->color_gamma);
      return;
    case PROP_COLOR_PERCENTILE:
      g_value_set_double (value, self->color_percentile);
      return;
    case PROP_LRPE_TRAINED:
      g_value_set_boolean (value, self->lrpe_use_trained);
      return;
    case PROP_FASTRPB_TRAINED:
      g_value_set_boolean (value, self->fastrpb_use_trained);
      return;
    case PROP_APE_TRAINED:
      g_value_set_boolean (value, self->ape_use_trained);
      return;
    default:
      break;
    }
  field = uint_field (self, prop_id, &what);
  if (field != NULL)
    g_value_set_uint (value, *field);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
rpe_explorer_state_set_property (GObject      *object,
                                 guint         prop_id,
                                 const GValue *value,
                                 GParamSpec   *pspec)
{
  RpeExplorerState *self = RPE_EXPLORER_STATE (object);
  RpeExplorerChange what;
  guint *field;

  switch (prop_id)
    {
    case PROP_CAUSAL:
    case PROP_GATED:
      {
        gboolean *flag = prop_id == PROP_CAUSAL ? &self->causal : &self->gated;
        gboolean v = g_value_get_boolean (value);

        if (*flag != v)
          {
            *flag = v;
            g_object_notify_by_pspec (object, pspec);
            emit_changed (self, prop_id == PROP_CAUSAL ? RPE_EXPLORER_CHANGE_CAUSAL
                                                       : RPE_EXPLORER_CHANGE_GATED);
          }
      }
      return;
    case PROP_COLORMAP:
      if (g_strcmp0 (self->colormap, g_value_get_string (value)) != 0)
        {
          g_free (self->colormap);
          self->colormap = g_value_dup_string (value);
          g_object_notify_by_pspec (object, pspec);
          emit_changed (self, RPE_EXPLORER_CHANGE_COLORMAP);
        }
      return;
    case PROP_COMPARE_B_CHECKPOINT:
    case PROP_COMPARE_B_CAPTURE:
      {
        char **field_ = prop_id == PROP_COMPARE_B_CHECKPOINT ? &self->compare_b_checkpoint : &self->compare_b_capture;

        if (g_strcmp0 (*field_, g_value_get_string (value)) != 0)
          {
            g_free (*field_);
            *field_ = g_value_dup_string (value);
            g_object_notify_by_pspec (object, pspec);
            emit_changed (self, RPE_EXPLORER_CHANGE_COMPARE);
          }
      }
      return;
    case PROP_COLOR_GAMMA:
    case PROP_COLOR_PERCENTILE:
      {
        double *field_ = prop_id == PROP_COLOR_GAMMA ? &self->color_gamma : &self->color_percentile;
        double v = g_value_get_double (value);

        if (*field_ != v)
          {
            *field_ = v;
            g_object_notify_by_pspec (object, pspec);
            emit_changed (self, RPE_EXPLORER_CHANGE_COLOR_SCALE);
          }
      }
      return;
    case PROP_FASTRPB_TRAINED:
    case PROP_APE_TRAINED:
      {
        /* only on when the held modules have what it uses */
        gboolean  fastrpb = prop_id == PROP_FASTRPB_TRAINED;
        gboolean *flag = fastrpb ? &self->fastrpb_use_trained : &self->ape_use_trained;
        gboolean  v = g_value_get_boolean (value) && self->trained != NULL
                     && (fastrpb ? self->trained->n_fastrpb > 0 : self->trained->ape != NULL);

        if (*flag != v)
          {
            *flag = v;
            g_object_notify_by_pspec (object, pspec);
            emit_changed (self, fastrpb ? RPE_EXPLORER_CHANGE_FASTRPB : RPE_EXPLORER_CHANGE_METHOD);
          }
      }
      return;
    case PROP_LRPE_TRAINED:
      {
        /* only on when there are trained parameters to use */
        gboolean v = g_value_get_boolean (value) && self->lrpe_trained != NULL;

        if (self->lrpe_use_trained != v)
          {
            self->lrpe_use_trained = v;
            g_object_notify_by_pspec (object, pspec);
            emit_changed (self, RPE_EXPLORER_CHANGE_LRPE);
          }
      }
      return;
    default:
      break;
    }
  field = uint_field (self, prop_id, &what);
  if (field == NULL)
    {
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      return;
    }
  if (*field != g_value_get_uint (value))
    {
      *field = g_value_get_uint (value);
      g_object_notify_by_pspec (object, pspec);
      emit_changed (self, what);
    }
}

static void
rpe_explorer_state_finalize (GObject *object)
{
  RpeExplorerState *self = RPE_EXPLORER_STATE (object);

  for (guint i = 0; i < 2; i++)
    {
      rpe_spe_params_clear (&self->modules[i]);
      g_free (self->source[i]);
    }
  rpe_free (self->npy);
  rpe_explorer_capture_unref (self->capture);
  rpe_model_print_unref (self->model_print);
  g_free (self->colormap);
  g_free (self->compare_b_checkpoint);
  g_free (self->compare_b_capture);
  rpe_lrpe_trained_free (self->lrpe_trained);
  g_free (self->lrpe_trained_source);
  rpe_explorer_trained_unref (self->trained);
  rpe_spe_params_clear (&self->conv2d);
  g_free (self->conv2d_source);

  G_OBJECT_CLASS (rpe_explorer_state_parent_class)->finalize (object);
}

static GParamSpec *
uint_pspec (const char *name,
            const char *blurb,
            guint       lo,
            guint       hi,
            guint       def)
{
  return g_param_spec_uint (name, NULL, blurb, lo, hi, def,
                            G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
}

static void
rpe_explorer_state_class_init (RpeExplorerStateClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = rpe_explorer_state_finalize;
  object_class->get_property = rpe_explorer_state_get_property;
  object_class->set_property = rpe_explorer_state_set_property;

  properties[PROP_METHOD] = uint_pspec ("method", "RpeExplorerMethod", 0, RPE_EXPLORER_N_METHODS - 1, 0);
  properties[PROP_SPE_KIND] = uint_pspec ("spe-kind", "RpeSpeMethod", 0, 1, 0);
  properties[PROP_LENGTH] = uint_pspec ("length", "N", 2, RPE_EXPLORER_MAX_LENGTH, 96);
  properties[PROP_REALIZATIONS] = uint_pspec ("realizations", "R", 1, RPE_EXPLORER_MAX_R, 64);
  properties[PROP_SEED] = uint_pspec ("seed", "noise seed", 0, G_MAXINT, 1);
  properties[PROP_HEAD] = uint_pspec ("head", "h", 0, 1023, 0);
  properties[PROP_FEATURE] = uint_pspec ("feature", "d", 0, 4095, 0);
  properties[PROP_FEATURE_MAP] = uint_pspec ("feature-map", "RpeFeatureMap", 0, RPE_FEATURE_DPFP, RPE_FEATURE_ELU1);
  properties[PROP_TEMPLATE_KIND] = uint_pspec ("template-kind", "RpeTemplateKind", 0, RPE_TEMPLATE_N_KINDS - 1, 0);
  properties[PROP_CONTENT] = uint_pspec ("content", "RpeExplorerContent", 0, RPE_CONTENT_N_KINDS - 1, 0);
  properties[PROP_LRPE_P] = uint_pspec ("lrpe-p", "RpeLrpeP", 0, RPE_LRPE_P_DCT, 0);
  properties[PROP_LRPE_LAMBDA] = uint_pspec ("lrpe-lambda", "RpeLrpeLambda", 0, RPE_LRPE_LAMBDA_PERMUTATION, 0);
  properties[PROP_LRPE_THETA] = uint_pspec ("lrpe-theta", "RpeLrpeTheta (A, B, C)", 0, RPE_LRPE_THETA_C, 0);
  properties[PROP_TRAIN_LENGTH] = uint_pspec ("train-length", "N_train (0: none)", 0, RPE_EXPLORER_MAX_LENGTH, 64);
  properties[PROP_GRID_ROWS] = uint_pspec ("grid-rows", "N1 of the 2-D grid", 1, RPE_EXPLORER_MAX_GRID, 12);
  properties[PROP_GRID_COLS] = uint_pspec ("grid-cols", "N2 of the 2-D grid", 1, RPE_EXPLORER_MAX_GRID, 12);
  properties[PROP_GRID_QUERY] = uint_pspec ("grid-query", "query position p = i N2 + j of the 2-D grid", 0,
                                            RPE_EXPLORER_MAX_GRID * RPE_EXPLORER_MAX_GRID - 1, 0);
  properties[PROP_LRPE_TRAINED] =
    g_param_spec_boolean ("lrpe-trained", NULL, "Use the trained LRPE parameters (v, theta, permutation) held",
                          FALSE, G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_FASTRPB_TRAINED] =
    g_param_spec_boolean ("fastrpb-trained", NULL,
                          "Draw the held checkpoint's FastRPB bias (every head and offset) instead of the edited taps",
                          FALSE, G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_APE_TRAINED] = g_param_spec_boolean (
    "ape-trained", NULL, "APE adds the held checkpoint's learned embedding instead of the sinusoidal one", FALSE,
    G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_CAUSAL] =
    g_param_spec_boolean ("causal", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_GATED] =
    g_param_spec_boolean ("gated", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_COLORMAP] =
    g_param_spec_string ("colormap", NULL, NULL, "viridis",
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* Compare (rpe-compare.h) */
  properties[PROP_COMPARE_MODE] = uint_pspec ("compare-mode", "RpeCompareMode (0: off)", 0, 6, 0);
  properties[PROP_COMPARE_WHAT] = uint_pspec ("compare-what", "RpeCompareWhat: 0 templates, 1 attention", 0, 1, 0);
  properties[PROP_COMPARE_A_LAYER] = uint_pspec ("compare-a-layer", "layer of A (layer mode)", 0, 4095, 0);
  properties[PROP_COMPARE_B_LAYER] = uint_pspec ("compare-b-layer", "layer of B (layer mode)", 0, 4095, 1);
  properties[PROP_COMPARE_B_HEAD] = uint_pspec ("compare-b-head", "head of B (head mode)", 0, 1023, 1);
  properties[PROP_COMPARE_B_METHOD] = uint_pspec ("compare-b-method", "RpeExplorerMethod of B (method mode)",
                                                  0, RPE_EXPLORER_N_METHODS - 1, RPE_EXPLORER_METHOD_EXACT);
  properties[PROP_COMPARE_B_CHECKPOINT] =
    g_param_spec_string ("compare-b-checkpoint", NULL, "the checkpoint of B (checkpoint mode)", NULL,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_COMPARE_B_CAPTURE] =
    g_param_spec_string ("compare-b-capture", NULL,
                         "the capture B is drawn on (capture and checkpoint modes): a file or demo:NAME; "
                         "NULL or empty: the current capture",
                         NULL, G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_COLOR_SCALE] = uint_pspec ("color-scale", "RpeHeatmapTransform of the heatmaps", 0,
                                             RPE_HEATMAP_N_TRANSFORMS - 1, RPE_HEATMAP_TRANSFORM_NONE);
  properties[PROP_COLOR_RANGE] = uint_pspec ("color-range", "RpeColorRange: one range shared by a view's panels or "
                                             "each its own", 0, RPE_COLOR_RANGE_PER_PANEL, RPE_COLOR_RANGE_SHARED);
  properties[PROP_COLOR_GAMMA] =
    g_param_spec_double ("color-gamma", NULL, "the exponent of the power colour scale", 0.05, 10.0,
                         RPE_PLOT_DEFAULT_GAMMA,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_COLOR_PERCENTILE] =
    g_param_spec_double ("color-percentile", NULL, "p of the percentile-clip colour scale: [P(100-p), P(p)]", 50.0,
                         100.0, RPE_PLOT_DEFAULT_PERCENTILE,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_CAPTURE_LAYER] = uint_pspec ("capture-layer", "the layer of the capture drawn (content CAPTURE)",
                                               0, RPE_CAPTURE_MAX_LAYERS - 1, 0);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * RpeExplorerState::changed:
   * @what: the RpeExplorerChange flags of what changed
   */
  signals[SIGNAL_CHANGED] =
    g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 1, RPE_TYPE_EXPLORER_CHANGE);
}

static void
rpe_explorer_state_init (RpeExplorerState *self)
{
  const long T = RPE_EXPLORER_FASTRPB_TAPS;

  self->method = RPE_EXPLORER_METHOD_SPE;
  self->spe_kind = RPE_SPE_SINE;
  self->n = 96;
  self->grid_rows = 12;
  self->grid_cols = 12;
  self->r = 64;
  self->seed = 1;
  self->feature_map = RPE_FEATURE_ELU1;
  self->train_length = 64;
  self->colormap = g_strdup ("viridis");
  self->compare_b_layer = 1;
  self->compare_b_head = 1;
  self->compare_b_method = RPE_EXPLORER_METHOD_EXACT;
  self->color_gamma = RPE_PLOT_DEFAULT_GAMMA;
  self->color_percentile = RPE_PLOT_DEFAULT_PERCENTILE;
  /* A local bias that favours the recent past: w_tau = 0.6 e^{-|tau|/6}, a bit
   * stronger for tau >= 0 (keys before the query). */
  for (long i = 0; i < 2 * T - 1; i++)
    {
      long tau = i - (T - 1);

      self->fastrpb_w[i] = (float) ((tau >= 0 ? 0.6 : 0.3) * exp (-labs (tau) / 6.0));
    }
}

RpeExplorerState *
rpe_explorer_state_new (void)
{
  return g_object_new (RPE_TYPE_EXPLORER_STATE, NULL);
}

/* ---------------------------------------------------------------- modules */

gboolean
rpe_explorer_state_set_modules (RpeExplorerState   *self,
                                const RpeSpeParams *sine,
                                const char         *sine_source,
                                const RpeSpeParams *conv,
                                const char         *conv_source,
                                GError            **error)
{
  const RpeSpeParams *in[2] = { sine, conv };
  const char *src[2] = { sine_source, conv_source };
  RpeSpeParams copies[2] = { { 0 }, { 0 } };

  g_return_val_if_fail (RPE_IS_EXPLORER_STATE (self), FALSE);

  /* Copy both first so that a failure leaves the state as it was. */
  for (guint i = 0; i < 2; i++)
    {
      RpeStatus status;

      if (in[i] == NULL)
        continue;
      if (in[i]->method != (RpeSpeMethod) i)
        {
          g_set_error (error, RPE_ERROR, RPE_ERROR_INVALID_ARGUMENT, "Wrong module kind");
          rpe_spe_params_clear (&copies[0]);
          rpe_spe_params_clear (&copies[1]);
          return FALSE;
        }
      status = rpe_spe_params_validate (in[i]);
      if (status == RPE_OK)
        status = rpe_spe_params_copy (&copies[i], in[i]);
      if (status != RPE_OK)
        {
          g_set_error (error, RPE_ERROR, status, "Invalid %s parameters: %s",
                       i == RPE_SPE_SINE ? "sine" : "conv", rpe_status_to_string (status));
          rpe_spe_params_clear (&copies[0]);
          rpe_spe_params_clear (&copies[1]);
          return FALSE;
        }
    }
  for (guint i = 0; i < 2; i++)
    {
      if (in[i] == NULL)
        continue;
      rpe_spe_params_clear (&self->modules[i]);
      self->modules[i] = copies[i];
      self->have[i] = TRUE;
      g_free (self->source[i]);
      self->source[i] = g_strdup (src[i] != NULL ? src[i] : "parameters");
    }
  emit_changed (self, RPE_EXPLORER_CHANGE_MODULES | RPE_EXPLORER_CHANGE_SPE_PARAMS | RPE_EXPLORER_CHANGE_GATE);
  return TRUE;
}

gboolean
rpe_explorer_state_set_conv2d (RpeExplorerState   *self,
                               const RpeSpeParams *conv2d,
                               const char         *source,
                               GError            **error)
{
  RpeSpeParams copy = { 0 };
  RpeStatus status;

  g_return_val_if_fail (RPE_IS_EXPLORER_STATE (self), FALSE);
  if (conv2d != NULL)
    {
      status = rpe_conv_spe_is_2d (conv2d) ? rpe_conv_spe_2d_validate (conv2d) : RPE_ERROR_INVALID_ARGUMENT;
      if (status == RPE_OK)
        status = rpe_spe_params_copy (&copy, conv2d);
      if (status != RPE_OK)
        {
          g_set_error (error, RPE_ERROR, status, "Invalid 2-D conv parameters: %s", rpe_status_to_string (status));
          return FALSE;
        }
    }
  rpe_spe_params_clear (&self->conv2d);
  self->conv2d = copy;
  self->have_conv2d = conv2d != NULL;
  g_free (self->conv2d_source);
  self->conv2d_source = conv2d != NULL ? g_strdup (source != NULL ? source : "parameters") : NULL;
  emit_changed (self, RPE_EXPLORER_CHANGE_GRID);
  return TRUE;
}

const RpeSpeParams *
rpe_explorer_state_get_conv2d (RpeExplorerState  *self,
                               const char       **source)
{
  g_return_val_if_fail (RPE_IS_EXPLORER_STATE (self), NULL);
  if (source != NULL)
    *source = self->conv2d_source;
  return self->have_conv2d ? &self->conv2d : NULL;
}

const RpeSpeParams *
rpe_explorer_state_get_params (RpeExplorerState *self,
                               RpeSpeMethod      kind)
{
  g_return_val_if_fail (RPE_IS_EXPLORER_STATE (self), NULL);
  g_return_val_if_fail ((guint) kind < 2, NULL);
  return self->have[kind] ? &self->modules[kind] : NULL;
}

const char *
rpe_explorer_state_get_source (RpeExplorerState *self,
                               RpeSpeMethod      kind)
{
  g_return_val_if_fail (RPE_IS_EXPLORER_STATE (self), NULL);
  g_return_val_if_fail ((guint) kind < 2, NULL);
  return self->source[kind];
}

gboolean
rpe_explorer_state_set_sine (RpeExplorerState *self,
                             gsize             h,
                             gsize             d,
                             gsize             k,
                             double            f,
                             double            theta,
                             double            lambda,
                             gboolean          all_features)
{
  RpeSpeParams *p = &self->modules[RPE_SPE_SINE];
  gsize d0, d1;

  g_return_val_if_fail (RPE_IS_EXPLORER_STATE (self), FALSE);
  if (!self->have[RPE_SPE_SINE] || h >= p->n_heads || d >= p->n_features || k >= p->n_sines)
    return FALSE;
  if (!isfinite (f) || !isfinite (theta) || !isfinite (lambda))
    return FALSE;
  f = CLAMP (f, 0.0, 0.5);
  lambda = MAX (lambda, 0.0);
  d0 = all_features ? 0 : d;
  d1 = all_features ? p->n_features : d + 1;
  for (gsize dd = d0; dd < d1; dd++)
    {
      gsize i = (h * p->n_features + dd) * p->n_sines + k;

      p->freqs[i] = (float) f;
      p->offsets[i] = (float) theta;
      p->gains[i] = (float) lambda;
    }
  emit_changed (self, RPE_EXPLORER_CHANGE_SPE_PARAMS);
  return TRUE;
}

gboolean
rpe_explorer_state_set_conv_taps (RpeExplorerState *self,
                                  gsize             h,
                                  gsize             d,
                                  gboolean          query,
                                  const float      *taps,
                                  gsize             n_taps,
                                  gboolean          all_features)
{
  RpeSpeParams *p = &self->modules[RPE_SPE_CONV];
  gsize d0, d1;

  g_return_val_if_fail (RPE_IS_EXPLORER_STATE (self), FALSE);
  if (!self->have[RPE_SPE_CONV] || h >= p->n_heads || d >= p->n_features
      || n_taps != p->kernel || taps == NULL || !rpe_all_finite_f (taps, n_taps))
    return FALSE;
  d0 = all_features ? 0 : d;
  d1 = all_features ? p->n_features : d + 1;
  for (gsize dd = d0; dd < d1; dd++)
    memcpy ((query ? p->wq : p->wk) + (h * p->n_features + dd) * p->kernel, taps,
            n_taps * sizeof (float));
  emit_changed (self, RPE_EXPLORER_CHANGE_SPE_PARAMS);
  return TRUE;
}

gboolean
rpe_explorer_state_set_conv_length (RpeExplorerState *self,
                                    gsize             length)
{
  RpeSpeParams *p = &self->modules[RPE_SPE_CONV];
  RpeSpeParams np = { 0 };
  gsize channels;

  g_return_val_if_fail (RPE_IS_EXPLORER_STATE (self), FALSE);
  if (!self->have[RPE_SPE_CONV] || length < 1 || length > 4096)
    return FALSE;
  if (length == p->kernel)
    return TRUE;
  if (rpe_spe_params_init (&np, RPE_SPE_CONV, p->n_heads, p->n_features, length, p->gate != NULL) != RPE_OK)
    return FALSE;
  channels = p->n_heads * p->n_features;
  for (gsize c = 0; c < channels; c++)
    {
      gsize keep = MIN (length, p->kernel);

      memcpy (np.wq + c * length, p->wq + c * p->kernel, keep * sizeof (float));
      memcpy (np.wk + c * length, p->wk + c * p->kernel, keep * sizeof (float));
    }
  if (p->gate != NULL)
    memcpy (np.gate, p->gate, channels * sizeof (float));
  rpe_spe_params_clear (p);
  *p = np;
  emit_changed (self, RPE_EXPLORER_CHANGE_SPE_PARAMS | RPE_EXPLORER_CHANGE_MODULES);
  return TRUE;
}

gboolean
rpe_explorer_state_set_gate (RpeExplorerState *self,
                             gsize             h,
                             gsize             d,
                             double            g,
                             gboolean          all_features)
{
  RpeSpeParams *p;
  gsize d0, d1;

  g_return_val_if_fail (RPE_IS_EXPLORER_STATE (self), FALSE);
  p = &self->modules[self->spe_kind];
  if (!self->have[self->spe_kind] || h >= p->n_heads || d >= p->n_features || !isfinite (g))
    return FALSE;
  if (p->gate == NULL)
    {
      RpeStatus status;

      p->gate = rpe_alloc0 (p->n_heads * p->n_features, sizeof (float), &status);
      if (p->gate == NULL)
        return FALSE;
    }
  g = CLAMP (g, 0.0, 1.0);
  d0 = all_features ? 0 : d;
  d1 = all_features ? p->n_features : d + 1;
  for (gsize dd = d0; dd < d1; dd++)
    p->gate[h * p->n_features + dd] = (float) g;
  emit_changed (self, RPE_EXPLORER_CHANGE_GATE);
  return TRUE;
}

void
rpe_explorer_state_set_fastrpb_weights (RpeExplorerState *self,
                                        const float      *w,
                                        gsize             count)
{
  g_return_if_fail (RPE_IS_EXPLORER_STATE (self));
  g_return_if_fail (w != NULL);

  count = MIN (count, G_N_ELEMENTS (self->fastrpb_w));
  for (gsize i = 0; i < count; i++)
    self->fastrpb_w[i] = isfinite (w[i]) ? w[i] : 0.0f;
  /* edited taps: drawn instead of the trained bias (kept, to be switched back on) */
  if (self->fastrpb_use_trained)
    {
      self->fastrpb_use_trained = FALSE;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FASTRPB_TRAINED]);
    }
  emit_changed (self, RPE_EXPLORER_CHANGE_FASTRPB);
}

const float *
rpe_explorer_state_get_fastrpb_weights (RpeExplorerState *self,
                                        gsize            *count)
{
  g_return_val_if_fail (RPE_IS_EXPLORER_STATE (self), NULL);
  if (count != NULL)
    *count = G_N_ELEMENTS (self->fastrpb_w);
  return self->fastrpb_w;
}

gboolean
rpe_explorer_state_set_npy_content (RpeExplorerState *self,
                                    const float      *data,
                                    gsize             ndim,
                                    const gsize      *shape,
                                    GError          **error)
{
  gsize count = 1;
  RpeStatus status = RPE_OK;
  float *copy;

  g_return_val_if_fail (RPE_IS_EXPLORER_STATE (self), FALSE);

  if (ndim != 2 && ndim != 3)
    {
      g_set_error (error, RPE_ERROR, RPE_ERROR_INVALID_ARGUMENT,
                   "Queries/keys must have shape (N, D) or (N, H, D); this array has %zu dimensions", ndim);
      return FALSE;
    }
  if (!rpe_shape_check_nonempty ("The queries/keys array", ndim, shape, error))
    return FALSE;
  for (gsize i = 0; i < ndim; i++)
    if (!rpe_size_mul (count, shape[i], &count))
      {
        g_set_error (error, RPE_ERROR, RPE_ERROR_OVERFLOW, "The queries/keys array is too large to count");
        return FALSE;
      }
  if (!rpe_all_finite_f (data, count))
    {
      g_set_error (error, RPE_ERROR, RPE_ERROR_NOT_FINITE, "The array holds NaN or infinite values");
      return FALSE;
    }
  copy = rpe_alloc (count, sizeof (float), &status);
  if (copy == NULL)
    {
      g_set_error (error, RPE_ERROR, status, "%s", rpe_status_to_string (status));
      return FALSE;
    }
  memcpy (copy, data, count * sizeof (float));
  rpe_free (self->npy);
  self->npy = copy;
  self->npy_n = shape[0];
  self->npy_per_head = ndim == 3;
  memset (self->npy_shape, 0, sizeof self->npy_shape);
  for (gsize i = 0; i < ndim; i++)
    self->npy_shape[i] = shape[i];
  if (self->content != RPE_CONTENT_NPY)
    {
      self->content = RPE_CONTENT_NPY;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CONTENT]);
    }
  emit_changed (self, RPE_EXPLORER_CHANGE_CONTENT);
  return TRUE;
}

/* --------------------------------------------------------------- snapshot */

guint64
rpe_explorer_state_get_serial (RpeExplorerState *self)
{
  g_return_val_if_fail (RPE_IS_EXPLORER_STATE (self), 0);
  return self->serial;
}

/* Loaded content of heads x dim (or (N', dim), shared by every head). */
static gboolean
npy_fits (RpeExplorerState *self,
          gsize             heads,
          gsize             dim)
{
  if (self->npy == NULL)
    return FALSE;
  return self->npy_per_head ? self->npy_shape[1] == heads && self->npy_shape[2] == dim
                            : self->npy_shape[1] == dim;
}

/* Whether trained parameters fit a feature width (with the state's P and Lambda). */
static gboolean
trained_fits (RpeExplorerState *self,
              gsize             dim)
{
  RpeLrpeConfig config = { 0 };

  config.dim = dim;
  config.p = self->lrpe_p;
  config.lambda = self->lrpe_lambda;
  return dim > 0 && rpe_lrpe_trained_apply (self->lrpe_trained, &config) == RPE_OK;
}

/* The queries/keys shape (see the header). */
static void
content_shape (RpeExplorerState    *self,
               RpeExplorerSnapshot *s)
{
  /* the window-drawn methods act on the trained modules' model when there are some (an SPE module
   * held from before may have another shape); SPE, exact and linear on the SPE module's */
  gboolean window_method = self->method == RPE_EXPLORER_METHOD_APE || self->method == RPE_EXPLORER_METHOD_LRPE
                           || self->method == RPE_EXPLORER_METHOD_FASTRPB;
  gboolean model = self->trained != NULL && (window_method || !s->have_spe);
  gsize    H = model ? self->trained->heads : s->have_spe ? s->spe.n_heads : 1;
  gsize    D = model ? self->trained->dim : s->have_spe ? s->spe.n_features : 1;

  if (self->method == RPE_EXPLORER_METHOD_LRPE && self->lrpe_use_trained && self->lrpe_trained != NULL)
    {
      gsize npy_d = self->npy != NULL ? self->npy_shape[self->npy_per_head ? 2 : 1] : 0;
      gsize dt = rpe_lrpe_trained_dim (self->lrpe_trained);

      /* loaded content the parameters fit, else the SPE module's shape, else one head of the
       * parameters' width */
      if (npy_d > 0 && trained_fits (self, npy_d))
        {
          H = self->npy_per_head ? self->npy_shape[1] : 1;
          D = npy_d;
        }
      else if (!trained_fits (self, D))
        {
          H = 1;
          /* theta alone: the width whose e holds that many angles */
          D = dt > 0 ? dt : self->lrpe_lambda == RPE_LRPE_LAMBDA_COMPLEX_EXP ? self->lrpe_trained->n_theta
                                                                            : 2 * self->lrpe_trained->n_theta;
        }
    }
  s->content_heads = H;
  s->content_dim = D;
  s->content_head = MIN ((gsize) self->head, H - 1);
}

void
rpe_explorer_state_set_lrpe_trained (RpeExplorerState     *self,
                                     const RpeLrpeTrained *trained,
                                     const char           *source)
{
  gboolean use;

  g_return_if_fail (RPE_IS_EXPLORER_STATE (self));

  rpe_lrpe_trained_free (self->lrpe_trained);
  g_free (self->lrpe_trained_source);
  rpe_spe_params_clear (&self->conv2d);
  g_free (self->conv2d_source);
  self->lrpe_trained = rpe_lrpe_trained_copy (trained);
  self->lrpe_trained_source = trained != NULL ? g_strdup (source != NULL ? source : "trained parameters") : NULL;
  use = trained != NULL;
  g_object_freeze_notify (G_OBJECT (self));
  if (trained != NULL)
    {
      /* P and Lambda as the parameters imply */
      if (trained->v != NULL && self->lrpe_p != RPE_LRPE_P_HOUSEHOLDER)
        {
          self->lrpe_p = RPE_LRPE_P_HOUSEHOLDER;
          g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LRPE_P]);
        }
      if (trained->pi != NULL || trained->theta != NULL)
        {
          RpeLrpeLambda lambda;

          if (trained->pi != NULL)
            lambda = RPE_LRPE_LAMBDA_PERMUTATION;
          else
            {
              gsize d = rpe_lrpe_trained_dim (trained);
              const RpeSpeParams *p = self->have[self->spe_kind] ? &self->modules[self->spe_kind] : NULL;

              if (d == 0 && self->npy != NULL)
                d = self->npy_shape[self->npy_per_head ? 2 : 1];
              if (d == 0 && p != NULL)
                d = p->n_features;
              lambda = rpe_lrpe_implied_lambda (trained->n_theta, d);
            }
          if (self->lrpe_lambda != lambda)
            {
              self->lrpe_lambda = lambda;
              g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LRPE_LAMBDA]);
            }
        }
    }
  if (self->lrpe_use_trained != use)
    {
      self->lrpe_use_trained = use;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LRPE_TRAINED]);
    }
  g_object_thaw_notify (G_OBJECT (self));
  emit_changed (self, RPE_EXPLORER_CHANGE_LRPE);
}

/* Holds trained and sets the two switches (each on only while trained has what it draws), in
 * one "changed": views start one job for it, not one per switch. */
static void
put_trained (RpeExplorerState *self, RpeExplorerTrained *trained, gboolean fastrpb, gboolean ape)
{
  RpeExplorerChange what = 0;

  if (trained != self->trained)
    {
      if (trained != NULL)
        rpe_explorer_trained_ref (trained);
      rpe_explorer_trained_unref (self->trained);
      self->trained = trained;
      what |= RPE_EXPLORER_CHANGE_MODULES | RPE_EXPLORER_CHANGE_FASTRPB;
    }
  fastrpb = fastrpb && trained != NULL && trained->n_fastrpb > 0;
  ape = ape && trained != NULL && trained->ape != NULL;
  g_object_freeze_notify (G_OBJECT (self));
  if (self->fastrpb_use_trained != fastrpb)
    {
      self->fastrpb_use_trained = fastrpb;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FASTRPB_TRAINED]);
      what |= RPE_EXPLORER_CHANGE_FASTRPB;
    }
  if (self->ape_use_trained != ape)
    {
      self->ape_use_trained = ape;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_APE_TRAINED]);
      what |= RPE_EXPLORER_CHANGE_METHOD;
    }
  g_object_thaw_notify (G_OBJECT (self));
  if (what != 0)
    emit_changed (self, what);
}

void
rpe_explorer_state_restore_trained (RpeExplorerState *self, RpeExplorerTrained *trained)
{
  g_return_if_fail (RPE_IS_EXPLORER_STATE (self));
  /* a switch stays on only while there is something to draw */
  put_trained (self, trained, self->fastrpb_use_trained, self->ape_use_trained);
}

void
rpe_explorer_state_set_trained (RpeExplorerState *self, RpeExplorerTrained *trained)
{
  g_return_if_fail (RPE_IS_EXPLORER_STATE (self));
  put_trained (self, trained, TRUE, TRUE);
}

RpeExplorerTrained *
rpe_explorer_state_get_trained (RpeExplorerState *self)
{
  g_return_val_if_fail (RPE_IS_EXPLORER_STATE (self), NULL);
  return self->trained;
}

const RpeLrpeTrained *
rpe_explorer_state_get_lrpe_trained (RpeExplorerState  *self,
                                     const char       **source)
{
  g_return_val_if_fail (RPE_IS_EXPLORER_STATE (self), NULL);
  if (source != NULL)
    *source = self->lrpe_trained_source;
  return self->lrpe_trained;
}

RpeExplorerSnapshot *
rpe_explorer_state_snapshot (RpeExplorerState *self)
{
  SnapshotPrivate *priv;
  RpeExplorerSnapshot *s;

  g_return_val_if_fail (RPE_IS_EXPLORER_STATE (self), NULL);

  priv = g_atomic_rc_box_new0 (SnapshotPrivate);
  s = &priv->public;
  s->serial = self->serial;
  s->method = self->method;
  s->spe_kind = self->spe_kind;
  s->n = self->n;
  s->r = self->r;
  s->seed = self->seed;
  s->causal = self->causal;
  s->feature_map = self->feature_map;
  s->template_kind = self->template_kind;
  s->content = self->content;
  /* a capture of another model than the checkpoint's is never drawn (the views show unit content
   * and the window says why, rpe_explorer_state_check_capture) */
  if (self->capture != NULL
      && (self->model_print == NULL || rpe_capture_check_model (self->capture->capture, self->model_print, NULL, NULL)))
    {
      priv->capture = rpe_explorer_capture_ref (self->capture);
      s->capture = priv->capture->capture;
      s->capture_layer = self->capture_layer;
    }
  s->lrpe_p = self->lrpe_p;
  s->lrpe_lambda = self->lrpe_lambda;
  s->lrpe_theta = self->lrpe_theta;
  s->train_length = self->train_length;
  memcpy (s->fastrpb_w, self->fastrpb_w, sizeof s->fastrpb_w);
  s->layer = self->capture_layer;
  if (self->trained != NULL)
    {
      priv->trained = rpe_explorer_trained_ref (self->trained);
      s->trained = priv->trained;
      s->fastrpb_trained = self->fastrpb_use_trained && self->trained->n_fastrpb > 0;
      s->ape_trained = self->ape_use_trained && self->trained->ape != NULL;
    }

  if (self->have[self->spe_kind]
      && rpe_spe_params_copy (&s->spe, &self->modules[self->spe_kind]) == RPE_OK)
    {
      s->have_spe = TRUE;
      s->head = MIN ((gsize) self->head, s->spe.n_heads - 1);
      s->feature = MIN ((gsize) self->feature, s->spe.n_features - 1);
      s->gated = self->gated && s->spe.gate != NULL;
    }

  s->grid_n1 = self->grid_rows;
  s->grid_n2 = self->grid_cols;
  s->grid_query = MIN ((gsize) self->grid_query, s->grid_n1 * s->grid_n2 - 1);
  if (self->have_conv2d && rpe_spe_params_copy (&s->conv2d, &self->conv2d) == RPE_OK)
    {
      s->have_conv2d = TRUE;
      s->conv2d_head = MIN ((gsize) self->head, s->conv2d.n_heads - 1);
      s->conv2d_feature = MIN ((gsize) self->feature, s->conv2d.n_features - 1);
      s->conv2d_gated = self->gated && s->conv2d.gate != NULL;
    }

  content_shape (self, s);
  if (self->lrpe_use_trained && self->lrpe_trained != NULL)
    s->lrpe_trained = priv->trained_copy = rpe_lrpe_trained_copy (self->lrpe_trained);

  if (self->npy != NULL && npy_fits (self, s->content_heads, s->content_dim))
    {
      gsize count = self->npy_n * (self->npy_per_head ? self->npy_shape[1] * self->npy_shape[2]
                                                      : self->npy_shape[1]);
      RpeStatus status;

      if ((priv->npy_copy = rpe_alloc (count, sizeof (float), &status)) != NULL)
        {
          memcpy (priv->npy_copy, self->npy, count * sizeof (float));
          priv->npy_count = count;
          s->npy_data = priv->npy_copy;
          s->npy_n = self->npy_n;
          s->npy_per_head = self->npy_per_head;
        }
    }
  return s;
}

gsize
rpe_explorer_state_get_length (RpeExplorerState *self)
{
  return self->n;
}

gsize
rpe_explorer_state_get_r (RpeExplorerState *self)
{
  return self->r;
}

gsize
rpe_explorer_state_get_head (RpeExplorerState *self)
{
  return self->head;
}

gsize
rpe_explorer_state_get_feature (RpeExplorerState *self)
{
  return self->feature;
}

RpeSpeMethod
rpe_explorer_state_get_spe_kind (RpeExplorerState *self)
{
  return self->spe_kind;
}

RpeExplorerMethod
rpe_explorer_state_get_method (RpeExplorerState *self)
{
  return self->method;
}

const char *
rpe_explorer_state_get_colormap (RpeExplorerState *self)
{
  return self->colormap;
}

void
rpe_explorer_state_get_color_scale (RpeExplorerState    *self,
                                    RpeHeatmapTransform *transform,
                                    double              *param,
                                    gboolean            *shared)
{
  RpeHeatmapTransform t;

  g_return_if_fail (RPE_IS_EXPLORER_STATE (self));
  t = self->color_scale < RPE_HEATMAP_N_TRANSFORMS ? (RpeHeatmapTransform) self->color_scale
                                                    : RPE_HEATMAP_TRANSFORM_NONE;
  if (transform != NULL)
    *transform = t;
  if (param != NULL)
    *param = t == RPE_HEATMAP_TRANSFORM_POWER ? self->color_gamma
             : t == RPE_HEATMAP_TRANSFORM_PERCENTILE ? self->color_percentile : 0.0;
  if (shared != NULL)
    *shared = self->color_range == RPE_COLOR_RANGE_SHARED;
}

void
rpe_explorer_state_apply_color_scale (RpeExplorerState *self,
                                      RpeHeatmapData   *data,
                                      gboolean          attention)
{
  RpeHeatmapTransform t;
  double param;

  g_return_if_fail (RPE_IS_EXPLORER_STATE (self));
  rpe_explorer_state_get_color_scale (self, &t, &param, NULL);
  if (t == RPE_HEATMAP_TRANSFORM_ATTENTION && !attention)
    {
      t = RPE_HEATMAP_TRANSFORM_NONE;
      param = 0.0;
    }
  data->transform = t;
  data->transform_param = param;
}

const float *
rpe_explorer_state_get_npy_content (RpeExplorerState *self,
                                    gsize            *ndim,
                                    gsize             shape[3])
{
  g_return_val_if_fail (RPE_IS_EXPLORER_STATE (self), NULL);
  if (ndim != NULL)
    *ndim = self->npy == NULL ? 0 : self->npy_per_head ? 3 : 2;
  if (shape != NULL)
    memcpy (shape, self->npy_shape, sizeof self->npy_shape);
  return self->npy;
}

void
rpe_explorer_state_clear_npy_content (RpeExplorerState *self)
{
  g_return_if_fail (RPE_IS_EXPLORER_STATE (self));
  if (self->npy == NULL)
    return;
  g_clear_pointer (&self->npy, rpe_free);
  self->npy_n = 0;
  self->npy_per_head = FALSE;
  memset (self->npy_shape, 0, sizeof self->npy_shape);
  emit_changed (self, RPE_EXPLORER_CHANGE_CONTENT);
}

/* ----------------------------------------------------------------- captures */

static void
explorer_capture_clear (gpointer data)
{
  RpeExplorerCapture *c = data;

  rpe_capture_free (c->capture);
  g_free (c->path);
  g_free (c->sha256);
}

RpeExplorerCapture *
rpe_explorer_capture_new (RpeCapture *capture,
                          const char *path,
                          const char *sha256)
{
  RpeExplorerCapture *c;

  g_return_val_if_fail (capture != NULL, NULL);
  c = g_atomic_rc_box_new0 (RpeExplorerCapture);
  c->capture = capture;
  c->path = g_strdup (path != NULL ? path : rpe_capture_name (capture));
  c->sha256 = g_strdup (sha256);
  return c;
}

RpeExplorerCapture *
rpe_explorer_capture_ref (RpeExplorerCapture *capture)
{
  g_return_val_if_fail (capture != NULL, NULL);
  return g_atomic_rc_box_acquire (capture);
}

void
rpe_explorer_capture_unref (RpeExplorerCapture *capture)
{
  if (capture != NULL)
    g_atomic_rc_box_release_full (capture, explorer_capture_clear);
}

/* The hex SHA-256 of a file, read in blocks. */
static char *
file_sha256 (const char  *path,
             GError     **error)
{
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autoptr (GFileInputStream) in = g_file_read (file, NULL, error);
  g_autoptr (GChecksum) sum = NULL;
  guint8 buffer[65536];
  gssize got;

  if (in == NULL)
    return NULL;
  sum = g_checksum_new (G_CHECKSUM_SHA256);
  while ((got = g_input_stream_read (G_INPUT_STREAM (in), buffer, sizeof buffer, NULL, error)) > 0)
    g_checksum_update (sum, buffer, (gsize) got);
  if (got < 0)
    return NULL;
  return g_strdup (g_checksum_get_string (sum));
}

void
rpe_explorer_capture_open_in_task (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  GError             *error = NULL;
  RpeExplorerCapture *capture = rpe_explorer_capture_open (task_data, &error);

  if (capture == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, capture, (GDestroyNotify) rpe_explorer_capture_unref);
}

RpeExplorerCapture *
rpe_explorer_capture_open (const char  *path_or_demo,
                           GError     **error)
{
  g_autoptr (RpeCapture) capture = NULL;
  g_autofree char *sha = NULL;

  g_return_val_if_fail (path_or_demo != NULL, NULL);
  capture = rpe_capture_open (path_or_demo, error);
  if (capture == NULL)
    return NULL;
  /* a file is hashed (sessions record it like a checkpoint); a shipped demo capture is not */
  if (g_file_test (path_or_demo, G_FILE_TEST_IS_REGULAR) && (sha = file_sha256 (path_or_demo, error)) == NULL)
    return NULL;
  return rpe_explorer_capture_new (g_steal_pointer (&capture), path_or_demo, sha);
}

gboolean
rpe_explorer_state_check_capture (RpeExplorerState   *self,
                                  RpeExplorerCapture *capture,
                                  guint               layer,
                                  GError            **error)
{
  const RpeSpeParams *p;

  g_return_val_if_fail (RPE_IS_EXPLORER_STATE (self), FALSE);
  g_return_val_if_fail (capture != NULL, FALSE);
  p = self->have[self->spe_kind] ? &self->modules[self->spe_kind] : NULL;
  return rpe_explorer_capture_check_trained (capture, layer, self->model_print, p, self->trained, error);
}

gboolean
rpe_explorer_capture_check (RpeExplorerCapture  *capture,
                            guint                layer,
                            const RpeModelPrint *print,
                            const RpeSpeParams  *p,
                            GError             **error)
{
  return rpe_explorer_capture_check_trained (capture, layer, print, p, NULL, error);
}

gboolean
rpe_explorer_capture_check_trained (RpeExplorerCapture       *capture,
                                    guint                     layer,
                                    const RpeModelPrint      *print,
                                    const RpeSpeParams       *p,
                                    const RpeExplorerTrained *trained,
                                    GError                  **error)
{
  const RpeTensor *q;
  g_autofree char *base = NULL;
  gsize heads, dim;

  g_return_val_if_fail (capture != NULL, FALSE);
  base = g_path_get_basename (capture->path);
  q = rpe_capture_get (capture->capture, layer, RPE_CAPTURE_QUERIES);
  if (q == NULL)
    {
      g_autofree char *list = rpe_capture_layer_list (capture->capture);

      return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                            "%s has no layer %u (its layers: %s)", base, layer, list);
    }
  /* a capture of another model than the checkpoint's is refused before anything is drawn */
  if (print != NULL && !rpe_capture_check_model (capture->capture, print, NULL, error))
    return FALSE;
  if (p == NULL && trained == NULL)
    return rpe_set_error (error, RPE_ERROR_NOT_FOUND, "there is no module to apply the capture %s to", base);
  /* the trained modules' model (H, D), else the SPE module's */
  heads = trained != NULL ? trained->heads : p->n_heads;
  dim = trained != NULL ? trained->dim : p->n_features;
  if ((q->ndim != 3 || q->shape[1] != heads || q->shape[2] != dim)
      && (p == NULL || q->ndim != 3 || q->shape[1] != p->n_heads || q->shape[2] != p->n_features))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          "%s, layer %u: queries of shape (N, H, D) = (%zu, %zu, %zu) do not fit the module "
                          "of (H, D) = (%zu, %zu) (a capture of another model?)",
                          base, layer, (size_t) q->shape[0], (size_t) (q->ndim > 1 ? q->shape[1] : 0),
                          (size_t) (q->ndim > 2 ? q->shape[2] : 0), (size_t) heads, (size_t) dim);
  if (q->shape[0] < 2 || q->shape[0] > RPE_EXPLORER_MAX_LENGTH)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          "%s, layer %u: N = %zu positions; the explorer draws 2 to %d", base, layer,
                          (size_t) q->shape[0], RPE_EXPLORER_MAX_LENGTH);
  return TRUE;
}

gboolean
rpe_explorer_state_set_capture (RpeExplorerState   *self,
                                RpeExplorerCapture *capture,
                                guint               layer,
                                GError            **error)
{
  RpeExplorerChange what = RPE_EXPLORER_CHANGE_CONTENT;
  guint n;

  g_return_val_if_fail (RPE_IS_EXPLORER_STATE (self), FALSE);
  if (capture == NULL)
    {
      if (self->capture == NULL)
        return TRUE;
      g_clear_pointer (&self->capture, rpe_explorer_capture_unref);
      if (self->content == RPE_CONTENT_CAPTURE)
        {
          self->content = RPE_CONTENT_UNIT;
          g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CONTENT]);
        }
      emit_changed (self, RPE_EXPLORER_CHANGE_CONTENT);
      return TRUE;
    }
  if (!rpe_explorer_state_check_capture (self, capture, layer, error))
    return FALSE;
  n = (guint) rpe_capture_get (capture->capture, layer, RPE_CAPTURE_QUERIES)->shape[0];
  rpe_explorer_capture_ref (capture);
  rpe_explorer_capture_unref (self->capture);
  self->capture = capture;
  g_object_freeze_notify (G_OBJECT (self));
  if (self->content != RPE_CONTENT_CAPTURE)
    {
      self->content = RPE_CONTENT_CAPTURE;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CONTENT]);
    }
  if (self->capture_layer != layer)
    {
      self->capture_layer = layer;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CAPTURE_LAYER]);
    }
  if (self->n != n)
    {
      self->n = n;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LENGTH]);
      what |= RPE_EXPLORER_CHANGE_LENGTH;
    }
  g_object_thaw_notify (G_OBJECT (self));
  emit_changed (self, what);
  return TRUE;
}

void
rpe_explorer_state_restore_capture (RpeExplorerState   *self,
                                    RpeExplorerCapture *capture)
{
  g_return_if_fail (RPE_IS_EXPLORER_STATE (self));
  if (self->capture == capture)
    return;
  if (capture != NULL)
    rpe_explorer_capture_ref (capture);
  rpe_explorer_capture_unref (self->capture);
  self->capture = capture;
  emit_changed (self, RPE_EXPLORER_CHANGE_CONTENT);
}

void
rpe_explorer_state_set_model_print (RpeExplorerState *self, RpeModelPrint *print)
{
  g_return_if_fail (RPE_IS_EXPLORER_STATE (self));
  if (print == self->model_print)
    return;
  if (print != NULL)
    rpe_model_print_ref (print);
  rpe_model_print_unref (self->model_print);
  self->model_print = print;
  if (self->capture != NULL)
    emit_changed (self, RPE_EXPLORER_CHANGE_CONTENT);
}

RpeModelPrint *
rpe_explorer_state_get_model_print (RpeExplorerState *self)
{
  g_return_val_if_fail (RPE_IS_EXPLORER_STATE (self), NULL);
  return self->model_print;
}

RpeExplorerCapture *
rpe_explorer_state_get_capture (RpeExplorerState *self)
{
  g_return_val_if_fail (RPE_IS_EXPLORER_STATE (self), NULL);
  return self->capture;
}

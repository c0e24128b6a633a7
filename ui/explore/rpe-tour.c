/* rpe-tour.c: the guided tour's steps and its memento (see rpe-tour.h). */
#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "rpe-tour.h"

/* ------------------------------------------------------------------ steps */

/* The tour's own look, whatever the person had (a log scale turns step 1's bands into stripes):
 * linear colours on one shared range.  Leaving the tour restores theirs. */
static void
tour_look (RpeExplorerState *s)
{
  g_object_set (s, "color-scale", (guint) RPE_HEATMAP_TRANSFORM_NONE, "color-range", (guint) RPE_COLOR_RANGE_SHARED,
                "colormap", "viridis", NULL);
}

static void
templates_setup (RpeExplorerState *s)
{
  tour_look (s);
  g_object_set (s, "spe-kind", RPE_SPE_CONV, "template-kind", RPE_TEMPLATE_ANALYTIC, "length", 48,
                "train-length", 64, "gated", FALSE, NULL);
}

static void
templates_show (RpeExplorerState *s)
{
  g_object_set (s, "gated", TRUE, NULL);
}

static void
estimate_setup (RpeExplorerState *s)
{
  tour_look (s);
  g_object_set (s, "spe-kind", RPE_SPE_SINE, "length", 64, "realizations", 4, NULL);
}

static void
estimate_show (RpeExplorerState *s)
{
  g_object_set (s, "realizations", 256, NULL);
}

static void
causal_setup (RpeExplorerState *s)
{
  tour_look (s);
  g_object_set (s, "method", RPE_EXPLORER_METHOD_EXACT, "length", 64, "causal", FALSE,
                "content", RPE_CONTENT_RANDOM, NULL);
}

static void
causal_show (RpeExplorerState *s)
{
  g_object_set (s, "causal", TRUE, NULL);
}

static void
extrapolation_setup (RpeExplorerState *s)
{
  tour_look (s);
  g_object_set (s, "train-length", 64, "length", 64, "content", RPE_CONTENT_UNIT, NULL);
}

static void
extrapolation_show (RpeExplorerState *s)
{
  g_object_set (s, "length", 256, NULL);
}

static void
lrpe_setup (RpeExplorerState *s)
{
  tour_look (s);
  g_object_set (s, "method", RPE_EXPLORER_METHOD_APE, "length", 64, "causal", FALSE,
                "content", RPE_CONTENT_UNIT, "lrpe-p", RPE_LRPE_P_IDENTITY, "lrpe-lambda", RPE_LRPE_LAMBDA_ROTATION,
                "lrpe-theta", RPE_LRPE_THETA_A, NULL);
}

static void
lrpe_show (RpeExplorerState *s)
{
  g_object_set (s, "method", RPE_EXPLORER_METHOD_LRPE, NULL);
}

static void
fastrpb_setup (RpeExplorerState *s)
{
  float w[2 * RPE_EXPLORER_FASTRPB_TAPS - 1] = { 0 };

  tour_look (s);
  rpe_explorer_state_set_fastrpb_weights (s, w, G_N_ELEMENTS (w));
  g_object_set (s, "method", RPE_EXPLORER_METHOD_FASTRPB, "length", 64, "causal", FALSE,
                "content", RPE_CONTENT_RANDOM, NULL);
}

static void
fastrpb_show (RpeExplorerState *s)
{
  float w[2 * RPE_EXPLORER_FASTRPB_TAPS - 1] = { 0 };

  w[RPE_EXPLORER_FASTRPB_TAPS - 1 + 3] = 4.0f;   /* tau = m - n = 3 */
  rpe_explorer_state_set_fastrpb_weights (s, w, G_N_ELEMENTS (w));
}

/* The texts are N_() marked Pango markup: rpe-tour-bar.c translates them as it shows them. */
static const RpeTourStep steps[] = {
  { N_("Templates of a trained model"), "demo:conv-spe", 0, N_("Model"),
    N_("This conv SPE model was trained to copy the token 3 positions back. Each cell is one feature's "
       "template P̃<sub>d</sub>(m, n). The gate is off now. Predict: when the trained gate is switched on, does the "
       "template keep its shape, or is something added everywhere?"),
    N_("Gating mixes the template with a constant: P̃ = (1 − g) P + g. The shape of P (its bands along "
       "m − n, where the model looks back) stays; the whole cell is lifted by g."),
    templates_setup, templates_show },
  { N_("The estimate sharpens with R"), "demo:sine-spe", 3, N_("Sequence"),
    N_("SPE never forms the exact relative logits: it draws R random codes whose products estimate "
       "them. With R = 4 the middle panel is noisy. Predict: what happens to it, and to the difference on "
       "the right, when R grows to 256?"),
    N_("The estimate approaches exact RPE, and the difference fades: its error falls like 1/√R, the "
       "curve at the bottom (R marked)."),
    estimate_setup, estimate_show },
  { N_("Causal masking"), NULL, 1, N_("Sequence"),
    N_("A decoder may not look at later tokens. Predict: which part of the attention map becomes zero "
       "when causal masking is switched on?"),
    N_("The upper triangle: keys after the query (n > m) get weight 0, and each row's weight is "
       "spread over the keys up to m only."),
    causal_setup, causal_show },
  { N_("Beyond the training length"), NULL, 2, N_("Sequence"),
    N_("The model was trained on sequences of N<sub>train</sub> = 64 tokens. Predict: when we evaluate at 256, "
       "which curves keep behaving as before N<sub>train</sub>: the absolute encoding's or the relative ones'?"),
    N_("SPE's curves stay flat beyond the dashed N<sub>train</sub> line: a relative encoding depends only on "
       "m − n. Absolute encodings depend on m itself (for the trained demos, `rpe curves extrapolation "
       "--checkpoint demo:ape` shows the learned APE's break at N<sub>train</sub>)."),
    extrapolation_setup, extrapolation_show },
  { N_("LRPE with rotations is RoPE"), NULL, 1, "LRPE",
    N_("This is absolute (sinusoidal) attention on identical tokens: it changes along the diagonal. "
       "LRPE with identity P, rotation Λ and θ of type a is RoPE. Predict: with it, does the map depend "
       "on m and n, or only on m − n?"),
    N_("Only on m − n: every diagonal is constant, by the identity (Λ(s)Pq)ᴴ(Λ(t)Pk) = qᴴPᴴΛ(t − s)Pk."),
    lrpe_setup, lrpe_show },
  { N_("FastRPB's additive bias"), NULL, 1, "FastRPB",
    N_("FastRPB adds a Toeplitz bias W[m, n] = w(m − n) to the logits. All weights are 0 now. Predict: "
       "what appears in the map when w is large at τ = 3 only?"),
    N_("A bright diagonal three below the main one: every query attends to the token 3 back, the "
       "copy task's pattern, computed with FFTs without forming W."),
    fastrpb_setup, fastrpb_show },
};

const RpeTourStep *
rpe_tour_get_steps (guint *n_steps)
{
  *n_steps = G_N_ELEMENTS (steps);
  return steps;
}

/* ---------------------------------------------------------------- memento */

struct _RpeTourMemento
{
  guint         view;
  GArray       *names;     /* const char * (the pspec names, static) */
  GArray       *values;    /* GValue */
  gboolean      have[2];
  RpeSpeParams  params[2];
  char         *sources[2];
  float        *fastrpb;
  gsize         fastrpb_count;
};

static gboolean
restorable (GParamSpec *pspec)
{
  return (pspec->flags & G_PARAM_READWRITE) == G_PARAM_READWRITE
         && (pspec->flags & (G_PARAM_CONSTRUCT_ONLY | G_PARAM_DEPRECATED)) == 0;
}

RpeTourMemento *
rpe_tour_memento_save (RpeExplorerState *state,
                       guint             view)
{
  RpeTourMemento *m = g_new0 (RpeTourMemento, 1);
  guint n_props = 0;
  g_autofree GParamSpec **props = g_object_class_list_properties (G_OBJECT_GET_CLASS (state), &n_props);
  const float *w;

  m->view = view;
  m->names = g_array_new (FALSE, FALSE, sizeof (const char *));
  m->values = g_array_new (FALSE, TRUE, sizeof (GValue));
  g_array_set_clear_func (m->values, (GDestroyNotify) g_value_unset);
  for (guint i = 0; i < n_props; i++)
    {
      GValue value = G_VALUE_INIT;

      if (!restorable (props[i]))
        continue;
      g_value_init (&value, props[i]->value_type);
      g_object_get_property (G_OBJECT (state), props[i]->name, &value);
      g_array_append_val (m->names, props[i]->name);
      g_array_append_val (m->values, value);
    }
  for (int k = 0; k < 2; k++)
    {
      const RpeSpeParams *p = rpe_explorer_state_get_params (state, (RpeSpeMethod) k);

      m->have[k] = p != NULL && rpe_spe_params_copy (&m->params[k], p) == RPE_OK;
      m->sources[k] = g_strdup (rpe_explorer_state_get_source (state, (RpeSpeMethod) k));
    }
  w = rpe_explorer_state_get_fastrpb_weights (state, &m->fastrpb_count);
  m->fastrpb = g_memdup2 (w, m->fastrpb_count * sizeof (float));
  return m;
}

void
rpe_tour_memento_restore (const RpeTourMemento *m,
                          RpeExplorerState     *state)
{
  g_object_freeze_notify (G_OBJECT (state));
  /* the modules first: they clamp head and feature, which the properties then set */
  rpe_explorer_state_set_modules (state, m->have[0] ? &m->params[0] : NULL, m->sources[0],
                                  m->have[1] ? &m->params[1] : NULL, m->sources[1], NULL);
  rpe_explorer_state_set_fastrpb_weights (state, m->fastrpb, m->fastrpb_count);
  for (guint i = 0; i < m->names->len; i++)
    g_object_set_property (G_OBJECT (state), g_array_index (m->names, const char *, i),
                           &g_array_index (m->values, GValue, i));
  g_object_thaw_notify (G_OBJECT (state));
}

guint
rpe_tour_memento_view (const RpeTourMemento *m)
{
  return m->view;
}

static gboolean
params_equal (const RpeSpeParams *a,
              const RpeSpeParams *b)
{
  gsize hd, count;

  if (a->method != b->method || a->n_heads != b->n_heads || a->n_features != b->n_features
      || a->n_sines != b->n_sines || a->kernel != b->kernel || a->kernel_cols != b->kernel_cols
      || (a->gate == NULL) != (b->gate == NULL))
    return FALSE;
  hd = a->n_heads * a->n_features;
  if (a->gate != NULL && memcmp (a->gate, b->gate, hd * sizeof (float)) != 0)
    return FALSE;
  if (a->method == RPE_SPE_SINE)
    {
      count = hd * a->n_sines * sizeof (float);
      return memcmp (a->freqs, b->freqs, count) == 0 && memcmp (a->offsets, b->offsets, count) == 0
             && memcmp (a->gains, b->gains, count) == 0;
    }
  count = hd * a->kernel * (a->kernel_cols ? a->kernel_cols : 1) * sizeof (float);
  return memcmp (a->wq, b->wq, count) == 0 && memcmp (a->wk, b->wk, count) == 0;
}

gboolean
rpe_tour_memento_matches (const RpeTourMemento *m,
                          RpeExplorerState     *state)
{
  gsize count = 0;
  const float *w = rpe_explorer_state_get_fastrpb_weights (state, &count);

  for (guint i = 0; i < m->names->len; i++)
    {
      const GValue *saved = &g_array_index (m->values, GValue, i);
      GValue now = G_VALUE_INIT;
      gboolean same;

      g_value_init (&now, G_VALUE_TYPE (saved));
      g_object_get_property (G_OBJECT (state), g_array_index (m->names, const char *, i), &now);
      same = g_param_values_cmp (g_object_class_find_property (G_OBJECT_GET_CLASS (state),
                                                               g_array_index (m->names, const char *, i)),
                                 saved, &now) == 0;
      g_value_unset (&now);
      if (!same)
        return FALSE;
    }
  for (int k = 0; k < 2; k++)
    {
      const RpeSpeParams *p = rpe_explorer_state_get_params (state, (RpeSpeMethod) k);

      if ((p != NULL) != m->have[k] || (p != NULL && !params_equal (p, &m->params[k])))
        return FALSE;
    }
  return count == m->fastrpb_count && memcmp (w, m->fastrpb, count * sizeof (float)) == 0;
}

void
rpe_tour_memento_free (RpeTourMemento *m)
{
  if (m == NULL)
    return;
  g_array_unref (m->names);
  g_array_unref (m->values);
  for (int k = 0; k < 2; k++)
    {
      rpe_spe_params_clear (&m->params[k]);
      g_free (m->sources[k]);
    }
  g_free (m->fastrpb);
  g_free (m);
}

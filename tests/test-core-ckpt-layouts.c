/* Checkpoints in the SPE authors' module layouts (tests/fixtures/make-checkpoint-fixtures.py):
 * discovery, gate pairing and the gated templates they mean, each compared with
 * docs/math.md, sections 1-3 computed here from the raw tensors. */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib.h>

#include "rpe-alloc.h"
#include "rpe-checkpoint.h"
#include "rpe-checkpoint-lrpe.h"
#include "rpe-error.h"
#include "rpe-npy.h"
#include "rpe-test-utils.h"

#define N 12

static RpeTensorSet *
read_fixture (const char *file)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "fixtures", "ckpt", file, NULL);
  g_autoptr (GError) error = NULL;
  RpeTensorSet *set = rpe_checkpoint_read (path, &error);

  g_assert_no_error (error);
  g_assert_nonnull (set);
  return set;
}

static const RpeTensor *
tensor (const RpeTensorSet *set,
        const char         *name)
{
  const RpeTensor *t = rpe_tensor_set_lookup (set, name);

  if (t == NULL)
    g_error ("the fixture has no tensor '%s'", name);
  return t;
}

static double
ref_sigmoid (double x)
{
  return 1.0 / (1.0 + exp (-x));
}

/* docs/math.md, sections 1 and 3, naively: the gated lag profile of (h, d) from the raw tensors
 * (gate NULL: ungated); out[i] = Ptilde(tau = i - (N-1)). */
static void
ref_sine_lags (const RpeTensor *freqs,
               const RpeTensor *offsets,
               const RpeTensor *gains,
               const RpeTensor *gate,
               gboolean         flax_gate,
               gsize            h,
               gsize            d,
               double          *out)
{
  gsize D = freqs->shape[1], K = freqs->shape[2];

  for (int i = 0; i < 2 * N - 1; i++)
    {
      double tau = i - (N - 1), p = 0;

      for (gsize k = 0; k < K; k++)
        {
          gsize at = (h * D + d) * K + k;
          double f = ref_sigmoid (freqs->data[at]) / 2, lambda = log (1 + exp (gains->data[at]));
          p += lambda * lambda * cos (2 * G_PI * f * tau + offsets->data[at]);
        }
      p /= 2.0 * (double) K;
      if (gate != NULL)
        {
          double raw = gate->data[h * D + d];
          double g = flax_gate ? 1 - ref_sigmoid (raw) : ref_sigmoid (raw);
          p = (1 - g) * p + g;
        }
      out[i] = p;
    }
}

/* docs/math.md, sections 2 and 3: P_c(tau) = sum_j wq[c, j] wk[c, j + tau], wq = conv_k.weight
 * (C, 1, L), wk = conv_q.weight. */
static void
ref_conv_lags (const RpeTensor *conv_q,
               const RpeTensor *conv_k,
               const RpeTensor *gate,
               gsize            c,
               double          *out)
{
  gsize L = conv_q->shape[2];

  for (int i = 0; i < 2 * N - 1; i++)
    {
      int tau = i - (N - 1);
      double p = 0;

      for (int j = 0; j < (int) L; j++)
        if (j + tau >= 0 && j + tau < (int) L)
          p += (double) conv_k->data[c * L + (gsize) j] * conv_q->data[c * L + (gsize) (j + tau)];
      if (gate != NULL)
        {
          double g = ref_sigmoid (gate->data[c]);
          p = (1 - g) * p + g;
        }
      out[i] = p;
    }
}

/* Every (h, d) of the loaded module's gated template against the reference. */
static void
check_sine (const RpeSpeParams *p,
            const RpeTensorSet *set,
            const char         *code_dir,
            const char         *gate_name)
{
  g_autofree char *fn = g_strdup_printf ("%s.freqs", code_dir);
  g_autofree char *on = g_strdup_printf ("%s.offsets", code_dir);
  g_autofree char *gn = g_strdup_printf ("%s.gains", code_dir);
  const RpeTensor *f = tensor (set, fn), *o = tensor (set, on), *g = tensor (set, gn);
  const RpeTensor *gate = gate_name != NULL ? tensor (set, gate_name) : NULL;

  g_assert_cmpint (p->method, ==, RPE_SPE_SINE);
  g_assert_cmpuint (p->n_heads, ==, f->shape[0]);
  g_assert_cmpuint (p->n_features, ==, f->shape[1]);
  g_assert_true ((p->gate != NULL) == (gate != NULL));
  for (gsize h = 0; h < p->n_heads; h++)
    for (gsize d = 0; d < p->n_features; d++)
      {
        double ref[2 * N - 1];
        float got[2 * N - 1];

        ref_sine_lags (f, o, g, gate, FALSE, h, d, ref);
        g_assert_cmpint (rpe_spe_template_lags (p, h, d, N, true, got), ==, RPE_OK);
        g_assert_cmpfloat (rpe_test_max_abs_err (got, ref, 2 * N - 1), <, 2e-6);
      }
}

static void
check_conv (const RpeSpeParams *p,
            const RpeTensorSet *set,
            const char         *code_dir,
            const char         *gate_name)
{
  g_autofree char *qn = g_strdup_printf ("%s.conv_q.weight", code_dir);
  g_autofree char *kn = g_strdup_printf ("%s.conv_k.weight", code_dir);
  const RpeTensor *q = tensor (set, qn), *k = tensor (set, kn);
  const RpeTensor *gate = gate_name != NULL ? tensor (set, gate_name) : NULL;

  g_assert_cmpint (p->method, ==, RPE_SPE_CONV);
  g_assert_cmpuint (p->n_heads * p->n_features, ==, q->shape[0]);
  if (gate != NULL)
    {
      g_assert_cmpuint (p->n_heads, ==, gate->shape[0]);
      g_assert_cmpuint (p->n_features, ==, gate->shape[1]);
    }
  g_assert_true ((p->gate != NULL) == (gate != NULL));
  for (gsize c = 0; c < q->shape[0]; c++)
    {
      double ref[2 * N - 1];
      float got[2 * N - 1];

      ref_conv_lags (q, k, gate, c, ref);
      g_assert_cmpint (rpe_spe_template_lags (p, c / p->n_features, c % p->n_features, N, true, got), ==, RPE_OK);
      g_assert_cmpfloat (rpe_test_max_abs_err (got, ref, 2 * N - 1), <, 2e-6);
    }
}

static void
load (const RpeTensorSet *set,
      const char         *prefix,
      int                 layer,
      RpeSpeParams       *p,
      char              **note)
{
  g_autoptr (GError) error = NULL;
  RpeSpeSelection sel = RPE_SPE_SELECTION_INIT;

  sel.prefix = prefix;
  sel.layer = layer;
  if (!rpe_checkpoint_load_spe_full (set, &sel, p, note, &error))
    g_error ("load (%s, %d): %s", prefix ? prefix : "NULL", layer, error->message);
}

static void
assert_contains (const char *haystack,
                 const char *needle)
{
  if (haystack == NULL || strstr (haystack, needle) == NULL)
    g_error ("'%s' lacks '%s'", haystack ? haystack : "(null)", needle);
}

/* One code, one filter shared by every layer (share_spe_filter=True): the gate
 * used at any layer is encoder.spe_filters.gate (issue 10: it was dropped). */
static void
test_shared_filter (void)
{
  g_autoptr (RpeTensorSet) set = read_fixture ("spe-shared.pt");
  g_autoptr (GPtrArray) mods = rpe_checkpoint_find_modules (set);
  const RpeSpeModuleInfo *info;
  RpeSpeParams p;
  char *note = NULL;

  g_assert_cmpuint (mods->len, ==, 1);
  info = g_ptr_array_index (mods, 0);
  g_assert_cmpstr (info->prefix, ==, "encoder");
  g_assert_cmpuint (info->gates->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (info->gates, 0), ==, "encoder.spe_filters.gate");
  g_assert_cmpint (g_array_index (info->gate_layers, int, 0), ==, -1);
  for (int layer = -1; layer < 3; layer++)
    {
      load (set, NULL, layer, &p, &note);
      g_assert_null (note);
      check_sine (&p, set, "encoder.spe", "encoder.spe_filters.gate");
      rpe_spe_params_clear (&p);
    }
}

/* One code, one filter per layer: --layer 1 gives (1 - g1) P + g1 with layer 1's gate. */
static void
test_per_layer_filters (void)
{
  g_autoptr (RpeTensorSet) set = read_fixture ("spe-per-layer.pt");
  g_autoptr (GPtrArray) mods = rpe_checkpoint_find_modules (set);
  const RpeSpeModuleInfo *info;
  RpeSpeParams p;
  char *note = NULL;

  g_assert_cmpuint (mods->len, ==, 1);
  info = g_ptr_array_index (mods, 0);
  g_assert_cmpstr (info->convention, ==, "pytorch");
  g_assert_cmpuint (info->layers->len, ==, 3);
  g_assert_cmpuint (info->gates->len, ==, 3);
  for (int layer = 0; layer < 3; layer++)
    {
      g_autofree char *gate = g_strdup_printf ("encoder.spe_filters.%d.gate", layer);
      g_assert_cmpstr (g_ptr_array_index (info->gates, layer), ==, gate);
      load (set, "encoder", layer, &p, &note);
      g_assert_null (note);
      check_sine (&p, set, "encoder.spe", gate);
      rpe_spe_params_clear (&p);
    }
  /* the layer 1 case spelled out: not the ungated template, not layer 0's gate */
  {
    const RpeTensor *f = tensor (set, "encoder.spe.freqs"), *o = tensor (set, "encoder.spe.offsets");
    const RpeTensor *g = tensor (set, "encoder.spe.gains"), *g1 = tensor (set, "encoder.spe_filters.1.gate");
    double plain[2 * N - 1];
    float got[2 * N - 1];

    load (set, NULL, 1, &p, NULL);
    ref_sine_lags (f, o, g, NULL, FALSE, 1, 2, plain);
    g_assert_cmpint (rpe_spe_template_lags (&p, 1, 2, N, true, got), ==, RPE_OK);
    for (int i = 0; i < 2 * N - 1; i++)
      {
        double g1v = ref_sigmoid (g1->data[1 * 3 + 2]);
        g_assert_cmpfloat (fabs (got[i] - ((1 - g1v) * plain[i] + g1v)), <, 2e-6);
      }
    rpe_spe_params_clear (&p);
  }
  /* none chosen: the first, and the user is told */
  load (set, NULL, -1, &p, &note);
  check_sine (&p, set, "encoder.spe", "encoder.spe_filters.0.gate");
  assert_contains (note, "layers 0, 1, 2");
  assert_contains (note, "encoder.spe_filters.0.gate");
  g_free (note);
  rpe_spe_params_clear (&p);
  /* a layer without a gate */
  {
    g_autoptr (GError) error = NULL;
    g_assert_false (rpe_checkpoint_load_spe (set, NULL, 3, &p, &error));
    g_assert_error (error, RPE_ERROR, RPE_ERROR_NOT_FOUND);
    assert_contains (error->message, "0, 1, 2");
  }
}

/* The README's names (spe_encoder, spe_filter), in .pt and .safetensors. */
static void
test_readme_names (void)
{
  const char *files[] = { "spe-readme.pt", "spe-readme.safetensors" };

  for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autoptr (RpeTensorSet) set = read_fixture (files[i]);
      g_autoptr (GPtrArray) mods = rpe_checkpoint_find_modules (set);
      RpeSpeParams p;

      g_assert_cmpuint (mods->len, ==, 1);
      g_assert_cmpstr (((RpeSpeModuleInfo *) g_ptr_array_index (mods, 0))->prefix, ==, "spe_encoder");
      load (set, "spe_encoder", -1, &p, NULL);
      check_sine (&p, set, "spe_encoder", "spe_filter.gate");
      rpe_spe_params_clear (&p);
      load (set, NULL, 4, &p, NULL);
      check_sine (&p, set, "spe_encoder", "spe_filter.gate");
      rpe_spe_params_clear (&p);
    }
}

/* nn.DataParallel's module. wrapper around a conv model with per-layer filters. */
static void
test_wrapped_conv (void)
{
  g_autoptr (RpeTensorSet) set = read_fixture ("spe-wrapped.pt");
  g_autoptr (GPtrArray) mods = rpe_checkpoint_find_modules (set);
  const RpeSpeModuleInfo *info;
  RpeSpeParams p;

  g_assert_cmpuint (mods->len, ==, 1);
  info = g_ptr_array_index (mods, 0);
  g_assert_cmpstr (info->prefix, ==, "module.encoder");
  g_assert_cmpuint (info->n_heads, ==, 2);
  g_assert_cmpuint (info->n_features, ==, 3);
  for (int layer = 0; layer < 2; layer++)
    {
      g_autofree char *gate = g_strdup_printf ("module.encoder.spe_filters.%d.gate", layer);
      /* the prefix with or without the wrapper */
      load (set, layer == 0 ? "encoder" : "module.encoder", layer, &p, NULL);
      check_conv (&p, set, "module.encoder.spe", gate);
      rpe_spe_params_clear (&p);
    }
}

/* One code and one filter per layer (spe.<l>.freqs): --layer picks both. */
static void
test_unshared (void)
{
  g_autoptr (RpeTensorSet) set = read_fixture ("spe-unshared.pt");
  g_autoptr (GPtrArray) mods = rpe_checkpoint_find_modules (set);
  const RpeSpeModuleInfo *info;
  RpeSpeParams p;
  char *note = NULL;

  g_assert_cmpuint (mods->len, ==, 1);
  info = g_ptr_array_index (mods, 0);
  g_assert_cmpstr (info->prefix, ==, "encoder");
  g_assert_cmpstr (info->convention, ==, "pytorch-unshared");
  g_assert_cmpuint (info->layers->len, ==, 3);
  for (int layer = 0; layer < 3; layer++)
    {
      g_autofree char *code = g_strdup_printf ("encoder.spe.%d", layer);
      g_autofree char *gate = g_strdup_printf ("encoder.spe_filters.%d.gate", layer);
      load (set, "encoder", layer, &p, NULL);
      check_sine (&p, set, code, gate);
      rpe_spe_params_clear (&p);
      /* one layer's path as the prefix picks that layer */
      load (set, code, -1, &p, NULL);
      check_sine (&p, set, code, gate);
      rpe_spe_params_clear (&p);
    }
  load (set, NULL, -1, &p, &note);
  check_sine (&p, set, "encoder.spe.0", "encoder.spe_filters.0.gate");
  assert_contains (note, "one code per layer");
  g_free (note);
  rpe_spe_params_clear (&p);
}

/* ConvSPE(ndim=2): (H*D, 1, L1, L2) filters, the query filter conv_k.weight. */
static void
test_conv2d (void)
{
  g_autoptr (RpeTensorSet) set = read_fixture ("spe-conv2d.pt");
  g_autoptr (GPtrArray) mods = rpe_checkpoint_find_modules (set);
  const RpeTensor *q = tensor (set, "model.spe.conv_q.weight"), *k = tensor (set, "model.spe.conv_k.weight");
  const RpeTensor *gate = tensor (set, "model.spe_filter.gate");
  const RpeSpeModuleInfo *info;
  RpeSpeParams p;

  g_assert_cmpuint (mods->len, ==, 1);
  info = g_ptr_array_index (mods, 0);
  g_assert_cmpuint (info->size, ==, 3);
  g_assert_cmpuint (info->size2, ==, 4);
  load (set, NULL, -1, &p, NULL);
  g_assert_cmpuint (p.n_heads, ==, 2);
  g_assert_cmpuint (p.n_features, ==, 3);
  g_assert_cmpuint (p.kernel, ==, 3);
  g_assert_cmpuint (p.kernel_cols, ==, 4);
  for (gsize c = 0; c < 6; c++)
    for (gsize j1 = 0; j1 < 3; j1++)
      for (gsize j2 = 0; j2 < 4; j2++)
        {
          /* weight[c, 0, j1, j2] */
          g_assert_cmpfloat (p.wq[c * 12 + j1 * 4 + j2], ==, k->data[(c * 3 + j1) * 4 + j2]);
          g_assert_cmpfloat (p.wk[c * 12 + j1 * 4 + j2], ==, q->data[(c * 3 + j1) * 4 + j2]);
        }
  for (gsize i = 0; i < 6; i++)
    g_assert_cmpfloat (fabs (p.gate[i] - ref_sigmoid (gate->data[i])), <, 1e-7);
  rpe_spe_params_clear (&p);
}

/* A filter beside its code in each attention layer, and a gate nobody owns. */
static void
test_beside_and_stray (void)
{
  g_autoptr (RpeTensorSet) set = read_fixture ("spe-beside.pt");
  g_autoptr (GPtrArray) unpaired = NULL;
  g_autoptr (GPtrArray) mods = rpe_checkpoint_discover (set, &unpaired, NULL);
  RpeSpeParams p;
  char *note = NULL;

  g_assert_cmpuint (mods->len, ==, 1);
  g_assert_cmpuint (unpaired->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (unpaired, 0), ==, "head.gate_unit.gate");
  for (int layer = 0; layer < 2; layer++)
    {
      g_autofree char *code = g_strdup_printf ("layers.%d.attention.spe", layer);
      g_autofree char *gate = g_strdup_printf ("layers.%d.attention.spe_filter.gate", layer);
      load (set, NULL, layer, &p, &note);
      check_conv (&p, set, code, gate);
      /* the stray gate is not dropped in silence */
      assert_contains (note, "head.gate_unit.gate");
      g_clear_pointer (&note, g_free);
      rpe_spe_params_clear (&p);
    }
  /* and can be used through the map */
  {
    g_autoptr (RpeTensorMap) map = rpe_tensor_map_new ();
    g_autoptr (GError) error = NULL;
    RpeSpeSelection sel = RPE_SPE_SELECTION_INIT;

    g_assert_true (rpe_tensor_map_parse (map, "gate=head.gate_unit.gate", &error));
    sel.map = map;
    sel.layer = 1;
    g_assert_true (rpe_checkpoint_load_spe_full (set, &sel, &p, &note, &error));
    g_assert_null (note);
    check_conv (&p, set, "layers.1.attention.spe", "head.gate_unit.gate");
    rpe_spe_params_clear (&p);
  }
}

/* ---- in-memory layouts ------------------------------------------------ */

static const RpeTensor *
add (RpeTensorSet *set,
     const char   *name,
     gsize         ndim,
     gsize         d0,
     gsize         d1,
     gsize         d2,
     double        seed)
{
  gsize shape[3] = { d0, d1, d2 };
  g_autoptr (GError) error = NULL;
  RpeTensor *t = rpe_tensor_new (name, ndim, shape, &error);

  g_assert_no_error (error);
  for (gsize i = 0; i < t->n_elements; i++)
    t->data[i] = (float) sin (seed + 0.9 * (double) i);
  g_assert_true (rpe_tensor_set_add (set, t, &error));
  return t;
}

static void
add_sine (RpeTensorSet *set,
          const char   *dir,
          double        seed)
{
  g_autofree char *f = g_strdup_printf ("%s.freqs", dir);
  g_autofree char *o = g_strdup_printf ("%s.offsets", dir);
  g_autofree char *g = g_strdup_printf ("%s.gains", dir);

  add (set, f, 3, 2, 3, 4, seed);
  add (set, o, 3, 2, 3, 4, seed + 1);
  add (set, g, 3, 2, 3, 4, seed + 2);
}

/* Pairing that cannot be decided is an error listing the choices. */
static void
test_ambiguous (void)
{
  g_autoptr (GError) error = NULL;
  RpeSpeParams p;

  {
    /* two code modules under one owner, one filter that fits both */
    g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
    g_autoptr (RpeTensorMap) map = rpe_tensor_map_new ();
    g_autoptr (GPtrArray) mods = NULL;
    RpeSpeSelection sel = RPE_SPE_SELECTION_INIT;

    add_sine (set, "net.spe_a", 0);
    add_sine (set, "net.spe_b", 10);
    add (set, "net.spe_filter.gate", 2, 2, 3, 1, 20);
    mods = rpe_checkpoint_find_modules (set);
    g_assert_cmpuint (mods->len, ==, 2);
    g_assert_nonnull (((RpeSpeModuleInfo *) g_ptr_array_index (mods, 0))->pairing_note);
    g_assert_false (rpe_checkpoint_load_spe (set, "net.spe_a", -1, &p, &error));
    g_assert_error (error, RPE_ERROR, RPE_ERROR_INVALID_ARGUMENT);
    assert_contains (error->message, "'net.spe_a' (sine) or 'net.spe_b' (sine)");
    /* what to choose among, as a finding: no option of any front end in the message */
    {
      const char *const *cands = NULL;

      g_assert_cmpint (rpe_error_get_finding (error, NULL, &cands), ==, RPE_FINDING_GATE);
      g_assert_true (g_strv_contains (cands, "net.spe_filter.gate"));
      g_assert_null (strstr (error->message, "--"));
    }
    g_clear_error (&error);
    /* resolved by the map, or by --no-gate */
    g_assert_true (rpe_tensor_map_parse (map, "gate=net.spe_filter.gate", &error));
    sel.prefix = "net.spe_b";
    sel.map = map;
    g_assert_true (rpe_checkpoint_load_spe_full (set, &sel, &p, NULL, &error));
    check_sine (&p, set, "net.spe_b", "net.spe_filter.gate");
    rpe_spe_params_clear (&p);
    sel.map = NULL;
    sel.no_gate = TRUE;
    g_assert_true (rpe_checkpoint_load_spe_full (set, &sel, &p, NULL, &error));
    check_sine (&p, set, "net.spe_b", NULL);
    rpe_spe_params_clear (&p);
  }
  {
    /* one code, a shared filter and per-layer filters */
    g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();

    add_sine (set, "m.spe", 0);
    add (set, "m.spe_filter.gate", 2, 2, 3, 1, 1);
    add (set, "m.spe_filters.0.gate", 2, 2, 3, 1, 2);
    add (set, "m.spe_filters.1.gate", 2, 2, 3, 1, 3);
    g_assert_false (rpe_checkpoint_load_spe (set, NULL, 1, &p, &error));
    assert_contains (error->message, "'m.spe_filter.gate'");
    assert_contains (error->message, "'m.spe_filters.*.gate' (layers 0, 1)");
    g_clear_error (&error);
  }
  {
    /* gates of other modules (a gated MLP's, 1-D) do not break an ungated SPE module,
     * and are listed as unpaired */
    g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
    g_autoptr (GPtrArray) unpaired = NULL;
    g_autoptr (GPtrArray) mods = NULL;
    char *note = NULL;

    add_sine (set, "model.spe", 0);
    add (set, "model.layers.0.mlp.gate", 1, 7, 1, 1, 1);
    add (set, "model.layers.1.mlp.gate", 1, 7, 1, 1, 2);
    mods = rpe_checkpoint_discover (set, &unpaired, &error);
    g_assert_cmpuint (mods->len, ==, 1);
    g_assert_cmpuint (((RpeSpeModuleInfo *) g_ptr_array_index (mods, 0))->gates->len, ==, 0);
    g_assert_cmpuint (unpaired->len, ==, 2);
    load (set, NULL, -1, &p, &note);
    check_sine (&p, set, "model.spe", NULL);
    g_assert_null (note);           /* not of the module's shape: not its gate */
    rpe_spe_params_clear (&p);
  }
  {
    /* a prefix naming two modules */
    g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();

    add_sine (set, "m.spe", 0);
    add (set, "m.spe.conv_q.weight", 3, 6, 1, 4, 1);
    add (set, "m.spe.conv_k.weight", 3, 6, 1, 4, 2);
    g_assert_false (rpe_checkpoint_load_spe (set, "m", -1, &p, &error));
    assert_contains (error->message, "(sine)");
    assert_contains (error->message, "(conv)");
    g_clear_error (&error);
  }
}

/* --map for names discovery cannot read. */
static void
test_map (void)
{
  g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
  g_autoptr (RpeTensorMap) map = rpe_tensor_map_new ();
  g_autoptr (GError) error = NULL;
  RpeSpeSelection sel = RPE_SPE_SELECTION_INIT;
  RpeSpeParams p;
  RpeRole role;

  add (set, "enc.pos.a", 3, 2, 3, 4, 0);
  add (set, "enc.pos.b", 3, 2, 3, 4, 1);
  add (set, "enc.pos.c", 3, 2, 3, 4, 2);
  add (set, "enc.pos.g", 2, 2, 3, 1, 3);
  g_assert_cmpuint (rpe_checkpoint_find_modules (set)->len, ==, 0);
  g_assert_false (rpe_checkpoint_load_spe (set, NULL, -1, &p, &error));
  g_assert_cmpint (rpe_error_get_finding (error, NULL, NULL), ==, RPE_FINDING_ROLES);
  g_assert_null (strstr (error->message, "--"));
  g_clear_error (&error);

  for (const char *const *a = (const char *const[]) { "freqs=enc.pos.a", "sine.offsets=enc.pos.b",
                                                      "GAINS=enc.pos.c", "gate=enc.pos.g", NULL }; *a; a++)
    g_assert_true (rpe_tensor_map_parse (map, *a, &error));
  g_assert_true (rpe_tensor_map_role_of (map, "enc.pos.b", &role));
  g_assert_cmpint (role, ==, RPE_ROLE_SINE_OFFSETS);
  sel.map = map;
  g_assert_true (rpe_checkpoint_load_spe_full (set, &sel, &p, NULL, &error));
  g_assert_no_error (error);
  {
    double ref[2 * N - 1];
    float got[2 * N - 1];
    ref_sine_lags (tensor (set, "enc.pos.a"), tensor (set, "enc.pos.b"), tensor (set, "enc.pos.c"),
                   tensor (set, "enc.pos.g"), FALSE, 1, 1, ref);
    g_assert_cmpint (rpe_spe_template_lags (&p, 1, 1, N, true, got), ==, RPE_OK);
    g_assert_cmpfloat (rpe_test_max_abs_err (got, ref, 2 * N - 1), <, 2e-6);
  }
  rpe_spe_params_clear (&p);

  /* bad assignments */
  g_assert_false (rpe_tensor_map_parse (map, "freqs=other", &error));     /* twice */
  assert_contains (error->message, "twice");
  g_clear_error (&error);
  g_assert_false (rpe_tensor_map_parse (map, "colour=x", &error));
  assert_contains (error->message, "lrpe.permutation");
  g_clear_error (&error);
  g_assert_false (rpe_tensor_map_parse (map, "gate=", &error));
  g_clear_error (&error);
  {
    g_autoptr (RpeTensorMap) m2 = rpe_tensor_map_new ();
    g_assert_true (rpe_tensor_map_parse (m2, "freqs=no.such", &error));
    g_assert_true (rpe_tensor_map_parse (m2, "w=x", &error));
    g_assert_cmpstr (rpe_tensor_map_get (m2, RPE_ROLE_FASTRPB_W), ==, "x");
    sel.map = m2;
    g_assert_false (rpe_checkpoint_load_spe_full (set, &sel, &p, NULL, &error));
    g_assert_error (error, RPE_ERROR, RPE_ERROR_NOT_FOUND);
    assert_contains (error->message, "no.such");
    g_clear_error (&error);
  }
}

/* Discovery is linear: 6000 layered Flax modules and 6000 gates (issue 11 saw
 * 4000 + 4000 take 272 MiB and 12000 + 12000 abort) pair correctly in a small
 * budget; the run finishes (a quadratic one would time out). */
static void
test_many_modules (void)
{
  g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
  g_autoptr (GPtrArray) mods = NULL;
  g_autoptr (GError) error = NULL;
  const int n = 6000;
  RpeSpeParams p;

  for (int l = 0; l < n; l++)
    {
      g_autofree char *dir = g_strdup_printf ("params/encoderblock_%d/SelfAttention_0/SineSPE_0", l);
      g_autofree char *f = g_strdup_printf ("%s/freqs", dir), *o = g_strdup_printf ("%s/offsets", dir);
      g_autofree char *g = g_strdup_printf ("%s/gains", dir);
      g_autofree char *gate = g_strdup_printf ("params/encoderblock_%d/SelfAttention_0/SPEGate_0/gate", l);
      gsize s3[3] = { 1, 1, 1 }, s2[2] = { 1, 1 };
      const char *names[4] = { f, o, g, gate };

      for (int t = 0; t < 4; t++)
        {
          RpeTensor *x = rpe_tensor_new (names[t], t < 3 ? 3 : 2, t < 3 ? s3 : s2, &error);
          x->data[0] = (float) (t == 3 ? 0.001 * l : 0.5);
          g_assert_true (rpe_tensor_set_add (set, x, &error));
        }
    }
  rpe_budget_set (64u << 20);
  mods = rpe_checkpoint_discover (set, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (mods->len, ==, 1);
  g_assert_cmpstr (((RpeSpeModuleInfo *) g_ptr_array_index (mods, 0))->convention, ==, "flax-unshared");
  g_assert_cmpuint (((RpeSpeModuleInfo *) g_ptr_array_index (mods, 0))->layers->len, ==, (guint) n);
  g_assert_cmpuint (((RpeSpeModuleInfo *) g_ptr_array_index (mods, 0))->gates->len, ==, (guint) n);
  /* layer 4321's code and (inverted Flax) gate */
  load (set, NULL, 4321, &p, NULL);
  g_assert_cmpfloat (fabs (p.gate[0] - (1 - ref_sigmoid (0.001 * 4321))), <, 1e-6);
  rpe_spe_params_clear (&p);
  /* a budget too small for the index is an error, not an overrun */
  rpe_budget_set (4096);
  g_assert_null (rpe_checkpoint_discover (set, NULL, &error));
  g_assert_error (error, RPE_ERROR, RPE_ERROR_NO_MEMORY);
  rpe_budget_set (0);
}

/* The CLI end to end: `rpe compute template --layer 1` of a shared-code model
 * with per-layer filters writes (1 - g1) P + g1 (issue 10 saw the ungated one). */
static void
test_cli_layer (void)
{
  g_autofree char *ckpt = g_test_build_filename (G_TEST_DIST, "fixtures", "ckpt", "spe-per-layer.pt", NULL);
  g_autofree char *out = g_build_filename (rpe_test_tmpdir (), "ckpt-layer1.npy", NULL);
  g_autoptr (RpeTensorSet) set = read_fixture ("spe-per-layer.pt");
  g_autoptr (RpeTensor) t = NULL;
  g_autoptr (GError) error = NULL;
  const char *rpe = g_getenv ("RPE_CLI");
  g_autofree char *err = NULL;
  char n_text[16];
  int status;

  if (rpe == NULL)
    {
      g_test_skip ("RPE_CLI is not set");
      return;
    }
  g_snprintf (n_text, sizeof n_text, "%d", N);
  {
    const char *argv[] = { rpe, "compute", "template", "--checkpoint", ckpt, "--layer", "1",
                           "--length", n_text, "-o", out, NULL };
    g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                                 NULL, &err, &status, &error));
    g_assert_true (g_spawn_check_wait_status (status, NULL));
    g_assert_cmpstr (err, ==, "");
  }
  t = rpe_npy_read (out, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (t->ndim, ==, 4);
  g_assert_cmpuint (t->shape[2], ==, N);
  for (gsize h = 0; h < 2; h++)
    for (gsize d = 0; d < 3; d++)
      {
        double ref[2 * N - 1];
        ref_sine_lags (tensor (set, "encoder.spe.freqs"), tensor (set, "encoder.spe.offsets"),
                       tensor (set, "encoder.spe.gains"), tensor (set, "encoder.spe_filters.1.gate"),
                       FALSE, h, d, ref);
        for (int m = 0; m < N; m++)
          for (int n = 0; n < N; n++)
            g_assert_cmpfloat (fabs (t->data[((h * 3 + d) * N + (gsize) m) * N + (gsize) n] - ref[m - n + N - 1]),
                               <, 2e-6);
      }
  /* no layer given: the first gate, said on stderr */
  g_clear_pointer (&err, g_free);
  {
    const char *argv[] = { rpe, "compute", "template", "--checkpoint", ckpt, "--length", n_text, "-o", out, NULL };
    g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                                 NULL, &err, &status, &error));
    g_assert_true (g_spawn_check_wait_status (status, NULL));
    assert_contains (err, "encoder.spe_filters.0.gate");
    assert_contains (err, "--layer");
  }
}

/* Trained LRPE parameters of lrpe.pt's modules (rpe-checkpoint-lrpe.h): what they imply for P and
 * Lambda, and the combinations they cannot run refused. */
static void
test_lrpe_trained (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "fixtures", "lrpe", "lrpe.pt", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeTensorSet) set = rpe_checkpoint_read (path, &error);
  g_autoptr (GPtrArray) modules = NULL;
  g_autoptr (RpeLrpeTrained) t0 = NULL;
  g_autoptr (RpeLrpeTrained) t1 = NULL;
  g_autoptr (RpeLrpeTrained) copy = NULL;
  const RpeLrpeModuleInfo *m0, *m1;
  RpeLrpeConfig config = { 0 };
  const RpeTensor *perm;

  g_assert_no_error (error);
  modules = rpe_checkpoint_find_lrpe_modules (set);
  g_assert_cmpuint (modules->len, ==, 3);
  m0 = g_ptr_array_index (modules, 0);
  m1 = g_ptr_array_index (modules, 1);
  t0 = rpe_lrpe_trained_new (m0->v, m0->theta, m0->permutation, "m0", &error);
  g_assert_no_error (error);
  /* the fixture's v is "trained" to norm != 1: learned, normalised at every use */
  g_assert_true (t0->v_learned);
  g_assert_cmpuint (rpe_lrpe_trained_dim (t0), ==, 8);
  g_assert_cmpuint (t0->n_theta, ==, 4);
  g_assert_cmpint (rpe_lrpe_implied_lambda (4, 8), ==, RPE_LRPE_LAMBDA_ROTATION);
  g_assert_cmpint (rpe_lrpe_implied_lambda (8, 8), ==, RPE_LRPE_LAMBDA_COMPLEX_EXP);

  config.dim = 8;
  config.p = RPE_LRPE_P_DCT;
  config.lambda = RPE_LRPE_LAMBDA_ROTATION;
  g_assert_cmpint (rpe_lrpe_trained_apply (t0, &config), ==, RPE_OK);
  g_assert_cmpint (config.p, ==, RPE_LRPE_P_HOUSEHOLDER);
  g_assert_cmpint (config.theta_kind, ==, RPE_LRPE_THETA_CUSTOM);
  g_assert_true (config.householder_v == t0->v);
  /* another width, or a Lambda whose e needs another number of angles */
  memset (&config, 0, sizeof config);
  config.dim = 6;
  g_assert_cmpint (rpe_lrpe_trained_apply (t0, &config), ==, RPE_ERROR_INVALID_ARGUMENT);
  config.dim = 8;
  config.lambda = RPE_LRPE_LAMBDA_COMPLEX_EXP;
  g_assert_cmpint (rpe_lrpe_trained_apply (t0, &config), ==, RPE_ERROR_INVALID_ARGUMENT);

  /* the buffer T gives pi = T[1], and T[s] = pi^s */
  t1 = rpe_lrpe_trained_new (m1->v, m1->theta, m1->permutation, "m1", &error);
  g_assert_no_error (error);
  perm = m1->permutation;
  g_assert_cmpuint (t1->n_pi, ==, 8);
  for (gsize j = 0; j < 8; j++)
    g_assert_cmpuint (t1->pi[j], ==, (guint) perm->data[8 + j]);
  memset (&config, 0, sizeof config);
  config.dim = 8;
  config.p = RPE_LRPE_P_ODD_EVEN;
  g_assert_cmpint (rpe_lrpe_trained_apply (t1, &config), ==, RPE_OK);
  g_assert_cmpint (config.lambda, ==, RPE_LRPE_LAMBDA_PERMUTATION);
  g_assert_cmpint (config.p, ==, RPE_LRPE_P_ODD_EVEN);
  /* rfft's d' = 5 components: an 8-wide buffer does not fit */
  config.p = RPE_LRPE_P_FOURIER;
  g_assert_cmpint (rpe_lrpe_trained_apply (t1, &config), ==, RPE_ERROR_INVALID_ARGUMENT);
  copy = rpe_lrpe_trained_copy (t1);
  g_assert_cmpmem (copy->pi, 8 * sizeof (uint32_t), t1->pi, 8 * sizeof (uint32_t));

  /* a table that is not the powers of one permutation, and no parameter at all */
  {
    g_autoptr (RpeTensor) bad = rpe_tensor_new ("bad.permutation", perm->ndim, perm->shape, &error);
    g_autoptr (RpeLrpeTrained) none = NULL;

    g_assert_no_error (error);
    memcpy (bad->data, perm->data, perm->n_elements * sizeof (float));
    bad->data[5 * 8 + 3] = bad->data[5 * 8 + 4];
    g_assert_null (rpe_lrpe_trained_new (NULL, NULL, bad, "bad", &error));
    g_assert_error (error, RPE_ERROR, RPE_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "row 5"));
    g_clear_error (&error);
    none = rpe_lrpe_trained_new (NULL, NULL, NULL, "none", &error);
    g_assert_null (none);
    g_assert_error (error, RPE_ERROR, RPE_ERROR_INVALID_ARGUMENT);
  }
}

/* ---- one module's convention, selection by path, findings ---------------- */

/* g of a loaded gate against sigmoid (PyTorch) or 1 - sigmoid (Flax) of its raw values. */
static void
assert_gate (const RpeSpeParams *p,
             const RpeTensor    *raw,
             gboolean            flax)
{
  g_assert_nonnull (p->gate);
  for (gsize i = 0; i < raw->n_elements; i++)
    {
      double g = ref_sigmoid (raw->data[i]);

      g_assert_cmpfloat (fabs (p->gate[i] - (flax ? 1 - g : g)), <, 1e-6);
    }
}

static const RpeSpeModuleInfo *
module_named (GPtrArray  *mods,
              const char *prefix)
{
  for (guint i = 0; i < mods->len; i++)
    if (g_str_equal (((RpeSpeModuleInfo *) g_ptr_array_index (mods, i))->prefix, prefix))
      return g_ptr_array_index (mods, i);
  g_error ("no module '%s'", prefix);
  return NULL;
}

/* A module's convention comes from its own tensors: one unrelated tensor that
 * looks like Flax's (a "kernel" leaf, a '/', a "Dense_0" component) never
 * inverts a PyTorch module's gate, and a Flax module in the same file keeps
 * its own. */
static void
test_convention_per_module (void)
{
  static const char *const strangers[] = { "head.kernel", "proj/w", "mlp.Dense_0.bias", "params/Dense_0/kernel" };

  for (gsize k = 0; k < G_N_ELEMENTS (strangers); k++)
    {
      g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
      g_autoptr (GPtrArray) mods = NULL;
      g_autoptr (GError) error = NULL;
      const RpeTensor *gate, *fgate;
      RpeSpeParams p;

      add_sine (set, "enc.spe", 0);
      gate = add (set, "enc.spe_filter.gate", 2, 2, 3, 1, 5);
      add (set, strangers[k], 2, 2, 2, 1, 9);
      /* a Flax module beside it, with its own (inverted) gate */
      add (set, "params/dec/SineSPE_0/freqs", 3, 2, 3, 4, 1);
      add (set, "params/dec/SineSPE_0/offsets", 3, 2, 3, 4, 2);
      add (set, "params/dec/SineSPE_0/gains", 3, 2, 3, 4, 3);
      fgate = add (set, "params/dec/SPEGate_0/gate", 2, 2, 3, 1, 7);

      mods = rpe_checkpoint_find_modules (set);
      g_assert_cmpuint (mods->len, ==, 2);
      g_assert_cmpstr (module_named (mods, "enc")->convention, ==, "pytorch");
      g_assert_cmpstr (module_named (mods, "params/dec/SineSPE_0")->convention, ==, "flax");

      g_assert_true (rpe_checkpoint_load_spe (set, "enc", -1, &p, &error));
      g_assert_no_error (error);
      assert_gate (&p, gate, FALSE);
      check_sine (&p, set, "enc.spe", "enc.spe_filter.gate");
      rpe_spe_params_clear (&p);

      g_assert_true (rpe_checkpoint_load_spe (set, "params/dec/SineSPE_0", -1, &p, &error));
      assert_gate (&p, fgate, TRUE);
      rpe_spe_params_clear (&p);
    }
  /* tensors given by role: their own names say Flax or not */
  {
    g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
    g_autoptr (RpeTensorMap) map = rpe_tensor_map_new ();
    g_autoptr (GError) error = NULL;
    RpeSpeSelection sel = RPE_SPE_SELECTION_INIT;
    const RpeTensor *gate;
    RpeSpeParams p;

    add (set, "pos.a", 3, 2, 3, 4, 0);
    add (set, "pos.b", 3, 2, 3, 4, 1);
    add (set, "pos.c", 3, 2, 3, 4, 2);
    gate = add (set, "pos.g", 2, 2, 3, 1, 3);
    add (set, "other/Dense_0/kernel", 2, 2, 2, 1, 4);
    for (const char *const *a = (const char *const[]) { "freqs=pos.a", "offsets=pos.b", "gains=pos.c",
                                                        "gate=pos.g", NULL }; *a; a++)
      g_assert_true (rpe_tensor_map_parse (map, *a, &error));
    sel.map = map;
    g_assert_true (rpe_checkpoint_load_spe_full (set, &sel, &p, NULL, &error));
    g_assert_no_error (error);
    assert_gate (&p, gate, FALSE);
    rpe_spe_params_clear (&p);
  }
}

/* The gate of `p` equals the raw gate tensor `name` of set (PyTorch). */
static void
assert_gate_of (const RpeSpeParams *p,
                const RpeTensorSet *set,
                const char         *name)
{
  assert_gate (p, tensor (set, name), FALSE);
}

static void
select_ok (const RpeTensorSet *set,
           const char         *prefix,
           int                 layer,
           int                 method,
           const char         *gate_name)
{
  RpeSpeSelection sel = RPE_SPE_SELECTION_INIT;
  g_autoptr (GError) error = NULL;
  RpeSpeParams p;

  sel.prefix = prefix;
  sel.layer = layer;
  sel.method = method;
  if (!rpe_checkpoint_load_spe_full (set, &sel, &p, NULL, &error))
    g_error ("prefix '%s', layer %d: %s", prefix, layer, error->message);
  assert_gate_of (&p, set, gate_name);
  rpe_spe_params_clear (&p);
}

static GError *
select_fails (const RpeTensorSet *set,
              const char         *prefix,
              int                 layer,
              int                 method)
{
  RpeSpeSelection sel = RPE_SPE_SELECTION_INIT;
  GError *error = NULL;
  RpeSpeParams p;

  sel.prefix = prefix;
  sel.layer = layer;
  sel.method = method;
  if (rpe_checkpoint_load_spe_full (set, &sel, &p, NULL, &error))
    g_error ("prefix '%s', layer %d was taken", prefix, layer);
  g_assert_nonnull (error);
  g_test_message ("%s, %d: %s", prefix, layer, error->message);
  return error;
}

/* A module is selected by its name as a researcher's state_dict has it: one
 * layer's own path ("layers.1.attn", "layers.1"), or the path above the
 * layers with a layer index ("layers" and layer 0), as well as by the name
 * discovery gives it ("layers.*.attn"). */
static void
test_select_by_path (void)
{
  g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();

  /* unshared: one code and one gate per layer */
  for (int l = 0; l < 3; l++)
    {
      g_autofree char *dir = g_strdup_printf ("layers.%d.attn.spe", l);
      g_autofree char *gate = g_strdup_printf ("layers.%d.attn.spe_filter.gate", l);

      add_sine (set, dir, 10 * l);
      add (set, gate, 2, 2, 3, 1, 10 * l + 5);
    }
  {
    g_autoptr (GPtrArray) mods = rpe_checkpoint_find_modules (set);

    g_assert_cmpuint (mods->len, ==, 1);
    g_assert_cmpstr (((RpeSpeModuleInfo *) g_ptr_array_index (mods, 0))->prefix, ==, "layers.*.attn");
  }
  select_ok (set, "layers.*.attn", 2, -1, "layers.2.attn.spe_filter.gate");
  select_ok (set, "layers.1.attn", -1, -1, "layers.1.attn.spe_filter.gate");
  select_ok (set, "layers.1.attn", 1, -1, "layers.1.attn.spe_filter.gate");
  select_ok (set, "layers.1.attn.spe", -1, -1, "layers.1.attn.spe_filter.gate");
  select_ok (set, "layers.1", -1, -1, "layers.1.attn.spe_filter.gate");
  select_ok (set, "layers.2", -1, RPE_SPE_SINE, "layers.2.attn.spe_filter.gate");
  select_ok (set, "layers", 0, -1, "layers.0.attn.spe_filter.gate");
  select_ok (set, "layers", 2, -1, "layers.2.attn.spe_filter.gate");
  select_ok (set, "module.layers.1.attn", -1, -1, "layers.1.attn.spe_filter.gate");
  select_ok (set, "model.layers", 1, -1, "layers.1.attn.spe_filter.gate");
  {
    g_autoptr (GError) e = select_fails (set, "layers.1.attn", 0, -1);

    g_assert_nonnull (strstr (e->message, "layer 1's module"));
    g_assert_null (strstr (e->message, "--"));
  }
  {
    g_autoptr (GError) e = select_fails (set, "layers.7", -1, -1);

    g_assert_nonnull (strstr (e->message, "found: 'layers.*.attn'"));
  }
  {
    /* "layers.1" is not the beginning of "layers.10...": whole components only */
    g_autoptr (GError) e = select_fails (set, "layers.1.at", -1, -1);

    g_assert_error (e, RPE_ERROR, RPE_ERROR_NOT_FOUND);
  }

  /* one code shared by every layer, one gate per layer: a layer's gate path picks the layer */
  {
    g_autoptr (RpeTensorSet) shared = rpe_tensor_set_new ();

    add_sine (shared, "encoder.spe", 0);
    add (shared, "encoder.spe_filters.0.gate", 2, 2, 3, 1, 5);
    add (shared, "encoder.spe_filters.1.gate", 2, 2, 3, 1, 6);
    select_ok (shared, "encoder.spe_filters.1", -1, -1, "encoder.spe_filters.1.gate");
    select_ok (shared, "encoder", 1, -1, "encoder.spe_filters.1.gate");
    select_ok (shared, "encoder.spe", -1, -1, "encoder.spe_filters.0.gate");
  }

  /* a path above a sine and a conv module names both: a choice, with the candidates */
  {
    g_autoptr (RpeTensorSet) both = rpe_tensor_set_new ();
    g_autoptr (GError) e = NULL;
    const char *const *cands = NULL;

    add_sine (both, "blocks.0.attn.spe", 0);
    add_sine (both, "blocks.1.attn.spe", 1);
    add (both, "blocks.0.attn.conv.conv_q.weight", 3, 6, 1, 4, 2);
    add (both, "blocks.0.attn.conv.conv_k.weight", 3, 6, 1, 4, 3);
    add (both, "blocks.1.attn.conv.conv_q.weight", 3, 6, 1, 4, 4);
    add (both, "blocks.1.attn.conv.conv_k.weight", 3, 6, 1, 4, 5);
    e = select_fails (both, "blocks.1", -1, -1);
    g_assert_cmpint (rpe_error_get_finding (e, NULL, &cands), ==, RPE_FINDING_MODULE_METHOD);
    g_assert_cmpuint (g_strv_length ((char **) cands), ==, 2);
    g_assert_null (strstr (e->message, "--"));
    {
      RpeSpeSelection sel = RPE_SPE_SELECTION_INIT;
      g_autoptr (GError) error = NULL;
      RpeSpeParams p;

      sel.prefix = "blocks.1";
      sel.method = RPE_SPE_CONV;
      g_assert_true (rpe_checkpoint_load_spe_full (both, &sel, &p, NULL, &error));
      g_assert_no_error (error);
      /* layer 1's conv code: wq is conv_k.weight (seed 5) */
      g_assert_cmpfloat (p.wq[0], ==, (float) sin (5.0));
      rpe_spe_params_clear (&p);
    }
  }
}

static char *
test_remedy (RpeFindingKind     kind,
             const char *const *candidates)
{
  return g_strdup_printf ("remedy %d for %u", (int) kind, candidates != NULL ? g_strv_length ((char **) candidates) : 0);
}

/* The choices made for the user are findings: text without any front end's
 * words, the kind and the candidates; a front end's phrasing comes after the
 * text only when it registered one; lists in the text are bounded. */
static void
test_findings (void)
{
  g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
  g_autoptr (GPtrArray) findings = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *note = NULL;
  RpeSpeSelection sel = RPE_SPE_SELECTION_INIT;
  RpeSpeParams p;
  const int n = 3000;

  for (int i = 0; i < n; i++)
    {
      g_autofree char *dir = g_strdup_printf ("m%d.spe", i);

      add_sine (set, dir, i);
    }
  g_assert_true (rpe_checkpoint_load_spe_findings (set, &sel, &p, &findings, &error));
  rpe_spe_params_clear (&p);
  g_assert_nonnull (findings);
  g_assert_cmpuint (findings->len, ==, 1);
  {
    const RpeFinding *f = g_ptr_array_index (findings, 0);

    g_assert_cmpint (f->kind, ==, RPE_FINDING_MODULE);
    g_assert_cmpuint (f->candidates->len, ==, (guint) n);
    g_assert_null (strstr (f->text, "--"));
    /* a few names and a count, not 3000 names */
    g_assert_cmpuint (strlen (f->text), <, 400);
    g_assert_nonnull (strstr (f->text, "and 2992 more"));
  }
  note = rpe_findings_to_note (findings);
  g_assert_cmpstr (note + strlen (note) - 1, ==, ".");
  g_clear_pointer (&note, g_free);

  /* a front end's phrasing, after the text */
  rpe_findings_set_remedy_func (test_remedy);
  note = rpe_findings_to_note (findings);
  g_assert_true (g_str_has_suffix (note, "; remedy 1 for 3000."));
  g_assert_false (rpe_checkpoint_load_spe (set, "nothing.here", -1, &p, &error));
  g_assert_null (strstr (error->message, "remedy"));      /* not found: no choice to make */
  g_clear_error (&error);
  {
    g_autoptr (RpeTensorSet) odd = rpe_tensor_set_new ();

    add (odd, "pos.a", 3, 2, 3, 4, 0);
    g_assert_false (rpe_checkpoint_load_spe (odd, NULL, -1, &p, &error));
    g_assert_true (g_str_has_suffix (error->message, "; remedy 6 for 0"));
    /* a copy of the error keeps its finding */
    {
      g_autoptr (GError) copy = g_error_copy (error);

      g_assert_cmpint (rpe_error_get_finding (copy, NULL, NULL), ==, RPE_FINDING_ROLES);
    }
  }
  rpe_findings_set_remedy_func (NULL);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ckpt/shared-filter", test_shared_filter);
  g_test_add_func ("/ckpt/per-layer-filters", test_per_layer_filters);
  g_test_add_func ("/ckpt/readme-names", test_readme_names);
  g_test_add_func ("/ckpt/wrapped-conv", test_wrapped_conv);
  g_test_add_func ("/ckpt/unshared", test_unshared);
  g_test_add_func ("/ckpt/conv2d", test_conv2d);
  g_test_add_func ("/ckpt/beside-and-stray", test_beside_and_stray);
  g_test_add_func ("/ckpt/ambiguous", test_ambiguous);
  g_test_add_func ("/ckpt/map", test_map);
  g_test_add_func ("/ckpt/many-modules", test_many_modules);
  g_test_add_func ("/ckpt/cli-layer", test_cli_layer);
  g_test_add_func ("/ckpt/lrpe-trained", test_lrpe_trained);
  g_test_add_func ("/ckpt/convention-per-module", test_convention_per_module);
  g_test_add_func ("/ckpt/select-by-path", test_select_by_path);
  g_test_add_func ("/ckpt/findings", test_findings);
  return g_test_run ();
}

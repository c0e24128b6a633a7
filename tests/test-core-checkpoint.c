#include "config.h"

#include <math.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "rpe-checkpoint.h"
#include "rpe-error.h"
#include "rpe-npy.h"
#include "rpe-safetensors.h"
#include "rpe-test-utils.h"

/* Independent references of the as-coded transforms (docs/math.md, sections 1-3),
 * written naively in double precision. */
static double
ref_sigmoid (double x)
{
  return 1.0 / (1.0 + exp (-x));
}

static double
ref_softplus (double x)
{
  return log (1.0 + exp (x));
}

/* Adds a tensor whose element i is value(seed, i). */
static const RpeTensor *
add_tensor (RpeTensorSet *set,
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
    t->data[i] = (float) (2.5 * sin (seed + 0.7 * (double) i + 0.01 * (double) (i * i)));
  g_assert_true (rpe_tensor_set_add (set, t, &error));
  return t;
}

static void
add_sine (RpeTensorSet *set,
          const char   *prefix,
          gsize         h,
          gsize         d,
          gsize         k)
{
  /* Flax paths use '/', PyTorch names '.' */
  const char *sep = strchr (prefix, '/') != NULL ? "/" : ".";
  g_autofree char *f = g_strdup_printf ("%s%sfreqs", prefix, sep);
  g_autofree char *o = g_strdup_printf ("%s%soffsets", prefix, sep);
  g_autofree char *g = g_strdup_printf ("%s%sgains", prefix, sep);

  add_tensor (set, f, 3, h, d, k, 1.0);
  add_tensor (set, o, 3, h, d, k, 2.0);
  add_tensor (set, g, 3, h, d, k, 3.0);
}

static void
check_sine (const RpeSpeParams *p,
            const RpeTensorSet *set,
            const char         *prefix,
            const char         *sep)
{
  g_autofree char *fn = g_strdup_printf ("%s%sfreqs", prefix, sep);
  g_autofree char *on = g_strdup_printf ("%s%soffsets", prefix, sep);
  g_autofree char *gn = g_strdup_printf ("%s%sgains", prefix, sep);
  const RpeTensor *f = rpe_tensor_set_lookup (set, fn);
  const RpeTensor *o = rpe_tensor_set_lookup (set, on);
  const RpeTensor *g = rpe_tensor_set_lookup (set, gn);
  gsize n = f->n_elements;
  g_autofree double *rf = g_new (double, n);
  g_autofree double *ro = g_new (double, n);
  g_autofree double *rg = g_new (double, n);

  g_assert_cmpint (p->method, ==, RPE_SPE_SINE);
  g_assert_cmpuint (p->n_heads, ==, f->shape[0]);
  g_assert_cmpuint (p->n_features, ==, f->shape[1]);
  g_assert_cmpuint (p->n_sines, ==, f->shape[2]);
  for (gsize i = 0; i < n; i++)
    {
      rf[i] = ref_sigmoid (f->data[i]) / 2;
      ro[i] = o->data[i];
      rg[i] = ref_softplus (g->data[i]);
    }
  g_assert_cmpfloat (rpe_test_max_rel_err (p->freqs, rf, n, 1e-30), <, 1e-6);
  g_assert_cmpfloat (rpe_test_max_rel_err (p->offsets, ro, n, 1e-30), <, 1e-7);
  g_assert_cmpfloat (rpe_test_max_rel_err (p->gains, rg, n, 1e-30), <, 1e-6);
}

static void
check_gate (const RpeSpeParams *p,
            const RpeTensor    *gate,
            gboolean            inverted)
{
  gsize n = gate->n_elements;
  g_autofree double *ref = g_new (double, n);

  g_assert_nonnull (p->gate);
  g_assert_cmpuint (n, ==, p->n_heads * p->n_features);
  for (gsize i = 0; i < n; i++)
    ref[i] = inverted ? 1.0 - ref_sigmoid (gate->data[i]) : ref_sigmoid (gate->data[i]);
  g_assert_cmpfloat (rpe_test_max_abs_err (p->gate, ref, n), <, 1e-6);
}

static void
check_error (GError     *error,
             RpeStatus   code,
             const char *needle1,
             const char *needle2)
{
  g_assert_error (error, RPE_ERROR, (int) code);
  if (needle1 != NULL && strstr (error->message, needle1) == NULL)
    g_error ("message '%s' lacks '%s'", error->message, needle1);
  if (needle2 != NULL && strstr (error->message, needle2) == NULL)
    g_error ("message '%s' lacks '%s'", error->message, needle2);
}

/* ---- PyTorch ---------------------------------------------------------- */

static void
test_pytorch_sine (void)
{
  g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
  g_autoptr (GPtrArray) mods = NULL;
  g_autoptr (GError) error = NULL;
  RpeSpeParams p;
  const RpeSpeModuleInfo *info;
  const RpeTensor *g0, *g2;

  add_tensor (set, "model.embed.weight", 2, 10, 6, 1, 0.0);   /* unrelated */
  add_sine (set, "model.enc.spe", 2, 3, 4);
  g2 = add_tensor (set, "model.enc.spe_filters.2.gate", 2, 2, 3, 1, 5.0);
  g0 = add_tensor (set, "model.enc.spe_filters.0.gate", 2, 2, 3, 1, 6.0);
  add_tensor (set, "model.enc.layers.0.attn.weight", 2, 6, 6, 1, 0.0);

  mods = rpe_checkpoint_find_modules (set);
  g_assert_cmpuint (mods->len, ==, 1);
  info = g_ptr_array_index (mods, 0);
  g_assert_cmpstr (info->prefix, ==, "model.enc");
  g_assert_cmpint (info->method, ==, RPE_SPE_SINE);
  g_assert_cmpuint (info->n_heads, ==, 2);
  g_assert_cmpuint (info->n_features, ==, 3);
  g_assert_cmpuint (info->size, ==, 4);
  g_assert_cmpstr (info->convention, ==, "pytorch");
  g_assert_cmpuint (info->layers->len, ==, 2);
  g_assert_cmpint (g_array_index (info->layers, int, 0), ==, 0);
  g_assert_cmpint (g_array_index (info->layers, int, 1), ==, 2);

  /* default module, first gate (layer 0) */
  g_assert_true (rpe_checkpoint_load_spe (set, NULL, -1, &p, &error));
  g_assert_no_error (error);
  check_sine (&p, set, "model.enc.spe", ".");
  check_gate (&p, g0, FALSE);
  g_assert_true (rpe_spe_params_validate (&p) == RPE_OK);
  rpe_spe_params_clear (&p);

  /* explicit prefix and layer */
  g_assert_true (rpe_checkpoint_load_spe (set, "model.enc", 2, &p, &error));
  check_sine (&p, set, "model.enc.spe", ".");
  check_gate (&p, g2, FALSE);
  rpe_spe_params_clear (&p);

  /* a layer without a gate, a wrong prefix */
  g_assert_false (rpe_checkpoint_load_spe (set, "model.enc", 1, &p, &error));
  check_error (error, RPE_ERROR_NOT_FOUND, "layer 1", "0, 2");
  g_clear_error (&error);
  g_assert_false (rpe_checkpoint_load_spe (set, "model.dec", -1, &p, &error));
  check_error (error, RPE_ERROR_NOT_FOUND, "model.dec", "model.enc");
  g_assert_null (p.freqs);
}

static void
test_pytorch_conv (void)
{
  g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
  g_autoptr (RpeTensorSet) ungated = rpe_tensor_set_new ();
  g_autoptr (GPtrArray) mods = NULL;
  g_autoptr (GError) error = NULL;
  const RpeTensor *cq, *ck, *gate;
  const RpeSpeModuleInfo *info;
  RpeSpeParams p;
  const gsize H = 2, D = 3, L = 5;

  /* no prefix at all: the root module of a state_dict */
  cq = add_tensor (set, "spe.conv_q.weight", 3, H * D, 1, L, 1.0);
  ck = add_tensor (set, "spe.conv_k.weight", 3, H * D, 1, L, 2.0);
  gate = add_tensor (set, "spe_filters.0.gate", 2, H, D, 1, 3.0);

  mods = rpe_checkpoint_find_modules (set);
  g_assert_cmpuint (mods->len, ==, 1);
  info = g_ptr_array_index (mods, 0);
  g_assert_cmpstr (info->prefix, ==, "spe");
  g_assert_cmpint (info->method, ==, RPE_SPE_CONV);
  g_assert_cmpuint (info->n_heads, ==, H);      /* from the gate */
  g_assert_cmpuint (info->n_features, ==, D);
  g_assert_cmpuint (info->size, ==, L);

  g_assert_true (rpe_checkpoint_load_spe (set, "spe", -1, &p, &error));
  g_assert_no_error (error);
  g_assert_cmpint (p.method, ==, RPE_SPE_CONV);
  g_assert_cmpuint (p.n_heads, ==, H);
  g_assert_cmpuint (p.n_features, ==, D);
  g_assert_cmpuint (p.kernel, ==, L);
  /* the reference's swap: the query filter is conv_k.weight, the key filter conv_q.weight */
  for (gsize c = 0; c < H * D; c++)
    for (gsize j = 0; j < L; j++)
      {
        g_assert_cmpfloat (p.wq[c * L + j], ==, ck->data[c * L + j]);
        g_assert_cmpfloat (p.wk[c * L + j], ==, cq->data[c * L + j]);
      }
  check_gate (&p, gate, FALSE);

  /* the swap seen through the template: P(tau) = sum_j wq[j] wk[j + tau] with
   * wq = conv_k; with a one-hot conv_k at j = 0 and conv_q at j = 3 the
   * template peaks at tau = +3 (docs/math.md, section 2) */
  {
    g_autoptr (RpeTensorSet) onehot = rpe_tensor_set_new ();
    gsize shape[3] = { 1, 1, L };
    RpeTensor *q = rpe_tensor_new ("m.spe.conv_q.weight", 3, shape, NULL);
    RpeTensor *k = rpe_tensor_new ("m.spe.conv_k.weight", 3, shape, NULL);
    const gsize n = 8;
    float lags[2 * 8 - 1];
    RpeSpeParams p1;

    q->data[3] = 1.0f;
    k->data[0] = 1.0f;
    g_assert_true (rpe_tensor_set_add (onehot, q, NULL));
    g_assert_true (rpe_tensor_set_add (onehot, k, NULL));
    g_assert_true (rpe_checkpoint_load_spe (onehot, "m", -1, &p1, &error));
    g_assert_cmpfloat (p1.wq[0], ==, 1.0f);
    g_assert_cmpfloat (p1.wk[3], ==, 1.0f);
    g_assert_cmpint (rpe_spe_template_lags (&p1, 0, 0, n, false, lags), ==, RPE_OK);
    for (gsize i = 0; i < 2 * n - 1; i++)
      g_assert_cmpfloat_with_epsilon (lags[i], (int) i - (int) (n - 1) == 3 ? 1.0 : 0.0, 1e-6);
    rpe_spe_params_clear (&p1);
  }
  rpe_spe_params_clear (&p);

  /* without a gate H and D cannot be told apart: H = 1, D = H*D */
  add_tensor (ungated, "enc.spe.conv_q.weight", 3, H * D, 1, L, 1.0);
  add_tensor (ungated, "enc.spe.conv_k.weight", 3, H * D, 1, L, 2.0);
  g_assert_true (rpe_checkpoint_load_spe (ungated, NULL, -1, &p, &error));
  g_assert_cmpuint (p.n_heads, ==, 1);
  g_assert_cmpuint (p.n_features, ==, H * D);
  g_assert_null (p.gate);
  rpe_spe_params_clear (&p);
}

static void
test_pytorch_unshared (void)
{
  g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
  g_autoptr (GPtrArray) mods = NULL;
  g_autoptr (GError) error = NULL;
  const RpeSpeModuleInfo *info;
  const RpeTensor *gate1;
  RpeSpeParams p;

  add_sine (set, "net.spe.0", 2, 2, 3);
  add_tensor (set, "net.spe.1.freqs", 3, 2, 2, 3, 11.0);
  add_tensor (set, "net.spe.1.offsets", 3, 2, 2, 3, 12.0);
  add_tensor (set, "net.spe.1.gains", 3, 2, 2, 3, 13.0);
  gate1 = add_tensor (set, "net.spe_filters.1.gate", 2, 2, 2, 1, 14.0);

  mods = rpe_checkpoint_find_modules (set);
  g_assert_cmpuint (mods->len, ==, 1);
  info = g_ptr_array_index (mods, 0);
  g_assert_cmpstr (info->prefix, ==, "net");
  g_assert_cmpstr (info->convention, ==, "pytorch-unshared");
  g_assert_cmpuint (info->layers->len, ==, 2);
  g_assert_cmpint (g_array_index (info->layers, int, 1), ==, 1);

  g_assert_true (rpe_checkpoint_load_spe (set, "net", 1, &p, &error));
  g_assert_no_error (error);
  check_sine (&p, set, "net.spe.1", ".");
  check_gate (&p, gate1, FALSE);
  rpe_spe_params_clear (&p);

  g_assert_true (rpe_checkpoint_load_spe (set, "net", 0, &p, &error));
  check_sine (&p, set, "net.spe.0", ".");
  g_assert_null (p.gate);
  rpe_spe_params_clear (&p);

  g_assert_false (rpe_checkpoint_load_spe (set, "net", 5, &p, &error));
  check_error (error, RPE_ERROR_NOT_FOUND, "layer 5", NULL);
}

/* ---- Flax ------------------------------------------------------------- */

static void
test_flax (void)
{
  g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
  g_autoptr (GPtrArray) mods = NULL;
  g_autoptr (GError) error = NULL;
  const RpeTensor *g0, *g1, *g10, *cg, *kq, *kk;
  const RpeSpeModuleInfo *info;
  RpeSpeParams p;
  const gsize H = 2, D = 4, K = 3, L = 6;

  add_sine (set, "params/encoder/SineSPE_0", H, D, K);
  /* declared out of order: the layer is the number in the path (layer_10 is layer 10) */
  g10 = add_tensor (set, "params/encoder/layer_10/SPEGate_0/gate", 2, H, D, 1, 7.0);
  g1 = add_tensor (set, "params/encoder/layer_1/SPEGate_0/gate", 2, H, D, 1, 8.0);
  g0 = add_tensor (set, "params/encoder/layer_0/SPEGate_0/gate", 2, H, D, 1, 9.0);
  /* a conv module elsewhere, with its own gate */
  kq = add_tensor (set, "params/spe/conv_q/kernel", 3, L, 1, H * D, 21.0);
  kk = add_tensor (set, "params/spe/conv_k/kernel", 3, L, 1, H * D, 22.0);
  cg = add_tensor (set, "params/decoder/SPEGate_0/gate", 2, H, D, 1, 23.0);

  mods = rpe_checkpoint_find_modules (set);
  g_assert_cmpuint (mods->len, ==, 2);
  info = g_ptr_array_index (mods, 0);
  g_assert_cmpstr (info->prefix, ==, "params/encoder/SineSPE_0");
  g_assert_cmpstr (info->convention, ==, "flax");
  g_assert_cmpint (info->method, ==, RPE_SPE_SINE);
  g_assert_cmpuint (info->layers->len, ==, 3);
  g_assert_cmpint (g_array_index (info->layers, int, 2), ==, 10);
  info = g_ptr_array_index (mods, 1);
  g_assert_cmpstr (info->prefix, ==, "params/spe");
  g_assert_cmpint (info->method, ==, RPE_SPE_CONV);
  g_assert_cmpuint (info->size, ==, L);
  g_assert_cmpuint (info->n_heads, ==, H);
  g_assert_cmpuint (info->n_features, ==, D);

  /* sine: gates are inverted (g = 1 - sigmoid(gate)) */
  g_assert_true (rpe_checkpoint_load_spe (set, "params/encoder/SineSPE_0", -1, &p, &error));
  g_assert_no_error (error);
  check_sine (&p, set, "params/encoder/SineSPE_0", "/");
  check_gate (&p, g0, TRUE);
  rpe_spe_params_clear (&p);
  g_assert_true (rpe_checkpoint_load_spe (set, "params/encoder/SineSPE_0", 1, &p, &error));
  check_gate (&p, g1, TRUE);
  rpe_spe_params_clear (&p);
  g_assert_true (rpe_checkpoint_load_spe (set, "params/encoder/SineSPE_0", 10, &p, &error));
  check_gate (&p, g10, TRUE);
  rpe_spe_params_clear (&p);
  g_assert_false (rpe_checkpoint_load_spe (set, "params/encoder/SineSPE_0", 2, &p, &error));
  check_error (error, RPE_ERROR_NOT_FOUND, "layer 2", "0, 1, 10");
  g_clear_error (&error);
  rpe_spe_params_clear (&p);

  /* conv: kernel (L, 1, C) transposed; conv_q is the query filter (no swap) */
  g_assert_true (rpe_checkpoint_load_spe (set, "params/spe", -1, &p, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (p.kernel, ==, L);
  for (gsize c = 0; c < H * D; c++)
    for (gsize j = 0; j < L; j++)
      {
        g_assert_cmpfloat (p.wq[c * L + j], ==, kq->data[j * H * D + c]);
        g_assert_cmpfloat (p.wk[c * L + j], ==, kk->data[j * H * D + c]);
      }
  check_gate (&p, cg, TRUE);
  rpe_spe_params_clear (&p);
}

/* ---- errors ----------------------------------------------------------- */

static void
test_errors (void)
{
  g_autoptr (GError) error = NULL;
  GPtrArray *mods;
  RpeSpeParams p;

  {
    /* only freqs */
    g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
    add_tensor (set, "m.spe.freqs", 3, 2, 2, 2, 0.0);
    g_assert_false (rpe_checkpoint_load_spe (set, NULL, -1, &p, &error));
    check_error (error, RPE_ERROR_NOT_FOUND, "'m.spe.offsets', 'm.spe.gains'", "found 'm.spe.freqs'");
    g_clear_error (&error);
    mods = rpe_checkpoint_find_modules (set);
    g_assert_cmpuint (mods->len, ==, 0);
    g_ptr_array_unref (mods);
  }
  {
    /* conv_k missing */
    g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
    add_tensor (set, "m.spe.conv_q.weight", 3, 4, 1, 3, 0.0);
    g_assert_false (rpe_checkpoint_load_spe (set, "m", -1, &p, &error));
    check_error (error, RPE_ERROR_NOT_FOUND, "m.spe.conv_k.weight", NULL);
    g_clear_error (&error);
  }
  {
    /* nothing at all */
    g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
    add_tensor (set, "fc.weight", 2, 2, 2, 1, 0.0);
    g_assert_false (rpe_checkpoint_load_spe (set, NULL, -1, &p, &error));
    check_error (error, RPE_ERROR_NOT_FOUND, "No SPE module", NULL);
    g_clear_error (&error);
  }
  {
    /* inconsistent shapes */
    g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
    add_tensor (set, "m.spe.freqs", 3, 2, 3, 4, 0.0);
    add_tensor (set, "m.spe.offsets", 3, 2, 3, 5, 0.0);
    add_tensor (set, "m.spe.gains", 3, 2, 3, 4, 0.0);
    g_assert_false (rpe_checkpoint_load_spe (set, NULL, -1, &p, &error));
    check_error (error, RPE_ERROR_FORMAT, "m.spe.offsets", "(2, 3, 5)");
    g_clear_error (&error);
  }
  {
    /* freqs not 3-D */
    g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
    add_tensor (set, "m.spe.freqs", 2, 6, 4, 1, 0.0);
    add_tensor (set, "m.spe.offsets", 2, 6, 4, 1, 0.0);
    add_tensor (set, "m.spe.gains", 2, 6, 4, 1, 0.0);
    g_assert_false (rpe_checkpoint_load_spe (set, "m", -1, &p, &error));
    check_error (error, RPE_ERROR_FORMAT, "m.spe.freqs", "(H, D, K)");
    g_clear_error (&error);
  }
  {
    /* gate of the wrong shape */
    g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
    add_sine (set, "m.spe", 2, 3, 4);
    add_tensor (set, "m.spe_filters.0.gate", 2, 3, 2, 1, 0.0);
    g_assert_false (rpe_checkpoint_load_spe (set, NULL, -1, &p, &error));
    check_error (error, RPE_ERROR_FORMAT, "m.spe_filters.0.gate", "(2, 3)");
    g_clear_error (&error);
  }
  {
    /* conv filters of different shapes, and a gate not matching the channels */
    g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
    g_autoptr (RpeTensorSet) set2 = rpe_tensor_set_new ();
    add_tensor (set, "m.spe.conv_q.weight", 3, 4, 1, 3, 0.0);
    add_tensor (set, "m.spe.conv_k.weight", 3, 4, 1, 5, 0.0);
    g_assert_false (rpe_checkpoint_load_spe (set, NULL, -1, &p, &error));
    check_error (error, RPE_ERROR_FORMAT, "m.spe.conv_k.weight", "(4, 1, 3)");
    g_clear_error (&error);
    add_tensor (set2, "m.spe.conv_q.weight", 3, 4, 1, 3, 0.0);
    add_tensor (set2, "m.spe.conv_k.weight", 3, 4, 1, 3, 0.0);
    add_tensor (set2, "m.spe_filters.0.gate", 2, 3, 3, 1, 0.0);
    g_assert_false (rpe_checkpoint_load_spe (set2, NULL, -1, &p, &error));
    check_error (error, RPE_ERROR_FORMAT, "m.spe_filters.0.gate", "4 channels");
    g_clear_error (&error);
  }
  {
    /* NaN and infinity */
    g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
    g_autoptr (RpeTensorSet) set2 = rpe_tensor_set_new ();
    RpeTensor *g;
    add_sine (set, "m.spe", 2, 3, 4);
    g = (RpeTensor *) rpe_tensor_set_lookup (set, "m.spe.gains");
    g->data[1 * 12 + 2 * 4 + 3] = NAN;
    g_assert_false (rpe_checkpoint_load_spe (set, NULL, -1, &p, &error));
    check_error (error, RPE_ERROR_NOT_FINITE, "m.spe.gains", "[1, 2, 3]");
    g_clear_error (&error);
    add_sine (set2, "m.spe", 2, 3, 4);
    g = (RpeTensor *) add_tensor (set2, "m.spe_filters.0.gate", 2, 2, 3, 1, 0.0);
    g->data[0] = -INFINITY;
    g_assert_false (rpe_checkpoint_load_spe (set2, NULL, -1, &p, &error));
    check_error (error, RPE_ERROR_NOT_FINITE, "m.spe_filters.0.gate", NULL);
    g_clear_error (&error);
  }
}

/* ---- reading ---------------------------------------------------------- */

static void
test_read (void)
{
  g_autoptr (GError) error = NULL;
  const float values[3] = { 1.0f, 2.0f, 3.0f };
  const gsize shape[1] = { 3 };
  g_autofree char *npy = g_build_filename (rpe_test_tmpdir (), "weights.npy", NULL);
  g_autofree char *st = g_build_filename (rpe_test_tmpdir (), "model.safetensors", NULL);
  g_autofree char *contents = NULL;
  g_autoptr (RpeTensorSet) src = rpe_tensor_set_new ();
  RpeTensorSet *set;
  GBytes *bytes;
  gsize length;

  /* a lone .npy becomes one tensor named after the file stem */
  g_assert_true (rpe_npy_write (npy, values, 1, shape, FALSE, &error));
  set = rpe_checkpoint_read (npy, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rpe_tensor_set_size (set), ==, 1);
  g_assert_cmpstr (rpe_tensor_set_get (set, 0)->name, ==, "weights");
  g_assert_cmpfloat (rpe_tensor_set_get (set, 0)->data[2], ==, 3.0f);
  rpe_tensor_set_free (set);

  /* .safetensors, recognised from the content whatever the name */
  add_sine (src, "m.spe", 1, 2, 3);
  g_assert_true (rpe_safetensors_write (st, src, &error));
  g_assert_true (g_file_get_contents (st, &contents, &length, NULL));
  bytes = g_bytes_new (contents, length);
  set = rpe_checkpoint_read_bytes (bytes, "oddly-named.bin", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rpe_tensor_set_size (set), ==, 3);
  g_assert_cmpstr (rpe_tensor_set_get (set, 0)->name, ==, "m.spe.freqs");
  rpe_tensor_set_free (set);
  g_bytes_unref (bytes);

  /* a truncated .safetensors still reports the safetensors problem */
  bytes = g_bytes_new (contents, length - 5);
  g_assert_null (rpe_checkpoint_read_bytes (bytes, "cut.safetensors", &error));
  check_error (error, RPE_ERROR_FORMAT, "cut.safetensors", "m.spe.gains");
  g_clear_error (&error);
  g_bytes_unref (bytes);

  /* not a checkpoint */
  {
    static const struct { const char *data; gsize len; RpeStatus code; const char *needle; } cases[] = {
      { "", 0, RPE_ERROR_FORMAT, "empty" },
      { "hello world, this is text", 25, RPE_ERROR_FORMAT, "not a .safetensors or .npy file" },
      { "\x93NUMP", 5, RPE_ERROR_FORMAT, "not a .safetensors or .npy file" },
      { "PK\x03\x04 zip data", 14, RPE_ERROR_FORMAT, "zip" },
      { "\x80\x02}q\x00(X", 7, RPE_ERROR_UNSUPPORTED, "pickle" },
      { "\x10\0\0\0\0\0\0\0[1, 2]          ", 24, RPE_ERROR_FORMAT, "not a .safetensors" },
    };
    for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
      {
        bytes = g_bytes_new (cases[i].data, cases[i].len);
        g_assert_null (rpe_checkpoint_read_bytes (bytes, "thing.ckpt", &error));
        check_error (error, cases[i].code, "thing.ckpt", cases[i].needle);
        g_clear_error (&error);
        g_bytes_unref (bytes);
      }
  }

  /* a directory and a missing file */
  g_assert_null (rpe_checkpoint_read (rpe_test_tmpdir (), &error));
  check_error (error, RPE_ERROR_IO, "directory", NULL);
  g_clear_error (&error);
}

/* ---- the demo checkpoint ---------------------------------------------- */

static void
test_demo (void)
{
  const char *path = g_getenv ("RPE_DEMO_CHECKPOINT");
  g_autoptr (RpeTensorSet) set = NULL;
  g_autoptr (GPtrArray) mods = NULL;
  g_autoptr (GError) error = NULL;
  RpeSpeParams p;

  if (path == NULL)
    {
      g_test_skip ("RPE_DEMO_CHECKPOINT is not set");
      return;
    }
  set = rpe_checkpoint_read (path, &error);
  g_assert_no_error (error);
  mods = rpe_checkpoint_find_modules (set);
  g_assert_cmpuint (mods->len, ==, 2);
  for (guint m = 0; m < 2; m++)
    {
      const RpeSpeModuleInfo *info = g_ptr_array_index (mods, m);
      g_assert_cmpstr (info->prefix, ==, m == 0 ? "sine" : "conv");
      g_assert_cmpint (info->method, ==, m == 0 ? RPE_SPE_SINE : RPE_SPE_CONV);
      g_assert_cmpuint (info->n_heads, ==, 4);
      g_assert_cmpuint (info->n_features, ==, 16);
      g_assert_cmpuint (info->size, ==, m == 0 ? 5 : 32);
      g_assert_cmpstr (info->convention, ==, "pytorch");
      g_assert_cmpuint (info->layers->len, ==, 2);
    }

  for (int layer = 0; layer < 2; layer++)
    {
      double mean_gain[5] = { 0 };

      g_assert_true (rpe_checkpoint_load_spe (set, "sine", layer, &p, &error));
      g_assert_no_error (error);
      g_assert_true (rpe_spe_params_validate (&p) == RPE_OK);
      for (gsize i = 0; i < 4 * 16 * 5; i++)
        {
          g_assert_cmpfloat (p.freqs[i], >, 0.0);
          g_assert_cmpfloat (p.freqs[i], <, 0.5);
          g_assert_cmpfloat (p.gains[i], >, 0.0);
          mean_gain[i % 5] += p.gains[i] / 64.0;
        }
      /* "trained-looking": gains decay with the frequency index */
      for (int k = 1; k < 5; k++)
        g_assert_cmpfloat (mean_gain[k], <, mean_gain[k - 1]);
      for (gsize i = 0; i < 64; i++)
        {
          g_assert_cmpfloat (p.gate[i], >=, 0.049);
          g_assert_cmpfloat (p.gate[i], <=, 0.601);
        }
      rpe_spe_params_clear (&p);

      g_assert_true (rpe_checkpoint_load_spe (set, "conv", layer, &p, &error));
      g_assert_no_error (error);
      g_assert_true (rpe_spe_params_validate (&p) == RPE_OK);
      g_assert_cmpuint (p.kernel, ==, 32);
      for (gsize c = 0; c < 64; c++)
        {
          double nq = 0, nk = 0;
          for (gsize j = 0; j < 32; j++)
            {
              nq += (double) p.wq[c * 32 + j] * p.wq[c * 32 + j];
              nk += (double) p.wk[c * 32 + j] * p.wk[c * 32 + j];
            }
          g_assert_cmpfloat_with_epsilon (nq, 1.0, 1e-5);
          g_assert_cmpfloat_with_epsilon (nk, 1.0, 1e-5);
        }
      for (gsize i = 0; i < 64; i++)
        {
          g_assert_cmpfloat (p.gate[i], >=, 0.049);
          g_assert_cmpfloat (p.gate[i], <=, 0.601);
        }
      rpe_spe_params_clear (&p);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/core/checkpoint/pytorch-sine", test_pytorch_sine);
  g_test_add_func ("/core/checkpoint/pytorch-conv", test_pytorch_conv);
  g_test_add_func ("/core/checkpoint/pytorch-unshared", test_pytorch_unshared);
  g_test_add_func ("/core/checkpoint/flax", test_flax);
  g_test_add_func ("/core/checkpoint/errors", test_errors);
  g_test_add_func ("/core/checkpoint/read", test_read);
  g_test_add_func ("/core/checkpoint/demo", test_demo);
  return g_test_run ();
}

/* Flax msgpack checkpoints (tests/fixtures/make-flax-fixtures.py): the reader against
 * numpy's .npy copies of the arrays, discovery of the Flax layouts, the inverted gate
 * and the (L, 1, H*D) kernels (docs/math.md, section 10), and hostile msgpack made here
 * with msgpack-c's packer. */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib.h>
#include <msgpack.h>

#include "rpe-alloc.h"
#include "rpe-checkpoint.h"
#include "rpe-error.h"
#include "rpe-msgpack.h"
#include "rpe-npy.h"
#include "rpe-test-utils.h"

#define N 10

static char *
fixture (const char *a,
         const char *b)
{
  return g_test_build_filename (G_TEST_DIST, "fixtures", "ckpt", "flax", a, b, NULL);
}

static RpeTensorSet *
read_ckpt (const char *file)
{
  g_autofree char *path = fixture (file, NULL);
  g_autoptr (GError) error = NULL;
  RpeTensorSet *set = rpe_checkpoint_read (path, &error);

  g_assert_no_error (error);
  return set;
}

/* The .npy copy of array `name` (its '/' written as '.'), checked equal to the set's. */
static RpeTensor *
npy_copy (const RpeTensorSet *set,
          const char         *step,
          const char         *name)
{
  g_autofree char *file = g_strdup_printf ("%s.npy", name);
  g_autofree char *path = NULL;
  g_autoptr (GError) error = NULL;
  const RpeTensor *t = rpe_tensor_set_lookup (set, name);
  RpeTensor *ref;

  g_strdelimit (file, "/", '.');
  path = fixture (step, file);
  ref = rpe_npy_read (path, &error);
  g_assert_no_error (error);
  if (t == NULL)
    g_error ("the checkpoint has no '%s'", name);
  g_assert_cmpuint (t->ndim, ==, ref->ndim);
  for (gsize i = 0; i < t->ndim; i++)
    g_assert_cmpuint (t->shape[i], ==, ref->shape[i]);
  g_assert_cmpmem (t->data, t->n_elements * sizeof (float), ref->data, ref->n_elements * sizeof (float));
  return ref;
}

static double
ref_sigmoid (double x)
{
  return 1.0 / (1.0 + exp (-x));
}

/* docs/math.md, sections 1 and 3 with the Flax gate: g = 1 - sigmoid(gate). */
static void
check_sine (const RpeSpeParams *p,
            const RpeTensor    *freqs,
            const RpeTensor    *offsets,
            const RpeTensor    *gains,
            const RpeTensor    *gate)
{
  gsize Hn = freqs->shape[0], Dn = freqs->shape[1], K = freqs->shape[2];

  g_assert_cmpint (p->method, ==, RPE_SPE_SINE);
  g_assert_cmpuint (p->n_heads, ==, Hn);
  g_assert_nonnull (p->gate);
  for (gsize h = 0; h < Hn; h++)
    for (gsize d = 0; d < Dn; d++)
      {
        double ref[2 * N - 1], g = 1 - ref_sigmoid (gate->data[h * Dn + d]);
        float got[2 * N - 1];

        for (int i = 0; i < 2 * N - 1; i++)
          {
            double tau = i - (N - 1), s = 0;
            for (gsize k = 0; k < K; k++)
              {
                gsize at = (h * Dn + d) * K + k;
                double lambda = log1p (exp (gains->data[at]));
                s += lambda * lambda * cos (2 * G_PI * ref_sigmoid (freqs->data[at]) / 2 * tau + offsets->data[at]);
              }
            ref[i] = (1 - g) * s / (2.0 * (double) K) + g;
          }
        g_assert_cmpint (rpe_spe_template_lags (p, h, d, N, true, got), ==, RPE_OK);
        g_assert_cmpfloat (rpe_test_max_abs_err (got, ref, 2 * N - 1), <, 2e-6);
      }
}

/* flax.optim's layout: target/params only (the momenta in state/param_states share
 * the names), one code, a gate per encoderblock_<l>. */
static void
test_optim_layout (void)
{
  g_autoptr (RpeTensorSet) set = read_ckpt ("checkpoint_100");
  g_autoptr (RpeTensorSet) dotted = read_ckpt ("flax-dotted.safetensors");
  g_autoptr (GPtrArray) mods = rpe_checkpoint_find_modules (set);
  g_autoptr (RpeTensor) f = npy_copy (set, "100", "encoder/SineSPE_0/freqs");
  g_autoptr (RpeTensor) o = npy_copy (set, "100", "encoder/SineSPE_0/offsets");
  g_autoptr (RpeTensor) g = npy_copy (set, "100", "encoder/SineSPE_0/gains");
  const RpeSpeModuleInfo *info;

  for (gsize i = 0; i < rpe_tensor_set_size (set); i++)
    {
      const char *name = rpe_tensor_set_get (set, i)->name;
      g_assert_false (g_str_has_prefix (name, "state") || g_str_has_prefix (name, "target"));
    }
  g_assert_nonnull (rpe_tensor_set_lookup (set, "encoder/embed/embedding"));
  g_assert_cmpuint (mods->len, ==, 1);
  info = g_ptr_array_index (mods, 0);
  g_assert_cmpstr (info->prefix, ==, "encoder/SineSPE_0");
  g_assert_cmpstr (info->convention, ==, "flax");
  g_assert_cmpuint (info->layers->len, ==, 3);
  for (int layer = 0; layer < 3; layer++)
    {
      g_autofree char *gname = g_strdup_printf ("encoder/encoderblock_%d/SelfAttention_0/SPEGate_0/gate", layer);
      g_autofree char *dname = g_strdup (gname);
      g_autoptr (RpeTensor) gate = npy_copy (set, "100", gname);
      g_autoptr (GError) error = NULL;
      RpeSpeParams p;

      g_assert_true (rpe_checkpoint_load_spe (set, NULL, layer, &p, &error));
      check_sine (&p, f, o, g, gate);
      rpe_spe_params_clear (&p);
      /* the same parameters with '.' names */
      g_strdelimit (dname, "/", '.');
      g_assert_cmpmem (rpe_tensor_set_lookup (dotted, dname)->data, 6 * sizeof (float), gate->data, 6 * sizeof (float));
      g_assert_true (rpe_checkpoint_load_spe (dotted, "encoder.SineSPE_0", layer, &p, &error));
      g_assert_no_error (error);
      check_sine (&p, f, o, g, gate);
      rpe_spe_params_clear (&p);
    }
}

/* Unshared: --layer picks encoderblock_<l>'s code and gate; float16 and bfloat16 arrays. */
static void
test_unshared_and_dtypes (void)
{
  g_autoptr (RpeTensorSet) set = read_ckpt ("checkpoint_200");
  g_autoptr (GPtrArray) mods = rpe_checkpoint_find_modules (set);
  const RpeTensor *bf;
  static const float bf_values[6] = { 1.0f, -2.5f, 0.15625f, 65536.0f, -0.0078125f, 3.0f };

  g_assert_cmpuint (mods->len, ==, 1);
  g_assert_cmpstr (((RpeSpeModuleInfo *) g_ptr_array_index (mods, 0))->convention, ==, "flax-unshared");
  for (int layer = 0; layer < 3; layer++)
    {
      g_autofree char *dir = g_strdup_printf ("encoderblock_%d/SelfAttention_0", layer);
      g_autofree char *fn = g_strdup_printf ("%s/SineSPE_0/freqs", dir), *on = g_strdup_printf ("%s/SineSPE_0/offsets", dir);
      g_autofree char *gn = g_strdup_printf ("%s/SineSPE_0/gains", dir), *gate_n = g_strdup_printf ("%s/SPEGate_0/gate", dir);
      g_autoptr (RpeTensor) f = npy_copy (set, "200", fn), o = npy_copy (set, "200", on);
      g_autoptr (RpeTensor) g = npy_copy (set, "200", gn), gate = npy_copy (set, "200", gate_n);
      g_autoptr (GError) error = NULL;
      RpeSpeParams p;

      g_assert_cmpint (rpe_tensor_set_lookup (set, fn)->dtype, ==, RPE_DTYPE_F16);
      g_assert_true (rpe_checkpoint_load_spe (set, NULL, layer, &p, &error));
      g_assert_no_error (error);
      check_sine (&p, f, o, g, gate);
      rpe_spe_params_clear (&p);
    }
  bf = rpe_tensor_set_lookup (set, "extra/bf16");
  g_assert_nonnull (bf);
  g_assert_cmpint (bf->dtype, ==, RPE_DTYPE_BF16);
  g_assert_cmpuint (bf->ndim, ==, 2);
  g_assert_cmpmem (bf->data, sizeof bf_values, bf_values, sizeof bf_values);
  /* the integer step and counters are not parameters */
  g_assert_null (rpe_tensor_set_lookup (set, "step"));
}

/* convSPE: kernels (L, 1, H*D); conv_q/kernel is the query filter (no swap). */
static void
test_conv (void)
{
  g_autoptr (RpeTensorSet) set = read_ckpt ("checkpoint_300");
  g_autoptr (RpeTensor) kq = npy_copy (set, "300", "encoder/spe/conv_q/kernel");
  g_autoptr (RpeTensor) kk = npy_copy (set, "300", "encoder/spe/conv_k/kernel");
  g_autoptr (RpeTensor) gate = npy_copy (set, "300", "encoder/encoderblock_2/SelfAttention_0/SPEGate_0/gate");
  g_autoptr (GError) error = NULL;
  gsize L = kq->shape[0], C = kq->shape[2];
  RpeSpeParams p;

  g_assert_true (rpe_checkpoint_load_spe (set, "encoder/spe", 2, &p, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (p.n_heads, ==, 2);
  g_assert_cmpuint (p.n_features, ==, 3);
  g_assert_cmpuint (p.kernel, ==, L);
  for (gsize c = 0; c < C; c++)
    {
      double ref[2 * N - 1], g = 1 - ref_sigmoid (gate->data[c]);
      float got[2 * N - 1];

      for (int i = 0; i < 2 * N - 1; i++)
        {
          int tau = i - (N - 1);
          double s = 0;
          for (int j = 0; j < (int) L; j++)
            if (j + tau >= 0 && j + tau < (int) L)
              s += (double) kq->data[(gsize) j * C + c] * kk->data[(gsize) (j + tau) * C + c];
          ref[i] = (1 - g) * s + g;
        }
      g_assert_cmpint (rpe_spe_template_lags (&p, c / 3, c % 3, N, true, got), ==, RPE_OK);
      g_assert_cmpfloat (rpe_test_max_abs_err (got, ref, 2 * N - 1), <, 2e-6);
    }
  rpe_spe_params_clear (&p);
}

/* ---- hostile msgpack --------------------------------------------------- */

static void
pack_str (msgpack_packer *pk,
          const char     *s)
{
  msgpack_pack_str (pk, strlen (s));
  msgpack_pack_str_body (pk, s, strlen (s));
}

/* ext 1 around [shape, dtype, data] */
static void
pack_array (msgpack_packer *pk,
            gsize           ndim,
            const guint64  *shape,
            const char     *dtype,
            gsize           data_len)
{
  msgpack_sbuffer inner;
  msgpack_packer ip;
  g_autofree guint8 *zeros = g_malloc0 (data_len + 1);

  msgpack_sbuffer_init (&inner);
  msgpack_packer_init (&ip, &inner, msgpack_sbuffer_write);
  msgpack_pack_array (&ip, 3);
  msgpack_pack_array (&ip, ndim);
  for (gsize i = 0; i < ndim; i++)
    msgpack_pack_uint64 (&ip, shape[i]);
  pack_str (&ip, dtype);
  msgpack_pack_bin (&ip, data_len);
  msgpack_pack_bin_body (&ip, zeros, data_len);
  msgpack_pack_ext (pk, inner.size, 1);
  msgpack_pack_ext_body (pk, inner.data, inner.size);
  msgpack_sbuffer_destroy (&inner);
}

static void
expect_error (msgpack_sbuffer *buf,
              gsize            cut,
              RpeStatus        code,
              const char      *needle)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) bytes = g_bytes_new (buf->data, buf->size - cut);
  RpeTensorSet *set = rpe_checkpoint_read_bytes (bytes, "evil", &error);

  if (set != NULL)
    g_error ("a hostile msgpack was accepted (expected '%s')", needle);
  g_assert_error (error, RPE_ERROR, (int) code);
  if (strstr (error->message, needle) == NULL)
    g_error ("'%s' lacks '%s'", error->message, needle);
}

static void
test_hostile (void)
{
  msgpack_sbuffer buf;
  msgpack_packer pk;
  const guint64 shape23[2] = { 2, 3 };

#define RESET() do { msgpack_sbuffer_clear (&buf); } while (0)
  msgpack_sbuffer_init (&buf);
  msgpack_packer_init (&pk, &buf, msgpack_sbuffer_write);

  /* a valid one first: the harness itself works */
  msgpack_pack_map (&pk, 1);
  pack_str (&pk, "w");
  pack_array (&pk, 2, shape23, "float32", 24);
  {
    g_autoptr (GBytes) bytes = g_bytes_new (buf.data, buf.size);
    g_autoptr (GError) error = NULL;
    g_autoptr (RpeTensorSet) set = rpe_checkpoint_read_bytes (bytes, "ok", &error);
    g_assert_no_error (error);
    g_assert_cmpuint (rpe_tensor_set_get (set, 0)->n_elements, ==, 6);
  }
  /* truncated, and trailing bytes */
  expect_error (&buf, 3, RPE_ERROR_FORMAT, "truncated");
  msgpack_pack_nil (&pk);
  expect_error (&buf, 0, RPE_ERROR_FORMAT, "follow");

  /* data shorter or longer than the shape says */
  RESET ();
  msgpack_pack_map (&pk, 1);
  pack_str (&pk, "w");
  pack_array (&pk, 2, shape23, "float32", 20);
  expect_error (&buf, 0, RPE_ERROR_FORMAT, "'w' holds 20 bytes");
  /* a shape whose product overflows */
  RESET ();
  {
    const guint64 huge[3] = { (guint64) 1 << 40, (guint64) 1 << 40, 16 };
    msgpack_pack_map (&pk, 1);
    pack_str (&pk, "w");
    pack_array (&pk, 3, huge, "float32", 4);
    expect_error (&buf, 0, RPE_ERROR_FORMAT, "too large");
  }
  /* a shape that fits size_t but not the budget (data checked first: so give it) */
  /* too many dimensions */
  RESET ();
  {
    const guint64 nine[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    msgpack_pack_map (&pk, 1);
    pack_str (&pk, "w");
    pack_array (&pk, 9, nine, "float32", 4);
    expect_error (&buf, 0, RPE_ERROR_FORMAT, "at most 8");
  }
  /* an unknown dtype */
  RESET ();
  msgpack_pack_map (&pk, 1);
  pack_str (&pk, "w");
  pack_array (&pk, 2, shape23, "float8\x1b[2J", 6);
  expect_error (&buf, 0, RPE_ERROR_UNSUPPORTED, "\\033");
  /* keys: NUL inside, not a string */
  RESET ();
  msgpack_pack_map (&pk, 1);
  msgpack_pack_str (&pk, 6);
  msgpack_pack_str_body (&pk, "a\0hide", 6);
  pack_array (&pk, 2, shape23, "float32", 24);
  expect_error (&buf, 0, RPE_ERROR_FORMAT, "NUL");
  RESET ();
  msgpack_pack_map (&pk, 1);
  msgpack_pack_nil (&pk);
  pack_array (&pk, 2, shape23, "float32", 24);
  expect_error (&buf, 0, RPE_ERROR_FORMAT, "not a string");
  /* nesting deeper than the limit */
  RESET ();
  for (int i = 0; i < 40; i++)
    {
      msgpack_pack_map (&pk, 1);
      pack_str (&pk, "k");
    }
  pack_array (&pk, 2, shape23, "float32", 24);
  expect_error (&buf, 0, RPE_ERROR_FORMAT, "nested too deeply");
  /* chunked (flax's > 1 GiB arrays), and no arrays at all */
  RESET ();
  msgpack_pack_map (&pk, 1);
  pack_str (&pk, "w");
  msgpack_pack_map (&pk, 1);
  pack_str (&pk, "__msgpack_chunked_array__");
  msgpack_pack_true (&pk);
  expect_error (&buf, 0, RPE_ERROR_UNSUPPORTED, "chunks");
  RESET ();
  msgpack_pack_map (&pk, 1);
  pack_str (&pk, "step");
  msgpack_pack_int (&pk, 7);
  expect_error (&buf, 0, RPE_ERROR_NOT_FOUND, "without floating-point arrays");
  /* a million tiny objects: refused by the budget before msgpack-c builds them */
  RESET ();
  msgpack_pack_map (&pk, 1);
  pack_str (&pk, "w");
  msgpack_pack_array (&pk, 1000000);
  for (int i = 0; i < 1000000; i++)
    msgpack_pack_nil (&pk);
  rpe_budget_set (16u << 20);
  expect_error (&buf, 0, RPE_ERROR_NO_MEMORY, "budget");
  /* and the arrays' total */
  RESET ();
  {
    const guint64 big[1] = { 2u << 20 };    /* 8 MiB of float32 */
    msgpack_pack_map (&pk, 3);
    for (int i = 0; i < 3; i++)
      {
        char key[2] = { (char) ('a' + i), 0 };
        pack_str (&pk, key);
        pack_array (&pk, 1, big, "float32", 8u << 20);
      }
    expect_error (&buf, 0, RPE_ERROR_NO_MEMORY, "budget");
  }
  rpe_budget_set (0);
  /* one name twice: "a/b" as a key and as a path; the message names the file */
  RESET ();
  msgpack_pack_map (&pk, 2);
  pack_str (&pk, "a/b");
  pack_array (&pk, 2, shape23, "float32", 24);
  pack_str (&pk, "a");
  msgpack_pack_map (&pk, 1);
  pack_str (&pk, "b");
  pack_array (&pk, 2, shape23, "float32", 24);
  expect_error (&buf, 0, RPE_ERROR_FORMAT, "'evil': Duplicate tensor name 'a/b'");
  msgpack_sbuffer_destroy (&buf);
#undef RESET
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/msgpack/optim-layout", test_optim_layout);
  g_test_add_func ("/msgpack/unshared-dtypes", test_unshared_and_dtypes);
  g_test_add_func ("/msgpack/conv", test_conv);
  g_test_add_func ("/msgpack/hostile", test_hostile);
  return g_test_run ();
}

/* test-cli-lrpe.c: `rpe` on trained LRPE and FastRPB modules (issue 10).
 *
 * The fixtures in tests/fixtures/lrpe/ are made by make-lrpe-fixtures.py: a
 * state_dict with LRPE modules (a learned v and theta, a permutation buffer, a
 * learned complex theta) and FastRPB biases in the reference's full and
 * symmetric layouts trained at M = 24, and the expected outputs computed there
 * by torch modules written from docs/math.md, sections 7 and 8 (enc*.npy, bias*.npy).
 */
#include "config.h"

#include <glib.h>
#include <math.h>
#include <string.h>
#include <sys/wait.h>

#include "rpe-checkpoint.h"
#include "rpe-npy.h"
#include "rpe-test-utils.h"

static char *
fixture (const char *name)
{
  return g_test_build_filename (G_TEST_DIST, "fixtures", "lrpe", name, NULL);
}

/* max |got - want| / max |want| over two .npy files of the same shape */
static double
npy_rel_err (const char *got_path, const char *want_path)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeTensor) got = rpe_npy_read (got_path, &error);
  g_autoptr (RpeTensor) want = NULL;
  double err = 0, scale = 0;

  g_assert_no_error (error);
  want = rpe_npy_read (want_path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (got->ndim, ==, want->ndim);
  for (gsize k = 0; k < got->ndim; k++)
    g_assert_cmpuint (got->shape[k], ==, want->shape[k]);
  for (gsize i = 0; i < want->n_elements; i++)
    {
      err = MAX (err, fabs ((double) got->data[i] - want->data[i]));
      scale = MAX (scale, fabs ((double) want->data[i]));
    }
  g_assert_cmpfloat (scale, >, 0);
  return err / scale;
}

static void
test_info (void)
{
  g_autofree char *ckpt = fixture ("lrpe.pt");
  g_autofree char *out = NULL;

  g_assert_cmpint (rpe_test_run_cli (&out, NULL, "info '%s'", ckpt), ==, 0);
  g_assert_nonnull (strstr (out, "LRPE modules: 3"));
  g_assert_nonnull (strstr (out, "encoder.layers.0.attn.lrpe D=8  v: Householder"));
  g_assert_nonnull (strstr (out, "permutation: (1, 64, 8)"));
  g_assert_nonnull (strstr (out, "FastRPB modules: 2"));
  g_assert_nonnull (strstr (out, "encoder.positional_bias"));
  g_assert_nonnull (strstr (out, "decoder.positional_bias  H=2  bias.w (1, 2, 24): symmetric, M = 24"));
}

static void
test_lrpe_checkpoint (void)
{
  g_autofree char *ckpt = fixture ("lrpe.pt");
  g_autofree char *q = fixture ("q.npy");
  g_autofree char *qf = fixture ("q-fortran.npy");
  g_autofree char *out = rpe_test_tmp_path ("lrpe-enc.npy");
  static const char *const extra[] = { "", "--lrpe-p odd-even", "--lrpe-p dct" };
  g_autofree char *err = NULL;

  for (int i = 0; i < 3; i++)
    {
      g_autofree char *want = g_strdup_printf ("enc%d.npy", i);
      g_autofree char *want_path = fixture (want);
      double e;

      /* P and Lambda follow from the leaves (v: Householder; theta (1, 1, D//2): rotation,
       * (1, 1, D): complex; permutation: the permutation Lambda); P is named when it has none */
      g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute lrpe-encode --checkpoint '%s' --prefix encoder.layers.%d.attn.lrpe %s "
                                "--queries '%s' -o '%s'", ckpt, i, extra[i], i == 1 ? qf : q, out), ==, 0);
      e = npy_rel_err (out, want_path);
      g_test_message ("module %d: max rel err %.3g against the torch forward", i, e);
      g_assert_cmpfloat (e, <, 1e-5);
    }

  /* several modules and no --prefix: the error lists them */
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute lrpe-encode --checkpoint '%s' --queries '%s' -o '%s'", ckpt, q, out), ==, 2);
  g_assert_nonnull (strstr (err, "encoder.layers.2.attn.lrpe"));
  g_assert_nonnull (strstr (err, "--prefix"));
  g_clear_pointer (&err, g_free);
  /* a learned complex theta (1, 1, D) does not fit rfft's d' = 5 (the reference cannot run it) */
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute lrpe-encode --checkpoint '%s' --prefix encoder.layers.2.attn.lrpe "
                            "--lrpe-p fourier --queries '%s' -o '%s'", ckpt, q, out), ==, 2);
  g_assert_nonnull (strstr (err, "needs 5 values"));
  g_clear_pointer (&err, g_free);
  /* a Householder v with another P */
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute lrpe-encode --checkpoint '%s' --prefix encoder.layers.0.attn.lrpe "
                            "--lrpe-p dct --queries '%s' -o '%s'", ckpt, q, out), ==, 2);
  g_assert_nonnull (strstr (err, "Householder v"));
  g_clear_pointer (&err, g_free);
  /* contradicting the leaves is refused */
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute lrpe-encode --checkpoint '%s' --prefix encoder.layers.1.attn.lrpe "
                            "--lrpe-lambda rotation --queries '%s' -o '%s'", ckpt, q, out), ==, 2);
  g_assert_nonnull (strstr (err, "permutation buffer"));
}

static void
test_lrpe_npy (void)
{
  g_autofree char *q = fixture ("q.npy");
  g_autofree char *v = fixture ("v.npy");
  g_autofree char *theta = fixture ("theta.npy");
  g_autofree char *perm = fixture ("permutation.npy");
  g_autofree char *enc0 = fixture ("enc0.npy");
  g_autofree char *enc1 = fixture ("enc1.npy");
  g_autofree char *out = rpe_test_tmp_path ("lrpe-enc-npy.npy");
  g_autofree char *badp = rpe_test_tmp_path ("bad-perm.npy");
  g_autofree char *err = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeTensor) t = NULL;

  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute lrpe-encode --lrpe-v '%s' --lrpe-theta-file '%s' --queries '%s' -o '%s'",
                            v, theta, q, out), ==, 0);
  g_assert_cmpfloat (npy_rel_err (out, enc0), <, 1e-5);
  /* the same v taken as a fixed (stored, unnormalised) one is a different P */
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute lrpe-encode --lrpe-v '%s' --lrpe-householder fixed --lrpe-theta-file '%s' "
                            "--queries '%s' -o '%s'", v, theta, q, out), ==, 0);
  g_assert_cmpfloat (npy_rel_err (out, enc0), >, 1e-2);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute lrpe-encode --lrpe-p odd-even --lrpe-permutation '%s' --queries '%s' -o '%s'",
                            perm, q, out), ==, 0);
  g_assert_cmpfloat (npy_rel_err (out, enc1), <, 1e-6);

  /* a buffer that is not the powers of one permutation */
  t = rpe_npy_read_int_ok (perm, &error);
  g_assert_no_error (error);
  t->data[5 * 8 + 3] = t->data[5 * 8 + 4];
  g_assert_true (rpe_npy_write (badp, t->data, t->ndim, t->shape, FALSE, &error));
  g_assert_no_error (error);
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute lrpe-encode --lrpe-permutation '%s' --queries '%s' -o '%s'", badp, q, out),
                   ==, 2);
  g_assert_nonnull (strstr (err, "row 5"));
  g_clear_pointer (&err, g_free);
  /* a v of the wrong size */
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute lrpe-encode --lrpe-v '%s' --queries '%s' -o '%s'", theta, q, out), ==, 2);
  g_assert_nonnull (strstr (err, "D = 8"));
}

/* --map names LRPE and FastRPB tensors under odd names (lrpe-odd.pt holds lrpe.pt's tensors
 * renamed): the results equal those of the same tensors under the standard names, bit for bit. */
static gboolean
same_npy (const char *a_path, const char *b_path)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeTensor) a = rpe_npy_read (a_path, &error);
  g_autoptr (RpeTensor) b = rpe_npy_read (b_path, &error);

  g_assert_no_error (error);
  return a->n_elements == b->n_elements && memcmp (a->data, b->data, a->n_elements * sizeof (float)) == 0;
}

static void
test_map (void)
{
  g_autofree char *ckpt = fixture ("lrpe.pt");
  g_autofree char *odd = fixture ("lrpe-odd.pt");
  g_autofree char *q = fixture ("q.npy");
  g_autofree char *vals = fixture ("values.npy");
  g_autofree char *enc0 = fixture ("enc0.npy");
  g_autofree char *enc1 = fixture ("enc1.npy");
  g_autofree char *full = fixture ("bias-full.npy");
  g_autofree char *a = rpe_test_tmp_path ("map-a.npy");
  g_autofree char *b = rpe_test_tmp_path ("map-b.npy");
  g_autofree char *err = NULL;

  /* nothing under the odd names is recognised */
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute lrpe-encode --checkpoint '%s' --queries '%s' -o '%s'", odd, q, a), ==, 2);

  /* layer 0: a learned v and theta */
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute lrpe-encode --checkpoint '%s' --map lrpe.v=blk0.house "
                            "--map lrpe.theta=blk0.angles --queries '%s' -o '%s'", odd, q, a), ==, 0);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute lrpe-encode --checkpoint '%s' --prefix encoder.layers.0.attn.lrpe "
                            "--queries '%s' -o '%s'", ckpt, q, b), ==, 0);
  g_assert_true (same_npy (a, b));
  g_assert_cmpfloat (npy_rel_err (a, enc0), <, 1e-5);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute lrpe-attention --checkpoint '%s' --map lrpe.v=blk0.house "
                            "--map lrpe.theta=blk0.angles --queries '%s' --keys '%s' -o '%s'", odd, q, q, a), ==, 0);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute lrpe-attention --checkpoint '%s' --prefix encoder.layers.0.attn.lrpe "
                            "--queries '%s' --keys '%s' -o '%s'", ckpt, q, q, b), ==, 0);
  g_assert_true (same_npy (a, b));

  /* layer 1: the permutation buffer (aliases "permutation" and "v" work too) */
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute lrpe-encode --checkpoint '%s' --map permutation=blk1.perm_table "
                            "--lrpe-p odd-even --queries '%s' -o '%s'", odd, q, a), ==, 0);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute lrpe-encode --checkpoint '%s' --prefix encoder.layers.1.attn.lrpe "
                            "--lrpe-p odd-even --queries '%s' -o '%s'", ckpt, q, b), ==, 0);
  g_assert_true (same_npy (a, b));
  g_assert_cmpfloat (npy_rel_err (a, enc1), <, 1e-6);

  /* a mapped role adds to (or overrides) what discovery found under --prefix: layer 1's buffer
   * with layer 0's v is the odd file's v and buffer mapped together */
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute lrpe-encode --checkpoint '%s' --prefix encoder.layers.1.attn.lrpe "
                            "--map lrpe.v=encoder.layers.0.attn.lrpe.v --queries '%s' -o '%s'", ckpt, q, a), ==, 0);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute lrpe-encode --checkpoint '%s' --map lrpe.v=blk0.house "
                            "--map lrpe.permutation=blk1.perm_table --queries '%s' -o '%s'", odd, q, b), ==, 0);
  g_assert_true (same_npy (a, b));
  g_assert_cmpfloat (npy_rel_err (a, enc1), >, 1e-2);

  /* FastRPB: fastrpb.w (alias w) */
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute fastrpb --checkpoint '%s' --map fastrpb.w=pos.table --bias-layout full "
                            "--values '%s' -o '%s'", odd, vals, a), ==, 0);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute fastrpb --checkpoint '%s' --prefix encoder.positional_bias --bias-layout full "
                            "--values '%s' -o '%s'", ckpt, vals, b), ==, 0);
  g_assert_true (same_npy (a, b));
  g_assert_cmpfloat (npy_rel_err (a, full), <, 1e-5);

  /* errors: a tensor the file does not have; a role the command does not read */
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute lrpe-encode --checkpoint '%s' --map lrpe.v=nope --queries '%s' -o '%s'",
                            odd, q, a), ==, 2);
  g_assert_nonnull (strstr (err, "nope"));
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute fastrpb --checkpoint '%s' --map lrpe.v=blk0.house --values '%s' -o '%s'",
                            odd, vals, a), ==, 2);
  g_assert_nonnull (strstr (err, "lrpe.v"));
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute lrpe-encode --checkpoint '%s' --map freqs=blk0.house --queries '%s' -o '%s'",
                            odd, q, a), ==, 2);
  g_assert_nonnull (strstr (err, "freqs"));
  g_clear_pointer (&err, g_free);
  /* the SPE loader reads no LRPE role; --bias and fastrpb.w cannot both give the weights */
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute template --checkpoint '%s' --map lrpe.v=blk0.house -o '%s'", odd, a), ==, 2);
  g_assert_nonnull (strstr (err, "lrpe.v"));
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute fastrpb --checkpoint '%s' --map fastrpb.w=pos.table --bias '%s' "
                            "--values '%s' -o '%s'", odd, full, vals, a), ==, 2);
  g_assert_nonnull (strstr (err, "--bias"));
}

static void
test_fastrpb_checkpoint (void)
{
  g_autofree char *ckpt = fixture ("lrpe.pt");
  g_autofree char *vals = fixture ("values.npy");
  g_autofree char *full = fixture ("bias-full.npy");
  g_autofree char *sym = fixture ("bias-sym.npy");
  g_autofree char *fullc = fixture ("bias-full-causal.npy");
  g_autofree char *out = rpe_test_tmp_path ("fastrpb-out.npy");
  g_autofree char *err = NULL;

  /* the reference's full layout (1, H, 2M - 1), M = 24 > N = 16: the shape cannot tell */
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute fastrpb --checkpoint '%s' --prefix encoder.positional_bias "
                            "--values '%s' -o '%s'", ckpt, vals, out), ==, 2);
  g_assert_nonnull (strstr (err, "--bias-layout"));
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute fastrpb --checkpoint '%s' --prefix encoder.positional_bias --bias-layout full "
                            "--values '%s' -o '%s'", ckpt, vals, out), ==, 0);
  g_assert_cmpfloat (npy_rel_err (out, full), <, 1e-5);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute fastrpb --checkpoint '%s' --prefix encoder.positional_bias --bias-layout full "
                            "--causal --values '%s' -o '%s'", ckpt, vals, out), ==, 0);
  g_assert_cmpfloat (npy_rel_err (out, fullc), <, 1e-5);
  /* symmetric (1, H, M): an even width says so */
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute fastrpb --checkpoint '%s' --prefix decoder.positional_bias "
                            "--values '%s' -o '%s'", ckpt, vals, out), ==, 0);
  g_assert_cmpfloat (npy_rel_err (out, sym), <, 1e-5);
  /* two modules, no prefix */
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute fastrpb --checkpoint '%s' --bias-layout full --values '%s' -o '%s'",
                            ckpt, vals, out), ==, 2);
  /* longer than the trained M = 24 */
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute fastrpb --checkpoint '%s' --prefix decoder.positional_bias "
                            "--length 30 -o '%s'", ckpt, out), ==, 2);
}

/* 2-D with the reference's one w for both axes: W[(i,j),(i',j')] = w_{i-i'} + w_{j-j'} (full
 * layout, trained at M = 24, viewed on a 4 x 4 grid), against a naive sum over the raw bias.w. */
static void
test_fastrpb_2d (void)
{
  g_autofree char *ckpt = fixture ("lrpe.pt");
  g_autofree char *vals = fixture ("values.npy");
  g_autofree char *out = rpe_test_tmp_path ("fastrpb-2d.npy");
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeTensorSet) set = rpe_checkpoint_read (ckpt, &error);
  g_autoptr (RpeTensor) v = NULL;
  g_autoptr (RpeTensor) y = NULL;
  const RpeTensor *w;
  const long m = 24, n1 = 4, n2 = 4, h = 2, dv = 3;

  g_assert_no_error (error);
  w = rpe_tensor_set_lookup (set, "encoder.positional_bias.bias.w");
  g_assert_nonnull (w);
  for (int causal = 0; causal < 2; causal++)
    {
      g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute fastrpb --checkpoint '%s' --prefix encoder.positional_bias "
                                "--bias-layout full --grid 4x4 %s --values '%s' -o '%s'", ckpt,
                                causal ? "--causal" : "", vals, out), ==, 0);
      v = rpe_npy_read (vals, &error);
      g_assert_no_error (error);
      y = rpe_npy_read (out, &error);
      g_assert_no_error (error);
      for (long p = 0; p < n1 * n2; p++)
        for (long hh = 0; hh < h; hh++)
          for (long c = 0; c < dv; c++)
            {
              double ref = 0;

              for (long p2 = 0; p2 < n1 * n2; p2++)
                {
                  long di = p / n2 - p2 / n2, dj = p % n2 - p2 % n2;
                  /* full: w[(tau + M) mod (2M - 1)] */
                  double wx = w->data[hh * (2 * m - 1) + (di + m) % (2 * m - 1)];
                  double wy = w->data[hh * (2 * m - 1) + (dj + m) % (2 * m - 1)];

                  if (causal && p2 > p)
                    continue;   /* raster order */
                  ref += (wx + wy) * v->data[(p2 * h + hh) * dv + c];
                }
              g_assert_cmpfloat_with_epsilon (y->data[(p * h + hh) * dv + c], ref, 1e-4 * (1 + fabs (ref)));
            }
      g_clear_pointer (&v, rpe_tensor_free);
      g_clear_pointer (&y, rpe_tensor_free);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cli/lrpe/info", test_info);
  g_test_add_func ("/cli/lrpe/checkpoint", test_lrpe_checkpoint);
  g_test_add_func ("/cli/lrpe/npy", test_lrpe_npy);
  g_test_add_func ("/cli/lrpe/fastrpb-checkpoint", test_fastrpb_checkpoint);
  g_test_add_func ("/cli/lrpe/fastrpb-2d", test_fastrpb_2d);
  g_test_add_func ("/cli/lrpe/map", test_map);
  return g_test_run ();
}

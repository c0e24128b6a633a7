/* test-cli-conv2d.c: `rpe compute template|codes|encode --grid N1xN2` (2-D convSPE) against sums
 * written here (docs/math.md, section 2 in 2-D, see core/rpe-conv-spe-2d.h), with the parameters of
 * the CLI's seeded init rebuilt in the test and noise the test writes itself. */
#include "config.h"

#include <glib.h>
#include <math.h>
#include <string.h>
#include <sys/wait.h>

#include "rpe-conv-spe-2d.h"
#include "rpe-npy.h"
#include "rpe-test-utils.h"

enum { N1 = 4, N2 = 5, N = N1 * N2, H = 2, D = 2, L1 = 3, L2 = 2, R = 6, SEED = 7 };
#define Z1 (N1 + 4 * L1)
#define Z2 (N2 + 4 * L2)

static RpeTensor *
read_npy (const char *path)
{
  g_autoptr (GError) error = NULL;
  RpeTensor *t = rpe_npy_read (path, &error);

  g_assert_no_error (error);
  return t;
}

static void
write_npy (const char *path, const float *data, gsize ndim, const gsize *shape)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (rpe_npy_write (path, data, ndim, shape, FALSE, &error));
  g_assert_no_error (error);
}

/* the parameters `rpe` draws for --heads 2 --features 2 --kernel 3 --kernel-cols 2 --seed 7 */
static void
cli_params (RpeSpeParams *p)
{
  g_assert_cmpint (rpe_conv_spe_2d_params_init (p, H, D, L1, L2, TRUE), ==, RPE_OK);
  g_assert_cmpint (rpe_conv_spe_2d_params_random (p, SEED), ==, RPE_OK);
}

#define OPTS "--grid 4x5 --heads 2 --features 2 --kernel 3 --kernel-cols 2 --seed 7"

static double
code (const float *w, const float *z, size_t ri, size_t c, size_t i, size_t j)
{
  double acc = 0;

  for (size_t a = 0; a < L1; a++)
    for (size_t b = 0; b < L2; b++)
      acc += (double) w[c * L1 * L2 + a * L2 + b] * z[((ri * H * D + c) * Z1 + i + L1 + a) * Z2 + j + L2 + b];
  return acc / sqrt (sqrt ((double) R * D));
}

static void
test_template (void)
{
  g_autofree char *out = rpe_test_tmp_path ("t2d.npy");
  g_autoptr (RpeTensor) t = NULL;
  RpeSpeParams p;

  cli_params (&p);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute template " OPTS " -o '%s'", out), ==, 0);
  t = read_npy (out);
  g_assert_cmpuint (t->ndim, ==, 4);
  g_assert_cmpuint (t->shape[2], ==, N);
  for (size_t c = 0; c < H * D; c++)
    for (size_t pp = 0; pp < N; pp++)
      for (size_t q = 0; q < N; q++)
        {
          long di = (long) (pp / N2) - (long) (q / N2), dj = (long) (pp % N2) - (long) (q % N2);
          double acc = 0, g = p.gate[c];

          for (long a = 0; a < L1; a++)
            for (long b = 0; b < L2; b++)
              if (a + di >= 0 && a + di < L1 && b + dj >= 0 && b + dj < L2)
                acc += (double) p.wq[c * L1 * L2 + a * L2 + b] * p.wk[c * L1 * L2 + (a + di) * L2 + b + dj];
          /* gated by default: (1 - g) P + g */
          g_assert_cmpfloat_with_epsilon (t->data[(c * N + pp) * N + q], (1 - g) * acc + g, 1e-5);
        }
  rpe_spe_params_clear (&p);
}

static void
test_codes_encode (void)
{
  g_autofree char *zp = rpe_test_tmp_path ("z2d.npy"), *ep = rpe_test_tmp_path ("e2d.npy"), *qp = rpe_test_tmp_path ("q2d.npy");
  g_autofree char *qb = rpe_test_tmp_path ("qbar2d.npy"), *kb = rpe_test_tmp_path ("kbar2d.npy");
  g_autofree char *qh = rpe_test_tmp_path ("qhat2d.npy"), *kh = rpe_test_tmp_path ("khat2d.npy");
  g_autofree char *err = NULL;
  gsize zcount = (gsize) R * H * D * Z1 * Z2;
  float *z = g_new (float, zcount), eps[H * D * R], q[N * H * D];
  GRand *rand = g_rand_new_with_seed (3);
  RpeSpeParams p;

  cli_params (&p);
  for (gsize i = 0; i < zcount; i++)
    z[i] = (float) g_rand_double_range (rand, -2, 2);
  for (gsize i = 0; i < G_N_ELEMENTS (eps); i++)
    eps[i] = (float) g_rand_double_range (rand, -2, 2);
  for (gsize i = 0; i < G_N_ELEMENTS (q); i++)
    q[i] = (float) g_rand_double_range (rand, -1, 1);
  write_npy (zp, z, 4, (gsize[]) { R, H * D, Z1, Z2 });
  write_npy (ep, eps, 3, (gsize[]) { H, D, R });
  write_npy (qp, q, 3, (gsize[]) { N, H, D });

  /* codes (ungated), replaying the noise in the reference layout (R, H*D, N1+4L1, N2+4L2) */
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute codes " OPTS " --noise '%s' -o '%s' --out-keys '%s'", zp, qb, kb), ==, 0);
  {
    g_autoptr (RpeTensor) tq = read_npy (qb);
    g_autoptr (RpeTensor) tk = read_npy (kb);

    g_assert_cmpuint (tq->shape[0], ==, N);
    g_assert_cmpuint (tq->shape[3], ==, R);
    for (size_t i = 0; i < N1; i++)
      for (size_t j = 0; j < N2; j++)
        for (size_t c = 0; c < H * D; c++)
          for (size_t ri = 0; ri < R; ri++)
            {
              size_t at = ((i * N2 + j) * H * D + c) * R + ri;

              g_assert_cmpfloat_with_epsilon (tq->data[at], code (p.wq, z, ri, c, i, j), 1e-5);
              g_assert_cmpfloat_with_epsilon (tk->data[at], code (p.wk, z, ri, c, i, j), 1e-5);
            }
  }

  /* encode (gated): qhat[p, h, r] = sum_d (sqrt(1-g) Qbar + sqrt(g) s eps) q */
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute encode " OPTS " --noise '%s' --gate-noise '%s' --queries '%s' -o '%s' --out-keys '%s'",
                            zp, ep, qp, qh, kh), ==, 0);
  {
    g_autoptr (RpeTensor) tq = read_npy (qh);
    g_autoptr (RpeTensor) tk = read_npy (kh);
    double s = 1.0 / sqrt (sqrt ((double) R * D));

    for (size_t pp = 0; pp < N; pp++)
      for (size_t h = 0; h < H; h++)
        for (size_t ri = 0; ri < R; ri++)
          {
            double aq = 0, ak = 0;

            for (size_t d = 0; d < D; d++)
              {
                size_t c = h * D + d;
                double g = p.gate[c], e = sqrt (g) * s * eps[c * R + ri];
                double x = q[(pp * H + h) * D + d];

                aq += (sqrt (1 - g) * code (p.wq, z, ri, c, pp / N2, pp % N2) + e) * x;
                ak += (sqrt (1 - g) * code (p.wk, z, ri, c, pp / N2, pp % N2) + e) * x;   /* keys = queries */
              }
            g_assert_cmpfloat_with_epsilon (tq->data[(pp * H + h) * R + ri], aq, 1e-5);
            g_assert_cmpfloat_with_epsilon (tk->data[(pp * H + h) * R + ri], ak, 1e-5);
          }
  }

  /* a noise of the 1-D layout, a grid the queries do not cover, a WHAT --grid does not do */
  write_npy (zp, z, 3, (gsize[]) { R, H * D, Z1 * Z2 });
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute codes " OPTS " --noise '%s' -o '%s' --out-keys '%s'", zp, qb, kb), ==, 2);
  g_assert_nonnull (strstr (err, "N1+4L1"));
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute encode --grid 5x5 --heads 2 --features 2 --kernel 3 --queries '%s' -o '%s'", qp, qh), ==, 2);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute logits " OPTS " -o '%s'", qh), ==, 2);
  /* the demo checkpoint's module is 1-D */
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute template --checkpoint demo --grid 4x4 -o '%s'", qh), ==, 2);
  g_assert_nonnull (strstr (err, "2-D"));
  g_free (z);
  g_rand_free (rand);
  rpe_spe_params_clear (&p);
}

static char *
fixture (const char *name)
{
  return g_test_build_filename (G_TEST_DIST, "fixtures", "conv2d", name, NULL);
}

/* max |got - want| / max |want| */
static double
rel_err (const char *got_path, const char *want_path)
{
  g_autoptr (RpeTensor) got = read_npy (got_path);
  g_autoptr (RpeTensor) want = read_npy (want_path);
  double err = 0, scale = 0;

  g_assert_cmpuint (got->n_elements, ==, want->n_elements);
  for (gsize k = 0; k < got->ndim; k++)
    g_assert_cmpuint (got->shape[k], ==, want->shape[k]);
  for (gsize i = 0; i < want->n_elements; i++)
    {
      err = MAX (err, fabs ((double) got->data[i] - want->data[i]));
      scale = MAX (scale, fabs ((double) want->data[i]));
    }
  return err / scale;
}

/* A checkpoint in the authors' ConvSPE(ndim=2) layout, replayed against the torch computation
 * of make-conv2d-fixtures.py (conv2d on the reference noise layout, gating, encoding). */
static void
test_checkpoint (void)
{
  g_autofree char *ckpt = fixture ("conv2d.pt"), *z = fixture ("z.npy"), *eps = fixture ("eps.npy");
  g_autofree char *q = fixture ("q.npy"), *qhat = fixture ("qhat.npy"), *khat = fixture ("khat.npy");
  g_autofree char *tmpl = fixture ("template.npy");
  g_autofree char *oq = rpe_test_tmp_path ("ck-qhat.npy"), *ok = rpe_test_tmp_path ("ck-khat.npy"), *ot = rpe_test_tmp_path ("ck-t.npy");
  g_autofree char *err = NULL;
  double e;

  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute encode --checkpoint '%s' --grid 5x6 --noise '%s' --gate-noise '%s' "
                            "--queries '%s' -o '%s' --out-keys '%s'", ckpt, z, eps, q, oq, ok), ==, 0);
  e = MAX (rel_err (oq, qhat), rel_err (ok, khat));
  g_test_message ("encoded queries/keys: max rel err %.3g against torch", e);
  g_assert_cmpfloat (e, <, 1e-5);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute template --checkpoint '%s' --grid 5x6 -o '%s'", ckpt, ot), ==, 0);
  e = rel_err (ot, tmpl);
  g_test_message ("template: max rel err %.3g", e);
  g_assert_cmpfloat (e, <, 1e-5);
  /* without --grid the 1-D commands say what is missing */
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute template --checkpoint '%s' --length 8 -o '%s'", ckpt, ot), ==, 2);
  g_assert_nonnull (strstr (err, "--grid"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cli/conv2d/template", test_template);
  g_test_add_func ("/cli/conv2d/codes-encode", test_codes_encode);
  g_test_add_func ("/cli/conv2d/checkpoint", test_checkpoint);
  return g_test_run ();
}

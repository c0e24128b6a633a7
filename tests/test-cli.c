/* test-cli.c: the `rpe` tool end to end: shapes, values against closed forms and
 * naive code written here, replayed noise, and clear errors with exit status 2. */
#include "config.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "rpe-npy.h"
#include "rpe-rng.h"
#include "rpe-safetensors.h"
#include "rpe-test-utils.h"

/* The fixture checkpoint: H = 2, D = 3, sine K = 2, conv L = 4, gates for layers 0 and 1. */
#define H 2
#define D 3
#define K 2
#define L 4

static double raw_freqs[H * D * K], raw_offsets[H * D * K], raw_gains[H * D * K];
static double raw_gate0[H * D], raw_gate1[H * D];
static double conv_q[H * D * L], conv_k[H * D * L];
static char *ckpt_path;

static double sigmoid (double x) { return 1.0 / (1.0 + exp (-x)); }
static double softplus (double x) { return log1p (exp (x)); }

static RpeTensor *
read_npy (const char *path)
{
  g_autoptr (GError) error = NULL;
  RpeTensor *t = rpe_npy_read (path, &error);

  g_assert_no_error (error);
  g_assert_nonnull (t);
  return t;
}

static void
assert_shape (const RpeTensor *t, gsize ndim, const gsize *shape)
{
  g_assert_cmpuint (t->ndim, ==, ndim);
  for (gsize i = 0; i < ndim; i++)
    g_assert_cmpuint (t->shape[i], ==, shape[i]);
}

static void
write_npy (const char *path, const float *data, gsize ndim, const gsize *shape)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (rpe_npy_write (path, data, ndim, shape, FALSE, &error));
  g_assert_no_error (error);
}

static void
add_tensor (RpeTensorSet *set, const char *name, const double *values, gsize ndim, const gsize *shape)
{
  g_autoptr (GError) error = NULL;
  RpeTensor *t = rpe_tensor_new (name, ndim, shape, &error);

  g_assert_no_error (error);
  for (gsize i = 0; i < t->n_elements; i++)
    t->data[i] = (float) values[i];
  g_assert_true (rpe_tensor_set_add (set, t, &error));
}

static void
make_checkpoint (void)
{
  g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
  g_autoptr (GError) error = NULL;
  float u[H * D * (3 * K + 2 + 2 * L)];
  gsize j = 0;

  rpe_rng_uniform (2024, 77, 0, u, G_N_ELEMENTS (u));
  for (gsize i = 0; i < H * D * K; i++)
    {
      raw_freqs[i] = -3.0 + 2.0 * u[j++];     /* f = sigmoid/2 in about [0.02, 0.13] */
      raw_offsets[i] = -1.0 + 2.0 * u[j++];
      raw_gains[i] = -0.5 + u[j++];
    }
  for (gsize i = 0; i < H * D; i++)
    {
      raw_gate0[i] = -2.0 + 2.0 * u[j++];
      raw_gate1[i] = 1.0 + u[j++];
    }
  for (gsize i = 0; i < H * D * L; i++)
    {
      conv_q[i] = -1.0 + 2.0 * u[j++];
      conv_k[i] = -1.0 + 2.0 * u[j++];
    }
  add_tensor (set, "model.spe.freqs", raw_freqs, 3, (gsize[]) { H, D, K });
  add_tensor (set, "model.spe.offsets", raw_offsets, 3, (gsize[]) { H, D, K });
  add_tensor (set, "model.spe.gains", raw_gains, 3, (gsize[]) { H, D, K });
  add_tensor (set, "model.spe_filters.0.gate", raw_gate0, 2, (gsize[]) { H, D });
  add_tensor (set, "model.spe_filters.1.gate", raw_gate1, 2, (gsize[]) { H, D });
  add_tensor (set, "cnn.spe.conv_q.weight", conv_q, 3, (gsize[]) { H * D, 1, L });
  add_tensor (set, "cnn.spe.conv_k.weight", conv_k, 3, (gsize[]) { H * D, 1, L });
  add_tensor (set, "cnn.spe_filters.0.gate", raw_gate0, 2, (gsize[]) { H, D });
  ckpt_path = rpe_test_tmp_path ("fixture.safetensors");
  g_assert_true (rpe_safetensors_write (ckpt_path, set, &error));
  g_assert_no_error (error);
}

/* docs/math.md, section 1, straight from the formula: the gated sine template of (h, d) at lag tau. */
static double
sine_template (gsize h, gsize d, double tau, const double *raw_gate)
{
  double p = 0;

  for (gsize k = 0; k < K; k++)
    {
      gsize i = (h * D + d) * K + k;
      double f = sigmoid (raw_freqs[i]) / 2, lam = softplus (raw_gains[i]);
      p += lam * lam * cos (2 * M_PI * f * tau + raw_offsets[i]);
    }
  p /= 2 * K;
  if (raw_gate != NULL)
    {
      double g = sigmoid (raw_gate[h * D + d]);
      p = (1 - g) * p + g;
    }
  return p;
}

/* docs/math.md, section 2: query filter = conv_k.weight, key filter = conv_q.weight. */
static double
conv_template (gsize c, long tau)
{
  double p = 0;

  for (long j = 0; j < L; j++)
    if (j + tau >= 0 && j + tau < L)
      p += conv_k[c * L + j] * conv_q[c * L + j + tau];
  return p;
}

static void
test_usage_errors (void)
{
  g_autofree char *err = NULL;

  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "--version"), ==, 0);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "--help"), ==, 0);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "frobnicate"), ==, 2);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute"), ==, 2);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute template"), ==, 2);             /* no -o */
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute nonsense -o x.npy"), ==, 2);
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute template --length -5 -o %s/x.npy", rpe_test_tmpdir ()), ==, 2);
  g_assert_nonnull (strstr (err, "--length"));
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute template --method wavelet -o %s/x.npy", rpe_test_tmpdir ()), ==, 2);
  g_assert_nonnull (strstr (err, "sine or conv"));
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute template --heads abc -o %s/x.npy", rpe_test_tmpdir ()), ==, 2);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute codes --length 8 -o %s/x.npy", rpe_test_tmpdir ()), ==, 2);
  g_assert_nonnull (strstr (err, "--out-keys"));
  {
    g_autofree char *x = rpe_test_tmp_path ("x.npy");
    g_assert_false (g_file_test (x, G_FILE_TEST_EXISTS));
  }
}

/* A request whose arrays cannot fit is refused before allocating, naming the budget. */
static void
test_absurd_sizes (void)
{
  g_autofree char *err = NULL;

  /* streamed a slab at a time, so within the budget: its 74.5 TiB are refused by the disk's free
   * space before anything is computed, exit 1 as for a full disk */
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute template --length 200000 -o %s/big.npy", rpe_test_tmpdir ()),
                   ==, 1);
  g_assert_nonnull (strstr (err, "free on its disk"));
  g_assert_nonnull (strstr (err, "nothing was computed"));
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute template --length 4000000000 -o %s/big.npy", rpe_test_tmpdir ()), ==, 2);
  g_assert_nonnull (strstr (err, "too large"));
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute codes --heads 4096 --features 65536 --realizations 16000000 --length 100000 -o %s/a.npy --out-keys %s/b.npy",
                            rpe_test_tmpdir (), rpe_test_tmpdir ()), ==, 2);
  g_assert_true (strstr (err, "budget") != NULL || strstr (err, "too large") != NULL);
  g_clear_pointer (&err, g_free);
  /* parameters that fit, codes that do not: refused before the parameters are drawn */
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute encode --heads 1024 --features 65536 --sines 8 --realizations 4096 --length 4096 -o %s/a.npy",
                            rpe_test_tmpdir ()), ==, 2);
  g_assert_nonnull (strstr (err, "budget"));
}

static void
test_info (void)
{
  g_autofree char *path = rpe_test_tmp_path ("info.txt");
  g_autofree char *cmd = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  int status = 0;

  cmd = g_strdup_printf ("'%s' info '%s'", g_getenv ("RPE_CLI"), ckpt_path);
  g_assert_true (g_spawn_command_line_sync (cmd, &out, &err, &status, NULL));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (out, "model.spe.freqs"));
  g_assert_nonnull (strstr (out, "F32"));
  g_assert_nonnull (strstr (out, "(2, 3, 2)"));
  g_assert_nonnull (strstr (out, "model"));
  g_assert_nonnull (strstr (out, "cnn"));
  g_assert_nonnull (strstr (out, "sine"));
  g_assert_nonnull (strstr (out, "conv"));
}

/* "demo" is the embedded demo checkpoint: the same arrays as the file the build made. */
static void
test_embedded_demo (void)
{
  const char *demo_file = g_getenv ("RPE_DEMO_CHECKPOINT");
  g_autofree char *a = rpe_test_tmp_path ("demo-a.npy"), *b = rpe_test_tmp_path ("demo-b.npy");
  g_autoptr (RpeTensor) ta = NULL, tb = NULL;

  g_assert_nonnull (demo_file);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "info demo"), ==, 0);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute template --checkpoint demo --method conv --length 40 -o %s", a), ==, 0);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute template --checkpoint %s --method conv --length 40 -o %s", demo_file, b), ==, 0);
  ta = read_npy (a);
  tb = read_npy (b);
  assert_shape (ta, 4, (gsize[]) { 4, 16, 40, 40 });
  g_assert_cmpmem (ta->data, ta->n_elements * sizeof (float), tb->data, tb->n_elements * sizeof (float));
}

/* The gated sine template of layer 1 against the closed form. */
static void
test_template_checkpoint (void)
{
  g_autofree char *out = rpe_test_tmp_path ("tmpl.npy");
  g_autoptr (RpeTensor) t = NULL;
  const gsize n = 20;
  double err = 0;

  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute template --checkpoint %s --prefix model --layer 1 --length %zu -o %s",
                            ckpt_path, (size_t) n, out), ==, 0);
  t = read_npy (out);
  assert_shape (t, 4, (gsize[]) { H, D, n, n });
  for (gsize h = 0; h < H; h++)
    for (gsize d = 0; d < D; d++)
      for (gsize m = 0; m < n; m++)
        for (gsize j = 0; j < n; j++)
          {
            double ref = sine_template (h, d, (double) m - (double) j, raw_gate1);
            err = fmax (err, fabs (ref - t->data[((h * D + d) * n + m) * n + j]));
          }
  g_assert_cmpfloat (err, <, 1e-5);

  /* --no-gate and one cell */
  g_clear_pointer (&t, rpe_tensor_free);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute template --checkpoint %s --prefix model --no-gate --head 1 --feature 2 --length %zu -o %s",
                            ckpt_path, (size_t) n, out), ==, 0);
  t = read_npy (out);
  assert_shape (t, 2, (gsize[]) { n, n });
  err = 0;
  for (gsize m = 0; m < n; m++)
    for (gsize j = 0; j < n; j++)
      err = fmax (err, fabs (sine_template (1, 2, (double) m - (double) j, NULL) - t->data[m * n + j]));
  g_assert_cmpfloat (err, <, 1e-5);
}

/* conv: the q/k swap of the reference, and exact zeros outside |m - n| < L. */
static void
test_template_conv (void)
{
  g_autofree char *out = rpe_test_tmp_path ("conv.npy");
  g_autoptr (RpeTensor) t = NULL;
  const gsize n = 12;

  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute template --checkpoint %s --method conv --no-gate --length %zu -o %s",
                            ckpt_path, (size_t) n, out), ==, 0);
  t = read_npy (out);
  assert_shape (t, 4, (gsize[]) { H, D, n, n });
  for (gsize c = 0; c < H * D; c++)
    for (gsize m = 0; m < n; m++)
      for (gsize j = 0; j < n; j++)
        {
          long tau = (long) m - (long) j;
          float v = t->data[(c * n + m) * n + j];
          if (labs (tau) >= L)
            g_assert_cmpfloat (v, ==, 0.0f);
          else
            g_assert_cmpfloat_with_epsilon (v, conv_template (c, tau), 1e-5);
        }
}

/* Replayed noise: codes and encodings equal the sums of docs/math.md evaluated here. */
static void
test_replay_sine (void)
{
  enum { n = 9, r = 5 };
  g_autofree char *zp = rpe_test_tmp_path ("z.npy"), *ep = rpe_test_tmp_path ("eps.npy"), *qp = rpe_test_tmp_path ("q.npy");
  g_autofree char *kp = rpe_test_tmp_path ("k.npy"), *qo = rpe_test_tmp_path ("qbar.npy"), *ko = rpe_test_tmp_path ("kbar.npy");
  g_autofree char *qh = rpe_test_tmp_path ("qhat.npy"), *kh = rpe_test_tmp_path ("khat.npy");
  float z[1 * H * D * 2 * K * r], eps[H * D * r], q[n * H * D], k[n * H * D];
  g_autoptr (RpeTensor) qbar = NULL, kbar = NULL, qhat = NULL, khat = NULL;
  double s = 1.0 / pow ((double) (r * D), 0.25);
  double err = 0, err_hat = 0;

  rpe_rng_normal (5, 1000, 0, z, G_N_ELEMENTS (z));
  rpe_rng_normal (6, 1000, 0, eps, G_N_ELEMENTS (eps));
  rpe_rng_normal (7, 1000, 0, q, G_N_ELEMENTS (q));
  rpe_rng_normal (8, 1000, 0, k, G_N_ELEMENTS (k));
  write_npy (zp, z, 5, (gsize[]) { 1, H, D, 2 * K, r });    /* with the optional leading 1 */
  write_npy (ep, eps, 3, (gsize[]) { H, D, r });
  write_npy (qp, q, 3, (gsize[]) { n, H, D });
  write_npy (kp, k, 4, (gsize[]) { 1, n, H, D });

  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute codes --checkpoint %s --prefix model --length %zu --noise %s -o %s --out-keys %s",
                            ckpt_path, (size_t) n, zp, qo, ko), ==, 0);
  qbar = read_npy (qo);
  kbar = read_npy (ko);
  assert_shape (qbar, 4, (gsize[]) { n, H, D, r });
  assert_shape (kbar, 4, (gsize[]) { n, H, D, r });

  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute encode --checkpoint %s --prefix model --layer 0 --noise %s --gate-noise %s --queries %s --keys %s -o %s --out-keys %s",
                            ckpt_path, zp, ep, qp, kp, qh, kh), ==, 0);
  qhat = read_npy (qh);
  khat = read_npy (kh);
  assert_shape (qhat, 3, (gsize[]) { n, H, r });

  for (gsize m = 0; m < n; m++)
    for (gsize h = 0; h < H; h++)
      for (gsize rr = 0; rr < r; rr++)
        {
          double eq = 0, ek = 0;
          for (gsize d = 0; d < D; d++)
            {
              double cq = 0, ck = 0, g = sigmoid (raw_gate0[h * D + d]);
              for (gsize kk = 0; kk < K; kk++)
                {
                  gsize i = (h * D + d) * K + kk;
                  double f = sigmoid (raw_freqs[i]) / 2, lam = softplus (raw_gains[i]) / sqrt (2.0 * K);
                  double zc = z[((h * D + d) * 2 * K + 2 * kk) * r + rr];
                  double zs = z[((h * D + d) * 2 * K + 2 * kk + 1) * r + rr];
                  double pq = 2 * M_PI * f * m + raw_offsets[i], pk = 2 * M_PI * f * m;
                  cq += lam * (cos (pq) * zc + sin (pq) * zs);
                  ck += lam * (cos (pk) * zc + sin (pk) * zs);
                }
              cq *= s;
              ck *= s;
              err = fmax (err, fabs (cq - qbar->data[((m * H + h) * D + d) * r + rr]));
              err = fmax (err, fabs (ck - kbar->data[((m * H + h) * D + d) * r + rr]));
              /* gated */
              {
                double e = s * eps[(h * D + d) * r + rr];
                double gq = sqrt (1 - g) * cq + sqrt (g) * e, gk = sqrt (1 - g) * ck + sqrt (g) * e;
                eq += gq * q[(m * H + h) * D + d];
                ek += gk * k[(m * H + h) * D + d];
              }
            }
          err_hat = fmax (err_hat, fabs (eq - qhat->data[(m * H + h) * r + rr]));
          err_hat = fmax (err_hat, fabs (ek - khat->data[(m * H + h) * r + rr]));
        }
  g_assert_cmpfloat (err, <, 1e-5);
  g_assert_cmpfloat (err_hat, <, 2e-5);

  /* the noise's R must agree with --realizations */
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute codes --checkpoint %s --prefix model --realizations 6 --noise %s -o %s --out-keys %s",
                            ckpt_path, zp, qo, ko), ==, 2);
  /* and the noise must fit the module */
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute codes --checkpoint %s --method conv --length %zu --noise %s -o %s --out-keys %s",
                            ckpt_path, (size_t) n, zp, qo, ko), ==, 2);
}

/* Seeded runs are reproducible, and different seeds differ. */
static void
test_seed_determinism (void)
{
  g_autofree char *a = rpe_test_tmp_path ("ea.npy"), *b = rpe_test_tmp_path ("eb.npy"), *c = rpe_test_tmp_path ("ec.npy");
  g_autoptr (RpeTensor) ta = NULL, tb = NULL, tc = NULL;
  gsize differ = 0;

  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute empirical --method conv --heads 2 --features 4 --kernel 6 --length 16 --realizations 8 --seed 11 -o %s", a), ==, 0);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute empirical --method conv --heads 2 --features 4 --kernel 6 --length 16 --realizations 8 --seed 11 -o %s", b), ==, 0);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute empirical --method conv --heads 2 --features 4 --kernel 6 --length 16 --realizations 8 --seed 12 -o %s", c), ==, 0);
  ta = read_npy (a);
  tb = read_npy (b);
  tc = read_npy (c);
  assert_shape (ta, 4, (gsize[]) { 2, 4, 16, 16 });
  g_assert_cmpmem (ta->data, ta->n_elements * sizeof (float), tb->data, tb->n_elements * sizeof (float));
  for (gsize i = 0; i < ta->n_elements; i++)
    differ += ta->data[i] != tc->data[i];
  g_assert_cmpuint (differ, >, ta->n_elements / 2);
}

/* attention: rows of the (causal) map sum to 1, masked entries are 0, and the exact map is
 * the softmax of the exact logits computed here from the template. */
static void
test_attention_exact (void)
{
  enum { n = 7 };
  g_autofree char *qp = rpe_test_tmp_path ("aq.npy"), *out = rpe_test_tmp_path ("att.npy");
  float q[n * H * D];
  g_autoptr (RpeTensor) a = NULL;

  rpe_rng_normal (31, 1000, 0, q, G_N_ELEMENTS (q));
  write_npy (qp, q, 3, (gsize[]) { n, H, D });
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute attention --exact --causal --checkpoint %s --prefix model --layer 0 --queries %s -o %s",
                            ckpt_path, qp, out), ==, 0);
  a = read_npy (out);
  assert_shape (a, 3, (gsize[]) { H, n, n });
  for (gsize h = 0; h < H; h++)
    for (gsize m = 0; m < n; m++)
      {
        double logit[n], mx = -INFINITY, z = 0;
        for (gsize j = 0; j <= m; j++)
          {
            logit[j] = 0;
            for (gsize d = 0; d < D; d++)   /* keys default to the queries */
              logit[j] += q[(m * H + h) * D + d] * q[(j * H + h) * D + d]
                          * sine_template (h, d, (double) m - (double) j, raw_gate0);
            logit[j] /= sqrt ((double) D);
            mx = fmax (mx, logit[j]);
          }
        for (gsize j = 0; j <= m; j++)
          z += exp (logit[j] - mx);
        for (gsize j = 0; j < n; j++)
          {
            double ref = j <= m ? exp (logit[j] - mx) / z : 0.0;
            g_assert_cmpfloat_with_epsilon (a->data[(h * n + m) * n + j], ref, 2e-6);
          }
      }
}

/* rpe-logits (skewing) equals q_m . k_n + q_m . E[m-n] with E the template, written naively. */
static void
test_rpe_logits (void)
{
  enum { n = 6 };
  g_autofree char *qp = rpe_test_tmp_path ("rq.npy"), *kp = rpe_test_tmp_path ("rk.npy"), *out = rpe_test_tmp_path ("rl.npy");
  g_autofree char *ep = rpe_test_tmp_path ("E.npy"), *out2 = rpe_test_tmp_path ("rl2.npy");
  float q[n * H * D], k[n * H * D], e[(2 * n - 1) * D];
  g_autoptr (RpeTensor) l = NULL, l2 = NULL;

  rpe_rng_normal (41, 1000, 0, q, G_N_ELEMENTS (q));
  rpe_rng_normal (42, 1000, 0, k, G_N_ELEMENTS (k));
  rpe_rng_normal (43, 1000, 0, e, G_N_ELEMENTS (e));
  write_npy (qp, q, 3, (gsize[]) { n, H, D });
  write_npy (kp, k, 3, (gsize[]) { n, H, D });
  write_npy (ep, e, 2, (gsize[]) { 2 * n - 1, D });
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute rpe-logits --checkpoint %s --prefix model --no-gate --queries %s --keys %s -o %s",
                            ckpt_path, qp, kp, out), ==, 0);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute rpe-logits --checkpoint %s --prefix model --queries %s --keys %s --relative-embeddings %s -o %s",
                            ckpt_path, qp, kp, ep, out2), ==, 0);
  l = read_npy (out);
  l2 = read_npy (out2);
  assert_shape (l, 3, (gsize[]) { H, n, n });
  for (gsize h = 0; h < H; h++)
    for (gsize m = 0; m < n; m++)
      for (gsize j = 0; j < n; j++)
        {
          double ref = 0, ref2 = 0;
          for (gsize d = 0; d < D; d++)
            {
              double qd = q[(m * H + h) * D + d], kd = k[(j * H + h) * D + d];
              ref += qd * kd + qd * sine_template (h, d, (double) m - (double) j, NULL);
              ref2 += qd * kd + qd * e[(m - j + n - 1) * D + d];
            }
          g_assert_cmpfloat_with_epsilon (l->data[(h * n + m) * n + j], ref / sqrt ((double) D), 1e-5);
          g_assert_cmpfloat_with_epsilon (l2->data[(h * n + m) * n + j], ref2 / sqrt ((double) D), 1e-5);
        }
}

/* linear (non-causal and causal) equals the quadratic formula on the encoded queries/keys that
 * `encode` writes for the same seed, with the elu+1 feature map. */
static void
test_linear_matches_quadratic (void)
{
  enum { n = 10, r = 6, dv = 2 };
  g_autofree char *vp = rpe_test_tmp_path ("v.npy"), *qh = rpe_test_tmp_path ("lqh.npy"), *kh = rpe_test_tmp_path ("lkh.npy");
  g_autofree char *y1 = rpe_test_tmp_path ("y1.npy"), *y2 = rpe_test_tmp_path ("y2.npy");
  float v[n * H * dv];
  g_autoptr (RpeTensor) qhat = NULL, khat = NULL, ya = NULL, yc = NULL;

  rpe_rng_normal (51, 1000, 0, v, G_N_ELEMENTS (v));
  write_npy (vp, v, 3, (gsize[]) { n, H, dv });
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute encode --checkpoint %s --prefix model --content random --seed 3 --length %zu --realizations %zu -o %s --out-keys %s",
                            ckpt_path, (size_t) n, (size_t) r, qh, kh), ==, 0);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute linear --checkpoint %s --prefix model --content random --seed 3 --realizations %zu --values %s --feature-map elu1 -o %s",
                            ckpt_path, (size_t) r, vp, y1), ==, 0);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute linear --checkpoint %s --prefix model --content random --seed 3 --realizations %zu --values %s --causal -o %s",
                            ckpt_path, (size_t) r, vp, y2), ==, 0);
  qhat = read_npy (qh);
  khat = read_npy (kh);
  ya = read_npy (y1);
  yc = read_npy (y2);
  assert_shape (ya, 3, (gsize[]) { n, H, dv });
  for (int causal = 0; causal < 2; causal++)
    for (gsize h = 0; h < H; h++)
      for (gsize m = 0; m < n; m++)
        {
          double num[dv], den = 0;
          memset (num, 0, sizeof num);
          for (gsize j = 0; j < (causal ? m + 1 : n); j++)
            {
              double w = 0;
              for (gsize i = 0; i < r; i++)
                {
                  double a = qhat->data[(m * H + h) * r + i], b = khat->data[(j * H + h) * r + i];
                  a = a > 0 ? a + 1 : exp (a);
                  b = b > 0 ? b + 1 : exp (b);
                  w += a * b;
                }
              den += w;
              for (gsize c = 0; c < dv; c++)
                num[c] += w * v[(j * H + h) * dv + c];
            }
          for (gsize c = 0; c < dv; c++)
            g_assert_cmpfloat_with_epsilon ((causal ? yc : ya)->data[(m * H + h) * dv + c], num[c] / den,
                                            2e-5 * (1 + fabs (num[c] / den)));
        }
}

/* Malformed and hostile inputs: a clear message naming the file and exit status 2. */
static void
test_bad_files (void)
{
  g_autofree char *trunc = rpe_test_tmp_path ("trunc.npy"), *notnpy = rpe_test_tmp_path ("junk.npy");
  g_autofree char *ints = rpe_test_tmp_path ("ints.npy"), *nan = rpe_test_tmp_path ("nan.npy");
  g_autofree char *badst = rpe_test_tmp_path ("bad.safetensors"), *out = rpe_test_tmp_path ("o.npy");
  g_autofree char *wrong = rpe_test_tmp_path ("wrong.npy");
  g_autofree char *err = NULL;
  const char int_npy[] = "\x93NUMPY\x01\x00\x76\x00{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }";
  GString *hdr = g_string_new_len (int_npy, sizeof int_npy - 1);
  float q[4 * H * D] = { 0 };

  /* a float32 npy with its data cut short */
  write_npy (trunc, q, 3, (gsize[]) { 4, H, D });
  {
    g_autofree char *contents = NULL;
    gsize len;
    g_assert_true (g_file_get_contents (trunc, &contents, &len, NULL));
    g_assert_true (g_file_set_contents (trunc, contents, (gssize) len - 7, NULL));
  }
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute logits --exact --checkpoint %s --prefix model --queries %s -o %s", ckpt_path, trunc, out), ==, 2);
  g_assert_nonnull (strstr (err, "trunc.npy"));
  g_clear_pointer (&err, g_free);

  g_assert_true (g_file_set_contents (notnpy, "hello, world", -1, NULL));
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute logits --exact --checkpoint %s --prefix model --queries %s -o %s", ckpt_path, notnpy, out), ==, 2);
  g_assert_nonnull (strstr (err, "junk.npy"));
  g_clear_pointer (&err, g_free);

  /* int32 data: a clear dtype error */
  while (hdr->len < 127)
    g_string_append_c (hdr, ' ');
  g_string_append_c (hdr, '\n');
  g_string_append_len (hdr, "\1\0\0\0\2\0\0\0", 8);
  g_assert_true (g_file_set_contents (ints, hdr->str, (gssize) hdr->len, NULL));
  g_string_free (hdr, TRUE);
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute logits --exact --checkpoint %s --prefix model --queries %s -o %s", ckpt_path, ints, out), ==, 2);
  g_assert_nonnull (strstr (err, "i4"));
  g_clear_pointer (&err, g_free);

  /* an absurd shape: 2^62 x 8 float32 would need 2^67 bytes */
  {
    g_autofree char *absurd = rpe_test_tmp_path ("absurd.npy");
    const char head[] = "\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 8), }";
    GString *h2 = g_string_new_len (head, sizeof head - 1);

    while (h2->len < 127)
      g_string_append_c (h2, ' ');
    g_string_append_c (h2, '\n');
    g_string_append_len (h2, "\0\0\0\0\0\0\0\0", 8);
    g_assert_true (g_file_set_contents (absurd, h2->str, (gssize) h2->len, NULL));
    g_string_free (h2, TRUE);
    g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute logits --exact --checkpoint %s --prefix model --queries %s -o %s", ckpt_path, absurd, out), ==, 2);
    g_assert_nonnull (strstr (err, "absurd.npy"));
    g_clear_pointer (&err, g_free);
    g_assert_cmpint (rpe_test_run_cli (NULL, &err, "info %s", absurd), ==, 2);
    g_clear_pointer (&err, g_free);
  }

  /* NaN in the queries */
  q[5] = NAN;
  write_npy (nan, q, 3, (gsize[]) { 4, H, D });
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute logits --exact --checkpoint %s --prefix model --queries %s -o %s", ckpt_path, nan, out), ==, 2);
  g_assert_nonnull (strstr (err, "nan.npy"));
  g_clear_pointer (&err, g_free);

  /* wrong shape for the parameters */
  q[5] = 0;
  write_npy (wrong, q, 3, (gsize[]) { 4, D, H });
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute logits --exact --checkpoint %s --prefix model --queries %s -o %s", ckpt_path, wrong, out), ==, 2);
  g_assert_nonnull (strstr (err, "shape"));
  g_clear_pointer (&err, g_free);

  /* a safetensors file whose header length is larger than the file */
  g_assert_true (g_file_set_contents (badst, "\xff\xff\x00\x00\x00\x00\x00\x00{}", 10, NULL));
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute template --checkpoint %s -o %s", badst, out), ==, 2);
  g_assert_nonnull (strstr (err, "bad.safetensors"));
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "info %s", badst), ==, 2);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "info %s/does-not-exist.safetensors", rpe_test_tmpdir ()), ==, 2);
  g_clear_pointer (&err, g_free);

  /* a missing module */
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute template --checkpoint %s --prefix nosuch -o %s", ckpt_path, out), ==, 2);
  g_assert_nonnull (strstr (err, "nosuch"));
  g_clear_pointer (&err, g_free);

  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
}

/* An unwritable output is a failure (1), not bad input, and leaves nothing behind. */
static void
test_unwritable_output (void)
{
  g_autofree char *err = NULL;

  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute template --heads 1 --features 2 --sines 1 --length 4 -o %s/no/such/dir/t.npy",
                            rpe_test_tmpdir ()), ==, 1);
  g_assert_nonnull (strstr (err, "t.npy"));
}

/* rpe bench --json goes through the output checks of every writer, before any timing:
 * a directory and a write-protected file are refused (exit 1, the path named, the file kept). */
static void
test_bench_json_refused (void)
{
  g_autofree char *kept = rpe_test_tmp_path ("bench-kept.json");
  g_autofree char *err = NULL, *err2 = NULL, *text = NULL;

  g_assert_cmpint (rpe_test_run_cli_args (NULL, &err, "bench", "--quick", "--json", rpe_test_tmpdir (), NULL), ==, 1);
  g_assert_nonnull (strstr (err, rpe_test_tmpdir ()));
  g_assert_nonnull (strstr (err, "directory"));

  g_assert_true (g_file_set_contents (kept, "keep", -1, NULL));
  g_assert_cmpint (g_chmod (kept, 0444), ==, 0);
  g_assert_cmpint (rpe_test_run_cli_args (NULL, &err2, "bench", "--quick", "--json", kept, NULL), ==, 1);
  g_assert_nonnull (strstr (err2, "bench-kept.json"));
  g_assert_nonnull (strstr (err2, "write-protected"));
  g_assert_true (g_file_get_contents (kept, &text, NULL, NULL));
  g_assert_cmpstr (text, ==, "keep");
}

/* lrpe-encode with P = identity, Lambda = rotation, theta a is RoPE, written here from its formula. */
static void
test_lrpe_encode_rope (void)
{
  enum { n = 11, h = 2, d = 6 };
  g_autofree char *xp = rpe_test_tmp_path ("lx.npy"), *out = rpe_test_tmp_path ("lrope.npy"), *outc = rpe_test_tmp_path ("lcx.npy");
  float x[n * h * d];
  g_autoptr (RpeTensor) y = NULL, yc = NULL;

  rpe_rng_normal (61, 1000, 0, x, G_N_ELEMENTS (x));
  write_npy (xp, x, 3, (gsize[]) { n, h, d });
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute lrpe-encode --queries %s --lrpe-p identity --lrpe-lambda rotation --lrpe-theta a -o %s",
                            xp, out), ==, 0);
  y = read_npy (out);
  assert_shape (y, 3, (gsize[]) { n, h, d });
  for (gsize m = 0; m < n; m++)
    for (gsize hh = 0; hh < h; hh++)
      for (gsize k = 0; k < d / 2; k++)
        {
          double a = pow (10000.0, -2.0 * k / d), c = cos (m * a), sn = sin (m * a);
          double x0 = x[(m * h + hh) * d + 2 * k], x1 = x[(m * h + hh) * d + 2 * k + 1];
          g_assert_cmpfloat_with_epsilon (y->data[(m * h + hh) * d + 2 * k], x0 * c - x1 * sn, 1e-5);
          g_assert_cmpfloat_with_epsilon (y->data[(m * h + hh) * d + 2 * k + 1], x1 * c + x0 * sn, 1e-5);
        }
  /* the complex exponential doubles the width: [real | imag] */
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute lrpe-encode --queries %s --lrpe-lambda complex -o %s", xp, outc), ==, 0);
  yc = read_npy (outc);
  assert_shape (yc, 3, (gsize[]) { n, h, 2 * d });
  /* the unitary maps keep norms */
  for (gsize m = 0; m < n; m++)
    for (gsize hh = 0; hh < h; hh++)
      {
        double nx = 0, ny = 0;
        for (gsize j = 0; j < d; j++)
          nx += (double) x[(m * h + hh) * d + j] * x[(m * h + hh) * d + j];
        for (gsize j = 0; j < 2 * d; j++)
          ny += (double) yc->data[(m * h + hh) * 2 * d + j] * yc->data[(m * h + hh) * 2 * d + j];
        g_assert_cmpfloat_with_epsilon (ny, nx, 1e-4 * (1 + nx));
      }
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute lrpe-encode --queries %s --lrpe-p wavelet -o %s", xp, out), ==, 2);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute lrpe-encode --queries %s --lrpe-theta z -o %s", xp, out), ==, 2);
}

/* lrpe-attention (implied, row-normalised map) and lrpe-linear (denominator) against the quadratic form
 * with RoPE applied after elu+1 features, evaluated here. */
static void
test_lrpe_attention_linear (void)
{
  enum { n = 9, h = 2, d = 4, dv = 3 };
  g_autofree char *qp = rpe_test_tmp_path ("lq.npy"), *kp = rpe_test_tmp_path ("lk.npy"), *vp = rpe_test_tmp_path ("lv.npy");
  g_autofree char *ap = rpe_test_tmp_path ("la.npy"), *yp = rpe_test_tmp_path ("ly.npy");
  float q[n * h * d], k[n * h * d], v[n * h * dv];
  g_autoptr (RpeTensor) a = NULL, y = NULL;

  rpe_rng_normal (71, 1000, 0, q, G_N_ELEMENTS (q));
  rpe_rng_normal (72, 1000, 0, k, G_N_ELEMENTS (k));
  rpe_rng_normal (73, 1000, 0, v, G_N_ELEMENTS (v));
  write_npy (qp, q, 3, (gsize[]) { n, h, d });
  write_npy (kp, k, 3, (gsize[]) { n, h, d });
  write_npy (vp, v, 3, (gsize[]) { n, h, dv });
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute lrpe-attention --queries %s --keys %s --feature-map elu1 -o %s", qp, kp, ap), ==, 0);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute lrpe-linear --queries %s --keys %s --values %s --feature-map elu1 -o %s", qp, kp, vp, yp), ==, 0);
  a = read_npy (ap);
  y = read_npy (yp);
  assert_shape (a, 3, (gsize[]) { h, n, n });
  assert_shape (y, 3, (gsize[]) { n, h, dv });
  for (gsize hh = 0; hh < h; hh++)
    for (gsize m = 0; m < n; m++)
      {
        double s[n], den = 0;
        for (gsize j = 0; j < n; j++)
          {
            double fq[d], fk[d], rq[d], rk[d];
            s[j] = 0;
            for (gsize i = 0; i < d; i++)
              {
                double xq = q[(m * h + hh) * d + i], xk = k[(j * h + hh) * d + i];
                fq[i] = xq > 0 ? xq + 1 : exp (xq);
                fk[i] = xk > 0 ? xk + 1 : exp (xk);
              }
            for (gsize kk = 0; kk < d / 2; kk++)
              {
                double th = pow (10000.0, -2.0 * kk / d);
                rq[2 * kk] = fq[2 * kk] * cos (m * th) - fq[2 * kk + 1] * sin (m * th);
                rq[2 * kk + 1] = fq[2 * kk + 1] * cos (m * th) + fq[2 * kk] * sin (m * th);
                rk[2 * kk] = fk[2 * kk] * cos (j * th) - fk[2 * kk + 1] * sin (j * th);
                rk[2 * kk + 1] = fk[2 * kk + 1] * cos (j * th) + fk[2 * kk] * sin (j * th);
              }
            for (gsize i = 0; i < d; i++)
              s[j] += rq[i] * rk[i];
            den += s[j];
          }
        for (gsize j = 0; j < n; j++)
          g_assert_cmpfloat_with_epsilon (a->data[(hh * n + m) * n + j], s[j] / den, 1e-4 * (1 + fabs (s[j] / den)));
        for (gsize c = 0; c < dv; c++)
          {
            double num = 0;
            for (gsize j = 0; j < n; j++)
              num += s[j] * v[(j * h + hh) * dv + c];
            g_assert_cmpfloat_with_epsilon (y->data[(m * h + hh) * dv + c], num / den, 1e-4 * (1 + fabs (num / den)));
          }
      }
  /* performer with more features than dims cannot take LRPE after the map */
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute lrpe-linear --queries %s --values %s --feature-map dpfp -o %s", qp, vp, yp), ==, 2);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute lrpe-linear --queries %s --values %s --feature-map dpfp --lrpe-before -o %s", qp, vp, yp), ==, 0);
}

/* fastrpb alone is the Toeplitz product W V; causal zeroes negative lags; per-head weights; 2-D grid. */
static void
test_fastrpb (void)
{
  enum { n = 13, h = 2, dv = 3, n1 = 3, n2 = 4 };
  g_autofree char *vp = rpe_test_tmp_path ("fv.npy"), *wp = rpe_test_tmp_path ("fw.npy"), *whp = rpe_test_tmp_path ("fwh.npy");
  g_autofree char *yp = rpe_test_tmp_path ("fy.npy"), *v2p = rpe_test_tmp_path ("fv2.npy"), *wr = rpe_test_tmp_path ("fwr.npy");
  g_autofree char *wc = rpe_test_tmp_path ("fwc.npy"), *qp = rpe_test_tmp_path ("fq.npy");
  float v[n * h * dv], w[2 * n - 1], wh[h * (2 * n - 1)], v2[n1 * n2 * h * dv], wx[2 * n1 - 1], wy[2 * n2 - 1];
  float q[n * h * 2];

  rpe_rng_normal (81, 1000, 0, v, G_N_ELEMENTS (v));
  rpe_rng_normal (82, 1000, 0, w, G_N_ELEMENTS (w));
  rpe_rng_normal (83, 1000, 0, wh, G_N_ELEMENTS (wh));
  rpe_rng_normal (84, 1000, 0, v2, G_N_ELEMENTS (v2));
  rpe_rng_normal (85, 1000, 0, wx, G_N_ELEMENTS (wx));
  rpe_rng_normal (86, 1000, 0, wy, G_N_ELEMENTS (wy));
  rpe_rng_normal (87, 1000, 0, q, G_N_ELEMENTS (q));
  write_npy (vp, v, 3, (gsize[]) { n, h, dv });
  write_npy (wp, w, 1, (gsize[]) { 2 * n - 1 });
  write_npy (whp, wh, 2, (gsize[]) { h, 2 * n - 1 });
  write_npy (v2p, v2, 3, (gsize[]) { n1 * n2, h, dv });
  write_npy (wr, wx, 1, (gsize[]) { 2 * n1 - 1 });
  write_npy (wc, wy, 1, (gsize[]) { 2 * n2 - 1 });
  write_npy (qp, q, 3, (gsize[]) { n, h, 2 });

  for (int variant = 0; variant < 4; variant++)
    {
      g_autoptr (RpeTensor) y = NULL;
      gboolean causal = variant == 1, per_head = variant == 2, softmax = variant == 3;

      if (softmax)
        g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute fastrpb --queries %s --values %s --bias %s --fastrpb-attention softmax -o %s",
                                  qp, vp, wp, yp), ==, 0);
      else
        g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute fastrpb --values %s --bias %s %s -o %s", vp, per_head ? whp : wp,
                                  causal ? "--causal" : "", yp), ==, 0);
      y = read_npy (yp);
      assert_shape (y, 3, (gsize[]) { n, h, dv });
      for (gsize hh = 0; hh < h; hh++)
        for (gsize m = 0; m < n; m++)
          {
            double att[n], z = 0, mx = -INFINITY;
            if (softmax)
              {
                for (gsize j = 0; j < n; j++)
                  {
                    att[j] = (q[(m * h + hh) * 2] * q[(j * h + hh) * 2] + q[(m * h + hh) * 2 + 1] * q[(j * h + hh) * 2 + 1]) / sqrt (2.0);
                    mx = fmax (mx, att[j]);
                  }
                for (gsize j = 0; j < n; j++)
                  z += exp (att[j] - mx);
                for (gsize j = 0; j < n; j++)
                  att[j] = exp (att[j] - mx) / z;
              }
            for (gsize c = 0; c < dv; c++)
              {
                double ref = 0;
                for (gsize j = 0; j < n; j++)
                  {
                    long tau = (long) m - (long) j;
                    double wt = per_head ? wh[hh * (2 * n - 1) + tau + n - 1] : w[tau + n - 1];
                    if (causal && tau < 0)
                      wt = 0;
                    if (softmax)
                      wt += att[j];
                    ref += wt * v[(j * h + hh) * dv + c];
                  }
                g_assert_cmpfloat_with_epsilon (y->data[(m * h + hh) * dv + c], ref, 1e-4 * (1 + fabs (ref)));
              }
          }
    }

  /* 2-D: W[(i,j),(i',j')] = wx_{i-i'} + wy_{j-j'} */
  {
    g_autoptr (RpeTensor) y = NULL;

    g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute fastrpb --grid %dx%d --values %s --bias-rows %s --bias-cols %s -o %s",
                              n1, n2, v2p, wr, wc, yp), ==, 0);
    y = read_npy (yp);
    assert_shape (y, 3, (gsize[]) { n1 * n2, h, dv });
    for (gsize p = 0; p < n1 * n2; p++)
      for (gsize hh = 0; hh < h; hh++)
        for (gsize c = 0; c < dv; c++)
          {
            double ref = 0;
            for (gsize pp = 0; pp < n1 * n2; pp++)
              {
                long di = (long) (p / n2) - (long) (pp / n2), dj = (long) (p % n2) - (long) (pp % n2);
                ref += (wx[di + n1 - 1] + wy[dj + n2 - 1]) * v2[(pp * h + hh) * dv + c];
              }
            g_assert_cmpfloat_with_epsilon (y->data[(p * h + hh) * dv + c], ref, 1e-4 * (1 + fabs (ref)));
          }
  }
  /* weights trained at M = 13 viewed at N = 12 use the offsets [-11, 11] (issue 10); a model
   * trained at M = 4 (7 weights) cannot cover N = 13; bad grid */
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute fastrpb --values %s --bias %s -o %s", v2p, wp, yp), ==, 0);
  {
    g_autoptr (RpeTensor) y = read_npy (yp);

    for (gsize m = 0; m < n1 * n2; m++)
      {
        double ref = 0;

        for (gsize k = 0; k < n1 * n2; k++)
          ref += w[(long) m - (long) k + n - 1] * v2[(k * h) * dv];
        g_assert_cmpfloat_with_epsilon (y->data[(m * h) * dv], ref, 1e-4 * (1 + fabs (ref)));
      }
  }
  write_npy (wp, w, 1, (gsize[]) { 7 });
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute fastrpb --values %s --bias %s -o %s", vp, wp, yp), ==, 2);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute fastrpb --grid 3by4 --values %s --bias-rows %s --bias-cols %s -o %s", v2p, wr, wc, yp), ==, 2);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute fastrpb --values %s -o %s", vp, yp), ==, 2);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  make_checkpoint ();
  g_test_add_func ("/cli/usage-errors", test_usage_errors);
  g_test_add_func ("/cli/absurd-sizes", test_absurd_sizes);
  g_test_add_func ("/cli/info", test_info);
  g_test_add_func ("/cli/embedded-demo", test_embedded_demo);
  g_test_add_func ("/cli/template-checkpoint", test_template_checkpoint);
  g_test_add_func ("/cli/template-conv", test_template_conv);
  g_test_add_func ("/cli/replay-sine", test_replay_sine);
  g_test_add_func ("/cli/seed-determinism", test_seed_determinism);
  g_test_add_func ("/cli/attention-exact", test_attention_exact);
  g_test_add_func ("/cli/rpe-logits", test_rpe_logits);
  g_test_add_func ("/cli/linear-matches-quadratic", test_linear_matches_quadratic);
  g_test_add_func ("/cli/bad-files", test_bad_files);
  g_test_add_func ("/cli/unwritable-output", test_unwritable_output);
  g_test_add_func ("/cli/bench-json-refused", test_bench_json_refused);
  g_test_add_func ("/cli/lrpe-encode-rope", test_lrpe_encode_rope);
  g_test_add_func ("/cli/lrpe-attention-linear", test_lrpe_attention_linear);
  g_test_add_func ("/cli/fastrpb", test_fastrpb);
  return g_test_run ();
}

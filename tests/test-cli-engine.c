/* test-cli-engine.c: one engine behind every entry point (issue 12).
 *
 * The `rpe compute` commands take the fused / streamed core paths that `rpe bench` times;
 * these tests check that speed changes nothing: the CLI's arrays equal, to float rounding,
 * the unfused reference computed here from the core's separate steps (noise, codes, gating,
 * encoding, full logits, full softmax, full template), and the streamed .npy files equal the
 * in-memory results. */
#include "config.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>

#include "rpe-alloc.h"
#include "rpe-attention.h"
#include "rpe-linear-attention.h"
#include "rpe-npy.h"
#include "rpe-rng.h"
#include "rpe-spe.h"
#include "rpe-test-utils.h"

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
write_npy (const char *path, const float *data, gsize ndim, const gsize *shape)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (rpe_npy_write (path, data, ndim, shape, FALSE, &error));
  g_assert_no_error (error);
}

static float *
falloc (gsize count)
{
  RpeStatus st;
  float *p = rpe_alloc (count, sizeof (float), &st);

  g_assert_nonnull (p);
  return p;
}

/* The parameters `rpe compute` draws for random init (--heads H --features D --sines/--kernel S
 * --seed SEED): rpe_spe_params_init (gated) + rpe_spe_params_random (seed). */
static void
random_params (RpeSpeParams *p, RpeSpeMethod method, gsize H, gsize D, gsize S, guint64 seed)
{
  g_assert_cmpint (rpe_spe_params_init (p, method, H, D, S, TRUE), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_params_random (p, seed), ==, RPE_OK);
}

/* The unfused reference: noise buffer, (N, H, D, R) codes, gating, then the encoding. */
static void
reference_encode (const RpeSpeParams *p, gsize n, gsize r, guint64 seed, const float *q, const float *k,
                  float *qhat, float *khat)
{
  gsize H = p->n_heads, D = p->n_features, zc;
  float *z, *qbar = falloc (n * H * D * r), *kbar = falloc (n * H * D * r), *eps = falloc (H * D * r);

  g_assert_cmpint (rpe_spe_noise_size (p, n, r, &zc), ==, RPE_OK);
  z = falloc (zc);
  g_assert_cmpint (rpe_spe_noise_fill (p, n, r, seed, z), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_codes (p, n, r, z, qbar, kbar, NULL), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_gate_noise_fill (p, r, seed, eps), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_gate_codes (p, n, r, eps, qbar, kbar), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_encode (n, H, D, r, qbar, kbar, q, k, qhat, khat, NULL), ==, RPE_OK);
  rpe_free (z);
  rpe_free (qbar);
  rpe_free (kbar);
  rpe_free (eps);
}

/* Largest |a - b| over the largest |b|: a rounding-level comparison of two float paths. */
static double
rel_err (const float *a, const float *b, gsize count)
{
  double num = 0, den = 0;

  /* as abs_err below: a NaN difference gives NaN, and no fmax reduction */
  for (gsize i = 0; i < count; i++)
    {
      const double d = fabs ((double) a[i] - (double) b[i]), m = fabs ((double) b[i]);

      if (!(d <= num))
        num = d;
      if (m > den)
        den = m;
    }
  return den > 0 ? num / den : num;
}

static double
abs_err (const float *a, const float *b, gsize count)
{
  double e = 0;

  /* a NaN difference makes the result NaN (fmax would drop it); and this loop, unlike an fmax
   * reduction, does not crash the vectoriser of Debian's GCC 12 for arm64 (an internal compiler
   * error in vect_transform_reduction) */
  for (gsize i = 0; i < count; i++)
    {
      const double d = fabs ((double) a[i] - (double) b[i]);

      if (!(d <= e))
        e = d;
    }
  return e;
}

/* `rpe compute encode` (fused path, noise drawn inside the core) equals the unfused reference,
 * and `logits` / `attention` (streamed per head in row blocks) equal the full (H, N, N) logits
 * and row softmax of those encodings; for sine and conv, gated. */
static void
test_encode_matches_reference (gconstpointer data)
{
  const gboolean conv = GPOINTER_TO_INT (data);
  const gsize H = 2, D = 8, S = conv ? 9 : 3, n = 300, r = 16;
  const guint64 seed = 21;
  g_autofree char *qp = rpe_test_tmp_path ("eq.npy"), *kp = rpe_test_tmp_path ("ek.npy"), *qh = rpe_test_tmp_path ("eqh.npy");
  g_autofree char *kh = rpe_test_tmp_path ("ekh.npy"), *lp = rpe_test_tmp_path ("el.npy"), *ap = rpe_test_tmp_path ("ea.npy");
  g_autofree char *cp = rpe_test_tmp_path ("eac.npy");
  RpeSpeParams p = { 0 };
  float *q = falloc (n * H * D), *k = falloc (n * H * D);
  float *qhat = falloc (n * H * r), *khat = falloc (n * H * r), *logits = falloc (H * n * n);
  float *causal = falloc (H * n * n);
  g_autoptr (RpeTensor) cq = NULL, ck = NULL, cl = NULL, ca = NULL, cc = NULL;
  const char *m = conv ? "--method conv --kernel 9" : "--method sine --sines 3";

  random_params (&p, conv ? RPE_SPE_CONV : RPE_SPE_SINE, H, D, S, seed);
  rpe_rng_normal (4, RPE_STREAM_QUERIES, 0, q, n * H * D);
  rpe_rng_normal (4, RPE_STREAM_KEYS, 0, k, n * H * D);
  write_npy (qp, q, 3, (gsize[]) { n, H, D });
  write_npy (kp, k, 3, (gsize[]) { n, H, D });
  reference_encode (&p, n, r, seed, q, k, qhat, khat);

  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute encode %s --heads 2 --features 8 --realizations 16 --seed 21 "
                            "--queries %s --keys %s -o %s --out-keys %s", m, qp, kp, qh, kh), ==, 0);
  cq = read_npy (qh);
  ck = read_npy (kh);
  g_assert_cmpuint (cq->n_elements, ==, n * H * r);
  g_assert_cmpuint (ck->n_elements, ==, n * H * r);
  g_assert_cmpfloat (rel_err (cq->data, qhat, n * H * r), <, 2e-5);
  g_assert_cmpfloat (rel_err (ck->data, khat, n * H * r), <, 2e-5);

  /* full logits (H, N, N), then the full row softmax, from the reference encodings */
  g_assert_cmpint (rpe_spe_logits (n, H, r, qhat, khat, logits, NULL), ==, RPE_OK);
  memcpy (causal, logits, H * n * n * sizeof (float));
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute logits %s --heads 2 --features 8 --realizations 16 --seed 21 "
                            "--queries %s --keys %s -o %s", m, qp, kp, lp), ==, 0);
  cl = read_npy (lp);
  g_assert_cmpuint (cl->ndim, ==, 3);
  g_assert_cmpuint (cl->shape[0], ==, H);
  g_assert_cmpuint (cl->shape[1], ==, n);
  g_assert_cmpuint (cl->shape[2], ==, n);
  g_assert_cmpfloat (rel_err (cl->data, logits, H * n * n), <, 1e-4);

  g_assert_cmpint (rpe_softmax_rows (logits, H, n, FALSE, NULL), ==, RPE_OK);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute attention %s --heads 2 --features 8 --realizations 16 --seed 21 "
                            "--queries %s --keys %s -o %s", m, qp, kp, ap), ==, 0);
  ca = read_npy (ap);
  g_assert_cmpuint (ca->n_elements, ==, H * n * n);
  g_assert_cmpfloat (abs_err (ca->data, logits, H * n * n), <, 1e-5);

  g_assert_cmpint (rpe_softmax_rows (causal, H, n, TRUE, NULL), ==, RPE_OK);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute attention %s --heads 2 --features 8 --realizations 16 --seed 21 "
                            "--causal --queries %s --keys %s -o %s", m, qp, kp, cp), ==, 0);
  cc = read_npy (cp);
  g_assert_cmpfloat (abs_err (cc->data, causal, H * n * n), <, 1e-5);
  for (gsize h = 0; h < H; h++)
    for (gsize i = 0; i < n; i++)
      for (gsize j = i + 1; j < n; j++)
        g_assert_cmpfloat (cc->data[(h * n + i) * n + j], ==, 0.0f);

  rpe_spe_params_clear (&p);
  rpe_free (q);
  rpe_free (k);
  rpe_free (qhat);
  rpe_free (khat);
  rpe_free (logits);
  rpe_free (causal);
}

/* `rpe compute linear` (fused encoding) equals linear attention on the reference encodings. */
static void
test_linear_matches_reference (void)
{
  const gsize H = 2, D = 4, n = 200, r = 8, dv = 3;
  g_autofree char *qp = rpe_test_tmp_path ("lq.npy"), *kp = rpe_test_tmp_path ("lk.npy"), *vp = rpe_test_tmp_path ("lv.npy");
  g_autofree char *yp = rpe_test_tmp_path ("ly.npy");
  RpeSpeParams p = { 0 };
  float *q = falloc (n * H * D), *k = falloc (n * H * D), *v = falloc (n * H * dv), *y = falloc (n * H * dv);
  float *qhat = falloc (n * H * r), *khat = falloc (n * H * r);
  g_autoptr (RpeTensor) cy = NULL;

  random_params (&p, RPE_SPE_CONV, H, D, 5, 8);
  rpe_rng_normal (9, RPE_STREAM_QUERIES, 0, q, n * H * D);
  rpe_rng_normal (9, RPE_STREAM_KEYS, 0, k, n * H * D);
  rpe_rng_normal (9, RPE_STREAM_VALUES, 0, v, n * H * dv);
  write_npy (qp, q, 3, (gsize[]) { n, H, D });
  write_npy (kp, k, 3, (gsize[]) { n, H, D });
  write_npy (vp, v, 3, (gsize[]) { n, H, dv });
  reference_encode (&p, n, r, 8, q, k, qhat, khat);
  for (int causal = 0; causal < 2; causal++)
    {
      g_assert_cmpint (rpe_linear_attention_qkv (RPE_FEATURE_ELU1, NULL, n, H, r, dv, qhat, khat, v,
                                                 causal, y, NULL), ==, RPE_OK);
      g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute linear --method conv --heads 2 --features 4 --kernel 5 --realizations 8 "
                                "--seed 8 --queries %s --keys %s --values %s %s -o %s",
                                qp, kp, vp, causal ? "--causal" : "", yp), ==, 0);
      cy = read_npy (yp);
      g_assert_cmpuint (cy->n_elements, ==, n * H * dv);
      g_assert_cmpfloat (rel_err (cy->data, y, n * H * dv), <, 1e-4);
      g_clear_pointer (&cy, rpe_tensor_free);
    }
  rpe_spe_params_clear (&p);
  rpe_free (q);
  rpe_free (k);
  rpe_free (v);
  rpe_free (y);
  rpe_free (qhat);
  rpe_free (khat);
}

/* `rpe compute template` writes (H, D, N, N) a slab at a time: the file equals rpe_spe_template
 * of each (h, d), and N is large enough (N^2 > one slab) that several slabs per (h, d) are
 * written. */
static void
test_template_streamed (void)
{
  const gsize H = 2, D = 3, n = 1100;   /* 1100^2 floats > the CLI's 2^20-float slab */
  g_autofree char *tp = rpe_test_tmp_path ("tpl.npy"), *ep = rpe_test_tmp_path ("emp.npy");
  RpeSpeParams p = { 0 };
  float *full = falloc (n * n);
  g_autoptr (RpeTensor) t = NULL;

  random_params (&p, RPE_SPE_SINE, H, D, 4, 5);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute template --heads 2 --features 3 --sines 4 --seed 5 --length 1100 -o %s", tp), ==, 0);
  t = read_npy (tp);
  g_assert_cmpuint (t->ndim, ==, 4);
  g_assert_cmpuint (t->shape[0], ==, H);
  g_assert_cmpuint (t->shape[1], ==, D);
  g_assert_cmpuint (t->shape[2], ==, n);
  g_assert_cmpuint (t->shape[3], ==, n);
  for (gsize h = 0; h < H; h++)
    for (gsize d = 0; d < D; d++)
      {
        g_assert_cmpint (rpe_spe_template (&p, h, d, n, TRUE, full), ==, RPE_OK);
        g_assert_cmpfloat (abs_err (t->data + (h * D + d) * n * n, full, n * n), ==, 0.0);
      }
  g_clear_pointer (&t, rpe_tensor_free);

  /* empirical rows: equal to the whole-map sgemm of the same codes */
  {
    const gsize ne = 600, r = 8;
    float *qbar = falloc (ne * H * D * r), *kbar = falloc (ne * H * D * r), *z, *eps = falloc (H * D * r);
    gsize zc;

    g_assert_cmpint (rpe_spe_noise_size (&p, ne, r, &zc), ==, RPE_OK);
    z = falloc (zc);
    g_assert_cmpint (rpe_spe_noise_fill (&p, ne, r, 5, z), ==, RPE_OK);
    g_assert_cmpint (rpe_spe_codes (&p, ne, r, z, qbar, kbar, NULL), ==, RPE_OK);
    g_assert_cmpint (rpe_spe_gate_noise_fill (&p, r, 5, eps), ==, RPE_OK);
    g_assert_cmpint (rpe_spe_gate_codes (&p, ne, r, eps, qbar, kbar), ==, RPE_OK);
    g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute empirical --heads 2 --features 3 --sines 4 --seed 5 --length 600 "
                              "--realizations 8 -o %s", ep), ==, 0);
    t = read_npy (ep);
    g_assert_cmpuint (t->n_elements, ==, H * D * ne * ne);
    for (gsize h = 0; h < H; h++)
      for (gsize d = 0; d < D; d++)
        {
          /* naive sqrt(R D)/R sum_r Qbar[m, h, d, r] Kbar[n, h, d, r] */
          double err = 0, alpha = sqrt ((double) r * D) / r;

          for (gsize i = 0; i < ne; i += 7)
            for (gsize j = 0; j < ne; j += 5)
              {
                double s = 0;

                for (gsize rr = 0; rr < r; rr++)
                  s += (double) qbar[((i * H + h) * D + d) * r + rr] * kbar[((j * H + h) * D + d) * r + rr];
                err = fmax (err, fabs (alpha * s - t->data[((h * D + d) * ne + i) * ne + j]));
              }
          g_assert_cmpfloat (err, <, 1e-4);
        }
    rpe_free (qbar);
    rpe_free (kbar);
    rpe_free (z);
    rpe_free (eps);
  }
  rpe_spe_params_clear (&p);
  rpe_free (full);
}

/* The streaming writer: header first, slabs, atomic commit; a wrong count is refused and leaves
 * no file, an abort keeps the previous file. */
static void
test_npy_writer (void)
{
  g_autofree char *path = rpe_test_tmp_path ("stream.npy");
  g_autoptr (GError) error = NULL;
  float data[60];
  RpeNpyWriter *w;
  g_autoptr (RpeTensor) t = NULL;

  for (int i = 0; i < 60; i++)
    data[i] = (float) i * 0.5f - 3.0f;
  for (int f64 = 0; f64 < 2; f64++)
    {
      w = rpe_npy_writer_new (path, 3, (gsize[]) { 3, 4, 5 }, f64, &error);
      g_assert_no_error (error);
      g_assert_true (rpe_npy_writer_append (w, data, 7, &error));
      g_assert_true (rpe_npy_writer_append (w, data + 7, 0, &error));
      g_assert_true (rpe_npy_writer_append (w, data + 7, 53, &error));
      g_assert_false (rpe_npy_writer_append (w, data, 1, &error));   /* one too many */
      g_assert_nonnull (error);
      g_clear_error (&error);
      g_assert_true (rpe_npy_writer_commit (w, &error));
      g_assert_no_error (error);
      t = read_npy (path);
      g_assert_cmpuint (t->n_elements, ==, 60);
      g_assert_cmpmem (t->data, 60 * sizeof (float), data, 60 * sizeof (float));
      g_clear_pointer (&t, rpe_tensor_free);
    }
  /* too few elements: commit fails and the previous file stays */
  w = rpe_npy_writer_new (path, 1, (gsize[]) { 10 }, FALSE, &error);
  g_assert_true (rpe_npy_writer_append (w, data, 9, &error));
  g_assert_false (rpe_npy_writer_commit (w, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);
  t = read_npy (path);
  g_assert_cmpuint (t->n_elements, ==, 60);
  g_clear_pointer (&t, rpe_tensor_free);
  w = rpe_npy_writer_new (path, 1, (gsize[]) { 10 }, FALSE, &error);
  rpe_npy_writer_abort (w);
  t = read_npy (path);
  g_assert_cmpuint (t->n_elements, ==, 60);
}


/* rpe_spe_encode_seeded_head gives the head's slice of rpe_spe_encode_seeded (same noise draw). */
static void
test_encode_head (gconstpointer data)
{
  const gboolean conv = GPOINTER_TO_INT (data);
  const gsize H = 3, D = 4, n = 150, r = 8;
  RpeSpeParams p = { 0 };
  float *q = falloc (n * H * D), *k = falloc (n * H * D), *eps = falloc (H * D * r);
  float *qhat = falloc (n * H * r), *khat = falloc (n * H * r);
  float *qh = falloc (n * D), *kh = falloc (n * D), *oq = falloc (n * r), *ok = falloc (n * r);

  random_params (&p, conv ? RPE_SPE_CONV : RPE_SPE_SINE, H, D, conv ? 7 : 3, 31);
  rpe_rng_normal (2, RPE_STREAM_QUERIES, 0, q, n * H * D);
  rpe_rng_normal (2, RPE_STREAM_KEYS, 0, k, n * H * D);
  g_assert_cmpint (rpe_spe_gate_noise_fill (&p, r, 12, eps), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_encode_seeded (&p, n, r, 12, eps, q, k, qhat, khat, NULL), ==, RPE_OK);
  for (gsize h = 0; h < H; h++)
    {
      for (gsize m = 0; m < n; m++)
        {
          memcpy (qh + m * D, q + (m * H + h) * D, D * sizeof (float));
          memcpy (kh + m * D, k + (m * H + h) * D, D * sizeof (float));
        }
      g_assert_cmpint (rpe_spe_encode_seeded_head (&p, h, n, r, 12, eps, qh, kh, oq, ok, NULL), ==, RPE_OK);
      for (gsize m = 0; m < n; m++)
        for (gsize i = 0; i < r; i++)
          {
            g_assert_cmpfloat (fabs (oq[m * r + i] - qhat[(m * H + h) * r + i]), <, 1e-5);
            g_assert_cmpfloat (fabs (ok[m * r + i] - khat[(m * H + h) * r + i]), <, 1e-5);
          }
    }
  g_assert_cmpint (rpe_spe_encode_seeded_head (&p, H, n, r, 12, eps, qh, kh, oq, ok, NULL), ==,
                   RPE_ERROR_INVALID_ARGUMENT);
  rpe_spe_params_clear (&p);
  rpe_free (q);
  rpe_free (k);
  rpe_free (eps);
  rpe_free (qhat);
  rpe_free (khat);
  rpe_free (qh);
  rpe_free (kh);
  rpe_free (oq);
  rpe_free (ok);
}

/* A map given by a formula, streamed to rpe_map_reduce in blocks. */
static RpeStatus
formula_rows (size_t m0, size_t n_rows, float *out, void *user_data)
{
  const gsize n = *(const gsize *) user_data;

  for (gsize i = 0; i < n_rows; i++)
    for (gsize c = 0; c < n; c++)
      out[i * n + c] = (float) sin (0.37 * (double) (m0 + i) + 0.011 * (double) c * (double) c);
  return RPE_OK;
}

/* rpe_map_reduce equals the naive mean / max / max-abs over each pixel's bins
 * {m : floor (m rows / N) = i} x {n : floor (n cols / N) = j}, for bins of unequal sizes, any
 * block size, and rows = cols = N gives the map itself. */
static void
test_map_reduce (void)
{
  gsize n = 301;
  const gsize sizes[][2] = { { 7, 5 }, { 64, 100 }, { 301, 301 }, { 1, 1 } };
  float *full = falloc (n * n), *img = falloc (n * n);

  g_assert_cmpint (formula_rows (0, n, full, &n), ==, RPE_OK);
  for (gsize t = 0; t < G_N_ELEMENTS (sizes); t++)
    for (int mode = 0; mode < 3; mode++)
      for (gsize block = 0; block <= 4 * n; block += 4 * n)
        {
          gsize rows = sizes[t][0], cols = sizes[t][1];
          double err = 0;

          g_assert_cmpint (rpe_map_reduce (n, rows, cols, (RpeMapReduce) mode, block, formula_rows, &n, img, NULL),
                           ==, RPE_OK);
          for (gsize i = 0; i < rows; i++)
            for (gsize j = 0; j < cols; j++)
              {
                double sum = 0, best = NAN;
                gsize count = 0;

                for (gsize m = 0; m < n; m++)
                  for (gsize c = 0; c < n; c++)
                    if ((m * rows) / n == i && (c * cols) / n == j)
                      {
                        double v = full[m * n + c];

                        sum += v;
                        count++;
                        if (isnan (best) || (mode == 1 ? v > best : mode == 2 ? fabs (v) > fabs (best) : FALSE))
                          best = v;
                      }
                g_assert_cmpuint (count, >, 0);
                /* max-abs: ties of opposite sign (values that round to +-1) may go either way */
                if (mode == 2)
                  err = fmax (err, fabs (fabs (best) - fabs (img[i * cols + j])));
                else
                  err = fmax (err, fabs ((mode == 0 ? sum / count : best) - img[i * cols + j]));
              }
          g_assert_cmpfloat (err, <, 1e-5);
        }
  g_assert_cmpint (rpe_map_reduce (n, n + 1, 1, RPE_MAP_REDUCE_MEAN, 0, formula_rows, &n, img, NULL), ==,
                   RPE_ERROR_INVALID_ARGUMENT);
  rpe_free (full);
  rpe_free (img);
}

/* `compute logits|attention --exact` (streamed in blocks of rows, several blocks per head at
 * N = 1100) equal rpe_spe_exact_logits and its row softmax, causal. */
static void
test_exact_cli_streamed (void)
{
  const gsize H = 2, D = 4, n = 1100;
  g_autofree char *qp = rpe_test_tmp_path ("xq.npy"), *kp = rpe_test_tmp_path ("xk.npy"), *lp = rpe_test_tmp_path ("xl.npy");
  g_autofree char *ap = rpe_test_tmp_path ("xat.npy");
  RpeSpeParams p = { 0 };
  float *q = falloc (n * H * D), *k = falloc (n * H * D), *logits = falloc (H * n * n);
  g_autoptr (RpeTensor) cl = NULL, ca = NULL;

  random_params (&p, RPE_SPE_SINE, H, D, 3, 21);
  rpe_rng_normal (4, RPE_STREAM_QUERIES, 0, q, n * H * D);
  rpe_rng_normal (4, RPE_STREAM_KEYS, 0, k, n * H * D);
  write_npy (qp, q, 3, (gsize[]) { n, H, D });
  write_npy (kp, k, 3, (gsize[]) { n, H, D });
  g_assert_cmpint (rpe_spe_exact_logits (&p, n, q, k, TRUE, logits, NULL), ==, RPE_OK);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute logits --exact --method sine --sines 3 --heads 2 --features 4 --seed 21 "
                            "--queries %s --keys %s -o %s", qp, kp, lp), ==, 0);
  cl = read_npy (lp);
  g_assert_cmpuint (cl->n_elements, ==, H * n * n);
  g_assert_cmpfloat (rel_err (cl->data, logits, H * n * n), <, 1e-5);
  g_assert_cmpint (rpe_softmax_rows (logits, H, n, TRUE, NULL), ==, RPE_OK);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute attention --exact --causal --method sine --sines 3 --heads 2 --features 4 "
                            "--seed 21 --queries %s --keys %s -o %s", qp, kp, ap), ==, 0);
  ca = read_npy (ap);
  g_assert_cmpuint (ca->n_elements, ==, H * n * n);
  g_assert_cmpfloat (abs_err (ca->data, logits, H * n * n), <, 1e-6);
  rpe_spe_params_clear (&p);
  rpe_free (q);
  rpe_free (k);
  rpe_free (logits);
}

/* rpe_spe_exact_logits_stream (the path of `compute logits|attention --exact`) gives the
 * rows of rpe_spe_exact_logits in order, block by block, for blocks that do not divide N. */
typedef struct
{
  const float *full;
  gsize        n, next_h, next_m;
  double       err;
} StreamCheck;

static RpeStatus
stream_check_sink (size_t head, size_t m0, size_t n_rows, float *rows, void *user_data)
{
  StreamCheck *sc = user_data;

  g_assert_cmpuint (head, ==, sc->next_h);
  g_assert_cmpuint (m0, ==, sc->next_m);
  g_assert_cmpuint (n_rows, <=, 7);
  sc->err = fmax (sc->err, abs_err (rows, sc->full + (head * sc->n + m0) * sc->n, n_rows * sc->n));
  sc->next_m = m0 + n_rows;
  if (sc->next_m == sc->n)
    {
      sc->next_m = 0;
      sc->next_h++;
    }
  return head == 99 ? RPE_ERROR_IO : RPE_OK;
}

static void
test_exact_logits_stream (void)
{
  const gsize n = 45, H = 3, D = 4;
  RpeSpeParams p = { 0 };
  float *q = falloc (n * H * D), *k = falloc (n * H * D), *full = falloc (H * n * n), *buf = falloc (7 * n);
  StreamCheck sc = { full, n, 0, 0, 0 };

  random_params (&p, RPE_SPE_SINE, H, D, 3, 5);
  rpe_rng_normal (7, RPE_STREAM_QUERIES, 0, q, n * H * D);
  rpe_rng_normal (7, RPE_STREAM_KEYS, 0, k, n * H * D);
  g_assert_cmpint (rpe_spe_exact_logits (&p, n, q, k, TRUE, full, NULL), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_exact_logits_stream (&p, n, q, k, TRUE, 7, buf, stream_check_sink, &sc, NULL), ==, RPE_OK);
  g_assert_cmpuint (sc.next_h, ==, H);
  g_assert_cmpfloat (sc.err, ==, 0.0);
  g_assert_cmpint (rpe_spe_exact_logits_stream (&p, n, q, k, TRUE, 7, buf, NULL, NULL, NULL), ==,
                   RPE_ERROR_INVALID_ARGUMENT);
  rpe_spe_params_clear (&p);
  rpe_free (q);
  rpe_free (k);
  rpe_free (full);
  rpe_free (buf);
}

/* rpe_attention_map_reduce (online softmax of logits tiles into pixel bins) equals the naive
 * bin mean / max of the full attention map (rpe_attention_rows of every row), for several
 * column tiles whose row max grows from tile to tile, causal or not, one head of two, unequal
 * bins, rows = cols = N, and rows whose logits overflow to +inf (the fallback path). */
static void
test_attention_map_reduce (void)
{
  const gsize n = 4500, H = 2, d = 8;
  const gsize sizes[][2] = { { 7, 5 }, { 64, 100 }, { 2048, 2048 }, { 1, 3 } };
  float *q = falloc (n * H * d), *k = falloc (n * H * d), *full = falloc (n * n);
  float *img = falloc (2048 * 2048);
  double *want = g_new (double, 2048 * 2048);
  gsize cnt_r[2048], cnt_c[2048];

  for (int overflow = 0; overflow < 2; overflow++)
    {
      for (gsize m = 0; m < n; m++)
        for (gsize i = 0; i < H * d; i++)
          {
            /* keys grow with the column: each tile raises the row max */
            q[m * H * d + i] = (float) sin (0.3 * (double) m + 1.7 * (double) i);
            k[m * H * d + i] = (float) ((1.0 + 6.0 * (double) m / (double) n) * cos (0.21 * (double) m + 0.9 * (double) i));
          }
      if (overflow)
        for (gsize i = 0; i < d; i++)
          {
            q[(777 * H + 1) * d + i] = 3e19f;     /* row 777 of head 1: +inf logits */
            q[(3001 * H + 1) * d + i] = -3e19f;   /* row 3001: -inf and +inf logits */
          }
      for (int causal = 0; causal < 2; causal++)
        {
          RpeLogitsSpec spec = { RPE_LOGITS_DOT, n, H, d, q, k, NULL, false, false };

          g_assert_cmpint (rpe_attention_rows (&spec, 1, 0, n, causal, full, NULL), ==, RPE_OK);
          for (gsize t = 0; t < G_N_ELEMENTS (sizes); t++)
            for (int mode = 0; mode < 3; mode++)
              {
                gsize rows = sizes[t][0], cols = sizes[t][1];
                double err = 0;

                for (gsize i = 0; i < rows * cols; i++)
                  want[i] = mode == 0 ? 0.0 : -INFINITY;
                for (gsize m = 0; m < n; m++)
                  for (gsize c = 0; c < n; c++)
                    {
                      gsize px = ((m * rows) / n) * cols + (c * cols) / n;
                      double v = full[m * n + c];

                      want[px] = mode == 0 ? want[px] + v : fmax (want[px], v);
                    }
                g_assert_cmpint (rpe_attention_map_reduce (&spec, 1, causal, rows, cols, (RpeMapReduce) mode, img,
                                                           NULL), ==, RPE_OK);
                memset (cnt_r, 0, sizeof cnt_r);
                memset (cnt_c, 0, sizeof cnt_c);
                for (gsize m = 0; m < n; m++)
                  {
                    cnt_r[(m * rows) / n]++;
                    cnt_c[(m * cols) / n]++;
                  }
                for (gsize i = 0; i < rows; i++)
                  for (gsize j = 0; j < cols; j++)
                    {
                      double w = want[i * cols + j];

                      if (mode == 0)
                        w /= (double) cnt_r[i] * (double) cnt_c[j];
                      /* relative to the pixel's value (means of a few columns are small) */
                      err = fmax (err, fabs (w - img[i * cols + j]) / fmax (fabs (w), 1e-3));
                    }
                g_assert_cmpfloat (err, <, 2e-4);
              }
        }
    }
  g_assert_cmpint (rpe_attention_map_reduce (&(RpeLogitsSpec) { RPE_LOGITS_DOT, n, H, d, q, k, NULL, false, false },
                                             2, false, 4, 4, RPE_MAP_REDUCE_MEAN, img, NULL),
                   ==, RPE_ERROR_INVALID_ARGUMENT);
  rpe_free (q);
  rpe_free (k);
  rpe_free (full);
  rpe_free (img);
  g_free (want);
}

/* `rpe export attention -o X.npy` (one head, streamed) equals that head of `rpe compute
 * attention` (all heads), with random content drawn for the one head only. */
static void
test_export_attention_head (void)
{
  g_autofree char *ap = rpe_test_tmp_path ("xa.npy"), *ep = rpe_test_tmp_path ("xe.npy");
  g_autoptr (RpeTensor) all = NULL, one = NULL;
  const gsize n = 700, H = 3;

  for (int conv = 0; conv < 2; conv++)
    {
      const char *m = conv ? "--method conv --kernel 6" : "--method sine --sines 2";

      g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute attention %s --heads 3 --features 4 --realizations 8 --seed 3 "
                                "--content random --length 700 --causal -o %s", m, ap), ==, 0);
      g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "export attention %s --heads 3 --features 4 --realizations 8 --seed 3 "
                                "--content random --length 700 --causal --head 2 -o %s", m, ep), ==, 0);
      all = read_npy (ap);
      one = read_npy (ep);
      g_assert_cmpuint (all->n_elements, ==, H * n * n);
      g_assert_cmpuint (one->n_elements, ==, n * n);
      g_assert_cmpfloat (abs_err (one->data, all->data + 2 * n * n, n * n), <, 1e-6);
      g_clear_pointer (&all, rpe_tensor_free);
      g_clear_pointer (&one, rpe_tensor_free);
    }
}

static guint8 *
file_bytes (const char *path, gsize *len)
{
  char *text = NULL;

  g_assert_true (g_file_get_contents (path, &text, len, NULL));
  return (guint8 *) text;
}

/* The CLI's floats equal the core's computed here, bit for bit.  Under valgrind the test runs
 * on valgrind's CPU (no AVX-512: the core's AVX2 kernels, OpenBLAS's Haswell ones) while the
 * `rpe` child runs natively, so the two processes pick other kernels: there, to rounding. */
static void
assert_cli_equals_core (const float *cli,
                        const float *core,
                        gsize        count)
{
  double scale = 0;

  if (g_getenv ("RPE_UNDER_VALGRIND") == NULL)
    {
      g_assert_cmpmem (cli, count * sizeof (float), core, count * sizeof (float));
      return;
    }
  for (gsize i = 0; i < count; i++)
    scale = MAX (scale, fabs (core[i]));
  for (gsize i = 0; i < count; i++)
    g_assert_cmpfloat (fabs ((double) cli[i] - core[i]), <=, 1e-5 * scale);
}

/* `rpe compute encode --content random` (queries and keys drawn on the workers, the two
 * outputs written on two threads, OpenBLAS's pool stopped) equals, bit for bit, the fused core
 * path called here on serially drawn inputs: the same floats, not only to rounding.  Twice the
 * same command gives the same bytes (conv: the FFT plan no longer depends on timing), and
 * --f64 holds the same values widened. */
static void
test_encode_random_bitwise (gconstpointer data)
{
  const gboolean conv = GPOINTER_TO_INT (data);
  /* sine: slabs of 512 rows (512 x 8 x 64 draws each, split over the workers), the last short */
  const gsize H = 8, D = 64, S = conv ? 9 : 3, n = 1000, r = 64;
  const guint64 seed = 5;
  g_autofree char *qh = rpe_test_tmp_path ("bq.npy"), *kh = rpe_test_tmp_path ("bk.npy");
  g_autofree char *qh2 = rpe_test_tmp_path ("bq2.npy"), *kh2 = rpe_test_tmp_path ("bk2.npy");
  g_autofree char *qd = rpe_test_tmp_path ("bqd.npy"), *kd = rpe_test_tmp_path ("bkd.npy");
  g_autofree guint8 *a = NULL, *b = NULL;
  gsize la, lb;
  RpeSpeParams p = { 0 };
  float *q = falloc (n * H * D), *k = falloc (n * H * D), *eps = falloc (H * D * r);
  float *qhat = falloc (n * H * r), *khat = falloc (n * H * r);
  g_autoptr (RpeTensor) cq = NULL, ck = NULL, dq = NULL, dk = NULL;
  const char *m = conv ? "--method conv --kernel 9" : "--method sine --sines 3";
  const char *opts = "--heads 8 --features 64 --realizations 64 --length 1000 --seed 5 --content random";

  random_params (&p, conv ? RPE_SPE_CONV : RPE_SPE_SINE, H, D, S, seed);
  rpe_rng_normal (seed, RPE_STREAM_QUERIES, 0, q, n * H * D);
  rpe_rng_normal (seed, RPE_STREAM_KEYS, 0, k, n * H * D);
  g_assert_cmpint (rpe_spe_gate_noise_fill (&p, r, seed, eps), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_encode_seeded (&p, n, r, seed, eps, q, k, qhat, khat, NULL), ==, RPE_OK);

  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute encode %s %s -o %s --out-keys %s", m, opts, qh, kh), ==, 0);
  cq = read_npy (qh);
  ck = read_npy (kh);
  g_assert_cmpuint (cq->n_elements, ==, n * H * r);
  g_assert_cmpuint (ck->n_elements, ==, n * H * r);
  assert_cli_equals_core (cq->data, qhat, n * H * r);
  assert_cli_equals_core (ck->data, khat, n * H * r);

  /* the repeat with OpenBLAS's default threads (the suite sets one): its pool is stopped */
  {
    g_autofree char *blas = g_strdup (g_getenv ("OPENBLAS_NUM_THREADS"));

    g_unsetenv ("OPENBLAS_NUM_THREADS");
    g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute encode %s %s -o %s --out-keys %s", m, opts, qh2, kh2), ==, 0);
    if (blas != NULL)
      g_setenv ("OPENBLAS_NUM_THREADS", blas, TRUE);
  }
  a = file_bytes (qh, &la);
  b = file_bytes (qh2, &lb);
  g_assert_cmpmem (a, la, b, lb);
  g_clear_pointer (&a, g_free);
  g_clear_pointer (&b, g_free);
  a = file_bytes (kh, &la);
  b = file_bytes (kh2, &lb);
  g_assert_cmpmem (a, la, b, lb);

  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute encode %s %s --f64 -o %s --out-keys %s", m, opts, qd, kd), ==, 0);
  dq = read_npy (qd);
  dk = read_npy (kd);
  g_assert_cmpuint (dq->dtype, ==, RPE_DTYPE_F64);
  assert_cli_equals_core (dq->data, qhat, n * H * r);
  assert_cli_equals_core (dk->data, khat, n * H * r);

  rpe_spe_params_clear (&p);
  rpe_free (q);
  rpe_free (k);
  rpe_free (eps);
  rpe_free (qhat);
  rpe_free (khat);
}

static gsize
count_hidden (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  gsize count = 0;

  g_assert_nonnull (d);
  while ((name = g_dir_read_name (d)) != NULL)
    count += name[0] == '.';
  return count;
}

/* The two outputs of `encode` are published together: when the writes fail (here a file size
 * limit, inherited by the command), exit 1, both old files are kept and no temporary file is
 * left; rpe_npy_writer_flush then commit gives the file rpe_npy_write gives, and an abort
 * after a flush keeps the old file. */
static void
test_encode_outputs_together (void)
{
  g_autofree char *dir = rpe_test_tmp_path ("pair");
  g_autofree char *qh = g_build_filename (dir, "q.npy", NULL), *kh = g_build_filename (dir, "k.npy", NULL);
  g_autofree char *one = g_build_filename (dir, "one.npy", NULL), *two = g_build_filename (dir, "two.npy", NULL);
  g_autofree char *err = NULL;
  g_autofree guint8 *a = NULL, *b = NULL;
  g_autoptr (GError) error = NULL;
  const float keep[3] = { 1, 2, 3 };
  float data[60];
  struct rlimit old, lim;
  RpeNpyWriter *w;
  gsize la, lb;
  int status;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  write_npy (qh, keep, 1, (gsize[]) { 3 });
  write_npy (kh, keep, 1, (gsize[]) { 3 });
  g_assert_cmpint (getrlimit (RLIMIT_FSIZE, &old), ==, 0);
  lim = old;
  lim.rlim_cur = 65536;
  signal (SIGXFSZ, SIG_IGN);
  g_assert_cmpint (setrlimit (RLIMIT_FSIZE, &lim), ==, 0);
  status = rpe_test_run_cli (NULL, &err, "compute encode --heads 2 --features 8 --realizations 16 --length 2048 "
                             "--content random -o %s --out-keys %s", qh, kh);
  g_assert_cmpint (setrlimit (RLIMIT_FSIZE, &old), ==, 0);
  g_assert_cmpint (status, ==, 1);
  g_assert_nonnull (strstr (err, ".npy"));
  for (int i = 0; i < 2; i++)
    {
      g_autoptr (RpeTensor) t = read_npy (i == 0 ? qh : kh);

      g_assert_cmpmem (t->data, t->n_elements * sizeof (float), keep, sizeof keep);
    }
  g_assert_cmpuint (count_hidden (dir), ==, 0);

  for (int i = 0; i < 60; i++)
    data[i] = (float) i - 20.5f;
  write_npy (one, data, 2, (gsize[]) { 6, 10 });
  w = rpe_npy_writer_new (two, 2, (gsize[]) { 6, 10 }, FALSE, &error);
  g_assert_no_error (error);
  g_assert_false (rpe_npy_writer_flush (w, &error));    /* nothing appended yet */
  g_assert_nonnull (error);
  g_clear_error (&error);
  g_assert_true (rpe_npy_writer_append (w, data, 60, &error));
  g_assert_true (rpe_npy_writer_flush (w, &error));
  g_assert_false (g_file_test (two, G_FILE_TEST_EXISTS));   /* flushed, not yet renamed */
  g_assert_true (rpe_npy_writer_commit (w, &error));
  g_assert_no_error (error);
  a = file_bytes (one, &la);
  b = file_bytes (two, &lb);
  g_assert_cmpmem (a, la, b, lb);

  w = rpe_npy_writer_new (one, 1, (gsize[]) { 3 }, FALSE, &error);
  g_assert_true (rpe_npy_writer_append (w, keep, 3, &error));
  g_assert_true (rpe_npy_writer_flush (w, &error));
  rpe_npy_writer_abort (w);
  g_clear_pointer (&b, g_free);
  b = file_bytes (one, &lb);
  g_assert_cmpmem (a, la, b, lb);
  g_assert_cmpuint (count_hidden (dir), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_data_func ("/cli-engine/encode-sine", GINT_TO_POINTER (0), test_encode_matches_reference);
  g_test_add_data_func ("/cli-engine/encode-conv", GINT_TO_POINTER (1), test_encode_matches_reference);
  g_test_add_data_func ("/cli-engine/encode-random-bitwise-sine", GINT_TO_POINTER (0), test_encode_random_bitwise);
  g_test_add_data_func ("/cli-engine/encode-random-bitwise-conv", GINT_TO_POINTER (1), test_encode_random_bitwise);
  g_test_add_func ("/cli-engine/encode-outputs-together", test_encode_outputs_together);
  g_test_add_func ("/cli-engine/linear", test_linear_matches_reference);
  g_test_add_func ("/cli-engine/template-streamed", test_template_streamed);
  g_test_add_func ("/cli-engine/npy-writer", test_npy_writer);
  g_test_add_data_func ("/cli-engine/encode-head-sine", GINT_TO_POINTER (0), test_encode_head);
  g_test_add_data_func ("/cli-engine/encode-head-conv", GINT_TO_POINTER (1), test_encode_head);
  g_test_add_func ("/cli-engine/map-reduce", test_map_reduce);
  g_test_add_func ("/cli-engine/attention-map-reduce", test_attention_map_reduce);
  g_test_add_func ("/cli-engine/exact-logits-stream", test_exact_logits_stream);
  g_test_add_func ("/cli-engine/exact-cli-streamed", test_exact_cli_streamed);
  g_test_add_func ("/cli-engine/export-attention-head", test_export_attention_head);
  return g_test_run ();
}

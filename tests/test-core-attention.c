/* test-core-attention.c: row softmax, display transform, APE, streaming rows,
 * against naive double-precision references written here. */
#include "config.h"

#include <glib.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "rpe-attention.h"
#include "rpe-test-utils.h"

static float *
random_floats (GRand  *rand,
               size_t  count,
               double  amp)
{
  float *x = g_new (float, count);

  for (size_t i = 0; i < count; i++)
    x[i] = (float) g_rand_double_range (rand, -amp, amp);
  return x;
}

/* Naive softmax of each N-row of a (maps, N, N) array, in double. */
static double *
naive_softmax (const float *logits,
               size_t       maps,
               size_t       n,
               gboolean     causal)
{
  double *out = g_new0 (double, maps * n * n);

  for (size_t h = 0; h < maps; h++)
    for (size_t m = 0; m < n; m++)
      {
        const float *r = logits + (h * n + m) * n;
        double *o = out + (h * n + m) * n;
        size_t cols = causal ? m + 1 : n;
        double mx = -INFINITY, sum = 0;

        for (size_t j = 0; j < cols; j++)
          mx = MAX (mx, (double) r[j]);
        for (size_t j = 0; j < cols; j++)
          sum += (o[j] = exp ((double) r[j] - mx));
        for (size_t j = 0; j < cols; j++)
          o[j] /= sum;
      }
  return out;
}

static void
test_softmax_vs_naive (void)
{
  const size_t lengths[] = { 1, 2, 5, 33, 300 };
  GRand *rand = g_rand_new_with_seed (1);

  for (size_t li = 0; li < G_N_ELEMENTS (lengths); li++)
    for (int causal = 0; causal < 2; causal++)
      {
        const size_t n = lengths[li], maps = 3;
        float *x = random_floats (rand, maps * n * n, 8.0);
        double *ref = naive_softmax (x, maps, n, causal);

        g_assert_cmpint (rpe_softmax_rows (x, maps, n, causal, NULL), ==, RPE_OK);
        g_assert_cmpfloat (rpe_test_max_abs_err (x, ref, maps * n * n), <, 2e-7);
        for (size_t h = 0; h < maps; h++)
          for (size_t m = 0; m < n; m++)
            {
              double sum = 0;

              for (size_t j = 0; j < n; j++)
                {
                  float a = x[(h * n + m) * n + j];

                  g_assert_true (a >= 0.0f);
                  if (causal && j > m)
                    g_assert_true (a == 0.0f);   /* exact zero, not tiny */
                  sum += a;
                }
              g_assert_cmpfloat_with_epsilon (sum, 1.0, 1e-5);
            }
        g_free (ref);
        g_free (x);
      }
  g_rand_free (rand);
}

static void
test_softmax_extremes (void)
{
  /* Differences of 1e30 and beyond FLT_MAX: no NaN, the limit values. */
  float r1[4] = { 1e30f, -1e30f, 0.0f, 1e30f };
  float r2[3] = { 3e38f, -3e38f, 3e38f };
  float r3[3] = { -INFINITY, 2.0f, -INFINITY };
  float r4[3] = { -INFINITY, -INFINITY, -INFINITY };
  float r5[3] = { INFINITY, 1.0f, INFINITY };
  float r6[3] = { 1.0f, NAN, 0.0f };
  float r7[4] = { -1e30f, 1e30f, 5.0f, 7.0f };  /* causal row 0 of a 2x2 map + row 1 */

  g_assert_cmpint (rpe_softmax_row_block (r1, 1, 4, 0, FALSE), ==, RPE_OK);
  g_assert_cmpfloat_with_epsilon (r1[0], 0.5, 1e-7);
  g_assert_true (r1[1] == 0.0f && r1[2] == 0.0f);
  g_assert_cmpfloat_with_epsilon (r1[3], 0.5, 1e-7);

  g_assert_cmpint (rpe_softmax_row_block (r2, 1, 3, 0, FALSE), ==, RPE_OK);
  g_assert_cmpfloat_with_epsilon (r2[0], 0.5, 1e-7);
  g_assert_true (r2[1] == 0.0f);
  g_assert_cmpfloat_with_epsilon (r2[2], 0.5, 1e-7);

  g_assert_cmpint (rpe_softmax_row_block (r3, 1, 3, 0, FALSE), ==, RPE_OK);
  g_assert_true (r3[0] == 0.0f && r3[1] == 1.0f && r3[2] == 0.0f);

  /* every kept entry -inf, or a +inf entry: logits that overflowed; the softmax's
   * limits (an all-zero row, +inf entries sharing the mass) would be a degenerate
   * map, so they are refused */
  g_assert_cmpint (rpe_softmax_row_block (r4, 1, 3, 0, FALSE), ==, RPE_ERROR_RANGE);
  g_assert_cmpint (rpe_softmax_row_block (r5, 1, 3, 0, FALSE), ==, RPE_ERROR_RANGE);

  g_assert_cmpint (rpe_softmax_row_block (r6, 1, 3, 0, FALSE), ==, RPE_ERROR_NOT_FINITE);

  /* causal: row 0 sees only column 0 (even though column 1 is huge) */
  g_assert_cmpint (rpe_softmax_rows (r7, 1, 2, TRUE, NULL), ==, RPE_OK);
  g_assert_true (r7[0] == 1.0f && r7[1] == 0.0f);
  g_assert_cmpfloat_with_epsilon (r7[2], 1.0 / (1.0 + exp (2.0)), 1e-7);
  g_assert_cmpfloat_with_epsilon (r7[3], 1.0 / (1.0 + exp (-2.0)), 1e-7);

  /* a block starting at absolute row 1 of a causal map masks from column 2 */
  {
    float b[6] = { 1, 1, 100, 1, 1, 1 };

    g_assert_cmpint (rpe_softmax_row_block (b, 2, 3, 1, TRUE), ==, RPE_OK);
    g_assert_cmpfloat_with_epsilon (b[0], 0.5, 1e-7);
    g_assert_true (b[2] == 0.0f);
    g_assert_cmpfloat_with_epsilon (b[5], 1.0 / 3.0, 1e-7);
  }
}

static void
test_display_transform (void)
{
  float a[7] = { 0.0f, 0.02f, 0.01f, 0.001f, 1.0f, -0.5f, 0.5f };

  rpe_attention_display_transform (a, G_N_ELEMENTS (a));
  g_assert_true (a[0] == 0.0f);
  g_assert_cmpfloat_with_epsilon (a[1], 1.0, 1e-6);
  g_assert_cmpfloat_with_epsilon (a[2], pow (0.5, 0.4), 1e-6);
  g_assert_cmpfloat_with_epsilon (a[3], pow (0.001, 0.4) / pow (0.02, 0.4), 1e-6);
  g_assert_true (a[4] == 1.0f && a[6] == 1.0f);
  g_assert_true (a[5] == 0.0f);
}

static void
test_ape_encoding (void)
{
  const size_t dims[] = { 1, 4, 7, 64 };

  for (size_t di = 0; di < G_N_ELEMENTS (dims); di++)
    {
      const size_t n = 50, d = dims[di];
      float *p = g_new (float, n * d);

      g_assert_cmpint (rpe_ape_encoding (n, d, p), ==, RPE_OK);
      for (size_t j = 0; j < d; j++)
        g_assert_true (p[j] == (j % 2 == 0 ? 0.0f : 1.0f));   /* m = 0 */
      for (size_t m = 0; m < n; m++)
        {
          g_assert_cmpfloat_with_epsilon (p[m * d], sin ((double) m), 1e-6);
          if (d > 1)
            g_assert_cmpfloat_with_epsilon (p[m * d + 1], cos ((double) m), 1e-6);
          if (d == 4)
            g_assert_cmpfloat_with_epsilon (p[m * d + 2], sin (m / 100.0), 1e-6);
          for (size_t i = 0; 2 * i < d; i++)
            {
              double ang = m / pow (10000.0, 2.0 * i / d);

              g_assert_cmpfloat_with_epsilon (p[m * d + 2 * i], sin (ang), 1e-6);
              if (2 * i + 1 < d)
                g_assert_cmpfloat_with_epsilon (p[m * d + 2 * i + 1], cos (ang), 1e-6);
            }
        }
      /* For even D, p_m . p_n = sum_i cos(w_i (m - n)): a function of m - n only. */
      if (d % 2 == 0)
        for (size_t m = 0; m < n; m += 7)
          for (size_t j = 0; j < n; j += 5)
            {
              double dot = 0, closed = 0;

              for (size_t t = 0; t < d; t++)
                dot += (double) p[m * d + t] * p[j * d + t];
              for (size_t i = 0; 2 * i < d; i++)
                closed += cos (((double) m - (double) j) / pow (10000.0, 2.0 * i / d));
              g_assert_cmpfloat_with_epsilon (dot, closed, 1e-5 * d);
            }
      g_free (p);
    }
}

/* Naive logits (H, N, N) of the three kinds, in double. */
static double *
naive_logits (RpeLogitsKind kind,
              size_t        n,
              size_t        hc,
              size_t        d,
              const float  *q,
              const float  *k,
              const float  *e,
              gboolean      causal)
{
  double *out = g_new (double, hc * n * n);

  for (size_t h = 0; h < hc; h++)
    for (size_t m = 0; m < n; m++)
      for (size_t j = 0; j < n; j++)
        {
          double s = 0;

          for (size_t t = 0; t < d; t++)
            {
              double qv = q[(m * hc + h) * d + t], kv = k[(j * hc + h) * d + t];

              if (kind == RPE_LOGITS_APE)
                {
                  size_t i2 = t - t % 2;
                  double wm = m / pow (10000.0, (double) i2 / d), wn = j / pow (10000.0, (double) i2 / d);

                  qv += t % 2 == 0 ? sin (wm) : cos (wm);
                  kv += t % 2 == 0 ? sin (wn) : cos (wn);
                }
              s += qv * kv;
              if (kind == RPE_LOGITS_RELATIVE)
                s += qv * e[(m - j + n - 1) * d + t];
            }
          out[(h * n + m) * n + j] = causal && j > m ? -INFINITY : s / sqrt ((double) d);
        }
  return out;
}

static void
test_ape_logits (void)
{
  const size_t n = 37, hc = 2, d = 6;
  GRand *rand = g_rand_new_with_seed (2);
  float *q = random_floats (rand, n * hc * d, 1.0);
  float *k = random_floats (rand, n * hc * d, 1.0);
  float *out = g_new (float, hc * n * n);
  double *ref = naive_logits (RPE_LOGITS_APE, n, hc, d, q, k, NULL, FALSE);

  g_assert_cmpint (rpe_ape_logits (n, hc, d, q, k, out, NULL), ==, RPE_OK);
  g_assert_cmpfloat (rpe_test_max_rel_err (out, ref, hc * n * n, 1e-3), <, 1e-5);
  g_assert_cmpint (rpe_ape_logits (0, hc, d, q, k, out, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_ape_logits (n, hc, d, q, NULL, out, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  q[3] = INFINITY;
  g_assert_cmpint (rpe_ape_logits (n, hc, d, q, k, out, NULL), ==, RPE_ERROR_NOT_FINITE);

  g_free (ref);
  g_free (out);
  g_free (k);
  g_free (q);
  g_rand_free (rand);
}

/* Streaming rows equal the naive full map (and the code's own full map) for
 * every logits kind, blocking and causality. */
static void
test_streaming_rows (void)
{
  const size_t n = 70, hc = 2, d = 4;
  const RpeLogitsKind kinds[] = { RPE_LOGITS_DOT, RPE_LOGITS_APE, RPE_LOGITS_RELATIVE };
  const size_t blocks[] = { 1, 7, 64, 70 };
  GRand *rand = g_rand_new_with_seed (4);
  float *q = random_floats (rand, n * hc * d, 1.5);
  float *k = random_floats (rand, n * hc * d, 1.5);
  float *e = random_floats (rand, (2 * n - 1) * d, 1.5);
  float *rows = g_new (float, n * n);
  float *full = g_new (float, hc * n * n);

  for (size_t ki = 0; ki < G_N_ELEMENTS (kinds); ki++)
    for (int causal = 0; causal < 2; causal++)
      {
        float *lf = g_new (float, hc * n * n);
        double *lref = naive_logits (kinds[ki], n, hc, d, q, k, e, causal);
        double *aref;
        RpeLogitsSpec spec = {
          .kind = kinds[ki], .n = n, .n_heads = hc, .d = d, .q = q, .k = k, .rel = e,
        };

        for (size_t i = 0; i < hc * n * n; i++)
          lf[i] = (float) lref[i];
        aref = naive_softmax (lf, hc, n, causal);
        if (kinds[ki] == RPE_LOGITS_APE)
          {
            g_assert_cmpint (rpe_ape_logits (n, hc, d, q, k, full, NULL), ==, RPE_OK);
            g_assert_cmpint (rpe_softmax_rows (full, hc, n, causal, NULL), ==, RPE_OK);
          }

        for (size_t bi = 0; bi < G_N_ELEMENTS (blocks); bi++)
          for (size_t h = 0; h < hc; h++)
            for (size_t m0 = 0; m0 < n; m0 += blocks[bi])
              {
                size_t b = MIN (blocks[bi], n - m0);

                /* raw logits */
                g_assert_cmpint (rpe_logits_rows (&spec, h, m0, b, causal, rows, NULL), ==, RPE_OK);
                for (size_t i = 0; i < b * n; i++)
                  {
                    double r = lref[(h * n + m0) * n + i];

                    if (isinf (r))
                      g_assert_true (isinf (rows[i]) && rows[i] < 0);
                    else
                      g_assert_cmpfloat_with_epsilon (rows[i], r, 1e-5);
                  }
                /* attention */
                g_assert_cmpint (rpe_attention_rows (&spec, h, m0, b, causal, rows, NULL), ==, RPE_OK);
                g_assert_cmpfloat (rpe_test_max_abs_err (rows, aref + (h * n + m0) * n, b * n), <, 2e-6);
                if (kinds[ki] == RPE_LOGITS_APE)
                  for (size_t i = 0; i < b * n; i++)
                    g_assert_cmpfloat_with_epsilon (rows[i], full[(h * n + m0) * n + i], 2e-6);
                if (causal)
                  for (size_t i = 0; i < b; i++)
                    for (size_t j = m0 + i + 1; j < n; j++)
                      g_assert_true (rows[i * n + j] == 0.0f);
              }
        g_free (aref);
        g_free (lref);
        g_free (lf);
      }

  g_free (full);
  g_free (rows);
  g_free (e);
  g_free (k);
  g_free (q);
  g_rand_free (rand);
}

/* A logits callback with a closed-form softmax: l(m, n) = -alpha |m - n|. */
static RpeStatus
laplace_logits (size_t  m0,
                size_t  n_rows,
                size_t  n_cols,
                float  *out,
                void   *user_data)
{
  double alpha = *(double *) user_data;

  for (size_t i = 0; i < n_rows; i++)
    for (size_t j = 0; j < n_cols; j++)
      out[i * n_cols + j] = (float) (-alpha * fabs ((double) (m0 + i) - (double) j));
  return RPE_OK;
}

static RpeStatus
failing_logits (size_t  m0,
                size_t  n_rows,
                size_t  n_cols,
                float  *out,
                void   *user_data)
{
  return RPE_ERROR_UNSUPPORTED;
}

static void
test_rows_func (void)
{
  const size_t n = 50;
  double alpha = 0.3;
  float *out = g_new (float, n * n);

  for (int causal = 0; causal < 2; causal++)
    for (size_t chunk = 0; chunk < 20; chunk += 6)
      {
        g_assert_cmpint (rpe_attention_rows_func (n, 0, n, chunk, causal, laplace_logits, &alpha,
                                                  out, NULL), ==, RPE_OK);
        for (size_t m = 0; m < n; m++)
          {
            /* closed form: exp(-a|m-n|) / sum over the visible n */
            double z = 0;
            size_t cols = causal ? m + 1 : n;

            for (size_t j = 0; j < cols; j++)
              z += exp (-alpha * fabs ((double) m - (double) j));
            for (size_t j = 0; j < n; j++)
              {
                double want = j < cols ? exp (-alpha * fabs ((double) m - (double) j)) / z : 0.0;
                g_assert_cmpfloat_with_epsilon (out[m * n + j], want, 1e-6);
              }
          }
      }
  g_assert_cmpint (rpe_attention_rows_func (n, 0, n, 0, FALSE, failing_logits, NULL, out, NULL),
                   ==, RPE_ERROR_UNSUPPORTED);
  g_assert_cmpint (rpe_attention_rows_func (n, 0, n, 0, FALSE, NULL, NULL, out, NULL),
                   ==, RPE_ERROR_INVALID_ARGUMENT);
  g_free (out);
}

static void
count_progress (double  fraction,
                void   *user_data)
{
  double *last = user_data;

  g_assert_true (fraction >= *last);   /* monotone */
  *last = fraction;
}

static void
test_monitor (void)
{
  const size_t n = 600;
  float *x = g_new0 (float, 2 * n * n);
  atomic_int cancel = 0;
  double last = 0;
  RpeMonitor monitor = { .cancel = &cancel, .progress = count_progress, .user_data = &last };

  g_assert_cmpint (rpe_softmax_rows (x, 2, n, FALSE, &monitor), ==, RPE_OK);
  g_assert_cmpfloat_with_epsilon (last, 1.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (x[5], 1.0 / n, 1e-9);
  atomic_store (&cancel, 1);
  g_assert_cmpint (rpe_softmax_rows (x, 2, n, FALSE, &monitor), ==, RPE_ERROR_CANCELLED);
  g_assert_cmpint (rpe_ape_logits (n, 2, n / 2, x, x, x, &monitor), ==, RPE_ERROR_CANCELLED);
  g_free (x);
}

/* rpe_exp_f against the correctly rounded exp (double exp rounded to float) over
 * the whole float range of exp, in ulps; and its special values. */
static void
test_exp_vectorised (void)
{
  const size_t count = 2000003;   /* odd: the vector tail is used */
  float *x = g_new (float, count), *y = g_new (float, count);
  double worst_ulp = 0, worst_x = 0, worst_sub = 0;
  const float special[] = { 0.0f, -0.0f, 1.0f, -1.0f, 88.72283f, 88.7229f, 89.0f, 1e30f,
                            -87.3f, -103.0f, -103.97f, -104.5f, -1e30f, INFINITY, -INFINITY, NAN };
  float sy[G_N_ELEMENTS (special)];

  /* a dense grid over [-104, 89] plus random points */
  for (size_t i = 0; i < count; i++)
    x[i] = (float) (-104.0 + 193.0 * (double) i / (double) (count - 1));
  rpe_exp_f (x, y, count);
  for (size_t i = 0; i < count; i++)
    {
      double ref = exp ((double) x[i]);
      float rf = (float) ref;

      if (!isfinite (rf))
        {
          /* beyond FLT_MAX after rounding: +inf, or FLT_MAX right at the edge */
          g_assert_true (y[i] == INFINITY || y[i] >= 3.40e38f);
          continue;
        }
      if (ref < 1.1754943508222875e-38)
        {
          /* subnormal results: absolute error in units of the smallest subnormal */
          double e = fabs ((double) y[i] - ref) / 1.401298464324817e-45;

          worst_sub = MAX (worst_sub, e);
          continue;
        }
      {
        /* ulp of the reference's float binade */
        int ex;
        double ulp, e;

        frexp (ref, &ex);
        ulp = ldexp (1.0, ex - 24);
        e = fabs ((double) y[i] - ref) / ulp;
        if (e > worst_ulp)
          {
            worst_ulp = e;
            worst_x = x[i];
          }
      }
    }
  g_test_message ("rpe_exp_f: max error %.3f ulp (at x = %.6g), subnormal range %.2f x 2^-149",
                  worst_ulp, worst_x, worst_sub);
  g_assert_cmpfloat (worst_ulp, <, 2.0);
  g_assert_cmpfloat (worst_sub, <=, 2.0);

  /* in place gives the same as out of place */
  memcpy (y, x, 1000 * sizeof (float));
  rpe_exp_f (y, y, 1000);
  for (size_t i = 0; i < 1000; i++)
    {
      float one;

      rpe_exp_f (&x[i], &one, 1);
      g_assert_true (one == y[i]);
    }

  rpe_exp_f (special, sy, G_N_ELEMENTS (special));
  g_assert_true (sy[0] == 1.0f && sy[1] == 1.0f);
  g_assert_cmpfloat_with_epsilon (sy[2], M_E, 3e-7);
  g_assert_cmpfloat_with_epsilon (sy[3], 1.0 / M_E, 1e-7);
  g_assert_true (isfinite (sy[4]) && sy[4] > 3.4e38f);
  g_assert_true (sy[5] == INFINITY && sy[6] == INFINITY && sy[7] == INFINITY);
  g_assert_cmpfloat (fabs (sy[8] - exp ((double) special[8])) / exp ((double) special[8]), <, 1e-6);
  g_assert_cmpfloat (fabs (sy[9] - exp ((double) special[9])), <=, 2.9e-45);
  g_assert_true (sy[10] >= 0.0f && sy[10] <= 2.9e-45f);
  g_assert_true (sy[11] == 0.0f && sy[12] == 0.0f);
  g_assert_true (sy[13] == INFINITY && sy[14] == 0.0f && isnan (sy[15]));
  g_free (x);
  g_free (y);
}

/* The threaded, vectorised softmax on a map large enough to be split across
 * workers, with row lengths that leave vector tails and -inf entries, against
 * the naive double softmax; and every blocking of rpe_softmax_row_block agrees
 * exactly with the full-map call (the same kernel on the same rows). */
static void
test_softmax_threaded (void)
{
  const size_t n = 611, maps = 3;   /* 3 x 611 x 611 > 2^18 entries: threaded */
  GRand *rand = g_rand_new_with_seed (7);

  for (int causal = 0; causal < 2; causal++)
    {
      float *x = random_floats (rand, maps * n * n, 30.0);
      float *blocks;
      double *ref;

      for (size_t i = 1; i < maps * n * n; i += 97)
        if (i % n != 0)   /* column 0 stays finite: no all-masked causal row */
          x[i] = -INFINITY;
      x[5 * n] = x[5 * n + 1] = 1e6f;   /* a very peaked row */
      blocks = g_memdup2 (x, maps * n * n * sizeof (float));
      ref = naive_softmax (x, maps, n, causal);
      g_assert_cmpint (rpe_softmax_rows (x, maps, n, causal, NULL), ==, RPE_OK);
      g_assert_cmpfloat (rpe_test_max_abs_err (x, ref, maps * n * n), <, 2e-7);
      g_assert_cmpfloat_with_epsilon (x[5 * n], 0.5, 1e-7);
      for (size_t h = 0; h < maps; h++)
        for (size_t m0 = 0; m0 < n; m0 += 37)
          {
            size_t b = MIN (37, n - m0);

            g_assert_cmpint (rpe_softmax_row_block (blocks + (h * n + m0) * n, b, n, m0, causal), ==, RPE_OK);
          }
      g_assert_true (memcmp (blocks, x, maps * n * n * sizeof (float)) == 0);
      /* a NaN anywhere is reported */
      blocks[maps * n * n - 3] = NAN;
      g_assert_cmpint (rpe_softmax_rows (blocks, maps, n, causal, NULL), ==, RPE_ERROR_NOT_FINITE);
      g_free (ref);
      g_free (x);
      g_free (blocks);
    }
  g_rand_free (rand);
}

/* rpe_attention_rows_parallel on DOT logits (the register-tiled kernel of
 * rpe-attention-dense.c) against softmax (q k^T / sqrt(D)) computed naively in double,
 * for every build of the kernel this CPU can run (RPE_ATTENTION_KERNEL), odd shapes that
 * leave partial register tiles, vector tails and padded key panels, causal or not, one
 * or three threads, whole maps and blocks of rows starting anywhere: each row sums to 1,
 * masked entries are exactly 0, and the rows equal rpe_attention_rows (the sgemm + row
 * softmax reference path) to float rounding. */
static void
test_dense_rows_vs_naive (void)
{
  const char *kernels[] = { "generic", "avx2", "avx512" };
  const size_t shapes[][3] = {   /* N, H, D */
    { 1, 1, 1 }, { 5, 2, 3 }, { 33, 3, 7 }, { 70, 2, 64 }, { 131, 1, 17 }, { 300, 2, 64 },
    { 1536, 1, 16 },   /* an output of 2.4 M floats: written with non-temporal stores */
  };
  const char *threads[] = { "1", "3" };
  GRand *rand = g_rand_new_with_seed (12);

  for (size_t si = 0; si < G_N_ELEMENTS (shapes); si++)
    {
      const size_t n = shapes[si][0], hc = shapes[si][1], d = shapes[si][2];
      float *q = random_floats (rand, n * hc * d, 1.5), *k = random_floats (rand, n * hc * d, 1.5);
      float *out = g_new (float, hc * n * n), *ref_rows = g_new (float, n * n);
      RpeLogitsSpec spec = { .kind = RPE_LOGITS_DOT, .n = n, .n_heads = hc, .d = d, .q = q, .k = k };

      for (int causal = 0; causal < 2; causal++)
        {
          double *lref = naive_logits (RPE_LOGITS_DOT, n, hc, d, q, k, NULL, causal);
          double *aref = g_new (double, hc * n * n);

          /* the naive softmax of the double logits */
          for (size_t row = 0; row < hc * n; row++)
            {
              const double *l = lref + row * n;
              double *a = aref + row * n, mx = -INFINITY, sum = 0;

              for (size_t j = 0; j < n; j++)
                mx = MAX (mx, l[j]);
              for (size_t j = 0; j < n; j++)
                sum += (a[j] = exp (l[j] - mx));
              for (size_t j = 0; j < n; j++)
                a[j] /= sum;
            }
          for (size_t ki = 0; ki < G_N_ELEMENTS (kernels); ki++)
            for (size_t ti = 0; ti < G_N_ELEMENTS (threads); ti++)
              {
                g_setenv ("RPE_ATTENTION_KERNEL", kernels[ki], TRUE);
                g_setenv ("RPE_NUM_THREADS", threads[ti], TRUE);
                for (size_t i = 0; i < hc * n * n; i++)
                  out[i] = NAN;
                for (size_t h = 0; h < hc; h++)
                  g_assert_cmpint (rpe_attention_rows_parallel (&spec, h, 0, n, causal, out + h * n * n, NULL),
                                   ==, RPE_OK);
                g_assert_cmpfloat (rpe_test_max_abs_err (out, aref, hc * n * n), <, 2e-6);
                for (size_t row = 0; row < hc * n; row++)
                  {
                    double sum = 0;

                    for (size_t j = 0; j < n; j++)
                      {
                        if (causal && j > row % n)
                          g_assert_true (out[row * n + j] == 0.0f);
                        sum += out[row * n + j];
                      }
                    g_assert_cmpfloat_with_epsilon (sum, 1.0, 1e-5);
                  }
                /* blocks of rows starting anywhere give the same rows as the whole map, and
                 * the rows of the reference path */
                for (size_t h = 0; h < hc; h++)
                  for (size_t m0 = 0; m0 < n; m0 += 29)
                    {
                      size_t b = MIN (29, n - m0);

                      g_assert_cmpint (rpe_attention_rows_parallel (&spec, h, m0, b, causal, ref_rows, NULL), ==,
                                       RPE_OK);
                      g_assert_true (memcmp (ref_rows, out + (h * n + m0) * n, b * n * sizeof (float)) == 0);
                      g_assert_cmpint (rpe_attention_rows (&spec, h, m0, b, causal, ref_rows, NULL), ==, RPE_OK);
                      for (size_t i = 0; i < b * n; i++)
                        g_assert_cmpfloat_with_epsilon (ref_rows[i], out[(h * n + m0) * n + i], 2e-6);
                    }
              }
          g_free (aref);
          g_free (lref);
        }
      /* logits that overflow (+inf, NaN from inf - inf) go through the reference path */
      for (size_t i = 0; i < n * hc * d; i += 3)
        q[i] *= 1e37f;
      for (size_t ki = 0; ki < G_N_ELEMENTS (kernels); ki++)
        {
          g_setenv ("RPE_ATTENTION_KERNEL", kernels[ki], TRUE);
          for (size_t h = 0; h < hc; h++)
            for (int causal = 0; causal < 2; causal++)
              {
                RpeStatus st = rpe_attention_rows (&spec, h, 0, n, causal, ref_rows, NULL);

                g_assert_cmpint (rpe_attention_rows_parallel (&spec, h, 0, n, causal, out, NULL), ==, st);
                if (st == RPE_OK)
                  for (size_t i = 0; i < n * n; i++)
                    g_assert_true (out[i] == ref_rows[i] || fabsf (out[i] - ref_rows[i]) < 2e-6f);
              }
        }
      g_free (ref_rows);
      g_free (out);
      g_free (k);
      g_free (q);
    }
  g_unsetenv ("RPE_ATTENTION_KERNEL");
  g_unsetenv ("RPE_NUM_THREADS");
  g_rand_free (rand);
}

static RpeStatus
huge_logits (size_t m0, size_t n_rows, size_t n_cols, float *out, void *user_data)
{
  /* what an exact SPE path gives for logits beyond float32: +inf, -inf and NaN */
  for (size_t i = 0; i < n_rows * n_cols; i++)
    out[i] = i % 3 == 0 ? INFINITY : i % 3 == 1 ? 1.0f : -INFINITY;
  return RPE_OK;
}

/* Finite queries and keys whose logits overflow float32 (1e30 each: q.k = 1e60 D)
 * give an error that says so, in every attention path, never a uniform or an
 * all-zero map (the softmax's limit of +inf logits was 1/N everywhere). */
static void
test_overflow_refused (void)
{
  const gsize n = 40, H = 2, D = 8;
  g_autofree float *q = g_new (float, n * H * D);
  g_autofree float *out = g_new (float, n * n);
  RpeLogitsSpec spec = { 0 };

  for (gsize i = 0; i < n * H * D; i++)
    q[i] = i % 2 ? 1e30f : -1e30f;
  spec.kind = RPE_LOGITS_DOT;
  spec.n = n;
  spec.n_heads = H;
  spec.d = D;
  spec.q = q;
  spec.k = q;
  for (int causal = 0; causal < 2; causal++)
    {
      g_assert_cmpint (rpe_logits_rows (&spec, 1, 0, n, causal, out, NULL), ==, RPE_ERROR_RANGE);
      g_assert_cmpint (rpe_attention_rows (&spec, 1, 0, n, causal, out, NULL), ==, RPE_ERROR_RANGE);
      g_assert_cmpint (rpe_attention_rows_parallel (&spec, 1, 0, n, causal, out, NULL), ==, RPE_ERROR_RANGE);
      g_assert_cmpint (rpe_attention_rows_parallel (&spec, 0, 8, 16, causal, out, NULL), ==, RPE_ERROR_RANGE);
      g_assert_cmpint (rpe_attention_rows_func (n, 0, 4, 0, causal, huge_logits, NULL, out, NULL), ==,
                       RPE_ERROR_RANGE);
    }
  /* and the message says what is true */
  g_assert_nonnull (strstr (rpe_status_to_string (RPE_ERROR_RANGE), "too large"));
  g_assert_null (strstr (rpe_status_to_string (RPE_ERROR_RANGE), "NaN"));
  /* large but representable logits stay a distribution */
  for (gsize i = 0; i < n * H * D; i++)
    q[i] = 1e3f;
  g_assert_cmpint (rpe_attention_rows_parallel (&spec, 1, 0, n, FALSE, out, NULL), ==, RPE_OK);
  g_assert_cmpfloat_with_epsilon (out[0] * n, 1.0, 1e-5);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/core/attention/softmax-vs-naive", test_softmax_vs_naive);
  g_test_add_func ("/core/attention/softmax-extremes", test_softmax_extremes);
  g_test_add_func ("/core/attention/softmax-threaded", test_softmax_threaded);
  g_test_add_func ("/core/attention/exp-vectorised", test_exp_vectorised);
  g_test_add_func ("/core/attention/display-transform", test_display_transform);
  g_test_add_func ("/core/attention/ape-encoding", test_ape_encoding);
  g_test_add_func ("/core/attention/ape-logits", test_ape_logits);
  g_test_add_func ("/core/attention/streaming-rows", test_streaming_rows);
  g_test_add_func ("/core/attention/rows-func", test_rows_func);
  g_test_add_func ("/core/attention/monitor", test_monitor);
  g_test_add_func ("/core/attention/dense-rows-vs-naive", test_dense_rows_vs_naive);
  g_test_add_func ("/core/attention/overflow-refused", test_overflow_refused);
  return g_test_run ();
}

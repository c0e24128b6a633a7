/* test-core-linear.c: feature maps and linear attention against naive
 * double-precision quadratic references written here. */
#include "config.h"

#include <glib.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "rpe-gemm-private.h"
#include "rpe-linear-attention.h"
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

typedef struct
{
  const char        *name;
  RpeFeatureMap      map;
  RpeFeatureOptions  opts;
} MapCase;

static const MapCase map_cases[] = {
  { "relu", RPE_FEATURE_RELU, { 0 } },
  { "elu1", RPE_FEATURE_ELU1, { 0 } },
  { "exp", RPE_FEATURE_EXP, { 0 } },
  { "performer", RPE_FEATURE_PERFORMER, { .seed = 7, .m = 16 } },
  { "performer-orth", RPE_FEATURE_PERFORMER, { .seed = 9, .m = 15, .orthogonal = true } },
  { "dpfp1", RPE_FEATURE_DPFP, { .nu = 1 } },
  { "dpfp3", RPE_FEATURE_DPFP, { .nu = 3 } },
};

/* Naive unshifted phi of one row x (F) into out; returns M.  w is W (m, F) for Performer. */
static size_t
naive_phi (const MapCase *mc,
           const float   *x,
           size_t         f,
           const float   *w,
           double        *out)
{
  switch (mc->map)
    {
    case RPE_FEATURE_RELU:
      for (size_t i = 0; i < f; i++)
        out[i] = MAX (0.0, (double) x[i]);
      return f;
    case RPE_FEATURE_ELU1:
      for (size_t i = 0; i < f; i++)
        out[i] = x[i] > 0 ? x[i] + 1.0 : exp ((double) x[i]);
      return f;
    case RPE_FEATURE_EXP:
      for (size_t i = 0; i < f; i++)
        out[i] = exp ((double) x[i]);
      return f;
    case RPE_FEATURE_PERFORMER:
      {
        double sq = 0;

        for (size_t i = 0; i < f; i++)
          sq += (double) x[i] * x[i];
        for (size_t j = 0; j < mc->opts.m; j++)
          {
            double dot = 0;

            for (size_t i = 0; i < f; i++)
              dot += (double) w[j * f + i] * x[i];
            out[j] = exp (dot - sq / 2) / sqrt ((double) mc->opts.m);
          }
        return mc->opts.m;
      }
    case RPE_FEATURE_DPFP:
      {
        double *xp = g_new (double, 2 * f);

        for (size_t i = 0; i < f; i++)
          {
            xp[i] = MAX (0.0, (double) x[i]);
            xp[f + i] = MAX (0.0, -(double) x[i]);
          }
        for (size_t j = 1; j <= mc->opts.nu; j++)
          for (size_t i = 0; i < 2 * f; i++)
            out[(j - 1) * 2 * f + i] = xp[i] * xp[(i + j) % (2 * f)];
        g_free (xp);
        return 2 * f * mc->opts.nu;
      }
    default:
      g_assert_not_reached ();
    }
  return 0;
}

/* Naive phi for all rows (N, H, M). */
static double *
naive_phi_all (const MapCase *mc,
               const float   *x,
               size_t         n,
               size_t         hc,
               size_t         f,
               size_t        *out_m)
{
  float *w = NULL;
  size_t m = mc->map == RPE_FEATURE_PERFORMER ? mc->opts.m
           : mc->map == RPE_FEATURE_DPFP ? 2 * f * mc->opts.nu : f;
  double *phi = g_new (double, n * hc * m);

  if (mc->map == RPE_FEATURE_PERFORMER)
    {
      w = g_new (float, m * f);
      g_assert_cmpint (rpe_performer_matrix (&mc->opts, f, w), ==, RPE_OK);
    }
  for (size_t r = 0; r < n * hc; r++)
    g_assert_cmpuint (naive_phi (mc, x + r * f, f, w, phi + r * m), ==, m);
  g_free (w);
  *out_m = m;
  return phi;
}

/* The quadratic form: Y = (A / rowsum(A)) V, A = phi(Q) phi(K)^T (masked), zero rows -> 0. */
static double *
naive_quadratic (const double *pq,
                 const double *pk,
                 const float  *v,
                 size_t        n,
                 size_t        hc,
                 size_t        m,
                 size_t        dv,
                 gboolean      causal,
                 double       *amap)   /* (H, N, N) row-normalised, may be NULL */
{
  double *y = g_new0 (double, n * hc * dv);
  double *row = g_new (double, n);

  for (size_t h = 0; h < hc; h++)
    for (size_t i = 0; i < n; i++)
      {
        double den = 0;
        size_t cols = causal ? i + 1 : n;

        for (size_t j = 0; j < n; j++)
          {
            double a = 0;

            if (j < cols)
              for (size_t t = 0; t < m; t++)
                a += pq[(i * hc + h) * m + t] * pk[(j * hc + h) * m + t];
            row[j] = a;
            den += a;
          }
        for (size_t j = 0; j < n; j++)
          {
            double a = den != 0 ? row[j] / den : 0;

            if (amap != NULL)
              amap[(h * n + i) * n + j] = a;
            for (size_t t = 0; t < dv; t++)
              y[(i * hc + h) * dv + t] += a * v[(j * hc + h) * dv + t];
          }
      }
  g_free (row);
  return y;
}

static void
test_linear_vs_quadratic (void)
{
  const size_t lengths[] = { 1, 9, 300 };
  GRand *rand = g_rand_new_with_seed (21);

  for (size_t ci = 0; ci < G_N_ELEMENTS (map_cases); ci++)
    for (size_t li = 0; li < G_N_ELEMENTS (lengths); li++)
      for (int causal = 0; causal < 2; causal++)
        {
          const MapCase *mc = &map_cases[ci];
          const size_t n = lengths[li], hc = 2, f = 5, dv = 3;
          float *q = random_floats (rand, n * hc * f, 1.0);
          float *k = random_floats (rand, n * hc * f, 1.0);
          float *v = random_floats (rand, n * hc * dv, 1.0);
          float *y = g_new (float, n * hc * dv);
          size_t m, m_api;
          double *pq = naive_phi_all (mc, q, n, hc, f, &m);
          double *pk = naive_phi_all (mc, k, n, hc, f, &m);
          double *amap = g_new (double, hc * n * n);
          double *yref = naive_quadratic (pq, pk, v, n, hc, m, dv, causal, amap);
          float *fq = g_new (float, n * hc * m), *fk = g_new (float, n * hc * m);
          float *a = g_new (float, hc * n * n);
          double err;

          g_test_message ("%s n=%zu causal=%d", mc->name, n, causal);
          g_assert_cmpint (rpe_feature_map_dim (mc->map, &mc->opts, f, &m_api), ==, RPE_OK);
          g_assert_cmpuint (m_api, ==, m);

          g_assert_cmpint (rpe_linear_attention_qkv (mc->map, &mc->opts, n, hc, f, dv, q, k, v, causal, y, NULL),
                           ==, RPE_OK);
          err = rpe_test_max_rel_err (y, yref, n * hc * dv, 1e-3);
          g_test_message ("  max rel err vs quadratic %.2e", err);
          g_assert_cmpfloat (err, <, 2e-5);

          /* implied map from the API's own features: rows sum to 1 (or are 0), equal the naive map */
          g_assert_cmpint (rpe_feature_map_apply (mc->map, &mc->opts, RPE_FEATURE_QUERY, n, hc, f, q, fq, NULL), ==, RPE_OK);
          g_assert_cmpint (rpe_feature_map_apply (mc->map, &mc->opts, RPE_FEATURE_KEY, n, hc, f, k, fk, NULL), ==, RPE_OK);
          g_assert_cmpint (rpe_linear_attention_map (n, hc, m, fq, fk, causal, a, NULL), ==, RPE_OK);
          g_assert_cmpfloat (rpe_test_max_abs_err (a, amap, hc * n * n), <, 2e-6);
          for (size_t r = 0; r < hc * n; r++)
            {
              double sum = 0, sum_ref = 0;

              for (size_t j = 0; j < n; j++)
                {
                  sum += a[r * n + j];
                  sum_ref += amap[r * n + j];
                  if (causal && j > r % n)
                    g_assert_true (a[r * n + j] == 0.0f);
                }
              g_assert_cmpfloat_with_epsilon (sum, sum_ref > 0.5 ? 1.0 : 0.0, 1e-5);
            }
          /* streamed rows of the implied map equal the full map */
          if (n > 3)
            {
              float *rows = g_new (float, n * n);

              g_assert_cmpint (rpe_linear_attention_map_rows (n, hc, m, fq, fk, causal, 1, 2, n - 3, rows, NULL),
                               ==, RPE_OK);
              for (size_t i = 0; i < (n - 3) * n; i++)
                g_assert_cmpfloat_with_epsilon (rows[i], a[(n + 2) * n + i], 1e-6);
              g_free (rows);
            }

          g_free (a);
          g_free (fk);
          g_free (fq);
          g_free (yref);
          g_free (amap);
          g_free (pk);
          g_free (pq);
          g_free (y);
          g_free (v);
          g_free (k);
          g_free (q);
        }
  g_rand_free (rand);
}

/* The features themselves: exact for relu / elu+1 / DPFP, equal up to the
 * documented shift (per row for queries, per head for keys) for exp / Performer. */
static void
test_feature_values (void)
{
  GRand *rand = g_rand_new_with_seed (8);
  const size_t n = 20, hc = 3, f = 4;
  float *x = random_floats (rand, n * hc * f, 2.0);

  for (size_t ci = 0; ci < G_N_ELEMENTS (map_cases); ci++)
    for (int role = 0; role < 2; role++)
      {
        const MapCase *mc = &map_cases[ci];
        size_t m;
        double *ref = naive_phi_all (mc, x, n, hc, f, &m);
        float *phi = g_new (float, n * hc * m);
        gboolean shifted = mc->map == RPE_FEATURE_EXP || mc->map == RPE_FEATURE_PERFORMER;

        g_assert_cmpint (rpe_feature_map_apply (mc->map, &mc->opts, role, n, hc, f, x, phi, NULL), ==, RPE_OK);
        if (!shifted)
          g_assert_cmpfloat (rpe_test_max_rel_err (phi, ref, n * hc * m, 1e-3), <, 1e-6);
        else if (role == RPE_FEATURE_QUERY)
          for (size_t r = 0; r < n * hc; r++)
            {
              /* phi = ref * c_r: the ratio is constant along the row, and the row's max is 1 / sqrt(m) or 1 */
              double c = phi[r * m] / ref[r * m], mx = 0;

              for (size_t j = 0; j < m; j++)
                {
                  g_assert_cmpfloat_with_epsilon (phi[r * m + j] / ref[r * m + j], c, 1e-5 * c);
                  mx = MAX (mx, phi[r * m + j]);
                }
              g_assert_cmpfloat_with_epsilon (mx, mc->map == RPE_FEATURE_EXP ? 1.0 : 1.0 / sqrt ((double) m), 1e-6);
            }
        else
          for (size_t h = 0; h < hc; h++)
            {
              double c = phi[h * m] / ref[h * m];

              for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < m; j++)
                  {
                    size_t idx = (i * hc + h) * m + j;
                    g_assert_cmpfloat_with_epsilon (phi[idx] / ref[idx], c, 1e-5 * c);
                  }
            }
        g_free (phi);
        g_free (ref);
      }
  g_free (x);
  g_rand_free (rand);
}

/* exp features: a constant added to a query row, or to every key of a head,
 * leaves the output unchanged -- even when e^(x + c) overflows float. */
static void
test_exp_shift_invariance (void)
{
  const size_t n = 40, hc = 2, f = 6, dv = 4;
  GRand *rand = g_rand_new_with_seed (12);
  float *q = random_floats (rand, n * hc * f, 1.0);
  float *k = random_floats (rand, n * hc * f, 1.0);
  float *v = random_floats (rand, n * hc * dv, 1.0);
  float *y0 = g_new (float, n * hc * dv), *y1 = g_new (float, n * hc * dv);
  double *ref = g_new (double, n * hc * dv);

  for (int causal = 0; causal < 2; causal++)
    {
      float *q2 = g_memdup2 (q, n * hc * f * sizeof (float));
      float *k2 = g_memdup2 (k, n * hc * f * sizeof (float));

      g_assert_cmpint (rpe_linear_attention_qkv (RPE_FEATURE_EXP, NULL, n, hc, f, dv, q, k, v, causal, y0, NULL), ==, RPE_OK);
      for (size_t i = 0; i < n * hc * dv; i++)
        ref[i] = y0[i];
      for (size_t i = 0; i < n; i++)
        for (size_t t = 0; t < f; t++)
          {
            q2[(i * hc + 0) * f + t] += 200.0f + (float) i;   /* per-row constant, head 0 */
            k2[(i * hc + 1) * f + t] += 150.0f;               /* per-head constant, head 1 */
          }
      g_assert_cmpint (rpe_linear_attention_qkv (RPE_FEATURE_EXP, NULL, n, hc, f, dv, q2, k2, v, causal, y1, NULL), ==, RPE_OK);
      g_assert_cmpfloat (rpe_test_max_rel_err (y1, ref, n * hc * dv, 1e-3), <, 1e-4);
      g_free (k2);
      g_free (q2);
    }
  g_free (ref);
  g_free (y1);
  g_free (y0);
  g_free (v);
  g_free (k);
  g_free (q);
  g_rand_free (rand);
}

/* relu features with disjoint supports: zero denominators give 0, never NaN. */
static void
test_zero_denominator (void)
{
  const size_t n = 4, f = 2, dv = 2;
  const float q[8] = { 1, 1,  -1, -1,  1, 0,  -2, -3 };  /* rows 1 and 3 vanish under relu */
  const float k[8] = { 1, 2,   3, 1,   0, 1,   1, 1 };
  const float v[8] = { 1, 2,   3, 4,   5, 6,   7, 8 };
  float y[8], a[16];
  float pq[8], pk[8];

  for (int causal = 0; causal < 2; causal++)
    {
      g_assert_cmpint (rpe_linear_attention_qkv (RPE_FEATURE_RELU, NULL, n, 1, f, dv, q, k, v, causal, y, NULL), ==, RPE_OK);
      g_assert_true (y[2] == 0.0f && y[3] == 0.0f && y[6] == 0.0f && y[7] == 0.0f);
      g_assert_cmpfloat_with_epsilon (y[0], causal ? 1.0 : (3 * 1 + 4 * 3 + 1 * 5 + 2 * 7) / 10.0, 1e-6);
    }
  g_assert_cmpint (rpe_feature_map_apply (RPE_FEATURE_RELU, NULL, RPE_FEATURE_QUERY, n, 1, f, q, pq, NULL), ==, RPE_OK);
  g_assert_cmpint (rpe_feature_map_apply (RPE_FEATURE_RELU, NULL, RPE_FEATURE_KEY, n, 1, f, k, pk, NULL), ==, RPE_OK);
  g_assert_cmpint (rpe_linear_attention_map (n, 1, f, pq, pk, FALSE, a, NULL), ==, RPE_OK);
  for (size_t j = 0; j < n; j++)
    g_assert_true (a[4 + j] == 0.0f && a[12 + j] == 0.0f);
}

/* Performer: E[phi(q) . phi(k)] = exp(q . k) (unshifted features built from
 * the API's W); orthogonal blocks are orthogonal; rows look N(0, I). */
static void
test_performer_statistics (void)
{
  const size_t f = 8, m = 40000;
  float *w = g_new (float, m * f);
  float q[8], k[8];
  GRand *rand = g_rand_new_with_seed (33);

  for (size_t t = 0; t < f; t++)
    {
      q[t] = (float) g_rand_double_range (rand, -0.35, 0.35);
      k[t] = (float) g_rand_double_range (rand, -0.35, 0.35);
    }

  for (int orth = 0; orth < 2; orth++)
    {
      RpeFeatureOptions opts = { .seed = 99, .m = m, .orthogonal = orth };
      double qq = 0, kk = 0, qk = 0, sum = 0, sum2 = 0, mean, se, norm2 = 0, entry_mean = 0;

      g_assert_cmpint (rpe_performer_matrix (&opts, f, w), ==, RPE_OK);
      for (size_t t = 0; t < f; t++)
        {
          qq += q[t] * q[t];
          kk += k[t] * k[t];
          qk += q[t] * k[t];
        }
      for (size_t j = 0; j < m; j++)
        {
          double wq = 0, wk = 0, s;

          for (size_t t = 0; t < f; t++)
            {
              wq += (double) w[j * f + t] * q[t];
              wk += (double) w[j * f + t] * k[t];
              norm2 += (double) w[j * f + t] * w[j * f + t];
              entry_mean += w[j * f + t];
            }
          s = exp (wq - qq / 2) * exp (wk - kk / 2);
          sum += s;
          sum2 += s * s;
        }
      mean = sum / m;
      se = sqrt ((sum2 / m - mean * mean) / m);
      g_test_message ("orth=%d mean %.5f target %.5f se %.5f", orth, mean, exp (qk), se);
      /* 5 standard errors (iid estimate; orthogonal features only reduce the variance) */
      g_assert_cmpfloat (fabs (mean - exp (qk)), <, 5 * se);
      /* E|w|^2 = F: relative se sqrt(2/F)/sqrt(m) ~ 0.0025 */
      g_assert_cmpfloat_with_epsilon (norm2 / m, (double) f, 0.02 * f);
      g_assert_cmpfloat_with_epsilon (entry_mean / (m * f), 0.0, 0.01);

      if (orth)
        for (size_t b0 = 0; b0 < 5 * f; b0 += f)
          for (size_t i = b0; i < b0 + f; i++)
            for (size_t j = b0; j < i; j++)
              {
                double dot = 0, ni = 0, nj = 0;

                for (size_t t = 0; t < f; t++)
                  {
                    dot += (double) w[i * f + t] * w[j * f + t];
                    ni += (double) w[i * f + t] * w[i * f + t];
                    nj += (double) w[j * f + t] * w[j * f + t];
                  }
                g_assert_cmpfloat (fabs (dot) / sqrt (ni * nj), <, 1e-5);
              }
    }

  /* Deterministic in the seed, and the seed matters. */
  {
    RpeFeatureOptions a = { .seed = 1, .m = 10 }, b = { .seed = 2, .m = 10 };
    float wa[80], wa2[80], wb[80];

    g_assert_cmpint (rpe_performer_matrix (&a, f, wa), ==, RPE_OK);
    g_assert_cmpint (rpe_performer_matrix (&a, f, wa2), ==, RPE_OK);
    g_assert_cmpint (rpe_performer_matrix (&b, f, wb), ==, RPE_OK);
    g_assert_true (memcmp (wa, wa2, sizeof wa) == 0);
    g_assert_true (memcmp (wa, wb, sizeof wa) != 0);
  }
  g_free (w);
  g_rand_free (rand);
}

/* Performer linear attention approximates softmax attention, error ~ 1/sqrt(m). */
static void
test_performer_approximates_softmax (void)
{
  const size_t n = 24, f = 4, dv = 2;
  GRand *rand = g_rand_new_with_seed (44);
  float *q = random_floats (rand, n * f, 0.5);
  float *k = random_floats (rand, n * f, 0.5);
  float *v = random_floats (rand, n * dv, 1.0);
  double *ref = g_new0 (double, n * dv);
  float *y = g_new (float, n * dv);
  double errs[2];
  const size_t ms[2] = { 256, 16384 };

  for (size_t i = 0; i < n; i++)
    {
      double z = 0;

      for (size_t j = 0; j < n; j++)
        {
          double d = 0, e;

          for (size_t t = 0; t < f; t++)
            d += (double) q[i * f + t] * k[j * f + t];
          e = exp (d);
          z += e;
          for (size_t t = 0; t < dv; t++)
            ref[i * dv + t] += e * v[j * dv + t];
        }
      for (size_t t = 0; t < dv; t++)
        ref[i * dv + t] /= z;
    }
  for (int mi = 0; mi < 2; mi++)
    {
      RpeFeatureOptions opts = { .seed = 5, .m = ms[mi], .orthogonal = true };

      g_assert_cmpint (rpe_linear_attention_qkv (RPE_FEATURE_PERFORMER, &opts, n, 1, f, dv, q, k, v, FALSE, y, NULL),
                       ==, RPE_OK);
      errs[mi] = rpe_test_max_abs_err (y, ref, n * dv);
      g_test_message ("performer m=%zu max abs err vs softmax %.5f", ms[mi], errs[mi]);
    }
  /* outputs are O(0.3); at m = 16384 the error is well under 1/sqrt(m) scale x few */
  g_assert_cmpfloat (errs[1], <, 0.03);
  g_assert_cmpfloat (errs[1], <, errs[0]);

  g_free (y);
  g_free (ref);
  g_free (v);
  g_free (k);
  g_free (q);
  g_rand_free (rand);
}

static void
record_progress (double  fraction,
                 void   *user_data)
{
  double *last = user_data;

  g_assert_true (fraction >= *last && fraction <= 1.0);   /* monotone within [0, 1] */
  *last = fraction;
}

static void
test_monitor (void)
{
  const size_t n = 700, hc = 2, f = 4;
  GRand *rand = g_rand_new_with_seed (2);
  float *q = random_floats (rand, n * hc * f, 1.0);
  float *y = g_new (float, n * hc * f);
  RpeFeatureOptions opts = { .seed = 1, .m = 8 };

  for (int causal = 0; causal < 2; causal++)
    {
      double last = 0;
      RpeMonitor monitor = { .progress = record_progress, .user_data = &last };

      g_assert_cmpint (rpe_linear_attention_qkv (RPE_FEATURE_PERFORMER, &opts, n, hc, f, f, q, q, q, causal, y, &monitor),
                       ==, RPE_OK);
      g_assert_cmpfloat_with_epsilon (last, 1.0, 1e-12);
    }
  g_free (y);
  g_free (q);
  g_rand_free (rand);
}

static void
test_errors (void)
{
  float x[8] = { 0 }, phi[64], y[8];
  RpeFeatureOptions opts = { .m = 0, .nu = 0 };
  size_t m;
  atomic_int cancel = 1;
  RpeMonitor monitor = { .cancel = &cancel };

  g_assert_cmpint (rpe_feature_map_dim (RPE_FEATURE_PERFORMER, &opts, 4, &m), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_feature_map_dim (RPE_FEATURE_DPFP, &opts, 4, &m), ==, RPE_ERROR_INVALID_ARGUMENT);
  opts.nu = 8;
  g_assert_cmpint (rpe_feature_map_dim (RPE_FEATURE_DPFP, &opts, 4, &m), ==, RPE_ERROR_INVALID_ARGUMENT);
  opts.nu = 7;
  g_assert_cmpint (rpe_feature_map_dim (RPE_FEATURE_DPFP, &opts, 4, &m), ==, RPE_OK);
  g_assert_cmpuint (m, ==, 56);
  g_assert_cmpint (rpe_feature_map_dim (RPE_FEATURE_PERFORMER, NULL, 4, &m), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_feature_map_dim ((RpeFeatureMap) 42, NULL, 4, &m), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_feature_map_apply (RPE_FEATURE_RELU, NULL, RPE_FEATURE_QUERY, 0, 1, 4, x, phi, NULL),
                   ==, RPE_ERROR_INVALID_ARGUMENT);
  x[3] = NAN;
  g_assert_cmpint (rpe_feature_map_apply (RPE_FEATURE_RELU, NULL, RPE_FEATURE_QUERY, 2, 1, 4, x, phi, NULL),
                   ==, RPE_ERROR_NOT_FINITE);
  x[3] = 0;
  g_assert_cmpint (rpe_feature_map_apply (RPE_FEATURE_EXP, NULL, RPE_FEATURE_QUERY, 2, 1, 4, x, phi, &monitor),
                   ==, RPE_ERROR_CANCELLED);
  g_assert_cmpint (rpe_linear_attention (2, 1, 4, 4, x, x, x, FALSE, y, &monitor), ==, RPE_ERROR_CANCELLED);
  g_assert_cmpint (rpe_linear_attention (2, 1, 4, 4, x, x, x, TRUE, y, &monitor), ==, RPE_ERROR_CANCELLED);
  g_assert_cmpint (rpe_linear_attention (2, 1, 4, 0, x, x, x, TRUE, y, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_linear_attention ((size_t) 1 << 62, 4, 4, 4, x, x, x, TRUE, y, NULL), ==, RPE_ERROR_OVERFLOW);
  g_assert_cmpint (rpe_linear_attention_map_rows (2, 1, 4, x, x, FALSE, 0, 1, 2, phi, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
}

/* rpe_linear_attention_qkv processes the row-local feature maps (relu, elu1,
 * dpfp) in chunks of 2048 rows, never forming all N features: at N = 4500 (three
 * chunks, the last one partial and not a multiple of the 64-row causal block)
 * it must still equal the quadratic form in double, causal or not. */
static void
test_qkv_chunked (void)
{
  const size_t n = 4500, hc = 2, f = 4, dv = 3;
  const size_t cases[] = { 0, 1, 6 };   /* relu, elu1, dpfp3 in map_cases */
  GRand *rand = g_rand_new_with_seed (31);

  for (size_t ci = 0; ci < G_N_ELEMENTS (cases); ci++)
    for (int causal = 0; causal < 2; causal++)
      {
        const MapCase *mc = &map_cases[cases[ci]];
        float *q = random_floats (rand, n * hc * f, 1.0);
        float *k = random_floats (rand, n * hc * f, 1.0);
        float *v = random_floats (rand, n * hc * dv, 1.0);
        float *y = g_new (float, n * hc * dv);
        size_t m;
        double *pq = naive_phi_all (mc, q, n, hc, f, &m);
        double *pk = naive_phi_all (mc, k, n, hc, f, &m);
        double *yref = naive_quadratic (pq, pk, v, n, hc, m, dv, causal, NULL);
        double err;

        g_assert_cmpint (rpe_linear_attention_qkv (mc->map, &mc->opts, n, hc, f, dv, q, k, v, causal, y, NULL),
                         ==, RPE_OK);
        err = rpe_test_max_rel_err (y, yref, n * hc * dv, 1e-3);
        g_test_message ("qkv chunked %s causal=%d: max rel err %.3g", mc->name, causal, err);
        g_assert_cmpfloat (err, <, 2e-5);
        g_free (q); g_free (k); g_free (v); g_free (y); g_free (pq); g_free (pk); g_free (yref);
      }
  g_rand_free (rand);
}

/* ---- the fused non-causal path (relu, elu1) against direct sums ---- */

/* y (N, H, Dv) in double from direct sums: KV_h = sum_n phi(k_n) v_n^T, z_h = sum_n phi(k_n)
 * (over n <= m when causal), y_m = phi(q_m)^T KV_h / (phi(q_m) . z_h), 0 for a zero
 * denominator.  O(N H M Dv): no N x N form. */
static double *
direct_linear (bool         elu1,
               const float *q,
               const float *k,
               const float *v,
               size_t       n,
               size_t       hc,
               size_t       m,
               size_t       dv,
               bool         causal)
{
  double *y = g_new0 (double, n * hc * dv), *kv = g_new (double, m * dv), *z = g_new (double, m);
  double *pk = g_new (double, m), *pq = g_new (double, m);
  const MapCase *mc = &map_cases[elu1 ? 1 : 0];

  for (size_t h = 0; h < hc; h++)
    {
      memset (kv, 0, m * dv * sizeof (double));
      memset (z, 0, m * sizeof (double));
      for (int pass = causal ? 1 : 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++)
          {
            if (pass == 0 || causal)
              {
                naive_phi (mc, k + (i * hc + h) * m, m, NULL, pk);
                for (size_t j = 0; j < m; j++)
                  {
                    z[j] += pk[j];
                    for (size_t t = 0; t < dv; t++)
                      kv[j * dv + t] += pk[j] * v[(i * hc + h) * dv + t];
                  }
              }
            if (pass == 1)
              {
                double den = 0;

                naive_phi (mc, q + (i * hc + h) * m, m, NULL, pq);
                for (size_t j = 0; j < m; j++)
                  den += pq[j] * z[j];
                for (size_t t = 0; t < dv && den != 0; t++)
                  {
                    double num = 0;

                    for (size_t j = 0; j < m; j++)
                      num += pq[j] * kv[j * dv + t];
                    y[(i * hc + h) * dv + t] = num / den;
                  }
              }
          }
    }
  g_free (kv); g_free (z); g_free (pk); g_free (pq);
  return y;
}

/* Every kernel set this machine has (RPE_LINEAR_ISA lowers the choice: the core's product, AVX2, AVX-512
 * tiles), relu and elu1, causal or not, on shapes that are not multiples of the blocks,
 * tiles or vector widths (N odd, M = 5 or 67, Dv = 3, 32, 96, 128), with inputs whose
 * features underflow (elu1 at -120) and a relu query row with a zero denominator. */
static void
test_fused_vs_direct (void)
{
  static const size_t shapes[][4] = {   /* N, H, M, Dv */
    { 1, 1, 5, 64 }, { 7, 3, 67, 32 }, { 300, 2, 64, 64 }, { 1000, 3, 67, 128 },
    { 777, 1, 8, 3 }, { 2500, 2, 64, 96 },
  };
  static const char *const isas[] = { "generic", "avx2", "avx512" };
  char *saved = g_strdup (g_getenv ("RPE_LINEAR_ISA"));
  GRand *rand = g_rand_new_with_seed (41);

  for (size_t si = 0; si < G_N_ELEMENTS (shapes); si++)
    for (size_t ii = 0; ii < G_N_ELEMENTS (isas); ii++)
      for (int elu1 = 0; elu1 < 2; elu1++)
        for (int causal = 0; causal < 2; causal++)
          {
            const size_t n = shapes[si][0], hc = shapes[si][1], m = shapes[si][2], dv = shapes[si][3];
            float *q = random_floats (rand, n * hc * m, 2.0);
            float *k = random_floats (rand, n * hc * m, 2.0);
            float *v = random_floats (rand, n * hc * dv, 1.0);
            float *y = g_new (float, n * hc * dv);
            double *yref, err;

            q[0] = -120.0f;
            k[n * hc * m - 1] = -120.0f;
            if (n > 3)
              for (size_t j = 0; j < m; j++)
                q[(2 * hc + hc - 1) * m + j] = -fabsf (q[(2 * hc + hc - 1) * m + j]) - 0.5f;
            yref = direct_linear (elu1, q, k, v, n, hc, m, dv, causal);
            g_setenv ("RPE_LINEAR_ISA", isas[ii], TRUE);
            g_assert_cmpint (rpe_linear_attention_qkv (elu1 ? RPE_FEATURE_ELU1 : RPE_FEATURE_RELU, NULL,
                                                       n, hc, m, dv, q, k, v, causal, y, NULL), ==, RPE_OK);
            err = rpe_test_max_rel_err (y, yref, n * hc * dv, 1e-3);
            g_test_message ("N=%zu H=%zu M=%zu Dv=%zu %s %s causal=%d: max rel err %.3g", n, hc, m, dv,
                            isas[ii], elu1 ? "elu1" : "relu", causal, err);
            g_assert_cmpfloat (err, <, 2e-5);
            if (!elu1 && n > 3)   /* the all-negative relu query row: zero denominator, output 0 */
              for (size_t t = 0; t < dv; t++)
                g_assert_true (y[(2 * hc + hc - 1) * dv + t] == 0.0f);
            g_free (q); g_free (k); g_free (v); g_free (y); g_free (yref);
          }
  if (saved != NULL)
    g_setenv ("RPE_LINEAR_ISA", saved, TRUE);
  else
    g_unsetenv ("RPE_LINEAR_ISA");
  g_free (saved);
  g_rand_free (rand);
}

/* The causal recurrence runs its chunk products on the core's own kernels
 * (rpe-gemm-private.h), each value summed in one fixed order: 1, 2 and 3 threads, the chunked
 * features path and the precomputed features (rpe_linear_attention) give the same bits, and so
 * do the AVX2 and AVX-512 builds of the product. */
static void
test_causal_bitwise (void)
{
  const size_t n = 1500, hc = 3, m = 32, dv = 40;
  const char *kernels[] = { "avx2", "avx512" };
  g_autofree char *saved_threads = g_strdup (g_getenv ("RPE_NUM_THREADS"));
  g_autofree char *saved_kernel = g_strdup (g_getenv ("RPE_GEMM_KERNEL"));
  GRand *rand = g_rand_new_with_seed (44);
  float *q = random_floats (rand, n * hc * m, 1.5), *k = random_floats (rand, n * hc * m, 1.5);
  float *v = random_floats (rand, n * hc * dv, 1.0);
  float *pq = g_new (float, n * hc * m), *pk = g_new (float, n * hc * m);
  float *y1 = g_new (float, n * hc * dv), *y = g_new (float, n * hc * dv), *yk = NULL;

  g_assert_cmpint (rpe_linear_attention_qkv (RPE_FEATURE_ELU1, NULL, n, hc, m, dv, q, k, v, TRUE, y1, NULL), ==,
                   RPE_OK);
  for (int threads = 1; threads <= 3; threads++)
    {
      char buf[8];

      g_snprintf (buf, sizeof buf, "%d", threads);
      g_setenv ("RPE_NUM_THREADS", buf, TRUE);
      g_assert_cmpint (rpe_linear_attention_qkv (RPE_FEATURE_ELU1, NULL, n, hc, m, dv, q, k, v, TRUE, y, NULL), ==,
                       RPE_OK);
      g_assert_cmpmem (y, n * hc * dv * sizeof (float), y1, n * hc * dv * sizeof (float));
    }
  g_assert_cmpint (rpe_feature_map_apply (RPE_FEATURE_ELU1, NULL, RPE_FEATURE_QUERY, n, hc, m, q, pq, NULL), ==,
                   RPE_OK);
  g_assert_cmpint (rpe_feature_map_apply (RPE_FEATURE_ELU1, NULL, RPE_FEATURE_KEY, n, hc, m, k, pk, NULL), ==,
                   RPE_OK);
  g_assert_cmpint (rpe_linear_attention (n, hc, m, dv, pq, pk, v, TRUE, y, NULL), ==, RPE_OK);
  g_assert_cmpmem (y, n * hc * dv * sizeof (float), y1, n * hc * dv * sizeof (float));
  for (size_t ki = 0; ki < G_N_ELEMENTS (kernels); ki++)
    {
      g_setenv ("RPE_GEMM_KERNEL", kernels[ki], TRUE);
      if (strcmp (_rpe_gemm_isa_name (_rpe_gemm_isa ()), kernels[ki]) != 0)
        continue;   /* not on this CPU */
      g_assert_cmpint (rpe_linear_attention_qkv (RPE_FEATURE_ELU1, NULL, n, hc, m, dv, q, k, v, TRUE, y, NULL), ==,
                       RPE_OK);
      if (yk == NULL)
        yk = g_memdup2 (y, n * hc * dv * sizeof (float));
      else
        g_assert_cmpmem (y, n * hc * dv * sizeof (float), yk, n * hc * dv * sizeof (float));
    }
  if (saved_threads != NULL)
    g_setenv ("RPE_NUM_THREADS", saved_threads, TRUE);
  else
    g_unsetenv ("RPE_NUM_THREADS");
  if (saved_kernel != NULL)
    g_setenv ("RPE_GEMM_KERNEL", saved_kernel, TRUE);
  else
    g_unsetenv ("RPE_GEMM_KERNEL");
  g_free (q); g_free (k); g_free (v); g_free (pq); g_free (pk); g_free (y1); g_free (y); g_free (yk);
  g_rand_free (rand);
}

/* The fused path's sums are split in segments that do not depend on the number of workers:
 * 1, 2 and 3 threads give the same bits; a non-finite query, key or value is refused. */
static void
test_fused_threads (void)
{
  const size_t n = 3001, hc = 2, m = 64, dv = 64;
  char *saved = g_strdup (g_getenv ("RPE_NUM_THREADS"));
  GRand *rand = g_rand_new_with_seed (43);
  float *q = random_floats (rand, n * hc * m, 1.5);
  float *k = random_floats (rand, n * hc * m, 1.5);
  float *v = random_floats (rand, n * hc * dv, 1.0);
  float *y1 = g_new (float, n * hc * dv), *y = g_new (float, n * hc * dv);

  for (int threads = 1; threads <= 3; threads++)
    {
      char buf[8];

      g_snprintf (buf, sizeof buf, "%d", threads);
      g_setenv ("RPE_NUM_THREADS", buf, TRUE);
      g_assert_cmpint (rpe_linear_attention_qkv (RPE_FEATURE_ELU1, NULL, n, hc, m, dv, q, k, v, FALSE,
                                                 threads == 1 ? y1 : y, NULL), ==, RPE_OK);
      if (threads > 1)
        g_assert_cmpmem (y, n * hc * dv * sizeof (float), y1, n * hc * dv * sizeof (float));
    }
  for (int which = 0; which < 3; which++)
    {
      float *x = which == 0 ? q : which == 1 ? k : v;
      size_t at = (which == 2 ? n * hc * dv : n * hc * m) - 7;
      float keep = x[at];

      x[at] = which == 1 ? INFINITY : NAN;
      g_assert_cmpint (rpe_linear_attention_qkv (RPE_FEATURE_ELU1, NULL, n, hc, m, dv, q, k, v, FALSE, y, NULL),
                       ==, RPE_ERROR_NOT_FINITE);
      x[at] = keep;
    }
  if (saved != NULL)
    g_setenv ("RPE_NUM_THREADS", saved, TRUE);
  else
    g_unsetenv ("RPE_NUM_THREADS");
  g_free (saved);
  g_free (q); g_free (k); g_free (v); g_free (y1); g_free (y);
  g_rand_free (rand);
}

/* An output far larger than the caches (N H Dv floats > 32 MB) is written with streaming
 * stores: the values are still those of the direct sums. */
static void
test_fused_streamed (void)
{
  const size_t n = 66001, hc = 2, m = 4, dv = 64;
  GRand *rand = g_rand_new_with_seed (47);
  float *q = random_floats (rand, n * hc * m, 2.0);
  float *k = random_floats (rand, n * hc * m, 2.0);
  float *v = random_floats (rand, n * hc * dv, 1.0);
  float *y = g_new (float, n * hc * dv);
  double *yref = direct_linear (TRUE, q, k, v, n, hc, m, dv, FALSE);
  double err;

  g_assert_cmpint (rpe_linear_attention_qkv (RPE_FEATURE_ELU1, NULL, n, hc, m, dv, q, k, v, FALSE, y, NULL),
                   ==, RPE_OK);
  err = rpe_test_max_rel_err (y, yref, n * hc * dv, 1e-3);
  g_test_message ("streamed N=%zu: max rel err %.3g", n, err);
  g_assert_cmpfloat (err, <, 2e-5);
  g_free (q); g_free (k); g_free (v); g_free (y); g_free (yref);
  g_rand_free (rand);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/core/linear/vs-quadratic", test_linear_vs_quadratic);
  g_test_add_func ("/core/linear/qkv-chunked", test_qkv_chunked);
  g_test_add_func ("/core/linear/fused-vs-direct", test_fused_vs_direct);
  g_test_add_func ("/core/linear/fused-threads", test_fused_threads);
  g_test_add_func ("/core/linear/causal-bitwise", test_causal_bitwise);
  g_test_add_func ("/core/linear/fused-streamed", test_fused_streamed);
  g_test_add_func ("/core/linear/feature-values", test_feature_values);
  g_test_add_func ("/core/linear/exp-shift-invariance", test_exp_shift_invariance);
  g_test_add_func ("/core/linear/zero-denominator", test_zero_denominator);
  g_test_add_func ("/core/linear/performer-statistics", test_performer_statistics);
  g_test_add_func ("/core/linear/performer-approximates-softmax", test_performer_approximates_softmax);
  g_test_add_func ("/core/linear/monitor", test_monitor);
  g_test_add_func ("/core/linear/errors", test_errors);
  return g_test_run ();
}

/* test-core-fastrpb.c: FastRPB Toeplitz bias against naive O(N^2) products. */
#include "config.h"

#include <glib.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>

#include "rpe-fastrpb.h"
#include "rpe-test-utils.h"

#define TOL 1e-5

static float *
random_floats (GRand *rand, size_t count)
{
  float *x = g_new (float, count);

  for (size_t i = 0; i < count; i++)
    x[i] = (float) g_rand_double_range (rand, -1.0, 1.0);
  return x;
}

/* Naive 1-D: ref[m, h, d] = y0 + sum_n w_h[m - n] v[n, h, d], causal n <= m. */
static double *
naive_1d (size_t n, size_t nh, size_t dv, const float *w, gboolean per_head,
          gboolean causal, const float *v, const float *y0)
{
  double *ref = g_new0 (double, n * nh * dv);

  for (size_t m = 0; m < n; m++)
    for (size_t h = 0; h < nh; h++)
      for (size_t d = 0; d < dv; d++)
        {
          double acc = y0 != NULL ? y0[(m * nh + h) * dv + d] : 0.0;

          for (size_t k = 0; k < n; k++)
            {
              long tau = (long) m - (long) k;
              const float *wh = w + (per_head ? h * (2 * n - 1) : 0);

              if (causal && tau < 0)
                continue;
              acc += (double) wh[tau + (long) n - 1] * v[(k * nh + h) * dv + d];
            }
          ref[(m * nh + h) * dv + d] = acc;
        }
  return ref;
}

static double
check_1d (GRand *rand, size_t n, size_t nh, size_t dv, gboolean per_head,
          gboolean causal, gboolean accumulate)
{
  size_t count = n * nh * dv;
  float *w = random_floats (rand, (per_head ? nh : 1) * (2 * n - 1));
  float *v = random_floats (rand, count);
  float *y = random_floats (rand, count);
  float *y0 = g_memdup2 (y, count * sizeof (float));
  double *ref = naive_1d (n, nh, dv, w, per_head, causal, v, accumulate ? y0 : NULL);
  unsigned flags = (per_head ? RPE_FASTRPB_PER_HEAD : 0) | (causal ? RPE_FASTRPB_CAUSAL : 0)
                   | (accumulate ? RPE_FASTRPB_ACCUMULATE : 0);
  double err;

  g_assert_cmpint (rpe_fastrpb_apply (n, nh, dv, w, v, y, flags, NULL), ==, RPE_OK);
  err = rpe_test_max_rel_err (y, ref, count, 1e-12);
  if (err > TOL)
    g_test_message ("N=%zu H=%zu Dv=%zu per_head=%d causal=%d acc=%d err=%g",
                    n, nh, dv, per_head, causal, accumulate, err);
  g_assert_cmpfloat (err, <, TOL);
  g_free (w);
  g_free (v);
  g_free (y);
  g_free (y0);
  g_free (ref);
  return err;
}

static void
test_1d_sizes (void)
{
  /* primes, 1, 2, and N where 2N - 1 is just above a power of two (17 -> 33, 33 -> 65, 129 -> 257) */
  const size_t sizes[] = { 1, 2, 3, 5, 7, 13, 17, 33, 101, 129, 257, 263 };
  GRand *rand = g_rand_new_with_seed (11);
  double worst = 0;

  for (size_t s = 0; s < G_N_ELEMENTS (sizes); s++)
    for (int mode = 0; mode < 8; mode++)
      worst = MAX (worst, check_1d (rand, sizes[s], 3, 11, mode & 1, (mode >> 1) & 1, (mode >> 2) & 1));
  g_test_message ("1-D worst relative error %.3g", worst);
  g_rand_free (rand);
}

static void
test_1d_causal_ignores_negative_lags (void)
{
  /* causal: changing w_tau for tau < 0 must not change the output */
  const size_t n = 37, nh = 2, dv = 5, count = n * nh * dv;
  GRand *rand = g_rand_new_with_seed (5);
  float *w = random_floats (rand, 2 * n - 1);
  float *v = random_floats (rand, count);
  float *y1 = g_new (float, count), *y2 = g_new (float, count);

  g_assert_cmpint (rpe_fastrpb_apply (n, nh, dv, w, v, y1, RPE_FASTRPB_CAUSAL, NULL), ==, RPE_OK);
  for (size_t i = 0; i < n - 1; i++)
    w[i] = 1000.0f * (float) (i + 1);
  g_assert_cmpint (rpe_fastrpb_apply (n, nh, dv, w, v, y2, RPE_FASTRPB_CAUSAL, NULL), ==, RPE_OK);
  for (size_t i = 0; i < count; i++)
    g_assert_cmpfloat_with_epsilon (y1[i], y2[i], 1e-4);
  /* and output row 0 only sees v row 0: y[0] = w_0 v[0] */
  for (size_t i = 0; i < nh * dv; i++)
    g_assert_cmpfloat_with_epsilon (y2[i], w[n - 1] * v[i], 1e-5);
  g_free (w);
  g_free (v);
  g_free (y1);
  g_free (y2);
  g_rand_free (rand);
}

/* Naive 2-D from the dense definition W[(i,j),(i',j')] = wx_{i-i'} + wy_{j-j'}. */
static double
check_2d (GRand *rand, size_t n1, size_t n2, size_t nh, size_t dv, gboolean per_head,
          gboolean causal, gboolean accumulate)
{
  size_t n = n1 * n2, count = n * nh * dv;
  size_t lx = 2 * n1 - 1, ly = 2 * n2 - 1;
  float *wx = random_floats (rand, (per_head ? nh : 1) * lx);
  float *wy = random_floats (rand, (per_head ? nh : 1) * ly);
  float *v = random_floats (rand, count);
  float *y = random_floats (rand, count);
  double *ref = g_new (double, count);
  unsigned flags = (per_head ? RPE_FASTRPB_PER_HEAD : 0) | (causal ? RPE_FASTRPB_CAUSAL : 0)
                   | (accumulate ? RPE_FASTRPB_ACCUMULATE : 0);
  double err;

  for (size_t p = 0; p < n; p++)
    for (size_t h = 0; h < nh; h++)
      for (size_t d = 0; d < dv; d++)
        {
          double acc = accumulate ? y[(p * nh + h) * dv + d] : 0.0;
          const float *wxh = wx + (per_head ? h * lx : 0);
          const float *wyh = wy + (per_head ? h * ly : 0);
          long i = (long) (p / n2), j = (long) (p % n2);

          for (size_t q = 0; q < n; q++)
            {
              long i2 = (long) (q / n2), j2 = (long) (q % n2);
              double wpq = (double) wxh[i - i2 + (long) n1 - 1] + wyh[j - j2 + (long) n2 - 1];

              if (causal && q > p)
                continue;
              acc += wpq * v[(q * nh + h) * dv + d];
            }
          ref[(p * nh + h) * dv + d] = acc;
        }

  g_assert_cmpint (rpe_fastrpb_apply_2d (n1, n2, nh, dv, wx, wy, v, y, flags, NULL), ==, RPE_OK);
  err = rpe_test_max_rel_err (y, ref, count, 1e-12);
  if (err > TOL)
    g_test_message ("2-D %zux%zu per_head=%d causal=%d acc=%d err=%g",
                    n1, n2, per_head, causal, accumulate, err);
  g_assert_cmpfloat (err, <, TOL);
  g_free (wx);
  g_free (wy);
  g_free (v);
  g_free (y);
  g_free (ref);
  return err;
}

static void
test_2d (void)
{
  const size_t grids[][2] = { { 1, 1 }, { 1, 6 }, { 5, 1 }, { 2, 2 }, { 3, 4 }, { 7, 5 }, { 9, 17 }, { 16, 11 } };
  GRand *rand = g_rand_new_with_seed (23);
  double worst = 0;

  for (size_t g = 0; g < G_N_ELEMENTS (grids); g++)
    for (int mode = 0; mode < 8; mode++)
      worst = MAX (worst, check_2d (rand, grids[g][0], grids[g][1], 2, 9, mode & 1, (mode >> 1) & 1, (mode >> 2) & 1));
  g_test_message ("2-D worst relative error %.3g", worst);
  g_rand_free (rand);
}

static void
test_dense (void)
{
  /* the display forms follow the definitions, and dense W times V equals the FFT product */
  const size_t n = 9, n1 = 3, n2 = 4, nn = n1 * n2;
  GRand *rand = g_rand_new_with_seed (3);
  float *w = random_floats (rand, 2 * n - 1);
  float *wx = random_floats (rand, 2 * n1 - 1), *wy = random_floats (rand, 2 * n2 - 1);
  float *dense = g_new (float, n * n), *dense2 = g_new (float, nn * nn);
  float *profile = g_new (float, 2 * n - 1);
  float *v = random_floats (rand, nn), *y = g_new (float, nn);
  double *ref = g_new (double, nn);

  for (int causal = 0; causal < 2; causal++)
    {
      g_assert_cmpint (rpe_fastrpb_dense (n, w, causal, dense), ==, RPE_OK);
      g_assert_cmpint (rpe_fastrpb_lag_profile (n, w, causal, profile), ==, RPE_OK);
      for (size_t m = 0; m < n; m++)
        for (size_t k = 0; k < n; k++)
          {
            float expect = (causal && k > m) ? 0.0f : w[(m - k) + n - 1];

            g_assert_cmpfloat (dense[m * n + k], ==, expect);
            g_assert_cmpfloat (profile[m + n - 1 - k], ==, expect);
          }

      g_assert_cmpint (rpe_fastrpb_dense_2d (n1, n2, wx, wy, causal, dense2), ==, RPE_OK);
      for (size_t p = 0; p < nn; p++)
        {
          double acc = 0;

          for (size_t q = 0; q < nn; q++)
            {
              float expect = (causal && q > p) ? 0.0f
                             : wx[p / n2 - q / n2 + n1 - 1] + wy[p % n2 - q % n2 + n2 - 1];

              g_assert_cmpfloat_with_epsilon (dense2[p * nn + q], expect, 1e-6);
              acc += (double) dense2[p * nn + q] * v[q];
            }
          ref[p] = acc;
        }
      g_assert_cmpint (rpe_fastrpb_apply_2d (n1, n2, 1, 1, wx, wy, v, y,
                                             causal ? RPE_FASTRPB_CAUSAL : 0, NULL), ==, RPE_OK);
      g_assert_cmpfloat (rpe_test_max_rel_err (y, ref, nn, 1e-12), <, TOL);
    }
  g_free (w);
  g_free (wx);
  g_free (wy);
  g_free (dense);
  g_free (dense2);
  g_free (profile);
  g_free (v);
  g_free (y);
  g_free (ref);
  g_rand_free (rand);
}

static void
test_invalid (void)
{
  float w[5] = { 1, 2, 3, 4, 5 }, v[3] = { 1, 1, 1 }, y[3];
  atomic_int cancel = 1;
  RpeMonitor monitor = { &cancel, NULL, NULL };

  g_assert_cmpint (rpe_fastrpb_apply (0, 1, 1, w, v, y, 0, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_fastrpb_apply (3, 1, 1, NULL, v, y, 0, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_fastrpb_apply (3, 1, 1, w, v, y, 1u << 10, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_fastrpb_apply (SIZE_MAX / 2, 4, 4, w, v, y, 0, NULL), ==, RPE_ERROR_OVERFLOW);
  g_assert_cmpint (rpe_fastrpb_apply (3, 1, 1, w, v, y, 0, &monitor), ==, RPE_ERROR_CANCELLED);
  g_assert_cmpint (rpe_fastrpb_apply_2d (1, 3, 1, 1, w, w, v, y, 0, &monitor), ==, RPE_ERROR_CANCELLED);
  w[2] = NAN;
  g_assert_cmpint (rpe_fastrpb_apply (3, 1, 1, w, v, y, 0, NULL), ==, RPE_ERROR_NOT_FINITE);
  g_assert_cmpint (rpe_fastrpb_apply_2d (3, 1, 1, 1, w, w, v, y, 0, NULL), ==, RPE_ERROR_NOT_FINITE);
}

static void
test_timing (void)
{
  /* N log N scaling: report times for a long sequence (no assertion on speed,
   * but the result is checked on a few rows against the naive sum) */
  const size_t n = 16384, nh = 4, dv = 64, count = n * nh * dv;
  GRand *rand = g_rand_new_with_seed (99);
  float *w = random_floats (rand, nh * (2 * n - 1));
  float *v = random_floats (rand, count), *y = g_new (float, count);
  gint64 t0 = g_get_monotonic_time ();
  double scale = 0, err = 0;

  g_assert_cmpint (rpe_fastrpb_apply (n, nh, dv, w, v, y, RPE_FASTRPB_PER_HEAD, NULL), ==, RPE_OK);
  g_test_message ("FastRPB N=%zu H=%zu Dv=%zu: %.1f ms", n, nh, dv,
                  (g_get_monotonic_time () - t0) / 1000.0);
  for (size_t m = 0; m < n; m += n / 7)
    for (size_t h = 0; h < nh; h++)
      {
        double acc = 0;

        for (size_t k = 0; k < n; k++)
          acc += (double) w[h * (2 * n - 1) + m + n - 1 - k] * v[(k * nh + h) * dv + 5];
        err = MAX (err, fabs (acc - y[(m * nh + h) * dv + 5]));
        scale = MAX (scale, fabs (acc));
      }
  g_test_message ("sampled rel err %.3g", err / scale);
  g_assert_cmpfloat (err / scale, <, TOL);
  g_free (w);
  g_free (v);
  g_free (y);
  g_rand_free (rand);
}

/* The weight of offset tau from the raw stored weights, written from docs/math.md
 * section 8 independently of rpe_fastrpb_to_centred. */
static double
stored_weight (RpeFastrpbLayout layout, const float *row, long m_train, long tau)
{
  switch (layout)
    {
    case RPE_FASTRPB_LAYOUT_FULL:
      /* W[m, n] = w[(m - n + M) mod (2M - 1)] */
      return row[((tau + m_train) % (2 * m_train - 1) + (2 * m_train - 1)) % (2 * m_train - 1)];
    case RPE_FASTRPB_LAYOUT_SYMMETRIC:
      return row[labs (tau)];
    case RPE_FASTRPB_LAYOUT_CENTRED:
    default:
      return row[tau + m_train - 1];
    }
}

static void
test_layouts (void)
{
  /* models trained at M >= N: W V from the FFT path on the converted weights
   * against a naive O(N^2) sum over the raw stored weights; 1-D (causal or
   * not) and 2-D with one w for both axes (the reference's 2-D bias) */
  const RpeFastrpbLayout layouts[] = { RPE_FASTRPB_LAYOUT_FULL, RPE_FASTRPB_LAYOUT_SYMMETRIC, RPE_FASTRPB_LAYOUT_CENTRED };
  const size_t n = 11, h = 3, dv = 2, n1 = 4, n2 = 5;
  GRand *rand = g_rand_new_with_seed (88);

  for (size_t li = 0; li < G_N_ELEMENTS (layouts); li++)
    for (long m_train = (long) n; m_train <= (long) n + 6; m_train += 6)
      {
        RpeFastrpbLayout layout = layouts[li];
        size_t width = layout == RPE_FASTRPB_LAYOUT_SYMMETRIC ? (size_t) m_train : 2 * (size_t) m_train - 1;
        float *w = g_new (float, h * width), *c = g_new (float, h * (2 * n - 1));
        float *v = g_new (float, n * h * dv), *y = g_new (float, n * h * dv);
        float *cx = g_new (float, h * (2 * n1 - 1)), *cy = g_new (float, h * (2 * n2 - 1));

        g_assert_cmpuint (rpe_fastrpb_layout_length (layout, width), ==, (size_t) m_train);
        for (size_t i = 0; i < h * width; i++)
          w[i] = (float) g_rand_double_range (rand, -1, 1);
        for (size_t i = 0; i < n * h * dv; i++)
          v[i] = (float) g_rand_double_range (rand, -1, 1);
        g_assert_cmpint (rpe_fastrpb_to_centred (layout, h, width, w, n, c), ==, RPE_OK);
        for (int causal = 0; causal < 2; causal++)
          {
            g_assert_cmpint (rpe_fastrpb_apply (n, h, dv, c, v, y,
                                                RPE_FASTRPB_PER_HEAD | (causal ? RPE_FASTRPB_CAUSAL : 0), NULL),
                             ==, RPE_OK);
            for (size_t m = 0; m < n; m++)
              for (size_t hh = 0; hh < h; hh++)
                for (size_t b = 0; b < dv; b++)
                  {
                    double ref = 0;

                    for (size_t k = 0; k < n; k++)
                      {
                        long tau = (long) m - (long) k;

                        if (causal && tau < 0)
                          continue;
                        ref += stored_weight (layout, w + hh * width, m_train, tau) * v[(k * h + hh) * dv + b];
                      }
                    g_assert_cmpfloat_with_epsilon (y[(m * h + hh) * dv + b], ref, 1e-5 * (1 + fabs (ref)));
                  }
          }

        /* 2-D, one w for both axes (N1, N2 <= M) */
        {
          float *v2 = g_new (float, n1 * n2 * h * dv), *y2 = g_new (float, n1 * n2 * h * dv);

          for (size_t i = 0; i < n1 * n2 * h * dv; i++)
            v2[i] = (float) g_rand_double_range (rand, -1, 1);
          g_assert_cmpint (rpe_fastrpb_to_centred (layout, h, width, w, n1, cx), ==, RPE_OK);
          g_assert_cmpint (rpe_fastrpb_to_centred (layout, h, width, w, n2, cy), ==, RPE_OK);
          g_assert_cmpint (rpe_fastrpb_apply_2d (n1, n2, h, dv, cx, cy, v2, y2, RPE_FASTRPB_PER_HEAD, NULL), ==, RPE_OK);
          for (size_t p = 0; p < n1 * n2; p++)
            for (size_t hh = 0; hh < h; hh++)
              {
                double ref = 0;

                for (size_t pp = 0; pp < n1 * n2; pp++)
                  ref += (stored_weight (layout, w + hh * width, m_train, (long) (p / n2) - (long) (pp / n2))
                          + stored_weight (layout, w + hh * width, m_train, (long) (p % n2) - (long) (pp % n2)))
                         * v2[(pp * h + hh) * dv];
                g_assert_cmpfloat_with_epsilon (y2[(p * h + hh) * dv], ref, 1e-5 * (1 + fabs (ref)));
              }
          g_free (v2);
          g_free (y2);
        }

        /* a model trained at M cannot be viewed at N > M */
        g_assert_cmpint (rpe_fastrpb_to_centred (layout, h, width, w, (size_t) m_train + 1, c),
                         ==, RPE_ERROR_INVALID_ARGUMENT);
        g_free (w);
        g_free (c);
        g_free (v);
        g_free (y);
        g_free (cx);
        g_free (cy);
      }
  /* full and centred hold 2M - 1 weights: an even count is neither */
  {
    float w[4] = { 0 }, c[1];

    g_assert_cmpuint (rpe_fastrpb_layout_length (RPE_FASTRPB_LAYOUT_FULL, 4), ==, 0);
    g_assert_cmpint (rpe_fastrpb_to_centred (RPE_FASTRPB_LAYOUT_FULL, 1, 4, w, 1, c), ==, RPE_ERROR_INVALID_ARGUMENT);
    g_assert_cmpint (rpe_fastrpb_to_centred (RPE_FASTRPB_LAYOUT_SYMMETRIC, 1, 4, w, 1, c), ==, RPE_OK);
    g_assert_cmpfloat (c[0], ==, 0);
  }
  g_rand_free (rand);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/core/fastrpb/1d-sizes", test_1d_sizes);
  g_test_add_func ("/core/fastrpb/1d-causal-negative-lags", test_1d_causal_ignores_negative_lags);
  g_test_add_func ("/core/fastrpb/2d", test_2d);
  g_test_add_func ("/core/fastrpb/layouts", test_layouts);
  g_test_add_func ("/core/fastrpb/dense", test_dense);
  g_test_add_func ("/core/fastrpb/invalid", test_invalid);
  g_test_add_func ("/core/fastrpb/timing", test_timing);
  return g_test_run ();
}

/* test-core-fit.c: core/rpe-fit (issue 16).
 *
 * Targets against evaluations written here (T5's buckets from their closed-form thresholds
 * in integers, not the float32 logarithm), the fit profile against the engine's template
 * lags, fits against closed forms (exact recovery of an off-grid sum of cosines, the conv
 * optimum = the target's energy outside the filter window), and the raw transforms'
 * inverses. */
#include "config.h"

#include <glib.h>
#include <math.h>
#include <string.h>

#include "rpe-fit.h"
#include "rpe-rng.h"
#include "rpe-spe.h"

static double
my_err (size_t H, size_t n, const double *b, const double *l)
{
  size_t len = 2 * n - 1;
  double num = 0, den = 0;

  for (size_t h = 0; h < H; h++)
    {
      double mb = 0, ml = 0;
      for (size_t i = 0; i < len; i++)
        {
          mb += b[h * len + i] / (double) len;
          ml += l[h * len + i] / (double) len;
        }
      for (size_t i = 0; i < len; i++)
        {
          double e = (l[h * len + i] - ml) - (b[h * len + i] - mb);
          num += e * e;
          den += (b[h * len + i] - mb) * (b[h * len + i] - mb);
        }
    }
  return sqrt (num / den);
}

static void
test_alibi (void)
{
  size_t H = 6, n = 33, len = 2 * n - 1;
  double *out = g_new (double, H * len);
  double slopes[6] = { 1, 0.5, 0.25, 2, 3, 0.125 };

  g_assert_cmpint (rpe_fit_target_alibi (H, n, NULL, out), ==, RPE_OK);
  for (size_t h = 0; h < H; h++)
    for (long tau = -(long) (n - 1); tau <= (long) (n - 1); tau++)
      {
        /* ALiBi (Press et al.): slopes the geometric sequence 2^(-8/H), 2^(-16/H), ... */
        double m = pow (pow (2.0, -8.0 / (double) H), (double) (h + 1));
        g_assert_cmpfloat_with_epsilon (out[h * len + (size_t) (tau + (long) n - 1)], -m * labs (tau), 1e-12);
      }
  g_assert_cmpint (rpe_fit_target_alibi (H, n, slopes, out), ==, RPE_OK);
  g_assert_cmpfloat (out[3 * len + 0], ==, -2.0 * (double) (n - 1));
  g_assert_cmpint (rpe_fit_target_alibi (0, n, NULL, out), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_fit_target_alibi (H, 0, NULL, out), ==, RPE_ERROR_INVALID_ARGUMENT);
  slopes[1] = NAN;
  g_assert_cmpint (rpe_fit_target_alibi (H, n, slopes, out), ==, RPE_ERROR_NOT_FINITE);
  g_free (out);
}

/* T5 buckets for num_buckets 32, max_distance 128, from the closed form: with half = 16
 * buckets per direction and max_exact = 8, |tau| < 8 is exact, and otherwise the bucket is
 * 8 + #{j = 1..7 : |tau| >= 8 * 2^(j/2)} (log(|tau|/8)/log(16)*8 = 2 log2(|tau|/8) crosses
 * j), i.e. |tau|^2 >= 64 * 2^j, in integers.  tau < 0 (key after the query) adds 16. */
static size_t
t5_ref (long tau, bool bidi)
{
  long a = tau < 0 ? -tau : tau;
  size_t off = 0, half = bidi ? 16 : 32, max_exact = half / 2, b;

  if (bidi && tau < 0)
    off = 16;
  if (!bidi && tau < 0)
    a = 0;
  if ((size_t) a < max_exact)
    return off + (size_t) a;
  b = max_exact;
  if (bidi)
    {
      for (int j = 1; j <= 7; j++)
        if (a * a >= 64L << j)
          b++;
    }
  else
    {
      /* 16 + floor(log(a/16)/log(8) * 16): a >= 16 * 8^(j/16) <=> a^16 >= 16^16 8^j;
       * compare logs in long double far from the ties (none lands exactly on one) */
      long double x = logl ((long double) a / 16) / logl (8.0L) * 16;
      b = max_exact + (size_t) x;
      if (b > 31)
        b = 31;
    }
  if (b > half - 1)
    b = half - 1;
  return off + b;
}

static void
test_t5 (void)
{
  size_t H = 3, n = 200, len = 2 * n - 1;
  float table[32 * 3];
  double *out = g_new (double, H * len);

  for (long tau = -300; tau <= 300; tau++)
    {
      g_assert_cmpuint (rpe_fit_t5_bucket (tau, true, 32, 128), ==, t5_ref (tau, true));
      g_assert_cmpuint (rpe_fit_t5_bucket (tau, false, 32, 128), ==, t5_ref (tau, false));
    }
  /* published values (the reference implementation, bidirectional 32/128) */
  g_assert_cmpuint (rpe_fit_t5_bucket (0, true, 32, 128), ==, 0);
  g_assert_cmpuint (rpe_fit_t5_bucket (-1, true, 32, 128), ==, 17);
  g_assert_cmpuint (rpe_fit_t5_bucket (16, true, 32, 128), ==, 10);
  g_assert_cmpuint (rpe_fit_t5_bucket (64, true, 32, 128), ==, 14);
  g_assert_cmpuint (rpe_fit_t5_bucket (-1000, true, 32, 128), ==, 31);

  for (size_t i = 0; i < 32 * H; i++)
    table[i] = (float) (i * 0.5 - 7);
  g_assert_cmpint (rpe_fit_target_t5 (H, n, table, 32, 128, true, out), ==, RPE_OK);
  for (size_t h = 0; h < H; h++)
    for (size_t i = 0; i < len; i++)
      g_assert_cmpfloat (out[h * len + i], ==, table[t5_ref ((long) i - (long) (n - 1), true) * H + h]);
  /* max_distance inside the exact range is refused (log of <= 1) */
  g_assert_cmpint (rpe_fit_target_t5 (H, n, table, 32, 8, true, out), ==, RPE_ERROR_INVALID_ARGUMENT);
  table[5] = NAN;
  g_assert_cmpint (rpe_fit_target_t5 (H, n, table, 32, 128, true, out), ==, RPE_ERROR_NOT_FINITE);
  g_free (out);
}

static void
test_kerple_centred (void)
{
  size_t H = 2, n = 40, len = 2 * n - 1, m = 50;
  double r1[2] = { 0.7, 2.0 }, r2[2] = { 1.0, 0.3 }, one[2] = { 1.0, 1.0 };
  double *a = g_new (double, H * len), *b = g_new (double, H * len);
  float *w = g_new (float, H * (2 * m - 1));

  g_assert_cmpint (rpe_fit_target_kerple (H, n, false, r1, r2, a), ==, RPE_OK);
  for (size_t h = 0; h < H; h++)
    for (size_t i = 0; i < len; i++)
      {
        double t = fabs ((double) i - (double) (n - 1));
        g_assert_cmpfloat_with_epsilon (a[h * len + i], -r1[h] * log (1 + r2[h] * t), 1e-12);
      }
  /* power with r2 = 1 is ALiBi with slope r1 */
  g_assert_cmpint (rpe_fit_target_kerple (H, n, true, r1, one, a), ==, RPE_OK);
  g_assert_cmpint (rpe_fit_target_alibi (H, n, r1, b), ==, RPE_OK);
  for (size_t i = 0; i < H * len; i++)
    g_assert_cmpfloat_with_epsilon (a[i], b[i], 1e-12);
  g_assert_cmpint (rpe_fit_target_kerple (H, n, true, r1, r2, a), ==, RPE_OK);
  g_assert_cmpfloat_with_epsilon (a[len + 0], -2.0 * pow (39.0, 0.3), 1e-12);
  r2[0] = 2.5;
  g_assert_cmpint (rpe_fit_target_kerple (H, n, true, r1, r2, a), ==, RPE_ERROR_INVALID_ARGUMENT);
  r1[1] = -1;
  g_assert_cmpint (rpe_fit_target_kerple (H, n, false, r1, one, a), ==, RPE_ERROR_INVALID_ARGUMENT);

  /* centred weights of length 2M-1, w[h][j] = 1000 h + (j - (M-1)): the crop keeps tau */
  for (size_t h = 0; h < H; h++)
    for (size_t j = 0; j < 2 * m - 1; j++)
      w[h * (2 * m - 1) + j] = (float) (1000.0 * h + ((double) j - (double) (m - 1)));
  g_assert_cmpint (rpe_fit_target_centred (H, n, w, H, m, a), ==, RPE_OK);
  for (size_t h = 0; h < H; h++)
    for (size_t i = 0; i < len; i++)
      g_assert_cmpfloat (a[h * len + i], ==, 1000.0 * h + ((double) i - (double) (n - 1)));
  g_assert_cmpint (rpe_fit_target_centred (H, n, w, 1, m, a), ==, RPE_OK);
  g_assert_cmpfloat (a[len + 3], ==, a[3]);
  g_assert_cmpint (rpe_fit_target_centred (H, m + 1, w, H, m, a), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_free (a);
  g_free (b);
  g_free (w);
}

/* rpe_fit_profile = sum_d (engine template lags) / sqrt(D), gated and not, sine and conv */
static void
test_profile_vs_engine (void)
{
  for (int method = 0; method < 2; method++)
    for (int gated = 0; gated < 2; gated++)
      {
        RpeSpeParams p;
        size_t H = 3, D = 4, n = 37, len = 2 * n - 1;
        double *prof = g_new (double, H * len);
        float *lags = g_new (float, len);

        g_assert_cmpint (rpe_spe_params_init (&p, method ? RPE_SPE_CONV : RPE_SPE_SINE, H, D,
                                              method ? 9 : 5, gated), ==, RPE_OK);
        g_assert_cmpint (rpe_spe_params_random (&p, 11 + method), ==, RPE_OK);
        g_assert_cmpint (rpe_fit_profile (&p, n, gated, prof), ==, RPE_OK);
        for (size_t h = 0; h < H; h++)
          for (size_t i = 0; i < len; i++)
            {
              double s = 0;
              for (size_t d = 0; d < D; d++)
                {
                  g_assert_cmpint (rpe_spe_template_lags (&p, h, d, n, gated, lags), ==, RPE_OK);
                  s += lags[i];
                }
              s /= sqrt ((double) D);
              g_assert_cmpfloat_with_epsilon (prof[h * len + i], s, 2e-6 * (1 + fabs (s)));
            }
        rpe_spe_params_clear (&p);
        g_free (prof);
        g_free (lags);
      }
}

/* A target that is exactly a sum of M = D K off-grid cosines with phases: the sine fit
 * recovers it (error at the float rounding of the written parameters). */
static void
test_sine_recovers (void)
{
  size_t H = 2, D = 2, K = 2, n = 64, len = 2 * n - 1;
  double *b = g_new (double, H * len), *l = g_new (double, H * len);
  const double f[2][4] = { { 0.013, 0.071, 0.2, 0.37 }, { 0.0041, 0.05, 0.11, 0.43 } };
  const double a[2][4] = { { 3, 1, 0.5, 0.2 }, { 2, -1.5, 1, 0.3 } };
  const double th[2][4] = { { 0, 0.4, -1, 2 }, { 0.1, 0, 0.3, -0.2 } };
  RpeFitConfig cfg = { RPE_SPE_SINE, H, D, K, false, 0 };
  RpeSpeParams p;
  double e;

  for (size_t h = 0; h < H; h++)
    for (size_t i = 0; i < len; i++)
      {
        double tau = (double) i - (double) (n - 1);
        b[h * len + i] = 5.0 * h;
        for (int j = 0; j < 4; j++)
          b[h * len + i] += a[h][j] * cos (2 * M_PI * f[h][j] * tau + th[h][j]);
      }
  g_assert_cmpint (rpe_fit_spe (&cfg, n, b, &p, NULL), ==, RPE_OK);
  g_assert_cmpint (rpe_fit_profile (&p, n, false, l), ==, RPE_OK);
  e = rpe_fit_relative_error (H, n, b, l);
  g_assert_cmpfloat_with_epsilon (e, my_err (H, n, b, l), 1e-12);
  if (g_test_verbose ())
    g_printerr ("sine recovery error %g\n", e);
  g_assert_cmpfloat (e, <, 1e-5);
  for (size_t i = 0; i < H * D * K; i++)
    {
      g_assert_cmpfloat (p.freqs[i], >=, 0.0);
      g_assert_cmpfloat (p.freqs[i], <=, 0.5);
      g_assert_cmpfloat (p.gains[i], >=, 0.0);
    }
  rpe_spe_params_clear (&p);

  /* D K >= N - 1: the frequency grid alone is exact for any target */
  for (size_t i = 0; i < H * len; i++)
    b[i] = rpe_rng_u64 (3, 1, i) % 1000 / 100.0;
  cfg = (RpeFitConfig) { RPE_SPE_SINE, H, 9, 7, true, 0 };
  g_assert_cmpint (rpe_fit_spe (&cfg, n, b, &p, NULL), ==, RPE_OK);
  g_assert_nonnull (p.gate);
  g_assert_cmpint (rpe_fit_profile (&p, n, true, l), ==, RPE_OK);
  g_assert_cmpfloat (rpe_fit_relative_error (H, n, b, l), <, 1e-5);
  rpe_spe_params_clear (&p);
  g_free (b);
  g_free (l);
}

/* conv: the optimum is the target's (mean-removed outside) energy beyond the window */
static void
test_conv_optimum (void)
{
  size_t H = 3, n = 50, len = 2 * n - 1, L = 12;
  double *b = g_new (double, H * len), *l = g_new (double, H * len);
  double r1[3] = { 1, 0.5, 2 }, r2[3] = { 0.5, 1, 0.1 };
  double num = 0, den = 0, e;

  g_assert_cmpint (rpe_fit_target_kerple (H, n, false, r1, r2, b), ==, RPE_OK);
  for (size_t h = 0; h < H; h++)
    {
      double c = 0, mb = 0;
      size_t cnt = 0;
      for (size_t i = 0; i < len; i++)
        {
          long tau = (long) i - (long) (n - 1);
          mb += b[h * len + i] / (double) len;
          if (labs (tau) >= (long) L)
            {
              c += b[h * len + i];
              cnt++;
            }
        }
      c /= (double) cnt;
      for (size_t i = 0; i < len; i++)
        {
          long tau = (long) i - (long) (n - 1);
          if (labs (tau) >= (long) L)
            num += (b[h * len + i] - c) * (b[h * len + i] - c);
          den += (b[h * len + i] - mb) * (b[h * len + i] - mb);
        }
    }
  for (int gated = 0; gated < 2; gated++)
    {
      RpeFitConfig cfg = { RPE_SPE_CONV, H, 3, L, gated, 0 };
      RpeSpeParams p;

      g_assert_cmpint (rpe_fit_spe (&cfg, n, b, &p, NULL), ==, RPE_OK);
      g_assert_cmpint (rpe_fit_profile (&p, n, gated, l), ==, RPE_OK);
      e = rpe_fit_relative_error (H, n, b, l);
      g_assert_cmpfloat_with_epsilon (e, sqrt (num / den), 1e-5);
      rpe_spe_params_clear (&p);
    }

  /* D = 1: a rank-1 target (the correlation of two filters) is matched by ALS */
  {
    size_t n1 = 20, len1 = 2 * n1 - 1, L1 = 6;
    double wq[6] = { 1, 0.5, -0.3, 0.2, 0.1, 0.05 }, wk[6] = { 0.8, 0.6, 0.4, -0.2, 0.3, 0.1 };
    double *b1 = g_new (double, len1), *l1 = g_new (double, len1);
    RpeFitConfig cfg = { RPE_SPE_CONV, 1, 1, L1, false, 500 };
    RpeSpeParams p;

    for (size_t i = 0; i < len1; i++)
      {
        long tau = (long) i - (long) (n1 - 1);
        b1[i] = 0;
        for (long j = 0; j < (long) L1; j++)
          if (j + tau >= 0 && j + tau < (long) L1)
            b1[i] += wq[j] * wk[j + tau];
      }
    g_assert_cmpint (rpe_fit_spe (&cfg, n1, b1, &p, NULL), ==, RPE_OK);
    g_assert_cmpint (rpe_fit_profile (&p, n1, false, l1), ==, RPE_OK);
    e = rpe_fit_relative_error (1, n1, b1, l1);
    if (g_test_verbose ())
      g_printerr ("rank-1 ALS error %g\n", e);
    g_assert_cmpfloat (e, <, 1e-2);
    rpe_spe_params_clear (&p);
    g_free (b1);
    g_free (l1);
  }
  g_free (b);
  g_free (l);
}

static void
test_raw_transforms (void)
{
  /* the inverses invert the as-coded transforms: sigmoid(x)/2, softplus, sigmoid */
  for (int i = 1; i < 1000; i++)
    {
      double f = 0.5 * i / 1000.0, lam = exp ((i - 500) / 40.0), g = i / 1000.0;
      g_assert_cmpfloat_with_epsilon (rpe_fit_sigmoid (rpe_fit_raw_freq (f)) / 2, f, 1e-14 * (f + 1e-3));
      g_assert_cmpfloat_with_epsilon (rpe_fit_softplus (rpe_fit_raw_gain (lam)), lam, 1e-13 * lam);
      g_assert_cmpfloat_with_epsilon (rpe_fit_sigmoid (rpe_fit_raw_gate (g)), g, 1e-14);
    }
  /* sigmoid and softplus as the checkpoint reader codes them, in closed form */
  g_assert_cmpfloat (rpe_fit_sigmoid (0), ==, 0.5);
  g_assert_cmpfloat_with_epsilon (rpe_fit_softplus (0), log (2.0), 1e-16);
  g_assert_cmpfloat_with_epsilon (rpe_fit_softplus (50), 50, 1e-14);
  /* the bounds stay finite */
  g_assert_true (isfinite (rpe_fit_raw_freq (0)) && isfinite (rpe_fit_raw_freq (0.5)));
  g_assert_true (isfinite (rpe_fit_raw_gain (0)) && isfinite (rpe_fit_raw_gate (1)));
  g_assert_cmpfloat (rpe_fit_sigmoid (rpe_fit_raw_freq (0)) / 2, <, 1e-11);
  g_assert_cmpfloat (rpe_fit_softplus (rpe_fit_raw_gain (0)), <, 1e-29);
}

static void
test_bad_input (void)
{
  double b[9] = { 0, 1, NAN, 3, 4, 5, 6, 7, 8 };
  RpeFitConfig cfg = { RPE_SPE_SINE, 1, 2, 2, false, 0 };
  RpeSpeParams p;

  g_assert_cmpint (rpe_fit_spe (&cfg, 5, b, &p, NULL), ==, RPE_ERROR_NOT_FINITE);
  g_assert_cmpint (rpe_fit_spe (&cfg, 0, b, &p, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  cfg.size = 0;
  b[2] = 2;
  g_assert_cmpint (rpe_fit_spe (&cfg, 5, b, &p, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  cfg = (RpeFitConfig) { RPE_SPE_SINE, 1, SIZE_MAX / 2, 4, false, 0 };
  g_assert_cmpint (rpe_fit_spe (&cfg, 5, b, &p, NULL), ==, RPE_ERROR_OVERFLOW);
  /* a constant target: error 0 for a constant fit */
  {
    double c[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    g_assert_cmpfloat (rpe_fit_relative_error (1, 5, c, c), ==, 0);
  }
}

/* A target with nothing to fit is refused, not fitted with "relative error inf":
 * all zeros, a constant, deviations below float32's normal range, and ALiBi
 * slopes of 0 (negative slopes are not ALiBi). */
static void
test_degenerate_target (void)
{
  const gsize H = 2, n = 12, len = 2 * n - 1;
  double t[2 * 23];
  RpeFitConfig cfg = { RPE_SPE_SINE, H, 4, 3, FALSE, 0 };
  RpeSpeParams p;
  const double slopes0[2] = { 0.0, 0.0 }, slopes_neg[2] = { 0.5, -1.0 };

  for (gsize i = 0; i < H * len; i++)
    t[i] = 0.0;
  g_assert_cmpint (rpe_fit_target_check (H, n, t), ==, RPE_ERROR_DEGENERATE);
  g_assert_cmpint (rpe_fit_spe (&cfg, n, t, &p, NULL), ==, RPE_ERROR_DEGENERATE);
  for (gsize i = 0; i < H * len; i++)
    t[i] = 7.5;
  g_assert_cmpint (rpe_fit_target_check (H, n, t), ==, RPE_ERROR_DEGENERATE);
  /* subnormal in float32 (and so in what the parameters can hold) */
  for (gsize i = 0; i < H * len; i++)
    t[i] = (i % 3) * 1e-40;
  g_assert_cmpint (rpe_fit_target_check (H, n, t), ==, RPE_ERROR_DEGENERATE);
  cfg.method = RPE_SPE_CONV;
  g_assert_cmpint (rpe_fit_spe (&cfg, n, t, &p, NULL), ==, RPE_ERROR_DEGENERATE);
  /* small but normal: fitted */
  for (gsize i = 0; i < H * len; i++)
    t[i] = (i % 3) * 1e-30;
  g_assert_cmpint (rpe_fit_target_check (H, n, t), ==, RPE_OK);

  g_assert_cmpint (rpe_fit_target_alibi (H, n, slopes0, t), ==, RPE_ERROR_DEGENERATE);
  g_assert_cmpint (rpe_fit_target_alibi (H, n, slopes_neg, t), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (rpe_status_to_string (RPE_ERROR_DEGENERATE), "degenerate"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/fit/target/alibi", test_alibi);
  g_test_add_func ("/fit/target/t5", test_t5);
  g_test_add_func ("/fit/target/kerple-centred", test_kerple_centred);
  g_test_add_func ("/fit/profile/engine", test_profile_vs_engine);
  g_test_add_func ("/fit/sine/recovers", test_sine_recovers);
  g_test_add_func ("/fit/conv/optimum", test_conv_optimum);
  g_test_add_func ("/fit/raw-transforms", test_raw_transforms);
  g_test_add_func ("/fit/bad-input", test_bad_input);
  g_test_add_func ("/fit/degenerate-target", test_degenerate_target);
  return g_test_run ();
}

/* test-core-noise.c: noise schemes (core/rpe-noise, issue 16).
 *
 * iid is the plain draw bit for bit; orthogonal frames satisfy Z Z^T = R I and make sine
 * SPE's empirical template equal the analytic one for R >= 2K (+1 gated); every scheme is
 * unbiased (the mean of many draws' empirical templates tends to the analytic template,
 * checked entry-wise against the draws' own standard error); antithetic pairs; Sobol'
 * points keep their (0, m, 1)-net structure under the digital shift; and the error curves
 * of rpe_curve_error_vs_r per scheme. */
#include "config.h"

#include <glib.h>
#include <math.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "rpe-curves.h"
#include "rpe-noise.h"
#include "rpe-rng.h"
#include "rpe-spe.h"

static void
make_params (RpeSpeParams *p, RpeSpeMethod method, size_t H, size_t D, size_t size, bool gated, uint64_t seed)
{
  g_assert_cmpint (rpe_spe_params_init (p, method, H, D, size, gated), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_params_random (p, seed), ==, RPE_OK);
}

static void
test_names (void)
{
  RpeNoiseScheme s;

  for (int i = 0; i < RPE_NOISE_N_SCHEMES; i++)
    {
      g_assert_true (rpe_noise_scheme_from_string (rpe_noise_scheme_to_string (i), &s));
      g_assert_cmpint (s, ==, i);
    }
  g_assert_false (rpe_noise_scheme_from_string ("gaussian", &s));
  g_assert_false (rpe_noise_scheme_from_string (NULL, &s));
  g_assert_null (rpe_noise_scheme_to_string (RPE_NOISE_N_SCHEMES));
}

/* iid = rpe_spe_noise_fill + rpe_spe_gate_noise_fill, bit for bit */
static void
test_iid_identical (void)
{
  for (int method = 0; method < 2; method++)
    {
      RpeSpeParams p;
      size_t n = 20, r = 7, count;
      float *z1, *z2, *e1, *e2;

      make_params (&p, method ? RPE_SPE_CONV : RPE_SPE_SINE, 2, 3, method ? 5 : 4, true, 3);
      g_assert_cmpint (rpe_spe_noise_size (&p, n, r, &count), ==, RPE_OK);
      z1 = g_new (float, count);
      z2 = g_new (float, count);
      e1 = g_new (float, 6 * r);
      e2 = g_new (float, 6 * r);
      g_assert_cmpint (rpe_spe_noise_fill (&p, n, r, 42, z1), ==, RPE_OK);
      g_assert_cmpint (rpe_spe_gate_noise_fill (&p, r, 42, e1), ==, RPE_OK);
      g_assert_cmpint (rpe_noise_fill (RPE_NOISE_IID, &p, n, r, 42, z2, e2), ==, RPE_OK);
      g_assert_cmpmem (z1, count * sizeof (float), z2, count * sizeof (float));
      g_assert_cmpmem (e1, 6 * r * sizeof (float), e2, 6 * r * sizeof (float));

      /* conv: the samples the codes never read stay the plain draw under every scheme */
      if (method == 1)
        for (int s = 1; s < RPE_NOISE_N_SCHEMES; s++)
          {
            size_t L = 5, len = n + 4 * L;
            g_assert_cmpint (rpe_noise_fill (s, &p, n, r, 42, z2, e2), ==, RPE_OK);
            for (size_t i = 0; i < count; i++)
              {
                size_t t = i % len;
                if (t < L || t >= n + 2 * L - 1)
                  g_assert_cmpfloat (z1[i], ==, z2[i]);
              }
          }
      g_free (z1);
      g_free (z2);
      g_free (e1);
      g_free (e2);
      rpe_spe_params_clear (&p);
    }
}

/* Orthogonal: Z Z^T = R I for R >= p, and the sine empirical template is exact */
static void
test_orthogonal_exact (void)
{
  for (int gated = 0; gated < 2; gated++)
    {
      size_t H = 2, D = 3, K = 4, n = 24, p = 2 * K + (size_t) gated;
      size_t rs[3] = { p, p + 3, 3 * p };

      for (int ri = 0; ri < 3; ri++)
        {
          RpeSpeParams prm;
          size_t r = rs[ri], count, nn = n * n;
          float *z, *eps, *qbar, *kbar, *phat, *ptrue;
          double worst = 0;

          make_params (&prm, RPE_SPE_SINE, H, D, K, gated, 5 + ri);
          g_assert_cmpint (rpe_spe_noise_size (&prm, n, r, &count), ==, RPE_OK);
          z = g_new (float, count);
          eps = g_new (float, H * D * r);
          qbar = g_new (float, n * H * D * r);
          kbar = g_new (float, n * H * D * r);
          phat = g_new (float, nn);
          ptrue = g_new (float, nn);
          g_assert_cmpint (rpe_noise_fill (RPE_NOISE_ORTHOGONAL, &prm, n, r, 9, z, gated ? eps : NULL), ==, RPE_OK);

          /* the frame: sum_r z_r z_r^T = R I per cell */
          for (size_t c = 0; c < H * D; c++)
            for (size_t i = 0; i < p; i++)
              for (size_t j = 0; j < p; j++)
                {
                  double s = 0;
                  for (size_t k = 0; k < r; k++)
                    {
                      double a = i < 2 * K ? z[(c * 2 * K + i) * r + k] : eps[c * r + k];
                      double b = j < 2 * K ? z[(c * 2 * K + j) * r + k] : eps[c * r + k];
                      s += a * b;
                    }
                  g_assert_cmpfloat_with_epsilon (s, i == j ? (double) r : 0.0, 1e-5 * r);
                }

          g_assert_cmpint (rpe_spe_codes (&prm, n, r, z, qbar, kbar, NULL), ==, RPE_OK);
          if (gated)
            g_assert_cmpint (rpe_spe_gate_codes (&prm, n, r, eps, qbar, kbar), ==, RPE_OK);
          for (size_t h = 0; h < H; h++)
            for (size_t d = 0; d < D; d++)
              {
                double num = 0, den = 0;
                g_assert_cmpint (rpe_spe_empirical_template (n, H, D, r, qbar, kbar, h, d, phat), ==, RPE_OK);
                g_assert_cmpint (rpe_spe_template (&prm, h, d, n, gated, ptrue), ==, RPE_OK);
                for (size_t i = 0; i < nn; i++)
                  {
                    num += (phat[i] - ptrue[i]) * (double) (phat[i] - ptrue[i]);
                    den += ptrue[i] * (double) ptrue[i];
                  }
                worst = fmax (worst, sqrt (num / den));
              }
          if (g_test_verbose ())
            g_printerr ("orthogonal sine K=%zu gated=%d R=%zu: worst relative error %.3g\n", K, gated, r, worst);
          g_assert_cmpfloat (worst, <, 1e-5);

          g_free (z);
          g_free (eps);
          g_free (qbar);
          g_free (kbar);
          g_free (phat);
          g_free (ptrue);
          rpe_spe_params_clear (&prm);
        }
    }
}

/* Every scheme is unbiased: over S draws (seeds), the mean empirical template of one cell
 * approaches the analytic one.  Tolerance: 6 standard errors of the mean (from the draws
 * themselves) per entry, plus float rounding; regimes where the scheme is not exact (sine
 * R < 2K, conv R < N + L - 1). */
static void
check_unbiased (RpeSpeMethod method, bool gated, RpeNoiseScheme scheme)
{
  size_t H = 1, D = 1, n = 12, r = method == RPE_SPE_SINE ? 3 : 4, S = 1500, nn = n * n, count;
  RpeSpeParams p;
  float *z, *eps, *qbar, *kbar, *phat, *ptrue;
  double *sum, *sum2;
  double worst = 0;

  make_params (&p, method, H, D, method == RPE_SPE_SINE ? 4 : 5, gated, 21);
  g_assert_cmpint (rpe_spe_noise_size (&p, n, r, &count), ==, RPE_OK);
  z = g_new (float, count);
  eps = g_new (float, r);
  qbar = g_new (float, n * r);
  kbar = g_new (float, n * r);
  phat = g_new (float, nn);
  ptrue = g_new (float, nn);
  sum = g_new0 (double, nn);
  sum2 = g_new0 (double, nn);
  for (size_t s = 0; s < S; s++)
    {
      g_assert_cmpint (rpe_noise_fill (scheme, &p, n, r, 1000 + s, z, gated ? eps : NULL), ==, RPE_OK);
      g_assert_cmpint (rpe_spe_codes (&p, n, r, z, qbar, kbar, NULL), ==, RPE_OK);
      if (gated)
        g_assert_cmpint (rpe_spe_gate_codes (&p, n, r, eps, qbar, kbar), ==, RPE_OK);
      g_assert_cmpint (rpe_spe_empirical_template (n, H, D, r, qbar, kbar, 0, 0, phat), ==, RPE_OK);
      for (size_t i = 0; i < nn; i++)
        {
          sum[i] += phat[i];
          sum2[i] += (double) phat[i] * phat[i];
        }
    }
  g_assert_cmpint (rpe_spe_template (&p, 0, 0, n, gated, ptrue), ==, RPE_OK);
  for (size_t i = 0; i < nn; i++)
    {
      double mean = sum[i] / (double) S, var = fmax (0, sum2[i] / (double) S - mean * mean);
      double se = sqrt (var / (double) (S - 1));
      double dev = fabs (mean - ptrue[i]) / (6 * se + 1e-5 * (1 + fabs (ptrue[i])));
      worst = fmax (worst, dev);
    }
  if (g_test_verbose ())
    g_printerr ("%s gated=%d %s: worst |mean - P| / (6 se) = %.3f\n", method == RPE_SPE_SINE ? "sine" : "conv",
                gated, rpe_noise_scheme_to_string (scheme), worst);
  g_assert_cmpfloat (worst, <, 1.0);
  g_free (z);
  g_free (eps);
  g_free (qbar);
  g_free (kbar);
  g_free (phat);
  g_free (ptrue);
  g_free (sum);
  g_free (sum2);
  rpe_spe_params_clear (&p);
}

static void
test_unbiased (void)
{
  for (int s = 0; s < RPE_NOISE_N_SCHEMES; s++)
    for (int gated = 0; gated < 2; gated++)
      {
        check_unbiased (RPE_SPE_SINE, gated, s);
        check_unbiased (RPE_SPE_CONV, gated, s);
      }
}

/* Second moments of single coordinates over many cells: E[z^2] = 1, E[z_i z_j] = 0 */
static void
test_moments (void)
{
  for (int s = 1; s < RPE_NOISE_N_SCHEMES; s++)
    {
      size_t p = 5, r = 3, cells = 20000;
      double *b = g_new (double, p * r);
      double m2 = 0, cross = 0;

      for (size_t c = 0; c < cells; c++)
        {
          float f[15];
          rpe_rng_normal (5, 99, c * p * r, f, p * r);
          for (size_t i = 0; i < p * r; i++)
            b[i] = f[i];
          g_assert_cmpint (rpe_noise_transform (s, 77, c, p, r, b), ==, RPE_OK);
          m2 += b[0] * b[0];
          cross += b[0] * b[r];   /* coordinates 0 and 1 of realisation 0 */
        }
      m2 /= (double) cells;
      cross /= (double) cells;
      if (g_test_verbose ())
        g_printerr ("%s: E[z0^2] ~ %.4f, E[z0 z1] ~ %.4f\n", rpe_noise_scheme_to_string (s), m2, cross);
      /* standard errors ~ sqrt(2/20000) = 0.01 */
      g_assert_cmpfloat (fabs (m2 - 1), <, 0.06);
      g_assert_cmpfloat (fabs (cross), <, 0.05);
      g_free (b);
    }
}

static void
test_antithetic_sobol (void)
{
  size_t p = 6, r = 16;
  double *b = g_new (double, p * r);

  for (size_t i = 0; i < p * r; i++)
    b[i] = (double) i * 0.1 - 3;
  g_assert_cmpint (rpe_noise_transform (RPE_NOISE_ANTITHETIC, 1, 0, p, r, b), ==, RPE_OK);
  for (size_t i = 0; i < p; i++)
    for (size_t k = 0; k + 1 < r; k += 2)
      {
        g_assert_cmpfloat (b[i * r + k], ==, (double) (i * r + k) * 0.1 - 3);
        g_assert_cmpfloat (b[i * r + k + 1], ==, -b[i * r + k]);
      }

  /* Sobol' with a digital shift: in every dimension, the 16 points fall one in each of the
   * 16 intervals [j/16, (j+1)/16) (a (0, 4, 1)-net stays one under XOR) */
  for (uint64_t cell = 0; cell < 5; cell++)
    {
      g_assert_cmpint (rpe_noise_transform (RPE_NOISE_SOBOL, 3, cell, p, r, b), ==, RPE_OK);
      for (size_t i = 0; i < p; i++)
        {
          int seen[16] = { 0 };
          for (size_t k = 0; k < r; k++)
            {
              double u = gsl_cdf_ugaussian_P (b[i * r + k]);
              int j = (int) floor (u * 16);
              g_assert_cmpint (j, >=, 0);
              g_assert_cmpint (j, <, 16);
              seen[j]++;
            }
          for (int j = 0; j < 16; j++)
            g_assert_cmpint (seen[j], ==, 1);
        }
    }
  /* two cells get different shifts */
  {
    double *b2 = g_new (double, p * r);
    g_assert_cmpint (rpe_noise_transform (RPE_NOISE_SOBOL, 3, 0, p, r, b), ==, RPE_OK);
    g_assert_cmpint (rpe_noise_transform (RPE_NOISE_SOBOL, 3, 1, p, r, b2), ==, RPE_OK);
    g_assert_true (memcmp (b, b2, p * r * sizeof (double)) != 0);
    g_free (b2);
  }
  g_assert_cmpint (rpe_noise_transform (RPE_NOISE_N_SCHEMES, 3, 0, p, r, b), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_noise_transform (RPE_NOISE_SOBOL, 3, 0, 0, r, b), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_free (b);
}

/* The error curves per scheme (rpe_curve_error_vs_r): orthogonal sine is exact from
 * R = 2K (+1), no scheme is worse than a few times iid, and iid is the default. */
static void
test_error_curves (void)
{
  for (int method = 0; method < 2; method++)
    for (int gated = 0; gated < 2; gated++)
      {
        RpeSpeParams p;
        size_t K = 3, rl[6] = { 2, 4, 6, 7, 16, 64 };
        double mean[RPE_NOISE_N_SCHEMES][6];

        make_params (&p, method ? RPE_SPE_CONV : RPE_SPE_SINE, 2, 2, method ? 6 : K, gated, 8);
        for (int s = 0; s < RPE_NOISE_N_SCHEMES; s++)
          {
            RpeCurveErrorConfig cfg = { &p, 16, gated, RPE_CURVE_ALL, RPE_CURVE_ALL, 8, 100, s };
            g_assert_cmpint (rpe_curve_error_vs_r (&cfg, rl, 6, mean[s], NULL, NULL, NULL), ==, RPE_OK);
            if (g_test_verbose ())
              {
                g_printerr ("%s gated=%d %-10s", method ? "conv" : "sine", gated, rpe_noise_scheme_to_string (s));
                for (int i = 0; i < 6; i++)
                  g_printerr (" R=%zu:%.3g", rl[i], mean[s][i]);
                g_printerr ("\n");
              }
          }
        {
          /* iid through the scheme field is the default config's curve */
          RpeCurveErrorConfig cfg0 = { &p, 16, gated, RPE_CURVE_ALL, RPE_CURVE_ALL, 8, 100 };
          double m0[6];
          g_assert_cmpint (rpe_curve_error_vs_r (&cfg0, rl, 6, m0, NULL, NULL, NULL), ==, RPE_OK);
          for (int i = 0; i < 6; i++)
            g_assert_cmpfloat (m0[i], ==, mean[RPE_NOISE_IID][i]);
        }
        for (int i = 0; i < 6; i++)
          {
            for (int s = 1; s < RPE_NOISE_N_SCHEMES; s++)
              g_assert_cmpfloat (mean[s][i], <, 3 * mean[RPE_NOISE_IID][i] + 1e-6);
            if (method == 0 && rl[i] >= 2 * K + (size_t) gated)
              g_assert_cmpfloat (mean[RPE_NOISE_ORTHOGONAL][i], <, 1e-5);
          }
        /* iid at R = 64 is far from exact: the orthogonal gain is real */
        g_assert_cmpfloat (mean[RPE_NOISE_IID][5], >, 1e-2);
        rpe_spe_params_clear (&p);
      }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/noise/names", test_names);
  g_test_add_func ("/noise/iid-identical", test_iid_identical);
  g_test_add_func ("/noise/orthogonal-exact", test_orthogonal_exact);
  g_test_add_func ("/noise/unbiased", test_unbiased);
  g_test_add_func ("/noise/moments", test_moments);
  g_test_add_func ("/noise/antithetic-sobol", test_antithetic_sobol);
  g_test_add_func ("/noise/error-curves", test_error_curves);
  return g_test_run ();
}

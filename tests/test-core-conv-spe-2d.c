/* test-core-conv-spe-2d.c: 2-D convSPE (images) against sums written here from
 * docs/math.md, section 2 generalised to 2-D (see rpe-conv-spe-2d.h). */
#include "config.h"

#include <glib.h>
#include <math.h>
#include <string.h>

#include "rpe-conv-spe-2d.h"
#include "rpe-rng.h"
#include "rpe-spe.h"
#include "rpe-test-utils.h"

static void
make_params (RpeSpeParams *p, size_t h, size_t d, size_t l1, size_t l2, gboolean gated, uint64_t seed)
{
  g_assert_cmpint (rpe_conv_spe_2d_params_init (p, h, d, l1, l2, gated), ==, RPE_OK);
  g_assert_cmpint (rpe_conv_spe_2d_params_random (p, seed), ==, RPE_OK);
  g_assert_true (rpe_conv_spe_is_2d (p));
  g_assert_cmpuint (p->kernel, ==, l1);
  g_assert_cmpuint (p->kernel_cols, ==, l2);
}

/* Qbar[(i,j), c, r] = s sum_{a,b} w[c, a, b] z[r, c, i + L1 + a, j + L2 + b], naive, in double */
static double
naive_code (const RpeSpeParams *p, const float *w, const float *z, size_t n1, size_t n2, size_t r,
            size_t ri, size_t c, size_t i, size_t j)
{
  size_t l1 = p->kernel, l2 = p->kernel_cols, hd = p->n_heads * p->n_features;
  size_t z1 = n1 + 4 * l1, z2 = n2 + 4 * l2;
  double acc = 0, s = 1.0 / sqrt (sqrt ((double) r * (double) p->n_features));

  for (size_t a = 0; a < l1; a++)
    for (size_t b = 0; b < l2; b++)
      acc += (double) w[c * l1 * l2 + a * l2 + b]
             * z[((ri * hd + c) * z1 + (i + l1 + a)) * z2 + (j + l2 + b)];
  return s * acc;
}

static void
check_codes (size_t n1, size_t n2, size_t l1, size_t l2, RpeConvSpePath path)
{
  const size_t h = 2, d = 2, r = 3;
  RpeSpeParams p;
  size_t count, n = n1 * n2, hd = h * d;
  float *z, *qbar, *kbar;
  double worst = 0, scale = 0;

  make_params (&p, h, d, l1, l2, FALSE, 5);
  g_assert_cmpint (rpe_conv_spe_2d_noise_size (&p, n1, n2, r, &count), ==, RPE_OK);
  g_assert_cmpuint (count, ==, r * hd * (n1 + 4 * l1) * (n2 + 4 * l2));
  z = g_new (float, count);
  qbar = g_new (float, n * hd * r);
  kbar = g_new (float, n * hd * r);
  g_assert_cmpint (rpe_conv_spe_2d_noise_fill (&p, n1, n2, r, 11, z), ==, RPE_OK);
  g_assert_cmpint (rpe_conv_spe_2d_codes (&p, n1, n2, r, z, qbar, kbar, path, NULL), ==, RPE_OK);
  for (size_t i = 0; i < n1; i++)
    for (size_t j = 0; j < n2; j++)
      for (size_t c = 0; c < hd; c++)
        for (size_t ri = 0; ri < r; ri++)
          {
            size_t at = ((i * n2 + j) * hd + c) * r + ri;
            double q = naive_code (&p, p.wq, z, n1, n2, r, ri, c, i, j);
            double k = naive_code (&p, p.wk, z, n1, n2, r, ri, c, i, j);

            worst = MAX (worst, MAX (fabs (qbar[at] - q), fabs (kbar[at] - k)));
            scale = MAX (scale, MAX (fabs (q), fabs (k)));
          }
  g_test_message ("%zux%zu grid, %zux%zu filter, path %d: max error %.3g of %.3g", n1, n2, l1, l2, path, worst, scale);
  g_assert_cmpfloat (worst, <, 2e-6 * scale);
  g_free (z);
  g_free (qbar);
  g_free (kbar);
  rpe_spe_params_clear (&p);
}

static void
test_codes (void)
{
  /* direct and FFT against the naive sums, square and oblong grids and filters,
   * a filter as large as the grid, and one larger than it */
  check_codes (5, 7, 3, 4, RPE_CONV_SPE_PATH_DIRECT);
  check_codes (5, 7, 3, 4, RPE_CONV_SPE_PATH_FFT);
  check_codes (9, 6, 9, 9, RPE_CONV_SPE_PATH_AUTO);   /* 81 taps: FFT */
  check_codes (9, 6, 9, 9, RPE_CONV_SPE_PATH_DIRECT);
  check_codes (4, 3, 6, 5, RPE_CONV_SPE_PATH_FFT);
  check_codes (1, 8, 1, 3, RPE_CONV_SPE_PATH_FFT);
  g_assert_cmpint (rpe_conv_spe_2d_choose_path (9, 6, 9, 9), ==, RPE_CONV_SPE_PATH_FFT);
  g_assert_cmpint (rpe_conv_spe_2d_choose_path (9, 6, 3, 3), ==, RPE_CONV_SPE_PATH_DIRECT);
}

/* P_c((i,j),(i',j')) = sum_{a,b} wq[a,b] wk[a + di, b + dj], naive */
static double
naive_template (const RpeSpeParams *p, size_t c, long di, long dj)
{
  long l1 = (long) p->kernel, l2 = (long) p->kernel_cols;
  const float *wq = p->wq + c * (size_t) (l1 * l2), *wk = p->wk + c * (size_t) (l1 * l2);
  double acc = 0;

  for (long a = 0; a < l1; a++)
    for (long b = 0; b < l2; b++)
      if (a + di >= 0 && a + di < l1 && b + dj >= 0 && b + dj < l2)
        acc += (double) wq[a * l2 + b] * wk[(a + di) * l2 + (b + dj)];
  return acc;
}

static void
test_template (void)
{
  const size_t n1 = 6, n2 = 5, h = 2, d = 3, n = n1 * n2;
  RpeSpeParams p;
  float *lags = g_new (float, (2 * n1 - 1) * (2 * n2 - 1)), *rows = g_new (float, 7 * n);

  make_params (&p, h, d, 3, 4, TRUE, 9);
  for (int gated = 0; gated < 2; gated++)
    for (size_t hh = 0; hh < h; hh++)
      for (size_t dd = 0; dd < d; dd++)
        {
          size_t c = hh * d + dd;
          double g = gated ? p.gate[c] : 0;

          g_assert_cmpint (rpe_conv_spe_2d_template_lags (&p, hh, dd, n1, n2, gated, lags), ==, RPE_OK);
          for (long di = -(long) (n1 - 1); di < (long) n1; di++)
            for (long dj = -(long) (n2 - 1); dj < (long) n2; dj++)
              {
                double want = (1 - g) * naive_template (&p, c, di, dj) + g;
                float got = lags[(size_t) (di + (long) n1 - 1) * (2 * n2 - 1) + (size_t) (dj + (long) n2 - 1)];

                g_assert_cmpfloat_with_epsilon (got, want, 1e-6 * (1 + fabs (want)));
                if (!gated && (labs (di) >= 3 || labs (dj) >= 4))
                  g_assert_cmpfloat (got, ==, 0.0f);   /* vanishing beyond the filter */
              }
          /* the (N, N) template, rows 11..17, over every key position */
          g_assert_cmpint (rpe_conv_spe_2d_template_rows (lags, n1, n2, 11, 7, rows), ==, RPE_OK);
          for (size_t t = 0; t < 7; t++)
            for (size_t q = 0; q < n; q++)
              {
                size_t pp = 11 + t;
                long di = (long) (pp / n2) - (long) (q / n2), dj = (long) (pp % n2) - (long) (q % n2);
                double want = (1 - g) * naive_template (&p, c, di, dj) + g;

                g_assert_cmpfloat_with_epsilon (rows[t * n + q], want, 1e-6 * (1 + fabs (want)));
              }
        }
  g_free (lags);
  g_free (rows);
  rpe_spe_params_clear (&p);
}

/* relative Frobenius error of the empirical gated template against the analytic one,
 * over every (h, d) */
static double
empirical_error (const RpeSpeParams *p, size_t n1, size_t n2, size_t r, uint64_t seed)
{
  size_t n = n1 * n2, hd = p->n_heads * p->n_features, count;
  float *z, *qbar = g_new (float, n * hd * r), *kbar = g_new (float, n * hd * r);
  float *eps = g_new (float, hd * r), *emp = g_new (float, n * n), *lags = g_new (float, (2 * n1 - 1) * (2 * n2 - 1));
  float *ana = g_new (float, n * n);
  double num = 0, den = 0;

  g_assert_cmpint (rpe_conv_spe_2d_noise_size (p, n1, n2, r, &count), ==, RPE_OK);
  z = g_new (float, count);
  g_assert_cmpint (rpe_conv_spe_2d_noise_fill (p, n1, n2, r, seed, z), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_gate_noise_fill (p, r, seed, eps), ==, RPE_OK);
  g_assert_cmpint (rpe_conv_spe_2d_codes (p, n1, n2, r, z, qbar, kbar, RPE_CONV_SPE_PATH_AUTO, NULL), ==, RPE_OK);
  g_assert_cmpint (rpe_conv_spe_2d_gate_codes (p, n1, n2, r, eps, qbar, kbar), ==, RPE_OK);
  for (size_t h = 0; h < p->n_heads; h++)
    for (size_t d = 0; d < p->n_features; d++)
      {
        g_assert_cmpint (rpe_spe_empirical_template_rows (n, p->n_heads, p->n_features, r, qbar, kbar, h, d, 0, n, emp),
                         ==, RPE_OK);
        g_assert_cmpint (rpe_conv_spe_2d_template_lags (p, h, d, n1, n2, TRUE, lags), ==, RPE_OK);
        g_assert_cmpint (rpe_conv_spe_2d_template_rows (lags, n1, n2, 0, n, ana), ==, RPE_OK);
        for (size_t i = 0; i < n * n; i++)
          {
            num += ((double) emp[i] - ana[i]) * ((double) emp[i] - ana[i]);
            den += (double) ana[i] * ana[i];
          }
      }
  g_free (z);
  g_free (qbar);
  g_free (kbar);
  g_free (eps);
  g_free (emp);
  g_free (lags);
  g_free (ana);
  return sqrt (num / den);
}

static void
test_empirical (void)
{
  /* E[empirical] = analytic, error ~ 1/sqrt(R): averaged over 4 draws, 16x more
   * realizations must cut the error by about 4 (accepted: 2.5 .. 6.5) */
  const size_t n1 = 5, n2 = 4, rs[] = { 32, 512 };
  RpeSpeParams p;
  double err[2] = { 0, 0 };

  make_params (&p, 2, 3, 3, 2, TRUE, 21);
  for (size_t k = 0; k < 2; k++)
    {
      for (uint64_t seed = 0; seed < 4; seed++)
        err[k] += empirical_error (&p, n1, n2, rs[k], 100 + seed) / 4;
      g_test_message ("R = %zu: relative error %.4f (x sqrt(R): %.3f)", rs[k], err[k], err[k] * sqrt ((double) rs[k]));
    }
  g_assert_cmpfloat (err[1], <, 0.25);
  g_assert_cmpfloat (err[0] / err[1], >, 2.5);
  g_assert_cmpfloat (err[0] / err[1], <, 6.5);
  rpe_spe_params_clear (&p);
}

static void
test_invalid (void)
{
  RpeSpeParams p, copy;
  float out[64], z[4] = { 0 };
  size_t count;

  make_params (&p, 1, 2, 2, 3, FALSE, 1);
  /* the 1-D entry points refuse 2-D filters instead of misreading them */
  g_assert_cmpint (rpe_spe_params_validate (&p), ==, RPE_ERROR_UNSUPPORTED);
  g_assert_cmpint (rpe_spe_template_lags (&p, 0, 0, 4, FALSE, out), ==, RPE_ERROR_UNSUPPORTED);
  g_assert_cmpint (rpe_conv_spe_2d_validate (&p), ==, RPE_OK);
  /* a copy keeps the 2-D shape and all L1 * L2 taps */
  g_assert_cmpint (rpe_spe_params_copy (&copy, &p), ==, RPE_OK);
  g_assert_cmpuint (copy.kernel, ==, 2);
  g_assert_cmpuint (copy.kernel_cols, ==, 3);
  g_assert_cmpmem (copy.wk, 12 * sizeof (float), p.wk, 12 * sizeof (float));
  rpe_spe_params_clear (&copy);
  /* sizes */
  g_assert_cmpint (rpe_conv_spe_2d_noise_size (&p, 0, 3, 1, &count), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_conv_spe_2d_noise_size (&p, SIZE_MAX / 2, SIZE_MAX / 2, 1, &count), ==, RPE_ERROR_OVERFLOW);
  g_assert_cmpint (rpe_conv_spe_2d_codes (&p, 2, 2, 1, NULL, out, out, RPE_CONV_SPE_PATH_AUTO, NULL), ==,
                   RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_conv_spe_2d_template_lags (&p, 1, 0, 2, 2, FALSE, out), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_conv_spe_2d_template_rows (out, 2, 2, 3, 2, out), ==, RPE_ERROR_INVALID_ARGUMENT);
  p.wq[1] = NAN;
  g_assert_cmpint (rpe_conv_spe_2d_codes (&p, 1, 1, 1, z, out, out, RPE_CONV_SPE_PATH_AUTO, NULL), ==,
                   RPE_ERROR_NOT_FINITE);
  rpe_spe_params_clear (&p);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/core/conv-spe-2d/codes", test_codes);
  g_test_add_func ("/core/conv-spe-2d/template", test_template);
  g_test_add_func ("/core/conv-spe-2d/empirical", test_empirical);
  g_test_add_func ("/core/conv-spe-2d/invalid", test_invalid);
  return g_test_run ();
}

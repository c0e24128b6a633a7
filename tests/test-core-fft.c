#include "config.h"

#include <glib.h>
#include <math.h>

#include "rpe-alloc.h"
#include "rpe-fft.h"
#include "rpe-rng.h"

/* The r2c transform against the naive DFT X_k = sum_j x_j e^{-2 pi i j k / n}, and the round trip. */
static void
check_size (size_t n)
{
  RpeStatus st;
  RpeFftPlan *plan = rpe_fft_plan_new (n, RPE_FFT_ESTIMATE, &st);
  float *x = g_new (float, n), *y = g_new (float, n);
  fftwf_complex *X = fftwf_alloc_complex (n / 2 + 1);
  double scale = 0, err = 0;

  g_assert_cmpint (st, ==, RPE_OK);
  g_assert_nonnull (plan);
  g_assert_cmpuint (rpe_fft_plan_size (plan), ==, n);
  rpe_rng_normal (n, 99, 0, x, n);
  rpe_fft_forward (plan, x, X);
  for (size_t k = 0; k <= n / 2; k++)
    {
      double re = 0, im = 0;
      for (size_t j = 0; j < n; j++)
        {
          double a = -2.0 * M_PI * (double) ((j * k) % n) / (double) n;
          re += x[j] * cos (a);
          im += x[j] * sin (a);
        }
      scale = fmax (scale, hypot (re, im));
      err = fmax (err, hypot (re - X[k][0], im - X[k][1]));
    }
  g_assert_cmpfloat (err, <=, 1e-5 * fmax (scale, 1.0) * log2 ((double) n + 1));

  rpe_fft_inverse (plan, X, y);
  for (size_t j = 0; j < n; j++)
    g_assert_cmpfloat_with_epsilon (y[j] / (double) n, x[j], 1e-5 * (1 + fabs (x[j])) * log2 ((double) n + 1));

  rpe_fft_plan_free (plan);
  fftwf_free (X);
  g_free (x);
  g_free (y);
}

static void
test_dft (void)
{
  static const size_t sizes[] = { 1, 2, 3, 7, 16, 17, 97, 128, 210, 1009 };

  for (gsize i = 0; i < G_N_ELEMENTS (sizes); i++)
    check_size (sizes[i]);
}

static void
test_good_size (void)
{
  g_assert_cmpuint (rpe_fft_good_size (0), ==, 1);
  g_assert_cmpuint (rpe_fft_good_size (1), ==, 1);
  g_assert_cmpuint (rpe_fft_good_size (11), ==, 12);
  g_assert_cmpuint (rpe_fft_good_size (1025), ==, 1029);   /* 3 * 7^3 */
  for (size_t n = 1; n < 5000; n += 37)
    {
      size_t m = rpe_fft_good_size (n), r;
      g_assert_cmpuint (m, >=, n);
      g_assert_cmpuint (m, <=, n + n / 4 + 2);
      r = m;
      while (r % 2 == 0) r /= 2;
      while (r % 3 == 0) r /= 3;
      while (r % 5 == 0) r /= 5;
      while (r % 7 == 0) r /= 7;
      g_assert_cmpuint (r, ==, 1);
    }
}

static void
test_bad_size (void)
{
  RpeStatus st = RPE_OK;

  g_assert_null (rpe_fft_plan_new (0, 0, &st));
  g_assert_cmpint (st, ==, RPE_ERROR_INVALID_ARGUMENT);
  rpe_fft_plan_free (NULL);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/core/fft/naive-dft", test_dft);
  g_test_add_func ("/core/fft/good-size", test_good_size);
  g_test_add_func ("/core/fft/bad-size", test_bad_size);
  return g_test_run ();
}

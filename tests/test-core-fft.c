#include "config.h"

#include <glib.h>
#include <math.h>
#include <string.h>

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

/* The naive DFT of (re + i im), exponent sign `sign`: X_k = sum_j x_j e^{sign 2 pi i j k / n}, in
 * double; returns max_k |X_k| (the scale of the bound below). */
static double
naive_dft (const float *re, const float *im, size_t n, int sign, double *xr, double *xi)
{
  double scale = 0;

  for (size_t k = 0; k < n; k++)
    {
      double sr = 0, si = 0;

      for (size_t j = 0; j < n; j++)
        {
          const double a = sign * 2.0 * M_PI * (double) ((j * k) % n) / (double) n;

          sr += re[j] * cos (a) - im[j] * sin (a);
          si += re[j] * sin (a) + im[j] * cos (a);
        }
      xr[k] = sr;
      xi[k] = si;
      scale = fmax (scale, hypot (sr, si));
    }
  return scale;
}

/* A float FFT's error is about u log2 n times the size of the data (Higham, section 24.1);
 * the bound of check_size above, with room. */
static double
fft_bound (double scale, size_t n)
{
  return 1e-5 * fmax (scale, 1.0) * log2 ((double) n + 1);
}

/* Complex-to-complex plans: forward (sign -1) and backward (sign +1) against the naive DFT,
 * the unnormalised round trip (n x), the input untouched (out of place), with and without
 * RPE_FFT_ALIGNED (on rpe_alloc's 64-byte aligned arrays). */
static void
check_c2c (size_t n, unsigned flags)
{
  RpeStatus st;
  RpeFftC2cPlan *plan = rpe_fft_c2c_plan_new (n, flags, &st);
  fftwf_complex *x = rpe_alloc (n, sizeof (fftwf_complex), &st), *y = rpe_alloc (n, sizeof (fftwf_complex), &st);
  fftwf_complex *z = rpe_alloc (n, sizeof (fftwf_complex), &st), *x0 = g_new (fftwf_complex, n);
  float *re = g_new (float, n), *im = g_new (float, n);
  double *xr = g_new (double, n), *xi = g_new (double, n);

  g_assert_nonnull (plan);
  g_assert_nonnull (x);
  rpe_rng_normal (n, 7, 0, re, n);
  rpe_rng_normal (n, 8, 0, im, n);
  for (size_t j = 0; j < n; j++)
    {
      x[j][0] = re[j];
      x[j][1] = im[j];
    }
  memcpy (x0, x, n * sizeof (fftwf_complex));
  for (int dir = 0; dir < 2; dir++)
    {
      const int sign = dir == 0 ? -1 : 1;
      const double scale = naive_dft (re, im, n, sign, xr, xi);
      double err = 0;

      if (dir == 0)
        rpe_fft_c2c_forward (plan, x, y);
      else
        rpe_fft_c2c_backward (plan, x, y);
      for (size_t k = 0; k < n; k++)
        err = fmax (err, hypot (xr[k] - y[k][0], xi[k] - y[k][1]));
      g_assert_cmpfloat (err, <=, fft_bound (scale, n));
      g_assert_cmpmem (x, n * sizeof (fftwf_complex), x0, n * sizeof (fftwf_complex));
    }
  /* backward (forward (x)) = n x */
  rpe_fft_c2c_forward (plan, x, y);
  rpe_fft_c2c_backward (plan, y, z);
  for (size_t j = 0; j < n; j++)
    {
      g_assert_cmpfloat (fabs (z[j][0] / (double) n - re[j]), <=, fft_bound (1 + fabs (re[j]), n));
      g_assert_cmpfloat (fabs (z[j][1] / (double) n - im[j]), <=, fft_bound (1 + fabs (im[j]), n));
    }
  rpe_fft_c2c_plan_free (plan);
  rpe_free (x);
  rpe_free (y);
  rpe_free (z);
  g_free (x0);
  g_free (re);
  g_free (im);
  g_free (xr);
  g_free (xi);
}

/* Split-format plans: the same checks with the real and imaginary parts in separate arrays at
 * the plan's separations (rpe-fft.h), including the use the conv encoding makes of them: two
 * overlapping real blocks of one buffer (inputs `in_sep` < n apart) as the real and imaginary
 * parts of one transform, whose two real results come back in the two outputs. */
static void
check_split (size_t n, size_t in_sep, unsigned flags)
{
  RpeStatus st;
  RpeFftSplitPlan *plan = in_sep == 0 ? rpe_fft_split_plan_new (n, flags, &st)
                          : rpe_fft_split_plan_new_sep (n, in_sep, (n + 15) & ~(size_t) 15, flags, &st);
  const size_t is = in_sep == 0 ? (n + 15) & ~(size_t) 15 : in_sep, os = (n + 15) & ~(size_t) 15;
  float *in = rpe_alloc (is + n, sizeof (float), &st), *out = rpe_alloc (os + n, sizeof (float), &st);
  float *back = rpe_alloc (os + n, sizeof (float), &st);
  float *ri = in, *ii = in + is, *ro = out, *io = out + os, *r2 = back, *i2 = back + os;
  float *r0 = g_new (float, n), *i0 = g_new (float, n), *all = g_new (float, is + n);
  double *xr = g_new (double, n), *xi = g_new (double, n);

  g_assert_nonnull (plan);
  g_assert_cmpuint (rpe_fft_split_plan_in_sep (plan), ==, is);
  g_assert_cmpuint (rpe_fft_split_plan_out_sep (plan), ==, os);
  g_assert_nonnull (back);
  rpe_rng_normal (n, 9, 0, in, is + n);
  memcpy (all, in, (is + n) * sizeof (float));
  memcpy (r0, ri, n * sizeof (float));
  memcpy (i0, ii, n * sizeof (float));
  for (int dir = 0; dir < 2; dir++)
    {
      const int sign = dir == 0 ? -1 : 1;
      const double scale = naive_dft (r0, i0, n, sign, xr, xi);
      double err = 0;

      if (dir == 0)
        rpe_fft_split_forward (plan, ri, ii, ro, io);
      else
        rpe_fft_split_backward (plan, ri, ii, ro, io);
      for (size_t k = 0; k < n; k++)
        err = fmax (err, hypot (xr[k] - ro[k], xi[k] - io[k]));
      g_assert_cmpfloat (err, <=, fft_bound (scale, n));
      g_assert_cmpmem (in, (is + n) * sizeof (float), all, (is + n) * sizeof (float));
    }
  /* backward (forward (a + i b)) = n a + i n b, with the outputs as the next inputs (a plan of
   * equal separations) */
  if (is == os)
    {
      rpe_fft_split_forward (plan, ri, ii, ro, io);
      rpe_fft_split_backward (plan, ro, io, r2, i2);
      for (size_t j = 0; j < n; j++)
        {
          g_assert_cmpfloat (fabs (r2[j] / (double) n - r0[j]), <=, fft_bound (1 + fabs (r0[j]), n));
          g_assert_cmpfloat (fabs (i2[j] / (double) n - i0[j]), <=, fft_bound (1 + fabs (i0[j]), n));
        }
    }
  rpe_fft_split_plan_free (plan);
  rpe_free (in);
  rpe_free (out);
  rpe_free (back);
  g_free (r0);
  g_free (i0);
  g_free (all);
  g_free (xr);
  g_free (xi);
}

static void
test_c2c_split (void)
{
  static const size_t sizes[] = { 1, 2, 3, 5, 16, 17, 48, 97, 128, 210, 1009 };

  for (gsize i = 0; i < G_N_ELEMENTS (sizes); i++)
    for (int aligned = 0; aligned < 2; aligned++)
      {
        check_c2c (sizes[i], aligned ? RPE_FFT_ALIGNED : RPE_FFT_ESTIMATE);
        check_split (sizes[i], 0, aligned ? RPE_FFT_ALIGNED : RPE_FFT_ESTIMATE);
        /* two overlapping blocks of one buffer, as the conv encoding's overlap-save */
        if (sizes[i] >= 48)
          check_split (sizes[i], sizes[i] / 16 * 16 - 16, aligned ? RPE_FFT_ALIGNED : RPE_FFT_ESTIMATE);
      }
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
  st = RPE_OK;
  g_assert_null (rpe_fft_c2c_plan_new (0, 0, &st));
  g_assert_cmpint (st, ==, RPE_ERROR_INVALID_ARGUMENT);
  rpe_fft_c2c_plan_free (NULL);
  st = RPE_OK;
  g_assert_null (rpe_fft_split_plan_new (0, 0, &st));
  g_assert_cmpint (st, ==, RPE_ERROR_INVALID_ARGUMENT);
  st = RPE_OK;
  g_assert_null (rpe_fft_split_plan_new_sep (64, 0, 64, 0, &st));
  g_assert_cmpint (st, ==, RPE_ERROR_INVALID_ARGUMENT);
  st = RPE_OK;
  g_assert_null (rpe_fft_split_plan_new_sep (64, 40, 64, RPE_FFT_ALIGNED, &st));   /* not 64-byte aligned */
  g_assert_cmpint (st, ==, RPE_ERROR_INVALID_ARGUMENT);
  rpe_fft_split_plan_free (NULL);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/core/fft/naive-dft", test_dft);
  g_test_add_func ("/core/fft/c2c-split-naive-dft", test_c2c_split);
  g_test_add_func ("/core/fft/good-size", test_good_size);
  g_test_add_func ("/core/fft/bad-size", test_bad_size);
  return g_test_run ();
}

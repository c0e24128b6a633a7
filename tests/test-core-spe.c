/* test-core-spe.c: SPE codes, gating, encoding, templates and logits (docs/math.md, sections 1-4, 10).
 *
 * Every check compares against straightforward double-precision code written here
 * from docs/math.md's sums (never calling the code under test for the reference), against
 * closed forms, or against statistical limits derived below (Isserlis' theorem).
 */
#include "config.h"

#include <glib.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include <cblas.h>

#include "rpe-alloc.h"
#include "rpe-conv-spe.h"
#include "rpe-rng.h"
#include "rpe-gemm-private.h"
#include "rpe-spe.h"
#include "rpe-test-utils.h"

/* ---------------------------------------------------------------- helpers */

static void
make_params (RpeSpeParams *p,
             RpeSpeMethod  method,
             size_t        h,
             size_t        d,
             size_t        size,
             bool          gated,
             uint64_t      seed)
{
  g_assert_cmpint (rpe_spe_params_init (p, method, h, d, size, gated), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_params_random (p, seed), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_params_validate (p), ==, RPE_OK);
}

/* Gates spread over [0.1, 0.9] so that gating is clearly visible. */
static void
set_gates (RpeSpeParams *p)
{
  size_t hd = p->n_heads * p->n_features;

  for (size_t c = 0; c < hd; c++)
    p->gate[c] = (float) (0.1 + 0.8 * (double) c / (double) (hd > 1 ? hd - 1 : 1));
}

static float *
noise_new (const RpeSpeParams *p, size_t n, size_t r, uint64_t seed, size_t *count)
{
  float *z;

  g_assert_cmpint (rpe_spe_noise_size (p, n, r, count), ==, RPE_OK);
  z = g_new (float, *count);
  g_assert_cmpint (rpe_spe_noise_fill (p, n, r, seed, z), ==, RPE_OK);
  return z;
}

static double
scale_s (size_t d, size_t r)
{
  return pow ((double) r * (double) d, -0.25);
}

/* Naive codes in double, docs/math.md, sections 1-2, layout (N, H, D, R). */
static void
ref_codes (const RpeSpeParams *p, size_t n, size_t r, const float *z,
           double *qb, double *kb)
{
  size_t H = p->n_heads, D = p->n_features;
  double s = scale_s (D, r);

  for (size_t m = 0; m < n; m++)
    for (size_t h = 0; h < H; h++)
      for (size_t d = 0; d < D; d++)
        for (size_t i = 0; i < r; i++)
          {
            size_t c = h * D + d;
            double aq = 0, ak = 0;

            if (p->method == RPE_SPE_SINE)
              {
                size_t K = p->n_sines;

                for (size_t k = 0; k < K; k++)
                  {
                    double f = p->freqs[c * K + k], th = p->offsets[c * K + k];
                    double lam = p->gains[c * K + k] / sqrt (2.0 * K);
                    double zc = z[((c * 2 * K) + 2 * k) * r + i];
                    double zs = z[((c * 2 * K) + 2 * k + 1) * r + i];

                    aq += lam * (cos (2 * M_PI * f * m + th) * zc + sin (2 * M_PI * f * m + th) * zs);
                    ak += lam * (cos (2 * M_PI * f * m) * zc + sin (2 * M_PI * f * m) * zs);
                  }
              }
            else
              {
                size_t L = p->kernel, zlen = n + 4 * L;

                for (size_t j = 0; j < L; j++)
                  {
                    double zz = z[(i * H * D + c) * zlen + m + L + j];

                    aq += p->wq[c * L + j] * zz;
                    ak += p->wk[c * L + j] * zz;
                  }
              }
            qb[((m * H + h) * D + d) * r + i] = s * aq;
            kb[((m * H + h) * D + d) * r + i] = s * ak;
          }
}

/* Naive gating in double, docs/math.md, section 3. */
static void
ref_gate (const RpeSpeParams *p, size_t n, size_t r, const float *eps, double *qb, double *kb)
{
  size_t H = p->n_heads, D = p->n_features;
  double s = scale_s (D, r);

  for (size_t m = 0; m < n; m++)
    for (size_t c = 0; c < H * D; c++)
      for (size_t i = 0; i < r; i++)
        {
          double g = p->gate[c];
          size_t idx = (m * H * D + c) * r + i;

          qb[idx] = sqrt (1 - g) * qb[idx] + sqrt (g) * s * eps[c * r + i];
          kb[idx] = sqrt (1 - g) * kb[idx] + sqrt (g) * s * eps[c * r + i];
        }
}

/* Naive analytic template P_hd(tau), ungated, from docs/math.md's formulas. */
static double
ref_p (const RpeSpeParams *p, size_t h, size_t d, long tau)
{
  size_t c = h * p->n_features + d;
  double acc = 0;

  if (p->method == RPE_SPE_SINE)
    {
      size_t K = p->n_sines;

      for (size_t k = 0; k < K; k++)
        {
          double lam = p->gains[c * K + k];
          acc += lam * lam * cos (2 * M_PI * p->freqs[c * K + k] * tau + p->offsets[c * K + k]);
        }
      return acc / (2.0 * K);
    }
  for (long j = 0; j < (long) p->kernel; j++)
    if (j + tau >= 0 && j + tau < (long) p->kernel)
      acc += (double) p->wq[c * p->kernel + j] * p->wk[c * p->kernel + j + tau];
  return acc;
}

static double
ref_ptilde (const RpeSpeParams *p, size_t h, size_t d, long tau, bool gated)
{
  double v = ref_p (p, h, d, tau);

  if (gated && p->gate != NULL)
    {
      double g = p->gate[h * p->n_features + d];
      v = (1 - g) * v + g;
    }
  return v;
}

/* Variance of one code entry in template units (sigma^2 = E[Qbar^2] / s^2). */
static void
ref_code_var (const RpeSpeParams *p, size_t h, size_t d, bool gated, double *vq, double *vk)
{
  size_t c = h * p->n_features + d;
  double a = 0, b = 0;

  if (p->method == RPE_SPE_SINE)
    {
      for (size_t k = 0; k < p->n_sines; k++)
        a += (double) p->gains[c * p->n_sines + k] * p->gains[c * p->n_sines + k];
      a /= 2.0 * p->n_sines;
      b = a;
    }
  else
    for (size_t j = 0; j < p->kernel; j++)
      {
        a += (double) p->wq[c * p->kernel + j] * p->wq[c * p->kernel + j];
        b += (double) p->wk[c * p->kernel + j] * p->wk[c * p->kernel + j];
      }
  if (gated && p->gate != NULL)
    {
      double g = p->gate[c];
      a = (1 - g) * a + g;
      b = (1 - g) * b + g;
    }
  *vq = a;
  *vk = b;
}

static void
random_fill (float *x, size_t n, uint64_t seed, uint64_t stream)
{
  rpe_rng_normal (seed, stream, 0, x, n);
}

/* --------------------------------------------------------------- params */

static void
test_params (void)
{
  RpeSpeParams a, b, c;
  size_t count = 3 * 4 * 5;

  make_params (&a, RPE_SPE_SINE, 3, 4, 5, true, 7);
  make_params (&b, RPE_SPE_SINE, 3, 4, 5, true, 7);
  g_assert_true (memcmp (a.freqs, b.freqs, count * sizeof (float)) == 0);
  g_assert_true (memcmp (a.gains, b.gains, count * sizeof (float)) == 0);
  g_assert_true (memcmp (a.gate, b.gate, 12 * sizeof (float)) == 0);
  rpe_spe_params_clear (&b);
  make_params (&b, RPE_SPE_SINE, 3, 4, 5, true, 8);
  g_assert_false (memcmp (a.freqs, b.freqs, count * sizeof (float)) == 0);
  rpe_spe_params_clear (&b);

  /* domains */
  for (size_t i = 0; i < count; i++)
    {
      g_assert_true (a.freqs[i] >= 0.0f && a.freqs[i] <= 0.5f);
      g_assert_true (a.gains[i] >= 0.0f);
    }
  for (size_t i = 0; i < 12; i++)
    g_assert_true (a.gate[i] >= 0.0f && a.gate[i] <= 1.0f);

  /* copy is deep and equal */
  g_assert_cmpint (rpe_spe_params_copy (&c, &a), ==, RPE_OK);
  g_assert_true (c.freqs != a.freqs);
  g_assert_true (memcmp (a.offsets, c.offsets, count * sizeof (float)) == 0);
  g_assert_true (memcmp (a.gate, c.gate, 12 * sizeof (float)) == 0);
  g_assert_cmpuint (c.n_sines, ==, 5);

  /* validate rejects out-of-domain values */
  c.freqs[3] = 0.6f;
  g_assert_cmpint (rpe_spe_params_validate (&c), ==, RPE_ERROR_INVALID_ARGUMENT);
  c.freqs[3] = NAN;
  g_assert_cmpint (rpe_spe_params_validate (&c), ==, RPE_ERROR_NOT_FINITE);
  c.freqs[3] = 0.1f;
  c.gains[0] = -1.0f;
  g_assert_cmpint (rpe_spe_params_validate (&c), ==, RPE_ERROR_INVALID_ARGUMENT);
  c.gains[0] = 1.0f;
  c.gate[2] = 1.5f;
  g_assert_cmpint (rpe_spe_params_validate (&c), ==, RPE_ERROR_INVALID_ARGUMENT);
  c.gate[2] = 0.5f;
  g_assert_cmpint (rpe_spe_params_validate (&c), ==, RPE_OK);
  rpe_spe_params_clear (&c);
  rpe_spe_params_clear (&c);   /* idempotent */
  g_assert_null (c.freqs);
  g_assert_cmpint (rpe_spe_params_validate (&c), ==, RPE_ERROR_INVALID_ARGUMENT);

  /* conv */
  make_params (&b, RPE_SPE_CONV, 2, 3, 9, false, 1);
  g_assert_null (b.gate);
  g_assert_nonnull (b.wq);
  b.wk[5] = INFINITY;
  g_assert_cmpint (rpe_spe_params_validate (&b), ==, RPE_ERROR_NOT_FINITE);
  rpe_spe_params_clear (&b);

  /* bad init arguments */
  g_assert_cmpint (rpe_spe_params_init (&b, RPE_SPE_SINE, 0, 3, 4, false), ==,
                   RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_spe_params_init (&b, (RpeSpeMethod) 7, 1, 3, 4, false), ==,
                   RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_spe_params_init (NULL, RPE_SPE_SINE, 1, 3, 4, false), ==,
                   RPE_ERROR_INVALID_ARGUMENT);
  rpe_spe_params_clear (&a);
}

/* ---------------------------------------------------------------- noise */

static void
test_noise (void)
{
  RpeSpeParams p;
  size_t count, count2;
  float *z, *z2, *z3, *eps, *eps2;
  size_t pos = 0, step = 1;

  make_params (&p, RPE_SPE_CONV, 2, 3, 5, true, 3);
  g_assert_cmpint (rpe_spe_noise_size (&p, 10, 4, &count), ==, RPE_OK);
  g_assert_cmpuint (count, ==, 4 * 2 * 3 * (10 + 4 * 5));
  z = noise_new (&p, 10, 4, 99, &count);
  z2 = g_new (float, count);
  z3 = g_new (float, count);

  /* chunked generation (irregular chunk sizes) gives the identical draw */
  while (pos < count)
    {
      size_t len = MIN (step, count - pos);
      g_assert_cmpint (rpe_spe_noise_fill_range (&p, 10, 4, 99, pos, len, z2 + pos), ==, RPE_OK);
      pos += len;
      step = step * 3 + 1;
    }
  g_assert_true (memcmp (z, z2, count * sizeof (float)) == 0);
  /* and it is element i of the documented stream (docs/math.md, section 10 layouts) */
  rpe_rng_normal (99, RPE_STREAM_CONV, 0, z3, count);
  g_assert_true (memcmp (z, z3, count * sizeof (float)) == 0);
  /* different seed: different draw */
  g_assert_cmpint (rpe_spe_noise_fill (&p, 10, 4, 100, z2), ==, RPE_OK);
  {
    size_t same = 0;
    for (size_t i = 0; i < count; i++)
      same += z[i] == z2[i];
    g_assert_cmpuint (same, <, count / 100 + 2);
  }
  g_assert_cmpint (rpe_spe_noise_fill_range (&p, 10, 4, 99, count - 3, 4, z2), ==,
                   RPE_ERROR_INVALID_ARGUMENT);

  /* gate noise: deterministic, stream RPE_STREAM_GATE, (H, D, R) */
  eps = g_new (float, 2 * 3 * 4);
  eps2 = g_new (float, 2 * 3 * 4);
  g_assert_cmpint (rpe_spe_gate_noise_fill (&p, 4, 5, eps), ==, RPE_OK);
  rpe_rng_normal (5, RPE_STREAM_GATE, 0, eps2, 24);
  g_assert_true (memcmp (eps, eps2, 24 * sizeof (float)) == 0);
  g_free (eps);
  g_free (eps2);
  g_free (z);
  g_free (z2);
  g_free (z3);
  rpe_spe_params_clear (&p);

  /* sine: (H, D, 2K, R), independent of N */
  make_params (&p, RPE_SPE_SINE, 2, 3, 4, false, 3);
  g_assert_cmpint (rpe_spe_noise_size (&p, 10, 7, &count), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_noise_size (&p, 1000, 7, &count2), ==, RPE_OK);
  g_assert_cmpuint (count, ==, 2 * 3 * 8 * 7);
  g_assert_cmpuint (count2, ==, count);
  z = noise_new (&p, 10, 7, 1, &count);
  {
    double mean = 0, var = 0;
    for (size_t i = 0; i < count; i++)
      mean += z[i];
    mean /= count;
    for (size_t i = 0; i < count; i++)
      var += (z[i] - mean) * (z[i] - mean);
    var /= count - 1;
    /* 336 N(0,1) draws: mean sd 0.055, variance sd 0.077 */
    g_assert_cmpfloat (fabs (mean), <, 0.25);
    g_assert_cmpfloat (fabs (var - 1), <, 0.35);
  }
  g_free (z);
  rpe_spe_params_clear (&p);
}

/* ---------------------------------------------------------------- codes */

static void
check_codes (RpeSpeMethod method, size_t n, size_t size, RpeConvSpePath path)
{
  const size_t H = 2, D = 3, R = 5;
  RpeSpeParams p;
  size_t count, total = n * H * D * R;
  float *z, *qb = g_new (float, total), *kb = g_new (float, total);
  double *rq = g_new (double, total), *rk = g_new (double, total);
  double eq, ek;

  make_params (&p, method, H, D, size, false, 11 + n);
  z = noise_new (&p, n, R, 21, &count);
  if (method == RPE_SPE_SINE)
    g_assert_cmpint (rpe_spe_codes (&p, n, R, z, qb, kb, NULL), ==, RPE_OK);
  else
    g_assert_cmpint (rpe_conv_spe_codes (&p, n, R, z, qb, kb, path, NULL), ==, RPE_OK);
  ref_codes (&p, n, R, z, rq, rk);
  eq = rpe_test_max_rel_err (qb, rq, total, 1e-30);
  ek = rpe_test_max_rel_err (kb, rk, total, 1e-30);
  g_test_message ("codes %s N=%zu size=%zu path=%d: rel err q %.2e k %.2e",
                  method == RPE_SPE_SINE ? "sine" : "conv", n, size, (int) path, eq, ek);
  g_assert_cmpfloat (eq, <, 1e-5);
  g_assert_cmpfloat (ek, <, 1e-5);

  g_free (z);
  g_free (qb);
  g_free (kb);
  g_free (rq);
  g_free (rk);
  rpe_spe_params_clear (&p);
}

static void
test_sine_codes (void)
{
  check_codes (RPE_SPE_SINE, 64, 4, RPE_CONV_SPE_PATH_AUTO);
  check_codes (RPE_SPE_SINE, 100, 1, RPE_CONV_SPE_PATH_AUTO);
  check_codes (RPE_SPE_SINE, 1, 3, RPE_CONV_SPE_PATH_AUTO);
}

static void
test_conv_codes (void)
{
  check_codes (RPE_SPE_CONV, 64, 7, RPE_CONV_SPE_PATH_DIRECT);
  check_codes (RPE_SPE_CONV, 64, 7, RPE_CONV_SPE_PATH_FFT);
  check_codes (RPE_SPE_CONV, 64, 100, RPE_CONV_SPE_PATH_AUTO);
  check_codes (RPE_SPE_CONV, 20, 33, RPE_CONV_SPE_PATH_FFT);   /* L > N */
  /* N H D R > 1e6: channels shared by the workers, codes through the (R, N) scratch */
  check_codes (RPE_SPE_CONV, 40000, 100, RPE_CONV_SPE_PATH_FFT);
  check_codes (RPE_SPE_CONV, 40000, 30, RPE_CONV_SPE_PATH_DIRECT);
  g_assert_cmpint (rpe_conv_spe_choose_path (1000, 64), ==, RPE_CONV_SPE_PATH_DIRECT);
  g_assert_cmpint (rpe_conv_spe_choose_path (1000, 65), ==, RPE_CONV_SPE_PATH_FFT);
}

/* FFT and direct paths agree over sizes including primes, L = 1, L > N, N = 1. */
static void
test_conv_fft_direct (void)
{
  static const size_t cases[][2] = {
    { 1, 1 }, { 1, 9 }, { 13, 7 }, { 64, 65 }, { 97, 131 }, { 100, 3 },
    { 31, 200 }, { 257, 127 }, { 211, 1 }, { 509, 67 },
  };
  const size_t H = 1, D = 2, R = 3;

  for (size_t t = 0; t < G_N_ELEMENTS (cases); t++)
    {
      size_t n = cases[t][0], L = cases[t][1], count, total = n * H * D * R;
      RpeSpeParams p;
      float *z, *q1 = g_new (float, total), *k1 = g_new (float, total);
      float *q2 = g_new (float, total), *k2 = g_new (float, total);
      double *rq = g_new (double, total), *rk = g_new (double, total);
      double e1, e2, e3, e4;

      make_params (&p, RPE_SPE_CONV, H, D, L, false, 100 + t);
      z = noise_new (&p, n, R, 200 + t, &count);
      g_assert_cmpint (rpe_conv_spe_codes (&p, n, R, z, q1, k1, RPE_CONV_SPE_PATH_DIRECT, NULL),
                       ==, RPE_OK);
      g_assert_cmpint (rpe_conv_spe_codes (&p, n, R, z, q2, k2, RPE_CONV_SPE_PATH_FFT, NULL),
                       ==, RPE_OK);
      ref_codes (&p, n, R, z, rq, rk);
      e1 = rpe_test_max_rel_err (q1, rq, total, 1e-30);
      e2 = rpe_test_max_rel_err (k1, rk, total, 1e-30);
      e3 = rpe_test_max_rel_err (q2, rq, total, 1e-30);
      e4 = rpe_test_max_rel_err (k2, rk, total, 1e-30);
      g_test_message ("conv N=%zu L=%zu: direct %.2e %.2e fft %.2e %.2e", n, L, e1, e2, e3, e4);
      g_assert_cmpfloat (MAX (e1, e2), <, 1e-5);
      g_assert_cmpfloat (MAX (e3, e4), <, 1e-5);

      g_free (z);
      g_free (q1);
      g_free (k1);
      g_free (q2);
      g_free (k2);
      g_free (rq);
      g_free (rk);
      rpe_spe_params_clear (&p);
    }
}

/* --------------------------------------------------- gating and encoding */

static void
check_encode (RpeSpeMethod method, bool gated, size_t n, size_t size)
{
  const size_t H = 2, D = 3, R = 8;
  size_t count, total = n * H * D * R;
  RpeSpeParams p;
  float *z, *eps = g_new (float, H * D * R);
  float *qb = g_new (float, total), *kb = g_new (float, total);
  float *q = g_new (float, n * H * D), *k = g_new (float, n * H * D);
  float *qh = g_new (float, n * H * R), *kh = g_new (float, n * H * R);
  double *rq = g_new (double, total), *rk = g_new (double, total);
  double *rqh = g_new0 (double, n * H * R), *rkh = g_new0 (double, n * H * R);
  double e;

  make_params (&p, method, H, D, size, gated, 5);
  if (gated)
    set_gates (&p);
  z = noise_new (&p, n, R, 6, &count);
  g_assert_cmpint (rpe_spe_gate_noise_fill (&p, R, 7, eps), ==, RPE_OK);
  random_fill (q, n * H * D, 8, RPE_STREAM_QUERIES);
  random_fill (k, n * H * D, 8, RPE_STREAM_KEYS);

  g_assert_cmpint (rpe_spe_codes (&p, n, R, z, qb, kb, NULL), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_gate_codes (&p, n, R, eps, qb, kb), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_encode (n, H, D, R, qb, kb, q, k, qh, kh, NULL), ==, RPE_OK);

  ref_codes (&p, n, R, z, rq, rk);
  if (gated)
    ref_gate (&p, n, R, eps, rq, rk);
  e = MAX (rpe_test_max_rel_err (qb, rq, total, 1e-30), rpe_test_max_rel_err (kb, rk, total, 1e-30));
  g_assert_cmpfloat (e, <, 1e-5);
  for (size_t m = 0; m < n; m++)
    for (size_t h = 0; h < H; h++)
      for (size_t i = 0; i < R; i++)
        for (size_t d = 0; d < D; d++)
          {
            rqh[(m * H + h) * R + i] += rq[((m * H + h) * D + d) * R + i] * q[(m * H + h) * D + d];
            rkh[(m * H + h) * R + i] += rk[((m * H + h) * D + d) * R + i] * k[(m * H + h) * D + d];
          }
  e = MAX (rpe_test_max_rel_err (qh, rqh, n * H * R, 1e-30),
           rpe_test_max_rel_err (kh, rkh, n * H * R, 1e-30));
  g_test_message ("encode %s gated=%d N=%zu: rel err %.2e", method == RPE_SPE_SINE ? "sine" : "conv",
                  gated, n, e);
  g_assert_cmpfloat (e, <, 1e-5);

  /* fused path: same encoded queries/keys without the code buffers */
  memset (qh, 0, n * H * R * sizeof (float));
  memset (kh, 0, n * H * R * sizeof (float));
  g_assert_cmpint (rpe_spe_encode_fused (&p, n, R, z, gated ? eps : NULL, q, k, qh, kh, NULL), ==,
                   RPE_OK);
  e = MAX (rpe_test_max_rel_err (qh, rqh, n * H * R, 1e-30),
           rpe_test_max_rel_err (kh, rkh, n * H * R, 1e-30));
  g_test_message ("encode fused %s gated=%d: rel err %.2e", method == RPE_SPE_SINE ? "sine" : "conv",
                  gated, e);
  g_assert_cmpfloat (e, <, 1e-5);
  memset (kh, 0, n * H * R * sizeof (float));
  g_assert_cmpint (rpe_spe_encode_fused (&p, n, R, z, eps, NULL, k, NULL, kh, NULL), ==, RPE_OK);
  g_assert_cmpfloat (rpe_test_max_rel_err (kh, rkh, n * H * R, 1e-30), <, 1e-5);
  if (gated)
    g_assert_cmpint (rpe_spe_encode_fused (&p, n, R, z, NULL, q, k, qh, kh, NULL), ==,
                     RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_spe_encode_fused (&p, n, R, z, eps, q, NULL, qh, kh, NULL), ==,
                   RPE_ERROR_INVALID_ARGUMENT);

  /* one side only */
  memset (kh, 0, n * H * R * sizeof (float));
  g_assert_cmpint (rpe_spe_encode (n, H, D, R, NULL, kb, NULL, k, NULL, kh, NULL), ==, RPE_OK);
  g_assert_cmpfloat (rpe_test_max_rel_err (kh, rkh, n * H * R, 1e-30), <, 1e-5);
  g_assert_cmpint (rpe_spe_encode (n, H, D, R, qb, kb, NULL, k, NULL, kh, NULL), ==,
                   RPE_ERROR_INVALID_ARGUMENT);

  g_free (z);
  g_free (eps);
  g_free (qb);
  g_free (kb);
  g_free (q);
  g_free (k);
  g_free (qh);
  g_free (kh);
  g_free (rq);
  g_free (rk);
  g_free (rqh);
  g_free (rkh);
  rpe_spe_params_clear (&p);
}

static void
test_encode (void)
{
  check_encode (RPE_SPE_SINE, false, 64, 3);
  check_encode (RPE_SPE_SINE, true, 64, 3);
  check_encode (RPE_SPE_CONV, false, 64, 5);
  check_encode (RPE_SPE_CONV, true, 64, 5);
  /* several row blocks, FFT conv path */
  check_encode (RPE_SPE_SINE, true, 300, 2);
  check_encode (RPE_SPE_CONV, true, 150, 70);
}

/* ------------------------------------------------------------- templates */

static void
test_template_sine (void)
{
  const size_t n = 50, H = 2, D = 3, K = 4;
  RpeSpeParams p;
  float *lags = g_new (float, 2 * n - 1), *full = g_new (float, n * n);
  double *rl = g_new (double, 2 * n - 1), *rf = g_new (double, n * n);

  make_params (&p, RPE_SPE_SINE, H, D, K, false, 41);
  for (size_t h = 0; h < H; h++)
    for (size_t d = 0; d < D; d++)
      {
        size_t c = h * D + d;

        /* closed form, written out: 1/(2K) sum_k lambda^2 cos(2 pi f tau + theta) */
        for (long i = 0; i < (long) (2 * n - 1); i++)
          {
            long tau = i - (long) (n - 1);
            double acc = 0;
            for (size_t k = 0; k < K; k++)
              acc += pow (p.gains[c * K + k], 2) * cos (2 * M_PI * p.freqs[c * K + k] * tau
                                                         + p.offsets[c * K + k]);
            rl[i] = acc / (2 * K);
          }
        for (size_t m = 0; m < n; m++)
          for (size_t j = 0; j < n; j++)
            rf[m * n + j] = rl[m - j + n - 1];
        g_assert_cmpint (rpe_spe_template_lags (&p, h, d, n, false, lags), ==, RPE_OK);
        g_assert_cmpint (rpe_spe_template (&p, h, d, n, false, full), ==, RPE_OK);
        g_assert_cmpfloat (rpe_test_max_rel_err (lags, rl, 2 * n - 1, 1e-30), <, 1e-6);
        g_assert_cmpfloat (rpe_test_max_rel_err (full, rf, n * n, 1e-30), <, 1e-6);
        /* gated with no gate is the plain template */
        g_assert_cmpint (rpe_spe_template_lags (&p, h, d, n, true, lags), ==, RPE_OK);
        g_assert_cmpfloat (rpe_test_max_rel_err (lags, rl, 2 * n - 1, 1e-30), <, 1e-6);
      }
  g_assert_cmpint (rpe_spe_template_lags (&p, H, 0, n, false, lags), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_spe_template (&p, 0, D, n, false, full), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_spe_template (&p, 0, 0, 0, false, full), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_spe_template (&p, 0, 0, n, false, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_free (lags);
  g_free (full);
  g_free (rl);
  g_free (rf);
  rpe_spe_params_clear (&p);
}

static void
test_template_conv (void)
{
  const size_t n = 40, H = 1, D = 2;
  static const size_t Ls[] = { 1, 6, 39, 40, 57 };

  for (size_t t = 0; t < G_N_ELEMENTS (Ls); t++)
    {
      size_t L = Ls[t];
      RpeSpeParams p;
      float *lags = g_new (float, 2 * n - 1), *full = g_new (float, n * n);
      double *rf = g_new (double, n * n);

      make_params (&p, RPE_SPE_CONV, H, D, L, false, 50 + t);
      for (size_t d = 0; d < D; d++)
        {
          g_assert_cmpint (rpe_spe_template_lags (&p, 0, d, n, false, lags), ==, RPE_OK);
          g_assert_cmpint (rpe_spe_template (&p, 0, d, n, false, full), ==, RPE_OK);
          for (size_t m = 0; m < n; m++)
            for (size_t j = 0; j < n; j++)
              {
                long tau = (long) m - (long) j;
                double acc = 0;

                /* sum_j' wq[j'] wk[j' + tau], out-of-range terms 0 */
                for (long jj = 0; jj < (long) L; jj++)
                  if (jj + tau >= 0 && jj + tau < (long) L)
                    acc += (double) p.wq[d * L + jj] * p.wk[d * L + jj + tau];
                rf[m * n + j] = acc;
                if (labs (tau) >= (long) L)
                  g_assert_true (full[m * n + j] == 0.0f);   /* exactly zero */
              }
          g_assert_cmpfloat (rpe_test_max_rel_err (full, rf, n * n, 1e-30), <, 1e-6);
          /* lags[i] = P(i - (N-1)): column 0 for tau >= 0, row 0 for tau < 0 */
          for (size_t i = 0; i < 2 * n - 1; i++)
            g_assert_true (lags[i] == (i >= n - 1 ? full[(i - (n - 1)) * n] : full[n - 1 - i]));
        }
      g_free (lags);
      g_free (full);
      g_free (rf);
      rpe_spe_params_clear (&p);
    }
}

static void
test_template_gated (void)
{
  for (int method = 0; method < 2; method++)
    {
      const size_t n = 30, H = 2, D = 2;
      RpeSpeParams p;
      float *full = g_new (float, n * n);
      double *rf = g_new (double, n * n);

      make_params (&p, method == 0 ? RPE_SPE_SINE : RPE_SPE_CONV, H, D, 5, true, 70);
      set_gates (&p);
      for (size_t h = 0; h < H; h++)
        for (size_t d = 0; d < D; d++)
          {
            double g = p.gate[h * D + d];

            g_assert_cmpint (rpe_spe_template (&p, h, d, n, true, full), ==, RPE_OK);
            for (size_t m = 0; m < n; m++)
              for (size_t j = 0; j < n; j++)
                rf[m * n + j] = (1 - g) * ref_p (&p, h, d, (long) m - (long) j) + g;
            g_assert_cmpfloat (rpe_test_max_rel_err (full, rf, n * n, 1e-30), <, 1e-6);
            /* and ungated ignores the gate */
            g_assert_cmpint (rpe_spe_template (&p, h, d, n, false, full), ==, RPE_OK);
            for (size_t m = 0; m < n; m++)
              for (size_t j = 0; j < n; j++)
                rf[m * n + j] = ref_p (&p, h, d, (long) m - (long) j);
            g_assert_cmpfloat (rpe_test_max_rel_err (full, rf, n * n, 1e-30), <, 1e-6);
          }
      g_free (full);
      g_free (rf);
      rpe_spe_params_clear (&p);
    }
}

/* The analytic template is a Toeplitz fill of its lag profile (rpe_spe_template and slabs
 * of rpe_spe_template_rows).  References, in double, independent of the lag code: docs/math.md's
 * pointwise formula (ref_ptilde), and the factored forms the template had before the fill:
 * sine as the rank-2K product sum_k lambda^2/(2K) [c_k(m) c'_k(n) + s_k(m) s'_k(n)] with
 * c_k(m) = cos(2 pi f m + theta), c'_k(n) = cos(2 pi f n) (sine the same), conv as the banded
 * product sum_t wq[t - m] wk[t - n]; gated (1 - g) P + g.  Sine and conv, gated and not, N
 * from 1 to 300, slabs at every offset of a few sizes. */
static double
ref_factored (const RpeSpeParams *p, size_t h, size_t d, size_t m, size_t n, bool gated)
{
  size_t c = h * p->n_features + d;
  double acc = 0;

  if (p->method == RPE_SPE_SINE)
    {
      size_t K = p->n_sines;

      for (size_t k = 0; k < K; k++)
        {
          double w = 2 * M_PI * p->freqs[c * K + k], th = p->offsets[c * K + k];
          double lam2 = (double) p->gains[c * K + k] * p->gains[c * K + k] / (2.0 * K);

          acc += lam2 * (cos (w * m + th) * cos (w * n) + sin (w * m + th) * sin (w * n));
        }
    }
  else
    {
      size_t L = p->kernel;

      /* t runs over the positions both filters cover: m <= t < m + L and n <= t < n + L */
      for (size_t t = MAX (m, n); t < MIN (m, n) + L; t++)
        acc += (double) p->wq[c * L + (t - m)] * p->wk[c * L + (t - n)];
    }
  if (gated && p->gate != NULL)
    {
      double g = p->gate[h * p->n_features + d];

      acc = (1 - g) * acc + g;
    }
  return acc;
}

static void
test_template_toeplitz (void)
{
  static const size_t Ns[] = { 1, 2, 3, 17, 64, 129, 300 };

  for (int method = 0; method < 2; method++)
    for (int gated = 0; gated < 2; gated++)
      for (size_t t = 0; t < G_N_ELEMENTS (Ns); t++)
        {
          const size_t n = Ns[t], H = 2, D = 2, lags = 2 * n - 1;
          RpeSpeParams p;
          g_autofree float *full = g_new (float, n * n);
          g_autofree float *slab = g_new (float, n * n);
          g_autofree float *lag = g_new (float, lags);
          g_autofree double *naive = g_new (double, n * n);
          g_autofree double *factored = g_new (double, n * n);

          /* conv filters both shorter and longer than N */
          make_params (&p, method == 0 ? RPE_SPE_SINE : RPE_SPE_CONV, H, D,
                       method == 0 ? 5 : (t % 2 ? 7 : 2 * n + 3), gated, 90 + 4 * t + 2 * method + gated);
          if (gated)
            set_gates (&p);
          for (size_t h = 0; h < H; h++)
            for (size_t d = 0; d < D; d++)
              {
                g_assert_cmpint (rpe_spe_template (&p, h, d, n, gated, full), ==, RPE_OK);
                for (size_t m = 0; m < n; m++)
                  for (size_t j = 0; j < n; j++)
                    {
                      naive[m * n + j] = ref_ptilde (&p, h, d, (long) m - (long) j, gated);
                      factored[m * n + j] = ref_factored (&p, h, d, m, j, gated);
                    }
                g_assert_cmpfloat (rpe_test_max_rel_err (full, naive, n * n, 1e-30), <, 1e-6);
                g_assert_cmpfloat (rpe_test_max_rel_err (full, factored, n * n, 1e-30), <, 2e-6);
                /* Toeplitz: every diagonal holds one value, bit for bit */
                for (size_t m = 1; m < n; m++)
                  for (size_t j = 1; j < n; j++)
                    g_assert_true (full[m * n + j] == full[(m - 1) * n + j - 1]);

                /* slabs of rows from the same profile are the same rows, bit for bit */
                g_assert_cmpint (rpe_spe_template_lags (&p, h, d, n, gated, lag), ==, RPE_OK);
                for (size_t rows = 1; rows <= n; rows += (n > 20 ? 37 : 1))
                  for (size_t m0 = 0; m0 + rows <= n; m0 += (n > 20 ? 29 : 1))
                    {
                      g_assert_cmpint (rpe_spe_template_rows (lag, n, m0, rows, slab), ==, RPE_OK);
                      g_assert_cmpmem (slab, rows * n * sizeof (float), full + m0 * n, rows * n * sizeof (float));
                    }
                g_assert_cmpint (rpe_spe_template_rows (lag, n, n, 1, slab), ==, RPE_ERROR_INVALID_ARGUMENT);
                g_assert_cmpint (rpe_spe_template_rows (lag, n, 0, n + 1, slab), ==, RPE_ERROR_INVALID_ARGUMENT);
              }
          rpe_spe_params_clear (&p);
        }
}

/* -------------------------------------------------- empirical templates */

/* One draw's empirical template of (h, d), with gating when the params have a gate. */
static void
draw_empirical (const RpeSpeParams *p, size_t n, size_t r, uint64_t seed,
                size_t h, size_t d, float *out)
{
  size_t count, total = n * p->n_heads * p->n_features * r;
  float *z, *qb = g_new (float, total), *kb = g_new (float, total);

  z = noise_new (p, n, r, seed, &count);
  g_assert_cmpint (rpe_spe_codes (p, n, r, z, qb, kb, NULL), ==, RPE_OK);
  if (p->gate != NULL)
    {
      float *eps = g_new (float, p->n_heads * p->n_features * r);
      g_assert_cmpint (rpe_spe_gate_noise_fill (p, r, seed ^ 0x5555, eps), ==, RPE_OK);
      g_assert_cmpint (rpe_spe_gate_codes (p, n, r, eps, qb, kb), ==, RPE_OK);
      g_free (eps);
    }
  g_assert_cmpint (rpe_spe_empirical_template (n, p->n_heads, p->n_features, r, qb, kb, h, d, out),
                   ==, RPE_OK);
  g_free (z);
  g_free (qb);
  g_free (kb);
}

/* rpe_spe_empirical_template_rows through the attention maps' register-tiled engine in its
 * plain mode (rpe-attention-dense.c) for every build of it this CPU can run
 * (RPE_ATTENTION_KERNEL), on one and three threads, odd shapes (N not a multiple of the
 * 12 x 32 / 6 x 16 / 4 x 16 tiles, R = 1, 5, 64, 67, and R = 300 that goes to sgemm), an
 * output large enough for non-temporal stores: against the product in double (within the
 * float summation bound), against the cblas_sgemm it replaced (to float rounding), and slabs
 * of rows m0 .. m0 + b - 1 equal to the same rows of the whole template. */
static void
test_empirical_dense_vs_naive (void)
{
  const char *kernels[] = { "generic", "avx2", "avx512" };
  const char *threads[] = { "1", "3" };
  const size_t shapes[][4] = {   /* N, H, D, R */
    { 1, 1, 1, 1 }, { 13, 2, 3, 5 }, { 70, 1, 2, 64 }, { 301, 2, 2, 67 }, { 45, 1, 3, 1 },
    { 100, 2, 1, 300 },
    /* outputs of over 2 M floats, rows 64-byte aligned: non-temporal stores (with a last
     * half panel of 16 columns) */
    { 1504, 1, 1, 5 }, { 1456, 1, 2, 3 },
  };
  GRand *rand = g_rand_new_with_seed (77);

  for (size_t si = 0; si < G_N_ELEMENTS (shapes); si++)
    {
      const size_t n = shapes[si][0], H = shapes[si][1], D = shapes[si][2], R = shapes[si][3];
      const size_t h = H - 1, d = D / 2, hdr = H * D * R;
      const double alpha = sqrt ((double) R * D) / R;
      float *qb = g_new (float, n * hdr), *kb = g_new (float, n * hdr);
      RpeStatus st = RPE_OK;
      float *out = rpe_alloc (n * n, sizeof (float), &st), *rows = rpe_alloc (n * n, sizeof (float), &st);
      float *gemm = g_new (float, n * n);
      double *ref = g_new (double, n * n), *bound = g_new (double, n * n);

      g_assert_nonnull (out);
      g_assert_nonnull (rows);
      for (size_t i = 0; i < n * hdr; i++)
        {
          qb[i] = (float) g_rand_double_range (rand, -1.5, 1.5);
          kb[i] = (float) g_rand_double_range (rand, -1.5, 1.5);
        }
      for (size_t m = 0; m < n; m++)
        for (size_t j = 0; j < n; j++)
          {
            const float *x = qb + m * hdr + (h * D + d) * R, *y = kb + j * hdr + (h * D + d) * R;
            double acc = 0, mag = 0;

            for (size_t i = 0; i < R; i++)
              {
                acc += (double) x[i] * y[i];
                mag += fabs ((double) x[i] * y[i]);
              }
            ref[m * n + j] = alpha * acc;
            /* |float sum - exact| <= R u sum |x y|, plus the products and alpha's roundings */
            bound[m * n + j] = (R + 3) * 6e-8 * alpha * mag + 1e-30;
          }
      cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasTrans, (int) n, (int) n, (int) R, (float) alpha,
                   qb + (h * D + d) * R, (int) hdr, kb + (h * D + d) * R, (int) hdr, 0.0f, gemm, (int) n);
      for (size_t ki = 0; ki < G_N_ELEMENTS (kernels); ki++)
        for (size_t ti = 0; ti < G_N_ELEMENTS (threads); ti++)
          {
            g_setenv ("RPE_ATTENTION_KERNEL", kernels[ki], TRUE);
            g_setenv ("RPE_NUM_THREADS", threads[ti], TRUE);
            for (size_t i = 0; i < n * n; i++)
              out[i] = NAN;
            g_assert_cmpint (rpe_spe_empirical_template (n, H, D, R, qb, kb, h, d, out), ==, RPE_OK);
            for (size_t i = 0; i < n * n; i++)
              {
                g_assert_cmpfloat (fabs (out[i] - ref[i]), <=, bound[i]);
                g_assert_cmpfloat (fabs ((double) out[i] - gemm[i]), <=, 2 * bound[i]);
              }
            for (size_t m0 = 0; m0 < n; m0 += 29)
              {
                size_t b = MIN (n - m0, m0 % 2 == 0 ? 29 : 17);

                for (size_t i = 0; i < b * n; i++)
                  rows[i] = NAN;
                g_assert_cmpint (rpe_spe_empirical_template_rows (n, H, D, R, qb, kb, h, d, m0, b, rows), ==,
                                 RPE_OK);
                if (R <= 256)
                  g_assert_true (memcmp (rows, out + m0 * n, b * n * sizeof (float)) == 0);
                else
                  /* the sgemm fallback: OpenBLAS's kernels for a tail of rows may sum in another
                   * order than for the whole (its Haswell kernels do), so to rounding only */
                  for (size_t i = 0; i < b * n; i++)
                    g_assert_cmpfloat (fabs ((double) rows[i] - out[m0 * n + i]), <=, 2 * bound[m0 * n + i]);
              }
          }
      g_free (bound);
      g_free (ref);
      rpe_free (rows);
      g_free (gemm);
      rpe_free (out);
      g_free (kb);
      g_free (qb);
    }
  g_unsetenv ("RPE_ATTENTION_KERNEL");
  g_unsetenv ("RPE_NUM_THREADS");
  g_rand_free (rand);
}

/* The empirical template equals sqrt(RD)/R Qbar_d Kbar_d^T computed naively. */
static void
test_empirical_exact (void)
{
  const size_t n = 17, H = 2, D = 3, R = 6;
  size_t count, total = n * H * D * R;
  RpeSpeParams p;
  float *z, *qb = g_new (float, total), *kb = g_new (float, total), *out = g_new (float, n * n);
  double *ref = g_new (double, n * n);

  make_params (&p, RPE_SPE_SINE, H, D, 3, false, 90);
  z = noise_new (&p, n, R, 91, &count);
  g_assert_cmpint (rpe_spe_codes (&p, n, R, z, qb, kb, NULL), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_empirical_template (n, H, D, R, qb, kb, 1, 2, out), ==, RPE_OK);
  for (size_t m = 0; m < n; m++)
    for (size_t j = 0; j < n; j++)
      {
        double acc = 0;
        for (size_t i = 0; i < R; i++)
          acc += (double) qb[((m * H + 1) * D + 2) * R + i] * kb[((j * H + 1) * D + 2) * R + i];
        ref[m * n + j] = sqrt ((double) R * D) / R * acc;
      }
  g_assert_cmpfloat (rpe_test_max_rel_err (out, ref, n * n, 1e-30), <, 1e-5);
  g_assert_cmpint (rpe_spe_empirical_template (n, H, D, R, qb, kb, 2, 0, out), ==,
                   RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_spe_empirical_template (n, H, D, R, qb, kb, 0, 3, out), ==,
                   RPE_ERROR_INVALID_ARGUMENT);
  g_free (z);
  g_free (qb);
  g_free (kb);
  g_free (out);
  g_free (ref);
  rpe_spe_params_clear (&p);
}

/* Statistics of Phat.  For one entry, Phat(m,n) = sqrt(RD)/R sum_r X_r Y_r with
 * (X_r, Y_r) i.i.d. zero-mean jointly Gaussian pairs, so by Isserlis
 *   E Phat = Ptilde(m,n),  Var Phat = (sq^2 sk^2 + Ptilde(m,n)^2) / R,
 * sq^2 = (1-g) sigma_q^2 + g the code variance in template units. Hence
 *   E |Phat - Ptilde|_F^2 = (N^2 sq^2 sk^2 + |Ptilde|_F^2) / R,
 * and the relative Frobenius error falls like 1/sqrt(R). */
static double
expected_rel_err2 (const RpeSpeParams *p, size_t n, size_t h, size_t d, size_t r)
{
  double vq, vk, fro2 = 0;

  ref_code_var (p, h, d, true, &vq, &vk);
  for (size_t m = 0; m < n; m++)
    for (size_t j = 0; j < n; j++)
      fro2 += pow (ref_ptilde (p, h, d, (long) m - (long) j, true), 2);
  return ((double) n * n * vq * vk + fro2) / (r * fro2);
}

static double
rel_fro (const float *a, const double *ref, size_t count)
{
  double num = 0, den = 0;

  for (size_t i = 0; i < count; i++)
    {
      num += (a[i] - ref[i]) * (a[i] - ref[i]);
      den += ref[i] * ref[i];
    }
  return sqrt (num / den);
}

static void
check_empirical_mean (RpeSpeMethod method, bool gated)
{
  const size_t n = 24, H = 1, D = 2, R = 16, draws = 400, h = 0, d = 1;
  RpeSpeParams p;
  float *one = g_new (float, n * n), *mean = g_new (float, n * n);
  double *acc = g_new0 (double, n * n), *ref = g_new (double, n * n);
  double err_mean, expect1, single = 0;

  make_params (&p, method, H, D, method == RPE_SPE_SINE ? 4 : 6, gated, 123);
  if (gated)
    set_gates (&p);
  for (size_t m = 0; m < n; m++)
    for (size_t j = 0; j < n; j++)
      ref[m * n + j] = ref_ptilde (&p, h, d, (long) m - (long) j, true);
  for (size_t t = 0; t < draws; t++)
    {
      draw_empirical (&p, n, R, 1000 + t, h, d, one);
      single += pow (rel_fro (one, ref, n * n), 2) / draws;
      for (size_t i = 0; i < n * n; i++)
        acc[i] += one[i];
    }
  for (size_t i = 0; i < n * n; i++)
    mean[i] = (float) (acc[i] / draws);
  single = sqrt (single);
  err_mean = rel_fro (mean, ref, n * n);
  expect1 = sqrt (expected_rel_err2 (&p, n, h, d, R));
  g_test_message ("empirical mean %s gated=%d: single-draw RMS rel err %.4f (theory %.4f), "
                  "mean of %zu: %.4f (theory %.4f)", method == RPE_SPE_SINE ? "sine" : "conv",
                  gated, single, expect1, draws, err_mean, expect1 / sqrt ((double) draws));
  /* a single draw's RMS error matches the closed form (sampling spread of 400 draws of a
   * quadratic form with few degrees of freedom for sine: allow 20%) */
  g_assert_cmpfloat (single, <, 1.2 * expect1);
  g_assert_cmpfloat (single, >, 0.8 * expect1);
  /* the mean converges: its error is that of R * draws realizations (allow 2x for
   * the sampling spread of a single Frobenius norm over correlated entries) */
  g_assert_cmpfloat (err_mean, <, 2.0 * expect1 / sqrt ((double) draws));
  g_free (one);
  g_free (mean);
  g_free (acc);
  g_free (ref);
  rpe_spe_params_clear (&p);
}

static void
test_empirical_mean (void)
{
  check_empirical_mean (RPE_SPE_SINE, false);
  check_empirical_mean (RPE_SPE_SINE, true);
  check_empirical_mean (RPE_SPE_CONV, false);
  check_empirical_mean (RPE_SPE_CONV, true);
}

/* Least-squares slope of log(err) against log(R). */
static double
loglog_slope (const double *x, const double *y, size_t count)
{
  double mx = 0, my = 0, sxy = 0, sxx = 0;

  for (size_t i = 0; i < count; i++)
    {
      mx += log (x[i]) / count;
      my += log (y[i]) / count;
    }
  for (size_t i = 0; i < count; i++)
    {
      sxy += (log (x[i]) - mx) * (log (y[i]) - my);
      sxx += (log (x[i]) - mx) * (log (x[i]) - mx);
    }
  return sxy / sxx;
}

static void
check_slope (RpeSpeMethod method, bool gated)
{
  const size_t n = 32, H = 1, D = 2, seeds = 200, h = 0, d = 0;
  RpeSpeParams p;
  double rs[8], errs[8], rms[8], slope, slope_rms;
  float *one = g_new (float, n * n);
  double *ref = g_new (double, n * n);
  GString *msg = g_string_new (NULL);

  make_params (&p, method, H, D, method == RPE_SPE_SINE ? 5 : 8, gated, 321);
  if (gated)
    set_gates (&p);
  for (size_t m = 0; m < n; m++)
    for (size_t j = 0; j < n; j++)
      ref[m * n + j] = ref_ptilde (&p, h, d, (long) m - (long) j, true);
  for (size_t t = 0; t < 8; t++)
    {
      size_t r = (size_t) 4 << t;   /* 4 .. 512 */

      rs[t] = (double) r;
      errs[t] = 0;
      rms[t] = 0;
      for (size_t sd = 0; sd < seeds; sd++)
        {
          double e;

          draw_empirical (&p, n, r, 5000 + 7919 * t + sd, h, d, one);
          e = rel_fro (one, ref, n * n);
          errs[t] += e / seeds;
          rms[t] += e * e / seeds;
        }
      rms[t] = sqrt (rms[t]);
      /* the RMS error estimates sqrt(E e^2), known in closed form (sampling spread of
       * 200 draws of a few-degrees-of-freedom quadratic form: allow 25%) */
      g_assert_cmpfloat (rms[t] / sqrt (expected_rel_err2 (&p, n, h, d, r)), >, 0.75);
      g_assert_cmpfloat (rms[t] / sqrt (expected_rel_err2 (&p, n, h, d, r)), <, 1.25);
      g_string_append_printf (msg, " R=%zu:%.4f/%.4f(%.4f)", r, errs[t], rms[t],
                              sqrt (expected_rel_err2 (&p, n, h, d, r)));
    }
  slope = loglog_slope (rs, errs, 8);
  slope_rms = loglog_slope (rs, rms, 8);
  g_test_message ("slope %s gated=%d: mean %.4f rms %.4f; R:mean/rms(theory)%s",
                  method == RPE_SPE_SINE ? "sine" : "conv", gated,
                  slope, slope_rms, msg->str);
  /* measured over 7 seed bases: mean-error slopes -0.482 .. -0.505 (sine), -0.497 .. -0.500 (conv) */
  g_assert_cmpfloat (fabs (slope + 0.5), <, 0.05);
  g_assert_cmpfloat (fabs (slope_rms + 0.5), <, 0.05);
  g_string_free (msg, TRUE);
  g_free (one);
  g_free (ref);
  rpe_spe_params_clear (&p);
}

static void
test_empirical_slope (void)
{
  check_slope (RPE_SPE_SINE, false);
  check_slope (RPE_SPE_CONV, false);
  check_slope (RPE_SPE_SINE, true);
  check_slope (RPE_SPE_CONV, true);
}

/* ---------------------------------------------------------------- logits */

/* Naive exact logits in double (paper eq. 8, docs/math.md, section 4). */
static void
ref_exact_logits (const RpeSpeParams *p, size_t n, const float *q, const float *k, bool gated,
                  double *out)
{
  size_t H = p->n_heads, D = p->n_features;

  for (size_t h = 0; h < H; h++)
    for (size_t m = 0; m < n; m++)
      for (size_t j = 0; j < n; j++)
        {
          double acc = 0;
          for (size_t d = 0; d < D; d++)
            acc += (double) q[(m * H + h) * D + d] * k[(j * H + h) * D + d]
                   * ref_ptilde (p, h, d, (long) m - (long) j, gated);
          out[(h * n + m) * n + j] = acc / sqrt ((double) D);
        }
}

static void
test_exact_logits (void)
{
  for (int method = 0; method < 2; method++)
    for (int gated = 0; gated < 2; gated++)
      {
        const size_t n = 45, H = 2, D = 5;
        RpeSpeParams p;
        float *q = g_new (float, n * H * D), *k = g_new (float, n * H * D);
        float *l = g_new (float, H * n * n);
        double *rl = g_new (double, H * n * n), e;

        make_params (&p, method == 0 ? RPE_SPE_SINE : RPE_SPE_CONV, H, D, 6, true, 400);
        set_gates (&p);
        random_fill (q, n * H * D, 401, RPE_STREAM_QUERIES);
        random_fill (k, n * H * D, 401, RPE_STREAM_KEYS);
        g_assert_cmpint (rpe_spe_exact_logits (&p, n, q, k, gated, l, NULL), ==, RPE_OK);
        ref_exact_logits (&p, n, q, k, gated, rl);
        e = rpe_test_max_rel_err (l, rl, H * n * n, 1e-30);
        g_test_message ("exact logits method=%d gated=%d: rel err %.2e", method, gated, e);
        g_assert_cmpfloat (e, <, 1e-5);
        g_free (q);
        g_free (k);
        g_free (l);
        g_free (rl);
        rpe_spe_params_clear (&p);
      }
}

/* SPE logits: exact against a naive product, and unbiased for the exact logits.
 * lhat(m,n) = (1/sqrt R) sum_r X_r Y_r with X_r = sum_d q_d Qbar'_d[m,r] (independent over d),
 * so E lhat = l(m,n) and Var lhat = s^4 (sum_d q_d^2 sq_d^2 * sum_d k_d^2 sk_d^2
 * + (sum_d q_d k_d Ptilde_d)^2), s^4 = 1/(R D). */
static void
check_spe_logits (RpeSpeMethod method)
{
  const size_t n = 20, H = 2, D = 3, R = 16, draws = 300;
  size_t count, total = n * H * D * R;
  RpeSpeParams p;
  float *q = g_new (float, n * H * D), *k = g_new (float, n * H * D);
  float *qb = g_new (float, total), *kb = g_new (float, total), *eps = g_new (float, H * D * R);
  float *qh = g_new (float, n * H * R), *kh = g_new (float, n * H * R);
  float *l = g_new (float, H * n * n);
  double *exact = g_new (double, H * n * n), *acc = g_new0 (double, H * n * n);
  double *sd = g_new (double, H * n * n), *ref = g_new (double, H * n * n);
  double zmax = 0, z2 = 0;

  make_params (&p, method, H, D, 4, true, 500);
  set_gates (&p);
  random_fill (q, n * H * D, 501, RPE_STREAM_QUERIES);
  random_fill (k, n * H * D, 501, RPE_STREAM_KEYS);
  ref_exact_logits (&p, n, q, k, true, exact);
  for (size_t h = 0; h < H; h++)
    for (size_t m = 0; m < n; m++)
      for (size_t j = 0; j < n; j++)
        {
          double a = 0, b = 0;
          for (size_t d = 0; d < D; d++)
            {
              double vq, vk;
              ref_code_var (&p, h, d, true, &vq, &vk);
              a += pow (q[(m * H + h) * D + d], 2) * vq;
              b += pow (k[(j * H + h) * D + d], 2) * vk;
            }
          /* exact = sum q k P / sqrt(D)  =>  (sum q k P)^2 = D exact^2 */
          sd[(h * n + m) * n + j] = sqrt ((a * b + D * pow (exact[(h * n + m) * n + j], 2))
                                          / (R * D));
        }

  for (size_t t = 0; t < draws; t++)
    {
      float *z = noise_new (&p, n, R, 600 + t, &count);

      g_assert_cmpint (rpe_spe_codes (&p, n, R, z, qb, kb, NULL), ==, RPE_OK);
      g_assert_cmpint (rpe_spe_gate_noise_fill (&p, R, 9000 + t, eps), ==, RPE_OK);
      g_assert_cmpint (rpe_spe_gate_codes (&p, n, R, eps, qb, kb), ==, RPE_OK);
      g_assert_cmpint (rpe_spe_encode (n, H, D, R, qb, kb, q, k, qh, kh, NULL), ==, RPE_OK);
      g_assert_cmpint (rpe_spe_logits (n, H, R, qh, kh, l, NULL), ==, RPE_OK);
      if (t == 0)
        {
          for (size_t h = 0; h < H; h++)
            for (size_t m = 0; m < n; m++)
              for (size_t j = 0; j < n; j++)
                {
                  double a = 0;
                  for (size_t i = 0; i < R; i++)
                    a += (double) qh[(m * H + h) * R + i] * kh[(j * H + h) * R + i];
                  ref[(h * n + m) * n + j] = a / sqrt ((double) R);
                }
          g_assert_cmpfloat (rpe_test_max_rel_err (l, ref, H * n * n, 1e-30), <, 1e-5);
        }
      for (size_t i = 0; i < H * n * n; i++)
        acc[i] += l[i];
      g_free (z);
    }
  for (size_t i = 0; i < H * n * n; i++)
    {
      double zs = (acc[i] / draws - exact[i]) / (sd[i] / sqrt ((double) draws));
      zmax = MAX (zmax, fabs (zs));
      z2 += zs * zs / (H * n * n);
    }
  g_test_message ("SPE logits %s: mean over %zu draws, max |z| %.2f, mean z^2 %.3f",
                  method == RPE_SPE_SINE ? "sine" : "conv", draws, zmax, z2);
  /* 800 entries of (approximately) standard normal z-scores */
  g_assert_cmpfloat (zmax, <, 5.5);
  g_assert_cmpfloat (z2, <, 2.5);
  g_assert_cmpfloat (z2, >, 0.3);

  g_free (q);
  g_free (k);
  g_free (qb);
  g_free (kb);
  g_free (eps);
  g_free (qh);
  g_free (kh);
  g_free (l);
  g_free (exact);
  g_free (acc);
  g_free (sd);
  g_free (ref);
  rpe_spe_params_clear (&p);
}

static void
test_spe_logits (void)
{
  check_spe_logits (RPE_SPE_SINE);
  check_spe_logits (RPE_SPE_CONV);
}

/* ------------------------------------------------- monitor and failures */

typedef struct
{
  atomic_int *cancel;
  int         calls;
  int         cancel_after;
  double      last;
  gboolean    monotone;
} ProgressData;

static void
on_progress (double fraction, void *user_data)
{
  ProgressData *pd = user_data;

  if (fraction < pd->last)
    pd->monotone = FALSE;
  pd->last = fraction;
  pd->calls++;
  if (pd->cancel_after > 0 && pd->calls >= pd->cancel_after)
    atomic_store (pd->cancel, 1);
}

static void
test_cancel (void)
{
  const size_t n = 64, H = 2, D = 4, R = 4;
  size_t count, total = n * H * D * R;
  atomic_int cancel = 0;
  ProgressData pd = { &cancel, 0, 0, 0, TRUE };
  RpeMonitor mon = { &cancel, on_progress, &pd };
  RpeSpeParams sine, conv;
  float *zs, *zc, *qb = g_new (float, total), *kb = g_new (float, total);
  float *q = g_new0 (float, n * H * D), *qh = g_new (float, n * H * R), *l = g_new (float, H * n * n);

  make_params (&sine, RPE_SPE_SINE, H, D, 3, true, 1);
  make_params (&conv, RPE_SPE_CONV, H, D, 80, true, 1);
  zs = noise_new (&sine, n, R, 2, &count);
  zc = noise_new (&conv, n, R, 2, &count);

  /* progress is monotone and ends at 1 */
  g_assert_cmpint (rpe_spe_codes (&sine, n, R, zs, qb, kb, &mon), ==, RPE_OK);
  g_assert_true (pd.monotone);
  g_assert_cmpfloat (pd.last, ==, 1.0);
  pd = (ProgressData) { &cancel, 0, 0, 0, TRUE };
  g_assert_cmpint (rpe_spe_exact_logits (&sine, n, q, q, true, l, &mon), ==, RPE_OK);
  g_assert_true (pd.monotone);
  g_assert_cmpfloat (pd.last, ==, 1.0);

  /* flag already set */
  atomic_store (&cancel, 1);
  g_assert_cmpint (rpe_spe_codes (&sine, n, R, zs, qb, kb, &mon), ==, RPE_ERROR_CANCELLED);
  g_assert_cmpint (rpe_conv_spe_codes (&conv, n, R, zc, qb, kb, RPE_CONV_SPE_PATH_DIRECT, &mon), ==,
                   RPE_ERROR_CANCELLED);
  g_assert_cmpint (rpe_conv_spe_codes (&conv, n, R, zc, qb, kb, RPE_CONV_SPE_PATH_FFT, &mon), ==,
                   RPE_ERROR_CANCELLED);
  g_assert_cmpint (rpe_spe_encode (n, H, D, R, qb, NULL, q, NULL, qh, NULL, &mon), ==,
                   RPE_ERROR_CANCELLED);
  g_assert_cmpint (rpe_spe_logits (n, H, R, qh, qh, l, &mon), ==, RPE_ERROR_CANCELLED);
  {
    float *eps = g_new0 (float, H * D * R);
    g_assert_cmpint (rpe_spe_encode_fused (&sine, n, R, zs, eps, q, NULL, qh, NULL, &mon), ==,
                     RPE_ERROR_CANCELLED);
    g_assert_cmpint (rpe_spe_encode_fused (&conv, n, R, zc, eps, q, NULL, qh, NULL, &mon), ==,
                     RPE_ERROR_CANCELLED);
    g_free (eps);
  }
  g_assert_cmpint (rpe_spe_exact_logits (&conv, n, q, q, true, l, &mon), ==, RPE_ERROR_CANCELLED);

  /* raised midway (from the progress callback) */
  atomic_store (&cancel, 0);
  pd = (ProgressData) { &cancel, 0, 2, 0, TRUE };
  g_assert_cmpint (rpe_spe_exact_logits (&sine, n, q, q, false, l, &mon), ==, RPE_ERROR_CANCELLED);
  g_assert_cmpint (pd.calls, ==, 2);
  atomic_store (&cancel, 0);
  pd = (ProgressData) { &cancel, 0, 3, 0, TRUE };
  g_assert_cmpint (rpe_spe_codes (&conv, n, R, zc, qb, kb, &mon), ==, RPE_ERROR_CANCELLED);
  g_assert_cmpint (pd.calls, ==, 3);

  g_free (zs);
  g_free (zc);
  g_free (qb);
  g_free (kb);
  g_free (q);
  g_free (qh);
  g_free (l);
  rpe_spe_params_clear (&sine);
  rpe_spe_params_clear (&conv);
}

static void
test_bad_sizes (void)
{
  RpeSpeParams p, fake;
  size_t count;
  float buf[64] = { 0 };

  /* overflowing products */
  g_assert_cmpint (rpe_spe_params_init (&p, RPE_SPE_SINE, SIZE_MAX / 2, 4, 4, false), ==,
                   RPE_ERROR_OVERFLOW);
  g_assert_null (p.freqs);
  {
    RpeStatus st = rpe_spe_params_init (&p, RPE_SPE_CONV, (size_t) 1 << 20, (size_t) 1 << 20,
                                        (size_t) 1 << 20, true);
    g_assert_true (st == RPE_ERROR_NO_MEMORY || st == RPE_ERROR_OVERFLOW);
  }

  make_params (&p, RPE_SPE_SINE, 2, 3, 4, false, 1);
  g_assert_cmpint (rpe_spe_noise_size (&p, 10, SIZE_MAX / 4, &count), ==, RPE_ERROR_OVERFLOW);
  g_assert_cmpint (rpe_spe_noise_size (&p, 10, 0, &count), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_spe_codes (&p, SIZE_MAX / 2, 4, buf, buf, buf, NULL), ==, RPE_ERROR_OVERFLOW);
  g_assert_cmpint (rpe_spe_codes (&p, 0, 4, buf, buf, buf, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_spe_codes (&p, 4, 4, NULL, buf, buf, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_spe_codes (NULL, 4, 4, buf, buf, buf, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_spe_template (&p, 0, 0, SIZE_MAX / 2, false, buf), ==, RPE_ERROR_OVERFLOW);
  g_assert_cmpint (rpe_spe_template_lags (&p, 0, 0, SIZE_MAX, false, buf), ==, RPE_ERROR_OVERFLOW);
  {
    /* lags of a length that does not fit the budget: refused before writing */
    RpeStatus st = rpe_spe_template_lags (&p, 0, 0, SIZE_MAX / 8, false, buf);
    g_assert_true (st == RPE_ERROR_NO_MEMORY || st == RPE_ERROR_OVERFLOW);
  }
  g_assert_cmpint (rpe_spe_exact_logits (&p, (size_t) 1 << 40, buf, buf, false, buf, NULL), ==,
                   RPE_ERROR_OVERFLOW);
  g_assert_cmpint (rpe_spe_logits ((size_t) 1 << 40, 2, 4, buf, buf, buf, NULL), ==,
                   RPE_ERROR_OVERFLOW);
  g_assert_cmpint (rpe_spe_encode (SIZE_MAX / 2, 2, 3, 4, buf, buf, buf, buf, buf, buf, NULL), ==,
                   RPE_ERROR_OVERFLOW);
  g_assert_cmpint (rpe_spe_empirical_template (SIZE_MAX / 2, 2, 3, 4, buf, buf, 0, 0, buf), ==,
                   RPE_ERROR_OVERFLOW);
  g_assert_cmpint (rpe_spe_gate_codes (&p, 4, 4, buf, buf, buf), ==, RPE_OK);   /* ungated: no-op */

  /* the memory budget is honoured: a large-but-valid N fails cleanly */
  rpe_budget_set (1 << 16);
  g_assert_cmpint (rpe_spe_template_lags (&p, 0, 0, (size_t) 1 << 20, false, buf), ==,
                   RPE_ERROR_NO_MEMORY);
  rpe_budget_set (0);
  rpe_spe_params_clear (&p);

  /* hand-made params with absurd shapes are refused by validate before any loop */
  memset (&fake, 0, sizeof fake);
  fake.method = RPE_SPE_SINE;
  fake.n_heads = SIZE_MAX / 2;
  fake.n_features = 4;
  fake.n_sines = 4;
  fake.freqs = fake.offsets = fake.gains = buf;
  g_assert_cmpint (rpe_spe_params_validate (&fake), ==, RPE_ERROR_OVERFLOW);
  g_assert_cmpint (rpe_spe_codes (&fake, 4, 4, buf, buf, buf, NULL), ==, RPE_ERROR_OVERFLOW);

  make_params (&p, RPE_SPE_CONV, 1, 2, 3, false, 1);
  g_assert_cmpint (rpe_spe_noise_size (&p, SIZE_MAX - 4, 1, &count), ==, RPE_ERROR_OVERFLOW);
  g_assert_cmpint (rpe_spe_noise_size (&p, 0, 1, &count), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_conv_spe_codes (&p, SIZE_MAX / 2, 4, buf, buf, buf,
                                       RPE_CONV_SPE_PATH_FFT, NULL), ==, RPE_ERROR_OVERFLOW);
  rpe_budget_set (1 << 16);
  g_assert_cmpint (rpe_conv_spe_codes (&p, (size_t) 1 << 24, 4, buf, buf, buf,
                                       RPE_CONV_SPE_PATH_DIRECT, NULL), ==, RPE_ERROR_NO_MEMORY);
  rpe_budget_set (0);
  rpe_spe_params_clear (&p);
}

/* rpe_spe_encode_seeded draws the code noise inside the call: it must equal
 * rpe_spe_noise_fill + rpe_spe_encode_fused exactly (same draw, same arithmetic),
 * and the fused path must equal the three-step codes + gate + encode to float
 * rounding; the three-step path is itself checked against naive references in
 * /core/spe/encode. */
static void
test_fused_seeded (void)
{
  const size_t H = 2, D = 6, R = 8;
  const size_t lengths[] = { 37, 300 };

  for (int method = 0; method < 2; method++)
    for (size_t li = 0; li < G_N_ELEMENTS (lengths); li++)
      for (int gated = 0; gated < 2; gated++)
        {
          const size_t n = lengths[li];
          RpeSpeParams p;
          size_t zc;
          float *z, *eps = g_new (float, H * D * R), *q = g_new (float, n * H * D), *k = g_new (float, n * H * D);
          float *qs = g_new (float, n * H * R), *ks = g_new (float, n * H * R);
          float *qf = g_new (float, n * H * R), *kf = g_new (float, n * H * R);
          float *qbar = g_new (float, n * H * D * R), *kbar = g_new (float, n * H * D * R);
          float *q3 = g_new (float, n * H * R), *k3 = g_new (float, n * H * R);
          double *ref = g_new (double, n * H * R);

          make_params (&p, method == 0 ? RPE_SPE_SINE : RPE_SPE_CONV, H, D, method == 0 ? 3 : 9, gated, 11);
          if (gated)
            set_gates (&p);
          z = noise_new (&p, n, R, 21, &zc);
          g_assert_cmpint (rpe_spe_gate_noise_fill (&p, R, 22, eps), ==, RPE_OK);
          rpe_rng_normal (23, RPE_STREAM_QUERIES, 0, q, n * H * D);
          rpe_rng_normal (23, RPE_STREAM_KEYS, 0, k, n * H * D);

          g_assert_cmpint (rpe_spe_encode_seeded (&p, n, R, 21, eps, q, k, qs, ks, NULL), ==, RPE_OK);
          g_assert_cmpint (rpe_spe_encode_fused (&p, n, R, z, eps, q, k, qf, kf, NULL), ==, RPE_OK);
          g_assert_true (memcmp (qs, qf, n * H * R * sizeof (float)) == 0);
          g_assert_true (memcmp (ks, kf, n * H * R * sizeof (float)) == 0);

          g_assert_cmpint (rpe_spe_codes (&p, n, R, z, qbar, kbar, NULL), ==, RPE_OK);
          g_assert_cmpint (rpe_spe_gate_codes (&p, n, R, eps, qbar, kbar), ==, RPE_OK);
          g_assert_cmpint (rpe_spe_encode (n, H, D, R, qbar, kbar, q, k, q3, k3, NULL), ==, RPE_OK);
          for (size_t i = 0; i < n * H * R; i++)
            ref[i] = q3[i];
          g_assert_cmpfloat (rpe_test_max_rel_err (qf, ref, n * H * R, 1e-30), <, 2e-6);
          for (size_t i = 0; i < n * H * R; i++)
            ref[i] = k3[i];
          g_assert_cmpfloat (rpe_test_max_rel_err (kf, ref, n * H * R, 1e-30), <, 2e-6);

          rpe_spe_params_clear (&p);
          g_free (z); g_free (eps); g_free (q); g_free (k); g_free (qs); g_free (ks);
          g_free (qf); g_free (kf); g_free (qbar); g_free (kbar); g_free (q3); g_free (k3); g_free (ref);
        }
}

/* The fused conv encoder on its FFT path (split-format overlap-save, realization tiles,
 * gate term by sgemm) against a naive reference in double fed the SAME noise: the
 * direct valid correlation of rpe_spe_noise_fill's draw (ref_codes), naive gating
 * (ref_gate) and the sum over d of the codes times the queries/keys (docs/math.md sections
 * 2-4).  Lengths that are not a multiple of a block's outputs, an odd block count,
 * R across several tiles and not a multiple of the tile. */
static void
test_conv_fused_vs_naive (void)
{
  static const struct { size_t n, L, R; } cases[] = {
    { 300, 67, 11 }, { 1000, 130, 9 }, { 97, 100, 3 }, { 2049, 65, 17 },
  };
  const size_t H = 2, D = 3;

  for (size_t t = 0; t < G_N_ELEMENTS (cases); t++)
    for (int gated = 0; gated < 2; gated++)
      {
        const size_t n = cases[t].n, L = cases[t].L, R = cases[t].R;
        const size_t codes = n * H * D * R, outs = n * H * R;
        RpeSpeParams p;
        size_t zc;
        float *z, *eps = g_new (float, H * D * R), *q = g_new (float, n * H * D), *k = g_new (float, n * H * D);
        float *qs = g_new (float, outs), *ks = g_new (float, outs), *qf = g_new (float, outs);
        float *kf = g_new (float, outs);
        double *rq = g_new (double, codes), *rk = g_new (double, codes);
        double *hq = g_new0 (double, outs), *hk = g_new0 (double, outs);
        double eq, ek, eo;

        g_assert_cmpint (rpe_conv_spe_choose_path (n, L), ==, RPE_CONV_SPE_PATH_FFT);
        make_params (&p, RPE_SPE_CONV, H, D, L, gated, 300 + t);
        if (gated)
          set_gates (&p);
        z = noise_new (&p, n, R, 31 + t, &zc);
        g_assert_cmpint (rpe_spe_gate_noise_fill (&p, R, 41 + t, eps), ==, RPE_OK);
        rpe_rng_normal (51 + t, RPE_STREAM_QUERIES, 0, q, n * H * D);
        rpe_rng_normal (51 + t, RPE_STREAM_KEYS, 0, k, n * H * D);

        ref_codes (&p, n, R, z, rq, rk);
        if (gated)
          ref_gate (&p, n, R, eps, rq, rk);
        for (size_t m = 0; m < n; m++)
          for (size_t h = 0; h < H; h++)
            for (size_t d = 0; d < D; d++)
              for (size_t i = 0; i < R; i++)
                {
                  size_t x = (m * H + h) * D + d;

                  hq[(m * H + h) * R + i] += rq[x * R + i] * q[x];
                  hk[(m * H + h) * R + i] += rk[x * R + i] * k[x];
                }

        g_assert_cmpint (rpe_spe_encode_seeded (&p, n, R, 31 + t, gated ? eps : NULL, q, k, qs, ks, NULL), ==,
                         RPE_OK);
        g_assert_cmpint (rpe_spe_encode_fused (&p, n, R, z, gated ? eps : NULL, q, k, qf, kf, NULL), ==, RPE_OK);
        g_assert_true (memcmp (qs, qf, outs * sizeof (float)) == 0);
        g_assert_true (memcmp (ks, kf, outs * sizeof (float)) == 0);

        eq = rpe_test_max_rel_err (qf, hq, outs, 1e-30);
        ek = rpe_test_max_rel_err (kf, hk, outs, 1e-30);
        eo = rpe_test_max_rel_err (qs, hq, outs, 1e-30);
        g_test_message ("conv fused N=%zu L=%zu R=%zu gated=%d: rel err q %.2e k %.2e", n, L, R, gated, eq, ek);
        g_assert_cmpfloat (MAX (MAX (eq, ek), eo), <, 1e-5);

        rpe_spe_params_clear (&p);
        g_free (z); g_free (eps); g_free (q); g_free (k); g_free (qs); g_free (ks); g_free (qf);
        g_free (kf); g_free (rq); g_free (rk); g_free (hq); g_free (hk);
      }
}

/* sum over the fused sine encoding's terms of |term|, in double, per output (m, h, r) of the
 * queries (theta) or the keys: s (sum_{d,k} |x_d| sqrt(1 - g_d) lambda_k / sqrt(2K)
 * (|cos| |z_2k| + |sin| |z_2k+1|) + sum_d |x_d| sqrt(g_d) |eps_d|).  A float sum of these
 * terms in any order is within (terms + 1) u of it times this (Higham, Accuracy and Stability
 * of Numerical Algorithms, 2nd ed., section 3.1), u = 2^-24. */
static void
sine_encode_magnitude (const RpeSpeParams *p, size_t n, size_t r, const float *z, const float *eps,
                       const float *x, bool queries, double *mag)
{
  const size_t H = p->n_heads, D = p->n_features, K = p->n_sines;
  const double s = scale_s (D, r);

  for (size_t m = 0; m < n; m++)
    for (size_t h = 0; h < H; h++)
      for (size_t i = 0; i < r; i++)
        {
          double acc = 0;

          for (size_t d = 0; d < D; d++)
            {
              const size_t c = h * D + d;
              const double g = p->gate != NULL ? p->gate[c] : 0.0, xd = fabs (x[(m * H + h) * D + d]);

              for (size_t k = 0; k < K; k++)
                {
                  const double w = 2 * M_PI * p->freqs[c * K + k] * m + (queries ? p->offsets[c * K + k] : 0.0);
                  const double lam = fabs (p->gains[c * K + k]) / sqrt (2.0 * K);

                  acc += xd * sqrt (1 - g) * lam * (fabs (cos (w) * z[(c * 2 * K + 2 * k) * r + i])
                                                    + fabs (sin (w) * z[(c * 2 * K + 2 * k + 1) * r + i]));
                }
              if (eps != NULL && p->gate != NULL)
                acc += xd * sqrt (g) * fabs (eps[c * r + i]);
            }
          mag[(m * H + h) * r + i] = s * acc;
        }
}

/* |a - b| <= bound * mag elementwise, over count values */
static void
assert_within_magnitude (const float *a, const float *b, const double *mag, double bound, size_t count)
{
  for (size_t i = 0; i < count; i++)
    if (!(fabs ((double) a[i] - b[i]) <= bound * mag[i]))
      g_error ("value %zu: %.9g and %.9g differ by more than %.3g x %.3g", i, a[i], b[i], bound, mag[i]);
}

/* rpe_spe_encode_fused_rows: any cut of the rows into ranges starting at multiples of
 * RPE_SPE_FUSED_ROWS_ALIGN gives the whole rpe_spe_encode_fused bit for bit (gated, and keys
 * alone), on 1 and 3 threads, for every build of the core's product this CPU has (a row's
 * features depend on its position only and the product sums each value in one fixed order);
 * the AVX2 and AVX-512 builds give the same bits (both one FMA per step); the generic build
 * (two roundings per step) is within the summation bound of them: each output sums the same
 * D 2K + D products, so two float sums differ by at most 2 (D 2K + D + 2) u times the sum of
 * the terms' magnitudes.  A misaligned start, an empty or overlong range and conv SPE are
 * refused. */
static void
test_fused_rows (void)
{
  const size_t H = 3, D = 5, K = 2, n = 700, r = 6, A = RPE_SPE_FUSED_ROWS_ALIGN;
  const size_t cuts[] = { A, 2 * A, 5 * A };
  const char *kernels[] = { "generic", "avx2", "avx512" };
  const char *threads[] = { "1", "3" };
  RpeSpeParams p = { 0 }, pc = { 0 };
  size_t nz;
  float *z, *eps = g_new (float, H * D * r), *q = g_new (float, n * H * D), *k = g_new (float, n * H * D);
  float *qw = g_new (float, n * H * r), *kw = g_new (float, n * H * r);
  float *qs = g_new (float, n * H * r), *ks = g_new (float, n * H * r);
  float *qf = NULL, *kf = NULL, *qg = NULL, *kg = NULL;
  double *qmag = g_new (double, n * H * r), *kmag = g_new (double, n * H * r);
  const double bound = 2.0 * (double) (D * 2 * K + D + 2) * 0x1p-24;
  g_autofree char *saved_kernel = g_strdup (g_getenv ("RPE_GEMM_KERNEL"));
  g_autofree char *saved_threads = g_strdup (g_getenv ("RPE_NUM_THREADS"));

  g_assert_cmpint (rpe_spe_params_init (&p, RPE_SPE_SINE, H, D, K, TRUE), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_params_random (&p, 8), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_noise_size (&p, n, r, &nz), ==, RPE_OK);
  z = g_new (float, nz);
  g_assert_cmpint (rpe_spe_noise_fill (&p, n, r, 8, z), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_gate_noise_fill (&p, r, 8, eps), ==, RPE_OK);
  random_fill (q, n * H * D, 1, RPE_STREAM_QUERIES);
  random_fill (k, n * H * D, 1, RPE_STREAM_KEYS);
  sine_encode_magnitude (&p, n, r, z, eps, q, true, qmag);
  sine_encode_magnitude (&p, n, r, z, eps, k, false, kmag);
  for (size_t ki = 0; ki < G_N_ELEMENTS (kernels); ki++)
    {
      g_setenv ("RPE_GEMM_KERNEL", kernels[ki], TRUE);
      if (ki > 0 && _rpe_gemm_isa () != (RpeGemmIsa) ki)
        continue;   /* not on this CPU */
      for (size_t ti = 0; ti < G_N_ELEMENTS (threads); ti++)
        {
          g_setenv ("RPE_NUM_THREADS", threads[ti], TRUE);
          g_assert_cmpint (rpe_spe_encode_fused (&p, n, r, z, eps, q, k, qw, kw, NULL), ==, RPE_OK);
          for (size_t c = 0; c < G_N_ELEMENTS (cuts); c++)
            {
              memset (qs, 0, n * H * r * sizeof (float));
              memset (ks, 0, n * H * r * sizeof (float));
              for (size_t m0 = 0; m0 < n; m0 += cuts[c])
                {
                  size_t b = MIN (cuts[c], n - m0);

                  g_assert_cmpint (rpe_spe_encode_fused_rows (&p, n, m0, b, r, z, eps, q + m0 * H * D,
                                                              k + m0 * H * D, qs + m0 * H * r, ks + m0 * H * r,
                                                              NULL), ==, RPE_OK);
                }
              g_assert_cmpmem (qs, n * H * r * sizeof (float), qw, n * H * r * sizeof (float));
              g_assert_cmpmem (ks, n * H * r * sizeof (float), kw, n * H * r * sizeof (float));
            }
          /* keys alone, one range in the middle */
          g_assert_cmpint (rpe_spe_encode_fused_rows (&p, n, 2 * A, A + 1, r, z, eps, NULL, k + 2 * A * H * D,
                                                      NULL, ks, NULL), ==, RPE_OK);
          g_assert_cmpmem (ks, (A + 1) * H * r * sizeof (float), kw + 2 * A * H * r, (A + 1) * H * r * sizeof (float));
          if (ki == 0)
            {
              if (qg == NULL)
                {
                  qg = g_memdup2 (qw, n * H * r * sizeof (float));
                  kg = g_memdup2 (kw, n * H * r * sizeof (float));
                }
              g_assert_cmpmem (qw, n * H * r * sizeof (float), qg, n * H * r * sizeof (float));
              g_assert_cmpmem (kw, n * H * r * sizeof (float), kg, n * H * r * sizeof (float));
            }
          else if (qf == NULL)
            {
              qf = g_memdup2 (qw, n * H * r * sizeof (float));
              kf = g_memdup2 (kw, n * H * r * sizeof (float));
            }
          else
            {
              g_assert_cmpmem (qw, n * H * r * sizeof (float), qf, n * H * r * sizeof (float));
              g_assert_cmpmem (kw, n * H * r * sizeof (float), kf, n * H * r * sizeof (float));
            }
        }
    }
  if (qf != NULL)
    {
      assert_within_magnitude (qg, qf, qmag, bound, n * H * r);
      assert_within_magnitude (kg, kf, kmag, bound, n * H * r);
    }
  if (saved_kernel != NULL)
    g_setenv ("RPE_GEMM_KERNEL", saved_kernel, TRUE);
  else
    g_unsetenv ("RPE_GEMM_KERNEL");
  if (saved_threads != NULL)
    g_setenv ("RPE_NUM_THREADS", saved_threads, TRUE);
  else
    g_unsetenv ("RPE_NUM_THREADS");

  g_assert_cmpint (rpe_spe_encode_fused_rows (&p, n, 1, A, r, z, eps, q, k, qs, ks, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_spe_encode_fused_rows (&p, n, 0, 0, r, z, eps, q, k, qs, ks, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_spe_encode_fused_rows (&p, n, A, n, r, z, eps, q, k, qs, ks, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_spe_params_init (&pc, RPE_SPE_CONV, H, D, 3, FALSE), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_encode_fused_rows (&pc, n, 0, A, r, z, NULL, q, k, qs, ks, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);

  rpe_spe_params_clear (&p);
  rpe_spe_params_clear (&pc);
  g_free (z);
  g_free (eps);
  g_free (q);
  g_free (k);
  g_free (qw);
  g_free (kw);
  g_free (qs);
  g_free (ks);
  g_free (qf);
  g_free (kf);
  g_free (qg);
  g_free (kg);
  g_free (qmag);
  g_free (kmag);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/core/spe/params", test_params);
  g_test_add_func ("/core/spe/noise", test_noise);
  g_test_add_func ("/core/spe/sine/codes", test_sine_codes);
  g_test_add_func ("/core/spe/conv/codes", test_conv_codes);
  g_test_add_func ("/core/spe/conv/fft-vs-direct", test_conv_fft_direct);
  g_test_add_func ("/core/spe/encode", test_encode);
  g_test_add_func ("/core/spe/encode/fused-seeded", test_fused_seeded);
  g_test_add_func ("/core/spe/encode/conv-fused-vs-naive", test_conv_fused_vs_naive);
  g_test_add_func ("/core/spe/encode/fused-rows", test_fused_rows);
  g_test_add_func ("/core/spe/template/sine", test_template_sine);
  g_test_add_func ("/core/spe/template/conv", test_template_conv);
  g_test_add_func ("/core/spe/template/gated", test_template_gated);
  g_test_add_func ("/core/spe/template/toeplitz", test_template_toeplitz);
  g_test_add_func ("/core/spe/empirical/exact", test_empirical_exact);
  g_test_add_func ("/core/spe/empirical/dense-vs-naive", test_empirical_dense_vs_naive);
  g_test_add_func ("/core/spe/empirical/mean", test_empirical_mean);
  g_test_add_func ("/core/spe/empirical/slope", test_empirical_slope);
  g_test_add_func ("/core/spe/logits/exact", test_exact_logits);
  g_test_add_func ("/core/spe/logits/spe", test_spe_logits);
  g_test_add_func ("/core/spe/cancel", test_cancel);
  g_test_add_func ("/core/spe/bad-sizes", test_bad_sizes);

  return g_test_run ();
}

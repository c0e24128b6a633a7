#include "config.h"

#include <glib.h>
#include <math.h>
#include <string.h>

#include "rpe-alloc.h"
#include "rpe-rng.h"
#include "rpe-rng-private.h"

/* Known-answer vectors of Philox4x32-10 (Salmon et al. 2011, Random123 kat_vectors). */
static void
test_philox_kat (void)
{
  static const struct { uint32_t ctr[4], key[2], out[4]; } kat[] = {
    { { 0, 0, 0, 0 }, { 0, 0 }, { 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8 } },
    { { 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff }, { 0xffffffff, 0xffffffff },
      { 0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd } },
    { { 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344 }, { 0xa4093822, 0x299f31d0 },
      { 0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1 } },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (kat); i++)
    {
      uint32_t out[4];

      rpe_philox4x32_10 (kat[i].ctr, kat[i].key, out);
      for (int j = 0; j < 4; j++)
        g_assert_cmphex (out[j], ==, kat[i].out[j]);
    }
}

/* Any chunking of the draw gives the same numbers: element i depends on (seed, stream, i) only. */
static void
test_chunking_invariance (void)
{
  const gsize n = 1001;
  float *whole = g_new (float, n);
  float *pieces = g_new (float, n);
  gsize pos = 0, step = 1;

  rpe_rng_normal (42, RPE_STREAM_SINE, 0, whole, n);
  while (pos < n)
    {
      gsize len = MIN (step, n - pos);
      rpe_rng_normal (42, RPE_STREAM_SINE, pos, pieces + pos, len);
      pos += len;
      step = step * 3 % 17 + 1;
    }
  for (gsize i = 0; i < n; i++)
    g_assert_cmpfloat (whole[i], ==, pieces[i]);

  /* another seed or stream differs */
  rpe_rng_normal (43, RPE_STREAM_SINE, 0, pieces, n);
  {
    gsize same = 0;
    for (gsize i = 0; i < n; i++)
      same += whole[i] == pieces[i];
    g_assert_cmpuint (same, <, 5);
  }
  rpe_rng_normal (42, RPE_STREAM_CONV, 0, pieces, n);
  {
    gsize same = 0;
    for (gsize i = 0; i < n; i++)
      same += whole[i] == pieces[i];
    g_assert_cmpuint (same, <, 5);
  }
  g_free (whole);
  g_free (pieces);
}

/* rpe_rng_normal_parallel equals one rpe_rng_normal call, bit for bit, for any worker count,
 * offset (shares cut at whole batches of 32 from the stream's start) and length, and writes
 * nothing past n. */
static void
test_normal_parallel (void)
{
  const gsize lengths[] = { 0, 1, 31, 65535, 2 * 65536 + 7, 5 * 65536 + 13 };
  const guint64 offsets[] = { 0, 5, 32, 1000003 };
  const gsize workers[] = { 0, 1, 2, 3, 7 };
  const gsize max = 5 * 65536 + 13;
  float *ref = g_new (float, max), *got = g_new (float, max + 1);

  for (gsize a = 0; a < G_N_ELEMENTS (lengths); a++)
    for (gsize b = 0; b < G_N_ELEMENTS (offsets); b++)
      {
        gsize n = lengths[a];

        rpe_rng_normal (7, RPE_STREAM_QUERIES, offsets[b], ref, n);
        for (gsize c = 0; c < G_N_ELEMENTS (workers); c++)
          {
            for (gsize i = 0; i <= n; i++)
              got[i] = -1234.5f;
            rpe_rng_normal_parallel (7, RPE_STREAM_QUERIES, offsets[b], got, n, workers[c]);
            g_assert_true (n == 0 || memcmp (ref, got, n * sizeof (float)) == 0);
            g_assert_cmpfloat (got[n], ==, -1234.5f);
          }
      }
  g_free (ref);
  g_free (got);
}

/* Moments of N(0,1): with n = 2^20 the standard errors are 1e-3 (mean), 1.4e-3 (variance),
 * 2.4e-3 (skewness), 4.9e-3 (excess kurtosis); tolerances are ~5 standard errors. */
static void
test_normal_moments (void)
{
  const gsize n = 1 << 20;
  float *x = g_new (float, n);
  double m1 = 0, m2 = 0, m3 = 0, m4 = 0;
  gsize tail = 0;

  rpe_rng_normal (7, RPE_STREAM_QUERIES, 0, x, n);
  for (gsize i = 0; i < n; i++)
    {
      double v = x[i];
      g_assert_true (isfinite (v));
      m1 += v;
      m2 += v * v;
      m3 += v * v * v;
      m4 += v * v * v * v;
      tail += fabs (v) > 1.959964;
    }
  m1 /= n; m2 /= n; m3 /= n; m4 /= n;
  g_assert_cmpfloat_with_epsilon (m1, 0.0, 5e-3);
  g_assert_cmpfloat_with_epsilon (m2, 1.0, 7e-3);
  g_assert_cmpfloat_with_epsilon (m3, 0.0, 1.2e-2);
  g_assert_cmpfloat_with_epsilon (m4 - 3.0, 0.0, 2.5e-2);
  /* P(|x| > 1.96) = 0.05; binomial sd = sqrt(0.05 * 0.95 / n) = 2.1e-4 */
  g_assert_cmpfloat_with_epsilon ((double) tail / n, 0.05, 1.1e-3);
  g_free (x);
}

static int
cmp_float (const void *a, const void *b)
{
  const float x = *(const float *) a, y = *(const float *) b;

  return x < y ? -1 : x > y;
}

/* The distribution of 4 M draws against N(0, 1): the Kolmogorov-Smirnov statistic D below its
 * 1 % critical value 1.628 / sqrt (n), the Anderson-Darling A^2 below its 1 % critical value
 * 3.857 (the distribution fully specified), and the tails: P(|x| > 3) = 2.700e-3 and
 * P(|x| > 4) = 6.334e-5 within 5 Poisson standard deviations of their expected counts
 * (10 799 +- 520 and 253 +- 80), |x| > 5 (2.3 expected) at most 15 times, and no value beyond
 * sqrt (-2 ln 2^-32) = 6.6604 (the smallest radius uniform is 2^-32). */
static void
test_normal_distribution (void)
{
  const gsize n = (gsize) 1 << 22;
  float *x = g_new (float, n);
  double d = 0, a2 = 0;
  gsize t3 = 0, t4 = 0, t5 = 0;

  rpe_rng_normal (2024, RPE_STREAM_CONV, 12345, x, n);
  for (gsize i = 0; i < n; i++)
    {
      const double v = fabs (x[i]);

      g_assert_true (v <= 6.6604);
      t3 += v > 3;
      t4 += v > 4;
      t5 += v > 5;
    }
  qsort (x, n, sizeof (float), cmp_float);
  for (gsize i = 0; i < n; i++)
    {
      /* Phi (x_i) and 1 - Phi (x_{n-1-i}) from erfc, each accurate where it is small */
      const double lo = 0.5 * erfc (-x[i] / M_SQRT2);
      const double lo_rev = 0.5 * erfc (x[n - 1 - i] / M_SQRT2);

      d = fmax (d, fmax ((double) (i + 1) / n - lo, lo - (double) i / n));
      /* A^2 = -n - 1/n sum (2i + 1) (ln F(x_i) + ln (1 - F(x_{n-1-i}))) */
      a2 += (2.0 * i + 1.0) * (log (lo) + log (lo_rev));
    }
  a2 = -(double) n - a2 / n;
  g_test_message ("normal draws: KS D = %.3g (1%% critical %.3g), A^2 = %.3f, |x| > 3: %zu, > 4: %zu, > 5: %zu",
                  d, 1.628 / sqrt ((double) n), a2, t3, t4, t5);
  g_assert_cmpfloat (d, <, 1.628 / sqrt ((double) n));
  g_assert_cmpfloat (a2, <, 3.857);
  g_assert_cmpfloat (fabs ((double) t3 - 2.6998e-3 * n), <, 520);
  g_assert_cmpfloat (fabs ((double) t4 - 6.3342e-5 * n), <, 80);
  g_assert_cmpuint (t5, <=, 15);
  g_free (x);
}

/* Uniform draws: in [0, 1), mean 1/2, variance 1/12, and lag-1 correlation near 0. */
static void
test_uniform (void)
{
  const gsize n = 1 << 18;
  float *u = g_new (float, n);
  double mean = 0, var = 0, cov = 0;

  rpe_rng_uniform (9, RPE_STREAM_PARAMS, 0, u, n);
  for (gsize i = 0; i < n; i++)
    {
      g_assert_cmpfloat (u[i], >=, 0.0f);
      g_assert_cmpfloat (u[i], <, 1.0f);
      mean += u[i];
    }
  mean /= n;
  for (gsize i = 0; i < n; i++)
    {
      var += (u[i] - mean) * (u[i] - mean);
      if (i + 1 < n)
        cov += (u[i] - mean) * (u[i + 1] - mean);
    }
  var /= n;
  cov /= (n - 1);
  g_assert_cmpfloat_with_epsilon (mean, 0.5, 3e-3);
  g_assert_cmpfloat_with_epsilon (var, 1.0 / 12.0, 1e-3);
  g_assert_cmpfloat_with_epsilon (cov / var, 0.0, 1e-2);
  g_free (u);
}

static void
test_u64_distinct (void)
{
  GHashTable *seen = g_hash_table_new (g_int64_hash, g_int64_equal);
  gint64 *vals = g_new (gint64, 10000);

  for (int i = 0; i < 10000; i++)
    {
      vals[i] = (gint64) rpe_rng_u64 (1, RPE_STREAM_LRPE, (uint64_t) i);
      g_assert_false (g_hash_table_contains (seen, &vals[i]));
      g_hash_table_add (seen, &vals[i]);
    }
  g_assert_cmpuint (rpe_rng_u64 (1, RPE_STREAM_LRPE, 5), ==, rpe_rng_u64 (1, RPE_STREAM_LRPE, 5));
  g_hash_table_unref (seen);
  g_free (vals);
}

/* Every code path of the normal generator (portable, AVX2, AVX-512) gives the same
 * bits: draws at many offsets and lengths (partial batches at both ends, odd and even
 * batch counts), seeds and streams with high bits set, and across the wrap of the low
 * word of the Philox counter (block 2^32, normal 2^34), which the vector paths treat
 * apart. */
static void
test_paths_agree (void)
{
  static const struct { uint64_t seed, stream, offset; gsize n; } cases[] = {
    { 0, 0, 0, 1 }, { 1, RPE_STREAM_CONV, 0, 32 }, { 2, RPE_STREAM_CONV, 5, 27 },
    { 3, RPE_STREAM_SINE, 31, 2 }, { 4, RPE_STREAM_CONV, 128, 4223 }, { 5, RPE_STREAM_GATE, 17, 64 },
    { 6, RPE_STREAM_CONV, 4608 * 37 + 128, 4223 }, { 7, 1000, 1, 95 }, { 8, 1000, 64, 96 },
    { G_GUINT64_CONSTANT (0xfedcba9876543210), G_GUINT64_CONSTANT (0x8000000000000003), 999, 20001 },
    { 9, RPE_STREAM_QUERIES, (G_GUINT64_CONSTANT (1) << 34) - 333, 1000 },
    { 10, RPE_STREAM_QUERIES, (G_GUINT64_CONSTANT (1) << 34) - 64, 128 },
    { 11, RPE_STREAM_QUERIES, (G_GUINT64_CONSTANT (1) << 35) - 40, 33 },
    { 12, RPE_STREAM_KEYS, G_GUINT64_CONSTANT (3) << 40, 1 << 16 },
  };
  const RpeRngPath paths[] = { RPE_RNG_PATH_AVX2, RPE_RNG_PATH_AVX512, RPE_RNG_PATH_AUTO };
  gsize checked = 0;

  g_assert_true (_rpe_rng_path_available (RPE_RNG_PATH_GENERIC));
  g_assert_true (_rpe_rng_path_available (RPE_RNG_PATH_AUTO));
  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      const gsize n = cases[c].n;
      float *ref = g_new (float, n), *got = g_new (float, n), *whole = g_new (float, n);

      _rpe_rng_normal_path (RPE_RNG_PATH_GENERIC, cases[c].seed, cases[c].stream, cases[c].offset, ref, n);
      for (gsize i = 0; i < n; i++)
        g_assert_true (isfinite (ref[i]) && fabsf (ref[i]) < 6.7f);
      for (gsize p = 0; p < G_N_ELEMENTS (paths); p++)
        {
          if (!_rpe_rng_path_available (paths[p]))
            {
              g_test_message ("normal path %d: not on this CPU", (int) paths[p]);
              continue;
            }
          memset (got, 0, n * sizeof (float));
          _rpe_rng_normal_path (paths[p], cases[c].seed, cases[c].stream, cases[c].offset, got, n);
          g_assert_true (memcmp (ref, got, n * sizeof (float)) == 0);
          checked++;
        }
      /* and the public entry point is one of them */
      rpe_rng_normal (cases[c].seed, cases[c].stream, cases[c].offset, whole, n);
      g_assert_true (memcmp (ref, whole, n * sizeof (float)) == 0);
      g_free (ref);
      g_free (got);
      g_free (whole);
    }
  g_test_message ("%" G_GSIZE_FORMAT " vector-path draws checked against the portable one", checked);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/core/rng/philox-known-answers", test_philox_kat);
  g_test_add_func ("/core/rng/chunking-invariance", test_chunking_invariance);
  g_test_add_func ("/core/rng/normal-parallel", test_normal_parallel);
  g_test_add_func ("/core/rng/normal-moments", test_normal_moments);
  g_test_add_func ("/core/rng/normal-distribution", test_normal_distribution);
  g_test_add_func ("/core/rng/paths-agree", test_paths_agree);
  g_test_add_func ("/core/rng/uniform", test_uniform);
  g_test_add_func ("/core/rng/u64-distinct", test_u64_distinct);
  return g_test_run ();
}

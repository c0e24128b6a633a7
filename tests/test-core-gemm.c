/* test-core-gemm.c: the core's own matrix product (core/rpe-gemm-private.h). */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib.h>

#include "rpe-gemm-private.h"

static const RpeGemmIsa isas[] = { RPE_GEMM_GENERIC, RPE_GEMM_AVX2, RPE_GEMM_AVX512 };

static float *
random_floats (GRand *rand, size_t n)
{
  float *x = g_new (float, n);

  for (size_t i = 0; i < n; i++)
    x[i] = (float) g_rand_double_range (rand, -2.0, 2.0);
  return x;
}

/* C = alpha A B (+ C0) against the sum in double: a float sum of k products in any order, one
 * rounding per product and per addition, then alpha and the addition of C0, is within
 * (k + 3) u (|alpha| sum |a b| + |c0|) of the exact value, u = 2^-24 (Higham, Accuracy and
 * Stability of Numerical Algorithms, 2nd ed., section 3.1). */
static void
check_against_double (RpeGemmIsa isa, GRand *rand, size_t m, size_t n, size_t k, gboolean transposed,
                      gboolean accumulate)
{
  const size_t lda = k + 3, ldb = n + 5, ldc = n + 2;
  const float alpha = (float) g_rand_double_range (rand, 0.25, 1.5);
  float *a = random_floats (rand, (transposed ? k * (m + 3) : m * lda) + 1);
  float *b = random_floats (rand, k * ldb + 1);
  float *c = random_floats (rand, m * ldc + 1);
  float *c0 = g_memdup2 (c, (m * ldc + 1) * sizeof (float));
  const size_t ars = transposed ? 1 : lda, acs = transposed ? m + 3 : 1;

  _rpe_gemm_isa_run (isa, m, n, k, alpha, a, ars, acs, b, ldb, accumulate, c, ldc);
  for (size_t i = 0; i < m; i++)
    {
      for (size_t j = 0; j < n; j++)
        {
          double sum = 0, mag = 0, want, bound;

          for (size_t t = 0; t < k; t++)
            {
              double p = (double) a[i * ars + t * acs] * b[t * ldb + j];

              sum += p;
              mag += fabs (p);
            }
          want = alpha * sum + (accumulate ? c0[i * ldc + j] : 0.0);
          bound = (k + 3) * 0x1p-24 * (fabs (alpha) * mag + (accumulate ? fabs (c0[i * ldc + j]) : 0.0)) + 1e-38;
          if (!(fabs (c[i * ldc + j] - want) <= bound))
            g_error ("%s m=%zu n=%zu k=%zu: c[%zu, %zu] = %.9g, want %.9g +- %.3g", _rpe_gemm_isa_name (isa), m, n, k,
                     i, j, c[i * ldc + j], want, bound);
        }
      /* nothing past column n is written */
      for (size_t j = n; j < ldc; j++)
        g_assert_true (c[i * ldc + j] == c0[i * ldc + j]);
    }
  g_free (a);
  g_free (b);
  g_free (c);
  g_free (c0);
}

/* Every build this CPU has, on shapes that leave partial tiles of every kind (rows 1-6 of a
 * strip, 1-4 vectors of a panel, a last vector of 1-15 lanes), k = 0, row-major and transposed
 * A, with and without accumulation. */
static void
test_against_double (void)
{
  GRand *rand = g_rand_new_with_seed (5);
  static const size_t ms[] = { 1, 2, 5, 6, 7, 13, 31 };
  static const size_t ns[] = { 1, 3, 8, 15, 16, 17, 33, 64, 65, 100 };
  static const size_t ks[] = { 0, 1, 2, 10, 37, 704 };

  for (size_t is = 0; is < G_N_ELEMENTS (isas); is++)
    {
      if (!_rpe_gemm_isa_available (isas[is]))
        {
          g_test_message ("%s: not on this CPU", _rpe_gemm_isa_name (isas[is]));
          continue;
        }
      for (size_t mi = 0; mi < G_N_ELEMENTS (ms); mi++)
        for (size_t ni = 0; ni < G_N_ELEMENTS (ns); ni++)
          for (size_t ki = 0; ki < G_N_ELEMENTS (ks); ki++)
            check_against_double (isas[is], rand, ms[mi], ns[ni], ks[ki], (mi + ni + ki) % 2 == 1,
                                  (mi + 2 * ni + ki) % 3 == 0);
    }
  g_rand_free (rand);
}

/* The value of an element depends on its row of A and column of B only: any cut of the rows
 * and columns into sub-products (other tile shapes, other partial tiles) gives the whole
 * product bit for bit; so does a build with the other vector width among the FMA builds. */
static void
test_cuts_bitwise (void)
{
  const size_t m = 71, n = 83, k = 129;
  GRand *rand = g_rand_new_with_seed (9);
  float *a = random_floats (rand, m * k), *b = random_floats (rand, k * n);
  float *whole = g_new (float, m * n), *cut = g_new (float, m * n), *fma_ref = NULL;
  static const size_t row_cuts[] = { 1, 4, 7, 30 };
  static const size_t col_cuts[] = { 1, 5, 16, 21, 48 };

  for (size_t is = 0; is < G_N_ELEMENTS (isas); is++)
    {
      if (!_rpe_gemm_isa_available (isas[is]))
        continue;
      _rpe_gemm_isa_run (isas[is], m, n, k, 0.75f, a, k, 1, b, n, false, whole, n);
      for (size_t rc = 0; rc < G_N_ELEMENTS (row_cuts); rc++)
        for (size_t cc = 0; cc < G_N_ELEMENTS (col_cuts); cc++)
          {
            for (size_t i = 0; i < m * n; i++)
              cut[i] = NAN;
            for (size_t i0 = 0; i0 < m; i0 += row_cuts[rc])
              for (size_t j0 = 0; j0 < n; j0 += col_cuts[cc])
                _rpe_gemm_isa_run (isas[is], MIN (row_cuts[rc], m - i0), MIN (col_cuts[cc], n - j0), k, 0.75f,
                                   a + i0 * k, k, 1, b + j0, n, false, cut + i0 * n + j0, n);
            g_assert_cmpmem (cut, m * n * sizeof (float), whole, m * n * sizeof (float));
          }
      /* accumulating into zeros adds +0 to each value: the same bits (no value here is -0) */
      memset (cut, 0, m * n * sizeof (float));
      _rpe_gemm_isa_run (isas[is], m, n, k, 0.75f, a, k, 1, b, n, true, cut, n);
      g_assert_cmpmem (cut, m * n * sizeof (float), whole, m * n * sizeof (float));
      if (isas[is] != RPE_GEMM_GENERIC)
        {
          if (fma_ref == NULL)
            fma_ref = g_memdup2 (whole, m * n * sizeof (float));
          else
            g_assert_cmpmem (whole, m * n * sizeof (float), fma_ref, m * n * sizeof (float));
        }
    }
  g_free (fma_ref);
  g_free (a);
  g_free (b);
  g_free (whole);
  g_free (cut);
  g_rand_free (rand);
}

/* Non-finite inputs propagate as IEEE arithmetic says (callers check for them). */
static void
test_non_finite (void)
{
  float a[4] = { 1, NAN, 2, 3 }, b[8] = { 1, 1, 1, 1, 1, 1, 1, 1 }, c[4];

  for (size_t is = 0; is < G_N_ELEMENTS (isas); is++)
    {
      if (!_rpe_gemm_isa_available (isas[is]))
        continue;
      _rpe_gemm_isa_run (isas[is], 2, 2, 2, 1.0f, a, 2, 1, b, 4, false, c, 2);
      g_assert_true (isnan (c[0]) && isnan (c[1]));
      g_assert_cmpfloat (c[2], ==, 5.0f);
      g_assert_cmpfloat (c[3], ==, 5.0f);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_message ("this CPU runs the %s build", _rpe_gemm_isa_name (_rpe_gemm_isa ()));
  g_test_add_func ("/core/gemm/against-double", test_against_double);
  g_test_add_func ("/core/gemm/cuts-bitwise", test_cuts_bitwise);
  g_test_add_func ("/core/gemm/non-finite", test_non_finite);
  return g_test_run ();
}

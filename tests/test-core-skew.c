/* test-core-skew.c: exact relative logits (Shaw / Huang skewing) against a
 * naive double-precision q_m . E[m - n] reference. */
#include "config.h"

#include <glib.h>
#include <math.h>
#include <stdatomic.h>

#include "rpe-alloc.h"
#include "rpe-skew.h"
#include "rpe-test-utils.h"

static float *
random_floats (GRand  *rand,
               size_t  count)
{
  float *x = g_new (float, count);

  for (size_t i = 0; i < count; i++)
    x[i] = (float) g_rand_double_range (rand, -1.0, 1.0);
  return x;
}

/* Naive reference (H, N, N): (q.k + q.E[m-n]) / sqrt(D), or q.E[m-n] alone
 * when with_k is false; causal entries are -inf. */
static double *
naive_rel (size_t       n,
           size_t       h_count,
           size_t       d,
           const float *q,
           const float *k,
           const float *e,
           gboolean     per_head,
           gboolean     causal)
{
  double *ref = g_new (double, h_count * n * n);

  for (size_t h = 0; h < h_count; h++)
    for (size_t m = 0; m < n; m++)
      for (size_t j = 0; j < n; j++)
        {
          const float *qm = q + (m * h_count + h) * d;
          long tau = (long) m - (long) j;
          const float *et = e + ((per_head ? h * (2 * n - 1) : 0) + (size_t) (tau + (long) n - 1)) * d;
          double s = 0, qk = 0;

          for (size_t t = 0; t < d; t++)
            {
              s += (double) qm[t] * et[t];
              if (k != NULL)
                qk += (double) qm[t] * k[(j * h_count + h) * d + t];
            }
          if (causal && j > m)
            ref[(h * n + m) * n + j] = -INFINITY;
          else
            ref[(h * n + m) * n + j] = k != NULL ? (qk + s) / sqrt ((double) d) : s;
        }
  return ref;
}

/* Compares finite entries by relative error; -inf entries must match exactly. */
static void
compare_map (const float  *got,
             const double *ref,
             size_t        count,
             double        tol)
{
  double scale = 1e-3, err = 0;

  for (size_t i = 0; i < count; i++)
    if (isfinite (ref[i]))
      scale = MAX (scale, fabs (ref[i]));
  for (size_t i = 0; i < count; i++)
    {
      if (isinf (ref[i]))
        {
          g_assert_true (isinf (got[i]) && got[i] < 0);
          continue;
        }
      g_assert_true (isfinite (got[i]));
      err = MAX (err, fabs (got[i] - ref[i]));
    }
  g_test_message ("max rel err %.2e over %zu entries", err / scale, count);
  g_assert_cmpfloat (err / scale, <, tol);
}

static void
test_skew_vs_naive (void)
{
  const size_t lengths[] = { 1, 2, 3, 7, 13, 31, 64, 65, 97, 131 };
  GRand *rand = g_rand_new_with_seed (11);

  for (size_t li = 0; li < G_N_ELEMENTS (lengths); li++)
    for (int variant = 0; variant < 8; variant++)
      {
        const size_t n = lengths[li], h_count = 3, d = 5;
        gboolean causal = variant & 1, per_head = (variant >> 1) & 1, with_k = !((variant >> 2) & 1);
        float *q = random_floats (rand, n * h_count * d);
        float *k = random_floats (rand, n * h_count * d);
        float *e = random_floats (rand, (per_head ? h_count : 1) * (2 * n - 1) * d);
        float *out = g_new (float, h_count * n * n);
        double *ref = naive_rel (n, h_count, d, q, with_k ? k : NULL, e, per_head, causal);
        RpeRelSpec spec = {
          .n = n, .n_heads = h_count, .d = d, .q = q, .k = with_k ? k : NULL,
          .rel = e, .rel_per_head = per_head, .causal = causal,
        };

        g_assert_cmpint (rpe_rel_logits (&spec, out, NULL), ==, RPE_OK);
        compare_map (out, ref, h_count * n * n, 1e-5);

        /* Row blocks at odd offsets give the same rows. */
        if (n > 3)
          {
            size_t m0 = n / 3, rows = n - m0 - 1;
            float *blk = g_new (float, rows * n);

            g_assert_cmpint (rpe_rel_logits_rows (&spec, h_count - 1, m0, rows, blk, NULL), ==, RPE_OK);
            compare_map (blk, ref + ((h_count - 1) * n + m0) * n, rows * n, 1e-5);
            g_free (blk);
          }

        g_free (ref);
        g_free (out);
        g_free (e);
        g_free (k);
        g_free (q);
      }
  g_rand_free (rand);
}

/* The literal Huang procedure on the causal product, written out in the test:
 * X = Q E_r^T with E_r rows w_{-N+1} .. w_0 (w_x = E[-x], relative position x = n - m),
 * pad one column left, reshape (N+1) x N, drop the first row; the lower
 * triangle must equal our causal S_rel. */
static void
test_skew_literal_procedure (void)
{
  const size_t n = 9, d = 4;
  GRand *rand = g_rand_new_with_seed (5);
  float *q = random_floats (rand, n * d);
  float *e = random_floats (rand, (2 * n - 1) * d);
  double *padded = g_new0 (double, n * (n + 1));
  float *out = g_new (float, n * n);
  RpeRelSpec spec = { .n = n, .n_heads = 1, .d = d, .q = q, .rel = e, .causal = TRUE };

  for (size_t m = 0; m < n; m++)
    for (size_t c = 0; c < n; c++)
      {
        /* column c of E_r holds w_{c - (N-1)} = E[(N-1) - c] */
        const float *w = e + ((n - 1 - c) + (n - 1)) * d;
        double s = 0;

        for (size_t t = 0; t < d; t++)
          s += (double) q[m * d + t] * w[t];
        padded[m * (n + 1) + c + 1] = s;
      }
  g_assert_cmpint (rpe_rel_logits (&spec, out, NULL), ==, RPE_OK);
  /* reshape to (N+1, N) is a reinterpretation; dropping row 0 = offset N */
  for (size_t m = 0; m < n; m++)
    for (size_t j = 0; j <= m; j++)
      g_assert_cmpfloat_with_epsilon (out[m * n + j], padded[n + m * n + j], 1e-5);

  g_free (out);
  g_free (padded);
  g_free (e);
  g_free (q);
  g_rand_free (rand);
}

/* One block of rows of a long sequence fits in a budget far below N x N x D
 * (and below N x N): the tensor of Shaw et al. is never formed. */
static void
test_skew_memory (void)
{
  const size_t n = 4096, d = 64, rows = 16;
  GRand *rand = g_rand_new_with_seed (3);
  float *q = random_floats (rand, n * d);
  float *k = random_floats (rand, n * d);
  float *e = random_floats (rand, (2 * n - 1) * d);
  float *out = g_new (float, rows * n);
  RpeRelSpec spec = { .n = n, .n_heads = 1, .d = d, .q = q, .k = k, .rel = e };
  double *ref = g_new (double, rows * n);
  const size_t m0 = 2000;

  /* N^2 D floats = 4 GiB, N^2 = 64 MiB; the block needs ~16 x 8191 floats. */
  rpe_budget_set (1 << 20);
  g_assert_cmpint (rpe_rel_logits_rows (&spec, 0, m0, rows, out, NULL), ==, RPE_OK);
  rpe_budget_set (0);

  for (size_t i = 0; i < rows; i++)
    for (size_t j = 0; j < n; j++)
      {
        size_t m = m0 + i;
        const float *et = e + (m - j + n - 1) * d;
        double s = 0;

        for (size_t t = 0; t < d; t++)
          s += (double) q[m * d + t] * ((double) k[j * d + t] + et[t]);
        ref[i * n + j] = s / 8.0;
      }
  g_assert_cmpfloat (rpe_test_max_rel_err (out, ref, rows * n, 1e-3), <, 1e-5);

  g_free (ref);
  g_free (out);
  g_free (e);
  g_free (k);
  g_free (q);
  g_rand_free (rand);
}

static void
test_skew_errors (void)
{
  float q[12] = { 0 }, k[12] = { 0 }, e[21] = { 0 }, out[64];
  RpeRelSpec spec = { .n = 4, .n_heads = 1, .d = 3, .q = q, .k = k, .rel = e };
  atomic_int cancel = 1;
  RpeMonitor monitor = { .cancel = &cancel };

  g_assert_cmpint (rpe_rel_logits (NULL, out, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_rel_logits (&spec, NULL, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_rel_logits_rows (&spec, 1, 0, 1, out, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_rel_logits_rows (&spec, 0, 3, 2, out, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_rel_logits_rows (&spec, 0, 0, 0, out, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_rel_logits (&spec, out, &monitor), ==, RPE_ERROR_CANCELLED);
  spec.n = (size_t) 1 << 62;
  g_assert_cmpint (rpe_rel_logits (&spec, out, NULL), ==, RPE_ERROR_OVERFLOW);
  spec.n = 4;
  e[7] = NAN;
  g_assert_cmpint (rpe_rel_logits (&spec, out, NULL), ==, RPE_ERROR_NOT_FINITE);
  e[7] = 0;
  spec.d = 0;
  g_assert_cmpint (rpe_rel_logits (&spec, out, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/core/skew/vs-naive", test_skew_vs_naive);
  g_test_add_func ("/core/skew/literal-procedure", test_skew_literal_procedure);
  g_test_add_func ("/core/skew/memory", test_skew_memory);
  g_test_add_func ("/core/skew/errors", test_skew_errors);
  return g_test_run ();
}

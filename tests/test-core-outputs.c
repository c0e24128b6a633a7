/* test-core-outputs.c: outputs Y of exact and SPE attention (core/rpe-outputs.c) against
 * naive references written here: full N x N maps times V in double, the column identity of
 * impulses, and the 1/sqrt(R) law of the unbiased identity-kernel estimate. */
#include "config.h"

#include <glib.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "rpe-alloc.h"
#include "rpe-attention.h"
#include "rpe-curves.h"
#include "rpe-linear-attention.h"
#include "rpe-outputs.h"
#include "rpe-rng.h"
#include "rpe-spe.h"
#include "rpe-test-utils.h"

#define H 2
#define D 4

typedef struct
{
  RpeSpeParams  params;
  size_t        n;
  float        *qa, *ka;    /* (N, H, D) */
  float        *q, *k;      /* (N, D) of the head */
  size_t        head;
} Fixture;

static void
fixture_init (Fixture      *fx,
              RpeSpeMethod  method,
              size_t        n,
              size_t        head,
              gboolean      unit)
{
  memset (fx, 0, sizeof *fx);
  g_assert_cmpint (rpe_spe_params_init (&fx->params, method, H, D, method == RPE_SPE_SINE ? 3 : 6, TRUE), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_params_random (&fx->params, 11), ==, RPE_OK);
  fx->n = n;
  fx->head = head;
  fx->qa = g_new (float, n * H * D);
  fx->ka = g_new (float, n * H * D);
  fx->q = g_new (float, n * D);
  fx->k = g_new (float, n * D);
  if (unit)
    {
      for (size_t i = 0; i < n * H * D; i++)
        fx->qa[i] = fx->ka[i] = 1.0f;
    }
  else
    {
      rpe_rng_normal (5, RPE_STREAM_QUERIES, 0, fx->qa, n * H * D);
      rpe_rng_normal (5, RPE_STREAM_KEYS, 0, fx->ka, n * H * D);
    }
  for (size_t m = 0; m < n; m++)
    {
      memcpy (fx->q + m * D, fx->qa + (m * H + head) * D, D * sizeof (float));
      memcpy (fx->k + m * D, fx->ka + (m * H + head) * D, D * sizeof (float));
    }
}

static void
fixture_clear (Fixture *fx)
{
  rpe_spe_params_clear (&fx->params);
  g_free (fx->qa);
  g_free (fx->ka);
  g_free (fx->q);
  g_free (fx->k);
}

static RpeOutputsSpec
make_spec (Fixture           *fx,
           RpeOutputsCompare  compare,
           gboolean           causal,
           size_t             r,
           const float       *v,
           size_t             dv)
{
  RpeOutputsSpec s = { 0 };

  s.params = &fx->params;
  s.head = fx->head;
  s.n = fx->n;
  s.r = r;
  s.gated = TRUE;
  s.causal = causal;
  s.feature_map = RPE_FEATURE_ELU1;
  s.compare = compare;
  s.q = fx->q;
  s.k = fx->k;
  s.v = v;
  s.dv = dv;
  return s;
}

/* The head's full exact logits (N, N) in double, naive from the analytic lag profiles:
 * l(m, n) = sum_d q k Ptilde_d(m - n) / sqrt(D) (docs/math.md, section 4); causal entries NaN. */
static double *
naive_exact_logits (Fixture  *fx,
                    gboolean  causal)
{
  size_t n = fx->n, lags = 2 * n - 1;
  float *prof = g_new (float, D * lags);
  double *l = g_new (double, n * n);

  for (size_t d = 0; d < D; d++)
    g_assert_cmpint (rpe_spe_template_lags (&fx->params, fx->head, d, n, TRUE, prof + d * lags), ==, RPE_OK);
  for (size_t m = 0; m < n; m++)
    for (size_t j = 0; j < n; j++)
      {
        double acc = 0;

        for (size_t d = 0; d < D; d++)
          acc += (double) fx->q[m * D + d] * fx->k[j * D + d] * prof[d * lags + m + n - 1 - j];
        l[m * n + j] = causal && j > m ? NAN : acc / sqrt ((double) D);
      }
  g_free (prof);
  return l;
}

/* Row softmax in double (NaN = masked -> 0). */
static void
naive_softmax (double *l,
               size_t  n)
{
  for (size_t m = 0; m < n; m++)
    {
      double mx = -INFINITY, sum = 0;

      for (size_t j = 0; j < n; j++)
        if (!isnan (l[m * n + j]))
          mx = fmax (mx, l[m * n + j]);
      for (size_t j = 0; j < n; j++)
        {
          l[m * n + j] = isnan (l[m * n + j]) ? 0.0 : exp (l[m * n + j] - mx);
          sum += l[m * n + j];
        }
      for (size_t j = 0; j < n; j++)
        l[m * n + j] /= sum;
    }
}

static double *
naive_times (const double *a,
             const float  *v,
             size_t        n,
             size_t        dv)
{
  double *y = g_new0 (double, n * dv);

  for (size_t m = 0; m < n; m++)
    for (size_t j = 0; j < n; j++)
      for (size_t c = 0; c < dv; c++)
        y[m * dv + c] += (isnan (a[m * n + j]) ? 0.0 : a[m * n + j]) * v[j * dv + c];
  return y;
}

/* The rpe_spe_exact_logits path agrees with the naive logits (checks the test's own reference). */
static void
test_reference_logits (void)
{
  Fixture fx;
  float *full;
  double *l;
  size_t n = 24;

  fixture_init (&fx, RPE_SPE_SINE, n, 1, FALSE);
  full = g_new (float, H * n * n);
  g_assert_cmpint (rpe_spe_exact_logits (&fx.params, n, fx.qa, fx.ka, TRUE, full, NULL), ==, RPE_OK);
  l = naive_exact_logits (&fx, FALSE);
  g_assert_cmpfloat (rpe_test_max_rel_err (full + fx.head * n * n, l, n * n, 1e-3), <, 1e-5);
  g_free (full);
  g_free (l);
  fixture_clear (&fx);
}

/* Streamed (row blocks of any size) and full computations agree: the reference output equals
 * the full N x N operator times V, computed naively in double. */
static void
test_streamed_vs_full (void)
{
  static const size_t blocks[] = { 1, 7, 64, 0 };
  size_t n = 61, dv = 3;

  for (int method = 0; method < 2; method++)
    for (int compare = 0; compare < 2; compare++)
      for (int causal = 0; causal < 2; causal++)
        {
          Fixture fx;
          float *v = g_new (float, n * dv), *y = g_new (float, n * dv);
          double *a, *ref;
          RpeOutputsSpec s;

          fixture_init (&fx, method == 0 ? RPE_SPE_SINE : RPE_SPE_CONV, n, 1, FALSE);
          g_assert_cmpint (rpe_outputs_values (RPE_VALUES_NOISE, n, dv, NULL, 0, 3, v), ==, RPE_OK);
          a = naive_exact_logits (&fx, causal);
          if (compare == RPE_OUTPUTS_SOFTMAX)
            naive_softmax (a, n);
          ref = naive_times (a, v, n, dv);
          s = make_spec (&fx, compare, causal, 8, v, dv);
          for (size_t b = 0; b < G_N_ELEMENTS (blocks); b++)
            {
              s.block = blocks[b];
              g_assert_cmpint (rpe_outputs_reference (&s, y, NULL), ==, RPE_OK);
              g_assert_cmpfloat (rpe_test_max_rel_err (y, ref, n * dv, 1e-3), <, 2e-5);
            }
          g_free (a);
          g_free (ref);
          g_free (v);
          g_free (y);
          fixture_clear (&fx);
        }
}

/* The head's draw is the slice of the module's full draw (what the attention view encodes). */
static void
test_encode_head_is_slice (void)
{
  size_t n = 40, r = 16, dv = 1;

  for (int method = 0; method < 2; method++)
    {
      Fixture fx;
      float *qh = g_new (float, n * H * r), *kh = g_new (float, n * H * r);
      float *q1 = g_new (float, n * r), *k1 = g_new (float, n * r), *eps = g_new (float, H * D * r);
      float v[40] = { 0 };
      RpeOutputsSpec s;
      double *ref = g_new (double, n * r);

      fixture_init (&fx, method == 0 ? RPE_SPE_SINE : RPE_SPE_CONV, n, 1, FALSE);
      g_assert_cmpint (rpe_spe_gate_noise_fill (&fx.params, r, 9, eps), ==, RPE_OK);
      g_assert_cmpint (rpe_spe_encode_seeded (&fx.params, n, r, 9, eps, fx.qa, fx.ka, qh, kh, NULL), ==, RPE_OK);
      s = make_spec (&fx, RPE_OUTPUTS_KERNEL, FALSE, r, v, dv);
      g_assert_cmpint (rpe_outputs_encode_head (&s, 9, q1, k1, NULL), ==, RPE_OK);
      for (size_t m = 0; m < n; m++)
        for (size_t i = 0; i < r; i++)
          ref[m * r + i] = qh[(m * H + fx.head) * r + i];
      g_assert_cmpfloat (rpe_test_max_rel_err (q1, ref, n * r, 1e-3), <, 1e-5);
      for (size_t m = 0; m < n; m++)
        for (size_t i = 0; i < r; i++)
          ref[m * r + i] = kh[(m * H + fx.head) * r + i];
      g_assert_cmpfloat (rpe_test_max_rel_err (k1, ref, n * r, 1e-3), <, 1e-5);
      g_free (qh);
      g_free (kh);
      g_free (q1);
      g_free (k1);
      g_free (eps);
      g_free (ref);
      fixture_clear (&fx);
    }
}

/* Y of an impulse V is the column of the implied map: exact softmax map, the linear model's
 * implied map for the same draw, L, and the draw's own lhat logits. */
static void
test_impulse_columns (void)
{
  size_t n = 48, r = 32, dv = 3;
  size_t pos[3] = { 0, 20, 47 };

  for (int method = 0; method < 2; method++)
    for (int causal = 0; causal < 2; causal++)
      {
        Fixture fx;
        float *v = g_new (float, n * dv), *y = g_new (float, n * dv);
        float *qh = g_new (float, n * r), *kh = g_new (float, n * r);
        float *pq = g_new (float, n * r), *pk = g_new (float, n * r);
        float *map = g_new (float, n * n), *lhat = g_new (float, n * n);
        double *l, *sm, *col = g_new (double, n);
        RpeOutputsSpec s;

        fixture_init (&fx, method == 0 ? RPE_SPE_SINE : RPE_SPE_CONV, n, 0, method == 1);
        g_assert_cmpint (rpe_outputs_values (RPE_VALUES_IMPULSE, n, dv, pos, 3, 0, v), ==, RPE_OK);
        for (size_t c = 0; c < dv; c++)
          for (size_t m = 0; m < n; m++)
            g_assert_cmpfloat (v[m * dv + c], ==, m == pos[c] ? 1.0f : 0.0f);
        l = naive_exact_logits (&fx, causal);
        sm = g_memdup2 (l, n * n * sizeof (double));
        naive_softmax (sm, n);

        /* softmax reference: column pos[c] of softmax(l) */
        s = make_spec (&fx, RPE_OUTPUTS_SOFTMAX, causal, r, v, dv);
        g_assert_cmpint (rpe_outputs_reference (&s, y, NULL), ==, RPE_OK);
        for (size_t c = 0; c < dv; c++)
          for (size_t m = 0; m < n; m++)
            g_assert_cmpfloat (fabs (y[m * dv + c] - sm[m * n + pos[c]]), <, 1e-6);

        /* softmax estimate: column of the implied map of phi(Qhat) phi(Khat)^T (same draw) */
        g_assert_cmpint (rpe_outputs_estimate (&s, 4, y, NULL), ==, RPE_OK);
        g_assert_cmpint (rpe_outputs_encode_head (&s, 4, qh, kh, NULL), ==, RPE_OK);
        g_assert_cmpint (rpe_feature_map_apply (RPE_FEATURE_ELU1, NULL, RPE_FEATURE_QUERY, n, 1, r, qh, pq, NULL), ==, RPE_OK);
        g_assert_cmpint (rpe_feature_map_apply (RPE_FEATURE_ELU1, NULL, RPE_FEATURE_KEY, n, 1, r, kh, pk, NULL), ==, RPE_OK);
        g_assert_cmpint (rpe_linear_attention_map (n, 1, r, pq, pk, causal, map, NULL), ==, RPE_OK);
        for (size_t c = 0; c < dv; c++)
          {
            for (size_t m = 0; m < n; m++)
              col[m] = map[m * n + pos[c]];
            for (size_t m = 0; m < n; m++)
              g_assert_cmpfloat (fabs (y[m * dv + c] - col[m]), <, 1e-5 * fmax (1.0, fabs (col[m])));
          }

        /* kernel reference: column of L (masked entries absent) */
        s.compare = RPE_OUTPUTS_KERNEL;
        g_assert_cmpint (rpe_outputs_reference (&s, y, NULL), ==, RPE_OK);
        for (size_t c = 0; c < dv; c++)
          for (size_t m = 0; m < n; m++)
            {
              double want = isnan (l[m * n + pos[c]]) ? 0.0 : l[m * n + pos[c]];

              g_assert_cmpfloat (fabs (y[m * dv + c] - want), <, 1e-5 * fmax (1.0, fabs (want)));
            }

        /* kernel estimate: column of the draw's own lhat = Qhat Khat^T / sqrt(R) */
        g_assert_cmpint (rpe_outputs_estimate (&s, 4, y, NULL), ==, RPE_OK);
        g_assert_cmpint (rpe_spe_logits (n, 1, r, qh, kh, lhat, NULL), ==, RPE_OK);
        for (size_t c = 0; c < dv; c++)
          for (size_t m = 0; m < n; m++)
            {
              double want = causal && pos[c] > m ? 0.0 : lhat[m * n + pos[c]];

              g_assert_cmpfloat (fabs (y[m * dv + c] - want), <, 1e-4 * fmax (1.0, fabs (want)));
            }

        g_free (v);
        g_free (y);
        g_free (qh);
        g_free (kh);
        g_free (pq);
        g_free (pk);
        g_free (map);
        g_free (lhat);
        g_free (l);
        g_free (sm);
        g_free (col);
        fixture_clear (&fx);
      }
}

/* The estimate of general V equals the full implied operator times V (linear never forms it). */
static void
test_estimate_vs_full (void)
{
  size_t n = 50, r = 12, dv = 4;
  static const RpeFeatureMap maps[] = { RPE_FEATURE_RELU, RPE_FEATURE_ELU1, RPE_FEATURE_EXP };

  for (int causal = 0; causal < 2; causal++)
    for (size_t mi = 0; mi < G_N_ELEMENTS (maps); mi++)
      {
        Fixture fx;
        float *v = g_new (float, n * dv), *y = g_new (float, n * dv);
        float *qh = g_new (float, n * r), *kh = g_new (float, n * r);
        float *pq = g_new (float, n * r), *pk = g_new (float, n * r), *map = g_new (float, n * n);
        double *a = g_new (double, n * n), *ref;
        RpeOutputsSpec s;

        fixture_init (&fx, RPE_SPE_SINE, n, 1, FALSE);
        g_assert_cmpint (rpe_outputs_values (RPE_VALUES_SWEEP, n, dv, NULL, 0, 0, v), ==, RPE_OK);
        s = make_spec (&fx, RPE_OUTPUTS_SOFTMAX, causal, r, v, dv);
        s.feature_map = maps[mi];
        g_assert_cmpint (rpe_outputs_estimate (&s, 2, y, NULL), ==, RPE_OK);
        g_assert_cmpint (rpe_outputs_encode_head (&s, 2, qh, kh, NULL), ==, RPE_OK);
        g_assert_cmpint (rpe_feature_map_apply (maps[mi], NULL, RPE_FEATURE_QUERY, n, 1, r, qh, pq, NULL), ==, RPE_OK);
        g_assert_cmpint (rpe_feature_map_apply (maps[mi], NULL, RPE_FEATURE_KEY, n, 1, r, kh, pk, NULL), ==, RPE_OK);
        g_assert_cmpint (rpe_linear_attention_map (n, 1, r, pq, pk, causal, map, NULL), ==, RPE_OK);
        for (size_t i = 0; i < n * n; i++)
          a[i] = map[i];
        ref = naive_times (a, v, n, dv);
        g_assert_cmpfloat (rpe_test_max_rel_err (y, ref, n * dv, 1e-2), <, 1e-4);
        g_free (ref);

        /* identity kernel: Lhat V in double from the naive products */
        s.compare = RPE_OUTPUTS_KERNEL;
        g_assert_cmpint (rpe_outputs_estimate (&s, 2, y, NULL), ==, RPE_OK);
        for (size_t m = 0; m < n; m++)
          for (size_t j = 0; j < n; j++)
            {
              double acc = 0;

              for (size_t i = 0; i < r; i++)
                acc += (double) qh[m * r + i] * kh[j * r + i];
              a[m * n + j] = causal && j > m ? 0.0 : acc / sqrt ((double) r);
            }
        ref = naive_times (a, v, n, dv);
        g_assert_cmpfloat (rpe_test_max_rel_err (y, ref, n * dv, 1e-2), <, 1e-4);
        g_free (ref);
        g_free (v);
        g_free (y);
        g_free (qh);
        g_free (kh);
        g_free (pq);
        g_free (pk);
        g_free (map);
        g_free (a);
        fixture_clear (&fx);
      }
}

/* E[Lhat V] = L V: the error of one draw falls like 1/sqrt(R) (log-log slope -1/2), and the mean
 * of T draws is closer to L V by about sqrt(T). */
static void
test_convergence (void)
{
  static const size_t rs[] = { 4, 16, 64, 256 };
  size_t n = 64, dv = 2, seeds = 24;
  double x[4], mean[4], slope = 0, se = 0;

  for (int method = 0; method < 2; method++)
    {
      Fixture fx;
      float *v = g_new (float, n * dv);
      RpeOutputs out;

      fixture_init (&fx, method == 0 ? RPE_SPE_SINE : RPE_SPE_CONV, n, 1, FALSE);
      g_assert_cmpint (rpe_outputs_values (RPE_VALUES_NOISE, n, dv, NULL, 0, 1, v), ==, RPE_OK);
      for (size_t i = 0; i < G_N_ELEMENTS (rs); i++)
        {
          RpeOutputsSpec s = make_spec (&fx, RPE_OUTPUTS_KERNEL, method == 1, rs[i], v, dv);

          /* train_length = N: error_before is the mean over the draws of the whole-Y error */
          g_assert_cmpint (rpe_outputs_compute (&s, 100, seeds, n, &out, NULL), ==, RPE_OK);
          x[i] = (double) rs[i];
          mean[i] = out.error_before;
          g_assert_true (isnan (out.error_after));
          g_assert_true (isfinite (mean[i]) && mean[i] > 0);
          /* the mean of `seeds` draws: error about mean / sqrt(seeds); allow a factor 2 */
          g_assert_cmpfloat (out.error_of_mean, <, 2.0 * mean[i] / sqrt ((double) seeds));
          g_assert_cmpfloat (out.error_of_mean, >, 0.3 * mean[i] / sqrt ((double) seeds));
          rpe_outputs_clear (&out);
        }
      g_assert_cmpint (rpe_curve_fit_loglog (x, mean, G_N_ELEMENTS (rs), &slope, NULL, &se), ==, RPE_OK);
      g_test_message ("method %d: slope %.3f (se %.3f), errors %.4g .. %.4g", method, slope, se, mean[0], mean[3]);
      g_assert_cmpfloat (fabs (slope + 0.5), <, 0.08);
      g_free (v);
      fixture_clear (&fx);
    }
}

/* Bad input gets a status, cancellation stops the work, and the outputs are reproducible. */
static void
test_errors_and_cancel (void)
{
  Fixture fx;
  size_t n = 32, dv = 2, bad = 32;
  float v[64], y[64];
  float nanv[4] = { 1, NAN, 0, 0 };
  atomic_int cancel = 1;
  RpeMonitor mon = { &cancel, NULL, NULL };
  RpeOutputsSpec s;
  RpeOutputs out, again;

  fixture_init (&fx, RPE_SPE_SINE, n, 1, FALSE);
  g_assert_cmpint (rpe_outputs_values (RPE_VALUES_IMPULSE, n, dv, &bad, 1, 0, v), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_outputs_values (RPE_VALUES_ARRAY, n, dv, NULL, 0, 0, v), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_outputs_values (RPE_VALUES_NOISE, n, 0, NULL, 0, 0, v), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_outputs_values_from_array (nanv, 2, 0, 2, 0, n, v), ==, RPE_ERROR_NOT_FINITE);
  g_assert_cmpint (rpe_outputs_values_from_array (nanv, 1, 2, 2, 2, n, v), ==, RPE_ERROR_INVALID_ARGUMENT);
  /* (N', H, Dv) takes the head and cycles positions */
  {
    float src[2 * 2 * 2] = { 1, 2, 3, 4, 5, 6, 7, 8 };

    g_assert_cmpint (rpe_outputs_values_from_array (src, 2, 2, 2, 1, 5, v), ==, RPE_OK);
    g_assert_cmpfloat (v[0], ==, 3);
    g_assert_cmpfloat (v[1], ==, 4);
    g_assert_cmpfloat (v[2], ==, 7);
    g_assert_cmpfloat (v[4], ==, 3);
    g_assert_cmpfloat (v[9], ==, 4);
  }
  g_assert_cmpint (rpe_outputs_values (RPE_VALUES_NOISE, n, dv, NULL, 0, 0, v), ==, RPE_OK);
  s = make_spec (&fx, RPE_OUTPUTS_SOFTMAX, FALSE, 8, v, dv);
  s.head = H;
  g_assert_cmpint (rpe_outputs_reference (&s, y, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  s.head = 1;
  s.r = 0;
  g_assert_cmpint (rpe_outputs_estimate (&s, 0, y, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  s.r = 8;
  g_assert_cmpint (rpe_outputs_reference (&s, y, &mon), ==, RPE_ERROR_CANCELLED);
  g_assert_cmpint (rpe_outputs_compute (&s, 0, 3, 16, &out, &mon), ==, RPE_ERROR_CANCELLED);
  g_assert_null (out.reference);
  g_assert_cmpint (rpe_outputs_compute (&s, 0, 0, 16, &out, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_outputs_compute (&s, 7, 3, 16, &out, NULL), ==, RPE_OK);
  g_assert_cmpint (rpe_outputs_compute (&s, 7, 3, 16, &again, NULL), ==, RPE_OK);
  g_assert_cmpmem (out.estimate, n * dv * sizeof (float), again.estimate, n * dv * sizeof (float));
  for (size_t i = 0; i < n * dv; i++)
    g_assert_cmpfloat (out.difference[i], ==, out.estimate[i] - out.reference[i]);
  for (size_t m = 0; m < n; m++)
    g_assert_true (out.error_sd[m] >= 0 && isfinite (out.error_mean[m]));
  rpe_outputs_clear (&out);
  rpe_outputs_clear (&again);
  fixture_clear (&fx);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/outputs/reference-logits", test_reference_logits);
  g_test_add_func ("/outputs/streamed-vs-full", test_streamed_vs_full);
  g_test_add_func ("/outputs/encode-head-is-slice", test_encode_head_is_slice);
  g_test_add_func ("/outputs/impulse-columns", test_impulse_columns);
  g_test_add_func ("/outputs/estimate-vs-full", test_estimate_vs_full);
  g_test_add_func ("/outputs/convergence", test_convergence);
  g_test_add_func ("/outputs/errors-and-cancel", test_errors_and_cancel);
  return g_test_run ();
}

/* test-explore-fit.c: rpe_fit_run, the worker body of the window's fit dialog, headless (no GTK):
 * its result against the core's pieces computed here (fit, profile, error) and an induced
 * attention map computed naively, its input checks and its cancellation; and the async job on a
 * main loop. */
#include "config.h"

#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include <glib.h>

#include "rpe-error.h"
#include "rpe-fit-job.h"

static double *
alibi_target (gsize H, gsize n)
{
  double *b = g_new (double, H * (2 * n - 1));

  g_assert_cmpint (rpe_fit_target_alibi (H, n, NULL, b), ==, RPE_OK);
  return b;
}

/* The result holds the core's fit of that target (the same parameters and profile as
 * rpe_fit_spe + rpe_fit_profile called here), its relative error, the target copied, and the
 * softmax of the fitted profile as the attention map (rows sum to 1, naive softmax in double). */
static void
test_run (void)
{
  const gsize H = 2, n = 48, len = 2 * n - 1;
  const RpeFitConfig configs[] = {
    { RPE_SPE_SINE, H, 4, 3, false, 0 },
    { RPE_SPE_CONV, H, 2, 48, true, 0 },   /* L = N, D >= 2: the whole window, exactly */
  };
  double *target = alibi_target (H, n);

  for (gsize c = 0; c < G_N_ELEMENTS (configs); c++)
    {
      const RpeFitConfig *cfg = &configs[c];
      g_autoptr (GError) error = NULL;
      g_autoptr (RpeFitResult) r = rpe_fit_run (cfg, n, target, NULL, &error);
      RpeSpeParams p;
      double *l = g_new (double, H * len), worst = 0;

      g_assert_no_error (error);
      g_assert_nonnull (r);
      g_assert_cmpuint (r->n, ==, n);
      g_assert_cmpint (r->config.method, ==, cfg->method);
      g_assert_true (r->target != target);
      g_assert_cmpmem (r->target, H * len * sizeof (double), target, H * len * sizeof (double));
      /* the fit is the core's: deterministic, so the same parameters when run again here */
      g_assert_cmpint (rpe_fit_spe (cfg, n, target, &p, NULL), ==, RPE_OK);
      g_assert_cmpmem (p.method == RPE_SPE_SINE ? p.freqs : p.wq, H * cfg->n_features * cfg->size * sizeof (float),
                       r->params.method == RPE_SPE_SINE ? r->params.freqs : r->params.wq,
                       H * cfg->n_features * cfg->size * sizeof (float));
      g_assert_cmpuint (r->params.n_heads, ==, H);
      g_assert_cmpuint (r->params.n_features, ==, cfg->n_features);
      g_assert_cmpint (rpe_fit_profile (&r->params, n, cfg->gated, l), ==, RPE_OK);
      g_assert_cmpmem (r->fit, H * len * sizeof (double), l, H * len * sizeof (double));
      g_assert_cmpfloat (r->error, ==, rpe_fit_relative_error (H, n, target, l));
      g_test_message ("%s fit of ALiBi: relative error %.3g", c == 0 ? "sine" : "conv", r->error);
      /* sine: 12 cosines fit ALiBi's |tau| closely; conv: exact over |tau| < min (L, N) (rpe-fit.h) */
      g_assert_cmpfloat (r->error, >=, 0.0);
      g_assert_cmpfloat (r->error, <, cfg->method == RPE_SPE_SINE ? 0.05 : 1e-6);
      g_assert_true (r->seconds >= 0);
      rpe_spe_params_clear (&p);
      /* attention row m of head h = softmax_k l_h(m - k) */
      for (gsize h = 0; h < H; h++)
        for (gsize m = 0; m < n; m++)
          {
            const double *lh = l + h * len;
            double mx = -INFINITY, sum = 0, rsum = 0;

            for (gsize k = 0; k < n; k++)
              mx = MAX (mx, lh[m - k + n - 1]);
            for (gsize k = 0; k < n; k++)
              sum += exp (lh[m - k + n - 1] - mx);
            for (gsize k = 0; k < n; k++)
              {
                const float got = r->attention[(h * n + m) * n + k];

                worst = MAX (worst, fabs (got - exp (lh[m - k + n - 1] - mx) / sum));
                rsum += got;
              }
            g_assert_cmpfloat_with_epsilon (rsum, 1.0, 1e-5);
          }
      /* float rounding of values in [0, 1] */
      g_assert_cmpfloat (worst, <, 1e-6);
      g_free (l);
    }
  g_free (target);
}

static void
test_bad_input (void)
{
  const RpeFitConfig cfg = { RPE_SPE_SINE, 1, 2, 2, false, 0 };
  RpeFitConfig big = cfg;
  double *target = alibi_target (1, 16);
  g_autoptr (GError) error = NULL;
  atomic_int cancel = 1;
  RpeMonitor monitor = { &cancel, NULL, NULL };

  g_assert_null (rpe_fit_run (&cfg, 0, target, NULL, &error));
  g_assert_error (error, RPE_ERROR, RPE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  big.n_heads = RPE_FIT_JOB_MAX_HEADS + 1;
  g_assert_null (rpe_fit_run (&big, 16, target, NULL, &error));
  g_assert_error (error, RPE_ERROR, RPE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_null (rpe_fit_run (&cfg, RPE_FIT_JOB_MAX_LENGTH + 1, target, NULL, &error));
  g_assert_error (error, RPE_ERROR, RPE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  target[7] = NAN;
  g_assert_null (rpe_fit_run (&cfg, 16, target, NULL, &error));
  g_assert_error (error, RPE_ERROR, RPE_ERROR_NOT_FINITE);
  g_clear_error (&error);
  target[7] = 0;
  /* a cancelled monitor: the fit stops with G_IO_ERROR_CANCELLED */
  g_assert_null (rpe_fit_run (&cfg, 16, target, &monitor, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_free (target);
}

typedef struct
{
  RpeFitResult *result;
  GError       *error;
  gboolean      done;
  guint         progress;
} AsyncData;

static void
on_progress (double fraction, gpointer user_data)
{
  AsyncData *d = user_data;

  g_assert_true (fraction >= 0 && fraction <= 1);
  d->progress++;
}

static void
on_done (GObject *source, GAsyncResult *res, gpointer user_data)
{
  AsyncData *d = user_data;

  d->result = rpe_compute_fit_finish (res, &d->error);
  d->done = TRUE;
}

/* The async job returns rpe_fit_run's result with the caller's serial, on the main loop. */
static void
test_async (void)
{
  const RpeFitConfig cfg = { RPE_SPE_SINE, 2, 3, 2, false, 0 };
  double *target = alibi_target (2, 32);
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeFitResult) sync = rpe_fit_run (&cfg, 32, target, NULL, &error);
  AsyncData d = { 0 };

  g_assert_no_error (error);
  rpe_compute_fit_async (&cfg, 32, target, 77, on_progress, &d, NULL, on_done, &d);
  g_free (target);   /* copied by the call */
  while (!d.done)
    g_main_context_iteration (NULL, TRUE);
  g_assert_no_error (d.error);
  g_assert_nonnull (d.result);
  g_assert_cmpuint (d.result->serial, ==, 77);
  g_assert_cmpmem (d.result->fit, 2 * 63 * sizeof (double), sync->fit, 2 * 63 * sizeof (double));
  g_assert_cmpfloat (d.result->error, ==, sync->error);
  rpe_fit_result_unref (d.result);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/explore/fit/run", test_run);
  g_test_add_func ("/explore/fit/bad-input", test_bad_input);
  g_test_add_func ("/explore/fit/async", test_async);
  return g_test_run ();
}

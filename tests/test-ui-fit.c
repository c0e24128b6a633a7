/* test-ui-fit.c: the Fit panel (issue 16) under Xvfb.
 *
 * The window's win.fit opens the panel; a fit of ALiBi with K = 2 sines shows the relative
 * error the core computes for the same inputs (printed like `rpe fit`), target profiles equal
 * to ALiBi's closed form, an induced attention map equal to a softmax written here, and
 * "Apply to the Explorer" puts exactly the fitted module on the explorer.  Changing an input
 * drops the result; cancelling mid-fit leaves the explorer unchanged.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <adwaita.h>

#include "rpe-fit-dialog.h"
#include "rpe-fit.h"
#include "rpe-ui-test-utils.h"
#include "rpe-ui-wait.h"
#include "rpe-window-test.h"

static gboolean
fit_done (gpointer data)
{
  RpeFitDialog *d = data;

  return !rpe_fit_dialog_is_busy (d) && rpe_fit_dialog_get_result (d) != NULL;
}

static gboolean
fit_progressed (gpointer data)
{
  RpeFitDialog *d = data;

  return rpe_fit_dialog_get_progress (d) > 0.0 || rpe_fit_dialog_get_result (d) != NULL;
}

static gboolean
no_jobs (gpointer data)
{
  return rpe_compute_jobs_alive () == 0;
}

static RpeWindow *
open_window (void)
{
  RpeWindow *window = rpe_window_new (NULL);

  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  gtk_window_present (GTK_WINDOW (window));
  rpe_test_iterate_until (rpe_test_window_idle, window);
  return window;
}

static RpeFitDialog *
open_fit (RpeWindow *window)
{
  RpeFitDialog *dialog;

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.fit", NULL));
  dialog = g_object_get_data (G_OBJECT (window), "rpe-fit-dialog");
  g_assert_true (RPE_IS_FIT_DIALOG (dialog));
  g_assert_true (gtk_window_get_transient_for (GTK_WINDOW (dialog)) == GTK_WINDOW (window));
  return dialog;
}

static void
test_alibi (void)
{
  enum { H = 2, D = 2, K = 2, N = 24 };
  enum { len = 2 * N - 1 };
  RpeWindow *window = open_window ();
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeFitDialog *dialog = open_fit (window);
  RpeFitConfig cfg = { RPE_SPE_SINE, H, D, K, false, 0 };
  RpeSpeParams ref = { 0 };
  double target[H * len], profile[H * len], err;
  g_autofree char *expected = NULL;
  RpeFitResult *r;
  const RpeSpeParams *applied;
  guint kind;

  /* the core, for the same inputs */
  g_assert_cmpint (rpe_fit_target_alibi (H, N, NULL, target), ==, RPE_OK);
  g_assert_cmpint (rpe_fit_spe (&cfg, N, target, &ref, NULL), ==, RPE_OK);
  g_assert_cmpint (rpe_fit_profile (&ref, N, false, profile), ==, RPE_OK);
  err = rpe_fit_relative_error (H, N, target, profile);
  g_assert_true (isfinite (err) && err > 0.0 && err < 1.0);
  expected = g_strdup_printf ("relative error %.9g", err);

  rpe_fit_dialog_set_target (dialog, RPE_FIT_TARGET_ALIBI);
  rpe_fit_dialog_set_method (dialog, RPE_SPE_SINE, K);
  rpe_fit_dialog_set_gated (dialog, FALSE);
  rpe_fit_dialog_set_sizes (dialog, H, D, N);
  rpe_fit_dialog_fit (dialog);
  g_assert_true (rpe_fit_dialog_is_busy (dialog));
  rpe_test_iterate_until (fit_done, dialog);
  r = rpe_fit_dialog_get_result (dialog);
  g_assert_cmpstr (rpe_fit_dialog_get_status (dialog), ==, expected);
  g_assert_cmpuint (r->n, ==, N);
  g_assert_cmpuint (r->config.n_heads, ==, H);

  /* the target is ALiBi's closed form: -2^(-8(h+1)/H) |tau| */
  for (gsize h = 0; h < H; h++)
    for (gsize i = 0; i < len; i++)
      {
        double tau = (double) i - (N - 1);
        g_assert_cmpfloat_with_epsilon (r->target[h * len + i], -pow (2.0, -8.0 * (h + 1) / H) * fabs (tau), 1e-12);
        g_assert_cmpfloat_with_epsilon (r->fit[h * len + i], profile[h * len + i], 1e-12);
      }
  /* the induced attention: softmax over k of the fitted logits at tau = m - k, written here */
  for (gsize h = 0; h < H; h++)
    for (gsize m = 0; m < N; m++)
      {
        double sum = 0.0, total = 0.0;

        for (gsize k = 0; k < N; k++)
          sum += exp (profile[h * len + (m - k + N - 1)]);
        for (gsize k = 0; k < N; k++)
          {
            double a = exp (profile[h * len + (m - k + N - 1)]) / sum;
            g_assert_cmpfloat_with_epsilon (r->attention[(h * N + m) * N + k], a, 1e-6);
            total += r->attention[(h * N + m) * N + k];
          }
        g_assert_cmpfloat_with_epsilon (total, 1.0, 1e-5);
      }

  /* apply: the explorer's sine module is the fit */
  rpe_fit_dialog_apply (dialog);
  applied = rpe_explorer_state_get_params (state, RPE_SPE_SINE);
  g_assert_nonnull (applied);
  g_assert_cmpuint (applied->n_heads, ==, H);
  g_assert_cmpuint (applied->n_features, ==, D);
  g_assert_cmpuint (applied->n_sines, ==, K);
  g_assert_null (applied->gate);
  g_assert_cmpmem (applied->freqs, H * D * K * sizeof (float), ref.freqs, H * D * K * sizeof (float));
  g_assert_cmpmem (applied->gains, H * D * K * sizeof (float), ref.gains, H * D * K * sizeof (float));
  g_assert_cmpmem (applied->offsets, H * D * K * sizeof (float), ref.offsets, H * D * K * sizeof (float));
  g_assert_cmpstr (rpe_explorer_state_get_source (state, RPE_SPE_SINE), ==, "fit to ALiBi (K = 2)");
  g_object_get (state, "spe-kind", &kind, NULL);
  g_assert_cmpuint (kind, ==, RPE_SPE_SINE);

  /* an input change drops the result */
  rpe_fit_dialog_set_method (dialog, RPE_SPE_SINE, K + 1);
  g_assert_null (rpe_fit_dialog_get_result (dialog));

  rpe_spe_params_clear (&ref);
  rpe_test_iterate_until (rpe_test_window_idle, window);
  gtk_window_destroy (GTK_WINDOW (window));
  rpe_test_iterate_until (no_jobs, NULL);
}

static void
test_cancel (void)
{
  RpeWindow *window = open_window ();
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeFitDialog *dialog = open_fit (window);
  RpeSpeParams before = { 0 };
  const RpeSpeParams *after;
  guint64 serial = rpe_explorer_state_get_serial (state);
  g_autofree char *source = g_strdup (rpe_explorer_state_get_source (state, RPE_SPE_SINE));
  gsize count;

  g_assert_nonnull (rpe_explorer_state_get_params (state, RPE_SPE_SINE));
  g_assert_cmpint (rpe_spe_params_copy (&before, rpe_explorer_state_get_params (state, RPE_SPE_SINE)), ==, RPE_OK);
  count = before.n_heads * before.n_features * before.n_sines;

  /* a long fit (64 heads), cancelled once its first head is done */
  rpe_fit_dialog_set_target (dialog, RPE_FIT_TARGET_KERPLE_LOG);
  rpe_fit_dialog_set_kerple (dialog, 1.0, 0.5);
  rpe_fit_dialog_set_method (dialog, RPE_SPE_SINE, 4);
  rpe_fit_dialog_set_sizes (dialog, 64, 4, 256);
  rpe_fit_dialog_fit (dialog);
  g_assert_true (rpe_fit_dialog_is_busy (dialog));
  rpe_test_iterate_until (fit_progressed, dialog);
  g_assert_null (rpe_fit_dialog_get_result (dialog));
  rpe_fit_dialog_cancel (dialog);
  g_assert_false (rpe_fit_dialog_is_busy (dialog));
  rpe_test_iterate_until (no_jobs, NULL);
  rpe_test_drain ();
  g_assert_null (rpe_fit_dialog_get_result (dialog));
  /* Apply does nothing without a result */
  rpe_fit_dialog_apply (dialog);
  g_assert_cmpuint (rpe_explorer_state_get_serial (state), ==, serial);
  after = rpe_explorer_state_get_params (state, RPE_SPE_SINE);
  g_assert_cmpuint (after->n_heads * after->n_features * after->n_sines, ==, count);
  g_assert_cmpmem (after->freqs, count * sizeof (float), before.freqs, count * sizeof (float));
  g_assert_cmpmem (after->gains, count * sizeof (float), before.gains, count * sizeof (float));
  g_assert_cmpstr (rpe_explorer_state_get_source (state, RPE_SPE_SINE), ==, source);

  rpe_spe_params_clear (&before);
  gtk_window_destroy (GTK_WINDOW (window));
  rpe_test_iterate_until (no_jobs, NULL);
}

int
main (int   argc,
      char *argv[])
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  g_test_add_func ("/ui/fit/alibi", test_alibi);
  g_test_add_func ("/ui/fit/cancel", test_cancel);
  return g_test_run ();
}

/* test-ui-window.c: the window on the embedded demo, the worker, and the
 * heatmap view (needs a display: run under xvfb-run). */
#include "config.h"

#include <math.h>
#include <string.h>

#include <adwaita.h>

#include "rpe-compute.h"
#include "rpe-error.h"
#include "rpe-heatmap-view.h"
#include "rpe-toast-queue.h"
#include "rpe-window-test.h"
#include "rpe-ui-wait.h"

/* The values of the templates grid's cell d as the view draws them (NULL if none). */
static const float *
templates_cell_data (RpeTemplatesView *view,
                     gsize             d,
                     gsize            *rows,
                     gsize            *cols)
{
  const RpeHeatmapData *cell = rpe_templates_view_get_cell (view, d);

  *rows = cell != NULL ? cell->rows : 0;
  *cols = cell != NULL ? cell->cols : 0;
  return cell != NULL ? cell->values : NULL;
}

#define TIMEOUT_S 60

/* ---------------------------------------------------------------- helpers */

static gboolean
timed_out (gpointer user_data)
{
  gboolean *flag = user_data;

  *flag = TRUE;
  return G_SOURCE_REMOVE;
}

/* Iterates the main loop until done (*) returns TRUE, failing after TIMEOUT_S. */
static void
iterate_until (gboolean (*done) (gpointer),
               gpointer   data)
{
  gboolean expired = FALSE;
  guint id = g_timeout_add_seconds (TIMEOUT_S, timed_out, &expired);

  while (!done (data) && !expired)
    g_main_context_iteration (NULL, TRUE);
  if (!expired)
    g_source_remove (id);
  g_assert_false (expired);
}

static gboolean
window_ready (gpointer data)
{
  RpeWindow *window = data;
  RpeTemplatesView *tv = RPE_TEMPLATES_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_TEMPLATES));

  return !rpe_window_is_busy (window) && rpe_templates_view_get_templates (tv) != NULL;
}

/* Independent references (docs/math.md, sections 1-3), straight from the formulas in double. */
static double
sine_template_ref (const RpeSpeParams *p,
                   gsize               h,
                   gsize               d,
                   double              tau)
{
  gsize K = p->n_sines, base = (h * p->n_features + d) * K;
  double sum = 0.0;

  for (gsize k = 0; k < K; k++)
    {
      double f = p->freqs[base + k], theta = p->offsets[base + k], lambda = p->gains[base + k];

      sum += lambda * lambda * cos (2.0 * G_PI * f * tau + theta);
    }
  return sum / (2.0 * K);
}

static double
conv_template_ref (const RpeSpeParams *p,
                   gsize               h,
                   gsize               d,
                   long                tau)
{
  gsize L = p->kernel, c = h * p->n_features + d;
  double sum = 0.0;

  for (long j = 0; j < (long) L; j++)
    if (j + tau >= 0 && j + tau < (long) L)
      sum += (double) p->wq[c * L + j] * p->wk[c * L + j + tau];
  return sum;
}

static double
gated_ref (const RpeSpeParams *p,
           gsize               h,
           gsize               d,
           gboolean            gated,
           double              value)
{
  double g;

  if (!gated || p->gate == NULL)
    return value;
  g = p->gate[h * p->n_features + d];
  return (1.0 - g) * value + g;
}

/* Checks every cell of the templates view against the reference; returns
 * max |view - ref| / max |ref|. */
static double
check_templates (RpeWindow *window,
                 gsize      head,
                 gsize      n,
                 gboolean   gated)
{
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeTemplatesView *tv = RPE_TEMPLATES_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_TEMPLATES));
  const RpeSpeParams *p = rpe_explorer_state_get_params (state, rpe_explorer_state_get_spe_kind (state));
  RpeTemplates *templates = rpe_templates_view_get_templates (tv);
  double max_err = 0.0, max_ref = 0.0;

  g_assert_nonnull (p);
  g_assert_nonnull (templates);
  g_assert_cmpuint (templates->head, ==, head);
  g_assert_cmpuint (templates->n, ==, n);
  g_assert_cmpuint (templates->n_features, ==, p->n_features);
  g_assert_cmpint (templates->method, ==, p->method);
  g_assert_null (rpe_templates_view_get_cell (tv, p->n_features));

  for (gsize d = 0; d < p->n_features; d++)
    {
      gsize rows = 0, cols = 0;
      const float *values;

      g_assert_nonnull (rpe_templates_view_get_cell (tv, d));
      values = templates_cell_data (tv, d, &rows, &cols);
      g_assert_nonnull (values);
      g_assert_cmpuint (rows, ==, n);
      g_assert_cmpuint (cols, ==, n);
      g_assert_true (values == rpe_templates_get_feature (templates, d));

      for (gsize m = 0; m < n; m++)
        for (gsize k = 0; k < n; k++)
          {
            long tau = (long) m - (long) k;
            double ref;

            if (p->method == RPE_SPE_SINE)
              ref = sine_template_ref (p, head, d, (double) tau);
            else
              ref = conv_template_ref (p, head, d, tau);
            ref = gated_ref (p, head, d, gated, ref);
            max_err = fmax (max_err, fabs (values[m * n + k] - ref));
            max_ref = fmax (max_ref, fabs (ref));
          }
    }
  g_assert_cmpfloat (max_ref, >, 0.0);
  return max_err / max_ref;
}

/* ----------------------------------------------------------------- window */

static void
test_window_demo (void)
{
  RpeWindow *window = rpe_window_new (NULL);
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeTemplatesView *tv = RPE_TEMPLATES_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_TEMPLATES));
  const RpeSpeParams *sine, *conv;
  gsize n_conv_band_nonzero = 0;
  double err;

  rpe_window_set_view (window, RPE_WINDOW_VIEW_TEMPLATES);
  gtk_window_present (GTK_WINDOW (window));
  iterate_until (window_ready, window);

  /* The embedded demo loaded: no fallback, H = 4, D = 16 in both modules. */
  g_assert_null (rpe_window_get_message (window));
  g_assert_true (rpe_window_get_from_demo (window));
  sine = rpe_explorer_state_get_params (state, RPE_SPE_SINE);
  conv = rpe_explorer_state_get_params (state, RPE_SPE_CONV);
  g_assert_cmpint (sine->method, ==, RPE_SPE_SINE);
  g_assert_cmpint (conv->method, ==, RPE_SPE_CONV);
  g_assert_cmpuint (sine->n_heads, ==, 4);
  g_assert_cmpuint (sine->n_features, ==, 16);
  g_assert_cmpuint (conv->n_heads, ==, 4);
  g_assert_cmpuint (conv->n_features, ==, 16);

  /* Head 0, default length, ungated: the views hold the analytic templates. */
  err = check_templates (window, 0, rpe_explorer_state_get_length (state), FALSE);
  g_test_message ("sine templates vs reference: max rel err %.3g", err);
  g_assert_cmpfloat (err, <, 1e-5);

  g_object_set (state, "spe-kind", RPE_SPE_CONV, NULL);
  g_assert_true (rpe_window_is_busy (window));
  iterate_until (window_ready, window);
  g_assert_cmpuint (rpe_explorer_state_get_length (state), >=, 2 * conv->kernel);
  err = check_templates (window, 0, rpe_explorer_state_get_length (state), FALSE);
  g_test_message ("conv templates vs reference: max rel err %.3g", err);
  g_assert_cmpfloat (err, <, 1e-5);

  /* convSPE templates vanish exactly outside the band |m - n| < L (in the data
   * the views hold), and are not all zero inside it. */
  for (gsize d = 0; d < conv->n_features; d++)
    {
      gsize rows, cols;
      const float *values = templates_cell_data (tv, d, &rows, &cols);

      for (gsize m = 0; m < rows; m++)
        for (gsize k = 0; k < cols; k++)
          {
            gsize lag = m > k ? m - k : k - m;

            if (lag >= conv->kernel)
              g_assert_cmpfloat (values[m * cols + k], ==, 0.0f);
            else if (values[m * cols + k] != 0.0f)
              n_conv_band_nonzero++;
          }
    }
  g_assert_cmpuint (n_conv_band_nonzero, >, 0);

  /* Two quick requests: the first one's result is stale and must be dropped;
   * what is shown is the last request's (head 2, N = 48). */
  g_object_set (state, "head", 1, "length", 40, NULL);
  g_object_set (state, "head", 2, "length", 48, NULL);
  g_assert_true (rpe_window_is_busy (window));
  iterate_until (window_ready, window);
  err = check_templates (window, 2, 48, FALSE);
  g_assert_cmpfloat (err, <, 1e-5);
  g_object_set (state, "spe-kind", RPE_SPE_SINE, NULL);
  iterate_until (window_ready, window);
  err = check_templates (window, 2, 48, FALSE);
  g_assert_cmpfloat (err, <, 1e-5);

  /* The gated templates (1 - g) P + g, when the demo has gates. */
  if (sine->gate != NULL && conv->gate != NULL)
    {
      g_object_set (state, "gated", TRUE, NULL);
      g_assert_true (rpe_window_is_busy (window));
      iterate_until (window_ready, window);
      g_assert_true (rpe_templates_view_get_templates (tv)->gated);
      err = check_templates (window, 2, 48, TRUE);
      g_assert_cmpfloat (err, <, 1e-5);
    }
  else
    g_test_message ("the demo has no gates: gated templates not checked");

  gtk_window_destroy (GTK_WINDOW (window));
}

static gboolean
all_windows_gone (gpointer data)
{
  GWeakRef *ref = data;
  GObject *object = g_weak_ref_get (ref);

  if (object != NULL)
    {
      g_object_unref (object);
      return FALSE;
    }
  return TRUE;
}

static void
test_window_destroy_busy (void)
{
  RpeWindow *window = rpe_window_new (NULL);
  GWeakRef ref;

  /* Destroying the window while its workers run: the results arrive after it
   * is gone and must be dropped without touching it. */
  g_weak_ref_init (&ref, window);
  gtk_window_present (GTK_WINDOW (window));
  g_object_set (rpe_window_get_state (window), "head", 3, "length", 512, NULL);
  g_assert_true (rpe_window_is_busy (window));
  gtk_window_destroy (GTK_WINDOW (window));
  iterate_until (all_windows_gone, &ref);
  /* The cancelled workers finish and their callbacks run (and drop the results). */
  rpe_test_wait_jobs ();
  g_weak_ref_clear (&ref);
}

static void
test_window_settings (void)
{
  GSettings *settings = g_settings_new (APPLICATION_ID);
  RpeWindow *window;
  int width = 0, height = 0;

  /* The window starts at the saved size and saves its size when closed. */
  g_settings_set_int (settings, "window-width", 1003);
  g_settings_set_int (settings, "window-height", 705);
  window = rpe_window_new (NULL);
  gtk_window_get_default_size (GTK_WINDOW (window), &width, &height);
  g_assert_cmpint (width, ==, 1003);
  g_assert_cmpint (height, ==, 705);
  gtk_window_present (GTK_WINDOW (window));
  iterate_until (window_ready, window);

  gtk_window_set_default_size (GTK_WINDOW (window), 917, 655);
  gtk_window_close (GTK_WINDOW (window));   /* not held by an application: destroyed */
  g_assert_cmpint (g_settings_get_int (settings, "window-width"), ==, 917);
  g_assert_cmpint (g_settings_get_int (settings, "window-height"), ==, 655);
  g_assert_false (g_settings_get_boolean (settings, "window-maximized"));
  g_object_unref (settings);
}

/* ---------------------------------------------------------------- compute */

typedef struct
{
  RpeTemplates *templates;
  GError       *error;
  gboolean      done;
  guint         n_progress;
  double        last_fraction;
  gint64        first_progress;
  gint64        last_progress;
  GCancellable *cancel_on_progress;
} ComputeState;

static void
compute_done (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  ComputeState *state = user_data;

  state->templates = rpe_compute_templates_finish (result, &state->error);
  state->done = TRUE;
}

static void
compute_progress (double   fraction,
                  gpointer user_data)
{
  ComputeState *state = user_data;
  gint64 now = g_get_monotonic_time ();

  g_assert_cmpfloat (fraction, >=, state->last_fraction);
  g_assert_cmpfloat (fraction, <=, 1.0);
  if (state->n_progress == 0)
    state->first_progress = now;
  state->last_progress = now;
  state->last_fraction = fraction;
  state->n_progress++;
  if (state->cancel_on_progress != NULL)
    g_cancellable_cancel (state->cancel_on_progress);
}

static gboolean
compute_finished (gpointer data)
{
  return ((ComputeState *) data)->done;
}

static void
make_sine_params (RpeSpeParams *params,
                  gsize         heads,
                  gsize         features,
                  gsize         sines)
{
  g_assert_cmpint (rpe_spe_params_init (params, RPE_SPE_SINE, heads, features, sines, TRUE), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_params_random (params, 7), ==, RPE_OK);
}

static void
test_compute_templates (void)
{
  RpeSpeParams params = { 0 };
  ComputeState state = { 0 };
  double max_err = 0.0, max_ref = 0.0;
  const gsize n = 33;

  make_sine_params (&params, 2, 3, 3);
  rpe_compute_templates_async (&params, 1, n, TRUE, NULL, compute_done, &state);
  /* The task holds a copy: clobbering ours must not matter. */
  for (gsize i = 0; i < params.n_heads * params.n_features * params.n_sines; i++)
    params.gains[i] = NAN;
  rpe_spe_params_clear (&params);
  make_sine_params (&params, 2, 3, 3);

  iterate_until (compute_finished, &state);
  g_assert_no_error (state.error);
  g_assert_nonnull (state.templates);
  g_assert_true (state.templates->gated);
  g_assert_cmpuint (state.templates->n_features, ==, 3);
  for (gsize d = 0; d < 3; d++)
    {
      const float *t = rpe_templates_get_feature (state.templates, d);

      for (gsize m = 0; m < n; m++)
        for (gsize k = 0; k < n; k++)
          {
            double ref = gated_ref (&params, 1, d, TRUE,
                                    sine_template_ref (&params, 1, d, (double) m - (double) k));

            max_err = fmax (max_err, fabs (t[m * n + k] - ref));
            max_ref = fmax (max_ref, fabs (ref));
            g_assert_cmpfloat (state.templates->vmin, <=, t[m * n + k]);
            g_assert_cmpfloat (state.templates->vmax, >=, t[m * n + k]);
          }
    }
  g_assert_cmpfloat (max_err / max_ref, <, 1e-5);
  g_assert_null (rpe_templates_get_feature (state.templates, 3));
  {
    GBytes *bytes = rpe_templates_dup_feature_bytes (state.templates, 2);

    g_assert_cmpuint (g_bytes_get_size (bytes), ==, n * n * sizeof (float));
    g_assert_true (g_bytes_get_data (bytes, NULL) == rpe_templates_get_feature (state.templates, 2));
    rpe_templates_unref (state.templates);  /* the bytes keep the templates alive */
    g_assert_cmpfloat_with_epsilon (((const float *) g_bytes_get_data (bytes, NULL))[n + 1],
                                    gated_ref (&params, 1, 2, TRUE, sine_template_ref (&params, 1, 2, 0.0)),
                                    1e-5 * max_ref);
    g_bytes_unref (bytes);
  }
  rpe_spe_params_clear (&params);
}

/* Grids of the same size one after another (the live loop): each one's values are its own
 * parameters' templates, whatever block the previous grid left (the computation reuses the
 * values block of templates no longer held). */
static void
test_compute_templates_again (void)
{
  const gsize n = 40;

  for (int round = 0; round < 4; round++)
    {
      RpeSpeParams params = { 0 };
      ComputeState state = { 0 };
      gsize head = round % 2;
      gboolean gated = round >= 2;
      double max_err = 0.0, max_ref = 0.0;

      g_assert_cmpint (rpe_spe_params_init (&params, RPE_SPE_SINE, 2, 3, 4, TRUE), ==, RPE_OK);
      g_assert_cmpint (rpe_spe_params_random (&params, 100 + round), ==, RPE_OK);
      rpe_compute_templates_async (&params, head, n, gated, NULL, compute_done, &state);
      iterate_until (compute_finished, &state);
      g_assert_no_error (state.error);
      g_assert_nonnull (state.templates);
      g_assert_nonnull (state.templates->profiles);
      for (gsize d = 0; d < 3; d++)
        {
          const float *t = rpe_templates_get_feature (state.templates, d);

          for (gsize m = 0; m < n; m++)
            for (gsize k = 0; k < n; k++)
              {
                double ref = gated_ref (&params, head, d, gated,
                                        sine_template_ref (&params, head, d, (double) m - (double) k));

                max_err = fmax (max_err, fabs (t[m * n + k] - ref));
                max_ref = fmax (max_ref, fabs (ref));
                g_assert_cmpfloat (state.templates->vmin, <=, t[m * n + k]);
                g_assert_cmpfloat (state.templates->vmax, >=, t[m * n + k]);
              }
          /* the profile the cells were filled from: lag tau = m - k at index tau + N - 1 */
          for (gsize i = 0; i < 2 * n - 1; i++)
            g_assert_true (state.templates->profiles[d * (2 * n - 1) + i]
                           == (i >= n - 1 ? t[(i - (n - 1)) * n] : t[n - 1 - i]));
        }
      g_assert_cmpfloat (max_err / max_ref, <, 1e-5);
      rpe_templates_unref (state.templates);
      rpe_spe_params_clear (&params);
    }
}

static void
test_compute_errors (void)
{
  RpeSpeParams params = { 0 };
  ComputeState state = { 0 };
  GCancellable *cancellable = g_cancellable_new ();

  make_sine_params (&params, 2, 3, 3);

  /* Head out of range: an RPE_ERROR. */
  rpe_compute_templates_async (&params, 2, 16, FALSE, NULL, compute_done, &state);
  iterate_until (compute_finished, &state);
  g_assert_error (state.error, RPE_ERROR, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_null (state.templates);
  g_clear_error (&state.error);

  /* Already cancelled: G_IO_ERROR_CANCELLED, no progress reported. */
  memset (&state, 0, sizeof state);
  g_cancellable_cancel (cancellable);
  rpe_compute_templates_async_full (&params, 0, 16, FALSE, compute_progress, &state,
                                    cancellable, compute_done, &state);
  iterate_until (compute_finished, &state);
  g_assert_error (state.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_null (state.templates);
  g_assert_cmpuint (state.n_progress, ==, 0);
  g_clear_error (&state.error);
  g_object_unref (cancellable);
  rpe_spe_params_clear (&params);
}

static void
test_compute_progress (void)
{
  RpeSpeParams params = { 0 };
  ComputeState state = { 0 };
  GCancellable *cancellable;
  gint64 start, elapsed;
  const gsize n = 128;

  /* Many features with many sines (O(N K) each) so that the run takes a while. */
  make_sine_params (&params, 1, 64, 800);
  start = g_get_monotonic_time ();
  rpe_compute_templates_async_full (&params, 0, n, FALSE, compute_progress, &state,
                                    NULL, compute_done, &state);
  iterate_until (compute_finished, &state);
  elapsed = g_get_monotonic_time () - start;
  g_assert_no_error (state.error);
  g_assert_nonnull (state.templates);
  g_test_message ("%zu x %zu x %zu templates in %.3f s, %u progress callbacks",
                  params.n_features, n, n, elapsed / 1e6, state.n_progress);
  g_assert_cmpuint (state.n_progress, >=, 1);
  /* At most 20 Hz, counted: every report was sent within the run.  (The spacing of the sends is
   * tested with an injected clock in test-explore-job; their arrival times here are not theirs: a
   * main loop held up under load receives two reports queued 50 ms apart back to back.) */
  g_assert_cmpfloat (state.n_progress, <=, elapsed / 1e6 * 20.0 + 1.0);
  g_clear_pointer (&state.templates, rpe_templates_unref);

  /* Cancelling from the first progress report stops the worker (core's flag). */
  memset (&state, 0, sizeof state);
  cancellable = g_cancellable_new ();
  state.cancel_on_progress = cancellable;
  rpe_compute_templates_async_full (&params, 0, n, FALSE, compute_progress, &state,
                                    cancellable, compute_done, &state);
  iterate_until (compute_finished, &state);
  g_assert_error (state.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_null (state.templates);
  g_assert_cmpuint (state.n_progress, ==, 1);
  g_clear_error (&state.error);
  g_object_unref (cancellable);
  rpe_spe_params_clear (&params);
}

/* ------------------------------------------------------------------- view */

static void
test_heatmap_view (void)
{
  GtkWidget *window = gtk_window_new ();
  GtkWidget *view = rpe_heatmap_view_new ();
  float *values = g_new (float, 12);
  GBytes *bytes;
  RpeHeatmapData data;
  gsize rows = 99, cols = 99;

  for (int i = 0; i < 12; i++)
    values[i] = (float) i;
  bytes = g_bytes_new_take (values, 12 * sizeof (float));

  gtk_window_set_child (GTK_WINDOW (window), view);
  g_assert_null (rpe_heatmap_view_get_data (RPE_HEATMAP_VIEW (view), &rows, &cols));
  g_assert_cmpuint (rows, ==, 0);
  rpe_heatmap_view_set_data (RPE_HEATMAP_VIEW (view), bytes, 3, 4);
  g_bytes_unref (bytes);
  rpe_heatmap_view_set_title (RPE_HEATMAP_VIEW (view), "three by four");
  rpe_heatmap_view_set_train_length (RPE_HEATMAP_VIEW (view), 2);
  g_assert_true (rpe_heatmap_view_get_data (RPE_HEATMAP_VIEW (view), &rows, &cols) == values);
  g_assert_cmpuint (rows, ==, 3);
  g_assert_cmpuint (cols, ==, 4);
  g_assert_cmpstr (rpe_heatmap_view_get_title (RPE_HEATMAP_VIEW (view)), ==, "three by four");

  rpe_heatmap_view_get_render_data (RPE_HEATMAP_VIEW (view), &data);
  g_assert_true (data.values == values);
  g_assert_cmpuint (data.rows, ==, 3);
  g_assert_cmpuint (data.cols, ==, 4);
  g_assert_cmpuint (data.train_length, ==, 2);
  g_assert_cmpstr (data.title, ==, "three by four");

  /* Drawn through snapshot: a frame with the view mapped renders without error. */
  gtk_window_present (GTK_WINDOW (window));
  for (int i = 0; i < 20; i++)
    g_main_context_iteration (NULL, FALSE);

  rpe_heatmap_view_set_data (RPE_HEATMAP_VIEW (view), NULL, 0, 0);
  g_assert_null (rpe_heatmap_view_get_data (RPE_HEATMAP_VIEW (view), &rows, &cols));
  gtk_window_destroy (GTK_WINDOW (window));
}

static gboolean
not_loading (gpointer data)
{
  return !rpe_window_is_loading (RPE_WINDOW (data));
}

/* The trained demos open from the window's menu (win.open-demo): the explorer then shows the
 * demo's gated SPE module (4 heads of 16 features, a gate per layer). */
static void
test_window_trained_demos (void)
{
  RpeWindow *window = rpe_window_new (NULL);
  RpeExplorerState *state = rpe_window_get_state (window);
  const char *names[] = { "sine-spe", "conv-spe" };
  const RpeSpeMethod methods[] = { RPE_SPE_SINE, RPE_SPE_CONV };

  gtk_window_present (GTK_WINDOW (window));
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      const RpeSpeParams *p;

      g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.open-demo", "s", names[i]));
      g_assert_true (rpe_window_is_loading (window));
      rpe_test_iterate_until (not_loading, window);
      p = rpe_explorer_state_get_params (state, methods[i]);
      g_assert_nonnull (p);
      g_assert_cmpuint (p->n_heads, ==, 4);
      g_assert_cmpuint (p->n_features, ==, 16);
      g_assert_nonnull (p->gate);
    }
  /* an unknown demo is refused with a message; the state stays */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.open-demo", "s", "no-such-demo"));
  rpe_test_iterate_until (not_loading, window);
  g_assert_cmpuint (rpe_explorer_state_get_params (state, RPE_SPE_CONV)->n_heads, ==, 4);
  gtk_window_destroy (GTK_WINDOW (window));
  rpe_test_wait_jobs ();
}

/* ------------------------------------------------------------------ toasts */

/* What the frames saw of the toast queue: when each toast entered the overlay and when it was
 * dismissed, in frame time. */
typedef struct
{
  AdwToastOverlay *overlay;
  AdwToast        *toasts[5];
  gint64           shown[5];
  gint64           dismissed[5];
  guint            n;
  guint            max_in_overlay;
  gint64           settle_from;
  AdwToast        *last;
} ToastWatch;

static int
toast_index (ToastWatch *w, AdwToast *toast)
{
  for (guint i = 0; i < w->n; i++)
    if (w->toasts[i] == toast)
      return (int) i;
  return -1;
}

static void
toast_watch_paint (GdkFrameClock *clock, ToastWatch *w)
{
  AdwToast *current = rpe_toast_queue_current (w->overlay);
  int       i = current != NULL ? toast_index (w, current) : -1;

  if (current != w->last && i >= 0 && w->shown[i] == 0)
    w->shown[i] = gdk_frame_clock_get_frame_time (clock);
  w->last = current;
}

static void
toast_watch_dismissed (AdwToast *toast, ToastWatch *w)
{
  int            i = toast_index (w, toast);
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (w->overlay));

  g_assert_cmpint (i, >=, 0);
  g_assert_cmpint (w->dismissed[i], ==, 0); /* once */
  w->dismissed[i] = gdk_frame_clock_get_frame_time (clock);
}

static gboolean
toast_watch_done (gpointer data)
{
  ToastWatch *w = data;

  for (guint i = 0; i < w->n; i++)
    if (w->dismissed[i] == 0)
      return FALSE;
  return rpe_toast_queue_current (w->overlay) == NULL && rpe_toast_queue_pending (w->overlay) == 0;
}

static gboolean
toast_settled (gpointer data)
{
  ToastWatch    *w = data;
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (w->overlay));

  /* a frame RPE_TOAST_QUEUE_GAP_MS after the toast entered: its show animation is over */
  gtk_widget_queue_draw (GTK_WIDGET (w->overlay));
  return gdk_frame_clock_get_frame_time (clock) - w->settle_from >= (gint64) RPE_TOAST_QUEUE_GAP_MS * 1000;
}

static gboolean
toast_shown (gpointer overlay)
{
  return rpe_toast_queue_current (ADW_TOAST_OVERLAY (overlay)) != NULL;
}

/* libadwaita 1.2's overlay crashes when a toast is dismissed less than 200 ms after it was shown
 * while the one before it still hides (rpe-toast-queue.h): the queue keeps one toast in the
 * overlay, lets the next in only RPE_TOAST_QUEUE_GAP_MS of frame time after a dismissal, and
 * times each toast from the frame it entered, whatever the main loop does in between. */
static void
test_toast_queue (void)
{
  GtkWidget     *window = gtk_window_new ();
  ToastWatch     w = { 0 };
  GdkFrameClock *clock;
  gulong         paint;

  w.overlay = ADW_TOAST_OVERLAY (adw_toast_overlay_new ());
  adw_toast_overlay_set_child (w.overlay, gtk_label_new ("content"));
  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (w.overlay));
  gtk_window_set_default_size (GTK_WINDOW (window), 400, 300);
  gtk_window_present (GTK_WINDOW (window));
  rpe_test_iterate_until (rpe_test_widget_mapped, w.overlay);
  clock = gtk_widget_get_frame_clock (GTK_WIDGET (w.overlay));
  paint = g_signal_connect (clock, "after-paint", G_CALLBACK (toast_watch_paint), &w);

  /* a burst: four toasts of 1 s in one main-loop turn, the last of high priority */
  for (guint i = 0; i < 4; i++)
    {
      g_autofree char *title = g_strdup_printf ("toast %u", i);
      AdwToast        *toast = adw_toast_new (title);

      adw_toast_set_timeout (toast, 1);
      if (i == 3)
        adw_toast_set_priority (toast, ADW_TOAST_PRIORITY_HIGH);
      w.toasts[w.n++] = toast;
      g_signal_connect (toast, "dismissed", G_CALLBACK (toast_watch_dismissed), &w);
      rpe_toast_queue_add (w.overlay, g_object_ref (toast));
    }
  g_assert_cmpuint (rpe_toast_queue_pending (w.overlay), ==, 4);
  /* the first shown is dismissed early, by hand (its close button), once it has slid in (a
   * dismissal during its show animation is the overlay's own race, which the queue cannot reach:
   * AdwToast forgets its overlay at the first emission) */
  rpe_test_iterate_until (toast_shown, w.overlay);
  g_assert_true (rpe_toast_queue_current (w.overlay) == w.toasts[3]); /* high priority first */
  w.settle_from = gdk_frame_clock_get_frame_time (clock);
  rpe_test_iterate_until (toast_settled, &w);
  adw_toast_dismiss (w.toasts[3]);
  g_assert_null (rpe_toast_queue_current (w.overlay));
  rpe_test_iterate_until (toast_watch_done, &w);
  g_signal_handler_disconnect (clock, paint);

  /* shown in order 3, 0, 1, 2; each after the one before was dismissed plus the gap; each of
   * 0, 1, 2 dismissed by its own timeout, not before 1 s of frame time */
  for (guint k = 0; k < 4; k++)
    {
      guint i = k == 0 ? 3 : k - 1;

      g_assert_cmpint (w.shown[i], >, 0);
      g_test_message ("toast %u: shown at %+.3f s, dismissed at %+.3f s", i, (w.shown[i] - w.shown[3]) / 1e6,
                      (w.dismissed[i] - w.shown[3]) / 1e6);
      if (k > 0)
        {
          guint before = k == 1 ? 3 : k - 2;

          g_assert_cmpint (w.shown[i] - w.dismissed[before], >=, (gint64) RPE_TOAST_QUEUE_GAP_MS * 1000);
          g_assert_cmpint (w.dismissed[i] - w.shown[i], >=, G_USEC_PER_SEC);
        }
    }
  gtk_window_destroy (GTK_WINDOW (window));
  for (guint i = 0; i < w.n; i++)
    g_object_unref (w.toasts[i]);
  rpe_test_drain ();
}

int
main (int   argc,
      char *argv[])
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();

  g_test_add_func ("/ui/window/demo", test_window_demo);
  g_test_add_func ("/ui/window/destroy-busy", test_window_destroy_busy);
  g_test_add_func ("/ui/window/trained-demos", test_window_trained_demos);
  g_test_add_func ("/ui/window/settings", test_window_settings);
  g_test_add_func ("/ui/window/toast-queue", test_toast_queue);
  g_test_add_func ("/ui/compute/templates", test_compute_templates);
  g_test_add_func ("/ui/compute/templates-again", test_compute_templates_again);
  g_test_add_func ("/ui/compute/errors", test_compute_errors);
  g_test_add_func ("/ui/compute/progress", test_compute_progress);
  g_test_add_func ("/ui/heatmap-view/data", test_heatmap_view);

  return g_test_run ();
}

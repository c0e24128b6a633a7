/* test-ui-explorer.c: the explorer window under Xvfb: the demo, live controls
 * changing the rendered pixels of their view, stale results, a long job that
 * is cancelled while the main loop keeps answering, a malformed checkpoint,
 * settings, and the parameter-change-to-redraw latency.
 *
 * With RPE_SCREENSHOT_DIR set, /ui/explorer/screenshots saves a PNG of the
 * window on each view there (tools/make-screenshots.sh). */
#include "config.h"

#include <math.h>
#include <string.h>

#include <adwaita.h>
#include <glib/gstdio.h>

#include "rpe-test-utils.h"
#include "rpe-window-test.h"
#include "rpe-ui-test-utils.h"
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

/* ---------------------------------------------------------------- helpers */

/* Fraction of pixels that differ between two renderings of the same size. */
static double
pixel_difference (cairo_surface_t *a,
                  cairo_surface_t *b)
{
  int w = cairo_image_surface_get_width (a), h = cairo_image_surface_get_height (a);
  int sa = cairo_image_surface_get_stride (a), sb = cairo_image_surface_get_stride (b);
  const guint8 *da = cairo_image_surface_get_data (a), *db = cairo_image_surface_get_data (b);
  gsize differ = 0;

  g_assert_cmpint (w, ==, cairo_image_surface_get_width (b));
  g_assert_cmpint (h, ==, cairo_image_surface_get_height (b));
  for (int y = 0; y < h; y++)
    if (memcmp (da + y * sa, db + y * sb, (gsize) w * 4) != 0)
      for (int x = 0; x < w; x++)
        differ += memcmp (da + y * sa + 4 * x, db + y * sb + 4 * x, 4) != 0;
  return (double) differ / ((double) w * h);
}

/* Independent reference (docs/math.md, section 1): P_d(tau) = 1/(2K) sum_k lambda_k^2 cos(2 pi f_k tau + theta_k). */
static double
sine_template_ref (const RpeSpeParams *p,
                   gsize               h,
                   gsize               d,
                   double              tau)
{
  gsize K = p->n_sines, base = (h * p->n_features + d) * K;
  double sum = 0.0;

  for (gsize k = 0; k < K; k++)
    sum += (double) p->gains[base + k] * p->gains[base + k]
           * cos (2.0 * G_PI * p->freqs[base + k] * tau + p->offsets[base + k]);
  return sum / (2.0 * K);
}

static RpeWindow *
open_window (RpeWindowView view)
{
  RpeWindow *window = rpe_window_new (NULL);

  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  rpe_window_set_view (window, view);
  gtk_window_present (GTK_WINDOW (window));
  rpe_test_settle (window, FALSE);
  return window;
}

static GtkWidget *
view_widget (RpeWindow     *window,
             RpeWindowView  view)
{
  return rpe_window_get_view_widget (window, view);
}

/* ------------------------------------------------------------------ tests */

static void
test_demo (void)
{
  RpeWindow *window = open_window (RPE_WINDOW_VIEW_TEMPLATES);
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeTemplatesView *tv = RPE_TEMPLATES_VIEW (view_widget (window, RPE_WINDOW_VIEW_TEMPLATES));
  const RpeSpeParams *p = rpe_explorer_state_get_params (state, RPE_SPE_SINE);
  RpeTemplates *t = rpe_templates_view_get_templates (tv);
  double max_err = 0.0, max_ref = 0.0;

  /* the embedded demo, H = 4, D = 16, shown at once in 16 cells */
  g_assert_null (rpe_window_get_message (window));
  g_assert_true (rpe_window_get_from_demo (window));
  g_assert_nonnull (p);
  g_assert_cmpuint (p->n_heads, ==, 4);
  g_assert_cmpuint (p->n_features, ==, 16);
  g_assert_nonnull (t);
  g_assert_cmpuint (t->n_features, ==, 16);
  g_assert_cmpuint (t->n, ==, rpe_explorer_state_get_length (state));
  for (gsize d = 0; d < 16; d++)
    {
      gsize rows, cols;
      const float *v = templates_cell_data (tv, d, &rows, &cols);

      g_assert_nonnull (v);
      g_assert_cmpuint (rows, ==, t->n);
      for (gsize m = 0; m < rows; m++)
        for (gsize n = 0; n < cols; n++)
          {
            double ref = sine_template_ref (p, 0, d, (double) m - (double) n);

            max_err = fmax (max_err, fabs (v[m * cols + n] - ref));
            max_ref = fmax (max_ref, fabs (ref));
          }
    }
  g_test_message ("templates vs reference: max rel err %.3g", max_err / max_ref);
  g_assert_cmpfloat (max_err / max_ref, <, 1e-5);

  /* clicking a cell opens it with its profile (and selects d) */
  rpe_templates_view_open_cell (tv, 5);
  g_assert_cmpint (rpe_templates_view_get_open_cell (tv), ==, 5);
  g_assert_nonnull (rpe_heatmap_view_get_data (rpe_templates_view_get_detail (tv), NULL, NULL));
  {
    RpeCurvePlot profile;

    rpe_curve_view_get_plot (rpe_templates_view_get_profile (tv), &profile);
    g_assert_cmpuint (profile.n_series, ==, 1);
    g_assert_cmpuint (profile.series[0].n, ==, 2 * t->n - 1);
  }
  rpe_templates_view_open_cell (tv, -1);

  /* every view computes on the demo */
  for (guint v = 1; v < RPE_WINDOW_N_VIEWS; v++)
    {
      rpe_window_set_view (window, v);
      rpe_test_settle (window, FALSE);
    }
  g_assert_nonnull (rpe_attention_view_get_image (RPE_ATTENTION_VIEW (view_widget (window, RPE_WINDOW_VIEW_ATTENTION))));
  g_assert_nonnull (rpe_curves_page_get_result (RPE_CURVES_PAGE (view_widget (window, RPE_WINDOW_VIEW_CURVES))));
  g_assert_nonnull (rpe_teaching_view_get_result (RPE_TEACHING_VIEW (view_widget (window, RPE_WINDOW_VIEW_TEACHING))));
  {
    /* softmax rows of the exact map sum to 1 */
    RpeTeaching *teach = rpe_teaching_view_get_result (RPE_TEACHING_VIEW (view_widget (window, RPE_WINDOW_VIEW_TEACHING)));
    double worst = 0.0;

    for (gsize m = 0; m < teach->n; m++)
      {
        double s = 0.0, se = 0.0;

        for (gsize n = 0; n < teach->n; n++)
          {
            s += teach->exact[m * teach->n + n];
            se += teach->estimate[m * teach->n + n];
          }
        worst = fmax (worst, fmax (fabs (s - 1.0), fabs (se - 1.0)));
      }
    g_assert_cmpfloat (worst, <, 1e-4);
    /* error against R falls roughly like 1/sqrt(R) */
    g_test_message ("template error slope against R: %.3f", teach->slope);
    g_assert_cmpfloat (teach->slope, <, -0.35);
    g_assert_cmpfloat (teach->slope, >, -0.65);
  }
  gtk_window_destroy (GTK_WINDOW (window));
}

/* A change made by `change' must change the pixels of `view'. */
static void
check_change_redraws (RpeWindowView   view,
                      const char     *what,
                      void          (*prepare) (RpeWindow *),
                      void          (*change) (RpeWindow *))
{
  RpeWindow *window = open_window (view);
  GtkWidget *widget = view_widget (window, view);
  cairo_surface_t *before, *after;
  double diff;

  if (prepare != NULL)
    {
      prepare (window);
      rpe_test_settle (window, FALSE);
    }
  before = rpe_test_render_widget (widget);
  change (window);
  rpe_test_settle (window, FALSE);
  after = rpe_test_render_widget (widget);
  diff = pixel_difference (before, after);
  g_test_message ("%s: %.2f %% of the view's pixels changed", what, 100.0 * diff);
  g_assert_cmpfloat (diff, >, 0.005);
  cairo_surface_destroy (before);
  cairo_surface_destroy (after);
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
change_frequency (RpeWindow *window)
{
  RpeExplorerState *state = rpe_window_get_state (window);
  const RpeSpeParams *p = rpe_explorer_state_get_params (state, RPE_SPE_SINE);
  gsize i = 0;   /* h = 0, d = 0, k = 0 */

  g_assert_true (rpe_explorer_state_set_sine (state, 0, 0, 0, fmod (p->freqs[i] + 0.13, 0.5),
                                              p->offsets[i], p->gains[i] + 0.5, FALSE));
}

static void
test_frequency (void)
{
  check_change_redraws (RPE_WINDOW_VIEW_TEMPLATES, "frequency (templates)", NULL, change_frequency);
}

static void
prepare_gated (RpeWindow *window)
{
  g_object_set (rpe_window_get_state (window), "gated", TRUE, NULL);
}

static void
change_gate (RpeWindow *window)
{
  g_assert_true (rpe_explorer_state_set_gate (rpe_window_get_state (window), 0, 0, 0.95, TRUE));
}

static void
test_gate (void)
{
  check_change_redraws (RPE_WINDOW_VIEW_TEMPLATES, "gate (templates)", prepare_gated, change_gate);
}

static void
change_r (RpeWindow *window)
{
  g_object_set (rpe_window_get_state (window), "realizations", 512, NULL);
}

static void
test_realizations (void)
{
  check_change_redraws (RPE_WINDOW_VIEW_TEACHING, "R (teaching)", NULL, change_r);
}

static void
prepare_lrpe (RpeWindow *window)
{
  g_object_set (rpe_window_get_state (window), "method", RPE_EXPLORER_METHOD_LRPE,
                "content", RPE_CONTENT_RANDOM, NULL);
}

static void
change_lrpe (RpeWindow *window)
{
  g_object_set (rpe_window_get_state (window), "lrpe-theta", RPE_LRPE_THETA_C, NULL);
}

static void
test_lrpe (void)
{
  check_change_redraws (RPE_WINDOW_VIEW_ATTENTION, "LRPE theta (attention)", prepare_lrpe, change_lrpe);
}

static void
test_stale (void)
{
  RpeWindow *window = open_window (RPE_WINDOW_VIEW_TEMPLATES);
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeTemplatesView *tv = RPE_TEMPLATES_VIEW (view_widget (window, RPE_WINDOW_VIEW_TEMPLATES));
  RpeTemplates *t;
  guint shown = 0;

  /* two quick changes: only the last is shown, and nothing in between */
  g_object_set (state, "length", 300, NULL);
  g_object_set (state, "length", 48, NULL);
  g_assert_true (rpe_window_is_busy (window));
  while (rpe_window_is_busy (window))
    {
      RpeTemplates *now;

      g_main_context_iteration (NULL, TRUE);
      now = rpe_templates_view_get_templates (tv);
      g_assert_true (now->n == 96 || now->n == 48);   /* the old one, or the last */
      shown += now->n == 300;
    }
  t = rpe_templates_view_get_templates (tv);
  g_assert_cmpuint (shown, ==, 0);
  g_assert_cmpuint (t->n, ==, 48);
  g_assert_cmpuint (t->serial, ==, rpe_explorer_state_get_serial (state));
  gtk_window_destroy (GTK_WINDOW (window));
}

typedef struct
{
  gint64 last;
  gint64 max_gap;
  guint  ticks;
} StallProbe;

static gboolean
stall_tick (gpointer data)
{
  StallProbe *probe = data;
  gint64 now = g_get_monotonic_time ();

  if (probe->last != 0)
    probe->max_gap = MAX (probe->max_gap, now - probe->last);
  probe->last = now;
  probe->ticks++;
  return G_SOURCE_CONTINUE;
}

typedef struct
{
  RpeAttentionView *view;
  double            first;    /* the first progress shown, or -1 */
} ProgressWatch;

/* The job has reported progress twice (it is running and its reports reach the main loop), or it
 * has already finished. */
static gboolean
progress_advanced (gpointer data)
{
  ProgressWatch *watch = data;
  RpeAttentionView *av = watch->view;
  double p;

  if (!rpe_figure_page_is_busy (RPE_FIGURE_PAGE (av)))
    return TRUE;
  if (!rpe_figure_page_get_progress_visible (RPE_FIGURE_PAGE (av)))
    return FALSE;
  p = rpe_figure_page_get_progress (RPE_FIGURE_PAGE (av));
  if (p <= 0.0)
    return FALSE;
  if (watch->first < 0.0)
    watch->first = p;
  return p > watch->first;
}

static void
test_long_job (void)
{
  RpeWindow *window = open_window (RPE_WINDOW_VIEW_ATTENTION);
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeAttentionView *av = RPE_ATTENTION_VIEW (view_widget (window, RPE_WINDOW_VIEW_ATTENTION));
  RpeAttentionImage *before = rpe_attention_view_get_image (av);
  ProgressWatch watch = { av, -1.0 };
  StallProbe probe = { 0 };
  guint id;

  g_assert_nonnull (before);
  /* The largest main-loop stall is measured (reported, never asserted: it depends on the load of
   * the machine; `rpe bench` measures it in its "gui main-loop stall" row). */
  id = g_timeout_add (5, stall_tick, &probe);
  g_object_set (state, "length", 65536, NULL);
  g_assert_true (rpe_figure_page_is_busy (RPE_FIGURE_PAGE (av)));
  rpe_test_iterate_until (progress_advanced, &watch);
  g_source_remove (id);
  g_test_message ("main loop while the N = 65536 job runs: %u ticks of 5 ms, largest stall %.1f ms",
                  probe.ticks, probe.max_gap / 1e3);
  if (!rpe_figure_page_is_busy (RPE_FIGURE_PAGE (av)))
    {
      g_test_skip ("the N = 65536 job finished before it could be cancelled");
      gtk_window_destroy (GTK_WINDOW (window));
      return;
    }
  g_assert_cmpfloat (rpe_figure_page_get_progress (RPE_FIGURE_PAGE (av)), >, 0.0);
  g_assert_cmpfloat (rpe_figure_page_get_progress (RPE_FIGURE_PAGE (av)), <, 1.0);
  /* cancel (Escape): the view is idle at once, the old image stays */
  gtk_widget_activate_action (GTK_WIDGET (window), "win.cancel", NULL);
  g_assert_false (rpe_figure_page_is_busy (RPE_FIGURE_PAGE (av)));
  g_assert_false (rpe_figure_page_get_progress_visible (RPE_FIGURE_PAGE (av)));
  g_assert_true (rpe_attention_view_get_image (av) == before);
  /* the cancelled worker stops and its result, if any, is dropped; the window still draws */
  rpe_test_wait_jobs ();
  rpe_test_wait_frames (GTK_WIDGET (window), 2);
  g_assert_true (rpe_attention_view_get_image (av) == before);
  g_assert_cmpstr (rpe_figure_page_get_caption (RPE_FIGURE_PAGE (av)), !=, NULL);
  g_assert_nonnull (strstr (rpe_figure_page_get_caption (RPE_FIGURE_PAGE (av)), "Cancelled"));

  /* a long sequence completes on a zoomed window with a bounded image */
  rpe_figure_page_set_viewport (RPE_FIGURE_PAGE (av), 1000, 1400, 900, 1300);
  rpe_test_settle (window, FALSE);
  {
    RpeAttentionImage *img = rpe_attention_view_get_image (av);

    g_assert_cmpuint (img->n, ==, 65536);
    g_assert_cmpuint (img->m0, ==, 1000);
    g_assert_cmpuint (img->m1, ==, 1400);
    g_assert_cmpuint (img->rows, <=, 400);
    g_test_message ("zoomed window of N = 65536: %zu x %zu image in %.0f ms", img->rows, img->cols, img->seconds * 1e3);
  }
  gtk_window_destroy (GTK_WINDOW (window));
}

static gboolean
not_loading (gpointer data)
{
  return !rpe_window_is_loading (RPE_WINDOW (data));
}

static void
test_malformed (void)
{
  RpeWindow *window = open_window (RPE_WINDOW_VIEW_TEMPLATES);
  RpeExplorerState *state = rpe_window_get_state (window);
  g_autofree char *path = g_build_filename (rpe_test_tmpdir (), "broken.safetensors", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  const RpeSpeParams *p = rpe_explorer_state_get_params (state, RPE_SPE_SINE);
  float f0 = p->freqs[0];
  guint64 serial = rpe_explorer_state_get_serial (state);
  static const char garbage[] = "\x10\x00\x00\x00\x00\x00\x00\x00{\"a\": [1, 2";

  g_assert_true (g_file_set_contents (path, garbage, sizeof garbage - 1, NULL));
  rpe_window_open_file (window, file);
  g_assert_true (rpe_window_is_loading (window));
  rpe_test_iterate_until (not_loading, window);
  g_assert_nonnull (rpe_window_get_message (window));
  g_test_message ("malformed file: %s", rpe_window_get_message (window));
  g_assert_nonnull (strstr (rpe_window_get_message (window), "Could not open"));
  /* the previous state is kept */
  g_assert_cmpuint (rpe_explorer_state_get_serial (state), ==, serial);
  g_assert_true (rpe_explorer_state_get_params (state, RPE_SPE_SINE) == p);
  g_assert_cmpfloat (p->freqs[0], ==, f0);
  g_assert_true (rpe_window_get_from_demo (window));
  g_unlink (path);
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_open_demo_file (void)
{
  const char *demo = g_getenv ("RPE_DEMO_CHECKPOINT");
  g_autofree char *built = NULL;
  RpeWindow *window;
  g_autoptr (GFile) file = NULL;

  if (demo == NULL && g_getenv ("G_TEST_BUILDDIR") != NULL)
    {
      /* the demo checkpoint the build wrote (tools/demo.safetensors) */
      built = g_build_filename (g_getenv ("G_TEST_BUILDDIR"), "..", "tools", "demo.safetensors", NULL);
      if (g_file_test (built, G_FILE_TEST_EXISTS))
        demo = built;
    }
  if (demo == NULL)
    {
      g_test_skip ("RPE_DEMO_CHECKPOINT not set");
      return;
    }
  window = open_window (RPE_WINDOW_VIEW_TEMPLATES);
  file = g_file_new_for_path (demo);
  rpe_window_open_file (window, file);
  rpe_test_iterate_until (not_loading, window);
  g_assert_null (rpe_window_get_message (window));
  g_assert_false (rpe_window_get_from_demo (window));
  /* no modal dialog on open: the contents window opens on request (the toast's button) */
  g_assert_null (rpe_window_get_tensor_browser (window));
  gtk_widget_activate_action (GTK_WIDGET (window), "win.browse-tensors", NULL);
  g_assert_nonnull (rpe_window_get_tensor_browser (window));
  g_assert_cmpuint (rpe_tensor_browser_get_n_rows (rpe_window_get_tensor_browser (window)), >=, 5);
  /* pick the conv module's gate of layer 1 */
  {
    RpeCheckpointData *data = rpe_tensor_browser_get_data (rpe_window_get_tensor_browser (window));

    for (guint i = 0; i < data->modules->len; i++)
      if (((RpeSpeModuleInfo *) g_ptr_array_index (data->modules, i))->method == RPE_SPE_CONV)
        {
          rpe_tensor_browser_choose (rpe_window_get_tensor_browser (window), i, 1);
          break;
        }
  }
  g_assert_cmpuint (rpe_explorer_state_get_spe_kind (rpe_window_get_state (window)), ==, RPE_SPE_CONV);
  g_assert_nonnull (strstr (rpe_explorer_state_get_source (rpe_window_get_state (window), RPE_SPE_CONV), "layer 1"));
  rpe_test_settle (window, FALSE);
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_settings (void)
{
  GSettings *settings = g_settings_new (APPLICATION_ID);
  RpeWindow *window = open_window (RPE_WINDOW_VIEW_CURVES);
  int width = 0, height = 0;

  g_object_set (rpe_window_get_state (window), "colormap", "magma", NULL);
  gtk_window_set_default_size (GTK_WINDOW (window), 1111, 777);
  gtk_window_close (GTK_WINDOW (window));
  {
    g_autofree char *view = g_settings_get_string (settings, "last-view");
    g_autofree char *cmap = g_settings_get_string (settings, "colormap");

    g_assert_cmpstr (view, ==, "curves");
    g_assert_cmpstr (cmap, ==, "magma");
  }
  g_assert_cmpint (g_settings_get_int (settings, "window-width"), ==, 1111);

  window = rpe_window_new (NULL);
  gtk_window_get_default_size (GTK_WINDOW (window), &width, &height);
  g_assert_cmpint (width, ==, 1111);
  g_assert_cmpint (height, ==, 777);
  g_assert_cmpint (rpe_window_get_view (window), ==, RPE_WINDOW_VIEW_CURVES);
  g_assert_cmpstr (rpe_explorer_state_get_colormap (rpe_window_get_state (window)), ==, "magma");
  gtk_window_destroy (GTK_WINDOW (window));
  g_settings_reset (settings, "last-view");
  g_settings_reset (settings, "colormap");
  g_settings_reset (settings, "window-width");
  g_settings_reset (settings, "window-height");
  g_object_unref (settings);
}

static int
compare_double (gconstpointer a,
                gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y;
}

typedef struct
{
  RpeWindow     *window;
  RpeWindowView  view;
  gconstpointer  before;
} Shown;

static gconstpointer
current_result (RpeWindow     *window,
                RpeWindowView  view)
{
  GtkWidget *w = view_widget (window, view);

  if (view == RPE_WINDOW_VIEW_TEMPLATES)
    return rpe_templates_view_get_templates (RPE_TEMPLATES_VIEW (w));
  return rpe_attention_view_get_image (RPE_ATTENTION_VIEW (w));
}

static gboolean
new_result_shown (gpointer data)
{
  Shown *s = data;

  return !rpe_window_is_busy (s->window) && current_result (s->window, s->view) != s->before;
}

static void
measure_latency (RpeWindowView  view,
                 const char    *name)
{
  RpeWindow *window = open_window (view);
  RpeExplorerState *state = rpe_window_get_state (window);
  GtkWidget *widget = view_widget (window, view);
  const RpeSpeParams *p = rpe_explorer_state_get_params (state, RPE_SPE_SINE);
  double times[50];

  for (int i = 0; i < 50; i++)
    {
      Shown s = { window, view, current_result (window, view) };
      gint64 start = g_get_monotonic_time ();
      cairo_surface_t *pixels;

      rpe_explorer_state_set_sine (state, 0, 3, 1, 0.02 + 0.009 * (i % 40), p->offsets[1], p->gains[1], FALSE);
      rpe_test_iterate_until (new_result_shown, &s);
      pixels = rpe_test_render_widget (widget);   /* the redraw itself */
      times[i] = (g_get_monotonic_time () - start) / 1e3;
      cairo_surface_destroy (pixels);
    }
  qsort (times, 50, sizeof (double), compare_double);
  g_test_message ("%s: change -> redrawn view, median %.1f ms, 95th percentile %.1f ms (50 changes)",
                  name, times[24], times[47]);
  g_print ("# %s: parameter change to redrawn view: median %.1f ms, p95 %.1f ms (N = %zu, 50 changes)\n",
           name, times[24], times[47], rpe_explorer_state_get_length (state));
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_latency (void)
{
  measure_latency (RPE_WINDOW_VIEW_TEMPLATES, "templates view (16 cells)");
  measure_latency (RPE_WINDOW_VIEW_ATTENTION, "attention view");
}

static void
save_view (RpeWindow  *window,
           const char *dir,
           const char *name)
{
  g_autofree char *path = g_strdup_printf ("%s/%s.png", dir, name);
  cairo_surface_t *pixels = rpe_test_render_widget (GTK_WIDGET (window));

  g_assert_cmpint (cairo_surface_write_to_png (pixels, path), ==, CAIRO_STATUS_SUCCESS);
  cairo_surface_destroy (pixels);
}

static void
test_screenshots (void)
{
  const char *dir = g_getenv ("RPE_SCREENSHOT_DIR");
  RpeWindow *window;
  RpeExplorerState *state;

  if (dir == NULL)
    {
      g_test_skip ("RPE_SCREENSHOT_DIR not set");
      return;
    }
  {
    /* the application's style sheet (AdwApplication loads it from the resource base path) */
    GtkCssProvider *css = gtk_css_provider_new ();

    gtk_css_provider_load_from_resource (css, "/io/github/rpestudio/RpeStudio/style.css");
    gtk_style_context_add_provider_for_display (gdk_display_get_default (), GTK_STYLE_PROVIDER (css),
                                                GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
    g_object_unref (css);
    gtk_icon_theme_add_resource_path (gtk_icon_theme_get_for_display (gdk_display_get_default ()),
                                      "/io/github/rpestudio/RpeStudio/icons");
  }
  {
    /* what the README shows: no tour offer over the figures, no header transition caught mid-fade */
    g_autoptr (GSettings) settings = g_settings_new ("io.github.rpestudio.RpeStudio");

    g_settings_set_boolean (settings, "tour-offered", TRUE);
    g_object_set (gtk_settings_get_default (), "gtk-enable-animations", FALSE, NULL);
  }
  window = open_window (RPE_WINDOW_VIEW_TEMPLATES);
  state = rpe_window_get_state (window);
  save_view (window, dir, "templates");
  rpe_templates_view_open_cell (RPE_TEMPLATES_VIEW (view_widget (window, RPE_WINDOW_VIEW_TEMPLATES)), 3);
  rpe_test_settle (window, FALSE);
  save_view (window, dir, "templates-cell");
  g_object_set (state, "length", 256, "train-length", 128, "method", RPE_EXPLORER_METHOD_SPE, NULL);
  rpe_window_set_view (window, RPE_WINDOW_VIEW_ATTENTION);
  rpe_test_settle (window, FALSE);
  save_view (window, dir, "attention");
  /* a causal map on the log colour scale, with the row plot of query m = 160 */
  g_object_set (state, "causal", TRUE, "color-scale", RPE_HEATMAP_TRANSFORM_LOG, NULL);
  rpe_attention_view_set_row (RPE_ATTENTION_VIEW (view_widget (window, RPE_WINDOW_VIEW_ATTENTION)), 160);
  rpe_test_settle (window, FALSE);
  save_view (window, dir, "attention-log-row");
  rpe_attention_view_set_row (RPE_ATTENTION_VIEW (view_widget (window, RPE_WINDOW_VIEW_ATTENTION)), -1);
  g_object_set (state, "causal", FALSE, "color-scale", RPE_HEATMAP_TRANSFORM_NONE, NULL);
  g_object_set (state, "length", 128, "train-length", 64, NULL);
  rpe_window_set_view (window, RPE_WINDOW_VIEW_CURVES);
  rpe_test_settle (window, FALSE);
  save_view (window, dir, "curves");
  g_object_set (state, "length", 96, "realizations", 16, NULL);
  rpe_window_set_view (window, RPE_WINDOW_VIEW_TEACHING);
  rpe_test_settle (window, FALSE);
  save_view (window, dir, "teaching");
  /* a row of both maps, percentile-clipped colours */
  g_object_set (state, "color-scale", RPE_HEATMAP_TRANSFORM_PERCENTILE, "color-percentile", 98.0, NULL);
  rpe_teaching_view_set_row (RPE_TEACHING_VIEW (view_widget (window, RPE_WINDOW_VIEW_TEACHING)), 40);
  rpe_test_settle (window, FALSE);
  save_view (window, dir, "teaching-row");
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int   argc,
      char *argv[])
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();

  g_test_add_func ("/ui/explorer/demo", test_demo);
  g_test_add_func ("/ui/explorer/frequency", test_frequency);
  g_test_add_func ("/ui/explorer/gate", test_gate);
  g_test_add_func ("/ui/explorer/realizations", test_realizations);
  g_test_add_func ("/ui/explorer/lrpe", test_lrpe);
  g_test_add_func ("/ui/explorer/stale", test_stale);
  g_test_add_func ("/ui/explorer/long-job", test_long_job);
  g_test_add_func ("/ui/explorer/malformed", test_malformed);
  g_test_add_func ("/ui/explorer/open", test_open_demo_file);
  g_test_add_func ("/ui/explorer/settings", test_settings);
  g_test_add_func ("/ui/explorer/latency", test_latency);
  g_test_add_func ("/ui/explorer/screenshots", test_screenshots);

  return g_test_run ();
}

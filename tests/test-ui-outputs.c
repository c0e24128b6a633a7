/* test-ui-outputs.c: the Outputs view under Xvfb.
 *
 * The view follows the explorer state (head, R, causal, feature map, N_train) and its own
 * controls (values, comparison, draws, channel), drops stale results and cancels; its
 * figure holds exactly the numbers of a direct core computation; the window's export equals
 * `rpe export outputs` ($RPE_CLI) for the same parameters, pixel for pixel (PNG) and value
 * for value (.npy, .csv).  With RPE_SCREENSHOT_DIR set, /ui/outputs/screenshot saves the
 * window there as outputs.png.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <adwaita.h>
#include <glib/gstdio.h>

#include "rpe-error.h"
#include "rpe-npy.h"
#include "rpe-test-utils.h"
#include "rpe-ui-test-utils.h"
#include "rpe-ui-wait.h"
#include "rpe-window-test.h"

typedef struct
{
  RpeOutputsView *view;
  guint64         serial;
} Wait;

/* A result for the state's current serial is shown. */
static gboolean
result_current (gpointer data)
{
  Wait *w = data;
  RpeOutputsResult *r = rpe_outputs_view_get_result (w->view);

  return r != NULL && r->serial == w->serial && !rpe_figure_page_is_busy (RPE_FIGURE_PAGE (w->view));
}

static RpeOutputsResult *
wait_result (RpeWindow *window)
{
  RpeOutputsView *view = RPE_OUTPUTS_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_OUTPUTS));
  Wait w = { view, rpe_explorer_state_get_serial (rpe_window_get_state (window)) };

  rpe_test_iterate_until (result_current, &w);
  rpe_test_iterate_until (rpe_test_window_idle, window);
  return rpe_outputs_view_get_result (view);
}

static RpeWindow *
open_window (void)
{
  RpeWindow *window = rpe_window_new (NULL);

  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  gtk_window_present (GTK_WINDOW (window));
  return window;
}

static RpeOutputsView *
outputs_view (RpeWindow *window)
{
  return RPE_OUTPUTS_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_OUTPUTS));
}

/* The view follows the state and its own controls; its numbers are the core's. */
static void
test_live (void)
{
  RpeWindow *window = open_window ();
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeOutputsView *view = outputs_view (window);
  RpeOutputsResult *r;
  const RpeOutputs *o;
  g_autoptr (RpeFigureBundle) bundle = NULL;

  g_object_set (state, "length", 80, "train-length", 32, "realizations", 16, NULL);
  g_assert_null (rpe_figure_page_build_figure (RPE_FIGURE_PAGE (view)));
  rpe_window_set_view (window, RPE_WINDOW_VIEW_OUTPUTS);
  g_assert_cmpint (rpe_window_get_view (window), ==, RPE_WINDOW_VIEW_OUTPUTS);
  r = wait_result (window);
  o = &r->outputs;
  g_assert_cmpuint (o->n, ==, 80);
  g_assert_cmpuint (o->r, ==, 16);
  g_assert_cmpuint (o->dv, ==, 4);
  g_assert_cmpuint (o->train_length, ==, 32);
  g_assert_cmpuint (o->n_draws, ==, 1);
  /* impulses, spread evenly: V is one 1 per channel */
  for (gsize c = 0; c < 4; c++)
    {
      double sum = 0;

      for (gsize m = 0; m < o->n; m++)
        sum += o->values[m * 4 + c];
      g_assert_cmpfloat (sum, ==, 1.0);
    }

  /* the figure holds the numbers: panel 0 is the reference, transposed (channel, position) */
  bundle = rpe_figure_page_build_figure (RPE_FIGURE_PAGE (view));
  g_assert_nonnull (bundle);
  g_assert_cmpuint (bundle->fig.n_panels, ==, 3);
  g_assert_cmpuint (bundle->fig.panels[0].rows, ==, 4);
  g_assert_cmpuint (bundle->fig.panels[0].cols, ==, 80);
  for (gsize m = 0; m < o->n; m++)
    for (gsize c = 0; c < 4; c++)
      {
        g_assert_cmpfloat (bundle->fig.panels[0].values[c * o->n + m], ==, o->reference[m * 4 + c]);
        g_assert_cmpfloat (bundle->fig.panels[1].values[c * o->n + m], ==, o->estimate[m * 4 + c]);
        g_assert_cmpfloat (bundle->fig.panels[2].values[c * o->n + m], ==, o->difference[m * 4 + c]);
      }

  /* its text reads at 1280 x 800: the view draws the export's page scaled to its area, so the
   * tick text is the figure's size (points) times that scale, at least 10 px */
  {
    GtkWidget *area = rpe_test_find_widget (GTK_WIDGET (view), GTK_TYPE_DRAWING_AREA);
    double wpt, hpt, scale;

    g_assert_nonnull (area);
    rpe_test_settle (window, FALSE);
    g_assert_cmpint (gtk_widget_get_width (area), >, 0);
    rpe_figure_default_size (&bundle->fig, &wpt, &hpt);
    scale = fmin (gtk_widget_get_width (area) / wpt, gtk_widget_get_height (area) / hpt);
    g_test_message ("outputs at 1280 x 800: a %d x %d area draws the %.0f x %.0f pt page at %.2f px/pt: "
                    "strip text %.1f px, plot text %.1f px", gtk_widget_get_width (area), gtk_widget_get_height (area),
                    wpt, hpt, scale, bundle->fig.panels[0].font_size * scale, bundle->fig.plots[0].font_size * scale);
    for (gsize i = 0; i < bundle->fig.n_panels; i++)
      g_assert_cmpfloat (bundle->fig.panels[i].font_size * scale, >=, 10.0);
    for (gsize i = 0; i < bundle->fig.n_plots; i++)
      g_assert_cmpfloat (bundle->fig.plots[i].font_size * scale, >=, 10.0);
  }

  /* every sidebar control reaches it */
  g_object_set (state, "head", 2, NULL);
  r = wait_result (window);
  g_assert_cmpuint (r->outputs.head, ==, 2);
  g_object_set (state, "realizations", 64, "causal", TRUE, NULL);
  r = wait_result (window);
  g_assert_cmpuint (r->outputs.r, ==, 64);
  g_assert_true (r->outputs.causal);
  /* causal + impulse: nothing before the impulse */
  for (gsize c = 0; c < 4; c++)
    {
      gsize p = 0;

      while (r->outputs.values[p * 4 + c] == 0.0f)
        p++;
      for (gsize m = 0; m < p; m++)
        {
          g_assert_cmpfloat (r->outputs.reference[m * 4 + c], ==, 0.0f);
          g_assert_cmpfloat (r->outputs.estimate[m * 4 + c], ==, 0.0f);
        }
    }
  g_object_set (state, "feature-map", RPE_FEATURE_RELU, "train-length", 40, NULL);
  r = wait_result (window);
  g_assert_cmpint (r->feature_map, ==, RPE_FEATURE_RELU);
  g_assert_cmpuint (r->outputs.train_length, ==, 40);

  /* its own controls */
  rpe_outputs_view_set_values (view, RPE_VALUES_NOISE, 3);
  r = wait_result (window);
  g_assert_cmpuint (r->outputs.dv, ==, 3);
  rpe_outputs_view_set_compare (view, RPE_OUTPUTS_KERNEL);
  rpe_outputs_view_set_several_draws (view, TRUE);
  r = wait_result (window);
  g_assert_cmpint (r->outputs.compare, ==, RPE_OUTPUTS_KERNEL);
  g_assert_cmpuint (r->outputs.n_draws, ==, RPE_OUTPUTS_SEVERAL_DRAWS);
  for (gsize m = 0; m < r->outputs.n; m++)
    g_assert_true (r->outputs.error_sd[m] > 0.0);
  g_assert_false (rpe_outputs_view_set_positions (view, "3,x"));
  g_assert_true (rpe_outputs_view_set_positions (view, "5, 70"));
  rpe_outputs_view_set_values (view, RPE_VALUES_IMPULSE, 2);
  r = wait_result (window);
  g_assert_cmpfloat (r->outputs.values[5 * 2 + 0], ==, 1.0f);
  g_assert_cmpfloat (r->outputs.values[70 * 2 + 1], ==, 1.0f);
  /* an impulse beyond N: the reason shows, nothing is drawn from a clamped position */
  g_assert_true (rpe_outputs_view_set_positions (view, "5, 90"));
  rpe_test_iterate_until (rpe_test_window_idle, window);
  g_assert_nonnull (strstr (rpe_figure_page_get_caption (RPE_FIGURE_PAGE (view)), "beyond"));
  g_assert_true (rpe_outputs_view_get_result (view) == r);
  g_assert_true (rpe_outputs_view_set_positions (view, "5, 70"));
  r = wait_result (window);
  rpe_outputs_view_set_channel (view, 1);
  g_clear_pointer (&bundle, rpe_figure_bundle_unref);
  bundle = rpe_figure_page_build_figure (RPE_FIGURE_PAGE (view));
  g_assert_cmpfloat (bundle->fig.plots[0].series[0].y[70], ==, r->outputs.reference[70 * 2 + 1]);

  /* a malformed values file: the reason shows and no crash */
  {
    g_autofree char *bad = g_build_filename (rpe_test_tmpdir (), "bad-values.npy", NULL);
    float data[6] = { 1, 2, NAN, 4, 5, 6 };

    g_assert_true (rpe_npy_write (bad, data, 2, (gsize[]) { 3, 2 }, FALSE, NULL));
    rpe_outputs_view_set_npy (view, bad);
    rpe_test_iterate_until (rpe_test_window_idle, window);
    g_assert_nonnull (strstr (rpe_figure_page_get_caption (RPE_FIGURE_PAGE (view)), "NaN"));
  }

  /* stale results are dropped: a burst of changes ends on the last one */
  for (int i = 0; i < 20; i++)
    g_object_set (state, "seed", 100 + i, NULL);
  rpe_outputs_view_set_values (view, RPE_VALUES_SWEEP, 4);
  r = wait_result (window);
  g_assert_cmpuint (r->outputs.seed, ==, 119);

  /* cancel: a long job stops and the view stays usable */
  g_object_set (state, "length", 8192, NULL);
  rpe_test_iterate_until ((gboolean (*) (gpointer)) rpe_window_is_busy, window);
  rpe_window_cancel (window);
  rpe_test_iterate_until (rpe_test_window_idle, window);
  g_object_set (state, "length", 64, NULL);
  r = wait_result (window);
  g_assert_cmpuint (r->outputs.n, ==, 64);

  gtk_window_destroy (GTK_WINDOW (window));
  rpe_test_wait_jobs ();
}

/* ---------------------------------------------------- window vs the CLI */

static void
compare_with_cli (RpeWindow          *window,
                  const char         *name,
                  const char * const *args)
{
  static const char *exts[] = { "png", "npy", "csv" };

  for (guint e = 0; e < G_N_ELEMENTS (exts); e++)
    {
      g_autofree char *gui = g_strdup_printf ("%s/gui-%s.%s", rpe_test_tmpdir (), name, exts[e]);
      g_autofree char *cli = g_strdup_printf ("%s/cli-%s.%s", rpe_test_tmpdir (), name, exts[e]);
      g_autoptr (GError) error = NULL;

      g_assert_true (rpe_window_export_view (window, gui, &error));
      g_assert_no_error (error);
      g_assert_cmpint (rpe_test_run_cli_export ("outputs", args, cli), ==, 0);
      if (e == 0)
        {
          cairo_surface_t *a = cairo_image_surface_create_from_png (gui);
          cairo_surface_t *b = cairo_image_surface_create_from_png (cli);
          int w = cairo_image_surface_get_width (a), h = cairo_image_surface_get_height (a);
          int stride = cairo_image_surface_get_stride (a);
          gsize differ = 0;

          g_assert_cmpint (cairo_surface_status (a), ==, CAIRO_STATUS_SUCCESS);
          g_assert_cmpint (cairo_surface_status (b), ==, CAIRO_STATUS_SUCCESS);
          g_assert_cmpint (w, ==, cairo_image_surface_get_width (b));
          g_assert_cmpint (h, ==, cairo_image_surface_get_height (b));
          g_assert_cmpint (w, >, 500);
          for (int y = 0; y < h; y++)
            differ += memcmp (cairo_image_surface_get_data (a) + y * stride,
                              cairo_image_surface_get_data (b) + y * stride, (gsize) w * 4) != 0;
          g_test_message ("%s: window vs `rpe export outputs`: %zu of %d rows differ (%d x %d px)", name,
                          (size_t) differ, h, w, h);
          g_assert_cmpuint (differ, ==, 0);
          cairo_surface_destroy (a);
          cairo_surface_destroy (b);
        }
      else
        {
          g_autofree char *da = NULL, *db = NULL;
          gsize la, lb;

          /* the same computation on the same core path: the same bytes */
          g_assert_true (g_file_get_contents (gui, &da, &la, NULL));
          g_assert_true (g_file_get_contents (cli, &db, &lb, NULL));
          g_assert_cmpmem (da, la, db, lb);
        }
    }
}

static gboolean
dialog_closed (gpointer data)
{
  return rpe_window_get_export_dialog (RPE_WINDOW (data)) == NULL;
}

static void
test_cli (void)
{
  const char *cli = g_getenv ("RPE_CLI");
  RpeWindow *window;
  RpeExplorerState *state;
  RpeOutputsView *view;

  if (cli == NULL || !g_file_test (cli, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("RPE_CLI is not set");
      return;
    }
  window = open_window ();
  state = rpe_window_get_state (window);
  view = outputs_view (window);
  g_assert_true (rpe_window_get_from_demo (window));
  /* the window starts ungated (the CLI: --no-gate) */
  g_object_set (state, "length", 96, "head", 1, "train-length", 32, "realizations", 32, "seed", 3, NULL);
  rpe_window_set_view (window, RPE_WINDOW_VIEW_OUTPUTS);
  wait_result (window);
  {
    const char *args[] = { "--checkpoint", "demo", "--method", "sine", "--no-gate", "--head", "1", "--length", "96",
                           "--realizations", "32", "--seed", "3", "--train-length", "32", NULL };
    compare_with_cli (window, "outputs-softmax", args);
  }
  g_object_set (state, "spe-kind", RPE_SPE_CONV, "causal", TRUE, "content", RPE_CONTENT_RANDOM, NULL);
  rpe_outputs_view_set_values (view, RPE_VALUES_NOISE, 3);
  rpe_outputs_view_set_compare (view, RPE_OUTPUTS_KERNEL);
  rpe_outputs_view_set_several_draws (view, TRUE);
  rpe_outputs_view_set_channel (view, 2);
  wait_result (window);
  {
    const char *args[] = { "--checkpoint", "demo", "--method", "conv", "--no-gate", "--head", "1", "--length", "96",
                           "--realizations", "32", "--seed", "3", "--train-length", "32", "--causal",
                           "--content", "random", "--value-source", "noise", "--channels", "3", "--compare", "kernel",
                           "--draws", "16", "--channel", "2", NULL };
    compare_with_cli (window, "outputs-kernel", args);
  }
  /* the colour-scale control: the window's maps on a percentile clip, each its own range */
  g_object_set (state, "color-scale", RPE_HEATMAP_TRANSFORM_PERCENTILE, "color-percentile", 97.0,
                "color-range", RPE_COLOR_RANGE_PER_PANEL, NULL);
  /* new colours, the same result: nothing to wait for but the main loop */
  rpe_test_iterate_until (rpe_test_window_idle, window);
  {
    const char *args[] = { "--checkpoint", "demo", "--method", "conv", "--no-gate", "--head", "1", "--length", "96",
                           "--realizations", "32", "--seed", "3", "--train-length", "32", "--causal",
                           "--content", "random", "--value-source", "noise", "--channels", "3", "--compare", "kernel",
                           "--draws", "16", "--channel", "2", "--color-scale", "percentile", "--percentile", "97",
                           "--per-cell-scale", NULL };
    compare_with_cli (window, "outputs-kernel-percentile", args);
  }
  g_object_set (state, "color-scale", RPE_HEATMAP_TRANSFORM_NONE, "color-range", RPE_COLOR_RANGE_SHARED, NULL);
  /* the Export dialog (Ctrl+E) writes the view's figure on a worker: PDF and CSV */
  {
    static const char *exts[] = { "pdf", "csv" };

    for (guint e = 0; e < G_N_ELEMENTS (exts); e++)
      {
        g_autofree char *path = g_strdup_printf ("%s/dialog-outputs.%s", rpe_test_tmpdir (), exts[e]);
        g_autofree char *text = NULL;
        RpeExportDialog *dialog;

        g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.export", NULL));
        dialog = rpe_window_get_export_dialog (window);
        g_assert_nonnull (dialog);
        rpe_export_dialog_set_path (dialog, path);
        rpe_export_dialog_start (dialog);
        g_test_message ("export dialog: %s", rpe_export_dialog_get_path (dialog));
        rpe_test_iterate_until (dialog_closed, window);
        g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
        g_assert_true (e == 0 ? g_str_has_prefix (text, "%PDF") : strstr (text, "error_mean") != NULL);
      }
  }
  gtk_window_destroy (GTK_WINDOW (window));
}

/* -------------------------------------------------------------- screenshot */

static void
test_screenshot (void)
{
  const char *dir = g_getenv ("RPE_SCREENSHOT_DIR");
  g_autofree char *path = NULL;
  RpeWindow *window;
  cairo_surface_t *pixels;

  if (dir == NULL)
    {
      g_test_skip ("RPE_SCREENSHOT_DIR not set");
      return;
    }
  {
    GtkCssProvider *css = gtk_css_provider_new ();

    gtk_css_provider_load_from_resource (css, "/io/github/rpestudio/RpeStudio/style.css");
    gtk_style_context_add_provider_for_display (gdk_display_get_default (), GTK_STYLE_PROVIDER (css),
                                                GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
    g_object_unref (css);
    gtk_icon_theme_add_resource_path (gtk_icon_theme_get_for_display (gdk_display_get_default ()),
                                      "/io/github/rpestudio/RpeStudio/icons");
  }
  window = open_window ();
  g_object_set (rpe_window_get_state (window), "length", 256, "train-length", 64, "realizations", 64, NULL);
  rpe_window_set_view (window, RPE_WINDOW_VIEW_OUTPUTS);
  rpe_outputs_view_set_several_draws (outputs_view (window), TRUE);
  wait_result (window);
  /* the window has painted the new figure */
  rpe_test_wait_frames (GTK_WIDGET (window), 2);
  pixels = rpe_test_render_widget (GTK_WIDGET (window));
  {
    /* not a blank window: the figure's colour maps are there */
    GHashTable *colours = g_hash_table_new (g_direct_hash, g_direct_equal);
    const guint8 *data = cairo_image_surface_get_data (pixels);
    int stride = cairo_image_surface_get_stride (pixels);

    for (int y = 0; y < cairo_image_surface_get_height (pixels); y++)
      for (int x = 0; x < cairo_image_surface_get_width (pixels); x++)
        g_hash_table_add (colours, GUINT_TO_POINTER (*(const guint32 *) (data + y * stride + 4 * x)));
    g_test_message ("screenshot: %u colours", g_hash_table_size (colours));
    g_assert_cmpuint (g_hash_table_size (colours), >, 200);
    g_hash_table_unref (colours);
  }
  path = g_strdup_printf ("%s/outputs.png", dir);
  g_assert_cmpint (cairo_surface_write_to_png (pixels, path), ==, CAIRO_STATUS_SUCCESS);
  cairo_surface_destroy (pixels);
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int   argc,
      char *argv[])
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  g_test_add_func ("/ui/outputs/live", test_live);
  g_test_add_func ("/ui/outputs/cli", test_cli);
  g_test_add_func ("/ui/outputs/screenshot", test_screenshot);
  return g_test_run ();
}

/* test-ui-scale.c: the colour-scale control, the row plot of the attention map, and a
 * window that fits the screen (Xvfb).
 *
 * - The attention view colours each pixel with the colour map at the scale position an
 *   independent computation here predicts (log over 4 decades, power, percentile clip by
 *   nearest rank), and a causal map no longer looks flat under log or percentile.
 * - Shared vs per panel: the templates grid's cells get one range, or each its own.
 * - Clicking a query row (a synthesized click through the canvas' GtkGestureClick) plots
 *   a(m, .): its values equal the FastRPB attention row computed here (docs/math.md, section 8); Up/Down
 *   move the row; Delete clears it.
 * - Undo reverts a colour-scale edit, named "Change Colour Scale".
 * - A conv checkpoint with 256 channels and no gate: at 1280 x 800 the window's minimum and
 *   natural size fit the monitor (gtk_widget_measure); stating H = 8 in the tensor browser
 *   loads the module as H = 8, D = 32. */
#include "config.h"

#include <math.h>
#include <string.h>

#include <adwaita.h>
#include <glib/gstdio.h>

#include "rpe-colormap.h"
#include "rpe-heatmap-view.h"
#include "rpe-teaching-view.h"
#include "rpe-tensor-browser.h"
#include "rpe-session.h"
#include "rpe-undo.h"
#include "rpe-window-test.h"
#include "rpe-ui-test-utils.h"
#include "rpe-ui-wait.h"

#define TEST_N 48

static gboolean
window_idle (gpointer data)
{
  while (g_main_context_iteration (NULL, FALSE))
    ;
  return !rpe_window_is_busy (RPE_WINDOW (data)) && !rpe_window_is_loading (RPE_WINDOW (data));
}

static void
settle (RpeWindow *window)
{
  rpe_test_wait_frames (GTK_WIDGET (window), 1);
  rpe_test_iterate_until (window_idle, window);
  rpe_test_wait_frames (GTK_WIDGET (window), 2);
  rpe_test_iterate_until (window_idle, window);
}

static RpeWindow *
open_window (void)
{
  RpeWindow *window = rpe_window_new (NULL);

  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  g_object_set (rpe_window_get_state (window), "length", TEST_N, NULL);
  gtk_window_present (GTK_WINDOW (window));
  settle (window);
  return window;
}

static void
pixel_at (cairo_surface_t *s,
          int              x,
          int              y,
          guint8           rgb[3])
{
  const guint8 *p = cairo_image_surface_get_data (s) + y * cairo_image_surface_get_stride (s) + 4 * x;
  guint32 v = *(const guint32 *) p;

  rgb[0] = (v >> 16) & 0xff;
  rgb[1] = (v >> 8) & 0xff;
  rgb[2] = v & 0xff;
}

/* Where the map's cell (m, n) is drawn in the canvas: the plot square as the view lays it
 * out, found from the viewport and the hover read-out's inverse (describe_point). */
static gboolean
cell_centre (RpeAttentionView *view,
             gsize             m,
             gsize             n,
             double           *px,
             double           *py)
{
  GtkWidget *canvas = rpe_attention_view_get_canvas (view);
  int w = gtk_widget_get_width (canvas), h = gtk_widget_get_height (canvas);
  g_autofree char *want = g_strdup_printf ("m = %zu, n = %zu:", m, n);

  /* scan for the pixel whose read-out names the cell, nearest its centre */
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        g_autofree char *text = rpe_attention_view_describe_point (view, x + 0.5, y + 0.5);

        if (text != NULL && g_str_has_prefix (text, want))
          {
            /* the cell spans the next few pixels: take its middle */
            int x1 = x, y1 = y;

            for (;;)
              {
                g_autofree char *t = rpe_attention_view_describe_point (view, x1 + 1.5, y + 0.5);

                if (t == NULL || !g_str_has_prefix (t, want))
                  break;
                x1++;
              }
            for (;;)
              {
                g_autofree char *t = rpe_attention_view_describe_point (view, x + 0.5, y1 + 1.5);

                if (t == NULL || !g_str_has_prefix (t, want))
                  break;
                y1++;
              }
            *px = 0.5 * (x + x1) + 0.5;
            *py = 0.5 * (y + y1) + 0.5;
            return TRUE;
          }
      }
  return FALSE;
}

/* -------------------------------------------------- independent references */

/* FastRPB with unit content (q = k = 1, docs/math.md, section 8): softmax of equal scores is uniform over
 * the keys allowed (n <= m when causal), plus the bias W[m, n] = w_{m-n} (0 for m - n < 0
 * when causal, 0 for |m - n| >= the editable taps). */
static double
fastrpb_unit (RpeExplorerState *state,
              gsize             n_len,
              gboolean          causal,
              gsize             m,
              gsize             n)
{
  gsize count = 0;
  const float *w = rpe_explorer_state_get_fastrpb_weights (state, &count);
  long tau = (long) m - (long) n, T = (long) (count + 1) / 2;
  double a = causal ? (n <= m ? 1.0 / (double) (m + 1) : 0.0) : 1.0 / (double) n_len;

  if (!(causal && tau < 0) && labs (tau) < T)
    a += w[tau + T - 1];
  return a;
}

static int
cmp_double (const void *a,
            const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

/* ----------------------------------------------------------------- tests */

/* Each pixel of the attention map is the colour map at the position the scale gives the
 * cell's value, computed here without the renderer. */
static void
test_attention_pixels (void)
{
  RpeWindow *window = open_window ();
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeAttentionView *view = RPE_ATTENTION_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_ATTENTION));
  const RpeColormap *cmap = rpe_colormap_lookup ("viridis");
  static const guint scales[] = { RPE_HEATMAP_TRANSFORM_NONE, RPE_HEATMAP_TRANSFORM_LOG,
                                  RPE_HEATMAP_TRANSFORM_POWER, RPE_HEATMAP_TRANSFORM_PERCENTILE };
  static const gsize cells[][2] = { { 0, 0 }, { 5, 3 }, { 20, 19 }, { 47, 10 }, { 30, 30 }, { 40, 39 } };
  double spread[G_N_ELEMENTS (scales)];

  g_object_set (state, "method", RPE_EXPLORER_METHOD_FASTRPB, "content", RPE_CONTENT_UNIT, "causal", TRUE,
                "colormap", "viridis", "color-gamma", 0.4, "color-percentile", 90.0, NULL);
  rpe_window_set_view (window, RPE_WINDOW_VIEW_ATTENTION);
  for (guint s = 0; s < G_N_ELEMENTS (scales); s++)
    {
      RpeAttentionImage *img;
      cairo_surface_t *shot;
      double lo = INFINITY, hi = -INFINITY, ox, oy;
      GtkWidget *canvas = rpe_attention_view_get_canvas (view);
      graphene_point_t origin;

      g_object_set (state, "color-scale", scales[s], NULL);
      settle (window);
      img = rpe_attention_view_get_image (view);
      g_assert_nonnull (img);
      g_assert_cmpuint (img->rows, ==, TEST_N);
      /* the image is the reference map */
      for (gsize m = 0; m < TEST_N; m++)
        for (gsize n = 0; n < TEST_N; n++)
          {
            double ref = fastrpb_unit (state, TEST_N, TRUE, m, n);

            g_assert_cmpfloat (fabs (img->values[m * TEST_N + n] - ref), <=, 1e-5);
            lo = fmin (lo, ref);
            hi = fmax (hi, ref);
          }
      if (scales[s] == RPE_HEATMAP_TRANSFORM_PERCENTILE)
        {
          /* nearest rank on the sorted values: [P(10), P(90)] */
          double *sorted = g_new (double, TEST_N * TEST_N);

          for (gsize i = 0; i < TEST_N * TEST_N; i++)
            sorted[i] = img->values[i];
          qsort (sorted, TEST_N * TEST_N, sizeof (double), cmp_double);
          lo = (float) sorted[(gsize) floor (0.10 * (TEST_N * TEST_N - 1) + 0.5)];
          hi = (float) sorted[(gsize) floor (0.90 * (TEST_N * TEST_N - 1) + 0.5)];
          g_free (sorted);
        }
      else
        {
          lo = img->vmin;
          hi = img->vmax;
        }

      shot = rpe_test_render_widget (GTK_WIDGET (window));
      g_assert_true (gtk_widget_compute_point (canvas, GTK_WIDGET (window), &GRAPHENE_POINT_INIT (0, 0), &origin));
      for (guint c = 0; c < G_N_ELEMENTS (cells); c++)
        {
          gsize m = cells[c][0], n = cells[c][1];
          double v = img->values[m * TEST_N + n], t;
          double rgbd[3];
          guint8 want[3], got[3];

          switch (scales[s])
            {
            case RPE_HEATMAP_TRANSFORM_LOG:
              {
                double floor_ = fmax (lo, hi * 1e-4);

                t = v <= floor_ ? 0.0 : log10 (v / floor_) / log10 (hi / floor_);
              }
              break;
            case RPE_HEATMAP_TRANSFORM_POWER:
              t = pow ((v - lo) / (hi - lo), 0.4);
              break;
            default:
              t = (v - lo) / (hi - lo);
              break;
            }
          t = fmin (1.0, fmax (0.0, t));
          rpe_colormap_map (cmap, t, rgbd);
          for (int k = 0; k < 3; k++)
            want[k] = (guint8) fmin (255.0, fmax (0.0, floor (rgbd[k] * 255.0 + 0.5)));
          g_assert_true (cell_centre (view, m, n, &ox, &oy));
          pixel_at (shot, (int) floor (origin.x + ox), (int) floor (origin.y + oy), got);
          for (int k = 0; k < 3; k++)
            g_assert_cmpint (abs ((int) got[k] - (int) want[k]), <=, 1);
        }
      /* how much of the causal map's lower triangle (the weights that exist) sits in the
       * bottom tenth of the colour map: most of it under the linear scale (a(0, 0) dominates),
       * little under log and percentile */
      {
        double dark = 0.0, k = TEST_N * (TEST_N + 1) / 2.0;

        for (gsize m = 0; m < TEST_N; m++)
          for (gsize n = 0; n <= m; n++)
            {
              double v = img->values[m * TEST_N + n], fl = fmax (lo, hi * 1e-4);
              double t = scales[s] == RPE_HEATMAP_TRANSFORM_LOG ? (v <= fl ? 0.0 : log10 (v / fl) / log10 (hi / fl))
                         : scales[s] == RPE_HEATMAP_TRANSFORM_POWER ? pow (fmax (0.0, (v - lo) / (hi - lo)), 0.4)
                         : (v - lo) / (hi - lo);

              dark += t < 0.1;
            }
        spread[s] = dark / k;
      }
      g_test_message ("scale %u: %.1f %% of the causal map's weights in the bottom tenth of the colour map",
                      scales[s], 100.0 * spread[s]);
      cairo_surface_destroy (shot);
    }
  g_assert_cmpfloat (spread[0], >, 0.5);
  g_assert_cmpfloat (spread[1], <, 0.1);
  g_assert_cmpfloat (spread[3], <, 0.5 * spread[0]);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The templates grid is drawn as the export draws it (its figure's grid: shared axes, one
 * colour bar) and a point in cell i's image (where the grid layout puts it) picks cell i. */
static void
test_templates_grid_cells (void)
{
  RpeWindow *window = open_window ();
  RpeTemplatesView *view = RPE_TEMPLATES_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_TEMPLATES));
  g_autoptr (RpeFigureBundle) b = NULL;
  const RpeHeatmapGrid *grid;
  GtkWidget *area;
  cairo_surface_t *surface;
  cairo_t *cr;
  int width, height;
  gsize n_columns = 0;

  rpe_window_set_view (window, RPE_WINDOW_VIEW_TEMPLATES);
  settle (window);
  grid = rpe_templates_view_get_grid (view);
  g_assert_nonnull (grid);
  g_assert_cmpuint (grid->n_cells, >=, 4);
  g_assert_cmpuint (grid->n_cells, <=, 64);   /* at most 8 columns: the export's layout */
  b = rpe_figure_page_build_figure (RPE_FIGURE_PAGE (view));
  g_assert_nonnull (b);
  g_assert_cmpuint (b->fig.grid.n_cells, ==, grid->n_cells);
  g_assert_true (b->fig.grid.shared_scale == grid->shared_scale);
  area = rpe_templates_view_get_grid_area (view);
  width = gtk_widget_get_width (area);
  height = gtk_widget_get_height (area);
  g_assert_cmpint (width, >, 0);
  g_assert_cmpint (height, >, 0);
  surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cr = cairo_create (surface);
  for (gsize i = 0; i < grid->n_cells; i++)
    {
      RpePlotRect im;
      unsigned int ticks = 0;

      g_assert_true (rpe_plot_grid_cell_layout (cr, &b->fig.grid, width, height, i, &im, &ticks, &n_columns));
      g_assert_cmpint (rpe_templates_view_cell_at (view, im.x + im.width / 2.0, im.y + im.height / 2.0), ==, (int) i);
      g_assert_cmpint (rpe_templates_view_cell_at (view, im.x + 1.0, im.y + im.height - 1.0), ==, (int) i);
      /* position numbers on the outer cells only: left column and bottom row */
      g_assert_true (((ticks & RPE_HEATMAP_TICKS_Y_TEXT) != 0) == (i % n_columns == 0));
    }
  g_assert_cmpuint (n_columns, ==, (gsize) ceil (sqrt ((double) grid->n_cells)));
  cairo_destroy (cr);
  cairo_surface_destroy (surface);
  /* outside every cell: none */
  g_assert_cmpint (rpe_templates_view_cell_at (view, -5.0, -5.0), ==, -1);
  g_assert_cmpint (rpe_templates_view_cell_at (view, width + 5.0, 1.0), ==, -1);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Shared: every cell of the templates grid maps one range (the grid figure's); per panel:
 * each cell's own. */
static void
test_shared_per_panel (void)
{
  RpeWindow *window = open_window ();
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeTemplatesView *view = RPE_TEMPLATES_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_TEMPLATES));
  RpeTemplates *t;
  RpeHeatmapData d;

  rpe_window_set_view (window, RPE_WINDOW_VIEW_TEMPLATES);
  g_object_set (state, "color-scale", RPE_HEATMAP_TRANSFORM_PERCENTILE, "color-percentile", 95.0, NULL);
  settle (window);
  t = rpe_templates_view_get_templates (view);
  g_assert_nonnull (t);
  g_assert_cmpuint (t->n_features, >=, 2);
  {
    const RpeHeatmapGrid *grid = rpe_templates_view_get_grid (view);
    double lo, hi, ulo = INFINITY, uhi = -INFINITY;

    /* the view draws the grid with one range and one colour bar ... */
    g_assert_nonnull (grid);
    g_assert_cmpuint (grid->n_cells, ==, t->n_features);
    g_assert_true (grid->shared_scale);
    for (gsize i = 0; i < t->n_features; i++)
      {
        double clo, chi;

        d = *rpe_templates_view_get_cell (view, i);
        g_assert_cmpint (d.transform, ==, RPE_HEATMAP_TRANSFORM_PERCENTILE);
        g_assert_cmpfloat (d.transform_param, ==, 95.0);
        g_assert_true (rpe_plot_heatmap_range (&d, &clo, &chi, NULL));
        ulo = fmin (ulo, clo);
        uhi = fmax (uhi, chi);
      }
    /* ... the union of the cells' own ranges (made symmetric about 0 for signed data) */
    g_assert_true (rpe_plot_grid_range (grid, &lo, &hi, NULL));
    g_assert_cmpfloat (lo, <=, ulo);
    g_assert_cmpfloat (hi, >=, uhi);
    g_assert_true ((lo == ulo && hi == uhi) || (lo == -hi && hi == fmax (-ulo, uhi)));
  }
  g_object_set (state, "color-range", RPE_COLOR_RANGE_PER_PANEL, NULL);
  settle (window);
  {
    gboolean differ = FALSE;
    double lo0 = 0, hi0 = 0;

    for (gsize i = 0; i < t->n_features; i++)
      {
        double lo, hi, *sorted;
        gsize count = t->n * t->n;

        g_assert_false (rpe_templates_view_get_grid (view)->shared_scale);
        d = *rpe_templates_view_get_cell (view, i);
        g_assert_false (d.fixed_range);
        g_assert_true (rpe_plot_heatmap_range (&d, &lo, &hi, NULL));
        /* the cell's own 5th..95th percentile (the AUTO scale makes a signed range symmetric) */
        sorted = g_new (double, count);
        for (gsize k = 0; k < count; k++)
          sorted[k] = d.values[k];
        qsort (sorted, count, sizeof (double), cmp_double);
        {
          double p5 = (float) sorted[(gsize) floor (0.05 * (count - 1) + 0.5)];
          double p95 = (float) sorted[(gsize) floor (0.95 * (count - 1) + 0.5)];
          double a = fmax (fabs (p5), fabs (p95));

          if (p5 < 0.0 && p95 > 0.0)
            {
              g_assert_cmpfloat (fabs (lo + a), <=, 1e-6);
              g_assert_cmpfloat (fabs (hi - a), <=, 1e-6);
            }
          else if (p95 > p5)
            {
              g_assert_cmpfloat (fabs (lo - p5), <=, 1e-6);
              g_assert_cmpfloat (fabs (hi - p95), <=, 1e-6);
            }
        }
        g_free (sorted);
        if (i == 0)
          {
            lo0 = lo;
            hi0 = hi;
          }
        else if (lo != lo0 || hi != hi0)
          differ = TRUE;
      }
    g_assert_true (differ);
  }
  /* Undo reverts the edit, named after it */
  {
    RpeUndo *undo = rpe_window_get_undo (window);
    guint range = 0;

    g_assert_cmpstr (rpe_undo_get_undo_label (undo), ==, "Change Colour Scale");
    g_assert_true (rpe_undo_undo (undo));
    g_object_get (state, "color-range", &range, NULL);
    g_assert_cmpuint (range, ==, RPE_COLOR_RANGE_SHARED);
    g_assert_true (rpe_undo_redo (undo));
    g_object_get (state, "color-range", &range, NULL);
    g_assert_cmpuint (range, ==, RPE_COLOR_RANGE_PER_PANEL);
  }
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Finds the first controller of `type` on widget. */
static GtkEventController *
find_controller (GtkWidget *widget,
                 GType      type)
{
  g_autoptr (GListModel) list = gtk_widget_observe_controllers (widget);

  for (guint i = 0; i < g_list_model_get_n_items (list); i++)
    {
      g_autoptr (GtkEventController) c = g_list_model_get_item (list, i);

      if (G_TYPE_CHECK_INSTANCE_TYPE (c, type))
        return c;
    }
  return NULL;
}

static void
check_row (RpeWindow        *window,
           RpeAttentionView *view,
           gssize            m)
{
  const double *x, *y;
  gsize count = rpe_attention_view_get_row_series (view, &x, &y);

  g_assert_cmpint (rpe_attention_view_get_row (view), ==, m);
  g_assert_cmpuint (count, ==, TEST_N);
  for (gsize n = 0; n < TEST_N; n++)
    {
      g_assert_cmpfloat (fabs (x[n] - (double) n), <=, 1e-9);
      g_assert_cmpfloat (fabs (y[n] - fastrpb_unit (rpe_window_get_state (window), TEST_N, FALSE, (gsize) m, n)),
                         <=, 1e-5);
    }
}

/* A click on a query row plots a(m, .) under the map. */
static void
test_row_plot (void)
{
  RpeWindow *window = open_window ();
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeAttentionView *view = RPE_ATTENTION_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_ATTENTION));
  GtkWidget *canvas = rpe_attention_view_get_canvas (view);
  GtkEventController *click;
  double px, py;

  g_object_set (state, "method", RPE_EXPLORER_METHOD_FASTRPB, "content", RPE_CONTENT_UNIT, "causal", FALSE, NULL);
  rpe_window_set_view (window, RPE_WINDOW_VIEW_ATTENTION);
  settle (window);
  g_assert_cmpint (rpe_attention_view_get_row (view), ==, -1);
  g_assert_true (cell_centre (view, 17, 5, &px, &py));
  /* the click gesture's "released" as GTK emits it for a press and release in place */
  click = find_controller (canvas, GTK_TYPE_GESTURE_CLICK);
  g_assert_nonnull (click);
  g_signal_emit_by_name (click, "released", 1, px, py);
  settle (window);
  check_row (window, view, 17);
  /* the map made room for the plot: the read-out over the plot names the row */
  {
    double px2, py2;

    g_assert_true (cell_centre (view, 17, 5, &px2, &py2));
    g_assert_cmpfloat (py2, <, py);
  }
  /* keyboard: Down, Page Up, Delete */
  gtk_widget_activate_action (GTK_WIDGET (view), "attention.row", "i", 1);
  settle (window);
  check_row (window, view, 18);
  gtk_widget_activate_action (GTK_WIDGET (view), "attention.row", "i", -10);
  settle (window);
  check_row (window, view, 8);
  gtk_widget_activate_action (GTK_WIDGET (view), "attention.row", "i", 0);
  settle (window);
  g_assert_cmpint (rpe_attention_view_get_row (view), ==, -1);
  g_assert_cmpuint (rpe_attention_view_get_row_series (view, NULL, NULL), ==, 0);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* SPE vs RPE: a click on a row of a map plots that row of the exact and estimated maps. */
static void
test_teaching_row (void)
{
  RpeWindow *window = open_window ();
  RpeTeachingView *view = RPE_TEACHING_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_TEACHING));
  RpeHeatmapView *map = rpe_teaching_view_get_heatmap (view, 1);
  GtkEventController *click;
  RpeCurvePlot cp;
  const RpeCurvePlot *plot = &cp;
  const float *exact, *estimate;
  gsize rows, cols, row = 0, col = 0;
  double px = -1, py = -1;

  rpe_window_set_view (window, RPE_WINDOW_VIEW_TEACHING);
  settle (window);
  g_assert_cmpint (rpe_teaching_view_get_row (view), ==, -1);
  /* a point of row 20 of the estimate's map */
  for (int y = 0; y < gtk_widget_get_height (GTK_WIDGET (map)) && px < 0; y++)
    for (int x = 0; x < gtk_widget_get_width (GTK_WIDGET (map)); x++)
      if (rpe_heatmap_view_cell_at (map, x + 0.5, y + 0.5, &row, &col) && row == 20)
        {
          px = x + 4.5;
          py = y + 1.5;
          break;
        }
  g_assert_cmpfloat (px, >=, 0.0);
  click = find_controller (GTK_WIDGET (map), GTK_TYPE_GESTURE_CLICK);
  g_assert_nonnull (click);
  g_signal_emit_by_name (click, "released", 1, px, py);
  g_assert_cmpint (rpe_teaching_view_get_row (view), ==, 20);
  rpe_curve_view_get_plot (rpe_teaching_view_get_plot (view), &cp);
  exact = rpe_heatmap_view_get_data (rpe_teaching_view_get_heatmap (view, 0), &rows, &cols);
  estimate = rpe_heatmap_view_get_data (map, &rows, &cols);
  g_assert_cmpuint (plot->n_series, ==, 2);
  g_assert_cmpuint (plot->series[0].n, ==, cols);
  for (gsize n = 0; n < cols; n++)
    {
      g_assert_cmpfloat (plot->series[0].x[n], ==, (double) n);
      g_assert_cmpfloat (plot->series[0].y[n], ==, exact[20 * cols + n]);
      g_assert_cmpfloat (plot->series[1].y[n], ==, estimate[20 * cols + n]);
    }
  gtk_widget_activate_action (GTK_WIDGET (view), "teaching.row", "i", 0);
  g_assert_cmpint (rpe_teaching_view_get_row (view), ==, -1);
  rpe_curve_view_get_plot (rpe_teaching_view_get_plot (view), &cp);
  g_assert_true (plot->x_log);   /* the template error curve again */
  gtk_window_destroy (GTK_WINDOW (window));
}

/* ------------------------------------------------------ a wide conv module */

/* A safetensors file of a conv SPE module with 256 channels, no gate: conv_q and conv_k
 * (256, 1, 8), channel c's taps c + j / 8. */
static char *
write_conv256 (void)
{
  const gsize channels = 256, taps = 8, bytes = channels * taps * 4;
  g_autofree char *header = g_strdup_printf ("{\"spe.conv_q.weight\":{\"dtype\":\"F32\",\"shape\":[256,1,8],"
                                             "\"data_offsets\":[0,%zu]},\"spe.conv_k.weight\":{\"dtype\":\"F32\","
                                             "\"shape\":[256,1,8],\"data_offsets\":[%zu,%zu]}}",
                                             bytes, bytes, 2 * bytes);
  gsize hlen = (strlen (header) + 7) / 8 * 8;
  GByteArray *file = g_byte_array_new ();
  guint64 le = GUINT64_TO_LE (hlen);
  char *path = g_build_filename (g_get_tmp_dir (), "rpe-test-conv256-XXXXXX.safetensors", NULL);
  int fd = g_mkstemp (path);

  g_assert_cmpint (fd, >=, 0);
  close (fd);
  g_byte_array_append (file, (const guint8 *) &le, 8);
  g_byte_array_append (file, (const guint8 *) header, strlen (header));
  for (gsize i = strlen (header); i < hlen; i++)
    g_byte_array_append (file, (const guint8 *) " ", 1);
  for (int k = 0; k < 2; k++)
    for (gsize c = 0; c < channels; c++)
      for (gsize j = 0; j < taps; j++)
        {
          float v = (float) (0.01 * (double) c + 0.1 * (double) j - 0.3 * k);

          g_byte_array_append (file, (const guint8 *) &v, 4);
        }
  g_assert_true (g_file_set_contents (path, (const char *) file->data, file->len, NULL));
  g_byte_array_unref (file);
  return path;
}

static gboolean
not_loading (gpointer data)
{
  return !rpe_window_is_loading (RPE_WINDOW (data));
}

static void
dump_wide (GtkWidget *w,
           int        depth)
{
  int mn, nat;

  gtk_widget_measure (w, GTK_ORIENTATION_HORIZONTAL, -1, &mn, &nat, NULL, NULL);
  if ((mn > 500 || nat > 900) && g_getenv ("RPE_DUMP_WIDE") != NULL)
    g_printerr ("%*s%s (%s) min %d nat %d\n", depth * 2, "", G_OBJECT_TYPE_NAME (w),
                gtk_widget_get_css_name (w), mn, nat);
  for (GtkWidget *c = gtk_widget_get_first_child (w); c != NULL; c = gtk_widget_get_next_sibling (c))
    if (gtk_widget_get_visible (c))
      dump_wide (c, depth + 1);
}

static void
test_fits_screen (void)
{
  g_autofree char *path = write_conv256 ();
  g_autoptr (GFile) file = g_file_new_for_path (path);
  RpeWindow *window = rpe_window_new (NULL);
  RpeExplorerState *state = rpe_window_get_state (window);
  const RpeSpeParams *p;
  RpeTensorBrowser *browser;
  int min_w, nat_w, min_h, nat_h;

  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  rpe_window_set_view (window, RPE_WINDOW_VIEW_TEMPLATES);
  gtk_window_present (GTK_WINDOW (window));
  settle (window);
  rpe_window_open_file (window, file);
  rpe_test_iterate_until (not_loading, window);
  g_assert_null (rpe_window_get_message (window));
  settle (window);
  p = rpe_explorer_state_get_params (state, RPE_SPE_CONV);
  g_assert_nonnull (p);
  /* the file cannot tell the heads: read as H = 1, D = 256 */
  g_assert_cmpuint (p->n_heads, ==, 1);
  g_assert_cmpuint (p->n_features, ==, 256);
  g_assert_cmpuint (rpe_explorer_state_get_spe_kind (state), ==, RPE_SPE_CONV);
  g_assert_nonnull (rpe_templates_view_get_templates (
    RPE_TEMPLATES_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_TEMPLATES))));

  /* the window (and its content) asks for no more than the 1280 x 800 monitor */
  dump_wide (GTK_WIDGET (window), 0);
  gtk_widget_measure (GTK_WIDGET (window), GTK_ORIENTATION_HORIZONTAL, -1, &min_w, &nat_w, NULL, NULL);
  gtk_widget_measure (GTK_WIDGET (window), GTK_ORIENTATION_VERTICAL, -1, &min_h, &nat_h, NULL, NULL);
  g_test_message ("window with D = 256: minimum %d x %d, natural %d x %d, allocated %d x %d", min_w, min_h, nat_w,
                  nat_h, gtk_widget_get_width (GTK_WIDGET (window)), gtk_widget_get_height (GTK_WIDGET (window)));
  g_assert_cmpint (min_w, <=, 1280);
  g_assert_cmpint (min_h, <=, 800);
  /* The header's view switcher is a squeezer: its natural width is the wide
   * switcher (7 tabs), which it gives up for the narrow one or the title when
   * the window is narrower, so only the content below it must ask for no more
   * than the screen.  The window itself always has a default size. */
  {
    GtkWidget *flap = rpe_test_find_widget (GTK_WIDGET (window), g_type_from_name ("AdwFlap"));
    int fmin, fnat;

    g_assert_nonnull (flap);
    gtk_widget_measure (flap, GTK_ORIENTATION_HORIZONTAL, -1, &fmin, &fnat, NULL, NULL);
    g_test_message ("content below the header: natural width %d", fnat);
    g_assert_cmpint (fnat, <=, 1280);
  }
  g_assert_cmpint (nat_h, <=, 800);
  g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (window)), <=, 1280);
  g_assert_cmpint (gtk_widget_get_height (GTK_WIDGET (window)), <=, 800);

  /* state H = 8 in the tensor browser: the module is H = 8 heads of D = 32, channels kept */
  gtk_widget_activate_action (GTK_WIDGET (window), "win.browse-tensors", NULL);
  browser = rpe_window_get_tensor_browser (window);
  g_assert_nonnull (browser);
  g_assert_cmpuint (rpe_tensor_browser_get_heads (browser), ==, 0);
  g_assert_false (rpe_tensor_browser_set_heads (browser, 3));
  g_assert_true (rpe_tensor_browser_set_heads (browser, 8));
  g_assert_cmpuint (rpe_tensor_browser_get_heads (browser), ==, 8);
  rpe_tensor_browser_choose (browser, 0, -1);
  settle (window);
  p = rpe_explorer_state_get_params (state, RPE_SPE_CONV);
  g_assert_cmpuint (p->n_heads, ==, 8);
  g_assert_cmpuint (p->n_features, ==, 32);
  g_assert_cmpuint (p->kernel, ==, 8);
  /* channel c = h * D + d keeps its taps: (h = 3, d = 5) is channel 101 */
  for (gsize j = 0; j < 8; j++)
    {
      float want_q = (float) (0.01 * 101.0 + 0.1 * (double) j);
      float want_k = (float) (0.01 * 101.0 + 0.1 * (double) j - 0.3);
      float a = p->wq[101 * 8 + j], b = p->wk[101 * 8 + j];

      /* the reference's names are swapped (docs/math.md, section 2): one of the two is conv_q's */
      g_assert_true ((a == want_q && b == want_k) || (a == want_k && b == want_q));
    }
  g_object_set (state, "head", 7, NULL);
  settle (window);
  g_assert_cmpuint (rpe_templates_view_get_templates (
    RPE_TEMPLATES_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_TEMPLATES)))->n_features, ==, 32);
  gtk_window_destroy (GTK_WINDOW (window));
  g_unlink (path);
}

/* The colour scale is part of a session: saved, read back, and passed to `rpe export`. */
static void
test_session (void)
{
  g_autoptr (RpeExplorerState) state = rpe_explorer_state_new ();
  g_autoptr (RpeExplorerState) back = rpe_explorer_state_new ();
  g_autoptr (RpeSession) session = NULL;
  g_autoptr (RpeSession) loaded = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *data = NULL;
  g_auto (GStrv) argv = NULL;
  g_autofree char *joined = NULL;
  RpeSpeParams p = { 0 };
  gsize length = 0;
  guint scale = 0, range = 0;
  double pct = 0;

  g_assert_cmpint (rpe_spe_params_init (&p, RPE_SPE_SINE, 2, 4, 3, FALSE), ==, RPE_OK);
  g_assert_true (rpe_explorer_state_set_modules (state, &p, "test", NULL, NULL, &error));
  rpe_spe_params_clear (&p);
  g_object_set (state, "color-scale", RPE_HEATMAP_TRANSFORM_PERCENTILE, "color-percentile", 95.5,
                "color-range", RPE_COLOR_RANGE_PER_PANEL, NULL);
  session = rpe_session_new_from_state (state);
  g_free (session->view);
  session->view = g_strdup ("teaching");
  data = rpe_session_to_data (session, &length, &error);
  g_assert_no_error (error);
  loaded = rpe_session_load_data (data, length, NULL, &error);
  g_assert_no_error (error);
  rpe_session_apply (loaded, back);
  g_object_get (back, "color-scale", &scale, "color-range", &range, "color-percentile", &pct, NULL);
  g_assert_cmpuint (scale, ==, RPE_HEATMAP_TRANSFORM_PERCENTILE);
  g_assert_cmpuint (range, ==, RPE_COLOR_RANGE_PER_PANEL);
  g_assert_cmpfloat (pct, ==, 95.5);
  argv = rpe_session_export_argv (loaded, FALSE, &error);
  g_assert_no_error (error);
  joined = g_strjoinv (" ", argv);
  g_test_message ("rpe export %s", joined);
  g_assert_nonnull (strstr (joined, "--color-scale percentile --percentile 95.5"));
  g_assert_nonnull (strstr (joined, "--per-cell-scale"));
}

int
main (int    argc,
      char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  g_test_add_func ("/ui/scale/attention-pixels", test_attention_pixels);
  g_test_add_func ("/ui/scale/shared-per-panel", test_shared_per_panel);
  g_test_add_func ("/ui/scale/row-plot", test_row_plot);
  g_test_add_func ("/ui/scale/teaching-row", test_teaching_row);
  g_test_add_func ("/ui/scale/fits-screen", test_fits_screen);
  g_test_add_func ("/ui/scale/templates-grid-cells", test_templates_grid_cells);
  g_test_add_func ("/ui/scale/session", test_session);
  return g_test_run ();
}

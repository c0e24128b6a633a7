/* test-ui-export.c: exporting the explorer's views under Xvfb.
 *
 * For every view: the figure holds exactly the numbers the view shows; the
 * window's PNG equals the same figure rendered with rpe_figure_render into an
 * image surface; SVG parses (GMarkup) with the figure's size in points; the
 * PDF page size (pdfinfo, when installed) is the figure's.  For the heatmap
 * views the window's PNG equals what the headless `rpe export` ($RPE_CLI)
 * writes for the same parameters ("identical between the window and a
 * headless server").  A failed or cancelled export leaves no file (and no
 * temporary) and keeps an existing one.  The Export dialog exports on a
 * worker, cancels, and reports errors.
 *
 * With RPE_SCREENSHOT_DIR set, /ui/export/dialog saves the dialog there. */
#include "config.h"

#include <math.h>
#include <string.h>

#include <unistd.h>

#include <adwaita.h>
#include <glib/gstdio.h>

#include "rpe-error.h"
#include "rpe-test-utils.h"
#include "rpe-heatmap-view.h"
#include "rpe-window-test.h"
#include "rpe-attention-view.h"
#include "rpe-ticks.h"
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

#define TEST_N    48

/* ---------------------------------------------------------------- helpers */

static RpeWindow *
open_window (void)
{
  RpeWindow *window = rpe_window_new (NULL);

  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  g_object_set (rpe_window_get_state (window), "length", TEST_N, NULL);
  gtk_window_present (GTK_WINDOW (window));
  return window;
}

static void
show_view (RpeWindow     *window,
           RpeWindowView  view)
{
  rpe_window_set_view (window, view);
  rpe_test_settle (window, TRUE);
}

/* Number of entries in dir (to find left-over temporaries). */
static guint
count_entries (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  guint n = 0;

  g_assert_nonnull (d);
  while (g_dir_read_name (d) != NULL)
    n++;
  g_dir_close (d);
  return n;
}

typedef struct
{
  double fraction;    /* pixels that differ */
  int    max_delta;   /* largest channel difference */
  int    x0, y0, x1, y1;  /* bounding box of the differences */
} PixelDiff;

static PixelDiff
compare_surfaces (cairo_surface_t *a,
                  cairo_surface_t *b)
{
  int w = cairo_image_surface_get_width (a), h = cairo_image_surface_get_height (a);
  int sa = cairo_image_surface_get_stride (a), sb = cairo_image_surface_get_stride (b);
  const guint8 *da, *db;
  PixelDiff diff = { 0.0, 0, G_MAXINT, G_MAXINT, -1, -1 };
  gsize differ = 0;

  cairo_surface_flush (a);
  cairo_surface_flush (b);
  da = cairo_image_surface_get_data (a);
  db = cairo_image_surface_get_data (b);
  g_assert_cmpint (w, ==, cairo_image_surface_get_width (b));
  g_assert_cmpint (h, ==, cairo_image_surface_get_height (b));
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        const guint8 *pa = da + y * sa + 4 * x, *pb = db + y * sb + 4 * x;
        gboolean same = TRUE;

        for (int c = 0; c < 4; c++)
          {
            int delta = abs ((int) pa[c] - (int) pb[c]);

            diff.max_delta = MAX (diff.max_delta, delta);
            same = same && delta == 0;
          }
        differ += !same;
        if (!same)
          {
            diff.x0 = MIN (diff.x0, x);
            diff.y0 = MIN (diff.y0, y);
            diff.x1 = MAX (diff.x1, x);
            diff.y1 = MAX (diff.y1, y);
          }
      }
  diff.fraction = (double) differ / ((double) w * h);
  return diff;
}

static cairo_surface_t *
load_png (const char *path)
{
  cairo_surface_t *s = cairo_image_surface_create_from_png (path);

  g_assert_cmpint (cairo_surface_status (s), ==, CAIRO_STATUS_SUCCESS);
  return s;
}

/* The figure drawn by rpe_figure_render at the default PNG size (independent of
 * the file writer: only the layout call is shared). */
static cairo_surface_t *
render_figure (const RpeFigure *fig)
{
  double wpt, hpt;
  int wpx, hpx;
  cairo_surface_t *s;
  cairo_t *cr;
  g_autoptr (GError) error = NULL;

  g_assert_true (rpe_export_resolve_size (fig, RPE_EXPORT_PNG, NULL, &wpt, &hpt, &wpx, &hpx, &error));
  g_assert_no_error (error);
  /* default: 150 dpi */
  g_assert_cmpint (wpx, ==, (int) lround (wpt * 150.0 / 72.0));
  s = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, wpx, hpx);
  cr = cairo_create (s);
  cairo_scale (cr, (double) wpx / wpt, (double) hpx / hpt);
  g_assert_true (rpe_figure_render (cr, fig, wpt, hpt));
  cairo_destroy (cr);
  return s;
}

/* ---------------------------------------- the figure holds what the view shows */

static void
assert_floats_equal (const float *a,
                     const float *b,
                     gsize        n)
{
  g_assert_nonnull (a);
  g_assert_nonnull (b);
  g_assert_cmpint (memcmp (a, b, n * sizeof (float)), ==, 0);
}

static void
check_figure_matches_view (RpeWindow       *window,
                           RpeWindowView    view,
                           RpeFigureBundle *bundle)
{
  GtkWidget *w = rpe_window_get_view_widget (window, view);
  const RpeFigure *fig = &bundle->fig;
  gsize rows, cols;

  switch (view)
    {
    case RPE_WINDOW_VIEW_TEMPLATES:
      {
        RpeTemplates *t = rpe_templates_view_get_templates (RPE_TEMPLATES_VIEW (w));

        g_assert_cmpint (fig->kind, ==, RPE_FIGURE_GRID);
        g_assert_cmpuint (fig->grid.n_cells, ==, t->n_features);
        for (gsize d = 0; d < t->n_features; d++)
          {
            const float *shown = templates_cell_data (RPE_TEMPLATES_VIEW (w), d, &rows, &cols);

            g_assert_cmpuint (fig->grid.cells[d].rows, ==, rows);
            g_assert_cmpuint (fig->grid.cells[d].cols, ==, cols);
            assert_floats_equal (fig->grid.cells[d].values, shown, rows * cols);
          }
        g_assert_true (fig->grid.shared_scale);
      }
      break;

    case RPE_WINDOW_VIEW_ATTENTION:
      {
        RpeAttentionImage *img = rpe_attention_view_get_image (RPE_ATTENTION_VIEW (w));

        g_assert_cmpint (fig->kind, ==, RPE_FIGURE_HEATMAP);
        g_assert_cmpuint (fig->heatmap.rows, ==, img->rows);
        g_assert_cmpuint (fig->heatmap.cols, ==, img->cols);
        /* at this size one cell is one pixel: the whole N x N map */
        g_assert_cmpuint (img->rows, ==, TEST_N);
        assert_floats_equal (fig->heatmap.values, img->values, img->rows * img->cols);
        g_assert_true (bundle->has_attention);
      }
      break;

    case RPE_WINDOW_VIEW_TEACHING:
      g_assert_cmpint (fig->kind, ==, RPE_FIGURE_COMPARE);
      g_assert_cmpuint (fig->n_panels, ==, 3);
      for (guint i = 0; i < 3; i++)
        {
          const float *shown = rpe_heatmap_view_get_data (rpe_teaching_view_get_heatmap (RPE_TEACHING_VIEW (w), i),
                                                          &rows, &cols);

          g_assert_cmpuint (fig->panels[i].rows, ==, rows);
          assert_floats_equal (fig->panels[i].values, shown, rows * cols);
        }
      break;

    case RPE_WINDOW_VIEW_CURVES:
      {
        RpeCurves *c = rpe_curves_page_get_result (RPE_CURVES_PAGE (w));

        g_assert_cmpint (fig->kind, ==, RPE_FIGURE_CURVES);
        g_assert_cmpuint (fig->n_plots, ==, 4);
        g_assert_true (fig->table == c->extrapolation);
        /* the error plot: R against the mean column of the result, log-log */
        g_assert_true (fig->plots[1].x_log && fig->plots[1].y_log);
        g_assert_cmpuint (fig->plots[1].n_series, ==, 1);
        g_assert_cmpuint (fig->plots[1].series[0].n, ==, rpe_curve_table_n_rows (c->error));
        for (gsize i = 0; i < fig->plots[1].series[0].n; i++)
          g_assert_cmpfloat (fig->plots[1].series[0].y[i], ==,
                             rpe_curve_table_column_const (c->error, (gsize) rpe_curve_table_find (c->error, "mean"))[i]);
        for (gsize p = 0; p < 4; p++)
          g_assert_cmpuint (fig->plots[p].n_series, >, 0);
      }
      break;

    case RPE_WINDOW_VIEW_OUTPUTS:
      {
        const RpeOutputs *o = &rpe_outputs_view_get_result (RPE_OUTPUTS_VIEW (w))->outputs;

        /* exact | SPE | difference over (channel, position), then the two line plots */
        g_assert_cmpint (fig->kind, ==, RPE_FIGURE_COMPARE);
        g_assert_cmpuint (fig->n_panels, ==, 3);
        g_assert_cmpuint (fig->n_plots, ==, 2);
        g_assert_nonnull (fig->table);
        for (gsize m = 0; m < o->n; m++)
          for (gsize c = 0; c < o->dv; c++)
            {
              g_assert_cmpfloat (fig->panels[0].values[c * o->n + m], ==, o->reference[m * o->dv + c]);
              g_assert_cmpfloat (fig->panels[1].values[c * o->n + m], ==, o->estimate[m * o->dv + c]);
            }
        g_assert_true (fig->plots[1].series[0].y == o->error_mean);
      }
      break;

    default:
      g_assert_not_reached ();
    }
}

/* --------------------------------------------------------- file checks */

typedef struct
{
  gboolean root_svg;
  char    *width;
  char    *height;
} SvgInfo;

static void
svg_start (GMarkupParseContext *context,
           const char          *element,
           const char         **names,
           const char         **values,
           gpointer             user_data,
           GError             **error)
{
  SvgInfo *info = user_data;

  if (g_markup_parse_context_get_element_stack (context)->next != NULL)
    return;
  info->root_svg = g_str_equal (element, "svg");
  for (guint i = 0; names[i] != NULL; i++)
    {
      if (g_str_equal (names[i], "width"))
        info->width = g_strdup (values[i]);
      else if (g_str_equal (names[i], "height"))
        info->height = g_strdup (values[i]);
    }
}

static void
check_svg (const char *path,
           double      wpt,
           double      hpt)
{
  g_autofree char *text = NULL;
  gsize length;
  GMarkupParser parser = { svg_start, NULL, NULL, NULL, NULL };
  SvgInfo info = { FALSE, NULL, NULL };
  GMarkupParseContext *context;
  g_autoptr (GError) error = NULL;

  g_assert_true (g_file_get_contents (path, &text, &length, NULL));
  context = g_markup_parse_context_new (&parser, 0, &info, NULL);
  g_assert_true (g_markup_parse_context_parse (context, text, (gssize) length, &error));
  g_assert_no_error (error);
  g_assert_true (g_markup_parse_context_end_parse (context, &error));
  g_markup_parse_context_free (context);
  g_assert_true (info.root_svg);
  g_assert_nonnull (info.width);
  g_assert_nonnull (info.height);
  g_assert_true (g_str_has_suffix (info.width, "pt"));
  g_assert_cmpfloat_with_epsilon (g_ascii_strtod (info.width, NULL), wpt, 0.5);
  g_assert_cmpfloat_with_epsilon (g_ascii_strtod (info.height, NULL), hpt, 0.5);
  g_free (info.width);
  g_free (info.height);
}

static void
check_pdf (const char *path,
           double      wpt,
           double      hpt)
{
  g_autofree char *pdfinfo = g_find_program_in_path ("pdfinfo");
  g_autofree char *out = NULL;
  const char *argv[] = { NULL, path, NULL };
  const char *line;
  int status = 0;
  double w = 0, h = 0;
  g_autofree char *head = NULL;

  g_assert_true (g_file_get_contents (path, &head, NULL, NULL));
  g_assert_true (g_str_has_prefix (head, "%PDF-"));
  if (pdfinfo == NULL)
    {
      g_test_message ("pdfinfo not installed: page size not checked");
      return;
    }
  argv[0] = pdfinfo;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out, NULL,
                               &status, NULL));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  line = strstr (out, "Page size:");
  g_assert_nonnull (line);
  g_assert_cmpint (sscanf (line, "Page size: %lf x %lf", &w, &h), ==, 2);
  g_assert_cmpfloat_with_epsilon (w, wpt, 0.5);
  g_assert_cmpfloat_with_epsilon (h, hpt, 0.5);
}

/* ------------------------------------------------------------------ tests */

static void
test_views (void)
{
  static const char *names[RPE_WINDOW_N_VIEWS] = { "templates", "attention", "curves", "teaching", "outputs" };
  RpeWindow *window = open_window ();
  g_autoptr (GError) error = NULL;

  /* nothing to export before the first result */
  g_assert_null (rpe_window_build_figure (window, RPE_WINDOW_VIEW_CURVES));

  for (guint v = 0; v < RPE_WINDOW_N_VIEWS; v++)
    {
      g_autoptr (RpeFigureBundle) bundle = NULL;
      g_autofree char *png = NULL, *svg = NULL, *pdf = NULL;
      g_autofree char *base = NULL;
      cairo_surface_t *file, *ref;
      PixelDiff diff;
      double wpt, hpt;

      show_view (window, v);
      bundle = rpe_window_build_figure (window, v);
      g_assert_nonnull (bundle);
      check_figure_matches_view (window, v, bundle);
      base = g_strdup_printf ("%s/view-%s", rpe_test_tmpdir (), names[v]);
      png = g_strconcat (base, ".png", NULL);
      svg = g_strconcat (base, ".svg", NULL);
      pdf = g_strconcat (base, ".pdf", NULL);

      g_assert_true (rpe_window_export_view (window, png, &error));
      g_assert_no_error (error);
      g_assert_true (rpe_window_export_view (window, svg, &error));
      g_assert_no_error (error);
      g_assert_true (rpe_window_export_view (window, pdf, &error));
      g_assert_no_error (error);

      /* PNG == the figure rendered into an image surface */
      file = load_png (png);
      ref = render_figure (&bundle->fig);
      diff = compare_surfaces (file, ref);
      g_test_message ("%s: %d x %d px, %.4f%% pixels differ from rpe_figure_render (max delta %d)", names[v],
                      cairo_image_surface_get_width (file), cairo_image_surface_get_height (file),
                      100 * diff.fraction, diff.max_delta);
      g_assert_cmpfloat (diff.fraction, ==, 0.0);
      cairo_surface_destroy (file);
      cairo_surface_destroy (ref);

      rpe_figure_default_size (&bundle->fig, &wpt, &hpt);
      check_svg (svg, wpt, hpt);
      check_pdf (pdf, wpt, hpt);
    }
  /* CSV for the curves, .npy for heatmaps; not the other way round */
  {
    g_autofree char *csv = rpe_test_tmp_path ("curves.csv");
    g_autofree char *npy = rpe_test_tmp_path ("attention.npy");
    g_autofree char *text = NULL;

    show_view (window, RPE_WINDOW_VIEW_CURVES);
    g_assert_true (rpe_window_export_view (window, csv, &error));
    g_assert_no_error (error);
    g_assert_true (g_file_get_contents (csv, &text, NULL, NULL));
    g_assert_nonnull (strstr (text, "ape_distance"));
    g_assert_false (rpe_window_export_view (window, npy, &error));
    g_assert_nonnull (error);
    g_clear_error (&error);
    g_assert_false (g_file_test (npy, G_FILE_TEST_EXISTS));

    show_view (window, RPE_WINDOW_VIEW_ATTENTION);
    g_assert_true (rpe_window_export_view (window, npy, &error));
    g_assert_no_error (error);
    {
      g_autofree char *data = NULL;
      gsize length;

      /* header + N x N float32 */
      g_assert_true (g_file_get_contents (npy, &data, &length, NULL));
      g_assert_true (memcmp (data, "\x93NUMPY", 6) == 0);
      g_assert_cmpuint (length, >, (gsize) TEST_N * TEST_N * 4);
      g_assert_cmpint (memcmp (data + length - (gsize) TEST_N * TEST_N * 4,
                               rpe_attention_view_get_image (RPE_ATTENTION_VIEW (
                                 rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_ATTENTION)))->values,
                               (gsize) TEST_N * TEST_N * 4), ==, 0);
    }
  }
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The raw arrays of the window and the CLI: max |a - b| over the float32 payloads. */
static double
compare_npy (RpeWindow          *window,
             const char         *name,
             const char * const *args)
{
  g_autofree char *gui = g_strdup_printf ("%s/gui-%s.npy", rpe_test_tmpdir (), name);
  g_autofree char *cli = g_strdup_printf ("%s/cli-%s.npy", rpe_test_tmpdir (), name);
  g_autofree char *da = NULL, *db = NULL;
  gsize la, lb;
  g_autoptr (GError) error = NULL;
  double worst = 0.0;

  g_assert_true (rpe_window_export_view (window, gui, &error));
  g_assert_no_error (error);
  g_assert_cmpint (rpe_test_run_cli_export (NULL, args, cli), ==, 0);
  g_assert_true (g_file_get_contents (gui, &da, &la, NULL));
  g_assert_true (g_file_get_contents (cli, &db, &lb, NULL));
  g_assert_cmpuint (la, ==, lb);
  /* both headers are 64 or 128 bytes long (the .npy format pads them to 64) */
  for (gsize i = la - (la - 128) / 4 * 4; i + 4 <= la && la > 128; i += 4)
    {
      float fa, fb;

      memcpy (&fa, da + i, 4);
      memcpy (&fb, db + i, 4);
      worst = fmax (worst, fabs ((double) fa - fb));
    }
  return worst;
}

static void
compare_with_cli (RpeWindow          *window,
                  const char         *name,
                  const char * const *args)
{
  g_autofree char *gui = g_strdup_printf ("%s/gui-%s.png", rpe_test_tmpdir (), name);
  g_autofree char *cli = g_strdup_printf ("%s/cli-%s.png", rpe_test_tmpdir (), name);
  g_autoptr (GError) error = NULL;
  cairo_surface_t *a, *b;
  PixelDiff diff;

  g_assert_true (rpe_window_export_view (window, gui, &error));
  g_assert_no_error (error);
  g_assert_cmpint (rpe_test_run_cli_export (NULL, args, cli), ==, 0);
  a = load_png (gui);
  b = load_png (cli);
  diff = compare_surfaces (a, b);
  g_test_message ("%s: window vs `rpe export`: %.4f%% of %d x %d pixels differ, max channel delta %d"
                  " (in x %d..%d, y %d..%d)", name,
                  100 * diff.fraction, cairo_image_surface_get_width (a), cairo_image_surface_get_height (a),
                  diff.max_delta, diff.x0, diff.x1, diff.y0, diff.y1);
  if (g_getenv ("RPE_SCREENSHOT_DIR") != NULL)
    {
      g_autofree char *ca = g_strdup_printf ("%s/gui-%s.png", g_getenv ("RPE_SCREENSHOT_DIR"), name);
      g_autofree char *cb = g_strdup_printf ("%s/cli-%s.png", g_getenv ("RPE_SCREENSHOT_DIR"), name);

      g_autofree char *cd = g_strdup_printf ("%s/diff-%s.png", g_getenv ("RPE_SCREENSHOT_DIR"), name);
      cairo_surface_t *d = cairo_image_surface_create (CAIRO_FORMAT_RGB24, cairo_image_surface_get_width (a),
                                                       cairo_image_surface_get_height (a));
      const guint8 *pa = cairo_image_surface_get_data (a), *pb = cairo_image_surface_get_data (b);
      guint8 *pd = cairo_image_surface_get_data (d);
      int stride = cairo_image_surface_get_stride (a);

      /* white where equal, black where the two differ */
      for (int i = 0; i < stride * cairo_image_surface_get_height (a); i += 4)
        *(guint32 *) (pd + i) = memcmp (pa + i, pb + i, 4) == 0 ? 0xffffffu : 0;
      cairo_surface_mark_dirty (d);
      cairo_surface_write_to_png (d, cd);
      cairo_surface_destroy (d);
      cairo_surface_write_to_png (a, ca);
      cairo_surface_write_to_png (b, cb);
    }
  /* The same figure of the same numbers: the arrays agree to float rounding (the
   * window's workers and the CLI may sum in another order), and the renderers fix
   * their font options (rpe_plot_use_figure_fonts), so the pictures are identical
   * but for the rare cell whose value rounding moves it into the next colour-map
   * entry (measured: 0 pixels differ on every view). */
  {
    double worst = compare_npy (window, name, args);

    g_test_message ("%s: window vs `rpe export` arrays: max |difference| %.3g", name, worst);
    g_assert_cmpfloat (worst, <=, 1e-5);
  }
  g_assert_cmpfloat (diff.fraction, <=, 1e-3);
  g_assert_cmpint (diff.max_delta, <=, (diff.fraction > 0 ? 40 : 0));
  cairo_surface_destroy (a);
  cairo_surface_destroy (b);
}

static void
test_cli (void)
{
  const char *cli = g_getenv ("RPE_CLI");
  RpeWindow *window;
  RpeExplorerState *state;
  RpeWindowView v;

  if (cli == NULL || !g_file_test (cli, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("RPE_CLI is not set");
      return;
    }
  window = open_window ();
  state = rpe_window_get_state (window);
  /* the window starts on the demo; gated off (the CLI: --no-gate), N_train 64 */
  g_assert_true (rpe_window_get_from_demo (window));
  g_object_set (state, "head", 1, "train-length", 32, NULL);

  v = RPE_WINDOW_VIEW_TEMPLATES;
  show_view (window, v);
  {
    const char *args[] = { "templates", "--checkpoint", "demo", "--method", "sine", "--no-gate", "--head", "1",
                           "--length", "48", "--train-length", "32", NULL };
    compare_with_cli (window, "templates", args);
  }
  rpe_templates_view_open_cell (RPE_TEMPLATES_VIEW (rpe_window_get_view_widget (window, v)), 3);
  {
    const char *args[] = { "template", "--checkpoint", "demo", "--method", "sine", "--no-gate", "--head", "1",
                           "--feature", "3", "--length", "48", "--train-length", "32", NULL };
    compare_with_cli (window, "template", args);
  }
  rpe_templates_view_open_cell (RPE_TEMPLATES_VIEW (rpe_window_get_view_widget (window, v)), -1);

  show_view (window, RPE_WINDOW_VIEW_ATTENTION);
  {
    const char *args[] = { "attention", "--checkpoint", "demo", "--method", "sine", "--no-gate", "--head", "1",
                           "--length", "48", "--realizations", "64", "--seed", "1", "--train-length", "32", NULL };
    compare_with_cli (window, "attention-spe", args);
  }
  g_object_set (state, "method", RPE_EXPLORER_METHOD_EXACT, "causal", TRUE, "spe-kind", RPE_SPE_CONV, NULL);
  rpe_test_settle (window, TRUE);
  {
    const char *args[] = { "attention", "--exact", "--causal", "--checkpoint", "demo", "--method", "conv",
                           "--no-gate", "--head", "1", "--length", "48", "--train-length", "32", NULL };
    compare_with_cli (window, "attention-exact", args);
  }
  g_object_set (state, "causal", FALSE, "spe-kind", RPE_SPE_SINE, "realizations", 32, "seed", 5, NULL);
  show_view (window, RPE_WINDOW_VIEW_TEACHING);
  {
    const char *args[] = { "spe-vs-rpe", "--checkpoint", "demo", "--method", "sine", "--no-gate", "--head", "1",
                           "--length", "48", "--realizations", "32", "--seed", "5", "--train-length", "32", NULL };
    compare_with_cli (window, "spe-vs-rpe", args);
  }
  /* the colour-scale control: the window's figure of a non-linear scale is the CLI's of
   * --color-scale (the view draws through the same figure) */
  g_object_set (state, "color-scale", RPE_HEATMAP_TRANSFORM_LOG, NULL);
  rpe_test_settle (window, TRUE);
  {
    const char *args[] = { "spe-vs-rpe", "--checkpoint", "demo", "--method", "sine", "--no-gate", "--head", "1",
                           "--length", "48", "--realizations", "32", "--seed", "5", "--train-length", "32",
                           "--color-scale", "log", NULL };
    compare_with_cli (window, "spe-vs-rpe-log", args);
  }
  g_object_set (state, "color-scale", RPE_HEATMAP_TRANSFORM_POWER, "color-gamma", 0.3, NULL);
  show_view (window, RPE_WINDOW_VIEW_ATTENTION);
  {
    const char *args[] = { "attention", "--exact", "--checkpoint", "demo", "--method", "sine", "--no-gate",
                           "--head", "1", "--length", "48", "--train-length", "32",
                           "--color-scale", "power", "--gamma", "0.3", NULL };
    compare_with_cli (window, "attention-power", args);
  }
  g_object_set (state, "color-scale", RPE_HEATMAP_TRANSFORM_PERCENTILE, "color-percentile", 95.0, NULL);
  show_view (window, RPE_WINDOW_VIEW_TEMPLATES);
  {
    const char *args[] = { "templates", "--checkpoint", "demo", "--method", "sine", "--no-gate", "--head", "1",
                           "--length", "48", "--train-length", "32", "--color-scale", "percentile",
                           "--percentile", "95", NULL };
    compare_with_cli (window, "templates-percentile", args);
  }
  g_object_set (state, "color-range", RPE_COLOR_RANGE_PER_PANEL, NULL);
  rpe_test_settle (window, TRUE);
  {
    const char *args[] = { "templates", "--checkpoint", "demo", "--method", "sine", "--no-gate", "--head", "1",
                           "--length", "48", "--train-length", "32", "--color-scale", "percentile",
                           "--percentile", "95", "--per-cell-scale", NULL };
    compare_with_cli (window, "templates-percentile-per-cell", args);
  }
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_failures (void)
{
  RpeWindow *window = open_window ();
  g_autoptr (RpeFigureBundle) bundle = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = rpe_test_tmp_path ("failures");
  g_autofree char *existing = NULL, *fresh = NULL, *missing = NULL, *before = NULL, *after = NULL;
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  gsize len_before, len_after;
  guint entries;

  show_view (window, RPE_WINDOW_VIEW_TEMPLATES);
  bundle = rpe_window_build_figure (window, RPE_WINDOW_VIEW_TEMPLATES);
  g_assert_nonnull (bundle);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  existing = g_build_filename (dir, "existing.png", NULL);
  fresh = g_build_filename (dir, "fresh.png", NULL);
  missing = g_build_filename (dir, "no-such-dir", "x.png", NULL);
  g_assert_true (g_file_set_contents (existing, "keep me", -1, NULL));
  entries = count_entries (dir);

  /* an unwritable path: the directory does not exist */
  g_assert_false (rpe_window_export_view (window, missing, &error));
  g_assert_error (error, RPE_ERROR, RPE_ERROR_IO);
  g_test_message ("unwritable: %s", error->message);
  g_clear_error (&error);

  /* a read-only directory keeps its file (root bypasses the permissions) */
  if (geteuid () != 0)
    {
      g_assert_cmpint (g_chmod (dir, 0555), ==, 0);
      g_assert_false (rpe_window_export_view (window, existing, &error));
      g_assert_nonnull (error);
      g_test_message ("read-only directory: %s", error->message);
      g_clear_error (&error);
      g_assert_cmpint (g_chmod (dir, 0755), ==, 0);
    }
  else
    g_test_message ("running as root: the read-only directory case is not tested");

  /* a failed export (CSV of a heatmap view cannot be written) keeps the existing file */
  {
    g_autofree char *csv = g_build_filename (dir, "existing.csv", NULL);

    g_assert_true (g_file_set_contents (csv, "keep me too", -1, NULL));
    g_assert_false (rpe_window_export_view (window, csv, &error));
    g_assert_nonnull (error);
    g_clear_error (&error);
    g_assert_true (g_file_get_contents (csv, &before, &len_before, NULL));
    g_assert_cmpstr (before, ==, "keep me too");
    g_clear_pointer (&before, g_free);
    g_unlink (csv);
  }

  /* cancelled: no file, the existing one untouched, no temporary left */
  g_cancellable_cancel (cancellable);
  g_assert_false (rpe_export_bundle (bundle, NULL, RPE_EXPORT_PNG, NULL, fresh, cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);
  g_assert_false (g_file_test (fresh, G_FILE_TEST_EXISTS));
  g_assert_false (rpe_export_bundle (bundle, NULL, RPE_EXPORT_PDF, NULL, existing, cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);
  g_assert_true (g_file_get_contents (existing, &before, &len_before, NULL));
  g_assert_cmpstr (before, ==, "keep me");
  g_assert_cmpuint (count_entries (dir), ==, entries);

  /* and a successful export replaces it */
  g_assert_true (rpe_window_export_view (window, existing, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (existing, &after, &len_after, NULL));
  g_assert_cmpuint (len_after, >, 1000);
  g_assert_true (memcmp (after, "\x89PNG", 4) == 0);
  g_assert_cmpuint (count_entries (dir), ==, entries);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* ----------------------------------------------------------------- dialog */

static gboolean
dialog_done (gpointer data)
{
  return !rpe_export_dialog_is_exporting (RPE_EXPORT_DIALOG (data));
}

static gboolean
dialog_closed (gpointer data)
{
  return rpe_window_get_export_dialog (RPE_WINDOW (data)) == NULL;
}

/* Distinct colours in the preview: a rendered heatmap has many. */
static guint
count_colours (cairo_surface_t *s)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (NULL, NULL);
  int w = cairo_image_surface_get_width (s), h = cairo_image_surface_get_height (s);
  int stride = cairo_image_surface_get_stride (s);
  const guint8 *data = cairo_image_surface_get_data (s);

  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      g_hash_table_add (seen, GUINT_TO_POINTER (*(const guint32 *) (data + y * stride + 4 * x) & 0xffffff));
  return g_hash_table_size (seen);
}

static void
test_dialog (void)
{
  RpeWindow *window = open_window ();
  RpeExportDialog *dialog;
  g_autofree char *path = rpe_test_tmp_path ("dialog-templates.svg");
  g_autofree char *big = rpe_test_tmp_path ("dialog-big.png");
  g_autofree char *bad = rpe_test_tmp_path ("no-such-dir/x.pdf");
  const char *shots = g_getenv ("RPE_SCREENSHOT_DIR");
  RpeExportOptions options;
  RpeExportSize size;
  cairo_surface_t *shot;

  show_view (window, RPE_WINDOW_VIEW_TEMPLATES);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.export", NULL));
  dialog = rpe_window_get_export_dialog (window);
  g_assert_nonnull (dialog);
  rpe_test_wait_frames (GTK_WIDGET (dialog), 2);
  g_assert_true (gtk_widget_get_mapped (GTK_WIDGET (dialog)));
  /* default options: the view's figure, its title prefilled, PNG at 150 dpi */
  rpe_export_dialog_get_options (dialog, &options, &size);
  {
    g_autoptr (RpeFigureBundle) b = rpe_window_build_figure (window, RPE_WINDOW_VIEW_TEMPLATES);

    g_assert_cmpstr (options.title, ==, b->fig.title);
  }
  g_assert_cmpfloat (size.dpi, ==, 150.0);
  g_assert_cmpint (rpe_export_dialog_get_format (dialog), ==, RPE_EXPORT_PNG);
  g_assert_true (g_str_has_suffix (rpe_export_dialog_get_path (dialog), "/templates-h0.png"));
  shot = rpe_test_render_widget (rpe_export_dialog_get_preview (dialog));
  g_test_message ("preview: %u colours", count_colours (shot));
  g_assert_cmpuint (count_colours (shot), >, 50);
  cairo_surface_destroy (shot);
  if (shots != NULL)
    {
      g_autofree char *file = g_build_filename (shots, "export-dialog.png", NULL);

      shot = rpe_test_render_widget (GTK_WIDGET (dialog));
      g_assert_cmpint (cairo_surface_write_to_png (shot, file), ==, CAIRO_STATUS_SUCCESS);
      cairo_surface_destroy (shot);
    }

  /* an error is shown with the reason, the dialog stays */
  rpe_export_dialog_set_path (dialog, bad);
  g_assert_cmpint (rpe_export_dialog_get_format (dialog), ==, RPE_EXPORT_PDF);
  rpe_export_dialog_start (dialog);
  g_assert_true (rpe_export_dialog_is_exporting (dialog));
  rpe_test_iterate_until (dialog_done, dialog);
  g_assert_nonnull (rpe_export_dialog_get_error (dialog));
  g_test_message ("dialog error: %s", rpe_export_dialog_get_error (dialog));
  g_assert_nonnull (strstr (rpe_export_dialog_get_error (dialog), "Could not export"));
  g_assert_false (g_file_test (bad, G_FILE_TEST_EXISTS));

  /* a large PNG cancelled at once: no file */
  rpe_export_dialog_set_path (dialog, big);
  g_assert_cmpint (rpe_export_dialog_get_format (dialog), ==, RPE_EXPORT_PNG);
  size.width = 4000;
  size.height = 3000;
  rpe_export_dialog_set_size (dialog, &size);
  rpe_export_dialog_start (dialog);
  rpe_export_dialog_cancel_export (dialog);
  rpe_test_iterate_until (dialog_done, dialog);
  g_assert_false (g_file_test (big, G_FILE_TEST_EXISTS));
  g_assert_nonnull (strstr (rpe_export_dialog_get_error (dialog), "cancelled"));

  /* success: the file is written, the dialog closes with a toast */
  rpe_export_dialog_set_path (dialog, path);
  g_assert_cmpint (rpe_export_dialog_get_format (dialog), ==, RPE_EXPORT_SVG);
  rpe_export_dialog_start (dialog);
  rpe_test_iterate_until (dialog_closed, window);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  /* switching from PNG to SVG kept the physical size: 4000 x 3000 px at 150 dpi */
  check_svg (path, 4000 * 72.0 / 150.0, 3000 * 72.0 / 150.0);

  /* the dialog on the other views (screenshots) */
  for (guint v = RPE_WINDOW_VIEW_ATTENTION; shots != NULL && v < RPE_WINDOW_N_VIEWS; v++)
    {
      g_autofree char *file = g_strdup_printf ("%s/export-dialog-%u.png", shots, v);

      show_view (window, v);
      g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.export", NULL));
      dialog = rpe_window_get_export_dialog (window);
      g_assert_nonnull (dialog);
      rpe_test_wait_frames (GTK_WIDGET (dialog), 2);
      shot = rpe_test_render_widget (GTK_WIDGET (dialog));
      g_assert_cmpint (cairo_surface_write_to_png (shot, file), ==, CAIRO_STATUS_SUCCESS);
      cairo_surface_destroy (shot);
      gtk_window_destroy (GTK_WINDOW (dialog));
    }
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The dialog's presets: the page size of the PDF (pdfinfo) is the preset's, the
 * text size goes with it, for the Outputs view too; the Curves page's panels export one
 * at a time. */
static double
pdf_page_side (const char *path,
               int         which);

static double
pdf_page_width (const char *path)
{
  return pdf_page_side (path, 1);
}

/* Side `which` (1 width, 2 height) of the PDF's page in points; -1 without pdfinfo. */
static double
pdf_page_side (const char *path,
               int         which)
{
  g_autofree char *tool = g_find_program_in_path ("pdfinfo");
  g_autofree char *out = NULL;
  g_autoptr (GRegex) re = g_regex_new ("Page size:\\s+([0-9.]+) x ([0-9.]+) pts", 0, 0, NULL);
  g_autoptr (GMatchInfo) match = NULL;
  g_autofree char *w = NULL;
  int status;

  if (tool == NULL)
    return -1;
  g_assert_true (g_spawn_sync (NULL, (char *[]) { tool, (char *) path, NULL }, NULL, G_SPAWN_STDERR_TO_DEV_NULL,
                               NULL, NULL, &out, NULL, &status, NULL));
  g_assert_true (g_regex_match (re, out, 0, &match));
  w = g_match_info_fetch (match, which);
  return g_ascii_strtod (w, NULL);
}

static void
test_dialog_preset (void)
{
  RpeWindow *window = open_window ();
  RpeExportDialog *dialog;
  g_autofree char *column = rpe_test_tmp_path ("dialog-column.pdf");
  g_autofree char *panel = rpe_test_tmp_path ("dialog-panel.pdf");
  RpeExportOptions options;
  RpeExportSize size;

  show_view (window, RPE_WINDOW_VIEW_TEMPLATES);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.export", NULL));
  dialog = rpe_window_get_export_dialog (window);
  rpe_export_dialog_set_path (dialog, column);
  g_assert_cmpint (rpe_export_dialog_get_format (dialog), ==, RPE_EXPORT_PDF);
  rpe_export_dialog_set_preset (dialog, RPE_EXPORT_PRESET_COLUMN);
  rpe_export_dialog_get_options (dialog, &options, &size);
  g_assert_cmpfloat_with_epsilon (size.width, 234.0, 1e-6);
  g_assert_cmpfloat (options.text_size, ==, 8.0);
  rpe_export_dialog_start (dialog);
  rpe_test_iterate_until (dialog_closed, window);
  g_assert_true (g_file_test (column, G_FILE_TEST_EXISTS));
  if (pdf_page_width (column) >= 0)
    g_assert_cmpfloat (fabs (pdf_page_width (column) - 234.0), <, 0.01);

  /* the Curves page: one panel alone */
  show_view (window, RPE_WINDOW_VIEW_CURVES);
  {
    g_autoptr (RpeFigureBundle) all = rpe_window_build_figure (window, RPE_WINDOW_VIEW_CURVES);
    RpeExportOptions one;
    g_autoptr (RpeFigureBundle) b = NULL;

    g_assert_nonnull (all);
      {
        g_assert_cmpuint (all->fig.n_plots, ==, 4);
        rpe_export_options_init (&one);
        one.panel = 2;
        b = rpe_figure_bundle_with_options (all, &one);
        g_assert_cmpuint (b->fig.n_plots, ==, 1);
        g_assert_true (b->fig.plots[0].series == all->fig.plots[1].series);
        g_assert_true (rpe_export_bundle (all, &one, RPE_EXPORT_PDF, NULL, panel, NULL, NULL));
        g_assert_true (g_file_test (panel, G_FILE_TEST_EXISTS));
      }
  }

  /* the Outputs view at each preset: the page sizes of `rpe export outputs --preset`
   * (tests/test-cli-outputs.c: 234 x 505, 486 x 351, 959.976 x 540 pt), its text size */
  show_view (window, RPE_WINDOW_VIEW_OUTPUTS);
  {
    static const struct { RpeExportPreset preset; double w, h, text; } presets[] = {
      { RPE_EXPORT_PRESET_COLUMN, 234.0, 505.0, 8.0 },
      { RPE_EXPORT_PRESET_PAGE, 486.0, 351.0, 9.0 },
      { RPE_EXPORT_PRESET_SLIDE, 959.976, 540.0, 20.0 },
    };

    for (guint i = 0; i < G_N_ELEMENTS (presets); i++)
      {
        g_autofree char *name = g_strdup_printf ("dialog-outputs-%s.pdf", rpe_export_preset_name (presets[i].preset));
        g_autofree char *path = rpe_test_tmp_path (name);

        g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.export", NULL));
        dialog = rpe_window_get_export_dialog (window);
        g_assert_nonnull (dialog);
        rpe_export_dialog_set_path (dialog, path);
        g_assert_cmpint (rpe_export_dialog_get_format (dialog), ==, RPE_EXPORT_PDF);
        rpe_export_dialog_set_preset (dialog, presets[i].preset);
        rpe_export_dialog_get_options (dialog, &options, &size);
        g_assert_cmpfloat (options.text_size, ==, presets[i].text);
        rpe_export_dialog_start (dialog);
        rpe_test_iterate_until (dialog_closed, window);
        g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
        if (pdf_page_width (path) >= 0)
          {
            g_test_message ("Outputs, %s: %g x %g pt", rpe_export_preset_name (presets[i].preset),
                            pdf_page_side (path, 1), pdf_page_side (path, 2));
            g_assert_cmpfloat (fabs (pdf_page_side (path, 1) - presets[i].w), <, 0.01);
            g_assert_cmpfloat (fabs (pdf_page_side (path, 2) - presets[i].h), <, 0.01);
          }
      }
  }
  gtk_window_destroy (GTK_WINDOW (window));
}

/* F11 presentation mode: the window asks for full screen, hides the sidebar, marks
 * itself for large text (the plots' text grows: measured on the heatmap's render
 * data and on the teaching view's error curve, which grows taller too), and F11 again
 * restores the sidebar as it was; the exported figure does not change (it is the
 * publication figure, not the screen). */
static void
test_presentation (void)
{
  RpeWindow *window = open_window ();
  RpeHeatmapData data;
  g_autofree char *before = rpe_test_tmp_path ("presentation-before.png");
  g_autofree char *during = rpe_test_tmp_path ("presentation-during.png");
  g_autofree char *a = NULL, *b = NULL;
  gsize la, lb;
  GtkWidget *heatmap = NULL;
  RpeTeachingView *teaching;
  RpeCurveView *curve;
  RpeCurvePlot plot;
  int curve_h = 0;
  gboolean sidebar;

  show_view (window, RPE_WINDOW_VIEW_TEACHING);
  sidebar = rpe_window_get_sidebar_visible (window);
  g_assert_true (rpe_window_export_view (window, before, NULL));
  /* a heatmap of the teaching view */
  for (GtkWidget *w = gtk_widget_get_first_child (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_TEACHING));
       w != NULL && heatmap == NULL;)
    {
      if (RPE_IS_HEATMAP_VIEW (w))
        heatmap = w;
      else if (gtk_widget_get_first_child (w) != NULL)
        w = gtk_widget_get_first_child (w);
      else
        {
          while (w != NULL && gtk_widget_get_next_sibling (w) == NULL)
            w = gtk_widget_get_parent (w);
          w = w != NULL ? gtk_widget_get_next_sibling (w) : NULL;
        }
    }
  g_assert_nonnull (heatmap);
  rpe_heatmap_view_get_render_data (RPE_HEATMAP_VIEW (heatmap), &data);
  g_assert_cmpfloat (data.font_scale, ==, 0.0);
  /* the error curve below the maps: an RpeCurveView, its text and height grow with the rest */
  teaching = RPE_TEACHING_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_TEACHING));
  curve = rpe_teaching_view_get_plot (teaching);
  rpe_curve_view_get_plot (curve, &plot);
  g_assert_cmpfloat (plot.font_scale, ==, 0.0);
  g_assert_cmpuint (plot.n_series, >, 0);
  gtk_widget_measure (GTK_WIDGET (curve), GTK_ORIENTATION_VERTICAL, -1, &curve_h, NULL, NULL, NULL);

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.presentation", NULL));
  g_assert_true (gtk_widget_has_css_class (GTK_WIDGET (window), "presentation"));
  g_assert_false (rpe_window_get_sidebar_visible (window));
  rpe_heatmap_view_get_render_data (RPE_HEATMAP_VIEW (heatmap), &data);
  g_assert_cmpfloat (data.font_scale, >, 1.4);
  rpe_curve_view_get_plot (curve, &plot);
  g_assert_cmpfloat (plot.font_scale, ==, data.font_scale);
  {
    int h;

    /* once the window has restyled and laid it out */
    rpe_test_wait_frames (GTK_WIDGET (window), 2);
    gtk_widget_measure (GTK_WIDGET (curve), GTK_ORIENTATION_VERTICAL, -1, &h, NULL, NULL, NULL);
    g_test_message ("teaching error curve: minimum height %d px, %d px in presentation mode (allocated %d)", curve_h, h,
                    gtk_widget_get_height (GTK_WIDGET (curve)));
    /* sqrt (1.6) = 1.26 */
    g_assert_cmpint (h, >=, (int) (curve_h * 1.25));
    g_assert_cmpint (gtk_widget_get_height (GTK_WIDGET (curve)), >=, (int) (curve_h * 1.25));
  }
  g_assert_true (rpe_window_export_view (window, during, NULL));
  g_assert_true (g_file_get_contents (before, &a, &la, NULL));
  g_assert_true (g_file_get_contents (during, &b, &lb, NULL));
  g_assert_cmpuint (la, ==, lb);
  g_assert_true (memcmp (a, b, la) == 0);

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.presentation", NULL));
  g_assert_false (gtk_widget_has_css_class (GTK_WIDGET (window), "presentation"));
  g_assert_cmpint (rpe_window_get_sidebar_visible (window), ==, sidebar);
  rpe_heatmap_view_get_render_data (RPE_HEATMAP_VIEW (heatmap), &data);
  g_assert_cmpfloat (data.font_scale, ==, 0.0);
  rpe_curve_view_get_plot (curve, &plot);
  g_assert_cmpfloat (plot.font_scale, ==, 0.0);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The numbers under a PDF figure's image (pdftotext -bbox): the words that read as numbers
 * with their tops between y0 and y1, left to right, into labels; NULL without poppler-utils. */
static GPtrArray *
pdf_numbers_between (const char *path,
                     double      y0,
                     double      y1)
{
  g_autofree char *tool = g_find_program_in_path ("pdftotext");
  g_autofree char *out = NULL;
  GPtrArray *labels;
  int status;

  if (tool == NULL)
    return NULL;
  g_assert_true (g_spawn_sync (NULL, (char *[]) { tool, "-bbox", (char *) path, "-", NULL }, NULL,
                               G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out, NULL, &status, NULL));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  labels = g_ptr_array_new_with_free_func (g_free);
  for (const char *p = out; (p = strstr (p, "<word ")) != NULL; p++)
    {
      const char *close = strchr (p, '>'), *end = strstr (p, "</word>");
      double top = g_ascii_strtod (strstr (p, "yMin=\"") + 6, NULL);
      g_autofree char *text = g_strndup (close + 1, end - close - 1);
      char *rest;

      g_ascii_strtod (text, &rest);
      if (*rest == '\0' && rest != text && top >= y0 && top <= y1)
        g_ptr_array_add (labels, g_steal_pointer (&text));
    }
  return labels;
}

/* The attention view's axes are the figure's: zoomed to [246, 772) the window numbers its axes
 * with the same absolute positions at the same places as the export of the view (the figure of
 * the same map, laid out so that its image has the canvas' side and text size), and the
 * exported PDF carries those numbers. */
static void
test_attention_ticks (void)
{
  RpeWindow *window = open_window ();
  RpeAttentionView *av;
  g_autoptr (RpeFigureBundle) bundle = NULL;
  g_autofree char *pdf = g_build_filename (rpe_test_tmpdir (), "zoom.pdf", NULL);
  g_autoptr (GPtrArray) words = NULL;
  g_autoptr (GError) error = NULL;
  RpeTicks wx, wy, ex, ey;
  RpeFigure fig;
  RpeHeatmapData d;
  RpePlotRect image = { 0 };
  cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 1, 1);
  cairo_t *cr = cairo_create (s);
  double side, width = 700.0, height = 0.0;

  g_object_set (rpe_window_get_state (window), "length", 1024, NULL);
  show_view (window, RPE_WINDOW_VIEW_ATTENTION);
  av = RPE_ATTENTION_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_ATTENTION));
  rpe_figure_page_set_viewport (RPE_FIGURE_PAGE (av), 246, 772, 246, 772);
  rpe_test_settle (window, TRUE);
  g_assert_cmpuint (rpe_attention_view_get_image (av)->m0, ==, 246);
  g_assert_cmpuint (rpe_attention_view_get_image (av)->m1, ==, 772);
  g_assert_true (rpe_attention_view_get_axis_ticks (av, &wx, &wy, &side));
  if (g_getenv ("RPE_SCREENSHOT_DIR") != NULL)
    {
      g_autofree char *shot = g_build_filename (g_getenv ("RPE_SCREENSHOT_DIR"), "attention-zoom.png", NULL);
      cairo_surface_t *pixels = rpe_test_render_widget (GTK_WIDGET (window));

      g_assert_cmpint (cairo_surface_write_to_png (pixels, shot), ==, CAIRO_STATUS_SUCCESS);
      cairo_surface_destroy (pixels);
    }
  g_test_message ("canvas: a %.0f px map, %zu x ticks, %zu y ticks", side, wx.n, wy.n);
  g_assert_cmpuint (wx.n, >=, 3);
  g_assert_cmpuint (wy.n, >=, 3);

  /* the export of the view, at the canvas' text size (11 px) and image side */
  bundle = rpe_window_build_figure (window, RPE_WINDOW_VIEW_ATTENTION);
  g_assert_nonnull (bundle);
  fig = bundle->fig;
  fig.heatmap.font_size = 11.0;
  d = fig.heatmap;
  d.title = fig.title;
  for (int i = 0; i < 6; i++)
    {
      height = width + 300.0;
      g_assert_true (rpe_plot_heatmap_layout (cr, &d, width, height, &image, NULL));
      if (image.width == side)
        break;
      width += side - image.width;
    }
  g_assert_cmpfloat (image.width, ==, side);
  g_assert_true (rpe_plot_heatmap_ticks (cr, &d, width, height, &ex, &ey));
  cairo_destroy (cr);
  cairo_surface_destroy (s);

  for (int axis = 0; axis < 2; axis++)
    {
      const RpeTicks *w = axis == 0 ? &wx : &wy, *e = axis == 0 ? &ex : &ey;

      g_assert_cmpuint (w->n, ==, e->n);
      for (size_t i = 0; i < w->n; i++)
        {
          g_assert_cmpstr (w->tick[i].label, ==, e->tick[i].label);
          g_assert_cmpfloat (w->tick[i].value, ==, e->tick[i].value);
          g_assert_cmpfloat (fabs (w->tick[i].pos - e->tick[i].pos), <, 1e-12);
          /* absolute positions of the window */
          g_assert_cmpfloat (w->tick[i].value, >=, 246.0);
          g_assert_cmpfloat (w->tick[i].value, <=, 771.0);
        }
    }

  /* the PDF of that figure carries the same numbers under its image */
  {
    RpeExportSize size = { .width = width, .height = height };

    g_assert_true (rpe_export_figure (&fig, RPE_EXPORT_PDF, &size, pdf, &error));
    g_assert_no_error (error);
  }
  words = pdf_numbers_between (pdf, image.y + image.height, image.y + image.height + 11.0 * 1.5);
  if (words == NULL)
    g_test_message ("pdftotext (poppler-utils) not installed: the PDF's numbers not read");
  else
    {
      g_assert_cmpuint (words->len, ==, wx.n);
      for (guint i = 0; i < words->len; i++)
        g_assert_cmpstr (g_ptr_array_index (words, i), ==, wx.tick[i].label);
    }
  g_unlink (pdf);
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int   argc,
      char *argv[])
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();

  g_test_add_func ("/ui/export/views", test_views);
  g_test_add_func ("/ui/export/cli", test_cli);
  g_test_add_func ("/ui/export/failures", test_failures);
  g_test_add_func ("/ui/export/dialog", test_dialog);
  g_test_add_func ("/ui/export/dialog-preset", test_dialog_preset);
  g_test_add_func ("/ui/export/presentation", test_presentation);
  g_test_add_func ("/ui/export/attention-ticks", test_attention_ticks);

  return g_test_run ();
}

/* test-render-export.c: the GTK-free renderers and the figure exporter (no display).
 *
 * Every check compares rendered pixels (PNG read back, PDF rasterised by
 * poppler) with what the data says they must be, using colours computed here
 * from the published colour-map values, and parses the vector files with
 * independent tools (libxml2, pdfinfo).
 */
#include "config.h"

#include <math.h>
#include <signal.h>
#include <sys/resource.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <cairo.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "rpe-alloc.h"
#include "rpe-colormap.h"
#include "rpe-curve-render.h"
#include "rpe-curves.h"
#include "rpe-error.h"
#include "rpe-export.h"
#include "rpe-npy.h"
#include "rpe-plot-render.h"
#include "rpe-test-utils.h"

/* viridis' end entries as published (matplotlib _cm_listed.py), to 8 bits */
static const guint8 VIRIDIS_TOP[3] = { 253, 231, 37 };     /* 0.993248, 0.906157, 0.143936 */
static const guint8 VIRIDIS_BOTTOM[3] = { 68, 1, 84 };     /* 0.267004, 0.004874, 0.329415 */

/* Under LeakSanitizer: fontconfig's pattern cache (cairo's toy font API) is never
 * freed before exit (as in tests/test-ui-lsan.supp).  Unused otherwise. */
const char *__lsan_default_suppressions (void);
const char *
__lsan_default_suppressions (void)
{
  return "leak:libfontconfig.so\n";
}

/* ---------------------------------------------------------------- helpers */

static void
pixel_rgb (cairo_surface_t *s, int x, int y, guint8 rgb[3])
{
  unsigned char *data = cairo_image_surface_get_data (s);
  int stride = cairo_image_surface_get_stride (s);
  guint32 px;

  g_assert_true (x >= 0 && y >= 0 && x < cairo_image_surface_get_width (s) && y < cairo_image_surface_get_height (s));
  px = *(guint32 *) (void *) (data + (gsize) stride * y + 4 * (gsize) x);
  rgb[0] = (px >> 16) & 0xff;
  rgb[1] = (px >> 8) & 0xff;
  rgb[2] = px & 0xff;
}

static int
color_distance (const guint8 a[3], const guint8 b[3])
{
  return MAX (MAX (ABS ((int) a[0] - (int) b[0]), ABS ((int) a[1] - (int) b[1])), ABS ((int) a[2] - (int) b[2]));
}

static void
assert_pixel (cairo_surface_t *s, double x, double y, const guint8 want[3], int tol)
{
  guint8 got[3];

  pixel_rgb (s, (int) floor (x), (int) floor (y), got);
  if (color_distance (got, want) > tol)
    g_error ("pixel (%.1f, %.1f) is (%d, %d, %d), expected (%d, %d, %d)", x, y, got[0], got[1], got[2],
             want[0], want[1], want[2]);
}

static void
entry_u8 (const RpeColormap *cmap, size_t i, guint8 out[3])
{
  double rgb[3];

  rpe_colormap_entry (cmap, i, rgb);
  for (int c = 0; c < 3; c++)
    out[c] = (guint8) lround (rgb[c] * 255.0);
}

static float *
identity_map (size_t n)
{
  float *a = g_new0 (float, n * n);

  for (size_t i = 0; i < n; i++)
    a[i * n + i] = 1.0f;
  return a;
}

/* The image rectangle as the exporter lays it out: PNG at 72 dpi has 1 px per point. */
static void
heatmap_layout (const RpeHeatmapData *d, double w, double h, RpePlotRect *im, RpePlotRect *bar)
{
  cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cairo_t *cr = cairo_create (s);

  g_assert_true (rpe_plot_heatmap_layout (cr, d, w, h, im, bar));
  cairo_destroy (cr);
  cairo_surface_destroy (s);
}

static gsize
count_dir (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  gsize n = 0;

  g_assert_nonnull (d);
  while (g_dir_read_name (d) != NULL)
    n++;
  g_dir_close (d);
  return n;
}

/* ------------------------------------------------------------------ tests */

/* An identity-like attention map: each diagonal cell is the map's top colour,
 * the others its bottom colour; the colour bar runs from bottom to top colour. */
static void
test_heatmap_png_identity (void)
{
  const size_t n = 16;
  g_autofree float *a = identity_map (n);
  g_autofree char *path = rpe_test_tmp_path ("identity.png");
  g_autoptr (GError) error = NULL;
  RpeFigure fig;
  RpeExportSize size = { 0, 0, 72.0 };
  RpePlotRect im, bar;
  cairo_surface_t *png;

  rpe_figure_init (&fig, RPE_FIGURE_HEATMAP);
  fig.heatmap.values = a;
  fig.heatmap.rows = fig.heatmap.cols = n;
  fig.heatmap.title = "identity";
  fig.heatmap.equal_aspect = true;
  fig.heatmap.train_length = 0;
  g_assert_true (rpe_export_figure (&fig, RPE_EXPORT_PNG, &size, path, &error));
  g_assert_no_error (error);

  png = cairo_image_surface_create_from_png (path);
  g_assert_cmpint (cairo_surface_status (png), ==, CAIRO_STATUS_SUCCESS);
  g_assert_cmpint (cairo_image_surface_get_width (png), ==, 360);
  g_assert_cmpint (cairo_image_surface_get_height (png), ==, 300);

  {
    RpeHeatmapData d = fig.heatmap;
    memcpy (d.foreground, fig.foreground, sizeof d.foreground);
    heatmap_layout (&d, 360, 300, &im, &bar);
  }
  for (size_t m = 0; m < n; m++)
    for (size_t k = 0; k < n; k++)
      {
        double x = im.x + im.width * (k + 0.5) / n, y = im.y + im.height * (m + 0.5) / n;

        assert_pixel (png, x, y, m == k ? VIRIDIS_TOP : VIRIDIS_BOTTOM, 1);
      }
  /* colour bar: top row = top colour, bottom row = bottom colour */
  assert_pixel (png, bar.x + bar.width / 2, bar.y + 1.5, VIRIDIS_TOP, 1);
  assert_pixel (png, bar.x + bar.width / 2, bar.y + bar.height - 1.5, VIRIDIS_BOTTOM, 1);
  /* outside the plot: the opaque white background */
  assert_pixel (png, 1.5, 299.5, (const guint8[]) { 255, 255, 255 }, 0);
  cairo_surface_destroy (png);
}

/* The SPE paper's transform: a >= 0.02 -> top, a -> entry floor(256 (a/0.02)^0.4). */
static void
test_attention_transform (void)
{
  const size_t n = 4;
  float a[16] = { 0.02f, 0.00125f, 0.0f, 0.5f,
                  0.005f, 0.02f, 0.0f, 0.0f,
                  0.0f, 0.0f, 0.02f, 0.0f,
                  0.0f, 0.0f, 0.0f, 0.02f };
  cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 200, 160);
  cairo_t *cr = cairo_create (s);
  RpeHeatmapData d;
  RpePlotRect im, bar;
  guint8 want[3];

  rpe_heatmap_data_init (&d);
  d.values = a;
  d.rows = d.cols = n;
  d.transform = RPE_HEATMAP_TRANSFORM_ATTENTION;
  rpe_plot_render_heatmap (cr, &d, 200, 160);
  cairo_surface_flush (s);
  heatmap_layout (&d, 200, 160, &im, &bar);

#define CELL(m, k) im.x + im.width * ((k) + 0.5) / n, im.y + im.height * ((m) + 0.5) / n
  assert_pixel (s, CELL (0, 0), VIRIDIS_TOP, 1);
  assert_pixel (s, CELL (0, 3), VIRIDIS_TOP, 1);            /* 0.5 saturates */
  assert_pixel (s, CELL (0, 2), VIRIDIS_BOTTOM, 1);
  entry_u8 (rpe_colormap_default (), (size_t) floor (256.0 * pow (0.00125 / 0.02, 0.4)), want);
  assert_pixel (s, CELL (0, 1), want, 1);
  entry_u8 (rpe_colormap_default (), (size_t) floor (256.0 * pow (0.005 / 0.02, 0.4)), want);
  assert_pixel (s, CELL (1, 0), want, 1);
#undef CELL
  g_assert_cmpfloat_with_epsilon (rpe_plot_attention_transform (0.02), 1.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (rpe_plot_attention_transform (0.01), pow (0.5, 0.4), 1e-12);
  g_assert_cmpfloat (rpe_plot_attention_transform (-1.0), ==, 0.0);
  cairo_destroy (cr);
  cairo_surface_destroy (s);
}

/* A map much larger than its image: columns alternate 0, 1.  Mean shows the middle
 * of the map, never an end; max shows the top colour everywhere. */
static void
test_reduction (void)
{
  const size_t n = 1024;
  g_autofree float *a = g_new (float, n * n);
  cairo_surface_t *s;
  cairo_t *cr;
  RpeHeatmapData d;
  RpePlotRect im, bar;
  guint8 lo[3], mid[3], hi[3], got[3];

  for (size_t i = 0; i < n * n; i++)
    a[i] = (float) ((i % n) % 2);
  rpe_heatmap_data_init (&d);
  d.values = a;
  d.rows = d.cols = n;
  d.scale = RPE_HEATMAP_SCALE_LINEAR;
  d.colormap = rpe_colormap_get (RPE_COLORMAP_GREY);
  /* grey: entry i = i / 255; mean of 4 or 5 alternating cells in [0.4, 0.6] */
  entry_u8 (d.colormap, (size_t) floor (0.4 * 256), lo);
  entry_u8 (d.colormap, (size_t) floor (0.5 * 256), mid);
  entry_u8 (d.colormap, (size_t) floor (0.6 * 256), hi);

  for (int pass = 0; pass < 2; pass++)
    {
      d.reduce = pass == 0 ? RPE_HEATMAP_REDUCE_MEAN : RPE_HEATMAP_REDUCE_MAX;
      s = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 300, 260);
      cr = cairo_create (s);
      rpe_plot_render_heatmap (cr, &d, 300, 260);
      cairo_surface_flush (s);
      heatmap_layout (&d, 300, 260, &im, &bar);
      g_assert_cmpfloat (im.width, <, n / 3.0);
      for (int y = (int) im.y + 2; y < (int) (im.y + im.height) - 2; y += 7)
        for (int x = (int) im.x + 2; x < (int) (im.x + im.width) - 2; x++)
          {
            pixel_rgb (s, x, y, got);
            if (pass == 0)
              g_assert_true (got[0] >= lo[0] && got[0] <= hi[0] && (got[0] == mid[0] || got[0] == lo[0] || got[0] == hi[0]));
            else
              g_assert_cmpint (got[0], ==, 255);
          }
      cairo_destroy (cr);
      cairo_surface_destroy (s);
    }
}

/* A grid of 4 cells, cell k has its only 1 at (k, k): in each cell the top-colour
 * pixels sit at that position of the cell's image (shared scale). */
static void
test_grid (void)
{
  const size_t n = 8, cells = 4;
  g_autofree float *a = g_new0 (float, cells * n * n);
  RpeHeatmapData d[4];
  char titles[4][32];
  RpeHeatmapGrid g;
  cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 400, 400);
  cairo_t *cr = cairo_create (s);

  for (size_t k = 0; k < cells; k++)
    {
      a[k * n * n + k * n + k] = 1.0f;
      rpe_heatmap_data_init (&d[k]);
      d[k].values = a + k * n * n;
      d[k].rows = d[k].cols = n;
      g_snprintf (titles[k], sizeof titles[k], "h=0, d=%zu", k);
      d[k].title = titles[k];
    }
  rpe_heatmap_grid_init (&g);
  g.cells = d;
  g.n_cells = cells;
  g.title = "grid";
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  rpe_plot_render_heatmap_grid (cr, &g, 400, 400);
  cairo_surface_flush (s);

  for (size_t k = 0; k < cells; k++)
    {
      RpePlotRect r;
      double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY, sx = 0, sy = 0, cnt = 0;
      guint8 got[3];

      g_assert_true (rpe_plot_grid_cell_rect (cr, &g, 400, 400, k, &r));
      /* the cell's image: the pixels of either end colour */
      for (int y = (int) r.y; y < (int) (r.y + r.height); y++)
        for (int x = (int) r.x; x < (int) (r.x + r.width); x++)
          {
            pixel_rgb (s, x, y, got);
            if (color_distance (got, VIRIDIS_BOTTOM) == 0 || color_distance (got, VIRIDIS_TOP) == 0)
              {
                x0 = MIN (x0, x);
                x1 = MAX (x1, x + 1);
                y0 = MIN (y0, y);
                y1 = MAX (y1, y + 1);
              }
            if (color_distance (got, VIRIDIS_TOP) == 0)
              {
                sx += x + 0.5;
                sy += y + 0.5;
                cnt++;
              }
          }
      g_assert_cmpfloat (cnt, >, 4);
      g_assert_cmpfloat (x1 - x0, >, 40);
      /* the frame covers the image's outer pixels: 1.5 px, a quarter of a cell */
      g_assert_cmpfloat_with_epsilon (sx / cnt, x0 + (x1 - x0) * (k + 0.5) / n, 1.5);
      g_assert_cmpfloat_with_epsilon (sy / cnt, y0 + (y1 - y0) * (k + 0.5) / n, 1.5);
    }
  cairo_destroy (cr);
  cairo_surface_destroy (s);
}

/* Pixel centroids of the series colour, one per column, and how straight they lie. */
static double
line_r2 (const RpeCurvePlot *p, int w, int h, const guint8 color[3], int *columns)
{
  cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_RGB24, w, h);
  cairo_t *cr = cairo_create (s);
  RpeCurveFrame f;
  double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0, k = 0;
  guint8 got[3];

  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  rpe_curve_render (cr, p, w, h);
  cairo_surface_flush (s);
  g_assert_true (rpe_curve_plot_layout (cr, p, w, h, &f));
  for (int x = (int) f.area.x + 3; x < (int) (f.area.x + f.area.width) - 3; x++)
    {
      double acc = 0, cnt = 0;

      for (int y = (int) f.area.y + 1; y < (int) (f.area.y + f.area.height) - 1; y++)
        {
          pixel_rgb (s, x, y, got);
          if (color_distance (got, color) <= 40)
            {
              acc += y + 0.5;
              cnt++;
            }
        }
      if (cnt == 0)
        continue;
      sx += x;
      sy += acc / cnt;
      sxx += (double) x * x;
      syy += acc / cnt * acc / cnt;
      sxy += x * acc / cnt;
      k++;
    }
  *columns = (int) k;
  cairo_destroy (cr);
  cairo_surface_destroy (s);
  {
    double cxy = sxy - sx * sy / k, cxx = sxx - sx * sx / k, cyy = syy - sy * sy / k;
    return cxy * cxy / (cxx * cyy);
  }
}

/* y = x on linear axes: the series' pixels lie where the frame maps the data, and
 * y = x^-1/2 is a straight line on log-log axes but not on linear ones. */
static void
test_curves (void)
{
  double x[50], y[50], yp[50];
  RpeCurveSeries se = { 0 };
  RpeCurvePlot p;
  const guint8 blue[3] = { 0x1f, 0x77, 0xb4 };   /* tab10 colour 0 */
  cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 400, 300);
  cairo_t *cr = cairo_create (s);
  RpeCurveFrame f;
  int cols;
  double r2;

  for (int i = 0; i < 50; i++)
    {
      x[i] = 1.0 + i * 0.2;
      y[i] = x[i];
      yp[i] = 1.0 / sqrt (x[i] * x[i] * x[i] * x[i]);   /* x^-2 */
    }
  se.x = x;
  se.y = y;
  se.n = 50;
  se.label = "y = x";
  rpe_curve_plot_init (&p);
  p.series = &se;
  p.n_series = 1;
  p.x_label = "x";
  p.y_label = "y";
  p.legend = RPE_CURVE_LEGEND_NONE;
  p.show_grid = false;
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  rpe_curve_render (cr, &p, 400, 300);
  cairo_surface_flush (s);
  g_assert_true (rpe_curve_plot_layout (cr, &p, 400, 300, &f));
  /* independent mapping: the data range is [1, 10.8] with 5 % margins on y, none on x */
  g_assert_cmpfloat_with_epsilon (f.x0, 1.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (f.x1, 10.8, 1e-12);
  g_assert_cmpfloat_with_epsilon (f.y0, 1.0 - 0.05 * 9.8, 1e-12);
  for (double v = 2.0; v < 10.0; v += 1.0)
    {
      double px = f.area.x + f.area.width * (v - 1.0) / 9.8;
      double py = f.area.y + f.area.height * (1.0 - (v - f.y0) / (f.y1 - f.y0));

      assert_pixel (s, px, py, blue, 40);
      /* well off the line: not the series colour */
      {
        guint8 got[3];
        pixel_rgb (s, (int) px, (int) (py - 20), got);
        g_assert_cmpint (color_distance (got, blue), >, 60);
      }
    }
  cairo_destroy (cr);
  cairo_surface_destroy (s);

  se.y = yp;
  p.x_log = p.y_log = true;
  r2 = line_r2 (&p, 400, 300, blue, &cols);
  g_assert_cmpint (cols, >, 200);
  g_assert_cmpfloat (r2, >, 0.9995);
  p.x_log = p.y_log = false;
  r2 = line_r2 (&p, 400, 300, blue, &cols);
  g_assert_cmpfloat (r2, <, 0.9);
}

static void
test_nearest (void)
{
  double x[3] = { 0, 1, 2 }, y[3] = { 0, 4, 1 };
  RpeCurveSeries se = { 0 };
  RpeCurvePlot p;
  RpeCurveFrame f;
  cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 1, 1);
  cairo_t *cr = cairo_create (s);
  size_t si = 9, idx = 9;
  double px, py, dist;

  se.x = x;
  se.y = y;
  se.n = 3;
  rpe_curve_plot_init (&p);
  p.series = &se;
  p.n_series = 1;
  g_assert_true (rpe_curve_plot_layout (cr, &p, 300, 200, &f));
  g_assert_true (rpe_curve_frame_map (&f, 1, 4, &px, &py));
  g_assert_true (rpe_curve_plot_nearest (&p, &f, px + 3, py + 2, &si, &idx, &dist));
  g_assert_cmpuint (si, ==, 0);
  g_assert_cmpuint (idx, ==, 1);
  g_assert_cmpfloat_with_epsilon (dist, sqrt (13.0), 1e-9);
  cairo_destroy (cr);
  cairo_surface_destroy (s);
}

/* SVG: well-formed XML with an <svg> root of the asked size in points, the heatmap as an image. */
static gboolean
find_element (xmlNode *node, const char *name)
{
  for (xmlNode *n = node; n != NULL; n = n->next)
    {
      if (n->type == XML_ELEMENT_NODE && g_str_equal ((const char *) n->name, name))
        return TRUE;
      if (find_element (n->children, name))
        return TRUE;
    }
  return FALSE;
}

static void
test_svg (void)
{
  const size_t n = 64;
  g_autofree float *a = identity_map (n);
  g_autofree char *path = rpe_test_tmp_path ("figure.svg");
  g_autoptr (GError) error = NULL;
  RpeFigure fig;
  RpeExportSize size = { 300, 250, 0 };
  xmlDoc *doc;
  xmlNode *root;
  xmlChar *w, *h;

  rpe_figure_init (&fig, RPE_FIGURE_HEATMAP);
  fig.heatmap.values = a;
  fig.heatmap.rows = fig.heatmap.cols = n;
  fig.title = "SVG figure";
  g_assert_true (rpe_export_figure (&fig, RPE_EXPORT_SVG, &size, path, &error));
  g_assert_no_error (error);

  doc = xmlReadFile (path, NULL, XML_PARSE_NONET);
  g_assert_nonnull (doc);
  root = xmlDocGetRootElement (doc);
  g_assert_cmpstr ((const char *) root->name, ==, "svg");
  w = xmlGetProp (root, (const xmlChar *) "width");
  h = xmlGetProp (root, (const xmlChar *) "height");
  g_assert_cmpfloat_with_epsilon (g_ascii_strtod ((const char *) w, NULL), 300.0, 1e-6);
  g_assert_cmpfloat_with_epsilon (g_ascii_strtod ((const char *) h, NULL), 250.0, 1e-6);
  g_assert_true (g_str_has_suffix ((const char *) w, "pt"));
  g_assert_true (find_element (root, "image"));
  xmlFree (w);
  xmlFree (h);
  xmlFreeDoc (doc);
}

static char *
run_tool (const char *const *argv)
{
  g_autofree char *out = NULL;
  g_autoptr (GError) error = NULL;
  int status;

  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL,
                               NULL, NULL, &out, NULL, &status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  return g_steal_pointer (&out);
}

/* PDF: one page of the asked size (pdfinfo); rasterised by poppler at 72 dpi, the
 * identity's diagonal is the top colour (the image embedded at full resolution). */
static void
test_pdf (void)
{
  const size_t n = 200;
  g_autofree float *a = identity_map (n);
  g_autofree char *path = rpe_test_tmp_path ("figure.pdf");
  g_autofree char *prefix = rpe_test_tmp_path ("page");
  g_autofree char *page = NULL;
  g_autofree char *info = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *pdfinfo = g_find_program_in_path ("pdfinfo");
  g_autofree char *pdftoppm = g_find_program_in_path ("pdftoppm");
  RpeFigure fig;
  RpeExportSize size = { 400, 380, 0 };
  RpePlotRect im, bar;
  cairo_surface_t *png;

  rpe_figure_init (&fig, RPE_FIGURE_HEATMAP);
  fig.heatmap.values = a;
  fig.heatmap.rows = fig.heatmap.cols = n;
  fig.heatmap.train_length = 0;
  fig.title = "PDF figure";
  g_assert_true (rpe_export_figure (&fig, RPE_EXPORT_PDF, &size, path, &error));
  g_assert_no_error (error);
  {
    g_autofree char *head = NULL;
    gsize len;
    g_assert_true (g_file_get_contents (path, &head, &len, NULL));
    g_assert_true (len > 5 && memcmp (head, "%PDF-", 5) == 0);
  }
  if (pdfinfo == NULL || pdftoppm == NULL)
    {
      g_test_skip ("pdfinfo/pdftoppm (poppler-utils) not installed");
      return;
    }
  info = run_tool ((const char *const[]) { pdfinfo, path, NULL });
  g_assert_nonnull (strstr (info, "Pages:"));
  g_assert_true (g_regex_match_simple ("Pages:\\s+1\\n", info, 0, 0));
  g_assert_true (g_regex_match_simple ("Page size:\\s+400 x 380 pts", info, 0, 0));

  g_free (run_tool ((const char *const[]) { pdftoppm, "-r", "144", "-aa", "no", "-aaVector", "no", "-png", "-singlefile", path, prefix, NULL }));
  page = g_strconcat (prefix, ".png", NULL);
  png = cairo_image_surface_create_from_png (page);
  g_assert_cmpint (cairo_surface_status (png), ==, CAIRO_STATUS_SUCCESS);
  g_assert_cmpint (cairo_image_surface_get_width (png), ==, 800);
  {
    RpeHeatmapData d = fig.heatmap;
    d.title = fig.title;
    heatmap_layout (&d, 400, 380, &im, &bar);
    /* 144 dpi: 2 pixels per point */
    im.x *= 2, im.y *= 2, im.width *= 2, im.height *= 2;
    bar.x *= 2, bar.y *= 2, bar.width *= 2, bar.height *= 2;
  }
  /* 200 cells on ~300 points (~3 pixels each): the diagonal is the top colour, the
   * cells far from it the bottom colour */
  for (size_t m = 5; m < n - 5; m += 10)
    {
      double x = im.x + im.width * (m + 0.5) / n, y = im.y + im.height * (m + 0.5) / n;
      guint8 got[3];

      int best = 255;

      /* within a cell of where the layout (hinted metrics here, unhinted in the PDF) puts it */
      /* the viewer resamples the image: rows on a cell boundary are blends */
      for (double xx = x - 1.5 * im.width / n; xx <= x + 1.5 * im.width / n; xx += 1.0)
        for (int dy = -1; dy <= 1; dy++)
          {
            pixel_rgb (png, (int) floor (xx), (int) floor (y) + dy, got);
            best = MIN (best, color_distance (got, VIRIDIS_TOP));
          }
      g_assert_cmpint (best, <=, 3);
      assert_pixel (png, im.x + im.width * ((m + n / 2) % n + 0.5) / n, y, VIRIDIS_BOTTOM, 3);
    }
  assert_pixel (png, bar.x + bar.width / 2, bar.y + 2.5, VIRIDIS_TOP, 3);
  assert_pixel (png, bar.x + bar.width / 2, bar.y + bar.height - 2.5, VIRIDIS_BOTTOM, 3);
  cairo_surface_destroy (png);
}

/* A failed or cancelled export keeps the existing file and leaves no temporary one. */
static void
test_atomic (void)
{
  g_autofree char *dir = rpe_test_tmp_path ("atomic");
  g_autofree char *path = g_build_filename (dir, "fig.png", NULL);
  g_autofree char *subdir = g_build_filename (dir, "a-directory.png", NULL);
  g_autofree char *content = NULL;
  g_autofree float *a = identity_map (8);
  g_autoptr (GCancellable) cancel = g_cancellable_new ();
  GError *error = NULL;
  RpeExportSize bad = { 0, 0, 1.0 };
  RpeFigure fig, empty;

  g_assert_cmpint (g_mkdir_with_parents (subdir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (path, "old", 3, NULL));
  rpe_figure_init (&fig, RPE_FIGURE_HEATMAP);
  fig.heatmap.values = a;
  fig.heatmap.rows = fig.heatmap.cols = 8;

  /* cancelled */
  g_cancellable_cancel (cancel);
  g_assert_false (rpe_export_figure_cancellable (&fig, RPE_EXPORT_PDF, NULL, path, cancel, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);
  /* bad size */
  g_assert_false (rpe_export_figure (&fig, RPE_EXPORT_PNG, &bad, path, &error));
  g_assert_error (error, RPE_ERROR, RPE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  /* nothing to draw */
  rpe_figure_init (&empty, RPE_FIGURE_HEATMAP);
  g_assert_false (rpe_export_figure (&empty, RPE_EXPORT_SVG, NULL, path, &error));
  g_assert_error (error, RPE_ERROR, RPE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_true (g_file_get_contents (path, &content, NULL, NULL));
  g_assert_cmpstr (content, ==, "old");
  g_clear_pointer (&content, g_free);

  /* the rename fails after the whole file was written: the target is a directory */
  g_assert_false (rpe_export_figure (&fig, RPE_EXPORT_PNG, NULL, subdir, &error));
  g_assert_error (error, RPE_ERROR, RPE_ERROR_IO);
  g_clear_error (&error);
  /* no temporary file left: the directory holds fig.png and a-directory.png only */
  g_assert_cmpuint (count_dir (dir), ==, 2);
  g_assert_true (g_file_test (subdir, G_FILE_TEST_IS_DIR));

  /* success replaces the file */
  g_assert_true (rpe_export_figure (&fig, RPE_EXPORT_PNG, NULL, path, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (path, &content, NULL, NULL));
  g_assert_true (memcmp (content, "\x89PNG", 4) == 0);
  g_assert_cmpuint (count_dir (dir), ==, 2);
}

/* A full disk (simulated with RLIMIT_FSIZE, so writes past 4 KiB fail with EFBIG) gives an error,
 * keeps the existing file byte for byte and leaves no temporary file; for every format. */
static void
test_disk_full (void)
{
  if (g_test_subprocess ())
    {
      g_autofree char *dir = rpe_test_tmp_path ("full");
      g_autofree char *path = g_build_filename (dir, "fig", NULL);
      g_autofree float *a = identity_map (300);
      struct rlimit limit = { 4096, 4096 };
      static const RpeExportFormat formats[] = { RPE_EXPORT_PNG, RPE_EXPORT_SVG, RPE_EXPORT_PDF, RPE_EXPORT_NPY };
      RpeFigure fig;

      g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
      g_assert_true (g_file_set_contents (path, "precious", -1, NULL));
      rpe_figure_init (&fig, RPE_FIGURE_HEATMAP);
      fig.heatmap.values = a;
      fig.heatmap.rows = fig.heatmap.cols = 300;
      signal (SIGXFSZ, SIG_IGN);
      g_assert_cmpint (setrlimit (RLIMIT_FSIZE, &limit), ==, 0);
      for (gsize i = 0; i < G_N_ELEMENTS (formats); i++)
        {
          GError *error = NULL;
          g_autofree char *content = NULL;
          RpeExportSize size = { 1600, 1200, 150 };

          g_assert_false (rpe_export_figure (&fig, formats[i], &size, path, &error));
          g_test_message ("format %d: %s", (int) formats[i], error->message);
          g_assert_error (error, RPE_ERROR, RPE_ERROR_NO_SPACE);
          g_clear_error (&error);
          g_assert_true (g_file_get_contents (path, &content, NULL, NULL));
          g_assert_cmpstr (content, ==, "precious");
          g_assert_cmpuint (count_dir (dir), ==, 1);
        }
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

/* The memory estimate of an SVG page against the images cairo really embeds: the sum of the
 * <image> sizes of the written file is at most the estimate (9 bytes a pixel), and the estimate
 * is not far above it; for one map, three panels and a grid of four.  A map of more cells than the page has points has one pixel a cell (up to
 * 4096 a side), far above 2 pixels a point: the estimate knew only the page before. */
static void
test_vector_bytes (void)
{
  static const size_t lengths[] = { 100, 1000, 2048, 5000, 300, 3000, 50, 700 };

  for (gsize i = 0; i < G_N_ELEMENTS (lengths); i++)
    {
      size_t            n = lengths[i], bytes = 0, embedded = 0;
      g_autofree float *a = identity_map (n);
      g_autofree char  *path = rpe_test_tmp_path ("bytes.svg");
      g_autofree char  *text = NULL;
      g_autoptr (GError) error = NULL;
      RpeExportSize size = { 0 };
      RpeFigure     fig;
      double        wpt, hpt, side;

      RpeHeatmapData cells[4];

      /* one map; three panels side by side; a grid of four */
      rpe_figure_init (&fig, i % 3 == 0 ? RPE_FIGURE_HEATMAP : i % 3 == 1 ? RPE_FIGURE_COMPARE : RPE_FIGURE_GRID);
      fig.heatmap.values = a;
      fig.heatmap.rows = fig.heatmap.cols = n;
      for (gsize c = 0; c < 4; c++)
        cells[c] = fig.heatmap;
      memcpy (fig.panels, cells, 3 * sizeof cells[0]);
      fig.n_panels = 3;
      fig.grid.cells = cells;
      fig.grid.n_cells = 4;
      g_assert_true (rpe_export_figure (&fig, RPE_EXPORT_SVG, &size, path, &error));
      g_assert_no_error (error);
      g_assert_true (rpe_export_resolve_size (&fig, RPE_EXPORT_SVG, &size, &wpt, &hpt, NULL, NULL, &error));
      g_assert_true (rpe_export_vector_bytes (&fig, wpt, hpt, &bytes));
      g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
      for (const char *p = strstr (text, "<image "); p != NULL; p = strstr (p + 1, "<image "))
        {
          unsigned w = 0, h = 0;

          g_assert_cmpint (sscanf (strstr (p, "width=\""), "width=\"%u\" height=\"%u\"", &w, &h), ==, 2);
          embedded += (size_t) w * h;
        }
      side = MIN ((double) n, (double) RPE_PLOT_MAX_IMAGE_SIDE);
      g_test_message ("kind %d, N = %zu, %.0f x %.0f pt: %zu pixels embedded, %zu estimated", (int) fig.kind, n, wpt,
                      hpt, embedded, bytes / 9);
      g_assert_cmpuint (embedded, <=, bytes / 9);
      /* above it by at most 4 times the larger of the two (the estimate gives each panel its share
       * of the page, larger than its plot, and whole-cell replication may double each side) */
      g_assert_cmpfloat ((double) (bytes / 9), <=, 4.0 * fmax ((double) embedded, 4.0 * wpt * hpt));
      g_assert_cmpfloat ((double) embedded, >=, side * side);
      g_unlink (path);
    }
}

/* PNG size rules: pixels given, or the default size in inches x dpi. */
static void
test_sizes (void)
{
  g_autofree float *a = identity_map (8);
  g_autofree char *path = rpe_test_tmp_path ("size.png");
  RpeFigure fig;
  RpeExportSize px = { 640, 0, 0 }, dpi = { 0, 0, 300 };
  double wpt, hpt;
  int wpx, hpx;
  cairo_surface_t *png;

  rpe_figure_init (&fig, RPE_FIGURE_HEATMAP);
  fig.heatmap.values = a;
  fig.heatmap.rows = fig.heatmap.cols = 8;
  g_assert_true (rpe_export_resolve_size (&fig, RPE_EXPORT_PNG, &px, &wpt, &hpt, &wpx, &hpx, NULL));
  g_assert_cmpint (wpx, ==, 640);
  g_assert_cmpint (hpx, ==, (int) round (640.0 * 300.0 / 360.0));
  g_assert_true (rpe_export_resolve_size (&fig, RPE_EXPORT_PNG, &dpi, &wpt, &hpt, &wpx, &hpx, NULL));
  g_assert_cmpint (wpx, ==, 360 * 300 / 72);
  g_assert_cmpint (hpx, ==, 300 * 300 / 72);
  g_assert_cmpfloat_with_epsilon (wpt, 360.0, 1e-9);
  g_assert_true (rpe_export_figure (&fig, RPE_EXPORT_PNG, &dpi, path, NULL));
  png = cairo_image_surface_create_from_png (path);
  g_assert_cmpint (cairo_image_surface_get_width (png), ==, 1500);
  g_assert_cmpint (cairo_image_surface_get_height (png), ==, 1250);
  cairo_surface_destroy (png);
}

/* .npy holds the raw arrays; .csv the curve table. */
static void
test_data_formats (void)
{
  const size_t n = 5;
  g_autofree float *a = g_new (float, 2 * n * n);
  g_autofree char *npy = rpe_test_tmp_path ("grid.npy");
  g_autofree char *csv = rpe_test_tmp_path ("curve.csv");
  g_autofree char *text = NULL;
  g_autoptr (GError) error = NULL;
  RpeHeatmapData d[2];
  RpeFigure fig;
  RpeTensor *t;
  RpeCurveTable *table;
  RpeStatus st;
  RpeCurvePlot p;
  double xs[3] = { 1, 2, 3 };

  for (size_t i = 0; i < 2 * n * n; i++)
    a[i] = (float) i * 0.25f - 3.0f;
  for (int k = 0; k < 2; k++)
    {
      rpe_heatmap_data_init (&d[k]);
      d[k].values = a + k * n * n;
      d[k].rows = d[k].cols = n;
    }
  rpe_figure_init (&fig, RPE_FIGURE_GRID);
  fig.grid.cells = d;
  fig.grid.n_cells = 2;
  g_assert_true (rpe_export_figure (&fig, RPE_EXPORT_NPY, NULL, npy, &error));
  g_assert_no_error (error);
  t = rpe_npy_read (npy, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (t->ndim, ==, 3);
  g_assert_cmpuint (t->shape[0], ==, 2);
  g_assert_cmpuint (t->shape[1], ==, n);
  for (size_t i = 0; i < 2 * n * n; i++)
    g_assert_cmpfloat (t->data[i], ==, (float) i * 0.25f - 3.0f);
  rpe_tensor_free (t);
  /* CSV is for curves only */
  g_assert_false (rpe_export_figure (&fig, RPE_EXPORT_CSV, NULL, csv, &error));
  g_assert_error (error, RPE_ERROR, RPE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  table = rpe_curve_table_new (3, &st);
  g_assert_cmpint (st, ==, RPE_OK);
  g_assert_cmpint (rpe_curve_table_add_column (table, "R", xs, NULL), ==, RPE_OK);
  rpe_curve_plot_init (&p);
  rpe_figure_init (&fig, RPE_FIGURE_CURVES);
  fig.plots = &p;
  fig.n_plots = 1;
  fig.table = table;
  g_assert_true (rpe_export_figure (&fig, RPE_EXPORT_CSV, NULL, csv, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (csv, &text, NULL, NULL));
  g_assert_true (g_str_has_prefix (text, "R\n1\n2\n3\n"));
  rpe_curve_table_free (table);
}

/* Every figure kind into every image format. */
static void
test_all_kinds (void)
{
  const size_t n = 24;
  g_autofree float *a = identity_map (n);
  RpeHeatmapData cells[3];
  double x[10], y[10];
  RpeCurveSeries se = { 0 };
  RpeCurvePlot plots[2];
  static const RpeExportFormat formats[3] = { RPE_EXPORT_PNG, RPE_EXPORT_SVG, RPE_EXPORT_PDF };

  for (int i = 0; i < 10; i++)
    {
      x[i] = i + 1;
      y[i] = sqrt (i + 1.0);
    }
  se.x = x;
  se.y = y;
  se.n = 10;
  se.label = "sqrt";
  for (int k = 0; k < 3; k++)
    {
      rpe_heatmap_data_init (&cells[k]);
      cells[k].values = a;
      cells[k].rows = cells[k].cols = n;
      cells[k].title = "cell";
    }
  for (int k = 0; k < 2; k++)
    {
      rpe_curve_plot_init (&plots[k]);
      plots[k].series = &se;
      plots[k].n_series = 1;
      plots[k].x_log = k == 1;
      plots[k].x_marker = 4;
      plots[k].x_marker_label = "N_train";
    }
  for (int kind = 0; kind < 4; kind++)
    for (int f = 0; f < 3; f++)
      {
        RpeFigure fig;
        g_autofree char *name = g_strdup_printf ("kind%d.%s", kind, rpe_export_format_extension (formats[f]));
        g_autofree char *path = rpe_test_tmp_path (name);
        g_autoptr (GError) error = NULL;
        GStatBuf st;

        rpe_figure_init (&fig, (RpeFigureKind) kind);
        fig.title = "every kind";
        fig.heatmap = cells[0];
        fig.grid.cells = cells;
        fig.grid.n_cells = 3;
        fig.grid.shared_scale = kind % 2 == 0;
        fig.panels[0] = cells[0];
        fig.panels[1] = cells[1];
        fig.n_panels = 2;
        fig.share_scale = TRUE;
        fig.plots = plots;
        fig.n_plots = 2;
        g_assert_true (rpe_export_figure (&fig, formats[f], NULL, path, &error));
        g_assert_no_error (error);
        g_assert_cmpint (g_stat (path, &st), ==, 0);
        g_assert_cmpint (st.st_size, >, 500);
      }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/render/heatmap/png-identity", test_heatmap_png_identity);
  g_test_add_func ("/render/heatmap/attention-transform", test_attention_transform);
  g_test_add_func ("/render/heatmap/reduction", test_reduction);
  g_test_add_func ("/render/grid/cell-maximum", test_grid);
  g_test_add_func ("/render/curves/pixels", test_curves);
  g_test_add_func ("/render/curves/nearest", test_nearest);
  g_test_add_func ("/render/export/svg", test_svg);
  g_test_add_func ("/render/export/pdf", test_pdf);
  g_test_add_func ("/render/export/atomic", test_atomic);
  g_test_add_func ("/render/export/disk-full", test_disk_full);
  g_test_add_func ("/render/export/sizes", test_sizes);
  g_test_add_func ("/render/export/vector-bytes", test_vector_bytes);
  g_test_add_func ("/render/export/data-formats", test_data_formats);
  g_test_add_func ("/render/export/all-kinds", test_all_kinds);
  return g_test_run ();
}

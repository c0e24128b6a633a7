/* test-ui-render.c: colour maps and the GTK-free heatmap renderer (no display). */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib.h>
#include <cairo.h>

#include "rpe-alloc.h"
#include "rpe-colormap.h"
#include "rpe-plot-render.h"
#include "rpe-text.h"

/* ---------------------------------------------------------------- helpers */

/* CIE L* of an sRGB colour (IEC 61966-2-1 transfer, D65 luminance weights). */
static double
lightness (const double rgb[3])
{
  double lin[3], y;

  for (int c = 0; c < 3; c++)
    lin[c] = rgb[c] <= 0.04045 ? rgb[c] / 12.92 : pow ((rgb[c] + 0.055) / 1.055, 2.4);
  y = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2];
  return y > 216.0 / 24389.0 ? 116.0 * cbrt (y) - 16.0 : 24389.0 / 27.0 * y;
}

static guint32
entry_pixel (const RpeColormap *cmap,
             double             t)
{
  guint8 rgb[3];

  rpe_colormap_map_u8 (cmap, t, rgb);
  return ((guint32) rgb[0] << 16) | ((guint32) rgb[1] << 8) | rgb[2];
}

static guint32
pixel_at (cairo_surface_t *surface,
          double           x,
          double           y)
{
  unsigned char *data;
  int stride, ix = (int) floor (x), iy = (int) floor (y);

  cairo_surface_flush (surface);
  data = cairo_image_surface_get_data (surface);
  stride = cairo_image_surface_get_stride (surface);
  g_assert_cmpint (ix, >=, 0);
  g_assert_cmpint (iy, >=, 0);
  g_assert_cmpint (ix, <, cairo_image_surface_get_width (surface));
  g_assert_cmpint (iy, <, cairo_image_surface_get_height (surface));
  return *(guint32 *) (void *) (data + (gsize) stride * iy + 4 * (gsize) ix) & 0xffffffu;
}

static cairo_surface_t *
render (const RpeHeatmapData *data,
        int                   width,
        int                   height,
        RpePlotRect          *image)
{
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_RGB24, width, height);
  cairo_t *cr = cairo_create (surface);

  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  rpe_plot_render_heatmap (cr, data, width, height);
  g_assert_true (rpe_plot_heatmap_layout (cr, data, width, height, image, NULL));
  g_assert_cmpint (cairo_status (cr), ==, CAIRO_STATUS_SUCCESS);
  cairo_destroy (cr);
  return surface;
}

/* Centre of cell (m, n) in the image rectangle. */
static void
cell_centre (const RpePlotRect *image,
             gsize              rows,
             gsize              cols,
             gsize              m,
             gsize              n,
             double            *x,
             double            *y)
{
  *x = image->x + image->width * (n + 0.5) / cols;
  *y = image->y + image->height * (m + 0.5) / rows;
}

/* --------------------------------------------------------------- colormap */

static void
assert_rgb (const RpeColormap *cmap,
            gsize              i,
            double             r,
            double             g,
            double             b)
{
  double rgb[3];

  rpe_colormap_entry (cmap, i, rgb);
  g_assert_cmpfloat_with_epsilon (rgb[0], r, 1e-6);
  g_assert_cmpfloat_with_epsilon (rgb[1], g, 1e-6);
  g_assert_cmpfloat_with_epsilon (rgb[2], b, 1e-6);
}

static void
test_colormap_tables (void)
{
  /* End points of the published tables (van der Walt & Smith's viridis,
   * magma, inferno; Nunez et al.'s cividis) as printed in their sources. */
  assert_rgb (rpe_colormap_lookup ("viridis"), 0, 0.267004, 0.004874, 0.329415);
  assert_rgb (rpe_colormap_lookup ("viridis"), 255, 0.993248, 0.906157, 0.143936);
  assert_rgb (rpe_colormap_lookup ("magma"), 0, 0.001462, 0.000466, 0.013866);
  assert_rgb (rpe_colormap_lookup ("magma"), 255, 0.987053, 0.991438, 0.749504);
  assert_rgb (rpe_colormap_lookup ("inferno"), 255, 0.988362, 0.998364, 0.644924);
  assert_rgb (rpe_colormap_lookup ("cividis"), 0, 0.000000, 0.135112, 0.304751);
  assert_rgb (rpe_colormap_lookup ("cividis"), 255, 0.995737, 0.909344, 0.217772);
  /* ColorBrewer RdBu end anchors (#053061 and #67001f), reversed. */
  assert_rgb (rpe_colormap_lookup ("rdbu"), 0, 5 / 255.0, 48 / 255.0, 97 / 255.0);
  assert_rgb (rpe_colormap_lookup ("rdbu"), 255, 103 / 255.0, 0.0, 31 / 255.0);
  assert_rgb (rpe_colormap_lookup ("grey"), 0, 0, 0, 0);
  assert_rgb (rpe_colormap_lookup ("grey"), 255, 1, 1, 1);
}

static void
test_colormap_lightness (void)
{
  static const char *sequential[] = { "viridis", "magma", "inferno", "cividis", "grey" };
  const RpeColormap *div = rpe_colormap_lookup ("rdbu");
  double rgb[3], prev;

  /* Perceptually ordered: CIE L* rises strictly along every sequential map. */
  for (gsize s = 0; s < G_N_ELEMENTS (sequential); s++)
    {
      const RpeColormap *cmap = rpe_colormap_lookup (sequential[s]);

      g_assert_nonnull (cmap);
      g_assert_false (rpe_colormap_is_diverging (cmap));
      rpe_colormap_entry (cmap, 0, rgb);
      prev = lightness (rgb);
      for (gsize i = 1; i < RPE_COLORMAP_SIZE; i++)
        {
          double l;

          rpe_colormap_entry (cmap, i, rgb);
          l = lightness (rgb);
          g_assert_cmpfloat (l, >, prev);
          prev = l;
        }
    }

  /* Diverging: lightness rises to a near-white centre then falls; blue below, red above. */
  g_assert_true (rpe_colormap_is_diverging (div));
  for (gsize i = 1; i < RPE_COLORMAP_SIZE; i++)
    {
      double a[3], b[3];

      rpe_colormap_entry (div, i - 1, a);
      rpe_colormap_entry (div, i, b);
      if (i <= RPE_COLORMAP_SIZE / 2 - 1)
        g_assert_cmpfloat (lightness (b), >, lightness (a));
      else if (i >= RPE_COLORMAP_SIZE / 2 + 1)
        g_assert_cmpfloat (lightness (b), <, lightness (a));
    }
  rpe_colormap_map (div, 0.5, rgb);
  g_assert_cmpfloat (lightness (rgb), >, 95.0);
  rpe_colormap_map (div, 0.1, rgb);
  g_assert_cmpfloat (rgb[2], >, rgb[0]);
  rpe_colormap_map (div, 0.9, rgb);
  g_assert_cmpfloat (rgb[0], >, rgb[2]);
}

static void
test_colormap_lookup (void)
{
  const RpeColormap *v = rpe_colormap_lookup ("Viridis");
  double a[3], b[3];

  g_assert_true (v == rpe_colormap_default ());
  g_assert_true (rpe_colormap_lookup ("gray") == rpe_colormap_get (RPE_COLORMAP_GREY));
  g_assert_true (rpe_colormap_lookup ("diverging") == rpe_colormap_default_diverging ());
  g_assert_null (rpe_colormap_lookup ("jet"));
  g_assert_null (rpe_colormap_lookup (NULL));
  g_assert_null (rpe_colormap_get (RPE_COLORMAP_N_MAPS));
  for (int id = 0; id < RPE_COLORMAP_N_MAPS; id++)
    {
      const RpeColormap *cmap = rpe_colormap_get (id);

      g_assert_true (rpe_colormap_lookup (rpe_colormap_get_name (cmap)) == cmap);
      g_assert_cmpint (rpe_colormap_get_id (cmap), ==, id);
    }

  /* ListedColormap indexing: entry floor(256 t), clamped; NaN -> bottom. */
  for (gsize i = 0; i < RPE_COLORMAP_SIZE; i++)
    {
      rpe_colormap_map (v, (i + 0.5) / RPE_COLORMAP_SIZE, a);
      rpe_colormap_entry (v, i, b);
      g_assert_true (memcmp (a, b, sizeof a) == 0);
    }
  rpe_colormap_map (v, -3.0, a);
  rpe_colormap_entry (v, 0, b);
  g_assert_true (memcmp (a, b, sizeof a) == 0);
  rpe_colormap_map (v, NAN, a);
  g_assert_true (memcmp (a, b, sizeof a) == 0);
  rpe_colormap_map (v, 1.0, a);
  rpe_colormap_entry (v, 255, b);
  g_assert_true (memcmp (a, b, sizeof a) == 0);
  rpe_colormap_map (v, 7.0, a);
  g_assert_true (memcmp (a, b, sizeof a) == 0);
}

/* ----------------------------------------------------------------- render */

static void
test_render_extremes (void)
{
  const gsize rows = 37, cols = 53;
  float *values = g_new (float, rows * cols);
  const RpeColormap *cmaps[] = { rpe_colormap_lookup ("viridis"), rpe_colormap_lookup ("magma"),
                                 rpe_colormap_lookup ("cividis") };
  RpeHeatmapData data;

  /* A smooth field with one maximum at (5, 40) and one minimum at (30, 7). */
  for (gsize m = 0; m < rows; m++)
    for (gsize n = 0; n < cols; n++)
      values[m * cols + n] = (float) (0.3 * sin (0.2 * m + 0.1 * n));
  values[5 * cols + 40] = 2.5f;
  values[30 * cols + 7] = -1.25f;

  for (gsize c = 0; c < G_N_ELEMENTS (cmaps); c++)
    {
      RpePlotRect image;
      cairo_surface_t *surface;
      double x, y, vmin, vmax;

      rpe_heatmap_data_init (&data);
      data.values = values;
      data.rows = rows;
      data.cols = cols;
      data.title = "extremes";
      data.colormap = cmaps[c];
      data.scale = RPE_HEATMAP_SCALE_LINEAR;
      data.train_length = 20;

      g_assert_true (rpe_plot_heatmap_range (&data, &vmin, &vmax, NULL));
      g_assert_cmpfloat (vmin, ==, -1.25);
      g_assert_cmpfloat (vmax, ==, 2.5);

      surface = render (&data, 640, 480, &image);
      /* Data smaller than the image: every cell covers whole pixels. */
      g_assert_cmpfloat (image.width, >, cols);
      g_assert_cmpfloat (image.height, >, rows);

      cell_centre (&image, rows, cols, 5, 40, &x, &y);
      g_assert_cmphex (pixel_at (surface, x, y), ==, entry_pixel (cmaps[c], 1.0));
      cell_centre (&image, rows, cols, 30, 7, &x, &y);
      g_assert_cmphex (pixel_at (surface, x, y), ==, entry_pixel (cmaps[c], 0.0));
      /* An ordinary cell is neither. */
      cell_centre (&image, rows, cols, 20, 20, &x, &y);
      g_assert_cmphex (pixel_at (surface, x, y), !=, entry_pixel (cmaps[c], 1.0));
      g_assert_cmphex (pixel_at (surface, x, y), !=, entry_pixel (cmaps[c], 0.0));
      /* and its colour is the map's at its own value */
      g_assert_cmphex (pixel_at (surface, x, y), ==,
                       entry_pixel (cmaps[c], (values[20 * cols + 20] - vmin) / (vmax - vmin)));
      cairo_surface_destroy (surface);
    }

  /* Signed data, symmetric scale: the diverging map, 0 at its centre,
   * max |v| on top (the data's maximum here) and -max |v| at the bottom. */
  values[30 * cols + 7] = -2.5f;
  {
    RpePlotRect image;
    cairo_surface_t *surface;
    const RpeColormap *cmap = NULL;
    double x, y, vmin, vmax;

    rpe_heatmap_data_init (&data);
    data.values = values;
    data.rows = rows;
    data.cols = cols;
    g_assert_true (rpe_plot_heatmap_range (&data, &vmin, &vmax, &cmap));
    g_assert_true (cmap == rpe_colormap_default_diverging ());
    g_assert_cmpfloat (vmin, ==, -2.5);
    g_assert_cmpfloat (vmax, ==, 2.5);
    surface = render (&data, 500, 500, &image);
    cell_centre (&image, rows, cols, 5, 40, &x, &y);
    g_assert_cmphex (pixel_at (surface, x, y), ==, entry_pixel (cmap, 1.0));
    cell_centre (&image, rows, cols, 30, 7, &x, &y);
    g_assert_cmphex (pixel_at (surface, x, y), ==, entry_pixel (cmap, 0.0));
    cairo_surface_destroy (surface);
  }
  g_free (values);
}

static void
test_render_reduce (void)
{
  /* More cells than pixels: 1500 x 1300 cells into a ~300 px image. */
  const gsize rows = 1500, cols = 1300;
  float *values = g_new0 (float, rows * cols);
  const RpeColormap *cmap = rpe_colormap_default ();
  RpeHeatmapData data;
  RpePlotRect image;
  cairo_surface_t *surface;
  double x, y;
  gsize iw, ih, j;

  /* A ramp along n, and one spike. */
  for (gsize m = 0; m < rows; m++)
    for (gsize n = 0; n < cols; n++)
      values[m * cols + n] = (float) n;
  values[777 * cols + 901] = 5000.0f;

  rpe_heatmap_data_init (&data);
  data.values = values;
  data.rows = rows;
  data.cols = cols;
  data.scale = RPE_HEATMAP_SCALE_LINEAR;
  data.fixed_range = true;
  data.vmin = 0.0;
  data.vmax = 5000.0;

  /* The budget allows the output image but not a copy of the data: the
   * renderer must not allocate anything data-sized. */
  rpe_budget_set (2u << 20);

  data.reduce = RPE_HEATMAP_REDUCE_MAX;
  surface = render (&data, 380, 360, &image);
  iw = (gsize) image.width;
  ih = (gsize) image.height;
  g_assert_cmpuint (iw, <, cols);
  g_assert_cmpuint (ih, <, rows);
  cell_centre (&image, rows, cols, 777, 901, &x, &y);
  g_assert_cmphex (pixel_at (surface, x, y), ==, entry_pixel (cmap, 1.0));
  cairo_surface_destroy (surface);

  data.reduce = RPE_HEATMAP_REDUCE_MEAN;
  surface = render (&data, 380, 360, &image);
  cell_centre (&image, rows, cols, 777, 901, &x, &y);
  g_assert_cmphex (pixel_at (surface, x, y), !=, entry_pixel (cmap, 1.0));
  /* Mean of the ramp over the columns whose centres fall in output pixel j
   * (row 10, far from the spike), found by scanning every column. */
  for (j = 1; j + 1 < iw; j += 37)   /* skip the frame columns */
    {
      double sum = 0.0;
      gsize count = 0;

      for (gsize c = 0; c < cols; c++)
        if ((gsize) floor ((c + 0.5) * iw / cols) == j)
          {
            sum += c;
            count++;
          }
      g_assert_cmpuint (count, >=, 1);
      g_assert_cmphex (pixel_at (surface, image.x + j + 0.5, image.y + 10.5), ==,
                       entry_pixel (cmap, sum / count / 5000.0));
    }
  cairo_surface_destroy (surface);

  /* MAX_ABS keeps the sign of the largest magnitude. */
  values[100 * cols + 100] = -5000.0f;
  data.reduce = RPE_HEATMAP_REDUCE_MAX_ABS;
  data.vmin = -5000.0;
  surface = render (&data, 380, 360, &image);
  cell_centre (&image, rows, cols, 100, 100, &x, &y);
  g_assert_cmphex (pixel_at (surface, x, y), ==, entry_pixel (cmap, 0.0));
  cairo_surface_destroy (surface);

  rpe_budget_set (0);
  g_free (values);
}

/* The mean of the cells whose centres fall in each pixel, non-finite cells skipped, every
 * pixel checked against a naive scan (values multiples of 1/64, so every sum is exact in any
 * order); a pixel whose cells are all NaN or infinite is the NaN grey.  Also the packed
 * table the renderer maps with equals rpe_colormap_map_u8 for every map. */
static void
test_render_reduce_mean (void)
{
  const gsize rows = 301, cols = 257;
  g_autofree float *values = g_new (float, rows * cols);
  const RpeColormap *cmap = rpe_colormap_default ();
  RpeHeatmapData data;
  RpePlotRect image;
  cairo_surface_t *surface;
  guint32 state = 12345, lut[RPE_COLORMAP_SIZE];
  gsize iw, ih, grey = 0;

  for (int id = 0; id < RPE_COLORMAP_N_MAPS; id++)
    {
      const RpeColormap *m = rpe_colormap_get ((RpeColormapId) id);

      rpe_colormap_rgb24_table (m, lut);
      for (int k = -10; k <= 1034; k++)
        {
          double t = k / 1024.0;

          g_assert_cmphex (lut[rpe_colormap_index (t)], ==, entry_pixel (m, t));
        }
      g_assert_cmphex (lut[rpe_colormap_index (NAN)], ==, entry_pixel (m, NAN));
    }

  for (gsize i = 0; i < rows * cols; i++)
    {
      state = state * 1664525u + 1013904223u;
      values[i] = (float) ((state >> 24) % 256) / 64.0f;   /* [0, 4) */
    }
  for (gsize i = 0; i < rows * cols; i += 97)
    values[i] = i % 3 ? NAN : (i % 2 ? INFINITY : -INFINITY);
  for (gsize n = 0; n < cols; n++)
    values[40 * cols + n] = NAN;                /* a whole row */
  for (gsize m = 100; m < 140; m++)
    for (gsize n = 50; n < 90; n++)
      values[m * cols + n] = NAN;               /* whole pixels of NaN */

  rpe_heatmap_data_init (&data);
  data.values = values;
  data.rows = rows;
  data.cols = cols;
  data.scale = RPE_HEATMAP_SCALE_LINEAR;
  data.fixed_range = true;
  data.vmin = 0.0;
  data.vmax = 4.0;
  data.show_axes = false;
  data.show_colorbar = false;
  data.reduce = RPE_HEATMAP_REDUCE_MEAN;
  surface = render (&data, 110, 120, &image);
  /* one image pixel per surface pixel */
  g_assert_cmpfloat (image.width, ==, floor (image.width));
  g_assert_cmpfloat (image.height, ==, floor (image.height));
  g_assert_cmpfloat (image.x, ==, floor (image.x));
  g_assert_cmpfloat (image.y, ==, floor (image.y));
  iw = (gsize) image.width;
  ih = (gsize) image.height;
  g_assert_cmpuint (iw, <, cols / 2);
  g_assert_cmpuint (ih, <, rows / 2);
  /* the frame is drawn over the outermost pixels: the inside only */
  for (gsize i = 1; i + 1 < ih; i++)
    for (gsize j = 1; j + 1 < iw; j++)
      {
        double sum = 0.0;
        gsize count = 0;
        guint32 want;

        for (gsize m = 0; m < rows; m++)
          if ((gsize) floor ((m + 0.5) * ih / rows) == i)
            for (gsize n = 0; n < cols; n++)
              if ((gsize) floor ((n + 0.5) * iw / cols) == j && isfinite (values[m * cols + n]))
                {
                  sum += values[m * cols + n];
                  count++;
                }
        want = count > 0 ? entry_pixel (cmap, sum / count / 4.0) : 0x808080u;
        grey += count == 0;
        g_assert_cmphex (pixel_at (surface, image.x + j + 0.5, image.y + i + 0.5), ==, want);
      }
  g_assert_cmpuint (grey, >, 0);
  cairo_surface_destroy (surface);
}

/* Text measures are remembered per thread by everything they depend on: a repeated measure
 * is the same, and a change of font size, weight, matrix or text is not served a stale one. */
static void
test_text_memo (void)
{
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 10, 10);
  cairo_t *cr = cairo_create (surface);
  double w10, w20, bold, scaled, other, a10, d10, a20, d20;

  rpe_plot_use_figure_fonts (cr);
  cairo_select_font_face (cr, "Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, 10.0);
  w10 = rpe_text_width (cr, "N<sub>train</sub> = 512");
  rpe_text_metrics (cr, &a10, &d10);
  g_assert_cmpfloat (w10, >, 0.0);
  g_assert_cmpfloat (rpe_text_width (cr, "N<sub>train</sub> = 512"), ==, w10);
  other = rpe_text_width (cr, "N<sub>train</sub> = 513");
  g_assert_cmpfloat (other, >, 0.0);
  cairo_set_font_size (cr, 20.0);
  w20 = rpe_text_width (cr, "N<sub>train</sub> = 512");
  rpe_text_metrics (cr, &a20, &d20);
  g_assert_cmpfloat (fabs (w20 - 2.0 * w10), <, 0.01);   /* Pango units: 1/1024 */
  g_assert_cmpfloat (fabs (a20 - 2.0 * a10), <, 0.01);
  g_assert_cmpfloat (fabs (d20 - 2.0 * d10), <, 0.01);
  cairo_select_font_face (cr, "Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
  bold = rpe_text_width (cr, "N<sub>train</sub> = 512");
  g_assert_cmpfloat (bold, >, w20);
  cairo_select_font_face (cr, "Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, 10.0);
  cairo_scale (cr, 3.0, 3.0);
  scaled = rpe_text_width (cr, "N<sub>train</sub> = 512");   /* user units: the same */
  g_assert_cmpfloat (fabs (scaled - w10), <, 0.01);
  cairo_destroy (cr);
  cairo_surface_destroy (surface);
}

static void
test_render_pure (void)
{
  const gsize rows = 64, cols = 64;
  float *values = g_new (float, rows * cols);
  RpeHeatmapData data;
  cairo_surface_t *a, *b;
  cairo_t *cr;
  cairo_matrix_t before, after;
  int size;

  for (gsize m = 0; m < rows; m++)
    for (gsize n = 0; n < cols; n++)
      values[m * cols + n] = (float) cos (0.3 * ((double) m - (double) n));
  values[3] = NAN;

  rpe_heatmap_data_init (&data);
  data.values = values;
  data.rows = rows;
  data.cols = cols;
  data.title = "d = 0";
  data.train_length = 32;

  a = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 300, 260);
  b = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 300, 260);
  cr = cairo_create (a);
  cairo_translate (cr, 0.0, 0.0);
  cairo_get_matrix (cr, &before);
  rpe_plot_render_heatmap (cr, &data, 300, 260);
  cairo_get_matrix (cr, &after);
  g_assert_true (memcmp (&before, &after, sizeof before) == 0);
  g_assert_cmpint (cairo_status (cr), ==, CAIRO_STATUS_SUCCESS);
  cairo_destroy (cr);
  cr = cairo_create (b);
  rpe_plot_render_heatmap (cr, &data, 300, 260);
  cairo_destroy (cr);

  /* Same input, same pixels. */
  cairo_surface_flush (a);
  cairo_surface_flush (b);
  size = cairo_image_surface_get_stride (a) * 260;
  g_assert_true (memcmp (cairo_image_surface_get_data (a), cairo_image_surface_get_data (b), size) == 0);
  cairo_surface_destroy (a);
  cairo_surface_destroy (b);

  /* Degenerate inputs draw nothing and do not fail. */
  a = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 20, 20);
  cr = cairo_create (a);
  data.rows = 0;
  rpe_plot_render_heatmap (cr, &data, 20, 20);
  data.rows = rows;
  rpe_plot_render_heatmap (cr, &data, 3, 3);
  g_assert_false (rpe_plot_heatmap_layout (cr, &data, 3, 3, NULL, NULL));
  g_assert_cmpint (cairo_status (cr), ==, CAIRO_STATUS_SUCCESS);
  cairo_destroy (cr);
  cairo_surface_destroy (a);
  g_free (values);
}

int
main (int   argc,
      char *argv[])
{
  int ret;

  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/ui/colormap/tables", test_colormap_tables);
  g_test_add_func ("/ui/colormap/lightness", test_colormap_lightness);
  g_test_add_func ("/ui/colormap/lookup", test_colormap_lookup);
  g_test_add_func ("/ui/render/extremes", test_render_extremes);
  g_test_add_func ("/ui/render/reduce", test_render_reduce);
  g_test_add_func ("/ui/render/reduce-mean", test_render_reduce_mean);
  g_test_add_func ("/ui/render/pure", test_render_pure);
  g_test_add_func ("/ui/render/text-memo", test_text_memo);

  ret = g_test_run ();
  /* Drop the figure fonts so leak checkers see only our own allocations.  (Cairo's own
   * static caches are not reset: Pango, which lays out the figures' text, finishes its
   * fontconfig set-up on a thread of its own and may hold fonts until exit, and
   * cairo_debug_reset_static_data asserts that no font is alive; they are reachable,
   * not leaked.) */
  rpe_text_release_fonts ();
  return ret;
}

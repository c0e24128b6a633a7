/* rpe-plot-render.c: Cairo renderers for RPE Studio's plots (GTK-free). */
#include "config.h"

#include "rpe-plot-render.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rpe-alloc.h"

#define FONT_FAMILY   "Sans"
#define MAX_TICKS     32
#define NAN_PIXEL     0x808080u   /* cells without a finite value */

void
rpe_heatmap_data_init (RpeHeatmapData *data)
{
  memset (data, 0, sizeof *data);
  data->scale = RPE_HEATMAP_SCALE_AUTO;
  data->reduce = RPE_HEATMAP_REDUCE_MEAN;
  data->show_colorbar = true;
  data->show_axes = true;
  data->foreground[3] = 1.0;
}

/* ------------------------------------------------------------------ range */

static bool
data_is_usable (const RpeHeatmapData *data)
{
  size_t count;

  return data != NULL && data->values != NULL && data->rows > 0 && data->cols > 0
         && rpe_size_mul (data->rows, data->cols, &count);
}

static bool
is_symmetric (const RpeHeatmapData *data,
              double                lo,
              double                hi)
{
  switch (data->scale)
    {
    case RPE_HEATMAP_SCALE_SYMMETRIC:
      return true;
    case RPE_HEATMAP_SCALE_LINEAR:
      return false;
    case RPE_HEATMAP_SCALE_AUTO:
    default:
      return lo < 0.0 && hi > 0.0;
    }
}

bool
rpe_plot_heatmap_range (const RpeHeatmapData  *data,
                        double                *vmin,
                        double                *vmax,
                        const RpeColormap    **colormap)
{
  double lo = INFINITY, hi = -INFINITY;
  const RpeColormap *cmap;
  bool symmetric;

  if (!data_is_usable (data))
    return false;

  if (data->fixed_range && isfinite (data->vmin) && isfinite (data->vmax)
      && data->vmin <= data->vmax)
    {
      lo = data->vmin;
      hi = data->vmax;
    }
  else
    {
      size_t count = data->rows * data->cols;

      for (size_t i = 0; i < count; i++)
        {
          double v = data->values[i];

          if (!isfinite (v))
            continue;
          if (v < lo)
            lo = v;
          if (v > hi)
            hi = v;
        }
      if (!(lo <= hi))
        return false;
    }

  symmetric = is_symmetric (data, lo, hi);
  if (symmetric)
    {
      double a = fmax (fabs (lo), fabs (hi));

      lo = -a;
      hi = a;
    }
  if (!(hi > lo))
    {
      /* Constant data: centre it in a unit-wide (or value-wide) range. */
      double half = lo != 0.0 ? 0.5 * fabs (lo) : 0.5;

      lo -= half;
      hi += half;
    }

  cmap = data->colormap;
  if (cmap == NULL)
    cmap = symmetric ? rpe_colormap_default_diverging () : rpe_colormap_default ();

  if (vmin != NULL)
    *vmin = lo;
  if (vmax != NULL)
    *vmax = hi;
  if (colormap != NULL)
    *colormap = cmap;
  return true;
}

/* ------------------------------------------------------------------ ticks */

static double
nice_step (double range,
           double target)
{
  double raw, mag, f;

  if (!(range > 0.0) || !(target >= 1.0))
    return 1.0;
  raw = range / target;
  mag = pow (10.0, floor (log10 (raw)));
  f = raw / mag;
  if (f <= 1.0)
    f = 1.0;
  else if (f <= 2.0)
    f = 2.0;
  else if (f <= 5.0)
    f = 5.0;
  else
    f = 10.0;
  return f * mag;
}

/* Integer position ticks in [0, n-1]; returns how many were written. */
static size_t
position_ticks (size_t  n,
                double  target,
                size_t *ticks)
{
  double step = nice_step ((double) (n > 1 ? n - 1 : 1), target);
  size_t istep = step < 1.0 ? 1 : (size_t) llround (step);
  size_t count = 0;

  if (istep == 0)
    istep = 1;
  for (size_t p = 0; p < n && count < MAX_TICKS; p += istep)
    {
      ticks[count++] = p;
      if (p > SIZE_MAX - istep)
        break;
    }
  return count;
}

static size_t
value_ticks (double  lo,
             double  hi,
             double  target,
             double *ticks,
             double *step_out)
{
  double step = nice_step (hi - lo, target);
  double first = ceil (lo / step - 1e-9) * step;
  size_t count = 0;

  for (double v = first; v <= hi + step * 1e-9 && count < MAX_TICKS; v = first + step * (double) count)
    ticks[count++] = fabs (v) < step * 1e-9 ? 0.0 : v;
  *step_out = step;
  return count;
}

static void
format_value (char   *buf,
              size_t  size,
              double  v,
              double  step,
              double  magnitude)
{
  if (magnitude >= 1e5 || (magnitude > 0.0 && magnitude < 1e-3))
    {
      snprintf (buf, size, "%.1e", v);
      return;
    }
  int decimals = step >= 1.0 ? 0 : (int) ceil (-log10 (step) - 1e-9);
  if (decimals > 6)
    decimals = 6;
  snprintf (buf, size, "%.*f", decimals, v == 0.0 ? 0.0 : v);
}

/* ----------------------------------------------------------------- layout */

typedef struct
{
  double            font;        /* tick label size */
  double            offset_x;    /* shift of the plot when centred (equal aspect) */
  double            offset_y;
  double            title_font;
  double            tick;        /* tick length */
  double            gap;
  RpePlotRect       image;
  RpePlotRect       bar;
  size_t            n_xticks, n_yticks, n_bticks;
  size_t            xticks[MAX_TICKS];
  size_t            yticks[MAX_TICKS];
  double            bticks[MAX_TICKS];
  double            bstep;
  double            vmin, vmax;
  const RpeColormap *cmap;
} Layout;

static double
text_width (cairo_t    *cr,
            const char *text)
{
  cairo_text_extents_t ext;

  cairo_text_extents (cr, text, &ext);
  return ext.x_advance;
}

static const char *
x_label_of (const RpeHeatmapData *data)
{
  return data->x_label != NULL ? data->x_label : "key position n";
}

static const char *
y_label_of (const RpeHeatmapData *data)
{
  return data->y_label != NULL ? data->y_label : "query position m";
}

/* Sets cr's font; caller saves/restores. */
static bool
compute_layout (cairo_t              *cr,
                const RpeHeatmapData *data,
                double                width,
                double                height,
                Layout               *lay)
{
  double left, right, top, bottom;
  double label_h;
  char buf[64];

  memset (lay, 0, sizeof *lay);
  if (!(width > 0.0) || !(height > 0.0))
    return false;
  if (!rpe_plot_heatmap_range (data, &lay->vmin, &lay->vmax, &lay->cmap))
    return false;

  lay->font = fmin (12.0, fmax (7.0, fmin (width, height) / 26.0));
  lay->title_font = lay->font * 1.15;
  lay->tick = fmax (2.0, lay->font * 0.35);
  lay->gap = fmax (2.0, lay->font * 0.3);
  label_h = lay->font * 1.2;

  cairo_select_font_face (cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, lay->font);

  left = right = bottom = top = lay->gap;
  if (data->title != NULL && data->title[0] != '\0')
    top += lay->title_font * 1.25 + lay->gap;
  if (data->train_length > 0)
    top += label_h;

  if (data->show_axes)
    {
      size_t widest = (data->rows > 0 ? data->rows - 1 : 0);

      snprintf (buf, sizeof buf, "%zu", widest);
      left += label_h + lay->gap + text_width (cr, buf) + lay->gap + lay->tick;
      bottom += lay->tick + lay->gap + label_h + lay->gap + label_h;
      /* The last x tick label may stick out to the right of the image. */
      snprintf (buf, sizeof buf, "%zu", data->cols > 0 ? data->cols - 1 : 0);
      right = fmax (right, text_width (cr, buf) / 2.0);
    }

  if (data->show_colorbar)
    {
      double bar_w = fmax (6.0, lay->font * 1.1);
      double widest = 0.0, mag = fmax (fabs (lay->vmin), fabs (lay->vmax));
      double plot_h = height - top - bottom;

      lay->n_bticks = value_ticks (lay->vmin, lay->vmax, fmax (2.0, fmin (8.0, plot_h / (label_h * 2.5))),
                                   lay->bticks, &lay->bstep);
      for (size_t i = 0; i < lay->n_bticks; i++)
        {
          format_value (buf, sizeof buf, lay->bticks[i], lay->bstep, mag);
          widest = fmax (widest, text_width (cr, buf));
        }
      right = lay->gap + lay->gap * 2.0 + bar_w + lay->tick + lay->gap + widest + lay->gap;
      lay->bar.width = bar_w;
    }

  lay->image.x = round (left);
  lay->image.y = round (top);
  lay->image.width = floor (width - right) - lay->image.x;
  lay->image.height = floor (height - bottom) - lay->image.y;
  if (lay->image.width < 4.0 || lay->image.height < 4.0)
    return false;

  if (data->equal_aspect)
    {
      double cell = fmin (lay->image.width / (double) data->cols, lay->image.height / (double) data->rows);
      double w = fmax (4.0, floor (cell * (double) data->cols));
      double h = fmax (4.0, floor (cell * (double) data->rows));

      /* Centre the whole plot (labels move with the image). */
      lay->offset_x = floor ((lay->image.width - w) / 2.0);
      lay->offset_y = floor ((lay->image.height - h) / 2.0);
      lay->image.x += lay->offset_x;
      lay->image.y += lay->offset_y;
      lay->image.width = w;
      lay->image.height = h;
    }

  if (data->show_colorbar)
    {
      lay->bar.x = lay->image.x + lay->image.width + lay->gap * 3.0;
      lay->bar.y = lay->image.y;
      lay->bar.height = lay->image.height;
    }

  if (data->show_axes)
    {
      snprintf (buf, sizeof buf, "%zu", data->cols > 0 ? data->cols - 1 : 0);
      lay->n_xticks = position_ticks (data->cols,
                                      fmax (1.0, fmin (10.0, lay->image.width / (text_width (cr, buf) * 2.5 + 1.0))),
                                      lay->xticks);
      lay->n_yticks = position_ticks (data->rows,
                                      fmax (1.0, fmin (10.0, lay->image.height / (label_h * 2.5))),
                                      lay->yticks);
    }
  return true;
}

bool
rpe_plot_heatmap_layout (cairo_t              *cr,
                         const RpeHeatmapData *data,
                         double                width,
                         double                height,
                         RpePlotRect          *image,
                         RpePlotRect          *colorbar)
{
  Layout lay;
  bool ok;

  cairo_save (cr);
  ok = compute_layout (cr, data, width, height, &lay);
  cairo_restore (cr);
  if (image != NULL)
    *image = lay.image;
  if (colorbar != NULL)
    *colorbar = lay.bar;
  return ok;
}

/* ------------------------------------------------------------------ image */

static uint32_t
pixel_of (double             v,
          double             vmin,
          double             vmax,
          const RpeColormap *cmap)
{
  uint8_t rgb[3];

  if (!isfinite (v))
    return NAN_PIXEL;
  rpe_colormap_map_u8 (cmap, (v - vmin) / (vmax - vmin), rgb);
  return ((uint32_t) rgb[0] << 16) | ((uint32_t) rgb[1] << 8) | rgb[2];
}

/* Reduces the cells [r0, r1) x [c0, c1) to one value. */
static double
reduce_block (const RpeHeatmapData *data,
              size_t                r0,
              size_t                r1,
              size_t                c0,
              size_t                c1)
{
  double sum = 0.0, best = NAN;
  size_t count = 0;

  for (size_t r = r0; r < r1; r++)
    {
      const float *row = data->values + r * data->cols;

      for (size_t c = c0; c < c1; c++)
        {
          double v = row[c];

          if (!isfinite (v))
            continue;
          count++;
          switch (data->reduce)
            {
            case RPE_HEATMAP_REDUCE_MAX:
              if (!(best >= v))
                best = v;
              break;
            case RPE_HEATMAP_REDUCE_MAX_ABS:
              if (!(fabs (best) >= fabs (v)))
                best = v;
              break;
            case RPE_HEATMAP_REDUCE_MEAN:
            default:
              sum += v;
              break;
            }
        }
    }
  if (count == 0)
    return NAN;
  if (data->reduce == RPE_HEATMAP_REDUCE_MAX || data->reduce == RPE_HEATMAP_REDUCE_MAX_ABS)
    return best;
  return sum / (double) count;
}

/* Pixel p of `pixels` shows the cells whose centres fall in it: cells c with
 * p <= (c + 1/2) pixels / cells < p + 1.  Returns the first such c (cells >= pixels,
 * so every pixel gets at least one cell). */
static size_t
block_start (size_t p,
             size_t cells,
             size_t pixels)
{
  size_t num = 2 * p * cells;

  if (num <= pixels)
    return 0;
  return (num - pixels + 2 * pixels - 1) / (2 * pixels);
}

/* An image of at most iw x ih pixels (never more than the data has cells). */
static cairo_surface_t *
make_image (const RpeHeatmapData *data,
            const Layout         *lay,
            size_t                iw,
            size_t                ih)
{
  cairo_surface_t *surface;
  unsigned char *pixels;
  size_t bytes, tmp;
  int stride;

  if (iw > data->cols)
    iw = data->cols;
  if (ih > data->rows)
    ih = data->rows;
  if (iw == 0 || ih == 0 || iw > INT32_MAX / 4 || ih > INT32_MAX)
    return NULL;
  /* Index arithmetic below multiplies 2 * pixels * cells. */
  if (!rpe_size_mul (iw, data->cols, &tmp) || !rpe_size_mul (tmp, 2, &tmp)
      || !rpe_size_mul (ih, data->rows, &tmp) || !rpe_size_mul (tmp, 2, &tmp))
    return NULL;
  if (rpe_size_bytes (&bytes, 4, iw, ih, 1, 1) != RPE_OK || rpe_budget_check (bytes) != RPE_OK)
    return NULL;

  surface = cairo_image_surface_create (CAIRO_FORMAT_RGB24, (int) iw, (int) ih);
  if (cairo_surface_status (surface) != CAIRO_STATUS_SUCCESS)
    {
      cairo_surface_destroy (surface);
      return NULL;
    }
  cairo_surface_flush (surface);
  pixels = cairo_image_surface_get_data (surface);
  stride = cairo_image_surface_get_stride (surface);

  for (size_t i = 0; i < ih; i++)
    {
      uint32_t *out = (uint32_t *) (void *) (pixels + (size_t) stride * i);
      size_t r0 = block_start (i, data->rows, ih), r1 = block_start (i + 1, data->rows, ih);

      for (size_t j = 0; j < iw; j++)
        {
          size_t c0 = block_start (j, data->cols, iw), c1 = block_start (j + 1, data->cols, iw);
          double v;

          if (r1 - r0 == 1 && c1 - c0 == 1)
            v = data->values[r0 * data->cols + c0];
          else
            v = reduce_block (data, r0, r1, c0, c1);
          out[j] = pixel_of (v, lay->vmin, lay->vmax, lay->cmap);
        }
    }
  cairo_surface_mark_dirty (surface);
  return surface;
}

static cairo_surface_t *
make_colorbar (const RpeColormap *cmap)
{
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 1, RPE_COLORMAP_SIZE);
  unsigned char *pixels;
  int stride;

  if (cairo_surface_status (surface) != CAIRO_STATUS_SUCCESS)
    {
      cairo_surface_destroy (surface);
      return NULL;
    }
  cairo_surface_flush (surface);
  pixels = cairo_image_surface_get_data (surface);
  stride = cairo_image_surface_get_stride (surface);
  for (size_t i = 0; i < RPE_COLORMAP_SIZE; i++)
    {
      double rgb[3];
      uint32_t px = 0;

      /* Row 0 (top) is the map's top entry. */
      rpe_colormap_entry (cmap, RPE_COLORMAP_SIZE - 1 - i, rgb);
      for (int c = 0; c < 3; c++)
        px = (px << 8) | (uint32_t) lround (fmin (1.0, fmax (0.0, rgb[c])) * 255.0);
      *(uint32_t *) (void *) (pixels + (size_t) stride * i) = px;
    }
  cairo_surface_mark_dirty (surface);
  return surface;
}

static void
paint_surface (cairo_t           *cr,
               cairo_surface_t   *surface,
               const RpePlotRect *rect)
{
  int sw = cairo_image_surface_get_width (surface);
  int sh = cairo_image_surface_get_height (surface);

  cairo_save (cr);
  cairo_rectangle (cr, rect->x, rect->y, rect->width, rect->height);
  cairo_clip (cr);
  cairo_translate (cr, rect->x, rect->y);
  cairo_scale (cr, rect->width / sw, rect->height / sh);
  cairo_set_source_surface (cr, surface, 0, 0);
  cairo_pattern_set_filter (cairo_get_source (cr), CAIRO_FILTER_NEAREST);
  cairo_pattern_set_extend (cairo_get_source (cr), CAIRO_EXTEND_PAD);
  cairo_paint (cr);
  cairo_restore (cr);
}

/* ------------------------------------------------------------------- text */

static void
show_text_at (cairo_t    *cr,
              const char *text,
              double      x,
              double      y,
              double      xalign,   /* 0 left, 0.5 centre, 1 right of x */
              double      yalign)   /* 0 top, 0.5 middle, 1 bottom at y */
{
  cairo_font_extents_t fext;
  double w = text_width (cr, text);

  cairo_font_extents (cr, &fext);
  cairo_move_to (cr, x - w * xalign, y + fext.ascent - (fext.ascent + fext.descent) * yalign);
  cairo_show_text (cr, text);
  cairo_new_path (cr);
}

static void
set_fg (cairo_t              *cr,
        const RpeHeatmapData *data,
        double                alpha)
{
  cairo_set_source_rgba (cr, data->foreground[0], data->foreground[1], data->foreground[2],
                         data->foreground[3] * alpha);
}

/* ----------------------------------------------------------------- render */

void
rpe_plot_render_heatmap (cairo_t              *cr,
                         const RpeHeatmapData *data,
                         double                width,
                         double                height)
{
  Layout lay;
  cairo_surface_t *image;
  const RpePlotRect *im;
  double dw, dh;
  size_t iw, ih;
  char buf[64];

  if (cr == NULL || data == NULL)
    return;

  cairo_save (cr);
  cairo_rectangle (cr, 0, 0, width, height);
  cairo_clip (cr);
  if (data->background[3] > 0.0)
    {
      cairo_set_source_rgba (cr, data->background[0], data->background[1],
                             data->background[2], data->background[3]);
      cairo_paint (cr);
    }

  if (!compute_layout (cr, data, width, height, &lay))
    {
      cairo_restore (cr);
      return;
    }
  im = &lay.image;

  /* The image has one pixel per device pixel of the plot area at most, one
   * pixel per cell at least when the data is smaller. */
  dw = im->width;
  dh = im->height;
  cairo_user_to_device_distance (cr, &dw, &dh);
  dw = ceil (fabs (dw));
  dh = ceil (fabs (dh));
  iw = dw < 1.0 ? 1 : dw > 1e7 ? 10000000 : (size_t) dw;
  ih = dh < 1.0 ? 1 : dh > 1e7 ? 10000000 : (size_t) dh;

  image = make_image (data, &lay, iw, ih);
  if (image != NULL)
    {
      paint_surface (cr, image, im);
      cairo_surface_destroy (image);
    }

  cairo_set_line_width (cr, 1.0);
  cairo_set_line_cap (cr, CAIRO_LINE_CAP_BUTT);

  /* Training length N_train: dashed lines at the boundary between position
   * N_train - 1 and N_train (positions beyond it are extrapolation). */
  if (data->train_length > 0)
    {
      static const double dash[] = { 4.0, 3.0 };
      double x = im->x + im->width * (double) data->train_length / (double) data->cols;
      double y = im->y + im->height * (double) data->train_length / (double) data->rows;

      cairo_save (cr);
      cairo_rectangle (cr, im->x, im->y, im->width, im->height);
      cairo_clip (cr);
      for (int pass = 0; pass < 2; pass++)
        {
          if (pass == 0)
            {
              cairo_set_source_rgba (cr, 0, 0, 0, 0.55);
              cairo_set_line_width (cr, 3.0);
              cairo_set_dash (cr, NULL, 0, 0);
            }
          else
            {
              cairo_set_source_rgb (cr, 1, 1, 1);
              cairo_set_line_width (cr, 1.5);
              cairo_set_dash (cr, dash, 2, 0);
            }
          if (data->train_length < data->cols)
            {
              cairo_move_to (cr, x, im->y);
              cairo_line_to (cr, x, im->y + im->height);
            }
          if (data->train_length < data->rows)
            {
              cairo_move_to (cr, im->x, y);
              cairo_line_to (cr, im->x + im->width, y);
            }
          cairo_stroke (cr);
        }
      cairo_restore (cr);

      set_fg (cr, data, 1.0);
      snprintf (buf, sizeof buf, "N_train = %zu", data->train_length);
      cairo_set_font_size (cr, lay.font * 0.9);
      show_text_at (cr, buf, data->train_length < data->cols ? fmin (x, im->x + im->width) : im->x + im->width,
                    im->y - lay.gap, data->train_length < data->cols ? 0.5 : 1.0, 1.0);
      cairo_set_font_size (cr, lay.font);
    }

  /* Frame. */
  set_fg (cr, data, 0.8);
  cairo_rectangle (cr, im->x + 0.5, im->y + 0.5, im->width - 1.0, im->height - 1.0);
  cairo_stroke (cr);

  if (data->title != NULL && data->title[0] != '\0')
    {
      cairo_save (cr);
      cairo_select_font_face (cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
      cairo_set_font_size (cr, lay.title_font);
      set_fg (cr, data, 1.0);
      show_text_at (cr, data->title, im->x + im->width / 2.0, lay.gap + lay.offset_y, 0.5, 0.0);
      cairo_restore (cr);
    }

  if (data->show_axes)
    {
      double label_h = lay.font * 1.2;

      set_fg (cr, data, 1.0);
      for (size_t i = 0; i < lay.n_xticks; i++)
        {
          double x = round (im->x + im->width * ((double) lay.xticks[i] + 0.5) / (double) data->cols) + 0.5;

          cairo_move_to (cr, x, im->y + im->height);
          cairo_line_to (cr, x, im->y + im->height + lay.tick);
          cairo_stroke (cr);
          snprintf (buf, sizeof buf, "%zu", lay.xticks[i]);
          show_text_at (cr, buf, x, im->y + im->height + lay.tick + lay.gap, 0.5, 0.0);
        }
      for (size_t i = 0; i < lay.n_yticks; i++)
        {
          double y = round (im->y + im->height * ((double) lay.yticks[i] + 0.5) / (double) data->rows) + 0.5;

          cairo_move_to (cr, im->x, y);
          cairo_line_to (cr, im->x - lay.tick, y);
          cairo_stroke (cr);
          snprintf (buf, sizeof buf, "%zu", lay.yticks[i]);
          show_text_at (cr, buf, im->x - lay.tick - lay.gap, y, 1.0, 0.5);
        }
      show_text_at (cr, x_label_of (data), im->x + im->width / 2.0,
                    im->y + im->height + lay.tick + lay.gap + label_h + lay.gap, 0.5, 0.0);

      cairo_save (cr);
      cairo_translate (cr, lay.gap + lay.offset_x, im->y + im->height / 2.0);
      cairo_rotate (cr, -M_PI_2);
      show_text_at (cr, y_label_of (data), 0, 0, 0.5, 0.0);
      cairo_restore (cr);
    }

  if (data->show_colorbar)
    {
      cairo_surface_t *bar = make_colorbar (lay.cmap);
      const RpePlotRect *b = &lay.bar;
      double mag = fmax (fabs (lay.vmin), fabs (lay.vmax));

      if (bar != NULL)
        {
          paint_surface (cr, bar, b);
          cairo_surface_destroy (bar);
        }
      set_fg (cr, data, 0.8);
      cairo_rectangle (cr, b->x + 0.5, b->y + 0.5, b->width - 1.0, b->height - 1.0);
      cairo_stroke (cr);
      set_fg (cr, data, 1.0);
      for (size_t i = 0; i < lay.n_bticks; i++)
        {
          double t = (lay.bticks[i] - lay.vmin) / (lay.vmax - lay.vmin);
          double y = round (b->y + b->height * (1.0 - t)) + 0.5;

          cairo_move_to (cr, b->x + b->width, y);
          cairo_line_to (cr, b->x + b->width + lay.tick, y);
          cairo_stroke (cr);
          format_value (buf, sizeof buf, lay.bticks[i], lay.bstep, mag);
          show_text_at (cr, buf, b->x + b->width + lay.tick + lay.gap, y, 0.0, 0.5);
        }
    }

  cairo_restore (cr);
}

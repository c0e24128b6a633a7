/* rpe-export.c: publication figures to PNG / SVG / PDF (atomic), CSV, .npy. */
#include "config.h"

#include "rpe-publish.h"
#include "rpe-export.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib/gi18n.h>

#include <glib/gstdio.h>
#include <cairo-pdf.h>
#include <cairo-svg.h>

#include "rpe-alloc.h"
#include "rpe-error.h"
#include "rpe-file.h"
#include "rpe-npy.h"
#include "rpe-text.h"

#define FONT_FAMILY "Sans"
#define DEFAULT_DPI 150.0

/* ------------------------------------------------------------------ setup */

void
rpe_figure_init (RpeFigure     *fig,
                 RpeFigureKind  kind)
{
  memset (fig, 0, sizeof *fig);
  fig->kind = kind;
  rpe_heatmap_data_init (&fig->heatmap);
  rpe_heatmap_grid_init (&fig->grid);
  for (size_t i = 0; i < RPE_FIGURE_MAX_PANELS; i++)
    rpe_heatmap_data_init (&fig->panels[i]);
  fig->foreground[3] = 1.0;
  fig->background[0] = fig->background[1] = fig->background[2] = fig->background[3] = 1.0;
}

static size_t
plot_columns (const RpeFigure *fig)
{
  if (fig->n_plot_columns > 0)
    return MIN (fig->n_plot_columns, MAX (fig->n_plots, (size_t) 1));
  return fig->n_plots <= 1 ? 1 : 2;
}

/* The columns of a CURVES figure at this width and text size: one when the plots side by
 * side would be narrower than about 22 lines of text (a column of a paper). */
static size_t
plot_columns_at (const RpeFigure *fig,
                 double           width,
                 double           text_size)
{
  size_t cols = plot_columns (fig);

  if (cols > 1 && text_size > 0.0 && width / (double) cols < text_size * 22.0)
    return 1;
  return cols;
}

void
rpe_figure_default_size (const RpeFigure *fig,
                         double          *width_pt,
                         double          *height_pt)
{
  double w = 468.0, h = 324.0;   /* 6.5 x 4.5 in: a full text width */

  switch (fig->kind)
    {
    case RPE_FIGURE_HEATMAP:
      w = 360.0;
      h = 300.0;
      break;
    case RPE_FIGURE_GRID:
      {
        size_t n = MAX (fig->grid.n_cells, (size_t) 1);
        size_t cols = fig->grid.n_columns > 0 ? MIN (fig->grid.n_columns, n) : (size_t) ceil (sqrt ((double) n));
        size_t rows = (n + cols - 1) / cols;
        double cell = (468.0 - 110.0) / (double) cols;

        w = 468.0;
        h = CLAMP (cell * (double) rows * 1.12 + 60.0, 160.0, 640.0);
      }
      break;
    case RPE_FIGURE_COMPARE:
      w = fig->n_panels >= 3 ? 612.0 : 468.0;
      h = fig->n_panels >= 3 ? 200.0 : 230.0;
      if (fig->plots != NULL && fig->n_plots > 0)
        {
          w = 720.0;
          h = 95.0 * (double) fig->n_panels + 235.0;
        }
      break;
    case RPE_FIGURE_CURVES:
      {
        size_t cols = plot_columns (fig);
        size_t rows = (MAX (fig->n_plots, (size_t) 1) + cols - 1) / cols;

        w = cols == 1 ? 468.0 : 540.0;
        h = cols == 1 && rows == 1 ? 324.0 : 220.0 * (double) rows + 20.0;
      }
      break;
    default:
      break;
    }
  if (width_pt != NULL)
    *width_pt = w;
  if (height_pt != NULL)
    *height_pt = h;
}

/* ----------------------------------------------------------------- render */

static gboolean
heatmap_has_data (const RpeHeatmapData *d)
{
  return rpe_plot_heatmap_range (d, NULL, NULL, NULL);
}

static gboolean
figure_has_data (const RpeFigure *fig)
{
  if (fig == NULL)
    return FALSE;
  switch (fig->kind)
    {
    case RPE_FIGURE_HEATMAP:
      return heatmap_has_data (&fig->heatmap);
    case RPE_FIGURE_GRID:
      return rpe_plot_grid_range (&fig->grid, NULL, NULL, NULL);
    case RPE_FIGURE_COMPARE:
      if (fig->n_panels < 1 || fig->n_panels > RPE_FIGURE_MAX_PANELS)
        return FALSE;
      for (size_t i = 0; i < fig->n_panels; i++)
        if (!heatmap_has_data (&fig->panels[i]))
          return FALSE;
      return TRUE;
    case RPE_FIGURE_CURVES:
      {
        cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
        cairo_t *cr = cairo_create (s);
        gboolean any = FALSE;

        for (size_t i = 0; fig->plots != NULL && i < fig->n_plots && !any; i++)
          any = rpe_curve_plot_layout (cr, &fig->plots[i], 400, 300, NULL);
        cairo_destroy (cr);
        cairo_surface_destroy (s);
        return any;
      }
    default:
      return FALSE;
    }
}

static gboolean
target_is_vector (cairo_t *cr)
{
  switch (cairo_surface_get_type (cairo_get_target (cr)))
    {
    case CAIRO_SURFACE_TYPE_PDF:
    case CAIRO_SURFACE_TYPE_SVG:
    case CAIRO_SURFACE_TYPE_PS:
      return TRUE;
    default:
      return FALSE;
    }
}

static void
prepare_heatmap (RpeHeatmapData  *d,
                 const RpeFigure *fig,
                 gboolean         vector)
{
  memcpy (d->foreground, fig->foreground, sizeof d->foreground);
  d->background[3] = 0.0;
  if (fig->text_size > 0.0)
    d->font_size = fig->text_size;
  if (vector)
    d->full_resolution = true;
}

static double
figure_title_font (const RpeFigure *fig,
                   double           width,
                   double           height)
{
  if (fig->text_size > 0.0)
    return fig->text_size * 1.15;
  return fmin (13.0, fmax (10.0, fmin (width, height) / 24.0));
}

/* Whether byte i of markup text is inside a tag ("<sub>"). */
static gboolean
inside_tag (const char *text,
            size_t      i)
{
  gboolean in = FALSE;

  for (size_t k = 0; k < i; k++)
    if (text[k] == '<')
      in = TRUE;
    else if (text[k] == '>')
      in = FALSE;
  return in;
}

/* Where a figure title too wide for one line at its size breaks into two: the byte offset of
 * the space nearest its middle (preferring one after ':' or ','), 0 for one line. */
static size_t
title_break (cairo_t    *cr,
             const char *title,
             double      font,
             double      width)
{
  size_t len = strlen (title), best = 0;
  double best_score = INFINITY;

  cairo_save (cr);
  cairo_select_font_face (cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
  cairo_set_font_size (cr, font);
  if (rpe_text_width (cr, title) > width - font)
    for (size_t i = 1; i + 1 < len; i++)
      if (title[i] == ' ')
        {
          double score = fabs ((double) i - (double) len / 2.0);

          if (title[i - 1] == ':' || title[i - 1] == ',')
            score *= 0.6;
          if (inside_tag (title, i))
            continue;
          if (score < best_score)
            {
              best_score = score;
              best = i;
            }
        }
  cairo_restore (cr);
  return best;
}

static double
title_height (cairo_t         *cr,
              const RpeFigure *fig,
              double           width,
              double           height)
{
  double font;

  if (fig->title == NULL || fig->title[0] == '\0')
    return 0.0;
  font = figure_title_font (fig, width, height);
  return round (font * (title_break (cr, fig->title, font, width) > 0 ? 3.1 : 1.9));
}

/* The panels of a COMPARE figure as drawn: the shared range of the first two with one
 * colour bar (right of the second), the y axis numbered on the first panel only (and on
 * any panel whose y axis is another), one text size, and a common cell size; each panel's
 * rectangle is its margins around an image of the same height, so that the images have
 * the same size and top (panels of another shape, e.g. a map of lags beside a map of
 * positions, the same height and top, with cells of their own size). */
/* Narrow and tall: the panels stacked (a column of a paper). */
static gboolean
compare_stacked (const RpeFigure *fig,
                 double           width,
                 double           height)
{
  return fig->n_panels >= 2 && width / (double) fig->n_panels < 120.0 && height > width;
}

/* Whether panel b is numbered along y as panel a (then only a carries the numbers). */
static gboolean
same_y_axis (const RpeHeatmapData *a,
             const RpeHeatmapData *b)
{
  return a->rows == b->rows && a->row_positions == b->row_positions && a->row_origin == b->row_origin
         && g_strcmp0 (a->y_label, b->y_label) == 0;
}

typedef struct
{
  RpeHeatmapData d[RPE_FIGURE_MAX_PANELS];
  RpePlotRect    rect[RPE_FIGURE_MAX_PANELS];  /* where each panel is drawn */
  double         top;
} CompareLayout;

static gboolean
compare_layout (cairo_t         *cr,
                const RpeFigure *fig,
                gboolean         vector,
                double           width,
                double           height,
                CompareLayout   *cl)
{
  size_t n = fig->n_panels;
  double lo = INFINITY, hi = -INFINITY, font, mw[RPE_FIGURE_MAX_PANELS], mh = 0.0, sum_w = 0.0, cell, x;
  double units = 0.0;
  size_t rows = 0;

  cl->top = title_height (cr, fig, width, height);
  if (fig->share_scale && n >= 2)
    for (size_t i = 0; i < 2; i++)
      {
        double a, b;

        if (rpe_plot_heatmap_range (&fig->panels[i], &a, &b, NULL))
          {
            lo = fmin (lo, a);
            hi = fmax (hi, b);
          }
      }
  font = fig->text_size > 0.0 ? fig->text_size : rpe_plot_auto_font (width / (double) n, height - cl->top);
  if (compare_stacked (fig, width, height))
    {
      /* a narrow figure (a column): the panels one above the other, each with its axes
       * and colour bar, their images of one size and left edge */
      double ph = floor ((height - cl->top) / (double) n);
      double scell = INFINITY;

      for (size_t i = 0; i < n; i++)
        {
          RpeHeatmapData *d = &cl->d[i];
          RpePlotRect image;

          *d = fig->panels[i];
          prepare_heatmap (d, fig, vector);
          d->font_size = font;
          d->font_scale = 0.0;
          d->equal_aspect = true;
          if (i < 2 && lo <= hi)
            {
              d->fixed_range = true;
              d->vmin = lo;
              d->vmax = hi;
            }
          cl->rect[i].x = 0.0;
          cl->rect[i].y = cl->top + ph * (double) i;
          cl->rect[i].width = width;
          cl->rect[i].height = ph;
          if (!rpe_plot_heatmap_layout (cr, d, width, ph, &image, NULL) || d->cols == 0)
            return FALSE;
          scell = fmin (scell, (image.width + 0.5) / (double) d->cols);
        }
      for (size_t i = 0; i < n; i++)
        cl->d[i].max_cell = scell;
      return TRUE;
    }
  for (size_t i = 0; i < n; i++)
    {
      RpeHeatmapData *d = &cl->d[i];
      RpePlotRect image;
      /* a probe of the panel's own share: its margins (they do not depend on the size
       * but for the colour bar's ticks, counted at this height) */
      double pw = width / (double) n, ph = height - cl->top;

      *d = fig->panels[i];
      prepare_heatmap (d, fig, vector);
      d->font_size = font;
      d->font_scale = 0.0;
      d->equal_aspect = false;
      d->max_cell = 0.0;
      if (i < 2 && lo <= hi)
        {
          d->fixed_range = true;
          d->vmin = lo;
          d->vmax = hi;
          if (i == 0)
            d->show_colorbar = false;   /* one bar for the shared pair, right of the second */
        }
      if (i > 0 && d->show_axes && same_y_axis (&fig->panels[0], d))
        d->hide_y_labels = true;
      if (!rpe_plot_heatmap_layout (cr, d, pw * 4.0, ph, &image, NULL))
        return FALSE;
      mw[i] = pw * 4.0 - image.width;
      mh = fmax (mh, ph - image.height);
      sum_w += mw[i];
      /* room between a colour bar's label and the next panel, whose y tick marks would
       * otherwise read as the bar label's axis */
      if (i > 0 && cl->d[i - 1].show_colorbar)
        sum_w += font * 1.5;
      if (d->rows == 0 || d->cols == 0)
        return FALSE;
      rows = MAX (rows, d->rows);
    }
  /* one image height: a panel of fewer rows (another shape) has larger cells */
  for (size_t i = 0; i < n; i++)
    units += (double) cl->d[i].cols * ((double) rows / (double) cl->d[i].rows);
  cell = fmin ((width - sum_w) / units, (height - cl->top - mh) / (double) rows);
  if (!(cell > 0.0))
    return FALSE;
  {
    double iw[RPE_FIGURE_MAX_PANELS], slack = width - sum_w;

    for (size_t i = 0; i < n; i++)
      {
        iw[i] = floor (cell * ((double) rows / (double) cl->d[i].rows) * (double) cl->d[i].cols);
        slack -= iw[i];
      }
    x = floor (fmax (0.0, slack) / (double) (n + 1));
    for (size_t i = 0; i < n; i++)
      {
        cl->d[i].equal_aspect = true;
        cl->d[i].max_cell = (iw[i] + 0.5) / (double) cl->d[i].cols;
        if (i > 0 && cl->d[i - 1].show_colorbar)
          x += floor (font * 1.5);
        cl->rect[i].x = x;
        cl->rect[i].y = cl->top;
        cl->rect[i].width = floor (mw[i] + iw[i]);
        cl->rect[i].height = height - cl->top;
        x += cl->rect[i].width + floor (fmax (0.0, slack) / (double) (n + 1));
      }
  }
  return TRUE;
}

size_t
rpe_figure_compare_images (cairo_t         *cr,
                           const RpeFigure *fig,
                           double           width,
                           double           height,
                           RpePlotRect      images[RPE_FIGURE_MAX_PANELS])
{
  CompareLayout cl;

  if (cr == NULL || fig == NULL || fig->kind != RPE_FIGURE_COMPARE || !figure_has_data (fig)
      || !(width > 0.0) || !(height > 0.0)
      || !compare_layout (cr, fig, target_is_vector (cr), width, height, &cl))
    return 0;
  for (size_t i = 0; i < fig->n_panels; i++)
    {
      if (!rpe_plot_heatmap_layout (cr, &cl.d[i], cl.rect[i].width, cl.rect[i].height, &images[i], NULL))
        return 0;
      images[i].x += cl.rect[i].x;
      images[i].y += cl.rect[i].y;
    }
  return fig->n_panels;
}

/* Draws the figure title (on two lines when one is too narrow at its size); returns the
 * height it took. */
static double
draw_title (cairo_t         *cr,
            const RpeFigure *fig,
            double           width,
            double           height)
{
  double font = figure_title_font (fig, width, height);
  size_t brk;
  char *lines[2];
  guint n_lines;

  if (fig->title == NULL || fig->title[0] == '\0')
    return 0.0;
  brk = title_break (cr, fig->title, font, width);
  lines[0] = brk > 0 ? g_strndup (fig->title, brk) : g_strdup (fig->title);
  lines[1] = brk > 0 ? g_strdup (fig->title + brk + 1) : NULL;
  n_lines = brk > 0 ? 2 : 1;
  cairo_save (cr);
  cairo_select_font_face (cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
  cairo_set_font_size (cr, font);
  {
    /* one size for the lines: the widest fits (down to the smallest size that reads) */
    double scale = 1.0;

    for (guint i = 0; i < n_lines; i++)
      {
        double w = rpe_text_width (cr, lines[i]);

        if (w > width - font)
          scale = fmin (scale, (width - font) / w);
      }
    if (scale < 1.0)
      cairo_set_font_size (cr, font * fmax (scale, RPE_TEXT_MIN_SCALE));
  }
  cairo_set_source_rgba (cr, fig->foreground[0], fig->foreground[1], fig->foreground[2], fig->foreground[3]);
  /* within half a line of the page's edges, cut short with "…" where even the smallest size
   * does not fit */
  for (guint i = 0; i < n_lines; i++)
    rpe_text_show_fitted (cr, lines[i], width / 2.0, font * (0.4 + 1.2 * (double) i), font / 2.0, width - font / 2.0,
                          0.0);
  cairo_restore (cr);
  g_free (lines[0]);
  g_free (lines[1]);
  return round (font * (n_lines > 1 ? 3.1 : 1.9));
}

/* A heatmap's or grid's title at a preset's text size too wide for one line: drawn by
 * draw_title on two lines above the plot instead of shrunk (a column of a paper). */
static gboolean
title_wraps (cairo_t         *cr,
             const RpeFigure *fig,
             double           width,
             double           height)
{
  if (fig->text_size <= 0.0 || fig->title == NULL || fig->title[0] == '\0')
    return FALSE;
  return title_break (cr, fig->title, figure_title_font (fig, width, height), width) > 0;
}

/* COMPARE with plots: the panels as strips on one x axis (tick numbers and label under the
 * last only; images of one height, left and right edge), and the line plots below them in
 * a row (one column when the row would be too narrow), or, on a wide figure (a slide),
 * the strips on the left and the plots stacked on their right. */
static void
render_strips_and_plots (cairo_t         *cr,
                         const RpeFigure *fig,
                         gboolean         vector,
                         double           width,
                         double           height)
{
  double top = draw_title (cr, fig, width, height);
  double avail = height - top, lo = INFINITY, hi = -INFINITY;
  size_t n = fig->n_panels, np = fig->n_plots;
  RpeHeatmapData d[RPE_FIGURE_MAX_PANELS];
  double over[RPE_FIGURE_MAX_PANELS], right[RPE_FIGURE_MAX_PANELS], h[RPE_FIGURE_MAX_PANELS];
  double font, sw, strips, sum_over = 0.0, max_right = 0.0, img_h, y, plot_min;
  gboolean side = np > 0 && width / fmax (avail, 1.0) >= 1.5;
  size_t pcols, prows;

  if (fig->share_scale && n >= 2)
    for (size_t i = 0; i < 2; i++)
      {
        double a, b;

        if (rpe_plot_heatmap_range (&fig->panels[i], &a, &b, NULL))
          {
            lo = fmin (lo, a);
            hi = fmax (hi, b);
          }
      }
  for (size_t i = 0; i < n; i++)
    {
      d[i] = fig->panels[i];
      prepare_heatmap (&d[i], fig, vector);
      d[i].equal_aspect = false;
      d[i].hide_x_labels = i + 1 < n;
      if (i < 2 && lo <= hi)
        {
          d[i].fixed_range = true;
          d[i].vmin = lo;
          d[i].vmax = hi;
        }
    }
  font = fig->text_size > 0.0 ? fig->text_size
         : d[0].font_size > 0.0 ? d[0].font_size : rpe_plot_auto_font (width, avail / (double) MAX (n, (size_t) 1));
  sw = side ? floor (width * 0.6) : width;
  pcols = side ? 1 : (np > 0 && width / (double) np >= font * 24.0 ? np : 1);
  prows = np > 0 ? (np + pcols - 1) / pcols : 0;

  /* the margins of each strip around its image (they do not depend on its height) */
  for (size_t i = 0; i < n; i++)
    {
      RpePlotRect im;

      if (!rpe_plot_heatmap_layout (cr, &d[i], sw, 4000.0, &im, NULL))
        return;
      over[i] = 4000.0 - im.height;
      sum_over += over[i];
    }
  /* the strips' share: about half, images at least 2.5 lines of text high, the plots at
   * least 10 lines */
  plot_min = side ? 0.0 : (double) prows * font * 10.0;
  strips = side ? avail : avail * 0.56;
  strips = fmax (strips, sum_over + (double) n * font * 2.5);
  strips = fmin (strips, avail - plot_min);
  strips = fmax (strips, sum_over + (double) n * 4.0);
  img_h = floor ((strips - sum_over) / (double) MAX (n, (size_t) 1));
  /* one right edge: each strip's image as wide as the narrowest */
  for (size_t i = 0; i < n; i++)
    {
      RpePlotRect im;

      h[i] = over[i] + img_h;
      if (!rpe_plot_heatmap_layout (cr, &d[i], sw, h[i], &im, NULL))
        return;
      right[i] = sw - (im.x + im.width);
      max_right = fmax (max_right, right[i]);
    }
  y = top;
  if (side)
    y = floor (top + fmax (0.0, (avail - (sum_over + img_h * (double) n)) / 2.0));
  for (size_t i = 0; i < n; i++)
    {
      cairo_save (cr);
      cairo_translate (cr, 0, floor (y));
      rpe_plot_render_heatmap (cr, &d[i], sw - (max_right - right[i]), h[i]);
      cairo_restore (cr);
      y += h[i];
    }
  {
    double px = side ? sw : 0.0, py = side ? top : floor (y);
    double cw = (width - px) / (double) MAX (pcols, (size_t) 1);
    double ch = (height - py) / (double) MAX (prows, (size_t) 1);

    for (size_t i = 0; i < np; i++)
      {
        RpeCurvePlot p = fig->plots[i];
        double x0 = floor (px + cw * (double) (i % pcols)), y0 = floor (py + ch * (double) (i / pcols));

        memcpy (p.foreground, fig->foreground, sizeof p.foreground);
        p.background[3] = 0.0;
        if (fig->text_size > 0.0)
          p.font_size = fig->text_size;
        cairo_save (cr);
        cairo_translate (cr, x0, y0);
        rpe_curve_render (cr, &p, floor (px + cw * (double) (i % pcols + 1)) - x0,
                          floor (py + ch * (double) (i / pcols + 1)) - y0);
        cairo_restore (cr);
      }
  }
}

gboolean
rpe_figure_render (cairo_t         *cr,
                   const RpeFigure *fig,
                   double           width,
                   double           height)
{
  gboolean vector;

  if (cr == NULL || !figure_has_data (fig) || !(width > 0.0) || !(height > 0.0))
    return FALSE;
  vector = target_is_vector (cr);

  cairo_save (cr);
  rpe_plot_use_figure_fonts (cr);
  cairo_rectangle (cr, 0, 0, width, height);
  cairo_clip (cr);
  if (fig->background[3] > 0.0)
    {
      cairo_set_source_rgba (cr, fig->background[0], fig->background[1], fig->background[2],
                             fig->background[3]);
      cairo_paint (cr);
    }

  switch (fig->kind)
    {
    case RPE_FIGURE_HEATMAP:
      {
        RpeHeatmapData d = fig->heatmap;
        double top = 0.0;

        prepare_heatmap (&d, fig, vector);
        if (title_wraps (cr, fig, width, height))
          {
            top = draw_title (cr, fig, width, height);
            d.title = NULL;
          }
        else if (fig->title != NULL)
          d.title = fig->title;
        cairo_translate (cr, 0, top);
        rpe_plot_render_heatmap (cr, &d, width, height - top);
      }
      break;

    case RPE_FIGURE_GRID:
      {
        RpeHeatmapGrid g = fig->grid;
        RpeHeatmapData *cells = g_new (RpeHeatmapData, g.n_cells);

        for (size_t i = 0; i < g.n_cells; i++)
          {
            cells[i] = fig->grid.cells[i];
            prepare_heatmap (&cells[i], fig, vector);
          }
        g.cells = cells;
        if (fig->text_size > 0.0)
          g.font_size = fig->text_size;
        memcpy (g.foreground, fig->foreground, sizeof g.foreground);
        g.background[3] = 0.0;
        {
          double top = 0.0;

          if (title_wraps (cr, fig, width, height))
            {
              top = draw_title (cr, fig, width, height);
              g.title = NULL;
            }
          else if (fig->title != NULL)
            g.title = fig->title;
          cairo_translate (cr, 0, top);
          rpe_plot_render_heatmap_grid (cr, &g, width, height - top);
        }
        g_free (cells);
      }
      break;

    case RPE_FIGURE_COMPARE:
      if (fig->plots != NULL && fig->n_plots > 0)
        {
          render_strips_and_plots (cr, fig, vector, width, height);
          break;
        }
      {
        CompareLayout cl;

        draw_title (cr, fig, width, height);
        if (!compare_layout (cr, fig, vector, width, height, &cl))
          break;
        for (size_t i = 0; i < fig->n_panels; i++)
          {
            cairo_save (cr);
            cairo_translate (cr, cl.rect[i].x, cl.rect[i].y);
            rpe_plot_render_heatmap (cr, &cl.d[i], cl.rect[i].width, cl.rect[i].height);
            cairo_restore (cr);
          }
      }
      break;

    case RPE_FIGURE_CURVES:
      {
        double top = fig->n_plots > 1 ? draw_title (cr, fig, width, height) : 0.0;
        size_t cols = plot_columns_at (fig, width, fig->text_size);
        size_t rows = (fig->n_plots + cols - 1) / cols;
        double cw = width / (double) cols, ch;
        size_t shared = SIZE_MAX, with_legend = 0;

        /* Panels of which only one has a legend (the series of all): that legend once, in
         * rows under the title, as matplotlib's figure legend, rather than in a panel */
        for (size_t i = 0; fig->n_plots > 1 && i < fig->n_plots; i++)
          if (fig->plots[i].legend != RPE_CURVE_LEGEND_NONE
              && rpe_curve_legend_row (cr, &fig->plots[i], 0, 0, width, 10.0, false) > 0.0)
            {
              shared = i;
              with_legend++;
            }
        if (with_legend == 1)
          {
            double font = fig->text_size > 0.0 ? fig->text_size
                          : rpe_curve_auto_font (cw, (height - top) / (double) rows);
            RpeCurvePlot lp = fig->plots[shared];

            memcpy (lp.foreground, fig->foreground, sizeof lp.foreground);
            top += rpe_curve_legend_row (cr, &lp, 0, top, width, font, true) + font * 0.3;
          }
        else
          shared = SIZE_MAX;
        ch = (height - top) / (double) rows;

        for (size_t i = 0; i < fig->n_plots; i++)
          {
            RpeCurvePlot p = fig->plots[i];
            double x0 = floor (cw * (double) (i % cols)), y0 = floor (top + ch * (double) (i / cols));

            memcpy (p.foreground, fig->foreground, sizeof p.foreground);
            p.background[3] = 0.0;
            if (fig->text_size > 0.0)
              p.font_size = fig->text_size;
            if (fig->n_plots == 1 && fig->title != NULL)
              p.title = fig->title;
            if (i == shared)
              p.legend = RPE_CURVE_LEGEND_NONE;
            cairo_save (cr);
            cairo_translate (cr, x0, y0);
            rpe_curve_render (cr, &p, floor (cw * (double) (i % cols + 1)) - x0,
                              floor (top + ch * (double) (i / cols + 1)) - y0);
            cairo_restore (cr);
          }
      }
      break;

    default:
      break;
    }
  cairo_restore (cr);
  return TRUE;
}

/* ------------------------------------------------------------------ sizes */

gboolean
rpe_export_format_from_path (const char      *path,
                             RpeExportFormat *format)
{
  static const struct { const char *ext; RpeExportFormat fmt; } table[] = {
    { ".png", RPE_EXPORT_PNG }, { ".svg", RPE_EXPORT_SVG }, { ".pdf", RPE_EXPORT_PDF },
    { ".csv", RPE_EXPORT_CSV }, { ".npy", RPE_EXPORT_NPY },
  };
  size_t len;

  if (path == NULL)
    return FALSE;
  len = strlen (path);
  for (size_t i = 0; i < G_N_ELEMENTS (table); i++)
    if (len > 4 && g_ascii_strcasecmp (path + len - 4, table[i].ext) == 0)
      {
        if (format != NULL)
          *format = table[i].fmt;
        return TRUE;
      }
  return FALSE;
}

const char *
rpe_export_format_extension (RpeExportFormat format)
{
  switch (format)
    {
    case RPE_EXPORT_PNG: return "png";
    case RPE_EXPORT_SVG: return "svg";
    case RPE_EXPORT_PDF: return "pdf";
    case RPE_EXPORT_CSV: return "csv";
    case RPE_EXPORT_NPY: return "npy";
    default: return NULL;
    }
}

/* A grid at a preset width: as tall as its largest square images need (up to max_h), its
 * title (one or two lines) included. */
static double
grid_preset_height (const RpeFigure *fig,
                    double           width,
                    double           text_size,
                    double           max_h)
{
  RpeFigure f = *fig;
  RpeHeatmapGrid g = fig->grid;
  cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 1, 1);
  cairo_t *cr = cairo_create (s);
  double extra = 0.0, h;

  f.text_size = text_size;
  g.font_size = text_size;
  rpe_plot_use_figure_fonts (cr);
  if (title_wraps (cr, &f, width, max_h))
    {
      g.title = NULL;
      extra = round (figure_title_font (&f, width, max_h) * 3.1);
    }
  else
    g.title = fig->title;
  cairo_destroy (cr);
  cairo_surface_destroy (s);
  h = rpe_plot_grid_height_for_width (&g, width, max_h - extra);
  return h > 0.0 ? round (h + extra) : max_h;
}

gboolean
rpe_export_resolve_size (const RpeFigure     *fig,
                         RpeExportFormat      format,
                         const RpeExportSize *size,
                         double              *width_pt,
                         double              *height_pt,
                         int                 *width_px,
                         int                 *height_px,
                         GError             **error)
{
  RpeExportSize def = { 0 };
  double dw, dh, w, h, dpi;

  if (size == NULL)
    size = &def;
  rpe_figure_default_size (fig, &dw, &dh);
  if (!isfinite (size->width_pt) || !isfinite (size->height_pt) || !isfinite (size->text_size)
      || size->width_pt < 0.0 || size->height_pt < 0.0 || size->text_size < 0.0 || size->text_size > 400.0)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("figure size: the preset size and text size must be positive"));
  if (size->width_pt > 0.0)
    {
      /* a preset: its width (and height, else the figure's aspect ratio; a comparison too
       * narrow for its panels side by side stacks them) */
      if (size->height_pt > 0.0)
        dh = size->height_pt;
      else if (fig->kind == RPE_FIGURE_COMPARE && size->width_pt / (double) MAX (fig->n_panels, (size_t) 1) < 120.0)
        dh = round (size->width_pt * 0.72 * (double) fig->n_panels);
      else if (fig->kind == RPE_FIGURE_CURVES && plot_columns_at (fig, size->width_pt, size->text_size) < plot_columns (fig))
        /* plots too narrow side by side: one above the other, each of a plot's aspect */
        dh = round (size->width_pt * 0.62 * (double) fig->n_plots + size->text_size * 3.1);
      else if (fig->kind == RPE_FIGURE_GRID && size->text_size >= 1.0 && size->width_pt >= size->text_size * 8.0)
        dh = grid_preset_height (fig, size->width_pt, size->text_size, fmin (size->width_pt * 1.6, 6.5 * 72.0));
      else
        dh = size->width_pt * dh / dw;
      dw = size->width_pt;
    }
  if (!(size->width >= 0.0) || !(size->height >= 0.0) || !(size->dpi >= 0.0)
      || !isfinite (size->width) || !isfinite (size->height) || !isfinite (size->dpi))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("figure size: width, height and dpi must be positive"));
  dpi = size->dpi > 0.0 ? size->dpi : DEFAULT_DPI;
  if (dpi < 10.0 || dpi > 2400.0)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("figure size: dpi must be between 10 and 2400 (got %g)"), dpi);

  w = size->width > 0.0 ? size->width : 0.0;
  h = size->height > 0.0 ? size->height : 0.0;
  if (format == RPE_EXPORT_PNG)
    {
      double pw, ph;

      if (w > 0.0 || h > 0.0)
        {
          /* pixels given; the aspect ratio of the default when one is missing */
          pw = w > 0.0 ? w : h * dw / dh;
          ph = h > 0.0 ? h : w * dh / dw;
        }
      else
        {
          pw = dw * dpi / 72.0;
          ph = dh * dpi / 72.0;
        }
      pw = round (pw);
      ph = round (ph);
      if (pw < 1.0 || ph < 1.0 || pw > 20000.0 || ph > 20000.0)
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                              _("figure size: PNG sides must be between 1 and 20000 pixels (got %.0f x %.0f)"), pw, ph);
      if (width_px != NULL)
        *width_px = (int) pw;
      if (height_px != NULL)
        *height_px = (int) ph;
      if (width_pt != NULL)
        *width_pt = pw * 72.0 / dpi;
      if (height_pt != NULL)
        *height_pt = ph * 72.0 / dpi;
      return TRUE;
    }
  if (w == 0.0 && h == 0.0)
    {
      w = dw;
      h = dh;
    }
  else if (w == 0.0)
    w = h * dw / dh;
  else if (h == 0.0)
    h = w * dh / dw;
  if (w < 1.0 || h < 1.0 || w > 14400.0 || h > 14400.0)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          _("figure size: sides must be between 1 and 14400 points (got %g x %g)"), w, h);
  if (width_pt != NULL)
    *width_pt = w;
  if (height_pt != NULL)
    *height_pt = h;
  if (width_px != NULL)
    *width_px = (int) ceil (w * dpi / 72.0);
  if (height_px != NULL)
    *height_px = (int) ceil (h * dpi / 72.0);
  return TRUE;
}

/* ---------------------------------------------------------------- presets */

gboolean
rpe_export_preset_from_name (const char      *name,
                             RpeExportPreset *preset)
{
  static const char *const names[] = { "none", "column", "page", "slide" };

  if (name == NULL)
    {
      if (preset != NULL)
        *preset = RPE_EXPORT_PRESET_NONE;
      return TRUE;
    }
  for (size_t i = 0; i < G_N_ELEMENTS (names); i++)
    if (g_ascii_strcasecmp (name, names[i]) == 0)
      {
        if (preset != NULL)
          *preset = (RpeExportPreset) i;
        return TRUE;
      }
  return FALSE;
}

const char *
rpe_export_preset_name (RpeExportPreset preset)
{
  switch (preset)
    {
    case RPE_EXPORT_PRESET_COLUMN: return "column";
    case RPE_EXPORT_PRESET_PAGE:   return "page";
    case RPE_EXPORT_PRESET_SLIDE:  return "slide";
    case RPE_EXPORT_PRESET_NONE:
    default:                       return "none";
    }
}

void
rpe_export_preset_apply (RpeExportPreset  preset,
                         RpeExportSize   *size)
{
  switch (preset)
    {
    case RPE_EXPORT_PRESET_COLUMN:
      size->width_pt = 3.25 * 72.0;
      size->height_pt = 0.0;
      size->text_size = 8.0;
      break;
    case RPE_EXPORT_PRESET_PAGE:
      size->width_pt = 6.75 * 72.0;
      size->height_pt = 0.0;
      size->text_size = 9.0;
      break;
    case RPE_EXPORT_PRESET_SLIDE:
      size->width_pt = 13.333 * 72.0;
      size->height_pt = 7.5 * 72.0;
      size->text_size = 20.0;
      break;
    case RPE_EXPORT_PRESET_NONE:
    default:
      size->width_pt = size->height_pt = size->text_size = 0.0;
      break;
    }
}

gboolean
rpe_export_png_bytes (int width, int height, size_t *bytes)
{
  size_t one;

  /* the ARGB32 surface, and a heatmap image of at most its size while it is drawn */
  return width >= 1 && height >= 1 && rpe_size_bytes (&one, 4, (size_t) width, (size_t) height, 1, 1) == RPE_OK
         && rpe_size_mul (one, 2, bytes);
}

/* What cairo's PDF and SVG surfaces hold per pixel of an embedded heatmap image until the page
 * ends: the RGB24 image (4 bytes) and their own copy while it is compressed and encoded
 * (measured: a 4096 x 4096 image peaks at 136 MB in a PDF, 8.1 bytes per pixel). */
#define VECTOR_BYTES_PER_PIXEL 9u

/* The pixels of one panel's images in a plot of at most w x h points: the map's image
 * (rpe_plot_vector_image_side, as the renderer sizes it; a panel whose data is not known yet
 * counts 2 pixels a point) and its colour bar's (1 x RPE_COLORMAP_SIZE). */
static double
vector_panel_pixels (const RpeHeatmapData *d, double w, double h)
{
  size_t rows = d != NULL && d->values != NULL ? d->rows : 0, cols = d != NULL && d->values != NULL ? d->cols : 0;

  return rpe_plot_vector_image_side (w, cols) * rpe_plot_vector_image_side (h, rows) + RPE_COLORMAP_SIZE;
}

gboolean
rpe_export_vector_bytes (const RpeFigure *fig, double width_pt, double height_pt, size_t *bytes)
{
  /* each image has every cell of its map (at most RPE_PLOT_MAX_IMAGE_SIDE a side) and at least
   * 2 pixels per point of its plot; the panels of a grid or comparison share the page */
  double w = ceil (fmax (width_pt, 1.0)), h = ceil (fmax (height_pt, 1.0)), px = 0.0;

  if (fig->kind == RPE_FIGURE_CURVES)
    {
      *bytes = 0;
      return TRUE;
    }
  if (!(w < 1e7 && h < 1e7))
    return FALSE;
  if (fig->kind == RPE_FIGURE_GRID)
    {
      size_t n = fig->grid.cells != NULL ? fig->grid.n_cells : 0;

      if (n == 0)
        px = 4.0 * w * h; /* as many panels as heads: the page's area bounds them */
      else
        {
          size_t columns = fig->grid.n_columns > 0 ? MIN (fig->grid.n_columns, n) : (size_t) ceil (sqrt ((double) n));
          size_t rows = (n + columns - 1) / columns;

          for (size_t i = 0; i < n; i++)
            px += vector_panel_pixels (&fig->grid.cells[i], w / (double) columns, h / (double) rows);
        }
    }
  else if (fig->kind == RPE_FIGURE_COMPARE)
    {
      size_t   n = MAX (fig->n_panels, (size_t) 1);
      gboolean stacked = compare_stacked (fig, width_pt, height_pt);

      if (fig->n_panels == 0 || fig->panels[0].values == NULL)
        px = fmin (4.0 * w * h, (double) n * RPE_PLOT_MAX_IMAGE_SIDE * RPE_PLOT_MAX_IMAGE_SIDE);
      else
        /* side by side, or one above the other on a narrow page (as compare_layout lays them) */
        for (size_t i = 0; i < fig->n_panels && i < RPE_FIGURE_MAX_PANELS; i++)
          px += vector_panel_pixels (&fig->panels[i], stacked ? w : w / (double) n, stacked ? h / (double) n : h);
    }
  else
    px = vector_panel_pixels (&fig->heatmap, w, h);
  /* px <= 4 x 4096^2 per panel, or 4e14 for the page: no overflow */
  *bytes = (size_t) px * VECTOR_BYTES_PER_PIXEL;
  return TRUE;
}

/* ----------------------------------------------------------------- output */

typedef struct
{
  int fd;
  int err;
} Sink;

static cairo_status_t
sink_write (void                *closure,
            const unsigned char *data,
            unsigned int         length)
{
  Sink *sink = closure;

  while (length > 0)
    {
      ssize_t n = write (sink->fd, data, length);

      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          sink->err = errno;
          return CAIRO_STATUS_WRITE_ERROR;
        }
      data += n;
      length -= (unsigned int) n;
    }
  return CAIRO_STATUS_SUCCESS;
}

static gboolean
check_cancelled (GCancellable *cancellable,
                 GError      **error)
{
  return g_cancellable_set_error_if_cancelled (cancellable, error);
}

/* Renders into the open temporary file. */
static gboolean
write_image (const RpeFigure *fig,
             RpeExportFormat  format,
             double           wpt,
             double           hpt,
             int              wpx,
             int              hpx,
             Sink            *sink,
             const char      *path,
             GError         **error)
{
  cairo_surface_t *surface = NULL;
  cairo_status_t status;
  cairo_t *cr;

  if (format == RPE_EXPORT_PNG)
    {
      size_t bytes;

      if (!rpe_export_png_bytes (wpx, hpx, &bytes) || rpe_budget_check (bytes) != RPE_OK)
        return rpe_set_error (error, RPE_ERROR_NO_MEMORY,
                              _("%s: a %d x %d image exceeds the memory budget"), path, wpx, hpx);
      surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, wpx, hpx);
    }
  else if (format == RPE_EXPORT_SVG)
    {
      surface = cairo_svg_surface_create_for_stream (sink_write, sink, wpt, hpt);
      cairo_svg_surface_restrict_to_version (surface, CAIRO_SVG_VERSION_1_1);
      cairo_svg_surface_set_document_unit (surface, CAIRO_SVG_UNIT_PT);
    }
  else
    {
      surface = cairo_pdf_surface_create_for_stream (sink_write, sink, wpt, hpt);
      cairo_pdf_surface_set_metadata (surface, CAIRO_PDF_METADATA_CREATOR, "RPE Studio " PACKAGE_VERSION);
      if (fig->title != NULL)
        {
          /* the words of the (markup) title */
          char *plain = rpe_text_plain (fig->title);

          cairo_pdf_surface_set_metadata (surface, CAIRO_PDF_METADATA_TITLE, plain);
          free (plain);
        }
    }
  if (cairo_surface_status (surface) != CAIRO_STATUS_SUCCESS)
    {
      status = cairo_surface_status (surface);
      cairo_surface_destroy (surface);
      return rpe_set_error (error, RPE_ERROR_NO_MEMORY, _("%s: cannot create the surface: %s"), path,
                            cairo_status_to_string (status));
    }

  cr = cairo_create (surface);
  if (format == RPE_EXPORT_PNG)
    cairo_scale (cr, (double) wpx / wpt, (double) hpx / hpt);
  rpe_figure_render (cr, fig, wpt, hpt);
  if (format != RPE_EXPORT_PNG)
    cairo_show_page (cr);
  status = cairo_status (cr);
  cairo_destroy (cr);

  if (status == CAIRO_STATUS_SUCCESS && format == RPE_EXPORT_PNG)
    status = cairo_surface_write_to_png_stream (surface, sink_write, sink);
  cairo_surface_finish (surface);
  if (status == CAIRO_STATUS_SUCCESS)
    status = cairo_surface_status (surface);
  cairo_surface_destroy (surface);
  if (status != CAIRO_STATUS_SUCCESS)
    {
      if (sink->err != 0)
        return rpe_set_error (error, rpe_status_for_write_errno (sink->err), _("%s: cannot write: %s"), path,
                              g_strerror (sink->err));
      return rpe_set_error (error, status == CAIRO_STATUS_NO_MEMORY ? RPE_ERROR_NO_MEMORY : RPE_ERROR_IO,
                            _("%s: cannot render: %s"), path, cairo_status_to_string (status));
    }
  return TRUE;
}

/* An SVG or PDF page holds its images until it ends: with the figure's maps known, what they
 * take (rpe_export_vector_bytes) must fit in the budget beside what is held already (the maps
 * themselves).  `rpe` checked the page's size before computing; a map of many more cells than
 * the page has points is found here, before anything is drawn. */
static gboolean
check_vector_budget (const RpeFigure *fig,
                     RpeExportFormat  format,
                     double           wpt,
                     double           hpt,
                     const char      *path,
                     GError         **error)
{
  size_t bytes = 0, total;

  if (format != RPE_EXPORT_SVG && format != RPE_EXPORT_PDF)
    return TRUE;
  if (!rpe_export_vector_bytes (fig, wpt, hpt, &bytes) || !rpe_size_add (bytes, rpe_alloc_held (), &total)
      || rpe_budget_check (total) != RPE_OK)
    {
      g_autofree char *need = g_format_size_full (bytes, G_FORMAT_SIZE_IEC_UNITS);
      g_autofree char *budget = g_format_size_full (rpe_budget_get (), G_FORMAT_SIZE_IEC_UNITS);

      return rpe_set_error (error, RPE_ERROR_NO_MEMORY,
                            _("%s: the images of this %.0f x %.0f pt page need %s (%zu bytes) beside the figure's "
                              "data, over the memory budget of %s; nothing was drawn (export a shorter map, or as "
                              "PNG)"),
                            path, wpt, hpt, need, bytes, budget);
    }
  return TRUE;
}

static gboolean
export_image (const RpeFigure     *fig,
              RpeExportFormat      format,
              const RpeExportSize *size,
              const char          *given,
              GCancellable        *cancellable,
              GError             **error)
{
  /* onto a symbolic link: through it, to the file it names */
  g_autofree char *path = rpe_publish_resolve (given);
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *tmp = NULL;
  double wpt, hpt;
  int wpx, hpx;
  Sink sink = { -1, 0 };
  gboolean ok = FALSE;

  if (!rpe_export_resolve_size (fig, format, size, &wpt, &hpt, &wpx, &hpx, error))
    return FALSE;
  if (check_cancelled (cancellable, error))
    return FALSE;
  if (!check_vector_budget (fig, format, wpt, hpt, path, error))
    return FALSE;

  if (!rpe_output_check (path, error))
    return FALSE;
  tmp = g_strdup_printf ("%s%c.%s.XXXXXX", dir, G_DIR_SEPARATOR, base);
  sink.fd = g_mkstemp_full (tmp, O_WRONLY | O_CLOEXEC, 0644);
  if (sink.fd < 0)
    {
      int err = errno;
      return rpe_set_error (error, RPE_ERROR_IO, _("%s: cannot create a file in %s: %s"), path, dir,
                            g_strerror (err));
    }

  {
    RpeFigure sized = *fig;

    if (size != NULL && size->text_size > 0.0)
      sized.text_size = size->text_size;
    if (!write_image (&sized, format, wpt, hpt, wpx, hpx, &sink, path, error))
      goto out;
  }
  if (fsync (sink.fd) != 0 && errno != EINVAL && errno != EROFS)
    {
      int err = errno;
      rpe_set_error (error, rpe_status_for_write_errno (err), _("%s: cannot write: %s"), path, g_strerror (err));
      goto out;
    }
  {
    int fd = sink.fd;

    sink.fd = -1;
    if (close (fd) != 0)
      {
        int err = errno;
        rpe_set_error (error, rpe_status_for_write_errno (err), _("%s: cannot write: %s"), path, g_strerror (err));
        goto out;
      }
  }
  /* mkstemp's mode ignores the umask on some systems: make it an ordinary file */
  (void) g_chmod (tmp, 0644);
  if (check_cancelled (cancellable, error))
    goto out;
  {
    int err = rpe_publish (tmp, path);  /* now, or with the rest of the command's output set */

    if (err != 0)
      {
        rpe_set_error (error, RPE_ERROR_IO, _("%s: cannot replace the file: %s"), path, g_strerror (err));
        goto out;
      }
  }
  ok = TRUE;

out:
  if (sink.fd >= 0)
    close (sink.fd);
  if (!ok)
    (void) g_unlink (tmp);
  return ok;
}

/* The heatmaps of a figure as one float32 array. */
static gboolean
export_npy (const RpeFigure *fig,
            const char      *path,
            GError         **error)
{
  const RpeHeatmapData *maps;
  size_t n, rows, cols, count, bytes;
  float *buf;
  RpeStatus st = RPE_OK;
  gboolean ok;

  switch (fig->kind)
    {
    case RPE_FIGURE_HEATMAP:
      maps = &fig->heatmap;
      n = 1;
      break;
    case RPE_FIGURE_GRID:
      maps = fig->grid.cells;
      n = fig->grid.n_cells;
      break;
    case RPE_FIGURE_COMPARE:
      maps = fig->panels;
      n = fig->n_panels;
      break;
    default:
      return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                            _("%s: curves are exported as CSV, not .npy"), path);
    }
  if (maps == NULL || n == 0 || maps[0].values == NULL)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("%s: the figure has no data"), path);
  rows = maps[0].rows;
  cols = maps[0].cols;
  for (size_t i = 0; i < n; i++)
    if (maps[i].values == NULL || maps[i].rows != rows || maps[i].cols != cols)
      return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                            _("%s: the figure's arrays differ in shape; export them one by one"), path);
  if (fig->kind == RPE_FIGURE_HEATMAP)
    return rpe_npy_write (path, maps[0].values, 2, (gsize[]) { rows, cols }, FALSE, error);

  if ((st = rpe_size_bytes (&bytes, 1, n, rows, cols, 1)) != RPE_OK)
    return rpe_set_error (error, st, _("%s: the arrays are too large"), path);
  count = bytes;
  buf = rpe_alloc (count, sizeof (float), &st);
  if (buf == NULL)
    return rpe_set_error (error, st, _("%s: the arrays do not fit in the memory budget"), path);
  for (size_t i = 0; i < n; i++)
    memcpy (buf + i * rows * cols, maps[i].values, rows * cols * sizeof (float));
  ok = rpe_npy_write (path, buf, 3, (gsize[]) { n, rows, cols }, FALSE, error);
  rpe_free (buf);
  return ok;
}

gboolean
rpe_export_figure_cancellable (const RpeFigure     *fig,
                               RpeExportFormat      format,
                               const RpeExportSize *size,
                               const char          *path,
                               GCancellable        *cancellable,
                               GError             **error)
{
  if (path == NULL || path[0] == '\0')
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("no output file given"));
  if (fig == NULL)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("%s: no figure"), path);
  if (check_cancelled (cancellable, error))
    return FALSE;

  switch (format)
    {
    case RPE_EXPORT_PNG:
    case RPE_EXPORT_SVG:
    case RPE_EXPORT_PDF:
      if (!figure_has_data (fig))
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("%s: the figure has no data to draw"), path);
      return export_image (fig, format, size, path, cancellable, error);
    case RPE_EXPORT_CSV:
      {
        int err = 0;
        RpeStatus st;

        if (fig->table == NULL)
          return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                                _("%s: only curves are exported as CSV (use .npy for arrays)"), path);
        if (!rpe_output_check (path, error))
          return FALSE;
        st = rpe_curve_table_write_csv (fig->table, path, &err);
        if (st != RPE_OK)
          return rpe_set_error (error, st, _("%s: cannot write: %s"), path,
                                err != 0 ? g_strerror (err) : rpe_status_to_string (st));
        return TRUE;
      }
    case RPE_EXPORT_NPY:
      return export_npy (fig, path, error);
    default:
      return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("%s: unknown export format"), path);
    }
}

gboolean
rpe_export_figure (const RpeFigure     *fig,
                   RpeExportFormat      format,
                   const RpeExportSize *size,
                   const char          *path,
                   GError             **error)
{
  return rpe_export_figure_cancellable (fig, format, size, path, NULL, error);
}

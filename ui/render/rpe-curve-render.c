/* rpe-curve-render.c: a Cairo renderer for line plots (GTK-free). */
#include "config.h"

#include "rpe-curve-render.h"
#include "rpe-text.h"
#include "rpe-ticks.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define FONT_FAMILY "Sans"

void
rpe_curve_plot_init (RpeCurvePlot *plot)
{
  memset (plot, 0, sizeof *plot);
  plot->show_grid = true;
  plot->legend = RPE_CURVE_LEGEND_BEST;
  plot->x_marker = NAN;
  plot->foreground[3] = 1.0;
}

void
rpe_curve_palette (size_t i,
                   double rgb[3])
{
  /* matplotlib "tab10" (Vega category10). */
  static const unsigned int tab10[10] = {
    0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd,
    0x8c564b, 0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf,
  };
  unsigned int c = tab10[i % 10];

  rgb[0] = ((c >> 16) & 0xff) / 255.0;
  rgb[1] = ((c >> 8) & 0xff) / 255.0;
  rgb[2] = (c & 0xff) / 255.0;
}

double
rpe_curve_auto_font (double width,
                     double height)
{
  return fmin (12.0, fmax (10.0, fmin (width, height) / 28.0));
}

int
rpe_curve_line_style (size_t i,
                      double lw,
                      double dashes[4])
{
  double u = fmax (1.0, lw);

  switch (i % 5)
    {
    case 1:   /* dashed */
      dashes[0] = 4.0 * u;
      dashes[1] = 2.2 * u;
      return 2;
    case 2:   /* dotted */
      dashes[0] = 0.01;
      dashes[1] = 2.2 * u;
      return 2;
    case 3:   /* dash-dot */
      dashes[0] = 4.0 * u;
      dashes[1] = 2.0 * u;
      dashes[2] = 0.01;
      dashes[3] = 2.0 * u;
      return 4;
    case 4:   /* long dash */
      dashes[0] = 8.0 * u;
      dashes[1] = 2.5 * u;
      return 2;
    default:
      return 0;
    }
}

/* The dashes of series s (index i), and the cap that draws them (round: dots). */
static int
series_dashes (const RpeCurveSeries *se,
               size_t                i,
               double                lw,
               double                dashes[4],
               cairo_line_cap_t     *cap)
{
  *cap = CAIRO_LINE_CAP_ROUND;
  if (se->dashed)
    {
      dashes[0] = lw * 3.5;
      dashes[1] = lw * 2.0;
      *cap = CAIRO_LINE_CAP_BUTT;
      return 2;
    }
  if (se->color[3] > 0.0)
    return 0;
  return rpe_curve_line_style (i, lw, dashes);
}

static void
series_color (const RpeCurveSeries *s,
              size_t                i,
              double                rgba[4])
{
  if (s->color[3] > 0.0)
    {
      memcpy (rgba, s->color, 4 * sizeof (double));
      return;
    }
  rpe_curve_palette (i, rgba);
  rgba[3] = 1.0;
}

/* ----------------------------------------------------------------- ranges */

/* The axis coordinate of a data value: log10 on a log axis; NaN if not shown. */
static double
axis_value (double v,
            bool   log_axis)
{
  if (!isfinite (v))
    return NAN;
  if (log_axis)
    return v > 0.0 ? log10 (v) : NAN;
  return v;
}

static bool
data_range (const RpeCurvePlot *plot,
            bool                y_axis,
            double             *lo,
            double             *hi)
{
  bool log_axis = y_axis ? plot->y_log : plot->x_log;
  double a = INFINITY, b = -INFINITY;

  for (size_t s = 0; s < plot->n_series; s++)
    {
      const RpeCurveSeries *se = &plot->series[s];

      if (se->x == NULL || se->y == NULL)
        continue;
      for (size_t i = 0; i < se->n; i++)
        {
          double u = axis_value (se->x[i], plot->x_log);
          double v = axis_value (se->y[i], plot->y_log);

          if (isnan (u) || isnan (v))
            continue;
          if (y_axis && se->y_err != NULL && isfinite (se->y_err[i]))
            {
              double e = fabs (se->y_err[i]);
              double l = axis_value (se->y[i] - e, log_axis), h = axis_value (se->y[i] + e, log_axis);

              if (!isnan (l))
                a = fmin (a, l);
              if (!isnan (h))
                b = fmax (b, h);
            }
          a = fmin (a, y_axis ? v : u);
          b = fmax (b, y_axis ? v : u);
        }
    }
  *lo = a;
  *hi = b;
  return a <= b;
}

static bool
has_markers (const RpeCurvePlot *plot)
{
  for (size_t s = 0; s < plot->n_series; s++)
    if (plot->series[s].marker != RPE_CURVE_MARKER_NONE)
      return true;
  return false;
}

static bool
axis_range (const RpeCurvePlot *plot,
            bool                y_axis,
            double             *lo,
            double             *hi)
{
  bool log_axis = y_axis ? plot->y_log : plot->x_log;
  bool fixed = y_axis ? plot->fixed_y : plot->fixed_x;
  double a, b, pad;

  if (fixed)
    {
      a = axis_value (y_axis ? plot->y_min : plot->x_min, log_axis);
      b = axis_value (y_axis ? plot->y_max : plot->x_max, log_axis);
      if (isnan (a) || isnan (b) || !(b > a))
        return false;
      *lo = a;
      *hi = b;
      return true;
    }
  if (!data_range (plot, y_axis, &a, &b))
    return false;
  if (!(b > a))
    {
      double half = log_axis ? 0.5 : (a != 0.0 ? 0.1 * fabs (a) : 0.5);

      a -= half;
      b += half;
    }
  else
    {
      /* matplotlib-like margins: 5 % on y; on x only when markers would be cut */
      pad = y_axis ? 0.05 : (has_markers (plot) ? 0.03 : 0.0);
      pad *= b - a;
      a -= pad;
      b += pad;
    }
  *lo = a;
  *hi = b;
  return true;
}

/* ------------------------------------------------------------------ ticks */

/* The ticks of an axis over [lo, hi] (log10 of the data on a log axis) `length` long, a
 * label needing `spacing` along it. */
static void
make_ticks (double    lo,
            double    hi,
            bool      log_axis,
            double    length,
            double    spacing,
            RpeTicks *t)
{
  RpeAxis axis;

  rpe_axis_init (&axis, log_axis ? RPE_AXIS_LOG10 : RPE_AXIS_VALUE, lo, hi, length, spacing);
  axis.min_count = 2.0;
  axis.max_count = 10.0;
  axis.fallback_gap = 0.7;
  axis.fallback_count = 40.0;
  axis.format = RPE_TICK_FORMAT_SHORT;
  rpe_ticks_compute (&axis, t);
}

/* ------------------------------------------------------------------- text */

static double
text_width (cairo_t    *cr,
            const char *text)
{
  return rpe_text_width (cr, text);
}

static void
show_text_at (cairo_t    *cr,
              const char *text,
              double      x,
              double      y,
              double      xalign,
              double      yalign)
{
  rpe_text_show (cr, text, x, y, xalign, yalign);
}

/* ----------------------------------------------------------------- layout */

typedef struct
{
  RpeCurveFrame frame;
  double        font;
  double        title_font;
  double        tick;
  double        gap;
  RpeTicks      xt, yt;
  /* The legend: inside a corner of the frame, or outside it in room kept for it (right of or
   * under the plot) when no corner is free of data; never dropped. */
  int           legend_out;   /* 0 inside (or none), 1 right, 2 below */
  double        legend_w, legend_h;
  double        extra_bottom;
  double        width;
  double        legend_font;  /* > 0: the legend's text size (smaller than the plot's as a last resort) */
} Layout;

static void draw_marker (cairo_t *cr, RpeCurveMarker marker, double x, double y, double r);

static bool
compute_frame (cairo_t            *cr,
               const RpeCurvePlot *plot,
               double              width,
               double              height,
               double              extra_right,
               double              extra_bottom,
               Layout             *lay)
{
  double x0, x1, y0, y1, left, right, top, bottom, label_h, widest = 0.0;

  memset (lay, 0, sizeof *lay);
  lay->extra_bottom = extra_bottom;
  if (plot == NULL || !(width > 0.0) || !(height > 0.0))
    return false;
  if (!axis_range (plot, false, &x0, &x1) || !axis_range (plot, true, &y0, &y1))
    return false;

  lay->font = (plot->font_size > 0.0 ? plot->font_size : rpe_curve_auto_font (width, height))
              * (plot->font_scale > 0.0 ? plot->font_scale : 1.0);
  lay->title_font = lay->font * 1.15;
  lay->tick = fmax (2.0, lay->font * 0.35);
  lay->gap = fmax (2.0, lay->font * 0.35);
  label_h = lay->font * 1.2;
  cairo_select_font_face (cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, lay->font);

  top = lay->gap + label_h * 0.3;
  if (plot->title != NULL && plot->title[0] != '\0')
    top += lay->title_font * 1.25 + lay->gap;
  if (isfinite (plot->x_marker) && plot->x_marker_label != NULL && plot->x_marker_label[0] != '\0')
    top += label_h;   /* the marker's label, above the data */
  bottom = lay->gap + lay->tick + lay->gap + label_h * 1.2
           + (plot->x_label != NULL && plot->x_label[0] != '\0' ? label_h + lay->gap : 0.0) + extra_bottom;

  /* The y ticks depend on the plot's height, their labels' width on the ticks. */
  make_ticks (y0, y1, plot->y_log, height - top - bottom, label_h * 2.2, &lay->yt);
  for (size_t i = 0; i < lay->yt.n; i++)
    widest = fmax (widest, text_width (cr, lay->yt.tick[i].label));
  /* the y label leaves room for accents above its capitals (P̂, P̃) */
  left = lay->gap + (plot->y_label != NULL && plot->y_label[0] != '\0' ? label_h + lay->gap + lay->font * 0.3 : 0.0)
         + widest + lay->gap + lay->tick;
  right = lay->gap + lay->font * 1.5 + extra_right;

  lay->frame.area.x = round (left);
  lay->frame.area.y = round (top);
  lay->frame.area.width = floor (width - right) - lay->frame.area.x;
  lay->frame.area.height = floor (height - bottom) - lay->frame.area.y;
  if (lay->frame.area.width < 10.0 || lay->frame.area.height < 10.0)
    return false;
  {
    double sample = text_width (cr, "-0.000");

    make_ticks (x0, x1, plot->x_log, lay->frame.area.width, sample * 2.0, &lay->xt);
  }
  lay->frame.x0 = x0;
  lay->frame.x1 = x1;
  lay->frame.y0 = y0;
  lay->frame.y1 = y1;
  lay->frame.x_log = plot->x_log;
  lay->frame.y_log = plot->y_log;
  return true;
}

/* The legend's size at the plot's text size; false if no series has a label. */
static bool
legend_size (cairo_t            *cr,
             const RpeCurvePlot *plot,
             double              font,
             double             *w,
             double             *h)
{
  double row_h = font * 1.3, sample = font * 2.6, pad = font * 0.45, widest = 0.0;
  size_t entries = 0;

  cairo_set_font_size (cr, font);
  for (size_t s = 0; s < plot->n_series; s++)
    if (plot->series[s].label != NULL && plot->series[s].label[0] != '\0')
      {
        widest = fmax (widest, text_width (cr, plot->series[s].label));
        entries++;
      }
  *w = pad * 3.0 + sample + widest;
  *h = pad * 2.0 + row_h * (double) entries;
  return entries > 0;
}

/* Whether any line or point of the plot passes through (x0, y0) - (x1, y1). */
static bool
data_in_box (const RpeCurvePlot  *plot,
             const RpeCurveFrame *f,
             double               x0,
             double               y0,
             double               x1,
             double               y1)
{
  for (size_t s = 0; s < plot->n_series; s++)
    {
      const RpeCurveSeries *se = &plot->series[s];
      double px = NAN, py = NAN;
      bool have = false;

      for (size_t i = 0; se->x != NULL && se->y != NULL && i < se->n; i++)
        {
          double qx, qy;

          if (!rpe_curve_frame_map (f, se->x[i], se->y[i], &qx, &qy))
            {
              have = false;
              continue;
            }
          /* the point, and the segment from the last one, sampled */
          for (int k = have && !se->no_line ? 0 : 16; k <= 16; k++)
            {
              double t = (double) k / 16.0;
              double x = have ? px + (qx - px) * t : qx, y = have ? py + (qy - py) * t : qy;

              if (x >= x0 && x <= x1 && y >= y0 && y <= y1)
                return true;
            }
          px = qx;
          py = qy;
          have = true;
        }
    }
  return false;
}

/* The corner box (x, y) of the legend inside the frame for `where` (a corner). */
static void
legend_corner (const RpeCurveFrame *f,
               RpeCurveLegend       where,
               double               box_w,
               double               box_h,
               double               pad,
               double              *bx,
               double              *by)
{
  bool right = where == RPE_CURVE_LEGEND_TOP_RIGHT || where == RPE_CURVE_LEGEND_BOTTOM_RIGHT;
  bool topc = where == RPE_CURVE_LEGEND_TOP_RIGHT || where == RPE_CURVE_LEGEND_TOP_LEFT;

  *bx = right ? f->area.x + f->area.width - pad - box_w : f->area.x + pad;
  *by = topc ? f->area.y + pad : f->area.y + f->area.height - pad - box_h;
}

static bool place_legend (cairo_t *cr, const RpeCurvePlot *plot, double width, double height, double bw,
                          double bh, bool last, Layout *lay);

static bool
compute_layout (cairo_t            *cr,
                const RpeCurvePlot *plot,
                double              width,
                double              height,
                Layout             *lay)
{
  double bw, bh;

  if (!compute_frame (cr, plot, width, height, 0.0, 0.0, lay))
    return false;
  if (plot->legend == RPE_CURVE_LEGEND_NONE || !legend_size (cr, plot, lay->font, &bw, &bh))
    return true;
  for (double f = 1.0; f >= 0.69; f -= 0.15)
    {
      double font = lay->font * f;

      legend_size (cr, plot, font, &bw, &bh);
      if (place_legend (cr, plot, width, height, bw, bh, f < 0.99, lay))
        {
          lay->legend_font = font;
          return true;
        }
    }
  /* nowhere at 70 %: the plot without its legend */
  return compute_frame (cr, plot, width, height, 0.0, 0.0, lay);
}

/* Places a legend bw x bh: inside a corner free of data, else outside; false if neither
 * leaves a plot (lay then holds the frame without the legend).  last: any corner inside. */
static bool
place_legend (cairo_t            *cr,
              const RpeCurvePlot *plot,
              double              width,
              double              height,
              double              bw,
              double              bh,
              bool                last,
              Layout             *lay)
{
  double pad;
  bool inside = false;

  if (!compute_frame (cr, plot, width, height, 0.0, 0.0, lay))
    return false;
  cairo_set_font_size (cr, lay->font);
  pad = lay->font * 0.45;
  if (bw + 2.0 * pad <= lay->frame.area.width && bh + 2.0 * pad <= lay->frame.area.height)
    {
      if (plot->legend != RPE_CURVE_LEGEND_BEST)
        inside = true;   /* the corner asked for */
      else
        for (int c = RPE_CURVE_LEGEND_TOP_RIGHT; c <= RPE_CURVE_LEGEND_BOTTOM_LEFT && !inside; c++)
          {
            double bx, by;

            legend_corner (&lay->frame, (RpeCurveLegend) c, bw, bh, pad, &bx, &by);
            inside = !data_in_box (plot, &lay->frame, bx - pad * 0.5, by - pad * 0.5, bx + bw + pad * 0.5,
                                   by + bh + pad * 0.5);
          }
    }
  if (inside)
    return true;
  /* Outside: under the frame when that leaves the plot half its height (stacked panels keep
   * their frames aligned), else right of it if that leaves it most of the width; with
   * neither, inside after all. */
  {
    bool right_first = bh > lay->frame.area.height * 0.5 || (bw <= width * 0.3 && width > height * 1.6);

    for (int k = 0; k < 2; k++)
      {
        bool right = (k == 0) == right_first;

        if (right ? bw <= width * 0.45 && compute_frame (cr, plot, width, height, bw + lay->gap, 0.0, lay)
                  : compute_frame (cr, plot, width, height, 0.0, bh + lay->gap, lay))
          {
            lay->legend_out = right ? 1 : 2;
            lay->legend_w = bw;
            lay->legend_h = bh;
            lay->width = width;
            return true;
          }
      }
  }
  compute_frame (cr, plot, width, height, 0.0, 0.0, lay);
  (void) last;
  return false;
}

bool
rpe_curve_plot_layout (cairo_t            *cr,
                       const RpeCurvePlot *plot,
                       double              width,
                       double              height,
                       RpeCurveFrame      *frame)
{
  Layout lay;
  bool ok;

  cairo_save (cr);
  rpe_plot_use_figure_fonts (cr);
  ok = compute_layout (cr, plot, width, height, &lay);
  cairo_restore (cr);
  if (frame != NULL)
    *frame = lay.frame;
  return ok;
}

static double
map_x (const RpeCurveFrame *f,
       double               ax)
{
  return f->area.x + f->area.width * (ax - f->x0) / (f->x1 - f->x0);
}

static double
map_y (const RpeCurveFrame *f,
       double               ay)
{
  return f->area.y + f->area.height * (1.0 - (ay - f->y0) / (f->y1 - f->y0));
}

bool
rpe_curve_frame_map (const RpeCurveFrame *frame,
                     double               x,
                     double               y,
                     double              *px,
                     double              *py)
{
  double ax = axis_value (x, frame->x_log), ay = axis_value (y, frame->y_log);

  if (isnan (ax) || isnan (ay) || !(frame->x1 > frame->x0) || !(frame->y1 > frame->y0))
    return false;
  *px = map_x (frame, ax);
  *py = map_y (frame, ay);
  return true;
}

bool
rpe_curve_plot_nearest (const RpeCurvePlot  *plot,
                        const RpeCurveFrame *frame,
                        double               px,
                        double               py,
                        size_t              *series,
                        size_t              *index,
                        double              *distance)
{
  double best = INFINITY;
  bool found = false;

  if (plot == NULL || frame == NULL)
    return false;
  for (size_t s = 0; s < plot->n_series; s++)
    {
      const RpeCurveSeries *se = &plot->series[s];

      if (se->x == NULL || se->y == NULL)
        continue;
      for (size_t i = 0; i < se->n; i++)
        {
          double qx, qy, d;

          if (!rpe_curve_frame_map (frame, se->x[i], se->y[i], &qx, &qy))
            continue;
          d = hypot (qx - px, qy - py);
          if (d < best)
            {
              best = d;
              found = true;
              if (series != NULL)
                *series = s;
              if (index != NULL)
                *index = i;
            }
        }
    }
  if (found && distance != NULL)
    *distance = best;
  return found;
}

/* ---------------------------------------------------------------- drawing */

static void
draw_marker (cairo_t        *cr,
             RpeCurveMarker  marker,
             double          x,
             double          y,
             double          r)
{
  switch (marker)
    {
    case RPE_CURVE_MARKER_CIRCLE:
      cairo_new_sub_path (cr);
      cairo_arc (cr, x, y, r, 0, 2 * M_PI);
      break;
    case RPE_CURVE_MARKER_SQUARE:
      cairo_rectangle (cr, x - r * 0.85, y - r * 0.85, r * 1.7, r * 1.7);
      break;
    case RPE_CURVE_MARKER_TRIANGLE:
      cairo_move_to (cr, x, y - r * 1.15);
      cairo_line_to (cr, x + r, y + r * 0.7);
      cairo_line_to (cr, x - r, y + r * 0.7);
      cairo_close_path (cr);
      break;
    case RPE_CURVE_MARKER_DIAMOND:
      cairo_move_to (cr, x, y - r * 1.2);
      cairo_line_to (cr, x + r, y);
      cairo_line_to (cr, x, y + r * 1.2);
      cairo_line_to (cr, x - r, y);
      cairo_close_path (cr);
      break;
    case RPE_CURVE_MARKER_NONE:
    default:
      break;
    }
}

static void
set_fg (cairo_t            *cr,
        const RpeCurvePlot *plot,
        double              alpha)
{
  cairo_set_source_rgba (cr, plot->foreground[0], plot->foreground[1], plot->foreground[2],
                         plot->foreground[3] * alpha);
}

static void
draw_series (cairo_t              *cr,
             const RpeCurvePlot   *plot,
             const RpeCurveFrame  *f,
             size_t                s,
             double                font)
{
  const RpeCurveSeries *se = &plot->series[s];
  /* lines thicken with large text (a slide), as they would in print */
  double rgba[4], lw = (se->line_width > 0.0 ? se->line_width : 1.5) * fmax (1.0, font / 12.0);
  bool open = false;

  if (se->x == NULL || se->y == NULL || se->n == 0)
    return;
  series_color (se, s, rgba);

  /* Band y -+ err. */
  if (se->y_err != NULL)
    {
      cairo_set_source_rgba (cr, rgba[0], rgba[1], rgba[2], rgba[3] * 0.2);
      for (size_t i = 0; i + 1 < se->n; i++)
        {
          double xa, xb, ya0, ya1, yb0, yb1;
          double ea = fabs (se->y_err[i]), eb = fabs (se->y_err[i + 1]);

          if (!rpe_curve_frame_map (f, se->x[i], se->y[i] + ea, &xa, &ya1)
              || !rpe_curve_frame_map (f, se->x[i], se->y[i] - ea, &xa, &ya0)
              || !rpe_curve_frame_map (f, se->x[i + 1], se->y[i + 1] + eb, &xb, &yb1)
              || !rpe_curve_frame_map (f, se->x[i + 1], se->y[i + 1] - eb, &xb, &yb0))
            continue;
          cairo_move_to (cr, xa, ya0);
          cairo_line_to (cr, xb, yb0);
          cairo_line_to (cr, xb, yb1);
          cairo_line_to (cr, xa, ya1);
          cairo_close_path (cr);
        }
      cairo_fill (cr);
    }

  cairo_set_source_rgba (cr, rgba[0], rgba[1], rgba[2], rgba[3]);
  cairo_set_line_width (cr, lw);
  cairo_set_line_join (cr, CAIRO_LINE_JOIN_ROUND);
  {
    double dashes[4];
    cairo_line_cap_t cap;
    int nd = series_dashes (se, s, lw, dashes, &cap);

    cairo_set_line_cap (cr, cap);
    cairo_set_dash (cr, nd > 0 ? dashes : NULL, nd, 0);
  }
  if (!se->no_line)
    {
      for (size_t i = 0; i < se->n; i++)
        {
          double px, py;

          if (!rpe_curve_frame_map (f, se->x[i], se->y[i], &px, &py))
            {
              open = false;
              continue;
            }
          if (open)
            cairo_line_to (cr, px, py);
          else
            cairo_move_to (cr, px, py);
          open = true;
        }
      cairo_stroke (cr);
    }
  cairo_set_dash (cr, NULL, 0, 0);
  if (se->marker != RPE_CURVE_MARKER_NONE)
    {
      double r = fmax (1.5, font * 0.28);

      for (size_t i = 0; i < se->n; i++)
        {
          double px, py;

          if (rpe_curve_frame_map (f, se->x[i], se->y[i], &px, &py))
            draw_marker (cr, se->marker, px, py, r);
        }
      cairo_fill_preserve (cr);
      cairo_set_source_rgba (cr, 1, 1, 1, 0.9);
      cairo_set_line_width (cr, 0.6);
      cairo_stroke (cr);
    }
}

/* One legend entry: its line sample (and marker) from x, its label after it, centred on y. */
static void
draw_entry (cairo_t            *cr,
            const RpeCurvePlot *plot,
            size_t              s,
            double              x,
            double              y,
            double              font,
            double              sample,
            double              pad)
{
  const RpeCurveSeries *se = &plot->series[s];
  double rgba[4], lw = (se->line_width > 0.0 ? se->line_width : 1.5) * fmax (1.0, font / 12.0);

  series_color (se, s, rgba);
  cairo_set_source_rgba (cr, rgba[0], rgba[1], rgba[2], rgba[3]);
  if (!se->no_line)
    {
      double dashes[4];
      cairo_line_cap_t cap;
      int nd = series_dashes (se, s, lw, dashes, &cap);

      cairo_set_line_width (cr, lw);
      cairo_set_line_cap (cr, cap);
      cairo_set_dash (cr, nd > 0 ? dashes : NULL, nd, 0);
      cairo_move_to (cr, x, y);
      cairo_line_to (cr, x + sample, y);
      cairo_stroke (cr);
      cairo_set_dash (cr, NULL, 0, 0);
    }
  if (se->marker != RPE_CURVE_MARKER_NONE)
    {
      draw_marker (cr, se->marker, x + sample / 2.0, y, fmax (1.5, font * 0.28));
      cairo_fill (cr);
    }
  set_fg (cr, plot, 1.0);
  show_text_at (cr, se->label, x + sample + pad, y, 0.0, 0.5);
}

static void
draw_legend (cairo_t            *cr,
             const RpeCurvePlot *plot,
             const Layout       *lay)
{
  const RpeCurveFrame *f = &lay->frame;
  double font = lay->legend_font > 0.0 ? lay->legend_font : lay->font;
  double row_h = font * 1.3, sample = font * 2.6, pad = font * 0.45;
  double widest = 0.0, box_w, box_h, bx = 0.0, by = 0.0;
  size_t entries = 0;
  RpeCurveLegend where = plot->legend;

  if (where == RPE_CURVE_LEGEND_NONE)
    return;
  cairo_set_font_size (cr, font);
  for (size_t s = 0; s < plot->n_series; s++)
    if (plot->series[s].label != NULL && plot->series[s].label[0] != '\0')
      {
        widest = fmax (widest, text_width (cr, plot->series[s].label));
        entries++;
      }
  if (entries == 0)
    return;
  box_w = pad * 3.0 + sample + widest;
  box_h = pad * 2.0 + row_h * (double) entries;
  if (lay->legend_out == 1)
    {
      bx = f->area.x + f->area.width + lay->font * 1.5 - lay->gap;
      by = f->area.y;
    }
  else if (lay->legend_out == 2)
    {
      bx = fmax (lay->gap, fmin (f->area.x + f->area.width / 2.0 - box_w / 2.0, lay->width - box_w - lay->gap - 1.0));
      by = f->area.y + f->area.height + (lay->frame.area.height > 0 ? 0.0 : 0.0)
           + lay->gap + lay->tick + lay->gap + lay->font * 1.2 * 1.2
           + (plot->x_label != NULL && plot->x_label[0] != '\0' ? lay->font * 1.2 + lay->gap : 0.0);
    }
  else if (box_w > f->area.width || box_h > f->area.height)
    return;

  if (lay->legend_out != 0)
    ;
  else if (where == RPE_CURVE_LEGEND_BEST)
    {
      /* The corner whose box hides the fewest points (top right first on ties). */
      static const RpeCurveLegend order[4] = {
        RPE_CURVE_LEGEND_TOP_RIGHT, RPE_CURVE_LEGEND_TOP_LEFT,
        RPE_CURVE_LEGEND_BOTTOM_RIGHT, RPE_CURVE_LEGEND_BOTTOM_LEFT,
      };
      size_t best = SIZE_MAX;

      for (int c = 0; c < 4; c++)
        {
          bool right = order[c] == RPE_CURVE_LEGEND_TOP_RIGHT || order[c] == RPE_CURVE_LEGEND_BOTTOM_RIGHT;
          bool topc = order[c] == RPE_CURVE_LEGEND_TOP_RIGHT || order[c] == RPE_CURVE_LEGEND_TOP_LEFT;
          double x0 = right ? f->area.x + f->area.width - pad - box_w : f->area.x + pad;
          double y0 = topc ? f->area.y + pad : f->area.y + f->area.height - pad - box_h;
          size_t hidden = 0;

          for (size_t s = 0; s < plot->n_series; s++)
            {
              const RpeCurveSeries *se = &plot->series[s];

              for (size_t i = 0; se->x != NULL && se->y != NULL && i < se->n; i++)
                {
                  double px, py;

                  if (rpe_curve_frame_map (f, se->x[i], se->y[i], &px, &py)
                      && px >= x0 - pad && px <= x0 + box_w + pad && py >= y0 - pad && py <= y0 + box_h + pad)
                    hidden++;
                }
            }
          if (hidden < best)
            {
              best = hidden;
              where = order[c];
            }
        }
    }
  if (lay->legend_out == 0)
  switch (where)
    {
    case RPE_CURVE_LEGEND_TOP_LEFT:
      bx = f->area.x + pad;
      by = f->area.y + pad;
      break;
    case RPE_CURVE_LEGEND_BOTTOM_RIGHT:
      bx = f->area.x + f->area.width - pad - box_w;
      by = f->area.y + f->area.height - pad - box_h;
      break;
    case RPE_CURVE_LEGEND_BOTTOM_LEFT:
      bx = f->area.x + pad;
      by = f->area.y + f->area.height - pad - box_h;
      break;
    case RPE_CURVE_LEGEND_TOP_RIGHT:
    default:
      bx = f->area.x + f->area.width - pad - box_w;
      by = f->area.y + pad;
      break;
    }
  bx = round (bx) + 0.5;
  by = round (by) + 0.5;

  cairo_rectangle (cr, bx, by, round (box_w), round (box_h));
  cairo_set_source_rgba (cr, 1, 1, 1, 0.85);
  cairo_fill_preserve (cr);
  set_fg (cr, plot, 0.35);
  cairo_set_line_width (cr, 0.8);
  cairo_stroke (cr);

  {
    size_t row = 0;

    for (size_t s = 0; s < plot->n_series; s++)
      {
        const RpeCurveSeries *se = &plot->series[s];

        if (se->label == NULL || se->label[0] == '\0')
          continue;
        draw_entry (cr, plot, s, bx + pad, by + pad + row_h * ((double) row + 0.5), lay->font, sample, pad);
        row++;
      }
  }
  cairo_set_font_size (cr, lay->font);
}

void
rpe_curve_render (cairo_t            *cr,
                  const RpeCurvePlot *plot,
                  double              width,
                  double              height)
{
  Layout lay;
  const RpeCurveFrame *f;
  double label_h;

  if (cr == NULL || plot == NULL)
    return;
  cairo_save (cr);
  rpe_plot_use_figure_fonts (cr);
  cairo_rectangle (cr, 0, 0, width, height);
  cairo_clip (cr);
  if (plot->background[3] > 0.0)
    {
      cairo_set_source_rgba (cr, plot->background[0], plot->background[1], plot->background[2],
                             plot->background[3]);
      cairo_paint (cr);
    }
  if (!compute_layout (cr, plot, width, height, &lay))
    {
      cairo_restore (cr);
      return;
    }
  f = &lay.frame;
  label_h = lay.font * 1.2;

  /* Grid lines. */
  if (plot->show_grid)
    {
      cairo_set_line_width (cr, 0.6);
      set_fg (cr, plot, 0.13);
      for (size_t i = 0; i < lay.xt.n; i++)
        {
          double x = round (map_x (f, lay.xt.tick[i].value)) + 0.5;
          cairo_move_to (cr, x, f->area.y);
          cairo_line_to (cr, x, f->area.y + f->area.height);
        }
      for (size_t i = 0; i < lay.yt.n; i++)
        {
          double y = round (map_y (f, lay.yt.tick[i].value)) + 0.5;
          cairo_move_to (cr, f->area.x, y);
          cairo_line_to (cr, f->area.x + f->area.width, y);
        }
      cairo_stroke (cr);
      set_fg (cr, plot, 0.06);
      for (size_t i = 0; i < lay.xt.n_minor; i++)
        {
          double x = round (map_x (f, lay.xt.minor[i])) + 0.5;
          cairo_move_to (cr, x, f->area.y);
          cairo_line_to (cr, x, f->area.y + f->area.height);
        }
      for (size_t i = 0; i < lay.yt.n_minor; i++)
        {
          double y = round (map_y (f, lay.yt.minor[i])) + 0.5;
          cairo_move_to (cr, f->area.x, y);
          cairo_line_to (cr, f->area.x + f->area.width, y);
        }
      cairo_stroke (cr);
    }

  /* Series, clipped to the plot area. */
  cairo_save (cr);
  cairo_rectangle (cr, f->area.x, f->area.y, f->area.width, f->area.height);
  cairo_clip (cr);
  for (size_t s = 0; s < plot->n_series; s++)
    draw_series (cr, plot, f, s, lay.font);
  cairo_restore (cr);

  /* Marker line (N_train): thin and light, its label above the frame, clear of the data. */
  if (isfinite (plot->x_marker))
    {
      double ax = axis_value (plot->x_marker, plot->x_log);

      if (!isnan (ax) && ax >= f->x0 && ax <= f->x1)
        {
          static const double dash[2] = { 3.0, 3.0 };
          double x = round (map_x (f, ax)) + 0.5;

          cairo_save (cr);
          set_fg (cr, plot, 0.4);
          cairo_set_line_width (cr, 0.8);
          cairo_set_dash (cr, dash, 2, 0);
          cairo_move_to (cr, x, f->area.y);
          cairo_line_to (cr, x, f->area.y + f->area.height);
          cairo_stroke (cr);
          cairo_restore (cr);
          if (plot->x_marker_label != NULL && plot->x_marker_label[0] != '\0')
            {
              double lw = text_width (cr, plot->x_marker_label);
              double tx = fmin (fmax (x, f->area.x + lw / 2.0), f->area.x + f->area.width - lw / 2.0);

              set_fg (cr, plot, 0.75);
              show_text_at (cr, plot->x_marker_label, tx, f->area.y - lay.gap * 0.4, 0.5, 1.0);
            }
        }
    }

  /* Frame, ticks and labels. */
  set_fg (cr, plot, 0.85);
  cairo_set_line_width (cr, 1.0);
  cairo_rectangle (cr, f->area.x + 0.5, f->area.y + 0.5, f->area.width - 1.0, f->area.height - 1.0);
  cairo_stroke (cr);
  set_fg (cr, plot, 1.0);
  for (size_t i = 0; i < lay.xt.n; i++)
    {
      double x = round (map_x (f, lay.xt.tick[i].value)) + 0.5;

      cairo_move_to (cr, x, f->area.y + f->area.height);
      cairo_line_to (cr, x, f->area.y + f->area.height + lay.tick);
      cairo_stroke (cr);
      show_text_at (cr, lay.xt.tick[i].label, x, f->area.y + f->area.height + lay.tick + lay.gap, 0.5, 0.0);
    }
  for (size_t i = 0; i < lay.yt.n; i++)
    {
      double y = round (map_y (f, lay.yt.tick[i].value)) + 0.5;

      cairo_move_to (cr, f->area.x, y);
      cairo_line_to (cr, f->area.x - lay.tick, y);
      cairo_stroke (cr);
      show_text_at (cr, lay.yt.tick[i].label, f->area.x - lay.tick - lay.gap, y, 1.0, 0.5);
    }
  if (plot->x_label != NULL && plot->x_label[0] != '\0')
    show_text_at (cr, plot->x_label, f->area.x + f->area.width / 2.0, height - lay.gap - lay.extra_bottom, 0.5, 1.0);
  if (plot->y_label != NULL && plot->y_label[0] != '\0')
    {
      cairo_save (cr);
      double yw = text_width (cr, plot->y_label), room = f->area.height + lay.font * 1.5;

      /* a label longer than the frame: smaller (to 70 %), never over the title */
      if (yw > room && yw > 0.0)
        cairo_set_font_size (cr, lay.font * fmax (0.7, room / yw));
      cairo_translate (cr, lay.gap + lay.font * 0.3, f->area.y + f->area.height / 2.0);
      cairo_rotate (cr, -M_PI_2);
      show_text_at (cr, plot->y_label, 0, 0, 0.5, 0.0);
      cairo_restore (cr);
    }
  if (plot->title != NULL && plot->title[0] != '\0')
    {
      cairo_save (cr);
      cairo_select_font_face (cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
      cairo_set_font_size (cr, lay.title_font);
      rpe_text_show_fitted (cr, plot->title, f->area.x + f->area.width / 2.0, lay.gap, lay.gap, width - lay.gap, 0.0);
      cairo_restore (cr);
    }
  (void) label_h;

  draw_legend (cr, plot, &lay);
  cairo_restore (cr);
}

void
rpe_curve_render_highlight (cairo_t            *cr,
                            const RpeCurvePlot *plot,
                            double              width,
                            double              height,
                            size_t              series,
                            size_t              index)
{
  Layout lay;
  const RpeCurveSeries *se;
  double px, py, rgba[4], w, bx, by, pad;
  char text[160];

  if (cr == NULL || plot == NULL || series >= plot->n_series)
    return;
  se = &plot->series[series];
  if (se->x == NULL || se->y == NULL || index >= se->n)
    return;
  cairo_save (cr);
  rpe_plot_use_figure_fonts (cr);
  if (!compute_layout (cr, plot, width, height, &lay)
      || !rpe_curve_frame_map (&lay.frame, se->x[index], se->y[index], &px, &py))
    {
      cairo_restore (cr);
      return;
    }
  series_color (se, series, rgba);
  cairo_set_source_rgba (cr, rgba[0], rgba[1], rgba[2], 1.0);
  cairo_set_line_width (cr, 2.0);
  cairo_new_sub_path (cr);
  cairo_arc (cr, px, py, lay.font * 0.55, 0, 2 * M_PI);
  cairo_stroke (cr);

  snprintf (text, sizeof text, "%s%sx = %.6g, y = %.6g", se->label != NULL ? se->label : "",
            se->label != NULL ? ": " : "", se->x[index], se->y[index]);
  cairo_set_font_size (cr, lay.font);
  pad = lay.font * 0.4;
  w = text_width (cr, text) + 2.0 * pad;
  bx = px + lay.font;
  by = py - lay.font * 2.2;
  if (bx + w > lay.frame.area.x + lay.frame.area.width)
    bx = px - lay.font - w;
  if (bx < 0.0)
    bx = 0.0;
  if (by < lay.frame.area.y)
    by = py + lay.font;
  cairo_rectangle (cr, round (bx) + 0.5, round (by) + 0.5, round (w), round (lay.font * 1.5));
  cairo_set_source_rgba (cr, 1, 1, 1, 0.92);
  cairo_fill_preserve (cr);
  cairo_set_source_rgba (cr, rgba[0], rgba[1], rgba[2], 1.0);
  cairo_set_line_width (cr, 1.0);
  cairo_stroke (cr);
  cairo_set_source_rgba (cr, 0, 0, 0, 1);
  show_text_at (cr, text, bx + pad, by + lay.font * 0.75, 0.0, 0.5);
  cairo_restore (cr);
}

double
rpe_curve_legend_row (cairo_t            *cr,
                      const RpeCurvePlot *plot,
                      double              x,
                      double              y,
                      double              width,
                      double              font,
                      bool                draw)
{
  double sample = font * 2.6, pad = font * 0.45, row_h = font * 1.4, used = 0.0;
  double widths[64];
  size_t idx[64], n = 0, start = 0;

  if (cr == NULL || plot == NULL || !(font > 0.0))
    return 0.0;
  cairo_save (cr);
  rpe_plot_use_figure_fonts (cr);
  cairo_select_font_face (cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, font);
  for (size_t s = 0; s < plot->n_series && n < 64; s++)
    if (plot->series[s].label != NULL && plot->series[s].label[0] != '\0')
      {
        idx[n] = s;
        widths[n] = sample + pad + text_width (cr, plot->series[s].label) + font * 1.5;
        n++;
      }
  /* rows of entries, each row centred */
  while (start < n)
    {
      size_t end = start + 1;
      double w = widths[start], cx;

      while (end < n && w + widths[end] <= width)
        w += widths[end++];
      w -= font * 1.5;
      cx = x + fmax (0.0, (width - w) / 2.0);
      for (size_t k = start; draw && k < end; k++)
        {
          draw_entry (cr, plot, idx[k], cx, y + used + row_h / 2.0, font, sample, pad);
          cx += widths[k];
        }
      used += row_h;
      start = end;
    }
  cairo_restore (cr);
  return used;
}

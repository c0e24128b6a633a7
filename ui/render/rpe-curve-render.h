/* rpe-curve-render.h: a Cairo renderer for line plots (GTK-free).
 *
 * Curves of RPE Studio (template profiles, estimator error against R,
 * extrapolation metrics): series of (x, y) points with linear or log axes,
 * tick labels, grid lines, a legend, markers and an optional vertical marker
 * line (e.g. the training length N_train).  Like rpe-plot-render, the renderer
 * is a pure function of its inputs; the curve widget and the exporter share it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <cairo.h>

#include "rpe-plot-render.h"

typedef enum
{
  RPE_CURVE_MARKER_NONE,
  RPE_CURVE_MARKER_CIRCLE,
  RPE_CURVE_MARKER_SQUARE,
  RPE_CURVE_MARKER_TRIANGLE,
  RPE_CURVE_MARKER_DIAMOND,
} RpeCurveMarker;

typedef enum
{
  RPE_CURVE_LEGEND_BEST,          /* the corner hiding the fewest points */
  RPE_CURVE_LEGEND_TOP_RIGHT,
  RPE_CURVE_LEGEND_TOP_LEFT,
  RPE_CURVE_LEGEND_BOTTOM_RIGHT,
  RPE_CURVE_LEGEND_BOTTOM_LEFT,
  RPE_CURVE_LEGEND_NONE,
} RpeCurveLegend;

typedef struct
{
  const double   *x;           /* n values */
  const double   *y;           /* n values; NaN (or <= 0 on a log axis) breaks the line */
  size_t          n;
  const double   *y_err;       /* NULL, or n half-widths drawn as a light band y -+ err */
  const char     *label;       /* legend entry; NULL: not in the legend */
  double          color[4];    /* RGBA; alpha 0: the palette colour of the series' index */
  double          line_width;  /* 0: 1.5 */
  bool            dashed;      /* a dashed line; else, for a series in a palette colour,
                                * the line style of its index (solid, dashed, dotted,
                                * dash-dot, long dash: readable in grey and by colour-blind
                                * readers), and solid for a series with its own colour */
  bool            no_line;     /* markers only */
  RpeCurveMarker  marker;
} RpeCurveSeries;

typedef struct
{
  const RpeCurveSeries *series;
  size_t                n_series;
  const char           *title;       /* NULL: none */
  const char           *x_label;
  const char           *y_label;
  bool                  x_log;       /* log10 axes (non-positive values are skipped) */
  bool                  y_log;
  bool                  show_grid;
  RpeCurveLegend        legend;
  bool                  fixed_x;     /* use [x_min, x_max] instead of the data's range */
  double                x_min, x_max;
  bool                  fixed_y;
  double                y_min, y_max;
  double                x_marker;    /* NaN: none; else a dashed vertical line at x */
  const char           *x_marker_label;
  double                foreground[4];
  double                background[4];   /* filled first when alpha > 0 */
  double                font_scale;      /* 0 = 1 */
  /* Added for publication figures (zero in rpe_curve_plot_init): */
  double                font_size;       /* > 0: text size in user units instead of the automatic */
} RpeCurvePlot;

/* Where the data goes: the plot rectangle and the mapping of data to it. */
typedef struct
{
  RpePlotRect area;
  double      x0, x1;   /* data range shown (log10 of it on a log axis) */
  double      y0, y1;
  bool        x_log, y_log;
} RpeCurveFrame;

/* Defaults: no series, linear axes, grid and legend (best corner) shown, no marker
 * line (x_marker = NaN), black foreground, transparent background. */
void rpe_curve_plot_init (RpeCurvePlot *plot);

/* The automatic text size of a plot of this size (user units): at least 10. */
double rpe_curve_auto_font (double width,
                            double height);

/* The dash pattern of line style i (0 solid: returns 0; else the number of dashes
 * written, at most 4) for a line of width lw. */
int rpe_curve_line_style (size_t i,
                          double lw,
                          double dashes[4]);

/* Colour i of the palette (matplotlib's "tab10", colour-blind aware order). */
void rpe_curve_palette (size_t i,
                        double rgb[3]);

/* The layout for this size (cr gives the text metrics).  False when there is
 * nothing to draw (no finite point) or the area is too small. */
bool rpe_curve_plot_layout (cairo_t            *cr,
                            const RpeCurvePlot *plot,
                            double              width,
                            double              height,
                            RpeCurveFrame      *frame);

/* Data (x, y) to user coordinates; false if the point cannot be shown (NaN, or
 * not positive on a log axis). */
bool rpe_curve_frame_map (const RpeCurveFrame *frame,
                          double               x,
                          double               y,
                          double              *px,
                          double              *py);

/* The point nearest to (px, py) in user coordinates (Euclidean, over every shown
 * point of every series).  False if there is none. */
bool rpe_curve_plot_nearest (const RpeCurvePlot  *plot,
                             const RpeCurveFrame *frame,
                             double               px,
                             double               py,
                             size_t              *series,
                             size_t              *index,
                             double              *distance);

/* Draws the plot in (0, 0, width, height); leaves cr's state as it found it. */
void rpe_curve_render (cairo_t            *cr,
                       const RpeCurvePlot *plot,
                       double              width,
                       double              height);

/* Draws the hover read-out of point `index` of `series`: a ring around it and a
 * box with "label: x = ..., y = ...". */
void rpe_curve_render_highlight (cairo_t            *cr,
                                 const RpeCurvePlot *plot,
                                 double              width,
                                 double              height,
                                 size_t              series,
                                 size_t              index);

/* The plot's legend as rows of entries across `width` from (x, y), centred (one legend for
 * the panels of a figure that share their series); returns its height (0: no labelled
 * series).  draw false: measures only.  font: the text size in user units. */
double rpe_curve_legend_row (cairo_t            *cr,
                             const RpeCurvePlot *plot,
                             double              x,
                             double              y,
                             double              width,
                             double              font,
                             bool                draw);

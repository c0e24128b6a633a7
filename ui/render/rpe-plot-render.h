/* rpe-plot-render.h: Cairo renderers for RPE Studio's plots (GTK-free).
 *
 * The renderers are pure functions of their inputs: they draw into the given
 * cairo_t and keep nothing.  Widgets call them from snapshot (through
 * gtk_snapshot_append_cairo); tests and the headless exporter call them on a
 * cairo image surface.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <cairo.h>

#include "rpe-colormap.h"

/* The ticks of an axis (rpe-ticks.h). */
typedef struct _RpeTicks RpeTicks;

typedef enum
{
  RPE_HEATMAP_REDUCE_MEAN,     /* a pixel covering several cells shows their mean */
  RPE_HEATMAP_REDUCE_MAX,      /* ... their largest value */
  RPE_HEATMAP_REDUCE_MAX_ABS,  /* ... the value of largest magnitude (sign kept) */
} RpeHeatmapReduce;

typedef enum
{
  RPE_HEATMAP_SCALE_AUTO,       /* symmetric (diverging) if the data has both signs, else linear */
  RPE_HEATMAP_SCALE_LINEAR,     /* [min, max] onto the whole colour map */
  RPE_HEATMAP_SCALE_SYMMETRIC,  /* [-a, a], a = max |v|, onto the diverging map; 0 at its centre */
} RpeHeatmapScale;

typedef enum
{
  RPE_HEATMAP_TRANSFORM_NONE,       /* values as they are */
  RPE_HEATMAP_TRANSFORM_ATTENTION,  /* the SPE paper's display transform min(1, a^0.4 / 0.02^0.4) of
                                     * attention weights a >= 0 (docs/math.md, section 4); the colour bar is
                                     * labelled in attention units */
  /* Added for the window's colour-scale control (rpe_plot_scale_position says where a value goes): */
  RPE_HEATMAP_TRANSFORM_LOG,        /* log10 of the magnitude over RPE_PLOT_LOG_DECADES decades below the
                                     * range's largest magnitude (a signed range: each sign on its side) */
  RPE_HEATMAP_TRANSFORM_POWER,      /* (|v| / a)^gamma, gamma = transform_param (0: 0.5) */
  RPE_HEATMAP_TRANSFORM_PERCENTILE, /* linear over the range clipped to the p-th percentile,
                                     * p = transform_param (0: 99): [P(100-p), P(p)] */
  RPE_HEATMAP_N_TRANSFORMS,
} RpeHeatmapTransform;

/* Decades a log colour scale spans below the largest magnitude. */
#define RPE_PLOT_LOG_DECADES 4.0
#define RPE_PLOT_DEFAULT_GAMMA 0.5
#define RPE_PLOT_DEFAULT_PERCENTILE 99.0

/* The largest side, in pixels, of a heatmap image rendered at full resolution. */
#define RPE_PLOT_MAX_IMAGE_SIDE 4096

/* The side in pixels of a heatmap's image in vector output (full_resolution) for a plot side of
 * `device` device units (points) and `cells` cells along it: every cell up to the cap, at least
 * 2 pixels per point by whole-cell replication, at most RPE_PLOT_MAX_IMAGE_SIDE.  `cells` 0 (not
 * known yet): 2 pixels per point up to the cap.  The renderer draws with it and the export's
 * memory estimate counts with it. */
double rpe_plot_vector_image_side (double device, size_t cells);

typedef struct
{
  const float        *values;        /* rows x cols, C order: values[m * cols + n] */
  size_t              rows;          /* query positions m (drawn top to bottom) */
  size_t              cols;          /* key positions n (drawn left to right) */
  const char         *title;         /* NULL: none */
  const char         *x_label;       /* NULL: "key position n" */
  const char         *y_label;       /* NULL: "query position m" */
  const RpeColormap  *colormap;      /* NULL: viridis, or rdbu for a symmetric scale */
  RpeHeatmapScale     scale;
  RpeHeatmapReduce    reduce;
  bool                fixed_range;   /* use [vmin, vmax] (symmetric scales use max(|vmin|, |vmax|)) */
  double              vmin;
  double              vmax;
  size_t              train_length;  /* > 0: mark positions >= train_length (N_train) */
  bool                show_colorbar;
  bool                show_axes;     /* ticks, tick labels and axis labels */
  bool                equal_aspect;  /* square cells: the plot is centred in the area */
  double              foreground[4]; /* text and frame colour, RGBA */
  double              background[4]; /* filled first when alpha > 0 */
  /* Added after the first release (zero in rpe_heatmap_data_init): */
  RpeHeatmapTransform transform;     /* applied to each (reduced) value before the colour map */
  bool                full_resolution; /* image at the data's resolution (at most
                                        * RPE_PLOT_MAX_IMAGE_SIDE per side, reduced by `reduce`)
                                        * instead of the target's device pixels: vector exports */
  double              font_scale;    /* text size factor (0 = 1) */
  /* Added for publication figures (zero in rpe_heatmap_data_init): */
  double              font_size;     /* > 0: tick and label text size in user units (points in
                                      * an export), instead of the automatic size; font_scale
                                      * still applies */
  const char         *colorbar_label;/* Pango markup beside the colour bar (what its values
                                      * are, with units); NULL: "attention weight" under the
                                      * attention transform, else none */
  double              max_cell;      /* > 0, with equal_aspect: cells at most this wide, so
                                      * panels side by side get the same image size */
  unsigned int        cell_ticks;    /* without show_axes: RPE_HEATMAP_TICKS_* (small multiples) */
  bool                hide_train_label; /* the N_train lines without their label (a grid says
                                         * it once) */
  bool                hide_y_labels; /* with show_axes: y tick marks only, no numbers or label
                                      * (a panel right of one that has them) */
  size_t              row_positions; /* > 0: the rows are equal bins of this many positions (a map
                                      * already reduced, e.g. N = 65536 streamed to 2048 rows):
                                      * ticks, labels and train_length are in positions; 0: rows */
  size_t              col_positions; /* the same for the columns */
  /* Added for the colour-scale control (zero in rpe_heatmap_data_init): */
  double              transform_param; /* POWER: gamma; PERCENTILE: p in (50, 100]; 0: the default */
  bool                hide_x_labels; /* with show_axes: x tick marks only, no numbers or label
                                      * (a strip above another on the same x axis) */
  /* Added for zoomed maps (zero in rpe_heatmap_data_init): */
  ptrdiff_t           row_origin;    /* the position of the first row: the map is the window
                                      * [row_origin, row_origin + row_positions) of a longer
                                      * sequence (or of lags from a negative one); ticks and
                                      * train_length are those positions */
  ptrdiff_t           col_origin;    /* the same for the columns */
  /* Added for captures (zero in rpe_heatmap_data_init): */
  const float *tokens; /* the token of each position 0 .. n_tokens - 1 (queries and
                                      * keys are one sequence): an axis whose cells are tall / wide
                                      * enough for them is labelled with the tokens of its
                                      * positions, one per cell (rpe-ticks.h), and its default
                                      * label says so; NULL: numbers only */
  size_t       n_tokens;
} RpeHeatmapData;

/* cell_ticks bits: tick marks on the bottom (X) / left (Y) edge, and their numbers.  Space
 * for the numbers is kept in every cell that has marks, so that the cells of a grid line up. */
#define RPE_HEATMAP_TICKS_X       1u
#define RPE_HEATMAP_TICKS_Y       2u
#define RPE_HEATMAP_TICKS_X_TEXT  4u
#define RPE_HEATMAP_TICKS_Y_TEXT  8u

typedef struct
{
  double x;
  double y;
  double width;
  double height;
} RpePlotRect;

/* Sets the font options every renderer uses (grey antialiasing, no hinting, unhinted metrics), so
 * text is rasterised and laid out identically in the window, the exporter and the headless tool. */
void rpe_plot_use_figure_fonts (cairo_t *cr);

/* Defaults: no data, auto scale, mean reduction, colour bar and axes shown,
 * black foreground, transparent background. */
void rpe_heatmap_data_init (RpeHeatmapData *data);

/* The value range mapped onto the colour map (vmin -> bottom entry, vmax -> top
 * entry) and the colour map used.  Non-finite values are ignored.  Returns false
 * when there is nothing to draw (no data or no finite value). */
bool rpe_plot_heatmap_range (const RpeHeatmapData  *data,
                             double                *vmin,
                             double                *vmax,
                             const RpeColormap    **colormap);

/* Where rpe_plot_render_heatmap puts the image and the colour bar for this
 * size (user coordinates of cr; uses cr's font for text metrics).  Returns
 * false when the area is too small for a plot. */
bool rpe_plot_heatmap_layout (cairo_t              *cr,
                              const RpeHeatmapData *data,
                              double                width,
                              double                height,
                              RpePlotRect          *image,
                              RpePlotRect          *colorbar);

/* The position ticks rpe_plot_render_heatmap puts on this heatmap at this size (either may be
 * NULL): values are the absolute positions, pos 0 .. 1 from the image's left (x) or top (y). */
bool rpe_plot_heatmap_ticks (cairo_t              *cr,
                             const RpeHeatmapData *data,
                             double                width,
                             double                height,
                             RpeTicks             *x,
                             RpeTicks             *y);

/* The axes of a heatmap image drawn by someone else (the window's zoomable attention map):
 * the positions [x0, x1) x [y0, y1) it shows (fractions allowed: cell p spans [p, p + 1)),
 * ticked and numbered as rpe_plot_render_heatmap numbers its own axes at this font size, so
 * the window and an export of the same window carry the same ticks. */
typedef struct
{
  double      x0, x1;        /* key positions shown, left to right */
  size_t      x_limit;       /* no tick at or beyond (N; 0: none) */
  double      y0, y1;        /* query positions shown, top to bottom */
  size_t      y_limit;
  const char *x_label;       /* NULL: "key position n" */
  const char *y_label;       /* NULL: "query position m" */
  double      font;          /* text size in user units */
  double      foreground[4]; /* frame and text, RGBA */
  const float *tokens;        /* as RpeHeatmapData.tokens (NULL: none) */
  size_t       n_tokens;
} RpeHeatmapAxes;

/* The ticks of those axes on an image of this size (either output may be NULL). */
void rpe_plot_heatmap_axes_ticks  (cairo_t              *cr,
                                   const RpeHeatmapAxes *axes,
                                   double                image_width,
                                   double                image_height,
                                   RpeTicks             *x,
                                   RpeTicks             *y);
/* Draws the frame round `image`, the ticks, their numbers under and left of it and the axis
 * labels (the y label rotated left of the numbers). */
void rpe_plot_render_heatmap_axes (cairo_t              *cr,
                                   const RpeHeatmapAxes *axes,
                                   const RpePlotRect    *image);

/* The default label of a heatmap axis with these ticks (into buf): "key position n" /
 * "query position m", or, when the ticks are tokens, "key token (n = 3 … 18)". */
const char *rpe_plot_position_axis_label (bool across, const RpeTicks *ticks, char *buf, size_t size);

/* The display transform of the SPE paper, min(1, a^0.4 / 0.02^0.4) (0 for a <= 0, NaN kept). */
double rpe_plot_attention_transform (double a);

/* Where value v goes on the colour map (0 bottom .. 1 top, clamped; NaN for NaN) under the
 * transform for the range [vmin, vmax] as rpe_plot_heatmap_range returns it.  A range with
 * both signs keeps 0 where the linear scale has it and bends each side towards it (LOG,
 * POWER).  The window's views, the exporter and `rpe export` colour every pixel with it. */
double rpe_plot_scale_position (RpeHeatmapTransform transform,
                                double              param,
                                double              vmin,
                                double              vmax,
                                double              v);
/* The transform of a name: "linear" (NONE), "log", "power", "percentile", "attention" (the SPE
 * paper's); false if unknown.  rpe_plot_transform_name is its inverse. */
bool        rpe_plot_transform_from_name (const char          *name,
                                          RpeHeatmapTransform *transform);
const char *rpe_plot_transform_name      (RpeHeatmapTransform  transform);
/* A short description for a colour bar's label over the range [vmin, vmax] as
 * rpe_plot_heatmap_range returns it: "log scale, 1.2 decades" (the span the bar shows: 4
 * decades below the largest magnitude at most), "log scale, 4 decades each side" (a range
 * with both signs), "power scale, \u03b3 = 0.5", "clipped to the 1st\u201399th percentile";
 * "" for NONE and ATTENTION.  Writes into buf. */
const char *rpe_plot_transform_caption   (RpeHeatmapTransform  transform,
                                          double               param,
                                          double               vmin,
                                          double               vmax,
                                          char                *buf,
                                          size_t               size);

/* A vertical colour bar in `rect` (the map's bottom entry at the bottom), framed,
 * with ticks and labels on its right for values vmin .. vmax (or attention units
 * under RPE_HEATMAP_TRANSFORM_ATTENTION, where vmin/vmax are ignored).  font is
 * the label size in user units; fg the RGBA of the frame and text. */
void rpe_plot_render_colorbar (cairo_t             *cr,
                               const RpeColormap   *colormap,
                               double               vmin,
                               double               vmax,
                               RpeHeatmapTransform  transform,
                               double               param,   /* the transform's parameter */
                               const char          *label,   /* markup, rotated right of the
                                                              * numbers; NULL: none */
                               const RpePlotRect   *rect,
                               double               font,
                               const double         fg[4]);
/* The width the labels of such a colour bar need right of the bar (tick + text + label). */
double rpe_plot_colorbar_label_width (cairo_t             *cr,
                                      double               vmin,
                                      double               vmax,
                                      RpeHeatmapTransform  transform,
                                      double               param,
                                      const char          *label,
                                      double               height,
                                      double               font);

/* The automatic text size of a heatmap of this size (user units): at least 10, so
 * tick numbers read at 1x in the window. */
double rpe_plot_auto_font (double width,
                           double height);

/* Draws the heatmap in (0, 0, width, height) of cr's user space.  When the
 * data has more cells than the image has device pixels, each pixel shows the
 * mean / max of the cells it covers; memory used is at most the image's
 * pixels.  Leaves cr's state as it found it. */
void rpe_plot_render_heatmap (cairo_t              *cr,
                              const RpeHeatmapData *data,
                              double                width,
                              double                height);

/* ---- Small multiples: a grid of heatmaps (e.g. the D templates of a head) ---- */

typedef struct
{
  const RpeHeatmapData *cells;        /* n_cells heatmaps; each cell's title is drawn above it
                                       * (e.g. "h=0, d=3"); their own axes/colour bar flags are
                                       * ignored */
  size_t                n_cells;
  size_t                n_columns;    /* 0: ceil(sqrt(n_cells)) */
  const char           *title;        /* NULL: none */
  const char           *x_label;      /* NULL: "key position n" */
  const char           *y_label;      /* NULL: "query position m" */
  bool                  shared_scale; /* one range over all cells and one colour bar at the
                                       * right; else each cell has its own range and bar */
  double                foreground[4];
  double                background[4];
  double                font_scale;   /* 0 = 1 */
  /* Added for publication figures (zero in rpe_heatmap_grid_init): */
  double                font_size;    /* > 0: text size in user units instead of the automatic */
  const char           *colorbar_label; /* markup beside the shared colour bar */
} RpeHeatmapGrid;

/* Defaults: no cells, shared scale, black foreground, transparent background. */
void rpe_heatmap_grid_init (RpeHeatmapGrid *grid);

/* The shared range of a grid (the union of the cells' ranges; symmetric when any
 * cell's scale makes it so) and its colour map.  False if no cell has data. */
bool rpe_plot_grid_range (const RpeHeatmapGrid  *grid,
                          double                *vmin,
                          double                *vmax,
                          const RpeColormap    **colormap);

/* Where cell i goes (its whole area, title included) for this size; false if out of
 * range or the area is too small. */
bool rpe_plot_grid_cell_rect (cairo_t              *cr,
                              const RpeHeatmapGrid *grid,
                              double                width,
                              double                height,
                              size_t                i,
                              RpePlotRect          *rect);

/* Where cell i's image goes (square, the same size in every cell), which tick marks and
 * numbers it carries (RPE_HEATMAP_TICKS_* bits: the grid shares its axes, numbers only on
 * the left column and the bottom row) and the grid's number of columns.  Any output may be
 * NULL; false if i is out of range or the area is too small. */
bool rpe_plot_grid_cell_layout (cairo_t              *cr,
                                const RpeHeatmapGrid *grid,
                                double                width,
                                double                height,
                                size_t                i,
                                RpePlotRect          *image,
                                unsigned int         *ticks,
                                size_t               *n_columns);

/* The height, at most max_height, at which a grid this wide has its largest images with
 * no room wasted above or below them (title included); 0 if nothing can be drawn. */
double rpe_plot_grid_height_for_width (const RpeHeatmapGrid *grid,
                                       double                width,
                                       double                max_height);

/* Draws the grid in (0, 0, width, height); leaves cr's state as it found it. */
void rpe_plot_render_heatmap_grid (cairo_t              *cr,
                                   const RpeHeatmapGrid *grid,
                                   double                width,
                                   double                height);

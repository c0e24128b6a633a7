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
} RpeHeatmapData;

typedef struct
{
  double x;
  double y;
  double width;
  double height;
} RpePlotRect;

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

/* Draws the heatmap in (0, 0, width, height) of cr's user space.  When the
 * data has more cells than the image has device pixels, each pixel shows the
 * mean / max of the cells it covers; memory used is at most the image's
 * pixels.  Leaves cr's state as it found it. */
void rpe_plot_render_heatmap (cairo_t              *cr,
                              const RpeHeatmapData *data,
                              double                width,
                              double                height);

/* rpe-compare-render.h: the figures of Compare (A | B | A - B) and Overview (every layer and
 * head), GTK-free, so that the window and `rpe export` draw the same thing.
 *
 * The comparison is an RpeFigure of kind COMPARE with three panels: A and B on one shared linear
 * range (their union) with the same colour map, and A - B on a symmetric range [-a, a] of a
 * diverging map, each with a labelled colour bar; each panel's title says what that side shows.
 * The overview is a GRID with one row per layer and one column per head on one shared scale.
 */
#pragma once

#include "rpe-export.h"

G_BEGIN_DECLS

typedef struct
{
  const float        *values[3];   /* A, B, A - B: rows x cols each */
  size_t              rows, cols;
  size_t              n;           /* positions (axes) */
  double              vmin, vmax;  /* the shared range of A and B */
  double              dmax;        /* max |A - B| (0: from the data) */
  const char         *caption[2];  /* what A and B show (plain text) */
  const char         *title;       /* NULL: none */
  const RpeColormap  *colormap;    /* A and B (NULL: viridis) */
  const RpeColormap  *diverging;   /* A - B (NULL: the default diverging map) */
  gboolean            attention;   /* the values are attention weights */
  gboolean            attention_transform;
  RpeHeatmapTransform transform;   /* A and B: the colour scale (NONE: linear, or attention_transform) */
  double              transform_param;
  size_t              train_length;
} RpeCompareFigureData;

/* Fills fig (rpe_figure_init'd here) from data; titles (g_strfreev by the caller) receives the
 * strings the figure points at.  What both captions say becomes the figure title (unless data
 * has one), what differs the panel titles ("A: head 1", "B: head 2", "A − B"). */
void rpe_compare_figure_fill  (RpeFigure                  *fig,
                               const RpeCompareFigureData *data,
                               char                     ***titles);

typedef struct
{
  const float        *values;      /* (n_layers * n_heads, rows, cols) */
  const gboolean     *done;        /* NULL: every cell; else only cells done are drawn */
  size_t              n_layers, n_heads;
  const int          *layers;      /* layer numbers (-1: none) */
  size_t              rows, cols, n;
  const char         *title;
  const RpeColormap  *colormap;
  gboolean            attention;
  RpeHeatmapTransform transform;   /* every cell's colour scale (NONE: linear) */
  double              transform_param;
} RpeOverviewFigureData;

/* Fills fig (GRID) with one cell per (layer, head): cells (n_layers * n_heads RpeHeatmapData) and
 * titles (a NULL-terminated array) are allocated for the figure; free with g_free / g_strfreev. */
void rpe_overview_figure_fill (RpeFigure                   *fig,
                               const RpeOverviewFigureData *data,
                               RpeHeatmapData             **cells,
                               char                      ***titles);

G_END_DECLS

/* rpe-heatmap-view.h: a widget showing one heatmap (an N x M float array).
 *
 * The view only holds data handed to it on the main loop and draws it with
 * rpe_plot_render_heatmap from snapshot; it never computes.
 */
#pragma once

#include <gtk/gtk.h>

#include "rpe-plot-render.h"

G_BEGIN_DECLS

#define RPE_TYPE_HEATMAP_VIEW (rpe_heatmap_view_get_type ())
G_DECLARE_FINAL_TYPE (RpeHeatmapView, rpe_heatmap_view, RPE, HEATMAP_VIEW, GtkWidget)

GtkWidget   *rpe_heatmap_view_new              (void);
/* values: rows * cols floats, C order (row = query position); NULL clears.
 * The view keeps a reference on values. */
void         rpe_heatmap_view_set_data         (RpeHeatmapView    *self,
                                                GBytes            *values,
                                                gsize              rows,
                                                gsize              cols);
/* The data last set (NULL if none) and its shape. */
const float *rpe_heatmap_view_get_data         (RpeHeatmapView    *self,
                                                gsize             *rows,
                                                gsize             *cols);
void         rpe_heatmap_view_set_title        (RpeHeatmapView    *self,
                                                const char        *title);
const char  *rpe_heatmap_view_get_title        (RpeHeatmapView    *self);
void         rpe_heatmap_view_set_colormap     (RpeHeatmapView    *self,
                                                const RpeColormap *colormap);
void         rpe_heatmap_view_set_scale        (RpeHeatmapView    *self,
                                                RpeHeatmapScale    scale);
/* The colour scale (RpeHeatmapData.transform, .transform_param). */
void         rpe_heatmap_view_set_transform    (RpeHeatmapView      *self,
                                                RpeHeatmapTransform  transform,
                                                double               param);
/* fixed: map [vmin, vmax] (e.g. shared by small multiples); else each view's own range. */
void         rpe_heatmap_view_set_range        (RpeHeatmapView    *self,
                                                gboolean           fixed,
                                                double             vmin,
                                                double             vmax);
void         rpe_heatmap_view_set_train_length (RpeHeatmapView    *self,
                                                gsize              train_length);
guint        rpe_heatmap_view_get_train_length (RpeHeatmapView    *self);
void         rpe_heatmap_view_set_show_axes    (RpeHeatmapView    *self,
                                                gboolean           show_axes);
/* Square cells (default TRUE). */
void         rpe_heatmap_view_set_equal_aspect (RpeHeatmapView    *self,
                                                gboolean           equal_aspect);
/* The renderer's input as the view would draw it now (valid while the view's
 * data is unchanged). */
void         rpe_heatmap_view_get_render_data  (RpeHeatmapView    *self,
                                                RpeHeatmapData    *data);

/* Axis labels (NULL: "key position n" / "query position m"). */
void         rpe_heatmap_view_set_axis_labels  (RpeHeatmapView    *self,
                                                const char        *x_label,
                                                const char        *y_label);
/* The positions of the first row and column (RpeHeatmapData.row_origin, .col_origin; 0 by
 * default): the axes number the cells from them, e.g. lags -11 .. 11 of a 23-row map of lags
 * from -11.  Cells keep their indices (rpe_heatmap_view_cell_at). */
void         rpe_heatmap_view_set_origin       (RpeHeatmapView    *self,
                                                gssize             row_origin,
                                                gssize             col_origin);
void         rpe_heatmap_view_get_origin       (RpeHeatmapView    *self,
                                                gssize            *row_origin,
                                                gssize            *col_origin);
/* The cell (row, col) under widget point (x, y), as the view draws it now; FALSE outside the
 * image or without data. */
gboolean     rpe_heatmap_view_cell_at          (RpeHeatmapView    *self,
                                                double             x,
                                                double             y,
                                                gsize             *row,
                                                gsize             *col);
/* The centre of cell (row, col) in widget coordinates; FALSE when nothing is drawn. */
gboolean     rpe_heatmap_view_cell_center      (RpeHeatmapView    *self,
                                                gsize              row,
                                                gsize              col,
                                                double            *x,
                                                double            *y);

G_END_DECLS

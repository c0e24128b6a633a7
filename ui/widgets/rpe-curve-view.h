/* rpe-curve-view.h: the one widget showing curves (e.g. an RpeCurveTable, the teaching
 * view's error against R, the Curves page, the templates' profile) through
 * rpe-curve-render, with a legend and a hover read-out of the nearest point.  In
 * presentation mode (the window's .presentation style class, F11) its text is
 * RPE_CURVE_VIEW_PRESENTATION_SCALE times larger, as the heatmap views', and the height
 * it asks for the square root of that larger.
 *
 * The view copies the series handed to it on the main loop; snapshot only
 * renders (rpe_curve_render + rpe_curve_render_highlight).
 */
#pragma once

#include <gtk/gtk.h>

#include "rpe-curve-render.h"
#include "rpe-curves.h"

G_BEGIN_DECLS

#define RPE_CURVE_VIEW_PRESENTATION_SCALE 1.6

#define RPE_TYPE_CURVE_VIEW (rpe_curve_view_get_type ())
G_DECLARE_FINAL_TYPE (RpeCurveView, rpe_curve_view, RPE, CURVE_VIEW, GtkWidget)

GtkWidget *rpe_curve_view_new             (void);
/* A view filling its place in a view's layout: expanding, at least 200 x 150 (natural
 * 360 x 240). */
GtkWidget *rpe_curve_view_new_plot        (void);
/* Replaces the series with copies of these (x, y, y_err and labels are copied;
 * n_series 0 clears). */
void       rpe_curve_view_set_series      (RpeCurveView         *self,
                                           const RpeCurveSeries *series,
                                           gsize                 n_series);
/* Series from a table: x_column against each of y_columns (NULL-terminated; NULL =
 * every other column), labelled with the column names.  FALSE if a column is missing. */
gboolean   rpe_curve_view_set_table       (RpeCurveView         *self,
                                           const RpeCurveTable  *table,
                                           const char           *x_column,
                                           const char * const   *y_columns);
gsize      rpe_curve_view_get_n_series    (RpeCurveView         *self);
void       rpe_curve_view_set_title       (RpeCurveView         *self,
                                           const char           *title);
void       rpe_curve_view_set_axis_labels (RpeCurveView         *self,
                                           const char           *x_label,
                                           const char           *y_label);
void       rpe_curve_view_set_log_scale   (RpeCurveView         *self,
                                           gboolean              x_log,
                                           gboolean              y_log);
/* A dashed vertical line at x (NaN: none), e.g. N_train. */
void       rpe_curve_view_set_marker      (RpeCurveView         *self,
                                           double                x,
                                           const char           *label);
/* The point under the hover read-out; FALSE if none. */
gboolean   rpe_curve_view_get_hover       (RpeCurveView         *self,
                                           gsize                *series,
                                           gsize                *index);
/* Moves the read-out as the pointer would at (x, y) in widget coordinates
 * (hover within 24 px of a point); for tests and keyboard navigation. */
void       rpe_curve_view_hover_at        (RpeCurveView         *self,
                                           double                x,
                                           double                y);
/* Every setting of a plot at once (series, strings and arrays copied): axes, ranges,
 * legend, marker, text size, as rpe_curve_render draws it. */
void       rpe_curve_view_set_plot        (RpeCurveView         *self,
                                           const RpeCurvePlot   *plot);
/* The minimum and natural size the view asks for (default 160 x 120, 420 x 300). */
void       rpe_curve_view_set_size_hints  (RpeCurveView         *self,
                                           int                   min_width,
                                           int                   min_height,
                                           int                   natural_width,
                                           int                   natural_height);
/* The renderer's input as the view draws it now (valid until the view changes). */
void       rpe_curve_view_get_plot        (RpeCurveView         *self,
                                           RpeCurvePlot         *plot);

G_END_DECLS

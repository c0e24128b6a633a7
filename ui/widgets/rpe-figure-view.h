/* rpe-figure-view.h: a widget showing a figure as `rpe export` draws it (GTK).
 *
 * RpeFigureView draws an RpeFigureBundle's figure (rpe_figure_render) laid out at the widget's
 * size, in the theme's text colour on the window's background, so a view that shows its export
 * figure has, by construction, the layout of the export: one cell size and one top edge for the
 * panels of a comparison, one colour bar for a shared pair.  The layout is the widget's size
 * divided by rpe_figure_view_get_scale (the figure is scaled down only where the widget is
 * smaller than the figure needs; scaled up 1.6 times in presentation mode).
 *
 * The panels of a COMPARE figure (without plots) can be hit-tested: which panel and cell lie
 * under a point, where a cell is.  The figure page's hover read-out reads them.
 */
#pragma once

#include <gtk/gtk.h>

#include "rpe-export-dialog.h"

G_BEGIN_DECLS

#define RPE_TYPE_FIGURE_VIEW (rpe_figure_view_get_type ())
G_DECLARE_FINAL_TYPE (RpeFigureView, rpe_figure_view, RPE, FIGURE_VIEW, GtkWidget)

GtkWidget       *rpe_figure_view_new          (void);
/* The figure shown (a reference is taken; NULL shows nothing). */
void             rpe_figure_view_set_figure   (RpeFigureView   *self,
                                               RpeFigureBundle *bundle);
RpeFigureBundle *rpe_figure_view_get_figure   (RpeFigureView   *self);
/* Text at least this size in pixels where the figure's own text size allows it (0: none): the
 * figure is not scaled down below it (a window's text stays legible, the figure is laid out at
 * the widget's size instead). */
void             rpe_figure_view_set_min_text (RpeFigureView   *self,
                                               double           pixels);
/* The scale the figure is drawn at now: a user unit of its layout is this many pixels. */
double           rpe_figure_view_get_scale    (RpeFigureView   *self);
/* The images of a COMPARE figure's panels in widget coordinates; returns their number (0:
 * nothing drawn, another kind of figure, or a comparison with plots). */
gsize            rpe_figure_view_get_images   (RpeFigureView   *self,
                                               RpePlotRect      images[RPE_FIGURE_MAX_PANELS]);
/* The panel and its cell (row, col: indices into the panel's values) under widget point
 * (x, y); FALSE outside every image. */
gboolean         rpe_figure_view_cell_at      (RpeFigureView   *self,
                                               double           x,
                                               double           y,
                                               guint           *panel,
                                               gsize           *row,
                                               gsize           *col);
/* The centre of a panel's cell in widget coordinates; FALSE when it is not drawn. */
gboolean         rpe_figure_view_cell_center  (RpeFigureView   *self,
                                               guint            panel,
                                               gsize            row,
                                               gsize            col,
                                               double          *x,
                                               double          *y);

G_END_DECLS

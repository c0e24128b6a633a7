/* rpe-templates-view.h: a grid of the templates P_d of the chosen head
 * (analytic, empirical or their difference; like the SPE paper's Fig. 7).
 * Clicking a cell opens it large beside its lag profile P_d(tau) and selects
 * feature d in the state.  An RpeFigurePage: its job, cap, progress, caption, hover
 * read-out and export are the page's (rpe-figure-page.h). */
#pragma once

#include <gtk/gtk.h>

#include "rpe-compute.h"
#include "rpe-curve-view.h"
#include "rpe-figure-page.h"
#include "rpe-heatmap-view.h"

G_BEGIN_DECLS

#define RPE_TEMPLATES_VIEW_N_CAP 512   /* the grid shows at most N = 512 */

#define RPE_TYPE_TEMPLATES_VIEW (rpe_templates_view_get_type ())
G_DECLARE_FINAL_TYPE (RpeTemplatesView, rpe_templates_view, RPE, TEMPLATES_VIEW, RpeFigurePage)

GtkWidget      *rpe_templates_view_new           (RpeExplorerState *state);
/* The templates shown (the page's result; NULL while none). */
RpeTemplates   *rpe_templates_view_get_templates (RpeTemplatesView *self);
/* The grid drawn (the figure `rpe export templates` draws, through the same renderer:
 * one colour bar when the range is shared) and its cell of feature d (NULL if none). */
const RpeHeatmapGrid *rpe_templates_view_get_grid (RpeTemplatesView *self);
const RpeHeatmapData *rpe_templates_view_get_cell (RpeTemplatesView *self,
                                                   gsize             d);
/* The widget drawing the grid, and the cell under its point (x, y) (-1: none). */
GtkWidget      *rpe_templates_view_get_grid_area (RpeTemplatesView *self);
int             rpe_templates_view_cell_at       (RpeTemplatesView *self,
                                                  double            x,
                                                  double            y);
/* Opens cell d large with its profile (as a click does); -1 returns to the grid. */
void            rpe_templates_view_open_cell     (RpeTemplatesView *self,
                                                  int               d);
int             rpe_templates_view_get_open_cell (RpeTemplatesView *self);
RpeHeatmapView *rpe_templates_view_get_detail    (RpeTemplatesView *self);
RpeCurveView   *rpe_templates_view_get_profile   (RpeTemplatesView *self);

G_END_DECLS

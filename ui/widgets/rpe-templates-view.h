/* rpe-templates-view.h: a grid of the templates P_d of the chosen head
 * (analytic, empirical or their difference; like the SPE paper's Fig. 7).
 * Clicking a cell opens it large beside its lag profile P_d(tau) and selects
 * feature d in the state.  Computes on a worker (one job at a time, stale
 * results dropped) while mapped. */
#pragma once

#include <gtk/gtk.h>

#include "rpe-compute.h"
#include "rpe-explorer-state.h"
#include "rpe-export-dialog.h"
#include "rpe-heatmap-view.h"
#include "rpe-teaching-view.h"

G_BEGIN_DECLS

#define RPE_TEMPLATES_VIEW_N_CAP 512   /* the grid shows at most N = 512 */

#define RPE_TYPE_TEMPLATES_VIEW (rpe_templates_view_get_type ())
G_DECLARE_FINAL_TYPE (RpeTemplatesView, rpe_templates_view, RPE, TEMPLATES_VIEW, GtkWidget)

GtkWidget      *rpe_templates_view_new           (RpeExplorerState *state);
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
gboolean        rpe_templates_view_is_busy       (RpeTemplatesView *self);
void            rpe_templates_view_cancel        (RpeTemplatesView *self);
/* The grid is computed at min (N, n_cap) (RPE_TEMPLATES_VIEW_N_CAP by default) until
 * "Compute at Full N" (FALSE and the reason shown if it exceeds the memory budget). */
void            rpe_templates_view_set_n_cap     (RpeTemplatesView *self,
                                                  gsize             n_cap);
gboolean        rpe_templates_view_compute_full  (RpeTemplatesView *self);
const char     *rpe_templates_view_get_cap_text  (RpeTemplatesView *self);
const char     *rpe_templates_view_get_caption   (RpeTemplatesView *self);
/* The figure of what the view shows (as `rpe export templates`, or `template`
 * while a cell is open), holding a reference on the result; NULL while there
 * is none.  "figure-changed" is emitted when a new result is shown. */
RpeFigureBundle *rpe_templates_view_build_figure (RpeTemplatesView *self);
/* Offers the dialog an animated sweep of this view (its state now, its presentation). */
void             rpe_templates_view_setup_sweep (RpeTemplatesView *self,
                                                 RpeExportDialog  *dialog);

G_END_DECLS

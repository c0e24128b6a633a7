/* rpe-overview-view.h: the Overview page: the template of the current feature (or the attention
 * map) of every layer and head of the open checkpoint's module, as small multiples (rows: layers,
 * columns: heads) on one scale.  The cells are computed on a worker and appear as they finish
 * (progress and Cancel); clicking a cell emits "cell-activated" (the window opens that layer and
 * head in the Templates or Attention view).  The figure is the one `rpe export overview` writes.
 */
#pragma once

#include <gtk/gtk.h>

#include "rpe-compare.h"
#include "rpe-export-dialog.h"

G_BEGIN_DECLS

#define RPE_TYPE_OVERVIEW_VIEW (rpe_overview_view_get_type ())
G_DECLARE_FINAL_TYPE (RpeOverviewView, rpe_overview_view, RPE, OVERVIEW_VIEW, GtkBox)

GtkWidget       *rpe_overview_view_new            (RpeExplorerState *state);
void             rpe_overview_view_set_checkpoint (RpeOverviewView  *self,
                                                   const char       *path);
/* Computes the overview now (it is computed when shown and the state changed). */
void             rpe_overview_view_refresh        (RpeOverviewView  *self);
gboolean         rpe_overview_view_is_busy        (RpeOverviewView  *self);
void             rpe_overview_view_cancel         (RpeOverviewView  *self);
/* The overview being filled or done (NULL if none). */
RpeOverview     *rpe_overview_view_get_result     (RpeOverviewView  *self);
/* As a click on cell index (l * H + h) would. */
void             rpe_overview_view_activate_cell  (RpeOverviewView  *self,
                                                   gsize             index);
RpeFigureBundle *rpe_overview_view_build_figure   (RpeOverviewView  *self);

G_END_DECLS

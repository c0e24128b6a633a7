/* rpe-overview-view.h: the Overview page: the template of the current feature (or the attention
 * map) of every layer and head of the open checkpoint's module, as small multiples (rows: layers,
 * columns: heads) on one scale.  The cells appear as the job computes them; clicking a cell emits
 * "cell-activated" (the window opens that layer and head in the Templates or Attention view).  The
 * figure is the one `rpe export overview` writes.  An RpeFigurePage: the job, its progress and
 * Cancel, the caption, the hover read-out and the export are the page's (rpe-figure-page.h).
 */
#pragma once

#include <gtk/gtk.h>

#include "rpe-compare.h"
#include "rpe-figure-page.h"

G_BEGIN_DECLS

#define RPE_TYPE_OVERVIEW_VIEW (rpe_overview_view_get_type ())
G_DECLARE_FINAL_TYPE (RpeOverviewView, rpe_overview_view, RPE, OVERVIEW_VIEW, RpeFigurePage)

GtkWidget       *rpe_overview_view_new            (RpeExplorerState *state);
void             rpe_overview_view_set_checkpoint (RpeOverviewView  *self,
                                                   const char       *path);
/* The overview being filled or done (NULL if none). */
RpeOverview     *rpe_overview_view_get_result     (RpeOverviewView  *self);
/* As a click on cell index (l * H + h) would. */
void             rpe_overview_view_activate_cell  (RpeOverviewView  *self,
                                                   gsize             index);

G_END_DECLS

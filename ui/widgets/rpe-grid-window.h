/* rpe-grid-window.h: 2-D convSPE over an image grid (docs/math.md, section 2; rpe-conv-spe-2d.h).
 *
 * A window beside the explorer for the state's 2-D convSPE module (filters
 * (H*D, 1, L1, L2), the authors' ConvSPE(ndim=2)): the grid N1 x N2 (positions
 * row-major), the template of head h, feature d as an image of 2-D lags
 * (di, dj) in [-(N1-1), N1-1] x [-(N2-1), N2-1], and one query position's
 * attention over the grid; clicking a position of the grid makes it the
 * query.  Head, feature, gate and content are the sidebar's.  Its content is a
 * figure page (rpe-figure-page.h): computed on workers (rpe_compute_grid_async)
 * with progress and Cancel, stale results dropped, only while shown.  Escape
 * closes it.
 */
#pragma once

#include <adwaita.h>

#include "rpe-compute.h"
#include "rpe-explorer-state.h"
#include "rpe-heatmap-view.h"

G_BEGIN_DECLS

#define RPE_TYPE_GRID_WINDOW (rpe_grid_window_get_type ())
G_DECLARE_FINAL_TYPE (RpeGridWindow, rpe_grid_window, RPE, GRID_WINDOW, AdwWindow)

RpeGridWindow  *rpe_grid_window_new            (GtkWindow        *parent,
                                                RpeExplorerState *state);
/* The result shown (NULL before the first one); TRUE while a job runs. */
RpeGridImage   *rpe_grid_window_get_image      (RpeGridWindow    *self);
gboolean        rpe_grid_window_is_busy        (RpeGridWindow    *self);
/* The two heatmaps: the lag image and the query's attention over the grid. */
RpeHeatmapView *rpe_grid_window_get_lag_view   (RpeGridWindow    *self);
RpeHeatmapView *rpe_grid_window_get_query_view (RpeGridWindow    *self);

G_END_DECLS

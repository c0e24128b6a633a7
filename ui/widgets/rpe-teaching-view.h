/* rpe-teaching-view.h: the "SPE vs RPE" teaching view: exact attention, its SPE estimate and
 * their difference side by side (docs/math.md, section 4), an R slider, a "Draw new noise" button and
 * the template error against R with the current R marked (or, a map row clicked, that query row
 * of the exact and estimated maps).
 *
 * An RpeFigurePage: it computes at min (N, 256) until "Compute at Full N", and its job, progress,
 * stale badge, caption, hover read-out and export are the page's (rpe-figure-page.h).
 */
#pragma once

#include <gtk/gtk.h>

#include "rpe-compute.h"
#include "rpe-curve-view.h"
#include "rpe-figure-page.h"
#include "rpe-heatmap-view.h"

G_BEGIN_DECLS

#define RPE_TYPE_TEACHING_VIEW (rpe_teaching_view_get_type ())
G_DECLARE_FINAL_TYPE (RpeTeachingView, rpe_teaching_view, RPE, TEACHING_VIEW, RpeFigurePage)

GtkWidget      *rpe_teaching_view_new          (RpeExplorerState *state);
/* The result shown (NULL while none). */
RpeTeaching    *rpe_teaching_view_get_result   (RpeTeachingView  *self);
RpeHeatmapView *rpe_teaching_view_get_heatmap  (RpeTeachingView  *self,
                                                guint             which);  /* 0 exact, 1 estimate, 2 difference */
RpeCurveView   *rpe_teaching_view_get_plot     (RpeTeachingView  *self);
/* The query row m whose exact and estimated weights the plot below the maps shows instead
 * of the template error (a click on a map row, Up/Down); -1: the template error again. */
void            rpe_teaching_view_set_row      (RpeTeachingView  *self,
                                                gssize            m);
gssize          rpe_teaching_view_get_row      (RpeTeachingView  *self);

G_END_DECLS

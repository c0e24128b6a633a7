/* rpe-curves-page.h: the Curves page: the lag profiles of the chosen head, the SPE estimator's
 * error against R, and how each scheme behaves beyond the training length (four RpeCurveViews,
 * the figure `rpe export curves` draws).
 *
 * An RpeFigurePage: the profiles are computed at min (N, RPE_COMPUTE_CURVES_N_CAP) until "Compute
 * at Full N"; the job, progress, caption, hover read-out and export are the page's.
 */
#pragma once

#include <gtk/gtk.h>

#include "rpe-compute.h"
#include "rpe-curve-view.h"
#include "rpe-figure-page.h"

G_BEGIN_DECLS

#define RPE_TYPE_CURVES_PAGE (rpe_curves_page_get_type ())
G_DECLARE_FINAL_TYPE (RpeCurvesPage, rpe_curves_page, RPE, CURVES_PAGE, RpeFigurePage)

GtkWidget      *rpe_curves_page_new            (RpeExplorerState *state);
/* The curves shown (NULL while none). */
RpeCurves      *rpe_curves_page_get_result     (RpeCurvesPage    *self);
/* Plot i of the four (0 profiles, 1 error against R, 2 attended distance, 3 invariance). */
RpeCurveView   *rpe_curves_page_get_plot       (RpeCurvesPage    *self,
                                                guint             i);

G_END_DECLS

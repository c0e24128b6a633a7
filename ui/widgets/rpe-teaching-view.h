/* rpe-teaching-view.h: the "SPE vs RPE" teaching view and the Curves page; their
 * plots are RpeCurveViews (rpe-curve-view.h).
 *
 * RpeTeachingView exact attention, its SPE estimate and their difference side
 *                 by side (docs/math.md, section 4), an R slider, a "Draw new noise"
 *                 button and the template error against R with the current R
 *                 marked.
 * RpeCurvesPage   the profile, estimator error and extrapolation curves.
 * Both views follow an RpeExplorerState and compute on workers (one job each).
 */
#pragma once

#include <gtk/gtk.h>

#include "rpe-compute.h"
#include "rpe-curve-render.h"
#include "rpe-curve-view.h"
#include "rpe-explorer-state.h"
#include "rpe-export-dialog.h"
#include "rpe-heatmap-view.h"

G_BEGIN_DECLS

#define RPE_TYPE_TEACHING_VIEW (rpe_teaching_view_get_type ())
G_DECLARE_FINAL_TYPE (RpeTeachingView, rpe_teaching_view, RPE, TEACHING_VIEW, GtkWidget)

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
gboolean        rpe_teaching_view_is_busy      (RpeTeachingView  *self);
void            rpe_teaching_view_cancel       (RpeTeachingView  *self);
/* The view computes at N = min (N, n_cap) (256 by default) until "Compute at Full N". */
void            rpe_teaching_view_set_n_cap    (RpeTeachingView  *self,
                                                gsize             n_cap);
gsize           rpe_teaching_view_get_n_cap    (RpeTeachingView  *self);
/* "Compute at Full N": one job at the state's N; FALSE (and the reason shown on the view)
 * if that exceeds the memory budget. */
gboolean        rpe_teaching_view_compute_full (RpeTeachingView  *self);
/* The cap / stale / refusal line shown ("" when hidden) and the progress bar's text. */
const char     *rpe_teaching_view_get_cap_text (RpeTeachingView  *self);
const char     *rpe_teaching_view_get_progress_text (RpeTeachingView *self);
/* exact | SPE estimate | difference, as `rpe export spe-vs-rpe` draws them;
 * NULL while there is no result.  "figure-changed" follows new results. */
RpeFigureBundle *rpe_teaching_view_build_figure (RpeTeachingView *self);
/* Offers the dialog an animated sweep of this view (its state now, its presentation). */
void             rpe_teaching_view_setup_sweep  (RpeTeachingView *self,
                                                 RpeExportDialog *dialog);

#define RPE_TYPE_CURVES_PAGE (rpe_curves_page_get_type ())
G_DECLARE_FINAL_TYPE (RpeCurvesPage, rpe_curves_page, RPE, CURVES_PAGE, GtkWidget)

GtkWidget      *rpe_curves_page_new            (RpeExplorerState *state);
RpeCurves      *rpe_curves_page_get_result     (RpeCurvesPage    *self);
gboolean        rpe_curves_page_is_busy        (RpeCurvesPage    *self);
void            rpe_curves_page_cancel         (RpeCurvesPage    *self);
/* The profiles are computed at min (N, n_cap) (RPE_COMPUTE_CURVES_N_CAP by default). */
void            rpe_curves_page_set_n_cap      (RpeCurvesPage    *self,
                                                gsize             n_cap);
gboolean        rpe_curves_page_compute_full   (RpeCurvesPage    *self);
const char     *rpe_curves_page_get_cap_text   (RpeCurvesPage    *self);
/* The four plots of the page in one figure (2 x 2; CSV: the extrapolation
 * table); NULL while there is no result.  "figure-changed" follows new results. */
RpeFigureBundle *rpe_curves_page_build_figure  (RpeCurvesPage    *self);

/* Teaching and curves views compute only while mapped; a change while hidden
 * is computed when they are shown. */

G_END_DECLS

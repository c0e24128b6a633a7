/* rpe-compare-view.h: the Compare page: A | B | A - B of the Templates or the Attention view.
 *
 * The settings are properties of the explorer state (compare-mode, compare-what,
 * compare-a-layer, compare-b-layer, compare-b-head, compare-b-method, compare-b-checkpoint);
 * "Pin A" keeps a snapshot of the current state as A (mode "Pinned vs current": edit, then see
 * before | after | difference).  The comparison runs on a worker (rpe-compare.h); an RpeFigurePage:
 * the job, its progress and Cancel, the caption, the hover read-out and the export are the page's.
 * The figure is rpe_compare_figure_fill's, the one `rpe export compare-templates |
 * compare-attention` writes.
 */
#pragma once

#include <gtk/gtk.h>

#include "rpe-compare.h"
#include "rpe-figure-page.h"

G_BEGIN_DECLS

#define RPE_TYPE_COMPARE_VIEW (rpe_compare_view_get_type ())
G_DECLARE_FINAL_TYPE (RpeCompareView, rpe_compare_view, RPE, COMPARE_VIEW, RpeFigurePage)

GtkWidget       *rpe_compare_view_new            (RpeExplorerState *state);
/* The checkpoint the current parameters come from ("demo", "demo:NAME" or a path), for the
 * layer and method modes. */
void             rpe_compare_view_set_checkpoint (RpeCompareView   *self,
                                                  const char       *path);
/* Keeps the current state as A and switches to "Pinned vs current". */
void             rpe_compare_view_pin            (RpeCompareView   *self);
/* Opens capture `path` (a file or "demo:NAME") on a worker as B's capture (modes "Two captures"
 * and "Two checkpoints"): compare-b-capture is set once it is opened (and, in "Two captures",
 * checked against the current model and module); a refused one changes nothing and the caption
 * says why. */
void rpe_compare_view_choose_b_capture (RpeCompareView *self, const char *path);
/* Whether a capture is being opened for B. */
gboolean rpe_compare_view_is_opening_capture (RpeCompareView *self);
/* The last comparison shown (NULL if none). */
RpeComparison   *rpe_compare_view_get_result     (RpeCompareView   *self);

G_END_DECLS

/* rpe-outputs-view.h: the Outputs view: what attention does to values V.
 *
 * For the current head: the output Y of exact relative (softmax) attention and of SPE linear
 * attention with the current feature map and R (or, "L V vs L̂ V", the unbiased pair without
 * softmax and feature map), their difference over (position, channel), channel c against
 * position and the relative error per position (mean and band over several draws), N_train
 * marked: the figure of ui/render/rpe-outputs-render.h, which `rpe export outputs` draws too.
 * The values: one impulse per channel (at chosen positions), a sine sweep, seeded noise or a
 * .npy file of shape (N, Dv) or (N, H, Dv).  Follows every control of the explorer state;
 * an RpeFigurePage: the job (one at a time, progress, Cancel, stale results dropped, only while
 * mapped), the caption, the hover read-out and the export are the page's (rpe-figure-page.h).
 */
#pragma once

#include <gtk/gtk.h>

#include "rpe-figure-page.h"
#include "rpe-outputs-job.h"
#include "rpe-session.h"

G_BEGIN_DECLS

#define RPE_TYPE_OUTPUTS_VIEW (rpe_outputs_view_get_type ())
G_DECLARE_FINAL_TYPE (RpeOutputsView, rpe_outputs_view, RPE, OUTPUTS_VIEW, RpeFigurePage)

GtkWidget        *rpe_outputs_view_new          (RpeExplorerState  *state);
/* The result shown (NULL while none). */
RpeOutputsResult *rpe_outputs_view_get_result   (RpeOutputsView    *self);
/* The view's choices (each starts a new computation). */
void              rpe_outputs_view_set_values   (RpeOutputsView    *self,
                                                 RpeValuesKind      kind,
                                                 gsize              channels);
/* The captured values of the content's layer (the Values menu's "Captured values (layer l)",
 * there while the content is a captured layer with values, and chosen when they appear); FALSE
 * (and nothing changes) when there are none.  Any other choice of values leaves them. */
gboolean rpe_outputs_view_set_captured (RpeOutputsView *self);
gboolean rpe_outputs_view_get_captured (RpeOutputsView *self);
/* IMPULSE positions ("" or NULL: evenly spread); FALSE (and nothing changes) if malformed. */
gboolean          rpe_outputs_view_set_positions (RpeOutputsView   *self,
                                                  const char       *text);
/* Values from a .npy file (read on the worker; an error shows in the page's caption). */
void              rpe_outputs_view_set_npy      (RpeOutputsView    *self,
                                                 const char        *path);
void              rpe_outputs_view_set_compare  (RpeOutputsView    *self,
                                                 RpeOutputsCompare  compare);
void              rpe_outputs_view_set_several_draws (RpeOutputsView *self,
                                                      gboolean        several);
void              rpe_outputs_view_set_channel  (RpeOutputsView    *self,
                                                 gsize              channel);
/* The view's settings into a session (out is cleared first), and back: restore sets every
 * setting of a session that has them (outputs->have) and returns FALSE, changing nothing,
 * when they are not valid. */
void              rpe_outputs_view_store        (RpeOutputsView          *self,
                                                 RpeSessionOutputs       *out);
gboolean          rpe_outputs_view_restore      (RpeOutputsView          *self,
                                                 const RpeSessionOutputs *outputs);

G_END_DECLS

/* rpe-fit-dialog.h: the Fit panel (issue 16): SPE fitted to another relative bias.
 *
 * A window transient for the main window: a target (ALiBi, KERPLE log/power, or a .npy of
 * centred weights (2N-1,) or (H, 2N-1)), the SPE method and its size (K sines or L taps),
 * gated or not, H and D (from the explorer's current module) and N (the explorer's length).
 * Fit runs rpe_fit_spe on a worker (rpe-fit-job.h) with progress and Cancel; changing an
 * input cancels a running fit and drops its result.  The result shows, for a chosen head,
 * the target and fitted logit profiles side by side with the attention the fit induces
 * (softmax of the fitted template logits, unit content), and the relative error as
 * `rpe fit` prints it.  "Apply to the Explorer" puts the fitted module on the explorer.
 */
#pragma once

#include <adwaita.h>

#include "rpe-explorer-state.h"
#include "rpe-fit-job.h"

G_BEGIN_DECLS

typedef enum
{
  RPE_FIT_TARGET_ALIBI,
  RPE_FIT_TARGET_KERPLE_LOG,
  RPE_FIT_TARGET_KERPLE_POWER,
  RPE_FIT_TARGET_FILE,
} RpeFitTargetKind;

#define RPE_TYPE_FIT_DIALOG (rpe_fit_dialog_get_type ())
G_DECLARE_FINAL_TYPE (RpeFitDialog, rpe_fit_dialog, RPE, FIT_DIALOG, AdwWindow)

RpeFitDialog *rpe_fit_dialog_new (GtkWindow        *parent,
                                  RpeExplorerState *state);

/* The controls, set as a user would (each change drops a running fit and its result). */
void          rpe_fit_dialog_set_target      (RpeFitDialog     *self,
                                              RpeFitTargetKind  kind);
void          rpe_fit_dialog_set_target_file (RpeFitDialog     *self,
                                              const char       *path);
void          rpe_fit_dialog_set_kerple      (RpeFitDialog     *self,
                                              double            r1,
                                              double            r2);
void          rpe_fit_dialog_set_method      (RpeFitDialog     *self,
                                              RpeSpeMethod      method,
                                              gsize             size);
void          rpe_fit_dialog_set_gated       (RpeFitDialog     *self,
                                              gboolean          gated);
void          rpe_fit_dialog_set_sizes       (RpeFitDialog     *self,
                                              gsize             heads,
                                              gsize             features,
                                              gsize             length);

/* The buttons (the same as clicking them). */
void          rpe_fit_dialog_fit    (RpeFitDialog *self);
void          rpe_fit_dialog_cancel (RpeFitDialog *self);
void          rpe_fit_dialog_apply  (RpeFitDialog *self);

gboolean      rpe_fit_dialog_is_busy        (RpeFitDialog *self);
/* The progress bar's fraction (0 when no fit runs). */
double        rpe_fit_dialog_get_progress   (RpeFitDialog *self);
/* The current result (NULL while none, or after an input changed). */
RpeFitResult *rpe_fit_dialog_get_result     (RpeFitDialog *self);
/* The error line shown ("relative error E", as `rpe fit` prints it), or the failure. */
const char   *rpe_fit_dialog_get_status     (RpeFitDialog *self);
/* "fit to ALiBi (K = 4)" for the current result (NULL without one). */
char         *rpe_fit_dialog_dup_source     (RpeFitDialog *self);

G_END_DECLS

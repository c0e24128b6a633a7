/* rpe-stem-editor.h: a stem plot of n values edited by drawing on it.
 *
 * Used for convSPE filter taps (wq, wk; length L), FastRPB weights w_tau
 * (n = 2N - 1, x offset -(N-1)) and gates g in [0, 1] per feature (fixed
 * range [0, 1]).  Pressing and dragging "draws": every tap the pointer
 * crosses gets the pointer's value, interpolated between motion events.
 * Keyboard: Left/Right (Home/End) select a tap, Up/Down nudge its value by
 * 1/50 of the range (Shift: 1/500), 0 (or Delete) sets it to zero.
 *
 * Signals:
 *   "values-changed" (guint first, guint count): live, while drawing or
 *       nudging, with the changed index range [first, first + count).
 *   "editing-finished" (): a stroke ended or a key nudge was applied.
 * Properties (all notify): "n-values" (uint, read-only), "selected" (int,
 *   -1: none), "x-offset" (int64), "label" (string), "title" (string),
 *   "fixed-range" (boolean), "range-min", "range-max" (double).
 */
#pragma once

#include <gtk/gtk.h>

#include "rpe-editor-render.h"

G_BEGIN_DECLS

#define RPE_TYPE_STEM_EDITOR (rpe_stem_editor_get_type ())
G_DECLARE_FINAL_TYPE (RpeStemEditor, rpe_stem_editor, RPE, STEM_EDITOR, GtkWidget)

GtkWidget   *rpe_stem_editor_new             (void);

/* Copies n values (n == 0 or v == NULL clears).  Does not emit
 * "values-changed".  With an automatic range the range is refitted. */
void         rpe_stem_editor_set_values      (RpeStemEditor *self,
                                              const float   *v,
                                              gsize          n);
/* The editor's values (owned by the editor, valid until the next
 * set_values) and their count. */
const float *rpe_stem_editor_get_values      (RpeStemEditor *self,
                                              gsize         *n);

/* fixed: values are shown in and clamped to [vmin, vmax] (vmin < vmax), e.g.
 * [0, 1] for gates.  Otherwise a symmetric range [-a, a] fitted to the data
 * (held while a stroke is in progress, refitted when it ends). */
void         rpe_stem_editor_set_range       (RpeStemEditor *self,
                                              gboolean       fixed,
                                              double         vmin,
                                              double         vmax);
void         rpe_stem_editor_get_range       (RpeStemEditor *self,
                                              double        *vmin,
                                              double        *vmax);

/* The x label of index 0 (tau of w[0]: -(N-1) for FastRPB weights). */
void         rpe_stem_editor_set_x_offset    (RpeStemEditor *self,
                                              gint64         x_offset);
gint64       rpe_stem_editor_get_x_offset    (RpeStemEditor *self);

/* The x axis label, e.g. "tap j", "lag τ", "feature d" (NULL: "index"). */
void         rpe_stem_editor_set_label       (RpeStemEditor *self,
                                              const char    *label);
const char  *rpe_stem_editor_get_label       (RpeStemEditor *self);

void         rpe_stem_editor_set_title       (RpeStemEditor *self,
                                              const char    *title);
const char  *rpe_stem_editor_get_title       (RpeStemEditor *self);

/* -1: none. */
void         rpe_stem_editor_set_selected    (RpeStemEditor *self,
                                              int            index);
int          rpe_stem_editor_get_selected    (RpeStemEditor *self);

/* The renderer's input as the editor would draw it now (pointers valid
 * while the editor's values are unchanged). */
void         rpe_stem_editor_get_render_data (RpeStemEditor     *self,
                                              RpeStemRenderData *data);

/* The gesture handlers, in widget coordinates (exposed for tests and for
 * driving the editor programmatically). */
void         _rpe_stem_editor_stroke_begin   (RpeStemEditor *self,
                                              double         x,
                                              double         y);
void         _rpe_stem_editor_stroke_to      (RpeStemEditor *self,
                                              double         x,
                                              double         y);
void         _rpe_stem_editor_stroke_end     (RpeStemEditor *self);
/* The key handler: TRUE if the key was used. */
gboolean     _rpe_stem_editor_handle_key     (RpeStemEditor   *self,
                                              guint            keyval,
                                              GdkModifierType  state);

G_END_DECLS

/* rpe-spectrum-editor.h: the K sine components of one (h, d) as draggable
 * points on a small spectrum plot (docs/math.md, section 1).
 *
 * Each component k is a point at (f_k, lambda_k): x = frequency f in
 * [0, 0.5] cycles/position, y = gain lambda >= 0 (the axis grows while a
 * point is dragged above it).  Its phase theta_k is the needle from the point,
 * counter-clockwise from +x.  Optionally a strip under the plot shows the
 * resulting lag profile P(tau), supplied by the caller.
 *
 * Mouse: drag a point to move it (f and lambda clamped to [0, 0.5] and >= 0);
 *   Shift+drag vertically, or scroll over a point, to turn its phase.
 * Keyboard: Tab / Shift+Tab select the next / previous point (leaving the
 *   widget past the last / first); Left/Right nudge f by 0.005 (Shift: 0.0005);
 *   Up/Down nudge lambda by 1/50 of the axis (Shift: 1/500); Page Up/Down (or
 *   [ and ]) turn the phase by 15 degrees.
 *
 * Signals:
 *   "component-changed" (guint k, double f, double theta, double lambda):
 *       live, while dragging, scrolling or nudging.
 *   "editing-finished" (): the drag ended, or after a key nudge / scroll step.
 * Properties (all notify): "n-components" (uint, read-only), "selected" (int,
 *   -1: none), "lambda-max" (double, read-only: top of the gain axis),
 *   "title" (string).
 */
#pragma once

#include <gtk/gtk.h>

#include "rpe-editor-render.h"

G_BEGIN_DECLS

#define RPE_TYPE_SPECTRUM_EDITOR (rpe_spectrum_editor_get_type ())
G_DECLARE_FINAL_TYPE (RpeSpectrumEditor, rpe_spectrum_editor, RPE, SPECTRUM_EDITOR, GtkWidget)

GtkWidget *rpe_spectrum_editor_new             (void);

/* Copies K components (theta may be NULL: all 0).  f is clamped to
 * [0, 0.5], lambda to >= 0, theta wrapped to (-pi, pi].  Does not emit
 * "component-changed".  The gain axis is refitted. */
void       rpe_spectrum_editor_set_components  (RpeSpectrumEditor *self,
                                                const float       *f,
                                                const float       *theta,
                                                const float       *lambda,
                                                gsize              K);
/* The editor's arrays (owned by it, valid until the next set_components);
 * any out pointer may be NULL.  Returns K. */
gsize      rpe_spectrum_editor_get_components  (RpeSpectrumEditor *self,
                                                const float      **f,
                                                const float      **theta,
                                                const float      **lambda);
/* One component, e.g. from numeric entries; clamps like set_components and
 * does not emit "component-changed". */
void       rpe_spectrum_editor_set_component   (RpeSpectrumEditor *self,
                                                guint              k,
                                                double             f,
                                                double             theta,
                                                double             lambda);
gboolean   rpe_spectrum_editor_get_component   (RpeSpectrumEditor *self,
                                                guint              k,
                                                double            *f,
                                                double            *theta,
                                                double            *lambda);

/* -1: none. */
void       rpe_spectrum_editor_set_selected    (RpeSpectrumEditor *self,
                                                int                k);
int        rpe_spectrum_editor_get_selected    (RpeSpectrumEditor *self);

/* The lag profile P(tau) for tau = tau0 .. tau0 + n - 1 (copied; NULL or
 * n < 2 hides the strip). */
void       rpe_spectrum_editor_set_profile     (RpeSpectrumEditor *self,
                                                const float       *profile,
                                                gsize              n,
                                                gint64             tau0);

void       rpe_spectrum_editor_set_title       (RpeSpectrumEditor *self,
                                                const char        *title);
const char *rpe_spectrum_editor_get_title      (RpeSpectrumEditor *self);
double     rpe_spectrum_editor_get_lambda_max  (RpeSpectrumEditor *self);

/* The renderer's input as the editor would draw it now. */
void       rpe_spectrum_editor_get_render_data (RpeSpectrumEditor     *self,
                                                RpeSpectrumRenderData *data);

/* The gesture handlers, in widget coordinates (exposed for tests).
 * drag_begin returns TRUE if a point was grabbed (Shift in state: phase). */
gboolean   _rpe_spectrum_editor_drag_begin     (RpeSpectrumEditor *self,
                                                double             x,
                                                double             y,
                                                GdkModifierType    state);
void       _rpe_spectrum_editor_drag_to        (RpeSpectrumEditor *self,
                                                double             x,
                                                double             y);
void       _rpe_spectrum_editor_drag_end       (RpeSpectrumEditor *self);
/* Scroll dy steps over (x, y): turns the phase of the point there. */
gboolean   _rpe_spectrum_editor_scroll         (RpeSpectrumEditor *self,
                                                double             x,
                                                double             y,
                                                double             dy);
gboolean   _rpe_spectrum_editor_handle_key     (RpeSpectrumEditor *self,
                                                guint              keyval,
                                                GdkModifierType    state);

G_END_DECLS

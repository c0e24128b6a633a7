/* rpe-gesture-helper.h: the guards every gesture handler of the window goes
 * through, so that no event value (a NaN position, an infinite wheel delta,
 * a zero pinch scale, a first XI2 smooth-scroll event carrying the device's
 * absolute valuator) reaches a viewport, an index or a parameter.
 *
 * Positions are accepted when finite and within RPE_GESTURE_MAX_COORD of the
 * widget; wheel deltas are clamped to RPE_GESTURE_MAX_SCROLL notches per
 * event; pinch scales to [1/RPE_GESTURE_MAX_ZOOM, RPE_GESTURE_MAX_ZOOM] per
 * step.  RpeDragTracker turns a GtkGestureDrag's begin + offsets into
 * absolute positions and refuses non-finite ones (used by the spectrum and
 * stem editors and the attention map).  The two editors also share their
 * controller set-up and theme colours here, and their layout (frames, margins,
 * hit tests, strokes) in ui/render/rpe-editor-render.c. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define RPE_GESTURE_MAX_COORD   1.0e6
#define RPE_GESTURE_MAX_SCROLL  5.0
#define RPE_GESTURE_MAX_ZOOM    16.0

gboolean rpe_gesture_point_ok   (double x,
                                 double y);
/* FALSE for a non-finite or zero delta; else *out is dy clamped to
 * [-RPE_GESTURE_MAX_SCROLL, RPE_GESTURE_MAX_SCROLL]. */
gboolean rpe_gesture_scroll_delta (double  dy,
                                   double *out);
/* The zoom factor of a pinch step from scale last to scale (both > 0 and
 * finite), clamped; FALSE when either is unusable. */
gboolean rpe_gesture_zoom_factor (double  scale,
                                  double  last,
                                  double *factor);
/* v clamped to [lo, hi]; fallback when v is not finite. */
double   rpe_gesture_clamp      (double v,
                                 double lo,
                                 double hi,
                                 double fallback);
/* The pointer position of the current event of controller in widget's
 * coordinates; FALSE when there is no event or no usable position. */
gboolean rpe_gesture_event_position (GtkEventController *controller,
                                     GtkWidget          *widget,
                                     double             *x,
                                     double             *y);

/* The GNOME scroll convention inside widget (the window): the wheel scrolls
 * the pane under the pointer; a spin button, scale or spectrum editor (whose
 * wheel turns a phase) takes the wheel only while it has the keyboard focus
 * (unfocused, its scrolled pane scrolls instead, or nothing happens).  Adds a
 * capture-phase scroll controller to widget. */
void     rpe_gesture_guard_wheel (GtkWidget *widget);
/* TRUE when widget is one of those controls (the test of the guard). */
gboolean rpe_gesture_is_wheel_control (GtkWidget *widget);

typedef struct
{
  gboolean active;
  double   x0, y0;     /* where the drag began */
  double   x, y;       /* the last accepted position */
} RpeDragTracker;

/* FALSE (and inactive) when (x, y) is unusable. */
gboolean rpe_drag_tracker_begin  (RpeDragTracker *tracker,
                                  double          x,
                                  double          y);
/* The absolute position of offset (dx, dy); FALSE when inactive or unusable
 * (the last position is kept). */
gboolean rpe_drag_tracker_update (RpeDragTracker *tracker,
                                  double          dx,
                                  double          dy,
                                  double         *x,
                                  double         *y);
void     rpe_drag_tracker_end    (RpeDragTracker *tracker);

/* ---- The editors' shared widget code (the spectrum and stem editors) ---- */

/* The callbacks of an editor's input, each connected with the widget as its data:
 * drag_begin/update/end on a primary-button GtkGestureDrag, motion/leave on a motion
 * controller, scroll (NULL: none) on a vertical discrete scroll controller, key_pressed
 * on a key controller, focus_changed on a focus controller's enter and leave, and
 * query_tooltip on the widget. */
typedef struct
{
  GCallback drag_begin;
  GCallback drag_update;
  GCallback drag_end;
  GCallback motion;
  GCallback leave;
  GCallback scroll;
  GCallback key_pressed;
  GCallback focus_changed;
  GCallback query_tooltip;
} RpeEditorHandlers;

/* Makes widget an editor: focusable, with tooltips, expanding horizontally, its input
 * controllers connected to handlers. */
void     rpe_gesture_attach_editor (GtkWidget               *widget,
                                    const RpeEditorHandlers *handlers);
/* The theme's text colour and accent colour (accent left as it is when the theme has
 * none) as RGBA, for the Cairo renderers of rpe-editor-render.h. */
void     rpe_gesture_theme_colors  (GtkWidget *widget,
                                    double     foreground[4],
                                    double     accent[4]);

G_END_DECLS

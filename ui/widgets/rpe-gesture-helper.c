/* rpe-gesture-helper.c: input guards shared by the window's widgets. */
#include "config.h"

#include "rpe-gesture-helper.h"

#include <math.h>

gboolean
rpe_gesture_point_ok (double x,
                      double y)
{
  return isfinite (x) && isfinite (y)
         && fabs (x) <= RPE_GESTURE_MAX_COORD && fabs (y) <= RPE_GESTURE_MAX_COORD;
}

gboolean
rpe_gesture_scroll_delta (double  dy,
                          double *out)
{
  if (!isfinite (dy) || dy == 0.0)
    return FALSE;
  *out = CLAMP (dy, -RPE_GESTURE_MAX_SCROLL, RPE_GESTURE_MAX_SCROLL);
  return TRUE;
}

gboolean
rpe_gesture_zoom_factor (double  scale,
                         double  last,
                         double *factor)
{
  double f;

  if (!isfinite (scale) || !isfinite (last) || !(scale > 0.0) || !(last > 0.0))
    return FALSE;
  /* in logarithms: the ratio of two extreme scales neither overflows nor underflows */
  f = log (scale) - log (last);
  f = CLAMP (f, -log (RPE_GESTURE_MAX_ZOOM), log (RPE_GESTURE_MAX_ZOOM));
  *factor = f == log (RPE_GESTURE_MAX_ZOOM) ? RPE_GESTURE_MAX_ZOOM
            : f == -log (RPE_GESTURE_MAX_ZOOM) ? 1.0 / RPE_GESTURE_MAX_ZOOM : exp (f);
  return TRUE;
}

double
rpe_gesture_clamp (double v,
                   double lo,
                   double hi,
                   double fallback)
{
  if (!isfinite (v))
    return fallback;
  return v < lo ? lo : v > hi ? hi : v;
}

/* The pointer position of event in its surface: from the event, or (scroll
 * events carry none in GTK 4) the device's current position. */
static gboolean
event_surface_position (GdkEvent *event,
                        double   *x,
                        double   *y)
{
  GdkDevice *device;
  GdkSurface *surface;

  if (gdk_event_get_position (event, x, y))
    return TRUE;
  surface = gdk_event_get_surface (event);
  if (surface == NULL || gdk_event_get_seat (event) == NULL)
    return FALSE;
  /* the logical pointer (a physical device cannot be queried on X11) */
  device = gdk_seat_get_pointer (gdk_event_get_seat (event));
  if (device == NULL)
    return FALSE;
  return gdk_surface_get_device_position (surface, device, x, y, NULL);
}

gboolean
rpe_gesture_event_position (GtkEventController *controller,
                            GtkWidget          *widget,
                            double             *x,
                            double             *y)
{
  GdkEvent *event = gtk_event_controller_get_current_event (controller);
  GtkNative *native;
  double px, py, sx = 0.0, sy = 0.0;

  if (event == NULL || widget == NULL || !event_surface_position (event, &px, &py))
    return FALSE;
  native = gtk_widget_get_native (widget);
  if (native == NULL)
    return FALSE;
  /* event positions are relative to the surface; widgets to the native */
  gtk_native_get_surface_transform (native, &sx, &sy);
  px -= sx;
  py -= sy;
  if (!rpe_gesture_point_ok (px, py)
      || !gtk_widget_translate_coordinates (GTK_WIDGET (native), widget, px, py, x, y))
    return FALSE;
  return rpe_gesture_point_ok (*x, *y);
}

gboolean
rpe_drag_tracker_begin (RpeDragTracker *tracker,
                        double          x,
                        double          y)
{
  tracker->active = rpe_gesture_point_ok (x, y);
  if (tracker->active)
    {
      tracker->x0 = tracker->x = x;
      tracker->y0 = tracker->y = y;
    }
  return tracker->active;
}

gboolean
rpe_drag_tracker_update (RpeDragTracker *tracker,
                         double          dx,
                         double          dy,
                         double         *x,
                         double         *y)
{
  double nx, ny;

  if (!tracker->active || !rpe_gesture_point_ok (dx, dy))
    return FALSE;
  nx = tracker->x0 + dx;
  ny = tracker->y0 + dy;
  if (!rpe_gesture_point_ok (nx, ny))
    return FALSE;
  tracker->x = nx;
  tracker->y = ny;
  *x = nx;
  *y = ny;
  return TRUE;
}

void
rpe_drag_tracker_end (RpeDragTracker *tracker)
{
  tracker->active = FALSE;
}

/* ------------------------------------------------- the scroll convention */

gboolean
rpe_gesture_is_wheel_control (GtkWidget *widget)
{
  return GTK_IS_SPIN_BUTTON (widget) || GTK_IS_RANGE (widget)
         || g_str_equal (G_OBJECT_TYPE_NAME (widget), "RpeSpectrumEditor");
}

static gboolean
has_focus_within (GtkWidget *widget)
{
  GtkRoot *root = gtk_widget_get_root (widget);
  GtkWidget *focus = root != NULL ? gtk_root_get_focus (root) : NULL;

  return focus != NULL && (focus == widget || gtk_widget_is_ancestor (focus, widget));
}

typedef struct
{
  GtkWidget *widget;
  GWeakRef   target;      /* the widget under the pointer at its last motion */
} WheelGuard;

static void
guard_free (WheelGuard *guard)
{
  g_weak_ref_clear (&guard->target);
  g_free (guard);
}

/* GTK 4 sends a scroll to the widget picked at the pointer's last motion (a
 * scroll event has no position, and content scrolled under a still pointer
 * keeps the old target): the guard remembers the same widget. */
static void
guard_motion (GtkEventControllerMotion *controller,
              double                    x,
              double                    y,
              WheelGuard               *guard)
{
  GtkWidget *target = rpe_gesture_point_ok (x, y) ? gtk_widget_pick (guard->widget, x, y, GTK_PICK_DEFAULT) : NULL;

  g_weak_ref_set (&guard->target, target);
}

static void
guard_leave (GtkEventControllerMotion *controller,
             WheelGuard               *guard)
{
  g_weak_ref_set (&guard->target, NULL);
}

static gboolean
guard_scroll (GtkEventControllerScroll *controller,
              double                    dx,
              double                    dy,
              WheelGuard               *guard)
{
  GtkWidget *widget = guard->widget;
  g_autoptr (GtkWidget) target = g_weak_ref_get (&guard->target);
  GtkWidget *control = NULL, *pane;
  GtkAdjustment *adj;
  double step, value;

  if (target == NULL || (target != widget && !gtk_widget_is_ancestor (target, widget)))
    return FALSE;
  for (GtkWidget *w = target; w != NULL && w != widget; w = gtk_widget_get_parent (w))
    if (rpe_gesture_is_wheel_control (w))
      {
        control = w;
        break;
      }
  if (control == NULL || has_focus_within (control))
    return FALSE;   /* a pane scrolls itself, or the focused control takes the wheel */

  /* an unfocused control under the pointer: its pane scrolls, as GtkScrolledWindow would */
  pane = gtk_widget_get_ancestor (control, GTK_TYPE_SCROLLED_WINDOW);
  if (pane == NULL || !isfinite (dy) || dy == 0.0)
    return TRUE;
  adj = gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (pane));
  if (gtk_event_controller_scroll_get_unit (controller) == GDK_SCROLL_UNIT_WHEEL)
    step = pow (gtk_adjustment_get_page_size (adj), 2.0 / 3.0) * CLAMP (dy, -RPE_GESTURE_MAX_SCROLL, RPE_GESTURE_MAX_SCROLL);
  else
    step = CLAMP (dy, -RPE_GESTURE_MAX_COORD, RPE_GESTURE_MAX_COORD);
  value = gtk_adjustment_get_value (adj) + step;
  gtk_adjustment_set_value (adj, CLAMP (value, gtk_adjustment_get_lower (adj),
                                        gtk_adjustment_get_upper (adj) - gtk_adjustment_get_page_size (adj)));
  return TRUE;
}

void
rpe_gesture_guard_wheel (GtkWidget *widget)
{
  GtkEventController *scroll, *motion;
  WheelGuard *guard;

  g_return_if_fail (GTK_IS_WIDGET (widget));
  guard = g_new0 (WheelGuard, 1);
  guard->widget = widget;
  g_weak_ref_init (&guard->target, NULL);
  motion = gtk_event_controller_motion_new ();
  gtk_event_controller_set_propagation_phase (motion, GTK_PHASE_CAPTURE);
  g_signal_connect (motion, "enter", G_CALLBACK (guard_motion), guard);
  g_signal_connect (motion, "motion", G_CALLBACK (guard_motion), guard);
  g_signal_connect (motion, "leave", G_CALLBACK (guard_leave), guard);
  g_object_set_data_full (G_OBJECT (motion), "rpe-wheel-guard", guard, (GDestroyNotify) guard_free);
  gtk_widget_add_controller (widget, motion);
  scroll = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_VERTICAL);
  gtk_event_controller_set_propagation_phase (scroll, GTK_PHASE_CAPTURE);
  gtk_event_controller_set_name (scroll, "rpe-wheel-guard");
  g_signal_connect (scroll, "scroll", G_CALLBACK (guard_scroll), guard);
  gtk_widget_add_controller (widget, scroll);
}

/* ------------------------------------------------------------ the editors */

void
rpe_gesture_attach_editor (GtkWidget               *widget,
                           const RpeEditorHandlers *h)
{
  GtkGesture *drag;
  GtkEventController *controller;

  g_return_if_fail (GTK_IS_WIDGET (widget) && h != NULL);
  gtk_widget_set_focusable (widget, TRUE);
  gtk_widget_set_has_tooltip (widget, TRUE);
  gtk_widget_set_hexpand (widget, TRUE);
  if (h->query_tooltip != NULL)
    g_signal_connect (widget, "query-tooltip", h->query_tooltip, widget);

  drag = gtk_gesture_drag_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (drag), GDK_BUTTON_PRIMARY);
  g_signal_connect (drag, "drag-begin", h->drag_begin, widget);
  g_signal_connect (drag, "drag-update", h->drag_update, widget);
  g_signal_connect (drag, "drag-end", h->drag_end, widget);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (drag));

  controller = gtk_event_controller_motion_new ();
  g_signal_connect (controller, "motion", h->motion, widget);
  g_signal_connect (controller, "leave", h->leave, widget);
  gtk_widget_add_controller (widget, controller);

  if (h->scroll != NULL)
    {
      controller = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_VERTICAL
                                                    | GTK_EVENT_CONTROLLER_SCROLL_DISCRETE);
      g_signal_connect (controller, "scroll", h->scroll, widget);
      gtk_widget_add_controller (widget, controller);
    }

  controller = gtk_event_controller_key_new ();
  g_signal_connect (controller, "key-pressed", h->key_pressed, widget);
  gtk_widget_add_controller (widget, controller);

  controller = gtk_event_controller_focus_new ();
  g_signal_connect (controller, "enter", h->focus_changed, widget);
  g_signal_connect (controller, "leave", h->focus_changed, widget);
  gtk_widget_add_controller (widget, controller);
}

void
rpe_gesture_theme_colors (GtkWidget *widget,
                          double     fg[4],
                          double     accent[4])
{
  GtkStyleContext *ctx;
  GdkRGBA c;

  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  ctx = gtk_widget_get_style_context (widget);
  gtk_style_context_get_color (ctx, &c);
  fg[0] = c.red;
  fg[1] = c.green;
  fg[2] = c.blue;
  fg[3] = c.alpha;
  if (gtk_style_context_lookup_color (ctx, "accent_color", &c))
    {
      accent[0] = c.red;
      accent[1] = c.green;
      accent[2] = c.blue;
      accent[3] = c.alpha;
    }
  G_GNUC_END_IGNORE_DEPRECATIONS
}

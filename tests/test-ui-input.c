/* test-ui-input.c: the window under real hands (Xvfb).
 *
 * 1. The guards of ui/widgets/rpe-gesture-helper.c on their own.
 * 2. The attention map at N = 1024: wheel notches of every size (1, 1e308,
 *    NaN, ±inf), pinches of every scale and drags of every offset leave a
 *    finite viewport of at least 4 rows and columns inside [0, N); a hover
 *    sweep over the whole canvas (and beyond, and at NaN) after each reads a
 *    cell of the image or nothing (the crash of issue 13).
 * 3. A seeded storm (RPE_INPUT_OPS, default 3000) of synthesized events of
 *    every kind the window's own widgets listen to (scroll, smooth scroll and
 *    its begin/end/deceleration, pinch begin/scale/end, drag begin/update/end,
 *    click press/release, key press/release, focus, hover enter/motion/leave)
 *    with random, extreme and non-finite values, emitted on the event
 *    controllers of every widget of every view and of the sidebar, while
 *    parameter changes keep jobs running and cancels interrupt them.  Then:
 *    idle; every view's figure equals that of a fresh window given the same
 *    final parameters and viewport.
 * 4. Real X events (xdotool): wheel notches, pointer sweeps, clicks and drags
 *    over the views, delivered by the X server through GTK's own dispatch
 *    (also into GTK's widgets: spin buttons, scales, the scrolled sidebar),
 *    while jobs run.  Skipped when xdotool or the X11 backend is missing.
 *
 * GLib test mode makes criticals and warnings fatal, and meson runs this test
 * with G_DEBUG=fatal-warnings. */
#include "config.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include <adwaita.h>
#ifdef GDK_WINDOWING_X11
#include <gdk/x11/gdkx.h>
#endif

#include "rpe-attention-view.h"
#include "rpe-gesture-helper.h"
#include "rpe-templates-view.h"
#include "rpe-window-test.h"
/* this test's waits may see longer jobs: a longer hang guard than rpe-ui-wait.h's */
#define RPE_TEST_HANG_GUARD_S 300
#include "rpe-ui-test-utils.h"
#include "rpe-ui-wait.h"

/* ------------------------------------------------------------ main loop */

static void
settle (RpeWindow *window)
{
  /* idle twice: a finished job may have queued another (a view mapped late) */
  rpe_test_iterate_until (rpe_test_window_idle_drained, window);
  rpe_test_iterate_until (rpe_test_window_idle_drained, window);
}

static gboolean
attention_has_image (gpointer data)
{
  RpeAttentionView *view = data;

  rpe_test_drain ();
  return rpe_attention_view_get_image (view) != NULL && !rpe_figure_page_is_busy (RPE_FIGURE_PAGE (view))
         && gtk_widget_get_width (rpe_attention_view_get_canvas (view)) > 100;
}

/* ------------------------------------------------------------- 1. guards */

static void
test_guards (void)
{
  double out = 0, f = 0;
  RpeDragTracker t = { 0 };

  g_assert_true (rpe_gesture_point_ok (0, 0));
  g_assert_true (rpe_gesture_point_ok (-1e6, 1e6));
  g_assert_false (rpe_gesture_point_ok (NAN, 0));
  g_assert_false (rpe_gesture_point_ok (0, INFINITY));
  g_assert_false (rpe_gesture_point_ok (1e308, 0));

  g_assert_false (rpe_gesture_scroll_delta (NAN, &out));
  g_assert_false (rpe_gesture_scroll_delta (-INFINITY, &out));
  g_assert_false (rpe_gesture_scroll_delta (0.0, &out));
  g_assert_true (rpe_gesture_scroll_delta (1.0, &out));
  g_assert_cmpfloat (out, ==, 1.0);
  g_assert_true (rpe_gesture_scroll_delta (1e308, &out));
  g_assert_cmpfloat (out, ==, RPE_GESTURE_MAX_SCROLL);
  g_assert_true (rpe_gesture_scroll_delta (-7e4, &out));
  g_assert_cmpfloat (out, ==, -RPE_GESTURE_MAX_SCROLL);

  g_assert_false (rpe_gesture_zoom_factor (0.0, 1.0, &f));
  g_assert_false (rpe_gesture_zoom_factor (-2.0, 1.0, &f));
  g_assert_false (rpe_gesture_zoom_factor (NAN, 1.0, &f));
  g_assert_false (rpe_gesture_zoom_factor (2.0, INFINITY, &f));
  g_assert_true (rpe_gesture_zoom_factor (2.0, 1.0, &f));
  g_assert_cmpfloat_with_epsilon (f, 2.0, 1e-15);
  g_assert_true (rpe_gesture_zoom_factor (1e308, 1e-300, &f));   /* the ratio overflows: clamped */
  g_assert_cmpfloat (f, ==, RPE_GESTURE_MAX_ZOOM);
  g_assert_true (rpe_gesture_zoom_factor (DBL_MIN, DBL_MAX, &f));
  g_assert_cmpfloat (f, ==, 1.0 / RPE_GESTURE_MAX_ZOOM);
  g_assert_true (rpe_gesture_zoom_factor (1e-300, 1.0, &f));
  g_assert_cmpfloat (f, ==, 1.0 / RPE_GESTURE_MAX_ZOOM);

  g_assert_cmpfloat (rpe_gesture_clamp (NAN, 0, 1, 0.5), ==, 0.5);
  g_assert_cmpfloat (rpe_gesture_clamp (-INFINITY, 0, 1, 0.5), ==, 0.5);
  g_assert_cmpfloat (rpe_gesture_clamp (7, 0, 1, 0.5), ==, 1.0);
  g_assert_cmpfloat (rpe_gesture_clamp (-7, 0, 1, 0.5), ==, 0.0);

  g_assert_false (rpe_drag_tracker_begin (&t, NAN, 3));
  g_assert_false (rpe_drag_tracker_update (&t, 1, 1, &out, &f));
  g_assert_true (rpe_drag_tracker_begin (&t, 10, 20));
  g_assert_true (rpe_drag_tracker_update (&t, 5, -5, &out, &f));
  g_assert_cmpfloat (out, ==, 15);
  g_assert_cmpfloat (f, ==, 15);
  g_assert_false (rpe_drag_tracker_update (&t, INFINITY, 0, &out, &f));
  g_assert_false (rpe_drag_tracker_update (&t, 0, 2e6, &out, &f));
  g_assert_cmpfloat (t.x, ==, 15);   /* the last good position is kept */
  rpe_drag_tracker_end (&t);
  g_assert_false (rpe_drag_tracker_update (&t, 1, 1, &out, &f));
}

/* ------------------------------------------------ controllers of a widget */

static GtkEventController *
find_controller (GtkWidget *widget,
                 GType      type)
{
  g_autoptr (GListModel) list = gtk_widget_observe_controllers (widget);

  for (guint i = 0; i < g_list_model_get_n_items (list); i++)
    {
      g_autoptr (GtkEventController) c = g_list_model_get_item (list, i);

      if (G_TYPE_CHECK_INSTANCE_TYPE (c, type))
        return c;   /* owned by the widget */
    }
  return NULL;
}

/* The first controller of type on widget or an ancestor (the hover read-out's motion controller
 * is the figure page's, on the box holding the view's canvas). */
static GtkEventController *
find_controller_up (GtkWidget *widget,
                    GType      type)
{
  for (GtkWidget *w = widget; w != NULL; w = gtk_widget_get_parent (w))
    {
      GtkEventController *c = find_controller (w, type);

      if (c != NULL)
        return c;
    }
  return NULL;
}

static void
assert_viewport_sane (RpeAttentionView *view,
                      gsize             n)
{
  double m0, m1, n0, n1;

  rpe_figure_page_get_viewport (RPE_FIGURE_PAGE (view), &m0, &m1, &n0, &n1);
  g_assert_true (isfinite (m0) && isfinite (m1) && isfinite (n0) && isfinite (n1));
  g_assert_cmpfloat (m0, >=, 0.0);
  g_assert_cmpfloat (n0, >=, 0.0);
  g_assert_cmpfloat (m1, <=, (double) n);
  g_assert_cmpfloat (n1, <=, (double) n);
  g_assert_cmpfloat (m1 - m0, >=, MIN (4.0, (double) n) - 1e-9);
  g_assert_cmpfloat (n1 - n0, >=, MIN (4.0, (double) n) - 1e-9);
}

/* Every point of the canvas (and around it, and NaN): a cell of the image
 * whose indices are inside [0, N), or nothing. */
static void
hover_sweep (RpeAttentionView *view,
             gsize             n)
{
  GtkWidget *canvas = rpe_attention_view_get_canvas (view);
  double w = gtk_widget_get_width (canvas), h = gtk_widget_get_height (canvas);
  const double odd[] = { NAN, INFINITY, -INFINITY, 1e308, -1e308, -1.0, 0.0 };
  guint hits = 0;

  for (double y = -20; y <= h + 20; y += 7)
    for (double x = -20; x <= w + 20; x += 7)
      {
        g_autofree char *text = rpe_attention_view_describe_point (view, x, y);
        gsize m = G_MAXSIZE, k = G_MAXSIZE;

        if (text == NULL)
          continue;
        hits++;
        g_assert_true (sscanf (text, "m = %zu, n = %zu", &m, &k) == 2
                       || sscanf (text, "m ≈ %zu, n ≈ %zu", &m, &k) == 2);
        g_assert_cmpuint (m, <, n);
        g_assert_cmpuint (k, <, n);
      }
  g_assert_cmpuint (hits, >, 0);
  for (guint i = 0; i < G_N_ELEMENTS (odd); i++)
    for (guint j = 0; j < G_N_ELEMENTS (odd); j++)
      {
        g_autofree char *text = rpe_attention_view_describe_point (view, odd[i], odd[j]);

        if (!isfinite (odd[i]) || !isfinite (odd[j]))
          g_assert_null (text);
      }
}

/* ------------------------------------------------- 2. the attention map */

static void
test_attention_wheel (void)
{
  RpeWindow *window = rpe_window_new (NULL);
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeAttentionView *view = RPE_ATTENTION_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_ATTENTION));
  GtkWidget *canvas = rpe_attention_view_get_canvas (view);
  GtkEventController *scroll, *motion;
  GtkGesture *zoom, *drag;
  const double deltas[] = { 1, 1, -1, 1e308, NAN, -INFINITY, INFINITY, -1e308, 0.5, -3, 1e-300, 40, -40 };
  const double scales[] = { 2, 0.5, 0, -1, NAN, INFINITY, 1e308, 1e-308, 1.0 };
  const gsize n = 1024;

  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  g_object_set (state, "length", (guint) n, NULL);
  rpe_window_set_view (window, RPE_WINDOW_VIEW_ATTENTION);
  gtk_window_present (GTK_WINDOW (window));
  rpe_test_iterate_until (attention_has_image, view);

  scroll = find_controller (canvas, GTK_TYPE_EVENT_CONTROLLER_SCROLL);
  motion = find_controller_up (canvas, GTK_TYPE_EVENT_CONTROLLER_MOTION);
  zoom = GTK_GESTURE (find_controller (canvas, GTK_TYPE_GESTURE_ZOOM));
  drag = GTK_GESTURE (find_controller (canvas, GTK_TYPE_GESTURE_DRAG));
  g_assert_nonnull (scroll);
  g_assert_nonnull (motion);
  g_assert_nonnull (zoom);
  g_assert_nonnull (drag);

  /* one wheel notch down (zoom out) at the full view: still the full view */
  {
    gboolean handled = FALSE;
    double m0, m1, n0, n1;

    g_signal_emit_by_name (scroll, "scroll", 0.0, 1.0, &handled);
    g_assert_true (handled);
    rpe_figure_page_get_viewport (RPE_FIGURE_PAGE (view), &m0, &m1, &n0, &n1);
    g_assert_cmpfloat (m0, ==, 0.0);
    g_assert_cmpfloat (m1, ==, (double) n);
    /* one notch up: a 1.25x zoom about the centre (no event position) */
    g_signal_emit_by_name (scroll, "scroll", 0.0, -1.0, &handled);
    rpe_figure_page_get_viewport (RPE_FIGURE_PAGE (view), &m0, &m1, &n0, &n1);
    g_assert_cmpfloat_with_epsilon (m1 - m0, n / 1.25, 1e-9);
    g_assert_cmpfloat_with_epsilon (0.5 * (m0 + m1), n / 2.0, 1e-9);
  }
  for (guint i = 0; i < G_N_ELEMENTS (deltas); i++)
    {
      gboolean handled = FALSE;

      g_signal_emit_by_name (scroll, "scroll", 0.0, deltas[i], &handled);
      assert_viewport_sane (view, n);
      g_signal_emit_by_name (motion, "motion", deltas[i], 100.0);
      rpe_test_iterate_until (attention_has_image, view);
      assert_viewport_sane (view, n);
      hover_sweep (view, n);
    }
  /* 30 notches in, then the caption names at least 4 rows */
  for (guint i = 0; i < 30; i++)
    {
      gboolean handled = FALSE;

      g_signal_emit_by_name (scroll, "scroll", 0.0, -1.0, &handled);
      assert_viewport_sane (view, n);
    }
  rpe_test_iterate_until (attention_has_image, view);
  {
    RpeAttentionImage *img = rpe_attention_view_get_image (view);

    g_assert_cmpuint (img->m1 - img->m0, >=, 4);
    g_assert_cmpuint (img->n1 - img->n0, >=, 4);
    g_assert_cmpuint (img->m1, <=, n);
    g_assert_cmpuint (img->n1, <=, n);
  }
  hover_sweep (view, n);

  /* pinches: a begin resets the reference scale */
  for (guint i = 0; i < G_N_ELEMENTS (scales); i++)
    {
      g_signal_emit_by_name (zoom, "begin", NULL);
      g_signal_emit_by_name (zoom, "scale-changed", scales[i]);
      g_signal_emit_by_name (zoom, "scale-changed", scales[(i + 3) % G_N_ELEMENTS (scales)]);
      g_signal_emit_by_name (zoom, "end", NULL);
      assert_viewport_sane (view, n);
    }
  /* drags by any offset */
  for (guint i = 0; i < G_N_ELEMENTS (deltas); i++)
    {
      g_signal_emit_by_name (drag, "drag-begin", deltas[i], 50.0);
      g_signal_emit_by_name (drag, "drag-update", deltas[i], -deltas[i]);
      g_signal_emit_by_name (drag, "drag-update", 30.0, deltas[(i + 1) % G_N_ELEMENTS (deltas)]);
      g_signal_emit_by_name (drag, "drag-end", 0.0, 0.0);
      assert_viewport_sane (view, n);
    }
  /* the keyboard zoom through its action, with absurd factors */
  gtk_widget_activate_action (GTK_WIDGET (view), "figure.zoom", "d", NAN);
  gtk_widget_activate_action (GTK_WIDGET (view), "figure.zoom", "d", INFINITY);
  gtk_widget_activate_action (GTK_WIDGET (view), "figure.zoom", "d", 1e308);
  gtk_widget_activate_action (GTK_WIDGET (view), "figure.zoom", "d", -1.0);
  assert_viewport_sane (view, n);
  /* the public setter with garbage: a sane window */
  rpe_figure_page_set_viewport (RPE_FIGURE_PAGE (view), NAN, 3, INFINITY, -INFINITY);
  assert_viewport_sane (view, n);
  rpe_figure_page_set_viewport (RPE_FIGURE_PAGE (view), 500, 500, 2000, 1);
  assert_viewport_sane (view, n);
  rpe_test_iterate_until (attention_has_image, view);
  hover_sweep (view, n);

  gtk_window_destroy (GTK_WINDOW (window));
  rpe_test_drain ();
}

/* ------------------------------------------------------------- 3. storm */

typedef struct
{
  RpeWindow        *window;
  RpeExplorerState *state;
  GRand            *rng;
  GPtrArray        *controllers;   /* (GtkEventController *), refs */
  guint             emitted[12];
} Storm;

static double
odd_value (Storm  *s,
           double  size)
{
  static const double extremes[] = { NAN, INFINITY, -INFINITY, 1e308, -1e308, DBL_MIN, -DBL_MIN,
                                     1e6, -1e6, 0.0, -1.0, 2147483648.0 };

  switch (g_rand_int_range (s->rng, 0, 4))
    {
    case 0:
      return extremes[g_rand_int_range (s->rng, 0, G_N_ELEMENTS (extremes))];
    case 1:
      return g_rand_double_range (s->rng, -2.0 * size, 3.0 * size);
    default:
      return g_rand_double_range (s->rng, 0.0, size);
    }
}

static double
odd_delta (Storm *s)
{
  static const double deltas[] = { 1, -1, 1, -1, 0, 0.1, -0.1, 5, -5, 120, -120, 1e308, NAN, INFINITY, -INFINITY };

  return g_rand_int_range (s->rng, 0, 3) == 0 ? g_rand_double_range (s->rng, -10, 10)
                                              : deltas[g_rand_int_range (s->rng, 0, G_N_ELEMENTS (deltas))];
}

/* The window's own widgets (Rpe* types and the drawing areas inside them):
 * their handlers are what the storm is about.  GTK's widgets get real events
 * in test 4 (emitting their signals without an event would test GTK's
 * assumptions, not ours). */
static gboolean
is_ours (GtkWidget *widget)
{
  const char *name = G_OBJECT_TYPE_NAME (widget);

  if (g_str_has_prefix (name, "Rpe"))
    return TRUE;
  if (GTK_IS_DRAWING_AREA (widget))
    for (GtkWidget *w = gtk_widget_get_parent (widget); w != NULL; w = gtk_widget_get_parent (w))
      if (g_str_has_prefix (G_OBJECT_TYPE_NAME (w), "Rpe") && !RPE_IS_WINDOW (w))
        return TRUE;
  return FALSE;
}

static void
collect (GtkWidget *widget,
         GPtrArray *out)
{
  if (is_ours (widget))
    {
      g_autoptr (GListModel) list = gtk_widget_observe_controllers (widget);

      for (guint i = 0; i < g_list_model_get_n_items (list); i++)
        {
          GtkEventController *c = g_list_model_get_item (list, i);

          if (GTK_IS_EVENT_CONTROLLER_SCROLL (c) || GTK_IS_EVENT_CONTROLLER_MOTION (c)
              || GTK_IS_GESTURE_DRAG (c) || GTK_IS_GESTURE_ZOOM (c) || GTK_IS_GESTURE_CLICK (c)
              || GTK_IS_EVENT_CONTROLLER_KEY (c) || GTK_IS_EVENT_CONTROLLER_FOCUS (c))
            g_ptr_array_add (out, c);
          else
            g_object_unref (c);
        }
    }
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    collect (child, out);
}

static void
refresh_controllers (Storm *s)
{
  g_ptr_array_set_size (s->controllers, 0);
  collect (GTK_WIDGET (s->window), s->controllers);
  g_assert_cmpuint (s->controllers->len, >, 0);
}

static void
emit_one (Storm              *s,
          GtkEventController *c)
{
  GtkWidget *widget = gtk_event_controller_get_widget (c);
  double w = MAX (gtk_widget_get_width (widget), 1), h = MAX (gtk_widget_get_height (widget), 1);
  gboolean handled = FALSE;

  if (GTK_IS_EVENT_CONTROLLER_SCROLL (c))
    {
      switch (g_rand_int_range (s->rng, 0, 6))
        {
        case 0:
          g_signal_emit_by_name (c, "scroll-begin");
          break;
        case 1:
          g_signal_emit_by_name (c, "scroll-end");
          break;
        case 2:
          g_signal_emit_by_name (c, "decelerate", odd_value (s, 1000), odd_value (s, 1000));
          break;
        default:
          g_signal_emit_by_name (c, "scroll", odd_delta (s), odd_delta (s), &handled);
          break;
        }
      s->emitted[0]++;
    }
  else if (GTK_IS_EVENT_CONTROLLER_MOTION (c))
    {
      switch (g_rand_int_range (s->rng, 0, 5))
        {
        case 0:
          g_signal_emit_by_name (c, "enter", odd_value (s, w), odd_value (s, h));
          break;
        case 1:
          g_signal_emit_by_name (c, "leave");
          break;
        default:
          g_signal_emit_by_name (c, "motion", odd_value (s, w), odd_value (s, h));
          break;
        }
      s->emitted[1]++;
    }
  else if (GTK_IS_GESTURE_DRAG (c))
    {
      guint steps = (guint) g_rand_int_range (s->rng, 1, 6);

      g_signal_emit_by_name (c, "drag-begin", odd_value (s, w), odd_value (s, h));
      for (guint i = 0; i < steps; i++)
        g_signal_emit_by_name (c, "drag-update", odd_value (s, w) - w / 2, odd_value (s, h) - h / 2);
      g_signal_emit_by_name (c, "drag-end", odd_value (s, w) - w / 2, odd_value (s, h) - h / 2);
      s->emitted[2]++;
    }
  else if (GTK_IS_GESTURE_ZOOM (c))
    {
      g_signal_emit_by_name (c, "begin", NULL);
      for (guint i = 0; i < 3; i++)
        g_signal_emit_by_name (c, "scale-changed", g_rand_boolean (s->rng) ? odd_value (s, 4) : g_rand_double_range (s->rng, 0.2, 5));
      g_signal_emit_by_name (c, "end", NULL);
      s->emitted[3]++;
    }
  else if (GTK_IS_GESTURE_CLICK (c))
    {
      int n_press = g_rand_int_range (s->rng, -1, 4);
      double x = odd_value (s, w), y = odd_value (s, h);

      g_signal_emit_by_name (c, "pressed", n_press, x, y);
      g_signal_emit_by_name (c, "released", n_press, x, y);
      s->emitted[4]++;
    }
  else if (GTK_IS_EVENT_CONTROLLER_KEY (c))
    {
      static const guint keys[] = { GDK_KEY_Left, GDK_KEY_Right, GDK_KEY_Up, GDK_KEY_Down, GDK_KEY_Page_Up,
                                    GDK_KEY_Page_Down, GDK_KEY_Home, GDK_KEY_End, GDK_KEY_Tab,
                                    GDK_KEY_ISO_Left_Tab, GDK_KEY_bracketleft, GDK_KEY_bracketright,
                                    GDK_KEY_0, GDK_KEY_Delete, GDK_KEY_a, GDK_KEY_VoidSymbol, 0xffffff };
      guint keyval = keys[g_rand_int_range (s->rng, 0, G_N_ELEMENTS (keys))];
      GdkModifierType mods = (GdkModifierType) (g_rand_int (s->rng) & (GDK_SHIFT_MASK | GDK_CONTROL_MASK | GDK_ALT_MASK));

      g_signal_emit_by_name (c, "key-pressed", keyval, (guint) g_rand_int_range (s->rng, 0, 256), mods, &handled);
      g_signal_emit_by_name (c, "key-released", keyval, 0u, mods);
      s->emitted[5]++;
    }
  else if (GTK_IS_EVENT_CONTROLLER_FOCUS (c))
    {
      g_signal_emit_by_name (c, g_rand_boolean (s->rng) ? "enter" : "leave");
      s->emitted[6]++;
    }
}

static void
storm_state_op (Storm *s)
{
  static const guint lengths[] = { 16, 48, 96, 256, 512 };
  guint op = (guint) g_rand_int_range (s->rng, 0, 10);

  if (op < 3)
    g_object_set (s->state, "length", lengths[g_rand_int_range (s->rng, 0, G_N_ELEMENTS (lengths))], NULL);
  else if (op < 4)
    g_object_set (s->state, "spe-kind", (guint) g_rand_int_range (s->rng, 0, 2), NULL);
  else if (op < 5)
    g_object_set (s->state, "causal", g_rand_boolean (s->rng), NULL);
  else if (op < 6)
    g_object_set (s->state, "method", (guint) g_rand_int_range (s->rng, 0, RPE_EXPLORER_N_METHODS), NULL);
  else if (op < 7)
    rpe_window_cancel (s->window);
  else
    rpe_window_set_view (s->window, (RpeWindowView) g_rand_int_range (s->rng, 0, RPE_WINDOW_N_VIEWS));
}

/* Every view of window shows what a fresh window shows for the same
 * parameters, viewport and open template cell. */
static void
assert_matches_fresh (RpeWindow *window)
{
  RpeWindow *fresh = rpe_window_new (NULL);
  RpeAttentionView *a = RPE_ATTENTION_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_ATTENTION));
  RpeAttentionView *fa = RPE_ATTENTION_VIEW (rpe_window_get_view_widget (fresh, RPE_WINDOW_VIEW_ATTENTION));
  double m0, m1, n0, n1;

  {
    int w = 0, h = 0;

    /* the same canvas sizes: long maps are reduced to the canvas' pixels */
    gtk_window_get_default_size (GTK_WINDOW (window), &w, &h);
    gtk_window_set_default_size (GTK_WINDOW (fresh), w, h);
  }
  rpe_window_set_sidebar_visible (fresh, rpe_window_get_sidebar_visible (window));
  rpe_test_copy_state (rpe_window_get_state (window), rpe_window_get_state (fresh));
  gtk_window_present (GTK_WINDOW (fresh));
  settle (fresh);
  for (guint v = 0; v < RPE_WINDOW_N_VIEWS; v++)
    {
      g_autoptr (RpeFigureBundle) fa_b = NULL;
      g_autoptr (RpeFigureBundle) fb_b = NULL;
      cairo_surface_t *sa, *sb;

      rpe_window_set_view (window, v);
      rpe_window_set_view (fresh, v);
      settle (window);
      settle (fresh);
      if (v == RPE_WINDOW_VIEW_ATTENTION)
        {
          assert_viewport_sane (a, rpe_explorer_state_get_length (rpe_window_get_state (window)));
          rpe_figure_page_get_viewport (RPE_FIGURE_PAGE (a), &m0, &m1, &n0, &n1);
          /* a click chose a query row: its plot takes room under the map (a smaller image) */
          rpe_attention_view_set_row (fa, rpe_attention_view_get_row (a));
          rpe_figure_page_set_viewport (RPE_FIGURE_PAGE (fa), m0, m1, n0, n1);
          settle (fresh);
        }
      if (v == RPE_WINDOW_VIEW_TEMPLATES)
        {
          rpe_templates_view_open_cell (RPE_TEMPLATES_VIEW (rpe_window_get_view_widget (fresh, v)),
                                        rpe_templates_view_get_open_cell (RPE_TEMPLATES_VIEW (rpe_window_get_view_widget (window, v))));
          settle (fresh);
        }
      fa_b = rpe_window_build_figure (window, v);
      fb_b = rpe_window_build_figure (fresh, v);
      g_assert_nonnull (fa_b);
      g_assert_nonnull (fb_b);
      g_assert_cmpstr (fa_b->fig.title, ==, fb_b->fig.title);
      sa = rpe_test_render_bundle (fa_b);
      sb = rpe_test_render_bundle (fb_b);
      g_test_message ("view %u: %d x %d, %s", v, cairo_image_surface_get_width (sa),
                      cairo_image_surface_get_height (sa), rpe_test_surfaces_equal (sa, sb) ? "equal" : "DIFFERENT");
      g_assert_true (rpe_test_surfaces_equal (sa, sb));
      cairo_surface_destroy (sa);
      cairo_surface_destroy (sb);
    }
  gtk_window_destroy (GTK_WINDOW (fresh));
}

static void
test_storm (void)
{
  const char *env = g_getenv ("RPE_INPUT_OPS");
  guint ops = env != NULL ? (guint) g_ascii_strtoull (env, NULL, 10) : 3000;
  Storm s = { 0 };
  guint total = 0;

  s.window = rpe_window_new (NULL);
  s.state = rpe_window_get_state (s.window);
  s.rng = g_rand_new_with_seed (20260713);
  s.controllers = g_ptr_array_new_with_free_func (g_object_unref);
  gtk_window_set_default_size (GTK_WINDOW (s.window), 1280, 800);
  g_object_set (s.state, "length", 48, "realizations", 8, NULL);
  gtk_window_present (GTK_WINDOW (s.window));
  settle (s.window);

  for (guint i = 0; i < ops; i++)
    {
      if (i % 25 == 0)
        {
          /* a view or a parameter changes: jobs start (and the sidebar may rebuild its editors) */
          storm_state_op (&s);
          rpe_test_drain ();
          refresh_controllers (&s);
        }
      {
        /* a kind of event first (uniformly), then a controller of that kind */
        GType kinds[] = { GTK_TYPE_EVENT_CONTROLLER_SCROLL, GTK_TYPE_EVENT_CONTROLLER_MOTION, GTK_TYPE_GESTURE_DRAG,
                          GTK_TYPE_GESTURE_ZOOM, GTK_TYPE_GESTURE_CLICK, GTK_TYPE_EVENT_CONTROLLER_KEY,
                          GTK_TYPE_EVENT_CONTROLLER_FOCUS };
        GType kind = kinds[g_rand_int_range (s.rng, 0, G_N_ELEMENTS (kinds))];
        guint start = (guint) g_rand_int_range (s.rng, 0, (gint32) s.controllers->len), pick = start;
        GtkEventController *c;

        for (guint j = 0; j < s.controllers->len; j++)
          if (G_TYPE_CHECK_INSTANCE_TYPE (g_ptr_array_index (s.controllers, (start + j) % s.controllers->len), kind))
            {
              pick = (start + j) % s.controllers->len;
              break;
            }
        c = g_object_ref (g_ptr_array_index (s.controllers, pick));
        GtkWidget *widget = gtk_event_controller_get_widget (c);

        /* the widget may have been rebuilt by an earlier event of this batch */
        if (widget != NULL && gtk_widget_get_root (widget) != NULL)
          emit_one (&s, c);
        g_object_unref (c);
      }
      g_main_context_iteration (NULL, FALSE);
      if (i % 97 == 0)
        refresh_controllers (&s);
    }
  for (guint k = 0; k < G_N_ELEMENTS (s.emitted); k++)
    total += s.emitted[k];
  g_test_message ("%u synthesized gestures: scroll %u, motion %u, drag %u, pinch %u, click %u, key %u, focus %u",
                  total, s.emitted[0], s.emitted[1], s.emitted[2], s.emitted[3], s.emitted[4], s.emitted[5],
                  s.emitted[6]);
  g_assert_cmpuint (s.emitted[0], >, 0);
  g_assert_cmpuint (s.emitted[1], >, 0);
  g_assert_cmpuint (s.emitted[2], >, 0);
  g_assert_cmpuint (s.emitted[3], >, 0);
  g_assert_cmpuint (s.emitted[4], >, 0);
  g_assert_cmpuint (s.emitted[5], >, 0);
  /* the last operation may have been a cancel: touch the parameters so that
   * every view computes its final state, as the fresh window will */
  {
    guint seed = 0;

    g_object_get (s.state, "seed", &seed, NULL);
    g_object_set (s.state, "seed", seed + 1, NULL);
    g_object_set (s.state, "seed", seed, NULL);
  }
  settle (s.window);
  assert_matches_fresh (s.window);

  g_ptr_array_unref (s.controllers);
  gtk_window_destroy (GTK_WINDOW (s.window));
  g_rand_free (s.rng);
  rpe_test_drain ();
}

/* ------------------------------------------------------- 4. real X events */

typedef struct
{
  gboolean done;
  int      status;
} Child;

static void
child_exited (GPid     pid,
              int      status,
              gpointer data)
{
  Child *child = data;

  child->status = status;
  child->done = TRUE;
  g_spawn_close_pid (pid);
}

static gboolean
child_done (gpointer data)
{
  return ((Child *) data)->done;
}

/* Runs xdotool with args while the main loop runs (the window must answer). */
static void
run_xdotool (GPtrArray *args)
{
  g_autoptr (GError) error = NULL;
  Child child = { 0 };
  GPid pid;

  g_ptr_array_add (args, NULL);
  g_assert_true (g_spawn_async (NULL, (char **) args->pdata, NULL,
                                G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL
                                | G_SPAWN_LEAVE_DESCRIPTORS_OPEN,
                                NULL, NULL, &pid, &error));
  g_assert_no_error (error);
  g_child_watch_add (pid, child_exited, &child);
  rpe_test_iterate_until (child_done, &child);
  g_assert_true (g_spawn_check_wait_status (child.status, NULL));
}

static void
add_arg (GPtrArray  *args,
         const char *format,
         ...) G_GNUC_PRINTF (2, 3);

static void
add_arg (GPtrArray  *args,
         const char *format,
         ...)
{
  va_list ap;

  va_start (ap, format);
  g_ptr_array_add (args, g_strdup_vprintf (format, ap));
  va_end (ap);
}

/* The centre of widget in the coordinates of its toplevel's X window. */
static void
widget_point (GtkWidget *widget,
              double     fx,
              double     fy,
              int       *x,
              int       *y)
{
  GtkNative *native = gtk_widget_get_native (widget);
  double sx = 0, sy = 0, px = 0, py = 0;

  gtk_native_get_surface_transform (native, &sx, &sy);
  g_assert_true (gtk_widget_translate_coordinates (widget, GTK_WIDGET (native),
                                                   fx * gtk_widget_get_width (widget),
                                                   fy * gtk_widget_get_height (widget), &px, &py));
  /* inside the X window (xdotool reads a negative coordinate as an option) */
  *x = CLAMP ((int) (px + sx), 0, gtk_widget_get_width (GTK_WIDGET (native)) + (int) sx - 1);
  *y = CLAMP ((int) (py + sy), 0, gtk_widget_get_height (GTK_WIDGET (native)) + (int) sy - 1);
}

#ifdef GDK_WINDOWING_X11
/* The plots of a view (where a person presses and drags). */
static void
collect_plots (GtkWidget *widget,
               GPtrArray *out)
{
  const char *name = G_OBJECT_TYPE_NAME (widget);

  if (gtk_widget_get_mapped (widget) && gtk_widget_get_width (widget) > 20 && gtk_widget_get_height (widget) > 20
      && (g_str_equal (name, "RpeCurveView") || g_str_equal (name, "RpeHeatmapView") || (GTK_IS_DRAWING_AREA (widget) && is_ours (widget))))
    g_ptr_array_add (out, widget);
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    collect_plots (child, out);
}
#endif

static void
test_real_events (void)
{
#ifdef GDK_WINDOWING_X11
  g_autofree char *xdotool = g_find_program_in_path ("xdotool");
  RpeWindow *window;
  RpeExplorerState *state;
  GRand *rng;
  gulong xid;
  guint notches = 0, moves = 0, clicks = 0;

  if (xdotool == NULL || !GDK_IS_X11_DISPLAY (gdk_display_get_default ()))
    {
      g_test_skip ("needs xdotool and the X11 backend");
      return;
    }
  window = rpe_window_new (NULL);
  state = rpe_window_get_state (window);
  rng = g_rand_new_with_seed (7);
  gtk_window_set_default_size (GTK_WINDOW (window), 1200, 760);
  g_object_set (state, "length", 1024, NULL);
  rpe_window_set_view (window, RPE_WINDOW_VIEW_ATTENTION);
  gtk_window_present (GTK_WINDOW (window));
  settle (window);
  xid = gdk_x11_surface_get_xid (gtk_native_get_surface (GTK_NATIVE (window)));

  for (guint round = 0; round < 2 * RPE_WINDOW_N_VIEWS; round++)
    {
      RpeWindowView v = (RpeWindowView) (round % RPE_WINDOW_N_VIEWS);
      GtkWidget *target = rpe_window_get_view_widget (window, v);
      g_autoptr (GPtrArray) args = g_ptr_array_new_with_free_func (g_free);
      g_autoptr (GPtrArray) plots = g_ptr_array_new ();

      rpe_window_set_view (window, v);
      if (round == RPE_WINDOW_N_VIEWS)
        g_object_set (state, "length", 4096, NULL);   /* the second round runs over long jobs */
      rpe_test_drain ();
      collect_plots (target, plots);
      if (v == RPE_WINDOW_VIEW_ATTENTION)
        target = rpe_attention_view_get_canvas (RPE_ATTENTION_VIEW (target));
      g_ptr_array_add (args, g_strdup (xdotool));
      for (guint e = 0; e < 250; e++)
        {
          int x, y;
          guint kind = (guint) g_rand_int_range (rng, 0, 10);

          widget_point (target, g_rand_double_range (rng, -0.05, 1.05), g_rand_double_range (rng, -0.05, 1.05), &x, &y);
          add_arg (args, "mousemove");
          add_arg (args, "--window");
          add_arg (args, "%lu", xid);
          add_arg (args, "%d", x);
          add_arg (args, "%d", y);
          moves++;
          if (kind < 5)
            {
              /* wheel: up, down, left, right */
              add_arg (args, "click");
              add_arg (args, "--delay");   /* xdotool waits 100 ms between clicks by default */
              add_arg (args, "1");
              add_arg (args, "%d", 4 + g_rand_int_range (rng, 0, 4));
              notches++;
            }
          else if (kind < 7 && plots->len > 0 && v != RPE_WINDOW_VIEW_TEMPLATES)
            {
              /* a drag across a plot (the templates grid opens a cell on click: no drags there) */
              GtkWidget *plot = g_ptr_array_index (plots, g_rand_int_range (rng, 0, (gint32) plots->len));

              widget_point (plot, g_rand_double_range (rng, 0.05, 0.95), g_rand_double_range (rng, 0.05, 0.95), &x, &y);
              add_arg (args, "mousemove");
              add_arg (args, "--window");
              add_arg (args, "%lu", xid);
              add_arg (args, "%d", x);
              add_arg (args, "%d", y);
              widget_point (plot, g_rand_double_range (rng, 0, 1), g_rand_double_range (rng, 0, 1), &x, &y);
              add_arg (args, "mousedown");
              add_arg (args, "1");
              add_arg (args, "mousemove");
              add_arg (args, "--window");
              add_arg (args, "%lu", xid);
              add_arg (args, "%d", x);
              add_arg (args, "%d", y);
              add_arg (args, "mouseup");
              add_arg (args, "1");
              clicks++;
            }
        }
      run_xdotool (args);
      rpe_test_drain ();
      if (v == RPE_WINDOW_VIEW_ATTENTION)
        {
          RpeAttentionView *av = RPE_ATTENTION_VIEW (rpe_window_get_view_widget (window, v));

          assert_viewport_sane (av, rpe_explorer_state_get_length (state));
        }
    }
  settle (window);
  g_test_message ("%u wheel notches, %u pointer moves, %u drags through the X server", notches, moves, clicks);
  g_assert_cmpuint (rpe_explorer_state_get_length (state), ==, 4096);
  {
    RpeAttentionView *av = RPE_ATTENTION_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_ATTENTION));

    rpe_window_set_view (window, RPE_WINDOW_VIEW_ATTENTION);
    settle (window);
    assert_viewport_sane (av, 4096);
    hover_sweep (av, 4096);
  }
  assert_matches_fresh (window);
  gtk_window_destroy (GTK_WINDOW (window));
  g_rand_free (rng);
  rpe_test_drain ();
#else
  g_test_skip ("built without the X11 backend");
#endif
}

#ifdef GDK_WINDOWING_X11
static GtkWidget *
find_spin_of_row (GtkWidget  *widget,
                  const char *title)
{
  if (ADW_IS_PREFERENCES_ROW (widget)
      && g_strcmp0 (adw_preferences_row_get_title (ADW_PREFERENCES_ROW (widget)), title) == 0)
    {
      /* the spin button inside the row */
      GPtrArray *stack = g_ptr_array_new ();
      GtkWidget *found = NULL;

      g_ptr_array_add (stack, widget);
      while (stack->len > 0 && found == NULL)
        {
          GtkWidget *w = g_ptr_array_steal_index (stack, stack->len - 1);

          if (GTK_IS_SPIN_BUTTON (w))
            found = w;
          for (GtkWidget *c = gtk_widget_get_first_child (w); c != NULL; c = gtk_widget_get_next_sibling (c))
            g_ptr_array_add (stack, c);
        }
      g_ptr_array_unref (stack);
      return found;
    }
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_spin_of_row (c, title);

      if (found != NULL)
        return found;
    }
  return NULL;
}

static gboolean
widget_mapped (gpointer data)
{
  GtkWidget *flap = gtk_widget_get_ancestor (GTK_WIDGET (data), ADW_TYPE_FLAP);

  /* shown, and the flap done sliding in */
  return gtk_widget_get_mapped (GTK_WIDGET (data)) && gtk_widget_get_width (GTK_WIDGET (data)) > 0
         && (flap == NULL || adw_flap_get_reveal_progress (ADW_FLAP (flap)) >= 1.0);
}

typedef struct
{
  GtkWidget *spin;
  int        x, y;
} SpinPlace;

static gboolean
spin_in_place (gpointer data)
{
  SpinPlace *p = data;
  int x, y;

  g_main_context_iteration (NULL, FALSE);
  widget_point (p->spin, 0.5, 0.5, &x, &y);
  return x == p->x && y == p->y;
}

typedef struct
{
  RpeExplorerState *state;
  guint             length;
  GtkAdjustment    *adj;
  double            value;
} WheelWatch;

static gboolean
wheel_arrived (gpointer data)
{
  WheelWatch *w = data;

  return rpe_explorer_state_get_length (w->state) != w->length || gtk_adjustment_get_value (w->adj) != w->value;
}

static void
wheel_over (gulong     xid,
            GtkWidget *widget,
            int        button,
            guint      notches)
{
  g_autofree char *xdotool = g_find_program_in_path ("xdotool");
  g_autoptr (GPtrArray) args = g_ptr_array_new_with_free_func (g_free);
  int x, y;

  widget_point (widget, 0.5, 0.5, &x, &y);
  g_ptr_array_add (args, g_strdup (xdotool));
  add_arg (args, "mousemove");
  add_arg (args, "--window");
  add_arg (args, "%lu", xid);
  add_arg (args, "%d", x);
  add_arg (args, "%d", y);
  add_arg (args, "click");
  add_arg (args, "--delay");
  add_arg (args, "1");
  add_arg (args, "--repeat");
  add_arg (args, "%u", notches);
  add_arg (args, "%d", button);
  run_xdotool (args);
}
#endif

/* The GNOME scroll convention, through the X server: the wheel over an
 * unfocused spin button of the sidebar scrolls the sidebar and leaves the
 * value alone; focused, the spin button takes the wheel. */
static void
test_sidebar_wheel (void)
{
#ifdef GDK_WINDOWING_X11
  g_autofree char *xdotool = g_find_program_in_path ("xdotool");
  RpeWindow *window;
  RpeExplorerState *state;
  GtkWidget *spin, *scrolled;
  WheelWatch watch = { 0 };
  SpinPlace place = { 0 };
  gulong xid;

  if (xdotool == NULL || !GDK_IS_X11_DISPLAY (gdk_display_get_default ()))
    {
      g_test_skip ("needs xdotool and the X11 backend");
      return;
    }
  window = rpe_window_new (NULL);
  state = rpe_window_get_state (window);
  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 700);
  g_object_set (state, "length", 96, NULL);
  gtk_window_present (GTK_WINDOW (window));
  settle (window);
  /* (a folded flap hides itself when the window is shown) */
  rpe_window_set_sidebar_visible (window, TRUE);
  settle (window);
  xid = gdk_x11_surface_get_xid (gtk_native_get_surface (GTK_NATIVE (window)));
  spin = find_spin_of_row (GTK_WIDGET (window), "Length N");
  g_assert_nonnull (spin);
  rpe_test_iterate_until (widget_mapped, spin);
  scrolled = gtk_widget_get_ancestor (spin, GTK_TYPE_SCROLLED_WINDOW);
  g_assert_nonnull (scrolled);
  watch.state = state;
  watch.adj = gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (scrolled));
  g_assert_cmpfloat (gtk_adjustment_get_upper (watch.adj), >, gtk_adjustment_get_page_size (watch.adj));
  gtk_adjustment_set_value (watch.adj, 0.0);
  gtk_window_set_focus (GTK_WINDOW (window), NULL);
  rpe_test_drain ();
  g_assert_null (gtk_root_get_focus (GTK_ROOT (window)));

  widget_point (spin, 0.5, 0.5, &place.x, &place.y);
  place.spin = spin;
  /* unfocused: three notches down scroll the sidebar, N stays 96 */
  watch.length = 96;
  watch.value = 0.0;
  wheel_over (xid, spin, 5, 3);
  rpe_test_iterate_until (wheel_arrived, &watch);
  rpe_test_drain ();
  g_assert_cmpuint (rpe_explorer_state_get_length (state), ==, 96);
  g_assert_cmpfloat (gtk_adjustment_get_value (watch.adj), >, 0.0);

  /* focused: one notch up is one step of the spin button (8) */
  gtk_adjustment_set_value (watch.adj, 0.0);
  gtk_widget_grab_focus (spin);
  rpe_test_iterate_until (spin_in_place, &place);   /* laid out where it was */
  watch.value = 0.0;
  wheel_over (xid, spin, 4, 1);
  rpe_test_iterate_until (wheel_arrived, &watch);
  rpe_test_drain ();
  g_assert_cmpuint (rpe_explorer_state_get_length (state), ==, 104);
  g_assert_cmpfloat (gtk_adjustment_get_value (watch.adj), ==, 0.0);

  gtk_window_destroy (GTK_WINDOW (window));
  rpe_test_drain ();
#else
  g_test_skip ("built without the X11 backend");
#endif
}

int
main (int   argc,
      char *argv[])
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();

  g_test_add_func ("/ui/input/guards", test_guards);
  g_test_add_func ("/ui/input/attention-wheel", test_attention_wheel);
  g_test_add_func ("/ui/input/storm", test_storm);
  g_test_add_func ("/ui/input/real-events", test_real_events);
  g_test_add_func ("/ui/input/sidebar-wheel", test_sidebar_wheel);

  return g_test_run ();
}

/* rpe-spectrum-editor.c: sine components as draggable points; snapshot calls
 * the GTK-free renderer, the gesture handlers the GTK-free mapping. */
#include "config.h"

#include <glib/gi18n.h>

#include "rpe-spectrum-editor.h"

#include <math.h>

#include "rpe-gesture-helper.h"

#define HIT_RADIUS       (RPE_EDITOR_POINT_RADIUS + 5.0)
#define PHASE_PER_PIXEL  (2.0 * G_PI / 180.0)   /* Shift+drag: a full turn per 180 px */
#define PHASE_KEY_STEP   (G_PI / 12.0)
#define PHASE_SCROLL_STEP (G_PI / 24.0)

typedef enum
{
  DRAG_NONE,
  DRAG_MOVE,
  DRAG_PHASE,
} DragMode;

struct _RpeSpectrumEditor
{
  GtkWidget  parent_instance;

  float     *f;
  float     *theta;
  float     *lambda;
  gsize      K;
  double     lambda_max;
  float     *profile;
  gsize      n_profile;
  gint64     profile_tau0;
  char      *title;
  int        selected;
  int        hover;

  DragMode   drag;
  double     start_x;       /* pointer at drag begin */
  double     start_y;
  double     grab_dx;       /* point minus pointer, pixels */
  double     grab_dy;
  double     start_theta;
  RpeDragTracker tracker;
};

G_DEFINE_FINAL_TYPE (RpeSpectrumEditor, rpe_spectrum_editor, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_N_COMPONENTS,
  PROP_SELECTED,
  PROP_LAMBDA_MAX,
  PROP_TITLE,
  N_PROPS
};

enum {
  SIGNAL_COMPONENT_CHANGED,
  SIGNAL_EDITING_FINISHED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

static double
clamp_f (double f)
{
  return isfinite (f) ? CLAMP (f, 0.0, 0.5) : 0.0;
}

static double
clamp_lambda (double lambda)
{
  return isfinite (lambda) ? MAX (lambda, 0.0) : 0.0;
}

static void
set_lambda_max (RpeSpectrumEditor *self,
                double             lambda_max)
{
  if (self->lambda_max != lambda_max)
    {
      self->lambda_max = lambda_max;
      gtk_widget_queue_draw (GTK_WIDGET (self));
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LAMBDA_MAX]);
    }
}

static double
auto_lambda_max (RpeSpectrumEditor *self)
{
  RpeSpectrumRenderData data;

  rpe_spectrum_render_data_init (&data);
  data.lambda = self->lambda;
  data.n_components = self->K;
  return rpe_editor_spectrum_auto_max (&data);
}

/* The axis grows at once when a gain goes above it; it shrinks only when the
 * gains use less than 40% of it (so it does not jump under the pointer). */
static void
grow_axis (RpeSpectrumEditor *self,
           double             lambda)
{
  if (lambda > self->lambda_max)
    set_lambda_max (self, rpe_editor_nice_ceiling (1.25 * lambda));
}

static void
shrink_axis (RpeSpectrumEditor *self)
{
  double fit = auto_lambda_max (self);

  if (fit < 0.4 * self->lambda_max || fit > self->lambda_max)
    set_lambda_max (self, fit);
}

void
rpe_spectrum_editor_get_render_data (RpeSpectrumEditor     *self,
                                     RpeSpectrumRenderData *data)
{
  g_return_if_fail (RPE_IS_SPECTRUM_EDITOR (self));

  rpe_spectrum_render_data_init (data);
  data->f = self->f;
  data->theta = self->theta;
  data->lambda = self->lambda;
  data->n_components = self->K;
  data->lambda_max = self->lambda_max;
  data->selected = self->selected;
  data->hover = self->hover;
  data->profile = self->profile;
  data->n_profile = self->n_profile;
  data->profile_tau0 = (ssize_t) self->profile_tau0;
  data->title = self->title;
  data->focused = gtk_widget_has_focus (GTK_WIDGET (self));
}

static gboolean
get_frame (RpeSpectrumEditor *self,
           RpeEditorFrame    *frame)
{
  RpeSpectrumRenderData data;

  rpe_spectrum_editor_get_render_data (self, &data);
  return rpe_editor_spectrum_layout (&data,
                                     gtk_widget_get_width (GTK_WIDGET (self)),
                                     gtk_widget_get_height (GTK_WIDGET (self)),
                                     frame, NULL);
}

static int
hit (RpeSpectrumEditor *self,
     double             x,
     double             y)
{
  RpeSpectrumRenderData data;

  rpe_spectrum_editor_get_render_data (self, &data);
  return (int) rpe_editor_spectrum_hit (&data,
                                        gtk_widget_get_width (GTK_WIDGET (self)),
                                        gtk_widget_get_height (GTK_WIDGET (self)),
                                        x, y, HIT_RADIUS);
}

static void
rpe_spectrum_editor_snapshot (GtkWidget   *widget,
                              GtkSnapshot *snapshot)
{
  RpeSpectrumEditor *self = RPE_SPECTRUM_EDITOR (widget);
  int width = gtk_widget_get_width (widget);
  int height = gtk_widget_get_height (widget);
  RpeSpectrumRenderData data;
  cairo_t *cr;

  if (width <= 0 || height <= 0)
    return;
  rpe_spectrum_editor_get_render_data (self, &data);
  rpe_gesture_theme_colors (widget, data.foreground, data.accent);
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));
  rpe_editor_render_spectrum (cr, &data, width, height);
  cairo_destroy (cr);
}

static void
rpe_spectrum_editor_measure (GtkWidget      *widget,
                             GtkOrientation  orientation,
                             int             for_size,
                             int            *minimum,
                             int            *natural,
                             int            *minimum_baseline,
                             int            *natural_baseline)
{
  RpeSpectrumEditor *self = RPE_SPECTRUM_EDITOR (widget);

  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      *minimum = 200;
      *natural = 380;
    }
  else
    {
      *minimum = self->n_profile >= 2 ? 240 : 140;
      *natural = self->n_profile >= 2 ? 320 : 220;
    }
}

static void
emit_component (RpeSpectrumEditor *self,
                gsize              k)
{
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_signal_emit (self, signals[SIGNAL_COMPONENT_CHANGED], 0, (guint) k,
                 (double) self->f[k], (double) self->theta[k], (double) self->lambda[k]);
}

/* ----------------------------------------------------------------- drags */

gboolean
_rpe_spectrum_editor_drag_begin (RpeSpectrumEditor *self,
                                 double             x,
                                 double             y,
                                 GdkModifierType    state)
{
  RpeEditorFrame frame;
  double px, py;
  int k;

  g_return_val_if_fail (RPE_IS_SPECTRUM_EDITOR (self), FALSE);

  self->drag = DRAG_NONE;
  if (!rpe_gesture_point_ok (x, y))
    return FALSE;
  k = hit (self, x, y);
  if (k < 0 || !get_frame (self, &frame))
    return FALSE;

  rpe_spectrum_editor_set_selected (self, k);
  rpe_editor_frame_to_pixel (&frame, self->f[k], self->lambda[k], &px, &py);
  self->start_x = x;
  self->start_y = y;
  self->grab_dx = px - x;
  self->grab_dy = MAX (py, frame.area.y) - y;
  self->start_theta = self->theta[k];
  self->drag = (state & GDK_SHIFT_MASK) ? DRAG_PHASE : DRAG_MOVE;
  return TRUE;
}

void
_rpe_spectrum_editor_drag_to (RpeSpectrumEditor *self,
                              double             x,
                              double             y)
{
  RpeEditorFrame frame;
  gsize k;

  g_return_if_fail (RPE_IS_SPECTRUM_EDITOR (self));

  if (self->drag == DRAG_NONE || self->selected < 0 || (gsize) self->selected >= self->K
      || !rpe_gesture_point_ok (x, y))
    return;
  k = (gsize) self->selected;

  if (self->drag == DRAG_PHASE)
    {
      /* Up turns counter-clockwise, like the needle. */
      self->theta[k] = (float) rpe_editor_wrap_phase (self->start_theta
                                                      + (self->start_y - y) * PHASE_PER_PIXEL);
    }
  else
    {
      double f, lambda;

      if (!get_frame (self, &frame))
        return;
      rpe_editor_spectrum_value_at (&frame, x + self->grab_dx, y + self->grab_dy, &f, &lambda);
      self->f[k] = (float) f;
      self->lambda[k] = (float) lambda;
      grow_axis (self, lambda);
    }
  emit_component (self, k);
}

void
_rpe_spectrum_editor_drag_end (RpeSpectrumEditor *self)
{
  g_return_if_fail (RPE_IS_SPECTRUM_EDITOR (self));

  if (self->drag == DRAG_NONE)
    return;
  self->drag = DRAG_NONE;
  shrink_axis (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_signal_emit (self, signals[SIGNAL_EDITING_FINISHED], 0);
}

static void
drag_begin_cb (GtkGestureDrag    *gesture,
               double             x,
               double             y,
               RpeSpectrumEditor *self)
{
  GdkModifierType state;

  gtk_widget_grab_focus (GTK_WIDGET (self));
  state = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (gesture));
  if (rpe_drag_tracker_begin (&self->tracker, x, y) && _rpe_spectrum_editor_drag_begin (self, x, y, state))
    gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_CLAIMED);
  else
    gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_DENIED);
}

static void
drag_update_cb (GtkGestureDrag    *gesture,
                double             dx,
                double             dy,
                RpeSpectrumEditor *self)
{
  double x, y;

  if (rpe_drag_tracker_update (&self->tracker, dx, dy, &x, &y))
    _rpe_spectrum_editor_drag_to (self, x, y);
}

static void
drag_end_cb (GtkGestureDrag    *gesture,
             double             dx,
             double             dy,
             RpeSpectrumEditor *self)
{
  rpe_drag_tracker_end (&self->tracker);
  _rpe_spectrum_editor_drag_end (self);
}

gboolean
_rpe_spectrum_editor_scroll (RpeSpectrumEditor *self,
                             double             x,
                             double             y,
                             double             dy)
{
  double notches;
  int k;

  g_return_val_if_fail (RPE_IS_SPECTRUM_EDITOR (self), FALSE);

  if (!rpe_gesture_point_ok (x, y) || !rpe_gesture_scroll_delta (dy, &notches))
    return FALSE;
  k = hit (self, x, y);
  if (k < 0)
    return FALSE;
  dy = notches;
  rpe_spectrum_editor_set_selected (self, k);
  /* Scrolling up (dy < 0) turns counter-clockwise. */
  self->theta[k] = (float) rpe_editor_wrap_phase (self->theta[k] - dy * PHASE_SCROLL_STEP);
  emit_component (self, (gsize) k);
  g_signal_emit (self, signals[SIGNAL_EDITING_FINISHED], 0);
  return TRUE;
}

static void
set_hover (RpeSpectrumEditor *self,
           int                hover)
{
  if (self->hover != hover)
    {
      self->hover = hover;
      gtk_widget_set_cursor_from_name (GTK_WIDGET (self), hover >= 0 ? "grab" : NULL);
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

static void
motion_cb (GtkEventControllerMotion *motion,
           double                    x,
           double                    y,
           RpeSpectrumEditor        *self)
{
  set_hover (self, rpe_gesture_point_ok (x, y) ? hit (self, x, y) : -1);
}

static void
leave_cb (GtkEventControllerMotion *motion,
          RpeSpectrumEditor        *self)
{
  set_hover (self, -1);
}

static gboolean
scroll_cb (GtkEventControllerScroll *scroll,
           double                    dx,
           double                    dy,
           RpeSpectrumEditor        *self)
{
  if (self->hover < 0)
    return FALSE;
  {
    RpeEditorFrame frame;
    double px, py;
    int k = self->hover;

    if (!get_frame (self, &frame) || (gsize) k >= self->K)
      return FALSE;
    rpe_editor_frame_to_pixel (&frame, self->f[k], self->lambda[k], &px, &py);
    return _rpe_spectrum_editor_scroll (self, px, MAX (py, frame.area.y), dy);
  }
}

static gboolean
query_tooltip_cb (GtkWidget         *widget,
                  int                x,
                  int                y,
                  gboolean           keyboard_mode,
                  GtkTooltip        *tooltip,
                  RpeSpectrumEditor *self)
{
  int k = keyboard_mode ? self->selected : hit (self, x, y);
  char *text, *period;

  if (k < 0 || (gsize) k >= self->K)
    return FALSE;
  period = self->f[k] > 0.0f ? g_strdup_printf (_("period %.3g positions"), 1.0 / self->f[k])
                             : g_strdup (_("constant"));
  text = g_strdup_printf (_("Sine %d\nf = %.4f cycles/position (%s)\nλ = %.4g\nθ = %.3f rad\n"
                            "Drag to move; Shift+drag or scroll to turn the phase"),
                          k, self->f[k], period, self->lambda[k], (double) self->theta[k]);
  gtk_tooltip_set_text (tooltip, text);
  g_free (text);
  g_free (period);
  return TRUE;
}

/* ------------------------------------------------------------------ keys */

gboolean
_rpe_spectrum_editor_handle_key (RpeSpectrumEditor *self,
                                 guint              keyval,
                                 GdkModifierType    state)
{
  gboolean fine = (state & GDK_SHIFT_MASK) != 0;
  int k;

  g_return_val_if_fail (RPE_IS_SPECTRUM_EDITOR (self), FALSE);

  if (self->K == 0)
    return FALSE;
  k = self->selected;

  if (keyval == GDK_KEY_ISO_Left_Tab || (keyval == GDK_KEY_Tab && fine))
    {
      if (k == 0)
        return FALSE;
      rpe_spectrum_editor_set_selected (self, k < 0 ? (int) self->K - 1 : k - 1);
      return TRUE;
    }
  if (keyval == GDK_KEY_Tab || keyval == GDK_KEY_KP_Tab)
    {
      if (k >= (int) self->K - 1)
        return FALSE;
      rpe_spectrum_editor_set_selected (self, k + 1);
      return TRUE;
    }

  switch (keyval)
    {
    case GDK_KEY_Left: case GDK_KEY_KP_Left:
    case GDK_KEY_Right: case GDK_KEY_KP_Right:
    case GDK_KEY_Up: case GDK_KEY_KP_Up:
    case GDK_KEY_Down: case GDK_KEY_KP_Down:
    case GDK_KEY_Page_Up: case GDK_KEY_KP_Page_Up:
    case GDK_KEY_Page_Down: case GDK_KEY_KP_Page_Down:
    case GDK_KEY_bracketleft: case GDK_KEY_bracketright:
      break;
    default:
      return FALSE;
    }
  if (k < 0)
    {
      rpe_spectrum_editor_set_selected (self, 0);
      k = 0;
    }

  switch (keyval)
    {
    case GDK_KEY_Left: case GDK_KEY_KP_Left:
      self->f[k] = (float) clamp_f (self->f[k] - (fine ? 0.0005 : 0.005));
      break;
    case GDK_KEY_Right: case GDK_KEY_KP_Right:
      self->f[k] = (float) clamp_f (self->f[k] + (fine ? 0.0005 : 0.005));
      break;
    case GDK_KEY_Up: case GDK_KEY_KP_Up:
      self->lambda[k] = (float) clamp_lambda (self->lambda[k] + self->lambda_max / (fine ? 500.0 : 50.0));
      grow_axis (self, self->lambda[k]);
      break;
    case GDK_KEY_Down: case GDK_KEY_KP_Down:
      self->lambda[k] = (float) clamp_lambda (self->lambda[k] - self->lambda_max / (fine ? 500.0 : 50.0));
      break;
    case GDK_KEY_Page_Up: case GDK_KEY_KP_Page_Up: case GDK_KEY_bracketright:
      self->theta[k] = (float) rpe_editor_wrap_phase (self->theta[k] + PHASE_KEY_STEP);
      break;
    default:
      self->theta[k] = (float) rpe_editor_wrap_phase (self->theta[k] - PHASE_KEY_STEP);
      break;
    }
  emit_component (self, (gsize) k);
  g_signal_emit (self, signals[SIGNAL_EDITING_FINISHED], 0);
  return TRUE;
}

static gboolean
key_pressed_cb (GtkEventControllerKey *controller,
                guint                  keyval,
                guint                  keycode,
                GdkModifierType        state,
                RpeSpectrumEditor     *self)
{
  return _rpe_spectrum_editor_handle_key (self, keyval, state);
}

static void
focus_changed_cb (GtkEventControllerFocus *focus,
                  RpeSpectrumEditor       *self)
{
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* ------------------------------------------------------------- GObject */

static void
rpe_spectrum_editor_finalize (GObject *object)
{
  RpeSpectrumEditor *self = RPE_SPECTRUM_EDITOR (object);

  g_clear_pointer (&self->f, g_free);
  g_clear_pointer (&self->theta, g_free);
  g_clear_pointer (&self->lambda, g_free);
  g_clear_pointer (&self->profile, g_free);
  g_clear_pointer (&self->title, g_free);

  G_OBJECT_CLASS (rpe_spectrum_editor_parent_class)->finalize (object);
}

static void
rpe_spectrum_editor_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  RpeSpectrumEditor *self = RPE_SPECTRUM_EDITOR (object);

  switch (prop_id)
    {
    case PROP_N_COMPONENTS:
      g_value_set_uint (value, (guint) MIN (self->K, G_MAXUINT));
      break;
    case PROP_SELECTED:
      g_value_set_int (value, self->selected);
      break;
    case PROP_LAMBDA_MAX:
      g_value_set_double (value, self->lambda_max);
      break;
    case PROP_TITLE:
      g_value_set_string (value, self->title);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
rpe_spectrum_editor_set_property (GObject      *object,
                                  guint         prop_id,
                                  const GValue *value,
                                  GParamSpec   *pspec)
{
  RpeSpectrumEditor *self = RPE_SPECTRUM_EDITOR (object);

  switch (prop_id)
    {
    case PROP_SELECTED:
      rpe_spectrum_editor_set_selected (self, g_value_get_int (value));
      break;
    case PROP_TITLE:
      rpe_spectrum_editor_set_title (self, g_value_get_string (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
rpe_spectrum_editor_class_init (RpeSpectrumEditorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->finalize = rpe_spectrum_editor_finalize;
  object_class->get_property = rpe_spectrum_editor_get_property;
  object_class->set_property = rpe_spectrum_editor_set_property;

  widget_class->snapshot = rpe_spectrum_editor_snapshot;
  widget_class->measure = rpe_spectrum_editor_measure;

  properties[PROP_N_COMPONENTS] =
    g_param_spec_uint ("n-components", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_SELECTED] =
    g_param_spec_int ("selected", NULL, NULL, -1, G_MAXINT, -1,
                      G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_LAMBDA_MAX] =
    g_param_spec_double ("lambda-max", NULL, NULL, 0.0, G_MAXDOUBLE, 1.0,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_TITLE] =
    g_param_spec_string ("title", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  signals[SIGNAL_COMPONENT_CHANGED] =
    g_signal_new ("component-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 4,
                  G_TYPE_UINT, G_TYPE_DOUBLE, G_TYPE_DOUBLE, G_TYPE_DOUBLE);
  signals[SIGNAL_EDITING_FINISHED] =
    g_signal_new ("editing-finished", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 0);

  gtk_widget_class_set_css_name (widget_class, "spectrumeditor");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_WIDGET);
}

static void
rpe_spectrum_editor_init (RpeSpectrumEditor *self)
{
  static const RpeEditorHandlers handlers = {
    G_CALLBACK (drag_begin_cb), G_CALLBACK (drag_update_cb), G_CALLBACK (drag_end_cb),
    G_CALLBACK (motion_cb), G_CALLBACK (leave_cb), G_CALLBACK (scroll_cb),
    G_CALLBACK (key_pressed_cb), G_CALLBACK (focus_changed_cb), G_CALLBACK (query_tooltip_cb),
  };

  self->selected = -1;
  self->hover = -1;
  self->lambda_max = 1.0;

  rpe_gesture_attach_editor (GTK_WIDGET (self), &handlers);
}

GtkWidget *
rpe_spectrum_editor_new (void)
{
  return g_object_new (RPE_TYPE_SPECTRUM_EDITOR, NULL);
}

void
rpe_spectrum_editor_set_components (RpeSpectrumEditor *self,
                                    const float       *f,
                                    const float       *theta,
                                    const float       *lambda,
                                    gsize              K)
{
  gsize old_K;

  g_return_if_fail (RPE_IS_SPECTRUM_EDITOR (self));
  g_return_if_fail (K == 0 || (f != NULL && lambda != NULL));
  g_return_if_fail (K <= G_MAXINT);

  old_K = self->K;
  g_clear_pointer (&self->f, g_free);
  g_clear_pointer (&self->theta, g_free);
  g_clear_pointer (&self->lambda, g_free);
  self->K = K;
  self->drag = DRAG_NONE;
  self->hover = -1;
  if (K > 0)
    {
      self->f = g_new (float, K);
      self->theta = g_new (float, K);
      self->lambda = g_new (float, K);
      for (gsize k = 0; k < K; k++)
        {
          self->f[k] = (float) clamp_f (f[k]);
          self->theta[k] = theta != NULL ? (float) rpe_editor_wrap_phase (theta[k]) : 0.0f;
          self->lambda[k] = (float) clamp_lambda (lambda[k]);
        }
    }
  set_lambda_max (self, auto_lambda_max (self));
  if (self->selected >= (int) K)
    rpe_spectrum_editor_set_selected (self, K > 0 ? (int) K - 1 : -1);
  gtk_widget_queue_draw (GTK_WIDGET (self));
  if (old_K != K)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_COMPONENTS]);
}

gsize
rpe_spectrum_editor_get_components (RpeSpectrumEditor *self,
                                    const float      **f,
                                    const float      **theta,
                                    const float      **lambda)
{
  g_return_val_if_fail (RPE_IS_SPECTRUM_EDITOR (self), 0);

  if (f != NULL)
    *f = self->f;
  if (theta != NULL)
    *theta = self->theta;
  if (lambda != NULL)
    *lambda = self->lambda;
  return self->K;
}

void
rpe_spectrum_editor_set_component (RpeSpectrumEditor *self,
                                   guint              k,
                                   double             f,
                                   double             theta,
                                   double             lambda)
{
  g_return_if_fail (RPE_IS_SPECTRUM_EDITOR (self));
  g_return_if_fail (k < self->K);

  self->f[k] = (float) clamp_f (f);
  self->theta[k] = (float) rpe_editor_wrap_phase (theta);
  self->lambda[k] = (float) clamp_lambda (lambda);
  if (self->drag == DRAG_NONE)
    shrink_axis (self);
  else
    grow_axis (self, self->lambda[k]);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

gboolean
rpe_spectrum_editor_get_component (RpeSpectrumEditor *self,
                                   guint              k,
                                   double            *f,
                                   double            *theta,
                                   double            *lambda)
{
  g_return_val_if_fail (RPE_IS_SPECTRUM_EDITOR (self), FALSE);

  if (k >= self->K)
    return FALSE;
  if (f != NULL)
    *f = self->f[k];
  if (theta != NULL)
    *theta = self->theta[k];
  if (lambda != NULL)
    *lambda = self->lambda[k];
  return TRUE;
}

void
rpe_spectrum_editor_set_selected (RpeSpectrumEditor *self,
                                  int                k)
{
  g_return_if_fail (RPE_IS_SPECTRUM_EDITOR (self));

  if (k < 0 || (gsize) k >= self->K)
    k = -1;
  if (self->selected != k)
    {
      self->selected = k;
      gtk_widget_queue_draw (GTK_WIDGET (self));
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SELECTED]);
    }
}

int
rpe_spectrum_editor_get_selected (RpeSpectrumEditor *self)
{
  g_return_val_if_fail (RPE_IS_SPECTRUM_EDITOR (self), -1);
  return self->selected;
}

void
rpe_spectrum_editor_set_profile (RpeSpectrumEditor *self,
                                 const float       *profile,
                                 gsize              n,
                                 gint64             tau0)
{
  gboolean had;

  g_return_if_fail (RPE_IS_SPECTRUM_EDITOR (self));

  had = self->n_profile >= 2;
  g_clear_pointer (&self->profile, g_free);
  if (profile == NULL || n < 2)
    n = 0;
  self->profile = n > 0 ? g_memdup2 (profile, n * sizeof (float)) : NULL;
  self->n_profile = n;
  self->profile_tau0 = tau0;
  if (had != (n >= 2))
    gtk_widget_queue_resize (GTK_WIDGET (self));
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
rpe_spectrum_editor_set_title (RpeSpectrumEditor *self,
                               const char        *title)
{
  g_return_if_fail (RPE_IS_SPECTRUM_EDITOR (self));

  if (g_strcmp0 (self->title, title) != 0)
    {
      g_free (self->title);
      self->title = g_strdup (title);
      gtk_accessible_update_property (GTK_ACCESSIBLE (self),
                                      GTK_ACCESSIBLE_PROPERTY_LABEL, title != NULL ? title : "",
                                      -1);
      gtk_widget_queue_draw (GTK_WIDGET (self));
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TITLE]);
    }
}

const char *
rpe_spectrum_editor_get_title (RpeSpectrumEditor *self)
{
  g_return_val_if_fail (RPE_IS_SPECTRUM_EDITOR (self), NULL);
  return self->title;
}

double
rpe_spectrum_editor_get_lambda_max (RpeSpectrumEditor *self)
{
  g_return_val_if_fail (RPE_IS_SPECTRUM_EDITOR (self), 1.0);
  return self->lambda_max;
}

/* rpe-stem-editor.c: a stem plot edited by drawing on it; snapshot calls the
 * GTK-free renderer, the gesture handlers call the GTK-free mapping. */
#include "config.h"

#include <glib/gi18n.h>

#include "rpe-stem-editor.h"

#include <math.h>

#include "rpe-gesture-helper.h"

struct _RpeStemEditor
{
  GtkWidget  parent_instance;

  float     *values;
  gsize      n;
  gboolean   fixed;
  double     vmin;          /* the range shown: fixed, or fitted and held */
  double     vmax;
  gint64     x_offset;
  char      *label;
  char      *title;
  int        selected;
  int        hover;

  gboolean   stroking;
  double     last_x;
  double     last_y;
  double     start_x;
  double     start_y;
  RpeDragTracker tracker;
};

G_DEFINE_FINAL_TYPE (RpeStemEditor, rpe_stem_editor, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_N_VALUES,
  PROP_SELECTED,
  PROP_X_OFFSET,
  PROP_LABEL,
  PROP_TITLE,
  PROP_FIXED_RANGE,
  PROP_RANGE_MIN,
  PROP_RANGE_MAX,
  N_PROPS
};

enum {
  SIGNAL_VALUES_CHANGED,
  SIGNAL_EDITING_FINISHED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

/* The range as shown; an automatic range is fitted to the values. */
static void
refit_range (RpeStemEditor *self)
{
  RpeStemRenderData data;
  double lo, hi;

  if (self->fixed)
    return;
  rpe_stem_render_data_init (&data);
  data.values = self->values;
  data.n = self->n;
  rpe_editor_stem_range (&data, &lo, &hi);
  if (lo != self->vmin || hi != self->vmax)
    {
      self->vmin = lo;
      self->vmax = hi;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RANGE_MIN]);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RANGE_MAX]);
    }
}

void
rpe_stem_editor_get_render_data (RpeStemEditor     *self,
                                 RpeStemRenderData *data)
{
  g_return_if_fail (RPE_IS_STEM_EDITOR (self));

  rpe_stem_render_data_init (data);
  data->values = self->values;
  data->n = self->n;
  data->fixed_range = true;
  data->vmin = self->vmin;
  data->vmax = self->vmax;
  data->x_offset = (ssize_t) self->x_offset;
  data->x_label = self->label;
  data->title = self->title;
  data->selected = self->selected;
  data->hover = self->hover;
  data->focused = gtk_widget_has_focus (GTK_WIDGET (self));
}

static gboolean
get_frame (RpeStemEditor  *self,
           RpeEditorFrame *frame)
{
  RpeStemRenderData data;

  rpe_stem_editor_get_render_data (self, &data);
  return rpe_editor_stem_layout (&data,
                                 gtk_widget_get_width (GTK_WIDGET (self)),
                                 gtk_widget_get_height (GTK_WIDGET (self)),
                                 frame);
}

static void
rpe_stem_editor_snapshot (GtkWidget   *widget,
                          GtkSnapshot *snapshot)
{
  RpeStemEditor *self = RPE_STEM_EDITOR (widget);
  int width = gtk_widget_get_width (widget);
  int height = gtk_widget_get_height (widget);
  RpeStemRenderData data;
  cairo_t *cr;

  if (width <= 0 || height <= 0)
    return;
  rpe_stem_editor_get_render_data (self, &data);
  rpe_gesture_theme_colors (widget, data.foreground, data.accent);
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));
  rpe_editor_render_stems (cr, &data, width, height);
  cairo_destroy (cr);
}

static void
rpe_stem_editor_measure (GtkWidget      *widget,
                         GtkOrientation  orientation,
                         int             for_size,
                         int            *minimum,
                         int            *natural,
                         int            *minimum_baseline,
                         int            *natural_baseline)
{
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      *minimum = 160;
      *natural = 360;
    }
  else
    {
      *minimum = 110;
      *natural = 180;
    }
}

static void
emit_changed (RpeStemEditor *self,
              gsize          first,
              gsize          last)
{
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_signal_emit (self, signals[SIGNAL_VALUES_CHANGED], 0,
                 (guint) first, (guint) (last - first + 1));
}

/* --------------------------------------------------------------- strokes */

static void
stroke_segment (RpeStemEditor *self,
                double         x0,
                double         y0,
                double         x1,
                double         y1)
{
  RpeEditorFrame frame;
  size_t first, last;

  if (self->n == 0 || !get_frame (self, &frame))
    return;
  if (rpe_editor_stem_stroke (&frame, self->values, self->n, x0, y0, x1, y1,
                              self->fixed, &first, &last))
    emit_changed (self, first, last);
}

void
_rpe_stem_editor_stroke_begin (RpeStemEditor *self,
                               double         x,
                               double         y)
{
  RpeEditorFrame frame;

  g_return_if_fail (RPE_IS_STEM_EDITOR (self));

  if (self->n == 0 || !rpe_gesture_point_ok (x, y) || !get_frame (self, &frame))
    return;
  self->stroking = TRUE;
  self->start_x = self->last_x = x;
  self->start_y = self->last_y = y;
  rpe_stem_editor_set_selected (self, (int) rpe_editor_stem_nearest (&frame, self->n, x));
  stroke_segment (self, x, y, x, y);
}

void
_rpe_stem_editor_stroke_to (RpeStemEditor *self,
                            double         x,
                            double         y)
{
  RpeEditorFrame frame;

  g_return_if_fail (RPE_IS_STEM_EDITOR (self));

  if (!self->stroking || !rpe_gesture_point_ok (x, y))
    return;
  stroke_segment (self, self->last_x, self->last_y, x, y);
  self->last_x = x;
  self->last_y = y;
  if (get_frame (self, &frame))
    rpe_stem_editor_set_selected (self, (int) rpe_editor_stem_nearest (&frame, self->n, x));
}

void
_rpe_stem_editor_stroke_end (RpeStemEditor *self)
{
  g_return_if_fail (RPE_IS_STEM_EDITOR (self));

  if (!self->stroking)
    return;
  self->stroking = FALSE;
  refit_range (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_signal_emit (self, signals[SIGNAL_EDITING_FINISHED], 0);
}

static void
drag_begin_cb (GtkGestureDrag *gesture,
               double          x,
               double          y,
               RpeStemEditor  *self)
{
  if (gtk_widget_get_focusable (GTK_WIDGET (self)))
    gtk_widget_grab_focus (GTK_WIDGET (self));
  if (rpe_drag_tracker_begin (&self->tracker, x, y))
    _rpe_stem_editor_stroke_begin (self, x, y);
  if (self->stroking)
    gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_CLAIMED);
}

static void
drag_update_cb (GtkGestureDrag *gesture,
                double          dx,
                double          dy,
                RpeStemEditor  *self)
{
  double x, y;

  if (rpe_drag_tracker_update (&self->tracker, dx, dy, &x, &y))
    _rpe_stem_editor_stroke_to (self, x, y);
}

static void
drag_end_cb (GtkGestureDrag *gesture,
             double          dx,
             double          dy,
             RpeStemEditor  *self)
{
  double x, y;

  if (self->stroking && rpe_drag_tracker_update (&self->tracker, dx, dy, &x, &y))
    _rpe_stem_editor_stroke_to (self, x, y);
  rpe_drag_tracker_end (&self->tracker);
  _rpe_stem_editor_stroke_end (self);
}

static void
set_hover (RpeStemEditor *self,
           int            hover)
{
  if (self->hover != hover)
    {
      self->hover = hover;
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

static int
index_at (RpeStemEditor *self,
          double         x,
          double         y)
{
  RpeEditorFrame frame;
  const RpePlotRect *a = &frame.area;

  if (self->n == 0 || !rpe_gesture_point_ok (x, y) || !get_frame (self, &frame))
    return -1;
  if (x < a->x || x > a->x + a->width || y < a->y - 6 || y > a->y + a->height + 6)
    return -1;
  return (int) rpe_editor_stem_nearest (&frame, self->n, x);
}

static void
motion_cb (GtkEventControllerMotion *motion,
           double                    x,
           double                    y,
           RpeStemEditor            *self)
{
  set_hover (self, index_at (self, x, y));
}

static void
leave_cb (GtkEventControllerMotion *motion,
          RpeStemEditor            *self)
{
  set_hover (self, -1);
}

static gboolean
query_tooltip_cb (GtkWidget     *widget,
                  int            x,
                  int            y,
                  gboolean       keyboard_mode,
                  GtkTooltip    *tooltip,
                  RpeStemEditor *self)
{
  int i = keyboard_mode ? self->selected : index_at (self, x, y);
  char *text;

  if (i < 0 || (gsize) i >= self->n)
    return FALSE;
  /* Translators: "lag τ = -3\nvalue = 0.25": the editor's label (or "index"), a position, its value */
  text = g_strdup_printf (_("%s = %lld\nvalue = %.4g"),
                          self->label != NULL ? self->label : _("index"),
                          (long long) ((gint64) i + self->x_offset), self->values[i]);
  gtk_tooltip_set_text (tooltip, text);
  g_free (text);
  return TRUE;
}

/* ------------------------------------------------------------------ keys */

gboolean
_rpe_stem_editor_handle_key (RpeStemEditor   *self,
                             guint            keyval,
                             GdkModifierType  state)
{
  double step;
  int i;

  g_return_val_if_fail (RPE_IS_STEM_EDITOR (self), FALSE);

  if (self->n == 0)
    return FALSE;
  i = self->selected;
  switch (keyval)
    {
    case GDK_KEY_Left:
    case GDK_KEY_KP_Left:
      rpe_stem_editor_set_selected (self, i < 0 ? (int) self->n - 1 : MAX (0, i - 1));
      return TRUE;
    case GDK_KEY_Right:
    case GDK_KEY_KP_Right:
      rpe_stem_editor_set_selected (self, i < 0 ? 0 : MIN ((int) self->n - 1, i + 1));
      return TRUE;
    case GDK_KEY_Home:
    case GDK_KEY_KP_Home:
      rpe_stem_editor_set_selected (self, 0);
      return TRUE;
    case GDK_KEY_End:
    case GDK_KEY_KP_End:
      rpe_stem_editor_set_selected (self, (int) self->n - 1);
      return TRUE;
    case GDK_KEY_Up:
    case GDK_KEY_KP_Up:
    case GDK_KEY_Down:
    case GDK_KEY_KP_Down:
    case GDK_KEY_0:
    case GDK_KEY_KP_0:
    case GDK_KEY_Delete:
      break;
    default:
      return FALSE;
    }

  if (i < 0)
    {
      rpe_stem_editor_set_selected (self, 0);
      i = 0;
    }
  step = (self->vmax - self->vmin) / ((state & GDK_SHIFT_MASK) ? 500.0 : 50.0);
  if (keyval == GDK_KEY_Up || keyval == GDK_KEY_KP_Up)
    self->values[i] += (float) step;
  else if (keyval == GDK_KEY_Down || keyval == GDK_KEY_KP_Down)
    self->values[i] -= (float) step;
  else
    self->values[i] = 0.0f;
  if (self->fixed)
    self->values[i] = (float) CLAMP ((double) self->values[i], self->vmin, self->vmax);
  emit_changed (self, (gsize) i, (gsize) i);
  refit_range (self);
  g_signal_emit (self, signals[SIGNAL_EDITING_FINISHED], 0);
  return TRUE;
}

static gboolean
key_pressed_cb (GtkEventControllerKey *controller,
                guint                  keyval,
                guint                  keycode,
                GdkModifierType        state,
                RpeStemEditor         *self)
{
  return _rpe_stem_editor_handle_key (self, keyval, state);
}

static void
focus_changed_cb (GtkEventControllerFocus *focus,
                  RpeStemEditor           *self)
{
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* ------------------------------------------------------------- GObject */

static void
rpe_stem_editor_finalize (GObject *object)
{
  RpeStemEditor *self = RPE_STEM_EDITOR (object);

  g_clear_pointer (&self->values, g_free);
  g_clear_pointer (&self->label, g_free);
  g_clear_pointer (&self->title, g_free);

  G_OBJECT_CLASS (rpe_stem_editor_parent_class)->finalize (object);
}

static void
rpe_stem_editor_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  RpeStemEditor *self = RPE_STEM_EDITOR (object);

  switch (prop_id)
    {
    case PROP_N_VALUES:
      g_value_set_uint (value, (guint) MIN (self->n, G_MAXUINT));
      break;
    case PROP_SELECTED:
      g_value_set_int (value, self->selected);
      break;
    case PROP_X_OFFSET:
      g_value_set_int64 (value, self->x_offset);
      break;
    case PROP_LABEL:
      g_value_set_string (value, self->label);
      break;
    case PROP_TITLE:
      g_value_set_string (value, self->title);
      break;
    case PROP_FIXED_RANGE:
      g_value_set_boolean (value, self->fixed);
      break;
    case PROP_RANGE_MIN:
      g_value_set_double (value, self->vmin);
      break;
    case PROP_RANGE_MAX:
      g_value_set_double (value, self->vmax);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
rpe_stem_editor_set_property (GObject      *object,
                              guint         prop_id,
                              const GValue *value,
                              GParamSpec   *pspec)
{
  RpeStemEditor *self = RPE_STEM_EDITOR (object);

  switch (prop_id)
    {
    case PROP_SELECTED:
      rpe_stem_editor_set_selected (self, g_value_get_int (value));
      break;
    case PROP_X_OFFSET:
      rpe_stem_editor_set_x_offset (self, g_value_get_int64 (value));
      break;
    case PROP_LABEL:
      rpe_stem_editor_set_label (self, g_value_get_string (value));
      break;
    case PROP_TITLE:
      rpe_stem_editor_set_title (self, g_value_get_string (value));
      break;
    case PROP_FIXED_RANGE:
      rpe_stem_editor_set_range (self, g_value_get_boolean (value), self->vmin, self->vmax);
      break;
    case PROP_RANGE_MIN:
      rpe_stem_editor_set_range (self, self->fixed, g_value_get_double (value), self->vmax);
      break;
    case PROP_RANGE_MAX:
      rpe_stem_editor_set_range (self, self->fixed, self->vmin, g_value_get_double (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
rpe_stem_editor_class_init (RpeStemEditorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->finalize = rpe_stem_editor_finalize;
  object_class->get_property = rpe_stem_editor_get_property;
  object_class->set_property = rpe_stem_editor_set_property;

  widget_class->snapshot = rpe_stem_editor_snapshot;
  widget_class->measure = rpe_stem_editor_measure;

  properties[PROP_N_VALUES] =
    g_param_spec_uint ("n-values", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_SELECTED] =
    g_param_spec_int ("selected", NULL, NULL, -1, G_MAXINT, -1,
                      G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_X_OFFSET] =
    g_param_spec_int64 ("x-offset", NULL, NULL, G_MININT32, G_MAXINT32, 0,
                        G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_LABEL] =
    g_param_spec_string ("label", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_TITLE] =
    g_param_spec_string ("title", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_FIXED_RANGE] =
    g_param_spec_boolean ("fixed-range", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_RANGE_MIN] =
    g_param_spec_double ("range-min", NULL, NULL, -G_MAXDOUBLE, G_MAXDOUBLE, -1.0,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_RANGE_MAX] =
    g_param_spec_double ("range-max", NULL, NULL, -G_MAXDOUBLE, G_MAXDOUBLE, 1.0,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  signals[SIGNAL_VALUES_CHANGED] =
    g_signal_new ("values-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_UINT, G_TYPE_UINT);
  signals[SIGNAL_EDITING_FINISHED] =
    g_signal_new ("editing-finished", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 0);

  gtk_widget_class_set_css_name (widget_class, "stemeditor");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_WIDGET);
}

static void
rpe_stem_editor_init (RpeStemEditor *self)
{
  static const RpeEditorHandlers handlers = {
    G_CALLBACK (drag_begin_cb), G_CALLBACK (drag_update_cb), G_CALLBACK (drag_end_cb),
    G_CALLBACK (motion_cb), G_CALLBACK (leave_cb), NULL,
    G_CALLBACK (key_pressed_cb), G_CALLBACK (focus_changed_cb), G_CALLBACK (query_tooltip_cb),
  };

  self->selected = -1;
  self->hover = -1;
  self->vmin = -1.0;
  self->vmax = 1.0;

  rpe_gesture_attach_editor (GTK_WIDGET (self), &handlers);
  gtk_widget_set_cursor_from_name (GTK_WIDGET (self), "crosshair");
}

GtkWidget *
rpe_stem_editor_new (void)
{
  return g_object_new (RPE_TYPE_STEM_EDITOR, NULL);
}

void
rpe_stem_editor_set_values (RpeStemEditor *self,
                            const float   *v,
                            gsize          n)
{
  gsize old_n;

  g_return_if_fail (RPE_IS_STEM_EDITOR (self));
  g_return_if_fail (n <= G_MAXINT);

  if (v == NULL)
    n = 0;
  old_n = self->n;
  g_clear_pointer (&self->values, g_free);
  self->values = n > 0 ? g_memdup2 (v, n * sizeof (float)) : NULL;
  self->n = n;
  self->stroking = FALSE;
  self->hover = -1;
  refit_range (self);
  if (self->selected >= (int) n)
    rpe_stem_editor_set_selected (self, n > 0 ? (int) n - 1 : -1);
  gtk_widget_queue_draw (GTK_WIDGET (self));
  if (old_n != n)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_VALUES]);
}

const float *
rpe_stem_editor_get_values (RpeStemEditor *self,
                            gsize         *n)
{
  g_return_val_if_fail (RPE_IS_STEM_EDITOR (self), NULL);

  if (n != NULL)
    *n = self->n;
  return self->values;
}

void
rpe_stem_editor_set_range (RpeStemEditor *self,
                           gboolean       fixed,
                           double         vmin,
                           double         vmax)
{
  gboolean was_fixed;
  double old_min, old_max;

  g_return_if_fail (RPE_IS_STEM_EDITOR (self));
  g_return_if_fail (!fixed || (isfinite (vmin) && isfinite (vmax) && vmin < vmax));

  g_object_freeze_notify (G_OBJECT (self));
  was_fixed = self->fixed;
  old_min = self->vmin;
  old_max = self->vmax;
  self->fixed = !!fixed;
  if (self->fixed)
    {
      self->vmin = vmin;
      self->vmax = vmax;
      if (self->vmin != old_min)
        g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RANGE_MIN]);
      if (self->vmax != old_max)
        g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RANGE_MAX]);
    }
  else
    refit_range (self);
  if (was_fixed != self->fixed)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FIXED_RANGE]);
  g_object_thaw_notify (G_OBJECT (self));
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
rpe_stem_editor_get_range (RpeStemEditor *self,
                           double        *vmin,
                           double        *vmax)
{
  g_return_if_fail (RPE_IS_STEM_EDITOR (self));

  if (vmin != NULL)
    *vmin = self->vmin;
  if (vmax != NULL)
    *vmax = self->vmax;
}

void
rpe_stem_editor_set_x_offset (RpeStemEditor *self,
                              gint64         x_offset)
{
  g_return_if_fail (RPE_IS_STEM_EDITOR (self));

  if (self->x_offset != x_offset)
    {
      self->x_offset = x_offset;
      gtk_widget_queue_draw (GTK_WIDGET (self));
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_X_OFFSET]);
    }
}

gint64
rpe_stem_editor_get_x_offset (RpeStemEditor *self)
{
  g_return_val_if_fail (RPE_IS_STEM_EDITOR (self), 0);
  return self->x_offset;
}

void
rpe_stem_editor_set_label (RpeStemEditor *self,
                           const char    *label)
{
  g_return_if_fail (RPE_IS_STEM_EDITOR (self));

  if (g_strcmp0 (self->label, label) != 0)
    {
      g_free (self->label);
      self->label = g_strdup (label);
      gtk_widget_queue_draw (GTK_WIDGET (self));
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LABEL]);
    }
}

const char *
rpe_stem_editor_get_label (RpeStemEditor *self)
{
  g_return_val_if_fail (RPE_IS_STEM_EDITOR (self), NULL);
  return self->label;
}

void
rpe_stem_editor_set_title (RpeStemEditor *self,
                           const char    *title)
{
  g_return_if_fail (RPE_IS_STEM_EDITOR (self));

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
rpe_stem_editor_get_title (RpeStemEditor *self)
{
  g_return_val_if_fail (RPE_IS_STEM_EDITOR (self), NULL);
  return self->title;
}

void
rpe_stem_editor_set_selected (RpeStemEditor *self,
                              int            index)
{
  g_return_if_fail (RPE_IS_STEM_EDITOR (self));

  if (index < 0 || (gsize) index >= self->n)
    index = -1;
  if (self->selected != index)
    {
      self->selected = index;
      gtk_widget_queue_draw (GTK_WIDGET (self));
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SELECTED]);
    }
}

int
rpe_stem_editor_get_selected (RpeStemEditor *self)
{
  g_return_val_if_fail (RPE_IS_STEM_EDITOR (self), -1);
  return self->selected;
}

/* rpe-curve-view.c: a widget showing curves, with a hover read-out. */
#include "config.h"

#include "rpe-curve-view.h"
#include "rpe-gesture-helper.h"

#include <math.h>
#include <string.h>

#define HOVER_RADIUS 24.0

struct _RpeCurveView
{
  GtkWidget       parent_instance;

  RpeCurvePlot    base;       /* every setting of the plot but the strings and series below */
  GArray         *series;     /* RpeCurveSeries whose arrays/labels the view owns */
  char           *title;
  char           *x_label;
  char           *y_label;
  char           *marker_label;
  int             min_size[2];   /* measure: width, height */
  int             nat_size[2];
  gboolean        hovering;
  gsize           hover_series;
  gsize           hover_index;
};

G_DEFINE_FINAL_TYPE (RpeCurveView, rpe_curve_view, GTK_TYPE_WIDGET)

static void
clear_series (RpeCurveView *self)
{
  for (guint i = 0; i < self->series->len; i++)
    {
      RpeCurveSeries *s = &g_array_index (self->series, RpeCurveSeries, i);

      g_free ((gpointer) s->x);
      g_free ((gpointer) s->y);
      g_free ((gpointer) s->y_err);
      g_free ((gpointer) s->label);
    }
  g_array_set_size (self->series, 0);
  self->hovering = FALSE;
}

/* The window is in presentation mode (F11): its .presentation style class. */
static gboolean
in_presentation (RpeCurveView *self)
{
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (self));

  return root != NULL && gtk_widget_has_css_class (GTK_WIDGET (root), "presentation");
}

void
rpe_curve_view_get_plot (RpeCurveView *self,
                         RpeCurvePlot *plot)
{
  g_return_if_fail (RPE_IS_CURVE_VIEW (self));

  *plot = self->base;
  plot->series = (const RpeCurveSeries *) (gconstpointer) self->series->data;
  plot->n_series = self->series->len;
  plot->title = self->title;
  plot->x_label = self->x_label;
  plot->y_label = self->y_label;
  plot->x_marker_label = self->marker_label;
  /* presentation mode (F11): text for the back of a classroom */
  if (in_presentation (self))
    plot->font_scale = (plot->font_scale > 0.0 ? plot->font_scale : 1.0) * RPE_CURVE_VIEW_PRESENTATION_SCALE;
}

static void
plot_with_style (RpeCurveView *self,
                 RpeCurvePlot *plot)
{
  GdkRGBA fg;

  rpe_curve_view_get_plot (self, plot);
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (GTK_WIDGET (self)), &fg);
  G_GNUC_END_IGNORE_DEPRECATIONS
  plot->foreground[0] = fg.red;
  plot->foreground[1] = fg.green;
  plot->foreground[2] = fg.blue;
  plot->foreground[3] = fg.alpha;
}

static void
rpe_curve_view_snapshot (GtkWidget   *widget,
                         GtkSnapshot *snapshot)
{
  RpeCurveView *self = RPE_CURVE_VIEW (widget);
  int width = gtk_widget_get_width (widget);
  int height = gtk_widget_get_height (widget);
  RpeCurvePlot plot;
  cairo_t *cr;

  if (self->series->len == 0 || width <= 0 || height <= 0)
    return;
  plot_with_style (self, &plot);
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));
  rpe_curve_render (cr, &plot, width, height);
  if (self->hovering)
    rpe_curve_render_highlight (cr, &plot, width, height, self->hover_series, self->hover_index);
  cairo_destroy (cr);
}

void
rpe_curve_view_hover_at (RpeCurveView *self,
                         double        x,
                         double        y)
{
  int width = gtk_widget_get_width (GTK_WIDGET (self));
  int height = gtk_widget_get_height (GTK_WIDGET (self));
  gboolean was = self->hovering;
  gsize os = self->hover_series, oi = self->hover_index;
  RpeCurvePlot plot;
  RpeCurveFrame frame;
  size_t s, i;
  double dist;

  g_return_if_fail (RPE_IS_CURVE_VIEW (self));
  self->hovering = FALSE;
  if (self->series->len > 0 && width > 0 && height > 0 && rpe_gesture_point_ok (x, y))
    {
      /* text metrics only: a 1 x 1 surface */
      cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
      cairo_t *cr = cairo_create (surface);

      rpe_curve_view_get_plot (self, &plot);
      if (rpe_curve_plot_layout (cr, &plot, width, height, &frame)
          && rpe_curve_plot_nearest (&plot, &frame, x, y, &s, &i, &dist) && dist <= HOVER_RADIUS)
        {
          self->hovering = TRUE;
          self->hover_series = s;
          self->hover_index = i;
        }
      cairo_destroy (cr);
      cairo_surface_destroy (surface);
    }
  if (was != self->hovering || os != self->hover_series || oi != self->hover_index)
    gtk_widget_queue_draw (GTK_WIDGET (self));
}

gboolean
rpe_curve_view_get_hover (RpeCurveView *self,
                          gsize        *series,
                          gsize        *index)
{
  g_return_val_if_fail (RPE_IS_CURVE_VIEW (self), FALSE);
  if (self->hovering)
    {
      if (series != NULL)
        *series = self->hover_series;
      if (index != NULL)
        *index = self->hover_index;
    }
  return self->hovering;
}

static void
on_motion (GtkEventControllerMotion *controller,
           double                    x,
           double                    y,
           RpeCurveView             *self)
{
  rpe_curve_view_hover_at (self, x, y);
}

static void
on_leave (GtkEventControllerMotion *controller,
          RpeCurveView             *self)
{
  if (self->hovering)
    {
      self->hovering = FALSE;
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

static void
rpe_curve_view_measure (GtkWidget      *widget,
                        GtkOrientation  orientation,
                        int             for_size,
                        int            *minimum,
                        int            *natural,
                        int            *minimum_baseline,
                        int            *natural_baseline)
{
  RpeCurveView *self = RPE_CURVE_VIEW (widget);
  int i = orientation == GTK_ORIENTATION_HORIZONTAL ? 0 : 1;
  /* in presentation mode the text grows, and the plot's height with it (by the square
   * root of the text's factor: the larger text still has room, and a view's heatmaps
   * beside or above the plot keep most of theirs) */
  double scale = i == 1 && in_presentation (self) ? sqrt (RPE_CURVE_VIEW_PRESENTATION_SCALE) : 1.0;

  *minimum = (int) round (self->min_size[i] * scale);
  *natural = (int) round (self->nat_size[i] * scale);
}


static void
rpe_curve_view_finalize (GObject *object)
{
  RpeCurveView *self = RPE_CURVE_VIEW (object);

  clear_series (self);
  g_array_unref (self->series);
  g_free (self->title);
  g_free (self->x_label);
  g_free (self->y_label);
  g_free (self->marker_label);
  G_OBJECT_CLASS (rpe_curve_view_parent_class)->finalize (object);
}

static void
rpe_curve_view_class_init (RpeCurveViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->finalize = rpe_curve_view_finalize;
  widget_class->snapshot = rpe_curve_view_snapshot;
  widget_class->measure = rpe_curve_view_measure;
  gtk_widget_class_set_css_name (widget_class, "rpe-curve-view");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
rpe_curve_view_init (RpeCurveView *self)
{
  GtkEventController *motion = gtk_event_controller_motion_new ();

  self->series = g_array_new (FALSE, TRUE, sizeof (RpeCurveSeries));
  rpe_curve_plot_init (&self->base);
  self->min_size[0] = 160;
  self->min_size[1] = 120;
  self->nat_size[0] = 420;
  self->nat_size[1] = 300;
  g_signal_connect (motion, "motion", G_CALLBACK (on_motion), self);
  g_signal_connect (motion, "leave", G_CALLBACK (on_leave), self);
  gtk_widget_add_controller (GTK_WIDGET (self), motion);
}

GtkWidget *
rpe_curve_view_new (void)
{
  return g_object_new (RPE_TYPE_CURVE_VIEW, NULL);
}

GtkWidget *
rpe_curve_view_new_plot (void)
{
  GtkWidget *view = rpe_curve_view_new ();

  rpe_curve_view_set_size_hints (RPE_CURVE_VIEW (view), 200, 150, 360, 240);
  gtk_widget_set_hexpand (view, TRUE);
  gtk_widget_set_vexpand (view, TRUE);
  return view;
}

void
rpe_curve_view_set_series (RpeCurveView         *self,
                           const RpeCurveSeries *series,
                           gsize                 n_series)
{
  g_return_if_fail (RPE_IS_CURVE_VIEW (self));
  g_return_if_fail (n_series == 0 || series != NULL);

  clear_series (self);
  for (gsize i = 0; i < n_series; i++)
    {
      RpeCurveSeries s = series[i];

      s.x = s.x != NULL ? g_memdup2 (s.x, s.n * sizeof (double)) : NULL;
      s.y = s.y != NULL ? g_memdup2 (s.y, s.n * sizeof (double)) : NULL;
      s.y_err = s.y_err != NULL ? g_memdup2 (s.y_err, s.n * sizeof (double)) : NULL;
      s.label = g_strdup (s.label);
      g_array_append_val (self->series, s);
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

gboolean
rpe_curve_view_set_table (RpeCurveView        *self,
                          const RpeCurveTable *table,
                          const char          *x_column,
                          const char * const  *y_columns)
{
  g_autoptr (GArray) series = NULL;
  long xcol;

  g_return_val_if_fail (RPE_IS_CURVE_VIEW (self), FALSE);
  if (table == NULL || x_column == NULL || (xcol = rpe_curve_table_find (table, x_column)) < 0)
    return FALSE;
  series = g_array_new (FALSE, TRUE, sizeof (RpeCurveSeries));
  for (size_t j = 0; j < rpe_curve_table_n_cols (table); j++)
    {
      const char *name = rpe_curve_table_column_name (table, j);
      RpeCurveSeries s = { 0 };

      if ((long) j == xcol || (y_columns != NULL && !g_strv_contains (y_columns, name)))
        continue;
      s.x = rpe_curve_table_column_const (table, (size_t) xcol);
      s.y = rpe_curve_table_column_const (table, j);
      s.n = rpe_curve_table_n_rows (table);
      s.label = name;
      g_array_append_val (series, s);
    }
  if (y_columns != NULL && series->len != g_strv_length ((char **) y_columns))
    return FALSE;
  rpe_curve_view_set_series (self, (const RpeCurveSeries *) (gconstpointer) series->data, series->len);
  return TRUE;
}

gsize
rpe_curve_view_get_n_series (RpeCurveView *self)
{
  g_return_val_if_fail (RPE_IS_CURVE_VIEW (self), 0);
  return self->series->len;
}

void
rpe_curve_view_set_title (RpeCurveView *self,
                          const char   *title)
{
  g_return_if_fail (RPE_IS_CURVE_VIEW (self));
  g_free (self->title);
  self->title = g_strdup (title);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
rpe_curve_view_set_axis_labels (RpeCurveView *self,
                                const char   *x_label,
                                const char   *y_label)
{
  g_return_if_fail (RPE_IS_CURVE_VIEW (self));
  g_free (self->x_label);
  g_free (self->y_label);
  self->x_label = g_strdup (x_label);
  self->y_label = g_strdup (y_label);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
rpe_curve_view_set_log_scale (RpeCurveView *self,
                              gboolean      x_log,
                              gboolean      y_log)
{
  g_return_if_fail (RPE_IS_CURVE_VIEW (self));
  self->base.x_log = x_log;
  self->base.y_log = y_log;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
rpe_curve_view_set_marker (RpeCurveView *self,
                           double        x,
                           const char   *label)
{
  g_return_if_fail (RPE_IS_CURVE_VIEW (self));
  self->base.x_marker = x;
  g_free (self->marker_label);
  self->marker_label = g_strdup (label);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
rpe_curve_view_set_plot (RpeCurveView       *self,
                         const RpeCurvePlot *plot)
{
  g_return_if_fail (RPE_IS_CURVE_VIEW (self));
  g_return_if_fail (plot != NULL);

  self->base = *plot;
  self->base.series = NULL;
  self->base.n_series = 0;
  self->base.title = self->base.x_label = self->base.y_label = self->base.x_marker_label = NULL;
  g_free (self->title);
  g_free (self->x_label);
  g_free (self->y_label);
  g_free (self->marker_label);
  self->title = g_strdup (plot->title);
  self->x_label = g_strdup (plot->x_label);
  self->y_label = g_strdup (plot->y_label);
  self->marker_label = g_strdup (plot->x_marker_label);
  rpe_curve_view_set_series (self, plot->series, plot->n_series);
}

void
rpe_curve_view_set_size_hints (RpeCurveView *self,
                               int           min_width,
                               int           min_height,
                               int           natural_width,
                               int           natural_height)
{
  g_return_if_fail (RPE_IS_CURVE_VIEW (self));
  self->min_size[0] = MAX (min_width, 0);
  self->min_size[1] = MAX (min_height, 0);
  self->nat_size[0] = MAX (natural_width, self->min_size[0]);
  self->nat_size[1] = MAX (natural_height, self->min_size[1]);
  gtk_widget_queue_resize (GTK_WIDGET (self));
}

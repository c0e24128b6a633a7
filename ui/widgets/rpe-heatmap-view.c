/* rpe-heatmap-view.c: a widget showing one heatmap; snapshot calls the
 * GTK-free renderer through gtk_snapshot_append_cairo. */
#include "config.h"

#include <math.h>

#include "rpe-heatmap-view.h"

struct _RpeHeatmapView
{
  GtkWidget          parent_instance;

  GBytes            *values;
  gsize              rows;
  gsize              cols;
  char              *title;
  char              *x_label;
  char              *y_label;
  const RpeColormap *colormap;
  RpeHeatmapScale    scale;
  RpeHeatmapTransform transform;
  double             transform_param;
  gboolean           fixed_range;
  double             vmin;
  double             vmax;
  gsize              train_length;
  gboolean           show_axes;
  gboolean           equal_aspect;
  gssize             row_origin;
  gssize             col_origin;
};

G_DEFINE_FINAL_TYPE (RpeHeatmapView, rpe_heatmap_view, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_TITLE,
  PROP_TRAIN_LENGTH,
  PROP_SHOW_AXES,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

void
rpe_heatmap_view_get_render_data (RpeHeatmapView *self,
                                  RpeHeatmapData *data)
{
  g_return_if_fail (RPE_IS_HEATMAP_VIEW (self));

  rpe_heatmap_data_init (data);
  data->values = self->values != NULL ? g_bytes_get_data (self->values, NULL) : NULL;
  data->rows = self->rows;
  data->cols = self->cols;
  data->title = self->title;
  data->x_label = self->x_label;
  data->y_label = self->y_label;
  data->colormap = self->colormap;
  data->scale = self->scale;
  data->transform = self->transform;
  data->transform_param = self->transform_param;
  data->fixed_range = self->fixed_range;
  data->vmin = self->vmin;
  data->vmax = self->vmax;
  data->train_length = self->train_length;
  data->show_axes = self->show_axes;
  data->equal_aspect = self->equal_aspect;
  data->row_origin = self->row_origin;
  data->col_origin = self->col_origin;
  {
    /* presentation mode (F11): text for the back of a classroom */
    GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (self));

    if (root != NULL && gtk_widget_has_css_class (GTK_WIDGET (root), "presentation"))
      data->font_scale = 1.6;
  }
}

/* Where the renderer puts the image at the widget's size (the same layout code and fonts). */
static gboolean
image_rect (RpeHeatmapView *self,
            RpePlotRect    *image)
{
  RpeHeatmapData data;
  RpePlotRect bar;
  cairo_surface_t *surface;
  cairo_t *cr;
  gboolean ok;
  int width = gtk_widget_get_width (GTK_WIDGET (self)), height = gtk_widget_get_height (GTK_WIDGET (self));

  rpe_heatmap_view_get_render_data (self, &data);
  if (data.values == NULL || data.rows == 0 || data.cols == 0 || width <= 0 || height <= 0)
    return FALSE;
  surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cr = cairo_create (surface);
  rpe_plot_use_figure_fonts (cr);
  ok = rpe_plot_heatmap_layout (cr, &data, width, height, image, &bar) && image->width > 0 && image->height > 0;
  cairo_destroy (cr);
  cairo_surface_destroy (surface);
  return ok;
}

gboolean
rpe_heatmap_view_cell_at (RpeHeatmapView *self,
                          double          x,
                          double          y,
                          gsize          *row,
                          gsize          *col)
{
  RpePlotRect image;
  double u, v;

  g_return_val_if_fail (RPE_IS_HEATMAP_VIEW (self), FALSE);
  if (!isfinite (x) || !isfinite (y) || !image_rect (self, &image))
    return FALSE;
  u = (x - image.x) / image.width;
  v = (y - image.y) / image.height;
  if (!(u >= 0 && u < 1 && v >= 0 && v < 1))
    return FALSE;
  *row = MIN ((gsize) (v * (double) self->rows), self->rows - 1);
  *col = MIN ((gsize) (u * (double) self->cols), self->cols - 1);
  return TRUE;
}

gboolean
rpe_heatmap_view_cell_center (RpeHeatmapView *self,
                              gsize           row,
                              gsize           col,
                              double         *x,
                              double         *y)
{
  RpePlotRect image;

  g_return_val_if_fail (RPE_IS_HEATMAP_VIEW (self), FALSE);
  if (row >= self->rows || col >= self->cols || !image_rect (self, &image))
    return FALSE;
  *x = image.x + ((double) col + 0.5) * image.width / (double) self->cols;
  *y = image.y + ((double) row + 0.5) * image.height / (double) self->rows;
  return TRUE;
}

static void
rpe_heatmap_view_snapshot (GtkWidget   *widget,
                           GtkSnapshot *snapshot)
{
  RpeHeatmapView *self = RPE_HEATMAP_VIEW (widget);
  int width = gtk_widget_get_width (widget);
  int height = gtk_widget_get_height (widget);
  RpeHeatmapData data;
  GdkRGBA fg;
  cairo_t *cr;

  if (self->values == NULL || width <= 0 || height <= 0)
    return;

  rpe_heatmap_view_get_render_data (self, &data);
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (widget), &fg);
  G_GNUC_END_IGNORE_DEPRECATIONS
  data.foreground[0] = fg.red;
  data.foreground[1] = fg.green;
  data.foreground[2] = fg.blue;
  data.foreground[3] = fg.alpha;

  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));
  rpe_plot_render_heatmap (cr, &data, width, height);
  cairo_destroy (cr);
}

static void
rpe_heatmap_view_measure (GtkWidget      *widget,
                          GtkOrientation  orientation,
                          int             for_size,
                          int            *minimum,
                          int            *natural,
                          int            *minimum_baseline,
                          int            *natural_baseline)
{
  *minimum = 120;
  *natural = 240;
}

static void
rpe_heatmap_view_finalize (GObject *object)
{
  RpeHeatmapView *self = RPE_HEATMAP_VIEW (object);

  g_clear_pointer (&self->values, g_bytes_unref);
  g_clear_pointer (&self->title, g_free);
  g_clear_pointer (&self->x_label, g_free);
  g_clear_pointer (&self->y_label, g_free);

  G_OBJECT_CLASS (rpe_heatmap_view_parent_class)->finalize (object);
}

static void
rpe_heatmap_view_get_property (GObject    *object,
                               guint       prop_id,
                               GValue     *value,
                               GParamSpec *pspec)
{
  RpeHeatmapView *self = RPE_HEATMAP_VIEW (object);

  switch (prop_id)
    {
    case PROP_TITLE:
      g_value_set_string (value, self->title);
      break;
    case PROP_TRAIN_LENGTH:
      g_value_set_uint (value, rpe_heatmap_view_get_train_length (self));
      break;
    case PROP_SHOW_AXES:
      g_value_set_boolean (value, self->show_axes);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
rpe_heatmap_view_set_property (GObject      *object,
                               guint         prop_id,
                               const GValue *value,
                               GParamSpec   *pspec)
{
  RpeHeatmapView *self = RPE_HEATMAP_VIEW (object);

  switch (prop_id)
    {
    case PROP_TITLE:
      rpe_heatmap_view_set_title (self, g_value_get_string (value));
      break;
    case PROP_TRAIN_LENGTH:
      rpe_heatmap_view_set_train_length (self, g_value_get_uint (value));
      break;
    case PROP_SHOW_AXES:
      rpe_heatmap_view_set_show_axes (self, g_value_get_boolean (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
rpe_heatmap_view_class_init (RpeHeatmapViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->finalize = rpe_heatmap_view_finalize;
  object_class->get_property = rpe_heatmap_view_get_property;
  object_class->set_property = rpe_heatmap_view_set_property;

  widget_class->snapshot = rpe_heatmap_view_snapshot;
  widget_class->measure = rpe_heatmap_view_measure;

  properties[PROP_TITLE] =
    g_param_spec_string ("title", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_TRAIN_LENGTH] =
    g_param_spec_uint ("train-length", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_SHOW_AXES] =
    g_param_spec_boolean ("show-axes", NULL, NULL, TRUE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_css_name (widget_class, "heatmap");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
rpe_heatmap_view_init (RpeHeatmapView *self)
{
  self->scale = RPE_HEATMAP_SCALE_AUTO;
  self->show_axes = TRUE;
  self->equal_aspect = TRUE;
  gtk_widget_set_hexpand (GTK_WIDGET (self), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (self), TRUE);
}

GtkWidget *
rpe_heatmap_view_new (void)
{
  return g_object_new (RPE_TYPE_HEATMAP_VIEW, NULL);
}

void
rpe_heatmap_view_set_data (RpeHeatmapView *self,
                           GBytes         *values,
                           gsize           rows,
                           gsize           cols)
{
  gsize count;

  g_return_if_fail (RPE_IS_HEATMAP_VIEW (self));

  if (values != NULL)
    {
      g_return_if_fail (rows > 0 && cols > 0);
      g_return_if_fail (g_size_checked_mul (&count, rows, cols));
      g_return_if_fail (g_size_checked_mul (&count, count, sizeof (float)));
      g_return_if_fail (g_bytes_get_size (values) >= count);
      g_bytes_ref (values);
    }
  g_clear_pointer (&self->values, g_bytes_unref);
  self->values = values;
  self->rows = values != NULL ? rows : 0;
  self->cols = values != NULL ? cols : 0;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

const float *
rpe_heatmap_view_get_data (RpeHeatmapView *self,
                           gsize          *rows,
                           gsize          *cols)
{
  g_return_val_if_fail (RPE_IS_HEATMAP_VIEW (self), NULL);

  if (rows != NULL)
    *rows = self->rows;
  if (cols != NULL)
    *cols = self->cols;
  return self->values != NULL ? g_bytes_get_data (self->values, NULL) : NULL;
}

void
rpe_heatmap_view_set_title (RpeHeatmapView *self,
                            const char     *title)
{
  g_return_if_fail (RPE_IS_HEATMAP_VIEW (self));

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
rpe_heatmap_view_get_title (RpeHeatmapView *self)
{
  g_return_val_if_fail (RPE_IS_HEATMAP_VIEW (self), NULL);
  return self->title;
}

void
rpe_heatmap_view_set_colormap (RpeHeatmapView    *self,
                               const RpeColormap *colormap)
{
  g_return_if_fail (RPE_IS_HEATMAP_VIEW (self));

  if (self->colormap != colormap)
    {
      self->colormap = colormap;
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

void
rpe_heatmap_view_set_scale (RpeHeatmapView  *self,
                            RpeHeatmapScale  scale)
{
  g_return_if_fail (RPE_IS_HEATMAP_VIEW (self));

  if (self->scale != scale)
    {
      self->scale = scale;
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

void
rpe_heatmap_view_set_transform (RpeHeatmapView      *self,
                                RpeHeatmapTransform  transform,
                                double               param)
{
  g_return_if_fail (RPE_IS_HEATMAP_VIEW (self));

  if (self->transform != transform || self->transform_param != param)
    {
      self->transform = transform;
      self->transform_param = param;
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

void
rpe_heatmap_view_set_range (RpeHeatmapView *self,
                            gboolean        fixed,
                            double          vmin,
                            double          vmax)
{
  g_return_if_fail (RPE_IS_HEATMAP_VIEW (self));

  self->fixed_range = !!fixed;
  self->vmin = vmin;
  self->vmax = vmax;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
rpe_heatmap_view_set_train_length (RpeHeatmapView *self,
                                   gsize           train_length)
{
  g_return_if_fail (RPE_IS_HEATMAP_VIEW (self));

  if (self->train_length != train_length)
    {
      self->train_length = train_length;
      gtk_widget_queue_draw (GTK_WIDGET (self));
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TRAIN_LENGTH]);
    }
}

guint
rpe_heatmap_view_get_train_length (RpeHeatmapView *self)
{
  g_return_val_if_fail (RPE_IS_HEATMAP_VIEW (self), 0);
  return (guint) MIN (self->train_length, G_MAXUINT);
}

void
rpe_heatmap_view_set_show_axes (RpeHeatmapView *self,
                                gboolean        show_axes)
{
  g_return_if_fail (RPE_IS_HEATMAP_VIEW (self));

  show_axes = !!show_axes;
  if (self->show_axes != show_axes)
    {
      self->show_axes = show_axes;
      gtk_widget_queue_draw (GTK_WIDGET (self));
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SHOW_AXES]);
    }
}

void
rpe_heatmap_view_set_equal_aspect (RpeHeatmapView *self,
                                   gboolean        equal_aspect)
{
  g_return_if_fail (RPE_IS_HEATMAP_VIEW (self));

  equal_aspect = !!equal_aspect;
  if (self->equal_aspect != equal_aspect)
    {
      self->equal_aspect = equal_aspect;
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

void
rpe_heatmap_view_set_axis_labels (RpeHeatmapView *self,
                                  const char     *x_label,
                                  const char     *y_label)
{
  g_return_if_fail (RPE_IS_HEATMAP_VIEW (self));
  if (g_strcmp0 (self->x_label, x_label) == 0 && g_strcmp0 (self->y_label, y_label) == 0)
    return;
  g_free (self->x_label);
  g_free (self->y_label);
  self->x_label = g_strdup (x_label);
  self->y_label = g_strdup (y_label);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
rpe_heatmap_view_set_origin (RpeHeatmapView *self,
                             gssize          row_origin,
                             gssize          col_origin)
{
  g_return_if_fail (RPE_IS_HEATMAP_VIEW (self));
  if (self->row_origin == row_origin && self->col_origin == col_origin)
    return;
  self->row_origin = row_origin;
  self->col_origin = col_origin;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
rpe_heatmap_view_get_origin (RpeHeatmapView *self,
                             gssize         *row_origin,
                             gssize         *col_origin)
{
  g_return_if_fail (RPE_IS_HEATMAP_VIEW (self));
  if (row_origin != NULL)
    *row_origin = self->row_origin;
  if (col_origin != NULL)
    *col_origin = self->col_origin;
}

/* rpe-figure-view.c: a figure as `rpe export` draws it, at the widget's size (see rpe-figure-view.h). */
#include "config.h"

#include "rpe-figure-view.h"

#include <math.h>

/* Presentation mode (F11): text for the back of a classroom, as the heatmap views have it. */
#define PRESENTATION_SCALE 1.6
/* The smallest text the renderers lay out, in user units (rpe_plot_auto_font, rpe_curve_auto_font). */
#define FIGURE_MIN_TEXT 10.0
/* Below this share of the figure's default size the figure is scaled down (unless min_text). */
#define MIN_SHARE 0.6

struct _RpeFigureView
{
  GtkWidget        parent_instance;

  RpeFigureBundle *bundle;
  double           min_text;
};

G_DEFINE_FINAL_TYPE (RpeFigureView, rpe_figure_view, GTK_TYPE_WIDGET)

double
rpe_figure_view_get_scale (RpeFigureView *self)
{
  double wpt, hpt, scale;
  int width, height;
  GtkRoot *root;

  g_return_val_if_fail (RPE_IS_FIGURE_VIEW (self), 1.0);
  width = gtk_widget_get_width (GTK_WIDGET (self));
  height = gtk_widget_get_height (GTK_WIDGET (self));
  if (self->bundle == NULL || width <= 0 || height <= 0)
    return 1.0;
  rpe_figure_default_size (&self->bundle->fig, &wpt, &hpt);
  /* laid out at the widget's size; in an area smaller than the figure needs, scaled down
   * (its proportions kept) but no further than the text allows */
  scale = fmin (1.0, fmin ((double) width / (MIN_SHARE * wpt), (double) height / (MIN_SHARE * hpt)));
  if (self->min_text > 0.0)
    scale = fmax (scale, fmin (1.0, self->min_text / FIGURE_MIN_TEXT));
  root = gtk_widget_get_root (GTK_WIDGET (self));
  if (root != NULL && gtk_widget_has_css_class (GTK_WIDGET (root), "presentation"))
    scale *= PRESENTATION_SCALE;
  return scale > 0.0 ? scale : 1.0;
}

/* The scratch context the layout measures text with (the figures' font options). */
static cairo_t *
scratch_context (void)
{
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cairo_t *cr = cairo_create (surface);

  cairo_surface_destroy (surface);
  rpe_plot_use_figure_fonts (cr);
  return cr;
}

gsize
rpe_figure_view_get_images (RpeFigureView *self,
                            RpePlotRect    images[RPE_FIGURE_MAX_PANELS])
{
  const RpeFigure *fig;
  double scale;
  cairo_t *cr;
  gsize n;

  g_return_val_if_fail (RPE_IS_FIGURE_VIEW (self), 0);
  if (self->bundle == NULL)
    return 0;
  fig = &self->bundle->fig;
  if (fig->kind != RPE_FIGURE_COMPARE || (fig->plots != NULL && fig->n_plots > 0))
    return 0;
  scale = rpe_figure_view_get_scale (self);
  cr = scratch_context ();
  n = rpe_figure_compare_images (cr, fig, gtk_widget_get_width (GTK_WIDGET (self)) / scale,
                                 gtk_widget_get_height (GTK_WIDGET (self)) / scale, images);
  cairo_destroy (cr);
  for (gsize i = 0; i < n; i++)
    {
      images[i].x *= scale;
      images[i].y *= scale;
      images[i].width *= scale;
      images[i].height *= scale;
    }
  return n;
}

gboolean
rpe_figure_view_cell_at (RpeFigureView *self,
                         double         x,
                         double         y,
                         guint         *panel,
                         gsize         *row,
                         gsize         *col)
{
  RpePlotRect images[RPE_FIGURE_MAX_PANELS];
  gsize n;

  g_return_val_if_fail (RPE_IS_FIGURE_VIEW (self), FALSE);
  if (!isfinite (x) || !isfinite (y))
    return FALSE;
  n = rpe_figure_view_get_images (self, images);
  for (gsize i = 0; i < n; i++)
    {
      const RpeHeatmapData *d = &self->bundle->fig.panels[i];
      double u = (x - images[i].x) / images[i].width, v = (y - images[i].y) / images[i].height;

      if (!(u >= 0.0 && u < 1.0 && v >= 0.0 && v < 1.0) || d->rows == 0 || d->cols == 0)
        continue;
      *panel = (guint) i;
      *row = MIN ((gsize) (v * (double) d->rows), d->rows - 1);
      *col = MIN ((gsize) (u * (double) d->cols), d->cols - 1);
      return TRUE;
    }
  return FALSE;
}

gboolean
rpe_figure_view_cell_center (RpeFigureView *self,
                             guint          panel,
                             gsize          row,
                             gsize          col,
                             double        *x,
                             double        *y)
{
  RpePlotRect images[RPE_FIGURE_MAX_PANELS];
  const RpeHeatmapData *d;

  g_return_val_if_fail (RPE_IS_FIGURE_VIEW (self), FALSE);
  if (panel >= rpe_figure_view_get_images (self, images))
    return FALSE;
  d = &self->bundle->fig.panels[panel];
  if (row >= d->rows || col >= d->cols)
    return FALSE;
  *x = images[panel].x + ((double) col + 0.5) * images[panel].width / (double) d->cols;
  *y = images[panel].y + ((double) row + 0.5) * images[panel].height / (double) d->rows;
  return TRUE;
}

static void
rpe_figure_view_snapshot (GtkWidget   *widget,
                          GtkSnapshot *snapshot)
{
  RpeFigureView *self = RPE_FIGURE_VIEW (widget);
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  double scale;
  RpeFigure fig;
  GdkRGBA fg;
  cairo_t *cr;

  if (self->bundle == NULL || width <= 0 || height <= 0)
    return;
  /* the export's figure in the window's colours: the theme's text on the window's background */
  fig = self->bundle->fig;
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (widget), &fg);
  G_GNUC_END_IGNORE_DEPRECATIONS
  fig.foreground[0] = fg.red;
  fig.foreground[1] = fg.green;
  fig.foreground[2] = fg.blue;
  fig.foreground[3] = fg.alpha;
  fig.background[3] = 0.0;
  scale = rpe_figure_view_get_scale (self);
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));
  rpe_plot_use_figure_fonts (cr);
  cairo_scale (cr, scale, scale);
  rpe_figure_render (cr, &fig, (double) width / scale, (double) height / scale);
  cairo_destroy (cr);
}

static void
rpe_figure_view_measure (GtkWidget      *widget,
                         GtkOrientation  orientation,
                         int             for_size,
                         int            *minimum,
                         int            *natural,
                         int            *minimum_baseline,
                         int            *natural_baseline)
{
  *minimum = 120;
  *natural = 300;
}

static void
rpe_figure_view_finalize (GObject *object)
{
  RpeFigureView *self = RPE_FIGURE_VIEW (object);

  g_clear_pointer (&self->bundle, rpe_figure_bundle_unref);
  G_OBJECT_CLASS (rpe_figure_view_parent_class)->finalize (object);
}

static void
rpe_figure_view_class_init (RpeFigureViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->finalize = rpe_figure_view_finalize;
  widget_class->snapshot = rpe_figure_view_snapshot;
  widget_class->measure = rpe_figure_view_measure;
  gtk_widget_class_set_css_name (widget_class, "figure");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
rpe_figure_view_init (RpeFigureView *self)
{
  self->min_text = FIGURE_MIN_TEXT;
  gtk_widget_set_hexpand (GTK_WIDGET (self), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (self), TRUE);
}

GtkWidget *
rpe_figure_view_new (void)
{
  return g_object_new (RPE_TYPE_FIGURE_VIEW, NULL);
}

void
rpe_figure_view_set_figure (RpeFigureView   *self,
                            RpeFigureBundle *bundle)
{
  g_return_if_fail (RPE_IS_FIGURE_VIEW (self));
  if (bundle != NULL)
    rpe_figure_bundle_ref (bundle);
  g_clear_pointer (&self->bundle, rpe_figure_bundle_unref);
  self->bundle = bundle;
  {
    /* what an assistive technology says about the picture: its title */
    const char *title = bundle != NULL ? bundle->fig.title : NULL;
    g_autofree char *plain = NULL;

    if (title != NULL && !pango_parse_markup (title, -1, 0, NULL, &plain, NULL, NULL))
      plain = g_strdup (title);
    gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                    plain != NULL ? plain : "", -1);
  }
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

RpeFigureBundle *
rpe_figure_view_get_figure (RpeFigureView *self)
{
  g_return_val_if_fail (RPE_IS_FIGURE_VIEW (self), NULL);
  return self->bundle;
}

void
rpe_figure_view_set_min_text (RpeFigureView *self,
                              double         pixels)
{
  g_return_if_fail (RPE_IS_FIGURE_VIEW (self));
  self->min_text = isfinite (pixels) && pixels > 0.0 ? pixels : 0.0;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

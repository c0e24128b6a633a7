#include "config.h"

#include <math.h>
#include <string.h>

#include "rpe-ui-test-utils.h"
#include "rpe-ui-wait.h"

gboolean
rpe_test_window_idle (gpointer data)
{
  return !rpe_window_is_busy (RPE_WINDOW (data));
}

gboolean
rpe_test_window_idle_drained (gpointer data)
{
  rpe_test_drain ();
  return !rpe_window_is_busy (RPE_WINDOW (data));
}

void
rpe_test_settle (RpeWindow *window,
                 gboolean   idle_after)
{
  rpe_test_wait_frames (GTK_WIDGET (window), 1);
  rpe_test_iterate_until (rpe_test_window_idle, window);
  rpe_test_wait_frames (GTK_WIDGET (window), 2);
  if (idle_after)
    rpe_test_iterate_until (rpe_test_window_idle, window);
}

GtkWidget *
rpe_test_find_widget (GtkWidget *root,
                      GType      type)
{
  if (type != 0 && g_type_is_a (G_OBJECT_TYPE (root), type))
    return root;
  for (GtkWidget *c = gtk_widget_get_first_child (root); c != NULL; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = rpe_test_find_widget (c, type);

      if (found != NULL)
        return found;
    }
  return NULL;
}

cairo_surface_t *
rpe_test_render_widget (GtkWidget *widget)
{
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  GdkPaintable *paintable = gtk_widget_paintable_new (widget);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  GskRenderNode *node;
  cairo_surface_t *surface;
  cairo_t *cr;

  g_assert_cmpint (width, >, 0);
  g_assert_cmpint (height, >, 0);
  gdk_paintable_snapshot (paintable, snapshot, width, height);
  node = gtk_snapshot_free_to_node (snapshot);
  surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, width, height);
  cr = cairo_create (surface);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  if (node != NULL)
    {
      gsk_render_node_draw (node, cr);
      gsk_render_node_unref (node);
    }
  cairo_destroy (cr);
  g_object_unref (paintable);
  cairo_surface_flush (surface);
  return surface;
}

cairo_surface_t *
rpe_test_render_bundle (RpeFigureBundle *bundle)
{
  double wpt, hpt;
  cairo_surface_t *surface;
  cairo_t *cr;

  rpe_figure_default_size (&bundle->fig, &wpt, &hpt);
  surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, (int) ceil (wpt), (int) ceil (hpt));
  cr = cairo_create (surface);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  g_assert_true (rpe_figure_render (cr, &bundle->fig, wpt, hpt));
  cairo_destroy (cr);
  cairo_surface_flush (surface);
  return surface;
}

gboolean
rpe_test_surfaces_equal (cairo_surface_t *a,
                         cairo_surface_t *b)
{
  int h = cairo_image_surface_get_height (a), w = cairo_image_surface_get_width (a);
  int stride = cairo_image_surface_get_stride (a);

  if (w != cairo_image_surface_get_width (b) || h != cairo_image_surface_get_height (b))
    return FALSE;
  return memcmp (cairo_image_surface_get_data (a), cairo_image_surface_get_data (b), (gsize) stride * h) == 0;
}

void
rpe_test_copy_state (RpeExplorerState *from,
                     RpeExplorerState *to)
{
  g_autofree GParamSpec **props = NULL;
  guint n_props = 0;
  gsize count = 0;
  const float *w;
  g_autoptr (GError) error = NULL;

  g_assert_true (rpe_explorer_state_set_modules (to, rpe_explorer_state_get_params (from, RPE_SPE_SINE),
                                                 rpe_explorer_state_get_source (from, RPE_SPE_SINE),
                                                 rpe_explorer_state_get_params (from, RPE_SPE_CONV),
                                                 rpe_explorer_state_get_source (from, RPE_SPE_CONV), &error));
  g_assert_no_error (error);
  w = rpe_explorer_state_get_fastrpb_weights (from, &count);
  rpe_explorer_state_set_fastrpb_weights (to, w, count);
  props = g_object_class_list_properties (G_OBJECT_GET_CLASS (from), &n_props);
  for (guint i = 0; i < n_props; i++)
    if ((props[i]->flags & G_PARAM_READWRITE) == G_PARAM_READWRITE)
      {
        GValue value = G_VALUE_INIT;

        g_value_init (&value, props[i]->value_type);
        g_object_get_property (G_OBJECT (from), props[i]->name, &value);
        g_object_set_property (G_OBJECT (to), props[i]->name, &value);
        g_value_unset (&value);
      }
}

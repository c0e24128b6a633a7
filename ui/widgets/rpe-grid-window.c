/* rpe-grid-window.c: 2-D convSPE lag image and one query's attention over the grid. */
#include "config.h"

#include <glib/gi18n.h>

#include "rpe-grid-window.h"

struct _RpeGridWindow
{
  AdwWindow         parent_instance;

  RpeExplorerState *state;
  gulong            changed_id;
  RpeJobSlot        slot;
  RpeGridImage     *image;
  GtkWidget        *lag_view;
  GtkWidget        *query_view;
  GtkLabel         *caption;
  GtkAdjustment    *rows_adj;
  GtkAdjustment    *cols_adj;
};

G_DEFINE_FINAL_TYPE (RpeGridWindow, rpe_grid_window, ADW_TYPE_WINDOW)

typedef struct
{
  GWeakRef self;
} ViewRef;

static void
grid_show (RpeGridWindow *self,
           RpeGridImage  *img)
{
  const char *source = NULL;
  g_autofree char *lag_title = NULL;
  g_autofree char *query_title = NULL;
  g_autofree char *caption = NULL;
  g_autoptr (GBytes) lags = NULL;
  g_autoptr (GBytes) att = NULL;
  gsize qi = img->query / img->n2, qj = img->query % img->n2;

  g_clear_pointer (&self->image, rpe_grid_image_unref);
  self->image = rpe_grid_image_ref (img);
  lags = g_bytes_new (img->lags, (2 * img->n1 - 1) * (2 * img->n2 - 1) * sizeof (float));
  att = g_bytes_new (img->attention, img->n1 * img->n2 * sizeof (float));
  lag_title = g_strdup_printf (img->gated ? _("Template (gated) of head %zu, feature %zu at lag (Δi, Δj), centre (0, 0)")
                                           : _("Template of head %zu, feature %zu at lag (Δi, Δj), centre (0, 0)"),
                               img->head, img->feature);
  query_title = g_strdup_printf (_("Attention of query (%zu, %zu) over the %zu × %zu grid"), qi, qj, img->n1, img->n2);
  {
    g_autofree char *x = g_strdup_printf (_("column lag Δj = tick − %zu"), img->n2 - 1);
    g_autofree char *y = g_strdup_printf (_("row lag Δi = tick − %zu"), img->n1 - 1);

    rpe_heatmap_view_set_axis_labels (RPE_HEATMAP_VIEW (self->lag_view), x, y);
    rpe_heatmap_view_set_axis_labels (RPE_HEATMAP_VIEW (self->query_view), _("key column j′"), _("key row i′"));
  }
  rpe_heatmap_view_set_title (RPE_HEATMAP_VIEW (self->lag_view), lag_title);
  rpe_heatmap_view_set_data (RPE_HEATMAP_VIEW (self->lag_view), lags, 2 * img->n1 - 1, 2 * img->n2 - 1);
  rpe_heatmap_view_set_title (RPE_HEATMAP_VIEW (self->query_view), query_title);
  rpe_heatmap_view_set_data (RPE_HEATMAP_VIEW (self->query_view), att, img->n1, img->n2);
  rpe_explorer_state_get_conv2d (self->state, &source);
  {
    /* markup (subscripts); the source names a file: escaped */
    g_autofree char *source_text = g_markup_escape_text (source != NULL ? source : "2-D convSPE", -1);

    caption = g_strdup_printf (_("%s. Exact attention softmax(Σ<sub>d</sub> q k P̃<sub>d</sub> / √D) with the "
                                 "sidebar's content; click a position of the grid to make it the query."),
                               source_text);
  }
  gtk_label_set_markup (self->caption, caption);
}

static void
grid_done (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  ViewRef *ref = user_data;
  g_autoptr (RpeGridWindow) self = g_weak_ref_get (&ref->self);
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeGridImage) img = rpe_compute_grid_finish (result, &error);

  g_weak_ref_clear (&ref->self);
  g_free (ref);
  if (self == NULL || !rpe_job_slot_done (&self->slot, result))
    return;
  if (img != NULL)
    grid_show (self, img);
  else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    gtk_label_set_text (self->caption, error->message);
}

static void
grid_start (gpointer      owner,
            GCancellable *cancellable)
{
  RpeGridWindow *self = owner;
  g_autoptr (RpeExplorerSnapshot) s = rpe_explorer_state_snapshot (self->state);
  ViewRef *ref = g_new0 (ViewRef, 1);

  g_weak_ref_init (&ref->self, self);
  rpe_compute_grid_async (s, cancellable, grid_done, ref);
}

/* The state's colour scale on both maps (the SPE paper's on the attention map only). */
static void
apply_color_scale (RpeGridWindow *self)
{
  RpeHeatmapData probe;

  rpe_heatmap_data_init (&probe);
  rpe_explorer_state_apply_color_scale (self->state, &probe, FALSE);
  rpe_heatmap_view_set_transform (RPE_HEATMAP_VIEW (self->lag_view), probe.transform, probe.transform_param);
  rpe_explorer_state_apply_color_scale (self->state, &probe, TRUE);
  rpe_heatmap_view_set_transform (RPE_HEATMAP_VIEW (self->query_view), probe.transform, probe.transform_param);
}

static void
state_changed (RpeExplorerState  *state,
               RpeExplorerChange  what,
               RpeGridWindow     *self)
{
  if (what & (RPE_EXPLORER_CHANGE_GRID | RPE_EXPLORER_CHANGE_HEAD | RPE_EXPLORER_CHANGE_FEATURE
              | RPE_EXPLORER_CHANGE_GATED | RPE_EXPLORER_CHANGE_CONTENT | RPE_EXPLORER_CHANGE_SEED))
    rpe_job_slot_request (&self->slot);
  if (what & RPE_EXPLORER_CHANGE_COLORMAP)
    {
      const RpeColormap *cmap = rpe_colormap_lookup (rpe_explorer_state_get_colormap (state));

      rpe_heatmap_view_set_colormap (RPE_HEATMAP_VIEW (self->lag_view), cmap);
      rpe_heatmap_view_set_colormap (RPE_HEATMAP_VIEW (self->query_view), cmap);
    }  if (what & RPE_EXPLORER_CHANGE_COLOR_SCALE)
    apply_color_scale (self);
}

static void
query_pressed (GtkGestureClick *gesture,
               int              n_press,
               double           x,
               double           y,
               RpeGridWindow   *self)
{
  gsize row, col;

  if (self->image == NULL
      || !rpe_heatmap_view_cell_at (RPE_HEATMAP_VIEW (self->query_view), x, y, &row, &col))
    return;
  g_object_set (self->state, "grid-query", (guint) (row * self->image->n2 + col), NULL);
}

static GtkWidget *
spin_new (RpeGridWindow  *self,
          const char     *label,
          const char     *property,
          GtkAdjustment **adj_out,
          GtkWidget      *box)
{
  GtkAdjustment *adj = gtk_adjustment_new (12, 1, RPE_EXPLORER_MAX_GRID, 1, 4, 0);
  GtkWidget *spin = gtk_spin_button_new (adj, 1, 0);

  gtk_box_append (GTK_BOX (box), gtk_label_new (label));
  gtk_spin_button_set_numeric (GTK_SPIN_BUTTON (spin), TRUE);
  gtk_widget_set_tooltip_text (spin, _("Grid size (positions are row-major: p = i N2 + j)"));
  gtk_box_append (GTK_BOX (box), spin);
  g_object_bind_property (self->state, property, adj, "value", G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  *adj_out = adj;
  return spin;
}

static void
rpe_grid_window_dispose (GObject *object)
{
  RpeGridWindow *self = RPE_GRID_WINDOW (object);

  rpe_job_slot_clear (&self->slot);
  if (self->state != NULL)
    g_clear_signal_handler (&self->changed_id, self->state);
  g_clear_object (&self->state);
  g_clear_pointer (&self->image, rpe_grid_image_unref);
  G_OBJECT_CLASS (rpe_grid_window_parent_class)->dispose (object);
}

static void
rpe_grid_window_class_init (RpeGridWindowClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = rpe_grid_window_dispose;
}

static void
rpe_grid_window_init (RpeGridWindow *self)
{
  rpe_job_slot_init (&self->slot, grid_start, self);
}

RpeGridWindow *
rpe_grid_window_new (GtkWindow        *parent,
                     RpeExplorerState *state)
{
  RpeGridWindow *self = g_object_new (RPE_TYPE_GRID_WINDOW, "title", "2-D ConvSPE", "default-width", 980,
                                      "default-height", 560, "transient-for", parent, NULL);
  GtkWidget *outer = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 8);
  GtkWidget *controls = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 8);
  GtkWidget *maps = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  GtkGesture *click;
  const RpeColormap *cmap;

  self->state = g_object_ref (state);
  gtk_box_append (GTK_BOX (outer), adw_header_bar_new ());
  gtk_widget_set_margin_start (box, 12);
  gtk_widget_set_margin_end (box, 12);
  gtk_widget_set_margin_top (box, 8);
  gtk_widget_set_margin_bottom (box, 12);
  gtk_box_append (GTK_BOX (outer), box);

  spin_new (self, _("Grid N1"), "grid-rows", &self->rows_adj, controls);
  spin_new (self, "× N2", "grid-cols", &self->cols_adj, controls);
  gtk_box_append (GTK_BOX (box), controls);

  self->lag_view = rpe_heatmap_view_new ();
  self->query_view = rpe_heatmap_view_new ();
  cmap = rpe_colormap_lookup (rpe_explorer_state_get_colormap (state));
  for (int i = 0; i < 2; i++)
    {
      GtkWidget *view = i == 0 ? self->lag_view : self->query_view;

      gtk_widget_set_hexpand (view, TRUE);
      gtk_widget_set_vexpand (view, TRUE);
      gtk_widget_set_size_request (view, 300, 300);
      rpe_heatmap_view_set_colormap (RPE_HEATMAP_VIEW (view), cmap);
      gtk_box_append (GTK_BOX (maps), view);
    }
  apply_color_scale (self);
  gtk_widget_set_tooltip_text (self->query_view, _("Click a position to make it the query"));
  click = gtk_gesture_click_new ();
  g_signal_connect (click, "pressed", G_CALLBACK (query_pressed), self);
  gtk_widget_add_controller (self->query_view, GTK_EVENT_CONTROLLER (click));
  gtk_box_append (GTK_BOX (box), maps);

  self->caption = GTK_LABEL (gtk_label_new (""));
  gtk_label_set_wrap (self->caption, TRUE);
  gtk_label_set_xalign (self->caption, 0);
  gtk_widget_add_css_class (GTK_WIDGET (self->caption), "dim-label");
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (self->caption));
  adw_window_set_content (ADW_WINDOW (self), outer);

  self->changed_id = g_signal_connect (state, "changed", G_CALLBACK (state_changed), self);
  rpe_job_slot_request (&self->slot);
  return self;
}

RpeGridImage *
rpe_grid_window_get_image (RpeGridWindow *self)
{
  g_return_val_if_fail (RPE_IS_GRID_WINDOW (self), NULL);
  return self->image;
}

gboolean
rpe_grid_window_is_busy (RpeGridWindow *self)
{
  g_return_val_if_fail (RPE_IS_GRID_WINDOW (self), FALSE);
  return rpe_job_slot_busy (&self->slot);
}

RpeHeatmapView *
rpe_grid_window_get_lag_view (RpeGridWindow *self)
{
  g_return_val_if_fail (RPE_IS_GRID_WINDOW (self), NULL);
  return RPE_HEATMAP_VIEW (self->lag_view);
}

RpeHeatmapView *
rpe_grid_window_get_query_view (RpeGridWindow *self)
{
  g_return_val_if_fail (RPE_IS_GRID_WINDOW (self), NULL);
  return RPE_HEATMAP_VIEW (self->query_view);
}

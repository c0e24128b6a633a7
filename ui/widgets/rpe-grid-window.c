/* rpe-grid-window.c: 2-D convSPE lag image and one query's attention over the grid: a window
 * holding one figure page (RpeGridPage: its request, its two maps and its grid controls). */
#include "config.h"

#include <glib/gi18n.h>

#include "rpe-figure-page.h"
#include "rpe-grid-window.h"

/* ------------------------------------------------------------ the page */

#define RPE_TYPE_GRID_PAGE (rpe_grid_page_get_type ())
G_DECLARE_FINAL_TYPE (RpeGridPage, rpe_grid_page, RPE, GRID_PAGE, RpeFigurePage)

struct _RpeGridPage
{
  RpeFigurePage     parent_instance;

  GtkWidget        *lag_view;
  GtkWidget        *query_view;
};

G_DEFINE_FINAL_TYPE (RpeGridPage, rpe_grid_page, RPE_TYPE_FIGURE_PAGE)

#define GRID_CHANGES (RPE_EXPLORER_CHANGE_GRID | RPE_EXPLORER_CHANGE_HEAD | RPE_EXPLORER_CHANGE_FEATURE   \
                      | RPE_EXPLORER_CHANGE_GATED | RPE_EXPLORER_CHANGE_CONTENT | RPE_EXPLORER_CHANGE_SEED)

static void
grid_show (RpeFigurePage *page,
           gpointer       result)
{
  RpeGridPage *self = RPE_GRID_PAGE (page);
  RpeGridImage *img = result;
  const char *source = NULL;
  g_autofree char *lag_title = NULL;
  g_autofree char *query_title = NULL;
  g_autofree char *caption = NULL;
  g_autoptr (GBytes) lags = NULL;
  g_autoptr (GBytes) att = NULL;
  gsize qi = img->query / img->n2, qj = img->query % img->n2;
  RpeFigureLook look;

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
  /* the state's colours: its scale on both maps (the SPE paper's on the attention map only) */
  rpe_figure_page_get_look (page, FALSE, &look);
  rpe_heatmap_view_set_colormap (RPE_HEATMAP_VIEW (self->lag_view), look.colormap);
  rpe_heatmap_view_set_transform (RPE_HEATMAP_VIEW (self->lag_view), look.transform, look.param);
  rpe_figure_page_get_look (page, TRUE, &look);
  rpe_heatmap_view_set_colormap (RPE_HEATMAP_VIEW (self->query_view), look.colormap);
  rpe_heatmap_view_set_transform (RPE_HEATMAP_VIEW (self->query_view), look.transform, look.param);
  rpe_heatmap_view_set_title (RPE_HEATMAP_VIEW (self->lag_view), lag_title);
  rpe_heatmap_view_set_data (RPE_HEATMAP_VIEW (self->lag_view), lags, 2 * img->n1 - 1, 2 * img->n2 - 1);
  rpe_heatmap_view_set_title (RPE_HEATMAP_VIEW (self->query_view), query_title);
  rpe_heatmap_view_set_data (RPE_HEATMAP_VIEW (self->query_view), att, img->n1, img->n2);
  rpe_explorer_state_get_conv2d (rpe_figure_page_get_state (page), &source);
  {
    /* markup (subscripts); the source names a file: escaped */
    g_autofree char *source_text = g_markup_escape_text (source != NULL ? source : "2-D convSPE", -1);

    caption = g_strdup_printf (_("%s. Exact attention softmax(Σ<sub>d</sub> q k P̃<sub>d</sub> / √D) with the "
                                 "sidebar's content; click a position of the grid to make it the query."),
                               source_text);
  }
  rpe_figure_page_set_caption_markup (page, caption);
}

static gboolean
grid_start (RpeFigurePage       *page,
            RpeExplorerSnapshot *snapshot,
            gsize                n_cap,
            GCancellable        *cancellable,
            GAsyncReadyCallback  callback,
            gpointer             user_data,
            char               **why)
{
  rpe_compute_grid_async (snapshot, cancellable, callback, user_data);
  return TRUE;
}

static gpointer
grid_finish (RpeFigurePage *page,
             GAsyncResult  *result,
             GError       **error)
{
  return rpe_compute_grid_finish (result, error);
}

static void
query_pressed (GtkGestureClick *gesture,
               int              n_press,
               double           x,
               double           y,
               RpeGridPage     *self)
{
  RpeGridImage *img = rpe_figure_page_get_result (RPE_FIGURE_PAGE (self));
  gsize row, col;

  if (img == NULL || !rpe_heatmap_view_cell_at (RPE_HEATMAP_VIEW (self->query_view), x, y, &row, &col))
    return;
  g_object_set (rpe_figure_page_get_state (RPE_FIGURE_PAGE (self)), "grid-query", (guint) (row * img->n2 + col),
                NULL);
}

static void
rpe_grid_page_class_init (RpeGridPageClass *klass)
{
  RpeFigurePageClass *page_class = RPE_FIGURE_PAGE_CLASS (klass);

  page_class->job_changes = GRID_CHANGES;
  page_class->result_free = (GDestroyNotify) rpe_grid_image_unref;
  page_class->what = N_("the 2-D templates");
  page_class->start_job = grid_start;
  page_class->finish_job = grid_finish;
  page_class->show_result = grid_show;
}

static void
rpe_grid_page_init (RpeGridPage *self)
{
  GtkWidget *maps = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  GtkGesture *click;

  self->lag_view = rpe_heatmap_view_new ();
  self->query_view = rpe_heatmap_view_new ();
  for (int i = 0; i < 2; i++)
    {
      GtkWidget *view = i == 0 ? self->lag_view : self->query_view;

      gtk_widget_set_hexpand (view, TRUE);
      gtk_widget_set_vexpand (view, TRUE);
      gtk_widget_set_size_request (view, 300, 300);
      gtk_box_append (GTK_BOX (maps), view);
    }
  gtk_widget_set_tooltip_text (self->query_view, _("Click a position to make it the query"));
  click = gtk_gesture_click_new ();
  g_signal_connect (click, "pressed", G_CALLBACK (query_pressed), self);
  gtk_widget_add_controller (self->query_view, GTK_EVENT_CONTROLLER (click));
  rpe_figure_page_set_content (RPE_FIGURE_PAGE (self), maps);
}

/* ---------------------------------------------------------- the window */

struct _RpeGridWindow
{
  AdwWindow         parent_instance;

  RpeGridPage      *page;
};

G_DEFINE_FINAL_TYPE (RpeGridWindow, rpe_grid_window, ADW_TYPE_WINDOW)

static GtkWidget *
spin_new (RpeExplorerState *state,
          const char       *label,
          const char       *property,
          GtkWidget        *box)
{
  GtkAdjustment *adj = gtk_adjustment_new (12, 1, RPE_EXPLORER_MAX_GRID, 1, 4, 0);
  GtkWidget *spin = gtk_spin_button_new (adj, 1, 0);
  GtkWidget *text = gtk_label_new_with_mnemonic (label);

  gtk_label_set_mnemonic_widget (GTK_LABEL (text), spin);
  gtk_box_append (GTK_BOX (box), text);
  gtk_spin_button_set_numeric (GTK_SPIN_BUTTON (spin), TRUE);
  gtk_widget_set_tooltip_text (spin, _("Grid size (positions are row-major: p = i N2 + j)"));
  gtk_box_append (GTK_BOX (box), spin);
  g_object_bind_property (state, property, adj, "value", G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  return spin;
}

static void
rpe_grid_window_class_init (RpeGridWindowClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  /* Escape closes it, as a dialog beside the explorer (its job is cancelled with it) */
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "window.close", NULL);
}

static void
rpe_grid_window_init (RpeGridWindow *self)
{
}

RpeGridWindow *
rpe_grid_window_new (GtkWindow        *parent,
                     RpeExplorerState *state)
{
  RpeGridWindow *self = g_object_new (RPE_TYPE_GRID_WINDOW, "title", _("2-D ConvSPE"), "default-width", 980,
                                      "default-height", 620, "transient-for", parent, NULL);
  GtkWidget *outer = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  GtkWidget *controls = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 8);

  gtk_box_append (GTK_BOX (outer), adw_header_bar_new ());
  self->page = g_object_new (RPE_TYPE_GRID_PAGE, NULL);
  gtk_widget_set_vexpand (GTK_WIDGET (self->page), TRUE);
  spin_new (state, _("Grid N_1"), "grid-rows", controls);
  spin_new (state, "× N_2", "grid-cols", controls);
  rpe_figure_page_add_control (RPE_FIGURE_PAGE (self->page), controls);
  rpe_figure_page_set_state (RPE_FIGURE_PAGE (self->page), state);
  gtk_box_append (GTK_BOX (outer), GTK_WIDGET (self->page));
  adw_window_set_content (ADW_WINDOW (self), outer);
  return self;
}

RpeGridImage *
rpe_grid_window_get_image (RpeGridWindow *self)
{
  g_return_val_if_fail (RPE_IS_GRID_WINDOW (self), NULL);
  return rpe_figure_page_get_result (RPE_FIGURE_PAGE (self->page));
}

gboolean
rpe_grid_window_is_busy (RpeGridWindow *self)
{
  g_return_val_if_fail (RPE_IS_GRID_WINDOW (self), FALSE);
  return rpe_figure_page_is_busy (RPE_FIGURE_PAGE (self->page));
}

RpeHeatmapView *
rpe_grid_window_get_lag_view (RpeGridWindow *self)
{
  g_return_val_if_fail (RPE_IS_GRID_WINDOW (self), NULL);
  return RPE_HEATMAP_VIEW (self->page->lag_view);
}

RpeHeatmapView *
rpe_grid_window_get_query_view (RpeGridWindow *self)
{
  g_return_val_if_fail (RPE_IS_GRID_WINDOW (self), NULL);
  return RPE_HEATMAP_VIEW (self->page->query_view);
}

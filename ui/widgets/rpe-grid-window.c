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

/* The words and colours of the two maps, shared by the window and its export. */
typedef struct
{
  char          *lag_title;
  char          *query_title;
  char          *lag_x, *lag_y;
  RpeFigureLook  lag_look, query_look;
} GridLabels;

static void
grid_labels (RpeFigurePage      *page,
             const RpeGridImage *img,
             GridLabels         *l)
{
  gsize qi = img->query / img->n2, qj = img->query % img->n2;

  l->lag_title = g_strdup_printf (img->gated ? _("Template (gated) of head %zu, feature %zu at lag (Δi, Δj)")
                                             : _("Template of head %zu, feature %zu at lag (Δi, Δj)"),
                                  img->head, img->feature);
  l->query_title = g_strdup_printf (_("Attention of query (%zu, %zu) over the %zu × %zu grid"), qi, qj, img->n1,
                                    img->n2);
  /* the lag axes are numbered -(N - 1) .. N - 1 through the maps' origins */
  l->lag_x = g_strdup (_("column lag Δj"));
  l->lag_y = g_strdup (_("row lag Δi"));
  /* the state's colours: its scale on both maps (the SPE paper's on the attention map only) */
  rpe_figure_page_get_look (page, FALSE, &l->lag_look);
  rpe_figure_page_get_look (page, TRUE, &l->query_look);
}

static void
grid_labels_clear (GridLabels *l)
{
  g_free (l->lag_title);
  g_free (l->query_title);
  g_free (l->lag_x);
  g_free (l->lag_y);
}

static void
grid_show (RpeFigurePage *page,
           gpointer       result)
{
  RpeGridPage *self = RPE_GRID_PAGE (page);
  RpeGridImage *img = result;
  RpeHeatmapView *lag_view = RPE_HEATMAP_VIEW (self->lag_view), *query_view = RPE_HEATMAP_VIEW (self->query_view);
  const char *source = NULL;
  g_autofree char *caption = NULL;
  g_autoptr (GBytes) lags = NULL;
  g_autoptr (GBytes) att = NULL;
  GridLabels l;

  lags = g_bytes_new (img->lags, (2 * img->n1 - 1) * (2 * img->n2 - 1) * sizeof (float));
  att = g_bytes_new (img->attention, img->n1 * img->n2 * sizeof (float));
  grid_labels (page, img, &l);
  rpe_heatmap_view_set_axis_labels (lag_view, l.lag_x, l.lag_y);
  rpe_heatmap_view_set_origin (lag_view, -(gssize) (img->n1 - 1), -(gssize) (img->n2 - 1));
  rpe_heatmap_view_set_axis_labels (query_view, _("key column j′"), _("key row i′"));
  rpe_heatmap_view_set_colormap (lag_view, l.lag_look.colormap);
  rpe_heatmap_view_set_transform (lag_view, l.lag_look.transform, l.lag_look.param);
  rpe_heatmap_view_set_colormap (query_view, l.query_look.colormap);
  rpe_heatmap_view_set_transform (query_view, l.query_look.transform, l.query_look.param);
  rpe_heatmap_view_set_title (lag_view, l.lag_title);
  rpe_heatmap_view_set_data (lag_view, lags, 2 * img->n1 - 1, 2 * img->n2 - 1);
  rpe_heatmap_view_set_title (query_view, l.query_title);
  rpe_heatmap_view_set_data (query_view, att, img->n1, img->n2);
  grid_labels_clear (&l);
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

/* The read-out names the lags and grid positions (the maps' own axes). */
static char *
grid_describe_point (RpeFigurePage *page,
                     GtkWidget     *widget,
                     double         x,
                     double         y)
{
  RpeGridPage *self = RPE_GRID_PAGE (page);
  GtkWidget *map = widget;
  gsize rows = 0, cols = 0, row, col;
  gssize r0 = 0, c0 = 0;
  const float *values;

  while (map != NULL && map != self->lag_view && map != self->query_view)
    map = gtk_widget_get_parent (map);
  if (map == NULL || (map != widget && !gtk_widget_translate_coordinates (widget, map, x, y, &x, &y)))
    return NULL;
  values = rpe_heatmap_view_get_data (RPE_HEATMAP_VIEW (map), &rows, &cols);
  if (values == NULL || !rpe_heatmap_view_cell_at (RPE_HEATMAP_VIEW (map), x, y, &row, &col))
    return NULL;
  rpe_heatmap_view_get_origin (RPE_HEATMAP_VIEW (map), &r0, &c0);
  if (map == self->lag_view)
    return g_strdup_printf (_("lag Δi = %zd, Δj = %zd: %.6g"), (gssize) row + r0, (gssize) col + c0,
                            values[row * cols + col]);
  return g_strdup_printf (_("key (i′, j′) = (%zu, %zu): %.6g"), row, col, values[row * cols + col]);
}

/* The two maps side by side as one figure (the Export dialog's), numbered as the window. */
static RpeFigureBundle *
grid_build_figure (RpeFigurePage *page)
{
  RpeGridImage *img = rpe_figure_page_get_result (page);
  RpeFigureBundle *b;
  GridLabels l;

  if (img == NULL)
    return NULL;
  grid_labels (page, img, &l);
  b = rpe_figure_bundle_new (RPE_FIGURE_COMPARE);
  rpe_figure_bundle_keep (b, rpe_grid_image_ref (img), (GDestroyNotify) rpe_grid_image_unref);
  b->fig.n_panels = 2;
  b->fig.share_scale = FALSE;
  for (guint i = 0; i < 2; i++)
    {
      RpeHeatmapData *d = &b->fig.panels[i];
      const RpeFigureLook *look = i == 0 ? &l.lag_look : &l.query_look;

      rpe_heatmap_data_init (d);
      d->equal_aspect = true;
      d->colormap = look->colormap;
      d->transform = look->transform;
      d->transform_param = look->param;
    }
  b->fig.panels[0].values = img->lags;
  b->fig.panels[0].rows = 2 * img->n1 - 1;
  b->fig.panels[0].cols = 2 * img->n2 - 1;
  b->fig.panels[0].row_origin = -(ptrdiff_t) (img->n1 - 1);
  b->fig.panels[0].col_origin = -(ptrdiff_t) (img->n2 - 1);
  b->fig.panels[0].title = rpe_figure_bundle_strdup (b, l.lag_title);
  b->fig.panels[0].x_label = rpe_figure_bundle_strdup (b, l.lag_x);
  b->fig.panels[0].y_label = rpe_figure_bundle_strdup (b, l.lag_y);
  b->fig.panels[1].values = img->attention;
  b->fig.panels[1].rows = img->n1;
  b->fig.panels[1].cols = img->n2;
  b->fig.panels[1].title = rpe_figure_bundle_strdup (b, l.query_title);
  b->fig.panels[1].x_label = rpe_figure_bundle_strdup (b, _("key column j′"));
  b->fig.panels[1].y_label = rpe_figure_bundle_strdup (b, _("key row i′"));
  b->fig.panels[1].colorbar_label = rpe_figure_bundle_strdup (b, _("attention weight"));
  /* the lag map is not attention: the Export dialog's attention scale would not fit it */
  b->has_attention = FALSE;
  b->default_name = g_strdup_printf ("conv2d-h%zu-d%zu", img->head, img->feature);
  grid_labels_clear (&l);
  return b;
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
  page_class->describe_point = grid_describe_point;
  page_class->build_figure = grid_build_figure;
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

/* Export: the explorer window keeps the Export dialog, its folder and its toasts; it exports
 * this window's figure (win.export-grid). */
static void
action_export (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  GtkWindow *parent = gtk_window_get_transient_for (GTK_WINDOW (widget));

  if (parent != NULL)
    gtk_widget_activate_action (GTK_WIDGET (parent), "win.export-grid", NULL);
}

static void
figure_changed (RpeFigurePage *page,
                RpeGridWindow *self)
{
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "grid.export", rpe_figure_page_get_result (page) != NULL);
}

static void
rpe_grid_window_class_init (RpeGridWindowClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  gtk_widget_class_install_action (widget_class, "grid.export", NULL, action_export);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_e, GDK_CONTROL_MASK, "grid.export", NULL);
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
  GtkWidget *header = adw_header_bar_new ();
  GtkWidget *export = gtk_button_new_from_icon_name ("document-save-as-symbolic");

  gtk_actionable_set_action_name (GTK_ACTIONABLE (export), "grid.export");
  gtk_widget_set_tooltip_text (export, _("Export the two maps as a figure (Ctrl+E)"));
  adw_header_bar_pack_end (ADW_HEADER_BAR (header), export);
  gtk_box_append (GTK_BOX (outer), header);
  self->page = g_object_new (RPE_TYPE_GRID_PAGE, NULL);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "grid.export", FALSE);
  g_signal_connect_object (self->page, "figure-changed", G_CALLBACK (figure_changed), self, 0);
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

RpeFigurePage *
rpe_grid_window_get_page (RpeGridWindow *self)
{
  g_return_val_if_fail (RPE_IS_GRID_WINDOW (self), NULL);
  return RPE_FIGURE_PAGE (self->page);
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

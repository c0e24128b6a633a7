/* rpe-overview-view.c: every layer and head at a glance. */
#include "config.h"

#include <glib/gi18n.h>

#include "rpe-overview-view.h"

#include <math.h>

#include "rpe-compare-render.h"

#define TEMPLATE_N_CAP 512
#define ATTENTION_SIDE 256

struct _RpeOverviewView
{
  GtkBox             parent_instance;

  RpeExplorerState  *state;
  char              *checkpoint;
  RpeJobSlot         slot;
  RpeOverview       *result;      /* being filled, or done */
  gboolean           complete;
  gboolean           dirty;
  guint64            serial;

  GtkWidget         *area;
  GtkWidget         *what;
  GtkWidget         *status;
  GtkWidget         *progress;
  GtkWidget         *cancel;
};

G_DEFINE_FINAL_TYPE (RpeOverviewView, rpe_overview_view, GTK_TYPE_BOX)

enum { FIGURE_CHANGED, CELL_ACTIVATED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void
set_status (RpeOverviewView *self,
            const char      *text)
{
  gtk_label_set_text (GTK_LABEL (self->status), text != NULL ? text : "");
}

static void
show_progress (RpeOverviewView *self)
{
  RpeOverview *ov = self->result;
  gsize total = ov != NULL ? ov->n_layers * ov->n_heads : 0;
  g_autofree char *layers = NULL;
  g_autofree char *heads = NULL;
  g_autofree char *text = NULL;

  if (ov == NULL)
    return;
  gtk_progress_bar_set_fraction (GTK_PROGRESS_BAR (self->progress), total > 0 ? (double) ov->n_done / total : 0.0);
  layers = g_strdup_printf (ngettext ("%zu layer", "%zu layers", ov->n_layers), ov->n_layers);
  heads = g_strdup_printf (ngettext ("%zu head", "%zu heads", ov->n_heads), ov->n_heads);
  /* Translators: "Templates — 12 of 48 cells (4 layers × 12 heads); click a cell to open it" */
  text = g_strdup_printf (ngettext ("%s — %zu of %zu cell (%s × %s)%s", "%s — %zu of %zu cells (%s × %s)%s", total),
                          ov->caption, ov->n_done, total, layers, heads,
                          self->complete ? _("; click a cell to open it") : "");
  set_status (self, text);
}

static void
cell_done (RpeOverview *overview,
           gsize        index,
           gpointer     user_data)
{
  RpeOverviewView *self = user_data;

  if (overview->serial != self->serial)
    return;
  if (self->result != overview)
    {
      g_clear_pointer (&self->result, rpe_overview_unref);
      self->result = rpe_overview_ref (overview);
      self->complete = FALSE;
    }
  show_progress (self);
  gtk_widget_queue_draw (self->area);
}

static void
overview_done (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  GWeakRef *ref = user_data;
  g_autoptr (RpeOverviewView) self = g_weak_ref_get (ref);
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeOverview) ov = rpe_overview_compute_finish (result, &error);

  g_weak_ref_clear (ref);
  g_free (ref);
  if (self == NULL || !rpe_job_slot_done (&self->slot, result))
    return;
  gtk_widget_set_visible (self->progress, FALSE);
  gtk_widget_set_visible (self->cancel, FALSE);
  if (ov == NULL)
    {
      g_autofree char *text = g_strdup_printf (_("Cannot show the overview: %s"), error->message);

      set_status (self, text);
      return;
    }
  g_clear_pointer (&self->result, rpe_overview_unref);
  self->result = g_steal_pointer (&ov);
  self->complete = TRUE;
  show_progress (self);
  gtk_widget_queue_draw (self->area);
  g_signal_emit (self, signals[FIGURE_CHANGED], 0);
}

static void
job_start (gpointer      owner,
           GCancellable *cancellable)
{
  RpeOverviewView *self = owner;
  g_autoptr (RpeExplorerSnapshot) snap = rpe_explorer_state_snapshot (self->state);
  RpeCompareWhat what = gtk_drop_down_get_selected (GTK_DROP_DOWN (self->what));
  RpeCompareSide base;
  GWeakRef *ref;

  if (!snap->have_spe)
    {
      rpe_job_slot_cancel (&self->slot);
      return;
    }
  self->dirty = FALSE;
  self->serial++;
  rpe_compare_side_init (&base, snap);
  base.checkpoint = g_strdup (self->checkpoint);
  gtk_progress_bar_set_fraction (GTK_PROGRESS_BAR (self->progress), 0.0);
  gtk_widget_set_visible (self->progress, TRUE);
  gtk_widget_set_visible (self->cancel, TRUE);
  set_status (self, _("Computing every layer and head…"));
  ref = g_new0 (GWeakRef, 1);
  g_weak_ref_init (ref, self);
  rpe_overview_compute_async (&base, what, TEMPLATE_N_CAP, ATTENTION_SIDE, self->serial, cell_done, self,
                              cancellable, overview_done, ref);
  rpe_compare_side_clear (&base);
}

static void
state_changed (RpeExplorerState  *state,
               RpeExplorerChange  what,
               RpeOverviewView   *self)
{
  if (what == RPE_EXPLORER_CHANGE_COMPARE || what == RPE_EXPLORER_CHANGE_HEAD)
    return;
  if ((what & ~RPE_EXPLORER_CHANGE_LOOK) == 0)
    {
      gtk_widget_queue_draw (self->area);
      return;
    }
  self->dirty = TRUE;
  if (gtk_widget_get_mapped (GTK_WIDGET (self)))
    rpe_job_slot_request (&self->slot);
}

static void
on_map (GtkWidget       *widget,
        RpeOverviewView *self)
{
  if (self->dirty || (self->result == NULL && !rpe_job_slot_busy (&self->slot)))
    rpe_job_slot_request (&self->slot);
}

/* The grid figure of the cells done; cells and titles for the caller to free. */
static gboolean
fill_figure (RpeOverviewView  *self,
             RpeFigure        *fig,
             RpeHeatmapData  **cells,
             char           ***titles,
             gboolean          with_title)
{
  RpeOverview *ov = self->result;
  RpeOverviewFigureData fd = { 0 };
  g_autofree char *cmap = NULL;

  if (ov == NULL || ov->values == NULL)
    return FALSE;
  g_object_get (self->state, "colormap", &cmap, NULL);
  fd.values = ov->values;
  fd.done = ov->done;
  fd.n_layers = ov->n_layers;
  fd.n_heads = ov->n_heads;
  fd.layers = ov->layers;
  fd.rows = ov->rows;
  fd.cols = ov->cols;
  fd.n = ov->n;
  fd.title = with_title ? ov->caption : NULL;
  fd.colormap = cmap != NULL ? rpe_colormap_lookup (cmap) : NULL;
  if (fd.colormap != NULL && rpe_colormap_is_diverging (fd.colormap) && ov->what == RPE_COMPARE_ATTENTION)
    fd.colormap = NULL;
  if (ov->what == RPE_COMPARE_TEMPLATES)
    fd.colormap = NULL;   /* signed templates: the diverging map, as the Templates view */
  fd.attention = ov->what == RPE_COMPARE_ATTENTION;
  {
    /* the sidebar's colour scale on every cell */
    RpeHeatmapData probe;

    rpe_heatmap_data_init (&probe);
    rpe_explorer_state_apply_color_scale (self->state, &probe, fd.attention);
    fd.transform = probe.transform;
    fd.transform_param = probe.transform_param;
  }
  rpe_overview_figure_fill (fig, &fd, cells, titles);
  return TRUE;
}

static void
draw_area (GtkDrawingArea *area,
           cairo_t        *cr,
           int             width,
           int             height,
           gpointer        user_data)
{
  RpeOverviewView *self = user_data;
  RpeFigure fig;
  g_autofree RpeHeatmapData *cells = NULL;
  g_auto (GStrv) titles = NULL;

  if (!fill_figure (self, &fig, &cells, &titles, FALSE))
    return;
  rpe_plot_use_figure_fonts (cr);
  rpe_plot_render_heatmap_grid (cr, &fig.grid, width, height);
}

static void
clicked (GtkGestureClick *gesture,
         int              n_press,
         double           x,
         double           y,
         RpeOverviewView *self)
{
  RpeFigure fig;
  g_autofree RpeHeatmapData *cells = NULL;
  g_auto (GStrv) titles = NULL;
  cairo_surface_t *surface;
  cairo_t *cr;
  int width = gtk_widget_get_width (self->area), height = gtk_widget_get_height (self->area);

  if (!fill_figure (self, &fig, &cells, &titles, FALSE))
    return;
  surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cr = cairo_create (surface);
  rpe_plot_use_figure_fonts (cr);
  for (gsize i = 0; i < fig.grid.n_cells; i++)
    {
      RpePlotRect r;

      if (rpe_plot_grid_cell_rect (cr, &fig.grid, width, height, i, &r)
          && x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height)
        {
          rpe_overview_view_activate_cell (self, i);
          break;
        }
    }
  cairo_destroy (cr);
  cairo_surface_destroy (surface);
}

static void
what_changed (GObject         *drop,
              GParamSpec      *pspec,
              RpeOverviewView *self)
{
  rpe_overview_view_refresh (self);
}

static void
cancel_clicked (GtkButton       *button,
                RpeOverviewView *self)
{
  rpe_overview_view_cancel (self);
}

static void
refresh_clicked (GtkButton       *button,
                 RpeOverviewView *self)
{
  rpe_overview_view_refresh (self);
}

static void
rpe_overview_view_dispose (GObject *object)
{
  RpeOverviewView *self = RPE_OVERVIEW_VIEW (object);

  rpe_job_slot_clear (&self->slot);
  if (self->state != NULL)
    g_signal_handlers_disconnect_by_data (self->state, self);
  g_clear_object (&self->state);
  g_clear_pointer (&self->result, rpe_overview_unref);
  g_clear_pointer (&self->checkpoint, g_free);
  G_OBJECT_CLASS (rpe_overview_view_parent_class)->dispose (object);
}

static void
rpe_overview_view_class_init (RpeOverviewViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = rpe_overview_view_dispose;
  signals[FIGURE_CHANGED] = g_signal_new ("figure-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  /**
   * RpeOverviewView::cell-activated:
   * @layer: the layer (-1: the module has no layers)
   * @head: the head
   * @attention: the cells are attention maps
   */
  signals[CELL_ACTIVATED] = g_signal_new ("cell-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 3, G_TYPE_INT, G_TYPE_UINT,
                                          G_TYPE_BOOLEAN);
}

static void
rpe_overview_view_init (RpeOverviewView *self)
{
  rpe_job_slot_init (&self->slot, job_start, self);
}

GtkWidget *
rpe_overview_view_new (RpeExplorerState *state)
{
  const char *whats[] = { _("Templates"), _("Attention maps"), NULL };
  RpeOverviewView *self;
  GtkWidget *row, *label, *button;
  GtkGesture *click;

  g_return_val_if_fail (RPE_IS_EXPLORER_STATE (state), NULL);
  self = g_object_new (RPE_TYPE_OVERVIEW_VIEW, "orientation", GTK_ORIENTATION_VERTICAL, "spacing", 6, NULL);
  gtk_widget_add_css_class (GTK_WIDGET (self), "rpe-pane");
  self->state = g_object_ref (state);
  self->dirty = TRUE;

  row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  gtk_widget_set_margin_start (row, 12);
  gtk_widget_set_margin_end (row, 12);
  gtk_widget_set_margin_top (row, 6);
  label = gtk_label_new_with_mnemonic (_("_Cells"));
  self->what = gtk_drop_down_new_from_strings (whats);
  gtk_label_set_mnemonic_widget (GTK_LABEL (label), self->what);
  g_signal_connect (self->what, "notify::selected", G_CALLBACK (what_changed), self);
  gtk_box_append (GTK_BOX (row), label);
  gtk_box_append (GTK_BOX (row), self->what);
  self->status = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (self->status), 0);
  gtk_label_set_ellipsize (GTK_LABEL (self->status), PANGO_ELLIPSIZE_END);
  gtk_widget_set_hexpand (self->status, TRUE);
  gtk_box_append (GTK_BOX (row), self->status);
  self->progress = gtk_progress_bar_new ();
  gtk_widget_set_valign (self->progress, GTK_ALIGN_CENTER);
  gtk_widget_set_visible (self->progress, FALSE);
  gtk_box_append (GTK_BOX (row), self->progress);
  self->cancel = gtk_button_new_with_label (_("Cancel"));
  gtk_widget_set_visible (self->cancel, FALSE);
  g_signal_connect (self->cancel, "clicked", G_CALLBACK (cancel_clicked), self);
  gtk_box_append (GTK_BOX (row), self->cancel);
  button = gtk_button_new_from_icon_name ("view-refresh-symbolic");
  gtk_widget_set_tooltip_text (button, _("Compute again"));
  g_signal_connect (button, "clicked", G_CALLBACK (refresh_clicked), self);
  gtk_box_append (GTK_BOX (row), button);
  gtk_box_append (GTK_BOX (self), row);

  self->area = gtk_drawing_area_new ();
  gtk_widget_set_vexpand (self->area, TRUE);
  gtk_widget_set_hexpand (self->area, TRUE);
  gtk_widget_set_margin_start (self->area, 12);
  gtk_widget_set_margin_end (self->area, 12);
  gtk_widget_set_margin_bottom (self->area, 12);
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (self->area), draw_area, self, NULL);
  click = gtk_gesture_click_new ();
  g_signal_connect (click, "released", G_CALLBACK (clicked), self);
  gtk_widget_add_controller (self->area, GTK_EVENT_CONTROLLER (click));
  gtk_box_append (GTK_BOX (self), self->area);

  g_signal_connect (state, "changed", G_CALLBACK (state_changed), self);
  g_signal_connect (self, "map", G_CALLBACK (on_map), self);
  return GTK_WIDGET (self);
}

void
rpe_overview_view_set_checkpoint (RpeOverviewView *self,
                                  const char      *path)
{
  g_return_if_fail (RPE_IS_OVERVIEW_VIEW (self));
  if (g_strcmp0 (self->checkpoint, path) == 0)
    return;
  g_free (self->checkpoint);
  self->checkpoint = g_strdup (path);
  self->dirty = TRUE;
  if (gtk_widget_get_mapped (GTK_WIDGET (self)))
    rpe_job_slot_request (&self->slot);
}

void
rpe_overview_view_refresh (RpeOverviewView *self)
{
  g_return_if_fail (RPE_IS_OVERVIEW_VIEW (self));
  rpe_job_slot_request (&self->slot);
}

gboolean
rpe_overview_view_is_busy (RpeOverviewView *self)
{
  g_return_val_if_fail (RPE_IS_OVERVIEW_VIEW (self), FALSE);
  return rpe_job_slot_busy (&self->slot);
}

void
rpe_overview_view_cancel (RpeOverviewView *self)
{
  g_return_if_fail (RPE_IS_OVERVIEW_VIEW (self));
  if (!rpe_job_slot_busy (&self->slot))
    return;
  rpe_job_slot_cancel (&self->slot);
  gtk_widget_set_visible (self->progress, FALSE);
  gtk_widget_set_visible (self->cancel, FALSE);
  set_status (self, _("Cancelled (the cells done so far stay)"));
}

RpeOverview *
rpe_overview_view_get_result (RpeOverviewView *self)
{
  g_return_val_if_fail (RPE_IS_OVERVIEW_VIEW (self), NULL);
  return self->result;
}

void
rpe_overview_view_activate_cell (RpeOverviewView *self,
                                 gsize            index)
{
  RpeOverview *ov;

  g_return_if_fail (RPE_IS_OVERVIEW_VIEW (self));
  ov = self->result;
  if (ov == NULL || index >= ov->n_layers * ov->n_heads)
    return;
  g_signal_emit (self, signals[CELL_ACTIVATED], 0, ov->layers[index / ov->n_heads], (guint) (index % ov->n_heads),
                 ov->what == RPE_COMPARE_ATTENTION);
}

RpeFigureBundle *
rpe_overview_view_build_figure (RpeOverviewView *self)
{
  RpeFigureBundle *bundle;
  RpeFigure fig;
  RpeHeatmapData *cells = NULL;
  char **titles = NULL;

  g_return_val_if_fail (RPE_IS_OVERVIEW_VIEW (self), NULL);
  if (!self->complete || !fill_figure (self, &fig, &cells, &titles, TRUE))
    return NULL;
  bundle = rpe_figure_bundle_new (RPE_FIGURE_GRID);
  rpe_figure_bundle_keep (bundle, rpe_overview_ref (self->result), (GDestroyNotify) rpe_overview_unref);
  rpe_figure_bundle_keep (bundle, cells, g_free);
  rpe_figure_bundle_keep (bundle, titles, (GDestroyNotify) g_strfreev);
  bundle->fig = fig;
  bundle->fig.title = rpe_figure_bundle_strdup (bundle, self->result->caption);
  bundle->has_attention = self->result->what == RPE_COMPARE_ATTENTION;
  bundle->default_name = g_strdup ("overview");
  return bundle;
}

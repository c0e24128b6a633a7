/* rpe-overview-view.c: every layer and head at a glance: its request (the module of the open
 * checkpoint, templates or attention maps), its drawing (small multiples, filled cell by cell as
 * the job computes them) and its controls. */
#include "config.h"

#include <glib/gi18n.h>

#include "rpe-overview-view.h"

#include <math.h>

#include "rpe-compare-render.h"

#define TEMPLATE_N_CAP 512
#define ATTENTION_SIDE 256

/* The head is chosen by clicking a cell: every other parameter of the module's cells counts. */
#define OVERVIEW_CHANGES (RPE_EXPLORER_CHANGE_ALL & ~(RPE_EXPLORER_CHANGE_LOOK | RPE_EXPLORER_CHANGE_COMPARE \
                                                     | RPE_EXPLORER_CHANGE_HEAD | RPE_EXPLORER_CHANGE_GRID))

struct _RpeOverviewView
{
  RpeFigurePage      parent_instance;

  char              *checkpoint;
  RpeOverview       *filling;     /* the overview being filled (cell by cell), or the last done */
  guint64            serial;

  GtkWidget         *area;
  GtkWidget         *what;
};

G_DEFINE_FINAL_TYPE (RpeOverviewView, rpe_overview_view, RPE_TYPE_FIGURE_PAGE)

enum { CELL_ACTIVATED, N_SIGNALS };
static guint signals[N_SIGNALS];

static gboolean
overview_complete (RpeOverviewView *self)
{
  return self->filling != NULL && self->filling == rpe_figure_page_get_result (RPE_FIGURE_PAGE (self));
}

/* "Templates — 12 of 48 cells (4 layers × 12 heads)" as the caption, the fraction as progress. */
static void
show_count (RpeOverviewView *self)
{
  RpeOverview *ov = self->filling;
  gsize total = ov != NULL ? ov->n_layers * ov->n_heads : 0;
  g_autofree char *layers = NULL;
  g_autofree char *heads = NULL;
  g_autofree char *text = NULL;

  if (ov == NULL)
    return;
  if (!overview_complete (self) && total > 0)
    rpe_figure_page_job_progress ((double) ov->n_done / (double) total, self);
  layers = g_strdup_printf (ngettext ("%zu layer", "%zu layers", ov->n_layers), ov->n_layers);
  heads = g_strdup_printf (ngettext ("%zu head", "%zu heads", ov->n_heads), ov->n_heads);
  /* Translators: "Templates — 12 of 48 cells (4 layers × 12 heads); click a cell to open it" */
  text = g_strdup_printf (ngettext ("%s — %zu of %zu cell (%s × %s)%s", "%s — %zu of %zu cells (%s × %s)%s", total),
                          ov->caption, ov->n_done, total, layers, heads,
                          overview_complete (self) ? _("; click a cell to open it in its view") : "");
  rpe_figure_page_set_caption (RPE_FIGURE_PAGE (self), text);
}

static void
cell_done (RpeOverview *overview,
           gsize        index,
           gpointer     user_data)
{
  RpeOverviewView *self = user_data;

  if (overview->serial != self->serial)
    return;
  if (self->filling != overview)
    {
      g_clear_pointer (&self->filling, rpe_overview_unref);
      self->filling = rpe_overview_ref (overview);
    }
  show_count (self);
  gtk_widget_queue_draw (self->area);
}

/* ------------------------------------------------------------ the page */

static void
overview_show (RpeFigurePage *page,
               gpointer       result)
{
  RpeOverviewView *self = RPE_OVERVIEW_VIEW (page);

  if (self->filling != result)
    {
      g_clear_pointer (&self->filling, rpe_overview_unref);
      self->filling = rpe_overview_ref (result);
    }
  show_count (self);
  gtk_widget_queue_draw (self->area);
}

static gboolean
overview_start (RpeFigurePage       *page,
                RpeExplorerSnapshot *snapshot,
                gsize                n_cap,
                GCancellable        *cancellable,
                GAsyncReadyCallback  callback,
                gpointer             user_data,
                char               **why)
{
  RpeOverviewView *self = RPE_OVERVIEW_VIEW (page);
  RpeCompareWhat what = gtk_drop_down_get_selected (GTK_DROP_DOWN (self->what));
  RpeCompareSide base;

  if (!snapshot->have_spe)
    {
      *why = g_strdup (_("The overview shows an SPE module's layers and heads: open a checkpoint with one."));
      return FALSE;
    }
  self->serial++;
  rpe_compare_side_init (&base, snapshot);
  base.checkpoint = g_strdup (self->checkpoint);
  rpe_figure_page_set_caption (page, _("Computing every layer and head…"));
  rpe_overview_compute_async (&base, what, TEMPLATE_N_CAP, ATTENTION_SIDE, self->serial, cell_done, self,
                              cancellable, callback, user_data);
  rpe_compare_side_clear (&base);
  return TRUE;
}

static gpointer
overview_finish (RpeFigurePage *page,
                 GAsyncResult  *result,
                 GError       **error)
{
  return rpe_overview_compute_finish (result, error);
}

/* The grid figure of the cells done; cells and titles for the caller to free. */
static gboolean
fill_figure (RpeOverviewView  *self,
             RpeFigure        *fig,
             RpeHeatmapData  **cells,
             char           ***titles,
             gboolean          with_title)
{
  RpeOverview *ov = self->filling;
  RpeOverviewFigureData fd = { 0 };
  RpeFigureLook look;

  if (ov == NULL || ov->values == NULL)
    return FALSE;
  fd.values = ov->values;
  fd.done = ov->done;
  fd.n_layers = ov->n_layers;
  fd.n_heads = ov->n_heads;
  fd.layers = ov->layers;
  fd.rows = ov->rows;
  fd.cols = ov->cols;
  fd.n = ov->n;
  fd.title = with_title ? ov->caption : NULL;
  fd.attention = ov->what == RPE_COMPARE_ATTENTION;
  /* the sidebar's colour scale on every cell; signed templates on the diverging map, as the
   * Templates view; attention on the state's map unless that one is diverging */
  rpe_figure_page_get_look (RPE_FIGURE_PAGE (self), fd.attention, &look);
  fd.colormap = fd.attention && look.diverging == NULL ? look.colormap : NULL;
  fd.transform = look.transform;
  fd.transform_param = look.param;
  rpe_overview_figure_fill (fig, &fd, cells, titles);
  return TRUE;
}

static RpeFigureBundle *
overview_build_figure (RpeFigurePage *page)
{
  RpeOverviewView *self = RPE_OVERVIEW_VIEW (page);
  RpeFigureBundle *bundle;
  RpeFigure fig;
  RpeHeatmapData *cells = NULL;
  char **titles = NULL;

  if (!overview_complete (self) || !fill_figure (self, &fig, &cells, &titles, TRUE))
    return NULL;
  bundle = rpe_figure_bundle_new (RPE_FIGURE_GRID);
  rpe_figure_bundle_keep (bundle, rpe_overview_ref (self->filling), (GDestroyNotify) rpe_overview_unref);
  rpe_figure_bundle_keep (bundle, cells, g_free);
  rpe_figure_bundle_keep (bundle, titles, (GDestroyNotify) g_strfreev);
  bundle->fig = fig;
  bundle->fig.title = rpe_figure_bundle_strdup (bundle, self->filling->caption);
  bundle->has_attention = self->filling->what == RPE_COMPARE_ATTENTION;
  bundle->default_name = g_strdup ("overview");
  return bundle;
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

/* The cell under (x, y) of the area, or -1. */
static gssize
cell_at (RpeOverviewView *self,
         double           x,
         double           y)
{
  RpeFigure fig;
  g_autofree RpeHeatmapData *cells = NULL;
  g_auto (GStrv) titles = NULL;
  cairo_surface_t *surface;
  cairo_t *cr;
  int width = gtk_widget_get_width (self->area), height = gtk_widget_get_height (self->area);
  gssize found = -1;

  if (!fill_figure (self, &fig, &cells, &titles, FALSE))
    return -1;
  surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cr = cairo_create (surface);
  rpe_plot_use_figure_fonts (cr);
  for (gsize i = 0; i < fig.grid.n_cells && found < 0; i++)
    {
      RpePlotRect r;

      if (rpe_plot_grid_cell_rect (cr, &fig.grid, width, height, i, &r)
          && x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height)
        found = (gssize) i;
    }
  cairo_destroy (cr);
  cairo_surface_destroy (surface);
  return found;
}

static char *
overview_describe_point (RpeFigurePage *page,
                         GtkWidget     *widget,
                         double         x,
                         double         y)
{
  RpeOverviewView *self = RPE_OVERVIEW_VIEW (page);
  RpeOverview *ov = self->filling;
  gssize i;

  if (widget != self->area || ov == NULL || (i = cell_at (self, x, y)) < 0)
    return NULL;
  if (ov->layers[i / ov->n_heads] >= 0)
    return g_strdup_printf (_("layer %d, head %zu (click to open it)"), ov->layers[i / ov->n_heads],
                            (gsize) i % ov->n_heads);
  return g_strdup_printf (_("head %zu (click to open it)"), (gsize) i % ov->n_heads);
}

static void
clicked (GtkGestureClick *gesture,
         int              n_press,
         double           x,
         double           y,
         RpeOverviewView *self)
{
  gssize i = cell_at (self, x, y);

  if (i >= 0)
    rpe_overview_view_activate_cell (self, (gsize) i);
}

static void
what_changed (GObject         *drop,
              GParamSpec      *pspec,
              RpeOverviewView *self)
{
  rpe_figure_page_request (RPE_FIGURE_PAGE (self));
}

static void
refresh_clicked (GtkButton       *button,
                 RpeOverviewView *self)
{
  rpe_figure_page_request (RPE_FIGURE_PAGE (self));
}

static void
rpe_overview_view_dispose (GObject *object)
{
  RpeOverviewView *self = RPE_OVERVIEW_VIEW (object);

  g_clear_pointer (&self->filling, rpe_overview_unref);
  g_clear_pointer (&self->checkpoint, g_free);
  G_OBJECT_CLASS (rpe_overview_view_parent_class)->dispose (object);
}

static void
rpe_overview_view_class_init (RpeOverviewViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  RpeFigurePageClass *page_class = RPE_FIGURE_PAGE_CLASS (klass);

  object_class->dispose = rpe_overview_view_dispose;
  page_class->job_changes = OVERVIEW_CHANGES;
  page_class->result_free = (GDestroyNotify) rpe_overview_unref;
  page_class->what = N_("the overview");
  page_class->start_job = overview_start;
  page_class->finish_job = overview_finish;
  page_class->show_result = overview_show;
  page_class->describe_point = overview_describe_point;
  page_class->build_figure = overview_build_figure;

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
  const char *whats[] = { _("Templates"), _("Attention maps"), NULL };
  GtkWidget *row, *label, *button;
  GtkGesture *click;

  row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  label = gtk_label_new_with_mnemonic (_("_Cells"));
  self->what = gtk_drop_down_new_from_strings (whats);
  gtk_widget_set_tooltip_text (self->what, _("What each cell shows: the template of the current feature, or "
                                             "the attention map"));
  gtk_label_set_mnemonic_widget (GTK_LABEL (label), self->what);
  g_signal_connect (self->what, "notify::selected", G_CALLBACK (what_changed), self);
  gtk_box_append (GTK_BOX (row), label);
  gtk_box_append (GTK_BOX (row), self->what);
  button = gtk_button_new_from_icon_name ("view-refresh-symbolic");
  gtk_widget_set_tooltip_text (button, _("Compute again"));
  g_signal_connect (button, "clicked", G_CALLBACK (refresh_clicked), self);
  gtk_box_append (GTK_BOX (row), button);
  rpe_figure_page_add_control (RPE_FIGURE_PAGE (self), row);

  self->area = gtk_drawing_area_new ();
  gtk_widget_set_vexpand (self->area, TRUE);
  gtk_widget_set_hexpand (self->area, TRUE);
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (self->area), draw_area, self, NULL);
  click = gtk_gesture_click_new ();
  g_signal_connect (click, "released", G_CALLBACK (clicked), self);
  gtk_widget_add_controller (self->area, GTK_EVENT_CONTROLLER (click));
  rpe_figure_page_set_content (RPE_FIGURE_PAGE (self), self->area);
}

GtkWidget *
rpe_overview_view_new (RpeExplorerState *state)
{
  RpeOverviewView *self;

  g_return_val_if_fail (RPE_IS_EXPLORER_STATE (state), NULL);
  self = g_object_new (RPE_TYPE_OVERVIEW_VIEW, NULL);
  rpe_figure_page_set_state (RPE_FIGURE_PAGE (self), state);
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
  rpe_figure_page_request (RPE_FIGURE_PAGE (self));
}

RpeOverview *
rpe_overview_view_get_result (RpeOverviewView *self)
{
  g_return_val_if_fail (RPE_IS_OVERVIEW_VIEW (self), NULL);
  return self->filling;
}

void
rpe_overview_view_activate_cell (RpeOverviewView *self,
                                 gsize            index)
{
  RpeOverview *ov;

  g_return_if_fail (RPE_IS_OVERVIEW_VIEW (self));
  ov = self->filling;
  if (ov == NULL || index >= ov->n_layers * ov->n_heads)
    return;
  g_signal_emit (self, signals[CELL_ACTIVATED], 0, ov->layers[index / ov->n_heads], (guint) (index % ov->n_heads),
                 ov->what == RPE_COMPARE_ATTENTION);
}

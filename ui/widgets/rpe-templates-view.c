/* rpe-templates-view.c: the templates grid (docs/math.md, sections 1-4): its request (the grid at
 * min (N, cap)), its drawing (the grid, or one cell large beside its profile) and its controls. */
#include "config.h"

#include <glib/gi18n.h>

#include "rpe-figure-names.h"
#include "rpe-templates-view.h"
#include "rpe-error.h"
#include "rpe-gesture-helper.h"

#include <math.h>
#include <string.h>

#define GRID_CHANGES (RPE_EXPLORER_CHANGE_SPE_KIND | RPE_EXPLORER_CHANGE_SPE_PARAMS          \
                      | RPE_EXPLORER_CHANGE_GATE | RPE_EXPLORER_CHANGE_LENGTH               \
                      | RPE_EXPLORER_CHANGE_HEAD | RPE_EXPLORER_CHANGE_GATED                \
                      | RPE_EXPLORER_CHANGE_TEMPLATE_KIND | RPE_EXPLORER_CHANGE_MODULES)
#define DRAW_CHANGES (RPE_EXPLORER_CHANGE_REALIZATIONS | RPE_EXPLORER_CHANGE_SEED)

struct _RpeTemplatesView
{
  RpeFigurePage     parent_instance;

  RpeFigureBundle  *shown;        /* the grid drawn (the export's figure of the same data) */
  guint             height_idle;
  int               open_cell;

  GtkStack         *stack;
  GtkDrawingArea   *grid;
  GtkWidget        *scrolled;     /* the grid's viewport */
  RpeHeatmapView   *detail;
  RpeCurveView     *profile;
  GtkLabel         *detail_title;
};

G_DEFINE_FINAL_TYPE (RpeTemplatesView, rpe_templates_view, RPE_TYPE_FIGURE_PAGE)

static RpeFigureBundle *templates_figure (RpeTemplates *t, int open_cell, const RpeFigureLook *look);

static RpeTemplates *
shown_templates (RpeTemplatesView *self)
{
  return rpe_figure_page_get_result (RPE_FIGURE_PAGE (self));
}

static const char *kind_names[] = { N_("analytic P̃<sub>d</sub>"), N_("empirical P̂<sub>d</sub>"), N_("difference P̂<sub>d</sub> − P̃<sub>d</sub>") };

static void
update_detail (RpeTemplatesView *self)
{
  RpeTemplates *t = shown_templates (self);
  gsize d;
  RpeCurvePlot plot;
  RpeCurveSeries series = { 0 };
  double *x, *y;
  gsize lags;
  g_autofree char *title = NULL;
  g_autofree char *label = NULL;

  if (t == NULL || self->open_cell < 0 || (gsize) self->open_cell >= t->n_features)
    return;
  d = (gsize) self->open_cell;
  {
    g_autoptr (GBytes) bytes = rpe_templates_dup_feature_bytes (t, d);

    rpe_heatmap_view_set_data (self->detail, bytes, t->n, t->n);
  }
  title = g_strdup_printf ("h = %zu, d = %zu: %s", t->head, d, _(kind_names[t->kind]));
  rpe_heatmap_view_set_title (self->detail, title);
  gtk_label_set_markup (self->detail_title, title);   /* kind_names are markup (P̃<sub>d</sub>) */
  if (t->profiles == NULL)
    return;
  lags = 2 * t->n - 1;
  x = g_new (double, lags);
  y = g_new (double, lags);
  for (gsize i = 0; i < lags; i++)
    {
      x[i] = (double) i - (double) (t->n - 1);
      y[i] = t->profiles[d * lags + i];
    }
  label = g_strdup_printf ("P<sub>%zu</sub>(τ)%s", d, t->gated ? _(" gated") : "");
  series.x = x;
  series.y = y;
  series.n = lags;
  series.label = label;
  rpe_curve_plot_init (&plot);
  plot.series = &series;
  plot.n_series = 1;
  plot.title = _("Analytic lag profile");
  plot.x_label = _("lag τ = m − n");
  plot.y_label = "P<sub>d</sub>(τ)";
  plot.legend = RPE_CURVE_LEGEND_NONE;
  rpe_curve_view_set_plot (self->profile, &plot);
  g_free (x);
  g_free (y);
}

/* At most this many columns: a large D scrolls down instead of widening the window. */
#define GRID_MAX_COLUMNS 8
#define GRID_MIN_CELL 96

/* The grid as the window draws it: the export's, at most GRID_MAX_COLUMNS wide, in the
 * widget's text colour.  False while there is none. */
static gboolean
shown_grid (RpeTemplatesView *self,
            RpeHeatmapGrid   *grid)
{
  GdkRGBA fg;
  gsize n;

  if (self->shown == NULL || self->shown->fig.grid.n_cells == 0)
    return FALSE;
  *grid = self->shown->fig.grid;
  n = grid->n_cells;
  grid->n_columns = MIN ((gsize) ceil (sqrt ((double) n)), GRID_MAX_COLUMNS);
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (GTK_WIDGET (self->grid)), &fg);
  G_GNUC_END_IGNORE_DEPRECATIONS
  grid->foreground[0] = fg.red;
  grid->foreground[1] = fg.green;
  grid->foreground[2] = fg.blue;
  grid->foreground[3] = fg.alpha;
  grid->background[3] = 0.0;
  return TRUE;
}

static void
grid_draw (GtkDrawingArea *area,
           cairo_t        *cr,
           int             width,
           int             height,
           gpointer        user_data)
{
  RpeTemplatesView *self = user_data;
  RpeHeatmapGrid grid;

  if (width > 0 && height > 0 && shown_grid (self, &grid))
    rpe_plot_render_heatmap_grid (cr, &grid, width, height);
}

/* The cell under (x, y) of the drawn grid (its image and title), or -1. */
static int
cell_at (RpeTemplatesView *self,
         double            x,
         double            y)
{
  RpeHeatmapGrid grid;
  int width = gtk_widget_get_width (GTK_WIDGET (self->grid));
  int height = gtk_widget_get_height (GTK_WIDGET (self->grid));
  cairo_surface_t *surface;
  cairo_t *cr;
  int found = -1;

  if (width <= 0 || height <= 0 || !shown_grid (self, &grid))
    return -1;
  /* the layout measures text: a scratch context like the one the drawing gets */
  surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cr = cairo_create (surface);
  for (gsize i = 0; i < grid.n_cells && found < 0; i++)
    {
      RpePlotRect r;

      if (rpe_plot_grid_cell_rect (cr, &grid, width, height, i, &r)
          && x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height)
        found = (int) i;
    }
  cairo_destroy (cr);
  cairo_surface_destroy (surface);
  return found;
}

static void
cell_pressed (GtkGestureClick *gesture,
              int              n_press,
              double           x,
              double           y,
              RpeTemplatesView *self)
{
  int d;

  if (!rpe_gesture_point_ok (x, y))
    return;
  d = cell_at (self, x, y);
  if (d >= 0)
    {
      g_object_set (rpe_figure_page_get_state (RPE_FIGURE_PAGE (self)), "feature", (guint) d, NULL);
      rpe_templates_view_open_cell (self, d);
    }
}

static gboolean
grid_query_tooltip (GtkWidget        *widget,
                    int               x,
                    int               y,
                    gboolean          keyboard,
                    GtkTooltip       *tooltip,
                    RpeTemplatesView *self)
{
  int d = keyboard ? -1 : cell_at (self, x, y);
  g_autofree char *tip = NULL;

  if (d < 0)
    return FALSE;
  tip = g_strdup_printf (_("Feature d = %d: click to open it large with its profile"), d);
  gtk_tooltip_set_text (tooltip, tip);
  return TRUE;
}

/* Enter (the grid focused) opens the state's feature d, as a click on its cell does. */
static gboolean
grid_key_pressed (GtkEventControllerKey *controller,
                  guint                  keyval,
                  guint                  keycode,
                  GdkModifierType        state,
                  RpeTemplatesView      *self)
{
  guint d = 0;

  if ((keyval != GDK_KEY_Return && keyval != GDK_KEY_KP_Enter && keyval != GDK_KEY_space)
      || self->shown == NULL)
    return FALSE;
  g_object_get (rpe_figure_page_get_state (RPE_FIGURE_PAGE (self)), "feature", &d, NULL);
  if (d >= self->shown->fig.grid.n_cells)
    return FALSE;
  rpe_templates_view_open_cell (self, (int) d);
  return TRUE;
}

/* The grid's height for its width (its largest cells, no room wasted); a large D scrolls. */
static gboolean
grid_fit_height (gpointer user_data)
{
  RpeTemplatesView *self = user_data;
  RpeHeatmapGrid grid;
  int width = gtk_widget_get_width (GTK_WIDGET (self->grid));
  int want = 0;

  self->height_idle = 0;
  if (shown_grid (self, &grid) && width > 0)
    {
      gsize rows = (grid.n_cells + grid.n_columns - 1) / grid.n_columns;
      /* the viewport's height when the cells keep GRID_MIN_CELL there, else taller (scrolls) */
      double most = MAX ((double) gtk_widget_get_height (self->scrolled), (double) (rows * GRID_MIN_CELL));
      double h = rpe_plot_grid_height_for_width (&grid, width, most);

      want = (int) MIN (ceil (h > 0.0 ? h : most), most);
      gtk_drawing_area_set_content_width (self->grid, (int) (grid.n_columns * GRID_MIN_CELL + 80));
    }
  if (gtk_drawing_area_get_content_height (self->grid) != want)
    gtk_drawing_area_set_content_height (self->grid, want);
  return G_SOURCE_REMOVE;
}

static void
grid_queue_fit (RpeTemplatesView *self)
{
  if (self->height_idle == 0)
    self->height_idle = g_idle_add (grid_fit_height, self);
}

static void
grid_resized (GtkDrawingArea   *area,
              int               width,
              int               height,
              RpeTemplatesView *self)
{
  grid_queue_fit (self);
}

/* ------------------------------------------------------------ the page */

static void
templates_show (RpeFigurePage *page,
                gpointer       result)
{
  RpeTemplatesView *self = RPE_TEMPLATES_VIEW (page);
  RpeTemplates *t = result;
  const char *source = rpe_explorer_state_get_source (rpe_figure_page_get_state (page), t->method);
  g_autofree char *caption = NULL;
  g_autofree char *err = NULL;
  RpeFigureLook look;

  rpe_figure_page_get_look (page, FALSE, &look);
  /* the figure `rpe export templates` draws: one shared range and colour bar, or each cell
   * its own (the state's color-range) */
  g_clear_pointer (&self->shown, rpe_figure_bundle_unref);
  self->shown = templates_figure (t, -1, &look);
  gtk_widget_queue_draw (GTK_WIDGET (self->grid));
  grid_queue_fit (self);
  rpe_heatmap_view_set_scale (self->detail, RPE_HEATMAP_SCALE_SYMMETRIC);
  rpe_heatmap_view_set_transform (self->detail, look.transform, look.param);
  if (t->kind != RPE_TEMPLATE_ANALYTIC)
    err = g_strdup_printf (_(" One draw of R = %zu codes: ‖P̂ − P̃‖<sub>F</sub> / ‖P̃‖<sub>F</sub> = %.3f."), t->r, t->error);
  {
    /* the caption is markup (subscripts); the source names a file: escaped */
    g_autofree char *source_text = g_markup_escape_text (source != NULL ? source : _("parameters"), -1);

    /* Translators: markup; the first %s is "analytic P̃<sub>d</sub>" (or its empirical and difference
     * twins), the second the source (a file's module), the third K or L, then ", gated (1 − g) P + g"
     * or nothing, and " One draw of R = ..." or nothing */
    caption = g_strdup_printf (_("%s templates of head %zu, %s: D = %zu, %s = %zu, N = %zu%s.%s "
                                 "Click a cell to open it with its profile."),
                               _(kind_names[t->kind]), t->head, source_text,
                               t->n_features, t->method == RPE_SPE_SINE ? "K" : "L", t->size, t->n,
                               t->gated ? _(", gated (1 − g) P + g") : "",
                               err != NULL ? err : "");
  }
  rpe_figure_page_set_caption_markup (page, caption);
  update_detail (self);
}

static gboolean
templates_start (RpeFigurePage       *page,
                 RpeExplorerSnapshot *snapshot,
                 gsize                n_cap,
                 GCancellable        *cancellable,
                 GAsyncReadyCallback  callback,
                 gpointer             user_data,
                 char               **why)
{
  rpe_compute_template_grid_async (snapshot, n_cap, rpe_figure_page_job_progress, page, cancellable, callback,
                                   user_data);
  return TRUE;
}

static gpointer
templates_finish (RpeFigurePage *page,
                  GAsyncResult  *result,
                  GError       **error)
{
  return rpe_compute_templates_finish (result, error);
}

static void
templates_result_size (RpeFigurePage *page,
                       gconstpointer  result,
                       gsize         *n,
                       gsize         *n_asked)
{
  const RpeTemplates *t = result;

  *n = t->n;
  *n_asked = t->n_asked;
}

static RpeFigurePageUpdate
templates_state_changed (RpeFigurePage     *page,
                         RpeExplorerChange  what)
{
  guint kind = RPE_TEMPLATE_ANALYTIC;

  g_object_get (rpe_figure_page_get_state (page), "template-kind", &kind, NULL);
  if ((what & GRID_CHANGES) || ((what & DRAW_CHANGES) && kind != RPE_TEMPLATE_ANALYTIC))
    return RPE_FIGURE_PAGE_RECOMPUTE;
  return (what & RPE_EXPLORER_CHANGE_LOOK) ? RPE_FIGURE_PAGE_RESHOW : RPE_FIGURE_PAGE_KEEP;
}

/* Over the grid: the cell under the pointer; over the detail, the profile: the default. */
static char *
templates_describe_point (RpeFigurePage *page,
                          GtkWidget     *widget,
                          double         x,
                          double         y)
{
  RpeTemplatesView *self = RPE_TEMPLATES_VIEW (page);

  if (widget == GTK_WIDGET (self->grid))
    {
      int d = cell_at (self, x, y);

      return d >= 0 ? g_strdup_printf (_("feature d = %d (click to open it)"), d) : NULL;
    }
  return RPE_FIGURE_PAGE_CLASS (rpe_templates_view_parent_class)->describe_point (page, widget, x, y);
}

static RpeFigureBundle *
templates_build_figure (RpeFigurePage *page)
{
  RpeFigureLook look;

  rpe_figure_page_get_look (page, FALSE, &look);
  return templates_figure (shown_templates (RPE_TEMPLATES_VIEW (page)), RPE_TEMPLATES_VIEW (page)->open_cell, &look);
}

static void templates_setup_sweep (RpeFigurePage *page, RpeExportDialog *dialog);

static void
back_clicked (GtkButton        *button,
              RpeTemplatesView *self)
{
  rpe_templates_view_open_cell (self, -1);
}

static void
rpe_templates_view_dispose (GObject *object)
{
  RpeTemplatesView *self = RPE_TEMPLATES_VIEW (object);

  g_clear_pointer (&self->shown, rpe_figure_bundle_unref);
  g_clear_handle_id (&self->height_idle, g_source_remove);
  G_OBJECT_CLASS (rpe_templates_view_parent_class)->dispose (object);
}

static void
rpe_templates_view_class_init (RpeTemplatesViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  RpeFigurePageClass *page_class = RPE_FIGURE_PAGE_CLASS (klass);

  object_class->dispose = rpe_templates_view_dispose;
  page_class->cap_kind = RPE_COMPUTE_JOB_TEMPLATE_GRID;
  page_class->result_free = (GDestroyNotify) rpe_templates_unref;
  page_class->what = N_("the templates");
  page_class->state_changed = templates_state_changed;
  page_class->start_job = templates_start;
  page_class->finish_job = templates_finish;
  page_class->show_result = templates_show;
  page_class->result_size = templates_result_size;
  page_class->describe_point = templates_describe_point;
  page_class->build_figure = templates_build_figure;
  page_class->setup_sweep = templates_setup_sweep;
}

static void
rpe_templates_view_init (RpeTemplatesView *self)
{
  GtkWidget *scrolled, *detail, *header, *back, *paned;

  self->open_cell = -1;
  rpe_figure_page_set_n_cap (RPE_FIGURE_PAGE (self), RPE_TEMPLATES_VIEW_N_CAP);

  self->stack = GTK_STACK (gtk_stack_new ());
  gtk_stack_set_transition_type (self->stack, GTK_STACK_TRANSITION_TYPE_NONE);
  rpe_figure_page_set_content (RPE_FIGURE_PAGE (self), GTK_WIDGET (self->stack));

  scrolled = gtk_scrolled_window_new ();
  self->scrolled = scrolled;
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scrolled), GTK_POLICY_AUTOMATIC, GTK_POLICY_AUTOMATIC);
  self->grid = GTK_DRAWING_AREA (gtk_drawing_area_new ());
  gtk_widget_set_hexpand (GTK_WIDGET (self->grid), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (self->grid), TRUE);
  gtk_drawing_area_set_draw_func (self->grid, grid_draw, self, NULL);
  g_signal_connect (self->grid, "resize", G_CALLBACK (grid_resized), self);
  gtk_widget_set_has_tooltip (GTK_WIDGET (self->grid), TRUE);
  g_signal_connect (self->grid, "query-tooltip", G_CALLBACK (grid_query_tooltip), self);
  {
    GtkGesture *click = gtk_gesture_click_new ();

    g_signal_connect (click, "pressed", G_CALLBACK (cell_pressed), self);
    gtk_widget_add_controller (GTK_WIDGET (self->grid), GTK_EVENT_CONTROLLER (click));
  }
  {
    GtkEventController *keys = gtk_event_controller_key_new ();

    g_signal_connect (keys, "key-pressed", G_CALLBACK (grid_key_pressed), self);
    gtk_widget_add_controller (GTK_WIDGET (self->grid), keys);
    gtk_widget_set_focusable (GTK_WIDGET (self->grid), TRUE);
  }
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scrolled), GTK_WIDGET (self->grid));
  gtk_stack_add_named (self->stack, scrolled, "grid");

  detail = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  header = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  back = gtk_button_new_from_icon_name ("go-previous-symbolic");
  gtk_widget_set_tooltip_text (back, _("Back to the grid"));
  g_signal_connect (back, "clicked", G_CALLBACK (back_clicked), self);
  gtk_box_append (GTK_BOX (header), back);
  self->detail_title = GTK_LABEL (gtk_label_new (NULL));
  gtk_widget_add_css_class (GTK_WIDGET (self->detail_title), "heading");
  gtk_box_append (GTK_BOX (header), GTK_WIDGET (self->detail_title));
  gtk_box_append (GTK_BOX (detail), header);
  paned = gtk_paned_new (GTK_ORIENTATION_HORIZONTAL);
  gtk_widget_set_vexpand (paned, TRUE);
  self->detail = RPE_HEATMAP_VIEW (rpe_heatmap_view_new ());
  gtk_widget_set_tooltip_markup (GTK_WIDGET (self->detail),
                                 _("The template P̃<sub>d</sub>(m, n): query position m down, key position n across"));
  self->profile = RPE_CURVE_VIEW (rpe_curve_view_new_plot ());
  gtk_widget_set_tooltip_markup (GTK_WIDGET (self->profile), _("The analytic profile P<sub>d</sub>(τ), τ = m − n"));
  gtk_paned_set_start_child (GTK_PANED (paned), GTK_WIDGET (self->detail));
  gtk_paned_set_end_child (GTK_PANED (paned), GTK_WIDGET (self->profile));
  gtk_paned_set_position (GTK_PANED (paned), 520);
  gtk_box_append (GTK_BOX (detail), paned);
  gtk_stack_add_named (self->stack, detail, "detail");
  gtk_stack_set_visible_child_name (self->stack, "grid");
}

GtkWidget *
rpe_templates_view_new (RpeExplorerState *state)
{
  RpeTemplatesView *self = g_object_new (RPE_TYPE_TEMPLATES_VIEW, NULL);

  rpe_figure_page_set_state (RPE_FIGURE_PAGE (self), state);
  return GTK_WIDGET (self);
}

RpeTemplates *
rpe_templates_view_get_templates (RpeTemplatesView *self)
{
  g_return_val_if_fail (RPE_IS_TEMPLATES_VIEW (self), NULL);
  return shown_templates (self);
}

const RpeHeatmapGrid *
rpe_templates_view_get_grid (RpeTemplatesView *self)
{
  g_return_val_if_fail (RPE_IS_TEMPLATES_VIEW (self), NULL);
  return self->shown != NULL ? &self->shown->fig.grid : NULL;
}

const RpeHeatmapData *
rpe_templates_view_get_cell (RpeTemplatesView *self,
                             gsize             d)
{
  const RpeHeatmapGrid *grid = rpe_templates_view_get_grid (self);

  return grid != NULL && d < grid->n_cells ? &grid->cells[d] : NULL;
}

int
rpe_templates_view_cell_at (RpeTemplatesView *self,
                            double            x,
                            double            y)
{
  g_return_val_if_fail (RPE_IS_TEMPLATES_VIEW (self), -1);
  return cell_at (self, x, y);
}

GtkWidget *
rpe_templates_view_get_grid_area (RpeTemplatesView *self)
{
  g_return_val_if_fail (RPE_IS_TEMPLATES_VIEW (self), NULL);
  return GTK_WIDGET (self->grid);
}

void
rpe_templates_view_open_cell (RpeTemplatesView *self,
                              int               d)
{
  g_return_if_fail (RPE_IS_TEMPLATES_VIEW (self));

  self->open_cell = d;
  if (d >= 0)
    update_detail (self);
  gtk_stack_set_visible_child_name (self->stack, d >= 0 ? "detail" : "grid");
}

int
rpe_templates_view_get_open_cell (RpeTemplatesView *self)
{
  g_return_val_if_fail (RPE_IS_TEMPLATES_VIEW (self), -1);
  return self->open_cell;
}

RpeHeatmapView *
rpe_templates_view_get_detail (RpeTemplatesView *self)
{
  g_return_val_if_fail (RPE_IS_TEMPLATES_VIEW (self), NULL);
  return self->detail;
}

RpeCurveView *
rpe_templates_view_get_profile (RpeTemplatesView *self)
{
  g_return_val_if_fail (RPE_IS_TEMPLATES_VIEW (self), NULL);
  return self->profile;
}

/* The figure as `rpe export templates|template` draws it for the same data
 * (app/rpe-cli-export.c): cells titled "h=.., d=..", one shared scale, viridis
 * or the diverging map when the state's map is diverging, N_train marked. */
/* The figure of t (any thread): what the view shows with open_cell (-1: the grid). */
static RpeFigureBundle *
templates_figure (RpeTemplates        *t,
                  int                  open_cell,
                  const RpeFigureLook *look)
{
  RpeFigureBundle *b;
  RpeHeatmapData *cells;
  const char *bar;
  gsize d0, d1;
  gboolean one;

  if (t == NULL || t->n_features == 0)
    return NULL;
  one = open_cell >= 0 && (gsize) open_cell < t->n_features;
  d0 = one ? (gsize) open_cell : 0;
  d1 = one ? d0 + 1 : t->n_features;
  b = rpe_figure_bundle_new (one ? RPE_FIGURE_HEATMAP : RPE_FIGURE_GRID);
  bar = rpe_figure_bundle_keep (b, rpe_figure_template_bar (MIN ((int) t->kind, 2)), g_free);
  rpe_figure_bundle_keep (b, rpe_templates_ref (t), (GDestroyNotify) rpe_templates_unref);
  cells = rpe_figure_bundle_keep (b, g_new0 (RpeHeatmapData, d1 - d0), g_free);
  for (gsize d = d0; d < d1; d++)
    {
      RpeHeatmapData *c = &cells[d - d0];

      rpe_heatmap_data_init (c);
      c->values = rpe_templates_get_feature (t, d);
      c->rows = t->n;
      c->cols = t->n;
      c->colormap = look->diverging;   /* NULL: the diverging default (signed values) */
      c->reduce = RPE_HEATMAP_REDUCE_MEAN;
      c->equal_aspect = TRUE;
      c->train_length = look->train;
      c->transform = look->transform;
      c->transform_param = look->param;
      c->title = rpe_figure_bundle_keep (b, rpe_figure_template_cell (d), g_free);
      c->x_label = _("key position n");
      c->y_label = _("query position m");
      c->colorbar_label = bar;
    }
  if (one)
    {
      b->fig.heatmap = cells[0];
      b->fig.title = rpe_figure_bundle_keep (b, rpe_figure_templates_title (t->method == RPE_SPE_SINE, t->gated,
                                                                            MIN ((int) t->kind, 2), t->head,
                                                                            (gssize) d0, t->n), g_free);
      b->default_name = g_strdup_printf ("template-h%zu-d%zu", t->head, d0);
    }
  else
    {
      b->fig.grid.cells = cells;
      b->fig.grid.n_cells = d1 - d0;
      b->fig.grid.shared_scale = look->shared;
      b->fig.grid.colorbar_label = bar;
      b->fig.title = rpe_figure_bundle_keep (b, rpe_figure_templates_title (t->method == RPE_SPE_SINE, t->gated,
                                                                            MIN ((int) t->kind, 2), t->head, -1,
                                                                            t->n), g_free);
      b->default_name = g_strdup_printf ("templates-h%zu", t->head);
    }
  return b;
}

/* An animated sweep of the view: the state's snapshot and the view's presentation, frames
 * computed by rpe_compute_template_grid (the code of the view's own job). */
typedef struct
{
  RpeExplorerSnapshot *snapshot;
  int                  open_cell;
  RpeFigureLook        look;
} TemplatesSweep;

static void
templates_sweep_free (gpointer p)
{
  TemplatesSweep *ts = p;

  rpe_explorer_snapshot_unref (ts->snapshot);
  g_free (ts);
}

static RpeFigureBundle *
templates_sweep_frame (gpointer        data,
                       RpeSweepParam   param,
                       gint64          value,
                       GCancellable   *cancellable,
                       GError        **error)
{
  TemplatesSweep *ts = data;
  g_autoptr (RpeExplorerSnapshot) s = rpe_explorer_snapshot_with_sweep (ts->snapshot, param, value);
  g_autoptr (RpeTemplates) t = rpe_compute_template_grid (s, RPE_TEMPLATES_VIEW_N_CAP, cancellable, error);
  RpeFigureBundle *b;

  if (t == NULL)
    return NULL;
  b = templates_figure (t, ts->open_cell, &ts->look);
  if (b == NULL)
    g_set_error_literal (error, RPE_ERROR, RPE_ERROR_NOT_FOUND, _("the templates have nothing to draw"));
  return b;
}

static void
templates_setup_sweep (RpeFigurePage   *page,
                       RpeExportDialog *dialog)
{
  RpeTemplatesView *self = RPE_TEMPLATES_VIEW (page);
  TemplatesSweep *ts;
  RpeExplorerSnapshot *s;

  s = rpe_explorer_state_snapshot (rpe_figure_page_get_state (page));
  ts = g_new0 (TemplatesSweep, 1);
  ts->snapshot = s;
  ts->open_cell = self->open_cell;
  rpe_figure_page_get_look (page, FALSE, &ts->look);
  rpe_export_dialog_set_sweep (dialog, templates_sweep_frame, ts, templates_sweep_free, (gint64) s->r, (gint64) s->n,
                               (gint64) s->seed);
}

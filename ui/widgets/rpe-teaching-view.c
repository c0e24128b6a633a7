/* rpe-teaching-view.c: the "SPE vs RPE" teaching view: its request (exact and estimated
 * attention at min (N, cap), the template error curve when the parameters changed), its drawing
 * (three maps and the curve, or a query row of the maps) and its controls (R, new noise). */
#include "config.h"

#include <glib/gi18n.h>

#include "rpe-curve-view.h"
#include "rpe-figure-names.h"
#include "rpe-teaching-view.h"

#include <math.h>
#include <string.h>

#define TEACHING_N_CAP 256

#define TEACHING_CURVE_CHANGES (RPE_EXPLORER_CHANGE_SPE_KIND | RPE_EXPLORER_CHANGE_SPE_PARAMS \
                                | RPE_EXPLORER_CHANGE_GATE | RPE_EXPLORER_CHANGE_LENGTH   \
                                | RPE_EXPLORER_CHANGE_HEAD | RPE_EXPLORER_CHANGE_GATED    \
                                | RPE_EXPLORER_CHANGE_MODULES)
#define TEACHING_CHANGES (TEACHING_CURVE_CHANGES | RPE_EXPLORER_CHANGE_REALIZATIONS        \
                          | RPE_EXPLORER_CHANGE_SEED | RPE_EXPLORER_CHANGE_CAUSAL          \
                          | RPE_EXPLORER_CHANGE_CONTENT)

/* The R slider spans 1 .. RPE_EXPLORER_MAX_R (2^12), as the template error curve does
 * (rpe_compute_teaching). */
#define TEACHING_R_MAX_LOG2 12

struct _RpeTeachingView
{
  RpeFigurePage     parent_instance;

  gboolean          curve_dirty;
  RpeTeaching      *curve;        /* the last result that carried the error curve */

  RpeFigureView    *maps;         /* exact | estimate | difference, as the export draws them */
  GtkScale         *r_scale;
  GtkLabel         *r_label;
  RpeCurveView     *plot;
  double           *row_x;
  double           *row_y;        /* 2 * N: exact row, estimate row */
  gboolean          updating;
};

G_STATIC_ASSERT ((1 << TEACHING_R_MAX_LOG2) == RPE_EXPLORER_MAX_R);

G_DEFINE_FINAL_TYPE (RpeTeachingView, rpe_teaching_view, RPE_TYPE_FIGURE_PAGE)

static RpeTeaching *
teaching_result (RpeTeachingView *self)
{
  return rpe_figure_page_get_result (RPE_FIGURE_PAGE (self));
}

static RpeExplorerState *
teaching_state (RpeTeachingView *self)
{
  return rpe_figure_page_get_state (RPE_FIGURE_PAGE (self));
}

/* How the maps are coloured (the state's look: exact and estimate as attention weights, the
 * difference as signed values). */
typedef struct
{
  const RpeColormap   *cmap;
  RpeHeatmapTransform  transform;       /* of exact and estimate */
  RpeHeatmapTransform  diff_transform;  /* of the difference (never the SPE paper's) */
  double               param;
  gboolean             shared;          /* exact and estimate on one range */
  guint                train;
} TeachingLook;

static void teaching_look (RpeTeachingView *self, TeachingLook *look);
static RpeFigureBundle *teaching_figure (RpeTeaching *t, const RpeExplorerSnapshot *s, const TeachingLook *look);

/* The plot of the chosen row m of the exact and estimated maps: a(m, .) and â(m, .) over the
 * key positions of the maps (their x range). */
static gboolean
teaching_row_plot (RpeTeachingView *self)
{
  RpeTeaching *t = teaching_result (self);
  gssize row = rpe_figure_page_get_row (RPE_FIGURE_PAGE (self));
  RpeCurvePlot plot;
  RpeCurveSeries series[2] = { { 0 }, { 0 } };
  g_autofree char *title = NULL;

  g_clear_pointer (&self->row_x, g_free);
  g_clear_pointer (&self->row_y, g_free);
  if (row < 0 || t == NULL || (gsize) row >= t->n)
    return FALSE;
  self->row_x = g_new (double, t->n);
  self->row_y = g_new (double, 2 * t->n);
  for (gsize n = 0; n < t->n; n++)
    {
      self->row_x[n] = (double) n;
      self->row_y[n] = t->exact[(gsize) row * t->n + n];
      self->row_y[t->n + n] = t->estimate[(gsize) row * t->n + n];
    }
  rpe_curve_plot_init (&plot);
  for (guint i = 0; i < 2; i++)
    {
      series[i].x = self->row_x;
      series[i].y = self->row_y + i * t->n;
      series[i].n = t->n;
    }
  series[0].label = _("exact a(m, n)");
  series[1].label = _("SPE estimate â(m, n)");
  series[1].dashed = TRUE;
  plot.series = series;
  plot.n_series = 2;
  title = g_strdup_printf (_("Row m = %zd of the maps above (Delete or Clear Row: back to the template error)"),
                           row);
  plot.title = title;
  plot.x_label = _("key position n");
  plot.y_label = _("attention weight");
  plot.fixed_x = TRUE;
  plot.x_min = -0.5;
  plot.x_max = (double) t->n - 0.5;
  rpe_curve_view_set_plot (self->plot, &plot);
  return TRUE;
}

static void
teaching_update_plot (RpeTeachingView *self)
{
  RpeCurvePlot plot;
  RpeCurveSeries series[2] = { { 0 }, { 0 } };
  double half[16], rr[16];
  gsize r = rpe_explorer_state_get_r (teaching_state (self));
  g_autofree char *marker = g_strdup_printf ("R = %zu", r);
  g_autofree char *title = NULL;
  g_autofree char *error_label = NULL;

  if (teaching_row_plot (self))
    return;
  if (self->curve == NULL)
    return;
  rpe_curve_plot_init (&plot);
  series[0].x = self->curve->curve_r;
  series[0].y = self->curve->curve_mean;
  series[0].y_err = self->curve->curve_sd;
  series[0].n = self->curve->n_curve;
  /* Translators: %s is the template error's symbol ‖P̂ − P̃‖_F / ‖P̃‖_F */
  error_label = g_strdup_printf (_("template error %s"), RPE_FIG_TEMPLATE_ERROR);
  series[0].label = error_label;
  series[0].marker = RPE_CURVE_MARKER_CIRCLE;
  /* the 1/sqrt(R) reference through the first point */
  for (gsize i = 0; i < self->curve->n_curve && i < 16; i++)
    {
      rr[i] = self->curve->curve_r[i];
      half[i] = self->curve->curve_mean[0] / sqrt (rr[i]);
    }
  series[1].x = rr;
  series[1].y = half;
  series[1].n = MIN (self->curve->n_curve, 16);
  series[1].label = "∝ 1/√R";
  series[1].dashed = TRUE;
  plot.series = series;
  plot.n_series = 2;
  title = g_strdup_printf (_("Template error against R (head %zu, mean over the D features, slope %s%.2f)"),
                           self->curve->head, self->curve->slope < 0 ? RPE_FIG_MINUS : "", fabs (self->curve->slope));
  plot.title = title;
  plot.x_label = _("realizations R");
  plot.y_label = _("template error");
  /* the slider's range: every R the explorer takes is on the curve's axis, marked */
  plot.fixed_x = TRUE;
  plot.x_min = 1.0;
  plot.x_max = (double) (1u << TEACHING_R_MAX_LOG2);
  plot.x_log = TRUE;
  plot.y_log = TRUE;
  plot.x_marker = (double) r;
  plot.x_marker_label = marker;
  rpe_curve_view_set_plot (self->plot, &plot);
}

static void
teaching_show (RpeFigurePage *page,
               gpointer       result)
{
  RpeTeachingView *self = RPE_TEACHING_VIEW (page);
  RpeTeaching *t = result;
  g_autofree char *caption = NULL;

  if (t->n_curve > 0 && t != self->curve)
    {
      rpe_teaching_ref (t);
      g_clear_pointer (&self->curve, rpe_teaching_unref);
      self->curve = t;
    }
  /* Translators: markup; the first %s is the attention error's symbol ‖â − a‖_F / ‖a‖_F, the
   * second the template error's ‖P̂ − P̃‖_F / ‖P̃‖_F */
  caption = g_strdup_printf (_("Head %zu, N = %zu, R = %zu: the SPE estimate â (middle) of the exact "
                               "relative attention a (left) has attention error "
                               "%s = %.3f (right: â − a). "
                               "The curve below is the template error %s"
                               " of the head's features, another quantity; both shrink like 1/√R. "
                               "Raise R to watch the estimate sharpen; draw new noise to see another one."),
                             t->head, t->n, t->r, RPE_FIG_ATTENTION_ERROR, t->error, RPE_FIG_TEMPLATE_ERROR);
  rpe_figure_page_set_caption_markup (page, caption);
  teaching_update_plot (self);
}

static void
teaching_sync_r (RpeTeachingView *self)
{
  gsize r = rpe_explorer_state_get_r (teaching_state (self));
  g_autofree char *text = g_strdup_printf ("R = %zu", r);

  self->updating = TRUE;
  gtk_range_set_value (GTK_RANGE (self->r_scale), log2 ((double) r));
  self->updating = FALSE;
  gtk_label_set_text (self->r_label, text);
}

static RpeFigurePageUpdate
teaching_state_changed (RpeFigurePage     *page,
                        RpeExplorerChange  what)
{
  RpeTeachingView *self = RPE_TEACHING_VIEW (page);

  if (what & RPE_EXPLORER_CHANGE_REALIZATIONS)
    {
      teaching_sync_r (self);
      teaching_update_plot (self);
    }
  if (what & TEACHING_CURVE_CHANGES)
    self->curve_dirty = TRUE;
  return RPE_FIGURE_PAGE_CLASS (rpe_teaching_view_parent_class)->state_changed (page, what);
}

static gboolean
teaching_start (RpeFigurePage       *page,
                RpeExplorerSnapshot *snapshot,
                gsize                n_cap,
                GCancellable        *cancellable,
                GAsyncReadyCallback  callback,
                gpointer             user_data,
                char               **why)
{
  RpeTeachingView *self = RPE_TEACHING_VIEW (page);
  gboolean with_curve = self->curve_dirty || self->curve == NULL;

  self->curve_dirty = FALSE;
  rpe_compute_teaching_async (snapshot, n_cap, with_curve, rpe_figure_page_job_progress, page, cancellable,
                              callback, user_data);
  return TRUE;
}

static gpointer
teaching_finish (RpeFigurePage *page,
                 GAsyncResult  *result,
                 GError       **error)
{
  return rpe_compute_teaching_finish (result, error);
}

static void
teaching_result_size (RpeFigurePage *page,
                      gconstpointer  result,
                      gsize         *n,
                      gsize         *n_asked)
{
  const RpeTeaching *t = result;

  *n = t->n;
  *n_asked = t->n_asked;
}

static RpeFigureBundle *
teaching_build_figure (RpeFigurePage *page)
{
  TeachingLook look;

  teaching_look (RPE_TEACHING_VIEW (page), &look);
  return teaching_figure (teaching_result (RPE_TEACHING_VIEW (page)), rpe_figure_page_get_result_snapshot (page),
                          &look);
}

static void teaching_setup_sweep (RpeFigurePage *page, RpeExportDialog *dialog);

static void
teaching_r_changed (GtkRange        *range,
                    RpeTeachingView *self)
{
  guint r = (guint) lround (exp2 (gtk_range_get_value (range)));

  if (!self->updating)
    g_object_set (teaching_state (self), "realizations", MAX (r, 1u), NULL);
}

static void
teaching_new_noise (GtkButton       *button,
                    RpeTeachingView *self)
{
  guint seed;

  g_object_get (teaching_state (self), "seed", &seed, NULL);
  g_object_set (teaching_state (self), "seed", seed + 1, NULL);
}

static void
rpe_teaching_view_dispose (GObject *object)
{
  RpeTeachingView *self = RPE_TEACHING_VIEW (object);

  g_clear_pointer (&self->curve, rpe_teaching_unref);
  g_clear_pointer (&self->row_x, g_free);
  g_clear_pointer (&self->row_y, g_free);
  G_OBJECT_CLASS (rpe_teaching_view_parent_class)->dispose (object);
}

/* The rows of the maps; the first Down / Up chooses the middle one. */
static gboolean
teaching_row_range (RpeFigurePage *page,
                    gsize         *n_rows,
                    gsize         *first)
{
  RpeTeaching *t = teaching_result (RPE_TEACHING_VIEW (page));

  *n_rows = t != NULL ? t->n : 0;
  *first = *n_rows / 2;
  return *n_rows > 0;
}

static void
teaching_row_changed (RpeFigurePage *page)
{
  teaching_update_plot (RPE_TEACHING_VIEW (page));
}

static void
rpe_teaching_view_class_init (RpeTeachingViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  RpeFigurePageClass *page_class = RPE_FIGURE_PAGE_CLASS (klass);

  object_class->dispose = rpe_teaching_view_dispose;
  page_class->job_changes = TEACHING_CHANGES;
  page_class->cap_kind = RPE_COMPUTE_JOB_TEACHING;
  page_class->result_free = (GDestroyNotify) rpe_teaching_unref;
  page_class->what = N_("the maps");
  page_class->state_changed = teaching_state_changed;
  page_class->start_job = teaching_start;
  page_class->finish_job = teaching_finish;
  page_class->show_result = teaching_show;
  page_class->result_size = teaching_result_size;
  page_class->build_figure = teaching_build_figure;
  page_class->setup_sweep = teaching_setup_sweep;

  page_class->row_range = teaching_row_range;
  page_class->row_changed = teaching_row_changed;
}

/* A click on a map chooses its row. */
static void
map_released (GtkGestureClick *gesture,
              int              n_press,
              double           x,
              double           y,
              RpeTeachingView *self)
{
  guint panel;
  gsize row, col;

  gtk_widget_grab_focus (GTK_WIDGET (self));
  if (n_press == 1 && rpe_figure_view_cell_at (self->maps, x, y, &panel, &row, &col))
    rpe_figure_page_set_row (RPE_FIGURE_PAGE (self), (gssize) row);
}

/* Each map says what it is. */
static gboolean
maps_query_tooltip (GtkWidget       *widget,
                    int              x,
                    int              y,
                    gboolean         keyboard,
                    GtkTooltip      *tooltip,
                    RpeTeachingView *self)
{
  guint panel;
  gsize row, col;

  if (keyboard || !rpe_figure_view_cell_at (self->maps, x, y, &panel, &row, &col))
    return FALSE;
  switch (panel)
    {
    case 0:
      gtk_tooltip_set_markup (tooltip, _("Exact relative attention: softmax of Σ<sub>d</sub> q k P̃<sub>d</sub>(m − n) / √D"));
      return TRUE;
    case 1:
      gtk_tooltip_set_text (tooltip, _("SPE estimate: softmax of Q̂ K̂ᵀ / √R from R noise realizations"));
      return TRUE;
    default:
      gtk_tooltip_set_text (tooltip, _("The estimate's error â − a (estimate − exact)"));
      return TRUE;
    }
}

static void
rpe_teaching_view_init (RpeTeachingView *self)
{
  RpeFigurePage *page = RPE_FIGURE_PAGE (self);
  GtkWidget *content, *controls, *button, *label;
  GtkGesture *click;

  rpe_figure_page_set_n_cap (page, TEACHING_N_CAP);
  /* the caption explains two errors: three lines at the window's usual widths */
  rpe_figure_page_set_caption_lines (page, 3);

  content = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  /* one figure, as `rpe export spe-vs-rpe` draws it: one cell size and top edge for the three
   * maps, one colour bar for exact and estimate */
  self->maps = RPE_FIGURE_VIEW (rpe_figure_view_new ());
  rpe_figure_page_set_figure_view (page, self->maps);
  click = gtk_gesture_click_new ();
  g_signal_connect (click, "released", G_CALLBACK (map_released), self);
  gtk_widget_add_controller (GTK_WIDGET (self->maps), GTK_EVENT_CONTROLLER (click));
  gtk_widget_set_has_tooltip (GTK_WIDGET (self->maps), TRUE);
  g_signal_connect (self->maps, "query-tooltip", G_CALLBACK (maps_query_tooltip), self);
  gtk_box_append (GTK_BOX (content), GTK_WIDGET (self->maps));

  controls = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  label = gtk_label_new (_("Realizations"));
  gtk_box_append (GTK_BOX (controls), label);
  /* R from 1 to RPE_EXPLORER_MAX_R: the range of the template error curve below */
  self->r_scale = GTK_SCALE (gtk_scale_new_with_range (GTK_ORIENTATION_HORIZONTAL, 0.0, TEACHING_R_MAX_LOG2, 1.0));
  gtk_range_set_round_digits (GTK_RANGE (self->r_scale), 0);
  gtk_scale_set_draw_value (self->r_scale, FALSE);
  for (int i = 0; i <= TEACHING_R_MAX_LOG2; i += 2)
    {
      g_autofree char *mark = g_strdup_printf ("%d", 1 << i);

      gtk_scale_add_mark (self->r_scale, i, GTK_POS_BOTTOM, mark);
    }
  gtk_widget_set_hexpand (GTK_WIDGET (self->r_scale), TRUE);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->r_scale),
                               _("Number of noise realizations R (log scale): the estimate's error shrinks like 1/√R"));
  g_signal_connect (self->r_scale, "value-changed", G_CALLBACK (teaching_r_changed), self);
  gtk_box_append (GTK_BOX (controls), GTK_WIDGET (self->r_scale));
  self->r_label = GTK_LABEL (gtk_label_new ("R"));
  gtk_label_set_width_chars (self->r_label, 9);
  gtk_box_append (GTK_BOX (controls), GTK_WIDGET (self->r_label));
  button = gtk_button_new_with_mnemonic (_("_Draw New Noise"));
  gtk_widget_set_tooltip_text (button, _("Draw a new noise realization (next seed)"));
  g_signal_connect (button, "clicked", G_CALLBACK (teaching_new_noise), self);
  gtk_box_append (GTK_BOX (controls), button);
  gtk_box_append (GTK_BOX (content), controls);

  self->plot = RPE_CURVE_VIEW (rpe_curve_view_new_plot ());
  /* 220 px high (taller in presentation mode, with its text) */
  rpe_curve_view_set_size_hints (self->plot, 200, 220, 360, 220);
  gtk_widget_set_vexpand (GTK_WIDGET (self->plot), FALSE);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->plot),
                               _("Template error: relative Frobenius error of the empirical template P̂ against the analytic P̃, against R (mean over 3 draws); not the attention error of the caption"));
  gtk_box_append (GTK_BOX (content), GTK_WIDGET (self->plot));
  rpe_figure_page_set_content (page, content);
}

GtkWidget *
rpe_teaching_view_new (RpeExplorerState *state)
{
  RpeTeachingView *self = g_object_new (RPE_TYPE_TEACHING_VIEW, NULL);

  rpe_figure_page_set_state (RPE_FIGURE_PAGE (self), state);
  teaching_sync_r (self);
  return GTK_WIDGET (self);
}

RpeTeaching *
rpe_teaching_view_get_result (RpeTeachingView *self)
{
  g_return_val_if_fail (RPE_IS_TEACHING_VIEW (self), NULL);
  return teaching_result (self);
}

RpeFigureView *
rpe_teaching_view_get_maps (RpeTeachingView *self)
{
  g_return_val_if_fail (RPE_IS_TEACHING_VIEW (self), NULL);
  return self->maps;
}

RpeCurveView *
rpe_teaching_view_get_plot (RpeTeachingView *self)
{
  g_return_val_if_fail (RPE_IS_TEACHING_VIEW (self), NULL);
  return self->plot;
}

/* exact | estimate | difference as `rpe export spe-vs-rpe` draws them
 * (app/rpe-cli-export.c): the first two on one linear scale, the difference
 * symmetric on the diverging map. */
/* The figure of t for the snapshot s (any thread). */
static RpeFigureBundle *
teaching_figure (RpeTeaching               *t,
                 const RpeExplorerSnapshot *s,
                 const TeachingLook        *look)
{
  const RpeColormap *cmap = look->cmap;
  RpeFigureBundle *b;
  const float *maps[3];

  if (t == NULL)
    return NULL;
  maps[0] = t->exact;
  maps[1] = t->estimate;
  maps[2] = t->difference;

  b = rpe_figure_bundle_new (RPE_FIGURE_COMPARE);
  rpe_figure_bundle_keep (b, rpe_teaching_ref (t), (GDestroyNotify) rpe_teaching_unref);
  b->fig.n_panels = 3;
  b->fig.share_scale = look->shared;
  for (guint i = 0; i < 3; i++)
    {
      RpeHeatmapData *d = &b->fig.panels[i];

      rpe_heatmap_data_init (d);
      d->values = maps[i];
      d->rows = t->n;
      d->cols = t->n;
      d->colormap = cmap;
      d->reduce = RPE_HEATMAP_REDUCE_MEAN;
      d->equal_aspect = TRUE;
      d->train_length = look->train;
      d->scale = i < 2 ? RPE_HEATMAP_SCALE_LINEAR : RPE_HEATMAP_SCALE_SYMMETRIC;
      d->transform = i < 2 ? look->transform : look->diff_transform;
      d->transform_param = look->param;
    }
  b->fig.panels[2].colormap = rpe_colormap_is_diverging (cmap) ? cmap : rpe_colormap_default_diverging ();
  for (guint i = 0; i < 3; i++)
    {
      b->fig.panels[i].title = rpe_figure_bundle_keep (b, rpe_figure_compare_panel (i, t->r), g_free);
      b->fig.panels[i].colorbar_label = rpe_figure_compare_bar (i);
    }
  b->fig.title = rpe_figure_bundle_keep (b, rpe_figure_compare_title (s->spe_kind == RPE_SPE_SINE, s->gated, t->head,
                                                                      s->causal, t->n), g_free);
  b->has_attention = TRUE;
  b->default_name = g_strdup_printf ("spe-vs-rpe-h%zu", t->head);
  return b;
}

static void
teaching_look (RpeTeachingView *self,
               TeachingLook    *look)
{
  RpeFigureLook attention, signed_values;

  rpe_figure_page_get_look (RPE_FIGURE_PAGE (self), TRUE, &attention);
  rpe_figure_page_get_look (RPE_FIGURE_PAGE (self), FALSE, &signed_values);
  look->cmap = attention.colormap;
  look->transform = attention.transform;
  look->diff_transform = signed_values.transform;
  look->param = attention.param;
  look->shared = attention.shared;
  look->train = attention.train;
}

/* An animated sweep of the view: frames computed by rpe_compute_teaching (the code of the
 * view's own job, without the error curve the figure does not show). */
typedef struct
{
  TeachingLook         look;
  gsize                n_cap;
} TeachingSweep;

static RpeFigureBundle *
teaching_sweep_frame (RpeExplorerSnapshot       *s,
                      gconstpointer              look,
                      GCancellable              *cancellable,
                      GError                   **error)
{
  const TeachingSweep *ts = look;
  RpeTeaching *t = rpe_compute_teaching (s, ts->n_cap, cancellable, error);
  RpeFigureBundle *b;

  if (t == NULL)
    return NULL;
  b = teaching_figure (t, s, &ts->look);
  rpe_teaching_unref (t);
  return b;
}

static void
teaching_setup_sweep (RpeFigurePage   *page,
                      RpeExportDialog *dialog)
{
  TeachingSweep ts = { 0 };

  teaching_look (RPE_TEACHING_VIEW (page), &ts.look);
  ts.n_cap = rpe_figure_page_get_n_cap (page);
  rpe_figure_page_offer_sweep (page, dialog, teaching_sweep_frame, &ts, sizeof ts);
}


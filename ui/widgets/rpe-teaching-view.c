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

  RpeHeatmapView   *maps[3];
  GtkScale         *r_scale;
  GtkLabel         *r_label;
  RpeCurveView     *plot;
  GtkWidget        *row_clear;
  gssize            row;          /* the query row m plotted below (exact and estimate); -1: none */
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

/* The plot of row m of the exact and estimated maps: a(m, .) and â(m, .) over the key
 * positions of the maps (their x range). */
static gboolean
teaching_row_plot (RpeTeachingView *self)
{
  RpeTeaching *t = teaching_result (self);
  RpeCurvePlot plot;
  RpeCurveSeries series[2] = { { 0 }, { 0 } };
  g_autofree char *title = NULL;

  g_clear_pointer (&self->row_x, g_free);
  g_clear_pointer (&self->row_y, g_free);
  gtk_widget_set_visible (self->row_clear, self->row >= 0);
  if (self->row < 0 || t == NULL || (gsize) self->row >= t->n)
    return FALSE;
  self->row_x = g_new (double, t->n);
  self->row_y = g_new (double, 2 * t->n);
  for (gsize n = 0; n < t->n; n++)
    {
      self->row_x[n] = (double) n;
      self->row_y[n] = t->exact[(gsize) self->row * t->n + n];
      self->row_y[t->n + n] = t->estimate[(gsize) self->row * t->n + n];
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
                           self->row);
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
  double lo = 0.0, hi = 1.0;
  gboolean fixed = FALSE;
  TeachingLook look;

  if (t->n_curve > 0 && t != self->curve)
    {
      rpe_teaching_ref (t);
      g_clear_pointer (&self->curve, rpe_teaching_unref);
      self->curve = t;
    }
  teaching_look (self, &look);
  {
    /* the range the exported figure gives exact and estimate (rpe-export.c: the union of
     * their ranges when shared) */
    g_autoptr (RpeFigureBundle) b = teaching_figure (t, rpe_figure_page_get_result_snapshot (page), &look);

    lo = INFINITY;
    hi = -INFINITY;
    for (guint i = 0; i < 2 && look.shared; i++)
      {
        double a0, a1;

        if (rpe_plot_heatmap_range (&b->fig.panels[i], &a0, &a1, NULL))
          {
            lo = fmin (lo, a0);
            hi = fmax (hi, a1);
            fixed = TRUE;
          }
      }
  }
  for (guint i = 0; i < 3; i++)
    {
      g_autoptr (GBytes) bytes = rpe_teaching_dup_bytes (t, i);

      rpe_heatmap_view_set_data (self->maps[i], bytes, t->n, t->n);
      g_autofree char *panel_title = rpe_figure_compare_panel (i, t->r);

      rpe_heatmap_view_set_title (self->maps[i], panel_title);
      if (i < 2)
        {
          rpe_heatmap_view_set_colormap (self->maps[i], look.cmap);
          rpe_heatmap_view_set_scale (self->maps[i], RPE_HEATMAP_SCALE_LINEAR);
          rpe_heatmap_view_set_range (self->maps[i], fixed, lo, hi);
          rpe_heatmap_view_set_transform (self->maps[i], look.transform, look.param);
        }
      else
        rpe_heatmap_view_set_transform (self->maps[i], look.diff_transform, look.param);
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

static void action_row (GtkWidget *widget, const char *action_name, GVariant *parameter);

static void
rpe_teaching_view_class_init (RpeTeachingViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
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

  gtk_widget_class_install_action (widget_class, "teaching.row", "i", action_row);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Down, 0, "teaching.row", "i", 1);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Up, 0, "teaching.row", "i", -1);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Page_Down, 0, "teaching.row", "i", 10);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Page_Up, 0, "teaching.row", "i", -10);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Delete, 0, "teaching.row", "i", 0);
}

void
rpe_teaching_view_set_row (RpeTeachingView *self,
                           gssize           m)
{
  RpeTeaching *t;

  g_return_if_fail (RPE_IS_TEACHING_VIEW (self));
  t = teaching_result (self);
  if (m < 0 || t == NULL || (gsize) m >= t->n)
    m = -1;
  self->row = m;
  teaching_update_plot (self);
}

gssize
rpe_teaching_view_get_row (RpeTeachingView *self)
{
  g_return_val_if_fail (RPE_IS_TEACHING_VIEW (self), -1);
  return self->row;
}

static void
map_released (GtkGestureClick *gesture,
              int              n_press,
              double           x,
              double           y,
              RpeTeachingView *self)
{
  GtkWidget *map = gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (gesture));
  gsize row, col;

  gtk_widget_grab_focus (GTK_WIDGET (self));
  if (n_press == 1 && rpe_heatmap_view_cell_at (RPE_HEATMAP_VIEW (map), x, y, &row, &col))
    rpe_teaching_view_set_row (self, (gssize) row);
}

static void
row_clear_clicked (GtkButton       *button,
                   RpeTeachingView *self)
{
  rpe_teaching_view_set_row (self, -1);
}

static void
action_row (GtkWidget  *widget,
            const char *action_name,
            GVariant   *parameter)
{
  RpeTeachingView *self = RPE_TEACHING_VIEW (widget);
  gint32 step = g_variant_get_int32 (parameter);
  gssize n = teaching_result (self) != NULL ? (gssize) teaching_result (self)->n : 0;

  if (step == 0 || n == 0)
    rpe_teaching_view_set_row (self, -1);
  else
    rpe_teaching_view_set_row (self, CLAMP (self->row >= 0 ? self->row + step : n / 2, 0, n - 1));
}

static void
rpe_teaching_view_init (RpeTeachingView *self)
{
  RpeFigurePage *page = RPE_FIGURE_PAGE (self);
  GtkWidget *content, *row, *controls, *button, *label;

  self->row = -1;
  gtk_widget_set_focusable (GTK_WIDGET (self), TRUE);
  rpe_figure_page_set_n_cap (page, TEACHING_N_CAP);
  /* the caption explains two errors: three lines at the window's usual widths */
  rpe_figure_page_set_caption_lines (page, 3);

  content = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  gtk_box_set_homogeneous (GTK_BOX (row), TRUE);
  gtk_widget_set_vexpand (row, TRUE);
  for (guint i = 0; i < 3; i++)
    {
      self->maps[i] = RPE_HEATMAP_VIEW (rpe_heatmap_view_new ());
      rpe_heatmap_view_set_scale (self->maps[i], i < 2 ? RPE_HEATMAP_SCALE_LINEAR : RPE_HEATMAP_SCALE_SYMMETRIC);
      gtk_box_append (GTK_BOX (row), GTK_WIDGET (self->maps[i]));
      {
        GtkGesture *click = gtk_gesture_click_new ();

        g_signal_connect (click, "released", G_CALLBACK (map_released), self);
        gtk_widget_add_controller (GTK_WIDGET (self->maps[i]), GTK_EVENT_CONTROLLER (click));
      }
    }
  gtk_widget_set_tooltip_markup (GTK_WIDGET (self->maps[0]),
                                 _("Exact relative attention: softmax of Σ<sub>d</sub> q k P̃<sub>d</sub>(m − n) / √D"));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->maps[1]),
                               _("SPE estimate: softmax of Q̂ K̂ᵀ / √R from R noise realizations"));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->maps[2]), _("The estimate's error â − a (estimate − exact)"));
  gtk_box_append (GTK_BOX (content), row);

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
  self->row_clear = gtk_button_new_with_mnemonic (_("C_lear Row"));
  gtk_widget_set_tooltip_text (self->row_clear, _("Back to the template error curve (Delete). Click a row of a map, "
                               "or press \u2191/\u2193 with the view focused, to plot that query row"));
  g_signal_connect (self->row_clear, "clicked", G_CALLBACK (row_clear_clicked), self);
  gtk_widget_set_visible (self->row_clear, FALSE);
  gtk_box_append (GTK_BOX (controls), self->row_clear);
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

RpeHeatmapView *
rpe_teaching_view_get_heatmap (RpeTeachingView *self,
                               guint            which)
{
  g_return_val_if_fail (RPE_IS_TEACHING_VIEW (self) && which < 3, NULL);
  return self->maps[which];
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
  RpeExplorerSnapshot *snapshot;
  TeachingLook         look;
  gsize                n_cap;
} TeachingSweep;

static void
teaching_sweep_free (gpointer p)
{
  TeachingSweep *ts = p;

  rpe_explorer_snapshot_unref (ts->snapshot);
  g_free (ts);
}

static RpeFigureBundle *
teaching_sweep_frame (gpointer        data,
                      RpeSweepParam   param,
                      gint64          value,
                      GCancellable   *cancellable,
                      GError        **error)
{
  TeachingSweep *ts = data;
  g_autoptr (RpeExplorerSnapshot) s = rpe_explorer_snapshot_with_sweep (ts->snapshot, param, value);
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
  RpeTeachingView *self = RPE_TEACHING_VIEW (page);
  TeachingSweep *ts;
  RpeExplorerSnapshot *s;

  s = rpe_explorer_state_snapshot (teaching_state (self));
  ts = g_new0 (TeachingSweep, 1);
  ts->snapshot = s;
  teaching_look (self, &ts->look);
  ts->n_cap = rpe_figure_page_get_n_cap (page);
  rpe_export_dialog_set_sweep (dialog, teaching_sweep_frame, ts, teaching_sweep_free, (gint64) s->r, (gint64) s->n,
                               (gint64) s->seed);
}


/* rpe-curves-page.c: the Curves page: its request (rpe_compute_curves_async at min (N, cap)),
 * its drawing (four plots) and nothing else of its own. */
#include "config.h"

#include <glib/gi18n.h>

#include "rpe-curves-page.h"
#include "rpe-figure-names.h"

/* What the curves depend on: not the colours, what the templates grid or the attention view
 * show, the content, the feature map or the other pages' settings. */
#define CURVES_CHANGES (RPE_EXPLORER_CHANGE_ALL & ~(RPE_EXPLORER_CHANGE_LOOK | RPE_EXPLORER_CHANGE_TEMPLATE_KIND   \
                                                   | RPE_EXPLORER_CHANGE_METHOD | RPE_EXPLORER_CHANGE_CONTENT      \
                                                   | RPE_EXPLORER_CHANGE_FEATURE_MAP | RPE_EXPLORER_CHANGE_COMPARE \
                                                   | RPE_EXPLORER_CHANGE_GRID))

struct _RpeCurvesPage
{
  RpeFigurePage     parent_instance;

  RpeCurveView     *plots[4];
};

G_DEFINE_FINAL_TYPE (RpeCurvesPage, rpe_curves_page, RPE_TYPE_FIGURE_PAGE)

static void
curves_show (RpeFigurePage *page,
             gpointer       result)
{
  RpeCurvesPage *self = RPE_CURVES_PAGE (page);
  RpeCurves *c = result;
  RpeCurveSeries series[4 * RPE_CURVES_MAX_SERIES];
  RpeCurvePlot plots[4];
  g_autofree char *ntrain = g_strdup_printf (RPE_FIG_N_TRAIN " = %zu", c->n_train);

  rpe_curves_fill_plots (c, plots, series, ntrain);
  for (guint i = 0; i < 4; i++)
    rpe_curve_view_set_plot (self->plots[i], &plots[i]);
  rpe_figure_page_set_caption (page, _("Profiles of the chosen head, the SPE estimator's error against R "
                                       "(2 draws, the head's features), and how each scheme behaves beyond the "
                                       "training length (identical content at every position)."));
}

static gboolean
curves_start (RpeFigurePage       *page,
              RpeExplorerSnapshot *snapshot,
              gsize                n_cap,
              GCancellable        *cancellable,
              GAsyncReadyCallback  callback,
              gpointer             user_data,
              char               **why)
{
  rpe_compute_curves_async (snapshot, n_cap, rpe_figure_page_job_progress, page, cancellable, callback, user_data);
  return TRUE;
}

static gpointer
curves_finish (RpeFigurePage *page,
               GAsyncResult  *result,
               GError       **error)
{
  return rpe_compute_curves_finish (result, error);
}

static void
curves_result_size (RpeFigurePage *page,
                    gconstpointer  result,
                    gsize         *n,
                    gsize         *n_asked)
{
  const RpeCurves *c = result;

  *n = c->n;
  *n_asked = c->n_asked;
}

/* The four plots in one figure (2 x 2; CSV: the extrapolation table), as `rpe export curves`. */
static RpeFigureBundle *
curves_build_figure (RpeFigurePage *page)
{
  RpeCurves *c = rpe_figure_page_get_result (page);
  RpeFigureBundle *b;
  RpeCurvePlot *plots;
  RpeCurveSeries *series;
  char *strings[2] = { NULL, NULL };
  guint head = 0;

  g_object_get (rpe_figure_page_get_state (page), "head", &head, NULL);
  b = rpe_figure_bundle_new (RPE_FIGURE_CURVES);
  rpe_figure_bundle_keep (b, rpe_curves_ref (c), (GDestroyNotify) rpe_curves_unref);
  plots = rpe_figure_bundle_keep (b, g_new0 (RpeCurvePlot, 4), g_free);
  series = rpe_figure_bundle_keep (b, g_new0 (RpeCurveSeries, 4 * RPE_CURVES_MAX_SERIES), g_free);
  /* the figure `rpe export curves` draws of the same curves (rpe-compute.c) */
  rpe_curves_figure_fill (&b->fig, c, head, plots, series, strings);
  rpe_figure_bundle_keep (b, strings[0], g_free);
  rpe_figure_bundle_keep (b, strings[1], g_free);
  b->default_name = g_strdup ("curves");
  return b;
}

static void
rpe_curves_page_class_init (RpeCurvesPageClass *klass)
{
  RpeFigurePageClass *page_class = RPE_FIGURE_PAGE_CLASS (klass);

  page_class->job_changes = CURVES_CHANGES;
  page_class->cap_kind = RPE_COMPUTE_JOB_CURVES;
  page_class->result_free = (GDestroyNotify) rpe_curves_unref;
  page_class->what = N_("the curves");
  page_class->start_job = curves_start;
  page_class->finish_job = curves_finish;
  page_class->show_result = curves_show;
  page_class->result_size = curves_result_size;
  page_class->build_figure = curves_build_figure;
}

static void
rpe_curves_page_init (RpeCurvesPage *self)
{
  GtkWidget *grid = gtk_grid_new ();

  rpe_figure_page_set_n_cap (RPE_FIGURE_PAGE (self), RPE_COMPUTE_CURVES_N_CAP);
  gtk_grid_set_row_homogeneous (GTK_GRID (grid), TRUE);
  gtk_grid_set_column_homogeneous (GTK_GRID (grid), TRUE);
  gtk_grid_set_row_spacing (GTK_GRID (grid), 6);
  gtk_grid_set_column_spacing (GTK_GRID (grid), 6);
  for (guint i = 0; i < 4; i++)
    {
      self->plots[i] = RPE_CURVE_VIEW (rpe_curve_view_new_plot ());
      gtk_grid_attach (GTK_GRID (grid), GTK_WIDGET (self->plots[i]), i % 2, i / 2, 1, 1);
    }
  gtk_widget_set_tooltip_markup (GTK_WIDGET (self->plots[0]), _("Lag profiles P(τ) of the chosen head and feature"));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->plots[1]), _("Estimator error against R, log-log; the slope should be about −1/2"));
  gtk_widget_set_tooltip_markup (GTK_WIDGET (self->plots[2]), _("Mean attended distance per query position, beyond the training length N<sub>train</sub>"));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->plots[3]), _("Translation invariance per query position (Wang et al. 2021)"));
  rpe_figure_page_set_content (RPE_FIGURE_PAGE (self), grid);
}

GtkWidget *
rpe_curves_page_new (RpeExplorerState *state)
{
  RpeCurvesPage *self = g_object_new (RPE_TYPE_CURVES_PAGE, NULL);

  rpe_figure_page_set_state (RPE_FIGURE_PAGE (self), state);
  return GTK_WIDGET (self);
}

RpeCurves *
rpe_curves_page_get_result (RpeCurvesPage *self)
{
  g_return_val_if_fail (RPE_IS_CURVES_PAGE (self), NULL);
  return rpe_figure_page_get_result (RPE_FIGURE_PAGE (self));
}

RpeCurveView *
rpe_curves_page_get_plot (RpeCurvesPage *self,
                          guint          i)
{
  g_return_val_if_fail (RPE_IS_CURVES_PAGE (self) && i < 4, NULL);
  return self->plots[i];
}

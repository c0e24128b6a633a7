/* rpe-outputs-render.c: the Outputs figure (GTK-free). */
#include "config.h"

#include "rpe-outputs-render.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <glib/gi18n.h>

#include "rpe-alloc.h"
#include "rpe-figure-names.h"

struct _RpeOutputsFigure
{
  RpeFigure       fig;
  RpeCurvePlot    plots[2];
  RpeCurveSeries  series[3];
  RpeCurveTable  *table;
  float          *maps;          /* 3 x (Dv, N): reference, estimate, difference, transposed */
  double         *x;             /* N positions */
  double         *lines;         /* 2 x N: channel c of the reference and the estimate */
  char           *title;
  char           *titles[3];
  char           *labels[2];
  char           *plot_titles[2];
  char           *y_label;
};

void
rpe_outputs_figure_free (RpeOutputsFigure *f)
{
  if (f == NULL)
    return;
  rpe_curve_table_free (f->table);
  rpe_free (f->maps);
  rpe_free (f->x);
  rpe_free (f->lines);
  g_free (f->title);
  for (guint i = 0; i < 3; i++)
    g_free (f->titles[i]);
  for (guint i = 0; i < 2; i++)
    {
      g_free (f->labels[i]);
      g_free (f->plot_titles[i]);
    }
  g_free (f->y_label);
  g_free (f);
}

const RpeFigure *
rpe_outputs_figure_get (const RpeOutputsFigure *f)
{
  return f != NULL ? &f->fig : NULL;
}

static RpeStatus
build_table (RpeOutputsFigure *f,
             const RpeOutputs *o)
{
  RpeStatus st = RPE_OK;
  size_t n = o->n;
  double *col = g_new (double, n);

  f->table = rpe_curve_table_new (n, &st);
  if (f->table == NULL)
    goto out;
  for (size_t m = 0; m < n; m++)
    col[m] = (double) m;
  st = rpe_curve_table_add_column (f->table, "position", col, NULL);
  for (size_t c = 0; c < o->dv && st == RPE_OK; c++)
    {
      char name[64];

      for (size_t m = 0; m < n; m++)
        col[m] = o->reference[m * o->dv + c];
      snprintf (name, sizeof name, "reference_c%zu", c);
      st = rpe_curve_table_add_column (f->table, name, col, NULL);
      for (size_t m = 0; m < n && st == RPE_OK; m++)
        col[m] = o->estimate[m * o->dv + c];
      snprintf (name, sizeof name, "estimate_c%zu", c);
      if (st == RPE_OK)
        st = rpe_curve_table_add_column (f->table, name, col, NULL);
    }
  if (st == RPE_OK)
    st = rpe_curve_table_add_column (f->table, "error_mean", o->error_mean, NULL);
  if (st == RPE_OK)
    st = rpe_curve_table_add_column (f->table, "error_sd", o->error_sd, NULL);
  if (st == RPE_OK)
    {
      char buf[64];

      st = rpe_curve_table_set_meta (f->table, "compare", rpe_outputs_compare_name (o->compare));
      if (st == RPE_OK)
        st = rpe_curve_table_set_meta (f->table, "causal", o->causal ? "true" : "false");
      snprintf (buf, sizeof buf, "%zu", o->r);
      if (st == RPE_OK)
        st = rpe_curve_table_set_meta (f->table, "R", buf);
      snprintf (buf, sizeof buf, "%zu", o->head);
      if (st == RPE_OK)
        st = rpe_curve_table_set_meta (f->table, "head", buf);
      snprintf (buf, sizeof buf, "%zu", o->n_draws);
      if (st == RPE_OK)
        st = rpe_curve_table_set_meta (f->table, "draws", buf);
      snprintf (buf, sizeof buf, "%zu", o->train_length);
      if (st == RPE_OK)
        st = rpe_curve_table_set_meta (f->table, "N_train", buf);
      if (st == RPE_OK)
        st = rpe_curve_table_set_meta_double (f->table, "relative error (first draw)", o->error);
      /* split at N_train only where it falls inside the sequence (0 or N and beyond: no split,
       * the whole sequence's error is the mean over draws above) */
      if (st == RPE_OK && o->train_length > 0 && o->train_length < o->n)
        st = rpe_curve_table_set_meta_double (f->table, "relative error before N_train (mean over draws)", o->error_before);
      if (st == RPE_OK && o->train_length > 0 && o->train_length < o->n)
        st = rpe_curve_table_set_meta_double (f->table, "relative error from N_train (mean over draws)", o->error_after);
      if (st == RPE_OK)
        st = rpe_curve_table_set_meta_double (f->table, "relative error (mean over draws)", o->error_draws_mean);
      if (st == RPE_OK)
        st = rpe_curve_table_set_meta_double (f->table, "relative error of the mean of the draws", o->error_of_mean);
    }
out:
  g_free (col);
  return st;
}

RpeOutputsFigure *
rpe_outputs_figure_new (const RpeOutputs              *o,
                        const RpeOutputsFigureOptions *options,
                        RpeStatus                     *status)
{
  RpeOutputsFigure *f;
  RpeOutputsFigureOptions none = { 0 };
  size_t n, dv, c, count;
  RpeStatus st = RPE_OK;
  const char *ref_name, *est_name;
  gboolean kernel;

  if (o == NULL || o->reference == NULL || o->n == 0 || o->dv == 0)
    {
      if (status != NULL)
        *status = RPE_ERROR_INVALID_ARGUMENT;
      return NULL;
    }
  if (options == NULL)
    options = &none;
  n = o->n;
  dv = o->dv;
  count = n * dv;
  c = MIN (options->channel, dv - 1);
  kernel = o->compare == RPE_OUTPUTS_KERNEL;
  ref_name = kernel ? _("L V (exact logits)") : _("exact softmax attention");
  est_name = kernel ? _("L\xcc\x82 V (SPE logits)") : _("SPE linear attention");

  f = g_new0 (RpeOutputsFigure, 1);
  f->maps = rpe_alloc (count, 3 * sizeof (float), &st);
  f->x = f->maps != NULL ? rpe_alloc (n, sizeof (double), &st) : NULL;
  f->lines = f->x != NULL ? rpe_alloc (n, 2 * sizeof (double), &st) : NULL;
  if (f->lines == NULL || (st = build_table (f, o)) != RPE_OK)
    {
      rpe_outputs_figure_free (f);
      if (status != NULL)
        *status = st;
      return NULL;
    }
  for (size_t m = 0; m < n; m++)
    for (size_t j = 0; j < dv; j++)
      {
        f->maps[j * n + m] = o->reference[m * dv + j];
        f->maps[count + j * n + m] = o->estimate[m * dv + j];
        f->maps[2 * count + j * n + m] = o->difference[m * dv + j];
      }
  for (size_t m = 0; m < n; m++)
    {
      f->x[m] = (double) m;
      f->lines[m] = o->reference[m * dv + c];
      f->lines[n + m] = o->estimate[m * dv + c];
    }

  rpe_figure_init (&f->fig, RPE_FIGURE_COMPARE);
  if (options->title != NULL)
    f->title = g_strdup (options->title);
  else
    /* Translators: "Outputs Y, head 0, sine: exact softmax attention vs SPE linear attention, φ = elu
     * (R = 64, causal)": the method, the two names, the feature map and ", causal" fill the %s */
    f->title = g_strdup_printf (_("Outputs Y, head %zu%s%s: %s vs %s%s%s (R = %zu%s)"), o->head,
                                options->method != NULL ? ", " : "", options->method != NULL ? options->method : "",
                                ref_name, est_name,
                                !kernel && options->feature_map != NULL ? ", \xcf\x86 = " : "",
                                !kernel && options->feature_map != NULL ? options->feature_map : "",
                                o->r, o->causal ? _(", causal") : "");
  f->fig.title = f->title[0] != '\0' ? f->title : NULL;
  f->titles[0] = g_strdup_printf ("Y: %s", ref_name);
  f->titles[1] = g_strdup_printf (_("Y: %s, seed %llu"), est_name, (unsigned long long) o->seed);
  f->titles[2] = g_strdup_printf (_("difference (relative error %.3g)"), o->error);
  f->fig.n_panels = 3;
  f->fig.share_scale = !options->per_panel;
  for (guint i = 0; i < 3; i++)
    {
      RpeHeatmapData *d = &f->fig.panels[i];

      rpe_heatmap_data_init (d);
      if (options->transform != RPE_HEATMAP_TRANSFORM_ATTENTION)
        {
          d->transform = options->transform;
          d->transform_param = options->transform_param;
        }
      d->values = f->maps + i * count;
      d->rows = dv;
      d->cols = n;
      d->title = f->titles[i];
      d->x_label = _("position m");
      d->y_label = _("channel");
      d->train_length = o->train_length;
      d->hide_train_label = i > 0;   /* said once, on the top strip */
      d->font_size = 10.0;
      d->colorbar_label = i == 2 ? "\xce\x94Y" : "Y";
      d->equal_aspect = false;
      /* softmax outputs of values >= 0 are read on a linear map; signed outputs (L V, and
       * every difference) on the diverging one, 0 at its centre */
      if (i == 2 || kernel)
        {
          d->scale = RPE_HEATMAP_SCALE_SYMMETRIC;
          d->colormap = options->colormap != NULL && rpe_colormap_is_diverging (options->colormap)
                        ? options->colormap : rpe_colormap_lookup ("rdbu");
        }
      else
        {
          d->scale = RPE_HEATMAP_SCALE_LINEAR;
          d->colormap = options->colormap;
        }
    }

  f->labels[0] = g_strdup (ref_name);
  f->labels[1] = g_strdup (est_name);
  for (guint i = 0; i < 2; i++)
    {
      RpeCurveSeries *s = &f->series[i];

      memset (s, 0, sizeof *s);
      s->x = f->x;
      s->y = f->lines + i * n;
      s->n = n;
      s->label = f->labels[i];
      s->dashed = i == 1;
    }
  memset (&f->series[2], 0, sizeof f->series[2]);
  f->series[2].x = f->x;
  f->series[2].y = o->error_mean;
  f->series[2].n = n;
  f->series[2].y_err = o->n_draws > 1 ? o->error_sd : NULL;
  f->series[2].label = o->n_draws > 1 ? _("mean over draws \xc2\xb1 1 sd") : NULL;
  rpe_curve_palette (3, f->series[2].color);
  f->series[2].color[3] = 1.0;

  f->plot_titles[0] = g_strdup_printf (_("channel %zu"), c);
  f->plot_titles[1] = o->n_draws > 1
                      ? g_strdup_printf (ngettext ("relative error per position (%zu draw)",
                                                   "relative error per position (%zu draws)", o->n_draws), o->n_draws)
                      : g_strdup (_("relative error per position"));
  for (guint i = 0; i < 2; i++)
    {
      RpeCurvePlot *p = &f->plots[i];

      rpe_curve_plot_init (p);
      p->title = f->plot_titles[i];
      p->font_size = 10.0;
      p->x_label = _("position m");
      p->fixed_x = true;
      p->x_min = 0;
      p->x_max = (double) (n > 1 ? n - 1 : 1);
      if (o->train_length > 0 && o->train_length < n)
        {
          p->x_marker = (double) o->train_length;
          p->x_marker_label = RPE_FIG_N_TRAIN;
        }
    }
  f->y_label = g_strdup ("Y");
  f->plots[0].series = f->series;
  f->plots[0].n_series = 2;
  f->plots[0].y_label = f->y_label;
  f->plots[1].series = f->series + 2;
  f->plots[1].n_series = 1;
  f->plots[1].y_label = "\xe2\x80\x96\xce\x94Y<sub>m</sub>\xe2\x80\x96 / \xe2\x80\x96Y<sub>m</sub>\xe2\x80\x96";
  f->plots[1].y_log = true;
  f->plots[1].legend = o->n_draws > 1 ? RPE_CURVE_LEGEND_BEST : RPE_CURVE_LEGEND_NONE;
  f->fig.plots = f->plots;
  f->fig.n_plots = 2;
  f->fig.table = f->table;
  if (status != NULL)
    *status = RPE_OK;
  return f;
}

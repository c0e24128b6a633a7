/* rpe-compare-render.c: the Compare triptych and the Overview grid. */
#include "config.h"

#include "rpe-compare-render.h"

#include <math.h>

#include <glib/gi18n.h>

#include "rpe-figure-names.h"

/* The parts of "x, y, z" captions: what both say goes in the figure title, what differs in the
 * panel titles (so each panel says what its side is, and the titles stay short). */
static void
split_captions (const char *a,
                const char *b,
                char      **only_a,
                char      **only_b,
                char      **common)
{
  g_auto (GStrv) pa = g_strsplit (a != NULL ? a : "", ", ", -1);
  g_auto (GStrv) pb = g_strsplit (b != NULL ? b : "", ", ", -1);
  GString *sa = g_string_new (NULL), *sb = g_string_new (NULL), *sc = g_string_new (NULL);

  for (guint i = 0; pa[i] != NULL; i++)
    {
      GString *to = g_strv_contains ((const char * const *) pb, pa[i]) ? sc : sa;

      g_string_append_printf (to, "%s%s", to->len > 0 ? ", " : "", pa[i]);
    }
  for (guint i = 0; pb[i] != NULL; i++)
    if (!g_strv_contains ((const char * const *) pa, pb[i]))
      g_string_append_printf (sb, "%s%s", sb->len > 0 ? ", " : "", pb[i]);
  *only_a = g_string_free (sa, FALSE);
  *only_b = g_string_free (sb, FALSE);
  *common = g_string_free (sc, FALSE);
}

void
rpe_compare_figure_fill (RpeFigure                  *fig,
                         const RpeCompareFigureData *data,
                         char                     ***titles)
{
  const char *bar = data->attention ? _("attention weight") : _("template value");
  double dmax = data->dmax;
  char **t = g_new0 (char *, 5);
  g_autofree char *only_a = NULL, *only_b = NULL, *common = NULL;

  if (dmax <= 0.0 && data->values[2] != NULL)
    for (size_t i = 0; i < data->rows * data->cols; i++)
      if (isfinite (data->values[2][i]))
        dmax = fmax (dmax, fabs (data->values[2][i]));
  if (dmax <= 0.0)
    dmax = data->vmax > data->vmin ? data->vmax - data->vmin : 1.0;   /* identical sides: all white, on
                                                                        * the scale of A's span */
  split_captions (data->caption[0], data->caption[1], &only_a, &only_b, &common);
  t[0] = *only_a != '\0' ? g_strdup_printf ("A: %s", only_a) : g_strdup ("A");
  t[1] = *only_b != '\0' ? g_strdup_printf ("B: %s", only_b) : g_strdup ("B");
  t[2] = g_strdup ("A " RPE_FIG_MINUS " B");
  t[3] = g_strdup (common);
  rpe_figure_init (fig, RPE_FIGURE_COMPARE);
  fig->title = data->title != NULL ? data->title : *common != '\0' ? t[3] : NULL;
  fig->n_panels = 3;
  fig->share_scale = TRUE;
  for (guint i = 0; i < 3; i++)
    {
      RpeHeatmapData *p = &fig->panels[i];

      rpe_heatmap_data_init (p);
      p->values = data->values[i];
      p->rows = data->rows;
      p->cols = data->cols;
      p->equal_aspect = TRUE;
      p->title = t[i];
      p->train_length = data->train_length;
      if (data->n > 0 && data->n != data->rows)
        p->row_positions = p->col_positions = data->n;
      if (i < 2)
        {
          p->scale = RPE_HEATMAP_SCALE_LINEAR;
          p->fixed_range = TRUE;
          p->vmin = data->vmin;
          p->vmax = data->vmax > data->vmin ? data->vmax : data->vmin + 1e-12;
          p->colormap = data->colormap;
          p->colorbar_label = bar;
          if (data->transform != RPE_HEATMAP_TRANSFORM_NONE)
            {
              p->transform = data->transform;
              p->transform_param = data->transform_param;
            }
          else if (data->attention && data->attention_transform)
            p->transform = RPE_HEATMAP_TRANSFORM_ATTENTION;
        }
      else
        {
          p->scale = RPE_HEATMAP_SCALE_SYMMETRIC;
          p->fixed_range = TRUE;
          p->vmin = -dmax;
          p->vmax = dmax;
          p->colormap = data->diverging != NULL ? data->diverging : rpe_colormap_default_diverging ();
          p->colorbar_label = "A " RPE_FIG_MINUS " B";
        }
    }
  *titles = t;
}

void
rpe_overview_figure_fill (RpeFigure                   *fig,
                          const RpeOverviewFigureData *data,
                          RpeHeatmapData             **cells_out,
                          char                      ***titles_out)
{
  size_t count = data->n_layers * data->n_heads;
  RpeHeatmapData *cells = g_new0 (RpeHeatmapData, MAX (count, 1));
  char **titles = g_new0 (char *, count + 1);

  for (size_t l = 0; l < data->n_layers; l++)
    for (size_t h = 0; h < data->n_heads; h++)
      {
        size_t i = l * data->n_heads + h;
        RpeHeatmapData *c = &cells[i];

        rpe_heatmap_data_init (c);
        if (data->layers != NULL && data->layers[l] >= 0)
          titles[i] = g_strdup_printf ("layer %d, head %zu", data->layers[l], h);
        else
          titles[i] = g_strdup_printf ("head %zu", h);
        c->title = titles[i];
        if (data->values != NULL && (data->done == NULL || data->done[i]))
          {
            c->values = data->values + i * data->rows * data->cols;
            c->rows = data->rows;
            c->cols = data->cols;
          }
        c->colormap = data->colormap;
        c->equal_aspect = TRUE;
        c->scale = data->attention ? RPE_HEATMAP_SCALE_LINEAR : RPE_HEATMAP_SCALE_AUTO;
        c->transform = data->transform;
        c->transform_param = data->transform_param;
        if (data->n > 0 && data->n != data->rows)
          c->row_positions = c->col_positions = data->n;
        c->cell_ticks = (l == data->n_layers - 1 ? RPE_HEATMAP_TICKS_X | RPE_HEATMAP_TICKS_X_TEXT : 0)
                        | (h == 0 ? RPE_HEATMAP_TICKS_Y | RPE_HEATMAP_TICKS_Y_TEXT : 0);
      }
  rpe_figure_init (fig, RPE_FIGURE_GRID);
  fig->title = data->title;
  fig->grid.cells = cells;
  fig->grid.n_cells = count;
  fig->grid.n_columns = data->n_heads;
  fig->grid.shared_scale = TRUE;
  fig->grid.colorbar_label = data->attention ? _("attention weight") : _("template value");
  *cells_out = cells;
  *titles_out = titles;
}

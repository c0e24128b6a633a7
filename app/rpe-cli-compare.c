/* rpe-cli-compare.c: `rpe export compare-templates | compare-attention | overview`
 *
 * The Compare and Overview views of the window, headless: the parameters of `rpe export`
 * describe A (and the overview's module); --b-checkpoint, --b-layer, --b-head and --b-method say
 * what B changes.  The maps are computed by the window's own code (ui/explore/rpe-compare.c on an
 * RpeExplorerState built from the options) and drawn by ui/render/rpe-compare-render.c, so the
 * figures are the window's.  .npy writes (3, rows, cols): A, B, A - B; the overview
 * (layers * heads, rows, cols), cell (l, h) at l * H + h.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <glib/gi18n.h>

#include "rpe-compare-render.h"
#include "rpe-compare.h"
#include "rpe-error.h"
#include "rpe-export.h"

#include "rpe-cli.h"

#define EXIT_USAGE 2
#define EXIT_FAILURE_OTHER 1

/* Attention images for pictures are reduced to at most this side (as `rpe export attention`). */
#define PICTURE_MAX_SIDE 2048

typedef struct
{
  char     *out;
  char     *colormap;
  char     *title;
  char     *preset;
  double    width, height, dpi;
  gboolean  attention_transform;
  char     *color_scale;
  double    gamma;
  double    percentile;
  char     *b_checkpoint;
  gint      b_layer;
  gint      b_head;
  char     *b_method;
  char     *cells;
} CompareOptions;

static gboolean
method_from_name (const char *name, RpeExplorerMethod *method)
{
  static const char *names[] = { "spe", "exact", "ape", "lrpe", "fastrpb", "linear" };

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (g_str_equal (name, names[i]))
      {
        *method = (RpeExplorerMethod) i;
        return TRUE;
      }
  return FALSE;
}

/* The explorer's state for the parameters of the options (A). */
static RpeExplorerSnapshot *
snapshot_of_options (const RpeCliOptions *o,
                     RpeSpeParams        *params,
                     GError             **error)
{
  g_autoptr (RpeExplorerState) state = rpe_explorer_state_new ();
  gsize n;

  if (!rpe_cli_load_params (o, params, error))
    return NULL;
  if (!rpe_cli_resolve_length (o, 0, &n, error))
    return NULL;
  if (n < 2 || n > RPE_EXPLORER_MAX_LENGTH)
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--length must be 2 .. %d"), RPE_EXPLORER_MAX_LENGTH);
      return NULL;
    }
  if (o->realizations != RPE_CLI_UNSET && (o->realizations < 1 || o->realizations > RPE_EXPLORER_MAX_R))
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--realizations must be 1 .. %d"), RPE_EXPLORER_MAX_R);
      return NULL;
    }
  if (o->seed < 0 || o->seed > G_MAXINT)
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--seed must be 0 .. %d"), G_MAXINT);
      return NULL;
    }
  if (o->head >= 0 && (gsize) o->head >= params->n_heads)
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--head must be between 0 and %zu (got %d)"),
                     params->n_heads - 1, o->head);
      return NULL;
    }
  if (o->feature >= 0 && (gsize) o->feature >= params->n_features)
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--feature must be between 0 and %zu (got %d)"),
                     params->n_features - 1, o->feature);
      return NULL;
    }
  if (rpe_cli_content_is_capture (o))
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                     _("--content %s: comparisons and the overview take unit or random content; a capture is "
                       "drawn by the views attention, spe-vs-rpe and outputs and by rpe compute"), o->content);
      return NULL;
    }
  if (o->content != NULL && !g_str_equal (o->content, "unit") && !g_str_equal (o->content, "random"))
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--content must be unit or random (got '%s')"), o->content);
      return NULL;
    }
  if (!rpe_explorer_state_set_modules (state, params->method == RPE_SPE_SINE ? params : NULL, "A",
                                       params->method == RPE_SPE_CONV ? params : NULL, "A", error))
    return NULL;
  g_object_set (state,
                "spe-kind", (guint) params->method,
                "length", (guint) n,
                "realizations", (guint) (o->realizations != RPE_CLI_UNSET ? o->realizations : 64),
                "seed", (guint) o->seed,
                "head", (guint) MAX (o->head, 0),
                "feature", (guint) MAX (o->feature, 0),
                "causal", o->causal,
                "gated", params->gate != NULL,
                "method", (guint) (o->exact ? RPE_EXPLORER_METHOD_EXACT : RPE_EXPLORER_METHOD_SPE),
                "content", (guint) (o->content != NULL && g_str_equal (o->content, "random")
                                    ? RPE_CONTENT_RANDOM : RPE_CONTENT_UNIT),
                "train-length", (guint) (o->train_length != RPE_CLI_UNSET && o->train_length > 0
                                         ? MIN (o->train_length, RPE_EXPLORER_MAX_LENGTH) : 0),
                NULL);
  return rpe_explorer_state_snapshot (state);
}

static void
print_usage (FILE *f)
{
  fprintf (f,
           "Usage: rpe export compare-templates|compare-attention|overview [options] -o FILE\n"
           "\n"
           "  compare-templates  A | B | A - B of the template of --head/--feature (analytic)\n"
           "  compare-attention  A | B | A - B of one head's attention map (SPE estimate; --exact)\n"
           "  overview           the template (or --cells attention: the attention map) of every\n"
           "                     layer and head of the --checkpoint's module\n"
           "\n"
           "The parameters (--checkpoint, --layer, --method, --head, --feature, --length, ...) describe A;\n"
           "B is A with what these change:\n"
           "  --b-checkpoint FILE   the same module of another checkpoint (\"demo\", \"demo:NAME\" too)\n"
           "  --b-layer L           layer L of the checkpoint (or of --b-checkpoint)\n"
           "  --b-head H            head H\n"
           "  --b-method M          attention: spe|exact|ape|lrpe|fastrpb|linear; templates: sine|conv\n"
           ".npy writes (3, rows, cols) = A, B, A - B; the overview (layers * heads, rows, cols).\n");
}

int
rpe_cli_export_compare (int argc, char **argv)
{
  RpeCliOptions o;
  CompareOptions co = { 0 };
  g_autoptr (GOptionContext) context = NULL;
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) given = g_strdupv (argv);
  g_autoptr (RpeExplorerSnapshot) snap = NULL;
  RpeSpeParams params = { 0 };
  RpeCompareSide a, b;
  RpeExportFormat format;
  RpeExportSize size = { 0 };
  RpeExportPreset preset;
  const RpeColormap *cmap = NULL;
  const char *view = argc >= 2 ? argv[1] : "";
  gboolean overview = g_str_equal (view, "overview");
  RpeCompareWhat what = g_str_equal (view, "compare-attention") ? RPE_COMPARE_ATTENTION : RPE_COMPARE_TEMPLATES;
  int status = 0;
  RpeHeatmapTransform transform = RPE_HEATMAP_TRANSFORM_NONE;
  double transform_param = 0.0;
  GOptionGroup *group;
  const GOptionEntry main_entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &co.out, N_("Write the figure here (.png, .svg, .pdf, .npy)"), "FILE" },
    { "colormap", 0, 0, G_OPTION_ARG_STRING, &co.colormap, N_("viridis (default), magma, inferno, cividis, rdbu, grey"), "NAME" },
    { "attention-transform", 0, 0, G_OPTION_ARG_NONE, &co.attention_transform, N_("Attention shown as min(1, a^0.4 / 0.02^0.4)"), NULL },
    { "color-scale", 0, 0, G_OPTION_ARG_STRING, &co.color_scale, N_("A and B (overview: every cell): linear (default), log, power (--gamma), percentile (--percentile) or attention"), "NAME" },
    { "gamma", 0, 0, G_OPTION_ARG_DOUBLE, &co.gamma, N_("--color-scale power: the exponent (0.05 .. 10, default 0.5)"), "G" },
    { "percentile", 0, 0, G_OPTION_ARG_DOUBLE, &co.percentile, N_("--color-scale percentile: clip to [P(100 - p), P(p)] (50 .. 100, default 99)"), "P" },
    { "title", 0, 0, G_OPTION_ARG_STRING, &co.title, N_("Figure title"), "T" },
    { "width", 0, 0, G_OPTION_ARG_DOUBLE, &co.width, N_("Width: pixels (PNG) or points (SVG, PDF)"), "W" },
    { "height", 0, 0, G_OPTION_ARG_DOUBLE, &co.height, N_("Height: pixels (PNG) or points (SVG, PDF)"), "H" },
    { "dpi", 0, 0, G_OPTION_ARG_DOUBLE, &co.dpi, N_("PNG resolution (default 150)"), "D" },
    { "preset", 0, 0, G_OPTION_ARG_STRING, &co.preset, N_("column, page or slide"), "NAME" },
    { "b-checkpoint", 0, 0, G_OPTION_ARG_FILENAME, &co.b_checkpoint, N_("B: the same module of this checkpoint"), "FILE" },
    { "b-layer", 0, 0, G_OPTION_ARG_INT, &co.b_layer, N_("B: this layer of the checkpoint"), "L" },
    { "b-head", 0, 0, G_OPTION_ARG_INT, &co.b_head, N_("B: this head"), "H" },
    { "b-method", 0, 0, G_OPTION_ARG_STRING, &co.b_method, N_("B: spe|exact|ape|lrpe|fastrpb|linear (attention), sine|conv (templates)"), "M" },
    { "cells", 0, 0, G_OPTION_ARG_STRING, &co.cells, N_("overview: templates (default) or attention"), "WHAT" },
    { NULL }
  };

  co.b_layer = -1;
  co.b_head = -1;
  rpe_cli_options_init (&o);
  for (int i = 2; i < argc; i++)
    if (g_str_equal (argv[i], "--help") || g_str_equal (argv[i], "-h"))
      {
        print_usage (stdout);
        rpe_cli_options_clear (&o);
        return 0;
      }
  context = g_option_context_new (N_("VIEW - comparison figures"));
  g_option_context_set_translation_domain (context, GETTEXT_PACKAGE);
  g_option_context_add_main_entries (context, main_entries, GETTEXT_PACKAGE);
  group = rpe_cli_parameter_group (&o);
  g_option_context_add_group (context, group);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      fprintf (stderr, _("rpe export %s: %s\n"), view, error->message);
      status = EXIT_USAGE;
      goto done;
    }
  if (argc != 2)
    {
      fprintf (stderr, _("rpe export %s: too many arguments\n"), view);
      status = EXIT_USAGE;
      goto done;
    }
  if (!rpe_cli_check_options ("export", view, given, &error))
    {
      fprintf (stderr, _("rpe export %s: %s\n"), view, error->message);
      status = EXIT_USAGE;
      goto done;
    }
  {
    /* options every other heatmap view reads ('export:*' rows of the table) that these do not */
    static const char *unused[] = { "noise", "gate-noise", "noise-scheme", "queries", "keys", "bias", "bias-layout",
                                    "lrpe-p", "lrpe-lambda", "lrpe-theta", "lrpe-v", "lrpe-theta-file",
                                    "lrpe-permutation", "lrpe-householder" };

    for (guint i = 2; given[i] != NULL; i++)
      for (guint k = 0; k < G_N_ELEMENTS (unused); k++)
        if (g_str_has_prefix (given[i], "--") && g_str_has_prefix (given[i] + 2, unused[k])
            && (given[i][2 + strlen (unused[k])] == '\0' || given[i][2 + strlen (unused[k])] == '='))
          {
            fprintf (stderr, _("rpe export %s: --%s is not used by 'rpe export %s'; remove it\n"), view, unused[k], view);
            status = EXIT_USAGE;
            goto done;
          }
  }
  if (co.out == NULL)
    {
      fprintf (stderr, _("rpe export %s: -o FILE.png|svg|pdf|npy is required\n"), view);
      status = EXIT_USAGE;
      goto done;
    }
  if (!rpe_export_format_from_path (co.out, &format) || format == RPE_EXPORT_CSV)
    {
      fprintf (stderr, _("rpe export %s: cannot tell the format of '%s' (use .png, .svg, .pdf or .npy)\n"), view, co.out);
      status = EXIT_USAGE;
      goto done;
    }
  if (!rpe_cli_check_output (&o, co.out, &error))
    {
      fprintf (stderr, _("rpe export %s: %s\n"), view, error->message);
      status = EXIT_FAILURE_OTHER;
      goto done;
    }
  if (overview && co.cells != NULL)
    {
      if (g_str_equal (co.cells, "attention"))
        what = RPE_COMPARE_ATTENTION;
      else if (!g_str_equal (co.cells, "templates"))
        {
          fprintf (stderr, _("rpe export overview: --cells must be templates or attention (got '%s')\n"), co.cells);
          status = EXIT_USAGE;
          goto done;
        }
    }
  if (overview && o.checkpoint == NULL)
    {
      fprintf (stderr, _("rpe export overview: --checkpoint FILE is required (its layers and heads are shown)\n"));
      status = EXIT_USAGE;
      goto done;
    }
  if (!overview && co.b_checkpoint == NULL && co.b_layer < 0 && co.b_head < 0 && co.b_method == NULL)
    {
      fprintf (stderr, _("rpe export %s: say what B changes: --b-checkpoint, --b-layer, --b-head or --b-method\n"), view);
      status = EXIT_USAGE;
      goto done;
    }
  size.width = co.width;
  size.height = co.height;
  size.dpi = co.dpi;
  if (!rpe_export_preset_from_name (co.preset, &preset))
    {
      fprintf (stderr, _("rpe export %s: unknown --preset '%s' (column, page or slide)\n"), view, co.preset);
      status = EXIT_USAGE;
      goto done;
    }
  rpe_export_preset_apply (preset, &size);
  {
    RpeFigure probe;

    rpe_figure_init (&probe, RPE_FIGURE_COMPARE);
    if (!rpe_export_resolve_size (&probe, format, &size, NULL, NULL, NULL, NULL, &error))
      {
        fprintf (stderr, _("rpe export %s: %s\n"), view, error->message);
        status = EXIT_USAGE;
        goto done;
      }
  }
  if (!rpe_cli_color_scale (view, co.color_scale, co.gamma, co.percentile, co.attention_transform, &transform,
                            &transform_param))
    {
      status = EXIT_USAGE;
      goto done;
    }
  if (co.colormap != NULL && (cmap = rpe_colormap_lookup (co.colormap)) == NULL)
    {
      fprintf (stderr, _("rpe export %s: unknown colour map '%s' (viridis, magma, inferno, cividis, rdbu, grey)\n"),
               view, co.colormap);
      status = EXIT_USAGE;
      goto done;
    }

  snap = snapshot_of_options (&o, &params, &error);
  if (snap == NULL)
    {
      fprintf (stderr, _("rpe export %s: %s\n"), view, error->message);
      status = rpe_cli_exit_code_for_error (error);
      goto done;
    }
  rpe_compare_side_init (&a, snap);
  rpe_compare_side_init (&b, snap);
  a.no_gate = b.no_gate = o.no_gate;
  if (overview)
    {
      g_autoptr (RpeOverview) ov = NULL;
      g_auto (GStrv) titles = NULL;
      g_autofree RpeHeatmapData *cells = NULL;
      RpeOverviewFigureData fd = { 0 };
      RpeFigure fig;

      a.checkpoint = g_strdup (o.checkpoint);
      ov = rpe_overview_compute (&a, what, snap->n,
                                 format == RPE_EXPORT_NPY ? 0 : PICTURE_MAX_SIDE, NULL, &error);
      if (ov == NULL)
        goto fail;
      fd.values = ov->values;
      fd.n_layers = ov->n_layers;
      fd.n_heads = ov->n_heads;
      fd.layers = ov->layers;
      fd.rows = ov->rows;
      fd.cols = ov->cols;
      fd.n = ov->n;
      fd.title = co.title != NULL ? co.title : ov->caption;
      fd.colormap = cmap;
      fd.attention = what == RPE_COMPARE_ATTENTION;
      /* as the window: the SPE paper's transform maps attention weights only */
      fd.transform = transform == RPE_HEATMAP_TRANSFORM_ATTENTION && !fd.attention ? RPE_HEATMAP_TRANSFORM_NONE
                                                                                     : transform;
      fd.transform_param = transform_param;
      rpe_overview_figure_fill (&fig, &fd, &cells, &titles);
      if (!rpe_export_figure (&fig, format, &size, co.out, &error))
        goto fail;
    }
  else
    {
      g_autoptr (RpeComparison) c = NULL;
      g_auto (GStrv) titles = NULL;
      RpeCompareFigureData fd = { { 0 } };
      RpeFigure fig;

      if (co.b_checkpoint != NULL || co.b_layer >= 0)
        {
          if (co.b_checkpoint == NULL && o.checkpoint == NULL)
            {
              rpe_set_error (&error, RPE_ERROR_INVALID_ARGUMENT, _("--b-layer needs --checkpoint (or --b-checkpoint)"));
              goto fail;
            }
          b.checkpoint = g_strdup (co.b_checkpoint != NULL ? co.b_checkpoint : o.checkpoint);
          b.layer = co.b_layer;
        }
      if (co.b_head >= 0)
        b.head = co.b_head;
      if (co.b_method != NULL)
        {
          RpeExplorerMethod m;

          if (what == RPE_COMPARE_TEMPLATES && (g_str_equal (co.b_method, "sine") || g_str_equal (co.b_method, "conv")))
            {
              if (b.checkpoint == NULL)
                {
                  if (o.checkpoint == NULL)
                    {
                      rpe_set_error (&error, RPE_ERROR_INVALID_ARGUMENT,
                                     _("--b-method sine|conv loads the other module of --checkpoint"));
                      goto fail;
                    }
                  b.checkpoint = g_strdup (o.checkpoint);
                  b.layer = o.layer;
                }
              b.spe_kind = g_str_equal (co.b_method, "sine") ? RPE_SPE_SINE : RPE_SPE_CONV;
            }
          else if (what == RPE_COMPARE_ATTENTION && method_from_name (co.b_method, &m))
            b.method = m;
          else
            {
              rpe_set_error (&error, RPE_ERROR_INVALID_ARGUMENT, _("--b-method must be %s (got '%s')"),
                             what == RPE_COMPARE_ATTENTION ? "spe, exact, ape, lrpe, fastrpb or linear" : "sine or conv",
                             co.b_method);
              goto fail;
            }
        }
      c = rpe_compare_compute (&a, &b, what, snap->n, format == RPE_EXPORT_NPY ? 0 : PICTURE_MAX_SIDE, NULL, &error);
      if (c == NULL)
        goto fail;
      fd.values[0] = c->values[0];
      fd.values[1] = c->values[1];
      fd.values[2] = c->values[2];
      fd.rows = c->rows;
      fd.cols = c->cols;
      fd.n = c->n;
      fd.vmin = c->vmin;
      fd.vmax = c->vmax;
      fd.dmax = c->dmax;
      fd.caption[0] = c->caption[0];
      fd.caption[1] = c->caption[1];
      fd.title = co.title;
      fd.colormap = cmap;
      fd.attention = what == RPE_COMPARE_ATTENTION;
      fd.attention_transform = co.attention_transform;
      /* as the window: the SPE paper's transform maps attention weights only */
      fd.transform = transform == RPE_HEATMAP_TRANSFORM_ATTENTION && !fd.attention ? RPE_HEATMAP_TRANSFORM_NONE
                                                                                     : transform;
      fd.transform_param = transform_param;
      if (o.train_length != RPE_CLI_UNSET && o.train_length > 0)
        fd.train_length = (size_t) o.train_length;
      rpe_compare_figure_fill (&fig, &fd, &titles);
      if (!rpe_export_figure (&fig, format, &size, co.out, &error))
        goto fail;
    }
  rpe_compare_side_clear (&a);
  rpe_compare_side_clear (&b);
  goto done;

fail:
  rpe_compare_side_clear (&a);
  rpe_compare_side_clear (&b);
  fprintf (stderr, _("rpe export %s: %s\n"), view, error != NULL ? error->message : "failed");
  status = error != NULL && error->domain == RPE_ERROR && error->code == RPE_ERROR_IO
           ? EXIT_FAILURE_OTHER : rpe_cli_exit_code_for_error (error);

done:
  rpe_spe_params_clear (&params);
  g_free (co.out);
  g_free (co.colormap);
  g_free (co.color_scale);
  g_free (co.title);
  g_free (co.preset);
  g_free (co.b_checkpoint);
  g_free (co.b_method);
  g_free (co.cells);
  rpe_cli_options_clear (&o);
  return status;
}

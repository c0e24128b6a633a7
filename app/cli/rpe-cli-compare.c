/* rpe-cli-compare.c: `rpe export compare-templates | compare-attention | overview`
 *
 * The Compare and Overview views of the window, headless: the parameters of `rpe export`
 * describe A (and the overview's module); --b-checkpoint, --b-layer, --b-head, --b-method and
 * --b-content say what B changes.  A capture (--content, --b-content) is checked against its
 * side's checkpoint and module as the window checks it (rpe_explorer_capture_check).  The maps are computed by the window's own code (ui/explore/rpe-compare.c on an
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
  char     *b_content;
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

/* The fingerprint of checkpoint `path` (NULL and an error when it cannot be read). */
static RpeModelPrint *
model_print_of (const char *path, GError **error)
{
  g_autoptr (RpeTensorSet) set = rpe_cli_read_checkpoint (path, error);

  return set != NULL ? rpe_model_print_new (set, path) : NULL;
}

/* Opens capture `spec` (a file or demo:NAME) for a side; says once on stderr when it records no
 * fingerprint of its model (then nothing can check that it comes from `checkpoint`). */
static RpeExplorerCapture *
open_side_capture (const char *spec, const char *checkpoint, GError **error)
{
  RpeExplorerCapture *capture = rpe_explorer_capture_open (spec, error);

  if (capture != NULL && checkpoint != NULL && rpe_capture_n_model_tensors (capture->capture) == 0)
    fprintf (stderr,
             _("rpe: %s records no fingerprint of the model it was made on: that it comes from %s cannot be "
               "checked\n"),
             spec, checkpoint);
  return capture;
}

/* The explorer's state for the parameters of the options (A); *print the fingerprint of
 * --checkpoint when A's content is a capture (else NULL). */
static RpeExplorerSnapshot *
snapshot_of_options (const RpeCliArgs *o,
                     RpeSpeParams     *params,
                     gboolean          overview,
                     RpeCompareWhat    what,
                     RpeModelPrint   **print,
                     GError          **error)
{
  g_autoptr (RpeExplorerState) state = rpe_explorer_state_new ();
  g_autoptr (RpeExplorerCapture) capture = NULL;
  gsize n = 0;

  if (!rpe_cli_load_params_full (o, params, !overview, error))
    return NULL;
  if (rpe_cli_content_is_capture (o))
    {
      const RpeTensor *q;
      guint            layer;

      if (what == RPE_COMPARE_TEMPLATES)
        {
          rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                         _("--content %s: templates do not depend on the content; a capture is compared by "
                           "compare-attention and drawn by the overview's --cells attention"),
                         o->content.kind);
          return NULL;
        }
      if ((capture = open_side_capture (o->content.kind, o->model.checkpoint, error)) == NULL)
        return NULL;
      layer = o->model.layer >= 0 ? (guint) o->model.layer : rpe_capture_layer (capture->capture, 0);
      q = rpe_capture_get (capture->capture, layer, RPE_CAPTURE_QUERIES);
      if (q != NULL)
        n = q->shape[0];
    }
  if (!rpe_cli_resolve_length (o, n, &n, error))
    return NULL;
  if (n < 2 || n > RPE_EXPLORER_MAX_LENGTH)
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--length must be 2 .. %d"), RPE_EXPLORER_MAX_LENGTH);
      return NULL;
    }
  if (o->draw.realizations != RPE_CLI_UNSET && (o->draw.realizations < 1 || o->draw.realizations > RPE_EXPLORER_MAX_R))
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--realizations must be 1 .. %d"), RPE_EXPLORER_MAX_R);
      return NULL;
    }
  if (o->draw.seed < 0 || o->draw.seed > G_MAXINT)
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--seed must be 0 .. %d"), G_MAXINT);
      return NULL;
    }
  if (o->model.head >= 0 && (gsize) o->model.head >= params->n_heads)
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--head must be between 0 and %zu (got %d)"),
                     params->n_heads - 1, o->model.head);
      return NULL;
    }
  if (o->model.feature >= 0 && (gsize) o->model.feature >= params->n_features)
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--feature must be between 0 and %zu (got %d)"),
                     params->n_features - 1, o->model.feature);
      return NULL;
    }
  if (o->content.kind != NULL && !g_str_equal (o->content.kind, "unit") && !g_str_equal (o->content.kind, "random")
      && capture == NULL)
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                     _("--content must be unit, random or a capture (.npz, demo:NAME) (got '%s')"), o->content.kind);
      return NULL;
    }
  if (!rpe_explorer_state_set_modules (state, params->method == RPE_SPE_SINE ? params : NULL, "A",
                                       params->method == RPE_SPE_CONV ? params : NULL, "A", error))
    return NULL;
  g_object_set (state, "spe-kind", (guint) params->method, "length", (guint) n, "realizations",
                (guint) (o->draw.realizations != RPE_CLI_UNSET ? o->draw.realizations : 64), "seed",
                (guint) o->draw.seed, "head", (guint) MAX (o->model.head, 0), "feature",
                (guint) MAX (o->model.feature, 0), "causal", o->attention.causal, "gated", params->gate != NULL,
                "method", (guint) (o->attention.exact ? RPE_EXPLORER_METHOD_EXACT : RPE_EXPLORER_METHOD_SPE), "content",
                (guint) (o->content.kind != NULL && g_str_equal (o->content.kind, "random") ? RPE_CONTENT_RANDOM
                                                                                            : RPE_CONTENT_UNIT),
                "train-length",
                (guint) (o->draw.train_length != RPE_CLI_UNSET && o->draw.train_length > 0
                           ? MIN (o->draw.train_length, RPE_EXPLORER_MAX_LENGTH)
                           : 0),
                NULL);
  if (capture != NULL)
    {
      /* as the window opens it: checked against the checkpoint's model and the module */
      if (o->model.checkpoint != NULL)
        {
          g_autoptr (RpeModelPrint) mp = model_print_of (o->model.checkpoint, error);

          if (mp == NULL)
            return NULL;
          rpe_explorer_state_set_model_print (state, mp);
          *print = rpe_model_print_ref (mp);
        }
      if (!rpe_explorer_state_set_capture (
            state, capture, o->model.layer >= 0 ? (guint) o->model.layer : rpe_capture_layer (capture->capture, 0),
            error))
        return NULL;
    }
  return rpe_explorer_state_snapshot (state);
}

#define C(field) G_STRUCT_OFFSET (CompareOptions, field)

/* clang-format off */
const RpeCliOption rpe_cli_compare_options[] = {
  { .name = "output", .short_name = 'o', .arg = RPE_CLI_ARG_FILE, .offset = C (out),
    .help = N_("Write the figure here (.png, .svg, .pdf, .npy)"), .arg_name = "FILE" },
  RPE_CLI_STRING ("colormap", C (colormap), 0,
                  N_("viridis (default), magma, inferno, cividis, rdbu, grey"),
                  "viridis|magma|inferno|cividis|rdbu|grey"),
  RPE_CLI_FLAG ("attention-transform", C (attention_transform), 0, N_("Attention shown as min(1, a^0.4 / 0.02^0.4)")),
  RPE_CLI_STRING ("color-scale", C (color_scale), 0,
                  N_("A and B (overview: every cell): linear (default), log, power (--gamma), percentile (--percentile) or attention"),
                  "linear|log|power|percentile|attention"),
  RPE_CLI_DOUBLE ("gamma", C (gamma), 0, 0.05, 10,
                  N_("--color-scale power: the exponent (0.05 .. 10, default 0.5)"), "G"),
  RPE_CLI_DOUBLE ("percentile", C (percentile), 0, 50, 100,
                  N_("--color-scale percentile: clip to [P(100 - p), P(p)] (50 .. 100, default 99)"), "P"),
  RPE_CLI_STRING ("title", C (title), 0, N_("Figure title"), "T"),
  RPE_CLI_DOUBLE ("width", C (width), 0, 1, 1e6, N_("Width: pixels (PNG) or points (SVG, PDF)"), "W"),
  RPE_CLI_DOUBLE ("height", C (height), 0, 1, 1e6, N_("Height: pixels (PNG) or points (SVG, PDF)"), "H"),
  RPE_CLI_DOUBLE ("dpi", C (dpi), 0, 10, 2400, N_("PNG resolution (default 150)"), "D"),
  RPE_CLI_STRING ("preset", C (preset), 0, N_("column, page or slide"), "column|page|slide"),
  RPE_CLI_FILE ("b-checkpoint", C (b_checkpoint), RPE_CLI_COMPARE_B,
                N_("B: the same module of this checkpoint (\"demo\", \"demo:NAME\" too)"), "FILE"),
  RPE_CLI_INT ("b-layer", C (b_layer), RPE_CLI_COMPARE_B, 0, G_MAXINT,
               N_("B: this layer of the checkpoint (or of --b-checkpoint) and of B's capture"), "L"),
  RPE_CLI_INT ("b-head", C (b_head), RPE_CLI_COMPARE_B, 0, G_MAXINT, N_("B: this head"), "H"),
  RPE_CLI_STRING ("b-method", C (b_method), RPE_CLI_COMPARE_B,
                  N_("B: spe|exact|ape|lrpe|fastrpb|linear (attention), sine|conv (templates)"), "M"),
  RPE_CLI_FILE ("b-content", C (b_content), RPE_CLI_COMPARE_B,
                N_("B (attention): this capture (.npz, demo:NAME) as content, layer --b-layer (default --layer)"),
                "CAPTURE"),
  RPE_CLI_STRING ("cells", C (cells), RPE_CLI_COMPARE_CELLS,
                  N_("overview: templates (default) or attention"), "templates|attention"),
  { NULL }
};
/* clang-format on */

int
rpe_cli_export_compare (int argc, char **argv)
{
  RpeCliArgs     o;
  CompareOptions co = { 0 };
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeExplorerSnapshot) snap = NULL;
  g_autoptr (RpeModelPrint) a_print = NULL;
  RpeSpeParams params = { 0 };
  RpeCompareSide a, b;
  RpeExportFormat format;
  RpeExportSize size = { 0 };
  RpeExportPreset preset;
  const RpeColormap *cmap = NULL;
  int                 index;
  const RpeCliLeaf   *leaf = rpe_cli_find_leaf (&rpe_cli_export_command, argc, argv, &index);
  const char         *view = leaf != NULL ? leaf->name : "";
  gboolean overview = g_str_equal (view, "overview");
  RpeCompareWhat what = g_str_equal (view, "compare-attention") ? RPE_COMPARE_ATTENTION : RPE_COMPARE_TEMPLATES;
  int status = 0;
  RpeHeatmapTransform transform = RPE_HEATMAP_TRANSFORM_NONE;
  double transform_param = 0.0;

  co.b_layer = -1;
  co.b_head = -1;
  rpe_cli_args_init (&o);
  g_return_val_if_fail (leaf != NULL, EXIT_USAGE);
  if (!rpe_cli_parse (&rpe_cli_export_command, leaf, NULL, &o, &co, &argc, &argv, &status))
    goto done;
  status = EXIT_USAGE;
  if (argc != 2)
    {
      fprintf (stderr, _("rpe export %s: too many arguments\n"), view);
      goto done;
    }
  status = 0;
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
  if (overview && o.model.checkpoint == NULL)
    {
      fprintf (stderr, _("rpe export overview: --checkpoint FILE is required (its layers and heads are shown)\n"));
      status = EXIT_USAGE;
      goto done;
    }
  if (!overview && co.b_checkpoint == NULL && co.b_layer < 0 && co.b_head < 0 && co.b_method == NULL
      && co.b_content == NULL)
    {
      fprintf (
        stderr,
        _("rpe export %s: say what B changes: --b-checkpoint, --b-layer, --b-head, --b-method or --b-content\n"),
        view);
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
    if (!rpe_export_resolve_size (&probe, format, &size, NULL, NULL, NULL, NULL, &error)
        || !rpe_cli_check_image (&probe, format, &size, FALSE, &error))
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

  if (co.b_content != NULL && what != RPE_COMPARE_ATTENTION)
    {
      fprintf (stderr,
               _("rpe export %s: --b-content is for compare-attention (templates do not depend on the "
                 "content)\n"),
               view);
      status = EXIT_USAGE;
      goto done;
    }
  snap = snapshot_of_options (&o, &params, overview, what, &a_print, &error);
  if (snap == NULL)
    {
      fprintf (stderr, _("rpe export %s: %s\n"), view, error->message);
      status = rpe_cli_exit_code_for_error (error);
      goto done;
    }
  rpe_compare_side_init (&a, snap);
  rpe_compare_side_init (&b, snap);
  a.no_gate = b.no_gate = o.model.no_gate;
  if (overview)
    {
      g_autoptr (RpeOverview) ov = NULL;
      g_auto (GStrv) titles = NULL;
      g_autofree RpeHeatmapData *cells = NULL;
      RpeOverviewFigureData fd = { 0 };
      RpeFigure fig;

      a.checkpoint = g_strdup (o.model.checkpoint);
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

      if (co.b_content != NULL)
        {
          /* B's capture: checked against B's checkpoint (read by the side) or A's */
          b.capture =
            open_side_capture (co.b_content, co.b_checkpoint != NULL ? co.b_checkpoint : o.model.checkpoint, &error);
          if (b.capture == NULL)
            goto fail;
          b.capture_layer = co.b_layer >= 0 ? co.b_layer : o.model.layer;
          if (co.b_checkpoint == NULL && o.model.checkpoint != NULL)
            {
              if (a_print == NULL && (a_print = model_print_of (o.model.checkpoint, &error)) == NULL)
                goto fail;
              b.model_print = rpe_model_print_ref (a_print);
            }
        }
      if (co.b_checkpoint != NULL || (co.b_layer >= 0 && (co.b_content == NULL || o.model.checkpoint != NULL)))
        {
          if (co.b_checkpoint == NULL && o.model.checkpoint == NULL)
            {
              rpe_set_error (&error, RPE_ERROR_INVALID_ARGUMENT, _("--b-layer needs --checkpoint (or --b-checkpoint)"));
              goto fail;
            }
          b.checkpoint = g_strdup (co.b_checkpoint != NULL ? co.b_checkpoint : o.model.checkpoint);
          /* on B's capture, B's model is drawn at the layer of the capture (A's without --b-layer) */
          b.layer = co.b_layer >= 0 || co.b_content == NULL ? co.b_layer : o.model.layer;
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
                  if (o.model.checkpoint == NULL)
                    {
                      rpe_set_error (&error, RPE_ERROR_INVALID_ARGUMENT,
                                     _("--b-method sine|conv loads the other module of --checkpoint"));
                      goto fail;
                    }
                  b.checkpoint = g_strdup (o.model.checkpoint);
                  b.layer = o.model.layer;
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
      if (o.draw.train_length != RPE_CLI_UNSET && o.draw.train_length > 0)
        fd.train_length = (size_t) o.draw.train_length;
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
  rpe_cli_own_clear (rpe_cli_compare_options, &co);
  rpe_cli_args_clear (&o);
  return status;
}

/* rpe-cli-outputs.c: `rpe export outputs` and `rpe curves output-error`.
 *
 * What attention does to values V, for one head (core/rpe-outputs.h): the reference output
 * (exact softmax attention, or L V for --compare kernel) against SPE (linear attention with the
 * feature map, or Lhat V), drawn by the same renderer as the window's Outputs view
 * (ui/render/rpe-outputs-render.h), or the relative error against position and R as CSV.
 * Exit status: 0 success, 2 bad usage or bad input, 1 any other failure.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <glib/gi18n.h>

#include "rpe-alloc.h"
#include "rpe-curves.h"
#include "rpe-error.h"
#include "rpe-export.h"
#include "rpe-npy.h"
#include "rpe-outputs.h"
#include "rpe-outputs-render.h"

#include "rpe-cli.h"

#define EXIT_USAGE 2
#define EXIT_FAILURE_OTHER 1
#define MAX_DRAWS 4096
#define MAX_LIST 64

typedef struct
{
  char    *out;
  char    *value_source;
  char    *impulse_positions;
  char    *compare;
  char    *colormap;
  char    *title;
  char    *realizations_list;
  char    *preset;
  char    *color_scale;
  double   gamma;
  double   percentile;
  gboolean per_panel;
  gint64   channels;
  gint64   channel;
  gint64   draws;
  double   width, height, dpi;
} OutputsOptions;

/* Up to MAX_LIST comma-separated integers 0 .. max_value (rpe-cli-parse.h). */
static gboolean
parse_list (const char  *text,
            const char  *option,
            gsize        max_value,
            gsize       *values,
            gsize       *count,
            GError     **error)
{
  g_autoptr (GArray) list = NULL;

  *count = 0;
  if (!rpe_cli_parse_int_list (option, text, 0, (gint64) MIN (max_value, (gsize) G_MAXINT64), MAX_LIST, &list, error))
    return FALSE;
  for (guint i = 0; i < list->len; i++)
    values[(*count)++] = (gsize) g_array_index (list, gint64, i);
  return TRUE;
}

/* Everything needed for an RpeOutputsSpec, owned. */
typedef struct
{
  RpeSpeParams    params;
  RpeCliInputs    in;
  float          *q, *k, *v;
  RpeOutputsSpec  spec;
  gsize           draws;
  gsize           train_length;
  const char     *feature_map_name;
} Setup;

static void
setup_clear (Setup *s)
{
  rpe_spe_params_clear (&s->params);
  rpe_cli_inputs_clear (&s->in);
  rpe_free (s->q);
  rpe_free (s->k);
  rpe_free (s->v);
  memset (s, 0, sizeof *s);
}

static gboolean
setup_init (Setup *s, const RpeCliArgs *o, const OutputsOptions *x, GError **error)
{
  gsize H, D, n, dv, head, r, count;
  RpeFeatureOptions fopts;
  RpeValuesKind kind = RPE_VALUES_IMPULSE;
  gsize positions[MAX_LIST], n_positions = 0;
  RpeStatus st = RPE_OK;

  memset (s, 0, sizeof *s);
  if (o->content.queries != NULL || o->content.keys != NULL)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          _("outputs: queries and keys come from --content (unit, random or a capture)"));
  if (!rpe_cli_load_params (o, &s->params, error))
    return FALSE;
  if (s->params.method == RPE_SPE_CONV && s->params.kernel_cols != 0)
    return rpe_set_error (error, RPE_ERROR_UNSUPPORTED, _("outputs: 2-D convSPE is not supported (positions are a grid)"));
  H = s->params.n_heads;
  D = s->params.n_features;
  head = o->model.head < 0 ? 0 : (gsize) o->model.head;
  if (head >= H)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--head %zu is out of range (the module has %zu heads)"),
                          (size_t) head, (size_t) H);
  if (o->draw.realizations != RPE_CLI_UNSET && (o->draw.realizations < 1 || o->draw.realizations > (1 << 20)))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--realizations must be between 1 and %d"), 1 << 20);
  r = o->draw.realizations != RPE_CLI_UNSET ? (gsize) o->draw.realizations : 64;
  if (x->draws != RPE_CLI_UNSET && (x->draws < 1 || x->draws > MAX_DRAWS))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--draws must be between 1 and %d"), MAX_DRAWS);
  s->draws = x->draws != RPE_CLI_UNSET ? (gsize) x->draws : 1;
  if (o->draw.train_length != RPE_CLI_UNSET && (o->draw.train_length < 0 || o->draw.train_length > ((gint64) 1 << 32)))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--train-length must be between 0 and 2^32"));
  s->train_length = o->draw.train_length != RPE_CLI_UNSET ? (gsize) o->draw.train_length : 0;

  /* the values: a file, or generated */
  if (x->value_source != NULL)
    {
      if (g_str_equal (x->value_source, "impulse"))
        kind = RPE_VALUES_IMPULSE;
      else if (g_str_equal (x->value_source, "sweep"))
        kind = RPE_VALUES_SWEEP;
      else if (g_str_equal (x->value_source, "noise"))
        kind = RPE_VALUES_NOISE;
      else
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                              _("--value-source must be impulse, sweep or noise (got '%s'); a file: --values V.npy"),
                              x->value_source);
      if (o->content.values != NULL)
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("give --values or --value-source, not both"));
    }
  if (x->channels != RPE_CLI_UNSET && (x->channels < 1 || x->channels > RPE_OUTPUTS_MAX_CHANNELS))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--channels must be between 1 and %d"),
                          RPE_OUTPUTS_MAX_CHANNELS);
  if (o->content.values != NULL)
    {
      g_autoptr (RpeTensor) t = rpe_capture_is_spec (o->content.values) ? rpe_cli_capture_values (o, H, D, error)
                                                                        : rpe_cli_read_npy (o->content.values, error);
      gsize src_heads = 0;

      if (t == NULL)
        return FALSE;
      if (!rpe_tensor_check_finite (t, error))
        {
          g_prefix_error (error, "%s: ", o->content.values);
          return FALSE;
        }
      if (t->ndim == 3)
        {
          src_heads = t->shape[1];
          if (src_heads != H)
            return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                                  _("%s: values of shape (N, H, Dv) must have H = %zu (got %zu)"), o->content.values,
                                  (size_t) H, (size_t) src_heads);
        }
      else if (t->ndim != 2)
        {
          g_autofree char *shape = rpe_tensor_shape_string (t);

          return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                                _("%s: values must have shape (N, Dv) or (N, H, Dv), got %s"), o->content.values,
                                shape);
        }
      dv = t->shape[t->ndim - 1];
      if (t->shape[0] == 0 || dv == 0 || dv > RPE_OUTPUTS_MAX_CHANNELS)
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("%s: values need N >= 1 and 1 <= Dv <= %d"),
                              o->content.values, RPE_OUTPUTS_MAX_CHANNELS);
      if (x->channels != RPE_CLI_UNSET && (gsize) x->channels != dv)
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, "--channels %" G_GINT64_FORMAT
                              " does not match the values' Dv = %zu", x->channels, (size_t) dv);
      if (!rpe_cli_resolve_length (o, t->shape[0], &n, error))
        return FALSE;
      {
        const gsize dims[1][4] = { { n, dv, 1, 1 } };

        if (!rpe_cli_check_budget ("values", 1, dims, error))
          return FALSE;
      }
      s->v = rpe_alloc (n * dv, sizeof (float), &st);
      if (s->v == NULL)
        return rpe_cli_status_error (st, "values", error);
      st = rpe_outputs_values_from_array (t->data, t->shape[0], src_heads, dv, head, n, s->v);
      if (st != RPE_OK)
        return rpe_cli_status_error (st, o->content.values, error);
    }
  else
    {
      gsize n_content = 0, ch, cd;

      /* a captured --content decides N */
      if (rpe_cli_content_is_capture (o) && !rpe_cli_capture_shape (o, &n_content, &ch, &cd, error))
        return FALSE;
      if (!rpe_cli_resolve_length (o, n_content, &n, error))
        return FALSE;
      dv = x->channels != RPE_CLI_UNSET ? (gsize) x->channels : 4;
      if (x->impulse_positions != NULL)
        {
          if (kind != RPE_VALUES_IMPULSE)
            return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--impulse-positions is for --value-source impulse"));
          if (!parse_list (x->impulse_positions, "--impulse-positions", n - 1, positions, &n_positions, error))
            return FALSE;
        }
      {
        const gsize dims[1][4] = { { n, dv, 1, 1 } };

        if (!rpe_cli_check_budget ("values", 1, dims, error))
          return FALSE;
      }
      s->v = rpe_alloc (n * dv, sizeof (float), &st);
      if (s->v == NULL)
        return rpe_cli_status_error (st, "values", error);
      st = rpe_outputs_values (kind, n, dv, positions, n_positions, (uint64_t) o->draw.seed, s->v);
      if (st != RPE_OK)
        return rpe_cli_status_error (st, "values", error);
    }

  {
    /* q, k (N, H, D) twice and the head's copies; the codes (N, R) x 2 and features; the
     * reference's block (128 x N) and lag profiles (D x 2N) */
    const gsize dims[4][4] = { { n, H, D, 4 }, { n, r, 4, 1 }, { 128 + 2 * D, n, 1, 1 }, { n, dv, 6, 1 } };

    if (!rpe_cli_check_budget ("outputs", 4, dims, error))
      return FALSE;
  }
  {
    RpeCliArgs lo = *o;

    lo.draw.length = (gint64) n;
    lo.content.values = NULL;
    if (!rpe_cli_load_inputs (&lo, &s->params, FALSE, &s->in, error))
      return FALSE;
  }
  if (!rpe_size_mul (n, D, &count))
    return rpe_cli_status_error (RPE_ERROR_OVERFLOW, "outputs", error);
  s->q = rpe_alloc (count, sizeof (float), &st);
  s->k = s->q != NULL ? rpe_alloc (count, sizeof (float), &st) : NULL;
  if (s->k == NULL)
    return rpe_cli_status_error (st, "queries and keys", error);
  for (gsize m = 0; m < n; m++)
    {
      memcpy (s->q + m * D, s->in.q + (m * H + head) * D, D * sizeof (float));
      memcpy (s->k + m * D, s->in.k + (m * H + head) * D, D * sizeof (float));
    }

  s->spec.params = &s->params;
  s->spec.head = head;
  s->spec.n = n;
  s->spec.r = r;
  s->spec.gated = s->params.gate != NULL;
  s->spec.causal = o->attention.causal;
  s->spec.q = s->q;
  s->spec.k = s->k;
  s->spec.v = s->v;
  s->spec.dv = dv;
  s->spec.compare = RPE_OUTPUTS_SOFTMAX;
  if (x->compare != NULL)
    {
      if (g_str_equal (x->compare, "kernel"))
        s->spec.compare = RPE_OUTPUTS_KERNEL;
      else if (!g_str_equal (x->compare, "softmax"))
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--compare must be softmax or kernel (got '%s')"),
                              x->compare);
    }
  if (!rpe_cli_parse_feature_map (o, &s->spec.feature_map, &fopts, r, error))
    return FALSE;
  if (o->attention.performer_features > 0 || o->attention.dpfp_nu != 1)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          _("outputs use the window's feature options (Performer: 64 orthogonal features; DPFP nu = 1)"));
  s->feature_map_name = o->attention.feature_map != NULL ? o->attention.feature_map : "elu1";
  return TRUE;
}

#define X(field) G_STRUCT_OFFSET (OutputsOptions, field)

/* clang-format off */
const RpeCliOption rpe_cli_outputs_options[] = {
  { .name = "output", .short_name = 'o', .arg = RPE_CLI_ARG_FILE, .offset = X (out), .part = RPE_CLI_OUTPUTS_FIGURE,
    .help = N_("Write the figure here (.png, .svg, .pdf; .csv the table, .npy (3, Dv, N) arrays)"),
    .arg_name = "FILE" },
  { .name = "output", .short_name = 'o', .arg = RPE_CLI_ARG_FILE, .offset = X (out), .part = RPE_CLI_OUTPUTS_CSV,
    .help = N_("Write the CSV here"), .arg_name = "OUT.csv" },
  RPE_CLI_STRING ("realizations-list", X (realizations_list), RPE_CLI_OUTPUTS_CSV,
                  N_("Against R: one row per R (else one row per position, R = --realizations)"), "R1,R2,..."),
  RPE_CLI_STRING ("value-source", X (value_source), 0,
                  N_("The values V (default impulse; a file: --values V.npy of shape (N, Dv) or (N, H, Dv))"),
                  "impulse|sweep|noise"),
  RPE_CLI_INT64 ("channels", X (channels), 0, 1, RPE_OUTPUTS_MAX_CHANNELS,
                 N_("Channels Dv of generated values (default 4)"), "DV"),
  RPE_CLI_STRING ("impulse-positions", X (impulse_positions), 0,
                  N_("impulse: the position of channel c's impulse is item c mod count (default: evenly spread)"),
                  "P1,P2,..."),
  RPE_CLI_STRING ("compare", X (compare), 0,
                  N_("softmax: softmax(l) V vs SPE linear attention (default); kernel: L V vs Lhat V, unbiased"),
                  "softmax|kernel"),
  RPE_CLI_INT64 ("draws", X (draws), 0, 1, MAX_DRAWS, N_("SPE draws, seeds --seed, --seed + 1, ... (default 1)"), "T"),
  RPE_CLI_STRING ("colormap", X (colormap), RPE_CLI_OUTPUTS_FIGURE,
                  N_("The outputs' colour map: viridis (default), magma, inferno, cividis, rdbu, grey"),
                  "viridis|magma|inferno|cividis|rdbu|grey"),
  RPE_CLI_STRING ("title", X (title), RPE_CLI_OUTPUTS_FIGURE, N_("Figure title (default: what it shows)"), "T"),
  RPE_CLI_DOUBLE ("width", X (width), RPE_CLI_OUTPUTS_FIGURE, 1, 1e6,
                  N_("Width: pixels (PNG) or points (SVG, PDF)"), "W"),
  RPE_CLI_DOUBLE ("height", X (height), RPE_CLI_OUTPUTS_FIGURE, 1, 1e6,
                  N_("Height: pixels (PNG) or points (SVG, PDF)"), "H"),
  RPE_CLI_DOUBLE ("dpi", X (dpi), RPE_CLI_OUTPUTS_FIGURE, 10, 2400, N_("PNG resolution (default 150)"), "D"),
  RPE_CLI_STRING ("preset", X (preset), RPE_CLI_OUTPUTS_FIGURE,
                  N_("column (3.25 in, 8 pt text), page (6.75 in, 9 pt), slide (13.333 x 7.5 in, 20 pt); --width/--height still override"),
                  "column|page|slide"),
  RPE_CLI_INT64 ("channel", X (channel), RPE_CLI_OUTPUTS_FIGURE, 0, RPE_OUTPUTS_MAX_CHANNELS - 1,
                 N_("The channel of the line plot (default 0)"), "C"),
  RPE_CLI_STRING ("color-scale", X (color_scale), RPE_CLI_OUTPUTS_FIGURE,
                  N_("The maps' colour scale: linear (default), log (4 decades), power (--gamma) or percentile (clipped, --percentile)"),
                  "linear|log|power|percentile"),
  RPE_CLI_DOUBLE ("gamma", X (gamma), RPE_CLI_OUTPUTS_FIGURE, 0.05, 10,
                  N_("--color-scale power: the exponent (0.05 .. 10, default 0.5)"), "G"),
  RPE_CLI_DOUBLE ("percentile", X (percentile), RPE_CLI_OUTPUTS_FIGURE, 50, 100,
                  N_("--color-scale percentile: clip to [P(100-p), P(p)] (50 .. 100, default 99)"), "P"),
  RPE_CLI_FLAG ("per-cell-scale", X (per_panel), RPE_CLI_OUTPUTS_FIGURE,
                N_("Each map its own colour range (default: Y and its estimate share one)")),
  { NULL }
};
/* clang-format on */

/* Parses the command line of `rpe CMD outputs|output-error` for its leaf, then makes the checks
 * both commands make.  FALSE, the message printed (or the help: *status 0), on a usage error. */
static gboolean
parse_command_line (const RpeCliCommand *command,
                    OutputsOptions      *x,
                    RpeCliArgs          *o,
                    const char          *what,
                    int                 *argc,
                    char              ***argv,
                    int                 *status)
{
  const char *cmd = command->name;

  if (!rpe_cli_parse (command, rpe_cli_leaf_lookup (command, what), NULL, o, x, argc, argv, status))
    return FALSE;
  *status = EXIT_USAGE;
  if (o->draw.noise_scheme != NULL && !g_str_equal (o->draw.noise_scheme, "iid"))
    {
      /* the outputs core draws its own i.i.d. noise: never drop an option silently */
      fprintf (stderr, _("rpe %s %s: --noise-scheme is not supported here (only iid)\n"), cmd, what);
      return FALSE;
    }
  if (*argc != 2)
    {
      fprintf (stderr, _("rpe %s %s: too many arguments\n"), cmd, what);
      return FALSE;
    }
  *status = 0;
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* rpe export outputs                                                       */

int
rpe_cli_export_outputs (int    argc,
                        char **argv)
{
  RpeCliArgs        o;
  OutputsOptions x = { 0 };
  Setup s = { 0 };
  RpeOutputs outs = { 0 };
  RpeOutputsFigure *fig = NULL;
  g_autoptr (GError) error = NULL;
  RpeExportFormat format;
  RpeExportSize size = { 0 };
  RpeOutputsFigureOptions fo = { 0 };
  int status = 0;
  RpeStatus st;

  rpe_cli_args_init (&o);
  x.channels = x.draws = x.channel = RPE_CLI_UNSET;
  if (!parse_command_line (&rpe_cli_export_command, &x, &o, "outputs", &argc, &argv, &status))
    goto done;
  if (x.out == NULL || !rpe_export_format_from_path (x.out, &format))
    {
      fprintf (stderr, _("rpe export outputs: -o FILE.png|svg|pdf|csv|npy is required%s\n"),
               x.out != NULL ? " (cannot tell the format from the extension)" : "");
      status = EXIT_USAGE;
      goto done;
    }
  size.width = x.width;
  size.height = x.height;
  size.dpi = x.dpi;
  {
    RpeExportPreset preset;

    if (!rpe_export_preset_from_name (x.preset, &preset))
      {
        fprintf (stderr, _("rpe export outputs: unknown --preset '%s' (column, page or slide)\n"), x.preset);
        status = EXIT_USAGE;
        goto done;
      }
    rpe_export_preset_apply (preset, &size);
  }
  {
    RpeFigure probe;

    rpe_figure_init (&probe, RPE_FIGURE_COMPARE);
    if (!rpe_export_resolve_size (&probe, format, &size, NULL, NULL, NULL, NULL, &error)
        || !rpe_cli_check_image (&probe, format, &size, FALSE, &error))
      goto report;
  }
  fo.colormap = rpe_colormap_default ();
  if (x.colormap != NULL && (fo.colormap = rpe_colormap_lookup (x.colormap)) == NULL)
    {
      rpe_set_error (&error, RPE_ERROR_INVALID_ARGUMENT,
                     _("unknown colour map '%s' (viridis, magma, inferno, cividis, rdbu, grey)"), x.colormap);
      goto report;
    }
  fo.per_panel = x.per_panel;
  if (x.color_scale != NULL
      && (!rpe_plot_transform_from_name (x.color_scale, &fo.transform) || fo.transform == RPE_HEATMAP_TRANSFORM_ATTENTION))
    {
      rpe_set_error (&error, RPE_ERROR_INVALID_ARGUMENT,
                     _("--color-scale must be linear, log, power or percentile (got '%s')"), x.color_scale);
      goto report;
    }
  if (x.gamma != 0.0 && (fo.transform != RPE_HEATMAP_TRANSFORM_POWER || !(x.gamma >= 0.05 && x.gamma <= 10.0)))
    {
      rpe_set_error (&error, RPE_ERROR_INVALID_ARGUMENT, _("--gamma needs --color-scale power and a value in 0.05 .. 10"));
      goto report;
    }
  if (x.percentile != 0.0
      && (fo.transform != RPE_HEATMAP_TRANSFORM_PERCENTILE || !(x.percentile >= 50.0 && x.percentile <= 100.0)))
    {
      rpe_set_error (&error, RPE_ERROR_INVALID_ARGUMENT,
                     _("--percentile needs --color-scale percentile and a value in 50 .. 100"));
      goto report;
    }
  fo.transform_param = fo.transform == RPE_HEATMAP_TRANSFORM_POWER ? (x.gamma != 0.0 ? x.gamma : RPE_PLOT_DEFAULT_GAMMA)
                       : fo.transform == RPE_HEATMAP_TRANSFORM_PERCENTILE
                       ? (x.percentile != 0.0 ? x.percentile : RPE_PLOT_DEFAULT_PERCENTILE) : 0.0;
  if (x.channel != RPE_CLI_UNSET && x.channel < 0)
    {
      rpe_set_error (&error, RPE_ERROR_INVALID_ARGUMENT, _("--channel must be >= 0"));
      goto report;
    }
  if (!setup_init (&s, &o, &x, &error))
    goto report;
  if (x.channel != RPE_CLI_UNSET && (gsize) x.channel >= s.spec.dv)
    {
      rpe_set_error (&error, RPE_ERROR_INVALID_ARGUMENT, "--channel %" G_GINT64_FORMAT " is out of range (Dv = %zu)",
                     x.channel, (size_t) s.spec.dv);
      goto report;
    }
  st = rpe_outputs_compute (&s.spec, (uint64_t) o.draw.seed, s.draws, s.train_length, &outs, NULL);
  if (!rpe_cli_status_error (st, "outputs", &error))
    goto report;
  fo.channel = x.channel != RPE_CLI_UNSET ? (gsize) x.channel : 0;
  fo.title = x.title;
  fo.method = s.params.method == RPE_SPE_SINE ? "sine" : "conv";
  fo.feature_map = s.feature_map_name;
  fig = rpe_outputs_figure_new (&outs, &fo, &st);
  if (fig == NULL)
    {
      rpe_cli_status_error (st, "figure", &error);
      goto report;
    }
  if (!rpe_export_figure (rpe_outputs_figure_get (fig), format, &size, x.out, &error))
    {
      if (error->domain == RPE_ERROR && error->code == RPE_ERROR_IO)
        status = EXIT_FAILURE_OTHER;
      goto report;
    }
  goto done;

report:
  fprintf (stderr, _("rpe export outputs: %s\n"), error != NULL ? error->message : "failed");
  if (status == 0)
    status = rpe_cli_exit_code_for_error (error);
  if (status == 0)
    status = EXIT_FAILURE_OTHER;

done:
  rpe_outputs_figure_free (fig);
  rpe_outputs_clear (&outs);
  setup_clear (&s);
  rpe_cli_own_clear (rpe_cli_outputs_options, &x);
  rpe_cli_args_clear (&o);
  return status;
}

/* ------------------------------------------------------------------------ */
/* rpe curves output-error                                                  */

static RpeStatus
meta_size (RpeCurveTable *t, const char *key, gsize value)
{
  char buf[32];

  snprintf (buf, sizeof buf, "%zu", (size_t) value);
  return rpe_curve_table_set_meta (t, key, buf);
}

int
rpe_cli_curves_output_error (int    argc,
                             char **argv)
{
  RpeCliArgs     o;
  OutputsOptions x = { 0 };
  Setup s = { 0 };
  RpeOutputs outs = { 0 };
  RpeCurveTable *t = NULL;
  g_autoptr (GError) error = NULL;
  gsize rlist[MAX_LIST], nr = 0;
  int status = 0, err = 0;
  RpeStatus st = RPE_OK;

  rpe_cli_args_init (&o);
  x.channels = x.draws = x.channel = RPE_CLI_UNSET;
  if (!parse_command_line (&rpe_cli_curves_command, &x, &o, "output-error", &argc, &argv, &status))
    goto done;
  if (x.out == NULL)
    {
      fprintf (stderr, _("rpe curves output-error: -o OUT.csv is required\n"));
      status = EXIT_USAGE;
      goto done;
    }
  if (x.realizations_list != NULL)
    {
      if (o.draw.realizations != RPE_CLI_UNSET)
        {
          rpe_set_error (&error, RPE_ERROR_INVALID_ARGUMENT, _("give --realizations or --realizations-list, not both"));
          goto report;
        }
      if (!parse_list (x.realizations_list, "--realizations-list", 1 << 20, rlist, &nr, &error))
        goto report;
      for (gsize i = 0; i < nr; i++)
        if (rlist[i] == 0)
          {
            rpe_set_error (&error, RPE_ERROR_INVALID_ARGUMENT, _("--realizations-list: R must be >= 1"));
            goto report;
          }
      o.draw.realizations = (gint64) rlist[0];
    }
  if (x.draws == RPE_CLI_UNSET)
    x.draws = 16;
  if (!setup_init (&s, &o, &x, &error))
    goto report;

  if (nr == 0)
    {
      st = rpe_outputs_compute (&s.spec, (uint64_t) o.draw.seed, s.draws, s.train_length, &outs, NULL);
      if (!rpe_cli_status_error (st, "output error", &error))
        goto report;
      t = rpe_curve_table_new (s.spec.n, &st);
      if (t != NULL)
        {
          double *col = g_new (double, s.spec.n);

          for (gsize m = 0; m < s.spec.n; m++)
            col[m] = (double) m;
          st = rpe_curve_table_add_column (t, "position", col, NULL);
          g_free (col);
        }
      if (st == RPE_OK)
        st = rpe_curve_table_add_column (t, "error_mean", outs.error_mean, NULL);
      if (st == RPE_OK)
        st = rpe_curve_table_add_column (t, "error_sd", outs.error_sd, NULL);
      /* the split only where a training length cuts the positions in two; otherwise the core's
       * error_before is the whole output's error (and error_after has no rows) */
      if (st == RPE_OK && s.train_length > 0 && s.train_length < s.spec.n)
        {
          st = rpe_curve_table_set_meta_double (t, "error before N_train", outs.error_before);
          if (st == RPE_OK)
            st = rpe_curve_table_set_meta_double (t, "error from N_train", outs.error_after);
        }
      else if (st == RPE_OK)
        st = rpe_curve_table_set_meta_double (t, "error over all positions", outs.error_before);
    }
  else
    {
      double *cols[7], xs[MAX_LIST], ys[MAX_LIST];
      static const char *names[7] = { "R", "error_mean", "error_sd", "error_before", "error_after",
                                       "error_at_train", "error_at_end" };
      double slope = NAN, se = NAN;

      t = rpe_curve_table_new (nr, &st);
      for (guint j = 0; j < 7; j++)
        cols[j] = g_new0 (double, nr);
      for (gsize i = 0; t != NULL && i < nr && st == RPE_OK; i++)
        {
          gsize n = s.spec.n, tl = s.train_length > 0 ? MIN (s.train_length, n) : n;

          s.spec.r = rlist[i];
          st = rpe_outputs_compute (&s.spec, (uint64_t) o.draw.seed, s.draws, tl, &outs, NULL);
          if (st != RPE_OK)
            break;
          cols[0][i] = (double) rlist[i];
          cols[1][i] = outs.error_draws_mean;
          cols[2][i] = outs.error_draws_sd;
          cols[3][i] = outs.error_before;
          cols[4][i] = outs.error_after;
          cols[5][i] = outs.error_mean[tl - 1];
          cols[6][i] = outs.error_mean[n - 1];
          xs[i] = cols[0][i];
          ys[i] = cols[1][i];
          rpe_outputs_clear (&outs);
        }
      for (guint j = 0; j < 7 && st == RPE_OK; j++)
        st = rpe_curve_table_add_column (t, names[j], cols[j], NULL);
      for (guint j = 0; j < 7; j++)
        g_free (cols[j]);
      if (st == RPE_OK && nr >= 2 && rpe_curve_fit_loglog (xs, ys, nr, &slope, NULL, &se) == RPE_OK)
        {
          st = rpe_curve_table_set_meta_double (t, "slope", slope);
          if (st == RPE_OK)
            st = rpe_curve_table_set_meta_double (t, "slope_se", se);
        }
    }
  if (st == RPE_OK)
    st = rpe_curve_table_set_meta (t, "curve", nr > 0 ? "output error against R" : "output error against position");
  if (st == RPE_OK)
    st = rpe_curve_table_set_meta (t, "compare", rpe_outputs_compare_name (s.spec.compare));
  if (st == RPE_OK)
    st = rpe_curve_table_set_meta (t, "method", s.params.method == RPE_SPE_SINE ? "sine" : "conv");
  if (st == RPE_OK)
    st = rpe_curve_table_set_meta (t, "feature map", s.feature_map_name);
  if (st == RPE_OK)
    st = rpe_curve_table_set_meta (t, "causal", s.spec.causal ? "true" : "false");
  if (st == RPE_OK)
    st = meta_size (t, "head", s.spec.head);
  if (st == RPE_OK)
    st = meta_size (t, "N", s.spec.n);
  if (st == RPE_OK)
    st = meta_size (t, "Dv", s.spec.dv);
  if (st == RPE_OK && nr == 0)
    st = meta_size (t, "R", s.spec.r);
  if (st == RPE_OK)
    st = meta_size (t, "draws", s.draws);
  if (st == RPE_OK && s.train_length > 0)
    st = meta_size (t, "N_train", s.train_length);
  if (!rpe_cli_status_error (st, "output error", &error))
    goto report;
  if (!rpe_cli_check_output (&o, x.out, &error))
    {
      fprintf (stderr, _("rpe curves output-error: %s\n"), error->message);
      status = EXIT_FAILURE_OTHER;
      goto done;
    }
  st = rpe_curve_table_write_csv (t, x.out, &err);
  if (st != RPE_OK)
    {
      fprintf (stderr, _("rpe curves output-error: %s: cannot write: %s\n"), x.out,
               err != 0 ? g_strerror (err) : rpe_status_to_string (st));
      status = EXIT_FAILURE_OTHER;
    }
  goto done;

report:
  fprintf (stderr, _("rpe curves output-error: %s\n"), error != NULL ? error->message : "failed");
  status = rpe_cli_exit_code_for_error (error);
  if (status == 0)
    status = EXIT_FAILURE_OTHER;

done:
  rpe_curve_table_free (t);
  rpe_outputs_clear (&outs);
  setup_clear (&s);
  rpe_cli_own_clear (rpe_cli_outputs_options, &x);
  rpe_cli_args_clear (&o);
  return status;
}

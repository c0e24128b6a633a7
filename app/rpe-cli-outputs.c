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

static void
outputs_options_clear (OutputsOptions *x)
{
  g_free (x->out);
  g_free (x->value_source);
  g_free (x->impulse_positions);
  g_free (x->compare);
  g_free (x->colormap);
  g_free (x->title);
  g_free (x->realizations_list);
  g_free (x->preset);
  g_free (x->color_scale);
}

static gboolean
parse_list (const char  *text,
            const char  *option,
            gsize        max_value,
            gsize       *values,
            gsize       *count,
            GError     **error)
{
  g_auto (GStrv) parts = g_strsplit (text, ",", -1);

  *count = 0;
  for (guint i = 0; parts[i] != NULL; i++)
    {
      char *end = NULL;
      guint64 v;

      g_strstrip (parts[i]);
      errno = 0;
      v = g_ascii_strtoull (parts[i], &end, 10);
      if (parts[i][0] == '\0' || parts[i][0] == '-' || end == NULL || *end != '\0' || errno != 0
          || v > max_value || *count >= MAX_LIST)
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                              _("%s takes up to %d comma-separated integers 0 .. %zu (got '%s')"),
                              option, MAX_LIST, (size_t) max_value, text);
      values[(*count)++] = (gsize) v;
    }
  if (*count == 0)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("%s is empty"), option);
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
setup_init (Setup                *s,
            const RpeCliOptions  *o,
            const OutputsOptions *x,
            GError              **error)
{
  gsize H, D, n, dv, head, r, count;
  RpeFeatureOptions fopts;
  RpeValuesKind kind = RPE_VALUES_IMPULSE;
  gsize positions[MAX_LIST], n_positions = 0;
  RpeStatus st = RPE_OK;

  memset (s, 0, sizeof *s);
  if (o->queries != NULL || o->keys != NULL)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          _("outputs: queries and keys come from --content (unit, random or a capture)"));
  if (!rpe_cli_load_params (o, &s->params, error))
    return FALSE;
  if (s->params.method == RPE_SPE_CONV && s->params.kernel_cols != 0)
    return rpe_set_error (error, RPE_ERROR_UNSUPPORTED, _("outputs: 2-D convSPE is not supported (positions are a grid)"));
  H = s->params.n_heads;
  D = s->params.n_features;
  head = o->head < 0 ? 0 : (gsize) o->head;
  if (head >= H)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--head %zu is out of range (the module has %zu heads)"),
                          (size_t) head, (size_t) H);
  if (o->realizations != RPE_CLI_UNSET && (o->realizations < 1 || o->realizations > (1 << 20)))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--realizations must be between 1 and %d"), 1 << 20);
  r = o->realizations != RPE_CLI_UNSET ? (gsize) o->realizations : 64;
  if (x->draws != RPE_CLI_UNSET && (x->draws < 1 || x->draws > MAX_DRAWS))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--draws must be between 1 and %d"), MAX_DRAWS);
  s->draws = x->draws != RPE_CLI_UNSET ? (gsize) x->draws : 1;
  if (o->train_length != RPE_CLI_UNSET && (o->train_length < 0 || o->train_length > ((gint64) 1 << 32)))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--train-length must be between 0 and 2^32"));
  s->train_length = o->train_length != RPE_CLI_UNSET ? (gsize) o->train_length : 0;

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
      if (o->values != NULL)
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("give --values or --value-source, not both"));
    }
  if (x->channels != RPE_CLI_UNSET && (x->channels < 1 || x->channels > RPE_OUTPUTS_MAX_CHANNELS))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--channels must be between 1 and %d"),
                          RPE_OUTPUTS_MAX_CHANNELS);
  if (o->values != NULL)
    {
      g_autoptr (RpeTensor) t = rpe_capture_is_spec (o->values) ? rpe_cli_capture_values (o, H, D, error)
                                                                 : rpe_npy_read (o->values, error);
      gsize src_heads = 0;

      if (t == NULL)
        return FALSE;
      if (!rpe_tensor_check_finite (t, error))
        {
          g_prefix_error (error, "%s: ", o->values);
          return FALSE;
        }
      if (t->ndim == 3)
        {
          src_heads = t->shape[1];
          if (src_heads != H)
            return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                                  _("%s: values of shape (N, H, Dv) must have H = %zu (got %zu)"), o->values,
                                  (size_t) H, (size_t) src_heads);
        }
      else if (t->ndim != 2)
        {
          g_autofree char *shape = rpe_tensor_shape_string (t);

          return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                                _("%s: values must have shape (N, Dv) or (N, H, Dv), got %s"), o->values, shape);
        }
      dv = t->shape[t->ndim - 1];
      if (t->shape[0] == 0 || dv == 0 || dv > RPE_OUTPUTS_MAX_CHANNELS)
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("%s: values need N >= 1 and 1 <= Dv <= %d"),
                              o->values, RPE_OUTPUTS_MAX_CHANNELS);
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
        return rpe_cli_status_error (st, o->values, error);
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
      st = rpe_outputs_values (kind, n, dv, positions, n_positions, (uint64_t) o->seed, s->v);
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
    RpeCliOptions lo = *o;

    lo.length = (gint64) n;
    lo.values = NULL;
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
  s->spec.causal = o->causal;
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
  if (o->performer_features > 0 || o->dpfp_nu != 1)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          _("outputs use the window's feature options (Performer: 64 orthogonal features; DPFP nu = 1)"));
  s->feature_map_name = o->feature_map != NULL ? o->feature_map : "elu1";
  return TRUE;
}

static void
add_common_entries (GOptionContext *context,
                    OutputsOptions *x,
                    RpeCliOptions  *o)
{
  const GOptionEntry entries[] = {
    { "value-source", 0, 0, G_OPTION_ARG_STRING, &x->value_source, N_("The values V (default impulse; a file: --values V.npy of shape (N, Dv) or (N, H, Dv))"), "impulse|sweep|noise" },
    { "channels", 0, 0, G_OPTION_ARG_INT64, &x->channels, N_("Channels Dv of generated values (default 4)"), "DV" },
    { "impulse-positions", 0, 0, G_OPTION_ARG_STRING, &x->impulse_positions, N_("impulse: the position of channel c's impulse is item c mod count (default: evenly spread)"), "P1,P2,..." },
    { "compare", 0, 0, G_OPTION_ARG_STRING, &x->compare, N_("softmax: softmax(l) V vs SPE linear attention (default); kernel: L V vs Lhat V, unbiased"), "softmax|kernel" },
    { "draws", 0, 0, G_OPTION_ARG_INT64, &x->draws, N_("SPE draws, seeds --seed, --seed + 1, ... (default 1)"), "T" },
    { NULL }
  };
  GOptionGroup *group = g_option_group_new ("outputs", N_("Outputs options"), N_("Show outputs options"), NULL, NULL);

  g_option_group_set_translation_domain (group, GETTEXT_PACKAGE);
  g_option_group_add_entries (group, entries);
  g_option_context_add_group (context, group);
  g_option_context_add_group (context, rpe_cli_parameter_group (o));
}

/* Parses the command line of `rpe CMD WHAT` (its own entries already in `context`; `o` and
 * `x` initialised) with the common entries, then makes the checks both commands make.  FALSE,
 * the message printed, on a usage error. */
static gboolean
parse_command_line (GOptionContext   *context,
                    OutputsOptions   *x,
                    RpeCliOptions    *o,
                    const char       *cmd,
                    const char       *what,
                    int              *argc,
                    char           ***argv)
{
  g_auto (GStrv) given = g_strdupv (*argv);
  g_autoptr (GError) error = NULL;

  add_common_entries (context, x, o);
  if (!g_option_context_parse (context, argc, argv, &error))
    {
      fprintf (stderr, _("rpe %s %s: %s\n"), cmd, what, error->message);
      return FALSE;
    }
  if (o->noise_scheme != NULL && !g_str_equal (o->noise_scheme, "iid"))
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
  if (!rpe_cli_check_options (cmd, what, given, &error))
    {
      fprintf (stderr, _("rpe %s %s: %s\n"), cmd, what, error->message);
      return FALSE;
    }
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* rpe export outputs                                                       */

int
rpe_cli_export_outputs (int    argc,
                        char **argv)
{
  RpeCliOptions o;
  OutputsOptions x = { 0 };
  Setup s = { 0 };
  RpeOutputs outs = { 0 };
  RpeOutputsFigure *fig = NULL;
  g_autoptr (GOptionContext) context = NULL;
  g_autoptr (GError) error = NULL;
  RpeExportFormat format;
  RpeExportSize size = { 0 };
  RpeOutputsFigureOptions fo = { 0 };
  int status = 0;
  RpeStatus st;
  const GOptionEntry main_entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &x.out, N_("Write the figure here (.png, .svg, .pdf; .csv the table, .npy (3, Dv, N) arrays)"), "FILE" },
    { "colormap", 0, 0, G_OPTION_ARG_STRING, &x.colormap, N_("The outputs' colour map: viridis (default), magma, inferno, cividis, rdbu, grey"), "NAME" },
    { "title", 0, 0, G_OPTION_ARG_STRING, &x.title, N_("Figure title (default: what it shows)"), "T" },
    { "width", 0, 0, G_OPTION_ARG_DOUBLE, &x.width, N_("Width: pixels (PNG) or points (SVG, PDF)"), "W" },
    { "height", 0, 0, G_OPTION_ARG_DOUBLE, &x.height, N_("Height: pixels (PNG) or points (SVG, PDF)"), "H" },
    { "dpi", 0, 0, G_OPTION_ARG_DOUBLE, &x.dpi, N_("PNG resolution (default 150)"), "D" },
    { "preset", 0, 0, G_OPTION_ARG_STRING, &x.preset, N_("column (3.25 in, 8 pt text), page (6.75 in, 9 pt), slide (13.333 x 7.5 in, 20 pt); --width/--height still override"), "NAME" },
    { "channel", 0, 0, G_OPTION_ARG_INT64, &x.channel, N_("The channel of the line plot (default 0)"), "C" },
    { "color-scale", 0, 0, G_OPTION_ARG_STRING, &x.color_scale, N_("The maps' colour scale: linear (default), log (4 decades), power (--gamma) or percentile (clipped, --percentile)"), "NAME" },
    { "gamma", 0, 0, G_OPTION_ARG_DOUBLE, &x.gamma, N_("--color-scale power: the exponent (0.05 .. 10, default 0.5)"), "G" },
    { "percentile", 0, 0, G_OPTION_ARG_DOUBLE, &x.percentile, N_("--color-scale percentile: clip to [P(100-p), P(p)] (50 .. 100, default 99)"), "P" },
    { "per-cell-scale", 0, 0, G_OPTION_ARG_NONE, &x.per_panel, N_("Each map its own colour range (default: Y and its estimate share one)"), NULL },
    { NULL }
  };

  rpe_cli_options_init (&o);
  x.channels = x.draws = x.channel = RPE_CLI_UNSET;
  context = g_option_context_new (N_("outputs - Y of exact and SPE attention for chosen values V"));
  g_option_context_set_translation_domain (context, GETTEXT_PACKAGE);
  g_option_context_add_main_entries (context, main_entries, GETTEXT_PACKAGE);
  if (!parse_command_line (context, &x, &o, "export", "outputs", &argc, &argv))
    {
      status = EXIT_USAGE;
      goto done;
    }
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
    if (!rpe_export_resolve_size (&probe, format, &size, NULL, NULL, NULL, NULL, &error))
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
  st = rpe_outputs_compute (&s.spec, (uint64_t) o.seed, s.draws, s.train_length, &outs, NULL);
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
  outputs_options_clear (&x);
  rpe_cli_options_clear (&o);
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
  RpeCliOptions o;
  OutputsOptions x = { 0 };
  Setup s = { 0 };
  RpeOutputs outs = { 0 };
  RpeCurveTable *t = NULL;
  g_autoptr (GOptionContext) context = NULL;
  g_autoptr (GError) error = NULL;
  gsize rlist[MAX_LIST], nr = 0;
  int status = 0, err = 0;
  RpeStatus st = RPE_OK;
  const GOptionEntry main_entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &x.out, N_("Write the CSV here"), "OUT.csv" },
    { "realizations-list", 0, 0, G_OPTION_ARG_STRING, &x.realizations_list, N_("Against R: one row per R (else one row per position, R = --realizations)"), "R1,R2,..." },
    { NULL }
  };

  rpe_cli_options_init (&o);
  x.channels = x.draws = x.channel = RPE_CLI_UNSET;
  context = g_option_context_new (N_("output-error - relative error of the SPE output against position or R"));
  g_option_context_set_translation_domain (context, GETTEXT_PACKAGE);
  g_option_context_set_summary (context,
    N_("err[m] = |Y_spe[m] - Y_ref[m]| / |Y_ref[m]| per position m (mean and sd over --draws), or against R\n"
       "(--realizations-list): the mean over the draws of the whole output's relative error, before and\n"
       "from --train-length, and err at positions N_train - 1 and N - 1, with the fitted log-log slope.\n"
       "--compare kernel (L V vs Lhat V) is unbiased: its error falls like 1/sqrt(R); softmax is not."));
  g_option_context_add_main_entries (context, main_entries, GETTEXT_PACKAGE);
  if (!parse_command_line (context, &x, &o, "curves", "output-error", &argc, &argv))
    {
      status = EXIT_USAGE;
      goto done;
    }
  if (x.out == NULL)
    {
      fprintf (stderr, _("rpe curves output-error: -o OUT.csv is required\n"));
      status = EXIT_USAGE;
      goto done;
    }
  if (x.realizations_list != NULL)
    {
      if (o.realizations != RPE_CLI_UNSET)
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
      o.realizations = (gint64) rlist[0];
    }
  if (x.draws == RPE_CLI_UNSET)
    x.draws = 16;
  if (!setup_init (&s, &o, &x, &error))
    goto report;

  if (nr == 0)
    {
      st = rpe_outputs_compute (&s.spec, (uint64_t) o.seed, s.draws, s.train_length, &outs, NULL);
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
      if (st == RPE_OK)
        st = rpe_curve_table_set_meta_double (t, "error before N_train", outs.error_before);
      if (st == RPE_OK)
        st = rpe_curve_table_set_meta_double (t, "error from N_train", outs.error_after);
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
          st = rpe_outputs_compute (&s.spec, (uint64_t) o.seed, s.draws, tl, &outs, NULL);
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
  if (st == RPE_OK)
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
  outputs_options_clear (&x);
  rpe_cli_options_clear (&o);
  return status;
}

/* rpe-cli.c: `rpe`, the headless command-line tool over the numeric core.
 *
 * Scripts depend on this interface: options are only ever added, never changed.
 * Exit status: 0 success, 2 bad usage or bad input, 1 any other failure.
 */
#include "config.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <glib/gi18n.h>

#include <signal.h>

#include <glib.h>

#include "rpe-alloc.h"
#include "rpe-attention.h"
#include "rpe-checkpoint.h"
#include "rpe-checkpoint-lrpe.h"
#include "rpe-demos.h"
#include "rpe-error.h"
#include "rpe-file.h"
#include "rpe-npy.h"
#include "rpe-rng.h"
#include "rpe-spe.h"
#include "rpe-text.h"

#include "rpe-cli.h"

#define EXIT_USAGE 2
#define EXIT_FAILURE_OTHER 1

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */

int
rpe_cli_exit_code_for_error (const GError *error)
{
  if (error == NULL)
    return 0;
  if (error->domain == G_OPTION_ERROR)
    return EXIT_USAGE;
  if (error->domain == RPE_ERROR)
    {
      switch ((RpeStatus) error->code)
        {
        case RPE_ERROR_INVALID_ARGUMENT:
        case RPE_ERROR_OVERFLOW:
        case RPE_ERROR_NO_MEMORY:
        case RPE_ERROR_NOT_FINITE:
        case RPE_ERROR_RANGE:
        case RPE_ERROR_DEGENERATE:
        case RPE_ERROR_FORMAT:
        case RPE_ERROR_UNSUPPORTED:
        case RPE_ERROR_NOT_FOUND:
          return EXIT_USAGE;
        case RPE_ERROR_IO:
          /* an unreadable input file is bad input; write failures are reported as IO too,
           * callers that write map them to 1 themselves */
          return EXIT_USAGE;
        default:
          return EXIT_FAILURE_OTHER;
        }
    }
  if (error->domain == G_FILE_ERROR || error->domain == G_IO_ERROR)
    return EXIT_USAGE;
  return EXIT_FAILURE_OTHER;
}

gboolean
rpe_cli_status_error (RpeStatus    status,
                      const char  *what,
                      GError     **error)
{
  if (status == RPE_OK)
    return TRUE;
  if (status == RPE_ERROR_OVERFLOW)
    return rpe_set_error (error, status,
                          _("%s: the request is far too large (its size does not fit in memory addresses); "
                            "reduce --length, --realizations, --heads or --features"), what);
  if (status == RPE_ERROR_NO_MEMORY)
    {
      g_autofree char *budget = g_format_size_full (rpe_budget_get (), G_FORMAT_SIZE_IEC_UNITS);

      return rpe_set_error (error, status,
                            _("%s: the arrays would not fit in the memory budget of %s "
                              "(reduce --length, --realizations, --heads or --features)"),
                            what, budget);
    }
  return rpe_set_error (error, status, "%s: %s", what, rpe_status_to_string (status));
}

gboolean
rpe_cli_noise_scheme (const RpeCliOptions *o,
                      RpeNoiseScheme      *scheme,
                      GError             **error)
{
  *scheme = RPE_NOISE_IID;
  if (o->noise_scheme == NULL)
    return TRUE;
  if (!rpe_noise_scheme_from_string (o->noise_scheme, scheme))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          _("--noise-scheme must be iid, orthogonal, antithetic or sobol (got '%s')"), o->noise_scheme);
  if (*scheme != RPE_NOISE_IID && (o->noise != NULL || o->gate_noise != NULL))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          _("--noise-scheme %s shapes the drawn noise: it cannot apply to replayed --noise/--gate-noise"),
                          o->noise_scheme);
  return TRUE;
}

gboolean
rpe_cli_check_budget (const char   *what,
                      gsize         n_arrays,
                      const gsize (*dims)[4],
                      GError      **error)
{
  gsize total = 0;

  for (gsize i = 0; i < n_arrays; i++)
    {
      gsize bytes;

      if (rpe_size_bytes (&bytes, sizeof (float), dims[i][0], dims[i][1], dims[i][2], dims[i][3]) != RPE_OK
          || !rpe_size_add (total, bytes, &total))
        return rpe_cli_status_error (RPE_ERROR_OVERFLOW, what, error);
    }
  if (rpe_budget_check (total) != RPE_OK)
    {
      /* sizes as GLib says them: "512 bytes", "1.5 MiB", never "0.0 MiB" */
      g_autofree char *need = g_format_size_full (total, G_FORMAT_SIZE_IEC_UNITS);
      g_autofree char *budget = g_format_size_full (rpe_budget_get (), G_FORMAT_SIZE_IEC_UNITS);

      return rpe_set_error (error, RPE_ERROR_NO_MEMORY,
                            _("%s: the arrays need %s, over the memory budget of %s "
                              "(reduce --length, --realizations, --heads or --features)"),
                            what, need, budget);
    }
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* Options                                                                  */

void
rpe_cli_options_init (RpeCliOptions *o)
{
  memset (o, 0, sizeof *o);
  o->layer = -1;
  o->heads = 8;
  o->features = 64;
  o->sines = 5;
  o->kernel = 128;
  o->length = RPE_CLI_UNSET;
  o->realizations = RPE_CLI_UNSET;
  o->seed = 0;
  o->head = -1;
  o->feature = -1;
  o->dpfp_nu = 1;
  o->performer_features = -1;
  o->train_length = RPE_CLI_UNSET;
}

void
rpe_cli_options_clear (RpeCliOptions *o)
{
  g_free (o->checkpoint);
  g_free (o->prefix);
  g_strfreev (o->map);
  g_free (o->method);
  g_free (o->noise);
  g_free (o->gate_noise);
  g_free (o->noise_scheme);
  g_free (o->queries);
  g_free (o->keys);
  g_free (o->values);
  g_free (o->feature_map);
  g_free (o->relative_embeddings);
  g_free (o->content);
  g_free (o->out);
  g_free (o->out_keys);
  g_free (o->lrpe_p);
  g_free (o->lrpe_lambda);
  g_free (o->lrpe_theta);
  g_free (o->lrpe_norm);
  g_free (o->lrpe_v);
  g_free (o->lrpe_theta_file);
  g_free (o->lrpe_permutation);
  g_free (o->lrpe_householder);
  g_free (o->bias_layout);
  g_free (o->bias);
  g_free (o->bias_rows);
  g_free (o->bias_cols);
  g_free (o->grid);
  g_free (o->fastrpb_attention);
  memset (o, 0, sizeof *o);
}

static gboolean
parse_memory_budget (const char *option_name, const char *value, gpointer data, GError **error)
{
  size_t bytes;

  if (!rpe_budget_parse (value, &bytes))
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   _("--memory-budget takes a size such as 512M, 2G or 50%% (got '%s')"), value);
      return FALSE;
    }
  rpe_budget_set (bytes);
  return TRUE;
}

static gboolean
parse_force (const char *option_name, const char *value, gpointer data, GError **error)
{
  rpe_output_set_force (TRUE);
  return TRUE;
}

GOptionGroup *
rpe_cli_parameter_group (RpeCliOptions *o)
{
  const GOptionEntry entries[] = {
    { "checkpoint", 0, 0, G_OPTION_ARG_FILENAME, &o->checkpoint, N_("Parameters from a checkpoint (.safetensors, .pt, .npz, .npy; 'demo': the embedded demo); else random init"), "FILE" },
    { "prefix", 0, 0, G_OPTION_ARG_STRING, &o->prefix, N_("Module prefix in the checkpoint (see rpe info)"), "P" },
    { "layer", 0, 0, G_OPTION_ARG_INT, &o->layer, N_("Layer I: its gate, or its code in an unshared model (default: the first)"), "I" },
    { "map", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->map, N_("Use TENSOR as ROLE (repeatable; roles: freqs offsets gains conv_q conv_k gate lrpe.v lrpe.theta lrpe.permutation fastrpb.w)"), "ROLE=TENSOR" },
    { "method", 0, 0, G_OPTION_ARG_STRING, &o->method, N_("sine or conv (random init; with a checkpoint, picks the module)"), "sine|conv" },
    { "heads", 0, 0, G_OPTION_ARG_INT, &o->heads, N_("Heads H for random init (default 8)"), "H" },
    { "features", 0, 0, G_OPTION_ARG_INT, &o->features, N_("Features per head D for random init (default 64)"), "D" },
    { "sines", 0, 0, G_OPTION_ARG_INT, &o->sines, N_("Sines K for random sine init (default 5)"), "K" },
    { "kernel", 0, 0, G_OPTION_ARG_INT, &o->kernel, N_("Filter length L for random conv init (default 128)"), "L" },
    { "length", 0, 0, G_OPTION_ARG_INT64, &o->length, N_("Sequence length N (default 256, or the inputs' length)"), "N" },
    { "realizations", 0, 0, G_OPTION_ARG_INT64, &o->realizations, N_("Realizations R (default 64, or the noise's R)"), "R" },
    { "seed", 0, 0, G_OPTION_ARG_INT64, &o->seed, N_("Seed of every random draw (default 0)"), "S" },
    { "no-gate", 0, 0, G_OPTION_ARG_NONE, &o->no_gate, N_("Ignore the gate"), NULL },
    { "gate", 0, G_OPTION_FLAG_REVERSE, G_OPTION_ARG_NONE, &o->no_gate, N_("Use the gate (the default; undoes an earlier --no-gate, e.g. a session's)"), NULL },
    { "causal", 0, 0, G_OPTION_ARG_NONE, &o->causal, N_("Causal attention (keys after the query are masked)"), NULL },
    { "no-causal", 0, G_OPTION_FLAG_REVERSE, G_OPTION_ARG_NONE, &o->causal, N_("Non-causal attention (the default; undoes an earlier --causal)"), NULL },
    { "noise", 0, 0, G_OPTION_ARG_FILENAME, &o->noise, N_("Replay this raw code noise (MATH.md section 10 layout)"), "Z.npy" },
    { "gate-noise", 0, 0, G_OPTION_ARG_FILENAME, &o->gate_noise, N_("Replay this raw gate noise, shape (H, D, R)"), "E.npy" },
    { "noise-scheme", 0, 0, G_OPTION_ARG_STRING, &o->noise_scheme, N_("How the noise is drawn (default iid; curves error: a comma list, one curve each)"), "iid|orthogonal|antithetic|sobol" },
    { "queries", 0, 0, G_OPTION_ARG_FILENAME, &o->queries, N_("Queries, shape (N, H, D) or (1, N, H, D)"), "Q.npy" },
    { "keys", 0, 0, G_OPTION_ARG_FILENAME, &o->keys, N_("Keys, shape (N, H, D) (default: the queries)"), "K.npy" },
    { "values", 0, 0, G_OPTION_ARG_FILENAME, &o->values, N_("Values, shape (N, H, Dv) (default: seeded N(0,1), Dv = D)"), "V.npy" },
    { "content", 0, 0, G_OPTION_ARG_STRING, &o->content, N_("Queries/keys when not loaded: unit (all ones, the pure positional view; default) or random (seeded N(0,1))"), "unit|random" },
    { "feature-map", 0, 0, G_OPTION_ARG_STRING, &o->feature_map, N_("Linear attention feature map (default elu1)"), "relu|elu1|exp|performer|dpfp" },
    { "performer-features", 0, 0, G_OPTION_ARG_INT, &o->performer_features, N_("Random features m for performer (default: the input width)"), "M" },
    { "dpfp-nu", 0, 0, G_OPTION_ARG_INT, &o->dpfp_nu, N_("DPFP parameter nu (default 1)"), "NU" },
    { "exact", 0, 0, G_OPTION_ARG_NONE, &o->exact, N_("Exact logits instead of the SPE estimate"), NULL },
    { "no-exact", 0, G_OPTION_FLAG_REVERSE, G_OPTION_ARG_NONE, &o->exact, N_("The SPE estimate (the default; undoes an earlier --exact)"), NULL },
    { "relative-embeddings", 0, 0, G_OPTION_ARG_FILENAME, &o->relative_embeddings, N_("rpe-logits: E of shape (2N-1, D) or (H, 2N-1, D)"), "E.npy" },
    { "head", 0, 0, G_OPTION_ARG_INT, &o->head, N_("Restrict a template to head h"), "h" },
    { "feature", 0, 0, G_OPTION_ARG_INT, &o->feature, N_("Restrict a template to feature d"), "d" },
    { "f64", 0, 0, G_OPTION_ARG_NONE, &o->f64, N_("Write float64 instead of float32"), NULL },
    { "force", 0, G_OPTION_FLAG_NO_ARG, G_OPTION_ARG_CALLBACK, (gpointer) parse_force, N_("Replace an existing output even if it is write-protected"), NULL },
    { "memory-budget", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer) parse_memory_budget, N_("The most memory one computation may use (default RPE_MEMORY_BUDGET, else 75% of RAM)"), "SIZE" },
    { "lrpe-p", 0, 0, G_OPTION_ARG_STRING, &o->lrpe_p, N_("LRPE P (default identity)"), "identity|householder|permutation|odd-even|fourier|dct" },
    { "lrpe-lambda", 0, 0, G_OPTION_ARG_STRING, &o->lrpe_lambda, N_("LRPE Lambda (default rotation)"), "rotation|mixed|complex|permutation" },
    { "lrpe-theta", 0, 0, G_OPTION_ARG_STRING, &o->lrpe_theta, N_("LRPE theta type (default a, RoPE)"), "a|b|c" },
    { "lrpe-norm", 0, 0, G_OPTION_ARG_STRING, &o->lrpe_norm, N_("lrpe-linear normalisation (default denominator)"), "denominator|layer|none" },
    { "lrpe-before", 0, 0, G_OPTION_ARG_NONE, &o->lrpe_before, N_("Apply LRPE before the feature map (default: after, as the reference code)"), NULL },
    { "lrpe-v", 0, 0, G_OPTION_ARG_FILENAME, &o->lrpe_v, N_("LRPE: a trained Householder v, D values (e.g. the module's (1, D, 1) `v`)"), "V.npy" },
    { "lrpe-theta-file", 0, 0, G_OPTION_ARG_FILENAME, &o->lrpe_theta_file, N_("LRPE: a learned theta, (1, 1, D//2) for rotation or (1, 1, D) for complex"), "T.npy" },
    { "lrpe-permutation", 0, 0, G_OPTION_ARG_FILENAME, &o->lrpe_permutation, N_("LRPE: the permutation buffer T, (1, max_positions, D)"), "P.npy" },
    { "lrpe-householder", 0, 0, G_OPTION_ARG_STRING, &o->lrpe_householder, N_("LRPE: a given v is learned (used as v/(|v|+1e-6)) or fixed (used as is); auto: fixed when |v| = 1 (default auto)"), "auto|learned|fixed" },
    { "bias-layout", 0, 0, G_OPTION_ARG_STRING, &o->bias_layout, N_("fastrpb: layout of the weights when the shape cannot tell: centred (2N-1 for tau = i-(N-1)), full ((1, H, 2M-1), the reference) or symmetric ((1, H, M))"), "centred|full|symmetric" },
    { "train-length", 0, 0, G_OPTION_ARG_INT64, &o->train_length, N_("Training length N_train (LRPE theta b/c use it; curves mark it)"), "N" },
    { "bias", 0, 0, G_OPTION_ARG_FILENAME, &o->bias, N_("fastrpb: Toeplitz weights, shape (2N-1,) or (H, 2N-1), index i for tau = i-(N-1)"), "W.npy" },
    { "grid", 0, 0, G_OPTION_ARG_STRING, &o->grid, N_("An N1 x N2 grid, positions flattened row-major: fastrpb 2-D, and template/empirical/codes/encode with 2-D convSPE"), "N1xN2" },
    { "kernel-cols", 0, 0, G_OPTION_ARG_INT, &o->kernel_cols, N_("2-D convSPE (--grid): filter columns L2 for random init (default: --kernel, the rows L1)"), "L2" },
    { "bias-rows", 0, 0, G_OPTION_ARG_FILENAME, &o->bias_rows, N_("fastrpb 2-D: 2 N1 - 1 row weights (optionally per head)"), "Wr.npy" },
    { "bias-cols", 0, 0, G_OPTION_ARG_FILENAME, &o->bias_cols, N_("fastrpb 2-D: 2 N2 - 1 column weights (optionally per head)"), "Wc.npy" },
    { "fastrpb-attention", 0, 0, G_OPTION_ARG_STRING, &o->fastrpb_attention, N_("fastrpb: add W V to this attention of q, k (default none: W V alone)"), "none|softmax|linear" },
    { NULL }
  };
  GOptionGroup *group = g_option_group_new ("parameters", N_("Parameter options"), N_("Show parameter options"), NULL, NULL);

  g_option_group_set_translation_domain (group, GETTEXT_PACKAGE);
  g_option_group_add_entries (group, entries);
  return group;
}

/* ------------------------------------------------------------------------ */
/* Which command uses which option                                          */

/* Every option a command does not use is refused (exit 2) with a message
 * naming the command and the option, so that a misplaced option never goes
 * silently unused (`rpe curves error --noise Z.npy` is an error, not a no-op).
 *
 * HOW TO ADD AN OPTION: add its GOptionEntry where it belongs (the parameter
 * group above, or the command's own entries), then add ONE row here: the long
 * name without "--", whether it takes a value, and the space-separated
 * commands that use it, as "COMMAND:SUB" glob patterns (g_pattern_match_simple),
 * SUB being the compute WHAT, the curves KIND or the export VIEW:
 *     { "my-option", TRUE, "compute:template compute:lrpe-* curves:*" },
 * An option with no row is accepted by every command that parses it.  Each
 * command calls rpe_cli_check_options (command, sub, argv) with its argv as
 * given (before g_option_context_parse), once it knows SUB.
 *
 * `rpe export` passes every view the whole parameter group (a view may be
 * drawn from any of them), so its rows say "export:*" where a view may use it. */
typedef struct
{
  const char *name;
  gboolean    has_arg;
  const char *used_by;
} OptionUse;

#define SPE_WHATS "compute:template compute:empirical compute:codes compute:encode compute:logits " \
                  "compute:attention compute:linear compute:rpe-logits"
#define CODE_WHATS "compute:empirical compute:codes compute:encode compute:logits compute:attention " \
                   "compute:linear"
#define INPUT_WHATS "compute:encode compute:logits compute:attention compute:linear compute:rpe-logits " \
                    "compute:lrpe-* compute:fastrpb"

static const OptionUse option_uses[] = {
  { "checkpoint", TRUE, SPE_WHATS " compute:lrpe-* compute:fastrpb curves:* export:*" },
  { "prefix", TRUE, SPE_WHATS " compute:lrpe-* compute:fastrpb curves:* export:*" },
  { "layer", TRUE, SPE_WHATS " curves:* export:*" },
  { "method", TRUE, SPE_WHATS " curves:* export:*" },
  { "heads", TRUE, SPE_WHATS " compute:lrpe-* compute:fastrpb curves:* export:*" },
  { "features", TRUE, SPE_WHATS " compute:lrpe-* compute:fastrpb curves:* export:*" },
  { "sines", TRUE, SPE_WHATS " curves:* export:*" },
  { "kernel", TRUE, SPE_WHATS " curves:* export:*" },
  { "no-gate", FALSE, SPE_WHATS " curves:* export:*" },
  /* the negations: a later one wins, so a value held by a session (`rpe export --session`) can be switched off */
  { "gate", FALSE, SPE_WHATS " curves:* export:*" },
  { "length", TRUE, "compute:* curves:* export:*" },
  { "realizations", TRUE, CODE_WHATS " curves:error curves:extrapolation curves:output-error export:*" },
  { "seed", TRUE, "compute:* curves:* export:*" },
  { "noise", TRUE, CODE_WHATS " export:*" },
  { "gate-noise", TRUE, "compute:empirical compute:encode compute:logits compute:attention compute:linear export:*" },
  { "queries", TRUE, INPUT_WHATS " curves:output-error export:*" },
  { "keys", TRUE, INPUT_WHATS " curves:output-error export:*" },
  { "values", TRUE, "compute:linear compute:lrpe-linear compute:fastrpb curves:output-error export:outputs" },
  { "content", TRUE, INPUT_WHATS " curves:profile curves:extrapolation curves:output-error export:*" },
  { "feature-map", TRUE, "compute:linear compute:lrpe-attention compute:lrpe-linear compute:fastrpb curves:output-error export:outputs export:attention" },
  { "performer-features", TRUE, "compute:linear compute:lrpe-attention compute:lrpe-linear compute:fastrpb curves:output-error export:outputs" },
  { "dpfp-nu", TRUE, "compute:linear compute:lrpe-attention compute:lrpe-linear compute:fastrpb curves:output-error export:outputs" },
  { "exact", FALSE, "compute:logits compute:attention export:*" },
  { "no-exact", FALSE, "compute:logits compute:attention export:*" },
  { "causal", FALSE, "compute:logits compute:attention compute:linear compute:rpe-logits compute:lrpe-attention "
                     "compute:lrpe-linear compute:fastrpb curves:profile curves:extrapolation curves:output-error export:*" },
  { "no-causal", FALSE, "compute:logits compute:attention compute:linear compute:rpe-logits compute:lrpe-attention "
                        "compute:lrpe-linear compute:fastrpb curves:profile curves:extrapolation curves:output-error export:*" },
  { "relative-embeddings", TRUE, "compute:rpe-logits" },
  { "head", TRUE, "compute:template compute:empirical curves:* export:*" },
  { "feature", TRUE, "compute:template compute:empirical curves:* export:*" },
  { "f64", FALSE, "compute:*" },
  { "lrpe-p", TRUE, "compute:lrpe-* curves:profile curves:extrapolation export:*" },
  { "lrpe-lambda", TRUE, "compute:lrpe-* curves:profile curves:extrapolation export:*" },
  { "lrpe-theta", TRUE, "compute:lrpe-* curves:profile curves:extrapolation export:*" },
  { "lrpe-v", TRUE, "compute:lrpe-* curves:profile curves:extrapolation export:*" },
  { "lrpe-theta-file", TRUE, "compute:lrpe-* curves:profile curves:extrapolation export:*" },
  { "lrpe-permutation", TRUE, "compute:lrpe-* curves:profile curves:extrapolation export:*" },
  { "lrpe-householder", TRUE, "compute:lrpe-* curves:profile curves:extrapolation export:*" },
  { "lrpe-norm", TRUE, "compute:lrpe-linear" },
  { "lrpe-before", FALSE, "compute:lrpe-attention compute:lrpe-linear" },
  { "train-length", TRUE, "compute:lrpe-* curves:* export:*" },
  { "bias", TRUE, "compute:fastrpb curves:profile curves:extrapolation export:*" },
  { "bias-layout", TRUE, "compute:fastrpb curves:profile curves:extrapolation export:*" },
  { "grid", TRUE, SPE_WHATS " compute:fastrpb" },
  { "kernel-cols", TRUE, "compute:template compute:empirical compute:codes compute:encode" },
  /* sessions (issue 15): the heatmap views that a session can hold */
  { "session", TRUE, "export:templates export:template export:attention export:spe-vs-rpe export:curves" },
  { "save-session", TRUE, "export:templates export:template export:attention export:spe-vs-rpe export:curves" },
  /* the Attention view's methods and zoom (a session's attention figure) */
  { "attention-method", TRUE, "export:attention" },
  { "rows", TRUE, "export:attention" },
  { "cols", TRUE, "export:attention" },
  { "noise-scheme", TRUE, CODE_WHATS " curves:error export:*" },
  /* --map: the SPE roles for the SPE module loader, lrpe.* for the LRPE commands, fastrpb.w for fastrpb */
  { "map", TRUE, SPE_WHATS " compute:lrpe-* compute:fastrpb curves:* export:*" },
  { "bias-rows", TRUE, "compute:fastrpb" },
  { "bias-cols", TRUE, "compute:fastrpb" },
  { "fastrpb-attention", TRUE, "compute:fastrpb" },
  { "out-keys", TRUE, "compute:codes compute:encode compute:lrpe-encode" },
  { "force", FALSE, "compute:* curves:* export:*" },
  /* rpe export compare-* | overview (rpe-cli-compare.c) */
  { "b-checkpoint", TRUE, "export:compare-*" },
  { "b-layer", TRUE, "export:compare-*" },
  { "b-head", TRUE, "export:compare-*" },
  { "b-method", TRUE, "export:compare-*" },
  { "cells", TRUE, "export:overview" },
  /* the figure size preset: every export view, the outputs too */
  { "preset", TRUE, "export:*" },
  /* the heatmaps' colour scale (the window's colour-scale control): heatmap views only */
  { "color-scale", TRUE, "export:templates export:template export:attention export:spe-vs-rpe export:outputs export:compare-* export:overview" },
  { "gamma", TRUE, "export:templates export:template export:attention export:spe-vs-rpe export:outputs export:compare-* export:overview" },
  { "percentile", TRUE, "export:templates export:template export:attention export:spe-vs-rpe export:outputs export:compare-* export:overview" },
  /* rpe curves' own options */
  { "realizations-list", TRUE, "curves:error curves:output-error export:outputs" },
  { "seeds", TRUE, "curves:error" },
  { "against", TRUE, "curves:error" },
  { "models", TRUE, "curves:profile curves:extrapolation" },
  { "max-length", TRUE, "curves:extrapolation" },
  { "window", TRUE, "curves:extrapolation" },
  { "block", TRUE, "curves:extrapolation" },
};

static gboolean
option_used_by (const OptionUse *u,
                const char      *id)
{
  g_auto (GStrv) patterns = g_strsplit (u->used_by, " ", -1);

  for (guint i = 0; patterns[i] != NULL; i++)
    if (patterns[i][0] != '\0' && g_pattern_match_simple (patterns[i], id))
      return TRUE;
  return FALSE;
}

gboolean
rpe_cli_check_options (const char  *command,
                       const char  *sub,
                       char       **argv,
                       GError     **error)
{
  g_autofree char *id = g_strdup_printf ("%s:%s", command, sub != NULL ? sub : "");

  for (guint i = 1; argv != NULL && argv[i] != NULL; i++)
    {
      const char *arg = argv[i];
      g_autofree char *name = NULL;
      const char *eq;

      if (g_str_equal (arg, "--"))
        break;
      if (!g_str_has_prefix (arg, "--"))
        continue;
      eq = strchr (arg, '=');
      name = eq != NULL ? g_strndup (arg + 2, (gsize) (eq - arg - 2)) : g_strdup (arg + 2);
      for (guint k = 0; k < G_N_ELEMENTS (option_uses); k++)
        {
          const OptionUse *u = &option_uses[k];

          if (!g_str_equal (u->name, name))
            continue;
          if (!option_used_by (u, id))
            return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                                  _("--%s is not used by 'rpe %s %s'; remove it (see 'rpe %s --help-all')"),
                                  name, command, sub != NULL ? sub : "", command);
          if (u->has_arg && eq == NULL && argv[i + 1] != NULL)
            i++;   /* skip the option's value */
          break;
        }
    }
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* Parameters and inputs                                                    */

static gboolean
check_positive (gint64 value, gint64 max, const char *option, GError **error)
{
  if (value < 1 || value > max)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          "%s must be between 1 and %" G_GINT64_FORMAT " (got %" G_GINT64_FORMAT ")",
                          option, max, value);
  return TRUE;
}

/* --map ROLE=TENSOR (repeatable) into a tensor map; NULL when not given. */
gboolean
rpe_cli_parse_map (const RpeCliOptions  *o,
                   RpeTensorMap        **map,
                   GError              **error)
{
  *map = NULL;
  if (o->map == NULL || o->map[0] == NULL)
    return TRUE;
  if (o->checkpoint == NULL)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--map names tensors of a checkpoint: give --checkpoint"));
  *map = rpe_tensor_map_new ();
  for (char **a = o->map; *a != NULL; a++)
    if (!rpe_tensor_map_parse (*map, *a, error))
      {
        g_clear_pointer (map, rpe_tensor_map_free);
        return FALSE;
      }
  return TRUE;
}

gboolean
rpe_cli_map_only (const RpeTensorMap *map,
                  RpeRole             first,
                  RpeRole             last,
                  const char         *what,
                  GError            **error)
{
  for (int r = 0; r < RPE_N_ROLES; r++)
    if ((r < (int) first || r > (int) last) && rpe_tensor_map_get (map, (RpeRole) r) != NULL)
      return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--map %s=...: %s reads no such role (it reads %s%s%s)"),
                            rpe_role_to_string ((RpeRole) r), what, rpe_role_to_string (first),
                            first != last ? " .. " : "", first != last ? rpe_role_to_string (last) : "");
  return TRUE;
}

RpeTensorSet *
rpe_cli_read_checkpoint (const char  *path,
                         GError     **error)
{
  /* "demo" is the embedded demo checkpoint and "demo:NAME" a trained one (rpe-demos.h), unless a
   * file of that name exists */
  if (rpe_demos_is_spec (path) && !g_file_test (path, G_FILE_TEST_EXISTS))
    return rpe_demos_read (path, error);
  return rpe_checkpoint_read (path, error);
}

gboolean
rpe_cli_load_params (const RpeCliOptions *o,
                     RpeSpeParams        *params,
                     GError             **error)
{
  RpeSpeMethod method = RPE_SPE_SINE;
  RpeStatus st;

  memset (params, 0, sizeof *params);
  if (o->method != NULL)
    {
      if (g_str_equal (o->method, "sine"))
        method = RPE_SPE_SINE;
      else if (g_str_equal (o->method, "conv"))
        method = RPE_SPE_CONV;
      else
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                              _("--method must be sine or conv (got '%s')"), o->method);
    }

  if (o->checkpoint != NULL)
    {
      g_autoptr(RpeTensorSet) set = rpe_cli_read_checkpoint (o->checkpoint, error);
      g_autoptr(RpeTensorMap) map = NULL;
      g_autofree char *note = NULL;
      RpeSpeSelection sel = RPE_SPE_SELECTION_INIT;

      if (set == NULL)
        return FALSE;
      if (!rpe_cli_parse_map (o, &map, error)
          || (map != NULL && !rpe_cli_map_only (map, RPE_ROLE_SINE_FREQS, RPE_ROLE_GATE, "an SPE module", error)))
        return FALSE;
      sel.prefix = o->prefix;
      sel.layer = o->layer;
      sel.method = o->method != NULL ? (int) method : -1;
      sel.no_gate = o->no_gate;
      sel.map = map;
      if (!rpe_checkpoint_load_spe_full (set, &sel, params, &note, error))
        {
          g_prefix_error (error, "%s: ", o->checkpoint);
          return FALSE;
        }
      if (note != NULL)
        {
          g_autofree char *escaped = g_strescape (note, "\n");
          fprintf (stderr, _("rpe: %s\n"), escaped);
        }
    }
  else
    {
      if (!check_positive (o->heads, 4096, "--heads", error)
          || !check_positive (o->features, 1 << 16, "--features", error)
          || (method == RPE_SPE_SINE && !check_positive (o->sines, 1 << 16, "--sines", error))
          || (method == RPE_SPE_CONV && !check_positive (o->kernel, 1 << 24, "--kernel", error)))
        return FALSE;
      {
        /* sine: freqs, offsets, gains (H, D, K); conv: two (H*D, L) filters; the gate (H, D) */
        const gsize dims[2][4] = {
          { (gsize) o->heads, (gsize) o->features, method == RPE_SPE_SINE ? (gsize) o->sines : (gsize) o->kernel,
            method == RPE_SPE_SINE ? 3 : 2 },
          { (gsize) o->heads, (gsize) o->features, 1, 1 },
        };
        if (!rpe_cli_check_budget ("random parameters", 2, dims, error))
          return FALSE;
      }
      st = rpe_spe_params_init (params, method, (size_t) o->heads, (size_t) o->features,
                                method == RPE_SPE_SINE ? (size_t) o->sines : (size_t) o->kernel, TRUE);
      if (st == RPE_OK)
        st = rpe_spe_params_random (params, (uint64_t) o->seed);
      if (st != RPE_OK)
        {
          rpe_spe_params_clear (params);
          return rpe_cli_status_error (st, "random parameters", error);
        }
    }
  if (o->no_gate && params->gate != NULL)
    {
      rpe_free (params->gate);
      params->gate = NULL;
    }
  return TRUE;
}

/* Reads an .npy of `want_ndim` dims, accepting one extra leading 1 (a batch of one). */
RpeTensor *
rpe_cli_read_array (const char  *path,
                    gsize        want_ndim,
                    const char  *what,
                    GError     **error)
{
  g_autoptr(RpeTensor) t = rpe_npy_read (path, error);

  if (t == NULL)
    return NULL;
  if (t->ndim == want_ndim + 1 && t->shape[0] == 1)
    {
      memmove (t->shape, t->shape + 1, want_ndim * sizeof t->shape[0]);
      t->ndim = want_ndim;
    }
  if (t->ndim != want_ndim)
    {
      g_autofree char *shape = rpe_tensor_shape_string (t);
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("%s: %s must have %zu dimensions, got shape %s"),
                     path, what, (size_t) want_ndim, shape);
      return NULL;
    }
  if (!rpe_tensor_check_finite (t, error))
    {
      g_prefix_error (error, "%s: ", path);
      return NULL;
    }
  return g_steal_pointer (&t);
}

/* N, from --length or the inputs. */
gboolean
rpe_cli_resolve_length (const RpeCliOptions *o,
                        gsize                input_length,
                        gsize               *n,
                        GError             **error)
{
  if (o->length != RPE_CLI_UNSET)
    {
      if (!check_positive (o->length, (gint64) 1 << 32, "--length", error))
        return FALSE;
      if (input_length != 0 && (gsize) o->length != input_length)
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                              "--length %" G_GINT64_FORMAT " does not match the inputs' length %zu",
                              o->length, (size_t) input_length);
      *n = (gsize) o->length;
    }
  else
    *n = input_length != 0 ? input_length : 256;
  return TRUE;
}

void
rpe_cli_inputs_clear (RpeCliInputs *in)
{
  rpe_free (in->q);
  rpe_free (in->k);
  rpe_free (in->v);
  memset (in, 0, sizeof *in);
}

static float *
take_tensor_data (RpeTensor *t)
{
  float *data = t->data;

  t->data = NULL;
  rpe_tensor_free (t);
  return data;
}

gboolean
rpe_cli_content_random (const RpeCliOptions *o,
                        gboolean            *random,
                        GError             **error)
{
  *random = FALSE;
  if (o->content == NULL || g_str_equal (o->content, "unit"))
    return TRUE;
  if (g_str_equal (o->content, "random"))
    {
      *random = TRUE;
      return TRUE;
    }
  return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                        _("--content must be unit or random (got '%s')"), o->content);
}

void
rpe_cli_content_rows (const RpeCliOptions *o,
                      gboolean             random,
                      gsize                H,
                      gsize                D,
                      gsize                m0,
                      gsize                rows,
                      float               *q,
                      float               *k)
{
  gsize count = rows * H * D;   /* the caller allocated it */

  if (random)
    {
      rpe_rng_normal_parallel ((uint64_t) o->seed, RPE_STREAM_QUERIES, m0 * H * D, q, count, 0);
      if (k != NULL)
        rpe_rng_normal_parallel ((uint64_t) o->seed, RPE_STREAM_KEYS, m0 * H * D, k, count, 0);
    }
  else
    for (gsize i = 0; i < count; i++)
      {
        q[i] = 1.0f;
        if (k != NULL)
          k[i] = 1.0f;
      }
}

/* Queries/keys (N, H, D) and optionally values (N, H, Dv); decides N. */
gboolean
rpe_cli_load_inputs (const RpeCliOptions *o,
                     const RpeSpeParams  *params,
                     gboolean             want_values,
                     RpeCliInputs        *in,
                     GError             **error)
{
  gsize H = params->n_heads, D = params->n_features, n_in = 0, count;
  RpeTensor *v = NULL;
  RpeStatus st;

  memset (in, 0, sizeof *in);
  if (o->keys != NULL && o->queries == NULL)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--keys needs --queries"));
  if (o->queries != NULL)
    {
      RpeTensor *q = rpe_cli_read_array (o->queries, 3, "queries", error), *k = NULL;

      if (q == NULL)
        return FALSE;
      if (q->shape[1] != H || q->shape[2] != D)
        {
          rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                         _("%s: queries must have shape (N, %zu, %zu) to match the parameters, got (%zu, %zu, %zu)"),
                         o->queries, (size_t) H, (size_t) D,
                         (size_t) q->shape[0], (size_t) q->shape[1], (size_t) q->shape[2]);
          rpe_tensor_free (q);
          return FALSE;
        }
      if (o->keys != NULL)
        {
          k = rpe_cli_read_array (o->keys, 3, "keys", error);
          if (k == NULL)
            {
              rpe_tensor_free (q);
              return FALSE;
            }
          if (k->shape[0] != q->shape[0] || k->shape[1] != H || k->shape[2] != D)
            {
              rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                             _("%s: keys must have the queries' shape (%zu, %zu, %zu)"),
                             o->keys, (size_t) q->shape[0], (size_t) H, (size_t) D);
              rpe_tensor_free (q);
              rpe_tensor_free (k);
              return FALSE;
            }
        }
      n_in = q->shape[0];
      in->n = n_in;
      in->q = take_tensor_data (q);
      if (k != NULL)
        in->k = take_tensor_data (k);
      else
        {
          in->k = rpe_alloc (n_in * H * D, sizeof (float), &st);
          if (in->k == NULL)
            {
              rpe_cli_inputs_clear (in);
              return rpe_cli_status_error (st, "keys", error);
            }
          memcpy (in->k, in->q, n_in * H * D * sizeof (float));
        }
    }

  if (want_values && o->values != NULL)
    {
      v = rpe_cli_read_array (o->values, 3, "values", error);
      if (v == NULL)
        {
          rpe_cli_inputs_clear (in);
          return FALSE;
        }
      if (n_in == 0)
        n_in = v->shape[0];   /* without queries, the values decide N */
    }

  if (!rpe_cli_resolve_length (o, n_in, &in->n, error))
    {
      rpe_tensor_free (v);
      rpe_cli_inputs_clear (in);
      return FALSE;
    }

  if (in->q == NULL)
    {
      gboolean random = FALSE;

      if (!rpe_cli_content_random (o, &random, error))
        {
          rpe_tensor_free (v);
          rpe_cli_inputs_clear (in);
          return FALSE;
        }
      st = rpe_size_bytes (&count, 1, in->n, H, D, 1);
      if (st == RPE_OK)
        in->q = rpe_alloc (count, sizeof (float), &st);
      if (st == RPE_OK)
        in->k = rpe_alloc (count, sizeof (float), &st);
      if (st != RPE_OK)
        {
          rpe_tensor_free (v);
          rpe_cli_inputs_clear (in);
          return rpe_cli_status_error (st, "queries and keys", error);
        }
      rpe_cli_content_rows (o, random, H, D, 0, in->n, in->q, in->k);
    }

  in->dv = D;
  /* v is only read when want_values */
  if (want_values)
    {
      if (v != NULL)
        {
          if (v->shape[0] != in->n || v->shape[1] != H || v->shape[2] == 0)
            {
              rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                             _("%s: values must have shape (%zu, %zu, Dv), got (%zu, %zu, %zu)"),
                             o->values, (size_t) in->n, (size_t) H,
                             (size_t) v->shape[0], (size_t) v->shape[1], (size_t) v->shape[2]);
              rpe_tensor_free (v);
              rpe_cli_inputs_clear (in);
              return FALSE;
            }
          in->dv = v->shape[2];
          in->v = take_tensor_data (v);
        }
      else
        {
          st = rpe_size_bytes (&count, 1, in->n, H, D, 1);
          if (st == RPE_OK)
            in->v = rpe_alloc (count, sizeof (float), &st);
          if (st != RPE_OK)
            {
              rpe_cli_inputs_clear (in);
              return rpe_cli_status_error (st, "values", error);
            }
          rpe_rng_normal ((uint64_t) o->seed, RPE_STREAM_VALUES, 0, in->v, count);
        }
    }
  return TRUE;
}

/* R from --realizations, or from the noise file, or 64. */
static gboolean
resolve_realizations (const RpeCliOptions *o,
                      gsize                from_noise,
                      gsize               *r,
                      GError             **error)
{
  if (o->realizations != RPE_CLI_UNSET)
    {
      if (!check_positive (o->realizations, (gint64) 1 << 24, "--realizations", error))
        return FALSE;
      if (from_noise != 0 && (gsize) o->realizations != from_noise)
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                              "--realizations %" G_GINT64_FORMAT " does not match the noise's R = %zu",
                              o->realizations, (size_t) from_noise);
      *r = (gsize) o->realizations;
    }
  else
    *r = from_noise != 0 ? from_noise : 64;
  return TRUE;
}

void
rpe_cli_codes_clear (RpeCliCodes *c)
{
  rpe_free (c->qbar);
  rpe_free (c->kbar);
  memset (c, 0, sizeof *c);
}

/* Codes (N, H, D, R) from replayed or seeded noise; gated if `gate` and the params have a gate. */
gboolean
rpe_cli_make_codes (const RpeCliOptions *o,
                    const RpeSpeParams  *params,
                    gsize                n,
                    gboolean             gate,
                    RpeCliCodes         *codes,
                    GError             **error)
{
  gsize H = params->n_heads, D = params->n_features, r = 0, count, zcount;
  g_autoptr(RpeTensor) z = NULL;
  g_autoptr(RpeTensor) eps = NULL;
  float *zbuf = NULL, *ebuf = NULL;
  RpeNoiseScheme scheme;
  RpeStatus st;
  gboolean ok = FALSE;

  memset (codes, 0, sizeof *codes);
  if (!rpe_cli_noise_scheme (o, &scheme, error))
    return FALSE;
  if (o->noise != NULL)
    {
      gsize want_ndim = params->method == RPE_SPE_SINE ? 4 : 3;

      z = rpe_cli_read_array (o->noise, want_ndim, "the code noise", error);
      if (z == NULL)
        return FALSE;
      if (params->method == RPE_SPE_SINE)
        {
          if (z->shape[0] != H || z->shape[1] != D || z->shape[2] != 2 * params->n_sines)
            return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                                  _("%s: sine noise must have shape (%zu, %zu, %zu, R), got (%zu, %zu, %zu, %zu)"),
                                  o->noise, (size_t) H, (size_t) D, (size_t) (2 * params->n_sines),
                                  (size_t) z->shape[0], (size_t) z->shape[1], (size_t) z->shape[2],
                                  (size_t) z->shape[3]);
          r = z->shape[3];
        }
      else
        {
          if (z->shape[1] != H * D || z->shape[2] != n + 4 * params->kernel)
            return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                                  _("%s: conv noise must have shape (R, %zu, %zu) = (R, H*D, N+4L), got (%zu, %zu, %zu)"),
                                  o->noise, (size_t) (H * D), (size_t) (n + 4 * params->kernel),
                                  (size_t) z->shape[0], (size_t) z->shape[1], (size_t) z->shape[2]);
          r = z->shape[0];
        }
      if (r == 0)
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("%s: the noise has R = 0"), o->noise);
    }
  if (!resolve_realizations (o, r, &r, error))
    return FALSE;
  {
    /* the noise, both codes, the gate noise */
    const gsize dims[4][4] = {
      { H, D, params->method == RPE_SPE_SINE ? 2 * params->n_sines : 1,
        params->method == RPE_SPE_SINE ? r : r * (n + 4 * params->kernel) },
      { n, H, D, r },
      { n, H, D, r },
      { H, D, r, 1 },
    };
    if (z == NULL && !rpe_cli_check_budget ("codes", 4, dims, error))
      return FALSE;
    if (z != NULL && !rpe_cli_check_budget ("codes", 3, dims + 1, error))
      return FALSE;
  }

  if (z != NULL)
    zbuf = z->data;
  else
    {
      st = rpe_spe_noise_size (params, n, r, &zcount);
      if (st == RPE_OK)
        zbuf = rpe_alloc (zcount, sizeof (float), &st);
      if (st == RPE_OK)
        st = rpe_spe_noise_fill (params, n, r, (uint64_t) o->seed, zbuf);
      /* noise scheme hook (rpe-noise.h): with a gate, its noise is one more coordinate of
       * each cell, so it is drawn here, before the codes */
      if (st == RPE_OK && scheme != RPE_NOISE_IID && gate && params->gate != NULL)
        {
          st = rpe_size_bytes (&count, 1, H, D, r, 1);
          if (st == RPE_OK)
            ebuf = rpe_alloc (count, sizeof (float), &st);
          if (st == RPE_OK)
            st = rpe_spe_gate_noise_fill (params, r, (uint64_t) o->seed, ebuf);
        }
      if (st == RPE_OK && scheme != RPE_NOISE_IID)
        st = rpe_noise_apply (scheme, params, n, r, (uint64_t) o->seed, zbuf, ebuf);
      if (st != RPE_OK)
        {
          rpe_cli_status_error (st, "code noise", error);
          goto out;
        }
    }

  st = rpe_size_bytes (&count, 1, n, H, D, r);
  if (st == RPE_OK)
    codes->qbar = rpe_alloc (count, sizeof (float), &st);
  if (st == RPE_OK)
    codes->kbar = rpe_alloc (count, sizeof (float), &st);
  if (st == RPE_OK)
    st = rpe_spe_codes (params, n, r, zbuf, codes->qbar, codes->kbar, NULL);
  if (st != RPE_OK)
    {
      rpe_cli_status_error (st, "codes", error);
      goto out;
    }
  codes->n = n;
  codes->r = r;

  if (gate && params->gate != NULL)
    {
      if (o->gate_noise != NULL)
        {
          eps = rpe_cli_read_array (o->gate_noise, 3, "the gate noise", error);
          if (eps == NULL)
            goto out;
          if (eps->shape[0] != H || eps->shape[1] != D || eps->shape[2] != r)
            {
              rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                             _("%s: gate noise must have shape (%zu, %zu, %zu) = (H, D, R), got (%zu, %zu, %zu)"),
                             o->gate_noise, (size_t) H, (size_t) D, (size_t) r,
                             (size_t) eps->shape[0], (size_t) eps->shape[1], (size_t) eps->shape[2]);
              goto out;
            }
          ebuf = eps->data;
        }
      else if (ebuf == NULL)
        {
          st = rpe_size_bytes (&count, 1, H, D, r, 1);
          if (st == RPE_OK)
            ebuf = rpe_alloc (count, sizeof (float), &st);
          if (st == RPE_OK)
            st = rpe_spe_gate_noise_fill (params, r, (uint64_t) o->seed, ebuf);
          if (st != RPE_OK)
            {
              rpe_cli_status_error (st, "gate noise", error);
              goto out;
            }
        }
      st = rpe_spe_gate_codes (params, n, r, ebuf, codes->qbar, codes->kbar);
      if (st != RPE_OK)
        {
          rpe_cli_status_error (st, "gating", error);
          goto out;
        }
    }
  ok = TRUE;

out:
  if (z == NULL)
    rpe_free (zbuf);
  if (eps == NULL)
    rpe_free (ebuf);
  if (!ok)
    rpe_cli_codes_clear (codes);
  return ok;
}

/* Encoded queries and keys (N, H, R) from gated codes and the content. */
gboolean
rpe_cli_encode (const RpeSpeParams *params,
                const RpeCliCodes  *codes,
                const RpeCliInputs *in,
                float             **qhat,
                float             **khat,
                GError            **error)
{
  gsize count;
  RpeStatus st = rpe_size_bytes (&count, 1, codes->n, params->n_heads, codes->r, 1);

  *qhat = *khat = NULL;
  if (st == RPE_OK)
    *qhat = rpe_alloc (count, sizeof (float), &st);
  if (st == RPE_OK)
    *khat = rpe_alloc (count, sizeof (float), &st);
  if (st == RPE_OK)
    st = rpe_spe_encode (codes->n, params->n_heads, params->n_features, codes->r,
                         codes->qbar, codes->kbar, in->q, in->k, *qhat, *khat, NULL);
  if (st != RPE_OK)
    {
      g_clear_pointer (qhat, rpe_free);
      g_clear_pointer (khat, rpe_free);
      return rpe_cli_status_error (st, "encoding", error);
    }
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* Output                                                                   */

gboolean
rpe_cli_check_output (const RpeCliOptions *o,
                      const char          *path,
                      GError             **error)
{
  const char *inputs[] = {
    o->checkpoint, o->noise, o->gate_noise, o->queries, o->keys, o->values,
    o->relative_embeddings, o->bias, o->bias_rows, o->bias_cols,
  };

  for (gsize i = 0; i < G_N_ELEMENTS (inputs); i++)
    rpe_file_add_input (inputs[i]);
  return path == NULL || rpe_output_check (path, error);
}

gboolean
rpe_cli_check_finite (const char   *path,
                      const float  *data,
                      gsize         count,
                      gsize         first,
                      gsize         ndim,
                      const gsize  *shape,
                      int          *exit_code,
                      GError      **error)
{
  if (rpe_all_finite_f (data, count))
    return TRUE;
  for (gsize i = 0; i < count; i++)
    if (!isfinite (data[i]))
      {
        GString *index = g_string_new (NULL);
        gsize rest = first + i;
        gsize idx[RPE_TENSOR_MAX_DIMS] = { 0 };
        g_autofree char *name = g_path_get_basename (path);

        for (gsize d = ndim; d-- > 0 && d < RPE_TENSOR_MAX_DIMS;)
          {
            idx[d] = shape[d] != 0 ? rest % shape[d] : 0;
            rest = shape[d] != 0 ? rest / shape[d] : 0;
          }
        for (gsize d = 0; d < ndim && d < RPE_TENSOR_MAX_DIMS; d++)
          g_string_append_printf (index, d == 0 ? "%zu" : ", %zu", (size_t) idx[d]);
        *exit_code = EXIT_USAGE;
        rpe_set_error (error, RPE_ERROR_NOT_FINITE,
                       _("the result for %s would hold %g at index [%s]: the parameters or inputs are "
                         "finite but too large for float32 arithmetic; nothing was written"),
                       name, (double) data[i], index->str);
        g_string_free (index, TRUE);
        return FALSE;
      }
  return TRUE;
}

static gboolean
check_finite_result (const char   *path,
                     const float  *data,
                     gsize         ndim,
                     const gsize  *shape,
                     int          *exit_code,
                     GError      **error)
{
  gsize count;

  return !rpe_size_prod (&count, ndim, shape)
         || rpe_cli_check_finite (path, data, count, 0, ndim, shape, exit_code, error);
}

gboolean
rpe_cli_write (const RpeCliOptions *o,
               const char          *path,
               const float         *data,
               gsize                ndim,
               const gsize         *shape,
               int                 *exit_code,
               GError             **error)
{
  if (!check_finite_result (path, data, ndim, shape, exit_code, error))
    return FALSE;
  if (!rpe_npy_write (path, data, ndim, shape, o->f64, error))
    {
      *exit_code = EXIT_FAILURE_OTHER;
      return FALSE;
    }
  return TRUE;
}

typedef struct
{
  RpeNpyWriter *writer;
  GError       *error;
} FlushJob;

static gpointer
flush_job (gpointer data)
{
  FlushJob *f = data;

  if (f->writer != NULL && !rpe_npy_writer_flush (f->writer, &f->error))
    g_clear_pointer (&f->writer, rpe_npy_writer_abort);
  return NULL;
}

gboolean
rpe_cli_commit_pair (RpeNpyWriter  *a,
                     RpeNpyWriter  *b,
                     int           *exit_code,
                     GError       **error)
{
  FlushJob jobs[2] = { { a, NULL }, { b, NULL } };
  GThread *thread = b != NULL ? g_thread_try_new ("rpe-flush", flush_job, &jobs[1], NULL) : NULL;
  gboolean ok = TRUE;

  /* the two fsyncs overlap */
  flush_job (&jobs[0]);
  if (thread != NULL)
    g_thread_join (thread);
  else
    flush_job (&jobs[1]);
  for (int i = 0; i < 2; i++)
    if (jobs[i].error != NULL)
      {
        if (ok)
          g_propagate_error (error, g_steal_pointer (&jobs[i].error));
        g_clear_error (&jobs[i].error);
        ok = FALSE;
      }
  for (int i = 0; i < 2; i++)
    {
      if (ok)
        ok = jobs[i].writer == NULL || rpe_npy_writer_commit (g_steal_pointer (&jobs[i].writer), error);
      else
        rpe_npy_writer_abort (g_steal_pointer (&jobs[i].writer));
    }
  if (!ok)
    *exit_code = EXIT_FAILURE_OTHER;
  return ok;
}

/* One file of rpe_cli_write_pair: written and flushed, not yet renamed. */
typedef struct
{
  const char   *path;
  const float  *data;
  gsize         ndim;
  const gsize  *shape;
  gboolean      f64;
  RpeNpyWriter *writer;   /* flushed, on success */
  GError       *error;
} PairFile;

static gpointer
pair_file_write (gpointer data)
{
  PairFile *f = data;
  RpeNpyWriter *w = rpe_npy_writer_new (f->path, f->ndim, f->shape, f->f64, &f->error);
  gsize count = 1;

  for (gsize i = 0; i < f->ndim; i++)
    count *= f->shape[i];   /* rpe_npy_writer_new checked the product */
  if (w != NULL
      && (!rpe_npy_writer_append (w, f->data, count, &f->error) || !rpe_npy_writer_flush (w, &f->error)))
    g_clear_pointer (&w, rpe_npy_writer_abort);
  f->writer = w;
  return NULL;
}

gboolean
rpe_cli_write_pair (const RpeCliOptions *o,
                    const char          *path_a,
                    const float         *a,
                    const char          *path_b,
                    const float         *b,
                    gsize                ndim,
                    const gsize         *shape,
                    int                 *exit_code,
                    GError             **error)
{
  PairFile files[2] = {
    { path_a, a, ndim, shape, o->f64, NULL, NULL },
    { path_b, b, ndim, shape, o->f64, NULL, NULL },
  };
  GThread *thread;
  gboolean ok = TRUE;

  if (path_b == NULL)
    return rpe_cli_write (o, path_a, a, ndim, shape, exit_code, error);
  if (!check_finite_result (path_a, a, ndim, shape, exit_code, error)
      || !check_finite_result (path_b, b, ndim, shape, exit_code, error))
    return FALSE;
  /* the copies into the page cache and the two fsyncs overlap */
  thread = g_thread_try_new ("rpe-write", pair_file_write, &files[1], NULL);
  pair_file_write (&files[0]);
  if (thread != NULL)
    g_thread_join (thread);
  else
    pair_file_write (&files[1]);
  for (int i = 0; i < 2; i++)
    if (files[i].writer == NULL && ok)
      {
        g_propagate_error (error, g_steal_pointer (&files[i].error));
        ok = FALSE;
      }
  /* both are on disk: publish them (a rename that still fails leaves the other file in place) */
  for (int i = 0; i < 2; i++)
    {
      if (ok)
        ok = rpe_npy_writer_commit (g_steal_pointer (&files[i].writer), error);
      else
        rpe_npy_writer_abort (g_steal_pointer (&files[i].writer));
      g_clear_error (&files[i].error);
    }
  if (!ok)
    *exit_code = EXIT_FAILURE_OTHER;
  return ok;
}

static int
compare_strings (const void *a,
                 const void *b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* ------------------------------------------------------------------------ */
/* rpe info                                                                 */

/* LRPE and FastRPB modules (issue 10), after the SPE ones */
static void
print_lrpe_fastrpb_modules (const RpeTensorSet *set)
{
  g_autoptr(GPtrArray) lrpe = rpe_checkpoint_find_lrpe_modules (set);
  g_autoptr(GPtrArray) fastrpb = rpe_checkpoint_find_fastrpb_modules (set);

  printf ("LRPE modules: %u\n", lrpe->len);
  for (guint i = 0; i < lrpe->len; i++)
    {
      const RpeLrpeModuleInfo *m = g_ptr_array_index (lrpe, i);
      g_autofree char *theta = m->theta ? rpe_tensor_shape_string (m->theta) : NULL;
      g_autofree char *perm = m->permutation ? rpe_tensor_shape_string (m->permutation) : NULL;
      g_autofree char *dim = m->dim ? g_strdup_printf ("%zu", (size_t) m->dim) : g_strdup ("(from theta)");

      printf ("  %-24s D=%s  v: %s  theta: %s  permutation: %s\n", m->prefix, dim,
              m->v ? "Householder (P householder)" : "none", theta ? theta : "none", perm ? perm : "none");
    }
  printf ("FastRPB modules: %u\n", fastrpb->len);
  for (guint i = 0; i < fastrpb->len; i++)
    {
      const RpeFastrpbModuleInfo *m = g_ptr_array_index (fastrpb, i);

      if (m->width % 2 == 0)
        printf ("  %-24s H=%zu  bias.w (1, %zu, %zu): symmetric, M = %zu\n", m->prefix, (size_t) m->n_heads,
                (size_t) m->n_heads, (size_t) m->width, (size_t) m->width);
      else
        printf ("  %-24s H=%zu  bias.w (1, %zu, %zu): full with M = %zu, or symmetric with M = %zu "
                "(--bias-layout)\n", m->prefix, (size_t) m->n_heads, (size_t) m->n_heads, (size_t) m->width,
                (size_t) (m->width + 1) / 2, (size_t) m->width);
    }
}

/* Names from a file, escaped for the terminal. */
static char *
info_escape (const char *name)
{
  return rpe_escape_name (name);
}

/* One module and its pairing: the code, and every gate with its layer. */
static void
rpe_cli_print_module (const RpeSpeModuleInfo *m)
{
  g_autofree char *prefix = info_escape (m->prefix);
  g_autofree char *code = info_escape (m->code_name);
  GString *size = g_string_new (NULL);

  if (m->method == RPE_SPE_SINE)
    g_string_printf (size, "K=%zu", (size_t) m->size);
  else if (m->size2 > 0)
    g_string_printf (size, "L=%zux%zu (2-D)", (size_t) m->size, (size_t) m->size2);
  else
    g_string_printf (size, "L=%zu", (size_t) m->size);
  printf ("  %-24s %s  H=%zu D=%zu %s  (%s)\n", prefix[0] != '\0' ? prefix : "''",
          m->method == RPE_SPE_SINE ? "sine" : "conv", (size_t) m->n_heads, (size_t) m->n_features,
          size->str, m->convention);
  g_string_free (size, TRUE);
  if (m->layers->len > 0 && g_str_has_suffix (m->convention, "-unshared"))
    {
      GString *layers = g_string_new (NULL);
      for (guint j = 0; j < m->layers->len; j++)
        g_string_append_printf (layers, "%s%d", j ? ", " : "", g_array_index (m->layers, int, j));
      printf ("      code: %s  (one per layer: %s)\n", code, layers->str);
      g_string_free (layers, TRUE);
    }
  else
    printf ("      code: %s\n", code);
  if (m->gates->len == 0)
    printf ("      gates: none\n");
  for (guint j = 0; j < m->gates->len; j++)
    {
      g_autofree char *gate = info_escape (g_ptr_array_index (m->gates, j));
      int layer = g_array_index (m->gate_layers, int, j);

      if (layer >= 0)
        printf ("      gate of layer %d: %s\n", layer, gate);
      else
        printf ("      gate shared by all layers: %s\n", gate);
    }
  if (m->pairing_note != NULL)
    {
      g_autofree char *n = info_escape (m->pairing_note);
      printf ("      ambiguous: %s (choose with --map gate=TENSOR)\n", n);
    }
}

static int
cmd_info (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(RpeTensorSet) set = NULL;
  g_autoptr(GPtrArray) modules = NULL;
  g_autoptr(GPtrArray) unpaired = NULL;

  if (argc != 2 || g_str_has_prefix (argv[1], "-"))
    {
      if (argc == 2 && (g_str_equal (argv[1], "--help") || g_str_equal (argv[1], "-h")))
        {
          g_auto (GStrv) demos = rpe_demos_list ();
          g_autofree char *names = g_strjoinv (", ", demos);

          printf ("Usage: rpe info FILE\n\nLists the tensors of a checkpoint (name, dtype, shape) and the SPE modules recognised.\n"
                  "FILE 'demo' is the embedded demo checkpoint; 'demo:NAME' a trained demo (%s), with its metadata.\n",
                  names);
          return 0;
        }
      fprintf (stderr, _("rpe info: usage: rpe info FILE\n"));
      return EXIT_USAGE;
    }
  set = rpe_cli_read_checkpoint (argv[1], &error);
  if (set == NULL)
    {
      fprintf (stderr, _("rpe info: %s\n"), error->message);
      return rpe_cli_exit_code_for_error (error);
    }
  {
    g_autofree char *shown = rpe_escape_name (argv[1]);

    printf ("%s: %zu tensors\n", shown, (size_t) rpe_tensor_set_size (set));
  }
  if (rpe_demos_is_spec (argv[1]) && !g_file_test (argv[1], G_FILE_TEST_EXISTS))
    {
      g_autoptr (GHashTable) meta = rpe_demos_metadata (argv[1], NULL);
      g_autofree gpointer *keys = meta != NULL ? g_hash_table_get_keys_as_array (meta, NULL) : NULL;
      guint n_keys = meta != NULL ? g_hash_table_size (meta) : 0;

      if (n_keys > 0)
        {
          qsort (keys, n_keys, sizeof (gpointer), compare_strings);
          printf ("metadata:\n");
          for (guint i = 0; i < n_keys; i++)
            printf ("  %-24s %s\n", (const char *) keys[i], (const char *) g_hash_table_lookup (meta, keys[i]));
        }
    }
  /* names come from the file: escaped (control characters, invalid UTF-8) */
  for (gsize i = 0; i < rpe_tensor_set_size (set); i++)
    {
      const RpeTensor *t = rpe_tensor_set_get (set, i);
      g_autofree char *shape = rpe_tensor_shape_string (t);
      g_autofree char *shown = rpe_escape_name (t->name);

      printf ("  %-48s %-4s %s\n", shown, rpe_dtype_to_string (t->dtype), shape);
    }
  modules = rpe_checkpoint_discover (set, &unpaired, &error);
  if (modules == NULL)
    {
      fprintf (stderr, _("rpe info: %s\n"), error->message);
      return rpe_cli_exit_code_for_error (error);
    }
  printf ("SPE modules: %u\n", modules->len);
  for (guint i = 0; i < modules->len; i++)
    rpe_cli_print_module (g_ptr_array_index (modules, i));
  if (unpaired->len > 0)
    {
      printf ("Gates paired with no module (use one with --map gate=TENSOR):\n");
      for (guint i = 0; i < unpaired->len; i++)
        {
          g_autofree char *name = info_escape (g_ptr_array_index (unpaired, i));
          printf ("  %s\n", name);
        }
    }
  print_lrpe_fastrpb_modules (set);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* main                                                                     */

static void
usage (FILE *f)
{
  fprintf (f, "%s",
           _("Usage:\n"
             "  rpe info FILE                    tensors and the SPE modules recognised\n"
             "  rpe compute WHAT [options] -o OUT.npy\n"
             "      WHAT: template | empirical | codes | encode | logits | attention | linear | rpe-logits |\n"
             "            lrpe-encode | lrpe-attention | lrpe-linear | fastrpb\n"
             "  rpe curves profile|error|extrapolation [options] -o OUT.csv\n"
             "  rpe fit --target T [options] -o FITTED.safetensors   fit SPE to another relative bias\n"
             "  rpe --version\n"
             "\n"
             "Run 'rpe compute --help-all' for the options.\n"));
}

int
main (int argc, char **argv)
{
  /* under a memory limit too small for OpenBLAS's threads: again, with one */
  rpe_os_memory_fit_threads (argv);
  setlocale (LC_ALL, "");
  /* Numbers are printed and parsed the C way whatever the locale. */
  setlocale (LC_NUMERIC, "C");
  bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);
  /* over `ulimit -f`, write () fails with EFBIG (reported, temporary file
   * removed) instead of the process dying of SIGXFSZ */
  signal (SIGXFSZ, SIG_IGN);
  /* no output may overwrite a file this command reads */
  rpe_file_track_inputs (TRUE);
  /* the readers' findings end with this tool's options */
  rpe_cli_remedy_install ();

  if (argc < 2)
    {
      usage (stderr);
      return EXIT_USAGE;
    }
  if (g_str_equal (argv[1], "--help") || g_str_equal (argv[1], "-h") || g_str_equal (argv[1], "help"))
    {
      usage (stdout);
      return 0;
    }
  if (g_str_equal (argv[1], "--version"))
    {
      printf ("rpe %s\n", PACKAGE_VERSION);
      return 0;
    }
  if (g_str_equal (argv[1], "info"))
    return cmd_info (argc - 1, argv + 1);
  if (g_str_equal (argv[1], "compute"))
    return rpe_cli_compute (argc - 1, argv + 1);
  if (g_str_equal (argv[1], "curves"))
    return rpe_cli_curves (argc - 1, argv + 1);
  if (g_str_equal (argv[1], "export"))
    {
      int status = rpe_cli_export (argc - 1, argv + 1);

      /* the figure text's Pango font map and its font caches, for a leak checker's clean exit */
      rpe_text_release_fonts ();
      return status;
    }
  if (g_str_equal (argv[1], "bench"))
    return rpe_cli_bench (argc - 1, argv + 1);
  if (g_str_equal (argv[1], "fit"))
    return rpe_cli_fit (argc - 1, argv + 1);
  fprintf (stderr, _("rpe: unknown command '%s'\n"), argv[1]);
  usage (stderr);
  return EXIT_USAGE;
}

/* The heatmap colour scale of `rpe export` (--color-scale NAME, --gamma G, --percentile P,
 * --attention-transform): the transform and its parameter; FALSE after a message on stderr
 * (a usage error).  Shared by the heatmap, outputs and compare exports. */
gboolean
rpe_cli_color_scale (const char          *view,
                     const char          *name,
                     double               gamma,
                     double               percentile,
                     gboolean             attention_transform,
                     RpeHeatmapTransform *transform,
                     double              *param)
{
  *transform = attention_transform ? RPE_HEATMAP_TRANSFORM_ATTENTION : RPE_HEATMAP_TRANSFORM_NONE;
  if (name != NULL)
    {
      RpeHeatmapTransform t;

      if (!rpe_plot_transform_from_name (name, &t))
        {
          fprintf (stderr, _("rpe export %s: --color-scale must be linear, log, power, percentile or attention "
                   "(got '%s')\n"), view, name);
          return FALSE;
        }
      if (attention_transform && t != RPE_HEATMAP_TRANSFORM_ATTENTION)
        {
          fprintf (stderr, _("rpe export %s: --attention-transform contradicts --color-scale %s\n"), view, name);
          return FALSE;
        }
      *transform = t;
    }
  if (gamma != 0.0 && (*transform != RPE_HEATMAP_TRANSFORM_POWER || !(gamma >= 0.05 && gamma <= 10.0)))
    {
      fprintf (stderr, _("rpe export %s: --gamma needs --color-scale power and a value in 0.05 .. 10\n"), view);
      return FALSE;
    }
  if (percentile != 0.0
      && (*transform != RPE_HEATMAP_TRANSFORM_PERCENTILE || !(percentile >= 50.0 && percentile <= 100.0)))
    {
      fprintf (stderr, _("rpe export %s: --percentile needs --color-scale percentile and a value in 50 .. 100\n"), view);
      return FALSE;
    }
  *param = *transform == RPE_HEATMAP_TRANSFORM_POWER ? (gamma != 0.0 ? gamma : RPE_PLOT_DEFAULT_GAMMA)
                      : *transform == RPE_HEATMAP_TRANSFORM_PERCENTILE
                      ? (percentile != 0.0 ? percentile : RPE_PLOT_DEFAULT_PERCENTILE) : 0.0;
  return TRUE;
}

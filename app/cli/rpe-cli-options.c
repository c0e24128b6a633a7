/* rpe-cli-options.c: the shared option groups of `rpe` and the one parser that builds every
 * leaf's options from its command's table and the groups it takes (rpe-cli-options.h). */
#include "config.h"

#include <cblas.h>
#include <glib/gi18n.h>
#include <stdio.h>
#include <string.h>

#include "rpe-alloc.h"
#include "rpe-error.h"
#include "rpe-file.h"

#include "rpe-cli-options.h"
#include "rpe-cli-parse.h"

#define EXIT_USAGE 2

/* ------------------------------------------------------------------------ */
/* The shared groups                                                        */

#define A(field) G_STRUCT_OFFSET (RpeCliArgs, field)

/* clang-format off */
static const RpeCliOption model_options[] = {
  RPE_CLI_FILE ("checkpoint", A (model.checkpoint), RPE_CLI_TAKES_MODEL,
                N_("Parameters from a checkpoint (.safetensors, .pt, .npz, .npy; 'demo': the embedded demo); else random init"),
                "FILE"),
  RPE_CLI_STRING ("prefix", A (model.prefix), RPE_CLI_TAKES_MODEL,
                  N_("Module prefix in the checkpoint (see rpe info)"), "P"),
  RPE_CLI_STRINGS ("map", A (model.map), RPE_CLI_TAKES_MODEL,
                   N_("Use TENSOR as ROLE (repeatable; roles: freqs offsets gains conv_q conv_k gate lrpe.v lrpe.theta lrpe.permutation fastrpb.w)"),
                   "ROLE=TENSOR"),
  RPE_CLI_INT ("heads", A (model.heads), RPE_CLI_TAKES_MODEL, 1, 4096, N_("Heads H for random init (default 8)"), "H"),
  RPE_CLI_INT ("features", A (model.features), RPE_CLI_TAKES_MODEL, 1, 1 << 16,
               N_("Features per head D for random init (default 64)"), "D"),
  RPE_CLI_INT ("layer", A (model.layer), RPE_CLI_TAKES_SPE | RPE_CLI_TAKES_LAYER, 0, G_MAXINT,
               N_("Layer I: its gate, or its code in an unshared model, and the layer of a captured --content (default: the first)"),
               "I"),
  RPE_CLI_STRING ("method", A (model.method), RPE_CLI_TAKES_SPE,
                  N_("sine or conv (random init; with a checkpoint, picks the module)"), "sine|conv"),
  RPE_CLI_INT ("sines", A (model.sines), RPE_CLI_TAKES_SPE, 1, 1 << 16,
               N_("Sines K for random sine init (default 5)"), "K"),
  RPE_CLI_INT ("kernel", A (model.kernel), RPE_CLI_TAKES_SPE, 1, 1 << 24,
               N_("Filter length L for random conv init (default 128)"), "L"),
  RPE_CLI_FLAG ("no-gate", A (model.no_gate), RPE_CLI_TAKES_SPE, N_("Ignore the gate")),
  RPE_CLI_FLAG_OFF ("gate", A (model.no_gate), RPE_CLI_TAKES_SPE,
                    N_("Use the gate (the default; undoes an earlier --no-gate, e.g. a session's)")),
  RPE_CLI_STRING ("grid", A (model.grid), RPE_CLI_TAKES_GRID,
                  N_("An N1 x N2 grid, positions flattened row-major: fastrpb 2-D, and template/empirical/codes/encode with 2-D convSPE"),
                  "N1xN2"),
  RPE_CLI_INT ("kernel-cols", A (model.kernel_cols), RPE_CLI_TAKES_KERNEL_COLS, 1, 4096,
               N_("2-D convSPE (--grid): filter columns L2 for random init (default: --kernel, the rows L1)"), "L2"),
  RPE_CLI_INT ("head", A (model.head), RPE_CLI_TAKES_HEAD_FEATURE, 0, G_MAXINT,
               N_("Restrict a template to head h"), "h"),
  RPE_CLI_INT ("feature", A (model.feature), RPE_CLI_TAKES_HEAD_FEATURE, 0, G_MAXINT,
               N_("Restrict a template to feature d"), "d"),
  { NULL }
};
/* clang-format on */

/* clang-format off */
static const RpeCliOption draw_options[] = {
  RPE_CLI_INT64 ("length", A (draw.length), RPE_CLI_TAKES_SEQUENCE, 1, (gint64) 1 << 32,
                 N_("Sequence length N (default 256, or the inputs' length)"), "N"),
  RPE_CLI_INT64 ("realizations", A (draw.realizations), RPE_CLI_TAKES_REALIZATIONS, 1, 1 << 24,
                 N_("Realizations R (default 64, or the noise's R)"), "R"),
  RPE_CLI_INT64 ("seed", A (draw.seed), RPE_CLI_TAKES_SEQUENCE, 0, G_MAXINT64,
                 N_("Seed of every random draw (default 0)"), "S"),
  RPE_CLI_INT64 ("train-length", A (draw.train_length), RPE_CLI_TAKES_TRAIN_LENGTH, 0, (gint64) 1 << 32,
                 N_("Training length N_train (LRPE theta b/c use it; curves mark it)"), "N"),
  RPE_CLI_FILE ("noise", A (draw.noise), RPE_CLI_TAKES_NOISE,
                N_("Replay this raw code noise: sine (H, D, 2K, R), conv (R, H*D, N+4L) (layout: docs/math.md, section 10)"), "Z.npy"),
  RPE_CLI_FILE ("gate-noise", A (draw.gate_noise), RPE_CLI_TAKES_GATE_NOISE,
                N_("Replay this raw gate noise, shape (H, D, R)"), "E.npy"),
  RPE_CLI_STRING ("noise-scheme", A (draw.noise_scheme), RPE_CLI_TAKES_NOISE_SCHEME,
                  N_("How the noise is drawn (default iid; curves error: a comma list, one curve each)"),
                  "iid|orthogonal|antithetic|sobol"),
  { NULL }
};
/* clang-format on */

/* clang-format off */
static const RpeCliOption content_options[] = {
  RPE_CLI_FILE ("queries", A (content.queries), RPE_CLI_TAKES_QUERIES,
                N_("Queries, shape (N, H, D) or (1, N, H, D)"), "Q.npy"),
  RPE_CLI_FILE ("keys", A (content.keys), RPE_CLI_TAKES_QUERIES,
                N_("Keys, shape (N, H, D) (default: the queries)"), "K.npy"),
  RPE_CLI_FILE ("values", A (content.values), RPE_CLI_TAKES_VALUES,
                N_("Values, shape (N, H, Dv) (default: seeded N(0,1), Dv = D); or the --content capture again for its recorded values"),
                "V.npy"),
  RPE_CLI_STRING ("content", A (content.kind), RPE_CLI_TAKES_CONTENT,
                  N_("Queries/keys when not loaded: unit (all ones, the pure positional view; default), random (seeded N(0,1)), "
                     "or a capture: a .npz of tools/rpe_capture.py or demo:NAME (a trained demo's), its layer --layer"),
                  "unit|random|CAPTURE"),
  RPE_CLI_FILE ("relative-embeddings", A (content.relative_embeddings), RPE_CLI_TAKES_RELATIVE,
                N_("rpe-logits: E of shape (2N-1, D) or (H, 2N-1, D)"), "E.npy"),
  { NULL }
};
/* clang-format on */

/* clang-format off */
static const RpeCliOption attention_options[] = {
  RPE_CLI_FLAG ("exact", A (attention.exact), RPE_CLI_TAKES_EXACT, N_("Exact logits instead of the SPE estimate")),
  RPE_CLI_FLAG_OFF ("no-exact", A (attention.exact), RPE_CLI_TAKES_EXACT,
                    N_("The SPE estimate (the default; undoes an earlier --exact)")),
  RPE_CLI_FLAG ("causal", A (attention.causal), RPE_CLI_TAKES_CAUSAL,
                N_("Causal attention (keys after the query are masked)")),
  RPE_CLI_FLAG_OFF ("no-causal", A (attention.causal), RPE_CLI_TAKES_CAUSAL,
                    N_("Non-causal attention (the default; undoes an earlier --causal)")),
  RPE_CLI_STRING ("feature-map", A (attention.feature_map), RPE_CLI_TAKES_FEATURE_MAP,
                  N_("Linear attention feature map (default elu1)"), "relu|elu1|exp|performer|dpfp"),
  RPE_CLI_INT ("performer-features", A (attention.performer_features), RPE_CLI_TAKES_FEATURE_OPTIONS, 1, 1 << 24,
               N_("Random features m for performer (default: the input width)"), "M"),
  RPE_CLI_INT ("dpfp-nu", A (attention.dpfp_nu), RPE_CLI_TAKES_FEATURE_OPTIONS, 1, 1 << 24,
               N_("DPFP parameter nu (default 1)"), "NU"),
  { NULL }
};
/* clang-format on */

/* clang-format off */
static const RpeCliOption lrpe_options[] = {
  RPE_CLI_STRING ("lrpe-p", A (lrpe.p), RPE_CLI_TAKES_LRPE,
                  N_("LRPE P (default identity)"), "identity|householder|permutation|odd-even|fourier|dct"),
  RPE_CLI_STRING ("lrpe-lambda", A (lrpe.lambda), RPE_CLI_TAKES_LRPE,
                  N_("LRPE Lambda (default rotation)"), "rotation|mixed|complex|permutation"),
  RPE_CLI_STRING ("lrpe-theta", A (lrpe.theta), RPE_CLI_TAKES_LRPE, N_("LRPE theta type (default a, RoPE)"), "a|b|c"),
  RPE_CLI_FILE ("lrpe-v", A (lrpe.v), RPE_CLI_TAKES_LRPE_FILES,
                N_("LRPE: a trained Householder v, D values (e.g. the module's (1, D, 1) `v`)"), "HOUSEHOLDER.npy"),
  RPE_CLI_FILE ("lrpe-theta-file", A (lrpe.theta_file), RPE_CLI_TAKES_LRPE_FILES,
                N_("LRPE: a learned theta, (1, 1, D//2) for rotation or (1, 1, D) for complex"), "T.npy"),
  RPE_CLI_FILE ("lrpe-permutation", A (lrpe.permutation), RPE_CLI_TAKES_LRPE_FILES,
                N_("LRPE: the permutation buffer T, (1, max_positions, D)"), "P.npy"),
  RPE_CLI_STRING ("lrpe-householder", A (lrpe.householder), RPE_CLI_TAKES_LRPE_FILES,
                  N_("LRPE: a given v is learned (used as v/(|v|+1e-6)) or fixed (used as is); auto: fixed when |v| = 1 (default auto)"),
                  "auto|learned|fixed"),
  RPE_CLI_STRING ("lrpe-norm", A (lrpe.norm), RPE_CLI_TAKES_LRPE_NORM,
                  N_("lrpe-linear normalisation (default denominator)"), "denominator|layer|none"),
  RPE_CLI_FLAG ("lrpe-before", A (lrpe.before), RPE_CLI_TAKES_LRPE_BEFORE,
                N_("Apply LRPE before the feature map (default: after, as the reference code)")),
  { NULL }
};
/* clang-format on */

/* clang-format off */
static const RpeCliOption fastrpb_options[] = {
  RPE_CLI_FILE ("bias", A (fastrpb.bias), RPE_CLI_TAKES_BIAS,
                N_("fastrpb: Toeplitz weights, shape (2N-1,) or (H, 2N-1), index i for tau = i-(N-1)"), "W.npy"),
  RPE_CLI_STRING ("bias-layout", A (fastrpb.layout), RPE_CLI_TAKES_BIAS,
                  N_("fastrpb: layout of the weights when the shape cannot tell: centred (2N-1 for tau = i-(N-1)), full ((1, H, 2M-1), the reference) or symmetric ((1, H, M))"),
                  "centred|full|symmetric"),
  RPE_CLI_FILE ("bias-rows", A (fastrpb.rows), RPE_CLI_TAKES_BIAS_2D,
                N_("fastrpb 2-D: 2 N1 - 1 row weights (optionally per head)"), "Wr.npy"),
  RPE_CLI_FILE ("bias-cols", A (fastrpb.cols), RPE_CLI_TAKES_BIAS_2D,
                N_("fastrpb 2-D: 2 N2 - 1 column weights (optionally per head)"), "Wc.npy"),
  RPE_CLI_STRING ("fastrpb-attention", A (fastrpb.attention), RPE_CLI_TAKES_FASTRPB_ATTENTION,
                  N_("fastrpb: add W V to this attention of q, k (default none: W V alone)"), "none|softmax|linear"),
  { NULL }
};
/* clang-format on */

static gboolean
parse_force (const char *option_name, const char *value, gpointer data, GError **error)
{
  rpe_output_set_force (TRUE);
  return TRUE;
}

static const RpeCliOption output_options[] = { { .name = "out-keys",
                                                 .arg = RPE_CLI_ARG_FILE,
                                                 .offset = A (output.out_keys),
                                                 .part = RPE_CLI_TAKES_OUT_KEYS,
                                                 .help = N_("codes/encode: write the keys' array here"),
                                                 .arg_name = "K.npy" },
                                               { .name = "f64",
                                                 .arg = RPE_CLI_ARG_FLAG,
                                                 .offset = A (output.f64),
                                                 .part = RPE_CLI_TAKES_F64,
                                                 .help = N_("Write float64 instead of float32") },
                                               { .name = "force",
                                                 .arg = RPE_CLI_ARG_CALLBACK,
                                                 .offset = A (output.force),
                                                 .part = RPE_CLI_TAKES_FORCE,
                                                 .callback = parse_force,
                                                 .help =
                                                   N_("Replace an existing output even if it is write-protected") },
                                               { NULL } };

const RpeCliGroup rpe_cli_groups[] = {
  { "model", N_("Model options:"), N_("Show the model options (checkpoint or random init)"), model_options },
  { "draw", N_("Length, seed and noise options:"), N_("Show the length, seed and noise options"), draw_options },
  { "content", N_("Content options:"), N_("Show the content options (queries, keys, values)"), content_options },
  { "attention", N_("Attention options:"), N_("Show the attention options"), attention_options },
  { "lrpe", N_("LRPE options:"), N_("Show the LRPE options"), lrpe_options },
  { "fastrpb", N_("FastRPB options:"), N_("Show the FastRPB options"), fastrpb_options },
  { "output", N_("Output options:"), N_("Show the output options"), output_options },
  { NULL }
};

/* The global options: before or after the command. */

static gboolean
parse_memory_budget (const char *option_name, const char *value, gpointer data, GError **error)
{
  guint64 bytes;

  if (!rpe_cli_parse_size ("--memory-budget", value, rpe_physical_memory (), &bytes, error))
    return FALSE;
  rpe_budget_set ((size_t) MIN (bytes, (guint64) G_MAXSIZE));
  return TRUE;
}

/* the most workers rpe_parallel_threads () takes from RPE_NUM_THREADS */
#define MAX_THREADS 256

static gboolean
parse_threads (const char *option_name, const char *value, gpointer data, GError **error)
{
  gint64 n;
  char   text[32];

  if (!rpe_cli_parse_int ("--threads", value, 1, MAX_THREADS, &n, error))
    return FALSE;
  /* the core's own workers read RPE_NUM_THREADS on every call; OpenBLAS is told directly */
  g_snprintf (text, sizeof text, "%" G_GINT64_FORMAT, n);
  g_setenv ("RPE_NUM_THREADS", text, TRUE);
  openblas_set_num_threads ((int) n);
  return TRUE;
}

/* clang-format off */
static const RpeCliOption global_options[] = {
  { .name = "memory-budget", .arg = RPE_CLI_ARG_CALLBACK, .offset = 0, .callback = parse_memory_budget,
    .help = N_("The most memory one computation may use: 512M, 2G, 50% of RAM (default RPE_MEMORY_BUDGET, else 75% of RAM)"),
    .arg_name = "SIZE" },
  { .name = "threads", .arg = RPE_CLI_ARG_CALLBACK, .offset = 0, .callback = parse_threads,
    .help = N_("Threads of the computation, 1 to 256 (default RPE_NUM_THREADS, else every CPU)"), .arg_name = "N" },
  { NULL }
};
/* clang-format on */

const RpeCliGroup rpe_cli_global_group = { "global", N_("Global options (before or after the command):"),
                                           N_("Show the global options"), global_options };

void
rpe_cli_args_init (RpeCliArgs *args)
{
  memset (args, 0, sizeof *args);
  args->model.heads = 8;
  args->model.features = 64;
  args->model.layer = -1;
  args->model.sines = 5;
  args->model.kernel = 128;
  args->model.head = -1;
  args->model.feature = -1;
  args->draw.length = RPE_CLI_UNSET;
  args->draw.realizations = RPE_CLI_UNSET;
  args->draw.train_length = RPE_CLI_UNSET;
  args->attention.performer_features = -1;
  args->attention.dpfp_nu = 1;
}

void
rpe_cli_own_clear (const RpeCliOption *table, gpointer own)
{
  for (const RpeCliOption *o = table; o != NULL && o->name != NULL; o++)
    {
      gpointer p = G_STRUCT_MEMBER_P (own, o->offset);

      if (o->arg == RPE_CLI_ARG_STRING || o->arg == RPE_CLI_ARG_FILE)
        g_clear_pointer ((char **) p, g_free);
      else if (o->arg == RPE_CLI_ARG_STRINGS)
        g_clear_pointer ((char ***) p, g_strfreev);
    }
}

void
rpe_cli_args_clear (RpeCliArgs *args)
{
  for (const RpeCliGroup *g = rpe_cli_groups; g->name != NULL; g++)
    rpe_cli_own_clear (g->options, args);
  g_free (args->output.out);
  memset (args, 0, sizeof *args);
}

/* ------------------------------------------------------------------------ */
/* What a leaf takes                                                        */

const RpeCliCommand *
rpe_cli_command_lookup (const char *name)
{
  for (guint i = 0; name != NULL && rpe_cli_commands[i] != NULL; i++)
    if (g_str_equal (rpe_cli_commands[i]->name, name))
      return rpe_cli_commands[i];
  return NULL;
}

const RpeCliLeaf *
rpe_cli_leaf_lookup (const RpeCliCommand *command, const char *name)
{
  for (gsize i = 0; i < command->n_leaves; i++)
    if (g_strcmp0 (command->leaves[i].name, name) == 0)
      return &command->leaves[i];
  return NULL;
}

/* The sources of a leaf's options: its own table, the borrowed one, the groups, the globals. */
typedef enum
{
  SOURCE_OWN,
  SOURCE_ALSO,
  SOURCE_SHARED,
  SOURCE_GLOBAL,
} Source;

typedef void (*VisitFunc) (const RpeCliOption *option, Source source, const RpeCliGroup *group, gpointer data);

static gboolean
row_taken (const RpeCliOption *o, guint64 mask)
{
  return o->part == 0 || (o->part & mask) != 0;
}

static void
visit_leaf (const RpeCliCommand *command, const RpeCliLeaf *leaf, VisitFunc func, gpointer data)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  const RpeCliOption *own = leaf->options != NULL ? leaf->options : command->options;
  const RpeCliLeaf   *also = leaf->also != NULL ? rpe_cli_leaf_lookup (leaf->also, leaf->also_leaf) : NULL;
  guint64             takes = leaf->takes | (also != NULL ? also->takes : 0);

  for (const RpeCliOption *o = own; o != NULL && o->name != NULL; o++)
    if (row_taken (o, leaf->own) && g_hash_table_add (seen, (gpointer) o->name))
      func (o, SOURCE_OWN, NULL, data);
  if (also != NULL)
    {
      const RpeCliOption *table = also->options != NULL ? also->options : leaf->also->options;

      for (const RpeCliOption *o = table; o != NULL && o->name != NULL; o++)
        if (row_taken (o, also->own) && g_hash_table_add (seen, (gpointer) o->name))
          func (o, SOURCE_ALSO, NULL, data);
    }
  for (const RpeCliGroup *g = rpe_cli_groups; g->name != NULL; g++)
    for (const RpeCliOption *o = g->options; o->name != NULL; o++)
      if ((o->part & takes) != 0 && g_hash_table_add (seen, (gpointer) o->name))
        func (o, SOURCE_SHARED, g, data);
  for (const RpeCliOption *o = rpe_cli_global_group.options; o->name != NULL; o++)
    if (g_hash_table_add (seen, (gpointer) o->name))
      func (o, SOURCE_GLOBAL, &rpe_cli_global_group, data);
}

static gboolean
takes_value (const RpeCliOption *o)
{
  return o->arg != RPE_CLI_ARG_FLAG && o->arg != RPE_CLI_ARG_FLAG_OFF
         && !(o->arg == RPE_CLI_ARG_CALLBACK && o->arg_name == NULL);
}

typedef struct
{
  const char *name; /* long name, or NULL */
  char        short_name;
  gboolean    found;
  gboolean    value;
} Find;

static void
find_visit (const RpeCliOption *o, Source source, const RpeCliGroup *group, gpointer data)
{
  Find *f = data;

  if ((f->name != NULL && g_str_equal (o->name, f->name)) || (f->short_name != 0 && o->short_name == f->short_name))
    {
      f->found = TRUE;
      f->value = takes_value (o);
    }
}

gboolean
rpe_cli_leaf_takes (const RpeCliCommand *command, const RpeCliLeaf *leaf, const char *name, gboolean *value)
{
  Find f = { name, 0, FALSE, FALSE };

  visit_leaf (command, leaf, find_visit, &f);
  if (value != NULL)
    *value = f.value;
  return f.found;
}

typedef struct
{
  RpeCliOptionFunc func;
  gpointer         data;
} Foreach;

static void
foreach_visit (const RpeCliOption *o, Source source, const RpeCliGroup *group, gpointer data)
{
  Foreach *f = data;

  f->func (o, group, f->data);
}

void
rpe_cli_leaf_foreach (const RpeCliCommand *command, const RpeCliLeaf *leaf, RpeCliOptionFunc func, gpointer data)
{
  Foreach f = { func, data };

  visit_leaf (command, leaf, foreach_visit, &f);
}

/* Whether some leaf of `command` takes the option argv[i] names, and with a value: for
 * reading argv before the leaf is known. */
static gboolean
command_option (const RpeCliCommand *command, const char *arg, gboolean *value)
{
  g_autofree char *name = NULL;
  char             short_name = 0;

  if (g_str_has_prefix (arg, "--"))
    name = g_strndup (arg + 2, strcspn (arg + 2, "="));
  else if (arg[0] == '-' && arg[1] != '\0' && arg[2] == '\0')
    short_name = arg[1];
  else
    return FALSE;
  for (gsize i = 0; i < command->n_leaves; i++)
    {
      Find f = { name, short_name, FALSE, FALSE };

      visit_leaf (command, &command->leaves[i], find_visit, &f);
      if (f.found)
        {
          *value = f.value && (name == NULL || strchr (arg, '=') == NULL);
          return TRUE;
        }
    }
  return FALSE;
}

const RpeCliLeaf *
rpe_cli_find_leaf (const RpeCliCommand *command, int argc, char **argv, int *index)
{
  *index = -1;
  for (int i = 1; i < argc; i++)
    {
      gboolean value = FALSE;

      if (g_str_equal (argv[i], "--"))
        {
          if (i + 1 < argc)
            *index = i + 1;
          break;
        }
      if (argv[i][0] == '-' && argv[i][1] != '\0')
        {
          if (command_option (command, argv[i], &value) && value)
            i++;
          continue;
        }
      *index = i;
      break;
    }
  if (*index < 0)
    return NULL;
  for (gsize i = 0; i < command->n_leaves; i++)
    if (command->leaves[i].name != NULL && g_str_equal (command->leaves[i].name, argv[*index]))
      return &command->leaves[i];
  return NULL;
}

static gboolean
is_help (const char *arg)
{
  return g_str_equal (arg, "-h") || g_str_equal (arg, "-?") || g_str_equal (arg, "--help")
         || g_str_has_prefix (arg, "--help-");
}

/* 1 if argv's `arg` is an option of `leaf` (of any leaf of `command` when leaf is NULL) whose
 * value is the next argument, else 0. */
static int
value_follows (const RpeCliCommand *command, const RpeCliLeaf *leaf, const char *arg)
{
  g_autofree char *name = NULL;
  gboolean         value = FALSE;
  Find             f = { NULL, 0, FALSE, FALSE };

  if (leaf == NULL)
    return command_option (command, arg, &value) && value ? 1 : 0;
  if (g_str_has_prefix (arg, "--"))
    {
      if (strchr (arg, '=') != NULL)
        return 0;
      f.name = name = g_strdup (arg + 2);
    }
  else if (arg[0] == '-' && arg[1] != '\0' && arg[2] == '\0')
    f.short_name = arg[1];
  else
    return 0;
  visit_leaf (command, leaf, find_visit, &f);
  return f.found && f.value ? 1 : 0;
}

gboolean
rpe_cli_wants_help (const RpeCliCommand *command, const RpeCliLeaf *leaf, int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    {
      if (g_str_equal (argv[i], "--"))
        break;
      if (is_help (argv[i]))
        return TRUE;
      i += value_follows (command, leaf, argv[i]);
    }
  return FALSE;
}

/* ------------------------------------------------------------------------ */
/* Help                                                                     */

void
rpe_cli_print_command_help (const RpeCliCommand *command, FILE *out)
{
  int width = 0;

  fprintf (out, _("Usage:\n  rpe %s %s [OPTION…]\n\n"), command->name, command->leaf_arg);
  fprintf (out, "%s\n\n", _(command->description));
  fprintf (out, _("%s:\n"), command->leaf_arg);
  for (gsize i = 0; i < command->n_leaves; i++)
    width = MAX (width, (int) strlen (command->leaves[i].name));
  for (gsize i = 0; i < command->n_leaves; i++)
    fprintf (out, "  %-*s  %s\n", width, command->leaves[i].name, _(command->leaves[i].summary));
  fprintf (out, _("\nExample:\n  rpe %s\n\n"), command->example);
  fprintf (out,
           _("Run 'rpe %s %s --help' for what one does, its main options and an example;\n"
             "'rpe %s %s --help-all' lists every option it takes.\n"),
           command->name, command->leaf_arg, command->name, command->leaf_arg);
}

/* ------------------------------------------------------------------------ */
/* Parsing                                                                  */

typedef struct
{
  const RpeCliOption *option;
  gpointer            storage;
} Bound;

/* A GOptionGroup's user data: where its numbers go. */
typedef struct
{
  GArray *bound; /* of Bound */
} GroupData;

static void
group_data_free (gpointer data)
{
  GroupData *g = data;

  g_array_unref (g->bound);
  g_free (g);
}

/* The options whose value goes through our parsers: numbers (rpe-cli-parse.h) and file names
 * (never empty). */
static gboolean
parse_number (const char *option_name, const char *value, gpointer data, GError **error)
{
  GroupData *g = data;

  for (guint i = 0; i < g->bound->len; i++)
    {
      const Bound        *b = &g_array_index (g->bound, Bound, i);
      const RpeCliOption *o = b->option;
      gint64              v;

      if (!(g_str_has_prefix (option_name, "--") && g_str_equal (option_name + 2, o->name))
          && !(o->short_name != 0 && option_name[0] == '-' && option_name[1] == o->short_name
               && option_name[2] == '\0'))
        continue;
      if (o->arg == RPE_CLI_ARG_FILE)
        {
          if (value[0] == '\0')
            return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("%s needs a file name (got an empty one)"),
                                  option_name);
          g_free (*(char **) b->storage);
          *(char **) b->storage = g_strdup (value);
          return TRUE;
        }
      if (o->arg == RPE_CLI_ARG_DOUBLE)
        return rpe_cli_parse_double (option_name, value, o->dmin, o->dmax, (double *) b->storage, error);
      if (!rpe_cli_parse_int (option_name, value, o->min, o->max, &v, error))
        return FALSE;
      if (o->arg == RPE_CLI_ARG_INT)
        *(int *) b->storage = (int) v;
      else
        *(gint64 *) b->storage = v;
      return TRUE;
    }
  return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, "%s: no such option", option_name);
}

/* One GOptionGroup under construction. */
typedef struct
{
  const RpeCliGroup *group;   /* NULL: the main group */
  GArray            *entries; /* of GOptionEntry */
  GroupData         *data;
} Building;

typedef struct
{
  const RpeCliLeaf *leaf;
  gpointer          own;
  gpointer          also;
  RpeCliArgs       *args;
  Building          main;
  GPtrArray        *groups; /* of Building * */
} Plan;

static void
add_entry (Building *b, const RpeCliOption *o, gpointer storage, gboolean in_main)
{
  GOptionEntry e = { o->name, o->short_name, 0, G_OPTION_ARG_NONE, storage, o->help, o->arg_name };

  switch (o->arg)
    {
    case RPE_CLI_ARG_FLAG:
      break;
    case RPE_CLI_ARG_FLAG_OFF:
      e.flags |= G_OPTION_FLAG_REVERSE;
      break;
    case RPE_CLI_ARG_STRING:
      e.arg = G_OPTION_ARG_STRING;
      break;
    case RPE_CLI_ARG_STRINGS:
      e.arg = G_OPTION_ARG_STRING_ARRAY;
      break;
    case RPE_CLI_ARG_FILE:
    case RPE_CLI_ARG_INT:
    case RPE_CLI_ARG_INT64:
    case RPE_CLI_ARG_DOUBLE:
      {
        Bound bound = { o, storage };

        if (o->arg == RPE_CLI_ARG_FILE)
          e.flags |= G_OPTION_FLAG_FILENAME;
        e.arg = G_OPTION_ARG_CALLBACK;
        e.arg_data = (gpointer) parse_number;
        g_array_append_val (b->data->bound, bound);
      }
      break;
    case RPE_CLI_ARG_CALLBACK:
      e.arg = G_OPTION_ARG_CALLBACK;
      e.arg_data = (gpointer) o->callback;
      if (o->arg_name == NULL)
        e.flags |= G_OPTION_FLAG_NO_ARG;
      break;
    default:
      g_assert_not_reached ();
    }
  if (in_main)
    e.flags |= G_OPTION_FLAG_IN_MAIN;
  g_array_append_val (b->entries, e);
}

static Building *
building_new (const RpeCliGroup *group)
{
  Building *b = g_new0 (Building, 1);

  b->group = group;
  b->entries = g_array_new (TRUE, TRUE, sizeof (GOptionEntry));
  b->data = g_new0 (GroupData, 1);
  b->data->bound = g_array_new (FALSE, FALSE, sizeof (Bound));
  return b;
}

static gboolean
in_main_list (const RpeCliLeaf *leaf, const char *name)
{
  g_auto (GStrv) names = g_strsplit (leaf->main != NULL ? leaf->main : "", " ", -1);

  return g_strv_contains ((const char *const *) names, name);
}

static void
plan_visit (const RpeCliOption *o, Source source, const RpeCliGroup *group, gpointer data)
{
  Plan     *p = data;
  Building *b = &p->main;

  if (source == SOURCE_SHARED || source == SOURCE_GLOBAL)
    {
      b = p->groups->len > 0 ? g_ptr_array_index (p->groups, p->groups->len - 1) : NULL;
      if (b == NULL || b->group != group)
        {
          b = building_new (group);
          g_ptr_array_add (p->groups, b);
        }
    }
  add_entry (b, o,
             source == SOURCE_OWN      ? G_STRUCT_MEMBER_P (p->own, o->offset)
             : source == SOURCE_ALSO   ? G_STRUCT_MEMBER_P (p->also, o->offset)
             : source == SOURCE_SHARED ? G_STRUCT_MEMBER_P (p->args, o->offset)
                                       : NULL,
             source == SOURCE_SHARED && in_main_list (p->leaf, o->name));
}

/* The context of one leaf; *also_storage receives the scratch struct of borrowed options. */
static GOptionContext *
leaf_context (const RpeCliCommand *command,
              const RpeCliLeaf    *leaf,
              RpeCliArgs          *args,
              gpointer             own,
              gpointer            *also_storage,
              GPtrArray           *groups)
{
  GOptionContext *context = g_option_context_new (NULL);
  Plan            p = { leaf, own, NULL, args, { NULL, NULL, NULL }, g_ptr_array_new () };
  GOptionGroup   *main_group;
  gsize           also_size = 0;

  if (leaf->also != NULL)
    {
      const RpeCliLeaf   *also = rpe_cli_leaf_lookup (leaf->also, leaf->also_leaf);
      const RpeCliOption *table = also->options != NULL ? also->options : leaf->also->options;

      for (const RpeCliOption *o = table; o != NULL && o->name != NULL; o++)
        also_size = MAX (also_size, o->offset + sizeof (gint64));
    }
  p.also = *also_storage = also_size > 0 ? g_malloc0 (also_size) : NULL;
  p.main.entries = g_array_new (TRUE, TRUE, sizeof (GOptionEntry));
  p.main.data = g_new0 (GroupData, 1);
  p.main.data->bound = g_array_new (FALSE, FALSE, sizeof (Bound));
  visit_leaf (command, leaf, plan_visit, &p);

  g_option_context_set_translation_domain (context, GETTEXT_PACKAGE);
  main_group = g_option_group_new (command->name, "", "", p.main.data, group_data_free);
  g_option_group_set_translation_domain (main_group, GETTEXT_PACKAGE);
  g_option_group_add_entries (main_group, (const GOptionEntry *) (gpointer) p.main.entries->data);
  g_array_unref (p.main.entries);
  g_option_context_set_main_group (context, main_group);
  for (guint i = 0; i < p.groups->len; i++)
    {
      Building *b = g_ptr_array_index (p.groups, i);
      /* GOption translates the titles, as the entries, in its help */
      GOptionGroup *g = g_option_group_new (b->group->name, b->group->title, b->group->help, b->data, group_data_free);

      g_option_group_set_translation_domain (g, GETTEXT_PACKAGE);
      g_option_group_add_entries (g, (const GOptionEntry *) (gpointer) b->entries->data);
      g_array_unref (b->entries);
      g_option_context_add_group (context, g);
      g_ptr_array_add (groups, (gpointer) b->group->name);
      g_ptr_array_add (groups, g);
      g_free (b);
    }
  g_ptr_array_unref (p.groups);
  /* never GOption's own help: it would print and exit (from a library, and for a short-option
   * bundle such as -head too); rpe_cli_parse prints the help itself */
  g_option_context_set_help_enabled (context, FALSE);
  return context;
}

static char *
leaf_label (const RpeCliCommand *command, const RpeCliLeaf *leaf, const char *label)
{
  if (label != NULL)
    return g_strdup (label);
  return leaf->name != NULL ? g_strdup_printf ("%s %s", command->name, leaf->name) : g_strdup (command->name);
}

/* --help, --help-all or --help-GROUP (`groups`: name, GOptionGroup pairs); FALSE for a
 * --help-GROUP the leaf does not have. */
static gboolean
print_leaf_help (const RpeCliCommand *command,
                 const RpeCliLeaf    *leaf,
                 const char          *label,
                 GOptionContext      *context,
                 GPtrArray           *groups,
                 int                  argc,
                 char               **argv)
{
  g_autofree char *body = NULL;
  const char      *rest;
  GOptionGroup    *group = NULL;
  gboolean         main_help = TRUE;

  for (int i = 1; i < argc; i++)
    {
      if (g_str_equal (argv[i], "--"))
        break;
      if (is_help (argv[i]))
        {
          if (g_str_equal (argv[i], "--help-all"))
            main_help = FALSE;
          else if (g_str_has_prefix (argv[i], "--help-"))
            {
              main_help = FALSE;
              for (guint g = 0; g + 1 < groups->len && group == NULL; g += 2)
                if (g_str_equal (argv[i] + 7, g_ptr_array_index (groups, g)))
                  group = g_ptr_array_index (groups, g + 1);
              if (group == NULL)
                {
                  fprintf (stderr, _("rpe %s: %s: no such group of options here (see --help-all)\n"), label, argv[i]);
                  return FALSE;
                }
            }
          break;
        }
      i += value_follows (command, leaf, argv[i]);
    }
  g_option_context_set_help_enabled (context, TRUE); /* for the "Help Options" list */
  body = g_option_context_get_help (context, main_help, group);
  rest = strstr (body, "\n\n");
  printf (_("Usage:\n  rpe %s [OPTION…]%s%s\n\n"), label, command->args != NULL ? " " : "",
          command->args != NULL ? command->args : "");
  if (group == NULL)
    printf ("%s\n\n", _(leaf->description != NULL ? leaf->description : leaf->summary));
  printf ("%s", rest != NULL ? rest + 2 : body);
  if (group == NULL)
    printf (_("Example:\n  rpe %s\n"), leaf->example);
  if (main_help)
    printf (_("\nEvery option: rpe %s --help-all\n"), label);
  return TRUE;
}

/* The option of argv that the leaf does not take (GOption said "Unknown option"), and the
 * command that takes it, for a message that says so. */
static char *
unknown_option_message (const RpeCliCommand *command, const RpeCliLeaf *leaf, const char *label, int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    {
      g_autofree char *name = NULL;
      gboolean         value = FALSE;

      if (g_str_equal (argv[i], "--"))
        break;
      if (!g_str_has_prefix (argv[i], "--"))
        {
          if (argv[i][0] == '-' && argv[i][1] != '\0' && argv[i][2] == '\0')
            {
              Find f = { NULL, argv[i][1], FALSE, FALSE };

              visit_leaf (command, leaf, find_visit, &f);
              if (f.found && f.value)
                i++;
            }
          continue;
        }
      name = g_strndup (argv[i] + 2, strcspn (argv[i] + 2, "="));
      if (g_str_has_prefix (name, "help"))
        continue;
      if (rpe_cli_leaf_takes (command, leaf, name, &value))
        {
          if (value && strchr (argv[i], '=') == NULL)
            i++;
          continue;
        }
      /* not this leaf's: is it an option of rpe at all? */
      for (guint c = 0; rpe_cli_commands[c] != NULL; c++)
        for (gsize l = 0; l < rpe_cli_commands[c]->n_leaves; l++)
          if (rpe_cli_leaf_takes (rpe_cli_commands[c], &rpe_cli_commands[c]->leaves[l], name, NULL))
            return g_strdup_printf (_("--%s is not used by 'rpe %s'; remove it (see 'rpe %s --help-all')"), name,
                                    label, label);
      return NULL;
    }
  return NULL;
}

gboolean
rpe_cli_parse (const RpeCliCommand *command,
               const RpeCliLeaf    *leaf,
               const char          *label_in,
               RpeCliArgs          *args,
               gpointer             own,
               int                 *argc,
               char              ***argv,
               int                 *status)
{
  g_autofree char *label = leaf_label (command, leaf, label_in);
  g_auto (GStrv) given = g_strdupv (*argv);
  g_autoptr (GOptionContext) context = NULL;
  g_autoptr (GError) error = NULL;
  gpointer also = NULL;
  gboolean ok;

  g_autoptr (GPtrArray) groups = g_ptr_array_new ();

  context = leaf_context (command, leaf, args, own, &also, groups);
  if (rpe_cli_wants_help (command, leaf, *argc, *argv))
    {
      *status = print_leaf_help (command, leaf, label, context, groups, *argc, *argv) ? 0 : EXIT_USAGE;
      ok = FALSE;
    }
  else if (!g_option_context_parse (context, argc, argv, &error))
    {
      g_autofree char *better = NULL;

      if (g_error_matches (error, G_OPTION_ERROR, G_OPTION_ERROR_UNKNOWN_OPTION))
        better = unknown_option_message (command, leaf, label, g_strv_length (given), given);
      fprintf (stderr, "rpe %s: %s\n", label, better != NULL ? better : error->message);
      *status = EXIT_USAGE;
      ok = FALSE;
    }
  else
    ok = TRUE;
  if (ok && args != NULL && args->model.checkpoint == NULL && (args->model.prefix != NULL || args->model.map != NULL)
      && !g_strv_contains ((const char *const *) given, "--session"))
    {
      /* they name parts of a checkpoint: without one they would be dropped */
      fprintf (stderr, _("rpe %s: %s names part of a checkpoint: give it with --checkpoint FILE\n"), label,
               args->model.prefix != NULL ? "--prefix" : "--map");
      *status = EXIT_USAGE;
      ok = FALSE;
    }
  if (also != NULL)
    {
      const RpeCliLeaf *a = rpe_cli_leaf_lookup (leaf->also, leaf->also_leaf);

      rpe_cli_own_clear (a->options != NULL ? a->options : leaf->also->options, also);
      g_free (also);
    }
  return ok;
}

/* ------------------------------------------------------------------------ */
/* Global options before the command                                        */

gboolean
rpe_cli_parse_global (int *argc, char ***argv)
{
  g_autoptr (GPtrArray) leading = g_ptr_array_new ();
  g_autoptr (GOptionContext) context = NULL;
  g_autoptr (GError) error = NULL;
  GOptionGroup *group;
  GArray       *entries;
  int           i = 1, n;
  char        **copy;

  while (i < *argc && (*argv)[i][0] == '-' && !g_str_equal ((*argv)[i], "--") && !is_help ((*argv)[i])
         && !g_str_equal ((*argv)[i], "--version"))
    {
      const char         *arg = (*argv)[i];
      const RpeCliOption *found = NULL;

      for (const RpeCliOption *o = global_options; o->name != NULL; o++)
        if (g_str_has_prefix (arg, "--") && strncmp (arg + 2, o->name, strlen (o->name)) == 0
            && (arg[2 + strlen (o->name)] == '\0' || arg[2 + strlen (o->name)] == '='))
          found = o;
      if (found == NULL)
        {
          fprintf (stderr,
                   _("rpe: %s is not a global option (--memory-budget, --threads); the options of a command "
                     "go after it (see 'rpe --help')\n"),
                   arg);
          return FALSE;
        }
      g_ptr_array_add (leading, (*argv)[i++]);
      if (strchr (arg, '=') == NULL && takes_value (found) && i < *argc)
        g_ptr_array_add (leading, (*argv)[i++]);
    }
  if (leading->len == 0)
    return TRUE;

  context = g_option_context_new (NULL);
  entries = g_array_new (TRUE, TRUE, sizeof (GOptionEntry));
  for (const RpeCliOption *o = global_options; o->name != NULL; o++)
    {
      GOptionEntry e = { o->name, 0, 0, G_OPTION_ARG_CALLBACK, (gpointer) o->callback, o->help, o->arg_name };

      g_array_append_val (entries, e);
    }
  group = g_option_group_new ("global", "", "", NULL, NULL);
  g_option_group_add_entries (group, (const GOptionEntry *) (gpointer) entries->data);
  g_array_unref (entries);
  g_option_context_set_main_group (context, group);
  g_option_context_set_help_enabled (context, FALSE);
  g_ptr_array_insert (leading, 0, (*argv)[0]);
  g_ptr_array_add (leading, NULL);
  n = (int) leading->len - 1;
  copy = (char **) leading->pdata;
  if (!g_option_context_parse (context, &n, &copy, &error))
    {
      fprintf (stderr, "rpe: %s\n", error->message);
      return FALSE;
    }
  /* the command and what follows it */
  (*argv)[i - 1] = (*argv)[0];
  *argv += i - 1;
  *argc -= i - 1;
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* Parsing alone (the fuzzer)                                               */

/* A zeroed struct large enough for every row of `table`. */
static gpointer
scratch_for (const RpeCliOption *table)
{
  gsize size = sizeof (gint64);

  for (const RpeCliOption *o = table; o != NULL && o->name != NULL; o++)
    size = MAX (size, o->offset + sizeof (gint64));
  return g_malloc0 (size);
}

int
rpe_cli_check_args (int argc, char **argv)
{
  g_autofree char    **copy = g_memdup2 (argv, (gsize) (argc + 1) * sizeof (char *));
  char               **args = copy;
  const RpeCliCommand *command;
  const RpeCliLeaf    *leaf;
  const RpeCliOption  *table;
  RpeCliArgs           values;
  gpointer             own;
  int                  index, status = 0;

  if (!rpe_cli_parse_global (&argc, &args))
    return EXIT_USAGE;
  if (argc < 2 || (command = rpe_cli_command_lookup (args[1])) == NULL)
    return argc < 2 || args[1][0] != '-' ? EXIT_USAGE : 0;
  argc--;
  args++;
  if (command->leaves[0].name == NULL)
    leaf = &command->leaves[0];
  else if ((leaf = rpe_cli_find_leaf (command, argc, args, &index)) == NULL)
    return rpe_cli_wants_help (command, NULL, argc, args) ? 0 : EXIT_USAGE;
  table = leaf->options != NULL ? leaf->options : command->options;
  own = scratch_for (table);
  rpe_cli_args_init (&values);
  if (rpe_cli_parse (command, leaf, NULL, &values, own, &argc, &args, &status))
    status = 0;
  rpe_cli_own_clear (table, own);
  g_free (own);
  /* a table whose struct is RpeCliArgs itself (compute's) wrote there, not into `values` */
  rpe_cli_args_clear (&values);
  return status;
}

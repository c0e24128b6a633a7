/* rpe-cli-options.h: the options of `rpe`, one list per command, as GLib's `gio` tool does.
 *
 * Every command describes itself in an RpeCliCommand (rpe-cli-<command>.c): its own options (an
 * RpeCliOption table over its own options struct) and its subcommands (RpeCliLeaf: the compute
 * WHATs, the curves KINDs, the export VIEWs; a command without subcommands has one leaf with no
 * name).  A leaf says which of the command's own options it takes and which shared groups
 * (RpeCliArgs below: model, draw, content, attention, LRPE, FastRPB, output) it adds, as
 * RPE_CLI_TAKES_* bits.  rpe_cli_parse () builds the leaf's GOptionContext from exactly those
 * options, each shared group a GOptionGroup, so an option a leaf does not take is unknown to it
 * by construction; the message then says which command does take it.  The same tables give
 * --help, --help-all, `rpe help`, the man page rpe(1) and the bash completion (rpe-cli-doc.c).
 *
 * HOW TO ADD AN OPTION TO A COMMAND
 *  - Only that command reads it: a field in the command's options struct and a row in its
 *    RpeCliOption table (rpe-cli-<command>.c).  A row with part 0 goes to every leaf that uses
 *    the table; for some leaves only, give the row a bit of the command's own and add the bit to
 *    `own` of those leaves.
 *  - Several commands read it: a field in the group's struct below and a row in the group's
 *    table (rpe-cli-options.c) with an RPE_CLI_TAKES_* bit (a new bit if no existing one fits
 *    exactly), then the bit in `takes` of every leaf that reads it.
 *  - A number is RPE_CLI_ARG_INT, _INT64 or _DOUBLE with its range [min, max]: the parser
 *    (rpe-cli-parse.h) refuses anything else, naming the option.  Keep "not given" outside the
 *    range (RPE_CLI_UNSET, or -1 for an index) so that no value the user can type means it.
 *  - Nothing else: the help, the man page and the completion follow the tables; the test
 *    tests/test-cli-options.c checks that every leaf lists exactly what it takes.
 */
#pragma once

#include <glib.h>
#include <stdio.h>

G_BEGIN_DECLS

/* an integer option that was not given */
#define RPE_CLI_UNSET G_MININT64

/* The values of the shared option groups.  A command reads the groups its leaves add; a group
 * a leaf does not add keeps its defaults (rpe_cli_args_init). */

typedef struct
{
  char    *checkpoint;  /* --checkpoint FILE ("demo", "demo:NAME") */
  char    *prefix;      /* --prefix P */
  char   **map;         /* --map ROLE=TENSOR, repeatable */
  int      heads;       /* --heads (random init; 8) */
  int      features;    /* --features (random init; 64) */
  int      layer;       /* --layer (-1: not given) */
  char    *method;      /* --method sine|conv */
  int      sines;       /* --sines (5) */
  int      kernel;      /* --kernel (128) */
  int      kernel_cols; /* --kernel-cols (2-D convSPE; 0: = kernel) */
  char    *grid;        /* --grid N1xN2 */
  gboolean no_gate;     /* --no-gate / --gate */
  int      head;        /* --head (-1: not given) */
  int      feature;     /* --feature (-1: not given) */
} RpeCliModel;

typedef struct
{
  gint64 length;       /* --length (RPE_CLI_UNSET) */
  gint64 realizations; /* --realizations (RPE_CLI_UNSET) */
  gint64 seed;         /* --seed (0) */
  gint64 train_length; /* --train-length (RPE_CLI_UNSET) */
  char  *noise;        /* --noise Z.npy */
  char  *gate_noise;   /* --gate-noise E.npy */
  char  *noise_scheme; /* --noise-scheme iid|orthogonal|antithetic|sobol */
} RpeCliDraw;

typedef struct
{
  char *queries;             /* --queries Q.npy */
  char *keys;                /* --keys K.npy */
  char *values;              /* --values V.npy */
  char *kind;                /* --content unit|random|CAPTURE (a .npz capture or demo:NAME) */
  char *relative_embeddings; /* --relative-embeddings E.npy */
} RpeCliContent;

typedef struct
{
  gboolean exact;              /* --exact / --no-exact */
  gboolean causal;             /* --causal / --no-causal */
  char    *feature_map;        /* --feature-map */
  int      performer_features; /* --performer-features (-1: the width) */
  int      dpfp_nu;            /* --dpfp-nu (1) */
} RpeCliAttention;

typedef struct
{
  char    *p;           /* --lrpe-p */
  char    *lambda;      /* --lrpe-lambda */
  char    *theta;       /* --lrpe-theta */
  char    *norm;        /* --lrpe-norm */
  gboolean before;      /* --lrpe-before */
  char    *v;           /* --lrpe-v V.npy */
  char    *theta_file;  /* --lrpe-theta-file T.npy */
  char    *permutation; /* --lrpe-permutation P.npy */
  char    *householder; /* --lrpe-householder */
} RpeCliLrpeArgs;

typedef struct
{
  char *bias;      /* --bias W.npy */
  char *layout;    /* --bias-layout */
  char *rows;      /* --bias-rows Wr.npy */
  char *cols;      /* --bias-cols Wc.npy */
  char *attention; /* --fastrpb-attention */
} RpeCliFastrpb;

typedef struct
{
  char    *out;      /* -o (each command's own option; its value is kept here) */
  char    *out_keys; /* --out-keys K.npy */
  gboolean f64;      /* --f64 */
  gboolean force;    /* --force */
} RpeCliOutput;

typedef struct
{
  RpeCliModel     model;
  RpeCliDraw      draw;
  RpeCliContent   content;
  RpeCliAttention attention;
  RpeCliLrpeArgs  lrpe;
  RpeCliFastrpb   fastrpb;
  RpeCliOutput    output;
} RpeCliArgs;

void rpe_cli_args_init (RpeCliArgs *args);
void rpe_cli_args_clear (RpeCliArgs *args);

/* What a leaf takes of the shared groups: one bit per set of options always taken together. */
typedef enum
{
  RPE_CLI_TAKES_MODEL = 1 << 0,              /* --checkpoint --prefix --map --heads --features */
  RPE_CLI_TAKES_SPE = 1 << 1,                /* --layer --method --sines --kernel --no-gate --gate */
  RPE_CLI_TAKES_GRID = 1 << 2,               /* --grid */
  RPE_CLI_TAKES_KERNEL_COLS = 1 << 3,        /* --kernel-cols */
  RPE_CLI_TAKES_HEAD_FEATURE = 1 << 4,       /* --head --feature */
  RPE_CLI_TAKES_SEQUENCE = 1 << 5,           /* --length --seed */
  RPE_CLI_TAKES_REALIZATIONS = 1 << 6,       /* --realizations */
  RPE_CLI_TAKES_NOISE = 1 << 7,              /* --noise */
  RPE_CLI_TAKES_GATE_NOISE = 1 << 8,         /* --gate-noise */
  RPE_CLI_TAKES_NOISE_SCHEME = 1 << 9,       /* --noise-scheme */
  RPE_CLI_TAKES_TRAIN_LENGTH = 1 << 10,      /* --train-length */
  RPE_CLI_TAKES_QUERIES = 1 << 11,           /* --queries --keys */
  RPE_CLI_TAKES_CONTENT = 1 << 12,           /* --content */
  RPE_CLI_TAKES_VALUES = 1 << 13,            /* --values */
  RPE_CLI_TAKES_RELATIVE = 1 << 14,          /* --relative-embeddings */
  RPE_CLI_TAKES_EXACT = 1 << 15,             /* --exact --no-exact */
  RPE_CLI_TAKES_CAUSAL = 1 << 16,            /* --causal --no-causal */
  RPE_CLI_TAKES_FEATURE_MAP = 1 << 17,       /* --feature-map */
  RPE_CLI_TAKES_FEATURE_OPTIONS = 1 << 18,   /* --performer-features --dpfp-nu */
  RPE_CLI_TAKES_LRPE = 1 << 19,              /* --lrpe-p --lrpe-lambda --lrpe-theta */
  RPE_CLI_TAKES_LRPE_NORM = 1 << 20,         /* --lrpe-norm */
  RPE_CLI_TAKES_LRPE_BEFORE = 1 << 21,       /* --lrpe-before */
  RPE_CLI_TAKES_BIAS = 1 << 22,              /* --bias --bias-layout */
  RPE_CLI_TAKES_BIAS_2D = 1 << 23,           /* --bias-rows --bias-cols */
  RPE_CLI_TAKES_FASTRPB_ATTENTION = 1 << 24, /* --fastrpb-attention */
  RPE_CLI_TAKES_F64 = 1 << 25,               /* --f64 */
  RPE_CLI_TAKES_OUT_KEYS = 1 << 26,          /* --out-keys */
  RPE_CLI_TAKES_FORCE = 1 << 27,             /* --force */
  RPE_CLI_TAKES_LAYER = 1 << 28,             /* --layer without the other SPE options (a capture's layer) */
  RPE_CLI_TAKES_LRPE_FILES = 1 << 29,        /* --lrpe-v --lrpe-theta-file --lrpe-permutation --lrpe-householder */
} RpeCliTakes;

typedef enum
{
  RPE_CLI_ARG_FLAG,     /* gboolean, set TRUE */
  RPE_CLI_ARG_FLAG_OFF, /* gboolean, set FALSE (--gate of --no-gate: a later one wins) */
  RPE_CLI_ARG_STRING,   /* char * */
  RPE_CLI_ARG_FILE,     /* char *, a file name */
  RPE_CLI_ARG_STRINGS,  /* char **, repeatable */
  RPE_CLI_ARG_INT,      /* int in [min, max], decimal */
  RPE_CLI_ARG_INT64,    /* gint64 in [min, max], decimal */
  RPE_CLI_ARG_DOUBLE,   /* double in [dmin, dmax], decimal */
  RPE_CLI_ARG_CALLBACK, /* no storage: `callback` runs on the value (no value when arg_name is NULL) */
} RpeCliArg;

typedef struct
{
  const char    *name;       /* the long name, without "--" */
  char           short_name; /* 0: none */
  RpeCliArg      arg;
  gsize          offset;     /* of the value in the table's struct (G_STRUCT_OFFSET) */
  guint64        part;       /* 0: taken with the table; else by the leaves that have the bit */
  gint64         min, max;   /* INT, INT64 */
  double         dmin, dmax; /* DOUBLE */
  GOptionArgFunc callback;   /* CALLBACK */
  const char    *help;       /* N_() */
  const char    *arg_name;   /* the value in --help: "N", "FILE.npy", "a|b|c" (the choices) */
} RpeCliOption;

/* One row of a table: RPE_CLI_INT ("heads", G_STRUCT_OFFSET (Options, heads), 0, 1, 4096,
 * N_("Heads H (default 8)"), "H"); rows with a short name or a callback are written out. */
#define RPE_CLI_FLAG(n, off, pt, h)                                                  \
  {                                                                                  \
    .name = (n), .arg = RPE_CLI_ARG_FLAG, .offset = (off), .part = (pt), .help = (h) \
  }
#define RPE_CLI_FLAG_OFF(n, off, pt, h)                                                  \
  {                                                                                      \
    .name = (n), .arg = RPE_CLI_ARG_FLAG_OFF, .offset = (off), .part = (pt), .help = (h) \
  }
#define RPE_CLI_STRING(n, off, pt, h, a)                                                                \
  {                                                                                                     \
    .name = (n), .arg = RPE_CLI_ARG_STRING, .offset = (off), .part = (pt), .help = (h), .arg_name = (a) \
  }
#define RPE_CLI_FILE(n, off, pt, h, a)                                                                \
  {                                                                                                   \
    .name = (n), .arg = RPE_CLI_ARG_FILE, .offset = (off), .part = (pt), .help = (h), .arg_name = (a) \
  }
#define RPE_CLI_STRINGS(n, off, pt, h, a)                                                                \
  {                                                                                                      \
    .name = (n), .arg = RPE_CLI_ARG_STRINGS, .offset = (off), .part = (pt), .help = (h), .arg_name = (a) \
  }
#define RPE_CLI_INT(n, off, pt, lo, hi, h, a)                                                                  \
  {                                                                                                            \
    .name = (n), .arg = RPE_CLI_ARG_INT, .offset = (off), .part = (pt), .min = (lo), .max = (hi), .help = (h), \
    .arg_name = (a)                                                                                            \
  }
#define RPE_CLI_INT64(n, off, pt, lo, hi, h, a)                                                                  \
  {                                                                                                              \
    .name = (n), .arg = RPE_CLI_ARG_INT64, .offset = (off), .part = (pt), .min = (lo), .max = (hi), .help = (h), \
    .arg_name = (a)                                                                                              \
  }
#define RPE_CLI_DOUBLE(n, off, pt, lo, hi, h, a)                                                                    \
  {                                                                                                                 \
    .name = (n), .arg = RPE_CLI_ARG_DOUBLE, .offset = (off), .part = (pt), .dmin = (lo), .dmax = (hi), .help = (h), \
    .arg_name = (a)                                                                                                 \
  }

typedef struct _RpeCliLeaf    RpeCliLeaf;
typedef struct _RpeCliCommand RpeCliCommand;

struct _RpeCliLeaf
{
  const char          *name;        /* "attention"; NULL: the command's only leaf */
  const char          *summary;     /* N_(): one line */
  const char          *description; /* N_(): what it does, its inputs and outputs */
  const char          *example;     /* one command line, after "rpe " */
  guint64              takes;       /* RPE_CLI_TAKES_* */
  guint64              own;         /* parts of the own options table it takes (rows of part 0: always) */
  const char          *main;        /* space-separated shared options --help shows beside the own ones */
  const RpeCliOption  *options;     /* its own options table (NULL: the command's) */
  const RpeCliCommand *also;        /* also the options of this command's leaf `also_leaf` (export's curves) */
  const char          *also_leaf;
};

struct _RpeCliCommand
{
  const char         *name;        /* "compute" */
  const char         *summary;     /* N_(): one line for `rpe --help` */
  const char         *leaf_arg;    /* what its leaves are called in messages: "WHAT", "KIND", "VIEW" */
  const char         *args;        /* the positional arguments after the leaf: "FILE", or NULL */
  const char         *description; /* N_(): `rpe COMMAND --help` of a command with leaves */
  const char         *example;     /* that help's example */
  const RpeCliOption *options;     /* its own options (over its own struct); NULL-name terminated */
  const RpeCliLeaf   *leaves;      /* NULL-name terminated, or one leaf with a NULL name */
  gsize               n_leaves;
  int (*run) (int argc, char **argv);
};

/* The commands of `rpe`, in the order `rpe --help` lists them; NULL-terminated. */
extern const RpeCliCommand *const rpe_cli_commands[];

/* The shared groups, for the docs. */
typedef struct
{
  const char         *name;  /* --help-NAME */
  const char         *title; /* N_() */
  const char         *help;  /* N_() */
  const RpeCliOption *options;
} RpeCliGroup;

extern const RpeCliGroup rpe_cli_groups[];     /* NULL-name terminated */
extern const RpeCliGroup rpe_cli_global_group; /* --memory-budget --threads: before or after the command */

const RpeCliCommand *rpe_cli_command_lookup (const char *name);
const RpeCliLeaf    *rpe_cli_leaf_lookup (const RpeCliCommand *command, const char *name);

/* TRUE if `leaf` takes the option `name` (without "--"); *takes_value if it takes a value. */
gboolean
rpe_cli_leaf_takes (const RpeCliCommand *command, const RpeCliLeaf *leaf, const char *name, gboolean *takes_value);

/* Calls func for every option `leaf` takes (own, borrowed, shared, global), in --help-all's
 * order; `group` is NULL for the own options. */
typedef void (*RpeCliOptionFunc) (const RpeCliOption *option, const RpeCliGroup *group, gpointer data);
void rpe_cli_leaf_foreach (const RpeCliCommand *command, const RpeCliLeaf *leaf, RpeCliOptionFunc func, gpointer data);

/* The leaf argv names: the first argument that is neither an option nor an option's value
 * (options as the command's leaves take them).  NULL when there is none (*index = -1) or it is
 * not a leaf of the command (*index its position). */
const RpeCliLeaf *rpe_cli_find_leaf (const RpeCliCommand *command, int argc, char **argv, int *index);

/* TRUE if argv asks for help (-h, --help, --help-all, --help-GROUP as an option, not as a value). */
gboolean rpe_cli_wants_help (const RpeCliCommand *command, const RpeCliLeaf *leaf, int argc, char **argv);

/* `rpe COMMAND --help` of a command with leaves: its leaves, one line each, and an example. */
void rpe_cli_print_command_help (const RpeCliCommand *command, FILE *out);

/* Parses argv (argv[0] the command's name) for `leaf`: the leaf's own options into `own` (the
 * table's struct), the shared ones into `args`, the global ones into the process settings.
 * `label` names the leaf in messages ("compute attention"; NULL: command and leaf names).
 * On success TRUE and argv keeps argv[0] and the positional arguments.  Otherwise FALSE and
 * *status: 0 after printing the help (-h, --help, --help-all, --help-GROUP), 2 after a usage
 * message on stderr ("rpe LABEL: ..."). */
gboolean rpe_cli_parse (const RpeCliCommand *command,
                        const RpeCliLeaf    *leaf,
                        const char          *label,
                        RpeCliArgs          *args,
                        gpointer             own,
                        int                 *argc,
                        char              ***argv,
                        int                 *status);

/* Frees the strings of `own` that `table`'s rows hold (a command's options struct). */
void rpe_cli_own_clear (const RpeCliOption *table, gpointer own);

/* Reads argv (argv[0] the program) as `rpe` would, up to the options of the leaf it names, and
 * runs nothing: 0 when it parses (or asks for help), 2 for a usage error (the message on
 * stderr).  For the fuzzer of the option parser. */
int rpe_cli_check_args (int argc, char **argv);

/* The leading options of `rpe` before the command (global ones only): parsed and removed;
 * FALSE with a message on stderr. */
gboolean rpe_cli_parse_global (int *argc, char ***argv);

G_END_DECLS

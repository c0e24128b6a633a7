/* rpe-cli.h: shared pieces of the `rpe` command-line tool: the commands, and the helpers they
 * share to load parameters and inputs, draw codes and write results (rpe-cli.c). */
#pragma once

#include <glib.h>

#include "rpe-capture.h"
#include "rpe-checkpoint-lrpe.h"
#include "rpe-explorer-trained.h"
#include "rpe-export.h"
#include "rpe-linear-attention.h"
#include "rpe-plot-render.h"
#include "rpe-noise.h"
#include "rpe-npy.h"
#include "rpe-spe.h"
#include "rpe-tensor.h"
#include "rpe-tensor-map.h"

#include "rpe-cli-options.h"
#include "rpe-cli-parse.h"

G_BEGIN_DECLS

typedef struct
{
  gsize  n;
  gsize  dv;
  float *q; /* (N, H, D) */
  float *k; /* (N, H, D) */
  float *v; /* (N, H, Dv), only when asked for */
} RpeCliInputs;

typedef struct
{
  gsize  n;
  gsize  r;
  float *qbar; /* (N, H, D, R) */
  float *kbar;
} RpeCliCodes;

/* The whole tool: `rpe COMMAND ...` (argv[0] the program); the exit status.  The caller has
 * set the locale (LC_NUMERIC "C") and the text domain. */
int rpe_cli_main (int argc, char **argv);

int rpe_cli_exit_code_for_error (const GError *error);
/* --noise-scheme (rpe-noise.h); refuses a scheme other than iid with replayed noise. */
gboolean rpe_cli_noise_scheme (const RpeCliArgs *o, RpeNoiseScheme *scheme, GError **error);
/* --map ROLE=TENSOR options into *map (NULL when none was given). */
/* --map roles outside [first, last] are not read by this command: an error naming them. */
gboolean rpe_cli_map_only (const RpeTensorMap *map, RpeRole first, RpeRole last, const char *what, GError **error);
gboolean rpe_cli_parse_map (const RpeCliArgs *o, RpeTensorMap **map, GError **error);
gboolean rpe_cli_status_error (RpeStatus status, const char *what, GError **error);
/* A usage error (RPE_ERROR_INVALID_ARGUMENT: exit 2) with a printf message; FALSE. */
gboolean rpe_cli_usage_error (GError **error, const char *format, ...) G_GNUC_PRINTF (2, 3);
/* *out = a float buffer of a x b x c x d elements, its size checked for overflow and against the
 * memory budget (rpe_alloc); NULL and the error of rpe_cli_status_error (what) when refused. */
gboolean rpe_cli_alloc_floats (float **out, gsize a, gsize b, gsize c, gsize d, const char *what, GError **error);

/* Before a figure is computed: the memory drawing it as a PNG (or as each frame of an animation)
 * holds at once (rpe_export_png_bytes, rpe_gif_frame_bytes), for the probe figure's kind at
 * `size`, checked against the memory budget: refused naming the pixels, the bytes and the size
 * options (RPE_ERROR_NO_MEMORY, exit 2).  What fits is then counted in every later
 * rpe_cli_check_budget, beside the figure's arrays.  SVG and PDF: nothing (checked as drawn). */
gboolean rpe_cli_check_image (const RpeFigure     *probe,
                              RpeExportFormat      format,
                              const RpeExportSize *size,
                              gboolean             animation,
                              GError             **error);

/* Refuses, before anything is allocated, a request whose float arrays (each the product of
 * 4 dims) together exceed the memory budget, next to what the command holds already
 * (rpe_alloc_held) and its figure's drawing (rpe_cli_check_image); the message names both sizes. */
gboolean rpe_cli_check_budget (const char *what, gsize n_arrays, const gsize (*dims)[4], GError **error);

/* Drops the fingerprint of --checkpoint that captures were checked against (made once per
 * command); rpe_cli_main calls it when a command ends. */
void rpe_cli_forget_model_print (void);

/* A checkpoint file, or "demo" for the embedded demo checkpoint. */
RpeTensorSet *rpe_cli_read_checkpoint (const char *path, GError **error);
/* For a figure the window draws with --attention-method `method` (lrpe, fastrpb, ape, linear)
 * from --checkpoint: with `module`, FALSE and an error naming the method and what the file holds
 * when it has no module of that kind (lrpe, fastrpb); with `spe`, the same when it has no SPE
 * module (the window's methods draw beside one), naming the commands that draw its trained
 * LRPE or FastRPB module instead.  TRUE without --checkpoint. */
gboolean
rpe_cli_check_method_module (const RpeCliArgs *o, const char *method, gboolean module, gboolean spe, GError **error);

/* The trained modules of --checkpoint that the window-drawn methods draw (ape, lrpe, fastrpb):
 * every FastRPB bias and the learned APE in *trained (with the model's (H, D): the --content
 * capture's layer, else the demo's metadata, else the FastRPB bias's H and --features), the LRPE
 * module (--prefix picks one of several) in *lrpe.  *has_method: the checkpoint holds `method`'s
 * trained module; *has_spe: it holds an SPE module (TRUE without --checkpoint: seeded SPE
 * parameters, and with --map).  FALSE and an error only for a checkpoint that cannot be read or a
 * trained module that is malformed. */
gboolean rpe_cli_trained_modules (const RpeCliArgs    *o,
                                  const char          *method,
                                  RpeExplorerTrained **trained,
                                  RpeLrpeTrained     **lrpe,
                                  gboolean            *has_method,
                                  gboolean            *has_spe,
                                  GError             **error);
/* An LRPE or FastRPB reader's error for the CLI: the checkpoint named, and, where several modules
 * were found and no prefix given, the option that chooses one. */
void          rpe_cli_phrase_pick_error (GError *error, const char *checkpoint, const char *prefix);
gboolean      rpe_cli_load_params (const RpeCliArgs *o, RpeSpeParams *params, GError **error);
/* The same; the reader's notes on the module, layer and gate it chose are printed only when
 * print_notes (a command that draws every layer and head has chosen none of them). */
gboolean      rpe_cli_load_params_full (const RpeCliArgs *o, RpeSpeParams *params, gboolean print_notes,
                                        GError **error);
RpeTensor    *rpe_cli_read_array (const char *path, gsize want_ndim, const char *what, GError **error);
/* Every .npy the tool reads: an array with a dimension of 0 is refused (no content). */
RpeTensor    *rpe_cli_read_npy (const char *path, GError **error);
gboolean      rpe_cli_resolve_length (const RpeCliArgs *o, gsize input_length, gsize *n, GError **error);
gboolean      rpe_cli_load_inputs (const RpeCliArgs   *o,
                                   const RpeSpeParams *params,
                                   gboolean            want_values,
                                   RpeCliInputs       *in,
                                   GError            **error);
void          rpe_cli_inputs_clear (RpeCliInputs *in);
gboolean      rpe_cli_make_codes (const RpeCliArgs   *o,
                                  const RpeSpeParams *params,
                                  gsize               n,
                                  gboolean            gate,
                                  RpeCliCodes        *codes,
                                  GError            **error);
void          rpe_cli_codes_clear (RpeCliCodes *codes);
gboolean      rpe_cli_encode (const RpeSpeParams *params,
                              const RpeCliCodes  *codes,
                              const RpeCliInputs *in,
                              float             **qhat,
                              float             **khat,
                              GError            **error);
/* Before computing: refuses (RPE_ERROR_IO, exit 1) an output that is one of the
 * inputs the options name, or a write-protected file (unless --force). */
gboolean rpe_cli_check_output (const RpeCliArgs *o, const char *path, GError **error);
/* Encoded queries/keys (N, H, R) by the fused core path, without (N, H, D, R) codes
 * (rpe-cli-compute.c); *r is R. */
gboolean rpe_cli_encode_fused (const RpeCliArgs   *o,
                               const RpeSpeParams *params,
                               const RpeCliInputs *in,
                               gboolean            gate,
                               gsize              *r,
                               float             **qhat,
                               float             **khat,
                               GError            **error);
/* One head of it, seeded noise only (no --noise): q, k (N, D), qhat, khat (N, R). */
gboolean rpe_cli_encode_head (const RpeCliArgs   *o,
                              const RpeSpeParams *params,
                              gboolean            gate,
                              gsize               n,
                              gsize               head,
                              const float        *q,
                              const float        *k,
                              gsize              *r,
                              float             **qhat,
                              float             **khat,
                              GError            **error);
gboolean rpe_cli_write (const RpeCliArgs *o,
                        const char       *path,
                        const float      *data,
                        gsize             ndim,
                        const gsize      *shape,
                        int              *exit_code,
                        GError          **error);
/* Elements first .. first + count - 1 (C order) of an array of shape `shape` for `path` are
 * finite, or an error naming the first bad index (exit code 2, "nothing was written"). */
gboolean rpe_cli_check_finite (const char  *path,
                               const float *data,
                               gsize        count,
                               gsize        first,
                               gsize        ndim,
                               const gsize *shape,
                               int         *exit_code,
                               GError     **error);
/* Two complete writers (b may be NULL): flushed to disk on two threads, then renamed into
 * place; if either flush fails both are aborted (exit code 1).  Takes both writers. */
gboolean rpe_cli_commit_pair (RpeNpyWriter *a, RpeNpyWriter *b, int *exit_code, GError **error);
/* --content CAPTURE: a capture file (.npz) or "demo:NAME" (rpe-capture.h) instead of unit/random. */
gboolean rpe_cli_content_is_capture (const RpeCliArgs *o);
/* Layer --layer (default: the capture's first, with a note when it has several) of the --content
 * capture as the content of a module of H heads of D features (rpe_capture_load_content: a
 * capture that does not fit is refused with both shapes named); values too when want_values and
 * --values names a capture (the same file, or another capture's same layer). */
gboolean rpe_cli_capture_layer (const RpeCliArgs  *o,
                                gsize              H,
                                gsize              D,
                                gboolean           want_values,
                                RpeCaptureContent *content,
                                GError           **error);
/* (N, H, D) of layer --layer of the --content capture (for commands whose shape is the content's). */
gboolean rpe_cli_capture_shape (const RpeCliArgs *o, gsize *N, gsize *H, gsize *D, GError **error);
/* --values CAPTURE: layer --layer's values (N, H, Dv) (the --content capture must be given too). */
RpeTensor *rpe_cli_capture_values (const RpeCliArgs *o, gsize H, gsize D, GError **error);
/* --content: *random TRUE for "random", FALSE for "unit" or none; another word is an error. */
gboolean rpe_cli_content_random (const RpeCliArgs *o, gboolean *random, GError **error);
/* Rows m0 .. m0 + rows - 1 of the --content queries and keys ((rows, H, D) each; k may be
 * NULL), the values rpe_cli_load_inputs gives those rows. */
void
rpe_cli_content_rows (const RpeCliArgs *o, gboolean random, gsize H, gsize D, gsize m0, gsize rows, float *q, float *k);
/* Two arrays of one shape (encode's queries and keys) as two .npy files: both checked finite
 * first, each written and flushed to disk on its own thread, then both renamed into place;
 * if either fails, neither target is replaced.  path_b NULL: rpe_cli_write of a alone. */
gboolean rpe_cli_write_pair (const RpeCliArgs *o,
                             const char       *path_a,
                             const float      *a,
                             const char       *path_b,
                             const float      *b,
                             gsize             ndim,
                             const gsize      *shape,
                             int              *exit_code,
                             GError          **error);

/* The LRPE of the --lrpe-* options with any trained v / theta / permutation (.npy options, and
 * with use_checkpoint the LRPE module of --checkpoint / --prefix).  length: N for theta b/c. */
struct _RpeLrpe *
rpe_cli_make_lrpe (const RpeCliArgs *o, gsize dim, gsize length, gboolean use_checkpoint, GError **error);

/* The --checkpoint's trained FastRPB weights for length n in the centred layout ((1 or H) rows of
 * 2n - 1, rpe_alloc'd; --prefix picks the module, --bias-layout the layout; *source names the
 * tensor), or NULL: with an error, or without one when the checkpoint has no FastRPB module. */
float *rpe_cli_checkpoint_fastrpb (const RpeCliArgs *o,
                                   gsize             n,
                                   gsize             heads,
                                   gboolean         *per_head,
                                   char            **source,
                                   GError          **error);

/* template | empirical | codes | encode over --grid N1xN2 (2-D convSPE, rpe-cli-conv2d.c) */
gboolean rpe_cli_compute_grid (const char *what, const RpeCliArgs *o, int *exit_code, GError **error);

gboolean rpe_cli_parse_feature_map (const RpeCliArgs  *o,
                                    RpeFeatureMap     *map,
                                    RpeFeatureOptions *fopts,
                                    gsize              width,
                                    GError           **error);
gboolean rpe_cli_compute_linear (const RpeCliArgs   *o,
                                 const RpeSpeParams *params,
                                 gboolean            gated,
                                 int                *exit_code,
                                 GError            **error);

gboolean rpe_cli_compute_positional (const char *what, const RpeCliArgs *o, int *exit_code, GError **error);

/* The commands (rpe-cli-<command>.c), in rpe_cli_commands[] (rpe-cli-main.c). */
extern const RpeCliCommand rpe_cli_info_command;
extern const RpeCliCommand rpe_cli_compute_command;
extern const RpeCliCommand rpe_cli_curves_command;
extern const RpeCliCommand rpe_cli_export_command;
extern const RpeCliCommand rpe_cli_fit_command;
extern const RpeCliCommand rpe_cli_bench_command;
extern const RpeCliCommand rpe_cli_help_command;

int rpe_cli_compute (int argc, char **argv);
int rpe_cli_curves (int argc, char **argv);
int rpe_cli_export (int argc, char **argv);
int rpe_cli_bench (int argc, char **argv);
int rpe_cli_fit (int argc, char **argv);
int rpe_cli_info (int argc, char **argv);
/* rpe-cli-outputs.c: `rpe export outputs` and `rpe curves output-error` (argv[0] is the
 * command: "export" or "curves", the view or curve name among the arguments).  Their options:
 * one table, the figure's rows for export, the CSV's for curves. */
#define RPE_CLI_OUTPUTS_FIGURE 1
#define RPE_CLI_OUTPUTS_CSV 2
#define RPE_CLI_OUTPUTS_TAKES                                                                                       \
  (RPE_CLI_TAKES_MODEL | RPE_CLI_TAKES_SPE | RPE_CLI_TAKES_SEQUENCE | RPE_CLI_TAKES_REALIZATIONS                    \
   | RPE_CLI_TAKES_QUERIES | RPE_CLI_TAKES_CONTENT | RPE_CLI_TAKES_VALUES | RPE_CLI_TAKES_FEATURE_MAP               \
   | RPE_CLI_TAKES_FEATURE_OPTIONS | RPE_CLI_TAKES_HEAD_FEATURE | RPE_CLI_TAKES_TRAIN_LENGTH | RPE_CLI_TAKES_CAUSAL \
   | RPE_CLI_TAKES_FORCE)
extern const RpeCliOption rpe_cli_outputs_options[];
/* rpe-cli-compare.c: `rpe export compare-templates | compare-attention | overview`, and their
 * options (B for the compare views, the cells for the overview). */
#define RPE_CLI_COMPARE_B 1
#define RPE_CLI_COMPARE_CELLS 2
#define RPE_CLI_COMPARE_B_CONTENT 4 /* compare-attention: B's captured content */
extern const RpeCliOption rpe_cli_compare_options[];
int                       rpe_cli_export_compare (int argc, char **argv);
int                       rpe_cli_export_outputs (int argc, char **argv);
int                       rpe_cli_curves_output_error (int argc, char **argv);

/* --color-scale / --gamma / --percentile / --attention-transform of `rpe export`: the
 * heatmap transform and its parameter; FALSE after a message on stderr (usage error). */
gboolean rpe_cli_color_scale (const char          *view,
                              const char          *name,
                              double               gamma,
                              double               percentile,
                              gboolean             attention_transform,
                              RpeHeatmapTransform *transform,
                              double              *param);

/* rpe-cli-remedy.c: the tool's options as the remedy of the readers' findings
 * (rpe-findings.h); call once at start-up. */
void rpe_cli_remedy_install (void);

G_END_DECLS

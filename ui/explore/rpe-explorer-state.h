/* rpe-explorer-state.h: every parameter of the explorer in one GObject.
 *
 * The state lives on the main thread.  Each scalar parameter is a property
 * (enums are guint properties so that GtkDropDown:selected binds to them);
 * arrays (the SPE parameters of the sine and conv modules, the FastRPB
 * weights, the loaded content) are changed through setters.  Every change
 * bumps a serial and emits "changed" with the RpeExplorerChange flags of what
 * changed (once per setter call).
 *
 * Workers never see the GObject: rpe_explorer_state_snapshot () returns an
 * immutable, atomically refcounted deep copy, safe to read from any thread.
 */
#pragma once

#include <gio/gio.h>

#include "rpe-capture.h"
#include "rpe-explorer-trained.h"
#include "rpe-checkpoint-lrpe.h"
#include "rpe-linear-attention.h"
#include "rpe-plot-render.h"
#include "rpe-lrpe.h"
#include "rpe-spe.h"

G_BEGIN_DECLS

/* The attention scheme shown in the attention view. */
typedef enum
{
  RPE_EXPLORER_METHOD_SPE,        /* SPE estimate: softmax (Qhat Khat^T / sqrt R) (docs/math.md, section 4) */
  RPE_EXPLORER_METHOD_EXACT,      /* exact RPE: softmax (sum_d q k Ptilde_d / sqrt D) (docs/math.md, section 4) */
  RPE_EXPLORER_METHOD_APE,        /* sinusoidal absolute encoding (docs/math.md, section 9) */
  RPE_EXPLORER_METHOD_LRPE,       /* LRPE-encoded features, row-normalised scores (docs/math.md, section 7) */
  RPE_EXPLORER_METHOD_FASTRPB,    /* softmax (q k^T / sqrt D) + W, W[m, n] = w_{m-n} (docs/math.md, section 8) */
  RPE_EXPLORER_METHOD_LINEAR,     /* implied attention of linear attention on Qhat, Khat (docs/math.md, section 5) */
  RPE_EXPLORER_N_METHODS,
} RpeExplorerMethod;

/* What the templates grid shows. */
typedef enum
{
  RPE_TEMPLATE_ANALYTIC,          /* Ptilde_d */
  RPE_TEMPLATE_EMPIRICAL,         /* Phat_d from one draw of R codes */
  RPE_TEMPLATE_DIFFERENCE,        /* Phat_d - Ptilde_d */
  RPE_TEMPLATE_N_KINDS,
} RpeTemplateKind;

/* Queries and keys. */
typedef enum
{
  RPE_CONTENT_UNIT,               /* q = k = 1 everywhere: the pure positional view */
  RPE_CONTENT_RANDOM,             /* N(0, 1), seeded (streams RPE_STREAM_QUERIES / _KEYS) */
  RPE_CONTENT_NPY,                /* loaded from a .npy file (positions cycle if it is shorter) */
  RPE_CONTENT_CAPTURE,            /* a capture's layer "capture-layer" (rpe-capture.h): the model's own
                                     queries, keys (and values) on one input */
  RPE_CONTENT_N_KINDS,
} RpeExplorerContent;

/* The colour range of a view with several panels (templates grid, SPE vs RPE). */
typedef enum
{
  RPE_COLOR_RANGE_SHARED,         /* one range (and colour bar) for the panels */
  RPE_COLOR_RANGE_PER_PANEL,      /* each panel its own */
} RpeColorRange;

typedef enum /*< flags >*/
{
  RPE_EXPLORER_CHANGE_METHOD        = 1 << 0,
  RPE_EXPLORER_CHANGE_SPE_KIND      = 1 << 1,
  RPE_EXPLORER_CHANGE_SPE_PARAMS    = 1 << 2,   /* frequencies, phases, gains, filter taps */
  RPE_EXPLORER_CHANGE_GATE          = 1 << 3,   /* gate values */
  RPE_EXPLORER_CHANGE_LENGTH        = 1 << 4,
  RPE_EXPLORER_CHANGE_REALIZATIONS  = 1 << 5,
  RPE_EXPLORER_CHANGE_SEED          = 1 << 6,
  RPE_EXPLORER_CHANGE_HEAD          = 1 << 7,
  RPE_EXPLORER_CHANGE_FEATURE       = 1 << 8,
  RPE_EXPLORER_CHANGE_CAUSAL        = 1 << 9,
  RPE_EXPLORER_CHANGE_GATED         = 1 << 10,  /* the gate toggle */
  RPE_EXPLORER_CHANGE_FEATURE_MAP   = 1 << 11,
  RPE_EXPLORER_CHANGE_TEMPLATE_KIND = 1 << 12,
  RPE_EXPLORER_CHANGE_CONTENT       = 1 << 13,
  RPE_EXPLORER_CHANGE_LRPE          = 1 << 14,
  RPE_EXPLORER_CHANGE_FASTRPB       = 1 << 15,
  RPE_EXPLORER_CHANGE_TRAIN_LENGTH  = 1 << 16,
  RPE_EXPLORER_CHANGE_MODULES       = 1 << 17,  /* new parameters (a checkpoint was opened) */
  RPE_EXPLORER_CHANGE_COLORMAP      = 1 << 18,
  RPE_EXPLORER_CHANGE_GRID          = 1 << 19,  /* the 2-D convSPE module, grid size, query position */
  RPE_EXPLORER_CHANGE_COMPARE       = 1 << 20,  /* the compare-* properties (rpe-compare.h) */
  RPE_EXPLORER_CHANGE_COLOR_SCALE   = 1 << 21,  /* color-scale, color-gamma, color-percentile, color-range */
} RpeExplorerChange;

#define RPE_EXPLORER_CHANGE_ALL ((RpeExplorerChange) ((1 << 22) - 1))
/* What changes the colours of a heatmap but not its values. */
#define RPE_EXPLORER_CHANGE_LOOK (RPE_EXPLORER_CHANGE_COLORMAP | RPE_EXPLORER_CHANGE_COLOR_SCALE)

GType rpe_explorer_change_get_type (void) G_GNUC_CONST;
#define RPE_TYPE_EXPLORER_CHANGE (rpe_explorer_change_get_type ())

#define RPE_EXPLORER_MAX_LENGTH   65536
#define RPE_EXPLORER_MAX_R        4096
#define RPE_EXPLORER_FASTRPB_TAPS 32     /* w_tau editable for |tau| < 32, zero beyond */
#define RPE_EXPLORER_MAX_GRID     128    /* 2-D convSPE grid sides N1, N2 */

/* An immutable copy of the state for workers (read-only; refcounted). */
typedef struct
{
  guint64             serial;
  RpeExplorerMethod   method;
  RpeSpeMethod        spe_kind;
  gboolean            have_spe;
  RpeSpeParams        spe;            /* the active module (sine or conv), effective values */
  gsize               n;              /* N */
  gsize               r;              /* R */
  guint64             seed;
  gsize               head;           /* clamped to the module's H - 1 */
  gsize               feature;        /* clamped to D - 1 */
  gboolean            causal;
  gboolean            gated;          /* use the gate (only if spe.gate != NULL) */
  RpeFeatureMap       feature_map;
  RpeTemplateKind     template_kind;
  RpeExplorerContent  content;
  const float        *npy_data;       /* NPY: (npy_n, H, D) or (npy_n, D) shared by heads */
  gsize               npy_n;
  gboolean            npy_per_head;
  /* CAPTURE: the capture (shared, immutable; NULL when none is held) and the layer drawn.  Its
   * queries and keys are used where that layer's (H, D) is (content_heads, content_dim). */
  const RpeCapture   *capture;
  guint               capture_layer;
  RpeLrpeP            lrpe_p;
  RpeLrpeLambda       lrpe_lambda;
  RpeLrpeTheta        lrpe_theta;
  float               fastrpb_w[2 * RPE_EXPLORER_FASTRPB_TAPS - 1];   /* index i <-> tau = i - (T-1) */
  gsize               train_length;   /* 0: none */
  /* Trained LRPE parameters in use (a checkpoint's module or .npy files), or NULL: seeded.
   * rpe_explorer_snapshot_new_lrpe applies them (P and Lambda as they imply). */
  const RpeLrpeTrained *lrpe_trained;
  /* A checkpoint's trained FastRPB biases and learned absolute embedding, with the model's (H, D)
   * (rpe-explorer-trained.h), or NULL.  fastrpb_trained: FASTRPB draws the bias of layer `layer`
   * (every head, every offset it holds) instead of fastrpb_w; ape_trained: APE adds the learned
   * embedding instead of the sinusoidal one.  layer: the model layer drawn ("capture-layer"). */
  const RpeExplorerTrained *trained;
  gboolean                  fastrpb_trained;
  gboolean                  ape_trained;
  guint                     layer;
  /* The shape of the queries/keys (rpe_explorer_snapshot_fill_content): the SPE module's
   * (H, D); for LRPE with trained parameters of another width, (H', D) of the loaded content
   * when it fits them, else (1, D).  content_head is the head clamped to content_heads - 1. */
  gsize               content_heads;
  gsize               content_dim;
  gsize               content_head;
  /* 2-D convSPE (images, docs/math.md, section 2; rpe-conv-spe-2d.h): the module (effective values, filters
   * (H*D, L1*L2)), the grid N1 x N2 (positions row-major) and the query position shown. */
  gboolean            have_conv2d;
  RpeSpeParams        conv2d;
  gsize               grid_n1;
  gsize               grid_n2;
  gsize               grid_query;     /* clamped to N1 N2 - 1 */
  gsize               conv2d_head;    /* the head and feature clamped to the module's */
  gsize               conv2d_feature;
  gboolean            conv2d_gated;   /* gated, and the module has a gate */
} RpeExplorerSnapshot;

GType                rpe_explorer_snapshot_get_type (void) G_GNUC_CONST;
RpeExplorerSnapshot *rpe_explorer_snapshot_ref   (RpeExplorerSnapshot *snapshot);
void                 rpe_explorer_snapshot_unref (RpeExplorerSnapshot *snapshot);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RpeExplorerSnapshot, rpe_explorer_snapshot_unref)

/* Fills q and k (n, H, D) with the snapshot's content for positions 0..n-1
 * (any n, also != snapshot->n), (H, D) = (content_heads, content_dim).  Loaded
 * content that does not match H, D is not used (unit content instead). */
RpeStatus rpe_explorer_snapshot_fill_content (const RpeExplorerSnapshot *snapshot,
                                              gsize                      n,
                                              float                     *q,
                                              float                     *k);
/* The snapshot's captured layer when the content is CAPTURE and that layer has the content's
 * (H, D) (else NULL): its queries, keys and values (NULL without values), and the tokens (NULL
 * without). */
gboolean  rpe_explorer_snapshot_captured (const RpeExplorerSnapshot *snapshot,
                                          const RpeTensor          **queries,
                                          const RpeTensor          **keys,
                                          const RpeTensor          **values,
                                          const RpeTensor          **tokens);
/* The same snapshot on another layer of its capture (a copy; the layer is kept when the capture
 * has no layer `layer`). */
RpeExplorerSnapshot *rpe_explorer_snapshot_with_capture_layer (const RpeExplorerSnapshot *snapshot,
                                                               guint                      layer);
/* The FastRPB weights for length n: (2n - 1) floats, index i <-> tau = i - (n-1): the trained
 * bias of the snapshot's layer and content head when fastrpb_trained, else the edited taps. */
void      rpe_explorer_snapshot_fastrpb_weights (const RpeExplorerSnapshot *snapshot,
                                                 gsize                      n,
                                                 float                     *w);
/* The LRPE object of the snapshot for feature width f, with the trained parameters when
 * snapshot->lrpe_trained is set; NULL and *status on failure (RPE_ERROR_INVALID_ARGUMENT when
 * the trained parameters do not fit f or the P/Lambda chosen). */
RpeLrpe  *rpe_explorer_snapshot_new_lrpe (const RpeExplorerSnapshot *snapshot,
                                          gsize                      f,
                                          RpeStatus                 *status);

const char *rpe_explorer_method_name (RpeExplorerMethod method);

#define RPE_TYPE_EXPLORER_STATE (rpe_explorer_state_get_type ())
G_DECLARE_FINAL_TYPE (RpeExplorerState, rpe_explorer_state, RPE, EXPLORER_STATE, GObject)

RpeExplorerState *rpe_explorer_state_new (void);

/* Replaces the sine and/or conv module (NULL keeps the current one); the
 * parameters are copied.  source: shown in captions ("demo module “sine”"). */
gboolean  rpe_explorer_state_set_modules  (RpeExplorerState   *self,
                                           const RpeSpeParams *sine,
                                           const char         *sine_source,
                                           const RpeSpeParams *conv,
                                           const char         *conv_source,
                                           GError            **error);
/* The 2-D convSPE module (rpe_conv_spe_is_2d), kept beside the 1-D ones: copied, validated;
 * NULL drops it.  Emits RPE_EXPLORER_CHANGE_GRID. */
gboolean  rpe_explorer_state_set_conv2d   (RpeExplorerState   *self,
                                           const RpeSpeParams *conv2d,
                                           const char         *source,
                                           GError            **error);
const RpeSpeParams *rpe_explorer_state_get_conv2d (RpeExplorerState  *self,
                                                   const char       **source);

/* The module of that kind (NULL if none). */
const RpeSpeParams *rpe_explorer_state_get_params (RpeExplorerState *self,
                                                   RpeSpeMethod      kind);
const char *rpe_explorer_state_get_source (RpeExplorerState *self,
                                           RpeSpeMethod      kind);

/* Sine component k of (h, d) of the sine module; all_features: of every d of
 * head h.  f in [0, 0.5], lambda >= 0. */
gboolean  rpe_explorer_state_set_sine     (RpeExplorerState *self,
                                           gsize             h,
                                           gsize             d,
                                           gsize             k,
                                           double            f,
                                           double            theta,
                                           double            lambda,
                                           gboolean          all_features);
/* Filter taps (L values) of channel (h, d) of the conv module; query: wq, else wk. */
gboolean  rpe_explorer_state_set_conv_taps (RpeExplorerState *self,
                                            gsize             h,
                                            gsize             d,
                                            gboolean          query,
                                            const float      *taps,
                                            gsize             n_taps,
                                            gboolean          all_features);
/* Changes the conv filter length L of the conv module (taps kept, zero-padded or cut). */
gboolean  rpe_explorer_state_set_conv_length (RpeExplorerState *self,
                                              gsize             length);
/* Gate g in [0, 1] of (h, d) in the active module (all_features: every d of h).
 * Gives the module a gate (zeros) if it had none. */
gboolean  rpe_explorer_state_set_gate     (RpeExplorerState *self,
                                           gsize             h,
                                           gsize             d,
                                           double            g,
                                           gboolean          all_features);
/* FastRPB weights for |tau| < RPE_EXPLORER_FASTRPB_TAPS: w (2T - 1), index i <-> tau = i - (T-1).
 * These are the edited taps: setting them turns "fastrpb-trained" off. */
void      rpe_explorer_state_set_fastrpb_weights (RpeExplorerState *self,
                                                  const float      *w,
                                                  gsize             count);
const float *rpe_explorer_state_get_fastrpb_weights (RpeExplorerState *self,
                                                     gsize            *count);
/* Loaded content (shape (N', H, D) or (N', D)); takes a copy; sets content = NPY. */
gboolean  rpe_explorer_state_set_npy_content (RpeExplorerState *self,
                                              const float      *data,
                                              gsize             ndim,
                                              const gsize      *shape,
                                              GError          **error);

/* ---- Captures as content (rpe-capture.h) ----
 *
 * An RpeExplorerCapture is an opened capture with where it came from: shared (atomically
 * refcounted) and immutable, so that the state, its snapshots, undo steps and sessions hold the
 * same one. */
typedef struct
{
  RpeCapture *capture;
  char       *path;        /* as opened: a file path or "demo:NAME" */
  char       *sha256;      /* hex of the file (NULL for a demo's) */
} RpeExplorerCapture;

/* Takes capture; copies path and sha256. */
RpeExplorerCapture *rpe_explorer_capture_new   (RpeCapture         *capture,
                                                const char         *path,
                                                const char         *sha256);
/* Opens a capture file or "demo:NAME" and hashes the file (NULL and error when it is refused). */
RpeExplorerCapture *rpe_explorer_capture_open  (const char         *path_or_demo,
                                                GError            **error);
/* A GTaskThreadFunc that opens the capture named by task_data (a path or "demo:NAME", a string
 * the task owns) on a worker: the task returns the RpeExplorerCapture or the error. */
void rpe_explorer_capture_open_in_task (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable);
RpeExplorerCapture *rpe_explorer_capture_ref   (RpeExplorerCapture *capture);
void                rpe_explorer_capture_unref (RpeExplorerCapture *capture);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RpeExplorerCapture, rpe_explorer_capture_unref)

/* Checks that layer `layer` of capture can be the content of the state's module: the capture was
 * made on the model of the checkpoint held (rpe_explorer_state_set_model_print; the error names
 * the tensors that differ), the layer exists, its queries have the module's (H, D),
 * 2 <= N <= RPE_EXPLORER_MAX_LENGTH.  FALSE and an error naming both shapes otherwise. */
gboolean  rpe_explorer_state_check_capture (RpeExplorerState   *self,
                                            RpeExplorerCapture *capture,
                                            guint               layer,
                                            GError            **error);
/* The same snapshot with layer `layer` of capture as its content (content CAPTURE, N of that
 * layer; a copy holding a reference to capture).  Unchecked: see rpe_explorer_capture_check. */
RpeExplorerSnapshot *
rpe_explorer_snapshot_with_capture (const RpeExplorerSnapshot *snapshot, RpeExplorerCapture *capture, guint layer);
/* The same check without a state: print the checkpoint's fingerprint (NULL: not checked), p the
 * module the capture is applied to (NULL: none, refused).  The Compare view's B side uses it. */
gboolean rpe_explorer_capture_check (RpeExplorerCapture  *capture,
                                     guint                layer,
                                     const RpeModelPrint *print,
                                     const RpeSpeParams  *p,
                                     GError             **error);
/* The same with a checkpoint's trained modules (rpe-explorer-trained.h; NULL: none): a capture of
 * their model's (H, D) is taken too, with or without an SPE module. */
gboolean rpe_explorer_capture_check_trained (RpeExplorerCapture       *capture,
                                             guint                     layer,
                                             const RpeModelPrint      *print,
                                             const RpeSpeParams       *p,
                                             const RpeExplorerTrained *trained,
                                             GError                  **error);
/* Makes layer `layer` of capture the content (content CAPTURE, capture-layer, length N of the
 * capture), in one "changed" (CONTENT | LENGTH); or, refused by the check above, changes
 * nothing.  capture NULL: forgets the capture (content back to unit if it was CAPTURE). */
gboolean  rpe_explorer_state_set_capture   (RpeExplorerState   *self,
                                            RpeExplorerCapture *capture,
                                            guint               layer,
                                            GError            **error);
/* Puts back a capture held before (undo, sessions): no check, no other property changes. */
void      rpe_explorer_state_restore_capture (RpeExplorerState   *self,
                                              RpeExplorerCapture *capture);
/* The fingerprint of the checkpoint the modules come from (rpe-capture.h; NULL: none, e.g. random
 * or edited parameters): a capture made on another model is then refused by the check above.
 * Takes a reference. */
void           rpe_explorer_state_set_model_print (RpeExplorerState *self, RpeModelPrint *print);
RpeModelPrint *rpe_explorer_state_get_model_print (RpeExplorerState *self);
/* The capture held (NULL: none; not a new reference). */
RpeExplorerCapture *rpe_explorer_state_get_capture (RpeExplorerState *self);

/* The loaded content (NULL if none); ndim 2 or 3 and its shape. */
const float *rpe_explorer_state_get_npy_content (RpeExplorerState *self,
                                                gsize            *ndim,
                                                gsize             shape[3]);
/* Forgets the loaded content ("content" NPY then draws unit content). */
void         rpe_explorer_state_clear_npy_content (RpeExplorerState *self);
/* Trained LRPE parameters (copied) and where they come from ("lrpe.pt module “enc.lrpe”"),
 * or NULL to drop them.  Setting them turns "lrpe-trained" on and sets "lrpe-p" and
 * "lrpe-lambda" as they imply (a v: Householder; a buffer: permutation; a theta alone: complex
 * when it holds D values of the current content, else rotation).  While "lrpe-trained" is
 * off the seeded choices are used and the parameters are kept, to be switched back on. */
void      rpe_explorer_state_set_lrpe_trained (RpeExplorerState     *self,
                                               const RpeLrpeTrained *trained,
                                               const char           *source);
/* The trained parameters held (NULL if none) and their source. */
const RpeLrpeTrained *rpe_explorer_state_get_lrpe_trained (RpeExplorerState  *self,
                                                           const char       **source);
/* A checkpoint's trained FastRPB biases and learned APE with the model's (H, D) (takes a
 * reference; NULL drops them).  Their (H, D) is the content's shape when there is no SPE module
 * (a capture of that shape can then be opened).  Turns "fastrpb-trained" on when it holds a
 * FastRPB module and "ape-trained" when it holds a learned embedding; editing the FastRPB taps
 * (rpe_explorer_state_set_fastrpb_weights) turns "fastrpb-trained" off. */
void rpe_explorer_state_set_trained (RpeExplorerState *self, RpeExplorerTrained *trained);
/* Puts back trained modules held before (undo, sessions) without changing the switches. */
void rpe_explorer_state_restore_trained (RpeExplorerState *self, RpeExplorerTrained *trained);
/* The held set (NULL if none; not a new reference). */
RpeExplorerTrained *rpe_explorer_state_get_trained (RpeExplorerState *self);

guint64              rpe_explorer_state_get_serial (RpeExplorerState *self);
RpeExplorerSnapshot *rpe_explorer_state_snapshot   (RpeExplorerState *self);

/* A deep copy of snapshot (its own parameters and content) that the caller may change
 * before sharing it; with params != NULL, these parameters replace the snapshot's (head
 * and feature clamped to their H and D; gated when the snapshot was or had no gate). */
RpeExplorerSnapshot *rpe_explorer_snapshot_copy (const RpeExplorerSnapshot *snapshot,
                                                 const RpeSpeParams        *params);

/* Convenience getters of properties. */
gsize     rpe_explorer_state_get_length   (RpeExplorerState *self);
gsize     rpe_explorer_state_get_r        (RpeExplorerState *self);
gsize     rpe_explorer_state_get_head     (RpeExplorerState *self);
gsize     rpe_explorer_state_get_feature  (RpeExplorerState *self);
RpeSpeMethod      rpe_explorer_state_get_spe_kind (RpeExplorerState *self);
RpeExplorerMethod rpe_explorer_state_get_method   (RpeExplorerState *self);
const char *rpe_explorer_state_get_colormap (RpeExplorerState *self);
/* The heatmaps' colour scale: the transform, its parameter (gamma of POWER, p of PERCENTILE,
 * else 0) and whether a view's panels share one range. */
void      rpe_explorer_state_get_color_scale   (RpeExplorerState    *self,
                                                RpeHeatmapTransform *transform,
                                                double              *param,
                                                gboolean            *shared);
/* Sets data's transform and transform_param from the state; the SPE paper's transform only
 * when attention (it maps attention weights), else linear. */
void      rpe_explorer_state_apply_color_scale (RpeExplorerState    *self,
                                                RpeHeatmapData      *data,
                                                gboolean             attention);

G_END_DECLS

/* rpe-compute.h: the UI's long computations, run off the main loop.
 *
 * Every *_async copies its input into a GTask and runs on a worker thread; the
 * GCancellable is linked to the core's atomic cancel flag; the result (or a
 * GError in the RPE_ERROR domain, G_IO_ERROR_CANCELLED once cancelled) comes
 * back through the callback on the caller's thread-default main context.
 * Progress callbacks arrive on that context too, at most 20 times a second,
 * and never after the cancellable was cancelled or the operation completed.
 */
#pragma once

#include <gio/gio.h>

#include "rpe-checkpoint.h"
#include "rpe-curves.h"
#include "rpe-explorer-state.h"
#include "rpe-export.h"
#include "rpe-gif.h"
#include "rpe-job.h"
#include "rpe-plot-render.h"
#include "rpe-spe.h"

G_BEGIN_DECLS

/* Analytic templates of one head: values[(d * n + m) * n + k] = Ptilde_{h,d}(m, k),
 * (D, N, N) floats, row m = query position, column k = key position. */
typedef struct
{
  RpeSpeMethod  method;
  gsize         head;
  gsize         n_features;  /* D */
  gsize         n;           /* N */
  gsize         size;        /* K (sine) or L (conv) of the parameters */
  gboolean      gated;       /* the gate was applied */
  float        *values;      /* rpe_alloc'd */
  double        vmin;        /* over all finite values */
  double        vmax;
  /* Filled by rpe_compute_template_grid_async (zero otherwise; profiles always): */
  guint64         serial;    /* the state serial computed from */
  gsize           n_asked;   /* the state's N (n < n_asked: capped) */
  RpeTemplateKind kind;      /* what values holds */
  gsize           r;         /* R of the draw (empirical, difference) */
  float          *profiles;  /* (D, 2N - 1) analytic lag profiles, i <-> tau = i - (N-1) */
  double          error;     /* empirical, difference: |Phat - Ptilde|_F / |Ptilde|_F over the head */
} RpeTemplates;

#define RPE_TYPE_TEMPLATES (rpe_templates_get_type ())
GType         rpe_templates_get_type (void) G_GNUC_CONST;
RpeTemplates *rpe_templates_ref (RpeTemplates *templates);
void          rpe_templates_unref (RpeTemplates *templates);
/* The (N, N) template of feature d, or NULL if d >= D. */
const float  *rpe_templates_get_feature (const RpeTemplates *templates,
                                         gsize               d);
/* The same as GBytes (N*N floats) holding a reference on templates. */
GBytes       *rpe_templates_dup_feature_bytes (RpeTemplates *templates,
                                               gsize         d);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RpeTemplates, rpe_templates_unref)

/* The templates of all D features of `head` at length n (gated: (1-g)P + g when
 * the parameters have a gate).  params is copied (rpe_spe_params_copy). */
void          rpe_compute_templates_async      (const RpeSpeParams     *params,
                                                gsize                   head,
                                                gsize                   n,
                                                gboolean                gated,
                                                GCancellable           *cancellable,
                                                GAsyncReadyCallback     callback,
                                                gpointer                user_data);
/* As above with a progress callback; progress_data must stay valid until the
 * operation completes or `cancellable` is cancelled. */
void          rpe_compute_templates_async_full (const RpeSpeParams     *params,
                                                gsize                   head,
                                                gsize                   n,
                                                gboolean                gated,
                                                RpeComputeProgressFunc  progress,
                                                gpointer                progress_data,
                                                GCancellable           *cancellable,
                                                GAsyncReadyCallback     callback,
                                                gpointer                user_data);
/* Also for rpe_compute_template_grid_async. */
RpeTemplates *rpe_compute_templates_finish     (GAsyncResult           *result,
                                                GError                **error);

/* The templates grid of the snapshot's head: kind analytic / empirical (one draw
 * of R codes with the snapshot's seed, docs/math.md, section 4) / difference, at
 * length min (N, n_cap), plus the analytic lag profiles. */
void          rpe_compute_template_grid_async  (RpeExplorerSnapshot    *snapshot,
                                                gsize                   n_cap,
                                                RpeComputeProgressFunc  progress,
                                                gpointer                progress_data,
                                                GCancellable           *cancellable,
                                                GAsyncReadyCallback     callback,
                                                gpointer                user_data);

/* ---- Attention maps, streamed and reduced to pixels ---- */

/* A (rows, cols) image of the window [m0, m1) x [n0, n1) of one head's N x N map:
 * pixel (i, j) covers rows m0 + i (m1 - m0) / rows .. and columns likewise; it
 * holds the mean (or max) of the entries it covers.  When the window is not
 * larger than the image, rows = m1 - m0 and cols = n1 - n0 (one cell, one pixel). */
typedef struct
{
  guint64            serial;
  RpeExplorerMethod  method;
  gboolean           causal;
  gsize              n;          /* N */
  gsize              head;
  gsize              m0, m1, n0, n1;
  gsize              rows, cols;
  RpeHeatmapReduce   reduce;
  float             *values;     /* rows x cols, rpe_alloc'd */
  double             vmin, vmax; /* over the finite values */
  double             seconds;    /* worker time */
} RpeAttentionImage;

GType              rpe_attention_image_get_type (void) G_GNUC_CONST;
RpeAttentionImage *rpe_attention_image_ref   (RpeAttentionImage *image);
void               rpe_attention_image_unref (RpeAttentionImage *image);
GBytes            *rpe_attention_image_dup_bytes (RpeAttentionImage *image);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RpeAttentionImage, rpe_attention_image_unref)

typedef struct
{
  gsize            m0, m1;       /* rows shown, 0 <= m0 < m1 <= N (m1 = 0: N) */
  gsize            n0, n1;       /* columns shown (n1 = 0: N) */
  gsize            max_rows;     /* image size limit (pixels) */
  gsize            max_cols;
  RpeHeatmapReduce reduce;       /* MEAN or MAX */
} RpeAttentionRequest;

/* Rows of the attention map of the snapshot's method and head (docs/math.md, sections 4-9),
 * computed in blocks of rows (memory O(block x N), never N x N when N exceeds
 * the image), reduced to the image in the worker. */
void               rpe_compute_attention_async  (RpeExplorerSnapshot       *snapshot,
                                                 const RpeAttentionRequest *request,
                                                 RpeComputeProgressFunc     progress,
                                                 gpointer                   progress_data,
                                                 GCancellable              *cancellable,
                                                 GAsyncReadyCallback        callback,
                                                 gpointer                   user_data);
RpeAttentionImage *rpe_compute_attention_finish (GAsyncResult              *result,
                                                 GError                   **error);

/* The value of one cell (m, n) of the same map (computes row m). */
/* Rows m0 .. m0 + n_rows - 1 (columns 0 .. n_cols - 1) of one head's exact logits
 * l(m, n) = sum_d q[m,d] k[n,d] lags[d, m - n + N - 1] / sqrt(D) (docs/math.md, section 4):
 * q, k (N, D), lags (D, 2N - 1) the head's template profiles; causal masks n > m with -inf.
 * The logits function of rpe_attention_rows_func for the window's and rpe export's maps. */
RpeStatus rpe_compute_exact_logits_rows (const float *q,
                                         const float *k,
                                         const float *lags,
                                         gsize        n,
                                         gsize        D,
                                         gboolean     causal,
                                         gsize        m0,
                                         gsize        n_rows,
                                         gsize        n_cols,
                                         float       *out);

RpeStatus          rpe_compute_attention_cell   (const RpeExplorerSnapshot *snapshot,
                                                 gsize                      m,
                                                 gsize                      n,
                                                 double                    *value);

/* ---- The teaching view: exact attention vs its SPE estimate ---- */

typedef struct
{
  guint64  serial;
  gsize    n;              /* min (N, n_cap) */
  gsize    n_asked;        /* the snapshot's N (n < n_asked: capped) */
  gsize    r;
  gsize    head;
  float   *exact;          /* (N, N) softmax of the exact logits */
  float   *estimate;       /* (N, N) softmax of the SPE logits */
  float   *difference;     /* estimate - exact */
  double   error;          /* |estimate - exact|_F / |exact|_F */
  /* Template error against R (rpe_curve_error_vs_r, the head's D features,
   * n_seeds draws): n_curve points, or 0 when not requested. */
  gsize    n_curve;
  double  *curve_r;
  double  *curve_mean;
  double  *curve_sd;
  double   slope;          /* log-log slope of the mean (about -1/2) */
} RpeTeaching;

GType        rpe_teaching_get_type (void) G_GNUC_CONST;
RpeTeaching *rpe_teaching_ref   (RpeTeaching *teaching);
void         rpe_teaching_unref (RpeTeaching *teaching);
/* One of the three maps as GBytes holding a reference (which: 0 exact, 1 estimate, 2 difference). */
GBytes      *rpe_teaching_dup_bytes (RpeTeaching *teaching,
                                     guint        which);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RpeTeaching, rpe_teaching_unref)

void         rpe_compute_teaching_async  (RpeExplorerSnapshot    *snapshot,
                                          gsize                   n_cap,
                                          gboolean                with_curve,
                                          RpeComputeProgressFunc  progress,
                                          gpointer                progress_data,
                                          GCancellable           *cancellable,
                                          GAsyncReadyCallback     callback,
                                          gpointer                user_data);
RpeTeaching *rpe_compute_teaching_finish (GAsyncResult           *result,
                                          GError                **error);

/* ---- Sweeps (the Export dialog's animated GIFs), on the calling (worker) thread ---- */

/* A copy of snapshot with one parameter set to value (R and N clamped to the explorer's
 * ranges 1 .. RPE_EXPLORER_MAX_R and 2 .. RPE_EXPLORER_MAX_LENGTH). */
RpeExplorerSnapshot *rpe_explorer_snapshot_with_sweep (const RpeExplorerSnapshot *snapshot,
                                                       RpeSweepParam              param,
                                                       gint64                     value);
/* The template grid / the teaching maps (without the error curve) of the snapshot, computed
 * synchronously by the same code as rpe_compute_template_grid_async /
 * rpe_compute_teaching_async; cancelled: G_IO_ERROR_CANCELLED. */
RpeTemplates *rpe_compute_template_grid  (RpeExplorerSnapshot    *snapshot,
                                          gsize                   n_cap,
                                          GCancellable           *cancellable,
                                          GError                **error);
RpeTeaching  *rpe_compute_teaching       (RpeExplorerSnapshot    *snapshot,
                                          gsize                   n_cap,
                                          GCancellable           *cancellable,
                                          GError                **error);
/* The attention map of the request, synchronously by the code of rpe_compute_attention_async. */
RpeAttentionImage *rpe_compute_attention (RpeExplorerSnapshot       *snapshot,
                                          const RpeAttentionRequest *request,
                                          GCancellable              *cancellable,
                                          GError                   **error);

/* The figure of an attention image as the Attention view draws it (shared by the
 * window and `rpe export attention`): fig becomes an RPE_FIGURE_HEATMAP pointing
 * at img->values, coloured by transform (and its param: the state's colour scale; the SPE
 * paper's transform only where the values are attention weights); the labels and title it
 * points at are returned in strings[0..2]
 * (the caller frees them after drawing).  *has_attention: the values are
 * attention weights (the attention transform applies).  With captured content the figure points
 * at the capture's tokens too: s must outlive it. */
void               rpe_attention_figure_fill (RpeFigure                 *fig,
                                              const RpeAttentionImage   *img,
                                              const RpeExplorerSnapshot *snapshot,
                                              const RpeColormap         *cmap,
                                              guint                      train,
                                              RpeHeatmapTransform        transform,
                                              double                     param,
                                              char                      *strings[3],
                                              gboolean                  *has_attention);

/* ---- Curves: profiles, estimator error, extrapolation ---- */

typedef struct
{
  guint64        serial;
  RpeCurveTable *profile;        /* "tau", "spe_d", "spe_mean", "lrpe", "fastrpb" */
  RpeCurveTable *error;          /* "R", "mean", "sd" */
  RpeCurveTable *extrapolation;  /* rpe_curve_extrapolation_table: "m", "<model>_distance", ... */
  gsize          n_train;
  gsize          n;              /* N of the profiles: min (N, n_cap) */
  gsize          n_asked;        /* the snapshot's N */
} RpeCurves;

/* The curves synchronously, by the code of rpe_compute_curves_async. */
RpeCurves *rpe_compute_curves (RpeExplorerSnapshot  *snapshot,
                               gsize                 n_cap,
                               GCancellable         *cancellable,
                               GError              **error);

/* The Curves page's four plots of c (profiles, estimator error, extrapolation:
 * distance and TI), as the window and `rpe export curves` draw them: plots[p]
 * uses series[p * RPE_CURVES_MAX_SERIES ..]; ntrain labels the N_train marker
 * (strings are static or ntrain; the series point into c's tables). */
#define RPE_CURVES_MAX_SERIES 8
void       rpe_curves_fill_plots (RpeCurves      *c,
                                  RpeCurvePlot    plots[4],
                                  RpeCurveSeries *series,
                                  const char     *ntrain);
/* The Curves page's figure of c (head: the state's, for the title): fig points
 * at plots, series (4 * RPE_CURVES_MAX_SERIES) and strings[0..1], which the
 * caller frees after drawing. */
void       rpe_curves_figure_fill (RpeFigure      *fig,
                                   RpeCurves      *c,
                                   guint           head,
                                   RpeCurvePlot    plots[4],
                                   RpeCurveSeries *series,
                                   char           *strings[2]);

GType      rpe_curves_get_type (void) G_GNUC_CONST;
RpeCurves *rpe_curves_ref   (RpeCurves *curves);
void       rpe_curves_unref (RpeCurves *curves);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RpeCurves, rpe_curves_unref)

/* The profiles at length min (N, n_cap) (the error curve at min (N, 96), the extrapolation
 * up to 512 positions). */
#define RPE_COMPUTE_CURVES_N_CAP 1024
void       rpe_compute_curves_async  (RpeExplorerSnapshot    *snapshot,
                                      gsize                   n_cap,
                                      RpeComputeProgressFunc  progress,
                                      gpointer                progress_data,
                                      GCancellable           *cancellable,
                                      GAsyncReadyCallback     callback,
                                      gpointer                user_data);
RpeCurves *rpe_compute_curves_finish (GAsyncResult           *result,
                                      GError                **error);

/* ---- 2-D convSPE over an image grid (docs/math.md, section 2, rpe-conv-spe-2d.h) ---- */

typedef struct
{
  guint64  serial;
  gsize    n1, n2;         /* the grid; positions p = i N2 + j */
  gsize    head, feature;
  gsize    query;          /* the query position p */
  gboolean gated;
  float   *lags;           /* (2 N1 - 1) x (2 N2 - 1): Ptilde of (head, feature) at lag (di, dj),
                            * index (di + N1 - 1, dj + N2 - 1), as rpe_conv_spe_2d_template_lags */
  float   *attention;      /* N1 x N2: the query's exact attention over the grid, softmax over p' of
                            * sum_d q[p, d] k[p', d] Ptilde_d(p - p') / sqrt(D) (docs/math.md, section 4) with the
                            * snapshot's content */
} RpeGridImage;

GType         rpe_grid_image_get_type (void) G_GNUC_CONST;
RpeGridImage *rpe_grid_image_ref      (RpeGridImage *image);
void          rpe_grid_image_unref    (RpeGridImage *image);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RpeGridImage, rpe_grid_image_unref)

/* RPE_ERROR_NOT_FOUND when the snapshot has no 2-D module. */
void          rpe_compute_grid_async  (RpeExplorerSnapshot *snapshot,
                                       GCancellable        *cancellable,
                                       GAsyncReadyCallback  callback,
                                       gpointer             user_data);
RpeGridImage *rpe_compute_grid_finish (GAsyncResult        *result,
                                       GError             **error);

/* ---- Caps: a view computes at min (N, cap); "Compute at full N" asks for N ---- */

typedef enum
{
  RPE_COMPUTE_JOB_TEACHING,
  RPE_COMPUTE_JOB_TEMPLATE_GRID,
  RPE_COMPUTE_JOB_CURVES,
} RpeComputeJobKind;

/* About the bytes a job of that kind holds at length n (its buffers and the figures the
 * view colours from them); G_MAXUINT64 when it cannot be counted. */
guint64    rpe_compute_job_bytes    (RpeComputeJobKind          kind,
                                     const RpeExplorerSnapshot *snapshot,
                                     gsize                      n);
/* TRUE if that fits in the memory budget (rpe_budget_check), else FALSE and an
 * RPE_ERROR_NO_MEMORY error naming both sizes. */
gboolean   rpe_compute_check_budget (RpeComputeJobKind          kind,
                                     const RpeExplorerSnapshot *snapshot,
                                     gsize                      n,
                                     GError                   **error);

/* ---- Opening a checkpoint ---- */

typedef struct
{
  char         *path;
  RpeTensorSet *set;
  GPtrArray    *modules;          /* RpeSpeModuleInfo* */
  RpeSpeParams  sine;             /* the first sine module found (have_sine) */
  RpeSpeParams  conv;
  gboolean      have_sine;
  gboolean      have_conv;
  char         *sine_prefix;
  char         *conv_prefix;
  RpeSpeParams  conv2d;           /* the first 2-D conv module (have_conv2d), apart from conv */
  gboolean      have_conv2d;
  char         *conv2d_prefix;
  GPtrArray    *lrpe_modules;     /* RpeLrpeModuleInfo* (rpe-checkpoint-lrpe.h), into set */
  GPtrArray    *fastrpb_modules;  /* RpeFastrpbModuleInfo*, into set */
  RpeModelPrint *print;            /* the fingerprint of every tensor (rpe-capture.h) */
} RpeCheckpointData;

GType              rpe_checkpoint_data_get_type (void) G_GNUC_CONST;
RpeCheckpointData *rpe_checkpoint_data_ref   (RpeCheckpointData *data);
void               rpe_checkpoint_data_unref (RpeCheckpointData *data);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RpeCheckpointData, rpe_checkpoint_data_unref)

/* Reads the file and recognises its SPE, LRPE and FastRPB modules; an error
 * (RPE_ERROR_FORMAT, RPE_ERROR_NOT_FOUND "no tensor", ...) names the reason.  A
 * file with LRPE or FastRPB modules and no SPE module, or with no module recognised
 * (for the tensor browser's roles), opens with have_sine and have_conv FALSE. */
void               rpe_compute_open_checkpoint_async  (const char          *path,
                                                       GCancellable        *cancellable,
                                                       GAsyncReadyCallback  callback,
                                                       gpointer             user_data);
RpeCheckpointData *rpe_compute_open_checkpoint_finish (GAsyncResult        *result,
                                                       GError             **error);
/* The same on the calling thread (the embedded demos, read at once). */
RpeCheckpointData *rpe_compute_open_checkpoint        (const char          *path,
                                                       GError             **error);

/* ---- One job per view ----
 *
 * A view owns one RpeJobSlot.  rpe_job_slot_request () asks for a new
 * computation: if none runs, start () is called at once with a fresh
 * cancellable; if one runs, it is cancelled and the request is remembered, and
 * start () runs when the cancelled job's callback calls rpe_job_slot_done ()
 * (so at most one job per view runs, and a burst of changes coalesces into one
 * new job).  The callback passes its GTask; rpe_job_slot_done () returns TRUE
 * if the result is current (to be shown), FALSE if it is stale. */
typedef void (*RpeJobStartFunc) (gpointer      owner,
                                 GCancellable *cancellable);

typedef struct
{
  GCancellable    *running;
  gboolean         pending;
  RpeJobStartFunc  start;
  gpointer         owner;
} RpeJobSlot;

void     rpe_job_slot_init    (RpeJobSlot      *slot,
                               RpeJobStartFunc  start,
                               gpointer         owner);
void     rpe_job_slot_request (RpeJobSlot      *slot);
/* Cancels the running job and forgets a pending request. */
void     rpe_job_slot_cancel  (RpeJobSlot      *slot);
gboolean rpe_job_slot_done    (RpeJobSlot      *slot,
                               GAsyncResult    *result);
gboolean rpe_job_slot_busy    (const RpeJobSlot *slot);
void     rpe_job_slot_clear   (RpeJobSlot      *slot);

/* rpe_compute_jobs_alive () (rpe-job.h) counts every job of this file, rpe-fit-job.c and
 * rpe-outputs-job.c: tests wait for it to reach 0 instead of sleeping. */

/* What parameters a window-drawn method uses, for titles and captions ("learned embedding",
 * "seeded parameters", "trained bias, layer 1", with ", on capture" when it
 * draws the trained model's own map of a capture); "" for the SPE methods.  g_free it. */
char *rpe_compute_method_parameters (const RpeExplorerSnapshot *snapshot, RpeExplorerMethod method);

G_END_DECLS

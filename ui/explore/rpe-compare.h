/* rpe-compare.h: two states side by side (Compare) and every head and layer at a glance
 * (Overview), computed on workers.
 *
 * A side of a comparison is a snapshot of the explorer's state plus what differs from it: another
 * checkpoint file, layer, head or attention method.  The worker loads the parameters it needs
 * (rpe_checkpoint_load_spe, on the worker), then computes the one map each side shows with the
 * view's own code (rpe_compute_template_grid: the template of the snapshot's feature d;
 * rpe_compute_attention: the attention image), so that A and B are exactly what the Templates and
 * Attention views (and `rpe export template | attention`) show for those parameters.
 *
 * The comparison holds A, B and A - B; A and B share one range, A - B has a symmetric one.  The
 * overview holds the map of every (layer, head) of the snapshot's module; each cell is announced
 * on the caller's main context as soon as it is computed.
 */
#pragma once

#include <gio/gio.h>

#include "rpe-compute.h"
#include "rpe-explorer-state.h"

G_BEGIN_DECLS

/* RpeExplorerState:compare-mode */
typedef enum
{
  RPE_COMPARE_OFF,
  RPE_COMPARE_PINNED,       /* A: the pinned state (before an edit), B: the current state */
  RPE_COMPARE_HEAD,         /* A: the current head, B: compare-b-head */
  RPE_COMPARE_LAYER,        /* A: layer compare-a-layer, B: compare-b-layer of the checkpoint */
  RPE_COMPARE_METHOD,       /* A: the current method, B: compare-b-method (attention) or the other
                             * SPE module, sine <-> conv (templates) */
  RPE_COMPARE_CHECKPOINT,   /* A: the current state, B: the same module of compare-b-checkpoint
                             * (on compare-b-capture when one is chosen) */
  RPE_COMPARE_CAPTURE,      /* A: the current state, B: the same module on layer compare-b-layer of
                             * compare-b-capture ("": the current capture) */
  RPE_COMPARE_N_MODES,
} RpeCompareMode;

/* RpeExplorerState:compare-what */
typedef enum
{
  RPE_COMPARE_TEMPLATES,    /* the template P_{h,d} of the state's feature d (kind: template-kind) */
  RPE_COMPARE_ATTENTION,    /* the attention map of the state's method */
} RpeCompareWhat;

const char *rpe_compare_mode_name (RpeCompareMode mode);

/* One side: the snapshot and what changes.  Strings and the snapshot are owned by the side. */
typedef struct
{
  RpeExplorerSnapshot *snapshot;
  char                *checkpoint;   /* NULL: the snapshot's parameters; else the module of the
                                      * snapshot's SPE kind read from this file ("demo", "demo:NAME"
                                      * are the embedded ones) */
  int                  layer;        /* with checkpoint: the layer (-1: the first) */
  int                  spe_kind;     /* with checkpoint: -1 the snapshot's, else an RpeSpeMethod */
  gssize               head;         /* >= 0: this head instead of the snapshot's */
  gssize               method;       /* >= 0: this RpeExplorerMethod instead of the snapshot's */
  char                *label;        /* NULL, or a word put before the caption ("pinned") */
  gboolean             no_gate;      /* with checkpoint: load no gate (`--no-gate`) */
  RpeExplorerCapture  *capture;      /* NULL: the snapshot's content; else a layer of this capture
                                      * (checked as the state checks its own, then drawn) */
  int                  capture_layer; /* with capture: the layer (-1: `layer` where the capture has
                                      * it, else the capture's first) */
  RpeModelPrint       *model_print;   /* with capture and no checkpoint: the fingerprint of the
                                      * snapshot's model it is checked against (NULL: none) */
} RpeCompareSide;

void rpe_compare_side_init  (RpeCompareSide            *side,
                             const RpeExplorerSnapshot *snapshot);
void rpe_compare_side_clear (RpeCompareSide            *side);
void rpe_compare_side_copy  (RpeCompareSide            *dest,
                             const RpeCompareSide      *src);

/* The map of one side, synchronously (any thread).  n_cap bounds N for templates; max_side the
 * attention image (0: the full N x N map).  *values (rows x cols, rpe_alloc'd), *n the positions,
 * *caption what the side shows ("head 1, layer 0, sine SPE, gated, SPE estimate, R = 64"). */
gboolean rpe_compare_side_compute (const RpeCompareSide *side,
                                   RpeCompareWhat        what,
                                   gsize                 n_cap,
                                   gsize                 max_side,
                                   GCancellable         *cancellable,
                                   float               **values,
                                   gsize                *rows,
                                   gsize                *cols,
                                   gsize                *n,
                                   char                **caption,
                                   GError              **error);

typedef struct
{
  RpeCompareWhat  what;
  guint64         serial;        /* the caller's tag (the state serial it was asked for) */
  gsize           n;             /* positions */
  gsize           rows, cols;
  float          *values[3];     /* A, B, A - B (rows x cols each, rpe_alloc'd) */
  double          vmin, vmax;    /* the shared range of A and B (finite values) */
  double          dmax;          /* max |A - B| */
  char           *caption[2];    /* what A and B show */
} RpeComparison;

GType          rpe_comparison_get_type (void) G_GNUC_CONST;
RpeComparison *rpe_comparison_ref      (RpeComparison *comparison);
void           rpe_comparison_unref    (RpeComparison *comparison);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RpeComparison, rpe_comparison_unref)

/* Both sides and their difference, synchronously; fails if their shapes differ. */
RpeComparison *rpe_compare_compute        (const RpeCompareSide   *a,
                                           const RpeCompareSide   *b,
                                           RpeCompareWhat          what,
                                           gsize                   n_cap,
                                           gsize                   max_side,
                                           GCancellable           *cancellable,
                                           GError                **error);
/* The same on a worker (the sides are copied); progress 0.5 once A is done. */
void           rpe_compare_compute_async  (const RpeCompareSide   *a,
                                           const RpeCompareSide   *b,
                                           RpeCompareWhat          what,
                                           gsize                   n_cap,
                                           gsize                   max_side,
                                           guint64                 serial,
                                           RpeComputeProgressFunc  progress,
                                           gpointer                progress_data,
                                           GCancellable           *cancellable,
                                           GAsyncReadyCallback     callback,
                                           gpointer                user_data);
RpeComparison *rpe_compare_compute_finish (GAsyncResult           *result,
                                           GError                **error);

/* ---- Overview: every (layer, head) ---- */

typedef struct
{
  RpeCompareWhat  what;
  guint64         serial;
  gsize           n_layers;      /* 1 when the module has no layers */
  gsize           n_heads;
  int            *layers;        /* n_layers layer numbers (-1: the module's only one) */
  gsize           n;
  gsize           rows, cols;    /* of each cell (0 until the first cell is done) */
  float          *values;        /* (n_layers * n_heads, rows, cols), cell (l, h) at l * H + h */
  gboolean       *done;          /* n_layers * n_heads: the cell is computed (main thread only) */
  gsize           n_done;
  double          vmin, vmax;    /* over the cells done */
  char           *caption;       /* the module and what the cells show */
} RpeOverview;

GType        rpe_overview_get_type (void) G_GNUC_CONST;
RpeOverview *rpe_overview_ref   (RpeOverview *overview);
void         rpe_overview_unref (RpeOverview *overview);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RpeOverview, rpe_overview_unref)

/* Called on the caller's main context when cell index (= l * H + h) is done; the overview (not a
 * new reference) already has it.  Not called after cancellation. */
typedef void (*RpeOverviewCellFunc) (RpeOverview *overview,
                                     gsize        index,
                                     gpointer     user_data);

/* Every cell synchronously (cell may be NULL; it is called on this thread). */
RpeOverview *rpe_overview_compute        (const RpeCompareSide   *base,
                                          RpeCompareWhat          what,
                                          gsize                   n_cap,
                                          gsize                   max_side,
                                          GCancellable           *cancellable,
                                          GError                **error);
/* On a worker; cell_func (may be NULL) must stay valid until the callback runs. */
void         rpe_overview_compute_async  (const RpeCompareSide   *base,
                                          RpeCompareWhat          what,
                                          gsize                   n_cap,
                                          gsize                   max_side,
                                          guint64                 serial,
                                          RpeOverviewCellFunc     cell_func,
                                          gpointer                cell_data,
                                          GCancellable           *cancellable,
                                          GAsyncReadyCallback     callback,
                                          gpointer                user_data);
RpeOverview *rpe_overview_compute_finish (GAsyncResult           *result,
                                          GError                **error);

/* Reads "demo", "demo:NAME" or a file (on the calling thread). */
RpeTensorSet *rpe_compare_read_checkpoint (const char  *path,
                                           GError     **error);

G_END_DECLS

/* rpe-outputs-job.h: the Outputs view's computation on a worker (no GTK).
 *
 * From an explorer snapshot (parameters, head, N, R, seed, gate, causal, feature map,
 * content, N_train) and the view's own choices (the values V, the comparison, the number
 * of draws): rpe_outputs_compute (core/rpe-outputs.h) on a GTask thread, with progress
 * (at most 20 Hz, on the caller's main context, never after cancellation or completion)
 * and cancellation through the GCancellable, like the jobs of rpe-compute.h.
 */
#pragma once

#include <gio/gio.h>

#include "rpe-explorer-state.h"
#include "rpe-outputs.h"
#include "rpe-compute.h"

G_BEGIN_DECLS

#define RPE_OUTPUTS_MAX_POSITIONS 64
#define RPE_OUTPUTS_SEVERAL_DRAWS 16   /* draws when "several draws" is on */

typedef struct
{
  RpeValuesKind      kind;
  gsize              dv;           /* channels of generated values (1 .. RPE_OUTPUTS_MAX_CHANNELS) */
  gsize              positions[RPE_OUTPUTS_MAX_POSITIONS];   /* IMPULSE (each < N, else an error) */
  gsize              n_positions;  /* 0: evenly spread */
  const char        *npy_path;     /* ARRAY: a .npy of shape (N', Dv) or (N', H, Dv), read on the worker */
  RpeOutputsCompare  compare;
  gsize              n_draws;      /* >= 1 */
  gboolean           captured;     /* the snapshot's captured values (its content is a capture layer
                                    * with `values`: layer capture_layer, the head's), instead of
                                    * `kind`; an error when the snapshot has none */
} RpeOutputsRequest;

/* A result (atomically refcounted, immutable). */
typedef struct
{
  guint64        serial;     /* the snapshot's */
  RpeOutputs     outputs;
  RpeSpeMethod   method;
  RpeFeatureMap  feature_map;
  double         seconds;    /* worker time */
} RpeOutputsResult;

GType             rpe_outputs_result_get_type (void) G_GNUC_CONST;
RpeOutputsResult *rpe_outputs_result_ref   (RpeOutputsResult *result);
void              rpe_outputs_result_unref (RpeOutputsResult *result);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RpeOutputsResult, rpe_outputs_result_unref)

const char       *rpe_feature_map_name (RpeFeatureMap map);   /* "relu", "elu1", ... */

/* The computation itself, synchronously (what the worker runs).  *error names the reason. */
RpeOutputsResult *rpe_outputs_run (const RpeExplorerSnapshot *snapshot,
                                   const RpeOutputsRequest   *request,
                                   const RpeMonitor          *monitor,
                                   GError                   **error);

/* request is copied (npy_path too). */
void              rpe_compute_outputs_async  (RpeExplorerSnapshot     *snapshot,
                                              const RpeOutputsRequest *request,
                                              RpeComputeProgressFunc   progress,
                                              gpointer                 progress_data,
                                              GCancellable            *cancellable,
                                              GAsyncReadyCallback      callback,
                                              gpointer                 user_data);
RpeOutputsResult *rpe_compute_outputs_finish (GAsyncResult            *result,
                                              GError                 **error);

G_END_DECLS

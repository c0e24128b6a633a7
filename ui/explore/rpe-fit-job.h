/* rpe-fit-job.h: fitting SPE to another relative bias on a worker (issue 16; no GTK).
 *
 * rpe_fit_spe (core/rpe-fit.h, the engine of `rpe fit`) on a GTask thread, with the core's
 * cancel flag linked to the GCancellable and progress at most 20 times a second on the
 * caller's main context (never after cancellation or completion), like the jobs of
 * rpe-compute.h; the job counts itself in rpe_compute_jobs_alive ().
 */
#pragma once

#include <gio/gio.h>

#include "rpe-compute.h"
#include "rpe-fit.h"

G_BEGIN_DECLS

/* The largest sizes the window fits (the LM is dense). */
#define RPE_FIT_JOB_MAX_LENGTH 4096
#define RPE_FIT_JOB_MAX_HEADS  64
#define RPE_FIT_JOB_MAX_FEAT   256
#define RPE_FIT_JOB_MAX_SIZE   1024

/* A result (atomically refcounted, immutable). */
typedef struct
{
  guint64       serial;      /* the caller's request serial */
  RpeFitConfig  config;
  gsize         n;           /* N */
  RpeSpeParams  params;      /* the fitted module (effective values) */
  double       *target;      /* (H, 2N-1), index i <-> tau = i - (N-1) */
  double       *fit;         /* (H, 2N-1): rpe_fit_profile of params */
  double        error;       /* rpe_fit_relative_error (target, fit) */
  float        *attention;   /* (H, N, N): row m = softmax_k fit_h(m - k) (unit content) */
  double        seconds;     /* worker time */
} RpeFitResult;

GType         rpe_fit_result_get_type (void) G_GNUC_CONST;
RpeFitResult *rpe_fit_result_ref   (RpeFitResult *result);
void          rpe_fit_result_unref (RpeFitResult *result);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RpeFitResult, rpe_fit_result_unref)

/* Synchronously (what the worker runs): target is (H, 2N-1). */
RpeFitResult *rpe_fit_run (const RpeFitConfig *config,
                           gsize               n,
                           const double       *target,
                           const RpeMonitor   *monitor,
                           GError            **error);

/* config and target (H, 2N-1) are copied. */
void          rpe_compute_fit_async  (const RpeFitConfig     *config,
                                      gsize                   n,
                                      const double           *target,
                                      guint64                 serial,
                                      RpeComputeProgressFunc  progress,
                                      gpointer                progress_data,
                                      GCancellable           *cancellable,
                                      GAsyncReadyCallback     callback,
                                      gpointer                user_data);
RpeFitResult *rpe_compute_fit_finish (GAsyncResult           *result,
                                      GError                **error);

G_END_DECLS

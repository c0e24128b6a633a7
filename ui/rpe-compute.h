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

typedef void (*RpeComputeProgressFunc) (double   fraction,
                                        gpointer user_data);

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
RpeTemplates *rpe_compute_templates_finish     (GAsyncResult           *result,
                                                GError                **error);

G_END_DECLS

/* rpe-explorer-trained.h: a checkpoint's trained FastRPB biases and learned absolute embedding,
 * as the explorer draws them.
 *
 * An RpeExplorerTrained is immutable and atomically refcounted, so that the state, its
 * snapshots (read by workers), undo steps and sessions share one.  It carries the model's
 * (H, D), the shape of the queries and keys its modules act on (checkpoints without an SPE
 * module take their content shape from here). */
#pragma once

#include <glib.h>

#include "rpe-tensor.h"

G_BEGIN_DECLS

/* The most FastRPB modules (layers) and taps one held set may have. */
#define RPE_EXPLORER_TRAINED_MAX_LAYERS 1024
#define RPE_EXPLORER_TRAINED_MAX_TAPS (1 << 20)

typedef struct
{
  guint  layer;  /* the model layer it belongs to (RPE_EXPLORER_TRAINED_NO_LAYER: not known) */
  char  *prefix; /* the module's name in the checkpoint */
  gsize  taps;   /* M: w_tau is stored for |tau| < M, zero beyond */
  float *w;      /* (H, 2M - 1), index i <-> tau = i - (M - 1) */
} RpeExplorerFastrpbLayer;

#define RPE_EXPLORER_TRAINED_NO_LAYER G_MAXUINT

typedef struct
{
  gsize                    heads; /* H */
  gsize                    dim;   /* D */
  guint                    n_fastrpb;
  RpeExplorerFastrpbLayer *fastrpb;       /* n_fastrpb modules, in the checkpoint's order */
  gsize                    ape_positions; /* P (0: no learned embedding) */
  float                   *ape;           /* (P, H * D), added to q and k at positions < P */
  char                    *source;        /* where they come from, for captions */
} RpeExplorerTrained;

/* An empty set of the model's (H, D) (1 <= H <= 4096, 1 <= D <= 65536); NULL and an error otherwise. */
RpeExplorerTrained *rpe_explorer_trained_new (gsize heads, gsize dim, const char *source, GError **error);
/* Adds a FastRPB module: w (H, 2M - 1) centred (copied, finite, 1 <= M <= MAX_TAPS). */
gboolean rpe_explorer_trained_add_fastrpb (RpeExplorerTrained *trained,
                                           guint               layer,
                                           const char         *prefix,
                                           gsize               taps,
                                           const float        *w,
                                           GError            **error);
/* Sets the learned embedding: (positions, H * D) floats (copied, finite). */
gboolean rpe_explorer_trained_set_ape (RpeExplorerTrained *trained, gsize positions, const float *ape, GError **error);
/* The trained modules of a checkpoint's tensors for a model of (H, D): every FastRPB module
 * (`bias.w`, each with all its heads and taps; the layer read from a `.<l>.` in its name) and the
 * learned APE (rpe-checkpoint-ape.h).  NULL without an error when the set holds neither; NULL
 * with an error when one is malformed (its name and shape in the message). */
RpeExplorerTrained *
rpe_explorer_trained_from_set (const RpeTensorSet *set, gsize heads, gsize dim, const char *source, GError **error);
RpeExplorerTrained *rpe_explorer_trained_ref (RpeExplorerTrained *trained);
void                rpe_explorer_trained_unref (RpeExplorerTrained *trained);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RpeExplorerTrained, rpe_explorer_trained_unref)

/* The FastRPB module of `layer` (the first one when none has that layer); NULL when there is none. */
const RpeExplorerFastrpbLayer *rpe_explorer_trained_fastrpb (const RpeExplorerTrained *trained, guint layer);
/* The bytes the set holds (for budgets). */
gsize rpe_explorer_trained_bytes (const RpeExplorerTrained *trained);

G_END_DECLS

/* rpe-checkpoint-ape.h: a learned absolute position embedding in a checkpoint. */
#pragma once

#include <glib.h>

#include "rpe-tensor.h"

G_BEGIN_DECLS

/* The learned absolute embedding of a checkpoint: a 2-D tensor named `ape.weight` or ending in
 * `.ape.weight`, of shape (positions, H * D), added to queries and keys at positions below
 * `positions` (tools/train-demos.py's baseline).  Returns NULL without an error when there is none;
 * NULL with an error when there is one of the wrong shape, or several, or non-finite values. */
const RpeTensor *rpe_checkpoint_find_learned_ape (const RpeTensorSet  *set,
                                                  gsize                n_heads,
                                                  gsize                n_features,
                                                  GError             **error);

G_END_DECLS

/* rpe-msgpack.h: Flax checkpoints as flax.serialization writes them (msgpack).
 *
 * The file is one msgpack map of nested maps (flax.serialization.to_state_dict:
 * lists become maps keyed "0", "1", ...).  Arrays are msgpack ext type 1 whose
 * payload is itself msgpack: [shape (array of ints), dtype name (str), data (bin,
 * C order, little-endian)]; numpy scalars are ext type 3 holding [dtype name, data].
 * Parsed with msgpack-c.
 *
 * Only the model's parameters are read: the subtree "target/params" (flax.optim
 * checkpoints, as the LRA code writes `checkpoint_<step>`), else "params"
 * (TrainState), else "target", else the whole file; optimizer states, which repeat
 * the parameters' names, are left out.  Tensor names are the paths below that
 * subtree joined with '/'.  Floating arrays (float16, bfloat16, float32, float64)
 * become tensors; integer and boolean arrays (step counters) are skipped.
 *
 * Limits: the file's object count is checked against the memory budget before
 * msgpack-c builds its tree (RPE_MSGPACK_OBJECT_BYTES each), nesting is at most
 * RPE_MSGPACK_MAX_DEPTH, names at most RPE_MSGPACK_MAX_NAME bytes, at most
 * RPE_MSGPACK_MAX_TENSORS tensors, and every tensor's size is overflow-checked
 * against its shape and dtype and charged to the budget. */
#pragma once

#include <glib.h>

#include "rpe-tensor.h"

G_BEGIN_DECLS

#define RPE_MSGPACK_MAX_DEPTH     32u
#define RPE_MSGPACK_MAX_NAME      4096u
#define RPE_MSGPACK_MAX_TENSORS   65536u
#define RPE_MSGPACK_OBJECT_BYTES  64u      /* budget charged per msgpack object */

/* Whether the data starts like a msgpack map (the top level of a Flax checkpoint). */
gboolean      rpe_msgpack_looks_like (const guint8 *data,
                                      gsize         length);

RpeTensorSet *rpe_msgpack_read_bytes (const guint8 *data,
                                      gsize         length,
                                      const char   *name_for_errors,
                                      GError      **error);

G_END_DECLS

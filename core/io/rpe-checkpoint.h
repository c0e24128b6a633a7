/* rpe-checkpoint.h: reading checkpoints and mapping tensor names to SPE parameters
 * (MATH.md section 10). */
#pragma once

#include <gio/gio.h>

#include "rpe-spe.h"
#include "rpe-tensor.h"

G_BEGIN_DECLS

/* The largest magnitude an effective SPE parameter may have (after the as-coded
 * transforms): with K, D <= 65536 and L <= 2^24 the templates, codes and their
 * products then stay finite in float32.  Larger finite values are refused on
 * load (see the README's limits). */
#define RPE_CHECKPOINT_MAX_PARAM 1e12

typedef struct
{
  char         *prefix;      /* the module's name prefix, as --prefix takes it */
  RpeSpeMethod  method;
  gsize         n_heads;
  gsize         n_features;
  gsize         size;        /* K (sine) or L (conv) */
  GArray       *layers;      /* int: layer indices that have a gate (may be empty) */
  char         *convention;  /* "pytorch", "pytorch-unshared" or "flax" */
} RpeSpeModuleInfo;

void rpe_spe_module_info_free (RpeSpeModuleInfo *info);

/* Reads a checkpoint; the format is recognised from the content: .safetensors,
 * .npy, .npz, and PyTorch .pt zip archives (read with a restricted unpickler
 * that never executes anything, see rpe-pickle.h). */
RpeTensorSet *rpe_checkpoint_read       (const char  *path,
                                         GError     **error);
RpeTensorSet *rpe_checkpoint_read_bytes (GBytes      *bytes,
                                         const char  *name_for_errors,
                                         GError     **error);

/* The SPE modules recognised in a tensor set: a GPtrArray of RpeSpeModuleInfo*
 * (with its free function set), in a stable order. */
GPtrArray    *rpe_checkpoint_find_modules (const RpeTensorSet *set);

/* Fills `params` (initialised by the call) with the effective parameters of the
 * module `prefix` (NULL: the first module found) and the gate of `layer`
 * (-1: the first gate found; no gate if the module has none).  Applies the
 * as-coded transforms and checks every value is finite. */
gboolean      rpe_checkpoint_load_spe (const RpeTensorSet  *set,
                                       const char          *prefix,
                                       int                  layer,
                                       RpeSpeParams        *params,
                                       GError             **error);

G_END_DECLS

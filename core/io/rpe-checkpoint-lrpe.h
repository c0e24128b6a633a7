/* rpe-checkpoint-lrpe.h: LRPE and FastRPB modules in a checkpoint (MATH.md sections 7, 8, 10).
 *
 * Recognised by their leaves and shapes under any module prefix (names joined
 * with '.' or '/'):
 *   LRPE (the reference `Urpe` module):
 *     <p>.v            (1, D, 1)        Householder vector (fixed or learned)
 *     <p>.theta        (1, 1, n)        learned theta: n = D//2 (rotation) or D (complex)
 *     <p>.permutation  (1, Mp, D)       the permutation buffer T (int64)
 *   FastRPB (the reference `PositionalBias`):
 *     <p>.bias.w       (1, H, X)        X = 2M - 1 ("full") or M ("symmetric")
 * A module is a prefix with at least one of its leaves in such a shape; leaves
 * of other shapes are ignored there.
 */
#pragma once

#include <glib.h>

#include "rpe-tensor.h"

G_BEGIN_DECLS

typedef struct
{
  char            *prefix;       /* as --prefix takes it ("" at the top level) */
  gsize            dim;          /* D (0 when only theta is present) */
  const RpeTensor *v;            /* (1, D, 1) or NULL */
  const RpeTensor *theta;        /* (1, 1, n) or NULL */
  const RpeTensor *permutation;  /* (1, Mp, D) or NULL */
} RpeLrpeModuleInfo;

typedef struct
{
  char            *prefix;       /* the module holding `bias.w` */
  gsize            n_heads;
  gsize            width;        /* X, the last dim */
  const RpeTensor *w;            /* (1, H, X) */
} RpeFastrpbModuleInfo;

void       rpe_lrpe_module_info_free    (RpeLrpeModuleInfo    *info);
void       rpe_fastrpb_module_info_free (RpeFastrpbModuleInfo *info);

/* GPtrArray of RpeLrpeModuleInfo* / RpeFastrpbModuleInfo* (free functions set),
 * in file order.  The tensors point into `set`. */
GPtrArray *rpe_checkpoint_find_lrpe_modules    (const RpeTensorSet *set);
GPtrArray *rpe_checkpoint_find_fastrpb_modules (const RpeTensorSet *set);

/* The module under `prefix` (NULL: the only one; an error lists them all when
 * there are several, or when none is found).  The result points into the
 * array, which the caller keeps alive (it is returned in *modules). */
const RpeLrpeModuleInfo    *rpe_checkpoint_pick_lrpe    (const RpeTensorSet *set,
                                                         const char         *prefix,
                                                         GPtrArray         **modules,
                                                         GError            **error);
const RpeFastrpbModuleInfo *rpe_checkpoint_pick_fastrpb (const RpeTensorSet *set,
                                                         const char         *prefix,
                                                         GPtrArray         **modules,
                                                         GError            **error);

G_END_DECLS

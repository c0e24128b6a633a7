/* rpe-checkpoint-lrpe.h: LRPE and FastRPB modules in a checkpoint (docs/math.md, sections 7, 8, 10).
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

#include "rpe-lrpe.h"
#include "rpe-tensor.h"

G_BEGIN_DECLS

typedef struct
{
  char            *prefix;       /* as a selection's prefix takes it ("" at the top level) */
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

/* What a checkpoint holds, for messages that say why a method finds nothing to draw:
 * "SPE modules: spe (sine); LRPE modules: none; FastRPB modules: layers.0.positional_bias,
 * layers.1.positional_bias; a learned APE: ape.weight" (newly allocated; at most 4 names per kind). */
char *rpe_checkpoint_summary (const RpeTensorSet *set);

/* ---- What a trained module's tensors say (docs/math.md, section 7), shared by `rpe` and the window ----
 *
 * A stored v makes P the Householder reflection; a permutation buffer makes Lambda the
 * permutation; a learned theta alone means the complex exponential when it holds D values
 * (D > 1), else rotation.  A v of norm 1 (to 1e-5) is the reference's fixed v, any other norm a
 * learned one (normalised at every use). */
gboolean      rpe_lrpe_v_looks_learned (const float *v,
                                        gsize        dim);
RpeLrpeLambda rpe_lrpe_implied_lambda  (gsize        n_theta,
                                        gsize        dim);
/* The permutation pi (pd values) of a stored buffer T (..., pd) (floats holding integers):
 * RPE_ERROR_INVALID_ARGUMENT when T is not the powers of one permutation starting at the
 * identity (*bad_row names the row), RPE_ERROR_NO_MEMORY. */
RpeStatus     rpe_lrpe_pi_from_buffer  (const RpeTensor *permutation,
                                        gsize            pd,
                                        uint32_t        *pi,
                                        gsize           *bad_row);

/* Trained parameters held by value (copies: they outlive the file). */
typedef struct
{
  float    *v;           /* v_dim values or NULL */
  gsize     v_dim;
  gboolean  v_learned;   /* v / (|v| + 1e-6) at every use */
  float    *theta;       /* n_theta values or NULL */
  gsize     n_theta;
  uint32_t *pi;          /* the Lambda permutation (n_pi values) or NULL */
  gsize     n_pi;
} RpeLrpeTrained;

/* From a module's tensors (any may be NULL, not all); checks finiteness and the buffer.
 * Errors name `from`. */
RpeLrpeTrained *rpe_lrpe_trained_new  (const RpeTensor      *v,
                                       const RpeTensor      *theta,
                                       const RpeTensor      *permutation,
                                       const char           *from,
                                       GError              **error);
RpeLrpeTrained *rpe_lrpe_trained_copy (const RpeLrpeTrained *trained);   /* NULL-safe */
void            rpe_lrpe_trained_free (RpeLrpeTrained       *trained);   /* NULL-safe */
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RpeLrpeTrained, rpe_lrpe_trained_free)
/* The feature width D the parameters fix (v's length, or the buffer's width for a P other than
 * Fourier), or 0 when only theta is known. */
gsize           rpe_lrpe_trained_dim  (const RpeLrpeTrained *trained);
/* Sets config's P (Householder with v), Lambda (permutation with pi), the trained v, theta and
 * pi, for feature width config->dim and the caller's P/Lambda choice where the parameters leave
 * it open.  RPE_ERROR_INVALID_ARGUMENT when the parameters do not fit (v of another length,
 * theta of another count than Lambda needs, pi of another width). The config points into
 * `trained`. */
RpeStatus       rpe_lrpe_trained_apply (const RpeLrpeTrained *trained,
                                        RpeLrpeConfig        *config);

G_END_DECLS

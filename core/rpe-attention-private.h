/* rpe-attention-private.h: the core's dense attention rows kernel (private). */
#pragma once

#include "rpe-attention.h"

/* Rows m0 .. m0 + n_rows - 1 of head `head` of softmax (q k^T / sqrt(D)) for a DOT spec whose
 * inputs are checked (finite, sizes valid): logits and softmax fused per register tile and
 * row (rpe-attention-dense.c), threaded over blocks of rows.  The values of
 * rpe_attention_rows to float rounding; a block whose logits overflow is computed by
 * rpe_attention_rows. */
RpeStatus _rpe_attention_dense_rows (const RpeLogitsSpec *spec,
                                     size_t               head,
                                     size_t               m0,
                                     size_t               n_rows,
                                     bool                 causal,
                                     float               *out,
                                     const RpeMonitor    *monitor);

/* The same kernel in its plain mode: rows m0 .. m0 + n_rows - 1 of alpha q k^T into out
 * (n_rows, n), q and k the first rows (m = 0) of n rows of r floats each, ld >= r floats
 * apart (strided slices: the empirical templates' Qbar_d, Kbar_d), no softmax, no mask.
 * Each output is the float sum over r in order, times alpha (the blocking and the number of
 * threads change nothing); threaded over blocks of rows like _rpe_attention_dense_rows. */
RpeStatus _rpe_dense_product_rows (const float      *q,
                                   const float      *k,
                                   size_t            ld,
                                   size_t            n,
                                   size_t            r,
                                   float             alpha,
                                   size_t            m0,
                                   size_t            n_rows,
                                   float            *out,
                                   const RpeMonitor *monitor);

/* Floors for `rpe bench` (the same stores and exps as the kernel, threaded over
 * rpe_parallel_threads () workers): writes count zeros to out the way the kernel writes
 * its rows (non-temporal stores where it uses them); computes count exps in L1. */
void      _rpe_attention_dense_write_floor (float  *out,
                                            size_t  count);
RpeStatus _rpe_attention_dense_exp_floor   (size_t  count);

/* The build of the dense kernel this CPU runs: "avx512", "avx2" or "generic"
 * (RPE_ATTENTION_KERNEL read at each call). */
const char *_rpe_attention_dense_kernel_name (void);
/* The build of the row softmax: "avx2" or "generic" (RPE_SOFTMAX_GENERIC). */
const char *_rpe_softmax_kernel_name (void);

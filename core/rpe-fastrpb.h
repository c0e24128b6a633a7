/* rpe-fastrpb.h: FastRPB, an additive Toeplitz bias (docs/math.md, section 8).
 *
 *     Y = Attention (Q, K, V) + W V,     W[m, n] = w_{m - n}
 *
 * Weights for tau = m - n in [-(N-1), N-1] are stored as (2N - 1) floats,
 * index i <-> tau = i - (N - 1).  W V is never formed densely: W is embedded
 * in a circulant of size L = rpe_fft_good_size (2N - 1) and applied with real
 * FFTs (rpe-fft.h): O(Dv N log N) time, O(L) extra memory per column, columns
 * processed in small batches.
 *
 * Layouts (C order, one batch item):
 *   v, y          (N, H, Dv)
 *   w             shared (2N - 1), or per head (H, 2N - 1) with RPE_FASTRPB_PER_HEAD
 *   2-D grid      N = N1 * N2 positions flattened row-major, p = i * N2 + j;
 *                 wx (2 N1 - 1) or (H, 2 N1 - 1), wy (2 N2 - 1) or (H, 2 N2 - 1).
 *
 * Causal: w_tau = 0 for tau < 0 (the weights really are zeroed; the reference
 * code's mask is a no-op).  In 2-D, causal means the raster order of the
 * flattened sequence: key p' contributes to query p only if p' <= p.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "rpe-status.h"

enum
{
  RPE_FASTRPB_PER_HEAD   = 1 << 0,  /* one weight row per head (else shared by all heads) */
  RPE_FASTRPB_CAUSAL     = 1 << 1,  /* w_tau = 0 for tau < 0 (2-D: raster order) */
  RPE_FASTRPB_ACCUMULATE = 1 << 2,  /* y += W V (compose with attention computed elsewhere); else y = W V */
};

/* 1-D: y (+)= W V.  v and y must not overlap. */
RpeStatus rpe_fastrpb_apply (size_t            n,
                             size_t            n_heads,
                             size_t            dv,
                             const float      *w,
                             const float      *v,
                             float            *y,
                             unsigned          flags,
                             const RpeMonitor *monitor);

/* 2-D, W[(i,j), (i',j')] = wx_{i-i'} + wy_{j-j'}: y (+)= W V with
 * v, y (N1 * N2, H, Dv).  Non-causal, from the per-axis sums
 *   (W V)[i, j] = sum_i' wx_{i-i'} A[i'] + sum_j' wy_{j-j'} B[j'],
 *   A[i'] = sum_j' v[i', j'],  B[j'] = sum_i' v[i', j']
 * (two 1-D Toeplitz products per column).  Causal (raster order):
 *   sum_{i'<i} wx_{i-i'} A[i'] + wx_0 sum_{j'<=j} v[i, j']
 *   + sum_j' wy_{j-j'} (sum_{i'<i} v[i', j']) + sum_{j'<=j} wy_{j-j'} v[i, j'],
 * where the column prefix sums are carried as running sums of row spectra
 * (O(N1 N2 log N2) per column). */
RpeStatus rpe_fastrpb_apply_2d (size_t            n1,
                                size_t            n2,
                                size_t            n_heads,
                                size_t            dv,
                                const float      *wx,
                                const float      *wy,
                                const float      *v,
                                float            *y,
                                unsigned          flags,
                                const RpeMonitor *monitor);

/* Stored weight layouts (docs/math.md, section 8).  For a model trained at M and
 * viewed at N <= M, only the offsets tau in [-(N-1), N-1] are used.
 *   CENTRED    (2M - 1): index i <-> tau = i - (M - 1) (this app's layout)
 *   FULL       (2M - 1): the reference's PositionalBias `bias.w` (1, H, 2M - 1):
 *              W[m, n] = w[(m - n + M) mod (2M - 1)] (index 0 is tau = M - 1,
 *              index i >= 1 is tau = i - M)
 *   SYMMETRIC  (M):      W[m, n] = w[|m - n|] */
typedef enum
{
  RPE_FASTRPB_LAYOUT_CENTRED,
  RPE_FASTRPB_LAYOUT_FULL,
  RPE_FASTRPB_LAYOUT_SYMMETRIC,
} RpeFastrpbLayout;

/* The trained length M of `width` stored weights in `layout` (0 if the width
 * cannot be that layout: an even width for CENTRED/FULL, or 0). */
size_t    rpe_fastrpb_layout_length (RpeFastrpbLayout layout,
                                     size_t           width);

/* The layout of the reference's PositionalBias weights (1, H, width) when their width is all
 * that is known: FULL (2M - 1) for an odd width, SYMMETRIC (M) for an even one. */
RpeFastrpbLayout rpe_fastrpb_reference_layout (size_t width);

/* centred (rows, 2n - 1) <- stored (rows, width) in `layout`, for length n.
 * RPE_ERROR_INVALID_ARGUMENT if the width is not of the layout or M < n. */
RpeStatus rpe_fastrpb_to_centred (RpeFastrpbLayout layout,
                                  size_t           rows,
                                  size_t           width,
                                  const float     *stored,
                                  size_t           n,
                                  float           *centred);

/* Display helpers (small N only: the dense forms are O(N^2) floats in the
 * caller's buffer; sizes are overflow-checked). */
/* profile (2N - 1): w with the causal zeroing applied. */
RpeStatus rpe_fastrpb_lag_profile (size_t       n,
                                   const float *w,
                                   bool         causal,
                                   float       *profile);
/* dense (N, N): dense[m, n] = w_{m-n} (causal: 0 for n > m). */
RpeStatus rpe_fastrpb_dense (size_t       n,
                             const float *w,
                             bool         causal,
                             float       *dense);
/* dense (N1 N2, N1 N2): wx_{i-i'} + wy_{j-j'} (causal: 0 for p' > p). */
RpeStatus rpe_fastrpb_dense_2d (size_t       n1,
                                size_t       n2,
                                const float *wx,
                                const float *wy,
                                bool         causal,
                                float       *dense);

/* rpe-linear-attention.h: kernel feature maps and linear attention (docs/math.md, section 5).
 *
 * Layouts (C order, one batch item):
 *   x (queries or keys)   (N, H, F)
 *   phi(x)                (N, H, M)     M from rpe_feature_map_dim
 *   v                     (N, H, Dv)
 *   y                     (N, H, Dv)
 *   implied attention     (H, N, N)
 *
 *   Y = diag(phi(Q) [phi(K)^T 1])^-1 phi(Q) [phi(K)^T V]                      O(N M Dv)
 *   causal: y_m = phi(q_m)^T S_m / (phi(q_m) . z_m),
 *           S_m = sum_{n<=m} phi(k_n) v_n^T,  z_m = sum_{n<=m} phi(k_n)       (running sums)
 *   The causal sums are carried chunk by chunk (64 rows: the state before the
 *   chunk, plus the masked 64 x 64 products inside it), in BLAS, with S and z
 *   accumulated in double.  Memory O(M Dv + 64^2); no N x N array is formed.
 *
 * Zero denominators: a row whose denominator phi(q_m) . z is exactly 0 (e.g.
 * relu features with disjoint supports, or exp/Performer features that
 * underflowed) gets output 0 (and an all-zero row in the implied map).
 *
 * Feature maps (phi acts on one row x in R^F of one head):
 *   RELU       max(0, x)                                                    M = F
 *   ELU1       elu(x) + 1  (x + 1 for x > 0, e^x otherwise)                 M = F
 *   EXP        exp(x - c)                                                   M = F
 *   PERFORMER  exp(W x - |x|^2 / 2 - c) / sqrt(m), W (m, F) rows ~ N(0, I)  M = m
 *              (Choromanski et al. 2021, positive random features FAVOR+)
 *   DPFP       x' = [relu(x), relu(-x)] in R^2F;                           M = 2F nu
 *              phi[(j-1) 2F + i] = x'_i x'_{(i+j) mod 2F}, j = 1..nu  (Schlag et al. 2021)
 * The shift c (EXP, PERFORMER) is what keeps exp from overflowing.  For
 * queries it is the row's own max exponent, for keys the max exponent over
 * every position of the head; both cancel in the attention ratio (and in the
 * row-normalised implied map), so phi is defined up to these factors.
 *
 * Performer: W is the same for all heads and for queries and keys, drawn from
 * rpe-rng stream RPE_STREAM_PERFORMER under options->seed.  Orthogonal
 * variant: W is built in blocks of F rows; each block is a Gram-Schmidt
 * orthonormalised Gaussian F x F matrix whose rows are rescaled by the norms of
 * independent Gaussian F-vectors (so each row is still marginally N(0, I)).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpe-status.h"

typedef enum
{
  RPE_FEATURE_RELU,
  RPE_FEATURE_ELU1,
  RPE_FEATURE_EXP,
  RPE_FEATURE_PERFORMER,
  RPE_FEATURE_DPFP,
} RpeFeatureMap;

typedef enum
{
  RPE_FEATURE_QUERY,   /* shift per row */
  RPE_FEATURE_KEY,     /* shift per head, shared by all positions */
} RpeFeatureRole;

typedef struct
{
  uint64_t seed;        /* PERFORMER: seed of W */
  size_t   m;           /* PERFORMER: number of random features (>= 1) */
  bool     orthogonal;  /* PERFORMER: block-orthogonal W */
  size_t   nu;          /* DPFP: 1 .. 2F - 1 */
} RpeFeatureOptions;

/* M, the number of features per head for input width F. */
RpeStatus rpe_feature_map_dim (RpeFeatureMap            map,
                               const RpeFeatureOptions *options,
                               size_t                   f,
                               size_t                  *out_m);

/* The Performer projection W (m, F) for these options (what PERFORMER uses). */
RpeStatus rpe_performer_matrix (const RpeFeatureOptions *options,
                                size_t                   f,
                                float                   *w);

/* phi (N, H, M) of x (N, H, F).  options may be NULL for RELU, ELU1, EXP. */
RpeStatus rpe_feature_map_apply (RpeFeatureMap            map,
                                 const RpeFeatureOptions *options,
                                 RpeFeatureRole           role,
                                 size_t                   n,
                                 size_t                   n_heads,
                                 size_t                   f,
                                 const float             *x,
                                 float                   *phi,
                                 const RpeMonitor        *monitor);

/* Linear attention from features: y (N, H, Dv). */
RpeStatus rpe_linear_attention (size_t            n,
                                size_t            n_heads,
                                size_t            m,
                                size_t            dv,
                                const float      *phi_q,
                                const float      *phi_k,
                                const float      *v,
                                bool              causal,
                                float            *y,
                                const RpeMonitor *monitor);

/* Feature map on q and k (N, H, F), then linear attention: the engine behind `rpe compute
 * linear` and the bench.  The row-local maps (RELU, ELU1, DPFP) are streamed in blocks of rows
 * (no N-row feature array); non-causal RELU / ELU1 are fused per block (features, sums and
 * normalised outputs in one pass over keys and one over queries; see rpe-linear-attention.c).
 * The result does not depend on the number of threads. */
RpeStatus rpe_linear_attention_qkv (RpeFeatureMap            map,
                                    const RpeFeatureOptions *options,
                                    size_t                   n,
                                    size_t                   n_heads,
                                    size_t                   f,
                                    size_t                   dv,
                                    const float             *q,
                                    const float             *k,
                                    const float             *v,
                                    bool                     causal,
                                    float                   *y,
                                    const RpeMonitor        *monitor);

/* The implied attention (H, N, N) for display: A[m, n] = phi(q_m) . phi(k_n) / sum_n' (...),
 * over n <= m when causal (masked entries exactly 0). */
RpeStatus rpe_linear_attention_map (size_t            n,
                                    size_t            n_heads,
                                    size_t            m,
                                    const float      *phi_q,
                                    const float      *phi_k,
                                    bool              causal,
                                    float            *a,
                                    const RpeMonitor *monitor);

/* Rows m0 .. m0 + n_rows - 1 of head `head` of the implied map, out (n_rows, N). */
RpeStatus rpe_linear_attention_map_rows (size_t            n,
                                         size_t            n_heads,
                                         size_t            m,
                                         const float      *phi_q,
                                         const float      *phi_k,
                                         bool              causal,
                                         size_t            head,
                                         size_t            m0,
                                         size_t            n_rows,
                                         float            *out,
                                         const RpeMonitor *monitor);

/* The build of the fused path's products this CPU runs: "avx512", "avx2" or "generic" (the
 * core's own product, rpe-gemm-private.h); RPE_LINEAR_ISA read at each call. */
const char *_rpe_linear_kernel_name (void);

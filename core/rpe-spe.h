/* rpe-spe.h: Stochastic Positional Encoding (docs/math.md, sections 1-4).
 *
 * Layouts (C order, one batch item):
 *   q, k            (N, H, D)       queries / keys
 *   qbar, kbar      (N, H, D, R)    codes
 *   qhat, khat      (N, H, R)       encoded queries / keys
 *   sine noise z    (H, D, 2K, R)   raw N(0,1), row 2k cosine, 2k+1 sine of sine k
 *   conv noise z    (R, H*D, N+4L)  raw N(0,1), channel c = h*D + d
 *   gate noise eps  (H, D, R)       raw N(0,1)
 *   templates       (N, N) per (h, d); lag profiles (2N-1), index i <-> tau = i - (N-1)
 *
 * All parameters are *effective* values (after the as-coded transforms):
 * f = sigmoid(freqs)/2, theta = offsets, lambda = softplus(gains), g = sigmoid(gate).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpe-status.h"

typedef enum
{
  RPE_SPE_SINE,
  RPE_SPE_CONV,
} RpeSpeMethod;

typedef struct
{
  RpeSpeMethod method;
  size_t n_heads;     /* H */
  size_t n_features;  /* D */
  size_t n_sines;     /* K (sine only) */
  size_t kernel;      /* L (conv only); for 2-D convSPE, L1 (filter rows) */
  size_t kernel_cols; /* 2-D convSPE only: L2 (filter columns), wq/wk then (H*D, L1*L2) row-major;
                         0 for 1-D (sine and 1-D conv) */
  float *freqs;       /* sine: (H, D, K) f_k in [0, 0.5] */
  float *offsets;     /* sine: (H, D, K) theta_k */
  float *gains;       /* sine: (H, D, K) lambda_k >= 0 */
  float *wq;          /* conv: (H*D, L) query filter (the reference's conv_k.weight) */
  float *wk;          /* conv: (H*D, L) key filter (the reference's conv_q.weight) */
  float *gate;        /* (H, D) g in [0, 1]; NULL when ungated */
} RpeSpeParams;

/* Allocates zeroed parameter arrays for the method; `size` is K (sine) or L (conv). */
RpeStatus rpe_spe_params_init   (RpeSpeParams *params,
                                 RpeSpeMethod  method,
                                 size_t        n_heads,
                                 size_t        n_features,
                                 size_t        size,
                                 bool          gated);
void      rpe_spe_params_clear  (RpeSpeParams *params);
/* Splits the H*D channels into `heads` heads of D = H*D / heads features, keeping their order
 * (every array is (H, D, ...) or (H*D, ...) row-major, so only the shape changes): a file that
 * keeps all channels in one axis cannot say how many heads there are.  RPE_ERROR_INVALID_ARGUMENT
 * (params unchanged) if heads does not divide H*D. */
RpeStatus rpe_spe_params_set_heads (RpeSpeParams *params,
                                    size_t        heads);      /* frees, NULL-safe, zeroes the struct */
RpeStatus rpe_spe_params_copy   (RpeSpeParams       *dest,   /* dest is initialised by the call */
                                 const RpeSpeParams *src);
/* Draws parameters like the reference initialisation, deterministically from seed
 * (stream RPE_STREAM_PARAMS); the shapes come from rpe_spe_params_init:
 *   sine: f = sigmoid(N(0,1) - 4) / 2, theta = N(0,1), lambda = softplus(raw) with raw ~ N(0,1)
 *         divided per (h, d) by sqrt(|raw|_2) / 2;  conv: wq, wk ~ N(0,1) / sqrt(L);
 *   gate (if allocated): g = sigmoid(N(0,1) - 2), drawn at a fixed offset (2^40) so it does
 *   not depend on K or L. */
RpeStatus rpe_spe_params_random (RpeSpeParams *params,
                                 uint64_t      seed);
/* RPE_ERROR_NOT_FINITE / RPE_ERROR_INVALID_ARGUMENT when a value is out of its domain;
 * RPE_ERROR_UNSUPPORTED for 2-D convSPE parameters (kernel_cols != 0), which the 1-D entry
 * points here do not take: see rpe-conv-spe-2d.h (rpe_conv_spe_2d_validate). */
RpeStatus rpe_spe_params_validate (const RpeSpeParams *params);

/* Number of floats in the noise of one draw (sine: H*D*2K*R, conv: R*H*D*(N+4L)). */
RpeStatus rpe_spe_noise_size (const RpeSpeParams *params,
                              size_t              n,
                              size_t              r,
                              size_t             *out_count);
/* Fills z with the seeded draw of the method's noise (stream RPE_STREAM_SINE / _CONV). */
RpeStatus rpe_spe_noise_fill (const RpeSpeParams *params,
                              size_t              n,
                              size_t              r,
                              uint64_t            seed,
                              float              *z);
/* Fills z[0 .. count-1] with elements offset .. offset+count-1 of the same draw as
 * rpe_spe_noise_fill (so a draw can be generated in chunks; counter-based RNG). */
RpeStatus rpe_spe_noise_fill_range (const RpeSpeParams *params,
                                    size_t              n,
                                    size_t              r,
                                    uint64_t            seed,
                                    size_t              offset,
                                    size_t              count,
                                    float              *z);
/* The code scale s = 1 / (R D)^(1/4) (docs/math.md, section 1); 0 if an argument is 0. */
double    rpe_spe_code_scale (size_t n_features,
                              size_t r);
/* Fills eps (H, D, R) with the seeded gate noise (stream RPE_STREAM_GATE). */
RpeStatus rpe_spe_gate_noise_fill (const RpeSpeParams *params,
                                   size_t              r,
                                   uint64_t            seed,
                                   float              *eps);

/* Codes Qbar, Kbar (N, H, D, R) before gating, from raw noise z. */
RpeStatus rpe_spe_codes (const RpeSpeParams *params,
                         size_t              n,
                         size_t              r,
                         const float        *z,
                         float              *qbar,
                         float              *kbar,
                         const RpeMonitor   *monitor);

/* Gating in place: Qbar' = sqrt(1-g) Qbar + sqrt(g) s eps (and Kbar'), eps raw (H, D, R).
 * A no-op (RPE_OK) when params->gate is NULL. */
RpeStatus rpe_spe_gate_codes (const RpeSpeParams *params,
                              size_t              n,
                              size_t              r,
                              const float        *eps,
                              float              *qbar,
                              float              *kbar);

/* Encoded queries/keys: qhat[m,h,r] = sum_d qbar[m,h,d,r] q[m,h,d] (likewise khat). */
RpeStatus rpe_spe_encode (size_t            n,
                          size_t            n_heads,
                          size_t            n_features,
                          size_t            r,
                          const float      *qbar,
                          const float      *kbar,
                          const float      *q,
                          const float      *k,
                          float            *qhat,
                          float            *khat,
                          const RpeMonitor *monitor);

/* Codes, gating and encoding in one pass, without the (N, H, D, R) code buffers:
 * the same qhat/khat as rpe_spe_codes + rpe_spe_gate_codes + rpe_spe_encode (up to float
 * rounding).  eps (H, D, R) is required when params->gate != NULL and ignored otherwise.
 * Either side may be skipped by passing q and qhat (or k and khat) as NULL.
 * Scratch: O(N R) (conv) or O(128 D (2K+1)) (sine) floats. */
RpeStatus rpe_spe_encode_fused (const RpeSpeParams *params,
                                size_t              n,
                                size_t              r,
                                const float        *z,
                                const float        *eps,
                                const float        *q,
                                const float        *k,
                                float              *qhat,
                                float              *khat,
                                const RpeMonitor   *monitor);

/* Rows m0 .. m0 + rows - 1 (of N = n) of rpe_spe_encode_fused, sine SPE only (conv: its
 * correlation runs along the whole sequence; RPE_ERROR_INVALID_ARGUMENT): q, k are those rows
 * of the content ((rows, H, D)), qhat, khat receive those rows ((rows, H, R)), z and eps as in
 * rpe_spe_encode_fused.  m0 must be a multiple of RPE_SPE_FUSED_ROWS_ALIGN; the values are
 * those of the whole call, bit for bit on every CPU (a row's features depend on its position
 * and its block's start only, and the core's own product sums each value in one fixed order,
 * rpe-gemm-private.h), so a long sequence can be encoded and written in slabs of rows. */
#define RPE_SPE_FUSED_ROWS_ALIGN 128
RpeStatus rpe_spe_encode_fused_rows (const RpeSpeParams *params,
                                     size_t              n,
                                     size_t              m0,
                                     size_t              rows,
                                     size_t              r,
                                     const float        *z,
                                     const float        *eps,
                                     const float        *q,
                                     const float        *k,
                                     float              *qhat,
                                     float              *khat,
                                     const RpeMonitor   *monitor);

/* rpe_spe_encode_fused with the code noise drawn from `seed` inside the call (the draw of
 * rpe_spe_noise_fill (params, n, r, seed, z)): same result as filling z and calling
 * rpe_spe_encode_fused, without the noise buffer for conv (R*H*D*(N+4L) floats).
 * Threaded over heads (rpe-parallel.h); the result does not depend on the thread count. */
RpeStatus rpe_spe_encode_seeded (const RpeSpeParams *params,
                                 size_t              n,
                                 size_t              r,
                                 uint64_t            seed,
                                 const float        *eps,
                                 const float        *q,
                                 const float        *k,
                                 float              *qhat,
                                 float              *khat,
                                 const RpeMonitor   *monitor);

/* One head of rpe_spe_encode_seeded, for viewers of long sequences that draw one head: the
 * content of that head only, q and k (N, D) = x[:, head, :], and qhat, khat (N, R) = the slice
 * [:, head, :] of the full call's output (the head's noise is drawn at its offsets in the
 * full draw, so the values are the same).  eps is the full (H, D, R) gate noise. */
RpeStatus rpe_spe_encode_seeded_head (const RpeSpeParams *params,
                                      size_t              head,
                                      size_t              n,
                                      size_t              r,
                                      uint64_t            seed,
                                      const float        *eps,
                                      const float        *q,
                                      const float        *k,
                                      float              *qhat,
                                      float              *khat,
                                      const RpeMonitor   *monitor);

/* Analytic template lag profile of (h, d): out[i] = P_d(i - (N-1)); gated gives (1-g)P + g
 * (gated with params->gate == NULL means g = 0, i.e. the plain P). */
RpeStatus rpe_spe_template_lags (const RpeSpeParams *params,
                                 size_t              h,
                                 size_t              d,
                                 size_t              n,
                                 bool                gated,
                                 float              *out);
/* Analytic template of (h, d) as an N x N matrix, out[m*N + n] = P_d(m, n). */
RpeStatus rpe_spe_template (const RpeSpeParams *params,
                            size_t              h,
                            size_t              d,
                            size_t              n,
                            bool                gated,
                            float              *out);
/* Rows m0 .. m0 + n_rows - 1 of the N x N template whose lag profile (2N - 1 values, from
 * rpe_spe_template_lags) is `lags`: out[i*N + j] = lags[m0 + i - j + N - 1].  For writing
 * templates larger than memory a slab at a time. */
RpeStatus rpe_spe_template_rows (const float *lags,
                                 size_t       n,
                                 size_t       m0,
                                 size_t       n_rows,
                                 float       *out);
/* Empirical template of (h, d) from (gated) codes: sqrt(R D)/R * Qbar_d Kbar_d^T, N x N. */
RpeStatus rpe_spe_empirical_template (size_t            n,
                                      size_t            n_heads,
                                      size_t            n_features,
                                      size_t            r,
                                      const float      *qbar,
                                      const float      *kbar,
                                      size_t            h,
                                      size_t            d,
                                      float            *out);

/* The same, rows m0 .. m0 + n_rows - 1 only: out (n_rows, N). */
RpeStatus rpe_spe_empirical_template_rows (size_t            n,
                                           size_t            n_heads,
                                           size_t            n_features,
                                           size_t            r,
                                           const float      *qbar,
                                           const float      *kbar,
                                           size_t            h,
                                           size_t            d,
                                           size_t            m0,
                                           size_t            n_rows,
                                           float            *out);

/* SPE logits (H, N, N): lhat[h,m,n] = qhat[m,h] . khat[n,h] / sqrt(R). */
RpeStatus rpe_spe_logits (size_t            n,
                          size_t            n_heads,
                          size_t            r,
                          const float      *qhat,
                          const float      *khat,
                          float            *logits,
                          const RpeMonitor *monitor);
/* Exact logits (H, N, N): l[h,m,n] = sum_d q[m,h,d] k[n,h,d] Ptilde_hd(m - n) / sqrt(D). */
RpeStatus rpe_spe_exact_logits (const RpeSpeParams *params,
                                size_t              n,
                                const float        *q,
                                const float        *k,
                                bool                gated,
                                float              *logits,
                                const RpeMonitor   *monitor);

/* The signatures the per-method internals (rpe-sine-spe.h, rpe-conv-spe.h) share with the entry
 * points above, declared once: rpe_spe_encode_fused's, rpe_spe_encode_seeded's, and an ungated
 * lag profile of (h, d) in double, out[i] at tau = i - (N-1), i < 2N-1. */
typedef RpeStatus RpeSpeEncodeFusedFunc (const RpeSpeParams *params,
                                         size_t              n,
                                         size_t              r,
                                         const float        *z,
                                         const float        *eps,
                                         const float        *q,
                                         const float        *k,
                                         float              *qhat,
                                         float              *khat,
                                         const RpeMonitor   *monitor);
typedef RpeStatus RpeSpeEncodeSeededFunc (const RpeSpeParams *params,
                                          size_t              n,
                                          size_t              r,
                                          uint64_t            seed,
                                          const float        *eps,
                                          const float        *q,
                                          const float        *k,
                                          float              *qhat,
                                          float              *khat,
                                          const RpeMonitor   *monitor);
typedef void      RpeSpeLagsFunc         (const RpeSpeParams *params,
                                          size_t              h,
                                          size_t              d,
                                          size_t              n,
                                          double             *out);

/* The same logits streamed: head by head, blocks of at most block_rows rows are computed into
 * buf (block_rows, N) and passed to sink (head, first row, row count, rows); the sink's status
 * stops the stream.  Extra memory O(N D); the values of rpe_spe_exact_logits. */
typedef RpeStatus (*RpeExactLogitsSink) (size_t       head,
                                         size_t       m0,
                                         size_t       n_rows,
                                         float       *rows,
                                         void        *user_data);

RpeStatus rpe_spe_exact_logits_stream (const RpeSpeParams *params,
                                       size_t              n,
                                       const float        *q,
                                       const float        *k,
                                       bool                gated,
                                       size_t              block_rows,
                                       float              *buf,
                                       RpeExactLogitsSink  sink,
                                       void               *user_data,
                                       const RpeMonitor   *monitor);

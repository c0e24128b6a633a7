/* rpe-attention.h: attention maps from logits, and the APE baseline (docs/math.md, sections 4, 9). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "rpe-status.h"

/* In place, for `n_maps` maps of N x N: row softmax after subtracting the row max;
 * causal masks n > m (those entries become exactly 0). */
RpeStatus rpe_softmax_rows (float            *logits,
                            size_t            n_maps,
                            size_t            n,
                            bool              causal,
                            const RpeMonitor *monitor);

/* y[i] = exp(x[i]) for i < n, vectorised (AVX2+FMA when the CPU has it, else SSE2):
 * max error ~1.5 ulp against the correctly rounded exp; x > 88.72283 gives +inf,
 * x < -104 gives 0, NaN stays NaN.  x and y may be the same array.  The row
 * softmax uses the same exp. */
void      rpe_exp_f (const float *x,
                     float       *y,
                     size_t       n);

/* The SPE paper's display transform min(1, a^0.4 / 0.02^0.4), in place. */
void      rpe_attention_display_transform (float *a,
                                           size_t count);

/* Sinusoidal absolute encoding p (N, D): p[m, 2i] = sin(m / 10000^(2i/D)), p[m, 2i+1] = cos(...). */
RpeStatus rpe_ape_encoding (size_t  n,
                            size_t  d,
                            float  *p);

/* APE logits (H, N, N): (q_m + p_m) . (k_n + p_n) / sqrt(D). */
RpeStatus rpe_ape_logits (size_t            n,
                          size_t            n_heads,
                          size_t            d,
                          const float      *q,
                          const float      *k,
                          float            *logits,
                          const RpeMonitor *monitor);

/* ---- Streaming attention rows (for viewers of long sequences) ----
 *
 * A viewer asks for rows m0 .. m0 + n_rows - 1 of one head's N x N attention
 * map at a time, so the peak memory is O(n_rows x N) instead of O(N^2).  The
 * logits come either from a caller's callback (any positional scheme), or from
 * q, k and a logits kind (rpe_attention_rows below).  The row softmax and the
 * causal mask use the *absolute* row index m (column n > m masked). */

/* Softmax of a block of rows whose first row is absolute row m0 of a map with
 * `n` columns: rows (n_rows, n), in place; causal masks n > m0 + i.
 * Conventions (also for rpe_softmax_rows): -INFINITY logits are allowed and get
 * weight 0; a row whose every unmasked entry is -INFINITY, or one with a
 * +INFINITY entry, gives RPE_ERROR_RANGE (logits that overflowed: the
 * softmax's limit, an all-zero or a uniform row, would only look like a
 * result); NaN gives RPE_ERROR_NOT_FINITE (rows before it are already
 * transformed). */
RpeStatus rpe_softmax_row_block (float            *rows,
                                 size_t            n_rows,
                                 size_t            n,
                                 size_t            m0,
                                 bool              causal);

/* Fills out (n_rows, n_cols) with the logits of rows m0 .. m0 + n_rows - 1. */
typedef RpeStatus (*RpeLogitsRowsFunc) (size_t    m0,
                                        size_t    n_rows,
                                        size_t    n_cols,
                                        float    *out,
                                        void     *user_data);

/* Attention rows from a logits callback: calls func once per chunk of at most
 * `chunk` rows (0 = all n_rows at once), then softmaxes each chunk in place.
 * out (n_rows, n_cols).  The callback's status is passed through.  The
 * callback computes from finite inputs: a logit it gives that is not finite
 * where the causal mask keeps it is an overflow, RPE_ERROR_RANGE. */
RpeStatus rpe_attention_rows_func (size_t             n_cols,
                                   size_t             m0,
                                   size_t             n_rows,
                                   size_t             chunk,
                                   bool               causal,
                                   RpeLogitsRowsFunc  func,
                                   void              *user_data,
                                   float             *out,
                                   const RpeMonitor  *monitor);

typedef enum
{
  RPE_LOGITS_DOT,       /* q_m . k_n / sqrt(D) */
  RPE_LOGITS_APE,       /* (q_m + p_m) . (k_n + p_n) / sqrt(D), p sinusoidal */
  RPE_LOGITS_RELATIVE,  /* (q_m . k_n + q_m . E[m - n]) / sqrt(D)  (Shaw / skewing, rpe-skew.h) */
} RpeLogitsKind;

typedef struct
{
  RpeLogitsKind kind;
  size_t        n;             /* N */
  size_t        n_heads;       /* H */
  size_t        d;             /* D */
  const float  *q;             /* (N, H, D) */
  const float  *k;             /* (N, H, D) */
  const float  *rel;           /* RELATIVE only: E (2N-1, D), or (H, 2N-1, D) if rel_per_head */
  bool          rel_per_head;
  bool          inputs_checked; /* DOT / APE: q and k were found finite by rpe_logits_spec_check,
                                 * so a streamed call does not rescan all of k per block */
} RpeLogitsSpec;

/* RPE_OK if the spec's sizes are valid and q, k are finite (RPE_ERROR_NOT_FINITE otherwise):
 * the check rpe_logits_rows makes, once, for callers that then set inputs_checked. */
RpeStatus rpe_logits_spec_check (const RpeLogitsSpec *spec);

/* Rows m0 .. m0 + n_rows - 1 of head `head` of the logits (raw, before the softmax),
 * into out (n_rows, N).  Causal entries n > m are -INFINITY.  Finite q and k
 * whose logits overflow float32 (queries of 1e30): RPE_ERROR_RANGE. */
RpeStatus rpe_logits_rows (const RpeLogitsSpec *spec,
                           size_t               head,
                           size_t               m0,
                           size_t               n_rows,
                           bool                 causal,
                           float               *out,
                           const RpeMonitor    *monitor);

/* The same rows after the row softmax: attention weights, out (n_rows, N).
 * Identical (to float rounding) to the matching rows of the full map
 * rpe_softmax_rows (logits) for any blocking.  Extra memory O(N D). */
RpeStatus rpe_attention_rows (const RpeLogitsSpec *spec,
                              size_t               head,
                              size_t               m0,
                              size_t               n_rows,
                              bool                 causal,
                              float               *out,
                              const RpeMonitor    *monitor);

/* rpe_attention_rows threaded: the rows are cut into sub-blocks of about 1 MiB whose logits
 * are softmaxed while still in cache (logits and softmax fused per block), the sub-blocks
 * shared by rpe_parallel_threads () workers (each block's sgemm on its worker's thread, see
 * rpe-parallel.h).  The values of rpe_attention_rows (to float rounding), whatever the
 * thread count. */
RpeStatus rpe_attention_rows_parallel (const RpeLogitsSpec *spec,
                                       size_t               head,
                                       size_t               m0,
                                       size_t               n_rows,
                                       bool                 causal,
                                       float               *out,
                                       const RpeMonitor    *monitor);

/* ---- Streamed reduction of a map to an image ----
 *
 * Fills out (n_rows, N) with rows m0 .. m0 + n_rows - 1 of an N x N map (attention rows of
 * one head, a difference of two maps, ...). */
typedef RpeStatus (*RpeMapRowsFunc) (size_t    m0,
                                     size_t    n_rows,
                                     float    *out,
                                     void     *user_data);

/* Reduces an N x N map, streamed through func in blocks of whole pixel rows (about
 * block_floats floats, at least one pixel row), to a rows x cols image (rows, cols <= N):
 * pixel (i, j) is the mean (or the largest value, or the one of largest magnitude) of the entries (m, n) with
 * floor (m rows / N) = i and floor (n cols / N) = j, the binning of the explorer's attention
 * view.  The map's values must be finite.  Extra memory O(block_floats + N + cols); with
 * rows = cols = N the image is the map itself.  func's status is passed through. */
typedef enum
{
  RPE_MAP_REDUCE_MEAN,
  RPE_MAP_REDUCE_MAX,
  RPE_MAP_REDUCE_MAX_ABS,   /* the value of largest magnitude, sign kept */
} RpeMapReduce;

RpeStatus rpe_map_reduce (size_t            n,
                          size_t            rows,
                          size_t            cols,
                          RpeMapReduce      reduce,
                          size_t            block_floats,
                          RpeMapRowsFunc    func,
                          void             *user_data,
                          float            *image,
                          const RpeMonitor *monitor);

/* One head's attention map reduced to a rows x cols image without its rows: the values of
 * rpe_map_reduce over rpe_attention_rows (to float rounding; MAX_ABS is MAX, the weights
 * being >= 0).  For DOT logits the logits of a tile of rows x columns (a few hundred KiB)
 * go from the sgemm through an online softmax (running row max and sum, rescaled when the
 * max grows) straight into per-row bin sums (or bin maxima), so nothing of size N^2, nor
 * a block of whole rows, is written; causal tiles above the diagonal are skipped.  Tiles
 * whose logits are not finite (overflow) are redone through rpe_attention_rows.  Pixel
 * rows are shared by rpe_parallel_threads () workers round-robin; the image does not
 * depend on the thread count.  APE / RELATIVE specs go through rpe_map_reduce.  Extra
 * memory O(N + cols x 64) per worker. */
RpeStatus rpe_attention_map_reduce (const RpeLogitsSpec *spec,
                                    size_t               head,
                                    bool                 causal,
                                    size_t               rows,
                                    size_t               cols,
                                    RpeMapReduce         reduce,
                                    float               *image,
                                    const RpeMonitor    *monitor);

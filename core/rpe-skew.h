/* rpe-skew.h: exact relative attention logits (docs/math.md, section 6).
 *
 * Shaw, Uszkoreit, Vaswani 2018 ("Self-Attention with Relative Position
 * Representations") and the memory-efficient "skewing" of Huang et al. 2018
 * (Music Transformer):
 *
 *   logits[m, n] = (q_m . k_n + S_rel[m, n]) / sqrt(D),   S_rel[m, n] = q_m . E[m - n]
 *
 * Layouts (C order, one batch item):
 *   q, k   (N, H, D)
 *   E      shared: (2N-1, D), or per head: (H, 2N-1, D); row i holds tau = i - (N-1)
 *   out    full maps (H, N, N); row blocks (n_rows, N)
 *
 * The N x N x D tensor of Shaw et al. is never formed.  Rows are processed in
 * blocks of B <= RPE_SKEW_BLOCK rows m0 .. m1-1: the product Q_block E^T is
 * computed only over the relative positions that block needs (B + N - 1
 * columns; m1 columns when causal), then "skewed": row m of the product is read
 * back to front so that output column n picks the column of tau = m - n.
 * This gather is exactly what Huang's pad-one-column / reshape (N+1, N) /
 * drop-first-row trick achieves in a framework without index arithmetic.
 * Extra memory: one B x (B + N - 1) float block, nothing else.
 *
 * Causal convention: entries with n > m are set to -INFINITY (so that any
 * softmax gives them exactly 0); the relative part is then only ever read for
 * tau >= 0 (rows N-1 .. 2N-2 of E), but E must still have 2N-1 rows.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "rpe-status.h"

#define RPE_SKEW_BLOCK 64

typedef struct
{
  size_t       n;             /* N >= 1 */
  size_t       n_heads;       /* H >= 1 */
  size_t       d;             /* D >= 1 */
  const float *q;             /* (N, H, D), required */
  const float *k;             /* (N, H, D); NULL = relative part only (see below) */
  const float *rel;           /* E: (2N-1, D) shared, or (H, 2N-1, D) when rel_per_head */
  bool         rel_per_head;
  bool         causal;        /* n > m -> -INFINITY */
} RpeRelSpec;

/* Full logits (H, N, N): (Q K^T + S_rel) / sqrt(D).
 * With spec->k == NULL the output is the raw relative term S_rel[m, n] = q_m . E[m - n]
 * (not divided by sqrt(D)). */
RpeStatus rpe_rel_logits (const RpeRelSpec *spec,
                          float            *logits,
                          const RpeMonitor *monitor);

/* Rows m0 .. m0 + n_rows - 1 of head `head` of the same map, into out (n_rows, N).
 * Memory beyond `out`: O(min(n_rows, RPE_SKEW_BLOCK) x 2N + D) floats. */
RpeStatus rpe_rel_logits_rows (const RpeRelSpec *spec,
                               size_t            head,
                               size_t            m0,
                               size_t            n_rows,
                               float            *out,
                               const RpeMonitor *monitor);

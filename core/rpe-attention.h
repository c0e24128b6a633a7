/* rpe-attention.h: attention maps from logits, and the APE baseline (MATH.md sections 4, 9). */
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

/* rpe-sine-spe.h: sineSPE ("Variant I", docs/math.md, section 1) internals.
 *
 * Used by rpe-spe.c / rpe-template.c; the public entry points are in rpe-spe.h.
 * Arguments are assumed validated by the caller (params->method == RPE_SPE_SINE).
 */
#pragma once

#include <stddef.h>

#include "rpe-spe.h"

/* Codes Qbar, Kbar (N, H, D, R) from raw noise z (H, D, 2K, R). */
RpeStatus _rpe_sine_spe_codes (const RpeSpeParams *params,
                               size_t              n,
                               size_t              r,
                               const float        *z,
                               float              *qbar,
                               float              *kbar,
                               const RpeMonitor   *monitor);

/* Fused codes + gating + encoding (see rpe_spe_encode_fused; arguments checked there). */
RpeSpeEncodeFusedFunc _rpe_sine_spe_encode_fused;
/* Rows m0 .. m0 + rows - 1 of it (see rpe_spe_encode_fused_rows). */
RpeStatus _rpe_sine_spe_encode_fused_rows (const RpeSpeParams *params,
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

/* The same with the noise drawn from (seed, RPE_STREAM_SINE) by the workers (see
 * rpe_spe_encode_seeded). */
RpeSpeEncodeSeededFunc _rpe_sine_spe_encode_seeded;

/* Ungated lag profile of (h, d) in double:
 * out[i] = 1/(2K) sum_k lambda_k^2 cos(2 pi f_k tau + theta_k), tau = i - (N-1), i < 2N-1. */
RpeSpeLagsFunc _rpe_sine_spe_lags;

/* rpe-conv-spe.h: convSPE ("Variant II", docs/math.md, section 2).
 *
 * Qbar[m, c, r] = s * sum_{j<L} wq[c, j] z[r, c, m + L + j] (Kbar likewise with wk),
 * computed either directly, O(N L) per (c, r), or by overlap-save FFT correlation in
 * power-of-two blocks B >= 2L (two real blocks packed into one complex transform, the
 * query and key filters combined into one complex spectrum), O(N log B) per (c, r).
 * The automatic choice takes the FFT when L > RPE_CONV_SPE_FFT_MIN_KERNEL.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "rpe-spe.h"

#define RPE_CONV_SPE_FFT_MIN_KERNEL 64

typedef enum
{
  RPE_CONV_SPE_PATH_AUTO,
  RPE_CONV_SPE_PATH_DIRECT,
  RPE_CONV_SPE_PATH_FFT,
} RpeConvSpePath;

/* The path RPE_CONV_SPE_PATH_AUTO resolves to for length N and kernel L. */
RpeConvSpePath rpe_conv_spe_choose_path (size_t n,
                                         size_t kernel);

/* Codes Qbar, Kbar (N, H, D, R) from raw noise z (R, H*D, N+4L), with an explicit path.
 * Validates its arguments like rpe_spe_codes. */
RpeStatus rpe_conv_spe_codes (const RpeSpeParams *params,
                              size_t              n,
                              size_t              r,
                              const float        *z,
                              float              *qbar,
                              float              *kbar,
                              RpeConvSpePath      path,
                              const RpeMonitor   *monitor);

/* Fused codes + gating + encoding (see rpe_spe_encode_fused; arguments checked there). */
RpeSpeEncodeFusedFunc _rpe_conv_spe_encode_fused;

/* The same with the noise drawn on the fly from (seed, RPE_STREAM_CONV): equal to
 * rpe_spe_noise_fill + _rpe_conv_spe_encode_fused without the (R, H*D, N+4L) buffer. */
RpeSpeEncodeSeededFunc _rpe_conv_spe_encode_seeded;

/* Floors for `rpe bench`: the part of the fused seeded encoding's work (FFT path) that no
 * rearrangement of it can remove, on the same workers: every normal it draws (R H D segments of
 * N + L - 1, RPE_CONV_SPE_FLOOR_NORMALS), or every split transform it runs (per (channel, realization)
 * a forward per pair of blocks and an inverse per block, on buffers in L1, RPE_CONV_SPE_FLOOR_FFTS).
 * RPE_ERROR_INVALID_ARGUMENT when (n, L) would take the direct path. */
typedef enum
{
  RPE_CONV_SPE_FLOOR_NORMALS,
  RPE_CONV_SPE_FLOOR_FFTS
} RpeConvSpeFloor;

RpeStatus _rpe_conv_spe_floor (const RpeSpeParams *params,
                               size_t              n,
                               size_t              r,
                               RpeConvSpeFloor     what);

/* The same for a part of a larger draw: the channels of params are channels first_channel ..
 * of a draw of draw_channels channels (R, draw_channels, N+4L), e.g. one head of H. */
RpeStatus _rpe_conv_spe_encode_seeded_part (const RpeSpeParams *params,
                                            size_t              n,
                                            size_t              r,
                                            uint64_t            seed,
                                            size_t              draw_channels,
                                            size_t              first_channel,
                                            const float        *eps,
                                            const float        *q,
                                            const float        *k,
                                            float              *qhat,
                                            float              *khat,
                                            const RpeMonitor   *monitor);

/* Ungated lag profile of channel c = h*D + d in double:
 * out[i] = sum_j wq[c, j] wk[c, j + tau], tau = i - (N-1); exactly 0 for |tau| >= L. */
RpeSpeLagsFunc _rpe_conv_spe_lags;

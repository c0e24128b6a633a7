/* rpe-conv-spe-2d.h: 2-D convSPE for images (docs/math.md, section 2, "2-D convSPE is
 * the same with 2-D filters and 2-D noise"; the authors' ConvSPE (ndim = 2)).
 *
 * Grid N = N1 x N2, positions flattened row-major: p = i * N2 + j.
 * Parameters: RpeSpeParams with method RPE_SPE_CONV, kernel = L1 (filter rows),
 * kernel_cols = L2 (filter columns), wq / wk (H*D, L1*L2) row-major, the query
 * filter wq being the reference's conv_k.weight (H*D, 1, L1, L2), as in 1-D.
 * The 1-D entry points (rpe-spe.h) refuse such parameters
 * (rpe_spe_params_validate: RPE_ERROR_UNSUPPORTED); use these.
 *
 * Noise (the reference layout, derived from the 1-D rule N + 4L per axis):
 *   z (R, H*D, N1 + 4 L1, N2 + 4 L2), raw N(0,1), C order, channel c = h*D + d;
 *   the seeded draw is (seed, RPE_STREAM_CONV) at element offsets 0, 1, ... of
 *   that layout.
 * Codes (valid 2-D cross-correlation, cropped after (L1, L2)), (N, H, D, R):
 *   Qbar[(i,j), c, r] = s * sum_{a<L1, b<L2} wq[c, a, b] z[r, c, i + L1 + a, j + L2 + b]
 *   Kbar likewise with wk;  s = 1 / (R D)^(1/4).
 * Template (what sqrt(R D)/R Qbar Kbar^T converges to), lag (di, dj) = (i - i', j - j'):
 *   P_c((i,j), (i',j')) = sum_{a,b} wq[c, a, b] wk[c, a + di, b + dj]
 *   (indices outside the filter count 0: exactly 0 for |di| >= L1 or |dj| >= L2);
 *   gated: (1 - g) P + g.
 * Lag images (2 N1 - 1, 2 N2 - 1): index (di + N1 - 1, dj + N2 - 1).
 * Gating, encoding and empirical templates are the 1-D ones with N = N1 N2
 * (rpe_conv_spe_2d_gate_codes, rpe_spe_encode, rpe_spe_empirical_template_rows).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpe-conv-spe.h"
#include "rpe-spe.h"

/* Initialises params for 2-D convSPE: zeroed wq, wk (H*D, L1*L2), and a gate when asked. */
RpeStatus rpe_conv_spe_2d_params_init (RpeSpeParams *params,
                                       size_t        n_heads,
                                       size_t        n_features,
                                       size_t        kernel_rows,
                                       size_t        kernel_cols,
                                       bool          gated);
/* Seeded parameters as rpe_spe_params_random (wq, wk ~ N(0,1) / sqrt(L1 L2)). */
RpeStatus rpe_conv_spe_2d_params_random (RpeSpeParams *params,
                                         uint64_t      seed);
bool      rpe_conv_spe_is_2d (const RpeSpeParams *params);
/* Sizes, finiteness and the gate range, as rpe_spe_params_validate does for 1-D. */
RpeStatus rpe_conv_spe_2d_validate (const RpeSpeParams *params);

/* Floats in one draw: R * H*D * (N1 + 4 L1) * (N2 + 4 L2). */
RpeStatus rpe_conv_spe_2d_noise_size (const RpeSpeParams *params,
                                      size_t              n1,
                                      size_t              n2,
                                      size_t              r,
                                      size_t             *out_count);
RpeStatus rpe_conv_spe_2d_noise_fill (const RpeSpeParams *params,
                                      size_t              n1,
                                      size_t              n2,
                                      size_t              r,
                                      uint64_t            seed,
                                      float              *z);

/* The path AUTO resolves to: FFT when L1 * L2 > RPE_CONV_SPE_FFT_MIN_KERNEL. */
RpeConvSpePath rpe_conv_spe_2d_choose_path (size_t n1,
                                            size_t n2,
                                            size_t kernel_rows,
                                            size_t kernel_cols);

/* Codes Qbar, Kbar (N1 N2, H, D, R) before gating, from raw noise z.  DIRECT is the
 * sum above, O(N L1 L2) per (c, r); FFT correlates in the frequency domain over an
 * M1 x M2 >= (N1 + L1 - 1) x (N2 + L2 - 1) grid (row r2c + column c2c transforms,
 * rpe-fft.h), O(N log N) per (c, r). */
RpeStatus rpe_conv_spe_2d_codes (const RpeSpeParams *params,
                                 size_t              n1,
                                 size_t              n2,
                                 size_t              r,
                                 const float        *z,
                                 float              *qbar,
                                 float              *kbar,
                                 RpeConvSpePath      path,
                                 const RpeMonitor   *monitor);

/* Gating in place, as rpe_spe_gate_codes with N = N1 N2 (eps raw (H, D, R)). */
RpeStatus rpe_conv_spe_2d_gate_codes (const RpeSpeParams *params,
                                      size_t              n1,
                                      size_t              n2,
                                      size_t              r,
                                      const float        *eps,
                                      float              *qbar,
                                      float              *kbar);

/* Lag image of (h, d): out ((2 N1 - 1) x (2 N2 - 1)); gated gives (1 - g) P + g. */
RpeStatus rpe_conv_spe_2d_template_lags (const RpeSpeParams *params,
                                         size_t              h,
                                         size_t              d,
                                         size_t              n1,
                                         size_t              n2,
                                         bool                gated,
                                         float              *out);
/* Rows m0 .. m0 + n_rows - 1 of the (N, N) template whose lag image is `lags`:
 * out[t * N + p'] = lags[(i - i' + N1 - 1) (2 N2 - 1) + (j - j' + N2 - 1)], p = m0 + t. */
RpeStatus rpe_conv_spe_2d_template_rows (const float *lags,
                                         size_t       n1,
                                         size_t       n2,
                                         size_t       m0,
                                         size_t       n_rows,
                                         float       *out);

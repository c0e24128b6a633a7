/* rpe-noise.h: noise schemes for SPE's codes (issue 16): variance reduction beyond i.i.d.
 *
 * The codes of cell (h, d) are linear in that cell's noise coordinates; each realisation r
 * draws a vector z_r of p coordinates:
 *   sine  p = 2K (the rows 2k, 2k+1 of z (H, D, 2K, R)), + 1 with a gate (eps (H, D, R));
 *   conv  p = N + L - 1: the samples L .. N+2L-2 of the channel's stretch of z (R, H*D, N+4L)
 *         that the valid correlation reads (the other 3L - 1 samples never reach a code and stay
 *         i.i.d.), + 1 with a gate.
 * Every scheme keeps E[z_r z_r^T] = I, so the empirical template stays unbiased:
 *   iid         z_r i.i.d. N(0, I): the draw of rpe_spe_noise_fill / rpe_spe_gate_noise_fill,
 *               bit for bit.
 *   orthogonal  Haar frames: the p x R matrix Z = [z_1 .. z_R] is sqrt(max(p, R)) times
 *               min(p, R) orthonormal rows (R >= p) or columns (R < p), uniformly distributed,
 *               obtained by Gram-Schmidt on the i.i.d. draw.  For R >= p, sum_r z_r z_r^T = R I
 *               exactly: sine SPE's empirical template equals the analytic one (float rounding).
 *   antithetic  z_{2i+1} = -z_{2i} (an odd last realisation stays i.i.d.).
 *   sobol       z_r[i] = Phi^-1(u_r[i]) for i < min(p, 40): the Sobol' points 0 .. R-1 of
 *               dimension min(p, 40) (GSL gsl_qrng_sobol, 30 bits) under a random digital shift
 *               (XOR with 30 random bits per dimension, seeded per cell) evaluated at the centre
 *               of their 2^-30 cell; coordinates beyond 40 (GSL's largest Sobol' dimension) stay
 *               i.i.d. ("padding").  Each point is uniform on the 2^-30 grid, so the bias is
 *               below the float resolution.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpe-spe.h"
#include "rpe-status.h"

typedef enum
{
  RPE_NOISE_IID = 0,
  RPE_NOISE_ORTHOGONAL,
  RPE_NOISE_ANTITHETIC,
  RPE_NOISE_SOBOL,
} RpeNoiseScheme;

#define RPE_NOISE_N_SCHEMES 4
#define RPE_NOISE_SOBOL_MAX_DIM 40

/* "iid", "orthogonal", "antithetic", "sobol"; NULL for an unknown value. */
const char *rpe_noise_scheme_to_string   (RpeNoiseScheme  scheme);
bool        rpe_noise_scheme_from_string (const char     *text,
                                          RpeNoiseScheme *out);

/* The p x R block of one cell, row-major doubles, i.i.d. N(0,1) on entry, the scheme's draw
 * on return.  `cell` (h*D + d) and `seed` seed Sobol's digital shift. */
RpeStatus rpe_noise_transform (RpeNoiseScheme scheme,
                               uint64_t       seed,
                               uint64_t       cell,
                               size_t         p,
                               size_t         r,
                               double        *block);

/* Applies the scheme in place to one cell's i.i.d. noise (a no-op for iid):
 *   sine: z_cell = the cell's (2K, R) block;  conv: z_cell = the cell's stretch of
 *   realisation 0, realisation i at z_cell + i * stride (stride N+4L in a one-cell layout,
 *   H*D*(N+4L) in the full draw);  eps_cell = the cell's R gate values, or NULL (ungated). */
RpeStatus rpe_noise_apply_cell (RpeNoiseScheme      scheme,
                                const RpeSpeParams *params,
                                size_t              n,
                                size_t              r,
                                uint64_t            seed,
                                size_t              cell,
                                float              *z_cell,
                                size_t              stride,
                                float              *eps_cell);

/* The whole draw: z (rpe_spe_noise_size floats) and, when eps != NULL (and params->gate),
 * eps (H, D, R), filled by rpe_spe_noise_fill / rpe_spe_gate_noise_fill and then transformed
 * cell by cell.  With RPE_NOISE_IID this is exactly those two calls. */
RpeStatus rpe_noise_fill (RpeNoiseScheme      scheme,
                          const RpeSpeParams *params,
                          size_t              n,
                          size_t              r,
                          uint64_t            seed,
                          float              *z,
                          float              *eps);

/* The scheme on a draw already made (z and, if not NULL, eps as rpe_noise_fill lays them out). */
RpeStatus rpe_noise_apply (RpeNoiseScheme      scheme,
                           const RpeSpeParams *params,
                           size_t              n,
                           size_t              r,
                           uint64_t            seed,
                           float              *z,
                           float              *eps);

/* rpe-fit.h: fitting SPE to another relative bias (issue 16; docs/math.md, sections 1-4, 10).
 *
 * What is fitted: per head h, the unit-content logit profile
 *
 *     l_h(tau) = sum_d Ptilde_{h,d}(tau) / sqrt(D),     |tau| < N,
 *
 * to a target b_h(tau), up to a per-head constant (softmax ignores it).  Profiles are
 * (H, 2N-1) doubles, index i <-> tau = i - (N-1), like the template lags of rpe-spe.h.
 *
 * The quality of a fit is the relative Frobenius error of the mean-removed profiles,
 *
 *     E = |(l - mean_tau l) - (b - mean_tau b)|_F / |b - mean_tau b|_F,
 *
 * over all heads and |tau| < N (the mean is taken per head over the 2N-1 lags).
 *
 * Sine (section 1): l_h is a sum of D*K cosines a cos(2 pi f tau + theta) with
 * a = (1-g) lambda^2 / (2K sqrt(D)) >= 0, f in [0, 0.5] and free phase.  The start is the
 * linear least-squares fit on the natural frequency grid j/(2N-1) (an orthogonal basis
 * over the 2N-1 lags: the largest D*K DFT bins), refined by Levenberg-Marquardt (GSL
 * multifit_nlinear) on frequencies, cosine and sine amplitudes and the constant; when
 * D*K >= N-1 the grid alone is exact.
 * Conv (section 2): a channel's profile is the correlation of its two L-tap filters, so
 * l_h vanishes (up to the constant) for |tau| >= L; the constant is the mean of the target
 * there and the window |tau| < min(L, N) is matched exactly with D >= 2 (one channel
 * carries tau >= 0 with a delta query filter, one tau <= 0 with a delta key filter; both
 * filters of a pair scaled to the same norm), or by alternating least squares with D = 1.
 * Gated fits (section 3) fix g = sigmoid(RPE_FIT_GATE_RAW) and scale the code by
 * 1/sqrt(1-g), since the gate only adds a constant.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpe-spe.h"
#include "rpe-status.h"

/* The raw gate written by gated fits: g = sigmoid(-2) ~ 0.119 (the reference's mean init). */
#define RPE_FIT_GATE_RAW (-2.0f)

/* ---- targets: out is (H, 2N-1), index i <-> tau = i - (N-1) ------------------------- */

/* ALiBi: b_h(tau) = -slope_h |tau|; slopes NULL means 2^(-8(h+1)/H).  A slope of 0
 * is RPE_ERROR_DEGENERATE (a constant bias), a negative one RPE_ERROR_INVALID_ARGUMENT. */
RpeStatus rpe_fit_target_alibi (size_t        n_heads,
                                size_t        n,
                                const double *slopes,
                                double       *out);

/* T5's _relative_position_bucket for relative_position = key - query = -tau, computed in
 * float32 like the reference (torch) code.  Bidirectional: half the buckets for
 * tau < 0 (key after query), offset by num_buckets / 2.  Returns a bucket in
 * 0 .. num_buckets-1.  num_buckets >= 2 (>= 4 when bidirectional), and max_distance larger
 * than max_exact = (bidirectional ? num_buckets / 2 : num_buckets) / 2. */
size_t    rpe_fit_t5_bucket (long   tau,
                             bool   bidirectional,
                             size_t num_buckets,
                             size_t max_distance);
/* T5: b_h(tau) = table[bucket(tau), h], table (num_buckets, H) as T5's
 * relative_attention_bias.weight. */
RpeStatus rpe_fit_target_t5 (size_t       n_heads,
                             size_t       n,
                             const float *table,
                             size_t       num_buckets,
                             size_t       max_distance,
                             bool         bidirectional,
                             double      *out);

/* KERPLE: log: -r1 log(1 + r2 |tau|);  power: -r1 |tau|^r2  (r1 > 0, r2 > 0; power: r2 <= 2).
 * r1, r2: one value per head. */
RpeStatus rpe_fit_target_kerple (size_t        n_heads,
                                 size_t        n,
                                 bool          power,
                                 const double *r1,
                                 const double *r2,
                                 double       *out);

/* Centred weights w (rows, 2M-1) (rows = 1 shared by all heads, or H), index j <-> tau = j - (M-1),
 * cropped to |tau| < N (N <= M). */
RpeStatus rpe_fit_target_centred (size_t       n_heads,
                                  size_t       n,
                                  const float *w,
                                  size_t       rows,
                                  size_t       m,
                                  double      *out);

/* ---- profiles and error ---------------------------------------------------------- */

/* l_h(tau) of params (effective values), (H, 2N-1), in double from the formulas of
 * docs/math.md, sections 1-3 (gated: the gate's (1-g) and +g when params->gate != NULL). */
RpeStatus rpe_fit_profile (const RpeSpeParams *params,
                           size_t              n,
                           bool                gated,
                           double             *out);

/* E above; 0 when the target is constant and the fit is too, +inf when only the target is
 * constant. */
double    rpe_fit_relative_error (size_t        n_heads,
                                  size_t        n,
                                  const double *target,
                                  const double *fit);

/* ---- fitting --------------------------------------------------------------------- */

typedef struct
{
  RpeSpeMethod method;
  size_t       n_heads;     /* H */
  size_t       n_features;  /* D */
  size_t       size;        /* K (sine) or L (conv) */
  bool         gated;
  size_t       max_iter;    /* LM / ALS iterations; 0 = default (40) */
} RpeFitConfig;

/* RPE_OK if target (H, 2N-1) can be fitted: finite (RPE_ERROR_NOT_FINITE), and neither
 * constant in every head nor so small that float32 parameters cannot reproduce it (its
 * largest deviation from a head's mean below FLT_MIN): RPE_ERROR_DEGENERATE, since
 * the softmax ignores a constant and the relative error E would divide by zero; nor
 * deviating by more than RPE_FIT_MAX_DEVIATION (RPE_ERROR_RANGE). */
RpeStatus rpe_fit_target_check (size_t        n_heads,
                                size_t        n,
                                const double *target);

/* The largest deviation from a head's mean a target may have: the fitted gains grow like its
 * square root, and SPE parameters above 1e12 overflow float32 in the templates. */
#define RPE_FIT_MAX_DEVIATION 1e20

/* What is wrong with a target (H, 2N-1), for a message that names it. */
typedef enum
{
  RPE_FIT_TARGET_FINE,
  RPE_FIT_TARGET_NOT_FINITE, /* NaN or infinity at (*head, *index), *value */
  RPE_FIT_TARGET_ZERO,       /* every value is 0 (or below float32's range: *value the largest) */
  RPE_FIT_TARGET_CONSTANT,   /* every head is constant (*value: head 0's constant) */
  RPE_FIT_TARGET_TINY,       /* the largest deviation from a head's mean, *value, is below FLT_MIN */
  RPE_FIT_TARGET_HUGE,       /* head *head deviates by *value, above RPE_FIT_MAX_DEVIATION */
} RpeFitTargetFault;

/* The fault of target (H, 2N-1) (RPE_FIT_TARGET_FINE if none), with where and what (each out
 * pointer may be NULL).  rpe_fit_target_check refuses exactly these. */
RpeFitTargetFault
rpe_fit_target_fault (size_t n_heads, size_t n, const double *target, size_t *head, size_t *index, double *value);

/* The memory rpe_fit_spe works in beside the target and the result (overflow-checked): for a
 * check of everything a fit needs before anything is computed. */
RpeStatus rpe_fit_work_bytes (const RpeFitConfig *cfg, size_t n, size_t *bytes);

/* Fits params (initialised by the call; effective values) to target (H, 2N-1),
 * refused as rpe_fit_target_check refuses.  Progress goes per head; cancellable. */
RpeStatus rpe_fit_spe (const RpeFitConfig *cfg,
                       size_t              n,
                       const double       *target,
                       RpeSpeParams       *params,
                       const RpeMonitor   *monitor);

/* ---- raw values (as the reference code stores them) -------------------------------- */

/* Inverse transforms: freqs = logit(2f), gains = softplus^-1(lambda), gate = logit(g), in
 * double, clamped so that the raw float is finite (f to [1e-12, 0.5 - 1e-12] and lambda
 * to >= 1e-30 before inverting; values that close to the bounds read back as the bound). */
double    rpe_fit_raw_freq (double f);
double    rpe_fit_raw_gain (double lambda);
double    rpe_fit_raw_gate (double g);
/* The as-coded forward transforms, in double (docs/math.md, section 1). */
double    rpe_fit_sigmoid  (double x);
double    rpe_fit_softplus (double x);

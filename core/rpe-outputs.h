/* rpe-outputs.h: what attention does to values V, for one head (docs/math.md, sections 4-5).
 *
 * Two comparisons, each a pair (reference, SPE estimate) of outputs Y (N, Dv):
 *
 *   RPE_OUTPUTS_SOFTMAX   the question, "exact relative attention against SPE linear
 *     attention":  reference Y = softmax(l) V, l the exact logits of docs/math.md, section 4
 *     (l(m, n) = sum_d q[m,d] k[n,d] Ptilde_d(m - n) / sqrt(D)), computed in row blocks (never
 *     N x N);  estimate Y = linear attention (docs/math.md, section 5) with the feature map phi on the encoded
 *     Qhat, Khat of one draw, O(N M Dv).  These are two different models: the difference does
 *     NOT vanish as R grows (phi(Qhat) . phi(Khat) does not estimate exp(l)).  It shows how far
 *     SPE linear attention is from the softmax model it replaces, and how that drifts with N.
 *
 *   RPE_OUTPUTS_KERNEL    the statement that does converge: with the identity feature map and no
 *     normalisation, reference Y = L V with L[m, n] = l(m, n) (n > m dropped when causal), and
 *     estimate Y = Lhat V = Qhat (Khat^T V) / sqrt(R) (causal: running sums), computed linearly.
 *     Since E[lhat(m, n)] = l(m, n) (docs/math.md, section 4) and Y is linear in the logits,
 *     E[Lhat V] = L V exactly, and Lhat is a mean over R i.i.d. realisations (the columns r of the
 *     codes and gate noise), so the error of one draw falls like 1/sqrt(R) and the mean of many
 *     draws converges to L V.
 *
 * For an impulse V (channel c one at position p, zero elsewhere), column c of Y is column p of
 * the operator: softmax(l) (SOFTMAX reference), the implied map of the linear model
 * (row-normalised phi(Qhat) phi(Khat)^T, SOFTMAX estimate), L, or Lhat = Qhat Khat^T / sqrt(R)
 * for the same draw (KERNEL).
 *
 * Per-position error: err[m] = |Y_est[m] - Y_ref[m]|_2 / |Y_ref[m]|_2 (NaN where the reference
 * row is exactly 0, e.g. before an impulse in causal attention).
 *
 * The SPE draw of head h under a seed is the slice of the module's full draw (all heads) under
 * that seed, as the explorer's attention view uses it: the same seed shows the same draw.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpe-linear-attention.h"
#include "rpe-spe.h"
#include "rpe-status.h"

typedef enum
{
  RPE_OUTPUTS_SOFTMAX,   /* softmax(l) V  vs  linear attention with phi on Qhat, Khat */
  RPE_OUTPUTS_KERNEL,    /* L V  vs  Lhat V = Qhat (Khat^T V) / sqrt(R)  (unbiased) */
  RPE_OUTPUTS_N_COMPARES,
} RpeOutputsCompare;

typedef enum
{
  RPE_VALUES_IMPULSE,    /* channel c: 1 at position p_c, 0 elsewhere */
  RPE_VALUES_SWEEP,      /* channel c: sin(pi m^2 / (2N) + 2 pi c / Dv), a chirp from 0 to 0.5 cycles/step */
  RPE_VALUES_NOISE,      /* N(0, 1), seeded (stream RPE_STREAM_VALUES) */
  RPE_VALUES_ARRAY,      /* from an array (a .npy file) */
  RPE_VALUES_N_KINDS,
} RpeValuesKind;

/* The largest Dv the outputs accept (channels). */
#define RPE_OUTPUTS_MAX_CHANNELS 4096

/* Fills v (N, Dv) for IMPULSE, SWEEP or NOISE.  IMPULSE: positions[c % n_positions] (each
 * < N) is the impulse of channel c; with n_positions == 0 the impulses are spread evenly,
 * p_c = (c + 1) N / (Dv + 1).  RPE_ERROR_INVALID_ARGUMENT for a position >= N. */
RpeStatus rpe_outputs_values (RpeValuesKind  kind,
                              size_t         n,
                              size_t         dv,
                              const size_t  *positions,
                              size_t         n_positions,
                              uint64_t       seed,
                              float         *v);

/* v (N, Dv) from an array of shape (src_n, Dv) (src_heads == 0) or (src_n, H, Dv) (its head
 * `head`); positions cycle when src_n < N.  NaN or infinite values: RPE_ERROR_NOT_FINITE. */
RpeStatus rpe_outputs_values_from_array (const float *src,
                                         size_t       src_n,
                                         size_t       src_heads,
                                         size_t       dv,
                                         size_t       head,
                                         size_t       n,
                                         float       *v);

typedef struct
{
  const RpeSpeParams *params;       /* the module, all heads */
  size_t              head;
  size_t              n;            /* N */
  size_t              r;            /* R */
  bool                gated;        /* use the gate (when params->gate != NULL) */
  bool                causal;
  RpeFeatureMap       feature_map;  /* SOFTMAX estimate (Performer: 64 orthogonal features, W seeded by the draw's seed) */
  RpeOutputsCompare   compare;
  const float        *q;            /* (N, D) content of the head */
  const float        *k;            /* (N, D) */
  const float        *v;            /* (N, Dv) */
  size_t              dv;
  size_t              block;        /* rows per block of the reference; 0: 128 */
} RpeOutputsSpec;

/* The reference output y (N, Dv), in blocks of spec->block rows (memory O(block N)). */
RpeStatus rpe_outputs_reference (const RpeOutputsSpec *spec,
                                 float                *y,
                                 const RpeMonitor     *monitor);

/* Qhat, Khat (N, R) of head spec->head for the draw `seed` (the slice of the module's draw). */
RpeStatus rpe_outputs_encode_head (const RpeOutputsSpec *spec,
                                   uint64_t              seed,
                                   float                *qhat,
                                   float                *khat,
                                   const RpeMonitor     *monitor);

/* The estimate y (N, Dv) for the draw `seed` (never forms N x N). */
RpeStatus rpe_outputs_estimate (const RpeOutputsSpec *spec,
                                uint64_t              seed,
                                float                *y,
                                const RpeMonitor     *monitor);

/* err[m] as above, for m < N. */
void      rpe_outputs_position_error (const float *reference,
                                      const float *estimate,
                                      size_t       n,
                                      size_t       dv,
                                      double      *err);
/* |Y_est - Y_ref|_F / |Y_ref|_F over rows m0 .. m1 - 1 (NaN if the reference is 0 there). */
double    rpe_outputs_relative_error (const float *reference,
                                      const float *estimate,
                                      size_t       dv,
                                      size_t       m0,
                                      size_t       m1);

/* Everything the Outputs view and `rpe export outputs` show. */
typedef struct
{
  RpeOutputsCompare compare;
  bool              causal;
  size_t            n, dv, r, head, n_draws, train_length;
  uint64_t          seed;
  float            *values;      /* V (N, Dv) */
  float            *reference;   /* (N, Dv) */
  float            *estimate;    /* (N, Dv), the draw `seed` */
  float            *difference;  /* estimate - reference */
  double           *error_mean;  /* (N) mean over the draws seed .. seed + n_draws - 1 of err[m] */
  double           *error_sd;    /* (N) their standard deviation (0 for one draw) */
  double           *estimate_mean; /* (N, Dv) mean of the estimates over the draws */
  double            error;       /* relative Frobenius error of the draw `seed`, all rows */
  double            error_before;  /* mean over draws of the relative error of rows < N_train (NaN: none) */
  double            error_after;   /* ... of rows >= N_train (NaN: none) */
  double            error_of_mean; /* relative Frobenius error of estimate_mean */
  double            error_draws_mean; /* mean over the draws of the relative error, all rows */
  double            error_draws_sd;   /* their standard deviation (0 for one draw) */
} RpeOutputs;

/* Computes the reference once and n_draws >= 1 estimates (seeds seed, seed + 1, ...).
 * out is initialised by the call (free with rpe_outputs_clear, also after a failure).
 * spec->v is copied into out->values. */
RpeStatus rpe_outputs_compute (const RpeOutputsSpec *spec,
                               uint64_t              seed,
                               size_t                n_draws,
                               size_t                train_length,
                               RpeOutputs           *out,
                               const RpeMonitor     *monitor);
void      rpe_outputs_clear   (RpeOutputs *out);

const char *rpe_outputs_compare_name (RpeOutputsCompare compare);   /* "softmax", "kernel" */
const char *rpe_values_kind_name     (RpeValuesKind     kind);      /* "impulse", "sweep", "noise", "npy" */

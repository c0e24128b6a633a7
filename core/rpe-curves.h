/* rpe-curves.h: analysis curves (docs/math.md, section 9) as tables of numbers.
 *
 * Every curve is a table: named columns of doubles, all with the same number
 * of rows, plus metadata lines ('# key: value' at the top of the CSV), e.g.
 * a fitted slope or N_train.  The tables feed both the plots and the CSV
 * writer.
 *
 * Curves:
 *   1. template profiles   P(tau) for tau = -(N-1) .. N-1 (SPE, LRPE, FastRPB);
 *   2. estimator error     |Phat - Ptilde|_F / |Ptilde|_F against R (with the
 *                          fitted log-log slope), and row-wise against m;
 *   3. extrapolation       per query position m of a sequence of N_max
 *                          identical tokens: mean attended distance, entropy,
 *                          translation invariance and monotonicity.
 *
 * ---- The PE metrics (curve 3), precisely ----
 *
 * Identical word probing (Wang et al., "On position embeddings in BERT",
 * ICLR 2021), as used by the SPE paper (Liutkus et al. 2021, Fig. 4 and
 * appendix D.3): every position holds the same content, q_m = k_n = c
 * (c = 1/sqrt(D) * ones by default, or the caller's vector), so whatever
 * varies across the map comes from the positional scheme alone.  As the SPE
 * paper does, the two PE metrics are computed on the UNNORMALISED attention
 *
 *     u(m, n) = exp(l(m, n))        (l = the model's logits)
 *
 * so that neither the row softmax nor the causal mask makes rows differ.
 * (Internally u is scaled by the constant exp(-l(0, 0)) of each model and
 * head, which changes neither metric and keeps exp() in range.)
 *
 * Window: offsets k = m - n in O = {0, 1, ..., W-1} (causal), or
 * O = {-(W-1), ..., W-1} (non-causal); W defaults to min(N_train, 64) and
 * must be <= N_train.  The offsets valid at m are O(m) = {k in O :
 * 0 <= m - k < N_max}.  The profile of row m is p_m(k) = u(m, m - k).
 *
 *   translation invariance  The mean profile over the training range is
 *       pbar(k) = mean { u(m, m - k) : 0 <= m < N_train, 0 <= m - k < N_train },
 *   and
 *       TI(m) = sqrt (sum_{k in O(m)} (p_m(k) - pbar(k))^2 / sum_{k in O(m)} pbar(k)^2),
 *   the relative L2 deviation of row m's offset profile from the mean
 *   training-range profile (Wang et al.: "the distances of two arbitrary
 *   tau-offset position embeddings should be identical").  0 means perfectly
 *   translation invariant; lower is better.
 *
 *   monotonicity            rho(m) = Spearman rank correlation (average ranks
 *   for ties) between the distance |k| and p_m(k) over k in O(m), and
 *       M(m) = (1 + rho(m)) / 2   in [0, 1],
 *   so 0 means attention strictly decreases with distance (Wang et al.'s
 *   "neighbouring positions attend more"), 1 strictly increases; lower is
 *   better.  rho = 0 (M = 1/2) when p_m is constant over the window; M is
 *   NaN when O(m) has fewer than two offsets (m = 0, causal).
 *
 *   mean attended distance  sum_n a(m, n) |m - n|,
 *   entropy                 -sum_n a(m, n) log a(m, n)   (natural log),
 *   with a = the row-normalised attention over all N_max keys (causal:
 *   n <= m), i.e. the row softmax of l.
 *
 * Models (logits l(m, n) for q_m = k_n = c, per head h):
 *   APE             (c + p_m) . (c + p_n) / sqrt(D), p sinusoidal (rpe_logits_rows, APE), or
 *                   learned (ape_table; p_m = 0 for m >= ape_positions);
 *   SPE exact       sum_d c_d^2 Ptilde_hd(m - n) / sqrt(D) (docs/math.md, section 4, exact
 *                   logits; the gated template when `gated`);
 *   SPE estimate    Qhat_m . Khat_n / sqrt(R) from one seeded draw of R realisations
 *                   (rpe_spe_encode_fused; gated codes when `gated`);
 *   LRPE            softmax attention on LRPE-encoded content ("RoPE style"):
 *                   l = Re ((Lambda(m) P c)^H (Lambda(n) P c)) / sqrt(D);
 *   FastRPB         the operator applied to V is B = A + W, A the row softmax of
 *                   c.c / sqrt(D) (causal masked) and W[m, n] = w_{m-n} (causal:
 *                   0 for n > m).  Distance and entropy use the weights
 *                   |B(m, n)| / sum_n |B(m, n)|; the PE metrics use u(m, n) = B(m, n)
 *                   itself (W is already an unnormalised score; A, with identical
 *                   content, is 1/N_max non-causal and 1/(m+1) causal).
 *
 * All computations take a monitor (cancel + progress) and check every size.
 * Rows are streamed in blocks: nothing of size N_max x N_max is allocated.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpe-lrpe.h"
#include "rpe-noise.h"
#include "rpe-spe.h"
#include "rpe-status.h"

/* "every head" / "every feature" (or the mean over them) */
#define RPE_CURVE_ALL ((size_t) -1)

/* ---- Tables ---- */

typedef struct _RpeCurveTable RpeCurveTable;

/* A table with n_rows rows and no columns yet. */
RpeCurveTable *rpe_curve_table_new        (size_t          n_rows,
                                           RpeStatus      *status);
void           rpe_curve_table_free       (RpeCurveTable  *table);   /* NULL-safe */
size_t         rpe_curve_table_n_rows     (const RpeCurveTable *table);
size_t         rpe_curve_table_n_cols     (const RpeCurveTable *table);
/* Appends a column (values: n_rows doubles, or NULL for zeros); the name must be
 * non-empty, unique, without ',', '"', '#' or control characters.  *index (may be
 * NULL) receives the new column's index. */
RpeStatus      rpe_curve_table_add_column (RpeCurveTable  *table,
                                           const char     *name,
                                           const double   *values,
                                           size_t         *index);
const char    *rpe_curve_table_column_name (const RpeCurveTable *table,
                                            size_t               col);
/* The column's n_rows values (writable), or NULL if col is out of range. */
double        *rpe_curve_table_column     (RpeCurveTable  *table,
                                           size_t          col);
const double  *rpe_curve_table_column_const (const RpeCurveTable *table,
                                             size_t               col);
/* Index of the named column, or -1. */
long           rpe_curve_table_find       (const RpeCurveTable *table,
                                           const char          *name);
/* Metadata: a key (non-empty, no ':' or control characters) and a value (no
 * control characters); setting an existing key replaces its value. */
RpeStatus      rpe_curve_table_set_meta   (RpeCurveTable  *table,
                                           const char     *key,
                                           const char     *value);
/* The value printed with %.9g in the C locale ("nan", "inf", "-inf" for those). */
RpeStatus      rpe_curve_table_set_meta_double (RpeCurveTable *table,
                                                const char    *key,
                                                double         value);
size_t         rpe_curve_table_n_meta     (const RpeCurveTable *table);
const char    *rpe_curve_table_meta_key   (const RpeCurveTable *table,
                                           size_t               i);
/* The value of key, or NULL. */
const char    *rpe_curve_table_get_meta   (const RpeCurveTable *table,
                                           const char          *key);

/* Writes the CSV atomically (a temporary file in the same directory, fsync,
 * rename; mode 0644):
 *     # key: value          one line per metadata entry, in insertion order
 *     name0,name1,...       the header row
 *     v,v,...               n_rows lines, %.9g in the C locale whatever the
 *                           process locale; NaN as "nan", infinities as "inf"/"-inf"
 * RPE_ERROR_IO on failure (*error_number, if not NULL, gets errno); the target is
 * then left untouched. */
RpeStatus      rpe_curve_table_write_csv  (const RpeCurveTable *table,
                                           const char          *path,
                                           int                 *error_number);

/* ---- Fitting ---- */

/* Least squares line log(y) = a + b log(x) over n >= 2 points with x, y > 0:
 * *slope = b, *intercept = a, *slope_se = the standard error of b,
 * sqrt (SSR / (n - 2) / Sxx) (NaN when n == 2).  Any output may be NULL.
 * RPE_ERROR_INVALID_ARGUMENT for n < 2, a non-positive or non-finite value, or
 * all x equal. */
RpeStatus rpe_curve_fit_loglog (const double *x,
                                const double *y,
                                size_t        n,
                                double       *slope,
                                double       *intercept,
                                double       *slope_se);

/* ---- 1. Template profiles: columns against tau ---- */

/* A table of 2N - 1 rows with the column "tau" = -(N-1) .. N-1. */
RpeCurveTable *rpe_curve_profile_new      (size_t          n,
                                           RpeStatus      *status);
/* Adds the column `name`: the analytic SPE template P_hd(tau) (gated: (1-g) P + g)
 * of head h and feature d, or with d == RPE_CURVE_ALL the mean over the head's
 * D features.  N is taken from the table ((rows + 1) / 2). */
RpeStatus rpe_curve_profile_add_spe       (RpeCurveTable      *table,
                                           const char         *name,
                                           const RpeSpeParams *params,
                                           size_t              h,
                                           size_t              d,
                                           bool                gated,
                                           const RpeMonitor   *monitor);
/* Adds the LRPE-induced template rpe_lrpe_template (q, k: D floats each, NULL =
 * unit all-ones content). */
RpeStatus rpe_curve_profile_add_lrpe      (RpeCurveTable      *table,
                                           const char         *name,
                                           const RpeLrpe      *lrpe,
                                           const float        *q,
                                           const float        *k);
/* Adds FastRPB weights w (2N - 1 floats, index i <-> tau = i - (N-1)) through
 * rpe_fastrpb_lag_profile (causal zeroes tau < 0). */
RpeStatus rpe_curve_profile_add_fastrpb   (RpeCurveTable      *table,
                                           const char         *name,
                                           const float        *w,
                                           bool                causal);

/* ---- 2. Estimator error ---- */

typedef struct
{
  const RpeSpeParams *params;
  size_t              n;          /* N (templates are N x N) */
  bool                gated;      /* codes and template gated (needs params->gate) */
  size_t              head;       /* h, or RPE_CURVE_ALL */
  size_t              feature;    /* d, or RPE_CURVE_ALL */
  size_t              n_seeds;    /* S >= 1: draws with seeds seed, seed + 1, ... */
  uint64_t            seed;
  RpeNoiseScheme      noise_scheme; /* rpe-noise.h; 0 = RPE_NOISE_IID, the plain draw */
} RpeCurveErrorConfig;

/* For each R in r_list (n_r values >= 1) and every selected cell (h, d) and seed:
 *     e = |Phat_hd - Ptilde_hd|_F / |Ptilde_hd|_F     (N x N matrices)
 * where Phat is the empirical template (docs/math.md, section 4) of the draw
 * (the same draw as rpe_spe_noise_fill / rpe_spe_gate_noise_fill with that seed
 * and R, restricted to the cell), and Ptilde the analytic (gated) template.
 * Outputs (n_r each, any may be NULL): mean[i] = the mean of e over seeds and
 * cells, rms[i] = sqrt of the mean of e^2, sd[i] = the sample standard
 * deviation of e (0 with one sample).  A cell whose Ptilde is zero gives NaN. */
RpeStatus rpe_curve_error_vs_r   (const RpeCurveErrorConfig *config,
                                  const size_t              *r_list,
                                  size_t                     n_r,
                                  double                    *mean,
                                  double                    *rms,
                                  double                    *sd,
                                  const RpeMonitor          *monitor);
/* Row-wise error of the same draws for one R, per query position m (n values
 * each): e_m = |Phat[m, :] - Ptilde[m, :]|_2 / |Ptilde[m, :]|_2, mean, rms and sd over
 * seeds and cells as above. */
RpeStatus rpe_curve_error_vs_position (const RpeCurveErrorConfig *config,
                                       size_t                     r,
                                       double                    *mean,
                                       double                    *rms,
                                       double                    *sd,
                                       const RpeMonitor          *monitor);

/* ---- 3. Extrapolation ---- */

typedef enum
{
  RPE_CURVE_MODEL_APE,
  RPE_CURVE_MODEL_SPE_EXACT,
  RPE_CURVE_MODEL_SPE_ESTIMATE,
  RPE_CURVE_MODEL_LRPE,
  RPE_CURVE_MODEL_FASTRPB,
} RpeCurveModelKind;

typedef struct
{
  RpeCurveModelKind   kind;
  const char         *name;          /* column prefix (table function) */
  const RpeSpeParams *spe;           /* SPE_*: its H and D must match the config */
  bool                gated;         /* SPE_*: use the gate (needs spe->gate) */
  size_t              realizations;  /* SPE_ESTIMATE: R */
  uint64_t            seed;          /* SPE_ESTIMATE: the code and gate noise draw */
  const RpeLrpe      *lrpe;          /* LRPE: its D must match the config */
  const float        *bias;          /* FASTRPB: w, (2 N_max - 1) or (H, 2 N_max - 1) */
  bool                bias_per_head;
  const float        *ape_table;     /* APE: a learned absolute embedding (ape_positions, H * D) added
                                        to queries and keys at positions m < ape_positions (nothing
                                        beyond: those positions were never learned), or NULL for
                                        the sinusoidal APE of docs/math.md, section 9 */
  size_t              ape_positions;
} RpeCurveModel;

typedef struct
{
  size_t       n_train;     /* N_train >= 1 */
  size_t       n_max;       /* N_max >= 1 (rows and keys of the evaluation) */
  size_t       n_heads;     /* H */
  size_t       n_features;  /* D */
  size_t       window;      /* W, 1 .. N_train; 0 = min(N_train, 64) */
  bool         causal;
  const float *content;     /* D floats (c), or NULL = 1/sqrt(D) * ones */
  size_t       block_rows;  /* rows per block; 0 = 64 */
} RpeCurveExtrapolationConfig;

/* The four metrics of one model and head for m = 0 .. N_max - 1 (N_max values
 * each, any may be NULL).  head may be RPE_CURVE_ALL: each metric is then the
 * mean over the H heads. */
RpeStatus rpe_curve_extrapolation (const RpeCurveExtrapolationConfig *config,
                                   const RpeCurveModel               *model,
                                   size_t                             head,
                                   double                            *distance,
                                   double                            *entropy,
                                   double                            *translation,
                                   double                            *monotonicity,
                                   const RpeMonitor                  *monitor);

/* A table with N_max rows: "m", then for each model "<name>_distance",
 * "<name>_entropy", "<name>_ti", "<name>_mono"; metadata n_train, n_max,
 * window, causal. */
RpeCurveTable *rpe_curve_extrapolation_table (const RpeCurveExtrapolationConfig *config,
                                              const RpeCurveModel               *models,
                                              size_t                             n_models,
                                              size_t                             head,
                                              RpeStatus                         *status,
                                              const RpeMonitor                  *monitor);

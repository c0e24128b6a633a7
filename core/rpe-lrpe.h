/* rpe-lrpe.h: Linearized Relative Positional Encoding (docs/math.md, section 7).
 *
 * Qin et al., "Linearized Relative Positional Encoding", TMLR 2023.  The
 * relative matrix W_s = P^H Lambda(s) P is never formed: a vector x at
 * position s is mapped to Lambda(s) P x, so that for a query q at position s
 * and a key k at position t
 *
 *     (Lambda(s) P q)^H (Lambda(t) P k) = q^H P^H Lambda(t - s) P k.
 *
 * This is the reference module (Urpe (core_matrix, p_matrix, max_positions,
 * embedding_dim, theta_type, theta_learned, householder_learned)) as
 * docs/math.md, section 7 writes it; its forward is Lambda(s) P x.
 *
 * Layouts (C order, one batch item):
 *   x, q, k, features   (N, H, D)
 *   encoded             (N, H, W)  W = rpe_lrpe_out_width () = D, or 2 d' when complex
 *   values, outputs     (N, H, Dv)
 *   attention maps      (H, N, N)  row m = query position, column n = key position
 *   lag profiles        (2N - 1)   index i <-> tau = m - n = i - (N - 1)
 *
 * Complex vectors.  The Fourier P and the complex-exponential Lambda make the
 * encoded vector complex.  It is stored as two planes, [real (d') | imag (d')],
 * so W = 2 d', d' = rpe_lrpe_components () (D//2 + 1 for the Fourier P, else D).  Then for a = ar + i ai and b = br + i bi
 *
 *     Re (a^H b) = ar . br + ai . bi,
 *
 * i.e. the attention score Re(q^H W k) is the plain dot product of the two
 * 2D-wide real rows: linear attention and the maps below run unchanged on
 * them.  (The imaginary part of a^H b, ar . bi - ai . br, is dropped, as in
 * the reference code, which takes the real part.)  A real Lambda (rotation,
 * mixed, permutation) acts on both planes alike; the complex exponential
 * multiplies z_j = re_j + i im_j by e^{i s a_j}.
 *
 * P (applied first, to the whole D-vector; inputs are real):
 *   IDENTITY
 *   HOUSEHOLDER   z = x - 2 (x . v) v.  v ~ N(0, I) drawn from (seed,
 *                 RPE_STREAM_LRPE) offset 0 and normalised once (the
 *                 reference's construction), or the caller's v (a checkpoint):
 *                 used as is (a stored fixed v), or, with householder_learned,
 *                 as v / (|v| + 1e-6) (the reference's learned v).
 *   PERMUTATION   out[j] = x[p[j]], p a seeded Fisher-Yates shuffle
 *                 (rpe_rng_u64, stream RPE_STREAM_LRPE, indices from 2^40), or the caller's p.
 *   ODD_EVEN      out[j] = x[p[j]], p[2k] = k, p[2k+1] = ceil(D/2) + k  (the
 *                 reference's gather, "2k -> k, 2k+1 -> ceil(D/2) + k"; it is a
 *                 permutation of all D dims, also for odd D).
 *   FOURIER       rfft (x, norm = "ortho"): X_k = D^(-1/2) sum_j x_j e^{-2 pi i j k / D}
 *                 for k = 0..D//2 only (d' = D//2 + 1 complex components; FFTW r2c
 *                 via rpe-fft.h).  Lambda, e and theta then work on these d'.
 *   DCT           orthonormal DCT-II y_k = c_k sum_j x_j cos(pi k (2j + 1) / (2D)),
 *                 c_0 = sqrt(1/D), c_k = sqrt(2/D): FFTW's REDFT10 with orthonormal
 *                 scaling, computed through a length-D real FFT (Makhoul's
 *                 reordering) so that the plan comes from rpe-fft.h, whose
 *                 planner runs under the shared mutex.
 *
 * Lambda(s) (s = position, any integer), acting on the d' components z = P x:
 *   ROTATION      (types 1/2) on the first e dims, e = d' or d' - 1 (d' odd):
 *                 interleaved pairs (x_{2k}, x_{2k+1}) rotated by angle s a_k:
 *                 x -> x cos(s a_k) + x_half sin(s a_k), x_half = (-x1, x0, -x3, x2, ...).
 *                 With the Fourier P this real rotation acts on complex z.
 *   MIXED         the same rotation on the first e = d'/2 (integer division)
 *                 dims, rounded up to even; the rest pass through.
 *   COMPLEX_EXP   z_j -> z_j e^{i s a_j} for every j < e = d' (all D dims
 *                 when D is odd, for a non-Fourier P); output [real | imag].
 *                 Every dim has its own frequency: e values a_0..a_{e-1}.
 *   PERMUTATION   (type 3) Lambda(s) = Pi^s: out[j] = x[pi^s(j)] for a fixed
 *                 seeded permutation pi of all d' dims (rpe_rng_u64, stream
 *                 RPE_STREAM_LRPE, indices from 2^41), as the reference's
 *                 repeated gather; pi^s is evaluated by cycle decomposition in
 *                 O(D) for any s (negative s gives the inverse powers).
 *                 No theta.  (It needs no pairs, so it permutes all D dims.)
 *
 * theta (the frequencies a), with n_theta values (ROTATION/MIXED: e/2; COMPLEX_EXP: e):
 *   A  ROTATION: a_k = 10000^(-2k/e), k = 0..e/2-1 (RoPE)
 *      COMPLEX:  a_j = 10000^(-2j/e), j = 0..e-1 (the reference's complex_exp)
 *   B  ROTATION: a_k = (pi/2) / (N (e/2)) k, k = 1..e/2
 *      COMPLEX:  a_j = (pi/2) / (N e) (j + 1), j = 0..e-1  (same range, e frequencies)
 *   C  ROTATION: a_k = (pi/2) / (N k), k = 1..e/2
 *      COMPLEX:  a_j = (pi/2) / (N (j + 1)), j = 0..e-1
 *   CUSTOM   the caller's n_theta values (a learned `theta`: (1, 1, D//2) for
 *            ROTATION, (1, 1, D) for COMPLEX_EXP; it must have exactly
 *            n_theta values, as the reference's reshape requires).
 *   The reference defines only type A for COMPLEX_EXP; B and C there are
 *   this app's extension (same range, e frequencies).
 * N is the config's `length` (the reference uses the sequence length it was
 * trained/run at); it is fixed at construction and does not change with the
 * number of positions later encoded.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpe-status.h"

typedef enum
{
  RPE_LRPE_P_IDENTITY,
  RPE_LRPE_P_HOUSEHOLDER,
  RPE_LRPE_P_PERMUTATION,
  RPE_LRPE_P_ODD_EVEN,
  RPE_LRPE_P_FOURIER,
  RPE_LRPE_P_DCT,
} RpeLrpeP;

typedef enum
{
  RPE_LRPE_LAMBDA_ROTATION,
  RPE_LRPE_LAMBDA_MIXED,
  RPE_LRPE_LAMBDA_COMPLEX_EXP,
  RPE_LRPE_LAMBDA_PERMUTATION,
} RpeLrpeLambda;

typedef enum
{
  RPE_LRPE_THETA_A,
  RPE_LRPE_THETA_B,
  RPE_LRPE_THETA_C,
  RPE_LRPE_THETA_CUSTOM,
} RpeLrpeTheta;

typedef struct
{
  size_t         dim;          /* D >= 1 */
  size_t         length;       /* N >= 1, used by theta types B and C */
  RpeLrpeP       p;
  RpeLrpeLambda  lambda;
  RpeLrpeTheta   theta_kind;
  uint64_t       seed;         /* Householder v and the permutations */
  const float   *householder_v;  /* D values or NULL (drawn and normalised) */
  bool           householder_learned;  /* v / (|v| + 1e-6) instead of v as is */
  const uint32_t *p_perm;      /* D values or NULL (drawn): P = PERMUTATION */
  const uint32_t *lambda_perm; /* d' values or NULL (drawn): Lambda = PERMUTATION */
  const float   *theta;        /* n_theta values when theta_kind == CUSTOM */
  size_t         n_theta;
} RpeLrpeConfig;

typedef struct _RpeLrpe RpeLrpe;

/* The learned Householder normalisation v / (|v| + eps). */
#define RPE_LRPE_HOUSEHOLDER_EPS 1e-6

/* d', the number of components of P x (D//2 + 1 for FOURIER, else D). */
size_t    rpe_lrpe_p_dims       (RpeLrpeP      p,
                                 size_t        dim);
/* Number of dims Lambda acts on (e) and number of theta values it needs
 * (0 for the permutation Lambda), for d' = pdim components. */
size_t    rpe_lrpe_lambda_dims  (RpeLrpeLambda lambda,
                                 size_t        pdim);
size_t    rpe_lrpe_theta_count  (RpeLrpeLambda lambda,
                                 size_t        pdim);

/* The reference's `permutation` buffer T (n_positions rows of width d,
 * C order, int64 as stored): T[0] = id, T[s][j] = T[s-1][pi[j]].  Checks
 * that every row is that power of one permutation and writes pi (d values;
 * the identity when n_positions == 1).  RPE_ERROR_INVALID_ARGUMENT when T is
 * not such a table (*bad_row, if not NULL, names the first bad row). */
RpeStatus rpe_lrpe_perm_from_table (const int64_t *table,
                                    size_t         n_positions,
                                    size_t         d,
                                    uint32_t      *pi,
                                    size_t        *bad_row);

/* Validates the config (sizes, finite values, bijective permutations, a
 * nonzero v) and builds the object.  NULL and *status on failure: a zero
 * Householder v is RPE_ERROR_DEGENERATE (it has no direction). */
RpeLrpe  *rpe_lrpe_new          (const RpeLrpeConfig *config,
                                 RpeStatus           *status);
void      rpe_lrpe_free         (RpeLrpe *lrpe);   /* NULL-safe */

size_t    rpe_lrpe_dim          (const RpeLrpe *lrpe);  /* D */
size_t    rpe_lrpe_out_width    (const RpeLrpe *lrpe);  /* D, or 2 d' when complex */
size_t    rpe_lrpe_components   (const RpeLrpe *lrpe);  /* d' */
bool      rpe_lrpe_is_complex   (const RpeLrpe *lrpe);
/* The parameters in use (after drawing), for display and saving.
 * theta: n_theta floats; v: D floats, the effective v (only for HOUSEHOLDER);
 * perms: D values (p_perm) or d' values (lambda_perm), only for the matching kind.  RPE_ERROR_INVALID_ARGUMENT
 * if the object has no such parameter. */
size_t    rpe_lrpe_n_theta      (const RpeLrpe *lrpe);
RpeStatus rpe_lrpe_get_theta    (const RpeLrpe *lrpe,
                                 double        *theta);
RpeStatus rpe_lrpe_get_householder_v (const RpeLrpe *lrpe,
                                      double        *v);
RpeStatus rpe_lrpe_get_p_perm   (const RpeLrpe *lrpe,
                                 uint32_t      *perm);
RpeStatus rpe_lrpe_get_lambda_perm (const RpeLrpe *lrpe,
                                    uint32_t      *perm);

/* out[i, h, :] = Lambda(pos0 + i) P x[i, h, :] for i < n.  x (n, H, D),
 * out (n, H, W).  The object is read-only here: concurrent calls are safe. */
RpeStatus rpe_lrpe_encode       (const RpeLrpe    *lrpe,
                                 size_t            n,
                                 size_t            n_heads,
                                 int64_t           pos0,
                                 const float      *x,
                                 float            *out,
                                 const RpeMonitor *monitor);

/* The induced relative template for display: out[i] = Re (q^H W_{n - m} k),
 * the score of a query q at position m against a key k at position n, for
 * tau = m - n = i - (n_len - 1), i < 2 n_len - 1 (so it is q^H W_{t-s} k with
 * s = m, t = n, t - s = -tau).  q, k: D floats each; NULL means the unit
 * all-ones content (every entry 1/sqrt(D), so out at tau = 0 is 1 when
 * q = k = NULL). */
RpeStatus rpe_lrpe_template     (const RpeLrpe *lrpe,
                                 size_t         n_len,
                                 const float   *q,
                                 const float   *k,
                                 float         *out);

typedef enum
{
  RPE_LRPE_NORM_NONE,         /* numerator only: sum_n s(m, n) v_n */
  RPE_LRPE_NORM_DENOMINATOR,  /* divide by sum_n s(m, n) (docs/math.md, section 5) */
  RPE_LRPE_NORM_LAYER,        /* numerator, then layer norm over Dv per (m, h), as the reference */
} RpeLrpeNorm;

/* Denominators with |den| below this are replaced by +-RPE_LRPE_DEN_EPS (with
 * LRPE the scores are not positive, so the plain denominator can vanish). */
#define RPE_LRPE_DEN_EPS 1e-6
/* Layer norm: (y - mean) / sqrt(var + eps), biased variance, no affine. */
#define RPE_LRPE_LN_EPS  1e-5

/* Linear attention (never forms the N x N map), O(N W Dv) per head, with
 * scores s(m, n) = phi_q'[m] . phi_k'[n]:
 *   - lrpe != NULL ("LRPE after the feature map", the reference's placement):
 *     phi_q' = Lambda(m) P phi_q[m], phi_k' = Lambda(n) P phi_k[n]
 *     (positions 0..N-1, D of lrpe == f);
 *   - lrpe == NULL: the features are used as given.  For "LRPE before the
 *     feature map" the caller encodes q and k with rpe_lrpe_encode, applies
 *     its feature map to the encoded rows, and passes those here.
 * phi_q, phi_k (N, H, f); v, y (N, H, dv).  Causal: only n <= m, as running sums. */
RpeStatus rpe_lrpe_linear_attention (const RpeLrpe    *lrpe,
                                     size_t            n,
                                     size_t            n_heads,
                                     size_t            f,
                                     size_t            dv,
                                     const float      *phi_q,
                                     const float      *phi_k,
                                     const float      *v,
                                     bool              causal,
                                     RpeLrpeNorm       norm,
                                     float            *y,
                                     const RpeMonitor *monitor);

/* The implied attention map (display): out[h, m, n] = s(m, n) as above
 * (causal: 0 for n > m); with row_normalise each row is divided by its sum
 * (guarded as RPE_LRPE_DEN_EPS).  out (H, N, N): O(N^2) memory, caller's. */
RpeStatus rpe_lrpe_attention_map (const RpeLrpe    *lrpe,
                                  size_t            n,
                                  size_t            n_heads,
                                  size_t            f,
                                  const float      *phi_q,
                                  const float      *phi_k,
                                  bool              causal,
                                  bool              row_normalise,
                                  float            *out,
                                  const RpeMonitor *monitor);

/* Rows m0 .. m0 + n_rows - 1 of one head's map above from its encoded features (the
 * rpe_lrpe_encode output, or the features themselves without LRPE): qe, ke (N rows of W
 * values, row i at i * stride), out (n_rows, N).  rpe_lrpe_attention_map is this over every
 * row of every head; the explorer draws the rows its viewport shows. */
RpeStatus rpe_lrpe_attention_map_rows (size_t       n,
                                       size_t       width,
                                       size_t       stride,
                                       const float *qe,
                                       const float *ke,
                                       bool         causal,
                                       bool         row_normalise,
                                       size_t       m0,
                                       size_t       n_rows,
                                       float       *out);

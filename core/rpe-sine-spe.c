/* rpe-sine-spe.c: sineSPE, the periodic "Variant I" (docs/math.md, section 1).
 *
 * For each (h, d) the codes are a small matrix product (SPE paper, eq. 19-20):
 *   Qbar_d = s * Omega_q (N x 2K) * z_d (2K x R),
 *   Omega_q[m, 2k]   = lambda_k / sqrt(2K) * cos(2 pi f_k m + theta_k),
 *   Omega_q[m, 2k+1] = lambda_k / sqrt(2K) * sin(2 pi f_k m + theta_k),
 * Omega_k likewise with theta_k = 0, s = 1 / (R D)^(1/4).
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "rpe-alloc.h"
#include "rpe-gemm-private.h"
#include "rpe-parallel.h"
#include "rpe-rng.h"
#include "rpe-sine-spe.h"

#pragma GCC diagnostic ignored "-Wpsabi"

/* Phases are exact (double sin/cos) every ANCHOR positions and advanced by a
 * double-precision rotation in between: error ~ ANCHOR * 1e-16, far below float.
 * The query phase is the key phase rotated by theta (same double precision). */
#define ANCHOR 64
/* Rows per block: the codes of a block of positions are written together
 * (TLB/cache friendly for the (N, H, D, R) layout). */
#define BLOCK_CODES 64
#define BLOCK_FUSED 128
/* doubles of per-call work space per sine in fill_omega */
#define WORK_PER_SINE 7

/* Omega rows m0 .. m1-1 of channel c into omega_q/omega_k (row i = m - m0, leading
 * dimension ld, columns col0 .. col0 + 2K - 1), row i multiplied by fq[i] / fk[i]
 * (NULL: 1).  work holds WORK_PER_SINE * K doubles.  The loop over sines is innermost
 * so the K phase recurrences run independently. */
static void
fill_omega (const RpeSpeParams *params,
            size_t              c,
            size_t              m0,
            size_t              m1,
            float              *omega_q,
            float              *omega_k,
            size_t              ld,
            size_t              col0,
            const float        *fq,
            const float        *fk,
            double             *work)
{
  const size_t K = params->n_sines;
  const double norm = 1.0 / sqrt (2.0 * (double) K);
  double *w = work, *cw = work + K, *sw = work + 2 * K, *cth = work + 3 * K;
  double *sth = work + 4 * K, *ck = work + 5 * K, *sk = work + 6 * K;
  for (size_t k = 0; k < K; k++)
    {
      w[k] = 2.0 * M_PI * (double) params->freqs[c * K + k];
      cw[k] = cos (w[k]);
      sw[k] = sin (w[k]);
      cth[k] = cos ((double) params->offsets[c * K + k]);
      sth[k] = sin ((double) params->offsets[c * K + k]);
    }

  for (size_t a0 = m0; a0 < m1; a0 += ANCHOR)
    {
      size_t a1 = a0 + ANCHOR < m1 ? a0 + ANCHOR : m1;

      for (size_t k = 0; k < K; k++)
        {
          double base = w[k] * (double) a0;

          ck[k] = cos (base);
          sk[k] = sin (base);
        }
      for (size_t m = a0; m < a1; m++)
        {
          const double gq = (fq != NULL ? fq[m - m0] : 1.0f) * norm;
          const double gk = (fk != NULL ? fk[m - m0] : 1.0f) * norm;
          float *oq = omega_q + (m - m0) * ld + col0;
          float *ok = omega_k + (m - m0) * ld + col0;

          for (size_t k = 0; k < K; k++)
            {
              const double lam = params->gains[c * K + k];
              const double c0 = ck[k], s0 = sk[k];
              /* query phase = key phase + theta */
              const double cq = c0 * cth[k] - s0 * sth[k];
              const double sq = s0 * cth[k] + c0 * sth[k];

              oq[2 * k] = (float) (lam * gq * cq);
              oq[2 * k + 1] = (float) (lam * gq * sq);
              ok[2 * k] = (float) (lam * gk * c0);
              ok[2 * k + 1] = (float) (lam * gk * s0);
              ck[k] = c0 * cw[k] - s0 * sw[k];
              sk[k] = s0 * cw[k] + c0 * sw[k];
            }
        }
    }
}

RpeStatus
_rpe_sine_spe_codes (const RpeSpeParams *params,
                     size_t              n,
                     size_t              r,
                     const float        *z,
                     float              *qbar,
                     float              *kbar,
                     const RpeMonitor   *monitor)
{
  const size_t hd = params->n_heads * params->n_features;
  const size_t k2 = 2 * params->n_sines;
  const size_t hdr = hd * r;
  const float s = (float) rpe_spe_code_scale (params->n_features, r);
  const size_t rows = n < BLOCK_CODES ? n : BLOCK_CODES;
  float *omega_q = NULL, *omega_k = NULL;
  double *work = NULL;
  size_t count;
  RpeStatus st;

  if (!rpe_size_mul (rows, k2, &count))
    return RPE_ERROR_OVERFLOW;
  if ((omega_q = rpe_alloc (count, sizeof (float), &st)) == NULL
      || (omega_k = rpe_alloc (count, sizeof (float), &st)) == NULL
      || (work = rpe_alloc (params->n_sines, WORK_PER_SINE * sizeof (double), &st)) == NULL)
    goto out;

  for (size_t m0 = 0; m0 < n; m0 += BLOCK_CODES)
    {
      size_t m1 = m0 + BLOCK_CODES < n ? m0 + BLOCK_CODES : n;

      if (rpe_monitor_cancelled (monitor))
        {
          st = RPE_ERROR_CANCELLED;
          break;
        }
      for (size_t c = 0; c < hd; c++)
        {
          const float *zc = z + c * k2 * r;

          fill_omega (params, c, m0, m1, omega_q, omega_k, k2, 0, NULL, NULL, work);
          /* (B x 2K) (2K x R) into the strided B x R slice of (N, H, D, R) */
          _rpe_gemm (m1 - m0, r, k2, s, omega_q, k2, 1, zc, r, false, qbar + m0 * hdr + c * r, hdr);
          _rpe_gemm (m1 - m0, r, k2, s, omega_k, k2, 1, zc, r, false, kbar + m0 * hdr + c * r, hdr);
        }
      rpe_monitor_progress (monitor, (double) m1 / (double) n);
    }

out:
  rpe_free (omega_q);
  rpe_free (omega_k);
  rpe_free (work);
  return st;
}

/* Fused path.  For head h, Qhat_h = sum_d diag(q_d) Qbar'_d, and Qbar_d = s Omega_d z_d, so
 *   Qhat_h = s [diag(q_d sqrt(1-g_d)) Omega_d, q_d sqrt(g_d)]_d (N x (D 2K + D))
 *            [z_h ; eps_h] ((D 2K + D) x R),
 * where z_h (H, D, 2K, R) and eps_h (H, D, R) are contiguous stacks: one compute-bound product
 * per block of rows through the core's own kernels (rpe-gemm-private.h), no (N, H, D, R)
 * buffer.  The features are written transposed ((D 2K + D) rows of BLOCK_FUSED positions), so
 * that their phases are computed 8 positions at a time: for each (d, k) the key phase
 * omega (m0 + j) (the query's plus theta) is exact (double cos/sin) at the block's first
 * position m0 and advanced by double-precision rotations, 8 lanes at a time (error about
 * 16 x 2^-53, far below float).
 *
 * Bitwise: a row's features depend on its position and its block's start (a multiple of
 * BLOCK_FUSED) only, and the product sums each element in one fixed order, so any range of
 * rows starting at a whole block, any thread count and either FMA build of the product give
 * the same bits.  This file is compiled without floating-point contraction (core/meson.build),
 * so the phases do not depend on the instruction set either. */
#define PHASE_LANES 8
#define XT_LD (BLOCK_FUSED + 16)
typedef double sine_v8d __attribute__ ((vector_size (PHASE_LANES * 8)));
typedef float sine_v8f __attribute__ ((vector_size (PHASE_LANES * 4)));

typedef struct
{
  sine_v8d cj, sj;          /* cos, sin of omega j, j < PHASE_LANES */
  double   c8, s8;          /* cos, sin of omega PHASE_LANES */
  double   cb, sb;          /* cos, sin of omega BLOCK_FUSED */
  double   cth, sth;        /* cos, sin of theta */
  double   ac, as;          /* cos, sin of omega m0, m0 the current block's first position */
  double   lam;             /* lambda / sqrt(2K) */
} SinePhase;

typedef struct
{
  const RpeSpeParams *params;
  size_t              m_begin, n, r;   /* rows m_begin .. n-1; q, k, qhat, khat start at row m_begin */
  const float        *z, *eps, *q, *k;   /* z NULL: drawn from seed */
  float              *qhat, *khat;
  const RpeMonitor   *monitor;
  uint64_t            seed;
  RpeStatus           status[256];
} SineFusedJob;

/* The anchors of the next block. */
static void
sine_phases_next (SinePhase *ph,
                  size_t     count)
{
  for (size_t i = 0; i < count; i++)
    {
      SinePhase *p = ph + i;
      const double c = p->ac * p->cb - p->as * p->sb;

      p->as = p->as * p->cb + p->ac * p->sb;
      p->ac = c;
    }
}

/* The phase tables of head h (D K entries), anchors at position m0 (a multiple of
 * BLOCK_FUSED): the anchor of block j is block 0's (omega 0) advanced by j rotations of
 * omega BLOCK_FUSED, so it does not depend on where a range of rows starts (error about
 * j 2^-52, 1e-12 at a million positions). */
static void
sine_phases (const RpeSpeParams *params,
             size_t              h,
             size_t              m0,
             SinePhase          *ph)
{
  const size_t D = params->n_features, K = params->n_sines;
  const double norm = 1.0 / sqrt (2.0 * (double) K);

  for (size_t d = 0; d < D; d++)
    for (size_t k = 0; k < K; k++)
      {
        const size_t i = (h * D + d) * K + k;
        const double omega = 2.0 * M_PI * (double) params->freqs[i];
        SinePhase *p = ph + d * K + k;

        p->lam = (double) params->gains[i] * norm;
        for (int j = 0; j < PHASE_LANES; j++)
          {
            p->cj[j] = cos (omega * j);
            p->sj[j] = sin (omega * j);
          }
        p->c8 = cos (omega * PHASE_LANES);
        p->s8 = sin (omega * PHASE_LANES);
        p->cb = cos (omega * BLOCK_FUSED);
        p->sb = sin (omega * BLOCK_FUSED);
        p->cth = cos ((double) params->offsets[i]);
        p->sth = sin ((double) params->offsets[i]);
        p->ac = 1.0;
        p->as = 0.0;
      }
  for (size_t m = 0; m < m0; m += BLOCK_FUSED)
    sine_phases_next (ph, D * K);
}

static inline __attribute__ ((always_inline)) sine_v8d
splat8d (double x)
{
  sine_v8d z = { 0 };

  return x - z;   /* x - (+0) is x for every x: folded to a broadcast */
}

/* dst[j * ldd + i] = src[i * lds + j], i, j < 8: three rounds of shuffles */
static inline __attribute__ ((always_inline)) void
transpose8 (const float *src,
            size_t       lds,
            float       *dst,
            size_t       ldd)
{
#ifdef __clang__
  /* clang (the fuzz build) has the shuffle with its indices as arguments */
#define SINE_SHUF(a, b, ...) __builtin_shufflevector (a, b, __VA_ARGS__)
#else
  typedef int32_t sine_v8i __attribute__ ((vector_size (32)));
#define SINE_SHUF(a, b, ...) __builtin_shuffle (a, b, (sine_v8i) { __VA_ARGS__ })
#endif
#define lo1 0, 8, 1, 9, 4, 12, 5, 13
#define hi1 2, 10, 3, 11, 6, 14, 7, 15
#define lo2 0, 1, 8, 9, 4, 5, 12, 13
#define hi2 2, 3, 10, 11, 6, 7, 14, 15
#define lo3 0, 1, 2, 3, 8, 9, 10, 11
#define hi3 4, 5, 6, 7, 12, 13, 14, 15
  sine_v8f r[8], t[8], u[8];

  for (int i = 0; i < 8; i++)
    memcpy (&r[i], src + i * lds, sizeof r[i]);
  for (int i = 0; i < 8; i += 2)
    {
      t[i] = SINE_SHUF (r[i], r[i + 1], lo1);
      t[i + 1] = SINE_SHUF (r[i], r[i + 1], hi1);
    }
  for (int i = 0; i < 8; i += 4)
    for (int j = 0; j < 2; j++)
      {
        u[i + j] = SINE_SHUF (t[i + j], t[i + j + 2], lo2);
        u[i + j + 2] = SINE_SHUF (t[i + j], t[i + j + 2], hi2);
      }
  for (int j = 0; j < 4; j++)
    {
      r[j] = SINE_SHUF (u[j], u[j + 4], lo3);
      r[j + 4] = SINE_SHUF (u[j], u[j + 4], hi3);
    }
#undef SINE_SHUF
#undef lo1
#undef hi1
#undef lo2
#undef hi2
#undef lo3
#undef hi3
  /* after the rounds r[j] holds column 0 2 1 3 4 6 5 7 [j] */
  for (int j = 0; j < 8; j++)
    memcpy (dst + (size_t) ((j & 4) | ((j & 1) << 1) | ((j & 2) >> 1)) * ldd, &r[j], sizeof r[j]);
}

/* The cos and sin rows of G consecutive sines (ph[0 .. G-1]) for positions m0 + i, i < bpad
 * (a multiple of PHASE_LANES): out[(2 g) BLOCK_FUSED + i] = coef[i] lambda_g cos (omega_g (m0 + i)
 * [+ theta_g]), out[(2 g + 1) BLOCK_FUSED + i] the same with sin. */
static inline __attribute__ ((always_inline)) void
sine_phase_group (const int        G,
                  const SinePhase *ph,
                  size_t           m0,
                  size_t           bpad,
                  bool             query,
                  const double    *coef,
                  float           *out)
{
  sine_v8d lc[4], ls[4], lam[4], c8[4], s8[4];

#pragma GCC unroll 4
  for (int g = 0; g < G; g++)
    {
      const SinePhase *p = ph + g;
      /* the block's first position: the key's anchor, the query's turned by theta */
      const double ac = query ? p->ac * p->cth - p->as * p->sth : p->ac;
      const double as = query ? p->as * p->cth + p->ac * p->sth : p->as;
      const sine_v8d c0 = splat8d (ac), s0 = splat8d (as);

      lam[g] = splat8d (p->lam);
      c8[g] = splat8d (p->c8);
      s8[g] = splat8d (p->s8);
      lc[g] = c0 * p->cj - s0 * p->sj;
      ls[g] = s0 * p->cj + c0 * p->sj;
    }
  for (size_t i = 0; i < bpad; i += PHASE_LANES)
    {
      sine_v8d cf;

      memcpy (&cf, coef + i, sizeof cf);
#pragma GCC unroll 4
      for (int g = 0; g < G; g++)
        {
          const sine_v8d t = cf * lam[g], nc = lc[g] * c8[g] - ls[g] * s8[g];
          const sine_v8f fc = __builtin_convertvector (t * lc[g], sine_v8f);
          const sine_v8f fs = __builtin_convertvector (t * ls[g], sine_v8f);

          memcpy (out + 2 * g * BLOCK_FUSED + i, &fc, sizeof fc);
          memcpy (out + (2 * g + 1) * BLOCK_FUSED + i, &fs, sizeof fs);
          ls[g] = ls[g] * c8[g] + lc[g] * s8[g];
          lc[g] = nc;
        }
    }
}

/* The transposed features of one side (queries with theta, or keys) for the b rows of the block
 * starting at position m0: at[t * BLOCK_FUSED + i], t < D 2K + (gated ? D : 0); x[i * ldx + d]
 * the content.  coef: BLOCK_FUSED doubles of scratch, xt: D XT_LD floats.  Compiled once per instruction set below;
 * without contraction every build computes the same IEEE operations. */
static inline __attribute__ ((always_inline)) void
sine_features_body (const RpeSpeParams *params,
                    size_t              h,
                    const SinePhase    *ph,
                    size_t              m0,
                    size_t              b,
                    const float        *x,
                    size_t              ldx,
                    bool                query,
                    float              *at,
                    double             *coef,
                    float              *xt)
{
  const size_t D = params->n_features, K = params->n_sines, width = D * 2 * K;
  const size_t bpad = (b + PHASE_LANES - 1) / PHASE_LANES * PHASE_LANES;
  const bool gated = params->gate != NULL;

  /* the block's content transposed, (D, XT_LD): the loops below then read it in order (rows
   * padded off a power-of-two stride, and filled 8 features at a time, against cache-set and
   * 4 KiB-alias conflicts) */
  for (size_t d0 = 0; d0 < D; d0 += 8)
    {
      const size_t d1 = d0 + 8 < D ? d0 + 8 : D;
      size_t i = 0;

      if (d1 == d0 + 8)
        for (; i + 8 <= b; i += 8)
          transpose8 (x + i * ldx + d0, ldx, xt + d0 * XT_LD + i, XT_LD);
      for (; i < b; i++)
        for (size_t d = d0; d < d1; d++)
          xt[d * XT_LD + i] = x[i * ldx + d];
      for (; i < bpad; i++)
        for (size_t d = d0; d < d1; d++)
          xt[d * XT_LD + i] = 0.0f;
    }
  for (size_t d = 0; d < D; d++)
    {
      const double g = gated ? params->gate[h * D + d] : 0.0;
      const float a = (float) sqrt (1.0 - g), gg = (float) sqrt (g);
      const float *xd = xt + d * XT_LD;
      float *gate_row = at + (width + d) * BLOCK_FUSED;

      for (size_t i = 0; i < bpad; i += PHASE_LANES)
        {
          sine_v8f xv;
          sine_v8d cv;

          memcpy (&xv, xd + i, sizeof xv);
          cv = __builtin_convertvector (xv * a, sine_v8d);
          memcpy (coef + i, &cv, sizeof cv);
          if (gated)
            {
              xv = xv * gg;
              memcpy (gate_row + i, &xv, sizeof xv);
            }
        }
      for (size_t k = 0; k < K;)
        {
          /* G sines at once: G independent rotation chains keep the vector units busy */
          const size_t rem = K - k, group = rem <= 4 ? rem : rem == 5 ? 3 : 4;

          if (group == 4)
            sine_phase_group (4, ph + d * K + k, m0, bpad, query, coef, at + (d * 2 * K + 2 * k) * BLOCK_FUSED);
          else if (group == 3)
            sine_phase_group (3, ph + d * K + k, m0, bpad, query, coef, at + (d * 2 * K + 2 * k) * BLOCK_FUSED);
          else if (group == 2)
            sine_phase_group (2, ph + d * K + k, m0, bpad, query, coef, at + (d * 2 * K + 2 * k) * BLOCK_FUSED);
          else
            sine_phase_group (1, ph + d * K + k, m0, bpad, query, coef, at + (d * 2 * K + 2 * k) * BLOCK_FUSED);
          k += group;
        }
    }
}

#define SINE_FEATURES_ARGS const RpeSpeParams *params, size_t h, const SinePhase *ph, size_t m0, size_t b, \
                           const float *x, size_t ldx, bool query, float *at, double *coef, float *xt

static void
sine_features_generic (SINE_FEATURES_ARGS)
{
  sine_features_body (params, h, ph, m0, b, x, ldx, query, at, coef, xt);
}

#if defined(__x86_64__) && defined(__GNUC__)
static __attribute__ ((target ("avx2"))) void
sine_features_avx2 (SINE_FEATURES_ARGS)
{
  sine_features_body (params, h, ph, m0, b, x, ldx, query, at, coef, xt);
}

static __attribute__ ((target ("avx512f"))) void
sine_features_avx512 (SINE_FEATURES_ARGS)
{
  sine_features_body (params, h, ph, m0, b, x, ldx, query, at, coef, xt);
}
#endif

static void
sine_features (SINE_FEATURES_ARGS)
{
#if defined(__x86_64__) && defined(__GNUC__)
  /* the product's choice (its AVX2 build implies AVX2, its AVX-512 build AVX-512F) */
  RpeGemmIsa isa = _rpe_gemm_isa ();

  if (isa == RPE_GEMM_AVX512)
    {
      sine_features_avx512 (params, h, ph, m0, b, x, ldx, query, at, coef, xt);
      return;
    }
  if (isa == RPE_GEMM_AVX2)
    {
      sine_features_avx2 (params, h, ph, m0, b, x, ldx, query, at, coef, xt);
      return;
    }
#endif
  sine_features_generic (params, h, ph, m0, b, x, ldx, query, at, coef, xt);
}

/* Heads worker, worker + n_workers, ...: each head's output columns are its own, and its
 * values do not depend on which worker computes it. */
static void
sine_fused_worker (size_t worker, size_t n_workers, void *data)
{
  SineFusedJob *job = data;
  const RpeSpeParams *params = job->params;
  const size_t base = job->m_begin, n = job->n, r = job->r;
  const float *q = job->q, *k = job->k;
  const RpeMonitor *monitor = job->monitor;
  const size_t H = params->n_heads, D = params->n_features;
  const size_t width = D * 2 * params->n_sines;
  const bool gated = params->gate != NULL;
  const size_t depth = width + (gated ? D : 0);
  const size_t hr = H * r;
  const float s = (float) rpe_spe_code_scale (D, r);
  const size_t mine = (H + n_workers - 1 - worker) / n_workers;
  float *at = NULL, *zp = NULL, *xt = NULL;
  double *coef = NULL;
  SinePhase *ph = NULL;
  size_t done = 0;   /* sizes checked by the caller */
  RpeStatus st = RPE_OK;

  if ((at = rpe_alloc (depth * BLOCK_FUSED, sizeof (float), &st)) == NULL
      || (coef = rpe_alloc (BLOCK_FUSED, sizeof (double), &st)) == NULL
      || (xt = rpe_alloc (D * XT_LD, sizeof (float), &st)) == NULL
      || (ph = rpe_alloc (D * params->n_sines, sizeof (SinePhase), &st)) == NULL
      || ((gated || job->z == NULL) && (zp = rpe_alloc (depth * r, sizeof (float), &st)) == NULL))
    goto out;

  for (size_t h = worker; h < H; h += n_workers)
    {
      const float *zh = job->z != NULL ? job->z + h * width * r : zp;

      sine_phases (params, h, base, ph);
      /* the head's noise: its (D, 2K, R) slice of the draw, here or drawn at its offset */
      if (job->z == NULL)
        rpe_rng_normal (job->seed, RPE_STREAM_SINE, h * width * r, zp, width * r);
      if (gated)
        {
          /* [z_h ; eps_h]: the gate term is the last D steps of the same sums */
          if (job->z != NULL)
            memcpy (zp, zh, width * r * sizeof (float));
          memcpy (zp + width * r, job->eps + h * D * r, D * r * sizeof (float));
          zh = zp;
        }
      for (size_t m0 = base; m0 < n; m0 += BLOCK_FUSED)
        {
          const size_t b = m0 + BLOCK_FUSED < n ? BLOCK_FUSED : n - m0;
          const size_t row = (m0 - base) * H + h;

          if (rpe_monitor_cancelled (monitor))
            {
              st = RPE_ERROR_CANCELLED;
              goto out;
            }
          if (job->qhat != NULL)
            {
              sine_features (params, h, ph, m0, b, q + row * D, H * D, true, at, coef, xt);
              _rpe_gemm (b, r, depth, s, at, 1, BLOCK_FUSED, zh, r, false, job->qhat + row * r, hr);
            }
          if (job->khat != NULL)
            {
              sine_features (params, h, ph, m0, b, k + row * D, H * D, false, at, coef, xt);
              _rpe_gemm (b, r, depth, s, at, 1, BLOCK_FUSED, zh, r, false, job->khat + row * r, hr);
            }
          sine_phases_next (ph, D * params->n_sines);
          if (worker == 0)
            rpe_monitor_progress (monitor, ((double) done + (double) (m0 + b - base) / (double) (n - base))
                                           / (double) mine);
        }
      done++;
    }

out:
  rpe_free (at);
  rpe_free (zp);
  rpe_free (coef);
  rpe_free (xt);
  rpe_free (ph);
  job->status[worker] = st;
}

/* Fused codes + gating + encoding: per head and block of rows, the content-weighted Omega
 * (B x D 2K) times the head's noise (D 2K x R), and the gate term, as compute-bound GEMMs;
 * no (N, H, D, R) buffer.  Heads are shared by rpe_parallel_threads () workers (OpenBLAS
 * single-threaded inside, rpe-parallel.h); the result does not depend on the count. */
RpeStatus
_rpe_sine_spe_encode_fused (const RpeSpeParams *params,
                            size_t              n,
                            size_t              r,
                            const float        *z,
                            const float        *eps,
                            const float        *q,
                            const float        *k,
                            float              *qhat,
                            float              *khat,
                            const RpeMonitor   *monitor)
{
  return _rpe_sine_spe_encode_fused_rows (params, 0, n, r, z, eps, q, k, qhat, khat, monitor);
}

static RpeStatus
sine_fused_run (const RpeSpeParams *params,
                size_t              m0,
                size_t              rows,
                size_t              r,
                const float        *z,
                uint64_t            seed,
                const float        *eps,
                const float        *q,
                const float        *k,
                float              *qhat,
                float              *khat,
                const RpeMonitor   *monitor)
{
  const size_t H = params->n_heads, D = params->n_features;
  const size_t width = D * 2 * params->n_sines;
  SineFusedJob job;
  size_t count, workers;
  RpeStatus st = RPE_OK;

  _Static_assert (BLOCK_FUSED == RPE_SPE_FUSED_ROWS_ALIGN, "row ranges start at whole blocks");
  _Static_assert (BLOCK_FUSED % PHASE_LANES == 0, "whole phase vectors per block");
  if (m0 % BLOCK_FUSED != 0 || rows == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_add (width, D, &count) || !rpe_size_mul (count, BLOCK_FUSED, &count)
      || !rpe_size_mul (count / BLOCK_FUSED, r, &count) || !rpe_size_mul (D, XT_LD, &count)
      || !rpe_size_mul (width, r * H, &count))
    return RPE_ERROR_OVERFLOW;
  workers = rpe_parallel_threads ();
  if (workers > H)
    workers = H;
  if (workers > sizeof job.status / sizeof job.status[0])
    workers = sizeof job.status / sizeof job.status[0];
  /* small problems are not worth a thread */
  if ((double) rows * (double) width * (double) r * (double) H < 4e6)
    workers = 1;
  memset (&job, 0, sizeof job);
  job = (SineFusedJob) { params, m0, m0 + rows, r, z, eps, q, k, qhat, khat, monitor, seed, { RPE_OK } };
  rpe_parallel_run (workers, sine_fused_worker, &job);
  for (size_t w = 0; w < workers; w++)
    if (job.status[w] != RPE_OK && (st == RPE_OK || job.status[w] == RPE_ERROR_CANCELLED))
      st = job.status[w];
  if (st == RPE_OK)
    rpe_monitor_progress (monitor, 1.0);
  return st;
}

/* Rows m0 .. m0 + rows - 1 of the above: the blocks of rows start where the whole call's do
 * (m0 a multiple of BLOCK_FUSED), so every row's features and sums are the whole call's. */
RpeStatus
_rpe_sine_spe_encode_fused_rows (const RpeSpeParams *params,
                                 size_t              m0,
                                 size_t              rows,
                                 size_t              r,
                                 const float        *z,
                                 const float        *eps,
                                 const float        *q,
                                 const float        *k,
                                 float              *qhat,
                                 float              *khat,
                                 const RpeMonitor   *monitor)
{
  return sine_fused_run (params, m0, rows, r, z, 0, eps, q, k, qhat, khat, monitor);
}

/* The noise drawn by the workers, each head's slice at its offset in the stream (no (H, D, 2K, R)
 * buffer): the values of rpe_spe_noise_fill + the above. */
RpeStatus
_rpe_sine_spe_encode_seeded (const RpeSpeParams *params,
                             size_t              n,
                             size_t              r,
                             uint64_t            seed,
                             const float        *eps,
                             const float        *q,
                             const float        *k,
                             float              *qhat,
                             float              *khat,
                             const RpeMonitor   *monitor)
{
  return sine_fused_run (params, 0, n, r, NULL, seed, eps, q, k, qhat, khat, monitor);
}

void
_rpe_sine_spe_lags (const RpeSpeParams *params,
                    size_t              h,
                    size_t              d,
                    size_t              n,
                    double             *out)
{
  const size_t k_sines = params->n_sines;
  const size_t c = h * params->n_features + d;
  const size_t len = 2 * n - 1;
  const double inv = 1.0 / (2.0 * (double) k_sines);

  for (size_t i = 0; i < len; i++)
    out[i] = 0.0;
  for (size_t k = 0; k < k_sines; k++)
    {
      const double w = 2.0 * M_PI * (double) params->freqs[c * k_sines + k];
      const double theta = params->offsets[c * k_sines + k];
      const double lam = params->gains[c * k_sines + k];
      const double a = lam * lam * inv;

      for (size_t i = 0; i < len; i++)
        {
          double tau = (double) i - (double) (n - 1);
          out[i] += a * cos (w * tau + theta);
        }
    }
}

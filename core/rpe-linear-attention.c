/* rpe-linear-attention.c: kernel feature maps and linear attention
 * (docs/math.md, section 5).  See rpe-linear-attention.h for layouts and conventions.
 *
 * Linear attention: Katharopoulos et al. 2020 ("Transformers are RNNs");
 * Performer: Choromanski et al. 2021; DPFP: Schlag, Irie, Schmidhuber 2021. */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <fftw3.h>
#include <cblas.h>

#include "rpe-alloc.h"
#include "rpe-attention.h"
#include "rpe-gemm-private.h"
#include "rpe-linear-attention.h"
#include "rpe-parallel.h"
#include "rpe-rng.h"
#include "rpe-vec-private.h"

/* True if every value is finite: the exponent field of no value is all ones.
 * Blocks of 16 with an OR-reduction the compiler vectorises (rpe_all_finite_f
 * stops at each element, ~10x slower on the large inputs here). */
static bool
all_finite_fast (const float *x, size_t n)
{
  const uint32_t *u = (const uint32_t *) x;
  size_t i = 0;

  for (; i + 1024 <= n; i += 1024)
    {
      uint32_t acc[16] = { 0 };

      for (size_t j = 0; j < 1024; j += 16)
        {
          /* a line 4 KiB ahead: the hardware prefetcher alone leaves this pass waiting on memory */
          __builtin_prefetch (u + i + j + 1024);
          for (int l = 0; l < 16; l++)
            acc[l] |= (uint32_t) ((u[i + j + l] & 0x7f800000u) == 0x7f800000u);
        }
      for (int l = 0; l < 16; l++)
        if (acc[l] != 0)
          return false;
    }
  return rpe_all_finite_f (x + i, n - i);
}

/* Rows per BLAS call / cancellation check. */
#define ROW_CHUNK 256
/* Rows per chunk of the causal linear attention, and the floats of its per-chunk scratch (the
 * (C, C) intra-chunk weights and the chunk's keys transposed, (M, C)). */
#define CAUSAL_CHUNK 64
#define CAUSAL_SCRATCH(m) (CAUSAL_CHUNK * CAUSAL_CHUNK + (m) * CAUSAL_CHUNK)
_Static_assert (ROW_CHUNK % CAUSAL_CHUNK == 0, "causal stretches of whole chunks");

/* Stream for the norms of the orthogonal Performer rows (distinct from W's own draws). */
#define STREAM_PERFORMER_NORMS ((uint64_t) RPE_STREAM_PERFORMER | ((uint64_t) 1 << 32))

static inline size_t
min_size (size_t a,
          size_t b)
{
  return a < b ? a : b;
}

static inline float
relu (float x)
{
  return x > 0.0f ? x : 0.0f;
}

RpeStatus
rpe_feature_map_dim (RpeFeatureMap            map,
                     const RpeFeatureOptions *options,
                     size_t                   f,
                     size_t                  *out_m)
{
  size_t two_f;

  if (out_m == NULL || f == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  switch (map)
    {
    case RPE_FEATURE_RELU:
    case RPE_FEATURE_ELU1:
    case RPE_FEATURE_EXP:
      *out_m = f;
      return RPE_OK;
    case RPE_FEATURE_PERFORMER:
      if (options == NULL || options->m == 0)
        return RPE_ERROR_INVALID_ARGUMENT;
      *out_m = options->m;
      return RPE_OK;
    case RPE_FEATURE_DPFP:
      if (options == NULL || options->nu == 0)
        return RPE_ERROR_INVALID_ARGUMENT;
      if (!rpe_size_mul (f, 2, &two_f))
        return RPE_ERROR_OVERFLOW;
      if (options->nu >= two_f)
        return RPE_ERROR_INVALID_ARGUMENT;
      if (!rpe_size_mul (two_f, options->nu, out_m))
        return RPE_ERROR_OVERFLOW;
      return RPE_OK;
    default:
      return RPE_ERROR_INVALID_ARGUMENT;
    }
}

/* ---- Performer projection ---- */

/* Orthonormalises the rows of g (f x f, double) in place: modified
 * Gram-Schmidt applied twice ("twice is enough") for stability. */
static RpeStatus
gram_schmidt (double *g,
              size_t  f)
{
  for (size_t i = 0; i < f; i++)
    {
      double *r = g + i * f;
      double norm0 = 0, norm = 0;

      for (size_t t = 0; t < f; t++)
        norm0 += r[t] * r[t];
      for (int pass = 0; pass < 2; pass++)
        for (size_t j = 0; j < i; j++)
          {
            const double *u = g + j * f;
            double dot = 0;

            for (size_t t = 0; t < f; t++)
              dot += r[t] * u[t];
            for (size_t t = 0; t < f; t++)
              r[t] -= dot * u[t];
          }
      for (size_t t = 0; t < f; t++)
        norm += r[t] * r[t];
      /* Rank deficiency has probability zero for Gaussian input. */
      if (!(norm > 1e-24 * norm0) || norm == 0)
        return RPE_ERROR_INTERNAL;
      norm = 1.0 / sqrt (norm);
      for (size_t t = 0; t < f; t++)
        r[t] *= norm;
    }
  return RPE_OK;
}

RpeStatus
rpe_performer_matrix (const RpeFeatureOptions *options,
                      size_t                   f,
                      float                   *w)
{
  RpeStatus st = RPE_OK;
  size_t count, ff;
  float *raw = NULL;
  double *g = NULL;

  if (options == NULL || w == NULL || f == 0 || options->m == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (options->m, f, &count) || !rpe_size_mul (f, f, &ff))
    return RPE_ERROR_OVERFLOW;

  /* Row i of W is draw (i F .. i F + F - 1) of the stream, so the first rows do
   * not depend on m; the orthogonal variant orthogonalises those same draws
   * block by block. */
  rpe_rng_normal (options->seed, RPE_STREAM_PERFORMER, 0, w, count);
  if (!options->orthogonal)
    return RPE_OK;

  raw = rpe_alloc (f, sizeof (float), &st);
  if (raw != NULL)
    g = rpe_alloc (ff, sizeof (double), &st);
  if (g == NULL)
    goto done;

  for (size_t b0 = 0; b0 < options->m; b0 += f)
    {
      size_t rows = min_size (f, options->m - b0);

      /* The full F x F Gaussian block (also for a partial last block). */
      for (size_t i = 0; i < f; i++)
        {
          rpe_rng_normal (options->seed, RPE_STREAM_PERFORMER, (b0 + i) * f, raw, f);
          for (size_t t = 0; t < f; t++)
            g[i * f + t] = raw[t];
        }
      if ((st = gram_schmidt (g, f)) != RPE_OK)
        goto done;
      for (size_t i = 0; i < rows; i++)
        {
          double len = 0;

          /* Row length ~ chi_F, as for a Gaussian row. */
          rpe_rng_normal (options->seed, STREAM_PERFORMER_NORMS, (b0 + i) * f, raw, f);
          for (size_t t = 0; t < f; t++)
            len += (double) raw[t] * raw[t];
          len = sqrt (len);
          for (size_t t = 0; t < f; t++)
            w[(b0 + i) * f + t] = (float) (g[i * f + t] * len);
        }
    }

done:
  rpe_free (g);
  rpe_free (raw);
  return st;
}

/* ---- feature maps ---- */

/* phi (N, H, M) <- exp(phi - shift) * factor in place for head h, where phi
 * holds exponents; shift = row max (query) or head max (key). */
static void
exp_shifted_head (float          *phi,
                  size_t          n,
                  size_t          n_heads,
                  size_t          m,
                  size_t          h,
                  RpeFeatureRole  role,
                  float           factor)
{
  float head_max = -INFINITY;

  if (role == RPE_FEATURE_KEY)
    for (size_t i = 0; i < n; i++)
      {
        const float *r = phi + (i * n_heads + h) * m;

        for (size_t j = 0; j < m; j++)
          head_max = r[j] > head_max ? r[j] : head_max;
      }

  for (size_t i = 0; i < n; i++)
    {
      float *r = phi + (i * n_heads + h) * m;
      float c = head_max;

      if (role == RPE_FEATURE_QUERY)
        {
          c = -INFINITY;
          for (size_t j = 0; j < m; j++)
            c = r[j] > c ? r[j] : c;
        }
      for (size_t j = 0; j < m; j++)
        r[j] = expf (r[j] - c) * factor;
    }
}

/* Performer exponents for head h: phi[i, h, :] = W x_i - |x_i|^2 / 2. */
static void
performer_exponents_head (const float *x,
                          const float *w,
                          size_t       n,
                          size_t       n_heads,
                          size_t       f,
                          size_t       m,
                          size_t       h,
                          float       *phi)
{
  for (size_t i0 = 0; i0 < n; i0 += ROW_CHUNK)
    {
      size_t b = min_size (ROW_CHUNK, n - i0);

      cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasTrans,
                   (int) b, (int) m, (int) f,
                   1.0f, x + (i0 * n_heads + h) * f, (int) (n_heads * f), w, (int) f,
                   0.0f, phi + (i0 * n_heads + h) * m, (int) (n_heads * m));
    }
  for (size_t i = 0; i < n; i++)
    {
      const float *xr = x + (i * n_heads + h) * f;
      float *r = phi + (i * n_heads + h) * m;
      double sq = 0;
      float half;

      for (size_t t = 0; t < f; t++)
        sq += (double) xr[t] * xr[t];
      half = (float) (0.5 * sq);
      for (size_t j = 0; j < m; j++)
        r[j] -= half;
    }
}

/* phi = elu(x) + 1 from e = e^x in phi: max(x, 0) + min(e, 1) is x + 1 for x > 0 and e^x
 * otherwise, with no branch (the select x > 0 mispredicts on random signs); written 8-wide
 * so GCC packs it into maxps / minps / addps at -O2. */
static void
elu1_select (const float *restrict x,
             float       *restrict phi,
             size_t                n)
{
  size_t i = 0;

#define ELU1_AT(j) do { float a_ = x[j] > 0.0f ? x[j] : 0.0f, e_ = phi[j] < 1.0f ? phi[j] : 1.0f; \
                        phi[j] = a_ + e_; } while (0)
  for (; i + 8 <= n; i += 8)
    {
      ELU1_AT (i);     ELU1_AT (i + 1); ELU1_AT (i + 2); ELU1_AT (i + 3);
      ELU1_AT (i + 4); ELU1_AT (i + 5); ELU1_AT (i + 6); ELU1_AT (i + 7);
    }
  for (; i < n; i++)
    ELU1_AT (i);
#undef ELU1_AT
}

RpeStatus
rpe_feature_map_apply (RpeFeatureMap            map,
                       const RpeFeatureOptions *options,
                       RpeFeatureRole           role,
                       size_t                   n,
                       size_t                   n_heads,
                       size_t                   f,
                       const float             *x,
                       float                   *phi,
                       const RpeMonitor        *monitor)
{
  RpeStatus st;
  size_t m, rows, in_count, out_count;
  float *w = NULL;

  if (x == NULL || phi == NULL || n == 0 || n_heads == 0 || f == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (role != RPE_FEATURE_QUERY && role != RPE_FEATURE_KEY)
    return RPE_ERROR_INVALID_ARGUMENT;
  if ((st = rpe_feature_map_dim (map, options, f, &m)) != RPE_OK)
    return st;
  if (!rpe_size_mul (n, n_heads, &rows) || !rpe_size_mul (rows, f, &in_count)
      || !rpe_size_mul (rows, m, &out_count))
    return RPE_ERROR_OVERFLOW;
  if (!all_finite_fast (x, in_count))
    return RPE_ERROR_NOT_FINITE;

  switch (map)
    {
    case RPE_FEATURE_RELU:
      for (size_t i = 0; i < in_count; i++)
        phi[i] = relu (x[i]);
      break;

    case RPE_FEATURE_ELU1:
      /* elu(x) + 1: x + 1 for x > 0, e^x otherwise (vectorised exp, rpe-attention.h) */
      rpe_exp_f (x, phi, in_count);
      elu1_select (x, phi, in_count);
      break;

    case RPE_FEATURE_DPFP:
      for (size_t r = 0; r < rows; r++)
        {
          const float *xr = x + r * f;
          float *o = phi + r * m;
          const size_t two_f = 2 * f;

          if ((r & 1023) == 0 && rpe_monitor_cancelled (monitor))
            return RPE_ERROR_CANCELLED;
          /* x'_i = relu(x_i) for i < F, relu(-x_{i-F}) after. */
          for (size_t j = 1; j <= options->nu; j++)
            for (size_t i = 0; i < two_f; i++)
              {
                size_t a = i, b = (i + j) % two_f;
                float xa = a < f ? relu (xr[a]) : relu (-xr[a - f]);
                float xb = b < f ? relu (xr[b]) : relu (-xr[b - f]);

                o[(j - 1) * two_f + i] = xa * xb;
              }
        }
      break;

    case RPE_FEATURE_EXP:
      memcpy (phi, x, in_count * sizeof (float));
      for (size_t h = 0; h < n_heads; h++)
        {
          if (rpe_monitor_cancelled (monitor))
            return RPE_ERROR_CANCELLED;
          exp_shifted_head (phi, n, n_heads, m, h, role, 1.0f);
          rpe_monitor_progress (monitor, (double) (h + 1) / (double) n_heads);
        }
      break;

    case RPE_FEATURE_PERFORMER:
      if (f > INT_MAX || m > INT_MAX || n_heads * f > INT_MAX || n_heads * m > INT_MAX)
        return RPE_ERROR_OVERFLOW;
      if (!rpe_size_mul (m, f, &in_count))
        return RPE_ERROR_OVERFLOW;
      w = rpe_alloc (in_count, sizeof (float), &st);
      if (w == NULL)
        return st;
      if ((st = rpe_performer_matrix (options, f, w)) != RPE_OK)
        {
          rpe_free (w);
          return st;
        }
      for (size_t h = 0; h < n_heads; h++)
        {
          if (rpe_monitor_cancelled (monitor))
            {
              rpe_free (w);
              return RPE_ERROR_CANCELLED;
            }
          performer_exponents_head (x, w, n, n_heads, f, m, h, phi);
          exp_shifted_head (phi, n, n_heads, m, h, role, (float) (1.0 / sqrt ((double) m)));
          rpe_monitor_progress (monitor, (double) (h + 1) / (double) n_heads);
        }
      rpe_free (w);
      break;

    default:
      return RPE_ERROR_INVALID_ARGUMENT;
    }
  rpe_monitor_progress (monitor, 1.0);
  return RPE_OK;
}

/* ---- linear attention ---- */

static RpeStatus
linear_check (size_t       n,
              size_t       n_heads,
              size_t       m,
              size_t       dv,
              const float *phi_q,
              const float *phi_k,
              const float *v)
{
  size_t rows, cq, cv, hm, hdv;

  if (phi_q == NULL || phi_k == NULL || (dv > 0 && v == NULL)
      || n == 0 || n_heads == 0 || m == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (n, n_heads, &rows) || !rpe_size_mul (rows, m, &cq)
      || !rpe_size_mul (rows, dv, &cv) || !rpe_size_mul (n_heads, m, &hm)
      || !rpe_size_mul (n_heads, dv, &hdv))
    return RPE_ERROR_OVERFLOW;
  if (n > INT_MAX || hm > INT_MAX || hdv > INT_MAX)
    return RPE_ERROR_OVERFLOW;
  if (!all_finite_fast (phi_q, cq) || !all_finite_fast (phi_k, cq)
      || (dv > 0 && !all_finite_fast (v, cv)))
    return RPE_ERROR_NOT_FINITE;
  return RPE_OK;
}

static void causal_stretch (const float *pq, const float *pk, const float *vh, float *yh, size_t n, size_t hm,
                            size_t hdv, size_t m, size_t dv, double *s, float *s_f, double *z, float *kv,
                            float *intra);

RpeStatus
rpe_linear_attention (size_t            n,
                      size_t            n_heads,
                      size_t            m,
                      size_t            dv,
                      const float      *phi_q,
                      const float      *phi_k,
                      const float      *v,
                      bool              causal,
                      float            *y,
                      const RpeMonitor *monitor)
{
  RpeStatus st;
  const size_t hm = n_heads * m, hdv = n_heads * dv;
  size_t mdv;
  float *kv = NULL, *s_f = NULL, *intra = NULL;
  double *s = NULL, *z = NULL;

  if (dv == 0 || y == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  if ((st = linear_check (n, n_heads, m, dv, phi_q, phi_k, v)) != RPE_OK)
    return st;
  if (!rpe_size_mul (m, dv, &mdv))
    return RPE_ERROR_OVERFLOW;

  z = rpe_alloc (m, sizeof (double), &st);
  if (z == NULL)
    goto done;
  kv = rpe_alloc (mdv, sizeof (float), &st);
  if (kv == NULL)
    goto done;
  if (causal)
    {
      s = rpe_alloc (mdv, sizeof (double), &st);
      if (s != NULL)
        s_f = rpe_alloc (mdv, sizeof (float), &st);
      if (s_f != NULL)
        intra = rpe_alloc (CAUSAL_SCRATCH (m), sizeof (float), &st);
      if (intra == NULL)
        goto done;
    }

  for (size_t h = 0; h < n_heads; h++)
    {
      const float *pq = phi_q + h * m, *pk = phi_k + h * m, *vh = v + h * dv;
      float *yh = y + h * dv;

      if (rpe_monitor_cancelled (monitor))
        {
          st = RPE_ERROR_CANCELLED;
          goto done;
        }
      memset (z, 0, m * sizeof (double));

      if (!causal)
        {
          /* kv (M, Dv) = phi(K)^T V; z = phi(K)^T 1 */
          _rpe_gemm (m, dv, n, 1.0f, pk, 1, hm, vh, hdv, false, kv, dv);
          for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < m; j++)
              z[j] += pk[i * hm + j];

          for (size_t i0 = 0; i0 < n; i0 += ROW_CHUNK)
            {
              size_t b = min_size (ROW_CHUNK, n - i0);

              if (rpe_monitor_cancelled (monitor))
                {
                  st = RPE_ERROR_CANCELLED;
                  goto done;
                }
              /* numerators (b, Dv) = phi(Q) kv, written in place into y */
              _rpe_gemm (b, dv, m, 1.0f, pq + i0 * hm, hm, 1, kv, dv, false, yh + i0 * hdv, hdv);
              for (size_t i = i0; i < i0 + b; i++)
                {
                  double den = 0;
                  float *yr = yh + i * hdv;

                  for (size_t j = 0; j < m; j++)
                    den += pq[i * hm + j] * z[j];
                  for (size_t t = 0; t < dv; t++)
                    yr[t] = den != 0 ? (float) (yr[t] / den) : 0.0f;
                }
              rpe_monitor_progress (monitor, ((double) h + (double) (i0 + b) / (double) n) / (double) n_heads);
            }
        }
      else
        {
          /* Causal, in chunks of C rows (Katharopoulos et al. 2020, eq. 10-12,
           * evaluated chunkwise): with S, z the running sums over all rows
           * before the chunk,
           *   num_i = phi(q_i)^T S + sum_{c0 <= j <= i} (phi(q_i) . phi(k_j)) v_j
           *   den_i = phi(q_i) . z + sum_{c0 <= j <= i}  phi(q_i) . phi(k_j)
           * which is exactly y_i = phi(q_i)^T S_i / (phi(q_i) . z_i).  S and z are
           * accumulated in double (s, z) and S is rounded once per chunk into s_f for
           * the next product (causal_stretch, stretches of whole chunks between the
           * cancellation checks: the same arithmetic as one stretch).  Memory:
           * O(M Dv + C^2 + M C), never N x N. */
          memset (s, 0, mdv * sizeof (double));
          memset (s_f, 0, mdv * sizeof (float));
          for (size_t c0 = 0; c0 < n; c0 += ROW_CHUNK)
            {
              const size_t b = min_size (ROW_CHUNK, n - c0);

              if (rpe_monitor_cancelled (monitor))
                {
                  st = RPE_ERROR_CANCELLED;
                  goto done;
                }
              causal_stretch (pq + c0 * hm, pk + c0 * hm, vh + c0 * hdv, yh + c0 * hdv, b, hm, hdv, m, dv,
                              s, s_f, z, kv, intra);
              rpe_monitor_progress (monitor, ((double) h + (double) (c0 + b) / (double) n) / (double) n_heads);
            }
        }
    }

done:
  rpe_free (intra);
  rpe_free (s_f);
  rpe_free (s);
  rpe_free (kv);
  rpe_free (z);
  return st;
}

/* Maps a stage's progress into [base, base + span] of the parent monitor. */
typedef struct
{
  RpeMonitor        monitor;
  const RpeMonitor *parent;
  double            base;
  double            span;
} Stage;

static void
stage_progress (double  fraction,
                void   *user_data)
{
  const Stage *stage = user_data;

  rpe_monitor_progress (stage->parent, stage->base + stage->span * fraction);
}

/* ---- chunked features + linear attention (rpe_linear_attention_qkv) ----
 *
 * For the row-local feature maps (RELU, ELU1, DPFP: phi(x_m) depends on x_m
 * alone), the features are never formed for all N rows: keys and values are
 * consumed QKV_CHUNK rows at a time.  Non-causal (DPFP here; RELU and ELU1 take the
 * fused path, qkv_noncausal_elementwise): pass 1 accumulates
 * kv_h = phi(K_h)^T V_h and z_h = phi(K_h)^T 1 (in double) chunk by chunk,
 * pass 2 turns each chunk of queries into outputs.  Causal: one pass, the
 * running sums S, z of every head carried from chunk to chunk, each chunk
 * evaluated by the same 64-row recurrence as rpe_linear_attention (QKV_CHUNK is
 * a multiple of CAUSAL_CHUNK, so the arithmetic is the same).  Extra memory
 * O(QKV_CHUNK H M + H M Dv) instead of 2 N H M. */
#define QKV_CHUNK 2048

typedef struct
{
  size_t  n_heads, m, dv;
  double *s;       /* (H, M, Dv) causal running sum S, or the non-causal kv sums */
  float  *s_f;     /* (H, M, Dv) S rounded (causal) / kv (non-causal) */
  double *z;       /* (H, M) */
  float  *kv;      /* (M, Dv) product scratch */
  float  *intra;   /* (C, C) + (M, C) causal scratch (CAUSAL_SCRATCH) */
} LinState;

/* Causal rows of head h for one stretch of b rows (pointers at the stretch's first
 * row; phi rows of stride H M, v / y rows of stride H Dv): the recurrence of
 * rpe_linear_attention, state (s, s_f, z of head h) carried in and out. */
static void
causal_stretch (const float *pq,
                const float *pk,
                const float *vh,
                float       *yh,
                size_t       n,
                size_t       hm,
                size_t       hdv,
                size_t       m,
                size_t       dv,
                double      *s,
                float       *s_f,
                double      *z,
                float       *kv,
                float       *intra)
{
  const size_t mdv = m * dv;

  for (size_t c0 = 0; c0 < n; c0 += CAUSAL_CHUNK)
    {
      const size_t b = min_size (CAUSAL_CHUNK, n - c0);
      const float *qc = pq + c0 * hm, *kc = pk + c0 * hm, *vc = vh + c0 * hdv;
      float *yc = yh + c0 * hdv;

      float *kt = intra + CAUSAL_CHUNK * CAUSAL_CHUNK;

      /* the products on the core's own kernels (rpe-gemm-private.h): their speed does not
       * depend on the kernels BLAS picks, and each value is summed in one fixed order */
      /* yc (b, Dv) = Qc S_prev */
      _rpe_gemm (b, dv, m, 1.0f, qc, hm, 1, s_f, dv, false, yc, hdv);
      /* intra (b, b) = Qc Kc^T, lower triangle kept (Kc^T written out, (M, b)) */
      for (size_t i = 0; i < b; i++)
        for (size_t j = 0; j < m; j++)
          kt[j * b + i] = kc[i * hm + j];
      _rpe_gemm (b, b, m, 1.0f, qc, hm, 1, kt, b, false, intra, b);
      for (size_t i = 0; i < b; i++)
        for (size_t j = i + 1; j < b; j++)
          intra[i * b + j] = 0.0f;
      /* yc += intra Vc */
      _rpe_gemm (b, dv, b, 1.0f, intra, b, 1, vc, hdv, true, yc, hdv);
      for (size_t i = 0; i < b; i++)
        {
          double den = 0;
          float *yr = yc + i * hdv;

          for (size_t j = 0; j < m; j++)
            den += (double) qc[i * hm + j] * z[j];
          for (size_t j = 0; j <= i; j++)
            den += intra[i * b + j];
          for (size_t t = 0; t < dv; t++)
            yr[t] = den != 0 ? (float) (yr[t] / den) : 0.0f;
        }
      /* kv (M, Dv) = Kc^T Vc */
      _rpe_gemm (m, dv, b, 1.0f, kc, 1, hm, vc, hdv, false, kv, dv);
      for (size_t t = 0; t < mdv; t++)
        {
          s[t] += kv[t];
          s_f[t] = (float) s[t];
        }
      for (size_t i = 0; i < b; i++)
        for (size_t j = 0; j < m; j++)
          z[j] += kc[i * hm + j];
    }
}

#define QKV_MAX_WORKERS 16

/* One chunk of rows, in two fork-joins: the features of the chunk's rows (split by rows),
 * then the heads (split by heads: each head's sums and outputs are its own, so the result
 * does not depend on the number of workers). */
typedef struct
{
  RpeFeatureMap            map;
  const RpeFeatureOptions *options;
  size_t                   n_heads, f, m, dv, hm, hdv, hf, mdv;
  const float             *q, *k, *v;
  float                   *y;
  bool                     causal;
  size_t                   r0, b;
  bool                     keys, queries;
  float                   *pq, *pk, *s_f;
  double                  *s, *z;
  float                   *kv[QKV_MAX_WORKERS], *intra[QKV_MAX_WORKERS];
  RpeStatus                status[QKV_MAX_WORKERS];
} QkvJob;

static void
qkv_features_worker (size_t worker, size_t n_workers, void *data)
{
  QkvJob *job = data;
  size_t i0 = job->b * worker / n_workers, i1 = job->b * (worker + 1) / n_workers;
  RpeStatus st = RPE_OK;

  if (i1 > i0 && job->keys)
    st = rpe_feature_map_apply (job->map, job->options, RPE_FEATURE_KEY, i1 - i0, job->n_heads, job->f,
                                job->k + (job->r0 + i0) * job->hf, job->pk + i0 * job->hm, NULL);
  if (i1 > i0 && st == RPE_OK && job->queries)
    st = rpe_feature_map_apply (job->map, job->options, RPE_FEATURE_QUERY, i1 - i0, job->n_heads, job->f,
                                job->q + (job->r0 + i0) * job->hf, job->pq + i0 * job->hm, NULL);
  job->status[worker] = st;
}

static void
qkv_heads_worker (size_t worker, size_t n_workers, void *data)
{
  QkvJob *job = data;
  const size_t m = job->m, dv = job->dv, hm = job->hm, hdv = job->hdv, mdv = job->mdv, b = job->b;
  const float *pq = job->pq, *pk = job->pk;
  float *kv = job->kv[worker];

  for (size_t h = worker; h < job->n_heads; h += n_workers)
    {
      const float *vh = job->v + job->r0 * hdv + h * dv;
      float *yh = job->y + job->r0 * hdv + h * dv;
      double *zh = job->z + h * m, *sh = job->s + h * mdv;
      float *sfh = job->s_f + h * mdv;

      if (job->causal)
        {
          causal_stretch (pq + h * m, pk + h * m, vh, yh, b, hm, hdv, m, dv, sh, sfh, zh, kv,
                          job->intra[worker]);
          continue;
        }
      if (job->keys)
        {
          /* kv_h += phi(K_c)^T V_c, z_h += phi(K_c)^T 1 */
          _rpe_gemm (m, dv, b, 1.0f, pk + h * m, 1, hm, vh, hdv, false, kv, dv);
          for (size_t t = 0; t < mdv; t++)
            sh[t] += kv[t];
          for (size_t i = 0; i < b; i++)
            for (size_t j = 0; j < m; j++)
              zh[j] += pk[i * hm + h * m + j];
        }
      else
        {
          _rpe_gemm (b, dv, m, 1.0f, pq + h * m, hm, 1, sfh, dv, false, yh, hdv);
          for (size_t i = 0; i < b; i++)
            {
              const float *qr = pq + i * hm + h * m;
              float *yr = yh + i * hdv;
              double den = 0;

              for (size_t j = 0; j < m; j++)
                den += qr[j] * zh[j];
              for (size_t t = 0; t < dv; t++)
                yr[t] = den != 0 ? (float) (yr[t] / den) : 0.0f;
            }
        }
    }
  job->status[worker] = RPE_OK;
}

static RpeStatus
qkv_chunked (RpeFeatureMap            map,
             const RpeFeatureOptions *options,
             size_t                   n,
             size_t                   n_heads,
             size_t                   f,
             size_t                   m,
             size_t                   dv,
             const float             *q,
             const float             *k,
             const float             *v,
             bool                     causal,
             float                   *y,
             const RpeMonitor        *monitor)
{
  const size_t hm = n_heads * m, hdv = n_heads * dv, hf = n_heads * f;
  const size_t rows = min_size (QKV_CHUNK, n);
  size_t count, hmdv, mdv, workers;
  QkvJob job;
  RpeStatus st = RPE_OK;
  const int passes = causal ? 1 : 2;

  if (!rpe_size_mul (rows, hm, &count) || !rpe_size_mul (m, dv, &mdv)
      || !rpe_size_mul (mdv, n_heads, &hmdv) || n > INT_MAX || hm > INT_MAX || hdv > INT_MAX)
    return RPE_ERROR_OVERFLOW;
  if (!all_finite_fast (v, n * hdv))
    return RPE_ERROR_NOT_FINITE;
  workers = min_size (min_size (rpe_parallel_threads (), n_heads), QKV_MAX_WORKERS);
  if ((double) n * (double) hm * (double) dv < 1e6)
    workers = 1;   /* not worth a thread */

  memset (&job, 0, sizeof job);
  job = (QkvJob) { .map = map, .options = options, .n_heads = n_heads, .f = f, .m = m, .dv = dv,
                   .hm = hm, .hdv = hdv, .hf = hf, .mdv = mdv, .q = q, .k = k, .v = v, .y = y,
                   .causal = causal };
  if ((job.pq = rpe_alloc (count, sizeof (float), &st)) == NULL
      || (job.pk = rpe_alloc (count, sizeof (float), &st)) == NULL
      || (job.s_f = rpe_alloc0 (hmdv, sizeof (float), &st)) == NULL
      || (job.s = rpe_alloc0 (hmdv, sizeof (double), &st)) == NULL
      || (job.z = rpe_alloc0 (hm, sizeof (double), &st)) == NULL)
    goto done;
  for (size_t w = 0; w < workers; w++)
    if ((job.kv[w] = rpe_alloc (mdv, sizeof (float), &st)) == NULL
        || (job.intra[w] = rpe_alloc (CAUSAL_SCRATCH (m), sizeof (float), &st)) == NULL)
      goto done;

  for (int pass = 0; pass < passes; pass++)
    {
      job.keys = causal || pass == 0;
      job.queries = causal || pass == 1;
      if (!causal && pass == 1)
        for (size_t t = 0; t < hmdv; t++)
          job.s_f[t] = (float) job.s[t];
      for (size_t r0 = 0; r0 < n; r0 += rows)
        {
          job.r0 = r0;
          job.b = min_size (rows, n - r0);
          if (rpe_monitor_cancelled (monitor))
            {
              st = RPE_ERROR_CANCELLED;
              goto done;
            }
          rpe_parallel_run (workers, qkv_features_worker, &job);
          for (size_t w = 0; w < workers; w++)
            if (job.status[w] != RPE_OK)
              {
                st = job.status[w];
                goto done;
              }
          rpe_parallel_run (workers, qkv_heads_worker, &job);
          rpe_monitor_progress (monitor, ((double) pass + (double) (r0 + job.b) / (double) n) / passes);
        }
    }

done:
  rpe_free (job.pq);
  rpe_free (job.pk);
  rpe_free (job.s_f);
  rpe_free (job.s);
  rpe_free (job.z);
  for (size_t w = 0; w < QKV_MAX_WORKERS; w++)
    {
      rpe_free (job.kv[w]);
      rpe_free (job.intra[w]);
    }
  return st;
}

/* ---- non-causal relu / elu1: one streamed pass over keys, one over queries ----
 *
 * For the element-wise feature maps (RELU, ELU1) without a mask, the work is
 *   pass 1: KV_h = sum_n phi(k_n,h) v_n,h^T,  z_h = sum_n phi(k_n,h)
 *   pass 2: y_n,h = phi(q_n,h)^T KV_h / (phi(q_n,h) . z_h)
 * done in blocks of rows small enough to stay in L2 (LIN_BLOCK_FLOATS of features):
 * the features of a block are computed into a per-worker buffer by one vectorised
 * pass that also checks the inputs are finite and forms the block's z (keys) or
 * the denominators (queries); the products run in BLAS on the block; the outputs
 * are scaled in place while the block is still in cache.  No array of N rows is
 * formed besides y.
 *
 * Threads: pass 1 splits the rows into a fixed number of segments (not depending on
 * the number of workers); each segment's sums are accumulated in double in its own
 * slot and the slots are added in order, so the result is the same for any number
 * of workers.  Pass 2 splits the blocks of rows (each output row depends only on
 * its own query).  One fork-join per pass. */
#define LIN_BLOCK_FLOATS ((size_t) 1 << 17)   /* 512 KiB of features per block */
#define LIN_MAX_SEGMENTS 16
#define LIN_SEGMENT_BYTES ((size_t) 8 << 20)
#define LIN_PREFETCH_FLOATS 1024              /* 4 KiB ahead of the feature pass */

/* phi of one row segment of up to 8 values (x, the result in f); relu or elu1. */
static inline __attribute__ ((always_inline)) v8f
features8 (v8f  x,
           bool elu1)
{
  const v8f zero = SPLAT8 (0.0f), one = SPLAT8 (1.0f);
  v8f pos = v8_select (x > zero, x, zero);

  if (!elu1)
    return pos;
  /* elu(x) + 1 = max(x, 0) + min(e^x, 1): x + 1 for x > 0, e^x otherwise; no branch */
  {
    v8f e = v8_exp (x);

    return pos + v8_select (e < one, e, one);
  }
}

/* Features of `rows` rows of H M inputs (x and phi both (rows, H, M), contiguous).
 * Keys (zsum != NULL): zsum (H M) += the features.  Queries (z != NULL): den[r H + h]
 * = phi(x_r,h) . z_h.  Returns false if an input is not finite (phi is then partial). */
static inline __attribute__ ((always_inline)) bool
features_block_kernel (const float *restrict x,
                       float       *restrict phi,
                       size_t                rows,
                       size_t                n_heads,
                       size_t                m,
                       bool                  elu1,
                       float       *restrict zsum,
                       const float *restrict z,
                       float       *restrict den)
{
  const v8i expo = SPLAT8 (0x7f800000);
  v8i bad = SPLAT8 (0);

  for (size_t r = 0; r < rows; r++)
    for (size_t h = 0; h < n_heads; h++)
      {
        const size_t o = (r * n_heads + h) * m;
        const float *xr = x + o;
        float *pr = phi + o;
        float *zs = zsum != NULL ? zsum + h * m : NULL;
        const float *zh = z != NULL ? z + h * m : NULL;
        v8f dacc = SPLAT8 (0.0f);
        size_t j = 0;

        for (; j + 8 <= m; j += 8)
          {
            v8f xv = v8_load (xr + j), p;

            if ((j & 15) == 0)
              __builtin_prefetch (xr + j + LIN_PREFETCH_FLOATS);

            bad |= ((v8i) xv & expo) == expo;
            p = features8 (xv, elu1);
            v8_store (pr + j, p);
            if (zs != NULL)
              v8_store (zs + j, v8_load (zs + j) + p);
            if (zh != NULL)
              dacc += p * v8_load (zh + j);
          }
        if (j < m)
          {
            v8f xv = SPLAT8 (0.0f), p;
            float pb[8];

            memcpy (&xv, xr + j, (m - j) * sizeof (float));
            bad |= ((v8i) xv & expo) == expo;
            p = features8 (xv, elu1);
            memcpy (pb, &p, sizeof pb);
            memcpy (pr + j, pb, (m - j) * sizeof (float));
            for (size_t t = j; t < m; t++)
              {
                if (zs != NULL)
                  zs[t] += pb[t - j];
                if (zh != NULL)
                  dacc[0] += pb[t - j] * zh[t];
              }
          }
        if (den != NULL)
          {
            float d = 0;

            for (int l = 0; l < 8; l++)
              d += dacc[l];
            den[r * n_heads + h] = d;
          }
      }
  for (int l = 0; l < 8; l++)
    if (bad[l] != 0)
      return false;
  return true;
}

/* y row segment (n floats) divided by den in place; 0 where den is 0. */
static inline __attribute__ ((always_inline)) void
scale_row_kernel (float  *y,
                  size_t  n,
                  float   den)
{
  size_t i = 0;

  if (den == 0.0f)
    {
      memset (y, 0, n * sizeof (float));
      return;
    }
  if (fabsf (den) >= 1e-30f && fabsf (den) <= 1e30f)
    {
      const float s = 1.0f / den;
      const v8f sv = SPLAT8 (s);

      for (; i + 8 <= n; i += 8)
        v8_store (y + i, v8_load (y + i) * sv);
      for (; i < n; i++)
        y[i] *= s;
      return;
    }
  for (; i < n; i++)
    y[i] /= den;
}

#if defined(__x86_64__) && defined(__GNUC__)
#define LIN_HAVE_AVX2 1

static __attribute__ ((target ("avx2,fma"))) bool
features_block_avx2 (const float *x, float *phi, size_t rows, size_t n_heads, size_t m, bool elu1,
                     float *zsum, const float *z, float *den)
{
  return features_block_kernel (x, phi, rows, n_heads, m, elu1, zsum, z, den);
}

static __attribute__ ((target ("avx2,fma"))) void
scale_rows_avx2 (float *y, size_t rows, size_t n_heads, size_t dv, const float *den)
{
  for (size_t i = 0; i < rows * n_heads; i++)
    scale_row_kernel (y + i * dv, dv, den[i]);
}

#endif

static bool
features_block (bool vec, const float *x, float *phi, size_t rows, size_t n_heads, size_t m, bool elu1,
                float *zsum, const float *z, float *den)
{
#ifdef LIN_HAVE_AVX2
  if (vec)
    return features_block_avx2 (x, phi, rows, n_heads, m, elu1, zsum, z, den);
#endif
  return features_block_kernel (x, phi, rows, n_heads, m, elu1, zsum, z, den);
}

/* rows x H segments of dv floats (y rows contiguous, H Dv each), row segment i divided by den[i]. */
static void
scale_rows (bool vec, float *y, size_t rows, size_t n_heads, size_t dv, const float *den)
{
#ifdef LIN_HAVE_AVX2
  if (vec)
    {
      scale_rows_avx2 (y, rows, n_heads, dv, den);
      return;
    }
#endif
  for (size_t i = 0; i < rows * n_heads; i++)
    scale_row_kernel (y + i * dv, dv, den[i]);
}

/* ---- small products of the fused path: own register-tiled kernels ----
 *
 * out[r, :] = scale[r] * sum_t A(r, t) B[t, :], A(r, t) = a[r rs + t ts], B row t at bm + t ldb,
 * for R rows and C vectors of columns at once (the R x C accumulators stay in registers; each
 * step loads C vectors of B and broadcasts R values of A).  Used with A = phi(Q) rows against
 * KV (pass 2: K = M) and A = phi(K)^T against V (pass 1: K = rows of the block), where BLAS
 * spends more time packing, zeroing C and on call overhead than in the products. */
typedef float v16f __attribute__ ((vector_size (64)));

#define SPLAT16(x) { x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x }

#define LIN_TILE_BODY(V, SPLAT, STORE, R, C)                                                       \
  {                                                                                         \
    const size_t w_ = sizeof (V) / sizeof (float);                                          \
    V acc[R][C];                                                                            \
                                                                                            \
    _Pragma ("GCC unroll 8") for (int r_ = 0; r_ < R; r_++)                                 \
      _Pragma ("GCC unroll 8") for (int c_ = 0; c_ < C; c_++)                               \
        acc[r_][c_] = (V) { 0 };                                                            \
    for (size_t t = 0; t < kk; t++)                                                         \
      {                                                                                     \
        const float *bt = bm + t * ldb;                                                     \
        V bv[C];                                                                            \
                                                                                            \
        _Pragma ("GCC unroll 8") for (int c_ = 0; c_ < C; c_++)                             \
          memcpy (&bv[c_], bt + c_ * w_, sizeof (V));                                       \
        _Pragma ("GCC unroll 8") for (int r_ = 0; r_ < R; r_++)                             \
          {                                                                                 \
            const float x_ = a[r_ * rs + t * ts];                                           \
            const V p = SPLAT (x_);                                                         \
                                                                                            \
            _Pragma ("GCC unroll 8") for (int c_ = 0; c_ < C; c_++)                         \
              acc[r_][c_] += p * bv[c_];                                                    \
          }                                                                                 \
      }                                                                                     \
    _Pragma ("GCC unroll 8") for (int r_ = 0; r_ < R; r_++)                                 \
      {                                                                                     \
        const float s_ = scale != NULL ? scale[r_ * ss] : 1.0f;                             \
                                                                                            \
        _Pragma ("GCC unroll 8") for (int c_ = 0; c_ < C; c_++)                             \
          {                                                                                 \
            V o_ = acc[r_][c_] * s_;                                                        \
                                                                                            \
            STORE (out + r_ * ldo + c_ * w_, o_);                                           \
          }                                                                                 \
      }                                                                                     \
  }

#define LIN_TILE_ARGS const float *restrict a, size_t rs, size_t ts, const float *restrict bm,  \
                      size_t ldb, size_t kk, float *restrict out, size_t ldo,                   \
                      const float *restrict scale, size_t ss

typedef void (*LinTileFunc) (LIN_TILE_ARGS);

typedef enum
{
  LIN_ISA_GEMM,     /* the core's product (rpe-gemm-private.h) and a scaling pass (any CPU) */
  LIN_ISA_AVX2,     /* 2 x 32 tiles, ymm */
  LIN_ISA_AVX512,   /* 4 x 64 tiles, zmm */
} LinIsa;

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* Plain stores, and non-temporal ones (aligned) for outputs far larger than the caches. */
#define LIN_STORE(p, v)      memcpy ((p), &(v), sizeof (v))
#define LIN_STREAM8(p, v)    _mm256_stream_ps ((p), (__m256) (v))
#define LIN_STREAM16(p, v)   _mm512_stream_ps ((p), (__m512) (v))

static __attribute__ ((target ("avx2,fma"))) void
tile_avx2_r2 (LIN_TILE_ARGS)
LIN_TILE_BODY (v8f, SPLAT8, LIN_STORE, 2, 4)

static __attribute__ ((target ("avx2,fma"))) void
tile_avx2_r1 (LIN_TILE_ARGS)
LIN_TILE_BODY (v8f, SPLAT8, LIN_STORE, 1, 4)

static __attribute__ ((target ("avx2,fma"))) void
tile_avx2_r2_nt (LIN_TILE_ARGS)
LIN_TILE_BODY (v8f, SPLAT8, LIN_STREAM8, 2, 4)

static __attribute__ ((target ("avx2,fma"))) void
tile_avx2_r1_nt (LIN_TILE_ARGS)
LIN_TILE_BODY (v8f, SPLAT8, LIN_STREAM8, 1, 4)

static __attribute__ ((target ("avx512f"))) void
tile_avx512_r4 (LIN_TILE_ARGS)
LIN_TILE_BODY (v16f, SPLAT16, LIN_STORE, 4, 4)

static __attribute__ ((target ("avx512f"))) void
tile_avx512_r1 (LIN_TILE_ARGS)
LIN_TILE_BODY (v16f, SPLAT16, LIN_STORE, 1, 4)

static __attribute__ ((target ("avx512f"))) void
tile_avx512_r4_nt (LIN_TILE_ARGS)
LIN_TILE_BODY (v16f, SPLAT16, LIN_STREAM16, 4, 4)

static __attribute__ ((target ("avx512f"))) void
tile_avx512_r1_nt (LIN_TILE_ARGS)
LIN_TILE_BODY (v16f, SPLAT16, LIN_STREAM16, 1, 4)
#endif

/* The kernels this CPU runs; RPE_LINEAR_ISA=generic|avx2|avx512 lowers the choice (tests run
 * every path the machine has; "blas", the old name of "generic", is accepted). */
static LinIsa
lin_isa (void)
{
#if defined(__x86_64__) && defined(__GNUC__)
  static int cpu = -1;
  const char *env = getenv ("RPE_LINEAR_ISA");
  LinIsa want = LIN_ISA_AVX512;

  if (cpu < 0)
    {
      __builtin_cpu_init ();
      cpu = __builtin_cpu_supports ("avx512f") ? LIN_ISA_AVX512
            : __builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma") ? LIN_ISA_AVX2
            : LIN_ISA_GEMM;
    }
  if (env != NULL && (strcmp (env, "generic") == 0 || strcmp (env, "blas") == 0))
    want = LIN_ISA_GEMM;
  else if (env != NULL && strcmp (env, "avx2") == 0)
    want = LIN_ISA_AVX2;
  return (LinIsa) cpu < want ? (LinIsa) cpu : want;
#else
  return LIN_ISA_GEMM;
#endif
}

const char *
_rpe_linear_kernel_name (void)
{
  LinIsa isa = lin_isa ();

  return isa == LIN_ISA_AVX512 ? "avx512" : isa == LIN_ISA_AVX2 ? "avx2" : "generic";
}

/* Columns per tile of the ISA's kernels (dv must be a multiple to use them). */
static size_t
lin_isa_cols (LinIsa isa)
{
  return isa == LIN_ISA_AVX512 ? 64 : isa == LIN_ISA_AVX2 ? 32 : 0;
}

/* out (rows, cols) = diag(scale) A B through the ISA's tiles; cols a multiple of lin_isa_cols.
 * stream: non-temporal stores (out and ldo aligned to the vector size). */
static void
lin_product (LinIsa       isa,
             bool         stream,
             size_t       rows,
             size_t       cols,
             const float *a,
             size_t       rs,
             size_t       ts,
             const float *bm,
             size_t       ldb,
             size_t       kk,
             float       *out,
             size_t       ldo,
             const float *scale,
             size_t       ss)
{
#if defined(__x86_64__) && defined(__GNUC__)
  const size_t tc = lin_isa_cols (isa);
  const size_t tr = isa == LIN_ISA_AVX512 ? 4 : 2;
  LinTileFunc big = isa == LIN_ISA_AVX512 ? (stream ? tile_avx512_r4_nt : tile_avx512_r4)
                    : (stream ? tile_avx2_r2_nt : tile_avx2_r2);
  LinTileFunc one = isa == LIN_ISA_AVX512 ? (stream ? tile_avx512_r1_nt : tile_avx512_r1)
                    : (stream ? tile_avx2_r1_nt : tile_avx2_r1);

  for (size_t c0 = 0; c0 < cols; c0 += tc)
    {
      size_t r = 0;

      for (; r + tr <= rows; r += tr)
        big (a + r * rs, rs, ts, bm + c0, ldb, kk, out + r * ldo + c0, ldo,
             scale != NULL ? scale + r * ss : NULL, ss);
      for (; r < rows; r++)
        one (a + r * rs, rs, ts, bm + c0, ldb, kk, out + r * ldo + c0, ldo,
             scale != NULL ? scale + r * ss : NULL, ss);
    }
#else
  (void) isa; (void) stream; (void) rows; (void) cols; (void) a; (void) rs; (void) ts; (void) bm; (void) ldb;
  (void) kk; (void) out; (void) ldo; (void) scale; (void) ss;
#endif
}

typedef struct
{
  size_t            n, n_heads, m, dv, hm, hdv, mdv, block, n_blocks, n_segments;
  bool              elu1;
  LinIsa            isa;             /* the products' kernels */
  bool              vec;             /* AVX2 features and scaling */
  bool              stream;          /* pass 2 writes y with non-temporal stores */
  const float      *q, *k, *v;
  float            *y;
  const RpeMonitor *monitor;
  double           *seg_kv;          /* (S, H, M, Dv) */
  double           *seg_z;           /* (S, H, M) */
  float            *kv_f;            /* (H, M, Dv) the summed KV, for pass 2 */
  float            *z_f;             /* (H, M) */
  float            *phi[QKV_MAX_WORKERS], *tmp[QKV_MAX_WORKERS], *den[QKV_MAX_WORKERS];
  RpeStatus         status[QKV_MAX_WORKERS];
} LinNcJob;

static bool
lin_nc_stop (LinNcJob  *job,
             size_t     worker,
             RpeStatus  st)
{
  job->status[worker] = st;
  return st != RPE_OK;
}

/* Pass 1, worker w: segments w, w + W, ... */
static void
lin_nc_keys_worker (size_t  worker,
                    size_t  n_workers,
                    void   *data)
{
  LinNcJob *job = data;
  const size_t m = job->m, dv = job->dv, hm = job->hm, hdv = job->hdv, mdv = job->mdv;
  float *phi = job->phi[worker], *kv = job->tmp[worker], *zb = job->den[worker];
  size_t done = 0, mine = 0;

  job->status[worker] = RPE_OK;
  for (size_t s = worker; s < job->n_segments; s += n_workers)
    mine += job->n_blocks * (s + 1) / job->n_segments - job->n_blocks * s / job->n_segments;
  for (size_t s = worker; s < job->n_segments; s += n_workers)
    {
      double *skv = job->seg_kv + s * job->n_heads * mdv, *sz = job->seg_z + s * hm;
      const size_t b0 = job->n_blocks * s / job->n_segments, b1 = job->n_blocks * (s + 1) / job->n_segments;

      for (size_t bi = b0; bi < b1; bi++)
        {
          const size_t r0 = bi * job->block, b = min_size (job->block, job->n - r0);

          if (rpe_monitor_cancelled (job->monitor) && lin_nc_stop (job, worker, RPE_ERROR_CANCELLED))
            return;
          if (!all_finite_fast (job->v + r0 * hdv, b * hdv) && lin_nc_stop (job, worker, RPE_ERROR_NOT_FINITE))
            return;
          memset (zb, 0, hm * sizeof (float));
          if (!features_block (job->vec, job->k + r0 * hm, phi, b, job->n_heads, m, job->elu1, zb, NULL, NULL)
              && lin_nc_stop (job, worker, RPE_ERROR_NOT_FINITE))
            return;
          for (size_t t = 0; t < hm; t++)
            sz[t] += zb[t];
          for (size_t h = 0; h < job->n_heads; h++)
            {
              double *acc = skv + h * mdv;

              /* kv_h (M, Dv) = phi(K_block,h)^T V_block,h */
              if (job->isa != LIN_ISA_GEMM)
                lin_product (job->isa, false, m, dv, phi + h * m, 1, hm, job->v + r0 * hdv + h * dv, hdv, b,
                             kv, dv, NULL, 0);
              else
                _rpe_gemm (m, dv, b, 1.0f, phi + h * m, 1, hm, job->v + r0 * hdv + h * dv, hdv, false, kv, dv);
              for (size_t t = 0; t < mdv; t++)
                acc[t] += kv[t];
            }
          if (worker == 0)
            rpe_monitor_progress (job->monitor, 0.5 * (double) ++done / (double) mine);
        }
    }
}

/* Pass 2, worker w: blocks [B w / W, B (w + 1) / W). */
static void
lin_nc_queries_worker (size_t  worker,
                       size_t  n_workers,
                       void   *data)
{
  LinNcJob *job = data;
  const size_t m = job->m, dv = job->dv, hm = job->hm, hdv = job->hdv, mdv = job->mdv;
  const size_t b0 = job->n_blocks * worker / n_workers, b1 = job->n_blocks * (worker + 1) / n_workers;
  float *phi = job->phi[worker], *den = job->den[worker];

  job->status[worker] = RPE_OK;
  for (size_t bi = b0; bi < b1; bi++)
    {
      const size_t r0 = bi * job->block, b = min_size (job->block, job->n - r0);
      float *yb = job->y + r0 * hdv;

      if (rpe_monitor_cancelled (job->monitor) && lin_nc_stop (job, worker, RPE_ERROR_CANCELLED))
        return;
      if (!features_block (job->vec, job->q + r0 * hm, phi, b, job->n_heads, m, job->elu1, NULL, job->z_f, den)
          && lin_nc_stop (job, worker, RPE_ERROR_NOT_FINITE))
        return;
      if (job->isa != LIN_ISA_GEMM)
        {
          /* y_h (b, Dv) = diag(1 / den) phi(Q_block,h) kv_h, straight into y; a den whose
           * reciprocal is not a normal float (or 0) is applied by a division afterwards */
          float *inv = den + b * job->n_heads;
          bool odd = false;

          for (size_t i = 0; i < b * job->n_heads; i++)
            {
              const float d = fabsf (den[i]);

              inv[i] = d >= 1e-30f && d <= 1e30f ? 1.0f / den[i] : 1.0f;
              odd |= !(d >= 1e-30f && d <= 1e30f);
            }
          for (size_t h = 0; h < job->n_heads; h++)
            lin_product (job->isa, job->stream, b, dv, phi + h * m, hm, 1, job->kv_f + h * mdv, dv, m,
                         yb + h * dv, hdv, inv + h, job->n_heads);
          if (odd)
            for (size_t i = 0; i < b * job->n_heads; i++)
              if (inv[i] == 1.0f && den[i] != 1.0f)
                scale_row_kernel (yb + i * dv, dv, den[i]);
        }
      else
        {
          for (size_t h = 0; h < job->n_heads; h++)
            /* numerators (b, Dv) = phi(Q_block,h) kv_h, written in place into y */
            _rpe_gemm (b, dv, m, 1.0f, phi + h * m, hm, 1, job->kv_f + h * mdv, dv, false, yb + h * dv, hdv);
          scale_rows (job->vec, yb, b, job->n_heads, dv, den);
        }
      if (worker == 0)
        rpe_monitor_progress (job->monitor, 0.5 + 0.5 * (double) (bi + 1 - b0) / (double) (b1 - b0));
    }
#if defined(__x86_64__) && defined(__GNUC__)
  if (job->stream)
    _mm_sfence ();   /* the streamed stores are visible before the join */
#endif
}

static RpeStatus
qkv_noncausal_elementwise (bool              elu1,
                           size_t            n,
                           size_t            n_heads,
                           size_t            m,
                           size_t            dv,
                           const float      *q,
                           const float      *k,
                           const float      *v,
                           float            *y,
                           const RpeMonitor *monitor)
{
  LinNcJob job;
  RpeStatus st = RPE_OK;
  size_t hm, hdv, mdv, hmdv, seg_floats, workers;

  if (!rpe_size_mul (n_heads, m, &hm) || !rpe_size_mul (n_heads, dv, &hdv) || !rpe_size_mul (m, dv, &mdv)
      || !rpe_size_mul (mdv, n_heads, &hmdv) || !rpe_size_add (hmdv, hm, &seg_floats)
      || n > INT_MAX || hm > INT_MAX || hdv > INT_MAX)
    return RPE_ERROR_OVERFLOW;

  memset (&job, 0, sizeof job);
  job.n = n;
  job.n_heads = n_heads;
  job.m = m;
  job.dv = dv;
  job.hm = hm;
  job.hdv = hdv;
  job.mdv = mdv;
  job.elu1 = elu1;
  job.q = q;
  job.k = k;
  job.v = v;
  job.y = y;
  job.monitor = monitor;
  job.isa = lin_isa ();
  job.vec = job.isa != LIN_ISA_GEMM;
  if (job.isa != LIN_ISA_GEMM && dv % lin_isa_cols (job.isa) != 0)
    job.isa = lin_isa_cols (LIN_ISA_AVX2) != 0 && dv % lin_isa_cols (LIN_ISA_AVX2) == 0
              && job.isa == LIN_ISA_AVX512 ? LIN_ISA_AVX2 : LIN_ISA_GEMM;
  /* y far larger than the caches and aligned for the vector stores: stream it */
  job.stream = job.isa != LIN_ISA_GEMM && (double) n * (double) hdv * sizeof (float) > 32e6
               && (uintptr_t) y % 64 == 0;
  job.block = LIN_BLOCK_FLOATS / hm;
  job.block = job.block < 16 ? 16 : job.block > 256 ? 256 : job.block;
  job.n_blocks = (n + job.block - 1) / job.block;
  /* a fixed number of segments (independent of the workers), each with its own sums */
  job.n_segments = min_size (job.n_blocks, LIN_MAX_SEGMENTS);
  job.n_segments = min_size (job.n_segments, LIN_SEGMENT_BYTES / sizeof (double) / seg_floats);
  if (job.n_segments == 0)
    job.n_segments = 1;
  workers = min_size (rpe_parallel_threads (), QKV_MAX_WORKERS);
  if ((double) n * (double) hm * (double) dv < 1e6)
    workers = 1;   /* not worth a thread */

  if ((job.seg_kv = rpe_alloc0 (job.n_segments * hmdv, sizeof (double), &st)) == NULL
      || (job.seg_z = rpe_alloc0 (job.n_segments * hm, sizeof (double), &st)) == NULL
      || (job.kv_f = rpe_alloc (hmdv, sizeof (float), &st)) == NULL
      || (job.z_f = rpe_alloc (hm, sizeof (float), &st)) == NULL)
    goto done;
  for (size_t w = 0; w < workers; w++)
    if ((job.phi[w] = rpe_alloc (job.block * hm, sizeof (float), &st)) == NULL
        || (job.tmp[w] = rpe_alloc (mdv, sizeof (float), &st)) == NULL
        || (job.den[w] = rpe_alloc (2 * job.block * n_heads > hm ? 2 * job.block * n_heads : hm,
                                    sizeof (float), &st)) == NULL)
      goto done;

  rpe_parallel_run (workers, lin_nc_keys_worker, &job);
  for (size_t w = 0; w < workers; w++)
    if (job.status[w] != RPE_OK)
      {
        st = job.status[w];
        goto done;
      }
  /* the segments' sums, in order */
  for (size_t s = 1; s < job.n_segments; s++)
    {
      for (size_t t = 0; t < hmdv; t++)
        job.seg_kv[t] += job.seg_kv[s * hmdv + t];
      for (size_t t = 0; t < hm; t++)
        job.seg_z[t] += job.seg_z[s * hm + t];
    }
  for (size_t t = 0; t < hmdv; t++)
    job.kv_f[t] = (float) job.seg_kv[t];
  for (size_t t = 0; t < hm; t++)
    job.z_f[t] = (float) job.seg_z[t];

  rpe_parallel_run (workers, lin_nc_queries_worker, &job);
  for (size_t w = 0; w < workers; w++)
    if (job.status[w] != RPE_OK)
      {
        st = job.status[w];
        goto done;
      }
  rpe_monitor_progress (monitor, 1.0);

done:
  rpe_free (job.seg_kv);
  rpe_free (job.seg_z);
  rpe_free (job.kv_f);
  rpe_free (job.z_f);
  for (size_t w = 0; w < QKV_MAX_WORKERS; w++)
    {
      rpe_free (job.phi[w]);
      rpe_free (job.tmp[w]);
      rpe_free (job.den[w]);
    }
  return st;
}

RpeStatus
rpe_linear_attention_qkv (RpeFeatureMap            map,
                          const RpeFeatureOptions *options,
                          size_t                   n,
                          size_t                   n_heads,
                          size_t                   f,
                          size_t                   dv,
                          const float             *q,
                          const float             *k,
                          const float             *v,
                          bool                     causal,
                          float                   *y,
                          const RpeMonitor        *monitor)
{
  RpeStatus st;
  size_t m, count;
  float *pq = NULL, *pk = NULL;
  Stage stage;

  if (q == NULL || k == NULL || n == 0 || n_heads == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if ((st = rpe_feature_map_dim (map, options, f, &m)) != RPE_OK)
    return st;
  if (!rpe_size_mul (n, n_heads, &count) || !rpe_size_mul (count, m, &count))
    return RPE_ERROR_OVERFLOW;
  /* row-local features: chunked, O(chunk) extra memory */
  if ((map == RPE_FEATURE_RELU || map == RPE_FEATURE_ELU1 || map == RPE_FEATURE_DPFP)
      && v != NULL && y != NULL && dv > 0)
    {
      size_t cv;

      if (!rpe_size_mul (n, n_heads, &cv) || !rpe_size_mul (cv, dv, &cv))
        return RPE_ERROR_OVERFLOW;
      if (!causal && map != RPE_FEATURE_DPFP)
        return qkv_noncausal_elementwise (map == RPE_FEATURE_ELU1, n, n_heads, m, dv, q, k, v, y, monitor);
      return qkv_chunked (map, options, n, n_heads, f, m, dv, q, k, v, causal, y, monitor);
    }

  pq = rpe_alloc (count, sizeof (float), &st);
  if (pq != NULL)
    pk = rpe_alloc (count, sizeof (float), &st);
  if (pk == NULL)
    goto done;
  /* Three stages share the caller's progress range: queries 0-25 %, keys 25-50 %, attention 50-100 %. */
  stage.parent = monitor;
  stage.monitor.cancel = monitor != NULL ? monitor->cancel : NULL;
  stage.monitor.progress = stage_progress;
  stage.monitor.user_data = &stage;
  stage.base = 0.0;
  stage.span = 0.25;
  if ((st = rpe_feature_map_apply (map, options, RPE_FEATURE_QUERY, n, n_heads, f, q, pq, &stage.monitor)) != RPE_OK)
    goto done;
  stage.base = 0.25;
  if ((st = rpe_feature_map_apply (map, options, RPE_FEATURE_KEY, n, n_heads, f, k, pk, &stage.monitor)) != RPE_OK)
    goto done;
  stage.base = 0.5;
  stage.span = 0.5;
  st = rpe_linear_attention (n, n_heads, m, dv, pq, pk, v, causal, y, &stage.monitor);

done:
  rpe_free (pk);
  rpe_free (pq);
  return st;
}

/* ---- implied attention map ---- */

static void
map_rows_checked (size_t       n,
                  size_t       n_heads,
                  size_t       m,
                  const float *phi_q,
                  const float *phi_k,
                  bool         causal,
                  size_t       h,
                  size_t       m0,
                  size_t       n_rows,
                  float       *out)
{
  const size_t hm = n_heads * m;
  const size_t end = m0 + n_rows;

  cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasTrans,
               (int) n_rows, (int) (causal ? end : n), (int) m,
               1.0f, phi_q + m0 * hm + h * m, (int) hm, phi_k + h * m, (int) hm,
               0.0f, out, (int) n);
  for (size_t i = 0; i < n_rows; i++)
    {
      float *r = out + i * n;
      size_t n_cols = causal ? m0 + i + 1 : n;
      double sum = 0;

      for (size_t j = 0; j < n_cols; j++)
        sum += r[j];
      for (size_t j = 0; j < n_cols; j++)
        r[j] = sum != 0 ? (float) (r[j] / sum) : 0.0f;
      for (size_t j = n_cols; j < n; j++)
        r[j] = 0.0f;
    }
}

RpeStatus
rpe_linear_attention_map_rows (size_t            n,
                               size_t            n_heads,
                               size_t            m,
                               const float      *phi_q,
                               const float      *phi_k,
                               bool              causal,
                               size_t            head,
                               size_t            m0,
                               size_t            n_rows,
                               float            *out,
                               const RpeMonitor *monitor)
{
  RpeStatus st;
  size_t end;

  if ((st = linear_check (n, n_heads, m, 0, phi_q, phi_k, NULL)) != RPE_OK)
    return st;
  if (out == NULL || n_rows == 0 || head >= n_heads
      || !rpe_size_add (m0, n_rows, &end) || end > n)
    return RPE_ERROR_INVALID_ARGUMENT;

  for (size_t r = 0; r < n_rows; r += ROW_CHUNK)
    {
      size_t b = min_size (ROW_CHUNK, n_rows - r);

      if (rpe_monitor_cancelled (monitor))
        return RPE_ERROR_CANCELLED;
      map_rows_checked (n, n_heads, m, phi_q, phi_k, causal, head, m0 + r, b, out + r * n);
      rpe_monitor_progress (monitor, (double) (r + b) / (double) n_rows);
    }
  return RPE_OK;
}

RpeStatus
rpe_linear_attention_map (size_t            n,
                          size_t            n_heads,
                          size_t            m,
                          const float      *phi_q,
                          const float      *phi_k,
                          bool              causal,
                          float            *a,
                          const RpeMonitor *monitor)
{
  RpeStatus st;
  size_t per_map;

  if ((st = linear_check (n, n_heads, m, 0, phi_q, phi_k, NULL)) != RPE_OK)
    return st;
  if (a == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (n, n, &per_map) || !rpe_size_mul (per_map, n_heads, &(size_t) { 0 }))
    return RPE_ERROR_OVERFLOW;

  for (size_t h = 0; h < n_heads; h++)
    for (size_t r = 0; r < n; r += ROW_CHUNK)
      {
        size_t b = min_size (ROW_CHUNK, n - r);

        if (rpe_monitor_cancelled (monitor))
          return RPE_ERROR_CANCELLED;
        map_rows_checked (n, n_heads, m, phi_q, phi_k, causal, h, r, b, a + h * per_map + r * n);
        rpe_monitor_progress (monitor, ((double) h + (double) (r + b) / (double) n) / (double) n_heads);
      }
  return RPE_OK;
}

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
#include <string.h>

#include <fftw3.h>
#include <cblas.h>

#include "rpe-alloc.h"
#include "rpe-parallel.h"
#include "rpe-sine-spe.h"

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
          cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, (int) (m1 - m0), (int) r,
                       (int) k2, s, omega_q, (int) k2, zc, (int) r, 0.0f,
                       qbar + m0 * hdr + c * r, (int) hdr);
          cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, (int) (m1 - m0), (int) r,
                       (int) k2, s, omega_k, (int) k2, zc, (int) r, 0.0f,
                       kbar + m0 * hdr + c * r, (int) hdr);
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
 *   Qhat_h = s [diag(q_d sqrt(1-g_d)) Omega_d]_d (N x D 2K) z_h (D 2K x R)
 *          + s [q_d sqrt(g_d)]_d (N x D) eps_h (D x R),
 * where z_h (H, D, 2K, R) and eps_h (H, D, R) are already contiguous stacks: two
 * compute-bound GEMMs per block of rows, no (N, H, D, R) buffer. */
typedef struct
{
  const RpeSpeParams *params;
  size_t              m_begin, n, r;   /* rows m_begin .. n-1; q, k, qhat, khat start at row m_begin */
  const float        *z, *eps, *q, *k;
  float              *qhat, *khat;
  const RpeMonitor   *monitor;
  RpeStatus           status[256];
} SineFusedJob;

/* Heads worker, worker + n_workers, ...: each head's output columns are its own, and its
 * values do not depend on which worker computes it. */
static void
sine_fused_worker (size_t worker, size_t n_workers, void *data)
{
  SineFusedJob *job = data;
  const RpeSpeParams *params = job->params;
  const size_t base = job->m_begin, n = job->n, r = job->r;
  const float *z = job->z, *eps = job->eps, *q = job->q, *k = job->k;
  float *qhat = job->qhat, *khat = job->khat;
  const RpeMonitor *monitor = job->monitor;
  const size_t H = params->n_heads, D = params->n_features;
  const size_t k2 = 2 * params->n_sines;
  const size_t width = D * k2;
  const size_t hr = H * r;
  const float s = (float) rpe_spe_code_scale (D, r);
  const bool gated = params->gate != NULL;
  const size_t rows = n - base < BLOCK_FUSED ? n - base : BLOCK_FUSED;
  const size_t mine = (H + n_workers - 1 - worker) / n_workers;
  float *aq = NULL, *ak = NULL, *gq = NULL, *gk = NULL, *fq = NULL, *fk = NULL;
  double *work = NULL;
  size_t count = rows * width, gcount = rows * D, done = 0;   /* checked by the caller */
  RpeStatus st = RPE_OK;

  if ((aq = rpe_alloc (count, sizeof (float), &st)) == NULL
      || (ak = rpe_alloc (count, sizeof (float), &st)) == NULL
      || (gq = rpe_alloc (gcount, sizeof (float), &st)) == NULL
      || (gk = rpe_alloc (gcount, sizeof (float), &st)) == NULL
      || (fq = rpe_alloc (rows, sizeof (float), &st)) == NULL
      || (fk = rpe_alloc (rows, sizeof (float), &st)) == NULL
      || (work = rpe_alloc (params->n_sines, WORK_PER_SINE * sizeof (double), &st)) == NULL)
    goto out;

  for (size_t h = worker; h < H; h += n_workers)
    {
      const float *zh = z + h * width * r;

      for (size_t m0 = base; m0 < n; m0 += BLOCK_FUSED)
        {
          size_t m1 = m0 + BLOCK_FUSED < n ? m0 + BLOCK_FUSED : n;
          size_t b = m1 - m0;

          if (rpe_monitor_cancelled (monitor))
            {
              st = RPE_ERROR_CANCELLED;
              goto out;
            }
          /* block d of row i is x[m, h, d] sqrt(1 - g_d) Omega_d[m, :]; gate columns
           * x[m, h, d] sqrt(g_d) */
          for (size_t d = 0; d < D; d++)
            {
              const double g = gated ? params->gate[h * D + d] : 0.0;
              const float a = (float) sqrt (1.0 - g), gg = (float) sqrt (g);

              for (size_t i = 0; i < b; i++)
                {
                  const size_t m = m0 + i;
                  const float xq = q != NULL ? q[((m - base) * H + h) * D + d] : 0.0f;
                  const float xk = k != NULL ? k[((m - base) * H + h) * D + d] : 0.0f;

                  fq[i] = xq * a;
                  fk[i] = xk * a;
                  gq[i * D + d] = xq * gg;
                  gk[i * D + d] = xk * gg;
                }
              fill_omega (params, h * D + d, m0, m1, aq, ak, width, d * k2, fq, fk, work);
            }
          if (qhat != NULL)
            {
              cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, (int) b, (int) r,
                           (int) width, s, aq, (int) width, zh, (int) r, 0.0f,
                           qhat + (m0 - base) * hr + h * r, (int) hr);
              if (gated)
                cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, (int) b, (int) r,
                             (int) D, s, gq, (int) D, eps + h * D * r, (int) r, 1.0f,
                             qhat + (m0 - base) * hr + h * r, (int) hr);
            }
          if (khat != NULL)
            {
              cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, (int) b, (int) r,
                           (int) width, s, ak, (int) width, zh, (int) r, 0.0f,
                           khat + (m0 - base) * hr + h * r, (int) hr);
              if (gated)
                cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, (int) b, (int) r,
                             (int) D, s, gk, (int) D, eps + h * D * r, (int) r, 1.0f,
                             khat + (m0 - base) * hr + h * r, (int) hr);
            }
          if (worker == 0)
            rpe_monitor_progress (monitor, ((double) done + (double) (m1 - base) / (double) (n - base))
                                           / (double) mine);
        }
      done++;
    }

out:
  rpe_free (aq);
  rpe_free (ak);
  rpe_free (gq);
  rpe_free (gk);
  rpe_free (fq);
  rpe_free (fk);
  rpe_free (work);
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

/* Rows m0 .. m0 + rows - 1 of the above: the blocks of rows start where the whole call's do
 * (m0 a multiple of BLOCK_FUSED), so every row is built from the same operands as in the whole
 * call; a last short block is a GEMM of fewer rows, which BLAS may sum in another order. */
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
  const size_t H = params->n_heads, D = params->n_features;
  const size_t width = D * 2 * params->n_sines;
  const size_t block = rows < BLOCK_FUSED ? rows : BLOCK_FUSED;
  SineFusedJob job;
  size_t count, gcount, workers;
  RpeStatus st = RPE_OK;

  _Static_assert (BLOCK_FUSED == RPE_SPE_FUSED_ROWS_ALIGN, "row ranges start at whole blocks");
  if (m0 % BLOCK_FUSED != 0 || rows == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (block, width, &count) || !rpe_size_mul (block, D, &gcount))
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
  job = (SineFusedJob) { params, m0, m0 + rows, r, z, eps, q, k, qhat, khat, monitor, { RPE_OK } };
  rpe_parallel_run (workers, sine_fused_worker, &job);
  for (size_t w = 0; w < workers; w++)
    if (job.status[w] != RPE_OK && (st == RPE_OK || job.status[w] == RPE_ERROR_CANCELLED))
      st = job.status[w];
  if (st == RPE_OK)
    rpe_monitor_progress (monitor, 1.0);
  return st;
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

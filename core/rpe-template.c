/* rpe-template.c: analytic and empirical SPE templates, SPE and exact logits
 * (docs/math.md, sections 1-4).
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#include <fftw3.h>
#include <cblas.h>

#include "rpe-alloc.h"
#include "rpe-attention-private.h"
#include "rpe-conv-spe.h"
#include "rpe-sine-spe.h"
#include "rpe-spe.h"

/* the largest R of an empirical template computed by _rpe_dense_product_rows (a packed key
 * panel, R x 32 floats, then stays within L1) */
#define DENSE_PRODUCT_MAX_R 256

/* row[j] += a * x[j] * y[j], written 8-wide for GCC's SLP vectoriser at -O2. */
static inline void
mul_acc (float       *restrict row,
         const float *restrict x,
         const float *restrict y,
         float                 a,
         size_t                n)
{
  size_t j = 0;

  for (; j + 8 <= n; j += 8)
    {
      row[j] += a * x[j] * y[j];                 row[j + 1] += a * x[j + 1] * y[j + 1];
      row[j + 2] += a * x[j + 2] * y[j + 2];     row[j + 3] += a * x[j + 3] * y[j + 3];
      row[j + 4] += a * x[j + 4] * y[j + 4];     row[j + 5] += a * x[j + 5] * y[j + 5];
      row[j + 6] += a * x[j + 6] * y[j + 6];     row[j + 7] += a * x[j + 7] * y[j + 7];
    }
  for (; j < n; j++)
    row[j] += a * x[j] * y[j];
}

/* Ptilde lag profile of (h, d) in double, 2N-1 values; params validated, indices checked. */
static void
lags_double (const RpeSpeParams *params,
             size_t              h,
             size_t              d,
             size_t              n,
             bool                gated,
             double             *out)
{
  const size_t len = 2 * n - 1;

  if (params->method == RPE_SPE_SINE)
    _rpe_sine_spe_lags (params, h, d, n, out);
  else
    _rpe_conv_spe_lags (params, h, d, n, out);

  if (gated && params->gate != NULL)
    {
      /* Ptilde = (1 - g) P + g (docs/math.md, section 3) */
      double g = params->gate[h * params->n_features + d];

      for (size_t i = 0; i < len; i++)
        out[i] = (1.0 - g) * out[i] + g;
    }
}

/* Checks shared by the analytic template functions; *len = 2N - 1. */
static RpeStatus
check_template_args (const RpeSpeParams *params,
                     size_t              h,
                     size_t              d,
                     size_t              n,
                     const void         *out,
                     size_t             *len)
{
  RpeStatus st;

  if ((st = rpe_spe_params_validate (params)) != RPE_OK)
    return st;
  if (out == NULL || n == 0 || h >= params->n_heads || d >= params->n_features)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (n, 2, len))
    return RPE_ERROR_OVERFLOW;
  *len -= 1;
  return RPE_OK;
}

RpeStatus
rpe_spe_template_lags (const RpeSpeParams *params,
                       size_t              h,
                       size_t              d,
                       size_t              n,
                       bool                gated,
                       float              *out)
{
  RpeStatus st;
  size_t len;
  double *tmp;

  if ((st = check_template_args (params, h, d, n, out, &len)) != RPE_OK)
    return st;
  if ((tmp = rpe_alloc (len, sizeof (double), &st)) == NULL)
    return st;
  lags_double (params, h, d, n, gated, tmp);
  for (size_t i = 0; i < len; i++)
    out[i] = (float) tmp[i];
  rpe_free (tmp);
  return RPE_OK;
}

RpeStatus
rpe_spe_template (const RpeSpeParams *params,
                  size_t              h,
                  size_t              d,
                  size_t              n,
                  bool                gated,
                  float              *out)
{
  RpeStatus st;
  size_t len, bytes;
  float *lags;

  if ((st = check_template_args (params, h, d, n, out, &len)) != RPE_OK)
    return st;
  if ((st = rpe_size_bytes (&bytes, sizeof (float), n, n, 1, 1)) != RPE_OK)
    return st;
  if ((lags = rpe_alloc (len, sizeof (float), &st)) == NULL)
    return st;
  if ((st = rpe_spe_template_lags (params, h, d, n, gated, lags)) == RPE_OK)
    st = rpe_spe_template_rows (lags, n, 0, n, out);
  rpe_free (lags);
  return st;
}

RpeStatus
rpe_spe_template_rows (const float *lags,
                       size_t       n,
                       size_t       m0,
                       size_t       n_rows,
                       float       *out)
{
  size_t end, len;
  RpeStatus st;
  float *rev;

  if (lags == NULL || out == NULL || n == 0 || !rpe_size_add (m0, n_rows, &end) || end > n)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (n_rows, n, &(size_t) { 0 }) || !rpe_size_mul (n, 2, &len))
    return RPE_ERROR_OVERFLOW;
  len -= 1;
  /* Toeplitz expansion: out[m, n'] = lags[m - n' + N - 1].  With the profile reversed
   * once, rev[i] = lags[2N - 2 - i], row m is the contiguous slice rev[N - 1 - m .. 2N - 2 - m]:
   * one forward copy per row instead of a reversed gather per value. */
  if ((rev = rpe_alloc (len, sizeof (float), &st)) == NULL)
    return st;
  for (size_t i = 0; i < len; i++)
    rev[i] = lags[len - 1 - i];
  for (size_t i = 0; i < n_rows; i++)
    memcpy (out + i * n, rev + (n - 1 - (m0 + i)), n * sizeof (float));
  rpe_free (rev);
  return RPE_OK;
}

RpeStatus
rpe_spe_empirical_template (size_t            n,
                            size_t            n_heads,
                            size_t            n_features,
                            size_t            r,
                            const float      *qbar,
                            const float      *kbar,
                            size_t            h,
                            size_t            d,
                            float            *out)
{
  return rpe_spe_empirical_template_rows (n, n_heads, n_features, r, qbar, kbar, h, d, 0, n, out);
}

RpeStatus
rpe_spe_empirical_template_rows (size_t            n,
                                 size_t            n_heads,
                                 size_t            n_features,
                                 size_t            r,
                                 const float      *qbar,
                                 const float      *kbar,
                                 size_t            h,
                                 size_t            d,
                                 size_t            m0,
                                 size_t            n_rows,
                                 float            *out)
{
  size_t bytes, hdr, end;
  RpeStatus st;
  float alpha;

  if (n == 0 || n_heads == 0 || n_features == 0 || r == 0 || qbar == NULL || kbar == NULL
      || out == NULL || h >= n_heads || d >= n_features || n_rows == 0
      || !rpe_size_add (m0, n_rows, &end) || end > n)
    return RPE_ERROR_INVALID_ARGUMENT;
  if ((st = rpe_size_bytes (&bytes, sizeof (float), n, n_heads, n_features, r)) != RPE_OK
      || (st = rpe_size_bytes (&bytes, sizeof (float), n_rows, n, 1, 1)) != RPE_OK)
    return st;
  hdr = n_heads * n_features * r;
  if (hdr > INT_MAX || n > INT_MAX)
    return RPE_ERROR_OVERFLOW;

  /* Phat_d = sqrt(R D) / R * Qbar_d Kbar_d^T, Qbar_d the strided (N x R) slice: the
   * register-tiled engine of the attention maps in its plain mode (keys packed once per
   * call, tiles stored straight into out) when R fits its panels, else sgemm */
  alpha = (float) (sqrt ((double) r * (double) n_features) / (double) r);
  if (r <= DENSE_PRODUCT_MAX_R)
    return _rpe_dense_product_rows (qbar + (h * n_features + d) * r, kbar + (h * n_features + d) * r, hdr, n, r,
                                    alpha, m0, n_rows, out, NULL);
  cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasTrans, (int) n_rows, (int) n, (int) r, alpha,
               qbar + (m0 * n_heads * n_features + h * n_features + d) * r, (int) hdr,
               kbar + (h * n_features + d) * r, (int) hdr,
               0.0f, out, (int) n);
  return RPE_OK;
}

RpeStatus
rpe_spe_logits (size_t            n,
                size_t            n_heads,
                size_t            r,
                const float      *qhat,
                const float      *khat,
                float            *logits,
                const RpeMonitor *monitor)
{
  size_t bytes, hr;
  RpeStatus st;
  float alpha;

  if (n == 0 || n_heads == 0 || r == 0 || qhat == NULL || khat == NULL || logits == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  if ((st = rpe_size_bytes (&bytes, sizeof (float), n, n_heads, r, 1)) != RPE_OK
      || (st = rpe_size_bytes (&bytes, sizeof (float), n_heads, n, n, 1)) != RPE_OK)
    return st;
  hr = n_heads * r;
  if (hr > INT_MAX || n > INT_MAX)
    return RPE_ERROR_OVERFLOW;

  alpha = (float) (1.0 / sqrt ((double) r));
  for (size_t h = 0; h < n_heads; h++)
    {
      if (rpe_monitor_cancelled (monitor))
        return RPE_ERROR_CANCELLED;
      /* lhat_h = Qhat_h Khat_h^T / sqrt(R), Qhat_h the strided (N x R) slice of (N, H, R) */
      cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasTrans, (int) n, (int) n, (int) r, alpha,
                   qhat + h * r, (int) hr, khat + h * r, (int) hr,
                   0.0f, logits + h * n * n, (int) n);
      rpe_monitor_progress (monitor, (double) (h + 1) / (double) n_heads);
    }
  return RPE_OK;
}

/* Exact logits l[h, m, n] = sum_d q[m,h,d] k[n,h,d] Ptilde_hd(m - n) / sqrt(D) (paper eq. 8).
 *
 * No transcendental call in the O(N^2 D) loop and no N x N x D buffer: each (h, d)
 * lag profile is computed once (2N-1 values, stored reversed so that the inner loop
 * over key positions n runs forward through memory), keys are transposed to (D, N),
 * and row m accumulates  row[n] += q[m,d] * kT[d, n] * Prev[d, n - m + N - 1].
 * Extra memory: O(N D) per head.  Rows go to `sink` in blocks of at most block_rows
 * (through buf), or straight into logits (H, N, N) when sink is NULL. */
static RpeStatus
exact_logits_run (const RpeSpeParams     *params,
                  size_t                  n,
                  const float            *q,
                  const float            *k,
                  bool                    gated,
                  float                  *logits,
                  size_t                  block_rows,
                  float                  *buf,
                  RpeExactLogitsSink      sink,
                  void                   *user_data,
                  const RpeMonitor       *monitor)
{
  size_t bytes, len, big;
  size_t n_heads, n_features;
  float *prev = NULL, *kt = NULL;
  double *lag = NULL;
  float inv_sqrt_d;
  RpeStatus st;

  if ((st = rpe_spe_params_validate (params)) != RPE_OK)
    return st;
  if (n == 0 || q == NULL || k == NULL || (sink == NULL ? logits == NULL : (buf == NULL || block_rows == 0)))
    return RPE_ERROR_INVALID_ARGUMENT;
  n_heads = params->n_heads;
  n_features = params->n_features;
  if ((st = rpe_size_bytes (&bytes, sizeof (float), n, n_heads, n_features, 1)) != RPE_OK
      || (st = rpe_size_bytes (&bytes, sizeof (float), n_heads, n, n, 1)) != RPE_OK
      || (st = rpe_size_bytes (&bytes, sizeof (double), n, 2, n_features, 1)) != RPE_OK)
    return st;
  len = 2 * n - 1;
  big = len * n_features;
  if (sink == NULL)
    block_rows = 32;
  /* finite inputs: a logit that is not finite is then an overflow */
  if (!rpe_all_finite_f (q, n * n_heads * n_features) || !rpe_all_finite_f (k, n * n_heads * n_features))
    return RPE_ERROR_NOT_FINITE;

  if ((prev = rpe_alloc (big, sizeof (float), &st)) == NULL
      || (kt = rpe_alloc (n * n_features, sizeof (float), &st)) == NULL
      || (lag = rpe_alloc (len, sizeof (double), &st)) == NULL)
    goto out;

  inv_sqrt_d = (float) (1.0 / sqrt ((double) n_features));
  for (size_t h = 0; h < n_heads; h++)
    {
      if (rpe_monitor_cancelled (monitor))
        {
          st = RPE_ERROR_CANCELLED;
          goto out;
        }
      for (size_t d = 0; d < n_features; d++)
        {
          float *pd = prev + d * len;

          lags_double (params, h, d, n, gated, lag);
          /* prev[d, j] = Ptilde(-(j - (N-1))) = lag[2N-2-j], with 1/sqrt(D) folded in */
          for (size_t j = 0; j < len; j++)
            pd[j] = (float) (lag[len - 1 - j] * inv_sqrt_d);
          for (size_t i = 0; i < n; i++)
            kt[d * n + i] = k[(i * n_heads + h) * n_features + d];
        }

      for (size_t m0 = 0; m0 < n; m0 += block_rows)
        {
          size_t m1 = m0 + block_rows < n ? m0 + block_rows : n;
          float *dst = sink != NULL ? buf : logits + (h * n + m0) * n;

          if (rpe_monitor_cancelled (monitor))
            {
              st = RPE_ERROR_CANCELLED;
              goto out;
            }
          for (size_t m = m0; m < m1; m++)
            {
              float *row = dst + (m - m0) * n;
              const float *qm = q + (m * n_heads + h) * n_features;

              memset (row, 0, n * sizeof (float));
              for (size_t d = 0; d < n_features; d++)
                mul_acc (row, kt + d * n, prev + d * len + (n - 1 - m), qm[d], n);
            }
          if (!rpe_all_finite_f (dst, (m1 - m0) * n))
            {
              st = RPE_ERROR_RANGE;
              goto out;
            }
          if (sink != NULL && (st = sink (h, m0, m1 - m0, buf, user_data)) != RPE_OK)
            goto out;
          rpe_monitor_progress (monitor, ((double) h + (double) m1 / (double) n) / (double) n_heads);
        }
    }
out:
  rpe_free (prev);
  rpe_free (kt);
  rpe_free (lag);
  return st;
}

RpeStatus
rpe_spe_exact_logits (const RpeSpeParams *params,
                      size_t              n,
                      const float        *q,
                      const float        *k,
                      bool                gated,
                      float              *logits,
                      const RpeMonitor   *monitor)
{
  return exact_logits_run (params, n, q, k, gated, logits, 0, NULL, NULL, NULL, monitor);
}

RpeStatus
rpe_spe_exact_logits_stream (const RpeSpeParams *params,
                             size_t              n,
                             const float        *q,
                             const float        *k,
                             bool                gated,
                             size_t              block_rows,
                             float              *buf,
                             RpeExactLogitsSink  sink,
                             void               *user_data,
                             const RpeMonitor   *monitor)
{
  if (sink == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  return exact_logits_run (params, n, q, k, gated, NULL, block_rows, buf, sink, user_data, monitor);
}

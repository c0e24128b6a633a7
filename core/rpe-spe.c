/* rpe-spe.c: SPE parameters, noise, gating and encoding (docs/math.md, sections 1-4, 10).
 *
 * Stochastic Positional Encoding: Liutkus et al., "Relative Positional Encoding
 * for Transformers with Linear Complexity", ICML 2021 (papers/spe-liutkus2021-*).
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#include "rpe-alloc.h"
#include "rpe-conv-spe.h"
#include "rpe-rng.h"
#include "rpe-sine-spe.h"
#include "rpe-spe.h"
#include "rpe-vec-private.h"

/* Where the gate's raw values start in the RPE_STREAM_PARAMS draw, far beyond
 * the filters / sine parameters so the gate does not move when K or L change. */
#define GATE_PARAM_OFFSET ((uint64_t) 1 << 40)

/* Small loops written 8-wide so that GCC's SLP vectoriser packs them at -O2. */
/* y = a y + b x */
static inline void
axpby_f (float       *restrict y,
         const float *restrict x,
         float                 a,
         float                 b,
         size_t                n)
{
  size_t i = 0;

  for (; i + 8 <= n; i += 8)
    {
      y[i] = a * y[i] + b * x[i];                 y[i + 1] = a * y[i + 1] + b * x[i + 1];
      y[i + 2] = a * y[i + 2] + b * x[i + 2];     y[i + 3] = a * y[i + 3] + b * x[i + 3];
      y[i + 4] = a * y[i + 4] + b * x[i + 4];     y[i + 5] = a * y[i + 5] + b * x[i + 5];
      y[i + 6] = a * y[i + 6] + b * x[i + 6];     y[i + 7] = a * y[i + 7] + b * x[i + 7];
    }
  for (; i < n; i++)
    y[i] = a * y[i] + b * x[i];
}

static double
sigmoid (double x)
{
  return x >= 0 ? 1.0 / (1.0 + exp (-x)) : exp (x) / (1.0 + exp (x));
}

static double
softplus (double x)
{
  /* log(1 + e^x) without overflow */
  return x > 0 ? x + log1p (exp (-x)) : log1p (exp (x));
}

double
rpe_spe_code_scale (size_t n_features,
                    size_t r)
{
  if (n_features == 0 || r == 0)
    return 0.0;
  return 1.0 / sqrt (sqrt ((double) r * (double) n_features));
}

/* Number of floats of each per-(h, d) parameter array: H*D*K or H*D*L. */
static RpeStatus
param_count (const RpeSpeParams *params,
             size_t             *count)
{
  size_t size = params->method == RPE_SPE_SINE ? params->n_sines : params->kernel;

  /* 2-D convSPE: (H*D, L1*L2) */
  if (params->method == RPE_SPE_CONV && params->kernel_cols != 0
      && !rpe_size_mul (size, params->kernel_cols, &size))
    return RPE_ERROR_OVERFLOW;
  if (!rpe_size_mul (params->n_heads, params->n_features, count)
      || !rpe_size_mul (*count, size, count))
    return RPE_ERROR_OVERFLOW;
  return RPE_OK;
}

RpeStatus
rpe_spe_params_init (RpeSpeParams *params,
                     RpeSpeMethod  method,
                     size_t        n_heads,
                     size_t        n_features,
                     size_t        size,
                     bool          gated)
{
  RpeStatus st = RPE_OK;
  size_t count, hd;

  if (params == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  memset (params, 0, sizeof *params);
  if ((method != RPE_SPE_SINE && method != RPE_SPE_CONV)
      || n_heads == 0 || n_features == 0 || size == 0)
    return RPE_ERROR_INVALID_ARGUMENT;

  params->method = method;
  params->n_heads = n_heads;
  params->n_features = n_features;
  if (method == RPE_SPE_SINE)
    params->n_sines = size;
  else
    params->kernel = size;

  if ((st = param_count (params, &count)) != RPE_OK
      || !rpe_size_mul (n_heads, n_features, &hd))
    {
      memset (params, 0, sizeof *params);
      return st != RPE_OK ? st : RPE_ERROR_OVERFLOW;
    }

  if (method == RPE_SPE_SINE)
    {
      if ((params->freqs = rpe_alloc0 (count, sizeof (float), &st)) == NULL
          || (params->offsets = rpe_alloc0 (count, sizeof (float), &st)) == NULL
          || (params->gains = rpe_alloc0 (count, sizeof (float), &st)) == NULL)
        goto fail;
    }
  else
    {
      if ((params->wq = rpe_alloc0 (count, sizeof (float), &st)) == NULL
          || (params->wk = rpe_alloc0 (count, sizeof (float), &st)) == NULL)
        goto fail;
    }
  if (gated && (params->gate = rpe_alloc0 (hd, sizeof (float), &st)) == NULL)
    goto fail;
  return RPE_OK;

fail:
  rpe_spe_params_clear (params);
  return st;
}

void
rpe_spe_params_clear (RpeSpeParams *params)
{
  if (params == NULL)
    return;
  rpe_free (params->freqs);
  rpe_free (params->offsets);
  rpe_free (params->gains);
  rpe_free (params->wq);
  rpe_free (params->wk);
  rpe_free (params->gate);
  memset (params, 0, sizeof *params);
}

RpeStatus
rpe_spe_params_copy (RpeSpeParams       *dest,
                     const RpeSpeParams *src)
{
  RpeStatus st;
  size_t count = 0, hd;

  if (dest == NULL || src == NULL || dest == src)
    return RPE_ERROR_INVALID_ARGUMENT;
  {
    size_t size = src->method == RPE_SPE_SINE ? src->n_sines : src->kernel;

    /* 2-D convSPE: the L1*L2 taps, then kernel = L1 and kernel_cols = L2 again */
    if (src->method == RPE_SPE_CONV && src->kernel_cols != 0
        && !rpe_size_mul (size, src->kernel_cols, &size))
      return RPE_ERROR_OVERFLOW;
    st = rpe_spe_params_init (dest, src->method, src->n_heads, src->n_features, size, src->gate != NULL);
    if (st != RPE_OK)
      return st;
    if (src->method == RPE_SPE_CONV && src->kernel_cols != 0)
      {
        dest->kernel = src->kernel;
        dest->kernel_cols = src->kernel_cols;
      }
  }
  param_count (dest, &count);
  hd = dest->n_heads * dest->n_features; /* checked by init */

  if (src->method == RPE_SPE_SINE)
    {
      if (src->freqs == NULL || src->offsets == NULL || src->gains == NULL)
        goto invalid;
      memcpy (dest->freqs, src->freqs, count * sizeof (float));
      memcpy (dest->offsets, src->offsets, count * sizeof (float));
      memcpy (dest->gains, src->gains, count * sizeof (float));
    }
  else
    {
      if (src->wq == NULL || src->wk == NULL)
        goto invalid;
      memcpy (dest->wq, src->wq, count * sizeof (float));
      memcpy (dest->wk, src->wk, count * sizeof (float));
    }
  if (src->gate != NULL)
    memcpy (dest->gate, src->gate, hd * sizeof (float));
  return RPE_OK;

invalid:
  rpe_spe_params_clear (dest);
  return RPE_ERROR_INVALID_ARGUMENT;
}

/* Deterministic draw of parameters from `seed` (stream RPE_STREAM_PARAMS), after the
 * reference initialisation (SPE paper's code):
 *  sine: raw freqs ~ N(0,1) - 4  -> f = sigmoid(raw) / 2   (low frequencies: long range)
 *        offsets ~ N(0,1)        -> theta = raw
 *        raw gains ~ N(0,1), each (h, d) vector divided by sqrt(|gains|_2) / 2 (the reference's
 *        normalisation), then lambda = softplus(raw)
 *  conv: wq, wk ~ N(0,1) / sqrt(L)
 *  gate: raw ~ N(0,1) - 2 -> g = sigmoid(raw) (mostly positional at start)
 * Draw offsets: first array at 0, second at count, third at 2*count; the gate at 2^40.
 * Shapes must already be set up by rpe_spe_params_init. */
RpeStatus
rpe_spe_params_random (RpeSpeParams *params,
                       uint64_t      seed)
{
  size_t count, hd;
  RpeStatus st;

  if (params == NULL || params->n_heads == 0 || params->n_features == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if ((params->method == RPE_SPE_SINE
       && (params->n_sines == 0 || params->freqs == NULL || params->offsets == NULL
           || params->gains == NULL))
      || (params->method == RPE_SPE_CONV
          && (params->kernel == 0 || params->wq == NULL || params->wk == NULL))
      || (params->method != RPE_SPE_SINE && params->method != RPE_SPE_CONV))
    return RPE_ERROR_INVALID_ARGUMENT;
  if ((st = param_count (params, &count)) != RPE_OK)
    return st;
  hd = params->n_heads * params->n_features;

  if (params->method == RPE_SPE_SINE)
    {
      size_t k_sines = params->n_sines;

      rpe_rng_normal (seed, RPE_STREAM_PARAMS, 0, params->freqs, count);
      rpe_rng_normal (seed, RPE_STREAM_PARAMS, count, params->offsets, count);
      rpe_rng_normal (seed, RPE_STREAM_PARAMS, 2 * (uint64_t) count, params->gains, count);
      for (size_t i = 0; i < count; i++)
        params->freqs[i] = (float) (sigmoid ((double) params->freqs[i] - 4.0) / 2.0);
      for (size_t c = 0; c < hd; c++)
        {
          float *g = params->gains + c * k_sines;
          double norm = 0.0, div;

          for (size_t k = 0; k < k_sines; k++)
            norm += (double) g[k] * g[k];
          div = sqrt (sqrt (norm)) / 2.0;
          for (size_t k = 0; k < k_sines; k++)
            g[k] = (float) softplus (div > 0 ? g[k] / div : g[k]);
        }
    }
  else
    {
      double scale = 1.0 / sqrt ((double) params->kernel);

      rpe_rng_normal (seed, RPE_STREAM_PARAMS, 0, params->wq, count);
      rpe_rng_normal (seed, RPE_STREAM_PARAMS, count, params->wk, count);
      for (size_t i = 0; i < count; i++)
        {
          params->wq[i] = (float) (params->wq[i] * scale);
          params->wk[i] = (float) (params->wk[i] * scale);
        }
    }

  if (params->gate != NULL)
    {
      rpe_rng_normal (seed, RPE_STREAM_PARAMS, GATE_PARAM_OFFSET, params->gate, hd);
      for (size_t i = 0; i < hd; i++)
        params->gate[i] = (float) sigmoid ((double) params->gate[i] - 2.0);
    }
  return RPE_OK;
}

RpeStatus
rpe_spe_params_validate (const RpeSpeParams *params)
{
  size_t count, hd;
  RpeStatus st;

  if (params == NULL || params->n_heads == 0 || params->n_features == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  /* 2-D convSPE parameters go through rpe-conv-spe-2d.h; every 1-D entry point
   * validates here, so none of them reads a 2-D filter as a 1-D one */
  if (params->method == RPE_SPE_CONV && params->kernel_cols != 0)
    return RPE_ERROR_UNSUPPORTED;
  if (params->method == RPE_SPE_SINE)
    {
      if (params->n_sines == 0 || params->freqs == NULL || params->offsets == NULL
          || params->gains == NULL)
        return RPE_ERROR_INVALID_ARGUMENT;
    }
  else if (params->method == RPE_SPE_CONV)
    {
      if (params->kernel == 0 || params->wq == NULL || params->wk == NULL)
        return RPE_ERROR_INVALID_ARGUMENT;
    }
  else
    return RPE_ERROR_INVALID_ARGUMENT;
  if ((st = param_count (params, &count)) != RPE_OK)
    return st;
  hd = params->n_heads * params->n_features;

  if (params->method == RPE_SPE_SINE)
    {
      if (!rpe_all_finite_f (params->freqs, count) || !rpe_all_finite_f (params->offsets, count)
          || !rpe_all_finite_f (params->gains, count))
        return RPE_ERROR_NOT_FINITE;
      for (size_t i = 0; i < count; i++)
        if (params->freqs[i] < 0.0f || params->freqs[i] > 0.5f || params->gains[i] < 0.0f)
          return RPE_ERROR_INVALID_ARGUMENT;
    }
  else if (!rpe_all_finite_f (params->wq, count) || !rpe_all_finite_f (params->wk, count))
    return RPE_ERROR_NOT_FINITE;

  if (params->gate != NULL)
    {
      if (!rpe_all_finite_f (params->gate, hd))
        return RPE_ERROR_NOT_FINITE;
      for (size_t i = 0; i < hd; i++)
        if (params->gate[i] < 0.0f || params->gate[i] > 1.0f)
          return RPE_ERROR_INVALID_ARGUMENT;
    }
  return RPE_OK;
}

RpeStatus
rpe_spe_noise_size (const RpeSpeParams *params,
                    size_t              n,
                    size_t              r,
                    size_t             *out_count)
{
  size_t dims[4], count, len;

  if (params == NULL || out_count == NULL || r == 0
      || params->n_heads == 0 || params->n_features == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (params->method == RPE_SPE_SINE)
    {
      if (params->n_sines == 0)
        return RPE_ERROR_INVALID_ARGUMENT;
      dims[0] = params->n_heads;
      dims[1] = params->n_features;
      if (!rpe_size_mul (params->n_sines, 2, &dims[2]))
        return RPE_ERROR_OVERFLOW;
      dims[3] = r;
    }
  else if (params->method == RPE_SPE_CONV)
    {
      if (params->kernel == 0 || n == 0)
        return RPE_ERROR_INVALID_ARGUMENT;
      if (!rpe_size_mul (params->kernel, 4, &len) || !rpe_size_add (len, n, &len))
        return RPE_ERROR_OVERFLOW;
      dims[0] = r;
      dims[1] = params->n_heads;
      dims[2] = params->n_features;
      dims[3] = len;
    }
  else
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_prod (&count, 4, dims))
    return RPE_ERROR_OVERFLOW;
  /* keep float counts addressable in bytes too */
  if (!rpe_size_mul (count, sizeof (float), &len))
    return RPE_ERROR_OVERFLOW;
  *out_count = count;
  return RPE_OK;
}

RpeStatus
rpe_spe_noise_fill_range (const RpeSpeParams *params,
                          size_t              n,
                          size_t              r,
                          uint64_t            seed,
                          size_t              offset,
                          size_t              count,
                          float              *z)
{
  size_t total, end;
  RpeStatus st;

  if ((st = rpe_spe_noise_size (params, n, r, &total)) != RPE_OK)
    return st;
  if (z == NULL || !rpe_size_add (offset, count, &end) || end > total)
    return RPE_ERROR_INVALID_ARGUMENT;
  rpe_rng_normal (seed, params->method == RPE_SPE_SINE ? RPE_STREAM_SINE : RPE_STREAM_CONV,
                  offset, z, count);
  return RPE_OK;
}

RpeStatus
rpe_spe_noise_fill (const RpeSpeParams *params,
                    size_t              n,
                    size_t              r,
                    uint64_t            seed,
                    float              *z)
{
  size_t total;
  RpeStatus st;

  if ((st = rpe_spe_noise_size (params, n, r, &total)) != RPE_OK)
    return st;
  return rpe_spe_noise_fill_range (params, n, r, seed, 0, total, z);
}

RpeStatus
rpe_spe_gate_noise_fill (const RpeSpeParams *params,
                         size_t              r,
                         uint64_t            seed,
                         float              *eps)
{
  size_t count;

  if (params == NULL || eps == NULL || r == 0 || params->n_heads == 0 || params->n_features == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (rpe_size_bytes (&count, sizeof (float), params->n_heads, params->n_features, r, 1) != RPE_OK)
    return RPE_ERROR_OVERFLOW;
  count /= sizeof (float);
  rpe_rng_normal (seed, RPE_STREAM_GATE, 0, eps, count);
  return RPE_OK;
}

RpeStatus
rpe_spe_codes (const RpeSpeParams *params,
               size_t              n,
               size_t              r,
               const float        *z,
               float              *qbar,
               float              *kbar,
               const RpeMonitor   *monitor)
{
  RpeStatus st;
  size_t noise, bytes, k2;

  if ((st = rpe_spe_params_validate (params)) != RPE_OK)
    return st;
  if (params->method == RPE_SPE_CONV)
    return rpe_conv_spe_codes (params, n, r, z, qbar, kbar, RPE_CONV_SPE_PATH_AUTO, monitor);

  if (n == 0 || r == 0 || z == NULL || qbar == NULL || kbar == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  if ((st = rpe_spe_noise_size (params, n, r, &noise)) != RPE_OK)
    return st;
  if ((st = rpe_size_bytes (&bytes, sizeof (float), n, params->n_heads, params->n_features, r))
      != RPE_OK)
    return st;
  /* BLAS takes int sizes: N, R, 2K and the leading dimension H*D*R */
  if (rpe_size_bytes (&bytes, 1, params->n_heads, params->n_features, r, 1) != RPE_OK
      || bytes > INT_MAX || n > INT_MAX || !rpe_size_mul (params->n_sines, 2, &k2) || k2 > INT_MAX)
    return RPE_ERROR_OVERFLOW;
  return _rpe_sine_spe_codes (params, n, r, z, qbar, kbar, monitor);
}

RpeStatus
rpe_spe_gate_codes (const RpeSpeParams *params,
                    size_t              n,
                    size_t              r,
                    const float        *eps,
                    float              *qbar,
                    float              *kbar)
{
  size_t hd, hdr, bytes;
  double s;
  RpeStatus st;

  if (params == NULL || n == 0 || r == 0 || params->n_heads == 0 || params->n_features == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (params->gate == NULL)
    return RPE_OK;
  if (eps == NULL || qbar == NULL || kbar == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  if ((st = rpe_size_bytes (&bytes, sizeof (float), n, params->n_heads, params->n_features, r))
      != RPE_OK)
    return st;
  hd = params->n_heads * params->n_features;
  hdr = hd * r;
  if (!rpe_all_finite_f (params->gate, hd))
    return RPE_ERROR_NOT_FINITE;
  for (size_t c = 0; c < hd; c++)
    if (params->gate[c] < 0.0f || params->gate[c] > 1.0f)
      return RPE_ERROR_INVALID_ARGUMENT;

  s = rpe_spe_code_scale (params->n_features, r);
  /* Qbar' = sqrt(1 - g) Qbar + sqrt(g) s eps, the same eps for queries and keys
   * and for every position (docs/math.md, section 3). */
  for (size_t m = 0; m < n; m++)
    {
      float *qrow = qbar + m * hdr;
      float *krow = kbar + m * hdr;

      for (size_t c = 0; c < hd; c++)
        {
          double g = params->gate[c];
          float a = (float) sqrt (1.0 - g);
          float b = (float) (sqrt (g) * s);
          const float *e = eps + c * r;

          axpby_f (qrow + c * r, e, a, b, r);
          axpby_f (krow + c * r, e, a, b, r);
        }
    }
  return RPE_OK;
}

/* qhat[m, h, :] = sum_d bar[m, h, d, :] x[m, h, d] for one side. */
static RpeStatus
encode_side (size_t            n,
             size_t            n_heads,
             size_t            n_features,
             size_t            r,
             const float      *bar,
             const float      *x,
             float            *hat,
             const RpeMonitor *monitor,
             double            progress_base)
{
  const size_t block = 64;

  for (size_t m0 = 0; m0 < n; m0 += block)
    {
      size_t m1 = m0 + block < n ? m0 + block : n;

      if (rpe_monitor_cancelled (monitor))
        return RPE_ERROR_CANCELLED;
      for (size_t m = m0; m < m1; m++)
        for (size_t h = 0; h < n_heads; h++)
          {
            const float *b = bar + (m * n_heads + h) * n_features * r;
            const float *xv = x + (m * n_heads + h) * n_features;
            float *out = hat + (m * n_heads + h) * r;

            memset (out, 0, r * sizeof (float));
            for (size_t d = 0; d < n_features; d++)
              rpe_axpy_f (out, b + d * r, xv[d], r);
          }
      rpe_monitor_progress (monitor, progress_base + 0.5 * (double) m1 / (double) n);
    }
  return RPE_OK;
}

RpeStatus
rpe_spe_encode (size_t            n,
                size_t            n_heads,
                size_t            n_features,
                size_t            r,
                const float      *qbar,
                const float      *kbar,
                const float      *q,
                const float      *k,
                float            *qhat,
                float            *khat,
                const RpeMonitor *monitor)
{
  bool do_q = qbar != NULL && q != NULL && qhat != NULL;
  bool do_k = kbar != NULL && k != NULL && khat != NULL;
  size_t bytes;
  RpeStatus st;

  if (n == 0 || n_heads == 0 || n_features == 0 || r == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  /* each side is all-or-nothing; at least one side */
  if ((!do_q && (qbar != NULL || q != NULL || qhat != NULL))
      || (!do_k && (kbar != NULL || k != NULL || khat != NULL))
      || (!do_q && !do_k))
    return RPE_ERROR_INVALID_ARGUMENT;
  if ((st = rpe_size_bytes (&bytes, sizeof (float), n, n_heads, n_features, r)) != RPE_OK)
    return st;

  if (do_q && (st = encode_side (n, n_heads, n_features, r, qbar, q, qhat, monitor, 0.0)) != RPE_OK)
    return st;
  if (do_k && (st = encode_side (n, n_heads, n_features, r, kbar, k, khat, monitor, 0.5)) != RPE_OK)
    return st;
  rpe_monitor_progress (monitor, 1.0);
  return RPE_OK;
}

/* The argument checks of the fused and seeded encodings: params valid; `bad` (the caller's own
 * conditions), n, r, eps when gated, each side (q, qhat), (k, khat) all or nothing and at least one
 * side (else RPE_ERROR_INVALID_ARGUMENT); the noise size (to *noise) and the (N, H, D, R) size
 * in range. */
static RpeStatus
check_encode_args (const RpeSpeParams *params,
                   bool                bad,
                   size_t              n,
                   size_t              r,
                   const float        *eps,
                   const float        *q,
                   const float        *k,
                   const float        *qhat,
                   const float        *khat,
                   size_t             *noise)
{
  bool do_q = q != NULL && qhat != NULL;
  bool do_k = k != NULL && khat != NULL;
  size_t bytes;
  RpeStatus st;

  if ((st = rpe_spe_params_validate (params)) != RPE_OK)
    return st;
  if (bad || n == 0 || r == 0 || (params->gate != NULL && eps == NULL)
      || (!do_q && (q != NULL || qhat != NULL)) || (!do_k && (k != NULL || khat != NULL))
      || (!do_q && !do_k))
    return RPE_ERROR_INVALID_ARGUMENT;
  if ((st = rpe_spe_noise_size (params, n, r, noise)) != RPE_OK)
    return st;
  return rpe_size_bytes (&bytes, sizeof (float), n, params->n_heads, params->n_features, r);
}

/* The sine encoding's sizes (R, H*R, D*2K) fit an int (the limits it has had since it ran on BLAS). */
static bool
sine_sizes_fit (const RpeSpeParams *params,
                     size_t              r)
{
  size_t bytes, k2;

  return rpe_size_bytes (&bytes, 1, params->n_heads, r, 1, 1) == RPE_OK && bytes <= INT_MAX
         && rpe_size_bytes (&k2, 2, params->n_features, params->n_sines, 1, 1) == RPE_OK && k2 <= INT_MAX;
}

RpeStatus
rpe_spe_encode_fused (const RpeSpeParams *params,
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
  size_t noise;
  RpeStatus st;

  if ((st = check_encode_args (params, z == NULL, n, r, eps, q, k, qhat, khat, &noise)) != RPE_OK)
    return st;

  if (params->method == RPE_SPE_CONV)
    return _rpe_conv_spe_encode_fused (params, n, r, z, params->gate != NULL ? eps : NULL,
                                       q, k, qhat, khat, monitor);
  if (!sine_sizes_fit (params, r))
    return RPE_ERROR_OVERFLOW;
  return _rpe_sine_spe_encode_fused (params, n, r, z, params->gate != NULL ? eps : NULL,
                                     q, k, qhat, khat, monitor);
}

RpeStatus
rpe_spe_encode_fused_rows (const RpeSpeParams *params,
                           size_t              n,
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
  size_t noise;
  RpeStatus st;

  if ((st = check_encode_args (params, z == NULL, n, r, eps, q, k, qhat, khat, &noise)) != RPE_OK)
    return st;
  if (params->method != RPE_SPE_SINE || rows == 0 || m0 >= n || rows > n - m0
      || m0 % RPE_SPE_FUSED_ROWS_ALIGN != 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!sine_sizes_fit (params, r))
    return RPE_ERROR_OVERFLOW;
  return _rpe_sine_spe_encode_fused_rows (params, m0, rows, r, z, params->gate != NULL ? eps : NULL,
                                          q, k, qhat, khat, monitor);
}

RpeStatus
rpe_spe_encode_seeded (const RpeSpeParams *params,
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
  size_t noise;
  RpeStatus st;

  if ((st = check_encode_args (params, false, n, r, eps, q, k, qhat, khat, &noise)) != RPE_OK)
    return st;

  if (params->method == RPE_SPE_CONV)
    return _rpe_conv_spe_encode_seeded (params, n, r, seed, params->gate != NULL ? eps : NULL,
                                        q, k, qhat, khat, monitor);
  if (!sine_sizes_fit (params, r))
    return RPE_ERROR_OVERFLOW;
  return _rpe_sine_spe_encode_seeded (params, n, r, seed, params->gate != NULL ? eps : NULL,
                                      q, k, qhat, khat, monitor);
}

RpeStatus
rpe_spe_encode_seeded_head (const RpeSpeParams *params,
                            size_t              head,
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
  const size_t D = params != NULL ? params->n_features : 0;
  RpeSpeParams hp;
  size_t noise, size;
  RpeStatus st;
  float *z;

  if (params == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  if ((st = check_encode_args (params, head >= params->n_heads, n, r, eps, q, k, qhat, khat, &noise))
      != RPE_OK)
    return st;

  /* the head's parameters are contiguous slices of the (H, D, ...) arrays */
  hp = *params;
  hp.n_heads = 1;
  size = params->method == RPE_SPE_SINE ? params->n_sines : params->kernel;
  if (params->kernel_cols != 0)
    return RPE_ERROR_INVALID_ARGUMENT;   /* 2-D convSPE has its own entry points */
  if (params->method == RPE_SPE_SINE)
    {
      hp.freqs = params->freqs + head * D * size;
      hp.offsets = params->offsets + head * D * size;
      hp.gains = params->gains + head * D * size;
    }
  else
    {
      hp.wq = params->wq + head * D * size;
      hp.wk = params->wk + head * D * size;
    }
  if (params->gate != NULL)
    {
      hp.gate = params->gate + head * D;
      eps += head * D * r;
    }

  if (params->method == RPE_SPE_CONV)
    return _rpe_conv_spe_encode_seeded_part (&hp, n, r, seed, params->n_heads * D, head * D,
                                             hp.gate != NULL ? eps : NULL, q, k, qhat, khat, monitor);
  /* sine: the head's noise (D, 2K, R) is the contiguous slice h of (H, D, 2K, R) */
  noise /= params->n_heads;
  if ((z = rpe_alloc (noise, sizeof (float), &st)) == NULL)
    return st;
  st = rpe_spe_noise_fill_range (params, n, r, seed, head * noise, noise, z);
  if (st == RPE_OK)
    st = rpe_spe_encode_fused (&hp, n, r, z, hp.gate != NULL ? eps : NULL, q, k, qhat, khat, monitor);
  rpe_free (z);
  return st;
}

RpeStatus
rpe_spe_params_set_heads (RpeSpeParams *params,
                          size_t        heads)
{
  size_t channels;

  if (params == NULL || heads == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  channels = params->n_heads * params->n_features;
  if (channels == 0 || channels % heads != 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  params->n_heads = heads;
  params->n_features = channels / heads;
  return RPE_OK;
}

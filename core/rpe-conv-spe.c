/* rpe-conv-spe.c: convSPE, the vanishing "Variant II" (MATH.md section 2).
 *
 * Filtering white noise with finite filters (SPE paper, eq. 22): per channel
 * c = h*D + d and realization r,
 *   Qbar[m, c, r] = s * sum_{j<L} wq[c, j] z[r, c, m + L + j],
 *   Kbar[n, c, r] = s * sum_{j<L} wk[c, j] z[r, c, n + L + j],
 * a valid cross-correlation of the noise cropped after L samples.  wq is the
 * effective query filter (the reference checkpoint's conv_k.weight).
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#include <fftw3.h>
#include <cblas.h>

#include "rpe-alloc.h"
#include "rpe-conv-spe.h"
#include "rpe-fft.h"
#include "rpe-parallel.h"
#include "rpe-rng.h"

#define RPE_CONV_MAX_WORKERS 64

/* FFTs longer than this are not planned (rpe_fft_plan_new's limit). */
#define MAX_FFT ((size_t) 1 << 30)

/* Small loops written 8-wide so that GCC's SLP vectoriser packs them at -O2. */
static inline void
axpy_f (float       *restrict y,
        const float *restrict x,
        float                 a,
        size_t                n)
{
  size_t i = 0;

  for (; i + 8 <= n; i += 8)
    {
      y[i] += a * x[i];         y[i + 1] += a * x[i + 1];
      y[i + 2] += a * x[i + 2]; y[i + 3] += a * x[i + 3];
      y[i + 4] += a * x[i + 4]; y[i + 5] += a * x[i + 5];
      y[i + 6] += a * x[i + 6]; y[i + 7] += a * x[i + 7];
    }
  for (; i < n; i++)
    y[i] += a * x[i];
}

RpeConvSpePath
rpe_conv_spe_choose_path (size_t n,
                          size_t kernel)
{
  size_t len;

  if (kernel <= RPE_CONV_SPE_FFT_MIN_KERNEL
      || !rpe_size_add (n, kernel, &len) || len > MAX_FFT / 2)
    return RPE_CONV_SPE_PATH_DIRECT;
  return RPE_CONV_SPE_PATH_FFT;
}

/* Per-call state shared by both paths; one channel at a time. */
typedef struct
{
  const RpeSpeParams *params;
  size_t              n, r, hd, zlen, seg;
  RpeConvSpePath      path;
  float               s;
  /* direct */
  float              *zt;      /* (N+L-1, R): the noise segment of the channel, transposed */
  float              *w;       /* (2, L): s * wq, s * wk */
  /* fft */
  RpeFftPlan         *plan;
  size_t              nfft, nc;
  float              *x;
  fftwf_complex      *xs, *wqs, *wks, *ys;
  /* noise drawn on the fly (z == NULL) */
  bool                seeded;
  uint64_t            seed;
} ConvCtx;

static void
conv_ctx_clear (ConvCtx *ctx)
{
  rpe_free (ctx->zt);
  rpe_free (ctx->w);
  rpe_free (ctx->x);
  rpe_free (ctx->xs);
  rpe_free (ctx->wqs);
  rpe_free (ctx->wks);
  rpe_free (ctx->ys);
  rpe_fft_plan_free (ctx->plan);
  memset (ctx, 0, sizeof *ctx);
}

/* Sizes were checked by the caller (noise size R*H*D*(N+4L) and N*H*D*R fit). */
static RpeStatus
conv_ctx_init (ConvCtx            *ctx,
               const RpeSpeParams *params,
               size_t              n,
               size_t              r,
               RpeConvSpePath      path)
{
  const size_t L = params->kernel;
  RpeStatus st = RPE_OK;
  size_t count;

  memset (ctx, 0, sizeof *ctx);
  ctx->params = params;
  ctx->n = n;
  ctx->r = r;
  ctx->hd = params->n_heads * params->n_features;
  ctx->zlen = n + 4 * L;
  ctx->seg = n + L - 1;
  ctx->s = (float) rpe_spe_code_scale (params->n_features, r);
  ctx->path = path == RPE_CONV_SPE_PATH_AUTO ? rpe_conv_spe_choose_path (n, L) : path;

  if (ctx->path == RPE_CONV_SPE_PATH_DIRECT)
    {
      if (!rpe_size_mul (ctx->seg, r, &count))
        return RPE_ERROR_OVERFLOW;
      if ((ctx->zt = rpe_alloc (count, sizeof (float), &st)) == NULL
          || (ctx->w = rpe_alloc (2 * L, sizeof (float), &st)) == NULL)
        goto fail;
      return RPE_OK;
    }
  if (ctx->path != RPE_CONV_SPE_PATH_FFT)
    return RPE_ERROR_INVALID_ARGUMENT;

  /* circular cross-correlation of length n_fft >= N + L - 1: y[m] = sum_j w[j] x[m + j]
   * never wraps for m < N */
  if (ctx->seg > MAX_FFT)
    return RPE_ERROR_INVALID_ARGUMENT;
  ctx->nfft = rpe_fft_good_size (ctx->seg);
  if (ctx->nfft > MAX_FFT)
    return RPE_ERROR_INVALID_ARGUMENT;
  ctx->nc = ctx->nfft / 2 + 1;
  /* measured once per size: FFTW keeps the wisdom, later plans of the size are instant */
  if ((ctx->plan = rpe_fft_plan_new (ctx->nfft, RPE_FFT_MEASURE | RPE_FFT_ALIGNED, &st)) == NULL)
    goto fail;
  if ((ctx->x = rpe_alloc (ctx->nfft, sizeof (float), &st)) == NULL
      || (ctx->xs = rpe_alloc (ctx->nc, sizeof (fftwf_complex), &st)) == NULL
      || (ctx->wqs = rpe_alloc (ctx->nc, sizeof (fftwf_complex), &st)) == NULL
      || (ctx->wks = rpe_alloc (ctx->nc, sizeof (fftwf_complex), &st)) == NULL
      || (ctx->ys = rpe_alloc (ctx->nc, sizeof (fftwf_complex), &st)) == NULL)
    goto fail;
  return RPE_OK;

fail:
  conv_ctx_clear (ctx);
  return st;
}

/* Direct path, O(N L R) per channel.  The noise segment z[r, c, L .. N+2L-2] is
 * transposed into zt (N+L-1, R) so the inner loops run over r contiguously. */
static void
channel_direct (ConvCtx     *ctx,
                const float *z,
                size_t       c,
                float       *outq,
                float       *outk,
                size_t       ld)
{
  const size_t L = ctx->params->kernel, r = ctx->r, n = ctx->n;
  float *wq = ctx->w, *wk = ctx->w + L, *zt = ctx->zt;

  for (size_t j = 0; j < L; j++)
    {
      wq[j] = ctx->s * ctx->params->wq[c * L + j];
      wk[j] = ctx->s * ctx->params->wk[c * L + j];
    }
  for (size_t i = 0; i < r; i++)
    {
      const float *src;

      if (ctx->seeded)
        {
          /* draw the segment in small pieces and transpose them */
          float buf[256];

          for (size_t t0 = 0; t0 < ctx->seg; t0 += 256)
            {
              size_t len = ctx->seg - t0 < 256 ? ctx->seg - t0 : 256;

              rpe_rng_normal (ctx->seed, RPE_STREAM_CONV, (i * ctx->hd + c) * ctx->zlen + L + t0, buf, len);
              for (size_t t = 0; t < len; t++)
                zt[(t0 + t) * r + i] = buf[t];
            }
          continue;
        }
      src = z + (i * ctx->hd + c) * ctx->zlen + L;
      for (size_t t = 0; t < ctx->seg; t++)
        zt[t * r + i] = src[t];
    }
  for (size_t m = 0; m < n; m++)
    {
      float *qo = outq + m * ld;
      float *ko = outk + m * ld;

      memset (qo, 0, r * sizeof (float));
      memset (ko, 0, r * sizeof (float));
      for (size_t j = 0; j < L; j++)
        {
          const float a = wq[j], b = wk[j];
          const float *row = zt + (m + j) * r;

          axpy_f (qo, row, a, r);
          axpy_f (ko, row, b, r);
        }
    }
}

/* FFT path: one forward transform of the noise segment serves both filters,
 * Y = X conj(W), O(n_fft log n_fft) per (c, r). */
static void
channel_fft (ConvCtx     *ctx,
             const float *z,
             size_t       c,
             float       *outq,
             float       *outk,
             size_t       ld)
{
  const size_t L = ctx->params->kernel, r = ctx->r, n = ctx->n;
  const size_t nfft = ctx->nfft, nc = ctx->nc, seg = ctx->seg;
  const float scale = ctx->s / (float) nfft;
  float *x = ctx->x;

  memset (x, 0, nfft * sizeof (float));
  memcpy (x, ctx->params->wq + c * L, L * sizeof (float));
  rpe_fft_forward (ctx->plan, x, ctx->wqs);
  memcpy (x, ctx->params->wk + c * L, L * sizeof (float));
  rpe_fft_forward (ctx->plan, x, ctx->wks);

  for (size_t i = 0; i < r; i++)
    {
      if (ctx->seeded)
        rpe_rng_normal (ctx->seed, RPE_STREAM_CONV, (i * ctx->hd + c) * ctx->zlen + L, x, seg);
      else
        memcpy (x, z + (i * ctx->hd + c) * ctx->zlen + L, seg * sizeof (float));
      memset (x + seg, 0, (nfft - seg) * sizeof (float));
      rpe_fft_forward (ctx->plan, x, ctx->xs);

      for (int side = 0; side < 2; side++)
        {
          const fftwf_complex *w = side == 0 ? ctx->wqs : ctx->wks;
          const fftwf_complex *xs = ctx->xs;
          fftwf_complex *ys = ctx->ys;
          float *dst = (side == 0 ? outq : outk) + i;

          for (size_t f = 0; f < nc; f++)
            {
              float a = xs[f][0], b = xs[f][1], cr = w[f][0], ci = w[f][1];

              /* (a + ib)(cr - i ci) */
              ys[f][0] = a * cr + b * ci;
              ys[f][1] = b * cr - a * ci;
            }
          rpe_fft_inverse (ctx->plan, ys, x);
          for (size_t m = 0; m < n; m++)
            dst[m * ld] = scale * x[m];
        }
    }
}

static void
conv_channel (ConvCtx     *ctx,
              const float *z,
              size_t       c,
              float       *outq,
              float       *outk,
              size_t       ld)
{
  if (ctx->path == RPE_CONV_SPE_PATH_DIRECT)
    channel_direct (ctx, z, c, outq, outk, ld);
  else
    channel_fft (ctx, z, c, outq, outk, ld);
}

/* Checks shared by the conv entry points. */
static RpeStatus
check_conv_args (const RpeSpeParams *params,
                 size_t              n,
                 size_t              r,
                 const float        *z)
{
  size_t noise, bytes;
  RpeStatus st;

  if ((st = rpe_spe_params_validate (params)) != RPE_OK)
    return st;
  if (params->method != RPE_SPE_CONV || n == 0 || r == 0 || z == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  if ((st = rpe_spe_noise_size (params, n, r, &noise)) != RPE_OK)
    return st;
  return rpe_size_bytes (&bytes, sizeof (float), n, params->n_heads, params->n_features, r);
}

RpeStatus
rpe_conv_spe_codes (const RpeSpeParams *params,
                    size_t              n,
                    size_t              r,
                    const float        *z,
                    float              *qbar,
                    float              *kbar,
                    RpeConvSpePath      path,
                    const RpeMonitor   *monitor)
{
  ConvCtx ctx;
  RpeStatus st;

  if ((st = check_conv_args (params, n, r, z)) != RPE_OK)
    return st;
  if (qbar == NULL || kbar == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  if ((st = conv_ctx_init (&ctx, params, n, r, path)) != RPE_OK)
    return st;

  for (size_t c = 0; c < ctx.hd; c++)
    {
      if (rpe_monitor_cancelled (monitor))
        {
          st = RPE_ERROR_CANCELLED;
          break;
        }
      /* the strided (N x R) slice of channel c in (N, H, D, R) */
      conv_channel (&ctx, z, c, qbar + c * r, kbar + c * r, ctx.hd * r);
      rpe_monitor_progress (monitor, (double) (c + 1) / (double) ctx.hd);
    }
  conv_ctx_clear (&ctx);
  return st;
}

/* Fused codes + gating + encoding, one channel at a time through an (N x R)
 * scratch, so the (N, H, D, R) codes never exist.  Heads are independent
 * outputs (qhat[:, h, :] only sums channels of head h), so they are split over
 * workers (rpe-parallel.h) and the result does not depend on the worker count.
 * With z == NULL the noise of each (r, c) segment is drawn on the fly from
 * (seed, RPE_STREAM_CONV) at its offset in the (R, H*D, N+4L) layout, the same
 * values rpe_spe_noise_fill would store. */
typedef struct
{
  const RpeSpeParams *params;
  size_t              n, r;
  const float        *z;
  uint64_t            seed;
  const float        *eps, *q, *k;
  float              *qhat, *khat;
  const RpeMonitor   *monitor;
  RpeStatus           status[RPE_CONV_MAX_WORKERS];
} FusedJob;

/* FFT path of the fused encoder for one head h: the codes of each (c, r) are
 * never stored.  With y_{c,r} = s (w_c star z_{c,r}) (length N),
 *   Qhat[m, h, r] = sum_d q[m, h, d] (a_c y_{c,r}[m] + b_c eps[c, r]),
 * so each inverse transform is accumulated straight into an (R, N) buffer
 * (contiguous in m) with the gate factor a_c and the scale s folded into the
 * filter spectrum; the gate term is one (N x D)(D x R) product per head.
 * acc holds 2 R N floats, tmp (2 N + D R) floats. */
static RpeStatus
head_fft (ConvCtx     *ctx,
          const float *z,
          size_t       h,
          const float *eps,
          const float *q,
          const float *k,
          float       *qhat,
          float       *khat,
          float       *acc,
          float       *tmp,
          const RpeMonitor *monitor)
{
  const RpeSpeParams *params = ctx->params;
  const size_t H = params->n_heads, D = params->n_features, L = params->kernel;
  const size_t n = ctx->n, r = ctx->r, nfft = ctx->nfft, nc = ctx->nc, seg = ctx->seg;
  float *x = ctx->x, *xd = tmp, *eb = tmp + 2 * n;

  memset (acc, 0, 2 * n * r * sizeof (float));
  for (size_t d = 0; d < D; d++)
    {
      const size_t c = h * D + d;
      float a = 1.0f;
      float scale;

      if (rpe_monitor_cancelled (monitor))
        return RPE_ERROR_CANCELLED;
      if (params->gate != NULL)
        a = (float) sqrt (1.0 - (double) params->gate[c]);
      scale = a * ctx->s / (float) nfft;
      /* conj(W) * scale for both filters */
      memset (x, 0, nfft * sizeof (float));
      memcpy (x, params->wq + c * L, L * sizeof (float));
      rpe_fft_forward (ctx->plan, x, ctx->wqs);
      memcpy (x, params->wk + c * L, L * sizeof (float));
      rpe_fft_forward (ctx->plan, x, ctx->wks);
      /* the content weights of channel c: x[m, h, d] for both sides */
      for (size_t m = 0; m < n; m++)
        {
          xd[m] = q != NULL ? q[(m * H + h) * D + d] : 0.0f;
          xd[n + m] = k != NULL ? k[(m * H + h) * D + d] : 0.0f;
        }
      for (size_t f = 0; f < nc; f++)
        {
          ctx->wqs[f][0] *= scale;
          ctx->wqs[f][1] *= -scale;
          ctx->wks[f][0] *= scale;
          ctx->wks[f][1] *= -scale;
        }

      for (size_t i = 0; i < r; i++)
        {
          if (ctx->seeded)
            rpe_rng_normal (ctx->seed, RPE_STREAM_CONV, (i * ctx->hd + c) * ctx->zlen + L, x, seg);
          else
            memcpy (x, z + (i * ctx->hd + c) * ctx->zlen + L, seg * sizeof (float));
          memset (x + seg, 0, (nfft - seg) * sizeof (float));
          rpe_fft_forward (ctx->plan, x, ctx->xs);

          for (int side = 0; side < 2; side++)
            {
              const fftwf_complex *w = side == 0 ? ctx->wqs : ctx->wks;
              const float *xw = xd + side * n;
              const float *xs = (const float *) ctx->xs;
              float *ys = (float *) ctx->ys;
              float *dst = acc + (side * r + i) * n;

              if ((side == 0 ? qhat : khat) == NULL)
                continue;
              for (size_t f = 0; f < nc; f++)
                {
                  const float xr = xs[2 * f], xi = xs[2 * f + 1], wr = w[f][0], wi = w[f][1];

                  ys[2 * f] = xr * wr - xi * wi;
                  ys[2 * f + 1] = xr * wi + xi * wr;
                }
              rpe_fft_inverse (ctx->plan, ctx->ys, x);
              for (size_t m = 0; m < n; m++)
                dst[m] += xw[m] * x[m];
            }
        }
    }

  /* out[m, h, :] = acc^T + (x[:, h, :] diag(b)) eps_h */
  for (int side = 0; side < 2; side++)
    {
      const float *xin = side == 0 ? q : k;
      float *hat = side == 0 ? qhat : khat;
      const float *src = acc + side * r * n;

      if (hat == NULL)
        continue;
      for (size_t m0 = 0; m0 < n; m0 += 32)
        {
          size_t m1 = m0 + 32 < n ? m0 + 32 : n;

          for (size_t i = 0; i < r; i++)
            for (size_t m = m0; m < m1; m++)
              hat[(m * H + h) * r + i] = src[i * n + m];
        }
      if (params->gate != NULL && eps != NULL)
        {
          for (size_t d = 0; d < D; d++)
            {
              const float b = (float) (sqrt ((double) params->gate[h * D + d]) * ctx->s);

              for (size_t i = 0; i < r; i++)
                eb[d * r + i] = b * eps[(h * D + d) * r + i];
            }
          cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, (int) n, (int) r, (int) D,
                       1.0f, xin + h * D, (int) (H * D), eb, (int) r, 1.0f,
                       hat + h * r, (int) (H * r));
        }
    }
  return RPE_OK;
}

static void
fused_worker (size_t worker, size_t n_workers, void *data)
{
  FusedJob *job = data;
  const RpeSpeParams *params = job->params;
  const size_t H = params->n_heads, D = params->n_features;
  const size_t n = job->n, r = job->r;
  const float *q = job->q, *k = job->k, *eps = job->eps;
  float *qhat = job->qhat, *khat = job->khat;
  ConvCtx ctx;
  float *sq = NULL, *sk = NULL;
  size_t count = n * r;   /* checked by the caller */
  RpeStatus st;

  if ((st = conv_ctx_init (&ctx, params, n, r, RPE_CONV_SPE_PATH_AUTO)) != RPE_OK)
    {
      job->status[worker] = st;
      return;
    }
  ctx.seed = job->seed;
  ctx.seeded = job->z == NULL;
  if ((sq = rpe_alloc (count, 2 * sizeof (float), &st)) == NULL)
    goto out;
  sk = sq + count;

  if (ctx.path == RPE_CONV_SPE_PATH_FFT)
    {
      float *tmp = NULL;

      if ((tmp = rpe_alloc (2 * n + D * r, sizeof (float), &st)) == NULL)
        goto out;
      for (size_t h = worker; h < H && st == RPE_OK; h += n_workers)
        {
          st = head_fft (&ctx, job->z, h, eps, q, k, qhat, khat, sq, tmp, job->monitor);
          if (worker == 0)
            rpe_monitor_progress (job->monitor, (double) (h / n_workers + 1)
                                                / (double) ((H + n_workers - 1) / n_workers));
        }
      rpe_free (tmp);
      goto out;
    }

  for (size_t h = worker; h < H; h += n_workers)
    for (size_t d = 0; d < D; d++)
      {
        const size_t c = h * D + d;
        float a = 1.0f, b = 0.0f;

        if (rpe_monitor_cancelled (job->monitor))
          {
            st = RPE_ERROR_CANCELLED;
            goto out;
          }
        conv_channel (&ctx, job->z, c, sq, sk, r);
        if (params->gate != NULL)
          {
            double g = params->gate[c];

            a = (float) sqrt (1.0 - g);
            b = (float) (sqrt (g) * ctx.s);
          }
        for (int side = 0; side < 2; side++)
          {
            const float *x = side == 0 ? q : k;
            float *hat = side == 0 ? qhat : khat;
            const float *codes = side == 0 ? sq : sk;

            if (hat == NULL)
              continue;
            for (size_t m = 0; m < n; m++)
              {
                /* hat[m, h, :] += x[m, h, d] * (a * code[m, :] + b * eps[h, d, :]) */
                const float xa = x[(m * H + h) * D + d] * a;
                const float xb = x[(m * H + h) * D + d] * b;
                float *out = hat + (m * H + h) * r;

                axpy_f (out, codes + m * r, xa, r);
                if (eps != NULL && xb != 0.0f)
                  axpy_f (out, eps + c * r, xb, r);
              }
          }
        if (worker == 0)
          {
            /* worker 0's share of heads is the largest: its fraction bounds the others' */
            size_t mine = (H + n_workers - 1) / n_workers;
            size_t done = (h / n_workers) * D + d + 1;

            rpe_monitor_progress (job->monitor, (double) done / (double) (mine * D));
          }
      }

out:
  rpe_free (sq);
  conv_ctx_clear (&ctx);
  job->status[worker] = st;
}

static RpeStatus
encode_fused_run (const RpeSpeParams *params,
                  size_t              n,
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
  FusedJob job;
  size_t count, workers;
  RpeStatus st;

  if (!rpe_size_mul (n, r, &count))
    return RPE_ERROR_OVERFLOW;
  if (qhat != NULL)
    memset (qhat, 0, n * H * r * sizeof (float));
  if (khat != NULL)
    memset (khat, 0, n * H * r * sizeof (float));

  workers = rpe_parallel_threads ();
  if (workers > H)
    workers = H;
  if (workers > RPE_CONV_MAX_WORKERS)
    workers = RPE_CONV_MAX_WORKERS;
  /* small problems are not worth a thread */
  if ((double) n * (double) D * (double) r < 1e6)
    workers = 1;
  /* each worker holds two (N x R) scratch buffers */
  {
    size_t need;

    if (!rpe_size_mul (count, 2 * sizeof (float) * workers, &need)
        || rpe_budget_check (need) != RPE_OK)
      workers = 1;
  }

  memset (&job, 0, sizeof job);
  job = (FusedJob) { params, n, r, z, seed, eps, q, k, qhat, khat, monitor, { RPE_OK } };
  rpe_parallel_run (workers, fused_worker, &job);
  st = RPE_OK;
  for (size_t w = 0; w < workers; w++)
    if (job.status[w] != RPE_OK)
      {
        /* cancellation wins over the others (they follow from it) */
        if (st == RPE_OK || job.status[w] == RPE_ERROR_CANCELLED)
          st = job.status[w];
      }
  if (st == RPE_OK)
    rpe_monitor_progress (monitor, 1.0);
  return st;
}

RpeStatus
_rpe_conv_spe_encode_fused (const RpeSpeParams *params,
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
  RpeStatus st;

  if ((st = check_conv_args (params, n, r, z)) != RPE_OK)
    return st;
  return encode_fused_run (params, n, r, z, 0, eps, q, k, qhat, khat, monitor);
}

RpeStatus
_rpe_conv_spe_encode_seeded (const RpeSpeParams *params,
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
  static const float dummy = 0.0f;
  RpeStatus st;

  if ((st = check_conv_args (params, n, r, &dummy)) != RPE_OK)
    return st;
  return encode_fused_run (params, n, r, NULL, seed, eps, q, k, qhat, khat, monitor);
}

void
_rpe_conv_spe_lags (const RpeSpeParams *params,
                    size_t              h,
                    size_t              d,
                    size_t              n,
                    double             *out)
{
  const size_t L = params->kernel;
  const size_t c = h * params->n_features + d;
  const float *wq = params->wq + c * L;
  const float *wk = params->wk + c * L;
  const size_t len = 2 * n - 1;

  /* P(tau) = sum_j wq[j] wk[j + tau] over 0 <= j, j + tau < L: exactly 0 for |tau| >= L */
  for (size_t i = 0; i < len; i++)
    {
      ptrdiff_t tau = (ptrdiff_t) i - (ptrdiff_t) (n - 1);
      ptrdiff_t j0 = tau < 0 ? -tau : 0;
      ptrdiff_t j1 = tau > 0 ? (ptrdiff_t) L - tau : (ptrdiff_t) L;
      double acc = 0.0;

      for (ptrdiff_t j = j0; j < j1; j++)
        acc += (double) wq[j] * (double) wk[j + tau];
      out[i] = acc;
    }
}

/* rpe-conv-spe.c: convSPE, the vanishing "Variant II" (docs/math.md, section 2).
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

#include "rpe-alloc.h"
#include "rpe-gemm-private.h"
#include "rpe-conv-spe.h"
#include "rpe-vec-private.h"
#include "rpe-fft.h"
#include "rpe-parallel.h"
#include "rpe-rng.h"

#define RPE_CONV_MAX_WORKERS 64

/* FFTs longer than this are not planned (rpe_fft_plan_new's limit). */
#define MAX_FFT ((size_t) 1 << 30)

/* Small loops written 8-wide so that GCC's SLP vectoriser packs them at -O2. */
/* y += a * b elementwise */
static inline void
mul_acc_f (float       *restrict y,
           const float *restrict a,
           const float *restrict b,
           size_t                n)
{
  size_t i = 0;

  for (; i + 8 <= n; i += 8)
    {
      y[i] += a[i] * b[i];             y[i + 1] += a[i + 1] * b[i + 1];
      y[i + 2] += a[i + 2] * b[i + 2]; y[i + 3] += a[i + 3] * b[i + 3];
      y[i + 4] += a[i + 4] * b[i + 4]; y[i + 5] += a[i + 5] * b[i + 5];
      y[i + 6] += a[i + 6] * b[i + 6]; y[i + 7] += a[i + 7] * b[i + 7];
    }
  for (; i < n; i++)
    y[i] += a[i] * b[i];
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

/* Outputs kept per overlap-save block of b samples: at most b - L + 1 (the circular
 * correlation does not wrap there), rounded down to a multiple of 16 so that every
 * block starts 64-byte aligned in the segment buffer (b >= 2L, b >= 64: at least 32). */
static size_t
block_valid (size_t b,
             size_t L)
{
  return (b - L + 1) & ~(size_t) 15;
}

/* Overlap-save block length for N outputs of a length-L filter: the power of two
 * nfft >= 2L (at least 64) minimising nblk nfft log2(nfft), nblk = ceil(N / (nfft - L + 1)).
 * Small power-of-two transforms stay in cache and use FFTW's SIMD codelets: at
 * N = 4096, L = 128 eleven blocks of 512 cost a third of one transform of 4320. */
static bool
choose_blocks (size_t  n,
               size_t  L,
               size_t *nfft,
               size_t *nblk)
{
  double best = 0.0;
  size_t b = 64;

  *nfft = 0;
  while (b < 2 * L)
    b *= 2;
  for (; b <= MAX_FFT; b *= 2)
    {
      size_t valid = block_valid (b, L);
      size_t nb = n / valid + (n % valid != 0);
      double cost = (double) nb * (double) b * log2 ((double) b);

      if (*nfft == 0 || cost < best)
        {
          best = cost;
          *nfft = b;
          *nblk = nb;
        }
      if (nb == 1)
        break;
    }
  return *nfft != 0;
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
  /* fft: overlap-save over blocks of nfft = 2^k samples, nvalid = nfft - L + 1
   * outputs per block, nblk blocks (nblk * nvalid >= N) */
  RpeFftSplitPlan    *plan;    /* arrays nfft apart (the spectra buffers) */
  RpeFftSplitPlan    *xplan;   /* inputs nvalid apart (two blocks of x), outputs nfft apart */
  size_t              nfft, nvalid, nblk, xlen;
  float              *x;       /* (xlen): the noise segment, zero padded */
  /* split-format spectra, nfft floats each, one allocation (spec):
   * vr, vi  the filter spectrum of the channel (filter_spectra)
   * zr, zi  the transform of a pair of blocks
   * ar, ai, br, bi  the products of the two blocks' spectra with v
   * tq, tk  the two outputs of an inverse (query and key) */
  float              *spec;
  float              *vr, *vi, *zr, *zi, *ar, *ai, *br, *bi, *tq, *tk;
  /* noise drawn on the fly (z == NULL) */
  bool                seeded;
  uint64_t            seed;
  size_t              zhd, zc0;  /* seeded: the draw's channel count, and the draw's channel
                                  * of this context's channel 0 (a head of a larger draw) */
} ConvCtx;

static void
conv_ctx_clear (ConvCtx *ctx)
{
  rpe_free (ctx->zt);
  rpe_free (ctx->w);
  rpe_free (ctx->x);
  rpe_free (ctx->spec);
  rpe_fft_split_plan_free (ctx->plan);
  rpe_fft_split_plan_free (ctx->xplan);
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
  ctx->zhd = ctx->hd;
  ctx->zc0 = 0;
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

  /* overlap-save: the circular cross-correlation of a block of nfft samples,
   * y[t] = sum_j w[j] x[(t + j) mod nfft], never wraps for t < nfft - L + 1 */
  if (ctx->seg > MAX_FFT)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!choose_blocks (n, L, &ctx->nfft, &ctx->nblk))
    return RPE_ERROR_INVALID_ARGUMENT;
  ctx->nvalid = block_valid (ctx->nfft, L);
  /* blocks go by pairs: room for a last, unused, block b = nblk (zeros)
   * nblk nvalid + nfft >= N + L - 1 = seg */
  ctx->xlen = ctx->nblk * ctx->nvalid + ctx->nfft;
  /* FFTW_ESTIMATE: measuring the plan took about 0.1 s in every new process (no wisdom yet),
   * more than a 4096 x 128 encoding's transforms gain from it, and it picked the algorithm by
   * timing, so the same seed gave different float roundings from one run to the next */
  if ((ctx->plan = rpe_fft_split_plan_new_sep (ctx->nfft, ctx->nfft, ctx->nfft, RPE_FFT_ALIGNED, &st)) == NULL
      || (ctx->xplan = rpe_fft_split_plan_new_sep (ctx->nfft, ctx->nvalid, ctx->nfft, RPE_FFT_ALIGNED, &st)) == NULL)
    goto fail;
  /* nfft >= 64: every array of spec stays 64-byte aligned */
  if ((ctx->x = rpe_alloc (ctx->xlen, sizeof (float), &st)) == NULL
      || (ctx->spec = rpe_alloc (ctx->nfft, 10 * sizeof (float), &st)) == NULL)
    goto fail;
  {
    float **arrays[] = { &ctx->vr, &ctx->vi, &ctx->zr, &ctx->zi, &ctx->ar, &ctx->ai,
                         &ctx->br, &ctx->bi, &ctx->tq, &ctx->tk };

    for (size_t a = 0; a < sizeof arrays / sizeof arrays[0]; a++)
      *arrays[a] = ctx->spec + a * ctx->nfft;
  }
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

              rpe_rng_normal (ctx->seed, RPE_STREAM_CONV, (i * ctx->zhd + ctx->zc0 + c) * ctx->zlen + L + t0,
                              buf, len);
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

          rpe_axpy_f (qo, row, a, r);
          rpe_axpy_f (ko, row, b, r);
        }
    }
}

/* Spectrum of the complex filter w = wq + i wk of channel c.  For real x the
 * correlation sum_j w[j] x[t + j] = yq[t] + i yk[t] has the spectrum X[f] Zw[-f]
 * with Zw = DFT(w), so v[f] = scale/2 Zw[(B - f) mod B] (the 1/2 belongs to the
 * split of two packed real blocks in filter_segment).  Uses zr, zi, ar, ai as scratch. */
static void
filter_spectra (ConvCtx *ctx,
                size_t   c,
                float    scale)
{
  const size_t L = ctx->params->kernel, B = ctx->nfft;
  const float *wq = ctx->params->wq + c * L, *wk = ctx->params->wk + c * L;
  const float hs = 0.5f * scale;

  memset (ctx->ar, 0, B * sizeof (float));
  memset (ctx->ai, 0, B * sizeof (float));
  memcpy (ctx->ar, wq, L * sizeof (float));
  memcpy (ctx->ai, wk, L * sizeof (float));
  rpe_fft_split_forward (ctx->plan, ctx->ar, ctx->ai, ctx->zr, ctx->zi);
  for (size_t f = 0; f < B; f++)
    {
      const size_t fm = (B - f) & (B - 1);

      ctx->vr[f] = hs * ctx->zr[fm];
      ctx->vi[f] = hs * ctx->zi[fm];
    }
}

/* 8-wide GCC vectors: AVX in the x86-64-v3 clone below, two SSE registers otherwise */
typedef float v8sf __attribute__ ((vector_size (32)));
typedef float v8sf_u __attribute__ ((vector_size (32), aligned (4)));
typedef int32_t v8si __attribute__ ((vector_size (32)));

/* the 8 lanes of v in reverse order */
#if defined(__clang__)
#define V8_REVERSE(v) __builtin_shufflevector ((v), (v), 7, 6, 5, 4, 3, 2, 1, 0)
#else
#define V8_REVERSE(v) __builtin_shuffle ((v), (v8si) { 7, 6, 5, 4, 3, 2, 1, 0 })
#endif

/* The products of the spectra of the two real blocks packed in Z = DFT(x_b + i x_{b+1})
 * with the filter spectrum v, for bins f0 .. f0+7 (8 <= f0 <= B - 8):
 *   X_b[f] = (Z[f] + conj Z[-f]) / 2,  X_{b+1}[f] = -i (Z[f] - conj Z[-f]) / 2
 * (the 1/2 is in v), U_b = X_b v -> (ur0, ui0), U_{b+1} = X_{b+1} v -> (ur1, ui1). */
static inline __attribute__ ((always_inline)) void
spectra_products8 (const float *restrict zr,
                   const float *restrict zi,
                   const float *restrict vr,
                   const float *restrict vi,
                   float       *restrict ur0,
                   float       *restrict ui0,
                   float       *restrict ur1,
                   float       *restrict ui1,
                   size_t                B,
                   size_t                f0)
{
  const v8sf a_r = *(const v8sf *) (zr + f0), a_i = *(const v8sf *) (zi + f0);
  /* conj Z[-f] for f = f0 .. f0+7: bins B-f0 .. B-f0-7, reversed */
  const v8sf m_r = V8_REVERSE (*(const v8sf_u *) (zr + B - f0 - 7));
  const v8sf m_i = V8_REVERSE (*(const v8sf_u *) (zi + B - f0 - 7));
  const v8sf v_r = *(const v8sf *) (vr + f0), v_i = *(const v8sf *) (vi + f0);
  const v8sf pr = a_r + m_r, pi = a_i - m_i;   /* 2 X_b */
  const v8sf qr = a_i + m_i, qi = m_r - a_r;   /* 2 X_{b+1} */

  *(v8sf *) (ur0 + f0) = pr * v_r - pi * v_i;
  *(v8sf *) (ui0 + f0) = pr * v_i + pi * v_r;
  *(v8sf *) (ur1 + f0) = qr * v_r - qi * v_i;
  *(v8sf *) (ui1 + f0) = qr * v_i + qi * v_r;
}

/* Overlap-save over ctx->x (the segment, zero padded to xlen): block b covers
 * x[b V .. b V + B) and yields y[b V + t] for t < V <= B - L + 1 (the circular
 * correlation of a block does not wrap there).  Two real blocks are one split-format
 * complex transform Z = DFT(x_b + i x_{b+1}) (read in place: V is a multiple of 16,
 * so every block is 64-byte aligned), split into the two blocks' spectra, and each
 * U = X v is one complex inverse whose real and imaginary parts are the query and
 * key outputs of the block: 3 transforms per 2 blocks, no packing copies.
 * Outputs: with wq == NULL, yq[m] = query output (likewise yk); otherwise
 * yq[m] += wq[m] * query output (the fused encoder's accumulation).  yq or yk NULL:
 * that side is skipped.
 * Cloned for x86-64-v3 (AVX2 + FMA, picked at load time when the CPU has it). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__ ((target_clones ("arch=x86-64-v3", "default")))
#endif
static void
filter_segment (ConvCtx     *ctx,
                float       *yq,
                float       *yk,
                const float *wq,
                const float *wk)
{
  const size_t n = ctx->n, B = ctx->nfft, V = ctx->nvalid;
  float *x = ctx->x;
  const float *restrict vr = ctx->vr, *restrict vi = ctx->vi;
  float *restrict zr = ctx->zr, *restrict zi = ctx->zi;
  float *restrict ur0 = ctx->ar, *restrict ui0 = ctx->ai, *restrict ur1 = ctx->br, *restrict ui1 = ctx->bi;
  float *restrict tq = ctx->tq, *restrict tk = ctx->tk;

  for (size_t b = 0; b < ctx->nblk; b += 2)
    {
      rpe_fft_split_forward (ctx->xplan, x + b * V, x + (b + 1) * V, zr, zi);
      /* bins 0 .. 7 (bin 0 is its own mirror), then 8 at a time */
      for (size_t f = 0; f < 8; f++)
        {
          const size_t fm = (B - f) & (B - 1);
          const float pr = zr[f] + zr[fm], pi = zi[f] - zi[fm];
          const float qr = zi[f] + zi[fm], qi = zr[fm] - zr[f];

          ur0[f] = pr * vr[f] - pi * vi[f];
          ui0[f] = pr * vi[f] + pi * vr[f];
          ur1[f] = qr * vr[f] - qi * vi[f];
          ui1[f] = qr * vi[f] + qi * vr[f];
        }
      for (size_t f0 = 8; f0 < B; f0 += 8)
        spectra_products8 (zr, zi, vr, vi, ur0, ui0, ur1, ui1, B, f0);

      for (size_t k = 0; k < 2 && b + k < ctx->nblk; k++)
        {
          const size_t m0 = (b + k) * V;
          const size_t cnt = n - m0 < V ? n - m0 : V;

          rpe_fft_split_backward (ctx->plan, k == 0 ? ur0 : ur1, k == 0 ? ui0 : ui1, tq, tk);
          if (wq == NULL)
            {
              if (yq != NULL)
                memcpy (yq + m0, tq, cnt * sizeof (float));
              if (yk != NULL)
                memcpy (yk + m0, tk, cnt * sizeof (float));
              continue;
            }
          if (yq != NULL)
            mul_acc_f (yq + m0, wq + m0, tq, cnt);
          if (yk != NULL)
            mul_acc_f (yk + m0, wk + m0, tk, cnt);
        }
    }
}

/* Loads the noise segment z[i, c, L .. N+2L-2] of realization i into ctx->x. */
static void
load_segment (ConvCtx     *ctx,
              const float *z,
              size_t       c,
              size_t       i)
{
  const size_t L = ctx->params->kernel, seg = ctx->seg;

  if (ctx->seeded)
    rpe_rng_normal (ctx->seed, RPE_STREAM_CONV, (i * ctx->zhd + ctx->zc0 + c) * ctx->zlen + L, ctx->x, seg);
  else
    memcpy (ctx->x, z + (i * ctx->hd + c) * ctx->zlen + L, seg * sizeof (float));
  memset (ctx->x + seg, 0, (ctx->xlen - seg) * sizeof (float));
}

/* FFT path for the codes of channel c: the R outputs of each (c, r) go to rows of the
 * scratch sq, sk (R, N) as filter_segment writes them, then into the (N, ..., R) slices in
 * blocks of 16 rows (each output row's R floats written contiguously), not one float per
 * row of the output as a strided scatter would. */
static void
channel_fft (ConvCtx     *ctx,
             const float *z,
             size_t       c,
             float       *outq,
             float       *outk,
             size_t       ld,
             float       *sq,
             float       *sk)
{
  const size_t r = ctx->r, n = ctx->n;

  filter_spectra (ctx, c, ctx->s / (float) ctx->nfft);
  for (size_t i = 0; i < r; i++)
    {
      load_segment (ctx, z, c, i);
      filter_segment (ctx, sq + i * n, sk + i * n, NULL, NULL);
    }
  for (size_t m0 = 0; m0 < n; m0 += 16)
    {
      size_t m1 = m0 + 16 < n ? m0 + 16 : n;

      for (size_t m = m0; m < m1; m++)
        {
          float *oq = outq + m * ld, *ok = outk + m * ld;

          for (size_t i = 0; i < r; i++)
            {
              oq[i] = sq[i * n + m];
              ok[i] = sk[i * n + m];
            }
        }
    }
}

/* sq, sk: (R, N) scratch for the FFT path (unused by the direct one) */
static void
conv_channel (ConvCtx     *ctx,
              const float *z,
              size_t       c,
              float       *outq,
              float       *outk,
              size_t       ld,
              float       *sq,
              float       *sk)
{
  if (ctx->path == RPE_CONV_SPE_PATH_DIRECT)
    channel_direct (ctx, z, c, outq, outk, ld);
  else
    channel_fft (ctx, z, c, outq, outk, ld, sq, sk);
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

typedef struct
{
  const RpeSpeParams *params;
  size_t              n, r;
  const float        *z;
  float              *qbar, *kbar;
  RpeConvSpePath      path;
  const RpeMonitor   *monitor;
  RpeStatus           status[RPE_CONV_MAX_WORKERS];
} CodesJob;

/* Channels worker, worker + n_workers, ...: each writes its own (N x R) slice of the codes. */
static void
codes_worker (size_t worker, size_t n_workers, void *data)
{
  CodesJob *job = data;
  ConvCtx ctx;
  float *scratch = NULL;
  size_t hd, mine, done = 0;
  RpeStatus st;

  if ((st = conv_ctx_init (&ctx, job->params, job->n, job->r, job->path)) != RPE_OK)
    {
      job->status[worker] = st;
      return;
    }
  hd = ctx.hd;
  mine = (hd + n_workers - 1 - worker) / n_workers;
  if (ctx.path == RPE_CONV_SPE_PATH_FFT)
    scratch = rpe_alloc (job->n * job->r, 2 * sizeof (float), &st);   /* sizes checked by the caller */
  for (size_t c = worker; st == RPE_OK && c < hd; c += n_workers)
    {
      if (rpe_monitor_cancelled (job->monitor))
        {
          st = RPE_ERROR_CANCELLED;
          break;
        }
      /* the (N x R) slice of channel c in (N, H, D, R), rows hd * r apart */
      conv_channel (&ctx, job->z, c, job->qbar + c * job->r, job->kbar + c * job->r, hd * job->r, scratch,
                    scratch != NULL ? scratch + job->n * job->r : NULL);
      if (worker == 0)
        rpe_monitor_progress (job->monitor, (double) ++done / (double) mine);
    }
  rpe_free (scratch);
  conv_ctx_clear (&ctx);
  job->status[worker] = st;
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
  CodesJob job;
  size_t hd, workers, need;
  RpeStatus st;

  if ((st = check_conv_args (params, n, r, z)) != RPE_OK)
    return st;
  if (qbar == NULL || kbar == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  hd = params->n_heads * params->n_features;
  workers = rpe_parallel_threads ();
  if (workers > hd)
    workers = hd;
  if (workers > RPE_CONV_MAX_WORKERS)
    workers = RPE_CONV_MAX_WORKERS;
  if ((double) n * (double) hd * (double) r < 1e6)
    workers = 1;
  /* each worker holds two (R x N) scratch rows */
  if (!rpe_size_mul (n * r, 2 * sizeof (float) * workers, &need) || rpe_budget_check (need) != RPE_OK)
    workers = 1;
  job = (CodesJob) { params, n, r, z, qbar, kbar, path, monitor, { RPE_OK } };
  rpe_parallel_run (workers, codes_worker, &job);
  st = RPE_OK;
  for (size_t w = 0; w < workers; w++)
    if (job.status[w] != RPE_OK && (st == RPE_OK || job.status[w] == RPE_ERROR_CANCELLED))
      st = job.status[w];
  if (st == RPE_OK)
    rpe_monitor_progress (monitor, 1.0);
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
  size_t              zhd, zc0;   /* see ConvCtx; zhd == 0: the params' own layout */
  RpeStatus           status[RPE_CONV_MAX_WORKERS];
} FusedJob;

/* FFT path of the fused encoder for one head h: the codes of each (c, r) are
 * never stored.  With y_{c,r} = s (w_c star z_{c,r}) (length N),
 *   Qhat[m, h, r] = sum_d q[m, h, d] (a_c y_{c,r}[m] + b_c eps[c, r]),
 * so each inverse transform is accumulated straight into an (R, N) buffer
 * (contiguous in m) with the gate factor a_c and the scale s folded into the
 * filter spectrum; the accumulator is transposed into the output and the gate
 * term, the (N x D)(D x R) product x_h diag(b) eps_h, added by one product (rpe-gemm-private.h).
 * Realizations go by tiles of CONV_TILE: the tile's accumulator rows (2 CONV_TILE N
 * floats) stay in L2 while the channels of the head pass over them, each
 * channel's filter spectrum computed once per head.  Every accumulator row still
 * sums its channels in the order d = 0 .. D-1, so the tile size changes nothing.
 * acc holds 2 R rows of ld >= N floats, tmp (2 D ld + D R + 2 D nfft) floats;
 * ld = N + 16 keeps the rows off the power-of-two strides that make the transposes
 * thrash the cache. */
#define CONV_TILE 8

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
          size_t       ld,
          const RpeMonitor *monitor)
{
  const RpeSpeParams *params = ctx->params;
  const size_t H = params->n_heads, D = params->n_features, B = ctx->nfft;
  const size_t n = ctx->n, r = ctx->r;
  /* fspec first: 2 D nfft floats keep the rest 64-byte aligned (nfft >= 64) */
  float *fspec = tmp, *qt = fspec + 2 * D * B, *kt = qt + ld * D, *eb = kt + ld * D;
  float *vr = ctx->vr, *vi = ctx->vi;
  const bool do_q = qhat != NULL && q != NULL, do_k = khat != NULL && k != NULL;

  memset (acc, 0, 2 * ld * r * sizeof (float));
  /* the content weights of head h transposed to (D, N) for both sides, in
   * blocks of rows: the (N, H, D) inputs are read once, not once per d */
  for (int side = 0; side < 2; side++)
    {
      const float *xin = side == 0 ? q : k;
      float *xt = side == 0 ? qt : kt;

      if (side == 0 ? !do_q : !do_k)
        continue;
      for (size_t m0 = 0; m0 < n; m0 += 16)
        {
          size_t m1 = m0 + 16 < n ? m0 + 16 : n;

          for (size_t m = m0; m < m1; m++)
            {
              const float *row = xin + (m * H + h) * D;

              for (size_t d = 0; d < D; d++)
                xt[d * ld + m] = row[d];
            }
        }
    }
  /* the filter spectra of the head's channels, gate factor and scale folded in */
  for (size_t d = 0; d < D; d++)
    {
      const size_t c = h * D + d;
      float a = 1.0f;

      if (params->gate != NULL)
        a = (float) sqrt (1.0 - (double) params->gate[c]);
      ctx->vr = fspec + 2 * d * B;
      ctx->vi = ctx->vr + B;
      filter_spectra (ctx, c, a * ctx->s / (float) B);
    }
  for (size_t i0 = 0; i0 < r; i0 += CONV_TILE)
    {
      const size_t i1 = i0 + CONV_TILE < r ? i0 + CONV_TILE : r;

      if (rpe_monitor_cancelled (monitor))
        {
          ctx->vr = vr;
          ctx->vi = vi;
          return RPE_ERROR_CANCELLED;
        }
      for (size_t d = 0; d < D; d++)
        {
          const size_t c = h * D + d;
          const float *wq = qt + d * ld, *wk = kt + d * ld;

          ctx->vr = fspec + 2 * d * B;
          ctx->vi = ctx->vr + B;
          for (size_t i = i0; i < i1; i++)
            {
              load_segment (ctx, z, c, i);
              filter_segment (ctx, do_q ? acc + i * ld : NULL, do_k ? acc + (r + i) * ld : NULL, wq, wk);
            }
        }
    }
  ctx->vr = vr;
  ctx->vi = vi;

  /* out[m, h, :] = acc^T + (x[:, h, :] diag(b)) eps_h */
  for (int side = 0; side < 2; side++)
    {
      const float *xin = side == 0 ? q : k;
      float *hat = side == 0 ? qhat : khat;
      const float *src = acc + side * r * ld;

      if (hat == NULL)
        continue;
      /* blocks of 16 rows: each output row written whole, the strided reads of
       * acc hit distinct cache sets thanks to the padded ld */
      for (size_t m0 = 0; m0 < n; m0 += 16)
        {
          size_t m1 = m0 + 16 < n ? m0 + 16 : n;

          for (size_t m = m0; m < m1; m++)
            {
              float *row = hat + (m * H + h) * r;

              for (size_t i = 0; i < r; i++)
                row[i] = src[i * ld + m];
            }
        }
      if (params->gate != NULL && eps != NULL && xin != NULL)
        {
          for (size_t d = 0; d < D; d++)
            {
              const float b = (float) (sqrt ((double) params->gate[h * D + d]) * ctx->s);

              for (size_t i = 0; i < r; i++)
                eb[d * r + i] = b * eps[(h * D + d) * r + i];
            }
          /* on the core's own kernels: the same speed and the same bits whatever BLAS runs */
          _rpe_gemm (n, r, D, 1.0f, xin + h * D, H * D, 1, eb, r, true, hat + h * r, H * r);
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
  if (job->zhd != 0)
    {
      ctx.zhd = job->zhd;
      ctx.zc0 = job->zc0;
    }
  if (ctx.path == RPE_CONV_SPE_PATH_FFT)
    {
      float *tmp = NULL, *acc = NULL;
      size_t ld, acount, tcount;

      /* acc: 2 R rows of ld; tmp: the transposed inputs (2 D ld), the gate factors (D R)
       * and the head's filter spectra (2 D nfft) */
      if (!rpe_size_add (n, 16, &ld) || !rpe_size_mul (ld, 2 * r, &acount)
          || !rpe_size_mul (ld, 2 * D, &tcount) || !rpe_size_add (tcount, D * r, &tcount)
          || !rpe_size_add (tcount, 2 * D * ctx.nfft, &tcount))
        {
          st = RPE_ERROR_OVERFLOW;
          goto out;
        }
      if ((acc = rpe_alloc (acount, sizeof (float), &st)) != NULL
          && (tmp = rpe_alloc (tcount, sizeof (float), &st)) != NULL)
        for (size_t h = worker; h < H && st == RPE_OK; h += n_workers)
          {
            st = head_fft (&ctx, job->z, h, eps, q, k, qhat, khat, acc, tmp, ld, job->monitor);
            if (worker == 0)
              rpe_monitor_progress (job->monitor, (double) (h / n_workers + 1)
                                                  / (double) ((H + n_workers - 1) / n_workers));
          }
      rpe_free (tmp);
      rpe_free (acc);
      goto out;
    }

  if ((sq = rpe_alloc (count, 2 * sizeof (float), &st)) == NULL)
    goto out;
  sk = sq + count;

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
        conv_channel (&ctx, job->z, c, sq, sk, r, NULL, NULL);
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

                rpe_axpy_f (out, codes + m * r, xa, r);
                if (eps != NULL && xb != 0.0f)
                  rpe_axpy_f (out, eps + c * r, xb, r);
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
                  size_t              zhd,
                  size_t              zc0,
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
  job = (FusedJob) { params, n, r, z, seed, eps, q, k, qhat, khat, monitor, zhd, zc0, { RPE_OK } };
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
  return encode_fused_run (params, n, r, z, 0, 0, 0, eps, q, k, qhat, khat, monitor);
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
  return encode_fused_run (params, n, r, NULL, seed, 0, 0, eps, q, k, qhat, khat, monitor);
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

RpeStatus
_rpe_conv_spe_encode_seeded_part (const RpeSpeParams *params,
                                  size_t              n,
                                  size_t              r,
                                  uint64_t            seed,
                                  size_t              draw_channels,
                                  size_t              first_channel,
                                  const float        *eps,
                                  const float        *q,
                                  const float        *k,
                                  float              *qhat,
                                  float              *khat,
                                  const RpeMonitor   *monitor)
{
  static const float dummy = 0.0f;   /* the noise is drawn, not passed */
  RpeStatus st;

  if ((st = check_conv_args (params, n, r, &dummy)) != RPE_OK)
    return st;
  if (draw_channels == 0 || first_channel > draw_channels
      || params->n_heads * params->n_features > draw_channels - first_channel)
    return RPE_ERROR_INVALID_ARGUMENT;
  return encode_fused_run (params, n, r, NULL, seed, draw_channels, first_channel, eps, q, k, qhat, khat,
                           monitor);
}

/* ---------------------------------------------------------------- floors for rpe bench */

typedef struct
{
  const RpeSpeParams *params;
  size_t              n, r;
  RpeConvSpeFloor     what;
  RpeStatus           status[RPE_CONV_MAX_WORKERS];
} FloorJob;

/* Worker `worker` takes the (channel, realization) pairs c * R + i = worker mod n_workers and
 * does only the floor's part of what fused_worker does for them: the same normal draws into
 * the same segment buffer, or the same split transforms (a forward per pair of blocks, an
 * inverse per block) on buffers that stay in L1. */
static void
floor_worker (size_t  worker,
              size_t  n_workers,
              void   *data)
{
  FloorJob *job = data;
  const size_t hd = job->params->n_heads * job->params->n_features;
  ConvCtx ctx;
  RpeStatus st;

  if ((st = conv_ctx_init (&ctx, job->params, job->n, job->r, RPE_CONV_SPE_PATH_FFT)) != RPE_OK)
    {
      job->status[worker] = st;
      return;
    }
  /* the transforms see the values they see in the encoding: one segment of normals */
  rpe_rng_normal (1, RPE_STREAM_CONV, 0, ctx.x, ctx.seg);
  memset (ctx.x + ctx.seg, 0, (ctx.xlen - ctx.seg) * sizeof (float));
  for (size_t p = worker; p < hd * job->r; p += n_workers)
    {
      const size_t c = p / job->r, i = p % job->r;

      if (job->what == RPE_CONV_SPE_FLOOR_NORMALS)
        {
          rpe_rng_normal (1, RPE_STREAM_CONV, (i * hd + c) * ctx.zlen + job->params->kernel, ctx.x, ctx.seg);
          continue;
        }
      for (size_t b = 0; b < ctx.nblk; b += 2)
        {
          rpe_fft_split_forward (ctx.xplan, ctx.x + b * ctx.nvalid, ctx.x + (b + 1) * ctx.nvalid, ctx.zr, ctx.zi);
          for (size_t k = 0; k < 2 && b + k < ctx.nblk; k++)
            rpe_fft_split_backward (ctx.plan, ctx.zr, ctx.zi, ctx.tq, ctx.tk);
        }
    }
  conv_ctx_clear (&ctx);
  job->status[worker] = RPE_OK;
}

RpeStatus
_rpe_conv_spe_floor (const RpeSpeParams *params,
                     size_t              n,
                     size_t              r,
                     RpeConvSpeFloor     what)
{
  FloorJob job;
  size_t workers = rpe_parallel_threads ();
  RpeStatus st;

  if ((st = rpe_spe_params_validate (params)) != RPE_OK)
    return st;
  if (params->method != RPE_SPE_CONV || n == 0 || r == 0
      || rpe_conv_spe_choose_path (n, params->kernel) != RPE_CONV_SPE_PATH_FFT)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (what != RPE_CONV_SPE_FLOOR_NORMALS && what != RPE_CONV_SPE_FLOOR_FFTS)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (workers > RPE_CONV_MAX_WORKERS)
    workers = RPE_CONV_MAX_WORKERS;
  memset (&job, 0, sizeof job);
  job.params = params;
  job.n = n;
  job.r = r;
  job.what = what;
  rpe_parallel_run (workers, floor_worker, &job);
  for (size_t w = 0; w < workers; w++)
    if (job.status[w] != RPE_OK)
      return job.status[w];
  return RPE_OK;
}

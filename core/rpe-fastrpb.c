/* rpe-fastrpb.c: FastRPB additive Toeplitz bias (docs/math.md, section 8).
 *
 * "FastRPB: a scalable relative positional encoding for long sequence tasks"
 * (ICLR 2022 submission): Y = Attention(Q, K, V) + W V with a Toeplitz W,
 * multiplied in O(N log N) by embedding W into a circulant matrix and using
 * the FFT diagonalisation of circulants.  See rpe-fastrpb.h for layouts.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "rpe-alloc.h"
#include "rpe-fastrpb.h"
#include "rpe-fft.h"

/* Columns transformed together (memory B * L floats). */
#define BATCH 8

typedef enum
{
  LAGS_ALL,        /* tau in [-(N-1), N-1] */
  LAGS_CAUSAL,     /* tau in [0, N-1] */
  LAGS_STRICT,     /* tau in [1, N-1] */
} Lags;

/* spec = FFT (c) / L, where c is the first column of the circulant of size
 * L >= 2N - 1 that holds W: c[tau mod L] = w_tau.  Then for x zero-padded to
 * L, (c circ-conv x)[m] = sum_n w_{m-n} x[n] for m < N, as (m - n) mod L never
 * wraps onto another lag. */
static void
weight_spectrum (const RpeFftPlan *plan,
                 size_t            n,
                 const float      *w,
                 Lags              lags,
                 float            *cbuf,
                 fftwf_complex    *spec)
{
  size_t l = rpe_fft_plan_size (plan);
  float scale = 1.0f / (float) l;

  memset (cbuf, 0, l * sizeof (float));
  for (size_t tau = lags == LAGS_STRICT ? 1 : 0; tau < n; tau++)
    cbuf[tau] = w[n - 1 + tau];
  if (lags == LAGS_ALL)
    for (size_t tau = 1; tau < n; tau++)
      cbuf[l - tau] = w[n - 1 - tau];
  rpe_fft_forward (plan, cbuf, spec);
  for (size_t k = 0; k < l / 2 + 1; k++)
    {
      spec[k][0] *= scale;
      spec[k][1] *= scale;
    }
}

/* In place: buf (nb rows of L) <- W buf for each row, via the spectrum. */
static void
toeplitz_rows (const RpeFftPlan    *plan,
               const fftwf_complex *wspec,
               size_t               nb,
               float               *buf,
               fftwf_complex       *xspec)
{
  size_t l = rpe_fft_plan_size (plan), lc = l / 2 + 1;

  for (size_t b = 0; b < nb; b++)
    {
      float *x = buf + b * l;

      rpe_fft_forward (plan, x, xspec);
      for (size_t k = 0; k < lc; k++)
        {
          float ar = xspec[k][0], ai = xspec[k][1];
          float br = wspec[k][0], bi = wspec[k][1];

          xspec[k][0] = ar * br - ai * bi;
          xspec[k][1] = ar * bi + ai * br;
        }
      rpe_fft_inverse (plan, xspec, x);
    }
}

static RpeStatus
check_weights (const float *w,
               size_t       n,
               size_t       rows)
{
  size_t count;

  if (!rpe_size_mul (n, 2, &count) || !rpe_size_mul (count - 1, rows, &count))
    return RPE_ERROR_OVERFLOW;
  return rpe_all_finite_f (w, count) ? RPE_OK : RPE_ERROR_NOT_FINITE;
}

RpeStatus
rpe_fastrpb_apply (size_t            n,
                   size_t            n_heads,
                   size_t            dv,
                   const float      *w,
                   const float      *v,
                   float            *y,
                   unsigned          flags,
                   const RpeMonitor *monitor)
{
  RpeStatus st;
  RpeFftPlan *plan = NULL;
  float *cbuf = NULL, *buf = NULL;
  fftwf_complex *wspec = NULL, *xspec = NULL;
  size_t count, l, lc, lw, stride;
  bool per_head = (flags & RPE_FASTRPB_PER_HEAD) != 0;
  bool accumulate = (flags & RPE_FASTRPB_ACCUMULATE) != 0;
  Lags lags = (flags & RPE_FASTRPB_CAUSAL) ? LAGS_CAUSAL : LAGS_ALL;
  size_t n_batches, done = 0;

  if (w == NULL || v == NULL || y == NULL || n == 0 || n_heads == 0 || dv == 0
      || (flags & ~(unsigned) (RPE_FASTRPB_PER_HEAD | RPE_FASTRPB_CAUSAL | RPE_FASTRPB_ACCUMULATE)))
    return RPE_ERROR_INVALID_ARGUMENT;
  if ((st = rpe_size_bytes (&count, 1, n, n_heads, dv, 1)) != RPE_OK
      || !rpe_size_mul (n_heads, dv, &stride))
    return st != RPE_OK ? st : RPE_ERROR_OVERFLOW;
  if ((st = check_weights (w, n, per_head ? n_heads : 1)) != RPE_OK)
    return st;
  lw = 2 * n - 1;

  if ((plan = rpe_fft_plan_new (rpe_fft_good_size (lw), RPE_FFT_ESTIMATE, &st)) == NULL)
    return st;
  l = rpe_fft_plan_size (plan);
  lc = l / 2 + 1;
  if ((cbuf = rpe_alloc (l, sizeof (float), &st)) == NULL
      || (buf = rpe_alloc (l, BATCH * sizeof (float), &st)) == NULL
      || (wspec = rpe_alloc (lc, sizeof (fftwf_complex), &st)) == NULL
      || (xspec = rpe_alloc (lc, sizeof (fftwf_complex), &st)) == NULL)
    goto out;

  n_batches = n_heads * ((dv + BATCH - 1) / BATCH);
  for (size_t h = 0; h < n_heads; h++)
    {
      /* FFT of the weights once per head (once in all when shared) */
      if (h == 0 || per_head)
        weight_spectrum (plan, n, w + (per_head ? h * lw : 0), lags, cbuf, wspec);

      for (size_t d0 = 0; d0 < dv; d0 += BATCH)
        {
          size_t nb = dv - d0 < BATCH ? dv - d0 : BATCH;

          if (rpe_monitor_cancelled (monitor))
            {
              st = RPE_ERROR_CANCELLED;
              goto out;
            }
          rpe_monitor_progress (monitor, (double) done++ / (double) n_batches);

          /* gather nb columns, zero-padded to L */
          for (size_t b = 0; b < nb; b++)
            memset (buf + b * l + n, 0, (l - n) * sizeof (float));
          for (size_t i = 0; i < n; i++)
            {
              const float *src = v + i * stride + h * dv + d0;

              for (size_t b = 0; b < nb; b++)
                buf[b * l + i] = src[b];
            }
          toeplitz_rows (plan, wspec, nb, buf, xspec);
          for (size_t i = 0; i < n; i++)
            {
              float *dst = y + i * stride + h * dv + d0;

              for (size_t b = 0; b < nb; b++)
                dst[b] = accumulate ? dst[b] + buf[b * l + i] : buf[b * l + i];
            }
        }
    }
  rpe_monitor_progress (monitor, 1.0);

out:
  rpe_free (cbuf);
  rpe_free (buf);
  rpe_free (wspec);
  rpe_free (xspec);
  rpe_fft_plan_free (plan);
  return st;
}

RpeStatus
rpe_fastrpb_apply_2d (size_t            n1,
                      size_t            n2,
                      size_t            n_heads,
                      size_t            dv,
                      const float      *wx,
                      const float      *wy,
                      const float      *v,
                      float            *y,
                      unsigned          flags,
                      const RpeMonitor *monitor)
{
  RpeStatus st;
  RpeFftPlan *p1 = NULL, *p2 = NULL;
  float *c1 = NULL, *c2 = NULL, *abuf = NULL, *bbuf = NULL, *rbuf = NULL;
  fftwf_complex *wxs = NULL, *wys = NULL, *wyc = NULL, *xspec = NULL, *rspec = NULL;
  double *sre = NULL, *sim = NULL;
  size_t n, count, stride, l1, l2, lc2, lwx, lwy, n_batches, done = 0;
  bool per_head = (flags & RPE_FASTRPB_PER_HEAD) != 0;
  bool accumulate = (flags & RPE_FASTRPB_ACCUMULATE) != 0;
  bool causal = (flags & RPE_FASTRPB_CAUSAL) != 0;

  if (wx == NULL || wy == NULL || v == NULL || y == NULL || n1 == 0 || n2 == 0
      || n_heads == 0 || dv == 0
      || (flags & ~(unsigned) (RPE_FASTRPB_PER_HEAD | RPE_FASTRPB_CAUSAL | RPE_FASTRPB_ACCUMULATE)))
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (n1, n2, &n) || !rpe_size_mul (n_heads, dv, &stride))
    return RPE_ERROR_OVERFLOW;
  if ((st = rpe_size_bytes (&count, 1, n, n_heads, dv, 1)) != RPE_OK)
    return st;
  if ((st = check_weights (wx, n1, per_head ? n_heads : 1)) != RPE_OK
      || (st = check_weights (wy, n2, per_head ? n_heads : 1)) != RPE_OK)
    return st;
  lwx = 2 * n1 - 1;
  lwy = 2 * n2 - 1;

  if ((p1 = rpe_fft_plan_new (rpe_fft_good_size (lwx), RPE_FFT_ESTIMATE, &st)) == NULL
      || (p2 = rpe_fft_plan_new (rpe_fft_good_size (lwy), RPE_FFT_ESTIMATE, &st)) == NULL)
    goto out;
  l1 = rpe_fft_plan_size (p1);
  l2 = rpe_fft_plan_size (p2);
  lc2 = l2 / 2 + 1;
  if ((c1 = rpe_alloc (l1, sizeof (float), &st)) == NULL
      || (c2 = rpe_alloc (l2, sizeof (float), &st)) == NULL
      || (abuf = rpe_alloc (l1, BATCH * sizeof (float), &st)) == NULL
      || (bbuf = rpe_alloc (l2, BATCH * sizeof (float), &st)) == NULL
      || (wxs = rpe_alloc (l1 / 2 + 1, sizeof (fftwf_complex), &st)) == NULL
      || (wys = rpe_alloc (lc2, sizeof (fftwf_complex), &st)) == NULL
      || (xspec = rpe_alloc ((l1 > l2 ? l1 : l2) / 2 + 1, sizeof (fftwf_complex), &st)) == NULL)
    goto out;
  if (causal
      && ((wyc = rpe_alloc (lc2, sizeof (fftwf_complex), &st)) == NULL
          || (rbuf = rpe_alloc (l2, sizeof (float), &st)) == NULL
          || (rspec = rpe_alloc (lc2, sizeof (fftwf_complex), &st)) == NULL
          || (sre = rpe_alloc (lc2, BATCH * sizeof (double), &st)) == NULL
          || (sim = rpe_alloc (lc2, BATCH * sizeof (double), &st)) == NULL))
    goto out;

  n_batches = n_heads * ((dv + BATCH - 1) / BATCH);
  for (size_t h = 0; h < n_heads; h++)
    {
      if (h == 0 || per_head)
        {
          const float *wxh = wx + (per_head ? h * lwx : 0);
          const float *wyh = wy + (per_head ? h * lwy : 0);

          /* causal: the x term only sees earlier rows (tau_x >= 1); tau_x = 0
           * is the row-prefix term below */
          weight_spectrum (p1, n1, wxh, causal ? LAGS_STRICT : LAGS_ALL, c1, wxs);
          weight_spectrum (p2, n2, wyh, LAGS_ALL, c2, wys);
          if (causal)
            weight_spectrum (p2, n2, wyh, LAGS_CAUSAL, c2, wyc);
        }

      for (size_t d0 = 0; d0 < dv; d0 += BATCH)
        {
          size_t nb = dv - d0 < BATCH ? dv - d0 : BATCH;
          float wx0 = wx[(per_head ? h * lwx : 0) + n1 - 1];

          if (rpe_monitor_cancelled (monitor))
            {
              st = RPE_ERROR_CANCELLED;
              goto out;
            }
          rpe_monitor_progress (monitor, (double) done++ / (double) n_batches);

          /* per-axis sums A[i] = sum_j v[i, j], B[j] = sum_i v[i, j] */
          memset (abuf, 0, nb * l1 * sizeof (float));
          memset (bbuf, 0, nb * l2 * sizeof (float));
          for (size_t i = 0; i < n1; i++)
            for (size_t j = 0; j < n2; j++)
              {
                const float *src = v + (i * n2 + j) * stride + h * dv + d0;

                for (size_t b = 0; b < nb; b++)
                  {
                    abuf[b * l1 + i] += src[b];
                    bbuf[b * l2 + j] += src[b];
                  }
              }
          toeplitz_rows (p1, wxs, nb, abuf, xspec);

          if (!causal)
            {
              toeplitz_rows (p2, wys, nb, bbuf, xspec);
              for (size_t i = 0; i < n1; i++)
                for (size_t j = 0; j < n2; j++)
                  {
                    float *dst = y + (i * n2 + j) * stride + h * dv + d0;

                    for (size_t b = 0; b < nb; b++)
                      {
                        float val = abuf[b * l1 + i] + bbuf[b * l2 + j];

                        dst[b] = accumulate ? dst[b] + val : val;
                      }
                  }
              continue;
            }

          /* causal (raster order): row by row, with S = sum over earlier rows
           * of the row spectra (FFT is linear, so S is the spectrum of the
           * column prefix sums) */
          memset (sre, 0, nb * lc2 * sizeof (double));
          memset (sim, 0, nb * lc2 * sizeof (double));
          for (size_t i = 0; i < n1; i++)
            {
              for (size_t b = 0; b < nb; b++)
                {
                  double *sr = sre + b * lc2, *si = sim + b * lc2;
                  double prefix = 0;

                  memset (rbuf + n2, 0, (l2 - n2) * sizeof (float));
                  for (size_t j = 0; j < n2; j++)
                    rbuf[j] = v[(i * n2 + j) * stride + h * dv + d0 + b];
                  rpe_fft_forward (p2, rbuf, rspec);
                  for (size_t k = 0; k < lc2; k++)
                    {
                      double rr = rspec[k][0], ri = rspec[k][1];
                      double out_r = sr[k] * wys[k][0] - si[k] * wys[k][1]
                                     + rr * wyc[k][0] - ri * wyc[k][1];
                      double out_i = sr[k] * wys[k][1] + si[k] * wys[k][0]
                                     + rr * wyc[k][1] + ri * wyc[k][0];

                      sr[k] += rr;
                      si[k] += ri;
                      xspec[k][0] = (float) out_r;
                      xspec[k][1] = (float) out_i;
                    }
                  rpe_fft_inverse (p2, xspec, rbuf);
                  for (size_t j = 0; j < n2; j++)
                    {
                      float *dst = y + (i * n2 + j) * stride + h * dv + d0 + b;
                      float val;

                      prefix += v[(i * n2 + j) * stride + h * dv + d0 + b];
                      val = (float) (abuf[b * l1 + i] + wx0 * prefix + rbuf[j]);
                      *dst = accumulate ? *dst + val : val;
                    }
                }
            }
        }
    }
  rpe_monitor_progress (monitor, 1.0);

out:
  rpe_free (c1);
  rpe_free (c2);
  rpe_free (abuf);
  rpe_free (bbuf);
  rpe_free (rbuf);
  rpe_free (wxs);
  rpe_free (wys);
  rpe_free (wyc);
  rpe_free (xspec);
  rpe_free (rspec);
  rpe_free (sre);
  rpe_free (sim);
  rpe_fft_plan_free (p1);
  rpe_fft_plan_free (p2);
  return st;
}

RpeStatus
rpe_fastrpb_lag_profile (size_t       n,
                         const float *w,
                         bool         causal,
                         float       *profile)
{
  size_t lw;

  if (w == NULL || profile == NULL || n == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (n, 2, &lw))
    return RPE_ERROR_OVERFLOW;
  lw -= 1;
  for (size_t i = 0; i < lw; i++)
    profile[i] = (causal && i < n - 1) ? 0.0f : w[i];
  return RPE_OK;
}

RpeStatus
rpe_fastrpb_dense (size_t       n,
                   const float *w,
                   bool         causal,
                   float       *dense)
{
  size_t count;

  if (w == NULL || dense == NULL || n == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (n, n, &count) || !rpe_size_mul (n, 2, &count))
    return RPE_ERROR_OVERFLOW;
  for (size_t m = 0; m < n; m++)
    for (size_t k = 0; k < n; k++)
      dense[m * n + k] = (causal && k > m) ? 0.0f : w[m + n - 1 - k];
  return RPE_OK;
}

RpeStatus
rpe_fastrpb_dense_2d (size_t       n1,
                      size_t       n2,
                      const float *wx,
                      const float *wy,
                      bool         causal,
                      float       *dense)
{
  size_t n, count;

  if (wx == NULL || wy == NULL || dense == NULL || n1 == 0 || n2 == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (n1, n2, &n) || !rpe_size_mul (n, n, &count)
      || !rpe_size_mul (n1, 2, &count) || !rpe_size_mul (n2, 2, &count))
    return RPE_ERROR_OVERFLOW;
  for (size_t p = 0; p < n; p++)
    {
      size_t i = p / n2, j = p % n2;

      for (size_t q = 0; q < n; q++)
        {
          size_t i2 = q / n2, j2 = q % n2;

          dense[p * n + q] = (causal && q > p) ? 0.0f
                             : wx[i + n1 - 1 - i2] + wy[j + n2 - 1 - j2];
        }
    }
  return RPE_OK;
}

RpeFastrpbLayout
rpe_fastrpb_reference_layout (size_t width)
{
  return width % 2 == 1 ? RPE_FASTRPB_LAYOUT_FULL : RPE_FASTRPB_LAYOUT_SYMMETRIC;
}

size_t
rpe_fastrpb_layout_length (RpeFastrpbLayout layout,
                           size_t           width)
{
  switch (layout)
    {
    case RPE_FASTRPB_LAYOUT_CENTRED:
    case RPE_FASTRPB_LAYOUT_FULL:
      return width % 2 == 1 ? (width + 1) / 2 : 0;
    case RPE_FASTRPB_LAYOUT_SYMMETRIC:
      return width;
    default:
      return 0;
    }
}

RpeStatus
rpe_fastrpb_to_centred (RpeFastrpbLayout layout,
                        size_t           rows,
                        size_t           width,
                        const float     *stored,
                        size_t           n,
                        float           *centred)
{
  size_t m = rpe_fastrpb_layout_length (layout, width), lags, count;

  if (stored == NULL || centred == NULL || rows == 0 || n == 0 || m == 0 || m < n)
    return RPE_ERROR_INVALID_ARGUMENT;
  lags = 2 * n - 1;   /* n <= m <= width: no overflow */
  if (!rpe_size_mul (rows, lags, &count) || !rpe_size_mul (rows, width, &count))
    return RPE_ERROR_OVERFLOW;
  for (size_t r = 0; r < rows; r++)
    {
      const float *src = stored + r * width;
      float *dst = centred + r * lags;

      for (size_t i = 0; i < lags; i++)
        {
          /* tau = i - (n - 1), in [-(n-1), n-1] and so in [-(m-1), m-1] */
          ptrdiff_t tau = (ptrdiff_t) i - (ptrdiff_t) (n - 1);
          size_t idx;

          switch (layout)
            {
            case RPE_FASTRPB_LAYOUT_FULL:
              idx = (size_t) ((tau + (ptrdiff_t) m) % (ptrdiff_t) width);   /* tau + m >= 1 */
              break;
            case RPE_FASTRPB_LAYOUT_SYMMETRIC:
              idx = (size_t) (tau < 0 ? -tau : tau);
              break;
            case RPE_FASTRPB_LAYOUT_CENTRED:
            default:
              idx = (size_t) (tau + (ptrdiff_t) (m - 1));
              break;
            }
          dst[i] = src[idx];
        }
    }
  return RPE_OK;
}

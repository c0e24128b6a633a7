/* rpe-conv-spe-2d.c: 2-D convSPE over an N1 x N2 grid (see rpe-conv-spe-2d.h). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "rpe-alloc.h"
#include "rpe-conv-spe-2d.h"
#include "rpe-fft.h"
#include "rpe-rng.h"

#define MIN2(a, b) ((a) < (b) ? (a) : (b))

/* The same arrays seen as 1-D parameters with L = L1 L2 (for the checks and the
 * kernel-free steps: gating, encoding, empirical templates). */
static RpeSpeParams
flat_view (const RpeSpeParams *params)
{
  RpeSpeParams v = *params;

  v.kernel = params->kernel * params->kernel_cols;
  v.kernel_cols = 0;
  return v;
}

bool
rpe_conv_spe_is_2d (const RpeSpeParams *params)
{
  return params != NULL && params->method == RPE_SPE_CONV && params->kernel_cols != 0;
}

RpeStatus
rpe_conv_spe_2d_params_init (RpeSpeParams *params,
                             size_t        n_heads,
                             size_t        n_features,
                             size_t        kernel_rows,
                             size_t        kernel_cols,
                             bool          gated)
{
  size_t taps;
  RpeStatus st;

  if (params == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  memset (params, 0, sizeof *params);
  if (kernel_rows == 0 || kernel_cols == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (kernel_rows, kernel_cols, &taps))
    return RPE_ERROR_OVERFLOW;
  if ((st = rpe_spe_params_init (params, RPE_SPE_CONV, n_heads, n_features, taps, gated)) != RPE_OK)
    return st;
  params->kernel = kernel_rows;
  params->kernel_cols = kernel_cols;
  return RPE_OK;
}

RpeStatus
rpe_conv_spe_2d_params_random (RpeSpeParams *params,
                               uint64_t      seed)
{
  RpeSpeParams v;
  RpeStatus st;

  if (!rpe_conv_spe_is_2d (params))
    return RPE_ERROR_INVALID_ARGUMENT;
  v = flat_view (params);
  st = rpe_spe_params_random (&v, seed);   /* wq, wk ~ N(0,1) / sqrt(L1 L2), the gate */
  return st;
}

RpeStatus
rpe_conv_spe_2d_validate (const RpeSpeParams *params)
{
  RpeSpeParams v;
  size_t taps;

  if (!rpe_conv_spe_is_2d (params) || params->kernel == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (params->kernel, params->kernel_cols, &taps))
    return RPE_ERROR_OVERFLOW;
  v = flat_view (params);
  return rpe_spe_params_validate (&v);
}

/* (N1 + 4 L1) and (N2 + 4 L2), overflow-checked */
static RpeStatus
noise_dims (const RpeSpeParams *params,
            size_t              n1,
            size_t              n2,
            size_t             *z1,
            size_t             *z2)
{
  if (!rpe_size_mul (params->kernel, 4, z1) || !rpe_size_add (*z1, n1, z1)
      || !rpe_size_mul (params->kernel_cols, 4, z2) || !rpe_size_add (*z2, n2, z2))
    return RPE_ERROR_OVERFLOW;
  return RPE_OK;
}

RpeStatus
rpe_conv_spe_2d_noise_size (const RpeSpeParams *params,
                            size_t              n1,
                            size_t              n2,
                            size_t              r,
                            size_t             *out_count)
{
  size_t z1, z2, hd, count;
  RpeStatus st;

  if (!rpe_conv_spe_is_2d (params) || out_count == NULL || n1 == 0 || n2 == 0 || r == 0
      || params->kernel == 0 || params->n_heads == 0 || params->n_features == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if ((st = noise_dims (params, n1, n2, &z1, &z2)) != RPE_OK)
    return st;
  if (!rpe_size_mul (params->n_heads, params->n_features, &hd)
      || !rpe_size_mul (r, hd, &count) || !rpe_size_mul (count, z1, &count)
      || !rpe_size_mul (count, z2, &count))
    return RPE_ERROR_OVERFLOW;
  *out_count = count;
  return RPE_OK;
}

RpeStatus
rpe_conv_spe_2d_noise_fill (const RpeSpeParams *params,
                            size_t              n1,
                            size_t              n2,
                            size_t              r,
                            uint64_t            seed,
                            float              *z)
{
  size_t count;
  RpeStatus st;

  if ((st = rpe_conv_spe_2d_noise_size (params, n1, n2, r, &count)) != RPE_OK)
    return st;
  if (z == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  rpe_rng_normal (seed, RPE_STREAM_CONV, 0, z, count);
  return RPE_OK;
}

RpeConvSpePath
rpe_conv_spe_2d_choose_path (size_t n1,
                             size_t n2,
                             size_t kernel_rows,
                             size_t kernel_cols)
{
  (void) n1;
  (void) n2;
  return kernel_rows * kernel_cols > RPE_CONV_SPE_FFT_MIN_KERNEL ? RPE_CONV_SPE_PATH_FFT
                                                                 : RPE_CONV_SPE_PATH_DIRECT;
}

/* ---- codes ------------------------------------------------------------ */

typedef struct
{
  size_t         m1, m2, m2h;     /* FFT grid and its half-spectrum width */
  RpeFftPlan    *row;             /* real, length m2 */
  RpeFftC2cPlan *col;             /* complex, length m1 */
  float         *real;            /* m1 x m2 */
  fftwf_complex *spec;            /* m1 x m2h */
  fftwf_complex *prod;            /* m1 x m2h */
  fftwf_complex *cin, *cout;      /* m1 */
  fftwf_complex *wq, *wk;         /* m1 x m2h filter spectra (one channel) */
} Fft2;

static void
fft2_clear (Fft2 *f)
{
  rpe_fft_plan_free (f->row);
  rpe_fft_c2c_plan_free (f->col);
  rpe_free (f->real);
  rpe_free (f->spec);
  rpe_free (f->prod);
  rpe_free (f->cin);
  rpe_free (f->cout);
  rpe_free (f->wq);
  rpe_free (f->wk);
  memset (f, 0, sizeof *f);
}

static RpeStatus
fft2_init (Fft2   *f,
           size_t  rows,
           size_t  cols)
{
  RpeStatus st = RPE_OK;
  size_t cells;

  memset (f, 0, sizeof *f);
  f->m1 = rpe_fft_good_size (rows);
  f->m2 = rpe_fft_good_size (cols);
  f->m2h = f->m2 / 2 + 1;
  if (f->m1 == 0 || f->m2 == 0)
    return RPE_ERROR_OVERFLOW;
  if ((st = rpe_size_bytes (&cells, sizeof (fftwf_complex), f->m1, f->m2h, 1, 1)) != RPE_OK
      || (st = rpe_size_bytes (&cells, sizeof (float), f->m1, f->m2, 1, 1)) != RPE_OK)
    return st;
  if ((f->row = rpe_fft_plan_new (f->m2, RPE_FFT_ALIGNED, &st)) == NULL
      || (f->col = rpe_fft_c2c_plan_new (f->m1, RPE_FFT_ALIGNED, &st)) == NULL
      || (f->real = rpe_alloc (f->m1 * f->m2, sizeof (float), &st)) == NULL
      || (f->spec = rpe_alloc (f->m1 * f->m2h, sizeof (fftwf_complex), &st)) == NULL
      || (f->prod = rpe_alloc (f->m1 * f->m2h, sizeof (fftwf_complex), &st)) == NULL
      || (f->cin = rpe_alloc (f->m1, sizeof (fftwf_complex), &st)) == NULL
      || (f->cout = rpe_alloc (f->m1, sizeof (fftwf_complex), &st)) == NULL
      || (f->wq = rpe_alloc (f->m1 * f->m2h, sizeof (fftwf_complex), &st)) == NULL
      || (f->wk = rpe_alloc (f->m1 * f->m2h, sizeof (fftwf_complex), &st)) == NULL)
    {
      fft2_clear (f);
      return st;
    }
  return RPE_OK;
}

/* out (m1 x m2h) = the 2-D DFT of f->real (rows r2c, then columns c2c). */
static void
fft2_forward (Fft2          *f,
              fftwf_complex *out)
{
  for (size_t u = 0; u < f->m1; u++)
    rpe_fft_forward (f->row, f->real + u * f->m2, out + u * f->m2h);
  for (size_t k = 0; k < f->m2h; k++)
    {
      for (size_t u = 0; u < f->m1; u++)
        {
          f->cin[u][0] = out[u * f->m2h + k][0];
          f->cin[u][1] = out[u * f->m2h + k][1];
        }
      rpe_fft_c2c_forward (f->col, f->cin, f->cout);
      for (size_t u = 0; u < f->m1; u++)
        {
          out[u * f->m2h + k][0] = f->cout[u][0];
          out[u * f->m2h + k][1] = f->cout[u][1];
        }
    }
}

/* f->real = the unnormalised inverse 2-D DFT of in (destroyed). */
static void
fft2_inverse (Fft2          *f,
              fftwf_complex *in)
{
  for (size_t k = 0; k < f->m2h; k++)
    {
      for (size_t u = 0; u < f->m1; u++)
        {
          f->cin[u][0] = in[u * f->m2h + k][0];
          f->cin[u][1] = in[u * f->m2h + k][1];
        }
      rpe_fft_c2c_backward (f->col, f->cin, f->cout);
      for (size_t u = 0; u < f->m1; u++)
        {
          in[u * f->m2h + k][0] = f->cout[u][0];
          in[u * f->m2h + k][1] = f->cout[u][1];
        }
    }
  for (size_t u = 0; u < f->m1; u++)
    rpe_fft_inverse (f->row, in + u * f->m2h, f->real + u * f->m2);
}

/* spectrum of one (L1 x L2) filter zero-padded to m1 x m2 */
static void
filter_spectrum (Fft2        *f,
                 const float *w,
                 size_t       l1,
                 size_t       l2,
                 fftwf_complex *out)
{
  memset (f->real, 0, f->m1 * f->m2 * sizeof (float));
  for (size_t a = 0; a < l1; a++)
    memcpy (f->real + a * f->m2, w + a * l2, l2 * sizeof (float));
  fft2_forward (f, out);
}

/* dst[p * stride] = scale * (IDFT (spec . conj (w)))[i, j] for the N1 x N2 valid outputs */
static void
correlate_out (Fft2                *f,
               const fftwf_complex *w,
               size_t               n1,
               size_t               n2,
               double               scale,
               float               *dst,
               size_t               stride)
{
  size_t cells = f->m1 * f->m2h;

  for (size_t t = 0; t < cells; t++)
    {
      double ar = f->spec[t][0], ai = f->spec[t][1], br = w[t][0], bi = -w[t][1];

      f->prod[t][0] = (float) (ar * br - ai * bi);
      f->prod[t][1] = (float) (ar * bi + ai * br);
    }
  fft2_inverse (f, f->prod);
  scale /= (double) f->m1 * (double) f->m2;
  for (size_t i = 0; i < n1; i++)
    for (size_t j = 0; j < n2; j++)
      dst[(i * n2 + j) * stride] = (float) (scale * f->real[i * f->m2 + j]);
}

RpeStatus
rpe_conv_spe_2d_codes (const RpeSpeParams *params,
                       size_t              n1,
                       size_t              n2,
                       size_t              r,
                       const float        *z,
                       float              *qbar,
                       float              *kbar,
                       RpeConvSpePath      path,
                       const RpeMonitor   *monitor)
{
  size_t hd, n, z1, z2, l1, l2, taps, count, zsize, plane;
  double s;
  RpeStatus st;
  Fft2 f = { 0 };
  bool have_fft = false;

  if ((st = rpe_conv_spe_2d_validate (params)) != RPE_OK)
    return st;
  if (z == NULL || qbar == NULL || kbar == NULL || n1 == 0 || n2 == 0 || r == 0
      || (unsigned) path > RPE_CONV_SPE_PATH_FFT)
    return RPE_ERROR_INVALID_ARGUMENT;
  if ((st = rpe_conv_spe_2d_noise_size (params, n1, n2, r, &zsize)) != RPE_OK
      || (st = noise_dims (params, n1, n2, &z1, &z2)) != RPE_OK)
    return st;
  if (!rpe_size_mul (n1, n2, &n))
    return RPE_ERROR_OVERFLOW;
  hd = params->n_heads * params->n_features;
  if ((st = rpe_size_bytes (&count, sizeof (float), n, hd, r, 1)) != RPE_OK)
    return st;
  l1 = params->kernel;
  l2 = params->kernel_cols;
  taps = l1 * l2;
  plane = z1 * z2;
  s = rpe_spe_code_scale (params->n_features, r);
  if (path == RPE_CONV_SPE_PATH_AUTO)
    path = rpe_conv_spe_2d_choose_path (n1, n2, l1, l2);

  if (path == RPE_CONV_SPE_PATH_FFT)
    {
      if ((st = fft2_init (&f, n1 + l1 - 1, n2 + l2 - 1)) != RPE_OK)
        return st;
      have_fft = true;
    }

  for (size_t c = 0; c < hd && st == RPE_OK; c++)
    {
      const float *wq = params->wq + c * taps, *wk = params->wk + c * taps;

      if (rpe_monitor_cancelled (monitor))
        {
          st = RPE_ERROR_CANCELLED;
          break;
        }
      rpe_monitor_progress (monitor, (double) c / (double) hd);
      if (path == RPE_CONV_SPE_PATH_FFT)
        {
          filter_spectrum (&f, wq, l1, l2, f.wq);
          filter_spectrum (&f, wk, l1, l2, f.wk);
        }
      for (size_t ri = 0; ri < r; ri++)
        {
          /* the noise plane of (r, c), from row L1 and column L2 on */
          const float *zp = z + (ri * hd + c) * plane;
          float *qd = qbar + c * r + ri, *kd = kbar + c * r + ri;
          size_t stride = hd * r;

          if (path == RPE_CONV_SPE_PATH_FFT)
            {
              memset (f.real, 0, f.m1 * f.m2 * sizeof (float));
              for (size_t u = 0; u < n1 + l1 - 1; u++)
                memcpy (f.real + u * f.m2, zp + (l1 + u) * z2 + l2, (n2 + l2 - 1) * sizeof (float));
              fft2_forward (&f, f.spec);
              correlate_out (&f, f.wq, n1, n2, s, qd, stride);
              correlate_out (&f, f.wk, n1, n2, s, kd, stride);
            }
          else
            {
              for (size_t i = 0; i < n1; i++)
                for (size_t j = 0; j < n2; j++)
                  {
                    double aq = 0, ak = 0;

                    for (size_t a = 0; a < l1; a++)
                      {
                        const float *zrow = zp + (i + l1 + a) * z2 + j + l2;
                        const float *wqr = wq + a * l2, *wkr = wk + a * l2;

                        for (size_t b = 0; b < l2; b++)
                          {
                            aq += (double) wqr[b] * zrow[b];
                            ak += (double) wkr[b] * zrow[b];
                          }
                      }
                    qd[(i * n2 + j) * stride] = (float) (s * aq);
                    kd[(i * n2 + j) * stride] = (float) (s * ak);
                  }
            }
        }
    }
  if (st == RPE_OK)
    rpe_monitor_progress (monitor, 1.0);
  if (have_fft)
    fft2_clear (&f);
  return st;
}

RpeStatus
rpe_conv_spe_2d_gate_codes (const RpeSpeParams *params,
                            size_t              n1,
                            size_t              n2,
                            size_t              r,
                            const float        *eps,
                            float              *qbar,
                            float              *kbar)
{
  RpeSpeParams v;
  size_t n;
  RpeStatus st;

  if ((st = rpe_conv_spe_2d_validate (params)) != RPE_OK)
    return st;
  if (!rpe_size_mul (n1, n2, &n))
    return RPE_ERROR_OVERFLOW;
  v = flat_view (params);
  return rpe_spe_gate_codes (&v, n, r, eps, qbar, kbar);
}

/* ---- templates -------------------------------------------------------- */

RpeStatus
rpe_conv_spe_2d_template_lags (const RpeSpeParams *params,
                               size_t              h,
                               size_t              d,
                               size_t              n1,
                               size_t              n2,
                               bool                gated,
                               float              *out)
{
  size_t l1, l2, w1, w2, cells, c;
  const float *wq, *wk;
  double g = 0;
  RpeStatus st;

  if ((st = rpe_conv_spe_2d_validate (params)) != RPE_OK)
    return st;
  if (out == NULL || n1 == 0 || n2 == 0 || h >= params->n_heads || d >= params->n_features)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (n1, 2, &w1) || !rpe_size_mul (n2, 2, &w2))
    return RPE_ERROR_OVERFLOW;
  w1--;
  w2--;
  if ((st = rpe_size_bytes (&cells, sizeof (float), w1, w2, 1, 1)) != RPE_OK)
    return st;
  l1 = params->kernel;
  l2 = params->kernel_cols;
  c = h * params->n_features + d;
  wq = params->wq + c * l1 * l2;
  wk = params->wk + c * l1 * l2;
  if (gated && params->gate != NULL)
    g = params->gate[c];

  for (size_t t = 0; t < w1 * w2; t++)
    out[t] = (float) g;
  /* only |di| < min (L1, N1) and |dj| < min (L2, N2) can be nonzero */
  for (ptrdiff_t di = -(ptrdiff_t) (MIN2 (l1, n1) - 1); di <= (ptrdiff_t) (MIN2 (l1, n1) - 1); di++)
    for (ptrdiff_t dj = -(ptrdiff_t) (MIN2 (l2, n2) - 1); dj <= (ptrdiff_t) (MIN2 (l2, n2) - 1); dj++)
      {
        double acc = 0;

        for (size_t a = 0; a < l1; a++)
          {
            ptrdiff_t a2 = (ptrdiff_t) a + di;

            if (a2 < 0 || a2 >= (ptrdiff_t) l1)
              continue;
            for (size_t b = 0; b < l2; b++)
              {
                ptrdiff_t b2 = (ptrdiff_t) b + dj;

                if (b2 < 0 || b2 >= (ptrdiff_t) l2)
                  continue;
                acc += (double) wq[a * l2 + b] * wk[(size_t) a2 * l2 + (size_t) b2];
              }
          }
        out[(size_t) (di + (ptrdiff_t) n1 - 1) * w2 + (size_t) (dj + (ptrdiff_t) n2 - 1)]
          = (float) ((1.0 - g) * acc + g);
      }
  return RPE_OK;
}

RpeStatus
rpe_conv_spe_2d_template_rows (const float *lags,
                               size_t       n1,
                               size_t       n2,
                               size_t       m0,
                               size_t       n_rows,
                               float       *out)
{
  size_t n, end, w2;

  if (lags == NULL || out == NULL || n1 == 0 || n2 == 0 || !rpe_size_mul (n1, n2, &n)
      || !rpe_size_add (m0, n_rows, &end) || end > n)
    return RPE_ERROR_INVALID_ARGUMENT;
  w2 = 2 * n2 - 1;
  for (size_t t = 0; t < n_rows; t++)
    {
      size_t p = m0 + t, i = p / n2, j = p % n2;
      float *row = out + t * n;

      for (size_t i2 = 0; i2 < n1; i2++)
        {
          const float *lrow = lags + (i - i2 + n1 - 1) * w2 + (j + n2 - 1);

          /* dj = j - j2: lrow[-j2] */
          for (size_t j2 = 0; j2 < n2; j2++)
            row[i2 * n2 + j2] = lrow[-(ptrdiff_t) j2];
        }
    }
  return RPE_OK;
}

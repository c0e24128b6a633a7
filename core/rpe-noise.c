/* rpe-noise.c: noise schemes (see rpe-noise.h). */
#include "config.h"

#include <math.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_qrng.h>

#include "rpe-alloc.h"
#include "rpe-noise.h"
#include "rpe-rng.h"

/* the digital shifts of the Sobol' scheme: a stream of their own */
#define NOISE_STREAM_SOBOL 0x50b01u
#define SOBOL_BITS 30

static const char *const names[RPE_NOISE_N_SCHEMES] = { "iid", "orthogonal", "antithetic", "sobol" };

const char *
rpe_noise_scheme_to_string (RpeNoiseScheme scheme)
{
  return (unsigned) scheme < RPE_NOISE_N_SCHEMES ? names[scheme] : NULL;
}

bool
rpe_noise_scheme_from_string (const char     *text,
                              RpeNoiseScheme *out)
{
  if (text == NULL)
    return false;
  for (unsigned i = 0; i < RPE_NOISE_N_SCHEMES; i++)
    if (strcmp (text, names[i]) == 0)
      {
        *out = (RpeNoiseScheme) i;
        return true;
      }
  return false;
}

/* x -= its projection on the k orthonormal vectors before it, twice ("twice is enough");
 * returns |x| afterwards. */
static double
project_out (double *v, size_t k, size_t len, size_t vs, size_t es, double *x)
{
  double nrm = 0;

  for (int pass = 0; pass < 2; pass++)
    for (size_t q = 0; q < k; q++)
      {
        const double *y = v + q * vs;
        double dot = 0;
        for (size_t j = 0; j < len; j++)
          dot += x[j * es] * y[j * es];
        for (size_t j = 0; j < len; j++)
          x[j * es] -= dot * y[j * es];
      }
  for (size_t j = 0; j < len; j++)
    nrm += x[j * es] * x[j * es];
  return sqrt (nrm);
}

/* Modified Gram-Schmidt on m <= len vectors of length len at v[i * vs + j * es].  A vector
 * that collapses (probability 0 for a Gaussian draw) is replaced by the first coordinate
 * vector that keeps a component outside the span (one exists since m <= len). */
static void
orthonormalise (double *v, size_t m, size_t len, size_t vs, size_t es)
{
  for (size_t i = 0; i < m; i++)
    {
      double *x = v + i * vs;
      double nrm = project_out (v, i, len, vs, es, x);

      for (size_t e = 0; !(nrm > 1e-12) && e < len; e++)
        {
          for (size_t j = 0; j < len; j++)
            x[j * es] = j == e ? 1.0 : 0.0;
          nrm = project_out (v, i, len, vs, es, x);
        }
      for (size_t j = 0; j < len; j++)
        x[j * es] /= nrm;
    }
}

RpeStatus
rpe_noise_transform (RpeNoiseScheme scheme,
                     uint64_t       seed,
                     uint64_t       cell,
                     size_t         p,
                     size_t         r,
                     double        *block)
{
  if (block == NULL || p == 0 || r == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  switch (scheme)
    {
    case RPE_NOISE_IID:
      return RPE_OK;

    case RPE_NOISE_ANTITHETIC:
      for (size_t i = 0; i < p; i++)
        for (size_t k = 1; k < r; k += 2)
          block[i * r + k] = -block[i * r + k - 1];
      return RPE_OK;

    case RPE_NOISE_ORTHOGONAL:
      if (r >= p)
        {
          /* p orthonormal rows of length R, times sqrt(R): Z Z^T = R I */
          double s = sqrt ((double) r);
          orthonormalise (block, p, r, r, 1);
          for (size_t i = 0; i < p * r; i++)
            block[i] *= s;
        }
      else
        {
          /* R orthonormal columns of length p, times sqrt(p): E[z z^T] = I */
          double s = sqrt ((double) p);
          orthonormalise (block, r, p, 1, r);
          for (size_t i = 0; i < p * r; i++)
            block[i] *= s;
        }
      return RPE_OK;

    case RPE_NOISE_SOBOL:
      {
        size_t d = p < RPE_NOISE_SOBOL_MAX_DIM ? p : RPE_NOISE_SOBOL_MAX_DIM;
        gsl_qrng *q = gsl_qrng_alloc (gsl_qrng_sobol, (unsigned) d);
        uint32_t shift[RPE_NOISE_SOBOL_MAX_DIM];
        double x[RPE_NOISE_SOBOL_MAX_DIM];
        const double scale = (double) (1u << SOBOL_BITS);

        if (q == NULL)
          return RPE_ERROR_SYSTEM_MEMORY;
        for (size_t i = 0; i < d; i++)
          shift[i] = (uint32_t) (rpe_rng_u64 (seed, NOISE_STREAM_SOBOL, cell * RPE_NOISE_SOBOL_MAX_DIM + i)
                                 & ((1u << SOBOL_BITS) - 1));
        for (size_t k = 0; k < r; k++)
          {
            /* GSL's generator starts at point 1: point 0 is the origin */
            if (k == 0)
              memset (x, 0, sizeof x);
            else if (gsl_qrng_get (q, x) != 0)
              {
                gsl_qrng_free (q);
                return RPE_ERROR_INTERNAL;
              }
            for (size_t i = 0; i < d; i++)
              {
                /* GSL's Sobol' points are multiples of 2^-30: exact in integers */
                uint32_t v = (uint32_t) (x[i] * scale);
                double u = ((double) (v ^ shift[i]) + 0.5) / scale;
                block[i * r + k] = gsl_cdf_ugaussian_Pinv (u);
              }
          }
        gsl_qrng_free (q);
        return RPE_OK;
      }

    default:
      return RPE_ERROR_INVALID_ARGUMENT;
    }
}

RpeStatus
rpe_noise_apply_cell (RpeNoiseScheme      scheme,
                      const RpeSpeParams *params,
                      size_t              n,
                      size_t              r,
                      uint64_t            seed,
                      size_t              cell,
                      float              *z_cell,
                      size_t              stride,
                      float              *eps_cell)
{
  size_t p0, p, count;
  double *w;
  RpeStatus st;

  if (params == NULL || z_cell == NULL || n == 0 || r == 0 || (unsigned) scheme >= RPE_NOISE_N_SCHEMES)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (scheme == RPE_NOISE_IID)
    return RPE_OK;
  if (params->method == RPE_SPE_CONV && params->kernel_cols != 0)
    return RPE_ERROR_UNSUPPORTED;
  if (params->method == RPE_SPE_SINE)
    p0 = 2 * params->n_sines;
  else if (!rpe_size_add (n, params->kernel - 1, &p0))
    return RPE_ERROR_OVERFLOW;
  p = p0 + (eps_cell != NULL ? 1 : 0);
  if ((st = rpe_size_bytes (&count, 1, p, r, 1, 1)) != RPE_OK)
    return st;
  if ((w = rpe_alloc (count, sizeof (double), &st)) == NULL)
    return st;

  /* gather: row i = coordinate i over the R realisations */
  for (size_t k = 0; k < r; k++)
    {
      for (size_t i = 0; i < p0; i++)
        w[i * r + k] = params->method == RPE_SPE_SINE ? z_cell[i * r + k]
                                                      : z_cell[k * stride + params->kernel + i];
      if (eps_cell != NULL)
        w[p0 * r + k] = eps_cell[k];
    }
  st = rpe_noise_transform (scheme, seed, cell, p, r, w);
  if (st == RPE_OK)
    for (size_t k = 0; k < r; k++)
      {
        for (size_t i = 0; i < p0; i++)
          {
            float v = (float) w[i * r + k];
            if (params->method == RPE_SPE_SINE)
              z_cell[i * r + k] = v;
            else
              z_cell[k * stride + params->kernel + i] = v;
          }
        if (eps_cell != NULL)
          eps_cell[k] = (float) w[p0 * r + k];
      }
  rpe_free (w);
  return st;
}

RpeStatus
rpe_noise_apply (RpeNoiseScheme      scheme,
                 const RpeSpeParams *params,
                 size_t              n,
                 size_t              r,
                 uint64_t            seed,
                 float              *z,
                 float              *eps)
{
  size_t hd, zlen = 0, total;
  RpeStatus st;

  if (params == NULL || z == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  if ((st = rpe_spe_noise_size (params, n, r, &total)) != RPE_OK)
    return st;
  if (scheme == RPE_NOISE_IID)
    return (unsigned) scheme < RPE_NOISE_N_SCHEMES ? RPE_OK : RPE_ERROR_INVALID_ARGUMENT;
  hd = params->n_heads * params->n_features;
  if (params->method == RPE_SPE_CONV)
    zlen = n + 4 * params->kernel;   /* fits: rpe_spe_noise_size checked R * H*D * (N+4L) */
  for (size_t c = 0; c < hd; c++)
    {
      float *zc = params->method == RPE_SPE_SINE ? z + c * 2 * params->n_sines * r : z + c * zlen;

      st = rpe_noise_apply_cell (scheme, params, n, r, seed, c, zc, hd * zlen,
                                 eps != NULL && params->gate != NULL ? eps + c * r : NULL);
      if (st != RPE_OK)
        return st;
    }
  return RPE_OK;
}

RpeStatus
rpe_noise_fill (RpeNoiseScheme      scheme,
                const RpeSpeParams *params,
                size_t              n,
                size_t              r,
                uint64_t            seed,
                float              *z,
                float              *eps)
{
  RpeStatus st;

  if ((unsigned) scheme >= RPE_NOISE_N_SCHEMES)
    return RPE_ERROR_INVALID_ARGUMENT;
  if ((st = rpe_spe_noise_fill (params, n, r, seed, z)) != RPE_OK)
    return st;
  if (eps != NULL && params->gate != NULL && (st = rpe_spe_gate_noise_fill (params, r, seed, eps)) != RPE_OK)
    return st;
  return rpe_noise_apply (scheme, params, n, r, seed, z, eps);
}

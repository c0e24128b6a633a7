/* rpe-lrpe.c: Linearized Relative Positional Encoding (docs/math.md, section 7).
 *
 * Qin et al., "Linearized Relative Positional Encoding", TMLR 2023:
 * W_s = P^H Lambda(s) P (Propositions 3.3-3.5) applied as x_s -> Lambda(s) P x_s
 * (the paper's eq. 75 "implementation trick").  See rpe-lrpe.h for the
 * conventions (complex planes, theta tables, permutation directions).
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <fftw3.h>
#include <cblas.h>

#include "rpe-alloc.h"
#include "rpe-fft.h"
#include "rpe-lrpe.h"
#include "rpe-rng.h"

/* rpe_rng_u64 index bases, so the two permutations never share draws. */
#define P_PERM_INDEX_BASE      ((uint64_t) 1 << 40)
#define LAMBDA_PERM_INDEX_BASE ((uint64_t) 1 << 41)

/* Rows between two looks at the cancel flag. */
#define CHECK_EVERY 64

struct _RpeLrpe
{
  size_t         dim;       /* D */
  size_t         pd;        /* d': components of P x (D//2 + 1 for FOURIER, else D) */
  size_t         length;    /* N for theta types B, C */
  RpeLrpeP       p;
  RpeLrpeLambda  lambda;
  size_t         e;         /* dims Lambda acts on */
  size_t         n_theta;
  bool           complex_out;

  double        *theta;     /* n_theta */
  double        *v;         /* D, the effective v (HOUSEHOLDER) */
  uint32_t      *p_perm;    /* D (PERMUTATION, ODD_EVEN): out[j] = x[p_perm[j]] */
  uint32_t      *lambda_perm;  /* d' (Lambda PERMUTATION): pi */
  /* cycle decomposition of pi: j sits at cyc_order[cyc_start[j] + cyc_local[j]],
   * and pi^s (j) = cyc_order[cyc_start[j] + (cyc_local[j] + s) mod cyc_len[j]]. */
  uint32_t      *cyc_order;
  uint32_t      *cyc_start;
  uint32_t      *cyc_local;
  uint32_t      *cyc_len;
  double        *dct_c;     /* D: cos (pi k / (2D)) * c_k */
  double        *dct_s;     /* D: sin (pi k / (2D)) * c_k */
  RpeFftPlan    *plan;      /* length D (FOURIER, DCT) */
};

/* Per-call scratch (the object stays read-only, so calls may run concurrently). */
typedef struct
{
  double        *re, *im;     /* P x */
  double        *ore, *oim;   /* Lambda(s) P x */
  double        *cs, *sn;     /* cos / sin (s a) */
  uint32_t      *gidx;        /* pi^s */
  float         *fin;         /* FFT input, D */
  fftwf_complex *fout;        /* FFT output, D/2 + 1 */
} Work;

size_t
rpe_lrpe_p_dims (RpeLrpeP p,
                 size_t   dim)
{
  return p == RPE_LRPE_P_FOURIER ? dim / 2 + 1 : dim;
}

size_t
rpe_lrpe_lambda_dims (RpeLrpeLambda lambda,
                      size_t        dim)
{
  size_t e;

  switch (lambda)
    {
    case RPE_LRPE_LAMBDA_ROTATION:
      return dim - dim % 2;
    case RPE_LRPE_LAMBDA_COMPLEX_EXP:
      return dim;
    case RPE_LRPE_LAMBDA_MIXED:
      e = dim / 2;
      if (e % 2 == 1)
        e++;
      return e <= dim ? e : dim - dim % 2;
    case RPE_LRPE_LAMBDA_PERMUTATION:
      return dim;
    default:
      return 0;
    }
}

size_t
rpe_lrpe_theta_count (RpeLrpeLambda lambda,
                      size_t        dim)
{
  size_t e = rpe_lrpe_lambda_dims (lambda, dim);

  switch (lambda)
    {
    case RPE_LRPE_LAMBDA_ROTATION:
    case RPE_LRPE_LAMBDA_MIXED:
      return e / 2;
    case RPE_LRPE_LAMBDA_COMPLEX_EXP:
      return e;
    case RPE_LRPE_LAMBDA_PERMUTATION:
    default:
      return 0;
    }
}

static void
draw_permutation (uint64_t  seed,
                  uint64_t  base,
                  uint32_t *perm,
                  size_t    d)
{
  for (size_t j = 0; j < d; j++)
    perm[j] = (uint32_t) j;
  /* Fisher-Yates; the modulo bias of a 64-bit draw over <= 2^32 values is < 2^-32. */
  for (size_t i = d; i-- > 1;)
    {
      size_t r = (size_t) (rpe_rng_u64 (seed, RPE_STREAM_LRPE, base + i) % (uint64_t) (i + 1));
      uint32_t t = perm[i];

      perm[i] = perm[r];
      perm[r] = t;
    }
}

static RpeStatus
check_permutation (const uint32_t *perm,
                   size_t          d)
{
  RpeStatus st;
  unsigned char *seen = rpe_alloc0 (d, 1, &st);

  if (seen == NULL)
    return st;
  st = RPE_OK;
  for (size_t j = 0; j < d && st == RPE_OK; j++)
    {
      if (perm[j] >= d || seen[perm[j]])
        st = RPE_ERROR_INVALID_ARGUMENT;
      else
        seen[perm[j]] = 1;
    }
  rpe_free (seen);
  return st;
}

static void
build_cycles (RpeLrpe *l)
{
  size_t d = l->pd, next = 0;

  for (size_t j = 0; j < d; j++)
    l->cyc_len[j] = 0;
  for (size_t j0 = 0; j0 < d; j0++)
    {
      size_t start = next, len = 0, j = j0;

      if (l->cyc_len[j0] != 0)
        continue;
      do
        {
          l->cyc_order[next++] = (uint32_t) j;
          l->cyc_start[j] = (uint32_t) start;
          l->cyc_local[j] = (uint32_t) len++;
          l->cyc_len[j] = 1;   /* mark visited; fixed below */
          j = l->lambda_perm[j];
        }
      while (j != j0);
      for (size_t i = start; i < next; i++)
        l->cyc_len[l->cyc_order[i]] = (uint32_t) len;
    }
}

static void
fill_theta (RpeLrpe      *l,
            RpeLrpeTheta  kind)
{
  double e = (double) l->e, n = (double) l->length;
  bool per_dim = l->lambda == RPE_LRPE_LAMBDA_COMPLEX_EXP;

  for (size_t k = 0; k < l->n_theta; k++)
    {
      double kk = (double) k;

      switch (kind)
        {
        case RPE_LRPE_THETA_A:
          /* rotation: 10000^(-2k/e), k < e/2; complex: 10000^(-2j/e), j < e */
          l->theta[k] = pow (10000.0, -2.0 * kk / e);
          break;
        case RPE_LRPE_THETA_B:
          l->theta[k] = per_dim ? (M_PI / 2) / (n * e) * (kk + 1)
                                : (M_PI / 2) / (n * (e / 2)) * (kk + 1);
          break;
        case RPE_LRPE_THETA_C:
          l->theta[k] = (M_PI / 2) / (n * (kk + 1));
          break;
        case RPE_LRPE_THETA_CUSTOM:
        default:
          break;
        }
    }
}

void
rpe_lrpe_free (RpeLrpe *lrpe)
{
  if (lrpe == NULL)
    return;
  rpe_free (lrpe->theta);
  rpe_free (lrpe->v);
  rpe_free (lrpe->p_perm);
  rpe_free (lrpe->lambda_perm);
  rpe_free (lrpe->cyc_order);
  rpe_free (lrpe->cyc_start);
  rpe_free (lrpe->cyc_local);
  rpe_free (lrpe->cyc_len);
  rpe_free (lrpe->dct_c);
  rpe_free (lrpe->dct_s);
  rpe_fft_plan_free (lrpe->plan);
  rpe_free (lrpe);
}

RpeLrpe *
rpe_lrpe_new (const RpeLrpeConfig *config,
              RpeStatus           *status)
{
  RpeLrpe *l = NULL;
  RpeStatus st = RPE_OK;
  size_t d;

  if (config == NULL || config->dim == 0 || config->length == 0
      || config->dim > UINT32_MAX
      || (unsigned) config->p > RPE_LRPE_P_DCT
      || (unsigned) config->lambda > RPE_LRPE_LAMBDA_PERMUTATION
      || (unsigned) config->theta_kind > RPE_LRPE_THETA_CUSTOM)
    {
      st = RPE_ERROR_INVALID_ARGUMENT;
      goto out;
    }
  d = config->dim;

  l = rpe_alloc0 (1, sizeof *l, &st);
  if (l == NULL)
    goto out;
  l->dim = d;
  l->pd = rpe_lrpe_p_dims (config->p, d);
  l->length = config->length;
  l->p = config->p;
  l->lambda = config->lambda;
  l->e = rpe_lrpe_lambda_dims (config->lambda, l->pd);
  l->n_theta = rpe_lrpe_theta_count (config->lambda, l->pd);
  l->complex_out = config->p == RPE_LRPE_P_FOURIER
                   || config->lambda == RPE_LRPE_LAMBDA_COMPLEX_EXP;

  /* theta */
  if (l->n_theta > 0)
    {
      if (config->theta_kind == RPE_LRPE_THETA_CUSTOM)
        {
          if (config->theta == NULL || config->n_theta != l->n_theta)
            {
              st = RPE_ERROR_INVALID_ARGUMENT;
              goto out;
            }
          if (!rpe_all_finite_f (config->theta, l->n_theta))
            {
              st = RPE_ERROR_NOT_FINITE;
              goto out;
            }
        }
      if ((l->theta = rpe_alloc (l->n_theta, sizeof (double), &st)) == NULL)
        goto out;
      if (config->theta_kind == RPE_LRPE_THETA_CUSTOM)
        for (size_t k = 0; k < l->n_theta; k++)
          l->theta[k] = config->theta[k];
      else
        fill_theta (l, config->theta_kind);
    }

  /* P */
  switch (config->p)
    {
    case RPE_LRPE_P_HOUSEHOLDER:
      {
        double norm2 = 0, inv;

        if ((l->v = rpe_alloc (d, sizeof (double), &st)) == NULL)
          goto out;
        if (config->householder_v != NULL)
          {
            if (!rpe_all_finite_f (config->householder_v, d))
              {
                st = RPE_ERROR_NOT_FINITE;
                goto out;
              }
            for (size_t j = 0; j < d; j++)
              l->v[j] = config->householder_v[j];
          }
        else
          {
            /* v ~ N(0, I), then normalised (the reference's fixed v) */
            for (size_t j = 0; j < d; j++)
              {
                float z;

                rpe_rng_normal (config->seed, RPE_STREAM_LRPE, j, &z, 1);
                l->v[j] = z;
              }
          }
        for (size_t j = 0; j < d; j++)
          norm2 += l->v[j] * l->v[j];
        if (!(norm2 > 0) || !isfinite (norm2))
          {
            /* a zero v has no direction to reflect in */
            st = RPE_ERROR_DEGENERATE;
            goto out;
          }
        /* The reference normalises a drawn v once (v / |v|) and then uses the
         * stored v as is; a learned v is normalised at every use as
         * v / (|v| + 1e-6). */
        if (config->householder_v == NULL)
          inv = 1.0 / sqrt (norm2);
        else if (config->householder_learned)
          inv = 1.0 / (sqrt (norm2) + RPE_LRPE_HOUSEHOLDER_EPS);
        else
          inv = 1.0;
        for (size_t j = 0; j < d; j++)
          l->v[j] *= inv;
      }
      break;
    case RPE_LRPE_P_PERMUTATION:
      if ((l->p_perm = rpe_alloc (d, sizeof (uint32_t), &st)) == NULL)
        goto out;
      if (config->p_perm != NULL)
        {
          if ((st = check_permutation (config->p_perm, d)) != RPE_OK)
            goto out;
          memcpy (l->p_perm, config->p_perm, d * sizeof (uint32_t));
        }
      else
        draw_permutation (config->seed, P_PERM_INDEX_BASE, l->p_perm, d);
      break;
    case RPE_LRPE_P_ODD_EVEN:
      {
        size_t half = d - d / 2;   /* ceil (D / 2) */

        if ((l->p_perm = rpe_alloc (d, sizeof (uint32_t), &st)) == NULL)
          goto out;
        for (size_t j = 0; j < d; j++)
          l->p_perm[j] = (uint32_t) (j % 2 == 0 ? j / 2 : half + j / 2);
      }
      break;
    case RPE_LRPE_P_FOURIER:
    case RPE_LRPE_P_DCT:
      if ((l->plan = rpe_fft_plan_new (d, RPE_FFT_ESTIMATE, &st)) == NULL)
        goto out;
      if (config->p == RPE_LRPE_P_DCT)
        {
          if ((l->dct_c = rpe_alloc (d, sizeof (double), &st)) == NULL
              || (l->dct_s = rpe_alloc (d, sizeof (double), &st)) == NULL)
            goto out;
          for (size_t k = 0; k < d; k++)
            {
              double ck = sqrt ((k == 0 ? 1.0 : 2.0) / (double) d);
              double a = M_PI * (double) k / (2.0 * (double) d);

              l->dct_c[k] = ck * cos (a);
              l->dct_s[k] = ck * sin (a);
            }
        }
      break;
    case RPE_LRPE_P_IDENTITY:
    default:
      break;
    }

  /* Lambda permutation: of the d' components of P x */
  if (config->lambda == RPE_LRPE_LAMBDA_PERMUTATION)
    {
      size_t pd = l->pd;

      if ((l->lambda_perm = rpe_alloc (pd, sizeof (uint32_t), &st)) == NULL
          || (l->cyc_order = rpe_alloc (pd, sizeof (uint32_t), &st)) == NULL
          || (l->cyc_start = rpe_alloc (pd, sizeof (uint32_t), &st)) == NULL
          || (l->cyc_local = rpe_alloc (pd, sizeof (uint32_t), &st)) == NULL
          || (l->cyc_len = rpe_alloc (pd, sizeof (uint32_t), &st)) == NULL)
        goto out;
      if (config->lambda_perm != NULL)
        {
          if ((st = check_permutation (config->lambda_perm, pd)) != RPE_OK)
            goto out;
          memcpy (l->lambda_perm, config->lambda_perm, pd * sizeof (uint32_t));
        }
      else
        draw_permutation (config->seed, LAMBDA_PERM_INDEX_BASE, l->lambda_perm, pd);
      build_cycles (l);
    }

out:
  if (st != RPE_OK)
    {
      rpe_lrpe_free (l);
      l = NULL;
    }
  if (status != NULL)
    *status = st;
  return l;
}

size_t
rpe_lrpe_dim (const RpeLrpe *lrpe)
{
  return lrpe->dim;
}

size_t
rpe_lrpe_out_width (const RpeLrpe *lrpe)
{
  return lrpe->complex_out ? 2 * lrpe->pd : lrpe->dim;
}

size_t
rpe_lrpe_components (const RpeLrpe *lrpe)
{
  return lrpe->pd;
}

bool
rpe_lrpe_is_complex (const RpeLrpe *lrpe)
{
  return lrpe->complex_out;
}

size_t
rpe_lrpe_n_theta (const RpeLrpe *lrpe)
{
  return lrpe->n_theta;
}

RpeStatus
rpe_lrpe_get_theta (const RpeLrpe *lrpe,
                    double        *theta)
{
  if (lrpe == NULL || theta == NULL || lrpe->theta == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  memcpy (theta, lrpe->theta, lrpe->n_theta * sizeof (double));
  return RPE_OK;
}

RpeStatus
rpe_lrpe_get_householder_v (const RpeLrpe *lrpe,
                            double        *v)
{
  if (lrpe == NULL || v == NULL || lrpe->v == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  memcpy (v, lrpe->v, lrpe->dim * sizeof (double));
  return RPE_OK;
}

RpeStatus
rpe_lrpe_get_p_perm (const RpeLrpe *lrpe,
                     uint32_t      *perm)
{
  if (lrpe == NULL || perm == NULL || lrpe->p_perm == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  memcpy (perm, lrpe->p_perm, lrpe->dim * sizeof (uint32_t));
  return RPE_OK;
}

RpeStatus
rpe_lrpe_get_lambda_perm (const RpeLrpe *lrpe,
                          uint32_t      *perm)
{
  if (lrpe == NULL || perm == NULL || lrpe->lambda_perm == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  memcpy (perm, lrpe->lambda_perm, lrpe->pd * sizeof (uint32_t));
  return RPE_OK;
}

/* ---- per-vector transforms ------------------------------------------- */

static void
work_clear (Work *w)
{
  rpe_free (w->re);
  rpe_free (w->im);
  rpe_free (w->ore);
  rpe_free (w->oim);
  rpe_free (w->cs);
  rpe_free (w->sn);
  rpe_free (w->gidx);
  rpe_free (w->fin);
  rpe_free (w->fout);
  memset (w, 0, sizeof *w);
}

static RpeStatus
work_init (Work          *w,
           const RpeLrpe *l)
{
  RpeStatus st = RPE_OK;
  size_t d = l->dim;
  size_t n_ang = l->n_theta > 0 ? l->n_theta : 1;

  memset (w, 0, sizeof *w);
  if ((w->re = rpe_alloc0 (d, sizeof (double), &st)) == NULL
      || (w->im = rpe_alloc0 (d, sizeof (double), &st)) == NULL
      || (w->ore = rpe_alloc0 (d, sizeof (double), &st)) == NULL
      || (w->oim = rpe_alloc0 (d, sizeof (double), &st)) == NULL
      || (w->cs = rpe_alloc0 (n_ang, sizeof (double), &st)) == NULL
      || (w->sn = rpe_alloc0 (n_ang, sizeof (double), &st)) == NULL
      || (w->gidx = rpe_alloc0 (d, sizeof (uint32_t), &st)) == NULL
      || (w->fin = rpe_alloc0 (d, sizeof (float), &st)) == NULL
      || (w->fout = rpe_alloc0 (d / 2 + 1, sizeof (fftwf_complex), &st)) == NULL)
    {
      work_clear (w);
      return st;
    }
  return RPE_OK;
}

/* w->re (, w->im) = P x.  Returns whether the result is complex. */
static bool
apply_p (const RpeLrpe *l,
         Work          *w,
         const float   *x)
{
  size_t d = l->dim;

  switch (l->p)
    {
    case RPE_LRPE_P_HOUSEHOLDER:
      {
        double dot = 0;

        for (size_t j = 0; j < d; j++)
          dot += l->v[j] * x[j];
        for (size_t j = 0; j < d; j++)
          w->re[j] = x[j] - 2.0 * dot * l->v[j];
      }
      return false;
    case RPE_LRPE_P_PERMUTATION:
    case RPE_LRPE_P_ODD_EVEN:
      for (size_t j = 0; j < d; j++)
        w->re[j] = x[l->p_perm[j]];
      return false;
    case RPE_LRPE_P_FOURIER:
      {
        double scale = 1.0 / sqrt ((double) d);

        memcpy (w->fin, x, d * sizeof (float));
        rpe_fft_forward (l->plan, w->fin, w->fout);
        /* rfft (x, norm = "ortho"): the d' = D/2 + 1 first components */
        for (size_t k = 0; k <= d / 2; k++)
          {
            w->re[k] = w->fout[k][0] * scale;
            w->im[k] = w->fout[k][1] * scale;
          }
      }
      return true;
    case RPE_LRPE_P_DCT:
      {
        /* Makhoul (1980): v_n = x_{2n}, v_{D-1-n} = x_{2n+1}; V = FFT (v);
         * y_k = c_k Re (e^{-i pi k / (2D)} V_k). */
        for (size_t n = 0; 2 * n < d; n++)
          w->fin[n] = x[2 * n];
        for (size_t n = 0; 2 * n + 1 < d; n++)
          w->fin[d - 1 - n] = x[2 * n + 1];
        rpe_fft_forward (l->plan, w->fin, w->fout);
        for (size_t k = 0; k < d; k++)
          {
            double vr, vi;

            if (k <= d / 2)
              {
                vr = w->fout[k][0];
                vi = w->fout[k][1];
              }
            else
              {
                vr = w->fout[d - k][0];
                vi = -w->fout[d - k][1];
              }
            w->re[k] = vr * l->dct_c[k] + vi * l->dct_s[k];
          }
      }
      return false;
    case RPE_LRPE_P_IDENTITY:
    default:
      for (size_t j = 0; j < d; j++)
        w->re[j] = x[j];
      return false;
    }
}

/* Set up Lambda(s): the cos/sin table or the gather index pi^s. */
static void
lambda_prepare (const RpeLrpe *l,
                Work          *w,
                int64_t        s)
{
  if (l->lambda == RPE_LRPE_LAMBDA_PERMUTATION)
    {
      for (size_t j = 0; j < l->pd; j++)
        {
          int64_t len = l->cyc_len[j];
          int64_t r = ((int64_t) l->cyc_local[j] + s % len) % len;

          if (r < 0)
            r += len;
          w->gidx[j] = l->cyc_order[l->cyc_start[j] + (size_t) r];
        }
    }
  else
    {
      for (size_t k = 0; k < l->n_theta; k++)
        {
          double a = (double) s * l->theta[k];

          w->cs[k] = cos (a);
          w->sn[k] = sin (a);
        }
    }
}

/* (w->ore, w->oim) = Lambda(s) (w->re, w->im); returns whether complex. */
static bool
lambda_apply (const RpeLrpe *l,
              Work          *w,
              bool           cplx)
{
  size_t d = l->pd, e = l->e;

  switch (l->lambda)
    {
    case RPE_LRPE_LAMBDA_ROTATION:
    case RPE_LRPE_LAMBDA_MIXED:
      /* x cos + x_half sin, x_half = (-x1, x0, ...): the 2x2 block [c -s; s c];
       * a real matrix, so it acts on both planes alike. */
      for (size_t k = 0; k < e / 2; k++)
        {
          double c = w->cs[k], s = w->sn[k];
          double x0 = w->re[2 * k], x1 = w->re[2 * k + 1];

          w->ore[2 * k] = x0 * c - x1 * s;
          w->ore[2 * k + 1] = x1 * c + x0 * s;
          if (cplx)
            {
              x0 = w->im[2 * k];
              x1 = w->im[2 * k + 1];
              w->oim[2 * k] = x0 * c - x1 * s;
              w->oim[2 * k + 1] = x1 * c + x0 * s;
            }
        }
      for (size_t j = e; j < d; j++)
        {
          w->ore[j] = w->re[j];
          if (cplx)
            w->oim[j] = w->im[j];
        }
      return cplx;
    case RPE_LRPE_LAMBDA_COMPLEX_EXP:
      for (size_t j = 0; j < e; j++)
        {
          double c = w->cs[j], s = w->sn[j];
          double xr = w->re[j], xi = cplx ? w->im[j] : 0.0;

          w->ore[j] = xr * c - xi * s;
          w->oim[j] = xr * s + xi * c;
        }
      for (size_t j = e; j < d; j++)
        {
          w->ore[j] = w->re[j];
          w->oim[j] = cplx ? w->im[j] : 0.0;
        }
      return true;
    case RPE_LRPE_LAMBDA_PERMUTATION:
    default:
      for (size_t j = 0; j < d; j++)
        {
          w->ore[j] = w->re[w->gidx[j]];
          if (cplx)
            w->oim[j] = w->im[w->gidx[j]];
        }
      return cplx;
    }
}

/* Lambda(s) P x into a row of width W (doubles); Lambda must be prepared. */
static void
encode_row_d (const RpeLrpe *l,
              Work          *w,
              const float   *x,
              double        *out)
{
  size_t d = l->pd;
  bool cplx = lambda_apply (l, w, apply_p (l, w, x));

  memcpy (out, w->ore, d * sizeof (double));
  if (l->complex_out)
    {
      if (cplx)
        memcpy (out + d, w->oim, d * sizeof (double));
      else
        memset (out + d, 0, d * sizeof (double));
    }
}

RpeStatus
rpe_lrpe_encode (const RpeLrpe    *lrpe,
                 size_t            n,
                 size_t            n_heads,
                 int64_t           pos0,
                 const float      *x,
                 float            *out,
                 const RpeMonitor *monitor)
{
  RpeStatus st;
  Work w = { 0 };
  double *row = NULL;
  size_t d, width, count;

  if (lrpe == NULL || x == NULL || out == NULL || n_heads == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (n == 0)
    return RPE_OK;
  if (n - 1 > (uint64_t) INT64_MAX
      || (pos0 > 0 && (uint64_t) (n - 1) > (uint64_t) (INT64_MAX - pos0)))
    return RPE_ERROR_OVERFLOW;
  d = lrpe->dim;
  width = rpe_lrpe_out_width (lrpe);
  if ((st = rpe_size_bytes (&count, 1, n, n_heads, width, 1)) != RPE_OK)
    return st;
  if ((st = work_init (&w, lrpe)) != RPE_OK)
    return st;
  if ((row = rpe_alloc (width, sizeof (double), &st)) == NULL)
    goto out;

  for (size_t i = 0; i < n; i++)
    {
      if (i % CHECK_EVERY == 0)
        {
          if (rpe_monitor_cancelled (monitor))
            {
              st = RPE_ERROR_CANCELLED;
              goto out;
            }
          rpe_monitor_progress (monitor, (double) i / (double) n);
        }
      lambda_prepare (lrpe, &w, pos0 + (int64_t) i);
      for (size_t h = 0; h < n_heads; h++)
        {
          float *o = out + (i * n_heads + h) * width;

          encode_row_d (lrpe, &w, x + (i * n_heads + h) * d, row);
          for (size_t j = 0; j < width; j++)
            o[j] = (float) row[j];
        }
    }
  rpe_monitor_progress (monitor, 1.0);

out:
  rpe_free (row);
  work_clear (&w);
  return st;
}

RpeStatus
rpe_lrpe_template (const RpeLrpe *lrpe,
                   size_t         n_len,
                   const float   *q,
                   const float   *k,
                   float         *out)
{
  RpeStatus st;
  Work w = { 0 };
  float *unit = NULL;
  double *pq = NULL, *pk = NULL;
  size_t d, pd, n_lags;
  bool cq, ck;

  if (lrpe == NULL || out == NULL || n_len == 0 || n_len - 1 > (uint64_t) INT64_MAX / 2)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (n_len, 2, &n_lags))
    return RPE_ERROR_OVERFLOW;
  n_lags -= 1;
  d = lrpe->dim;
  if ((st = work_init (&w, lrpe)) != RPE_OK)
    return st;
  if ((unit = rpe_alloc (d, sizeof (float), &st)) == NULL
      || (pq = rpe_alloc0 (2 * d, sizeof (double), &st)) == NULL
      || (pk = rpe_alloc0 (2 * d, sizeof (double), &st)) == NULL)
    goto out;
  for (size_t j = 0; j < d; j++)
    unit[j] = (float) (1.0 / sqrt ((double) d));

  pd = lrpe->pd;
  /* score (m, n) = (Lambda(m) P q)^H (Lambda(n) P k) = (P q)^H Lambda(n - m) (P k) */
  cq = apply_p (lrpe, &w, q != NULL ? q : unit);
  memcpy (pq, w.re, pd * sizeof (double));
  if (cq)
    memcpy (pq + pd, w.im, pd * sizeof (double));
  ck = apply_p (lrpe, &w, k != NULL ? k : unit);
  memcpy (pk, w.re, pd * sizeof (double));
  if (ck)
    memcpy (pk + pd, w.im, pd * sizeof (double));

  for (size_t i = 0; i < n_lags; i++)
    {
      int64_t tau = (int64_t) i - (int64_t) (n_len - 1);
      double acc = 0;
      bool co;

      memcpy (w.re, pk, pd * sizeof (double));
      memcpy (w.im, pk + pd, pd * sizeof (double));
      lambda_prepare (lrpe, &w, -tau);
      co = lambda_apply (lrpe, &w, ck);
      /* Re (a^H b) = ar . br + ai . bi */
      for (size_t j = 0; j < pd; j++)
        acc += pq[j] * w.ore[j];
      if (co && cq)
        for (size_t j = 0; j < pd; j++)
          acc += pq[pd + j] * w.oim[j];
      out[i] = (float) acc;
    }

out:
  rpe_free (unit);
  rpe_free (pq);
  rpe_free (pk);
  work_clear (&w);
  return st;
}

/* ---- linear attention over encoded features --------------------------- */

static void
finish_row (const double *num,
            double        den,
            size_t        dv,
            RpeLrpeNorm   norm,
            float        *y)
{
  switch (norm)
    {
    case RPE_LRPE_NORM_DENOMINATOR:
      if (fabs (den) < RPE_LRPE_DEN_EPS)
        den = den < 0 ? -RPE_LRPE_DEN_EPS : RPE_LRPE_DEN_EPS;
      for (size_t j = 0; j < dv; j++)
        y[j] = (float) (num[j] / den);
      break;
    case RPE_LRPE_NORM_LAYER:
      {
        double mean = 0, var = 0, inv;

        for (size_t j = 0; j < dv; j++)
          mean += num[j];
        mean /= (double) dv;
        for (size_t j = 0; j < dv; j++)
          var += (num[j] - mean) * (num[j] - mean);
        var /= (double) dv;
        inv = 1.0 / sqrt (var + RPE_LRPE_LN_EPS);
        for (size_t j = 0; j < dv; j++)
          y[j] = (float) ((num[j] - mean) * inv);
      }
      break;
    case RPE_LRPE_NORM_NONE:
    default:
      for (size_t j = 0; j < dv; j++)
        y[j] = (float) num[j];
      break;
    }
}

/* The feature row (i, h) as the W doubles used in the scores. */
static void
feature_row (const RpeLrpe *lrpe,
             Work          *w,
             const float   *phi,
             size_t         i,
             size_t         h,
             size_t         n_heads,
             size_t         f,
             double        *row)
{
  const float *src = phi + (i * n_heads + h) * f;

  if (lrpe != NULL)
    encode_row_d (lrpe, w, src, row);
  else
    for (size_t j = 0; j < f; j++)
      row[j] = src[j];
}

RpeStatus
rpe_lrpe_linear_attention (const RpeLrpe    *lrpe,
                           size_t            n,
                           size_t            n_heads,
                           size_t            f,
                           size_t            dv,
                           const float      *phi_q,
                           const float      *phi_k,
                           const float      *v,
                           bool              causal,
                           RpeLrpeNorm       norm,
                           float            *y,
                           const RpeMonitor *monitor)
{
  RpeStatus st;
  Work w = { 0 };
  double *s = NULL, *z = NULL, *kr = NULL, *qr = NULL, *num = NULL;
  size_t width, count, state;
  bool have_work = false;

  if (phi_q == NULL || phi_k == NULL || v == NULL || y == NULL
      || n_heads == 0 || f == 0 || dv == 0 || (unsigned) norm > RPE_LRPE_NORM_LAYER
      || (lrpe != NULL && lrpe->dim != f))
    return RPE_ERROR_INVALID_ARGUMENT;
  if (n == 0)
    return RPE_OK;
  if (n - 1 > (uint64_t) INT64_MAX)
    return RPE_ERROR_OVERFLOW;
  width = lrpe != NULL ? rpe_lrpe_out_width (lrpe) : f;
  /* input sizes and the per-head state (H, W, Dv) */
  if ((st = rpe_size_bytes (&count, 1, n, n_heads, f, 1)) != RPE_OK
      || (st = rpe_size_bytes (&count, 1, n, n_heads, dv, 1)) != RPE_OK
      || (st = rpe_size_bytes (&state, 1, n_heads, width, dv, 1)) != RPE_OK)
    return st;

  if (lrpe != NULL)
    {
      if ((st = work_init (&w, lrpe)) != RPE_OK)
        return st;
      have_work = true;
    }
  if ((s = rpe_alloc0 (state, sizeof (double), &st)) == NULL
      || (z = rpe_alloc0 (n_heads * width, sizeof (double), &st)) == NULL
      || (kr = rpe_alloc (width, sizeof (double), &st)) == NULL
      || (qr = rpe_alloc (width, sizeof (double), &st)) == NULL
      || (num = rpe_alloc (dv, sizeof (double), &st)) == NULL)
    goto out;

  /* Non-causal: pass 1 builds S_h = sum_n phi_k'[n] v_n^T and z_h = sum_n phi_k'[n];
   * pass 2 reads y_m = phi_q'[m] S_h / phi_q'[m] . z_h.  Causal: one pass,
   * adding key m before reading query m. */
  for (int pass = causal ? 1 : 0; pass < 2; pass++)
    {
      for (size_t m = 0; m < n; m++)
        {
          if (m % CHECK_EVERY == 0)
            {
              if (rpe_monitor_cancelled (monitor))
                {
                  st = RPE_ERROR_CANCELLED;
                  goto out;
                }
              rpe_monitor_progress (monitor, causal ? (double) m / (double) n
                                                    : 0.5 * (pass + (double) m / (double) n));
            }
          if (lrpe != NULL)
            lambda_prepare (lrpe, &w, (int64_t) m);
          for (size_t h = 0; h < n_heads; h++)
            {
              double *sh = s + h * width * dv, *zh = z + h * width;

              if (pass == 0 || causal)
                {
                  const float *vm = v + (m * n_heads + h) * dv;

                  feature_row (lrpe, &w, phi_k, m, h, n_heads, f, kr);
                  for (size_t a = 0; a < width; a++)
                    {
                      double ka = kr[a];
                      double *srow = sh + a * dv;

                      zh[a] += ka;
                      for (size_t b = 0; b < dv; b++)
                        srow[b] += ka * vm[b];
                    }
                }
              if (pass == 1)
                {
                  double den = 0;

                  feature_row (lrpe, &w, phi_q, m, h, n_heads, f, qr);
                  for (size_t b = 0; b < dv; b++)
                    num[b] = 0;
                  for (size_t a = 0; a < width; a++)
                    {
                      double qa = qr[a];
                      const double *srow = sh + a * dv;

                      den += qa * zh[a];
                      for (size_t b = 0; b < dv; b++)
                        num[b] += qa * srow[b];
                    }
                  finish_row (num, den, dv, norm, y + (m * n_heads + h) * dv);
                }
            }
        }
    }
  rpe_monitor_progress (monitor, 1.0);

out:
  rpe_free (s);
  rpe_free (z);
  rpe_free (kr);
  rpe_free (qr);
  rpe_free (num);
  if (have_work)
    work_clear (&w);
  return st;
}

RpeStatus
rpe_lrpe_attention_map_rows (size_t       n,
                             size_t       width,
                             size_t       stride,
                             const float *qe,
                             const float *ke,
                             bool         causal,
                             bool         row_normalise,
                             size_t       m0,
                             size_t       n_rows,
                             float       *out)
{
  if (qe == NULL || ke == NULL || out == NULL || width == 0 || stride < width || m0 > n || n_rows > n - m0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (n_rows == 0)
    return RPE_OK;
  if (n > (size_t) INT32_MAX || stride > (size_t) INT32_MAX)
    return RPE_ERROR_INVALID_ARGUMENT; /* BLAS takes int sizes */
  /* the rows' scores Qe[m0 ..] Ke^T */
  cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasTrans, (int) n_rows, (int) n, (int) width, 1.0f, qe + m0 * stride,
               (int) stride, ke, (int) stride, 0.0f, out, (int) n);
  for (size_t i = 0; i < n_rows; i++)
    {
      float *row = out + i * n;
      size_t last = causal ? m0 + i + 1 : n;

      for (size_t j = last; j < n; j++)
        row[j] = 0.0f;
      if (row_normalise)
        {
          double sum = 0;

          for (size_t j = 0; j < last; j++)
            sum += row[j];
          if (fabs (sum) < RPE_LRPE_DEN_EPS)
            sum = sum < 0 ? -RPE_LRPE_DEN_EPS : RPE_LRPE_DEN_EPS;
          for (size_t j = 0; j < last; j++)
            row[j] = (float) (row[j] / sum);
        }
    }
  return RPE_OK;
}

RpeStatus
rpe_lrpe_attention_map (const RpeLrpe    *lrpe,
                        size_t            n,
                        size_t            n_heads,
                        size_t            f,
                        const float      *phi_q,
                        const float      *phi_k,
                        bool              causal,
                        bool              row_normalise,
                        float            *out,
                        const RpeMonitor *monitor)
{
  RpeStatus st;
  float *qe = NULL, *ke = NULL;
  const float *qa, *ka;
  size_t width, count, nn;

  if (phi_q == NULL || phi_k == NULL || out == NULL || n_heads == 0 || f == 0
      || (lrpe != NULL && lrpe->dim != f))
    return RPE_ERROR_INVALID_ARGUMENT;
  if (n == 0)
    return RPE_OK;
  width = lrpe != NULL ? rpe_lrpe_out_width (lrpe) : f;
  if ((st = rpe_size_bytes (&count, 1, n, n_heads, width, 1)) != RPE_OK
      || (st = rpe_size_bytes (&nn, 1, n, n, n_heads, 1)) != RPE_OK)
    return st;
  if (n > (size_t) INT32_MAX || n_heads * width > (size_t) INT32_MAX)
    return RPE_ERROR_INVALID_ARGUMENT;   /* BLAS takes int sizes */

  if (lrpe != NULL)
    {
      if ((qe = rpe_alloc (count, sizeof (float), &st)) == NULL
          || (ke = rpe_alloc (count, sizeof (float), &st)) == NULL)
        goto out;
      if ((st = rpe_lrpe_encode (lrpe, n, n_heads, 0, phi_q, qe, NULL)) != RPE_OK
          || (st = rpe_lrpe_encode (lrpe, n, n_heads, 0, phi_k, ke, NULL)) != RPE_OK)
        goto out;
      qa = qe;
      ka = ke;
    }
  else
    {
      qa = phi_q;
      ka = phi_k;
    }

  for (size_t h = 0; h < n_heads; h++)
    {
      float *a = out + h * n * n;

      if (rpe_monitor_cancelled (monitor))
        {
          st = RPE_ERROR_CANCELLED;
          goto out;
        }
      rpe_monitor_progress (monitor, (double) h / (double) n_heads);
      /* A_h = Qe_h Ke_h^T, rows strided by H * W */
      if ((st = rpe_lrpe_attention_map_rows (n, width, n_heads * width, qa + h * width, ka + h * width, causal,
                                             row_normalise, 0, n, a))
          != RPE_OK)
        goto out;
    }
  rpe_monitor_progress (monitor, 1.0);

out:
  rpe_free (qe);
  rpe_free (ke);
  return st;
}

RpeStatus
rpe_lrpe_perm_from_table (const int64_t *table,
                          size_t         n_positions,
                          size_t         d,
                          uint32_t      *pi,
                          size_t        *bad_row)
{
  size_t count;

  if (bad_row != NULL)
    *bad_row = 0;
  if (table == NULL || pi == NULL || n_positions == 0 || d == 0 || d > UINT32_MAX
      || !rpe_size_mul (n_positions, d, &count))
    return RPE_ERROR_INVALID_ARGUMENT;
  for (size_t j = 0; j < d; j++)
    if (table[j] != (int64_t) j)
      return RPE_ERROR_INVALID_ARGUMENT;   /* row 0 must be the identity */
  for (size_t j = 0; j < d; j++)
    {
      int64_t t = n_positions > 1 ? table[d + j] : (int64_t) j;

      if (t < 0 || (uint64_t) t >= d)
        {
          if (bad_row != NULL)
            *bad_row = 1;
          return RPE_ERROR_INVALID_ARGUMENT;
        }
      pi[j] = (uint32_t) t;
    }
  if (check_permutation (pi, d) != RPE_OK)
    {
      if (bad_row != NULL)
        *bad_row = 1;
      return RPE_ERROR_INVALID_ARGUMENT;
    }
  for (size_t s = 2; s < n_positions; s++)
    for (size_t j = 0; j < d; j++)
      if (table[s * d + j] != table[(s - 1) * d + pi[j]])
        {
          if (bad_row != NULL)
            *bad_row = s;
          return RPE_ERROR_INVALID_ARGUMENT;
        }
  return RPE_OK;
}

/* rpe-fit.c: fitting SPE to another relative bias (see rpe-fit.h). */
#include "config.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

#include "rpe-alloc.h"
#include "rpe-fit.h"

#define DEFAULT_ITER 40

/* ---- transforms ------------------------------------------------------------------ */

double
rpe_fit_sigmoid (double x)
{
  if (x >= 0)
    return 1.0 / (1.0 + exp (-x));
  else
    {
      double e = exp (x);
      return e / (1.0 + e);
    }
}

double
rpe_fit_softplus (double x)
{
  if (x > 0)
    return x + log1p (exp (-x));
  return log1p (exp (x));
}

double
rpe_fit_raw_freq (double f)
{
  /* f = sigmoid(x) / 2  <=>  x = log(2f / (1 - 2f)) */
  double p;

  if (!(f >= 1e-12))
    f = 1e-12;
  if (!(f <= 0.5 - 1e-12))
    f = 0.5 - 1e-12;
  p = 2.0 * f;
  return log (p) - log1p (-p);
}

double
rpe_fit_raw_gain (double lambda)
{
  /* lambda = log(1 + e^x)  <=>  x = log(e^lambda - 1) = lambda + log(1 - e^-lambda) */
  if (!(lambda >= 1e-30))
    lambda = 1e-30;
  if (lambda > 30.0)
    return lambda + log1p (-exp (-lambda));
  return log (expm1 (lambda));
}

double
rpe_fit_raw_gate (double g)
{
  if (!(g >= 1e-12))
    g = 1e-12;
  if (!(g <= 1.0 - 1e-12))
    g = 1.0 - 1e-12;
  return log (g) - log1p (-g);
}

/* ---- targets --------------------------------------------------------------------- */

static RpeStatus
check_profile_size (size_t n_heads, size_t n, size_t *len)
{
  size_t total;

  if (n_heads == 0 || n == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (n, 2, len) || !rpe_size_mul (*len - 1, n_heads, &total)
      || !rpe_size_mul (total, sizeof (double), &total))
    return RPE_ERROR_OVERFLOW;
  *len -= 1;
  return RPE_OK;
}

RpeStatus
rpe_fit_target_alibi (size_t        n_heads,
                      size_t        n,
                      const double *slopes,
                      double       *out)
{
  size_t len;
  RpeStatus st;

  if (out == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  if ((st = check_profile_size (n_heads, n, &len)) != RPE_OK)
    return st;
  for (size_t h = 0; h < n_heads; h++)
    {
      double s = slopes != NULL ? slopes[h] : exp2 (-8.0 * (double) (h + 1) / (double) n_heads);

      if (!isfinite (s))
        return RPE_ERROR_NOT_FINITE;
      /* ALiBi's slopes are positive: 0 gives a constant bias (nothing to
       * fit), a negative one a bias that grows with distance (not ALiBi) */
      if (s == 0)
        return RPE_ERROR_DEGENERATE;
      if (s < 0)
        return RPE_ERROR_INVALID_ARGUMENT;
      for (size_t i = 0; i < len; i++)
        out[h * len + i] = -s * fabs ((double) i - (double) (n - 1));
    }
  return RPE_OK;
}

size_t
rpe_fit_t5_bucket (long   tau,
                   bool   bidirectional,
                   size_t num_buckets,
                   size_t max_distance)
{
  /* T5 (Raffel et al. 2020), _relative_position_bucket with relative_position = key - query
   * = -tau, so its "n = -relative_position" is tau itself. */
  size_t ret = 0, nb = num_buckets, max_exact, v;
  long nn = tau;

  if (bidirectional)
    {
      nb /= 2;
      if (nn < 0)
        ret += nb;
      nn = nn < 0 ? -nn : nn;
    }
  else if (nn < 0)
    nn = 0;
  max_exact = nb / 2;
  if ((size_t) nn < max_exact)
    return ret + (size_t) nn;
  {
    /* float32 like the reference: log(n / max_exact) / log(max_distance / max_exact)
     * * (num_buckets - max_exact), truncated toward zero, then capped at num_buckets - 1
     * (the caller guarantees max_distance > max_exact, so x >= 0) */
    float ratio = (float) nn / (float) max_exact;
    float denom = (float) log ((double) max_distance / (double) max_exact);
    float x = logf (ratio) / denom * (float) (nb - max_exact);

    if (!(x >= 0))
      x = 0;
    if (x >= (float) nb)
      v = nb - 1;
    else
      v = max_exact + (size_t) x;
    if (v > nb - 1)
      v = nb - 1;
  }
  return ret + v;
}

RpeStatus
rpe_fit_target_t5 (size_t       n_heads,
                   size_t       n,
                   const float *table,
                   size_t       num_buckets,
                   size_t       max_distance,
                   bool         bidirectional,
                   double      *out)
{
  size_t len;
  RpeStatus st;

  if (out == NULL || table == NULL || num_buckets < (bidirectional ? 4u : 2u)
      || max_distance <= (bidirectional ? num_buckets / 4 : num_buckets / 2) || n > (size_t) 1 << 40)
    return RPE_ERROR_INVALID_ARGUMENT;
  if ((st = check_profile_size (n_heads, n, &len)) != RPE_OK)
    return st;
  for (size_t i = 0; i < len; i++)
    {
      long tau = (long) i - (long) (n - 1);
      size_t b = rpe_fit_t5_bucket (tau, bidirectional, num_buckets, max_distance);

      for (size_t h = 0; h < n_heads; h++)
        {
          double v = table[b * n_heads + h];

          if (!isfinite (v))
            return RPE_ERROR_NOT_FINITE;
          out[h * len + i] = v;
        }
    }
  return RPE_OK;
}

RpeStatus
rpe_fit_target_kerple (size_t        n_heads,
                       size_t        n,
                       bool          power,
                       const double *r1,
                       const double *r2,
                       double       *out)
{
  size_t len;
  RpeStatus st;

  if (out == NULL || r1 == NULL || r2 == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  if ((st = check_profile_size (n_heads, n, &len)) != RPE_OK)
    return st;
  for (size_t h = 0; h < n_heads; h++)
    {
      if (!isfinite (r1[h]) || !isfinite (r2[h]))
        return RPE_ERROR_NOT_FINITE;
      if (!(r1[h] > 0) || !(r2[h] > 0) || (power && r2[h] > 2))
        return RPE_ERROR_INVALID_ARGUMENT;
      for (size_t i = 0; i < len; i++)
        {
          double a = fabs ((double) i - (double) (n - 1));

          out[h * len + i] = power ? -r1[h] * pow (a, r2[h]) : -r1[h] * log1p (r2[h] * a);
        }
    }
  return RPE_OK;
}

RpeStatus
rpe_fit_target_centred (size_t       n_heads,
                        size_t       n,
                        const float *w,
                        size_t       rows,
                        size_t       m,
                        double      *out)
{
  size_t len;
  RpeStatus st;

  if (out == NULL || w == NULL || (rows != 1 && rows != n_heads) || m == 0 || n > m)
    return RPE_ERROR_INVALID_ARGUMENT;
  if ((st = check_profile_size (n_heads, n, &len)) != RPE_OK)
    return st;
  for (size_t h = 0; h < n_heads; h++)
    {
      const float *row = w + (rows == 1 ? 0 : h) * (2 * m - 1);

      for (size_t i = 0; i < len; i++)
        {
          /* tau = i - (N-1) sits at j = tau + (M-1) */
          double v = row[i + (m - n)];

          if (!isfinite (v))
            return RPE_ERROR_NOT_FINITE;
          out[h * len + i] = v;
        }
    }
  return RPE_OK;
}

/* ---- profiles --------------------------------------------------------------------- */

RpeStatus
rpe_fit_profile (const RpeSpeParams *params,
                 size_t              n,
                 bool                gated,
                 double             *out)
{
  size_t len, H, D;
  RpeStatus st;

  if (params == NULL || out == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  if ((st = rpe_spe_params_validate (params)) != RPE_OK)
    return st;
  if (params->method == RPE_SPE_CONV && params->kernel_cols != 0)
    return RPE_ERROR_UNSUPPORTED;
  H = params->n_heads;
  D = params->n_features;
  if ((st = check_profile_size (H, n, &len)) != RPE_OK)
    return st;
  memset (out, 0, H * len * sizeof (double));
  for (size_t h = 0; h < H; h++)
    {
      double *row = out + h * len;

      for (size_t d = 0; d < D; d++)
        {
          size_t c = h * D + d;
          double g = gated && params->gate != NULL ? params->gate[c] : 0.0;

          if (params->method == RPE_SPE_SINE)
            {
              size_t K = params->n_sines;

              for (size_t k = 0; k < K; k++)
                {
                  double f = params->freqs[c * K + k], th = params->offsets[c * K + k];
                  double lam = params->gains[c * K + k];
                  double a = (1.0 - g) * lam * lam / (2.0 * (double) K) / sqrt ((double) D);

                  for (size_t i = 0; i < len; i++)
                    {
                      double tau = (double) i - (double) (n - 1);
                      row[i] += a * cos (2.0 * M_PI * f * tau + th);
                    }
                }
            }
          else
            {
              size_t L = params->kernel;
              const float *wq = params->wq + c * L, *wk = params->wk + c * L;
              double a = (1.0 - g) / sqrt ((double) D);

              /* P(tau) = sum_j wq[j] wk[j + tau] */
              for (size_t i = 0; i < len; i++)
                {
                  long tau = (long) i - (long) (n - 1);
                  double s = 0;

                  if (tau >= (long) L || -tau >= (long) L)
                    continue;
                  for (long j = 0; j < (long) L; j++)
                    if (j + tau >= 0 && j + tau < (long) L)
                      s += (double) wq[j] * (double) wk[j + tau];
                  row[i] += a * s;
                }
            }
          if (g != 0.0)
            for (size_t i = 0; i < len; i++)
              row[i] += g / sqrt ((double) D);
        }
    }
  return RPE_OK;
}

double
rpe_fit_relative_error (size_t        n_heads,
                        size_t        n,
                        const double *target,
                        const double *fit)
{
  size_t len = 2 * n - 1;
  double num = 0, den = 0;

  for (size_t h = 0; h < n_heads; h++)
    {
      const double *b = target + h * len, *l = fit + h * len;
      double mb = 0, ml = 0;

      for (size_t i = 0; i < len; i++)
        {
          mb += b[i];
          ml += l[i];
        }
      mb /= (double) len;
      ml /= (double) len;
      for (size_t i = 0; i < len; i++)
        {
          double e = (l[i] - ml) - (b[i] - mb);
          num += e * e;
          den += (b[i] - mb) * (b[i] - mb);
        }
    }
  if (den == 0)
    return num == 0 ? 0.0 : INFINITY;
  return sqrt (num / den);
}

/* ---- sine fit --------------------------------------------------------------------- */

typedef struct
{
  size_t        len;    /* 2N-1 */
  size_t        n;
  size_t        m;      /* components */
  const double *y;
} SineData;

/* x = [c, (f, alpha, beta) * m]; model c + sum alpha cos(2 pi f tau) + beta sin(2 pi f tau) */
static int
sine_f (const gsl_vector *x, void *data, gsl_vector *f)
{
  const SineData *s = data;

  for (size_t i = 0; i < s->len; i++)
    {
      double tau = (double) i - (double) (s->n - 1), v = gsl_vector_get (x, 0);

      for (size_t j = 0; j < s->m; j++)
        {
          double w = 2.0 * M_PI * gsl_vector_get (x, 1 + 3 * j) * tau;
          v += gsl_vector_get (x, 2 + 3 * j) * cos (w) + gsl_vector_get (x, 3 + 3 * j) * sin (w);
        }
      gsl_vector_set (f, i, v - s->y[i]);
    }
  return GSL_SUCCESS;
}

static int
sine_df (const gsl_vector *x, void *data, gsl_matrix *J)
{
  const SineData *s = data;

  for (size_t i = 0; i < s->len; i++)
    {
      double tau = (double) i - (double) (s->n - 1);

      gsl_matrix_set (J, i, 0, 1.0);
      for (size_t j = 0; j < s->m; j++)
        {
          double w = 2.0 * M_PI * gsl_vector_get (x, 1 + 3 * j) * tau, cw = cos (w), sw = sin (w);
          double al = gsl_vector_get (x, 2 + 3 * j), be = gsl_vector_get (x, 3 + 3 * j);

          gsl_matrix_set (J, i, 1 + 3 * j, 2.0 * M_PI * tau * (-al * sw + be * cw));
          gsl_matrix_set (J, i, 2 + 3 * j, cw);
          gsl_matrix_set (J, i, 3 + 3 * j, sw);
        }
    }
  return GSL_SUCCESS;
}

/* comp: m x 3 (f, alpha, beta) for one head, in and out */
static RpeStatus
sine_refine (const double *y, size_t n, size_t m, double *comp, size_t max_iter)
{
  size_t len = 2 * n - 1, p = 3 * m + 1;
  SineData data = { len, n, m, y };
  gsl_multifit_nlinear_fdf fdf;
  gsl_multifit_nlinear_parameters prm = gsl_multifit_nlinear_default_parameters ();
  gsl_multifit_nlinear_workspace *w;
  gsl_vector *x;
  int info = 0;
  double mean = 0;

  if (p > len)
    return RPE_OK;   /* more unknowns than lags: keep the grid fit */
  prm.trs = gsl_multifit_nlinear_trs_lm;
  prm.scale = gsl_multifit_nlinear_scale_more;
  fdf.f = sine_f;
  fdf.df = sine_df;
  fdf.fvv = NULL;
  fdf.n = len;
  fdf.p = p;
  fdf.params = &data;
  if ((w = gsl_multifit_nlinear_alloc (gsl_multifit_nlinear_trust, &prm, len, p)) == NULL)
    return RPE_ERROR_SYSTEM_MEMORY;
  if ((x = gsl_vector_alloc (p)) == NULL)
    {
      gsl_multifit_nlinear_free (w);
      return RPE_ERROR_SYSTEM_MEMORY;
    }
  for (size_t i = 0; i < len; i++)
    mean += y[i];
  gsl_vector_set (x, 0, mean / (double) len);
  for (size_t j = 0; j < 3 * m; j++)
    gsl_vector_set (x, 1 + j, comp[j]);
  if (gsl_multifit_nlinear_init (x, &fdf, w) == GSL_SUCCESS)
    {
      const gsl_vector *sol;
      int status = gsl_multifit_nlinear_driver (max_iter, 1e-10, 1e-12, 1e-12, NULL, NULL, &info, w);

      /* any exit (converged, max iterations, no further progress) leaves the best point so far
       * in the workspace: the trust region method only accepts steps that lower the cost */
      (void) status;
      sol = gsl_multifit_nlinear_position (w);
      if (rpe_all_finite_d (sol->data, p))
        for (size_t j = 0; j < 3 * m; j++)
          comp[j] = gsl_vector_get (sol, 1 + j);
    }
  gsl_vector_free (x);
  gsl_multifit_nlinear_free (w);
  return RPE_OK;
}

/* Grid start: the largest m DFT bins k = 1..N-1 of y over the 2N-1 lags. */
static void
sine_grid (const double *y, size_t n, size_t m, double *comp, double *work)
{
  size_t len = 2 * n - 1, nb = n - 1;
  double *al = work, *be = work + nb, *pw = work + 2 * nb;

  for (size_t k = 1; k <= nb; k++)
    {
      double a = 0, b = 0;

      for (size_t i = 0; i < len; i++)
        {
          /* reduce k * tau mod len exactly in integers before the cosine */
          long ph = ((long) k * ((long) i - (long) (n - 1))) % (long) len;
          double w = 2.0 * M_PI * (double) ph / (double) len;

          a += y[i] * cos (w);
          b += y[i] * sin (w);
        }
      al[k - 1] = 2.0 * a / (double) len;
      be[k - 1] = 2.0 * b / (double) len;
      pw[k - 1] = al[k - 1] * al[k - 1] + be[k - 1] * be[k - 1];
    }
  for (size_t j = 0; j < m; j++)
    {
      size_t best = SIZE_MAX;

      for (size_t k = 0; k < nb; k++)
        if (pw[k] >= 0 && (best == SIZE_MAX || pw[k] > pw[best]))
          best = k;
      if (best == SIZE_MAX)
        {
          comp[3 * j] = 0.25;
          comp[3 * j + 1] = comp[3 * j + 2] = 0;
          continue;
        }
      comp[3 * j] = (double) (best + 1) / (double) len;
      comp[3 * j + 1] = al[best];
      comp[3 * j + 2] = be[best];
      pw[best] = -1;
    }
}

/* Greedy pursuit on a 4x oversampled frequency grid: each step adds the cosine (with its
 * phase) that best fits the residual together with a constant (sine terms are orthogonal
 * to the constant and the cosine over the symmetric lags), then Levenberg-Marquardt refits
 * every component chosen so far (when that is cheap; the final refit always runs). */
static RpeStatus
sine_pursuit (const double *y, size_t n, size_t m, double *comp, double *r, size_t iters)
{
  size_t len = 2 * n - 1, grid = 4 * len;
  RpeStatus st = RPE_OK;

  for (size_t j = 0; j < m; j++)
    {
      double best = -1, bf = 0.25, ba = 0, bb = 0, mean = 0;
      size_t p = 3 * (j + 1) + 1;

      /* residual of the current model, mean removed */
      for (size_t i = 0; i < len; i++)
        {
          double tau = (double) i - (double) (n - 1), v = y[i];
          for (size_t q = 0; q < j; q++)
            {
              double w = 2.0 * M_PI * comp[3 * q] * tau;
              v -= comp[3 * q + 1] * cos (w) + comp[3 * q + 2] * sin (w);
            }
          r[i] = v;
          mean += v;
        }
      mean /= (double) len;
      for (size_t i = 0; i < len; i++)
        r[i] -= mean;
      for (size_t g = 1; g <= grid / 2; g++)
        {
          double f = (double) g / (double) grid, w = 2.0 * M_PI * f;
          double src = 0, srs = 0, sc = 0, scc = 0, sss = 0, red;
          /* cos, sin of w tau by rotation from tau = -(N-1) */
          double c0 = cos (w * -(double) (n - 1)), s0 = sin (w * -(double) (n - 1));
          double cw = cos (w), sw = sin (w);

          for (size_t i = 0; i < len; i++)
            {
              double c1;
              src += r[i] * c0;
              srs += r[i] * s0;
              sc += c0;
              scc += c0 * c0;
              sss += s0 * s0;
              c1 = c0 * cw - s0 * sw;
              s0 = s0 * cw + c0 * sw;
              c0 = c1;
            }
          {
            /* [1 cos] block: r has zero mean, so the 2x2 solve gives alpha = src / (scc - sc^2/len) */
            double dc = scc - sc * sc / (double) len;
            double al = dc > 1e-9 * (double) len ? src / dc : 0;
            double be = sss > 1e-9 * (double) len ? srs / sss : 0;
            red = al * src + be * srs;
            if (red > best)
              {
                best = red;
                bf = f;
                ba = al;
                bb = be;
              }
          }
        }
      comp[3 * j] = bf;
      comp[3 * j + 1] = ba;
      comp[3 * j + 2] = bb;
      if (j + 1 < m && (double) len * (double) p * (double) p * 5.0 < 5e7)
        st = sine_refine (y, n, j + 1, comp, 5);
      if (st != RPE_OK)
        return st;
    }
  return sine_refine (y, n, m, comp, iters);
}

static RpeStatus
fit_sine (const RpeFitConfig *cfg, size_t n, const double *target, RpeSpeParams *params,
          const RpeMonitor *monitor)
{
  size_t H = cfg->n_heads, D = cfg->n_features, K = cfg->size, m = D * K, len = 2 * n - 1;
  size_t iters = cfg->max_iter != 0 ? cfg->max_iter : DEFAULT_ITER;
  double *comp, *work;
  RpeStatus st = RPE_OK;
  double g = params->gate != NULL ? params->gate[0] : 0.0;

  if ((comp = rpe_alloc (m, 3 * sizeof (double), &st)) == NULL)
    return st;
  if ((work = rpe_alloc (n, 4 * sizeof (double), &st)) == NULL)
    {
      rpe_free (comp);
      return st;
    }
  for (size_t h = 0; h < H && st == RPE_OK; h++)
    {
      const double *y = target + h * len;
      size_t used = m < n - 1 ? m : n - 1;

      if (rpe_monitor_cancelled (monitor))
        {
          st = RPE_ERROR_CANCELLED;
          break;
        }
      memset (comp, 0, m * 3 * sizeof (double));
      for (size_t j = 0; j < m; j++)
        comp[3 * j] = 0.25;
      if (used >= n - 1)
        sine_grid (y, n, used, comp, work);   /* every grid frequency: exact */
      else
        st = sine_pursuit (y, n, used, comp, work, iters);
      /* components -> (d, k) slots: amplitude a = (1-g) lambda^2 / (2K sqrt(D)) */
      for (size_t j = 0; j < m; j++)
        {
          size_t d = j / K, k = j % K, idx = (h * D + d) * K + k;
          double f = comp[3 * j], al = comp[3 * j + 1], be = comp[3 * j + 2];
          double a = hypot (al, be), th = atan2 (-be, al);

          /* fold f to [0, 0.5]: f -> f mod 1; f > 0.5 -> 1 - f with the phase negated
           * (cos(2 pi (1-f) tau + th) = cos(2 pi f tau - th) for integer tau) */
          f = f - floor (f);
          if (f > 0.5)
            {
              f = 1.0 - f;
              th = -th;
            }
          if (j >= used)
            {
              a = 0;
              th = 0;
              f = 0.25;
            }
          params->freqs[idx] = (float) f;
          params->offsets[idx] = (float) th;
          params->gains[idx] = (float) sqrt (a * 2.0 * (double) K * sqrt ((double) D) / (1.0 - g));
        }
      rpe_monitor_progress (monitor, (double) (h + 1) / (double) H);
    }
  rpe_free (work);
  rpe_free (comp);
  return st;
}

/* ---- conv fit --------------------------------------------------------------------- */

/* Solves (A^T A + rho I) x = A^T t for the Toeplitz-structured A[tau][i] = v[i - tau] (or
 * v[i + tau] when flip): the update of one filter of a rank-1 pair, window |tau| < L. */
static RpeStatus
als_update (const double *v, const double *t, size_t L, bool flip, double *x, gsl_matrix *a,
            gsl_vector *rhs, gsl_vector *sol)
{
  size_t W = 2 * L - 1;
  double tr = 0;

  gsl_matrix_set_zero (a);
  gsl_vector_set_zero (rhs);
  for (size_t r = 0; r < W; r++)
    {
      long tau = (long) r - (long) (L - 1);

      /* row of A: coefficient of x[i] in P(tau) */
      for (size_t i = 0; i < L; i++)
        {
          long j = flip ? (long) i + tau : (long) i - tau;
          double ci;

          if (j < 0 || j >= (long) L)
            continue;
          ci = v[j];
          gsl_vector_set (rhs, i, gsl_vector_get (rhs, i) + ci * t[r]);
          for (size_t i2 = 0; i2 < L; i2++)
            {
              long j2 = flip ? (long) i2 + tau : (long) i2 - tau;

              if (j2 < 0 || j2 >= (long) L)
                continue;
              gsl_matrix_set (a, i, i2, gsl_matrix_get (a, i, i2) + ci * v[j2]);
            }
        }
    }
  for (size_t i = 0; i < L; i++)
    tr += gsl_matrix_get (a, i, i);
  for (size_t i = 0; i < L; i++)
    gsl_matrix_set (a, i, i, gsl_matrix_get (a, i, i) + 1e-12 * (tr / (double) L) + 1e-300);
  if (gsl_linalg_cholesky_decomp1 (a) != GSL_SUCCESS || gsl_linalg_cholesky_solve (a, rhs, sol) != GSL_SUCCESS)
    return RPE_OK;   /* keep x */
  for (size_t i = 0; i < L; i++)
    if (!isfinite (gsl_vector_get (sol, i)))
      return RPE_OK;
  for (size_t i = 0; i < L; i++)
    x[i] = gsl_vector_get (sol, i);
  return RPE_OK;
}

static double
window_residual (const double *wq, const double *wk, const double *t, size_t L)
{
  double e = 0;

  for (size_t r = 0; r < 2 * L - 1; r++)
    {
      long tau = (long) r - (long) (L - 1);
      double s = 0;

      for (long j = 0; j < (long) L; j++)
        if (j + tau >= 0 && j + tau < (long) L)
          s += wq[j] * wk[j + tau];
      e += (t[r] - s) * (t[r] - s);
    }
  return e;
}

static RpeStatus
fit_conv (const RpeFitConfig *cfg, size_t n, const double *target, RpeSpeParams *params,
          const RpeMonitor *monitor)
{
  size_t H = cfg->n_heads, D = cfg->n_features, L = cfg->size, len = 2 * n - 1;
  size_t Lw = L < n ? L : n, W = 2 * Lw - 1;
  size_t iters = cfg->max_iter != 0 ? cfg->max_iter : DEFAULT_ITER;
  double g = params->gate != NULL ? params->gate[0] : 0.0;
  double scale = sqrt ((double) D) / (1.0 - g);
  double *t, *wq, *wk;
  gsl_matrix *a = NULL;
  gsl_vector *rhs = NULL, *sol = NULL;
  RpeStatus st = RPE_OK;

  if ((t = rpe_alloc (W, sizeof (double), &st)) == NULL)
    return st;
  wq = rpe_alloc (Lw, sizeof (double), &st);
  wk = wq != NULL ? rpe_alloc (Lw, sizeof (double), &st) : NULL;
  if (wk == NULL)
    goto out;
  if (D == 1)
    {
      size_t bytes;

      /* an Lw x Lw normal matrix: within the budget */
      if ((st = rpe_size_bytes (&bytes, sizeof (double), Lw, Lw, 1, 1)) != RPE_OK
          || (st = rpe_budget_check (bytes)) != RPE_OK)
        goto out;
      a = gsl_matrix_alloc (Lw, Lw);
      rhs = gsl_vector_alloc (Lw);
      sol = gsl_vector_alloc (Lw);
      if (a == NULL || rhs == NULL || sol == NULL)
        {
          st = RPE_ERROR_SYSTEM_MEMORY;
          goto out;
        }
    }

  for (size_t h = 0; h < H && st == RPE_OK; h++)
    {
      const double *y = target + h * len;
      double c = 0, npos = 0, nneg = 0, sa, sb;
      size_t outside = 0;

      if (rpe_monitor_cancelled (monitor))
        {
          st = RPE_ERROR_CANCELLED;
          break;
        }
      /* the constant: the target's mean where the model is only the constant */
      for (size_t i = 0; i < len; i++)
        {
          long tau = (long) i - (long) (n - 1);

          if (tau >= (long) Lw || -tau >= (long) Lw)
            {
              c += y[i];
              outside++;
            }
        }
      c = outside != 0 ? c / (double) outside : 0.0;
      /* window target, times sqrt(D) / (1-g): what the channels' correlations must sum to */
      for (size_t r = 0; r < W; r++)
        t[r] = (y[r + (n - Lw)] - c) * scale;

      for (size_t d = 0; d < D; d++)
        {
          float *q = params->wq + (h * D + d) * L, *k = params->wk + (h * D + d) * L;
          memset (q, 0, L * sizeof (float));
          memset (k, 0, L * sizeof (float));
        }

      if (D >= 2)
        {
          /* channel 0: wq = a e_0, wk[tau] = t(tau) / a (tau >= 0, half of tau = 0);
           * channel 1: wk = b e_0, wq[j] = t(-j) / b (tau <= 0, the other half) */
          float *q0 = params->wq + (h * D) * L, *k0 = params->wk + (h * D) * L;
          float *q1 = params->wq + (h * D + 1) * L, *k1 = params->wk + (h * D + 1) * L;

          for (size_t j = 0; j < Lw; j++)
            {
              double vp = t[Lw - 1 + j] * (j == 0 ? 0.5 : 1.0);
              double vn = t[Lw - 1 - j] * (j == 0 ? 0.5 : 1.0);
              npos += vp * vp;
              nneg += vn * vn;
            }
          sa = sqrt (sqrt (npos));
          sb = sqrt (sqrt (nneg));
          if (!(sa > 0))
            sa = 1;
          if (!(sb > 0))
            sb = 1;
          q0[0] = (float) sa;
          k1[0] = (float) sb;
          for (size_t j = 0; j < Lw; j++)
            {
              k0[j] = (float) (t[Lw - 1 + j] * (j == 0 ? 0.5 : 1.0) / sa);
              q1[j] = (float) (t[Lw - 1 - j] * (j == 0 ? 0.5 : 1.0) / sb);
            }
        }
      else
        {
          /* one channel: rank-1 alternating least squares from the tau >= 0 half */
          double best, e;
          double *bq, *bk;
          size_t cost = Lw * Lw * Lw + 1, it_max = iters;

          if (cost > 0 && (double) it_max * (double) cost > 4e9)
            it_max = (size_t) fmax (2.0, 4e9 / (double) cost);
          bq = rpe_alloc (2 * Lw, sizeof (double), &st);
          if (bq == NULL)
            break;
          bk = bq + Lw;
          for (size_t j = 0; j < Lw; j++)
            npos += t[Lw - 1 + j] * t[Lw - 1 + j];
          sa = sqrt (sqrt (npos));
          if (!(sa > 0))
            sa = 1;
          memset (wq, 0, Lw * sizeof (double));
          wq[0] = sa;
          for (size_t j = 0; j < Lw; j++)
            wk[j] = t[Lw - 1 + j] / sa;
          best = window_residual (wq, wk, t, Lw);
          memcpy (bq, wq, Lw * sizeof (double));
          memcpy (bk, wk, Lw * sizeof (double));
          for (size_t it = 0; it < it_max && st == RPE_OK; it++)
            {
              double nq = 0, nk = 0, bal;

              if (rpe_monitor_cancelled (monitor))
                {
                  st = RPE_ERROR_CANCELLED;
                  break;
                }
              /* P(tau) = sum_i wk[i] wq[i - tau]: update wk with wq fixed */
              als_update (wq, t, Lw, false, wk, a, rhs, sol);
              /* P(tau) = sum_j wq[j] wk[j + tau]: update wq with wk fixed */
              als_update (wk, t, Lw, true, wq, a, rhs, sol);
              for (size_t j = 0; j < Lw; j++)
                {
                  nq += wq[j] * wq[j];
                  nk += wk[j] * wk[j];
                }
              /* keep both norms equal (the product is unchanged) */
              bal = nq > 0 && nk > 0 ? sqrt (sqrt (nk / nq)) : 1.0;
              for (size_t j = 0; j < Lw; j++)
                {
                  wq[j] *= bal;
                  wk[j] /= bal;
                }
              e = window_residual (wq, wk, t, Lw);
              if (e < best)
                {
                  best = e;
                  memcpy (bq, wq, Lw * sizeof (double));
                  memcpy (bk, wk, Lw * sizeof (double));
                }
            }
          for (size_t j = 0; j < Lw; j++)
            {
              params->wq[h * L + j] = (float) bq[j];
              params->wk[h * L + j] = (float) bk[j];
            }
          rpe_free (bq);
        }
      rpe_monitor_progress (monitor, (double) (h + 1) / (double) H);
    }
out:
  if (a != NULL)
    gsl_matrix_free (a);
  if (rhs != NULL)
    gsl_vector_free (rhs);
  if (sol != NULL)
    gsl_vector_free (sol);
  rpe_free (wk);
  rpe_free (wq);
  rpe_free (t);
  return st;
}

RpeFitTargetFault
rpe_fit_target_fault (size_t n_heads, size_t n, const double *target, size_t *head, size_t *index, double *value)
{
  size_t len, worst = 0, dummy_h, dummy_i;
  double scale = 0, largest = 0, dummy_v;
  bool   all_zero = true;

  head = head != NULL ? head : &dummy_h;
  index = index != NULL ? index : &dummy_i;
  value = value != NULL ? value : &dummy_v;
  *head = *index = 0;
  *value = 0;
  if (target == NULL || check_profile_size (n_heads, n, &len) != RPE_OK)
    return RPE_FIT_TARGET_FINE; /* rpe_fit_target_check says what is wrong with the call */
  for (size_t h = 0; h < n_heads; h++)
    for (size_t i = 0; i < len; i++)
      if (!isfinite (target[h * len + i]))
        {
          *head = h;
          *index = i;
          *value = target[h * len + i];
          return RPE_FIT_TARGET_NOT_FINITE;
        }
  /* the largest deviation from a head's mean: what the fit has to reproduce (the mean as a
   * running mean, which cannot overflow) */
  for (size_t h = 0; h < n_heads; h++)
    {
      const double *b = target + h * len;
      double        mean = 0, dev = 0;

      for (size_t i = 0; i < len; i++)
        {
          mean += (b[i] - mean) / (double) (i + 1);
          largest = fmax (largest, fabs (b[i]));
          all_zero = all_zero && fabs (b[i]) < FLT_MIN;
        }
      for (size_t i = 0; i < len; i++)
        dev = fmax (dev, fabs (b[i] - mean));
      if (!(dev <= scale))
        {
          scale = dev;
          worst = h;
        }
    }
  *head = worst;
  if (!(scale <= RPE_FIT_MAX_DEVIATION))
    {
      *value = scale;
      return RPE_FIT_TARGET_HUGE;
    }
  /* constant (softmax ignores it: nothing to fit, and the relative error divides by zero),
   * or below float32's normal range (the fitted float parameters cannot hold it) */
  if (all_zero)
    {
      *value = largest;
      return RPE_FIT_TARGET_ZERO;
    }
  if (scale == 0)
    {
      *value = target[0];
      return RPE_FIT_TARGET_CONSTANT;
    }
  if (!(scale >= FLT_MIN))
    {
      *value = scale;
      return RPE_FIT_TARGET_TINY;
    }
  return RPE_FIT_TARGET_FINE;
}

RpeStatus
rpe_fit_target_check (size_t        n_heads,
                      size_t        n,
                      const double *target)
{
  size_t len;
  RpeStatus st;

  if (target == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  if ((st = check_profile_size (n_heads, n, &len)) != RPE_OK)
    return st;
  switch (rpe_fit_target_fault (n_heads, n, target, NULL, NULL, NULL))
    {
    case RPE_FIT_TARGET_FINE:
      return RPE_OK;
    case RPE_FIT_TARGET_NOT_FINITE:
      return RPE_ERROR_NOT_FINITE;
    case RPE_FIT_TARGET_HUGE:
      return RPE_ERROR_RANGE;
    default:
      return RPE_ERROR_DEGENERATE;
    }
}

RpeStatus
rpe_fit_work_bytes (const RpeFitConfig *cfg, size_t n, size_t *bytes)
{
  size_t    len, comps;
  RpeStatus st;

  if (cfg == NULL || bytes == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  if ((st = check_profile_size (cfg->n_heads, n, &len)) != RPE_OK)
    return st;
  /* the LM Jacobian (2N-1) x (3 D K + 1) doubles (and as much again for the solver), or the
   * conv filters */
  if (!rpe_size_mul (cfg->n_features, cfg->size, &comps) || !rpe_size_mul (comps, 3, &comps)
      || !rpe_size_add (comps, 1, &comps))
    return RPE_ERROR_OVERFLOW;
  return rpe_size_bytes (bytes, sizeof (double), len, cfg->method == RPE_SPE_SINE ? comps : 1, 2, 1);
}

RpeStatus
rpe_fit_spe (const RpeFitConfig *cfg,
             size_t              n,
             const double       *target,
             RpeSpeParams       *params,
             const RpeMonitor   *monitor)
{
  size_t    len, bytes;
  RpeStatus st;

  if (cfg == NULL || target == NULL || params == NULL || cfg->n_features == 0 || cfg->size == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  memset (params, 0, sizeof *params);
  if ((st = check_profile_size (cfg->n_heads, n, &len)) != RPE_OK)
    return st;
  if (!rpe_all_finite_d (target, cfg->n_heads * len))
    return RPE_ERROR_NOT_FINITE;
  if ((st = rpe_fit_target_check (cfg->n_heads, n, target)) != RPE_OK)
    return st;
  if ((st = rpe_fit_work_bytes (cfg, n, &bytes)) != RPE_OK)
    return st;
  if ((st = rpe_budget_check (bytes)) != RPE_OK)
    return st;
  gsl_set_error_handler_off ();
  if ((st = rpe_spe_params_init (params, cfg->method, cfg->n_heads, cfg->n_features, cfg->size,
                                 cfg->gated)) != RPE_OK)
    return st;
  if (cfg->gated)
    for (size_t i = 0; i < cfg->n_heads * cfg->n_features; i++)
      params->gate[i] = (float) rpe_fit_sigmoid (RPE_FIT_GATE_RAW);
  st = cfg->method == RPE_SPE_SINE ? fit_sine (cfg, n, target, params, monitor)
                                   : fit_conv (cfg, n, target, params, monitor);
  if (st != RPE_OK)
    rpe_spe_params_clear (params);
  return st;
}

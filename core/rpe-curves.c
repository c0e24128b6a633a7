/* rpe-curves.c: analysis curves (docs/math.md, section 9); see rpe-curves.h for the
 * exact definitions of every curve and metric.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rpe-publish.h"
#include "rpe-alloc.h"
#include "rpe-attention.h"
#include "rpe-curves.h"
#include "rpe-noise.h"
#include "rpe-fastrpb.h"
#include "rpe-rng.h"

/* ------------------------------------------------------------------------ */
/* Tables                                                                   */

struct _RpeCurveTable
{
  size_t   n_rows;
  size_t   n_cols;
  size_t   cap_cols;
  char   **names;
  double **cols;
  size_t   n_meta;
  size_t   cap_meta;
  char   **keys;
  char   **values;
};

static char *
dup_string (const char *s, RpeStatus *status)
{
  size_t len = strlen (s), bytes;
  char *out;

  if (!rpe_size_add (len, 1, &bytes))
    {
      *status = RPE_ERROR_OVERFLOW;
      return NULL;
    }
  out = rpe_alloc (bytes, 1, status);
  if (out != NULL)
    memcpy (out, s, bytes);
  return out;
}

RpeCurveTable *
rpe_curve_table_new (size_t     n_rows,
                     RpeStatus *status)
{
  RpeStatus st = RPE_OK;
  RpeCurveTable *t;

  if (n_rows == 0)
    {
      if (status)
        *status = RPE_ERROR_INVALID_ARGUMENT;
      return NULL;
    }
  t = rpe_alloc0 (1, sizeof *t, &st);
  if (t != NULL)
    t->n_rows = n_rows;
  if (status)
    *status = st;
  return t;
}

void
rpe_curve_table_free (RpeCurveTable *t)
{
  if (t == NULL)
    return;
  for (size_t i = 0; i < t->n_cols; i++)
    {
      rpe_free (t->names[i]);
      rpe_free (t->cols[i]);
    }
  for (size_t i = 0; i < t->n_meta; i++)
    {
      rpe_free (t->keys[i]);
      rpe_free (t->values[i]);
    }
  rpe_free (t->names);
  rpe_free (t->cols);
  rpe_free (t->keys);
  rpe_free (t->values);
  rpe_free (t);
}

size_t
rpe_curve_table_n_rows (const RpeCurveTable *t)
{
  return t ? t->n_rows : 0;
}

size_t
rpe_curve_table_n_cols (const RpeCurveTable *t)
{
  return t ? t->n_cols : 0;
}

static bool
has_control (const char *s)
{
  for (; *s; s++)
    if ((unsigned char) *s < 0x20 || *s == 0x7f)
      return true;
  return false;
}

static bool
valid_name (const char *name)
{
  return name != NULL && name[0] != '\0' && !has_control (name)
         && strpbrk (name, ",\"#") == NULL;
}

long
rpe_curve_table_find (const RpeCurveTable *t,
                      const char          *name)
{
  if (t == NULL || name == NULL)
    return -1;
  for (size_t i = 0; i < t->n_cols; i++)
    if (strcmp (t->names[i], name) == 0)
      return (long) i;
  return -1;
}

RpeStatus
rpe_curve_table_add_column (RpeCurveTable *t,
                            const char    *name,
                            const double  *values,
                            size_t        *index)
{
  RpeStatus st = RPE_OK;
  double *col;
  char *copy;

  if (t == NULL || !valid_name (name) || rpe_curve_table_find (t, name) >= 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (t->n_cols == t->cap_cols)
    {
      size_t cap = t->cap_cols ? t->cap_cols : 8;
      char **names;
      double **cols;

      if (!rpe_size_mul (cap, t->cap_cols ? 2 : 1, &cap))
        return RPE_ERROR_OVERFLOW;
      names = rpe_alloc0 (cap, sizeof (char *), &st);
      if (names == NULL)
        return st;
      cols = rpe_alloc0 (cap, sizeof (double *), &st);
      if (cols == NULL)
        {
          rpe_free (names);
          return st;
        }
      if (t->n_cols > 0)
        {
          memcpy (names, t->names, t->n_cols * sizeof (char *));
          memcpy (cols, t->cols, t->n_cols * sizeof (double *));
        }
      rpe_free (t->names);
      rpe_free (t->cols);
      t->names = names;
      t->cols = cols;
      t->cap_cols = cap;
    }
  col = values ? rpe_alloc (t->n_rows, sizeof (double), &st) : rpe_alloc0 (t->n_rows, sizeof (double), &st);
  if (col == NULL)
    return st;
  if (values)
    memcpy (col, values, t->n_rows * sizeof (double));
  copy = dup_string (name, &st);
  if (copy == NULL)
    {
      rpe_free (col);
      return st;
    }
  t->names[t->n_cols] = copy;
  t->cols[t->n_cols] = col;
  if (index)
    *index = t->n_cols;
  t->n_cols++;
  return RPE_OK;
}

const char *
rpe_curve_table_column_name (const RpeCurveTable *t,
                             size_t               col)
{
  return t != NULL && col < t->n_cols ? t->names[col] : NULL;
}

double *
rpe_curve_table_column (RpeCurveTable *t,
                        size_t         col)
{
  return t != NULL && col < t->n_cols ? t->cols[col] : NULL;
}

const double *
rpe_curve_table_column_const (const RpeCurveTable *t,
                              size_t               col)
{
  return t != NULL && col < t->n_cols ? t->cols[col] : NULL;
}

RpeStatus
rpe_curve_table_set_meta (RpeCurveTable *t,
                          const char    *key,
                          const char    *value)
{
  RpeStatus st = RPE_OK;
  char *v, *k;

  if (t == NULL || key == NULL || value == NULL || key[0] == '\0' || has_control (key)
      || strchr (key, ':') != NULL || has_control (value))
    return RPE_ERROR_INVALID_ARGUMENT;
  v = dup_string (value, &st);
  if (v == NULL)
    return st;
  for (size_t i = 0; i < t->n_meta; i++)
    if (strcmp (t->keys[i], key) == 0)
      {
        rpe_free (t->values[i]);
        t->values[i] = v;
        return RPE_OK;
      }
  if (t->n_meta == t->cap_meta)
    {
      size_t cap = t->cap_meta ? t->cap_meta : 8;
      char **keys = NULL, **values = NULL;

      if (!rpe_size_mul (cap, t->cap_meta ? 2 : 1, &cap))
        st = RPE_ERROR_OVERFLOW;
      if (st == RPE_OK)
        keys = rpe_alloc0 (cap, sizeof (char *), &st);
      if (keys != NULL)
        values = rpe_alloc0 (cap, sizeof (char *), &st);
      if (values == NULL)
        {
          rpe_free (keys);
          rpe_free (v);
          return st;
        }
      if (t->n_meta > 0)
        {
          memcpy (keys, t->keys, t->n_meta * sizeof (char *));
          memcpy (values, t->values, t->n_meta * sizeof (char *));
        }
      rpe_free (t->keys);
      rpe_free (t->values);
      t->keys = keys;
      t->values = values;
      t->cap_meta = cap;
    }
  k = dup_string (key, &st);
  if (k == NULL)
    {
      rpe_free (v);
      return st;
    }
  t->keys[t->n_meta] = k;
  t->values[t->n_meta] = v;
  t->n_meta++;
  return RPE_OK;
}

/* %.9g in the C locale; "nan" for any NaN. */
static void
format_double (char *buf, size_t size, double value)
{
  locale_t c_locale = newlocale (LC_NUMERIC_MASK, "C", (locale_t) 0);
  locale_t old = (locale_t) 0;

  if (isnan (value))
    {
      snprintf (buf, size, "nan");
      if (c_locale != (locale_t) 0)
        freelocale (c_locale);
      return;
    }
  if (c_locale != (locale_t) 0)
    old = uselocale (c_locale);
  snprintf (buf, size, "%.9g", value);
  if (c_locale != (locale_t) 0)
    {
      uselocale (old);
      freelocale (c_locale);
    }
}

RpeStatus
rpe_curve_table_set_meta_double (RpeCurveTable *t,
                                 const char    *key,
                                 double         value)
{
  char buf[64];

  format_double (buf, sizeof buf, value);
  return rpe_curve_table_set_meta (t, key, buf);
}

size_t
rpe_curve_table_n_meta (const RpeCurveTable *t)
{
  return t ? t->n_meta : 0;
}

const char *
rpe_curve_table_meta_key (const RpeCurveTable *t,
                          size_t               i)
{
  return t != NULL && i < t->n_meta ? t->keys[i] : NULL;
}

const char *
rpe_curve_table_get_meta (const RpeCurveTable *t,
                          const char          *key)
{
  if (t == NULL || key == NULL)
    return NULL;
  for (size_t i = 0; i < t->n_meta; i++)
    if (strcmp (t->keys[i], key) == 0)
      return t->values[i];
  return NULL;
}

static bool
write_rows (const RpeCurveTable *t, FILE *f)
{
  for (size_t i = 0; i < t->n_meta; i++)
    if (fprintf (f, "# %s: %s\n", t->keys[i], t->values[i]) < 0)
      return false;
  for (size_t c = 0; c < t->n_cols; c++)
    if (fprintf (f, "%s%s", c ? "," : "", t->names[c]) < 0)
      return false;
  if (fputc ('\n', f) == EOF)
    return false;
  for (size_t r = 0; r < t->n_rows; r++)
    {
      for (size_t c = 0; c < t->n_cols; c++)
        {
          double v = t->cols[c][r];
          int rc;

          if (isnan (v))
            rc = fprintf (f, "%snan", c ? "," : "");
          else
            rc = fprintf (f, "%s%.9g", c ? "," : "", v);
          if (rc < 0)
            return false;
        }
      if (fputc ('\n', f) == EOF)
        return false;
    }
  return true;
}

static RpeStatus curve_table_write_csv (const RpeCurveTable *t, const char *path, int *error_number);

RpeStatus
rpe_curve_table_write_csv (const RpeCurveTable *t,
                           const char          *given,
                           int                 *error_number)
{
  /* onto a symbolic link: through it, to the file it names */
  char *real = given != NULL ? rpe_publish_resolve (given) : NULL;
  RpeStatus result;

  if (given != NULL && real == NULL)
    return RPE_ERROR_NO_MEMORY;
  result = curve_table_write_csv (t, real, error_number);
  free (real);
  return result;
}

static RpeStatus
curve_table_write_csv (const RpeCurveTable *t,
                       const char          *path,
                       int                 *error_number)
{
  static const char suffix[] = ".XXXXXX";
  size_t len, bytes;
  char *tmp;
  int fd, saved = 0;
  FILE *f = NULL;
  bool ok;
  locale_t c_locale, old = (locale_t) 0;
  RpeStatus st = RPE_OK;

  if (error_number)
    *error_number = 0;
  if (t == NULL || path == NULL || path[0] == '\0')
    return RPE_ERROR_INVALID_ARGUMENT;
  len = strlen (path);
  if (!rpe_size_add (len, sizeof suffix, &bytes))
    return RPE_ERROR_OVERFLOW;
  tmp = rpe_alloc (bytes, 1, &st);
  if (tmp == NULL)
    return st;
  memcpy (tmp, path, len);
  memcpy (tmp + len, suffix, sizeof suffix);

  fd = mkstemp (tmp);
  if (fd < 0)
    {
      saved = errno;
      rpe_free (tmp);
      if (error_number)
        *error_number = saved;
      return RPE_ERROR_IO;
    }
  (void) fchmod (fd, 0644);
  f = fdopen (fd, "w");
  if (f == NULL)
    {
      saved = errno;
      close (fd);
      ok = false;
    }
  else
    {
      c_locale = newlocale (LC_NUMERIC_MASK, "C", (locale_t) 0);
      if (c_locale != (locale_t) 0)
        old = uselocale (c_locale);
      ok = write_rows (t, f);
      if (c_locale != (locale_t) 0)
        {
          uselocale (old);
          freelocale (c_locale);
        }
      if (ok && fflush (f) != 0)
        ok = false;
      if (ok && fsync (fileno (f)) != 0)
        ok = false;
      if (!ok)
        saved = errno;
      if (fclose (f) != 0 && ok)
        {
          saved = errno;
          ok = false;
        }
    }
  if (ok && (saved = rpe_publish (tmp, path)) != 0)
    ok = false;
  if (!ok)
    unlink (tmp);
  rpe_free (tmp);
  if (!ok)
    {
      if (error_number)
        *error_number = saved;
      return rpe_status_for_write_errno (saved);
    }
  return RPE_OK;
}

/* ------------------------------------------------------------------------ */
/* Fitting                                                                  */

RpeStatus
rpe_curve_fit_loglog (const double *x,
                      const double *y,
                      size_t        n,
                      double       *slope,
                      double       *intercept,
                      double       *slope_se)
{
  double mx = 0, my = 0, sxx = 0, sxy = 0, ssr = 0, b, a;

  if (x == NULL || y == NULL || n < 2)
    return RPE_ERROR_INVALID_ARGUMENT;
  for (size_t i = 0; i < n; i++)
    {
      if (!(x[i] > 0) || !(y[i] > 0) || !isfinite (x[i]) || !isfinite (y[i]))
        return RPE_ERROR_INVALID_ARGUMENT;
      mx += log (x[i]);
      my += log (y[i]);
    }
  mx /= (double) n;
  my /= (double) n;
  for (size_t i = 0; i < n; i++)
    {
      double dx = log (x[i]) - mx, dy = log (y[i]) - my;

      sxx += dx * dx;
      sxy += dx * dy;
    }
  if (!(sxx > 0))
    return RPE_ERROR_INVALID_ARGUMENT;
  b = sxy / sxx;
  a = my - b * mx;
  for (size_t i = 0; i < n; i++)
    {
      double e = log (y[i]) - (a + b * log (x[i]));
      ssr += e * e;
    }
  if (slope)
    *slope = b;
  if (intercept)
    *intercept = a;
  if (slope_se)
    *slope_se = n > 2 ? sqrt (ssr / (double) (n - 2) / sxx) : NAN;
  return RPE_OK;
}

/* ------------------------------------------------------------------------ */
/* 1. Template profiles                                                     */

RpeCurveTable *
rpe_curve_profile_new (size_t     n,
                       RpeStatus *status)
{
  RpeStatus st = RPE_OK;
  RpeCurveTable *t = NULL;
  size_t rows;
  double *tau;

  if (n == 0 || !rpe_size_mul (n, 2, &rows))
    st = n == 0 ? RPE_ERROR_INVALID_ARGUMENT : RPE_ERROR_OVERFLOW;
  if (st == RPE_OK)
    t = rpe_curve_table_new (rows - 1, &st);
  if (t != NULL && (st = rpe_curve_table_add_column (t, "tau", NULL, NULL)) == RPE_OK)
    {
      tau = t->cols[0];
      for (size_t i = 0; i < rows - 1; i++)
        tau[i] = (double) i - (double) (n - 1);
    }
  if (st != RPE_OK)
    {
      rpe_curve_table_free (t);
      t = NULL;
    }
  if (status)
    *status = st;
  return t;
}

/* N of a profile table, or 0 if it is not one (odd row count). */
static size_t
profile_n (const RpeCurveTable *t)
{
  if (t == NULL || t->n_rows % 2 == 0)
    return 0;
  return (t->n_rows + 1) / 2;
}

RpeStatus
rpe_curve_profile_add_spe (RpeCurveTable      *t,
                           const char         *name,
                           const RpeSpeParams *params,
                           size_t              h,
                           size_t              d,
                           bool                gated,
                           const RpeMonitor   *monitor)
{
  size_t n = profile_n (t), len, h0, h1, d0, d1, count = 0, col;
  float *lags;
  double *acc;
  RpeStatus st = RPE_OK;

  if (n == 0 || params == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  if ((st = rpe_spe_params_validate (params)) != RPE_OK)
    return st;
  if ((h != RPE_CURVE_ALL && h >= params->n_heads) || (d != RPE_CURVE_ALL && d >= params->n_features))
    return RPE_ERROR_INVALID_ARGUMENT;
  if (gated && params->gate == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!valid_name (name) || rpe_curve_table_find (t, name) >= 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  h0 = h == RPE_CURVE_ALL ? 0 : h;
  h1 = h == RPE_CURVE_ALL ? params->n_heads : h + 1;
  d0 = d == RPE_CURVE_ALL ? 0 : d;
  d1 = d == RPE_CURVE_ALL ? params->n_features : d + 1;
  len = t->n_rows;
  lags = rpe_alloc (len, sizeof (float), &st);
  if (lags == NULL)
    return st;
  if ((st = rpe_curve_table_add_column (t, name, NULL, &col)) != RPE_OK)
    {
      rpe_free (lags);
      return st;
    }
  acc = t->cols[col];
  for (size_t hh = h0; hh < h1 && st == RPE_OK; hh++)
    for (size_t dd = d0; dd < d1 && st == RPE_OK; dd++)
      {
        if (rpe_monitor_cancelled (monitor))
          st = RPE_ERROR_CANCELLED;
        else
          st = rpe_spe_template_lags (params, hh, dd, n, gated, lags);
        if (st == RPE_OK)
          {
            for (size_t i = 0; i < len; i++)
              acc[i] += lags[i];
            count++;
            rpe_monitor_progress (monitor, (double) count / (double) ((h1 - h0) * (d1 - d0)));
          }
      }
  rpe_free (lags);
  if (st != RPE_OK)
    {
      /* drop the half-filled column */
      t->n_cols--;
      rpe_free (t->names[t->n_cols]);
      rpe_free (t->cols[t->n_cols]);
      return st;
    }
  for (size_t i = 0; i < len; i++)
    acc[i] /= (double) count;
  return RPE_OK;
}

/* Adds a column from len floats. */
static RpeStatus
add_float_column (RpeCurveTable *t, const char *name, const float *v)
{
  size_t col;
  RpeStatus st = rpe_curve_table_add_column (t, name, NULL, &col);

  if (st == RPE_OK)
    for (size_t i = 0; i < t->n_rows; i++)
      t->cols[col][i] = v[i];
  return st;
}

RpeStatus
rpe_curve_profile_add_lrpe (RpeCurveTable *t,
                            const char    *name,
                            const RpeLrpe *lrpe,
                            const float   *q,
                            const float   *k)
{
  size_t n = profile_n (t);
  RpeStatus st = RPE_OK;
  float *buf;

  if (n == 0 || lrpe == NULL || !valid_name (name) || rpe_curve_table_find (t, name) >= 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  buf = rpe_alloc (t->n_rows, sizeof (float), &st);
  if (buf == NULL)
    return st;
  st = rpe_lrpe_template (lrpe, n, q, k, buf);
  if (st == RPE_OK)
    st = add_float_column (t, name, buf);
  rpe_free (buf);
  return st;
}

RpeStatus
rpe_curve_profile_add_fastrpb (RpeCurveTable *t,
                               const char    *name,
                               const float   *w,
                               bool           causal)
{
  size_t n = profile_n (t);
  RpeStatus st = RPE_OK;
  float *buf;

  if (n == 0 || w == NULL || !valid_name (name) || rpe_curve_table_find (t, name) >= 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_all_finite_f (w, t->n_rows))
    return RPE_ERROR_NOT_FINITE;
  buf = rpe_alloc (t->n_rows, sizeof (float), &st);
  if (buf == NULL)
    return st;
  st = rpe_fastrpb_lag_profile (n, w, causal, buf);
  if (st == RPE_OK)
    st = add_float_column (t, name, buf);
  rpe_free (buf);
  return st;
}

/* ------------------------------------------------------------------------ */
/* 2. Estimator error                                                       */

/* The single-cell view of params: H = D = 1 with cell c's parameters.  The
 * empirical template sqrt(R D)/R Qbar Kbar^T with codes scaled by
 * s = (R D)^(-1/4) does not depend on D (s^2 sqrt(R D) = 1), so the cell's
 * Phat from this view equals the one from the full codes of the same noise. */
static void
cell_view (const RpeSpeParams *p, size_t c, bool gated, RpeSpeParams *v)
{
  memset (v, 0, sizeof *v);
  v->method = p->method;
  v->n_heads = 1;
  v->n_features = 1;
  v->n_sines = p->n_sines;
  v->kernel = p->kernel;
  if (p->method == RPE_SPE_SINE)
    {
      v->freqs = p->freqs + c * p->n_sines;
      v->offsets = p->offsets + c * p->n_sines;
      v->gains = p->gains + c * p->n_sines;
    }
  else
    {
      v->wq = p->wq + c * p->kernel;
      v->wk = p->wk + c * p->kernel;
    }
  v->gate = gated ? p->gate + c : NULL;
}

typedef struct
{
  const RpeCurveErrorConfig *cfg;
  size_t  r;
  size_t  h0, h1, d0, d1;
  float  *z;        /* the cell's code noise */
  float  *eps;      /* R */
  float  *qbar;     /* N x R */
  float  *kbar;
  float  *phat;     /* N x N */
  float  *lags;     /* 2N - 1 */
} ErrWork;

static void
err_work_clear (ErrWork *w)
{
  rpe_free (w->z);
  rpe_free (w->eps);
  rpe_free (w->qbar);
  rpe_free (w->kbar);
  rpe_free (w->phat);
  rpe_free (w->lags);
  memset (w, 0, sizeof *w);
}

static RpeStatus
err_check (const RpeCurveErrorConfig *cfg, ErrWork *w)
{
  const RpeSpeParams *p;
  RpeStatus st;

  memset (w, 0, sizeof *w);
  if (cfg == NULL || cfg->params == NULL || cfg->n == 0 || cfg->n_seeds == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  p = cfg->params;
  if ((st = rpe_spe_params_validate (p)) != RPE_OK)
    return st;
  if ((cfg->head != RPE_CURVE_ALL && cfg->head >= p->n_heads)
      || (cfg->feature != RPE_CURVE_ALL && cfg->feature >= p->n_features)
      || (cfg->gated && p->gate == NULL) || (unsigned) cfg->noise_scheme >= RPE_NOISE_N_SCHEMES)
    return RPE_ERROR_INVALID_ARGUMENT;
  w->cfg = cfg;
  w->h0 = cfg->head == RPE_CURVE_ALL ? 0 : cfg->head;
  w->h1 = cfg->head == RPE_CURVE_ALL ? p->n_heads : cfg->head + 1;
  w->d0 = cfg->feature == RPE_CURVE_ALL ? 0 : cfg->feature;
  w->d1 = cfg->feature == RPE_CURVE_ALL ? p->n_features : cfg->feature + 1;
  return RPE_OK;
}

/* Buffers for one R. */
static RpeStatus
err_alloc (ErrWork *w, size_t r)
{
  const RpeSpeParams *p = w->cfg->params;
  size_t n = w->cfg->n, total, zc, nr, nn, len;
  RpeStatus st;

  rpe_free (w->z);
  rpe_free (w->eps);
  rpe_free (w->qbar);
  rpe_free (w->kbar);
  w->z = w->eps = w->qbar = w->kbar = NULL;
  w->r = r;
  if (r == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  /* the full draw's size must fit (it bounds every offset used below) */
  if ((st = rpe_spe_noise_size (p, n, r, &total)) != RPE_OK)
    return st;
  if (p->method == RPE_SPE_SINE)
    st = rpe_size_bytes (&zc, 1, 2, p->n_sines, r, 1);
  else
    st = rpe_size_bytes (&zc, 1, r, n + 4 * p->kernel, 1, 1);
  if (st == RPE_OK)
    st = rpe_size_bytes (&nr, 1, n, r, 1, 1);
  if (st == RPE_OK)
    st = rpe_size_bytes (&nn, 1, n, n, 1, 1);
  if (st == RPE_OK)
    st = rpe_size_bytes (&len, 1, n, 2, 1, 1);
  if (st != RPE_OK)
    return st;
  w->z = rpe_alloc (zc, sizeof (float), &st);
  if (w->z != NULL)
    w->eps = rpe_alloc (r, sizeof (float), &st);
  if (w->eps != NULL)
    w->qbar = rpe_alloc (nr, sizeof (float), &st);
  if (w->qbar != NULL)
    w->kbar = rpe_alloc (nr, sizeof (float), &st);
  if (w->kbar != NULL && w->phat == NULL)
    w->phat = rpe_alloc (nn, sizeof (float), &st);
  if (w->phat != NULL && w->lags == NULL)
    w->lags = rpe_alloc (len, sizeof (float), &st);
  return st;
}

/* Phat (N x N) of cell (h, d) for the draw `seed`, and Ptilde's lags. */
static RpeStatus
err_cell (ErrWork *w, size_t h, size_t d, uint64_t seed)
{
  const RpeCurveErrorConfig *cfg = w->cfg;
  const RpeSpeParams *p = cfg->params;
  size_t n = cfg->n, r = w->r, c = h * p->n_features + d, hd = p->n_heads * p->n_features;
  RpeSpeParams v;
  RpeStatus st = RPE_OK;

  cell_view (p, c, cfg->gated, &v);
  if (p->method == RPE_SPE_SINE)
    {
      /* layout (H, D, 2K, R): the cell's block is contiguous */
      size_t block = 2 * p->n_sines * r;
      st = rpe_spe_noise_fill_range (p, n, r, seed, c * block, block, w->z);
    }
  else
    {
      /* layout (R, H*D, N+4L): one stretch per realisation, of which the codes
       * read only samples L .. N+2L-2 (docs/math.md, section 2: valid correlation
       * cropped after L samples); the rest is zeroed, not drawn */
      size_t L = p->kernel, len = n + 4 * L, used = n + L - 1;
      memset (w->z, 0, r * len * sizeof (float));
      for (size_t i = 0; i < r && st == RPE_OK; i++)
        st = rpe_spe_noise_fill_range (p, n, r, seed, (i * hd + c) * len + L, used, w->z + i * len + L);
    }
  /* the cell's R values of the (H, D, R) gate draw */
  if (st == RPE_OK && cfg->gated)
    rpe_rng_normal (seed, RPE_STREAM_GATE, c * r, w->eps, r);
  /* noise scheme hook (rpe-noise.h): a no-op for iid */
  if (st == RPE_OK && cfg->noise_scheme != RPE_NOISE_IID)
    st = rpe_noise_apply_cell (cfg->noise_scheme, p, n, r, seed, c, w->z, n + 4 * p->kernel,
                               cfg->gated ? w->eps : NULL);
  if (st == RPE_OK)
    st = rpe_spe_codes (&v, n, r, w->z, w->qbar, w->kbar, NULL);
  if (st == RPE_OK && cfg->gated)
    st = rpe_spe_gate_codes (&v, n, r, w->eps, w->qbar, w->kbar);
  if (st == RPE_OK)
    st = rpe_spe_empirical_template (n, 1, 1, r, w->qbar, w->kbar, 0, 0, w->phat);
  if (st == RPE_OK)
    st = rpe_spe_template_lags (p, h, d, n, cfg->gated, w->lags);
  return st;
}

/* Running mean / sum of squares / Welford variance. */
typedef struct
{
  size_t count;
  double mean;
  double m2;
  double sq;
} Acc;

static void
acc_add (Acc *a, double x)
{
  double delta;

  a->count++;
  delta = x - a->mean;
  a->mean += delta / (double) a->count;
  a->m2 += delta * (x - a->mean);
  a->sq += x * x;
}

static void
acc_out (const Acc *a, size_t i, double *mean, double *rms, double *sd)
{
  if (mean)
    mean[i] = a->mean;
  if (rms)
    rms[i] = sqrt (a->sq / (double) a->count);
  if (sd)
    sd[i] = a->count > 1 ? sqrt (a->m2 / (double) (a->count - 1)) : 0.0;
}

RpeStatus
rpe_curve_error_vs_r (const RpeCurveErrorConfig *cfg,
                      const size_t              *r_list,
                      size_t                     n_r,
                      double                    *mean,
                      double                    *rms,
                      double                    *sd,
                      const RpeMonitor          *monitor)
{
  ErrWork w;
  RpeStatus st;
  size_t n, done = 0, total;

  if ((st = err_check (cfg, &w)) != RPE_OK)
    return st;
  if (r_list == NULL || n_r == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  for (size_t i = 0; i < n_r; i++)
    if (r_list[i] == 0)
      return RPE_ERROR_INVALID_ARGUMENT;
  n = cfg->n;
  if ((st = rpe_size_bytes (&total, 1, n_r, cfg->n_seeds, w.h1 - w.h0, w.d1 - w.d0)) != RPE_OK)
    return st;

  for (size_t i = 0; i < n_r && st == RPE_OK; i++)
    {
      Acc acc = { 0 };

      if ((st = err_alloc (&w, r_list[i])) != RPE_OK)
        break;
      for (size_t s = 0; s < cfg->n_seeds && st == RPE_OK; s++)
        for (size_t h = w.h0; h < w.h1 && st == RPE_OK; h++)
          for (size_t d = w.d0; d < w.d1 && st == RPE_OK; d++)
            {
              double num = 0, den = 0;

              if (rpe_monitor_cancelled (monitor))
                {
                  st = RPE_ERROR_CANCELLED;
                  break;
                }
              if ((st = err_cell (&w, h, d, cfg->seed + (uint64_t) s)) != RPE_OK)
                break;
              for (size_t m = 0; m < n; m++)
                for (size_t j = 0; j < n; j++)
                  {
                    double pt = w.lags[m + n - 1 - j];
                    double e = (double) w.phat[m * n + j] - pt;

                    num += e * e;
                    den += pt * pt;
                  }
              acc_add (&acc, den > 0 ? sqrt (num / den) : NAN);
              rpe_monitor_progress (monitor, (double) ++done / (double) total);
            }
      if (st == RPE_OK)
        acc_out (&acc, i, mean, rms, sd);
    }
  err_work_clear (&w);
  return st;
}

RpeStatus
rpe_curve_error_vs_position (const RpeCurveErrorConfig *cfg,
                             size_t                     r,
                             double                    *mean,
                             double                    *rms,
                             double                    *sd,
                             const RpeMonitor          *monitor)
{
  ErrWork w;
  RpeStatus st;
  Acc *acc = NULL;
  size_t n, done = 0, total;

  if ((st = err_check (cfg, &w)) != RPE_OK)
    return st;
  if (r == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  n = cfg->n;
  if ((st = rpe_size_bytes (&total, 1, cfg->n_seeds, w.h1 - w.h0, w.d1 - w.d0, 1)) != RPE_OK)
    return st;
  acc = rpe_alloc0 (n, sizeof (Acc), &st);
  if (acc == NULL)
    return st;
  if ((st = err_alloc (&w, r)) != RPE_OK)
    goto out;
  for (size_t s = 0; s < cfg->n_seeds && st == RPE_OK; s++)
    for (size_t h = w.h0; h < w.h1 && st == RPE_OK; h++)
      for (size_t d = w.d0; d < w.d1 && st == RPE_OK; d++)
        {
          if (rpe_monitor_cancelled (monitor))
            {
              st = RPE_ERROR_CANCELLED;
              break;
            }
          if ((st = err_cell (&w, h, d, cfg->seed + (uint64_t) s)) != RPE_OK)
            break;
          for (size_t m = 0; m < n; m++)
            {
              double num = 0, den = 0;

              for (size_t j = 0; j < n; j++)
                {
                  double pt = w.lags[m + n - 1 - j];
                  double e = (double) w.phat[m * n + j] - pt;

                  num += e * e;
                  den += pt * pt;
                }
              acc_add (&acc[m], den > 0 ? sqrt (num / den) : NAN);
            }
          rpe_monitor_progress (monitor, (double) ++done / (double) total);
        }
  if (st == RPE_OK)
    for (size_t m = 0; m < n; m++)
      acc_out (&acc[m], m, mean, rms, sd);

out:
  rpe_free (acc);
  err_work_clear (&w);
  return st;
}

/* ------------------------------------------------------------------------ */
/* 3. Extrapolation                                                         */

typedef struct
{
  double value;
  size_t index;
} RankPair;

static int
rank_pair_cmp (const void *a, const void *b)
{
  double x = ((const RankPair *) a)->value, y = ((const RankPair *) b)->value;

  return (x > y) - (x < y);
}

#define RANK_TIE_REL 1e-6

/* Average ranks (1-based; ties share the mean rank). */
static void
average_ranks (const double *v, size_t n, double *rank, RankPair *scratch)
{
  size_t i = 0;

  for (size_t j = 0; j < n; j++)
    {
      scratch[j].value = v[j];
      scratch[j].index = j;
    }
  qsort (scratch, n, sizeof *scratch, rank_pair_cmp);
  while (i < n)
    {
      size_t j = i + 1;
      double r;

      /* values within RANK_TIE_REL of the group's first are ties: the logits are
       * floats, so values equal in exact arithmetic (e.g. u(m, m - k) and
       * u(m, m + k) of a symmetric template) must not be ranked by rounding noise */
      while (j < n && scratch[j].value - scratch[i].value
                      <= RANK_TIE_REL * fmax (fabs (scratch[i].value), fabs (scratch[j].value)))
        j++;
      r = 0.5 * (double) (i + 1 + j);   /* mean of ranks i+1 .. j */
      for (size_t t = i; t < j; t++)
        rank[scratch[t].index] = r;
      i = j;
    }
}

/* Spearman's rho of (x, y), n values; NaN if n < 2; 0 if y is constant. */
static double
spearman (const double *x, const double *y, size_t n, double *rx, double *ry, RankPair *scratch)
{
  double mx = 0, my = 0, sxx = 0, syy = 0, sxy = 0;

  if (n < 2)
    return NAN;
  average_ranks (x, n, rx, scratch);
  average_ranks (y, n, ry, scratch);
  for (size_t i = 0; i < n; i++)
    {
      mx += rx[i];
      my += ry[i];
    }
  mx /= (double) n;
  my /= (double) n;
  for (size_t i = 0; i < n; i++)
    {
      sxx += (rx[i] - mx) * (rx[i] - mx);
      syy += (ry[i] - my) * (ry[i] - my);
      sxy += (rx[i] - mx) * (ry[i] - my);
    }
  if (!(syy > 0) || !(sxx > 0))
    return 0.0;
  return sxy / sqrt (sxx * syy);
}

/* Everything one model needs, prepared once for all heads. */
typedef struct
{
  const RpeCurveExtrapolationConfig *cfg;
  const RpeCurveModel *model;
  size_t        n;        /* N_max */
  size_t        H, D;
  size_t        W;        /* window */
  size_t        n_off;    /* offsets in the window */
  long          k_min;    /* first offset */
  size_t        nt;       /* training rows: min(N_train, N_max) */
  size_t        block;
  double       *c;        /* D: the content */
  float        *x;        /* (N, H, D): content (APE / FastRPB), or encoded rows */
  float        *xk;       /* SPE estimate: khat */
  RpeLogitsSpec spec;
  double        post_scale;
  double       *ltau;     /* SPE exact: 2N - 1 logits per lag of the current head */
  /* per-head scratch */
  float        *rows;     /* block x N */
  double       *row;      /* N (double work row) */
  double       *prof;     /* n_off: current row's profile */
  double       *dist;     /* n_off: |k| */
  unsigned char *valid;   /* n_off */
  double       *vx, *vy, *rx, *ry;  /* n_off: compacted values and ranks */
  RankPair     *pairs;    /* n_off */
  double       *train;    /* nt x n_off: the training rows' profiles */
  double       *pbar;     /* n_off */
  size_t       *pcount;   /* n_off */
} Extra;

static void
extra_clear (Extra *e)
{
  rpe_free (e->c);
  rpe_free (e->x);
  rpe_free (e->xk);
  rpe_free (e->ltau);
  rpe_free (e->rows);
  rpe_free (e->row);
  rpe_free (e->prof);
  rpe_free (e->dist);
  rpe_free (e->valid);
  rpe_free (e->vx);
  rpe_free (e->vy);
  rpe_free (e->rx);
  rpe_free (e->ry);
  rpe_free (e->pairs);
  rpe_free (e->train);
  rpe_free (e->pbar);
  rpe_free (e->pcount);
  memset (e, 0, sizeof *e);
}

static RpeStatus
extra_prepare (Extra                             *e,
               const RpeCurveExtrapolationConfig *cfg,
               const RpeCurveModel               *model)
{
  size_t n, H, D, nhd, bytes, len;
  RpeStatus st = RPE_OK;

  memset (e, 0, sizeof *e);
  if (cfg == NULL || model == NULL || cfg->n_train == 0 || cfg->n_max == 0 || cfg->n_heads == 0
      || cfg->n_features == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  e->cfg = cfg;
  e->model = model;
  e->n = n = cfg->n_max;
  e->H = H = cfg->n_heads;
  e->D = D = cfg->n_features;
  e->W = cfg->window ? cfg->window : (cfg->n_train < 64 ? cfg->n_train : 64);
  if (e->W > cfg->n_train)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (cfg->causal)
    {
      e->n_off = e->W;
      e->k_min = 0;
    }
  else
    {
      e->n_off = 2 * e->W - 1;
      e->k_min = -(long) (e->W - 1);
    }
  e->nt = cfg->n_train < n ? cfg->n_train : n;
  e->block = cfg->block_rows ? cfg->block_rows : 64;
  if (e->block > n)
    e->block = n;
  if ((st = rpe_size_bytes (&nhd, 1, n, H, D, 1)) != RPE_OK
      || (st = rpe_size_bytes (&bytes, 1, e->block, n, 1, 1)) != RPE_OK
      || (st = rpe_size_bytes (&bytes, 1, e->nt, e->n_off, 1, 1)) != RPE_OK
      || (st = rpe_size_bytes (&len, 1, n, 2, 1, 1)) != RPE_OK)
    return st;
  if (cfg->content != NULL && !rpe_all_finite_f (cfg->content, D))
    return RPE_ERROR_NOT_FINITE;

  /* model checks */
  switch (model->kind)
    {
    case RPE_CURVE_MODEL_APE:
      if (model->ape_table != NULL)
        {
          if (model->ape_positions == 0
              || (st = rpe_size_bytes (&bytes, 1, model->ape_positions, H, D, 1)) != RPE_OK)
            return model->ape_positions == 0 ? RPE_ERROR_INVALID_ARGUMENT : st;
          if (!rpe_all_finite_f (model->ape_table, bytes))
            return RPE_ERROR_NOT_FINITE;
        }
      break;
    case RPE_CURVE_MODEL_SPE_EXACT:
    case RPE_CURVE_MODEL_SPE_ESTIMATE:
      if (model->spe == NULL || model->spe->n_heads != H || model->spe->n_features != D
          || (model->gated && model->spe->gate == NULL)
          || (model->kind == RPE_CURVE_MODEL_SPE_ESTIMATE && model->realizations == 0))
        return RPE_ERROR_INVALID_ARGUMENT;
      if ((st = rpe_spe_params_validate (model->spe)) != RPE_OK)
        return st;
      break;
    case RPE_CURVE_MODEL_LRPE:
      if (model->lrpe == NULL || rpe_lrpe_dim (model->lrpe) != D)
        return RPE_ERROR_INVALID_ARGUMENT;
      break;
    case RPE_CURVE_MODEL_FASTRPB:
      if (model->bias == NULL)
        return RPE_ERROR_INVALID_ARGUMENT;
      if ((st = rpe_size_bytes (&bytes, 1, model->bias_per_head ? H : 1, len - 1, 1, 1)) != RPE_OK)
        return st;
      if (!rpe_all_finite_f (model->bias, bytes))
        return RPE_ERROR_NOT_FINITE;
      break;
    default:
      return RPE_ERROR_INVALID_ARGUMENT;
    }

  /* content */
  e->c = rpe_alloc (D, sizeof (double), &st);
  if (e->c == NULL)
    return st;
  for (size_t d = 0; d < D; d++)
    e->c[d] = cfg->content ? cfg->content[d] : 1.0 / sqrt ((double) D);

  /* scratch */
  e->rows = rpe_alloc (e->block * n, sizeof (float), &st);
  if (e->rows) e->row = rpe_alloc (n, sizeof (double), &st);
  if (e->row) e->prof = rpe_alloc (e->n_off, sizeof (double), &st);
  if (e->prof) e->dist = rpe_alloc (e->n_off, sizeof (double), &st);
  if (e->dist) e->valid = rpe_alloc (e->n_off, 1, &st);
  if (e->valid) e->vx = rpe_alloc (e->n_off, sizeof (double), &st);
  if (e->vx) e->vy = rpe_alloc (e->n_off, sizeof (double), &st);
  if (e->vy) e->rx = rpe_alloc (e->n_off, sizeof (double), &st);
  if (e->rx) e->ry = rpe_alloc (e->n_off, sizeof (double), &st);
  if (e->ry) e->pairs = rpe_alloc (e->n_off, sizeof (RankPair), &st);
  if (e->pairs) e->train = rpe_alloc (e->nt * e->n_off, sizeof (double), &st);
  if (e->train) e->pbar = rpe_alloc (e->n_off, sizeof (double), &st);
  if (e->pbar) e->pcount = rpe_alloc (e->n_off, sizeof (size_t), &st);
  if (st != RPE_OK)
    return st;

  e->post_scale = 1.0;
  switch (model->kind)
    {
    case RPE_CURVE_MODEL_APE:
    case RPE_CURVE_MODEL_FASTRPB:
    case RPE_CURVE_MODEL_LRPE:
      e->x = rpe_alloc (nhd, sizeof (float), &st);
      if (e->x == NULL)
        return st;
      for (size_t i = 0; i < n * H; i++)
        for (size_t d = 0; d < D; d++)
          e->x[i * D + d] = (float) e->c[d];
      if (model->kind == RPE_CURVE_MODEL_APE && model->ape_table != NULL)
        {
          /* learned APE: q_m = k_m = c + p_m where p was learned, c beyond */
          size_t learned = n < model->ape_positions ? n : model->ape_positions;

          for (size_t i = 0; i < learned * H * D; i++)
            e->x[i] = (float) ((double) e->x[i] + model->ape_table[i]);
        }
      e->spec = (RpeLogitsSpec) { model->kind == RPE_CURVE_MODEL_APE && model->ape_table == NULL
                                    ? RPE_LOGITS_APE : RPE_LOGITS_DOT,
                                  n, H, D, e->x, e->x, NULL, false };
      if (model->kind == RPE_CURVE_MODEL_LRPE)
        {
          size_t wd = rpe_lrpe_out_width (model->lrpe), count;
          float *enc;

          if ((st = rpe_size_bytes (&count, 1, n, H, wd, 1)) != RPE_OK)
            return st;
          enc = rpe_alloc (count, sizeof (float), &st);
          if (enc == NULL)
            return st;
          st = rpe_lrpe_encode (model->lrpe, n, H, 0, e->x, enc, NULL);
          rpe_free (e->x);
          e->x = enc;
          if (st != RPE_OK)
            return st;
          /* rpe_logits_rows divides by sqrt(W); the model divides by sqrt(D) */
          e->spec = (RpeLogitsSpec) { RPE_LOGITS_DOT, n, H, wd, e->x, e->x, NULL, false };
          e->post_scale = sqrt ((double) wd / (double) D);
        }
      break;
    case RPE_CURVE_MODEL_SPE_EXACT:
      e->ltau = rpe_alloc (len - 1, sizeof (double), &st);
      if (e->ltau == NULL)
        return st;
      break;
    case RPE_CURVE_MODEL_SPE_ESTIMATE:
      {
        RpeSpeParams view = *model->spe;
        size_t r = model->realizations, zc, hr, hdr;
        float *z = NULL, *eps = NULL;

        if (!model->gated)
          view.gate = NULL;
        if ((st = rpe_spe_noise_size (&view, n, r, &zc)) != RPE_OK
            || (st = rpe_size_bytes (&hr, 1, n, H, r, 1)) != RPE_OK
            || (st = rpe_size_bytes (&hdr, 1, H, D, r, 1)) != RPE_OK)
          return st;
        e->x = rpe_alloc (nhd, sizeof (float), &st);   /* content, then replaced by qhat */
        if (e->x != NULL)
          z = rpe_alloc (zc, sizeof (float), &st);
        if (z != NULL && model->gated)
          eps = rpe_alloc (hdr, sizeof (float), &st);
        if (st == RPE_OK)
          {
            float *qhat = rpe_alloc (hr, sizeof (float), &st);

            if (qhat != NULL)
              e->xk = rpe_alloc (hr, sizeof (float), &st);
            if (st == RPE_OK)
              {
                for (size_t i = 0; i < n * H; i++)
                  for (size_t d = 0; d < D; d++)
                    e->x[i * D + d] = (float) e->c[d];
                st = rpe_spe_noise_fill (&view, n, r, model->seed, z);
                if (st == RPE_OK && eps != NULL)
                  st = rpe_spe_gate_noise_fill (&view, r, model->seed, eps);
                if (st == RPE_OK)
                  st = rpe_spe_encode_fused (&view, n, r, z, eps, e->x, e->x, qhat, e->xk, NULL);
              }
            rpe_free (e->x);
            e->x = qhat;
          }
        rpe_free (z);
        rpe_free (eps);
        if (st != RPE_OK)
          return st;
        /* lhat = Qhat . Khat / sqrt(R): rpe_logits_rows DOT with d = R */
        e->spec = (RpeLogitsSpec) { RPE_LOGITS_DOT, n, H, r, e->x, e->xk, NULL, false };
      }
      break;
    }
  for (size_t i = 0; i < e->n_off; i++)
    {
      long k = e->k_min + (long) i;
      e->dist[i] = (double) labs (k);
    }
  return RPE_OK;
}

/* Logits of rows m0 .. m0 + nr - 1 of head h into e->rows (masked: -INFINITY). */
static RpeStatus
extra_logits (Extra *e, size_t h, size_t m0, size_t nr)
{
  size_t n = e->n;
  bool causal = e->cfg->causal;
  RpeStatus st;

  if (e->model->kind == RPE_CURVE_MODEL_SPE_EXACT)
    {
      for (size_t i = 0; i < nr; i++)
        for (size_t j = 0; j < n; j++)
          {
            size_t m = m0 + i;
            e->rows[i * n + j] = causal && j > m ? -INFINITY : (float) e->ltau[m + n - 1 - j];
          }
      return RPE_OK;
    }
  st = rpe_logits_rows (&e->spec, h, m0, nr, causal, e->rows, NULL);
  if (st == RPE_OK && e->post_scale != 1.0)
    for (size_t i = 0; i < nr * n; i++)
      e->rows[i] = (float) (e->rows[i] * e->post_scale);
  return st;
}

/* Exact SPE: l(tau) = sum_d c_d^2 Ptilde_hd(tau) / sqrt(D), in double. */
static RpeStatus
extra_exact_lags (Extra *e, size_t h)
{
  size_t n = e->n, len = 2 * n - 1;
  float *lags;
  RpeStatus st = RPE_OK;

  lags = rpe_alloc (len, sizeof (float), &st);
  if (lags == NULL)
    return st;
  memset (e->ltau, 0, len * sizeof (double));
  for (size_t d = 0; d < e->D && st == RPE_OK; d++)
    {
      st = rpe_spe_template_lags (e->model->spe, h, d, n, e->model->gated, lags);
      for (size_t i = 0; i < len && st == RPE_OK; i++)
        e->ltau[i] += e->c[d] * e->c[d] * (double) lags[i];
    }
  for (size_t i = 0; i < len; i++)
    e->ltau[i] /= sqrt ((double) e->D);
  rpe_free (lags);
  return st;
}

/* TI and monotonicity of one row profile (e->prof, e->valid) against pbar. */
static void
row_pe_metrics (Extra *e, const double *prof, const unsigned char *valid, double *ti, double *mono)
{
  double num = 0, den = 0;
  size_t cnt = 0;

  for (size_t i = 0; i < e->n_off; i++)
    if (valid[i])
      {
        double dv = prof[i] - e->pbar[i];

        num += dv * dv;
        den += e->pbar[i] * e->pbar[i];
        e->vx[cnt] = e->dist[i];
        e->vy[cnt] = prof[i];
        cnt++;
      }
  if (ti)
    *ti = den > 0 ? sqrt (num / den) : NAN;
  if (mono)
    {
      double rho = spearman (e->vx, e->vy, cnt, e->rx, e->ry, e->pairs);
      *mono = isnan (rho) ? NAN : 0.5 * (1.0 + rho);
    }
}

/* Validity mask of row m (offsets with 0 <= m - k < N_max). */
static void
row_valid (const Extra *e, size_t m, size_t limit, unsigned char *valid)
{
  for (size_t i = 0; i < e->n_off; i++)
    {
      long k = e->k_min + (long) i;
      long j = (long) m - k;
      valid[i] = j >= 0 && (size_t) j < limit;
    }
}

/* Metrics of one head into the four arrays (N_max each, may be NULL). */
static RpeStatus
extra_head (Extra *e, size_t h, double *distance, double *entropy, double *ti, double *mono,
            const RpeMonitor *monitor, size_t *done, size_t total)
{
  const RpeCurveModel *model = e->model;
  size_t n = e->n, len = 2 * n - 1;
  bool causal = e->cfg->causal, fast = model->kind == RPE_CURVE_MODEL_FASTRPB;
  const float *w = fast ? model->bias + (model->bias_per_head ? h * len : 0) : NULL;
  double lref = 0;
  bool pbar_done = false;
  RpeStatus st = RPE_OK;

  if (model->kind == RPE_CURVE_MODEL_SPE_EXACT && (st = extra_exact_lags (e, h)) != RPE_OK)
    return st;
  memset (e->pbar, 0, e->n_off * sizeof (double));
  memset (e->pcount, 0, e->n_off * sizeof (size_t));

  for (size_t m0 = 0; m0 < n && st == RPE_OK; m0 += e->block)
    {
      size_t nr = n - m0 < e->block ? n - m0 : e->block;

      if (rpe_monitor_cancelled (monitor))
        return RPE_ERROR_CANCELLED;
      if ((st = extra_logits (e, h, m0, nr)) != RPE_OK)
        return st;
      if (m0 == 0)
        lref = e->rows[0];
      if (!isfinite (lref))
        return RPE_ERROR_NOT_FINITE;

      for (size_t i = 0; i < nr; i++)
        {
          size_t m = m0 + i, end = causal ? m + 1 : n;
          const float *l = e->rows + i * n;
          double lmax = -INFINITY, sum = 0, dsum = 0, ent = 0;

          for (size_t j = 0; j < end; j++)
            {
              if (isnan (l[j]))
                return RPE_ERROR_NOT_FINITE;
              if (l[j] > lmax)
                lmax = l[j];
            }
          if (!isfinite (lmax))
            return RPE_ERROR_NOT_FINITE;
          /* row softmax a (in e->row) */
          for (size_t j = 0; j < end; j++)
            sum += (e->row[j] = exp ((double) l[j] - lmax));
          for (size_t j = 0; j < end; j++)
            e->row[j] /= sum;
          if (fast)
            {
              /* B = A + W; distance/entropy from |B| normalised */
              double asum = 0;

              for (size_t j = 0; j < end; j++)
                {
                  e->row[j] += w[m + n - 1 - j];
                  asum += fabs (e->row[j]);
                }
              for (size_t j = 0; j < end; j++)
                {
                  double p = asum > 0 ? fabs (e->row[j]) / asum : 0;

                  dsum += p * fabs ((double) m - (double) j);
                  if (p > 0)
                    ent -= p * log (p);
                }
            }
          else
            for (size_t j = 0; j < end; j++)
              {
                double p = e->row[j];

                dsum += p * fabs ((double) m - (double) j);
                if (p > 0)
                  ent -= p * log (p);
              }
          if (distance)
            distance[m] = dsum;
          if (entropy)
            entropy[m] = ent;

          /* the unnormalised profile u(m, m - k) over the window */
          row_valid (e, m, n, e->valid);
          for (size_t o = 0; o < e->n_off; o++)
            {
              long k = e->k_min + (long) o;
              size_t j;

              if (!e->valid[o])
                {
                  e->prof[o] = 0;
                  continue;
                }
              j = (size_t) ((long) m - k);
              e->prof[o] = fast ? e->row[j] : exp ((double) l[j] - lref);
            }
          if (m < e->nt)
            {
              /* training row: keep its profile; pairs inside the training range feed pbar */
              memcpy (e->train + m * e->n_off, e->prof, e->n_off * sizeof (double));
              for (size_t o = 0; o < e->n_off; o++)
                {
                  long j = (long) m - (e->k_min + (long) o);
                  if (j >= 0 && (size_t) j < e->nt)
                    {
                      e->pbar[o] += e->prof[o];
                      e->pcount[o]++;
                    }
                }
              if (m + 1 == e->nt)
                {
                  for (size_t o = 0; o < e->n_off; o++)
                    e->pbar[o] = e->pcount[o] ? e->pbar[o] / (double) e->pcount[o] : 0;
                  pbar_done = true;
                  for (size_t t = 0; t < e->nt; t++)
                    {
                      row_valid (e, t, n, e->valid);
                      row_pe_metrics (e, e->train + t * e->n_off, e->valid, ti ? &ti[t] : NULL,
                                      mono ? &mono[t] : NULL);
                    }
                }
            }
          else if (pbar_done)
            row_pe_metrics (e, e->prof, e->valid, ti ? &ti[m] : NULL, mono ? &mono[m] : NULL);
        }
      *done += nr;
      rpe_monitor_progress (monitor, (double) *done / (double) total);
    }
  return st;
}

RpeStatus
rpe_curve_extrapolation (const RpeCurveExtrapolationConfig *cfg,
                         const RpeCurveModel               *model,
                         size_t                             head,
                         double                            *distance,
                         double                            *entropy,
                         double                            *translation,
                         double                            *monotonicity,
                         const RpeMonitor                  *monitor)
{
  Extra e;
  RpeStatus st;
  size_t h0, h1, done = 0, total;
  double *tmp = NULL;

  if ((st = extra_prepare (&e, cfg, model)) != RPE_OK)
    goto out;
  if (head != RPE_CURVE_ALL && head >= e.H)
    {
      st = RPE_ERROR_INVALID_ARGUMENT;
      goto out;
    }
  h0 = head == RPE_CURVE_ALL ? 0 : head;
  h1 = head == RPE_CURVE_ALL ? e.H : head + 1;
  if ((st = rpe_size_bytes (&total, 1, h1 - h0, e.n, 1, 1)) != RPE_OK)
    goto out;

  if (h1 - h0 == 1)
    st = extra_head (&e, h0, distance, entropy, translation, monotonicity, monitor, &done, total);
  else
    {
      /* mean over heads: per-head results in tmp (4 x N), summed into the outputs */
      double *outs[4] = { distance, entropy, translation, monotonicity };

      tmp = rpe_alloc (4 * e.n, sizeof (double), &st);
      if (tmp == NULL)
        goto out;
      for (size_t a = 0; a < 4; a++)
        if (outs[a])
          memset (outs[a], 0, e.n * sizeof (double));
      for (size_t h = h0; h < h1 && st == RPE_OK; h++)
        {
          st = extra_head (&e, h, tmp, tmp + e.n, tmp + 2 * e.n, tmp + 3 * e.n, monitor, &done, total);
          for (size_t a = 0; a < 4 && st == RPE_OK; a++)
            if (outs[a])
              for (size_t m = 0; m < e.n; m++)
                outs[a][m] += tmp[a * e.n + m] / (double) (h1 - h0);
        }
    }

out:
  rpe_free (tmp);
  extra_clear (&e);
  return st;
}

typedef struct
{
  const RpeMonitor *parent;
  size_t            index;
  size_t            count;
} SubProgress;

static void
sub_progress (double fraction, void *user_data)
{
  SubProgress *sp = user_data;

  rpe_monitor_progress (sp->parent, ((double) sp->index + fraction) / (double) sp->count);
}

RpeCurveTable *
rpe_curve_extrapolation_table (const RpeCurveExtrapolationConfig *cfg,
                               const RpeCurveModel               *models,
                               size_t                             n_models,
                               size_t                             head,
                               RpeStatus                         *status,
                               const RpeMonitor                  *monitor)
{
  static const char *suffix[4] = { "distance", "entropy", "ti", "mono" };
  RpeCurveTable *t = NULL;
  RpeStatus st = RPE_OK;
  size_t col0 = 0, window;

  if (cfg == NULL || models == NULL || n_models == 0 || cfg->n_max == 0)
    {
      st = RPE_ERROR_INVALID_ARGUMENT;
      goto out;
    }
  /* the whole table (m and 4 columns per model) and a model's 4 x N_max working
   * rows, against the budget before anything is allocated or computed */
  {
    size_t cols, bytes;

    if (!rpe_size_mul (n_models, 4, &cols) || !rpe_size_add (cols, 1 + 4, &cols)
        || (st = rpe_size_bytes (&bytes, sizeof (double), cfg->n_max, cols, 1, 1)) != RPE_OK)
      {
        st = RPE_ERROR_OVERFLOW;
        goto out;
      }
    if ((st = rpe_budget_check (bytes)) != RPE_OK)
      goto out;
  }
  t = rpe_curve_table_new (cfg->n_max, &st);
  if (t == NULL)
    goto out;
  if ((st = rpe_curve_table_add_column (t, "m", NULL, NULL)) != RPE_OK)
    goto out;
  for (size_t m = 0; m < cfg->n_max; m++)
    t->cols[0][m] = (double) m;
  window = cfg->window ? cfg->window : (cfg->n_train < 64 ? cfg->n_train : 64);
  if ((st = rpe_curve_table_set_meta_double (t, "n_train", (double) cfg->n_train)) != RPE_OK
      || (st = rpe_curve_table_set_meta_double (t, "n_max", (double) cfg->n_max)) != RPE_OK
      || (st = rpe_curve_table_set_meta_double (t, "window", (double) window)) != RPE_OK
      || (st = rpe_curve_table_set_meta (t, "causal", cfg->causal ? "true" : "false")) != RPE_OK)
    goto out;

  for (size_t i = 0; i < n_models && st == RPE_OK; i++)
    {
      SubProgress sp = { monitor, i, n_models };
      RpeMonitor sub = { monitor ? monitor->cancel : NULL, sub_progress, &sp };
      double *cols[4];

      if (models[i].name == NULL)
        {
          st = RPE_ERROR_INVALID_ARGUMENT;
          break;
        }
      for (size_t a = 0; a < 4 && st == RPE_OK; a++)
        {
          char name[256];

          if (snprintf (name, sizeof name, "%s_%s", models[i].name, suffix[a]) >= (int) sizeof name)
            st = RPE_ERROR_INVALID_ARGUMENT;
          else
            st = rpe_curve_table_add_column (t, name, NULL, a == 0 ? &col0 : NULL);
        }
      if (st != RPE_OK)
        break;
      for (size_t a = 0; a < 4; a++)
        cols[a] = t->cols[col0 + a];
      st = rpe_curve_extrapolation (cfg, &models[i], head, cols[0], cols[1], cols[2], cols[3], &sub);
    }

out:
  if (st != RPE_OK)
    {
      rpe_curve_table_free (t);
      t = NULL;
    }
  if (status)
    *status = st;
  return t;
}

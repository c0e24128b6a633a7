/* rpe-attention.c: attention maps from logits, streaming rows, and the APE
 * baseline (docs/math.md, sections 4 and 9). */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <fftw3.h>
#include <cblas.h>

#include "rpe-alloc.h"
#include "rpe-attention.h"
#include "rpe-attention-private.h"
#include "rpe-gemm-private.h"
#include "rpe-parallel.h"
#include "rpe-vec-private.h"
#include "rpe-parallel.h"
#include "rpe-skew.h"

/* Rows per cancellation / progress check in the full-map routines. */
#define ROW_CHUNK 256

/* ---- softmax ---- */

/* ---- vectorised exp: v8_exp in rpe-vec-private.h ---- */

/* exp of n floats (x and y may be the same array) */
static inline __attribute__ ((always_inline)) void
exp_kernel (const float *x,
            float       *y,
            size_t       n)
{
  size_t i = 0;

  for (; i + 8 <= n; i += 8)
    v8_store (y + i, v8_exp (v8_load (x + i)));
  if (i < n)
    {
      float buf[8] = { 0 };

      memcpy (buf, x + i, (n - i) * sizeof (float));
      v8_store (buf, v8_exp (v8_load (buf)));
      memcpy (y + i, buf, (n - i) * sizeof (float));
    }
}

/* The row max of r[0 .. n-1]; *has_nan set when a NaN is present.  -INFINITY
 * for n == 0. */
static inline __attribute__ ((always_inline)) float
max_kernel (const float *r,
            size_t       n,
            bool        *has_nan)
{
  v8f m = SPLAT8 (-INFINITY);
  v8i bad = SPLAT8 (0);
  float max = -INFINITY;
  size_t i = 0;

  for (; i + 8 <= n; i += 8)
    {
      v8f v = v8_load (r + i);

      bad |= v != v;
      m = v8_select (v > m, v, m);
    }
  for (int l = 0; l < 8; l++)
    {
      if (bad[l])
        *has_nan = true;
      if (m[l] > max)
        max = m[l];
    }
  for (; i < n; i++)
    {
      if (isnan (r[i]))
        *has_nan = true;
      if (r[i] > max)
        max = r[i];
    }
  return max;
}

/* r[j] = exp(r[j] - max) for j < n, returns the sum (in double over blocks of
 * 512 float partial sums) */
static inline __attribute__ ((always_inline)) double
exp_sum_kernel (float  *r,
                size_t  n,
                float   max)
{
  const v8f mv = SPLAT8 (max);
  double sum = 0;
  size_t i = 0;

  while (i + 8 <= n)
    {
      v8f acc = SPLAT8 (0.0f);
      size_t end = i + 512 < n ? i + 512 : n;

      for (; i + 8 <= end; i += 8)
        {
          v8f e = v8_exp (v8_load (r + i) - mv);

          v8_store (r + i, e);
          acc += e;
        }
      for (int l = 0; l < 8; l++)
        sum += acc[l];
    }
  if (i < n)
    {
      v8f b = SPLAT8 (-INFINITY);

      for (size_t j = i; j < n; j++)
        b[j - i] = r[j];
      b = v8_exp (b - mv);
      for (size_t j = i; j < n; j++)
        {
          r[j] = b[j - i];
          sum += b[j - i];
        }
    }
  return sum;
}

static inline __attribute__ ((always_inline)) void
scale_kernel (float  *r,
              size_t  n,
              float   s)
{
  const v8f sv = SPLAT8 (s);
  size_t i = 0;

  for (; i + 8 <= n; i += 8)
    v8_store (r + i, v8_load (r + i) * sv);
  for (; i < n; i++)
    r[i] *= s;
}

/* One row, in place; only the first n_cols entries take part, the rest
 * (causally masked) become 0. */
static inline __attribute__ ((always_inline)) RpeStatus
softmax_row_kernel (float  *r,
                    size_t  n,
                    size_t  n_cols)
{
  bool has_nan = false;
  float max = max_kernel (r, n_cols, &has_nan);

  if (has_nan)
    return RPE_ERROR_NOT_FINITE;
  /* +inf, or -inf in every entry the mask keeps: logits that overflowed.  The
   * softmax's limit (the +inf entries sharing the mass, an all-zero row) would
   * be a degenerate map that looks like a result: refused. */
  if (max == INFINITY || max == -INFINITY)
    return RPE_ERROR_RANGE;
  {
    /* Subtract the row max: every exponent is <= 0, the max gives exactly 1,
     * so the sum is >= 1 and nothing overflows.  x - max may round to -inf
     * for differences beyond FLT_MAX; exp(-inf) = 0 is still right. */
    double sum = exp_sum_kernel (r, n_cols, max);

    scale_kernel (r, n_cols, (float) (1.0 / sum));
  }
  if (n_cols < n)
    memset (r + n_cols, 0, (n - n_cols) * sizeof (float));
  return RPE_OK;
}

/* Rows g = 0 .. count-1 of a stack of rows of n columns; row g is row
 * (m0 + g) mod period (period 0: no wrap) of its map for the causal mask.
 * Returns the first error; rows before it are transformed. */
static inline __attribute__ ((always_inline)) RpeStatus
softmax_rows_kernel (float  *rows,
                     size_t  count,
                     size_t  n,
                     size_t  m0,
                     size_t  period,
                     bool    causal)
{
  for (size_t g = 0; g < count; g++)
    {
      size_t n_cols = n, m = period ? (m0 + g) % period : m0 + g;
      RpeStatus st;

      /* Causal: column j survives iff j <= m. */
      if (causal && m < n)
        n_cols = m + 1;
      if ((st = softmax_row_kernel (rows + g * n, n, n_cols)) != RPE_OK)
        return st;
    }
  return RPE_OK;
}

#if defined(__x86_64__) && defined(__GNUC__)
#define SOFTMAX_HAVE_AVX2 1

static __attribute__ ((target ("avx2,fma"))) void
exp_avx2 (const float *x, float *y, size_t n)
{
  exp_kernel (x, y, n);
}

static __attribute__ ((target ("avx2,fma"))) RpeStatus
softmax_rows_avx2 (float *rows, size_t count, size_t n, size_t m0, size_t period, bool causal)
{
  return softmax_rows_kernel (rows, count, n, m0, period, causal);
}

static bool
have_avx2 (void)
{
  static int cached = -1;

  if (cached < 0)
    {
      __builtin_cpu_init ();
      /* RPE_SOFTMAX_GENERIC forces the baseline path (to test both) */
      cached = __builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma")
               && getenv ("RPE_SOFTMAX_GENERIC") == NULL;
    }
  return cached == 1;
}
#endif

static void
exp_generic (const float *x, float *y, size_t n)
{
  exp_kernel (x, y, n);
}

static RpeStatus
softmax_rows_generic (float *rows, size_t count, size_t n, size_t m0, size_t period, bool causal)
{
  return softmax_rows_kernel (rows, count, n, m0, period, causal);
}

void
rpe_exp_f (const float *x,
           float       *y,
           size_t       n)
{
  if (x == NULL || y == NULL)
    return;
#ifdef SOFTMAX_HAVE_AVX2
  if (have_avx2 ())
    {
      exp_avx2 (x, y, n);
      return;
    }
#endif
  exp_generic (x, y, n);
}

const char *
_rpe_softmax_kernel_name (void)
{
#ifdef SOFTMAX_HAVE_AVX2
  if (have_avx2 ())
    return "avx2";
#endif
  return "generic";
}

static RpeStatus
softmax_rows_any (float *rows, size_t count, size_t n, size_t m0, size_t period, bool causal)
{
#ifdef SOFTMAX_HAVE_AVX2
  if (have_avx2 ())
    return softmax_rows_avx2 (rows, count, n, m0, period, causal);
#endif
  return softmax_rows_generic (rows, count, n, m0, period, causal);
}

/* ---- threaded softmax over a stack of rows ---- */

/* Work below this many entries stays on the calling thread. */
#define PARALLEL_MIN ((size_t) 1 << 18)
#define MAX_UNITS_WORKERS 64

typedef struct
{
  float            *rows;
  size_t            total, n, m0, period, unit;
  bool              causal;
  const RpeMonitor *monitor;
  size_t            n_workers;
  RpeStatus         status[MAX_UNITS_WORKERS];
  size_t            fail_row[MAX_UNITS_WORKERS];
} SoftmaxJob;

/* worker w takes the contiguous units w * total / n_workers .. (w + 1) * total / n_workers */
static void
softmax_worker (size_t  w,
                size_t  n_workers,
                void   *data)
{
  SoftmaxJob *job = data;
  const size_t g0 = job->total * w / n_workers, g1 = job->total * (w + 1) / n_workers;

  job->status[w] = RPE_OK;
  job->fail_row[w] = SIZE_MAX;
  for (size_t g = g0; g < g1; g += job->unit)
    {
      size_t b = g1 - g < job->unit ? g1 - g : job->unit;
      RpeStatus st;

      if (rpe_monitor_cancelled (job->monitor))
        {
          job->status[w] = RPE_ERROR_CANCELLED;
          job->fail_row[w] = g;
          return;
        }
      st = softmax_rows_any (job->rows + g * job->n, b, job->n, job->m0 + g, job->period, job->causal);
      if (st != RPE_OK)
        {
          job->status[w] = st;
          job->fail_row[w] = g;
          return;
        }
      if (w == 0)
        rpe_monitor_progress (job->monitor, (double) (g + b - g0) / (double) (g1 - g0));
    }
}

static RpeStatus
softmax_stack (float            *rows,
               size_t            total,
               size_t            n,
               size_t            m0,
               size_t            period,
               bool              causal,
               const RpeMonitor *monitor)
{
  SoftmaxJob job;
  size_t workers = rpe_parallel_threads (), best = SIZE_MAX;
  RpeStatus st = RPE_OK;

  if (total == 0 || n == 0)
    return RPE_OK;
  if (workers > MAX_UNITS_WORKERS)
    workers = MAX_UNITS_WORKERS;
  if (total * n < PARALLEL_MIN || total < 2)
    workers = 1;
  if (workers > total)
    workers = total;
  job = (SoftmaxJob) { rows, total, n, m0, period, ROW_CHUNK, causal, monitor, workers, { 0 }, { 0 } };
  if (workers == 1)
    softmax_worker (0, 1, &job);
  else
    rpe_parallel_run (workers, softmax_worker, &job);
  /* the error of the first failing row (cancellation included) */
  for (size_t w = 0; w < workers; w++)
    if (job.status[w] != RPE_OK && job.fail_row[w] < best)
      {
        best = job.fail_row[w];
        st = job.status[w];
      }
  return st;
}

RpeStatus
rpe_softmax_row_block (float  *rows,
                       size_t  n_rows,
                       size_t  n,
                       size_t  m0,
                       bool    causal)
{
  size_t count;

  if (rows == NULL && n_rows > 0 && n > 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (n_rows, n, &count))
    return RPE_ERROR_OVERFLOW;
  return softmax_stack (rows, n_rows, n, m0, 0, causal, NULL);
}

RpeStatus
rpe_softmax_rows (float            *logits,
                  size_t            n_maps,
                  size_t            n,
                  bool              causal,
                  const RpeMonitor *monitor)
{
  size_t per_map, total;

  if (!rpe_size_mul (n, n, &per_map) || !rpe_size_mul (per_map, n_maps, &total))
    return RPE_ERROR_OVERFLOW;
  if (total == 0)
    return RPE_OK;
  if (logits == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (rpe_monitor_cancelled (monitor))
    return RPE_ERROR_CANCELLED;
  return softmax_stack (logits, n_maps * n, n, 0, n, causal, monitor);
}

void
rpe_attention_display_transform (float  *a,
                                 size_t  count)
{
  /* min(1, a^0.4 / 0.02^0.4) = min(1, (a / 0.02)^0.4); negatives and NaN map to 0. */
  if (a == NULL)
    return;
  for (size_t i = 0; i < count; i++)
    {
      float x = a[i] > 0.0f ? a[i] : 0.0f;   /* also sends NaN to 0 */
      float y = powf (x / 0.02f, 0.4f);

      a[i] = y < 1.0f ? y : 1.0f;
    }
}

/* ---- APE ---- */

RpeStatus
rpe_ape_encoding (size_t  n,
                  size_t  d,
                  float  *p)
{
  size_t count;

  if (p == NULL || n == 0 || d == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (n, d, &count))
    return RPE_ERROR_OVERFLOW;

  /* p[m, 2i] = sin(m w_i), p[m, 2i+1] = cos(m w_i), w_i = 10000^(-2i/D)
   * (Vaswani et al. 2017); for odd D the last column is a sine. */
  for (size_t j = 0; j < d; j += 2)
    {
      double w = pow (10000.0, -(double) j / (double) d);

      for (size_t m = 0; m < n; m++)
        {
          double a = (double) m * w;

          p[m * d + j] = (float) sin (a);
          if (j + 1 < d)
            p[m * d + j + 1] = (float) cos (a);
        }
    }
  return RPE_OK;
}

/* Validation shared by the q/k logits routines. */
static RpeStatus
qk_check (size_t       n,
          size_t       n_heads,
          size_t       d,
          const float *q,
          const float *k)
{
  size_t ld, count;

  if (q == NULL || k == NULL || n == 0 || n_heads == 0 || d == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (n_heads, d, &ld) || !rpe_size_mul (ld, n, &count))
    return RPE_ERROR_OVERFLOW;
  if (n > INT_MAX || ld > INT_MAX)
    return RPE_ERROR_OVERFLOW;
  if (!rpe_all_finite_f (q, count) || !rpe_all_finite_f (k, count))
    return RPE_ERROR_NOT_FINITE;
  return RPE_OK;
}

/* dst (rows, D) = x[m0 .., h, :] (+ p[m0 .., :] when p != NULL). */
static void
gather_head (const float *x,
             const float *p,
             size_t       n_heads,
             size_t       d,
             size_t       h,
             size_t       m0,
             size_t       rows,
             float       *dst)
{
  for (size_t i = 0; i < rows; i++)
    {
      const float *src = x + ((m0 + i) * n_heads + h) * d;

      if (p != NULL)
        for (size_t j = 0; j < d; j++)
          dst[i * d + j] = src[j] + p[(m0 + i) * d + j];
      else
        memcpy (dst + i * d, src, d * sizeof (float));
    }
}

RpeStatus
rpe_ape_logits (size_t            n,
                size_t            n_heads,
                size_t            d,
                const float      *q,
                const float      *k,
                float            *logits,
                const RpeMonitor *monitor)
{
  RpeStatus st;
  size_t nd, per_map;
  float *p = NULL, *qp = NULL, *kp = NULL;
  const float scale = (float) (1.0 / sqrt ((double) d));

  if ((st = qk_check (n, n_heads, d, q, k)) != RPE_OK)
    return st;
  if (logits == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (n, d, &nd) || !rpe_size_mul (n, n, &per_map)
      || !rpe_size_mul (per_map, n_heads, &(size_t) { 0 }))
    return RPE_ERROR_OVERFLOW;

  p = rpe_alloc (nd, sizeof (float), &st);
  if (p != NULL)
    qp = rpe_alloc (nd, sizeof (float), &st);
  if (qp != NULL)
    kp = rpe_alloc (nd, sizeof (float), &st);
  if (kp == NULL)
    goto done;
  rpe_ape_encoding (n, d, p);

  for (size_t h = 0; h < n_heads; h++)
    {
      if (rpe_monitor_cancelled (monitor))
        {
          st = RPE_ERROR_CANCELLED;
          goto done;
        }
      gather_head (q, p, n_heads, d, h, 0, n, qp);
      gather_head (k, p, n_heads, d, h, 0, n, kp);
      cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasTrans,
                   (int) n, (int) n, (int) d,
                   scale, qp, (int) d, kp, (int) d,
                   0.0f, logits + h * per_map, (int) n);
      rpe_monitor_progress (monitor, (double) (h + 1) / (double) n_heads);
    }

done:
  rpe_free (kp);
  rpe_free (qp);
  rpe_free (p);
  return st;
}

/* ---- streaming rows ---- */

RpeStatus
rpe_logits_spec_check (const RpeLogitsSpec *spec)
{
  if (spec == NULL || (spec->kind != RPE_LOGITS_DOT && spec->kind != RPE_LOGITS_APE))
    return RPE_ERROR_INVALID_ARGUMENT;
  return qk_check (spec->n, spec->n_heads, spec->d, spec->q, spec->k);
}

/* RPE_ERROR_RANGE if an entry that the causal mask keeps is not finite: logits
 * computed from finite inputs that overflowed float32 (a uniform or all-zero
 * map would follow from the softmax's limits). */
static RpeStatus
unmasked_finite (const float *rows,
                 size_t       n_rows,
                 size_t       n,
                 size_t       m0,
                 bool         causal)
{
  for (size_t i = 0; i < n_rows; i++)
    {
      size_t cols = causal && m0 + i + 1 < n ? m0 + i + 1 : n;

      if (!rpe_all_finite_f (rows + i * n, cols))
        return RPE_ERROR_RANGE;
    }
  return RPE_OK;
}

RpeStatus
rpe_attention_rows_func (size_t             n_cols,
                         size_t             m0,
                         size_t             n_rows,
                         size_t             chunk,
                         bool               causal,
                         RpeLogitsRowsFunc  func,
                         void              *user_data,
                         float             *out,
                         const RpeMonitor  *monitor)
{
  size_t count;

  if (func == NULL || out == NULL || n_cols == 0 || n_rows == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (n_rows, n_cols, &count) || !rpe_size_add (m0, n_rows, &(size_t) { 0 }))
    return RPE_ERROR_OVERFLOW;
  if (chunk == 0 || chunk > n_rows)
    chunk = n_rows;

  for (size_t r = 0; r < n_rows; r += chunk)
    {
      size_t b = n_rows - r < chunk ? n_rows - r : chunk;
      float *o = out + r * n_cols;
      RpeStatus st;

      if (rpe_monitor_cancelled (monitor))
        return RPE_ERROR_CANCELLED;
      if ((st = func (m0 + r, b, n_cols, o, user_data)) != RPE_OK)
        return st;
      if ((st = unmasked_finite (o, b, n_cols, m0 + r, causal)) != RPE_OK
          || (st = rpe_softmax_row_block (o, b, n_cols, m0 + r, causal)) != RPE_OK)
        return st;
      rpe_monitor_progress (monitor, (double) (r + b) / (double) n_rows);
    }
  return RPE_OK;
}

RpeStatus
rpe_logits_rows (const RpeLogitsSpec *spec,
                 size_t               head,
                 size_t               m0,
                 size_t               n_rows,
                 bool                 causal,
                 float               *out,
                 const RpeMonitor    *monitor)
{
  RpeStatus st = RPE_OK;
  size_t end, nd, rd;
  float *p = NULL, *qp = NULL, *kp = NULL;
  const float *qsrc, *ksrc;
  int lda;
  float scale;

  if (spec == NULL || out == NULL || n_rows == 0)
    return RPE_ERROR_INVALID_ARGUMENT;

  if (spec->kind == RPE_LOGITS_RELATIVE)
    {
      RpeRelSpec rs = {
        .n = spec->n, .n_heads = spec->n_heads, .d = spec->d,
        .q = spec->q, .k = spec->k, .rel = spec->rel,
        .rel_per_head = spec->rel_per_head, .causal = causal,
      };

      if (spec->k == NULL)  /* rpe_rel_logits_rows would return the bias alone */
        return RPE_ERROR_INVALID_ARGUMENT;
      if ((st = rpe_rel_logits_rows (&rs, head, m0, n_rows, out, monitor)) != RPE_OK)
        return st;
      return unmasked_finite (out, n_rows, spec->n, m0, causal);
    }
  if (spec->kind != RPE_LOGITS_DOT && spec->kind != RPE_LOGITS_APE)
    return RPE_ERROR_INVALID_ARGUMENT;

  if (spec->inputs_checked)
    {
      if (spec->q == NULL || spec->k == NULL || spec->n == 0 || spec->n_heads == 0 || spec->d == 0)
        return RPE_ERROR_INVALID_ARGUMENT;
      if (!rpe_size_mul (spec->n_heads, spec->d, &nd) || !rpe_size_mul (nd, spec->n, &nd)
          || spec->n > INT_MAX || spec->n_heads * spec->d > INT_MAX)
        return RPE_ERROR_OVERFLOW;
    }
  else if ((st = qk_check (spec->n, spec->n_heads, spec->d, spec->q, spec->k)) != RPE_OK)
    return st;
  if (head >= spec->n_heads || !rpe_size_add (m0, n_rows, &end) || end > spec->n)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (rpe_monitor_cancelled (monitor))
    return RPE_ERROR_CANCELLED;

  scale = (float) (1.0 / sqrt ((double) spec->d));
  if (spec->kind == RPE_LOGITS_DOT)
    {
      lda = (int) (spec->n_heads * spec->d);
      qsrc = spec->q + (m0 * spec->n_heads + head) * spec->d;
      ksrc = spec->k + head * spec->d;
    }
  else
    {
      if (!rpe_size_mul (spec->n, spec->d, &nd) || !rpe_size_mul (n_rows, spec->d, &rd))
        return RPE_ERROR_OVERFLOW;
      p = rpe_alloc (nd, sizeof (float), &st);
      if (p != NULL)
        kp = rpe_alloc (nd, sizeof (float), &st);
      if (kp != NULL)
        qp = rpe_alloc (rd, sizeof (float), &st);
      if (qp == NULL)
        goto done;
      rpe_ape_encoding (spec->n, spec->d, p);
      gather_head (spec->k, p, spec->n_heads, spec->d, head, 0, spec->n, kp);
      gather_head (spec->q, p, spec->n_heads, spec->d, head, m0, n_rows, qp);
      lda = (int) spec->d;
      qsrc = qp;
      ksrc = kp;
    }

  /* Causal: only columns < end can survive the mask. */
  cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasTrans,
               (int) n_rows, (int) (causal ? end : spec->n), (int) spec->d,
               scale, qsrc, lda, ksrc, lda,
               0.0f, out, (int) spec->n);
  if (causal)
    for (size_t i = 0; i < n_rows; i++)
      for (size_t j = m0 + i + 1; j < spec->n; j++)
        out[i * spec->n + j] = -INFINITY;
  /* q and k are finite: a non-finite logit is an overflow */
  st = unmasked_finite (out, n_rows, spec->n, m0, causal);
  rpe_monitor_progress (monitor, 1.0);

done:
  rpe_free (qp);
  rpe_free (kp);
  rpe_free (p);
  return st;
}

RpeStatus
rpe_attention_rows (const RpeLogitsSpec *spec,
                    size_t               head,
                    size_t               m0,
                    size_t               n_rows,
                    bool                 causal,
                    float               *out,
                    const RpeMonitor    *monitor)
{
  RpeStatus st = rpe_logits_rows (spec, head, m0, n_rows, causal, out, monitor);

  if (st != RPE_OK)
    return st;
  return rpe_softmax_row_block (out, n_rows, spec->n, m0, causal);
}

/* ---- threaded, fused row blocks ---- */

typedef struct
{
  const RpeLogitsSpec *spec;
  size_t               head, m0, n_rows, sub;
  bool                 causal;
  float               *out;
  const RpeMonitor    *monitor;
  RpeStatus            status[256];
} RowsJob;

static void
rows_worker (size_t worker, size_t n_workers, void *data)
{
  RowsJob *job = data;
  size_t n_sub = (job->n_rows + job->sub - 1) / job->sub;
  RpeStatus st = RPE_OK;

  /* sub-blocks worker, worker + n_workers, ...: each one's logits are softmaxed while they
   * are still in cache */
  for (size_t b = worker; b < n_sub && st == RPE_OK; b += n_workers)
    {
      size_t r = b * job->sub, nr = job->n_rows - r < job->sub ? job->n_rows - r : job->sub;

      if (rpe_monitor_cancelled (job->monitor))
        st = RPE_ERROR_CANCELLED;
      else
        st = rpe_attention_rows (job->spec, job->head, job->m0 + r, nr, job->causal,
                                 job->out + r * job->spec->n, NULL);
      if (worker == 0)
        rpe_monitor_progress (job->monitor, (double) (b + 1) / (double) n_sub);
    }
  job->status[worker] = st;
}

RpeStatus
rpe_attention_rows_parallel (const RpeLogitsSpec *spec,
                             size_t               head,
                             size_t               m0,
                             size_t               n_rows,
                             bool                 causal,
                             float               *out,
                             const RpeMonitor    *monitor)
{
  RpeLogitsSpec checked;
  RowsJob job;
  size_t workers, n_sub;
  RpeStatus st;

  if (spec == NULL || out == NULL || n_rows == 0 || spec->n == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (spec->kind == RPE_LOGITS_RELATIVE)
    return rpe_attention_rows (spec, head, m0, n_rows, causal, out, monitor);
  checked = *spec;
  if (!checked.inputs_checked)
    {
      if ((st = rpe_logits_spec_check (spec)) != RPE_OK)
        return st;
      checked.inputs_checked = true;
    }
  if (checked.kind == RPE_LOGITS_DOT)
    {
      size_t end;

      if (head >= checked.n_heads || !rpe_size_add (m0, n_rows, &end) || end > checked.n)
        return RPE_ERROR_INVALID_ARGUMENT;
      if (rpe_monitor_cancelled (monitor))
        return RPE_ERROR_CANCELLED;
      return _rpe_attention_dense_rows (&checked, head, m0, n_rows, causal, out, monitor);
    }
  memset (&job, 0, sizeof job);
  job.spec = &checked;
  job.head = head;
  job.m0 = m0;
  job.n_rows = n_rows;
  job.causal = causal;
  job.out = out;
  job.monitor = monitor;
  /* sub-blocks of about 1 MiB of logits (within L2), at least 32 rows for the sgemm */
  job.sub = ((size_t) 1 << 18) / spec->n;
  if (job.sub < 32)
    job.sub = 32;
  n_sub = (n_rows + job.sub - 1) / job.sub;
  workers = rpe_parallel_threads ();
  if (workers > n_sub)
    workers = n_sub;
  if (workers > sizeof job.status / sizeof job.status[0])
    workers = sizeof job.status / sizeof job.status[0];
  rpe_parallel_run (workers, rows_worker, &job);
  st = RPE_OK;
  for (size_t w = 0; w < workers; w++)
    if (job.status[w] != RPE_OK && (st == RPE_OK || job.status[w] == RPE_ERROR_CANCELLED))
      st = job.status[w];
  return st;
}

/* ---- streamed reduction to an image ---- */

typedef struct
{
  size_t            n, rows, cols, block;
  RpeMapReduce      reduce;
  RpeMapRowsFunc    func;
  void             *user_data;
  float            *image;
  const size_t     *col_start;   /* (cols + 1): first column of each pixel column */
  const RpeMonitor *monitor;
  RpeStatus         status[256];
} ReduceJob;

/* First map row of pixel row p: ceil (p n / rows) (pixel of row m is floor (m rows / n)). */
static size_t
bin_start (size_t p, size_t n, size_t pixels)
{
  return (size_t) (((uint64_t) p * n + pixels - 1) / pixels);
}

static void
reduce_worker (size_t worker, size_t n_workers, void *data)
{
  ReduceJob *job = data;
  const size_t n = job->n, rows = job->rows, cols = job->cols;
  const size_t p_begin = rows * worker / n_workers, p_end = rows * (worker + 1) / n_workers;
  const bool by_max = job->reduce == RPE_MAP_REDUCE_MAX, by_abs = job->reduce == RPE_MAP_REDUCE_MAX_ABS;
  RpeStatus st = RPE_OK;
  float *buf = rpe_alloc (job->block * n, sizeof (float), &st);

  for (size_t i = p_begin; buf != NULL && i < p_end && st == RPE_OK; )
    {
      /* whole pixel rows i .. i1 - 1 in one block of map rows m0 .. m1 - 1 */
      size_t m0 = bin_start (i, n, rows), i1 = i + 1, m1 = bin_start (i + 1, n, rows);

      while (i1 < p_end && bin_start (i1 + 1, n, rows) - m0 <= job->block)
        m1 = bin_start (++i1, n, rows);
      if (rpe_monitor_cancelled (job->monitor))
        {
          st = RPE_ERROR_CANCELLED;
          break;
        }
      if ((st = job->func (m0, m1 - m0, buf, job->user_data)) != RPE_OK)
        break;
      for (size_t p = i; p < i1; p++)
        {
          size_t r0 = bin_start (p, n, rows) - m0, r1 = bin_start (p + 1, n, rows) - m0;
          float *sum = buf + r0 * n;
          float *out = job->image + p * cols;

          /* the pixel row's map rows elementwise into its first row (vectorised) ... */
          for (size_t r = r0 + 1; r < r1; r++)
            {
              const float *row = buf + r * n;

              if (by_abs)
                for (size_t c = 0; c < n; c++)
                  sum[c] = fabsf (row[c]) > fabsf (sum[c]) ? row[c] : sum[c];
              else if (by_max)
                for (size_t c = 0; c < n; c++)
                  sum[c] = row[c] > sum[c] ? row[c] : sum[c];
              else
                rpe_axpy_f (sum, row, 1.0f, n);
            }
          /* ... then each pixel's contiguous run of columns */
          for (size_t j = 0; j < cols; j++)
            {
              size_t c0 = job->col_start[j], c1 = job->col_start[j + 1];

              if (by_max || by_abs)
                {
                  float best = sum[c0];

                  for (size_t c = c0 + 1; c < c1; c++)
                    best = by_abs ? (fabsf (sum[c]) > fabsf (best) ? sum[c] : best)
                                  : (sum[c] > best ? sum[c] : best);
                  out[j] = best;
                }
              else
                {
                  double acc = 0.0;

                  for (size_t c = c0; c < c1; c++)
                    acc += sum[c];
                  out[j] = (float) (acc / ((double) (r1 - r0) * (double) (c1 - c0)));
                }
            }
        }
      if (worker == 0)
        rpe_monitor_progress (job->monitor, (double) (i1 - p_begin) / (double) (p_end - p_begin));
      i = i1;
    }
  rpe_free (buf);
  job->status[worker] = st;
}

RpeStatus
rpe_map_reduce (size_t            n,
                size_t            rows,
                size_t            cols,
                RpeMapReduce      reduce,
                size_t            block_floats,
                RpeMapRowsFunc    func,
                void             *user_data,
                float            *image,
                const RpeMonitor *monitor)
{
  size_t count, per_row, block, workers, *col_start;
  ReduceJob job;
  RpeStatus st = RPE_OK;

  if (func == NULL || image == NULL || n == 0 || rows == 0 || cols == 0 || rows > n || cols > n)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (rows, cols, &count))
    return RPE_ERROR_OVERFLOW;
  /* the most map rows one pixel row covers: ceil (n / rows) */
  per_row = (n + rows - 1) / rows;
  block = block_floats / n;
  if (block < per_row)
    block = per_row;
  if (block > n)
    block = n;
  if (!rpe_size_mul (block, n, &(size_t) { 0 }))
    return RPE_ERROR_OVERFLOW;
  workers = rpe_parallel_threads ();
  if (workers > rows)
    workers = rows;
  if (workers > sizeof job.status / sizeof job.status[0])
    workers = sizeof job.status / sizeof job.status[0];
  /* each worker holds a block: fall back to one if they do not all fit */
  if (!rpe_size_mul (block * n, workers * sizeof (float), &(size_t) { 0 })
      || rpe_budget_check (block * n * workers * sizeof (float)) != RPE_OK)
    workers = 1;
  if ((col_start = rpe_alloc (cols + 1, sizeof (size_t), &st)) == NULL)
    return st;
  for (size_t j = 0; j <= cols; j++)
    col_start[j] = bin_start (j, n, cols);

  memset (&job, 0, sizeof job);
  job.n = n;
  job.rows = rows;
  job.cols = cols;
  job.block = block;
  job.reduce = reduce;
  job.func = func;
  job.user_data = user_data;
  job.image = image;
  job.col_start = col_start;
  job.monitor = monitor;
  rpe_parallel_run (workers, reduce_worker, &job);
  for (size_t w = 0; w < workers; w++)
    if (job.status[w] != RPE_OK && (st == RPE_OK || job.status[w] == RPE_ERROR_CANCELLED))
      st = job.status[w];
  rpe_free (col_start);
  if (st == RPE_OK)
    rpe_monitor_progress (monitor, 1.0);
  return st;
}

/* ---- fused logits -> online softmax -> image (rpe_attention_map_reduce) ---- */

#define FUSED_ROWS 256     /* map rows per logits tile */
#define FUSED_COLS 512     /* columns per logits tile: 256 x 512 floats = 512 KiB */

static inline __attribute__ ((always_inline)) float
run_sum (const float *x,
         size_t       len)
{
  v8f acc = SPLAT8 (0.0f);
  float s = 0.0f;
  size_t i = 0;

  for (; i + 8 <= len; i += 8)
    acc += v8_load (x + i);
  for (; i < len; i++)
    s += x[i];
  return s + ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

/* The max of r[0 .. n-1] (-INFINITY for n == 0), four independent accumulators; NaNs are
 * skipped (the caller finds them in the exps). */
static inline __attribute__ ((always_inline)) float
max_fast_kernel (const float *r,
                 size_t       n)
{
  v8f m0 = SPLAT8 (-INFINITY), m1 = m0, m2 = m0, m3 = m0;
  float max = -INFINITY;
  size_t i = 0;

  for (; i + 32 <= n; i += 32)
    {
      v8f a = v8_load (r + i), b = v8_load (r + i + 8), c = v8_load (r + i + 16), d = v8_load (r + i + 24);

      m0 = v8_select (a > m0, a, m0);
      m1 = v8_select (b > m1, b, m1);
      m2 = v8_select (c > m2, c, m2);
      m3 = v8_select (d > m3, d, m3);
    }
  for (; i + 8 <= n; i += 8)
    {
      v8f a = v8_load (r + i);

      m0 = v8_select (a > m0, a, m0);
    }
  m0 = v8_select (m1 > m0, m1, m0);
  m2 = v8_select (m3 > m2, m3, m2);
  m0 = v8_select (m2 > m0, m2, m0);
  for (int l = 0; l < 8; l++)
    max = m0[l] > max ? m0[l] : max;
  for (; i < n; i++)
    max = r[i] > max ? r[i] : max;
  return max;
}

/* exp (x) for x <= 0 or NaN (no overflow handling: the fused softmax's arguments are
 * logit - running max): the polynomial of v8_exp, x < -104 gives 0, NaN gives NaN. */
static inline __attribute__ ((always_inline)) v8f
v8_exp_nonpos (v8f x)
{
  const v8f lo = SPLAT8 (-104.0f);

  return v8_exp_poly (v8_select (x < lo, lo, x));
}

/* r[j] = exp (r[j] - max) for j < n (every r[j] <= max, or NaN), returns the sum (float
 * partial sums of 512 entries, added in double); NaN in, NaN out. */
static inline __attribute__ ((always_inline)) double
exp_sum_nonpos_kernel (float  *r,
                       size_t  n,
                       float   max)
{
  const v8f mv = SPLAT8 (max);
  double sum = 0;
  size_t i = 0;

  while (i + 8 <= n)
    {
      v8f acc0 = SPLAT8 (0.0f), acc1 = acc0;
      size_t end = i + 512 < n ? i + 512 : n;

      for (; i + 16 <= end; i += 16)
        {
          v8f e0 = v8_exp_nonpos (v8_load (r + i) - mv), e1 = v8_exp_nonpos (v8_load (r + i + 8) - mv);

          v8_store (r + i, e0);
          v8_store (r + i + 8, e1);
          acc0 += e0;
          acc1 += e1;
        }
      for (; i + 8 <= end; i += 8)
        {
          v8f e = v8_exp_nonpos (v8_load (r + i) - mv);

          v8_store (r + i, e);
          acc0 += e;
        }
      acc0 += acc1;
      for (int l = 0; l < 8; l++)
        sum += acc0[l];
    }
  for (; i < n; i++)
    {
      v8f b = SPLAT8 (0.0f);

      b[0] = r[i] - max;
      r[i] = v8_exp_nonpos (b)[0];
      sum += r[i];
    }
  return sum;
}

/* Bin of column c: floor (c cols / n) (rpe_map_reduce's binning). */
static inline size_t
col_bin_of (size_t c, size_t n, size_t cols)
{
  return (size_t) (((uint64_t) c * cols) / n);
}

/* One row's tile of logits row[0 .. lim-1] (columns c0 ..): updates the row's running max
 * *rmax and sum *rsum (rescaling acc when the max grows) and its per-bin accumulators acc
 * (cols): sums of exp (logit - max) for MEAN, maxima of the logits for MAX.  false if the
 * tile's logits are not all finite (nothing changed then but row's contents). */
static inline __attribute__ ((always_inline)) bool
fused_row_kernel (float        *row,
                  size_t        lim,
                  size_t        c0,
                  size_t        n,
                  size_t        cols,
                  bool          by_max,
                  float        *acc,
                  float        *rmax,
                  double       *rsum)
{
  float tmax = max_fast_kernel (row, lim), m_old = *rmax, m;
  size_t j = col_bin_of (c0, n, cols), c = c0, end = c0 + lim;
  double s;

  if (tmax == INFINITY)
    return false;
  if (by_max)
    {
      /* bin maxima of the logits, before the exps overwrite the row */
      for (; c < end; j++)
        {
          size_t next = (size_t) (((uint64_t) (j + 1) * n + cols - 1) / cols);
          size_t stop = next < end ? next : end;
          float v = max_fast_kernel (row + (c - c0), stop - c);

          acc[j] = v > acc[j] ? v : acc[j];
          c = stop;
        }
    }
  m = tmax > m_old ? tmax : m_old;
  if (m > m_old && m_old != -INFINITY)
    {
      float f = expf (m_old - m);

      *rsum *= f;
      if (!by_max)
        scale_kernel (acc, col_bin_of (c0, n, cols) + 1, f);
    }
  *rmax = m;
  if (m == -INFINITY)
    return true;   /* every entry of the row so far is -inf: nothing to add */
  s = exp_sum_nonpos_kernel (row, lim, m);
  if (s != s)
    return false;   /* NaN logits */
  *rsum += s;
  if (!by_max)
    {
      if (cols == n)
        rpe_axpy_f (acc + c0, row, 1.0f, lim);
      else
        for (c = c0, j = col_bin_of (c0, n, cols); c < end; j++)
          {
            size_t next = (size_t) (((uint64_t) (j + 1) * n + cols - 1) / cols);
            size_t stop = next < end ? next : end;

            acc[j] += run_sum (row + (c - c0), stop - c);
            c = stop;
          }
    }
  return true;
}

/* A finished row into its pixel row: acc / sum (MEAN, divided by the bin's size later), or
 * the largest weight exp (max logit - row max) / sum (MAX). */
static inline __attribute__ ((always_inline)) void
fused_finish_kernel (const float *acc,
                     size_t       cols,
                     bool         by_max,
                     float        rmax,
                     double       rsum,
                     float       *pixels)
{
  if (rmax == -INFINITY || !(rsum > 0.0))
    return;   /* an all-masked row has no weight anywhere */
  if (by_max)
    {
      const v8f mv = SPLAT8 (rmax), iv = SPLAT8 ((float) (1.0 / rsum));
      size_t j = 0;

      for (; j + 8 <= cols; j += 8)
        {
          v8f w = v8_exp (v8_load (acc + j) - mv) * iv, p = v8_load (pixels + j);

          v8_store (pixels + j, v8_select (w > p, w, p));
        }
      for (; j < cols; j++)
        {
          float w = expf (acc[j] - rmax) * (float) (1.0 / rsum);

          pixels[j] = w > pixels[j] ? w : pixels[j];
        }
    }
  else
    rpe_axpy_f (pixels, acc, (float) (1.0 / rsum), cols);
}

#ifdef SOFTMAX_HAVE_AVX2
static __attribute__ ((target ("avx2,fma"))) bool
fused_row_avx2 (float *row, size_t lim, size_t c0, size_t n, size_t cols, bool by_max, float *acc, float *rmax,
                double *rsum)
{
  return fused_row_kernel (row, lim, c0, n, cols, by_max, acc, rmax, rsum);
}

static __attribute__ ((target ("avx2,fma"))) void
fused_finish_avx2 (const float *acc, size_t cols, bool by_max, float rmax, double rsum, float *pixels)
{
  fused_finish_kernel (acc, cols, by_max, rmax, rsum, pixels);
}

#endif

static bool
fused_row_generic (float *row, size_t lim, size_t c0, size_t n, size_t cols, bool by_max, float *acc, float *rmax,
                   double *rsum)
{
  return fused_row_kernel (row, lim, c0, n, cols, by_max, acc, rmax, rsum);
}

static void
fused_finish_generic (const float *acc, size_t cols, bool by_max, float rmax, double rsum, float *pixels)
{
  fused_finish_kernel (acc, cols, by_max, rmax, rsum, pixels);
}

typedef struct
{
  const RpeLogitsSpec *spec;
  size_t               head, n, rows, cols, n_groups;
  const size_t        *group_start;   /* (n_groups + 1) first pixel row of each group */
  const float         *kt;            /* the head's keys transposed, (d, n) */
  bool                 causal, by_max, avx2;
  float               *image;
  const RpeMonitor    *monitor;
  RpeStatus            status[256];
} FusedJob;

/* Rows a .. b-1 one by one through rpe_attention_rows (the tile had non-finite logits). */
static RpeStatus
fused_fallback (FusedJob *job, size_t a, size_t b, float *scratch)
{
  const size_t n = job->n, cols = job->cols;

  for (size_t m = a; m < b; m++)
    {
      float *pixels = job->image + col_bin_of (m, n, job->rows) * cols;
      RpeStatus st = rpe_attention_rows (job->spec, job->head, m, 1, job->causal, scratch, NULL);

      if (st != RPE_OK)
        return st;
      for (size_t j = 0, c = 0; j < cols; j++)
        {
          size_t next = bin_start (j + 1, n, cols);
          float v = job->by_max ? max_fast_kernel (scratch + c, next - c) : run_sum (scratch + c, next - c);

          pixels[j] = job->by_max ? (v > pixels[j] ? v : pixels[j]) : pixels[j] + v;
          c = next;
        }
    }
  return RPE_OK;
}

static void
fused_worker (size_t worker, size_t n_workers, void *data)
{
  FusedJob *job = data;
  const RpeLogitsSpec *spec = job->spec;
  const size_t n = job->n, cols = job->cols, rows = job->rows, d = spec->d, ld = spec->n_heads * spec->d;
  const float scale = (float) (1.0 / sqrt ((double) d));
  const float *q = spec->q + job->head * d;
  RpeStatus st = RPE_OK;
  float *tile = rpe_alloc ((size_t) FUSED_ROWS * FUSED_COLS, sizeof (float), &st);
  float *acc = tile != NULL ? rpe_alloc ((size_t) FUSED_ROWS * cols, sizeof (float), &st) : NULL;
  float *scratch = NULL;
  float rmax[FUSED_ROWS];
  double rsum[FUSED_ROWS];
  size_t done = 0, mine = (job->n_groups + n_workers - 1 - worker) / n_workers;

  for (size_t g = worker; acc != NULL && g < job->n_groups && st == RPE_OK; g += n_workers)
    {
      size_t p0 = job->group_start[g], p1 = job->group_start[g + 1];
      size_t m_begin = bin_start (p0, n, rows), m_end = bin_start (p1, n, rows);

      memset (job->image + p0 * cols, 0, (p1 - p0) * cols * sizeof (float));
      for (size_t a = m_begin; a < m_end && st == RPE_OK; a += FUSED_ROWS)
        {
          size_t nr = m_end - a < FUSED_ROWS ? m_end - a : FUSED_ROWS;
          size_t c_end = job->causal ? (a + nr < n ? a + nr : n) : n;
          bool ok = true;

          if (rpe_monitor_cancelled (job->monitor))
            {
              st = RPE_ERROR_CANCELLED;
              break;
            }
          for (size_t i = 0; i < nr; i++)
            {
              rmax[i] = -INFINITY;
              rsum[i] = 0.0;
            }
          if (job->by_max)
            for (size_t i = 0; i < nr * cols; i++)
              acc[i] = -INFINITY;
          else
            memset (acc, 0, nr * cols * sizeof (float));
          for (size_t c0 = 0; c0 < c_end && ok; c0 += FUSED_COLS)
            {
              size_t ct = c_end - c0 < FUSED_COLS ? c_end - c0 : FUSED_COLS;

              /* the logits tile on the core's own product (rpe-gemm-private.h): its speed does not
               * depend on the kernels BLAS picks, and each logit is summed in one fixed order */
              _rpe_gemm (nr, ct, d, scale, q + a * ld, ld, 1, job->kt + c0, n, false, tile, ct);
              for (size_t i = 0; i < nr && ok; i++)
                {
                  size_t m = a + i, lim = ct;

                  if (job->causal)
                    lim = m < c0 ? 0 : (m - c0 + 1 < ct ? m - c0 + 1 : ct);
                  if (lim == 0)
                    continue;
#ifdef SOFTMAX_HAVE_AVX2
                  if (job->avx2)
                    ok = fused_row_avx2 (tile + i * ct, lim, c0, n, cols, job->by_max, acc + i * cols, &rmax[i],
                                         &rsum[i]);
                  else
#endif
                    ok = fused_row_generic (tile + i * ct, lim, c0, n, cols, job->by_max, acc + i * cols, &rmax[i],
                                            &rsum[i]);
                }
            }
          if (!ok)
            {
              if (scratch == NULL && (scratch = rpe_alloc (n, sizeof (float), &st)) == NULL)
                break;
              st = fused_fallback (job, a, a + nr, scratch);
              continue;
            }
          for (size_t i = 0; i < nr; i++)
            {
              float *pixels = job->image + col_bin_of (a + i, n, rows) * cols;

#ifdef SOFTMAX_HAVE_AVX2
              if (job->avx2)
                fused_finish_avx2 (acc + i * cols, cols, job->by_max, rmax[i], rsum[i], pixels);
              else
#endif
                fused_finish_generic (acc + i * cols, cols, job->by_max, rmax[i], rsum[i], pixels);
            }
        }
      if (st == RPE_OK && !job->by_max)
        for (size_t p = p0; p < p1; p++)
          {
            size_t r = bin_start (p + 1, n, rows) - bin_start (p, n, rows);
            float *pixels = job->image + p * cols;

            for (size_t j = 0; j < cols; j++)
              pixels[j] = (float) ((double) pixels[j]
                                   / ((double) r * (double) (bin_start (j + 1, n, cols) - bin_start (j, n, cols))));
          }
      if (worker == 0)
        rpe_monitor_progress (job->monitor, (double) ++done / (double) (mine > 0 ? mine : 1));
    }
  rpe_free (scratch);
  rpe_free (acc);
  rpe_free (tile);
  job->status[worker] = st;
}

typedef struct
{
  const RpeLogitsSpec *spec;
  size_t               head;
  bool                 causal;
} GenericRows;

static RpeStatus
generic_rows (size_t m0, size_t n_rows, float *out, void *user_data)
{
  const GenericRows *g = user_data;

  return rpe_attention_rows (g->spec, g->head, m0, n_rows, g->causal, out, NULL);
}

RpeStatus
rpe_attention_map_reduce (const RpeLogitsSpec *spec,
                          size_t               head,
                          bool                 causal,
                          size_t               rows,
                          size_t               cols,
                          RpeMapReduce         reduce,
                          float               *image,
                          const RpeMonitor    *monitor)
{
  RpeLogitsSpec checked;
  FusedJob job;
  size_t n, workers, n_groups = 0, *group_start;
  float *kt;
  RpeStatus st = RPE_OK;

  if (spec == NULL || image == NULL || spec->n == 0 || rows == 0 || cols == 0 || rows > spec->n || cols > spec->n
      || head >= spec->n_heads)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (rows, cols, &(size_t) { 0 }) || !rpe_size_mul (cols, FUSED_ROWS * sizeof (float), &(size_t) { 0 }))
    return RPE_ERROR_OVERFLOW;
  checked = *spec;
  if (!checked.inputs_checked && spec->kind != RPE_LOGITS_RELATIVE)
    {
      if ((st = rpe_logits_spec_check (spec)) != RPE_OK)
        return st;
      checked.inputs_checked = true;
    }
  if (spec->kind != RPE_LOGITS_DOT)
    {
      GenericRows g = { &checked, head, causal };

      return rpe_map_reduce (spec->n, rows, cols, reduce, (size_t) 1 << 21, generic_rows, &g, image, monitor);
    }
  n = spec->n;
  /* groups of whole pixel rows covering at most FUSED_ROWS map rows (one pixel row at least) */
  if ((group_start = rpe_alloc (rows + 1, sizeof (size_t), &st)) == NULL)
    return st;
  for (size_t p = 0; p < rows; )
    {
      size_t m0 = bin_start (p, n, rows), p1 = p + 1;

      while (p1 < rows && bin_start (p1 + 1, n, rows) - m0 <= FUSED_ROWS)
        p1++;
      group_start[n_groups++] = p;
      p = p1;
    }
  group_start[n_groups] = rows;
  /* the head's keys as the (d, n) right operand of the tiles' products */
  if ((kt = rpe_alloc (n, spec->d * sizeof (float), &st)) == NULL)
    {
      rpe_free (group_start);
      return st;
    }
  for (size_t j = 0; j < n; j++)
    for (size_t t = 0; t < spec->d; t++)
      kt[t * n + j] = spec->k[j * spec->n_heads * spec->d + head * spec->d + t];

  memset (&job, 0, sizeof job);
  job.spec = &checked;
  job.head = head;
  job.n = n;
  job.rows = rows;
  job.cols = cols;
  job.n_groups = n_groups;
  job.group_start = group_start;
  job.kt = kt;
  job.causal = causal;
  job.by_max = reduce != RPE_MAP_REDUCE_MEAN;   /* weights are >= 0: MAX_ABS is MAX */
#ifdef SOFTMAX_HAVE_AVX2
  job.avx2 = have_avx2 ();
#endif
  job.image = image;
  job.monitor = monitor;
  workers = rpe_parallel_threads ();
  if (workers > n_groups)
    workers = n_groups;
  if (workers > sizeof job.status / sizeof job.status[0])
    workers = sizeof job.status / sizeof job.status[0];
  /* a small map (a few ms) is not worth the threads (nor waking them next to a BLAS pool
   * still spinning from the caller's last call) */
  if ((double) n * (double) n < (double) (1 << 21))
    workers = 1;
  if (workers > 1)
    rpe_parallel_run (workers, fused_worker, &job);
  else
    fused_worker (0, 1, &job);
  for (size_t w = 0; w < workers; w++)
    if (job.status[w] != RPE_OK && (st == RPE_OK || job.status[w] == RPE_ERROR_CANCELLED))
      st = job.status[w];
  rpe_free (group_start);
  rpe_free (kt);
  if (st == RPE_OK)
    rpe_monitor_progress (monitor, 1.0);
  return st;
}

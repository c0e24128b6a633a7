/* rpe-attention.c: attention maps from logits, streaming rows, and the APE
 * baseline (MATH.md sections 4 and 9). */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#include <fftw3.h>
#include <cblas.h>

#include "rpe-alloc.h"
#include "rpe-attention.h"
#include "rpe-skew.h"

/* Rows per cancellation / progress check in the full-map routines. */
#define ROW_CHUNK 256

/* ---- softmax ---- */

/* One row, in place; only the first n_cols entries take part, the rest
 * (causally masked) become 0. */
static RpeStatus
softmax_row (float  *r,
             size_t  n,
             size_t  n_cols)
{
  float max = -INFINITY;

  for (size_t j = 0; j < n_cols; j++)
    {
      if (isnan (r[j]))
        return RPE_ERROR_NOT_FINITE;
      if (r[j] > max)
        max = r[j];
    }

  if (max == -INFINITY)
    {
      /* Every entry masked out: no distribution; documented as an all-zero row. */
      memset (r, 0, n * sizeof (float));
      return RPE_OK;
    }

  if (max == INFINITY)
    {
      /* The limit of the softmax: the +inf entries share the mass. */
      size_t count = 0;

      for (size_t j = 0; j < n_cols; j++)
        count += r[j] == INFINITY;
      for (size_t j = 0; j < n_cols; j++)
        r[j] = r[j] == INFINITY ? (float) (1.0 / (double) count) : 0.0f;
    }
  else
    {
      /* Subtract the row max: every exponent is <= 0, the max gives exactly 1,
       * so the sum is >= 1 and nothing overflows.  x - max may round to -inf
       * for differences beyond FLT_MAX; expf(-inf) = 0 is still right. */
      double sum = 0, inv;

      for (size_t j = 0; j < n_cols; j++)
        {
          float e = expf (r[j] - max);
          r[j] = e;
          sum += e;
        }
      inv = 1.0 / sum;
      for (size_t j = 0; j < n_cols; j++)
        r[j] = (float) (r[j] * inv);
    }

  for (size_t j = n_cols; j < n; j++)
    r[j] = 0.0f;
  return RPE_OK;
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

  for (size_t i = 0; i < n_rows; i++)
    {
      size_t n_cols = n;
      RpeStatus st;

      /* Causal: column j survives iff j <= m = m0 + i. */
      if (causal && m0 + i < n)
        n_cols = m0 + i + 1;
      if ((st = softmax_row (rows + i * n, n, n_cols)) != RPE_OK)
        return st;
    }
  return RPE_OK;
}

RpeStatus
rpe_softmax_rows (float            *logits,
                  size_t            n_maps,
                  size_t            n,
                  bool              causal,
                  const RpeMonitor *monitor)
{
  size_t per_map, total;
  RpeStatus st;

  if (!rpe_size_mul (n, n, &per_map) || !rpe_size_mul (per_map, n_maps, &total))
    return RPE_ERROR_OVERFLOW;
  if (total == 0)
    return RPE_OK;
  if (logits == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;

  for (size_t h = 0; h < n_maps; h++)
    for (size_t m = 0; m < n; m += ROW_CHUNK)
      {
        size_t b = n - m < ROW_CHUNK ? n - m : ROW_CHUNK;

        if (rpe_monitor_cancelled (monitor))
          return RPE_ERROR_CANCELLED;
        st = rpe_softmax_row_block (logits + h * per_map + m * n, b, n, m, causal);
        if (st != RPE_OK)
          return st;
        rpe_monitor_progress (monitor, ((double) h + (double) (m + b) / (double) n) / (double) n_maps);
      }
  return RPE_OK;
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
      if ((st = rpe_softmax_row_block (o, b, n_cols, m0 + r, causal)) != RPE_OK)
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
      return rpe_rel_logits_rows (&rs, head, m0, n_rows, out, monitor);
    }
  if (spec->kind != RPE_LOGITS_DOT && spec->kind != RPE_LOGITS_APE)
    return RPE_ERROR_INVALID_ARGUMENT;

  if ((st = qk_check (spec->n, spec->n_heads, spec->d, spec->q, spec->k)) != RPE_OK)
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

/* rpe-skew.c: exact relative attention logits with Huang et al.'s skewing
 * (docs/math.md, section 6).  See rpe-skew.h for layouts and conventions. */
#include "config.h"

#include <limits.h>
#include <math.h>

#include <fftw3.h>
#include <cblas.h>

#include "rpe-alloc.h"
#include "rpe-skew.h"

/* Validates the spec; on success *rel_rows = 2N-1. */
static RpeStatus
rel_spec_check (const RpeRelSpec *s,
                size_t           *rel_rows)
{
  size_t ld, count, rows, rel_count;

  if (s == NULL || s->q == NULL || s->rel == NULL
      || s->n == 0 || s->n_heads == 0 || s->d == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (s->n, 2, &rows) || !rpe_size_mul (s->n_heads, s->d, &ld)
      || !rpe_size_mul (ld, s->n, &count)
      || !rpe_size_mul (rows - 1, s->d, &rel_count)
      || (s->rel_per_head && !rpe_size_mul (rel_count, s->n_heads, &rel_count)))
    return RPE_ERROR_OVERFLOW;
  rows -= 1;
  /* BLAS takes int dimensions and leading dimensions. */
  if (rows > INT_MAX || ld > INT_MAX || s->d > INT_MAX)
    return RPE_ERROR_OVERFLOW;
  if (!rpe_all_finite_f (s->q, count) || !rpe_all_finite_f (s->rel, rel_count)
      || (s->k != NULL && !rpe_all_finite_f (s->k, count)))
    return RPE_ERROR_NOT_FINITE;
  *rel_rows = rows;
  return RPE_OK;
}

/* Work floats needed for blocks of at most b rows: b x (b + N - 1). */
static RpeStatus
rel_work_size (size_t  n,
               size_t  b,
               size_t *out)
{
  size_t w;

  if (!rpe_size_add (n, b - 1, &w) || !rpe_size_mul (w, b, out))
    return RPE_ERROR_OVERFLOW;
  return RPE_OK;
}

/* Rows m0 .. m0+b-1 of head h into out (b, N), b <= RPE_SKEW_BLOCK; work holds
 * at least b x (b + N - 1) floats. */
static void
rel_block (const RpeRelSpec *s,
           size_t            h,
           size_t            m0,
           size_t            b,
           float            *out,
           float            *work)
{
  const size_t n = s->n, d = s->d, ld = s->n_heads * d;
  const size_t m1 = m0 + b;
  const float *qh = s->q + m0 * ld + h * d;
  const float *eh = s->rel + (s->rel_per_head ? h * (2 * n - 1) * d : 0);
  const float scale = s->k != NULL ? (float) (1.0 / sqrt ((double) d)) : 1.0f;
  size_t c_lo, c_hi, w;

  /* Columns of E needed by this block: tau = m - n ranges over
   * [m0 - (N-1), m1 - 1] (causal: [0, m1 - 1]); E row index = tau + N - 1. */
  if (s->causal)
    {
      c_lo = n - 1;
      c_hi = n - 1 + m1;
    }
  else
    {
      c_lo = m0;
      c_hi = m1 + n - 1;
    }
  w = c_hi - c_lo;

  /* work (b, w) = Q_block E[c_lo .. c_hi)^T */
  cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasTrans,
               (int) b, (int) w, (int) d,
               1.0f, qh, (int) ld, eh + c_lo * d, (int) d,
               0.0f, work, (int) w);

  /* out = scale * Q_block K^T over the columns that survive the mask. */
  if (s->k != NULL)
    cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasTrans,
                 (int) b, (int) (s->causal ? m1 : n), (int) d,
                 scale, qh, (int) ld, s->k + h * d, (int) ld,
                 0.0f, out, (int) n);

  /* The skew: output (m, n) <- work (m, (m - n + N - 1) - c_lo).  Equivalent
   * to Huang's pad / reshape (N+1, N) / drop-first-row on the full product. */
  for (size_t i = 0; i < b; i++)
    {
      const size_t m = m0 + i;
      const size_t n_cols = s->causal ? m + 1 : n;
      const float *row = work + i * w + (m + n - 1 - c_lo);  /* column of tau = m */
      float *o = out + i * n;

      if (s->k != NULL)
        for (size_t j = 0; j < n_cols; j++)
          o[j] += scale * row[-(ptrdiff_t) j];
      else
        for (size_t j = 0; j < n_cols; j++)
          o[j] = row[-(ptrdiff_t) j];
      for (size_t j = n_cols; j < n; j++)
        o[j] = -INFINITY;
    }
}

static RpeStatus
rel_rows_checked (const RpeRelSpec *s,
                  size_t            h,
                  size_t            m0,
                  size_t            n_rows,
                  float            *out,
                  const RpeMonitor *monitor,
                  double            progress_base,
                  double            progress_span)
{
  const size_t block = n_rows < RPE_SKEW_BLOCK ? n_rows : RPE_SKEW_BLOCK;
  RpeStatus st;
  size_t work_count;
  float *work;

  if ((st = rel_work_size (s->n, block, &work_count)) != RPE_OK)
    return st;
  work = rpe_alloc (work_count, sizeof (float), &st);
  if (work == NULL)
    return st;

  for (size_t r = 0; r < n_rows; r += block)
    {
      size_t b = n_rows - r < block ? n_rows - r : block;

      if (rpe_monitor_cancelled (monitor))
        {
          st = RPE_ERROR_CANCELLED;
          break;
        }
      rel_block (s, h, m0 + r, b, out + r * s->n, work);
      rpe_monitor_progress (monitor, progress_base + progress_span * (double) (r + b) / (double) n_rows);
    }
  rpe_free (work);
  return st;
}

RpeStatus
rpe_rel_logits_rows (const RpeRelSpec *spec,
                     size_t            head,
                     size_t            m0,
                     size_t            n_rows,
                     float            *out,
                     const RpeMonitor *monitor)
{
  RpeStatus st;
  size_t rel_rows, end, count;

  if ((st = rel_spec_check (spec, &rel_rows)) != RPE_OK)
    return st;
  if (out == NULL || n_rows == 0 || head >= spec->n_heads)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_add (m0, n_rows, &end) || end > spec->n)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (n_rows, spec->n, &count))
    return RPE_ERROR_OVERFLOW;
  return rel_rows_checked (spec, head, m0, n_rows, out, monitor, 0.0, 1.0);
}

RpeStatus
rpe_rel_logits (const RpeRelSpec *spec,
                float            *logits,
                const RpeMonitor *monitor)
{
  RpeStatus st;
  size_t rel_rows, per_head;

  if ((st = rel_spec_check (spec, &rel_rows)) != RPE_OK)
    return st;
  if (logits == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (spec->n, spec->n, &per_head)
      || !rpe_size_mul (per_head, spec->n_heads, &(size_t) { 0 }))
    return RPE_ERROR_OVERFLOW;

  for (size_t h = 0; h < spec->n_heads; h++)
    {
      st = rel_rows_checked (spec, h, 0, spec->n, logits + h * per_head, monitor,
                             (double) h / (double) spec->n_heads, 1.0 / (double) spec->n_heads);
      if (st != RPE_OK)
        return st;
    }
  return RPE_OK;
}

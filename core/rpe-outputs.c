/* rpe-outputs.c: outputs Y of exact and SPE attention for values V (docs/math.md, sections 4-5).
 *
 * Calls the core's entry points (codes, encoding, feature maps, linear attention,
 * softmax rows); what is here is the glue: one head's slice of a draw, the exact
 * logits of a block of rows, the block products with V, and the unnormalised
 * identity-kernel output Qhat (Khat^T V) / sqrt(R).
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#include <cblas.h>

#include "rpe-alloc.h"
#include "rpe-attention.h"
#include "rpe-outputs.h"
#include "rpe-rng.h"

#define DEFAULT_BLOCK 128

#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif
#ifndef MAX
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#endif

const char *
rpe_outputs_compare_name (RpeOutputsCompare compare)
{
  switch (compare)
    {
    case RPE_OUTPUTS_SOFTMAX:
      return "softmax";
    case RPE_OUTPUTS_KERNEL:
      return "kernel";
    case RPE_OUTPUTS_N_COMPARES:
    default:
      return "?";
    }
}

const char *
rpe_values_kind_name (RpeValuesKind kind)
{
  switch (kind)
    {
    case RPE_VALUES_IMPULSE:
      return "impulse";
    case RPE_VALUES_SWEEP:
      return "sweep";
    case RPE_VALUES_NOISE:
      return "noise";
    case RPE_VALUES_ARRAY:
      return "npy";
    case RPE_VALUES_N_KINDS:
    default:
      return "?";
    }
}

/* ----------------------------------------------------------------- values */

RpeStatus
rpe_outputs_values (RpeValuesKind  kind,
                    size_t         n,
                    size_t         dv,
                    const size_t  *positions,
                    size_t         n_positions,
                    uint64_t       seed,
                    float         *v)
{
  size_t count;

  if (v == NULL || n == 0 || dv == 0 || dv > RPE_OUTPUTS_MAX_CHANNELS)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (n, dv, &count))
    return RPE_ERROR_OVERFLOW;
  switch (kind)
    {
    case RPE_VALUES_IMPULSE:
      if (n_positions > 0 && positions == NULL)
        return RPE_ERROR_INVALID_ARGUMENT;
      for (size_t i = 0; i < n_positions; i++)
        if (positions[i] >= n)
          return RPE_ERROR_INVALID_ARGUMENT;
      memset (v, 0, count * sizeof (float));
      for (size_t c = 0; c < dv; c++)
        {
          size_t p = n_positions > 0 ? positions[c % n_positions]
                                     : (size_t) ((double) (c + 1) * (double) n / (double) (dv + 1));

          v[MIN (p, n - 1) * dv + c] = 1.0f;
        }
      return RPE_OK;

    case RPE_VALUES_SWEEP:
      for (size_t m = 0; m < n; m++)
        for (size_t c = 0; c < dv; c++)
          {
            double phase = M_PI * (double) m * (double) m / (2.0 * (double) n)
                           + 2.0 * M_PI * (double) c / (double) dv;

            v[m * dv + c] = (float) sin (fmod (phase, 2.0 * M_PI));
          }
      return RPE_OK;

    case RPE_VALUES_NOISE:
      rpe_rng_normal (seed, RPE_STREAM_VALUES, 0, v, count);
      return RPE_OK;

    case RPE_VALUES_ARRAY:
    case RPE_VALUES_N_KINDS:
    default:
      return RPE_ERROR_INVALID_ARGUMENT;
    }
}

RpeStatus
rpe_outputs_values_from_array (const float *src,
                               size_t       src_n,
                               size_t       src_heads,
                               size_t       dv,
                               size_t       head,
                               size_t       n,
                               float       *v)
{
  size_t stride, total;

  if (src == NULL || v == NULL || src_n == 0 || dv == 0 || n == 0 || dv > RPE_OUTPUTS_MAX_CHANNELS)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (src_heads > 0 && head >= src_heads)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (MAX (src_heads, (size_t) 1), dv, &stride) || !rpe_size_mul (src_n, stride, &total)
      || !rpe_size_mul (n, dv, &(size_t) { 0 }))
    return RPE_ERROR_OVERFLOW;
  if (!rpe_all_finite_f (src, total))
    return RPE_ERROR_NOT_FINITE;
  for (size_t m = 0; m < n; m++)
    memcpy (v + m * dv, src + (m % src_n) * stride + (src_heads > 0 ? head * dv : 0), dv * sizeof (float));
  return RPE_OK;
}

/* ------------------------------------------------------------ one head's draw */

/* Parameters of head h alone (H = 1). */
static RpeStatus
head_params (const RpeSpeParams *p,
             size_t              h,
             bool                gated,
             RpeSpeParams       *out)
{
  size_t D = p->n_features;
  RpeStatus status;

  status = rpe_spe_params_init (out, p->method, 1, D,
                                p->method == RPE_SPE_SINE ? p->n_sines : p->kernel,
                                gated && p->gate != NULL);
  if (status != RPE_OK)
    return status;
  out->kernel_cols = 0;
  if (p->method == RPE_SPE_SINE)
    {
      size_t per = D * p->n_sines;

      memcpy (out->freqs, p->freqs + h * per, per * sizeof (float));
      memcpy (out->offsets, p->offsets + h * per, per * sizeof (float));
      memcpy (out->gains, p->gains + h * per, per * sizeof (float));
    }
  else
    {
      size_t per = D * p->kernel;

      memcpy (out->wq, p->wq + h * per, per * sizeof (float));
      memcpy (out->wk, p->wk + h * per, per * sizeof (float));
    }
  if (out->gate != NULL)
    memcpy (out->gate, p->gate + h * D, D * sizeof (float));
  return RPE_OK;
}

/* Head h's slice of the module's draw (seed, R): z for the H = 1 parameters and eps (D, R)
 * (NULL when ungated).  The layouts are those of docs/math.md, section 10. */
static RpeStatus
head_noise (const RpeSpeParams *p,
            size_t              h,
            size_t              n,
            size_t              r,
            uint64_t            seed,
            bool                gated,
            float             **z_out,
            float             **eps_out)
{
  size_t D = p->n_features, count, per;
  RpeStatus status = RPE_OK;
  float *z = NULL, *eps = NULL;

  if (p->method == RPE_SPE_SINE)
    {
      if (!rpe_size_mul (D * 2 * p->n_sines, r, &per))
        return RPE_ERROR_OVERFLOW;
      z = rpe_alloc (per, sizeof (float), &status);
      if (z == NULL)
        return status;
      status = rpe_spe_noise_fill_range (p, n, r, seed, h * per, per, z);
    }
  else
    {
      size_t width;

      if (!rpe_size_add (n, 4 * p->kernel, &width) || !rpe_size_mul (D, width, &per)
          || !rpe_size_mul (per, r, &count))
        return RPE_ERROR_OVERFLOW;
      z = rpe_alloc (count, sizeof (float), &status);
      if (z == NULL)
        return status;
      for (size_t i = 0; i < r && status == RPE_OK; i++)
        status = rpe_spe_noise_fill_range (p, n, r, seed, (i * p->n_heads + h) * per, per, z + i * per);
    }
  if (status == RPE_OK && gated && p->gate != NULL)
    {
      size_t all;

      if (!rpe_size_mul (p->n_heads * D, r, &all))
        status = RPE_ERROR_OVERFLOW;
      else if ((eps = rpe_alloc (all, sizeof (float), &status)) != NULL)
        {
          status = rpe_spe_gate_noise_fill (p, r, seed, eps);
          memmove (eps, eps + h * D * r, D * r * sizeof (float));
        }
    }
  if (status != RPE_OK)
    {
      rpe_free (z);
      rpe_free (eps);
      return status;
    }
  *z_out = z;
  *eps_out = eps;
  return RPE_OK;
}

static RpeStatus
check_spec (const RpeOutputsSpec *s)
{
  if (s == NULL || s->params == NULL || s->q == NULL || s->k == NULL || s->v == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (s->n == 0 || s->dv == 0 || s->dv > RPE_OUTPUTS_MAX_CHANNELS || s->head >= s->params->n_heads
      || s->params->n_features == 0 || (unsigned) s->compare >= RPE_OUTPUTS_N_COMPARES)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (s->n > INT_MAX / 2)
    return RPE_ERROR_INVALID_ARGUMENT;   /* BLAS takes int sizes */
  if (s->params->method == RPE_SPE_CONV && s->params->kernel_cols != 0)
    return RPE_ERROR_UNSUPPORTED;   /* 2-D convSPE: positions are a grid */
  if (!rpe_size_mul (s->n, s->dv, &(size_t) { 0 }) || !rpe_size_mul (s->n, s->params->n_features, &(size_t) { 0 }))
    return RPE_ERROR_OVERFLOW;
  return RPE_OK;
}

RpeStatus
rpe_outputs_encode_head (const RpeOutputsSpec *spec,
                         uint64_t              seed,
                         float                *qhat,
                         float                *khat,
                         const RpeMonitor     *monitor)
{
  RpeSpeParams hp = { 0 };
  float *z = NULL, *eps = NULL;
  RpeStatus status = check_spec (spec);

  if (status != RPE_OK)
    return status;
  if (spec->r == 0 || qhat == NULL || khat == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  status = head_params (spec->params, spec->head, spec->gated, &hp);
  if (status == RPE_OK)
    status = head_noise (spec->params, spec->head, spec->n, spec->r, seed, spec->gated, &z, &eps);
  if (status == RPE_OK)
    status = rpe_spe_encode_fused (&hp, spec->n, spec->r, z, eps, spec->q, spec->k, qhat, khat, monitor);
  rpe_spe_params_clear (&hp);
  rpe_free (z);
  rpe_free (eps);
  return status;
}

/* ------------------------------------------------------------- reference */

typedef struct
{
  const RpeOutputsSpec *spec;
  const float          *lags;   /* (2N-1, D) Ptilde_d(tau), row i <-> tau = i - (N-1) (contiguous in d) */
} ExactRows;

/* l(m, n) = sum_d q[m,d] k[n,d] Ptilde_d(m - n) / sqrt(D); causal n > m: -inf. */
static RpeStatus
exact_logits_rows (size_t  m0,
                   size_t  n_rows,
                   size_t  n_cols,
                   float  *out,
                   void   *user_data)
{
  const ExactRows *x = user_data;
  const RpeOutputsSpec *s = x->spec;
  size_t D = s->params->n_features, n = s->n;
  float inv = (float) (1.0 / sqrt ((double) D));

  for (size_t i = 0; i < n_rows; i++)
    {
      size_t m = m0 + i;
      const float *qm = s->q + m * D;
      float *row = out + i * n_cols;

      for (size_t c = 0; c < n_cols; c++)
        {
          const float *kn = s->k + c * D;
          size_t lag = m + (n - 1) - c;
          float acc = 0.0f;

          if (s->causal && c > m)
            {
              row[c] = -INFINITY;
              continue;
            }
          const float *p = x->lags + lag * D;

          for (size_t d = 0; d < D; d++)
            acc += qm[d] * kn[d] * p[d];
          row[c] = acc * inv;
        }
    }
  return RPE_OK;
}

RpeStatus
rpe_outputs_reference (const RpeOutputsSpec *spec,
                       float                *y,
                       const RpeMonitor     *monitor)
{
  RpeStatus status = check_spec (spec);
  size_t n, D, dv, lags, total, block, rows;
  float *lag_buf = NULL, *buf = NULL;
  ExactRows x;

  if (status != RPE_OK)
    return status;
  if (y == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  n = spec->n;
  D = spec->params->n_features;
  dv = spec->dv;
  if (!rpe_size_mul (n, 2, &lags) || !rpe_size_mul (lags - 1, D, &total))
    return RPE_ERROR_OVERFLOW;
  lags -= 1;
  block = spec->block > 0 ? MIN (spec->block, n) : MIN ((size_t) DEFAULT_BLOCK, n);
  if (!rpe_size_mul (block, n, &rows))
    return RPE_ERROR_OVERFLOW;
  rows = MAX (rows, lags);   /* the buffer also holds one lag profile */
  lag_buf = rpe_alloc (total, sizeof (float), &status);
  buf = lag_buf != NULL ? rpe_alloc (rows, sizeof (float), &status) : NULL;
  if (buf == NULL)
    goto out;
  /* the profile of each feature (2N-1 floats, in the block buffer), stored transposed */
  for (size_t d = 0; d < D && status == RPE_OK; d++)
    {
      status = rpe_spe_template_lags (spec->params, spec->head, d, n, spec->gated, buf);
      for (size_t i = 0; status == RPE_OK && i < lags; i++)
        lag_buf[i * D + d] = buf[i];
    }
  if (status != RPE_OK)
    goto out;
  x.spec = spec;
  x.lags = lag_buf;

  for (size_t m0 = 0; m0 < n; m0 += block)
    {
      size_t b = MIN (block, n - m0);

      if (rpe_monitor_cancelled (monitor))
        {
          status = RPE_ERROR_CANCELLED;
          goto out;
        }
      if (spec->compare == RPE_OUTPUTS_SOFTMAX)
        status = rpe_attention_rows_func (n, m0, b, b, spec->causal, exact_logits_rows, &x, buf, NULL);
      else
        {
          status = exact_logits_rows (m0, b, n, buf, &x);
          for (size_t i = 0; status == RPE_OK && i < b * n; i++)
            if (isinf (buf[i]))
              buf[i] = 0.0f;   /* the causal mask: those terms are absent, not -inf */
        }
      if (status != RPE_OK)
        goto out;
      /* Y[m0 .. m0 + b) = rows (b x N) . V (N x Dv) */
      cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, (int) b, (int) dv, (int) n,
                   1.0f, buf, (int) n, spec->v, (int) dv, 0.0f, y + m0 * dv, (int) dv);
      rpe_monitor_progress (monitor, (double) (m0 + b) / (double) n);
    }

out:
  rpe_free (lag_buf);
  rpe_free (buf);
  return status;
}

/* -------------------------------------------------------------- estimate */

/* y = Qhat (Khat^T V) / sqrt(R); causal: y_m = qhat_m^T S_m / sqrt(R), S_m = sum_{n<=m} khat_n v_n^T. */
static RpeStatus
kernel_output (size_t            n,
               size_t            r,
               size_t            dv,
               const float      *qhat,
               const float      *khat,
               const float      *v,
               bool              causal,
               float            *y,
               const RpeMonitor *monitor)
{
  RpeStatus status = RPE_OK;
  size_t count;
  double *S, inv = 1.0 / sqrt ((double) r);

  if (!rpe_size_mul (r, dv, &count))
    return RPE_ERROR_OVERFLOW;
  S = rpe_alloc0 (count, sizeof (double), &status);
  if (S == NULL)
    return status;
  if (!causal)
    for (size_t m = 0; m < n; m++)
      for (size_t i = 0; i < r; i++)
        for (size_t c = 0; c < dv; c++)
          S[i * dv + c] += (double) khat[m * r + i] * v[m * dv + c];
  for (size_t m = 0; m < n; m++)
    {
      if ((m & 255) == 0 && rpe_monitor_cancelled (monitor))
        {
          rpe_free (S);
          return RPE_ERROR_CANCELLED;
        }
      if (causal)
        for (size_t i = 0; i < r; i++)
          for (size_t c = 0; c < dv; c++)
            S[i * dv + c] += (double) khat[m * r + i] * v[m * dv + c];
      for (size_t c = 0; c < dv; c++)
        {
          double acc = 0.0;

          for (size_t i = 0; i < r; i++)
            acc += (double) qhat[m * r + i] * S[i * dv + c];
          y[m * dv + c] = (float) (acc * inv);
        }
    }
  rpe_free (S);
  return RPE_OK;
}

RpeStatus
rpe_outputs_estimate (const RpeOutputsSpec *spec,
                      uint64_t              seed,
                      float                *y,
                      const RpeMonitor     *monitor)
{
  RpeStatus status = check_spec (spec);
  float *qhat = NULL, *khat = NULL, *phi_q = NULL, *phi_k = NULL;
  size_t codes, m, feats;
  RpeMonitor quiet = { monitor != NULL ? monitor->cancel : NULL, NULL, NULL };

  if (status != RPE_OK)
    return status;
  if (y == NULL || spec->r == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  if (!rpe_size_mul (spec->n, spec->r, &codes))
    return RPE_ERROR_OVERFLOW;
  qhat = rpe_alloc (codes, sizeof (float), &status);
  khat = qhat != NULL ? rpe_alloc (codes, sizeof (float), &status) : NULL;
  if (khat == NULL)
    goto out;
  status = rpe_outputs_encode_head (spec, seed, qhat, khat, &quiet);
  if (status != RPE_OK)
    goto out;
  rpe_monitor_progress (monitor, 0.5);

  if (spec->compare == RPE_OUTPUTS_KERNEL)
    status = kernel_output (spec->n, spec->r, spec->dv, qhat, khat, spec->v, spec->causal, y, &quiet);
  else
    {
      /* the options of the explorer's linear method (rpe-compute.c) */
      RpeFeatureOptions options = { seed, 64, true, 1 };

      status = rpe_feature_map_dim (spec->feature_map, &options, spec->r, &m);
      if (status != RPE_OK)
        goto out;
      if (!rpe_size_mul (spec->n, m, &feats))
        {
          status = RPE_ERROR_OVERFLOW;
          goto out;
        }
      phi_q = rpe_alloc (feats, sizeof (float), &status);
      phi_k = phi_q != NULL ? rpe_alloc (feats, sizeof (float), &status) : NULL;
      if (phi_k == NULL)
        goto out;
      status = rpe_feature_map_apply (spec->feature_map, &options, RPE_FEATURE_QUERY, spec->n, 1, spec->r,
                                      qhat, phi_q, &quiet);
      if (status == RPE_OK)
        status = rpe_feature_map_apply (spec->feature_map, &options, RPE_FEATURE_KEY, spec->n, 1, spec->r,
                                        khat, phi_k, &quiet);
      if (status == RPE_OK)
        status = rpe_linear_attention (spec->n, 1, m, spec->dv, phi_q, phi_k, spec->v, spec->causal, y, &quiet);
    }
  if (status == RPE_OK)
    rpe_monitor_progress (monitor, 1.0);

out:
  rpe_free (qhat);
  rpe_free (khat);
  rpe_free (phi_q);
  rpe_free (phi_k);
  return status;
}

/* ----------------------------------------------------------------- errors */

void
rpe_outputs_position_error (const float *reference,
                            const float *estimate,
                            size_t       n,
                            size_t       dv,
                            double      *err)
{
  for (size_t m = 0; m < n; m++)
    {
      double num = 0.0, den = 0.0;

      for (size_t c = 0; c < dv; c++)
        {
          double a = reference[m * dv + c], d = (double) estimate[m * dv + c] - a;

          num += d * d;
          den += a * a;
        }
      err[m] = den > 0.0 ? sqrt (num / den) : NAN;
    }
}

double
rpe_outputs_relative_error (const float *reference,
                            const float *estimate,
                            size_t       dv,
                            size_t       m0,
                            size_t       m1)
{
  double num = 0.0, den = 0.0;

  for (size_t i = m0 * dv; i < m1 * dv; i++)
    {
      double a = reference[i], d = (double) estimate[i] - a;

      num += d * d;
      den += a * a;
    }
  return den > 0.0 ? sqrt (num / den) : NAN;
}

/* --------------------------------------------------------------- compute */

void
rpe_outputs_clear (RpeOutputs *out)
{
  if (out == NULL)
    return;
  rpe_free (out->values);
  rpe_free (out->reference);
  rpe_free (out->estimate);
  rpe_free (out->difference);
  rpe_free (out->error_mean);
  rpe_free (out->error_sd);
  rpe_free (out->estimate_mean);
  memset (out, 0, sizeof *out);
}

typedef struct
{
  const RpeMonitor *parent;
  double            lo, hi;
} SubProgress;

static void
sub_progress (double  fraction,
              void   *user_data)
{
  SubProgress *sp = user_data;

  rpe_monitor_progress (sp->parent, sp->lo + (sp->hi - sp->lo) * fraction);
}

RpeStatus
rpe_outputs_compute (const RpeOutputsSpec *spec,
                     uint64_t              seed,
                     size_t                n_draws,
                     size_t                train_length,
                     RpeOutputs           *out,
                     const RpeMonitor     *monitor)
{
  RpeStatus status;
  size_t count, n, dv;
  double *err = NULL, *m2 = NULL, sum_before = 0.0, sum_after = 0.0, sum_all = 0.0, sum_all2 = 0.0;
  size_t cnt_before = 0, cnt_after = 0;
  float *y = NULL;
  SubProgress sp = { monitor, 0.0, 0.0 };
  RpeMonitor sub = { monitor != NULL ? monitor->cancel : NULL, sub_progress, &sp };
  double ref_share;

  if (out == NULL)
    return RPE_ERROR_INVALID_ARGUMENT;
  memset (out, 0, sizeof *out);
  if ((status = check_spec (spec)) != RPE_OK)
    return status;
  if (n_draws == 0 || spec->r == 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  n = spec->n;
  dv = spec->dv;
  count = n * dv;   /* checked by check_spec */
  out->compare = spec->compare;
  out->causal = spec->causal;
  out->n = n;
  out->dv = dv;
  out->r = spec->r;
  out->head = spec->head;
  out->n_draws = n_draws;
  out->train_length = train_length;
  out->seed = seed;

  out->values = rpe_alloc (count, sizeof (float), &status);
  if (out->values != NULL)
    out->reference = rpe_alloc (count, sizeof (float), &status);
  if (out->reference != NULL)
    out->estimate = rpe_alloc (count, sizeof (float), &status);
  if (out->estimate != NULL)
    out->difference = rpe_alloc (count, sizeof (float), &status);
  if (out->difference != NULL)
    out->estimate_mean = rpe_alloc0 (count, sizeof (double), &status);
  if (out->estimate_mean != NULL)
    out->error_mean = rpe_alloc0 (n, sizeof (double), &status);
  if (out->error_mean != NULL)
    out->error_sd = rpe_alloc0 (n, sizeof (double), &status);
  if (out->error_sd != NULL)
    m2 = rpe_alloc0 (n, sizeof (double), &status);
  if (m2 != NULL)
    err = rpe_alloc (n, sizeof (double), &status);
  if (err != NULL)
    y = rpe_alloc (count, sizeof (float), &status);
  if (y == NULL)
    goto fail;
  memcpy (out->values, spec->v, count * sizeof (float));

  /* the reference costs O(N^2 D), a draw O(N R (D + Dv)) */
  ref_share = (double) n * (double) spec->params->n_features;
  ref_share = ref_share / (ref_share + (double) n_draws * (double) spec->r * (double) (spec->params->n_features + dv));
  ref_share = fmin (0.9, fmax (0.1, ref_share));
  sp.lo = 0.0;
  sp.hi = ref_share;
  if ((status = rpe_outputs_reference (spec, out->reference, &sub)) != RPE_OK)
    goto fail;

  for (size_t t = 0; t < n_draws; t++)
    {
      float *target = t == 0 ? out->estimate : y;
      size_t split = train_length > 0 ? MIN (train_length, n) : n;
      double e;

      sp.lo = ref_share + (1.0 - ref_share) * (double) t / (double) n_draws;
      sp.hi = ref_share + (1.0 - ref_share) * (double) (t + 1) / (double) n_draws;
      if ((status = rpe_outputs_estimate (spec, seed + t, target, &sub)) != RPE_OK)
        goto fail;
      rpe_outputs_position_error (out->reference, target, n, dv, err);
      for (size_t m = 0; m < n; m++)
        {
          /* Welford: mean and sum of squared deviations */
          double delta = err[m] - out->error_mean[m];

          out->error_mean[m] += delta / (double) (t + 1);
          m2[m] += delta * (err[m] - out->error_mean[m]);
        }
      for (size_t i = 0; i < count; i++)
        out->estimate_mean[i] += (double) target[i];
      e = rpe_outputs_relative_error (out->reference, target, dv, 0, n);
      sum_all += e;
      sum_all2 += e * e;
      if (split > 0)
        {
          e = rpe_outputs_relative_error (out->reference, target, dv, 0, split);
          if (!isnan (e))
            {
              sum_before += e;
              cnt_before++;
            }
        }
      if (split < n)
        {
          e = rpe_outputs_relative_error (out->reference, target, dv, split, n);
          if (!isnan (e))
            {
              sum_after += e;
              cnt_after++;
            }
        }
    }

  for (size_t m = 0; m < n; m++)
    out->error_sd[m] = n_draws > 1 ? sqrt (m2[m] / (double) (n_draws - 1)) : 0.0;
  for (size_t i = 0; i < count; i++)
    {
      out->estimate_mean[i] /= (double) n_draws;
      out->difference[i] = out->estimate[i] - out->reference[i];
      y[i] = (float) out->estimate_mean[i];
    }
  out->error = rpe_outputs_relative_error (out->reference, out->estimate, dv, 0, n);
  out->error_of_mean = rpe_outputs_relative_error (out->reference, y, dv, 0, n);
  out->error_before = cnt_before > 0 ? sum_before / (double) cnt_before : NAN;
  out->error_after = cnt_after > 0 ? sum_after / (double) cnt_after : NAN;
  out->error_draws_mean = sum_all / (double) n_draws;
  out->error_draws_sd = n_draws > 1
                        ? sqrt (fmax (0.0, (sum_all2 - sum_all * sum_all / (double) n_draws) / (double) (n_draws - 1)))
                        : 0.0;
  rpe_free (err);
  rpe_free (m2);
  rpe_free (y);
  rpe_monitor_progress (monitor, 1.0);
  return RPE_OK;

fail:
  rpe_free (err);
  rpe_free (m2);
  rpe_free (y);
  rpe_outputs_clear (out);
  return status;
}

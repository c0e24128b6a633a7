/* rpe-cli-compute.c: `rpe compute WHAT [options] -o OUT.npy` */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <glib/gi18n.h>

#include "rpe-alloc.h"
#include "rpe-attention.h"
#include "rpe-error.h"
#include "rpe-file.h"
#include "rpe-npy.h"
#include "rpe-parallel.h"
#include "rpe-linear-attention.h"
#include "rpe-skew.h"
#include "rpe-spe.h"

#include "rpe-cli.h"

typedef struct
{
  const RpeCliArgs    *o;
  RpeSpeParams         params;
  gboolean             gated;    /* apply the gate (params has one and --no-gate not given) */
  int                  exit_code;
  gsize                streamed; /* elements appended to the open writer */
} Ctx;

static gboolean
check_index (int value, gsize limit, const char *option, GError **error)
{
  if (value < -1 || (value >= 0 && (gsize) value >= limit))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("%s must be between 0 and %zu (got %d)"),
                          option, (size_t) limit - 1, value);
  return TRUE;
}

/* R from --realizations, or from the noise file, or 64 (as rpe_cli_make_codes resolves it). */
static gboolean
resolve_realizations_opt (const RpeCliArgs *o, gsize from_noise, gsize *r, GError **error)
{
  if (o->draw.realizations != RPE_CLI_UNSET)
    {
      if (o->draw.realizations < 1 || o->draw.realizations > ((gint64) 1 << 24))
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                              "--realizations must be between 1 and %d (got %" G_GINT64_FORMAT ")", 1 << 24,
                              o->draw.realizations);
      if (from_noise != 0 && (gsize) o->draw.realizations != from_noise)
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                              "--realizations %" G_GINT64_FORMAT " does not match the noise's R = %zu",
                              o->draw.realizations, (size_t) from_noise);
      *r = (gsize) o->draw.realizations;
    }
  else
    *r = from_noise != 0 ? from_noise : 64;
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* The encoded queries/keys by the fused core path (the one `rpe bench` times) */

/* The code noise of --noise, shape-checked against the module: z (sine (H, D, 2K, R),
 * conv (R, H*D, N+4L)); *r is its R.  NULL with *r = 0 (and TRUE) when --noise is absent. */
static gboolean
load_code_noise (const RpeCliArgs *o, const RpeSpeParams *params, gsize n, RpeTensor **out, gsize *r, GError **error)
{
  gsize H = params->n_heads, D = params->n_features;
  g_autoptr (RpeTensor) z = NULL;

  *out = NULL;
  *r = 0;
  if (o->draw.noise == NULL)
    return TRUE;
  z = rpe_cli_read_array (o->draw.noise, params->method == RPE_SPE_SINE ? 4 : 3, "the code noise", error);
  if (z == NULL)
    return FALSE;
  if (params->method == RPE_SPE_SINE)
    {
      if (z->shape[0] != H || z->shape[1] != D || z->shape[2] != 2 * params->n_sines)
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                              _("%s: sine noise must have shape (%zu, %zu, %zu, R), got (%zu, %zu, %zu, %zu)"),
                              o->draw.noise, (size_t) H, (size_t) D, (size_t) (2 * params->n_sines),
                              (size_t) z->shape[0], (size_t) z->shape[1], (size_t) z->shape[2], (size_t) z->shape[3]);
      *r = z->shape[3];
    }
  else
    {
      if (z->shape[1] != H * D || z->shape[2] != n + 4 * params->kernel)
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                              _("%s: conv noise must have shape (R, %zu, %zu) = (R, H*D, N+4L), got (%zu, %zu, %zu)"),
                              o->draw.noise, (size_t) (H * D), (size_t) (n + 4 * params->kernel), (size_t) z->shape[0],
                              (size_t) z->shape[1], (size_t) z->shape[2]);
      *r = z->shape[0];
    }
  if (*r == 0)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("%s: the noise has R = 0"), o->draw.noise);
  *out = g_steal_pointer (&z);
  return TRUE;
}

/* The gate noise eps (H, D, R): --gate-noise, or drawn from --seed.  Caller frees with rpe_free. */
static gboolean
load_gate_noise (const RpeCliArgs *o, const RpeSpeParams *params, gsize r, float **out, GError **error)
{
  gsize H = params->n_heads, D = params->n_features, count;
  RpeStatus st;

  *out = NULL;
  if (o->draw.gate_noise != NULL)
    {
      g_autoptr (RpeTensor) eps = rpe_cli_read_array (o->draw.gate_noise, 3, "the gate noise", error);

      if (eps == NULL)
        return FALSE;
      if (eps->shape[0] != H || eps->shape[1] != D || eps->shape[2] != r)
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                              _("%s: gate noise must have shape (%zu, %zu, %zu) = (H, D, R), got (%zu, %zu, %zu)"),
                              o->draw.gate_noise, (size_t) H, (size_t) D, (size_t) r, (size_t) eps->shape[0],
                              (size_t) eps->shape[1], (size_t) eps->shape[2]);
      *out = rpe_alloc (H * D * r, sizeof (float), &st);
      if (*out == NULL)
        return rpe_cli_status_error (st, "gate noise", error);
      memcpy (*out, eps->data, H * D * r * sizeof (float));
      return TRUE;
    }
  st = rpe_size_bytes (&count, 1, H, D, r, 1);
  if (st == RPE_OK)
    *out = rpe_alloc (count, sizeof (float), &st);
  if (st == RPE_OK)
    st = rpe_spe_gate_noise_fill (params, r, (uint64_t) o->draw.seed, *out);
  if (st != RPE_OK)
    {
      g_clear_pointer (out, rpe_free);
      return rpe_cli_status_error (st, "gate noise", error);
    }
  return TRUE;
}

/* Noise scheme hook (rpe-noise.h): the whole seeded draw z under a scheme other than iid,
 * with eps (already the seeded gate draw, or NULL) transformed with it; NULL on error. */
static float *
scheme_noise (const RpeCliArgs   *o,
              const RpeSpeParams *p,
              gsize               n,
              gsize               r,
              RpeNoiseScheme      scheme,
              float              *eps,
              GError            **error)
{
  gsize count;
  float *z;
  RpeStatus st = rpe_spe_noise_size (p, n, r, &count);
  const gsize dims[1][4] = { { count, 1, 1, 1 } };

  if (st != RPE_OK)
    {
      rpe_cli_status_error (st, "code noise", error);
      return NULL;
    }
  if (!rpe_cli_check_budget ("noise (a scheme draws it whole)", 1, dims, error))
    return NULL;
  if ((z = rpe_alloc (count, sizeof (float), &st)) == NULL)
    {
      rpe_cli_status_error (st, "code noise", error);
      return NULL;
    }
  st = rpe_spe_noise_fill (p, n, r, (uint64_t) o->draw.seed, z);
  if (st == RPE_OK)
    st = rpe_noise_apply (scheme, p, n, r, (uint64_t) o->draw.seed, z, p->gate != NULL ? eps : NULL);
  if (st != RPE_OK)
    {
      rpe_free (z);
      rpe_cli_status_error (st, "code noise", error);
      return NULL;
    }
  return z;
}

/* Encoded queries and keys (N, H, R), gated if `gate` and the params have a gate, through
 * rpe_spe_encode_seeded (seeded noise, drawn inside the core, no noise buffer for conv) or
 * rpe_spe_encode_fused (--noise): the (N, H, D, R) codes are never formed.  The result equals
 * rpe_cli_make_codes + rpe_cli_encode to float rounding (tests/test-cli.c checks it). */
gboolean
rpe_cli_encode_fused (const RpeCliArgs   *o,
                      const RpeSpeParams *params,
                      const RpeCliInputs *in,
                      gboolean            gate,
                      gsize              *r_out,
                      float             **qhat,
                      float             **khat,
                      GError            **error)
{
  gsize H = params->n_heads, D = params->n_features, n = in->n, r, count;
  g_autoptr (RpeTensor) z = NULL;
  float *eps = NULL;
  RpeSpeParams p = *params;   /* shallow: only the gate pointer differs */
  RpeNoiseScheme scheme;
  float *zs = NULL;
  RpeStatus st;

  *qhat = *khat = NULL;
  if (!rpe_cli_noise_scheme (o, &scheme, error))
    return FALSE;
  if (!load_code_noise (o, params, n, &z, &r, error) || !resolve_realizations_opt (o, r, &r, error))
    return FALSE;
  if (!gate)
    p.gate = NULL;
  {
    /* the sine noise when drawn (conv draws its noise in slabs), the gate noise, qhat, khat */
    const gsize dims[4][4] = {
      { H, D, z == NULL && params->method == RPE_SPE_SINE ? 2 * params->n_sines : 0, r },
      { H, D, p.gate != NULL ? r : 0, 1 },
      { n, H, r, 1 },
      { n, H, r, 1 },
    };
    if (!rpe_cli_check_budget ("encoding", 4, dims, error))
      return FALSE;
  }
  if (p.gate != NULL && !load_gate_noise (o, params, r, &eps, error))
    return FALSE;
  st = rpe_size_bytes (&count, 1, n, H, r, 1);
  if (st == RPE_OK)
    *qhat = rpe_alloc (count, sizeof (float), &st);
  if (st == RPE_OK)
    *khat = rpe_alloc (count, sizeof (float), &st);
  if (st == RPE_OK && scheme != RPE_NOISE_IID
      && (zs = scheme_noise (o, &p, n, r, scheme, eps, error)) == NULL)
    {
      rpe_free (eps);
      g_clear_pointer (qhat, rpe_free);
      g_clear_pointer (khat, rpe_free);
      return FALSE;
    }
  if (st == RPE_OK && (z != NULL || zs != NULL))
    st = rpe_spe_encode_fused (&p, n, r, zs != NULL ? zs : z->data, eps, in->q, in->k, *qhat, *khat, NULL);
  else if (st == RPE_OK)
    st = rpe_spe_encode_seeded (&p, n, r, (uint64_t) o->draw.seed, eps, in->q, in->k, *qhat, *khat, NULL);
  rpe_free (zs);
  rpe_free (eps);
  if (st != RPE_OK)
    {
      g_clear_pointer (qhat, rpe_free);
      g_clear_pointer (khat, rpe_free);
      return rpe_cli_status_error (st, "encoding", error);
    }
  *r_out = r;
  return TRUE;
}

/* One head h of rpe_cli_encode_fused for seeded noise (--noise not given): q, k (N, D) are
 * the head's content, qhat, khat (N, R) the slice [:, h, :] of the full encoding
 * (rpe_spe_encode_seeded_head: the same values).  For views that draw one head of a long
 * sequence: memory O(N (D + R)), not O(N H (D + R)). */
gboolean
rpe_cli_encode_head (const RpeCliArgs   *o,
                     const RpeSpeParams *params,
                     gboolean            gate,
                     gsize               n,
                     gsize               head,
                     const float        *q,
                     const float        *k,
                     gsize              *r_out,
                     float             **qhat,
                     float             **khat,
                     GError            **error)
{
  gsize r = 0, count;
  float *eps = NULL, *zs = NULL, *zh = NULL;
  RpeSpeParams p = *params;
  RpeNoiseScheme scheme;
  RpeStatus st;

  *qhat = *khat = NULL;
  g_return_val_if_fail (o->draw.noise == NULL, FALSE);
  if (!rpe_cli_noise_scheme (o, &scheme, error))
    return FALSE;
  if (!resolve_realizations_opt (o, 0, &r, error))
    return FALSE;
  if (!gate)
    p.gate = NULL;
  {
    const gsize dims[3][4] = { { params->n_heads, params->n_features, p.gate != NULL ? r : 0, 1 },
                               { n, r, 1, 1 }, { n, r, 1, 1 } };
    if (!rpe_cli_check_budget ("encoding", 3, dims, error))
      return FALSE;
  }
  if (p.gate != NULL && !load_gate_noise (o, params, r, &eps, error))
    return FALSE;
  st = rpe_size_bytes (&count, 1, n, r, 1, 1);
  if (st == RPE_OK)
    *qhat = rpe_alloc (count, sizeof (float), &st);
  if (st == RPE_OK)
    *khat = rpe_alloc (count, sizeof (float), &st);
  if (st == RPE_OK && scheme != RPE_NOISE_IID)
    {
      /* noise scheme hook: the whole draw under the scheme, then head h's slice of it */
      gsize D = p.n_features, hd = p.n_heads * D, zlen = n + 4 * p.kernel, per;
      RpeSpeParams v = p;

      if ((zs = scheme_noise (o, &p, n, r, scheme, eps, error)) == NULL)
        {
          rpe_free (eps);
          g_clear_pointer (qhat, rpe_free);
          g_clear_pointer (khat, rpe_free);
          return FALSE;
        }
      v.n_heads = 1;
      if (p.method == RPE_SPE_SINE)
        {
          per = D * p.n_sines;
          v.freqs = p.freqs + head * per;
          v.offsets = p.offsets + head * per;
          v.gains = p.gains + head * per;
          zh = zs + head * 2 * per * r;
        }
      else
        {
          per = D * p.kernel * (p.kernel_cols != 0 ? p.kernel_cols : 1);
          v.wq = p.wq + head * per;
          v.wk = p.wk + head * per;
          /* (R, H*D, N+4L) -> (R, D, N+4L) */
          if ((zh = rpe_alloc (r * D, zlen * sizeof (float), &st)) != NULL)
            for (gsize i = 0; i < r; i++)
              memcpy (zh + i * D * zlen, zs + (i * hd + head * D) * zlen, D * zlen * sizeof (float));
        }
      if (p.gate != NULL)
        v.gate = p.gate + head * D;
      if (st == RPE_OK)
        st = rpe_spe_encode_fused (&v, n, r, zh, eps != NULL ? eps + head * D * r : NULL, q, k, *qhat, *khat, NULL);
      if (p.method != RPE_SPE_SINE)
        rpe_free (zh);
      rpe_free (zs);
    }
  else if (st == RPE_OK)
    st = rpe_spe_encode_seeded_head (&p, head, n, r, (uint64_t) o->draw.seed, eps, q, k, *qhat, *khat, NULL);
  rpe_free (eps);
  if (st != RPE_OK)
    {
      g_clear_pointer (qhat, rpe_free);
      g_clear_pointer (khat, rpe_free);
      return rpe_cli_status_error (st, "encoding", error);
    }
  *r_out = r;
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* Streamed outputs: the header first, then slabs of rows, then the atomic rename */

#define SLAB_FLOATS ((gsize) 1 << 20)   /* 4 MiB of float32 rows per slab */

/* Rows of N floats per slab (at least one). */
static gsize
slab_rows (gsize n)
{
  return MAX ((gsize) 1, MIN (n, SLAB_FLOATS / n));
}

/* Refuses an output the target's filesystem cannot hold (exit 2, before any work). */
/* The (H, N, N) outputs: their size against the free space of the target's disk before anything
 * is computed (rpe_output_space_check, the check the writer makes again before it writes). */
static gboolean
check_output_space (const char *path, gsize ndim, const gsize *shape, gboolean f64, GError **error)
{
  guint64 bytes = f64 ? 8 : 4;

  for (gsize i = 0; i < ndim; i++)
    {
      if (shape[i] != 0 && bytes > G_MAXUINT64 / shape[i])
        return rpe_set_error (error, RPE_ERROR_OVERFLOW, _("%s: the output is too large"), path);
      bytes *= shape[i];
    }
  if (!rpe_output_space_check (path, bytes, error))
    {
      /* a disk without room, whatever the memory budget (the output is written as it is computed):
       * what the check said, and that nothing was computed either */
      if (error != NULL && *error != NULL)
        {
          char *said = (*error)->message;

          if (g_str_has_suffix (said, "; nothing was written"))
            said[strlen (said) - strlen ("; nothing was written")] = '\0';
          (*error)->message = g_strdup_printf (_("%s; nothing was computed or written (reduce --length or --heads, or "
                                                 "write to a disk with room)"),
                                               said);
          g_free (said);
        }
      return FALSE;
    }
  return TRUE;
}

static RpeNpyWriter *
open_writer (Ctx *c, const char *path, gsize ndim, const gsize *shape, GError **error)
{
  RpeNpyWriter *w;

  if (!check_output_space (path, ndim, shape, c->o->output.f64, error))
    return NULL;
  w = rpe_npy_writer_new (path, ndim, shape, c->o->output.f64, error);
  if (w == NULL)
    c->exit_code = 1;
  c->streamed = 0;
  return w;
}

static gboolean
append_slab (Ctx *c, RpeNpyWriter *w, const float *slab, gsize count, GError **error)
{
  /* a result that overflowed float32 from finite inputs is an error naming
   * where (the caller aborts the writer: nothing is left behind) */
  for (gsize i = 0; i < count; i++)
    if (!isfinite (slab[i]))
      {
        c->exit_code = 2;
        return rpe_set_error (error, RPE_ERROR_NOT_FINITE,
                              _("the result would hold %g at flat index %zu (C order): the parameters or "
                                "inputs are finite but too large for float32 arithmetic; nothing was written"),
                              (double) slab[i], (size_t) (c->streamed + i));
      }
  c->streamed += count;
  if (rpe_npy_writer_append (w, slab, count, error))
    return TRUE;
  c->exit_code = 1;
  return FALSE;
}

static gboolean
commit_writer (Ctx *c, RpeNpyWriter *w, GError **error)
{
  if (rpe_npy_writer_commit (w, error))
    return TRUE;
  c->exit_code = 1;
  return FALSE;
}

/* template / empirical: (H, D, N, N), or (N, N) with --head and --feature; streamed per (h, d)
 * in slabs of rows, so the peak memory does not grow with H x D x N^2. */
static gboolean
compute_template (Ctx *c, gboolean empirical, GError **error)
{
  const RpeCliArgs *o = c->o;
  gsize H = c->params.n_heads, D = c->params.n_features, n, rows;
  gsize h0 = 0, h1 = H, d0 = 0, d1 = D;
  float *slab = NULL, *lags = NULL;
  RpeCliCodes codes = { 0 };
  RpeNpyWriter *w = NULL;
  gboolean ok = FALSE;

  if (!check_index (o->model.head, H, "--head", error) || !check_index (o->model.feature, D, "--feature", error))
    return FALSE;
  if ((o->model.head >= 0) != (o->model.feature >= 0))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--head and --feature go together"));
  if (!rpe_cli_resolve_length (o, 0, &n, error))
    return FALSE;
  if (o->model.head >= 0)
    {
      h0 = (gsize) o->model.head, h1 = h0 + 1;
      d0 = (gsize) o->model.feature, d1 = d0 + 1;
    }
  rows = slab_rows (n);
  if (!rpe_cli_alloc_floats (&slab, rows, n, 1, 1, "template", error)
      || !rpe_cli_alloc_floats (&lags, 2, n, 1, 1, "template profile", error))
    goto out;
  if (empirical && !rpe_cli_make_codes (o, &c->params, n, c->gated, &codes, error))
    goto out;

  if (o->model.head >= 0)
    w = open_writer (c, o->output.out, 2, (gsize[]) { n, n }, error);
  else
    w = open_writer (c, o->output.out, 4, (gsize[]) { H, D, n, n }, error);
  if (w == NULL)
    goto out;

  for (gsize h = h0; h < h1; h++)
    for (gsize d = d0; d < d1; d++)
      {
        RpeStatus st = RPE_OK;

        if (!empirical)
          {
            st = rpe_spe_template_lags (&c->params, h, d, n, c->gated, lags);
            if (!rpe_cli_status_error (st, "template", error))
              goto out;
          }
        for (gsize m0 = 0; m0 < n; m0 += rows)
          {
            gsize b = MIN (rows, n - m0);

            if (empirical)
              st = rpe_spe_empirical_template_rows (n, H, D, codes.r, codes.qbar, codes.kbar, h, d, m0, b, slab);
            else
              st = rpe_spe_template_rows (lags, n, m0, b, slab);
            if (!rpe_cli_status_error (st, empirical ? "empirical template" : "template", error)
                || !append_slab (c, w, slab, b * n, error))
              goto out;
          }
      }
  ok = commit_writer (c, w, error);
  w = NULL;

out:
  rpe_npy_writer_abort (w);
  rpe_cli_codes_clear (&codes);
  rpe_free (slab);
  rpe_free (lags);
  return ok;
}

static gboolean
compute_codes (Ctx *c, GError **error)
{
  const RpeCliArgs *o = c->o;
  RpeCliCodes codes = { 0 };
  gsize n, shape[4];
  gboolean ok;

  if (o->output.out_keys == NULL)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("codes writes two arrays: give --out-keys K.npy too"));
  if (!rpe_cli_resolve_length (o, 0, &n, error))
    return FALSE;
  if (!rpe_cli_make_codes (o, &c->params, n, FALSE, &codes, error))
    return FALSE;
  shape[0] = n, shape[1] = c->params.n_heads, shape[2] = c->params.n_features, shape[3] = codes.r;
  ok = rpe_cli_write (o, o->output.out, codes.qbar, 4, shape, &c->exit_code, error)
       && rpe_cli_write (o, o->output.out_keys, codes.kbar, 4, shape, &c->exit_code, error);
  rpe_cli_codes_clear (&codes);
  return ok;
}

/* encode / logits / attention share codes + encoding. */
static gboolean
encoded (Ctx *c, RpeCliInputs *in, gsize *r, float **qhat, float **khat, gboolean want_values,
         GError **error)
{
  *qhat = *khat = NULL;
  if (!rpe_cli_load_inputs (c->o, &c->params, want_values, in, error))
    return FALSE;
  return rpe_cli_encode_fused (c->o, &c->params, in, c->gated, r, qhat, khat, error);
}

/* sine: the encoding in slabs of rows (rpe_spe_encode_fused_rows, the same values as the
 * whole call), each slab's --content drawn just before it and its rows appended to the two
 * .npy files: no (N, H, D) or (N, H, R) array, so the memory (and the fresh pages to fault
 * in) does not grow with N; the files are flushed together and renamed at the end. */
static gboolean
compute_encode_streamed (Ctx *c, GError **error)
{
  const RpeCliArgs *o = c->o;
  const gsize H = c->params.n_heads, D = c->params.n_features;
  RpeSpeParams p = c->params;
  RpeCliInputs in = { 0 };
  g_autoptr (RpeTensor) z = NULL;
  float *zd = NULL, *eps = NULL, *q = NULL, *k = NULL, *qhat = NULL, *khat = NULL;
  RpeNpyWriter *wq = NULL, *wk = NULL;
  gboolean       random = FALSE, keys = o->output.out_keys != NULL, ok = FALSE;
  RpeNoiseScheme scheme;
  gsize n, r = 0, rows, noise, shape[3];
  RpeStatus st = RPE_OK;

  if (!c->gated)
    p.gate = NULL;
  if (!rpe_cli_noise_scheme (o, &scheme, error))
    return FALSE;
  if (o->content.queries != NULL || o->content.keys != NULL || rpe_cli_content_is_capture (o))
    {
      /* content from files (or a capture): read whole, encoded and written in slabs */
      if (!rpe_cli_load_inputs (o, &c->params, FALSE, &in, error))
        return FALSE;
      n = in.n;
    }
  else if (!rpe_cli_content_random (o, &random, error) || !rpe_cli_resolve_length (o, 0, &n, error))
    return FALSE;
  if (!load_code_noise (o, &c->params, n, &z, &r, error) || !resolve_realizations_opt (o, r, &r, error))
    goto out;
  /* slabs of whole row blocks, about 1 MiB each */
  rows = MAX ((gsize) 1, ((gsize) 1 << 18) / (RPE_SPE_FUSED_ROWS_ALIGN * H * MAX (D, r))) * RPE_SPE_FUSED_ROWS_ALIGN;
  rows = MIN (rows, n);
  {
    /* the noise when drawn, the gate noise, the slabs */
    const gsize dims[4][4] = {
      { H, D, z == NULL ? 2 * p.n_sines : 0, r },
      { H, D, p.gate != NULL ? r : 0, 1 },
      { rows, H, in.q == NULL ? D : 0, 2 },
      { rows, H, r, 2 },
    };
    if (!rpe_cli_check_budget ("encoding", 4, dims, error))
      goto out;
  }
  if (p.gate != NULL && !load_gate_noise (o, &c->params, r, &eps, error))
    goto out;
  /* as rpe_cli_encode_fused: a scheme's draw, else --noise, else the seeded draw */
  if (scheme != RPE_NOISE_IID)
    {
      if ((zd = scheme_noise (o, &p, n, r, scheme, eps, error)) == NULL)
        goto out;
    }
  else if (z == NULL
           && ((st = rpe_spe_noise_size (&p, n, r, &noise)) != RPE_OK
               || (zd = rpe_alloc (noise, sizeof (float), &st)) == NULL
               || (st = rpe_spe_noise_fill (&p, n, r, (uint64_t) o->draw.seed, zd)) != RPE_OK))
    {
      rpe_cli_status_error (st, "code noise", error);
      goto out;
    }
  if ((in.q == NULL
       && (!rpe_cli_alloc_floats (&q, rows, H, D, 1, "queries", error)
           || (keys && !rpe_cli_alloc_floats (&k, rows, H, D, 1, "keys", error))))
      || !rpe_cli_alloc_floats (&qhat, rows, H, r, 1, "encoding", error)
      || (keys && !rpe_cli_alloc_floats (&khat, rows, H, r, 1, "encoding", error)))
    goto out;

  shape[0] = n, shape[1] = H, shape[2] = r;
  if ((wq = rpe_npy_writer_new (o->output.out, 3, shape, o->output.f64, error)) == NULL
      || (keys && (wk = rpe_npy_writer_new (o->output.out_keys, 3, shape, o->output.f64, error)) == NULL))
    {
      c->exit_code = 1;
      goto out;
    }
  for (gsize m0 = 0; m0 < n; m0 += rows)
    {
      gsize b = MIN (rows, n - m0), count = b * H * r;
      const float *qs = in.q != NULL ? in.q + m0 * H * D : q, *ks = in.k != NULL ? in.k + m0 * H * D : k;

      if (in.q == NULL)
        rpe_cli_content_rows (o, random, H, D, m0, b, q, k);
      st = rpe_spe_encode_fused_rows (&p, n, m0, b, r, zd != NULL ? zd : z->data, eps, qs, keys ? ks : NULL,
                                      qhat, keys ? khat : NULL, NULL);
      if (!rpe_cli_status_error (st, "encoding", error)
          || !rpe_cli_check_finite (o->output.out, qhat, count, m0 * H * r, 3, shape, &c->exit_code, error)
          || (keys
              && !rpe_cli_check_finite (o->output.out_keys, khat, count, m0 * H * r, 3, shape, &c->exit_code, error)))
        goto out;
      if (!rpe_npy_writer_append (wq, qhat, count, error) || (keys && !rpe_npy_writer_append (wk, khat, count, error)))
        {
          c->exit_code = 1;
          goto out;
        }
    }
  ok = rpe_cli_commit_pair (g_steal_pointer (&wq), g_steal_pointer (&wk), &c->exit_code, error);

out:
  rpe_npy_writer_abort (wq);
  rpe_npy_writer_abort (wk);
  rpe_free (zd);
  rpe_free (eps);
  rpe_free (q);
  rpe_free (k);
  rpe_free (qhat);
  rpe_free (khat);
  rpe_cli_inputs_clear (&in);
  return ok;
}

static gboolean
compute_encode (Ctx *c, GError **error)
{
  RpeCliInputs in = { 0 };
  float *qhat = NULL, *khat = NULL;
  gsize r = 0;
  gboolean ok = FALSE;

  if (c->params.method == RPE_SPE_SINE)
    return compute_encode_streamed (c, error);
  if (encoded (c, &in, &r, &qhat, &khat, FALSE, error))
    {
      gsize shape[3] = { in.n, c->params.n_heads, r };

      ok =
        rpe_cli_write_pair (c->o, c->o->output.out, qhat, c->o->output.out_keys, khat, 3, shape, &c->exit_code, error);
    }
  rpe_free (qhat);
  rpe_free (khat);
  rpe_cli_inputs_clear (&in);
  return ok;
}

/* Blocks of exact logits rows (rpe_spe_exact_logits_stream): softmaxed for attention, then
 * appended to the .npy writer; a write error is kept in *error and stops the stream. */
typedef struct
{
  Ctx          *c;
  RpeNpyWriter *w;
  gboolean      attention;
  gsize         n;
  GError      **error;
} ExactSink;

static RpeStatus
exact_sink (size_t head, size_t m0, size_t n_rows, float *rows, void *user_data)
{
  ExactSink *s = user_data;
  RpeStatus st;

  if (s->attention && (st = rpe_softmax_row_block (rows, n_rows, s->n, m0, s->c->o->attention.causal)) != RPE_OK)
    return st;
  if (!append_slab (s->c, s->w, rows, n_rows * s->n, s->error))
    return RPE_ERROR_IO;
  return RPE_OK;
}

/* logits (H, N, N), SPE estimate or --exact; attention = row softmax of them.  The SPE
 * estimate is streamed per head in blocks of rows (logits and softmax fused per block by
 * rpe_logits_rows / rpe_attention_rows, the path the window's attention view and `rpe bench`
 * use); --exact streams blocks of rows of the exact logits (rpe_spe_exact_logits_stream). */
static gboolean
compute_logits (Ctx *c, gboolean attention, GError **error)
{
  RpeCliInputs in = { 0 };
  float *qhat = NULL, *khat = NULL, *logits = NULL;
  gsize H = c->params.n_heads;
  RpeNpyWriter *w = NULL;
  gboolean ok = FALSE;
  RpeStatus st;

  if (c->o->attention.exact)
    {
      ExactSink sink = { c, NULL, attention, in.n, error };
      gsize rows;

      if (!rpe_cli_load_inputs (c->o, &c->params, FALSE, &in, error))
        goto out;
      rows = slab_rows (in.n);
      if (!rpe_cli_alloc_floats (&logits, rows, in.n, 1, 1, "logits", error))
        goto out;
      if ((w = open_writer (c, c->o->output.out, 3, (gsize[]) { H, in.n, in.n }, error)) == NULL)
        goto out;
      /* streamed per block of rows: the header first, the (H, N, N) map never in memory */
      sink.w = w;
      sink.n = in.n;
      st = rpe_spe_exact_logits_stream (&c->params, in.n, in.q, in.k, c->gated, rows, logits, exact_sink, &sink,
                                        NULL);
      if (st == RPE_ERROR_IO)
        goto out;   /* the sink set the error */
      if (!rpe_cli_status_error (st, attention ? "attention" : "logits", error))
        goto out;
      ok = commit_writer (c, w, error);
      w = NULL;
    }
  else
    {
      gsize r, n, rows;
      RpeLogitsSpec spec = { 0 };

      if (!rpe_cli_load_inputs (c->o, &c->params, FALSE, &in, error))
        goto out;
      /* an (H, N, N) output its disk cannot hold is refused before the encoding's work */
      if (!check_output_space (c->o->output.out, 3, (gsize[]) { H, in.n, in.n }, c->o->output.f64, error))
        goto out;
      if (!rpe_cli_encode_fused (c->o, &c->params, &in, c->gated, &r, &qhat, &khat, error))
        goto out;
      n = in.n;
      rows = slab_rows (n);
      if (!rpe_cli_alloc_floats (&logits, rows, n, 1, 1, "logits", error))
        goto out;
      /* lhat[h, m, n] = qhat[m, h] . khat[n, h] / sqrt(R): the dot logits of width R */
      spec.kind = RPE_LOGITS_DOT;
      spec.n = n;
      spec.n_heads = H;
      spec.d = r;
      spec.q = qhat;
      spec.k = khat;
      if (!rpe_cli_status_error (rpe_logits_spec_check (&spec), "encoding", error))
        goto out;
      spec.inputs_checked = true;   /* checked once, not per block */
      if ((w = open_writer (c, c->o->output.out, 3, (gsize[]) { H, n, n }, error)) == NULL)
        goto out;
      for (gsize h = 0; h < H; h++)
        for (gsize m0 = 0; m0 < n; m0 += rows)
          {
            gsize b = MIN (rows, n - m0);

            if (attention)
              st = rpe_attention_rows_parallel (&spec, h, m0, b, c->o->attention.causal, logits, NULL);
            else
              {
                st = rpe_logits_rows (&spec, h, m0, b, FALSE, logits, NULL);
              }
            if (!rpe_cli_status_error (st, attention ? "attention" : "logits", error)
                || !append_slab (c, w, logits, b * n, error))
              goto out;
          }
      ok = commit_writer (c, w, error);
      w = NULL;
    }

out:
  rpe_npy_writer_abort (w);
  rpe_free (logits);
  rpe_free (qhat);
  rpe_free (khat);
  rpe_cli_inputs_clear (&in);
  return ok;
}

/* rpe-logits: exact Shaw/Huang relative logits with skewing, E from the template or a file. */
static gboolean
compute_rpe_logits (Ctx *c, GError **error)
{
  const RpeCliArgs *o = c->o;
  RpeCliInputs in = { 0 };
  g_autoptr (RpeTensor) e_file = NULL;
  float *rel = NULL, *lags = NULL, *logits = NULL;
  gsize H = c->params.n_heads, D = c->params.n_features, n, rows, block;
  gboolean per_head = TRUE, ok = FALSE;
  RpeRelSpec spec = { 0 };
  RpeNpyWriter *w = NULL;
  RpeStatus st;

  if (!rpe_cli_load_inputs (o, &c->params, FALSE, &in, error))
    return FALSE;
  n = in.n;
  rows = 2 * n - 1;

  if (o->content.relative_embeddings != NULL)
    {
      e_file = rpe_cli_read_npy (o->content.relative_embeddings, error);
      if (e_file == NULL || !rpe_tensor_check_finite (e_file, error))
        goto out;
      if (e_file->ndim == 2 && e_file->shape[0] == rows && e_file->shape[1] == D)
        per_head = FALSE;
      else if (!(e_file->ndim == 3 && e_file->shape[0] == H && e_file->shape[1] == rows && e_file->shape[2] == D))
        {
          g_autofree char *shape = rpe_tensor_shape_string (e_file);
          rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                         _("%s: relative embeddings must have shape (%zu, %zu) or (%zu, %zu, %zu), got %s"),
                         o->content.relative_embeddings, (size_t) rows, (size_t) D, (size_t) H, (size_t) rows,
                         (size_t) D, shape);
          goto out;
        }
    }
  else
    {
      /* E[h][i][d] = Ptilde_hd(tau), tau = i - (N-1) */
      if (!rpe_cli_alloc_floats (&rel, H, rows, D, 1, "relative embeddings", error)
          || !rpe_cli_alloc_floats (&lags, rows, 1, 1, 1, "template profile", error))
        goto out;
      for (gsize h = 0; h < H; h++)
        for (gsize d = 0; d < D; d++)
          {
            st = rpe_spe_template_lags (&c->params, h, d, n, c->gated, lags);
            if (!rpe_cli_status_error (st, "template profile", error))
              goto out;
            for (gsize i = 0; i < rows; i++)
              rel[(h * rows + i) * D + d] = lags[i];
          }
    }

  block = slab_rows (n);
  if (!rpe_cli_alloc_floats (&logits, block, n, 1, 1, "logits", error))
    goto out;
  spec.n = n;
  spec.n_heads = H;
  spec.d = D;
  spec.q = in.q;
  spec.k = in.k;
  spec.rel = e_file != NULL ? e_file->data : rel;
  spec.rel_per_head = per_head;
  spec.causal = o->attention.causal;
  /* streamed per block of rows (header first, atomic commit): the (H, N, N) map never in memory */
  if ((w = open_writer (c, o->output.out, 3, (gsize[]) { H, n, n }, error)) == NULL)
    goto out;
  for (gsize h = 0; h < H; h++)
    for (gsize m0 = 0; m0 < n; m0 += block)
      {
        gsize b = MIN (block, n - m0);

        st = rpe_rel_logits_rows (&spec, h, m0, b, logits, NULL);
        if (!rpe_cli_status_error (st, "relative logits", error) || !append_slab (c, w, logits, b * n, error))
          goto out;
      }
  ok = commit_writer (c, w, error);
  w = NULL;

out:
  rpe_npy_writer_abort (w);
  rpe_free (rel);
  rpe_free (lags);
  rpe_free (logits);
  rpe_cli_inputs_clear (&in);
  return ok;
}

/* With random init, the whole request (parameters, noise, codes, outputs) is checked against the
 * memory budget before the parameters are drawn; N and R are taken from the options (or their
 * defaults).  Later steps check again with the sizes actually read from files. */
static gboolean
precheck_random_request (const RpeCliArgs *o, const char *what, GError **error)
{
  gboolean sine = o->model.method == NULL || g_str_equal (o->model.method, "sine");
  gsize H, D, S, n, r;
  gboolean codes, encodes;

  if (o->model.checkpoint != NULL || o->model.heads < 1 || o->model.features < 1 || o->model.sines < 1
      || o->model.kernel < 1)
    return TRUE;   /* validated with a precise message later */
  H = (gsize) o->model.heads;
  D = (gsize) o->model.features;
  S = sine ? (gsize) o->model.sines : (gsize) o->model.kernel;
  n = o->draw.length != RPE_CLI_UNSET && o->draw.length > 0 ? (gsize) o->draw.length : 256;
  r = o->draw.realizations != RPE_CLI_UNSET && o->draw.realizations > 0 ? (gsize) o->draw.realizations : 64;
  /* only `codes` and `empirical` form the (N, H, D, R) codes; encode, logits, attention and
   * linear take the fused path (O(N H R) outputs, the sine noise; conv draws its noise in slabs) */
  codes = g_str_equal (what, "codes") || g_str_equal (what, "empirical");
  encodes = !codes && !g_str_equal (what, "template") && !g_str_equal (what, "rpe-logits") && !o->attention.exact;
  if ((g_str_equal (what, "template") || g_str_equal (what, "empirical") || g_str_equal (what, "logits")
       || g_str_equal (what, "attention") || g_str_equal (what, "rpe-logits"))
      && rpe_size_bytes (&(gsize) { 0 }, sizeof (double), H, D, n, n) != RPE_OK)
    return rpe_cli_status_error (RPE_ERROR_OVERFLOW, what, error);   /* even the streamed file cannot be addressed */
  {
    const gsize dims[6][4] = {
      { H, D, S, sine ? 3 : 2 },                                    /* parameters */
      { H, D, codes || (encodes && sine) ? (sine ? 2 * S : 1) : 0, sine ? r : r * (n + 4 * S) },   /* noise */
      { n, H, D, codes ? r : 0 },                                   /* Qbar */
      { n, H, D, codes ? r : 0 },                                   /* Kbar */
      { n, H, D, 3 },                                               /* q, k, v */
      /* N x N outputs: streamed a slab of rows at a time */
      { 1, 1, MAX ((gsize) 1, MIN (n, SLAB_FLOATS / n)), n },
    };
    return rpe_cli_check_budget (what, 6, dims, error);
  }
}

#define WHATS                                                                                         \
  "template | empirical | codes | encode | logits | attention | linear | rpe-logits | lrpe-encode | " \
  "lrpe-attention | lrpe-linear | fastrpb"

int
rpe_cli_compute (int argc, char **argv)
{
  const RpeCliCommand *command = &rpe_cli_compute_command;
  const RpeCliLeaf    *leaf;
  RpeCliArgs           o;
  Ctx c = { 0 };
  g_autoptr (GError) error = NULL;
  const char *what;
  gboolean ok = FALSE;
  int         status, index;

  leaf = rpe_cli_find_leaf (command, argc, argv, &index);
  if (leaf == NULL)
    {
      if (rpe_cli_wants_help (command, NULL, argc, argv))
        {
          rpe_cli_print_command_help (command, stdout);
          return 0;
        }
      if (index < 0)
        fprintf (stderr, _("rpe compute: %s\n"), "say what to compute: " WHATS);
      else
        fprintf (stderr, _("rpe compute: unknown WHAT '%s' (" WHATS ")\n"), argv[index]);
      return 2;
    }
  what = leaf->name;
  rpe_cli_args_init (&o);
  if (!rpe_cli_parse (command, leaf, NULL, &o, &o, &argc, &argv, &status))
    {
      rpe_cli_args_clear (&o);
      return status;
    }
  if (argc != 2)
    {
      fprintf (stderr, _("rpe compute: %s\n"), "too many arguments");
      rpe_cli_args_clear (&o);
      return 2;
    }
  if (o.output.out == NULL)
    {
      fprintf (stderr, _("rpe compute: -o OUT.npy is required\n"));
      rpe_cli_args_clear (&o);
      return 2;
    }

  if (!rpe_cli_check_output (&o, o.output.out, &error) || !rpe_cli_check_output (&o, o.output.out_keys, &error))
    {
      fprintf (stderr, _("rpe compute %s: %s\n"), what, error->message);
      rpe_cli_args_clear (&o);
      return 1;
    }

  if (o.attention.exact
      && (o.draw.noise != NULL || o.draw.gate_noise != NULL || o.draw.noise_scheme != NULL
          || o.draw.realizations != RPE_CLI_UNSET))
    {
      /* the exact logits of the template draw no codes: what would shape them is not dropped */
      fprintf (stderr, _("rpe compute %s: %s is not used with --exact (the exact logits draw no codes): remove it\n"),
               what,
               o.draw.noise != NULL          ? "--noise"
               : o.draw.gate_noise != NULL   ? "--gate-noise"
               : o.draw.noise_scheme != NULL ? "--noise-scheme"
                                             : "--realizations");
      rpe_cli_args_clear (&o);
      return 2;
    }

  c.o = &o;
  c.exit_code = 0;
  if (g_str_has_prefix (what, "lrpe-") || g_str_equal (what, "fastrpb"))
    {
      ok = rpe_cli_compute_positional (what, &o, &c.exit_code, &error);
      goto out;
    }
  if (o.model.grid != NULL)
    {
      /* 2-D convSPE over an image grid (rpe-cli-conv2d.c) */
      ok = rpe_cli_compute_grid (what, &o, &c.exit_code, &error);
      goto out;
    }
  if (g_str_equal (what, "encode"))
    {
      /* every BLAS call of the encoding runs inside its parallel regions, at one OpenBLAS
       * thread: stop OpenBLAS's idle pool, which would spin on a core through the command */
      rpe_parallel_blas_serial ();
    }
  if (!precheck_random_request (&o, what, &error) || !rpe_cli_load_params (&o, &c.params, &error))
    goto out;
  if (c.params.method == RPE_SPE_CONV && c.params.kernel_cols != 0)
    {
      rpe_set_error (&error, RPE_ERROR_INVALID_ARGUMENT,
                     _("the module is 2-D convSPE (%zu x %zu filters): give its image grid with --grid N1xN2 "
                       "(template, empirical, codes, encode)"), (size_t) c.params.kernel, (size_t) c.params.kernel_cols);
      goto out;
    }
  c.gated = c.params.gate != NULL;

  if (g_str_equal (what, "template"))
    ok = compute_template (&c, FALSE, &error);
  else if (g_str_equal (what, "empirical"))
    ok = compute_template (&c, TRUE, &error);
  else if (g_str_equal (what, "codes"))
    ok = compute_codes (&c, &error);
  else if (g_str_equal (what, "encode"))
    ok = compute_encode (&c, &error);
  else if (g_str_equal (what, "logits"))
    ok = compute_logits (&c, FALSE, &error);
  else if (g_str_equal (what, "attention"))
    ok = compute_logits (&c, TRUE, &error);
  else if (g_str_equal (what, "linear"))
    ok = rpe_cli_compute_linear (&o, &c.params, c.gated, &c.exit_code, &error);
  else if (g_str_equal (what, "rpe-logits"))
    ok = compute_rpe_logits (&c, &error);

out:
  if (ok)
    status = 0;
  else
    {
      fprintf (stderr, _("rpe compute %s: %s\n"), what, error ? error->message : "failed");
      status = c.exit_code != 0 ? c.exit_code : rpe_cli_exit_code_for_error (error);
    }
  rpe_spe_params_clear (&c.params);
  rpe_cli_args_clear (&o);
  return status;
}

/* linear: SPE-encoded queries/keys (N, H, R) through a feature map, then linear attention
 * over the values: (N, H, Dv).  Never forms N x N. */
gboolean
rpe_cli_parse_feature_map (const RpeCliArgs  *o,
                           RpeFeatureMap     *map,
                           RpeFeatureOptions *fopts,
                           gsize              width,
                           GError           **error)
{
  const char *name = o->attention.feature_map != NULL ? o->attention.feature_map : "elu1";
  static const struct { const char *name; RpeFeatureMap map; } maps[] = {
    { "relu", RPE_FEATURE_RELU }, { "elu1", RPE_FEATURE_ELU1 }, { "exp", RPE_FEATURE_EXP },
    { "performer", RPE_FEATURE_PERFORMER }, { "dpfp", RPE_FEATURE_DPFP },
  };
  gboolean found = FALSE;

  for (gsize i = 0; i < G_N_ELEMENTS (maps); i++)
    if (g_str_equal (name, maps[i].name))
      {
        *map = maps[i].map;
        found = TRUE;
      }
  if (!found)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          _("--feature-map must be relu, elu1, exp, performer or dpfp (got '%s')"), name);
  memset (fopts, 0, sizeof *fopts);
  fopts->seed = (uint64_t) o->draw.seed;
  fopts->m = o->attention.performer_features > 0 ? (size_t) o->attention.performer_features : width;
  fopts->orthogonal = TRUE;
  fopts->nu = (size_t) MAX (o->attention.dpfp_nu, 0);
  if (o->attention.performer_features == 0 || o->attention.performer_features < -1)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--performer-features must be at least 1"));
  if (*map == RPE_FEATURE_DPFP && (o->attention.dpfp_nu < 1 || (gsize) o->attention.dpfp_nu >= 2 * width))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          _("--dpfp-nu must be between 1 and %zu for width %zu"), (size_t) (2 * width - 1),
                          (size_t) width);
  return TRUE;
}

gboolean
rpe_cli_compute_linear (const RpeCliArgs *o, const RpeSpeParams *params, gboolean gated, int *exit_code, GError **error)
{
  RpeCliInputs in = { 0 };
  float *qhat = NULL, *khat = NULL, *y = NULL;
  RpeFeatureMap map;
  RpeFeatureOptions fopts;
  gsize H = params->n_heads, r;
  gboolean ok = FALSE;
  RpeStatus st;

  if (!rpe_cli_load_inputs (o, params, TRUE, &in, error))
    return FALSE;
  if (!rpe_cli_encode_fused (o, params, &in, gated, &r, &qhat, &khat, error))
    goto out;
  if (!rpe_cli_parse_feature_map (o, &map, &fopts, r, error))
    goto out;
  if (!rpe_cli_alloc_floats (&y, in.n, H, in.dv, 1, "output", error))
    goto out;
  st = rpe_linear_attention_qkv (map, &fopts, in.n, H, r, in.dv, qhat, khat, in.v, o->attention.causal, y, NULL);
  if (!rpe_cli_status_error (st, "linear attention", error))
    goto out;
  ok = rpe_cli_write (o, o->output.out, y, 3, (gsize[]) { in.n, H, in.dv }, exit_code, error);

out:
  rpe_free (y);
  rpe_free (qhat);
  rpe_free (khat);
  rpe_cli_inputs_clear (&in);
  return ok;
}

/* ------------------------------------------------------------------------ */
/* The command                                                              */

/* compute's own option: -o (the rest are the shared groups' options) */
static const RpeCliOption compute_options[] = { { "output", 'o', RPE_CLI_ARG_FILE,
                                                  G_STRUCT_OFFSET (RpeCliArgs, output.out), 0, 0, 0, 0, 0, NULL,
                                                  N_("Write the result here (.npy)"), "OUT.npy" },
                                                { NULL } };

#define SPE_CODES                                                                                                      \
  (RPE_CLI_TAKES_MODEL | RPE_CLI_TAKES_SPE | RPE_CLI_TAKES_SEQUENCE | RPE_CLI_TAKES_REALIZATIONS | RPE_CLI_TAKES_NOISE \
   | RPE_CLI_TAKES_NOISE_SCHEME | RPE_CLI_TAKES_GRID | RPE_CLI_TAKES_F64 | RPE_CLI_TAKES_FORCE)
#define SPE_INPUTS (SPE_CODES | RPE_CLI_TAKES_GATE_NOISE | RPE_CLI_TAKES_QUERIES | RPE_CLI_TAKES_CONTENT)
/* --layer: the layer of a captured --content */
#define POSITIONAL                                                                                                  \
  (RPE_CLI_TAKES_MODEL | RPE_CLI_TAKES_SEQUENCE | RPE_CLI_TAKES_QUERIES | RPE_CLI_TAKES_CONTENT | RPE_CLI_TAKES_F64 \
   | RPE_CLI_TAKES_FORCE | RPE_CLI_TAKES_LAYER)
#define LINEAR_MAP (RPE_CLI_TAKES_FEATURE_MAP | RPE_CLI_TAKES_FEATURE_OPTIONS | RPE_CLI_TAKES_CAUSAL)
#define LRPE_ALL (RPE_CLI_TAKES_LRPE | RPE_CLI_TAKES_LRPE_FILES | RPE_CLI_TAKES_TRAIN_LENGTH)

static const RpeCliLeaf compute_leaves[] = {
  { "template", N_("The analytic template of the SPE module: (H, D, N, N), or (N, N) of one head and feature"),
    N_("The analytic template Ptilde_hd(m, n) of the SPE module (the logit kernel the SPE estimate\n"
       "converges to), from its parameters alone: (H, D, N, N), or (N, N) for one --head and --feature.\n"
       "Written a slab of rows at a time: the memory does not grow with H x D x N^2.  With --grid N1xN2\n"
       "and a 2-D convSPE module, over an image grid (positions row-major)."),
    "compute template --checkpoint demo --length 128 --head 0 --feature 0 -o template.npy",
    RPE_CLI_TAKES_MODEL | RPE_CLI_TAKES_SPE | RPE_CLI_TAKES_SEQUENCE | RPE_CLI_TAKES_HEAD_FEATURE | RPE_CLI_TAKES_GRID
      | RPE_CLI_TAKES_KERNEL_COLS | RPE_CLI_TAKES_F64 | RPE_CLI_TAKES_FORCE,
    0, "checkpoint length head feature", NULL, NULL, NULL },
  { "empirical", N_("The template of one draw of R realizations: (H, D, N, N) or (N, N)"),
    N_("The empirical template of one draw: the mean over R realizations of Qbar Kbar^T, which\n"
       "converges to the analytic template as R grows.  (H, D, N, N), or (N, N) for one --head and\n"
       "--feature.  The noise is seeded (--seed, --noise-scheme) or replayed (--noise, --gate-noise)."),
    "compute empirical --checkpoint demo --length 128 --realizations 256 --head 0 --feature 0 -o empirical.npy",
    SPE_CODES | RPE_CLI_TAKES_GATE_NOISE | RPE_CLI_TAKES_HEAD_FEATURE | RPE_CLI_TAKES_KERNEL_COLS, 0,
    "checkpoint length realizations head feature", NULL, NULL, NULL },
  { "codes", N_("The codes Qbar and Kbar, (N, H, D, R) each: -o and --out-keys"),
    N_("The SPE codes before gating and content: Qbar to -o and Kbar to --out-keys, (N, H, D, R) each,\n"
       "from seeded noise (--seed, --noise-scheme) or replayed noise (--noise)."),
    "compute codes --length 64 --realizations 16 -o qbar.npy --out-keys kbar.npy",
    SPE_CODES | RPE_CLI_TAKES_KERNEL_COLS | RPE_CLI_TAKES_OUT_KEYS, 0, "checkpoint length realizations out-keys", NULL,
    NULL, NULL },
  { "encode", N_("SPE-encoded queries (and keys with --out-keys): (N, H, R)"),
    N_("The queries (and, with --out-keys, the keys) encoded by SPE: qhat = (q x Qbar) / sqrt(R) per head,\n"
       "(N, H, R), gated when the module has a gate.  The content is --queries/--keys, or --content unit\n"
       "(all ones, the default) or random (seeded N(0, 1)).  The codes are never formed whole."),
    "compute encode --checkpoint demo --content random --length 1024 -o qhat.npy --out-keys khat.npy",
    SPE_INPUTS | RPE_CLI_TAKES_KERNEL_COLS | RPE_CLI_TAKES_OUT_KEYS, 0,
    "checkpoint queries content length realizations out-keys", NULL, NULL, NULL },
  { "logits", N_("SPE logits (H, N, N), or the exact ones with --exact"),
    N_("The logits of every head, (H, N, N): the SPE estimate qhat . khat / sqrt(R), or with --exact the\n"
       "exact logits of the template.  Written a block of rows at a time."),
    "compute logits --checkpoint demo --content random --length 256 --exact -o logits.npy",
    SPE_INPUTS | RPE_CLI_TAKES_EXACT | RPE_CLI_TAKES_CAUSAL, 0, "checkpoint queries content length exact", NULL, NULL,
    NULL },
  { "attention", N_("Attention maps (H, N, N): the row softmax of the logits"),
    N_("The attention map of every head, (H, N, N): the row softmax of the SPE logits (or of the exact\n"
       "ones with --exact), --causal masking the keys after each query.  The map the window's\n"
       "Attention view draws, written a block of rows at a time."),
    "compute attention --checkpoint demo --length 512 -o attention.npy",
    SPE_INPUTS | RPE_CLI_TAKES_EXACT | RPE_CLI_TAKES_CAUSAL, 0,
    "checkpoint queries content length realizations exact causal", NULL, NULL, NULL },
  { "linear", N_("Linear attention with SPE: the outputs (N, H, Dv)"),
    N_("Linear attention over SPE-encoded queries and keys through a feature map (--feature-map), with\n"
       "values --values (N, H, Dv) or seeded ones: the outputs (N, H, Dv).  Never forms an N x N map."),
    "compute linear --checkpoint demo --content random --length 4096 --feature-map elu1 -o y.npy",
    SPE_INPUTS | RPE_CLI_TAKES_VALUES | LINEAR_MAP, 0, "checkpoint queries values length feature-map causal", NULL,
    NULL, NULL },
  { "rpe-logits", N_("Exact relative-position logits (H, N, N), skewed as Music Transformer does"),
    N_("The exact relative logits q_m . (k_n + E[m - n]) of Shaw et al., computed with Huang et al.'s\n"
       "skewing: E is the module's template (per head) or --relative-embeddings (2N-1, D) or\n"
       "(H, 2N-1, D).  (H, N, N), written a block of rows at a time."),
    "compute rpe-logits --checkpoint demo --content random --length 256 -o rel-logits.npy",
    RPE_CLI_TAKES_MODEL | RPE_CLI_TAKES_SPE | RPE_CLI_TAKES_SEQUENCE | RPE_CLI_TAKES_QUERIES | RPE_CLI_TAKES_CONTENT
      | RPE_CLI_TAKES_RELATIVE | RPE_CLI_TAKES_CAUSAL | RPE_CLI_TAKES_GRID | RPE_CLI_TAKES_F64 | RPE_CLI_TAKES_FORCE,
    0, "checkpoint queries content relative-embeddings causal", NULL, NULL, NULL },
  { "lrpe-encode", N_("LRPE-encoded queries (and keys with --out-keys): (N, H, D)"),
    N_("Queries (and keys) encoded by a linearized relative positional encoding: M(m) = P Lambda(m)\n"
       "P^T, chosen with --lrpe-p, --lrpe-lambda and --lrpe-theta, with trained parameters from the\n"
       "checkpoint's LRPE module or the --lrpe-v/--lrpe-theta-file/--lrpe-permutation files.\n"
       "(N, H, D), or (N, H, 2d') [real | imag] for complex Lambda (d' = D//2+1 for fourier)."),
    "compute lrpe-encode --lrpe-lambda mixed --content random --length 128 -o q-lrpe.npy --out-keys k-lrpe.npy",
    POSITIONAL | LRPE_ALL | RPE_CLI_TAKES_OUT_KEYS, 0, "checkpoint queries content lrpe-p lrpe-lambda lrpe-theta", NULL,
    NULL, NULL },
  { "lrpe-attention", N_("The attention map LRPE implies: (H, N, N)"),
    N_("The row-normalised attention map of linear attention with LRPE: the feature map (--feature-map,\n"
       "default elu1) on q and k, LRPE after it (or before with --lrpe-before), --causal masking.\n"
       "(H, N, N)."),
    "compute lrpe-attention --content random --length 128 -o lrpe-attention.npy",
    POSITIONAL | LRPE_ALL | LINEAR_MAP | RPE_CLI_TAKES_LRPE_BEFORE, 0,
    "checkpoint queries content lrpe-p lrpe-lambda feature-map causal", NULL, NULL, NULL },
  { "lrpe-linear", N_("Linear attention with LRPE: the outputs (N, H, Dv)"),
    N_("Linear attention with LRPE over values --values (N, H, Dv) or seeded ones, normalised as\n"
       "--lrpe-norm says: the outputs (N, H, Dv).  Never forms an N x N map."),
    "compute lrpe-linear --content random --length 1024 -o y-lrpe.npy",
    POSITIONAL | LRPE_ALL | LINEAR_MAP | RPE_CLI_TAKES_VALUES | RPE_CLI_TAKES_LRPE_BEFORE | RPE_CLI_TAKES_LRPE_NORM, 0,
    "checkpoint queries values lrpe-p lrpe-lambda lrpe-norm causal", NULL, NULL, NULL },
  { "fastrpb", N_("FastRPB: the Toeplitz bias applied to the values, W V (N, H, Dv)"),
    N_("FastRPB's output Y = W V (plus an attention of q and k with --fastrpb-attention), (N, H, Dv):\n"
       "W the Toeplitz matrix of the weights --bias (or the checkpoint's FastRPB module), applied by\n"
       "FFT; with --grid N1xN2 the 2-D bias of row and column weights."),
    "compute fastrpb --checkpoint demo:fastrpb --prefix layers.0.positional_bias --bias-layout full --heads 4 --length 256 "
    "-o y-fastrpb.npy",
    POSITIONAL | RPE_CLI_TAKES_VALUES | LINEAR_MAP | RPE_CLI_TAKES_BIAS | RPE_CLI_TAKES_GRID | RPE_CLI_TAKES_BIAS_2D
      | RPE_CLI_TAKES_FASTRPB_ATTENTION,
    0, "checkpoint values length bias fastrpb-attention", NULL, NULL, NULL },
};

const RpeCliCommand rpe_cli_compute_command = {
  .name = "compute",
  .summary = N_("Compute an array as .npy: templates, codes, encodings, logits, attention, outputs"),
  .leaf_arg = "WHAT",
  .description = N_("Computes one array of the numeric core and writes it as .npy (float32, or float64 with\n"
                    "--f64): the same paths as the window and 'rpe bench'.  Parameters come from --checkpoint\n"
                    "(or random init: --heads, --features, --method, --sines, --kernel, --seed)."),
  .example = "compute attention --checkpoint demo --length 512 -o attention.npy",
  .options = compute_options,
  .leaves = compute_leaves,
  .n_leaves = G_N_ELEMENTS (compute_leaves),
  .run = rpe_cli_compute,
};

/* rpe-cli-lrpe.c: `rpe compute lrpe-encode | lrpe-attention | lrpe-linear | fastrpb` */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rpe-alloc.h"
#include "rpe-attention.h"
#include "rpe-error.h"
#include "rpe-fastrpb.h"
#include "rpe-lrpe.h"
#include "rpe-npy.h"
#include "rpe-rng.h"

#include "rpe-cli.h"

typedef struct
{
  const char *name;
  int         value;
} Choice;

static gboolean
parse_choice (const char *option, const char *given, const char *fallback, const Choice *choices,
              gsize n_choices, int *out, GError **error)
{
  const char *name = given != NULL ? given : fallback;
  g_autoptr(GString) list = g_string_new (NULL);

  for (gsize i = 0; i < n_choices; i++)
    {
      if (g_str_equal (name, choices[i].name))
        {
          *out = choices[i].value;
          return TRUE;
        }
      g_string_append_printf (list, "%s%s", i ? ", " : "", choices[i].name);
    }
  return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, "%s must be one of %s (got '%s')",
                        option, list->str, name);
}

static gboolean
alloc_floats (float **out, gsize a, gsize b, gsize c, const char *what, GError **error)
{
  gsize count;
  RpeStatus st = rpe_size_bytes (&count, 1, a, b, c, 1);

  *out = NULL;
  if (st == RPE_OK)
    *out = rpe_alloc (count, sizeof (float), &st);
  return rpe_cli_status_error (st, what, error);
}

/* Queries/keys/values for LRPE and FastRPB: loaded, or unit/random content of --heads x --features. */
static gboolean
load_plain_inputs (const RpeCliOptions *o, gboolean want_values, RpeCliInputs *in, gsize *heads,
                   gsize *dim, GError **error)
{
  RpeSpeParams shape = { 0 };

  if (o->queries != NULL)
    {
      g_autoptr(RpeTensor) q = rpe_cli_read_array (o->queries, 3, "queries", error);
      if (q == NULL)
        return FALSE;
      shape.n_heads = q->shape[1];
      shape.n_features = q->shape[2];
    }
  else
    {
      if (o->heads < 1 || o->heads > 4096 || o->features < 1 || o->features > (1 << 16))
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                              "--heads must be 1..4096 and --features 1..65536");
      shape.n_heads = (gsize) o->heads;
      shape.n_features = (gsize) o->features;
    }
  if (shape.n_heads == 0 || shape.n_features == 0)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, "%s: empty queries", o->queries);
  *heads = shape.n_heads;
  *dim = shape.n_features;
  return rpe_cli_load_inputs (o, &shape, want_values, in, error);
}

static RpeLrpe *
make_lrpe (const RpeCliOptions *o, gsize dim, gsize n, GError **error)
{
  static const Choice ps[] = {
    { "identity", RPE_LRPE_P_IDENTITY }, { "householder", RPE_LRPE_P_HOUSEHOLDER },
    { "permutation", RPE_LRPE_P_PERMUTATION }, { "odd-even", RPE_LRPE_P_ODD_EVEN },
    { "fourier", RPE_LRPE_P_FOURIER }, { "dct", RPE_LRPE_P_DCT },
  };
  static const Choice lambdas[] = {
    { "rotation", RPE_LRPE_LAMBDA_ROTATION }, { "mixed", RPE_LRPE_LAMBDA_MIXED },
    { "complex", RPE_LRPE_LAMBDA_COMPLEX_EXP }, { "permutation", RPE_LRPE_LAMBDA_PERMUTATION },
  };
  static const Choice thetas[] = {
    { "a", RPE_LRPE_THETA_A }, { "b", RPE_LRPE_THETA_B }, { "c", RPE_LRPE_THETA_C },
  };
  RpeLrpeConfig config = { 0 };
  int p, lambda, theta;
  RpeStatus st;
  RpeLrpe *lrpe;

  if (!parse_choice ("--lrpe-p", o->lrpe_p, "identity", ps, G_N_ELEMENTS (ps), &p, error)
      || !parse_choice ("--lrpe-lambda", o->lrpe_lambda, "rotation", lambdas, G_N_ELEMENTS (lambdas), &lambda, error)
      || !parse_choice ("--lrpe-theta", o->lrpe_theta, "a", thetas, G_N_ELEMENTS (thetas), &theta, error))
    return NULL;
  config.dim = dim;
  config.length = o->train_length != RPE_CLI_UNSET ? (gsize) o->train_length : n;
  config.p = (RpeLrpeP) p;
  config.lambda = (RpeLrpeLambda) lambda;
  config.theta_kind = (RpeLrpeTheta) theta;
  config.seed = (uint64_t) o->seed;
  lrpe = rpe_lrpe_new (&config, &st);
  if (lrpe == NULL)
    rpe_cli_status_error (st, "LRPE", error);
  return lrpe;
}

/* lrpe-encode: (N, H, D), or (N, H, 2D) as [real | imag] for complex maps. */
static gboolean
lrpe_encode (const RpeCliOptions *o, int *exit_code, GError **error)
{
  RpeCliInputs in = { 0 };
  RpeLrpe *lrpe = NULL;
  float *out = NULL;
  gsize H, D, W;
  gboolean ok = FALSE;
  RpeStatus st;

  if (!load_plain_inputs (o, FALSE, &in, &H, &D, error))
    return FALSE;
  lrpe = make_lrpe (o, D, in.n, error);
  if (lrpe == NULL)
    goto out;
  W = rpe_lrpe_out_width (lrpe);
  if (!alloc_floats (&out, in.n, H, W, "encoded queries", error))
    goto out;
  st = rpe_lrpe_encode (lrpe, in.n, H, 0, in.q, out, NULL);
  if (!rpe_cli_status_error (st, "LRPE encoding", error))
    goto out;
  ok = rpe_cli_write (o, o->out, out, 3, (gsize[]) { in.n, H, W }, exit_code, error);
  if (ok && o->out_keys != NULL)
    {
      st = rpe_lrpe_encode (lrpe, in.n, H, 0, in.k, out, NULL);
      ok = rpe_cli_status_error (st, "LRPE encoding", error)
           && rpe_cli_write (o, o->out_keys, out, 3, (gsize[]) { in.n, H, W }, exit_code, error);
    }

out:
  rpe_free (out);
  rpe_lrpe_free (lrpe);
  rpe_cli_inputs_clear (&in);
  return ok;
}

/* Features phi(q), phi(k) for LRPE: (N, H, M).  With --lrpe-before, q and k are LRPE-encoded
 * first (the feature map then acts on the encoded rows) and *lrpe_after is set to NULL. */
static gboolean
lrpe_features (const RpeCliOptions *o, RpeCliInputs *in, gsize H, gsize D, RpeLrpe *lrpe,
               float **phi_q, float **phi_k, gsize *m, GError **error)
{
  RpeFeatureMap map;
  RpeFeatureOptions fopts;
  const float *q = in->q, *k = in->k;
  float *eq = NULL, *ek = NULL;
  gsize width = D;
  gboolean ok = FALSE;
  RpeStatus st;

  *phi_q = *phi_k = NULL;
  if (o->lrpe_before)
    {
      width = rpe_lrpe_out_width (lrpe);
      if (!alloc_floats (&eq, in->n, H, width, "encoded queries", error)
          || !alloc_floats (&ek, in->n, H, width, "encoded keys", error))
        goto out;
      st = rpe_lrpe_encode (lrpe, in->n, H, 0, in->q, eq, NULL);
      if (st == RPE_OK)
        st = rpe_lrpe_encode (lrpe, in->n, H, 0, in->k, ek, NULL);
      if (!rpe_cli_status_error (st, "LRPE encoding", error))
        goto out;
      q = eq;
      k = ek;
    }
  if (!rpe_cli_parse_feature_map (o, &map, &fopts, width, error))
    goto out;
  st = rpe_feature_map_dim (map, &fopts, width, m);
  if (!rpe_cli_status_error (st, "feature map", error))
    goto out;
  if (!o->lrpe_before && *m != D)
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                     "LRPE after the feature map needs as many features as dims (%zu); "
                     "the %s map gives %zu: use --lrpe-before or --performer-features %zu",
                     (size_t) D, o->feature_map ? o->feature_map : "elu1", (size_t) *m, (size_t) D);
      goto out;
    }
  if (!alloc_floats (phi_q, in->n, H, *m, "query features", error)
      || !alloc_floats (phi_k, in->n, H, *m, "key features", error))
    goto out;
  st = rpe_feature_map_apply (map, &fopts, RPE_FEATURE_QUERY, in->n, H, width, q, *phi_q, NULL);
  if (st == RPE_OK)
    st = rpe_feature_map_apply (map, &fopts, RPE_FEATURE_KEY, in->n, H, width, k, *phi_k, NULL);
  ok = rpe_cli_status_error (st, "feature map", error);

out:
  rpe_free (eq);
  rpe_free (ek);
  if (!ok)
    {
      g_clear_pointer (phi_q, rpe_free);
      g_clear_pointer (phi_k, rpe_free);
    }
  return ok;
}

/* lrpe-attention (H, N, N): the implied, row-normalised map.
 * lrpe-linear (N, H, Dv): linear attention with LRPE. */
static gboolean
lrpe_attention (const RpeCliOptions *o, gboolean linear, int *exit_code, GError **error)
{
  static const Choice norms[] = {
    { "denominator", RPE_LRPE_NORM_DENOMINATOR }, { "layer", RPE_LRPE_NORM_LAYER },
    { "none", RPE_LRPE_NORM_NONE },
  };
  RpeCliInputs in = { 0 };
  RpeLrpe *lrpe = NULL;
  float *phi_q = NULL, *phi_k = NULL, *out = NULL;
  gsize H, D, m;
  int norm = RPE_LRPE_NORM_DENOMINATOR;
  gboolean ok = FALSE;
  RpeStatus st;

  if (linear && !parse_choice ("--lrpe-norm", o->lrpe_norm, "denominator", norms, G_N_ELEMENTS (norms), &norm, error))
    return FALSE;
  if (!load_plain_inputs (o, linear, &in, &H, &D, error))
    return FALSE;
  lrpe = make_lrpe (o, D, in.n, error);
  if (lrpe == NULL || !lrpe_features (o, &in, H, D, lrpe, &phi_q, &phi_k, &m, error))
    goto out;
  if (linear)
    {
      if (!alloc_floats (&out, in.n, H, in.dv, "output", error))
        goto out;
      st = rpe_lrpe_linear_attention (o->lrpe_before ? NULL : lrpe, in.n, H, m, in.dv, phi_q, phi_k, in.v,
                                      o->causal, (RpeLrpeNorm) norm, out, NULL);
      ok = rpe_cli_status_error (st, "LRPE linear attention", error)
           && rpe_cli_write (o, o->out, out, 3, (gsize[]) { in.n, H, in.dv }, exit_code, error);
    }
  else
    {
      if (!alloc_floats (&out, H, in.n, in.n, "attention map", error))
        goto out;
      st = rpe_lrpe_attention_map (o->lrpe_before ? NULL : lrpe, in.n, H, m, phi_q, phi_k, o->causal, TRUE,
                                   out, NULL);
      ok = rpe_cli_status_error (st, "LRPE attention map", error)
           && rpe_cli_write (o, o->out, out, 3, (gsize[]) { H, in.n, in.n }, exit_code, error);
    }

out:
  rpe_free (out);
  rpe_free (phi_q);
  rpe_free (phi_k);
  rpe_lrpe_free (lrpe);
  rpe_cli_inputs_clear (&in);
  return ok;
}

/* Toeplitz weights: (2N-1,) shared or (H, 2N-1) per head. */
static RpeTensor *
read_bias (const char *path, const char *option, gsize n, gsize heads, gboolean *per_head, GError **error)
{
  g_autoptr(RpeTensor) w = NULL;
  gsize want = 2 * n - 1;

  if (path == NULL)
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, "fastrpb needs %s W.npy", option);
      return NULL;
    }
  w = rpe_npy_read (path, error);
  if (w == NULL)
    return NULL;
  if (!rpe_tensor_check_finite (w, error))
    {
      g_prefix_error (error, "%s: ", path);
      return NULL;
    }
  if (w->ndim == 1 && w->shape[0] == want)
    *per_head = FALSE;
  else if (w->ndim == 2 && w->shape[0] == heads && w->shape[1] == want)
    *per_head = TRUE;
  else
    {
      g_autofree char *shape = rpe_tensor_shape_string (w);
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                     "%s: %s weights must have shape (%zu,) or (%zu, %zu) for length %zu, got %s",
                     path, option, (size_t) want, (size_t) heads, (size_t) want, (size_t) n, shape);
      return NULL;
    }
  return g_steal_pointer (&w);
}

static gboolean
parse_grid (const char *grid, gsize *n1, gsize *n2, GError **error)
{
  guint64 a, b;
  g_auto(GStrv) parts = g_strsplit (grid, "x", 3);

  if (g_strv_length (parts) != 2
      || !g_ascii_string_to_unsigned (parts[0], 10, 1, 1 << 20, &a, NULL)
      || !g_ascii_string_to_unsigned (parts[1], 10, 1, 1 << 20, &b, NULL))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          "--grid must look like N1xN2 with each side 1..1048576 (got '%s')", grid);
  *n1 = (gsize) a;
  *n2 = (gsize) b;
  return TRUE;
}

/* fastrpb: Y = [attention] + W V, (N, H, Dv).  Attention: none (W V alone, the default),
 * softmax (plain softmax of q k^T / sqrt(D), in row blocks) or linear (--feature-map on q, k). */
static gboolean
fastrpb (const RpeCliOptions *o, int *exit_code, GError **error)
{
  static const Choice kinds[] = { { "none", 0 }, { "softmax", 1 }, { "linear", 2 } };
  RpeCliInputs in = { 0 };
  g_autoptr(RpeTensor) w = NULL;
  g_autoptr(RpeTensor) wr = NULL;
  g_autoptr(RpeTensor) wc = NULL;
  float *y = NULL, *rows = NULL;
  gsize H, D, n1 = 0, n2 = 0;
  gboolean per_head = FALSE, per_head_c = FALSE, ok = FALSE;
  unsigned flags = 0;
  int kind = 0;
  RpeStatus st = RPE_OK;

  if (!parse_choice ("--fastrpb-attention", o->fastrpb_attention, "none", kinds, G_N_ELEMENTS (kinds), &kind, error))
    return FALSE;
  if (o->values == NULL && o->queries == NULL && kind == 0 && o->length == RPE_CLI_UNSET && o->grid == NULL)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, "fastrpb needs --values V.npy (or --length N for seeded values)");
  {
    /* N and H: from --grid, the values (when there are no queries), or the options */
    RpeCliOptions o2 = *o;

    if (o->values != NULL && o->queries == NULL)
      {
        g_autoptr(RpeTensor) v = rpe_cli_read_array (o->values, 3, "values", error);

        if (v == NULL)
          return FALSE;
        o2.heads = (int) MIN (v->shape[1], (gsize) G_MAXINT);
        if (o->length == RPE_CLI_UNSET && o->grid == NULL)
          o2.length = (gint64) MIN (v->shape[0], (gsize) G_MAXINT64);
      }
    if (o->grid != NULL)
      {
        if (!parse_grid (o->grid, &n1, &n2, error))
          return FALSE;
        if (o->length != RPE_CLI_UNSET && (gsize) o->length != n1 * n2)
          return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, "--length must be N1*N2 = %zu with --grid",
                                (size_t) (n1 * n2));
        o2.length = (gint64) (n1 * n2);
      }
    if (!load_plain_inputs (&o2, TRUE, &in, &H, &D, error))
      return FALSE;
  }

  if (o->grid != NULL)
    {
      wr = read_bias (o->bias_rows, "--bias-rows", n1, H, &per_head, error);
      if (wr == NULL)
        goto out;
      wc = read_bias (o->bias_cols, "--bias-cols", n2, H, &per_head_c, error);
      if (wc == NULL)
        goto out;
      if (per_head != per_head_c)
        {
          rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                         "--bias-rows and --bias-cols must both be shared or both per head");
          goto out;
        }
    }
  else
    {
      w = read_bias (o->bias, "--bias", in.n, H, &per_head, error);
      if (w == NULL)
        goto out;
    }

  if (!alloc_floats (&y, in.n, H, in.dv, "output", error))
    goto out;

  if (kind == 1)
    {
      /* softmax attention A V in row blocks of 256: O(256 N) memory */
      RpeLogitsSpec spec = { RPE_LOGITS_DOT, in.n, H, D, in.q, in.k, NULL, FALSE };
      gsize block = MIN (in.n, (gsize) 256);

      if (!alloc_floats (&rows, block, in.n, 1, "attention rows", error))
        goto out;
      for (gsize h = 0; h < H && st == RPE_OK; h++)
        for (gsize m0 = 0; m0 < in.n && st == RPE_OK; m0 += block)
          {
            gsize nr = MIN (block, in.n - m0);
            st = rpe_attention_rows (&spec, h, m0, nr, o->causal, rows, NULL);
            for (gsize i = 0; i < nr && st == RPE_OK; i++)
              for (gsize c = 0; c < in.dv; c++)
                {
                  double acc = 0;
                  for (gsize j = 0; j < in.n; j++)
                    acc += (double) rows[i * in.n + j] * in.v[(j * H + h) * in.dv + c];
                  y[((m0 + i) * H + h) * in.dv + c] = (float) acc;
                }
          }
      if (!rpe_cli_status_error (st, "softmax attention", error))
        goto out;
      flags |= RPE_FASTRPB_ACCUMULATE;
    }
  else if (kind == 2)
    {
      RpeFeatureMap map;
      RpeFeatureOptions fopts;

      if (!rpe_cli_parse_feature_map (o, &map, &fopts, D, error))
        goto out;
      st = rpe_linear_attention_qkv (map, &fopts, in.n, H, D, in.dv, in.q, in.k, in.v, o->causal, y, NULL);
      if (!rpe_cli_status_error (st, "linear attention", error))
        goto out;
      flags |= RPE_FASTRPB_ACCUMULATE;
    }

  if (per_head)
    flags |= RPE_FASTRPB_PER_HEAD;
  if (o->causal)
    flags |= RPE_FASTRPB_CAUSAL;
  if (o->grid != NULL)
    st = rpe_fastrpb_apply_2d (n1, n2, H, in.dv, wr->data, wc->data, in.v, y, flags, NULL);
  else
    st = rpe_fastrpb_apply (in.n, H, in.dv, w->data, in.v, y, flags, NULL);
  ok = rpe_cli_status_error (st, "FastRPB", error)
       && rpe_cli_write (o, o->out, y, 3, (gsize[]) { in.n, H, in.dv }, exit_code, error);

out:
  rpe_free (y);
  rpe_free (rows);
  rpe_cli_inputs_clear (&in);
  return ok;
}

gboolean
rpe_cli_compute_positional (const char          *what,
                            const RpeCliOptions *o,
                            int                 *exit_code,
                            GError             **error)
{
  if (g_str_equal (what, "lrpe-encode"))
    return lrpe_encode (o, exit_code, error);
  if (g_str_equal (what, "lrpe-attention"))
    return lrpe_attention (o, FALSE, exit_code, error);
  if (g_str_equal (what, "lrpe-linear"))
    return lrpe_attention (o, TRUE, exit_code, error);
  if (g_str_equal (what, "fastrpb"))
    return fastrpb (o, exit_code, error);
  return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, "unknown WHAT '%s'", what);
}

/* rpe-cli-lrpe.c: `rpe compute lrpe-encode | lrpe-attention | lrpe-linear | fastrpb` */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <glib/gi18n.h>

#include "rpe-alloc.h"
#include "rpe-checkpoint-lrpe.h"
#include "rpe-attention.h"
#include "rpe-error.h"
#include "rpe-demos.h"
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
  g_autoptr (GString) list = g_string_new (NULL);

  for (gsize i = 0; i < n_choices; i++)
    {
      if (g_str_equal (name, choices[i].name))
        {
          *out = choices[i].value;
          return TRUE;
        }
      g_string_append_printf (list, "%s%s", i ? ", " : "", choices[i].name);
    }
  return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("%s must be one of %s (got '%s')"),
                        option, list->str, name);
}

/* Queries/keys/values for LRPE and FastRPB: loaded, or unit/random content of --heads x --features. */
static gboolean
load_plain_inputs (const RpeCliArgs *o,
                   gboolean          want_values,
                   RpeCliInputs     *in,
                   gsize            *heads,
                   gsize            *dim,
                   GError          **error)
{
  RpeSpeParams shape = { 0 };

  if (rpe_cli_content_is_capture (o))
    {
      /* the shape of the capture's layer */
      gsize n;

      if (!rpe_cli_capture_shape (o, &n, &shape.n_heads, &shape.n_features, error))
        return FALSE;
    }
  else if (o->content.queries != NULL)
    {
      g_autoptr (RpeTensor) q = rpe_cli_read_array (o->content.queries, 3, "queries", error);
      if (q == NULL)
        return FALSE;
      shape.n_heads = q->shape[1];
      shape.n_features = q->shape[2];
    }
  else if (o->model.checkpoint != NULL && rpe_demos_is_spec (o->model.checkpoint)
           && !g_str_equal (o->model.checkpoint, "demo") && !g_file_test (o->model.checkpoint, G_FILE_TEST_EXISTS))
    {
      /* a trained demo states its shape in its metadata (as `rpe curves` reads it) */
      g_autoptr (GHashTable) meta = rpe_demos_metadata (o->model.checkpoint, error);
      const char *h, *d;

      if (meta == NULL)
        return FALSE;
      h = g_hash_table_lookup (meta, "heads");
      d = g_hash_table_lookup (meta, "features");
      shape.n_heads = h != NULL ? (gsize) g_ascii_strtoull (h, NULL, 10) : 0;
      shape.n_features = d != NULL ? (gsize) g_ascii_strtoull (d, NULL, 10) : 0;
      if (shape.n_heads < 1 || shape.n_heads > 4096 || shape.n_features < 1 || shape.n_features > (1 << 16))
        return rpe_set_error (error, RPE_ERROR_FORMAT, _("%s: the demo's metadata gives no valid heads and features"),
                              o->model.checkpoint);
    }
  else
    {
      if (o->model.heads < 1 || o->model.heads > 4096 || o->model.features < 1 || o->model.features > (1 << 16))
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                              _("--heads must be 1..4096 and --features 1..65536"));
      shape.n_heads = (gsize) o->model.heads;
      shape.n_features = (gsize) o->model.features;
    }
  if (shape.n_heads == 0 || shape.n_features == 0)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("%s: empty queries"), o->content.queries);
  *heads = shape.n_heads;
  *dim = shape.n_features;
  return rpe_cli_load_inputs (o, &shape, want_values, in, error);
}

/* Trained LRPE parameters: from the checkpoint's LRPE module (--checkpoint, --prefix), then
 * replaced by any .npy given (--lrpe-v, --lrpe-theta-file, --lrpe-permutation). */
typedef struct
{
  RpeTensorSet    *set;
  GPtrArray       *modules;
  const RpeTensor *v, *theta, *perm;
  RpeTensor       *v_file, *theta_file, *perm_file;
  const char      *v_from, *theta_from, *perm_from;   /* for messages */
} Trained;

static void
trained_clear (Trained *t)
{
  g_clear_pointer (&t->modules, g_ptr_array_unref);
  g_clear_pointer (&t->set, rpe_tensor_set_free);
  g_clear_pointer (&t->v_file, rpe_tensor_free);
  g_clear_pointer (&t->theta_file, rpe_tensor_free);
  g_clear_pointer (&t->perm_file, rpe_tensor_free);
}

static RpeTensor *
read_param (const char *path, GError **error)
{
  RpeTensor *t = rpe_npy_read_int_ok (path, error);

  if (t != NULL && !rpe_tensor_check_finite (t, error))
    {
      g_prefix_error (error, "%s: ", path);
      g_clear_pointer (&t, rpe_tensor_free);
    }
  return t;
}

/* The tensor a --map role names (NULL, no error, when the role is not mapped). */
static const RpeTensor *
mapped_tensor (const RpeTensorSet *set, const RpeTensorMap *map, RpeRole role, const char *path,
               GError **error)
{
  const char *name = rpe_tensor_map_get (map, role);
  const RpeTensor *t;

  if (name == NULL)
    return NULL;
  t = rpe_tensor_set_lookup (set, name);
  if (t == NULL)
    rpe_set_error (error, RPE_ERROR_NOT_FOUND, _("%s: --map %s=%s: the checkpoint has no tensor named '%s'"),
                   path, rpe_role_to_string (role), name, name);
  return t;
}

static gboolean
load_trained (const RpeCliArgs *o, gboolean use_checkpoint, Trained *t, GError **error)
{
  memset (t, 0, sizeof *t);
  if (use_checkpoint && o->model.checkpoint != NULL)
    {
      g_autoptr (RpeTensorMap) map = NULL;
      const RpeLrpeModuleInfo *m;
      GError *pick_error = NULL;
      const RpeTensor *mv = NULL, *mt = NULL, *mp = NULL;

      if (!rpe_cli_parse_map (o, &map, error)
          || (map != NULL && !rpe_cli_map_only (map, RPE_ROLE_LRPE_V, RPE_ROLE_LRPE_PERMUTATION, "an LRPE command", error)))
        return FALSE;
      t->set = rpe_cli_read_checkpoint (o->model.checkpoint, error);
      if (t->set == NULL)
        return FALSE;
      if (map != NULL
          && (((mv = mapped_tensor (t->set, map, RPE_ROLE_LRPE_V, o->model.checkpoint, error)) == NULL
               && rpe_tensor_map_get (map, RPE_ROLE_LRPE_V) != NULL)
              || ((mt = mapped_tensor (t->set, map, RPE_ROLE_LRPE_THETA, o->model.checkpoint, error)) == NULL
                  && rpe_tensor_map_get (map, RPE_ROLE_LRPE_THETA) != NULL)
              || ((mp = mapped_tensor (t->set, map, RPE_ROLE_LRPE_PERMUTATION, o->model.checkpoint, error)) == NULL
                  && rpe_tensor_map_get (map, RPE_ROLE_LRPE_PERMUTATION) != NULL)))
        return FALSE;
      m = rpe_checkpoint_pick_lrpe (t->set, o->model.prefix, &t->modules, &pick_error);
      if (m == NULL && (map == NULL || o->model.prefix != NULL))
        {
          rpe_cli_phrase_pick_error (pick_error, o->model.checkpoint, o->model.prefix);
          g_propagate_error (error, pick_error);
          return FALSE;
        }
      /* with a map and no --prefix, a file without one clear LRPE module gives only the mapped tensors */
      g_clear_error (&pick_error);
      if (m != NULL)
        {
          t->v = m->v;
          t->theta = m->theta;
          t->perm = m->permutation;
        }
      /* mapped roles override what discovery found */
      if (mv != NULL)
        t->v = mv;
      if (mt != NULL)
        t->theta = mt;
      if (mp != NULL)
        t->perm = mp;
      t->v_from = t->theta_from = t->perm_from = o->model.checkpoint;
      if ((t->v != NULL && !rpe_tensor_check_finite (t->v, error))
          || (t->theta != NULL && !rpe_tensor_check_finite (t->theta, error))
          || (t->perm != NULL && !rpe_tensor_check_finite (t->perm, error)))
        {
          g_prefix_error (error, "%s: ", o->model.checkpoint);
          return FALSE;
        }
    }
  if (o->lrpe.v != NULL)
    {
      if ((t->v_file = read_param (o->lrpe.v, error)) == NULL)
        return FALSE;
      t->v = t->v_file;
      t->v_from = o->lrpe.v;
    }
  if (o->lrpe.theta_file != NULL)
    {
      if ((t->theta_file = read_param (o->lrpe.theta_file, error)) == NULL)
        return FALSE;
      t->theta = t->theta_file;
      t->theta_from = o->lrpe.theta_file;
    }
  if (o->lrpe.permutation != NULL)
    {
      if ((t->perm_file = read_param (o->lrpe.permutation, error)) == NULL)
        return FALSE;
      t->perm = t->perm_file;
      t->perm_from = o->lrpe.permutation;
    }
  return TRUE;
}

static const char *
choice_name (const Choice *choices, gsize n, int value)
{
  for (gsize i = 0; i < n; i++)
    if (choices[i].value == value)
      return choices[i].name;
  return "?";
}

/* The LRPE of the --lrpe-* options, with trained parameters (docs/math.md, section 7).  length is N for
 * theta b/c.  use_checkpoint: --checkpoint names an LRPE module (lrpe-* commands). */
RpeLrpe *
rpe_cli_make_lrpe (const RpeCliArgs *o, gsize dim, gsize length, gboolean use_checkpoint, GError **error)
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
  static const Choice houses[] = { { "auto", 0 }, { "learned", 1 }, { "fixed", 2 } };
  RpeLrpeConfig config = { 0 };
  Trained t;
  int p, lambda, theta, house;
  uint32_t *pi = NULL;
  RpeStatus st;
  RpeLrpe *lrpe = NULL;
  gsize pd;

  if (!parse_choice ("--lrpe-p", o->lrpe.p, "identity", ps, G_N_ELEMENTS (ps), &p, error)
      || !parse_choice ("--lrpe-lambda", o->lrpe.lambda, "rotation", lambdas, G_N_ELEMENTS (lambdas), &lambda, error)
      || !parse_choice ("--lrpe-theta", o->lrpe.theta, "a", thetas, G_N_ELEMENTS (thetas), &theta, error)
      || !parse_choice ("--lrpe-householder", o->lrpe.householder, "auto", houses, G_N_ELEMENTS (houses), &house,
                        error))
    return NULL;
  if (!load_trained (o, use_checkpoint, &t, error))
    goto out;

  /* What the trained parameters say about P and Lambda; an explicit choice must agree. */
  if (t.v != NULL)
    {
      if (o->lrpe.p == NULL)
        p = RPE_LRPE_P_HOUSEHOLDER;
      else if (p != RPE_LRPE_P_HOUSEHOLDER)
        {
          rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("%s holds a Householder v, but --lrpe-p is %s"),
                         t.v_from, o->lrpe.p);
          goto out;
        }
    }
  if (t.perm != NULL)
    {
      if (o->lrpe.lambda == NULL)
        lambda = RPE_LRPE_LAMBDA_PERMUTATION;
      else if (lambda != RPE_LRPE_LAMBDA_PERMUTATION)
        {
          rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                         _("%s holds a permutation buffer, but --lrpe-lambda is %s"), t.perm_from, o->lrpe.lambda);
          goto out;
        }
    }
  if (t.theta != NULL && o->lrpe.lambda == NULL && t.perm == NULL)
    lambda = rpe_lrpe_implied_lambda (t.theta->n_elements, dim);

  config.dim = dim;
  config.length = length;
  config.p = (RpeLrpeP) p;
  config.lambda = (RpeLrpeLambda) lambda;
  config.theta_kind = (RpeLrpeTheta) theta;
  config.seed = (uint64_t) o->draw.seed;
  pd = rpe_lrpe_p_dims (config.p, dim);

  if (t.v != NULL)
    {
      if (t.v->n_elements != dim)
        {
          g_autofree char *shape = rpe_tensor_shape_string (t.v);
          rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                         _("%s: the Householder v has shape %s, not D = %zu values (1, %zu, 1)"),
                         t.v_from, shape, (size_t) dim, (size_t) dim);
          goto out;
        }
      config.householder_v = t.v->data;
      /* the reference stores a fixed v normalised (|v| = 1 to float rounding) and normalises a
       * learned one at every use: auto tells them apart by the norm */
      config.householder_learned = house == 1 || (house == 0 && rpe_lrpe_v_looks_learned (t.v->data, dim));
    }
  if (t.theta != NULL)
    {
      gsize want;

      if (lambda == RPE_LRPE_LAMBDA_PERMUTATION)
        {
          rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                         _("%s holds a learned theta, but the permutation Lambda has none"), t.theta_from);
          goto out;
        }
      want = rpe_lrpe_theta_count (config.lambda, pd);
      if (t.theta->n_elements != want)
        {
          g_autofree char *shape = rpe_tensor_shape_string (t.theta);
          rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                         _("%s: the learned theta has shape %s, but Lambda %s with P %s at D = %zu acts on "
                           "e = %zu dims and needs %zu values (the reference module cannot run this "
                           "combination either)"), t.theta_from, shape,
                         choice_name (lambdas, G_N_ELEMENTS (lambdas), lambda),
                         choice_name (ps, G_N_ELEMENTS (ps), p), (size_t) dim,
                         (size_t) rpe_lrpe_lambda_dims (config.lambda, pd), (size_t) want);
          goto out;
        }
      config.theta_kind = RPE_LRPE_THETA_CUSTOM;
      config.theta = t.theta->data;
      config.n_theta = want;
    }
  if (t.perm != NULL)
    {
      gsize bad = 0;

      if (t.perm->ndim < 2 || t.perm->shape[t.perm->ndim - 1] != pd || t.perm->n_elements % pd != 0)
        {
          g_autofree char *shape = rpe_tensor_shape_string (t.perm);
          rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                         _("%s: the permutation buffer has shape %s, not (1, max_positions, %zu)"),
                         t.perm_from, shape, (size_t) pd);
          goto out;
        }
      pi = g_try_new (uint32_t, pd);
      if (pi == NULL)
        {
          rpe_cli_status_error (RPE_ERROR_NO_MEMORY, "permutation buffer", error);
          goto out;
        }
      st = rpe_lrpe_pi_from_buffer (t.perm, pd, pi, &bad);
      if (st == RPE_ERROR_NO_MEMORY)
        {
          rpe_cli_status_error (st, "permutation buffer", error);
          goto out;
        }
      if (st != RPE_OK)
        {
          rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                         _("%s: the permutation buffer is not the powers T[s] = T[s-1][pi] of one "
                           "permutation of %zu dims starting at the identity (row %zu)"),
                         t.perm_from, (size_t) pd, (size_t) bad);
          goto out;
        }
      config.lambda_perm = pi;
    }

  lrpe = rpe_lrpe_new (&config, &st);
  if (lrpe == NULL && st == RPE_ERROR_DEGENERATE && t.v != NULL)
    /* the one direction LRPE needs: the Householder v's */
    rpe_set_error (error, st, _("%s: the Householder v is zero: it has no direction to reflect in"), t.v_from);
  else if (lrpe == NULL)
    rpe_cli_status_error (st, "LRPE", error);

out:
  g_free (pi);
  trained_clear (&t);
  return lrpe;
}

static RpeLrpe *
make_lrpe (const RpeCliArgs *o, gsize dim, gsize n, GError **error)
{
  return rpe_cli_make_lrpe (o, dim, o->draw.train_length != RPE_CLI_UNSET ? (gsize) o->draw.train_length : n, TRUE,
                            error);
}

/* lrpe-encode: (N, H, D), or (N, H, 2D) as [real | imag] for complex maps. */
static gboolean
lrpe_encode (const RpeCliArgs *o, int *exit_code, GError **error)
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
  if (!rpe_cli_alloc_floats (&out, in.n, H, W, 1, "encoded queries", error))
    goto out;
  st = rpe_lrpe_encode (lrpe, in.n, H, 0, in.q, out, NULL);
  if (!rpe_cli_status_error (st, "LRPE encoding", error))
    goto out;
  ok = rpe_cli_write (o, o->output.out, out, 3, (gsize[]) { in.n, H, W }, exit_code, error);
  if (ok && o->output.out_keys != NULL)
    {
      st = rpe_lrpe_encode (lrpe, in.n, H, 0, in.k, out, NULL);
      ok = rpe_cli_status_error (st, "LRPE encoding", error)
           && rpe_cli_write (o, o->output.out_keys, out, 3, (gsize[]) { in.n, H, W }, exit_code, error);
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
lrpe_features (const RpeCliArgs *o,
               RpeCliInputs     *in,
               gsize             H,
               gsize             D,
               RpeLrpe          *lrpe,
               float           **phi_q,
               float           **phi_k,
               gsize            *m,
               GError          **error)
{
  RpeFeatureMap map;
  RpeFeatureOptions fopts;
  const float *q = in->q, *k = in->k;
  float *eq = NULL, *ek = NULL;
  gsize width = D;
  gboolean ok = FALSE;
  RpeStatus st;

  *phi_q = *phi_k = NULL;
  if (o->lrpe.before)
    {
      width = rpe_lrpe_out_width (lrpe);
      if (!rpe_cli_alloc_floats (&eq, in->n, H, width, 1, "encoded queries", error)
          || !rpe_cli_alloc_floats (&ek, in->n, H, width, 1, "encoded keys", error))
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
  if (!o->lrpe.before && *m != D)
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                     _("LRPE after the feature map needs as many features as dims (%zu); "
                       "the %s map gives %zu: use --lrpe-before or --performer-features %zu"),
                     (size_t) D, o->attention.feature_map ? o->attention.feature_map : "elu1", (size_t) *m, (size_t) D);
      goto out;
    }
  if (!rpe_cli_alloc_floats (phi_q, in->n, H, *m, 1, "query features", error)
      || !rpe_cli_alloc_floats (phi_k, in->n, H, *m, 1, "key features", error))
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
lrpe_attention (const RpeCliArgs *o, gboolean linear, int *exit_code, GError **error)
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

  if (linear && !parse_choice ("--lrpe-norm", o->lrpe.norm, "denominator", norms, G_N_ELEMENTS (norms), &norm, error))
    return FALSE;
  if (!load_plain_inputs (o, linear, &in, &H, &D, error))
    return FALSE;
  lrpe = make_lrpe (o, D, in.n, error);
  if (lrpe == NULL || !lrpe_features (o, &in, H, D, lrpe, &phi_q, &phi_k, &m, error))
    goto out;
  if (linear)
    {
      if (!rpe_cli_alloc_floats (&out, in.n, H, in.dv, 1, "output", error))
        goto out;
      st = rpe_lrpe_linear_attention (o->lrpe.before ? NULL : lrpe, in.n, H, m, in.dv, phi_q, phi_k, in.v,
                                      o->attention.causal, (RpeLrpeNorm) norm, out, NULL);
      ok = rpe_cli_status_error (st, "LRPE linear attention", error)
           && rpe_cli_write (o, o->output.out, out, 3, (gsize[]) { in.n, H, in.dv }, exit_code, error);
    }
  else
    {
      if (!rpe_cli_alloc_floats (&out, H, in.n, in.n, 1, "attention map", error))
        goto out;
      st = rpe_lrpe_attention_map (o->lrpe.before ? NULL : lrpe, in.n, H, m, phi_q, phi_k, o->attention.causal, TRUE,
                                   out, NULL);
      ok = rpe_cli_status_error (st, "LRPE attention map", error)
           && rpe_cli_write (o, o->output.out, out, 3, (gsize[]) { H, in.n, in.n }, exit_code, error);
    }

out:
  rpe_free (out);
  rpe_free (phi_q);
  rpe_free (phi_k);
  rpe_lrpe_free (lrpe);
  rpe_cli_inputs_clear (&in);
  return ok;
}

/* Toeplitz weights for length n in the centred layout, (1 or H, 2n - 1), from stored weights w:
 * (X,) or (H, X) in the centred layout (X = 2M - 1), or the reference's (1, H, X): "full"
 * X = 2M - 1 or "symmetric" X = M (docs/math.md, section 8); --bias-layout names the layout where the
 * shape cannot tell.  M >= n: the offsets in [-(n-1), n-1] are used. */
static float *
centred_bias (const RpeCliArgs *o,
              const RpeTensor  *w,
              const char       *from,
              gsize             n,
              gsize             heads,
              gboolean         *per_head,
              GError          **error)
{
  static const Choice layouts[] = {
    { "centred", RPE_FASTRPB_LAYOUT_CENTRED }, { "full", RPE_FASTRPB_LAYOUT_FULL },
    { "symmetric", RPE_FASTRPB_LAYOUT_SYMMETRIC },
  };
  g_autofree char *shape = rpe_tensor_shape_string (w);
  g_autoptr (GHashTable) meta = NULL;
  const char *bias_layout = o->fastrpb.layout;
  int layout = RPE_FASTRPB_LAYOUT_CENTRED;
  gsize rows, width, m;
  float *out;
  RpeStatus st;

  /* a trained demo states its layout in its metadata */
  if (bias_layout == NULL && o->model.checkpoint != NULL && from == o->model.checkpoint
      && rpe_demos_is_spec (o->model.checkpoint) && !g_file_test (o->model.checkpoint, G_FILE_TEST_EXISTS)
      && (meta = rpe_demos_metadata (o->model.checkpoint, NULL)) != NULL)
    bias_layout = g_hash_table_lookup (meta, "fastrpb_layout");
  if (bias_layout != NULL
      && !parse_choice ("--bias-layout", bias_layout, "centred", layouts, G_N_ELEMENTS (layouts), &layout, error))
    return NULL;
  if (w->ndim == 1 || w->ndim == 2)
    {
      rows = w->ndim == 1 ? 1 : w->shape[0];
      width = w->shape[w->ndim - 1];
    }
  else if (w->ndim == 3 && w->shape[0] == 1)
    {
      rows = w->shape[1];
      width = w->shape[2];
      if (bias_layout == NULL)
        {
          if (width % 2 == 1)
            {
              rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                             _("%s: FastRPB weights of shape %s can be the reference's full layout (M = %zu) "
                               "or its symmetric one (M = %zu): say which with --bias-layout full|symmetric"),
                             from, shape, (size_t) (width + 1) / 2, (size_t) width);
              return NULL;
            }
          layout = RPE_FASTRPB_LAYOUT_SYMMETRIC;   /* an even width can only be (1, H, M) */
        }
    }
  else
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                     _("%s: FastRPB weights must have shape (X,), (H, X) or the reference's (1, H, X); got %s"),
                     from, shape);
      return NULL;
    }
  if (rows != 1 && rows != heads)
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                     _("%s: FastRPB weights of shape %s have %zu rows, but there are %zu heads"), from, shape,
                     (size_t) rows, (size_t) heads);
      return NULL;
    }
  m = rpe_fastrpb_layout_length ((RpeFastrpbLayout) layout, width);
  if (m == 0)
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                     _("%s: %zu weights cannot be the %s layout (it holds 2M - 1, an odd number)"), from,
                     (size_t) width, choice_name (layouts, G_N_ELEMENTS (layouts), layout));
      return NULL;
    }
  if (m < n)
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                     _("%s: FastRPB weights of shape %s (%s layout) cover offsets up to %zu (M = %zu), "
                       "fewer than length %zu needs (%zu)"), from, shape,
                     choice_name (layouts, G_N_ELEMENTS (layouts), layout), (size_t) m - 1, (size_t) m,
                     (size_t) n, (size_t) n - 1);
      return NULL;
    }
  if (!rpe_cli_alloc_floats (&out, rows, 2 * n - 1, 1, 1, "FastRPB weights", error))
    return NULL;
  st = rpe_fastrpb_to_centred ((RpeFastrpbLayout) layout, rows, width, w->data, n, out);
  if (!rpe_cli_status_error (st, "FastRPB weights", error))
    {
      rpe_free (out);
      return NULL;
    }
  *per_head = rows != 1;
  return out;
}

/* The stored weights: --bias / --bias-rows / --bias-cols W.npy, or a checkpoint's `bias.w`. */
static RpeTensor *
read_bias_file (const char *path, GError **error)
{
  RpeTensor *w = rpe_cli_read_npy (path, error);

  if (w != NULL && !rpe_tensor_check_finite (w, error))
    {
      g_prefix_error (error, "%s: ", path);
      g_clear_pointer (&w, rpe_tensor_free);
    }
  return w;
}

static RpeTensor *
checkpoint_bias (const RpeCliArgs *o, GError **error)
{
  g_autoptr (RpeTensorMap) map = NULL;
  g_autoptr (RpeTensorSet) set = NULL;
  g_autoptr (GPtrArray) modules = NULL;
  const RpeTensor *src = NULL;
  RpeTensor *w;

  if (!rpe_cli_parse_map (o, &map, error)
      || (map != NULL && !rpe_cli_map_only (map, RPE_ROLE_FASTRPB_W, RPE_ROLE_FASTRPB_W, "fastrpb", error)))
    return NULL;
  if (map != NULL && rpe_tensor_map_get (map, RPE_ROLE_FASTRPB_W) == NULL)
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("fastrpb: --map names no fastrpb.w"));
      return NULL;
    }
  set = rpe_cli_read_checkpoint (o->model.checkpoint, error);
  if (set == NULL)
    return NULL;
  if (map != NULL)
    {
      /* --map fastrpb.w=TENSOR names the weights (then --prefix is not needed) */
      if ((src = mapped_tensor (set, map, RPE_ROLE_FASTRPB_W, o->model.checkpoint, error)) == NULL)
        return NULL;
    }
  else
    {
      const RpeFastrpbModuleInfo *m = rpe_checkpoint_pick_fastrpb (set, o->model.prefix, &modules, error);

      if (m == NULL)
        {
          rpe_cli_phrase_pick_error (error != NULL ? *error : NULL, o->model.checkpoint, o->model.prefix);
          return NULL;
        }
      src = m->w;
    }
  w = rpe_tensor_new (src->name, src->ndim, src->shape, error);
  if (w == NULL)
    return NULL;
  memcpy (w->data, src->data, src->n_elements * sizeof (float));
  if (!rpe_tensor_check_finite (w, error))
    {
      g_prefix_error (error, "%s: %s: ", o->model.checkpoint, src->name);
      g_clear_pointer (&w, rpe_tensor_free);
    }
  return w;
}

float *
rpe_cli_checkpoint_fastrpb (const RpeCliArgs *o,
                            gsize             n,
                            gsize             heads,
                            gboolean         *per_head,
                            char            **source,
                            GError          **error)
{
  g_autoptr (RpeTensorSet) set = NULL;
  g_autoptr (GPtrArray) modules = NULL;
  g_autoptr (RpeTensor) t = NULL;
  RpeCliArgs plain = *o;

  *per_head = FALSE;
  *source = NULL;
  if (o->model.checkpoint == NULL)
    return NULL;
  if ((set = rpe_cli_read_checkpoint (o->model.checkpoint, error)) == NULL)
    return NULL;
  modules = rpe_checkpoint_find_fastrpb_modules (set);
  if (modules->len == 0)
    return NULL;
  /* the module of --prefix (--map names the SPE module's tensors here) */
  plain.model.map = NULL;
  if ((t = checkpoint_bias (&plain, error)) == NULL)
    return NULL;
  *source = g_strdup_printf ("%s: %s", o->model.checkpoint, t->name);
  return centred_bias (o, t, o->model.checkpoint, n, heads, per_head, error);
}

/* fastrpb: Y = [attention] + W V, (N, H, Dv).  Attention: none (W V alone, the default),
 * softmax (plain softmax of q k^T / sqrt(D), in row blocks) or linear (--feature-map on q, k). */
static gboolean
fastrpb (const RpeCliArgs *o, int *exit_code, GError **error)
{
  static const Choice kinds[] = { { "none", 0 }, { "softmax", 1 }, { "linear", 2 } };
  RpeCliInputs in = { 0 };
  float *w = NULL, *wr = NULL, *wc = NULL;
  float *y = NULL, *rows = NULL;
  gsize H, D, n1 = 0, n2 = 0;
  gboolean per_head = FALSE, per_head_c = FALSE, ok = FALSE;
  unsigned flags = 0;
  int kind = 0;
  RpeStatus st = RPE_OK;

  if (!parse_choice ("--fastrpb-attention", o->fastrpb.attention, "none", kinds, G_N_ELEMENTS (kinds), &kind, error))
    return FALSE;
  if (o->content.values == NULL && o->content.queries == NULL && !rpe_cli_content_is_capture (o) && kind == 0
      && o->draw.length == RPE_CLI_UNSET && o->model.grid == NULL)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("fastrpb needs --values V.npy (or --length N for seeded values)"));
  {
    /* N and H: from --grid, the values (when there are no queries), or the options */
    RpeCliArgs o2 = *o;

    if (o->content.values != NULL && o->content.queries == NULL && !rpe_cli_content_is_capture (o))
      {
        g_autoptr (RpeTensor) v = rpe_cli_read_array (o->content.values, 3, "values", error);

        if (v == NULL)
          return FALSE;
        o2.model.heads = (int) MIN (v->shape[1], (gsize) G_MAXINT);
        if (o->draw.length == RPE_CLI_UNSET && o->model.grid == NULL)
          o2.draw.length = (gint64) MIN (v->shape[0], (gsize) G_MAXINT64);
      }
    if (o->model.grid != NULL)
      {
        if (!rpe_cli_parse_grid ("--grid", o->model.grid, 1 << 20, &n1, &n2, error))
          return FALSE;
        if (o->draw.length != RPE_CLI_UNSET && (gsize) o->draw.length != n1 * n2)
          return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--length must be N1*N2 = %zu with --grid"),
                                (size_t) (n1 * n2));
        o2.draw.length = (gint64) (n1 * n2);
      }
    if (!load_plain_inputs (&o2, TRUE, &in, &H, &D, error))
      return FALSE;
  }

  if (o->model.grid != NULL && (o->fastrpb.rows != NULL || o->fastrpb.cols != NULL))
    {
      g_autoptr (RpeTensor) tr = NULL;
      g_autoptr (RpeTensor) tc = NULL;

      if (o->fastrpb.rows == NULL || o->fastrpb.cols == NULL)
        {
          rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                         _("fastrpb --grid needs both --bias-rows and --bias-cols, or one --bias for both axes"));
          goto out;
        }
      if ((tr = read_bias_file (o->fastrpb.rows, error)) == NULL
          || (wr = centred_bias (o, tr, o->fastrpb.rows, n1, H, &per_head, error)) == NULL
          || (tc = read_bias_file (o->fastrpb.cols, error)) == NULL
          || (wc = centred_bias (o, tc, o->fastrpb.cols, n2, H, &per_head_c, error)) == NULL)
        goto out;
      if (per_head != per_head_c)
        {
          rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                         _("--bias-rows and --bias-cols must both be shared or both per head"));
          goto out;
        }
    }
  else
    {
      g_autoptr (RpeTensor) t = NULL;
      const char *from = o->fastrpb.bias != NULL ? o->fastrpb.bias : o->model.checkpoint;

      if (o->fastrpb.bias != NULL && o->model.map != NULL)
        rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                       _("--bias and --map fastrpb.w both give the FastRPB weights: give one"));
      else if (o->fastrpb.bias != NULL)
        t = read_bias_file (o->fastrpb.bias, error);
      else if (o->model.checkpoint != NULL)
        t = checkpoint_bias (o, error);
      else
        rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                       _("fastrpb needs --bias W.npy or a --checkpoint with a FastRPB `bias.w`%s"),
                       o->model.grid != NULL ? " (or --bias-rows and --bias-cols)" : "");
      if (t == NULL)
        goto out;
      if (o->model.grid != NULL)
        {
          /* the reference's 2-D bias: one w for both axes */
          if ((wr = centred_bias (o, t, from, n1, H, &per_head, error)) == NULL
              || (wc = centred_bias (o, t, from, n2, H, &per_head_c, error)) == NULL)
            goto out;
        }
      else if ((w = centred_bias (o, t, from, in.n, H, &per_head, error)) == NULL)
        goto out;
    }

  if (!rpe_cli_alloc_floats (&y, in.n, H, in.dv, 1, "output", error))
    goto out;

  if (kind == 1)
    {
      /* softmax attention A V in row blocks of 256: O(256 N) memory */
      RpeLogitsSpec spec = { RPE_LOGITS_DOT, in.n, H, D, in.q, in.k, NULL, FALSE };
      gsize block = MIN (in.n, (gsize) 256);

      if (!rpe_cli_alloc_floats (&rows, block, in.n, 1, 1, "attention rows", error))
        goto out;
      for (gsize h = 0; h < H && st == RPE_OK; h++)
        for (gsize m0 = 0; m0 < in.n && st == RPE_OK; m0 += block)
          {
            gsize nr = MIN (block, in.n - m0);
            st = rpe_attention_rows (&spec, h, m0, nr, o->attention.causal, rows, NULL);
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
      st = rpe_linear_attention_qkv (map, &fopts, in.n, H, D, in.dv, in.q, in.k, in.v, o->attention.causal, y, NULL);
      if (!rpe_cli_status_error (st, "linear attention", error))
        goto out;
      flags |= RPE_FASTRPB_ACCUMULATE;
    }

  if (per_head)
    flags |= RPE_FASTRPB_PER_HEAD;
  if (o->attention.causal)
    flags |= RPE_FASTRPB_CAUSAL;
  if (o->model.grid != NULL)
    st = rpe_fastrpb_apply_2d (n1, n2, H, in.dv, wr, wc, in.v, y, flags, NULL);
  else
    st = rpe_fastrpb_apply (in.n, H, in.dv, w, in.v, y, flags, NULL);
  ok = rpe_cli_status_error (st, "FastRPB", error)
       && rpe_cli_write (o, o->output.out, y, 3, (gsize[]) { in.n, H, in.dv }, exit_code, error);

out:
  rpe_free (w);
  rpe_free (wr);
  rpe_free (wc);
  rpe_free (y);
  rpe_free (rows);
  rpe_cli_inputs_clear (&in);
  return ok;
}

gboolean
rpe_cli_compute_positional (const char *what, const RpeCliArgs *o, int *exit_code, GError **error)
{
  if (g_str_equal (what, "lrpe-encode"))
    return lrpe_encode (o, exit_code, error);
  if (g_str_equal (what, "lrpe-attention"))
    return lrpe_attention (o, FALSE, exit_code, error);
  if (g_str_equal (what, "lrpe-linear"))
    return lrpe_attention (o, TRUE, exit_code, error);
  if (g_str_equal (what, "fastrpb"))
    return fastrpb (o, exit_code, error);
  return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("unknown WHAT '%s'"), what);
}

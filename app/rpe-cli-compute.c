/* rpe-cli-compute.c: `rpe compute WHAT [options] -o OUT.npy` */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rpe-alloc.h"
#include "rpe-attention.h"
#include "rpe-error.h"
#include "rpe-npy.h"
#include "rpe-linear-attention.h"
#include "rpe-skew.h"
#include "rpe-spe.h"

#include "rpe-cli.h"

typedef struct
{
  const RpeCliOptions *o;
  RpeSpeParams         params;
  gboolean             gated;    /* apply the gate (params has one and --no-gate not given) */
  int                  exit_code;
} Ctx;

static gboolean
alloc_floats (float **out, gsize a, gsize b, gsize c, gsize d, const char *what, GError **error)
{
  gsize count;
  RpeStatus st = rpe_size_bytes (&count, 1, a, b, c, d);

  *out = NULL;
  if (st == RPE_OK)
    *out = rpe_alloc (count, sizeof (float), &st);
  return rpe_cli_status_error (st, what, error);
}

static gboolean
check_index (int value, gsize limit, const char *option, GError **error)
{
  if (value < -1 || (value >= 0 && (gsize) value >= limit))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, "%s must be between 0 and %zu (got %d)",
                          option, (size_t) limit - 1, value);
  return TRUE;
}

/* template / empirical: (H, D, N, N), or (N, N) with --head and --feature. */
static gboolean
compute_template (Ctx *c, gboolean empirical, GError **error)
{
  const RpeCliOptions *o = c->o;
  gsize H = c->params.n_heads, D = c->params.n_features, n;
  gsize h0 = 0, h1 = H, d0 = 0, d1 = D, cells, cell;
  float *out = NULL;
  RpeCliCodes codes = { 0 };
  gboolean ok = FALSE;

  if (!check_index (o->head, H, "--head", error) || !check_index (o->feature, D, "--feature", error))
    return FALSE;
  if ((o->head >= 0) != (o->feature >= 0))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, "--head and --feature go together");
  if (!rpe_cli_resolve_length (o, 0, &n, error))
    return FALSE;
  if (o->head >= 0)
    {
      h0 = (gsize) o->head, h1 = h0 + 1;
      d0 = (gsize) o->feature, d1 = d0 + 1;
    }
  cells = (h1 - h0) * (d1 - d0);
  if (!alloc_floats (&out, cells, n, n, 1, "template", error))
    return FALSE;
  if (empirical && !rpe_cli_make_codes (o, &c->params, n, c->gated, &codes, error))
    goto out;

  cell = 0;
  for (gsize h = h0; h < h1; h++)
    for (gsize d = d0; d < d1; d++, cell++)
      {
        RpeStatus st;
        float *dst = out + cell * n * n;

        if (empirical)
          st = rpe_spe_empirical_template (n, H, D, codes.r, codes.qbar, codes.kbar, h, d, dst);
        else
          st = rpe_spe_template (&c->params, h, d, n, c->gated, dst);
        if (!rpe_cli_status_error (st, empirical ? "empirical template" : "template", error))
          goto out;
      }

  if (o->head >= 0)
    ok = rpe_cli_write (o, o->out, out, 2, (gsize[]) { n, n }, &c->exit_code, error);
  else
    ok = rpe_cli_write (o, o->out, out, 4, (gsize[]) { H, D, n, n }, &c->exit_code, error);

out:
  rpe_cli_codes_clear (&codes);
  rpe_free (out);
  return ok;
}

static gboolean
compute_codes (Ctx *c, GError **error)
{
  const RpeCliOptions *o = c->o;
  RpeCliCodes codes = { 0 };
  gsize n, shape[4];
  gboolean ok;

  if (o->out_keys == NULL)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, "codes writes two arrays: give --out-keys K.npy too");
  if (!rpe_cli_resolve_length (o, 0, &n, error))
    return FALSE;
  if (!rpe_cli_make_codes (o, &c->params, n, FALSE, &codes, error))
    return FALSE;
  shape[0] = n, shape[1] = c->params.n_heads, shape[2] = c->params.n_features, shape[3] = codes.r;
  ok = rpe_cli_write (o, o->out, codes.qbar, 4, shape, &c->exit_code, error)
       && rpe_cli_write (o, o->out_keys, codes.kbar, 4, shape, &c->exit_code, error);
  rpe_cli_codes_clear (&codes);
  return ok;
}

/* encode / logits / attention share codes + encoding. */
static gboolean
encoded (Ctx *c, RpeCliInputs *in, RpeCliCodes *codes, float **qhat, float **khat, gboolean want_values,
         GError **error)
{
  *qhat = *khat = NULL;
  if (!rpe_cli_load_inputs (c->o, &c->params, want_values, in, error))
    return FALSE;
  if (!rpe_cli_make_codes (c->o, &c->params, in->n, c->gated, codes, error))
    return FALSE;
  return rpe_cli_encode (&c->params, codes, in, qhat, khat, error);
}

static gboolean
compute_encode (Ctx *c, GError **error)
{
  RpeCliInputs in = { 0 };
  RpeCliCodes codes = { 0 };
  float *qhat = NULL, *khat = NULL;
  gboolean ok = FALSE;

  if (encoded (c, &in, &codes, &qhat, &khat, FALSE, error))
    {
      gsize shape[3] = { in.n, c->params.n_heads, codes.r };

      ok = rpe_cli_write (c->o, c->o->out, qhat, 3, shape, &c->exit_code, error)
           && (c->o->out_keys == NULL
               || rpe_cli_write (c->o, c->o->out_keys, khat, 3, shape, &c->exit_code, error));
    }
  rpe_free (qhat);
  rpe_free (khat);
  rpe_cli_codes_clear (&codes);
  rpe_cli_inputs_clear (&in);
  return ok;
}

/* logits (H, N, N), SPE estimate or --exact; attention = row softmax of them. */
static gboolean
compute_logits (Ctx *c, gboolean attention, GError **error)
{
  RpeCliInputs in = { 0 };
  RpeCliCodes codes = { 0 };
  float *qhat = NULL, *khat = NULL, *logits = NULL;
  gsize H = c->params.n_heads;
  gboolean ok = FALSE;
  RpeStatus st;

  if (c->o->exact)
    {
      if (!rpe_cli_load_inputs (c->o, &c->params, FALSE, &in, error))
        goto out;
      if (!alloc_floats (&logits, H, in.n, in.n, 1, "logits", error))
        goto out;
      st = rpe_spe_exact_logits (&c->params, in.n, in.q, in.k, c->gated, logits, NULL);
    }
  else
    {
      gsize r;

      if (!encoded (c, &in, &codes, &qhat, &khat, FALSE, error))
        goto out;
      r = codes.r;
      rpe_cli_codes_clear (&codes);   /* the codes are no longer needed: free them before N x N */
      if (!alloc_floats (&logits, H, in.n, in.n, 1, "logits", error))
        goto out;
      st = rpe_spe_logits (in.n, H, r, qhat, khat, logits, NULL);
    }
  if (!rpe_cli_status_error (st, "logits", error))
    goto out;
  if (attention)
    {
      st = rpe_softmax_rows (logits, H, in.n, c->o->causal, NULL);
      if (!rpe_cli_status_error (st, "attention", error))
        goto out;
    }
  ok = rpe_cli_write (c->o, c->o->out, logits, 3, (gsize[]) { H, in.n, in.n }, &c->exit_code, error);

out:
  rpe_free (logits);
  rpe_free (qhat);
  rpe_free (khat);
  rpe_cli_codes_clear (&codes);
  rpe_cli_inputs_clear (&in);
  return ok;
}

/* rpe-logits: exact Shaw/Huang relative logits with skewing, E from the template or a file. */
static gboolean
compute_rpe_logits (Ctx *c, GError **error)
{
  const RpeCliOptions *o = c->o;
  RpeCliInputs in = { 0 };
  g_autoptr(RpeTensor) e_file = NULL;
  float *rel = NULL, *lags = NULL, *logits = NULL;
  gsize H = c->params.n_heads, D = c->params.n_features, n, rows;
  gboolean per_head = TRUE, ok = FALSE;
  RpeRelSpec spec = { 0 };
  RpeStatus st;

  if (!rpe_cli_load_inputs (o, &c->params, FALSE, &in, error))
    return FALSE;
  n = in.n;
  rows = 2 * n - 1;

  if (o->relative_embeddings != NULL)
    {
      e_file = rpe_npy_read (o->relative_embeddings, error);
      if (e_file == NULL || !rpe_tensor_check_finite (e_file, error))
        goto out;
      if (e_file->ndim == 2 && e_file->shape[0] == rows && e_file->shape[1] == D)
        per_head = FALSE;
      else if (!(e_file->ndim == 3 && e_file->shape[0] == H && e_file->shape[1] == rows && e_file->shape[2] == D))
        {
          g_autofree char *shape = rpe_tensor_shape_string (e_file);
          rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                         "%s: relative embeddings must have shape (%zu, %zu) or (%zu, %zu, %zu), got %s",
                         o->relative_embeddings, (size_t) rows, (size_t) D, (size_t) H, (size_t) rows,
                         (size_t) D, shape);
          goto out;
        }
    }
  else
    {
      /* E[h][i][d] = Ptilde_hd(tau), tau = i - (N-1) */
      if (!alloc_floats (&rel, H, rows, D, 1, "relative embeddings", error)
          || !alloc_floats (&lags, rows, 1, 1, 1, "template profile", error))
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

  if (!alloc_floats (&logits, H, n, n, 1, "logits", error))
    goto out;
  spec.n = n;
  spec.n_heads = H;
  spec.d = D;
  spec.q = in.q;
  spec.k = in.k;
  spec.rel = e_file != NULL ? e_file->data : rel;
  spec.rel_per_head = per_head;
  spec.causal = o->causal;
  st = rpe_rel_logits (&spec, logits, NULL);
  if (!rpe_cli_status_error (st, "relative logits", error))
    goto out;
  ok = rpe_cli_write (o, o->out, logits, 3, (gsize[]) { H, n, n }, &c->exit_code, error);

out:
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
precheck_random_request (const RpeCliOptions *o, const char *what, GError **error)
{
  gboolean sine = o->method == NULL || g_str_equal (o->method, "sine");
  gsize H, D, S, n, r;
  gboolean codes;

  if (o->checkpoint != NULL || o->heads < 1 || o->features < 1 || o->sines < 1 || o->kernel < 1)
    return TRUE;   /* validated with a precise message later */
  H = (gsize) o->heads;
  D = (gsize) o->features;
  S = sine ? (gsize) o->sines : (gsize) o->kernel;
  n = o->length != RPE_CLI_UNSET && o->length > 0 ? (gsize) o->length : 256;
  r = o->realizations != RPE_CLI_UNSET && o->realizations > 0 ? (gsize) o->realizations : 64;
  codes = !g_str_equal (what, "template") && !g_str_equal (what, "rpe-logits") && !o->exact;
  {
    const gsize dims[6][4] = {
      { H, D, S, sine ? 3 : 2 },                                    /* parameters */
      { H, D, codes ? (sine ? 2 * S : 1) : 0, sine ? r : r * (n + 4 * S) },   /* noise */
      { n, H, D, codes ? r : 0 },                                   /* Qbar */
      { n, H, D, codes ? r : 0 },                                   /* Kbar */
      { n, H, D, 3 },                                               /* q, k, v */
      { g_str_equal (what, "template") || g_str_equal (what, "empirical") ? D : 1, H, n, n },  /* N x N outputs */
    };
    return rpe_cli_check_budget (what, 6, dims, error);
  }
}

static const char *compute_whats[] = {
  "template", "empirical", "codes", "encode", "logits", "attention", "linear", "rpe-logits",
  "lrpe-encode", "lrpe-attention", "lrpe-linear", "fastrpb", NULL
};

int
rpe_cli_compute (int argc, char **argv)
{
  RpeCliOptions o;
  Ctx c = { 0 };
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out_opt = NULL;
  g_autofree char *out_keys_opt = NULL;
  const char *what;
  gboolean ok = FALSE;
  int status;
  g_auto(GStrv) given = NULL;
  const GOptionEntry main_entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &out_opt, "Write the result here (.npy)", "OUT.npy" },
    { "out-keys", 0, 0, G_OPTION_ARG_FILENAME, &out_keys_opt, "codes/encode: write the keys' array here", "K.npy" },
    { NULL }
  };

  rpe_cli_options_init (&o);
  given = g_strdupv (argv);
  context = g_option_context_new ("WHAT - compute an array");
  g_option_context_set_summary (context,
    "WHAT: template | empirical | codes | encode | logits | attention | linear | rpe-logits |\n"
    "      lrpe-encode | lrpe-attention | lrpe-linear | fastrpb\n"
    "Output shapes: template/empirical (H, D, N, N) or (N, N) with --head/--feature;\n"
    "codes (N, H, D, R) with --out-keys; encode (N, H, R); logits/attention (H, N, N);\n"
    "linear (N, H, Dv); rpe-logits (H, N, N); lrpe-encode (N, H, D) or (N, H, 2D) [real | imag];\n"
    "lrpe-attention (H, N, N); lrpe-linear and fastrpb (N, H, Dv).  float32 unless --f64.");
  g_option_context_add_main_entries (context, main_entries, NULL);
  g_option_context_add_group (context, rpe_cli_parameter_group (&o));
  g_option_context_set_help_enabled (context, TRUE);

  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      fprintf (stderr, "rpe compute: %s\n", error->message);
      rpe_cli_options_clear (&o);
      return 2;
    }
  o.out = g_steal_pointer (&out_opt);
  o.out_keys = g_steal_pointer (&out_keys_opt);

  if (argc != 2)
    {
      fprintf (stderr, "rpe compute: %s\n",
               argc < 2 ? "say what to compute: template | empirical | codes | encode | logits | attention | linear | rpe-logits | lrpe-encode | lrpe-attention | lrpe-linear | fastrpb"
                        : "too many arguments");
      rpe_cli_options_clear (&o);
      return 2;
    }
  what = argv[1];
  if (!g_strv_contains (compute_whats, what))
    {
      fprintf (stderr, "rpe compute: unknown WHAT '%s' (template | empirical | codes | encode | logits | attention | linear | rpe-logits | lrpe-encode | lrpe-attention | lrpe-linear | fastrpb)\n", what);
      rpe_cli_options_clear (&o);
      return 2;
    }
  if (!rpe_cli_check_options ("compute", what, given, &error))
    {
      fprintf (stderr, "rpe compute %s: %s\n", what, error->message);
      rpe_cli_options_clear (&o);
      return 2;
    }
  if (o.out == NULL)
    {
      fprintf (stderr, "rpe compute: -o OUT.npy is required\n");
      rpe_cli_options_clear (&o);
      return 2;
    }

  if (!rpe_cli_check_output (&o, o.out, &error) || !rpe_cli_check_output (&o, o.out_keys, &error))
    {
      fprintf (stderr, "rpe compute %s: %s\n", what, error->message);
      rpe_cli_options_clear (&o);
      return 1;
    }

  c.o = &o;
  c.exit_code = 0;
  if (g_str_has_prefix (what, "lrpe-") || g_str_equal (what, "fastrpb"))
    {
      ok = rpe_cli_compute_positional (what, &o, &c.exit_code, &error);
      goto out;
    }
  if (!precheck_random_request (&o, what, &error) || !rpe_cli_load_params (&o, &c.params, &error))
    goto out;
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
      fprintf (stderr, "rpe compute %s: %s\n", what, error ? error->message : "failed");
      status = c.exit_code != 0 ? c.exit_code : rpe_cli_exit_code_for_error (error);
    }
  rpe_spe_params_clear (&c.params);
  rpe_cli_options_clear (&o);
  return status;
}

/* linear: SPE-encoded queries/keys (N, H, R) through a feature map, then linear attention
 * over the values: (N, H, Dv).  Never forms N x N. */
gboolean
rpe_cli_parse_feature_map (const RpeCliOptions *o,
                           RpeFeatureMap       *map,
                           RpeFeatureOptions   *fopts,
                           gsize                width,
                           GError             **error)
{
  const char *name = o->feature_map != NULL ? o->feature_map : "elu1";
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
                          "--feature-map must be relu, elu1, exp, performer or dpfp (got '%s')", name);
  memset (fopts, 0, sizeof *fopts);
  fopts->seed = (uint64_t) o->seed;
  fopts->m = o->performer_features > 0 ? (size_t) o->performer_features : width;
  fopts->orthogonal = TRUE;
  fopts->nu = (size_t) MAX (o->dpfp_nu, 0);
  if (o->performer_features == 0 || o->performer_features < -1)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, "--performer-features must be at least 1");
  if (*map == RPE_FEATURE_DPFP && (o->dpfp_nu < 1 || (gsize) o->dpfp_nu >= 2 * width))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          "--dpfp-nu must be between 1 and %zu for width %zu", (size_t) (2 * width - 1),
                          (size_t) width);
  return TRUE;
}

gboolean
rpe_cli_compute_linear (const RpeCliOptions *o,
                        const RpeSpeParams  *params,
                        gboolean             gated,
                        int                 *exit_code,
                        GError             **error)
{
  RpeCliInputs in = { 0 };
  RpeCliCodes codes = { 0 };
  float *qhat = NULL, *khat = NULL, *y = NULL;
  RpeFeatureMap map;
  RpeFeatureOptions fopts;
  gsize H = params->n_heads, r;
  gboolean ok = FALSE;
  RpeStatus st;

  if (!rpe_cli_load_inputs (o, params, TRUE, &in, error))
    return FALSE;
  if (!rpe_cli_make_codes (o, params, in.n, gated, &codes, error))
    goto out;
  r = codes.r;
  if (!rpe_cli_parse_feature_map (o, &map, &fopts, r, error))
    goto out;
  if (!rpe_cli_encode (params, &codes, &in, &qhat, &khat, error))
    goto out;
  rpe_cli_codes_clear (&codes);
  if (!alloc_floats (&y, in.n, H, in.dv, 1, "output", error))
    goto out;
  st = rpe_linear_attention_qkv (map, &fopts, in.n, H, r, in.dv, qhat, khat, in.v, o->causal, y, NULL);
  if (!rpe_cli_status_error (st, "linear attention", error))
    goto out;
  ok = rpe_cli_write (o, o->out, y, 3, (gsize[]) { in.n, H, in.dv }, exit_code, error);

out:
  rpe_free (y);
  rpe_free (qhat);
  rpe_free (khat);
  rpe_cli_codes_clear (&codes);
  rpe_cli_inputs_clear (&in);
  return ok;
}

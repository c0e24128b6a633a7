/* rpe-cli-curves.c: `rpe curves profile|error|extrapolation [options] -o OUT.csv`
 *
 * The analysis curves of core/rpe-curves.h written as CSV: '# key: value'
 * metadata lines, a header row, then numbers (%.9g, C locale).
 * Exit status: 0 success, 2 bad usage or bad input, 1 any other failure.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <glib/gi18n.h>

#include "rpe-alloc.h"
#include "rpe-curves.h"
#include "rpe-error.h"
#include "rpe-lrpe.h"
#include "rpe-npy.h"
#include "rpe-rng.h"
#include "rpe-spe.h"

#include "rpe-checkpoint.h"
#include "rpe-checkpoint-ape.h"
#include "rpe-checkpoint-lrpe.h"
#include "rpe-demos.h"
#include "rpe-cli.h"
#include "rpe-file.h"

#define EXIT_USAGE 2
#define EXIT_FAILURE_OTHER 1

/* the stream of the synthetic FastRPB bias ("curv") */
#define CURVES_STREAM_BIAS 0x63757276u

typedef struct
{
  char   *realizations_list;
  char   *models;
  char   *against;
  char   *out;
  gint64  max_length;
  gint64  seeds;
  gint64  window;
  gint64  block;
} CurvesOptions;

typedef struct
{
  const RpeCliArgs    *o;
  const CurvesOptions *co;
  int                  exit_code;
} Ctx;

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */

/* "4,8,16": positive integers up to max (rpe-cli-parse.h), as size_t. */
static gboolean
parse_size_list (const char *text, const char *option, guint64 max, GArray **out, GError **error)
{
  g_autoptr (GArray) values = NULL;
  GArray *list;

  if (!rpe_cli_parse_int_list (option, text, 1, (gint64) max, 1024, &values, error))
    return FALSE;
  list = g_array_sized_new (FALSE, FALSE, sizeof (size_t), values->len);
  for (guint i = 0; i < values->len; i++)
    g_array_append_val (list, (size_t) { (size_t) g_array_index (values, gint64, i) });
  *out = list;
  return TRUE;
}

/* Loads the SPE parameters of `method` (the checkpoint's module of that method, or random init). */
static gboolean
load_method (const RpeCliArgs *o, RpeSpeMethod method, RpeSpeParams *params, GError **error)
{
  RpeCliArgs copy = *o; /* shallow: only read */

  copy.model.method = (char *) (method == RPE_SPE_SINE ? "sine" : "conv");
  return rpe_cli_load_params (&copy, params, error);
}

static gboolean
check_head_feature (const RpeCliArgs *o, gsize H, gsize D, GError **error)
{
  if (o->model.head < -1 || (o->model.head >= 0 && (gsize) o->model.head >= H))
    return rpe_cli_usage_error (error, "--head must be between 0 and %zu (got %d)", (size_t) H - 1, o->model.head);
  if (o->model.feature < -1 || (o->model.feature >= 0 && (gsize) o->model.feature >= D))
    return rpe_cli_usage_error (error, "--feature must be between 0 and %zu (got %d)", (size_t) D - 1,
                                o->model.feature);
  return TRUE;
}

/* H and D: the checkpoint's first module, or --heads/--features. */
static gboolean
resolve_shape (const RpeCliArgs *o, gsize *H, gsize *D, GError **error)
{
  if (o->model.checkpoint != NULL && rpe_demos_is_spec (o->model.checkpoint)
      && !g_str_equal (o->model.checkpoint, "demo") && !g_file_test (o->model.checkpoint, G_FILE_TEST_EXISTS))
    {
      /* a trained demo states its shape in its metadata (LRPE, FastRPB and APE demos have no SPE
       * module to read it from) */
      g_autoptr (GHashTable) meta = rpe_demos_metadata (o->model.checkpoint, error);
      const char *h, *d;

      if (meta == NULL)
        return FALSE;
      h = g_hash_table_lookup (meta, "heads");
      d = g_hash_table_lookup (meta, "features");
      if (h != NULL && d != NULL)
        {
          *H = (gsize) g_ascii_strtoull (h, NULL, 10);
          *D = (gsize) g_ascii_strtoull (d, NULL, 10);
          if (*H >= 1 && *H <= 4096 && *D >= 1 && *D <= (1 << 16))
            return TRUE;
        }
    }
  if (o->model.checkpoint != NULL)
    {
      RpeSpeParams p;

      if (!rpe_cli_load_params (o, &p, error))
        return FALSE;
      *H = p.n_heads;
      *D = p.n_features;
      rpe_spe_params_clear (&p);
      return TRUE;
    }
  if (o->model.heads < 1 || o->model.heads > 4096 || o->model.features < 1 || o->model.features > (1 << 16))
    return rpe_cli_usage_error (error, "--heads must be 1..4096 and --features 1..65536");
  *H = (gsize) o->model.heads;
  *D = (gsize) o->model.features;
  return TRUE;
}

/* The content c (D floats): NULL for unit (1/sqrt(D) ones), else a seeded unit-norm vector. */
static gboolean
make_content (const RpeCliArgs *o, gsize D, float **out, GError **error)
{
  double norm = 0;
  float *c;

  *out = NULL;
  if (o->content.kind == NULL || g_str_equal (o->content.kind, "unit"))
    return TRUE;
  if (rpe_capture_is_spec (o->content.kind))
    return rpe_cli_usage_error (error,
                                "--content %s: profile and extrapolation put one content vector at every position "
                                "(unit or random); a capture's content differs per position: draw it with rpe compute "
                                "or rpe export attention",
                                o->content.kind);
  if (!g_str_equal (o->content.kind, "random"))
    return rpe_cli_usage_error (error, "--content must be unit or random (got '%s')", o->content.kind);
  c = g_new (float, D);
  rpe_rng_normal ((uint64_t) o->draw.seed, RPE_STREAM_QUERIES, 0, c, D);
  for (gsize d = 0; d < D; d++)
    norm += (double) c[d] * c[d];
  norm = sqrt (norm);
  for (gsize d = 0; d < D; d++)
    c[d] = norm > 0 ? (float) (c[d] / norm) : (float) (1.0 / sqrt ((double) D));
  *out = c;
  return TRUE;
}

/* The LRPE of the --lrpe-* options (as `rpe compute lrpe-*`); length = N_train for theta b/c.
 * A --checkpoint with an LRPE module gives its trained parameters (its module of --prefix), as
 * `rpe compute lrpe-*` reads them; the .npy options replace them. */
static RpeLrpe *
make_lrpe (const RpeCliArgs *o, gsize dim, gsize length, GError **error)
{
  gboolean use_checkpoint = FALSE;

  if (o->model.checkpoint != NULL)
    {
      g_autoptr (RpeTensorSet) set = rpe_cli_read_checkpoint (o->model.checkpoint, error);
      g_autoptr (GPtrArray) modules = NULL;

      if (set == NULL)
        return NULL;
      modules = rpe_checkpoint_find_lrpe_modules (set);
      use_checkpoint = modules->len > 0;
    }
  return rpe_cli_make_lrpe (o, dim, length, use_checkpoint, error);
}

/* FastRPB weights for length n: --bias (2n-1,) or (H, 2n-1), else the --checkpoint's trained
 * `bias.w` (its FastRPB module, --prefix), else the synthetic seeded bias w_tau ~ N(0, 1) / N_train
 * for |tau| < N_train and 0 beyond (nothing is "trained" there).  *source says which. */
static float *
make_bias (const RpeCliArgs *o, gsize n, gsize H, gsize n_train, gboolean *per_head, char **source, GError **error)
{
  gsize len = 2 * n - 1;
  float *w;

  *per_head = FALSE;
  *source = NULL;
  if (o->fastrpb.bias == NULL && o->model.checkpoint != NULL)
    {
      g_autoptr (GError) local = NULL;
      float *trained = rpe_cli_checkpoint_fastrpb (o, n, H, per_head, source, &local);

      if (local != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
      if (trained != NULL)
        {
          gsize count = (*per_head ? H : 1) * len;

          w = g_new (float, count);
          memcpy (w, trained, count * sizeof (float));
          rpe_free (trained);
          return w;
        }
    }
  if (o->fastrpb.bias != NULL)
    *source = g_strdup (o->fastrpb.bias);
  else
    *source = g_strdup ("synthetic (seeded)");
  if (o->fastrpb.bias != NULL)
    {
      g_autoptr (RpeTensor) t = rpe_cli_read_npy (o->fastrpb.bias, error);

      if (t == NULL)
        return NULL;
      if (!rpe_tensor_check_finite (t, error))
        {
          g_prefix_error (error, "%s: ", o->fastrpb.bias);
          return NULL;
        }
      if (t->ndim == 1 && t->shape[0] == len)
        *per_head = FALSE;
      else if (t->ndim == 2 && t->shape[0] == H && t->shape[1] == len)
        *per_head = TRUE;
      else
        {
          g_autofree char *shape = rpe_tensor_shape_string (t);
          rpe_cli_usage_error (error, "%s: --bias must have shape (%zu,) or (%zu, %zu) for length %zu, got %s",
                               o->fastrpb.bias, (size_t) len, (size_t) H, (size_t) len, (size_t) n, shape);
          return NULL;
        }
      w = g_new (float, *per_head ? H * len : len);
      memcpy (w, t->data, (*per_head ? H * len : len) * sizeof (float));
      return w;
    }
  w = g_new (float, len);
  rpe_rng_normal ((uint64_t) o->draw.seed, CURVES_STREAM_BIAS, 0, w, len);
  for (gsize i = 0; i < len; i++)
    {
      gsize lag = i >= n - 1 ? i - (n - 1) : (n - 1) - i;
      w[i] = lag < n_train ? (float) (w[i] / (double) n_train) : 0.0f;
    }
  return w;
}

/* ------------------------------------------------------------------------ */
/* Model names: ape | lrpe | fastrpb | (sine|conv)[-gated|-ungated][-est]    */

typedef struct
{
  char        *name;      /* column prefix: '-' replaced by '_' */
  int          base;      /* 0 ape, 1 sine, 2 conv, 3 lrpe, 4 fastrpb */
  int          gate;      /* -1 default, 0 ungated, 1 gated */
  gboolean     estimate;
} ModelSpec;

static void
model_specs_free (GArray *specs)
{
  for (guint i = 0; specs != NULL && i < specs->len; i++)
    g_free (g_array_index (specs, ModelSpec, i).name);
  if (specs != NULL)
    g_array_unref (specs);
}

static gboolean
parse_models (const char *text, gboolean allow_estimate, GArray **out, GError **error)
{
  static const char *bases[] = { "ape", "sine", "conv", "lrpe", "fastrpb" };
  g_auto (GStrv) parts = g_strsplit (text, ",", -1);
  GArray *specs = g_array_new (FALSE, TRUE, sizeof (ModelSpec));

  for (gsize i = 0; parts[i] != NULL; i++)
    {
      g_autofree char *s = g_strstrip (g_strdup (parts[i]));
      g_auto (GStrv) words = g_strsplit (s, "-", -1);
      ModelSpec spec = { NULL, -1, -1, FALSE };
      gboolean ok = TRUE;

      for (gsize b = 0; b < G_N_ELEMENTS (bases); b++)
        if (g_str_equal (words[0] ? words[0] : "", bases[b]))
          spec.base = (int) b;
      if (spec.base < 0)
        ok = FALSE;
      for (gsize w = 1; ok && words[w] != NULL; w++)
        {
          if (spec.base != 1 && spec.base != 2)
            ok = FALSE;
          else if (g_str_equal (words[w], "gated") && spec.gate < 0 && !spec.estimate)
            spec.gate = 1;
          else if (g_str_equal (words[w], "ungated") && spec.gate < 0 && !spec.estimate)
            spec.gate = 0;
          else if (g_str_equal (words[w], "est") && !spec.estimate)
            spec.estimate = TRUE;
          else
            ok = FALSE;
        }
      if (!ok)
        {
          model_specs_free (specs);
          return rpe_cli_usage_error (error,
                                      "unknown model '%s' in --models (ape, sine, conv, lrpe, fastrpb; "
                                      "sine/conv may end in -gated or -ungated%s)",
                                      s, allow_estimate ? ", then -est for the SPE estimate" : "");
        }
      if (spec.estimate && !allow_estimate)
        {
          model_specs_free (specs);
          return rpe_cli_usage_error (error, "model '%s': the SPE estimate (-est) is not a profile", s);
        }
      spec.name = g_strdelimit (g_strdup (s), "-", '_');
      for (guint j = 0; j < specs->len; j++)
        if (g_str_equal (g_array_index (specs, ModelSpec, j).name, spec.name))
          {
            g_free (spec.name);
            model_specs_free (specs);
            return rpe_cli_usage_error (error, "model '%s' is listed twice", s);
          }
      g_array_append_val (specs, spec);
    }
  *out = specs;
  return TRUE;
}

/* Parameters of both methods, loaded on demand. */
/* The LRPE options shape the lrpe model, --bias and --bias-layout the fastrpb one: given for
 * --models without that model, they would be dropped unread (a file that may not even exist). */
static gboolean
check_model_options (const RpeCliArgs *o, const GArray *specs, GError **error)
{
  gboolean    lrpe = FALSE, fastrpb = FALSE;
  const char *lrpe_given = o->lrpe.p != NULL             ? "--lrpe-p"
                           : o->lrpe.lambda != NULL      ? "--lrpe-lambda"
                           : o->lrpe.theta != NULL       ? "--lrpe-theta"
                           : o->lrpe.v != NULL           ? "--lrpe-v"
                           : o->lrpe.theta_file != NULL  ? "--lrpe-theta-file"
                           : o->lrpe.permutation != NULL ? "--lrpe-permutation"
                           : o->lrpe.householder != NULL ? "--lrpe-householder"
                                                         : NULL;
  const char *bias_given = o->fastrpb.bias != NULL ? "--bias" : o->fastrpb.layout != NULL ? "--bias-layout" : NULL;

  for (guint i = 0; i < specs->len; i++)
    {
      lrpe |= g_array_index (specs, ModelSpec, i).base == 3;
      fastrpb |= g_array_index (specs, ModelSpec, i).base == 4;
    }
  if (lrpe_given != NULL && !lrpe)
    return rpe_cli_usage_error (error, "%s shapes the lrpe model, which --models does not draw: remove it or add lrpe",
                                lrpe_given);
  if (bias_given != NULL && !fastrpb)
    return rpe_cli_usage_error (
      error, "%s is the fastrpb model's bias, which --models does not draw: remove it or add fastrpb", bias_given);
  return TRUE;
}

typedef struct
{
  RpeSpeParams params[2];
  gboolean     loaded[2];
} ParamCache;

static const RpeSpeParams *
cache_get (ParamCache *c, const RpeCliArgs *o, int base, GError **error)
{
  int i = base == 1 ? 0 : 1;

  if (!c->loaded[i])
    {
      if (!load_method (o, i == 0 ? RPE_SPE_SINE : RPE_SPE_CONV, &c->params[i], error))
        return NULL;
      c->loaded[i] = TRUE;
    }
  return &c->params[i];
}

static void
cache_clear (ParamCache *c)
{
  for (int i = 0; i < 2; i++)
    if (c->loaded[i])
      rpe_spe_params_clear (&c->params[i]);
}

/* Whether spec uses the gate; an explicit -gated needs one. */
static gboolean
spec_gated (const ModelSpec *spec, const RpeSpeParams *p, const RpeCliArgs *o, gboolean *gated, GError **error)
{
  if (spec->gate == 1 && p->gate == NULL)
    return rpe_cli_usage_error (error, "model '%s' needs a gate, but the %s parameters have none%s", spec->name,
                                p->method == RPE_SPE_SINE ? "sine" : "conv", o->model.no_gate ? " (--no-gate)" : "");
  *gated = spec->gate < 0 ? p->gate != NULL : spec->gate == 1;
  return TRUE;
}

/* The default models: each method (or --method's) plain and, if a gate exists, gated. */
static char *
default_models (const RpeCliArgs *o, ParamCache *cache, gboolean profile, GError **error)
{
  GString *s = g_string_new (profile ? "" : "ape");
  const char *methods[2] = { "sine", "conv" };
  gboolean    present[2] = { TRUE, TRUE };

  if (o->model.checkpoint != NULL && o->model.map == NULL && o->model.method == NULL)
    {
      /* a checkpoint's own modules: its SPE methods (those of --prefix), else its LRPE and
       * FastRPB modules (an LRPE or FastRPB model) */
      g_autoptr (RpeTensorSet) set = rpe_cli_read_checkpoint (o->model.checkpoint, error);
      g_autoptr (GPtrArray) spe = NULL, lrpe = NULL, fastrpb = NULL;

      if (set == NULL)
        {
          g_string_free (s, TRUE);
          return NULL;
        }
      spe = rpe_checkpoint_find_modules (set);
      lrpe = rpe_checkpoint_find_lrpe_modules (set);
      fastrpb = rpe_checkpoint_find_fastrpb_modules (set);
      if ((spe == NULL || spe->len == 0) && ((lrpe != NULL && lrpe->len > 0) || (fastrpb != NULL && fastrpb->len > 0)))
        {
          if (lrpe != NULL && lrpe->len > 0)
            g_string_append_printf (s, "%slrpe", s->len ? "," : "");
          if (fastrpb != NULL && fastrpb->len > 0)
            g_string_append_printf (s, "%sfastrpb", s->len ? "," : "");
          return g_string_free (s, FALSE);
        }
      if (spe != NULL && spe->len > 0)
        {
          gboolean any = FALSE, found[2] = { FALSE, FALSE };

          for (guint i = 0; i < spe->len; i++)
            {
              const RpeSpeModuleInfo *m = g_ptr_array_index (spe, i);

              if (o->model.prefix == NULL || g_str_equal (o->model.prefix, m->prefix))
                found[m->method == RPE_SPE_SINE ? 0 : 1] = any = TRUE;
            }
          if (any)
            present[0] = found[0], present[1] = found[1];
        }
    }

  for (int i = 0; i < 2; i++)
    {
      const RpeSpeParams *p;

      if ((o->model.method != NULL && !g_str_equal (o->model.method, methods[i])) || !present[i])
        continue;
      if (!profile)
        {
          g_string_append_printf (s, ",%s", methods[i]);
          continue;
        }
      p = cache_get (cache, o, i + 1, error);
      if (p == NULL)
        {
          g_string_free (s, TRUE);
          return NULL;
        }
      g_string_append_printf (s, "%s%s-ungated", s->len ? "," : "", methods[i]);
      if (p->gate != NULL)
        g_string_append_printf (s, ",%s-gated", methods[i]);
    }
  if (profile)
    g_string_append_printf (s, "%slrpe", s->len ? "," : "");
  return g_string_free (s, FALSE);
}

/* ------------------------------------------------------------------------ */
/* profile                                                                  */

static RpeCurveTable *
curves_profile (Ctx *c, GError **error)
{
  const RpeCliArgs *o = c->o;
  ParamCache cache = { 0 };
  GArray *specs = NULL;
  g_autofree char *models = NULL;
  g_autofree float *content = NULL;
  g_autofree float *bias = NULL;
  g_autofree char  *bias_source = NULL;
  gboolean          bias_per_head = FALSE; /* of `bias`, made once for every fastrpb of --models */
  RpeCurveTable *t = NULL;
  RpeLrpe *lrpe = NULL;
  gsize n, H, D, head;
  gboolean ok = FALSE;
  RpeStatus st;

  if (!rpe_cli_resolve_length (o, 0, &n, error) || !resolve_shape (o, &H, &D, error)
      || !check_head_feature (o, H, D, error))
    return NULL;
  head = o->model.head >= 0 ? (gsize) o->model.head : 0;
  models = c->co->models != NULL ? g_strdup (c->co->models) : default_models (o, &cache, TRUE, error);
  if (models == NULL || !parse_models (models, FALSE, &specs, error) || !check_model_options (o, specs, error))
    goto out;
  if (!make_content (o, D, &content, error))
    goto out;
  t = rpe_curve_profile_new (n, &st);
  if (!rpe_cli_status_error (st, "profile", error))
    goto out;

  for (guint i = 0; i < specs->len; i++)
    {
      const ModelSpec *spec = &g_array_index (specs, ModelSpec, i);

      if (spec->base == 1 || spec->base == 2)
        {
          const RpeSpeParams *p = cache_get (&cache, o, spec->base, error);
          gboolean gated;

          if (p == NULL || !spec_gated (spec, p, o, &gated, error))
            goto out;
          if (p->n_heads != H || p->n_features != D || head >= p->n_heads)
            {
              rpe_cli_usage_error (error, "the sine and conv modules differ in shape; give --head within both");
              goto out;
            }
          st = rpe_curve_profile_add_spe (
            t, spec->name, p, head, o->model.feature >= 0 ? (gsize) o->model.feature : RPE_CURVE_ALL, gated, NULL);
        }
      else if (spec->base == 3)
        {
          if (lrpe == NULL)
            lrpe = make_lrpe (o, D, o->draw.train_length != RPE_CLI_UNSET ? (gsize) o->draw.train_length : n, error);
          if (lrpe == NULL)
            goto out;
          st = rpe_curve_profile_add_lrpe (t, spec->name, lrpe, content, content);
        }
      else if (spec->base == 4)
        {
          gsize nt = o->draw.train_length != RPE_CLI_UNSET ? (gsize) o->draw.train_length : n;

          if (bias == NULL && (bias = make_bias (o, n, H, nt, &bias_per_head, &bias_source, error)) == NULL)
            goto out;
          st = rpe_curve_profile_add_fastrpb (t, spec->name, bias + (bias_per_head ? head * (2 * n - 1) : 0),
                                              o->attention.causal);
        }
      else
        {
          rpe_cli_usage_error (error, "model '%s' has no template profile (ape is absolute)", spec->name);
          goto out;
        }
      if (!rpe_cli_status_error (st, spec->name, error))
        goto out;
    }
  st = rpe_curve_table_set_meta_double (t, "length", (double) n);
  if (st == RPE_OK)
    st = rpe_curve_table_set_meta_double (t, "head", (double) head);
  if (st == RPE_OK)
    {
      if (o->model.feature >= 0)
        st = rpe_curve_table_set_meta_double (t, "feature", (double) o->model.feature);
      else
        st = rpe_curve_table_set_meta (t, "feature", "mean over features");
    }
  if (st == RPE_OK && o->draw.train_length != RPE_CLI_UNSET)
    st = rpe_curve_table_set_meta_double (t, "n_train", (double) o->draw.train_length);
  if (st == RPE_OK && bias_source != NULL)
    st = rpe_curve_table_set_meta (t, "fastrpb_weights", bias_source);
  ok = rpe_cli_status_error (st, "metadata", error);

out:
  rpe_lrpe_free (lrpe);
  model_specs_free (specs);
  cache_clear (&cache);
  if (!ok)
    g_clear_pointer (&t, rpe_curve_table_free);
  return t;
}

/* ------------------------------------------------------------------------ */
/* error                                                                    */

static RpeCurveTable *
curves_error (Ctx *c, GError **error)
{
  const RpeCliArgs    *o = c->o;
  const CurvesOptions *co = c->co;
  ParamCache cache = { 0 };
  GArray *rlist = NULL;
  RpeCurveTable *t = NULL;
  gboolean by_position = FALSE, ok = FALSE;
  gsize n, r = 64, rows, seeds, H = 0, D = 0;
  double *x = NULL, *mean = NULL, *rms = NULL, *sd = NULL;
  const char *methods[2] = { "sine", "conv" };
  GArray *schemes = NULL;
  RpeStatus st = RPE_OK;

  if (co->against != NULL)
    {
      if (g_str_equal (co->against, "position"))
        by_position = TRUE;
      else if (!g_str_equal (co->against, "r"))
        {
          rpe_cli_usage_error (error, "--against must be r or position (got '%s')", co->against);
          return NULL;
        }
    }
  if (o->draw.length != RPE_CLI_UNSET)
    {
      if (!rpe_cli_resolve_length (o, 0, &n, error))
        return NULL;
    }
  else
    n = 64;
  if (n > 65536)
    {
      rpe_cli_usage_error (error, "--length must be at most 65536 for the error curve (N x N templates)");
      return NULL;
    }
  if (co->seeds != RPE_CLI_UNSET && (co->seeds < 1 || co->seeds > 1000000))
    {
      rpe_cli_usage_error (error, "--seeds must be between 1 and 1000000 (got %" G_GINT64_FORMAT ")", co->seeds);
      return NULL;
    }
  seeds = co->seeds != RPE_CLI_UNSET ? (gsize) co->seeds : 0;   /* 0: decided per method below */
  if (by_position)
    {
      if (co->realizations_list != NULL)
        {
          rpe_cli_usage_error (error, "--realizations-list goes with --against r; use --realizations R with position");
          return NULL;
        }
      if (o->draw.realizations != RPE_CLI_UNSET)
        {
          if (o->draw.realizations < 1 || o->draw.realizations > (1 << 24))
            {
              rpe_cli_usage_error (error, "--realizations must be between 1 and %d", 1 << 24);
              return NULL;
            }
          r = (gsize) o->draw.realizations;
        }
      rows = n;
    }
  else
    {
      if (!parse_size_list (co->realizations_list ? co->realizations_list : "4,8,16,32,64,128,256,512,1024",
                            "--realizations-list", 1 << 24, &rlist, error))
        return NULL;
      rows = rlist->len;
    }
  if (o->model.method != NULL && !g_str_equal (o->model.method, "sine") && !g_str_equal (o->model.method, "conv"))
    {
      rpe_cli_usage_error (error, "--method must be sine or conv (got '%s')", o->model.method);
      goto out;
    }

  if (o->draw.noise_scheme != NULL)
    {
      g_auto (GStrv) parts = g_strsplit (o->draw.noise_scheme, ",", -1);

      schemes = g_array_new (FALSE, FALSE, sizeof (RpeNoiseScheme));
      for (gsize i = 0; parts[i] != NULL; i++)
        {
          RpeNoiseScheme sc;
          if (!rpe_noise_scheme_from_string (g_strstrip (parts[i]), &sc))
            {
              rpe_cli_usage_error (error, "--noise-scheme: '%s' is not iid, orthogonal, antithetic or sobol", parts[i]);
              goto out;
            }
          g_array_append_val (schemes, sc);
        }
      if (schemes->len == 0)
        {
          rpe_cli_usage_error (error, "--noise-scheme needs at least one scheme");
          goto out;
        }
    }
  t = rpe_curve_table_new (rows, &st);
  if (!rpe_cli_status_error (st, "table", error))
    goto out;
  x = g_new (double, rows);
  mean = g_new (double, rows);
  rms = g_new (double, rows);
  sd = g_new (double, rows);
  for (gsize i = 0; i < rows; i++)
    x[i] = by_position ? (double) i : (double) g_array_index (rlist, size_t, i);
  st = rpe_curve_table_add_column (t, by_position ? "m" : "R", x, NULL);
  if (!rpe_cli_status_error (st, "table", error))
    goto out;

  for (int mi = 0; mi < 2; mi++)
    {
      const RpeSpeParams *p;
      RpeCurveErrorConfig cfg = { 0 };

      if (o->model.method != NULL && !g_str_equal (o->model.method, methods[mi]))
        continue;
      p = cache_get (&cache, o, mi + 1, error);
      if (p == NULL)
        goto out;
      if (!check_head_feature (o, p->n_heads, p->n_features, error))
        goto out;
      H = p->n_heads;
      D = p->n_features;
      cfg.params = p;
      cfg.n = n;
      cfg.gated = p->gate != NULL;
      cfg.head = o->model.head >= 0 ? (gsize) o->model.head : 0;
      cfg.feature = o->model.feature >= 0 ? (gsize) o->model.feature : RPE_CURVE_ALL;
      if (seeds == 0)
        {
          /* default: 256 (cell, seed) samples per point, at least 2 seeds */
          gsize cells = o->model.feature >= 0 ? 1 : p->n_features;
          seeds = MAX ((gsize) 2, (256 + cells - 1) / cells);
        }
      cfg.n_seeds = seeds;
      cfg.seed = (uint64_t) o->draw.seed;
      /* one curve per noise scheme (rpe-noise.h); without --noise-scheme, the plain iid
       * columns under the method's name */
      for (guint si = 0; si < (schemes != NULL ? schemes->len : 1); si++)
      {
      g_autofree char *base = schemes != NULL
        ? g_strdup_printf ("%s_%s", methods[mi], rpe_noise_scheme_to_string (g_array_index (schemes, RpeNoiseScheme, si)))
        : g_strdup (methods[mi]);
      g_autofree char *c_sd = g_strdup_printf ("%s_sd", base);
      g_autofree char *c_rms = g_strdup_printf ("%s_rms", base);

      cfg.noise_scheme = schemes != NULL ? g_array_index (schemes, RpeNoiseScheme, si) : RPE_NOISE_IID;
      if (by_position)
        st = rpe_curve_error_vs_position (&cfg, r, mean, rms, sd, NULL);
      else
        st = rpe_curve_error_vs_r (&cfg, (const size_t *) (void *) rlist->data, rows, mean, rms, sd, NULL);
      if (!rpe_cli_status_error (st, methods[mi], error))
        goto out;
      if ((st = rpe_curve_table_add_column (t, base, mean, NULL)) != RPE_OK
          || (st = rpe_curve_table_add_column (t, c_rms, rms, NULL)) != RPE_OK
          || (st = rpe_curve_table_add_column (t, c_sd, sd, NULL)) != RPE_OK)
        {
          rpe_cli_status_error (st, "table", error);
          goto out;
        }
      {
        g_autofree char *k_gated = g_strdup_printf ("%s_gated", methods[mi]);
        st = rpe_curve_table_set_meta (t, k_gated, cfg.gated ? "true" : "false");
      }
      if (!by_position && rows >= 2 && st == RPE_OK)
        {
          double slope = NAN, se = NAN, slope_rms = NAN;
          g_autofree char *k_slope = g_strdup_printf ("%s_slope", base);
          g_autofree char *k_se = g_strdup_printf ("%s_slope_se", base);
          g_autofree char *k_rms = g_strdup_printf ("%s_slope_rms", base);

          /* a NaN/zero error (e.g. a zero template) leaves the slope NaN */
          (void) rpe_curve_fit_loglog (x, mean, rows, &slope, NULL, &se);
          (void) rpe_curve_fit_loglog (x, rms, rows, &slope_rms, NULL, NULL);
          if ((st = rpe_curve_table_set_meta_double (t, k_slope, slope)) == RPE_OK
              && (st = rpe_curve_table_set_meta_double (t, k_se, se)) == RPE_OK)
            st = rpe_curve_table_set_meta_double (t, k_rms, slope_rms);
        }
      if (!rpe_cli_status_error (st, "metadata", error))
        goto out;
      }
    }
  if ((st = rpe_curve_table_set_meta_double (t, "length", (double) n)) == RPE_OK
      && (st = rpe_curve_table_set_meta_double (t, "seeds", (double) seeds)) == RPE_OK
      && (st = rpe_curve_table_set_meta_double (t, "head", (double) (o->model.head >= 0 ? o->model.head : 0)))
           == RPE_OK)
    {
      if (o->model.feature >= 0)
        st = rpe_curve_table_set_meta_double (t, "feature", (double) o->model.feature);
      else
        st = rpe_curve_table_set_meta (t, "feature", "all (mean over features)");
    }
  if (st == RPE_OK && by_position)
    st = rpe_curve_table_set_meta_double (t, "realizations", (double) r);
  if (st == RPE_OK)
    st = rpe_curve_table_set_meta (t, "error", by_position
                                   ? "|Phat[m,:] - Ptilde[m,:]| / |Ptilde[m,:]| (mean over seeds and features)"
                                   : "|Phat - Ptilde|_F / |Ptilde|_F (mean over seeds and features); slope of log mean vs log R");
  (void) H;
  (void) D;
  ok = rpe_cli_status_error (st, "metadata", error);

out:
  g_free (x);
  g_free (mean);
  g_free (rms);
  g_free (sd);
  if (schemes != NULL)
    g_array_unref (schemes);
  if (rlist != NULL)
    g_array_unref (rlist);
  cache_clear (&cache);
  if (!ok)
    g_clear_pointer (&t, rpe_curve_table_free);
  return t;
}

/* ------------------------------------------------------------------------ */
/* extrapolation                                                            */

static RpeCurveTable *
curves_extrapolation (Ctx *c, GError **error)
{
  const RpeCliArgs           *o = c->o;
  const CurvesOptions *co = c->co;
  ParamCache cache = { 0 };
  GArray *specs = NULL;
  g_autofree char *models = NULL;
  g_autofree float *content = NULL;
  g_autofree float *bias = NULL;
  g_autofree char            *bias_source = NULL;
  g_autofree RpeCurveModel *cm = NULL;
  RpeCurveExtrapolationConfig cfg = { 0 };
  RpeCurveTable *t = NULL;
  RpeLrpe *lrpe = NULL;
  g_autoptr (RpeTensorSet) ape_set = NULL;
  const RpeTensor *ape = NULL;
  gsize H, D, nt, nmax, r = 64;
  gboolean ok = FALSE, per_head = FALSE;
  RpeStatus st = RPE_OK;

  if (o->draw.train_length != RPE_CLI_UNSET && (o->draw.train_length < 1 || o->draw.train_length > ((gint64) 1 << 24)))
    {
      rpe_cli_usage_error (error, "--train-length must be between 1 and %d (got %" G_GINT64_FORMAT ")", 1 << 24,
                           o->draw.train_length);
      return NULL;
    }
  nt = o->draw.train_length != RPE_CLI_UNSET ? (gsize) o->draw.train_length : 64;
  if (co->max_length != RPE_CLI_UNSET && (co->max_length < 1 || co->max_length > ((gint64) 1 << 26)))
    {
      rpe_cli_usage_error (error, "--max-length must be between 1 and %d (got %" G_GINT64_FORMAT ")", 1 << 26,
                           co->max_length);
      return NULL;
    }
  nmax = co->max_length != RPE_CLI_UNSET ? (gsize) co->max_length : 4 * nt;
  if (co->window != RPE_CLI_UNSET && (co->window < 1 || (gsize) co->window > nt))
    {
      rpe_cli_usage_error (error, "--window must be between 1 and N_train = %zu (got %" G_GINT64_FORMAT ")",
                           (size_t) nt, co->window);
      return NULL;
    }
  if (co->block != RPE_CLI_UNSET && (co->block < 1 || co->block > (1 << 20)))
    {
      rpe_cli_usage_error (error, "--block must be between 1 and %d", 1 << 20);
      return NULL;
    }
  if (o->draw.realizations != RPE_CLI_UNSET)
    {
      if (o->draw.realizations < 1 || o->draw.realizations > (1 << 24))
        {
          rpe_cli_usage_error (error, "--realizations must be between 1 and %d", 1 << 24);
          return NULL;
        }
      r = (gsize) o->draw.realizations;
    }
  if (!resolve_shape (o, &H, &D, error) || !check_head_feature (o, H, D, error))
    return NULL;
  models = co->models != NULL ? g_strdup (co->models) : default_models (o, &cache, FALSE, error);
  if (models == NULL || !parse_models (models, TRUE, &specs, error) || !check_model_options (o, specs, error))
    goto out;
  if (!make_content (o, D, &content, error))
    goto out;

  cm = g_new0 (RpeCurveModel, specs->len);
  for (guint i = 0; i < specs->len; i++)
    {
      const ModelSpec *spec = &g_array_index (specs, ModelSpec, i);

      cm[i].name = spec->name;
      switch (spec->base)
        {
        case 0:
          cm[i].kind = RPE_CURVE_MODEL_APE;
          if (o->model.checkpoint != NULL && ape_set == NULL)
            {
              if ((ape_set = rpe_cli_read_checkpoint (o->model.checkpoint, error)) == NULL)
                goto out;
              ape = rpe_checkpoint_find_learned_ape (ape_set, H, D, error);
              if (ape == NULL && error != NULL && *error != NULL)
                goto out;
            }
          if (ape != NULL)
            {
              /* the checkpoint's learned absolute embedding instead of the sinusoidal one */
              cm[i].ape_table = ape->data;
              cm[i].ape_positions = ape->shape[0];
              if (ape->shape[0] < nt)
                g_printerr ("rpe curves: the learned APE '%s' has %zu positions, fewer than N_train = %zu\n",
                            ape->name, (size_t) ape->shape[0], (size_t) nt);
            }
          break;
        case 1:
        case 2:
          {
            const RpeSpeParams *p = cache_get (&cache, o, spec->base, error);
            gboolean gated;

            if (p == NULL || !spec_gated (spec, p, o, &gated, error))
              goto out;
            if (p->n_heads != H || p->n_features != D)
              {
                rpe_cli_usage_error (error, "model '%s': the module's shape (H=%zu, D=%zu) differs from (H=%zu, D=%zu)",
                                     spec->name, (size_t) p->n_heads, (size_t) p->n_features, (size_t) H, (size_t) D);
                goto out;
              }
            cm[i].kind = spec->estimate ? RPE_CURVE_MODEL_SPE_ESTIMATE : RPE_CURVE_MODEL_SPE_EXACT;
            cm[i].spe = p;
            cm[i].gated = gated;
            cm[i].realizations = r;
            cm[i].seed = (uint64_t) o->draw.seed;
          }
          break;
        case 3:
          if (lrpe == NULL && (lrpe = make_lrpe (o, D, nt, error)) == NULL)
            goto out;
          cm[i].kind = RPE_CURVE_MODEL_LRPE;
          cm[i].lrpe = lrpe;
          break;
        default:
          if (bias == NULL && (bias = make_bias (o, nmax, H, nt, &per_head, &bias_source, error)) == NULL)
            goto out;
          cm[i].kind = RPE_CURVE_MODEL_FASTRPB;
          cm[i].bias = bias;
          cm[i].bias_per_head = per_head;
          break;
        }
    }

  cfg.n_train = nt;
  cfg.n_max = nmax;
  cfg.n_heads = H;
  cfg.n_features = D;
  cfg.window = co->window != RPE_CLI_UNSET ? (gsize) co->window : 0;
  cfg.causal = o->attention.causal;
  cfg.content = content;
  cfg.block_rows = co->block != RPE_CLI_UNSET ? (gsize) co->block : 0;
  t = rpe_curve_extrapolation_table (&cfg, cm, specs->len, o->model.head >= 0 ? (gsize) o->model.head : RPE_CURVE_ALL,
                                     &st, NULL);
  if (!rpe_cli_status_error (st, "extrapolation", error))
    goto out;
  if ((st = rpe_curve_table_set_meta (t, "content", content ? "random (seeded, unit norm)" : "unit (1/sqrt(D) ones)"))
        == RPE_OK
      && (st = rpe_curve_table_set_meta (t, "heads", o->model.head >= 0 ? "one" : "mean over heads")) == RPE_OK
      && o->model.head >= 0)
    st = rpe_curve_table_set_meta_double (t, "head", (double) o->model.head);
  if (st == RPE_OK)
    st = rpe_curve_table_set_meta (t, "metrics",
                                   "distance = sum_n a|m-n|, entropy = -sum_n a log a (row softmax); "
                                   "ti, mono on u = exp(logit) over the window (see rpe-curves.h)");
  if (st == RPE_OK && bias_source != NULL)
    st = rpe_curve_table_set_meta (t, "fastrpb_weights", bias_source);
  ok = rpe_cli_status_error (st, "metadata", error);

out:
  rpe_lrpe_free (lrpe);
  model_specs_free (specs);
  cache_clear (&cache);
  if (!ok)
    g_clear_pointer (&t, rpe_curve_table_free);
  return t;
}

/* ------------------------------------------------------------------------ */
/* Entry point                                                              */

#define CURVES_MODELS 1        /* --models */
#define CURVES_ERROR 2         /* --realizations-list --seeds --against */
#define CURVES_EXTRAPOLATION 4 /* --max-length --window --block */

/* clang-format off */
static const RpeCliOption curves_options[] = {
  { .name = "output", .short_name = 'o', .arg = RPE_CLI_ARG_FILE, .offset = G_STRUCT_OFFSET (CurvesOptions, out),
    .help = N_("Write the CSV here"), .arg_name = "OUT.csv" },
  RPE_CLI_STRING ("models", G_STRUCT_OFFSET (CurvesOptions, models), CURVES_MODELS,
                  N_("profile/extrapolation: ape,sine,conv,lrpe,fastrpb; sine/conv[-gated|-ungated][-est]"), "LIST"),
  RPE_CLI_STRING ("realizations-list", G_STRUCT_OFFSET (CurvesOptions, realizations_list), CURVES_ERROR,
                  N_("error: the R values (default 4,8,16,...,1024)"), "R1,R2,..."),
  RPE_CLI_INT64 ("seeds", G_STRUCT_OFFSET (CurvesOptions, seeds), CURVES_ERROR, 1, 1000000,
                 N_("error: draws per point, seeds --seed, --seed + 1, ... (default: 256 / cells, at least 2)"), "S"),
  RPE_CLI_STRING ("against", G_STRUCT_OFFSET (CurvesOptions, against), CURVES_ERROR,
                  N_("error: against R (default) or query position m (one R: --realizations)"), "r|position"),
  RPE_CLI_INT64 ("max-length", G_STRUCT_OFFSET (CurvesOptions, max_length), CURVES_EXTRAPOLATION, 1, (gint64) 1 << 26,
                 N_("extrapolation: evaluation length N_max (default 4 N_train)"), "N"),
  RPE_CLI_INT64 ("window", G_STRUCT_OFFSET (CurvesOptions, window), CURVES_EXTRAPOLATION, 1, (gint64) 1 << 32,
                 N_("extrapolation: offsets W of the PE metrics (default min(N_train, 64))"), "W"),
  RPE_CLI_INT64 ("block", G_STRUCT_OFFSET (CurvesOptions, block), CURVES_EXTRAPOLATION, 1, 1 << 20,
                 N_("extrapolation: rows per block (default 64; memory block x N_max)"), "B"),
  { NULL }
};
/* clang-format on */

#define CURVES_MODEL                                                                             \
  (RPE_CLI_TAKES_MODEL | RPE_CLI_TAKES_SPE | RPE_CLI_TAKES_SEQUENCE | RPE_CLI_TAKES_HEAD_FEATURE \
   | RPE_CLI_TAKES_TRAIN_LENGTH | RPE_CLI_TAKES_FORCE)

static const RpeCliLeaf curves_leaves[] = {
  { "profile", N_("Template profiles P(tau) of SPE (gated and not), LRPE, FastRPB and APE"),
    N_("The template profile P(tau), tau = -(N-1) .. N-1 (--length N), of every model of --models:\n"
       "SPE sine and conv (gated and not, analytic or -est estimated), the profile LRPE induces (--lrpe-*),\n"
       "FastRPB's weights (--bias or the checkpoint's, else a synthetic seeded bias) and learned APE.\n"
       "One column per model; --head and --feature pick the template (default the mean over features)."),
    "curves profile --checkpoint demo --length 128 -o profile.csv",
    CURVES_MODEL | RPE_CLI_TAKES_CONTENT | RPE_CLI_TAKES_LRPE | RPE_CLI_TAKES_LRPE_FILES | RPE_CLI_TAKES_BIAS
      | RPE_CLI_TAKES_CAUSAL,
    CURVES_MODELS, "checkpoint length models train-length", NULL, NULL, NULL },
  { "error", N_("The SPE estimator's relative error against R (or query position), with its log-log slope"),
    N_("|Phat - Ptilde|_F / |Ptilde|_F, the relative error of the SPE estimate against the analytic\n"
       "template, against R (--realizations-list) with the fitted log-log slope (-1/2 for an unbiased\n"
       "estimator), or --against position for one R; mean and sd over --seeds draws.  One curve per\n"
       "method and --noise-scheme (a comma list).  N = --length (default 64)."),
    "curves error --checkpoint demo --realizations-list 4,16,64,256 -o error.csv",
    CURVES_MODEL | RPE_CLI_TAKES_REALIZATIONS | RPE_CLI_TAKES_NOISE_SCHEME, CURVES_ERROR,
    "checkpoint length noise-scheme", NULL, NULL, NULL },
  { "extrapolation", N_("Extrapolation metrics per query position: distance, entropy, ti, mono"),
    N_("Per query position m < N_max, with identical content at every position: the mean attended\n"
       "distance, the entropy, translation invariance (ti) and monotonicity (mono), lower is better, for\n"
       "every model of --models; the positions beyond --train-length (default 64) show how each model\n"
       "extrapolates.  --max-length N_max (default 4 N_train)."),
    "curves extrapolation --checkpoint demo --train-length 64 --max-length 256 -o extrapolation.csv",
    CURVES_MODEL | RPE_CLI_TAKES_REALIZATIONS | RPE_CLI_TAKES_CONTENT | RPE_CLI_TAKES_LRPE | RPE_CLI_TAKES_LRPE_FILES
      | RPE_CLI_TAKES_BIAS | RPE_CLI_TAKES_CAUSAL,
    CURVES_MODELS | CURVES_EXTRAPOLATION, "checkpoint models train-length", NULL, NULL, NULL },
  { "output-error", N_("The relative error of the SPE output against position or R"),
    N_("err[m] = |Y_spe[m] - Y_ref[m]| / |Y_ref[m]| per position m (mean and sd over --draws), or against R\n"
       "(--realizations-list): the mean over the draws of the whole output's relative error, before and\n"
       "from --train-length, and err at positions N_train - 1 and N - 1, with the fitted log-log slope.\n"
       "--compare kernel (L V vs Lhat V) is unbiased: its error falls like 1/sqrt(R); softmax is not."),
    "curves output-error --checkpoint demo --length 128 --train-length 32 --realizations-list 4,16,64 -o out-err.csv",
    RPE_CLI_OUTPUTS_TAKES, RPE_CLI_OUTPUTS_CSV, "checkpoint length train-length", rpe_cli_outputs_options, NULL, NULL },
};

const RpeCliCommand rpe_cli_curves_command = {
  .name = "curves",
  .summary = N_("Analysis curves as CSV: template profiles, estimator error, extrapolation"),
  .leaf_arg = "KIND",
  .description = N_("Computes the analysis curves of the window's Curves page and writes them as CSV: '# key:\n"
                    "value' metadata lines (the command among them), a header row, then numbers (%.9g, C\n"
                    "locale).  'rpe export profile|error|extrapolation' plots the same tables."),
  .example = "curves profile --checkpoint demo --length 128 -o profile.csv",
  .options = curves_options,
  .leaves = curves_leaves,
  .n_leaves = G_N_ELEMENTS (curves_leaves),
  .run = rpe_cli_curves,
};

int
rpe_cli_curves (int argc, char **argv)
{
  const RpeCliCommand *command = &rpe_cli_curves_command;
  const RpeCliLeaf    *leaf;
  RpeCliArgs           o;
  CurvesOptions co = { 0 };
  Ctx c = { 0 };
  g_autoptr (GError) error = NULL;
  g_autofree char *command_line = NULL;
  RpeCurveTable *t = NULL;
  const char *what = NULL;
  int              status = 0, index;

  leaf = rpe_cli_find_leaf (command, argc, argv, &index);
  if (leaf == NULL)
    {
      if (rpe_cli_wants_help (command, NULL, argc, argv))
        {
          rpe_cli_print_command_help (command, stdout);
          return 0;
        }
      if (index < 0)
        fprintf (stderr, _("rpe curves: %s\n"), "say which curve: profile | error | extrapolation | output-error");
      else
        fprintf (stderr, _("rpe curves: unknown curve '%s' (profile | error | extrapolation | output-error)\n"),
                 argv[index]);
      return EXIT_USAGE;
    }
  if (g_str_equal (leaf->name, "output-error"))
    return rpe_cli_curves_output_error (argc, argv);   /* rpe-cli-outputs.c */
  rpe_cli_args_init (&o);
  co.max_length = co.seeds = co.window = co.block = RPE_CLI_UNSET;
  {
    /* the command line, for the CSV's metadata */
    GString *s = g_string_new ("rpe");
    for (int i = 0; i < argc; i++)
      {
        g_autofree char *q = g_shell_quote (argv[i]);
        g_string_append_c (s, ' ');
        g_string_append (s, strpbrk (argv[i], " '\"\\$`*?;&|<>()") ? q : argv[i]);
      }
    command_line = g_string_free (s, FALSE);
    for (char *p = command_line; *p; p++)
      if ((unsigned char) *p < 0x20)
        *p = ' ';
  }

  if (!rpe_cli_parse (command, leaf, NULL, &o, &co, &argc, &argv, &status))
    goto done;
  if (argc != 2)
    {
      fprintf (stderr, _("rpe curves: %s\n"), "too many arguments");
      status = EXIT_USAGE;
      goto done;
    }
  what = leaf->name;
  if (!g_str_equal (what, "error") && o.draw.noise_scheme != NULL && !g_str_equal (o.draw.noise_scheme, "iid"))
    {
      fprintf (stderr, _("rpe curves: --noise-scheme applies to 'rpe curves error' (%s draws i.i.d. noise)\n"), what);
      status = EXIT_USAGE;
      goto done;
    }
  if (co.out == NULL)
    {
      fprintf (stderr, _("rpe curves: -o OUT.csv is required\n"));
      status = EXIT_USAGE;
      goto done;
    }

  if (!rpe_cli_check_output (&o, co.out, &error))
    {
      fprintf (stderr, _("rpe curves %s: %s\n"), what, error->message);
      status = EXIT_FAILURE_OTHER;
      goto done;
    }
  c.o = &o;
  c.co = &co;
  if (g_str_equal (what, "profile"))
    t = curves_profile (&c, &error);
  else if (g_str_equal (what, "error"))
    t = curves_error (&c, &error);
  else
    t = curves_extrapolation (&c, &error);

  if (t != NULL)
    {
      /* the command first, then the curve's own metadata */
      RpeCurveTable *u = t;
      RpeStatus      st = rpe_curve_table_set_meta (u, "command", command_line);
      int err = 0;

      if (st == RPE_OK)
        st = rpe_curve_table_set_meta (u, "curve", what);
      g_clear_error (&error);
      if (!rpe_output_check (co.out, &error))
        {
          fprintf (stderr, _("rpe curves %s: %s\n"), what, error->message);
          status = EXIT_FAILURE_OTHER;
        }
      else if (st != RPE_OK || (st = rpe_curve_table_write_csv (u, co.out, &err)) != RPE_OK)
        {
          fprintf (stderr, _("rpe curves %s: cannot write '%s': %s\n"), what, co.out,
                   err ? g_strerror (err) : rpe_status_to_string (st));
          status = EXIT_FAILURE_OTHER;
        }
    }
  else
    {
      fprintf (stderr, _("rpe curves %s: %s\n"), what, error ? error->message : "failed");
      status = c.exit_code != 0 ? c.exit_code : rpe_cli_exit_code_for_error (error);
    }

done:
  rpe_curve_table_free (t);
  rpe_cli_own_clear (curves_options, &co);
  rpe_cli_args_clear (&o);
  return status;
}

/* rpe-cli-fit.c: `rpe fit`, SPE fitted to another relative bias (issue 16, core/rpe-fit.h).
 *
 *   rpe fit --target alibi|t5|kerple-log|kerple-power|file|fastrpb [target options]
 *           --method sine|conv [--sines K | --kernel L] [--gated]
 *           --heads H --features D --length N -o FITTED.safetensors
 *           [--csv PROFILES.csv] [--sweep-size S1,S2,... [--sweep-csv SWEEP.csv]]
 *
 * The checkpoint holds the SPE authors' state_dict names, raw before their transforms:
 * spe.freqs|offsets|gains (H, D, K) or spe.conv_q.weight|conv_k.weight (H*D, 1, L) (the
 * query filter is conv_k.weight), and spe_filters.0.gate (H, D) when gated.  The error is
 * computed from the file's values as the checkpoint reader maps them back, so reading the
 * file gives the error printed.  The last stdout line is `relative error E`.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <glib/gi18n.h>

#include <glib.h>

#include "rpe-alloc.h"
#include "rpe-checkpoint.h"
#include "rpe-error.h"
#include "rpe-file.h"
#include "rpe-fit.h"
#include "rpe-npy.h"
#include "rpe-safetensors.h"
#include "rpe-tensor.h"

#include "rpe-cli.h"

#define EXIT_USAGE 2
#define EXIT_FAILURE_OTHER 1

/* the largest sizes a fit accepts (the LM is dense): far above any useful request */
#define MAX_LENGTH  (1 << 16)
#define MAX_HEADS   4096
#define MAX_FEAT    4096
#define MAX_SIZE    (1 << 16)

typedef struct
{
  char    *target;
  char    *method;
  int      heads;
  int      features;
  int      sines;
  int      kernel;
  gint64   length;
  gboolean gated;
  char    *out;
  char    *csv;
  char    *sweep;
  char    *sweep_csv;
  char    *alibi_slopes;
  char    *t5_bias;
  char    *t5_tensor;
  int      t5_buckets;
  int      t5_max_distance;
  gboolean t5_unidirectional;
  char    *kerple_r1;
  char    *kerple_r2;
  char    *target_file;
  char    *fastrpb;
  char    *fastrpb_tensor;
  int      max_iter;
} FitOptions;

static gboolean
bad (GError **error, const char *format, ...) G_GNUC_PRINTF (2, 3);

static gboolean
bad (GError **error, const char *format, ...)
{
  va_list ap;
  g_autofree char *msg = NULL;

  va_start (ap, format);
  msg = g_strdup_vprintf (format, ap);
  va_end (ap);
  return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, "%s", msg);
}

/* A comma-separated list of finite numbers (rpe-cli-parse.h) above `min` (or from it when not
 * min_open): one value (used for every head) or H values. */
static double *
parse_per_head (const char *text, const char *option, gsize heads, double min, gboolean min_open, GError **error)
{
  g_autoptr (GArray) list = NULL;
  double *v;

  /* at most 1e18: a larger slope or rate makes a bias past what the fit's float32 parameters hold
   * (rpe_fit_target_fault refuses such targets whatever their source) */
  if (!rpe_cli_parse_double_list (option, text, min, min_open, 1e18, (guint) MIN (heads, (gsize) G_MAXUINT), &list,
                                  error))
    return NULL;
  if (list->len != 1 && list->len != heads)
    {
      bad (error, "%s takes one value or one per head (%zu), got %u", option, (size_t) heads, list->len);
      return NULL;
    }
  v = g_new (double, heads);
  for (gsize i = 0; i < heads; i++)
    v[i] = g_array_index (list, double, list->len == 1 ? 0 : i);
  return v;
}

/* --sweep-size S1,S2,...: 1 .. 64 sizes in 1 .. MAX_SIZE. */
static GArray *
parse_sizes (const char *text, GError **error)
{
  g_autoptr (GArray) values = NULL;
  GArray *a;

  if (!rpe_cli_parse_int_list ("--sweep-size", text, 1, MAX_SIZE, 64, &values, error))
    return NULL;
  a = g_array_sized_new (FALSE, FALSE, sizeof (gsize), values->len);
  for (guint i = 0; i < values->len; i++)
    g_array_append_val (a, (gsize) { (gsize) g_array_index (values, gint64, i) });
  return a;
}

/* An array from .npy, or a tensor from a checkpoint (named, or the only candidate
 * whose name ends with `suffix`). */
static RpeTensor *
read_tensor (const char *path, const char *name, const char *suffix, const char *option, GError **error)
{
  g_autoptr (RpeTensorSet) set = NULL;
  const RpeTensor *t = NULL;
  RpeTensor *copy;

  if (g_str_has_suffix (path, ".npy"))
    {
      RpeTensor *a = rpe_cli_read_npy (path, error);
      if (a != NULL && !rpe_tensor_check_finite (a, error))
        {
          g_prefix_error (error, "%s: ", path);
          rpe_tensor_free (a);
          return NULL;
        }
      return a;
    }
  if ((set = rpe_cli_read_checkpoint (path, error)) == NULL)
    return NULL;
  if (name != NULL)
    {
      if ((t = rpe_tensor_set_lookup (set, name)) == NULL)
        {
          rpe_set_error (error, RPE_ERROR_NOT_FOUND, _("%s: no tensor named '%s' (see rpe info)"), path, name);
          return NULL;
        }
    }
  else
    {
      for (gsize i = 0; i < rpe_tensor_set_size (set); i++)
        {
          const RpeTensor *c = rpe_tensor_set_get (set, i);
          if (g_str_has_suffix (c->name, suffix))
            {
              if (t != NULL)
                {
                  rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                                 _("%s: several tensors end with '%s' ('%s', '%s'): say which with %s"),
                                 path, suffix, t->name, c->name, option);
                  return NULL;
                }
              t = c;
            }
        }
      if (t == NULL)
        {
          rpe_set_error (error, RPE_ERROR_NOT_FOUND, _("%s: no tensor ends with '%s': name it with %s"),
                         path, suffix, option);
          return NULL;
        }
    }
  if (!rpe_tensor_check_finite (t, error))
    return NULL;
  if ((copy = rpe_tensor_new (t->name, t->ndim, t->shape, error)) == NULL)
    return NULL;
  memcpy (copy->data, t->data, t->n_elements * sizeof (float));
  return copy;
}

/* Everything a fit holds at once, checked against the budget before the target is made: the
 * target and the fitted profiles ((H, 2N-1) doubles each) and the solver's work for the largest
 * size fitted (rpe_fit_work_bytes). */
static gboolean
check_fit_budget (const FitOptions *f,
                  RpeSpeMethod      method,
                  gsize             H,
                  gsize             D,
                  gsize             size,
                  gsize             n,
                  const GArray     *sweep,
                  GError          **error)
{
  gsize     largest = size, profiles, work = 0, total;
  RpeStatus st;

  for (guint i = 0; sweep != NULL && i < sweep->len; i++)
    largest = MAX (largest, g_array_index (sweep, gsize, i));
  {
    RpeFitConfig cfg = { method, H, D, largest, f->gated, 0 };

    st = rpe_fit_work_bytes (&cfg, n, &work);
  }
  if (st == RPE_OK)
    st = rpe_size_bytes (&profiles, sizeof (double), H, 2 * n - 1, 2, 1);
  if (st == RPE_OK && !rpe_size_add (profiles, work, &total))
    st = RPE_ERROR_OVERFLOW;
  if (st == RPE_OK && rpe_budget_check (total) == RPE_OK)
    return TRUE;
  {
    g_autofree char *need = st == RPE_OK ? g_format_size_full (total, G_FORMAT_SIZE_IEC_UNITS) : NULL;
    g_autofree char *budget = g_format_size_full (rpe_budget_get (), G_FORMAT_SIZE_IEC_UNITS);

    if (st != RPE_OK)
      return rpe_set_error (error, RPE_ERROR_OVERFLOW,
                            _("the fit is far too large (its size overflows); reduce --length, --heads, --features, "
                              "--sines or --kernel"));
    return rpe_set_error (error, RPE_ERROR_NO_MEMORY,
                          _("the fit needs %s (%zu bytes), over the memory budget of %s; nothing was computed "
                            "(reduce --length, --heads, --features, --sines, --kernel or --sweep-size)"),
                          need, (size_t) total, budget);
  }
}

/* Where the target came from, for a message: the file, or the options that made it. */
static char *
target_source (const FitOptions *f)
{
  if (g_str_equal (f->target, "file") && f->target_file != NULL)
    return g_strdup_printf (_("the target file %s"), f->target_file);
  if (g_str_equal (f->target, "fastrpb") && f->fastrpb != NULL)
    return g_strdup_printf (_("the FastRPB weights in %s"), f->fastrpb);
  if (g_str_equal (f->target, "t5") && f->t5_bias != NULL)
    return g_strdup_printf (_("the T5 bias in %s"), f->t5_bias);
  if (g_str_equal (f->target, "alibi"))
    return g_strdup (f->alibi_slopes != NULL ? _("the ALiBi target of --alibi-slopes") : _("the ALiBi target"));
  return g_strdup_printf (_("the %s target (--kerple-r1, --kerple-r2)"), f->target);
}

/* A target that cannot be fitted (rpe_fit_target_fault), refused naming where it came from and
 * what is wrong with it: all zero, constant, below float32's range, too large, not finite. */
static gboolean
check_target (const FitOptions *f, gsize H, gsize n, const double *target, GError **error)
{
  gsize             head, index;
  double            value;
  RpeFitTargetFault fault = rpe_fit_target_fault (H, n, target, &head, &index, &value);
  g_autofree char  *source = NULL;

  if (fault == RPE_FIT_TARGET_FINE)
    return TRUE;
  source = target_source (f);
  switch (fault)
    {
    case RPE_FIT_TARGET_NOT_FINITE:
      return rpe_set_error (error, RPE_ERROR_NOT_FINITE, _("%s holds %g at head %zu, lag index %zu"), source, value,
                            (size_t) head, (size_t) index);
    case RPE_FIT_TARGET_ZERO:
      return rpe_set_error (error, RPE_ERROR_DEGENERATE,
                            value == 0 ? _("%s is all zero: there is no bias to fit")
                                       : _("%s is zero or below float32's normal range everywhere (largest "
                                           "magnitude %g): there is no bias to fit"),
                            source, value);
    case RPE_FIT_TARGET_CONSTANT:
      return rpe_set_error (error, RPE_ERROR_DEGENERATE,
                            _("%s is constant in every head (%g at every lag): softmax ignores a constant bias, "
                              "so there is nothing to fit"),
                            source, value);
    case RPE_FIT_TARGET_TINY:
      return rpe_set_error (error, RPE_ERROR_DEGENERATE,
                            _("%s varies by at most %g, below float32's normal range: float32 parameters "
                              "cannot hold it"),
                            source, value);
    case RPE_FIT_TARGET_HUGE:
    default:
      return rpe_set_error (error, RPE_ERROR_RANGE,
                            _("%s varies by %g in head %zu, more than %g: the fitted parameters would "
                              "overflow float32"),
                            source, value, (size_t) head, RPE_FIT_MAX_DEVIATION);
    }
}

/* The target profiles (H, 2N-1). */
static double *
make_target (const FitOptions *f, gsize H, gsize n, GError **error)
{
  gsize len = 2 * n - 1;
  g_autofree double *out = NULL;
  RpeStatus st = RPE_OK;

  if (!rpe_size_mul (H, len, &len) || (out = rpe_alloc (H * (2 * n - 1), sizeof (double), &st)) == NULL)
    {
      rpe_cli_status_error (st != RPE_OK ? st : RPE_ERROR_OVERFLOW, "rpe fit", error);
      return NULL;
    }
  len = 2 * n - 1;

  if (g_str_equal (f->target, "alibi"))
    {
      g_autofree double *slopes = NULL;

      if (f->alibi_slopes != NULL
          && (slopes = parse_per_head (f->alibi_slopes, "--alibi-slopes", H, 0.0, TRUE, error)) == NULL)
        goto fail;
      st = rpe_fit_target_alibi (H, n, slopes, out);
    }
  else if (g_str_equal (f->target, "kerple-log") || g_str_equal (f->target, "kerple-power"))
    {
      gboolean power = g_str_equal (f->target, "kerple-power");
      g_autofree double *r1 =
        parse_per_head (f->kerple_r1 != NULL ? f->kerple_r1 : "1", "--kerple-r1", H, 0.0, TRUE, error);
      g_autofree double *r2 = r1 != NULL ? parse_per_head (f->kerple_r2 != NULL ? f->kerple_r2 : (power ? "0.5" : "1"),
                                                           "--kerple-r2", H, 0.0, TRUE, error)
                                         : NULL;

      if (r2 == NULL)
        goto fail;
      for (gsize h = 0; h < H; h++)
        if (!(r1[h] > 0) || !(r2[h] > 0) || (power && r2[h] > 2))
          {
            bad (error, "KERPLE needs r1 > 0 and r2 > 0%s (head %zu: r1 = %g, r2 = %g)",
                 power ? " with r2 <= 2 (a conditionally positive definite power)" : "", (size_t) h, r1[h], r2[h]);
            goto fail;
          }
      st = rpe_fit_target_kerple (H, n, power, r1, r2, out);
    }
  else if (g_str_equal (f->target, "t5"))
    {
      g_autoptr (RpeTensor) table = NULL;
      gsize nb = (gsize) f->t5_buckets, md = (gsize) f->t5_max_distance;
      gboolean bidi = !f->t5_unidirectional;
      gsize max_exact = (bidi ? nb / 2 : nb) / 2;

      if (f->t5_bias == NULL)
        {
          bad (error, "--target t5 needs --t5-bias (a (num_buckets, H) .npy, or a checkpoint with "
                      "relative_attention_bias.weight)");
          goto fail;
        }
      if (f->t5_buckets < (bidi ? 4 : 2) || f->t5_buckets > 1 << 16)
        {
          bad (error, "--t5-buckets must be between %d and 65536 (got %d)", bidi ? 4 : 2, f->t5_buckets);
          goto fail;
        }
      if (f->t5_max_distance < 1 || (gsize) f->t5_max_distance <= max_exact || f->t5_max_distance > 1 << 30)
        {
          bad (error, "--t5-max-distance must be larger than the exact range %zu (and at most 2^30; got %d)",
               (size_t) max_exact, f->t5_max_distance);
          goto fail;
        }
      if ((table = read_tensor (f->t5_bias, f->t5_tensor, "relative_attention_bias.weight", "--t5-tensor", error)) == NULL)
        goto fail;
      if (table->ndim != 2 || table->shape[0] != nb || table->shape[1] != H)
        {
          g_autofree char *shape = rpe_tensor_shape_string (table);
          bad (error, "%s: the T5 bias must have shape (num_buckets, H) = (%zu, %zu), got %s "
                      "(set --t5-buckets and --heads)", f->t5_bias, (size_t) nb, (size_t) H, shape);
          goto fail;
        }
      st = rpe_fit_target_t5 (H, n, table->data, nb, md, bidi, out);
    }
  else if (g_str_equal (f->target, "file") || g_str_equal (f->target, "fastrpb"))
    {
      gboolean is_file = g_str_equal (f->target, "file");
      const char *path = is_file ? f->target_file : f->fastrpb;
      g_autoptr (RpeTensor) w = NULL;
      gsize rows = 0, m = 0;

      if (path == NULL)
        {
          bad (error, is_file ? "--target file needs --target-file W.npy, shape (2N-1,) or (H, 2N-1)"
                              : "--target fastrpb needs --fastrpb FILE (weights (2M-1,) or (H, 2M-1) as .npy, "
                                "or a checkpoint with a PositionalBias 'bias.w')");
          goto fail;
        }
      if (is_file)
        w = rpe_cli_read_npy (path, error);
      else
        w = read_tensor (path, f->fastrpb_tensor, "bias.w", "--fastrpb-tensor", error);
      if (w == NULL)
        goto fail;
      if (!rpe_tensor_check_finite (w, error))
        {
          g_prefix_error (error, "%s: ", path);
          goto fail;
        }
      if (!is_file && w->ndim == 3 && w->shape[0] == 1 && w->shape[1] == H && g_str_has_suffix (w->name, "bias.w"))
        {
          /* PositionalBias (docs/math.md, section 8): (1, H, 2M-1) "full" with
           * W[m, n] = w[(m - n + M) mod (2M-1)], or (1, H, M) "symmetric" with w[|m - n|];
           * full if the last size is odd and > 1 ... both are odd-capable, so the shape
           * alone cannot tell (1, H, 2M-1) from (1, H, M') with M' = 2M-1: take full */
          gsize last = w->shape[2];
          g_autoptr (RpeTensor) c = NULL;
          gsize shape[2];

          if (last % 2 == 1)
            {
              m = (last + 1) / 2;
              shape[0] = H;
              shape[1] = last;
              if ((c = rpe_tensor_new ("centred", 2, shape, error)) == NULL)
                goto fail;
              /* tau = i - (M-1) sits at (tau + M) mod (2M-1) */
              for (gsize h = 0; h < H; h++)
                for (gsize i = 0; i < last; i++)
                  c->data[h * last + i] = w->data[h * last + (i + 1) % last];
            }
          else
            {
              bad (error, "%s: '%s' has shape (1, %zu, %zu): an even last size is the symmetric layout, "
                          "which this fit does not read (give a centred (H, 2M-1) .npy)", path, w->name,
                   (size_t) H, (size_t) last);
              goto fail;
            }
          g_clear_pointer (&w, rpe_tensor_free);
          w = g_steal_pointer (&c);
        }
      if (w->ndim == 1 && w->shape[0] % 2 == 1)
        rows = 1, m = (w->shape[0] + 1) / 2;
      else if (w->ndim == 2 && w->shape[0] == H && w->shape[1] % 2 == 1)
        rows = H, m = (w->shape[1] + 1) / 2;
      else
        {
          g_autofree char *shape = rpe_tensor_shape_string (w);
          bad (error, "%s: the target must have shape (2M-1,) or (H, 2M-1) = (%zu, 2M-1), got %s",
               path, (size_t) H, shape);
          goto fail;
        }
      if (is_file && m != n)
        {
          bad (error, "%s: %zu lags is length %zu, but --length is %zu (a file target has 2N-1 lags)",
               path, (size_t) (2 * m - 1), (size_t) m, (size_t) n);
          goto fail;
        }
      if (m < n)
        {
          bad (error, "%s: the weights cover |tau| < %zu, shorter than --length %zu", path, (size_t) m, (size_t) n);
          goto fail;
        }
      st = rpe_fit_target_centred (H, n, w->data, rows, m, out);
    }
  else
    {
      bad (error, "--target must be alibi, t5, kerple-log, kerple-power, file or fastrpb (got '%s')", f->target);
      goto fail;
    }
  if (st != RPE_OK)
    {
      rpe_cli_status_error (st, "target", error);
      goto fail;
    }
  if (!check_target (f, H, n, out, error))
    goto fail;
  return g_steal_pointer (&out);
fail:
  return NULL;
}

/* The checkpoint's tensors, raw as the reference stores them. */
static RpeTensorSet *
raw_set (const RpeSpeParams *p, GError **error)
{
  g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
  gsize H = p->n_heads, D = p->n_features;

  if (p->method == RPE_SPE_SINE)
    {
      gsize shape[3] = { H, D, p->n_sines };
      const char *names[3] = { "spe.freqs", "spe.offsets", "spe.gains" };

      for (int s = 0; s < 3; s++)
        {
          RpeTensor *t = rpe_tensor_new (names[s], 3, shape, error);
          if (t == NULL)
            return NULL;
          for (gsize i = 0; i < t->n_elements; i++)
            t->data[i] = (float) (s == 0 ? rpe_fit_raw_freq (p->freqs[i])
                                  : s == 1 ? p->offsets[i] : rpe_fit_raw_gain (p->gains[i]));
          if (!rpe_tensor_set_add (set, t, error))
            return NULL;
        }
    }
  else
    {
      gsize shape[3] = { H * D, 1, p->kernel };
      /* the reference swaps the names: conv_k.weight is the query filter */
      RpeTensor *q = rpe_tensor_new ("spe.conv_q.weight", 3, shape, error);
      RpeTensor *k = q != NULL ? rpe_tensor_new ("spe.conv_k.weight", 3, shape, error) : NULL;

      if (k == NULL)
        {
          rpe_tensor_free (q);
          return NULL;
        }
      memcpy (q->data, p->wk, q->n_elements * sizeof (float));
      memcpy (k->data, p->wq, k->n_elements * sizeof (float));
      if (!rpe_tensor_set_add (set, q, error) || !rpe_tensor_set_add (set, k, error))
        return NULL;
    }
  if (p->gate != NULL)
    {
      gsize shape[2] = { H, D };
      RpeTensor *g = rpe_tensor_new ("spe_filters.0.gate", 2, shape, error);

      if (g == NULL)
        return NULL;
      for (gsize i = 0; i < g->n_elements; i++)
        g->data[i] = (float) rpe_fit_raw_gate (p->gate[i]);
      if (!rpe_tensor_set_add (set, g, error))
        return NULL;
    }
  return g_steal_pointer (&set);
}

/* One fit: params -> raw tensors -> params as the checkpoint reader maps them -> error. */
static gboolean
fit_once (const FitOptions *f, RpeSpeMethod method, gsize H, gsize D, gsize size, gsize n,
          const double *target, double *profile, RpeTensorSet **set_out, double *err, GError **error)
{
  RpeFitConfig cfg = { method, H, D, size, f->gated, f->max_iter > 0 ? (size_t) f->max_iter : 0 };
  RpeSpeParams fitted = { 0 }, back = { 0 };
  g_autoptr (RpeTensorSet) set = NULL;
  RpeStatus st;

  if ((st = rpe_fit_spe (&cfg, n, target, &fitted, NULL)) != RPE_OK)
    return rpe_cli_status_error (st, "fit", error);
  set = raw_set (&fitted, error);
  rpe_spe_params_clear (&fitted);
  if (set == NULL)
    return FALSE;
  if (!rpe_checkpoint_load_spe (set, NULL, -1, &back, error))
    {
      g_prefix_error (error, _("the fitted checkpoint does not read back: "));
      return FALSE;
    }
  if (back.n_heads * back.n_features != H * D)
    {
      rpe_spe_params_clear (&back);
      return rpe_set_error (error, RPE_ERROR_INTERNAL, _("the fitted checkpoint reads back with other sizes"));
    }
  /* an ungated conv checkpoint stores (H*D, 1, L) and does not say H (readers take H = 1):
   * channel c = h*D + d either way, so view it with the fit's H and D */
  back.n_heads = H;
  back.n_features = D;
  st = rpe_fit_profile (&back, n, f->gated, profile);
  rpe_spe_params_clear (&back);
  if (st != RPE_OK)
    return rpe_cli_status_error (st, "fit profile", error);
  *err = rpe_fit_relative_error (H, n, target, profile);
  if (set_out != NULL)
    *set_out = g_steal_pointer (&set);
  return TRUE;
}

static gboolean
write_csv (const char *path, gsize H, gsize n, const double *target, const double *fit, GError **error)
{
  GString *s = g_string_new ("# target b_h(tau) and fit l_h(tau) + (mean b_h - mean l_h) (the per-head constant)\ntau");
  gsize len = 2 * n - 1;
  gboolean ok;
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  for (gsize h = 0; h < H; h++)
    g_string_append_printf (s, ",target_h%zu,fit_h%zu", (size_t) h, (size_t) h);
  g_string_append_c (s, '\n');
  for (gsize i = 0; i < len; i++)
    {
      g_string_append_printf (s, "%ld", (long) i - (long) (n - 1));
      for (gsize h = 0; h < H; h++)
        {
          const double *b = target + h * len, *l = fit + h * len;
          double mb = 0, ml = 0;

          for (gsize j = 0; j < len; j++)
            {
              mb += b[j];
              ml += l[j];
            }
          g_string_append_c (s, ',');
          g_string_append (s, g_ascii_formatd (buf, sizeof buf, "%.9g", b[i]));
          g_string_append_c (s, ',');
          g_string_append (s, g_ascii_formatd (buf, sizeof buf, "%.9g", l[i] + (mb - ml) / (double) len));
        }
      g_string_append_c (s, '\n');
    }
  ok = rpe_atomic_file_set_contents (path, s->str, s->len, error);
  g_string_free (s, TRUE);
  return ok;
}

#define F(field) G_STRUCT_OFFSET (FitOptions, field)

/* clang-format off */
static const RpeCliOption fit_options[] = {
  RPE_CLI_STRING ("target", F (target), 0, N_("The bias to fit"), "alibi|t5|kerple-log|kerple-power|file|fastrpb"),
  RPE_CLI_STRING ("method", F (method), 0, N_("SPE variant (default sine)"), "sine|conv"),
  RPE_CLI_INT ("sines", F (sines), 0, 1, MAX_SIZE, N_("Sines K per feature (default 4)"), "K"),
  RPE_CLI_INT ("kernel", F (kernel), 0, 1, MAX_SIZE, N_("Filter length L (default 32)"), "L"),
  RPE_CLI_FLAG ("gated", F (gated), 0, N_("Write a gate too (spe_filters.0.gate)")),
  RPE_CLI_INT ("heads", F (heads), 0, 1, MAX_HEADS, N_("Heads H (default 8)"), "H"),
  RPE_CLI_INT ("features", F (features), 0, 1, MAX_FEAT, N_("Features per head D (default 8)"), "D"),
  RPE_CLI_INT64 ("length", F (length), 0, 2, MAX_LENGTH,
                 N_("Fit over |tau| < N (default 128; a file target: its N)"), "N"),
  { .name = "output", .short_name = 'o', .arg = RPE_CLI_ARG_FILE, .offset = F (out),
    .help = N_("The fitted checkpoint"), .arg_name = "FITTED.safetensors" },
  RPE_CLI_FILE ("csv", F (csv), 0, N_("Target and fit profiles per head"), "PROFILES.csv"),
  RPE_CLI_STRING ("sweep-size", F (sweep), 0,
                  N_("Also fit these K (sine) or L (conv) and print the error of each"), "S1,S2,..."),
  RPE_CLI_FILE ("sweep-csv", F (sweep_csv), 0, N_("Write the sweep as CSV (size,relative_error)"), "SWEEP.csv"),
  RPE_CLI_STRING ("alibi-slopes", F (alibi_slopes), 0,
                  N_("alibi: slopes > 0 (one, or one per head; default 2^(-8(h+1)/H))"), "S1,S2,..."),
  RPE_CLI_FILE ("t5-bias", F (t5_bias), 0, N_("t5: the (num_buckets, H) bias, .npy or a checkpoint"), "FILE"),
  RPE_CLI_STRING ("t5-tensor", F (t5_tensor), 0,
                  N_("t5: the tensor's name in the checkpoint (default: the one ending in relative_attention_bias.weight)"),
                  "NAME"),
  RPE_CLI_INT ("t5-buckets", F (t5_buckets), 0, 2, 1 << 16, N_("t5: num_buckets (default 32)"), "B"),
  RPE_CLI_INT ("t5-max-distance", F (t5_max_distance), 0, 1, 1 << 30, N_("t5: max_distance (default 128)"), "M"),
  RPE_CLI_FLAG ("t5-unidirectional", F (t5_unidirectional), 0, N_("t5: decoder bucketing (bidirectional=False)")),
  RPE_CLI_STRING ("kerple-r1", F (kerple_r1), 0, N_("kerple: r1 > 0 (one, or one per head; default 1)"), "R1"),
  RPE_CLI_STRING ("kerple-r2", F (kerple_r2), 0,
                  N_("kerple: r2 > 0 (power: <= 2; default 1 for log, 0.5 for power)"), "R2"),
  RPE_CLI_FILE ("target-file", F (target_file), 0,
                N_("file: a (2N-1,) or (H, 2N-1) .npy, index i for tau = i - (N-1)"), "W.npy"),
  RPE_CLI_FILE ("fastrpb", F (fastrpb), 0,
                N_("fastrpb: centred weights (2M-1,) or (H, 2M-1) .npy, or a checkpoint with PositionalBias bias.w (1, H, 2M-1)"),
                "FILE"),
  RPE_CLI_STRING ("fastrpb-tensor", F (fastrpb_tensor), 0, N_("fastrpb: the tensor's name in the checkpoint"), "NAME"),
  RPE_CLI_INT ("max-iter", F (max_iter), 0, 1, 100000, N_("Levenberg-Marquardt / ALS iterations (default 40)"), "I"),
  { NULL }
};
/* clang-format on */

static const RpeCliLeaf fit_leaves[] = {
  { NULL, N_("Fit SPE to another relative bias (ALiBi, T5, KERPLE, a file, FastRPB)"),
    N_("Fits, per head, the unit-content SPE logit profile l_h(tau) = sum_d Ptilde_hd(tau) / sqrt(D)\n"
       "to a target bias b_h(tau) over |tau| < N, up to a per-head constant, and writes a checkpoint\n"
       "with the SPE authors' state_dict names.  The last line printed is 'relative error E', the\n"
       "relative Frobenius error of the mean-removed profiles.\n"
       "Targets: alibi (-slope_h |tau|), t5 (bucketed bias), kerple-log (-r1 log(1 + r2 |tau|)),\n"
       "kerple-power (-r1 |tau|^r2), file, fastrpb."),
    "fit --target alibi --heads 4 --features 8 --length 64 -o fitted.safetensors", RPE_CLI_TAKES_FORCE, 0, NULL, NULL,
    NULL, NULL },
};

const RpeCliCommand rpe_cli_fit_command = {
  .name = "fit",
  .summary = N_("Fit SPE to another relative bias (ALiBi, T5, KERPLE, a file, FastRPB)"),
  .options = fit_options,
  .leaves = fit_leaves,
  .n_leaves = G_N_ELEMENTS (fit_leaves),
  .run = rpe_cli_fit,
};

int
rpe_cli_fit (int argc, char **argv)
{
  FitOptions f = { 0 };
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) sweep = NULL;
  g_autoptr (RpeTensorSet) set = NULL;
  g_autofree double *target = NULL;
  g_autofree double *profile = NULL;
  RpeSpeMethod method = RPE_SPE_SINE;
  gsize H, D, n, size;
  double err = 0;
  int status = 0;
  GString *sweep_text = NULL;

  f.sines = 4;
  f.kernel = 32;
  f.heads = 8;
  f.features = 8;
  f.length = RPE_CLI_UNSET;
  f.t5_buckets = 32;
  f.t5_max_distance = 128;
  if (!rpe_cli_parse (&rpe_cli_fit_command, &rpe_cli_fit_command.leaves[0], NULL, NULL, &f, &argc, &argv, &status))
    goto done;
  status = 0;
  if (argc != 1)
    {
      fprintf (stderr, _("rpe fit: unexpected argument '%s'\n"), argv[1]);
      status = EXIT_USAGE;
      goto done;
    }
  if (f.target == NULL || f.out == NULL)
    {
      fprintf (stderr, _("rpe fit: %s is required\n"), f.target == NULL ? "--target" : "-o FITTED.safetensors");
      status = EXIT_USAGE;
      goto done;
    }
  if (f.method != NULL && !g_str_equal (f.method, "sine") && !g_str_equal (f.method, "conv"))
    {
      fprintf (stderr, _("rpe fit: --method must be sine or conv (got '%s')\n"), f.method);
      status = EXIT_USAGE;
      goto done;
    }
  method = f.method != NULL && g_str_equal (f.method, "conv") ? RPE_SPE_CONV : RPE_SPE_SINE;
  /* every output is checked before any work: not an input, not a directory, writable */
  {
    const char *outs[] = { f.out, f.csv, f.sweep_csv };

    for (gsize i = 0; i < G_N_ELEMENTS (outs); i++)
      if (outs[i] != NULL && !rpe_output_check (outs[i], &error))
        {
          fprintf (stderr, _("rpe fit: %s\n"), error->message);
          status = rpe_cli_exit_code_for_error (error);
          goto done;
        }
  }
  if (f.heads < 1 || f.heads > MAX_HEADS || f.features < 1 || f.features > MAX_FEAT
      || f.sines < 1 || f.sines > MAX_SIZE || f.kernel < 1 || f.kernel > MAX_SIZE || f.max_iter < 0
      || f.max_iter > 100000)
    {
      fprintf (stderr, _("rpe fit: --heads 1..%d, --features 1..%d, --sines and --kernel 1..%d, --max-iter 0..100000\n"),
               MAX_HEADS, MAX_FEAT, MAX_SIZE);
      status = EXIT_USAGE;
      goto done;
    }
  if (f.length == RPE_CLI_UNSET && g_str_equal (f.target, "file") && f.target_file != NULL)
    {
      /* N from the file */
      g_autoptr (RpeTensor) w = rpe_cli_read_npy (f.target_file, &error);
      if (w == NULL)
        {
          fprintf (stderr, _("rpe fit: %s\n"), error->message);
          status = EXIT_USAGE;
          goto done;
        }
      f.length = (gint64) ((w->shape[w->ndim - 1] + 1) / 2);
      /* the file decides N: a profile too short (or too long) is the file's fault, not --length's */
      if (f.length < 2 || f.length > MAX_LENGTH)
        {
          fprintf (stderr,
                   _("rpe fit: %s: a profile of %zu values; a target needs 2N-1 of them with N from 2 to %d "
                     "(3 to %d values)\n"),
                   f.target_file, (size_t) w->shape[w->ndim - 1], MAX_LENGTH, 2 * MAX_LENGTH - 1);
          status = EXIT_USAGE;
          goto done;
        }
    }
  if (f.length == RPE_CLI_UNSET)
    f.length = 128;
  if (f.length < 2 || f.length > MAX_LENGTH)
    {
      fprintf (stderr, _("rpe fit: --length must be between 2 and %d (got %lld)\n"), MAX_LENGTH, (long long) f.length);
      status = EXIT_USAGE;
      goto done;
    }
  H = (gsize) f.heads;
  D = (gsize) f.features;
  n = (gsize) f.length;
  size = method == RPE_SPE_SINE ? (gsize) f.sines : (gsize) f.kernel;
  if (f.sweep != NULL && (sweep = parse_sizes (f.sweep, &error)) == NULL)
    {
      fprintf (stderr, _("rpe fit: %s\n"), error->message);
      status = EXIT_USAGE;
      goto done;
    }
  if (!check_fit_budget (&f, method, H, D, size, n, sweep, &error))
    {
      fprintf (stderr, _("rpe fit: %s\n"), error->message);
      status = rpe_cli_exit_code_for_error (error);
      goto done;
    }
  if ((target = make_target (&f, H, n, &error)) == NULL)
    {
      fprintf (stderr, _("rpe fit: %s\n"), error->message);
      status = rpe_cli_exit_code_for_error (error);
      goto done;
    }
  profile = g_new (double, H * (2 * n - 1));

  if (sweep != NULL)
    {
      sweep_text = g_string_new ("size,relative_error\n");
      for (guint i = 0; i < sweep->len; i++)
        {
          gsize s = g_array_index (sweep, gsize, i);
          char buf[G_ASCII_DTOSTR_BUF_SIZE];

          if (!fit_once (&f, method, H, D, s, n, target, profile, s == size && set == NULL ? &set : NULL, &err, &error))
            {
              fprintf (stderr, _("rpe fit: %s\n"), error->message);
              status = rpe_cli_exit_code_for_error (error);
              goto done;
            }
          printf ("%s %zu relative error %.6g\n", method == RPE_SPE_SINE ? "K" : "L", (size_t) s, err);
          g_string_append_printf (sweep_text, "%zu,%s\n", (size_t) s,
                                  g_ascii_formatd (buf, sizeof buf, "%.9g", err));
        }
      if (f.sweep_csv != NULL && !rpe_atomic_file_set_contents (f.sweep_csv, sweep_text->str, sweep_text->len, &error))
        {
          fprintf (stderr, _("rpe fit: %s\n"), error->message);
          status = EXIT_FAILURE_OTHER;
          goto done;
        }
    }

  /* the requested size, unless the sweep fitted it already (then its profile is redone from
   * the same parameters for the CSV) */
  if (set != NULL)
    {
      RpeSpeParams back = { 0 };
      RpeStatus st;

      if (!rpe_checkpoint_load_spe (set, NULL, -1, &back, &error))
        {
          fprintf (stderr, _("rpe fit: %s\n"), error->message);
          status = EXIT_FAILURE_OTHER;
          goto done;
        }
      back.n_heads = H;
      back.n_features = D;
      st = rpe_fit_profile (&back, n, f.gated, profile);
      rpe_spe_params_clear (&back);
      if (!rpe_cli_status_error (st, "fit profile", &error))
        {
          fprintf (stderr, _("rpe fit: %s\n"), error->message);
          status = EXIT_FAILURE_OTHER;
          goto done;
        }
      err = rpe_fit_relative_error (H, n, target, profile);
    }
  else if (!fit_once (&f, method, H, D, size, n, target, profile, &set, &err, &error))
    {
      fprintf (stderr, _("rpe fit: %s\n"), error->message);
      status = rpe_cli_exit_code_for_error (error);
      goto done;
    }
  if (!rpe_safetensors_write (f.out, set, &error))
    {
      fprintf (stderr, _("rpe fit: %s\n"), error->message);
      status = EXIT_FAILURE_OTHER;
      goto done;
    }
  if (f.csv != NULL && !write_csv (f.csv, H, n, target, profile, &error))
    {
      fprintf (stderr, _("rpe fit: %s\n"), error->message);
      status = EXIT_FAILURE_OTHER;
      goto done;
    }
  printf ("fitted %s SPE (H = %zu, D = %zu, %s = %zu) to %s over |tau| < %zu: %s\n",
          method == RPE_SPE_SINE ? "sine" : "conv", (size_t) H, (size_t) D,
          method == RPE_SPE_SINE ? "K" : "L", (size_t) size, f.target, (size_t) n, f.out);
  printf ("relative error %.9g\n", err);

done:
  if (sweep_text != NULL)
    g_string_free (sweep_text, TRUE);
  rpe_cli_own_clear (fit_options, &f);
  return status;
}

/* test-demos.c: the trained demo checkpoints shipped in the GResource (tools/train-demos.py).
 *
 * Each demo loads, holds its metadata (task, N_train, steps, accuracies in [0, 1]) and only finite
 * parameters; the SPE demos are recognised with a gate per layer, and their gated template equals
 * (1 - g) P + g computed here from the raw stored tensors (docs/math.md, sections 1-3, as-coded transforms); the
 * learned APE demo's extrapolation curve breaks beyond N_train while the exact SPE demo's template
 * is stationary (translation invariant at every position).
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gstdio.h>

#include "rpe-checkpoint-ape.h"
#include "rpe-checkpoint.h"
#include "rpe-demos.h"
#include "rpe-spe.h"
#include "rpe-test-utils.h"

static const char *const expected[] = { "ape", "conv-spe", "fastrpb", "lrpe", "sine-spe", NULL };

static double
sigmoid (double x)
{
  return 1.0 / (1.0 + exp (-x));
}

static double
softplus (double x)
{
  return x > 30.0 ? x : log1p (exp (x));
}

static const RpeTensor *
tensor (const RpeTensorSet *set,
        const char         *name)
{
  const RpeTensor *t = rpe_tensor_set_lookup (set, name);

  g_assert_nonnull (t);
  return t;
}

static void
test_list (void)
{
  g_auto (GStrv) names = rpe_demos_list ();
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) none = NULL;

  g_assert_cmpstrv (names, expected);
  none = rpe_demos_lookup ("demo:no-such", &error);
  g_assert_null (none);
  g_assert_nonnull (strstr (error->message, "sine-spe"));
  g_clear_error (&error);
  g_assert_null (rpe_demos_lookup ("demo:../demo/demo", &error));
  g_assert_nonnull (error);
}

static void
test_metadata_and_finite (void)
{
  for (guint i = 0; expected[i] != NULL; i++)
    {
      g_autofree char *spec = g_strconcat ("demo:", expected[i], NULL);
      g_autoptr (GError) error = NULL;
      g_autoptr (RpeTensorSet) set = rpe_demos_read (spec, &error);
      g_autoptr (GHashTable) meta = rpe_demos_metadata (spec, &error);
      const char *keys[] = { "task", "n_train", "steps", "accuracy_n_train", "accuracy_4n_train", "encoding" };
      double acc1, acc4;

      g_assert_no_error (error);
      g_assert_nonnull (set);
      g_assert_nonnull (meta);
      for (guint k = 0; k < G_N_ELEMENTS (keys); k++)
        g_assert_nonnull (g_hash_table_lookup (meta, keys[k]));
      g_assert_cmpstr (g_hash_table_lookup (meta, "name"), ==, expected[i]);
      g_assert_cmpstr (g_hash_table_lookup (meta, "n_train"), ==, "64");
      g_assert_cmpint (g_ascii_strtoll (g_hash_table_lookup (meta, "steps"), NULL, 10), >, 0);
      acc1 = g_ascii_strtod (g_hash_table_lookup (meta, "accuracy_n_train"), NULL);
      acc4 = g_ascii_strtod (g_hash_table_lookup (meta, "accuracy_4n_train"), NULL);
      g_assert_cmpfloat (acc1, >=, 0.0);
      g_assert_cmpfloat (acc1, <=, 1.0);
      g_assert_cmpfloat (acc4, >=, 0.0);
      g_assert_cmpfloat (acc4, <=, 1.0);
      g_test_message ("%s: %zu tensors, accuracy %.3f at N_train, %.3f at 4 N_train (%s)", spec,
                      (size_t) rpe_tensor_set_size (set), acc1, acc4,
                      (const char *) g_hash_table_lookup (meta, "encoding"));
      for (gsize t = 0; t < rpe_tensor_set_size (set); t++)
        {
          g_assert_true (rpe_tensor_check_finite (rpe_tensor_set_get (set, t), &error));
          g_assert_no_error (error);
        }
    }
}

/* The gated template of layer `layer` from the raw stored tensors (docs/math.md, sections 1-3), in double. */
static double
template_ref (const RpeTensorSet *set,
              gboolean            sine,
              int                 layer,
              gsize               h,
              gsize               d,
              long                tau)
{
  g_autofree char *gname = g_strdup_printf ("spe_filters.%d.gate", layer);
  const RpeTensor *gate = tensor (set, gname);
  gsize D = gate->shape[1];
  double g = sigmoid (gate->data[h * D + d]), p = 0.0;

  if (sine)
    {
      const RpeTensor *fr = tensor (set, "spe.freqs"), *of = tensor (set, "spe.offsets"), *ga = tensor (set, "spe.gains");
      gsize K = fr->shape[2], base = (h * D + d) * K;

      for (gsize k = 0; k < K; k++)
        {
          double f = sigmoid (fr->data[base + k]) / 2.0, lambda = softplus (ga->data[base + k]);

          p += lambda * lambda * cos (2.0 * G_PI * f * (double) tau + of->data[base + k]);
        }
      p /= 2.0 * K;
    }
  else
    {
      /* the query filter is conv_k.weight, the key filter conv_q.weight */
      const RpeTensor *wq = tensor (set, "spe.conv_k.weight"), *wk = tensor (set, "spe.conv_q.weight");
      gsize L = wq->shape[2], c = h * D + d;

      for (long j = 0; j < (long) L; j++)
        if (j + tau >= 0 && j + tau < (long) L)
          p += (double) wq->data[c * L + j] * wk->data[c * L + j + tau];
    }
  return (1.0 - g) * p + g;
}

static void
check_spe_demo (const char *name,
                gboolean    sine)
{
  g_autofree char *spec = g_strconcat ("demo:", name, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeTensorSet) set = rpe_demos_read (spec, &error);
  g_autoptr (GPtrArray) modules = NULL;
  const RpeSpeModuleInfo *info;
  const gsize n = 24;

  g_assert_no_error (error);
  modules = rpe_checkpoint_find_modules (set);
  g_assert_cmpuint (modules->len, ==, 1);
  info = g_ptr_array_index (modules, 0);
  g_assert_true (info->method == (sine ? RPE_SPE_SINE : RPE_SPE_CONV));
  g_assert_cmpuint (info->n_heads, ==, 4);
  g_assert_cmpuint (info->n_features, ==, 16);
  g_assert_cmpuint (info->layers->len, ==, 2);
  for (int layer = 0; layer < 2; layer++)
    {
      RpeSpeParams p = { 0 };
      double worst = 0.0;
      float *out;

      g_assert_true (rpe_checkpoint_load_spe (set, NULL, layer, &p, &error));
      g_assert_no_error (error);
      g_assert_nonnull (p.gate);
      out = g_new (float, n * n);
      for (gsize h = 0; h < p.n_heads; h++)
        for (gsize d = 0; d < p.n_features; d += 5)
          {
            g_assert_cmpint (rpe_spe_template (&p, h, d, n, TRUE, out), ==, RPE_OK);
            for (gsize m = 0; m < n; m++)
              for (gsize k = 0; k < n; k++)
                {
                  double ref = template_ref (set, sine, layer, h, d, (long) m - (long) k);

                  worst = MAX (worst, fabs (out[m * n + k] - ref) / MAX (1.0, fabs (ref)));
                }
          }
      g_test_message ("%s layer %d: gated template vs raw-tensor reference, max error %.2e", name, layer, worst);
      g_assert_cmpfloat (worst, <, 1e-5);
      g_free (out);
      rpe_spe_params_clear (&p);
    }
}

static void
test_spe_demos (void)
{
  check_spe_demo ("sine-spe", TRUE);
  check_spe_demo ("conv-spe", FALSE);
}

static void
test_other_demos (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeTensorSet) ape = rpe_demos_read ("demo:ape", &error);
  g_autoptr (RpeTensorSet) fastrpb = rpe_demos_read ("demo:fastrpb", &error);
  const RpeTensor *t;

  g_assert_no_error (error);
  t = rpe_checkpoint_find_learned_ape (ape, 4, 16, &error);
  g_assert_no_error (error);
  g_assert_nonnull (t);
  g_assert_cmpuint (t->shape[0], ==, 64);
  g_assert_cmpuint (t->shape[1], ==, 64);
  /* the wrong (H, D) is refused with the shape in the message */
  g_assert_null (rpe_checkpoint_find_learned_ape (ape, 3, 16, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);
  /* FastRPB: the reference's full layout (1, H, 2M - 1) per layer, M = 256 */
  t = tensor (fastrpb, "layers.0.positional_bias.bias.w");
  g_assert_cmpuint (t->ndim, ==, 3);
  g_assert_cmpuint (t->shape[0], ==, 1);
  g_assert_cmpuint (t->shape[1], ==, 4);
  g_assert_cmpuint (t->shape[2], ==, 2 * 256 - 1);
  g_assert_null (rpe_checkpoint_find_learned_ape (fastrpb, 4, 16, &error));
  g_assert_no_error (error);
}

/* ---- the extrapolation curves through `rpe curves` ---- */

typedef struct
{
  GArray *m;
  GArray *ti;
} Curve;

static void
read_curve (const char *path,
            const char *column,
            Curve      *curve)
{
  g_autofree char *text = NULL;
  g_auto (GStrv) lines = NULL;
  int col = -1;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  lines = g_strsplit (text, "\n", -1);
  curve->m = g_array_new (FALSE, FALSE, sizeof (double));
  curve->ti = g_array_new (FALSE, FALSE, sizeof (double));
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto (GStrv) cells = NULL;

      if (lines[i][0] == '#' || lines[i][0] == '\0')
        continue;
      cells = g_strsplit (lines[i], ",", -1);
      if (col < 0)
        {
          for (int c = 0; cells[c] != NULL; c++)
            if (g_str_equal (cells[c], column))
              col = c;
          g_assert_cmpint (col, >=, 0);
          continue;
        }
      {
        double m = g_ascii_strtod (cells[0], NULL), v = g_ascii_strtod (cells[col], NULL);

        g_array_append_val (curve->m, m);
        g_array_append_val (curve->ti, v);
      }
    }
}

static void
run_curves (const char *checkpoint,
            const char *models,
            const char *out)
{
  const char *args[] = { "curves", "extrapolation", "--checkpoint", checkpoint, "--models", models,
                         "--train-length", "64", "--max-length", "256", "-o", out, NULL };
  g_autofree char *err = NULL;

  if (rpe_test_run_cli_argv (args, NULL, &err) != 0)
    g_error ("rpe curves failed: %s", err);
}

static void
range_mean (const Curve *c,
            double       lo,
            double       hi,
            double      *mean)
{
  double s = 0.0;
  guint count = 0;

  for (guint i = 0; i < c->m->len; i++)
    {
      double m = g_array_index (c->m, double, i);

      if (m >= lo && m < hi && isfinite (g_array_index (c->ti, double, i)))
        {
          s += g_array_index (c->ti, double, i);
          count++;
        }
    }
  g_assert_cmpuint (count, >, 0);
  *mean = s / count;
}

static void
test_extrapolation_break (void)
{
  g_autofree char *dir = g_build_filename (rpe_test_tmpdir (), "demos", NULL);
  g_autofree char *ape_csv = g_build_filename (dir, "ape.csv", NULL);
  g_autofree char *sine_csv = g_build_filename (dir, "sine.csv", NULL);
  Curve ape = { 0 }, sine = { 0 };
  double ape_before, ape_after, sine_before, sine_after;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  run_curves ("demo:ape", "ape", ape_csv);
  run_curves ("demo:sine-spe", "sine-gated", sine_csv);
  read_curve (ape_csv, "ape_ti", &ape);
  read_curve (sine_csv, "sine_gated_ti", &sine);
  /* the learned APE holds nothing beyond N_train = 64: its attention there is another function of
   * position than before (translation invariance measured against the training rows' profile) */
  range_mean (&ape, 8, 56, &ape_before);
  range_mean (&ape, 72, 256, &ape_after);
  range_mean (&sine, 8, 56, &sine_before);
  range_mean (&sine, 72, 256, &sine_after);
  g_test_message ("translation invariance (lower is better), before -> beyond N_train: "
                  "learned APE %.4f -> %.4f, sine SPE (exact, gated) %.2e -> %.2e",
                  ape_before, ape_after, sine_before, sine_after);
  /* exact SPE templates are stationary: at float rounding everywhere */
  g_assert_cmpfloat (sine_before, <, 1e-4);
  g_assert_cmpfloat (sine_after, <, 1e-4);
  /* APE: position-dependent before, and different again beyond */
  g_assert_cmpfloat (ape_before, >, 100 * sine_before + 1e-3);
  g_assert_cmpfloat (fabs (ape_after - ape_before), >, 0.05 * ape_before);
  g_array_unref (ape.m);
  g_array_unref (ape.ti);
  g_array_unref (sine.m);
  g_array_unref (sine.ti);
  g_unlink (ape_csv);
  g_unlink (sine_csv);
  g_rmdir (dir);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/demos/list", test_list);
  g_test_add_func ("/demos/metadata-finite", test_metadata_and_finite);
  g_test_add_func ("/demos/spe-templates", test_spe_demos);
  g_test_add_func ("/demos/ape-fastrpb", test_other_demos);
  g_test_add_func ("/demos/extrapolation-break", test_extrapolation_break);

  return g_test_run ();
}

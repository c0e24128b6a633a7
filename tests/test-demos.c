/* test-demos.c: the trained demo checkpoints shipped in the GResource (tools/train-demos.py).
 *
 * Each demo loads, holds its metadata (task, N_train, steps, accuracies in [0, 1]) and only finite
 * parameters; the SPE demos are recognised with a gate per layer, and their gated template equals
 * (1 - g) P + g computed here from the raw stored tensors (docs/math.md, sections 1-3, as-coded transforms); the
 * learned APE demo's extrapolation curve breaks beyond N_train while the exact SPE demo's template
 * is stationary (translation invariant at every position); every demo reached accuracy >= 0.95 at
 * N_train, ships a capture of one task input at 4 N_train, and works in each command the docs
 * name for it (the exact logits of the SPE demos on their captures, the LRPE demo's trained theta,
 * the FastRPB demo's trained bias.w, checked against references computed here).
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include <glib/gstdio.h>

#include "rpe-capture.h"
#include "rpe-cli.h"
#include "rpe-checkpoint-ape.h"
#include "rpe-checkpoint-lrpe.h"
#include "rpe-checkpoint.h"
#include "rpe-demos.h"
#include "rpe-error.h"
#include "rpe-npy.h"
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
      const char *keys[] = { "task",
                             "n_train",
                             "steps",
                             "accuracy_n_train",
                             "accuracy_2n_train",
                             "accuracy_4n_train",
                             "encoding",
                             "accuracy_measured_on" };
      double      acc1, acc2, acc4;

      g_assert_no_error (error);
      g_assert_nonnull (set);
      g_assert_nonnull (meta);
      for (guint k = 0; k < G_N_ELEMENTS (keys); k++)
        g_assert_nonnull (g_hash_table_lookup (meta, keys[k]));
      g_assert_cmpstr (g_hash_table_lookup (meta, "name"), ==, expected[i]);
      g_assert_cmpstr (g_hash_table_lookup (meta, "n_train"), ==, "64");
      g_assert_cmpint (g_ascii_strtoll (g_hash_table_lookup (meta, "steps"), NULL, 10), >, 0);
      acc1 = g_ascii_strtod (g_hash_table_lookup (meta, "accuracy_n_train"), NULL);
      acc2 = g_ascii_strtod (g_hash_table_lookup (meta, "accuracy_2n_train"), NULL);
      acc4 = g_ascii_strtod (g_hash_table_lookup (meta, "accuracy_4n_train"), NULL);
      /* every demo learned its task at N_train (as measured by tools/train-demos.py) */
      g_assert_cmpfloat (acc1, >=, 0.95);
      g_assert_cmpfloat (acc1, <=, 1.0);
      g_assert_cmpfloat (acc2, >=, 0.0);
      g_assert_cmpfloat (acc2, <=, 1.0);
      g_assert_cmpfloat (acc4, >=, 0.0);
      g_assert_cmpfloat (acc4, <=, 1.0);
      g_test_message ("%s: %zu tensors, accuracy %.3f at N_train, %.3f at 2 N_train, %.3f at 4 N_train (%s)", spec,
                      (size_t) rpe_tensor_set_size (set), acc1, acc2, acc4,
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
  /* APE: position-dependent before N_train ... */
  g_assert_cmpfloat (ape_before, >, 100 * sine_before + 1e-3);
  /* ... and flat beyond it: with no embedding there, its attention entropy (unit content) is that
   * of the uniform map over the 256 keys, log 256 = 5.545, well above the entropy before */
  {
    Curve  ent = { 0 };
    double ent_before, ent_after;

    read_curve (ape_csv, "ape_entropy", &ent);
    range_mean (&ent, 8, 56, &ent_before);
    range_mean (&ent, 72, 256, &ent_after);
    g_test_message ("learned APE attention entropy, before -> beyond N_train: %.3f -> %.3f (uniform: %.3f)", ent_before,
                    ent_after, log (256.0));
    g_assert_cmpfloat (ent_after, >, log (256.0) - 0.05);
    g_assert_cmpfloat (ent_after - ent_before, >, 0.3);
    g_array_unref (ent.m);
    g_array_unref (ent.ti);
  }
  g_array_unref (ape.m);
  g_array_unref (ape.ti);
  g_array_unref (sine.m);
  g_array_unref (sine.ti);
  g_unlink (ape_csv);
  g_unlink (sine_csv);
  g_rmdir (dir);
}

/* ---- the shipped captures, and each demo in the commands docs/checkpoints.md names for it ---- */

#define CAP_N 256
#define DEMO_H 4
#define DEMO_D 16

static RpeCapture *
demo_capture (const char *name)
{
  g_autofree char *spec = g_strconcat ("demo:", name, NULL);
  g_autoptr (GError) error = NULL;
  RpeCapture *c = rpe_capture_open (spec, &error);

  g_assert_no_error (error);
  g_assert_nonnull (c);
  return c;
}

static void
test_captures (void)
{
  for (guint i = 0; expected[i] != NULL; i++)
    {
      g_autoptr (RpeCapture) c = demo_capture (expected[i]);
      g_autofree char *want = g_strdup_printf ("\"demo\": \"%s\"", expected[i]);
      const RpeTensor *tokens = rpe_capture_tokens (c);
      g_autoptr (GError) error = NULL;

      /* one task input at 4 N_train through both layers: queries, keys, values and the tokens */
      g_assert_cmpuint (rpe_capture_n_layers (c), ==, 2);
      for (guint l = 0; l < 2; l++)
        {
          RpeCaptureContent content;

          g_assert_cmpuint (rpe_capture_layer (c, l), ==, l);
          g_assert_true (rpe_capture_load_content (c, l, DEMO_H, DEMO_D, 0, TRUE, &content, &error));
          g_assert_no_error (error);
          g_assert_cmpuint (content.n, ==, CAP_N);
          g_assert_cmpuint (content.dv, ==, DEMO_D);
          rpe_capture_content_clear (&content);
        }
      g_assert_nonnull (tokens);
      g_assert_cmpuint (tokens->n_elements, ==, CAP_N);
      for (gsize t = 0; t < CAP_N; t++)
        {
          g_assert_cmpfloat (tokens->data[t], >=, 0.0f);
          g_assert_cmpfloat (tokens->data[t], <, 8.0f);
        }
      g_assert_nonnull (strstr (rpe_capture_meta_json (c), want));
      g_assert_nonnull (strstr (rpe_capture_model_class (c), "Model"));
    }
}

/* A shipped capture opened with another demo's checkpoint (the same shapes, the same model class)
 * is refused before anything is computed, with a message naming both and the tensors; opened with
 * its own, it is taken without a note; each demo's capture records every tensor of its checkpoint. */
static void
test_capture_other_model (void)
{
  g_autofree char *out = g_build_filename (rpe_test_tmpdir (), "other-model.npy", NULL);
  g_autofree char *err = NULL;

  g_unlink (out);
  g_assert_cmpint (rpe_test_run_cli (NULL, &err,
                                     "compute attention --exact --causal --checkpoint demo:conv-spe "
                                     "--content demo:sine-spe --layer 0 -o '%s'",
                                     out),
                   ==, 2);
  g_assert_nonnull (strstr (err, "demo:sine-spe was made on another model than demo:conv-spe"));
  g_assert_nonnull (strstr (err, "holds other values"));
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  g_clear_pointer (&err, g_free);
  /* the same shapes everywhere: only the fingerprint tells LRPE's capture from FastRPB's model */
  g_assert_cmpint (rpe_test_run_cli (NULL, &err,
                                     "compute lrpe-encode --checkpoint demo:lrpe --content demo:fastrpb --layer 1 "
                                     "-o '%s'",
                                     out),
                   ==, 2);
  g_assert_nonnull (strstr (err, "another model"));
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (rpe_test_run_cli (NULL, &err,
                                     "compute attention --exact --causal --checkpoint demo:sine-spe "
                                     "--content demo:sine-spe --layer 0 -o '%s'",
                                     out),
                   ==, 0);
  g_assert_null (strstr (err, "fingerprint"));
  g_unlink (out);
  for (guint i = 0; expected[i] != NULL; i++)
    {
      g_autofree char *spec = g_strconcat ("demo:", expected[i], NULL);
      g_autoptr (GError) error = NULL;
      g_autoptr (RpeTensorSet) set = rpe_demos_read (spec, &error);
      g_autoptr (RpeCapture) c = demo_capture (expected[i]);
      g_autoptr (RpeModelPrint) print = NULL;

      g_assert_no_error (error);
      print = rpe_model_print_new (set, spec);
      g_assert_cmpuint (rpe_capture_n_model_tensors (c), ==, rpe_tensor_set_size (set));
      g_assert_true (rpe_capture_check_model (c, print, NULL, &error));
      g_assert_no_error (error);
      for (guint j = 0; expected[j] != NULL; j++)
        if (j != i)
          {
            g_autofree char *other = g_strconcat ("demo:", expected[j], NULL);
            g_autoptr (RpeTensorSet) oset = rpe_demos_read (other, &error);
            g_autoptr (RpeModelPrint) oprint = rpe_model_print_new (oset, other);

            g_assert_false (rpe_capture_check_model (c, oprint, NULL, &error));
            g_assert_error (error, RPE_ERROR, RPE_ERROR_INVALID_ARGUMENT);
            g_clear_error (&error);
          }
    }
}

/* A command that opens a capture more than once (its shape, then its layer, then its values)
 * fingerprints the checkpoint once: hashing reads every value of the file (it was made once per
 * opening, three times for `compute fastrpb --content C --values C`).  In-process, in a child. */
static void
test_capture_print_once (void)
{
  if (g_test_subprocess ())
    {
      g_autofree char *out = rpe_test_tmp_path ("print-once.npy");
      char            *lrpe[] = { "rpe",       "compute", "lrpe-encode", "--checkpoint", "demo:lrpe", "--content",
                                  "demo:lrpe", "--layer", "1",           "-o",           out,         NULL };
      char            *fastrpb[] = { "rpe",
                                     "compute",
                                     "fastrpb",
                                     "--checkpoint",
                                     "demo:fastrpb",
                                     "--prefix",
                                     "layers.1.positional_bias",
                                     "--content",
                                     "demo:fastrpb",
                                     "--values",
                                     "demo:fastrpb",
                                     "--layer",
                                     "1",
                                     "-o",
                                     out,
                                     NULL };
      guint            before = rpe_model_print_n_made ();

      g_assert_cmpint (rpe_cli_main (G_N_ELEMENTS (lrpe) - 1, lrpe), ==, 0);
      g_assert_cmpuint (rpe_model_print_n_made () - before, ==, 1);
      g_unlink (out);
      before = rpe_model_print_n_made ();
      g_assert_cmpint (rpe_cli_main (G_N_ELEMENTS (fastrpb) - 1, fastrpb), ==, 0);
      g_assert_cmpuint (rpe_model_print_n_made () - before, ==, 1);
      g_unlink (out);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();
}

static void run_ok (const char *format, ...) G_GNUC_PRINTF (1, 2);

static void
run_ok (const char *format, ...)
{
  g_autofree char *args = NULL, *err = NULL;
  va_list          ap;

  va_start (ap, format);
  args = g_strdup_vprintf (format, ap);
  va_end (ap);
  if (rpe_test_run_cli (NULL, &err, "%s", args) != 0)
    g_error ("rpe %s failed: %s", args, err);
}

static char *
tmp_file (const char *name)
{
  return g_build_filename (rpe_test_tmpdir (), name, NULL);
}

static RpeTensor *
read_npy (const char *path)
{
  g_autoptr (GError) error = NULL;
  RpeTensor *t = rpe_npy_read (path, &error);

  g_assert_no_error (error);
  return t;
}

/* `rpe info` names the module the commands use, the accuracies and the shipped capture */
static void
check_info (const char *name, const char *modules)
{
  g_autofree char *out = NULL;

  g_assert_cmpint (rpe_test_run_cli (&out, NULL, "info demo:%s", name), ==, 0);
  g_assert_nonnull (strstr (out, modules));
  g_assert_nonnull (strstr (out, "accuracy_n_train"));
  g_assert_nonnull (strstr (out, "accuracy_2n_train"));
  g_assert_nonnull (strstr (out, "shipped capture"));
}

/* The SPE demos: the exact logits of the shipped capture's layers equal sum_d q k Ptilde / sqrt(D)
 * computed here from the capture and the raw stored tensors; the figures and curves run. */
static void
check_spe_commands (const char *name, gboolean sine)
{
  g_autofree char *spec = g_strconcat ("demo:", name, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeTensorSet) set = rpe_demos_read (spec, &error);
  g_autoptr (RpeCapture) c = demo_capture (name);
  g_autofree char   *out = tmp_file ("logits.npy");
  g_autofree char   *png = tmp_file ("demo.png");
  g_autofree char   *csv = tmp_file ("demo.csv");
  g_autofree double *pt = g_new (double, DEMO_H *DEMO_D *(2 * CAP_N - 1));

  g_assert_no_error (error);
  check_info (name, "SPE modules: 1");
  for (int layer = 0; layer < 2; layer++)
    {
      const RpeTensor *q = rpe_capture_get (c, (guint) layer, RPE_CAPTURE_QUERIES);
      const RpeTensor *k = rpe_capture_get (c, (guint) layer, RPE_CAPTURE_KEYS);
      g_autoptr (RpeTensor) got = NULL;
      double worst = 0.0, scale = 0.0;

      run_ok ("compute logits --exact --checkpoint %s --content %s --layer %d -o '%s'", spec, spec, layer, out);
      got = read_npy (out);
      g_assert_cmpuint (got->shape[0], ==, DEMO_H);
      g_assert_cmpuint (got->shape[1], ==, CAP_N);
      for (gsize h = 0; h < DEMO_H; h++)
        for (gsize d = 0; d < DEMO_D; d++)
          for (long tau = -(CAP_N - 1); tau < CAP_N; tau++)
            pt[(h * DEMO_D + d) * (2 * CAP_N - 1) + (gsize) (tau + CAP_N - 1)] =
              template_ref (set, sine, layer, h, d, tau);
      for (gsize h = 0; h < DEMO_H; h++)
        for (gsize m = 0; m < CAP_N; m += 3)
          for (gsize n = 0; n < CAP_N; n++)
            {
              double ref = 0.0;

              for (gsize d = 0; d < DEMO_D; d++)
                ref += (double) q->data[(m * DEMO_H + h) * DEMO_D + d] * k->data[(n * DEMO_H + h) * DEMO_D + d]
                       * pt[(h * DEMO_D + d) * (2 * CAP_N - 1) + (m - n + CAP_N - 1)];
              ref /= sqrt ((double) DEMO_D);
              worst = MAX (worst, fabs (got->data[(h * CAP_N + m) * CAP_N + n] - ref));
              scale = MAX (scale, fabs (ref));
            }
      g_test_message ("%s layer %d: exact logits on the shipped capture vs reference, max error %.2e of %.2f", name,
                      layer, worst, scale);
      g_assert_cmpfloat (worst, <, 1e-5 * scale + 1e-6);
    }
  run_ok ("compute attention --checkpoint %s --content %s --layer 1 --causal -o '%s'", spec, spec, out);
  run_ok ("compute linear --checkpoint %s --content %s --values %s --layer 0 --causal -o '%s'", spec, spec, spec, out);
  run_ok ("compute template --checkpoint %s --layer 1 --length 64 -o '%s'", spec, out);
  run_ok ("export attention --checkpoint %s --exact --content %s --layer 0 --head 1 --train-length 64 -o '%s'", spec,
          spec, png);
  run_ok ("export spe-vs-rpe --checkpoint %s --content %s --layer 1 -o '%s'", spec, spec, png);
  run_ok ("export outputs --checkpoint %s --content %s --values %s --layer 1 -o '%s'", spec, spec, spec, png);
  run_ok ("export templates --checkpoint %s --layer 1 --length 64 -o '%s'", spec, png);
  run_ok ("export overview --checkpoint %s --length 48 -o '%s'", spec, png);
  run_ok ("curves profile --checkpoint %s --models %s --length 64 -o '%s'", spec, sine ? "sine" : "conv", csv);
  run_ok ("curves extrapolation --checkpoint %s --models %s --train-length 64 --max-length 128 -o '%s'", spec,
          sine ? "sine" : "conv", csv);
  g_unlink (out);
  g_unlink (png);
  g_unlink (csv);
}

static void
test_sine_commands (void)
{
  check_spe_commands ("sine-spe", TRUE);
}

static void
test_conv_commands (void)
{
  check_spe_commands ("conv-spe", FALSE);
}

/* A CSV column by name (rows after the header; '#' lines skipped). */
static GArray *
csv_column (const char *path, const char *column)
{
  g_autofree char *text = NULL;
  g_auto (GStrv) lines = NULL;
  GArray *values = g_array_new (FALSE, FALSE, sizeof (double));
  int     col = -1;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto (GStrv) cells = NULL;

      if (lines[i][0] == '#' || lines[i][0] == '\0')
        continue;
      cells = g_strsplit (lines[i], ",", -1);
      if (col < 0)
        {
          for (int j = 0; cells[j] != NULL; j++)
            if (g_str_equal (cells[j], column))
              col = j;
          g_assert_cmpint (col, >=, 0);
          continue;
        }
      {
        double v = g_ascii_strtod (cells[col], NULL);

        g_array_append_val (values, v);
      }
    }
  return values;
}

static void
test_lrpe_commands (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeTensorSet) set = rpe_demos_read ("demo:lrpe", &error);
  g_autoptr (RpeCapture) c = demo_capture ("lrpe");
  g_autoptr (GPtrArray) modules = NULL;
  g_autoptr (RpeTensor) enc = NULL;
  g_autofree char *out = tmp_file ("lrpe.npy");
  g_autofree char *theta_npy = tmp_file ("theta.npy");
  g_autofree char *a_csv = tmp_file ("lrpe-a.csv");
  g_autofree char *b_csv = tmp_file ("lrpe-b.csv");
  const RpeTensor *theta, *q;
  double           worst = 0.0, moved = 0.0;

  g_assert_no_error (error);
  /* one LRPE module (rotation, learned theta (1, 1, D/2)), shared by the layers */
  modules = rpe_checkpoint_find_lrpe_modules (set);
  g_assert_cmpuint (modules->len, ==, 1);
  theta = ((const RpeLrpeModuleInfo *) g_ptr_array_index (modules, 0))->theta;
  g_assert_nonnull (theta);
  g_assert_cmpuint (theta->n_elements, ==, DEMO_D / 2);
  check_info ("lrpe", "LRPE modules: 1");
  /* lrpe-encode of the capture's layer 0 is Lambda(s) q_s with the stored theta (identity P):
   * pairs (x0, x1) -> (x0 cos - x1 sin, x1 cos + x0 sin) at angle s theta_k */
  run_ok ("compute lrpe-encode --checkpoint demo:lrpe --content demo:lrpe --layer 0 -o '%s'", out);
  enc = read_npy (out);
  q = rpe_capture_get (c, 0, RPE_CAPTURE_QUERIES);
  g_assert_cmpuint (enc->n_elements, ==, q->n_elements);
  for (gsize s = 0; s < CAP_N; s++)
    for (gsize h = 0; h < DEMO_H; h++)
      for (gsize kk = 0; kk < DEMO_D / 2; kk++)
        {
          const float *x = q->data + (s * DEMO_H + h) * DEMO_D + 2 * kk;
          const float *y = enc->data + (s * DEMO_H + h) * DEMO_D + 2 * kk;
          double       a = (double) s * theta->data[kk], ca = cos (a), sa = sin (a);

          worst = MAX (worst, fabs (y[0] - (x[0] * ca - x[1] * sa)));
          worst = MAX (worst, fabs (y[1] - (x[1] * ca + x[0] * sa)));
        }
  g_test_message ("lrpe-encode of the shipped capture vs Lambda(s) q with the stored theta: max error %.2e", worst);
  g_assert_cmpfloat (worst, <, 1e-3);
  /* as docs/checkpoints.md writes them: without content, the demo's own shape (H = 4, D = 16) */
  for (guint i = 0; i < 3; i++)
    {
      const char *what[] = { "lrpe-encode", "lrpe-attention", "lrpe-linear" };
      g_autoptr (RpeTensor) t = NULL;

      run_ok ("compute %s --checkpoint demo:lrpe --length 32 -o '%s'", what[i], out);
      t = read_npy (out);
      g_assert_cmpuint (t->shape[0], ==, i == 1 ? DEMO_H : 32);
    }
  run_ok ("compute lrpe-attention --checkpoint demo:lrpe --content demo:lrpe --layer 1 --causal -o '%s'", out);
  run_ok ("compute lrpe-linear --checkpoint demo:lrpe --content demo:lrpe --values demo:lrpe --layer 1 --causal "
          "--lrpe-norm layer -o '%s'",
          out);
  /* the curves use the stored theta: the same profile as with it given as a file */
  g_assert_true (rpe_npy_write (theta_npy, theta->data, 3, (gsize[]) { 1, 1, DEMO_D / 2 }, FALSE, &error));
  g_assert_no_error (error);
  run_ok ("curves profile --checkpoint demo:lrpe --models lrpe --length 64 --content random -o '%s'", a_csv);
  run_ok ("curves profile --models lrpe --heads 4 --features 16 --length 64 --content random --lrpe-theta-file '%s' "
          "-o '%s'",
          theta_npy, b_csv);
  {
    g_autoptr (GArray) a = csv_column (a_csv, "lrpe");
    g_autoptr (GArray) b = csv_column (b_csv, "lrpe");

    g_assert_cmpuint (a->len, ==, 127);
    g_assert_cmpuint (b->len, ==, a->len);
    for (guint i = 0; i < a->len; i++)
      g_assert_cmpfloat (g_array_index (a, double, i), ==, g_array_index (b, double, i));
  }
  for (gsize kk = 0; kk < DEMO_D / 2; kk++)
    moved = MAX (moved, fabs (theta->data[kk] - pow (10000.0, -2.0 * kk / DEMO_D)));
  g_test_message ("the trained theta moved from theta a (RoPE) by up to %.3g", moved);
  run_ok ("curves extrapolation --checkpoint demo:lrpe --models lrpe --train-length 64 --max-length 128 -o '%s'",
          a_csv);
  g_unlink (out);
  g_unlink (theta_npy);
  g_unlink (a_csv);
  g_unlink (b_csv);
}

static void
test_fastrpb_commands (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeTensorSet) set = rpe_demos_read ("demo:fastrpb", &error);
  g_autoptr (RpeCapture) c = demo_capture ("fastrpb");
  g_autofree char *out = tmp_file ("fastrpb.npy");
  g_autofree char *csv = tmp_file ("fastrpb.csv");
  const gsize      M = 256, X = 2 * M - 1;

  g_assert_no_error (error);
  check_info ("fastrpb", "FastRPB modules: 2");
  run_ok ("compute fastrpb --checkpoint demo:fastrpb --prefix layers.0.positional_bias --length 64 -o '%s'", out);
  for (int layer = 0; layer < 2; layer++)
    {
      g_autofree char *wname = g_strdup_printf ("layers.%d.positional_bias.bias.w", layer);
      const RpeTensor *w = tensor (set, wname), *v = rpe_capture_get (c, (guint) layer, RPE_CAPTURE_VALUES);
      g_autoptr (RpeTensor) y = NULL;
      g_autofree char *free_text = NULL;
      double           worst = 0.0, scale = 0.0;

      /* W V with W[h, m, n] = w[0, h, (m - n + M) mod (2M - 1)] (the reference's full layout) */
      run_ok ("compute fastrpb --checkpoint demo:fastrpb --prefix layers.%d.positional_bias --content demo:fastrpb "
              "--values demo:fastrpb --layer %d -o '%s'",
              layer, layer, out);
      y = read_npy (out);
      g_assert_cmpuint (y->n_elements, ==, v->n_elements);
      for (gsize m = 0; m < CAP_N; m += 5)
        for (gsize h = 0; h < DEMO_H; h++)
          for (gsize e = 0; e < DEMO_D; e++)
            {
              double ref = 0.0;

              for (gsize n = 0; n < CAP_N; n++)
                ref += (double) w->data[h * X + ((m + M - n) % X)] * v->data[(n * DEMO_H + h) * DEMO_D + e];
              worst = MAX (worst, fabs (y->data[(m * DEMO_H + h) * DEMO_D + e] - ref));
              scale = MAX (scale, fabs (ref));
            }
      g_test_message ("fastrpb layer %d: W V of the shipped capture vs reference, max error %.2e of %.2f", layer, worst,
                      scale);
      g_assert_cmpfloat (worst, <, 1e-4 * scale + 1e-6);

      /* the curves draw the stored weights: profile(tau) = w_tau of head 2 */
      run_ok ("curves profile --checkpoint demo:fastrpb --prefix layers.%d.positional_bias --models fastrpb "
              "--head 2 --length 64 -o '%s'",
              layer, csv);
      {
        g_autoptr (GArray) tau = csv_column (csv, "tau");
        g_autoptr (GArray) prof = csv_column (csv, "fastrpb");

        g_assert_cmpuint (prof->len, ==, 127);
        for (guint i = 0; i < prof->len; i++)
          {
            long   t = lround (g_array_index (tau, double, i));
            double want = w->data[2 * X + (gsize) ((t + (long) M + (long) X) % (long) X)];

            g_assert_cmpfloat (fabs (g_array_index (prof, double, i) - want), <=, 1e-6 * MAX (1.0, fabs (want)));
          }
      }
      g_assert_true (g_file_get_contents (csv, &free_text, NULL, NULL));
      g_assert_nonnull (strstr (free_text, wname));
      run_ok ("curves extrapolation --checkpoint demo:fastrpb --prefix layers.%d.positional_bias --models fastrpb "
              "--train-length 64 --max-length 256 -o '%s'",
              layer, csv);
    }
  g_unlink (out);
  g_unlink (csv);
}

static void
test_ape_commands (void)
{
  g_autofree char *csv = tmp_file ("ape.csv");

  check_info ("ape", "SPE modules: 0");
  run_ok ("curves extrapolation --checkpoint demo:ape --models ape --train-length 64 --max-length 256 -o '%s'", csv);
  g_unlink (csv);
}

/* ------------------------------------------------ the window-drawn methods on the demos' captures */

/* `rpe export attention --attention-method ape|lrpe|fastrpb` on each demo's shipped capture draws
 * the trained model's own map: the .npy (every cell) equals model_map for every layer and head.
 * Tolerance: float32 sums of D = 16 products and row sums over at most N = 256 terms, relative
 * rounding below N eps = 256 x 6e-8 = 1.5e-5 of the row's largest magnitude, times the row's
 * condition kappa = sum |s| / |sum s| (1 for the positive scores of elu + 1 features; LRPE's
 * rotated scores are signed and their sum can nearly cancel); 1e-4 kappa of it. */
static void
test_window_maps_on_captures (void)
{
  static const char *const names[] = { "ape", "lrpe", "fastrpb" };
  g_autofree char         *out = tmp_file ("map.npy");

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *spec = g_strconcat ("demo:", names[i], NULL);
      g_autoptr (GError) error = NULL;
      g_autoptr (RpeTensorSet) set = rpe_demos_read (spec, &error);
      g_autoptr (RpeCapture) c = demo_capture (names[i]);

      g_assert_no_error (error);
      for (guint layer = 0; layer < 2; layer++)
        for (gsize h = 0; h < DEMO_H; h++)
          {
            g_autoptr (RpeTensor) got = NULL;
            g_autofree double *ref = g_new (double, CAP_N *CAP_N), *kappa = g_new (double, CAP_N);
            double             worst = 0.0, far = 0.0;

            run_ok ("export attention --attention-method %s --checkpoint %s --content %s --layer %u --head %zu "
                    "--causal -o '%s'",
                    names[i], spec, spec, layer, (size_t) h, out);
            got = read_npy (out);
            g_assert_cmpuint (got->n_elements, ==, CAP_N * CAP_N);
            rpe_test_demo_model_map (set, c, names[i], layer, h, ref, kappa);
            for (gsize m = 0; m < CAP_N; m++)
              {
                double row = 0.0, err = 0.0;

                for (gsize n = 0; n < CAP_N; n++)
                  {
                    row = MAX (row, fabs (ref[m * CAP_N + n]));
                    err = MAX (err, fabs (got->data[m * CAP_N + n] - ref[m * CAP_N + n]));
                    if (m - n >= 32 && m - n < 64 && n <= m)
                      far = MAX (far, fabs (ref[m * CAP_N + n]));
                  }
                g_assert_cmpfloat (err, <=, 1e-4 * kappa[m] * row + 1e-7);
                worst = MAX (worst, err / MAX (kappa[m] * row, 1e-7));
              }
            g_test_message ("%s layer %u head %zu: the exported map vs the model's, max error %.2e of kappa x the row",
                            names[i], layer, (size_t) h, worst);
            /* FastRPB: offsets 32 .. 63 (beyond the editor's central taps) carry weight */
            if (g_str_equal (names[i], "fastrpb"))
              g_assert_cmpfloat (far, >, 1e-3);
          }
    }
  g_unlink (out);
}

/* A checkpoint with an SPE module but no trained module of the method: seeded parameters, said
 * on stderr; one with neither: refused with what it holds. */
static void
test_window_methods_seeded_or_refused (void)
{
  g_autofree char *png = tmp_file ("seeded.png");
  g_autofree char *err = NULL, *err2 = NULL;

  g_assert_cmpint (rpe_test_run_cli (NULL, &err,
                                     "export attention --attention-method lrpe --checkpoint demo:sine-spe "
                                     "--length 32 -o '%s'",
                                     png),
                   ==, 0);
  g_assert_nonnull (strstr (err, "holds no trained lrpe module"));
  g_assert_nonnull (strstr (err, "seeded"));
  g_unlink (png);
  g_assert_cmpint (rpe_test_run_cli (NULL, &err2,
                                     "export attention --attention-method ape --checkpoint demo:fastrpb "
                                     "-o '%s'",
                                     png),
                   ==, 2);
  g_assert_nonnull (strstr (err2, "learned APE: none"));
  g_assert_false (g_file_test (png, G_FILE_TEST_EXISTS));
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
  g_test_add_func ("/demos/captures", test_captures);
  g_test_add_func ("/demos/capture-other-model", test_capture_other_model);
  g_test_add_func ("/demos/capture-print-once", test_capture_print_once);
  g_test_add_func ("/demos/window-maps-on-captures", test_window_maps_on_captures);
  g_test_add_func ("/demos/window-methods-seeded-or-refused", test_window_methods_seeded_or_refused);
  g_test_add_func ("/demos/sine-spe/commands", test_sine_commands);
  g_test_add_func ("/demos/conv-spe/commands", test_conv_commands);
  g_test_add_func ("/demos/lrpe/commands", test_lrpe_commands);
  g_test_add_func ("/demos/fastrpb/commands", test_fastrpb_commands);
  g_test_add_func ("/demos/ape/commands", test_ape_commands);

  return g_test_run ();
}

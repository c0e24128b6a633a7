/* test-cli-curves.c: `rpe curves profile|error|extrapolation` end to end: well-formed
 * CSV (metadata, header, rows), values against naive formulas written here from
 * the checkpoint's parameters, the 1/sqrt(R) slope, stationarity of exact SPE,
 * and bad usage exiting with status 2. */
#include "config.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "rpe-checkpoint.h"
#include "rpe-npy.h"
#include "rpe-spe.h"
#include "rpe-test-utils.h"

/* A parsed CSV: metadata, column names, rows x cols doubles. */
typedef struct
{
  GHashTable *meta;
  GStrv       names;
  gsize       n_cols;
  gsize       n_rows;
  double     *data;
} Csv;

static void
csv_free (Csv *c)
{
  g_hash_table_unref (c->meta);
  g_strfreev (c->names);
  g_free (c->data);
  g_free (c);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Csv, csv_free)

/* Strict: '# key: value' lines first, then one header row, then rows of exactly
 * n_cols numbers each (C locale), nothing else. */
static Csv *
csv_read (const char *path)
{
  g_autofree char *text = NULL;
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) lines = NULL;
  GArray *values = g_array_new (FALSE, FALSE, sizeof (double));
  Csv *c = g_new0 (Csv, 1);
  gsize i = 0;

  g_assert_true (g_file_get_contents (path, &text, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_str_has_suffix (text, "\n"));
  lines = g_strsplit (text, "\n", -1);
  c->meta = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  for (; lines[i] != NULL && g_str_has_prefix (lines[i], "# "); i++)
    {
      const char *colon = strstr (lines[i], ": ");
      g_assert_nonnull (colon);
      g_hash_table_insert (c->meta, g_strndup (lines[i] + 2, colon - lines[i] - 2), g_strdup (colon + 2));
    }
  g_assert_nonnull (lines[i]);
  c->names = g_strsplit (lines[i++], ",", -1);
  c->n_cols = g_strv_length (c->names);
  g_assert_cmpuint (c->n_cols, >=, 2);
  for (; lines[i] != NULL && lines[i][0] != '\0'; i++)
    {
      g_auto (GStrv) fields = g_strsplit (lines[i], ",", -1);

      g_assert_cmpuint (g_strv_length (fields), ==, c->n_cols);
      for (gsize j = 0; j < c->n_cols; j++)
        {
          char *end = NULL;
          double v = g_ascii_strtod (fields[j], &end);

          g_assert_true (end != fields[j] && *end == '\0');
          g_array_append_val (values, v);
        }
      c->n_rows++;
    }
  g_assert_null (lines[i] ? lines[i + 1] : NULL);   /* only the final newline after the rows */
  c->data = (double *) (void *) g_array_free (values, FALSE);
  return c;
}

static gsize
csv_col (const Csv *c, const char *name)
{
  for (gsize j = 0; j < c->n_cols; j++)
    if (g_str_equal (c->names[j], name))
      return j;
  g_test_message ("no column %s", name);
  g_assert_not_reached ();
  return 0;
}

static double
csv_get (const Csv *c, gsize row, const char *name)
{
  return c->data[row * c->n_cols + csv_col (c, name)];
}

static double
meta_double (const Csv *c, const char *key)
{
  const char *v = g_hash_table_lookup (c->meta, key);
  char *end = NULL;
  double x;

  g_assert_nonnull (v);
  x = g_ascii_strtod (v, &end);
  g_assert_true (end != v && *end == '\0');
  return x;
}

static void
assert_columns (const Csv *c, const char *const *names)
{
  gsize n = g_strv_length ((GStrv) names);

  g_assert_cmpuint (c->n_cols, ==, n);
  for (gsize j = 0; j < n; j++)
    g_assert_cmpstr (c->names[j], ==, names[j]);
}

/* The demo's parameters of one method, straight from the checkpoint. */
static void
load_demo (const char *prefix, RpeSpeParams *p)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeTensorSet) set = rpe_checkpoint_read (g_getenv ("RPE_DEMO_CHECKPOINT"), &error);

  g_assert_no_error (error);
  g_assert_true (rpe_checkpoint_load_spe (set, prefix, -1, p, &error));
  g_assert_no_error (error);
}

/* Naive template (docs/math.md, sections 1-3). */
static double
naive_template (const RpeSpeParams *p, size_t h, size_t d, long tau, gboolean gated)
{
  size_t c = h * p->n_features + d;
  double v = 0;

  if (p->method == RPE_SPE_SINE)
    {
      for (size_t k = 0; k < p->n_sines; k++)
        {
          double lam = p->gains[c * p->n_sines + k];
          v += lam * lam * cos (2 * G_PI * p->freqs[c * p->n_sines + k] * tau + p->offsets[c * p->n_sines + k]);
        }
      v /= 2.0 * p->n_sines;
    }
  else
    for (long j = 0; j < (long) p->kernel; j++)
      if (j + tau >= 0 && j + tau < (long) p->kernel)
        v += (double) p->wq[c * p->kernel + j] * p->wk[c * p->kernel + j + tau];
  if (gated)
    v = (1 - p->gate[c]) * v + p->gate[c];
  return v;
}

static void
test_profile_demo (void)
{
  g_autofree char *out = rpe_test_tmp_path ("profile.csv");
  g_autoptr (Csv) c = NULL;
  const char *cols[] = { "tau", "sine_ungated", "sine_gated", "conv_ungated", "conv_gated", "lrpe", NULL };
  RpeSpeParams sine, conv;
  const long n = 48;

  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "curves profile --checkpoint '%s' --length %ld --head 1 -o '%s'",
                            g_getenv ("RPE_DEMO_CHECKPOINT"), n, out), ==, 0);
  c = csv_read (out);
  assert_columns (c, cols);
  g_assert_cmpuint (c->n_rows, ==, 2 * n - 1);
  g_assert_cmpstr (g_hash_table_lookup (c->meta, "curve"), ==, "profile");
  g_assert_cmpfloat (meta_double (c, "length"), ==, n);
  load_demo ("sine", &sine);
  load_demo ("conv", &conv);
  g_assert_cmpuint (conv.kernel, ==, 32);
  for (gsize i = 0; i < c->n_rows; i++)
    {
      long tau = (long) i - (n - 1);
      double ms = 0, msg = 0, mc = 0, mcg = 0;

      g_assert_cmpfloat (csv_get (c, i, "tau"), ==, tau);
      for (size_t d = 0; d < 16; d++)
        {
          ms += naive_template (&sine, 1, d, tau, FALSE) / 16;
          msg += naive_template (&sine, 1, d, tau, TRUE) / 16;
          mc += naive_template (&conv, 1, d, tau, FALSE) / 16;
          mcg += naive_template (&conv, 1, d, tau, TRUE) / 16;
        }
      g_assert_cmpfloat_with_epsilon (csv_get (c, i, "sine_ungated"), ms, 1e-5);
      g_assert_cmpfloat_with_epsilon (csv_get (c, i, "sine_gated"), msg, 1e-5);
      g_assert_cmpfloat_with_epsilon (csv_get (c, i, "conv_ungated"), mc, 1e-5);
      g_assert_cmpfloat_with_epsilon (csv_get (c, i, "conv_gated"), mcg, 1e-5);
      if (labs (tau) >= 32)
        g_assert_cmpfloat (csv_get (c, i, "conv_ungated"), ==, 0.0);
    }
  /* LRPE with unit content: 1 at tau = 0, and even (rotation, identity P) */
  g_assert_cmpfloat_with_epsilon (csv_get (c, n - 1, "lrpe"), 1.0, 1e-5);
  g_assert_cmpfloat_with_epsilon (csv_get (c, n - 1 - 5, "lrpe"), csv_get (c, n - 1 + 5, "lrpe"), 1e-5);
  rpe_spe_params_clear (&sine);
  rpe_spe_params_clear (&conv);
}

/* Without --models, a checkpoint's own modules: the SPE methods it holds (demo:sine-spe was
 * refused for its missing conv module), else its LRPE or FastRPB module (demo:lrpe and
 * demo:fastrpb were refused for holding no SPE module). */
static void
test_profile_own_modules (void)
{
  static const struct
  {
    const char *args;
    const char *cols[6];
  } cases[] = {
    { "curves profile --checkpoint demo:sine-spe", { "tau", "sine_ungated", "sine_gated", "lrpe", NULL } },
    { "curves profile --checkpoint demo:conv-spe", { "tau", "conv_ungated", "conv_gated", "lrpe", NULL } },
    { "curves profile --checkpoint demo:lrpe", { "tau", "lrpe", NULL } },
    { "curves profile --checkpoint demo:fastrpb --prefix layers.1.positional_bias", { "tau", "fastrpb", NULL } },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *out = rpe_test_tmp_path ("own.csv");
      g_autoptr (Csv) c = NULL;

      g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "%s --length 16 -o '%s'", cases[i].args, out), ==, 0);
      c = csv_read (out);
      assert_columns (c, cases[i].cols);
      g_assert_cmpuint (c->n_rows, ==, 31);
    }
}

static void
test_profile_random (void)
{
  g_autofree char *out = rpe_test_tmp_path ("profile-r.csv");
  g_autofree char *wpath = rpe_test_tmp_path ("w.npy");
  g_autoptr (GError) error = NULL;
  g_autoptr (Csv) c = NULL;
  const char *cols[] = { "tau", "fastrpb", "conv_gated", NULL };
  float w[2 * 10 - 1];

  for (gsize i = 0; i < G_N_ELEMENTS (w); i++)
    w[i] = (float) (i * 0.25 - 1);
  g_assert_true (rpe_npy_write (wpath, w, 1, (gsize[]) { G_N_ELEMENTS (w) }, FALSE, &error));
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "curves profile --heads 2 --features 4 --kernel 3 --length 10 "
                            "--models fastrpb,conv-gated --bias '%s' --causal --feature 2 -o '%s'", wpath, out), ==, 0);
  c = csv_read (out);
  assert_columns (c, cols);
  g_assert_cmpuint (c->n_rows, ==, 19);
  for (gsize i = 0; i < 19; i++)
    {
      g_assert_cmpfloat (csv_get (c, i, "fastrpb"), ==, i < 9 ? 0.0 : w[i]);   /* causal: tau < 0 is 0 */
      if (i + 3 <= 9 || i >= 9 + 3)
        g_assert_cmpfloat (csv_get (c, i, "conv_gated"), ==, csv_get (c, 0, "conv_gated"));   /* = g beyond L */
    }
  g_assert_cmpfloat (meta_double (c, "feature"), ==, 2);
}

static void
test_error_demo (void)
{
  g_autofree char *out = rpe_test_tmp_path ("error.csv");
  g_autoptr (Csv) c = NULL;
  const char *cols[] = { "R", "sine", "sine_rms", "sine_sd", "conv", "conv_rms", "conv_sd", NULL };
  const char *methods[] = { "sine", "conv" };
  gint64 t0 = g_get_monotonic_time ();

  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "curves error --checkpoint '%s' -o '%s'", g_getenv ("RPE_DEMO_CHECKPOINT"), out), ==, 0);
  g_test_message ("rpe curves error on the demo: %.2f s", (g_get_monotonic_time () - t0) / 1e6);
  c = csv_read (out);
  assert_columns (c, cols);
  g_assert_cmpuint (c->n_rows, ==, 9);
  for (gsize m = 0; m < 2; m++)
    {
      g_autofree char *k = g_strdup_printf ("%s_slope", methods[m]);
      g_autofree char *kse = g_strdup_printf ("%s_slope_se", methods[m]);
      double x[9], y[9], mx = 0, my = 0, sxx = 0, sxy = 0;

      /* the slope line is within 0.05 of -0.5, and is the least-squares slope of
       * the printed points (recomputed here) */
      g_test_message ("%s slope %s +- %s", methods[m], (char *) g_hash_table_lookup (c->meta, k),
                      (char *) g_hash_table_lookup (c->meta, kse));
      g_assert_cmpfloat (fabs (meta_double (c, k) + 0.5), <, 0.05);
      g_assert_cmpfloat (meta_double (c, kse), <, 0.05);
      for (gsize i = 0; i < 9; i++)
        {
          x[i] = log (csv_get (c, i, "R"));
          y[i] = log (csv_get (c, i, methods[m]));
          g_assert_cmpfloat (csv_get (c, i, "R"), ==, 4 << i);
          if (i > 0)
            g_assert_cmpfloat (csv_get (c, i, methods[m]), <, csv_get (c, i - 1, methods[m]));
          mx += x[i] / 9, my += y[i] / 9;
        }
      for (gsize i = 0; i < 9; i++)
        sxx += (x[i] - mx) * (x[i] - mx), sxy += (x[i] - mx) * (y[i] - my);
      g_assert_cmpfloat_with_epsilon (meta_double (c, k), sxy / sxx, 1e-6);
    }
}

static void
test_error_position (void)
{
  g_autofree char *out = rpe_test_tmp_path ("error-pos.csv");
  g_autoptr (Csv) c = NULL;
  const char *cols[] = { "m", "conv", "conv_rms", "conv_sd", NULL };

  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "curves error --against position --method conv --heads 2 --features 4 "
                            "--kernel 8 --length 40 --realizations 100 --seeds 8 -o '%s'", out), ==, 0);
  c = csv_read (out);
  assert_columns (c, cols);
  g_assert_cmpuint (c->n_rows, ==, 40);
  g_assert_cmpfloat (meta_double (c, "realizations"), ==, 100);
  for (gsize i = 0; i < 40; i++)
    {
      double e = csv_get (c, i, "conv");
      g_assert_cmpfloat (csv_get (c, i, "m"), ==, i);
      /* about 1/sqrt(R) = 0.1 times a constant of order one */
      g_assert_cmpfloat (e, >, 0.01);
      g_assert_cmpfloat (e, <, 1.0);
      g_assert_cmpfloat (csv_get (c, i, "conv_rms"), >=, e);
    }
}

static void
test_extrapolation_demo (void)
{
  g_autofree char *out = rpe_test_tmp_path ("extra.csv");
  g_autoptr (Csv) c = NULL;
  const char *models[] = { "ape", "sine", "conv" };
  const char *suffix[] = { "distance", "entropy", "ti", "mono" };
  const gsize nt = 32;
  double ape_max = 0;

  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "curves extrapolation --checkpoint '%s' --train-length %zu -o '%s'",
                            g_getenv ("RPE_DEMO_CHECKPOINT"), (size_t) nt, out), ==, 0);
  c = csv_read (out);
  g_assert_cmpuint (c->n_cols, ==, 1 + 3 * 4);
  g_assert_cmpstr (c->names[0], ==, "m");
  for (gsize i = 0; i < 3; i++)
    for (gsize a = 0; a < 4; a++)
      {
        g_autofree char *name = g_strdup_printf ("%s_%s", models[i], suffix[a]);
        g_assert_cmpstr (c->names[1 + 4 * i + a], ==, name);
      }
  g_assert_cmpuint (c->n_rows, ==, 4 * nt);
  g_assert_cmpfloat (meta_double (c, "n_train"), ==, nt);
  g_assert_cmpfloat (meta_double (c, "n_max"), ==, 4 * nt);
  g_assert_cmpfloat (meta_double (c, "window"), ==, nt);
  for (gsize m = 0; m < c->n_rows; m++)
    {
      g_assert_cmpfloat (csv_get (c, m, "m"), ==, m);
      /* exact SPE with identical content is stationary */
      g_assert_cmpfloat (csv_get (c, m, "sine_ti"), <, 1e-9);
      g_assert_cmpfloat (csv_get (c, m, "conv_ti"), <, 1e-9);
      ape_max = MAX (ape_max, csv_get (c, m, "ape_ti"));
      for (gsize i = 0; i < 3; i++)
        {
          g_autofree char *d = g_strdup_printf ("%s_distance", models[i]);
          g_autofree char *e = g_strdup_printf ("%s_entropy", models[i]);
          g_autofree char *mo = g_strdup_printf ("%s_mono", models[i]);

          g_assert_cmpfloat (csv_get (c, m, d), >=, 0);
          g_assert_cmpfloat (csv_get (c, m, d), <=, 4 * nt - 1);
          g_assert_cmpfloat (csv_get (c, m, e), >=, 0);
          g_assert_cmpfloat (csv_get (c, m, e), <=, log (4.0 * nt) + 1e-6);
          g_assert_cmpfloat (csv_get (c, m, mo), >=, 0);
          g_assert_cmpfloat (csv_get (c, m, mo), <=, 1);
        }
    }
  g_assert_cmpfloat (ape_max, >, 0.01);
}

static void
test_extrapolation_random (void)
{
  g_autofree char *out = rpe_test_tmp_path ("extra-r.csv");
  g_autoptr (Csv) c = NULL;

  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "curves extrapolation --heads 2 --features 8 --kernel 4 --sines 3 "
                            "--train-length 16 --max-length 40 --window 5 --causal --content random "
                            "--models ape,sine-gated-est,conv-ungated,lrpe,fastrpb --realizations 32 --head 1 "
                            "--block 7 -o '%s'", out), ==, 0);
  c = csv_read (out);
  g_assert_cmpuint (c->n_cols, ==, 1 + 5 * 4);
  g_assert_cmpuint (c->n_rows, ==, 40);
  g_assert_cmpstr (c->names[5], ==, "sine_gated_est_distance");
  g_assert_cmpstr (c->names[20], ==, "fastrpb_mono");
  g_assert_cmpstr (g_hash_table_lookup (c->meta, "causal"), ==, "true");
  g_assert_cmpfloat (meta_double (c, "window"), ==, 5);
  /* causal row 0 attends only to itself: distance 0, entropy 0, no monotonicity */
  g_assert_cmpfloat (csv_get (c, 0, "ape_distance"), ==, 0);
  g_assert_cmpfloat (csv_get (c, 0, "ape_entropy"), ==, 0);
  g_assert_true (isnan (csv_get (c, 0, "ape_mono")));
  for (gsize m = 0; m < 40; m++)
    g_assert_cmpfloat (csv_get (c, m, "conv_ungated_ti"), <, 1e-9);
}

static void
test_bad_usage (void)
{
  g_autofree char *out = rpe_test_tmp_path ("bad.csv");
  g_autofree char *unwritable = g_build_filename (rpe_test_tmpdir (), "missing-dir", "x.csv", NULL);
  const char *bad[] = {
    "curves error --realizations-list 4,x",
    "curves error --realizations-list 4,0",
    "curves error --against nowhere",
    "curves error --seeds 0",
    "curves error --method nope",
    "curves extrapolation --max-length 0",
    "curves extrapolation --models ape,bogus",
    "curves extrapolation --models sine-est-gated",
    "curves extrapolation --models ape,ape",
    "curves extrapolation --train-length 8 --window 9",
    "curves extrapolation --train-length 0",
    "curves extrapolation --content weird",
    "curves extrapolation --no-gate --models sine-gated",
    "curves profile --models sine-est",
    "curves profile --models ape",
    "curves profile --length 0",
    "curves profile --head 99",
    "curves nothing",
    "curves",
    "curves profile --no-such-option",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autofree char *err = NULL;
      int status = rpe_test_run_cli (NULL, &err, "%s --heads 2 --features 4 -o '%s'", bad[i], out);

      if (status != 2)
        g_test_message ("'%s' exited %d: %s", bad[i], status, err);
      g_assert_cmpint (status, ==, 2);
      g_assert_true (strlen (err) > 0);
      g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
    }
  {
    g_autofree char *err = NULL;
    g_assert_cmpint (rpe_test_run_cli (NULL, &err, "curves profile --heads 2 --features 4"), ==, 2);   /* no -o */
    g_clear_pointer (&err, g_free);
    g_assert_cmpint (rpe_test_run_cli (NULL, &err, "curves profile --heads 2 --features 4 --length 8 -o '%s'", unwritable), ==, 1);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cli/curves/profile/demo", test_profile_demo);
  g_test_add_func ("/cli/curves/profile/random", test_profile_random);
  g_test_add_func ("/cli/curves/profile/own-modules", test_profile_own_modules);
  g_test_add_func ("/cli/curves/error/demo", test_error_demo);
  g_test_add_func ("/cli/curves/error/position", test_error_position);
  g_test_add_func ("/cli/curves/extrapolation/demo", test_extrapolation_demo);
  g_test_add_func ("/cli/curves/extrapolation/random", test_extrapolation_random);
  g_test_add_func ("/cli/curves/bad-usage", test_bad_usage);
  return g_test_run ();
}

/* test-cli-outputs.c: `rpe export outputs` and `rpe curves output-error` end to end: the
 * arrays against a direct core computation, the 1/sqrt(R) slope of the unbiased pair, the
 * (N, H, Dv) values file taking the head, and bad input exiting with status 2 (1 for an
 * unwritable output) with a message. */
#include "config.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "rpe-npy.h"
#include "rpe-outputs.h"
#include "rpe-test-utils.h"

static char *
tmp_path (const char *name)
{
  return g_build_filename (rpe_test_tmpdir (), name, NULL);
}

static int
run_rpe (char **err_out, const char *format, ...) G_GNUC_PRINTF (2, 3);

static int
run_rpe (char **err_out, const char *format, ...)
{
  const char *rpe = g_getenv ("RPE_CLI");
  va_list args;
  g_autofree char *cmdline = NULL, *full = NULL, *out = NULL, *err = NULL;
  g_auto (GStrv) argv = NULL;
  g_autoptr (GError) error = NULL;
  int wait_status = 0;

  g_assert_nonnull (rpe);
  va_start (args, format);
  cmdline = g_strdup_vprintf (format, args);
  va_end (args);
  full = g_strdup_printf ("'%s' %s", rpe, cmdline);
  g_assert_true (g_shell_parse_argv (full, NULL, &argv, &error));
  g_assert_true (g_spawn_sync (NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &wait_status, &error));
  g_assert_no_error (error);
  if (g_test_verbose ())
    g_printerr ("$ rpe %s\n%s%s", cmdline, out, err);
  if (err_out != NULL)
    *err_out = g_steal_pointer (&err);
  g_assert_true (WIFEXITED (wait_status));
  return WEXITSTATUS (wait_status);
}

/* Column `name` of a CSV written by rpe (metadata lines, header, rows); *rows set. */
static double *
csv_column (const char  *path,
            const char  *name,
            gsize       *rows,
            GHashTable **meta)
{
  g_autofree char *text = NULL;
  g_auto (GStrv) lines = NULL, header = NULL;
  GArray *out = g_array_new (FALSE, FALSE, sizeof (double));
  gint col = -1;
  guint i = 0;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  lines = g_strsplit (text, "\n", -1);
  if (meta != NULL)
    *meta = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  for (; lines[i] != NULL && g_str_has_prefix (lines[i], "# "); i++)
    if (meta != NULL)
      {
        const char *colon = strstr (lines[i], ": ");

        g_assert_nonnull (colon);
        g_hash_table_insert (*meta, g_strndup (lines[i] + 2, colon - lines[i] - 2), g_strdup (colon + 2));
      }
  header = g_strsplit (lines[i++], ",", -1);
  for (guint j = 0; header[j] != NULL; j++)
    if (g_str_equal (header[j], name))
      col = (gint) j;
  g_assert_cmpint (col, >=, 0);
  for (; lines[i] != NULL && lines[i][0] != '\0'; i++)
    {
      g_auto (GStrv) f = g_strsplit (lines[i], ",", -1);
      double v = g_ascii_strtod (f[col], NULL);

      g_assert_cmpuint (g_strv_length (f), ==, g_strv_length (header));
      g_array_append_val (out, v);
    }
  *rows = out->len;
  return (double *) (void *) g_array_free (out, FALSE);
}

/* The unbiased pair: error against R has slope -1/2; the softmax pair does not vanish. */
static void
test_error_against_r (void)
{
  g_autofree char *csv = tmp_path ("oe-r.csv");
  g_autofree char *csv2 = tmp_path ("oe-r-softmax.csv");
  g_autoptr (GHashTable) meta = NULL;
  g_autofree double *r = NULL, *e = NULL, *e2 = NULL;
  gsize n, n2;
  double slope;

  g_assert_cmpint (run_rpe (NULL, "curves output-error --checkpoint demo --length 128 --train-length 32 "
                                  "--compare kernel --value-source noise --realizations-list 4,16,64,256,1024 "
                                  "--draws 8 -o '%s'", csv), ==, 0);
  r = csv_column (csv, "R", &n, &meta);
  e = csv_column (csv, "error_mean", &n, NULL);
  g_assert_cmpuint (n, ==, 5);
  slope = g_ascii_strtod (g_hash_table_lookup (meta, "slope"), NULL);
  g_test_message ("kernel pair: slope %.3f, errors %.3g .. %.3g", slope, e[0], e[4]);
  g_assert_cmpfloat (fabs (slope + 0.5), <, 0.08);
  for (gsize i = 1; i < n; i++)
    g_assert_cmpfloat (e[i], <, e[i - 1]);
  g_assert_cmpstr (g_hash_table_lookup (meta, "compare"), ==, "kernel");

  /* softmax vs SPE linear: two models; their gap at R = 1024 stays far above the kernel pair's */
  g_assert_cmpint (run_rpe (NULL, "curves output-error --checkpoint demo --length 128 --train-length 32 "
                                  "--value-source noise --realizations-list 16,1024 --draws 4 -o '%s'", csv2), ==, 0);
  e2 = csv_column (csv2, "error_mean", &n2, NULL);
  g_assert_cmpuint (n2, ==, 2);
  g_test_message ("softmax pair: %.3g at R = 16, %.3g at R = 1024", e2[0], e2[1]);
  g_assert_cmpfloat (e2[1], >, 0.5 * e2[0]);
}

/* Against position: one row per position, a band over the draws. */
static void
test_error_against_position (void)
{
  g_autofree char *csv = tmp_path ("oe-pos.csv");
  g_autoptr (GHashTable) meta = NULL;
  g_autofree double *pos = NULL, *sd = NULL;
  gsize n;

  g_assert_cmpint (run_rpe (NULL, "curves output-error --checkpoint demo --method conv --length 96 "
                                  "--train-length 24 --causal --value-source sweep --draws 5 -o '%s'", csv), ==, 0);
  pos = csv_column (csv, "position", &n, &meta);
  sd = csv_column (csv, "error_sd", &n, NULL);
  g_assert_cmpuint (n, ==, 96);
  for (gsize m = 0; m < n; m++)
    g_assert_cmpfloat (pos[m], ==, (double) m);
  g_assert_cmpfloat (sd[50], >, 0.0);
  g_assert_cmpstr (g_hash_table_lookup (meta, "draws"), ==, "5");
  g_assert_cmpstr (g_hash_table_lookup (meta, "method"), ==, "conv");
  g_assert_nonnull (g_hash_table_lookup (meta, "error from N_train"));
}

/* The .npy is (3, Dv, N): reference, estimate, difference; the reference is the core's. */
static void
test_export_arrays (void)
{
  g_autofree char *npy = tmp_path ("outputs.npy");
  g_autofree char *vals = tmp_path ("values-nhd.npy");
  g_autofree char *npy2 = tmp_path ("outputs-from-file.npy");
  g_autoptr (RpeTensor) t = NULL;
  g_autoptr (RpeTensor) t2 = NULL;
  gsize n = 40, dv = 3, H = 4;
  float *v = g_new (float, n * H * dv);

  g_assert_cmpint (run_rpe (NULL, "export outputs --checkpoint demo --length 40 --channels 3 --impulse-positions 0,20,39 "
                                  "--head 2 -o '%s'", npy), ==, 0);
  t = rpe_npy_read (npy, NULL);
  g_assert_nonnull (t);
  g_assert_cmpuint (t->ndim, ==, 3);
  g_assert_cmpuint (t->shape[0], ==, 3);
  g_assert_cmpuint (t->shape[1], ==, dv);
  g_assert_cmpuint (t->shape[2], ==, n);
  for (gsize i = 0; i < n * dv; i++)
    g_assert_cmpfloat (t->data[2 * n * dv + i], ==, t->data[n * dv + i] - t->data[i]);
  /* softmax reference of impulses: each channel is a column of a row-stochastic map, and
   * the columns of all N impulses would sum to 1 per row; here every entry is in (0, 1) */
  for (gsize i = 0; i < n * dv; i++)
    g_assert_true (t->data[i] > 0.0f && t->data[i] < 1.0f);

  /* the same values from an (N, H, Dv) file: head 2's slice is used */
  for (gsize m = 0; m < n; m++)
    for (gsize h = 0; h < H; h++)
      for (gsize c = 0; c < dv; c++)
        v[(m * H + h) * dv + c] = h == 2 && ((c == 0 && m == 0) || (c == 1 && m == 20) || (c == 2 && m == 39)) ? 1.0f
                                  : h == 2 ? 0.0f : 7.0f;
  g_assert_true (rpe_npy_write (vals, v, 3, (gsize[]) { n, H, dv }, FALSE, NULL));
  g_assert_cmpint (run_rpe (NULL, "export outputs --checkpoint demo --values '%s' --head 2 -o '%s'", vals, npy2), ==, 0);
  t2 = rpe_npy_read (npy2, NULL);
  g_assert_nonnull (t2);
  g_assert_cmpmem (t->data, t->n_elements * sizeof (float), t2->data, t2->n_elements * sizeof (float));
  g_free (v);
}

static void
expect_usage (const char *what,
              const char *args,
              const char *message)
{
  g_autofree char *err = NULL;
  g_autofree char *out = tmp_path ("bad.png");

  g_assert_cmpint (run_rpe (&err, "%s %s -o '%s'", what, args, out), ==, 2);
  g_test_message ("%s %s: %s", what, args, err);
  if (message != NULL)
    g_assert_nonnull (strstr (err, message));
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
}

static void
test_bad_input (void)
{
  g_autofree char *nan_file = tmp_path ("nan-values.npy");
  g_autofree char *rank4 = tmp_path ("rank4.npy");
  g_autofree char *heads = tmp_path ("wrong-heads.npy");
  g_autofree char *err = NULL;
  float data[8] = { 1, 2, NAN, 4, 5, 6, 7, 8 };

  g_assert_true (rpe_npy_write (nan_file, data, 2, (gsize[]) { 4, 2 }, FALSE, NULL));
  data[2] = 3;
  g_assert_true (rpe_npy_write (rank4, data, 4, (gsize[]) { 1, 2, 2, 2 }, FALSE, NULL));
  g_assert_true (rpe_npy_write (heads, data, 3, (gsize[]) { 2, 2, 2 }, FALSE, NULL));
  expect_usage ("export outputs", "--checkpoint demo --value-source bogus", "--value-source");
  expect_usage ("export outputs", "--checkpoint demo --length 64 --impulse-positions 3,64", "--impulse-positions");
  expect_usage ("export outputs", "--checkpoint demo --impulse-positions 3,-1", "--impulse-positions");
  expect_usage ("export outputs", "--checkpoint demo --channels 0", "--channels");
  expect_usage ("export outputs", "--checkpoint demo --compare maybe", "--compare");
  expect_usage ("export outputs", "--checkpoint demo --draws 0", "--draws");
  expect_usage ("export outputs", "--checkpoint demo --head 99", "--head");
  expect_usage ("export outputs", "--checkpoint demo --channel 4", "--channel");
  expect_usage ("export outputs", "--checkpoint demo --realizations 0", "--realizations");
  expect_usage ("export outputs", "--checkpoint demo --feature-map tanh", NULL);
  g_autofree char *a1 = g_strdup_printf ("--checkpoint demo --values '%s'", nan_file);
  expect_usage ("export outputs", a1, "non-finite");
  g_autofree char *a2 = g_strdup_printf ("--checkpoint demo --values '%s'", rank4);
  expect_usage ("export outputs", a2, "(N, Dv) or (N, H, Dv)");
  g_autofree char *a3 = g_strdup_printf ("--checkpoint demo --values '%s'", heads);
  expect_usage ("export outputs", a3, "H = 4");
  expect_usage ("export outputs", "--checkpoint /nonexistent/model.safetensors", NULL);
  expect_usage ("curves output-error", "--checkpoint demo --realizations-list 4,x", "--realizations-list");
  expect_usage ("curves output-error", "--checkpoint demo --realizations-list 4,0", "R must be");
  expect_usage ("curves output-error", "--checkpoint demo --realizations 8 --realizations-list 4", "not both");
  g_assert_cmpint (run_rpe (&err, "export outputs --checkpoint demo"), ==, 2);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run_rpe (&err, "export outputs --checkpoint demo -o x.bmp"), ==, 2);
  g_clear_pointer (&err, g_free);
  /* an unwritable output is a failure of the output, 1 */
  g_assert_cmpint (run_rpe (&err, "export outputs --checkpoint demo --length 16 -o /nonexistent/dir/o.png"), ==, 1);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run_rpe (&err, "curves output-error --checkpoint demo --length 16 -o /nonexistent/dir/o.csv"), ==, 1);
  /* absurd sizes are refused before allocating */
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run_rpe (&err, "export outputs --checkpoint demo --length 4000000000 --channels 4096 -o /tmp/never.png"), ==, 2);
  g_test_message ("huge: %s", err);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  if (g_getenv ("RPE_CLI") == NULL)
    {
      g_printerr ("RPE_CLI is not set\n");
      return 77;
    }
  g_test_add_func ("/cli/outputs/error-against-r", test_error_against_r);
  g_test_add_func ("/cli/outputs/error-against-position", test_error_against_position);
  g_test_add_func ("/cli/outputs/export-arrays", test_export_arrays);
  g_test_add_func ("/cli/outputs/bad-input", test_bad_input);
  return g_test_run ();
}

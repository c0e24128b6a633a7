/* test-cli-outputs.c: `rpe export outputs` and `rpe curves output-error` end to end: the
 * arrays against a direct core computation, the 1/sqrt(R) slope of the unbiased pair, the
 * (N, H, Dv) values file taking the head, the size presets (page sizes, text, the heatmap
 * strips present), and bad input exiting with status 2 (1 for an unwritable output) with a
 * message. */
#include "config.h"

#include <cairo.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "rpe-npy.h"
#include "rpe-outputs.h"
#include "rpe-test-utils.h"

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
  g_autofree char *csv = rpe_test_tmp_path ("oe-r.csv");
  g_autofree char *csv2 = rpe_test_tmp_path ("oe-r-softmax.csv");
  g_autoptr (GHashTable) meta = NULL;
  g_autofree double *r = NULL, *e = NULL, *e2 = NULL;
  gsize n, n2;
  double slope;

  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "curves output-error --checkpoint demo --length 128 --train-length 32 "
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
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "curves output-error --checkpoint demo --length 128 --train-length 32 "
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
  g_autofree char *csv = rpe_test_tmp_path ("oe-pos.csv");
  g_autoptr (GHashTable) meta = NULL;
  g_autofree double *pos = NULL, *sd = NULL;
  gsize n;

  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "curves output-error --checkpoint demo --method conv --length 96 "
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

/* Without --train-length there is no split: the table gives the whole output's error (a
 * number, the mean of the per-position errors' draws) and says nothing "before" or "from"
 * a training length it was not given. */
static void
test_error_without_train_length (void)
{
  g_autofree char *csv = rpe_test_tmp_path ("oe-whole.csv");
  g_autoptr (GHashTable) meta = NULL;
  g_autofree double *pos = NULL;
  const char *whole;
  gsize n;

  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "curves output-error --checkpoint demo --length 48 --draws 3 -o '%s'",
                                     csv), ==, 0);
  pos = csv_column (csv, "position", &n, &meta);
  g_assert_cmpuint (n, ==, 48);
  g_assert_null (g_hash_table_lookup (meta, "error before N_train"));
  g_assert_null (g_hash_table_lookup (meta, "error from N_train"));
  g_assert_null (g_hash_table_lookup (meta, "N_train"));
  whole = g_hash_table_lookup (meta, "error over all positions");
  g_assert_nonnull (whole);
  g_assert_true (isfinite (g_ascii_strtod (whole, NULL)));
  g_assert_cmpfloat (g_ascii_strtod (whole, NULL), >, 0.0);
}

/* The .npy is (3, Dv, N): reference, estimate, difference; the reference is the core's. */
static void
test_export_arrays (void)
{
  g_autofree char *npy = rpe_test_tmp_path ("outputs.npy");
  g_autofree char *vals = rpe_test_tmp_path ("values-nhd.npy");
  g_autofree char *npy2 = rpe_test_tmp_path ("outputs-from-file.npy");
  g_autoptr (RpeTensor) t = NULL;
  g_autoptr (RpeTensor) t2 = NULL;
  gsize n = 40, dv = 3, H = 4;
  float *v = g_new (float, n * H * dv);

  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "export outputs --checkpoint demo --length 40 --channels 3 --impulse-positions 0,20,39 "
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
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "export outputs --checkpoint demo --values '%s' --head 2 -o '%s'", vals, npy2), ==, 0);
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
  g_autofree char *out = rpe_test_tmp_path ("bad.png");

  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "%s %s -o '%s'", what, args, out), ==, 2);
  g_test_message ("%s %s: %s", what, args, err);
  if (message != NULL)
    g_assert_nonnull (strstr (err, message));
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
}

static void
test_bad_input (void)
{
  g_autofree char *nan_file = rpe_test_tmp_path ("nan-values.npy");
  g_autofree char *rank4 = rpe_test_tmp_path ("rank4.npy");
  g_autofree char *heads = rpe_test_tmp_path ("wrong-heads.npy");
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
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "export outputs --checkpoint demo"), ==, 2);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "export outputs --checkpoint demo -o x.bmp"), ==, 2);
  g_clear_pointer (&err, g_free);
  /* an unwritable output is a failure of the output, 1 */
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "export outputs --checkpoint demo --length 16 -o /nonexistent/dir/o.png"), ==, 1);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "curves output-error --checkpoint demo --length 16 -o /nonexistent/dir/o.csv"), ==, 1);
  /* absurd sizes are refused before allocating */
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "export outputs --checkpoint demo --length 4000000000 --channels 4096 -o /tmp/never.png"), ==, 2);
  g_test_message ("huge: %s", err);
}


/* The output of a tool (NULL when it is not installed). */
static char *
tool_output (const char *tool,
             const char *path)
{
  g_autofree char *exe = g_find_program_in_path (tool);
  char *out = NULL;
  int status = 0;

  if (exe == NULL)
    return NULL;
  /* pdftotext writes to stdout with "-" */
  g_assert_true (g_spawn_sync (NULL, (char *[]) { exe, (char *) path, g_str_equal (tool, "pdftotext") ? (char *) "-" : NULL,
                                                  NULL }, NULL,
                               G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out, NULL, &status, NULL));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  return out;
}

/* A pixel of a heatmap image: not the white background, and either coloured (a viridis
 * or rdbu cell) or light (rdbu's centre), unlike text and frames (black, antialiased grey). */
static gboolean
heat_pixel (guint32 px)
{
  int r = (px >> 16) & 0xff, g = (px >> 8) & 0xff, b = px & 0xff;
  int spread = MAX (MAX (r, g), b) - MIN (MIN (r, g), b);

  if (r >= 254 && g >= 254 && b >= 254)
    return FALSE;
  return spread > 24 || (r > 200 && g > 200 && b > 200);
}

/* Bands of consecutive rows of a PNG where at least `fraction` of the pixels are heatmap
 * pixels, at least min_height rows high: the heatmap strips. */
static guint
heat_bands (const char *png,
            double      fraction,
            int         min_height)
{
  cairo_surface_t *s = cairo_image_surface_create_from_png (png);
  int w, h, stride, run = 0;
  const guint8 *data;
  guint bands = 0;

  g_assert_cmpint (cairo_surface_status (s), ==, CAIRO_STATUS_SUCCESS);
  cairo_surface_flush (s);
  w = cairo_image_surface_get_width (s);
  h = cairo_image_surface_get_height (s);
  stride = cairo_image_surface_get_stride (s);
  data = cairo_image_surface_get_data (s);
  for (int y = 0; y <= h; y++)
    {
      int count = 0;

      if (y < h)
        for (int x = 0; x < w; x++)
          count += heat_pixel (*(const guint32 *) (data + y * stride + 4 * x));
      if (y < h && count >= fraction * w)
        run++;
      else
        {
          if (run >= min_height)
            bands++;
          run = 0;
        }
    }
  cairo_surface_destroy (s);
  return bands;
}

/* --preset column | page | slide: the page sizes of the presets (pdfinfo), the labels in the
 * PDF's text (pdftotext), and the three heatmap strips present in the PNG at each (a layout
 * that squeezes a strip to nothing, as the slide preset once did, finds fewer bands). */
static void
test_presets (void)
{
  static const struct { const char *name; double w, h; double fraction; double text; } presets[] = {
    /* the image fraction of the width: a full-width strip at column and page... */
    { "column", 234.0, 0.0, 0.5, 8.0 },
    /* ...the left 60 % beside the plots on the wide figures */
    { "page", 486.0, 0.0, 0.3, 9.0 },
    { "slide", 959.976, 540.0, 0.3, 20.0 },
  };
  g_autofree char *err = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (presets); i++)
    {
      g_autofree char *pdf = g_strdup_printf ("%s/outputs-%s.pdf", rpe_test_tmpdir (), presets[i].name);
      g_autofree char *png = g_strdup_printf ("%s/outputs-%s.png", rpe_test_tmpdir (), presets[i].name);
      g_autofree char *info = NULL, *text = NULL;
      const char *size;
      double w = 0, h = 0;
      guint bands;

      g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "export outputs --checkpoint demo --length 64 --train-length 48 --preset %s -o '%s'",
                                presets[i].name, pdf), ==, 0);
      g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "export outputs --checkpoint demo --length 64 --train-length 48 --preset %s --dpi 100 -o '%s'",
                                presets[i].name, png), ==, 0);
      /* each strip's image at least two lines of its text high (100 dpi: 100 / 72 px a point),
       * not squashed to a line */
      bands = heat_bands (png, presets[i].fraction, (int) (2.0 * presets[i].text * 100.0 / 72.0));
      g_test_message ("%s: %u heatmap strips found in the PNG", presets[i].name, bands);
      g_assert_cmpuint (bands, ==, 3);

      info = tool_output ("pdfinfo", pdf);
      text = tool_output ("pdftotext", pdf);
      if (info == NULL || text == NULL)
        {
          g_test_message ("pdfinfo/pdftotext (poppler-utils) not installed: page size and text not checked");
          continue;
        }
      size = strstr (info, "Page size:");
      g_assert_nonnull (size);
      g_assert_cmpint (sscanf (size, "Page size: %lf x %lf", &w, &h), ==, 2);
      g_test_message ("%s: %g x %g pt", presets[i].name, w, h);
      g_assert_cmpfloat_with_epsilon (w, presets[i].w, 0.01);
      if (presets[i].h > 0.0)
        g_assert_cmpfloat_with_epsilon (h, presets[i].h, 0.01);
      else
        g_assert_cmpfloat (h, >, 0.5 * w);
      for (guint k = 0; k < 6; k++)
        {
          static const char *const labels[] = { "position m", "channel", "relative error per position",
                                                "exact softmax attention", "SPE linear attention", "difference" };

          if (strstr (text, labels[k]) == NULL)
            g_test_message ("%s: '%s' not in\n%s", presets[i].name, labels[k], text);
          g_assert_nonnull (strstr (text, labels[k]));
        }
      g_assert_nonnull (strstr (text, "N"));
    }
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "export outputs --checkpoint demo --preset poster -o x.pdf"), ==, 2);
  g_assert_nonnull (strstr (err, "--preset"));
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
  g_test_add_func ("/cli/outputs/error-without-train-length", test_error_without_train_length);
  g_test_add_func ("/cli/outputs/export-arrays", test_export_arrays);
  g_test_add_func ("/cli/outputs/bad-input", test_bad_input);
  g_test_add_func ("/cli/outputs/presets", test_presets);
  return g_test_run ();
}

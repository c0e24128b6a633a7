/* test-cli-export.c: `rpe export` end to end on the demo checkpoint (no display).
 *
 * RPE_CLI is the tool, RPE_DEMO_CHECKPOINT the demo.  Every view is exported to
 * PNG, SVG and PDF (and CSV for curves); the files are read back with
 * independent readers: cairo's PNG loader, libxml2, pdfinfo (poppler-utils).
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <cairo.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "rpe-npy.h"
#include "rpe-test-utils.h"

static const char *cli;
static const char *demo;

/* rpe with these words (NULL-terminated); its stderr to *out_err (nullable) */
#define run(out_err, ...) rpe_test_run_cli_args (NULL, out_err, __VA_ARGS__)

static void
check_png (const char *path, int w, int h)
{
  cairo_surface_t *s = cairo_image_surface_create_from_png (path);

  g_assert_cmpint (cairo_surface_status (s), ==, CAIRO_STATUS_SUCCESS);
  g_assert_cmpint (cairo_image_surface_get_width (s), ==, w);
  g_assert_cmpint (cairo_image_surface_get_height (s), ==, h);
  cairo_surface_destroy (s);
}

static void
check_svg (const char *path, double w, double h)
{
  xmlDoc *doc = xmlReadFile (path, NULL, XML_PARSE_NONET);
  xmlNode *root;
  xmlChar *ws, *hs;

  g_assert_nonnull (doc);
  root = xmlDocGetRootElement (doc);
  g_assert_cmpstr ((const char *) root->name, ==, "svg");
  ws = xmlGetProp (root, (const xmlChar *) "width");
  hs = xmlGetProp (root, (const xmlChar *) "height");
  g_assert_cmpfloat_with_epsilon (g_ascii_strtod ((const char *) ws, NULL), w, 1e-6);
  g_assert_cmpfloat_with_epsilon (g_ascii_strtod ((const char *) hs, NULL), h, 1e-6);
  xmlFree (ws);
  xmlFree (hs);
  xmlFreeDoc (doc);
}

static void
check_pdf (const char *path, int w, int h)
{
  g_autofree char *pdfinfo = g_find_program_in_path ("pdfinfo");
  g_autofree char *out = NULL;
  g_autofree char *want = NULL;
  g_autofree char *head = NULL;
  gsize len;
  int status;

  g_assert_true (g_file_get_contents (path, &head, &len, NULL));
  g_assert_true (len > 5 && memcmp (head, "%PDF-", 5) == 0);
  if (pdfinfo == NULL)
    return;   /* the format check above still ran; the page checks need poppler-utils */
  g_assert_true (g_spawn_sync (NULL, (char *[]) { pdfinfo, (char *) path, NULL }, NULL,
                               G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out, NULL, &status, NULL));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_true (g_regex_match_simple ("Pages:\\s+1\\n", out, 0, 0));
  want = g_strdup_printf ("Page size:\\s+%d x %d pts", w, h);
  g_assert_true (g_regex_match_simple (want, out, 0, 0));
}

/* Every view into PNG, SVG and PDF at an asked size. */
static void
test_views (gconstpointer data)
{
  const char *view = data;
  gboolean curve = g_str_equal (view, "profile") || g_str_equal (view, "error") || g_str_equal (view, "extrapolation");
  const char *length = g_str_equal (view, "error") ? "16" : "32";
  const char *ext[3] = { "png", "svg", "pdf" };

  for (int f = 0; f < 3; f++)
    {
      g_autofree char *name = g_strdup_printf ("%s.%s", view, ext[f]);
      g_autofree char *path = rpe_test_tmp_path (name);
      g_autofree char *err = NULL;
      int rc;

      if (g_str_equal (view, "extrapolation"))
        rc = run (&err, "export", view, "--checkpoint", demo, "--train-length", "16", "--max-length", "48",
                  "--width", "400", "--height", "300", "-o", path, NULL);
      else if (g_str_equal (view, "error"))
        rc = run (&err, "export", view, "--checkpoint", demo, "--length", length, "--realizations-list", "4,16,64",
                  "--seeds", "2", "--width", "400", "--height", "300", "-o", path, NULL);
      else
        rc = run (&err, "export", view, "--checkpoint", demo, "--length", length, "--train-length", "16",
                  "--width", "400", "--height", "300", "--colormap", "magma", "--title", "A title", "-o", path, NULL);
      if (rc != 0)
        g_error ("rpe export %s -o %s: exit %d: %s", view, path, rc, err);
      if (f == 0)
        check_png (path, 400, 300);
      else if (f == 1)
        check_svg (path, 400, 300);
      else
        check_pdf (path, 400, 300);
    }
  if (curve)
    {
      g_autofree char *name = g_strdup_printf ("%s.csv", view);
      g_autofree char *path = rpe_test_tmp_path (name);
      g_autofree char *text = NULL;
      int rc;

      if (g_str_equal (view, "profile"))
        rc = run (NULL, "export", view, "--checkpoint", demo, "--length", length, "-o", path, NULL);
      else if (g_str_equal (view, "error"))
        rc = run (NULL, "export", view, "--checkpoint", demo, "--length", length, "--realizations-list", "4,16",
                  "--seeds", "2", "-o", path, NULL);
      else
        rc = run (NULL, "export", view, "--checkpoint", demo, "--train-length", "16", "--max-length", "32",
                  "-o", path, NULL);
      g_assert_cmpint (rc, ==, 0);
      g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
      g_assert_nonnull (strstr (text, g_str_equal (view, "profile") ? "\ntau," : g_str_equal (view, "error") ? "\nR," : "\nm,"));
    }
}

/* The raw arrays of a template export are the ones `rpe compute template` writes. */
static void
test_npy_matches_compute (void)
{
  g_autofree char *a = rpe_test_tmp_path ("exported.npy");
  g_autofree char *b = rpe_test_tmp_path ("computed.npy");
  g_autoptr (GError) error = NULL;
  RpeTensor *ta, *tb;

  g_assert_cmpint (run (NULL, "export", "template", "--checkpoint", demo, "--length", "24", "--head", "2",
                        "--feature", "5", "-o", a, NULL), ==, 0);
  g_assert_cmpint (run (NULL, "compute", "template", "--checkpoint", demo, "--length", "24", "--head", "2",
                        "--feature", "5", "-o", b, NULL), ==, 0);
  ta = rpe_npy_read (a, &error);
  g_assert_no_error (error);
  tb = rpe_npy_read (b, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (ta->ndim, ==, 2);
  g_assert_cmpuint (ta->shape[0], ==, 24);
  g_assert_cmpuint (ta->shape[1], ==, 24);
  g_assert_true (memcmp (ta->data, tb->data, 24 * 24 * sizeof (float)) == 0);
  rpe_tensor_free (ta);
  rpe_tensor_free (tb);

  /* the grid of templates: (D, N, N) with D = 16 for the demo */
  g_assert_cmpint (run (NULL, "export", "templates", "--checkpoint", demo, "--length", "8", "-o", a, NULL), ==, 0);
  ta = rpe_npy_read (a, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (ta->ndim, ==, 3);
  g_assert_cmpuint (ta->shape[0], ==, 16);
  rpe_tensor_free (ta);
}

static void
test_all_heads (void)
{
  g_autofree char *dir = rpe_test_tmp_path ("heads");
  g_autofree char *pattern = g_build_filename (dir, "attn-h{head}.png", NULL);
  g_autofree char *literal = NULL;
  g_autofree char *err = NULL;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_cmpint (run (NULL, "export", "attention", "--checkpoint", demo, "--length", "16", "--all-heads",
                        "--width", "200", "--height", "160", "-o", pattern, NULL), ==, 0);
  for (int h = 0; h < 4; h++)
    {
      g_autofree char *name = g_strdup_printf ("attn-h%d.png", h);
      g_autofree char *path = g_build_filename (dir, name, NULL);

      check_png (path, 200, 160);
    }
  literal = g_build_filename (dir, "attn-h{head}.png", NULL);
  g_assert_false (g_file_test (literal, G_FILE_TEST_EXISTS));
  {
    GDir *d = g_dir_open (dir, 0, NULL);
    int count = 0;

    while (g_dir_read_name (d) != NULL)
      count++;
    g_dir_close (d);
    g_assert_cmpint (count, ==, 4);   /* the demo has H = 4, nothing else was left */
  }
  /* --all-heads without {head} is a usage error */
  g_assert_cmpint (run (&err, "export", "attention", "--checkpoint", demo, "--length", "16", "--all-heads",
                        "-o", "x.png", NULL), ==, 2);
  g_assert_nonnull (strstr (err, "{head}"));
}

/* Bad usage exits 2 and keeps an existing output; a write failure exits 1. */
static void
test_bad_usage (void)
{
  g_autofree char *path = rpe_test_tmp_path ("keep.png");
  g_autofree char *missing = rpe_test_tmp_path ("no-such-dir/fig.png");
  g_autofree char *text = NULL;

  g_assert_true (g_file_set_contents (path, "keep", 4, NULL));
  g_assert_cmpint (run (NULL, "export", "nosuchview", "-o", path, NULL), ==, 2);
  g_assert_cmpint (run (NULL, "export", "attention", "--colormap", "jet", "-o", path, NULL), ==, 2);
  g_assert_cmpint (run (NULL, "export", "attention", "--dpi", "1", "-o", path, NULL), ==, 2);
  g_assert_cmpint (run (NULL, "export", "attention", "--length", "16", "-o", "fig.bmp", NULL), ==, 2);
  g_assert_cmpint (run (NULL, "export", "attention", "--length", "16", NULL), ==, 2);
  g_assert_cmpint (run (NULL, "export", "attention", "--head", "99", "--checkpoint", demo, "-o", path, NULL), ==, 2);
  g_assert_cmpint (run (NULL, "export", "attention", "--no-such-option", "-o", path, NULL), ==, 2);
  g_assert_cmpint (run (NULL, "export", "profile", "--models", "nosuchmodel", "-o", path, NULL), ==, 2);
  g_assert_cmpint (run (NULL, "export", "templates", "--checkpoint", demo, "-o", "t.csv", NULL), ==, 2);
  /* the colour scale: a known name, its value only with it and in range, heatmap views only */
  g_assert_cmpint (run (NULL, "export", "attention", "--color-scale", "cubic", "-o", path, NULL), ==, 2);
  g_assert_cmpint (run (NULL, "export", "attention", "--gamma", "0.3", "-o", path, NULL), ==, 2);
  g_assert_cmpint (run (NULL, "export", "attention", "--color-scale", "power", "--gamma", "50", "-o", path, NULL), ==, 2);
  g_assert_cmpint (run (NULL, "export", "attention", "--color-scale", "percentile", "--percentile", "20", "-o", path,
                        NULL), ==, 2);
  g_assert_cmpint (run (NULL, "export", "attention", "--color-scale", "log", "--attention-transform", "-o", path,
                        NULL), ==, 2);
  g_assert_cmpint (run (NULL, "export", "error", "--color-scale", "log", "-o", path, NULL), ==, 2);
  g_assert_cmpint (run (NULL, "export", "outputs", "--color-scale", "attention", "-o", path, NULL), !=, 0);
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_assert_cmpstr (text, ==, "keep");
  g_assert_cmpint (run (NULL, "export", "template", "--checkpoint", demo, "--length", "8", "-o", missing, NULL), ==, 1);
}

int
main (int argc, char **argv)
{
  static const char *views[] = { "templates", "template", "attention", "spe-vs-rpe", "profile", "error",
                                 "extrapolation" };

  g_test_init (&argc, &argv, NULL);
  cli = g_getenv ("RPE_CLI");
  demo = g_getenv ("RPE_DEMO_CHECKPOINT");
  if (cli == NULL || demo == NULL)
    {
      g_test_message ("RPE_CLI and RPE_DEMO_CHECKPOINT must be set (meson test does)");
      return 77;
    }
  if (g_getenv ("G_TEST_SRCDIR") != NULL)
    {
      /* for sanitizer builds: fontconfig's cache is never freed before exit */
      g_autofree char *supp = g_build_filename (g_getenv ("G_TEST_SRCDIR"), "test-ui-lsan.supp", NULL);
      g_autofree char *lsan = g_strdup_printf ("print_suppressions=0:suppressions=%s", supp);
      g_setenv ("LSAN_OPTIONS", lsan, FALSE);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (views); i++)
    {
      g_autofree char *name = g_strdup_printf ("/cli/export/view/%s", views[i]);
      g_test_add_data_func (name, views[i], test_views);
    }
  g_test_add_func ("/cli/export/npy-matches-compute", test_npy_matches_compute);
  g_test_add_func ("/cli/export/all-heads", test_all_heads);
  g_test_add_func ("/cli/export/bad-usage", test_bad_usage);
  return g_test_run ();
}

/* test-cli-compare.c: `rpe export compare-templates | compare-attention | overview` (no display).
 *
 * The comparison's arrays (.npy (3, N, N): A, B, A - B) are checked against two independent
 * single exports (`rpe export template | attention`, another code path of the tool) element by
 * element; every overview cell (l, h) against `rpe export template --layer l --head h`.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <cairo.h>

#include "rpe-npy.h"
#include "rpe-test-utils.h"

static const char *cli;

/* rpe with these words (NULL-terminated); its stderr to *out_err (nullable) */
#define run(out_err, ...) rpe_test_run_cli_args (NULL, out_err, __VA_ARGS__)

static RpeTensor *
load (const char *path)
{
  g_autoptr (GError) error = NULL;
  RpeTensor *t = rpe_npy_read (path, &error);

  g_assert_no_error (error);
  g_assert_nonnull (t);
  return t;
}

/* c (3, N, N) against the single exports a and b (N, N): c0 = a, c1 = b, c2 = a - b. */
static void
check_triptych (const RpeTensor *c,
                const RpeTensor *a,
                const RpeTensor *b,
                double           tol)
{
  gsize nn = a->shape[0] * a->shape[1];
  double worst = 0.0, diff_norm = 0.0;

  g_assert_cmpuint (c->ndim, ==, 3);
  g_assert_cmpuint (c->shape[0], ==, 3);
  g_assert_cmpuint (a->ndim, ==, 2);
  g_assert_cmpuint (c->shape[1], ==, a->shape[0]);
  g_assert_cmpuint (c->shape[2], ==, a->shape[1]);
  g_assert_cmpuint (b->shape[0] * b->shape[1], ==, nn);
  for (gsize i = 0; i < nn; i++)
    {
      /* the difference rounded to float, as an array subtraction in NumPy gives it */
      float d = a->data[i] - b->data[i];

      worst = fmax (worst, fabs (c->data[i] - a->data[i]));
      worst = fmax (worst, fabs (c->data[nn + i] - b->data[i]));
      worst = fmax (worst, fabs (c->data[2 * nn + i] - d));
      diff_norm = fmax (diff_norm, fabs (d));
    }
  g_assert_cmpfloat (worst, <=, tol);
  g_assert_cmpfloat (diff_norm, >, 1e-3);   /* the two sides really differ */
}

static void
test_templates_heads (void)
{
  g_autofree char *c = rpe_test_tmp_path ("cmp-heads.npy"), *a = rpe_test_tmp_path ("cmp-h0.npy"), *b = rpe_test_tmp_path ("cmp-h2.npy");
  g_autoptr (RpeTensor) tc = NULL, ta = NULL, tb = NULL;

  g_assert_cmpint (run (NULL, "export", "compare-templates", "--checkpoint", "demo:conv-spe", "--head", "0",
                        "--feature", "3", "--length", "40", "--b-head", "2", "-o", c, NULL), ==, 0);
  g_assert_cmpint (run (NULL, "export", "template", "--checkpoint", "demo:conv-spe", "--head", "0", "--feature", "3",
                        "--length", "40", "-o", a, NULL), ==, 0);
  g_assert_cmpint (run (NULL, "export", "template", "--checkpoint", "demo:conv-spe", "--head", "2", "--feature", "3",
                        "--length", "40", "-o", b, NULL), ==, 0);
  tc = load (c);
  ta = load (a);
  tb = load (b);
  check_triptych (tc, ta, tb, 0.0);
}

static void
test_templates_layers (void)
{
  g_autofree char *c = rpe_test_tmp_path ("cmp-layers.npy"), *a = rpe_test_tmp_path ("cmp-l0.npy"), *b = rpe_test_tmp_path ("cmp-l1.npy");
  g_autoptr (RpeTensor) tc = NULL, ta = NULL, tb = NULL;

  /* A: layer 0's gate (the default), B: layer 1's */
  g_assert_cmpint (run (NULL, "export", "compare-templates", "--checkpoint", "demo:sine-spe", "--layer", "0",
                        "--head", "1", "--length", "32", "--b-layer", "1", "-o", c, NULL), ==, 0);
  g_assert_cmpint (run (NULL, "export", "template", "--checkpoint", "demo:sine-spe", "--layer", "0", "--head", "1",
                        "--feature", "0", "--length", "32", "-o", a, NULL), ==, 0);
  g_assert_cmpint (run (NULL, "export", "template", "--checkpoint", "demo:sine-spe", "--layer", "1", "--head", "1",
                        "--feature", "0", "--length", "32", "-o", b, NULL), ==, 0);
  tc = load (c);
  ta = load (a);
  tb = load (b);
  check_triptych (tc, ta, tb, 0.0);
}

static void
test_attention_methods (void)
{
  g_autofree char *c = rpe_test_tmp_path ("cmp-att.npy"), *a = rpe_test_tmp_path ("cmp-exact.npy"), *b = rpe_test_tmp_path ("cmp-spe.npy");
  g_autoptr (RpeTensor) tc = NULL, ta = NULL, tb = NULL;

  /* A: exact RPE, B: the SPE estimate (R = 32, seed 3), causal */
  g_assert_cmpint (run (NULL, "export", "compare-attention", "--checkpoint", "demo", "--head", "1", "--length", "48",
                        "--exact", "--causal", "--realizations", "32", "--seed", "3", "--b-method", "spe", "-o", c,
                        NULL), ==, 0);
  g_assert_cmpint (run (NULL, "export", "attention", "--checkpoint", "demo", "--head", "1", "--length", "48",
                        "--exact", "--causal", "--realizations", "32", "--seed", "3", "-o", a, NULL), ==, 0);
  g_assert_cmpint (run (NULL, "export", "attention", "--checkpoint", "demo", "--head", "1", "--length", "48",
                        "--causal", "--realizations", "32", "--seed", "3", "-o", b, NULL), ==, 0);
  tc = load (c);
  ta = load (a);
  tb = load (b);
  /* attention weights in [0, 1] by two summation orders: float rounding */
  check_triptych (tc, ta, tb, 1e-6);
}

static void
test_overview_cells (void)
{
  g_autofree char *ov = rpe_test_tmp_path ("overview.npy");
  g_autoptr (RpeTensor) t = NULL;

  g_assert_cmpint (run (NULL, "export", "overview", "--checkpoint", "demo:sine-spe", "--feature", "5", "--length", "24",
                        "-o", ov, NULL), ==, 0);
  t = load (ov);
  g_assert_cmpuint (t->ndim, ==, 3);
  g_assert_cmpuint (t->shape[0], ==, 2 * 4);   /* 2 layers x 4 heads */
  g_assert_cmpuint (t->shape[1], ==, 24);
  for (int l = 0; l < 2; l++)
    for (int h = 0; h < 4; h++)
      {
        g_autofree char *one = rpe_test_tmp_path ("overview-cell.npy");
        g_autofree char *ls = g_strdup_printf ("%d", l), *hs = g_strdup_printf ("%d", h);
        g_autoptr (RpeTensor) cell = NULL;
        const float *got = t->data + (gsize) (l * 4 + h) * 24 * 24;

        g_assert_cmpint (run (NULL, "export", "template", "--checkpoint", "demo:sine-spe", "--layer", ls, "--head", hs,
                              "--feature", "5", "--length", "24", "-o", one, NULL), ==, 0);
        cell = load (one);
        for (gsize i = 0; i < 24 * 24; i++)
          g_assert_cmpfloat (got[i], ==, cell->data[i]);
      }
}

static void
test_pictures (void)
{
  g_autofree char *png = rpe_test_tmp_path ("cmp.png"), *svg = rpe_test_tmp_path ("ov.svg");
  cairo_surface_t *s;

  g_assert_cmpint (run (NULL, "export", "compare-attention", "--checkpoint", "demo", "--length", "40", "--b-head", "3",
                        "--width", "900", "--height", "300", "-o", png, NULL), ==, 0);
  s = cairo_image_surface_create_from_png (png);
  g_assert_cmpint (cairo_surface_status (s), ==, CAIRO_STATUS_SUCCESS);
  g_assert_cmpint (cairo_image_surface_get_width (s), ==, 900);
  cairo_surface_destroy (s);
  g_assert_cmpint (run (NULL, "export", "overview", "--checkpoint", "demo", "--cells", "attention", "--length", "32",
                        "-o", svg, NULL), ==, 0);
  g_assert_true (g_file_test (svg, G_FILE_TEST_IS_REGULAR));
}

/* The colour scale of the heatmap views applies to A and B (and to overview cells): a log scale
 * redraws a different picture than the linear one, the same options as `rpe export attention`
 * are refused the same way. */
static void
test_color_scale (void)
{
  g_autofree char *lin = rpe_test_tmp_path ("cmp-lin.png"), *log = rpe_test_tmp_path ("cmp-log.png");
  g_autofree char *log2 = rpe_test_tmp_path ("cmp-log2.png"), *ov = rpe_test_tmp_path ("ov-pct.png");
  g_autofree char *err = NULL;
  int delta = 0;

  g_assert_cmpint (run (NULL, "export", "compare-attention", "--checkpoint", "demo", "--length", "40", "--b-head", "3",
                        "-o", lin, NULL), ==, 0);
  g_assert_cmpint (run (NULL, "export", "compare-attention", "--checkpoint", "demo", "--length", "40", "--b-head", "3",
                        "--color-scale", "log", "-o", log, NULL), ==, 0);
  g_assert_cmpfloat (rpe_test_png_difference (lin, log, &delta), >, 0.01);
  /* the same log figure again: the same pixels */
  g_assert_cmpint (run (NULL, "export", "compare-attention", "--checkpoint", "demo", "--length", "40", "--b-head", "3",
                        "--color-scale", "log", "-o", log2, NULL), ==, 0);
  g_assert_cmpfloat (rpe_test_png_difference (log, log2, &delta), ==, 0.0);
  g_assert_cmpint (run (NULL, "export", "overview", "--checkpoint", "demo", "--cells", "attention", "--length", "32",
                        "--color-scale", "percentile", "--percentile", "95", "-o", ov, NULL), ==, 0);
  g_assert_cmpint (run (&err, "export", "compare-attention", "--checkpoint", "demo", "--b-head", "3",
                        "--color-scale", "sepia", "-o", log2, NULL), ==, 2);
  g_assert_nonnull (strstr (err, "--color-scale"));
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run (&err, "export", "compare-attention", "--checkpoint", "demo", "--b-head", "3",
                        "--gamma", "2", "-o", log2, NULL), ==, 2);
  g_assert_nonnull (strstr (err, "--gamma"));
}

/* The overview draws every layer and head: the reader's note on the layer and gate it would
 * choose for one (which a one-layer command prints, with the options that choose) is not said. */
static void
test_overview_quiet (void)
{
  g_autofree char *png = rpe_test_tmp_path ("overview-quiet.png");
  g_autofree char *npy = rpe_test_tmp_path ("template-noted.npy");
  g_autofree char *err = NULL;

  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "compute template --checkpoint demo:conv-spe --length 16 -o '%s'", npy),
                   ==, 0);
  g_assert_nonnull (strstr (err, "using layer 0"));
  g_assert_nonnull (strstr (err, "--layer"));
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (rpe_test_run_cli (NULL, &err, "export overview --checkpoint demo:conv-spe --length 64 -o '%s'", png),
                   ==, 0);
  g_assert_cmpstr (err, ==, "");
}

static void
test_bad_usage (void)
{
  g_autofree char *out = rpe_test_tmp_path ("bad.npy");
  g_autofree char *err = NULL;

  /* nothing says what B is */
  g_assert_cmpint (run (&err, "export", "compare-templates", "--checkpoint", "demo", "-o", out, NULL), ==, 2);
  g_assert_nonnull (strstr (err, "--b-"));
  g_clear_pointer (&err, g_free);
  /* an option the view does not use */
  g_assert_cmpint (run (&err, "export", "compare-templates", "--checkpoint", "demo", "--b-head", "1", "--noise", "z.npy",
                        "-o", out, NULL), ==, 2);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run (&err, "export", "overview", "--checkpoint", "demo", "--b-head", "1", "-o", out, NULL), ==, 2);
  g_clear_pointer (&err, g_free);
  /* out of range, unknown method, a layer without a checkpoint, a missing B checkpoint */
  g_assert_cmpint (run (&err, "export", "compare-templates", "--checkpoint", "demo", "--b-head", "9", "-o", out, NULL), ==, 2);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run (&err, "export", "compare-attention", "--checkpoint", "demo", "--b-method", "magic", "-o", out,
                        NULL), ==, 2);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run (&err, "export", "compare-templates", "--b-layer", "1", "-o", out, NULL), ==, 2);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run (&err, "export", "compare-templates", "--checkpoint", "demo", "--b-checkpoint",
                        "/nonexistent/ckpt.safetensors", "-o", out, NULL), !=, 0);
  g_assert_nonnull (strstr (err, "ckpt.safetensors"));
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run (&err, "export", "overview", "-o", out, NULL), ==, 2);
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  cli = g_getenv ("RPE_CLI");
  g_assert_nonnull (cli);
  g_test_add_func ("/cli/compare/templates-heads", test_templates_heads);
  g_test_add_func ("/cli/compare/templates-layers", test_templates_layers);
  g_test_add_func ("/cli/compare/attention-methods", test_attention_methods);
  g_test_add_func ("/cli/compare/overview-cells", test_overview_cells);
  g_test_add_func ("/cli/compare/pictures", test_pictures);
  g_test_add_func ("/cli/compare/color-scale", test_color_scale);
  g_test_add_func ("/cli/compare/overview-quiet", test_overview_quiet);
  g_test_add_func ("/cli/compare/bad-usage", test_bad_usage);
  return g_test_run ();
}

/* test-cli-compare.c: `rpe export compare-templates | compare-attention | overview` (no display).
 *
 * The comparison's arrays (.npy (3, N, N): A, B, A - B) are checked against two independent
 * single exports (`rpe export template | attention`, another code path of the tool) element by
 * element; every overview cell (l, h) against `rpe export template --layer l --head h`.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
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

/* B on a capture (--b-content) is what `rpe export attention` draws of that capture: its other
 * layer, another model's capture under that model, a hand-made capture without a fingerprint. */
static void
test_capture_b (void)
{
  g_autofree char *c = rpe_test_tmp_path ("cmp-cap.npy"), *a = rpe_test_tmp_path ("cmp-cap-a.npy");
  g_autofree char *b = rpe_test_tmp_path ("cmp-cap-b.npy"), *hand = rpe_test_tmp_path ("cmp-hand.npz");
  g_autofree char *err = NULL;
  g_autoptr (RpeTensor) tc = NULL, ta = NULL, tb = NULL;

  /* the other layer of the same capture: B = module layer 1 on captured layer 1 */
  g_assert_cmpint (run (NULL, "export", "compare-attention", "--checkpoint", "demo:conv-spe", "--content",
                        "demo:conv-spe", "--layer", "0", "--exact", "--b-content", "demo:conv-spe", "--b-layer", "1",
                        "-o", c, NULL),
                   ==, 0);
  g_assert_cmpint (run (NULL, "export", "attention", "--checkpoint", "demo:conv-spe", "--content", "demo:conv-spe",
                        "--layer", "0", "--exact", "-o", a, NULL),
                   ==, 0);
  g_assert_cmpint (run (NULL, "export", "attention", "--checkpoint", "demo:conv-spe", "--content", "demo:conv-spe",
                        "--layer", "1", "--exact", "-o", b, NULL),
                   ==, 0);
  tc = load (c);
  ta = load (a);
  tb = load (b);
  check_triptych (tc, ta, tb, 1e-5);
  g_clear_pointer (&tc, rpe_tensor_free);
  g_clear_pointer (&ta, rpe_tensor_free);
  g_clear_pointer (&tb, rpe_tensor_free);

  /* another model on its own capture: A the sine SPE demo, B the conv SPE demo */
  g_assert_cmpint (run (NULL, "export", "compare-attention", "--checkpoint", "demo:sine-spe", "--content",
                        "demo:sine-spe", "--layer", "0", "--exact", "--b-checkpoint", "demo:conv-spe", "--b-content",
                        "demo:conv-spe", "-o", c, NULL),
                   ==, 0);
  g_assert_cmpint (run (NULL, "export", "attention", "--checkpoint", "demo:sine-spe", "--content", "demo:sine-spe",
                        "--layer", "0", "--exact", "-o", a, NULL),
                   ==, 0);
  g_assert_cmpint (run (NULL, "export", "attention", "--checkpoint", "demo:conv-spe", "--content", "demo:conv-spe",
                        "--layer", "0", "--exact", "-o", b, NULL),
                   ==, 0);
  tc = load (c);
  ta = load (a);
  tb = load (b);
  check_triptych (tc, ta, tb, 1e-5);
  g_clear_pointer (&tc, rpe_tensor_free);
  g_clear_pointer (&ta, rpe_tensor_free);
  g_clear_pointer (&tb, rpe_tensor_free);

  /* a hand-made capture (no fingerprint: said) of the module's shape, N = 256 as the demo's */
  rpe_test_write_capture (hand, 1, 256, 4, 16, 0, 5, NULL, NULL, NULL);
  g_assert_cmpint (run (&err, "export", "compare-attention", "--checkpoint", "demo:conv-spe", "--content",
                        "demo:conv-spe", "--layer", "0", "--exact", "--b-content", hand, "--b-layer", "0", "-o", c,
                        NULL),
                   ==, 0);
  g_assert_nonnull (strstr (err, "records no fingerprint"));
  g_assert_cmpint (run (NULL, "export", "attention", "--checkpoint", "demo:conv-spe", "--content", hand, "--layer", "0",
                        "--exact", "-o", b, NULL),
                   ==, 0);
  tc = load (c);
  ta = load (a); /* still the sine demo's A: only B is checked here */
  tb = load (b);
  {
    gsize  nn = tb->shape[0] * tb->shape[1];
    double worst = 0.0;

    g_assert_cmpuint (tc->shape[1] * tc->shape[2], ==, nn);
    for (gsize i = 0; i < nn; i++)
      worst = fmax (worst, fabs (tc->data[nn + i] - tb->data[i]));
    g_assert_cmpfloat (worst, <=, 1e-5);
  }
  g_remove (c);
  g_remove (a);
  g_remove (b);
  g_remove (hand);
}

/* The B map on a capture is the A map of a state given that capture directly (the SPE estimate:
 * the same engine, the same seed). */
static void
test_capture_b_is_a (void)
{
  g_autofree char *c = rpe_test_tmp_path ("cmp-capb.npy"), *d = rpe_test_tmp_path ("cmp-capa.npy");
  g_autoptr (RpeTensor) tc = NULL, td = NULL;
  gsize  nn;
  double worst = 0.0, apart = 0.0;

  g_assert_cmpint (run (NULL, "export", "compare-attention", "--checkpoint", "demo:conv-spe", "--content",
                        "demo:conv-spe", "--layer", "0", "--b-content", "demo:conv-spe", "--b-layer", "1", "-o", c,
                        NULL),
                   ==, 0);
  g_assert_cmpint (run (NULL, "export", "compare-attention", "--checkpoint", "demo:conv-spe", "--content",
                        "demo:conv-spe", "--layer", "1", "--b-head", "1", "-o", d, NULL),
                   ==, 0);
  tc = load (c);
  td = load (d);
  nn = tc->shape[1] * tc->shape[2];
  g_assert_cmpuint (td->shape[1] * td->shape[2], ==, nn);
  for (gsize i = 0; i < nn; i++)
    {
      worst = fmax (worst, fabs (tc->data[nn + i] - td->data[i]));
      apart = fmax (apart, fabs (tc->data[i] - tc->data[nn + i]));
    }
  g_assert_cmpfloat (worst, <=, 1e-6);
  g_assert_cmpfloat (apart, >, 1e-2); /* layer 0 and layer 1 attend differently */
  g_remove (c);
  g_remove (d);
}

/* `rpe ARGS` against an existing output: a non-zero exit, the message holds both needles, the
 * file is as it was. */
static void
refused_keeps (const char *out, const char *needle, const char *needle2, const char *format, ...)
{
  static const char before[] = "an earlier result that must survive";
  g_autofree char  *args = NULL, *err = NULL, *after = NULL;
  va_list           ap;
  int               rc;

  va_start (ap, format);
  args = g_strdup_vprintf (format, ap);
  va_end (ap);
  g_assert_true (g_file_set_contents (out, before, -1, NULL));
  rc = rpe_test_run_cli (NULL, &err, "%s --force -o '%s'", args, out);
  if (rc == 0 || strstr (err, needle) == NULL || (needle2 != NULL && strstr (err, needle2) == NULL))
    g_error ("rpe %s: exit %d, message '%s' (wanted a non-zero exit, '%s' and '%s')", args, rc, err, needle,
             needle2 != NULL ? needle2 : "");
  g_assert_true (g_file_get_contents (out, &after, NULL, NULL));
  g_assert_cmpstr (after, ==, before);
  g_remove (out);
}

static void
test_capture_b_hostile (void)
{
  g_autofree char *out = rpe_test_tmp_path ("cmp-kept.npy"), *other = rpe_test_tmp_path ("cmp-other.npz");
  const char      *a = "export compare-attention --checkpoint demo:sine-spe --content demo:sine-spe --layer 0";

  /* another model's capture under A's module, and A's capture under another model's */
  refused_keeps (out, "demo:conv-spe was made on another model than demo:sine-spe", NULL,
                 "%s --b-content demo:conv-spe", a);
  refused_keeps (out, "demo:sine-spe was made on another model than demo:conv-spe", NULL,
                 "%s --b-checkpoint demo:conv-spe", a);
  /* a capture of 2 heads of 8 features: both shapes named */
  rpe_test_write_capture (other, 2, 256, 2, 8, 0, 9, NULL, NULL, NULL);
  refused_keeps (out, "(256, 2, 8)", "(H, D) = (4, 16)", "%s --b-content '%s'", a, other);
  /* a layer the capture lacks */
  rpe_test_write_capture (other, 1, 256, 4, 16, 0, 9, NULL, NULL, NULL);
  refused_keeps (out, "no layer 1", "its layers: 0", "%s --b-content '%s' --b-layer 1 --b-checkpoint demo:sine-spe", a,
                 other);
  /* another length than A's */
  rpe_test_write_capture (other, 1, 40, 4, 16, 0, 9, NULL, NULL, NULL);
  refused_keeps (out, "256 x 256", "40 x 40", "%s --b-content '%s'", a, other);
  /* a file that is no capture, a missing one */
  g_assert_true (g_file_set_contents (other, "not a zip", -1, NULL));
  refused_keeps (out, "cmp-other.npz", NULL, "%s --b-content '%s'", a, other);
  refused_keeps (out, "missing.npz", NULL, "%s --b-content /nonexistent/missing.npz", a);
  /* templates do not depend on the content */
  refused_keeps (out, "--b-content", NULL,
                 "export compare-templates --checkpoint demo:sine-spe --b-content demo:sine-spe");
  refused_keeps (out, "templates do not depend", NULL,
                 "export compare-templates --checkpoint demo:sine-spe --content demo:sine-spe --b-head 1");
  g_remove (other);
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
  g_test_add_func ("/cli/compare/capture-b", test_capture_b);
  g_test_add_func ("/cli/compare/capture-b-is-a", test_capture_b_is_a);
  g_test_add_func ("/cli/compare/capture-b-hostile", test_capture_b_hostile);
  return g_test_run ();
}

/* test-ui-stress.c: the explorer under a storm of changes (Xvfb).
 *
 * A seeded random sequence of operations (RPE_STRESS_OPS, default 2000):
 * random valid values of every parameter (frequencies, phases, gains, conv
 * taps and length, gates, FastRPB weights, N, R, seed, head, feature, causal,
 * gated, method, SPE kind, feature map, template kind, content, LRPE choices,
 * N_train, colour map), view switches, exports to a temporary file, cancels,
 * the Export dialog opened and cancelled, the tensor browser and a malformed
 * checkpoint, each followed by at most one non-blocking main-loop iteration,
 * so requests pile up and are cancelled.  GLib test mode makes criticals and
 * warnings fatal.  Then: wait for idle; every view's figure equals the figure
 * of a fresh window given the same final parameters (pixels equal); the
 * resident memory after the run is within a bound of the memory after a
 * warm-up of 500 operations. */
#include "config.h"

#include <math.h>
#include <string.h>

#include <unistd.h>

#include <adwaita.h>
#include <glib/gstdio.h>

#include "rpe-colormap.h"
#include "rpe-error.h"
#include "rpe-test-utils.h"
#include "rpe-window-test.h"
#include "rpe-ui-test-utils.h"
#include "rpe-ui-wait.h"

#define WARMUP_OPS    500
#define MAX_N         64
#define MAX_R         32

/* Resident set size in bytes (/proc/self/statm). */
static double
rss_bytes (void)
{
  g_autofree char *text = NULL;
  unsigned long pages = 0, resident = 0;

  if (!g_file_get_contents ("/proc/self/statm", &text, NULL, NULL)
      || sscanf (text, "%lu %lu", &pages, &resident) != 2)
    return NAN;
  return (double) resident * (double) sysconf (_SC_PAGESIZE);
}

/* ------------------------------------------------------------- operations */

typedef struct
{
  RpeWindow        *window;
  RpeExplorerState *state;
  GRand            *rng;
  const char       *tmpdir;
  char             *malformed;
  guint             exports;
  guint             exports_ok;
  guint             cancels;
  guint             switches;
  guint             dialogs;
} Stress;

static double
uniform (Stress *s,
         double  lo,
         double  hi)
{
  return g_rand_double_range (s->rng, lo, hi);
}

static guint
pick (Stress *s,
      guint   n)
{
  return (guint) g_rand_int_range (s->rng, 0, (gint32) n);
}

static const RpeSpeParams *
active_params (Stress *s)
{
  return rpe_explorer_state_get_params (s->state, rpe_explorer_state_get_spe_kind (s->state));
}

static void
op_export (Stress *s)
{
  static const char *ext[] = { "png", "svg", "pdf", "npy", "csv" };
  g_autofree char *path = g_strdup_printf ("%s/stress-%u.%s", s->tmpdir, s->exports % 3, ext[pick (s, 5)]);
  g_autoptr (RpeFigureBundle) bundle = rpe_window_build_figure (s->window, rpe_window_get_view (s->window));
  g_autoptr (GError) error = NULL;
  gboolean ok = rpe_window_export_view (s->window, path, &error);

  s->exports++;
  if (ok)
    s->exports_ok++;
  /* it fails only for want of data or a format the view does not offer */
  if (!ok)
    g_assert_true (bundle == NULL || g_error_matches (error, RPE_ERROR, RPE_ERROR_INVALID_ARGUMENT));
  else
    g_assert_nonnull (bundle);
}

static void
op_dialog (Stress *s)
{
  RpeExportDialog *dialog;
  g_autofree char *path = g_strdup_printf ("%s/dialog.png", s->tmpdir);

  gtk_widget_activate_action (GTK_WIDGET (s->window), "win.export", NULL);
  dialog = rpe_window_get_export_dialog (s->window);
  if (dialog == NULL)
    return;
  s->dialogs++;
  rpe_export_dialog_set_path (dialog, path);
  if (pick (s, 2) == 0)
    {
      rpe_export_dialog_start (dialog);
      if (pick (s, 2) == 0)
        rpe_export_dialog_cancel_export (dialog);
      g_main_context_iteration (NULL, FALSE);
    }
  /* closed while it may still be exporting */
  gtk_window_destroy (GTK_WINDOW (dialog));
}

static void
one_op (Stress *s)
{
  const RpeSpeParams *p = active_params (s);
  guint op = pick (s, 100);
  gsize H = p != NULL ? p->n_heads : 1, D = p != NULL ? p->n_features : 1;

  if (op < 8)
    g_object_set (s->state, "length", 4 + pick (s, MAX_N - 3), NULL);
  else if (op < 14)
    g_object_set (s->state, "realizations", 1 + pick (s, MAX_R), NULL);
  else if (op < 18)
    g_object_set (s->state, "seed", pick (s, 1000), NULL);
  else if (op < 22)
    g_object_set (s->state, "head", pick (s, (guint) H), NULL);
  else if (op < 26)
    g_object_set (s->state, "feature", pick (s, (guint) D), NULL);
  else if (op < 28)
    g_object_set (s->state, "causal", pick (s, 2), NULL);
  else if (op < 30)
    g_object_set (s->state, "gated", pick (s, 2), NULL);
  else if (op < 34)
    g_object_set (s->state, "method", pick (s, RPE_EXPLORER_N_METHODS), NULL);
  else if (op < 36)
    g_object_set (s->state, "spe-kind", pick (s, 2), NULL);
  else if (op < 38)
    g_object_set (s->state, "feature-map", pick (s, RPE_FEATURE_DPFP + 1), NULL);
  else if (op < 40)
    g_object_set (s->state, "template-kind", pick (s, RPE_TEMPLATE_N_KINDS), NULL);
  else if (op < 42)
    g_object_set (s->state, "content", pick (s, 2), NULL);   /* unit or random; .npy needs a file */
  else if (op < 44)
    g_object_set (s->state, "lrpe-p", pick (s, RPE_LRPE_P_DCT + 1), "lrpe-lambda",
                  pick (s, RPE_LRPE_LAMBDA_PERMUTATION + 1), "lrpe-theta", pick (s, RPE_LRPE_THETA_C + 1), NULL);
  else if (op < 46)
    g_object_set (s->state, "train-length", pick (s, MAX_N + 1), NULL);
  else if (op < 47)
    g_object_set (s->state, "colormap", rpe_colormap_get_name (rpe_colormap_get (pick (s, RPE_COLORMAP_N_MAPS))), NULL);
  else if (op < 55)
    {
      const RpeSpeParams *sine = rpe_explorer_state_get_params (s->state, RPE_SPE_SINE);

      if (sine != NULL)
        g_assert_true (rpe_explorer_state_set_sine (s->state, pick (s, (guint) sine->n_heads),
                                                    pick (s, (guint) sine->n_features), pick (s, (guint) sine->n_sines),
                                                    uniform (s, 0.0, 0.5), uniform (s, -3.0, 3.0),
                                                    uniform (s, 0.0, 2.0), pick (s, 4) == 0));
    }
  else if (op < 61)
    {
      const RpeSpeParams *conv = rpe_explorer_state_get_params (s->state, RPE_SPE_CONV);

      if (conv != NULL)
        {
          float taps[64];
          gsize L = MIN (conv->kernel, G_N_ELEMENTS (taps));

          for (gsize j = 0; j < L; j++)
            taps[j] = (float) uniform (s, -1.0, 1.0);
          g_assert_true (rpe_explorer_state_set_conv_taps (s->state, pick (s, (guint) conv->n_heads),
                                                           pick (s, (guint) conv->n_features), pick (s, 2), taps, L,
                                                           pick (s, 4) == 0));
        }
    }
  else if (op < 62)
    g_assert_true (rpe_explorer_state_set_conv_length (s->state, 1 + pick (s, 24)));
  else if (op < 67)
    g_assert_true (rpe_explorer_state_set_gate (s->state, pick (s, (guint) H), pick (s, (guint) D),
                                                uniform (s, 0.0, 1.0), pick (s, 4) == 0));
  else if (op < 69)
    {
      float w[2 * RPE_EXPLORER_FASTRPB_TAPS - 1];

      for (gsize j = 0; j < G_N_ELEMENTS (w); j++)
        w[j] = (float) uniform (s, -0.5, 0.5);
      rpe_explorer_state_set_fastrpb_weights (s->state, w, G_N_ELEMENTS (w));
    }
  else if (op < 84)
    {
      rpe_window_set_view (s->window, pick (s, RPE_WINDOW_N_VIEWS));
      s->switches++;
    }
  else if (op < 88)
    op_export (s);
  else if (op < 94)
    {
      rpe_window_cancel (s->window);
      s->cancels++;
    }
  else if (op < 95)
    op_dialog (s);
  else if (op < 96)
    gtk_widget_activate_action (GTK_WIDGET (s->window), "win.browse-tensors", NULL);
  else if (op < 97)
    {
      g_autoptr (GFile) file = g_file_new_for_path (s->malformed);

      rpe_window_open_file (s->window, file);
    }
  else if (op < 98)
    rpe_window_set_sidebar_visible (s->window, pick (s, 2));
  else
    {
      /* the running jobs finish undisturbed */
      rpe_test_iterate_until (rpe_test_window_idle, s->window);
    }
}

/* ------------------------------------------------------------ comparison */

/* Gives state the parameters of from: the modules, the FastRPB weights, then
 * every writable property. */
static void
copy_state (RpeExplorerState *from,
            RpeExplorerState *to)
{
  rpe_test_copy_state (from, to);
  g_assert_cmpuint (rpe_explorer_state_get_length (to), ==, rpe_explorer_state_get_length (from));
}

/* ------------------------------------------------------------------ test */

static void
test_stress (void)
{
  const char *env = g_getenv ("RPE_STRESS_OPS");
  guint ops = env != NULL ? (guint) g_ascii_strtoull (env, NULL, 10) : 2000;
  static const char garbage[] = "\x10\x00\x00\x00\x00\x00\x00\x00{\"a\": [1, 2";
  Stress s = { 0 };
  RpeWindow *fresh;
  gint64 t0, t1;
  double rss_warm = NAN, rss_end;

  s.window = rpe_window_new (NULL);
  s.state = rpe_window_get_state (s.window);
  s.rng = g_rand_new_with_seed (20210712);
  s.tmpdir = rpe_test_tmpdir ();
  s.malformed = g_build_filename (s.tmpdir, "malformed.safetensors", NULL);
  g_assert_true (g_file_set_contents (s.malformed, garbage, sizeof garbage - 1, NULL));
  gtk_window_set_default_size (GTK_WINDOW (s.window), 1280, 800);
  g_object_set (s.state, "length", 32, "realizations", 16, NULL);
  gtk_window_present (GTK_WINDOW (s.window));
  rpe_test_settle (s.window, TRUE);

  t0 = g_get_monotonic_time ();
  for (guint i = 0; i < ops; i++)
    {
      one_op (&s);
      g_main_context_iteration (NULL, FALSE);
      if (i + 1 == MIN (WARMUP_OPS, ops))
        {
          rpe_test_settle (s.window, TRUE);
          rss_warm = rss_bytes ();
        }
    }
  rpe_test_settle (s.window, TRUE);
  t1 = g_get_monotonic_time ();
  rss_end = rss_bytes ();
  g_test_message ("%u operations in %.1f s: %u view switches, %u exports (%u written), %u cancels, "
                  "%u dialogs; N = %zu, R = %zu, method %s", ops, (t1 - t0) / 1e6, s.switches, s.exports,
                  s.exports_ok, s.cancels, s.dialogs, rpe_explorer_state_get_length (s.state),
                  rpe_explorer_state_get_r (s.state), rpe_explorer_method_name (rpe_explorer_state_get_method (s.state)));
  g_test_message ("resident memory: %.1f MB after %u warm-up operations, %.1f MB at the end (%+.1f MB)",
                  rss_warm / 1048576.0, MIN (WARMUP_OPS, ops), rss_end / 1048576.0, (rss_end - rss_warm) / 1048576.0);
  /* the views hold one result each and the jobs free theirs: no growth beyond
   * allocator noise (glibc keeps freed arenas; the sanitizers' quarantine
   * holds up to 256 MB, so the bound is only asserted without them) */
#if !defined(__SANITIZE_ADDRESS__)
  if (isfinite (rss_warm) && strstr (g_getenv ("LD_PRELOAD") != NULL ? g_getenv ("LD_PRELOAD") : "", "vgpreload") == NULL)
    g_assert_cmpfloat (rss_end - rss_warm, <, 48.0 * 1048576.0);
#endif

  /* the final images equal those of a fresh window on the same parameters */
  fresh = rpe_window_new (NULL);
  gtk_window_set_default_size (GTK_WINDOW (fresh), 1280, 800);
  copy_state (s.state, rpe_window_get_state (fresh));
  gtk_window_present (GTK_WINDOW (fresh));
  for (guint v = 0; v < RPE_WINDOW_N_VIEWS; v++)
    {
      g_autoptr (RpeFigureBundle) a = NULL;
      g_autoptr (RpeFigureBundle) b = NULL;
      cairo_surface_t *sa, *sb;

      rpe_window_set_view (s.window, v);
      rpe_window_set_view (fresh, v);
      rpe_test_settle (s.window, TRUE);
      rpe_test_settle (fresh, TRUE);
      a = rpe_window_build_figure (s.window, v);
      b = rpe_window_build_figure (fresh, v);
      g_assert_nonnull (a);
      g_assert_nonnull (b);
      g_assert_cmpstr (a->fig.title, ==, b->fig.title);
      sa = rpe_test_render_bundle (a);
      sb = rpe_test_render_bundle (b);
      g_test_message ("view %u: %d x %d, %s", v, cairo_image_surface_get_width (sa),
                      cairo_image_surface_get_height (sa), rpe_test_surfaces_equal (sa, sb) ? "equal" : "DIFFERENT");
      g_assert_true (rpe_test_surfaces_equal (sa, sb));
      cairo_surface_destroy (sa);
      cairo_surface_destroy (sb);
    }
  gtk_window_destroy (GTK_WINDOW (fresh));
  gtk_window_destroy (GTK_WINDOW (s.window));
  rpe_test_wait_jobs ();
  g_rand_free (s.rng);
  g_unlink (s.malformed);
  g_free (s.malformed);
}

int
main (int   argc,
      char *argv[])
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();

  g_test_add_func ("/ui/stress/random-operations", test_stress);

  return g_test_run ();
}

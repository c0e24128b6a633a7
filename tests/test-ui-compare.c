/* test-ui-compare.c: the window's Compare and Overview pages and the watch on the opened file.
 *
 * References are independent of the compare code: templates straight from rpe_spe_template on
 * parameters loaded by the checkpoint reader.  Waits are for events (a result for the current
 * state serial, a counter of the watch's signals), never for a fixed time.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <adwaita.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "rpe-alloc.h"
#include "rpe-checkpoint.h"
#include "rpe-demos.h"
#include "rpe-npy.h"
#include "rpe-window-test.h"
#include "rpe-test-utils.h"
#include "rpe-ui-test-utils.h"
#include "rpe-ui-wait.h"

static gboolean
not_loading (gpointer data)
{
  return !rpe_window_is_loading (RPE_WINDOW (data));
}

static RpeWindow *
new_window (void)
{
  RpeWindow *window = rpe_window_new (NULL);

  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  gtk_window_present (GTK_WINDOW (window));
  rpe_test_wait_frames (GTK_WIDGET (window), 1);
  rpe_test_iterate_until (rpe_test_window_idle, window);
  return window;
}

static gboolean
comparison_current (gpointer data)
{
  RpeWindow *window = data;
  RpeCompareView *view = RPE_COMPARE_VIEW (rpe_window_get_compare_view (window));
  RpeComparison *c = rpe_compare_view_get_result (view);

  return !rpe_figure_page_is_busy (RPE_FIGURE_PAGE (view)) && c != NULL
         && c->serial == rpe_explorer_state_get_serial (rpe_window_get_state (window));
}

/* The analytic template of (h, d) of the state's parameters: an independent reference. */
static float *
reference_template (const RpeSpeParams *params,
                    gsize               h,
                    gsize               d,
                    gsize               n,
                    gboolean            gated)
{
  RpeStatus status;
  float *out = rpe_alloc (n * n, sizeof (float), &status);

  g_assert_nonnull (out);
  g_assert_cmpint (rpe_spe_template (params, h, d, n, gated && params->gate != NULL, out), ==, RPE_OK);
  return out;
}

static void
check_comparison (RpeComparison *c,
                  const float   *a,
                  const float   *b,
                  gsize          n)
{
  g_assert_cmpuint (c->rows, ==, n);
  g_assert_cmpuint (c->cols, ==, n);
  for (gsize i = 0; i < n * n; i++)
    {
      float d = a[i] - b[i];

      g_assert_cmpfloat (c->values[0][i], ==, a[i]);
      g_assert_cmpfloat (c->values[1][i], ==, b[i]);
      g_assert_cmpfloat (c->values[2][i], ==, d);
    }
}

/* Runs the window's "Copy as Command" line (with the CLI and -o npy) and checks the (3, N, N)
 * arrays it writes against the window's comparison. */
static void
check_copied_command (RpeWindow     *window,
                      RpeComparison *c)
{
  g_autofree char *why = NULL;
  g_autofree char *line = rpe_window_command_line (window, &why);
  g_autofree char *npy = g_build_filename (rpe_test_tmpdir (), "copied-compare.npy", NULL);
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) argv = NULL;
  g_autoptr (GPtrArray) args = g_ptr_array_new ();
  g_autoptr (RpeTensor) t = NULL;
  int argc = 0, status = 0;

  if (line == NULL)
    g_error ("no command: %s", why);
  g_test_message ("copied: %s", line);
  g_assert_true (g_str_has_prefix (line, "rpe export compare-"));
  g_assert_true (g_shell_parse_argv (line, &argc, &argv, &error));
  g_ptr_array_add (args, (char *) g_getenv ("RPE_CLI"));
  for (int i = 1; i < argc; i++)
    {
      if (g_str_equal (argv[i], "-o") && i + 1 < argc)
        {
          g_ptr_array_add (args, "-o");
          g_ptr_array_add (args, npy);
          i++;
          continue;
        }
      g_ptr_array_add (args, argv[i]);
    }
  g_ptr_array_add (args, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **) args->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                               NULL, NULL, NULL, NULL, &status, &error));
  g_assert_true (g_spawn_check_wait_status (status, &error));
  t = rpe_npy_read (npy, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (t->ndim, ==, 3);
  g_assert_cmpuint (t->shape[0], ==, 3);
  g_assert_cmpuint (t->shape[1], ==, c->rows);
  g_assert_cmpuint (t->shape[2], ==, c->cols);
  for (guint k = 0; k < 3; k++)
    for (gsize i = 0; i < c->rows * c->cols; i++)
      g_assert_cmpfloat (t->data[k * c->rows * c->cols + i], ==, c->values[k][i]);
}

static void
test_compare (void)
{
  RpeWindow *window = new_window ();
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeCompareView *view = RPE_COMPARE_VIEW (rpe_window_get_compare_view (window));
  const RpeSpeParams *params;
  float *a, *b;
  gboolean gated;
  g_autoptr (RpeFigureBundle) bundle = NULL;

  rpe_window_show_page (window, "compare");
  g_object_set (state, "length", 40, "head", 0, "feature", 2, "compare-what", (guint) RPE_COMPARE_TEMPLATES, NULL);
  rpe_test_iterate_until (rpe_test_window_idle, window);

  /* Pin A, then edit: B is the state after the edit */
  rpe_compare_view_pin (view);
  g_object_set (state, "head", 1, NULL);
  rpe_test_iterate_until (comparison_current, window);
  params = rpe_explorer_state_get_params (state, rpe_explorer_state_get_spe_kind (state));
  g_object_get (state, "gated", &gated, NULL);
  a = reference_template (params, 0, 2, 40, gated);
  b = reference_template (params, 1, 2, 40, gated);
  check_comparison (rpe_compare_view_get_result (view), a, b, 40);
  g_assert_nonnull (strstr (rpe_compare_view_get_result (view)->caption[0], "pinned"));
  rpe_free (a);
  rpe_free (b);

  /* Two heads: A the current head, B compare-b-head */
  g_object_set (state, "compare-mode", (guint) RPE_COMPARE_HEAD, "compare-b-head", 3, "head", 2, NULL);
  rpe_test_iterate_until (comparison_current, window);
  a = reference_template (params, 2, 2, 40, gated);
  b = reference_template (params, 3, 2, 40, gated);
  check_comparison (rpe_compare_view_get_result (view), a, b, 40);
  rpe_free (a);
  rpe_free (b);
  /* Copy as Command redraws it: the same three arrays */
  check_copied_command (window, rpe_compare_view_get_result (view));
  /* two layers of the demo's module, and their command */
  g_object_set (state, "gated", TRUE, "compare-mode", (guint) RPE_COMPARE_LAYER, "compare-a-layer", 0,
                "compare-b-layer", 1, NULL);
  rpe_test_iterate_until (comparison_current, window);
  check_copied_command (window, rpe_compare_view_get_result (view));
  g_object_set (state, "compare-mode", (guint) RPE_COMPARE_HEAD, NULL);
  rpe_test_iterate_until (comparison_current, window);

  /* the page exports the triptych */
  rpe_test_wait_frames (GTK_WIDGET (window), 1);
  bundle = rpe_window_build_figure (window, rpe_window_get_view (window));
  g_assert_nonnull (bundle);
  g_clear_pointer (&bundle, rpe_figure_bundle_unref);
  /* the sidebar's colour scale reaches A and B; A - B keeps its diverging linear scale */
  g_object_set (state, "color-scale", (guint) RPE_HEATMAP_TRANSFORM_LOG, NULL);   /* recolours, no new job */
  bundle = rpe_figure_page_build_figure (RPE_FIGURE_PAGE (view));
  g_assert_nonnull (bundle);
  g_assert_cmpuint (bundle->fig.n_panels, ==, 3);
  g_assert_cmpint (bundle->fig.panels[0].transform, ==, RPE_HEATMAP_TRANSFORM_LOG);
  g_assert_cmpint (bundle->fig.panels[1].transform, ==, RPE_HEATMAP_TRANSFORM_LOG);
  g_assert_cmpint (bundle->fig.panels[2].transform, ==, RPE_HEATMAP_TRANSFORM_NONE);
  g_clear_pointer (&bundle, rpe_figure_bundle_unref);
  /* and its command carries the scale (and still redraws the same arrays) */
  {
    g_autofree char *why = NULL;
    g_autofree char *line = rpe_window_command_line (window, &why);

    g_assert_nonnull (line);
    g_assert_nonnull (strstr (line, "--color-scale log"));
  }
  check_copied_command (window, rpe_compare_view_get_result (view));
  g_object_set (state, "color-scale", (guint) RPE_HEATMAP_TRANSFORM_NONE, NULL);
  {
    g_autofree char *path = g_build_filename (rpe_test_tmpdir (), "window-compare.npy", NULL);
    g_autoptr (GError) error = NULL;

    g_assert_true (rpe_window_export_view (window, path, &error));
    g_assert_no_error (error);
    g_assert_true (g_file_test (path, G_FILE_TEST_IS_REGULAR));
  }

  /* a burst of edits: only the last state's comparison is shown (stale results dropped) */
  for (guint h = 0; h < 4; h++)
    g_object_set (state, "head", h, NULL);
  rpe_test_iterate_until (comparison_current, window);
  g_assert_nonnull (strstr (rpe_compare_view_get_result (view)->caption[0], "head 3"));

  gtk_window_destroy (GTK_WINDOW (window));
  rpe_test_wait_jobs ();
}

static gboolean
b_capture_settled (gpointer data)
{
  RpeWindow *window = data;

  return !rpe_compare_view_is_opening_capture (RPE_COMPARE_VIEW (rpe_window_get_compare_view (window)))
         && rpe_test_window_idle_drained (window);
}

/* The attention map of a state given layer `layer` of `capture` directly, with `layer` of the
 * demo's module: what the Attention view draws of it (the same engine as the B side). */
static float *
direct_attention (RpeExplorerState *like,
                  const char       *demo,
                  const char       *capture_path,
                  guint             layer,
                  gsize            *rows,
                  gsize            *cols)
{
  g_autoptr (RpeExplorerState) state = rpe_explorer_state_new ();
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeTensorSet) set = rpe_demos_read (demo, &error);
  g_autoptr (RpeModelPrint) print = NULL;
  g_autoptr (RpeExplorerCapture) capture = rpe_explorer_capture_open (capture_path, &error);
  g_autoptr (RpeExplorerSnapshot) snap = NULL;
  g_autoptr (RpeAttentionImage) img = NULL;
  RpeSpeSelection     sel = RPE_SPE_SELECTION_INIT;
  RpeSpeParams        params = { 0 };
  RpeAttentionRequest req = { 0 };
  guint               r = 0, seed = 0, head = 0, method = 0;
  gboolean            causal = FALSE, gated = FALSE;
  float              *values;

  g_assert_no_error (error);
  sel.layer = (int) layer;
  g_assert_true (rpe_checkpoint_load_spe_full (set, &sel, &params, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (rpe_explorer_state_set_modules (state, params.method == RPE_SPE_SINE ? &params : NULL, "B",
                                                 params.method == RPE_SPE_CONV ? &params : NULL, "B", &error));
  g_object_get (like, "realizations", &r, "seed", &seed, "head", &head, "method", &method, "causal", &causal, "gated",
                &gated, NULL);
  g_object_set (state, "spe-kind", (guint) params.method, "realizations", r, "seed", seed, "head", head, "method",
                method, "causal", causal, "gated", gated, NULL);
  print = rpe_model_print_new (set, demo);
  rpe_explorer_state_set_model_print (state, print);
  g_assert_true (rpe_explorer_state_set_capture (state, capture, layer, &error));
  g_assert_no_error (error);
  snap = rpe_explorer_state_snapshot (state);
  req.max_rows = req.max_cols = 512;
  req.reduce = RPE_HEATMAP_REDUCE_MEAN;
  img = rpe_compute_attention (snap, &req, NULL, &error);
  g_assert_no_error (error);
  *rows = img->rows;
  *cols = img->cols;
  values = g_memdup2 (img->values, img->rows * img->cols * sizeof (float));
  rpe_spe_params_clear (&params);
  return values;
}

static void
check_b_is (RpeComparison *c, const float *ref, gsize rows, gsize cols)
{
  double worst = 0.0, apart = 0.0;

  g_assert_cmpuint (c->rows, ==, rows);
  g_assert_cmpuint (c->cols, ==, cols);
  for (gsize i = 0; i < rows * cols; i++)
    {
      worst = fmax (worst, fabs (c->values[1][i] - ref[i]));
      apart = fmax (apart, fabs (c->values[0][i] - c->values[1][i]));
    }
  g_assert_cmpfloat (worst, <=, 1e-6);
  g_assert_cmpfloat (apart, >, 1e-2); /* A and B really differ */
}

/* B on a capture: the current capture's other layer, another model on its own capture; hostile
 * captures chosen for B change nothing. */
static void
test_capture_b (void)
{
  RpeWindow        *window = new_window ();
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeCompareView   *view = RPE_COMPARE_VIEW (rpe_window_get_compare_view (window));
  g_autofree char  *other = g_build_filename (rpe_test_tmpdir (), "b-other-model.npz", NULL);
  g_autofree char  *broken = g_build_filename (rpe_test_tmpdir (), "b-broken.npz", NULL);
  g_autofree char  *hand = g_build_filename (rpe_test_tmpdir (), "b-hand.npz", NULL);
  g_autofree float *ref = NULL;
  g_autofree char  *spec = NULL;
  RpeComparison    *before;
  gsize             rows = 0, cols = 0;

  rpe_window_open_demo (window, "demo:conv-spe");
  rpe_test_iterate_until (rpe_test_window_idle_drained, window);
  gtk_widget_activate_action (GTK_WIDGET (window), "win.load-capture", "s", "demo:conv-spe");
  rpe_test_iterate_until (rpe_test_window_idle_drained, window);
  g_assert_nonnull (rpe_explorer_state_get_capture (state));
  rpe_window_show_page (window, "compare");

  /* the current capture's layer 1 under the module's layer 1 */
  g_object_set (state, "head", 1, "compare-what", (guint) RPE_COMPARE_ATTENTION, "compare-mode",
                (guint) RPE_COMPARE_CAPTURE, "compare-b-layer", 1, NULL);
  rpe_test_iterate_until (comparison_current, window);
  ref = direct_attention (state, "demo:conv-spe", "demo:conv-spe", 1, &rows, &cols);
  check_b_is (rpe_compare_view_get_result (view), ref, rows, cols);
  g_assert_nonnull (strstr (rpe_compare_view_get_result (view)->caption[1], "layer 1"));
  check_copied_command (window, rpe_compare_view_get_result (view));
  g_clear_pointer (&ref, g_free);

  /* hostile captures chosen for B: refused with a clear caption; the choice and the figure stay */
  before = rpe_compare_view_get_result (view);
  rpe_test_write_capture (other, 2, 256, 2, 8, 0, 9, NULL, NULL, NULL);
  rpe_compare_view_choose_b_capture (view, other);
  g_assert_true (rpe_compare_view_is_opening_capture (view));
  rpe_test_iterate_until (b_capture_settled, window);
  g_assert_nonnull (strstr (rpe_figure_page_get_caption (RPE_FIGURE_PAGE (view)), "(256, 2, 8)"));
  g_assert_nonnull (strstr (rpe_figure_page_get_caption (RPE_FIGURE_PAGE (view)), "(H, D) = (4, 16)"));
  g_assert_nonnull (strstr (rpe_figure_page_get_caption (RPE_FIGURE_PAGE (view)), "Nothing was changed"));
  g_object_get (state, "compare-b-capture", &spec, NULL);
  g_assert_true (spec == NULL || *spec == '\0');
  g_clear_pointer (&spec, g_free);
  g_assert_true (rpe_compare_view_get_result (view) == before);
  g_assert_true (g_file_set_contents (broken, "not a zip at all", -1, NULL));
  rpe_compare_view_choose_b_capture (view, broken);
  rpe_test_iterate_until (b_capture_settled, window);
  g_assert_nonnull (strstr (rpe_figure_page_get_caption (RPE_FIGURE_PAGE (view)), "b-broken.npz"));
  g_assert_nonnull (strstr (rpe_figure_page_get_caption (RPE_FIGURE_PAGE (view)), "Nothing was changed"));
  rpe_compare_view_choose_b_capture (view, "demo:sine-spe"); /* another model's */
  rpe_test_iterate_until (b_capture_settled, window);
  g_assert_nonnull (strstr (rpe_figure_page_get_caption (RPE_FIGURE_PAGE (view)), "made on another model"));
  g_object_get (state, "compare-b-capture", &spec, NULL);
  g_assert_true (spec == NULL || *spec == '\0');
  g_clear_pointer (&spec, g_free);
  g_assert_true (rpe_compare_view_get_result (view) == before);

  /* a hand-made capture of the module's shape is taken: B is drawn on it */
  rpe_test_write_capture (hand, 2, 256, 4, 16, 0, 21, NULL, NULL, NULL);
  rpe_compare_view_choose_b_capture (view, hand);
  rpe_test_iterate_until (b_capture_settled, window);
  g_object_get (state, "compare-b-capture", &spec, NULL);
  g_assert_cmpstr (spec, ==, hand);
  g_clear_pointer (&spec, g_free);
  rpe_test_iterate_until (comparison_current, window);
  ref = direct_attention (state, "demo:conv-spe", hand, 1, &rows, &cols);
  check_b_is (rpe_compare_view_get_result (view), ref, rows, cols);
  g_clear_pointer (&ref, g_free);

  /* another model on its own capture: B the sine SPE demo on its capture, at A's captured layer */
  g_object_set (state, "compare-mode", (guint) RPE_COMPARE_CHECKPOINT, "compare-b-checkpoint", "demo:sine-spe",
                "compare-b-capture", "demo:sine-spe", NULL);
  rpe_test_iterate_until (comparison_current, window);
  {
    guint layer = 0;

    g_object_get (state, "capture-layer", &layer, NULL);
    ref = direct_attention (state, "demo:sine-spe", "demo:sine-spe", layer, &rows, &cols);
  }
  check_b_is (rpe_compare_view_get_result (view), ref, rows, cols);
  g_assert_nonnull (strstr (rpe_compare_view_get_result (view)->caption[1], "sine"));
  check_copied_command (window, rpe_compare_view_get_result (view));

  gtk_window_destroy (GTK_WINDOW (window));
  rpe_test_wait_jobs ();
  g_remove (other);
  g_remove (broken);
  g_remove (hand);
}

/* Ctrl+Shift+P on the Attention view: A is pinned, Compare shows attention, edits make B */
static void
test_pin_action (void)
{
  RpeWindow *window = new_window ();
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeCompareView *view = RPE_COMPARE_VIEW (rpe_window_get_compare_view (window));
  RpeComparison *c;
  guint mode = 0, what = 0;

  g_object_set (state, "length", 32, "head", 0, NULL);
  rpe_window_set_view (window, RPE_WINDOW_VIEW_ATTENTION);
  rpe_test_iterate_until (rpe_test_window_idle, window);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.pin-compare", NULL));
  g_object_get (state, "compare-mode", &mode, "compare-what", &what, NULL);
  g_assert_cmpuint (mode, ==, RPE_COMPARE_PINNED);
  g_assert_cmpuint (what, ==, RPE_COMPARE_ATTENTION);
  g_object_set (state, "causal", TRUE, NULL);
  rpe_test_iterate_until (comparison_current, window);
  c = rpe_compare_view_get_result (view);
  g_assert_cmpuint (c->what, ==, RPE_COMPARE_ATTENTION);
  /* A (not causal) has weight above the diagonal, B (causal) none: A - B = A there */
  g_assert_cmpfloat (c->values[1][0 * c->cols + 5], ==, 0.0f);
  g_assert_cmpfloat (c->values[0][0 * c->cols + 5], >, 0.0f);
  g_assert_cmpfloat (c->values[2][0 * c->cols + 5], ==, c->values[0][0 * c->cols + 5]);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.page", "s", "overview"));
  gtk_window_destroy (GTK_WINDOW (window));
  rpe_test_wait_jobs ();
}

static gboolean
overview_complete (gpointer data)
{
  RpeWindow *window = data;
  RpeOverviewView *view = RPE_OVERVIEW_VIEW (rpe_window_get_overview_view (window));
  RpeOverview *ov = rpe_overview_view_get_result (view);

  return !rpe_figure_page_is_busy (RPE_FIGURE_PAGE (view)) && ov != NULL && ov->n_done == ov->n_layers * ov->n_heads;
}

typedef struct
{
  RpeWindow *window;
  guint      head;
} WantHead;

static gboolean
opened_cell (gpointer data)
{
  WantHead *w = data;

  return !rpe_window_is_busy (w->window) && rpe_explorer_state_get_head (rpe_window_get_state (w->window)) == w->head
         && rpe_window_get_view (w->window) == RPE_WINDOW_VIEW_TEMPLATES;
}

static void
test_overview (void)
{
  RpeWindow *window = new_window ();
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeOverviewView *view = RPE_OVERVIEW_VIEW (rpe_window_get_overview_view (window));
  g_autoptr (RpeTensorSet) set = NULL;
  g_autoptr (GError) error = NULL;
  RpeOverview *ov;
  WantHead want = { window, 2 };
  gboolean gated;

  g_object_set (state, "length", 32, "feature", 4, "spe-kind", (guint) RPE_SPE_SINE, "gated", TRUE, NULL);
  rpe_window_show_page (window, "overview");
  rpe_test_iterate_until (overview_complete, window);
  ov = rpe_overview_view_get_result (view);
  g_assert_cmpuint (ov->n_layers, ==, 2);    /* the demo's sine module: gates of layers 0 and 1 */
  g_assert_cmpuint (ov->n_heads, ==, 4);
  g_assert_cmpuint (ov->rows, ==, 32);
  set = rpe_demos_read ("demo", &error);
  g_assert_no_error (error);
  g_object_get (state, "gated", &gated, NULL);
  for (gsize l = 0; l < 2; l++)
    {
      RpeSpeSelection sel = RPE_SPE_SELECTION_INIT;
      RpeSpeParams p = { 0 };

      sel.method = RPE_SPE_SINE;
      sel.layer = (int) l;
      g_assert_true (rpe_checkpoint_load_spe_full (set, &sel, &p, NULL, &error));
      for (gsize h = 0; h < 4; h++)
        {
          float *ref = reference_template (&p, h, 4, 32, gated);
          const float *cell = ov->values + (l * 4 + h) * 32 * 32;

          for (gsize i = 0; i < 32 * 32; i++)
            g_assert_cmpfloat (cell[i], ==, ref[i]);
          rpe_free (ref);
        }
      rpe_spe_params_clear (&p);
    }
  rpe_test_wait_frames (GTK_WIDGET (window), 1);

  /* a click on (layer 1, head 2) opens it in the Templates view */
  rpe_overview_view_activate_cell (view, 1 * 4 + 2);
  rpe_test_iterate_until (opened_cell, &want);
  {
    RpeSpeSelection sel = RPE_SPE_SELECTION_INIT;
    RpeSpeParams p = { 0 };
    const RpeSpeParams *shown = rpe_explorer_state_get_params (state, RPE_SPE_SINE);

    sel.method = RPE_SPE_SINE;
    sel.layer = 1;
    g_assert_true (rpe_checkpoint_load_spe_full (set, &sel, &p, NULL, &error));
    g_assert_nonnull (shown->gate);
    for (gsize i = 0; i < p.n_heads * p.n_features; i++)
      g_assert_cmpfloat (shown->gate[i], ==, p.gate[i]);
    rpe_spe_params_clear (&p);
  }
  gtk_window_destroy (GTK_WINDOW (window));
  rpe_test_wait_jobs ();
}

/* ------------------------------------------------------------------ watch */

/* The file's bytes with every "*.gate" tensor (float32) shifted by delta. */
static GBytes *
shifted_gates (const char *path,
               float       delta)
{
  g_autofree char *bytes = NULL;
  gsize len = 0;
  guint64 header = 0;
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  JsonObject *root;
  g_autoptr (GList) names = NULL;

  g_assert_true (g_file_get_contents (path, &bytes, &len, &error));
  g_assert_cmpuint (len, >, 8);
  for (int i = 7; i >= 0; i--)
    header = (header << 8) | (guint8) bytes[i];
  g_assert_cmpuint (header + 8, <=, len);
  g_assert_true (json_parser_load_from_data (parser, bytes + 8, (gssize) header, &error));
  root = json_node_get_object (json_parser_get_root (parser));
  names = json_object_get_members (root);
  for (GList *l = names; l != NULL; l = l->next)
    {
      const char *name = l->data;
      JsonObject *t;
      JsonArray *off;
      gsize s, e;

      if (!g_str_has_suffix (name, ".gate"))
        continue;
      t = json_object_get_object_member (root, name);
      g_assert_cmpstr (json_object_get_string_member (t, "dtype"), ==, "F32");
      off = json_object_get_array_member (t, "data_offsets");
      s = (gsize) json_array_get_int_element (off, 0);
      e = (gsize) json_array_get_int_element (off, 1);
      for (gsize k = s; k < e; k += 4)
        {
          float v;

          memcpy (&v, bytes + 8 + header + k, 4);
          v += delta;
          memcpy (bytes + 8 + header + k, &v, 4);
        }
    }
  return g_bytes_new_take (g_steal_pointer (&bytes), len);
}

static void
write_atomically (const char *path,
                  GBytes     *bytes)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (g_file_set_contents (path, g_bytes_get_data (bytes, NULL), (gssize) g_bytes_get_size (bytes), &error));
  g_assert_no_error (error);
}

typedef struct
{
  guint loaded;
  guint failed;
} Counts;

static void
on_loaded (RpeCheckpointWatch *watch,
           guint               index,
           Counts             *counts)
{
  counts->loaded++;
}

static void
on_failed (RpeCheckpointWatch *watch,
           const char         *message,
           Counts             *counts)
{
  counts->failed++;
}

typedef struct
{
  Counts *counts;
  guint   loaded;
  guint   failed;
} WantCounts;

static gboolean
counts_reached (gpointer data)
{
  WantCounts *w = data;

  return w->counts->loaded >= w->loaded && w->counts->failed >= w->failed;
}

/* The state's sine gate equals the gate of the file's module, layer `layer` (-1: the first). */
static void
assert_gate_of_layer (RpeExplorerState *state,
                      const char       *path,
                      int               layer)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeTensorSet) set = rpe_checkpoint_read (path, &error);
  RpeSpeParams p = { 0 };
  const RpeSpeParams *shown = rpe_explorer_state_get_params (state, RPE_SPE_SINE);

  g_assert_no_error (error);
  g_assert_true (rpe_checkpoint_load_spe (set, NULL, layer, &p, &error));
  g_assert_nonnull (shown->gate);
  for (gsize i = 0; i < p.n_heads * p.n_features; i++)
    g_assert_cmpfloat (shown->gate[i], ==, p.gate[i]);
  rpe_spe_params_clear (&p);
}

static void
assert_gate_of (RpeExplorerState *state,
                const char       *path)
{
  assert_gate_of_layer (state, path, -1);
}

static void
test_watch (void)
{
  g_autofree char *src = g_test_build_filename (G_TEST_DIST, "..", "resources", "demos", "sine-spe.safetensors", NULL);
  g_autofree char *dir = g_build_filename (rpe_test_tmpdir (), "watch", NULL);
  g_autofree char *path = g_build_filename (dir, "model.safetensors", NULL);
  g_autofree char *next = g_build_filename (dir, "model_step300.safetensors", NULL);
  g_autoptr (GBytes) original = NULL, rewritten = NULL, later = NULL;
  g_autoptr (GFile) file = NULL;
  g_autoptr (GError) error = NULL;
  RpeWindow *window = new_window ();
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeCheckpointWatch *watch;
  Counts counts = { 0, 0 };
  WantCounts want = { &counts, 1, 0 };
  gint64 step = 0;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  original = shifted_gates (src, 0.0f);
  write_atomically (path, original);
  file = g_file_new_for_path (path);
  rpe_window_open_file (window, file);
  rpe_test_iterate_until (not_loading, window);
  g_assert_null (rpe_window_get_message (window));
  watch = rpe_window_get_watch (window);
  g_assert_nonnull (watch);
  g_assert_cmpuint (rpe_checkpoint_watch_get_n_steps (watch), ==, 1);
  g_signal_connect (watch, "loaded", G_CALLBACK (on_loaded), &counts);
  g_signal_connect (watch, "failed", G_CALLBACK (on_failed), &counts);
  g_object_set (state, "spe-kind", (guint) RPE_SPE_SINE, "head", 2, "length", 50, "realizations", 17, NULL);
  rpe_test_iterate_until (rpe_test_window_idle, window);

  /* a training run writes a new checkpoint over the old one (another gate) */
  rewritten = shifted_gates (src, 1.5f);
  write_atomically (path, rewritten);
  rpe_test_iterate_until (counts_reached, &want);
  g_assert_cmpuint (rpe_checkpoint_watch_get_n_steps (watch), ==, 2);
  g_assert_cmpuint (rpe_explorer_state_get_head (state), ==, 2);
  g_assert_cmpuint (rpe_explorer_state_get_length (state), ==, 50);
  g_assert_cmpuint (rpe_explorer_state_get_r (state), ==, 17);
  assert_gate_of (state, path);

  /* a half-written file: retried, then reported; the good state stays */
  rpe_checkpoint_watch_set_retry (watch, 2, 5);
  {
    FILE *f = fopen (path, "wb");

    g_assert_nonnull (f);
    g_assert_cmpuint (fwrite (g_bytes_get_data (rewritten, NULL), 1, 3000, f), ==, 3000);
    fclose (f);
  }
  want.failed = 1;
  rpe_test_iterate_until (counts_reached, &want);
  g_assert_cmpuint (counts.loaded, ==, 1);
  g_assert_cmpuint (rpe_checkpoint_watch_get_n_steps (watch), ==, 2);
  g_assert_cmpuint (rpe_checkpoint_watch_get_n_failed_reads (watch), >=, 3);
  g_assert_nonnull (rpe_window_get_message (window));
  g_assert_cmpuint (rpe_explorer_state_get_head (state), ==, 2);
  {
    /* still the gate of the good rewrite */
    g_autofree char *good = g_build_filename (dir, "good.safetensors", NULL);

    write_atomically (good, rewritten);
    assert_gate_of (state, good);
  }

  /* a newer checkpoint_<step> beside it: followed */
  later = shifted_gates (src, -0.5f);
  write_atomically (next, later);
  want.loaded = 2;
  rpe_test_iterate_until (counts_reached, &want);
  g_assert_cmpstr (rpe_checkpoint_watch_get_path (watch), ==, next);
  g_assert_nonnull (rpe_checkpoint_watch_get_step (watch, 2, &step));
  g_assert_cmpint (step, ==, 300);
  assert_gate_of (state, next);
  g_assert_cmpuint (rpe_explorer_state_get_length (state), ==, 50);

  /* the slider replays: step 0 shows the first parameters again */
  rpe_window_show_watch_step (window, 0);
  {
    g_autofree char *first = g_build_filename (dir, "first.safetensors", NULL);

    write_atomically (first, original);
    assert_gate_of (state, first);
  }
  g_assert_cmpuint (rpe_explorer_state_get_head (state), ==, 2);

  /* layer 1 opened from the overview stays layer 1 through a reload */
  rpe_window_show_watch_step (window, 2);
  rpe_window_show_page (window, "overview");
  rpe_test_iterate_until (overview_complete, window);
  {
    WantHead w = { window, 1 };
    g_autoptr (GBytes) last = shifted_gates (src, 0.25f);

    rpe_overview_view_activate_cell (RPE_OVERVIEW_VIEW (rpe_window_get_overview_view (window)), 1 * 4 + 1);
    rpe_test_iterate_until (opened_cell, &w);
    assert_gate_of_layer (state, next, 1);
    write_atomically (next, last);
    want.loaded = 3;
    rpe_test_iterate_until (counts_reached, &want);
    assert_gate_of_layer (state, next, 1);
    g_assert_cmpuint (rpe_explorer_state_get_head (state), ==, 1);
  }

  gtk_window_destroy (GTK_WINDOW (window));
  rpe_test_wait_jobs ();
}

/* ------------------------------------------------------------ screenshots */

static gboolean
flap_settled (gpointer data)
{
  AdwFlap *flap = data;
  double p = adw_flap_get_reveal_progress (flap);

  return p == (adw_flap_get_reveal_flap (flap) ? 1.0 : 0.0);
}

static void
save_window (RpeWindow  *window,
             const char *dir,
             const char *name)
{
  g_autofree char *path = g_strdup_printf ("%s/%s.png", dir, name);
  GtkWidget *overlay = rpe_test_find_widget (GTK_WIDGET (window), ADW_TYPE_TOAST_OVERLAY);
  GtkWidget *flap = rpe_test_find_widget (GTK_WIDGET (window), ADW_TYPE_FLAP);
  cairo_surface_t *pixels;

  rpe_test_iterate_until (rpe_test_window_idle, window);
  if (flap != NULL)
    rpe_test_iterate_until (flap_settled, flap);
  /* the toasts ("Opened ...", "Reloaded ...") are not what the picture is about */
  for (GtkWidget *c = overlay != NULL ? gtk_widget_get_first_child (overlay) : NULL; c != NULL;
       c = gtk_widget_get_next_sibling (c))
    if (c != adw_toast_overlay_get_child (ADW_TOAST_OVERLAY (overlay)))
      gtk_widget_set_visible (c, FALSE);
  rpe_test_wait_frames (GTK_WIDGET (window), 2);
  pixels = rpe_test_render_widget (GTK_WIDGET (window));
  g_assert_cmpint (cairo_surface_write_to_png (pixels, path), ==, CAIRO_STATUS_SUCCESS);
  cairo_surface_destroy (pixels);
}

/* With RPE_SCREENSHOT_DIR set (tools/make-screenshots.sh): compare.png, overview.png, watch.png. */
static void
test_screenshots (void)
{
  const char *dir = g_getenv ("RPE_SCREENSHOT_DIR");
  g_autofree char *src = g_test_build_filename (G_TEST_DIST, "..", "resources", "demos", "sine-spe.safetensors", NULL);
  g_autofree char *run_dir = g_build_filename (rpe_test_tmpdir (), "shots", NULL);
  g_autofree char *path = g_build_filename (run_dir, "checkpoint_1000", NULL);
  g_autoptr (GBytes) bytes = NULL;
  g_autoptr (GFile) file = NULL;
  RpeWindow *window;
  RpeExplorerState *state;
  Counts counts = { 0, 0 };
  WantCounts want = { &counts, 2, 0 };

  if (dir == NULL)
    {
      g_test_skip ("RPE_SCREENSHOT_DIR not set");
      return;
    }
  {
    GtkCssProvider *css = gtk_css_provider_new ();

    gtk_css_provider_load_from_resource (css, "/io/github/rpestudio/RpeStudio/style.css");
    gtk_style_context_add_provider_for_display (gdk_display_get_default (), GTK_STYLE_PROVIDER (css),
                                                GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
    g_object_unref (css);
    gtk_icon_theme_add_resource_path (gtk_icon_theme_get_for_display (gdk_display_get_default ()),
                                      "/io/github/rpestudio/RpeStudio/icons");
  }
  {
    /* no tour offer over the pictures */
    g_autoptr (GSettings) settings = g_settings_new ("io.github.rpestudio.RpeStudio");

    g_settings_set_boolean (settings, "tour-offered", TRUE);
  }
  g_assert_cmpint (g_mkdir_with_parents (run_dir, 0700), ==, 0);
  bytes = shifted_gates (src, 0.0f);
  write_atomically (path, bytes);
  window = new_window ();
  state = rpe_window_get_state (window);
  file = g_file_new_for_path (path);
  rpe_window_open_file (window, file);
  rpe_test_iterate_until (not_loading, window);
  {
    /* the contents window opens by itself with a checkpoint: close it */
    RpeTensorBrowser *browser = rpe_window_get_tensor_browser (window);

    if (browser != NULL)
      gtk_window_close (GTK_WINDOW (browser));
  }
  rpe_window_set_sidebar_visible (window, FALSE);

  /* Compare: pin A, change the head: A | B | A - B of the attention */
  g_object_set (state, "length", 64, "causal", TRUE, "head", 1, "compare-what", (guint) RPE_COMPARE_ATTENTION, NULL);
  rpe_window_show_page (window, "compare");
  rpe_compare_view_pin (RPE_COMPARE_VIEW (rpe_window_get_compare_view (window)));
  g_object_set (state, "head", 3, NULL);
  rpe_test_iterate_until (comparison_current, window);
  save_window (window, dir, "compare");

  /* Overview */
  g_object_set (state, "compare-mode", (guint) RPE_COMPARE_OFF, "feature", 3, NULL);
  rpe_window_show_page (window, "overview");
  rpe_test_iterate_until (overview_complete, window);
  save_window (window, dir, "overview");

  /* Watch: two newer checkpoint_<step> files of the run, the step slider in the sidebar */
  g_signal_connect (rpe_window_get_watch (window), "loaded", G_CALLBACK (on_loaded), &counts);
  rpe_window_set_view (window, RPE_WINDOW_VIEW_TEMPLATES);
  for (guint k = 1; k <= 2; k++)
    {
      g_autoptr (GBytes) next = shifted_gates (src, 1.0f * k);
      g_autofree char *name = g_strdup_printf ("checkpoint_%u", 1000 * (k + 1));
      g_autofree char *step_path = g_build_filename (run_dir, name, NULL);
      WantCounts one = { &counts, k, 0 };

      write_atomically (step_path, next);
      rpe_test_iterate_until (counts_reached, &one);
    }
  rpe_test_iterate_until (counts_reached, &want);
  rpe_window_set_sidebar_visible (window, TRUE);
  save_window (window, dir, "watch");
  gtk_window_destroy (GTK_WINDOW (window));
  rpe_test_wait_jobs ();
}

static void
test_step_names (void)
{
  g_assert_cmpint (rpe_checkpoint_step_from_name ("checkpoint_50000"), ==, 50000);
  g_assert_cmpint (rpe_checkpoint_step_from_name ("model_step300.safetensors"), ==, 300);
  g_assert_cmpint (rpe_checkpoint_step_from_name ("run-step12.pt"), ==, 12);
  g_assert_cmpint (rpe_checkpoint_step_from_name ("model.safetensors"), ==, -1);
  g_assert_cmpint (rpe_checkpoint_step_from_name ("checkpoint_"), ==, -1);
  g_assert_cmpint (rpe_checkpoint_step_from_name ("checkpoint_12a"), ==, -1);
  g_assert_cmpint (rpe_checkpoint_step_from_name ("step5"), ==, -1);
}

int
main (int   argc,
      char *argv[])
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  g_test_add_func ("/ui/compare/step-names", test_step_names);
  g_test_add_func ("/ui/compare/compare", test_compare);
  g_test_add_func ("/ui/compare/pin-action", test_pin_action);
  g_test_add_func ("/ui/compare/capture-b", test_capture_b);
  g_test_add_func ("/ui/compare/overview", test_overview);
  g_test_add_func ("/ui/compare/watch", test_watch);
  g_test_add_func ("/ui/compare/screenshots", test_screenshots);
  return g_test_run ();
}

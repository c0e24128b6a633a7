/* test-ui-capture.c: a capture (a trained model's own queries, keys and values) opened in the
 * window as content.
 *
 * Through the window's action (win.load-capture, what Open Capture… and drag and drop call): the
 * state's content becomes the capture's layer and the Attention view's exact map equals the one
 * computed here, naively, from the capture's own arrays and the module's analytic templates
 * (MATH.md 4); the layer follows the layer picker; undo puts the previous content back.  A
 * capture the module cannot take (another (H, D), not a zip) is refused in the banner with both
 * shapes named and the state is unchanged.  A session records the capture by path and SHA-256
 * and reads it back.
 */
#include "config.h"

#include <math.h>

#include <glib/gstdio.h>

#include <adwaita.h>

#include "rpe-attention-view.h"
#include "rpe-capture.h"
#include "rpe-compare.h"
#include "rpe-demos.h"
#include "rpe-error.h"
#include "rpe-session.h"
#include "rpe-test-utils.h"
#include "rpe-ui-test-utils.h"
#include "rpe-ui-wait.h"
#include "rpe-undo.h"
#include "rpe-window.h"

#define N_CAP   48
#define H_CAP   4
#define D_CAP   16

typedef struct
{
  char  *dir;
  char  *path;      /* a capture of the conv-spe demo's shape: 2 layers of (N_CAP, 4, 16), Dv 16 */
  float *q, *k, *v; /* its arrays, layer-major */
} Fixture;

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  f->dir = g_dir_make_tmp ("rpe-ui-capture-XXXXXX", NULL);
  g_assert_nonnull (f->dir);
  f->path = g_build_filename (f->dir, "run.npz", NULL);
  rpe_test_write_capture (f->path, 2, N_CAP, H_CAP, D_CAP, 16, 7, &f->q, &f->k, &f->v);
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  g_autoptr (GDir) d = g_dir_open (f->dir, 0, NULL);
  const char *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *p = g_build_filename (f->dir, name, NULL);

      g_unlink (p);
    }
  g_rmdir (f->dir);
  g_free (f->dir);
  g_free (f->path);
  g_free (f->q);
  g_free (f->k);
  g_free (f->v);
}

static RpeWindow *
open_window (void)
{
  RpeWindow *window = rpe_window_new (NULL);

  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  gtk_window_present (GTK_WINDOW (window));
  rpe_test_wait_frames (GTK_WIDGET (window), 1);
  rpe_test_iterate_until (rpe_test_window_idle, window);
  rpe_window_open_demo (window, "demo:conv-spe");
  rpe_test_iterate_until (rpe_test_window_idle_drained, window);
  g_assert_null (rpe_window_get_message (window));
  return window;
}

static void
load_capture (RpeWindow  *window,
              const char *path)
{
  gtk_widget_activate_action (GTK_WIDGET (window), "win.load-capture", "s", path);
  g_assert_true (rpe_window_is_opening_capture (window));
  rpe_test_iterate_until (rpe_test_window_idle_drained, window);
}

typedef struct
{
  RpeWindow *window;
  guint64    serial;
} WantImage;

static gboolean
attention_current (gpointer data)
{
  WantImage *w = data;
  RpeAttentionImage *img =
    rpe_attention_view_get_image (RPE_ATTENTION_VIEW (rpe_window_get_view_widget (w->window, RPE_WINDOW_VIEW_ATTENTION)));

  return !rpe_window_is_busy (w->window) && img != NULL && img->serial == w->serial;
}

static RpeAttentionImage *
settle_attention (RpeWindow *window)
{
  WantImage w = { window, rpe_explorer_state_get_serial (rpe_window_get_state (window)) };

  rpe_test_wait_frames (GTK_WIDGET (window), 1);
  rpe_test_iterate_until (attention_current, &w);
  return rpe_attention_view_get_image (RPE_ATTENTION_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_ATTENTION)));
}

/* The exact attention (MATH.md 4) of layer `layer`, head h of the fixture's capture, naively in
 * double: l(m, n) = sum_d q[m,d] k[n,d] Ptilde_d(m - n) / sqrt D, causal mask, row softmax. */
static double *
naive_exact (const Fixture      *f,
             const RpeSpeParams *p,
             gboolean            gated,
             gboolean            causal,
             gsize               layer,
             gsize               h)
{
  const gsize N = N_CAP, D = D_CAP, H = H_CAP;
  const float *q = f->q + layer * N * H * D, *k = f->k + layer * N * H * D;
  g_autofree float *lags = g_new (float, D * (2 * N - 1));
  double *a = g_new (double, N * N);

  g_assert_cmpuint (p->n_heads, ==, H);
  g_assert_cmpuint (p->n_features, ==, D);
  for (gsize d = 0; d < D; d++)
    g_assert_cmpint (rpe_spe_template_lags (p, h, d, N, gated, lags + d * (2 * N - 1)), ==, RPE_OK);
  for (gsize m = 0; m < N; m++)
    {
      double mx = -INFINITY, sum = 0.0;

      for (gsize n = 0; n < N; n++)
        {
          double l = 0.0;

          for (gsize d = 0; d < D; d++)
            l += (double) q[(m * H + h) * D + d] * k[(n * H + h) * D + d] * lags[d * (2 * N - 1) + (m - n + N - 1)];
          l /= sqrt ((double) D);
          a[m * N + n] = causal && n > m ? -INFINITY : l;
          mx = fmax (mx, a[m * N + n]);
        }
      for (gsize n = 0; n < N; n++)
        sum += a[m * N + n] = isinf (a[m * N + n]) ? 0.0 : exp (a[m * N + n] - mx);
      for (gsize n = 0; n < N; n++)
        a[m * N + n] /= sum;
    }
  return a;
}

static void
assert_map (RpeWindow     *window,
            const Fixture *f,
            gsize          layer)
{
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeAttentionImage *img = settle_attention (window);
  gboolean gated = FALSE, causal = FALSE;
  g_autofree double *ref = NULL;
  double worst = 0.0, peak = 0.0;
  gsize h = rpe_explorer_state_get_head (state);

  g_object_get (state, "gated", &gated, "causal", &causal, NULL);
  g_assert_cmpint (img->method, ==, RPE_EXPLORER_METHOD_EXACT);
  g_assert_cmpuint (img->n, ==, N_CAP);
  g_assert_cmpuint (img->rows, ==, N_CAP);
  g_assert_cmpuint (img->cols, ==, N_CAP);
  ref = naive_exact (f, rpe_explorer_state_get_params (state, RPE_SPE_CONV),
                     gated && rpe_explorer_state_get_params (state, RPE_SPE_CONV)->gate != NULL, causal, layer, h);
  for (gsize i = 0; i < N_CAP * N_CAP; i++)
    {
      worst = fmax (worst, fabs (img->values[i] - ref[i]));
      peak = fmax (peak, ref[i]);
    }
  /* float32 logits of |l| up to a few units: the weights agree to ~1e-6 */
  g_test_message ("layer %zu, head %zu: max |A - A_naive| = %.3g (max weight %.3g)", layer, h, worst, peak);
  g_assert_cmpfloat (worst, <, 2e-5);
  /* the content is the capture's, not unit: the map is not the one of q = k = 1 */
  g_assert_cmpfloat (peak, >, 1.5 / N_CAP);
}

static void
test_open (Fixture       *f,
           gconstpointer  data)
{
  RpeWindow *window = open_window ();
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeUndo *undo = rpe_window_get_undo (window);
  guint content = 0, layer = 9, n_before;
  RpeExplorerCapture *capture;
  g_autofree char *sha = rpe_session_file_sha256 (f->path, NULL);

  g_object_set (state, "method", RPE_EXPLORER_METHOD_EXACT, "spe-kind", RPE_SPE_CONV, "head", 2, NULL);
  rpe_window_set_view (window, RPE_WINDOW_VIEW_ATTENTION);
  rpe_test_iterate_until (rpe_test_window_idle_drained, window);
  n_before = (guint) rpe_explorer_state_get_length (state);
  g_assert_cmpuint (n_before, !=, N_CAP);

  load_capture (window, f->path);
  /* the fixture records no fingerprint of a model: the banner says it cannot be checked */
  g_assert_nonnull (rpe_window_get_message (window));
  g_assert_nonnull (strstr (rpe_window_get_message (window), "records no fingerprint"));
  g_assert_nonnull (strstr (rpe_window_get_message (window), "demo:conv-spe"));
  g_object_get (state, "content", &content, "capture-layer", &layer, NULL);
  g_assert_cmpuint (content, ==, RPE_CONTENT_CAPTURE);
  g_assert_cmpuint (layer, ==, 0);
  g_assert_cmpuint (rpe_explorer_state_get_length (state), ==, N_CAP);
  capture = rpe_explorer_state_get_capture (state);
  g_assert_nonnull (capture);
  g_assert_cmpstr (capture->path, ==, f->path);
  g_assert_cmpstr (capture->sha256, ==, sha);
  assert_map (window, f, 0);

  /* one undo step puts the content and N back; redo opens it again */
  g_assert_cmpstr (rpe_undo_get_undo_label (undo), ==, "Open Capture");
  g_assert_true (rpe_undo_undo (undo));
  g_object_get (state, "content", &content, NULL);
  g_assert_cmpuint (content, !=, RPE_CONTENT_CAPTURE);
  g_assert_null (rpe_explorer_state_get_capture (state));
  g_assert_cmpuint (rpe_explorer_state_get_length (state), ==, n_before);
  g_assert_true (rpe_undo_redo (undo));
  g_assert_true (rpe_explorer_state_get_capture (state) == capture);
  g_assert_cmpuint (rpe_explorer_state_get_length (state), ==, N_CAP);
  assert_map (window, f, 0);

  /* the other layer (what the layer picker sets) and another head */
  g_object_set (state, "capture-layer", 1, "head", 3, NULL);
  assert_map (window, f, 1);

  /* a layer the capture lacks: the banner says the capture does not fit (no silent unit map) */
  g_assert_null (strstr (rpe_window_get_message (window), "does not fit"));
  g_object_set (state, "capture-layer", 7, NULL);
  g_assert_nonnull (rpe_window_get_message (window));
  g_assert_nonnull (strstr (rpe_window_get_message (window), "no layer 7"));

  rpe_test_iterate_until (rpe_test_window_idle_drained, window);
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_refuse (Fixture       *f,
             gconstpointer  data)
{
  RpeWindow *window = open_window ();
  RpeExplorerState *state = rpe_window_get_state (window);
  g_autoptr (RpeExplorerState) before = rpe_explorer_state_new ();
  g_autofree char *other = g_build_filename (f->dir, "other.npz", NULL);
  g_autofree char *junk = g_build_filename (f->dir, "junk.npz", NULL);
  const char *message;
  guint64 serial;

  /* a capture of another model: (H, D) = (2, 3) */
  rpe_test_write_capture (other, 1, 32, 2, 3, 0, 3, NULL, NULL, NULL);
  g_assert_true (g_file_set_contents (junk, "not a zip at all", -1, NULL));
  g_object_set (state, "spe-kind", RPE_SPE_CONV, NULL);
  rpe_test_iterate_until (rpe_test_window_idle_drained, window);
  rpe_test_copy_state (state, before);
  serial = rpe_explorer_state_get_serial (state);

  load_capture (window, other);
  message = rpe_window_get_message (window);
  g_assert_nonnull (message);
  g_test_message ("banner: %s", message);
  g_assert_nonnull (strstr (message, "(32, 2, 3)"));
  g_assert_nonnull (strstr (message, "(4, 16)"));
  g_assert_cmpuint (rpe_explorer_state_get_serial (state), ==, serial);
  g_assert_null (rpe_explorer_state_get_capture (state));
  g_assert_true (rpe_explorer_state_equal (state, before, NULL));

  load_capture (window, junk);
  g_assert_nonnull (rpe_window_get_message (window));
  g_assert_nonnull (strstr (rpe_window_get_message (window), "junk.npz"));
  g_assert_cmpuint (rpe_explorer_state_get_serial (state), ==, serial);

  /* a layer the capture does not have, asked for directly */
  {
    g_autoptr (GError) error = NULL;
    g_autoptr (RpeExplorerCapture) c = rpe_explorer_capture_open (f->path, &error);

    g_assert_no_error (error);
    g_assert_false (rpe_explorer_state_set_capture (state, c, 5, &error));
    g_assert_error (error, RPE_ERROR, RPE_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "0, 1"));
    g_assert_cmpuint (rpe_explorer_state_get_serial (state), ==, serial);
  }
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_session (Fixture       *f,
              gconstpointer  data)
{
  RpeWindow *window = open_window ();
  RpeExplorerState *state = rpe_window_get_state (window);
  g_autoptr (RpeSession) s = NULL;
  g_autoptr (RpeSession) back = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *text = NULL;
  g_autofree char *file = g_build_filename (f->dir, "s.rpe-session", NULL);
  g_autofree char *sha = rpe_session_file_sha256 (f->path, NULL);
  g_autofree char *what = NULL;
  RpeExplorerCapture *c;
  gsize length = 0;

  load_capture (window, f->path);
  g_object_set (state, "capture-layer", 1, NULL);
  s = rpe_window_build_session (window);
  text = rpe_session_to_data (s, &length, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (text, "\"capture\""));
  g_assert_nonnull (strstr (text, sha));
  back = rpe_session_load_data (text, length, file, &error);
  g_assert_no_error (error);
  /* the fixture records no fingerprint: that it belongs to the checkpoint cannot be checked */
  g_assert_cmpuint (back->warnings->len, ==, 1);
  g_assert_nonnull (strstr (g_ptr_array_index (back->warnings, 0), "records no fingerprint"));
  c = rpe_explorer_state_get_capture (back->state);
  g_assert_nonnull (c);
  g_assert_cmpstr (c->path, ==, f->path);
  g_assert_cmpstr (c->sha256, ==, sha);
  if (!rpe_explorer_state_equal (state, back->state, &what))
    g_error ("the session differs in %s", what);

  /* the capture changed since: a warning, the new file is read */
  {
    g_autoptr (RpeSession) changed = NULL;

    rpe_test_write_capture (f->path, 2, N_CAP, H_CAP, D_CAP, 16, 8, NULL, NULL, NULL);
    changed = rpe_session_load_data (text, length, file, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (changed->warnings->len, ==, 2);
    g_assert_nonnull (strstr (g_ptr_array_index (changed->warnings, 0), "SHA-256"));
    g_assert_nonnull (strstr (g_ptr_array_index (changed->warnings, 1), "records no fingerprint"));
  }
  /* gone: a warning, unit content */
  {
    g_autoptr (RpeSession) gone = NULL;

    g_unlink (f->path);
    gone = rpe_session_load_data (text, length, file, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (gone->warnings->len, ==, 1);
    g_assert_null (rpe_explorer_state_get_capture (gone->state));
  }
  rpe_test_iterate_until (rpe_test_window_idle_drained, window);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* ------------------------------------------------------------ outputs */

typedef struct
{
  RpeOutputsView *view;
  guint64         serial;
} WantOutputs;

static gboolean
outputs_current (gpointer data)
{
  WantOutputs      *w = data;
  RpeOutputsResult *r = rpe_outputs_view_get_result (w->view);

  return r != NULL && r->serial == w->serial && !rpe_figure_page_is_busy (RPE_FIGURE_PAGE (w->view));
}

static RpeOutputsResult *
settle_outputs (RpeWindow *window)
{
  RpeOutputsView *view = RPE_OUTPUTS_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_OUTPUTS));
  WantOutputs     w = { view, rpe_explorer_state_get_serial (rpe_window_get_state (window)) };

  rpe_test_wait_frames (GTK_WIDGET (window), 1);
  rpe_test_iterate_until (outputs_current, &w);
  return rpe_outputs_view_get_result (view);
}

/* The view's Values drop-down (the one whose first item is the impulses). */
static GtkDropDown *
find_values_drop (GtkWidget *w)
{
  if (GTK_IS_DROP_DOWN (w))
    {
      GListModel *m = gtk_drop_down_get_model (GTK_DROP_DOWN (w));

      if (GTK_IS_STRING_LIST (m) && g_list_model_get_n_items (m) >= 4
          && g_str_equal (gtk_string_list_get_string (GTK_STRING_LIST (m), 0), "One impulse per channel"))
        return GTK_DROP_DOWN (w);
    }
  for (GtkWidget *c = gtk_widget_get_first_child (w); c != NULL; c = gtk_widget_get_next_sibling (c))
    {
      GtkDropDown *d = find_values_drop (c);

      if (d != NULL)
        return d;
    }
  return NULL;
}

/* V of head h of the result equals the capture's values of that layer and head. */
static void
assert_captured_values (const RpeOutputsResult *r, const Fixture *f, guint layer, gsize h)
{
  const float *v = f->v + (gsize) layer * N_CAP * H_CAP * 16;

  g_assert_cmpuint (r->outputs.dv, ==, 16);
  g_assert_cmpuint (r->outputs.n, ==, N_CAP);
  for (gsize m = 0; m < N_CAP; m++)
    for (gsize c = 0; c < 16; c++)
      g_assert_cmpfloat (r->outputs.values[m * 16 + c], ==, v[(m * H_CAP + h) * 16 + c]);
}

/* The Outputs view's Values menu offers the capture's values of the layer shown, uses them,
 * and leaves them for any other choice; without a capture the item is gone. */
static void
test_outputs_values (Fixture *f, gconstpointer data)
{
  RpeWindow        *window = open_window ();
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeOutputsView   *view = RPE_OUTPUTS_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_OUTPUTS));
  GtkDropDown      *drop = find_values_drop (GTK_WIDGET (view));
  GListModel       *items;
  RpeOutputsResult *r;

  g_assert_nonnull (drop);
  items = gtk_drop_down_get_model (drop);
  g_object_set (state, "spe-kind", RPE_SPE_CONV, "head", 1, NULL);
  rpe_window_set_view (window, RPE_WINDOW_VIEW_OUTPUTS);
  g_assert_cmpuint (g_list_model_get_n_items (items), ==, 4);
  r = settle_outputs (window);
  g_assert_cmpuint (r->outputs.dv, ==, 4); /* impulses, 4 channels */

  load_capture (window, f->path);
  /* the capture's values appear in the menu, chosen */
  g_assert_cmpuint (g_list_model_get_n_items (items), ==, 5);
  g_assert_cmpstr (gtk_string_list_get_string (GTK_STRING_LIST (items), 4), ==, "Captured values (layer 0)");
  g_assert_cmpuint (gtk_drop_down_get_selected (drop), ==, 4);
  g_assert_true (rpe_outputs_view_get_captured (view));
  r = settle_outputs (window);
  assert_captured_values (r, f, 0, 1);

  /* another choice in the menu is used, not the capture's values */
  gtk_drop_down_set_selected (drop, 1); /* sine sweep */
  g_assert_false (rpe_outputs_view_get_captured (view));
  r = settle_outputs (window);
  g_assert_cmpuint (r->outputs.dv, ==, 4);
  g_assert_cmpfloat (fabs (r->outputs.values[1 * 4 + 0] - sin (M_PI * 1.0 / (2.0 * N_CAP))), <, 1e-5);

  /* back to the captured values, then the other layer: its values, its label */
  gtk_drop_down_set_selected (drop, 4);
  g_assert_true (rpe_outputs_view_get_captured (view));
  g_object_set (state, "capture-layer", 1, "head", 3, NULL);
  g_assert_cmpstr (gtk_string_list_get_string (GTK_STRING_LIST (items), 4), ==, "Captured values (layer 1)");
  g_assert_cmpuint (gtk_drop_down_get_selected (drop), ==, 4);
  r = settle_outputs (window);
  assert_captured_values (r, f, 1, 3);

  /* the capture closed: the item goes, the sweep chosen before is used again */
  gtk_widget_activate_action (GTK_WIDGET (window), "win.close-capture", NULL);
  g_assert_cmpuint (g_list_model_get_n_items (items), ==, 4);
  g_assert_false (rpe_outputs_view_get_captured (view));
  g_assert_false (rpe_outputs_view_set_captured (view));
  g_assert_cmpuint (gtk_drop_down_get_selected (drop), ==, 1);
  r = settle_outputs (window);
  g_assert_cmpuint (r->outputs.dv, ==, 4);

  rpe_test_iterate_until (rpe_test_window_idle_drained, window);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The trained LRPE, FastRPB and APE demos opened with their shipped captures: the Attention view
 * draws each trained model's own map, cell by cell the naive one of rpe_test_demo_model_map (the
 * same reference `rpe export attention` is held to in test-demos), for two layers and heads. */
static void
test_trained_demos (Fixture *f, gconstpointer data)
{
  static const char *const       names[] = { "lrpe", "fastrpb", "ape" };
  static const RpeExplorerMethod methods[] = { RPE_EXPLORER_METHOD_LRPE, RPE_EXPLORER_METHOD_FASTRPB,
                                               RPE_EXPLORER_METHOD_APE };

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      RpeWindow        *window = rpe_window_new (NULL);
      RpeExplorerState *state = rpe_window_get_state (window);
      g_autofree char  *spec = g_strconcat ("demo:", names[i], NULL);
      g_autoptr (GError) error = NULL;
      g_autoptr (RpeTensorSet) set = rpe_demos_read (spec, &error);
      g_autoptr (RpeCapture) capture = rpe_capture_open (spec, &error);
      guint method = 0;

      g_assert_no_error (error);
      gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
      gtk_window_present (GTK_WINDOW (window));
      rpe_test_iterate_until (rpe_test_window_idle, window);
      rpe_window_open_demo (window, spec);
      rpe_test_iterate_until (rpe_test_window_idle_drained, window);
      g_assert_null (rpe_window_get_message (window));
      /* the window picks the demo's trained method */
      g_object_get (state, "method", &method, NULL);
      g_assert_cmpuint (method, ==, methods[i]);
      rpe_window_set_view (window, RPE_WINDOW_VIEW_ATTENTION);
      load_capture (window, spec);
      g_assert_null (rpe_window_get_message (window));
      g_object_set (state, "causal", TRUE, NULL);
      for (guint layer = 0; layer < 2; layer++)
        {
          RpeAttentionImage *img;
          gsize              h = layer == 0 ? 1 : 3, N;
          g_autofree double *ref = NULL, *kappa = NULL;
          double             worst = 0.0, peak = 0.0;

          g_object_set (state, "capture-layer", layer, "head", (guint) h, NULL);
          img = settle_attention (window);
          g_assert_cmpint (img->method, ==, methods[i]);
          N = img->n;
          g_assert_cmpuint (N, ==, rpe_capture_get (capture, layer, RPE_CAPTURE_QUERIES)->shape[0]);
          g_assert_true (img->m0 == 0 && img->m1 == N && img->n0 == 0 && img->n1 == N);
          ref = g_new (double, N *N);
          kappa = g_new (double, N);
          rpe_test_demo_model_map (set, capture, names[i], layer, h, ref, kappa);
          /* every cell drawn (N = 256 fits the view): the bound of test-demos, 1e-4 kappa of the
           * row's largest magnitude (float32 sums over at most N terms, times the condition of
           * the row's normalisation) */
          g_assert_cmpuint (img->rows, ==, N);
          g_assert_cmpuint (img->cols, ==, N);
          for (gsize m = 0; m < N; m++)
            {
              double row = 0.0, err = 0.0;

              for (gsize n = 0; n < N; n++)
                {
                  row = fmax (row, fabs (ref[m * N + n]));
                  err = fmax (err, fabs (img->values[m * N + n] - ref[m * N + n]));
                }
              g_assert_cmpfloat (err, <=, 1e-4 * kappa[m] * row + 1e-7);
              worst = fmax (worst, err);
              peak = fmax (peak, row);
            }
          g_test_message ("%s layer %u head %zu: max |window - naive| = %.3g of %.3g", names[i], layer, h, worst, peak);
          if (methods[i] == RPE_EXPLORER_METHOD_FASTRPB)
            {
              /* the bias drawn is the stored one at every offset of the N = 256 map, not only the
               * editor's |tau| < 32: w_tau = w[0, h, (tau + M) mod (2M - 1)] (full layout) */
              g_autoptr (RpeExplorerSnapshot) snap = rpe_explorer_state_snapshot (state);
              g_autofree char  *wname = g_strdup_printf ("layers.%u.positional_bias.bias.w", layer);
              const RpeTensor  *w = rpe_tensor_set_lookup (set, wname);
              const gsize       X = w->shape[2], M = (X + 1) / 2;
              g_autofree float *got = g_new (float, 2 * N - 1);
              gsize             beyond = 0;

              rpe_explorer_snapshot_fastrpb_weights (snap, N, got);
              for (gsize t = 0; t < 2 * N - 1; t++)
                {
                  long  tau = (long) t - (long) (N - 1);
                  float want = w->data[h * X + (gsize) ((tau + (long) M + (long) X) % (long) X)];

                  g_assert_cmpfloat (got[t], ==, want);
                  beyond += labs (tau) >= 32 && want != 0.0f;
                }
              g_assert_cmpuint (beyond, >, 0);
            }
        }
      {
        /* the Overview's engine on the window's state: every layer and head of the trained model,
         * each cell the model's map of that layer and head (the capture's layer, FastRPB's bias
         * of that layer) */
        g_autoptr (RpeExplorerSnapshot) snap = rpe_explorer_state_snapshot (state);
        g_autoptr (RpeOverview) ov = NULL;
        RpeCompareSide side;

        rpe_compare_side_init (&side, snap);
        ov = rpe_overview_compute (&side, RPE_COMPARE_ATTENTION, snap->n, 0, NULL, &error);
        rpe_compare_side_clear (&side);
        g_assert_no_error (error);
        g_assert_cmpuint (ov->n_layers, ==, 2);
        g_assert_cmpuint (ov->n_heads, ==, 4);
        g_assert_cmpuint (ov->rows, ==, snap->n);
        for (gsize l = 0; l < 2; l++)
          for (gsize h = 0; h < 4; h++)
            {
              gsize              N = snap->n;
              g_autofree double *ref = g_new (double, N *N), *kappa = g_new (double, N);
              const float       *cell = ov->values + (l * 4 + h) * N * N;

              g_assert_cmpint (ov->layers[l], ==, (int) l);
              rpe_test_demo_model_map (set, capture, names[i], (guint) l, h, ref, kappa);
              for (gsize m = 0; m < N; m++)
                {
                  double row = 0.0, err = 0.0;

                  for (gsize n = 0; n < N; n++)
                    {
                      row = fmax (row, fabs (ref[m * N + n]));
                      err = fmax (err, fabs (cell[m * N + n] - ref[m * N + n]));
                    }
                  g_assert_cmpfloat (err, <=, 1e-4 * kappa[m] * row + 1e-7);
                }
            }
      }
      rpe_test_iterate_until (rpe_test_window_idle_drained, window);
      gtk_window_destroy (GTK_WINDOW (window));
    }
}

int
main (int   argc,
      char *argv[])
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  g_test_add ("/ui/capture/open", Fixture, NULL, fixture_set_up, test_open, fixture_tear_down);
  g_test_add ("/ui/capture/refuse", Fixture, NULL, fixture_set_up, test_refuse, fixture_tear_down);
  g_test_add ("/ui/capture/session", Fixture, NULL, fixture_set_up, test_session, fixture_tear_down);
  g_test_add ("/ui/capture/outputs-values", Fixture, NULL, fixture_set_up, test_outputs_values, fixture_tear_down);
  g_test_add ("/ui/capture/trained-demos", Fixture, NULL, fixture_set_up, test_trained_demos, fixture_tear_down);
  return g_test_run ();
}

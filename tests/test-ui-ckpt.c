/* test-ui-ckpt.c: the window on checkpoints in the SPE authors' layouts (tests/fixtures/
 * make-checkpoint-fixtures.py), under Xvfb: a gated checkpoint opens showing its gated
 * templates; the layer picker changes what is shown; roles assigned in the tensor browser
 * show beside each tensor and are used.  The templates shown are compared with MATH.md
 * sections 1-3 computed here from the raw tensors. */
#include "config.h"

#include <math.h>
#include <string.h>

#include <adwaita.h>

#include "rpe-checkpoint.h"
#include "rpe-templates-view.h"
#include "rpe-tensor-browser.h"
#include "rpe-window.h"
#include "rpe-ui-test-utils.h"
#include "rpe-ui-wait.h"

static gboolean
not_loading (gpointer data)
{
  return !rpe_window_is_loading (RPE_WINDOW (data));
}

typedef struct
{
  RpeWindow *window;
  gboolean   gated;
  gsize      head;
} Want;

/* The templates view shows a result for the wanted head and gating. */
static gboolean
templates_ready (gpointer data)
{
  Want *w = data;
  RpeTemplatesView *tv = RPE_TEMPLATES_VIEW (rpe_window_get_view_widget (w->window, RPE_WINDOW_VIEW_TEMPLATES));
  RpeTemplates *t = rpe_templates_view_get_templates (tv);

  return !rpe_window_is_busy (w->window) && t != NULL && t->gated == w->gated && t->head == w->head;
}

static void
settle (RpeWindow *window,
        gboolean   gated,
        gsize      head)
{
  Want w = { window, gated, head };

  rpe_test_wait_frames (GTK_WIDGET (window), 1);
  rpe_test_iterate_until (rpe_test_window_idle, window);
  rpe_test_iterate_until (templates_ready, &w);
  rpe_test_wait_frames (GTK_WIDGET (window), 1);
}

static char *
fixture (const char *file)
{
  return g_test_build_filename (G_TEST_DIST, "fixtures", "ckpt", file, NULL);
}

static RpeWindow *
open_checkpoint (const char *file)
{
  g_autofree char *path = fixture (file);
  g_autoptr (GFile) gfile = g_file_new_for_path (path);
  RpeWindow *window = rpe_window_new (NULL);

  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  rpe_window_set_view (window, RPE_WINDOW_VIEW_TEMPLATES);
  gtk_window_present (GTK_WINDOW (window));
  rpe_test_wait_frames (GTK_WIDGET (window), 1);
  rpe_test_iterate_until (rpe_test_window_idle, window);
  rpe_window_open_file (window, gfile);
  rpe_test_iterate_until (not_loading, window);
  g_assert_null (rpe_window_get_message (window));
  return window;
}

static const RpeTensor *
raw (const RpeTensorSet *set,
     const char         *name)
{
  const RpeTensor *t = rpe_tensor_set_lookup (set, name);

  g_assert_nonnull (t);
  return t;
}

static double
ref_sigmoid (double x)
{
  return 1.0 / (1.0 + exp (-x));
}

/* Max |shown - (1 - g) P + g| over the head's features and every (m, n), with P
 * from the raw sine tensors (MATH.md 1) and g = sigmoid(gate) (MATH.md 3). */
static double
sine_error (RpeWindow          *window,
            const RpeTensorSet *set,
            const char         *code,
            const char         *gate_name,
            gsize               head)
{
  RpeTemplatesView *tv = RPE_TEMPLATES_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_TEMPLATES));
  RpeTemplates *t = rpe_templates_view_get_templates (tv);
  g_autofree char *fn = g_strdup_printf ("%s.freqs", code), *on = g_strdup_printf ("%s.offsets", code);
  g_autofree char *gn = g_strdup_printf ("%s.gains", code);
  const RpeTensor *f = raw (set, fn), *o = raw (set, on), *ga = raw (set, gn), *gate = raw (set, gate_name);
  gsize D = f->shape[1], K = f->shape[2], n = t->n;
  double err = 0;

  g_assert_cmpuint (t->n_features, ==, D);
  for (gsize d = 0; d < D; d++)
    {
      const float *shown = rpe_templates_get_feature (t, d);
      double g = ref_sigmoid (gate->data[head * D + d]);

      for (gsize m = 0; m < n; m++)
        for (gsize k = 0; k < n; k++)
          {
            double tau = (double) m - (double) k, p = 0;

            for (gsize s = 0; s < K; s++)
              {
                gsize at = (head * D + d) * K + s;
                double lambda = log1p (exp (ga->data[at]));
                p += lambda * lambda * cos (2 * G_PI * ref_sigmoid (f->data[at]) / 2 * tau + o->data[at]);
              }
            p /= 2.0 * (double) K;
            err = fmax (err, fabs (shown[m * n + k] - ((1 - g) * p + g)));
          }
    }
  return err;
}

/* A gated checkpoint opens gated; picking a layer shows that layer's gated templates. */
static void
test_layers (void)
{
  g_autofree char *path = fixture ("spe-per-layer.pt");
  g_autoptr (RpeTensorSet) set = rpe_checkpoint_read (path, NULL);
  RpeWindow *window = open_checkpoint ("spe-per-layer.pt");
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeTensorBrowser *browser;
  gboolean gated = FALSE;
  double err;

  g_object_set (state, "head", 1, NULL);
  g_object_get (state, "gated", &gated, NULL);
  g_assert_true (gated);
  settle (window, TRUE, 1);
  /* layer 0's gate by default */
  err = sine_error (window, set, "encoder.spe", "encoder.spe_filters.0.gate", 1);
  g_test_message ("layer 0 (default): max error %.3g", err);
  g_assert_cmpfloat (err, <, 1e-5);
  g_assert_cmpfloat (sine_error (window, set, "encoder.spe", "encoder.spe_filters.2.gate", 1), >, 1e-3);

  /* the layer picker: layer 2 */
  browser = rpe_window_get_tensor_browser (window);
  g_assert_nonnull (browser);
  rpe_tensor_browser_choose (browser, 0, 2);
  g_assert_nonnull (strstr (rpe_explorer_state_get_source (state, RPE_SPE_SINE), "layer 2"));
  settle (window, TRUE, 1);
  err = sine_error (window, set, "encoder.spe", "encoder.spe_filters.2.gate", 1);
  g_test_message ("layer 2: max error %.3g", err);
  g_assert_cmpfloat (err, <, 1e-5);
  g_assert_cmpfloat (sine_error (window, set, "encoder.spe", "encoder.spe_filters.0.gate", 1), >, 1e-3);
  rpe_test_wait_jobs ();
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Roles assigned in the browser show beside the tensors and are what is loaded. */
static void
test_roles (void)
{
  g_autofree char *path = fixture ("spe-readme.pt");
  g_autoptr (RpeTensorSet) set = rpe_checkpoint_read (path, NULL);
  RpeWindow *window = open_checkpoint ("spe-readme.pt");
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeTensorBrowser *browser = rpe_window_get_tensor_browser (window);
  guint freqs_row = G_MAXUINT, offsets_row = G_MAXUINT;
  double err;

  g_assert_nonnull (browser);
  g_object_set (state, "head", 0, NULL);
  settle (window, TRUE, 0);
  g_assert_cmpfloat (sine_error (window, set, "spe_encoder", "spe_filter.gate", 0), <, 1e-5);

  for (guint i = 0; i < rpe_tensor_set_size (set); i++)
    {
      if (strcmp (rpe_tensor_set_get (set, i)->name, "spe_encoder.freqs") == 0)
        freqs_row = i;
      if (strcmp (rpe_tensor_set_get (set, i)->name, "spe_encoder.offsets") == 0)
        offsets_row = i;
    }
  g_assert_cmpuint (freqs_row, <, rpe_tensor_set_size (set));
  /* swap freqs and offsets on purpose, so that the result must differ */
  g_assert_true (rpe_tensor_browser_assign (browser, "spe_encoder.freqs", RPE_ROLE_SINE_OFFSETS));
  g_assert_cmpstr (rpe_tensor_browser_get_row_role (browser, freqs_row), ==, "offsets");
  g_assert_true (rpe_tensor_browser_assign (browser, "spe_encoder.offsets", RPE_ROLE_SINE_OFFSETS));
  /* one tensor per role: the first one went back to none */
  g_assert_cmpstr (rpe_tensor_browser_get_row_role (browser, freqs_row), ==, "");
  g_assert_cmpstr (rpe_tensor_browser_get_row_role (browser, offsets_row), ==, "offsets");
  g_assert_true (rpe_tensor_browser_assign (browser, "spe_encoder.offsets", RPE_ROLE_SINE_FREQS));
  g_assert_true (rpe_tensor_browser_assign (browser, "spe_encoder.freqs", RPE_ROLE_SINE_OFFSETS));
  g_assert_true (rpe_tensor_browser_assign (browser, "spe_encoder.gains", RPE_ROLE_SINE_GAINS));
  g_assert_cmpstr (rpe_tensor_browser_get_row_role (browser, offsets_row), ==, "freqs");
  g_assert_cmpstr (rpe_tensor_map_get (rpe_tensor_browser_get_map (browser), RPE_ROLE_SINE_OFFSETS), ==,
                   "spe_encoder.freqs");
  rpe_tensor_browser_choose (browser, 0, -1);
  settle (window, TRUE, 0);
  g_assert_nonnull (strstr (rpe_explorer_state_get_source (state, RPE_SPE_SINE), "mapped"));
  /* what is shown now: offsets and freqs swapped, still gated by spe_filter.gate */
  {
    g_autoptr (RpeTensorSet) swapped = rpe_tensor_set_new ();
    const char *names[4][2] = { { "spe_encoder.offsets", "x.freqs" }, { "spe_encoder.freqs", "x.offsets" },
                                { "spe_encoder.gains", "x.gains" }, { "spe_filter.gate", "g" } };

    for (int i = 0; i < 4; i++)
      {
        const RpeTensor *src = raw (set, names[i][0]);
        RpeTensor *copy = rpe_tensor_new (names[i][1], src->ndim, src->shape, NULL);
        memcpy (copy->data, src->data, src->n_elements * sizeof (float));
        g_assert_true (rpe_tensor_set_add (swapped, copy, NULL));
      }
    err = sine_error (window, swapped, "x", "g", 0);
    g_test_message ("mapped roles: max error %.3g", err);
    g_assert_cmpfloat (err, <, 1e-5);
  }
  rpe_test_wait_jobs ();
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int   argc,
      char *argv[])
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  g_test_add_func ("/ui/ckpt/layers", test_layers);
  g_test_add_func ("/ui/ckpt/roles", test_roles);
  return g_test_run ();
}

/* test-ui-ckpt.c: the window on checkpoints in the SPE authors' layouts (tests/fixtures/
 * make-checkpoint-fixtures.py), under Xvfb: a gated checkpoint opens showing its gated
 * templates; the layer picker changes what is shown; roles assigned in the tensor browser
 * show beside each tensor and are used.  The templates shown are compared with docs/math.md
 * sections 1-3 computed here from the raw tensors.  LRPE (tests/fixtures/lrpe/): the trained v,
 * theta and permutation of a checkpoint's modules (or .npy files, or tensor-browser roles on
 * odd names) drive the attention view, compared with docs/math.md, section 7 computed here and with
 * `rpe compute lrpe-encode` on the same file.  2-D convSPE: the grid window's lag image against
 * `rpe compute template --grid`, one query's attention against a naive computation. */
#include "config.h"

#include <math.h>
#include <string.h>

#include <adwaita.h>

#include "rpe-attention-view.h"
#include "rpe-checkpoint.h"
#include "rpe-npy.h"
#include "rpe-templates-view.h"
#include "rpe-ticks.h"
#include "rpe-test-utils.h"
#include "rpe-tensor-browser.h"
#include "rpe-window-test.h"
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
 * from the raw sine tensors (docs/math.md, section 1) and g = sigmoid(gate) (docs/math.md, section 3). */
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

  /* the layer picker (Checkpoint Contents, offered by the "Opened" toast): layer 2 */
  gtk_widget_activate_action (GTK_WIDGET (window), "win.browse-tensors", NULL);
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
  RpeTensorBrowser *browser;
  guint freqs_row = G_MAXUINT, offsets_row = G_MAXUINT;
  double err;

  gtk_widget_activate_action (GTK_WIDGET (window), "win.browse-tensors", NULL);
  browser = rpe_window_get_tensor_browser (window);
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


/* ------------------------------------------------------------------ LRPE */

static char *
lrpe_fixture (const char *file)
{
  return g_test_build_filename (G_TEST_DIST, "fixtures", "lrpe", file, NULL);
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
  RpeAttentionView *av = RPE_ATTENTION_VIEW (rpe_window_get_view_widget (w->window, RPE_WINDOW_VIEW_ATTENTION));
  RpeAttentionImage *img = rpe_attention_view_get_image (av);

  return !rpe_window_is_busy (w->window) && img != NULL && img->serial == w->serial;
}

/* The attention image for the current state (one cell per pixel at this N). */
static RpeAttentionImage *
settle_attention (RpeWindow *window)
{
  WantImage w = { window, rpe_explorer_state_get_serial (rpe_window_get_state (window)) };
  RpeAttentionImage *img;

  rpe_test_wait_frames (GTK_WIDGET (window), 1);
  rpe_test_iterate_until (attention_current, &w);
  img = rpe_attention_view_get_image (RPE_ATTENTION_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_ATTENTION)));
  g_assert_cmpuint (img->rows, ==, img->n);
  g_assert_cmpuint (img->cols, ==, img->n);
  g_assert_cmpint (img->method, ==, RPE_EXPLORER_METHOD_LRPE);
  return img;
}

/* Naive docs/math.md, section 7 for the file's module: x (D) at position s -> Lambda(s) P x, with P the
 * Householder reflection on v / (|v| + 1e-6) (learned) or the odd-even gather, and Lambda the
 * rotation of pairs by s * theta_k or the permutation row T[s] of the stored buffer. */
static void
naive_encode (const float *x, gsize D, gsize s, const RpeTensor *v, const RpeTensor *theta,
              const RpeTensor *perm, gboolean odd_even, double *out)
{
  double z[64];

  g_assert_cmpuint (D, <=, 64);
  for (gsize j = 0; j < D; j++)
    z[j] = x[j];
  if (v != NULL)
    {
      double norm = 0, dot = 0;

      for (gsize j = 0; j < D; j++)
        norm += (double) v->data[j] * v->data[j];
      norm = sqrt (norm) + 1e-6;
      for (gsize j = 0; j < D; j++)
        dot += z[j] * v->data[j] / norm;
      for (gsize j = 0; j < D; j++)
        z[j] -= 2 * dot * v->data[j] / norm;
    }
  if (odd_even)
    {
      gsize h = D - D / 2;

      for (gsize j = 0; j < D; j++)
        out[j] = x[j % 2 == 0 ? j / 2 : h + j / 2];
      memcpy (z, out, D * sizeof (double));
    }
  if (theta != NULL)
    {
      for (gsize k = 0; k < D / 2; k++)
        {
          double a = (double) s * theta->data[k], c = cos (a), sn = sin (a);

          out[2 * k] = z[2 * k] * c - z[2 * k + 1] * sn;
          out[2 * k + 1] = z[2 * k + 1] * c + z[2 * k] * sn;
        }
    }
  else if (perm != NULL)
    {
      for (gsize j = 0; j < D; j++)
        out[j] = z[(gsize) perm->data[s * D + j]];
    }
  else
    memcpy (out, z, D * sizeof (double));
}

/* max |shown - softmax_n (enc(q_m, m) . enc(k_n, n) / sqrt D)| for head h, enc given (N, H, D). */
static double
softmax_error (const RpeAttentionImage *img, const double *enc, gsize N, gsize H, gsize D, gsize h)
{
  double err = 0;

  for (gsize m = 0; m < N; m++)
    {
      double logits[64], mx = -INFINITY, sum = 0;

      for (gsize n = 0; n < N; n++)
        {
          double dot = 0;

          for (gsize j = 0; j < D; j++)
            dot += enc[(m * H + h) * D + j] * enc[(n * H + h) * D + j];
          logits[n] = dot / sqrt ((double) D);
          mx = fmax (mx, logits[n]);
        }
      for (gsize n = 0; n < N; n++)
        sum += exp (logits[n] - mx);
      for (gsize n = 0; n < N; n++)
        err = fmax (err, fabs (img->values[m * N + n] - exp (logits[n] - mx) / sum));
    }
  return err;
}

static double
naive_error (const RpeAttentionImage *img, const RpeTensor *q, gsize h, const RpeTensor *v,
             const RpeTensor *theta, const RpeTensor *perm, gboolean odd_even)
{
  gsize N = q->shape[0], H = q->shape[1], D = q->shape[2];
  g_autofree double *enc = g_new (double, N * H * D);

  for (gsize m = 0; m < N; m++)
    for (gsize hh = 0; hh < H; hh++)
      naive_encode (q->data + (m * H + hh) * D, D, m, v, theta, perm, odd_even, enc + (m * H + hh) * D);
  return softmax_error (img, enc, N, H, D, h);
}

/* The same from `rpe compute lrpe-encode ARGS --queries q.npy` (the CLI's encoding). */
static double
cli_error (const RpeAttentionImage *img, const char *q_path, gsize h, const char *args)
{
  g_autofree char *out = g_build_filename (rpe_test_tmpdir (), "ui-lrpe-enc.npy", NULL);
  g_autofree char *cmd = g_strdup_printf ("'%s' compute lrpe-encode %s --queries '%s' -o '%s'",
                                          g_getenv ("RPE_CLI"), args, q_path, out);
  g_auto (GStrv) argv = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeTensor) enc = NULL;
  g_autofree double *e = NULL;
  int status = 0;

  g_assert_true (g_shell_parse_argv (cmd, NULL, &argv, &error));
  g_assert_true (g_spawn_sync (NULL, argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL | G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                               NULL, NULL, NULL, &status, &error));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  enc = rpe_npy_read (out, &error);
  g_assert_no_error (error);
  e = g_new (double, enc->n_elements);
  for (gsize i = 0; i < enc->n_elements; i++)
    e[i] = enc->data[i];
  return softmax_error (img, e, enc->shape[0], enc->shape[1], enc->shape[2], h);
}

static RpeWindow *
lrpe_window (RpeTensor **q_out)
{
  g_autofree char *q_path = lrpe_fixture ("q.npy");
  g_autoptr (GError) error = NULL;
  RpeTensor *q = rpe_npy_read (q_path, &error);
  RpeWindow *window = rpe_window_new (NULL);
  RpeExplorerState *state = rpe_window_get_state (window);

  g_assert_no_error (error);
  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  rpe_window_set_view (window, RPE_WINDOW_VIEW_ATTENTION);
  gtk_window_present (GTK_WINDOW (window));
  rpe_test_wait_frames (GTK_WIDGET (window), 1);
  rpe_test_iterate_until (rpe_test_window_idle, window);
  /* the queries and keys of the CLI runs below: (16, 2, 8) */
  g_assert_true (rpe_explorer_state_set_npy_content (state, q->data, q->ndim, q->shape, &error));
  g_object_set (state, "length", (guint) q->shape[0], "head", 1, "causal", FALSE, NULL);
  *q_out = q;
  return window;
}

/* A checkpoint's LRPE modules: the first is used on opening with P and Lambda as it implies,
 * the others are choices of the "Parameters" row, and "Seeded" goes back to the seeded ones. */
static void
test_lrpe_checkpoint (void)
{
  g_autofree char *path = lrpe_fixture ("lrpe.pt");
  g_autofree char *q_path = lrpe_fixture ("q.npy");
  g_autoptr (GFile) gfile = g_file_new_for_path (path);
  g_autoptr (RpeTensorSet) set = rpe_checkpoint_read (path, NULL);
  g_autoptr (RpeTensor) q = NULL;
  RpeWindow *window = lrpe_window (&q);
  RpeExplorerState *state = rpe_window_get_state (window);
  GtkWidget *row = rpe_window_get_lrpe_params_row (window);
  g_autofree char *args = NULL;
  RpeAttentionImage *img;
  gboolean trained = FALSE;
  guint p = 0, lambda = 0, method = 0;
  double err, err_cli, seeded;

  rpe_window_open_file (window, gfile);
  rpe_test_iterate_until (not_loading, window);
  g_assert_null (rpe_window_get_message (window));
  /* LRPE only: the window shows LRPE, with the first module's trained parameters */
  g_object_get (state, "method", &method, "lrpe-trained", &trained, "lrpe-p", &p, "lrpe-lambda", &lambda, NULL);
  g_assert_cmpuint (method, ==, RPE_EXPLORER_METHOD_LRPE);
  g_assert_true (trained);
  g_assert_cmpuint (p, ==, RPE_LRPE_P_HOUSEHOLDER);
  g_assert_cmpuint (lambda, ==, RPE_LRPE_LAMBDA_ROTATION);
  g_assert_cmpuint (adw_combo_row_get_selected (ADW_COMBO_ROW (row)), ==, 1);
  g_assert_nonnull (strstr (adw_action_row_get_subtitle (ADW_ACTION_ROW (row)), "From checkpoint"));
  g_assert_cmpuint (g_list_model_get_n_items (adw_combo_row_get_model (ADW_COMBO_ROW (row))), ==, 4);

  img = settle_attention (window);
  err = naive_error (img, q, 1, raw (set, "encoder.layers.0.attn.lrpe.v"), raw (set, "encoder.layers.0.attn.lrpe.theta"),
                     NULL, FALSE);
  err_cli = cli_error (img, q_path, 1, args = g_strdup_printf ("--checkpoint '%s' --prefix encoder.layers.0.attn.lrpe", path));
  g_test_message ("module 0 (learned v, learned theta): max error %.3g (naive), %.3g (rpe)", err, err_cli);
  g_assert_cmpfloat (err, <, 1e-5);
  g_assert_cmpfloat (err_cli, <, 1e-5);

  /* module 1: the permutation buffer; P is not stored (the user picks odd-even, as the CLI's --lrpe-p) */
  adw_combo_row_set_selected (ADW_COMBO_ROW (row), 2);
  g_object_get (state, "lrpe-lambda", &lambda, NULL);
  g_assert_cmpuint (lambda, ==, RPE_LRPE_LAMBDA_PERMUTATION);
  g_object_set (state, "lrpe-p", RPE_LRPE_P_ODD_EVEN, NULL);
  img = settle_attention (window);
  err = naive_error (img, q, 1, NULL, NULL, raw (set, "encoder.layers.1.attn.lrpe.permutation"), TRUE);
  g_clear_pointer (&args, g_free);
  err_cli = cli_error (img, q_path, 1,
                       args = g_strdup_printf ("--checkpoint '%s' --prefix encoder.layers.1.attn.lrpe --lrpe-p odd-even", path));
  g_test_message ("module 1 (permutation buffer, odd-even P): max error %.3g (naive), %.3g (rpe)", err, err_cli);
  g_assert_cmpfloat (err, <, 1e-5);
  g_assert_cmpfloat (err_cli, <, 1e-5);

  /* back to the seeded choices: rotation with theta A and odd-even P, not the trained buffer */
  adw_combo_row_set_selected (ADW_COMBO_ROW (row), 0);
  g_object_get (state, "lrpe-trained", &trained, NULL);
  g_assert_false (trained);
  g_assert_nonnull (strstr (adw_action_row_get_subtitle (ADW_ACTION_ROW (row)), "Seeded"));
  img = settle_attention (window);
  seeded = naive_error (img, q, 1, NULL, NULL, raw (set, "encoder.layers.1.attn.lrpe.permutation"), TRUE);
  g_test_message ("seeded: differs from the trained buffer by %.3g", seeded);
  g_assert_cmpfloat (seeded, >, 1e-3);
  /* and on again */
  adw_combo_row_set_selected (ADW_COMBO_ROW (row), 2);
  img = settle_attention (window);
  g_assert_cmpfloat (naive_error (img, q, 1, NULL, NULL, raw (set, "encoder.layers.1.attn.lrpe.permutation"), TRUE),
                     <, 1e-5);
  rpe_test_wait_jobs ();
  gtk_window_destroy (GTK_WINDOW (window));
}

/* v.npy and theta.npy opened as LRPE parameters give module 0's attention. */
static void
test_lrpe_files (void)
{
  g_autofree char *path = lrpe_fixture ("lrpe.pt");
  g_autofree char *v_path = lrpe_fixture ("v.npy");
  g_autofree char *t_path = lrpe_fixture ("theta.npy");
  g_autofree char *q_path = lrpe_fixture ("q.npy");
  g_autoptr (RpeTensorSet) set = rpe_checkpoint_read (path, NULL);
  g_autoptr (RpeTensor) q = NULL;
  RpeWindow *window = lrpe_window (&q);
  RpeExplorerState *state = rpe_window_get_state (window);
  GtkWidget *row = rpe_window_get_lrpe_params_row (window);
  GFile *files[2] = { g_file_new_for_path (v_path), g_file_new_for_path (t_path) };
  g_autoptr (GError) error = NULL;
  g_autofree char *args = g_strdup_printf ("--lrpe-v '%s' --lrpe-theta-file '%s'", v_path, t_path);
  RpeAttentionImage *img;
  double err;

  g_object_set (state, "method", RPE_EXPLORER_METHOD_LRPE, NULL);
  g_assert_true (rpe_window_open_lrpe_files (window, files, 2, &error));
  g_assert_no_error (error);
  g_assert_nonnull (strstr (adw_action_row_get_subtitle (ADW_ACTION_ROW (row)), "From files"));
  img = settle_attention (window);
  err = naive_error (img, q, 1, raw (set, "encoder.layers.0.attn.lrpe.v"), raw (set, "encoder.layers.0.attn.lrpe.theta"),
                     NULL, FALSE);
  g_test_message ("v.npy + theta.npy: max error %.3g", err);
  g_assert_cmpfloat (err, <, 1e-5);
  g_assert_cmpfloat (cli_error (img, q_path, 1, args), <, 1e-5);
  /* a file that is no LRPE parameter: the banner, the parameters in use stay */
  g_object_unref (files[1]);
  files[1] = g_file_new_for_path (q_path);
  g_assert_false (rpe_window_open_lrpe_files (window, files + 1, 1, &error));
  g_assert_nonnull (rpe_window_get_message (window));
  g_object_unref (files[0]);
  g_object_unref (files[1]);
  rpe_test_wait_jobs ();
  gtk_window_destroy (GTK_WINDOW (window));
}

/* lrpe-odd.pt holds the tensors under names nothing recognises: roles assigned in the tensor
 * browser (lrpe.v, lrpe.theta, fastrpb.w) show beside them and are what the window uses. */
static void
test_lrpe_roles (void)
{
  g_autofree char *path = lrpe_fixture ("lrpe-odd.pt");
  g_autofree char *std_path = lrpe_fixture ("lrpe.pt");
  g_autoptr (GFile) gfile = g_file_new_for_path (path);
  g_autoptr (RpeTensorSet) set = rpe_checkpoint_read (path, NULL);
  g_autoptr (RpeTensor) q = NULL;
  RpeWindow *window = lrpe_window (&q);
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeTensorBrowser *browser;
  RpeAttentionImage *img;
  g_autofree char *args = g_strdup_printf ("--checkpoint '%s' --prefix encoder.layers.0.attn.lrpe", std_path);
  g_autofree char *q_path = lrpe_fixture ("q.npy");
  const RpeTensor *w = raw (set, "pos.table");
  gsize count = 0;
  const float *taps;
  guint method = 0;
  double err = 0;

  rpe_window_open_file (window, gfile);
  rpe_test_iterate_until (not_loading, window);
  /* nothing recognised: the banner says so and the browser opens for roles */
  g_assert_nonnull (rpe_window_get_message (window));
  browser = rpe_window_get_tensor_browser (window);
  g_assert_nonnull (browser);
  g_assert_true (rpe_tensor_browser_assign (browser, "blk0.house", RPE_ROLE_LRPE_V));
  g_assert_true (rpe_tensor_browser_assign (browser, "blk0.angles", RPE_ROLE_LRPE_THETA));
  g_assert_true (rpe_tensor_browser_assign (browser, "pos.table", RPE_ROLE_FASTRPB_W));
  for (guint i = 0; i < rpe_tensor_set_size (set); i++)
    {
      const char *name = rpe_tensor_set_get (set, i)->name;
      const char *want = strcmp (name, "blk0.house") == 0 ? "lrpe.v" : strcmp (name, "blk0.angles") == 0 ? "lrpe.theta"
                         : strcmp (name, "pos.table") == 0 ? "fastrpb.w" : "";

      g_assert_cmpstr (rpe_tensor_browser_get_row_role (browser, i), ==, want);
    }
  rpe_tensor_browser_choose (browser, 0, -1);
  g_assert_null (rpe_window_get_message (window));
  g_object_get (state, "method", &method, NULL);
  g_assert_cmpuint (method, ==, RPE_EXPLORER_METHOD_LRPE);
  img = settle_attention (window);
  g_assert_cmpfloat (naive_error (img, q, 1, raw (set, "blk0.house"), raw (set, "blk0.angles"), NULL, FALSE), <, 1e-5);
  /* the same as the standard names through the CLI */
  g_assert_cmpfloat (cli_error (img, q_path, 1, args), <, 1e-5);

  /* fastrpb.w (1, H, 2M - 1), "full", M = 24: the taps |tau| < 24 of head 1, zero beyond */
  taps = rpe_explorer_state_get_fastrpb_weights (state, &count);
  g_assert_cmpuint (count, ==, 2 * RPE_EXPLORER_FASTRPB_TAPS - 1);
  for (long tau = -(RPE_EXPLORER_FASTRPB_TAPS - 1); tau < RPE_EXPLORER_FASTRPB_TAPS; tau++)
    {
      /* W[h, m, n] = w[0, h, (m - n + M) mod (2M - 1)] (docs/math.md, section 8) */
      double want = labs (tau) < 24 ? w->data[1 * w->shape[2] + (gsize) ((tau + 24) % 47)] : 0.0;

      err = fmax (err, fabs (taps[tau + RPE_EXPLORER_FASTRPB_TAPS - 1] - want));
    }
  g_test_message ("fastrpb.w taps: max error %.3g", err);
  g_assert_cmpfloat (err, ==, 0);
  rpe_test_wait_jobs ();
  gtk_window_destroy (GTK_WINDOW (window));
}

/* ---------------------------------------------------------- 2-D convSPE */

typedef struct
{
  RpeWindow *window;
  guint64    serial;
} WantGrid;

static gboolean
grid_current (gpointer data)
{
  WantGrid *w = data;
  RpeGridWindow *gw = rpe_window_get_grid_window (w->window);
  RpeGridImage *img = gw != NULL ? rpe_grid_window_get_image (gw) : NULL;

  return gw != NULL && !rpe_grid_window_is_busy (gw) && img != NULL && img->serial == w->serial;
}

static RpeGridImage *
settle_grid (RpeWindow *window)
{
  WantGrid w = { window, rpe_explorer_state_get_serial (rpe_window_get_state (window)) };
  RpeGridWindow *gw;

  rpe_test_iterate_until (grid_current, &w);
  gw = rpe_window_get_grid_window (window);
  rpe_test_wait_frames (GTK_WIDGET (gw), 1);
  return rpe_grid_window_get_image (gw);
}

/* Ptilde_c(di, dj) = (1 - g) sum_{a,b} wq[c,a,b] wk[c,a+di,b+dj] + g from the raw tensors: the
 * query filter wq is the file's conv_k.weight, the key filter wk its conv_q.weight (docs/math.md, sections 2, 3). */
static double
naive_conv2d (const RpeTensor *wq, const RpeTensor *wk, const RpeTensor *gate, gsize c, long di, long dj)
{
  gsize L1 = wq->shape[2], L2 = wq->shape[3];
  double p = 0, g = ref_sigmoid (gate->data[c]);

  for (long a = 0; a < (long) L1; a++)
    for (long b = 0; b < (long) L2; b++)
      if (a + di >= 0 && a + di < (long) L1 && b + dj >= 0 && b + dj < (long) L2)
        p += (double) wq->data[(c * L1 + a) * L2 + b] * wk->data[(c * L1 + a + di) * L2 + b + dj];
  return (1 - g) * p + g;
}

/* The unit-content exact attention of query q over the grid, naive. */
static double
naive_grid_error (const RpeGridImage *img, const RpeTensorSet *set, gsize D)
{
  const RpeTensor *wq = raw (set, "model.spe.conv_k.weight"), *wk = raw (set, "model.spe.conv_q.weight");
  const RpeTensor *gate = raw (set, "model.spe_filter.gate");
  gsize n = img->n1 * img->n2, qi = img->query / img->n2, qj = img->query % img->n2;
  g_autofree double *logits = g_new (double, n);
  double mx = -INFINITY, sum = 0, err = 0;

  for (gsize t = 0; t < n; t++)
    {
      long di = (long) qi - (long) (t / img->n2), dj = (long) qj - (long) (t % img->n2);

      logits[t] = 0;
      for (gsize d = 0; d < D; d++)
        logits[t] += naive_conv2d (wq, wk, gate, img->head * D + d, di, dj);
      logits[t] /= sqrt ((double) D);
      mx = fmax (mx, logits[t]);
    }
  for (gsize t = 0; t < n; t++)
    sum += exp (logits[t] - mx);
  for (gsize t = 0; t < n; t++)
    err = fmax (err, fabs (img->attention[t] - exp (logits[t] - mx) / sum));
  return err;
}

/* spe-conv2d.pt (ConvSPE(ndim=2)) opens the grid window: its lag image is `rpe compute template
 * --grid` reshaped, and a click on the grid picks the query whose attention is shown. */
static void
test_conv2d (void)
{
  g_autofree char *path = fixture ("spe-conv2d.pt");
  g_autofree char *out = g_build_filename (rpe_test_tmpdir (), "ui-grid-template.npy", NULL);
  g_autoptr (RpeTensorSet) set = rpe_checkpoint_read (path, NULL);
  RpeWindow *window = open_checkpoint ("spe-conv2d.pt");
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeGridWindow *gw = rpe_window_get_grid_window (window);
  const gsize n1 = 5, n2 = 6, N = n1 * n2, H = 2, D = 3;
  g_autofree char *cmd = g_strdup_printf ("'%s' compute template --checkpoint '%s' --grid %zux%zu -o '%s'",
                                          g_getenv ("RPE_CLI"), path, n1, n2, out);
  g_auto (GStrv) argv = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeTensor) cli = NULL;
  GListModel *controllers;
  GtkGesture *click = NULL;
  RpeGridImage *img;
  gboolean gated = FALSE;
  guint query = 0;
  double x = 0, y = 0, err = 0;
  gsize row, col;

  g_assert_nonnull (gw);
  g_object_get (state, "gated", &gated, NULL);
  g_assert_true (gated);
  /* the file holds only the 2-D module: the main views keep the demo, and so do the title and
   * the source Copy as Command draws (no claim that they show the file) */
  g_assert_true (rpe_window_get_from_demo (window));
  g_assert_null (strstr (gtk_window_get_title (GTK_WINDOW (window)), "spe-conv2d"));
  g_assert_nonnull (strstr (rpe_explorer_state_get_source (state, RPE_SPE_SINE), "demo"));
  g_object_set (state, "grid-rows", (guint) n1, "grid-cols", (guint) n2, "head", 1, "feature", 2, NULL);
  img = settle_grid (window);
  g_assert_cmpuint (img->n1, ==, n1);
  g_assert_cmpuint (img->head, ==, 1);
  g_assert_cmpuint (img->feature, ==, 2);
  g_assert_true (img->gated);

  /* the lag image against the CLI's (H, D, N, N) template */
  g_assert_true (g_shell_parse_argv (cmd, NULL, &argv, &error));
  g_assert_true (g_spawn_sync (NULL, argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL | G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                               NULL, NULL, NULL, NULL, &error));
  cli = rpe_npy_read (out, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (cli->ndim, ==, 4);
  g_assert_cmpuint (cli->shape[0], ==, H);
  g_assert_cmpuint (cli->shape[2], ==, N);
  for (gsize p = 0; p < N; p++)
    for (gsize q = 0; q < N; q++)
      {
        gsize lag = (p / n2 + n1 - 1 - q / n2) * (2 * n2 - 1) + (p % n2 + n2 - 1 - q % n2);

        err = fmax (err, fabs (img->lags[lag] - cli->data[((1 * D + 2) * N + p) * N + q]));
      }
  g_test_message ("lag image vs rpe compute template --grid: max error %.3g", err);
  g_assert_cmpfloat (err, <, 1e-6);
  /* and the naive template at lag (1, -2) */
  g_assert_cmpfloat (fabs (naive_conv2d (raw (set, "model.spe.conv_k.weight"), raw (set, "model.spe.conv_q.weight"),
                                         raw (set, "model.spe_filter.gate"), 1 * D + 2, 1, -2)
                           - img->lags[(1 + n1 - 1) * (2 * n2 - 1) + (n2 - 1 - 2)]), <, 1e-6);

  err = naive_grid_error (img, set, D);
  g_test_message ("query %zu: max error %.3g", img->query, err);
  g_assert_cmpfloat (err, <, 1e-6);

  /* a click on position (3, 4) of the grid makes it the query */
  g_assert_true (rpe_heatmap_view_cell_center (rpe_grid_window_get_query_view (gw), 3, 4, &x, &y));
  g_assert_true (rpe_heatmap_view_cell_at (rpe_grid_window_get_query_view (gw), x, y, &row, &col));
  g_assert_cmpuint (row, ==, 3);
  g_assert_cmpuint (col, ==, 4);
  controllers = gtk_widget_observe_controllers (GTK_WIDGET (rpe_grid_window_get_query_view (gw)));
  for (guint i = 0; i < g_list_model_get_n_items (controllers) && click == NULL; i++)
    {
      g_autoptr (GObject) c = g_list_model_get_item (controllers, i);

      if (GTK_IS_GESTURE_CLICK (c))
        click = GTK_GESTURE (c);
    }
  g_object_unref (controllers);
  g_assert_nonnull (click);
  g_signal_emit_by_name (click, "pressed", 1, x, y);
  g_object_get (state, "grid-query", &query, NULL);
  g_assert_cmpuint (query, ==, 3 * n2 + 4);
  img = settle_grid (window);
  g_assert_cmpuint (img->query, ==, 3 * n2 + 4);
  err = naive_grid_error (img, set, D);
  g_test_message ("query (3, 4) after the click: max error %.3g", err);
  g_assert_cmpfloat (err, <, 1e-6);
  /* Escape closes the 2-D window: its shortcut, then what it activates */
  {
    g_autoptr (GListModel) list = gtk_widget_observe_controllers (GTK_WIDGET (gw));
    gboolean found = FALSE;

    for (guint i = 0; i < g_list_model_get_n_items (list) && !found; i++)
      {
        g_autoptr (GObject) c = g_list_model_get_item (list, i);

        if (!GTK_IS_SHORTCUT_CONTROLLER (c))
          continue;
        for (guint k = 0; k < g_list_model_get_n_items (G_LIST_MODEL (c)) && !found; k++)
          {
            g_autoptr (GtkShortcut) sc = g_list_model_get_item (G_LIST_MODEL (c), k);
            GtkShortcutTrigger *trigger = gtk_shortcut_get_trigger (sc);
            GtkShortcutAction *action = gtk_shortcut_get_action (sc);

            found = GTK_IS_KEYVAL_TRIGGER (trigger)
                    && gtk_keyval_trigger_get_keyval (GTK_KEYVAL_TRIGGER (trigger)) == GDK_KEY_Escape
                    && GTK_IS_NAMED_ACTION (action)
                    && g_str_equal (gtk_named_action_get_action_name (GTK_NAMED_ACTION (action)), "window.close");
          }
      }
    g_assert_true (found);
  }
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (gw), "window.close", NULL));
  g_assert_null (rpe_window_get_grid_window (window));
  rpe_test_wait_jobs ();
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The ticks of one axis of a map of lags [origin, origin + n): every label reads back to its
 * value, and that value is the lag of the cell under the tick (pos counts from the image's
 * first cell); returns whether the labels include a negative lag and 0. */
static gboolean
check_lag_ticks (const RpeTicks *t,
                 gssize          origin,
                 gsize           n)
{
  gboolean negative = FALSE, zero = FALSE;

  g_assert_cmpuint (t->n, >=, 3);
  for (gsize i = 0; i < t->n; i++)
    {
      double v = t->tick[i].value;
      gssize cell = (gssize) floor (t->tick[i].pos * (double) n);

      g_assert_cmpfloat (rpe_ticks_label_value (t->tick[i].label), ==, v);
      g_assert_cmpint (cell + origin, ==, (gssize) v);
      negative |= v < 0;
      zero |= v == 0;
    }
  return negative && zero;
}

/* The lag axes of the 2-D window and of its exported figure are numbered by the lags
 * -(N - 1) .. N - 1 themselves (not "tick - 11"), and the read-out names the lag. */
static void
test_conv2d_axes (void)
{
  RpeWindow *window = open_checkpoint ("spe-conv2d.pt");
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeGridWindow *gw = rpe_window_get_grid_window (window);
  const gsize n1 = 5, n2 = 6;
  g_autofree char *pdf = rpe_test_tmp_path ("ui-conv2d.pdf");
  g_autoptr (RpeFigureBundle) bundle = NULL;
  g_autoptr (GPtrArray) pages = NULL;
  g_autoptr (GError) error = NULL;
  RpeExportSize size = { .width = 612.0, .height = 300.0 };
  RpePlotRect images[RPE_FIGURE_MAX_PANELS];
  RpeHeatmapView *lags;
  RpeHeatmapData d;
  RpeTicks x, y;
  cairo_surface_t *s;
  cairo_t *cr;
  double cx, cy;
  guint nx = 0, ny = 0;
  gboolean nx_negative = FALSE, ny_negative = FALSE;

  g_assert_nonnull (gw);
  g_object_set (state, "grid-rows", (guint) n1, "grid-cols", (guint) n2, NULL);
  settle_grid (window);
  lags = rpe_grid_window_get_lag_view (gw);

  /* the window: the map's own ticks at its size */
  rpe_heatmap_view_get_render_data (lags, &d);
  g_assert_cmpint (d.row_origin, ==, -(gssize) (n1 - 1));
  g_assert_cmpint (d.col_origin, ==, -(gssize) (n2 - 1));
  g_assert_null (strstr (d.x_label, "tick"));
  g_assert_null (strstr (d.y_label, "tick"));
  s = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 1, 1);
  cr = cairo_create (s);
  g_assert_true (rpe_plot_heatmap_ticks (cr, &d, gtk_widget_get_width (GTK_WIDGET (lags)),
                                         gtk_widget_get_height (GTK_WIDGET (lags)), &x, &y));
  g_assert_true (check_lag_ticks (&y, -(gssize) (n1 - 1), 2 * n1 - 1));
  g_assert_true (check_lag_ticks (&x, -(gssize) (n2 - 1), 2 * n2 - 1));

  /* the read-out over the first cell: lag (-4, -5) */
  g_assert_true (rpe_heatmap_view_cell_center (lags, 0, 0, &cx, &cy));
  rpe_figure_page_hover_at (rpe_grid_window_get_page (gw), GTK_WIDGET (lags), cx, cy);
  g_assert_nonnull (strstr (rpe_figure_page_get_hover (rpe_grid_window_get_page (gw)), "Δi = -4, Δj = -5"));

  /* the exported figure: its tick numbers (pdftotext -bbox) are lags, under and left of their
   * cells' centres in the lag panel */
  bundle = rpe_figure_page_build_figure (rpe_grid_window_get_page (gw));
  g_assert_nonnull (bundle);
  g_assert_true (rpe_export_bundle (bundle, NULL, RPE_EXPORT_PDF, &size, pdf, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (rpe_figure_compare_images (cr, &bundle->fig, size.width, size.height, images), ==, 2);
  cairo_destroy (cr);
  cairo_surface_destroy (s);
  /* the two maps (23 x 23 lags beside the 5 x 6 grid) share their top and height */
  g_assert_cmpfloat (images[0].y, ==, images[1].y);
  g_assert_cmpfloat (images[0].height, ==, images[1].height);
  pages = rpe_test_pdf_words (pdf);
  if (pages == NULL)
    {
      g_test_message ("pdftotext is not installed: the exported numbers are not read back");
      goto done;
    }
  {
    GArray *words = g_ptr_array_index (pages, 0);
    const RpePlotRect *im = &images[0];

    for (guint k = 0; k < words->len; k++)
      {
        RpeTestWord *w = &g_array_index (words, RpeTestWord, k);
        double v = rpe_ticks_label_value (w->text), wx = (w->x0 + w->x1) / 2.0, wy = (w->y0 + w->y1) / 2.0;

        if (isnan (v))
          continue;
        if (w->y0 > im->y + im->height && w->y0 < im->y + im->height + 20.0 && wx > im->x - 10.0
            && wx < im->x + im->width + 10.0)
          {
            /* an x tick of the lag panel: column lag v at its cell's centre */
            g_assert_cmpfloat (v, >=, -(double) (n2 - 1));
            g_assert_cmpfloat (v, <=, (double) (n2 - 1));
            g_assert_cmpfloat (fabs (wx - (im->x + im->width * (v + 0.5 + (double) (n2 - 1)) / (double) (2 * n2 - 1))),
                               <=, 1.0);
            nx_negative |= v < 0;
            nx++;
          }
        else if (w->x1 < im->x && wy > im->y && wy < im->y + im->height)
          {
            g_assert_cmpfloat (v, >=, -(double) (n1 - 1));
            g_assert_cmpfloat (v, <=, (double) (n1 - 1));
            g_assert_cmpfloat (fabs (wy - (im->y + im->height * (v + 0.5 + (double) (n1 - 1)) / (double) (2 * n1 - 1))),
                               <=, 1.0);
            ny_negative |= v < 0;
            ny++;
          }
      }
    g_test_message ("exported lag panel: %u x ticks, %u y ticks", nx, ny);
    g_assert_cmpuint (nx, >=, 3);
    g_assert_cmpuint (ny, >=, 3);
    g_assert_true (nx_negative && ny_negative);
  }
done:
  gtk_window_destroy (GTK_WINDOW (gw));
  rpe_test_wait_jobs ();
}

/* The window phrases the readers' findings in its own terms (its pickers),
 * never with an option of the `rpe` tool: once a window exists, a module that
 * cannot tell its gate, and a file with no module by its names, say where to
 * choose in the window. */
static void
test_window_remedy (void)
{
  RpeWindow *window = rpe_window_new (NULL);
  g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
  g_autoptr (RpeTensorSet) odd = rpe_tensor_set_new ();
  g_autoptr (GError) error = NULL;
  const char *names[] = { "net.spe_a.freqs", "net.spe_a.offsets", "net.spe_a.gains",
                          "net.spe_b.freqs", "net.spe_b.offsets", "net.spe_b.gains", NULL };
  RpeSpeParams p;

  for (gsize i = 0; names[i] != NULL; i++)
    {
      RpeTensor *t = rpe_tensor_new (names[i], 3, (const gsize[]) { 2, 3, 4 }, &error);

      g_assert_true (rpe_tensor_set_add (set, t, &error));
    }
  g_assert_true (rpe_tensor_set_add (set, rpe_tensor_new ("net.spe_filter.gate", 2, (const gsize[]) { 2, 3 }, NULL),
                                     &error));
  g_assert_true (rpe_tensor_set_add (odd, rpe_tensor_new ("pos.a", 3, (const gsize[]) { 2, 3, 4 }, NULL), &error));

  g_assert_false (rpe_checkpoint_load_spe (set, "net.spe_a", -1, &p, &error));
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "Checkpoint Contents"));
  g_assert_null (strstr (error->message, "--"));
  g_clear_error (&error);
  g_assert_false (rpe_checkpoint_load_spe (odd, NULL, -1, &p, &error));
  g_assert_nonnull (strstr (error->message, "Checkpoint Contents"));
  g_assert_null (strstr (error->message, "--"));
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
  g_test_add_func ("/ui/ckpt/lrpe-checkpoint", test_lrpe_checkpoint);
  g_test_add_func ("/ui/ckpt/lrpe-files", test_lrpe_files);
  g_test_add_func ("/ui/ckpt/lrpe-roles", test_lrpe_roles);
  g_test_add_func ("/ui/ckpt/conv2d", test_conv2d);
  g_test_add_func ("/ui/ckpt/conv2d-axes", test_conv2d_axes);
  g_test_add_func ("/ui/ckpt/window-remedy", test_window_remedy);
  return g_test_run ();
}

/* test-ui-gif.c: the Export dialog's animated sweeps (GIF) under Xvfb.
 *
 * The dialog's GIF of a sweep over R (the SPE vs RPE view and the Attention view) and over
 * the seed (the Attention view and the empirical templates) is decoded with giflib (DGifSlurp) and compared frame for frame with what the
 * headless `rpe export VIEW --sweep ...` ($RPE_CLI) writes for the same state: same frame
 * count, size and delays, and the same pixels (the window's and the CLI's PNGs of one state are
 * identical, test-ui-export.c, and both quantise with the same code).  Independently of the
 * CLI, the last frame equals the window's own PNG export of that state within the GIF's
 * palette quantisation, and the first frame does not (the parameter really changed).
 * Cancelling after the first frame leaves no file and keeps an existing one.  Every wait is
 * for an event (a job finished, a signal), never for a time. */
#include "config.h"

#include <math.h>
#include <string.h>

#include <adwaita.h>
#include <gif_lib.h>
#include <glib/gstdio.h>

#include "rpe-test-utils.h"
#include "rpe-window-test.h"
#include "rpe-ui-test-utils.h"
#include "rpe-ui-wait.h"

#define TEST_N 48

typedef struct
{
  int      width, height, frames;
  guint8 **rgb;       /* frames x (width * height * 3) */
  int     *delay;     /* hundredths of a second */
} Gif;

static void
gif_clear (Gif *g)
{
  for (int k = 0; k < g->frames; k++)
    g_free (g->rgb[k]);
  g_free (g->rgb);
  g_free (g->delay);
  memset (g, 0, sizeof *g);
}

static void
read_gif (const char *path,
          Gif        *g)
{
  int err = 0;
  GifFileType *gif = DGifOpenFileName (path, &err);

  memset (g, 0, sizeof *g);
  g_assert_nonnull (gif);
  g_assert_cmpint (DGifSlurp (gif), ==, GIF_OK);
  g->width = gif->SWidth;
  g->height = gif->SHeight;
  g->frames = gif->ImageCount;
  g->rgb = g_new0 (guint8 *, MAX (g->frames, 1));
  g->delay = g_new0 (int, MAX (g->frames, 1));
  for (int i = 0; i < g->frames; i++)
    {
      SavedImage *img = &gif->SavedImages[i];
      ColorMapObject *map = img->ImageDesc.ColorMap != NULL ? img->ImageDesc.ColorMap : gif->SColorMap;
      GraphicsControlBlock gcb;

      g_assert_nonnull (map);
      g_assert_cmpint (img->ImageDesc.Width, ==, g->width);
      g_assert_cmpint (img->ImageDesc.Height, ==, g->height);
      g->rgb[i] = g_malloc ((gsize) g->width * g->height * 3);
      for (int p = 0; p < g->width * g->height; p++)
        {
          g_assert_cmpint (img->RasterBits[p], <, map->ColorCount);
          GifColorType c = map->Colors[img->RasterBits[p]];

          g->rgb[i][3 * p] = c.Red;
          g->rgb[i][3 * p + 1] = c.Green;
          g->rgb[i][3 * p + 2] = c.Blue;
        }
      g->delay[i] = DGifSavedExtensionToGCB (gif, i, &gcb) == GIF_OK ? gcb.DelayTime : -1;
    }
  DGifCloseFile (gif, &err);
}

/* Mean |difference| per channel (0 .. 255) between an RGB frame and a PNG over white. */
static double
frame_vs_png (const Gif    *g,
              const guint8 *rgb,
              const char   *png)
{
  cairo_surface_t *s = cairo_image_surface_create_from_png (png);
  const guint8 *data;
  int stride;
  double sum = 0.0;

  g_assert_cmpint (cairo_surface_status (s), ==, CAIRO_STATUS_SUCCESS);
  g_assert_cmpint (cairo_image_surface_get_width (s), ==, g->width);
  g_assert_cmpint (cairo_image_surface_get_height (s), ==, g->height);
  cairo_surface_flush (s);
  data = cairo_image_surface_get_data (s);
  stride = cairo_image_surface_get_stride (s);
  for (int y = 0; y < g->height; y++)
    for (int x = 0; x < g->width; x++)
      {
        guint32 px = *(const guint32 *) (data + y * stride + 4 * x);
        int a = px >> 24;
        /* premultiplied ARGB over white */
        int c[3] = { (int) ((px >> 16) & 0xff) + 255 - a, (int) ((px >> 8) & 0xff) + 255 - a, (int) (px & 0xff) + 255 - a };

        for (int ch = 0; ch < 3; ch++)
          sum += fabs ((double) MIN (c[ch], 255) - rgb[3 * (y * g->width + x) + ch]);
      }
  cairo_surface_destroy (s);
  return sum / (3.0 * g->width * g->height);
}

/* Pixels (fraction) whose RGB differ between two frames of one size. */
static double
frames_differ (const Gif    *g,
               const guint8 *a,
               const guint8 *b)
{
  gsize n = 0;

  for (int p = 0; p < g->width * g->height; p++)
    n += memcmp (a + 3 * p, b + 3 * p, 3) != 0;
  return (double) n / ((double) g->width * g->height);
}

static gboolean
dialog_done (gpointer data)
{
  return !rpe_export_dialog_is_exporting (RPE_EXPORT_DIALOG (data));
}

static RpeWindow *
open_window (void)
{
  RpeWindow *window = rpe_window_new (NULL);

  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  g_object_set (rpe_window_get_state (window), "length", TEST_N, "head", 1, "train-length", 32, NULL);
  gtk_window_present (GTK_WINDOW (window));
  return window;
}

static void
run_cli (const char * const *args)
{
  g_autoptr (GPtrArray) words = g_ptr_array_new ();
  g_autofree char *err = NULL;
  int status;

  g_ptr_array_add (words, (char *) "export");
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (words, (char *) args[i]);
  g_ptr_array_add (words, NULL);
  status = rpe_test_run_cli_argv ((const char *const *) words->pdata, NULL, &err);
  if (status != 0)
    g_test_message ("rpe export failed: %s", err);
  g_assert_cmpint (status, ==, 0);
}

/* Opens the Export dialog of the current view, sets up the sweep and writes path. */
static RpeExportDialog *
dialog_gif (RpeWindow     *window,
            const char    *path,
            RpeSweepParam  param,
            gint64         from,
            gint64         to,
            guint          frames,
            guint          delay)
{
  RpeExportDialog *dialog;

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.export", NULL));
  dialog = rpe_window_get_export_dialog (window);
  g_assert_nonnull (dialog);
  rpe_test_wait_frames (GTK_WIDGET (dialog), 1);
  rpe_export_dialog_set_gif (dialog, param, from, to, frames, delay);
  g_assert_true (rpe_export_dialog_is_gif (dialog));
  rpe_export_dialog_set_path (dialog, path);
  g_assert_cmpstr (rpe_export_dialog_get_path (dialog), ==, path);
  /* the window closes the dialog once it exported: the test holds its own reference */
  return g_object_ref (dialog);
}

/* The dialog's GIF against the CLI's, frame for frame; the last frame (the state's own value)
 * against the window's PNG export. */
static void
check_sweep (RpeWindow          *window,
             const char         *name,
             RpeSweepParam       param,
             gint64              from,
             gint64              to,
             guint               frames,
             const char * const *cli_args)
{
  g_autofree char *gui = g_strdup_printf ("%s/dialog-%s.gif", rpe_test_tmpdir (), name);
  g_autofree char *cli = g_strdup_printf ("%s/cli-%s.gif", rpe_test_tmpdir (), name);
  g_autofree char *png = g_strdup_printf ("%s/window-%s.png", rpe_test_tmpdir (), name);
  g_autoptr (GPtrArray) args = g_ptr_array_new ();
  g_autofree char *n_frames = g_strdup_printf ("%u", frames);
  g_autoptr (GError) error = NULL;
  RpeExportDialog *dialog;
  Gif a, b;

  dialog = dialog_gif (window, gui, param, from, to, frames, 25);
  rpe_export_dialog_start (dialog);
  g_assert_true (rpe_export_dialog_is_exporting (dialog));
  rpe_test_iterate_until (dialog_done, dialog);
  g_assert_null (rpe_export_dialog_get_error (dialog));
  g_assert_true (g_file_test (gui, G_FILE_TEST_IS_REGULAR));
  g_object_unref (dialog);

  for (guint i = 0; cli_args[i] != NULL; i++)
    g_ptr_array_add (args, (char *) cli_args[i]);
  g_ptr_array_add (args, (char *) "--frames");
  g_ptr_array_add (args, n_frames);
  g_ptr_array_add (args, (char *) "--frame-delay");
  g_ptr_array_add (args, (char *) "25");
  g_ptr_array_add (args, (char *) "-o");
  g_ptr_array_add (args, cli);
  g_ptr_array_add (args, NULL);
  run_cli ((const char * const *) args->pdata);

  read_gif (gui, &a);
  read_gif (cli, &b);
  g_assert_true (rpe_window_export_view (window, png, &error));
  g_assert_no_error (error);
  g_assert_cmpint (a.frames, ==, (int) frames);
  g_assert_cmpint (b.frames, ==, (int) frames);
  g_assert_cmpint (a.width, ==, b.width);
  g_assert_cmpint (a.height, ==, b.height);
  for (int k = 0; k < a.frames; k++)
    {
      double differ = frames_differ (&a, a.rgb[k], b.rgb[k]);

      g_test_message ("%s frame %d (value %" G_GINT64_FORMAT "): dialog vs `rpe export`: %.4f%% of %d x %d pixels differ",
                      name, k, rpe_sweep_value (param, from, to, k, frames), 100 * differ, a.width, a.height);
      g_assert_cmpint (a.delay[k], ==, 25);
      g_assert_cmpint (b.delay[k], ==, 25);
      /* as test-ui-export.c: identical but for a rare cell whose float rounding moves it
       * into the next colour (measured: 0) */
      g_assert_cmpfloat (differ, <=, 1e-3);
    }
  {
    /* 256 colours per frame from median cut: measured mean error 0.5 .. 0.8 of 255 on these
     * figures; a different state (the first frame) is 5 .. 25 further off */
    double last = frame_vs_png (&a, a.rgb[a.frames - 1], png);
    double first = frame_vs_png (&a, a.rgb[0], png);

    g_test_message ("%s: |last frame - window PNG| %.3f, |first frame - window PNG| %.3f (mean per channel)",
                    name, last, first);
    g_assert_cmpfloat (last, <, 1.5);
    g_assert_cmpfloat (first, >, 2 * last);
    g_assert_cmpfloat (frames_differ (&a, a.rgb[0], a.rgb[a.frames - 1]), >, 0.01);
  }
  gif_clear (&a);
  gif_clear (&b);
}

static void
test_sweeps (void)
{
  const char *cli = g_getenv ("RPE_CLI");
  RpeWindow *window;
  RpeExplorerState *state;

  if (cli == NULL || !g_file_test (cli, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("RPE_CLI is not set");
      return;
    }
  window = open_window ();
  state = rpe_window_get_state (window);
  g_assert_true (rpe_window_get_from_demo (window));

  /* the estimate sharpening as R grows: R = 1 .. 64 in geometric steps */
  g_object_set (state, "realizations", 64, "seed", 5, NULL);
  rpe_window_set_view (window, RPE_WINDOW_VIEW_TEACHING);
  rpe_test_settle (window, TRUE);
  {
    const char *args[] = { "spe-vs-rpe", "--checkpoint", "demo", "--method", "sine", "--no-gate", "--head", "1",
                           "--length", "48", "--seed", "5", "--train-length", "32",
                           "--sweep", "realizations=1:64", NULL };
    check_sweep (window, "spe-vs-rpe-r", RPE_SWEEP_REALIZATIONS, 1, 64, 4, args);
  }

  /* the Attention view's SPE estimate as R grows (the whole map, as the CLI draws it) */
  g_object_set (state, "realizations", 64, "seed", 5, NULL);
  rpe_window_set_view (window, RPE_WINDOW_VIEW_ATTENTION);
  rpe_test_settle (window, TRUE);
  {
    const char *args[] = { "attention", "--checkpoint", "demo", "--method", "sine", "--no-gate", "--head", "1",
                           "--length", "48", "--seed", "5", "--train-length", "32",
                           "--sweep", "realizations=1:64", NULL };
    check_sweep (window, "attention-r", RPE_SWEEP_REALIZATIONS, 1, 64, 4, args);
  }
  /* and over the seed */
  {
    const char *args[] = { "attention", "--checkpoint", "demo", "--method", "sine", "--no-gate", "--head", "1",
                           "--length", "48", "--realizations", "64", "--train-length", "32",
                           "--sweep", "seed=2:5", NULL };
    check_sweep (window, "attention-seed", RPE_SWEEP_SEED, 2, 5, 4, args);
  }

  /* the empirical templates over seeds 0 .. 3 (R = 16) */
  g_object_set (state, "realizations", 16, "seed", 3, "template-kind", RPE_TEMPLATE_EMPIRICAL, NULL);
  rpe_window_set_view (window, RPE_WINDOW_VIEW_TEMPLATES);
  rpe_test_settle (window, TRUE);
  {
    const char *args[] = { "templates", "--empirical", "--checkpoint", "demo", "--method", "sine", "--no-gate",
                           "--head", "1", "--length", "48", "--realizations", "16", "--train-length", "32",
                           "--sweep", "seed=0:3", NULL };
    check_sweep (window, "templates-seed", RPE_SWEEP_SEED, 0, 3, 4, args);
  }
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
on_progress (RpeExportDialog *dialog,
             guint            done,
             guint            frames,
             gpointer         data)
{
  guint *seen = data;

  if (*seen == 0)
    rpe_export_dialog_cancel_export (dialog);
  *seen = done;
}

static void
test_cancel (void)
{
  RpeWindow *window = open_window ();
  g_autofree char *fresh = g_strdup_printf ("%s/cancel-new.gif", rpe_test_tmpdir ());
  g_autofree char *kept = g_strdup_printf ("%s/cancel-kept.gif", rpe_test_tmpdir ());
  g_autofree char *before = NULL, *after = NULL;
  const char *paths[] = { fresh, kept };

  g_assert_true (g_file_set_contents (kept, "an older file", -1, NULL));
  rpe_window_set_view (window, RPE_WINDOW_VIEW_TEACHING);
  rpe_test_settle (window, TRUE);
  for (guint i = 0; i < G_N_ELEMENTS (paths); i++)
    {
      guint seen = 0;
      RpeExportDialog *dialog = dialog_gif (window, paths[i], RPE_SWEEP_SEED, 0, 999, 1000, 10);
      g_autofree char *dir = g_path_get_dirname (paths[i]);
      GDir *d;
      const char *entry;

      g_signal_connect (dialog, "progress", G_CALLBACK (on_progress), &seen);
      rpe_export_dialog_start (dialog);
      rpe_test_iterate_until (dialog_done, dialog);
      /* cancelled at the first frame's progress: far from the 1000 frames */
      g_assert_cmpuint (seen, ==, 1);
      g_assert_nonnull (rpe_export_dialog_get_error (dialog));
      g_assert_nonnull (strstr (rpe_export_dialog_get_error (dialog), "cancelled"));
      /* no temporary left beside the target */
      d = g_dir_open (dir, 0, NULL);
      g_assert_nonnull (d);
      while ((entry = g_dir_read_name (d)) != NULL)
        g_assert_false (g_str_has_prefix (entry, ".cancel-") || strstr (entry, ".tmp") != NULL
                        || (g_str_has_prefix (entry, "cancel-") && !g_str_equal (entry, "cancel-kept.gif")));
      g_dir_close (d);
      gtk_window_destroy (GTK_WINDOW (dialog));
      g_object_unref (dialog);
    }
  g_assert_false (g_file_test (fresh, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_get_contents (kept, &after, NULL, NULL));
  g_assert_cmpstr (after, ==, "an older file");
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int    argc,
      char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  g_test_add_func ("/ui/gif/sweeps", test_sweeps);
  g_test_add_func ("/ui/gif/cancel", test_cancel);
  return g_test_run ();
}

/* test-ui-session.c: sessions in the window under Xvfb.
 *
 * A window with an edit that no option expresses saves its session; `rpe
 * export --session` of that file draws the window's export of the figure pixel
 * for pixel; a second window opening the file (directly and through
 * rpe_window_open_file, the path of `rpe-studio FILE.rpe-session`) gets every
 * property and array back and shows the session's name in its title.  Copy
 * as Command puts on the clipboard a command line that, run through the `rpe`
 * binary, redraws the window's figure (options alone when they can, else
 * --session of the saved file).  A malformed session leaves the window's state
 * exactly as it was, with the reason in the banner.
 *
 * With RPE_SCREENSHOT_DIR set, the window titled with the session is saved there. */
#include "config.h"

#include <math.h>
#include <string.h>

#include <adwaita.h>
#include <glib/gstdio.h>

#include "rpe-npy.h"
#include "rpe-outputs-view.h"
#include "rpe-session.h"
#include "rpe-test-utils.h"
#include "rpe-window-test.h"
#include "rpe-ui-test-utils.h"
#include "rpe-ui-wait.h"

#define TEST_N 48

static RpeWindow *
open_window (void)
{
  RpeWindow *window = rpe_window_new (NULL);

  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  g_object_set (rpe_window_get_state (window), "length", TEST_N, NULL);
  gtk_window_present (GTK_WINDOW (window));
  return window;
}

/* The window's figure and one drawn by the `rpe` binary agree as the Export
 * tests require of the window and `rpe export` (test-ui-export.c): the arrays
 * are summed in other orders by the workers, so a rare cell may fall in the
 * next colour-map entry. */
static void
assert_same_figure (const char *what,
                    const char *gui,
                    const char *cli)
{
  int delta;
  double fraction = rpe_test_png_difference (gui, cli, &delta);

  g_test_message ("%s: window vs `rpe`: %.4f%% of the pixels differ (max channel delta %d)", what,
                  100 * fraction, delta);
  g_assert_cmpfloat (fraction, <=, 1e-3);
  g_assert_cmpint (delta, <=, fraction > 0 ? 40 : 0);
}

static int
run_argv (char **argv)
{
  g_autofree char *err = NULL;
  int status = 0;

  g_assert_true (g_spawn_sync (NULL, argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err, &status, NULL));
  if (err != NULL && err[0] != '\0')
    g_test_message ("rpe: %s", err);
  return g_spawn_check_wait_status (status, NULL) ? 0 : 1;
}

static gboolean
have_cli (void)
{
  const char *cli = g_getenv ("RPE_CLI");

  if (cli == NULL || !g_file_test (cli, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("RPE_CLI is not set");
      return FALSE;
    }
  return TRUE;
}

/* --------------------------------------------------------------- clipboard */

typedef struct
{
  gboolean  done;
  char     *text;
} ClipRead;

static void
clip_read_done (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  ClipRead *r = user_data;

  r->text = gdk_clipboard_read_text_finish (GDK_CLIPBOARD (source), result, NULL);
  r->done = TRUE;
}

static gboolean
clip_done (gpointer data)
{
  return ((ClipRead *) data)->done;
}

static char *
read_clipboard (GtkWidget *widget)
{
  ClipRead r = { FALSE, NULL };

  gdk_clipboard_read_text_async (gtk_widget_get_clipboard (widget), NULL, clip_read_done, &r);
  rpe_test_iterate_until (clip_done, &r);
  return r.text;
}

typedef struct
{
  RpeWindow *window;
  guint      before;
} CopyWait;

static gboolean
copy_done (gpointer data)
{
  CopyWait *w = data;

  return rpe_window_get_commands_copied (w->window) > w->before;
}

/* Copy as Command as the user does it (the action runs its check on a worker), then the clipboard. */
static char *
copy_command (RpeWindow *window)
{
  CopyWait w = { window, rpe_window_get_commands_copied (window) };

  gtk_widget_activate_action (GTK_WIDGET (window), "win.copy-command", NULL);
  rpe_test_iterate_until (copy_done, &w);
  return read_clipboard (GTK_WIDGET (window));
}

/* Runs a copied `rpe export ... -o X` line with the `rpe` binary, -o replaced by out. */
static void
run_copied (const char *line,
            const char *out)
{
  g_auto (GStrv) argv = NULL;
  g_autoptr (GError) error = NULL;
  int argc = 0;

  g_assert_true (g_shell_parse_argv (line, &argc, &argv, &error));
  g_assert_no_error (error);
  g_assert_cmpint (argc, >=, 4);
  g_assert_cmpstr (argv[0], ==, "rpe");
  g_assert_cmpstr (argv[1], ==, "export");
  g_assert_cmpstr (argv[argc - 2], ==, "-o");
  g_free (argv[0]);
  argv[0] = g_strdup (g_getenv ("RPE_CLI"));
  g_free (argv[argc - 1]);
  argv[argc - 1] = g_strdup (out);
  g_assert_cmpint (run_argv (argv), ==, 0);
}

/* ------------------------------------------------------------------ tests */

/* Edits that no option says, saved; --session redraws; a second window reopens it. */
static void
test_window_and_cli (void)
{
  RpeWindow *window, *other;
  RpeExplorerState *state;
  g_autoptr (GError) error = NULL;
  g_autofree char *session = rpe_test_tmp_path ("edited.rpe-session");
  g_autofree char *gui = rpe_test_tmp_path ("edited-gui.png");
  g_autofree char *cli = rpe_test_tmp_path ("edited-cli.png");
  g_autofree char *cli_path = NULL;

  if (!have_cli ())
    return;
  window = open_window ();
  state = rpe_window_get_state (window);
  g_object_set (state, "head", 1, "train-length", 32, "seed", 6, "realizations", 32, NULL);
  rpe_window_set_view (window, RPE_WINDOW_VIEW_ATTENTION);
  /* an edit of the sine module (no option can say this) and of the gate */
  g_assert_true (rpe_explorer_state_set_sine (state, 1, 0, 0, 0.07, 0.4, 2.5, TRUE));
  g_object_set (state, "gated", TRUE, NULL);
  g_assert_true (rpe_explorer_state_set_gate (state, 1, 2, 0.35, FALSE));
  rpe_test_settle (window, TRUE);

  g_assert_true (rpe_window_save_session (window, session, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (rpe_window_get_session_file (window), ==, session);
  {
    /* in the recent files (the Open Recent submenu lists .rpe-session files) */
    g_autofree char *uri = g_filename_to_uri (session, NULL, NULL);

    g_assert_true (gtk_recent_manager_has_item (gtk_recent_manager_get_default (), uri));
  }
  g_assert_nonnull (strstr (gtk_window_get_title (GTK_WINDOW (window)), "edited"));
  g_assert_true (rpe_window_export_view (window, gui, &error));
  g_assert_no_error (error);
  {
    char *argv[] = { (char *) g_getenv ("RPE_CLI"), (char *) "export", (char *) "--session", session,
                     (char *) "-o", cli, NULL };

    g_assert_cmpint (run_argv (argv), ==, 0);
  }
  assert_same_figure ("attention (edited, gated)", gui, cli);

  /* the templates view of the same session, through its own file */
  rpe_window_set_view (window, RPE_WINDOW_VIEW_TEMPLATES);
  rpe_test_settle (window, TRUE);
  g_assert_true (rpe_window_save_session (window, session, &error));
  g_assert_true (rpe_window_export_view (window, gui, &error));
  {
    char *argv[] = { (char *) g_getenv ("RPE_CLI"), (char *) "export", (char *) "--session", session,
                     (char *) "-o", cli, NULL };

    g_assert_cmpint (run_argv (argv), ==, 0);
  }
  assert_same_figure ("templates (edited)", gui, cli);

  /* a second window opens it: every property and array, the view */
  other = open_window ();
  rpe_test_settle (other, TRUE);
  g_assert_false (rpe_explorer_state_equal (state, rpe_window_get_state (other), NULL));
  g_assert_true (rpe_window_open_session (other, session, &error));
  g_assert_no_error (error);
  {
    g_autofree char *what = NULL;

    if (!rpe_explorer_state_equal (state, rpe_window_get_state (other), &what))
      g_error ("the reopened state differs in %s", what);
  }
  g_assert_cmpint (rpe_window_get_view (other), ==, RPE_WINDOW_VIEW_TEMPLATES);
  /* a new document: restoring its settings is not an edit to undo */
  g_assert_false (rpe_undo_can_undo (rpe_window_get_undo (other)));
  g_assert_nonnull (strstr (gtk_window_get_title (GTK_WINDOW (other)), "edited"));
  gtk_window_destroy (GTK_WINDOW (other));

  /* `rpe-studio FILE.rpe-session`: GApplication's open goes through rpe_window_open_file */
  other = open_window ();
  {
    g_autoptr (GFile) file = g_file_new_for_path (session);

    rpe_window_open_file (other, file);
  }
  rpe_test_settle (other, TRUE);
  g_assert_true (rpe_explorer_state_equal (state, rpe_window_get_state (other), NULL));
  g_assert_cmpstr (rpe_window_get_session_file (other), ==, session);
  if (g_getenv ("RPE_SCREENSHOT_DIR") != NULL)
    {
      g_autofree char *shot = g_build_filename (g_getenv ("RPE_SCREENSHOT_DIR"), "session-window.png", NULL);
      GdkPaintable *paintable = gtk_widget_paintable_new (GTK_WIDGET (other));
      GtkSnapshot *snapshot = gtk_snapshot_new ();
      int w = gtk_widget_get_width (GTK_WIDGET (other)), h = gtk_widget_get_height (GTK_WIDGET (other));
      GskRenderNode *node;

      gdk_paintable_snapshot (paintable, snapshot, w, h);
      node = gtk_snapshot_free_to_node (snapshot);
      if (node != NULL)
        {
          GskRenderer *renderer = gtk_native_get_renderer (GTK_NATIVE (other));
          GdkTexture *texture = gsk_renderer_render_texture (renderer, node, &GRAPHENE_RECT_INIT (0, 0, w, h));

          gdk_texture_save_to_png (texture, shot);
          g_object_unref (texture);
          gsk_render_node_unref (node);
        }
      g_object_unref (paintable);
    }
  gtk_window_destroy (GTK_WINDOW (other));

  /* dropped on a window: its drop target takes a single file (G_TYPE_FILE) as well as a list */
  other = open_window ();
  rpe_test_settle (other, TRUE);
  {
    GListModel *controllers = gtk_widget_observe_controllers (GTK_WIDGET (other));
    GtkDropTarget *drop = NULL;
    g_autoptr (GFile) file = g_file_new_for_path (session);
    GValue value = G_VALUE_INIT;
    gboolean accepted = FALSE;

    for (guint i = 0; i < g_list_model_get_n_items (controllers) && drop == NULL; i++)
      {
        g_autoptr (GObject) c = g_list_model_get_item (controllers, i);

        if (GTK_IS_DROP_TARGET (c))
          drop = GTK_DROP_TARGET (c);
      }
    g_object_unref (controllers);
    g_assert_nonnull (drop);
    g_value_init (&value, G_TYPE_FILE);
    g_value_set_object (&value, file);
    g_signal_emit_by_name (drop, "drop", &value, 10.0, 10.0, &accepted);
    g_value_unset (&value);
    g_assert_true (accepted);
  }
  rpe_test_settle (other, TRUE);
  g_assert_true (rpe_explorer_state_equal (state, rpe_window_get_state (other), NULL));
  g_assert_cmpstr (rpe_window_get_session_file (other), ==, session);
  gtk_window_destroy (GTK_WINDOW (other));
  gtk_window_destroy (GTK_WINDOW (window));
  (void) cli_path;
}

static gboolean
command_available (gpointer data)
{
  g_autofree char *line = rpe_window_command_line (RPE_WINDOW (data), NULL);

  return line != NULL;
}

static void
test_copy_command (void)
{
  RpeWindow *window;
  RpeExplorerState *state;
  g_autoptr (GError) error = NULL;
  g_autofree char *gui = rpe_test_tmp_path ("copy-gui.png");
  g_autofree char *cli = rpe_test_tmp_path ("copy-cli.png");
  g_autofree char *session = rpe_test_tmp_path ("copy.rpe-session");
  g_autofree char *line = NULL;

  if (!have_cli ())
    return;
  window = open_window ();
  state = rpe_window_get_state (window);

  /* the demo as it is: options alone say it */
  g_object_set (state, "head", 2, "causal", TRUE, "content", RPE_CONTENT_RANDOM, "seed", 3, "realizations", 16,
                "colormap", "inferno", NULL);
  rpe_window_set_view (window, RPE_WINDOW_VIEW_ATTENTION);
  rpe_test_settle (window, TRUE);
  line = copy_command (window);
  g_assert_nonnull (line);
  g_test_message ("copied: %s", line);
  g_assert_true (g_str_has_prefix (line, "rpe export attention --checkpoint demo"));
  g_assert_null (strstr (line, "--session"));
  g_assert_true (rpe_window_export_view (window, gui, &error));
  run_copied (line, cli);
  assert_same_figure ("copied command (options)", gui, cli);
  g_clear_pointer (&line, g_free);

  /* the SPE vs RPE view, exact method untouched */
  rpe_window_set_view (window, RPE_WINDOW_VIEW_TEACHING);
  rpe_test_settle (window, TRUE);
  line = copy_command (window);
  g_test_message ("copied: %s", line);
  g_assert_true (g_str_has_prefix (line, "rpe export spe-vs-rpe"));
  g_assert_true (rpe_window_export_view (window, gui, &error));
  run_copied (line, cli);
  assert_same_figure ("copied command (spe-vs-rpe)", gui, cli);
  g_clear_pointer (&line, g_free);

  /* an edit no option says: nothing honest to copy until the session is saved */
  rpe_window_set_view (window, RPE_WINDOW_VIEW_ATTENTION);
  g_assert_true (rpe_explorer_state_set_sine (state, 2, 3, 1, 0.2, 1.0, 1.5, FALSE));
  rpe_test_settle (window, TRUE);
  {
    g_autofree char *why = NULL;
    g_autofree char *none = rpe_window_command_line (window, &why);

    g_assert_null (none);
    g_assert_nonnull (strstr (why, "save the session"));
    g_test_message ("edited, unsaved: %s", why);
  }
  g_assert_true (rpe_window_save_session (window, session, &error));
  line = copy_command (window);
  g_test_message ("copied: %s", line);
  g_assert_nonnull (strstr (line, "--session"));
  g_assert_true (rpe_window_export_view (window, gui, &error));
  run_copied (line, cli);
  assert_same_figure ("copied command (--session)", gui, cli);

  /* zoomed: the saved session is not this figure until saved again; then --session draws the zoom */
  rpe_figure_page_zoom (RPE_FIGURE_PAGE (RPE_ATTENTION_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_ATTENTION))), 2.0);
  rpe_test_settle (window, TRUE);
  {
    g_autofree char *why = NULL;
    g_autofree char *none = rpe_window_command_line (window, &why);

    g_assert_null (none);
    g_assert_nonnull (strstr (why, "save the session"));
  }
  g_assert_true (rpe_window_save_session (window, session, &error));
  g_clear_pointer (&line, g_free);
  line = copy_command (window);
  g_test_message ("copied: %s", line);
  g_assert_nonnull (strstr (line, "--session"));
  g_assert_true (rpe_window_export_view (window, gui, &error));
  run_copied (line, cli);
  assert_same_figure ("copied command (zoomed, --session)", gui, cli);
  rpe_figure_page_reset_zoom (RPE_FIGURE_PAGE (RPE_ATTENTION_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_ATTENTION))));
  rpe_test_settle (window, TRUE);

  /* a change after saving: the saved session no longer is this figure */
  g_object_set (state, "seed", 4, NULL);
  rpe_test_settle (window, TRUE);
  {
    g_autofree char *why = NULL;
    g_autofree char *none = rpe_window_command_line (window, &why);

    g_assert_null (none);
  }
  /* Ctrl+S (win.save-session) saves on a worker: once saved, the command is again --session */
  gtk_widget_activate_action (GTK_WIDGET (window), "win.save-session", NULL);
  rpe_test_iterate_until (command_available, window);
  g_clear_pointer (&line, g_free);
  line = rpe_window_command_line (window, NULL);
  g_assert_nonnull (strstr (line, "--session"));
  g_assert_true (rpe_window_export_view (window, gui, &error));
  run_copied (line, cli);
  assert_same_figure ("--session after Ctrl+S", gui, cli);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Templates and SPE vs RPE compute at a cap of N (512, 256): the command draws the figure shown. */
static void
test_capped (void)
{
  RpeWindow *window;
  RpeExplorerState *state;
  g_autoptr (GError) error = NULL;
  g_autofree char *gui = rpe_test_tmp_path ("cap-gui.png");
  g_autofree char *cli = rpe_test_tmp_path ("cap-cli.png");
  g_autofree char *session = rpe_test_tmp_path ("cap.rpe-session");
  struct { RpeWindowView view; guint n; const char *length; } cases[] = {
    { RPE_WINDOW_VIEW_TEACHING, 300, "--length 256" },
    { RPE_WINDOW_VIEW_TEMPLATES, 520, "--length 512" },
  };

  if (!have_cli ())
    return;
  window = open_window ();
  state = rpe_window_get_state (window);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *line = NULL;

      g_object_set (state, "length", cases[i].n, "realizations", 8, NULL);
      rpe_window_set_view (window, cases[i].view);
      rpe_test_settle (window, TRUE);
      line = rpe_window_command_line (window, NULL);
      g_assert_nonnull (line);
      g_test_message ("N = %u: %s", cases[i].n, line);
      g_assert_nonnull (strstr (line, cases[i].length));
      g_assert_true (rpe_window_export_view (window, gui, &error));
      g_assert_no_error (error);
      run_copied (line, cli);
      assert_same_figure ("capped view, copied command", gui, cli);
      /* and its session keeps the user's N, the figure's N beside it */
      g_assert_true (rpe_window_save_session (window, session, &error));
      {
        g_autoptr (RpeSession) s = rpe_session_load (session, &error);

        g_assert_no_error (error);
        g_assert_cmpuint (rpe_explorer_state_get_length (s->state), ==, cases[i].n);
        g_assert_cmpuint (s->export_length, <, cases[i].n);
      }
    }
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_refused (void)
{
  RpeWindow *window = open_window ();
  RpeExplorerState *state = rpe_window_get_state (window);
  g_autoptr (RpeExplorerState) before = rpe_explorer_state_new ();
  g_autoptr (GError) error = NULL;
  g_autofree char *bad = rpe_test_tmp_path ("bad.rpe-session");
  g_autofree char *title = NULL;
  const char *cases[][2] = {
    { "{\"format\":\"rpe-session\",\"version\":99}", "version 99" },
    { "<xml/>", "not JSON" },
    { "{\"format\":\"rpe-session\",\"version\":1,\"state\":{\"length\":1}}", "out of range" },
    { "{\"format\":\"rpe-session\",\"version\":1,\"state\":{},\"checkpoint\":{\"path\":\"/gone/x.safetensors\"}}",
      "missing" },
  };

  g_assert_true (rpe_explorer_state_set_sine (state, 0, 0, 0, 0.11, 0.0, 1.0, FALSE));
  rpe_test_settle (window, TRUE);
  rpe_explorer_state_copy_into (state, before);
  title = g_strdup (gtk_window_get_title (GTK_WINDOW (window)));
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      guint64 serial = rpe_explorer_state_get_serial (state);

      g_assert_true (g_file_set_contents (bad, cases[i][0], -1, NULL));
      g_assert_false (rpe_window_open_session (window, bad, &error));
      g_assert_nonnull (error);
      g_clear_error (&error);
      g_assert_nonnull (rpe_window_get_message (window));
      g_test_message ("banner: %s", rpe_window_get_message (window));
      g_assert_nonnull (strstr (rpe_window_get_message (window), cases[i][1]));
      g_assert_cmpuint (rpe_explorer_state_get_serial (state), ==, serial);
      g_assert_true (rpe_explorer_state_equal (before, state, NULL));
      g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (window)), ==, title);
      g_assert_null (rpe_window_get_session_file (window));
    }

  /* a checkpoint rewritten since the session was saved: opened, with a warning in the banner */
  {
    g_autofree char *fake = rpe_test_tmp_path ("rewritten.safetensors");
    g_autofree char *path = rpe_test_tmp_path ("rewritten.rpe-session");
    g_autoptr (RpeSession) s = rpe_window_build_session (window);

    g_assert_true (g_file_set_contents (fake, "weights of step 100", -1, NULL));
    rpe_session_set_checkpoint (s, fake, NULL, -1, NULL);
    g_assert_true (rpe_session_save (s, path, &error));
    g_assert_true (g_file_set_contents (fake, "weights of step 200", -1, NULL));
    g_assert_true (rpe_window_open_session (window, path, &error));
    g_assert_no_error (error);
    g_test_message ("banner: %s", rpe_window_get_message (window));
    g_assert_nonnull (strstr (rpe_window_get_message (window), "has changed"));
    g_assert_true (rpe_explorer_state_equal (before, state, NULL));
  }
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Two files equal byte for byte (the same code drew both). */
static void
assert_same_file (const char *a,
                  const char *b)
{
  g_autofree char *da = NULL, *db = NULL;
  gsize la = 0, lb = 0;

  g_assert_true (g_file_get_contents (a, &da, &la, NULL));
  g_assert_true (g_file_get_contents (b, &db, &lb, NULL));
  g_assert_cmpuint (la, ==, lb);
  g_assert_true (memcmp (da, db, la) == 0);
}

/* The window's export of its saved session equals `rpe export --session`; that
 * session saved again by `rpe export --save-session` redraws pixel for pixel. */
static void
check_session_figure (RpeWindow  *window,
                      const char *what)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *session = rpe_test_tmp_path ("method.rpe-session");
  g_autofree char *resaved = rpe_test_tmp_path ("method-resaved.rpe-session");
  g_autofree char *gui = rpe_test_tmp_path ("method-gui.png");
  g_autofree char *cli = rpe_test_tmp_path ("method-cli.png");
  g_autofree char *again = rpe_test_tmp_path ("method-again.png");

  rpe_test_settle (window, TRUE);
  g_assert_true (rpe_window_save_session (window, session, &error));
  g_assert_no_error (error);
  g_assert_true (rpe_window_export_view (window, gui, &error));
  g_assert_no_error (error);
  {
    char *argv[] = { (char *) g_getenv ("RPE_CLI"), (char *) "export", (char *) "--session", session,
                     (char *) "--save-session", resaved, (char *) "-o", cli, NULL };

    g_assert_cmpint (run_argv (argv), ==, 0);
  }
  assert_same_figure (what, gui, cli);
  {
    char *argv[] = { (char *) g_getenv ("RPE_CLI"), (char *) "export", (char *) "--session", resaved,
                     (char *) "-o", again, NULL };

    g_assert_cmpint (run_argv (argv), ==, 0);
  }
  assert_same_file (cli, again);
}

/* Every attention method, edited FastRPB weights, loaded content and a zoom:
 * sessions redraw them, and Copy as Command copies an option line when options say it. */
static void
test_methods (void)
{
  RpeWindow *window;
  RpeExplorerState *state;
  RpeAttentionView *view;
  g_autoptr (GError) error = NULL;
  g_autofree char *gui = rpe_test_tmp_path ("m-gui.png");
  g_autofree char *cli = rpe_test_tmp_path ("m-cli.png");
  static const struct { RpeExplorerMethod method; const char *name; } methods[] = {
    { RPE_EXPLORER_METHOD_APE, "ape" }, { RPE_EXPLORER_METHOD_LRPE, "lrpe" },
    { RPE_EXPLORER_METHOD_FASTRPB, "fastrpb" }, { RPE_EXPLORER_METHOD_LINEAR, "linear" } };

  if (!have_cli ())
    return;
  window = open_window ();
  state = rpe_window_get_state (window);
  view = RPE_ATTENTION_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_ATTENTION));
  g_object_set (state, "head", 1, "content", RPE_CONTENT_RANDOM, "seed", 5, "lrpe-p", RPE_LRPE_P_HOUSEHOLDER,
                "lrpe-lambda", RPE_LRPE_LAMBDA_MIXED, "feature-map", RPE_FEATURE_RELU, NULL);
  rpe_window_set_view (window, RPE_WINDOW_VIEW_ATTENTION);
  for (guint i = 0; i < G_N_ELEMENTS (methods); i++)
    {
      g_autofree char *line = NULL;

      g_object_set (state, "method", (guint) methods[i].method, NULL);
      rpe_test_settle (window, TRUE);
      /* the demo's parameters as read: the copied command stands alone */
      line = copy_command (window);
      g_test_message ("copied: %s", line);
      g_assert_nonnull (strstr (line, methods[i].name));
      g_assert_null (strstr (line, "--session"));
      g_assert_true (rpe_window_export_view (window, gui, &error));
      run_copied (line, cli);
      assert_same_figure (methods[i].name, gui, cli);
      check_session_figure (window, methods[i].name);
    }

  /* the colour-scale control with the other methods: gamma for LRPE, log for linear attention */
  {
    static const struct { RpeExplorerMethod method; RpeHeatmapTransform scale; const char *what; } looks[] = {
      { RPE_EXPLORER_METHOD_LRPE, RPE_HEATMAP_TRANSFORM_POWER, "lrpe, gamma 0.5" },
      { RPE_EXPLORER_METHOD_LINEAR, RPE_HEATMAP_TRANSFORM_LOG, "linear, log scale" },
      { RPE_EXPLORER_METHOD_APE, RPE_HEATMAP_TRANSFORM_ATTENTION, "ape, attention transform" } };

    for (guint i = 0; i < G_N_ELEMENTS (looks); i++)
      {
        g_autofree char *line = NULL;

        g_object_set (state, "method", (guint) looks[i].method, "color-scale", (guint) looks[i].scale,
                      "color-gamma", 0.5, NULL);
        rpe_test_settle (window, TRUE);
        line = copy_command (window);
        g_test_message ("copied: %s", line);
        g_assert_nonnull (strstr (line, "--color-scale"));
        g_assert_true (rpe_window_export_view (window, gui, &error));
        run_copied (line, cli);
        assert_same_figure (looks[i].what, gui, cli);
        check_session_figure (window, looks[i].what);
      }
    g_object_set (state, "color-scale", (guint) RPE_HEATMAP_TRANSFORM_NONE, NULL);
  }

  /* the Curves page: options alone, then its session */
  rpe_window_set_view (window, RPE_WINDOW_VIEW_CURVES);
  rpe_test_settle (window, TRUE);
  {
    g_autofree char *line = copy_command (window);

    g_test_message ("copied: %s", line);
    g_assert_true (g_str_has_prefix (line, "rpe export curves --checkpoint demo"));
    g_assert_true (rpe_window_export_view (window, gui, &error));
    run_copied (line, cli);
    assert_same_figure ("curves (options)", gui, cli);
  }
  check_session_figure (window, "curves (session)");
  rpe_window_set_view (window, RPE_WINDOW_VIEW_ATTENTION);

  /* FastRPB with edited weights: only the session says them */
  {
    float w[2 * RPE_EXPLORER_FASTRPB_TAPS - 1] = { 0 };
    g_autofree char *why = NULL;
    g_autofree char *none = NULL;

    for (guint i = 0; i < G_N_ELEMENTS (w); i++)
      w[i] = 0.5f * sinf (0.3f * (float) i);
    g_object_set (state, "method", (guint) RPE_EXPLORER_METHOD_FASTRPB, NULL);
    rpe_explorer_state_set_fastrpb_weights (state, w, G_N_ELEMENTS (w));
    rpe_test_settle (window, TRUE);
    none = rpe_window_command_line (window, &why);
    g_assert_null (none);
    g_assert_nonnull (strstr (why, "FastRPB"));
    check_session_figure (window, "fastrpb (edited weights)");
    rpe_window_set_view (window, RPE_WINDOW_VIEW_CURVES);
    check_session_figure (window, "curves (edited FastRPB weights)");
    rpe_window_set_view (window, RPE_WINDOW_VIEW_ATTENTION);
  }

  /* loaded content: the session holds it; SPE estimate and LRPE */
  {
    g_autofree float *data = g_new (float, TEST_N * 16);
    const gsize shape[2] = { TEST_N, 16 };

    for (guint i = 0; i < TEST_N * 16; i++)
      data[i] = cosf (0.37f * (float) i) + 0.1f * (float) (i % 7);
    g_assert_true (rpe_explorer_state_set_npy_content (state, data, 2, shape, &error));
    g_assert_no_error (error);
    g_object_set (state, "method", (guint) RPE_EXPLORER_METHOD_SPE, NULL);
    check_session_figure (window, "spe (loaded content)");
    g_object_set (state, "method", (guint) RPE_EXPLORER_METHOD_LRPE, NULL);
    check_session_figure (window, "lrpe (loaded content)");
    g_object_set (state, "content", RPE_CONTENT_UNIT, NULL);
  }

  /* zoomed, options alone: --rows/--cols draw the window shown */
  g_object_set (state, "method", (guint) RPE_EXPLORER_METHOD_EXACT, "causal", TRUE, NULL);
  rpe_test_settle (window, TRUE);
  rpe_figure_page_zoom (RPE_FIGURE_PAGE (view), 3.0);
  rpe_test_settle (window, TRUE);
  {
    g_autofree char *line = copy_command (window);

    g_test_message ("copied: %s", line);
    g_assert_nonnull (strstr (line, "--rows"));
    g_assert_nonnull (strstr (line, "--cols"));
    g_assert_true (rpe_window_export_view (window, gui, &error));
    run_copied (line, cli);
    assert_same_figure ("exact, zoomed (options)", gui, cli);
  }
  check_session_figure (window, "exact, zoomed (session)");
  g_object_set (state, "method", (guint) RPE_EXPLORER_METHOD_LINEAR, NULL);
  check_session_figure (window, "linear, zoomed (session)");
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Trained LRPE parameters (v and theta from .npy files): the session holds them, the window's
 * export equals `rpe export --session`, and opening the session restores the trained choice. */
static void
test_trained_lrpe (void)
{
  RpeWindow *window, *other;
  RpeExplorerState *state;
  g_autoptr (GError) error = NULL;
  g_autofree char *session = rpe_test_tmp_path ("trained.rpe-session");
  g_autofree char *vp = g_test_build_filename (G_TEST_DIST, "fixtures", "lrpe", "v.npy", NULL);
  g_autofree char *tp = g_test_build_filename (G_TEST_DIST, "fixtures", "lrpe", "theta.npy", NULL);
  GFile *files[2];
  const char *source = NULL;
  const RpeLrpeTrained *t;
  gboolean use = FALSE;
  g_autofree char *what = NULL;

  if (!have_cli ())
    return;
  window = open_window ();
  state = rpe_window_get_state (window);
  files[0] = g_file_new_for_path (vp);
  files[1] = g_file_new_for_path (tp);
  g_assert_true (rpe_window_open_lrpe_files (window, files, 2, &error));
  g_assert_no_error (error);
  g_object_unref (files[0]);
  g_object_unref (files[1]);
  g_object_set (state, "method", (guint) RPE_EXPLORER_METHOD_LRPE, "content", RPE_CONTENT_RANDOM, "seed", 3, NULL);
  rpe_window_set_view (window, RPE_WINDOW_VIEW_ATTENTION);
  g_object_get (state, "lrpe-trained", &use, NULL);
  g_assert_true (use);
  check_session_figure (window, "lrpe (trained v, theta)");
  /* the trained values are what is drawn: the seeded LRPE draws another figure */
  {
    g_autofree char *trained_png = rpe_test_tmp_path ("trained-gui.png");
    g_autofree char *seeded_png = rpe_test_tmp_path ("seeded-gui.png");
    int delta = 0;

    g_assert_true (rpe_window_export_view (window, trained_png, &error));
    g_object_set (state, "lrpe-trained", FALSE, NULL);
    rpe_test_settle (window, TRUE);
    g_assert_true (rpe_window_export_view (window, seeded_png, &error));
    g_assert_no_error (error);
    g_assert_cmpfloat (rpe_test_png_difference (trained_png, seeded_png, &delta), >, 0.01);
    g_object_set (state, "lrpe-trained", TRUE, NULL);
    rpe_test_settle (window, TRUE);
  }
  /* option lines cannot say trained values: the command names the session */
  g_assert_true (rpe_window_save_session (window, session, &error));
  g_assert_no_error (error);
  {
    g_autofree char *line = rpe_window_command_line (window, NULL);

    g_assert_nonnull (line);
    g_test_message ("copied: %s", line);
    g_assert_nonnull (strstr (line, "--session"));
  }

  /* the round trip: another window opens the session with the same trained choice */
  other = open_window ();
  g_assert_true (rpe_window_open_session (other, session, &error));
  g_assert_no_error (error);
  g_assert_true (rpe_explorer_state_equal (state, rpe_window_get_state (other), &what));
  t = rpe_explorer_state_get_lrpe_trained (rpe_window_get_state (other), &source);
  g_assert_nonnull (t);
  g_assert_cmpuint (t->v_dim, ==, 8);
  g_assert_cmpuint (t->n_theta, ==, 4);
  g_assert_nonnull (strstr (source, "v.npy"));
  g_object_get (rpe_window_get_state (other), "lrpe-trained", &use, NULL);
  g_assert_true (use);
  g_assert_cmpuint (adw_combo_row_get_selected (ADW_COMBO_ROW (rpe_window_get_lrpe_params_row (other))), >, 0);
  gtk_window_destroy (GTK_WINDOW (other));
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Every boolean a session holds can be switched off beside --session. */
static void
test_negations (void)
{
  g_autofree char *session = rpe_test_tmp_path ("neg.rpe-session");
  g_autofree char *a = rpe_test_tmp_path ("neg-a.png");
  g_autofree char *b = rpe_test_tmp_path ("neg-b.png");
  g_autofree char *length = g_strdup_printf ("%d", TEST_N);

  if (!have_cli ())
    return;
  {
    char *argv[] = { (char *) g_getenv ("RPE_CLI"), (char *) "export", (char *) "attention", (char *) "--checkpoint",
                     (char *) "demo", (char *) "--length", length, (char *) "--causal", (char *) "--exact",
                     (char *) "--no-gate", (char *) "--save-session", session, (char *) "-o", a, NULL };

    g_assert_cmpint (run_argv (argv), ==, 0);
  }
  {
    /* --no-causal --no-exact --gate beside the session ... */
    char *argv[] = { (char *) g_getenv ("RPE_CLI"), (char *) "export", (char *) "--session", session,
                     (char *) "--no-causal", (char *) "--no-exact", (char *) "--gate", (char *) "-o", a, NULL };

    g_assert_cmpint (run_argv (argv), ==, 0);
  }
  {
    /* ... draw what the options alone draw without them */
    char *argv[] = { (char *) g_getenv ("RPE_CLI"), (char *) "export", (char *) "attention", (char *) "--checkpoint",
                     (char *) "demo", (char *) "--length", length, (char *) "-o", b, NULL };

    g_assert_cmpint (run_argv (argv), ==, 0);
  }
  assert_same_file (a, b);
  {
    /* a negation is refused where its option is */
    char *argv[] = { (char *) g_getenv ("RPE_CLI"), (char *) "export", (char *) "templates", (char *) "--rows",
                     (char *) "0:4", (char *) "-o", b, NULL };

    g_assert_cmpint (run_argv (argv), !=, 0);
  }
}

/* The Outputs view's settings are part of its session: a second window opening it shows them;
 * `rpe export --session` redraws it through `rpe export outputs` pixel for pixel like the
 * window's export; Copy as Command copies an `rpe export outputs` line that redraws it; a
 * malformed "outputs" member is refused, the state unchanged. */
static void
check_outputs_round_trip (RpeWindow  *window,
                          const char *name)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *session = rpe_test_tmp_path (name);
  g_autofree char *gui = rpe_test_tmp_path ("outputs-gui.png");
  g_autofree char *cli = rpe_test_tmp_path ("outputs-cli.png");
  g_autofree char *copied = rpe_test_tmp_path ("outputs-copied.png");
  g_autofree char *line = NULL;
  RpeWindow *second;
  g_autoptr (RpeSession) a = NULL;
  g_autoptr (RpeSession) b = NULL;

  rpe_test_settle (window, TRUE);
  g_assert_true (rpe_window_save_session (window, session, &error));
  g_assert_no_error (error);
  g_assert_true (rpe_window_export_view (window, gui, &error));
  g_assert_no_error (error);
  {
    char *argv[] = { (char *) g_getenv ("RPE_CLI"), (char *) "export", (char *) "--session", session,
                     (char *) "-o", cli, NULL };

    g_assert_cmpint (run_argv (argv), ==, 0);
  }
  {
    int delta = 0;
    double fraction = rpe_test_png_difference (gui, cli, &delta);

    g_test_message ("outputs %s: %.4f%% of the pixels differ (max delta %d)", name, 100 * fraction, delta);
    g_assert_cmpfloat (fraction, ==, 0.0);
  }
  line = copy_command (window);
  g_assert_nonnull (line);
  g_test_message ("copied: %s", line);
  g_assert_true (g_str_has_prefix (line, "rpe export outputs --checkpoint demo"));
  run_copied (line, copied);
  assert_same_figure ("copied outputs command", gui, copied);

  /* a second window opening the session shows the same settings */
  second = open_window ();
  g_assert_true (rpe_window_open_session (second, session, &error));
  g_assert_no_error (error);
  g_assert_cmpint (rpe_window_get_view (second), ==, RPE_WINDOW_VIEW_OUTPUTS);
  rpe_test_settle (second, TRUE);
  a = rpe_window_build_session (window);
  b = rpe_window_build_session (second);
  g_assert_true (b->outputs.have);
  g_assert_cmpuint (a->outputs.values, ==, b->outputs.values);
  g_assert_cmpuint (a->outputs.channels, ==, b->outputs.channels);
  g_assert_cmpstr (a->outputs.positions, ==, b->outputs.positions);
  g_assert_cmpuint (a->outputs.compare, ==, b->outputs.compare);
  g_assert_cmpuint (a->outputs.channel, ==, b->outputs.channel);
  g_assert_cmpint (a->outputs.several_draws, ==, b->outputs.several_draws);
  g_assert_cmpstr (a->outputs.values_path, ==, b->outputs.values_path);
  {
    g_autofree char *again = rpe_test_tmp_path ("outputs-second.png");

    g_assert_true (rpe_window_export_view (second, again, &error));
    g_assert_no_error (error);
    int delta = 0;

    g_assert_cmpfloat (rpe_test_png_difference (gui, again, &delta), ==, 0.0);
  }
  gtk_window_destroy (GTK_WINDOW (second));
}

static void
test_outputs (void)
{
  RpeWindow *window;
  RpeExplorerState *state;
  RpeOutputsView *view;
  g_autoptr (GError) error = NULL;
  g_autofree char *npy = rpe_test_tmp_path ("outputs-v.npy");
  g_autofree char *bad = rpe_test_tmp_path ("outputs-bad.rpe-session");
  if (!have_cli ())
    return;
  window = open_window ();
  state = rpe_window_get_state (window);
  view = RPE_OUTPUTS_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_OUTPUTS));
  g_object_set (state, "head", 1, "causal", TRUE, "seed", 5, "realizations", 8, "train-length", 20,
                "colormap", "magma", NULL);
  rpe_window_set_view (window, RPE_WINDOW_VIEW_OUTPUTS);
  /* every setting away from its default */
  rpe_outputs_view_set_values (view, RPE_VALUES_IMPULSE, 6);
  g_assert_true (rpe_outputs_view_set_positions (view, "3,17,40"));
  rpe_outputs_view_set_compare (view, RPE_OUTPUTS_KERNEL);
  rpe_outputs_view_set_several_draws (view, TRUE);
  rpe_outputs_view_set_channel (view, 2);
  check_outputs_round_trip (window, "outputs-impulse.rpe-session");

  /* seeded noise, and values from a .npy */
  rpe_outputs_view_set_values (view, RPE_VALUES_NOISE, 3);
  rpe_outputs_view_set_several_draws (view, FALSE);
  check_outputs_round_trip (window, "outputs-noise.rpe-session");
  {
    gsize shape[2] = { TEST_N, 5 };
    float v[TEST_N * 5];

    for (gsize i = 0; i < G_N_ELEMENTS (v); i++)
      v[i] = (float) sin (0.37 * (double) i);
    g_assert_true (rpe_npy_write (npy, v, 2, shape, FALSE, &error));
    g_assert_no_error (error);
  }
  rpe_outputs_view_set_npy (view, npy);
  rpe_outputs_view_set_compare (view, RPE_OUTPUTS_SOFTMAX);
  rpe_test_settle (window, TRUE);   /* the plot channel is clamped to the shown result's Dv (5 now) */
  rpe_outputs_view_set_channel (view, 4);
  check_outputs_round_trip (window, "outputs-npy.rpe-session");

  /* malformed "outputs" members: refused, the state as it was */
  {
    g_autofree char *path = rpe_test_tmp_path ("outputs-npy.rpe-session");
    g_autofree char *text = NULL;
    g_autoptr (RpeSession) before = rpe_window_build_session (window);
    const char *const swaps[][2] = {
      { "\"compare\" : \"softmax\"", "\"compare\" : \"both\"" },
      { "\"channels\" : 3", "\"channels\" : 500" },
      { "\"several-draws\" : false", "\"several-draws\" : 3" },
      { "\"values\" : \"array\"", "\"values\" : \"chirp\"" },
    };

    g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
    for (gsize i = 0; i < G_N_ELEMENTS (swaps); i++)
      {
        g_autoptr (GString) t = g_string_new (text);
        g_autoptr (GError) e = NULL;
        g_autoptr (RpeSession) after = NULL;
        char *what = NULL;

        g_assert_nonnull (strstr (text, swaps[i][0]));
        g_string_replace (t, swaps[i][0], swaps[i][1], 1);
        g_assert_true (g_file_set_contents (bad, t->str, -1, NULL));
        g_assert_false (rpe_window_open_session (window, bad, &e));
        g_assert_nonnull (e);
        g_test_message ("refused: %s", e->message);
        after = rpe_window_build_session (window);
        g_assert_true (rpe_explorer_state_equal (before->state, after->state, &what));
        g_assert_cmpuint (after->outputs.values, ==, before->outputs.values);
        g_assert_cmpuint (after->outputs.channel, ==, before->outputs.channel);
        g_assert_cmpstr (after->outputs.values_path, ==, before->outputs.values_path);
        g_free (what);
      }
  }
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Close (and Quit, which closes every window) asks before losing a changed session: Cancel keeps
 * the window, Save writes the session and closes, Discard closes; an unchanged session closes at
 * once. */
static AdwMessageDialog *
close_dialog_of (RpeWindow *window)
{
  GListModel *toplevels = gtk_window_get_toplevels ();   /* transfer none */

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr (GtkWindow) w = g_list_model_get_item (toplevels, i);

      if (ADW_IS_MESSAGE_DIALOG (w) && gtk_window_get_transient_for (w) == GTK_WINDOW (window)
          && gtk_widget_get_visible (GTK_WIDGET (w)))
        return ADW_MESSAGE_DIALOG (w);
    }
  return NULL;
}

static void
test_close_unsaved (void)
{
  g_autofree char *dir = g_dir_make_tmp ("rpe-close-XXXXXX", NULL);
  g_autofree char *session = g_build_filename (dir, "close.rpe-session", NULL);
  g_autoptr (GError) error = NULL;
  const char *responses[] = { "cancel", "save", "discard" };
  RpeWindow *window = NULL;

  for (guint r = 0; r < G_N_ELEMENTS (responses); r++)
    {
      AdwMessageDialog *dialog;

      if (window == NULL)
        {
          window = open_window ();
          g_object_add_weak_pointer (G_OBJECT (window), (gpointer *) &window);
          rpe_test_settle (window, TRUE);
          g_assert_true (rpe_window_save_session (window, session, &error));
          g_assert_no_error (error);
          /* saved and unchanged: nothing to ask (checked once, on a window of its own) */
          if (r == 0)
            {
              RpeWindow *other = open_window ();

              g_object_add_weak_pointer (G_OBJECT (other), (gpointer *) &other);
              rpe_test_settle (other, TRUE);
              g_assert_true (rpe_window_save_session (other, session, &error));
              gtk_window_close (GTK_WINDOW (other));
              rpe_test_drain ();
              g_assert_null (other);
            }
        }
      g_object_set (rpe_window_get_state (window), "length", TEST_N + 8 * (r + 1), NULL);
      gtk_window_close (GTK_WINDOW (window));
      rpe_test_drain ();
      g_assert_nonnull (window);
      dialog = close_dialog_of (window);
      g_assert_nonnull (dialog);
      /* as its button does: the response, then the dialog closes */
      g_object_ref (dialog);
      adw_message_dialog_response (dialog, responses[r]);
      if (gtk_widget_get_visible (GTK_WIDGET (dialog)))
        gtk_window_close (GTK_WINDOW (dialog));
      g_object_unref (dialog);
      rpe_test_drain ();
      if (r == 0)
        {
          /* Cancel: the window and its changes stay */
          g_assert_nonnull (window);
          g_assert_null (close_dialog_of (window));
          g_assert_cmpuint (rpe_explorer_state_get_length (rpe_window_get_state (window)), ==, TEST_N + 8);
          gtk_window_destroy (GTK_WINDOW (window));
          rpe_test_drain ();
          g_assert_null (window);
          continue;
        }
      g_assert_null (window);
      if (r == 1)
        {
          /* Save: the file holds the change */
          g_autoptr (RpeSession) saved = rpe_session_load (session, &error);

          g_assert_no_error (error);
          g_assert_cmpuint (rpe_explorer_state_get_length (saved->state), ==, TEST_N + 16);
        }
    }
  rpe_test_wait_jobs ();
  g_unlink (session);
  g_rmdir (dir);
}

static gboolean
capture_open_done (gpointer data)
{
  return !rpe_window_is_opening_capture (RPE_WINDOW (data)) && rpe_test_window_idle_drained (RPE_WINDOW (data));
}

/* A session with a capture: the captured-values choice of the Outputs view comes back; the
 * restored capture is checked against the session's checkpoint (another model's is refused and
 * the window stays as it was); a capture with a fingerprint opens without a note. */
static void
test_capture (void)
{
  RpeWindow        *window = open_window ();
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeOutputsView   *view = RPE_OUTPUTS_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_OUTPUTS));
  g_autoptr (GError) error = NULL;
  g_autofree char *with = rpe_test_tmp_path ("capture-values.rpe-session");
  g_autofree char *without = rpe_test_tmp_path ("capture-generated.rpe-session");
  g_autofree char *paired = rpe_test_tmp_path ("capture-paired.rpe-session");
  g_autofree char *text = NULL;
  g_autoptr (GString) t = NULL;
  guint64 serial;

  rpe_window_open_demo (window, "demo:sine-spe");
  rpe_test_iterate_until (rpe_test_window_idle_drained, window);
  gtk_widget_activate_action (GTK_WIDGET (window), "win.load-capture", "s", "demo:sine-spe");
  rpe_test_iterate_until (capture_open_done, window);
  g_assert_nonnull (rpe_explorer_state_get_capture (state));
  g_assert_null (rpe_window_get_message (window)); /* it records its model: nothing to note */
  rpe_window_set_view (window, RPE_WINDOW_VIEW_OUTPUTS);
  rpe_test_iterate_until (rpe_test_window_idle_drained, window);

  /* the captured values saved, generated values restored over them: the session brings them back */
  g_assert_true (rpe_outputs_view_set_captured (view));
  g_assert_true (rpe_window_save_session (window, with, &error));
  g_assert_no_error (error);
  rpe_outputs_view_set_values (view, RPE_VALUES_NOISE, 3);
  g_assert_false (rpe_outputs_view_get_captured (view));
  g_assert_true (rpe_window_save_session (window, without, &error));
  g_assert_true (rpe_window_open_session (window, with, &error));
  g_assert_no_error (error);
  rpe_test_iterate_until (rpe_test_window_idle_drained, window);
  g_assert_true (rpe_outputs_view_get_captured (view));
  g_assert_true (rpe_window_open_session (window, without, &error));
  rpe_test_iterate_until (rpe_test_window_idle_drained, window);
  g_assert_false (rpe_outputs_view_get_captured (view));
  g_assert_nonnull (rpe_explorer_state_get_model_print (state));

  /* the same session pairing one demo's capture with the other demo's checkpoint: refused, both
   * named, nothing changed */
  g_assert_true (g_file_get_contents (with, &text, NULL, NULL));
  t = g_string_new (text);
  g_assert_cmpuint (g_string_replace (t, "\"path\" : \"demo:sine-spe\"", "\"path\" : \"demo:conv-spe\"", 1), ==, 1);
  g_assert_true (g_file_set_contents (paired, t->str, -1, NULL));
  serial = rpe_explorer_state_get_serial (state);
  g_assert_false (rpe_window_open_session (window, paired, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "demo:sine-spe"));
  g_assert_nonnull (strstr (error->message, "demo:conv-spe"));
  g_assert_nonnull (rpe_window_get_message (window));
  g_assert_nonnull (strstr (rpe_window_get_message (window), "demo:conv-spe"));
  g_assert_cmpuint (rpe_explorer_state_get_serial (state), ==, serial);
  g_assert_false (rpe_outputs_view_get_captured (view));
  g_clear_error (&error);

  rpe_test_iterate_until (rpe_test_window_idle_drained, window);
  gtk_window_destroy (GTK_WINDOW (window));
  g_remove (with);
  g_remove (without);
  g_remove (paired);
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  g_test_add_func ("/ui/session/window-and-cli", test_window_and_cli);
  g_test_add_func ("/ui/session/copy-command", test_copy_command);
  g_test_add_func ("/ui/session/capped", test_capped);
  g_test_add_func ("/ui/session/refused", test_refused);
  g_test_add_func ("/ui/session/methods", test_methods);
  g_test_add_func ("/ui/session/trained-lrpe", test_trained_lrpe);
  g_test_add_func ("/ui/session/negations", test_negations);
  g_test_add_func ("/ui/session/outputs", test_outputs);
  g_test_add_func ("/ui/session/close-unsaved", test_close_unsaved);
  g_test_add_func ("/ui/session/capture", test_capture);
  return g_test_run ();
}

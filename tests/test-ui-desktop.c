/* test-ui-desktop.c: RPE Studio as a desktop citizen (Xvfb).
 *
 * The settings backend here is the test's own (registered as the default):
 * a working in-memory store, or, switched to "failing", one that behaves as
 * dconf does without a D-Bus session: every write is accepted, then reverted
 * from an idle ("changed" with the old value), which is how the views used
 * to snap back.
 *
 * - With the failing backend, Ctrl+1..4, the view stack (the tabs) and the
 *   colour map change and stay changed; saving does not disturb them.
 * - Quit (app.quit) closes every window as Close does, and both save the same state: size, view,
 *   colour map.
 * - GApplication open: `rpe-studio FILE` opens the file in a window whose
 *   title names it. */
#include "config.h"

#define G_SETTINGS_ENABLE_BACKEND
#include <gio/gsettingsbackend.h>

#include <string.h>

#include <adwaita.h>

#include "rpe-application.h"
#include "rpe-window-test.h"

#define TIMEOUT_S 120

/* ------------------------------------------------------------ the backend */

#define TEST_TYPE_BACKEND (test_backend_get_type ())
G_DECLARE_FINAL_TYPE (TestBackend, test_backend, TEST, BACKEND, GSettingsBackend)

struct _TestBackend
{
  GSettingsBackend  parent_instance;
  GHashTable       *store;      /* key -> GVariant */
};

G_DEFINE_FINAL_TYPE (TestBackend, test_backend, G_TYPE_SETTINGS_BACKEND)

static gboolean backend_failing;
static guint    pending_reverts;
static guint    reverts_done;

typedef struct
{
  GSettingsBackend *backend;
  char             *key;
} Revert;

static gboolean
revert_idle (gpointer data)
{
  Revert *r = data;

  g_settings_backend_changed (r->backend, r->key, NULL);
  g_object_unref (r->backend);
  g_free (r->key);
  g_free (r);
  pending_reverts--;
  reverts_done++;
  return G_SOURCE_REMOVE;
}

static GVariant *
test_backend_read (GSettingsBackend   *backend,
                   const char         *key,
                   const GVariantType *expected_type,
                   gboolean            default_value)
{
  TestBackend *self = TEST_BACKEND (backend);
  GVariant *v = default_value ? NULL : g_hash_table_lookup (self->store, key);

  return v != NULL && g_variant_is_of_type (v, expected_type) ? g_variant_ref (v) : NULL;
}

static void
write_one (TestBackend *self,
           const char  *key,
           GVariant    *value)
{
  if (backend_failing)
    {
      /* accepted now, reverted later (the store does not change) */
      Revert *r = g_new0 (Revert, 1);

      r->backend = g_object_ref (G_SETTINGS_BACKEND (self));
      r->key = g_strdup (key);
      pending_reverts++;
      g_idle_add (revert_idle, r);
      return;
    }
  if (value != NULL)
    g_hash_table_insert (self->store, g_strdup (key), g_variant_ref_sink (value));
  else
    g_hash_table_remove (self->store, key);
}

static gboolean
test_backend_write (GSettingsBackend *backend,
                    const char       *key,
                    GVariant         *value,
                    gpointer          origin_tag)
{
  g_variant_ref_sink (value);
  write_one (TEST_BACKEND (backend), key, value);
  g_settings_backend_changed (backend, key, origin_tag);
  g_variant_unref (value);
  return TRUE;
}

static gboolean
write_tree_one (gpointer key,
                gpointer value,
                gpointer data)
{
  write_one (data, key, value);
  return FALSE;
}

static gboolean
test_backend_write_tree (GSettingsBackend *backend,
                         GTree            *tree,
                         gpointer          origin_tag)
{
  g_tree_foreach (tree, write_tree_one, backend);
  g_settings_backend_changed_tree (backend, tree, origin_tag);
  return TRUE;
}

static void
test_backend_reset (GSettingsBackend *backend,
                    const char       *key,
                    gpointer          origin_tag)
{
  write_one (TEST_BACKEND (backend), key, NULL);
  g_settings_backend_changed (backend, key, origin_tag);
}

static gboolean
test_backend_get_writable (GSettingsBackend *backend,
                           const char       *key)
{
  return TRUE;
}

static void
test_backend_finalize (GObject *object)
{
  g_hash_table_unref (TEST_BACKEND (object)->store);
  G_OBJECT_CLASS (test_backend_parent_class)->finalize (object);
}

static void
test_backend_class_init (TestBackendClass *klass)
{
  GSettingsBackendClass *backend_class = G_SETTINGS_BACKEND_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = test_backend_finalize;
  backend_class->read = test_backend_read;
  backend_class->write = test_backend_write;
  backend_class->write_tree = test_backend_write_tree;
  backend_class->reset = test_backend_reset;
  backend_class->get_writable = test_backend_get_writable;
}

static void
test_backend_init (TestBackend *self)
{
  self->store = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_variant_unref);
}

/* -------------------------------------------------------------- helpers */

static gboolean
timed_out (gpointer user_data)
{
  *(gboolean *) user_data = TRUE;
  return G_SOURCE_REMOVE;
}

static void
iterate_until (gboolean (*done) (gpointer),
               gpointer   data)
{
  gboolean expired = FALSE;
  guint id = g_timeout_add_seconds (TIMEOUT_S, timed_out, &expired);

  while (!done (data) && !expired)
    g_main_context_iteration (NULL, TRUE);
  if (!expired)
    g_source_remove (id);
  g_assert_false (expired);
}

static gboolean
no_reverts_pending (gpointer data)
{
  return pending_reverts == 0;
}

/* Waits until the backend has reverted every write (and the window has seen it). */
static void
flush_reverts (void)
{
  iterate_until (no_reverts_pending, NULL);
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

/* ----------------------------------------------------------------- tests */

static void
test_failing_backend (void)
{
  RpeWindow *window = rpe_window_new (NULL);
  RpeExplorerState *state = rpe_window_get_state (window);
  guint before;
  g_autofree char *cmap = NULL;

  backend_failing = TRUE;
  gtk_window_present (GTK_WINDOW (window));
  for (int v = 1; v <= RPE_WINDOW_N_VIEWS; v++)
    {
      before = reverts_done;
      gtk_widget_activate_action (GTK_WIDGET (window), "win.view", "i", v);
      flush_reverts ();
      g_assert_cmpint (rpe_window_get_view (window), ==, v - 1);
    }
  for (int v = RPE_WINDOW_N_VIEWS - 1; v >= 0; v--)
    {
      rpe_window_set_view (window, v);   /* what a tab does */
      flush_reverts ();
      g_assert_cmpint (rpe_window_get_view (window), ==, v);
    }
  g_object_set (state, "colormap", "magma", NULL);
  flush_reverts ();
  g_object_get (state, "colormap", &cmap, NULL);
  g_assert_cmpstr (cmap, ==, "magma");

  /* saving writes (and the backend reverts them): nothing moves */
  rpe_window_set_view (window, RPE_WINDOW_VIEW_CURVES);
  before = reverts_done;
  rpe_window_save_state (window);
  flush_reverts ();
  g_assert_cmpuint (reverts_done, >, before);   /* the writes were attempted */
  g_assert_cmpint (rpe_window_get_view (window), ==, RPE_WINDOW_VIEW_CURVES);
  g_clear_pointer (&cmap, g_free);
  g_object_get (state, "colormap", &cmap, NULL);
  g_assert_cmpstr (cmap, ==, "magma");

  gtk_window_destroy (GTK_WINDOW (window));
  backend_failing = FALSE;
  flush_reverts ();
}

typedef struct
{
  int   width;
  int   height;
  char *view;
  char *cmap;
} Saved;

static void
read_saved (Saved *s)
{
  g_autoptr (GSettings) settings = g_settings_new (APPLICATION_ID);

  s->width = g_settings_get_int (settings, "window-width");
  s->height = g_settings_get_int (settings, "window-height");
  s->view = g_settings_get_string (settings, "last-view");
  s->cmap = g_settings_get_string (settings, "colormap");
}

static void
saved_clear (Saved *s)
{
  g_free (s->view);
  g_free (s->cmap);
}

static void
test_quit_and_close (void)
{
  g_autoptr (RpeApplication) app = rpe_application_new ();
  g_autoptr (GError) error = NULL;
  RpeWindow *window;
  Saved quit = { 0 }, close = { 0 };

  g_application_set_flags (G_APPLICATION (app), G_APPLICATION_HANDLES_OPEN | G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  g_assert_no_error (error);
  g_application_activate (G_APPLICATION (app));
  window = RPE_WINDOW (gtk_application_get_active_window (GTK_APPLICATION (app)));
  g_assert_nonnull (window);

  /* Quit */
  gtk_window_set_default_size (GTK_WINDOW (window), 900, 600);
  rpe_window_set_view (window, RPE_WINDOW_VIEW_CURVES);
  g_object_set (rpe_window_get_state (window), "colormap", "cividis", NULL);
  g_action_group_activate_action (G_ACTION_GROUP (app), "quit", NULL);
  read_saved (&quit);
  g_assert_cmpint (quit.width, ==, 900);
  g_assert_cmpint (quit.height, ==, 600);
  g_assert_cmpstr (quit.view, ==, "curves");
  g_assert_cmpstr (quit.cmap, ==, "cividis");
  /* Quit closed the window as Close does (no session open: nothing to ask) */
  g_assert_null (gtk_application_get_windows (GTK_APPLICATION (app)));

  /* Close (Ctrl+W: window.close) */
  g_application_activate (G_APPLICATION (app));
  window = RPE_WINDOW (gtk_application_get_active_window (GTK_APPLICATION (app)));
  g_assert_nonnull (window);
  gtk_window_set_default_size (GTK_WINDOW (window), 1000, 640);
  rpe_window_set_view (window, RPE_WINDOW_VIEW_ATTENTION);
  g_object_set (rpe_window_get_state (window), "colormap", "inferno", NULL);
  gtk_widget_activate_action (GTK_WIDGET (window), "window.close", NULL);
  read_saved (&close);
  g_assert_cmpint (close.width, ==, 1000);
  g_assert_cmpint (close.height, ==, 640);
  g_assert_cmpstr (close.view, ==, "attention");
  g_assert_cmpstr (close.cmap, ==, "inferno");

  /* a new window starts where the last one was left */
  window = rpe_window_new (GTK_APPLICATION (app));
  g_assert_cmpint (rpe_window_get_view (window), ==, RPE_WINDOW_VIEW_ATTENTION);
  {
    int w = 0, h = 0;
    g_autofree char *cmap = NULL;

    gtk_window_get_default_size (GTK_WINDOW (window), &w, &h);
    g_assert_cmpint (w, ==, 1000);
    g_assert_cmpint (h, ==, 640);
    g_object_get (rpe_window_get_state (window), "colormap", &cmap, NULL);
    g_assert_cmpstr (cmap, ==, "inferno");
  }
  gtk_window_destroy (GTK_WINDOW (window));
  saved_clear (&quit);
  saved_clear (&close);
}

static gboolean
window_loaded (gpointer data)
{
  return !rpe_window_is_loading (RPE_WINDOW (data));
}

static void
test_open_files (void)
{
  g_autoptr (RpeApplication) app = rpe_application_new ();
  g_autoptr (GError) error = NULL;
  const char *path = g_getenv ("RPE_DEMO_CHECKPOINT");
  g_autoptr (GFile) file = NULL;
  GList *windows;
  RpeWindow *window = NULL;

  if (path == NULL)
    {
      g_test_skip ("RPE_DEMO_CHECKPOINT is not set");
      return;
    }
  file = g_file_new_for_path (path);
  g_application_set_flags (G_APPLICATION (app), G_APPLICATION_HANDLES_OPEN | G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  g_assert_no_error (error);
  g_application_open (G_APPLICATION (app), &file, 1, "");
  windows = gtk_application_get_windows (GTK_APPLICATION (app));
  g_assert_cmpuint (g_list_length (windows), ==, 1);
  window = RPE_WINDOW (windows->data);
  iterate_until (window_loaded, window);
  {
    g_autofree char *base = g_file_get_basename (file);

    g_assert_nonnull (strstr (gtk_window_get_title (GTK_WINDOW (window)), base));
  }
  g_assert_null (rpe_window_get_message (window));
  g_assert_false (rpe_window_get_from_demo (window));
  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

int
main (int   argc,
      char *argv[])
{
  /* before anything reads settings: this file's backend is the default
   * (g_vfs_get_default registers GIO's extension points) */
  (void) g_vfs_get_default ();
  g_io_extension_point_implement (G_SETTINGS_BACKEND_EXTENSION_POINT_NAME, TEST_TYPE_BACKEND, "rpe-test", 1000);
  g_setenv ("GSETTINGS_BACKEND", "rpe-test", TRUE);
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();

  g_test_add_func ("/ui/desktop/failing-settings", test_failing_backend);
  g_test_add_func ("/ui/desktop/quit-and-close", test_quit_and_close);
  g_test_add_func ("/ui/desktop/open-files", test_open_files);

  return g_test_run ();
}

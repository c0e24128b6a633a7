/* test-ui-nobus.c: the real rpe-studio started without a D-Bus session (Xvfb).
 *
 * A plain X session: no DBUS_SESSION_BUS_ADDRESS, no bus under XDG_RUNTIME_DIR, no
 * GSETTINGS_BACKEND (the program's default choice), XDG_CONFIG_HOME a fresh directory.
 * - The first start prints nothing on stderr, offers the tour (the settings file says so once
 *   the offer is made) and, quit by SIGTERM (as a session ending would), saves its window size.
 * - The settings are then given another window size; a second start prints nothing, opens at
 *   that size (it saves it again on quit) and keeps the tour offered.
 * Every wait is for an event: the window mapped (xdotool search --sync), the settings file
 * written (a file monitor), the process' exit.  Skipped without xdotool or the program. */
#include "config.h"

#include <signal.h>
#include <string.h>

#include <gio/gio.h>
#include <glib/gstdio.h>

#define SCHEMA_GROUP "io/github/rpestudio/RpeStudio"

static char *
program_path (void)
{
  const char *builddir = g_getenv ("G_TEST_BUILDDIR");

  return g_build_filename (builddir != NULL ? builddir : ".", "..", "app", "rpe-studio", NULL);
}

static GSubprocessLauncher *
launcher_for (const char *config,
              const char *runtime)
{
  GSubprocessLauncher *l = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE
                                                      | G_SUBPROCESS_FLAGS_STDERR_PIPE);

  g_subprocess_launcher_unsetenv (l, "DBUS_SESSION_BUS_ADDRESS");
  g_subprocess_launcher_unsetenv (l, "GSETTINGS_BACKEND");
  g_subprocess_launcher_unsetenv (l, "GTK_A11Y");
  g_subprocess_launcher_unsetenv (l, "G_DEBUG");
  g_subprocess_launcher_setenv (l, "XDG_CONFIG_HOME", config, TRUE);
  g_subprocess_launcher_setenv (l, "XDG_RUNTIME_DIR", runtime, TRUE);
  g_subprocess_launcher_setenv (l, "HOME", config, TRUE);
  return l;
}

/* The settings file of the keyfile backend under config. */
static char *
keyfile_path (const char *config)
{
  return g_build_filename (config, "glib-2.0", "settings", "keyfile", NULL);
}

static GKeyFile *
read_settings (const char *config)
{
  g_autofree char *path = keyfile_path (config);
  GKeyFile *kf = g_key_file_new ();

  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, NULL))
    g_clear_pointer (&kf, g_key_file_unref);
  return kf;
}

static gboolean
tour_offered (const char *config)
{
  g_autoptr (GKeyFile) kf = read_settings (config);
  g_autofree char *v = kf != NULL ? g_key_file_get_value (kf, SCHEMA_GROUP, "tour-offered", NULL) : NULL;

  return g_strcmp0 (v, "true") == 0;
}

static int
setting_int (const char *config,
             const char *key)
{
  g_autoptr (GKeyFile) kf = read_settings (config);

  g_assert_nonnull (kf);
  return g_key_file_get_integer (kf, SCHEMA_GROUP, key, NULL);
}

static void
file_changed (GFileMonitor      *monitor,
              GFile             *file,
              GFile             *other,
              GFileMonitorEvent  event,
              gpointer           user_data)
{
  (*(guint *) user_data)++;
}

/* Waits until the settings file says the tour was offered (woken by every change below config). */
static void
wait_tour_offered (const char *config)
{
  g_autofree char *dir = g_build_filename (config, "glib-2.0", "settings", NULL);
  g_autoptr (GFile) file = NULL;
  g_autoptr (GFileMonitor) monitor = NULL;
  guint changes = 0;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  file = g_file_new_for_path (dir);
  monitor = g_file_monitor_directory (file, G_FILE_MONITOR_NONE, NULL, NULL);
  g_assert_nonnull (monitor);
  g_signal_connect (monitor, "changed", G_CALLBACK (file_changed), &changes);
  while (!tour_offered (config))
    g_main_context_iteration (NULL, TRUE);
}

/* Waits until a visible window of the process is mapped (by its process id: other tests may
 * show windows of the same name on the display). */
static void
wait_window (GSubprocess *proc)
{
  g_autofree char *xdotool = g_find_program_in_path ("xdotool");
  const char *pid = g_subprocess_get_identifier (proc);
  int status = -1;

  g_assert_nonnull (pid);
  /* xdotool's search fails when a window of another test on the display goes away while it
   * reads that window's properties (BadWindow): search again while the program runs */
  for (guint attempt = 0;; attempt++)
    {
      g_assert_true (g_spawn_sync (
        NULL, (char *[]) { xdotool, "search", "--sync", "--onlyvisible", "--pid", (char *) pid, NULL }, NULL,
        G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL, NULL, &status, NULL));
      if (g_spawn_check_wait_status (status, NULL))
        return;
      g_main_context_iteration (NULL, FALSE);
      g_assert_nonnull (g_subprocess_get_identifier (proc)); /* still running (NULL once it has exited) */
      g_assert_cmpuint (attempt, <, 100);
    }
}

/* Ends the program as a session would (SIGTERM), waits for it and returns its stderr. */
static char *
quit_program (GSubprocess *proc)
{
  g_autofree char *out = NULL;
  char *err = NULL;
  g_autoptr (GError) error = NULL;

  g_subprocess_send_signal (proc, SIGTERM);
  g_assert_true (g_subprocess_communicate_utf8 (proc, NULL, NULL, &out, &err, &error));
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (proc));
  g_assert_cmpint (g_subprocess_get_exit_status (proc), ==, 0);
  return err;
}

static void
test_two_starts (void)
{
  g_autofree char *program = program_path ();
  g_autofree char *xdotool = g_find_program_in_path ("xdotool");
  g_autofree char *config = NULL, *runtime = NULL, *err = NULL;
  g_autoptr (GSubprocessLauncher) launcher = NULL;
  g_autoptr (GSubprocess) proc = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GKeyFile) kf = NULL;
  g_autofree char *path = NULL;

  if (xdotool == NULL || !g_file_test (program, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("needs xdotool and the built rpe-studio");
      return;
    }
  config = g_dir_make_tmp ("rpe-nobus-config-XXXXXX", &error);
  g_assert_no_error (error);
  runtime = g_dir_make_tmp ("rpe-nobus-runtime-XXXXXX", &error);
  g_assert_no_error (error);
  launcher = launcher_for (config, runtime);

  /* first start: the tour is offered, the window's size saved on quit, nothing printed */
  proc = g_subprocess_launcher_spawn (launcher, &error, program, NULL);
  g_assert_no_error (error);
  wait_window (proc);
  wait_tour_offered (config);
  err = quit_program (proc);
  g_test_message ("first start, stderr: '%s'", err);
  g_assert_cmpstr (err, ==, "");
  g_clear_object (&proc);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (setting_int (config, "window-width"), >, 0);
  g_assert_cmpint (setting_int (config, "window-height"), >, 0);

  /* another size in the settings, as a user's resize would have left it */
  kf = read_settings (config);
  g_assert_nonnull (kf);
  g_key_file_set_integer (kf, SCHEMA_GROUP, "window-width", 1000);
  g_key_file_set_integer (kf, SCHEMA_GROUP, "window-height", 640);
  path = keyfile_path (config);
  g_assert_true (g_key_file_save_to_file (kf, path, NULL));

  /* second start: opens at that size (saves it back unchanged), the tour stays offered */
  proc = g_subprocess_launcher_spawn (launcher, &error, program, NULL);
  g_assert_no_error (error);
  wait_window (proc);
  err = quit_program (proc);
  g_test_message ("second start, stderr: '%s'", err);
  g_assert_cmpstr (err, ==, "");
  g_assert_cmpint (setting_int (config, "window-width"), ==, 1000);
  g_assert_cmpint (setting_int (config, "window-height"), ==, 640);
  g_assert_true (tour_offered (config));

  g_assert_cmpint (g_remove (path), ==, 0);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ui/nobus/two-starts", test_two_starts);
  return g_test_run ();
}

/* main.c: rpe-studio, the GTK application. */
#include "config.h"

#include <glib/gi18n.h>
#include <locale.h>

#include "rpe-alloc.h"
#include "rpe-application.h"

/* Without a session bus (a plain X session) dconf cannot write: every start would warn and nothing
 * would be remembered (window size, the tour offered), and every file chooser would warn too.
 * Then GLib's keyfile settings backend keeps the settings of the process (ours and GTK's) in the
 * user's config directory (~/.config/glib-2.0/settings/keyfile).  A backend the user chose is
 * kept; a bus is looked for without starting one.  Without a bus there is no accessibility bus
 * either (it is found through the session bus): GTK would warn at every start that it cannot
 * reach it, so its AT-SPI backend is left off too (unless the user chose one with GTK_A11Y). */
static void
choose_settings_backend (void)
{
  const char *runtime = g_getenv ("XDG_RUNTIME_DIR");
  g_autofree char *bus = runtime != NULL && *runtime != '\0' ? g_build_filename (runtime, "bus", NULL) : NULL;

  if (g_getenv ("DBUS_SESSION_BUS_ADDRESS") != NULL || (bus != NULL && g_file_test (bus, G_FILE_TEST_EXISTS)))
    return;
  g_setenv ("GSETTINGS_BACKEND", "keyfile", FALSE);
  g_setenv ("GTK_A11Y", "none", FALSE);
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr (RpeApplication) app = NULL;

  /* under a memory limit too small for OpenBLAS's threads: again, with one */
  rpe_os_memory_fit_threads (argv);
  /* GTK would call setlocale () in gtk_init; the catalogue must be bound before the first _(). */
  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);

  choose_settings_backend ();
  g_set_application_name (_("RPE Studio"));
  app = rpe_application_new ();
  return g_application_run (G_APPLICATION (app), argc, argv);
}

/* main.c: rpe-studio, the GTK application. */
#include "config.h"

#include <glib/gi18n.h>
#include <locale.h>

#include "rpe-alloc.h"
#include "rpe-application.h"

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

  g_set_application_name (_("RPE Studio"));
  app = rpe_application_new ();
  return g_application_run (G_APPLICATION (app), argc, argv);
}

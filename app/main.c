/* main.c: rpe-studio, the GTK application. */
#include "config.h"

#include <glib/gi18n.h>

#include "rpe-application.h"

int
main (int   argc,
      char *argv[])
{
  g_autoptr (RpeApplication) app = NULL;

  g_set_application_name ("RPE Studio");
  app = rpe_application_new ();
  return g_application_run (G_APPLICATION (app), argc, argv);
}

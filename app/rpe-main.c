/* rpe-main.c: `rpe`, the headless command-line tool (its commands: app/cli/). */
#include "config.h"

#include <glib/gi18n.h>
#include <locale.h>
#include <signal.h>

#include "rpe-alloc.h"
#include "rpe-cli.h"

int
main (int argc, char *argv[])
{
  /* under a memory limit too small for OpenBLAS's threads: again, with one */
  rpe_os_memory_fit_threads (argv);
  setlocale (LC_ALL, "");
  /* Numbers are printed and parsed the C way whatever the locale. */
  setlocale (LC_NUMERIC, "C");
  bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);
  /* over `ulimit -f`, write () fails with EFBIG (reported, temporary file removed) instead of
   * the process dying of SIGXFSZ */
  signal (SIGXFSZ, SIG_IGN);
  return rpe_cli_main (argc, argv);
}

/* rpe-cli-main.c: `rpe`, the headless command-line tool over the numeric core: the commands,
 * `rpe --help` and `rpe help`.
 *
 * Scripts depend on this interface: options are only ever added, never changed.
 * Exit status: 0 success, 2 bad usage or bad input, 1 any other failure.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib/gi18n.h>

#include "rpe-publish.h"
#include "rpe-blas-notice.h"
#include "rpe-file.h"
#include "rpe-text.h"

#include "rpe-cli.h"

#define EXIT_USAGE 2

const RpeCliCommand *const rpe_cli_commands[] = {
  &rpe_cli_info_command, &rpe_cli_compute_command, &rpe_cli_curves_command, &rpe_cli_export_command,
  &rpe_cli_fit_command,  &rpe_cli_bench_command,   &rpe_cli_help_command,   NULL,
};

static void
print_usage (FILE *f)
{
  int width = 0;

  fprintf (f, "%s", _("Usage:\n  rpe [GLOBAL OPTION…] COMMAND [SUBCOMMAND] [OPTION…]\n\n"));
  fprintf (f, "%s",
           _("The numbers and figures of RPE Studio from the command line: relative positional encodings\n"
             "(SPE sine and conv, LRPE, FastRPB, relative logits) of a checkpoint or of random\n"
             "parameters, as .npy arrays, CSV curves and publication figures.\n\n"));
  fprintf (f, "%s", _("Commands:\n"));
  for (guint i = 0; rpe_cli_commands[i] != NULL; i++)
    width = MAX (width, (int) strlen (rpe_cli_commands[i]->name));
  for (guint i = 0; rpe_cli_commands[i] != NULL; i++)
    fprintf (f, "  %-*s  %s\n", width, rpe_cli_commands[i]->name, _(rpe_cli_commands[i]->summary));
  fprintf (f, "\n%s\n", _(rpe_cli_global_group.title));
  for (const RpeCliOption *o = rpe_cli_global_group.options; o->name != NULL; o++)
    {
      g_autofree char *left = g_strdup_printf ("--%s=%s", o->name, o->arg_name);

      fprintf (f, "  %-22s %s\n", left, _(o->help));
    }
  fprintf (f, "  %-22s %s\n", "--version", _("Print the version and exit"));
  fprintf (f, "%s", _("\nExample:\n  rpe compute attention --checkpoint demo --length 512 -o attention.npy\n\n"));
  fprintf (f, "%s",
           _("Run 'rpe help COMMAND' (the same as 'rpe COMMAND --help') for what a command does, its\n"
             "main options and an example; 'rpe COMMAND SUBCOMMAND --help-all' lists every option.\n"
             "Exit status: 0 success, 2 bad usage or bad input, 1 any other failure.\n"));
}

/* `rpe help [COMMAND [SUBCOMMAND]]`: the help of `rpe COMMAND [SUBCOMMAND] --help`. */
static int
run_help (int argc, char **argv)
{
  const RpeCliCommand *command;
  int                  status;

  if (!rpe_cli_parse (&rpe_cli_help_command, &rpe_cli_help_command.leaves[0], NULL, NULL, NULL, &argc, &argv, &status))
    return status;
  if (argc < 2)
    {
      print_usage (stdout);
      return 0;
    }
  if (argc > 3 || (command = rpe_cli_command_lookup (argv[1])) == NULL)
    {
      fprintf (stderr, _("rpe help: usage: rpe help [COMMAND [SUBCOMMAND]] (a command of 'rpe --help')\n"));
      return EXIT_USAGE;
    }
  {
    /* the command's own --help, so that the two can never differ */
    char *args[4] = { argv[1], argc > 2 ? argv[2] : (char *) "--help", argc > 2 ? (char *) "--help" : NULL, NULL };

    return command->run (argc > 2 ? 3 : 2, args);
  }
}

static const RpeCliLeaf help_leaves[] = {
  { NULL, N_("Show the help of a command"),
    N_("Shows what a command does, its main options and an example: 'rpe help COMMAND' is 'rpe COMMAND\n"
       "--help' and 'rpe help COMMAND SUBCOMMAND' is 'rpe COMMAND SUBCOMMAND --help'.  Without a\n"
       "command, the list of commands ('rpe --help')."),
    "help compute attention", 0, 0, NULL, NULL, NULL, NULL },
};

const RpeCliCommand rpe_cli_help_command = {
  .name = "help",
  .summary = N_("Show the help of a command"),
  .args = "[COMMAND [SUBCOMMAND]]",
  .leaves = help_leaves,
  .n_leaves = G_N_ELEMENTS (help_leaves),
  .run = run_help,
};

int
rpe_cli_main (int argc, char **argv)
{
  const RpeCliCommand *command;
  int                  status;

  /* no output may overwrite a file this command reads */
  rpe_file_track_inputs (TRUE);
  /* the readers' findings end with this tool's options */
  rpe_cli_remedy_install ();

  if (!rpe_cli_parse_global (&argc, &argv))
    return EXIT_USAGE;
  if (argc < 2)
    {
      print_usage (stderr);
      return EXIT_USAGE;
    }
  if (g_str_equal (argv[1], "--help") || g_str_equal (argv[1], "-h") || g_str_equal (argv[1], "-?")
      || g_str_equal (argv[1], "--help-all"))
    {
      print_usage (stdout);
      return 0;
    }
  if (g_str_equal (argv[1], "--version"))
    {
      printf ("rpe %s\n", PACKAGE_VERSION);
      return 0;
    }
  command = rpe_cli_command_lookup (argv[1]);
  if (command == NULL)
    {
      fprintf (stderr, _("rpe: unknown command '%s'\n"), argv[1]);
      print_usage (stderr);
      return EXIT_USAGE;
    }
  {
    /* once: OpenBLAS runs generic kernels on this CPU (rpe-blas-notice.h) */
    g_autofree char *note = rpe_blas_notice_take ("rpe", FALSE);

    if (note != NULL)
      fprintf (stderr, _("rpe: note: %s\n"), note);
  }
  /* every file the command writes waits for the others: all are put in place when the command
   * succeeds, none when it fails (a later output that cannot be written leaves the earlier ones
   * as they were) */
  rpe_publish_set_begin ();
  status = command->run (argc - 1, argv + 1);
  rpe_cli_forget_model_print ();
  if (status == 0)
    {
      char *failed = NULL;
      int   err = rpe_publish_set_commit (&failed);

      if (err != 0)
        {
          fprintf (stderr, _("rpe %s: %s: cannot replace the file: %s\n"), argv[1], failed != NULL ? failed : "",
                   g_strerror (err));
          status = 1;
        }
      free (failed);
    }
  else
    rpe_publish_set_abort ();
  /* the figure text's Pango font map and its font caches, for a leak checker's clean exit */
  if (command == &rpe_cli_export_command)
    rpe_text_release_fonts ();
  return status;
}

/* rpe-cli-export.c: `rpe export` */
#include "config.h"

#include <stdio.h>

#include "rpe-cli.h"

int
rpe_cli_export (int argc, char **argv)
{
  fprintf (stderr, "rpe export: not implemented yet\n");
  return 1;
}

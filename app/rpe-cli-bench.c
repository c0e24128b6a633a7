/* rpe-cli-bench.c: `rpe bench` */
#include "config.h"

#include <stdio.h>

#include "rpe-cli.h"

int
rpe_cli_bench (int argc, char **argv)
{
  fprintf (stderr, "rpe bench: not implemented yet\n");
  return 1;
}

#include "config.h"

#include <stdio.h>

int
main (int argc, char **argv)
{
  fprintf (stderr, "rpe: not implemented yet\n");
  return 1;
}

#include "config.h"

#include "rpe-spe.h"

/* TODO: not implemented yet. */

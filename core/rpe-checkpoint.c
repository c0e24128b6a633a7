#include "config.h"

#include "rpe-checkpoint.h"

/* TODO: not implemented yet. */

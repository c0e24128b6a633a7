#include "config.h"

#include "rpe-npy.h"

/* TODO: not implemented yet. */

#include "config.h"

#include "rpe-tensor.h"

/* TODO: not implemented yet. */

#include "config.h"

#include "rpe-attention.h"

/* TODO: not implemented yet. */

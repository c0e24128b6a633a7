#include "config.h"

#include "rpe-safetensors.h"

/* TODO: not implemented yet. */

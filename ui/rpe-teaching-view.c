#include "config.h"

/* TODO: not implemented yet. */

/* rpe-test-utils.h: shared helpers for the GLib tests. */
#pragma once

#include <glib.h>
#include <stddef.h>

/* max |a - b| / max(max |b|, floor): a relative error against a reference. */
double rpe_test_max_rel_err (const float  *a,
                             const double *ref,
                             size_t        n,
                             double        floor);
/* max |a - b| */
double rpe_test_max_abs_err (const float  *a,
                             const double *ref,
                             size_t        n);
/* A temporary directory for the test, removed at exit (path owned by the helper). */
const char *rpe_test_tmpdir (void);

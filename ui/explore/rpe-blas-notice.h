/* rpe-blas-notice.h: the one-time notice when OpenBLAS runs generic kernels on a CPU that has
 * AVX2 (rpe-kernels.h decides; this phrases it), for `rpe` and the window alike.
 *
 * "Once" means once per program, OpenBLAS configuration and CPU: the first time it is due, a
 * stamp is written under the user's cache directory (rpe-studio/blas-notice-PROGRAM), and later
 * runs with the same stamp stay quiet; within a process it is given at most once. */
#pragma once

#include <glib.h>

#include "rpe-kernels.h"

/* The notice for info, or NULL when none is due: brief (one line, for a toast) or full (which
 * kernels run, why it matters and what to do).  Translated; caller frees. */
char *rpe_blas_notice_text (const RpeKernelInfo *info,
                            gboolean             brief);

/* The notice for this process (rpe_kernel_info) if due and not given yet to `program`
 * ("rpe", "rpe-studio"), else NULL.  Caller frees. */
char *rpe_blas_notice_take (const char *program,
                            gboolean    brief);

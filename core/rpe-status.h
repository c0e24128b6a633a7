/* rpe-status.h: status codes, cancellation and progress for the numeric core.
 *
 * The core never prints and never aborts: every fallible call returns an
 * RpeStatus.  Long calls take an RpeMonitor (NULL is allowed) through which the
 * caller can cancel and observe progress.
 */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum
{
  RPE_OK = 0,
  RPE_ERROR_INVALID_ARGUMENT, /* a size, index or option is out of range */
  RPE_ERROR_OVERFLOW,         /* a size computation does not fit in size_t */
  RPE_ERROR_NO_MEMORY,        /* allocation failed, or the request exceeds the memory budget */
  RPE_ERROR_CANCELLED,        /* the monitor's cancel flag was raised */
  RPE_ERROR_NOT_FINITE,       /* an input holds NaN or infinity */
  RPE_ERROR_IO,               /* reading or writing a file failed */
  RPE_ERROR_FORMAT,           /* a file is malformed */
  RPE_ERROR_UNSUPPORTED,      /* a well-formed input uses something we do not support */
  RPE_ERROR_NOT_FOUND,        /* a tensor or module is missing */
  RPE_ERROR_INTERNAL,         /* a library (FFTW, ...) failed */
  RPE_ERROR_SYSTEM_MEMORY,    /* the operating system has no more memory for this process: its
                                 limit (ulimit -v / -d) or the machine's memory, not the budget */
  RPE_ERROR_RANGE,            /* finite inputs whose result overflows (values too large) */
  RPE_ERROR_DEGENERATE,       /* an input that makes the result meaningless (a zero vector, a
                                 target of zero norm) */
  RPE_ERROR_NO_SPACE,         /* an output larger than the free space of its disk (the system's
                                 state, not bad input: `rpe` exits 1, as for a full disk) */
} RpeStatus;

const char *rpe_status_to_string (RpeStatus status);

/* The status of a write, flush or close that failed with `saved_errno`: a full disk, a quota or
 * the process's file size limit (ENOSPC, EDQUOT, EFBIG: the system's state, as an output found
 * too large for the free space before it is written) is RPE_ERROR_NO_SPACE, anything else
 * RPE_ERROR_IO.  Every writer (arrays, figures, CSV, GIF, sessions) classifies its errors here. */
RpeStatus rpe_status_for_write_errno (int saved_errno);

/* Progress: fraction in [0, 1].  Called from the computing thread. */
typedef void (*RpeProgressFunc) (double    fraction,
                                 void     *user_data);

typedef struct
{
  const atomic_int *cancel;     /* nonzero means "stop as soon as you can"; may be NULL */
  RpeProgressFunc   progress;   /* may be NULL */
  void             *user_data;
} RpeMonitor;

static inline bool
rpe_monitor_cancelled (const RpeMonitor *monitor)
{
  return monitor != NULL && monitor->cancel != NULL
         && atomic_load_explicit (monitor->cancel, memory_order_relaxed) != 0;
}

static inline void
rpe_monitor_progress (const RpeMonitor *monitor,
                      double            fraction)
{
  if (monitor != NULL && monitor->progress != NULL)
    monitor->progress (fraction < 0 ? 0 : fraction > 1 ? 1 : fraction, monitor->user_data);
}

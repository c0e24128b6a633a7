/* rpe-parallel.h: a tiny fork-join helper for the parts of the core that BLAS
 * and FFTW do not thread themselves.
 *
 * Work is always split statically by the caller (worker w of n takes its own
 * share), so results never depend on timing; callers that must give the same
 * result for any number of workers split along independent outputs only.
 */
#pragma once

#include <stddef.h>

/* Worker `worker` (0 .. n_workers-1) of a rpe_parallel_run call. */
typedef void (*RpeParallelFunc) (size_t  worker,
                                 size_t  n_workers,
                                 void   *data);

/* The number of workers to use: the RPE_NUM_THREADS environment variable if set
 * (1 .. 256), else the number of online processors (at least 1). */
size_t rpe_parallel_threads (void);

/* Runs func on n_workers workers (worker 0 on the calling thread) and waits for
 * all of them.  While it runs (n_workers > 1), OpenBLAS uses one thread, so BLAS calls
 * inside func do not oversubscribe the cores (see rpe-parallel.c).  If a thread cannot be started, its share runs on the calling
 * thread afterwards, so every worker index runs exactly once. */
void   rpe_parallel_run (size_t           n_workers,
                         RpeParallelFunc  func,
                         void            *data);

/* OpenBLAS at one thread for the rest of the process, and its thread pool stopped (the
 * pthread build starts the pool when the library loads; each idle pool thread then spins in
 * sched_yield for about 0.1 s, 2^28 clock ticks, before it sleeps, taking a core from the
 * process's first parallel region).  For commands whose BLAS calls all run inside
 * rpe_parallel_run regions, where OpenBLAS is at one thread anyway: the regions then no
 * longer change OpenBLAS's thread count, which would restart the pool.  Call it before any
 * parallel region runs. */
void   rpe_parallel_blas_serial (void);

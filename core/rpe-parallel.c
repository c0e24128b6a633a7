/* rpe-parallel.c: fork-join over pthreads (see rpe-parallel.h). */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include <cblas.h>

#include "rpe-parallel.h"

#define MAX_WORKERS 256

typedef struct
{
  RpeParallelFunc func;
  void           *data;
  size_t          worker, n_workers;
} Job;

size_t
rpe_parallel_threads (void)
{
  const char *env = getenv ("RPE_NUM_THREADS");
  long n;

  if (env != NULL && *env != '\0')
    {
      char *end;

      n = strtol (env, &end, 10);
      if (*end == '\0' && n >= 1 && n <= MAX_WORKERS)
        return (size_t) n;
    }
  n = sysconf (_SC_NPROCESSORS_ONLN);
  if (n < 1)
    return 1;
  return n > MAX_WORKERS ? MAX_WORKERS : (size_t) n;
}

static void *
job_main (void *arg)
{
  Job *job = arg;

  job->func (job->worker, job->n_workers, job->data);
  return NULL;
}

/* Thread policy: OpenBLAS's own threads and ours would oversubscribe the cores (two of ours
 * each calling a BLAS that wakes its pool, whose idle workers then spin in sched_yield).  While
 * any parallel region runs, OpenBLAS is set to one thread, so the BLAS calls made inside the
 * region run on the worker that makes them; the previous count is restored when the last
 * region ends.  Outside our regions OpenBLAS threads its large calls itself. */
static pthread_mutex_t blas_lock = PTHREAD_MUTEX_INITIALIZER;
static int blas_depth, blas_saved;

static void
blas_region_enter (void)
{
  pthread_mutex_lock (&blas_lock);
  if (blas_depth++ == 0)
    {
      blas_saved = openblas_get_num_threads ();
      if (blas_saved > 1)
        openblas_set_num_threads (1);
    }
  pthread_mutex_unlock (&blas_lock);
}

static void
blas_region_leave (void)
{
  pthread_mutex_lock (&blas_lock);
  if (--blas_depth == 0 && blas_saved > 1)
    openblas_set_num_threads (blas_saved);
  pthread_mutex_unlock (&blas_lock);
}

void
rpe_parallel_run (size_t           n_workers,
                  RpeParallelFunc  func,
                  void            *data)
{
  pthread_t threads[MAX_WORKERS];
  Job jobs[MAX_WORKERS];
  int started[MAX_WORKERS];

  if (n_workers == 0)
    return;
  if (n_workers > MAX_WORKERS)
    n_workers = MAX_WORKERS;
  if (n_workers == 1)
    {
      func (0, 1, data);
      return;
    }
  blas_region_enter ();
  for (size_t w = 1; w < n_workers; w++)
    {
      jobs[w] = (Job) { func, data, w, n_workers };
      started[w] = pthread_create (&threads[w], NULL, job_main, &jobs[w]) == 0;
    }
  func (0, n_workers, data);
  for (size_t w = 1; w < n_workers; w++)
    {
      if (started[w])
        pthread_join (threads[w], NULL);
      else
        func (w, n_workers, data);
    }
  blas_region_leave ();
}

void
rpe_parallel_blas_serial (void)
{
  /* blas_thread_shutdown_ joins the pool (OpenBLAS calls it itself before a fork); any later
   * openblas_set_num_threads or threaded call would start it again, hence one thread first.
   * Looked up at run time: OpenBLAS's OpenMP build and other BLAS lack it. */
  int (*shutdown) (void) = (int (*) (void)) dlsym (RTLD_DEFAULT, "blas_thread_shutdown_");

  pthread_mutex_lock (&blas_lock);
  if (blas_depth == 0)
    {
      openblas_set_num_threads (1);
      if (shutdown != NULL)
        shutdown ();
    }
  pthread_mutex_unlock (&blas_lock);
}

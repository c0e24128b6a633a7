/* rpe-alloc.h: overflow-checked size arithmetic, aligned buffers and the memory budget.
 *
 * Every size the core computes from user input goes through rpe_size_mul /
 * rpe_size_add, and every buffer whose size comes from input is checked against
 * the memory budget (rpe_budget_check) before it is allocated.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpe-status.h"

static inline bool
rpe_size_mul (size_t a, size_t b, size_t *out)
{
  return !__builtin_mul_overflow (a, b, out);
}

static inline bool
rpe_size_add (size_t a, size_t b, size_t *out)
{
  return !__builtin_add_overflow (a, b, out);
}

/* Product of n sizes; false on overflow. */
bool rpe_size_prod (size_t *out, size_t n, const size_t *dims);

/* Convenience: bytes = a * b * c * d * elem (any factor may be 1). RPE_ERROR_OVERFLOW on overflow. */
RpeStatus rpe_size_bytes (size_t *out, size_t elem, size_t a, size_t b, size_t c, size_t d);

/* The memory budget, in bytes: the most one computation may hold at once.
 * Default: the environment variable RPE_MEMORY_BUDGET if set and valid, else
 * 3/4 of physical memory.  rpe_budget_set (0) restores the default. */
size_t rpe_budget_default (void);
/* "512M", "2G", "1.5GiB", "1048576", "50%" (of physical memory) -> bytes; false if malformed. */
bool   rpe_budget_parse (const char *text,
                         size_t     *bytes);
size_t rpe_budget_get (void);
void   rpe_budget_set (size_t bytes);
size_t rpe_physical_memory (void);

/* RPE_OK if `bytes` fits in the budget, RPE_ERROR_NO_MEMORY otherwise.  Inside a
 * budget scope, `bytes` must fit next to what the scope already holds, and
 * under the operating system's limit as it was when the scope began
 * (RPE_ERROR_SYSTEM_MEMORY otherwise). */
RpeStatus rpe_budget_check (size_t bytes);

/* The operating system's limit on this process's memory, apart from the budget:
 * RLIMIT_AS against the address space in use and RLIMIT_DATA against the data
 * in use (/proc/self/statm).  Libraries that abort or spin when the system
 * refuses memory (GLib, json-glib, OpenBLAS) are called only after a check.
 *
 * rpe_os_memory_headroom: the room left (SIZE_MAX when no limit is set).
 * rpe_os_memory_check: RPE_OK if `bytes` more fit with a margin for what is
 * allocated uncounted, else RPE_ERROR_SYSTEM_MEMORY.
 * rpe_os_memory_check_compute: the same, plus, until they exist, the room
 * OpenBLAS's work buffers will take on the first product (about 130 MiB for
 * each thread that runs one; without that room OpenBLAS retries forever
 * inside the call).  rpe_alloc calls it outside budget scopes, so every
 * computation is refused with RPE_ERROR_SYSTEM_MEMORY before its first
 * product when the limit cannot hold it. */
/* For programs, first thing in main: under such a limit that cannot hold
 * OpenBLAS's buffers for all its threads (its thread pool takes one each as it
 * starts, before main; a thread that cannot get it retries forever, and the
 * process then hangs at exit), runs the program again (/proc/self/exe, argv)
 * with one thread: OPENBLAS_NUM_THREADS=1 and RPE_NUM_THREADS=1, marked by
 * RPE_MEMORY_LIMIT_SERIAL=1 so that it happens once.  Returns when no limit
 * is set, the room suffices, the threads are one already, or it cannot. */
void      rpe_os_memory_fit_threads (char **argv);
size_t    rpe_os_memory_headroom (void);
RpeStatus rpe_os_memory_check (size_t bytes);
/* What a check would still let through (in a budget scope, the scope's room
 * less what it holds); SIZE_MAX when no limit is set. */
size_t    rpe_os_memory_usable (void);
RpeStatus rpe_os_memory_check_compute (size_t bytes);

/* Budget scopes: ONE budget for everything a file makes us hold.
 *
 * Between rpe_budget_scope_begin and rpe_budget_scope_end (per thread; scopes
 * nest, the outermost one counts), every rpe_alloc on this thread is charged to
 * the scope until it is rpe_free'd, and rpe_budget_check / rpe_alloc refuse
 * what would take the scope's live total over the budget.  Memory that is not
 * rpe_alloc'd (names, tables, parser nodes) is charged with rpe_budget_charge,
 * which is never given back before the scope ends.  The file readers open a
 * scope around each read, so the file's bytes, every member, every tensor and
 * every derived structure share the budget, whatever their number. */
void      rpe_budget_scope_begin (void);
void      rpe_budget_scope_end   (void);
/* Charges `bytes` of memory the scope holds outside rpe_alloc; RPE_ERROR_NO_MEMORY
 * (and nothing charged) if it would not fit.  Outside a scope: rpe_budget_check. */
RpeStatus rpe_budget_charge      (size_t bytes);
/* Bytes the current scope holds (0 outside a scope). */
size_t    rpe_budget_scope_used  (void);

/* 64-byte aligned allocation (FFTW/SIMD friendly), checked against the budget
 * (RPE_ERROR_NO_MEMORY) and the system's limit (RPE_ERROR_SYSTEM_MEMORY, also
 * when the system refuses the block).  Returns NULL and sets *status on
 * overflow or either refusal.  Free with rpe_free (NULL-safe). */
void *rpe_alloc (size_t count, size_t elem_size, RpeStatus *status);
void *rpe_alloc0 (size_t count, size_t elem_size, RpeStatus *status);
void  rpe_free (void *ptr);
/* The bytes of the blocks rpe_alloc gave out outside budget scopes and not yet rpe_free'd, in
 * the whole process: what is held already when a request is checked (`rpe` adds it to every
 * request it checks, so that parameters, inputs and codes made earlier count beside it). */
size_t rpe_alloc_held (void);

/* True if every value is finite. */
bool rpe_all_finite_f (const float *x, size_t n);
bool rpe_all_finite_d (const double *x, size_t n);

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

/* RPE_OK if `bytes` fits in the budget, RPE_ERROR_NO_MEMORY otherwise. */
RpeStatus rpe_budget_check (size_t bytes);

/* 64-byte aligned allocation (FFTW/SIMD friendly), checked against the budget.
 * Returns NULL and sets *status on overflow, over-budget or allocation failure.
 * Free with rpe_free (NULL-safe). */
void *rpe_alloc (size_t count, size_t elem_size, RpeStatus *status);
void *rpe_alloc0 (size_t count, size_t elem_size, RpeStatus *status);
void  rpe_free (void *ptr);

/* True if every value is finite. */
bool rpe_all_finite_f (const float *x, size_t n);
bool rpe_all_finite_d (const double *x, size_t n);

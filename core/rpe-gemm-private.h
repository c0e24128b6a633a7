/* rpe-gemm-private.h: the core's own single-precision matrix product (private).
 *
 * For the products whose speed must not depend on which kernels OpenBLAS picks for the CPU
 * (its generic Prescott kernels on CPUs it does not recognise run sgemm at about a quarter of
 * the rate): the sine encoding, the conv gate term, the causal linear attention's chunks.
 *
 *   c[i ldc + j] = alpha sum_{t < k} A(i, t) b[t ldb + j]   (+ c[i ldc + j] with accumulate)
 *   A(i, t) = a[i ars + t acs]   (row-major A: ars = lda, acs = 1; A^T stored: ars = 1, acs = lda)
 *
 * Each element is summed in one accumulator in the order t = 0, 1, ..., k - 1, then scaled by
 * alpha (and added to c).  Its value therefore depends only on row i of A, column j of B, k,
 * alpha and the build that runs: not on m, n, the element's place in its register tile, the
 * caller's blocking or thread count.  Slabs of rows or columns give the whole call's values bit
 * for bit.  The AVX-512 and AVX2 builds do every step as one fused multiply-add (explicit
 * intrinsics) and give the same bits as each other; the generic build (any CPU, vector
 * extensions, compiled without contraction) multiplies and adds with two roundings.
 *
 * RPE_GEMM_KERNEL=generic|avx2 in the environment lowers the choice (tests run every build
 * the machine has). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef enum
{
  RPE_GEMM_GENERIC,
  RPE_GEMM_AVX2,     /* x86-64 with AVX2 and FMA */
  RPE_GEMM_AVX512,   /* x86-64 with AVX-512F */
} RpeGemmIsa;

/* The build this CPU runs (RPE_GEMM_KERNEL read at each call). */
RpeGemmIsa  _rpe_gemm_isa (void);
/* "avx512", "avx2" or "generic" */
const char *_rpe_gemm_isa_name (RpeGemmIsa isa);
/* Whether this build and this CPU have isa. */
bool        _rpe_gemm_isa_available (RpeGemmIsa isa);

/* The product above through _rpe_gemm_isa ()'s build. */
void _rpe_gemm (size_t       m,
                size_t       n,
                size_t       k,
                float        alpha,
                const float *a,
                size_t       ars,
                size_t       acs,
                const float *b,
                size_t       ldb,
                bool         accumulate,
                float       *c,
                size_t       ldc);

/* The same through a given build (which must be available). */
void _rpe_gemm_isa_run (RpeGemmIsa   isa,
                        size_t       m,
                        size_t       n,
                        size_t       k,
                        float        alpha,
                        const float *a,
                        size_t       ars,
                        size_t       acs,
                        const float *b,
                        size_t       ldb,
                        bool         accumulate,
                        float       *c,
                        size_t       ldc);

/* rpe-kernels.h: which kernels this process runs, OpenBLAS's and the core's own.
 *
 * OpenBLAS (DYNAMIC_ARCH builds such as Debian's) picks its kernels for the CPU when it loads;
 * a release that does not recognise the CPU falls back to a generic core (Prescott: SSE3, no
 * AVX) and runs its products several times slower than it could.  The core's hot paths run on
 * its own kernels (chosen at run time, the same on every BLAS), but what is left on BLAS
 * (reference paths, fits, some maps) is slower there.  rpe_kernel_info reports both, and whether
 * a notice is due: the CPU has AVX2 and FMA but OpenBLAS runs a core without AVX2 kernels.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef struct
{
  char        blas_core[64];     /* openblas_get_corename (), e.g. "Haswell", "Prescott" */
  char        blas_config[256];  /* openblas_get_config () */
  bool        cpu_avx2;          /* the CPU has AVX2 and FMA (x86-64) */
  bool        cpu_avx512;        /* the CPU has AVX-512 F, BW, DQ and VL (x86-64) */
  bool        blas_slow_core;    /* the CPU has AVX2 + FMA, OpenBLAS's core has no AVX2 kernels */
  const char *blas_suggest;      /* a core to try through OPENBLAS_CORETYPE when blas_slow_core
                                    ("SkylakeX" with AVX-512, else "Haswell"), else NULL */
  /* the core's own kernels: "avx512", "avx2" or "generic" */
  const char *gemm;              /* products of the sine encoding, conv gate, causal linear */
  const char *attention;         /* dense attention rows and empirical templates */
  const char *linear;            /* fused linear attention */
  const char *softmax;           /* row softmax and exp */
  const char *rng;               /* normal draws */
} RpeKernelInfo;

/* Fills info.  RPE_FAKE_BLAS_CORE in the environment replaces OpenBLAS's core name (a test
 * hook: the notice's decision can be checked without changing OpenBLAS). */
void rpe_kernel_info (RpeKernelInfo *info);

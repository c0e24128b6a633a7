/* rpe-gemm.c: the core's own single-precision matrix product (see rpe-gemm-private.h).
 *
 * Three builds of one register-tiled kernel (rpe-gemm-kernel.h), chosen at run time:
 * AVX-512F (16 lanes, tiles of 6 rows x 64 columns), AVX2+FMA (8 lanes, 6 x 16) and the
 * generic one (4-lane vector extensions: SSE2 on any x86-64, NEON on arm64; 6 x 8, or 6 x 16
 * on arm64 with its 32 vector registers).  This file is compiled without floating-point
 * contraction (core/meson.build), so the generic build multiplies and adds with two roundings
 * on every CPU; the FMA builds use explicit fused multiply-adds. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define GEMM_HAVE_X86 1
#endif

#include "rpe-gemm-private.h"

#pragma GCC diagnostic ignored "-Wpsabi"

/* ---- generic ---- */
typedef float gemm_v4 __attribute__ ((vector_size (16)));

static inline __attribute__ ((always_inline)) gemm_v4
gemm_load_tail_generic (const float *p,
                        size_t       n)
{
  gemm_v4 v = { 0 };

  memcpy (&v, p, n * sizeof (float));
  return v;
}

#define GK_W 4
#define GK_MR 6
#ifdef __aarch64__
#define GK_NV 4
#else
#define GK_NV 2
#endif
#define GK_ATTR
#define GK_NAME(x) gemm_ ## x ## _generic
#define GK_FMA(a, b, c) ((a) * (b) + (c))
#define GK_LOAD_TAIL(p, n) gemm_load_tail_generic (p, n)
#define GK_STORE_TAIL(p, v, n) do { gemm_v4 v_ = (v); memcpy ((p), &v_, (n) * sizeof (float)); } while (0)
#include "rpe-gemm-kernel.h"
#undef GK_W
#undef GK_MR
#undef GK_NV
#undef GK_ATTR
#undef GK_NAME
#undef GK_FMA
#undef GK_LOAD_TAIL
#undef GK_STORE_TAIL

#ifdef GEMM_HAVE_X86
/* ---- AVX2 + FMA ---- */
static inline __attribute__ ((always_inline, target ("avx2,fma"))) __m256i
gemm_mask_avx2 (size_t n)
{
  static const int32_t lanes[16] = { -1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0 };

  return _mm256_loadu_si256 ((const __m256i *) (lanes + 8 - n));
}

#define GK_W 8
#define GK_MR 6
#define GK_NV 2
#define GK_ATTR __attribute__ ((target ("avx2,fma")))
#define GK_NAME(x) gemm_ ## x ## _avx2
#define GK_FMA(a, b, c) ((gemm_v_avx2) _mm256_fmadd_ps ((__m256) (a), (__m256) (b), (__m256) (c)))
#define GK_LOAD_TAIL(p, n) ((gemm_v_avx2) _mm256_maskload_ps ((p), gemm_mask_avx2 (n)))
#define GK_STORE_TAIL(p, v, n) _mm256_maskstore_ps ((p), gemm_mask_avx2 (n), (__m256) (v))
#include "rpe-gemm-kernel.h"
#undef GK_W
#undef GK_MR
#undef GK_NV
#undef GK_ATTR
#undef GK_NAME
#undef GK_FMA
#undef GK_LOAD_TAIL
#undef GK_STORE_TAIL

/* ---- AVX-512F ---- */
#define GK_W 16
#define GK_MR 6
#define GK_NV 4
#define GK_ATTR __attribute__ ((target ("avx512f,avx2,fma")))
#define GK_NAME(x) gemm_ ## x ## _avx512
#define GK_FMA(a, b, c) ((gemm_v_avx512) _mm512_fmadd_ps ((__m512) (a), (__m512) (b), (__m512) (c)))
#define GK_LOAD_TAIL(p, n) ((gemm_v_avx512) _mm512_maskz_loadu_ps ((__mmask16) ((1u << (n)) - 1), (p)))
#define GK_STORE_TAIL(p, v, n) _mm512_mask_storeu_ps ((p), (__mmask16) ((1u << (n)) - 1), (__m512) (v))
#include "rpe-gemm-kernel.h"
#undef GK_W
#undef GK_MR
#undef GK_NV
#undef GK_ATTR
#undef GK_NAME
#undef GK_FMA
#undef GK_LOAD_TAIL
#undef GK_STORE_TAIL
#endif

static RpeGemmIsa
cpu_isa (void)
{
  static int cached = -1;

  if (cached < 0)
    {
      int best = RPE_GEMM_GENERIC;
#ifdef GEMM_HAVE_X86
      __builtin_cpu_init ();
      if (__builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma"))
        best = RPE_GEMM_AVX2;
      if (best == RPE_GEMM_AVX2 && __builtin_cpu_supports ("avx512f"))
        best = RPE_GEMM_AVX512;
#endif
      cached = best;
    }
  return (RpeGemmIsa) cached;
}

bool
_rpe_gemm_isa_available (RpeGemmIsa isa)
{
  return isa <= cpu_isa ();
}

RpeGemmIsa
_rpe_gemm_isa (void)
{
  /* read at every call (a product is far longer than a getenv), so tests can switch builds */
  const char *env = getenv ("RPE_GEMM_KERNEL");
  RpeGemmIsa isa = cpu_isa ();

  if (env != NULL && strcmp (env, "generic") == 0)
    isa = RPE_GEMM_GENERIC;
  else if (env != NULL && strcmp (env, "avx2") == 0 && isa > RPE_GEMM_AVX2)
    isa = RPE_GEMM_AVX2;
  return isa;
}

const char *
_rpe_gemm_isa_name (RpeGemmIsa isa)
{
  return isa == RPE_GEMM_AVX512 ? "avx512" : isa == RPE_GEMM_AVX2 ? "avx2" : "generic";
}

void
_rpe_gemm_isa_run (RpeGemmIsa   isa,
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
                   size_t       ldc)
{
  if (m == 0 || n == 0)
    return;
#ifdef GEMM_HAVE_X86
  if (isa == RPE_GEMM_AVX512 && _rpe_gemm_isa_available (RPE_GEMM_AVX512))
    {
      gemm_gemm_avx512 (m, n, k, alpha, a, ars, acs, b, ldb, accumulate, c, ldc);
      return;
    }
  if (isa == RPE_GEMM_AVX2 && _rpe_gemm_isa_available (RPE_GEMM_AVX2))
    {
      gemm_gemm_avx2 (m, n, k, alpha, a, ars, acs, b, ldb, accumulate, c, ldc);
      return;
    }
#endif
  gemm_gemm_generic (m, n, k, alpha, a, ars, acs, b, ldb, accumulate, c, ldc);
}

void
_rpe_gemm (size_t       m,
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
           size_t       ldc)
{
  _rpe_gemm_isa_run (_rpe_gemm_isa (), m, n, k, alpha, a, ars, acs, b, ldb, accumulate, c, ldc);
}

/* rpe-kernels.c: which kernels this process runs (see rpe-kernels.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cblas.h>

#include "rpe-attention-private.h"
#include "rpe-gemm-private.h"
#include "rpe-kernels.h"
#include "rpe-linear-attention.h"
#include "rpe-rng-private.h"

/* OpenBLAS's x86-64 cores with AVX2 kernels (DYNAMIC_ARCH names, any case) */
static const char *const avx2_cores[] = { "Haswell", "Zen", "SkylakeX", "CooperLake", "SapphireRapids" };

static void
copy_name (char *dst, size_t size, const char *src)
{
  size_t len = src != NULL ? strlen (src) : 0;

  if (len >= size)
    len = size - 1;
  if (len > 0)
    memcpy (dst, src, len);
  dst[len] = '\0';
  /* trailing blanks (OpenBLAS ends its config with one) */
  while (len > 0 && (dst[len - 1] == ' ' || dst[len - 1] == '\n'))
    dst[--len] = '\0';
}

void
rpe_kernel_info (RpeKernelInfo *info)
{
  const char *fake = getenv ("RPE_FAKE_BLAS_CORE");
  bool avx2_core = false;

  memset (info, 0, sizeof *info);
  copy_name (info->blas_core, sizeof info->blas_core,
             fake != NULL && *fake != '\0' ? fake : openblas_get_corename ());
  copy_name (info->blas_config, sizeof info->blas_config, openblas_get_config ());
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init ();
  info->cpu_avx2 = __builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma");
  info->cpu_avx512 = __builtin_cpu_supports ("avx512f") && __builtin_cpu_supports ("avx512bw")
                     && __builtin_cpu_supports ("avx512dq") && __builtin_cpu_supports ("avx512vl");
#endif
  for (size_t i = 0; i < sizeof avx2_cores / sizeof avx2_cores[0]; i++)
    avx2_core |= strcasecmp (info->blas_core, avx2_cores[i]) == 0;
  info->blas_slow_core = info->cpu_avx2 && !avx2_core;
  info->blas_suggest = !info->blas_slow_core ? NULL : info->cpu_avx512 ? "SkylakeX" : "Haswell";
  info->gemm = _rpe_gemm_isa_name (_rpe_gemm_isa ());
  info->attention = _rpe_attention_dense_kernel_name ();
  info->linear = _rpe_linear_kernel_name ();
  info->softmax = _rpe_softmax_kernel_name ();
  info->rng = _rpe_rng_path_name ();
}

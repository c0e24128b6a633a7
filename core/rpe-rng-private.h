/* rpe-rng-private.h: the normal generator's code paths, for tests (private). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Every path gives the same draw bit for bit; AUTO is the fastest the CPU has
 * (RPE_RNG_GENERIC in the environment forces GENERIC, RPE_RNG_NO_AVX512 skips AVX512). */
typedef enum
{
  RPE_RNG_PATH_AUTO,
  RPE_RNG_PATH_GENERIC,
  RPE_RNG_PATH_AVX2,     /* x86-64 with AVX2 */
  RPE_RNG_PATH_AVX512,   /* x86-64 with AVX-512 F, DQ, BW and VL */
} RpeRngPath;

/* Whether this build and this CPU have the path. */
bool _rpe_rng_path_available (RpeRngPath path);

/* rpe_rng_normal through one path (does nothing if the path is not available). */
void _rpe_rng_normal_path (RpeRngPath path,
                           uint64_t   seed,
                           uint64_t   stream,
                           uint64_t   offset,
                           float     *out,
                           size_t     n);

/* The path rpe_rng_normal takes on this CPU: "avx512", "avx2" or "generic". */
const char *_rpe_rng_path_name (void);

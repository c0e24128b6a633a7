/* rpe-vec-private.h: small vector loops shared by the core's hot paths (private). */
#pragma once

#include <stddef.h>

/* y += a x, written 8-wide so that GCC's SLP vectoriser packs it at -O2. */
static inline void
rpe_axpy_f (float       *restrict y,
            const float *restrict x,
            float                 a,
            size_t                n)
{
  size_t i = 0;

  for (; i + 8 <= n; i += 8)
    {
      y[i] += a * x[i];         y[i + 1] += a * x[i + 1];
      y[i + 2] += a * x[i + 2]; y[i + 3] += a * x[i + 3];
      y[i + 4] += a * x[i + 4]; y[i + 5] += a * x[i + 5];
      y[i + 6] += a * x[i + 6]; y[i + 7] += a * x[i + 7];
    }
  for (; i < n; i++)
    y[i] += a * x[i];
}

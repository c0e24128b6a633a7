/* rpe-vec-private.h: small vector loops shared by the core's hot paths (private). */
#pragma once

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

/* ---- 8-lane vectors and a vectorised exp ----
 *
 * expf on 8 lanes with GCC vector extensions (Cephes' single-precision
 * algorithm, as the SPE rng's log / sin / cos in rpe-rng.c): exp(x) = 2^n exp(r),
 * n = round(x / ln 2), r = x - n ln 2 in two parts (Cody-Waite, ln2_hi has 9
 * significant bits so n * ln2_hi is exact), exp(r) = 1 + r + r^2 P(r) with the
 * degree-5 minimax P on |r| <= ln 2 / 2, and 2^n applied as two power-of-two
 * factors so the gradual underflow down to -103.97 is kept.  Max error ~1.5 ulp
 * against the correctly rounded exp (tested in test-core-attention).  Overflow
 * (x > 88.72283) gives +inf, x < -104 gives 0 (as expf: below the smallest
 * subnormal), NaN propagates.
 *
 * The kernels are compiled twice: for AVX2+FMA (picked at run time when the CPU
 * has it) and for the baseline x86-64 (SSE2, each 8-lane vector as two halves). */
#pragma GCC diagnostic ignored "-Wpsabi"

typedef float   v8f __attribute__ ((vector_size (32)));
typedef int32_t v8i __attribute__ ((vector_size (32)));

#define SPLAT8(x) { x, x, x, x, x, x, x, x }

static inline __attribute__ ((always_inline)) v8f
v8_load (const float *p)
{
  v8f v;

  memcpy (&v, p, sizeof v);
  return v;
}

static inline __attribute__ ((always_inline)) void
v8_store (float *p,
          v8f    v)
{
  memcpy (p, &v, sizeof v);
}

static inline __attribute__ ((always_inline)) v8f
v8_select (v8i mask,
           v8f a,
           v8f b)
{
  return (v8f) (((v8i) a & mask) | ((v8i) b & ~mask));
}

/* The polynomial of v8_exp for xc in [-104, 88.72] (Cephes-style: x = n ln 2 + r, a degree-6
 * polynomial in r, 2^n applied in two halves so that n down to -150 gives subnormals). */
static inline __attribute__ ((always_inline)) v8f
v8_exp_poly (v8f xc)
{
  const v8f magic = SPLAT8 (12582912.0f);     /* 1.5 * 2^23: adding it rounds to an integer */
  v8f t, nf, r, p, y;
  v8i n, n1, n2;

  t = xc * (v8f) SPLAT8 (1.44269504088896341f) + magic;
  n = (v8i) t - (v8i) magic;                  /* round (x / ln 2), in [-150, 128] */
  nf = t - magic;
  r = xc - nf * (v8f) SPLAT8 (0.693359375f);
  r = r - nf * (v8f) SPLAT8 (-2.12194440e-4f);
  p = (v8f) SPLAT8 (1.9875691500e-4f);
  p = p * r + (v8f) SPLAT8 (1.3981999507e-3f);
  p = p * r + (v8f) SPLAT8 (8.3334519073e-3f);
  p = p * r + (v8f) SPLAT8 (4.1665795894e-2f);
  p = p * r + (v8f) SPLAT8 (1.6666665459e-1f);
  p = p * r + (v8f) SPLAT8 (5.0000001201e-1f);
  y = p * (r * r) + r + (v8f) SPLAT8 (1.0f);
  n1 = n >> 1;
  n2 = n - n1;
  y = y * (v8f) ((n1 + 127) << 23);
  return y * (v8f) ((n2 + 127) << 23);
}

static inline __attribute__ ((always_inline)) v8f
v8_exp (v8f x)
{
  const v8f hi = SPLAT8 (88.7228317f), lo = SPLAT8 (-104.0f);
  const v8i nan = x != x, over = x > hi;
  v8f xc, y;

  xc = v8_select (x < lo, lo, x);
  xc = v8_select (xc > hi, hi, xc);
  xc = v8_select (nan, lo, xc);
  y = v8_exp_poly (xc);
  y = v8_select (over, (v8f) SPLAT8 (INFINITY), y);
  return v8_select (nan, x, y);
}

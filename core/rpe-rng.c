#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rpe-parallel.h"
#include "rpe-rng.h"
#include "rpe-rng-private.h"

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

void
rpe_philox4x32_10 (const uint32_t ctr[4],
                   const uint32_t key[2],
                   uint32_t       out[4])
{
  uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
  uint32_t k0 = key[0], k1 = key[1];

  for (int round = 0; round < 10; round++)
    {
      uint64_t p0 = (uint64_t) PHILOX_M0 * c0;
      uint64_t p1 = (uint64_t) PHILOX_M1 * c2;
      uint32_t hi0 = (uint32_t) (p0 >> 32), lo0 = (uint32_t) p0;
      uint32_t hi1 = (uint32_t) (p1 >> 32), lo1 = (uint32_t) p1;

      c0 = hi1 ^ c1 ^ k0;
      c1 = lo1;
      c2 = hi0 ^ c3 ^ k1;
      c3 = lo0;
      k0 += PHILOX_W0;
      k1 += PHILOX_W1;
    }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

static inline void
philox_block (uint64_t seed, uint64_t stream, uint64_t block, uint32_t out[4])
{
  const uint32_t ctr[4] = { (uint32_t) block, (uint32_t) (block >> 32),
                            (uint32_t) stream, (uint32_t) (stream >> 32) };
  const uint32_t key[2] = { (uint32_t) seed, (uint32_t) (seed >> 32) };

  rpe_philox4x32_10 (ctr, key, out);
}

/* ---- Gaussian transform ----
 *
 * Box-Muller in single precision, on blocks of 8 Philox outputs at a time,
 * branch-free with GCC vector types so that it vectorises on any x86-64:
 * for the words (a, b) of a pair (w0, w1) or (w2, w3) of a Philox block,
 *   u1 = (floor(a / 2) + 1/2) / 2^31 in (0, 1],  radius = sqrt(-2 ln u1),
 *   angle = 2 pi b / 2^32,  n0 = radius cos(angle), n1 = radius sin(angle).
 * ln, sin and cos are Cephes-style minimax polynomials (relative error ~1e-7,
 * the float rounding level).  Every path (scalar, SSE2, AVX2) performs the same
 * IEEE operations in the same order (no FMA contraction is possible: FMA is
 * never enabled for these functions), so a draw is bit-identical whatever the
 * CPU, the chunking or the threads.  The largest |value| is sqrt(-2 ln 2^-32)
 * ~ 6.66. */
/* the 32-byte vector helpers are static and always inlined: no ABI is involved */
#pragma GCC diagnostic ignored "-Wpsabi"

typedef float    v8f __attribute__ ((vector_size (32)));
typedef int32_t  v8i __attribute__ ((vector_size (32)));
typedef uint32_t v8u __attribute__ ((vector_size (32)));

#define SPLAT(x) { x, x, x, x, x, x, x, x }

static inline __attribute__ ((always_inline)) v8f
v8_sqrt (v8f x)
{
  /* two SSE square roots (correctly rounded, like every IEEE sqrt) */
  typedef float v4f __attribute__ ((vector_size (16)));
  v4f lo = { x[0], x[1], x[2], x[3] }, hi = { x[4], x[5], x[6], x[7] };
  v8f r;

  lo = __builtin_ia32_sqrtps (lo);
  hi = __builtin_ia32_sqrtps (hi);
  r = (v8f) { lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3] };
  return r;
}

/* -2 ln(u), u in (0, 1], as the body of a function of u over vectors VF of floats and VI of
 * ints (8 or 16 wide, SP the matching splat): one text, so the widths give the same bits.
 * ln u = e ln 2 + ln m, m in [sqrt(1/2), sqrt(2)), ln(1 + x) by Cephes' polynomial. */
#define MINUS2LOG_BODY(VF, VI, SP)                                                          \
  {                                                                                         \
    const VI bits = (VI) u;                                                                 \
    const VI mant = (bits & (VI) SP (0x007fffff)) | (VI) SP (0x3f000000);   /* [0.5, 1) */  \
    VI e = ((bits >> 23) & (VI) SP (0xff)) - (VI) SP (126);                                 \
    VF m = (VF) mant, x, z, y, ef;                                                          \
    /* m < sqrt(1/2): use 2m - 1 and e - 1, else m - 1 */                                   \
    const VI small = m < (VF) SP (0.707106781186547524f);                                   \
    const VF xs = (m + m) - (VF) SP (1.0f), xl = m - (VF) SP (1.0f);                        \
                                                                                            \
    x = (VF) (((VI) xs & small) | ((VI) xl & ~small));                                      \
    e = e + small;  /* small is -1 where true */                                            \
    ef = __builtin_convertvector (e, VF);                                                   \
    z = x * x;                                                                              \
    y = (VF) SP (7.0376836292e-2f);                                                         \
    y = y * x + (VF) SP (-1.1514610310e-1f);                                                \
    y = y * x + (VF) SP (1.1676998740e-1f);                                                 \
    y = y * x + (VF) SP (-1.2420140846e-1f);                                                \
    y = y * x + (VF) SP (1.4249322787e-1f);                                                 \
    y = y * x + (VF) SP (-1.6668057665e-1f);                                                \
    y = y * x + (VF) SP (2.0000714765e-1f);                                                 \
    y = y * x + (VF) SP (-2.4999993993e-1f);                                                \
    y = y * x + (VF) SP (3.3333331174e-1f);                                                 \
    y = y * x * z;                                                                          \
    y = y + ef * (VF) SP (-2.12194440e-4f);                                                 \
    y = y - (VF) SP (0.5f) * z;                                                             \
    x = x + y;                                                                              \
    x = x + ef * (VF) SP (0.693359375f);                                                    \
    return (VF) SP (-2.0f) * x;                                                             \
  }

static inline __attribute__ ((always_inline)) v8f
v8_minus2log (v8f u)
MINUS2LOG_BODY (v8f, v8i, SPLAT)

/* Box-Muller of 8 pairs (a, b) into n0 (cos) and n1 (sin) */
static inline __attribute__ ((always_inline)) void
v8_box_muller (v8u a, v8u b, v8f *n0, v8f *n1)
{
  const v8f u1 = (__builtin_convertvector ((v8i) (a >> 1), v8f) + (v8f) SPLAT (0.5f))
                 * (v8f) SPLAT (4.656612873077392578125e-10f);   /* 2^-31 */
  const v8f radius = v8_sqrt (v8_minus2log (u1));
  /* angle = 2 pi b / 2^32 = j pi/2 + phi, j the nearest quadrant, |phi| <= pi/4 */
  const v8u bj = b + (v8u) SPLAT (0x20000000u);
  const v8i j = (v8i) (bj >> 30);
  const v8i t = (v8i) (b - (bj & (v8u) SPLAT (0xc0000000u)));    /* in [-2^29, 2^29) */
  const v8f phi = __builtin_convertvector (t, v8f) * (v8f) SPLAT (1.46291807926715968e-9f); /* pi/2^31 */
  const v8f p2 = phi * phi;
  v8f sn, cs, c, s;
  v8i swap, negc, negs;

  sn = (v8f) SPLAT (-1.9515295891e-4f);
  sn = sn * p2 + (v8f) SPLAT (8.3321608736e-3f);
  sn = sn * p2 + (v8f) SPLAT (-1.6666654611e-1f);
  sn = sn * p2 * phi + phi;
  cs = (v8f) SPLAT (2.443315711809948e-5f);
  cs = cs * p2 + (v8f) SPLAT (-1.388731625493765e-3f);
  cs = cs * p2 + (v8f) SPLAT (4.166664568298827e-2f);
  cs = cs * p2 * p2 - (v8f) SPLAT (0.5f) * p2 + (v8f) SPLAT (1.0f);
  /* quadrant j: cos = c, -s, -c, s; sin = s, c, -s, -c */
  swap = -(j & 1);
  negc = ((j + 1) >> 1 & 1) << 31;
  negs = (j >> 1 & 1) << 31;
  c = (v8f) (((v8i) sn & swap) | ((v8i) cs & ~swap));
  s = (v8f) (((v8i) cs & swap) | ((v8i) sn & ~swap));
  *n0 = radius * (v8f) ((v8i) c ^ negc);
  *n1 = radius * (v8f) ((v8i) s ^ negs);
}

/* 8 Philox blocks (counters block0 .. block0+7) in structure-of-arrays form:
 * w[i][l] is word i of block block0 + l. */
static inline __attribute__ ((always_inline)) void
philox8_scalar (uint64_t seed, uint64_t stream, uint64_t block0, v8u w[4])
{
  for (int l = 0; l < 8; l++)
    {
      uint32_t out[4];

      philox_block (seed, stream, block0 + (uint64_t) l, out);
      w[0][l] = out[0];
      w[1][l] = out[1];
      w[2][l] = out[2];
      w[3][l] = out[3];
    }
}

/* 32 normals: block l of the batch gives out[4l .. 4l+3] */
static inline __attribute__ ((always_inline)) void
normals_from_words (const v8u w[4], float out[32])
{
  v8f n0, n1, n2, n3;

  v8_box_muller (w[0], w[1], &n0, &n1);
  v8_box_muller (w[2], w[3], &n2, &n3);
  for (int l = 0; l < 8; l++)
    {
      out[4 * l] = n0[l];
      out[4 * l + 1] = n1[l];
      out[4 * l + 2] = n2[l];
      out[4 * l + 3] = n3[l];
    }
}

/* nb batches of 32 normals starting at block block0 (a multiple of nothing in particular) */
static void
normal_batches_generic (uint64_t seed, uint64_t stream, uint64_t block0, float *out, size_t nb)
{
  for (size_t i = 0; i < nb; i++)
    {
      v8u w[4];

      philox8_scalar (seed, stream, block0 + 8 * i, w);
      normals_from_words (w, out + 32 * i);
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define NORMAL_HAVE_AVX2 1

/* 32 x 32 -> 64 products of 8 lanes: hi and lo words */
static inline __attribute__ ((always_inline, target ("avx2"))) void
mulhilo8 (__m256i a, __m256i m, __m256i *hi, __m256i *lo)
{
  const __m256i even = _mm256_mul_epu32 (a, m);                               /* lanes 0, 2, 4, 6 */
  const __m256i odd = _mm256_mul_epu32 (_mm256_srli_epi64 (a, 32), m);       /* lanes 1, 3, 5, 7 */

  *lo = _mm256_blend_epi32 (even, _mm256_slli_epi64 (odd, 32), 0xaa);
  *hi = _mm256_blend_epi32 (_mm256_srli_epi64 (even, 32), odd, 0xaa);
}

static __attribute__ ((target ("avx2"))) void
normal_batches_avx2 (uint64_t seed, uint64_t stream, uint64_t block0, float *out, size_t nb)
{
  const __m256i m0 = _mm256_set1_epi32 ((int) PHILOX_M0), m1 = _mm256_set1_epi32 ((int) PHILOX_M1);
  const __m256i lane = _mm256_setr_epi32 (0, 1, 2, 3, 4, 5, 6, 7);

  for (size_t i = 0; i < nb; i++)
    {
      const uint64_t b = block0 + 8 * i;
      __m256i c0, c1, c2, c3, k0, k1;
      v8u w[4];

      if ((uint32_t) b > UINT32_MAX - 7)
        {
          /* the low counter word wraps inside the batch: rare, go scalar */
          philox8_scalar (seed, stream, b, w);
          normals_from_words (w, out + 32 * i);
          continue;
        }
      c0 = _mm256_add_epi32 (_mm256_set1_epi32 ((int) (uint32_t) b), lane);
      c1 = _mm256_set1_epi32 ((int) (uint32_t) (b >> 32));
      c2 = _mm256_set1_epi32 ((int) (uint32_t) stream);
      c3 = _mm256_set1_epi32 ((int) (uint32_t) (stream >> 32));
      k0 = _mm256_set1_epi32 ((int) (uint32_t) seed);
      k1 = _mm256_set1_epi32 ((int) (uint32_t) (seed >> 32));
      for (int round = 0; round < 10; round++)
        {
          __m256i hi0, lo0, hi1, lo1;

          mulhilo8 (c0, m0, &hi0, &lo0);
          mulhilo8 (c2, m1, &hi1, &lo1);
          c0 = _mm256_xor_si256 (_mm256_xor_si256 (hi1, c1), k0);
          c1 = lo1;
          c2 = _mm256_xor_si256 (_mm256_xor_si256 (hi0, c3), k1);
          c3 = lo0;
          k0 = _mm256_add_epi32 (k0, _mm256_set1_epi32 ((int) PHILOX_W0));
          k1 = _mm256_add_epi32 (k1, _mm256_set1_epi32 ((int) PHILOX_W1));
        }
      w[0] = (v8u) c0;
      w[1] = (v8u) c1;
      w[2] = (v8u) c2;
      w[3] = (v8u) c3;
      normals_from_words (w, out + 32 * i);
    }
}

static int
have_avx2 (void)
{
  static int cached = -1;

  if (cached < 0)
    {
      __builtin_cpu_init ();
      /* RPE_RNG_GENERIC forces the portable path (to check that both agree) */
      cached = __builtin_cpu_supports ("avx2") && getenv ("RPE_RNG_GENERIC") == NULL ? 1 : 0;
    }
  return cached;
}

/* ---- AVX-512: 16 Philox blocks (64 normals) per step ----
 *
 * The same words and the same IEEE float operations as the 8-lane path, in
 * 16-lane vectors: every value is bit for bit the one the generic and AVX2
 * paths give (tests/test-core-rng.c checks the three against each other).  This
 * file is compiled with -ffp-contract=off (core/meson.build): AVX-512F has FMA,
 * and a contracted a * b + c would round differently. */
#define NORMAL_HAVE_AVX512 1
#define AVX512_TARGET "avx512f,avx512dq,avx512bw,avx512vl"

typedef float    v16f __attribute__ ((vector_size (64)));
typedef int32_t  v16i __attribute__ ((vector_size (64)));
typedef uint32_t v16u __attribute__ ((vector_size (64)));

#define SPLAT16(x) { x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x }

/* -2 ln(u), u in (0, 1]: v8_minus2log, 16 wide */
static inline __attribute__ ((always_inline, target (AVX512_TARGET))) v16f
v16_minus2log (v16f u)
MINUS2LOG_BODY (v16f, v16i, SPLAT16)

/* v8_box_muller, 16 wide (the square root is IEEE's correctly rounded one either way) */
static inline __attribute__ ((always_inline, target (AVX512_TARGET))) void
v16_box_muller (v16u a, v16u b, v16f *n0, v16f *n1)
{
  const v16f u1 = (__builtin_convertvector ((v16i) (a >> 1), v16f) + (v16f) SPLAT16 (0.5f))
                  * (v16f) SPLAT16 (4.656612873077392578125e-10f);
  const v16f radius = (v16f) _mm512_sqrt_ps ((__m512) v16_minus2log (u1));
  const v16u bj = b + (v16u) SPLAT16 (0x20000000u);
  const v16i j = (v16i) (bj >> 30);
  const v16i t = (v16i) (b - (bj & (v16u) SPLAT16 (0xc0000000u)));
  const v16f phi = __builtin_convertvector (t, v16f) * (v16f) SPLAT16 (1.46291807926715968e-9f);
  const v16f p2 = phi * phi;
  v16f sn, cs, c, s;
  v16i swap, negc, negs;

  sn = (v16f) SPLAT16 (-1.9515295891e-4f);
  sn = sn * p2 + (v16f) SPLAT16 (8.3321608736e-3f);
  sn = sn * p2 + (v16f) SPLAT16 (-1.6666654611e-1f);
  sn = sn * p2 * phi + phi;
  cs = (v16f) SPLAT16 (2.443315711809948e-5f);
  cs = cs * p2 + (v16f) SPLAT16 (-1.388731625493765e-3f);
  cs = cs * p2 + (v16f) SPLAT16 (4.166664568298827e-2f);
  cs = cs * p2 * p2 - (v16f) SPLAT16 (0.5f) * p2 + (v16f) SPLAT16 (1.0f);
  swap = -(j & 1);
  negc = ((j + 1) >> 1 & 1) << 31;
  negs = (j >> 1 & 1) << 31;
  c = (v16f) (((v16i) sn & swap) | ((v16i) cs & ~swap));
  s = (v16f) (((v16i) cs & swap) | ((v16i) sn & ~swap));
  *n0 = radius * (v16f) ((v16i) c ^ negc);
  *n1 = radius * (v16f) ((v16i) s ^ negs);
}

/* 32 x 32 -> 64 products of 16 lanes: hi and lo words */
static inline __attribute__ ((always_inline, target (AVX512_TARGET))) void
mulhilo16 (__m512i a, __m512i m, __m512i *hi, __m512i *lo)
{
  const __m512i even = _mm512_mul_epu32 (a, m);                            /* lanes 0, 2, ... */
  const __m512i odd = _mm512_mul_epu32 (_mm512_srli_epi64 (a, 32), m);    /* lanes 1, 3, ... */

  *lo = _mm512_mask_blend_epi32 (0xaaaa, even, _mm512_slli_epi64 (odd, 32));
  *hi = _mm512_mask_blend_epi32 (0xaaaa, _mm512_srli_epi64 (even, 32), odd);
}

/* nb batches of 32 normals from block block0 on, two batches (16 blocks) per step */
static __attribute__ ((target (AVX512_TARGET))) void
normal_batches_avx512 (uint64_t seed, uint64_t stream, uint64_t block0, float *out, size_t nb)
{
  const __m512i m0 = _mm512_set1_epi32 ((int) PHILOX_M0), m1 = _mm512_set1_epi32 ((int) PHILOX_M1);
  const __m512i lane = _mm512_setr_epi32 (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  __m512i rk0[10], rk1[10];
  size_t i = 0;

  /* the round keys are the same in every lane */
  {
    uint32_t k0 = (uint32_t) seed, k1 = (uint32_t) (seed >> 32);

    for (int round = 0; round < 10; round++)
      {
        rk0[round] = _mm512_set1_epi32 ((int) k0);
        rk1[round] = _mm512_set1_epi32 ((int) k1);
        k0 += PHILOX_W0;
        k1 += PHILOX_W1;
      }
  }
  for (; i + 2 <= nb; i += 2)
    {
      const uint64_t b = block0 + 8 * i;
      __m512i c0, c1, c2, c3;
      __m512 n0, n1, n2, n3, t0, t1, t2, t3, u0, u1, u2, u3, w0, w1, w2, w3;
      v16f f0, f1, f2, f3;

      if ((uint32_t) b > UINT32_MAX - 15)
        {
          /* the low counter word wraps inside the step: rare, 8 lanes at a time */
          normal_batches_avx2 (seed, stream, b, out + 32 * i, 2);
          continue;
        }
      c0 = _mm512_add_epi32 (_mm512_set1_epi32 ((int) (uint32_t) b), lane);
      c1 = _mm512_set1_epi32 ((int) (uint32_t) (b >> 32));
      c2 = _mm512_set1_epi32 ((int) (uint32_t) stream);
      c3 = _mm512_set1_epi32 ((int) (uint32_t) (stream >> 32));
      for (int round = 0; round < 10; round++)
        {
          __m512i hi0, lo0, hi1, lo1;

          mulhilo16 (c0, m0, &hi0, &lo0);
          mulhilo16 (c2, m1, &hi1, &lo1);
          /* 0x96: three-way exclusive or */
          c0 = _mm512_ternarylogic_epi32 (hi1, c1, rk0[round], 0x96);
          c1 = lo1;
          c2 = _mm512_ternarylogic_epi32 (hi0, c3, rk1[round], 0x96);
          c3 = lo0;
        }
      v16_box_muller ((v16u) c0, (v16u) c1, &f0, &f1);
      v16_box_muller ((v16u) c2, (v16u) c3, &f2, &f3);
      n0 = (__m512) f0;
      n1 = (__m512) f1;
      n2 = (__m512) f2;
      n3 = (__m512) f3;
      /* block l gives out[4l .. 4l+3] = n0[l], n1[l], n2[l], n3[l]: a 4 x 16 transpose */
      t0 = _mm512_unpacklo_ps (n0, n1);   /* per 128-bit lane k: n0[4k] n1[4k] n0[4k+1] n1[4k+1] */
      t1 = _mm512_unpackhi_ps (n0, n1);   /* n0[4k+2] n1[4k+2] n0[4k+3] n1[4k+3] */
      t2 = _mm512_unpacklo_ps (n2, n3);
      t3 = _mm512_unpackhi_ps (n2, n3);
      u0 = (__m512) _mm512_unpacklo_pd ((__m512d) t0, (__m512d) t2);   /* lane k: block 4k */
      u1 = (__m512) _mm512_unpackhi_pd ((__m512d) t0, (__m512d) t2);   /* block 4k+1 */
      u2 = (__m512) _mm512_unpacklo_pd ((__m512d) t1, (__m512d) t3);   /* block 4k+2 */
      u3 = (__m512) _mm512_unpackhi_pd ((__m512d) t1, (__m512d) t3);   /* block 4k+3 */
      w0 = _mm512_shuffle_f32x4 (u0, u1, 0x44);   /* blocks 0 4 1 5 */
      w1 = _mm512_shuffle_f32x4 (u0, u1, 0xee);   /* blocks 8 12 9 13 */
      w2 = _mm512_shuffle_f32x4 (u2, u3, 0x44);   /* blocks 2 6 3 7 */
      w3 = _mm512_shuffle_f32x4 (u2, u3, 0xee);   /* blocks 10 14 11 15 */
      _mm512_storeu_ps (out + 32 * i, _mm512_shuffle_f32x4 (w0, w2, 0x88));        /* blocks 0 1 2 3 */
      _mm512_storeu_ps (out + 32 * i + 16, _mm512_shuffle_f32x4 (w0, w2, 0xdd));   /* 4 5 6 7 */
      _mm512_storeu_ps (out + 32 * i + 32, _mm512_shuffle_f32x4 (w1, w3, 0x88));   /* 8 9 10 11 */
      _mm512_storeu_ps (out + 32 * i + 48, _mm512_shuffle_f32x4 (w1, w3, 0xdd));   /* 12 13 14 15 */
    }
  if (i < nb)
    normal_batches_avx2 (seed, stream, block0 + 8 * i, out + 32 * i, nb - i);
}

static int
have_avx512 (void)
{
  static int cached = -1;

  if (cached < 0)
    {
      __builtin_cpu_init ();
      cached = have_avx2 () && __builtin_cpu_supports ("avx512f") && __builtin_cpu_supports ("avx512dq")
               && __builtin_cpu_supports ("avx512bw") && __builtin_cpu_supports ("avx512vl")
               && getenv ("RPE_RNG_NO_AVX512") == NULL ? 1 : 0;
    }
  return cached;
}
#endif

typedef void (*NormalBatchesFunc) (uint64_t seed, uint64_t stream, uint64_t block0, float *out, size_t nb);

static NormalBatchesFunc
normal_batches_for (RpeRngPath path)
{
  switch (path)
    {
    case RPE_RNG_PATH_GENERIC:
      return normal_batches_generic;
#ifdef NORMAL_HAVE_AVX2
    case RPE_RNG_PATH_AVX2:
      return have_avx2 () ? normal_batches_avx2 : NULL;
    case RPE_RNG_PATH_AVX512:
      return have_avx512 () ? normal_batches_avx512 : NULL;
    case RPE_RNG_PATH_AUTO:
    default:
      if (have_avx512 ())
        return normal_batches_avx512;
      if (have_avx2 ())
        return normal_batches_avx2;
      return normal_batches_generic;
#else
    case RPE_RNG_PATH_AUTO:
      return normal_batches_generic;
    default:
      return NULL;
#endif
    }
}

const char *
_rpe_rng_path_name (void)
{
  NormalBatchesFunc f = normal_batches_for (RPE_RNG_PATH_AUTO);

#ifdef NORMAL_HAVE_AVX2
  if (f == normal_batches_avx512)
    return "avx512";
  if (f == normal_batches_avx2)
    return "avx2";
#endif
  (void) f;
  return "generic";
}

bool
_rpe_rng_path_available (RpeRngPath path)
{
  return normal_batches_for (path) != NULL;
}

static void
normal_draw (NormalBatchesFunc normal_batches,
             uint64_t          seed,
             uint64_t          stream,
             uint64_t          offset,
             float            *out,
             size_t            n)
{
  size_t j = 0;

  /* a partial batch at the start (draws are batched by 32 from index 0) */
  if (n > 0 && offset % 32 != 0)
    {
      float tmp[32];
      size_t lane = (size_t) (offset % 32), take = 32 - lane < n ? 32 - lane : n;

      normal_batches (seed, stream, (offset / 32) * 8, tmp, 1);
      memcpy (out, tmp + lane, take * sizeof (float));
      j = take;
    }
  /* whole batches straight into out */
  if (n - j >= 32)
    {
      size_t nb = (n - j) / 32;

      normal_batches (seed, stream, ((offset + j) / 32) * 8, out + j, nb);
      j += nb * 32;
    }
  if (j < n)
    {
      float tmp[32];

      normal_batches (seed, stream, ((offset + j) / 32) * 8, tmp, 1);
      memcpy (out + j, tmp, (n - j) * sizeof (float));
    }
}

typedef struct
{
  uint64_t seed, stream, offset;
  float   *out;
  size_t   n;
} NormalShare;

/* Worker w's share: from the w/n_workers point of the draws, moved up to a whole batch. */
static size_t
normal_share_start (const NormalShare *s, size_t w, size_t n_workers)
{
  uint64_t at;

  if (w >= n_workers)
    return s->n;
  at = s->offset + (uint64_t) (s->n / n_workers) * w + (uint64_t) (s->n % n_workers) * w / n_workers;
  at = (at + 31) / 32 * 32;
  return at - s->offset < s->n ? (size_t) (at - s->offset) : s->n;
}

static void
normal_share (size_t w, size_t n_workers, void *data)
{
  const NormalShare *s = data;
  size_t j0 = w == 0 ? 0 : normal_share_start (s, w, n_workers);
  size_t j1 = normal_share_start (s, w + 1, n_workers);

  if (j1 > j0)
    rpe_rng_normal (s->seed, s->stream, s->offset + j0, s->out + j0, j1 - j0);
}

void
rpe_rng_normal_parallel (uint64_t  seed,
                         uint64_t  stream,
                         uint64_t  offset,
                         float    *out,
                         size_t    n,
                         size_t    n_workers)
{
  NormalShare s = { seed, stream, offset, out, n };

  if (n_workers == 0)
    n_workers = rpe_parallel_threads ();
  /* a share under 64 Ki draws (about 0.1 ms) is not worth a thread */
  if (n_workers > n / 65536)
    n_workers = n / 65536;
  if (n_workers <= 1)
    {
      rpe_rng_normal (seed, stream, offset, out, n);
      return;
    }
  rpe_parallel_run (n_workers, normal_share, &s);
}

void
rpe_rng_normal (uint64_t  seed,
                uint64_t  stream,
                uint64_t  offset,
                float    *out,
                size_t    n)
{
  normal_draw (normal_batches_for (RPE_RNG_PATH_AUTO), seed, stream, offset, out, n);
}

void
_rpe_rng_normal_path (RpeRngPath path,
                      uint64_t   seed,
                      uint64_t   stream,
                      uint64_t   offset,
                      float     *out,
                      size_t     n)
{
  NormalBatchesFunc func = normal_batches_for (path);

  if (func != NULL)
    normal_draw (func, seed, stream, offset, out, n);
}

void
rpe_rng_uniform (uint64_t  seed,
                 uint64_t  stream,
                 uint64_t  offset,
                 float    *out,
                 size_t    n)
{
  size_t j = 0;

  while (j < n)
    {
      uint64_t idx = offset + j;
      uint64_t block = idx / 4;
      unsigned lane = (unsigned) (idx % 4);
      uint32_t w[4];

      philox_block (seed, stream, block, w);
      for (; lane < 4 && j < n; lane++, j++)
        out[j] = (float) (w[lane] >> 8) * (1.0f / 16777216.0f);
    }
}

uint64_t
rpe_rng_u64 (uint64_t seed,
             uint64_t stream,
             uint64_t index)
{
  uint32_t w[4];

  philox_block (seed, stream | ((uint64_t) 1 << 63), index, w);
  return ((uint64_t) w[0] << 32) | w[1];
}

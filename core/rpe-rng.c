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
#if defined(__x86_64__) && defined(__GNUC__)
  /* two SSE square roots (correctly rounded, like every IEEE sqrt) */
  typedef float v4f __attribute__ ((vector_size (16)));
  v4f lo = { x[0], x[1], x[2], x[3] }, hi = { x[4], x[5], x[6], x[7] };
  v8f r;

  lo = __builtin_ia32_sqrtps (lo);
  hi = __builtin_ia32_sqrtps (hi);
  r = (v8f) { lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3] };
  return r;
#else
  /* lane by lane: IEEE's square root is correctly rounded on every CPU, so the same bits */
  v8f r;

  for (int l = 0; l < 8; l++)
    r[l] = __builtin_sqrtf (x[l]);
  return r;
#endif
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

/* Box-Muller of pairs (a, b) into n0 (cos) and n1 (sin), as the body of a function of a, b, n0,
 * n1 over vectors VF, VI, VU of floats, ints and unsigned ints (8 or 16 wide, SP the matching
 * splat), MINUS2LOG and SQRT the width's -2 ln and (IEEE, correctly rounded) square root: one
 * text, so every width and build gives the same bits. */
#define BOX_MULLER_BODY(VF, VI, VU, SP, MINUS2LOG, SQRT)                                      \
  {                                                                                         \
    const VF u1 = (__builtin_convertvector ((VI) (a >> 1), VF) + (VF) SP (0.5f))            \
                  * (VF) SP (4.656612873077392578125e-10f);   /* 2^-31 */                   \
    const VF radius = SQRT (MINUS2LOG (u1));                                                \
    /* angle = 2 pi b / 2^32 = j pi/2 + phi, j the nearest quadrant, |phi| <= pi/4 */       \
    const VU bj = b + (VU) SP (0x20000000u);                                                \
    const VI j = (VI) (bj >> 30);                                                           \
    const VI t = (VI) (b - (bj & (VU) SP (0xc0000000u)));    /* in [-2^29, 2^29) */         \
    const VF phi = __builtin_convertvector (t, VF) * (VF) SP (1.46291807926715968e-9f);     \
    const VF p2 = phi * phi;                                                                \
    VF sn, cs, c, s;                                                                        \
    VI swap, negc, negs;                                                                    \
                                                                                            \
    sn = (VF) SP (-1.9515295891e-4f);                                                       \
    sn = sn * p2 + (VF) SP (8.3321608736e-3f);                                              \
    sn = sn * p2 + (VF) SP (-1.6666654611e-1f);                                             \
    sn = sn * p2 * phi + phi;                                                               \
    cs = (VF) SP (2.443315711809948e-5f);                                                   \
    cs = cs * p2 + (VF) SP (-1.388731625493765e-3f);                                        \
    cs = cs * p2 + (VF) SP (4.166664568298827e-2f);                                         \
    cs = cs * p2 * p2 - (VF) SP (0.5f) * p2 + (VF) SP (1.0f);                               \
    /* quadrant j: cos = c, -s, -c, s; sin = s, c, -s, -c */                                \
    swap = -(j & 1);                                                                        \
    negc = ((j + 1) >> 1 & 1) << 31;                                                        \
    negs = (j >> 1 & 1) << 31;                                                              \
    c = (VF) (((VI) sn & swap) | ((VI) cs & ~swap));                                        \
    s = (VF) (((VI) cs & swap) | ((VI) sn & ~swap));                                        \
    *n0 = radius * (VF) ((VI) c ^ negc);                                                    \
    *n1 = radius * (VF) ((VI) s ^ negs);                                                    \
  }

/* 8 pairs (a, b), the portable build */
static inline __attribute__ ((always_inline)) void
v8_box_muller (v8u a, v8u b, v8f *n0, v8f *n1)
BOX_MULLER_BODY (v8f, v8i, v8u, SPLAT, v8_minus2log, v8_sqrt)

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

/* Philox of blocks b .. b + 7 in 64-bit lanes (4 blocks per vector, a word in the low half of its
 * lane: _mm256_mul_epu32 reads the low halves, so the products need no shifting and blending into
 * 32-bit lanes), packed at the end into the 8-lane words w[0 .. 3] of the blocks in order.  The
 * low counter word must not wrap inside the 8 blocks. */
static inline __attribute__ ((always_inline, target ("avx2"))) void
philox8_lanes64 (uint64_t      b,
                 uint64_t      stream,
                 const __m256i rk0[10],
                 const __m256i rk1[10],
                 v8u           w[4])
{
  const __m256i m0 = _mm256_set1_epi64x (PHILOX_M0), m1 = _mm256_set1_epi64x (PHILOX_M1);
  const __m256i lane = _mm256_setr_epi64x (0, 1, 2, 3);
  const __m256i hi = _mm256_set1_epi64x ((uint32_t) (b >> 32));
  const __m256i s2 = _mm256_set1_epi64x ((uint32_t) stream), s3 = _mm256_set1_epi64x ((uint32_t) (stream >> 32));
  __m256i a0 = _mm256_add_epi64 (_mm256_set1_epi64x ((uint32_t) b), lane), a1 = hi, a2 = s2, a3 = s3;
  __m256i b0 = _mm256_add_epi64 (_mm256_set1_epi64x ((uint32_t) b + 4), lane), b1 = hi, b2 = s2, b3 = s3;
  __m256i a[4], bb[4];

  for (int round = 0; round < 10; round++)
    {
      const __m256i p0 = _mm256_mul_epu32 (a0, m0), p1 = _mm256_mul_epu32 (a2, m1);
      const __m256i q0 = _mm256_mul_epu32 (b0, m0), q1 = _mm256_mul_epu32 (b2, m1);

      a0 = _mm256_xor_si256 (_mm256_xor_si256 (_mm256_srli_epi64 (p1, 32), a1), rk0[round]);
      a1 = p1;
      a2 = _mm256_xor_si256 (_mm256_xor_si256 (_mm256_srli_epi64 (p0, 32), a3), rk1[round]);
      a3 = p0;
      b0 = _mm256_xor_si256 (_mm256_xor_si256 (_mm256_srli_epi64 (q1, 32), b1), rk0[round]);
      b1 = q1;
      b2 = _mm256_xor_si256 (_mm256_xor_si256 (_mm256_srli_epi64 (q0, 32), b3), rk1[round]);
      b3 = q0;
    }
  a[0] = a0, a[1] = a1, a[2] = a2, a[3] = a3;
  bb[0] = b0, bb[1] = b1, bb[2] = b2, bb[3] = b3;
  for (int k = 0; k < 4; k++)
    {
      /* the low halves: blocks 0 1 4 5 | 2 3 6 7, then the 64-bit units in order */
      const __m256 lo = _mm256_shuffle_ps ((__m256) a[k], (__m256) bb[k], 0x88);

      w[k] = (v8u) _mm256_permute4x64_epi64 ((__m256i) lo, 0xd8);
    }
}

static inline __attribute__ ((always_inline, target ("avx2"))) v8f
v8_sqrt_avx2 (v8f x)
{
  return (v8f) _mm256_sqrt_ps ((__m256) x);
}

static inline __attribute__ ((always_inline, target ("avx2"))) v8f
v8_minus2log_avx2 (v8f u)
MINUS2LOG_BODY (v8f, v8i, SPLAT)

/* v8_box_muller in AVX2 registers */
static inline __attribute__ ((always_inline, target ("avx2"))) void
v8_box_muller_avx2 (v8u a, v8u b, v8f *n0, v8f *n1)
BOX_MULLER_BODY (v8f, v8i, v8u, SPLAT, v8_minus2log_avx2, v8_sqrt_avx2)

/* normals_from_words in AVX2 registers: block l gives out[4l .. 4l+3], a 4 x 8 transpose */
static inline __attribute__ ((always_inline, target ("avx2"))) void
normals_from_words_avx2 (const v8u w[4], float *out)
{
  v8f f0, f1, f2, f3;
  __m256 t0, t1, t2, t3, u0, u1, u2, u3;

  v8_box_muller_avx2 (w[0], w[1], &f0, &f1);
  v8_box_muller_avx2 (w[2], w[3], &f2, &f3);
  t0 = _mm256_unpacklo_ps ((__m256) f0, (__m256) f1);   /* per 128-bit lane k: n0[4k] n1[4k] n0[4k+1] n1[4k+1] */
  t1 = _mm256_unpackhi_ps ((__m256) f0, (__m256) f1);   /* n0[4k+2] n1[4k+2] n0[4k+3] n1[4k+3] */
  t2 = _mm256_unpacklo_ps ((__m256) f2, (__m256) f3);
  t3 = _mm256_unpackhi_ps ((__m256) f2, (__m256) f3);
  u0 = (__m256) _mm256_unpacklo_pd ((__m256d) t0, (__m256d) t2);   /* blocks 0 | 4 */
  u1 = (__m256) _mm256_unpackhi_pd ((__m256d) t0, (__m256d) t2);   /* blocks 1 | 5 */
  u2 = (__m256) _mm256_unpacklo_pd ((__m256d) t1, (__m256d) t3);   /* blocks 2 | 6 */
  u3 = (__m256) _mm256_unpackhi_pd ((__m256d) t1, (__m256d) t3);   /* blocks 3 | 7 */
  _mm256_storeu_ps (out, _mm256_permute2f128_ps (u0, u1, 0x20));        /* blocks 0 1 */
  _mm256_storeu_ps (out + 8, _mm256_permute2f128_ps (u2, u3, 0x20));    /* 2 3 */
  _mm256_storeu_ps (out + 16, _mm256_permute2f128_ps (u0, u1, 0x31));   /* 4 5 */
  _mm256_storeu_ps (out + 24, _mm256_permute2f128_ps (u2, u3, 0x31));   /* 6 7 */
}

/* nb batches of 32 normals from block block0 on: two batches per step (their Philox rounds and
 * Box-Muller transforms side by side, two chains of dependent operations at a time), scalar
 * Philox for a batch across the wrap of the low counter word. */
static __attribute__ ((target ("avx2"))) void
normal_batches_avx2 (uint64_t seed, uint64_t stream, uint64_t block0, float *out, size_t nb)
{
  __m256i rk0[10], rk1[10];
  size_t i = 0;

  {
    uint32_t k0 = (uint32_t) seed, k1 = (uint32_t) (seed >> 32);

    for (int round = 0; round < 10; round++)
      {
        rk0[round] = _mm256_set1_epi64x (k0);
        rk1[round] = _mm256_set1_epi64x (k1);
        k0 += PHILOX_W0;
        k1 += PHILOX_W1;
      }
  }
  for (; i + 2 <= nb; i += 2)
    {
      const uint64_t b = block0 + 8 * i;
      v8u w[4], x[4];

      if ((uint32_t) b > UINT32_MAX - 15)
        break;   /* the low counter word wraps inside the step: one batch at a time below */
      philox8_lanes64 (b, stream, rk0, rk1, w);
      philox8_lanes64 (b + 8, stream, rk0, rk1, x);
      normals_from_words_avx2 (w, out + 32 * i);
      normals_from_words_avx2 (x, out + 32 * i + 32);
    }
  for (; i < nb; i++)
    {
      const uint64_t b = block0 + 8 * i;
      v8u w[4];

      if ((uint32_t) b > UINT32_MAX - 7)
        philox8_scalar (seed, stream, b, w);   /* the low counter word wraps inside the batch */
      else
        philox8_lanes64 (b, stream, rk0, rk1, w);
      normals_from_words_avx2 (w, out + 32 * i);
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

/* ---- AVX-512: 32 Philox blocks (128 normals) per step ----
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

static inline __attribute__ ((always_inline, target (AVX512_TARGET))) v16f
v16_sqrt (v16f x)
{
  return (v16f) _mm512_sqrt_ps ((__m512) x);
}

/* v8_box_muller, 16 wide */
static inline __attribute__ ((always_inline, target (AVX512_TARGET))) void
v16_box_muller (v16u a, v16u b, v16f *n0, v16f *n1)
BOX_MULLER_BODY (v16f, v16i, v16u, SPLAT16, v16_minus2log, v16_sqrt)

/* Philox of blocks b .. b + 15 in 64-bit lanes (8 blocks per vector, a word in the low half of its
 * lane, whatever is above it ignored: _mm512_mul_epu32 reads the low halves, so the 32 x 32 -> 64
 * product needs no shifting and blending into 32-bit lanes), packed at the end into the 16-lane
 * words c[0 .. 3] of the blocks in order: the words of the 32-bit lane version, in fewer
 * operations.  The low counter word must not wrap inside the 16 blocks. */
static inline __attribute__ ((always_inline, target (AVX512_TARGET))) void
philox16_lanes64 (uint64_t      b,
                  uint64_t      stream,
                  const __m512i rk0[10],
                  const __m512i rk1[10],
                  __m512i       c[4])
{
  const __m512i m0 = _mm512_set1_epi64 (PHILOX_M0), m1 = _mm512_set1_epi64 (PHILOX_M1);
  const __m512i lane = _mm512_setr_epi64 (0, 1, 2, 3, 4, 5, 6, 7);
  const __m512i hi = _mm512_set1_epi64 ((uint32_t) (b >> 32));
  const __m512i s2 = _mm512_set1_epi64 ((uint32_t) stream), s3 = _mm512_set1_epi64 ((uint32_t) (stream >> 32));
  const __m512i evens = _mm512_setr_epi32 (0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  __m512i a0 = _mm512_add_epi64 (_mm512_set1_epi64 ((uint32_t) b), lane), a1 = hi, a2 = s2, a3 = s3;
  __m512i b0 = _mm512_add_epi64 (_mm512_set1_epi64 ((uint32_t) b + 8), lane), b1 = hi, b2 = s2, b3 = s3;

  for (int round = 0; round < 10; round++)
    {
      const __m512i p0 = _mm512_mul_epu32 (a0, m0), p1 = _mm512_mul_epu32 (a2, m1);
      const __m512i q0 = _mm512_mul_epu32 (b0, m0), q1 = _mm512_mul_epu32 (b2, m1);

      /* 0x96: three-way exclusive or */
      a0 = _mm512_ternarylogic_epi32 (_mm512_srli_epi64 (p1, 32), a1, rk0[round], 0x96);
      a1 = p1;
      a2 = _mm512_ternarylogic_epi32 (_mm512_srli_epi64 (p0, 32), a3, rk1[round], 0x96);
      a3 = p0;
      b0 = _mm512_ternarylogic_epi32 (_mm512_srli_epi64 (q1, 32), b1, rk0[round], 0x96);
      b1 = q1;
      b2 = _mm512_ternarylogic_epi32 (_mm512_srli_epi64 (q0, 32), b3, rk1[round], 0x96);
      b3 = q0;
    }
  c[0] = _mm512_permutex2var_epi32 (a0, evens, b0);
  c[1] = _mm512_permutex2var_epi32 (a1, evens, b1);
  c[2] = _mm512_permutex2var_epi32 (a2, evens, b2);
  c[3] = _mm512_permutex2var_epi32 (a3, evens, b3);
}

/* The 64 normals of 16 blocks (block l gives out[4l .. 4l+3] = n0[l], n1[l], n2[l], n3[l]): a
 * 4 x 16 transpose */
static inline __attribute__ ((always_inline, target (AVX512_TARGET))) void
store_normals64 (float *out,
                 v16f   f0,
                 v16f   f1,
                 v16f   f2,
                 v16f   f3)
{
  const __m512 n0 = (__m512) f0, n1 = (__m512) f1, n2 = (__m512) f2, n3 = (__m512) f3;
  __m512 t0, t1, t2, t3, u0, u1, u2, u3, w0, w1, w2, w3;

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
  _mm512_storeu_ps (out, _mm512_shuffle_f32x4 (w0, w2, 0x88));        /* blocks 0 1 2 3 */
  _mm512_storeu_ps (out + 16, _mm512_shuffle_f32x4 (w0, w2, 0xdd));   /* 4 5 6 7 */
  _mm512_storeu_ps (out + 32, _mm512_shuffle_f32x4 (w1, w3, 0x88));   /* 8 9 10 11 */
  _mm512_storeu_ps (out + 48, _mm512_shuffle_f32x4 (w1, w3, 0xdd));   /* 12 13 14 15 */
}

/* nb batches of 32 normals from block block0 on: 32 blocks (128 normals) per step, the two
 * halves' Philox rounds and Box-Muller transforms side by side (each is a long chain of
 * dependent operations: two at a time keep the vector units busy), then 16 blocks, then the
 * 8-lane path for an odd batch or a step across the wrap of the low counter word. */
static __attribute__ ((target (AVX512_TARGET))) void
normal_batches_avx512 (uint64_t seed, uint64_t stream, uint64_t block0, float *out, size_t nb)
{
  __m512i rk0[10], rk1[10];
  size_t i = 0;

  /* the round keys are the same in every lane */
  {
    uint32_t k0 = (uint32_t) seed, k1 = (uint32_t) (seed >> 32);

    for (int round = 0; round < 10; round++)
      {
        rk0[round] = _mm512_set1_epi64 (k0);
        rk1[round] = _mm512_set1_epi64 (k1);
        k0 += PHILOX_W0;
        k1 += PHILOX_W1;
      }
  }
  for (; i + 4 <= nb; i += 4)
    {
      const uint64_t b = block0 + 8 * i;
      __m512i c[4], d[4];
      v16f f0, f1, f2, f3, g0, g1, g2, g3;

      if ((uint32_t) b > UINT32_MAX - 31)
        break;   /* the low counter word wraps inside the step: the steps below */
      philox16_lanes64 (b, stream, rk0, rk1, c);
      philox16_lanes64 (b + 16, stream, rk0, rk1, d);
      v16_box_muller ((v16u) c[0], (v16u) c[1], &f0, &f1);
      v16_box_muller ((v16u) c[2], (v16u) c[3], &f2, &f3);
      v16_box_muller ((v16u) d[0], (v16u) d[1], &g0, &g1);
      v16_box_muller ((v16u) d[2], (v16u) d[3], &g2, &g3);
      store_normals64 (out + 32 * i, f0, f1, f2, f3);
      store_normals64 (out + 32 * i + 64, g0, g1, g2, g3);
    }
  for (; i + 2 <= nb; i += 2)
    {
      const uint64_t b = block0 + 8 * i;
      __m512i c[4];
      v16f f0, f1, f2, f3;

      if ((uint32_t) b > UINT32_MAX - 15)
        {
          /* the low counter word wraps inside the step: rare, 8 lanes at a time */
          normal_batches_avx2 (seed, stream, b, out + 32 * i, 2);
          continue;
        }
      philox16_lanes64 (b, stream, rk0, rk1, c);
      v16_box_muller ((v16u) c[0], (v16u) c[1], &f0, &f1);
      v16_box_muller ((v16u) c[2], (v16u) c[3], &f2, &f3);
      store_normals64 (out + 32 * i, f0, f1, f2, f3);
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

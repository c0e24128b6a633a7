#include "config.h"

#include <math.h>

#include "rpe-rng.h"

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

/* Box-Muller on two 32-bit words: u1 in (0, 1], u2 in [0, 1). */
static inline void
box_muller (uint32_t a, uint32_t b, double *n0, double *n1)
{
  const double inv = 1.0 / 4294967296.0;
  double u1 = ((double) a + 1.0) * inv;
  double u2 = (double) b * inv;
  double r = sqrt (-2.0 * log (u1));
  double angle = 2.0 * M_PI * u2;

  *n0 = r * cos (angle);
  *n1 = r * sin (angle);
}

void
rpe_rng_normal (uint64_t  seed,
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
      double v[4];

      philox_block (seed, stream, block, w);
      box_muller (w[0], w[1], &v[0], &v[1]);
      box_muller (w[2], w[3], &v[2], &v[3]);
      for (; lane < 4 && j < n; lane++, j++)
        out[j] = (float) v[lane];
    }
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

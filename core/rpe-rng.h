/* rpe-rng.h: counter-based Gaussian noise (Philox4x32-10 + Box-Muller).
 *
 * Element i of stream `stream` under seed `seed` is a pure function of
 * (seed, stream, i): the same seed gives the same draw on every run, in any
 * chunking and on any number of threads.
 *
 * Philox: Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as
 * 1, 2, 3", SC 2011.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Well-known streams, so that e.g. the gate noise does not change when R of
 * the sine noise changes.  Callers may use any other value too. */
enum
{
  RPE_STREAM_SINE = 1,
  RPE_STREAM_CONV,
  RPE_STREAM_GATE,
  RPE_STREAM_QUERIES,
  RPE_STREAM_KEYS,
  RPE_STREAM_VALUES,
  RPE_STREAM_PARAMS,
  RPE_STREAM_PERFORMER,
  RPE_STREAM_LRPE,
};

/* The raw generator: 4 x 32 bits for counter ctr (4 words) under key (2 words). */
void rpe_philox4x32_10 (const uint32_t ctr[4],
                        const uint32_t key[2],
                        uint32_t       out[4]);

/* out[j] = N(0,1) draw number (offset + j) of the stream. */
void rpe_rng_normal (uint64_t  seed,
                     uint64_t  stream,
                     uint64_t  offset,
                     float    *out,
                     size_t    n);

/* rpe_rng_normal on n_workers threads (0: rpe_parallel_threads ()), each drawing a contiguous
 * share (cut at whole batches of 32 draws): the same values as rpe_rng_normal.  Small n stays
 * on the calling thread. */
void rpe_rng_normal_parallel (uint64_t  seed,
                              uint64_t  stream,
                              uint64_t  offset,
                              float    *out,
                              size_t    n,
                              size_t    n_workers);

/* out[j] = U[0,1) draw number (offset + j) of the stream (24-bit resolution). */
void rpe_rng_uniform (uint64_t  seed,
                      uint64_t  stream,
                      uint64_t  offset,
                      float    *out,
                      size_t    n);

/* A uniform 64-bit integer, draw number `index` of the stream (for permutations etc.). */
uint64_t rpe_rng_u64 (uint64_t seed,
                      uint64_t stream,
                      uint64_t index);

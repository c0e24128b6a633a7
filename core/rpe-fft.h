/* rpe-fft.h: real FFT plans over FFTW3 (single precision).
 *
 * Plans are created and destroyed under one process-wide mutex (FFTW's planner
 * is not thread-safe); executing a plan is thread-safe and takes caller arrays
 * (the new-array execute interface, planned FFTW_UNALIGNED so any pointer works).
 */
#pragma once

#include <stddef.h>

#include <fftw3.h>

#include "rpe-status.h"

typedef struct _RpeFftPlan RpeFftPlan;

enum
{
  RPE_FFT_ESTIMATE = 0,      /* plan quickly (tests, one-off sizes) */
  RPE_FFT_MEASURE  = 1 << 0, /* plan carefully (hot loops reused many times) */
  RPE_FFT_ALIGNED  = 1 << 1, /* the caller promises 16-byte aligned arrays (rpe_alloc's are)
                              * for every execute: FFTW may use its SIMD codelets */
};

/* A plan for real transforms of length n (n >= 1): forward r2c (n reals ->
 * n/2+1 complex) and inverse c2r (unnormalised: inverse(forward(x)) = n x). */
RpeFftPlan *rpe_fft_plan_new  (size_t     n,
                               unsigned   flags,
                               RpeStatus *status);
void        rpe_fft_plan_free (RpeFftPlan *plan);
size_t      rpe_fft_plan_size (const RpeFftPlan *plan);

void rpe_fft_forward (const RpeFftPlan *plan,
                      const float      *in,
                      fftwf_complex    *out);
/* Destroys `in` (FFTW c2r semantics). */
void rpe_fft_inverse (const RpeFftPlan *plan,
                      fftwf_complex    *in,
                      float            *out);

/* Smallest n' >= n whose only prime factors are 2, 3, 5 and 7 (fast for FFTW). */
size_t rpe_fft_good_size (size_t n);

/* Complex-to-complex transforms of length n (n >= 1), out of place; both
 * directions unnormalised (backward(forward(x)) = n x).  Same locking and
 * alignment rules as the real plans. */
typedef struct _RpeFftC2cPlan RpeFftC2cPlan;

RpeFftC2cPlan *rpe_fft_c2c_plan_new  (size_t     n,
                                      unsigned   flags,
                                      RpeStatus *status);
void           rpe_fft_c2c_plan_free (RpeFftC2cPlan *plan);
void           rpe_fft_c2c_forward   (const RpeFftC2cPlan *plan,
                                      fftwf_complex       *in,
                                      fftwf_complex       *out);
void           rpe_fft_c2c_backward  (const RpeFftC2cPlan *plan,
                                      fftwf_complex       *in,
                                      fftwf_complex       *out);

/* Split-format complex transforms of length n (n >= 1): the real and imaginary parts
 * in separate arrays, so two real blocks of one buffer transform without being
 * interleaved first, and the two real outputs of a transform land in two arrays.
 * Out of place, unnormalised; same locking and alignment rules as the other plans
 * (with RPE_FFT_ALIGNED every array must be 64-byte aligned, like rpe_alloc's).
 *
 * Every execute must pass its arrays at the plan's separations: ii - ri = in_sep and
 * io - ro = out_sep floats (FFTW's new-array execute requires the planned separations; some
 * of its plans, the length-1 one for instance, read the imaginary part at the planned offset).
 * rpe_fft_split_plan_new plans both as n rounded up to 16; the inputs may overlap (a block
 * and the next one of a buffer, in_sep < n). */
typedef struct _RpeFftSplitPlan RpeFftSplitPlan;

RpeFftSplitPlan *rpe_fft_split_plan_new  (size_t     n,
                                          unsigned   flags,
                                          RpeStatus *status);
/* The same with the separations given (>= 1; multiples of 16 with RPE_FFT_ALIGNED). */
RpeFftSplitPlan *rpe_fft_split_plan_new_sep (size_t     n,
                                             size_t     in_sep,
                                             size_t     out_sep,
                                             unsigned   flags,
                                             RpeStatus *status);
size_t           rpe_fft_split_plan_in_sep  (const RpeFftSplitPlan *plan);
size_t           rpe_fft_split_plan_out_sep (const RpeFftSplitPlan *plan);
void             rpe_fft_split_plan_free (RpeFftSplitPlan *plan);
/* (ro + i io) = DFT (ri + i ii), exponent sign -1 */
void             rpe_fft_split_forward   (const RpeFftSplitPlan *plan,
                                          float                 *ri,
                                          float                 *ii,
                                          float                 *ro,
                                          float                 *io);
/* (ro + i io) = n IDFT (ri + i ii), exponent sign +1 */
void             rpe_fft_split_backward  (const RpeFftSplitPlan *plan,
                                          float                 *ri,
                                          float                 *ii,
                                          float                 *ro,
                                          float                 *io);

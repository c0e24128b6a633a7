#include "config.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>

#include "rpe-fft.h"

struct _RpeFftPlan
{
  size_t     n;
  fftwf_plan forward;
  fftwf_plan inverse;
};
_Static_assert (offsetof (struct _RpeFftPlan, n) == 0, "plan_struct_new sets the length first");

static pthread_mutex_t planner_lock = PTHREAD_MUTEX_INITIALIZER;

/* What every plan constructor starts with: the length checked, the FFTW flags of `flags`, and
 * the zeroed plan struct of `size` bytes (its first member is the size_t length, set here). */
static void *
plan_struct_new (size_t     n,
                 size_t     size,
                 unsigned   flags,
                 unsigned  *fftw_flags,
                 RpeStatus *status)
{
  size_t *plan;

  *fftw_flags = ((flags & RPE_FFT_ALIGNED) ? 0 : FFTW_UNALIGNED)
                | ((flags & RPE_FFT_MEASURE) ? FFTW_MEASURE : FFTW_ESTIMATE);
  if (n == 0 || n > (size_t) 1 << 30)
    {
      *status = RPE_ERROR_INVALID_ARGUMENT;
      return NULL;
    }
  if ((plan = calloc (1, size)) == NULL)
    {
      *status = RPE_ERROR_SYSTEM_MEMORY;
      return NULL;
    }
  *plan = n;
  return plan;
}

/* Destroys a plan pair (either may be NULL) under the planner lock (FFTW's planner is not thread-safe). */
static void
destroy_plans (fftwf_plan a,
               fftwf_plan b)
{
  pthread_mutex_lock (&planner_lock);
  if (a != NULL)
    fftwf_destroy_plan (a);
  if (b != NULL)
    fftwf_destroy_plan (b);
  pthread_mutex_unlock (&planner_lock);
}

RpeFftPlan *
rpe_fft_plan_new (size_t     n,
                  unsigned   flags,
                  RpeStatus *status)
{
  RpeFftPlan *plan;
  float *re = NULL;
  fftwf_complex *co = NULL;
  unsigned fftw_flags;

  if ((plan = plan_struct_new (n, sizeof *plan, flags, &fftw_flags, status)) == NULL)
    return NULL;

  pthread_mutex_lock (&planner_lock);
  re = fftwf_alloc_real (n);
  co = fftwf_alloc_complex (n / 2 + 1);
  if (re != NULL && co != NULL)
    {
      plan->forward = fftwf_plan_dft_r2c_1d ((int) n, re, co, fftw_flags);
      plan->inverse = fftwf_plan_dft_c2r_1d ((int) n, co, re, fftw_flags | FFTW_DESTROY_INPUT);
    }
  fftwf_free (re);
  fftwf_free (co);
  pthread_mutex_unlock (&planner_lock);

  if (plan->forward == NULL || plan->inverse == NULL)
    {
      rpe_fft_plan_free (plan);
      *status = RPE_ERROR_INTERNAL;
      return NULL;
    }
  *status = RPE_OK;
  return plan;
}

void
rpe_fft_plan_free (RpeFftPlan *plan)
{
  if (plan == NULL)
    return;
  destroy_plans (plan->forward, plan->inverse);
  free (plan);
}

size_t
rpe_fft_plan_size (const RpeFftPlan *plan)
{
  return plan->n;
}

void
rpe_fft_forward (const RpeFftPlan *plan,
                 const float      *in,
                 fftwf_complex    *out)
{
  fftwf_execute_dft_r2c (plan->forward, (float *) in, out);
}

void
rpe_fft_inverse (const RpeFftPlan *plan,
                 fftwf_complex    *in,
                 float            *out)
{
  fftwf_execute_dft_c2r (plan->inverse, in, out);
}

size_t
rpe_fft_good_size (size_t n)
{
  if (n <= 1)
    return 1;
  for (size_t m = n;; m++)
    {
      size_t r = m;

      while (r % 2 == 0) r /= 2;
      while (r % 3 == 0) r /= 3;
      while (r % 5 == 0) r /= 5;
      while (r % 7 == 0) r /= 7;
      if (r == 1)
        return m;
    }
}

struct _RpeFftC2cPlan
{
  size_t     n;
  fftwf_plan forward;
  fftwf_plan backward;
};
_Static_assert (offsetof (struct _RpeFftC2cPlan, n) == 0, "plan_struct_new sets the length first");

RpeFftC2cPlan *
rpe_fft_c2c_plan_new (size_t     n,
                      unsigned   flags,
                      RpeStatus *status)
{
  RpeFftC2cPlan *plan;
  fftwf_complex *a = NULL, *b = NULL;
  unsigned fftw_flags;

  if ((plan = plan_struct_new (n, sizeof *plan, flags, &fftw_flags, status)) == NULL)
    return NULL;

  pthread_mutex_lock (&planner_lock);
  a = fftwf_alloc_complex (n);
  b = fftwf_alloc_complex (n);
  if (a != NULL && b != NULL)
    {
      plan->forward = fftwf_plan_dft_1d ((int) n, a, b, FFTW_FORWARD, fftw_flags);
      plan->backward = fftwf_plan_dft_1d ((int) n, a, b, FFTW_BACKWARD, fftw_flags);
    }
  fftwf_free (a);
  fftwf_free (b);
  pthread_mutex_unlock (&planner_lock);

  if (plan->forward == NULL || plan->backward == NULL)
    {
      rpe_fft_c2c_plan_free (plan);
      *status = RPE_ERROR_INTERNAL;
      return NULL;
    }
  *status = RPE_OK;
  return plan;
}

void
rpe_fft_c2c_plan_free (RpeFftC2cPlan *plan)
{
  if (plan == NULL)
    return;
  destroy_plans (plan->forward, plan->backward);
  free (plan);
}

void
rpe_fft_c2c_forward (const RpeFftC2cPlan *plan,
                     fftwf_complex       *in,
                     fftwf_complex       *out)
{
  fftwf_execute_dft (plan->forward, in, out);
}

void
rpe_fft_c2c_backward (const RpeFftC2cPlan *plan,
                      fftwf_complex       *in,
                      fftwf_complex       *out)
{
  fftwf_execute_dft (plan->backward, in, out);
}

/* One forward plan serves both directions: swapping the real and imaginary parts
 * of input and output turns the forward DFT into the backward one (FFTW manual,
 * "Guru Complex DFTs"). */
struct _RpeFftSplitPlan
{
  size_t     n;
  size_t     in_sep, out_sep;   /* ii - ri and io - ro of every execute */
  fftwf_plan forward;
  fftwf_plan backward;          /* planned on the swapped arrays (separations negated) */
};
_Static_assert (offsetof (struct _RpeFftSplitPlan, n) == 0, "plan_struct_new sets the length first");

RpeFftSplitPlan *
rpe_fft_split_plan_new_sep (size_t     n,
                            size_t     in_sep,
                            size_t     out_sep,
                            unsigned   flags,
                            RpeStatus *status)
{
  RpeFftSplitPlan *plan;
  float *a = NULL;
  unsigned fftw_flags;
  size_t in_len, total;

  if (in_sep == 0 || out_sep == 0 || in_sep > (size_t) 1 << 30 || out_sep > (size_t) 1 << 30
      || ((flags & RPE_FFT_ALIGNED) && (in_sep % 16 != 0 || out_sep % 16 != 0)))
    {
      *status = RPE_ERROR_INVALID_ARGUMENT;
      return NULL;
    }
  if ((plan = plan_struct_new (n, sizeof *plan, flags, &fftw_flags, status)) == NULL)
    return NULL;
  plan->in_sep = in_sep;
  plan->out_sep = out_sep;

  pthread_mutex_lock (&planner_lock);
  /* the inputs at [0, in_sep + n), the outputs after them (64-byte aligned), as the executes
   * will place them: FFTW's new-array execute requires the planned separations */
  in_len = (in_sep + n + 15) & ~(size_t) 15;
  total = in_len + out_sep + n;
  a = fftwf_alloc_real (total);
  if (a != NULL)
    {
      fftwf_iodim dim = { (int) n, 1, 1 };
      float *b = a + in_len;

      plan->forward = fftwf_plan_guru_split_dft (1, &dim, 0, NULL, a, a + in_sep, b, b + out_sep, fftw_flags);
      /* the inverse is the forward with the real and imaginary parts swapped: its own plan,
       * whose separations are the negated ones */
      plan->backward = fftwf_plan_guru_split_dft (1, &dim, 0, NULL, a + in_sep, a, b + out_sep, b, fftw_flags);
    }
  fftwf_free (a);
  pthread_mutex_unlock (&planner_lock);

  if (plan->forward == NULL || plan->backward == NULL)
    {
      rpe_fft_split_plan_free (plan);
      *status = RPE_ERROR_INTERNAL;
      return NULL;
    }
  *status = RPE_OK;
  return plan;
}

RpeFftSplitPlan *
rpe_fft_split_plan_new (size_t     n,
                        unsigned   flags,
                        RpeStatus *status)
{
  const size_t s = (n + 15) & ~(size_t) 15;

  if (n == 0 || n > (size_t) 1 << 30)
    {
      *status = RPE_ERROR_INVALID_ARGUMENT;
      return NULL;
    }
  return rpe_fft_split_plan_new_sep (n, s, s, flags, status);
}

size_t
rpe_fft_split_plan_in_sep (const RpeFftSplitPlan *plan)
{
  return plan->in_sep;
}

size_t
rpe_fft_split_plan_out_sep (const RpeFftSplitPlan *plan)
{
  return plan->out_sep;
}

void
rpe_fft_split_plan_free (RpeFftSplitPlan *plan)
{
  if (plan == NULL)
    return;
  destroy_plans (plan->forward, plan->backward);
  free (plan);
}

void
rpe_fft_split_forward (const RpeFftSplitPlan *plan,
                       float                 *ri,
                       float                 *ii,
                       float                 *ro,
                       float                 *io)
{
  fftwf_execute_split_dft (plan->forward, ri, ii, ro, io);
}

void
rpe_fft_split_backward (const RpeFftSplitPlan *plan,
                        float                 *ri,
                        float                 *ii,
                        float                 *ro,
                        float                 *io)
{
  fftwf_execute_split_dft (plan->backward, ii, ri, io, ro);
}

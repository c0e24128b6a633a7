/* rpe-attention-dense.c: full attention rows of dot logits, logits and softmax fused in
 * registers and L1 (the fast path of rpe_attention_rows_parallel, see
 * rpe-attention-private.h).
 *
 * The keys of the head are packed once per call into panels of NR keys, (R, NR) each, so a
 * register tile of MR rows x NR keys reads its NR key components of feature r as two
 * contiguous vectors and each query component as one broadcast (no per-block repacking
 * and no separate beta pass, as a BLAS call per block would do).  A block of about 128 K
 * logits is computed panel by panel (a panel stays in L1 across the block's strips of MR
 * rows) into a scratch that stays in L2; the row max is taken from the tiles as they are
 * written; then each row, in L1, gets exp (x - max) and its sum, and is written scaled into
 * the output once (non-temporal stores when the output is much larger than the caches).
 *
 * Three builds of the same kernel (rpe-attention-dense-kernel.h): AVX-512F (16 lanes,
 * tile 12 x 32), AVX2+FMA (8 lanes, 6 x 16) and the baseline (8 lanes, 4 x 16), chosen at
 * run time; RPE_ATTENTION_KERNEL=avx512|avx2|generic forces one (tests use it to check each
 * against the reference).  Every row is computed the same way whatever its block or
 * worker, so the result does not depend on the blocking or the number of threads.
 *
 * The same engine in a plain mode (_rpe_dense_product_rows: alpha q k^T, no softmax, no
 * mask; the empirical templates of rpe-template.c): the tiles go from the registers
 * straight into the output rows, non-temporal when the output is large. */
#include "config.h"

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DENSE_HAVE_X86 1
#endif

#include "rpe-alloc.h"
#include "rpe-attention.h"
#include "rpe-attention-private.h"
#include "rpe-parallel.h"

#pragma GCC diagnostic ignored "-Wpsabi"

typedef struct
{
  size_t             n, r, npad, ldq, bm, n_blocks, m0, n_rows;
  const float       *q;        /* the head's first query row (m = 0), rows ldq apart */
  const float       *kp;       /* packed keys (npad / NR, R, NR) */
  float             *kpw;      /* the same, for the packing */
  const float       *k;        /* the head's first key row, rows ldq apart */
  size_t             n_panels, pack_chunks;
  atomic_size_t      pack_next, pack_done;
  float              scale;
  bool               plain;    /* scale q k^T only (no softmax, no mask) */
  bool               causal, stream;
  int                isa;
  const RpeLogitsSpec *spec;
  size_t             head;
  float             *out;
  const RpeMonitor  *monitor;
  atomic_size_t      next, done;
  RpeStatus          status[256];
} DenseJob;

/* panels of keys packed per claim */
#define PACK_CHUNK 4

enum
{
  ISA_GENERIC,
  ISA_AVX2,
  ISA_AVX512,
};

/* ---- the baseline build ---- */
#define DK_W 8
#define DK_MR 4
#define DK_ATTR
#define DK_NAME(x) dense_ ## x ## _generic
#define DK_STREAM 0
typedef float dense_max_generic_t __attribute__ ((vector_size (32)));
static inline __attribute__ ((always_inline)) dense_max_generic_t
dense_max_generic (dense_max_generic_t a, dense_max_generic_t b)
{
  typedef int32_t vi __attribute__ ((vector_size (32)));
  vi m = a > b;

  return (dense_max_generic_t) (((vi) a & m) | ((vi) b & ~m));
}
#define DK_MAX(a, b) dense_max_generic (a, b)
#include "rpe-attention-dense-kernel.h"
#undef DK_W
#undef DK_MR
#undef DK_ATTR
#undef DK_NAME
#undef DK_STREAM
#undef DK_MAX

#ifdef DENSE_HAVE_X86
/* ---- AVX2 + FMA ---- */
#define DK_W 8
#define DK_MR 6
#define DK_ATTR __attribute__ ((target ("avx2,fma")))
#define DK_NAME(x) dense_ ## x ## _avx2
#define DK_MAX(a, b) _mm256_max_ps (a, b)
#define DK_STREAM 1
#define DK_STREAM_STORE(p, v) _mm256_stream_ps (p, v)
#define DK_SFENCE() _mm_sfence ()
#include "rpe-attention-dense-kernel.h"
#undef DK_W
#undef DK_MR
#undef DK_ATTR
#undef DK_NAME
#undef DK_MAX
#undef DK_STREAM
#undef DK_STREAM_STORE
#undef DK_SFENCE

/* ---- AVX-512F ---- */
#define DK_W 16
#define DK_MR 12
#define DK_ATTR __attribute__ ((target ("avx512f,avx2,fma")))
#define DK_NAME(x) dense_ ## x ## _avx512
#define DK_MAX(a, b) _mm512_max_ps (a, b)
#define DK_STREAM 1
#define DK_STREAM_STORE(p, v) _mm512_stream_ps (p, v)
#define DK_SFENCE() _mm_sfence ()
#define DK_EXP_SCALEF 1
#include "rpe-attention-dense-kernel.h"
#undef DK_EXP_SCALEF
#undef DK_W
#undef DK_MR
#undef DK_ATTR
#undef DK_NAME
#undef DK_MAX
#undef DK_STREAM
#undef DK_STREAM_STORE
#undef DK_SFENCE
#endif

static int
dense_isa (void)
{
  const char *force = getenv ("RPE_ATTENTION_KERNEL");
  int best = ISA_GENERIC;

#ifdef DENSE_HAVE_X86
  __builtin_cpu_init ();
  if (__builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma"))
    best = ISA_AVX2;
  if (best == ISA_AVX2 && __builtin_cpu_supports ("avx512f"))
    best = ISA_AVX512;
#endif
  if (force != NULL)
    {
      if (strcmp (force, "generic") == 0)
        return ISA_GENERIC;
      if (strcmp (force, "avx2") == 0 && best >= ISA_AVX2)
        return ISA_AVX2;
    }
  return best;
}

const char *
_rpe_attention_dense_kernel_name (void)
{
  int isa = dense_isa ();

  return isa == ISA_AVX512 ? "avx512" : isa == ISA_AVX2 ? "avx2" : "generic";
}

/* lanes and tile rows of an instruction set */
static size_t
isa_nr (int isa)
{
  return isa == ISA_AVX512 ? 32 : 16;
}

static size_t
isa_mr (int isa)
{
  return isa == ISA_AVX512 ? 12 : isa == ISA_AVX2 ? 6 : 4;
}

static bool
run_block (const DenseJob *job, size_t m, size_t nr, float *scratch, float *qa, float *rmax, float *out)
{
#ifdef DENSE_HAVE_X86
  if (job->isa == ISA_AVX512)
    return dense_block_avx512 (job, m, nr, scratch, qa, rmax, out);
  if (job->isa == ISA_AVX2)
    return dense_block_avx2 (job, m, nr, scratch, qa, rmax, out);
#endif
  return dense_block_generic (job, m, nr, scratch, qa, rmax, out);
}

static void
run_product_block (const DenseJob *job, size_t m, size_t nr, float *qa, float *out)
{
#ifdef DENSE_HAVE_X86
  if (job->isa == ISA_AVX512)
    {
      dense_product_block_avx512 (job, m, nr, qa, out);
      return;
    }
  if (job->isa == ISA_AVX2)
    {
      dense_product_block_avx2 (job, m, nr, qa, out);
      return;
    }
#endif
  dense_product_block_generic (job, m, nr, qa, out);
}

/* Packs panels p0 .. p1 - 1 of n keys (rows ldk apart): kp[p][r][j] = k[(p NR + j) ldk + r],
 * zero past the last key; the key rows (usually not cached) two panels on are requested early. */
static void
pack_panels (int isa, const float *k, size_t ldk, size_t n, size_t R, float *kp, size_t p0, size_t p1)
{
  const size_t nr_panel = isa_nr (isa);

  for (size_t p = p0; p < p1; p++)
    for (size_t j = 0; j < nr_panel; j++)
      {
        size_t key = p * nr_panel + j, ahead = key + 2 * nr_panel;
        float *dst = kp + p * R * nr_panel + j;

        if (ahead < n && ahead < p1 * nr_panel)
          for (size_t r = 0; r < R; r += 16)
            __builtin_prefetch (k + ahead * ldk + r);
        if (key < n)
          {
            const float *src = k + key * ldk;

            for (size_t r = 0; r < R; r++)
              dst[r * nr_panel] = src[r];
          }
        else
          for (size_t r = 0; r < R; r++)
            dst[r * nr_panel] = 0.0f;
      }
}

static void
pack_keys (const DenseJob *job, size_t p0, size_t p1)
{
  pack_panels (job->isa, job->k, job->ldq, job->n, job->r, job->kpw, p0, p1);
}

static void
dense_worker (size_t worker, size_t n_workers, void *data)
{
  DenseJob *job = data;
  const size_t mr = isa_mr (job->isa), strips = (job->bm + mr - 1) / mr;
  float *scratch = NULL, *qa = NULL, *rmax = NULL;
  RpeStatus st = RPE_OK;
  size_t b;

  /* the keys are packed by the workers together, in chunks of panels handed out in order;
   * a worker then waits for the chunks the others are still packing (a worker that could
   * not be started packs nothing, so nobody waits for it) */
  while ((b = atomic_fetch_add (&job->pack_next, 1)) < job->pack_chunks)
    {
      size_t p0 = b * PACK_CHUNK, p1 = p0 + PACK_CHUNK < job->n_panels ? p0 + PACK_CHUNK : job->n_panels;

      pack_keys (job, p0, p1);
      atomic_fetch_add (&job->pack_done, 1);
    }
  while (atomic_load (&job->pack_done) < job->pack_chunks)
    sched_yield ();

  /* the plain product stores its tiles straight into the output: no scratch, no maxima */
  qa = rpe_alloc (strips * mr * job->r, sizeof (float), &st);
  if (qa != NULL && !job->plain)
    scratch = rpe_alloc (strips * mr * job->npad, sizeof (float), &st);
  if (scratch != NULL)
    rmax = rpe_alloc (strips * mr * 16, sizeof (float), &st);
  /* blocks handed out in order to whichever worker is free (a causal block's cost grows
   * with its rows); the values do not depend on who computes a block */
  while (qa != NULL && (job->plain || rmax != NULL) && st == RPE_OK
         && (b = atomic_fetch_add (&job->next, 1)) < job->n_blocks)
    {
      size_t r0 = b * job->bm, nr = job->n_rows - r0 < job->bm ? job->n_rows - r0 : job->bm;
      float *o = job->out + r0 * job->n;

      if (rpe_monitor_cancelled (job->monitor))
        {
          st = RPE_ERROR_CANCELLED;
          break;
        }
      if (job->plain)
        run_product_block (job, job->m0 + r0, nr, qa, o);
      else if (!run_block (job, job->m0 + r0, nr, scratch, qa, rmax, o))
        st = rpe_attention_rows (job->spec, job->head, job->m0 + r0, nr, job->causal, o, NULL);
      b = atomic_fetch_add (&job->done, 1) + 1;
      if (worker == 0)
        rpe_monitor_progress (job->monitor, (double) b / (double) job->n_blocks);
    }
  rpe_free (rmax);
  rpe_free (qa);
  rpe_free (scratch);
  job->status[worker] = st;
}

/* The rows m0 .. m0 + n_rows - 1 of either mode (see rpe-attention-private.h): q and k the
 * first query and key rows (m = 0), ld floats apart; spec and head for the softmax mode's
 * reference path (NULL for the plain product). */
static RpeStatus
dense_run (const float         *q,
           const float         *k,
           size_t               ld,
           size_t               n,
           size_t               R,
           float                scale,
           bool                 plain,
           bool                 causal,
           const RpeLogitsSpec *spec,
           size_t               head,
           size_t               m0,
           size_t               n_rows,
           float               *out,
           const RpeMonitor    *monitor)
{
  DenseJob *job;
  RpeStatus st = RPE_OK;
  size_t nr_panel, mr, npad, packed, workers, rows_target, work;
  float *kp;

  job = rpe_alloc0 (1, sizeof *job, &st);
  if (job == NULL)
    return st;
  job->isa = dense_isa ();
  nr_panel = isa_nr (job->isa);
  mr = isa_mr (job->isa);
  if (!rpe_size_add (n, nr_panel - 1, &npad) || !rpe_size_mul (npad / nr_panel * nr_panel, R, &packed))
    {
      rpe_free (job);
      return RPE_ERROR_OVERFLOW;
    }
  npad = npad / nr_panel * nr_panel;
  kp = rpe_alloc (packed, sizeof (float), &st);
  if (kp == NULL)
    {
      rpe_free (job);
      return st;
    }
  job->n = n;
  job->r = R;
  job->npad = npad;
  job->ldq = ld;
  job->q = q;
  job->kp = job->kpw = kp;
  job->k = k;
  job->n_panels = npad / nr_panel;
  job->pack_chunks = (job->n_panels + PACK_CHUNK - 1) / PACK_CHUNK;
  atomic_init (&job->pack_next, 0);
  atomic_init (&job->pack_done, 0);
  job->scale = scale;
  job->plain = plain;
  job->causal = causal;
  /* non-temporal stores when the output is far larger than the caches (the rows will not
   * be read back soon); a slab the caller writes out next stays cached */
  job->stream = n_rows * n >= ((size_t) 8 << 20) / sizeof (float);
  job->spec = spec;
  job->head = head;
  job->m0 = m0;
  job->n_rows = n_rows;
  job->out = out;
  job->monitor = monitor;
  /* blocks of about 128 K logits (the scratch stays in L2), whole strips of mr rows, at
   * least 4 blocks per worker when the rows allow it */
  workers = rpe_parallel_threads ();
  if (workers > sizeof job->status / sizeof job->status[0])
    workers = sizeof job->status / sizeof job->status[0];
  /* a small plain product (under about 4 M multiply-adds) is not worth a thread */
  if (plain && rpe_size_mul (n_rows, n, &work) && rpe_size_mul (work, R, &work) && work < ((size_t) 1 << 22))
    workers = 1;
  job->bm = ((size_t) 1 << 17) / npad / mr * mr;
  rows_target = (n_rows + 4 * workers - 1) / (4 * workers);
  rows_target = (rows_target + mr - 1) / mr * mr;
  if (job->bm > rows_target)
    job->bm = rows_target;
  if (job->bm > 8 * mr)
    job->bm = 8 * mr;
  if (job->bm < mr)
    job->bm = mr;
  job->n_blocks = (n_rows + job->bm - 1) / job->bm;
  if (workers > job->n_blocks)
    workers = job->n_blocks;
  atomic_init (&job->next, 0);
  atomic_init (&job->done, 0);
  rpe_parallel_run (workers, dense_worker, job);
  for (size_t w = 0; w < workers; w++)
    if (job->status[w] != RPE_OK && (st == RPE_OK || job->status[w] == RPE_ERROR_CANCELLED))
      st = job->status[w];
  rpe_free (kp);
  rpe_free (job);
  return st;
}

RpeStatus
_rpe_attention_dense_rows (const RpeLogitsSpec *spec,
                           size_t               head,
                           size_t               m0,
                           size_t               n_rows,
                           bool                 causal,
                           float               *out,
                           const RpeMonitor    *monitor)
{
  return dense_run (spec->q + head * spec->d, spec->k + head * spec->d, spec->n_heads * spec->d, spec->n,
                    spec->d, (float) (1.0 / sqrt ((double) spec->d)), false, causal, spec, head, m0, n_rows,
                    out, monitor);
}

RpeStatus
_rpe_dense_product_rows (const float      *q,
                         const float      *k,
                         size_t            ld,
                         size_t            n,
                         size_t            r,
                         float             alpha,
                         size_t            m0,
                         size_t            n_rows,
                         float            *out,
                         const RpeMonitor *monitor)
{
  size_t end;

  if (q == NULL || k == NULL || out == NULL || n == 0 || r == 0 || ld < r || n_rows == 0
      || !rpe_size_add (m0, n_rows, &end) || end > n)
    return RPE_ERROR_INVALID_ARGUMENT;
  return dense_run (q, k, ld, n, r, alpha, true, false, NULL, 0, m0, n_rows, out, monitor);
}

/* ---- floors for rpe bench ---- */

typedef struct
{
  float  *out;
  size_t  count;
  int     isa;
  float  *exp_buf;    /* per worker 4096 floats, for the exp floor */
} FloorJob;

static void
fill_worker (size_t worker, size_t n_workers, void *data)
{
  FloorJob *job = data;
  size_t a = job->count * worker / n_workers, b = job->count * (worker + 1) / n_workers;
  float *p = job->out + a;
  size_t len = b - a, i = 0;

#ifdef DENSE_HAVE_X86
  if (job->isa != ISA_GENERIC)
    {
      /* to the first 64-byte boundary, then non-temporal stores, as the kernel writes */
      for (; i < len && ((uintptr_t) (p + i) % 64) != 0; i++)
        p[i] = 0.0f;
      if (job->isa == ISA_AVX512)
        dense_fill_avx512 (p + i, (len - i) / 16 * 16);
      else
        dense_fill_avx2 (p + i, (len - i) / 16 * 16);
      i += (len - i) / 16 * 16;
    }
#endif
  for (; i < len; i++)
    p[i] = 0.0f;
}

void
_rpe_attention_dense_write_floor (float  *out,
                                  size_t  count)
{
  FloorJob job = { out, count, dense_isa (), NULL };

  rpe_parallel_run (rpe_parallel_threads (), fill_worker, &job);
}

static void
exp_worker (size_t worker, size_t n_workers, void *data)
{
  FloorJob *job = data;
  size_t a = job->count * worker / n_workers, b = job->count * (worker + 1) / n_workers;
  float *x = job->exp_buf + worker * 4096;

  for (size_t i = 0; i < 4096; i++)
    x[i] = -(float) (i % 97) * 0.25f;
  for (size_t done = a; done < b; done += 4096)
    {
      size_t len = b - done < 4096 ? b - done : 4096;

#ifdef DENSE_HAVE_X86
      if (job->isa == ISA_AVX512)
        dense_exp_rows_avx512 (x, len);
      else if (job->isa == ISA_AVX2)
        dense_exp_rows_avx2 (x, len);
      else
#endif
        dense_exp_rows_generic (x, len);
    }
}

RpeStatus
_rpe_attention_dense_exp_floor (size_t count)
{
  size_t workers = rpe_parallel_threads ();
  RpeStatus st = RPE_OK;
  FloorJob job = { NULL, count, dense_isa (), rpe_alloc (workers * 4096, sizeof (float), &st) };

  if (job.exp_buf == NULL)
    return st;
  rpe_parallel_run (workers, exp_worker, &job);
  rpe_free (job.exp_buf);
  return RPE_OK;
}

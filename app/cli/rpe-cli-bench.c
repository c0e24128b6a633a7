/* rpe-cli-bench.c: `rpe bench`, timings of the numeric core (issue 6).
 *
 * Each workload runs once as a warm-up, then `repeats` times; the table shows
 * the median, min and max wall-clock time.  Peak memory is the increase of the
 * process's peak resident set (VmHWM in /proc/self/status) over its resident
 * set just before the workload's buffers were allocated, with the peak reset
 * by writing "5" to /proc/self/clear_refs (Linux >= 4.0); it covers the inputs,
 * the outputs and every scratch buffer, and is shown next to the size of the
 * inputs plus outputs.  When the reset is not possible the column is empty.
 * Buffers of 1 MiB and more are fresh mappings (M_MMAP_THRESHOLD), so a
 * workload's peak is not hidden by heap pages an earlier one left resident.
 *
 * Threads: OpenBLAS uses its default (every core unless OPENBLAS_NUM_THREADS
 * says otherwise); the core's own threaded parts use rpe_parallel_threads().
 * The sgemm column is the median rate of bare sgemm calls of the workload's
 * shape, measured right after it (medians on both sides, so a loaded machine
 * slows both alike).  Workload 6 times the explorer's live loop headlessly:
 * parameter change -> worker job -> rendered view images (median, p95).
 */
#include "config.h"

#include <malloc.h>
#include <math.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <glib/gi18n.h>
#include <glib/gstdio.h>

#include <fftw3.h>
#include <cblas.h>

#include <cairo.h>

#include "rpe-alloc.h"
#include "rpe-attention.h"
#include "rpe-attention-private.h"
#include "rpe-blas-notice.h"
#include "rpe-conv-spe.h"
#include "rpe-checkpoint.h"
#include "rpe-colormap.h"
#include "rpe-compute.h"
#include "rpe-explorer-state.h"
#include "rpe-file.h"
#include "rpe-gemm-private.h"
#include "rpe-kernels.h"
#include "rpe-plot-render.h"
#include "rpe-cli.h"
#include "rpe-linear-attention.h"
#include "rpe-parallel.h"
#include "rpe-rng.h"
#include "rpe-skew.h"
#include "rpe-spe.h"
#include "rpe-tensor.h"

#define MAX_REPEATS 1000

typedef struct
{
  char    name[64];
  char    size[64];
  double  median, min, max;   /* seconds */
  int     runs;
  double  peak_mb;            /* < 0: not measured */
  double  io_mb;              /* inputs + outputs, < 0: n/a */
  double  gflops;             /* < 0: n/a */
  double  ref_gflops;         /* bare sgemm of the same shape, < 0: n/a */
  double  best_gflops;        /* the run's best square sgemm (the "%best" column), < 0: n/a */
  char    note[96];
} BenchRow;

typedef struct
{
  gboolean  quick;
  int       repeats;
  char     *only;
  GArray   *rows;             /* BenchRow */
  gboolean  hwm_reset;
  double    rss0;
  gboolean  failed;
  double    best_sgemm;         /* GFLOP/s of the best square sgemm of this run, < 0: n/a */
  double    sine_floor;         /* seconds of the last sine floor measured, < 0: n/a */
} Bench;

typedef RpeStatus (*WorkFunc) (void *data);

static double
now (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* kB value of a "Key:   123 kB" line of /proc/self/status, < 0 if absent */
static double
status_kb (const char *key)
{
  FILE *f = fopen ("/proc/self/status", "r");
  char line[256];
  double v = -1;
  size_t kl = strlen (key);

  if (f == NULL)
    return -1;
  while (fgets (line, sizeof line, f) != NULL)
    if (strncmp (line, key, kl) == 0 && line[kl] == ':')
      {
        v = g_ascii_strtod (line + kl + 1, NULL);
        break;
      }
  fclose (f);
  return v;
}

/* Starts a memory measurement: resets the peak RSS to the current RSS. */
static void
mem_begin (Bench *b)
{
  FILE *f;

  /* give freed heap pages back so they are not counted as already resident */
  malloc_trim (0);
  f = fopen ("/proc/self/clear_refs", "w");
  b->hwm_reset = FALSE;
  if (f != NULL)
    {
      b->hwm_reset = fputs ("5", f) >= 0;
      if (fclose (f) != 0)
        b->hwm_reset = FALSE;
    }
  b->rss0 = status_kb ("VmRSS");
  if (b->hwm_reset && status_kb ("VmHWM") > b->rss0 + 1024)
    b->hwm_reset = FALSE;   /* the reset did not take */
}

/* MB of peak RSS above the start, < 0 when unknown */
static double
mem_end (Bench *b)
{
  double hwm = status_kb ("VmHWM");

  if (!b->hwm_reset || hwm < 0 || b->rss0 < 0)
    return -1;
  return (hwm - b->rss0) / 1024.0;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y;
}

static gboolean
selected (Bench *b, const char *name)
{
  return b->only == NULL || strstr (name, b->only) != NULL;
}

/* --only W also selects one size of a workload: W in "NAME SIZE" (e.g. "K=5 N=4096 "). */
static gboolean
selected_sized (Bench *b, const char *name, const char *size)
{
  g_autofree char *full = g_strdup_printf ("%s %s ", name, size);

  return selected (b, name) || strstr (full, b->only) != NULL;
}

/* Warm-up plus repeats; fills the timing fields of row. */
static gboolean
time_work (Bench *b, BenchRow *row, WorkFunc func, void *data, int repeats)
{
  double t[MAX_REPEATS];
  RpeStatus st;

  if ((st = func (data)) != RPE_OK)
    goto fail;
  for (int i = 0; i < repeats; i++)
    {
      double t0 = now ();

      if ((st = func (data)) != RPE_OK)
        goto fail;
      t[i] = now () - t0;
    }
  qsort (t, (size_t) repeats, sizeof (double), cmp_double);
  row->runs = repeats;
  row->min = t[0];
  row->max = t[repeats - 1];
  row->median = repeats % 2 ? t[repeats / 2] : 0.5 * (t[repeats / 2 - 1] + t[repeats / 2]);
  return TRUE;

fail:
  fprintf (stderr, "rpe bench: %s (%s): %s\n", row->name, row->size, rpe_status_to_string (st));
  b->failed = TRUE;
  return FALSE;
}

static BenchRow
row_new (const char *name, const char *size)
{
  BenchRow row;

  memset (&row, 0, sizeof row);
  g_strlcpy (row.name, name, sizeof row.name);
  g_strlcpy (row.size, size, sizeof row.size);
  row.peak_mb = row.io_mb = row.gflops = row.ref_gflops = row.best_gflops = -1;
  return row;
}

static void *
balloc (Bench *b, size_t count)
{
  RpeStatus st;
  void *p = rpe_alloc (count, sizeof (float), &st);

  if (p == NULL)
    {
      fprintf (stderr, "rpe bench: cannot allocate %zu floats: %s\n", count, rpe_status_to_string (st));
      b->failed = TRUE;
    }
  return p;
}

static double
mb (size_t floats)
{
  return (double) floats * sizeof (float) / (1024.0 * 1024.0);
}

/* ---- output ---- */

static void
fmt_time (char *buf, size_t len, double s)
{
  if (s >= 1)
    g_snprintf (buf, len, "%.2f s", s);
  else if (s >= 1e-3)
    g_snprintf (buf, len, "%.1f ms", s * 1e3);
  else
    g_snprintf (buf, len, "%.0f us", s * 1e6);
}

static void
print_header (void)
{
  printf ("%-26s %-26s %10s %10s %10s %10s %10s %8s %8s %6s  %s\n", "workload", "size", "median", "min",
          "max", "peak MB", "in+out MB", "GFLOP/s", "sgemm", "%best", "note");
  fflush (stdout);
}

static void
print_row (const BenchRow *r)
{
  char med[32] = "-", lo[32] = "-", hi[32] = "-", pk[32] = "-", io[32] = "-", gf[32] = "-", rf[32] = "-";
  char pb[32] = "-";

  if (r->runs > 0)
    {
      fmt_time (med, sizeof med, r->median);
      fmt_time (lo, sizeof lo, r->min);
      fmt_time (hi, sizeof hi, r->max);
    }
  if (r->peak_mb >= 0)
    g_snprintf (pk, sizeof pk, "%.0f", r->peak_mb);
  if (r->io_mb >= 0)
    g_snprintf (io, sizeof io, "%.0f", r->io_mb);
  if (r->gflops >= 0)
    g_snprintf (gf, sizeof gf, "%.1f", r->gflops);
  if (r->ref_gflops >= 0)
    g_snprintf (rf, sizeof rf, "%.1f", r->ref_gflops);
  if (r->gflops >= 0 && r->best_gflops > 0)
    g_snprintf (pb, sizeof pb, "%.0f%%", 100.0 * r->gflops / r->best_gflops);
  printf ("%-26s %-26s %10s %10s %10s %10s %10s %8s %8s %6s  %s\n", r->name, r->size, med, lo, hi,
          pk, io, gf, rf, pb, r->note);
  fflush (stdout);
}

/* rows are printed as they complete, so a long run shows progress */
static void
add_row (Bench *b, BenchRow *row)
{
  row->best_gflops = b->best_sgemm;
  g_array_append_val (b->rows, *row);
  print_row (row);
}

/* ---- bare sgemm reference ---- */

typedef struct
{
  int          m, n, k;
  const float *a, *b;
  float       *c;
  int          lda, ldb, ldc;
  gboolean     trans_b;
} GemmWork;

static RpeStatus
gemm_work (void *data)
{
  GemmWork *g = data;

  cblas_sgemm (CblasRowMajor, CblasNoTrans, g->trans_b ? CblasTrans : CblasNoTrans,
               g->m, g->n, g->k, 1.0f, g->a, g->lda, g->b, g->ldb, 0.0f, g->c, g->ldc);
  return RPE_OK;
}

/* GFLOP/s of `count` sgemms (m x k)(k x n) with B transposed, like the logits. */
static double
sgemm_rate (Bench *b, int m, int n, int k, int count, int repeats)
{
  float *a = balloc (b, (size_t) m * k), *bb = balloc (b, (size_t) n * k), *c = balloc (b, (size_t) m * n);
  GemmWork g = { m, n, k, a, bb, c, k, k, n, TRUE };
  BenchRow row = row_new ("sgemm", "");
  double rate = -1, t0, best, times[MAX_REPEATS];

  if (a == NULL || bb == NULL || c == NULL)
    goto out;
  rpe_rng_normal (1, 1, 0, a, (size_t) m * k);
  rpe_rng_normal (1, 2, 0, bb, (size_t) n * k);
  gemm_work (&g);
  /* median over repeats of `count` calls (the workloads report medians too, so a
   * loaded machine slows both alike) */
  if (repeats > MAX_REPEATS)
    repeats = MAX_REPEATS;
  for (int r = 0; r < repeats; r++)
    {
      t0 = now ();
      for (int i = 0; i < count; i++)
        gemm_work (&g);
      times[r] = now () - t0;
    }
  qsort (times, (size_t) repeats, sizeof (double), cmp_double);
  best = repeats % 2 ? times[repeats / 2] : 0.5 * (times[repeats / 2 - 1] + times[repeats / 2]);
  (void) row;
  rate = 2.0 * m * (double) n * k * count / best * 1e-9;
out:
  rpe_free (a);
  rpe_free (bb);
  rpe_free (c);
  return rate;
}

/* ---- workload 1: SPE forward ---- */

typedef struct
{
  RpeSpeParams params;
  size_t       n, r;
  float       *eps, *q, *k, *qhat, *khat;
} SpeWork;

static RpeStatus
spe_work (void *data)
{
  SpeWork *w = data;
  RpeStatus st;

  /* everything from the seed: gate noise, code noise (generated inside), encoding */
  if ((st = rpe_spe_gate_noise_fill (&w->params, w->r, 7, w->eps)) != RPE_OK)
    return st;
  return rpe_spe_encode_seeded (&w->params, w->n, w->r, 7, w->eps, w->q, w->k,
                                w->qhat, w->khat, NULL);
}

/* The sine encoding's floor: per head, one product of the (N x D 2K) features q[m, d] phi_k(m)
 * by the (D 2K x R) noise, for queries and keys, on operands built beforehand: the best of
 * OpenBLAS's sgemm (one call per head and side, OpenBLAS's threads) and the core's own product
 * (the heads over rpe_parallel_threads () workers), in the same run as the fused row. */
static double
sine_floor_flops (size_t n, size_t H, size_t D, size_t K, size_t R)
{
  return 2.0 * 2.0 * (double) n * (double) H * (double) D * 2.0 * (double) K * (double) R;
}

typedef struct
{
  size_t       n, H, width, r;
  const float *a, *z;
  float       *c;
  gboolean     own;
} SineFloorWork;

static void
sine_floor_worker (size_t worker, size_t n_workers, void *data)
{
  SineFloorWork *w = data;

  for (size_t j = worker; j < 2 * w->H; j += n_workers)
    _rpe_gemm (w->n, w->r, w->width, 1.0f, w->a, w->width, 1, w->z + (j / 2) * w->width * w->r, w->r, false,
               w->c + (j / 2) * w->r, w->H * w->r);
}

static RpeStatus
sine_floor_work (void *data)
{
  SineFloorWork *w = data;

  if (w->own)
    {
      size_t workers = rpe_parallel_threads ();

      rpe_parallel_run (workers < 2 * w->H ? workers : 2 * w->H, sine_floor_worker, w);
      return RPE_OK;
    }
  for (size_t j = 0; j < 2 * w->H; j++)
    cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, (int) w->n, (int) w->r, (int) w->width, 1.0f,
                 w->a, (int) w->width, w->z + (j / 2) * w->width * w->r, (int) w->r, 0.0f,
                 w->c + (j / 2) * w->r, (int) (w->H * w->r));
  return RPE_OK;
}

static void
bench_sine_floor (Bench *b, size_t size, size_t n)
{
  const size_t H = 8, D = 64, R = 64, width = D * 2 * size;
  char sz[64], floor_sz[64], fused[64];
  gboolean show;
  SineFloorWork w = { n, H, width, R, NULL, NULL, NULL, FALSE };
  float *a = NULL, *z = NULL, *c = NULL;
  BenchRow row, own;

  b->sine_floor = -1;
  /* measured when its own row or the fused row of the same K and N is selected (for that row's
   * "x the floor") */
  g_snprintf (fused, sizeof fused, "1 spe sine K=%zu", size);
  g_snprintf (sz, sizeof sz, "N=%zu H=8 D=64 R=64", n);
  g_snprintf (floor_sz, sizeof floor_sz, "K=%zu N=%zu H=8 D=64 R=64", size, n);
  show = selected_sized (b, "1 spe sine floor", floor_sz);
  if (!show && !selected_sized (b, fused, sz))
    return;
  row = row_new ("1 spe sine floor", floor_sz);
  own = row;
  if ((a = balloc (b, n * width)) == NULL || (z = balloc (b, H * width * R)) == NULL
      || (c = balloc (b, n * H * R)) == NULL)
    goto out;
  rpe_rng_normal (3, 1, 0, a, n * width);
  rpe_rng_normal (3, 2, 0, z, H * width * R);
  w.a = a;
  w.z = z;
  w.c = c;
  if (!time_work (b, &row, sine_floor_work, &w, b->repeats))
    goto out;
  w.own = TRUE;
  if (!time_work (b, &own, sine_floor_work, &w, b->repeats))
    goto out;
  g_snprintf (row.note, sizeof row.note, "features x noise alone; OpenBLAS %.1f ms, own kernel %.1f ms",
              row.median * 1e3, own.median * 1e3);
  if (own.median < row.median)
    {
      row.median = own.median;
      row.min = own.min;
      row.max = own.max;
    }
  row.gflops = sine_floor_flops (n, H, D, size, R) / row.median * 1e-9;
  b->sine_floor = row.median;
  if (show)
    add_row (b, &row);
out:
  rpe_free (a);
  rpe_free (z);
  rpe_free (c);
}

static void
bench_spe (Bench *b, RpeSpeMethod method, size_t size, size_t n)
{
  const size_t H = 8, D = 64, R = 64;
  char name[64], sz[64];
  SpeWork w;
  BenchRow row;
  size_t io;

  g_snprintf (name, sizeof name, "1 spe %s %s=%zu", method == RPE_SPE_SINE ? "sine" : "conv",
              method == RPE_SPE_SINE ? "K" : "L", size);
  g_snprintf (sz, sizeof sz, "N=%zu H=8 D=64 R=64", n);
  if (!selected_sized (b, name, sz))
    return;
  row = row_new (name, sz);
  memset (&w, 0, sizeof w);
  w.n = n;
  w.r = R;
  mem_begin (b);
  if (rpe_spe_params_init (&w.params, method, H, D, size, true) != RPE_OK
      || rpe_spe_params_random (&w.params, 3) != RPE_OK)
    {
      b->failed = TRUE;
      goto out;
    }
  if ((w.eps = balloc (b, H * D * R)) == NULL || (w.q = balloc (b, n * H * D)) == NULL
      || (w.k = balloc (b, n * H * D)) == NULL || (w.qhat = balloc (b, n * H * R)) == NULL
      || (w.khat = balloc (b, n * H * R)) == NULL)
    goto out;
  rpe_rng_normal (1, RPE_STREAM_QUERIES, 0, w.q, n * H * D);
  rpe_rng_normal (1, RPE_STREAM_KEYS, 0, w.k, n * H * D);
  if (!time_work (b, &row, spe_work, &w, b->repeats))
    goto out;
  io = 2 * n * H * D + 2 * n * H * R;
  row.peak_mb = mem_end (b);
  row.io_mb = mb (io);
  g_strlcpy (row.note, "noise + gate + codes + encode (fused)", sizeof row.note);
  if (method == RPE_SPE_SINE)
    {
      /* the floor's flops (2 x 2 N H D 2K R: the feature products of queries and keys), so
       * that the GFLOP/s and %best columns compare with the floor row */
      row.gflops = sine_floor_flops (n, H, D, size, R) / row.median * 1e-9;
      if (b->sine_floor > 0)
        g_snprintf (row.note, sizeof row.note, "noise + gate + codes + encode (fused), %.2f x the floor",
                    row.median / b->sine_floor);
    }
  add_row (b, &row);
out:
  rpe_free (w.eps);
  rpe_free (w.q);
  rpe_free (w.k);
  rpe_free (w.qhat);
  rpe_free (w.khat);
  rpe_spe_params_clear (&w.params);
}

/* The conv encoding's floors, in the same run as its row: every normal it draws and every
 * FFT it runs, alone on the same workers (_rpe_conv_spe_floor).  No rearrangement of the fused
 * path goes under their sum divided by the workers' speed-up. */
typedef struct
{
  RpeSpeParams    params;
  size_t          n, r;
  RpeConvSpeFloor what;
} ConvFloorWork;

static RpeStatus
conv_floor_work (void *data)
{
  ConvFloorWork *w = data;

  return _rpe_conv_spe_floor (&w->params, w->n, w->r, w->what);
}

static void
bench_conv_floor (Bench *b, size_t size, size_t n)
{
  static const struct { const char *name; RpeConvSpeFloor what; const char *note; } floors[] = {
    { "1 spe conv normals floor", RPE_CONV_SPE_FLOOR_NORMALS, "the R H D (N + L - 1) normal draws alone" },
    { "1 spe conv fft floor", RPE_CONV_SPE_FLOOR_FFTS, "the overlap-save's split FFTs alone, in L1" },
  };
  const size_t H = 8, D = 64, R = 64;
  char sz[64];

  g_snprintf (sz, sizeof sz, "N=%zu H=8 D=64 R=64 L=%zu", n, size);
  for (size_t f = 0; f < G_N_ELEMENTS (floors); f++)
    {
      ConvFloorWork w;
      BenchRow row;

      if (!selected_sized (b, floors[f].name, sz))
        continue;
      memset (&w, 0, sizeof w);
      w.n = n;
      w.r = R;
      w.what = floors[f].what;
      if (rpe_spe_params_init (&w.params, RPE_SPE_CONV, H, D, size, true) != RPE_OK
          || rpe_spe_params_random (&w.params, 3) != RPE_OK)
        {
          b->failed = TRUE;
          rpe_spe_params_clear (&w.params);
          return;
        }
      row = row_new (floors[f].name, sz);
      if (time_work (b, &row, conv_floor_work, &w, b->repeats))
        {
          g_strlcpy (row.note, floors[f].note, sizeof row.note);
          add_row (b, &row);
        }
      rpe_spe_params_clear (&w.params);
    }
}

/* ---- workload 2: empirical templates ---- */

typedef struct
{
  size_t       n, H, D, r;
  const float *qbar, *kbar;
  float       *out;
} EmpWork;

static RpeStatus
emp_work (void *data)
{
  EmpWork *w = data;
  RpeStatus st;

  for (size_t h = 0; h < w->H; h++)
    for (size_t d = 0; d < w->D; d++)
      if ((st = rpe_spe_empirical_template (w->n, w->H, w->D, w->r, w->qbar, w->kbar, h, d, w->out)) != RPE_OK)
        return st;
  return RPE_OK;
}

static void
bench_empirical (Bench *b, size_t n, size_t H)
{
  const size_t D = 64, R = 64;
  char sz[64];
  RpeSpeParams params;
  float *qbar = NULL, *kbar = NULL, *z = NULL, *out = NULL;
  size_t zc;
  BenchRow row;
  EmpWork w;
  double flops;

  if (!selected (b, "2 empirical templates"))
    return;
  g_snprintf (sz, sizeof sz, "N=%zu H=%zu D=64 R=64", n, H);
  row = row_new ("2 empirical templates", sz);
  memset (&params, 0, sizeof params);
  if (rpe_spe_params_init (&params, RPE_SPE_SINE, H, D, 5, false) != RPE_OK
      || rpe_spe_params_random (&params, 3) != RPE_OK
      || rpe_spe_noise_size (&params, n, R, &zc) != RPE_OK)
    {
      b->failed = TRUE;
      goto out;
    }
  if ((z = balloc (b, zc)) == NULL || (qbar = balloc (b, n * H * D * R)) == NULL
      || (kbar = balloc (b, n * H * D * R)) == NULL || (out = balloc (b, n * n)) == NULL)
    goto out;
  if (rpe_spe_noise_fill (&params, n, R, 5, z) != RPE_OK
      || rpe_spe_codes (&params, n, R, z, qbar, kbar, NULL) != RPE_OK)
    {
      b->failed = TRUE;
      goto out;
    }
  w = (EmpWork) { n, H, D, R, qbar, kbar, out };
  if (!time_work (b, &row, emp_work, &w, b->repeats))
    goto out;
  flops = 2.0 * n * (double) n * R * H * D;
  row.gflops = flops / row.median * 1e-9;
  row.ref_gflops = sgemm_rate (b, (int) n, (int) n, (int) R, 8, 5);
  g_strlcpy (row.note, "all (h, d), one N x N output reused", sizeof row.note);
  add_row (b, &row);
out:
  rpe_free (z);
  rpe_free (qbar);
  rpe_free (kbar);
  rpe_free (out);
  rpe_spe_params_clear (&params);
}

/* ---- workload 3: attention maps ---- */

typedef struct
{
  size_t       n, H, r;
  const float *qhat, *khat;
  float       *maps;
} AttWork;

/* SPE logits lhat = qhat . khat / sqrt(R) and the row softmax, fused per block of rows and
 * threaded over the blocks (rpe_attention_rows_parallel, the path of `rpe compute attention`). */
static RpeStatus
att_work (void *data)
{
  AttWork *w = data;
  RpeLogitsSpec spec = { RPE_LOGITS_DOT, w->n, w->H, w->r, w->qhat, w->khat, NULL, false, false };
  RpeStatus st;

  /* qhat, khat checked once for all heads, as `rpe compute attention` does */
  if ((st = rpe_logits_spec_check (&spec)) != RPE_OK)
    return st;
  spec.inputs_checked = true;
  for (size_t h = 0; h < w->H; h++)
    if ((st = rpe_attention_rows_parallel (&spec, h, 0, w->n, false, w->maps + h * w->n * w->n, NULL)) != RPE_OK)
      return st;
  return RPE_OK;
}

/* qhat/khat (N, H, R) drawn as N(0, 1) / R^(1/4) (the scale of encoded unit queries) */
static gboolean
make_hats (Bench *b, size_t n, size_t H, size_t R, float **qhat, float **khat)
{
  float s = (float) pow ((double) R, -0.25);

  *qhat = balloc (b, n * H * R);
  *khat = balloc (b, n * H * R);
  if (*qhat == NULL || *khat == NULL)
    return FALSE;
  rpe_rng_normal (2, RPE_STREAM_QUERIES, 0, *qhat, n * H * R);
  rpe_rng_normal (2, RPE_STREAM_KEYS, 0, *khat, n * H * R);
  for (size_t i = 0; i < n * H * R; i++)
    {
      (*qhat)[i] *= s;
      (*khat)[i] *= s;
    }
  return TRUE;
}

static void
bench_attention (Bench *b, size_t n, size_t H)
{
  const size_t R = 64;
  char sz[64];
  float *qhat = NULL, *khat = NULL, *maps = NULL;
  BenchRow row;
  AttWork w;

  g_snprintf (sz, sizeof sz, "N=%zu H=%zu R=64", n, H);
  if (!selected_sized (b, "3 attention map", sz))
    return;
  row = row_new ("3 attention map", sz);
  mem_begin (b);
  if (!make_hats (b, n, H, R, &qhat, &khat) || (maps = balloc (b, H * n * n)) == NULL)
    goto out;
  w = (AttWork) { n, H, R, qhat, khat, maps };
  if (!time_work (b, &row, att_work, &w, b->repeats))
    goto out;
  row.peak_mb = mem_end (b);
  row.io_mb = mb (2 * n * H * R + H * n * n);
  row.gflops = 2.0 * n * (double) n * R * H / row.median * 1e-9;
  row.ref_gflops = sgemm_rate (b, (int) n, (int) n, (int) R, (int) H, 5);
  g_strlcpy (row.note, "SPE logits + softmax fused per row block, (H, N, N)", sizeof row.note);
  add_row (b, &row);
out:
  rpe_free (qhat);
  rpe_free (khat);
  rpe_free (maps);
}

/* The floors of a full (H, N, N) map on this machine, in the same run: writing the output
 * once with the stores the kernel uses (non-temporal where it uses them; the note adds glibc
 * memset and the first touch of fresh pages), and the H N^2 exps alone (the kernel's
 * exp, in L1), both threaded like the map.  The logits alone are the sgemm column of
 * "3 attention map". */
typedef struct
{
  float  *out;
  size_t  count;
} FloorWork;

static RpeStatus
write_floor_work (void *data)
{
  FloorWork *w = data;

  _rpe_attention_dense_write_floor (w->out, w->count);
  return RPE_OK;
}

static RpeStatus
memset_work (void *data)
{
  FloorWork *w = data;

  memset (w->out, 0, w->count * sizeof (float));
  return RPE_OK;
}

static RpeStatus
exp_floor_work (void *data)
{
  FloorWork *w = data;

  return _rpe_attention_dense_exp_floor (w->count);
}

static void
bench_attention_floor (Bench *b, size_t n, size_t H)
{
  char sz[64], fresh[32], ms[32];
  BenchRow row, mrow;
  FloorWork w = { NULL, H * n * n };
  double t0, t_fresh;

  g_snprintf (sz, sizeof sz, "N=%zu H=%zu R=64", n, H);
  if (selected_sized (b, "3 attention write floor", sz))
    {
      row = row_new ("3 attention write floor", sz);
      mrow = row_new ("memset", sz);
      mem_begin (b);
      if ((w.out = balloc (b, w.count)) == NULL)
        return;
      t0 = now ();
      write_floor_work (&w);      /* fresh pages: the first touch faults them in */
      t_fresh = now () - t0;
      if (time_work (b, &row, write_floor_work, &w, b->repeats) && time_work (b, &mrow, memset_work, &w, b->repeats))
        {
          row.peak_mb = mem_end (b);
          row.io_mb = mb (w.count);
          fmt_time (fresh, sizeof fresh, t_fresh);
          fmt_time (ms, sizeof ms, mrow.median);
          g_snprintf (row.note, sizeof row.note, "write the (H, N, N) output once; memset %s; fresh pages %s", ms,
                      fresh);
          add_row (b, &row);
        }
      rpe_free (w.out);
      w.out = NULL;
    }
  if (selected_sized (b, "3 attention exp floor", sz))
    {
      row = row_new ("3 attention exp floor", sz);
      if (time_work (b, &row, exp_floor_work, &w, b->repeats))
        {
          g_snprintf (row.note, sizeof row.note, "H N^2 = %.1f M exps alone (the kernel's exp, in L1)",
                      (double) w.count * 1e-6);
          add_row (b, &row);
        }
    }
}

typedef struct
{
  RpeLogitsSpec spec;
  size_t        n, side, block;
  float        *image;   /* (side, side) */
} StreamWork;

static RpeStatus
stream_rows (size_t m0, size_t n_rows, float *out, void *data)
{
  StreamWork *w = data;

  return rpe_attention_rows (&w->spec, 0, m0, n_rows, false, out, NULL);
}

/* The path of `rpe export attention`: one head's logits tiles through an online softmax
 * straight into the pixels (rpe_attention_map_reduce, threaded over pixel rows); the rows of
 * the map are never written.  RPE_BENCH_STREAM_ROWS=1 times the previous path (whole rows
 * streamed to rpe_map_reduce) for comparison. */
static RpeStatus
stream_work (void *data)
{
  StreamWork *w = data;

  if (g_getenv ("RPE_BENCH_STREAM_ROWS") != NULL)
    return rpe_map_reduce (w->n, w->side, w->side, RPE_MAP_REDUCE_MEAN, w->block * w->n, stream_rows, w,
                           w->image, NULL);
  return rpe_attention_map_reduce (&w->spec, 0, false, w->side, w->side, RPE_MAP_REDUCE_MEAN, w->image, NULL);
}

static void
bench_stream (Bench *b, size_t n, size_t side)
{
  const size_t R = 64, H = 1;
  char sz[64];
  float *qhat = NULL, *khat = NULL;
  StreamWork w;
  BenchRow row;

  if (!selected (b, "3 attention streamed"))
    return;
  memset (&w, 0, sizeof w);
  g_snprintf (sz, sizeof sz, "N=%zu -> %zux%zu", n, side, side);
  row = row_new ("3 attention streamed", sz);
  mem_begin (b);
  w.n = n;
  w.side = side;
  w.block = 256 > n / side ? 256 : n / side;
  if (!make_hats (b, n, H, R, &qhat, &khat) || (w.image = balloc (b, side * side)) == NULL)
    goto out;
  w.spec = (RpeLogitsSpec) { RPE_LOGITS_DOT, n, H, R, qhat, khat, NULL, false, false };
  if (rpe_logits_spec_check (&w.spec) != RPE_OK)
    {
      b->failed = TRUE;
      goto out;
    }
  w.spec.inputs_checked = true;
  if (!time_work (b, &row, stream_work, &w, b->repeats))
    goto out;
  row.peak_mb = mem_end (b);
  row.io_mb = mb (2 * n * H * R + side * side);
  row.gflops = 2.0 * n * (double) n * R / row.median * 1e-9;
  row.ref_gflops = sgemm_rate (b, (int) w.block, (int) n, (int) R, (int) (n / w.block), 5);
  g_strlcpy (row.note, "one head, logits tiles -> online softmax -> pixel means", sizeof row.note);
  add_row (b, &row);
out:
  rpe_free (qhat);
  rpe_free (khat);
  rpe_free (w.image);
}

/* ---- workload 4: linear attention ---- */

typedef struct
{
  size_t       n, H, r, dv;
  const float *qhat, *khat, *v;
  float       *y;
  bool         causal;
} LinWork;

static RpeStatus
lin_work (void *data)
{
  LinWork *w = data;

  return rpe_linear_attention_qkv (RPE_FEATURE_ELU1, NULL, w->n, w->H, w->r, w->dv,
                                   w->qhat, w->khat, w->v, w->causal, w->y, NULL);
}

static void
bench_linear (Bench *b, size_t n, size_t H, bool causal, int repeats)
{
  const size_t R = 64, DV = 64;
  char sz[64], name[64];
  float *qhat = NULL, *khat = NULL, *v = NULL, *y = NULL;
  LinWork w;
  BenchRow row;

  g_snprintf (name, sizeof name, "4 linear %s", causal ? "causal" : "non-causal");
  g_snprintf (sz, sizeof sz, "N=%zu H=%zu R=64 Dv=64", n, H);
  if (!selected_sized (b, name, sz))
    return;
  row = row_new (name, sz);
  mem_begin (b);
  if (!make_hats (b, n, H, R, &qhat, &khat) || (v = balloc (b, n * H * DV)) == NULL
      || (y = balloc (b, n * H * DV)) == NULL)
    goto out;
  rpe_rng_normal (2, RPE_STREAM_VALUES, 0, v, n * H * DV);
  w = (LinWork) { n, H, R, DV, qhat, khat, v, y, causal };
  if (!time_work (b, &row, lin_work, &w, repeats))
    goto out;
  row.peak_mb = mem_end (b);
  row.io_mb = mb (2 * n * H * R + 2 * n * H * DV);
  g_strlcpy (row.note, "elu1 features on SPE-encoded q/k", sizeof row.note);
  add_row (b, &row);
out:
  rpe_free (qhat);
  rpe_free (khat);
  rpe_free (v);
  rpe_free (y);
}

/* ---- workload 5: exact RPE logits with skewing ---- */

typedef struct
{
  RpeRelSpec spec;
  float     *logits;
} SkewWork;

static RpeStatus
skew_work (void *data)
{
  SkewWork *w = data;

  return rpe_rel_logits (&w->spec, w->logits, NULL);
}

static void
bench_skew (Bench *b, size_t n)
{
  const size_t D = 64, H = 1;
  char sz[64];
  float *q = NULL, *k = NULL, *e = NULL, *logits = NULL;
  SkewWork w;
  BenchRow row;

  g_snprintf (sz, sizeof sz, "N=%zu H=1 D=64", n);
  if (!selected_sized (b, "5 rpe logits skew", sz))
    return;
  row = row_new ("5 rpe logits skew", sz);
  mem_begin (b);
  if ((q = balloc (b, n * H * D)) == NULL || (k = balloc (b, n * H * D)) == NULL
      || (e = balloc (b, (2 * n - 1) * D)) == NULL || (logits = balloc (b, H * n * n)) == NULL)
    goto out;
  rpe_rng_normal (3, RPE_STREAM_QUERIES, 0, q, n * H * D);
  rpe_rng_normal (3, RPE_STREAM_KEYS, 0, k, n * H * D);
  rpe_rng_normal (3, RPE_STREAM_VALUES, 0, e, (2 * n - 1) * D);
  w.spec = (RpeRelSpec) { n, H, D, q, k, e, false, false };
  w.logits = logits;
  if (!time_work (b, &row, skew_work, &w, b->repeats))
    goto out;
  row.peak_mb = mem_end (b);
  row.io_mb = mb (2 * n * H * D + (2 * n - 1) * D + H * n * n);
  row.gflops = 4.0 * n * (double) n * D * H / row.median * 1e-9;
  g_strlcpy (row.note, "(Q K^T + S_rel) / sqrt(D), no N x N x D", sizeof row.note);
  add_row (b, &row);
out:
  rpe_free (q);
  rpe_free (k);
  rpe_free (e);
  rpe_free (logits);
}

/* ---- workload 6: the explorer's live loop ----
 *
 * What a parameter change costs in the explorer, without GTK: the embedded demo
 * is loaded into an RpeExplorerState (as the window's "Load demo" action does),
 * a sine frequency is changed (alternating two values, so every change is a real
 * change), the job of the view runs through the same worker API and main-context
 * callback (rpe_compute_template_grid_async with RPE_TEMPLATES_VIEW_N_CAP,
 * rpe_compute_attention_async with the attention view's request for a canvas of
 * LIVE_CANVAS_W x LIVE_CANVAS_H), and the result is drawn with the views' renderer
 * calls into cairo image surfaces: the templates grid as D cells of
 * LIVE_CELL_W x LIVE_CELL_H (rpe_plot_render_heatmap, symmetric shared range, no
 * axes, like RpeHeatmapView), the attention map as the view's RGB24 pixel surface
 * (colour map per pixel) painted scaled into its plot square.  The time is from
 * the setter call to the last rendered pixel. */

#define LIVE_CELL_W 230
#define LIVE_CELL_H 160
#define LIVE_CANVAS_W 640
#define LIVE_CANVAS_H 600
/* the attention view's margins around its square plot (ui/widgets/rpe-attention-view.c) */
#define LIVE_MARGIN_X (58 + 86)
#define LIVE_MARGIN_Y (10 + 42)
/* the grid's cap on N (ui/widgets/rpe-templates-view.h: RPE_TEMPLATES_VIEW_N_CAP) */
#define LIVE_GRID_N_CAP 512

typedef struct
{
  gboolean  done;
  gpointer  result;   /* RpeTemplates* or RpeAttentionImage* */
  GError   *error;
  gboolean  attention;
} LiveWait;

static void
live_done (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  LiveWait *w = user_data;

  if (w->attention)
    w->result = rpe_compute_attention_finish (result, &w->error);
  else
    w->result = rpe_compute_templates_finish (result, &w->error);
  w->done = TRUE;
}

static gboolean
live_render_templates (RpeTemplates    *t,
                       cairo_surface_t *cell)
{
  double a = fmax (fabs (t->vmin), fabs (t->vmax));

  for (gsize d = 0; d < t->n_features; d++)
    {
      cairo_t *cr = cairo_create (cell);
      RpeHeatmapData data;
      char title[32];

      g_snprintf (title, sizeof title, "d = %zu", d);
      rpe_heatmap_data_init (&data);
      data.values = rpe_templates_get_feature (t, d);
      data.rows = t->n;
      data.cols = t->n;
      data.title = title;
      data.scale = RPE_HEATMAP_SCALE_SYMMETRIC;
      data.fixed_range = true;
      data.vmin = -a;
      data.vmax = a;
      data.show_axes = false;
      cairo_set_source_rgb (cr, 1, 1, 1);
      cairo_paint (cr);
      rpe_plot_render_heatmap (cr, &data, LIVE_CELL_W, LIVE_CELL_H);
      cairo_destroy (cr);
    }
  cairo_surface_flush (cell);
  return TRUE;
}

static void
live_render_attention (RpeAttentionImage *img,
                       cairo_surface_t   *canvas)
{
  const RpeColormap *cmap = rpe_colormap_default ();
  double lo = img->vmin, hi = img->vmax, side;
  cairo_surface_t *pix = cairo_image_surface_create (CAIRO_FORMAT_RGB24, (int) img->cols, (int) img->rows);
  guint8 *data;
  int stride;
  cairo_t *cr;

  if (!(hi > lo))
    hi = lo + 1.0;
  /* the view's rebuild_surface: one colour-mapped pixel per image cell */
  cairo_surface_flush (pix);
  data = cairo_image_surface_get_data (pix);
  stride = cairo_image_surface_get_stride (pix);
  for (gsize i = 0; i < img->rows; i++)
    {
      guint32 *row = (guint32 *) (data + i * stride);

      for (gsize j = 0; j < img->cols; j++)
        {
          float v = img->values[i * img->cols + j];
          guint8 rgb[3];

          rpe_colormap_map_u8 (cmap, isfinite (v) ? (v - lo) / (hi - lo) : 0.0, rgb);
          row[j] = 0xff000000u | ((guint32) rgb[0] << 16) | ((guint32) rgb[1] << 8) | rgb[2];
        }
    }
  cairo_surface_mark_dirty (pix);
  /* the canvas draw: the pixel surface scaled into the plot square, plus a frame */
  side = fmin (LIVE_CANVAS_W - LIVE_MARGIN_X, LIVE_CANVAS_H - LIVE_MARGIN_Y);
  cr = cairo_create (canvas);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  cairo_save (cr);
  cairo_translate (cr, 58, 10);
  cairo_scale (cr, side / (double) img->cols, side / (double) img->rows);
  cairo_set_source_surface (cr, pix, 0, 0);
  cairo_pattern_set_filter (cairo_get_source (cr), CAIRO_FILTER_NEAREST);
  cairo_paint (cr);
  cairo_restore (cr);
  cairo_rectangle (cr, 58.5, 10.5, side, side);
  cairo_set_source_rgb (cr, 0, 0, 0);
  cairo_stroke (cr);
  cairo_destroy (cr);
  cairo_surface_flush (canvas);
  cairo_surface_destroy (pix);
}

/* One change -> finished image; < 0 on failure. */
static double
live_once (RpeExplorerState *state,
           gboolean          attention,
           double            f,
           cairo_surface_t  *surface)
{
  GMainContext *ctx = g_main_context_default ();
  LiveWait w = { FALSE, NULL, NULL, attention };
  RpeExplorerSnapshot *s;
  double t0 = now ();

  rpe_explorer_state_set_sine (state, 0, 0, 0, f, 0.0, 1.0, TRUE);
  s = rpe_explorer_state_snapshot (state);
  if (attention)
    {
      RpeAttentionRequest req = { 0 };
      gsize side = (gsize) fmin (LIVE_CANVAS_W - LIVE_MARGIN_X, LIVE_CANVAS_H - LIVE_MARGIN_Y);

      req.max_rows = side;
      req.max_cols = side;
      req.reduce = RPE_HEATMAP_REDUCE_MEAN;
      rpe_compute_attention_async (s, &req, NULL, NULL, NULL, live_done, &w);
    }
  else
    rpe_compute_template_grid_async (s, LIVE_GRID_N_CAP, NULL, NULL, NULL, live_done, &w);
  rpe_explorer_snapshot_unref (s);
  while (!w.done)
    g_main_context_iteration (ctx, TRUE);
  if (w.result == NULL)
    {
      fprintf (stderr, "rpe bench: live loop: %s\n", w.error != NULL ? w.error->message : "failed");
      g_clear_error (&w.error);
      return -1;
    }
  if (attention)
    {
      live_render_attention (w.result, surface);
      rpe_attention_image_unref (w.result);
    }
  else
    {
      live_render_templates (w.result, surface);
      rpe_templates_unref (w.result);
    }
  return now () - t0;
}

/* An explorer state holding the demo's sine and conv modules at length n; NULL (the
 * workload `name` failed, said on stderr) if the demo cannot be loaded. */
static RpeExplorerState *
demo_state (Bench *b, const char *name, gsize n)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeTensorSet) set = NULL;
  RpeSpeParams sine = { 0 }, conv = { 0 };
  RpeExplorerState *state = NULL;

  if ((set = rpe_cli_read_checkpoint ("demo", &error)) == NULL
      || !rpe_checkpoint_load_spe (set, "sine", -1, &sine, &error)
      || !rpe_checkpoint_load_spe (set, "conv", -1, &conv, &error))
    {
      fprintf (stderr, "rpe bench: %s: %s\n", name, error != NULL ? error->message : "no demo");
      b->failed = TRUE;
      goto out;
    }
  state = rpe_explorer_state_new ();
  if (!rpe_explorer_state_set_modules (state, &sine, "demo module “sine”", &conv, "demo module “conv”", &error))
    {
      fprintf (stderr, "rpe bench: %s: %s\n", name, error->message);
      b->failed = TRUE;
      g_clear_object (&state);
      goto out;
    }
  g_object_set (state, "length", (guint) n, NULL);
out:
  rpe_spe_params_clear (&sine);
  rpe_spe_params_clear (&conv);
  return state;
}

static void
bench_live (Bench *b, gboolean attention, gsize n, int repeats)
{
  const char *name = attention ? "6 gui live loop attention" : "6 gui live loop templates";
  RpeExplorerState *state = NULL;
  cairo_surface_t *surface = NULL;
  double *t = NULL;
  char sz[64];
  BenchRow row;
  int runs = 0;

  if (!selected (b, name))
    return;
  if (attention)
    g_snprintf (sz, sizeof sz, "demo N=%zu, %dx%d canvas", n, LIVE_CANVAS_W, LIVE_CANVAS_H);
  else
    g_snprintf (sz, sizeof sz, "demo N=%zu, D cells %dx%d", n, LIVE_CELL_W, LIVE_CELL_H);
  row = row_new (name, sz);
  if ((state = demo_state (b, name, n)) == NULL)
    goto out;
  surface = attention ? cairo_image_surface_create (CAIRO_FORMAT_ARGB32, LIVE_CANVAS_W, LIVE_CANVAS_H)
                      : cairo_image_surface_create (CAIRO_FORMAT_ARGB32, LIVE_CELL_W, LIVE_CELL_H);
  t = g_new (double, repeats + 1);
  /* one warm-up, then alternate two frequencies */
  for (int i = 0; i <= repeats; i++)
    {
      double dt = live_once (state, attention, i % 2 ? 0.05 : 0.08, surface);

      if (dt < 0)
        {
          b->failed = TRUE;
          goto out;
        }
      if (i > 0)
        t[runs++] = dt;
    }
  qsort (t, (size_t) runs, sizeof (double), cmp_double);
  row.runs = runs;
  row.min = t[0];
  row.max = t[runs - 1];
  row.median = runs % 2 ? t[runs / 2] : 0.5 * (t[runs / 2 - 1] + t[runs / 2]);
  {
    /* nearest-rank 95th percentile */
    int k = (int) ceil (0.95 * runs) - 1;
    char p95[32];

    fmt_time (p95, sizeof p95, t[k < 0 ? 0 : k]);
    g_snprintf (row.note, sizeof row.note, "change -> rendered, p95 %s (target < 33 ms)%s", p95,
                t[k < 0 ? 0 : k] < 0.033 ? "" : " MISSED");
  }
  add_row (b, &row);
out:
  g_free (t);
  if (surface != NULL)
    cairo_surface_destroy (surface);
  g_clear_object (&state);
}

/* ---- workload 0: the machine's best matrix multiply ---- */

/* The best square sgemm rate of this run (OpenBLAS's default threads): every row's GFLOP/s is
 * shown as a percentage of it ("%best"). */
static void
bench_best_sgemm (Bench *b)
{
  const int n = b->quick ? 512 : 2048;
  char sz[64];
  BenchRow row;
  double rate;

  g_snprintf (sz, sizeof sz, "%d^3, OpenBLAS threads", n);
  row = row_new ("0 sgemm best", sz);
  rate = sgemm_rate (b, n, n, n, 1, b->quick ? 3 : 7);
  if (rate <= 0)
    return;
  b->best_sgemm = rate;
  if (!selected (b, "0 sgemm best"))
    return;
  row.runs = 1;
  row.median = row.min = row.max = 2.0 * n * (double) n * n / rate * 1e-9;
  row.gflops = rate;
  g_strlcpy (row.note, "median of the repeats; the reference of the %best column", sizeof row.note);
  add_row (b, &row);
}

/* ---- workload 7: the command-line entry points as whole processes ---- */

/* Runs this executable with argv (argv[0] ignored) and waits; wall seconds and the child's
 * peak resident set (MB).  FALSE if it could not run or did not exit 0. */
static gboolean
run_self (char **argv, double *seconds, double *peak_mb)
{
  extern char **environ;
  struct rusage ru;
  pid_t pid;
  int status;
  double t0 = now ();

  posix_spawn_file_actions_t fa;
  int rc;

  memset (&ru, 0, sizeof ru);
  /* the child's messages (e.g. which demo module it uses) would interleave with the table */
  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_addopen (&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen (&fa, 2, "/dev/null", O_WRONLY, 0);
  rc = posix_spawn (&pid, "/proc/self/exe", &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy (&fa);
  if (rc != 0)
    return FALSE;
  /* the child's VmHWM, polled until it exits: its own address space's high-water mark
   * (ru_maxrss would report this process's, which the spawned child starts from) */
  *peak_mb = 0;
  for (;;)
    {
      g_autofree char *path = g_strdup_printf ("/proc/%d/status", (int) pid);
      g_autofree char *text = NULL;
      pid_t done = wait4 (pid, &status, WNOHANG, &ru);

      if (done == pid)
        break;
      if (done < 0)
        return FALSE;
      if (g_file_get_contents (path, &text, NULL, NULL))
        {
          const char *line = strstr (text, "\nVmHWM:");

          if (line != NULL)
            *peak_mb = fmax (*peak_mb, g_ascii_strtod (line + 8, NULL) / 1024.0);
        }
      g_usleep (2000);
    }
  *seconds = now () - t0;
  return WIFEXITED (status) && WEXITSTATUS (status) == 0;
}

static void
bench_cli (Bench *b, const char *name, const char *size, const char *cmdline, const char *dir, double flops,
           const char *target)
{
  g_autofree char *full = NULL;
  g_auto (GStrv) argv = NULL;
  int repeats = b->quick ? 1 : 3;
  double t[MAX_REPEATS], peak = 0;
  BenchRow row;

  if (!selected (b, name))
    return;
  row = row_new (name, size);
  full = g_strdup_printf ("rpe %s", cmdline);
  {
    /* OUT in the command line is the scratch directory */
    GString *str = g_string_new (full);

    g_string_replace (str, "OUT", dir, 0);
    g_free (full);
    full = g_string_free (str, FALSE);
  }
  if (!g_shell_parse_argv (full, NULL, &argv, NULL))
    {
      b->failed = TRUE;
      return;
    }
  for (int i = 0; i <= repeats; i++)   /* one warm-up (page cache, checkpoint) */
    {
      double secs, pk;

      if (!run_self (argv, &secs, &pk))
        {
          fprintf (stderr, "rpe bench: %s: `%s` failed\n", name, full);
          b->failed = TRUE;
          return;
        }
      if (i > 0)
        {
          t[i - 1] = secs;
          peak = fmax (peak, pk);
        }
    }
  qsort (t, (size_t) repeats, sizeof (double), cmp_double);
  row.runs = repeats;
  row.min = t[0];
  row.max = t[repeats - 1];
  row.median = repeats % 2 ? t[repeats / 2] : 0.5 * (t[repeats / 2 - 1] + t[repeats / 2]);
  row.peak_mb = peak;
  if (flops > 0)
    row.gflops = flops / row.median * 1e-9;
  g_snprintf (row.note, sizeof row.note, "whole process, peak = its VmHWM%s%s", target ? "; " : "",
              target ? target : "");
  add_row (b, &row);
}

static void
bench_cli_all (Bench *b)
{
  g_autofree char *dir = g_dir_make_tmp ("rpe-bench-XXXXXX", NULL);
  const gsize ne = b->quick ? 512 : 4096, nt = b->quick ? 256 : 2048, na = b->quick ? 2048 : 65536;
  const gsize nl = b->quick ? 4096 : 65536, nm = b->quick ? 512 : 2048;
  char size[64];
  g_autofree char *cmd = NULL;

  if (dir == NULL)
    {
      b->failed = TRUE;
      return;
    }
  g_snprintf (size, sizeof size, "N=%zu H=8 D=64 R=64 K=5", ne);
  cmd = g_strdup_printf ("compute encode --method sine --sines 5 --heads 8 --features 64 --realizations 64 "
                         "--length %zu --content random -o OUT/q.npy --out-keys OUT/k.npy", ne);
  bench_cli (b, "7 cli compute encode sine", size, cmd, dir, -1, "gated, target 25x the authors' forward");
  g_free (cmd);
  g_snprintf (size, sizeof size, "N=%zu H=8 D=64 R=64 L=128", ne);
  cmd = g_strdup_printf ("compute encode --method conv --kernel 128 --heads 8 --features 64 --realizations 64 "
                         "--length %zu --content random -o OUT/q.npy --out-keys OUT/k.npy", ne);
  bench_cli (b, "7 cli compute encode conv", size, cmd, dir, -1, "gated, target 20x the authors' forward");
  g_free (cmd);
  g_snprintf (size, sizeof size, "demo N=%zu (H=4 D=16)", nt);
  cmd = g_strdup_printf ("compute template --checkpoint demo --length %zu -o OUT/t.npy", nt);
  bench_cli (b, "7 cli compute template", size, cmd, dir, -1, "streamed, target peak < 150 MB");
  g_free (cmd);
  g_snprintf (size, sizeof size, "N=%zu H=8 R=64", nm);
  cmd = g_strdup_printf ("compute attention --heads 8 --features 64 --realizations 64 --length %zu "
                         "--content random -o OUT/a.npy", nm);
  bench_cli (b, "7 cli compute attention", size, cmd, dir, 2.0 * nm * (double) nm * 64 * 8, "streamed rows");
  g_free (cmd);
  g_snprintf (size, sizeof size, "N=%zu H=8 R=64 Dv=64", nl);
  cmd = g_strdup_printf ("compute linear --heads 8 --features 64 --realizations 64 --length %zu "
                         "--content random -o OUT/y.npy", nl);
  bench_cli (b, "7 cli compute linear", size, cmd, dir, -1, "elu1, with the SPE encoding");
  g_free (cmd);
  g_snprintf (size, sizeof size, "N=%zu H=8 D=64 R=64 -> PNG", na);
  cmd = g_strdup_printf ("export attention --heads 8 --features 64 --realizations 64 --length %zu "
                         "--content random -o OUT/a.png", na);
  bench_cli (b, "7 cli export attention", size, cmd, dir, 2.0 * na * (double) na * 64,
             "one head streamed; target < 100 MB, < 5 s");
  {
    const char *files[] = { "q.npy", "k.npy", "t.npy", "a.npy", "y.npy", "a.png" };

    for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
      {
        g_autofree char *path = g_build_filename (dir, files[i], NULL);
        g_unlink (path);
      }
    g_rmdir (dir);
  }
}

/* ---- workload 6: the explorer's main loop during a long attention job ---- */

typedef struct
{
  gint64 last, max_gap;
  guint  ticks;
} StallProbe;

static gboolean
stall_tick (gpointer data)
{
  StallProbe *probe = data;
  gint64 t = g_get_monotonic_time ();

  if (probe->last != 0 && t - probe->last > probe->max_gap)
    probe->max_gap = t - probe->last;
  probe->last = t;
  probe->ticks++;
  return G_SOURCE_CONTINUE;
}

/* A GMainLoop with a 5 ms timeout while the explorer's attention job (demo, SPE) runs on its
 * workers: the largest gap between ticks is the longest the UI would freeze. */
static void
bench_stall (Bench *b, gsize n)
{
  const char *name = "6 gui main-loop stall";
  RpeExplorerState *state = NULL;
  RpeExplorerSnapshot *snap;
  RpeAttentionRequest req = { 0 };
  LiveWait w = { FALSE, NULL, NULL, TRUE };
  StallProbe probe = { 0 };
  char sz[64], gap[32];
  BenchRow row;
  guint id;
  double t0;

  if (!selected (b, name))
    return;
  g_snprintf (sz, sizeof sz, "demo N=%zu, 5 ms probe", n);
  row = row_new (name, sz);
  if ((state = demo_state (b, name, n)) == NULL)
    goto out;
  snap = rpe_explorer_state_snapshot (state);
  req.max_rows = req.max_cols = 512;
  req.reduce = RPE_HEATMAP_REDUCE_MEAN;
  id = g_timeout_add (5, stall_tick, &probe);
  t0 = now ();
  rpe_compute_attention_async (snap, &req, NULL, NULL, NULL, live_done, &w);
  rpe_explorer_snapshot_unref (snap);
  while (!w.done)
    g_main_context_iteration (NULL, TRUE);
  row.median = row.min = row.max = now () - t0;
  g_source_remove (id);
  if (w.result == NULL)
    {
      fprintf (stderr, "rpe bench: %s: %s\n", name, w.error != NULL ? w.error->message : "failed");
      g_clear_error (&w.error);
      b->failed = TRUE;
      goto out;
    }
  rpe_attention_image_unref (w.result);
  row.runs = 1;
  fmt_time (gap, sizeof gap, probe.max_gap * 1e-6);
  g_snprintf (row.note, sizeof row.note, "job time; largest main-loop stall %s over %u ticks", gap, probe.ticks);
  add_row (b, &row);
out:
  g_clear_object (&state);
}

/* Which kernels run: OpenBLAS's core and configuration (it picks them for the CPU when it loads;
 * OPENBLAS_CORETYPE overrides) and the core's own choices (RPE_*_KERNEL, RPE_LINEAR_ISA and
 * RPE_RNG_* lower them), then the notice when OpenBLAS runs generic kernels on this CPU. */
static void
print_kernels (FILE *out)
{
  RpeKernelInfo k;
  g_autofree char *notice = NULL;

  rpe_kernel_info (&k);
  fprintf (out, "OpenBLAS core: %s\n", k.blas_core);
  fprintf (out, "OpenBLAS config: %s\n", k.blas_config);
  fprintf (out, "core kernels: product %s, attention %s, linear %s, softmax %s, normals %s\n", k.gemm,
           k.attention, k.linear, k.softmax, k.rng);
  if ((notice = rpe_blas_notice_text (&k, FALSE)) != NULL)
    fprintf (out, "note: %s\n", notice);
}

static void
json_string (GString *s, const char *key, const char *v)
{
  g_autofree char *esc = g_strescape (v, NULL);

  g_string_append_printf (s, "\"%s\": \"%s\", ", key, esc);
}

static void
json_num (GString *s, const char *key, double v, gboolean last)
{
  if (v < 0 || !isfinite (v))
    g_string_append_printf (s, "\"%s\": null%s", key, last ? "" : ", ");
  else
    g_string_append_printf (s, "\"%s\": %.6g%s", key, v, last ? "" : ", ");
}

/* The results as JSON, written as every output of rpe is (rpe_atomic_file_new:
 * a temporary file renamed over the target, refused where rpe_output_check refuses). */
static gboolean
write_json (Bench *b, const char *path, GError **error)
{
  g_autoptr (GString) s = g_string_new (NULL);

  RpeKernelInfo k;

  rpe_kernel_info (&k);
  g_string_append_printf (s, "{\"quick\": %s, \"repeats\": %d, \"threads\": %zu, ",
                          b->quick ? "true" : "false", b->repeats, rpe_parallel_threads ());
  json_string (s, "blas_core", k.blas_core);
  json_string (s, "blas_config", k.blas_config);
  g_string_append_printf (s, "\"kernels\": {\"product\": \"%s\", \"attention\": \"%s\", \"linear\": \"%s\", "
                          "\"softmax\": \"%s\", \"normals\": \"%s\"}, \"results\": [\n",
                          k.gemm, k.attention, k.linear, k.softmax, k.rng);
  for (guint i = 0; i < b->rows->len; i++)
    {
      BenchRow *r = &g_array_index (b->rows, BenchRow, i);

      g_string_append_printf (s, "  {\"workload\": \"%s\", \"size\": \"%s\", \"runs\": %d, ",
                              r->name, r->size, r->runs);
      json_num (s, "median_s", r->runs > 0 ? r->median : -1, FALSE);
      json_num (s, "min_s", r->runs > 0 ? r->min : -1, FALSE);
      json_num (s, "max_s", r->runs > 0 ? r->max : -1, FALSE);
      json_num (s, "peak_mb", r->peak_mb, FALSE);
      json_num (s, "io_mb", r->io_mb, FALSE);
      json_num (s, "gflops", r->gflops, FALSE);
      json_num (s, "sgemm_gflops", r->ref_gflops, FALSE);
      json_num (s, "best_sgemm_gflops", r->best_gflops, FALSE);
      g_string_append_printf (s, "\"note\": \"%s\"}%s\n", r->note, i + 1 < b->rows->len ? "," : "");
    }
  g_string_append (s, "]}\n");
  return rpe_atomic_file_set_contents (path, s->str, s->len, error);
}

typedef struct
{
  gboolean quick;
  char    *json;
  int      repeats; /* 0: not given */
  char    *only;
  gboolean kernels;
} BenchOptions;

#define B(field) G_STRUCT_OFFSET (BenchOptions, field)

/* clang-format off */
static const RpeCliOption bench_options[] = {
  RPE_CLI_FLAG ("quick", B (quick), 0, N_("Small sizes, few repeats")),
  RPE_CLI_FILE ("json", B (json), 0, N_("Also write the results as JSON"), "FILE"),
  RPE_CLI_INT ("repeats", B (repeats), 0, 1, MAX_REPEATS,
               N_("Timed runs per workload, after one warm-up (default 5, quick 3)"), "N"),
  RPE_CLI_STRING ("only", B (only), 0, N_("Only workloads whose name contains W"), "W"),
  RPE_CLI_FLAG ("kernels", B (kernels), 0, N_("Print which kernels run (OpenBLAS's and the core's) and exit")),
  { NULL }
};
/* clang-format on */

static const RpeCliLeaf bench_leaves[] = {
  { NULL, N_("Time the numeric core: SPE encodings, attention, linear attention, the live loop"),
    N_("Times the core's workloads (the SPE encodings, empirical templates, attention maps, streamed\n"
       "attention, linear attention, relative logits, the window's live loop and the CLI commands)\n"
       "after one warm-up: median, min and max seconds, peak memory, GFLOP/s and the share of this\n"
       "machine's best sgemm rate.  --json writes the rows too.  Speed is measured here, never in\n"
       "the tests."),
    "bench --quick --only '3 attention'", RPE_CLI_TAKES_FORCE, 0, NULL, NULL, NULL, NULL },
};

const RpeCliCommand rpe_cli_bench_command = {
  .name = "bench",
  .summary = N_("Time the numeric core"),
  .options = bench_options,
  .leaves = bench_leaves,
  .n_leaves = G_N_ELEMENTS (bench_leaves),
  .run = rpe_cli_bench,
};

int
rpe_cli_bench (int argc, char **argv)
{
  BenchOptions opts = { 0 };
  gboolean     quick, kernels;
  char        *json, *only;
  int          repeats, status;
  GError *error = NULL;
  Bench b;
  int code = 0;

  if (!rpe_cli_parse (&rpe_cli_bench_command, &rpe_cli_bench_command.leaves[0], NULL, NULL, &opts, &argc, &argv,
                      &status))
    {
      rpe_cli_own_clear (bench_options, &opts);
      return status;
    }
  quick = opts.quick;
  json = g_steal_pointer (&opts.json);
  only = g_steal_pointer (&opts.only);
  repeats = opts.repeats;
  kernels = opts.kernels;
  if (argc > 1)
    {
      fprintf (stderr, "rpe bench: unexpected argument '%s'\n", argv[1]);
      g_free (json);
      g_free (only);
      return 2;
    }

  if (kernels)
    {
      print_kernels (stdout);
      g_free (json);
      g_free (only);
      return 0;
    }

  /* a --json target that cannot be written is refused before minutes of timing */
  if (json != NULL && !rpe_output_check (json, &error))
    {
      fprintf (stderr, "rpe bench: %s\n", error->message);
      g_clear_error (&error);
      g_free (json);
      g_free (only);
      return 1;
    }

  /* a fixed mmap threshold: every large buffer is a fresh mapping, so the peak RSS of a
   * workload counts it (glibc's dynamic threshold would recycle resident heap up to 32 MB) */
  mallopt (M_MMAP_THRESHOLD, 1 << 20);
  memset (&b, 0, sizeof b);
  b.quick = quick;
  b.repeats = repeats > 0 ? repeats : quick ? 3 : 5;
  b.only = only;
  b.rows = g_array_new (FALSE, TRUE, sizeof (BenchRow));

  printf ("rpe bench (%s): %d timed runs after one warm-up; %zu threads\n",
          quick ? "quick" : "full", b.repeats, rpe_parallel_threads ());
  print_kernels (stdout);
  print_header ();
  b.best_sgemm = -1;
  b.sine_floor = -1;
  bench_best_sgemm (&b);   /* always: the %best column needs it */

  if (quick)
    {
      bench_sine_floor (&b, 5, 1024);
      bench_spe (&b, RPE_SPE_SINE, 5, 1024);
      b.sine_floor = -1;
      bench_spe (&b, RPE_SPE_SINE, 10, 1024);
      bench_spe (&b, RPE_SPE_CONV, 128, 1024);
      bench_conv_floor (&b, 128, 1024);
      bench_empirical (&b, 512, 1);
      bench_attention (&b, 512, 1);
      bench_attention (&b, 512, 8);
      bench_attention_floor (&b, 512, 8);
      bench_stream (&b, 2048, 256);
      bench_linear (&b, 16384, 8, false, b.repeats);
      bench_linear (&b, 16384, 8, true, b.repeats);
      bench_skew (&b, 1024);
    }
  else
    {
      static const size_t spe_n[] = { 1024, 4096, 16384 };

      for (size_t i = 0; i < G_N_ELEMENTS (spe_n); i++)
        {
          bench_sine_floor (&b, 5, spe_n[i]);
          bench_spe (&b, RPE_SPE_SINE, 5, spe_n[i]);
          b.sine_floor = -1;
          bench_spe (&b, RPE_SPE_SINE, 10, spe_n[i]);
          bench_spe (&b, RPE_SPE_CONV, 128, spe_n[i]);
          if (spe_n[i] == 4096)
            bench_conv_floor (&b, 128, spe_n[i]);
        }
      bench_empirical (&b, 2048, 8);
      bench_attention (&b, 2048, 1);
      bench_attention (&b, 2048, 8);
      bench_attention_floor (&b, 2048, 8);
      bench_attention (&b, 4096, 1);
      bench_attention (&b, 4096, 8);
      bench_stream (&b, 16384, 1024);
      bench_linear (&b, 4096, 8, false, b.repeats);
      bench_linear (&b, 4096, 8, true, b.repeats);
      bench_linear (&b, 65536, 8, false, b.repeats);
      bench_linear (&b, 65536, 8, true, b.repeats);
      bench_linear (&b, 1048576, 2, false, 3);
      bench_linear (&b, 1048576, 2, true, 3);
      bench_skew (&b, 8192);
    }
  /* the live loops as the window runs them: glibc's dynamic thresholds have grown to the loop's
   * buffers after its first iterations there (up to 32 MB mapped, twice that kept on free), so
   * its buffers come back from the heap instead of fresh mappings that fault every page in (the
   * fixed 1 MB threshold above is for the peak-memory column, which the live rows do not show) */
  mallopt (M_MMAP_THRESHOLD, 32 << 20);
  mallopt (M_TRIM_THRESHOLD, 64 << 20);
  bench_live (&b, FALSE, 96, quick ? 20 : 100);
  bench_live (&b, TRUE, 96, quick ? 20 : 100);
  if (!quick)
    {
      bench_live (&b, FALSE, 512, 40);
      bench_live (&b, TRUE, 512, 40);
      bench_live (&b, TRUE, 2048, 40);   /* the live-loop target for the attention view */
    }
  bench_stall (&b, quick ? 8192 : 65536);
  bench_cli_all (&b);

  if (json != NULL && !write_json (&b, json, &error))
    {
      fprintf (stderr, "rpe bench: %s\n", error->message);
      g_clear_error (&error);
      code = 1;
    }
  if (b.failed && code == 0)
    code = 1;
  g_array_free (b.rows, TRUE);
  g_free (json);
  g_free (only);
  return code;
}

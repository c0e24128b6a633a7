#include "config.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cblas.h>
#include <glib.h>

#include "rpe-alloc.h"
#include "rpe-parallel.h"

static atomic_size_t budget_bytes;

/* The budget scope of this thread: the live bytes it holds and the blocks
 * rpe_alloc gave out in it (pointer -> size), so that rpe_free can give them back. */
typedef struct
{
  unsigned    depth;
  size_t      used;
  GHashTable *live;
  size_t      os_room;     /* what the OS limit left when the scope began */
} BudgetScope;

static _Thread_local BudgetScope scope;

/* The blocks rpe_alloc gave out outside budget scopes and not yet freed (pointer -> size), in
 * the whole process: what a computation already holds when it asks for more (rpe_alloc_held). */
static GMutex      held_lock;
static GHashTable *held_blocks;
static size_t      held_bytes;

bool
rpe_size_prod (size_t *out, size_t n, const size_t *dims)
{
  size_t acc = 1;

  for (size_t i = 0; i < n; i++)
    if (!rpe_size_mul (acc, dims[i], &acc))
      return false;
  *out = acc;
  return true;
}

RpeStatus
rpe_size_bytes (size_t *out, size_t elem, size_t a, size_t b, size_t c, size_t d)
{
  size_t dims[5] = { elem, a, b, c, d };

  if (!rpe_size_prod (out, 5, dims))
    return RPE_ERROR_OVERFLOW;
  return RPE_OK;
}

size_t
rpe_physical_memory (void)
{
  long pages = sysconf (_SC_PHYS_PAGES);
  long page_size = sysconf (_SC_PAGE_SIZE);
  size_t total;

  if (pages <= 0 || page_size <= 0 || !rpe_size_mul ((size_t) pages, (size_t) page_size, &total))
    return (size_t) 4 << 30;
  return total;
}

bool
rpe_budget_parse (const char *text, size_t *bytes)
{
  char *end = NULL;
  double value;
  double scale = 1.0;

  if (text == NULL)
    return false;
  value = strtod (text, &end);
  if (end == text || !(value > 0) || !isfinite (value))
    return false;
  switch (*end)
    {
    case 'k': case 'K': scale = 1024.0; end++; break;
    case 'm': case 'M': scale = 1024.0 * 1024.0; end++; break;
    case 'g': case 'G': scale = 1024.0 * 1024.0 * 1024.0; end++; break;
    case 't': case 'T': scale = 1024.0 * 1024.0 * 1024.0 * 1024.0; end++; break;
    case '%':
      if (value > 100)
        return false;
      *bytes = (size_t) ((double) rpe_physical_memory () * value / 100.0);
      return end[1] == '\0' && *bytes > 0;
    default: break;
    }
  if ((*end == 'i' || *end == 'I') && scale > 1)
    end++;
  if ((*end == 'b' || *end == 'B'))
    end++;
  if (*end != '\0' || value * scale >= 18446744073709551615.0 || value * scale < 1)
    return false;
  *bytes = (size_t) (value * scale);
  return true;
}

size_t
rpe_budget_default (void)
{
  size_t b;
  const char *env = getenv ("RPE_MEMORY_BUDGET");

  if (env != NULL && rpe_budget_parse (env, &b))
    return b;
  return rpe_physical_memory () / 4 * 3;
}

size_t
rpe_budget_get (void)
{
  size_t b = atomic_load (&budget_bytes);

  if (b == 0)
    b = rpe_budget_default ();
  return b;
}

void
rpe_budget_set (size_t bytes)
{
  atomic_store (&budget_bytes, bytes);
}

/* ---- the operating system's limit -------------------------------------- */

/* Room kept for what is allocated without being counted (the libraries' own
 * tables, thread stacks, the stdio buffers of a message). */
#define OS_MARGIN ((size_t) 32 << 20)

/* OpenBLAS (x86-64, DYNAMIC_ARCH) allocates a 128 MiB work buffer (BUFFER_SIZE,
 * 32 << 22, plus alignment) for each thread that runs a product, on its first
 * product, and keeps it; a thread of ours that calls it also gets a malloc
 * arena (64 MiB of address space) and a stack (8 MiB).  Under an address-space
 * limit that leaves no room for them, OpenBLAS retries its allocation forever
 * inside the product: that room is checked before the first computation. */
#define BLAS_BUFFER_BYTES ((size_t) 130 << 20)
#define THREAD_BYTES      ((size_t) 72 << 20)

static GMutex blas_lock;
static gboolean blas_reserved;     /* the room was found once */
static size_t blas_target_vm;      /* the address space once the buffers exist (0: they do) */

/* The address space and data in use, from /proc/self/statm; FALSE if unknown. */
static gboolean
vm_in_use (size_t *vm,
           size_t *data)
{
  FILE *f = fopen ("/proc/self/statm", "re");
  unsigned long size = 0, resident, shared, text, lib, dat = 0;
  long page = sysconf (_SC_PAGE_SIZE);
  int n;

  if (f == NULL)
    return FALSE;
  n = fscanf (f, "%lu %lu %lu %lu %lu %lu", &size, &resident, &shared, &text, &lib, &dat);
  fclose (f);
  if (n != 6 || page <= 0)
    return FALSE;
  *vm = (size_t) size * (size_t) page;
  *data = (size_t) dat * (size_t) page;
  return TRUE;
}

/* The limits that apply (SIZE_MAX: none). */
static void
os_limits (size_t *as,
           size_t *data)
{
  struct rlimit rl;

  *as = *data = SIZE_MAX;
  if (getrlimit (RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    *as = (size_t) rl.rlim_cur;
  if (getrlimit (RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    *data = (size_t) rl.rlim_cur;
}

size_t
rpe_os_memory_headroom (void)
{
  size_t as, data, vm, dat, room = SIZE_MAX;

  os_limits (&as, &data);
  if (as == SIZE_MAX && data == SIZE_MAX)
    return SIZE_MAX;
  if (!vm_in_use (&vm, &dat))
    return SIZE_MAX;
  if (as != SIZE_MAX)
    room = as > vm ? as - vm : 0;
  if (data != SIZE_MAX)
    room = MIN (room, data > dat ? data - dat : 0);
  return room;
}

RpeStatus
rpe_os_memory_check (size_t bytes)
{
  size_t room = rpe_os_memory_headroom (), need;

  if (room == SIZE_MAX)
    return RPE_OK;
  if (!rpe_size_add (bytes, OS_MARGIN, &need) || need > room)
    return RPE_ERROR_SYSTEM_MEMORY;
  return RPE_OK;
}

size_t
rpe_os_memory_usable (void)
{
  size_t room;

  if (scope.depth > 0)
    return scope.os_room == SIZE_MAX ? SIZE_MAX : scope.os_room > scope.used ? scope.os_room - scope.used : 0;
  room = rpe_os_memory_headroom ();
  return room == SIZE_MAX ? SIZE_MAX : room > OS_MARGIN ? room - OS_MARGIN : 0;
}

/* The room OpenBLAS's buffers still need (0 once they exist or when no limit is set). */
static size_t
blas_pending (void)
{
  size_t vm, dat, pending = 0;

  g_mutex_lock (&blas_lock);
  if (!blas_reserved)
    {
      size_t blas = (size_t) MAX (openblas_get_num_threads (), 1), ours = rpe_parallel_threads ();

      pending = (blas + ours - 1) * BLAS_BUFFER_BYTES + (ours - 1) * THREAD_BYTES;
    }
  else if (blas_target_vm > 0 && vm_in_use (&vm, &dat))
    {
      if (vm >= blas_target_vm)
        blas_target_vm = 0;              /* the buffers exist now */
      else
        pending = blas_target_vm - vm;
    }
  g_mutex_unlock (&blas_lock);
  return pending;
}

static void
blas_reserve (size_t pending)
{
  size_t vm, dat;

  g_mutex_lock (&blas_lock);
  if (!blas_reserved && vm_in_use (&vm, &dat))
    {
      blas_reserved = TRUE;
      blas_target_vm = vm + pending;
    }
  g_mutex_unlock (&blas_lock);
}

RpeStatus
rpe_os_memory_check_compute (size_t bytes)
{
  size_t pending, total;
  size_t as, data;
  RpeStatus st;

  os_limits (&as, &data);
  if (as == SIZE_MAX && data == SIZE_MAX)
    return RPE_OK;
  pending = blas_pending ();
  if (!rpe_size_add (bytes, pending, &total))
    return RPE_ERROR_SYSTEM_MEMORY;
  st = rpe_os_memory_check (total);
  if (st == RPE_OK && pending > 0)
    blas_reserve (pending);
  return st;
}

void
rpe_os_memory_fit_threads (char **argv)
{
  size_t blas = (size_t) MAX (openblas_get_num_threads (), 1), ours = rpe_parallel_threads (), room, need;

  if (argv == NULL || argv[0] == NULL || getenv ("RPE_MEMORY_LIMIT_SERIAL") != NULL || (blas <= 1 && ours <= 1))
    return;
  room = rpe_os_memory_headroom ();
  need = (blas + ours - 1) * BLAS_BUFFER_BYTES + (ours - 1) * THREAD_BYTES + OS_MARGIN;
  if (room == SIZE_MAX || room >= need)
    return;
  /* one thread: OpenBLAS starts no pool and its products need one buffer */
  setenv ("OPENBLAS_NUM_THREADS", "1", 1);
  setenv ("RPE_NUM_THREADS", "1", 1);
  setenv ("RPE_MEMORY_LIMIT_SERIAL", "1", 1);
  execv ("/proc/self/exe", argv);
  /* not run again: go on as we are (the computations still check the room) */
}

/* ---- the budget ------------------------------------------------------- */

RpeStatus
rpe_budget_check (size_t bytes)
{
  size_t total;

  if (!rpe_size_add (bytes, scope.used, &total))
    return RPE_ERROR_NO_MEMORY;
  if (total > rpe_budget_get ())
    return RPE_ERROR_NO_MEMORY;
  /* in a file's scope, what the file makes us hold is allocated by libraries
   * that abort when the system refuses (GLib, json-glib): the system's limit
   * is checked here, before they allocate */
  if (scope.depth > 0 && total > scope.os_room)
    return RPE_ERROR_SYSTEM_MEMORY;
  return RPE_OK;
}

void
rpe_budget_scope_begin (void)
{
  if (scope.depth++ == 0)
    {
      size_t room = rpe_os_memory_headroom ();

      scope.used = 0;
      scope.live = g_hash_table_new (g_direct_hash, g_direct_equal);
      scope.os_room = room == SIZE_MAX ? SIZE_MAX : room > OS_MARGIN ? room - OS_MARGIN : 0;
    }
}

void
rpe_budget_scope_end (void)
{
  if (scope.depth == 0)
    return;
  if (--scope.depth == 0)
    {
      g_hash_table_destroy (scope.live);
      scope.live = NULL;
      scope.used = 0;
    }
}

RpeStatus
rpe_budget_charge (size_t bytes)
{
  RpeStatus st = rpe_budget_check (bytes);

  if (st == RPE_OK && scope.depth > 0)
    scope.used += bytes;
  return st;
}

size_t
rpe_budget_scope_used (void)
{
  return scope.depth > 0 ? scope.used : 0;
}

void *
rpe_alloc (size_t count, size_t elem_size, RpeStatus *status)
{
  size_t bytes;
  void *ptr = NULL;
  RpeStatus st = RPE_OK;

  if (!rpe_size_mul (count, elem_size, &bytes) || !rpe_size_add (bytes, 63, &bytes))
    st = RPE_ERROR_OVERFLOW;
  else if ((st = rpe_budget_check (bytes)) == RPE_OK
           && (scope.depth > 0 || (st = rpe_os_memory_check_compute (bytes)) == RPE_OK))
    {
      bytes &= ~(size_t) 63;
      if (bytes == 0)
        bytes = 64;
      if (posix_memalign (&ptr, 64, bytes) != 0)
        {
          ptr = NULL;
          st = RPE_ERROR_SYSTEM_MEMORY;
        }
      else if (scope.depth > 0)
        {
          scope.used += bytes;
          g_hash_table_insert (scope.live, ptr, GSIZE_TO_POINTER (bytes));
        }
      else
        {
          g_mutex_lock (&held_lock);
          if (held_blocks == NULL)
            held_blocks = g_hash_table_new (g_direct_hash, g_direct_equal);
          g_hash_table_insert (held_blocks, ptr, GSIZE_TO_POINTER (bytes));
          held_bytes += bytes;
          g_mutex_unlock (&held_lock);
        }
    }
  if (status != NULL)
    *status = st;
  return ptr;
}

void *
rpe_alloc0 (size_t count, size_t elem_size, RpeStatus *status)
{
  void *ptr = rpe_alloc (count, elem_size, status);

  if (ptr != NULL)
    memset (ptr, 0, count * elem_size);
  return ptr;
}

void
rpe_free (void *ptr)
{
  gpointer size;

  if (ptr == NULL)
    return;
  if (scope.depth > 0 && g_hash_table_steal_extended (scope.live, ptr, NULL, &size))
    scope.used -= GPOINTER_TO_SIZE (size);
  else
    {
      g_mutex_lock (&held_lock);
      if (held_blocks != NULL && g_hash_table_steal_extended (held_blocks, ptr, NULL, &size))
        held_bytes -= GPOINTER_TO_SIZE (size);
      g_mutex_unlock (&held_lock);
    }
  free (ptr);
}

size_t
rpe_alloc_held (void)
{
  size_t bytes;

  g_mutex_lock (&held_lock);
  bytes = held_bytes;
  g_mutex_unlock (&held_lock);
  return bytes;
}

bool
rpe_all_finite_f (const float *x, size_t n)
{
  /* x * 0 is 0 for finite x and NaN for +-inf and NaN: eight independent accumulators
   * (packed by GCC's SLP vectoriser), checked once per 4096 values, with no branch per value */
  size_t i = 0;

  while (i + 8 <= n)
    {
      float a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;
      size_t end = n - i > 4096 ? i + 4096 : n;

      for (; i + 8 <= end; i += 8)
        {
          a0 += x[i] * 0.0f;      a1 += x[i + 1] * 0.0f;
          a2 += x[i + 2] * 0.0f;  a3 += x[i + 3] * 0.0f;
          a4 += x[i + 4] * 0.0f;  a5 += x[i + 5] * 0.0f;
          a6 += x[i + 6] * 0.0f;  a7 += x[i + 7] * 0.0f;
        }
      if (isnan (a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7))
        return false;
    }
  for (; i < n; i++)
    if (!isfinite (x[i]))
      return false;
  return true;
}

bool
rpe_all_finite_d (const double *x, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (!isfinite (x[i]))
      return false;
  return true;
}

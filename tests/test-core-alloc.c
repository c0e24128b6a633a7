#include "config.h"

#include <glib.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "rpe-alloc.h"
#include "rpe-test-utils.h"

static void
test_size_overflow (void)
{
  size_t out = 0;
  size_t dims[3] = { SIZE_MAX / 2, 2, 2 };

  g_assert_true (rpe_size_mul (3, 5, &out));
  g_assert_cmpuint (out, ==, 15);
  g_assert_false (rpe_size_mul (SIZE_MAX / 2 + 1, 2, &out));
  g_assert_false (rpe_size_add (SIZE_MAX, 1, &out));
  g_assert_false (rpe_size_prod (&out, 3, dims));
  g_assert_true (rpe_size_prod (&out, 2, dims));
  g_assert_cmpint (rpe_size_bytes (&out, 4, (size_t) 1 << 50, (size_t) 1 << 20, 1, 1), ==, RPE_ERROR_OVERFLOW);
  g_assert_cmpint (rpe_size_bytes (&out, 4, 1024, 1024, 8, 1), ==, RPE_OK);
  g_assert_cmpuint (out, ==, (size_t) 4 * 1024 * 1024 * 8);
}

static void
test_budget (void)
{
  RpeStatus st = RPE_OK;
  void *p;

  g_assert_cmpuint (rpe_budget_get (), >, 0);
  g_assert_cmpuint (rpe_budget_get (), <=, rpe_physical_memory ());

  rpe_budget_set (1 << 20);
  g_assert_cmpint (rpe_budget_check (1 << 20), ==, RPE_OK);
  g_assert_cmpint (rpe_budget_check ((1 << 20) + 1), ==, RPE_ERROR_NO_MEMORY);
  p = rpe_alloc (1 << 20, 2, &st);
  g_assert_null (p);
  g_assert_cmpint (st, ==, RPE_ERROR_NO_MEMORY);
  p = rpe_alloc (SIZE_MAX / 2, 4, &st);
  g_assert_null (p);
  g_assert_cmpint (st, ==, RPE_ERROR_OVERFLOW);
  rpe_budget_set (0);   /* back to the default */
  g_assert_cmpuint (rpe_budget_get (), ==, rpe_budget_default ());

  p = rpe_alloc0 (1000, sizeof (float), &st);
  g_assert_nonnull (p);
  g_assert_cmpint (st, ==, RPE_OK);
  g_assert_cmpuint ((uintptr_t) p % 64, ==, 0);
  for (int i = 0; i < 1000; i++)
    g_assert_cmpfloat (((float *) p)[i], ==, 0.0f);
  rpe_free (p);
  rpe_free (NULL);
}

static void
test_budget_parse (void)
{
  size_t b = 0;

  g_assert_true (rpe_budget_parse ("1048576", &b));
  g_assert_cmpuint (b, ==, 1048576);
  g_assert_true (rpe_budget_parse ("512M", &b));
  g_assert_cmpuint (b, ==, (size_t) 512 << 20);
  g_assert_true (rpe_budget_parse ("1.5GiB", &b));
  g_assert_cmpuint (b, ==, (size_t) 3 << 29);
  g_assert_true (rpe_budget_parse ("2g", &b));
  g_assert_cmpuint (b, ==, (size_t) 2 << 30);
  g_assert_true (rpe_budget_parse ("50%", &b));
  g_assert_cmpuint (b, ==, (size_t) ((double) rpe_physical_memory () * 0.5));
  g_assert_false (rpe_budget_parse ("", &b));
  g_assert_false (rpe_budget_parse ("-5M", &b));
  g_assert_false (rpe_budget_parse ("12X", &b));
  g_assert_false (rpe_budget_parse ("nan", &b));
  g_assert_false (rpe_budget_parse ("200%", &b));
  g_assert_false (rpe_budget_parse ("1e40", &b));
  g_assert_false (rpe_budget_parse (NULL, &b));
}

/* RPE_MEMORY_BUDGET sets the default, in a child so the parent's environment stays clean. */
static void
test_budget_env (void)
{
  if (g_test_subprocess ())
    {
      g_setenv ("RPE_MEMORY_BUDGET", "64M", TRUE);
      rpe_budget_set (0);
      g_assert_cmpuint (rpe_budget_get (), ==, (size_t) 64 << 20);
      g_assert_cmpint (rpe_budget_check ((size_t) 65 << 20), ==, RPE_ERROR_NO_MEMORY);
      g_setenv ("RPE_MEMORY_BUDGET", "garbage", TRUE);
      g_assert_cmpuint (rpe_budget_get (), ==, rpe_physical_memory () / 4 * 3);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

static void
test_finite (void)
{
  float f[4] = { 1, 2, 3, 4 };
  double d[3] = { 0, -1, 1e300 };

  g_assert_true (rpe_all_finite_f (f, 4));
  f[2] = NAN;
  g_assert_false (rpe_all_finite_f (f, 4));
  f[2] = INFINITY;
  g_assert_false (rpe_all_finite_f (f, 4));
  g_assert_true (rpe_all_finite_d (d, 3));
  d[1] = -INFINITY;
  g_assert_false (rpe_all_finite_d (d, 3));
}

static void
test_status_strings (void)
{
  for (int s = RPE_OK; s <= RPE_ERROR_DEGENERATE; s++)
    {
      const char *msg = rpe_status_to_string ((RpeStatus) s);
      g_assert_nonnull (msg);
      g_assert_cmpstr (msg, !=, "unknown status");
    }
  g_assert_cmpstr (rpe_status_to_string ((RpeStatus) 999), ==, "unknown status");
}

#if !defined(__SANITIZE_ADDRESS__)
/* The address space in use now, from /proc/self/statm (an independent reading). */
static size_t
vm_now (void)
{
  FILE *f = fopen ("/proc/self/statm", "r");
  unsigned long pages = 0;

  g_assert_nonnull (f);
  g_assert_cmpint (fscanf (f, "%lu", &pages), ==, 1);
  fclose (f);
  return (size_t) pages * (size_t) sysconf (_SC_PAGE_SIZE);
}
#endif

/* Under the system's limit on the address space (ulimit -v), what does not fit
 * is refused as the system's, before it is allocated: a block (rpe_alloc), a
 * file's charges (a budget scope) and a first computation that would need
 * OpenBLAS's work buffers.  Run in a subprocess that sets the limit. */
static void
test_os_limit (void)
{
#if defined(__SANITIZE_ADDRESS__)
  g_test_skip ("AddressSanitizer reserves the address space this limit counts");
  return;
#else
  if (!g_test_subprocess () && !rpe_test_address_limit_applies ())
    {
      g_test_skip ("this system does not apply an address-space limit set with setrlimit "
                   "(qemu-user accepts it and applies nothing)");
      return;
    }
  if (g_test_subprocess ())
    {
      struct rlimit rl;
      RpeStatus st = RPE_OK;
      void *p;

      rl.rlim_cur = rl.rlim_max = vm_now () + ((size_t) 96 << 20);
      g_assert_cmpint (setrlimit (RLIMIT_AS, &rl), ==, 0);
      rpe_budget_set ((size_t) 64 << 30);
      g_assert_cmpuint (rpe_os_memory_headroom (), <=, (size_t) 96 << 20);
      /* within the budget, over the limit: the system's refusal, not the budget's */
      p = rpe_alloc ((size_t) 256 << 20, 1, &st);
      g_assert_null (p);
      g_assert_cmpint (st, ==, RPE_ERROR_SYSTEM_MEMORY);
      g_assert_nonnull (strstr (rpe_status_to_string (st), "limit"));
      g_assert_null (strstr (rpe_status_to_string (st), "budget"));
      /* a small block still fits, when OpenBLAS's buffers are not needed */
      rpe_budget_scope_begin ();
      p = rpe_alloc (1 << 20, 1, &st);
      g_assert_nonnull (p);
      rpe_free (p);
      /* in a file's scope, charges are checked against the limit too */
      g_assert_cmpint (rpe_budget_charge ((size_t) 200 << 20), ==, RPE_ERROR_SYSTEM_MEMORY);
      g_assert_cmpint (rpe_budget_charge (4096), ==, RPE_OK);
      rpe_budget_scope_end ();
      /* a computation's first block: OpenBLAS would need more than 96 MiB */
      g_assert_cmpint (rpe_os_memory_check_compute (4096), ==, RPE_ERROR_SYSTEM_MEMORY);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();
  /* and without a limit nothing is refused for it */
  g_assert_cmpint (rpe_os_memory_check_compute ((size_t) 1 << 20), ==, RPE_OK);
#endif
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/core/alloc/size-overflow", test_size_overflow);
  g_test_add_func ("/core/alloc/budget", test_budget);
  g_test_add_func ("/core/alloc/budget-parse", test_budget_parse);
  g_test_add_func ("/core/alloc/budget-env", test_budget_env);
  g_test_add_func ("/core/alloc/finite", test_finite);
  g_test_add_func ("/core/alloc/status-strings", test_status_strings);
  g_test_add_func ("/core/alloc/os-limit", test_os_limit);
  return g_test_run ();
}

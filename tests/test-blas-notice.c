/* test-blas-notice.c: which kernels run (core/rpe-kernels.h) and the one-time notice about
 * OpenBLAS's generic kernels (ui/explore/rpe-blas-notice.h), through the fake core name hook
 * (RPE_FAKE_BLAS_CORE) and a private cache directory: OpenBLAS itself is not changed. */
#include "config.h"

#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "rpe-blas-notice.h"
#include "rpe-kernels.h"
#include "rpe-test-utils.h"

static void
set_fake_core (const char *name)
{
  if (name != NULL)
    g_setenv ("RPE_FAKE_BLAS_CORE", name, TRUE);
  else
    g_unsetenv ("RPE_FAKE_BLAS_CORE");
}

/* The decision: a core without AVX2 kernels on a CPU with AVX2 + FMA; names in any case. */
static void
test_decision (void)
{
  static const char *const slow[] = { "Prescott", "Core2", "Nehalem", "Sandybridge", "Bulldozer", "Generic" };
  static const char *const fast[] = { "Haswell", "ZEN", "SkylakeX", "cooperlake", "SapphireRapids" };
  RpeKernelInfo info;

  for (size_t i = 0; i < G_N_ELEMENTS (slow); i++)
    {
      set_fake_core (slow[i]);
      rpe_kernel_info (&info);
      g_assert_cmpstr (info.blas_core, ==, slow[i]);
      g_assert_true (info.blas_slow_core == info.cpu_avx2);
      if (info.blas_slow_core)
        g_assert_cmpstr (info.blas_suggest, ==, info.cpu_avx512 ? "SkylakeX" : "Haswell");
      else
        g_assert_null (info.blas_suggest);
    }
  for (size_t i = 0; i < G_N_ELEMENTS (fast); i++)
    {
      set_fake_core (fast[i]);
      rpe_kernel_info (&info);
      g_assert_false (info.blas_slow_core);
      g_assert_null (info.blas_suggest);
    }
  set_fake_core (NULL);
  rpe_kernel_info (&info);
  g_test_message ("OpenBLAS core %s (%s); kernels: gemm %s, attention %s, linear %s, softmax %s, rng %s",
                  info.blas_core, info.blas_config, info.gemm, info.attention, info.linear, info.softmax, info.rng);
  g_assert_true (g_str_has_prefix (info.blas_config, "OpenBLAS "));
  g_assert_cmpuint (strlen (info.blas_core), >, 0);
  for (const char *const *k = (const char *const[]) { info.gemm, info.attention, info.linear, info.softmax, info.rng,
                                                      NULL }; *k != NULL; k++)
    g_assert_true (g_str_equal (*k, "avx512") || g_str_equal (*k, "avx2") || g_str_equal (*k, "generic"));
}

/* The text names what runs and what to do, for a machine described by hand (so it is checked
 * on any CPU); none is due for a core with AVX2 kernels. */
static void
test_text (void)
{
  RpeKernelInfo info = { .blas_core = "Prescott", .cpu_avx2 = TRUE, .cpu_avx512 = TRUE, .blas_slow_core = TRUE,
                         .blas_suggest = "SkylakeX" };
  g_autofree char *full = NULL, *brief = NULL, *none = NULL;

  g_strlcpy (info.blas_config, "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Prescott MAX_THREADS=64",
             sizeof info.blas_config);
  full = rpe_blas_notice_text (&info, FALSE);
  brief = rpe_blas_notice_text (&info, TRUE);
  g_assert_nonnull (strstr (full, "OpenBLAS 0.3.21"));
  g_assert_nonnull (strstr (full, "Prescott"));
  g_assert_nonnull (strstr (full, "AVX-512"));
  g_assert_nonnull (strstr (full, "OPENBLAS_CORETYPE=SkylakeX"));
  g_assert_nonnull (strstr (full, "newer OpenBLAS"));
  g_assert_nonnull (strstr (brief, "OPENBLAS_CORETYPE=SkylakeX"));
  g_assert_null (strchr (brief, '\n'));
  g_assert_cmpuint (strlen (brief), <, strlen (full));
  info.blas_slow_core = FALSE;
  info.blas_suggest = NULL;
  none = rpe_blas_notice_text (&info, FALSE);
  g_assert_null (none);
}

/* `rpe` prints the notice once: the first run with a slow fake core prints it on stderr with the
 * remedy, the second (same stamp) does not, a core with AVX2 kernels never does; the stamp lives
 * in the cache directory it was given. */
static void
test_cli_once (void)
{
  g_autofree char *cache = rpe_test_tmp_path ("notice-cache");
  g_autofree char *err1 = NULL, *err2 = NULL, *err3 = NULL, *stamp = NULL;
  g_autofree char *saved = g_strdup (g_getenv ("XDG_CACHE_HOME"));
  RpeKernelInfo info;

  g_setenv ("XDG_CACHE_HOME", cache, TRUE);
  set_fake_core ("Prescott");
  rpe_kernel_info (&info);
  g_assert_cmpint (rpe_test_run_cli (NULL, &err1, "info demo"), ==, 0);
  g_assert_cmpint (rpe_test_run_cli (NULL, &err2, "info demo"), ==, 0);
  stamp = g_build_filename (cache, "rpe-studio", "blas-notice-rpe", NULL);
  if (info.cpu_avx2)
    {
      g_assert_nonnull (strstr (err1, "rpe: note: "));
      g_assert_nonnull (strstr (err1, "OPENBLAS_CORETYPE="));
      g_assert_null (strstr (err2, "OPENBLAS_CORETYPE"));
      g_assert_true (g_file_test (stamp, G_FILE_TEST_IS_REGULAR));
      /* another core: due again */
      set_fake_core ("Nehalem");
      g_assert_cmpint (rpe_test_run_cli (NULL, &err3, "info demo"), ==, 0);
      g_assert_nonnull (strstr (err3, "Nehalem"));
      g_clear_pointer (&err3, g_free);
    }
  else
    g_test_message ("this CPU has no AVX2: no notice is due");
  g_assert_cmpint (g_remove (stamp), ==, info.cpu_avx2 ? 0 : -1);
  set_fake_core ("Haswell");
  g_assert_cmpint (rpe_test_run_cli (NULL, &err3, "info demo"), ==, 0);
  g_assert_null (strstr (err3, "OPENBLAS_CORETYPE"));
  g_assert_false (g_file_test (stamp, G_FILE_TEST_EXISTS));
  set_fake_core (NULL);
  if (saved != NULL)
    g_setenv ("XDG_CACHE_HOME", saved, TRUE);
  else
    g_unsetenv ("XDG_CACHE_HOME");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/blas-notice/decision", test_decision);
  g_test_add_func ("/blas-notice/text", test_text);
  g_test_add_func ("/blas-notice/cli-once", test_cli_once);
  return g_test_run ();
}

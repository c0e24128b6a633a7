/* rpe-blas-notice.c: the one-time notice about OpenBLAS's kernels (see rpe-blas-notice.h). */
#include "config.h"

#include <string.h>

#include <glib/gi18n.h>
#include <glib/gstdio.h>

#include "rpe-blas-notice.h"

/* "OpenBLAS 0.3.21" from the configuration string, else "OpenBLAS" */
static char *
blas_release (const char *config)
{
  if (g_str_has_prefix (config, "OpenBLAS "))
    {
      const char *v = config + strlen ("OpenBLAS ");
      size_t len = strcspn (v, " ");

      if (len > 0)
        return g_strdup_printf ("OpenBLAS %.*s", (int) len, v);
    }
  return g_strdup ("OpenBLAS");
}

char *
rpe_blas_notice_text (const RpeKernelInfo *info,
                      gboolean             brief)
{
  g_autofree char *release = NULL;

  if (info == NULL || !info->blas_slow_core || info->blas_suggest == NULL)
    return NULL;
  release = blas_release (info->blas_config);
  if (brief)
    /* TRANSLATORS: %s is a name such as "SkylakeX" (keep OPENBLAS_CORETYPE as is) */
    return g_strdup_printf (_("Slow generic OpenBLAS kernels: set OPENBLAS_CORETYPE=%s or update OpenBLAS"),
                            info->blas_suggest);
  /* TRANSLATORS: the first %s is e.g. "OpenBLAS 0.3.21", the second its kernels' name ("Prescott"),
   * the third "AVX-512" or "AVX2", the last a kernel name such as "SkylakeX"; keep
   * OPENBLAS_CORETYPE as is */
  return g_strdup_printf (_("%s runs its generic %s kernels on this CPU, which has %s: the matrix products "
                            "RPE Studio leaves to OpenBLAS (reference paths, fits, some maps) run several times "
                            "slower than they could.  A newer OpenBLAS recognises more CPUs; or set "
                            "OPENBLAS_CORETYPE=%s in the environment."),
                          release, info->blas_core[0] != '\0' ? info->blas_core : "?",
                          info->cpu_avx512 ? "AVX-512" : "AVX2", info->blas_suggest);
}

char *
rpe_blas_notice_take (const char *program,
                      gboolean    brief)
{
  static gsize given = 0;
  RpeKernelInfo info;
  g_autofree char *text = NULL, *dir = NULL, *stamp = NULL, *key = NULL, *old = NULL;

  rpe_kernel_info (&info);
  text = rpe_blas_notice_text (&info, brief);
  if (text == NULL || !g_once_init_enter (&given))
    return NULL;
  g_once_init_leave (&given, 1);
  key = g_strdup_printf ("%s|%s|%s\n", info.blas_core, info.blas_config, info.cpu_avx512 ? "avx512" : "avx2");
  dir = g_build_filename (g_get_user_cache_dir (), "rpe-studio", NULL);
  stamp = g_strdup_printf ("%s/blas-notice-%s", dir, program);
  if (g_file_get_contents (stamp, &old, NULL, NULL) && g_strcmp0 (old, key) == 0)
    return NULL;
  /* best effort: a cache that cannot be written means the notice comes again next time */
  if (g_mkdir_with_parents (dir, 0700) == 0)
    g_file_set_contents (stamp, key, -1, NULL);
  return g_steal_pointer (&text);
}

#include "config.h"

#include <glib/gstdio.h>
#include <math.h>

#include "rpe-test-utils.h"

double
rpe_test_max_rel_err (const float  *a,
                      const double *ref,
                      size_t        n,
                      double        floor)
{
  double scale = floor, err = 0;

  for (size_t i = 0; i < n; i++)
    scale = MAX (scale, fabs (ref[i]));
  for (size_t i = 0; i < n; i++)
    {
      double e = fabs ((double) a[i] - ref[i]);
      if (!(e <= err))   /* NaN counts as infinite error */
        err = isnan (e) ? INFINITY : e;
    }
  return err / scale;
}

double
rpe_test_max_abs_err (const float  *a,
                      const double *ref,
                      size_t        n)
{
  double err = 0;

  for (size_t i = 0; i < n; i++)
    {
      double e = fabs ((double) a[i] - ref[i]);
      if (!(e <= err))
        err = isnan (e) ? INFINITY : e;
    }
  return err;
}

static char *tmpdir;

static void
remove_tree (const char *path)
{
  GDir *dir = g_dir_open (path, 0, NULL);
  const char *name;

  if (dir != NULL)
    {
      while ((name = g_dir_read_name (dir)) != NULL)
        {
          char *child = g_build_filename (path, name, NULL);
          if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
            remove_tree (child);
          else
            g_unlink (child);
          g_free (child);
        }
      g_dir_close (dir);
    }
  g_rmdir (path);
}

static void
cleanup_tmpdir (void)
{
  if (tmpdir != NULL)
    remove_tree (tmpdir);
  g_clear_pointer (&tmpdir, g_free);
}

const char *
rpe_test_tmpdir (void)
{
  if (tmpdir == NULL)
    {
      tmpdir = g_dir_make_tmp ("rpe-test-XXXXXX", NULL);
      g_assert_nonnull (tmpdir);
      atexit (cleanup_tmpdir);
    }
  return tmpdir;
}

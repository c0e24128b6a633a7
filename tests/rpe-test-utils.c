#include "config.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdarg.h>
#include <sys/wait.h>

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

char *
rpe_test_tmp_path (const char *name)
{
  return g_build_filename (rpe_test_tmpdir (), name, NULL);
}

int
rpe_test_run_cli_argv (const char *const *args,
                       char             **out_out,
                       char             **err_out)
{
  const char *rpe = g_getenv ("RPE_CLI");
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(GError) error = NULL;
  int wait_status = 0;
  gboolean failed;

  g_assert_nonnull (rpe);
  g_ptr_array_add (argv, (gpointer) rpe);
  for (gsize i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               &out, &err, &wait_status, &error));
  g_assert_no_error (error);
  failed = !WIFEXITED (wait_status) || WEXITSTATUS (wait_status) != 0;
  if (g_test_verbose () || (failed && out_out == NULL && err_out == NULL))
    {
      g_autofree char *line = g_strjoinv (" ", (char **) args);
      g_printerr ("$ rpe %s\n%s%s", line, out, err);
    }
  if (out_out != NULL)
    *out_out = g_steal_pointer (&out);
  if (err_out != NULL)
    *err_out = g_steal_pointer (&err);
  g_assert_true (WIFEXITED (wait_status));
  return WEXITSTATUS (wait_status);
}

int
rpe_test_run_cli (char       **out_out,
                  char       **err_out,
                  const char  *format,
                  ...)
{
  va_list ap;
  g_autofree char *cmdline = NULL;
  g_auto(GStrv) words = NULL;
  g_autoptr(GError) error = NULL;

  va_start (ap, format);
  cmdline = g_strdup_vprintf (format, ap);
  va_end (ap);
  g_assert_true (g_shell_parse_argv (cmdline, NULL, &words, &error));
  g_assert_no_error (error);
  return rpe_test_run_cli_argv ((const char *const *) words, out_out, err_out);
}

int
rpe_test_run_cli_args (char       **out_out,
                       char       **err_out,
                       const char  *first,
                       ...)
{
  g_autoptr(GPtrArray) words = g_ptr_array_new ();
  va_list ap;

  va_start (ap, first);
  for (const char *a = first; a != NULL; a = va_arg (ap, const char *))
    g_ptr_array_add (words, (gpointer) a);
  va_end (ap);
  g_ptr_array_add (words, NULL);
  return rpe_test_run_cli_argv ((const char *const *) words->pdata, out_out, err_out);
}

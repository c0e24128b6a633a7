#include "config.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdarg.h>
#include <sys/wait.h>

#include <cairo.h>
#include <stdlib.h>

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
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr (GError) error = NULL;
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
  g_auto (GStrv) words = NULL;
  g_autoptr (GError) error = NULL;

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
  g_autoptr (GPtrArray) words = g_ptr_array_new ();
  va_list ap;

  va_start (ap, first);
  for (const char *a = first; a != NULL; a = va_arg (ap, const char *))
    g_ptr_array_add (words, (gpointer) a);
  va_end (ap);
  g_ptr_array_add (words, NULL);
  return rpe_test_run_cli_argv ((const char *const *) words->pdata, out_out, err_out);
}

int
rpe_test_run_cli_export (const char        *view,
                         const char *const *args,
                         const char        *out)
{
  g_autoptr (GPtrArray) words = g_ptr_array_new ();
  g_autofree char *err = NULL;
  int status;

  g_ptr_array_add (words, (gpointer) "export");
  if (view != NULL)
    g_ptr_array_add (words, (gpointer) view);
  for (gsize i = 0; args[i] != NULL; i++)
    g_ptr_array_add (words, (gpointer) args[i]);
  g_ptr_array_add (words, (gpointer) "-o");
  g_ptr_array_add (words, (gpointer) out);
  g_ptr_array_add (words, NULL);
  status = rpe_test_run_cli_argv ((const char *const *) words->pdata, NULL, &err);
  if (status != 0)
    g_test_message ("rpe export failed: %s", err);
  return status;
}

double
rpe_test_png_difference (const char *a_path,
                         const char *b_path,
                         int        *max_delta)
{
  cairo_surface_t *a = cairo_image_surface_create_from_png (a_path);
  cairo_surface_t *b = cairo_image_surface_create_from_png (b_path);
  int w, h, sa, sb;
  const guint8 *da, *db;
  gsize differ = 0;
  int largest;

  g_assert_cmpint (cairo_surface_status (a), ==, CAIRO_STATUS_SUCCESS);
  g_assert_cmpint (cairo_surface_status (b), ==, CAIRO_STATUS_SUCCESS);
  w = cairo_image_surface_get_width (a);
  h = cairo_image_surface_get_height (a);
  g_assert_cmpint (w, ==, cairo_image_surface_get_width (b));
  g_assert_cmpint (h, ==, cairo_image_surface_get_height (b));
  sa = cairo_image_surface_get_stride (a);
  sb = cairo_image_surface_get_stride (b);
  da = cairo_image_surface_get_data (a);
  db = cairo_image_surface_get_data (b);
  if (max_delta == NULL)
    max_delta = &largest;
  *max_delta = 0;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        gboolean same = TRUE;

        for (int c = 0; c < 4; c++)
          {
            int delta = abs ((int) da[y * sa + 4 * x + c] - (int) db[y * sb + 4 * x + c]);

            *max_delta = MAX (*max_delta, delta);
            same = same && delta == 0;
          }
        differ += !same;
      }
  cairo_surface_destroy (a);
  cairo_surface_destroy (b);
  return (double) differ / ((double) w * h);
}

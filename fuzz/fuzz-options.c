/* libFuzzer target: `rpe`'s command line.  The input is split at NUL bytes into arguments
 * (at most 64); they go through the number parsers (rpe-cli-parse.h) and through the whole
 * option parsing of rpe (global options, the command, its subcommand, every option of it), which
 * runs nothing.  Nothing may crash, leak, read out of bounds or hang, and a parser must set an
 * error exactly when it fails. */
#include "config.h"

#include <glib.h>
#include <stdio.h>
#include <unistd.h>

#include "rpe-cli.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

#define MAX_ARGS 64

static void
check_numbers (const char *text)
{
  GError  *error = NULL;
  gint64   i = 0;
  double   d = 0;
  guint64  b = 0;
  gsize    n1 = 0, n2 = 0;
  GArray  *list = NULL;
  gboolean ok;

  ok = rpe_cli_parse_int ("--n", text, G_MININT64, G_MAXINT64, &i, &error);
  g_assert_true (ok == (error == NULL));
  g_clear_error (&error);
  ok = rpe_cli_parse_double ("--x", text, -G_MAXDOUBLE, G_MAXDOUBLE, &d, &error);
  g_assert_true (ok == (error == NULL));
  g_assert_true (!ok || (d >= -G_MAXDOUBLE && d <= G_MAXDOUBLE));
  g_clear_error (&error);
  ok = rpe_cli_parse_size ("--memory-budget", text, (guint64) 1 << 40, &b, &error);
  g_assert_true (ok == (error == NULL));
  g_assert_true (!ok || b >= 1);
  g_clear_error (&error);
  ok = rpe_cli_parse_int_list ("--l", text, -5, 1000, 16, &list, &error);
  g_assert_true (ok == (error == NULL) && ok == (list != NULL));
  g_assert_true (!ok || (list->len >= 1 && list->len <= 16));
  g_clear_pointer (&list, g_array_unref);
  g_clear_error (&error);
  ok = rpe_cli_parse_double_list ("--d", text, 0, TRUE, 10, 16, &list, &error);
  g_assert_true (ok == (error == NULL) && ok == (list != NULL));
  for (guint k = 0; ok && k < list->len; k++)
    g_assert_true (g_array_index (list, double, k) > 0 && g_array_index (list, double, k) <= 10);
  g_clear_pointer (&list, g_array_unref);
  g_clear_error (&error);
  ok = rpe_cli_parse_grid ("--grid", text, 1 << 20, &n1, &n2, &error);
  g_assert_true (ok == (error == NULL));
  g_assert_true (!ok || (n1 >= 1 && n2 >= 1 && n1 <= (1 << 20) && n2 <= (1 << 20)));
  g_clear_error (&error);
  ok = rpe_cli_parse_range ("--rows", text, 100, &n1, &n2, &error);
  g_assert_true (ok == (error == NULL));
  g_assert_true (!ok || n1 < n2);
  g_clear_error (&error);
}

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  static gboolean  init = FALSE;
  g_autofree char *text = g_strndup ((const char *) data, size); /* NUL-terminated, maybe shorter */
  char            *argv[MAX_ARGS + 2];
  int              argc = 1;
  gsize            at = 0;

  if (!init)
    {
      /* the help texts are not the point here (their messages on stderr: -close_fd_mask=2) */
      if (freopen ("/dev/null", "w", stdout) == NULL)
        return 0;
      init = TRUE;
    }
  argv[0] = (char *) "rpe";
  while (at < size && argc <= MAX_ARGS)
    {
      const char *arg = (const char *) data + at;
      gsize       len = strnlen (arg, size - at);
      char       *copy = g_strndup (arg, len);

      argv[argc++] = copy;
      at += len + 1;
    }
  argv[argc] = NULL;
  (void) text;
  if (argc > 1)
    check_numbers (argv[1]);
  {
    int status = rpe_cli_check_args (argc, argv);

    g_assert_true (status == 0 || status == 2);
  }
  for (int i = 1; i < argc; i++)
    g_free (argv[i]);
  return 0;
}

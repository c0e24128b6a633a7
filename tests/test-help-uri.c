/* test-help-uri.c: what the window's Help (F1) opens, decided without GTK: the installed
 * explorer guide when the documentation directory holds it, else the README online. */
#include "config.h"

#include <glib.h>
#include <glib/gstdio.h>

#include "rpe-help.h"

static void
test_installed_guide (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *docdir = g_dir_make_tmp ("rpe-help-XXXXXX", &error);
  g_autofree char *docs = NULL;
  g_autofree char *guide = NULL;
  g_autofree char *uri = NULL;
  g_autofree char *back = NULL;

  g_assert_no_error (error);
  docs = g_build_filename (docdir, "docs", NULL);
  guide = g_build_filename (docs, "explorer.md", NULL);
  g_assert_cmpint (g_mkdir (docs, 0700), ==, 0);

  /* the directory alone, no guide: online */
  uri = rpe_help_uri (docdir);
  g_assert_cmpstr (uri, ==, RPE_HELP_ONLINE_URI);
  g_clear_pointer (&uri, g_free);

  /* a directory where the guide should be is no guide */
  g_assert_cmpint (g_mkdir (guide, 0700), ==, 0);
  uri = rpe_help_uri (docdir);
  g_assert_cmpstr (uri, ==, RPE_HELP_ONLINE_URI);
  g_clear_pointer (&uri, g_free);
  g_assert_cmpint (g_rmdir (guide), ==, 0);

  /* the installed guide: its file:// URI, which names that very file */
  g_assert_true (g_file_set_contents (guide, "# The explorer\n", -1, &error));
  g_assert_no_error (error);
  uri = rpe_help_uri (docdir);
  g_assert_true (g_str_has_prefix (uri, "file:///"));
  back = g_filename_from_uri (uri, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (back, ==, guide);

  g_assert_cmpint (g_unlink (guide), ==, 0);
  g_assert_cmpint (g_rmdir (docs), ==, 0);
  g_assert_cmpint (g_rmdir (docdir), ==, 0);
}

static void
test_no_docdir (void)
{
  g_autofree char *a = rpe_help_uri (NULL);
  g_autofree char *b = rpe_help_uri ("");
  g_autofree char *c = rpe_help_uri ("relative/doc");

  g_assert_cmpstr (a, ==, RPE_HELP_ONLINE_URI);
  g_assert_cmpstr (b, ==, RPE_HELP_ONLINE_URI);
  g_assert_cmpstr (c, ==, RPE_HELP_ONLINE_URI);
  g_assert_true (g_str_has_prefix (RPE_HELP_ONLINE_URI, "https://"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/help/uri/installed-guide", test_installed_guide);
  g_test_add_func ("/help/uri/no-docdir", test_no_docdir);
  return g_test_run ();
}

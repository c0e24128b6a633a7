/* test-potfiles.c: po/POTFILES.in cannot rot.  It names every source file that marks a
 * string for translation (_(), N_(), C_(), ngettext (), translatable="yes") and nothing else;
 * the .ui files name the project's gettext domain; xgettext, run as `meson compile
 * rpe-studio-pot` runs it (the glib preset), extracts the strings of every listed file without a
 * warning; a catalogue translates the figure text.  No display; the xgettext and catalogue checks
 * are skipped where the gettext tools are missing. */
#include "config.h"

#include <glib.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <locale.h>
#include <string.h>

#include "rpe-figure-names.h"

/* the folders whose files may hold user-visible strings (core/ stays unmarked: status strings) */
static const char *const scanned[] = { "app", "ui", "resources", "core", NULL };

static char *
source_root (void)
{
  return g_path_get_dirname (g_test_get_dir (G_TEST_DIST));
}

/* POTFILES.in's entries, in order (comments and blank lines skipped) */
static GPtrArray *
read_potfiles (const char *root)
{
  g_autofree char *path = g_build_filename (root, "po", "POTFILES.in", NULL);
  g_autofree char *text = NULL;
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) lines = NULL;
  GPtrArray *files = g_ptr_array_new_with_free_func (g_free);

  g_assert_true (g_file_get_contents (path, &text, NULL, &error));
  g_assert_no_error (error);
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      char *line = g_strstrip (lines[i]);

      if (line[0] != '\0' && line[0] != '#')
        g_ptr_array_add (files, g_strdup (line));
    }
  return files;
}

static gboolean
marks_strings (const char *path)
{
  g_autofree char *text = NULL;
  static const char *const marks[] = { "_(\"", "ngettext (", "translatable=\"yes\"", NULL };

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  for (guint i = 0; marks[i] != NULL; i++)
    if (strstr (text, marks[i]) != NULL)
      return TRUE;
  return FALSE;
}

/* every .c and .ui file under dir (relative to root) */
static void
collect_sources (const char *root,
                 const char *dir,
                 GPtrArray  *out)
{
  g_autofree char *full = g_build_filename (root, dir, NULL);
  g_autoptr (GDir) d = g_dir_open (full, 0, NULL);
  const char *name;

  if (d == NULL)
    return;
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *rel = g_build_filename (dir, name, NULL);
      g_autofree char *path = g_build_filename (root, rel, NULL);

      if (g_file_test (path, G_FILE_TEST_IS_DIR))
        collect_sources (root, rel, out);
      else if (g_str_has_suffix (name, ".c") || g_str_has_suffix (name, ".ui"))
        g_ptr_array_add (out, g_steal_pointer (&rel));
    }
}

static gboolean
listed (GPtrArray  *files,
        const char *rel)
{
  for (guint i = 0; i < files->len; i++)
    if (g_str_equal (g_ptr_array_index (files, i), rel))
      return TRUE;
  return FALSE;
}

static void
test_list_exists (void)
{
  g_autofree char *root = source_root ();
  g_autoptr (GPtrArray) files = read_potfiles (root);

  g_assert_cmpuint (files->len, >, 0);
  for (guint i = 0; i < files->len; i++)
    {
      const char *rel = g_ptr_array_index (files, i);
      g_autofree char *path = g_build_filename (root, rel, NULL);

      if (!g_file_test (path, G_FILE_TEST_IS_REGULAR))
        g_error ("po/POTFILES.in names %s, which does not exist", rel);
      if (!marks_strings (path))
        g_error ("po/POTFILES.in names %s, which marks no string for translation", rel);
      for (guint j = 0; j < i; j++)
        g_assert_cmpstr (g_ptr_array_index (files, j), !=, rel);
    }
}

static void
test_list_complete (void)
{
  g_autofree char *root = source_root ();
  g_autoptr (GPtrArray) files = read_potfiles (root);
  g_autoptr (GPtrArray) sources = g_ptr_array_new_with_free_func (g_free);
  guint n_marking = 0;

  for (guint i = 0; scanned[i] != NULL; i++)
    collect_sources (root, scanned[i], sources);
  g_assert_cmpuint (sources->len, >, 50);
  for (guint i = 0; i < sources->len; i++)
    {
      const char *rel = g_ptr_array_index (sources, i);
      g_autofree char *path = g_build_filename (root, rel, NULL);

      if (!marks_strings (path))
        continue;
      n_marking++;
      if (g_str_has_prefix (rel, "core"))
        g_error ("%s marks strings for translation: core/ returns status strings, unmarked", rel);
      if (!listed (files, rel))
        g_error ("%s marks strings for translation but po/POTFILES.in does not name it", rel);
    }
  g_assert_cmpuint (n_marking, ==, files->len);
}

/* A template's strings are looked up in the domain its <interface> names: the project's. */
static void
test_ui_domain (void)
{
  g_autofree char *root = source_root ();
  g_autoptr (GPtrArray) files = read_potfiles (root);
  g_autofree char *expected = g_strdup_printf ("<interface domain=\"%s\">", GETTEXT_PACKAGE);

  for (guint i = 0; i < files->len; i++)
    {
      const char *rel = g_ptr_array_index (files, i);
      g_autofree char *path = g_build_filename (root, rel, NULL);
      g_autofree char *text = NULL;

      if (!g_str_has_suffix (rel, ".ui"))
        continue;
      g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
      if (strstr (text, expected) == NULL)
        g_error ("%s: its <interface> does not name the domain %s", rel, GETTEXT_PACKAGE);
    }
}

/* Counts "#: FILE:LINE" references of rel in the .pot. */
static guint
references (const char *pot,
            const char *rel)
{
  g_autofree char *needle = g_strdup_printf (" %s:", rel);
  guint n = 0;

  for (const char *p = strstr (pot, needle); p != NULL; p = strstr (p + 1, needle))
    n++;
  return n;
}

static void
test_xgettext (void)
{
  g_autofree char *xgettext = g_find_program_in_path ("xgettext");
  g_autofree char *root = source_root ();
  g_autofree char *list = NULL;
  g_autofree char *tmp = NULL;
  g_autofree char *pot_path = NULL;
  g_autofree char *pot = NULL;
  g_autofree char *err = NULL;
  g_autoptr (GPtrArray) files = NULL;
  g_autoptr (GError) error = NULL;
  int wait_status = 0;
  /* the glib preset of meson's i18n.gettext () (mesonbuild/modules/i18n.py) */
  const char *argv[] = {
    NULL, "--package-name=" GETTEXT_PACKAGE, "--from-code=UTF-8", "--add-comments",
    "--keyword=_", "--keyword=N_", "--keyword=C_:1c,2", "--keyword=NC_:1c,2",
    "--keyword=g_dcgettext:2", "--keyword=g_dngettext:2,3", "--keyword=g_dpgettext2:2c,3",
    "--flag=N_:1:pass-c-format", "--flag=C_:2:pass-c-format", "--flag=NC_:2:pass-c-format",
    "--flag=g_dngettext:2:pass-c-format", "--flag=g_strdup_printf:1:c-format",
    "--flag=g_string_printf:2:c-format", "--flag=g_string_append_printf:2:c-format",
    "--flag=g_error_new:3:c-format", "--flag=g_set_error:4:c-format", "--flag=g_markup_printf_escaped:1:c-format",
    "--flag=g_log:3:c-format", "--flag=g_print:1:c-format", "--flag=g_printerr:1:c-format",
    "--flag=g_printf:1:c-format", "--flag=g_fprintf:2:c-format", "--flag=g_sprintf:2:c-format",
    "--flag=g_snprintf:3:c-format",
    "-D", NULL, "-f", NULL, "-o", NULL, NULL,
  };
  static const char *const expected[] = {
    "Open _Recent",                                                      /* a menu of rpe-window.ui */
    "_Keyboard Shortcuts",
    "Export Figure",                                                     /* rpe-export-dialog.ui */
    "Could not open the checkpoint: %s. The previous parameters are kept.",
    "Templates of a trained model",                                      /* N_(), the tour */
    "msgid_plural \"%zu layers\"",                                       /* ngettext () */
    "power scale, γ = %g",                                               /* a \u escape, ui/render */
    "#. Translators:",                                                   /* translator comments */
    NULL,
  };

  if (xgettext == NULL)
    {
      g_test_skip ("xgettext is not installed (Debian: gettext)");
      return;
    }
  tmp = g_dir_make_tmp ("rpe-pot-XXXXXX", &error);
  g_assert_no_error (error);
  pot_path = g_build_filename (tmp, GETTEXT_PACKAGE ".pot", NULL);
  list = g_build_filename (root, "po", "POTFILES.in", NULL);
  argv[0] = xgettext;
  argv[G_N_ELEMENTS (argv) - 6] = root;
  argv[G_N_ELEMENTS (argv) - 4] = list;
  argv[G_N_ELEMENTS (argv) - 2] = pot_path;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                               NULL, &err, &wait_status, &error));
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (wait_status, NULL) || (err != NULL && err[0] != '\0'))
    g_error ("xgettext failed or warned:\n%s", err != NULL ? err : "");
  g_assert_true (g_file_get_contents (pot_path, &pot, NULL, &error));
  g_assert_no_error (error);
  for (guint i = 0; expected[i] != NULL; i++)
    if (strstr (pot, expected[i]) == NULL)
      g_error ("the .pot lacks %s", expected[i]);
  /* every listed file gives strings */
  files = read_potfiles (root);
  for (guint i = 0; i < files->len; i++)
    if (references (pot, g_ptr_array_index (files, i)) == 0)
      g_error ("xgettext extracts nothing from %s", (const char *) g_ptr_array_index (files, i));
  {
    guint n_msgid = 0;

    for (const char *p = strstr (pot, "\nmsgid "); p != NULL; p = strstr (p + 1, "\nmsgid "))
      n_msgid++;
    g_test_message ("%u strings in the .pot", n_msgid - 1);   /* less the header's empty msgid */
    g_assert_cmpuint (n_msgid, >, 500);
  }
  g_unlink (pot_path);
  g_rmdir (tmp);
}

/* A catalogue translates the figure text of ui/render (GTK-free, shared by the window and `rpe
 * export`): a German one made here with msgfmt, chosen with LANGUAGE under C.UTF-8. */
static void
test_catalogue (void)
{
  g_autofree char *msgfmt = g_find_program_in_path ("msgfmt");
  g_autofree char *tmp = NULL;
  g_autofree char *po = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *mo = NULL;
  g_autofree char *old_locale = NULL;
  g_autofree char *old_language = g_strdup (g_getenv ("LANGUAGE"));
  g_autoptr (GError) error = NULL;
  int wait_status = 0;
  const char *argv[] = { NULL, "-o", NULL, NULL, NULL };
  static const char po_text[] =
    "msgid \"\"\n"
    "msgstr \"\"\n"
    "\"Content-Type: text/plain; charset=UTF-8\\n\"\n"
    "\"Plural-Forms: nplurals=2; plural=(n != 1);\\n\"\n"
    "\n"
    "msgid \"attention weight\"\n"
    "msgstr \"Aufmerksamkeitsgewicht\"\n"
    "\n"
    "msgid \"relative error per position (%zu draw)\"\n"
    "msgid_plural \"relative error per position (%zu draws)\"\n"
    "msgstr[0] \"relativer Fehler je Position (%zu Ziehung)\"\n"
    "msgstr[1] \"relativer Fehler je Position (%zu Ziehungen)\"\n";

  if (msgfmt == NULL)
    {
      g_test_skip ("msgfmt is not installed (Debian: gettext)");
      return;
    }
  old_locale = g_strdup (setlocale (LC_ALL, NULL));
  if (setlocale (LC_ALL, "C.UTF-8") == NULL)
    {
      g_test_skip ("no C.UTF-8 locale");
      return;
    }
  tmp = g_dir_make_tmp ("rpe-mo-XXXXXX", &error);
  g_assert_no_error (error);
  po = g_build_filename (tmp, "de.po", NULL);
  dir = g_build_filename (tmp, "de", "LC_MESSAGES", NULL);
  mo = g_build_filename (dir, GETTEXT_PACKAGE ".mo", NULL);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_assert_true (g_file_set_contents (po, po_text, -1, &error));
  argv[0] = msgfmt;
  argv[2] = mo;
  argv[3] = po;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL,
                               &wait_status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (wait_status, NULL));

  g_setenv ("LANGUAGE", "de", TRUE);
  bindtextdomain (GETTEXT_PACKAGE, tmp);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);
  g_assert_cmpstr (rpe_figure_compare_bar (0), ==, "Aufmerksamkeitsgewicht");
  g_assert_cmpstr (ngettext ("relative error per position (%zu draw)",
                             "relative error per position (%zu draws)", 3),
                   ==, "relativer Fehler je Position (%zu Ziehungen)");
  g_assert_cmpstr (_("template value"), ==, "template value");   /* not in this catalogue */

  /* back to the untranslated strings every other test expects */
  if (old_language != NULL)
    g_setenv ("LANGUAGE", old_language, TRUE);
  else
    g_unsetenv ("LANGUAGE");
  setlocale (LC_ALL, old_locale);
  g_assert_cmpstr (rpe_figure_compare_bar (0), ==, "attention weight");
  g_unlink (mo);
  g_unlink (po);
  g_rmdir (dir);
  {
    g_autofree char *de = g_build_filename (tmp, "de", NULL);

    g_rmdir (de);
  }
  g_rmdir (tmp);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/i18n/potfiles/exist", test_list_exists);
  g_test_add_func ("/i18n/potfiles/complete", test_list_complete);
  g_test_add_func ("/i18n/potfiles/ui-domain", test_ui_domain);
  g_test_add_func ("/i18n/potfiles/xgettext", test_xgettext);
  g_test_add_func ("/i18n/catalogue/render", test_catalogue);
  return g_test_run ();
}

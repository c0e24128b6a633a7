/* rpe-help.c: the URI the window's Help menu opens. */
#include "config.h"

#include "rpe-help.h"

/* A newly allocated URI: file:// of DOCDIR/docs/explorer.md when that is a regular file (the
 * guide `meson install` puts under share/doc/rpe-studio), else RPE_HELP_ONLINE_URI.  DOCDIR may be
 * NULL (no installed copy known). */
char *
rpe_help_uri (const char *docdir)
{
  g_autofree char *guide = NULL;
  char            *uri;

  if (docdir == NULL || *docdir == '\0')
    return g_strdup (RPE_HELP_ONLINE_URI);

  guide = g_build_filename (docdir, RPE_HELP_GUIDE, NULL);
  if (!g_path_is_absolute (guide) || !g_file_test (guide, G_FILE_TEST_IS_REGULAR))
    return g_strdup (RPE_HELP_ONLINE_URI);

  uri = g_filename_to_uri (guide, NULL, NULL);
  return uri != NULL ? uri : g_strdup (RPE_HELP_ONLINE_URI);
}

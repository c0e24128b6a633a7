/* rpe-help.h: where the window's Help (F1) points: the installed explorer guide, or the README
 * online when the guide is not installed (no GTK: the choice is tested headless). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The project's README online, opened when no guide is installed. */
#define RPE_HELP_ONLINE_URI "https://github.com/rpestudio/rpe-studio#readme"

/* The explorer guide's path below the documentation directory (share/doc/rpe-studio). */
#define RPE_HELP_GUIDE "docs/explorer.md"

char *rpe_help_uri (const char *docdir);

G_END_DECLS

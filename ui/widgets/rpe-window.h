/* rpe-window.h: the main window, the explorer.
 *
 * One RpeExplorerState drives the views (RpeFigurePages in an AdwViewStack: Templates,
 * Attention, Curves, SPE vs RPE, Outputs, Compare, Overview) and a sidebar of live controls
 * (AdwFlap).  The embedded demo loads at start; checkpoints and sessions open from the file
 * chooser, drag and drop, the recent files or the command line, on a worker; errors show in a
 * banner and the previous state stays.  Closing asks about unsaved session changes.
 *
 * What the tests reach beyond this is declared in rpe-window-test.h.
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define RPE_TYPE_WINDOW (rpe_window_get_type ())
G_DECLARE_FINAL_TYPE (RpeWindow, rpe_window, RPE, WINDOW, AdwApplicationWindow)

/* application may be NULL (tests). */
RpeWindow *rpe_window_new       (GtkApplication *application);
/* A .rpe-session as a session, any other file as a checkpoint (on a worker). */
void       rpe_window_open_file (RpeWindow      *self,
                                 GFile          *file);

G_END_DECLS

/* rpe-window-remedy.h: the window's phrasing of the readers' findings. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The readers' findings (a module, layer or gate to choose) end with the
 * window's own remedy (its pickers); called once, before a file is read. */
void rpe_window_remedy_install (void);

G_END_DECLS

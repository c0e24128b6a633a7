/* rpe-ui-test-utils.h: what the UI tests share beyond waiting (rpe-ui-wait.h): a window's
 * idle and settled states, widgets and figures rendered to pixels, an explorer state copied. */
#pragma once

#include <cairo.h>
#include <gtk/gtk.h>

#include "rpe-export-dialog.h"
#include "rpe-explorer-state.h"
#include "rpe-window-test.h"

/* rpe_test_iterate_until condition: the window (data) runs no job. */
gboolean         rpe_test_window_idle         (gpointer          data);
/* The same after dispatching what is ready now (a job a finished one queued counts). */
gboolean         rpe_test_window_idle_drained (gpointer          data);

/* Lets the window map and lay out what changed (views start their jobs when mapped), waits for
 * its jobs, then for two painted frames so the results are on screen; with `idle_after`, then
 * for the jobs those frames started too. */
void             rpe_test_settle              (RpeWindow        *window,
                                               gboolean          idle_after);

/* The first widget of `type` (or a subtype) in the tree under root, depth first, root
 * included; NULL if none. */
GtkWidget       *rpe_test_find_widget         (GtkWidget        *root,
                                               GType             type);
/* The widget rendered to pixels as the screen shows it, on white (asserts a non-empty size). */
cairo_surface_t *rpe_test_render_widget       (GtkWidget        *widget);
/* The bundle's figure at its default size, on white. */
cairo_surface_t *rpe_test_render_bundle       (RpeFigureBundle  *bundle);
/* Same size and the same bytes. */
gboolean         rpe_test_surfaces_equal      (cairo_surface_t  *a,
                                               cairo_surface_t  *b);

/* `to` made to hold what `from` holds: the modules, the FastRPB weights and every writable
 * property. */
void             rpe_test_copy_state          (RpeExplorerState *from,
                                               RpeExplorerState *to);

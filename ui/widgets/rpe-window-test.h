/* rpe-window-test.h: what the tests (and the window's own files) reach of RpeWindow beyond
 * rpe-window.h: its state, views and pages, loading, sessions, Copy as Command and export.
 *
 * Not for other widgets: they talk to the window through its actions (win.*) and signals.
 */
#pragma once

#include <adwaita.h>

#include "rpe-window.h"

#include "rpe-attention-view.h"
#include "rpe-compare-view.h"
#include "rpe-compute.h"
#include "rpe-curves-page.h"
#include "rpe-explorer-state.h"
#include "rpe-export-dialog.h"
#include "rpe-figure-page.h"
#include "rpe-grid-window.h"
#include "rpe-outputs-view.h"
#include "rpe-overview-view.h"
#include "rpe-session.h"
#include "rpe-teaching-view.h"
#include "rpe-templates-view.h"
#include "rpe-tensor-browser.h"
#include "rpe-undo.h"
#include "rpe-watch.h"

G_BEGIN_DECLS

#define RPE_RESOURCE_PREFIX  "/io/github/rpestudio/RpeStudio"
#define RPE_DEMO_RESOURCE    RPE_RESOURCE_PREFIX "/demo/demo.safetensors"

/* The views, in the order of the view stack (Ctrl+1 .. Ctrl+5; win.view 1 .. 5). */
typedef enum
{
  RPE_WINDOW_VIEW_TEMPLATES,
  RPE_WINDOW_VIEW_ATTENTION,
  RPE_WINDOW_VIEW_CURVES,
  RPE_WINDOW_VIEW_TEACHING,
  RPE_WINDOW_VIEW_OUTPUTS,
  RPE_WINDOW_N_VIEWS,
} RpeWindowView;

RpeExplorerState *rpe_window_get_state          (RpeWindow      *self);
/* The guided tour's bar (an RpeTourBar; Help > Guided Tour, win.tour). */
GtkWidget        *rpe_window_get_tour           (RpeWindow      *self);
/* TRUE when the parameters come from the embedded demo (FALSE: random fallback). */
gboolean          rpe_window_get_from_demo      (RpeWindow      *self);
void              rpe_window_set_view           (RpeWindow      *self,
                                                 RpeWindowView   view);
RpeWindowView     rpe_window_get_view           (RpeWindow      *self);
/* The view's page (an RpeFigurePage). */
GtkWidget        *rpe_window_get_view_widget    (RpeWindow      *self,
                                                 RpeWindowView   view);
/* TRUE while a view computes or a file loads. */
gboolean          rpe_window_is_busy            (RpeWindow      *self);
/* The undo history of the window's parameter edits (win.undo, win.redo). */
RpeUndo          *rpe_window_get_undo           (RpeWindow      *self);
/* Writes the window size, the view and the colour map to the settings
 * (Close and Quit both call it). */
void              rpe_window_save_state         (RpeWindow      *self);
/* Cancels every running job (Escape). */
void              rpe_window_cancel             (RpeWindow      *self);
/* Opens "demo" or a trained demo "demo:NAME" (rpe-demos.h) as a checkpoint (on a worker, like
 * rpe_window_open_file); on error the banner shows the reason and the state is unchanged. */
void              rpe_window_open_demo          (RpeWindow      *self,
                                                 const char     *spec);
gboolean          rpe_window_is_loading         (RpeWindow      *self);
/* The tensor browser of the last opened checkpoint (NULL if none is open). */
RpeTensorBrowser *rpe_window_get_tensor_browser (RpeWindow      *self);
/* The message shown in the banner (NULL if none). */
const char       *rpe_window_get_message        (RpeWindow      *self);
gboolean          rpe_window_get_sidebar_visible (RpeWindow     *self);
void              rpe_window_set_sidebar_visible (RpeWindow     *self,
                                                  gboolean       visible);

/* The figure of a view as it shows it now (NULL while the view has no result);
 * the same figure `rpe export` draws for the same parameters. */
RpeFigureBundle  *rpe_window_build_figure       (RpeWindow      *self,
                                                 RpeWindowView   view);
/* Exports the current view's figure to path with the default options (the
 * extension picks the format; default size), synchronously and atomically.
 * Fails (RPE_ERROR_NOT_FOUND) while the view has no result. */
gboolean          rpe_window_export_view        (RpeWindow      *self,
                                                 const char     *path,
                                                 GError        **error);
/* The Compare and Overview pages (stack pages "compare" and "overview", beside the views; both
 * RpeFigurePages). */
GtkWidget        *rpe_window_get_compare_view   (RpeWindow      *self);
GtkWidget        *rpe_window_get_overview_view  (RpeWindow      *self);
/* Shows a page of the view stack by name: a view's ("templates", ...), "compare" or "overview". */
void              rpe_window_show_page          (RpeWindow      *self,
                                                 const char     *name);
/* The watch on the opened checkpoint file (NULL for the demos and before a file is opened). */
RpeCheckpointWatch *rpe_window_get_watch        (RpeWindow      *self);
/* Shows step index of the watched run (the slider does this). */
void              rpe_window_show_watch_step    (RpeWindow      *self,
                                                 guint           index);

/* Loads trained LRPE parameters from .npy files (win.open-lrpe): each file is the
 * Householder v (1, D, 1), a learned theta (1, 1, n) or the permutation buffer
 * (1, max_positions, D), told apart by shape (or, for a 1-D array, by a name holding
 * "theta", "perm" or starting with "v").  They become a choice of the sidebar's
 * LRPE "Parameters" and are used.  FALSE and the banner on error. */
gboolean          rpe_window_open_lrpe_files    (RpeWindow      *self,
                                                 GFile         **files,
                                                 guint           n_files,
                                                 GError        **error);
/* The sidebar's LRPE "Parameters" row (an AdwComboRow: 0 = seeded, then the trained
 * choices: the checkpoint's LRPE modules in file order, loaded files). */
GtkWidget        *rpe_window_get_lrpe_params_row (RpeWindow     *self);
/* The 2-D convSPE window (win.grid; opens with a checkpoint holding a 2-D conv module), or NULL. */
RpeGridWindow    *rpe_window_get_grid_window    (RpeWindow      *self);
/* The Export dialog (win.export, Ctrl+E) if open, else NULL. */
RpeExportDialog  *rpe_window_get_export_dialog  (RpeWindow      *self);

/* Sessions (rpe-window-session.c; the format: rpe-session.h).  The session of
 * what the window shows now (state, view, opened cell, zoom, checkpoint). */
RpeSession       *rpe_window_build_session      (RpeWindow      *self);
/* Saves it (".rpe-session" appended if missing); the title shows its name. */
gboolean          rpe_window_save_session       (RpeWindow      *self,
                                                 const char     *path,
                                                 GError        **error);
/* Opens a session: on error the banner says why and nothing changes. */
gboolean          rpe_window_open_session       (RpeWindow      *self,
                                                 const char     *path,
                                                 GError        **error);
const char       *rpe_window_get_session_file   (RpeWindow      *self);
/* The `rpe export` command line of the current figure (Copy as Command,
 * Shift+Ctrl+C); NULL and *why when none redraws it (see the .c). */
char             *rpe_window_command_line       (RpeWindow      *self,
                                                 char          **why);
/* The same with the checkpoint comparison (which may read the file) on a
 * worker, as Copy as Command does; the error's message is the why. */
void              rpe_window_command_line_async  (RpeWindow           *self,
                                                  GCancellable        *cancellable,
                                                  GAsyncReadyCallback  callback,
                                                  gpointer             user_data);
char             *rpe_window_command_line_finish (RpeWindow           *self,
                                                  GAsyncResult        *result,
                                                  GError             **error);
/* How many Copy as Command requests completed (copied or refused with a toast). */
guint             rpe_window_get_commands_copied (RpeWindow           *self);

G_END_DECLS

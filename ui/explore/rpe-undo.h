/* rpe-undo.h: undo and redo of the explorer's parameter edits.
 *
 * RpeUndo watches an RpeExplorerState: every "changed" becomes a step that
 * restores the parameters from before it (every read-write property, both
 * SPE modules with their gates, the FastRPB weights), named after the edit
 * ("Change Length N", "Edit Sine Components").  Consecutive edits of the same
 * array (a drag over a spectrum or stem editor: one "changed" per pointer
 * motion) merge into one step until rpe_undo_seal (); a property edit is a
 * step of its own.  Undo and redo restore through the state's setters, so
 * every view follows; they are not recorded themselves.  No GTK. */
#pragma once

#include "rpe-explorer-state.h"

G_BEGIN_DECLS

#define RPE_UNDO_MAX_STEPS 200

#define RPE_TYPE_UNDO (rpe_undo_get_type ())
G_DECLARE_FINAL_TYPE (RpeUndo, rpe_undo, RPE, UNDO, GObject)

/* Starts from the state as it is now (nothing to undo). */
RpeUndo    *rpe_undo_new            (RpeExplorerState *state);
gboolean    rpe_undo_can_undo       (RpeUndo          *self);
gboolean    rpe_undo_can_redo       (RpeUndo          *self);
/* The name of the edit Undo/Redo would revert/repeat ("Change Length N"),
 * NULL if none; valid until the next change. */
const char *rpe_undo_get_undo_label (RpeUndo          *self);
const char *rpe_undo_get_redo_label (RpeUndo          *self);
gboolean    rpe_undo_undo           (RpeUndo          *self);
gboolean    rpe_undo_redo           (RpeUndo          *self);
/* Ends the current step (a drag or key press is over). */
void        rpe_undo_seal           (RpeUndo          *self);
guint       rpe_undo_get_n_steps    (RpeUndo          *self);
/* The name of the edit a change of these flags is. */
const char *rpe_undo_describe       (RpeExplorerChange what,
                                     RpeSpeMethod      kind);

G_END_DECLS

/* rpe-watch.h: following a training run: the open checkpoint file is watched (GFileMonitor on its
 * directory) and read again on a worker whenever it is rewritten, or whenever a newer
 * `checkpoint_<step>` / `*_step<k>` file appears beside it (then that file is followed).
 *
 * A file that does not parse (a half-written checkpoint) is read again a few times, after a short
 * pause each; until one read succeeds the last good checkpoint stays.  Every good read is kept in
 * a history ("steps"), so that a slider can replay how the parameters evolved.
 *
 * Signals (main context of the creator):
 *   "loaded" (guint index)       a new step was read; rpe_checkpoint_watch_get_step (index)
 *   "failed" (const char *msg)   the file still did not parse after every retry (the last good
 *                                step stays)
 */
#pragma once

#include <gio/gio.h>

#include "rpe-compute.h"

G_BEGIN_DECLS

#define RPE_TYPE_CHECKPOINT_WATCH (rpe_checkpoint_watch_get_type ())
G_DECLARE_FINAL_TYPE (RpeCheckpointWatch, rpe_checkpoint_watch, RPE, CHECKPOINT_WATCH, GObject)

/* Watches path; `first` (may be NULL) is the checkpoint already read from it (step 0). */
RpeCheckpointWatch *rpe_checkpoint_watch_new       (const char          *path,
                                                    RpeCheckpointData   *first,
                                                    GError             **error);
const char         *rpe_checkpoint_watch_get_path  (RpeCheckpointWatch  *self);
guint               rpe_checkpoint_watch_get_n_steps (RpeCheckpointWatch *self);
/* Step i: its checkpoint and the training step (from the file name, else -1). */
RpeCheckpointData  *rpe_checkpoint_watch_get_step  (RpeCheckpointWatch  *self,
                                                    guint                index,
                                                    gint64              *step);
/* Reads the file again now (as a change on disk would). */
void                rpe_checkpoint_watch_reload    (RpeCheckpointWatch  *self);
/* Reads that do not parse are retried `retries` times, `interval_ms` apart (default 8, 250 ms). */
void                rpe_checkpoint_watch_set_retry (RpeCheckpointWatch  *self,
                                                    guint                retries,
                                                    guint                interval_ms);
/* The number of reads that failed so far (each retry counts), and of failures reported. */
guint               rpe_checkpoint_watch_get_n_failed_reads (RpeCheckpointWatch *self);
/* The training step in a file name: checkpoint_<k>, *_step<k>, *-step<k> (before any
 * extension); -1 if none. */
gint64              rpe_checkpoint_step_from_name  (const char          *basename);

G_END_DECLS

/* rpe-toast-queue.h: toasts shown one at a time, timed by the frame clock.
 *
 * libadwaita 1.2's AdwToastOverlay frees a toast's bookkeeping when the toast's hide animation
 * ends, while its show animation may still be playing; that animation's "done" handler then
 * reads freed memory and the program crashes (SIGSEGV in adw_animation_skip).  It happens when a
 * toast is dismissed less than 200 ms (in frame time) after it was shown while an earlier one was
 * still hiding: a busy main loop that starves the redraws for the 5 s of a toast's timeout does
 * exactly that, since both animations then start from the same stale frame time.
 *
 * Every toast of the program goes through rpe_toast_queue_add, which never lets that happen:
 * - the overlay holds at most one toast; the next one is added only when the frame clock has
 *   advanced RPE_TOAST_QUEUE_GAP_MS past the dismissal of the previous one (its hide animation
 *   is over, so the next shows with the plain show animation, no longer than the hide);
 * - a toast's timeout is counted in frame time from the frame it was added in (libadwaita's own
 *   timer, which counts wall time, is switched off), so it is never dismissed before its show
 *   animation has ended.
 * While the overlay is not mapped there are no frames and no animations: toasts go straight in.
 * Not covered: a person closing a toast within its 300 ms show animation (its close button or
 * Escape) still meets the overlay's race; AdwToast forgets its overlay at the dismissal's first
 * emission, so that dismissal cannot be held back here.
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define RPE_TOAST_QUEUE_GAP_MS 400

/* Takes toast (transfer full), as adw_toast_overlay_add_toast does.  A high-priority toast goes
 * before the waiting ones. */
void rpe_toast_queue_add (AdwToastOverlay *overlay, AdwToast *toast);
/* Tests: toasts waiting for their turn (not counting the one shown). */
guint rpe_toast_queue_pending (AdwToastOverlay *overlay);
/* Tests: the toast shown now through the queue (NULL: none; not a new reference). */
AdwToast *rpe_toast_queue_current (AdwToastOverlay *overlay);

G_END_DECLS

/* rpe-tour-bar.h: the guided tour over the trained demos (Help > Guided Tour).
 *
 * A bar above the views: the step's title and question ("predict, then look"), Show Me (applies
 * the change), Back, Next and Leave Tour.  Starting the tour saves the whole explorer state
 * (rpe-tour.h); leaving restores it.  The bar knows the explorer state and nothing of the window:
 * it shows a step's view with the win.view action and asks the window, by signals, for the rest:
 * "started" and "finished" (the window keeps and restores what the state does not hold: the page,
 * its zoom, the checkpoint shown), "load-demo" (the window opens the step's demo, as it opens any
 * checkpoint) and "show-control" (the window reveals the sidebar group that matters and returns
 * it; the bar highlights it).
 */
#pragma once

#include <gtk/gtk.h>

#include "rpe-explorer-state.h"

G_BEGIN_DECLS

#define RPE_TYPE_TOUR_BAR (rpe_tour_bar_get_type ())
G_DECLARE_FINAL_TYPE (RpeTourBar, rpe_tour_bar, RPE, TOUR_BAR, GtkBox)

GtkWidget *rpe_tour_bar_new        (RpeExplorerState *state);
/* Saves the state and goes to the first step (again, when running: the state saved first stays). */
void       rpe_tour_bar_start      (RpeTourBar *self);
gboolean   rpe_tour_bar_is_running (RpeTourBar *self);
guint      rpe_tour_bar_get_step   (RpeTourBar *self);
guint      rpe_tour_bar_get_n_steps (RpeTourBar *self);
gboolean   rpe_tour_bar_get_shown  (RpeTourBar *self);  /* the current step's change is shown */
void       rpe_tour_bar_show_me    (RpeTourBar *self);
void       rpe_tour_bar_next       (RpeTourBar *self);  /* past the last step: leaves */
void       rpe_tour_bar_back       (RpeTourBar *self);
/* Restores the state saved at the start (and emits "finished"). */
void       rpe_tour_bar_leave      (RpeTourBar *self);
/* The sidebar group highlighted by the current step, or NULL. */
GtkWidget *rpe_tour_bar_get_target (RpeTourBar *self);
/* The step's text as shown (Pango markup). */
const char *rpe_tour_bar_get_text  (RpeTourBar *self);

G_END_DECLS

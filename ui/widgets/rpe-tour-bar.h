/* rpe-tour-bar.h: the guided tour over the trained demos (Help > Guided Tour).
 *
 * A bar above the views: the step's title and question ("predict, then look"), Show Me (applies the
 * change), Back, Next and Leave Tour.  The sidebar group that matters is highlighted.  Starting the
 * tour saves the whole explorer state and view (rpe-tour.h); leaving restores them. */
#pragma once

#include <gtk/gtk.h>

#include "rpe-window.h"

G_BEGIN_DECLS

#define RPE_TYPE_TOUR_BAR (rpe_tour_bar_get_type ())
G_DECLARE_FINAL_TYPE (RpeTourBar, rpe_tour_bar, RPE, TOUR_BAR, GtkBox)

GtkWidget *rpe_tour_bar_new        (RpeWindow  *window);
/* Saves the state and goes to the first step (again, when running: the state saved first stays). */
void       rpe_tour_bar_start      (RpeTourBar *self);
gboolean   rpe_tour_bar_is_running (RpeTourBar *self);
guint      rpe_tour_bar_get_step   (RpeTourBar *self);
guint      rpe_tour_bar_get_n_steps (RpeTourBar *self);
gboolean   rpe_tour_bar_get_shown  (RpeTourBar *self);  /* the current step's change is shown */
const char *rpe_tour_bar_get_text  (RpeTourBar *self);  /* the step's text as shown */
void       rpe_tour_bar_show_me    (RpeTourBar *self);
void       rpe_tour_bar_next       (RpeTourBar *self);  /* past the last step: leaves */
void       rpe_tour_bar_back       (RpeTourBar *self);
/* Restores the state and view saved at the start. */
void       rpe_tour_bar_leave      (RpeTourBar *self);
/* The sidebar group highlighted by the current step, or NULL. */
GtkWidget *rpe_tour_bar_get_target (RpeTourBar *self);

G_END_DECLS

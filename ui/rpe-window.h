/* rpe-window.h: the main window (the explorer; for now the demo's templates). */
#pragma once

#include <adwaita.h>

#include "rpe-compute.h"
#include "rpe-heatmap-view.h"

G_BEGIN_DECLS

#define RPE_RESOURCE_PREFIX  "/io/github/rpestudio/RpeStudio"
#define RPE_DEMO_RESOURCE    RPE_RESOURCE_PREFIX "/demo/demo.safetensors"

/* The panes, in the order of the view stack. */
typedef enum
{
  RPE_WINDOW_PANE_SINE,
  RPE_WINDOW_PANE_CONV,
  RPE_WINDOW_N_PANES,
} RpeWindowPaneId;

#define RPE_TYPE_WINDOW (rpe_window_get_type ())
G_DECLARE_FINAL_TYPE (RpeWindow, rpe_window, RPE, WINDOW, AdwApplicationWindow)

/* application may be NULL (tests). */
RpeWindow      *rpe_window_new               (GtkApplication  *application);
/* The parameters shown in a pane (NULL if none could be loaded or drawn). */
const RpeSpeParams *rpe_window_get_params    (RpeWindow       *self,
                                              RpeWindowPaneId  pane);
/* TRUE if the pane shows the demo checkpoint (FALSE: random fallback). */
gboolean        rpe_window_get_from_demo     (RpeWindow       *self,
                                              RpeWindowPaneId  pane);
/* The templates currently shown in a pane, NULL while none have arrived. */
RpeTemplates   *rpe_window_get_templates     (RpeWindow       *self,
                                              RpeWindowPaneId  pane);
/* The view of feature d in a pane (NULL if out of range). */
RpeHeatmapView *rpe_window_get_heatmap_view  (RpeWindow       *self,
                                              RpeWindowPaneId  pane,
                                              gsize            d);
/* TRUE while a computation is running in any pane. */
gboolean        rpe_window_is_busy           (RpeWindow       *self);
/* Requests the templates of `head` at length n in every pane (n >= 1). */
void            rpe_window_show_head         (RpeWindow       *self,
                                              gsize            head,
                                              gsize            n);
/* Shows the gated templates (1 - g) P + g (if the modules have a gate). */
void            rpe_window_set_gated         (RpeWindow       *self,
                                              gboolean         gated);
/* The message shown when the demo could not be loaded (NULL if none). */
const char     *rpe_window_get_message       (RpeWindow       *self);

G_END_DECLS

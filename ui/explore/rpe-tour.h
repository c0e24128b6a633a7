/* rpe-tour.h: the guided tour's steps and the memento that restores the explorer afterwards.
 *
 * GTK-free: a step says which demo to open, which view to show, which control matters, and two
 * changes of the explorer state: `setup` (what the student sees while predicting) and `show` (the
 * change whose effect they predicted).  The widget layer (ui/widgets/rpe-tour-bar.c) presents them.
 */
#pragma once

#include <glib-object.h>

#include "rpe-explorer-state.h"

G_BEGIN_DECLS

typedef struct
{
  const char *title;
  const char *demo;        /* "demo:NAME" to open before the step, or NULL */
  guint       view;        /* the window view (RpeWindowView: 0 templates .. 3 SPE vs RPE) */
  const char *control;     /* the sidebar group that matters (its title), or NULL */
  const char *predict;     /* the question asked before the change */
  const char *explain;     /* what to look at once it is shown */
  void      (*setup) (RpeExplorerState *state);
  void      (*show)  (RpeExplorerState *state);
  /* when set: the explanation, translated, with numbers read at run time (instead of explain) */
  char     *(*explain_text) (void);
} RpeTourStep;

/* The steps, in order (n_steps: 6 to 10). */
const RpeTourStep *rpe_tour_get_steps (guint *n_steps);

/* Everything a person can change in the explorer state (its writable properties, both SPE modules
 * with their sources, the FastRPB weights) and the view; restore puts it all back. */
typedef struct _RpeTourMemento RpeTourMemento;

RpeTourMemento *rpe_tour_memento_save    (RpeExplorerState *state,
                                          guint             view);
void            rpe_tour_memento_restore (const RpeTourMemento *memento,
                                          RpeExplorerState     *state);
guint           rpe_tour_memento_view    (const RpeTourMemento *memento);
/* TRUE if state equals the saved one (properties, modules, FastRPB weights). */
gboolean        rpe_tour_memento_matches (const RpeTourMemento *memento,
                                          RpeExplorerState     *state);
void            rpe_tour_memento_free    (RpeTourMemento *memento);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RpeTourMemento, rpe_tour_memento_free)

G_END_DECLS

/* rpe-window-private.h: RpeWindow's instance struct, shared by the files that
 * implement the window (rpe-window.c, later rpe-window-actions.c). */
#pragma once

#include "rpe-window.h"

G_BEGIN_DECLS

typedef struct
{
  RpeWindow       *window;        /* not a reference: the pane lives in it */
  RpeWindowPaneId  id;
  RpeSpeMethod     method;
  RpeSpeParams     params;
  gboolean         have_params;
  gboolean         from_demo;
  char            *module_name;   /* checkpoint prefix, or NULL for random parameters */
  GCancellable    *cancellable;   /* the running request, replaced on every request */
  RpeTemplates    *templates;     /* the templates shown */
  GPtrArray       *views;         /* RpeHeatmapView*, one per feature, in order */
  GtkGrid         *grid;
  GtkProgressBar  *progress;
  GtkLabel        *caption;
} RpeWindowPane;

struct _RpeWindow
{
  AdwApplicationWindow  parent_instance;

  /* template children */
  AdwViewStack         *stack;
  GtkSpinButton        *head_spin;
  GtkSpinButton        *length_spin;
  GtkToggleButton      *gate_toggle;
  GtkRevealer          *message_revealer;
  GtkLabel             *message_label;
  GtkGrid              *sine_grid;
  GtkGrid              *conv_grid;
  GtkProgressBar       *sine_progress;
  GtkProgressBar       *conv_progress;
  GtkLabel             *sine_caption;
  GtkLabel             *conv_caption;

  GSettings            *settings;     /* NULL when the schema is not installed */
  char                 *message;
  gboolean              updating;     /* setting the controls programmatically */
  RpeWindowPane         panes[RPE_WINDOW_N_PANES];
};

void _rpe_window_request_all (RpeWindow *self);

G_END_DECLS

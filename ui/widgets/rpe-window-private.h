/* rpe-window-private.h: RpeWindow's instance struct, shared by the files that implement the
 * window (rpe-window.c, rpe-window-actions.c, -compare.c, -session.c, -undo.c) and by no other. */
#pragma once

#include "rpe-window-test.h"

#include "rpe-attention-view.h"
#include "rpe-compare-view.h"
#include "rpe-curves-page.h"
#include "rpe-figure-page.h"
#include "rpe-outputs-view.h"
#include "rpe-overview-view.h"
#include "rpe-teaching-view.h"
#include "rpe-templates-view.h"

G_BEGIN_DECLS

struct _RpeWindow
{
  AdwApplicationWindow  parent_instance;

  /* template children */
  AdwViewStack         *stack;
  AdwFlap              *flap;
  GtkBox               *sidebar;
  GtkRevealer          *message_revealer;
  GtkLabel             *message_label;
  AdwToastOverlay      *toasts;
  GtkMenuButton        *menu_button;
  AdwViewSwitcherTitle *switcher_title;
  GtkBox               *tour_slot;
  GtkScrolledWindow    *sidebar_scroller;
  AdwHeaderBar         *header_bar;

  RpeExplorerState     *state;
  GSettings            *settings;     /* NULL when the schema is not installed */
  char                 *message;
  gboolean              from_demo;
  GtkWidget            *views[RPE_WINDOW_N_VIEWS];
  GCancellable         *load_cancellable;
  RpeCheckpointData    *checkpoint;   /* the last opened checkpoint */
  RpeTensorBrowser     *browser;
  RpeGridWindow        *grid_window;    /* weak */
  GtkFileChooserNative *chooser;
  GMenu                *recent_menu;
  GMenu                *demos_menu;
  RpeExportDialog      *export_dialog;  /* weak */
  RpeUndo              *undo;
  GMenu                *undo_menu;      /* the Undo/Redo section of the main menu */
  GtkWidget            *tour;           /* RpeTourBar, in tour_slot */
  /* what the tour changes beyond the explorer state, restored when it ends */
  char                 *tour_page;
  gboolean              tour_zoomed;
  double                tour_viewport[4];
  char                 *tour_title;
  char                 *tour_subtitle;
  char                 *tour_source[2];  /* path, prefix */
  int                   tour_layer;
  char                **tour_map;
  RpeCheckpointData    *tour_checkpoint;
  gboolean              tour_from_demo;
  guint                 scroll_tick;     /* scrolls the sidebar to the tour's target */
  GtkWidget            *scroll_target;
  gboolean              closing;         /* the unsaved-session question was answered */
  GtkWidget            *close_dialog;    /* asking it (weak) */

  /* sidebar pieces rebuilt when the module, head or feature changes */
  GtkAdjustment        *head_adj;
  GtkAdjustment        *feature_adj;
  GtkWidget            *gamma_row;        /* the colour scale's value rows: sensitive for their scale */
  GtkWidget            *percentile_row;
  GtkWidget            *sine_group;
  GtkWidget            *sine_box;
  GtkWidget            *conv_group;
  GtkWidget            *conv_box;
  GtkWidget            *gate_scale;
  GtkWidget            *gate_all;
  GtkWidget            *sine_all;
  GtkWidget            *conv_all;
  GtkWidget            *fastrpb_box;
  gboolean              updating;

  /* Compare, Overview and Watch (rpe-window-compare.c) */
  GtkWidget            *compare_view;   /* RpeCompareView, stack page "compare" */
  GtkWidget            *overview_view;  /* RpeOverviewView, stack page "overview" */
  RpeCheckpointWatch   *watch;          /* the opened file, while it is a file */
  GtkWidget            *watch_group;
  GtkWidget            *watch_label;
  GtkWidget            *watch_scale;
  guint                 watch_shown;    /* the step the state shows */
  gboolean              watch_follow;   /* show each new step as it arrives */
  gboolean              watch_applying;
  GCancellable         *layer_cancellable;
  /* sessions (rpe-window-session.c) */
  GtkFileChooserNative *session_chooser;
  char                 *session_file;    /* saved to or opened from (NULL: none) */
  guint64               session_serial;  /* the state's serial then */
  RpeWindowView         session_view;
  int                   session_cell;
  gboolean              session_zoomed;  /* and the attention zoom then */
  double                session_viewport[4];
  guint                 commands_copied; /* Copy as Command requests completed */
  char                 *source_path;     /* the checkpoint of the modules: a file, "demo", "demo:NAME" */
  char                 *source_prefix;
  int                   source_layer;
  char                **source_map;
  char                 *content_path;    /* the .npy of the loaded content */
  /* LRPE: "Parameters" (seeded, or one of the trained choices) and the P/Lambda/theta rows */
  GtkWidget            *lrpe_params_row;
  GtkStringList        *lrpe_labels;    /* item 0 "Seeded", then one per choice */
  GPtrArray            *lrpe_choices;   /* RpeLrpeTrained*, item i + 1 of lrpe_labels */
  GtkWidget            *lrpe_p_row;
  GtkWidget            *lrpe_lambda_row;
  GtkWidget            *lrpe_theta_row;
};

void _rpe_window_class_actions_init (GtkWidgetClass *widget_class);
void _rpe_window_actions_init       (RpeWindow      *self);
void _rpe_window_show_message       (RpeWindow      *self,
                                     const char     *text);
void _rpe_window_fill_demos_menu (RpeWindow *self);
void _rpe_window_offer_tour      (RpeWindow *self);
/* The tour bar and what the window does for it (rpe-window-actions.c). */
void _rpe_window_tour_init       (RpeWindow *self);
void _rpe_window_tour_dispose    (RpeWindow *self);
void _rpe_window_update_recent_menu (RpeWindow      *self);
void _rpe_window_open_npy           (RpeWindow      *self,
                                     GFile          *file);
void _rpe_window_update_export      (RpeWindow      *self);
/* Uses an opened checkpoint (the file chooser's, the tour's demos): its modules, the title, the
 * recent files, the watch; FALSE (and the banner) when none of its modules can be used. */
gboolean _rpe_window_use_checkpoint (RpeWindow         *self,
                                     RpeCheckpointData *data,
                                     gboolean           announce);
/* The visible page (a view, "compare" or "overview"). */
RpeFigurePage *_rpe_window_current_page (RpeWindow *self);
/* rpe-window-compare.c */
void _rpe_window_class_compare_init (GtkWidgetClass *widget_class);
void _rpe_window_compare_init       (RpeWindow      *self);
void _rpe_window_compare_dispose    (RpeWindow      *self);
/* self->source_path changed (_rpe_window_set_source): the pages' checkpoint follows. */
void _rpe_window_compare_source_changed (RpeWindow  *self);
/* A checkpoint was opened (data->path; watch: start watching it unless it is a demo). */
void _rpe_window_compare_opened     (RpeWindow      *self,
                                     RpeCheckpointData *data);
/* Copy as Command on the Compare and Overview pages: the `rpe export compare-* | overview` line,
 * or NULL and *why. */
char *_rpe_window_compare_command_line (RpeWindow  *self,
                                        const char *page,
                                        char      **why);
/* The figure of the visible page (also Compare and Overview); NULL while it has none. */
RpeFigureBundle *_rpe_window_current_figure (RpeWindow *self);
/* rpe-window-session.c: TRUE when a session was saved or opened and the window has changed
 * since (closing asks first). */
gboolean _rpe_window_session_unsaved (RpeWindow *self);
/* rpe-window-session.c */
void _rpe_window_class_session_init (GtkWidgetClass    *widget_class);
void _rpe_window_session_dispose    (RpeWindow         *self);
void _rpe_window_set_source         (RpeWindow         *self,
                                     const char        *path,
                                     const char        *prefix,
                                     int                layer,
                                     const char *const *map);
void _rpe_window_set_content_path   (RpeWindow         *self,
                                     const char        *path);
void _rpe_window_open_session_async (RpeWindow         *self,
                                     const char        *path);
/* FastRPB weights of a checkpoint or a mapped tensor: (1, H, X) as the reference stores them
 * (X odd: "full" 2M - 1, even: "symmetric" M; the current head's row), or centred (X,) / (H, X),
 * into the sidebar's taps |tau| < RPE_EXPLORER_FASTRPB_TAPS (zero beyond M - 1). */
gboolean _rpe_window_set_fastrpb_tensor (RpeWindow       *self,
                                         const RpeTensor *w,
                                         GError         **error);
/* The trained LRPE choices offered in the sidebar: replaced by those of a checkpoint
 * (trained NULL-terminated pairs of RpeLrpeTrained* / label; taken), or one added; `use`:
 * select (and use) the first new choice. */
void _rpe_window_set_lrpe_choices   (RpeWindow       *self,
                                     GPtrArray       *trained,
                                     const char     **labels,
                                     gboolean         replace,
                                     gboolean         use);
/* rpe-window-undo.c */
void _rpe_window_class_undo_init    (GtkWidgetClass *widget_class);
void _rpe_window_undo_init          (RpeWindow      *self);
void _rpe_window_reset_undo         (RpeWindow      *self);

G_END_DECLS

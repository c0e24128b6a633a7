/* rpe-figure-page.h: the page under every figure view of the window (GTK).
 *
 * RpeFigurePage owns what every view shares, once:
 * - the job: one at a time (RpeJobSlot), started only while the page is mapped (a change while
 *   hidden is computed when it is shown), results of an older request dropped, progress with the
 *   time left and Cancel (Escape) over the figure;
 * - the cap: a view may compute at min (N, cap) until "Compute at Full N" (refused with the
 *   reason when the job would exceed the memory budget), and says so in its footer;
 * - the stale badge: a result of another N than the state's stays shown, marked;
 * - the caption (a fixed number of lines: its text never changes the figure's size), the hover
 *   read-out (cleared on every new result), the zoom of a view that has one (scroll, drag,
 *   pinch, + / - / 0, the reset button), the state's colour look, and the figure for export.
 *
 * A view derives from it and overrides only what is its own: "build the request and start the
 * job" (start_job / finish_job), "draw the result" (show_result), and its own controls, which
 * it places with rpe_figure_page_add_control (above the caption) and rpe_figure_page_add_footer,
 * its figure with rpe_figure_page_set_content.  Modelled on GNOME Builder's IdePage.
 */
#pragma once

#include <gtk/gtk.h>

#include "rpe-compute.h"
#include "rpe-explorer-state.h"
#include "rpe-export-dialog.h"

G_BEGIN_DECLS

#define RPE_TYPE_FIGURE_PAGE (rpe_figure_page_get_type ())
G_DECLARE_DERIVABLE_TYPE (RpeFigurePage, rpe_figure_page, RPE, FIGURE_PAGE, GtkWidget)

/* What a change of the explorer state means to a page. */
typedef enum
{
  RPE_FIGURE_PAGE_KEEP,       /* nothing */
  RPE_FIGURE_PAGE_RESHOW,     /* new colours, same numbers: show the result again */
  RPE_FIGURE_PAGE_RECOMPUTE,  /* a new job */
} RpeFigurePageUpdate;

/* No cap: the page computes at the state's N. */
#define RPE_FIGURE_PAGE_NO_CAP (-1)

/* How the state colours a kind of values (rpe_figure_page_get_look). */
typedef struct
{
  const RpeColormap   *colormap;   /* the state's map (the default if unknown) */
  const RpeColormap   *diverging;  /* the state's map when it is diverging, else NULL: the
                                    * renderer's diverging default (signed values) */
  RpeHeatmapTransform  transform;  /* the state's scale; the SPE paper's only for attention */
  double               param;
  gboolean             shared;     /* the panels of a figure share one range */
  guint                train;      /* N_train (0: none) */
} RpeFigureLook;

struct _RpeFigurePageClass
{
  GtkWidgetClass parent_class;

  /* The state changes that need a new job (state_changed's default). */
  RpeExplorerChange job_changes;
  /* The job kind the memory budget checks before "Compute at Full N", or RPE_FIGURE_PAGE_NO_CAP. */
  int               cap_kind;
  /* Frees a result (finish_job's return). */
  GDestroyNotify    result_free;
  /* What the job computes, for the caption after a failure: "Could not compute WHAT: why" (an
   * N_() marked noun, e.g. N_("the attention map")). */
  const char       *what;

  /* Default: job_changes → RECOMPUTE, the colours → RESHOW.  A view that keeps controls in step
   * with the state syncs them here and chains up. */
  RpeFigurePageUpdate (*state_changed) (RpeFigurePage       *self,
                                        RpeExplorerChange    what);
  /* Build the request from snapshot and start the job: n_cap is the cap to compute at (the state's
   * N after "Compute at Full N"; ignored by a page without cap).  Report progress with
   * rpe_figure_page_job_progress (self as its data) and finish with callback / user_data.  FALSE
   * when there is nothing to compute, with *why saying so (shown as the caption). */
  gboolean            (*start_job)     (RpeFigurePage       *self,
                                        RpeExplorerSnapshot *snapshot,
                                        gsize                n_cap,
                                        GCancellable        *cancellable,
                                        GAsyncReadyCallback  callback,
                                        gpointer             user_data,
                                        char               **why);
  /* The job's result (a new reference, freed with result_free) or NULL and error. */
  gpointer            (*finish_job)    (RpeFigurePage       *self,
                                        GAsyncResult        *result,
                                        GError             **error);
  /* Draw the result (rpe_figure_page_get_result; also called again for new colours); set the
   * caption here. */
  void                (*show_result)   (RpeFigurePage       *self,
                                        gpointer             result);
  /* The N a result was computed at and the N asked (for the cap and the stale badge); NULL: the
   * page has neither. */
  void                (*result_size)   (RpeFigurePage       *self,
                                        gconstpointer        result,
                                        gsize               *n,
                                        gsize               *n_asked);
  /* The hover read-out at (x, y) of widget (a descendant of the content); NULL: none.  The
   * default reads the RpeHeatmapView or RpeCurveView under the pointer. */
  char               *(*describe_point) (RpeFigurePage      *self,
                                         GtkWidget          *widget,
                                         double              x,
                                         double              y);
  /* The figure shown, as `rpe export` draws it (NULL while there is none). */
  RpeFigureBundle    *(*build_figure)  (RpeFigurePage       *self);
  /* Offers the Export dialog an animated sweep of the view (NULL: the view has none). */
  void                (*setup_sweep)   (RpeFigurePage       *self,
                                        RpeExportDialog     *dialog);
  /* A zoomable view: the square the viewport is drawn in, in the zoom widget's coordinates. */
  gboolean            (*plot_area)     (RpeFigurePage       *self,
                                        double              *x,
                                        double              *y,
                                        double              *side);

  /*< private >*/
  gpointer _reserved[4];
};

/* Construction, by the views: the state (once, in their _new) and where their widgets go. */
void              rpe_figure_page_set_state       (RpeFigurePage   *self,
                                                   RpeExplorerState *state);
void              rpe_figure_page_set_content     (RpeFigurePage   *self,
                                                   GtkWidget       *child);
void              rpe_figure_page_add_control     (RpeFigurePage   *self,
                                                   GtkWidget       *child);
void              rpe_figure_page_add_footer      (RpeFigurePage   *self,
                                                   GtkWidget       *child);
/* The caption's height in lines (2 by default); its text is cut with … beyond them (the full
 * text in its tooltip). */
void              rpe_figure_page_set_caption_lines (RpeFigurePage *self,
                                                     guint          lines);
/* The cap a view computes at until "Compute at Full N" (class cap_kind set), at least 2. */
void              rpe_figure_page_set_n_cap       (RpeFigurePage   *self,
                                                   gsize            n_cap);
gsize             rpe_figure_page_get_n_cap       (RpeFigurePage   *self);
/* Makes widget the zoomable figure: scroll, drag and pinch on it move the viewport (the page's
 * class implements plot_area); + / - / 0 and the reset button zoom. */
void              rpe_figure_page_set_zoom_widget (RpeFigurePage   *self,
                                                   GtkWidget       *widget);

RpeExplorerState *rpe_figure_page_get_state       (RpeFigurePage   *self);
/* The result shown (NULL while none) and the snapshot it was computed from. */
gpointer          rpe_figure_page_get_result      (RpeFigurePage   *self);
RpeExplorerSnapshot *rpe_figure_page_get_result_snapshot (RpeFigurePage *self);
/* Asks for a new job (now while mapped, else when shown). */
void              rpe_figure_page_request         (RpeFigurePage   *self);
gboolean          rpe_figure_page_is_busy         (RpeFigurePage   *self);
/* Cancels the running job (Cancel, Escape): the figure shown stays, the caption says so. */
void              rpe_figure_page_cancel          (RpeFigurePage   *self);
/* One job at the state's N; FALSE (and the reason in the footer) when it would exceed the memory
 * budget or the page has no cap. */
gboolean          rpe_figure_page_compute_full    (RpeFigurePage   *self);
/* For start_job: the job's progress (data: the page). */
void              rpe_figure_page_job_progress    (double           fraction,
                                                   gpointer         data);

void              rpe_figure_page_set_caption     (RpeFigurePage   *self,
                                                   const char      *text);
void              rpe_figure_page_set_caption_markup (RpeFigurePage *self,
                                                      const char    *markup);
const char       *rpe_figure_page_get_caption     (RpeFigurePage   *self);
/* The hover read-out ("" while none). */
void              rpe_figure_page_set_hover       (RpeFigurePage   *self,
                                                   const char      *text);
const char       *rpe_figure_page_get_hover       (RpeFigurePage   *self);
/* Moves the read-out as the pointer would at (x, y) of widget (tests, keyboard). */
void              rpe_figure_page_hover_at        (RpeFigurePage   *self,
                                                   GtkWidget       *widget,
                                                   double           x,
                                                   double           y);
/* The footer's cap line: "Computed at N = n of N.", the stale note, the refusal ("" if none). */
const char       *rpe_figure_page_get_cap_text    (RpeFigurePage   *self);
/* The result shown is for another N than the state's (the badge over the figure says so). */
gboolean          rpe_figure_page_get_stale       (RpeFigurePage   *self);
const char       *rpe_figure_page_get_stale_text  (RpeFigurePage   *self);
/* The progress overlay (shown 150 ms after a job starts), its fraction and text. */
gboolean          rpe_figure_page_get_progress_visible (RpeFigurePage *self);
double            rpe_figure_page_get_progress    (RpeFigurePage   *self);
const char       *rpe_figure_page_get_progress_text (RpeFigurePage *self);
/* The jobs this page has started (tests count them: one change, one job). */
guint             rpe_figure_page_get_n_jobs      (RpeFigurePage   *self);

/* How the state colours values (attention: attention weights, where the SPE paper's scale
 * applies). */
void              rpe_figure_page_get_look        (RpeFigurePage   *self,
                                                   gboolean         attention,
                                                   RpeFigureLook   *look);

/* The viewport of a zoomable page, in positions: rows [m0, m1), columns [n0, n1) of the N the
 * page shows (rpe_figure_page_get_viewport_n); setting it asks for a new job. */
void              rpe_figure_page_get_viewport    (RpeFigurePage   *self,
                                                   double          *m0,
                                                   double          *m1,
                                                   double          *n0,
                                                   double          *n1);
void              rpe_figure_page_set_viewport    (RpeFigurePage   *self,
                                                   double           m0,
                                                   double           m1,
                                                   double           n0,
                                                   double           n1);
gsize             rpe_figure_page_get_viewport_n  (RpeFigurePage   *self);
/* factor > 1 zooms in around the centre; reset shows the whole map. */
void              rpe_figure_page_zoom            (RpeFigurePage   *self,
                                                   double           factor);
void              rpe_figure_page_reset_zoom      (RpeFigurePage   *self);
gboolean          rpe_figure_page_get_zoomed      (RpeFigurePage   *self);

/* Draws fig (an export's figure) on a drawing area of width x height: laid out at the area's size,
 * so that its text keeps its size in pixels (scaled down only in an area smaller than 60 % of the
 * figure's default size). */
void              rpe_figure_page_draw_figure     (cairo_t         *cr,
                                                   const RpeFigure *fig,
                                                   int              width,
                                                   int              height);

/* The figure shown (NULL while none); "figure-changed" is emitted when it changes. */
RpeFigureBundle  *rpe_figure_page_build_figure    (RpeFigurePage   *self);
/* Offers the dialog the view's animated sweep; FALSE if it has none. */
gboolean          rpe_figure_page_setup_sweep     (RpeFigurePage   *self,
                                                   RpeExportDialog *dialog);

G_END_DECLS

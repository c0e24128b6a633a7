/* rpe-figure-page.c: the page under every figure view (see rpe-figure-page.h). */
#include "config.h"

#include "rpe-figure-page.h"

#include <glib/gi18n.h>

#include <math.h>
#include <string.h>

#include "rpe-curve-view.h"
#include "rpe-gesture-helper.h"
#include "rpe-heatmap-view.h"
#include "rpe-job-progress.h"

#define PROGRESS_DELAY_MS 150
#define DEFAULT_CAPTION_LINES 2

typedef struct
{
  RpeExplorerState    *state;
  gulong               changed_id;
  RpeJobSlot           slot;
  gboolean             dirty;         /* a job is due when the page is shown */
  gpointer             result;        /* the result shown (class result_free) */
  RpeExplorerSnapshot *result_snapshot;
  guint                n_jobs;
  gsize                n_cap;
  gboolean             full_next;     /* the next job at the state's N */
  char                *refusal;       /* why Compute at Full N was refused */
  char                *cap_text;
  char                *stale_text;
  guint                progress_timeout;
  double               fraction;
  RpeProgressEstimate  estimate;

  /* zoom */
  GtkWidget           *zoom_widget;
  gsize                vn;            /* the N the viewport is of */
  double               vm0, vm1, vn0, vn1;
  double               drag_m0, drag_n0;
  RpeDragTracker       drag;
  double               pinch_last;

  /* template children */
  GtkWidget           *box;
  GtkWidget           *controls;
  GtkLabel            *caption_ruler;
  GtkLabel            *caption;
  GtkWidget           *content;
  GtkLabel            *stale_badge;
  GtkWidget           *progress_box;
  GtkProgressBar      *progress;
  GtkWidget           *cancel_button;
  GtkLabel            *hover;
  GtkLabel            *cap_label;
  GtkStack            *full_stack;
  GtkWidget           *full_button;
  GtkWidget           *footer_controls;
  GtkWidget           *zoom_reset;
} RpeFigurePagePrivate;

G_DEFINE_TYPE_WITH_PRIVATE (RpeFigurePage, rpe_figure_page, GTK_TYPE_WIDGET)

enum { FIGURE_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

#define PRIV(self) ((RpeFigurePagePrivate *) rpe_figure_page_get_instance_private (self))

/* The one weak reference a job's callback holds (and the snapshot it computes). */
typedef struct
{
  GWeakRef             page;
  RpeExplorerSnapshot *snapshot;
} JobRef;

static void update_status (RpeFigurePage *self);

/* --------------------------------------------------------------- progress */

static gboolean
show_progress (gpointer data)
{
  RpeFigurePage *self = data;
  RpeFigurePagePrivate *priv = PRIV (self);

  priv->progress_timeout = 0;
  gtk_widget_set_visible (priv->progress_box, TRUE);
  return G_SOURCE_REMOVE;
}

static void
hide_progress (RpeFigurePage *self)
{
  RpeFigurePagePrivate *priv = PRIV (self);

  g_clear_handle_id (&priv->progress_timeout, g_source_remove);
  gtk_widget_set_visible (priv->progress_box, FALSE);
}

static void
begin_progress (RpeFigurePage *self)
{
  RpeFigurePagePrivate *priv = PRIV (self);

  priv->fraction = 0.0;
  rpe_job_progress_begin (priv->progress, &priv->estimate);
  if (priv->progress_timeout == 0 && !gtk_widget_get_visible (priv->progress_box))
    priv->progress_timeout = g_timeout_add (PROGRESS_DELAY_MS, show_progress, self);
}

void
rpe_figure_page_job_progress (double   fraction,
                              gpointer data)
{
  RpeFigurePage *self = data;
  RpeFigurePagePrivate *priv;

  g_return_if_fail (RPE_IS_FIGURE_PAGE (self));
  priv = PRIV (self);
  priv->fraction = fraction;
  rpe_job_progress_update (priv->progress, &priv->estimate, fraction);
}

/* -------------------------------------------------------------------- jobs */

static void
set_result (RpeFigurePage       *self,
            gpointer             result,
            RpeExplorerSnapshot *snapshot)
{
  RpeFigurePagePrivate *priv = PRIV (self);
  RpeFigurePageClass *klass = RPE_FIGURE_PAGE_GET_CLASS (self);

  if (priv->result != NULL && klass->result_free != NULL)
    klass->result_free (priv->result);
  priv->result = result;
  g_clear_pointer (&priv->result_snapshot, rpe_explorer_snapshot_unref);
  priv->result_snapshot = snapshot;
  /* the read-out described the figure that was there */
  rpe_figure_page_set_hover (self, NULL);
  if (result != NULL && klass->show_result != NULL)
    klass->show_result (self, result);
  update_status (self);
  g_signal_emit (self, signals[FIGURE_CHANGED], 0);
}

static void
job_done (GObject      *source,
          GAsyncResult *result,
          gpointer      user_data)
{
  JobRef *ref = user_data;
  g_autoptr (RpeFigurePage) self = g_weak_ref_get (&ref->page);
  g_autoptr (RpeExplorerSnapshot) snapshot = ref->snapshot;
  g_autoptr (GError) error = NULL;
  RpeFigurePagePrivate *priv;
  RpeFigurePageClass *klass;
  gpointer value;

  g_weak_ref_clear (&ref->page);
  g_free (ref);
  if (self == NULL)
    return;
  priv = PRIV (self);
  klass = RPE_FIGURE_PAGE_GET_CLASS (self);
  value = klass->finish_job (self, result, &error);
  if (!rpe_job_slot_done (&priv->slot, result))
    {
      /* an older request's result, or cancelled: dropped (a newer job may have started) */
      if (value != NULL && klass->result_free != NULL)
        klass->result_free (value);
      return;
    }
  if (!rpe_job_slot_busy (&priv->slot))
    hide_progress (self);
  if (value != NULL)
    set_result (self, value, g_steal_pointer (&snapshot));
  else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_autofree char *text = g_strdup_printf (_("Could not compute %s: %s"),
                                               klass->what != NULL ? _(klass->what) : _("this view"),
                                               error != NULL ? error->message : _("unknown error"));

      rpe_figure_page_set_caption (self, text);
      update_status (self);
    }
}

static void
job_start (gpointer      owner,
           GCancellable *cancellable)
{
  RpeFigurePage *self = owner;
  RpeFigurePagePrivate *priv = PRIV (self);
  RpeFigurePageClass *klass = RPE_FIGURE_PAGE_GET_CLASS (self);
  g_autoptr (RpeExplorerSnapshot) s = rpe_explorer_state_snapshot (priv->state);
  g_autofree char *why = NULL;
  gsize n_cap = priv->full_next ? s->n : priv->n_cap;
  JobRef *ref = g_new0 (JobRef, 1);

  priv->full_next = FALSE;
  g_weak_ref_init (&ref->page, self);
  ref->snapshot = rpe_explorer_snapshot_ref (s);
  begin_progress (self);
  if (!klass->start_job (self, s, n_cap, cancellable, job_done, ref, &why))
    {
      /* nothing to compute (the view said why): the slot forgets the job */
      g_weak_ref_clear (&ref->page);
      rpe_explorer_snapshot_unref (ref->snapshot);
      g_free (ref);
      rpe_job_slot_cancel (&priv->slot);
      hide_progress (self);
      if (why != NULL)
        rpe_figure_page_set_caption (self, why);
    }
  else
    priv->n_jobs++;
  update_status (self);
}

void
rpe_figure_page_request (RpeFigurePage *self)
{
  RpeFigurePagePrivate *priv;

  g_return_if_fail (RPE_IS_FIGURE_PAGE (self));
  priv = PRIV (self);
  if (priv->state == NULL)
    return;
  if (!gtk_widget_get_mapped (GTK_WIDGET (self)))
    {
      priv->dirty = TRUE;
      return;
    }
  priv->dirty = FALSE;
  rpe_job_slot_request (&priv->slot);
}

gboolean
rpe_figure_page_is_busy (RpeFigurePage *self)
{
  g_return_val_if_fail (RPE_IS_FIGURE_PAGE (self), FALSE);
  return rpe_job_slot_busy (&PRIV (self)->slot);
}

void
rpe_figure_page_cancel (RpeFigurePage *self)
{
  RpeFigurePagePrivate *priv;
  gboolean busy;

  g_return_if_fail (RPE_IS_FIGURE_PAGE (self));
  priv = PRIV (self);
  busy = rpe_job_slot_busy (&priv->slot);
  rpe_job_slot_cancel (&priv->slot);
  hide_progress (self);
  if (busy)
    rpe_figure_page_set_caption (self, priv->result != NULL
                                       ? _("Cancelled: the figure shown is the last one computed. Change a "
                                           "parameter to compute again.")
                                       : _("Cancelled. Change a parameter to compute again."));
  update_status (self);
}

void
rpe_figure_page_set_n_cap (RpeFigurePage *self,
                           gsize          n_cap)
{
  g_return_if_fail (RPE_IS_FIGURE_PAGE (self));
  PRIV (self)->n_cap = MAX (n_cap, 2);
  rpe_figure_page_request (self);
}

gsize
rpe_figure_page_get_n_cap (RpeFigurePage *self)
{
  g_return_val_if_fail (RPE_IS_FIGURE_PAGE (self), 0);
  return PRIV (self)->n_cap;
}

gboolean
rpe_figure_page_compute_full (RpeFigurePage *self)
{
  RpeFigurePagePrivate *priv;
  RpeFigurePageClass *klass;

  g_return_val_if_fail (RPE_IS_FIGURE_PAGE (self), FALSE);
  priv = PRIV (self);
  klass = RPE_FIGURE_PAGE_GET_CLASS (self);
  if (klass->cap_kind == RPE_FIGURE_PAGE_NO_CAP || priv->state == NULL)
    return FALSE;
  if (!rpe_job_full_n_allowed ((RpeComputeJobKind) klass->cap_kind, priv->state, &priv->refusal))
    {
      update_status (self);
      return FALSE;
    }
  priv->full_next = TRUE;
  priv->dirty = FALSE;
  rpe_job_slot_request (&priv->slot);
  update_status (self);
  return TRUE;
}

/* The footer's cap line, the stale badge and the Full N button, from the result and the state. */
static void
update_status (RpeFigurePage *self)
{
  RpeFigurePagePrivate *priv = PRIV (self);
  RpeFigurePageClass *klass = RPE_FIGURE_PAGE_GET_CLASS (self);
  gsize asked = priv->state != NULL ? rpe_explorer_state_get_length (priv->state) : 0;
  gsize n = 0, n_asked = 0;
  gboolean sized = priv->result != NULL && klass->result_size != NULL;
  gboolean stale, capped;
  GString *cap = g_string_new (NULL);

  if (sized)
    klass->result_size (self, priv->result, &n, &n_asked);
  stale = sized && n_asked > 0 && n_asked != asked;
  capped = sized && !stale && n > 0 && n < n_asked;
  if (capped)
    g_string_append_printf (cap, _("Computed at N = %zu of %zu."), n, n_asked);
  if (priv->refusal != NULL)
    g_string_append_printf (cap, "%s%s", cap->len > 0 ? " " : "", priv->refusal);
  else if (stale)
    g_string_append_printf (cap, rpe_job_slot_busy (&priv->slot)
                                 ? _("Stale: the figure shown is for N = %zu; computing for N = %zu…")
                                 : _("Stale: the figure shown is for N = %zu, not N = %zu: cancelled."),
                            n, asked);
  g_free (priv->cap_text);
  priv->cap_text = g_string_free (cap, FALSE);
  gtk_label_set_text (priv->cap_label, priv->cap_text);
  gtk_widget_set_tooltip_text (GTK_WIDGET (priv->cap_label), priv->cap_text[0] != '\0' ? priv->cap_text : NULL);
  gtk_stack_set_visible_child_name (priv->full_stack, capped ? "button" : "none");

  g_clear_pointer (&priv->stale_text, g_free);
  if (stale)
    priv->stale_text = g_strdup_printf (_("stale: N = %zu, not %zu"), n, asked);
  gtk_label_set_text (priv->stale_badge, priv->stale_text != NULL ? priv->stale_text : "");
  gtk_widget_set_visible (GTK_WIDGET (priv->stale_badge), stale);
}

/* ------------------------------------------------------------ the state */

static RpeFigurePageUpdate
real_state_changed (RpeFigurePage     *self,
                    RpeExplorerChange  what)
{
  RpeFigurePageClass *klass = RPE_FIGURE_PAGE_GET_CLASS (self);

  if (what & klass->job_changes)
    return RPE_FIGURE_PAGE_RECOMPUTE;
  if (what & RPE_EXPLORER_CHANGE_LOOK)
    return RPE_FIGURE_PAGE_RESHOW;
  return RPE_FIGURE_PAGE_KEEP;
}

static void sync_viewport_length (RpeFigurePage *self);

static void
state_changed (RpeExplorerState  *state,
               RpeExplorerChange  what,
               RpeFigurePage     *self)
{
  RpeFigurePagePrivate *priv = PRIV (self);

  if ((what & RPE_EXPLORER_CHANGE_LENGTH) && priv->zoom_widget != NULL)
    sync_viewport_length (self);
  switch (RPE_FIGURE_PAGE_GET_CLASS (self)->state_changed (self, what))
    {
    case RPE_FIGURE_PAGE_RECOMPUTE:
      g_clear_pointer (&priv->refusal, g_free);
      rpe_figure_page_request (self);
      break;
    case RPE_FIGURE_PAGE_RESHOW:
      if (priv->result != NULL)
        {
          RPE_FIGURE_PAGE_GET_CLASS (self)->show_result (self, priv->result);
          g_signal_emit (self, signals[FIGURE_CHANGED], 0);
        }
      break;
    case RPE_FIGURE_PAGE_KEEP:
    default:
      break;
    }
  update_status (self);
}

void
rpe_figure_page_set_state (RpeFigurePage    *self,
                           RpeExplorerState *state)
{
  RpeFigurePagePrivate *priv;

  g_return_if_fail (RPE_IS_FIGURE_PAGE (self));
  g_return_if_fail (RPE_IS_EXPLORER_STATE (state));
  priv = PRIV (self);
  g_return_if_fail (priv->state == NULL);
  priv->state = g_object_ref (state);
  priv->changed_id = g_signal_connect (state, "changed", G_CALLBACK (state_changed), self);
  priv->dirty = TRUE;
  sync_viewport_length (self);
  update_status (self);
}

RpeExplorerState *
rpe_figure_page_get_state (RpeFigurePage *self)
{
  g_return_val_if_fail (RPE_IS_FIGURE_PAGE (self), NULL);
  return PRIV (self)->state;
}

gpointer
rpe_figure_page_get_result (RpeFigurePage *self)
{
  g_return_val_if_fail (RPE_IS_FIGURE_PAGE (self), NULL);
  return PRIV (self)->result;
}

RpeExplorerSnapshot *
rpe_figure_page_get_result_snapshot (RpeFigurePage *self)
{
  g_return_val_if_fail (RPE_IS_FIGURE_PAGE (self), NULL);
  return PRIV (self)->result_snapshot;
}

void
rpe_figure_page_get_look (RpeFigurePage *self,
                          gboolean       attention,
                          RpeFigureLook *look)
{
  RpeExplorerState *state;
  const RpeColormap *cmap;
  RpeHeatmapData probe;

  g_return_if_fail (RPE_IS_FIGURE_PAGE (self));
  g_return_if_fail (look != NULL);
  state = PRIV (self)->state;
  memset (look, 0, sizeof *look);
  cmap = state != NULL ? rpe_colormap_lookup (rpe_explorer_state_get_colormap (state)) : NULL;
  look->colormap = cmap != NULL ? cmap : rpe_colormap_default ();
  look->diverging = cmap != NULL && rpe_colormap_is_diverging (cmap) ? cmap : NULL;
  if (state == NULL)
    return;
  rpe_heatmap_data_init (&probe);
  rpe_explorer_state_apply_color_scale (state, &probe, attention);
  look->transform = probe.transform;
  look->param = probe.transform_param;
  rpe_explorer_state_get_color_scale (state, NULL, NULL, &look->shared);
  g_object_get (state, "train-length", &look->train, NULL);
}

/* ---------------------------------------------------------------- texts */

static void
set_caption (RpeFigurePage *self,
             const char    *text,
             gboolean       markup)
{
  RpeFigurePagePrivate *priv;

  g_return_if_fail (RPE_IS_FIGURE_PAGE (self));
  priv = PRIV (self);
  /* Pango 1.50 warns ("Leftover font scales") when it ellipsizes subscripts: markup is clipped at
   * the caption's lines instead (its full text in the tooltip) */
  gtk_label_set_ellipsize (priv->caption, markup ? PANGO_ELLIPSIZE_NONE : PANGO_ELLIPSIZE_END);
  if (markup)
    {
      gtk_label_set_markup (priv->caption, text != NULL ? text : "");
      gtk_widget_set_tooltip_markup (GTK_WIDGET (priv->caption), text != NULL && *text != '\0' ? text : NULL);
    }
  else
    {
      gtk_label_set_text (priv->caption, text != NULL ? text : "");
      gtk_widget_set_tooltip_text (GTK_WIDGET (priv->caption), text != NULL && *text != '\0' ? text : NULL);
    }
}

void
rpe_figure_page_set_caption (RpeFigurePage *self,
                             const char    *text)
{
  set_caption (self, text, FALSE);
}

void
rpe_figure_page_set_caption_markup (RpeFigurePage *self,
                                    const char    *markup)
{
  set_caption (self, markup, TRUE);
}

const char *
rpe_figure_page_get_caption (RpeFigurePage *self)
{
  g_return_val_if_fail (RPE_IS_FIGURE_PAGE (self), NULL);
  return gtk_label_get_text (PRIV (self)->caption);
}

void
rpe_figure_page_set_caption_lines (RpeFigurePage *self,
                                   guint          lines)
{
  RpeFigurePagePrivate *priv;
  GString *ruler = g_string_new (" ");

  g_return_if_fail (RPE_IS_FIGURE_PAGE (self));
  priv = PRIV (self);
  lines = CLAMP (lines, 1, 8);
  for (guint i = 1; i < lines; i++)
    g_string_append (ruler, "\n ");
  gtk_label_set_text (priv->caption_ruler, ruler->str);
  gtk_label_set_lines (priv->caption, (int) lines);
  g_string_free (ruler, TRUE);
}

void
rpe_figure_page_set_hover (RpeFigurePage *self,
                           const char    *text)
{
  g_return_if_fail (RPE_IS_FIGURE_PAGE (self));
  gtk_label_set_text (PRIV (self)->hover, text != NULL ? text : "");
}

const char *
rpe_figure_page_get_hover (RpeFigurePage *self)
{
  g_return_val_if_fail (RPE_IS_FIGURE_PAGE (self), NULL);
  return gtk_label_get_text (PRIV (self)->hover);
}

const char *
rpe_figure_page_get_cap_text (RpeFigurePage *self)
{
  g_return_val_if_fail (RPE_IS_FIGURE_PAGE (self), NULL);
  return PRIV (self)->cap_text != NULL ? PRIV (self)->cap_text : "";
}

gboolean
rpe_figure_page_get_stale (RpeFigurePage *self)
{
  g_return_val_if_fail (RPE_IS_FIGURE_PAGE (self), FALSE);
  return PRIV (self)->stale_text != NULL;
}

const char *
rpe_figure_page_get_stale_text (RpeFigurePage *self)
{
  g_return_val_if_fail (RPE_IS_FIGURE_PAGE (self), NULL);
  return PRIV (self)->stale_text != NULL ? PRIV (self)->stale_text : "";
}

gboolean
rpe_figure_page_get_progress_visible (RpeFigurePage *self)
{
  g_return_val_if_fail (RPE_IS_FIGURE_PAGE (self), FALSE);
  return gtk_widget_get_visible (PRIV (self)->progress_box);
}

double
rpe_figure_page_get_progress (RpeFigurePage *self)
{
  g_return_val_if_fail (RPE_IS_FIGURE_PAGE (self), 0.0);
  return PRIV (self)->fraction;
}

const char *
rpe_figure_page_get_progress_text (RpeFigurePage *self)
{
  g_return_val_if_fail (RPE_IS_FIGURE_PAGE (self), NULL);
  return gtk_progress_bar_get_text (PRIV (self)->progress);
}

guint
rpe_figure_page_get_n_jobs (RpeFigurePage *self)
{
  g_return_val_if_fail (RPE_IS_FIGURE_PAGE (self), 0);
  return PRIV (self)->n_jobs;
}

/* ------------------------------------------------------------------ hover */

/* The heatmap or curve view at or above widget (up to the content), or NULL. */
static GtkWidget *
plot_at (RpeFigurePage *self,
         GtkWidget     *widget,
         GType          type)
{
  for (GtkWidget *w = widget; w != NULL && w != PRIV (self)->content; w = gtk_widget_get_parent (w))
    if (G_TYPE_CHECK_INSTANCE_TYPE (w, type))
      return w;
  return NULL;
}

static char *
real_describe_point (RpeFigurePage *self,
                     GtkWidget     *widget,
                     double         x,
                     double         y)
{
  GtkWidget *plot;

  if ((plot = plot_at (self, widget, RPE_TYPE_HEATMAP_VIEW)) != NULL)
    {
      RpeHeatmapView *map = RPE_HEATMAP_VIEW (plot);
      gsize rows = 0, cols = 0, m, n;
      const float *values = rpe_heatmap_view_get_data (map, &rows, &cols);
      double px = x, py = y;
      const char *title = rpe_heatmap_view_get_title (map);
      g_autofree char *plain = NULL;

      if (plot != widget && !gtk_widget_translate_coordinates (widget, plot, x, y, &px, &py))
        return NULL;
      if (values == NULL || !rpe_heatmap_view_cell_at (map, px, py, &m, &n) || m >= rows || n >= cols)
        return NULL;
      if (title != NULL && pango_parse_markup (title, -1, 0, NULL, &plain, NULL, NULL) && plain[0] != '\0')
        return g_strdup_printf ("%s: m = %zu, n = %zu: %.6g", plain, m, n, values[m * cols + n]);
      return g_strdup_printf ("m = %zu, n = %zu: %.6g", m, n, values[m * cols + n]);
    }
  if ((plot = plot_at (self, widget, RPE_TYPE_CURVE_VIEW)) != NULL)
    {
      RpeCurvePlot p;
      gsize s = 0, i = 0;

      if (!rpe_curve_view_get_hover (RPE_CURVE_VIEW (plot), &s, &i))
        return NULL;
      rpe_curve_view_get_plot (RPE_CURVE_VIEW (plot), &p);
      if (s >= p.n_series || i >= p.series[s].n)
        return NULL;
      if (p.series[s].label != NULL)
        {
          g_autofree char *plain = NULL;

          if (pango_parse_markup (p.series[s].label, -1, 0, NULL, &plain, NULL, NULL))
            return g_strdup_printf ("%s: x = %.6g, y = %.6g", plain, p.series[s].x[i], p.series[s].y[i]);
        }
      return g_strdup_printf ("x = %.6g, y = %.6g", p.series[s].x[i], p.series[s].y[i]);
    }
  return NULL;
}

void
rpe_figure_page_hover_at (RpeFigurePage *self,
                          GtkWidget     *widget,
                          double         x,
                          double         y)
{
  GtkWidget *target;
  double tx = x, ty = y;
  g_autofree char *text = NULL;

  g_return_if_fail (RPE_IS_FIGURE_PAGE (self));
  g_return_if_fail (GTK_IS_WIDGET (widget));
  if (!rpe_gesture_point_ok (x, y))
    return;
  target = gtk_widget_pick (widget, x, y, GTK_PICK_DEFAULT);
  if (target == NULL)
    target = widget;
  if (target != widget && !gtk_widget_translate_coordinates (widget, target, x, y, &tx, &ty))
    return;
  text = RPE_FIGURE_PAGE_GET_CLASS (self)->describe_point (self, target, tx, ty);
  rpe_figure_page_set_hover (self, text);
}

static void
content_motion (GtkEventControllerMotion *controller,
                double                    x,
                double                    y,
                RpeFigurePage            *self)
{
  rpe_figure_page_hover_at (self, PRIV (self)->content, x, y);
}

static void
content_leave (GtkEventControllerMotion *controller,
               RpeFigurePage            *self)
{
  rpe_figure_page_set_hover (self, NULL);
}

/* ------------------------------------------------------------------- zoom */

/* The viewport is a finite window [v0, v0 + span) inside [0, N) with a span
 * of at least min (N, 4) cells: whatever a gesture computed (a NaN, an
 * infinity, an inverted or empty window) ends as such a window; a non-finite
 * one shows the whole map. */
static void
clamp_axis (double *v0,
            double *v1,
            double  n)
{
  double min_span = fmin (n, 4.0), span;

  if (!isfinite (*v0) || !isfinite (*v1))
    {
      *v0 = 0.0;
      *v1 = n;
      return;
    }
  span = *v1 - *v0;
  if (!isfinite (span) || span > n)
    span = n;
  if (span < min_span)
    {
      double c = 0.5 * (*v0 + *v1);

      span = min_span;
      *v0 = c - 0.5 * span;
    }
  *v0 = rpe_gesture_clamp (*v0, 0.0, n - span, 0.0);
  *v1 = *v0 + span;
}

static void
clamp_viewport (RpeFigurePage *self)
{
  RpeFigurePagePrivate *priv = PRIV (self);
  double n = (double) priv->vn;

  if (priv->vn == 0)
    {
      priv->vm0 = priv->vm1 = priv->vn0 = priv->vn1 = 0.0;
      return;
    }
  clamp_axis (&priv->vm0, &priv->vm1, n);
  clamp_axis (&priv->vn0, &priv->vn1, n);
}

static void
sync_viewport_length (RpeFigurePage *self)
{
  RpeFigurePagePrivate *priv = PRIV (self);
  gsize n = priv->state != NULL ? rpe_explorer_state_get_length (priv->state) : 0;

  if (n == priv->vn)
    return;
  priv->vn = n;
  priv->vm0 = priv->vn0 = 0.0;
  priv->vm1 = priv->vn1 = (double) n;
  if (priv->zoom_widget != NULL)
    gtk_widget_queue_draw (priv->zoom_widget);
}

static void
viewport_changed (RpeFigurePage *self)
{
  RpeFigurePagePrivate *priv = PRIV (self);

  clamp_viewport (self);
  if (priv->zoom_widget != NULL)
    gtk_widget_queue_draw (priv->zoom_widget);
  rpe_figure_page_request (self);
}

static gboolean
plot_area (RpeFigurePage *self,
           double        *x,
           double        *y,
           double        *side)
{
  RpeFigurePageClass *klass = RPE_FIGURE_PAGE_GET_CLASS (self);

  return klass->plot_area != NULL && klass->plot_area (self, x, y, side);
}

/* Zooms by factor keeping the position under (fm, fn) (fractions of the plot) fixed. */
static void
zoom_at (RpeFigurePage *self,
         double         factor,
         double         fm,
         double         fn)
{
  RpeFigurePagePrivate *priv = PRIV (self);
  double cm, cn, sm, sn;

  if (!isfinite (factor) || !(factor > 0.0))
    return;
  factor = CLAMP (factor, 1.0 / RPE_GESTURE_MAX_ZOOM, RPE_GESTURE_MAX_ZOOM);
  fm = rpe_gesture_clamp (fm, 0.0, 1.0, 0.5);
  fn = rpe_gesture_clamp (fn, 0.0, 1.0, 0.5);
  clamp_viewport (self);
  cm = priv->vm0 + fm * (priv->vm1 - priv->vm0);
  cn = priv->vn0 + fn * (priv->vn1 - priv->vn0);
  sm = (priv->vm1 - priv->vm0) / factor;
  sn = (priv->vn1 - priv->vn0) / factor;
  priv->vm0 = cm - fm * sm;
  priv->vm1 = priv->vm0 + sm;
  priv->vn0 = cn - fn * sn;
  priv->vn1 = priv->vn0 + sn;
  viewport_changed (self);
}

static gboolean
zoom_scroll (GtkEventControllerScroll *controller,
             double                    dx,
             double                    dy,
             RpeFigurePage            *self)
{
  RpeFigurePagePrivate *priv = PRIV (self);
  double x, y, side, px, py, notches;

  if (!plot_area (self, &x, &y, &side))
    return FALSE;
  /* a wheel notch is dy = ±1; a smooth delta or the first XI2 event after a
   * device change can be anything: at most RPE_GESTURE_MAX_SCROLL notches */
  if (!rpe_gesture_scroll_delta (dy, &notches))
    return TRUE;
  if (!rpe_gesture_event_position (GTK_EVENT_CONTROLLER (controller), priv->zoom_widget, &px, &py))
    {
      px = x + side / 2;
      py = y + side / 2;
    }
  zoom_at (self, pow (1.25, -notches), (py - y) / side, (px - x) / side);
  return TRUE;
}

static void
zoom_drag_begin (GtkGestureDrag *gesture,
                 double          x,
                 double          y,
                 RpeFigurePage  *self)
{
  RpeFigurePagePrivate *priv = PRIV (self);

  clamp_viewport (self);
  priv->drag_m0 = priv->vm0;
  priv->drag_n0 = priv->vn0;
  rpe_drag_tracker_begin (&priv->drag, x, y);
}

static void
zoom_drag_update (GtkGestureDrag *gesture,
                  double          dx,
                  double          dy,
                  RpeFigurePage  *self)
{
  RpeFigurePagePrivate *priv = PRIV (self);
  double x, y, side, sm = priv->vm1 - priv->vm0, sn = priv->vn1 - priv->vn0, px, py;

  if (!plot_area (self, &x, &y, &side) || !rpe_drag_tracker_update (&priv->drag, dx, dy, &px, &py))
    return;
  priv->vm0 = priv->drag_m0 - dy / side * sm;
  priv->vm1 = priv->vm0 + sm;
  priv->vn0 = priv->drag_n0 - dx / side * sn;
  priv->vn1 = priv->vn0 + sn;
  viewport_changed (self);
}

static void
zoom_pinch_begin (GtkGesture       *gesture,
                  GdkEventSequence *sequence,
                  RpeFigurePage    *self)
{
  PRIV (self)->pinch_last = 1.0;
}

static void
zoom_pinch_changed (GtkGestureZoom *gesture,
                    double          scale,
                    RpeFigurePage  *self)
{
  RpeFigurePagePrivate *priv = PRIV (self);
  double factor;

  if (!rpe_gesture_zoom_factor (scale, priv->pinch_last, &factor))
    return;
  if (fabs (factor - 1.0) > 0.05)
    {
      zoom_at (self, factor, 0.5, 0.5);
      priv->pinch_last = scale;
    }
}

static void
action_zoom (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  RpeFigurePage *self = RPE_FIGURE_PAGE (widget);
  double factor = g_variant_get_double (parameter);

  if (PRIV (self)->zoom_widget == NULL)
    return;
  if (factor <= 0.0)
    rpe_figure_page_reset_zoom (self);
  else
    rpe_figure_page_zoom (self, factor);
}

void
rpe_figure_page_set_zoom_widget (RpeFigurePage *self,
                                 GtkWidget     *widget)
{
  RpeFigurePagePrivate *priv;
  GtkEventController *scroll;
  GtkGesture *drag, *pinch;

  g_return_if_fail (RPE_IS_FIGURE_PAGE (self));
  g_return_if_fail (GTK_IS_WIDGET (widget));
  priv = PRIV (self);
  g_return_if_fail (priv->zoom_widget == NULL);
  priv->zoom_widget = widget;
  priv->pinch_last = 1.0;
  scroll = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_VERTICAL);
  g_signal_connect (scroll, "scroll", G_CALLBACK (zoom_scroll), self);
  gtk_widget_add_controller (widget, scroll);
  drag = gtk_gesture_drag_new ();
  g_signal_connect (drag, "drag-begin", G_CALLBACK (zoom_drag_begin), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (zoom_drag_update), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (drag));
  pinch = gtk_gesture_zoom_new ();
  g_signal_connect (pinch, "begin", G_CALLBACK (zoom_pinch_begin), self);
  g_signal_connect (pinch, "scale-changed", G_CALLBACK (zoom_pinch_changed), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (pinch));
  gtk_widget_set_visible (priv->zoom_reset, TRUE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "figure.zoom", TRUE);
  sync_viewport_length (self);
}

void
rpe_figure_page_get_viewport (RpeFigurePage *self,
                              double        *m0,
                              double        *m1,
                              double        *n0,
                              double        *n1)
{
  RpeFigurePagePrivate *priv;

  g_return_if_fail (RPE_IS_FIGURE_PAGE (self));
  priv = PRIV (self);
  *m0 = priv->vm0;
  *m1 = priv->vm1;
  *n0 = priv->vn0;
  *n1 = priv->vn1;
}

void
rpe_figure_page_set_viewport (RpeFigurePage *self,
                              double         m0,
                              double         m1,
                              double         n0,
                              double         n1)
{
  RpeFigurePagePrivate *priv;

  g_return_if_fail (RPE_IS_FIGURE_PAGE (self));
  priv = PRIV (self);
  priv->vm0 = m0;
  priv->vm1 = m1;
  priv->vn0 = n0;
  priv->vn1 = n1;
  viewport_changed (self);
}

gsize
rpe_figure_page_get_viewport_n (RpeFigurePage *self)
{
  g_return_val_if_fail (RPE_IS_FIGURE_PAGE (self), 0);
  return PRIV (self)->vn;
}

void
rpe_figure_page_zoom (RpeFigurePage *self,
                      double         factor)
{
  g_return_if_fail (RPE_IS_FIGURE_PAGE (self));
  zoom_at (self, factor, 0.5, 0.5);
}

void
rpe_figure_page_reset_zoom (RpeFigurePage *self)
{
  g_return_if_fail (RPE_IS_FIGURE_PAGE (self));
  rpe_figure_page_set_viewport (self, 0, (double) PRIV (self)->vn, 0, (double) PRIV (self)->vn);
}

gboolean
rpe_figure_page_get_zoomed (RpeFigurePage *self)
{
  RpeFigurePagePrivate *priv;

  g_return_val_if_fail (RPE_IS_FIGURE_PAGE (self), FALSE);
  priv = PRIV (self);
  return priv->vn > 0 && (priv->vm0 > 0.0 || priv->vn0 > 0.0 || priv->vm1 < (double) priv->vn
                          || priv->vn1 < (double) priv->vn);
}

/* ----------------------------------------------------------------- export */

RpeFigureBundle *
rpe_figure_page_build_figure (RpeFigurePage *self)
{
  RpeFigurePageClass *klass;

  g_return_val_if_fail (RPE_IS_FIGURE_PAGE (self), NULL);
  klass = RPE_FIGURE_PAGE_GET_CLASS (self);
  if (klass->build_figure == NULL || PRIV (self)->result == NULL)
    return NULL;
  return klass->build_figure (self);
}

gboolean
rpe_figure_page_setup_sweep (RpeFigurePage   *self,
                             RpeExportDialog *dialog)
{
  RpeFigurePageClass *klass;

  g_return_val_if_fail (RPE_IS_FIGURE_PAGE (self), FALSE);
  klass = RPE_FIGURE_PAGE_GET_CLASS (self);
  if (klass->setup_sweep == NULL)
    return FALSE;
  klass->setup_sweep (self, dialog);
  return TRUE;
}

void
rpe_figure_page_draw_figure (cairo_t         *cr,
                             const RpeFigure *fig,
                             int              width,
                             int              height)
{
  double wpt, hpt, scale;

  g_return_if_fail (cr != NULL && fig != NULL);
  if (width <= 0 || height <= 0)
    return;
  rpe_figure_default_size (fig, &wpt, &hpt);
  scale = fmin (1.0, fmin ((double) width / (0.6 * wpt), (double) height / (0.6 * hpt)));
  if (!(scale > 0.0))
    return;
  cairo_save (cr);
  cairo_scale (cr, scale, scale);
  rpe_figure_render (cr, fig, (double) width / scale, (double) height / scale);
  cairo_restore (cr);
}

/* ----------------------------------------------------------------- layout */

void
rpe_figure_page_set_content (RpeFigurePage *self,
                             GtkWidget     *child)
{
  g_return_if_fail (RPE_IS_FIGURE_PAGE (self));
  gtk_widget_set_vexpand (child, TRUE);
  gtk_box_append (GTK_BOX (PRIV (self)->content), child);
}

void
rpe_figure_page_add_control (RpeFigurePage *self,
                             GtkWidget     *child)
{
  RpeFigurePagePrivate *priv;

  g_return_if_fail (RPE_IS_FIGURE_PAGE (self));
  priv = PRIV (self);
  gtk_box_append (GTK_BOX (priv->controls), child);
  gtk_widget_set_visible (priv->controls, TRUE);
}

void
rpe_figure_page_add_footer (RpeFigurePage *self,
                            GtkWidget     *child)
{
  g_return_if_fail (RPE_IS_FIGURE_PAGE (self));
  gtk_widget_set_valign (child, GTK_ALIGN_CENTER);
  gtk_box_append (GTK_BOX (PRIV (self)->footer_controls), child);
}

/* -------------------------------------------------------------- lifecycle */

static void
full_clicked (GtkButton     *button,
              RpeFigurePage *self)
{
  rpe_figure_page_compute_full (self);
}

static void
cancel_clicked (GtkButton     *button,
                RpeFigurePage *self)
{
  rpe_figure_page_cancel (self);
}

static void
rpe_figure_page_map (GtkWidget *widget)
{
  RpeFigurePage *self = RPE_FIGURE_PAGE (widget);
  RpeFigurePagePrivate *priv = PRIV (self);

  GTK_WIDGET_CLASS (rpe_figure_page_parent_class)->map (widget);
  if (priv->dirty || (priv->result == NULL && !rpe_job_slot_busy (&priv->slot)))
    rpe_figure_page_request (self);
}

static void
rpe_figure_page_dispose (GObject *object)
{
  RpeFigurePage *self = RPE_FIGURE_PAGE (object);
  RpeFigurePagePrivate *priv = PRIV (self);
  RpeFigurePageClass *klass = RPE_FIGURE_PAGE_GET_CLASS (self);

  rpe_job_slot_clear (&priv->slot);
  g_clear_handle_id (&priv->progress_timeout, g_source_remove);
  if (priv->state != NULL)
    g_clear_signal_handler (&priv->changed_id, priv->state);
  g_clear_object (&priv->state);
  if (priv->result != NULL && klass->result_free != NULL)
    klass->result_free (priv->result);
  priv->result = NULL;
  g_clear_pointer (&priv->result_snapshot, rpe_explorer_snapshot_unref);
  g_clear_pointer (&priv->refusal, g_free);
  g_clear_pointer (&priv->cap_text, g_free);
  g_clear_pointer (&priv->stale_text, g_free);
  priv->zoom_widget = NULL;
  /* the template's tree (gtk_widget_dispose_template reads the instance's class in GTK 4.8.3,
   * which is a view's, without a template) */
  g_clear_pointer (&priv->box, gtk_widget_unparent);
  G_OBJECT_CLASS (rpe_figure_page_parent_class)->dispose (object);
}

static gboolean
default_start_job (RpeFigurePage       *self,
                   RpeExplorerSnapshot *snapshot,
                   gsize                n_cap,
                   GCancellable        *cancellable,
                   GAsyncReadyCallback  callback,
                   gpointer             user_data,
                   char               **why)
{
  return FALSE;
}

static gpointer
default_finish_job (RpeFigurePage *self,
                    GAsyncResult  *result,
                    GError       **error)
{
  return NULL;
}

static void
rpe_figure_page_class_init (RpeFigurePageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = rpe_figure_page_dispose;
  widget_class->map = rpe_figure_page_map;
  klass->job_changes = RPE_EXPLORER_CHANGE_ALL & ~(RPE_EXPLORER_CHANGE_LOOK | RPE_EXPLORER_CHANGE_COMPARE
                                                   | RPE_EXPLORER_CHANGE_GRID);
  klass->cap_kind = RPE_FIGURE_PAGE_NO_CAP;
  klass->state_changed = real_state_changed;
  klass->describe_point = real_describe_point;
  klass->start_job = default_start_job;
  klass->finish_job = default_finish_job;

  /**
   * RpeFigurePage::figure-changed:
   *
   * A new result (or new colours) is shown: rpe_figure_page_build_figure has changed.
   */
  signals[FIGURE_CHANGED] = g_signal_new ("figure-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 0);

  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/rpestudio/RpeStudio/ui/rpe-figure-page.ui");
  gtk_widget_class_bind_template_child_private (widget_class, RpeFigurePage, box);
  gtk_widget_class_bind_template_child_private (widget_class, RpeFigurePage, controls);
  gtk_widget_class_bind_template_child_private (widget_class, RpeFigurePage, caption_ruler);
  gtk_widget_class_bind_template_child_private (widget_class, RpeFigurePage, caption);
  gtk_widget_class_bind_template_child_private (widget_class, RpeFigurePage, content);
  gtk_widget_class_bind_template_child_private (widget_class, RpeFigurePage, stale_badge);
  gtk_widget_class_bind_template_child_private (widget_class, RpeFigurePage, progress_box);
  gtk_widget_class_bind_template_child_private (widget_class, RpeFigurePage, progress);
  gtk_widget_class_bind_template_child_private (widget_class, RpeFigurePage, cancel_button);
  gtk_widget_class_bind_template_child_private (widget_class, RpeFigurePage, hover);
  gtk_widget_class_bind_template_child_private (widget_class, RpeFigurePage, cap_label);
  gtk_widget_class_bind_template_child_private (widget_class, RpeFigurePage, full_stack);
  gtk_widget_class_bind_template_child_private (widget_class, RpeFigurePage, full_button);
  gtk_widget_class_bind_template_child_private (widget_class, RpeFigurePage, footer_controls);
  gtk_widget_class_bind_template_child_private (widget_class, RpeFigurePage, zoom_reset);
  gtk_widget_class_bind_template_callback (widget_class, full_clicked);
  gtk_widget_class_bind_template_callback (widget_class, cancel_clicked);

  gtk_widget_class_install_action (widget_class, "figure.zoom", "d", action_zoom);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_plus, 0, "figure.zoom", "d", 1.25);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Add, 0, "figure.zoom", "d", 1.25);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_equal, 0, "figure.zoom", "d", 1.25);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_minus, 0, "figure.zoom", "d", 0.8);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Subtract, 0, "figure.zoom", "d", 0.8);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_0, 0, "figure.zoom", "d", 0.0);
}

static void
rpe_figure_page_init (RpeFigurePage *self)
{
  RpeFigurePagePrivate *priv = PRIV (self);
  GtkEventController *motion;

  gtk_widget_init_template (GTK_WIDGET (self));
  rpe_job_slot_init (&priv->slot, job_start, self);
  rpe_figure_page_set_caption_lines (self, DEFAULT_CAPTION_LINES);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "figure.zoom", FALSE);
  motion = gtk_event_controller_motion_new ();
  g_signal_connect (motion, "motion", G_CALLBACK (content_motion), self);
  g_signal_connect (motion, "leave", G_CALLBACK (content_leave), self);
  gtk_widget_add_controller (priv->content, motion);
  update_status (self);
}

/* rpe-teaching-view.c: the "SPE vs RPE" teaching view and the Curves page (their plots
 * are RpeCurveViews). */
#include "config.h"

#include <glib/gi18n.h>

#include "rpe-curve-view.h"
#include "rpe-figure-names.h"
#include "rpe-teaching-view.h"
#include "rpe-gesture-helper.h"
#include "rpe-job-progress.h"

#include <math.h>
#include <string.h>

#define TEACHING_N_CAP 256

/* ======================================================== shared helper */

typedef struct
{
  GWeakRef self;
} ViewRef;

static ViewRef *
view_ref_new (gpointer self)
{
  ViewRef *ref = g_new0 (ViewRef, 1);

  g_weak_ref_init (&ref->self, self);
  return ref;
}

static void
view_ref_free (ViewRef *ref)
{
  g_weak_ref_clear (&ref->self);
  g_free (ref);
}

static GtkWidget *
caption_label (void)
{
  GtkWidget *label = gtk_label_new (NULL);

  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  gtk_label_set_natural_wrap_mode (GTK_LABEL (label), GTK_NATURAL_WRAP_WORD);
  gtk_label_set_xalign (GTK_LABEL (label), 0.0f);
  gtk_widget_add_css_class (label, "dim-label");
  return label;
}

/* ======================================================= teaching view */

#define TEACHING_CURVE_CHANGES (RPE_EXPLORER_CHANGE_SPE_KIND | RPE_EXPLORER_CHANGE_SPE_PARAMS \
                                | RPE_EXPLORER_CHANGE_GATE | RPE_EXPLORER_CHANGE_LENGTH   \
                                | RPE_EXPLORER_CHANGE_HEAD | RPE_EXPLORER_CHANGE_GATED    \
                                | RPE_EXPLORER_CHANGE_MODULES)
#define TEACHING_CHANGES (TEACHING_CURVE_CHANGES | RPE_EXPLORER_CHANGE_REALIZATIONS        \
                          | RPE_EXPLORER_CHANGE_SEED | RPE_EXPLORER_CHANGE_CAUSAL          \
                          | RPE_EXPLORER_CHANGE_CONTENT | RPE_EXPLORER_CHANGE_LOOK)

struct _RpeTeachingView
{
  GtkWidget         parent_instance;

  RpeExplorerState *state;
  gulong            changed_id;
  RpeJobSlot        slot;
  gboolean          dirty;
  gboolean          curve_dirty;
  RpeTeaching      *result;
  RpeTeaching      *curve;       /* the last result that carried the error curve */
  gsize             n_cap;       /* the view computes at min (N, n_cap) ... */
  gboolean          full_next;   /* ... unless "Compute at Full N" asked for N */
  char             *refusal;     /* why the full-N job was refused (budget) */

  GtkWidget        *box;
  GtkLabel         *caption;
  RpeJobBar         job;
  RpeHeatmapView   *maps[3];
  GtkScale         *r_scale;
  GtkLabel         *r_label;
  RpeCurveView     *plot;
  GtkWidget        *row_clear;
  gssize            row;          /* the query row m plotted below (exact and estimate); -1: none */
  double           *row_x;
  double           *row_y;        /* 2 * N: exact row, estimate row */
  gboolean          updating;
};

/* The R slider and the template error curve both span 1 .. 2^10 (rpe_compute_teaching). */
#define TEACHING_R_MAX_LOG2 10

G_DEFINE_FINAL_TYPE (RpeTeachingView, rpe_teaching_view, GTK_TYPE_WIDGET)

static guint teaching_figure_changed;

static void teaching_request (RpeTeachingView *self);

/* The plot of row m of the exact and estimated maps: a(m, .) and â(m, .) over the key
 * positions of the maps (their x range). */
static gboolean
teaching_row_plot (RpeTeachingView *self)
{
  RpeTeaching *t = self->result;
  RpeCurvePlot plot;
  RpeCurveSeries series[2] = { { 0 }, { 0 } };
  g_autofree char *title = NULL;

  g_clear_pointer (&self->row_x, g_free);
  g_clear_pointer (&self->row_y, g_free);
  gtk_widget_set_visible (self->row_clear, self->row >= 0);
  if (self->row < 0 || t == NULL || (gsize) self->row >= t->n)
    return FALSE;
  self->row_x = g_new (double, t->n);
  self->row_y = g_new (double, 2 * t->n);
  for (gsize n = 0; n < t->n; n++)
    {
      self->row_x[n] = (double) n;
      self->row_y[n] = t->exact[(gsize) self->row * t->n + n];
      self->row_y[t->n + n] = t->estimate[(gsize) self->row * t->n + n];
    }
  rpe_curve_plot_init (&plot);
  for (guint i = 0; i < 2; i++)
    {
      series[i].x = self->row_x;
      series[i].y = self->row_y + i * t->n;
      series[i].n = t->n;
    }
  series[0].label = _("exact a(m, n)");
  series[1].label = _("SPE estimate â(m, n)");
  series[1].dashed = TRUE;
  plot.series = series;
  plot.n_series = 2;
  title = g_strdup_printf (_("Row m = %zd of the maps above (Delete or Clear Row: back to the template error)"),
                           self->row);
  plot.title = title;
  plot.x_label = _("key position n");
  plot.y_label = _("attention weight");
  plot.fixed_x = TRUE;
  plot.x_min = -0.5;
  plot.x_max = (double) t->n - 0.5;
  rpe_curve_view_set_plot (self->plot, &plot);
  return TRUE;
}

static void
teaching_update_plot (RpeTeachingView *self)
{
  RpeCurvePlot plot;
  RpeCurveSeries series[2] = { { 0 }, { 0 } };
  double half[16], rr[16];
  gsize r = rpe_explorer_state_get_r (self->state);
  g_autofree char *marker = g_strdup_printf ("R = %zu", r);
  g_autofree char *title = NULL;
  g_autofree char *error_label = NULL;

  if (teaching_row_plot (self))
    return;
  if (self->curve == NULL)
    return;
  rpe_curve_plot_init (&plot);
  series[0].x = self->curve->curve_r;
  series[0].y = self->curve->curve_mean;
  series[0].y_err = self->curve->curve_sd;
  series[0].n = self->curve->n_curve;
  /* Translators: %s is the template error's symbol ‖P̂ − P̃‖_F / ‖P̃‖_F */
  error_label = g_strdup_printf (_("template error %s"), RPE_FIG_TEMPLATE_ERROR);
  series[0].label = error_label;
  series[0].marker = RPE_CURVE_MARKER_CIRCLE;
  /* the 1/sqrt(R) reference through the first point */
  for (gsize i = 0; i < self->curve->n_curve && i < 16; i++)
    {
      rr[i] = self->curve->curve_r[i];
      half[i] = self->curve->curve_mean[0] / sqrt (rr[i]);
    }
  series[1].x = rr;
  series[1].y = half;
  series[1].n = MIN (self->curve->n_curve, 16);
  series[1].label = "∝ 1/√R";
  series[1].dashed = TRUE;
  plot.series = series;
  plot.n_series = 2;
  title = g_strdup_printf (_("Template error against R (head %zu, mean over the D features, slope %s%.2f)"),
                           self->curve->head, self->curve->slope < 0 ? RPE_FIG_MINUS : "", fabs (self->curve->slope));
  plot.title = title;
  plot.x_label = _("realizations R");
  plot.y_label = _("template error");
  /* the slider's range */
  plot.fixed_x = TRUE;
  plot.x_min = 1.0;
  plot.x_max = (double) (1u << TEACHING_R_MAX_LOG2);
  plot.x_log = TRUE;
  plot.y_log = TRUE;
  plot.x_marker = (double) r;
  plot.x_marker_label = marker;
  rpe_curve_view_set_plot (self->plot, &plot);
}

/* The cap, the refusal, or the stale mark of the maps shown. */
static void
teaching_update_cap (RpeTeachingView *self)
{
  gsize asked = rpe_explorer_state_get_length (self->state);
  RpeTeaching *t = self->result;
  g_autofree char *note = NULL;

  if (self->refusal != NULL)
    note = g_strdup (self->refusal);
  else if (t != NULL && t->n_asked != asked)
    note = g_strdup_printf (rpe_job_slot_busy (&self->slot)
                            ? _("Stale: the maps shown are for N = %zu (their axes); computing for N = %zu…")
                            : _("Stale: the maps shown are for N = %zu (their axes), not N = %zu: cancelled."),
                            t->n, asked);
  if (t != NULL && t->n_asked == asked)
    rpe_cap_bar_set (&self->job.cap, t->n, t->n_asked, note);
  else
    rpe_cap_bar_set (&self->job.cap, 0, 0, note);
}

/* How the maps are coloured (the state's colour map and scale). */
typedef struct
{
  const RpeColormap   *cmap;
  RpeHeatmapTransform  transform;   /* of exact and estimate */
  RpeHeatmapTransform  diff_transform;  /* of the difference (never the SPE paper's) */
  double               param;
  gboolean             shared;      /* exact and estimate on one range */
  guint                train;
} TeachingLook;

static void teaching_look (RpeTeachingView *self, TeachingLook *look);
static RpeFigureBundle *teaching_figure (RpeTeaching *t, const RpeExplorerSnapshot *s, const TeachingLook *look);

static void
teaching_show (RpeTeachingView *self,
               RpeTeaching     *t)
{
  g_autofree char *caption = NULL;
  double lo = 0.0, hi = 1.0;
  gboolean fixed = FALSE;
  TeachingLook look;

  /* t may be self->result (a new colour scale): take the references first */
  rpe_teaching_ref (t);
  g_clear_pointer (&self->result, rpe_teaching_unref);
  self->result = t;
  if (t->n_curve > 0)
    {
      rpe_teaching_ref (t);
      g_clear_pointer (&self->curve, rpe_teaching_unref);
      self->curve = t;
    }
  teaching_look (self, &look);
  {
    /* the range the exported figure gives exact and estimate (rpe-export.c: the union of
     * their ranges when shared) */
    g_autoptr (RpeExplorerSnapshot) s = rpe_explorer_state_snapshot (self->state);
    g_autoptr (RpeFigureBundle) b = teaching_figure (t, s, &look);

    lo = INFINITY;
    hi = -INFINITY;
    for (guint i = 0; i < 2 && look.shared; i++)
      {
        double a0, a1;

        if (rpe_plot_heatmap_range (&b->fig.panels[i], &a0, &a1, NULL))
          {
            lo = fmin (lo, a0);
            hi = fmax (hi, a1);
            fixed = TRUE;
          }
      }
  }
  for (guint i = 0; i < 3; i++)
    {
      g_autoptr (GBytes) bytes = rpe_teaching_dup_bytes (t, i);

      rpe_heatmap_view_set_data (self->maps[i], bytes, t->n, t->n);
      g_autofree char *panel_title = rpe_figure_compare_panel (i, t->r);

      rpe_heatmap_view_set_title (self->maps[i], panel_title);
      if (i < 2)
        {
          rpe_heatmap_view_set_colormap (self->maps[i], look.cmap);
          rpe_heatmap_view_set_scale (self->maps[i], RPE_HEATMAP_SCALE_LINEAR);
          rpe_heatmap_view_set_range (self->maps[i], fixed, lo, hi);
          rpe_heatmap_view_set_transform (self->maps[i], look.transform, look.param);
        }
      else
        rpe_heatmap_view_set_transform (self->maps[i], look.diff_transform, look.param);
    }
  /* Translators: markup; the first %s is the attention error's symbol ‖â − a‖_F / ‖a‖_F, the
   * second the template error's ‖P̂ − P̃‖_F / ‖P̃‖_F */
  caption = g_strdup_printf (_("Head %zu, N = %zu, R = %zu: the SPE estimate â (middle) of the exact "
                               "relative attention a (left) has attention error "
                               "%s = %.3f (right: â − a). "
                               "The curve below is the template error %s"
                               " of the head's features, another quantity; both shrink like 1/√R. "
                               "Raise R to watch the estimate sharpen; draw new noise to see another one."),
                             t->head, t->n, t->r, RPE_FIG_ATTENTION_ERROR, t->error, RPE_FIG_TEMPLATE_ERROR);
  gtk_label_set_markup (self->caption, caption);
  teaching_update_plot (self);
  teaching_update_cap (self);
  g_signal_emit (self, teaching_figure_changed, 0);
}

static void
teaching_done (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  ViewRef *ref = user_data;
  g_autoptr (RpeTeachingView) self = g_weak_ref_get (&ref->self);
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeTeaching) t = rpe_compute_teaching_finish (result, &error);

  view_ref_free (ref);
  if (self == NULL || !rpe_job_slot_done (&self->slot, result))
    return;
  rpe_job_bar_set_busy (&self->job, rpe_job_slot_busy (&self->slot));
  if (t != NULL)
    teaching_show (self, t);
  else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    gtk_label_set_text (self->caption, error->message);
  teaching_update_cap (self);
}

static void
teaching_progress (double   fraction,
                   gpointer user_data)
{
  RpeTeachingView *self = user_data;

  rpe_job_bar_progress (&self->job, fraction);
}

static void
teaching_start (gpointer      owner,
                GCancellable *cancellable)
{
  RpeTeachingView *self = owner;
  g_autoptr (RpeExplorerSnapshot) s = rpe_explorer_state_snapshot (self->state);
  gboolean with_curve = self->curve_dirty || self->curve == NULL;
  gsize n_cap = self->full_next ? s->n : self->n_cap;

  self->curve_dirty = FALSE;
  self->full_next = FALSE;
  rpe_job_bar_begin (&self->job);
  rpe_compute_teaching_async (s, n_cap, with_curve, teaching_progress, self,
                              cancellable, teaching_done, view_ref_new (self));
  teaching_update_cap (self);
}

static void
teaching_full_clicked (GtkButton       *button,
                       RpeTeachingView *self)
{
  rpe_teaching_view_compute_full (self);
}

static void
teaching_cancel_clicked (GtkButton       *button,
                         RpeTeachingView *self)
{
  rpe_teaching_view_cancel (self);
}

static void
teaching_request (RpeTeachingView *self)
{
  if (!gtk_widget_get_mapped (GTK_WIDGET (self)))
    {
      self->dirty = TRUE;
      return;
    }
  self->dirty = FALSE;
  rpe_job_slot_request (&self->slot);
}

static void
teaching_sync_r (RpeTeachingView *self)
{
  gsize r = rpe_explorer_state_get_r (self->state);
  g_autofree char *text = g_strdup_printf ("R = %zu", r);

  self->updating = TRUE;
  gtk_range_set_value (GTK_RANGE (self->r_scale), log2 ((double) r));
  self->updating = FALSE;
  gtk_label_set_text (self->r_label, text);
}

static void
teaching_state_changed (RpeExplorerState  *state,
                        RpeExplorerChange  what,
                        RpeTeachingView   *self)
{
  if (what & RPE_EXPLORER_CHANGE_REALIZATIONS)
    {
      teaching_sync_r (self);
      teaching_update_plot (self);
    }
  if (what & TEACHING_CURVE_CHANGES)
    self->curve_dirty = TRUE;
  if (what & (TEACHING_CHANGES & ~RPE_EXPLORER_CHANGE_LOOK))
    {
      g_clear_pointer (&self->refusal, g_free);
      teaching_request (self);
      teaching_update_cap (self);
    }
  else if ((what & RPE_EXPLORER_CHANGE_LOOK) && self->result != NULL)
    teaching_show (self, self->result);   /* new colours, same numbers */
  else if (what & RPE_EXPLORER_CHANGE_LOOK)
    teaching_request (self);
}

static void
teaching_r_changed (GtkRange        *range,
                    RpeTeachingView *self)
{
  guint r = (guint) lround (exp2 (gtk_range_get_value (range)));

  if (!self->updating)
    g_object_set (self->state, "realizations", MAX (r, 1u), NULL);
}

static void
teaching_new_noise (GtkButton       *button,
                    RpeTeachingView *self)
{
  guint seed;

  g_object_get (self->state, "seed", &seed, NULL);
  g_object_set (self->state, "seed", seed + 1, NULL);
}

static void
teaching_map (GtkWidget *widget)
{
  RpeTeachingView *self = RPE_TEACHING_VIEW (widget);

  GTK_WIDGET_CLASS (rpe_teaching_view_parent_class)->map (widget);
  if (self->dirty || self->result == NULL)
    teaching_request (self);
}

static void
rpe_teaching_view_dispose (GObject *object)
{
  RpeTeachingView *self = RPE_TEACHING_VIEW (object);

  rpe_job_slot_clear (&self->slot);
  if (self->state != NULL)
    g_clear_signal_handler (&self->changed_id, self->state);
  g_clear_object (&self->state);
  g_clear_pointer (&self->result, rpe_teaching_unref);
  g_clear_pointer (&self->curve, rpe_teaching_unref);
  g_clear_pointer (&self->row_x, g_free);
  g_clear_pointer (&self->row_y, g_free);
  g_clear_pointer (&self->refusal, g_free);
  g_clear_pointer (&self->box, gtk_widget_unparent);
  G_OBJECT_CLASS (rpe_teaching_view_parent_class)->dispose (object);
}

static void action_row (GtkWidget *widget, const char *action_name, GVariant *parameter);

static void
rpe_teaching_view_class_init (RpeTeachingViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = rpe_teaching_view_dispose;
  widget_class->map = teaching_map;
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);

  /**
   * RpeTeachingView::figure-changed:
   *
   * A new result is shown (rpe_teaching_view_build_figure has changed).
   */
  teaching_figure_changed = g_signal_new ("figure-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  gtk_widget_class_install_action (widget_class, "teaching.row", "i", action_row);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Down, 0, "teaching.row", "i", 1);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Up, 0, "teaching.row", "i", -1);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Page_Down, 0, "teaching.row", "i", 10);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Page_Up, 0, "teaching.row", "i", -10);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Delete, 0, "teaching.row", "i", 0);
}

void
rpe_teaching_view_set_row (RpeTeachingView *self,
                           gssize           m)
{
  g_return_if_fail (RPE_IS_TEACHING_VIEW (self));
  if (m < 0 || self->result == NULL || (gsize) m >= self->result->n)
    m = -1;
  self->row = m;
  teaching_update_plot (self);
}

gssize
rpe_teaching_view_get_row (RpeTeachingView *self)
{
  g_return_val_if_fail (RPE_IS_TEACHING_VIEW (self), -1);
  return self->row;
}

static void
map_released (GtkGestureClick *gesture,
              int              n_press,
              double           x,
              double           y,
              RpeTeachingView *self)
{
  GtkWidget *map = gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (gesture));
  gsize row, col;

  gtk_widget_grab_focus (GTK_WIDGET (self));
  if (n_press == 1 && rpe_heatmap_view_cell_at (RPE_HEATMAP_VIEW (map), x, y, &row, &col))
    rpe_teaching_view_set_row (self, (gssize) row);
}

static void
row_clear_clicked (GtkButton       *button,
                   RpeTeachingView *self)
{
  rpe_teaching_view_set_row (self, -1);
}

static void
action_row (GtkWidget  *widget,
            const char *action_name,
            GVariant   *parameter)
{
  RpeTeachingView *self = RPE_TEACHING_VIEW (widget);
  gint32 step = g_variant_get_int32 (parameter);
  gssize n = self->result != NULL ? (gssize) self->result->n : 0;

  if (step == 0 || n == 0)
    rpe_teaching_view_set_row (self, -1);
  else
    rpe_teaching_view_set_row (self, CLAMP (self->row >= 0 ? self->row + step : n / 2, 0, n - 1));
}

static void
rpe_teaching_view_init (RpeTeachingView *self)
{
  GtkWidget *row, *controls, *button, *label;

  rpe_job_slot_init (&self->slot, teaching_start, self);
  self->row = -1;
  gtk_widget_set_focusable (GTK_WIDGET (self), TRUE);
  self->n_cap = TEACHING_N_CAP;
  self->box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  gtk_widget_add_css_class (self->box, "rpe-pane");
  gtk_widget_set_parent (self->box, GTK_WIDGET (self));

  self->caption = GTK_LABEL (caption_label ());
  gtk_box_append (GTK_BOX (self->box), GTK_WIDGET (self->caption));
  rpe_job_bar_init (&self->job, G_CALLBACK (teaching_cancel_clicked), G_CALLBACK (teaching_full_clicked), self);
  gtk_box_append (GTK_BOX (self->box), self->job.box);

  row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  gtk_box_set_homogeneous (GTK_BOX (row), TRUE);
  gtk_widget_set_vexpand (row, TRUE);
  for (guint i = 0; i < 3; i++)
    {
      self->maps[i] = RPE_HEATMAP_VIEW (rpe_heatmap_view_new ());
      rpe_heatmap_view_set_scale (self->maps[i], i < 2 ? RPE_HEATMAP_SCALE_LINEAR : RPE_HEATMAP_SCALE_SYMMETRIC);
      gtk_box_append (GTK_BOX (row), GTK_WIDGET (self->maps[i]));
      {
        GtkGesture *click = gtk_gesture_click_new ();

        g_signal_connect (click, "released", G_CALLBACK (map_released), self);
        gtk_widget_add_controller (GTK_WIDGET (self->maps[i]), GTK_EVENT_CONTROLLER (click));
      }
    }
  gtk_widget_set_tooltip_markup (GTK_WIDGET (self->maps[0]),
                                 _("Exact relative attention: softmax of Σ<sub>d</sub> q k P̃<sub>d</sub>(m − n) / √D"));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->maps[1]),
                               _("SPE estimate: softmax of Q̂ K̂ᵀ / √R from R noise realizations"));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->maps[2]), _("The estimate's error â − a (estimate − exact)"));
  gtk_box_append (GTK_BOX (self->box), row);

  controls = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  label = gtk_label_new (_("Realizations"));
  gtk_box_append (GTK_BOX (controls), label);
  /* R from 1 to 1024: the range of the template error curve below */
  self->r_scale = GTK_SCALE (gtk_scale_new_with_range (GTK_ORIENTATION_HORIZONTAL, 0.0, TEACHING_R_MAX_LOG2, 1.0));
  gtk_range_set_round_digits (GTK_RANGE (self->r_scale), 0);
  gtk_scale_set_draw_value (self->r_scale, FALSE);
  for (int i = 0; i <= TEACHING_R_MAX_LOG2; i += 2)
    {
      g_autofree char *mark = g_strdup_printf ("%d", 1 << i);

      gtk_scale_add_mark (self->r_scale, i, GTK_POS_BOTTOM, mark);
    }
  gtk_widget_set_hexpand (GTK_WIDGET (self->r_scale), TRUE);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->r_scale),
                               _("Number of noise realizations R (log scale): the estimate's error shrinks like 1/√R"));
  g_signal_connect (self->r_scale, "value-changed", G_CALLBACK (teaching_r_changed), self);
  gtk_box_append (GTK_BOX (controls), GTK_WIDGET (self->r_scale));
  self->r_label = GTK_LABEL (gtk_label_new ("R"));
  gtk_label_set_width_chars (self->r_label, 9);
  gtk_box_append (GTK_BOX (controls), GTK_WIDGET (self->r_label));
  button = gtk_button_new_with_mnemonic (_("_Draw New Noise"));
  gtk_widget_set_tooltip_text (button, _("Draw a new noise realization (next seed)"));
  g_signal_connect (button, "clicked", G_CALLBACK (teaching_new_noise), self);
  gtk_box_append (GTK_BOX (controls), button);
  self->row_clear = gtk_button_new_with_mnemonic (_("C_lear Row"));
  gtk_widget_set_tooltip_text (self->row_clear, _("Back to the template error curve (Delete). Click a row of a map, "
                               "or press \u2191/\u2193 with the view focused, to plot that query row"));
  g_signal_connect (self->row_clear, "clicked", G_CALLBACK (row_clear_clicked), self);
  gtk_widget_set_visible (self->row_clear, FALSE);
  gtk_box_append (GTK_BOX (controls), self->row_clear);
  gtk_box_append (GTK_BOX (self->box), controls);

  self->plot = RPE_CURVE_VIEW (rpe_curve_view_new_plot ());
  /* 220 px high (taller in presentation mode, with its text) */
  rpe_curve_view_set_size_hints (self->plot, 200, 220, 360, 220);
  gtk_widget_set_vexpand (GTK_WIDGET (self->plot), FALSE);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->plot),
                               _("Template error: relative Frobenius error of the empirical template P̂ against the analytic P̃, against R (mean over 3 draws); not the attention error of the caption"));
  gtk_box_append (GTK_BOX (self->box), GTK_WIDGET (self->plot));
}

GtkWidget *
rpe_teaching_view_new (RpeExplorerState *state)
{
  RpeTeachingView *self = g_object_new (RPE_TYPE_TEACHING_VIEW, NULL);

  self->state = g_object_ref (state);
  self->changed_id = g_signal_connect (state, "changed", G_CALLBACK (teaching_state_changed), self);
  self->dirty = TRUE;
  teaching_sync_r (self);
  return GTK_WIDGET (self);
}

RpeTeaching *
rpe_teaching_view_get_result (RpeTeachingView *self)
{
  g_return_val_if_fail (RPE_IS_TEACHING_VIEW (self), NULL);
  return self->result;
}

RpeHeatmapView *
rpe_teaching_view_get_heatmap (RpeTeachingView *self,
                               guint            which)
{
  g_return_val_if_fail (RPE_IS_TEACHING_VIEW (self) && which < 3, NULL);
  return self->maps[which];
}

RpeCurveView *
rpe_teaching_view_get_plot (RpeTeachingView *self)
{
  g_return_val_if_fail (RPE_IS_TEACHING_VIEW (self), NULL);
  return self->plot;
}

gboolean
rpe_teaching_view_is_busy (RpeTeachingView *self)
{
  g_return_val_if_fail (RPE_IS_TEACHING_VIEW (self), FALSE);
  return rpe_job_slot_busy (&self->slot);
}

void
rpe_teaching_view_cancel (RpeTeachingView *self)
{
  g_return_if_fail (RPE_IS_TEACHING_VIEW (self));
  rpe_job_slot_cancel (&self->slot);
  rpe_job_bar_set_busy (&self->job, FALSE);
  teaching_update_cap (self);
}

void
rpe_teaching_view_set_n_cap (RpeTeachingView *self,
                             gsize            n_cap)
{
  g_return_if_fail (RPE_IS_TEACHING_VIEW (self));
  self->n_cap = MAX (n_cap, 2);
  teaching_request (self);
}

gsize
rpe_teaching_view_get_n_cap (RpeTeachingView *self)
{
  g_return_val_if_fail (RPE_IS_TEACHING_VIEW (self), 0);
  return self->n_cap;
}

gboolean
rpe_teaching_view_compute_full (RpeTeachingView *self)
{
  g_return_val_if_fail (RPE_IS_TEACHING_VIEW (self), FALSE);
  if (!rpe_job_full_n_allowed (RPE_COMPUTE_JOB_TEACHING, self->state, &self->refusal))
    {
      teaching_update_cap (self);
      return FALSE;
    }
  self->full_next = TRUE;
  self->dirty = FALSE;
  rpe_job_slot_request (&self->slot);
  return TRUE;
}

const char *
rpe_teaching_view_get_cap_text (RpeTeachingView *self)
{
  g_return_val_if_fail (RPE_IS_TEACHING_VIEW (self), NULL);
  return rpe_job_bar_get_cap_text (&self->job);
}

const char *
rpe_teaching_view_get_progress_text (RpeTeachingView *self)
{
  g_return_val_if_fail (RPE_IS_TEACHING_VIEW (self), NULL);
  return gtk_progress_bar_get_text (self->job.progress);
}

/* ========================================================= curves page */

struct _RpeCurvesPage
{
  GtkWidget         parent_instance;

  RpeExplorerState *state;
  gulong            changed_id;
  RpeJobSlot        slot;
  gboolean          dirty;
  RpeCurves        *result;

  GtkWidget        *box;
  GtkLabel         *caption;
  RpeJobBar         job;
  gsize             n_cap;       /* profiles at min (N, n_cap) ... */
  gboolean          full_next;   /* ... unless "Compute at Full N" asked for N */
  char             *refusal;
  RpeCurveView     *plots[4];
};

G_DEFINE_FINAL_TYPE (RpeCurvesPage, rpe_curves_page, GTK_TYPE_WIDGET)

static guint curves_figure_changed;

static void
curves_update_cap (RpeCurvesPage *self)
{
  gsize asked = rpe_explorer_state_get_length (self->state);
  RpeCurves *c = self->result;
  g_autofree char *note = NULL;

  if (self->refusal != NULL)
    note = g_strdup (self->refusal);
  else if (c != NULL && c->n_asked != asked)
    note = g_strdup_printf (rpe_job_slot_busy (&self->slot)
                            ? _("Stale: the profiles shown are for N = %zu; computing for N = %zu…")
                            : _("Stale: the profiles shown are for N = %zu, not N = %zu: cancelled."),
                            c->n, asked);
  if (c != NULL && c->n_asked == asked)
    rpe_cap_bar_set (&self->job.cap, c->n, c->n_asked, note);
  else
    rpe_cap_bar_set (&self->job.cap, 0, 0, note);
}

static void
curves_show (RpeCurvesPage *self,
             RpeCurves     *c)
{
  RpeCurveSeries series[4 * RPE_CURVES_MAX_SERIES];
  RpeCurvePlot plots[4];
  g_autofree char *ntrain = g_strdup_printf (RPE_FIG_N_TRAIN " = %zu", c->n_train);

  g_clear_pointer (&self->result, rpe_curves_unref);
  self->result = rpe_curves_ref (c);
  rpe_curves_fill_plots (c, plots, series, ntrain);
  for (guint i = 0; i < 4; i++)
    rpe_curve_view_set_plot (self->plots[i], &plots[i]);
  gtk_label_set_text (self->caption,
                      _("Profiles of the chosen head, the SPE estimator's error against R "
                        "(2 draws, the head's features), and how each scheme behaves beyond the "
                        "training length (identical content at every position)."));
  curves_update_cap (self);
  g_signal_emit (self, curves_figure_changed, 0);
}

static void
curves_done (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  ViewRef *ref = user_data;
  g_autoptr (RpeCurvesPage) self = g_weak_ref_get (&ref->self);
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeCurves) c = rpe_compute_curves_finish (result, &error);

  view_ref_free (ref);
  if (self == NULL || !rpe_job_slot_done (&self->slot, result))
    return;
  rpe_job_bar_set_busy (&self->job, rpe_job_slot_busy (&self->slot));
  if (c != NULL)
    curves_show (self, c);
  else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    gtk_label_set_text (self->caption, error->message);
  curves_update_cap (self);
}

static void
curves_progress (double   fraction,
                 gpointer user_data)
{
  RpeCurvesPage *self = user_data;

  rpe_job_bar_progress (&self->job, fraction);
}

static void
curves_start (gpointer      owner,
              GCancellable *cancellable)
{
  RpeCurvesPage *self = owner;
  g_autoptr (RpeExplorerSnapshot) s = rpe_explorer_state_snapshot (self->state);
  gsize n_cap = self->full_next ? s->n : self->n_cap;

  self->full_next = FALSE;
  rpe_job_bar_begin (&self->job);
  rpe_compute_curves_async (s, n_cap, curves_progress, self, cancellable, curves_done, view_ref_new (self));
  curves_update_cap (self);
}

static void
curves_full_clicked (GtkButton     *button,
                     RpeCurvesPage *self)
{
  rpe_curves_page_compute_full (self);
}

static void
curves_cancel_clicked (GtkButton     *button,
                       RpeCurvesPage *self)
{
  rpe_curves_page_cancel (self);
}

static void
curves_request (RpeCurvesPage *self)
{
  if (!gtk_widget_get_mapped (GTK_WIDGET (self)))
    {
      self->dirty = TRUE;
      return;
    }
  self->dirty = FALSE;
  rpe_job_slot_request (&self->slot);
}

static void
curves_state_changed (RpeExplorerState  *state,
                      RpeExplorerChange  what,
                      RpeCurvesPage     *self)
{
  if (what & ~(RPE_EXPLORER_CHANGE_LOOK | RPE_EXPLORER_CHANGE_TEMPLATE_KIND
               | RPE_EXPLORER_CHANGE_METHOD | RPE_EXPLORER_CHANGE_CONTENT
               | RPE_EXPLORER_CHANGE_FEATURE_MAP))
    {
      g_clear_pointer (&self->refusal, g_free);
      curves_request (self);
      curves_update_cap (self);
    }
}

static void
curves_map (GtkWidget *widget)
{
  RpeCurvesPage *self = RPE_CURVES_PAGE (widget);

  GTK_WIDGET_CLASS (rpe_curves_page_parent_class)->map (widget);
  if (self->dirty || self->result == NULL)
    curves_request (self);
}

static void
rpe_curves_page_dispose (GObject *object)
{
  RpeCurvesPage *self = RPE_CURVES_PAGE (object);

  rpe_job_slot_clear (&self->slot);
  if (self->state != NULL)
    g_clear_signal_handler (&self->changed_id, self->state);
  g_clear_object (&self->state);
  g_clear_pointer (&self->result, rpe_curves_unref);
  g_clear_pointer (&self->refusal, g_free);
  g_clear_pointer (&self->box, gtk_widget_unparent);
  G_OBJECT_CLASS (rpe_curves_page_parent_class)->dispose (object);
}

static void
rpe_curves_page_class_init (RpeCurvesPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = rpe_curves_page_dispose;
  widget_class->map = curves_map;
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);

  /**
   * RpeCurvesPage::figure-changed:
   *
   * A new result is shown (rpe_curves_page_build_figure has changed).
   */
  curves_figure_changed = g_signal_new ("figure-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                        0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
rpe_curves_page_init (RpeCurvesPage *self)
{
  GtkWidget *grid;

  rpe_job_slot_init (&self->slot, curves_start, self);
  self->n_cap = RPE_COMPUTE_CURVES_N_CAP;
  self->box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  gtk_widget_add_css_class (self->box, "rpe-pane");
  gtk_widget_set_parent (self->box, GTK_WIDGET (self));
  self->caption = GTK_LABEL (caption_label ());
  gtk_box_append (GTK_BOX (self->box), GTK_WIDGET (self->caption));
  rpe_job_bar_init (&self->job, G_CALLBACK (curves_cancel_clicked), G_CALLBACK (curves_full_clicked), self);
  gtk_box_append (GTK_BOX (self->box), self->job.box);
  grid = gtk_grid_new ();
  gtk_grid_set_row_homogeneous (GTK_GRID (grid), TRUE);
  gtk_grid_set_column_homogeneous (GTK_GRID (grid), TRUE);
  gtk_grid_set_row_spacing (GTK_GRID (grid), 6);
  gtk_grid_set_column_spacing (GTK_GRID (grid), 6);
  gtk_widget_set_vexpand (grid, TRUE);
  for (guint i = 0; i < 4; i++)
    {
      self->plots[i] = RPE_CURVE_VIEW (rpe_curve_view_new_plot ());
      gtk_grid_attach (GTK_GRID (grid), GTK_WIDGET (self->plots[i]), i % 2, i / 2, 1, 1);
    }
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->plots[0]), _("Lag profiles P(τ) of the chosen head and feature"));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->plots[1]), _("Estimator error against R, log-log; the slope should be about −1/2"));
  gtk_widget_set_tooltip_markup (GTK_WIDGET (self->plots[2]), _("Mean attended distance per query position, beyond the training length N<sub>train</sub>"));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->plots[3]), _("Translation invariance per query position (Wang et al. 2021)"));
  gtk_box_append (GTK_BOX (self->box), grid);
}

GtkWidget *
rpe_curves_page_new (RpeExplorerState *state)
{
  RpeCurvesPage *self = g_object_new (RPE_TYPE_CURVES_PAGE, NULL);

  self->state = g_object_ref (state);
  self->changed_id = g_signal_connect (state, "changed", G_CALLBACK (curves_state_changed), self);
  self->dirty = TRUE;
  return GTK_WIDGET (self);
}

RpeCurves *
rpe_curves_page_get_result (RpeCurvesPage *self)
{
  g_return_val_if_fail (RPE_IS_CURVES_PAGE (self), NULL);
  return self->result;
}

gboolean
rpe_curves_page_is_busy (RpeCurvesPage *self)
{
  g_return_val_if_fail (RPE_IS_CURVES_PAGE (self), FALSE);
  return rpe_job_slot_busy (&self->slot);
}

void
rpe_curves_page_cancel (RpeCurvesPage *self)
{
  g_return_if_fail (RPE_IS_CURVES_PAGE (self));
  rpe_job_slot_cancel (&self->slot);
  rpe_job_bar_set_busy (&self->job, FALSE);
  curves_update_cap (self);
}

void
rpe_curves_page_set_n_cap (RpeCurvesPage *self,
                           gsize          n_cap)
{
  g_return_if_fail (RPE_IS_CURVES_PAGE (self));
  self->n_cap = MAX (n_cap, 2);
  curves_request (self);
}

gboolean
rpe_curves_page_compute_full (RpeCurvesPage *self)
{
  g_return_val_if_fail (RPE_IS_CURVES_PAGE (self), FALSE);
  if (!rpe_job_full_n_allowed (RPE_COMPUTE_JOB_CURVES, self->state, &self->refusal))
    {
      curves_update_cap (self);
      return FALSE;
    }
  self->full_next = TRUE;
  self->dirty = FALSE;
  rpe_job_slot_request (&self->slot);
  return TRUE;
}

const char *
rpe_curves_page_get_cap_text (RpeCurvesPage *self)
{
  g_return_val_if_fail (RPE_IS_CURVES_PAGE (self), NULL);
  return rpe_job_bar_get_cap_text (&self->job);
}

/* exact | estimate | difference as `rpe export spe-vs-rpe` draws them
 * (app/rpe-cli-export.c): the first two on one linear scale, the difference
 * symmetric on the diverging map. */
/* The figure of t for the snapshot s (any thread). */
static RpeFigureBundle *
teaching_figure (RpeTeaching               *t,
                 const RpeExplorerSnapshot *s,
                 const TeachingLook        *look)
{
  const RpeColormap *cmap = look->cmap;
  RpeFigureBundle *b;
  const float *maps[3];

  if (t == NULL)
    return NULL;
  maps[0] = t->exact;
  maps[1] = t->estimate;
  maps[2] = t->difference;

  b = rpe_figure_bundle_new (RPE_FIGURE_COMPARE);
  rpe_figure_bundle_keep (b, rpe_teaching_ref (t), (GDestroyNotify) rpe_teaching_unref);
  b->fig.n_panels = 3;
  b->fig.share_scale = look->shared;
  for (guint i = 0; i < 3; i++)
    {
      RpeHeatmapData *d = &b->fig.panels[i];

      rpe_heatmap_data_init (d);
      d->values = maps[i];
      d->rows = t->n;
      d->cols = t->n;
      d->colormap = cmap;
      d->reduce = RPE_HEATMAP_REDUCE_MEAN;
      d->equal_aspect = TRUE;
      d->train_length = look->train;
      d->scale = i < 2 ? RPE_HEATMAP_SCALE_LINEAR : RPE_HEATMAP_SCALE_SYMMETRIC;
      d->transform = i < 2 ? look->transform : look->diff_transform;
      d->transform_param = look->param;
    }
  b->fig.panels[2].colormap = rpe_colormap_is_diverging (cmap) ? cmap : rpe_colormap_default_diverging ();
  for (guint i = 0; i < 3; i++)
    {
      b->fig.panels[i].title = rpe_figure_bundle_keep (b, rpe_figure_compare_panel (i, t->r), g_free);
      b->fig.panels[i].colorbar_label = rpe_figure_compare_bar (i);
    }
  b->fig.title = rpe_figure_bundle_keep (b, rpe_figure_compare_title (s->spe_kind == RPE_SPE_SINE, s->gated, t->head,
                                                                      s->causal, t->n), g_free);
  b->has_attention = TRUE;
  b->default_name = g_strdup_printf ("spe-vs-rpe-h%zu", t->head);
  return b;
}

static void
teaching_look (RpeTeachingView *self,
               TeachingLook    *look)
{
  const RpeColormap *cmap = rpe_colormap_lookup (rpe_explorer_state_get_colormap (self->state));
  RpeHeatmapData probe;

  memset (look, 0, sizeof *look);
  look->cmap = cmap != NULL ? cmap : rpe_colormap_default ();
  rpe_heatmap_data_init (&probe);
  rpe_explorer_state_apply_color_scale (self->state, &probe, TRUE);
  look->transform = probe.transform;
  look->param = probe.transform_param;
  rpe_explorer_state_apply_color_scale (self->state, &probe, FALSE);
  look->diff_transform = probe.transform;
  rpe_explorer_state_get_color_scale (self->state, NULL, NULL, &look->shared);
  g_object_get (self->state, "train-length", &look->train, NULL);
}

RpeFigureBundle *
rpe_teaching_view_build_figure (RpeTeachingView *self)
{
  g_autoptr (RpeExplorerSnapshot) s = NULL;
  TeachingLook look;

  g_return_val_if_fail (RPE_IS_TEACHING_VIEW (self), NULL);
  if (self->result == NULL)
    return NULL;
  s = rpe_explorer_state_snapshot (self->state);
  teaching_look (self, &look);
  return teaching_figure (self->result, s, &look);
}

/* An animated sweep of the view: frames computed by rpe_compute_teaching (the code of the
 * view's own job, without the error curve the figure does not show). */
typedef struct
{
  RpeExplorerSnapshot *snapshot;
  TeachingLook         look;
  gsize                n_cap;
} TeachingSweep;

static void
teaching_sweep_free (gpointer p)
{
  TeachingSweep *ts = p;

  rpe_explorer_snapshot_unref (ts->snapshot);
  g_free (ts);
}

static RpeFigureBundle *
teaching_sweep_frame (gpointer        data,
                      RpeSweepParam   param,
                      gint64          value,
                      GCancellable   *cancellable,
                      GError        **error)
{
  TeachingSweep *ts = data;
  g_autoptr (RpeExplorerSnapshot) s = rpe_explorer_snapshot_with_sweep (ts->snapshot, param, value);
  RpeTeaching *t = rpe_compute_teaching (s, ts->n_cap, cancellable, error);
  RpeFigureBundle *b;

  if (t == NULL)
    return NULL;
  b = teaching_figure (t, s, &ts->look);
  rpe_teaching_unref (t);
  return b;
}

void
rpe_teaching_view_setup_sweep (RpeTeachingView *self,
                               RpeExportDialog *dialog)
{
  TeachingSweep *ts;
  RpeExplorerSnapshot *s;

  g_return_if_fail (RPE_IS_TEACHING_VIEW (self));
  s = rpe_explorer_state_snapshot (self->state);
  ts = g_new0 (TeachingSweep, 1);
  ts->snapshot = s;
  teaching_look (self, &ts->look);
  ts->n_cap = self->n_cap;
  rpe_export_dialog_set_sweep (dialog, teaching_sweep_frame, ts, teaching_sweep_free, (gint64) s->r, (gint64) s->n,
                               (gint64) s->seed);
}

RpeFigureBundle *
rpe_curves_page_build_figure (RpeCurvesPage *self)
{
  RpeCurves *c;
  RpeFigureBundle *b;
  RpeCurvePlot *plots;
  RpeCurveSeries *series;
  char *strings[2] = { NULL, NULL };
  guint head = 0;

  g_return_val_if_fail (RPE_IS_CURVES_PAGE (self), NULL);
  c = self->result;
  if (c == NULL)
    return NULL;
  g_object_get (self->state, "head", &head, NULL);
  b = rpe_figure_bundle_new (RPE_FIGURE_CURVES);
  rpe_figure_bundle_keep (b, rpe_curves_ref (c), (GDestroyNotify) rpe_curves_unref);
  plots = rpe_figure_bundle_keep (b, g_new0 (RpeCurvePlot, 4), g_free);
  series = rpe_figure_bundle_keep (b, g_new0 (RpeCurveSeries, 4 * RPE_CURVES_MAX_SERIES), g_free);
  /* the figure `rpe export curves` draws of the same curves (rpe-compute.c) */
  rpe_curves_figure_fill (&b->fig, c, head, plots, series, strings);
  rpe_figure_bundle_keep (b, strings[0], g_free);
  rpe_figure_bundle_keep (b, strings[1], g_free);
  b->default_name = g_strdup ("curves");
  return b;
}

/* rpe-compare-view.c: the Compare page (A | B | A - B). */
#include "config.h"

#include <glib/gi18n.h>

#include "rpe-compare-view.h"

#include <math.h>

#include "rpe-compare-render.h"
#include "rpe-gesture-helper.h"

#define TEMPLATE_N_CAP   1024
#define ATTENTION_SIDE   512

struct _RpeCompareView
{
  GtkBox                parent_instance;

  RpeExplorerState     *state;
  RpeExplorerSnapshot  *pinned;
  char                 *checkpoint;
  RpeJobSlot            slot;
  RpeComparison        *result;
  RpeFigure             fig;
  char                **titles;

  GtkWidget            *area;
  GtkWidget            *status;
  GtkWidget            *progress;
  GtkWidget            *cancel;
  GtkWidget            *b_head_box;
  GtkWidget            *layer_box;
  GtkWidget            *b_method_box;
  GtkWidget            *b_checkpoint_box;
  GtkWidget            *b_checkpoint_label;
  GtkFileChooserNative *chooser;
};

G_DEFINE_FINAL_TYPE (RpeCompareView, rpe_compare_view, GTK_TYPE_BOX)

enum { FIGURE_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void
set_status (RpeCompareView *self,
            const char     *text)
{
  gtk_label_set_text (GTK_LABEL (self->status), text != NULL ? text : "");
}

static guint
state_uint (RpeCompareView *self,
            const char     *name)
{
  guint v = 0;

  g_object_get (self->state, name, &v, NULL);
  return v;
}

static void
rebuild_figure (RpeCompareView *self)
{
  RpeCompareFigureData fd = { { 0 } };
  RpeComparison *c = self->result;
  g_autofree char *cmap = NULL;

  g_clear_pointer (&self->titles, g_strfreev);
  if (c == NULL)
    return;
  g_object_get (self->state, "colormap", &cmap, NULL);
  for (guint i = 0; i < 3; i++)
    fd.values[i] = c->values[i];
  fd.rows = c->rows;
  fd.cols = c->cols;
  fd.n = c->n;
  fd.vmin = c->vmin;
  fd.vmax = c->vmax;
  fd.dmax = c->dmax;
  fd.caption[0] = c->caption[0];
  fd.caption[1] = c->caption[1];
  fd.colormap = cmap != NULL ? rpe_colormap_lookup (cmap) : NULL;
  if (fd.colormap != NULL && rpe_colormap_is_diverging (fd.colormap))
    fd.colormap = NULL;
  fd.attention = c->what == RPE_COMPARE_ATTENTION;
  {
    /* the sidebar's colour scale on A and B (A - B keeps its diverging linear scale) */
    RpeHeatmapData probe;

    rpe_heatmap_data_init (&probe);
    rpe_explorer_state_apply_color_scale (self->state, &probe, fd.attention);
    fd.transform = probe.transform;
    fd.transform_param = probe.transform_param;
  }
  rpe_compare_figure_fill (&self->fig, &fd, &self->titles);
}

static void
progress_cb (double   fraction,
             gpointer user_data)
{
  RpeCompareView *self = user_data;

  gtk_progress_bar_set_fraction (GTK_PROGRESS_BAR (self->progress), fraction);
}

static void
compare_done (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  GWeakRef *ref = user_data;
  g_autoptr (RpeCompareView) self = g_weak_ref_get (ref);
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeComparison) c = rpe_compare_compute_finish (result, &error);

  g_weak_ref_clear (ref);
  g_free (ref);
  if (self == NULL)
    return;
  if (!rpe_job_slot_done (&self->slot, result))
    return;   /* stale or cancelled: a newer request runs or the user cancelled */
  gtk_widget_set_visible (self->progress, FALSE);
  gtk_widget_set_visible (self->cancel, FALSE);
  if (c == NULL)
    {
      g_autofree char *text = g_strdup_printf (_("Cannot compare: %s"), error->message);

      set_status (self, text);
      return;
    }
  g_clear_pointer (&self->result, rpe_comparison_unref);
  self->result = g_steal_pointer (&c);
  rebuild_figure (self);
  {
    g_autofree char *text = g_strdup_printf (_("max |A − B| = %.4g;  A, B on one scale [%.4g, %.4g]"),
                                             self->result->dmax, self->result->vmin, self->result->vmax);

    set_status (self, text);
  }
  gtk_widget_queue_draw (self->area);
  g_signal_emit (self, signals[FIGURE_CHANGED], 0);
}

/* The two sides of the current mode; FALSE (and a message) when they cannot be made. */
static gboolean
make_sides (RpeCompareView      *self,
            RpeExplorerSnapshot *current,
            RpeCompareSide      *a,
            RpeCompareSide      *b,
            RpeCompareWhat       what)
{
  RpeCompareMode mode = state_uint (self, "compare-mode");

  rpe_compare_side_init (a, current);
  rpe_compare_side_init (b, current);
  switch (mode)
    {
    case RPE_COMPARE_PINNED:
      if (self->pinned == NULL)
        self->pinned = rpe_explorer_snapshot_ref (current);
      rpe_compare_side_clear (a);
      rpe_compare_side_init (a, self->pinned);
      a->label = g_strdup (_("pinned"));
      b->label = g_strdup (_("current"));
      return TRUE;
    case RPE_COMPARE_HEAD:
      b->head = state_uint (self, "compare-b-head");
      if ((gsize) b->head >= current->spe.n_heads)
        {
          set_status (self, _("B's head is beyond this module's heads"));
          return FALSE;
        }
      return TRUE;
    case RPE_COMPARE_LAYER:
      if (self->checkpoint == NULL)
        {
          set_status (self, _("Two layers need a checkpoint: open one first"));
          return FALSE;
        }
      a->checkpoint = g_strdup (self->checkpoint);
      b->checkpoint = g_strdup (self->checkpoint);
      a->layer = (int) state_uint (self, "compare-a-layer");
      b->layer = (int) state_uint (self, "compare-b-layer");
      return TRUE;
    case RPE_COMPARE_METHOD:
      if (what == RPE_COMPARE_ATTENTION)
        {
          b->method = state_uint (self, "compare-b-method");
          return TRUE;
        }
      if (self->checkpoint == NULL)
        {
          set_status (self, _("Comparing the sine and conv modules needs a checkpoint that has both"));
          return FALSE;
        }
      b->checkpoint = g_strdup (self->checkpoint);
      b->spe_kind = current->spe_kind == RPE_SPE_SINE ? RPE_SPE_CONV : RPE_SPE_SINE;
      return TRUE;
    case RPE_COMPARE_CHECKPOINT:
      {
        g_autofree char *path = NULL;

        g_object_get (self->state, "compare-b-checkpoint", &path, NULL);
        if (path == NULL || *path == '\0')
          {
            set_status (self, _("Choose B's checkpoint"));
            return FALSE;
          }
        b->checkpoint = g_steal_pointer (&path);
        return TRUE;
      }
    case RPE_COMPARE_OFF:
    case RPE_COMPARE_N_MODES:
    default:
      set_status (self, _("Choose what to compare: pin A and edit, or two heads, layers, methods or checkpoints"));
      return FALSE;
    }
}

static void
job_start (gpointer      owner,
           GCancellable *cancellable)
{
  RpeCompareView *self = owner;
  g_autoptr (RpeExplorerSnapshot) current = rpe_explorer_state_snapshot (self->state);
  RpeCompareWhat what = state_uint (self, "compare-what");
  RpeCompareSide a, b;
  GWeakRef *ref;

  if (!current->have_spe || !make_sides (self, current, &a, &b, what))
    {
      /* nothing to run (make_sides said why): let the slot forget the job */
      if (current->have_spe)
        {
          rpe_compare_side_clear (&a);
          rpe_compare_side_clear (&b);
        }
      rpe_job_slot_cancel (&self->slot);
      return;
    }
  gtk_progress_bar_set_fraction (GTK_PROGRESS_BAR (self->progress), 0.0);
  gtk_widget_set_visible (self->progress, TRUE);
  gtk_widget_set_visible (self->cancel, TRUE);
  set_status (self, _("Computing A and B…"));
  ref = g_new0 (GWeakRef, 1);
  g_weak_ref_init (ref, self);
  rpe_compare_compute_async (&a, &b, what, TEMPLATE_N_CAP, ATTENTION_SIDE, current->serial, progress_cb, self,
                             cancellable, compare_done, ref);
  rpe_compare_side_clear (&a);
  rpe_compare_side_clear (&b);
}

static void
sync_controls (RpeCompareView *self)
{
  RpeCompareMode mode = state_uint (self, "compare-mode");
  RpeCompareWhat what = state_uint (self, "compare-what");
  g_autofree char *path = NULL;

  gtk_widget_set_visible (self->b_head_box, mode == RPE_COMPARE_HEAD);
  gtk_widget_set_visible (self->layer_box, mode == RPE_COMPARE_LAYER);
  gtk_widget_set_visible (self->b_method_box, mode == RPE_COMPARE_METHOD && what == RPE_COMPARE_ATTENTION);
  gtk_widget_set_visible (self->b_checkpoint_box, mode == RPE_COMPARE_CHECKPOINT);
  g_object_get (self->state, "compare-b-checkpoint", &path, NULL);
  {
    g_autofree char *base = path != NULL ? g_path_get_basename (path) : g_strdup (_("(none)"));

    gtk_label_set_text (GTK_LABEL (self->b_checkpoint_label), base);
  }
}

static void
state_changed (RpeExplorerState  *state,
               RpeExplorerChange  what,
               RpeCompareView    *self)
{
  if (what & RPE_EXPLORER_CHANGE_COMPARE)
    sync_controls (self);
  if ((what & ~RPE_EXPLORER_CHANGE_LOOK) == 0)
    {
      rebuild_figure (self);
      gtk_widget_queue_draw (self->area);
      return;
    }
  if (state_uint (self, "compare-mode") == RPE_COMPARE_OFF)
    {
      rpe_job_slot_cancel (&self->slot);
      gtk_widget_set_visible (self->progress, FALSE);
      gtk_widget_set_visible (self->cancel, FALSE);
      set_status (self, _("Choose what to compare: pin A and edit, or two heads, layers, methods or checkpoints"));
      return;
    }
  rpe_job_slot_request (&self->slot);
}

static void
draw_area (GtkDrawingArea *area,
           cairo_t        *cr,
           int             width,
           int             height,
           gpointer        user_data)
{
  RpeCompareView *self = user_data;
  double wpt, hpt, scale;

  if (self->result == NULL || self->titles == NULL)
    return;
  rpe_figure_default_size (&self->fig, &wpt, &hpt);
  scale = fmin ((double) width / wpt, (double) height / hpt);
  if (!(scale > 0.0))
    return;
  cairo_save (cr);
  cairo_translate (cr, floor (((double) width - wpt * scale) / 2.0), floor (((double) height - hpt * scale) / 2.0));
  cairo_scale (cr, scale, scale);
  rpe_figure_render (cr, &self->fig, wpt, hpt);
  cairo_restore (cr);
}

static void
chooser_response (GtkNativeDialog *dialog,
                  int              response,
                  RpeCompareView  *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree char *path = file != NULL ? g_file_get_path (file) : NULL;

      if (path != NULL)
        g_object_set (self->state, "compare-b-checkpoint", path, NULL);
    }
  g_clear_object (&self->chooser);
}

static void
choose_b_checkpoint (GtkButton      *button,
                     RpeCompareView *self)
{
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (self));

  g_clear_object (&self->chooser);
  self->chooser = gtk_file_chooser_native_new (_("B’s Checkpoint"), GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
                                               GTK_FILE_CHOOSER_ACTION_OPEN, _("_Use"), _("_Cancel"));
  g_signal_connect (self->chooser, "response", G_CALLBACK (chooser_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (self->chooser));
}

static void
pin_clicked (GtkButton      *button,
             RpeCompareView *self)
{
  rpe_compare_view_pin (self);
}

static void
cancel_clicked (GtkButton      *button,
                RpeCompareView *self)
{
  rpe_compare_view_cancel (self);
}

static void
rpe_compare_view_dispose (GObject *object)
{
  RpeCompareView *self = RPE_COMPARE_VIEW (object);

  rpe_job_slot_clear (&self->slot);
  if (self->state != NULL)
    g_signal_handlers_disconnect_by_data (self->state, self);
  g_clear_object (&self->state);
  g_clear_object (&self->chooser);
  g_clear_pointer (&self->pinned, rpe_explorer_snapshot_unref);
  g_clear_pointer (&self->result, rpe_comparison_unref);
  g_clear_pointer (&self->titles, g_strfreev);
  g_clear_pointer (&self->checkpoint, g_free);
  G_OBJECT_CLASS (rpe_compare_view_parent_class)->dispose (object);
}

static void
rpe_compare_view_class_init (RpeCompareViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = rpe_compare_view_dispose;
  /**
   * RpeCompareView::figure-changed:
   * A new comparison is shown.
   */
  signals[FIGURE_CHANGED] = g_signal_new ("figure-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
rpe_compare_view_init (RpeCompareView *self)
{
  rpe_job_slot_init (&self->slot, job_start, self);
}

static GtkWidget *
labelled (GtkWidget  *row,
          const char *mnemonic,
          GtkWidget  *widget)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *label = gtk_label_new_with_mnemonic (mnemonic);

  gtk_label_set_mnemonic_widget (GTK_LABEL (label), widget);
  gtk_box_append (GTK_BOX (box), label);
  gtk_box_append (GTK_BOX (box), widget);
  gtk_box_append (GTK_BOX (row), box);
  return box;
}

static GtkWidget *
spin_bound (RpeCompareView *self,
            const char     *property,
            double          hi)
{
  GtkWidget *spin = gtk_spin_button_new_with_range (0, hi, 1);

  g_object_bind_property (self->state, property, gtk_spin_button_get_adjustment (GTK_SPIN_BUTTON (spin)), "value",
                          G_BINDING_SYNC_CREATE | G_BINDING_BIDIRECTIONAL);
  return spin;
}

GtkWidget *
rpe_compare_view_new (RpeExplorerState *state)
{
  const char *modes[] = { _("Off"), _("Pinned A vs current B"), _("Two heads"), _("Two layers"), _("Two methods"),
                          _("Two checkpoints"), NULL };
  const char *whats[] = { _("Templates"), _("Attention"), NULL };
  const char *methods[RPE_EXPLORER_N_METHODS + 1];
  RpeCompareView *self;
  GtkWidget *row, *drop, *button, *spin, *box;

  g_return_val_if_fail (RPE_IS_EXPLORER_STATE (state), NULL);
  for (guint i = 0; i < RPE_EXPLORER_N_METHODS; i++)
    methods[i] = _(rpe_explorer_method_name ((RpeExplorerMethod) i));   /* N_() marked in rpe-window.c */
  methods[RPE_EXPLORER_N_METHODS] = NULL;

  self = g_object_new (RPE_TYPE_COMPARE_VIEW, "orientation", GTK_ORIENTATION_VERTICAL, "spacing", 6, NULL);
  gtk_widget_add_css_class (GTK_WIDGET (self), "rpe-pane");
  self->state = g_object_ref (state);

  row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  gtk_widget_set_margin_start (row, 12);
  gtk_widget_set_margin_end (row, 12);
  gtk_widget_set_margin_top (row, 6);
  drop = gtk_drop_down_new_from_strings (modes);
  gtk_widget_set_tooltip_text (drop, _("What A and B are"));
  g_object_bind_property (state, "compare-mode", drop, "selected", G_BINDING_SYNC_CREATE | G_BINDING_BIDIRECTIONAL);
  labelled (row, _("Co_mpare"), drop);
  drop = gtk_drop_down_new_from_strings (whats);
  gtk_widget_set_tooltip_text (drop, _("The view compared: the template of the current feature, or the attention map"));
  g_object_bind_property (state, "compare-what", drop, "selected", G_BINDING_SYNC_CREATE | G_BINDING_BIDIRECTIONAL);
  labelled (row, _("_Of"), drop);
  button = gtk_button_new_with_mnemonic (_("_Pin A"));
  gtk_widget_set_tooltip_text (button, _("Keep the current state as A, then edit: B is the state after the edit"));
  g_signal_connect (button, "clicked", G_CALLBACK (pin_clicked), self);
  gtk_box_append (GTK_BOX (row), button);

  spin = spin_bound (self, "compare-b-head", 1023);
  self->b_head_box = labelled (row, _("B _head"), spin);
  box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  labelled (box, _("A la_yer"), spin_bound (self, "compare-a-layer", 4095));
  labelled (box, _("B _layer"), spin_bound (self, "compare-b-layer", 4095));
  gtk_box_append (GTK_BOX (row), box);
  self->layer_box = box;
  drop = gtk_drop_down_new_from_strings (methods);
  g_object_bind_property (state, "compare-b-method", drop, "selected", G_BINDING_SYNC_CREATE | G_BINDING_BIDIRECTIONAL);
  self->b_method_box = labelled (row, _("B m_ethod"), drop);
  box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  self->b_checkpoint_label = gtk_label_new (_("(none)"));
  gtk_box_append (GTK_BOX (box), gtk_label_new (_("B:")));
  gtk_box_append (GTK_BOX (box), self->b_checkpoint_label);
  button = gtk_button_new_with_mnemonic (_("_Choose…"));
  gtk_widget_set_tooltip_text (button, _("B: the same module of another checkpoint"));
  g_signal_connect (button, "clicked", G_CALLBACK (choose_b_checkpoint), self);
  gtk_box_append (GTK_BOX (box), button);
  gtk_box_append (GTK_BOX (row), box);
  self->b_checkpoint_box = box;
  gtk_box_append (GTK_BOX (self), row);

  row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  gtk_widget_set_margin_start (row, 12);
  gtk_widget_set_margin_end (row, 12);
  self->status = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (self->status), 0);
  gtk_label_set_ellipsize (GTK_LABEL (self->status), PANGO_ELLIPSIZE_END);
  gtk_widget_set_hexpand (self->status, TRUE);
  gtk_box_append (GTK_BOX (row), self->status);
  self->progress = gtk_progress_bar_new ();
  gtk_widget_set_valign (self->progress, GTK_ALIGN_CENTER);
  gtk_widget_set_visible (self->progress, FALSE);
  gtk_box_append (GTK_BOX (row), self->progress);
  self->cancel = gtk_button_new_with_label (_("Cancel"));
  g_signal_connect (self->cancel, "clicked", G_CALLBACK (cancel_clicked), self);
  gtk_widget_set_visible (self->cancel, FALSE);
  gtk_box_append (GTK_BOX (row), self->cancel);
  gtk_box_append (GTK_BOX (self), row);

  self->area = gtk_drawing_area_new ();
  gtk_widget_set_vexpand (self->area, TRUE);
  gtk_widget_set_hexpand (self->area, TRUE);
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (self->area), draw_area, self, NULL);
  gtk_box_append (GTK_BOX (self), self->area);

  g_signal_connect (state, "changed", G_CALLBACK (state_changed), self);
  sync_controls (self);
  state_changed (state, RPE_EXPLORER_CHANGE_ALL, self);
  return GTK_WIDGET (self);
}

void
rpe_compare_view_set_checkpoint (RpeCompareView *self,
                                 const char     *path)
{
  g_return_if_fail (RPE_IS_COMPARE_VIEW (self));
  if (g_strcmp0 (self->checkpoint, path) == 0)
    return;
  g_free (self->checkpoint);
  self->checkpoint = g_strdup (path);
  if (state_uint (self, "compare-mode") != RPE_COMPARE_OFF)
    rpe_job_slot_request (&self->slot);
}

void
rpe_compare_view_pin (RpeCompareView *self)
{
  g_return_if_fail (RPE_IS_COMPARE_VIEW (self));
  g_clear_pointer (&self->pinned, rpe_explorer_snapshot_unref);
  self->pinned = rpe_explorer_state_snapshot (self->state);
  if (state_uint (self, "compare-mode") != RPE_COMPARE_PINNED)
    g_object_set (self->state, "compare-mode", (guint) RPE_COMPARE_PINNED, NULL);   /* requests */
  else
    rpe_job_slot_request (&self->slot);
}

gboolean
rpe_compare_view_is_busy (RpeCompareView *self)
{
  g_return_val_if_fail (RPE_IS_COMPARE_VIEW (self), FALSE);
  return rpe_job_slot_busy (&self->slot);
}

void
rpe_compare_view_cancel (RpeCompareView *self)
{
  g_return_if_fail (RPE_IS_COMPARE_VIEW (self));
  rpe_job_slot_cancel (&self->slot);
  gtk_widget_set_visible (self->progress, FALSE);
  gtk_widget_set_visible (self->cancel, FALSE);
  set_status (self, _("Cancelled"));
}

RpeComparison *
rpe_compare_view_get_result (RpeCompareView *self)
{
  g_return_val_if_fail (RPE_IS_COMPARE_VIEW (self), NULL);
  return self->result;
}

RpeFigureBundle *
rpe_compare_view_build_figure (RpeCompareView *self)
{
  RpeFigureBundle *bundle;

  g_return_val_if_fail (RPE_IS_COMPARE_VIEW (self), NULL);
  if (self->result == NULL || self->titles == NULL)
    return NULL;
  bundle = rpe_figure_bundle_new (RPE_FIGURE_COMPARE);
  rpe_figure_bundle_keep (bundle, rpe_comparison_ref (self->result), (GDestroyNotify) rpe_comparison_unref);
  bundle->fig = self->fig;
  /* the figure points at self->titles: point it at the bundle's copy */
  {
    char **copy = rpe_figure_bundle_keep (bundle, g_strdupv (self->titles), (GDestroyNotify) g_strfreev);

    for (guint i = 0; i < 3; i++)
      bundle->fig.panels[i].title = copy[i];
    if (self->fig.title == self->titles[3])
      bundle->fig.title = copy[3];
  }
  bundle->has_attention = self->result->what == RPE_COMPARE_ATTENTION;
  bundle->default_name = g_strdup (self->result->what == RPE_COMPARE_ATTENTION ? "compare-attention"
                                                                               : "compare-templates");
  return bundle;
}

/* rpe-compare-view.c: the Compare page (A | B | A - B): its request (the two sides of the mode),
 * its drawing (the figure `rpe export compare-*` writes, at the page's size) and its controls. */
#include "config.h"

#include <glib/gi18n.h>

#include "rpe-compare-view.h"

#include <math.h>

#include "rpe-compare-render.h"

#define TEMPLATE_N_CAP   1024
#define ATTENTION_SIDE   512

struct _RpeCompareView
{
  RpeFigurePage         parent_instance;

  RpeExplorerSnapshot  *pinned;
  char                 *checkpoint;
  RpeFigure             fig;
  char                **titles;

  GtkWidget            *area;
  GtkWidget            *b_head_box;
  GtkWidget            *layer_box;
  GtkWidget            *b_method_box;
  GtkWidget            *b_checkpoint_box;
  GtkWidget            *b_checkpoint_label;
  GtkFileChooserNative *chooser;
};

G_DEFINE_FINAL_TYPE (RpeCompareView, rpe_compare_view, RPE_TYPE_FIGURE_PAGE)

#define CHOOSE_TEXT N_("Choose what to compare: pin A and edit, or two heads, layers, methods or checkpoints")

static RpeExplorerState *
compare_state (RpeCompareView *self)
{
  return rpe_figure_page_get_state (RPE_FIGURE_PAGE (self));
}

static guint
state_uint (RpeCompareView *self,
            const char     *name)
{
  guint v = 0;

  g_object_get (compare_state (self), name, &v, NULL);
  return v;
}

static void
rebuild_figure (RpeCompareView *self)
{
  RpeCompareFigureData fd = { { 0 } };
  RpeComparison *c = rpe_figure_page_get_result (RPE_FIGURE_PAGE (self));
  RpeFigureLook look;

  g_clear_pointer (&self->titles, g_strfreev);
  if (c == NULL)
    return;
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
  fd.attention = c->what == RPE_COMPARE_ATTENTION;
  /* the sidebar's colour map (unless diverging) and scale on A and B (A - B keeps its diverging
   * linear scale) */
  rpe_figure_page_get_look (RPE_FIGURE_PAGE (self), fd.attention, &look);
  fd.colormap = look.diverging == NULL ? look.colormap : NULL;
  fd.transform = look.transform;
  fd.transform_param = look.param;
  rpe_compare_figure_fill (&self->fig, &fd, &self->titles);
}

/* The two sides of the current mode; FALSE (and *why) when they cannot be made. */
static gboolean
make_sides (RpeCompareView      *self,
            RpeExplorerSnapshot *current,
            RpeCompareSide      *a,
            RpeCompareSide      *b,
            RpeCompareWhat       what,
            char               **why)
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
          *why = g_strdup (_("B's head is beyond this module's heads"));
          return FALSE;
        }
      return TRUE;
    case RPE_COMPARE_LAYER:
      if (self->checkpoint == NULL)
        {
          *why = g_strdup (_("Two layers need a checkpoint: open one first"));
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
          *why = g_strdup (_("Comparing the sine and conv modules needs a checkpoint that has both"));
          return FALSE;
        }
      b->checkpoint = g_strdup (self->checkpoint);
      b->spe_kind = current->spe_kind == RPE_SPE_SINE ? RPE_SPE_CONV : RPE_SPE_SINE;
      return TRUE;
    case RPE_COMPARE_CHECKPOINT:
      {
        g_autofree char *path = NULL;

        g_object_get (compare_state (self), "compare-b-checkpoint", &path, NULL);
        if (path == NULL || *path == '\0')
          {
            *why = g_strdup (_("Choose B's checkpoint"));
            return FALSE;
          }
        b->checkpoint = g_steal_pointer (&path);
        return TRUE;
      }
    case RPE_COMPARE_OFF:
    case RPE_COMPARE_N_MODES:
    default:
      *why = g_strdup (_(CHOOSE_TEXT));
      return FALSE;
    }
}

static gboolean
compare_start (RpeFigurePage       *page,
               RpeExplorerSnapshot *current,
               gsize                n_cap,
               GCancellable        *cancellable,
               GAsyncReadyCallback  callback,
               gpointer             user_data,
               char               **why)
{
  RpeCompareView *self = RPE_COMPARE_VIEW (page);
  RpeCompareWhat what = state_uint (self, "compare-what");
  RpeCompareSide a, b;

  if (!current->have_spe)
    {
      *why = g_strdup (_("Comparing needs an SPE module: open a checkpoint with one."));
      return FALSE;
    }
  if (!make_sides (self, current, &a, &b, what, why))
    {
      rpe_compare_side_clear (&a);
      rpe_compare_side_clear (&b);
      return FALSE;
    }
  rpe_figure_page_set_caption (page, _("Computing A and B…"));
  rpe_compare_compute_async (&a, &b, what, TEMPLATE_N_CAP, ATTENTION_SIDE, current->serial,
                             rpe_figure_page_job_progress, page, cancellable, callback, user_data);
  rpe_compare_side_clear (&a);
  rpe_compare_side_clear (&b);
  return TRUE;
}

static gpointer
compare_finish (RpeFigurePage *page,
                GAsyncResult  *result,
                GError       **error)
{
  return rpe_compare_compute_finish (result, error);
}

static void
compare_show (RpeFigurePage *page,
              gpointer       result)
{
  RpeCompareView *self = RPE_COMPARE_VIEW (page);
  RpeComparison *c = result;
  g_autofree char *text = g_strdup_printf (_("max |A − B| = %.4g;  A, B on one scale [%.4g, %.4g]"),
                                           c->dmax, c->vmin, c->vmax);

  rebuild_figure (self);
  rpe_figure_page_set_caption (page, text);
  gtk_widget_queue_draw (self->area);
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
  g_object_get (compare_state (self), "compare-b-checkpoint", &path, NULL);
  {
    g_autofree char *base = path != NULL ? g_path_get_basename (path) : g_strdup (_("(none)"));

    gtk_label_set_text (GTK_LABEL (self->b_checkpoint_label), base);
  }
}

static RpeFigurePageUpdate
compare_state_changed (RpeFigurePage     *page,
                       RpeExplorerChange  what)
{
  RpeCompareView *self = RPE_COMPARE_VIEW (page);

  if (what & RPE_EXPLORER_CHANGE_COMPARE)
    sync_controls (self);
  if ((what & ~RPE_EXPLORER_CHANGE_LOOK) == 0)
    return RPE_FIGURE_PAGE_RESHOW;
  /* anything else may change A or B (mode off: the page says what to choose) */
  return RPE_FIGURE_PAGE_RECOMPUTE;
}

static void
draw_area (GtkDrawingArea *area,
           cairo_t        *cr,
           int             width,
           int             height,
           gpointer        user_data)
{
  RpeCompareView *self = user_data;

  if (rpe_figure_page_get_result (RPE_FIGURE_PAGE (self)) == NULL || self->titles == NULL)
    return;
  rpe_figure_page_draw_figure (cr, &self->fig, width, height);
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
        g_object_set (compare_state (self), "compare-b-checkpoint", path, NULL);
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
rpe_compare_view_dispose (GObject *object)
{
  RpeCompareView *self = RPE_COMPARE_VIEW (object);

  if (self->chooser != NULL)
    {
      gtk_native_dialog_destroy (GTK_NATIVE_DIALOG (self->chooser));
      g_clear_object (&self->chooser);
    }
  g_clear_pointer (&self->pinned, rpe_explorer_snapshot_unref);
  g_clear_pointer (&self->titles, g_strfreev);
  g_clear_pointer (&self->checkpoint, g_free);
  G_OBJECT_CLASS (rpe_compare_view_parent_class)->dispose (object);
}

static RpeFigureBundle *compare_build_figure (RpeFigurePage *page);

static void
rpe_compare_view_class_init (RpeCompareViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  RpeFigurePageClass *page_class = RPE_FIGURE_PAGE_CLASS (klass);

  object_class->dispose = rpe_compare_view_dispose;
  page_class->job_changes = RPE_EXPLORER_CHANGE_ALL & ~RPE_EXPLORER_CHANGE_LOOK;
  page_class->result_free = (GDestroyNotify) rpe_comparison_unref;
  page_class->what = N_("the comparison");
  page_class->state_changed = compare_state_changed;
  page_class->start_job = compare_start;
  page_class->finish_job = compare_finish;
  page_class->show_result = compare_show;
  page_class->build_figure = compare_build_figure;
}

static void
rpe_compare_view_init (RpeCompareView *self)
{
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

  g_object_bind_property (compare_state (self), property, gtk_spin_button_get_adjustment (GTK_SPIN_BUTTON (spin)), "value",
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

  self = g_object_new (RPE_TYPE_COMPARE_VIEW, NULL);
  rpe_figure_page_set_state (RPE_FIGURE_PAGE (self), state);

  row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
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
  rpe_figure_page_add_control (RPE_FIGURE_PAGE (self), row);

  self->area = gtk_drawing_area_new ();
  gtk_widget_set_vexpand (self->area, TRUE);
  gtk_widget_set_hexpand (self->area, TRUE);
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (self->area), draw_area, self, NULL);
  rpe_figure_page_set_content (RPE_FIGURE_PAGE (self), self->area);

  sync_controls (self);
  rpe_figure_page_set_caption (RPE_FIGURE_PAGE (self), _(CHOOSE_TEXT));
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
    rpe_figure_page_request (RPE_FIGURE_PAGE (self));
}

void
rpe_compare_view_pin (RpeCompareView *self)
{
  g_return_if_fail (RPE_IS_COMPARE_VIEW (self));
  g_clear_pointer (&self->pinned, rpe_explorer_snapshot_unref);
  self->pinned = rpe_explorer_state_snapshot (compare_state (self));
  if (state_uint (self, "compare-mode") != RPE_COMPARE_PINNED)
    g_object_set (compare_state (self), "compare-mode", (guint) RPE_COMPARE_PINNED, NULL);   /* requests */
  else
    rpe_figure_page_request (RPE_FIGURE_PAGE (self));
}

RpeComparison *
rpe_compare_view_get_result (RpeCompareView *self)
{
  g_return_val_if_fail (RPE_IS_COMPARE_VIEW (self), NULL);
  return rpe_figure_page_get_result (RPE_FIGURE_PAGE (self));
}

static RpeFigureBundle *
compare_build_figure (RpeFigurePage *page)
{
  RpeCompareView *self = RPE_COMPARE_VIEW (page);
  RpeComparison *c = rpe_figure_page_get_result (page);
  RpeFigureBundle *bundle;

  if (c == NULL || self->titles == NULL)
    return NULL;
  bundle = rpe_figure_bundle_new (RPE_FIGURE_COMPARE);
  rpe_figure_bundle_keep (bundle, rpe_comparison_ref (c), (GDestroyNotify) rpe_comparison_unref);
  bundle->fig = self->fig;
  /* the figure points at self->titles: point it at the bundle's copy */
  {
    char **copy = rpe_figure_bundle_keep (bundle, g_strdupv (self->titles), (GDestroyNotify) g_strfreev);

    for (guint i = 0; i < 3; i++)
      bundle->fig.panels[i].title = copy[i];
    if (self->fig.title == self->titles[3])
      bundle->fig.title = copy[3];
  }
  bundle->has_attention = c->what == RPE_COMPARE_ATTENTION;
  bundle->default_name = g_strdup (c->what == RPE_COMPARE_ATTENTION ? "compare-attention" : "compare-templates");
  return bundle;
}

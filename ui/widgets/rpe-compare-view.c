/* rpe-compare-view.c: the Compare page (A | B | A - B): its request (the two sides of the mode),
 * its drawing (the figure `rpe export compare-*` writes, at the page's size) and its controls.
 *
 * B's capture (modes "Two captures" and "Two checkpoints", attention): the current capture, a
 * shipped demo's or a file.  A file is opened on a worker; a file the reader refuses changes
 * nothing (the caption says why).  The opened capture is kept by path, so that a session that
 * names one opens it once. */
#include "config.h"

#include <glib/gi18n.h>

#include "rpe-compare-view.h"

#include <math.h>

#include "rpe-compare-render.h"
#include "rpe-demos.h"

#define TEMPLATE_N_CAP   1024
#define ATTENTION_SIDE   512

struct _RpeCompareView
{
  RpeFigurePage         parent_instance;

  RpeExplorerSnapshot  *pinned;
  char                 *checkpoint;

  GtkWidget            *b_head_box;
  GtkWidget            *layer_box;
  GtkWidget            *b_method_box;
  GtkWidget            *b_checkpoint_box;
  GtkWidget            *b_checkpoint_label;
  GtkFileChooserNative *chooser;

  GtkWidget            *b_capture_box;
  GtkWidget            *b_capture_drop;
  GtkWidget            *capture_layer_box;
  GtkStringList        *b_capture_items; /* "Current capture", demo:NAME..., the file (if any) */
  char                **demos;
  guint                 n_demos;
  char                 *b_file; /* the file that is the list's last item (NULL: none) */
  gboolean              syncing;
  GtkFileChooserNative *capture_chooser;
  /* the capture opened for a path (the last one asked for) */
  char               *b_path;
  RpeExplorerCapture *b_capture;
  char               *b_error;    /* why b_path could not be opened */
  GCancellable       *b_open;     /* opening b_path (NULL: not) */
  gboolean            b_choosing; /* the open comes from the chooser: set the property on success */
};

G_DEFINE_FINAL_TYPE (RpeCompareView, rpe_compare_view, RPE_TYPE_FIGURE_PAGE)

#define CHOOSE_TEXT \
  N_("Choose what to compare: pin A and edit, or two heads, layers, methods, checkpoints or captures")

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

/* compare-b-capture, NULL when empty (the current capture). */
static char *
b_capture_spec (RpeCompareView *self)
{
  g_autofree char *spec = NULL;

  g_object_get (compare_state (self), "compare-b-capture", &spec, NULL);
  return spec != NULL && *spec != '\0' ? g_steal_pointer (&spec) : NULL;
}

static void sync_capture_list (RpeCompareView *self);

static void
capture_open_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  RpeCompareView *self = RPE_COMPARE_VIEW (source);
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeExplorerCapture) capture = g_task_propagate_pointer (G_TASK (result), &error);
  const char *path = g_task_get_task_data (G_TASK (result));
  gboolean    choosing = self->b_choosing;

  /* a later open replaced this one */
  if (g_task_get_cancellable (G_TASK (result)) != self->b_open)
    return;
  g_clear_object (&self->b_open);
  self->b_choosing = FALSE;
  /* chosen in "Two captures": checked against the current model and module before it is taken */
  if (capture != NULL && choosing && state_uint (self, "compare-mode") == RPE_COMPARE_CAPTURE)
    {
      guint             layer = state_uint (self, "compare-b-layer");
      RpeExplorerState *state = compare_state (self);
      guint             kind = state_uint (self, "spe-kind");

      if (!rpe_capture_has_layer (capture->capture, layer))
        layer = rpe_capture_layer (capture->capture, 0);
      if (!rpe_explorer_capture_check (capture, layer, rpe_explorer_state_get_model_print (state),
                                       rpe_explorer_state_get_params (state, kind), &error))
        g_clear_pointer (&capture, rpe_explorer_capture_unref);
    }
  if (capture == NULL && choosing)
    {
      g_autofree char *base = g_filename_display_basename (path);
      g_autofree char *text =
        g_strdup_printf (_("Could not use the capture %s as B: %s. Nothing was changed."), base, error->message);

      rpe_figure_page_set_caption (RPE_FIGURE_PAGE (self), text);
      return;
    }
  g_free (self->b_path);
  self->b_path = g_strdup (path);
  g_clear_pointer (&self->b_capture, rpe_explorer_capture_unref);
  g_clear_pointer (&self->b_error, g_free);
  if (capture != NULL)
    self->b_capture = g_steal_pointer (&capture);
  else
    self->b_error = g_strdup (error->message);
  if (choosing)
    {
      g_free (self->b_file);
      self->b_file = rpe_demos_is_spec (path) ? NULL : g_strdup (path);
      sync_capture_list (self);
      g_object_set (compare_state (self), "compare-b-capture", path, NULL); /* requests */
    }
  else
    rpe_figure_page_request (RPE_FIGURE_PAGE (self));
}

static void
capture_open (RpeCompareView *self, const char *path, gboolean choosing)
{
  g_autoptr (GTask) task = NULL;

  if (self->b_open != NULL)
    g_cancellable_cancel (self->b_open);
  g_clear_object (&self->b_open);
  self->b_open = g_cancellable_new ();
  self->b_choosing = choosing;
  task = g_task_new (self, self->b_open, capture_open_done, NULL);
  g_task_set_task_data (task, g_strdup (path), g_free);
  g_task_run_in_thread (task, rpe_explorer_capture_open_in_task);
}

/* B's capture: *capture (a new reference; NULL: the current capture), or FALSE and *why while it
 * is opened or when it cannot be. */
static gboolean
b_capture_get (RpeCompareView *self, RpeExplorerCapture **capture, char **why)
{
  g_autofree char *spec = b_capture_spec (self);

  *capture = NULL;
  if (spec == NULL)
    return TRUE;
  if (g_strcmp0 (spec, self->b_path) == 0 && (self->b_capture != NULL || self->b_error != NULL))
    {
      if (self->b_error != NULL)
        {
          g_autofree char *base = g_filename_display_basename (spec);

          *why = g_strdup_printf (_("Could not open B’s capture %s: %s"), base, self->b_error);
          return FALSE;
        }
      *capture = rpe_explorer_capture_ref (self->b_capture);
      return TRUE;
    }
  /* a capture being chosen sets the property when it is open: wait for it */
  if (self->b_open == NULL || (!self->b_choosing && g_strcmp0 (spec, self->b_path) != 0))
    {
      g_free (self->b_path);
      self->b_path = g_strdup (spec);
      g_clear_pointer (&self->b_capture, rpe_explorer_capture_unref);
      g_clear_pointer (&self->b_error, g_free);
      capture_open (self, spec, FALSE);
    }
  *why = g_strdup (_("Opening B’s capture…"));
  return FALSE;
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
        if (what == RPE_COMPARE_ATTENTION)
          {
            if (!b_capture_get (self, &b->capture, why))
              return FALSE;
            /* B's capture at A's captured layer, under that layer of B's model */
            if (b->capture != NULL)
              b->layer = b->capture_layer = (int) state_uint (self, "capture-layer");
          }
        return TRUE;
      }
    case RPE_COMPARE_CAPTURE:
      {
        RpeExplorerState *state = compare_state (self);
        RpeModelPrint    *print = rpe_explorer_state_get_model_print (state);

        if (what != RPE_COMPARE_ATTENTION)
          {
            *why = g_strdup (_("Templates do not depend on the content: compare two captures in the attention"));
            return FALSE;
          }
        if (!b_capture_get (self, &b->capture, why))
          return FALSE;
        if (b->capture == NULL)
          {
            if (rpe_explorer_state_get_capture (state) == NULL)
              {
                *why = g_strdup (_("Open a capture, or choose B’s capture"));
                return FALSE;
              }
            b->capture = rpe_explorer_capture_ref (rpe_explorer_state_get_capture (state));
          }
        /* B: layer L of the model (when a checkpoint is open) on layer L of B's capture */
        b->capture_layer = (int) state_uint (self, "compare-b-layer");
        if (self->checkpoint != NULL)
          {
            b->checkpoint = g_strdup (self->checkpoint);
            b->layer = b->capture_layer;
          }
        else if (print != NULL)
          b->model_print = rpe_model_print_ref (print);
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
  RpeComparison *c = result;
  g_autofree char *text = g_strdup_printf (_("max |A − B| = %.4g;  A, B on one scale [%.4g, %.4g]"),
                                           c->dmax, c->vmin, c->vmax);

  rpe_figure_page_set_caption (page, text);
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
  gtk_widget_set_visible (self->b_capture_box, what == RPE_COMPARE_ATTENTION
                                                 && (mode == RPE_COMPARE_CAPTURE || mode == RPE_COMPARE_CHECKPOINT));
  gtk_widget_set_visible (self->capture_layer_box, what == RPE_COMPARE_ATTENTION && mode == RPE_COMPARE_CAPTURE);
  sync_capture_list (self);
  g_object_get (compare_state (self), "compare-b-checkpoint", &path, NULL);
  {
    g_autofree char *base = path != NULL ? g_path_get_basename (path) : g_strdup (_("(none)"));

    gtk_label_set_text (GTK_LABEL (self->b_checkpoint_label), base);
  }
}

/* The list shows compare-b-capture: "Current capture", a demo's, or the file (its last item). */
static void
sync_capture_list (RpeCompareView *self)
{
  g_autofree char *spec = b_capture_spec (self);
  guint            n_fixed = 1 + self->n_demos, selected = 0;
  guint            n_items = g_list_model_get_n_items (G_LIST_MODEL (self->b_capture_items));

  if (spec != NULL && !rpe_demos_is_spec (spec) && g_strcmp0 (spec, self->b_file) != 0)
    {
      g_free (self->b_file);
      self->b_file = g_strdup (spec);
    }
  self->syncing = TRUE;
  if (self->b_file != NULL)
    {
      g_autofree char *base = g_filename_display_basename (self->b_file);
      const char      *item[] = { base, NULL };

      gtk_string_list_splice (self->b_capture_items, n_fixed, n_items - n_fixed, item);
    }
  else if (n_items > n_fixed)
    gtk_string_list_splice (self->b_capture_items, n_fixed, n_items - n_fixed, NULL);
  if (spec != NULL)
    {
      selected = n_fixed;
      for (guint i = 0; i < self->n_demos; i++)
        if (g_str_has_prefix (spec, "demo:") && g_str_equal (spec + 5, self->demos[i]))
          selected = 1 + i;
    }
  gtk_drop_down_set_selected (GTK_DROP_DOWN (self->b_capture_drop), selected);
  self->syncing = FALSE;
}

static void
capture_selected (GtkDropDown *drop, GParamSpec *pspec, RpeCompareView *self)
{
  guint            i = gtk_drop_down_get_selected (drop);
  g_autofree char *spec = NULL;

  if (self->syncing || i == GTK_INVALID_LIST_POSITION)
    return;
  if (i == 0)
    spec = g_strdup ("");
  else if (i <= self->n_demos)
    spec = g_strdup_printf ("demo:%s", self->demos[i - 1]);
  else if (self->b_file != NULL)
    spec = g_strdup (self->b_file);
  if (spec != NULL)
    g_object_set (compare_state (self), "compare-b-capture", spec, NULL);
}

static void
capture_chooser_response (GtkNativeDialog *dialog, int response, RpeCompareView *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree char *path = file != NULL ? g_file_get_path (file) : NULL;

      if (path != NULL)
        rpe_compare_view_choose_b_capture (self, path);
    }
  g_clear_object (&self->capture_chooser);
}

static void
choose_b_capture_file (GtkButton *button, RpeCompareView *self)
{
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (self));
  g_autoptr (GtkFileFilter) filter = gtk_file_filter_new ();

  g_clear_object (&self->capture_chooser);
  self->capture_chooser =
    gtk_file_chooser_native_new (_("B’s Capture"), GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
                                 GTK_FILE_CHOOSER_ACTION_OPEN, _("_Use"), _("_Cancel"));
  gtk_file_filter_set_name (filter, _("Captures (.npz)"));
  gtk_file_filter_add_pattern (filter, "*.npz");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (self->capture_chooser), filter);
  g_signal_connect (self->capture_chooser, "response", G_CALLBACK (capture_chooser_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (self->capture_chooser));
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
  if (self->capture_chooser != NULL)
    {
      gtk_native_dialog_destroy (GTK_NATIVE_DIALOG (self->capture_chooser));
      g_clear_object (&self->capture_chooser);
    }
  if (self->b_open != NULL)
    g_cancellable_cancel (self->b_open);
  g_clear_object (&self->b_open);
  g_clear_pointer (&self->b_capture, rpe_explorer_capture_unref);
  g_clear_pointer (&self->b_path, g_free);
  g_clear_pointer (&self->b_error, g_free);
  g_clear_pointer (&self->b_file, g_free);
  g_clear_pointer (&self->demos, g_strfreev);
  g_clear_pointer (&self->pinned, rpe_explorer_snapshot_unref);
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
  const char     *modes[] = { _("Off"),         _("Pinned A vs current B"), _("Two heads"),    _("Two layers"),
                              _("Two methods"), _("Two checkpoints"),       _("Two captures"), NULL };
  const char *whats[] = { _("Templates"), _("Attention"), NULL };
  const char *methods[RPE_EXPLORER_N_METHODS + 1];
  RpeCompareView *self;
  GtkWidget *row, *drop, *button, *spin, *box, *area;

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
  /* B's capture: the current one, a demo's or a file */
  self->demos = rpe_demos_list ();
  self->n_demos = g_strv_length (self->demos);
  self->b_capture_items = gtk_string_list_new (NULL);
  gtk_string_list_append (self->b_capture_items, _("Current capture"));
  for (guint i = 0; i < self->n_demos; i++)
    {
      g_autofree char *item = g_strdup_printf ("demo:%s", self->demos[i]);

      gtk_string_list_append (self->b_capture_items, item);
    }
  self->b_capture_drop = gtk_drop_down_new (G_LIST_MODEL (self->b_capture_items), NULL);
  gtk_widget_set_tooltip_text (self->b_capture_drop,
                               _("B’s input: the current capture (another layer of it), a trained demo’s capture or "
                                 "a capture file"));
  g_signal_connect (self->b_capture_drop, "notify::selected", G_CALLBACK (capture_selected), self);
  box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  labelled (box, _("B ca_pture"), self->b_capture_drop);
  button = gtk_button_new_with_mnemonic (_("Capture _File…"));
  gtk_widget_set_tooltip_text (button, _("B: a capture file (.npz) of tools/rpe_capture.py"));
  g_signal_connect (button, "clicked", G_CALLBACK (choose_b_capture_file), self);
  gtk_box_append (GTK_BOX (box), button);
  gtk_box_append (GTK_BOX (row), box);
  self->b_capture_box = box;
  self->capture_layer_box = labelled (row, _("B captured la_yer"), spin_bound (self, "compare-b-layer", 4095));
  rpe_figure_page_add_control (RPE_FIGURE_PAGE (self), row);

  /* the figure `rpe export compare-*` writes, laid out at the page's size */
  area = rpe_figure_view_new ();
  rpe_figure_page_set_content (RPE_FIGURE_PAGE (self), area);
  rpe_figure_page_set_figure_view (RPE_FIGURE_PAGE (self), RPE_FIGURE_VIEW (area));

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
rpe_compare_view_choose_b_capture (RpeCompareView *self, const char *path)
{
  g_return_if_fail (RPE_IS_COMPARE_VIEW (self));
  g_return_if_fail (path != NULL);
  capture_open (self, path, TRUE);
}

gboolean
rpe_compare_view_is_opening_capture (RpeCompareView *self)
{
  g_return_val_if_fail (RPE_IS_COMPARE_VIEW (self), FALSE);
  return self->b_open != NULL;
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

/* The figure `rpe export compare-*` draws of the comparison, in the state's colours. */
static RpeFigureBundle *
compare_build_figure (RpeFigurePage *page)
{
  RpeComparison *c = rpe_figure_page_get_result (page);
  RpeCompareFigureData fd = { { 0 } };
  RpeFigureBundle *bundle;
  RpeFigureLook look;
  char **titles = NULL;

  if (c == NULL)
    return NULL;
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
  rpe_figure_page_get_look (page, fd.attention, &look);
  fd.colormap = look.diverging == NULL ? look.colormap : NULL;
  fd.transform = look.transform;
  fd.transform_param = look.param;
  bundle = rpe_figure_bundle_new (RPE_FIGURE_COMPARE);
  rpe_figure_bundle_keep (bundle, rpe_comparison_ref (c), (GDestroyNotify) rpe_comparison_unref);
  /* the figure points at the titles: the bundle keeps them */
  rpe_compare_figure_fill (&bundle->fig, &fd, &titles);
  rpe_figure_bundle_keep (bundle, titles, (GDestroyNotify) g_strfreev);
  bundle->has_attention = fd.attention;
  bundle->default_name = g_strdup (fd.attention ? "compare-attention" : "compare-templates");
  return bundle;
}

/* rpe-outputs-view.c: the Outputs view: its request (the values and the comparison), its drawing
 * (the export's figure, scaled) and its controls. */
#include "config.h"

#include "rpe-outputs-view.h"

#include <math.h>
#include <string.h>

#include <glib/gi18n.h>

#include "rpe-colormap.h"
#include "rpe-outputs-render.h"

#define MAX_CHANNELS 64

/* What changes the outputs (the colour map only redraws). */
#define OUTPUTS_CHANGES (RPE_EXPLORER_CHANGE_SPE_KIND | RPE_EXPLORER_CHANGE_SPE_PARAMS | RPE_EXPLORER_CHANGE_GATE  \
                         | RPE_EXPLORER_CHANGE_LENGTH | RPE_EXPLORER_CHANGE_REALIZATIONS | RPE_EXPLORER_CHANGE_SEED \
                         | RPE_EXPLORER_CHANGE_HEAD | RPE_EXPLORER_CHANGE_CAUSAL | RPE_EXPLORER_CHANGE_GATED       \
                         | RPE_EXPLORER_CHANGE_FEATURE_MAP | RPE_EXPLORER_CHANGE_CONTENT                           \
                         | RPE_EXPLORER_CHANGE_TRAIN_LENGTH | RPE_EXPLORER_CHANGE_MODULES)

struct _RpeOutputsView
{
  RpeFigurePage         parent_instance;

  RpeOutputsRequest     request;
  char                 *npy_path;
  gsize                 channel;
  gboolean              updating;

  GtkDropDown          *values_drop;
  GtkStringList        *values_list;   /* the generated kinds, then "Captured values (layer l)" when
                                       * the content is a captured layer with values */
  gboolean              have_captured; /* that last item is in the list */
  GtkSpinButton        *channels_spin;
  GtkEntry             *positions_entry;
  GtkDropDown          *compare_drop;
  GtkSpinButton        *channel_spin;
  GtkCheckButton       *draws_check;
  GtkFileChooserNative *chooser;
};

G_DEFINE_FINAL_TYPE (RpeOutputsView, rpe_outputs_view, RPE_TYPE_FIGURE_PAGE)

static RpeOutputsResult *
outputs_result (RpeOutputsView *self)
{
  return rpe_figure_page_get_result (RPE_FIGURE_PAGE (self));
}

/* ---------------------------------------------------------------- figure */

static RpeOutputsFigure *
new_figure (RpeOutputsView   *self,
            RpeOutputsResult *result)
{
  RpeOutputsFigureOptions fo = { 0 };
  RpeFigureLook look;

  /* the state's scale as it is (rpe_explorer_state_get_color_scale): the renderer applies it */
  rpe_figure_page_get_look (RPE_FIGURE_PAGE (self), TRUE, &look);
  fo.channel = self->channel;
  fo.colormap = rpe_colormap_lookup (rpe_explorer_state_get_colormap (rpe_figure_page_get_state (RPE_FIGURE_PAGE (self))));
  fo.method = result->method == RPE_SPE_SINE ? "sine" : "conv";
  fo.feature_map = rpe_feature_map_name (result->feature_map);
  fo.transform = look.transform;
  fo.transform_param = look.param;
  fo.per_panel = !look.shared;
  return rpe_outputs_figure_new (&result->outputs, &fo, NULL);
}

static void
outputs_show (RpeFigurePage *page,
              gpointer       value)
{
  RpeOutputsView *self = RPE_OUTPUTS_VIEW (page);
  RpeOutputsResult *result = value;
  const RpeOutputs *o = &result->outputs;
  g_autofree char *text = NULL;
  g_autofree char *split = NULL;
  g_autofree char *mean = NULL;

  self->updating = TRUE;
  gtk_spin_button_set_range (self->channel_spin, 0, (double) (o->dv - 1));
  self->updating = FALSE;
  self->channel = MIN (self->channel, o->dv - 1);
  if (o->train_length > 0 && o->train_length < o->n)
    split = g_strdup_printf (_("; before N<sub>train</sub> %.3g, from N<sub>train</sub> %.3g"), o->error_before,
                             o->error_after);
  /* one draw is that draw: its mean is itself */
  mean = o->n_draws > 1 ? g_strdup_printf (_("; the mean of %zu draws is off by %.3g"), o->n_draws, o->error_of_mean)
                        : NULL;
  text = g_strdup_printf (o->compare == RPE_OUTPUTS_KERNEL
                          ? _("Head %zu, N = %zu, R = %zu, Dv = %zu: L̂ V (SPE logits) estimates L V (exact logits) "
                              "without bias, so its error falls like 1/√R. Relative error %.3g (first draw, seed "
                              "%llu)%s%s.")
                          : _("Head %zu, N = %zu, R = %zu, Dv = %zu: SPE linear attention against exact softmax "
                              "attention (two different models: the gap does not vanish as R grows). Relative "
                              "error %.3g (first draw, seed %llu)%s%s."),
                          o->head, o->n, o->r, o->dv, o->error, (unsigned long long) o->seed, split != NULL ? split : "",
                          mean != NULL ? mean : "");
  rpe_figure_page_set_caption_markup (page, text);
}

static gboolean
outputs_start (RpeFigurePage       *page,
               RpeExplorerSnapshot *snapshot,
               gsize                n_cap,
               GCancellable        *cancellable,
               GAsyncReadyCallback  callback,
               gpointer             user_data,
               char               **why)
{
  RpeOutputsView *self = RPE_OUTPUTS_VIEW (page);

  self->request.npy_path = self->npy_path;
  rpe_compute_outputs_async (snapshot, &self->request, rpe_figure_page_job_progress, page, cancellable, callback,
                             user_data);
  return TRUE;
}

static gpointer
outputs_finish (RpeFigurePage *page,
                GAsyncResult  *result,
                GError       **error)
{
  return rpe_compute_outputs_finish (result, error);
}

static void
outputs_result_size (RpeFigurePage *page,
                     gconstpointer  result,
                     gsize         *n,
                     gsize         *n_asked)
{
  const RpeOutputsResult *r = result;

  *n = r->outputs.n;
  *n_asked = r->outputs.n;
}

static RpeFigureBundle *
outputs_build_figure (RpeFigurePage *page)
{
  RpeOutputsView *self = RPE_OUTPUTS_VIEW (page);
  RpeFigureBundle *bundle;
  RpeOutputsFigure *fig;

  fig = new_figure (self, outputs_result (self));
  if (fig == NULL)
    return NULL;
  bundle = rpe_figure_bundle_new (RPE_FIGURE_COMPARE);
  rpe_figure_bundle_keep (bundle, rpe_outputs_result_ref (outputs_result (self)),
                          (GDestroyNotify) rpe_outputs_result_unref);
  rpe_figure_bundle_keep (bundle, fig, (GDestroyNotify) rpe_outputs_figure_free);
  bundle->fig = *rpe_outputs_figure_get (fig);
  bundle->default_name = g_strdup_printf ("outputs-h%zu", outputs_result (self)->outputs.head);
  return bundle;
}

/* -------------------------------------------------------------- controls */

static void
values_changed (GtkDropDown    *drop,
                GParamSpec     *pspec,
                RpeOutputsView *self);

/* The item of the drop-down that shows the request. */
static guint
values_item (RpeOutputsView *self)
{
  return self->request.captured && self->have_captured ? RPE_VALUES_N_KINDS : (guint) self->request.kind;
}

static void
chooser_response (GtkNativeDialog *dialog,
                  int              response,
                  RpeOutputsView  *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree char *path = file != NULL ? g_file_get_path (file) : NULL;

      if (path != NULL)
        rpe_outputs_view_set_npy (self, path);
    }
  else if (self->npy_path == NULL)
    {
      /* no file: back to the previous kind */
      self->updating = TRUE;
      gtk_drop_down_set_selected (self->values_drop, values_item (self));
      self->updating = FALSE;
    }
  g_clear_object (&self->chooser);
}

static void
open_npy (RpeOutputsView *self)
{
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (self));
  GtkFileFilter *filter;

  if (self->chooser != NULL)
    return;
  self->chooser = gtk_file_chooser_native_new (_("Load Values V"), GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
                                               GTK_FILE_CHOOSER_ACTION_OPEN, _("_Open"), _("_Cancel"));
  filter = gtk_file_filter_new ();
  gtk_file_filter_set_name (filter, _("NumPy arrays (N, Dv) or (N, H, Dv)"));
  gtk_file_filter_add_pattern (filter, "*.npy");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (self->chooser), filter);
  g_object_unref (filter);
  g_signal_connect (self->chooser, "response", G_CALLBACK (chooser_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (self->chooser));
}

static void
values_changed (GtkDropDown    *drop,
                GParamSpec     *pspec,
                RpeOutputsView *self)
{
  guint kind = gtk_drop_down_get_selected (drop);

  if (self->updating)
    return;
  if (kind == RPE_VALUES_N_KINDS)
    {
      rpe_outputs_view_set_captured (self);
      return;
    }
  if (kind > RPE_VALUES_N_KINDS)
    return;
  if (kind == RPE_VALUES_ARRAY)
    {
      open_npy (self);
      return;
    }
  rpe_outputs_view_set_values (self, kind, (gsize) gtk_spin_button_get_value_as_int (self->channels_spin));
}

static void
channels_changed (GtkSpinButton  *spin,
                  RpeOutputsView *self)
{
  if (!self->updating && self->request.kind != RPE_VALUES_ARRAY && !self->request.captured)
    rpe_outputs_view_set_values (self, self->request.kind, (gsize) gtk_spin_button_get_value_as_int (spin));
}

static void
positions_changed (GtkEditable    *editable,
                   RpeOutputsView *self)
{
  if (self->updating)
    return;
  if (rpe_outputs_view_set_positions (self, gtk_editable_get_text (editable)))
    gtk_widget_remove_css_class (GTK_WIDGET (editable), "error");
  else
    gtk_widget_add_css_class (GTK_WIDGET (editable), "error");
}

static void
compare_changed (GtkDropDown    *drop,
                 GParamSpec     *pspec,
                 RpeOutputsView *self)
{
  if (!self->updating)
    rpe_outputs_view_set_compare (self, gtk_drop_down_get_selected (drop));
}

static void
channel_changed (GtkSpinButton  *spin,
                 RpeOutputsView *self)
{
  if (!self->updating)
    rpe_outputs_view_set_channel (self, (gsize) gtk_spin_button_get_value_as_int (spin));
}

static void
draws_toggled (GtkCheckButton *check,
               RpeOutputsView *self)
{
  if (!self->updating)
    rpe_outputs_view_set_several_draws (self, gtk_check_button_get_active (check));
}

/* The captured layer with values the state's content is (its layer), or FALSE. */
static gboolean
captured_values_layer (RpeOutputsView *self, guint *layer)
{
  RpeExplorerState   *state = rpe_figure_page_get_state (RPE_FIGURE_PAGE (self));
  RpeExplorerCapture *capture = state != NULL ? rpe_explorer_state_get_capture (state) : NULL;
  guint               content = RPE_CONTENT_UNIT;

  if (capture == NULL)
    return FALSE;
  g_object_get (state, "content", &content, "capture-layer", layer, NULL);
  return content == RPE_CONTENT_CAPTURE && rpe_capture_get (capture->capture, *layer, RPE_CAPTURE_VALUES) != NULL
         && rpe_explorer_state_check_capture (state, capture, *layer, NULL);
}

/* The drop-down's last item follows the content: "Captured values (layer l)" while it is a
 * captured layer with values (chosen when they appear, as the capture's queries and keys are
 * drawn with them); when they go, the generated kind chosen before is used again. */
static void
sync_captured (RpeOutputsView *self)
{
  guint    layer = 0;
  gboolean have = captured_values_layer (self, &layer);
  gboolean appeared = have && !self->have_captured;

  g_autofree char *item = NULL;

  self->updating = TRUE;
  if (have)
    /* TRANSLATORS: an item of the Outputs view's Values menu: the values V a capture recorded */
    item = g_strdup_printf (_("Captured values (layer %u)"), layer);
  if (self->have_captured
      && (!have || g_strcmp0 (gtk_string_list_get_string (self->values_list, RPE_VALUES_N_KINDS), item) != 0))
    {
      const char *items[] = { item, NULL };

      /* the item changes (another layer) or goes */
      gtk_drop_down_set_selected (self->values_drop, self->request.kind);
      gtk_string_list_splice (self->values_list, RPE_VALUES_N_KINDS, 1, have ? items : NULL);
    }
  else if (!self->have_captured && have)
    gtk_string_list_append (self->values_list, item);
  self->have_captured = have;
  if (appeared)
    self->request.captured = TRUE;
  if (!have)
    self->request.captured = FALSE;
  gtk_drop_down_set_selected (self->values_drop, values_item (self));
  gtk_widget_set_sensitive (GTK_WIDGET (self->channels_spin),
                            !self->request.captured && self->request.kind != RPE_VALUES_ARRAY);
  gtk_widget_set_sensitive (GTK_WIDGET (self->positions_entry),
                            !self->request.captured && self->request.kind == RPE_VALUES_IMPULSE);
  self->updating = FALSE;
}

static RpeFigurePageUpdate
outputs_state_changed (RpeFigurePage *page, RpeExplorerChange what)
{
  if (what & (RPE_EXPLORER_CHANGE_CONTENT | RPE_EXPLORER_CHANGE_MODULES | RPE_EXPLORER_CHANGE_SPE_KIND))
    sync_captured (RPE_OUTPUTS_VIEW (page));
  return RPE_FIGURE_PAGE_CLASS (rpe_outputs_view_parent_class)->state_changed (page, what);
}

/* ----------------------------------------------------------------- class */

static void
rpe_outputs_view_dispose (GObject *object)
{
  RpeOutputsView *self = RPE_OUTPUTS_VIEW (object);

  if (self->chooser != NULL)
    {
      gtk_native_dialog_destroy (GTK_NATIVE_DIALOG (self->chooser));
      g_clear_object (&self->chooser);
    }
  g_clear_pointer (&self->npy_path, g_free);
  g_clear_object (&self->values_list);
  G_OBJECT_CLASS (rpe_outputs_view_parent_class)->dispose (object);
}

static void
rpe_outputs_view_class_init (RpeOutputsViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  RpeFigurePageClass *page_class = RPE_FIGURE_PAGE_CLASS (klass);

  object_class->dispose = rpe_outputs_view_dispose;
  page_class->state_changed = outputs_state_changed;
  page_class->job_changes = OUTPUTS_CHANGES;
  page_class->result_free = (GDestroyNotify) rpe_outputs_result_unref;
  page_class->what = N_("the outputs");
  page_class->start_job = outputs_start;
  page_class->finish_job = outputs_finish;
  page_class->show_result = outputs_show;
  page_class->result_size = outputs_result_size;
  page_class->build_figure = outputs_build_figure;
}

/* The controls wrap onto more lines when the window is narrow (a row of them would set
 * the window's minimum width). */
static void
flow_append (GtkWidget *flow,
             GtkWidget *child)
{
  gtk_flow_box_append (GTK_FLOW_BOX (flow), child);
  gtk_widget_set_focusable (gtk_widget_get_parent (child), FALSE);
}

static GtkWidget *
labelled (GtkWidget  *row,
          const char *mnemonic,
          GtkWidget  *widget)
{
  GtkWidget *label = gtk_label_new_with_mnemonic (mnemonic);
  GtkWidget *pair = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);

  gtk_label_set_mnemonic_widget (GTK_LABEL (label), widget);
  gtk_box_append (GTK_BOX (pair), label);
  gtk_box_append (GTK_BOX (pair), widget);
  flow_append (row, pair);
  return widget;
}

static void
rpe_outputs_view_init (RpeOutputsView *self)
{
  const char *values[] = { _("One impulse per channel"), _("Sine sweep"), _("Seeded noise"), _("From a .npy file…"), NULL };
  GtkWidget  *drop;
  const char *compares[] = { _("Softmax vs SPE linear"), _("L V vs L̂ V (unbiased)"), NULL };
  GtkWidget *row, *area;

  self->request.kind = RPE_VALUES_IMPULSE;
  self->request.dv = 4;
  self->request.compare = RPE_OUTPUTS_SOFTMAX;
  self->request.n_draws = 1;

  row = gtk_flow_box_new ();
  gtk_flow_box_set_selection_mode (GTK_FLOW_BOX (row), GTK_SELECTION_NONE);
  gtk_flow_box_set_max_children_per_line (GTK_FLOW_BOX (row), 8);
  gtk_flow_box_set_column_spacing (GTK_FLOW_BOX (row), 12);
  gtk_flow_box_set_row_spacing (GTK_FLOW_BOX (row), 4);
  self->values_list = gtk_string_list_new (values);
  drop = gtk_drop_down_new (G_LIST_MODEL (g_object_ref (self->values_list)), NULL);
  self->values_drop = GTK_DROP_DOWN (labelled (row, _("_Values"), drop));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->values_drop), _("The values V the attention is applied to"));
  g_signal_connect (self->values_drop, "notify::selected", G_CALLBACK (values_changed), self);
  self->channels_spin = GTK_SPIN_BUTTON (labelled (row, _("C_hannels"),
                                                   gtk_spin_button_new_with_range (1, MAX_CHANNELS, 1)));
  gtk_spin_button_set_value (self->channels_spin, 4);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->channels_spin), _("Channels Dv of the generated values"));
  g_signal_connect (self->channels_spin, "value-changed", G_CALLBACK (channels_changed), self);
  self->positions_entry = GTK_ENTRY (labelled (row, _("_Impulses at"), gtk_entry_new ()));
  gtk_entry_set_placeholder_text (self->positions_entry, _("spread evenly"));
  gtk_editable_set_width_chars (GTK_EDITABLE (self->positions_entry), 12);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->positions_entry),
                               _("Positions of the impulses, comma-separated (channel c uses item c modulo their number)"));
  g_signal_connect (self->positions_entry, "changed", G_CALLBACK (positions_changed), self);
  self->compare_drop = GTK_DROP_DOWN (labelled (row, _("C_ompare"), gtk_drop_down_new_from_strings (compares)));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->compare_drop),
                               _("Softmax: exact softmax attention against SPE linear attention with the feature map "
                                 "(different models). L V vs L̂ V: the logits times V, exact against SPE, linear and "
                                 "unbiased: the error falls like 1/√R"));
  g_signal_connect (self->compare_drop, "notify::selected", G_CALLBACK (compare_changed), self);
  self->channel_spin = GTK_SPIN_BUTTON (labelled (row, _("_Plot channel"),
                                                  gtk_spin_button_new_with_range (0, 3, 1)));
  g_signal_connect (self->channel_spin, "value-changed", G_CALLBACK (channel_changed), self);
  self->draws_check = GTK_CHECK_BUTTON (gtk_check_button_new_with_mnemonic (_("Several _draws")));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->draws_check),
                               _("Average the error over 16 draws of the noise (seeds seed … seed + 15), with a band"));
  g_signal_connect (self->draws_check, "toggled", G_CALLBACK (draws_toggled), self);
  flow_append (row, GTK_WIDGET (self->draws_check));
  gtk_widget_set_hexpand (row, TRUE);
  rpe_figure_page_add_control (RPE_FIGURE_PAGE (self), row);
  /* the caption says two errors and why they differ */
  rpe_figure_page_set_caption_lines (RPE_FIGURE_PAGE (self), 3);

  /* the figure `rpe export outputs` writes, laid out at the view's size */
  area = rpe_figure_view_new ();
  rpe_figure_page_set_content (RPE_FIGURE_PAGE (self), area);
  rpe_figure_page_set_figure_view (RPE_FIGURE_PAGE (self), RPE_FIGURE_VIEW (area));
}

/* ---------------------------------------------------------------- public */

GtkWidget *
rpe_outputs_view_new (RpeExplorerState *state)
{
  RpeOutputsView *self = g_object_new (RPE_TYPE_OUTPUTS_VIEW, NULL);

  rpe_figure_page_set_state (RPE_FIGURE_PAGE (self), state);
  sync_captured (self);
  return GTK_WIDGET (self);
}

RpeOutputsResult *
rpe_outputs_view_get_result (RpeOutputsView *self)
{
  g_return_val_if_fail (RPE_IS_OUTPUTS_VIEW (self), NULL);
  return outputs_result (self);
}

void
rpe_outputs_view_set_values (RpeOutputsView *self,
                             RpeValuesKind   kind,
                             gsize           channels)
{
  g_return_if_fail (RPE_IS_OUTPUTS_VIEW (self));
  g_return_if_fail (kind < RPE_VALUES_N_KINDS);
  if (kind == RPE_VALUES_ARRAY && self->npy_path == NULL)
    return;
  self->request.kind = kind;
  self->request.captured = FALSE;
  self->request.dv = CLAMP (channels, 1, MAX_CHANNELS);
  self->updating = TRUE;
  gtk_drop_down_set_selected (self->values_drop, kind);
  gtk_spin_button_set_value (self->channels_spin, (double) self->request.dv);
  gtk_widget_set_sensitive (GTK_WIDGET (self->channels_spin), kind != RPE_VALUES_ARRAY);
  gtk_widget_set_sensitive (GTK_WIDGET (self->positions_entry), kind == RPE_VALUES_IMPULSE);
  self->updating = FALSE;
  rpe_figure_page_request (RPE_FIGURE_PAGE (self));
}

gboolean
rpe_outputs_view_set_captured (RpeOutputsView *self)
{
  g_return_val_if_fail (RPE_IS_OUTPUTS_VIEW (self), FALSE);
  sync_captured (self);
  if (!self->have_captured)
    return FALSE;
  self->request.captured = TRUE;
  self->updating = TRUE;
  gtk_drop_down_set_selected (self->values_drop, values_item (self));
  gtk_widget_set_sensitive (GTK_WIDGET (self->channels_spin), FALSE);
  gtk_widget_set_sensitive (GTK_WIDGET (self->positions_entry), FALSE);
  self->updating = FALSE;
  rpe_figure_page_request (RPE_FIGURE_PAGE (self));
  return TRUE;
}

gboolean
rpe_outputs_view_get_captured (RpeOutputsView *self)
{
  g_return_val_if_fail (RPE_IS_OUTPUTS_VIEW (self), FALSE);
  return self->request.captured;
}

gboolean
rpe_outputs_view_set_positions (RpeOutputsView *self,
                                const char     *text)
{
  g_auto (GStrv) parts = NULL;
  gsize pos[RPE_OUTPUTS_MAX_POSITIONS], n = 0;

  g_return_val_if_fail (RPE_IS_OUTPUTS_VIEW (self), FALSE);
  if (text != NULL && *text != '\0')
    {
      parts = g_strsplit (text, ",", -1);
      for (guint i = 0; parts[i] != NULL; i++)
        {
          guint64 v;

          g_strstrip (parts[i]);
          if (parts[i][0] == '\0' && parts[i + 1] == NULL && n > 0)
            break;   /* a trailing comma while typing */
          if (n >= RPE_OUTPUTS_MAX_POSITIONS || !g_ascii_string_to_unsigned (parts[i], 10, 0, RPE_EXPLORER_MAX_LENGTH - 1, &v, NULL))
            return FALSE;
          pos[n++] = (gsize) v;
        }
    }
  memcpy (self->request.positions, pos, n * sizeof pos[0]);
  self->request.n_positions = n;
  if (g_strcmp0 (gtk_editable_get_text (GTK_EDITABLE (self->positions_entry)), text != NULL ? text : "") != 0)
    {
      self->updating = TRUE;
      gtk_editable_set_text (GTK_EDITABLE (self->positions_entry), text != NULL ? text : "");
      gtk_widget_remove_css_class (GTK_WIDGET (self->positions_entry), "error");
      self->updating = FALSE;
    }
  if (self->request.kind == RPE_VALUES_IMPULSE)
    rpe_figure_page_request (RPE_FIGURE_PAGE (self));
  return TRUE;
}

void
rpe_outputs_view_set_npy (RpeOutputsView *self,
                          const char     *path)
{
  g_return_if_fail (RPE_IS_OUTPUTS_VIEW (self));
  g_return_if_fail (path != NULL);
  g_free (self->npy_path);
  self->npy_path = g_strdup (path);
  rpe_outputs_view_set_values (self, RPE_VALUES_ARRAY, self->request.dv);
}

void
rpe_outputs_view_set_compare (RpeOutputsView    *self,
                              RpeOutputsCompare  compare)
{
  g_return_if_fail (RPE_IS_OUTPUTS_VIEW (self));
  g_return_if_fail (compare < RPE_OUTPUTS_N_COMPARES);
  self->request.compare = compare;
  self->updating = TRUE;
  gtk_drop_down_set_selected (self->compare_drop, compare);
  self->updating = FALSE;
  rpe_figure_page_request (RPE_FIGURE_PAGE (self));
}

void
rpe_outputs_view_set_several_draws (RpeOutputsView *self,
                                    gboolean        several)
{
  g_return_if_fail (RPE_IS_OUTPUTS_VIEW (self));
  self->request.n_draws = several ? RPE_OUTPUTS_SEVERAL_DRAWS : 1;
  self->updating = TRUE;
  gtk_check_button_set_active (self->draws_check, several);
  self->updating = FALSE;
  rpe_figure_page_request (RPE_FIGURE_PAGE (self));
}

void
rpe_outputs_view_set_channel (RpeOutputsView *self,
                              gsize           channel)
{
  g_return_if_fail (RPE_IS_OUTPUTS_VIEW (self));
  self->channel = outputs_result (self) != NULL ? MIN (channel, outputs_result (self)->outputs.dv - 1) : channel;
  self->updating = TRUE;
  gtk_spin_button_set_value (self->channel_spin, (double) self->channel);
  self->updating = FALSE;
  rpe_figure_page_figure_changed (RPE_FIGURE_PAGE (self));
}

void
rpe_outputs_view_store (RpeOutputsView    *self,
                        RpeSessionOutputs *out)
{
  g_autoptr (GString) positions = g_string_new (NULL);

  g_return_if_fail (RPE_IS_OUTPUTS_VIEW (self));
  g_return_if_fail (out != NULL);
  g_free (out->positions);
  g_free (out->values_path);
  g_free (out->values_sha256);
  memset (out, 0, sizeof *out);
  for (gsize i = 0; i < self->request.n_positions; i++)
    g_string_append_printf (positions, "%s%zu", i > 0 ? "," : "", self->request.positions[i]);
  out->have = TRUE;
  out->values = self->request.kind;
  out->channels = (guint) self->request.dv;
  out->positions = g_string_free (g_steal_pointer (&positions), FALSE);
  out->compare = self->request.compare;
  out->channel = (guint) self->channel;
  out->several_draws = self->request.n_draws > 1;
  out->values_path = self->request.kind == RPE_VALUES_ARRAY ? g_strdup (self->npy_path) : NULL;
  out->captured = self->request.captured && self->have_captured;
}

gboolean
rpe_outputs_view_restore (RpeOutputsView          *self,
                          const RpeSessionOutputs *outputs)
{
  g_return_val_if_fail (RPE_IS_OUTPUTS_VIEW (self), FALSE);
  g_return_val_if_fail (outputs != NULL, FALSE);
  if (!outputs->have)
    return TRUE;
  if (outputs->values >= RPE_VALUES_N_KINDS || outputs->compare >= RPE_OUTPUTS_N_COMPARES
      || outputs->channels < 1 || outputs->channels > MAX_CHANNELS
      || (outputs->values == RPE_VALUES_ARRAY && outputs->values_path == NULL))
    return FALSE;
  {
    /* the positions first, on a copy of the request: malformed ones change nothing */
    RpeOutputsRequest saved = self->request;

    if (!rpe_outputs_view_set_positions (self, outputs->positions))
      {
        self->request = saved;
        return FALSE;
      }
  }
  if (outputs->values_path != NULL)
    {
      g_free (self->npy_path);
      self->npy_path = g_strdup (outputs->values_path);
    }
  rpe_outputs_view_set_compare (self, outputs->compare);
  rpe_outputs_view_set_several_draws (self, outputs->several_draws);
  rpe_outputs_view_set_values (self, outputs->values, outputs->channels);
  /* the captured values, when the restored content has them (else the kind above) */
  if (outputs->captured)
    rpe_outputs_view_set_captured (self);
  rpe_outputs_view_set_channel (self, outputs->channel);
  return TRUE;
}

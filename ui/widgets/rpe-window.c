/* rpe-window.c: the main window: the explorer state, the four views, the
 * sidebar of live controls, loading the demo and checkpoints, settings. */
#include "config.h"

#include "rpe-toast-queue.h"
#include "rpe-window-private.h"

#include <glib/gi18n.h>

#include <math.h>
#include <string.h>

#include "rpe-blas-notice.h"
#include "rpe-checkpoint.h"
#include "rpe-demos.h"
#include "rpe-error.h"
#include "rpe-file.h"
#include "rpe-gesture-helper.h"
#include "rpe-spectrum-editor.h"
#include "rpe-stem-editor.h"
#include "rpe-tour-bar.h"
#include "rpe-window-remedy.h"

G_DEFINE_FINAL_TYPE (RpeWindow, rpe_window, ADW_TYPE_APPLICATION_WINDOW)

/* Parameters drawn when the demo cannot be loaded. */
#define FALLBACK_HEADS     4
#define FALLBACK_FEATURES  16
#define FALLBACK_SINES     5
#define FALLBACK_KERNEL    12

static const char *view_names[RPE_WINDOW_N_VIEWS] = { "templates", "attention", "curves", "teaching", "outputs" };

/* The label of a checkpoint's trained LRPE module among the sidebar's choices. */
#define LRPE_FROM_CHECKPOINT N_("checkpoint %s, module “%s”")

/* Whether an LRPE choice's label is a checkpoint's (its text before the file name). */
static gboolean
lrpe_from_checkpoint (const char *source)
{
  const char *format = _(LRPE_FROM_CHECKPOINT);
  const char *field = strchr (format, '%');

  return source != NULL && field != NULL && strncmp (source, format, (gsize) (field - format)) == 0;
}

/* ---------------------------------------------------------------- messages */

void
_rpe_window_show_message (RpeWindow  *self,
                          const char *text)
{
  g_free (self->message);
  /* messages quote names and paths from files: no control character or
   * invalid UTF-8 reaches the banner */
  self->message = text != NULL ? rpe_escape_message (text) : NULL;
  gtk_label_set_text (self->message_label, self->message != NULL ? self->message : "");
  gtk_revealer_set_reveal_child (self->message_revealer, text != NULL);
}

/* ----------------------------------------------------------------- loading */

static char *
load_demo (RpeWindow *self)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) bytes = NULL;
  g_autoptr (RpeTensorSet) set = NULL;
  g_autoptr (GPtrArray) modules = NULL;
  RpeSpeParams params[2] = { { 0 }, { 0 } };
  char *names[2] = { NULL, NULL };
  gboolean have[2] = { FALSE, FALSE };
  gboolean from_demo[2] = { FALSE, FALSE };
  GString *why = g_string_new (NULL);

  bytes = g_resources_lookup_data (RPE_DEMO_RESOURCE, G_RESOURCE_LOOKUP_FLAGS_NONE, &error);
  if (bytes != NULL)
    set = rpe_checkpoint_read_bytes (bytes, "demo.safetensors", &error);
  if (set == NULL)
    {
      g_string_append_printf (why, _("The demo checkpoint could not be read: %s"),
                              error != NULL ? error->message : _("unknown error"));
      return g_string_free (why, FALSE);
    }
  modules = rpe_checkpoint_find_modules (set);
  for (guint i = 0; modules != NULL && i < modules->len; i++)
    {
      const RpeSpeModuleInfo *info = g_ptr_array_index (modules, i);
      g_autoptr (GError) load_error = NULL;

      if (have[info->method])
        continue;
      if (!rpe_checkpoint_load_spe (set, info->prefix, -1, &params[info->method], &load_error))
        {
          if (why->len > 0)
            g_string_append_c (why, '\n');
          g_string_append_printf (why, _("The demo's %s module could not be loaded: %s"),
                                  info->prefix, load_error->message);
          continue;
        }
      have[info->method] = TRUE;
      names[info->method] = g_strdup_printf (_("demo module “%s”"), info->prefix);
      from_demo[info->method] = TRUE;
    }
  /* a random stand-in for a missing module */
  for (guint m = 0; m < 2; m++)
    if (!have[m])
      {
        RpeStatus status = rpe_spe_params_init (&params[m], m, FALLBACK_HEADS, FALLBACK_FEATURES,
                                                m == RPE_SPE_SINE ? FALLBACK_SINES : FALLBACK_KERNEL, TRUE);

        if (status == RPE_OK)
          status = rpe_spe_params_random (&params[m], 1 + m);
        if (status == RPE_OK)
          {
            have[m] = TRUE;
            names[m] = g_strdup (_("random parameters"));
            if (why->len > 0)
              g_string_append_c (why, '\n');
            g_string_append (why, m == RPE_SPE_SINE ? _("Showing random sine parameters instead.")
                                                    : _("Showing random conv parameters instead."));
          }
      }
  rpe_explorer_state_set_modules (self->state, have[0] ? &params[0] : NULL, names[0],
                                  have[1] ? &params[1] : NULL, names[1], NULL);
  self->from_demo = from_demo[0] && from_demo[1];
  /* `rpe export --checkpoint demo` reads the same embedded file */
  _rpe_window_set_source (self, from_demo[0] ? "demo" : NULL, NULL, -1, NULL);
  rpe_spe_params_clear (&params[0]);
  rpe_spe_params_clear (&params[1]);
  g_free (names[0]);
  g_free (names[1]);
  if (why->len == 0)
    {
      g_string_free (why, TRUE);
      return NULL;
    }
  return g_string_free (why, FALSE);
}

/* The checkpoint's LRPE modules become the sidebar's trained choices (the first is used), and
 * a single FastRPB module's weights are loaded; a file with nothing else shows that method. */
static void
offer_trained_modules (RpeWindow *self, RpeCheckpointData *data, const char *base, RpeExplorerTrained *held)
{
  g_autoptr (GPtrArray) trained = g_ptr_array_new_with_free_func ((GDestroyNotify) rpe_lrpe_trained_free);
  g_autoptr (GPtrArray) labels = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; data->lrpe_modules != NULL && i < data->lrpe_modules->len; i++)
    {
      const RpeLrpeModuleInfo *m = g_ptr_array_index (data->lrpe_modules, i);
      g_autoptr (GError) error = NULL;
      char *label = g_strdup_printf (_(LRPE_FROM_CHECKPOINT), base, m->prefix[0] != '\0' ? m->prefix : _("(top)"));
      RpeLrpeTrained *t = rpe_lrpe_trained_new (m->v, m->theta, m->permutation, label, &error);

      if (t == NULL)
        {
          rpe_toast_queue_add (self->toasts, adw_toast_new (error->message));
          g_free (label);
          continue;
        }
      g_ptr_array_add (trained, t);
      g_ptr_array_add (labels, label);
    }
  if (trained->len > 0)
    {
      g_ptr_array_add (labels, NULL);
      _rpe_window_set_lrpe_choices (self, trained, (const char **) labels->pdata, TRUE, TRUE);
    }
  if (data->fastrpb_modules != NULL && data->fastrpb_modules->len >= 1)
    {
      /* the editor's central taps start from the first module's (editing them draws the edit) */
      const RpeFastrpbModuleInfo *m = g_ptr_array_index (data->fastrpb_modules, 0);
      g_autoptr (GError) error = NULL;

      if (!_rpe_window_set_fastrpb_tensor (self, m->w, &error))
        rpe_toast_queue_add (self->toasts, adw_toast_new (error->message));
    }
  /* every FastRPB bias in full and the learned APE: drawn for every head and layer */
  rpe_explorer_state_set_trained (self->state, held);
  if (!data->have_sine && !data->have_conv
      && (trained->len > 0 || data->fastrpb_modules->len > 0 || (held != NULL && held->ape != NULL)))
    g_object_set (self->state, "method",
                  trained->len > 0                 ? RPE_EXPLORER_METHOD_LRPE
                  : data->fastrpb_modules->len > 0 ? RPE_EXPLORER_METHOD_FASTRPB
                                                   : RPE_EXPLORER_METHOD_APE,
                  NULL);
  if (data->have_conv2d)
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *source = g_strdup_printf (_("%s module “%s” (2-D convSPE, L = %zu × %zu)"), base,
                                                 data->conv2d_prefix, data->conv2d.kernel, data->conv2d.kernel_cols);

      if (!rpe_explorer_state_set_conv2d (self->state, &data->conv2d, source, &error))
        rpe_toast_queue_add (self->toasts, adw_toast_new (error->message));
      else
        {
          /* a gated module shows its gated templates, as the CLI does */
          if (!data->have_sine && !data->have_conv)
            g_object_set (self->state, "gated", data->conv2d.gate != NULL, NULL);
          gtk_widget_activate_action (GTK_WIDGET (self), "win.grid", NULL);
        }
    }
}

/* The model's (H, D) for its trained FastRPB biases and learned APE: the SPE module's, a demo's
 * metadata, the FastRPB bias's H (D = the learned APE's width / H, else 64), else one head of the
 * learned APE's width. */
static void
model_shape (RpeCheckpointData *data, gsize *H, gsize *D)
{
  const RpeSpeParams *p = data->have_sine ? &data->sine : data->have_conv ? &data->conv : NULL;
  const RpeTensor    *ape = NULL;

  *H = *D = 0;
  if (p != NULL)
    {
      *H = p->n_heads;
      *D = p->n_features;
      return;
    }
  if (rpe_demos_model_shape (data->path, H, D))
    return;
  for (gsize i = 0; i < rpe_tensor_set_size (data->set); i++)
    {
      const RpeTensor *t = rpe_tensor_set_get (data->set, i);

      if ((g_str_equal (t->name, "ape.weight") || g_str_has_suffix (t->name, ".ape.weight")) && t->ndim == 2)
        ape = t;
    }
  if (data->fastrpb_modules != NULL && data->fastrpb_modules->len > 0)
    {
      const RpeFastrpbModuleInfo *m = g_ptr_array_index (data->fastrpb_modules, 0);

      *H = m->n_heads;
      *D = ape != NULL && m->n_heads > 0 && ape->shape[1] % m->n_heads == 0 ? ape->shape[1] / m->n_heads : 64;
      return;
    }
  *H = 1;
  *D = ape != NULL ? ape->shape[1] : 64;
}

/* The checkpoint's trained FastRPB biases and learned APE (NULL: none; a malformed one is said in
 * a toast and dropped); with LRPE modules alone, a set that carries the model's shape. */
static RpeExplorerTrained *
trained_modules (RpeWindow *self, RpeCheckpointData *data, const char *base)
{
  g_autoptr (GError) error = NULL;
  RpeExplorerTrained *t;
  gsize               H, D;

  model_shape (data, &H, &D);
  t = rpe_explorer_trained_from_set (data->set, H, D, base, &error);
  if (t == NULL && error != NULL)
    {
      g_autofree char *text = g_strdup_printf (_("The trained modules of %s are not used: %s"), base, error->message);

      rpe_toast_queue_add (self->toasts, adw_toast_new (text));
      return NULL;
    }
  if (t == NULL && !data->have_sine && !data->have_conv && data->lrpe_modules != NULL && data->lrpe_modules->len > 0)
    t = rpe_explorer_trained_new (H, D, base, NULL);
  return t;
}

/* Whether the window made a choice for the person: several modules of one kind (a sine and a
 * conv module are the sidebar's "SPE module"), a module of several layers, several gates.  The
 * 2-D module (the grid window's) is no choice. */
static gboolean
has_module_choice (RpeCheckpointData *data)
{
  guint per_kind[2] = { 0, 0 };

  for (guint i = 0; i < data->modules->len; i++)
    {
      const RpeSpeModuleInfo *info = g_ptr_array_index (data->modules, i);

      if (info->method == RPE_SPE_CONV && info->size2 > 0)
        continue;
      if (++per_kind[info->method == RPE_SPE_SINE ? 0 : 1] > 1)
        return TRUE;
      if ((info->layers != NULL && info->layers->len > 1) || (info->gates != NULL && info->gates->len > 1))
        return TRUE;
    }
  return FALSE;
}

gboolean
_rpe_window_use_checkpoint (RpeWindow         *self,
                            RpeCheckpointData *data,
                            gboolean           announce)
{
  g_autofree char *base = g_path_get_basename (data->path);
  g_autofree char *display = g_filename_display_name (base);
  /* what the main views can show: an SPE module, LRPE or FastRPB modules (a 2-D module goes to
   * the grid window, and the views keep what they showed) */
  g_autoptr (RpeExplorerTrained) held = trained_modules (self, data, base);
  gboolean for_views = data->have_sine || data->have_conv || data->lrpe_modules->len > 0
                       || data->fastrpb_modules->len > 0 || (held != NULL && held->ape != NULL);
  AdwToast *toast;

  if (!for_views && !data->have_conv2d)
    {
      g_autofree char *text = g_strdup_printf (_("No SPE, LRPE or FastRPB module was recognised in “%s”: assign roles to "
                                                 "its tensors in Checkpoint Contents. The previous parameters are kept."),
                                               base);

      _rpe_window_show_message (self, text);
      g_clear_pointer (&self->checkpoint, rpe_checkpoint_data_unref);
      self->checkpoint = rpe_checkpoint_data_ref (data);
      gtk_widget_activate_action (GTK_WIDGET (self), "win.browse-tensors", NULL);
      return FALSE;
    }
  if (data->have_sine || data->have_conv)
    {
      g_autofree char *sine_src = data->have_sine ? g_strdup_printf (_("%s module “%s”"), base, data->sine_prefix) : NULL;
      g_autofree char *conv_src = data->have_conv ? g_strdup_printf (_("%s module “%s”"), base, data->conv_prefix) : NULL;
      g_autoptr (GError) set_error = NULL;

      if (!rpe_explorer_state_set_modules (self->state, data->have_sine ? &data->sine : NULL, sine_src,
                                           data->have_conv ? &data->conv : NULL, conv_src, &set_error))
        {
          g_autofree char *text = g_strdup_printf (_("Could not use the checkpoint: %s"), set_error->message);

          _rpe_window_show_message (self, text);
          return FALSE;
        }
    }
  if (for_views)
    {
      _rpe_window_compare_opened (self, data);
      _rpe_window_set_source (self, data->path, NULL, -1, NULL);
      /* a capture is then checked against this model's tensors */
      rpe_explorer_state_set_model_print (self->state, data->print);
    }
  if (data->have_sine || data->have_conv)
    {
      self->from_demo = FALSE;
      if (data->have_sine != data->have_conv)
        g_object_set (self->state, "spe-kind", data->have_sine ? RPE_SPE_SINE : RPE_SPE_CONV, NULL);
      /* a gated checkpoint shows its gated templates, as the CLI does */
      g_object_set (self->state, "gated", (data->have_sine && data->sine.gate != NULL)
                                          || (data->have_conv && data->conv.gate != NULL), NULL);
    }
  _rpe_window_show_message (self, NULL);
  offer_trained_modules (self, data, base, held);
  g_clear_pointer (&self->checkpoint, rpe_checkpoint_data_unref);
  self->checkpoint = rpe_checkpoint_data_ref (data);
  if (announce)
    {
      g_autofree char *uri = g_path_is_absolute (data->path) ? g_filename_to_uri (data->path, NULL, NULL) : NULL;

      if (uri != NULL)
        gtk_recent_manager_add_item (gtk_recent_manager_get_default (), uri);
      _rpe_window_update_recent_menu (self);
    }
  if (!for_views)
    {
      /* the 2-D module is in its own window; the title names what the views show */
      toast = adw_toast_new_format (_("Opened %s: its 2-D convSPE module is in the 2-D window"), display);
      adw_toast_set_button_label (toast, _("_Show"));
      adw_toast_set_action_name (toast, "win.grid");
      adw_toast_set_timeout (toast, 10);
      rpe_toast_queue_add (self->toasts, toast);
      return TRUE;
    }
  if (has_module_choice (data))
    {
      /* Several modules or layers: say which is shown and offer Checkpoint Contents to pick
       * another (a toast, not a modal dialog: the window stays usable, Ctrl+1..7 and all). */
      toast = adw_toast_new_format (_("Opened %s: it has several modules or layers; the first is shown"), display);
      adw_toast_set_button_label (toast, _("Contents…"));
      adw_toast_set_action_name (toast, "win.browse-tensors");
      adw_toast_set_timeout (toast, 10);
    }
  else
    toast = adw_toast_new_format (_("Opened %s"), display);
  rpe_toast_queue_add (self->toasts, toast);
  {
    /* the file's name in the window title (and the task switcher) */
    g_autofree char *title = g_strdup_printf (_("%s — RPE Studio"), display);

    gtk_window_set_title (GTK_WINDOW (self), title);
    adw_view_switcher_title_set_subtitle (self->switcher_title, display);
  }
  return TRUE;
}

static void
open_done (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  GWeakRef *ref = user_data;
  g_autoptr (RpeWindow) self = g_weak_ref_get (ref);
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeCheckpointData) data = rpe_compute_open_checkpoint_finish (result, &error);

  g_weak_ref_clear (ref);
  g_free (ref);
  if (self == NULL || g_task_get_cancellable (G_TASK (result)) != self->load_cancellable)
    return;
  g_clear_object (&self->load_cancellable);
  if (data == NULL)
    {
      g_autofree char *text = NULL;

      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;
      text = g_strdup_printf (_("Could not open the checkpoint: %s. The previous parameters are kept."),
                              error->message);
      _rpe_window_show_message (self, text);
      return;
    }
  _rpe_window_use_checkpoint (self, data, TRUE);
}

static void
open_path (RpeWindow  *self,
           const char *path)
{
  GWeakRef *ref;

  if (self->load_cancellable != NULL)
    g_cancellable_cancel (self->load_cancellable);
  g_clear_object (&self->load_cancellable);
  self->load_cancellable = g_cancellable_new ();
  ref = g_new0 (GWeakRef, 1);
  g_weak_ref_init (ref, self);
  rpe_compute_open_checkpoint_async (path, self->load_cancellable, open_done, ref);
}

void
rpe_window_open_demo (RpeWindow  *self,
                      const char *spec)
{
  g_return_if_fail (RPE_IS_WINDOW (self));
  g_return_if_fail (rpe_demos_is_spec (spec));
  open_path (self, spec);
}

void
rpe_window_open_file (RpeWindow *self,
                      GFile     *file)
{
  g_autofree char *path = NULL;

  g_return_if_fail (RPE_IS_WINDOW (self));
  g_return_if_fail (G_IS_FILE (file));

  path = g_file_get_path (file);
  if (path == NULL)
    {
      _rpe_window_show_message (self, _("Only local files can be opened."));
      return;
    }
  if (g_str_has_suffix (path, RPE_SESSION_SUFFIX))
    {
      _rpe_window_open_session_async (self, path);
      return;
    }
  /* a capture is content for the module shown, not a checkpoint */
  if (_rpe_window_is_capture_file (path))
    {
      rpe_window_open_capture (self, path);
      return;
    }
  open_path (self, path);
}

/* ----------------------------------------------------------------- sidebar */

static GtkWidget *
group_new (RpeWindow  *self,
           const char *title,
           const char *description)
{
  GtkWidget *group = adw_preferences_group_new ();

  adw_preferences_group_set_title (ADW_PREFERENCES_GROUP (group), title);
  if (description != NULL)
    adw_preferences_group_set_description (ADW_PREFERENCES_GROUP (group), description);
  gtk_box_append (self->sidebar, group);
  return group;
}

static GtkAdjustment *
spin_row (RpeWindow  *self,
          GtkWidget  *group,
          const char *title,
          const char *tooltip,
          double      lo,
          double      hi,
          double      step,
          const char *property)
{
  GtkWidget *row = adw_action_row_new ();
  GtkAdjustment *adj = gtk_adjustment_new (lo, lo, hi, step, step * 8, 0);
  GtkWidget *spin = gtk_spin_button_new (adj, step, step < 1.0 ? (guint) ceil (-log10 (step) - 1e-9) : 0);

  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  gtk_widget_set_tooltip_text (row, tooltip);
  gtk_widget_set_tooltip_text (spin, tooltip);
  gtk_widget_set_valign (spin, GTK_ALIGN_CENTER);
  gtk_spin_button_set_numeric (GTK_SPIN_BUTTON (spin), TRUE);
  gtk_editable_set_width_chars (GTK_EDITABLE (spin), 5);
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), spin);
  adw_preferences_group_add (ADW_PREFERENCES_GROUP (group), row);
  if (property != NULL)
    g_object_bind_property (self->state, property, adj, "value", G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  return adj;
}

static GtkWidget *
combo_row (RpeWindow          *self,
           GtkWidget          *group,
           const char         *title,
           const char         *tooltip,
           const char * const *items,
           const char         *property)
{
  GtkWidget *row = adw_combo_row_new ();
  GtkStringList *model = gtk_string_list_new (NULL);

  /* items: N_() marked names (names no catalogue holds, a colour map's, come back unchanged) */
  for (gsize i = 0; items[i] != NULL; i++)
    gtk_string_list_append (model, _(items[i]));

  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  adw_combo_row_set_model (ADW_COMBO_ROW (row), G_LIST_MODEL (model));
  g_object_unref (model);
  gtk_widget_set_tooltip_text (row, tooltip);
  adw_preferences_group_add (ADW_PREFERENCES_GROUP (group), row);
  if (property != NULL)
    g_object_bind_property (self->state, property, row, "selected", G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  return row;
}

static GtkWidget *
switch_row (RpeWindow  *self,
            GtkWidget  *group,
            const char *title,
            const char *tooltip,
            const char *property)
{
  GtkWidget *row = adw_action_row_new ();
  GtkWidget *sw = gtk_switch_new ();

  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  gtk_widget_set_tooltip_text (row, tooltip);
  gtk_widget_set_tooltip_text (sw, tooltip);
  gtk_widget_set_valign (sw, GTK_ALIGN_CENTER);
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), sw);
  adw_action_row_set_activatable_widget (ADW_ACTION_ROW (row), sw);
  adw_preferences_group_add (ADW_PREFERENCES_GROUP (group), row);
  g_object_bind_property (self->state, property, sw, "active", G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  return sw;
}

static GtkWidget *
check_new (const char *label,
           const char *tooltip)
{
  GtkWidget *check = gtk_check_button_new_with_label (label);

  gtk_widget_set_tooltip_text (check, tooltip);
  return check;
}

static void
clear_box (GtkWidget *box)
{
  GtkWidget *child;

  while ((child = gtk_widget_get_first_child (box)) != NULL)
    gtk_box_remove (GTK_BOX (box), child);
}

static gboolean
all_features (GtkWidget *check)
{
  return check != NULL && gtk_check_button_get_active (GTK_CHECK_BUTTON (check));
}

/* sine components: spectrum editor + numbers */

static void
sine_component_changed (RpeSpectrumEditor *editor,
                        guint              k,
                        double             f,
                        double             theta,
                        double             lambda,
                        RpeWindow         *self)
{
  if (self->updating)
    return;
  rpe_explorer_state_set_sine (self->state, rpe_explorer_state_get_head (self->state),
                               rpe_explorer_state_get_feature (self->state), k, f, theta, lambda,
                               all_features (self->sine_all));
}

static void
sine_spin_changed (GtkSpinButton *spin,
                   RpeWindow     *self)
{
  const RpeSpeParams *p = rpe_explorer_state_get_params (self->state, RPE_SPE_SINE);
  guint k = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (spin), "k"));
  guint which = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (spin), "which"));
  gsize h = rpe_explorer_state_get_head (self->state), d = rpe_explorer_state_get_feature (self->state);
  gsize i;
  double v[3];

  if (self->updating || p == NULL || h >= p->n_heads || d >= p->n_features)
    return;
  i = (h * p->n_features + d) * p->n_sines + k;
  v[0] = p->freqs[i];
  v[1] = p->offsets[i];
  v[2] = p->gains[i];
  v[which] = gtk_spin_button_get_value (spin);
  rpe_explorer_state_set_sine (self->state, h, d, k, v[0], v[1], v[2], all_features (self->sine_all));
}

static void
sync_sine (RpeWindow *self,
           gboolean   rebuild)
{
  const RpeSpeParams *p = rpe_explorer_state_get_params (self->state, RPE_SPE_SINE);
  gsize h = rpe_explorer_state_get_head (self->state), d = rpe_explorer_state_get_feature (self->state);
  GtkWidget *editor, *grid;
  gsize base, K;

  if (p == NULL || h >= p->n_heads || d >= p->n_features)
    {
      clear_box (self->sine_box);
      return;
    }
  K = p->n_sines;
  base = (h * p->n_features + d) * K;
  self->updating = TRUE;
  if (rebuild || gtk_widget_get_first_child (self->sine_box) == NULL)
    {
      g_autofree char *title = g_strdup_printf (_("Sine components of h = %zu, d = %zu"), h, d);
      const char *heads[3] = { _("f (cycles)"), _("θ (rad)"), "λ" };

      clear_box (self->sine_box);
      editor = rpe_spectrum_editor_new ();
      gtk_widget_set_size_request (editor, -1, 170);
      gtk_widget_set_tooltip_text (editor, _("Drag a point: frequency f across, gain λ up; Shift+drag or scroll turns its phase θ"));
      rpe_spectrum_editor_set_title (RPE_SPECTRUM_EDITOR (editor), title);
      g_signal_connect (editor, "component-changed", G_CALLBACK (sine_component_changed), self);
      gtk_box_append (GTK_BOX (self->sine_box), editor);
      grid = gtk_grid_new ();
      gtk_grid_set_column_spacing (GTK_GRID (grid), 4);
      gtk_grid_set_row_spacing (GTK_GRID (grid), 2);
      for (guint c = 0; c < 3; c++)
        gtk_grid_attach (GTK_GRID (grid), gtk_label_new (heads[c]), (int) c + 1, 0, 1, 1);
      for (gsize k = 0; k < K; k++)
        {
          g_autofree char *name = g_strdup_printf ("k = %zu", k);

          gtk_grid_attach (GTK_GRID (grid), gtk_label_new (name), 0, (int) k + 1, 1, 1);
          for (guint c = 0; c < 3; c++)
            {
              static const double lo[3] = { 0.0, -10.0, 0.0 }, hi[3] = { 0.5, 10.0, 100.0 }, st[3] = { 0.001, 0.05, 0.01 };
              GtkWidget *spin = gtk_spin_button_new_with_range (lo[c], hi[c], st[c]);
              static const char *tips[3] = { N_("Frequency f_k in cycles per position, 0 … 0.5"),
                                             N_("Phase θ_k in radians (query side)"),
                                             N_("Gain λ_k ≥ 0") };

              gtk_spin_button_set_digits (GTK_SPIN_BUTTON (spin), c == 0 ? 4 : 3);
              gtk_orientable_set_orientation (GTK_ORIENTABLE (spin), GTK_ORIENTATION_VERTICAL);
              gtk_editable_set_width_chars (GTK_EDITABLE (spin), 6);
              gtk_widget_set_tooltip_text (spin, _(tips[c]));
              g_object_set_data (G_OBJECT (spin), "k", GUINT_TO_POINTER ((guint) k));
              g_object_set_data (G_OBJECT (spin), "which", GUINT_TO_POINTER (c));
              g_signal_connect (spin, "value-changed", G_CALLBACK (sine_spin_changed), self);
              gtk_grid_attach (GTK_GRID (grid), spin, (int) c + 1, (int) k + 1, 1, 1);
            }
        }
      gtk_box_append (GTK_BOX (self->sine_box), grid);
    }
  editor = gtk_widget_get_first_child (self->sine_box);
  rpe_spectrum_editor_set_components (RPE_SPECTRUM_EDITOR (editor), p->freqs + base, p->offsets + base,
                                      p->gains + base, K);
  grid = gtk_widget_get_next_sibling (editor);
  for (gsize k = 0; k < K; k++)
    {
      const float *arrays[3] = { p->freqs, p->offsets, p->gains };

      for (guint c = 0; c < 3; c++)
        {
          GtkWidget *spin = gtk_grid_get_child_at (GTK_GRID (grid), (int) c + 1, (int) k + 1);

          if (spin != NULL)
            gtk_spin_button_set_value (GTK_SPIN_BUTTON (spin), arrays[c][base + k]);
        }
    }
  self->updating = FALSE;
}

/* conv filters: two stem editors */

static void
conv_taps_changed (RpeStemEditor *editor,
                   guint          first,
                   guint          count,
                   RpeWindow     *self)
{
  gsize n = 0;
  const float *values = rpe_stem_editor_get_values (editor, &n);
  gboolean query = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (editor), "query"));

  if (self->updating)
    return;
  self->updating = TRUE;
  rpe_explorer_state_set_conv_taps (self->state, rpe_explorer_state_get_head (self->state),
                                    rpe_explorer_state_get_feature (self->state), query, values, n,
                                    all_features (self->conv_all));
  self->updating = FALSE;
}

static void
conv_length_changed (GtkSpinButton *spin,
                     RpeWindow     *self)
{
  if (!self->updating)
    rpe_explorer_state_set_conv_length (self->state, (gsize) gtk_spin_button_get_value_as_int (spin));
}

static void
sync_conv (RpeWindow *self,
           gboolean   rebuild)
{
  const RpeSpeParams *p = rpe_explorer_state_get_params (self->state, RPE_SPE_CONV);
  gsize h = rpe_explorer_state_get_head (self->state), d = rpe_explorer_state_get_feature (self->state);
  GtkWidget *child;
  gsize base;

  if (p == NULL || h >= p->n_heads || d >= p->n_features)
    {
      clear_box (self->conv_box);
      return;
    }
  base = (h * p->n_features + d) * p->kernel;
  self->updating = TRUE;
  if (rebuild || gtk_widget_get_first_child (self->conv_box) == NULL)
    {
      GtkWidget *row, *spin;

      clear_box (self->conv_box);
      for (guint q = 0; q < 2; q++)
        {
          GtkWidget *editor = rpe_stem_editor_new ();
          g_autofree char *title = g_strdup_printf (q == 0 ? _("Query filter of h = %zu, d = %zu")
                                                           : _("Key filter of h = %zu, d = %zu"), h, d);

          gtk_widget_set_size_request (editor, -1, 120);
          rpe_stem_editor_set_title (RPE_STEM_EDITOR (editor), title);
          rpe_stem_editor_set_label (RPE_STEM_EDITOR (editor), _("tap j"));
          gtk_widget_set_tooltip_text (editor, q == 0 ? _("Draw the query filter taps w_q with the mouse")
                                                      : _("Draw the key filter taps w_k with the mouse"));
          g_object_set_data (G_OBJECT (editor), "query", GUINT_TO_POINTER (q == 0));
          g_signal_connect (editor, "values-changed", G_CALLBACK (conv_taps_changed), self);
          gtk_box_append (GTK_BOX (self->conv_box), editor);
        }
      row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
      gtk_box_append (GTK_BOX (row), gtk_label_new (_("Filter length L")));
      spin = gtk_spin_button_new_with_range (1, 512, 1);
      gtk_widget_set_tooltip_text (spin, _("Length L of the conv filters (templates vanish for |m − n| ≥ L)"));
      gtk_spin_button_set_value (GTK_SPIN_BUTTON (spin), (double) p->kernel);
      g_signal_connect (spin, "value-changed", G_CALLBACK (conv_length_changed), self);
      gtk_box_append (GTK_BOX (row), spin);
      gtk_box_append (GTK_BOX (self->conv_box), row);
    }
  child = gtk_widget_get_first_child (self->conv_box);
  rpe_stem_editor_set_values (RPE_STEM_EDITOR (child), p->wq + base, p->kernel);
  child = gtk_widget_get_next_sibling (child);
  rpe_stem_editor_set_values (RPE_STEM_EDITOR (child), p->wk + base, p->kernel);
  self->updating = FALSE;
}

/* gates */

static void
gate_values_changed (RpeStemEditor *editor,
                     guint          first,
                     guint          count,
                     RpeWindow     *self)
{
  gsize n = 0;
  const float *values = rpe_stem_editor_get_values (editor, &n);
  gsize h = rpe_explorer_state_get_head (self->state);

  if (self->updating)
    return;
  self->updating = TRUE;
  for (guint i = first; i < first + count && i < n; i++)
    rpe_explorer_state_set_gate (self->state, h, i, values[i], FALSE);
  self->updating = FALSE;
}

static void
gate_all_changed (GtkRange  *range,
                  RpeWindow *self)
{
  if (!self->updating)
    rpe_explorer_state_set_gate (self->state, rpe_explorer_state_get_head (self->state), 0,
                                 gtk_range_get_value (range), TRUE);
}

static void
sync_gates (RpeWindow *self)
{
  const RpeSpeParams *p = rpe_explorer_state_get_params (self->state, rpe_explorer_state_get_spe_kind (self->state));
  gsize h = rpe_explorer_state_get_head (self->state);
  float zeros[4096] = { 0 };
  g_autofree char *title = NULL;

  if (p == NULL || h >= p->n_heads)
    return;
  self->updating = TRUE;
  title = g_strdup_printf (_("Gates g of head %zu (0: all positional, 1: none)"), h);
  rpe_stem_editor_set_title (RPE_STEM_EDITOR (self->gate_all), title);
  rpe_stem_editor_set_values (RPE_STEM_EDITOR (self->gate_all),
                              p->gate != NULL ? p->gate + h * p->n_features : zeros,
                              MIN (p->n_features, G_N_ELEMENTS (zeros)));
  self->updating = FALSE;
}

static void
fastrpb_changed (RpeStemEditor *editor,
                 guint          first,
                 guint          count,
                 RpeWindow     *self)
{
  gsize n = 0;
  const float *values = rpe_stem_editor_get_values (editor, &n);

  if (self->updating)
    return;
  self->updating = TRUE;
  rpe_explorer_state_set_fastrpb_weights (self->state, values, n);
  self->updating = FALSE;
}

static void
sync_ranges (RpeWindow *self)
{
  const RpeSpeParams *p = rpe_explorer_state_get_params (self->state, rpe_explorer_state_get_spe_kind (self->state));

  if (p == NULL)
    return;
  gtk_adjustment_set_upper (self->head_adj, (double) p->n_heads - 1);
  gtk_adjustment_set_upper (self->feature_adj, (double) p->n_features - 1);
}

static void sync_lrpe (RpeWindow *self);

static void
sidebar_state_changed (RpeExplorerState  *state,
                       RpeExplorerChange  what,
                       RpeWindow         *self)
{
  gboolean rebuild = (what & (RPE_EXPLORER_CHANGE_MODULES | RPE_EXPLORER_CHANGE_HEAD
                              | RPE_EXPLORER_CHANGE_FEATURE | RPE_EXPLORER_CHANGE_SPE_KIND)) != 0;

  if (what & (RPE_EXPLORER_CHANGE_MODULES | RPE_EXPLORER_CHANGE_SPE_KIND))
    sync_ranges (self);
  if (self->updating)
    return;
  if (rebuild || (what & RPE_EXPLORER_CHANGE_SPE_PARAMS))
    {
      sync_sine (self, rebuild);
      sync_conv (self, rebuild);
    }
  if (rebuild || (what & RPE_EXPLORER_CHANGE_GATE))
    sync_gates (self);
  if (what & RPE_EXPLORER_CHANGE_LRPE)
    sync_lrpe (self);
  if ((what & RPE_EXPLORER_CHANGE_FASTRPB) && self->fastrpb_box != NULL)
    {
      gsize count;
      const float *w = rpe_explorer_state_get_fastrpb_weights (state, &count);
      GtkWidget *editor = gtk_widget_get_first_child (self->fastrpb_box);

      if (editor != NULL)
        rpe_stem_editor_set_values (RPE_STEM_EDITOR (editor), w, count);
    }
  if (what & RPE_EXPLORER_CHANGE_SPE_KIND)
    {
      RpeSpeMethod kind = rpe_explorer_state_get_spe_kind (state);

      gtk_widget_set_visible (self->sine_group, kind == RPE_SPE_SINE);
      gtk_widget_set_visible (self->conv_group, kind == RPE_SPE_CONV);
    }
}

static void
npy_clicked (GtkButton *button,
             RpeWindow *self)
{
  gtk_widget_activate_action (GTK_WIDGET (self), "win.open-npy", NULL);
}

static void
colormap_selected (AdwComboRow *row,
                   GParamSpec  *pspec,
                   RpeWindow   *self)
{
  const RpeColormap *cmap = rpe_colormap_get ((RpeColormapId) adw_combo_row_get_selected (row));

  if (cmap != NULL)
    g_object_set (self->state, "colormap", rpe_colormap_get_name (cmap), NULL);
}

static void
colormap_notify (RpeExplorerState *state,
                 GParamSpec       *pspec,
                 AdwComboRow      *row)
{
  const RpeColormap *cmap = rpe_colormap_lookup (rpe_explorer_state_get_colormap (state));

  if (cmap != NULL && adw_combo_row_get_selected (row) != (guint) rpe_colormap_get_id (cmap))
    adw_combo_row_set_selected (row, (guint) rpe_colormap_get_id (cmap));
  /* what it colours: a sequential map is for attention weights; signed values (templates,
   * differences) stay on a diverging map */
  adw_action_row_set_subtitle (ADW_ACTION_ROW (row), cmap != NULL && rpe_colormap_is_diverging (cmap)
                                                     ? _("Every map, signed and unsigned")
                                                     : _("Attention weights; signed maps (templates, differences) "
                                                         "use red–blue"));
}

/* The first GtkListBox under w (depth first). */
static GtkWidget *
find_list_box (GtkWidget *w)
{
  if (GTK_IS_LIST_BOX (w))
    return w;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c != NULL; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_list_box (c);

      if (found != NULL)
        return found;
    }
  return NULL;
}

/* The row an AdwPreferencesGroup got last (the last child of its list box). */
static GtkWidget *
last_row (GtkWidget *group)
{
  GtkWidget *list = find_list_box (group);

  return list != NULL ? gtk_widget_get_last_child (list) : NULL;
}

static void
color_scale_notify (RpeExplorerState *state,
                    GParamSpec       *pspec,
                    RpeWindow        *self)
{
  guint scale = 0;

  g_object_get (state, "color-scale", &scale, NULL);
  if (self->gamma_row != NULL)
    gtk_widget_set_sensitive (self->gamma_row, scale == RPE_HEATMAP_TRANSFORM_POWER);
  if (self->percentile_row != NULL)
    gtk_widget_set_sensitive (self->percentile_row, scale == RPE_HEATMAP_TRANSFORM_PERCENTILE);
}

/* ------------------------------------------------------------------ LRPE */

/* The "Parameters" row shows what LRPE uses: the seeded choices below, or trained parameters
 * (a checkpoint's module, .npy files), which then fix P, Λ and θ as they imply. */
static void
sync_lrpe (RpeWindow *self)
{
  const char *source = NULL;
  const RpeLrpeTrained *t = rpe_explorer_state_get_lrpe_trained (self->state, &source);
  gboolean use = FALSE, fixed_p, fixed_lambda, fixed_theta;
  guint selected = 0, n_items = g_list_model_get_n_items (G_LIST_MODEL (self->lrpe_labels));
  const char *from;

  if (self->lrpe_params_row == NULL)
    return;
  g_object_get (self->state, "lrpe-trained", &use, NULL);
  use = use && t != NULL;
  if (use)
    {
      for (guint i = 1; i < n_items && selected == 0; i++)
        if (g_strcmp0 (gtk_string_list_get_string (self->lrpe_labels, i), source) == 0)
          selected = i;
      if (selected == 0)
        {
          /* set by other means (tests, undo): offer it too */
          g_ptr_array_add (self->lrpe_choices, rpe_lrpe_trained_copy (t));
          gtk_string_list_append (self->lrpe_labels, source);
          selected = n_items;
        }
    }
  self->updating = TRUE;
  adw_combo_row_set_selected (ADW_COMBO_ROW (self->lrpe_params_row), selected);
  self->updating = FALSE;
  from = lrpe_from_checkpoint (source) ? _("from checkpoint") : _("from files");
  adw_action_row_set_subtitle (ADW_ACTION_ROW (self->lrpe_params_row),
                               use ? (lrpe_from_checkpoint (source) ? _("From checkpoint: trained v, θ, permutation")
                                                                             : _("From files: trained v, θ, permutation"))
                                   : _("Seeded: P, Λ and θ as chosen below"));
  fixed_p = use && t->v != NULL;
  fixed_lambda = use && t->pi != NULL;
  fixed_theta = use && (t->theta != NULL || t->pi != NULL);
  gtk_widget_set_sensitive (self->lrpe_p_row, !fixed_p);
  gtk_widget_set_sensitive (self->lrpe_lambda_row, !fixed_lambda);
  gtk_widget_set_sensitive (self->lrpe_theta_row, !fixed_theta);
  adw_action_row_set_subtitle (ADW_ACTION_ROW (self->lrpe_p_row), fixed_p ? from : "");
  adw_action_row_set_subtitle (ADW_ACTION_ROW (self->lrpe_lambda_row),
                               fixed_lambda || (use && t->theta != NULL) ? from : "");
  adw_action_row_set_subtitle (ADW_ACTION_ROW (self->lrpe_theta_row),
                               use && t->theta != NULL ? (t->pi != NULL ? "" : _("learned, from the file"))
                                                       : fixed_theta ? _("none (permutation Λ)") : "");
}

static void
lrpe_params_selected (AdwComboRow *row,
                      GParamSpec  *pspec,
                      RpeWindow   *self)
{
  guint i = adw_combo_row_get_selected (row);
  const char *source = NULL, *label;
  const RpeLrpeTrained *held;

  if (self->updating || i == GTK_INVALID_LIST_POSITION)
    return;
  if (i == 0 || i > self->lrpe_choices->len)
    {
      g_object_set (self->state, "lrpe-trained", FALSE, NULL);
      return;
    }
  label = gtk_string_list_get_string (self->lrpe_labels, i);
  held = rpe_explorer_state_get_lrpe_trained (self->state, &source);
  if (held != NULL && g_strcmp0 (source, label) == 0)
    g_object_set (self->state, "lrpe-trained", TRUE, NULL);
  else
    rpe_explorer_state_set_lrpe_trained (self->state, g_ptr_array_index (self->lrpe_choices, i - 1), label);
}

void
_rpe_window_set_lrpe_choices (RpeWindow   *self,
                              GPtrArray   *trained,
                              const char **labels,
                              gboolean     replace,
                              gboolean     use)
{
  guint first;

  self->updating = TRUE;
  if (replace)
    {
      guint n = g_list_model_get_n_items (G_LIST_MODEL (self->lrpe_labels));

      g_ptr_array_set_size (self->lrpe_choices, 0);
      gtk_string_list_splice (self->lrpe_labels, 1, n - 1, NULL);
    }
  first = self->lrpe_choices->len;
  for (guint i = 0; i < trained->len; i++)
    {
      g_ptr_array_add (self->lrpe_choices, g_steal_pointer (&g_ptr_array_index (trained, i)));
      gtk_string_list_append (self->lrpe_labels, labels[i]);
    }
  self->updating = FALSE;
  if (use && self->lrpe_choices->len > first)
    rpe_explorer_state_set_lrpe_trained (self->state, g_ptr_array_index (self->lrpe_choices, first),
                                         gtk_string_list_get_string (self->lrpe_labels, first + 1));
  sync_lrpe (self);
}

GtkWidget *
rpe_window_get_lrpe_params_row (RpeWindow *self)
{
  g_return_val_if_fail (RPE_IS_WINDOW (self), NULL);
  return self->lrpe_params_row;
}

static void
lrpe_open_clicked (GtkButton *button,
                   RpeWindow *self)
{
  gtk_widget_activate_action (GTK_WIDGET (self), "win.open-lrpe", NULL);
}

static void
build_sidebar (RpeWindow *self)
{
  static const char *kinds[] = { N_("Sine SPE"), N_("Conv SPE"), NULL };
  static const char *methods[] = { N_("SPE estimate"), N_("Exact RPE"), "APE", "LRPE", "FastRPB", N_("Linear (implied)"), NULL };
  static const char *maps[] = { "ReLU", "ELU + 1", "exp", "Performer", "DPFP", NULL };
  static const char *tkinds[] = { N_("Analytic"), N_("Empirical"), N_("Difference"), NULL };
  static const char *contents[] = { N_("Unit (positional only)"), N_("Random (seeded)"), N_("Loaded .npy"),
                                    N_("Captured input (Open Capture…)"), NULL };
  static const char *ps[] = { N_("Identity"), "Householder", N_("Permutation"), N_("Odd–even"), "Fourier", "DCT", NULL };
  static const char *lambdas[] = { N_("Rotation"), N_("Mixed"), N_("Complex exponential"), N_("Permutation"), NULL };
  static const char *thetas[] = { N_("A (RoPE)"), N_("B (linear)"), N_("C (inverse)"), NULL };
  const char *cmaps[RPE_COLORMAP_N_MAPS + 1];
  GtkWidget *group, *row, *button, *box, *editor;
  GtkAdjustment *adj;

  group = group_new (self, _("Model"), NULL);
  combo_row (self, group, _("SPE module"), _("Which SPE module of the checkpoint to explore: sine (periodic) or conv (vanishing)"),
             kinds, "spe-kind");
  combo_row (self, group, _("Attention"), _("The positional scheme of the attention view"), methods, "method");
  switch_row (self, group, _("Causal"), _("Mask keys after the query (n > m)"), "causal");
  switch_row (self, group, _("Gated"), _("Use the gate: templates (1 − g) P + g"), "gated");
  combo_row (self, group, _("Feature map"), _("Kernel feature map φ of the linear model (and its implied attention)"),
             maps, "feature-map");

  group = group_new (self, _("Sequence"), NULL);
  spin_row (self, group, _("Length N"), _("Sequence length N (long maps are streamed and reduced to pixels)"),
            2, RPE_EXPLORER_MAX_LENGTH, 8, "length");
  spin_row (self, group, _("Realizations R"), _("Number of SPE noise realizations R"), 1, RPE_EXPLORER_MAX_R, 1, "realizations");
  adj = spin_row (self, group, _("Seed"), _("Seed of the noise (and of random content)"), 0, G_MAXINT, 1, "seed");
  (void) adj;
  self->head_adj = spin_row (self, group, _("Head h"), _("Attention head h"), 0, 3, 1, "head");
  self->feature_adj = spin_row (self, group, _("Feature d"), _("Feature d (the cell opened in the templates view)"),
                                0, 15, 1, "feature");
  spin_row (self, group, _("Training length"), _("The training length N_train, marked on the maps and curves (0: none)"),
            0, RPE_EXPLORER_MAX_LENGTH, 8, "train-length");
  combo_row (self, group, _("Templates"), _("What the templates grid shows"), tkinds, "template-kind");
  for (guint i = 0; i < RPE_COLORMAP_N_MAPS; i++)
    cmaps[i] = rpe_colormap_get_name (rpe_colormap_get (i));
  cmaps[RPE_COLORMAP_N_MAPS] = NULL;
  row = combo_row (self, group, _("Colour map"), _("Colour map of the attention maps (and of signed maps when it is "
                                                   "diverging)"), cmaps, NULL);
  g_signal_connect (row, "notify::selected", G_CALLBACK (colormap_selected), self);
  g_signal_connect_object (self->state, "notify::colormap", G_CALLBACK (colormap_notify), row, 0);
  colormap_notify (self->state, NULL, ADW_COMBO_ROW (row));
  {
    /* in the order of RpeHeatmapTransform */
    static const char *scales[] = { N_("Linear"), N_("SPE paper: min(1, (a/0.02)^0.4)"), N_("Log (4 decades)"), N_("Power (γ)"),
                                    N_("Percentile clip"), NULL };
    static const char *ranges[] = { N_("Shared by the panels"), N_("Each panel its own"), NULL };

    combo_row (self, group, _("Colour scale"),
               _("How values map to colours in every heatmap (Ctrl+L: next). Log and percentile clip show "
                 "the small weights a causal map's a(0, 0) = 1 would wash out; the SPE paper's transform "
                 "applies to attention weights only"), scales, "color-scale");
    spin_row (self, group, _("Power γ"), _("The exponent of the power scale (colour scale Power): colour position "
              "((v − min)/(max − min))^γ"), 0.05, 10.0, 0.05, "color-gamma");
    self->gamma_row = last_row (group);
    spin_row (self, group, _("Percentile p"), _("The percentile clip: the colour range is [P(100 − p), P(p)]"),
                  50.0, 100.0, 0.5, "color-percentile");
    self->percentile_row = last_row (group);
    g_signal_connect_object (self->state, "notify::color-scale", G_CALLBACK (color_scale_notify), self, 0);
    color_scale_notify (self->state, NULL, self);
    combo_row (self, group, _("Colour range"),
               _("One range (and colour bar) shared by a view's panels, or each panel its own (Shift+Ctrl+L)"),
               ranges, "color-range");
  }

  group = group_new (self, _("Queries and keys"), NULL);
  combo_row (self, group, _("Content"), _("Queries and keys: unit (pure positional view), random or loaded"), contents, "content");
  row = adw_action_row_new ();
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), _("From a file"));
  button = gtk_button_new_with_mnemonic (_("Load ._npy…"));
  gtk_widget_set_valign (button, GTK_ALIGN_CENTER);
  gtk_widget_set_tooltip_text (button, _("Load queries/keys of shape (N, D) or (N, H, D) from a .npy file"));
  g_signal_connect (button, "clicked", G_CALLBACK (npy_clicked), self);
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), button);
  adw_preferences_group_add (ADW_PREFERENCES_GROUP (group), row);

  self->sine_group = group_new (self, _("Sine components"), _("Per (h, d): K frequencies, phases and gains"));
  self->sine_box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  adw_preferences_group_add (ADW_PREFERENCES_GROUP (self->sine_group), self->sine_box);
  self->sine_all = check_new (_("Apply to every feature of the head"), _("Edits change all D features of head h at once"));
  adw_preferences_group_add (ADW_PREFERENCES_GROUP (self->sine_group), self->sine_all);

  self->conv_group = group_new (self, _("Conv filters"), _("Draw the taps with the mouse"));
  self->conv_box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  adw_preferences_group_add (ADW_PREFERENCES_GROUP (self->conv_group), self->conv_box);
  self->conv_all = check_new (_("Apply to every feature of the head"), _("Edits change all D features of head h at once"));
  adw_preferences_group_add (ADW_PREFERENCES_GROUP (self->conv_group), self->conv_all);
  gtk_widget_set_visible (self->conv_group, FALSE);

  group = group_new (self, _("Gates"), _("Per feature (draw), or all at once (slider)"));
  self->gate_all = rpe_stem_editor_new ();
  gtk_widget_set_size_request (self->gate_all, -1, 110);
  rpe_stem_editor_set_range (RPE_STEM_EDITOR (self->gate_all), TRUE, 0.0, 1.0);
  rpe_stem_editor_set_label (RPE_STEM_EDITOR (self->gate_all), _("feature d"));
  gtk_widget_set_tooltip_text (self->gate_all, _("Draw the gate g of each feature of the head"));
  g_signal_connect (self->gate_all, "values-changed", G_CALLBACK (gate_values_changed), self);
  adw_preferences_group_add (ADW_PREFERENCES_GROUP (group), self->gate_all);
  self->gate_scale = gtk_scale_new_with_range (GTK_ORIENTATION_HORIZONTAL, 0.0, 1.0, 0.01);
  gtk_widget_set_tooltip_text (self->gate_scale, _("Set the gate g of every feature of the head at once"));
  g_signal_connect (self->gate_scale, "value-changed", G_CALLBACK (gate_all_changed), self);
  adw_preferences_group_add (ADW_PREFERENCES_GROUP (group), self->gate_scale);

  group = group_new (self, "LRPE", _("W_s = Pᴴ Λ(s) P (Qin et al. 2023)"));
  self->lrpe_labels = gtk_string_list_new ((const char *[]) { _("Seeded"), NULL });
  self->lrpe_choices = g_ptr_array_new_with_free_func ((GDestroyNotify) rpe_lrpe_trained_free);
  row = adw_combo_row_new ();
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), _("Parameters"));
  adw_combo_row_set_model (ADW_COMBO_ROW (row), G_LIST_MODEL (self->lrpe_labels));
  gtk_widget_set_tooltip_text (row, _("Seeded v, θ and permutations, or the trained ones of a checkpoint's LRPE "
                                      "module or of .npy files"));
  button = gtk_button_new_from_icon_name ("document-open-symbolic");
  gtk_widget_set_valign (button, GTK_ALIGN_CENTER);
  gtk_widget_set_tooltip_text (button, _("Open LRPE parameters: a trained v, θ or permutation buffer (.npy)"));
  g_signal_connect (button, "clicked", G_CALLBACK (lrpe_open_clicked), self);
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), button);
  adw_preferences_group_add (ADW_PREFERENCES_GROUP (group), row);
  g_signal_connect (row, "notify::selected", G_CALLBACK (lrpe_params_selected), self);
  self->lrpe_params_row = row;
  self->lrpe_p_row = combo_row (self, group, "P", _("The unitary P applied first"), ps, "lrpe-p");
  self->lrpe_lambda_row = combo_row (self, group, "Λ", _("The relative part Λ(s)"), lambdas, "lrpe-lambda");
  self->lrpe_theta_row = combo_row (self, group, "θ", _("The frequencies of Λ"), thetas, "lrpe-theta");
  sync_lrpe (self);

  group = group_new (self, "FastRPB", _("Draw the bias weights w_τ for |τ| &lt; 32"));
  box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  editor = rpe_stem_editor_new ();
  gtk_widget_set_size_request (editor, -1, 120);
  rpe_stem_editor_set_x_offset (RPE_STEM_EDITOR (editor), -(RPE_EXPLORER_FASTRPB_TAPS - 1));
  rpe_stem_editor_set_label (RPE_STEM_EDITOR (editor), _("lag τ"));
  gtk_widget_set_tooltip_text (editor, _("Draw the additive bias w_τ, W[m, n] = w_{m−n}"));
  {
    gsize count;
    const float *w = rpe_explorer_state_get_fastrpb_weights (self->state, &count);

    rpe_stem_editor_set_values (RPE_STEM_EDITOR (editor), w, count);
  }
  g_signal_connect (editor, "values-changed", G_CALLBACK (fastrpb_changed), self);
  gtk_box_append (GTK_BOX (box), editor);
  adw_preferences_group_add (ADW_PREFERENCES_GROUP (group), box);
  self->fastrpb_box = box;

  g_signal_connect_object (self->state, "changed", G_CALLBACK (sidebar_state_changed), self, 0);
}

/* --------------------------------------------------------------- settings */

/* Settings never drive the UI: they are read once here, the views and the
 * colour map then live in memory, and rpe_window_save_state () writes them
 * back (on Close and on Quit).  A settings backend that fails (no D-Bus
 * session, so no dconf) or reverts a write costs the next start its memory,
 * never a control. */
static void
load_window_state (RpeWindow *self)
{
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
  g_autoptr (GSettingsSchema) schema = NULL;
  g_autofree char *view = NULL;
  g_autofree char *cmap = NULL;

  if (source != NULL)
    schema = g_settings_schema_source_lookup (source, APPLICATION_ID, TRUE);
  if (schema == NULL)
    return;   /* running uninstalled without the compiled schema */

  self->settings = g_settings_new (APPLICATION_ID);
  gtk_window_set_default_size (GTK_WINDOW (self),
                               g_settings_get_int (self->settings, "window-width"),
                               g_settings_get_int (self->settings, "window-height"));
  if (g_settings_get_boolean (self->settings, "window-maximized"))
    gtk_window_maximize (GTK_WINDOW (self));
  view = g_settings_get_string (self->settings, "last-view");
  if (view != NULL && adw_view_stack_get_child_by_name (self->stack, view) != NULL)
    adw_view_stack_set_visible_child_name (self->stack, view);
  cmap = g_settings_get_string (self->settings, "colormap");
  if (cmap != NULL && rpe_colormap_lookup (cmap) != NULL)
    g_object_set (self->state, "colormap", cmap, NULL);
}

/* key = value if the schema allows it (a view added later is not an error) */
static void
save_string (GSettings  *settings,
             const char *key,
             const char *value)
{
  g_autoptr (GSettingsSchema) schema = NULL;
  g_autoptr (GSettingsSchemaKey) schema_key = NULL;
  g_autoptr (GVariant) v = NULL;

  if (value == NULL)
    return;
  g_object_get (settings, "settings-schema", &schema, NULL);
  if (schema == NULL || !g_settings_schema_has_key (schema, key))
    return;
  schema_key = g_settings_schema_get_key (schema, key);
  v = g_variant_ref_sink (g_variant_new_string (value));
  if (g_settings_schema_key_range_check (schema_key, v))
    g_settings_set_value (settings, key, v);
}

void
rpe_window_save_state (RpeWindow *self)
{
  int width, height;

  g_return_if_fail (RPE_IS_WINDOW (self));
  if (self->settings == NULL)
    return;
  gtk_window_get_default_size (GTK_WINDOW (self), &width, &height);
  g_settings_delay (self->settings);
  if (width > 0 && height > 0)
    {
      g_settings_set_int (self->settings, "window-width", CLAMP (width, 360, 32768));
      g_settings_set_int (self->settings, "window-height", CLAMP (height, 294, 32768));
    }
  g_settings_set_boolean (self->settings, "window-maximized",
                          gtk_window_is_maximized (GTK_WINDOW (self)));
  save_string (self->settings, "last-view", adw_view_stack_get_visible_child_name (self->stack));
  save_string (self->settings, "colormap", rpe_explorer_state_get_colormap (self->state));
  g_settings_apply (self->settings);
  g_settings_sync ();
}

static void
close_response (AdwMessageDialog *dialog,
                const char       *response,
                RpeWindow        *self)
{
  if (g_str_equal (response, "save"))
    {
      g_autoptr (GError) error = NULL;

      if (!rpe_window_save_session (self, self->session_file, &error))
        {
          g_autofree char *text = g_strdup_printf (_("Could not save the session: %s. The window stays open."),
                                                   error->message);

          _rpe_window_show_message (self, text);
          return;
        }
    }
  else if (!g_str_equal (response, "discard"))
    return;   /* cancel: the window stays */
  self->closing = TRUE;
  gtk_window_close (GTK_WINDOW (self));
}

/* Close (and Quit, which closes every window): the window's size, view and colour map are saved;
 * a session changed since it was saved or opened is offered to be saved first. */
static gboolean
rpe_window_close_request (GtkWindow *window)
{
  RpeWindow *self = RPE_WINDOW (window);

  if (!self->closing && _rpe_window_session_unsaved (self))
    {
      if (self->close_dialog == NULL)
        {
          g_autofree char *base = g_path_get_basename (self->session_file);
          g_autofree char *display = g_filename_display_name (base);
          GtkWidget *dialog = adw_message_dialog_new (window, _("Save Changes?"), NULL);

          adw_message_dialog_format_body (ADW_MESSAGE_DIALOG (dialog),
                                          _("The session “%s” has changed since it was saved. Changes which are "
                                            "not saved will be lost."), display);
          adw_message_dialog_add_responses (ADW_MESSAGE_DIALOG (dialog), "cancel", _("_Cancel"),
                                            "discard", _("_Discard"), "save", _("_Save"), NULL);
          adw_message_dialog_set_response_appearance (ADW_MESSAGE_DIALOG (dialog), "discard",
                                                      ADW_RESPONSE_DESTRUCTIVE);
          adw_message_dialog_set_response_appearance (ADW_MESSAGE_DIALOG (dialog), "save", ADW_RESPONSE_SUGGESTED);
          adw_message_dialog_set_default_response (ADW_MESSAGE_DIALOG (dialog), "save");
          adw_message_dialog_set_close_response (ADW_MESSAGE_DIALOG (dialog), "cancel");
          g_signal_connect_object (dialog, "response", G_CALLBACK (close_response), self, 0);
          self->close_dialog = dialog;
          g_object_add_weak_pointer (G_OBJECT (dialog), (gpointer *) &self->close_dialog);
        }
      gtk_window_present (GTK_WINDOW (self->close_dialog));
      return TRUE;
    }
  rpe_window_save_state (self);
  return GTK_WINDOW_CLASS (rpe_window_parent_class)->close_request (window);
}

/* ----------------------------------------------------------- drag and drop */

static gboolean
on_drop (GtkDropTarget *target,
         const GValue  *value,
         double         x,
         double         y,
         RpeWindow     *self)
{
  GSList *files;

  /* one file (G_TYPE_FILE, offered by some sources alone) or a list: a checkpoint or a session */
  if (G_VALUE_HOLDS (value, G_TYPE_FILE))
    {
      if (g_value_get_object (value) == NULL)
        return FALSE;
      rpe_window_open_file (self, g_value_get_object (value));
      return TRUE;
    }
  if (!G_VALUE_HOLDS (value, GDK_TYPE_FILE_LIST))
    return FALSE;
  files = g_value_get_boxed (value);
  if (files == NULL)
    return FALSE;
  rpe_window_open_file (self, files->data);
  return TRUE;
}

/* -------------------------------------------------------------- lifecycle */

static void
rpe_window_dispose (GObject *object)
{
  RpeWindow *self = RPE_WINDOW (object);

  if (self->load_cancellable != NULL)
    g_cancellable_cancel (self->load_cancellable);
  g_clear_object (&self->load_cancellable);
  g_clear_object (&self->settings);
  g_clear_object (&self->undo);
  g_clear_pointer (&self->checkpoint, rpe_checkpoint_data_unref);
  _rpe_window_compare_dispose (self);
  _rpe_window_session_dispose (self);
  _rpe_window_capture_dispose (self);
  _rpe_window_tour_dispose (self);
  g_clear_pointer (&self->lrpe_choices, g_ptr_array_unref);
  if (self->grid_window != NULL)
    {
      g_object_remove_weak_pointer (G_OBJECT (self->grid_window), (gpointer *) &self->grid_window);
      gtk_window_destroy (GTK_WINDOW (self->grid_window));
      self->grid_window = NULL;
    }
  g_clear_object (&self->lrpe_labels);
  self->lrpe_params_row = NULL;
  if (self->browser != NULL)
    {
      g_object_remove_weak_pointer (G_OBJECT (self->browser), (gpointer *) &self->browser);
      gtk_window_destroy (GTK_WINDOW (self->browser));
      self->browser = NULL;
    }
  if (self->chooser != NULL)
    {
      gtk_native_dialog_destroy (GTK_NATIVE_DIALOG (self->chooser));
      g_clear_object (&self->chooser);
    }
  if (self->export_dialog != NULL)
    {
      g_object_remove_weak_pointer (G_OBJECT (self->export_dialog), (gpointer *) &self->export_dialog);
      gtk_window_destroy (GTK_WINDOW (self->export_dialog));
      self->export_dialog = NULL;
    }
  if (self->close_dialog != NULL)
    {
      g_object_remove_weak_pointer (G_OBJECT (self->close_dialog), (gpointer *) &self->close_dialog);
      /* it may outlive this window (a reference held elsewhere): no parent pointer left behind */
      gtk_window_set_transient_for (GTK_WINDOW (self->close_dialog), NULL);
      gtk_window_destroy (GTK_WINDOW (self->close_dialog));
      self->close_dialog = NULL;
    }
  G_OBJECT_CLASS (rpe_window_parent_class)->dispose (object);
}

static void
rpe_window_finalize (GObject *object)
{
  RpeWindow *self = RPE_WINDOW (object);

  g_clear_object (&self->state);
  g_clear_pointer (&self->message, g_free);
  G_OBJECT_CLASS (rpe_window_parent_class)->finalize (object);
}

static void
rpe_window_class_init (RpeWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  GtkWindowClass *window_class = GTK_WINDOW_CLASS (klass);

  object_class->dispose = rpe_window_dispose;
  object_class->finalize = rpe_window_finalize;
  window_class->close_request = rpe_window_close_request;
  /* the readers' findings end with the window's pickers, not the tool's options */
  rpe_window_remedy_install ();

  g_type_ensure (RPE_TYPE_HEATMAP_VIEW);
  g_type_ensure (RPE_TYPE_FIGURE_PAGE);

  gtk_widget_class_set_template_from_resource (widget_class, RPE_RESOURCE_PREFIX "/ui/rpe-window.ui");
  gtk_widget_class_bind_template_child (widget_class, RpeWindow, stack);
  gtk_widget_class_bind_template_child (widget_class, RpeWindow, flap);
  gtk_widget_class_bind_template_child (widget_class, RpeWindow, sidebar);
  gtk_widget_class_bind_template_child (widget_class, RpeWindow, message_revealer);
  gtk_widget_class_bind_template_child (widget_class, RpeWindow, message_label);
  gtk_widget_class_bind_template_child (widget_class, RpeWindow, toasts);
  gtk_widget_class_bind_template_child (widget_class, RpeWindow, menu_button);
  gtk_widget_class_bind_template_child (widget_class, RpeWindow, switcher_title);
  gtk_widget_class_bind_template_child_full (widget_class, "recent_submenu", FALSE,
                                             G_STRUCT_OFFSET (RpeWindow, recent_menu));
  gtk_widget_class_bind_template_child_full (widget_class, "undo_section", FALSE,
                                             G_STRUCT_OFFSET (RpeWindow, undo_menu));
  gtk_widget_class_bind_template_child (widget_class, RpeWindow, tour_slot);
  gtk_widget_class_bind_template_child (widget_class, RpeWindow, sidebar_scroller);
  gtk_widget_class_bind_template_child (widget_class, RpeWindow, header_bar);
  gtk_widget_class_bind_template_child_full (widget_class, "demos_submenu", FALSE,
                                             G_STRUCT_OFFSET (RpeWindow, demos_menu));

  _rpe_window_class_actions_init (widget_class);
  _rpe_window_class_undo_init (widget_class);
  _rpe_window_class_compare_init (widget_class);
  _rpe_window_class_session_init (widget_class);
  _rpe_window_class_capture_init (widget_class);
}

static void
rpe_window_init (RpeWindow *self)
{
  static const char *titles[RPE_WINDOW_N_VIEWS] = { N_("_Templates"), N_("_Attention"), N_("_Curves"), N_("_SPE vs RPE"), N_("_Outputs") };
  static const char *icons[RPE_WINDOW_N_VIEWS] = { "rpe-sine-symbolic", "view-grid-symbolic",
                                                   "rpe-curves-symbolic", "rpe-conv-symbolic",
                                                   "media-playlist-consecutive-symbolic" };
  g_autofree char *why = NULL;
  GtkDropTarget *drop;

  gtk_widget_init_template (GTK_WIDGET (self));
  self->state = rpe_explorer_state_new ();
  self->source_layer = -1;
  self->session_cell = -1;

  self->views[RPE_WINDOW_VIEW_TEMPLATES] = rpe_templates_view_new (self->state);
  self->views[RPE_WINDOW_VIEW_ATTENTION] = rpe_attention_view_new (self->state);
  self->views[RPE_WINDOW_VIEW_CURVES] = rpe_curves_page_new (self->state);
  self->views[RPE_WINDOW_VIEW_TEACHING] = rpe_teaching_view_new (self->state);
  self->views[RPE_WINDOW_VIEW_OUTPUTS] = rpe_outputs_view_new (self->state);
  for (guint v = 0; v < RPE_WINDOW_N_VIEWS; v++)
    {
      AdwViewStackPage *page = adw_view_stack_add_titled (self->stack, self->views[v], view_names[v], _(titles[v]));

      adw_view_stack_page_set_use_underline (page, TRUE);
      adw_view_stack_page_set_icon_name (page, icons[v]);
      g_signal_connect_swapped (self->views[v], "figure-changed", G_CALLBACK (_rpe_window_update_export), self);
    }
  g_signal_connect_swapped (self->stack, "notify::visible-child-name", G_CALLBACK (_rpe_window_update_export), self);

  why = load_demo (self);
  if (why != NULL)
    _rpe_window_show_message (self, why);
  build_sidebar (self);
  _rpe_window_compare_init (self);
  _rpe_window_capture_init (self);
  rpe_gesture_guard_wheel (GTK_WIDGET (self));
  sync_ranges (self);
  sync_sine (self, TRUE);
  sync_conv (self, TRUE);
  sync_gates (self);
  load_window_state (self);
  _rpe_window_actions_init (self);
  _rpe_window_undo_init (self);
  _rpe_window_update_recent_menu (self);
  _rpe_window_fill_demos_menu (self);
  _rpe_window_tour_init (self);
  _rpe_window_offer_tour (self);
  {
    /* once: OpenBLAS runs generic kernels on this CPU (rpe-blas-notice.h) */
    g_autofree char *note = rpe_blas_notice_take ("rpe-studio", TRUE);

    if (note != NULL)
      {
        AdwToast *toast = adw_toast_new (note);

        adw_toast_set_priority (toast, ADW_TOAST_PRIORITY_HIGH);   /* before the tour's offer */
        adw_toast_set_timeout (toast, 15);
        rpe_toast_queue_add (self->toasts, toast);
      }
  }

  drop = gtk_drop_target_new (G_TYPE_INVALID, GDK_ACTION_COPY);
  gtk_drop_target_set_gtypes (drop, (GType[2]) { GDK_TYPE_FILE_LIST, G_TYPE_FILE }, 2);
  g_signal_connect (drop, "drop", G_CALLBACK (on_drop), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drop));
}

/* ----------------------------------------------------------------- public */

RpeWindow *
rpe_window_new (GtkApplication *application)
{
  return g_object_new (RPE_TYPE_WINDOW, "application", application, NULL);
}

RpeExplorerState *
rpe_window_get_state (RpeWindow *self)
{
  g_return_val_if_fail (RPE_IS_WINDOW (self), NULL);
  return self->state;
}

GtkWidget *
rpe_window_get_tour (RpeWindow *self)
{
  g_return_val_if_fail (RPE_IS_WINDOW (self), NULL);
  return self->tour;
}

gboolean
rpe_window_get_from_demo (RpeWindow *self)
{
  g_return_val_if_fail (RPE_IS_WINDOW (self), FALSE);
  return self->from_demo;
}

void
rpe_window_set_view (RpeWindow     *self,
                     RpeWindowView  view)
{
  g_return_if_fail (RPE_IS_WINDOW (self));
  g_return_if_fail ((guint) view < RPE_WINDOW_N_VIEWS);
  adw_view_stack_set_visible_child_name (self->stack, view_names[view]);
}

RpeWindowView
rpe_window_get_view (RpeWindow *self)
{
  const char *name;

  g_return_val_if_fail (RPE_IS_WINDOW (self), 0);
  name = adw_view_stack_get_visible_child_name (self->stack);
  for (guint v = 0; v < RPE_WINDOW_N_VIEWS; v++)
    if (g_strcmp0 (name, view_names[v]) == 0)
      return v;
  return RPE_WINDOW_VIEW_TEMPLATES;
}

GtkWidget *
rpe_window_get_view_widget (RpeWindow     *self,
                            RpeWindowView  view)
{
  g_return_val_if_fail (RPE_IS_WINDOW (self), NULL);
  g_return_val_if_fail ((guint) view < RPE_WINDOW_N_VIEWS, NULL);
  return self->views[view];
}

/* Every page: the five views, Compare and Overview. */
static RpeFigurePage *
page_at (RpeWindow *self,
         guint      i)
{
  if (i < RPE_WINDOW_N_VIEWS)
    return RPE_FIGURE_PAGE (self->views[i]);
  return RPE_FIGURE_PAGE (i == RPE_WINDOW_N_VIEWS ? self->compare_view : self->overview_view);
}

#define N_PAGES (RPE_WINDOW_N_VIEWS + 2)

gboolean
rpe_window_is_busy (RpeWindow *self)
{
  g_return_val_if_fail (RPE_IS_WINDOW (self), FALSE);
  if (self->load_cancellable != NULL || self->layer_cancellable != NULL || self->capture_cancellable != NULL)
    return TRUE;
  for (guint i = 0; i < N_PAGES; i++)
    if (rpe_figure_page_is_busy (page_at (self, i)))
      return TRUE;
  return FALSE;
}

void
rpe_window_cancel (RpeWindow *self)
{
  g_return_if_fail (RPE_IS_WINDOW (self));
  for (guint i = 0; i < N_PAGES; i++)
    rpe_figure_page_cancel (page_at (self, i));
  if (self->load_cancellable != NULL)
    g_cancellable_cancel (self->load_cancellable);
}

RpeFigurePage *
_rpe_window_current_page (RpeWindow *self)
{
  GtkWidget *child = adw_view_stack_get_visible_child (self->stack);

  return child != NULL && RPE_IS_FIGURE_PAGE (child) ? RPE_FIGURE_PAGE (child) : NULL;
}

gboolean
rpe_window_is_loading (RpeWindow *self)
{
  g_return_val_if_fail (RPE_IS_WINDOW (self), FALSE);
  return self->load_cancellable != NULL;
}

RpeTensorBrowser *
rpe_window_get_tensor_browser (RpeWindow *self)
{
  g_return_val_if_fail (RPE_IS_WINDOW (self), NULL);
  return self->browser;
}

const char *
rpe_window_get_message (RpeWindow *self)
{
  g_return_val_if_fail (RPE_IS_WINDOW (self), NULL);
  return self->message;
}

gboolean
rpe_window_get_sidebar_visible (RpeWindow *self)
{
  g_return_val_if_fail (RPE_IS_WINDOW (self), FALSE);
  return adw_flap_get_reveal_flap (self->flap);
}

void
rpe_window_set_sidebar_visible (RpeWindow *self,
                                gboolean   visible)
{
  g_return_if_fail (RPE_IS_WINDOW (self));
  adw_flap_set_reveal_flap (self->flap, visible);
}

/* ----------------------------------------------------------------- export */

RpeFigureBundle *
rpe_window_build_figure (RpeWindow     *self,
                         RpeWindowView  view)
{
  g_return_val_if_fail (RPE_IS_WINDOW (self), NULL);
  g_return_val_if_fail ((guint) view < RPE_WINDOW_N_VIEWS, NULL);
  return rpe_figure_page_build_figure (RPE_FIGURE_PAGE (self->views[view]));
}

gboolean
rpe_window_export_view (RpeWindow   *self,
                        const char  *path,
                        GError     **error)
{
  g_autoptr (RpeFigureBundle) bundle = NULL;
  RpeExportFormat format;

  g_return_val_if_fail (RPE_IS_WINDOW (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  if (!rpe_export_format_from_path (path, &format))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          _("cannot tell the format of “%s” (use .png, .svg, .pdf, .csv or .npy)"), path);
  bundle = _rpe_window_current_figure (self);
  if (bundle == NULL)
    return rpe_set_error (error, RPE_ERROR_NOT_FOUND, _("the %s view has nothing to export yet"),
                          adw_view_stack_get_visible_child_name (self->stack));
  return rpe_export_bundle (bundle, NULL, format, NULL, path, NULL, error);
}

RpeExportDialog *
rpe_window_get_export_dialog (RpeWindow *self)
{
  g_return_val_if_fail (RPE_IS_WINDOW (self), NULL);
  return self->export_dialog;
}

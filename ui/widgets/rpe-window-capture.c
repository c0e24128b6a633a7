/* rpe-window-capture.c: Open Capture… (win.open-capture, win.load-capture, drag and drop).
 *
 * A capture (rpe-capture.h) is read and hashed on a worker; on the main loop its layer becomes
 * the content of the explorer state (rpe_explorer_state_set_capture), so that every view draws
 * it.  The layer follows the window's layer of the module (the checkpoint's --layer); a capture
 * the module cannot take is refused in the banner and nothing changes. */
#include "config.h"

#include "rpe-toast-queue.h"
#include "rpe-window-private.h"

#include <string.h>

#include <glib/gi18n.h>

#include "rpe-npz.h"

/* ------------------------------------------------------------ the layer */

/* The capture layer to draw: the window's layer of the module when the capture has it, else the
 * capture's first layer. */
static guint
capture_layer_for (RpeWindow          *self,
                   RpeExplorerCapture *capture)
{
  if (self->source_layer >= 0 && rpe_capture_has_layer (capture->capture, (guint) self->source_layer))
    return (guint) self->source_layer;
  return rpe_capture_n_layers (capture->capture) > 0 ? rpe_capture_layer (capture->capture, 0) : 0;
}

void
_rpe_window_capture_follow_layer (RpeWindow *self)
{
  RpeExplorerCapture *capture = rpe_explorer_state_get_capture (self->state);
  guint layer, now = 0;

  if (capture == NULL || self->source_layer < 0)
    return;
  layer = capture_layer_for (self, capture);
  g_object_get (self->state, "capture-layer", &now, NULL);
  if (layer != now)
    g_object_set (self->state, "capture-layer", layer, NULL);
}

/* ---------------------------------------------------------------- opening */

static void
open_done (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  RpeWindow *self = RPE_WINDOW (source);
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeExplorerCapture) capture = g_task_propagate_pointer (G_TASK (result), &error);
  g_autofree char *base = NULL;

  /* a later open replaced this one */
  if (g_task_get_cancellable (G_TASK (result)) != self->capture_cancellable)
    return;
  g_clear_object (&self->capture_cancellable);
  base = g_filename_display_basename (g_task_get_task_data (G_TASK (result)));
  if (capture == NULL || !rpe_explorer_state_set_capture (self->state, capture, capture_layer_for (self, capture), &error))
    {
      g_autofree char *text = NULL;

      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;
      text = g_strdup_printf (_("Could not use the capture %s: %s. Nothing was changed."), base, error->message);
      _rpe_window_show_message (self, text);
      return;
    }
  if (rpe_capture_n_model_tensors (capture->capture) == 0)
    {
      /* older captures, or ones made with record() only: say that nothing could check them */
      RpeModelPrint   *print = rpe_explorer_state_get_model_print (self->state);
      g_autofree char *text = NULL;

      if (print != NULL)
        text = g_strdup_printf (_("%s records no fingerprint of the model it was made on: that it comes from %s "
                                  "cannot be checked."),
                                base, rpe_model_print_name (print));
      else
        text = g_strdup_printf (_("%s records no fingerprint of the model it was made on: it cannot be checked "
                                  "against a model."),
                                base);
      _rpe_window_show_message (self, text);
    }
  else
    _rpe_window_show_message (self, NULL);
  {
    guint layer = 0;
    const RpeTensor *q;
    g_autofree char *text = NULL;

    g_object_get (self->state, "capture-layer", &layer, NULL);
    q = rpe_capture_get (capture->capture, layer, RPE_CAPTURE_QUERIES);
    text = g_strdup_printf (_("Captured input %s, layer %u: N = %zu positions"), base, layer, (size_t) q->shape[0]);
    rpe_toast_queue_add (self->toasts, adw_toast_new (text));
  }
}

void
rpe_window_open_capture (RpeWindow  *self,
                         const char *path_or_demo)
{
  g_autoptr (GTask) task = NULL;

  g_return_if_fail (RPE_IS_WINDOW (self));
  g_return_if_fail (path_or_demo != NULL);

  if (self->capture_cancellable != NULL)
    g_cancellable_cancel (self->capture_cancellable);
  g_clear_object (&self->capture_cancellable);
  self->capture_cancellable = g_cancellable_new ();
  task = g_task_new (self, self->capture_cancellable, open_done, NULL);
  g_task_set_source_tag (task, rpe_window_open_capture);
  g_task_set_task_data (task, g_strdup (path_or_demo), g_free);
  g_task_run_in_thread (task, rpe_explorer_capture_open_in_task);
}

gboolean
rpe_window_is_opening_capture (RpeWindow *self)
{
  g_return_val_if_fail (RPE_IS_WINDOW (self), FALSE);
  return self->capture_cancellable != NULL;
}

/* A .npz whose members are a capture's (layers.<l>.queries ...), read from its directory only. */
gboolean
_rpe_window_is_capture_file (const char *path)
{
  g_autoptr (GMappedFile) mapped = NULL;
  g_autoptr (RpeZip) zip = NULL;

  if (path == NULL || !g_str_has_suffix (path, ".npz"))
    return FALSE;
  mapped = g_mapped_file_new (path, FALSE, NULL);
  if (mapped == NULL)
    return FALSE;
  zip = rpe_zip_open ((const guint8 *) g_mapped_file_get_contents (mapped), g_mapped_file_get_length (mapped),
                      path, NULL);
  if (zip == NULL)
    return FALSE;
  for (gsize i = 0; i < rpe_zip_n_entries (zip); i++)
    {
      const char *name = rpe_zip_entry_name (zip, i);

      if (g_str_has_prefix (name, "layers.") && g_str_has_suffix (name, ".queries.npy"))
        return TRUE;
    }
  return FALSE;
}

/* A capture held while the module changes (another checkpoint, the other SPE module, a layer the
 * capture lacks): the views then draw unit queries and keys; the banner says so and why. */
static void
state_changed (RpeExplorerState  *state,
               RpeExplorerChange  what,
               RpeWindow         *self)
{
  RpeExplorerCapture *capture = rpe_explorer_state_get_capture (state);
  g_autoptr (GError) error = NULL;
  guint content = 0, layer = 0;

  if ((what & (RPE_EXPLORER_CHANGE_MODULES | RPE_EXPLORER_CHANGE_SPE_KIND | RPE_EXPLORER_CHANGE_CONTENT)) == 0
      || capture == NULL)
    return;
  g_object_get (state, "content", &content, "capture-layer", &layer, NULL);
  if (content != RPE_CONTENT_CAPTURE)
    return;
  if (!rpe_explorer_state_check_capture (state, capture, layer, &error))
    {
      g_autofree char *text = g_strdup_printf (_("The capture does not fit the module shown, so unit queries and keys "
                                                 "are drawn: %s"), error->message);

      _rpe_window_show_message (self, text);
    }
}

void
_rpe_window_capture_init (RpeWindow *self)
{
  g_signal_connect_object (self->state, "changed", G_CALLBACK (state_changed), self, 0);
}

/* ---------------------------------------------------------------- actions */

static void
chooser_response (GtkNativeDialog *dialog,
                  int              response,
                  RpeWindow       *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree char *path = file != NULL ? g_file_get_path (file) : NULL;

      if (path != NULL)
        rpe_window_open_capture (self, path);
      else
        _rpe_window_show_message (self, _("Only local files can be opened."));
    }
  gtk_native_dialog_destroy (dialog);
  if (self->capture_chooser == GTK_FILE_CHOOSER_NATIVE (dialog))
    g_clear_object (&self->capture_chooser);
}

static void
action_open_capture (GtkWidget  *widget,
                     const char *action_name,
                     GVariant   *parameter)
{
  RpeWindow *self = RPE_WINDOW (widget);
  GtkFileFilter *filter;

  if (self->capture_chooser != NULL)
    {
      gtk_native_dialog_destroy (GTK_NATIVE_DIALOG (self->capture_chooser));
      g_clear_object (&self->capture_chooser);
    }
  self->capture_chooser = gtk_file_chooser_native_new (_("Open Capture"), GTK_WINDOW (self),
                                                       GTK_FILE_CHOOSER_ACTION_OPEN, _("_Open"), _("_Cancel"));
  filter = gtk_file_filter_new ();
  gtk_file_filter_set_name (filter, _("Captures (.npz)"));
  gtk_file_filter_add_suffix (filter, "npz");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (self->capture_chooser), filter);
  g_object_unref (filter);
  g_signal_connect (self->capture_chooser, "response", G_CALLBACK (chooser_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (self->capture_chooser));
}

static void
action_load_capture (GtkWidget  *widget,
                     const char *action_name,
                     GVariant   *parameter)
{
  rpe_window_open_capture (RPE_WINDOW (widget), g_variant_get_string (parameter, NULL));
}

static void
action_drop_capture (GtkWidget  *widget,
                     const char *action_name,
                     GVariant   *parameter)
{
  /* back to the module's own view: the content the sidebar's Content row chooses */
  rpe_explorer_state_set_capture (RPE_WINDOW (widget)->state, NULL, 0, NULL);
}

void
_rpe_window_class_capture_init (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "win.open-capture", NULL, action_open_capture);
  gtk_widget_class_install_action (widget_class, "win.load-capture", "s", action_load_capture);
  gtk_widget_class_install_action (widget_class, "win.close-capture", NULL, action_drop_capture);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_o, GDK_CONTROL_MASK | GDK_SHIFT_MASK,
                                       "win.open-capture", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_O, GDK_CONTROL_MASK | GDK_SHIFT_MASK,
                                       "win.open-capture", NULL);
}

void
_rpe_window_capture_dispose (RpeWindow *self)
{
  if (self->capture_cancellable != NULL)
    g_cancellable_cancel (self->capture_cancellable);
  g_clear_object (&self->capture_cancellable);
  if (self->capture_chooser != NULL)
    {
      gtk_native_dialog_destroy (GTK_NATIVE_DIALOG (self->capture_chooser));
      g_clear_object (&self->capture_chooser);
    }
}

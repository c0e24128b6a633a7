/* rpe-window-undo.c: Undo and Redo of parameter edits (win.undo, win.redo,
 * Ctrl+Z, Shift+Ctrl+Z), named in the main menu after the edit. */
#include "config.h"

#include "rpe-window-private.h"

#include <glib/gi18n.h>

static void
update_undo (RpeWindow *self)
{
  const char *u = rpe_undo_get_undo_label (self->undo);
  const char *r = rpe_undo_get_redo_label (self->undo);
  g_autofree char *undo_label = u != NULL ? g_strdup_printf (_("_Undo %s"), u) : g_strdup (_("_Undo"));
  g_autofree char *redo_label = r != NULL ? g_strdup_printf (_("_Redo %s"), r) : g_strdup (_("_Redo"));

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.undo", u != NULL);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.redo", r != NULL);
  if (self->undo_menu == NULL)
    return;
  g_menu_remove_all (self->undo_menu);
  g_menu_append (self->undo_menu, undo_label, "win.undo");
  g_menu_append (self->undo_menu, redo_label, "win.redo");
}

static void
action_undo (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  RpeWindow *self = RPE_WINDOW (widget);

  rpe_undo_undo (self->undo);
}

static void
action_redo (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  RpeWindow *self = RPE_WINDOW (widget);

  rpe_undo_redo (self->undo);
}

/* A release ends a drag or a key press over an editor: the next edit of the
 * same array is a new step. */
static gboolean
seal_on_release (GtkEventControllerLegacy *controller,
                 GdkEvent                 *event,
                 RpeWindow                *self)
{
  GdkEventType type = gdk_event_get_event_type (event);

  if (type == GDK_BUTTON_RELEASE || type == GDK_KEY_RELEASE || type == GDK_TOUCH_END)
    rpe_undo_seal (self->undo);
  return FALSE;
}

void
_rpe_window_class_undo_init (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "win.undo", NULL, action_undo);
  gtk_widget_class_install_action (widget_class, "win.redo", NULL, action_redo);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_z, GDK_CONTROL_MASK, "win.undo", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_z, GDK_CONTROL_MASK | GDK_SHIFT_MASK, "win.redo", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Z, GDK_CONTROL_MASK | GDK_SHIFT_MASK, "win.redo", NULL);
}

void
_rpe_window_undo_init (RpeWindow *self)
{
  GtkEventController *legacy = gtk_event_controller_legacy_new ();

  /* from here on (the demo and the saved settings are not edits) */
  self->undo = rpe_undo_new (self->state);
  g_signal_connect_object (self->undo, "changed", G_CALLBACK (update_undo), self, G_CONNECT_SWAPPED);
  gtk_event_controller_set_propagation_phase (legacy, GTK_PHASE_CAPTURE);
  g_signal_connect (legacy, "event", G_CALLBACK (seal_on_release), self);
  gtk_widget_add_controller (GTK_WIDGET (self), legacy);
  update_undo (self);
}

RpeUndo *
rpe_window_get_undo (RpeWindow *self)
{
  g_return_val_if_fail (RPE_IS_WINDOW (self), NULL);
  return self->undo;
}

/* A history that starts over (an opened session is a new document). */
void
_rpe_window_reset_undo (RpeWindow *self)
{
  if (self->undo != NULL)
    g_signal_handlers_disconnect_by_func (self->undo, update_undo, self);
  g_clear_object (&self->undo);
  self->undo = rpe_undo_new (self->state);
  g_signal_connect_object (self->undo, "changed", G_CALLBACK (update_undo), self, G_CONNECT_SWAPPED);
  update_undo (self);
}

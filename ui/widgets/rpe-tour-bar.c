/* rpe-tour-bar.c: the guided tour bar (see rpe-tour-bar.h). */
#include "config.h"

#include <adwaita.h>
#include <glib/gi18n.h>

#include "rpe-checkpoint.h"
#include "rpe-demos.h"
#include "rpe-tour-bar.h"
#include "rpe-tour.h"
#include "rpe-window-private.h"

struct _RpeTourBar
{
  GtkBox          parent_instance;

  RpeWindow      *window;     /* weak: the window owns the bar */
  RpeTourMemento *saved;
  const RpeTourStep *steps;
  guint           n_steps;
  guint           step;
  gboolean        shown;
  GtkWidget      *target;     /* the highlighted sidebar group (ref) */

  GtkLabel       *title;
  GtkLabel       *text;
  GtkButton      *show_button;
  GtkButton      *back_button;
  GtkButton      *next_button;
};

G_DEFINE_FINAL_TYPE (RpeTourBar, rpe_tour_bar, GTK_TYPE_BOX)

#define TARGET_CLASS "rpe-tour-target"

static void
set_target (RpeTourBar *self,
            GtkWidget  *target)
{
  if (self->target != NULL)
    {
      gtk_widget_remove_css_class (self->target, TARGET_CLASS);
      g_clear_object (&self->target);
    }
  if (target != NULL)
    {
      self->target = g_object_ref (target);
      gtk_widget_add_css_class (target, TARGET_CLASS);
    }
}

/* The sidebar group titled `title` (AdwPreferencesGroup children of the sidebar box). */
static GtkWidget *
find_group (RpeTourBar *self,
            const char *title)
{
  if (title == NULL || self->window == NULL)
    return NULL;
  for (GtkWidget *c = gtk_widget_get_first_child (GTK_WIDGET (self->window->sidebar)); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    if (ADW_IS_PREFERENCES_GROUP (c) && g_strcmp0 (adw_preferences_group_get_title (ADW_PREFERENCES_GROUP (c)), title) == 0)
      return c;
  return NULL;
}

/* Opens a trained demo's SPE module at once (the demos are a few hundred kilobytes, embedded). */
static void
load_demo (RpeTourBar *self,
           const char *spec)
{
  RpeExplorerState *state = rpe_window_get_state (self->window);
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeTensorSet) set = rpe_demos_read (spec, &error);
  g_autoptr (GPtrArray) modules = NULL;
  RpeSpeParams params = { 0 };
  g_autofree char *source = NULL;

  if (set == NULL || (modules = rpe_checkpoint_find_modules (set))->len == 0
      || !rpe_checkpoint_load_spe (set, NULL, -1, &params, &error))
    {
      g_autofree char *text = g_strdup_printf (_("The tour could not open %s: %s"), spec,
                                               error != NULL ? error->message : _("no SPE module"));
      _rpe_window_show_message (self->window, text);
      return;
    }
  source = g_strdup_printf ("trained demo %s", spec + strlen ("demo:"));
  if (params.method == RPE_SPE_SINE)
    rpe_explorer_state_set_modules (state, &params, source, NULL, NULL, NULL);
  else
    rpe_explorer_state_set_modules (state, NULL, NULL, &params, source, NULL);
  g_object_set (state, "spe-kind", params.method, NULL);
  rpe_spe_params_clear (&params);
}

static void
update (RpeTourBar *self)
{
  const RpeTourStep *s = &self->steps[self->step];
  g_autofree char *title = g_strdup_printf (_("Step %u of %u: %s"), self->step + 1, self->n_steps, _(s->title));
  g_autofree char *text = NULL;

  gtk_label_set_text (self->title, title);
  if (self->shown)
    text = s->explain_text != NULL ? s->explain_text () : g_strdup (_(s->explain));
  else if (s->control != NULL)
    text = g_strdup_printf (_("%s  (The control that matters: the highlighted “%s” group.)"), _(s->predict),
                            _(s->control));
  else
    text = g_strdup (_(s->predict));
  gtk_label_set_text (self->text, text);
  gtk_widget_set_sensitive (GTK_WIDGET (self->show_button), !self->shown);
  gtk_widget_set_sensitive (GTK_WIDGET (self->back_button), self->step > 0);
  gtk_button_set_label (self->next_button, self->step + 1 < self->n_steps ? _("Next") : _("Finish"));
}

static void
enter_step (RpeTourBar *self,
            guint       step)
{
  const RpeTourStep *s;
  RpeExplorerState *state;

  if (self->window == NULL)
    return;
  state = rpe_window_get_state (self->window);
  self->step = step;
  self->shown = FALSE;
  s = &self->steps[step];
  if (s->demo != NULL)
    load_demo (self, s->demo);
  if (s->setup != NULL)
    s->setup (state);
  rpe_window_set_view (self->window, (RpeWindowView) s->view);
  if (s->control != NULL)
    adw_flap_set_reveal_flap (self->window->flap, TRUE);
  /* the sidebar's group titles are translated: so is the step's */
  set_target (self, find_group (self, s->control != NULL ? _(s->control) : NULL));
  update (self);
}

void
rpe_tour_bar_start (RpeTourBar *self)
{
  g_return_if_fail (RPE_IS_TOUR_BAR (self));
  if (self->window == NULL)
    return;
  if (self->saved == NULL)
    self->saved = rpe_tour_memento_save (rpe_window_get_state (self->window),
                                         (guint) rpe_window_get_view (self->window));
  gtk_widget_set_visible (GTK_WIDGET (self), TRUE);
  enter_step (self, 0);
}

gboolean
rpe_tour_bar_is_running (RpeTourBar *self)
{
  g_return_val_if_fail (RPE_IS_TOUR_BAR (self), FALSE);
  return self->saved != NULL;
}

guint
rpe_tour_bar_get_step (RpeTourBar *self)
{
  return self->step;
}

guint
rpe_tour_bar_get_n_steps (RpeTourBar *self)
{
  return self->n_steps;
}

gboolean
rpe_tour_bar_get_shown (RpeTourBar *self)
{
  return self->shown;
}

GtkWidget *
rpe_tour_bar_get_target (RpeTourBar *self)
{
  return self->target;
}

void
rpe_tour_bar_show_me (RpeTourBar *self)
{
  g_return_if_fail (RPE_IS_TOUR_BAR (self));
  if (self->saved == NULL || self->shown || self->window == NULL)
    return;
  if (self->steps[self->step].show != NULL)
    self->steps[self->step].show (rpe_window_get_state (self->window));
  self->shown = TRUE;
  update (self);
}

void
rpe_tour_bar_leave (RpeTourBar *self)
{
  g_autoptr (RpeTourMemento) saved = NULL;

  g_return_if_fail (RPE_IS_TOUR_BAR (self));
  saved = g_steal_pointer (&self->saved);
  set_target (self, NULL);
  gtk_widget_set_visible (GTK_WIDGET (self), FALSE);
  if (saved == NULL || self->window == NULL)
    return;
  rpe_tour_memento_restore (saved, rpe_window_get_state (self->window));
  rpe_window_set_view (self->window, (RpeWindowView) rpe_tour_memento_view (saved));
}

void
rpe_tour_bar_next (RpeTourBar *self)
{
  g_return_if_fail (RPE_IS_TOUR_BAR (self));
  if (self->saved == NULL)
    return;
  if (self->step + 1 < self->n_steps)
    enter_step (self, self->step + 1);
  else
    rpe_tour_bar_leave (self);
}

void
rpe_tour_bar_back (RpeTourBar *self)
{
  g_return_if_fail (RPE_IS_TOUR_BAR (self));
  if (self->saved != NULL && self->step > 0)
    enter_step (self, self->step - 1);
}

static void
rpe_tour_bar_dispose (GObject *object)
{
  RpeTourBar *self = RPE_TOUR_BAR (object);

  set_target (self, NULL);
  g_clear_pointer (&self->saved, rpe_tour_memento_free);
  if (self->window != NULL)
    g_object_remove_weak_pointer (G_OBJECT (self->window), (gpointer *) &self->window);
  self->window = NULL;
  G_OBJECT_CLASS (rpe_tour_bar_parent_class)->dispose (object);
}

static void
rpe_tour_bar_class_init (RpeTourBarClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = rpe_tour_bar_dispose;
  gtk_widget_class_set_css_name (GTK_WIDGET_CLASS (klass), "tourbar");
}

static GtkWidget *
button_new (RpeTourBar  *self,
            const char  *label,
            const char  *tooltip,
            GCallback    callback)
{
  GtkWidget *button = gtk_button_new_with_mnemonic (label);

  gtk_widget_set_tooltip_text (button, tooltip);
  gtk_widget_set_valign (button, GTK_ALIGN_CENTER);
  g_signal_connect_swapped (button, "clicked", callback, self);
  return button;
}

static void
rpe_tour_bar_init (RpeTourBar *self)
{
  GtkWidget *texts = gtk_box_new (GTK_ORIENTATION_VERTICAL, 4);
  GtkWidget *leave;

  self->steps = rpe_tour_get_steps (&self->n_steps);
  gtk_orientable_set_orientation (GTK_ORIENTABLE (self), GTK_ORIENTATION_HORIZONTAL);
  gtk_box_set_spacing (GTK_BOX (self), 12);
  gtk_widget_add_css_class (GTK_WIDGET (self), "rpe-tour");
  self->title = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_xalign (self->title, 0);
  gtk_widget_add_css_class (GTK_WIDGET (self->title), "heading");
  self->text = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_xalign (self->text, 0);
  gtk_label_set_wrap (self->text, TRUE);
  gtk_label_set_max_width_chars (self->text, 90);
  gtk_box_append (GTK_BOX (texts), GTK_WIDGET (self->title));
  gtk_box_append (GTK_BOX (texts), GTK_WIDGET (self->text));
  gtk_widget_set_hexpand (texts, TRUE);
  gtk_box_append (GTK_BOX (self), texts);

  self->show_button = GTK_BUTTON (button_new (self, _("_Show Me"), _("Apply the change you predicted"),
                                              G_CALLBACK (rpe_tour_bar_show_me)));
  gtk_widget_add_css_class (GTK_WIDGET (self->show_button), "suggested-action");
  self->back_button = GTK_BUTTON (button_new (self, _("_Back"), _("The previous step"), G_CALLBACK (rpe_tour_bar_back)));
  self->next_button = GTK_BUTTON (button_new (self, _("_Next"), _("The next step"), G_CALLBACK (rpe_tour_bar_next)));
  leave = button_new (self, _("_Leave Tour"), _("Leave the tour and restore what you had before it"),
                      G_CALLBACK (rpe_tour_bar_leave));
  gtk_widget_add_css_class (leave, "flat");
  gtk_box_append (GTK_BOX (self), GTK_WIDGET (self->show_button));
  gtk_box_append (GTK_BOX (self), GTK_WIDGET (self->back_button));
  gtk_box_append (GTK_BOX (self), GTK_WIDGET (self->next_button));
  gtk_box_append (GTK_BOX (self), leave);
  gtk_widget_set_visible (GTK_WIDGET (self), FALSE);
}

GtkWidget *
rpe_tour_bar_new (RpeWindow *window)
{
  RpeTourBar *self = g_object_new (RPE_TYPE_TOUR_BAR, NULL);

  self->window = window;
  g_object_add_weak_pointer (G_OBJECT (window), (gpointer *) &self->window);
  return GTK_WIDGET (self);
}

const char *
rpe_tour_bar_get_text (RpeTourBar *self)
{
  g_return_val_if_fail (RPE_IS_TOUR_BAR (self), NULL);
  return gtk_label_get_text (self->text);
}

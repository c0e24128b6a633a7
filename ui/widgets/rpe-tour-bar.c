/* rpe-tour-bar.c: the guided tour bar (see rpe-tour-bar.h). */
#include "config.h"

#include <glib/gi18n.h>

#include "rpe-tour-bar.h"
#include "rpe-tour.h"

struct _RpeTourBar
{
  GtkBox             parent_instance;

  RpeExplorerState  *state;
  RpeTourMemento    *saved;
  const RpeTourStep *steps;
  guint              n_steps;
  guint              step;
  gboolean           shown;
  GtkWidget         *target;     /* the highlighted sidebar group (ref) */

  GtkLabel          *title;
  GtkLabel          *text;
  GtkButton         *show_button;
  GtkButton         *back_button;
  GtkButton         *next_button;
};

G_DEFINE_FINAL_TYPE (RpeTourBar, rpe_tour_bar, GTK_TYPE_BOX)

enum { STARTED, FINISHED, LOAD_DEMO, SHOW_CONTROL, N_SIGNALS };
static guint signals[N_SIGNALS];

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

static void
update (RpeTourBar *self)
{
  const RpeTourStep *s = &self->steps[self->step];
  g_autofree char *title = g_strdup_printf (_("Step %u of %u: %s"), self->step + 1, self->n_steps, _(s->title));
  g_autofree char *text = NULL;

  gtk_label_set_text (self->title, title);
  /* the steps' texts are markup (P̃<sub>d</sub>, N<sub>train</sub>) */
  if (self->shown)
    text = g_strdup (_(s->explain));
  else if (s->control != NULL)
    {
      g_autofree char *control = g_markup_escape_text (_(s->control), -1);

      text = g_strdup_printf (_("%s  (The control that matters: the highlighted “%s” group.)"), _(s->predict), control);
    }
  else
    text = g_strdup (_(s->predict));
  gtk_label_set_markup (self->text, text);
  gtk_widget_set_sensitive (GTK_WIDGET (self->show_button), !self->shown);
  gtk_widget_set_sensitive (GTK_WIDGET (self->back_button), self->step > 0);
  gtk_button_set_label (self->next_button, self->step + 1 < self->n_steps ? _("_Next") : _("_Finish"));
}

static void
enter_step (RpeTourBar *self,
            guint       step)
{
  const RpeTourStep *s;
  GtkWidget *target = NULL;
  gboolean loaded = FALSE;

  self->step = step;
  self->shown = FALSE;
  s = &self->steps[step];
  if (s->demo != NULL)
    g_signal_emit (self, signals[LOAD_DEMO], 0, s->demo, &loaded);
  if (s->setup != NULL)
    s->setup (self->state);
  gtk_widget_activate_action (GTK_WIDGET (self), "win.view", "i", (int) s->view + 1);
  /* the sidebar's group titles are translated: so is the step's */
  if (s->control != NULL)
    g_signal_emit (self, signals[SHOW_CONTROL], 0, _(s->control), &target);
  set_target (self, target);
  g_clear_object (&target);
  update (self);
}

void
rpe_tour_bar_start (RpeTourBar *self)
{
  g_return_if_fail (RPE_IS_TOUR_BAR (self));
  if (self->saved == NULL)
    {
      self->saved = rpe_tour_memento_save (self->state, 0);
      g_signal_emit (self, signals[STARTED], 0);
    }
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
  g_return_val_if_fail (RPE_IS_TOUR_BAR (self), 0);
  return self->step;
}

guint
rpe_tour_bar_get_n_steps (RpeTourBar *self)
{
  g_return_val_if_fail (RPE_IS_TOUR_BAR (self), 0);
  return self->n_steps;
}

gboolean
rpe_tour_bar_get_shown (RpeTourBar *self)
{
  g_return_val_if_fail (RPE_IS_TOUR_BAR (self), FALSE);
  return self->shown;
}

GtkWidget *
rpe_tour_bar_get_target (RpeTourBar *self)
{
  g_return_val_if_fail (RPE_IS_TOUR_BAR (self), NULL);
  return self->target;
}

const char *
rpe_tour_bar_get_text (RpeTourBar *self)
{
  g_return_val_if_fail (RPE_IS_TOUR_BAR (self), NULL);
  return gtk_label_get_label (self->text);
}

void
rpe_tour_bar_show_me (RpeTourBar *self)
{
  g_return_if_fail (RPE_IS_TOUR_BAR (self));
  if (self->saved == NULL || self->shown)
    return;
  if (self->steps[self->step].show != NULL)
    self->steps[self->step].show (self->state);
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
  if (saved == NULL)
    return;
  rpe_tour_memento_restore (saved, self->state);
  g_signal_emit (self, signals[FINISHED], 0);
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
  g_clear_object (&self->state);
  G_OBJECT_CLASS (rpe_tour_bar_parent_class)->dispose (object);
}

static void
rpe_tour_bar_class_init (RpeTourBarClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = rpe_tour_bar_dispose;
  gtk_widget_class_set_css_name (GTK_WIDGET_CLASS (klass), "tourbar");

  /**
   * RpeTourBar::started:
   *
   * The tour starts (the explorer state is saved): keep what else it may change.
   */
  signals[STARTED] = g_signal_new ("started", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                   G_TYPE_NONE, 0);
  /**
   * RpeTourBar::finished:
   *
   * The tour ended (finished or left) and the explorer state is restored: restore the rest.
   */
  signals[FINISHED] = g_signal_new ("finished", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                    G_TYPE_NONE, 0);
  /**
   * RpeTourBar::load-demo:
   * @spec: "demo:NAME"
   *
   * Open the step's trained demo now.  Returns: whether it was.
   */
  signals[LOAD_DEMO] = g_signal_new ("load-demo", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                     g_signal_accumulator_first_wins, NULL, NULL, G_TYPE_BOOLEAN, 1, G_TYPE_STRING);
  /**
   * RpeTourBar::show-control:
   * @title: the (translated) title of the sidebar group that matters
   *
   * Reveal that group (sidebar shown, scrolled to it).  Returns: (transfer full): the group, or NULL.
   */
  signals[SHOW_CONTROL] = g_signal_new ("show-control", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                        g_signal_accumulator_first_wins, NULL, NULL, GTK_TYPE_WIDGET, 1,
                                        G_TYPE_STRING);
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
rpe_tour_bar_new (RpeExplorerState *state)
{
  RpeTourBar *self;

  g_return_val_if_fail (RPE_IS_EXPLORER_STATE (state), NULL);
  self = g_object_new (RPE_TYPE_TOUR_BAR, NULL);
  self->state = g_object_ref (state);
  return GTK_WIDGET (self);
}

/* rpe-job-progress.c: percent done, time left and caps in the views. */
#include "config.h"

#include <glib/gi18n.h>

#include "rpe-job-progress.h"

void
rpe_job_progress_begin (GtkProgressBar      *bar,
                        RpeProgressEstimate *estimate)
{
  g_return_if_fail (GTK_IS_PROGRESS_BAR (bar) && estimate != NULL);
  rpe_progress_estimate_start (estimate, NULL, NULL);
  gtk_progress_bar_set_fraction (bar, 0.0);
  gtk_progress_bar_set_show_text (bar, TRUE);
  gtk_progress_bar_set_text (bar, "0 %");
}

void
rpe_job_progress_update (GtkProgressBar      *bar,
                         RpeProgressEstimate *estimate,
                         double               fraction)
{
  g_autofree char *text = NULL;

  g_return_if_fail (GTK_IS_PROGRESS_BAR (bar) && estimate != NULL);
  rpe_progress_estimate_update (estimate, fraction);
  text = rpe_progress_estimate_format (estimate);
  gtk_progress_bar_set_fraction (bar, estimate->fraction);
  gtk_progress_bar_set_text (bar, text);
}

void
rpe_cap_bar_init (RpeCapBar *bar,
                  GCallback  clicked,
                  gpointer   data)
{
  g_return_if_fail (bar != NULL);
  bar->box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  gtk_widget_add_css_class (bar->box, "rpe-cap-bar");
  bar->label = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_wrap (bar->label, TRUE);
  gtk_label_set_natural_wrap_mode (bar->label, GTK_NATURAL_WRAP_WORD);   /* never the window's natural width */
  gtk_label_set_xalign (bar->label, 0.0);
  gtk_widget_set_hexpand (GTK_WIDGET (bar->label), TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (bar->label), "dim-label");
  gtk_box_append (GTK_BOX (bar->box), GTK_WIDGET (bar->label));
  bar->button = gtk_button_new_with_mnemonic (_("Compute at _Full N"));
  gtk_widget_set_tooltip_text (bar->button,
                               _("Compute once at the N asked (with progress and Cancel); "
                                 "refused if it does not fit in the memory budget"));
  gtk_widget_set_valign (bar->button, GTK_ALIGN_CENTER);
  g_signal_connect (bar->button, "clicked", clicked, data);
  gtk_box_append (GTK_BOX (bar->box), bar->button);
  gtk_widget_set_visible (bar->box, FALSE);
}

void
rpe_cap_bar_set (RpeCapBar  *bar,
                 gsize       n,
                 gsize       n_asked,
                 const char *note)
{
  GString *text = g_string_new (NULL);
  gboolean capped = n > 0 && n < n_asked;

  if (capped)
    g_string_append_printf (text, _("Computed at N = %zu of %zu."), n, n_asked);
  if (note != NULL && note[0] != '\0')
    g_string_append_printf (text, "%s%s", text->len > 0 ? " " : "", note);
  gtk_label_set_text (bar->label, text->str);
  gtk_widget_set_visible (bar->button, capped);
  gtk_widget_set_visible (bar->box, text->len > 0);
  g_string_free (text, TRUE);
}

void
rpe_job_bar_init (RpeJobBar *bar,
                  GCallback  cancel_clicked,
                  GCallback  full_clicked,
                  gpointer   data)
{
  g_return_if_fail (bar != NULL);
  bar->box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 4);
  bar->progress_row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 8);
  bar->progress = GTK_PROGRESS_BAR (gtk_progress_bar_new ());
  gtk_progress_bar_set_show_text (bar->progress, TRUE);
  gtk_widget_set_hexpand (GTK_WIDGET (bar->progress), TRUE);
  gtk_widget_set_valign (GTK_WIDGET (bar->progress), GTK_ALIGN_CENTER);
  gtk_box_append (GTK_BOX (bar->progress_row), GTK_WIDGET (bar->progress));
  bar->cancel = gtk_button_new_with_label (_("Cancel"));
  gtk_widget_set_tooltip_text (bar->cancel, _("Stop this computation (the maps shown stay, marked stale)"));
  g_signal_connect (bar->cancel, "clicked", cancel_clicked, data);
  gtk_box_append (GTK_BOX (bar->progress_row), bar->cancel);
  gtk_widget_set_visible (bar->progress_row, FALSE);
  gtk_box_append (GTK_BOX (bar->box), bar->progress_row);
  rpe_cap_bar_init (&bar->cap, full_clicked, data);
  gtk_box_append (GTK_BOX (bar->box), bar->cap.box);
}

void
rpe_job_bar_begin (RpeJobBar *bar)
{
  g_return_if_fail (bar != NULL);
  rpe_job_progress_begin (bar->progress, &bar->estimate);
  gtk_widget_set_visible (bar->progress_row, TRUE);
}

void
rpe_job_bar_progress (RpeJobBar *bar,
                      double     fraction)
{
  g_return_if_fail (bar != NULL);
  rpe_job_progress_update (bar->progress, &bar->estimate, fraction);
}

void
rpe_job_bar_set_busy (RpeJobBar *bar,
                      gboolean   busy)
{
  g_return_if_fail (bar != NULL);
  gtk_widget_set_visible (bar->progress_row, busy);
}

const char *
rpe_job_bar_get_cap_text (RpeJobBar *bar)
{
  return gtk_widget_get_visible (bar->cap.box) ? gtk_label_get_text (bar->cap.label) : "";
}

gboolean
rpe_job_full_n_allowed (RpeComputeJobKind  kind,
                        RpeExplorerState  *state,
                        char             **refusal)
{
  g_autoptr (RpeExplorerSnapshot) s = rpe_explorer_state_snapshot (state);
  g_autoptr (GError) error = NULL;

  g_clear_pointer (refusal, g_free);
  if (rpe_compute_check_budget (kind, s, s->n, &error))
    return TRUE;
  *refusal = g_strdup_printf (_("Not computed at full N: %s."), error->message);
  return FALSE;
}

/* rpe-application.c: the RPE Studio application: app.quit, app.about, and a
 * new window on every activation. */
#include "config.h"

#include <glib/gi18n.h>

#include "rpe-application.h"
#include "rpe-window.h"

struct _RpeApplication
{
  AdwApplication parent_instance;
};

G_DEFINE_FINAL_TYPE (RpeApplication, rpe_application, ADW_TYPE_APPLICATION)

static void
rpe_application_activate (GApplication *app)
{
  RpeWindow *window = rpe_window_new (GTK_APPLICATION (app));

  gtk_window_present (GTK_WINDOW (window));
}

/* rpe-studio FILE...: each file in a window of its own (the running
 * instance opens them when there is one: GApplication forwards the files). */
static void
rpe_application_open (GApplication  *app,
                      GFile        **files,
                      int            n_files,
                      const char    *hint)
{
  for (int i = 0; i < n_files; i++)
    {
      RpeWindow *window = rpe_window_new (GTK_APPLICATION (app));

      rpe_window_open_file (window, files[i]);
      gtk_window_present (GTK_WINDOW (window));
    }
}

/* Quit closes every window as Close does: each saves its size, view and colour map and asks
 * about an unsaved session first; the application ends with its last window. */
static void
action_quit (GSimpleAction *action,
             GVariant      *parameter,
             gpointer       user_data)
{
  g_autoptr (GPtrArray) windows = g_ptr_array_new_with_free_func (g_object_unref);

  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (user_data)); l != NULL; l = l->next)
    g_ptr_array_add (windows, g_object_ref (l->data));
  for (guint i = 0; i < windows->len; i++)
    gtk_window_close (GTK_WINDOW (g_ptr_array_index (windows, i)));
}

static void
action_about (GSimpleAction *action,
              GVariant      *parameter,
              gpointer       user_data)
{
  GtkApplication *app = GTK_APPLICATION (user_data);
  static const char *developers[] = { "The RPE Studio developers", NULL };
  GtkWidget *about;

  about = g_object_new (ADW_TYPE_ABOUT_WINDOW,
                        "transient-for", gtk_application_get_active_window (app),
                        "application-name", _("RPE Studio"),
                        "application-icon", APPLICATION_ID,
                        "version", PACKAGE_VERSION,
                        "developer-name", _("The RPE Studio developers"),
                        "developers", developers,
                        "comments", _("See and measure relative positional encodings in linear transformers: "
                                      "stochastic positional encoding (sine and convolutional SPE), "
                                      "their templates, attention maps and measurements."),
                        /* Translators: your name(s), one a line, shown in About's credits */
                        "translator-credits", _("translator-credits"),
                        "website", "https://github.com/rpestudio/rpe-studio",
                        "issue-url", "https://github.com/rpestudio/rpe-studio/issues",
                        "license-type", GTK_LICENSE_GPL_3_0,
                        "copyright", _("© The RPE Studio developers"),
                        NULL);
  adw_about_window_add_legal_section (ADW_ABOUT_WINDOW (about),
                                      _("Colour maps"),
                                      _("viridis, magma, inferno: Nathaniel J. Smith, Stefan van der Walt "
                                        "(and Eric Firing); cividis: Jamie R. Nunez, Christopher R. Anderton, "
                                        "Ryan S. Renslow; RdBu: Cynthia A. Brewer (ColorBrewer). "
                                        "Tables as distributed with matplotlib."),
                                      GTK_LICENSE_CUSTOM,
                                      _("viridis, magma and inferno are released under CC0 1.0."));
  gtk_window_present (GTK_WINDOW (about));
}

static const GActionEntry app_actions[] = {
  { "quit", action_quit, NULL, NULL, NULL, { 0 } },
  { "about", action_about, NULL, NULL, NULL, { 0 } },
};

static void
rpe_application_startup (GApplication *app)
{
  static const char *quit_accels[] = { "<Control>q", NULL };

  G_APPLICATION_CLASS (rpe_application_parent_class)->startup (app);

  g_action_map_add_action_entries (G_ACTION_MAP (app), app_actions, G_N_ELEMENTS (app_actions), app);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "app.quit", quit_accels);
}

static void
rpe_application_class_init (RpeApplicationClass *klass)
{
  GApplicationClass *app_class = G_APPLICATION_CLASS (klass);

  app_class->activate = rpe_application_activate;
  app_class->open = rpe_application_open;
  app_class->startup = rpe_application_startup;
}

static void
rpe_application_init (RpeApplication *self)
{
}

RpeApplication *
rpe_application_new (void)
{
  /* one property a line */
  /* clang-format off */
  RpeApplication *app = g_object_new (RPE_TYPE_APPLICATION,
                                      "application-id", APPLICATION_ID,
                                      "flags", G_APPLICATION_HANDLES_OPEN,
                                      "resource-base-path", "/io/github/rpestudio/RpeStudio",
                                      NULL);
  /* clang-format on */

  /* --help says what rpe-studio(1) says */
  g_application_set_option_context_parameter_string (G_APPLICATION (app), _("[FILE…]"));
  g_application_set_option_context_summary (G_APPLICATION (app),
                                            _("Opens each FILE, a checkpoint (.safetensors, .pt, .npz, .npy) or a "
                                              "session (.rpe-session), in a window of its own; without one, the "
                                              "embedded demo.  See rpe-studio(1); rpe(1) is the command-line tool."));
  return app;
}

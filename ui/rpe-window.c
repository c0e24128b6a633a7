/* rpe-window.c: the main window.  For now it shows the analytic templates
 * (MATH.md sections 1-3) of the embedded demo checkpoint's sine and conv
 * modules, one small multiple per feature d of the chosen head. */
#include "config.h"

#include "rpe-window-private.h"

#include <math.h>

#include "rpe-checkpoint.h"

G_DEFINE_FINAL_TYPE (RpeWindow, rpe_window, ADW_TYPE_APPLICATION_WINDOW)

/* Parameters drawn when the demo cannot be loaded. */
#define FALLBACK_HEADS     4
#define FALLBACK_FEATURES  16
#define FALLBACK_SINES     5
#define FALLBACK_KERNEL    12

typedef struct
{
  GWeakRef        window;
  RpeWindowPaneId pane;
} PaneRequest;

static void
pane_request_free (PaneRequest *request)
{
  g_weak_ref_clear (&request->window);
  g_free (request);
}

static const char *
method_name (RpeSpeMethod method)
{
  return method == RPE_SPE_SINE ? "sine" : "conv";
}

/* ---------------------------------------------------------------- loading */

static void
append_message (RpeWindow  *self,
                const char *text)
{
  char *joined = self->message != NULL
                 ? g_strconcat (self->message, "\n", text, NULL)
                 : g_strdup (text);

  g_free (self->message);
  self->message = joined;
}

/* Loads the demo's modules into the panes; returns why it failed (or NULL). */
static char *
load_demo (RpeWindow *self)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) bytes = NULL;
  g_autoptr (RpeTensorSet) set = NULL;
  g_autoptr (GPtrArray) modules = NULL;
  GString *why = NULL;

  bytes = g_resources_lookup_data (RPE_DEMO_RESOURCE, G_RESOURCE_LOOKUP_FLAGS_NONE, &error);
  if (bytes != NULL)
    set = rpe_checkpoint_read_bytes (bytes, "demo.safetensors", &error);
  if (set == NULL)
    return g_strdup_printf ("The demo checkpoint could not be read: %s",
                            error != NULL ? error->message : "unknown error");

  modules = rpe_checkpoint_find_modules (set);
  for (guint p = 0; p < RPE_WINDOW_N_PANES; p++)
    {
      RpeWindowPane *pane = &self->panes[p];
      const RpeSpeModuleInfo *found = NULL;
      g_autoptr (GError) load_error = NULL;

      for (guint i = 0; modules != NULL && i < modules->len && found == NULL; i++)
        {
          const RpeSpeModuleInfo *info = g_ptr_array_index (modules, i);

          if (info->method == pane->method)
            found = info;
        }
      if (found == NULL)
        {
          if (why == NULL)
            why = g_string_new (NULL);
          g_string_append_printf (why, "%sThe demo checkpoint has no %s module.",
                                  why->len > 0 ? "\n" : "", method_name (pane->method));
          continue;
        }
      if (!rpe_checkpoint_load_spe (set, found->prefix, -1, &pane->params, &load_error))
        {
          if (why == NULL)
            why = g_string_new (NULL);
          g_string_append_printf (why, "%sThe demo's %s module could not be loaded: %s",
                                  why->len > 0 ? "\n" : "", found->prefix, load_error->message);
          continue;
        }
      pane->have_params = TRUE;
      pane->from_demo = TRUE;
      pane->module_name = g_strdup (found->prefix);
    }
  return why != NULL ? g_string_free (why, FALSE) : NULL;
}

static void
load_parameters (RpeWindow *self)
{
  g_autofree char *why = load_demo (self);

  if (why != NULL)
    append_message (self, why);

  for (guint p = 0; p < RPE_WINDOW_N_PANES; p++)
    {
      RpeWindowPane *pane = &self->panes[p];
      RpeStatus status;

      if (pane->have_params)
        continue;
      rpe_spe_params_clear (&pane->params);
      status = rpe_spe_params_init (&pane->params, pane->method, FALLBACK_HEADS, FALLBACK_FEATURES,
                                    pane->method == RPE_SPE_SINE ? FALLBACK_SINES : FALLBACK_KERNEL,
                                    TRUE);
      if (status == RPE_OK)
        status = rpe_spe_params_random (&pane->params, 1 + p);
      if (status == RPE_OK)
        {
          g_autofree char *text = g_strdup_printf ("Showing random %s parameters instead.",
                                                   method_name (pane->method));
          pane->have_params = TRUE;
          append_message (self, text);
        }
      else
        {
          g_autofree char *text = g_strdup_printf ("Random %s parameters failed too: %s",
                                                   method_name (pane->method),
                                                   rpe_status_to_string (status));
          rpe_spe_params_clear (&pane->params);
          append_message (self, text);
        }
    }

  if (self->message != NULL)
    {
      gtk_label_set_text (self->message_label, self->message);
      gtk_revealer_set_reveal_child (self->message_revealer, TRUE);
    }
}

/* ------------------------------------------------------------------ panes */

static void
pane_set_caption (RpeWindowPane *pane,
                  const char    *text)
{
  gtk_label_set_text (pane->caption, text);
}

static void
pane_update_views (RpeWindowPane *pane,
                   RpeTemplates  *templates)
{
  gsize d_count = templates->n_features;
  guint columns = (guint) ceil (sqrt ((double) d_count));

  if (pane->views->len != d_count)
    {
      GtkWidget *child;

      while ((child = gtk_widget_get_first_child (GTK_WIDGET (pane->grid))) != NULL)
        gtk_grid_remove (pane->grid, child);
      g_ptr_array_set_size (pane->views, 0);
      for (gsize d = 0; d < d_count; d++)
        {
          GtkWidget *view = rpe_heatmap_view_new ();

          rpe_heatmap_view_set_scale (RPE_HEATMAP_VIEW (view), RPE_HEATMAP_SCALE_SYMMETRIC);
          gtk_widget_set_size_request (view, 200, 200);
          gtk_grid_attach (pane->grid, view, (int) (d % columns), (int) (d / columns), 1, 1);
          g_ptr_array_add (pane->views, view);
        }
    }

  for (gsize d = 0; d < d_count; d++)
    {
      RpeHeatmapView *view = g_ptr_array_index (pane->views, d);
      g_autoptr (GBytes) bytes = rpe_templates_dup_feature_bytes (templates, d);
      g_autofree char *title = g_strdup_printf ("d = %zu", d);

      rpe_heatmap_view_set_data (view, bytes, templates->n, templates->n);
      rpe_heatmap_view_set_title (view, title);
    }
}

static void
pane_show_templates (RpeWindowPane *pane,
                     RpeTemplates  *templates)
{
  const RpeSpeParams *params = &pane->params;
  g_autofree char *caption = NULL;
  g_autofree char *source = NULL;

  g_clear_pointer (&pane->templates, rpe_templates_unref);
  pane->templates = rpe_templates_ref (templates);
  pane_update_views (pane, templates);

  source = pane->from_demo
           ? g_strdup_printf ("demo module “%s”", pane->module_name)
           : g_strdup ("random parameters");
  if (params->method == RPE_SPE_SINE)
    caption = g_strdup_printf ("Analytic sineSPE templates P(m, n) of head %zu of %zu, %s: "
                               "D = %zu features, K = %zu sines, N = %zu%s.",
                               templates->head, params->n_heads, source, templates->n_features,
                               params->n_sines, templates->n,
                               templates->gated ? ", gated (1 − g) P + g" : "");
  else
    caption = g_strdup_printf ("Analytic convSPE templates P(m, n) of head %zu of %zu, %s: "
                               "D = %zu features, filter length L = %zu (zero for |m − n| ≥ L), N = %zu%s.",
                               templates->head, params->n_heads, source, templates->n_features,
                               params->kernel, templates->n,
                               templates->gated ? ", gated (1 − g) P + g" : "");
  pane_set_caption (pane, caption);
}

static void
pane_progress (double   fraction,
               gpointer user_data)
{
  RpeWindowPane *pane = user_data;

  gtk_progress_bar_set_fraction (pane->progress, fraction);
}

static void
pane_done (GObject      *source_object,
           GAsyncResult *result,
           gpointer      user_data)
{
  PaneRequest *request = user_data;
  g_autoptr (RpeWindow) self = g_weak_ref_get (&request->window);
  g_autoptr (RpeTemplates) templates = NULL;
  g_autoptr (GError) error = NULL;
  RpeWindowPane *pane;

  templates = rpe_compute_templates_finish (result, &error);
  if (self == NULL)
    goto out;
  pane = &self->panes[request->pane];
  /* A stale result: a newer request replaced this one, or the window went away. */
  if (pane->cancellable == NULL || g_task_get_cancellable (G_TASK (result)) != pane->cancellable)
    goto out;

  g_clear_object (&pane->cancellable);
  gtk_widget_set_visible (GTK_WIDGET (pane->progress), FALSE);

  if (templates != NULL)
    pane_show_templates (pane, templates);
  else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_autofree char *text = g_strdup_printf ("Could not compute the templates: %s", error->message);

      pane_set_caption (pane, text);
    }

out:
  pane_request_free (request);
}

static void
pane_request (RpeWindowPane *pane,
              gsize          head,
              gsize          n,
              gboolean       gated)
{
  PaneRequest *request;

  if (pane->cancellable != NULL)
    {
      g_cancellable_cancel (pane->cancellable);
      g_clear_object (&pane->cancellable);
    }
  if (!pane->have_params)
    {
      pane_set_caption (pane, "No parameters to show.");
      return;
    }
  if (head >= pane->params.n_heads)
    {
      g_autofree char *text = g_strdup_printf ("This module has only %zu heads.", pane->params.n_heads);

      pane_set_caption (pane, text);
      return;
    }

  pane->cancellable = g_cancellable_new ();
  gtk_progress_bar_set_fraction (pane->progress, 0.0);
  gtk_widget_set_visible (GTK_WIDGET (pane->progress), TRUE);

  request = g_new0 (PaneRequest, 1);
  g_weak_ref_init (&request->window, pane->window);
  request->pane = pane->id;
  rpe_compute_templates_async_full (&pane->params, head, n, gated,
                                    pane_progress, pane,
                                    pane->cancellable, pane_done, request);
}

void
_rpe_window_request_all (RpeWindow *self)
{
  gsize head = (gsize) gtk_spin_button_get_value_as_int (self->head_spin);
  gsize n = (gsize) gtk_spin_button_get_value_as_int (self->length_spin);
  gboolean gated = gtk_toggle_button_get_active (self->gate_toggle);

  for (guint p = 0; p < RPE_WINDOW_N_PANES; p++)
    pane_request (&self->panes[p], head, n, gated);
}

/* --------------------------------------------------------------- controls */

static void
on_control_changed (RpeWindow *self)
{
  if (!self->updating)
    _rpe_window_request_all (self);
}

static void
setup_controls (RpeWindow *self)
{
  gsize heads = 0;
  gboolean any_gate = FALSE;

  for (guint p = 0; p < RPE_WINDOW_N_PANES; p++)
    {
      const RpeWindowPane *pane = &self->panes[p];

      if (!pane->have_params)
        continue;
      heads = MAX (heads, pane->params.n_heads);
      any_gate |= pane->params.gate != NULL;
    }

  self->updating = TRUE;
  gtk_spin_button_set_range (self->head_spin, 0, heads > 0 ? (double) (heads - 1) : 0);
  gtk_widget_set_sensitive (GTK_WIDGET (self->gate_toggle), any_gate);
  gtk_toggle_button_set_active (self->gate_toggle, FALSE);
  self->updating = FALSE;
}

/* --------------------------------------------------------------- settings */

static void
load_window_state (RpeWindow *self)
{
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
  g_autoptr (GSettingsSchema) schema = NULL;

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
  g_settings_bind (self->settings, "last-page", self->stack, "visible-child-name",
                   G_SETTINGS_BIND_DEFAULT);
}

static void
save_window_state (RpeWindow *self)
{
  int width, height;

  if (self->settings == NULL)
    return;
  gtk_window_get_default_size (GTK_WINDOW (self), &width, &height);
  g_settings_delay (self->settings);
  if (width > 0 && height > 0)
    {
      g_settings_set_int (self->settings, "window-width", width);
      g_settings_set_int (self->settings, "window-height", height);
    }
  g_settings_set_boolean (self->settings, "window-maximized",
                          gtk_window_is_maximized (GTK_WINDOW (self)));
  g_settings_apply (self->settings);
}

static gboolean
rpe_window_close_request (GtkWindow *window)
{
  save_window_state (RPE_WINDOW (window));
  return GTK_WINDOW_CLASS (rpe_window_parent_class)->close_request (window);
}

/* -------------------------------------------------------------- lifecycle */

static void
rpe_window_dispose (GObject *object)
{
  RpeWindow *self = RPE_WINDOW (object);

  for (guint p = 0; p < RPE_WINDOW_N_PANES; p++)
    {
      RpeWindowPane *pane = &self->panes[p];

      if (pane->cancellable != NULL)
        g_cancellable_cancel (pane->cancellable);
      g_clear_object (&pane->cancellable);
      g_clear_pointer (&pane->templates, rpe_templates_unref);
      if (pane->views != NULL)
        g_ptr_array_set_size (pane->views, 0);
    }
  g_clear_object (&self->settings);

  G_OBJECT_CLASS (rpe_window_parent_class)->dispose (object);
}

static void
rpe_window_finalize (GObject *object)
{
  RpeWindow *self = RPE_WINDOW (object);

  for (guint p = 0; p < RPE_WINDOW_N_PANES; p++)
    {
      RpeWindowPane *pane = &self->panes[p];

      rpe_spe_params_clear (&pane->params);
      g_clear_pointer (&pane->module_name, g_free);
      g_clear_pointer (&pane->views, g_ptr_array_unref);
    }
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

  g_type_ensure (RPE_TYPE_HEATMAP_VIEW);

  gtk_widget_class_set_template_from_resource (widget_class, RPE_RESOURCE_PREFIX "/ui/rpe-window.ui");
  gtk_widget_class_bind_template_child (widget_class, RpeWindow, stack);
  gtk_widget_class_bind_template_child (widget_class, RpeWindow, head_spin);
  gtk_widget_class_bind_template_child (widget_class, RpeWindow, length_spin);
  gtk_widget_class_bind_template_child (widget_class, RpeWindow, gate_toggle);
  gtk_widget_class_bind_template_child (widget_class, RpeWindow, message_revealer);
  gtk_widget_class_bind_template_child (widget_class, RpeWindow, message_label);
  gtk_widget_class_bind_template_child (widget_class, RpeWindow, sine_grid);
  gtk_widget_class_bind_template_child (widget_class, RpeWindow, conv_grid);
  gtk_widget_class_bind_template_child (widget_class, RpeWindow, sine_progress);
  gtk_widget_class_bind_template_child (widget_class, RpeWindow, conv_progress);
  gtk_widget_class_bind_template_child (widget_class, RpeWindow, sine_caption);
  gtk_widget_class_bind_template_child (widget_class, RpeWindow, conv_caption);
  gtk_widget_class_bind_template_callback (widget_class, on_control_changed);

  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_w, GDK_CONTROL_MASK, "window.close", NULL);
}

static void
rpe_window_init (RpeWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));

  for (guint p = 0; p < RPE_WINDOW_N_PANES; p++)
    {
      RpeWindowPane *pane = &self->panes[p];

      pane->window = self;
      pane->id = p;
      pane->method = p == RPE_WINDOW_PANE_SINE ? RPE_SPE_SINE : RPE_SPE_CONV;
      pane->views = g_ptr_array_new ();
    }
  self->panes[RPE_WINDOW_PANE_SINE].grid = self->sine_grid;
  self->panes[RPE_WINDOW_PANE_SINE].progress = self->sine_progress;
  self->panes[RPE_WINDOW_PANE_SINE].caption = self->sine_caption;
  self->panes[RPE_WINDOW_PANE_CONV].grid = self->conv_grid;
  self->panes[RPE_WINDOW_PANE_CONV].progress = self->conv_progress;
  self->panes[RPE_WINDOW_PANE_CONV].caption = self->conv_caption;

  load_window_state (self);
  load_parameters (self);
  setup_controls (self);
  _rpe_window_request_all (self);
}

/* ----------------------------------------------------------------- public */

RpeWindow *
rpe_window_new (GtkApplication *application)
{
  return g_object_new (RPE_TYPE_WINDOW, "application", application, NULL);
}

static RpeWindowPane *
get_pane (RpeWindow       *self,
          RpeWindowPaneId  pane)
{
  g_return_val_if_fail (RPE_IS_WINDOW (self), NULL);
  g_return_val_if_fail ((guint) pane < RPE_WINDOW_N_PANES, NULL);
  return &self->panes[pane];
}

const RpeSpeParams *
rpe_window_get_params (RpeWindow       *self,
                       RpeWindowPaneId  pane)
{
  RpeWindowPane *p = get_pane (self, pane);

  return p != NULL && p->have_params ? &p->params : NULL;
}

gboolean
rpe_window_get_from_demo (RpeWindow       *self,
                          RpeWindowPaneId  pane)
{
  RpeWindowPane *p = get_pane (self, pane);

  return p != NULL && p->from_demo;
}

RpeTemplates *
rpe_window_get_templates (RpeWindow       *self,
                          RpeWindowPaneId  pane)
{
  RpeWindowPane *p = get_pane (self, pane);

  return p != NULL ? p->templates : NULL;
}

RpeHeatmapView *
rpe_window_get_heatmap_view (RpeWindow       *self,
                             RpeWindowPaneId  pane,
                             gsize            d)
{
  RpeWindowPane *p = get_pane (self, pane);

  if (p == NULL || d >= p->views->len)
    return NULL;
  return g_ptr_array_index (p->views, d);
}

gboolean
rpe_window_is_busy (RpeWindow *self)
{
  g_return_val_if_fail (RPE_IS_WINDOW (self), FALSE);

  for (guint p = 0; p < RPE_WINDOW_N_PANES; p++)
    if (self->panes[p].cancellable != NULL)
      return TRUE;
  return FALSE;
}

void
rpe_window_show_head (RpeWindow *self,
                      gsize      head,
                      gsize      n)
{
  g_return_if_fail (RPE_IS_WINDOW (self));
  g_return_if_fail (n >= 1);

  self->updating = TRUE;
  gtk_spin_button_set_value (self->head_spin, (double) head);
  gtk_spin_button_set_value (self->length_spin, (double) n);
  self->updating = FALSE;
  _rpe_window_request_all (self);
}

const char *
rpe_window_get_message (RpeWindow *self)
{
  g_return_val_if_fail (RPE_IS_WINDOW (self), NULL);
  return self->message;
}

void
rpe_window_set_gated (RpeWindow *self,
                      gboolean   gated)
{
  g_return_if_fail (RPE_IS_WINDOW (self));

  /* notify::active requests new templates when the state changes */
  gtk_toggle_button_set_active (self->gate_toggle, gated);
}

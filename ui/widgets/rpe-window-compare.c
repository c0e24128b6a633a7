/* rpe-window-compare.c: the window's Compare and Overview pages and the watch on the opened
 * checkpoint (a training run rewriting it, or new checkpoint_<step> files beside it). */
#include "config.h"

#include "rpe-window-private.h"

#include <glib/gi18n.h>

#include "rpe-checkpoint.h"
#include "rpe-demos.h"
#include "rpe-error.h"

/* ---------------------------------------------------------------- figures */

RpeFigureBundle *
_rpe_window_current_figure (RpeWindow *self)
{
  RpeFigurePage *page = _rpe_window_current_page (self);

  return page != NULL ? rpe_figure_page_build_figure (page) : NULL;
}

/* ------------------------------------------------- overview: open a cell */

typedef struct
{
  char   *path;
  int     kind;
  int     layer;
  guint   head;
  gboolean attention;
} LayerLoad;

static void
layer_load_free (gpointer data)
{
  LayerLoad *load = data;

  g_free (load->path);
  g_free (load);
}

static void
params_free (gpointer data)
{
  rpe_spe_params_clear (data);
  g_free (data);
}

static void
layer_load_worker (GTask        *task,
                   gpointer      source,
                   gpointer      task_data,
                   GCancellable *cancellable)
{
  LayerLoad *load = task_data;
  g_autoptr (RpeTensorSet) set = NULL;
  RpeSpeSelection sel = RPE_SPE_SELECTION_INIT;
  RpeSpeParams *params = g_new0 (RpeSpeParams, 1);
  g_autofree char *note = NULL;
  GError *error = NULL;

  set = rpe_compare_read_checkpoint (load->path, &error);
  sel.method = load->kind;
  sel.layer = load->layer;
  if (set == NULL || !rpe_checkpoint_load_spe_full (set, &sel, params, &note, &error))
    {
      params_free (params);
      g_task_return_error (task, error);
      return;
    }
  g_task_return_pointer (task, params, params_free);
}

static void
layer_loaded (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  GWeakRef *ref = user_data;
  g_autoptr (RpeWindow) self = g_weak_ref_get (ref);
  g_autoptr (GError) error = NULL;
  RpeSpeParams *params = g_task_propagate_pointer (G_TASK (result), &error);
  LayerLoad *load = g_task_get_task_data (G_TASK (result));

  g_weak_ref_clear (ref);
  g_free (ref);
  if (self == NULL || g_task_get_cancellable (G_TASK (result)) != self->layer_cancellable)
    {
      if (params != NULL)
        params_free (params);
      return;
    }
  g_clear_object (&self->layer_cancellable);
  if (params == NULL)
    {
      g_autofree char *text = g_strdup_printf (_("Could not open that layer: %s"), error->message);

      _rpe_window_show_message (self, text);
      return;
    }
  {
    g_autofree char *base = g_path_get_basename (load->path);
    g_autofree char *src = load->layer >= 0 ? g_strdup_printf ("%s, layer %d", base, load->layer) : g_strdup (base);
    g_autoptr (GError) set_error = NULL;

    if (!rpe_explorer_state_set_modules (self->state, params->method == RPE_SPE_SINE ? params : NULL, src,
                                         params->method == RPE_SPE_CONV ? params : NULL, src, &set_error))
      _rpe_window_show_message (self, set_error->message);
    else
      {
        /* the session and the watch remember the layer */
        _rpe_window_set_source (self, load->path, NULL, load->layer, NULL);
        g_object_set (self->state, "head", load->head, NULL);
        rpe_window_set_view (self, load->attention ? RPE_WINDOW_VIEW_ATTENTION : RPE_WINDOW_VIEW_TEMPLATES);
      }
  }
  params_free (params);
}

static void
cell_activated (RpeOverviewView *view,
                int              layer,
                guint            head,
                gboolean         attention,
                RpeWindow       *self)
{
  LayerLoad *load;
  GTask *task;
  GWeakRef *ref;

  if (self->source_path == NULL || layer < 0)
    {
      /* no layers: only the head changes */
      g_object_set (self->state, "head", head, NULL);
      rpe_window_set_view (self, attention ? RPE_WINDOW_VIEW_ATTENTION : RPE_WINDOW_VIEW_TEMPLATES);
      return;
    }
  if (self->layer_cancellable != NULL)
    g_cancellable_cancel (self->layer_cancellable);
  g_clear_object (&self->layer_cancellable);
  self->layer_cancellable = g_cancellable_new ();
  load = g_new0 (LayerLoad, 1);
  load->path = g_strdup (self->source_path);
  load->kind = (int) rpe_explorer_state_get_spe_kind (self->state);
  load->layer = layer;
  load->head = head;
  load->attention = attention;
  ref = g_new0 (GWeakRef, 1);
  g_weak_ref_init (ref, self);
  task = g_task_new (NULL, self->layer_cancellable, layer_loaded, ref);
  g_task_set_task_data (task, load, layer_load_free);
  g_task_run_in_thread (task, layer_load_worker);
  g_object_unref (task);
}

/* ------------------------------------------------------------------ watch */

static void
sync_watch_widgets (RpeWindow *self)
{
  guint n = self->watch != NULL ? rpe_checkpoint_watch_get_n_steps (self->watch) : 0;
  gint64 step = -1;
  g_autofree char *text = NULL;
  g_autofree char *base = NULL;

  gtk_widget_set_visible (self->watch_group, self->watch != NULL);
  if (self->watch == NULL || n == 0)
    return;
  rpe_checkpoint_watch_get_step (self->watch, MIN (self->watch_shown, n - 1), &step);
  base = g_path_get_basename (rpe_checkpoint_watch_get_path (self->watch));
  if (step >= 0)
    {
      g_autofree char *step_text = g_strdup_printf ("%" G_GINT64_FORMAT, step);

      /* Translators: "Step 1200 — checkpoint 3 of 5 seen (model.safetensors)" */
      text = g_strdup_printf (_("Step %s — checkpoint %u of %u seen (%s)"), step_text,
                              self->watch_shown + 1, n, base);
    }
  else
    text = g_strdup_printf (_("Checkpoint %u of %u seen (%s)"), self->watch_shown + 1, n, base);
  gtk_label_set_text (GTK_LABEL (self->watch_label), text);
  self->watch_applying = TRUE;
  gtk_range_set_range (GTK_RANGE (self->watch_scale), 0, MAX (n - 1, 1));
  gtk_range_set_value (GTK_RANGE (self->watch_scale), self->watch_shown);
  gtk_widget_set_sensitive (self->watch_scale, n > 1);
  self->watch_applying = FALSE;
}

void
rpe_window_show_watch_step (RpeWindow *self,
                            guint      index)
{
  RpeCheckpointData *data;
  g_autofree char *base = NULL;
  g_autofree char *sine_src = NULL, *conv_src = NULL;
  g_autoptr (GError) error = NULL;

  g_return_if_fail (RPE_IS_WINDOW (self));
  if (self->watch == NULL || (data = rpe_checkpoint_watch_get_step (self->watch, index, NULL)) == NULL)
    return;
  base = g_path_get_basename (data->path);
  sine_src = data->have_sine ? g_strdup_printf (_("%s module “%s”"), base, data->sine_prefix) : NULL;
  conv_src = data->have_conv ? g_strdup_printf (_("%s module “%s”"), base, data->conv_prefix) : NULL;
  if (self->source_prefix != NULL || self->source_layer >= 0 || self->source_map != NULL)
    {
      /* the module, layer and roles chosen in Checkpoint Contents stay chosen (the tensors are in
       * memory: picking them is a copy of a few small arrays) */
      g_autofree char *prefix = g_strdup (self->source_prefix);
      g_auto (GStrv) roles = g_strdupv (self->source_map);
      g_autoptr (RpeTensorMap) map = roles != NULL ? rpe_tensor_map_new () : NULL;
      RpeSpeSelection sel = RPE_SPE_SELECTION_INIT;
      RpeSpeParams params = { 0 };
      g_autofree char *note = NULL;
      g_autofree char *src = NULL;
      int layer = self->source_layer;

      for (guint i = 0; roles != NULL && roles[i] != NULL; i++)
        if (!rpe_tensor_map_parse (map, roles[i], NULL))
          g_clear_pointer (&map, rpe_tensor_map_free);
      sel.prefix = prefix;
      sel.layer = layer;
      sel.map = map;
      if (rpe_checkpoint_load_spe_full (data->set, &sel, &params, &note, &error))
        {
          src = layer >= 0 ? g_strdup_printf (_("%s module “%s”, layer %d"), base, prefix != NULL ? prefix : "", layer)
                           : g_strdup_printf (_("%s module “%s”"), base, prefix != NULL ? prefix : "");
          if (!rpe_explorer_state_set_modules (self->state, params.method == RPE_SPE_SINE ? &params : NULL, src,
                                               params.method == RPE_SPE_CONV ? &params : NULL, src, &error))
            {
              g_autofree char *text = g_strdup_printf (_("Could not use the reloaded checkpoint: %s"), error->message);

              rpe_spe_params_clear (&params);
              _rpe_window_show_message (self, text);
              return;
            }
          rpe_spe_params_clear (&params);
          _rpe_window_set_source (self, data->path, prefix, layer, (const char *const *) roles);
          goto shown;
        }
      /* that module is not in the new file: fall back to what it has */
      g_clear_error (&error);
    }
  /* only the parameters change: head, feature, N, R, zoom, colour map... stay */
  if (!rpe_explorer_state_set_modules (self->state, data->have_sine ? &data->sine : NULL, sine_src,
                                       data->have_conv ? &data->conv : NULL, conv_src, &error))
    {
      g_autofree char *text = g_strdup_printf (_("Could not use the reloaded checkpoint: %s"), error->message);

      _rpe_window_show_message (self, text);
      return;
    }
  _rpe_window_set_source (self, data->path, NULL, -1, NULL);

shown:
  g_clear_pointer (&self->checkpoint, rpe_checkpoint_data_unref);
  self->checkpoint = rpe_checkpoint_data_ref (data);
  self->watch_shown = index;
  self->watch_follow = index + 1 == rpe_checkpoint_watch_get_n_steps (self->watch);
  sync_watch_widgets (self);
}

static void
watch_loaded (RpeCheckpointWatch *watch,
              guint               index,
              RpeWindow          *self)
{
  if (self->watch_follow)
    {
      g_autofree char *base = g_path_get_basename (rpe_checkpoint_watch_get_path (watch));

      rpe_window_show_watch_step (self, index);
      _rpe_window_show_message (self, NULL);   /* a read that had failed is superseded */
      adw_toast_overlay_add_toast (self->toasts, adw_toast_new_format (_("Reloaded %s"), base));
    }
  else
    sync_watch_widgets (self);
}

static void
watch_failed (RpeCheckpointWatch *watch,
              const char         *message,
              RpeWindow          *self)
{
  g_autofree char *text = g_strdup_printf (_("The checkpoint changed on disk but could not be read (%s); "
                                             "the last good one is kept."), message);

  _rpe_window_show_message (self, text);
}

static void
scale_changed (GtkRange  *range,
               RpeWindow *self)
{
  if (self->watch_applying)
    return;
  rpe_window_show_watch_step (self, (guint) (gtk_range_get_value (range) + 0.5));
}

static void
stop_watch (RpeWindow *self)
{
  if (self->watch != NULL)
    g_signal_handlers_disconnect_by_data (self->watch, self);
  g_clear_object (&self->watch);
}

void
_rpe_window_compare_opened (RpeWindow         *self,
                            RpeCheckpointData *data)
{
  g_autoptr (GError) error = NULL;

  stop_watch (self);
  if (!rpe_demos_is_spec (data->path) || g_file_test (data->path, G_FILE_TEST_EXISTS))
    {
      self->watch = rpe_checkpoint_watch_new (data->path, data, &error);
      if (self->watch != NULL)
        {
          g_signal_connect (self->watch, "loaded", G_CALLBACK (watch_loaded), self);
          g_signal_connect (self->watch, "failed", G_CALLBACK (watch_failed), self);
        }
    }
  self->watch_shown = 0;
  self->watch_follow = TRUE;
  sync_watch_widgets (self);
}

/* ------------------------------------------------------ Copy as Command */

static void
add_arg (GPtrArray  *argv,
         const char *name,
         const char *value)
{
  g_ptr_array_add (argv, g_strdup (name));
  if (value != NULL)
    g_ptr_array_add (argv, g_strdup (value));
}

static void
add_int_arg (GPtrArray  *argv,
             const char *name,
             guint       value)
{
  g_ptr_array_add (argv, g_strdup (name));
  g_ptr_array_add (argv, g_strdup_printf ("%u", value));
}

char *
_rpe_window_compare_command_line (RpeWindow  *self,
                                  const char *page,
                                  char      **why)
{
  g_autoptr (RpeSession) s = rpe_window_build_session (self);
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_auto (GStrv) base = NULL;
  g_autofree char *reason = NULL;
  g_autofree char    *b_path = NULL, *b_capture = NULL;
  gboolean overview = g_str_equal (page, "overview");
  guint mode = 0, what = 0, feature = 0, kind_t = 0, a_layer = 0, b_layer = 0, b_head = 0, b_method = 0;
  guint               content = 0, capture_layer = 0;
  RpeExplorerCapture *captured;
  static const char *methods[] = { "spe", "exact", "ape", "lrpe", "fastrpb", "linear" };

  g_object_get (self->state, "compare-mode", &mode, "compare-what", &what, "feature", &feature, "template-kind",
                &kind_t, "compare-a-layer", &a_layer, "compare-b-layer", &b_layer, "compare-b-head", &b_head,
                "compare-b-method", &b_method, "compare-b-checkpoint", &b_path, "compare-b-capture", &b_capture, NULL);
  if (b_capture != NULL && *b_capture == '\0')
    g_clear_pointer (&b_capture, g_free);
  if (overview)
    {
      RpeOverview *ov = rpe_overview_view_get_result (RPE_OVERVIEW_VIEW (self->overview_view));

      what = ov != NULL && ov->what == RPE_COMPARE_ATTENTION ? RPE_COMPARE_ATTENTION : RPE_COMPARE_TEMPLATES;
    }
  if (!overview && (mode == RPE_COMPARE_OFF || mode == RPE_COMPARE_PINNED))
    {
      *why = g_strdup (_("No command draws a pinned state (it is no file): compare two heads, layers, methods, "
                         "checkpoints or captures to copy a command."));
      return NULL;
    }
  if (what == RPE_COMPARE_TEMPLATES && kind_t != RPE_TEMPLATE_ANALYTIC)
    {
      *why = g_strdup (_("The command line compares analytic templates only."));
      return NULL;
    }
  /* the single view's options (checkpoint, module, N, ...), then what A and B change */
  g_free (s->view);
  s->view = g_strdup (what == RPE_COMPARE_ATTENTION ? "attention" : "templates");
  s->template_cell = what == RPE_COMPARE_ATTENTION ? -1 : (int) feature;   /* "template --feature d" */
  s->export_length = 0;
  s->have_viewport = FALSE;   /* the compare figures draw the whole map */
  if (what == RPE_COMPARE_ATTENTION && rpe_explorer_state_get_method (s->state) != RPE_EXPLORER_METHOD_SPE
      && rpe_explorer_state_get_method (s->state) != RPE_EXPLORER_METHOD_EXACT)
    {
      *why = g_strdup (_("The command line compares A drawn as the SPE estimate or exact RPE only."));
      return NULL;
    }
  /* A's captured content: --content CAPTURE --layer l, where l is also the module's layer */
  captured = rpe_explorer_state_get_capture (self->state);
  g_object_get (s->state, "content", &content, "capture-layer", &capture_layer, NULL);
  if (content == RPE_CONTENT_CAPTURE && captured != NULL && what == RPE_COMPARE_ATTENTION)
    {
      int module_layer = s->checkpoint.layer;

      if (module_layer >= 0 && (guint) module_layer != capture_layer)
        {
          *why = g_strdup_printf (_("Options cannot express this figure (the module's layer %d is drawn on the "
                                    "capture's layer %u; --layer sets both)."),
                                  module_layer, capture_layer);
          return NULL;
        }
      g_object_set (s->state, "content", (guint) RPE_CONTENT_UNIT, NULL); /* said below */
    }
  else
    captured = NULL;
  if (!rpe_session_modules_from_checkpoint (s, self->checkpoint != NULL && self->source_path != NULL
                                               && g_str_equal (self->checkpoint->path, self->source_path)
                                               ? self->checkpoint->set : NULL, &reason)
      || (base = rpe_session_export_argv (s, TRUE, &error)) == NULL)
    {
      *why = g_strdup_printf (_("Options cannot express this figure (%s)."),
                              reason != NULL ? reason : error != NULL ? error->message : _("edited parameters"));
      return NULL;
    }
  g_ptr_array_add (argv, g_strdup (overview ? "overview"
                                   : what == RPE_COMPARE_ATTENTION ? "compare-attention" : "compare-templates"));
  for (guint i = 1; base[i] != NULL; i++)
    if (!g_str_equal (base[i], "--per-cell-scale"))   /* A and B always share one scale here */
      g_ptr_array_add (argv, g_strdup (base[i]));
  if (captured != NULL)
    {
      add_arg (argv, "--content", captured->path);
      add_int_arg (argv, "--layer", capture_layer); /* the last --layer wins */
    }
  if (overview)
    {
      if (what == RPE_COMPARE_ATTENTION)
        add_arg (argv, "--cells", "attention");
    }
  else
    switch (mode)
      {
      case RPE_COMPARE_HEAD:
        add_int_arg (argv, "--b-head", b_head);
        break;
      case RPE_COMPARE_LAYER:
        add_int_arg (argv, "--layer", a_layer);   /* the last --layer wins */
        add_int_arg (argv, "--b-layer", b_layer);
        break;
      case RPE_COMPARE_METHOD:
        if (what == RPE_COMPARE_ATTENTION)
          add_arg (argv, "--b-method", methods[MIN (b_method, G_N_ELEMENTS (methods) - 1)]);
        else
          add_arg (argv, "--b-method", rpe_explorer_state_get_spe_kind (self->state) == RPE_SPE_SINE ? "conv" : "sine");
        break;
      case RPE_COMPARE_CAPTURE:
        {
          RpeExplorerCapture *current = rpe_explorer_state_get_capture (self->state);

          if (b_capture == NULL && current == NULL)
            {
              *why = g_strdup (_("Choose B's capture first."));
              return NULL;
            }
          add_arg (argv, "--b-content", b_capture != NULL ? b_capture : current->path);
          add_int_arg (argv, "--b-layer", b_layer);
        }
        break;
      case RPE_COMPARE_CHECKPOINT:
      default:
        if (b_path == NULL)
          {
            *why = g_strdup (_("Choose B's checkpoint first."));
            return NULL;
          }
        add_arg (argv, "--b-checkpoint", b_path);
        if (b_capture != NULL && what == RPE_COMPARE_ATTENTION)
          add_arg (argv, "--b-content", b_capture);
        break;
      }
  g_ptr_array_add (argv, NULL);
  {
    g_autofree char *out = g_strdup_printf ("%s.png", (char *) g_ptr_array_index (argv, 0));

    return rpe_session_command_line ((const char *const *) argv->pdata, out);
  }
}

/* ---------------------------------------------------------------- actions */

/* Pins the state of the Templates or Attention view as A and opens Compare: then every edit
 * shows before | after | difference. */
static void
action_pin_compare (GtkWidget  *widget,
                    const char *action_name,
                    GVariant   *parameter)
{
  RpeWindow *self = RPE_WINDOW (widget);
  const char *page = adw_view_stack_get_visible_child_name (self->stack);

  if (g_strcmp0 (page, "templates") == 0)
    g_object_set (self->state, "compare-what", (guint) RPE_COMPARE_TEMPLATES, NULL);
  else if (g_strcmp0 (page, "attention") == 0)
    g_object_set (self->state, "compare-what", (guint) RPE_COMPARE_ATTENTION, NULL);
  rpe_compare_view_pin (RPE_COMPARE_VIEW (self->compare_view));
  adw_view_stack_set_visible_child_name (self->stack, "compare");
  adw_toast_overlay_add_toast (self->toasts, adw_toast_new (_("Pinned as A: edit anything, B follows")));
}

static void
action_page (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  rpe_window_show_page (RPE_WINDOW (widget), g_variant_get_string (parameter, NULL));
}

void
_rpe_window_class_compare_init (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "win.pin-compare", NULL, action_pin_compare);
  gtk_widget_class_install_action (widget_class, "win.page", "s", action_page);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_p, GDK_CONTROL_MASK | GDK_SHIFT_MASK,
                                       "win.pin-compare", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_6, GDK_CONTROL_MASK, "win.page", "s", "compare");
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_7, GDK_CONTROL_MASK, "win.page", "s", "overview");
}

/* ------------------------------------------------------------------- init */

void
_rpe_window_compare_init (RpeWindow *self)
{
  AdwViewStackPage *page;
  GtkWidget *row;

  self->compare_view = rpe_compare_view_new (self->state);
  page = adw_view_stack_add_titled (self->stack, self->compare_view, "compare", _("Co_mpare"));
  adw_view_stack_page_set_use_underline (page, TRUE);
  adw_view_stack_page_set_icon_name (page, "view-dual-symbolic");
  g_signal_connect_swapped (self->compare_view, "figure-changed", G_CALLBACK (_rpe_window_update_export), self);

  self->overview_view = rpe_overview_view_new (self->state);
  _rpe_window_compare_source_changed (self);
  page = adw_view_stack_add_titled (self->stack, self->overview_view, "overview", _("O_verview"));
  adw_view_stack_page_set_use_underline (page, TRUE);
  adw_view_stack_page_set_icon_name (page, "view-app-grid-symbolic");
  g_signal_connect_swapped (self->overview_view, "figure-changed", G_CALLBACK (_rpe_window_update_export), self);
  g_signal_connect (self->overview_view, "cell-activated", G_CALLBACK (cell_activated), self);

  /* the watched training run: step indicator and a slider over the checkpoints seen */
  self->watch_group = adw_preferences_group_new ();
  adw_preferences_group_set_title (ADW_PREFERENCES_GROUP (self->watch_group), _("Training run"));
  /* a description would widen the sidebar (its label's natural width): a tooltip says it */
  gtk_widget_set_tooltip_text (self->watch_group, _("The open file is read again when training rewrites it or "
                                                    "writes a newer checkpoint_<step> beside it; every view "
                                                    "setting stays. The slider replays the checkpoints seen."));
  row = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  self->watch_label = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (self->watch_label), 0);
  gtk_label_set_wrap (GTK_LABEL (self->watch_label), TRUE);
  gtk_label_set_max_width_chars (GTK_LABEL (self->watch_label), 36);
  gtk_box_append (GTK_BOX (row), self->watch_label);
  self->watch_scale = gtk_scale_new_with_range (GTK_ORIENTATION_HORIZONTAL, 0, 1, 1);
  gtk_scale_set_digits (GTK_SCALE (self->watch_scale), 0);
  gtk_widget_set_tooltip_text (self->watch_scale, _("Replay the checkpoints seen so far"));
  g_signal_connect (self->watch_scale, "value-changed", G_CALLBACK (scale_changed), self);
  gtk_box_append (GTK_BOX (row), self->watch_scale);
  adw_preferences_group_add (ADW_PREFERENCES_GROUP (self->watch_group), row);
  /* first in the sidebar: while a run is watched, where it is matters most */
  gtk_box_prepend (self->sidebar, self->watch_group);
  self->watch_follow = TRUE;
  gtk_widget_set_visible (self->watch_group, FALSE);
}

void
_rpe_window_compare_dispose (RpeWindow *self)
{
  stop_watch (self);
  if (self->layer_cancellable != NULL)
    g_cancellable_cancel (self->layer_cancellable);
  g_clear_object (&self->layer_cancellable);
}

void
_rpe_window_compare_source_changed (RpeWindow *self)
{
  if (self->compare_view == NULL)
    return;   /* before the pages exist (the demo loads first) */
  rpe_compare_view_set_checkpoint (RPE_COMPARE_VIEW (self->compare_view), self->source_path);
  rpe_overview_view_set_checkpoint (RPE_OVERVIEW_VIEW (self->overview_view), self->source_path);
}

/* ----------------------------------------------------------------- public */

GtkWidget *
rpe_window_get_compare_view (RpeWindow *self)
{
  g_return_val_if_fail (RPE_IS_WINDOW (self), NULL);
  return self->compare_view;
}

GtkWidget *
rpe_window_get_overview_view (RpeWindow *self)
{
  g_return_val_if_fail (RPE_IS_WINDOW (self), NULL);
  return self->overview_view;
}

void
rpe_window_show_page (RpeWindow  *self,
                      const char *name)
{
  g_return_if_fail (RPE_IS_WINDOW (self));
  adw_view_stack_set_visible_child_name (self->stack, name);
}

RpeCheckpointWatch *
rpe_window_get_watch (RpeWindow *self)
{
  g_return_val_if_fail (RPE_IS_WINDOW (self), NULL);
  return self->watch;
}

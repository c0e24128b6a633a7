/* rpe-window-session.c: sessions in the window: Save (Ctrl+S), Save As
 * (Shift+Ctrl+S), opening a .rpe-session (the Open dialog, drag and drop,
 * recent files, `rpe-studio FILE.rpe-session`), and Copy as Command
 * (Shift+Ctrl+C).  The files themselves: ui/explore/rpe-session.c. */
#include "config.h"

#include "rpe-toast-queue.h"
#include "rpe-window-private.h"

#include <glib/gi18n.h>

#include "rpe-demos.h"
#include "rpe-error.h"
#include "rpe-session.h"

static const char *view_names[RPE_WINDOW_N_VIEWS] = { "templates", "attention", "curves", "teaching", "outputs" };

/* A toast of plain text (a toast's title is Pango markup: file names may hold '&' or '<'). */
static AdwToast *
toast_escaped (const char *format,
               ...) G_GNUC_PRINTF (1, 2);

static AdwToast *
toast_escaped (const char *format,
               ...)
{
  va_list args;
  g_autofree char *text = NULL;

  va_start (args, format);
  text = g_markup_vprintf_escaped (format, args);
  va_end (args);
  return adw_toast_new (text);
}

/* --------------------------------------------------------------- sources */

void
_rpe_window_set_source (RpeWindow         *self,
                        const char        *path,
                        const char        *prefix,
                        int                layer,
                        const char *const *map)
{
  g_free (self->source_path);
  g_free (self->source_prefix);
  g_strfreev (self->source_map);
  self->source_path = g_strdup (path);
  self->source_prefix = g_strdup (prefix);
  self->source_layer = layer;
  self->source_map = map != NULL && map[0] != NULL ? g_strdupv ((char **) map) : NULL;
  _rpe_window_compare_source_changed (self);
  _rpe_window_capture_follow_layer (self);
}

void
_rpe_window_set_content_path (RpeWindow  *self,
                              const char *path)
{
  g_free (self->content_path);
  self->content_path = g_strdup (path);
}

/* ------------------------------------------------------------ the session */

/* The N of a heatmap figure: its positions (rows, or the positions binned into them). */
static gsize
figure_length (const RpeFigure *f)
{
  const RpeHeatmapData *d = NULL;

  switch (f->kind)
    {
    case RPE_FIGURE_HEATMAP:
      d = &f->heatmap;
      break;
    case RPE_FIGURE_GRID:
      d = f->grid.n_cells > 0 ? &f->grid.cells[0] : NULL;
      break;
    case RPE_FIGURE_COMPARE:
      d = f->n_panels > 0 ? &f->panels[0] : NULL;
      break;
    case RPE_FIGURE_CURVES:
    default:
      break;
    }
  if (d == NULL)
    return 0;
  return d->row_positions > 0 ? d->row_positions : d->rows;
}

RpeSession *
rpe_window_build_session (RpeWindow *self)
{
  RpeSession *s;
  RpeWindowView view;

  g_return_val_if_fail (RPE_IS_WINDOW (self), NULL);
  s = rpe_session_new_from_state (self->state);
  view = rpe_window_get_view (self);
  g_free (s->view);
  s->view = g_strdup (view_names[view]);
  s->template_cell = rpe_templates_view_get_open_cell (RPE_TEMPLATES_VIEW (self->views[RPE_WINDOW_VIEW_TEMPLATES]));
  if (rpe_attention_view_get_image (RPE_ATTENTION_VIEW (self->views[RPE_WINDOW_VIEW_ATTENTION])) != NULL)
    {
      double *v = s->viewport;
      gsize n = rpe_explorer_state_get_length (self->state);

      rpe_figure_page_get_viewport (RPE_FIGURE_PAGE (self->views[RPE_WINDOW_VIEW_ATTENTION]),
                                    &v[0], &v[1], &v[2], &v[3]);
      /* only a zoomed view is worth keeping */
      s->have_viewport = !(v[0] <= 0 && v[2] <= 0 && v[1] >= (double) n && v[3] >= (double) n);
    }
  if (view == RPE_WINDOW_VIEW_TEMPLATES || view == RPE_WINDOW_VIEW_TEACHING)
    {
      /* these views compute at a cap of N (until Compute at Full N): the figure's N is what
       * `rpe export` must draw */
      g_autoptr (RpeFigureBundle) bundle = rpe_window_build_figure (self, view);
      gsize n = bundle != NULL ? figure_length (&bundle->fig) : 0;

      if (n >= 2 && n != rpe_explorer_state_get_length (self->state))
        s->export_length = (guint) n;
    }
  if (view == RPE_WINDOW_VIEW_CURVES)
    {
      /* the page computes at a cap of N too */
      RpeCurves *c = rpe_curves_page_get_result (RPE_CURVES_PAGE (self->views[RPE_WINDOW_VIEW_CURVES]));

      if (c != NULL && c->n >= 2 && c->n != rpe_explorer_state_get_length (self->state))
        s->export_length = (guint) c->n;
    }
  if (view == RPE_WINDOW_VIEW_OUTPUTS)
    rpe_outputs_view_store (RPE_OUTPUTS_VIEW (self->views[RPE_WINDOW_VIEW_OUTPUTS]), &s->outputs);
  if (self->source_path != NULL)
    rpe_session_set_checkpoint (s, self->source_path, self->source_prefix, self->source_layer,
                                (const char *const *) self->source_map);
  if (self->content_path != NULL)
    rpe_session_set_content_path (s, self->content_path);
  return s;
}

static void
update_title (RpeWindow *self)
{
  g_autofree char *base = NULL;
  g_autofree char *display = NULL;
  g_autofree char *title = NULL;

  if (self->session_file == NULL)
    return;
  base = g_path_get_basename (self->session_file);
  if (g_str_has_suffix (base, RPE_SESSION_SUFFIX))
    base[strlen (base) - strlen (RPE_SESSION_SUFFIX)] = '\0';
  display = g_filename_display_name (base);
  title = g_strdup_printf (_("%s — RPE Studio"), display);
  gtk_window_set_title (GTK_WINDOW (self), title);
  adw_view_switcher_title_set_subtitle (self->switcher_title, display);
}

/* The session file is what the window showed at serial, view, cell. */
static void
remember_as (RpeWindow     *self,
             const char    *path,
             guint64        serial,
             RpeWindowView  view,
             int            cell)
{
  g_autofree char *uri = g_filename_to_uri (path, NULL, NULL);

  g_free (self->session_file);
  self->session_file = g_strdup (path);
  self->session_serial = serial;
  self->session_view = view;
  self->session_cell = cell;
  {
    /* the zoom shown then (a session holds it) */
    g_autoptr (RpeSession) now = rpe_window_build_session (self);

    self->session_zoomed = now->have_viewport;
    memcpy (self->session_viewport, now->viewport, sizeof self->session_viewport);
  }
  if (uri != NULL)
    {
      GtkRecentData data = { 0 };

      data.mime_type = (char *) RPE_SESSION_MIME_TYPE;
      data.app_name = (char *) g_get_application_name ();
      data.app_exec = (char *) "rpe-studio %f";
      gtk_recent_manager_add_full (gtk_recent_manager_get_default (), uri, &data);
    }
  _rpe_window_update_recent_menu (self);
  update_title (self);
}

static void
remember (RpeWindow  *self,
          const char *path)
{
  remember_as (self, path, rpe_explorer_state_get_serial (self->state), rpe_window_get_view (self),
               rpe_templates_view_get_open_cell (RPE_TEMPLATES_VIEW (self->views[RPE_WINDOW_VIEW_TEMPLATES])));
}

gboolean
rpe_window_save_session (RpeWindow   *self,
                         const char  *path,
                         GError     **error)
{
  g_autoptr (RpeSession) s = NULL;
  g_autofree char *target = NULL;

  g_return_val_if_fail (RPE_IS_WINDOW (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  target = g_str_has_suffix (path, RPE_SESSION_SUFFIX) ? g_strdup (path) : g_strconcat (path, RPE_SESSION_SUFFIX, NULL);
  s = rpe_window_build_session (self);
  if (!rpe_session_save (s, target, error))
    return FALSE;
  remember (self, s->file);
  return TRUE;
}

static void
show_open_error (RpeWindow    *self,
                 const GError *error)
{
  g_autofree char *text = g_strdup_printf (_("Could not open the session: %s. Nothing was changed."), error->message);

  _rpe_window_show_message (self, text);
}

static void apply_loaded (RpeWindow  *self,
                          RpeSession *s);

gboolean
rpe_window_open_session (RpeWindow   *self,
                         const char  *path,
                         GError     **error)
{
  g_autoptr (RpeSession) s = NULL;
  g_autoptr (GError) local = NULL;

  g_return_val_if_fail (RPE_IS_WINDOW (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);

  s = rpe_session_load (path, &local);
  if (s == NULL)
    {
      show_open_error (self, local);
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  if (self->load_cancellable != NULL)
    g_cancellable_cancel (self->load_cancellable);
  g_clear_object (&self->load_cancellable);
  apply_loaded (self, s);
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
  g_autoptr (RpeSession) s = rpe_session_load_finish (result, &error);

  g_weak_ref_clear (ref);
  g_free (ref);
  /* a later open (of a session or a checkpoint) replaced this one */
  if (self == NULL || g_task_get_cancellable (G_TASK (result)) != self->load_cancellable)
    return;
  g_clear_object (&self->load_cancellable);
  if (s == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        show_open_error (self, error);
      return;
    }
  apply_loaded (self, s);
}

/* Reads the session on a worker (its checkpoint's hash may take a while), then applies it. */
void
_rpe_window_open_session_async (RpeWindow  *self,
                                const char *path)
{
  GWeakRef *ref = g_new0 (GWeakRef, 1);

  if (self->load_cancellable != NULL)
    g_cancellable_cancel (self->load_cancellable);
  g_clear_object (&self->load_cancellable);
  self->load_cancellable = g_cancellable_new ();
  g_weak_ref_init (ref, self);
  rpe_session_load_async (path, self->load_cancellable, open_done, ref);
}

static void
apply_loaded (RpeWindow  *self,
              RpeSession *s)
{
  /* the session was read and checked in full: now it replaces the state (and the model a
   * capture is checked against is the session's checkpoint's, none without one) */
  rpe_explorer_state_set_model_print (self->state, s->model_print);
  rpe_session_apply (s, self->state);
  /* the session is a new document: its history starts here, not with each setting it restored */
  _rpe_window_reset_undo (self);
  for (guint v = 0; v < RPE_WINDOW_N_VIEWS; v++)
    if (g_strcmp0 (s->view, view_names[v]) == 0)
      rpe_window_set_view (self, v);
  rpe_templates_view_open_cell (RPE_TEMPLATES_VIEW (self->views[RPE_WINDOW_VIEW_TEMPLATES]), s->template_cell);
  rpe_outputs_view_restore (RPE_OUTPUTS_VIEW (self->views[RPE_WINDOW_VIEW_OUTPUTS]), &s->outputs);
  if (s->have_viewport)
    rpe_figure_page_set_viewport (RPE_FIGURE_PAGE (self->views[RPE_WINDOW_VIEW_ATTENTION]),
                                  s->viewport[0], s->viewport[1], s->viewport[2], s->viewport[3]);
  else
    rpe_figure_page_reset_zoom (RPE_FIGURE_PAGE (self->views[RPE_WINDOW_VIEW_ATTENTION]));
  _rpe_window_set_source (self, s->checkpoint.path, s->checkpoint.prefix, s->checkpoint.layer,
                          (const char *const *) s->checkpoint.map);
  _rpe_window_set_content_path (self, s->content_path);
  self->from_demo = s->checkpoint.path != NULL && g_str_equal (s->checkpoint.path, "demo");
  if (s->warnings->len > 0)
    {
      g_autoptr (GString) text = g_string_new (NULL);

      for (guint i = 0; i < s->warnings->len; i++)
        g_string_append_printf (text, "%s%s", i > 0 ? "\n" : "", (const char *) g_ptr_array_index (s->warnings, i));
      _rpe_window_show_message (self, text->str);
    }
  else
    _rpe_window_show_message (self, NULL);
  remember (self, s->file);
  {
    g_autofree char *base = g_filename_display_basename (s->file);

    rpe_toast_queue_add (self->toasts, toast_escaped (_("Opened session %s"), base));
  }
}

const char *
rpe_window_get_session_file (RpeWindow *self)
{
  g_return_val_if_fail (RPE_IS_WINDOW (self), NULL);
  return self->session_file;
}

gboolean
_rpe_window_session_unsaved (RpeWindow *self)
{
  g_autoptr (RpeSession) now = NULL;

  if (self->session_file == NULL)
    return FALSE;
  if (self->session_serial != rpe_explorer_state_get_serial (self->state)
      || self->session_view != rpe_window_get_view (self))
    return TRUE;
  now = rpe_window_build_session (self);
  return self->session_cell != now->template_cell || self->session_zoomed != now->have_viewport
         || (now->have_viewport && memcmp (self->session_viewport, now->viewport, sizeof now->viewport) != 0);
}

/* ----------------------------------------------------------- Save dialogs */

typedef struct
{
  GWeakRef       window;
  guint64        serial;
  RpeWindowView  view;
  int            cell;
} SaveCtx;

static void
save_done (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  SaveCtx *ctx = user_data;
  g_autoptr (RpeWindow) self = g_weak_ref_get (&ctx->window);
  g_autoptr (GError) error = NULL;
  g_autofree char *path = rpe_session_save_finish (result, &error);

  if (self != NULL)
    {
      if (path == NULL)
        {
          g_autofree char *text = g_strdup_printf (_("Could not save the session: %s"), error->message);

          _rpe_window_show_message (self, text);
        }
      else
        {
          g_autofree char *base = g_filename_display_basename (path);

          remember_as (self, path, ctx->serial, ctx->view, ctx->cell);
          rpe_toast_queue_add (self->toasts, toast_escaped (_("Saved %s"), base));
        }
    }
  g_weak_ref_clear (&ctx->window);
  g_free (ctx);
}

/* Saves what the window shows now on a worker (the hashes of big checkpoints take a while). */
static void
save_async (RpeWindow  *self,
            const char *path)
{
  SaveCtx *ctx = g_new0 (SaveCtx, 1);
  g_autofree char *target = g_str_has_suffix (path, RPE_SESSION_SUFFIX) ? g_strdup (path)
                                                                        : g_strconcat (path, RPE_SESSION_SUFFIX, NULL);
  RpeSession *s = rpe_window_build_session (self);

  g_weak_ref_init (&ctx->window, self);
  ctx->serial = rpe_explorer_state_get_serial (self->state);
  ctx->view = rpe_window_get_view (self);
  ctx->cell = s->template_cell;
  rpe_session_save_async (s, target, NULL, save_done, ctx);
}

static void
save_response (GtkNativeDialog *dialog,
               int              response,
               RpeWindow       *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree char *path = file != NULL ? g_file_get_path (file) : NULL;

      if (path == NULL)
        _rpe_window_show_message (self, _("Sessions are saved to local files only."));
      else
        save_async (self, path);
    }
  gtk_native_dialog_destroy (dialog);
  if (self->session_chooser == GTK_FILE_CHOOSER_NATIVE (dialog))
    g_clear_object (&self->session_chooser);
}

static void
action_save_as (GtkWidget  *widget,
                const char *action_name,
                GVariant   *parameter)
{
  RpeWindow *self = RPE_WINDOW (widget);
  g_autoptr (GtkFileFilter) filter = gtk_file_filter_new ();

  if (self->session_chooser != NULL)
    {
      gtk_native_dialog_destroy (GTK_NATIVE_DIALOG (self->session_chooser));
      g_clear_object (&self->session_chooser);
    }
  self->session_chooser = gtk_file_chooser_native_new (_("Save Session"), GTK_WINDOW (self),
                                                       GTK_FILE_CHOOSER_ACTION_SAVE, _("_Save"), _("_Cancel"));
  gtk_file_filter_set_name (filter, _("RPE Studio sessions (.rpe-session)"));
  gtk_file_filter_add_suffix (filter, "rpe-session");
  gtk_file_filter_add_mime_type (filter, RPE_SESSION_MIME_TYPE);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (self->session_chooser), filter);
  if (self->session_file != NULL)
    {
      g_autoptr (GFile) file = g_file_new_for_path (self->session_file);

      gtk_file_chooser_set_file (GTK_FILE_CHOOSER (self->session_chooser), file, NULL);
    }
  else
    gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (self->session_chooser), "untitled.rpe-session");
  g_signal_connect (self->session_chooser, "response", G_CALLBACK (save_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (self->session_chooser));
}

static void
action_save (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  RpeWindow *self = RPE_WINDOW (widget);
  g_autofree char *path = NULL;

  if (self->session_file == NULL)
    {
      action_save_as (widget, action_name, parameter);
      return;
    }
  path = g_strdup (self->session_file);
  save_async (self, path);
}

/* ------------------------------------------------------- Copy as Command */

/* The command line that redraws the current figure:
 *  - options alone (--checkpoint ... --head ... ) when they say everything: the
 *    view has an `rpe export` figure and the module is the checkpoint's as read;
 *  - else `rpe export --session FILE` when the session saved (or opened) last
 *    is the current one (same parameters, view and cell);
 *  - else NULL and *why: the edits need a session file (save it first).
 * The session and the fallback are taken on the main thread (command_job_new);
 * the comparison with the checkpoint, which may read the file, runs wherever
 * command_job_run is called: a worker for Copy as Command. */
typedef struct
{
  RpeSession        *session;
  RpeCheckpointData *checkpoint;     /* the checkpoint already read, when the modules' source (or NULL) */
  char              *out;
  char              *session_line;   /* `rpe export --session FILE`, when FILE is the current figure */
  char              *ready_line;     /* the Compare and Overview pages' command, made on the main thread */
  gboolean           needs_session;  /* no line: saving the session would give one (`rpe export --session`) */
} CommandJob;

static void
command_job_free (gpointer data)
{
  CommandJob *job = data;

  g_clear_pointer (&job->session, rpe_session_free);
  g_clear_pointer (&job->checkpoint, rpe_checkpoint_data_unref);
  g_free (job->out);
  g_free (job->session_line);
  g_free (job->ready_line);
  g_free (job);
}

static CommandJob *
command_job_new (RpeWindow  *self,
                 char      **why)
{
  g_autoptr (RpeSession) s = NULL;
  g_autoptr (GError) error = NULL;
  const char *view;
  CommandJob *job;

  {
    /* the Compare and Overview pages have their own commands (rpe-window-compare.c) */
    const char *page = adw_view_stack_get_visible_child_name (self->stack);

    if (g_strcmp0 (page, "compare") == 0 || g_strcmp0 (page, "overview") == 0)
      {
        g_autofree char *page_why = NULL;
        char *line = _rpe_window_compare_command_line (self, page, &page_why);

        if (line == NULL)
          {
            if (why != NULL)
              *why = g_steal_pointer (&page_why);
            return NULL;
          }
        job = g_new0 (CommandJob, 1);
        job->ready_line = line;
        return job;
      }
  }
  s = rpe_window_build_session (self);
  view = rpe_session_export_view (s, &error);
  if (view == NULL)
    {
      if (why != NULL)
        *why = g_strdup_printf (_("No command draws this figure: %s."), error->message);
      return NULL;
    }
  job = g_new0 (CommandJob, 1);
  job->out = g_strdup_printf ("%s.png", view);
  if (self->checkpoint != NULL && self->source_path != NULL
      && g_str_equal (self->checkpoint->path, self->source_path))
    job->checkpoint = rpe_checkpoint_data_ref (self->checkpoint);
  /* `rpe export outputs` takes no session: its line is the options one or none */
  if (!g_str_equal (view, "outputs") && self->session_file != NULL
      && self->session_serial == rpe_explorer_state_get_serial (self->state)
      && self->session_view == rpe_window_get_view (self)
      && self->session_cell == s->template_cell && self->session_zoomed == s->have_viewport
      && (!s->have_viewport || memcmp (self->session_viewport, s->viewport, sizeof s->viewport) == 0))
    {
      const char *args[] = { "--session", self->session_file, NULL };

      job->session_line = rpe_session_command_line (args, job->out);
    }
  job->session = g_steal_pointer (&s);
  return job;
}

static char *
command_job_run (CommandJob  *job,
                 char       **why)
{
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) argv = NULL;
  g_autofree char *reason = NULL;

  if (job->ready_line != NULL)
    return g_strdup (job->ready_line);
  if (rpe_session_modules_from_checkpoint (job->session, job->checkpoint != NULL ? job->checkpoint->set : NULL,
                                           &reason))
    {
      argv = rpe_session_export_argv (job->session, TRUE, &error);
      if (argv != NULL)
        return rpe_session_command_line ((const char *const *) argv, job->out);
    }
  if (job->session_line != NULL)
    return g_strdup (job->session_line);
  if (why != NULL && g_strcmp0 (job->session->view, "outputs") == 0)
    {
      *why = g_strdup_printf (_("`rpe export outputs` draws the checkpoint's modules, not these (%s)."),
                              reason != NULL ? reason : error != NULL ? error->message : _("edited parameters"));
      return NULL;
    }
  job->needs_session = TRUE;
  if (why != NULL)
    *why = g_strdup_printf (_("Options cannot express this figure (%s): save the session (Ctrl+S) and copy "
                              "again to get an `rpe export --session` command."),
                            reason != NULL ? reason : error != NULL ? error->message : _("edited parameters"));
  return NULL;
}

char *
rpe_window_command_line (RpeWindow  *self,
                         char      **why)
{
  CommandJob *job;
  char *line;

  g_return_val_if_fail (RPE_IS_WINDOW (self), NULL);
  job = command_job_new (self, why);
  if (job == NULL)
    return NULL;
  line = command_job_run (job, why);
  command_job_free (job);
  return line;
}

static void
command_thread (GTask        *task,
                gpointer      source,
                gpointer      data,
                GCancellable *cancellable)
{
  char *why = NULL;
  char *line = command_job_run (data, &why);

  if (line != NULL)
    g_task_return_pointer (task, line, g_free);
  else
    {
      g_task_return_new_error (task, RPE_ERROR, RPE_ERROR_UNSUPPORTED, "%s", why);
      g_free (why);
    }
}

void
rpe_window_command_line_async (RpeWindow           *self,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  g_autoptr (GTask) task = g_task_new (self, cancellable, callback, user_data);
  char *why = NULL;
  CommandJob *job;

  g_return_if_fail (RPE_IS_WINDOW (self));
  g_task_set_source_tag (task, rpe_window_command_line_async);
  job = command_job_new (self, &why);
  if (job == NULL)
    {
      g_task_return_new_error (task, RPE_ERROR, RPE_ERROR_UNSUPPORTED, "%s", why);
      g_free (why);
      return;
    }
  g_task_set_task_data (task, job, command_job_free);
  g_task_run_in_thread (task, command_thread);
}

char *
rpe_window_command_line_finish (RpeWindow     *self,
                                GAsyncResult  *result,
                                GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

guint
rpe_window_get_commands_copied (RpeWindow *self)
{
  g_return_val_if_fail (RPE_IS_WINDOW (self), 0);
  return self->commands_copied;
}

static void
command_copied (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  RpeWindow *self = RPE_WINDOW (source);
  g_autoptr (GError) error = NULL;
  g_autofree char *line = rpe_window_command_line_finish (self, result, &error);

  self->commands_copied++;
  if (line == NULL)
    {
      AdwToast *toast = toast_escaped ("%s", error->message);
      CommandJob *job = g_task_get_task_data (G_TASK (result));   /* NULL: the job was never made */

      adw_toast_set_timeout (toast, 8);
      if (self->session_file == NULL || (job != NULL && job->needs_session))
        {
          adw_toast_set_button_label (toast, _("_Save…"));
          adw_toast_set_action_name (toast, "win.save-session");
        }
      rpe_toast_queue_add (self->toasts, toast);
      return;
    }
  gdk_clipboard_set_text (gtk_widget_get_clipboard (GTK_WIDGET (self)), line);
  rpe_toast_queue_add (self->toasts, adw_toast_new (_("Copied the rpe export command of this figure")));
}

/* Copy as Command: the checkpoint, when it is not in memory, is read on a worker. */
static void
action_copy_command (GtkWidget  *widget,
                     const char *action_name,
                     GVariant   *parameter)
{
  rpe_window_command_line_async (RPE_WINDOW (widget), NULL, command_copied, NULL);
}

/* -------------------------------------------------------------- classes */

void
_rpe_window_class_session_init (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "win.save-session", NULL, action_save);
  gtk_widget_class_install_action (widget_class, "win.save-session-as", NULL, action_save_as);
  gtk_widget_class_install_action (widget_class, "win.copy-command", NULL, action_copy_command);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_s, GDK_CONTROL_MASK, "win.save-session", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_S, GDK_CONTROL_MASK | GDK_SHIFT_MASK,
                                       "win.save-session-as", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_C, GDK_CONTROL_MASK | GDK_SHIFT_MASK,
                                       "win.copy-command", NULL);
}

void
_rpe_window_session_dispose (RpeWindow *self)
{
  if (self->session_chooser != NULL)
    {
      gtk_native_dialog_destroy (GTK_NATIVE_DIALOG (self->session_chooser));
      g_clear_object (&self->session_chooser);
    }
  g_clear_pointer (&self->session_file, g_free);
  g_clear_pointer (&self->source_path, g_free);
  g_clear_pointer (&self->source_prefix, g_free);
  g_clear_pointer (&self->source_map, g_strfreev);
  g_clear_pointer (&self->content_path, g_free);
}

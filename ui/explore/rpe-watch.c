/* rpe-watch.c: reading a checkpoint again when a training run rewrites it. */
#include "config.h"

#include "rpe-watch.h"

#include <string.h>

#include "rpe-error.h"

#define DEBOUNCE_MS 150

struct _RpeCheckpointWatch
{
  GObject       parent_instance;

  char         *path;
  char         *candidate;    /* a newer checkpoint seen beside it (checked when the pause ends) */
  gint64        candidate_step;
  GFileMonitor *monitor;
  GPtrArray    *steps;        /* RpeCheckpointData* */
  GArray       *step_numbers; /* gint64 */
  GCancellable *cancellable;  /* the running read */
  guint         debounce_id;
  guint         retry_id;
  guint         attempt;
  guint         retries;
  guint         interval_ms;
  guint         n_failed_reads;
  gboolean      again;        /* a change arrived while reading */
};

G_DEFINE_FINAL_TYPE (RpeCheckpointWatch, rpe_checkpoint_watch, G_TYPE_OBJECT)

enum { SIGNAL_LOADED, SIGNAL_FAILED, N_SIGNALS };
static guint signals[N_SIGNALS];

gint64
rpe_checkpoint_step_from_name (const char *basename)
{
  g_autofree char *stem = NULL;
  const char *p, *digits = NULL;
  char *dot;

  if (basename == NULL)
    return -1;
  stem = g_strdup (basename);
  dot = strrchr (stem, '.');
  if (dot != NULL && dot != stem)
    *dot = '\0';
  if (g_str_has_prefix (stem, "checkpoint_"))
    digits = stem + strlen ("checkpoint_");
  else if ((p = g_strrstr (stem, "step")) != NULL && p > stem && (p[-1] == '_' || p[-1] == '-'))
    digits = p + 4;
  if (digits == NULL || *digits == '\0')
    return -1;
  for (p = digits; *p != '\0'; p++)
    if (!g_ascii_isdigit (*p))
      return -1;
  if (strlen (digits) > 15)
    return -1;
  return g_ascii_strtoll (digits, NULL, 10);
}

static void start_read (RpeCheckpointWatch *self);

static gboolean
retry_cb (gpointer data)
{
  RpeCheckpointWatch *self = data;

  self->retry_id = 0;
  start_read (self);
  return G_SOURCE_REMOVE;
}

static void
read_done (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeCheckpointData) data = rpe_compute_open_checkpoint_finish (result, &error);
  GWeakRef *ref = user_data;
  g_autoptr (RpeCheckpointWatch) self = g_weak_ref_get (ref);

  g_weak_ref_clear (ref);
  g_free (ref);
  if (self == NULL || g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  g_clear_object (&self->cancellable);
  if (data == NULL)
    {
      self->n_failed_reads++;
      if (self->again || self->attempt < self->retries)
        {
          /* likely half-written: read again a little later */
          self->attempt++;
          self->again = FALSE;
          self->retry_id = g_timeout_add (self->interval_ms, retry_cb, self);
          return;
        }
      self->attempt = 0;
      g_signal_emit (self, signals[SIGNAL_FAILED], 0, error->message);
      return;
    }
  self->attempt = 0;
  {
    g_autofree char *base = g_path_get_basename (self->path);
    gint64 step = rpe_checkpoint_step_from_name (base);

    g_ptr_array_add (self->steps, rpe_checkpoint_data_ref (data));
    g_array_append_val (self->step_numbers, step);
  }
  g_signal_emit (self, signals[SIGNAL_LOADED], 0, self->steps->len - 1);
  if (self->again)
    {
      self->again = FALSE;
      start_read (self);
    }
}

static void
start_read (RpeCheckpointWatch *self)
{
  GWeakRef *ref;

  if (self->cancellable != NULL)
    {
      self->again = TRUE;
      return;
    }
  self->cancellable = g_cancellable_new ();
  ref = g_new0 (GWeakRef, 1);
  g_weak_ref_init (ref, self);
  rpe_compute_open_checkpoint_async (self->path, self->cancellable, read_done, ref);
}

static gboolean
debounce_cb (gpointer data)
{
  RpeCheckpointWatch *self = data;

  self->debounce_id = 0;
  /* a newer checkpoint beside the one we follow: follow it, if it is still there (a writer's
   * temporary file is renamed away before the pause ends) */
  if (self->candidate != NULL)
    {
      char *candidate = g_steal_pointer (&self->candidate);

      if (g_file_test (candidate, G_FILE_TEST_IS_REGULAR))
        {
          g_free (self->path);
          self->path = candidate;
        }
      else
        {
          g_free (candidate);
          return G_SOURCE_REMOVE;
        }
    }
  if (self->retry_id != 0)
    {
      g_source_remove (self->retry_id);
      self->retry_id = 0;
    }
  self->attempt = 0;
  start_read (self);
  return G_SOURCE_REMOVE;
}

static void
schedule_read (RpeCheckpointWatch *self)
{
  if (self->debounce_id != 0)
    g_source_remove (self->debounce_id);
  self->debounce_id = g_timeout_add (DEBOUNCE_MS, debounce_cb, self);
}

static void
on_changed (GFileMonitor      *monitor,
            GFile             *file,
            GFile             *other,
            GFileMonitorEvent  event,
            gpointer           user_data)
{
  RpeCheckpointWatch *self = user_data;
  GFile *target = event == G_FILE_MONITOR_EVENT_RENAMED || event == G_FILE_MONITOR_EVENT_MOVED_IN
                  ? (other != NULL ? other : file) : file;
  g_autofree char *path = target != NULL ? g_file_get_path (target) : NULL;
  g_autofree char *base = NULL, *own = NULL;
  gint64 step, own_step;

  if (path == NULL)
    return;
  switch (event)
    {
    case G_FILE_MONITOR_EVENT_CHANGED:
    case G_FILE_MONITOR_EVENT_CHANGES_DONE_HINT:
    case G_FILE_MONITOR_EVENT_CREATED:
    case G_FILE_MONITOR_EVENT_MOVED_IN:
    case G_FILE_MONITOR_EVENT_RENAMED:
      break;
    case G_FILE_MONITOR_EVENT_DELETED:
    case G_FILE_MONITOR_EVENT_ATTRIBUTE_CHANGED:
    case G_FILE_MONITOR_EVENT_PRE_UNMOUNT:
    case G_FILE_MONITOR_EVENT_UNMOUNTED:
    case G_FILE_MONITOR_EVENT_MOVED:
    case G_FILE_MONITOR_EVENT_MOVED_OUT:
    default:
      return;
    }
  if (g_str_equal (path, self->path))
    {
      schedule_read (self);
      return;
    }
  /* a newer checkpoint beside the one we follow: follow it */
  base = g_path_get_basename (path);
  own = g_path_get_basename (self->path);
  step = rpe_checkpoint_step_from_name (base);
  own_step = rpe_checkpoint_step_from_name (own);
  if (step < 0 || step <= own_step || g_str_has_prefix (base, ".") || g_str_has_suffix (base, ".tmp")
      || g_str_has_suffix (base, "~"))
    return;
  if (self->candidate == NULL || step >= self->candidate_step)
    {
      g_free (self->candidate);
      self->candidate = g_steal_pointer (&path);
      self->candidate_step = step;
    }
  schedule_read (self);
}

static void
rpe_checkpoint_watch_dispose (GObject *object)
{
  RpeCheckpointWatch *self = RPE_CHECKPOINT_WATCH (object);

  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_handle_id (&self->debounce_id, g_source_remove);
  g_clear_handle_id (&self->retry_id, g_source_remove);
  if (self->monitor != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->monitor, self);
      g_file_monitor_cancel (self->monitor);
    }
  g_clear_object (&self->monitor);
  G_OBJECT_CLASS (rpe_checkpoint_watch_parent_class)->dispose (object);
}

static void
rpe_checkpoint_watch_finalize (GObject *object)
{
  RpeCheckpointWatch *self = RPE_CHECKPOINT_WATCH (object);

  g_free (self->path);
  g_free (self->candidate);
  g_ptr_array_unref (self->steps);
  g_array_unref (self->step_numbers);
  G_OBJECT_CLASS (rpe_checkpoint_watch_parent_class)->finalize (object);
}

static void
rpe_checkpoint_watch_class_init (RpeCheckpointWatchClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = rpe_checkpoint_watch_dispose;
  object_class->finalize = rpe_checkpoint_watch_finalize;
  signals[SIGNAL_LOADED] = g_signal_new ("loaded", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                         NULL, G_TYPE_NONE, 1, G_TYPE_UINT);
  signals[SIGNAL_FAILED] = g_signal_new ("failed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                         NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void
rpe_checkpoint_watch_init (RpeCheckpointWatch *self)
{
  self->steps = g_ptr_array_new_with_free_func ((GDestroyNotify) rpe_checkpoint_data_unref);
  self->step_numbers = g_array_new (FALSE, FALSE, sizeof (gint64));
  self->retries = 8;
  self->interval_ms = 250;
}

RpeCheckpointWatch *
rpe_checkpoint_watch_new (const char         *path,
                          RpeCheckpointData  *first,
                          GError            **error)
{
  g_autoptr (RpeCheckpointWatch) self = NULL;
  g_autoptr (GFile) file = NULL;
  g_autoptr (GFile) dir = NULL;

  g_return_val_if_fail (path != NULL, NULL);
  self = g_object_new (RPE_TYPE_CHECKPOINT_WATCH, NULL);
  file = g_file_new_for_path (path);
  self->path = g_file_get_path (file);
  dir = g_file_get_parent (file);
  if (dir == NULL)
    {
      g_set_error (error, RPE_ERROR, RPE_ERROR_INVALID_ARGUMENT, "cannot watch “%s”", path);
      return NULL;
    }
  self->monitor = g_file_monitor_directory (dir, G_FILE_MONITOR_WATCH_MOVES, NULL, error);
  if (self->monitor == NULL)
    return NULL;
  g_file_monitor_set_rate_limit (self->monitor, 100);
  g_signal_connect (self->monitor, "changed", G_CALLBACK (on_changed), self);
  if (first != NULL)
    {
      g_autofree char *base = g_path_get_basename (self->path);
      gint64 step = rpe_checkpoint_step_from_name (base);

      g_ptr_array_add (self->steps, rpe_checkpoint_data_ref (first));
      g_array_append_val (self->step_numbers, step);
    }
  return g_steal_pointer (&self);
}

const char *
rpe_checkpoint_watch_get_path (RpeCheckpointWatch *self)
{
  g_return_val_if_fail (RPE_IS_CHECKPOINT_WATCH (self), NULL);
  return self->path;
}

guint
rpe_checkpoint_watch_get_n_steps (RpeCheckpointWatch *self)
{
  g_return_val_if_fail (RPE_IS_CHECKPOINT_WATCH (self), 0);
  return self->steps->len;
}

RpeCheckpointData *
rpe_checkpoint_watch_get_step (RpeCheckpointWatch *self,
                               guint               index,
                               gint64             *step)
{
  g_return_val_if_fail (RPE_IS_CHECKPOINT_WATCH (self), NULL);
  if (index >= self->steps->len)
    return NULL;
  if (step != NULL)
    *step = g_array_index (self->step_numbers, gint64, index);
  return g_ptr_array_index (self->steps, index);
}

void
rpe_checkpoint_watch_reload (RpeCheckpointWatch *self)
{
  g_return_if_fail (RPE_IS_CHECKPOINT_WATCH (self));
  schedule_read (self);
}

void
rpe_checkpoint_watch_set_retry (RpeCheckpointWatch *self,
                                guint               retries,
                                guint               interval_ms)
{
  g_return_if_fail (RPE_IS_CHECKPOINT_WATCH (self));
  self->retries = retries;
  self->interval_ms = MAX (interval_ms, 1);
}

guint
rpe_checkpoint_watch_get_n_failed_reads (RpeCheckpointWatch *self)
{
  g_return_val_if_fail (RPE_IS_CHECKPOINT_WATCH (self), 0);
  return self->n_failed_reads;
}

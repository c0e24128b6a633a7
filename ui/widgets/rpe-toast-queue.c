/* rpe-toast-queue.c: toasts shown one at a time, timed by the frame clock (rpe-toast-queue.h). */
#include "config.h"

#include "rpe-toast-queue.h"

#define QUEUE_KEY "rpe-toast-queue"

typedef struct
{
  AdwToastOverlay *overlay;      /* not a reference: the queue is the overlay's data */
  GQueue           pending;      /* AdwToast references, in the order they are shown */
  AdwToast        *current;      /* the toast in the overlay (a reference), or NULL */
  guint            timeout_s;    /* current's own timeout (0: until dismissed) */
  gint64           shown_us;     /* frame time current was added at */
  gint64           dismissed_us; /* frame time the last toast was dismissed at (0: long ago) */
  gulong           dismissed_id;
  guint            tick_id;
  gboolean         destroyed;
} Queue;

static void ensure_tick (Queue *q);

static gint64
frame_time (Queue *q)
{
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (q->overlay));

  /* the frame clock counts on the monotonic clock */
  return clock != NULL ? gdk_frame_clock_get_frame_time (clock) : g_get_monotonic_time ();
}

static void
forget_current (Queue *q)
{
  if (q->current == NULL)
    return;
  g_clear_signal_handler (&q->dismissed_id, q->current);
  g_clear_object (&q->current);
}

static GWeakRef *
weak_ref_new (gpointer object)
{
  GWeakRef *ref = g_new (GWeakRef, 1);

  g_weak_ref_init (ref, object);
  return ref;
}

static void
weak_ref_free (gpointer data)
{
  g_weak_ref_clear (data);
  g_free (data);
}

static gboolean
kick (gpointer data)
{
  g_autoptr (AdwToastOverlay) overlay = g_weak_ref_get (data);
  Queue *q = overlay != NULL ? g_object_get_data (G_OBJECT (overlay), QUEUE_KEY) : NULL;

  if (q != NULL)
    ensure_tick (q);
  return G_SOURCE_REMOVE;
}

static void
current_dismissed (AdwToast *toast, Queue *q)
{
  if (toast != q->current)
    return;
  forget_current (q);
  /* the overlay started its hide animation at this frame time */
  q->dismissed_us = frame_time (q);
  /* not from inside the emission: the overlay may be disposing (it dismisses its toasts then) */
  g_idle_add_full (G_PRIORITY_DEFAULT, kick, weak_ref_new (q->overlay), weak_ref_free);
}

static void
show_next (Queue *q, gint64 now)
{
  AdwToast *toast = g_queue_pop_head (&q->pending);

  q->current = toast;
  q->timeout_s = adw_toast_get_timeout (toast);
  /* counted here, in frame time, instead of by libadwaita's wall-clock timer */
  adw_toast_set_timeout (toast, 0);
  q->shown_us = now;
  q->dismissed_id = g_signal_connect (toast, "dismissed", G_CALLBACK (current_dismissed), q);
  adw_toast_overlay_add_toast (q->overlay, g_object_ref (toast));
}

/* Whether the next toast may enter the overlay at frame time now. */
static gboolean
may_show (Queue *q, gint64 now)
{
  if (q->current != NULL || g_queue_is_empty (&q->pending) || q->destroyed)
    return FALSE;
  /* unmapped, nothing animates: the overlay frees a hidden toast at once */
  return !gtk_widget_get_mapped (GTK_WIDGET (q->overlay)) || q->dismissed_us == 0
         || now - q->dismissed_us >= (gint64) RPE_TOAST_QUEUE_GAP_MS * 1000;
}

static gboolean
tick (GtkWidget *widget, GdkFrameClock *clock, gpointer user_data)
{
  Queue *q = user_data;
  gint64 now = gdk_frame_clock_get_frame_time (clock);

  if (q->current != NULL && q->timeout_s > 0 && now - q->shown_us >= (gint64) q->timeout_s * G_USEC_PER_SEC)
    adw_toast_dismiss (q->current); /* current_dismissed: current NULL, dismissed_us now */
  if (may_show (q, now))
    show_next (q, now);
  /* ticking is needed while a shown toast has a timeout or a waiting one has its gap to wait */
  if ((q->current != NULL && q->timeout_s > 0) || (q->current == NULL && !g_queue_is_empty (&q->pending)))
    return G_SOURCE_CONTINUE;
  q->tick_id = 0;
  return G_SOURCE_REMOVE;
}

static void
ensure_tick (Queue *q)
{
  if (q->destroyed)
    return;
  if (!gtk_widget_get_mapped (GTK_WIDGET (q->overlay)))
    {
      /* no frames: what may be shown is shown now; the timeouts start counting at the map */
      if (may_show (q, g_get_monotonic_time ()))
        show_next (q, g_get_monotonic_time ());
      return;
    }
  if (q->tick_id == 0)
    q->tick_id = gtk_widget_add_tick_callback (GTK_WIDGET (q->overlay), tick, q, NULL);
}

static void
overlay_mapped (GtkWidget *widget, Queue *q)
{
  /* a toast shown while unmapped is timed from the first frame */
  if (q->current != NULL)
    q->shown_us = frame_time (q);
  ensure_tick (q);
}

static void
overlay_destroyed (GtkWidget *widget, Queue *q)
{
  q->destroyed = TRUE;
  if (q->tick_id != 0)
    gtk_widget_remove_tick_callback (widget, q->tick_id);
  q->tick_id = 0;
  forget_current (q);
  g_queue_clear_full (&q->pending, g_object_unref);
}

static void
queue_free (gpointer data)
{
  Queue *q = data;

  forget_current (q);
  g_queue_clear_full (&q->pending, g_object_unref);
  g_free (q);
}

static Queue *
queue_get (AdwToastOverlay *overlay, gboolean create)
{
  Queue *q = g_object_get_data (G_OBJECT (overlay), QUEUE_KEY);

  if (q == NULL && create)
    {
      q = g_new0 (Queue, 1);
      q->overlay = overlay;
      g_queue_init (&q->pending);
      g_object_set_data_full (G_OBJECT (overlay), QUEUE_KEY, q, queue_free);
      g_signal_connect (overlay, "map", G_CALLBACK (overlay_mapped), q);
      g_signal_connect (overlay, "destroy", G_CALLBACK (overlay_destroyed), q);
    }
  return q;
}

void
rpe_toast_queue_add (AdwToastOverlay *overlay, AdwToast *toast)
{
  Queue *q;

  g_return_if_fail (ADW_IS_TOAST_OVERLAY (overlay));
  g_return_if_fail (ADW_IS_TOAST (toast));
  q = queue_get (overlay, TRUE);
  if (q->destroyed)
    {
      g_object_unref (toast);
      return;
    }
  if (adw_toast_get_priority (toast) == ADW_TOAST_PRIORITY_HIGH)
    g_queue_push_head (&q->pending, toast);
  else
    g_queue_push_tail (&q->pending, toast);
  ensure_tick (q);
}

guint
rpe_toast_queue_pending (AdwToastOverlay *overlay)
{
  Queue *q;

  g_return_val_if_fail (ADW_IS_TOAST_OVERLAY (overlay), 0);
  q = queue_get (overlay, FALSE);
  return q != NULL ? g_queue_get_length (&q->pending) : 0;
}

AdwToast *
rpe_toast_queue_current (AdwToastOverlay *overlay)
{
  Queue *q;

  g_return_val_if_fail (ADW_IS_TOAST_OVERLAY (overlay), NULL);
  q = queue_get (overlay, FALSE);
  return q != NULL ? q->current : NULL;
}

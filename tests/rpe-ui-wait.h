/* rpe-ui-wait.h: waiting in UI tests for the event a test observes, never for a fixed time.
 *
 * Every wait iterates the main loop until a condition holds; its only time limit is a generous
 * hang guard (TIMEOUT_S, 40x under valgrind) that fails the test instead of blocking CI forever.
 * Frames are counted on the widget's GdkFrameClock ("after-paint"), so "the view has drawn" is an
 * event, not a guess about how long drawing takes.
 */
#pragma once

#include <gtk/gtk.h>

#include "rpe-compute.h"

/* a test whose waits may see longer jobs defines its own before including this */
#ifndef RPE_TEST_HANG_GUARD_S
#define RPE_TEST_HANG_GUARD_S 120
#endif

static inline guint
rpe_test_hang_guard_s (void)
{
  /* valgrind runs every thread serialised and 20-50x slower */
  return g_getenv ("RPE_UNDER_VALGRIND") != NULL ? 40 * RPE_TEST_HANG_GUARD_S : RPE_TEST_HANG_GUARD_S;
}

static inline gboolean
rpe_test_flag_set (gpointer user_data)
{
  *(gboolean *) user_data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Iterates the default main context until done (data) is TRUE; fails the test on a hang. */
static inline void
rpe_test_iterate_until (gboolean (*done) (gpointer),
                        gpointer   data)
{
  gboolean expired = FALSE;
  guint id = g_timeout_add_seconds (rpe_test_hang_guard_s (), rpe_test_flag_set, &expired);

  while (!done (data) && !expired)
    g_main_context_iteration (NULL, TRUE);
  if (!expired)
    g_source_remove (id);
  g_assert_false (expired);
}

/* Dispatches everything that is ready now, without blocking. */
static inline void
rpe_test_drain (void)
{
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

typedef struct
{
  guint painted;
  guint wanted;
} RpeTestFrames;

static inline void
rpe_test_after_paint (GdkFrameClock *clock,
                      gpointer       user_data)
{
  ((RpeTestFrames *) user_data)->painted++;
}

static inline gboolean
rpe_test_keep_ticking (GtkWidget     *widget,
                       GdkFrameClock *clock,
                       gpointer       user_data)
{
  return G_SOURCE_CONTINUE;
}

static inline gboolean
rpe_test_frames_done (gpointer data)
{
  RpeTestFrames *frames = data;

  return frames->painted >= frames->wanted;
}

static inline gboolean
rpe_test_widget_mapped (gpointer data)
{
  return gtk_widget_get_mapped (GTK_WIDGET (data)) && gtk_widget_get_frame_clock (GTK_WIDGET (data)) != NULL;
}

/* Waits until the toplevel of widget has painted n more frames (the widget is redrawn first). */
static inline void
rpe_test_wait_frames (GtkWidget *widget,
                      guint      n)
{
  RpeTestFrames frames = { 0, n };
  GdkFrameClock *clock;
  gulong handler;
  guint tick;

  rpe_test_iterate_until (rpe_test_widget_mapped, widget);
  clock = gtk_widget_get_frame_clock (widget);
  handler = g_signal_connect (clock, "after-paint", G_CALLBACK (rpe_test_after_paint), &frames);
  tick = gtk_widget_add_tick_callback (widget, rpe_test_keep_ticking, NULL, NULL);
  gtk_widget_queue_draw (widget);
  rpe_test_iterate_until (rpe_test_frames_done, &frames);
  gtk_widget_remove_tick_callback (widget, tick);
  g_signal_handler_disconnect (clock, handler);
}

static inline gboolean
rpe_test_no_jobs (gpointer data)
{
  return rpe_compute_jobs_alive () == 0;
}

/* Waits until every compute job has finished and been finalised (results delivered or dropped). */
static inline void
rpe_test_wait_jobs (void)
{
  rpe_test_iterate_until (rpe_test_no_jobs, NULL);
  rpe_test_drain ();
}

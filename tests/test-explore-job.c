/* test-explore-job.c: the job monitor every worker job shares (its 20 Hz progress throttle,
 * cancellation, the jobs-alive count) and the time-left estimate, both on a fake clock: no
 * sleeps, no wall-clock assertions. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "rpe-job.h"

/* A clock the test moves by hand (microseconds). */
typedef struct
{
  gint64 now;
  gint64 step;   /* added after every read */
} FakeClock;

static gint64
fake_clock_read (gpointer data)
{
  FakeClock *clock = data;
  gint64 t = clock->now;

  clock->now += clock->step;
  return t;
}

/* ------------------------------------------------------------ estimate */

static char *
format_at (RpeProgressEstimate *e,
           FakeClock           *clock,
           gint64               t_us,
           double               fraction)
{
  clock->now = t_us;
  rpe_progress_estimate_update (e, fraction);
  return rpe_progress_estimate_format (e);
}

static void
test_estimate (void)
{
  FakeClock clock = { 1000000, 0 };
  RpeProgressEstimate e;
  g_autofree char *t1 = NULL, *t2 = NULL, *t3 = NULL, *t4 = NULL, *t5 = NULL, *t6 = NULL, *t7 = NULL;

  rpe_progress_estimate_start (&e, fake_clock_read, &clock);   /* starts at 1 s */
  g_assert_cmpstr ((t1 = rpe_progress_estimate_format (&e)), ==, "0 %");
  /* too little done to say: the percent only */
  g_assert_cmpstr ((t2 = format_at (&e, &clock, 2000000, 0.02)), ==, "2 %");
  g_assert_cmpfloat (rpe_progress_estimate_seconds_left (&e), <, 0.0);
  /* too little time to say (0.4 s), though 30 % is done */
  g_assert_cmpstr ((t3 = format_at (&e, &clock, 1400000, 0.30)), ==, "30 %");
  /* 25 % in 2 s: the mean rate gives 6 s for the 75 % left */
  g_assert_cmpstr ((t4 = format_at (&e, &clock, 3000000, 0.25)), ==, "25 % · about 6 s left");
  g_assert_cmpfloat_with_epsilon (rpe_progress_estimate_seconds_left (&e), 6.0, 1e-9);
  /* 42 % in 20 s: 27.6 s left, rounded up */
  g_assert_cmpstr ((t5 = format_at (&e, &clock, 21000000, 0.42)), ==, "42 % · about 28 s left");
  /* 10 % in 20 s: 180 s = 3 min */
  g_assert_cmpstr ((t6 = format_at (&e, &clock, 21000000, 0.10)), ==, "10 % · about 3 min left");
  /* 5 % in 10 min: 11400 s, about 3 h */
  g_assert_cmpstr ((t7 = format_at (&e, &clock, 601000000, 0.05)), ==, "5 % · about 3 h left");
  /* done, and bad input */
  {
    g_autofree char *done = format_at (&e, &clock, 602000000, 1.0);
    g_autofree char *nan_text = NULL;

    g_assert_cmpstr (done, ==, "100 %");
    g_assert_cmpfloat (rpe_progress_estimate_seconds_left (&e), ==, 0.0);
    nan_text = format_at (&e, &clock, 603000000, NAN);   /* ignored */
    g_assert_cmpstr (nan_text, ==, "100 %");
    g_autofree char *over = format_at (&e, &clock, 603000000, 7.0);   /* clamped */
    g_assert_cmpstr (over, ==, "100 %");
  }
}

static void
test_estimate_default_clock (void)
{
  FakeClock clock = { 0, G_USEC_PER_SEC };   /* every read is one second later */
  RpeProgressEstimate e;
  g_autofree char *text = NULL;

  rpe_progress_estimate_set_default_clock (fake_clock_read, &clock);
  rpe_progress_estimate_start (&e, NULL, NULL);   /* t = 0 */
  rpe_progress_estimate_update (&e, 0.5);          /* t = 1 s: 1 s left */
  text = rpe_progress_estimate_format (&e);
  g_assert_cmpstr (text, ==, "50 % · about 1 s left");
  rpe_progress_estimate_set_default_clock (NULL, NULL);
}

/* ------------------------------------------------------------- monitor */

typedef struct
{
  guint   calls;
  double  last;
  double  fractions[64];
} Received;

static void
received_progress (double   fraction,
                   gpointer user_data)
{
  Received *r = user_data;

  if (r->calls < G_N_ELEMENTS (r->fractions))
    r->fractions[r->calls] = fraction;
  r->calls++;
  r->last = fraction;
}

static void
task_done (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  *(gboolean *) user_data = TRUE;
}

static void
drain (void)
{
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

/* Completes the task the way a worker does and lets its callback run. */
static void
finish_task (GTask    *task,
             gboolean *done)
{
  g_task_return_boolean (task, TRUE);
  while (!*done)
    g_main_context_iteration (NULL, TRUE);
}

static void
test_monitor_throttle (void)
{
  FakeClock clock = { 5000000, 0 };
  Received got = { 0 };
  gboolean done = FALSE;
  guint alive = rpe_compute_jobs_alive ();
  GTask *task = g_task_new (NULL, NULL, task_done, &done);
  RpeJobMonitor *m = rpe_job_monitor_new (task, received_progress, &got);
  const RpeMonitor *core;
  guint expected = 0;
  gint64 last = 0;
  gboolean any = FALSE;

  g_assert_cmpuint (rpe_compute_jobs_alive (), ==, alive + 1);
  rpe_job_monitor_set_clock (m, fake_clock_read, &clock);
  core = rpe_job_monitor_begin (m);
  g_assert_nonnull (core->progress);
  /* 100 reports 10 ms apart (1 s): the naive rule, at most one per 50 ms, keeps 20 */
  for (guint i = 0; i < 100; i++)
    {
      clock.now = 5000000 + (gint64) i * 10000;
      if (!any || clock.now - last >= RPE_JOB_PROGRESS_INTERVAL_US)
        {
          any = TRUE;
          last = clock.now;
          expected++;
        }
      rpe_monitor_progress (core, (i + 1) / 100.0);
    }
  g_assert_cmpuint (expected, ==, 20);
  g_assert_cmpuint (rpe_job_monitor_get_sent (m), ==, expected);
  /* nothing reaches the callback before the main context runs ... */
  g_assert_cmpuint (got.calls, ==, 0);
  drain ();
  /* ... then every kept report arrives, in order: 0.01, 0.06, ..., 0.96 */
  g_assert_cmpuint (got.calls, ==, expected);
  for (guint i = 0; i < expected; i++)
    g_assert_cmpfloat_with_epsilon (got.fractions[i], (5 * i + 1) / 100.0, 1e-12);
  /* a burst at one instant after the last kept report: none passes */
  for (guint i = 0; i < 10; i++)
    rpe_monitor_progress (core, 0.99);
  drain ();
  g_assert_cmpuint (got.calls, ==, expected);
  /* 50 ms later one passes */
  clock.now += RPE_JOB_PROGRESS_INTERVAL_US;
  rpe_monitor_progress (core, 1.0);
  drain ();
  g_assert_cmpuint (got.calls, ==, expected + 1);
  g_assert_cmpfloat (got.last, ==, 1.0);
  rpe_job_monitor_end (m);
  /* after the task completed (its callback ran), a report is never delivered */
  finish_task (task, &done);
  clock.now += RPE_JOB_PROGRESS_INTERVAL_US;
  rpe_monitor_progress (core, 0.5);
  g_assert_cmpuint (rpe_job_monitor_get_sent (m), ==, expected + 2);
  drain ();
  g_assert_cmpuint (got.calls, ==, expected + 1);
  rpe_job_monitor_free (m);
  g_assert_cmpuint (rpe_compute_jobs_alive (), ==, alive);
  g_object_unref (task);
}

static void
test_monitor_cancel (void)
{
  FakeClock clock = { 0, 0 };
  Received got = { 0 };
  gboolean done = FALSE;
  GCancellable *cancellable = g_cancellable_new ();
  GTask *task = g_task_new (NULL, cancellable, task_done, &done);
  RpeJobMonitor *m = rpe_job_monitor_new (task, received_progress, &got);
  const RpeMonitor *core;

  rpe_job_monitor_set_clock (m, fake_clock_read, &clock);
  core = rpe_job_monitor_begin (m);
  g_assert_false (rpe_monitor_cancelled (core));
  rpe_monitor_progress (core, 0.25);           /* queued */
  g_cancellable_cancel (cancellable);
  /* the flag the core polls is raised at once, on this thread */
  g_assert_true (rpe_monitor_cancelled (core));
  g_assert_cmpint (atomic_load (rpe_job_monitor_get_flag (m)), ==, 1);
  /* progress queued before the cancel is not delivered after it, nor any later */
  clock.now += RPE_JOB_PROGRESS_INTERVAL_US;
  rpe_monitor_progress (core, 0.5);
  drain ();
  g_assert_cmpuint (got.calls, ==, 0);
  g_assert_cmpuint (rpe_job_monitor_get_sent (m), ==, 2);
  rpe_job_monitor_end (m);
  /* a cancellable cancelled before the job begins raises the flag when it begins */
  {
    gboolean done2 = FALSE;
    GTask *task2 = g_task_new (NULL, cancellable, task_done, &done2);
    RpeJobMonitor *m2 = rpe_job_monitor_new (task2, NULL, NULL);
    const RpeMonitor *core2 = rpe_job_monitor_begin (m2);

    g_assert_null (core2->progress);
    g_assert_true (rpe_monitor_cancelled (core2));
    rpe_job_monitor_end (m2);
    finish_task (task2, &done2);
    rpe_job_monitor_free (m2);
    g_object_unref (task2);
  }
  finish_task (task, &done);
  rpe_job_monitor_free (m);
  g_object_unref (task);
  g_object_unref (cancellable);
  g_assert_cmpuint (rpe_compute_jobs_alive (), ==, 0);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/explore/job/estimate", test_estimate);
  g_test_add_func ("/explore/job/estimate-default-clock", test_estimate_default_clock);
  g_test_add_func ("/explore/job/monitor-throttle", test_monitor_throttle);
  g_test_add_func ("/explore/job/monitor-cancel", test_monitor_cancel);
  return g_test_run ();
}

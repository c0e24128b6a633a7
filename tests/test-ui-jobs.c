/* test-ui-jobs.c: honest long jobs in the window under Xvfb: percent done and time left
 * during a job (a fake clock drives the estimate), the cap line and "Compute at Full N"
 * (a result at the N asked, checked cell by cell against the map computed at that N
 * directly), the memory-budget refusal, and a map never drawn under axes of another N
 * after a cancel.  Waits for observed events only (rpe-ui-wait.h). */
#include "config.h"

#include <math.h>
#include <string.h>

#include <adwaita.h>

#include "rpe-alloc.h"
#include "rpe-window-test.h"
#include "rpe-ui-test-utils.h"
#include "rpe-ui-wait.h"

/* The values of the templates grid's cell d as the view draws them (NULL if none). */
static const float *
templates_cell_data (RpeTemplatesView *view,
                     gsize             d,
                     gsize            *rows,
                     gsize            *cols)
{
  const RpeHeatmapData *cell = rpe_templates_view_get_cell (view, d);

  *rows = cell != NULL ? cell->rows : 0;
  *cols = cell != NULL ? cell->cols : 0;
  return cell != NULL ? cell->values : NULL;
}

static RpeWindow *
open_window (RpeWindowView view)
{
  RpeWindow *window = rpe_window_new (NULL);

  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  rpe_window_set_view (window, view);
  gtk_window_present (GTK_WINDOW (window));
  rpe_test_settle (window, FALSE);
  return window;
}

/* Every read of the fake clock is one second after the previous one. */
static gint64
ticking_clock (gpointer data)
{
  gint64 *now = data;

  *now += G_USEC_PER_SEC;
  return *now;
}

/* ---------------------------------------------------------- progress text */

typedef struct
{
  GtkProgressBar *bar;
  GPtrArray      *texts;
} TextLog;

static void
text_changed (GObject    *bar,
              GParamSpec *pspec,
              TextLog    *log)
{
  const char *text = gtk_progress_bar_get_text (GTK_PROGRESS_BAR (bar));

  if (text != NULL)
    g_ptr_array_add (log->texts, g_strdup (text));
}

static GtkProgressBar *
find_progress_bar (GtkWidget *widget)
{
  if (GTK_IS_PROGRESS_BAR (widget))
    return GTK_PROGRESS_BAR (widget);
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL; c = gtk_widget_get_next_sibling (c))
    {
      GtkProgressBar *bar = find_progress_bar (c);

      if (bar != NULL)
        return bar;
    }
  return NULL;
}

/* "P % · about T s|min|h left" with 0 <= P < 100 and T >= 1 */
static gboolean
is_time_left (const char *text)
{
  unsigned p, t;
  char unit[8] = "";

  if (sscanf (text, "%u %% · about %u %3s left", &p, &t, unit) != 3)
    return FALSE;
  return p < 100 && t >= 1 && (strcmp (unit, "s") == 0 || strcmp (unit, "min") == 0 || strcmp (unit, "h") == 0)
         && g_str_has_suffix (text, " left");
}

static gboolean
teaching_idle (gpointer data)
{
  return !rpe_figure_page_is_busy (RPE_FIGURE_PAGE (RPE_TEACHING_VIEW (data)));
}

static void
test_progress_text (void)
{
  RpeWindow *window = open_window (RPE_WINDOW_VIEW_TEACHING);
  RpeTeachingView *tv = RPE_TEACHING_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_TEACHING));
  RpeExplorerState *state = rpe_window_get_state (window);
  TextLog log = { find_progress_bar (GTK_WIDGET (tv)), g_ptr_array_new_with_free_func (g_free) };
  gint64 now = 0;
  gboolean saw_left = FALSE;
  gulong id;

  g_assert_nonnull (log.bar);
  rpe_progress_estimate_set_default_clock (ticking_clock, &now);
  id = g_signal_connect (log.bar, "notify::text", G_CALLBACK (text_changed), &log);
  /* a job with progress reports: new noise (the curve of the error against R is recomputed) */
  g_object_set (state, "length", 200, NULL);
  g_assert_true (rpe_figure_page_is_busy (RPE_FIGURE_PAGE (tv)));
  rpe_test_iterate_until (teaching_idle, tv);
  rpe_test_wait_jobs ();
  g_signal_handler_disconnect (log.bar, id);
  rpe_progress_estimate_set_default_clock (NULL, NULL);

  /* the bar started at "0 %", then said how long was left (1 s per clock read: the first report
   * at fraction f after 1 s gives (1 - f) / f s) */
  g_assert_cmpuint (log.texts->len, >=, 2);
  g_assert_cmpstr (g_ptr_array_index (log.texts, 0), ==, "0 %");
  for (guint i = 1; i < log.texts->len; i++)
    {
      const char *text = g_ptr_array_index (log.texts, i);

      g_test_message ("progress text: %s", text);
      saw_left |= is_time_left (text);
    }
  g_assert_true (saw_left);
  g_ptr_array_unref (log.texts);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* ------------------------------------------------------------------- caps */

/* The map at length N computed directly, one row at a time (rpe_compute_attention_cell). */
static void
assert_map_at_n (RpeExplorerState *state,
                 const float      *map,
                 gsize             n)
{
  g_autoptr (RpeExplorerSnapshot) s = rpe_explorer_state_snapshot (state);
  double max_err = 0.0;

  g_assert_cmpuint (s->n, ==, n);
  g_assert_cmpint (s->method, ==, RPE_EXPLORER_METHOD_EXACT);
  for (gsize m = 0; m < n; m += 7)
    {
      double row = 0.0;

      for (gsize k = 0; k < n; k++)
        row += map[m * n + k];
      /* a row of the softmax */
      g_assert_cmpfloat_with_epsilon (row, 1.0, 1e-4);
      for (gsize k = 0; k < n; k += 5)
        {
          double v = NAN;

          g_assert_cmpint (rpe_compute_attention_cell (s, m, k, &v), ==, RPE_OK);
          max_err = fmax (max_err, fabs (v - map[m * n + k]));
        }
    }
  g_assert_cmpfloat (max_err, <, 1e-5);
}

static void
test_cap_full_n (void)
{
  RpeWindow *window = open_window (RPE_WINDOW_VIEW_TEACHING);
  RpeTeachingView *tv = RPE_TEACHING_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_TEACHING));
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeTeaching *t;
  g_autofree char *expect = NULL;
  const gsize cap = 16, asked = 48;

  /* a cap low enough for the full N to be cheap */
  g_object_set (state, "method", RPE_EXPLORER_METHOD_EXACT, "length", (guint) asked, NULL);
  rpe_figure_page_set_n_cap (RPE_FIGURE_PAGE (tv), cap);
  rpe_test_settle (window, FALSE);
  t = rpe_teaching_view_get_result (tv);
  g_assert_nonnull (t);
  g_assert_cmpuint (t->n, ==, cap);
  g_assert_cmpuint (t->n_asked, ==, asked);
  expect = g_strdup_printf ("Computed at N = %zu of %zu.", cap, asked);
  g_assert_cmpstr (rpe_figure_page_get_cap_text (RPE_FIGURE_PAGE (tv)), ==, expect);

  /* over the memory budget: refused, said on the view, nothing computed */
  rpe_budget_set (4096);
  g_assert_false (rpe_figure_page_compute_full (RPE_FIGURE_PAGE (tv)));
  rpe_budget_set (0);
  g_assert_false (rpe_figure_page_is_busy (RPE_FIGURE_PAGE (tv)));
  g_assert_nonnull (strstr (rpe_figure_page_get_cap_text (RPE_FIGURE_PAGE (tv)), "memory budget"));
  g_assert_true (rpe_teaching_view_get_result (tv) == t);

  /* Compute at Full N: a result at the N asked, equal to the map computed at that N */
  g_assert_true (rpe_figure_page_compute_full (RPE_FIGURE_PAGE (tv)));
  g_assert_true (rpe_figure_page_is_busy (RPE_FIGURE_PAGE (tv)));
  rpe_test_settle (window, FALSE);
  t = rpe_teaching_view_get_result (tv);
  g_assert_cmpuint (t->n, ==, asked);
  g_assert_cmpuint (t->n_asked, ==, asked);
  g_assert_cmpstr (rpe_figure_page_get_cap_text (RPE_FIGURE_PAGE (tv)), ==, "");
  {
    gsize rows = 0, cols = 0;

    g_assert_nonnull (rpe_heatmap_view_get_data (rpe_teaching_view_get_heatmap (tv, 0), &rows, &cols));
    g_assert_cmpuint (rows, ==, asked);
    g_assert_cmpuint (cols, ==, asked);
  }
  assert_map_at_n (state, t->exact, asked);

  /* the next change computes at the cap again */
  g_object_set (state, "realizations", 8, NULL);
  rpe_test_settle (window, FALSE);
  g_assert_cmpuint (rpe_teaching_view_get_result (tv)->n, ==, cap);

  /* the Curves page says its cap too */
  {
    RpeCurvesPage *cp = RPE_CURVES_PAGE (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_CURVES));
    RpeCurves *c;

    rpe_window_set_view (window, RPE_WINDOW_VIEW_CURVES);
    rpe_figure_page_set_n_cap (RPE_FIGURE_PAGE (cp), cap);
    rpe_test_settle (window, FALSE);
    c = rpe_curves_page_get_result (cp);
    g_assert_cmpuint (c->n, ==, cap);
    g_assert_cmpstr (rpe_figure_page_get_cap_text (RPE_FIGURE_PAGE (cp)), ==, expect);
    g_assert_true (rpe_figure_page_compute_full (RPE_FIGURE_PAGE (cp)));
    rpe_test_settle (window, FALSE);
    c = rpe_curves_page_get_result (cp);
    g_assert_cmpuint (c->n, ==, asked);
    g_assert_cmpstr (rpe_figure_page_get_cap_text (RPE_FIGURE_PAGE (cp)), ==, "");
  }

  /* and the Templates grid: capped, then at the full N, each cell's map of that N */
  {
    RpeTemplatesView *gv = RPE_TEMPLATES_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_TEMPLATES));
    RpeTemplates *tt;
    gsize rows = 0, cols = 0;

    rpe_window_set_view (window, RPE_WINDOW_VIEW_TEMPLATES);
    rpe_figure_page_set_n_cap (RPE_FIGURE_PAGE (gv), cap);
    rpe_test_settle (window, FALSE);
    tt = rpe_templates_view_get_templates (gv);
    g_assert_cmpuint (tt->n, ==, cap);
    g_assert_cmpstr (rpe_figure_page_get_cap_text (RPE_FIGURE_PAGE (gv)), ==, expect);
    g_assert_true (rpe_figure_page_compute_full (RPE_FIGURE_PAGE (gv)));
    rpe_test_settle (window, FALSE);
    tt = rpe_templates_view_get_templates (gv);
    g_assert_cmpuint (tt->n, ==, asked);
    g_assert_cmpstr (rpe_figure_page_get_cap_text (RPE_FIGURE_PAGE (gv)), ==, "");
    g_assert_nonnull (templates_cell_data (gv, 0, &rows, &cols));
    g_assert_cmpuint (rows, ==, asked);
    /* the template is a function of the lag m - k only: constant along every diagonal */
    for (gsize m = 1; m < asked; m++)
      for (gsize k = 1; k < asked; k++)
        g_assert_cmpfloat_with_epsilon (tt->values[m * asked + k], tt->values[(m - 1) * asked + k - 1], 1e-5);
  }
  gtk_window_destroy (GTK_WINDOW (window));
}

/* ----------------------------------------------------- stale after cancel */

static void
test_cancel_axes (void)
{
  RpeWindow *window = open_window (RPE_WINDOW_VIEW_ATTENTION);
  RpeAttentionView *av = RPE_ATTENTION_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_ATTENTION));
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeTeachingView *tv = RPE_TEACHING_VIEW (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_TEACHING));

  g_object_set (state, "length", 64, NULL);
  rpe_test_settle (window, FALSE);
  g_assert_cmpuint (rpe_attention_view_get_drawn_n (av), ==, 64);
  g_assert_cmpuint (rpe_attention_view_get_axes_n (av), ==, 64);
  g_assert_false (rpe_figure_page_get_stale (RPE_FIGURE_PAGE (av)));

  /* a long job for a new N: while it runs, the old map keeps its own axes */
  g_object_set (state, "length", 65536, NULL);
  g_assert_true (rpe_figure_page_is_busy (RPE_FIGURE_PAGE (av)));
  g_assert_cmpuint (rpe_attention_view_get_axes_n (av), ==, rpe_attention_view_get_drawn_n (av));
  g_assert_true (rpe_figure_page_get_stale (RPE_FIGURE_PAGE (av)));
  rpe_test_wait_frames (GTK_WIDGET (window), 1);
  /* cancelled: still the old map under its own axes, marked stale; the result is dropped */
  rpe_figure_page_cancel (RPE_FIGURE_PAGE (av));
  rpe_test_wait_jobs ();
  rpe_test_wait_frames (GTK_WIDGET (window), 2);
  g_assert_cmpuint (rpe_attention_view_get_drawn_n (av), ==, 64);
  g_assert_cmpuint (rpe_attention_view_get_axes_n (av), ==, 64);
  g_assert_true (rpe_figure_page_get_stale (RPE_FIGURE_PAGE (av)));
  /* a hover at the centre reads the map drawn, in its own cells (about m = n = 32 of 64) */
  {
    GtkWidget *canvas = rpe_attention_view_get_canvas (av);
    g_autofree char *text = rpe_attention_view_describe_point (av, gtk_widget_get_width (canvas) / 2.0,
                                                               gtk_widget_get_height (canvas) / 2.0);
    unsigned m = 0, k = 0;

    g_assert_nonnull (text);
    g_test_message ("hover over the stale map: %s", text);
    g_assert_cmpint (sscanf (text, "m = %u, n = %u", &m, &k), ==, 2);
    g_assert_cmpuint (m, >=, 28);
    g_assert_cmpuint (m, <=, 36);
    g_assert_cmpuint (k, >=, 28);
    g_assert_cmpuint (k, <=, 36);
  }
  /* back to a computed N: fresh, axes and map agree */
  g_object_set (state, "length", 80, NULL);
  rpe_test_settle (window, FALSE);
  g_assert_cmpuint (rpe_attention_view_get_drawn_n (av), ==, 80);
  g_assert_cmpuint (rpe_attention_view_get_axes_n (av), ==, 80);
  g_assert_false (rpe_figure_page_get_stale (RPE_FIGURE_PAGE (av)));

  /* SPE vs RPE: after a cancel the maps keep their own N and say they are stale */
  rpe_window_set_view (window, RPE_WINDOW_VIEW_TEACHING);
  rpe_test_settle (window, FALSE);
  {
    RpeTeaching *t = rpe_teaching_view_get_result (tv);
    gsize rows = 0, cols = 0;

    g_assert_cmpuint (t->n, ==, 80);
    g_object_set (state, "length", 120, NULL);
    g_assert_true (rpe_figure_page_is_busy (RPE_FIGURE_PAGE (tv)));
    g_assert_nonnull (strstr (rpe_figure_page_get_cap_text (RPE_FIGURE_PAGE (tv)), "Stale"));
    rpe_figure_page_cancel (RPE_FIGURE_PAGE (tv));
    rpe_test_wait_jobs ();
    g_assert_true (rpe_teaching_view_get_result (tv) == t);
    g_assert_nonnull (rpe_heatmap_view_get_data (rpe_teaching_view_get_heatmap (tv, 0), &rows, &cols));
    g_assert_cmpuint (rows, ==, t->n);
    g_assert_nonnull (strstr (rpe_figure_page_get_cap_text (RPE_FIGURE_PAGE (tv)), "cancelled"));
  }
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int   argc,
      char *argv[])
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();

  g_test_add_func ("/ui/jobs/progress-text", test_progress_text);
  g_test_add_func ("/ui/jobs/cap-full-n", test_cap_full_n);
  g_test_add_func ("/ui/jobs/cancel-axes", test_cancel_axes);
  return g_test_run ();
}

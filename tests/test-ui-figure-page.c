/* test-ui-figure-page.c: the figure page under every view, in a real window (Xvfb, 1280 x 800).
 *
 * For each page (Templates, Attention, Curves, SPE vs RPE, Outputs, Compare, Overview):
 * - one parameter change starts exactly one job, counted by the page and by every job the process
 *   created (rpe_compute_jobs_started), also after its result has arrived and been laid out (the
 *   caption and the footer change; the figure keeps its size, so nothing asks for another job);
 * - Escape right after a change cancels that job and starts none: the "Cancelled" caption does not
 *   resize the figure either;
 * - the hover read-out is cleared by every new result (a read-out of the old figure never stays
 *   under the new one), and on the attention map it reads the new figure afterwards;
 * - the figure's size does not change while a job runs, after it, or after a cancel.
 * Waits for events (jobs finalised, frames painted), never for a time. */
#include "config.h"

#include <string.h>

#include <adwaita.h>

#include "rpe-ui-test-utils.h"
#include "rpe-ui-wait.h"
#include "rpe-window-test.h"

typedef struct
{
  const char *page;     /* the stack page */
  const char *property; /* the parameter changed (a guint of the explorer state) */
  guint       value[3]; /* before, after, and once more */
} Case;

/* Compare pins A and changes B: its A and B must keep one N, so it changes B's head. */
static const Case cases[] = {
  { "templates", "length", { 64, 72, 80 } },
  { "attention", "length", { 256, 200, 208 } },
  { "curves", "length", { 64, 80, 88 } },
  { "teaching", "length", { 48, 56, 64 } },
  { "outputs", "length", { 64, 72, 80 } },
  { "compare", "head", { 0, 1, 2 } },
  { "overview", "length", { 32, 40, 48 } },
};

static RpeFigurePage *
page_named (RpeWindow  *window,
            const char *name)
{
  if (g_str_equal (name, "compare"))
    return RPE_FIGURE_PAGE (rpe_window_get_compare_view (window));
  if (g_str_equal (name, "overview"))
    return RPE_FIGURE_PAGE (rpe_window_get_overview_view (window));
  for (guint v = 0; v < RPE_WINDOW_N_VIEWS; v++)
    {
      static const char *names[] = { "templates", "attention", "curves", "teaching", "outputs" };

      if (g_str_equal (name, names[v]))
        return RPE_FIGURE_PAGE (rpe_window_get_view_widget (window, v));
    }
  g_assert_not_reached ();
}

/* The widget the figure is drawn in: the first child of the page's content box. */
static GtkWidget *
figure_widget (RpeFigurePage *page)
{
  GtkWidget *w = GTK_WIDGET (page);

  /* page > box > overlay (the one that expands) > content > the view's figure */
  for (GtkWidget *c = gtk_widget_get_first_child (gtk_widget_get_first_child (w)); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    if (GTK_IS_OVERLAY (c) && gtk_widget_get_vexpand (c))
      return gtk_widget_get_first_child (gtk_overlay_get_child (GTK_OVERLAY (c)));
  g_assert_not_reached ();
}

/* Settled: no job, two frames painted (the layout of what the last result changed), and still no
 * job (a resize that asked for one would show here). */
static void
settle (RpeWindow *window)
{
  rpe_test_iterate_until (rpe_test_window_idle_drained, window);
  rpe_test_wait_frames (GTK_WIDGET (window), 3);
  rpe_test_iterate_until (rpe_test_window_idle_drained, window);
  rpe_test_wait_jobs ();
  rpe_test_wait_frames (GTK_WIDGET (window), 2);
}

static void
check_page (gconstpointer data)
{
  const Case *c = data;
  RpeWindow *window = rpe_window_new (NULL);
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeFigurePage *page = page_named (window, c->page);
  GtkWidget *figure;
  guint jobs, page_jobs;
  int width, height;
  gpointer before;

  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  g_object_set (state, c->property, c->value[0], NULL);
  if (g_str_equal (c->page, "compare"))
    rpe_compare_view_pin (RPE_COMPARE_VIEW (page));
  rpe_window_show_page (window, c->page);
  gtk_window_present (GTK_WINDOW (window));
  settle (window);
  g_assert_nonnull (rpe_figure_page_get_result (page));
  figure = figure_widget (page);
  width = gtk_widget_get_width (figure);
  height = gtk_widget_get_height (figure);
  g_assert_cmpint (width, >, 100);
  g_assert_cmpint (height, >, 100);

  /* a read-out of the figure shown (the page's own, or one the pointer left) */
  rpe_figure_page_set_hover (page, "m = 1, n = 2: 0.5");
  if (g_str_equal (c->page, "attention"))
    {
      rpe_figure_page_hover_at (page, figure, width / 2.0, height / 2.0);
      g_assert_true (g_str_has_prefix (rpe_figure_page_get_hover (page), "m "));
    }

  /* one change: one job, before and after its result is laid out */
  jobs = rpe_compute_jobs_started ();
  page_jobs = rpe_figure_page_get_n_jobs (page);
  before = rpe_figure_page_get_result (page);
  g_object_set (state, c->property, c->value[1], NULL);
  g_assert_true (rpe_figure_page_is_busy (page));
  g_assert_cmpuint (rpe_figure_page_get_n_jobs (page), ==, page_jobs + 1);
  rpe_test_wait_frames (GTK_WIDGET (window), 2);
  /* while it runs, the figure keeps its size (progress and badge are overlays) */
  g_assert_cmpint (gtk_widget_get_width (figure), ==, width);
  g_assert_cmpint (gtk_widget_get_height (figure), ==, height);
  settle (window);
  g_assert_true (rpe_figure_page_get_result (page) != before);
  g_assert_cmpuint (rpe_figure_page_get_n_jobs (page), ==, page_jobs + 1);
  g_assert_cmpuint (rpe_compute_jobs_started (), ==, jobs + 1);
  g_assert_cmpint (gtk_widget_get_width (figure), ==, width);
  g_assert_cmpint (gtk_widget_get_height (figure), ==, height);
  g_assert_false (rpe_figure_page_get_stale (page));
  /* the new result cleared the old read-out; the attention map reads its new figure */
  g_assert_cmpstr (rpe_figure_page_get_hover (page), ==, "");
  if (g_str_equal (c->page, "attention"))
    {
      g_autofree char *text = NULL;
      unsigned m = 0, n = 0;

      rpe_figure_page_hover_at (page, figure, width / 2.0, height / 2.0);
      text = g_strdup (rpe_figure_page_get_hover (page));
      g_test_message ("read-out at the centre of N = %u: %s", c->value[1], text);
      g_assert_cmpint (sscanf (text, "m = %u, n = %u", &m, &n), ==, 2);
      g_assert_cmpuint (m, <, c->value[1]);
      g_assert_cmpuint (n, <, c->value[1]);
    }

  /* Escape right after a change: that job is cancelled and no other starts */
  jobs = rpe_compute_jobs_started ();
  page_jobs = rpe_figure_page_get_n_jobs (page);
  before = rpe_figure_page_get_result (page);
  g_object_set (state, c->property, c->value[0], NULL);
  g_assert_true (rpe_figure_page_is_busy (page));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.cancel", NULL));
  g_assert_false (rpe_figure_page_is_busy (page));
  settle (window);
  g_assert_nonnull (strstr (rpe_figure_page_get_caption (page), "Cancelled"));
  g_assert_cmpuint (rpe_figure_page_get_n_jobs (page), ==, page_jobs + 1);
  g_assert_cmpuint (rpe_compute_jobs_started (), ==, jobs + 1);
  g_assert_false (rpe_figure_page_is_busy (page));
  g_assert_true (rpe_figure_page_get_result (page) == before);
  g_assert_cmpint (gtk_widget_get_width (figure), ==, width);
  g_assert_cmpint (gtk_widget_get_height (figure), ==, height);

  /* the next change computes again, once */
  jobs = rpe_compute_jobs_started ();
  g_object_set (state, c->property, c->value[2], NULL);
  settle (window);
  g_assert_cmpuint (rpe_compute_jobs_started (), ==, jobs + 1);
  g_assert_true (rpe_figure_page_get_result (page) != before);

  gtk_window_destroy (GTK_WINDOW (window));
  rpe_test_wait_jobs ();
}

int
main (int   argc,
      char *argv[])
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/ui/figure-page/one-job/%s", cases[i].page);

      g_test_add_data_func (path, &cases[i], check_page);
    }
  return g_test_run ();
}

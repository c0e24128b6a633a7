/* test-ui-tour.c: the guided tour, walked end to end in a real window.
 *
 * Every step opens its view and highlights the sidebar group it names; "Show Me" changes the
 * explorer state (its serial moves and the views recompute); finishing the tour, or leaving it
 * half way, restores every parameter and the view the person had before (checked property by
 * property, module by module, against a memento taken here and against edits made before it).
 */
#include "config.h"

#include <string.h>

#include <adwaita.h>

#include "rpe-tour-bar.h"
#include "rpe-tour.h"
#include "rpe-ui-test-utils.h"
#include "rpe-ui-wait.h"
#include "rpe-window-test.h"

static RpeWindow *
open_window (void)
{
  RpeWindow *window = rpe_window_new (NULL);
  RpeExplorerState *state = rpe_window_get_state (window);
  float w[2 * RPE_EXPLORER_FASTRPB_TAPS - 1];

  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  gtk_window_present (GTK_WINDOW (window));
  rpe_test_wait_frames (GTK_WIDGET (window), 1);
  rpe_test_iterate_until (rpe_test_window_idle, window);
  /* a state of the person's own before the tour */
  for (guint i = 0; i < G_N_ELEMENTS (w); i++)
    w[i] = 0.01f * (float) i;
  rpe_explorer_state_set_fastrpb_weights (state, w, G_N_ELEMENTS (w));
  rpe_explorer_state_set_gate (state, 1, 2, 0.375, FALSE);
  g_object_set (state, "length", 40, "realizations", 24, "seed", 7, "method", RPE_EXPLORER_METHOD_LINEAR,
                "causal", TRUE, "head", 1, "spe-kind", RPE_SPE_CONV, NULL);
  /* a log colour scale (the tour uses its own) and a zoomed attention map (restored after it) */
  g_object_set (state, "color-scale", (guint) RPE_HEATMAP_TRANSFORM_LOG, NULL);
  rpe_window_set_view (window, RPE_WINDOW_VIEW_ATTENTION);
  rpe_test_settle (window, FALSE);
  rpe_figure_page_set_viewport (RPE_FIGURE_PAGE (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_ATTENTION)),
                                8, 24, 4, 20);
  rpe_window_set_view (window, RPE_WINDOW_VIEW_CURVES);
  rpe_test_iterate_until (rpe_test_window_idle, window);
  return window;
}

/* The sidebar group is inside the visible part of the sidebar's scrolled window. */
static gboolean
target_in_view (GtkWidget *target)
{
  GtkWidget *scroller = gtk_widget_get_ancestor (target, GTK_TYPE_SCROLLED_WINDOW);
  graphene_rect_t bounds;

  g_assert_nonnull (scroller);
  if (!gtk_widget_compute_bounds (target, scroller, &bounds))
    return FALSE;
  return bounds.origin.y >= 0 && bounds.origin.y < gtk_widget_get_height (scroller)
         && bounds.origin.y + MIN (bounds.size.height, 60) <= gtk_widget_get_height (scroller);
}

static void
test_memento (void)
{
  RpeExplorerState *state = rpe_explorer_state_new ();
  g_autoptr (RpeTourMemento) m = rpe_tour_memento_save (state, 2);

  g_assert_true (rpe_tour_memento_matches (m, state));
  g_object_set (state, "length", 200, NULL);
  g_assert_false (rpe_tour_memento_matches (m, state));
  rpe_tour_memento_restore (m, state);
  g_assert_true (rpe_tour_memento_matches (m, state));
  g_assert_cmpuint (rpe_explorer_state_get_length (state), ==, 96);
  g_assert_cmpuint (rpe_tour_memento_view (m), ==, 2);
  g_object_unref (state);
}

static void
walk (gboolean leave_half_way)
{
  RpeWindow *window = open_window ();
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeTourBar *tour = RPE_TOUR_BAR (rpe_window_get_tour (window));
  g_autoptr (RpeTourMemento) before = rpe_tour_memento_save (state, RPE_WINDOW_VIEW_CURVES);
  guint n_steps = 0;
  const RpeTourStep *steps = rpe_tour_get_steps (&n_steps);

  g_assert_cmpuint (n_steps, >=, 6);
  g_assert_cmpuint (n_steps, <=, 10);
  g_assert_false (rpe_tour_bar_is_running (tour));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.tour", NULL));
  g_assert_true (rpe_tour_bar_is_running (tour));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (tour)));
  for (guint i = 0; i < n_steps; i++)
    {
      guint64 serial;

      g_assert_cmpuint (rpe_tour_bar_get_step (tour), ==, i);
      g_assert_cmpint (rpe_window_get_view (window), ==, steps[i].view);
      g_assert_false (rpe_tour_bar_get_shown (tour));
      /* the tour's own colours: linear, whatever the person had */
      {
        guint scale = 0;

        g_object_get (state, "color-scale", &scale, NULL);
        g_assert_cmpuint (scale, ==, RPE_HEATMAP_TRANSFORM_NONE);
      }
      if (steps[i].control != NULL)
        {
          GtkWidget *target = rpe_tour_bar_get_target (tour);

          g_assert_nonnull (target);
          g_assert_true (gtk_widget_has_css_class (target, "rpe-tour-target"));
          /* scrolled into view (the LRPE and FastRPB groups are far down the sidebar at 800 px) */
          rpe_test_wait_frames (GTK_WIDGET (window), 3);
          g_assert_true (target_in_view (target));
        }
      /* the step's texts are markup: no literal underscore subscripts */
      g_assert_null (strstr (rpe_tour_bar_get_text (tour), "_d("));
      g_assert_null (strstr (rpe_tour_bar_get_text (tour), "N_train"));
      if (steps[i].demo != NULL)
        {
          /* the demo's module (4 heads of 16 features) is the one shown */
          const RpeSpeParams *p = rpe_explorer_state_get_params (state, rpe_explorer_state_get_spe_kind (state));

          g_assert_nonnull (p);
          g_assert_cmpuint (p->n_heads, ==, 4);
          g_assert_cmpuint (p->n_features, ==, 16);
        }
      rpe_test_wait_frames (GTK_WIDGET (window), 1);
      rpe_test_iterate_until (rpe_test_window_idle, window);
      serial = rpe_explorer_state_get_serial (state);
      rpe_tour_bar_show_me (tour);
      g_assert_true (rpe_tour_bar_get_shown (tour));
      g_assert_cmpuint (rpe_explorer_state_get_serial (state), >, serial);
      rpe_test_wait_frames (GTK_WIDGET (window), 1);
      rpe_test_iterate_until (rpe_test_window_idle, window);
      if (leave_half_way && i == n_steps / 2)
        {
          rpe_tour_bar_leave (tour);
          break;
        }
      if (i > 0 && i == 2)
        {
          /* back and forth: the step is entered again, unshown */
          rpe_tour_bar_back (tour);
          g_assert_cmpuint (rpe_tour_bar_get_step (tour), ==, i - 1);
          g_assert_false (rpe_tour_bar_get_shown (tour));
          rpe_tour_bar_next (tour);
          rpe_tour_bar_show_me (tour);
        }
      rpe_tour_bar_next (tour);
    }
  /* finished or left: everything as before the tour */
  g_assert_false (rpe_tour_bar_is_running (tour));
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (tour)));
  g_assert_true (rpe_tour_memento_matches (before, state));
  g_assert_cmpint (rpe_window_get_view (window), ==, RPE_WINDOW_VIEW_CURVES);
  g_assert_cmpuint (rpe_explorer_state_get_length (state), ==, 40);
  /* and what the state does not hold: the attention zoom */
  {
    double m0, m1, n0, n1;

    rpe_figure_page_get_viewport (RPE_FIGURE_PAGE (rpe_window_get_view_widget (window, RPE_WINDOW_VIEW_ATTENTION)),
                                  &m0, &m1, &n0, &n1);
    g_assert_cmpfloat (m0, ==, 8);
    g_assert_cmpfloat (m1, ==, 24);
    g_assert_cmpfloat (n0, ==, 4);
    g_assert_cmpfloat (n1, ==, 20);
  }
  g_assert_true (rpe_explorer_state_get_method (state) == RPE_EXPLORER_METHOD_LINEAR);
  for (GtkWidget *c = gtk_widget_get_first_child (GTK_WIDGET (window)); c != NULL; c = gtk_widget_get_next_sibling (c))
    g_assert_false (gtk_widget_has_css_class (c, "rpe-tour-target"));
  rpe_test_iterate_until (rpe_test_window_idle, window);
  gtk_window_destroy (GTK_WINDOW (window));
  rpe_test_wait_jobs ();
}

static void
test_walk (void)
{
  walk (FALSE);
}

static void
test_leave (void)
{
  walk (TRUE);
}

int
main (int   argc,
      char *argv[])
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();

  g_test_add_func ("/ui/tour/memento", test_memento);
  g_test_add_func ("/ui/tour/walk", test_walk);
  g_test_add_func ("/ui/tour/leave", test_leave);

  return g_test_run ();
}

/* test-ui-undo.c: Undo and Redo of parameter edits (Xvfb).
 *
 * - Every kind of edit is one step, named after it in the main menu
 *   ("Undo Change Length N"); Undo restores the parameters from before it
 *   exactly (every property, both modules' arrays, the FastRPB weights),
 *   Redo the ones after.
 * - The motions of one drag over an editor are one step; a release seals it.
 * - A seeded random sequence of edits undone to the start gives back the
 *   initial parameters, redone to the end the final ones (compared field by
 *   field with a copy taken independently), and the views then show what a
 *   fresh window shows for those parameters. */
#include "config.h"

#include <math.h>
#include <string.h>

#include <adwaita.h>

#include "rpe-undo.h"
#include "rpe-window-test.h"
/* this test's waits may see longer jobs: a longer hang guard than rpe-ui-wait.h's */
#define RPE_TEST_HANG_GUARD_S 300
#include "rpe-ui-test-utils.h"
#include "rpe-ui-wait.h"

/* ----------------------------------------------- an independent snapshot */

typedef struct
{
  char         *props;        /* every read-write property, printed */
  RpeSpeParams  params[2];
  gboolean      have[2];
  float         w[2 * RPE_EXPLORER_FASTRPB_TAPS - 1];
} Copy;

static void
copy_take (RpeExplorerState *state,
           Copy             *c)
{
  g_autofree GParamSpec **props = NULL;
  guint n = 0;
  GString *text = g_string_new (NULL);
  gsize count = 0;
  const float *w = rpe_explorer_state_get_fastrpb_weights (state, &count);

  props = g_object_class_list_properties (G_OBJECT_GET_CLASS (state), &n);
  for (guint i = 0; i < n; i++)
    if ((props[i]->flags & G_PARAM_READWRITE) == G_PARAM_READWRITE)
      {
        GValue v = G_VALUE_INIT;
        g_autofree char *s = NULL;

        g_value_init (&v, props[i]->value_type);
        g_object_get_property (G_OBJECT (state), props[i]->name, &v);
        s = g_strdup_value_contents (&v);
        g_string_append_printf (text, "%s=%s\n", props[i]->name, s);
        g_value_unset (&v);
      }
  c->props = g_string_free (text, FALSE);
  for (guint k = 0; k < 2; k++)
    {
      const RpeSpeParams *p = rpe_explorer_state_get_params (state, k);

      memset (&c->params[k], 0, sizeof c->params[k]);
      c->have[k] = p != NULL;
      if (p != NULL)
        g_assert_cmpint (rpe_spe_params_copy (&c->params[k], p), ==, RPE_OK);
    }
  g_assert_cmpuint (count, ==, G_N_ELEMENTS (c->w));
  memcpy (c->w, w, sizeof c->w);
}

static void
copy_clear (Copy *c)
{
  g_free (c->props);
  rpe_spe_params_clear (&c->params[0]);
  rpe_spe_params_clear (&c->params[1]);
}

static void
assert_floats_equal (const float *a,
                     const float *b,
                     gsize        n)
{
  g_assert_true ((a == NULL) == (b == NULL));
  if (a != NULL)
    g_assert_cmpmem (a, n * sizeof (float), b, n * sizeof (float));
}

static void
assert_state_is (RpeExplorerState *state,
                 const Copy       *c)
{
  Copy now = { 0 };

  copy_take (state, &now);
  g_assert_cmpstr (now.props, ==, c->props);
  for (guint k = 0; k < 2; k++)
    {
      const RpeSpeParams *a = &now.params[k], *b = &c->params[k];

      g_assert_cmpint (now.have[k], ==, c->have[k]);
      if (!c->have[k])
        continue;
      g_assert_cmpuint (a->n_heads, ==, b->n_heads);
      g_assert_cmpuint (a->n_features, ==, b->n_features);
      g_assert_cmpuint (a->n_sines, ==, b->n_sines);
      g_assert_cmpuint (a->kernel, ==, b->kernel);
      if (k == RPE_SPE_SINE)
        {
          gsize n = a->n_heads * a->n_features * a->n_sines;

          assert_floats_equal (a->freqs, b->freqs, n);
          assert_floats_equal (a->offsets, b->offsets, n);
          assert_floats_equal (a->gains, b->gains, n);
        }
      else
        {
          gsize n = a->n_heads * a->n_features * a->kernel;

          assert_floats_equal (a->wq, b->wq, n);
          assert_floats_equal (a->wk, b->wk, n);
        }
      assert_floats_equal (a->gate, b->gate, a->n_heads * a->n_features);
    }
  g_assert_cmpmem (now.w, sizeof now.w, c->w, sizeof c->w);
  copy_clear (&now);
}

/* ------------------------------------------------------------ the menu */

static GMenuModel *
find_primary_menu (GtkWidget *widget)
{
  if (GTK_IS_MENU_BUTTON (widget) && gtk_menu_button_get_primary (GTK_MENU_BUTTON (widget)))
    return gtk_menu_button_get_menu_model (GTK_MENU_BUTTON (widget));
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL; c = gtk_widget_get_next_sibling (c))
    {
      GMenuModel *m = find_primary_menu (c);

      if (m != NULL)
        return m;
    }
  return NULL;
}

/* The label of the menu item (in any section) whose action is action. */
static char *
menu_label (GMenuModel *model,
            const char *action)
{
  for (int i = 0; i < g_menu_model_get_n_items (model); i++)
    {
      g_autofree char *a = NULL;
      GMenuModel *section;

      if (g_menu_model_get_item_attribute (model, i, G_MENU_ATTRIBUTE_ACTION, "s", &a) && g_str_equal (a, action))
        {
          char *label = NULL;

          g_menu_model_get_item_attribute (model, i, G_MENU_ATTRIBUTE_LABEL, "s", &label);
          return label;
        }
      section = g_menu_model_get_item_link (model, i, G_MENU_LINK_SECTION);
      if (section != NULL)
        {
          char *label = menu_label (section, action);

          g_object_unref (section);
          if (label != NULL)
            return label;
        }
    }
  return NULL;
}

static void
assert_menu (RpeWindow  *window,
             const char *undo,
             const char *redo)
{
  GMenuModel *menu = find_primary_menu (GTK_WIDGET (window));
  g_autofree char *u = NULL;
  g_autofree char *r = NULL;

  g_assert_nonnull (menu);
  u = menu_label (menu, "win.undo");
  r = menu_label (menu, "win.redo");
  g_assert_cmpstr (u, ==, undo);
  g_assert_cmpstr (r, ==, redo);
  g_assert_cmpint (gtk_widget_is_sensitive (GTK_WIDGET (window)), ==, TRUE);
}

/* ----------------------------------------------------------------- tests */

static void
test_named_steps (void)
{
  RpeWindow *window = rpe_window_new (NULL);
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeUndo *undo = rpe_window_get_undo (window);
  Copy before = { 0 }, after = { 0 };
  const RpeSpeParams *sine;

  g_assert_nonnull (undo);
  gtk_window_present (GTK_WINDOW (window));
  g_assert_false (rpe_undo_can_undo (undo));
  assert_menu (window, "_Undo", "_Redo");

  /* a property (96 is the default: setting it is no edit) */
  g_object_set (state, "length", 96, NULL);
  g_assert_false (rpe_undo_can_undo (undo));
  copy_take (state, &before);
  g_object_set (state, "length", 72, NULL);
  copy_take (state, &after);
  assert_menu (window, "_Undo Change Length N", "_Redo");
  gtk_widget_activate_action (GTK_WIDGET (window), "win.undo", NULL);
  g_assert_cmpuint (rpe_explorer_state_get_length (state), ==, 96);
  assert_state_is (state, &before);
  assert_menu (window, "_Undo", "_Redo Change Length N");
  gtk_widget_activate_action (GTK_WIDGET (window), "win.redo", NULL);
  assert_state_is (state, &after);
  copy_clear (&before);
  copy_clear (&after);

  /* a sine component */
  sine = rpe_explorer_state_get_params (state, RPE_SPE_SINE);
  g_assert_nonnull (sine);
  g_object_set (state, "spe-kind", RPE_SPE_SINE, NULL);
  rpe_undo_seal (undo);
  copy_take (state, &before);
  g_assert_true (rpe_explorer_state_set_sine (state, 0, 0, 0, 0.125, 1.0, 0.5, FALSE));
  copy_take (state, &after);
  assert_menu (window, "_Undo Edit Sine Components", "_Redo");
  g_assert_true (rpe_undo_undo (undo));
  assert_state_is (state, &before);
  g_assert_true (rpe_undo_redo (undo));
  assert_state_is (state, &after);
  copy_clear (&before);
  copy_clear (&after);

  /* one drag (many motions) is one step; after a release, a new one */
  {
    guint steps = rpe_undo_get_n_steps (undo);

    rpe_undo_seal (undo);
    copy_take (state, &before);
    for (int i = 0; i < 20; i++)
      g_assert_true (rpe_explorer_state_set_sine (state, 0, 1, 0, 0.01 * i, 0.0, 1.0, FALSE));
    g_assert_cmpuint (rpe_undo_get_n_steps (undo), ==, steps + 1);
    rpe_undo_seal (undo);
    g_assert_true (rpe_explorer_state_set_sine (state, 0, 1, 0, 0.3, 0.0, 1.0, FALSE));
    g_assert_cmpuint (rpe_undo_get_n_steps (undo), ==, steps + 2);
    g_assert_true (rpe_undo_undo (undo));
    g_assert_true (rpe_undo_undo (undo));
    assert_state_is (state, &before);
    copy_clear (&before);
  }

  /* the other kinds, each named */
  {
    struct { const char *label; int op; } cases[] = {
      { "_Undo Edit Gates", 0 }, { "_Undo Edit FastRPB Weights", 1 }, { "_Undo Change Filter Length L", 2 },
      { "_Undo Edit Conv Filters", 3 }, { "_Undo Change Realizations R", 4 }, { "_Undo Change Seed", 5 },
      { "_Undo Change Head h", 6 }, { "_Undo Toggle Causal", 7 }, { "_Undo Change Attention", 8 },
      { "_Undo Change Colour Map", 9 }, { "_Undo Change Training Length", 10 },
    };

    for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
      {
        float w[2 * RPE_EXPLORER_FASTRPB_TAPS - 1] = { 0 };
        float taps[4] = { 0.5f, -0.25f, 0.125f, 1.0f };

        rpe_undo_seal (undo);
        copy_take (state, &before);
        switch (cases[i].op)
          {
          case 0: g_assert_true (rpe_explorer_state_set_gate (state, 0, 0, 0.75, TRUE)); break;
          case 1: w[3] = 0.5f; rpe_explorer_state_set_fastrpb_weights (state, w, G_N_ELEMENTS (w)); break;
          case 2: g_object_set (state, "spe-kind", RPE_SPE_CONV, NULL); rpe_undo_seal (undo);
                  copy_clear (&before); copy_take (state, &before);
                  g_assert_true (rpe_explorer_state_set_conv_length (state, 4)); break;
          case 3: g_assert_true (rpe_explorer_state_set_conv_taps (state, 0, 0, TRUE, taps, 4, FALSE)); break;
          case 4: g_object_set (state, "realizations", 3, NULL); break;
          case 5: g_object_set (state, "seed", 1234, NULL); break;
          case 6: g_object_set (state, "head", 1, NULL); break;
          case 7: g_object_set (state, "causal", TRUE, NULL); break;
          case 8: g_object_set (state, "method", RPE_EXPLORER_METHOD_EXACT, NULL); break;
          case 9: g_object_set (state, "colormap", "magma", NULL); break;
          default: g_object_set (state, "train-length", 40, NULL); break;
          }
        copy_take (state, &after);
        {
          GMenuModel *menu = find_primary_menu (GTK_WIDGET (window));
          g_autofree char *u = menu_label (menu, "win.undo");

          g_assert_cmpstr (u, ==, cases[i].label);
        }
        gtk_widget_activate_action (GTK_WIDGET (window), "win.undo", NULL);
        assert_state_is (state, &before);
        gtk_widget_activate_action (GTK_WIDGET (window), "win.redo", NULL);
        assert_state_is (state, &after);
        copy_clear (&before);
        copy_clear (&after);
      }
  }
  /* a new edit after an undo drops the redo steps */
  g_assert_true (rpe_undo_undo (undo));
  g_assert_true (rpe_undo_can_redo (undo));
  g_object_set (state, "seed", 77, NULL);
  g_assert_false (rpe_undo_can_redo (undo));
  assert_menu (window, "_Undo Change Seed", "_Redo");

  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

static void
random_edit (RpeExplorerState *state,
             GRand            *rng)
{
  const RpeSpeParams *p = rpe_explorer_state_get_params (state, rpe_explorer_state_get_spe_kind (state));
  guint op = (guint) g_rand_int_range (rng, 0, 12);

  switch (op)
    {
    case 0: g_object_set (state, "length", (guint) g_rand_int_range (rng, 8, 64), NULL); break;
    case 1: g_object_set (state, "realizations", (guint) g_rand_int_range (rng, 1, 16), NULL); break;
    case 2: g_object_set (state, "seed", (guint) g_rand_int_range (rng, 0, 100), NULL); break;
    case 3: g_object_set (state, "head", (guint) g_rand_int_range (rng, 0, (gint32) p->n_heads), NULL); break;
    case 4: g_object_set (state, "causal", g_rand_boolean (rng), NULL); break;
    case 5: g_object_set (state, "method", (guint) g_rand_int_range (rng, 0, RPE_EXPLORER_N_METHODS), NULL); break;
    case 6: g_object_set (state, "spe-kind", (guint) g_rand_int_range (rng, 0, 2), NULL); break;
    case 7:
      {
        const RpeSpeParams *sine = rpe_explorer_state_get_params (state, RPE_SPE_SINE);

        rpe_explorer_state_set_sine (state, 0, (gsize) g_rand_int_range (rng, 0, (gint32) sine->n_features),
                                     (gsize) g_rand_int_range (rng, 0, (gint32) sine->n_sines),
                                     g_rand_double_range (rng, 0, 0.5), g_rand_double_range (rng, -3, 3),
                                     g_rand_double_range (rng, 0, 2), g_rand_int_range (rng, 0, 4) == 0);
      }
      break;
    case 8: rpe_explorer_state_set_gate (state, 0, (gsize) g_rand_int_range (rng, 0, (gint32) p->n_features),
                                         g_rand_double (rng), g_rand_boolean (rng)); break;
    case 9:
      {
        float w[2 * RPE_EXPLORER_FASTRPB_TAPS - 1];

        for (guint j = 0; j < G_N_ELEMENTS (w); j++)
          w[j] = (float) g_rand_double_range (rng, -0.5, 0.5);
        rpe_explorer_state_set_fastrpb_weights (state, w, G_N_ELEMENTS (w));
      }
      break;
    case 10: rpe_explorer_state_set_conv_length (state, (gsize) g_rand_int_range (rng, 2, 20)); break;
    default: g_object_set (state, "train-length", (guint) g_rand_int_range (rng, 0, 64), NULL); break;
    }
}

static void
test_random_round_trip (void)
{
  RpeWindow *window = rpe_window_new (NULL);
  RpeExplorerState *state = rpe_window_get_state (window);
  RpeUndo *undo = rpe_window_get_undo (window);
  GRand *rng = g_rand_new_with_seed (1312);
  Copy start = { 0 }, end = { 0 };
  guint steps;

  g_object_set (state, "length", 24, NULL);
  gtk_window_present (GTK_WINDOW (window));
  rpe_test_iterate_until (rpe_test_window_idle_drained, window);
  while (rpe_undo_undo (undo))
    ;
  copy_take (state, &start);
  for (guint i = 0; i < 150; i++)
    {
      random_edit (state, rng);
      if (g_rand_int_range (rng, 0, 3) == 0)
        rpe_undo_seal (undo);
      g_main_context_iteration (NULL, FALSE);
    }
  copy_take (state, &end);
  steps = rpe_undo_get_n_steps (undo);
  g_assert_cmpuint (steps, >, 20);
  g_assert_cmpuint (steps, <=, RPE_UNDO_MAX_STEPS);
  while (rpe_undo_undo (undo))
    g_main_context_iteration (NULL, FALSE);
  assert_state_is (state, &start);
  while (rpe_undo_redo (undo))
    g_main_context_iteration (NULL, FALSE);
  assert_state_is (state, &end);
  g_assert_cmpuint (rpe_undo_get_n_steps (undo), ==, steps);

  /* the views follow: the attention figure equals a fresh window's */
  rpe_window_set_view (window, RPE_WINDOW_VIEW_ATTENTION);
  rpe_test_iterate_until (rpe_test_window_idle_drained, window);
  {
    RpeWindow *fresh = rpe_window_new (NULL);
    g_autoptr (RpeFigureBundle) a = NULL;
    g_autoptr (RpeFigureBundle) b = NULL;
    g_autoptr (GError) error = NULL;
    RpeExplorerState *fs = rpe_window_get_state (fresh);
    g_autofree GParamSpec **props = NULL;
    guint n = 0;
    gsize count = 0;
    const float *w = rpe_explorer_state_get_fastrpb_weights (state, &count);

    g_assert_true (rpe_explorer_state_set_modules (fs, rpe_explorer_state_get_params (state, RPE_SPE_SINE),
                                                   rpe_explorer_state_get_source (state, RPE_SPE_SINE),
                                                   rpe_explorer_state_get_params (state, RPE_SPE_CONV),
                                                   rpe_explorer_state_get_source (state, RPE_SPE_CONV), &error));
    rpe_explorer_state_set_fastrpb_weights (fs, w, count);
    props = g_object_class_list_properties (G_OBJECT_GET_CLASS (state), &n);
    for (guint i = 0; i < n; i++)
      if ((props[i]->flags & G_PARAM_READWRITE) == G_PARAM_READWRITE)
        {
          GValue v = G_VALUE_INIT;

          g_value_init (&v, props[i]->value_type);
          g_object_get_property (G_OBJECT (state), props[i]->name, &v);
          g_object_set_property (G_OBJECT (fs), props[i]->name, &v);
          g_value_unset (&v);
        }
    gtk_window_set_default_size (GTK_WINDOW (fresh), 1280, 800);
    gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
    rpe_window_set_view (fresh, RPE_WINDOW_VIEW_ATTENTION);
    gtk_window_present (GTK_WINDOW (fresh));
    rpe_test_iterate_until (rpe_test_window_idle_drained, fresh);
    rpe_test_iterate_until (rpe_test_window_idle_drained, window);
    a = rpe_window_build_figure (window, RPE_WINDOW_VIEW_ATTENTION);
    b = rpe_window_build_figure (fresh, RPE_WINDOW_VIEW_ATTENTION);
    g_assert_nonnull (a);
    g_assert_nonnull (b);
    g_assert_cmpstr (a->fig.title, ==, b->fig.title);
    g_assert_cmpuint (a->fig.heatmap.rows, ==, b->fig.heatmap.rows);
    g_assert_cmpuint (a->fig.heatmap.cols, ==, b->fig.heatmap.cols);
    g_assert_cmpmem (a->fig.heatmap.values, a->fig.heatmap.rows * a->fig.heatmap.cols * sizeof (float),
                     b->fig.heatmap.values, b->fig.heatmap.rows * b->fig.heatmap.cols * sizeof (float));
    gtk_window_destroy (GTK_WINDOW (fresh));
  }
  copy_clear (&start);
  copy_clear (&end);
  g_rand_free (rng);
  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

int
main (int   argc,
      char *argv[])
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();

  g_test_add_func ("/ui/undo/named-steps", test_named_steps);
  g_test_add_func ("/ui/undo/random-round-trip", test_random_round_trip);

  return g_test_run ();
}

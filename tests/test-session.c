/* test-session.c: .rpe-session files without a display.
 *
 * A save -> open round trip gives back every property (found by iterating the
 * class's properties here, independently of rpe-session.c) and every array;
 * malformed sessions are refused with a message and leave the live state as
 * it was; a checkpoint that moved is found beside the session, a changed one
 * gives a warning; `rpe export --session` redraws the PNG of the figure that
 * `rpe export --save-session` wrote, pixel for pixel, and options given beside
 * --session override the session's values. */
#include "config.h"

#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cairo.h>
#include <glib/gstdio.h>

#include "rpe-alloc.h"
#include "rpe-error.h"
#include "rpe-checkpoint.h"
#include "rpe-checkpoint-lrpe.h"
#include "rpe-npy.h"
#include "rpe-outputs.h"
#include "rpe-demos.h"
#include "rpe-session.h"
#include "rpe-test-utils.h"

/* ---------------------------------------------------------------- helpers */

static void
assert_floats (const float *a,
               const float *b,
               gsize        n,
               const char  *what)
{
  if (a == NULL || b == NULL)
    {
      g_assert_true (a == b);
      return;
    }
  for (gsize i = 0; i < n; i++)
    if (a[i] != b[i])
      g_error ("%s: value %zu differs: %.9g != %.9g", what, (size_t) i, a[i], b[i]);
}

static void
assert_params (const RpeSpeParams *a,
               const RpeSpeParams *b)
{
  gsize hd, count;

  g_assert_true ((a == NULL) == (b == NULL));
  if (a == NULL)
    return;
  g_assert_cmpint (a->method, ==, b->method);
  g_assert_cmpuint (a->n_heads, ==, b->n_heads);
  g_assert_cmpuint (a->n_features, ==, b->n_features);
  g_assert_cmpuint (a->n_sines, ==, b->n_sines);
  g_assert_cmpuint (a->kernel, ==, b->kernel);
  hd = a->n_heads * a->n_features;
  count = hd * (a->method == RPE_SPE_SINE ? a->n_sines : a->kernel);
  assert_floats (a->freqs, b->freqs, count, "freqs");
  assert_floats (a->offsets, b->offsets, count, "offsets");
  assert_floats (a->gains, b->gains, count, "gains");
  assert_floats (a->wq, b->wq, count, "wq");
  assert_floats (a->wk, b->wk, count, "wk");
  assert_floats (a->gate, b->gate, hd, "gate");
}

/* Every property (listed here from the class) and every array of a and b equal. */
static void
assert_states_equal (RpeExplorerState *a,
                     RpeExplorerState *b)
{
  guint n;
  g_autofree GParamSpec **props = g_object_class_list_properties (G_OBJECT_GET_CLASS (a), &n);
  const float *wa, *wb, *na, *nb;
  gsize ca, cb, nda, ndb, sa[3], sb[3];

  g_assert_cmpuint (n, >=, 17);
  for (guint i = 0; i < n; i++)
    {
      GValue va = G_VALUE_INIT, vb = G_VALUE_INIT;
      g_autofree char *ta = NULL, *tb = NULL;

      g_value_init (&va, props[i]->value_type);
      g_value_init (&vb, props[i]->value_type);
      g_object_get_property (G_OBJECT (a), props[i]->name, &va);
      g_object_get_property (G_OBJECT (b), props[i]->name, &vb);
      ta = g_strdup_value_contents (&va);
      tb = g_strdup_value_contents (&vb);
      if (g_strcmp0 (ta, tb) != 0)
        g_error ("property %s differs: %s != %s", props[i]->name, ta, tb);
      g_value_unset (&va);
      g_value_unset (&vb);
    }
  for (guint k = 0; k < 2; k++)
    {
      assert_params (rpe_explorer_state_get_params (a, k), rpe_explorer_state_get_params (b, k));
      g_assert_cmpstr (rpe_explorer_state_get_source (a, k), ==, rpe_explorer_state_get_source (b, k));
    }
  wa = rpe_explorer_state_get_fastrpb_weights (a, &ca);
  wb = rpe_explorer_state_get_fastrpb_weights (b, &cb);
  g_assert_cmpuint (ca, ==, cb);
  assert_floats (wa, wb, ca, "FastRPB weights");
  na = rpe_explorer_state_get_npy_content (a, &nda, sa);
  nb = rpe_explorer_state_get_npy_content (b, &ndb, sb);
  g_assert_true ((na == NULL) == (nb == NULL));
  if (na != NULL)
    {
      g_assert_cmpuint (nda, ==, ndb);
      for (gsize i = 0; i < nda; i++)
        g_assert_cmpuint (sa[i], ==, sb[i]);
      assert_floats (na, nb, sa[0] * sa[1] * (nda == 3 ? sa[2] : 1), "content");
    }
}

/* A state with every kind of edit and every property away from its default. */
static RpeExplorerState *
edited_state (void)
{
  RpeExplorerState *s = rpe_explorer_state_new ();
  RpeSpeParams sine = { 0 }, conv = { 0 };
  float taps[7] = { 0.5f, -0.25f, 0.125f, 1.0f, -1.0f, 0.0f, 3.0e-7f };
  float w[2 * RPE_EXPLORER_FASTRPB_TAPS - 1];
  float content[5 * 3 * 4];
  gsize shape[3] = { 5, 3, 4 };
  guint n;
  g_autofree GParamSpec **props = NULL;

  g_assert_cmpint (rpe_spe_params_init (&sine, RPE_SPE_SINE, 3, 4, 5, TRUE), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_params_random (&sine, 11), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_params_init (&conv, RPE_SPE_CONV, 3, 4, 7, FALSE), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_params_random (&conv, 12), ==, RPE_OK);
  g_assert_true (rpe_explorer_state_set_modules (s, &sine, "sine source “x”", &conv, "conv source", NULL));
  rpe_spe_params_clear (&sine);
  rpe_spe_params_clear (&conv);
  /* array edits */
  g_assert_true (rpe_explorer_state_set_sine (s, 1, 2, 3, 0.123456789, -2.5, 1.75, FALSE));
  g_assert_true (rpe_explorer_state_set_sine (s, 2, 0, 0, 0.5, 1e-8, 0.0, TRUE));
  g_assert_true (rpe_explorer_state_set_conv_taps (s, 0, 1, TRUE, taps, 7, FALSE));
  g_assert_true (rpe_explorer_state_set_conv_taps (s, 2, 3, FALSE, taps, 7, TRUE));
  g_object_set (s, "spe-kind", RPE_SPE_CONV, NULL);
  g_assert_true (rpe_explorer_state_set_gate (s, 1, 1, 0.3, FALSE));   /* gives conv a gate */
  g_object_set (s, "spe-kind", RPE_SPE_SINE, NULL);
  g_assert_true (rpe_explorer_state_set_gate (s, 0, 3, 0.9, TRUE));
  for (guint i = 0; i < G_N_ELEMENTS (w); i++)
    w[i] = (float) sin (0.37 * i) / 3.0f;
  rpe_explorer_state_set_fastrpb_weights (s, w, G_N_ELEMENTS (w));
  for (guint i = 0; i < G_N_ELEMENTS (content); i++)
    content[i] = (float) cos (1.1 * i);
  g_assert_true (rpe_explorer_state_set_npy_content (s, content, 3, shape, NULL));

  /* every property off its default, within its range (also properties added later) */
  props = g_object_class_list_properties (G_OBJECT_GET_CLASS (s), &n);
  for (guint i = 0; i < n; i++)
    {
      GParamSpec *p = props[i];

      if (G_IS_PARAM_SPEC_UINT (p))
        {
          GParamSpecUInt *u = G_PARAM_SPEC_UINT (p);
          guint v = u->default_value < u->maximum ? u->default_value + 1 : u->default_value - 1;

          /* head and feature inside the modules (3 heads, 4 features) */
          if (g_str_equal (p->name, "head") || g_str_equal (p->name, "feature"))
            v = 2;
          g_object_set (s, p->name, v, NULL);
        }
      else if (G_IS_PARAM_SPEC_INT (p))
        {
          GParamSpecInt *u = G_PARAM_SPEC_INT (p);

          g_object_set (s, p->name, u->default_value < u->maximum ? u->default_value + 1 : u->default_value - 1, NULL);
        }
      else if (G_IS_PARAM_SPEC_BOOLEAN (p))
        g_object_set (s, p->name, !G_PARAM_SPEC_BOOLEAN (p)->default_value, NULL);
      else if (G_IS_PARAM_SPEC_DOUBLE (p))
        {
          GParamSpecDouble *d = G_PARAM_SPEC_DOUBLE (p);

          g_object_set (s, p->name, d->minimum * (2.0 / 3.0) + d->maximum * (1.0 / 3.0), NULL);
        }
      else if (G_IS_PARAM_SPEC_FLOAT (p))
        {
          GParamSpecFloat *f = G_PARAM_SPEC_FLOAT (p);

          g_object_set (s, p->name, f->minimum * (2.0f / 3.0f) + f->maximum * (1.0f / 3.0f), NULL);
        }
      else if (G_IS_PARAM_SPEC_STRING (p) && g_str_equal (p->name, "colormap"))
        g_object_set (s, p->name, "magma", NULL);
    }
  return s;
}

/* -------------------------------------------------------------- round trip */

static void
test_round_trip (void)
{
  g_autoptr (RpeExplorerState) state = edited_state ();
  g_autoptr (RpeSession) s = rpe_session_new_from_state (state);
  g_autoptr (RpeSession) back = NULL;
  g_autoptr (RpeExplorerState) live = rpe_explorer_state_new ();
  g_autoptr (GError) error = NULL;
  g_autofree char *path = rpe_test_tmp_path ("round.rpe-session");
  g_autofree char *ckpt = rpe_test_tmp_path ("round-ckpt.safetensors");
  const char *map[] = { "gate=blocks.0.gate", NULL };

  /* the copy is already complete */
  assert_states_equal (state, s->state);
  g_free (s->view);
  s->view = g_strdup ("attention");
  s->template_cell = 3;
  s->have_viewport = TRUE;
  s->viewport[0] = 1.5; s->viewport[1] = 20.25; s->viewport[2] = 0.0; s->viewport[3] = 18.75;
  s->export_width = 640;
  s->export_height = 480;
  s->export_dpi = 120;
  s->export_title = g_strdup ("A “title”\twith\nescapes");
  s->export_options = g_strdupv ((char *[]) { (char *) "--preset", (char *) "page", (char *) "--attention-transform",
                                              NULL });
  g_assert_true (g_file_set_contents (ckpt, "not really a checkpoint", -1, NULL));
  rpe_session_set_checkpoint (s, ckpt, "blocks.0.spe", 2, map);
  g_assert_true (rpe_session_save (s, path, &error));
  g_assert_no_error (error);

  back = rpe_session_load (path, &error);
  g_assert_no_error (error);
  g_assert_nonnull (back);
  g_assert_cmpuint (back->warnings->len, ==, 0);
  assert_states_equal (state, back->state);
  g_assert_cmpstr (back->view, ==, "attention");
  g_assert_cmpint (back->template_cell, ==, 3);
  g_assert_true (back->have_viewport);
  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat (back->viewport[i], ==, s->viewport[i]);
  g_assert_cmpfloat (back->export_width, ==, 640);
  g_assert_cmpfloat (back->export_height, ==, 480);
  g_assert_cmpfloat (back->export_dpi, ==, 120);
  g_assert_cmpstr (back->export_title, ==, s->export_title);
  g_assert_nonnull (back->export_options);
  g_assert_cmpuint (g_strv_length (back->export_options), ==, 3);
  g_assert_true (g_strv_equal ((const char *const *) back->export_options, (const char *const *) s->export_options));
  g_assert_cmpstr (back->checkpoint.path, ==, ckpt);
  g_assert_cmpstr (back->checkpoint.prefix, ==, "blocks.0.spe");
  g_assert_cmpint (back->checkpoint.layer, ==, 2);
  g_assert_nonnull (back->checkpoint.map);
  g_assert_cmpstr (back->checkpoint.map[0], ==, map[0]);
  g_assert_null (back->checkpoint.map[1]);
  {
    g_autofree char *sha = rpe_session_file_sha256 (ckpt, NULL);
    /* an independent reference: GLib's one-shot checksum of the bytes */
    g_autofree char *ref = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "not really a checkpoint", -1);

    g_assert_cmpstr (back->checkpoint.sha256, ==, ref);
    g_assert_cmpstr (sha, ==, ref);
  }

  /* applied to a live state, it becomes the saved state */
  rpe_session_apply (back, live);
  assert_states_equal (state, live);
  g_assert_true (rpe_explorer_state_equal (state, live, NULL));

  /* a session without content makes a live state with content forget it */
  {
    g_autoptr (RpeExplorerState) plain = rpe_explorer_state_new ();
    g_autoptr (RpeSession) ps = rpe_session_new_from_state (plain);

    rpe_session_apply (ps, live);
    g_assert_null (rpe_explorer_state_get_npy_content (live, NULL, NULL));
  }
}

/* Content loaded from a .npy file is saved by path and hash and read back from it. */
static void
test_content_file (void)
{
  g_autoptr (RpeExplorerState) state = rpe_explorer_state_new ();
  g_autoptr (RpeSession) s = NULL;
  g_autoptr (RpeSession) back = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *npy = rpe_test_tmp_path ("content.npy");
  g_autofree char *path = rpe_test_tmp_path ("content.rpe-session");
  g_autofree char *text = NULL;
  float data[6 * 16];
  gsize shape[2] = { 6, 16 };
  RpeSpeParams sine = { 0 };

  g_assert_cmpint (rpe_spe_params_init (&sine, RPE_SPE_SINE, 2, 16, 3, FALSE), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_params_random (&sine, 3), ==, RPE_OK);
  g_assert_true (rpe_explorer_state_set_modules (state, &sine, "s", NULL, NULL, NULL));
  rpe_spe_params_clear (&sine);
  for (guint i = 0; i < G_N_ELEMENTS (data); i++)
    data[i] = (float) i / 7.0f - 3.0f;
  g_assert_true (rpe_npy_write (npy, data, 2, shape, FALSE, &error));
  g_assert_true (rpe_explorer_state_set_npy_content (state, data, 2, shape, NULL));
  s = rpe_session_new_from_state (state);
  rpe_session_set_content_path (s, npy);
  g_assert_true (rpe_session_save (s, path, &error));
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  /* by path and hash: no inline values */
  g_assert_nonnull (strstr (text, "content.npy"));
  g_assert_null (strstr (text, "\"data\""));
  back = rpe_session_load (path, &error);
  g_assert_no_error (error);
  assert_states_equal (state, back->state);
  g_assert_cmpstr (back->content_path, ==, npy);
}

/* ---------------------------------------------------------------- refusals */

/* A valid session text of a small state, with `edit` applied (a substring replaced). */
static char *
session_text (const char *from,
              const char *to)
{
  g_autoptr (RpeExplorerState) state = rpe_explorer_state_new ();
  g_autoptr (RpeSession) s = NULL;
  RpeSpeParams sine = { 0 };
  g_autofree char *text = NULL;
  GString *out;

  g_assert_cmpint (rpe_spe_params_init (&sine, RPE_SPE_SINE, 2, 3, 2, FALSE), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_params_random (&sine, 5), ==, RPE_OK);
  sine.freqs[0] = 0.25f;
  g_assert_true (rpe_explorer_state_set_modules (state, &sine, "s", NULL, NULL, NULL));
  rpe_spe_params_clear (&sine);
  s = rpe_session_new_from_state (state);
  text = rpe_session_to_data (s, NULL, NULL);
  g_assert_nonnull (text);
  if (from == NULL)
    return g_steal_pointer (&text);
  g_assert_nonnull (strstr (text, from));
  out = g_string_new (text);
  g_string_replace (out, from, to, 1);
  return g_string_free (out, FALSE);
}

static void
refused (const char *name,
         const char *text,
         const char *expect)
{
  g_autoptr (RpeExplorerState) live = edited_state ();
  g_autoptr (RpeExplorerState) before = rpe_explorer_state_new ();
  g_autoptr (RpeSession) s = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *path = NULL;
  g_autofree char *file = g_strdup_printf ("bad-%s.rpe-session", name);
  guint64 serial;

  rpe_explorer_state_copy_into (live, before);
  serial = rpe_explorer_state_get_serial (live);
  path = rpe_test_tmp_path (file);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  s = rpe_session_load (path, &error);
  g_assert_null (s);
  g_assert_nonnull (error);
  g_test_message ("%s: %s", name, error->message);
  if (strstr (error->message, expect) == NULL)
    g_error ("%s: expected “%s” in “%s”", name, expect, error->message);
  /* the live state was never touched */
  g_assert_cmpuint (rpe_explorer_state_get_serial (live), ==, serial);
  assert_states_equal (before, live);
}

static void
test_malformed (void)
{
  g_autofree char *valid = session_text (NULL, NULL);
  g_autofree char *v99 = session_text ("\"version\" : 1", "\"version\" : 99");
  g_autofree char *format = session_text ("\"rpe-session\"", "\"rpe-notes\"");
  g_autofree char *length = session_text ("\"length\" : 96", "\"length\" : 999999");
  g_autofree char *length1 = session_text ("\"length\" : 96", "\"length\" : 1");
  g_autofree char *nan_freq = session_text ("0.25,", "NaN,");
  g_autofree char *inf_freq = session_text ("0.25,", "1e999,");
  g_autofree char *big_freq = session_text ("0.25,", "0.75,");
  g_autofree char *short_array = session_text ("0.25,", "");
  g_autofree char *head = session_text ("\"head\" : 0", "\"head\" : 7");
  g_autofree char *method = session_text ("\"method\" : 0", "\"method\" : 6");
  g_autofree char *type = session_text ("\"causal\" : false", "\"causal\" : 1");
  g_autofree char *heads = session_text ("\"heads\" : 2", "\"heads\" : 4000000000");
  g_autofree char *cmap = session_text ("\"colormap\" : \"viridis\"", "\"colormap\" : \"../../etc/passwd\"");
  g_autofree char *no_cmap = session_text ("\"colormap\" : \"viridis\"", "\"colormap\" : null");
  g_autofree char *missing = session_text ("\"checkpoint\" : null",
                                           "\"checkpoint\" : { \"path\" : \"/nonexistent/dir/gone.safetensors\" }");
  GString *deep = g_string_new ("{\"format\":\"rpe-session\",\"version\":1,\"x\":");

  for (int i = 0; i < 100000; i++)
    g_string_append_c (deep, '[');
  for (int i = 0; i < 100000; i++)
    g_string_append_c (deep, ']');
  g_string_append_c (deep, '}');

  /* the untouched text is a valid session */
  {
    g_autoptr (RpeSession) ok = rpe_session_load_data (valid, strlen (valid), NULL, NULL);

    g_assert_nonnull (ok);
  }
  refused ("not-json", "this is not JSON {", "not JSON");
  refused ("empty", "", "not JSON");
  refused ("array", "[1, 2, 3]", "not an object");
  refused ("format", format, "format is “rpe-notes”");
  refused ("version", v99, "version 99");
  refused ("length", length, "“length” is out of range");
  refused ("length-low", length1, "“length” is out of range");
  refused ("nan", nan_freq, "not JSON");
  refused ("inf", inf_freq, "not a finite number");
  refused ("freq-range", big_freq, "out of range");
  refused ("short-array", short_array, "holds 11 values; its shape needs 12");
  refused ("head", head, "“head” is out of range");
  refused ("method", method, "“method” is out of range");
  refused ("type", type, "wrong type");
  refused ("heads", heads, "out of range");
  /* drawn with the default map before, with no word */
  refused ("colormap", cmap, "unknown colour map “../../etc/passwd”");
  refused ("colormap-null", no_cmap, "unknown colour map");
  refused ("missing-checkpoint", missing, "is missing");
  refused ("deep", deep->str, "nested");
  {
    g_autofree char *opts = session_text ("\"options\" : []", "\"options\" : [ \"-o\", \"/tmp/x\" ]");

    refused ("export-option", opts, "not one a session holds");
  }
  g_string_free (deep, TRUE);
}

/* Trained LRPE parameters of a checkpoint's module (Householder v, permutation pi): the session
 * holds their values and gives them back with the "lrpe-trained" switch; bad values are refused. */
static void
test_lrpe_trained (void)
{
  g_autofree char *ckpt = g_test_build_filename (G_TEST_DIST, "fixtures", "lrpe", "lrpe.pt", NULL);
  g_autoptr (GError) error = NULL;
  RpeTensorSet *set = rpe_checkpoint_read (ckpt, &error);
  GPtrArray *modules = NULL;
  const RpeLrpeModuleInfo *m;
  RpeLrpeTrained *t;
  g_autoptr (RpeExplorerState) state = rpe_explorer_state_new ();
  g_autoptr (RpeSession) s = NULL;
  g_autoptr (RpeSession) back = NULL;
  g_autofree char *text = NULL;
  const RpeLrpeTrained *got;
  const char *source = NULL;
  gboolean use = FALSE;
  gsize len = 0;

  g_assert_no_error (error);
  m = rpe_checkpoint_pick_lrpe (set, "encoder.layers.1.attn.lrpe", &modules, &error);
  g_assert_no_error (error);
  g_assert_nonnull (m->permutation);
  t = rpe_lrpe_trained_new (m->v, m->theta, m->permutation, "layer 1", &error);
  g_assert_no_error (error);
  g_assert_nonnull (t->pi);
  rpe_explorer_state_set_lrpe_trained (state, t, "checkpoint lrpe.pt, module “encoder.layers.1.attn.lrpe”");
  g_object_set (state, "method", (guint) RPE_EXPLORER_METHOD_LRPE, NULL);

  s = rpe_session_new_from_state (state);
  g_assert_true (rpe_explorer_state_equal (state, s->state, NULL));
  text = rpe_session_to_data (s, &len, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (text, "lrpe-trained-parameters"));
  back = rpe_session_load_data (text, len, NULL, &error);
  g_assert_no_error (error);
  got = rpe_explorer_state_get_lrpe_trained (back->state, &source);
  g_assert_nonnull (got);
  g_assert_cmpstr (source, ==, "checkpoint lrpe.pt, module “encoder.layers.1.attn.lrpe”");
  g_assert_cmpuint (got->n_pi, ==, t->n_pi);
  g_assert_cmpmem (got->pi, got->n_pi * sizeof (uint32_t), t->pi, t->n_pi * sizeof (uint32_t));
  g_assert_cmpuint (got->v_dim, ==, t->v_dim);
  g_assert_cmpmem (got->v, got->v_dim * sizeof (float), t->v, t->v_dim * sizeof (float));
  g_assert_true (got->v_learned == t->v_learned);
  g_object_get (back->state, "lrpe-trained", &use, NULL);
  g_assert_true (use);
  g_assert_true (rpe_explorer_state_equal (state, back->state, NULL));
  /* and the seeded choice (switch off) stays off, the values still held */
  g_object_set (state, "lrpe-trained", FALSE, NULL);
  {
    g_autoptr (RpeSession) off = rpe_session_new_from_state (state);
    g_autofree char *t2 = rpe_session_to_data (off, &len, NULL);
    g_autoptr (RpeSession) off_back = rpe_session_load_data (t2, len, NULL, &error);

    g_assert_no_error (error);
    g_object_get (off_back->state, "lrpe-trained", &use, NULL);
    g_assert_false (use);
    g_assert_nonnull (rpe_explorer_state_get_lrpe_trained (off_back->state, NULL));
  }

  /* a pi that is no permutation, a non-number in v */
  {
    const char *pi_at = strstr (text, "\"pi\"");
    g_autoptr (GString) bad_pi = g_string_new (text);
    g_autoptr (RpeSession) refused_pi = NULL;
    gsize at;

    g_assert_nonnull (pi_at);
    at = (gsize) (strchr (pi_at, '[') - text) + 1;
    g_string_insert (bad_pi, (gssize) at, "0, ");
    refused_pi = rpe_session_load_data (bad_pi->str, bad_pi->len, NULL, &error);
    g_assert_null (refused_pi);
    g_assert_error (error, RPE_ERROR, RPE_ERROR_FORMAT);
    g_test_message ("refused: %s", error->message);
    g_clear_error (&error);
  }
  rpe_lrpe_trained_free (t);
  g_ptr_array_unref (modules);
  rpe_tensor_set_free (set);
}

/* A checkpoint's trained FastRPB biases (every layer, head and offset) and learned APE: saved with
 * their values and switches, read back equal; the edited taps switch the bias off and that is
 * kept.  Hostile "trained-modules" (sizes past the budget, shapes that disagree, wrong types) are
 * refused with a clear error, before anything is allocated for them. */
static void
test_trained_modules (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeTensorSet) set = rpe_demos_read ("demo:fastrpb", &error);
  g_autoptr (RpeTensorSet) ape_set = rpe_demos_read ("demo:ape", &error);
  g_autoptr (RpeExplorerState) state = rpe_explorer_state_new ();
  g_autoptr (RpeExplorerTrained) t = NULL, a = NULL;
  g_autoptr (RpeSession) s = NULL, back = NULL;
  g_autofree char         *text = NULL;
  RpeExplorerTrained      *got;
  gboolean                 on = FALSE;
  gsize                    len = 0;
  static const char *const hostile[][2] = {
    { "\"taps\" : 256", "\"taps\" : 1048577" }, /* past the taps limit */
    { "\"taps\" : 256", "\"taps\" : 255" },     /* w's length disagrees */
    { "\"heads\" : 4", "\"heads\" : 0" },
    { "\"heads\" : 4", "\"heads\" : 5000" },
    { "\"dim\" : 16", "\"dim\" : 65536" },               /* APE of 64 x 4 x 65536 values: past the budget */
    { "\"positions\" : 64", "\"positions\" : 65536" },   /* past the budget */
    { "\"positions\" : 64", "\"positions\" : 63" },      /* w's length disagrees */
    { "\"fastrpb\" : [", "\"fastrpb\" : 7, \"x\" : [" }, /* not an array */
    { "\"layer\" : 0", "\"layer\" : \"zero\"" },
  };

  g_assert_no_error (error);
  t = rpe_explorer_trained_from_set (set, 4, 16, "fastrpb.safetensors", &error);
  g_assert_no_error (error);
  g_assert_nonnull (t);
  g_assert_cmpuint (t->n_fastrpb, ==, 2);
  g_assert_cmpuint (t->fastrpb[1].layer, ==, 1);
  g_assert_cmpuint (t->fastrpb[1].taps, ==, 256);
  a = rpe_explorer_trained_from_set (ape_set, 4, 16, "ape.safetensors", &error);
  g_assert_no_error (error);
  g_assert_nonnull (a->ape);
  /* one set with both (as a checkpoint holding both would give) */
  g_assert_true (rpe_explorer_trained_set_ape (t, a->ape_positions, a->ape, &error));
  rpe_explorer_state_set_trained (state, t);
  g_object_get (state, "fastrpb-trained", &on, NULL);
  g_assert_true (on);
  g_object_get (state, "ape-trained", &on, NULL);
  g_assert_true (on);
  g_object_set (state, "method", (guint) RPE_EXPLORER_METHOD_FASTRPB, "capture-layer", 1, NULL);

  s = rpe_session_new_from_state (state);
  g_assert_true (rpe_explorer_state_equal (state, s->state, NULL));
  text = rpe_session_to_data (s, &len, &error);
  g_assert_no_error (error);
  back = rpe_session_load_data (text, len, NULL, &error);
  g_assert_no_error (error);
  got = rpe_explorer_state_get_trained (back->state);
  g_assert_nonnull (got);
  g_assert_cmpuint (got->n_fastrpb, ==, 2);
  for (guint i = 0; i < 2; i++)
    {
      g_assert_cmpuint (got->fastrpb[i].taps, ==, 256);
      g_assert_cmpuint (got->fastrpb[i].layer, ==, i);
      g_assert_cmpstr (got->fastrpb[i].prefix, ==, t->fastrpb[i].prefix);
      g_assert_cmpmem (got->fastrpb[i].w, 4 * 511 * sizeof (float), t->fastrpb[i].w, 4 * 511 * sizeof (float));
    }
  g_assert_cmpuint (got->ape_positions, ==, 64);
  g_assert_cmpmem (got->ape, 64 * 64 * sizeof (float), t->ape, 64 * 64 * sizeof (float));
  g_assert_true (rpe_explorer_state_equal (state, back->state, NULL));
  {
    /* the snapshot of the session read back draws the stored bias at every offset */
    g_autoptr (RpeExplorerSnapshot) snap = rpe_explorer_state_snapshot (back->state);
    g_autofree float *w = g_new (float, 2 * 256 - 1);

    rpe_explorer_snapshot_fastrpb_weights (snap, 256, w);
    for (gsize i = 0; i < 2 * 256 - 1; i++)
      g_assert_cmpfloat (w[i], ==, t->fastrpb[1].w[i]);
  }

  /* an edit of the central taps switches the trained bias off; the session keeps it off */
  {
    float taps[2 * RPE_EXPLORER_FASTRPB_TAPS - 1] = { 0 };
    g_autoptr (RpeSession) off = NULL, off_back = NULL;
    g_autofree char *t2 = NULL;

    taps[RPE_EXPLORER_FASTRPB_TAPS - 1] = 0.5f;
    rpe_explorer_state_set_fastrpb_weights (state, taps, G_N_ELEMENTS (taps));
    g_object_get (state, "fastrpb-trained", &on, NULL);
    g_assert_false (on);
    off = rpe_session_new_from_state (state);
    t2 = rpe_session_to_data (off, &len, NULL);
    off_back = rpe_session_load_data (t2, len, NULL, &error);
    g_assert_no_error (error);
    g_object_get (off_back->state, "fastrpb-trained", &on, NULL);
    g_assert_false (on);
    g_assert_nonnull (rpe_explorer_state_get_trained (off_back->state));
    g_assert_true (rpe_explorer_state_equal (state, off_back->state, NULL));
  }

  for (guint i = 0; i < G_N_ELEMENTS (hostile); i++)
    {
      g_autoptr (GString) bad = g_string_new (text);
      g_autoptr (RpeSession) refused = NULL;

      g_assert_cmpuint (g_string_replace (bad, hostile[i][0], hostile[i][1], 1), ==, 1);
      refused = rpe_session_load_data (bad->str, bad->len, NULL, &error);
      g_assert_null (refused);
      g_assert_nonnull (error);
      g_test_message ("refused (%s): %s", hostile[i][1], error->message);
      g_clear_error (&error);
    }
}

/* ---------------------------------------------------------- the checkpoint */

static void
test_checkpoint_moved_and_changed (void)
{
  g_autoptr (RpeExplorerState) state = rpe_explorer_state_new ();
  g_autoptr (RpeSession) s = NULL;
  g_autoptr (RpeSession) back = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *old_dir = rpe_test_tmp_path ("old-place");
  g_autofree char *new_dir = rpe_test_tmp_path ("new-place");
  g_autofree char *ckpt = g_build_filename (old_dir, "model.safetensors", NULL);
  g_autofree char *moved = g_build_filename (new_dir, "model.safetensors", NULL);
  g_autofree char *session = g_build_filename (new_dir, "moved.rpe-session", NULL);
  RpeSpeParams sine = { 0 };

  g_assert_cmpint (g_mkdir_with_parents (old_dir, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (new_dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (ckpt, "checkpoint bytes, version 1", -1, NULL));
  g_assert_cmpint (rpe_spe_params_init (&sine, RPE_SPE_SINE, 1, 2, 2, FALSE), ==, RPE_OK);
  g_assert_true (rpe_explorer_state_set_modules (state, &sine, "s", NULL, NULL, NULL));
  rpe_spe_params_clear (&sine);
  s = rpe_session_new_from_state (state);
  rpe_session_set_checkpoint (s, ckpt, NULL, -1, NULL);
  g_assert_true (rpe_session_save (s, session, &error));
  g_assert_no_error (error);

  /* unchanged, in place: no warning */
  back = rpe_session_load (session, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (back->warnings->len, ==, 0);
  g_clear_pointer (&back, rpe_session_free);

  /* the folder moved: found beside the session, with a note */
  g_assert_cmpint (g_rename (ckpt, moved), ==, 0);
  back = rpe_session_load (session, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (back->checkpoint.path, ==, moved);
  g_assert_cmpuint (back->warnings->len, ==, 1);
  g_assert_nonnull (strstr (g_ptr_array_index (back->warnings, 0), "beside the session"));
  g_clear_pointer (&back, rpe_session_free);

  /* rewritten: a warning that it changed (the saved parameters are still used) */
  g_assert_true (g_file_set_contents (moved, "checkpoint bytes, version 2", -1, NULL));
  back = rpe_session_load (session, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (back->warnings->len, ==, 2);
  g_assert_nonnull (strstr (g_ptr_array_index (back->warnings, 1), "has changed"));
  assert_states_equal (state, back->state);
  g_clear_pointer (&back, rpe_session_free);

  /* gone from both places: refused */
  g_assert_cmpint (g_unlink (moved), ==, 0);
  back = rpe_session_load (session, &error);
  g_assert_null (back);
  g_assert_error (error, RPE_ERROR, RPE_ERROR_NOT_FOUND);
}

/* -------------------------------------------------------------- the CLI */

/* The session's view as `rpe export` options: every attention method with its
 * choices, the zoom as the cells the view computes, the booleans both ways. */
static void
test_argv (void)
{
  g_autoptr (RpeExplorerState) state = rpe_explorer_state_new ();
  g_autoptr (RpeSession) s = NULL;
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) argv = NULL;
  g_autofree char *line = NULL;
  gsize m0, m1, n0, n1;
  guint v;

  /* the names and values agree both ways, for every value of each choice */
  for (guint m = 0; m < RPE_EXPLORER_N_METHODS; m++)
    {
      const char *name = rpe_session_choice_name ("--attention-method", m);

      g_assert_nonnull (name);
      g_assert_true (rpe_session_choice_value ("--attention-method", name, &v));
      g_assert_cmpuint (v, ==, m);
    }
  g_assert_true (rpe_session_choice_value ("--lrpe-p", "householder", &v));
  g_assert_cmpuint (v, ==, RPE_LRPE_P_HOUSEHOLDER);
  g_assert_false (rpe_session_choice_value ("--lrpe-p", "nonsense", &v));
  g_assert_null (rpe_session_choice_name ("--no-such-option", 0));

  /* the viewport [2.5, 7.2) x [0, 96]: rows 2 .. 7, columns 0 .. 95 (floor / ceil, clamped to N) */
  g_assert_true (rpe_session_viewport_cells ((const double[4]) { 2.5, 7.2, -1.0, 200.0 }, 96, &m0, &m1, &n0, &n1));
  g_assert_cmpuint (m0, ==, 2);
  g_assert_cmpuint (m1, ==, 8);
  g_assert_cmpuint (n0, ==, 0);
  g_assert_cmpuint (n1, ==, 96);
  g_assert_false (rpe_session_viewport_cells ((const double[4]) { 5, 5, 0, 9 }, 96, &m0, &m1, &n0, &n1));

  {
    RpeSpeParams sine = { 0 };

    g_assert_cmpint (rpe_spe_params_init (&sine, RPE_SPE_SINE, 2, 4, 3, FALSE), ==, RPE_OK);
    g_assert_cmpint (rpe_spe_params_random (&sine, 5), ==, RPE_OK);
    g_assert_true (rpe_explorer_state_set_modules (state, &sine, "random", NULL, NULL, NULL));
    rpe_spe_params_clear (&sine);
  }
  g_object_set (state, "method", (guint) RPE_EXPLORER_METHOD_LRPE, "lrpe-p", (guint) RPE_LRPE_P_FOURIER,
                "lrpe-lambda", (guint) RPE_LRPE_LAMBDA_MIXED, "feature-map", (guint) RPE_FEATURE_EXP,
                "causal", FALSE, NULL);
  s = rpe_session_new_from_state (state);
  g_free (s->view);
  s->view = g_strdup ("attention");
  s->have_viewport = TRUE;
  memcpy (s->viewport, ((const double[4]) { 10.4, 20.0, 3.0, 9.5 }), sizeof s->viewport);
  argv = rpe_session_export_argv (s, FALSE, &error);
  g_assert_no_error (error);
  line = g_strjoinv (" ", argv);
  g_test_message ("%s", line);
  g_assert_nonnull (strstr (line, "--attention-method lrpe"));
  g_assert_nonnull (strstr (line, "--lrpe-p fourier"));
  g_assert_nonnull (strstr (line, "--lrpe-lambda mixed"));
  g_assert_nonnull (strstr (line, "--feature-map exp"));
  g_assert_nonnull (strstr (line, "--no-causal"));
  g_assert_nonnull (strstr (line, "--rows 10:20"));
  g_assert_nonnull (strstr (line, "--cols 3:10"));

  /* the Outputs view: `rpe export outputs` (its settings: test_outputs) */
  g_free (s->view);
  s->view = g_strdup ("outputs");
  g_object_set (s->state, "content", RPE_CONTENT_UNIT, NULL);
  g_clear_pointer (&argv, g_strfreev);
  argv = rpe_session_export_argv (s, FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (argv[0], ==, "outputs");
  g_assert_true (g_strv_contains ((const char *const *) argv, "--value-source"));
}

static void
test_cli (void)
{
  const char *cli = g_getenv ("RPE_CLI");
  g_autofree char *session = rpe_test_tmp_path ("cli.rpe-session");
  g_autofree char *a = rpe_test_tmp_path ("cli-a.png");
  g_autofree char *b = rpe_test_tmp_path ("cli-b.png");
  g_autofree char *c = rpe_test_tmp_path ("cli-c.png");
  g_autofree char *d = rpe_test_tmp_path ("cli-d.png");
  g_autofree char *err = NULL;
  const char      *views[][28] = {
         { "export",   "attention", "--checkpoint", "demo",           "--method", "conv",   "--head",
           "2",        "--length",  "40",           "--realizations", "16",       "--seed", "9",
           "--causal", "--content", "random",       "--colormap",     "magma",    NULL },
         { "export",
           "template",
           "--checkpoint",
           "demo",
           "--method",
           "sine",
           "--no-gate",
           "--head",
           "1",
           "--feature",
           "5",
           "--length",
           "33",
           "--train-length",
           "20",
           "--difference",
           "--realizations",
           "8",
           "--seed",
           "4",
           NULL },
         { "export", "spe-vs-rpe", "--checkpoint", "demo", "--method", "sine", "--head", "3", "--length", "24",
           "--realizations", "32", "--seed", "2", "--width", "500", "--height", "300", NULL },
         { "export", "attention", "--checkpoint", "demo", "--method", "sine", "--head", "0", "--length", "300", "--exact",
           "--preset", "column", "--attention-transform", "--reduce", "max", "--title", "Exact", NULL },
         { "export", "templates", "--checkpoint", "demo", "--method", "sine", "--length", "20", "--colormap", "grey",
           "--per-cell-scale", "--dpi", "96", NULL },
         /* every attention method of the window, the zoom (--rows/--cols) and the Curves page */
         { "export", "attention", "--checkpoint", "demo", "--attention-method", "ape", "--head", "1", "--length", "40",
           "--content", "random", "--seed", "3", NULL },
         { "export", "attention", "--checkpoint", "demo", "--attention-method", "lrpe", "--lrpe-p", "dct", "--lrpe-lambda",
           "complex", "--lrpe-theta", "b", "--train-length", "16", "--length", "40", "--causal", NULL },
         { "export", "attention", "--checkpoint", "demo", "--attention-method", "fastrpb", "--length", "40", "--content",
           "random", "--seed", "8", NULL },
         { "export", "attention", "--checkpoint", "demo", "--attention-method", "linear", "--feature-map", "dpfp",
           "--length", "40", "--rows", "4:30", "--cols", "10:40", NULL },
         { "export", "attention", "--checkpoint", "demo", "--exact", "--no-gate", "--length", "64", "--rows", "5:9",
           "--cols", "0:64", "--colormap", "magma", NULL },
         { "export", "curves", "--checkpoint", "demo", "--length", "40", "--train-length", "16", "--seed", "2", NULL },
         /* the window's methods on seeded parameters, without a checkpoint (refused as "invalid
     * argument" when the trained-module lookup left the seeded SPE module out) */
         { "export", "attention", "--attention-method", "ape", "--length", "40", "--content", "random", NULL },
         { "export", "attention", "--attention-method", "lrpe", "--heads", "2", "--features", "8", "--length", "40", NULL },
         { "export", "attention", "--attention-method", "fastrpb", "--method", "conv", "--kernel", "8", "--length", "40",
           NULL },
         /* the last one is reused below */
         { "export", "templates", "--checkpoint", "demo", "--method", "conv", "--head", "0", "--length", "30", "--empirical",
           "--realizations", "4", "--seed", "1", "--colormap", "rdbu", NULL },
  };

  if (cli == NULL || !g_file_test (cli, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("RPE_CLI is not set");
      return;
    }
  for (guint v = 0; v < G_N_ELEMENTS (views); v++)
    {
      g_autoptr (GPtrArray) args = g_ptr_array_new ();

      for (guint i = 0; views[v][i] != NULL; i++)
        g_ptr_array_add (args, (char *) views[v][i]);
      g_ptr_array_add (args, (char *) "--save-session");
      g_ptr_array_add (args, session);
      g_ptr_array_add (args, (char *) "-o");
      g_ptr_array_add (args, a);
      g_ptr_array_add (args, NULL);
      g_assert_cmpint (rpe_test_run_cli_argv ((const char *const *) args->pdata, NULL, NULL), ==, 0);
      {
        const char *redraw[] = { "export", "--session", session, "-o", b, NULL };

        g_assert_cmpint (rpe_test_run_cli_argv (redraw, NULL, NULL), ==, 0);
      }
      g_test_message ("%s: --session vs the original: %.6f of the pixels differ", views[v][1],
                      rpe_test_png_difference (a, b, NULL));
      g_assert_cmpfloat (rpe_test_png_difference (a, b, NULL), ==, 0.0);
    }

  /* options beside --session override: --seed 10 equals the command with --seed 10 */
  {
    const char *over[] = { "export", "--session", session, "--seed", "10", "--length", "26", "-o", c, NULL };
    const char *direct[] = { "export", "templates", "--checkpoint", "demo", "--method", "conv", "--head", "0",
                             "--length", "26", "--empirical", "--realizations", "4", "--seed", "10",
                             "--colormap", "rdbu", "-o", d, NULL };

    g_assert_cmpint (rpe_test_run_cli_argv (over, NULL, NULL), ==, 0);
    g_assert_cmpint (rpe_test_run_cli_argv (direct, NULL, NULL), ==, 0);
    g_assert_cmpfloat (rpe_test_png_difference (c, d, NULL), ==, 0.0);
    g_assert_cmpfloat (rpe_test_png_difference (a, c, NULL), >, 0.0);
  }
  /* a VIEW beside --session draws the session in that view */
  {
    const char *over[] = { "export", "attention", "--session", session, "-o", c, NULL };
    const char *direct[] = { "export", "attention", "--checkpoint", "demo", "--method", "conv", "--head", "0",
                             "--length", "30", "--realizations", "4", "--seed", "1", "--colormap", "rdbu",
                             "-o", d, NULL };

    g_assert_cmpint (rpe_test_run_cli_argv (over, NULL, NULL), ==, 0);
    g_assert_cmpint (rpe_test_run_cli_argv (direct, NULL, NULL), ==, 0);
    g_assert_cmpfloat (rpe_test_png_difference (c, d, NULL), ==, 0.0);
  }

  /* bad sessions: a message and exit status 2, no output file */
  {
    g_autofree char *bad = rpe_test_tmp_path ("cli-bad.rpe-session");
    g_autofree char *none = rpe_test_tmp_path ("cli-none.png");
    const char *args[] = { "export", "--session", bad, "-o", none, NULL };

    g_assert_true (g_file_set_contents (bad, "{\"format\":\"rpe-session\",\"version\":99}", -1, NULL));
    g_assert_cmpint (rpe_test_run_cli_argv (args, NULL, &err), ==, 2);
    g_assert_nonnull (strstr (err, "version 99"));
    g_assert_false (g_file_test (none, G_FILE_TEST_EXISTS));
    g_clear_pointer (&err, g_free);
    g_assert_true (g_file_set_contents (bad, "not json", -1, NULL));
    g_assert_cmpint (rpe_test_run_cli_argv (args, NULL, &err), ==, 2);
    g_assert_nonnull (strstr (err, "not JSON"));
    g_clear_pointer (&err, g_free);
  }
  /* --save-session refuses what a session cannot hold, and views without a session */
  {
    g_autofree char *gif = rpe_test_tmp_path ("cli.gif");
    const char *sweep[] = { "export", "attention", "--checkpoint", "demo", "--sweep", "realizations=1:4", "--frames",
                            "2", "--save-session", session, "-o", gif, NULL };
    const char *curves[] = { "export", "profile", "--checkpoint", "demo", "--save-session", session, "-o", a, NULL };

    g_assert_cmpint (rpe_test_run_cli_argv (sweep, NULL, &err), ==, 2);
    g_clear_pointer (&err, g_free);
    g_assert_cmpint (rpe_test_run_cli_argv (curves, NULL, &err), ==, 2);
    g_clear_pointer (&err, g_free);
  }
}

/* The Outputs view's settings: every field round-trips (the values .npy by path and SHA-256,
 * found beside the session when it moved), malformed ones are refused, and the argv is the
 * `rpe export outputs` line of each setting. */
static void
test_outputs (void)
{
  g_autoptr (RpeExplorerState) state = rpe_explorer_state_new ();
  g_autoptr (RpeSession) s = NULL;
  g_autoptr (RpeSession) back = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("rpe-outputs-XXXXXX", NULL);
  g_autofree char *npy = g_build_filename (dir, "v.npy", NULL);
  g_autofree char *file = g_build_filename (dir, "o.rpe-session", NULL);
  g_autofree char *data = NULL;
  g_autofree char *sha = NULL;
  gsize length = 0;
  float v[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
  gsize shape[2] = { 4, 3 };

  {
    RpeSpeParams sine = { 0 };

    g_assert_cmpint (rpe_spe_params_init (&sine, RPE_SPE_SINE, 2, 4, 3, FALSE), ==, RPE_OK);
    g_assert_cmpint (rpe_spe_params_random (&sine, 5), ==, RPE_OK);
    g_assert_true (rpe_explorer_state_set_modules (state, &sine, "random", NULL, NULL, NULL));
    rpe_spe_params_clear (&sine);
  }
  g_assert_true (rpe_npy_write (npy, v, 2, shape, FALSE, &error));
  g_assert_no_error (error);
  sha = rpe_session_file_sha256 (npy, &error);
  g_assert_no_error (error);
  s = rpe_session_new_from_state (state);
  g_free (s->view);
  s->view = g_strdup ("outputs");
  rpe_session_set_checkpoint (s, "demo", NULL, -1, NULL);
  s->outputs.have = TRUE;
  s->outputs.values = RPE_VALUES_ARRAY;
  s->outputs.channels = 7;
  s->outputs.positions = g_strdup ("2,9,11");
  s->outputs.compare = RPE_OUTPUTS_KERNEL;
  s->outputs.channel = 2;
  s->outputs.several_draws = TRUE;
  s->outputs.values_path = g_strdup (npy);
  g_assert_true (rpe_session_save (s, file, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (s->outputs.values_sha256, ==, sha);
  back = rpe_session_load (file, &error);
  g_assert_no_error (error);
  g_assert_true (back->outputs.have);
  g_assert_cmpuint (back->outputs.values, ==, RPE_VALUES_ARRAY);
  g_assert_cmpuint (back->outputs.channels, ==, 7);
  g_assert_cmpstr (back->outputs.positions, ==, "2,9,11");
  g_assert_cmpuint (back->outputs.compare, ==, RPE_OUTPUTS_KERNEL);
  g_assert_cmpuint (back->outputs.channel, ==, 2);
  g_assert_true (back->outputs.several_draws);
  g_assert_cmpstr (back->outputs.values_path, ==, npy);
  g_assert_cmpstr (back->outputs.values_sha256, ==, sha);
  g_assert_cmpuint (back->warnings->len, ==, 0);
  {
    g_auto (GStrv) argv = rpe_session_export_argv (back, TRUE, &error);
    g_autofree char *joined = NULL;

    g_assert_no_error (error);
    joined = g_strjoinv (" ", argv);
    g_test_message ("%s", joined);
    g_assert_cmpstr (argv[0], ==, "outputs");
    g_assert_true (g_strv_contains ((const char *const *) argv, "--values"));
    g_assert_true (g_strv_contains ((const char *const *) argv, npy));
    g_assert_nonnull (strstr (joined, "--compare kernel --draws 16 --channel 2"));
    g_assert_null (strstr (joined, "--value-source"));
  }
  {
    g_auto (GStrv) argv = NULL;
    g_autofree char *joined = NULL;

    g_clear_pointer (&back->outputs.values_path, g_free);
    back->outputs.values = RPE_VALUES_IMPULSE;
    back->outputs.several_draws = FALSE;
    argv = rpe_session_export_argv (back, TRUE, &error);
    g_assert_no_error (error);
    joined = g_strjoinv (" ", argv);
    g_assert_nonnull (strstr (joined, "--value-source impulse --channels 7 --impulse-positions 2,9,11 "
                                      "--compare kernel --draws 1 --channel 2"));
  }

  /* the values file changed: a warning; moved beside the session: found there */
  g_assert_true (g_file_get_contents (file, &data, &length, NULL));
  {
    g_autoptr (RpeSession) changed = NULL;

    v[0] = 99;
    g_assert_true (rpe_npy_write (npy, v, 2, shape, FALSE, &error));
    changed = rpe_session_load (file, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (changed->warnings->len, ==, 1);
  }
  {
    g_autofree char *elsewhere = g_build_filename (dir, "gone", "v.npy", NULL);
    g_autoptr (GString) t = g_string_new (data);
    g_autoptr (RpeSession) moved = NULL;

    g_string_replace (t, npy, elsewhere, 0);
    moved = rpe_session_load_data (t->str, t->len, file, &error);
    g_assert_no_error (error);
    g_assert_cmpstr (moved->outputs.values_path, ==, npy);
    g_assert_cmpuint (moved->warnings->len, >=, 1);
  }

  /* malformed: refused with a message */
  {
    const char *const swaps[][2] = {
      { "\"values\" : \"array\"", "\"values\" : \"chirp\"" },
      { "\"values\" : \"array\"", "\"values\" : 3" },
      { "\"channels\" : 7", "\"channels\" : 0" },
      { "\"channels\" : 7", "\"channels\" : 65" },
      { "\"channels\" : 7", "\"channels\" : 2.5" },
      { "\"impulse-positions\" : \"2,9,11\"", "\"impulse-positions\" : \"2,x\"" },
      { "\"impulse-positions\" : \"2,9,11\"", "\"impulse-positions\" : \"-1\"" },
      { "\"compare\" : \"kernel\"", "\"compare\" : \"both\"" },
      { "\"channel\" : 2", "\"channel\" : -1" },
      { "\"several-draws\" : true", "\"several-draws\" : \"yes\"" },
      { "\"outputs\" : {", "\"outputs\" : 4, \"x\" : {" },
    };

    for (gsize i = 0; i < G_N_ELEMENTS (swaps); i++)
      {
        g_autoptr (GString) t = g_string_new (data);
        g_autoptr (GError) e = NULL;
        RpeSession *r;

        if (strstr (data, swaps[i][0]) == NULL)
          g_error ("no “%s” in %s", swaps[i][0], data);
        g_string_replace (t, swaps[i][0], swaps[i][1], 1);
        r = rpe_session_load_data (t->str, t->len, file, &e);
        g_assert_null (r);
        g_assert_nonnull (e);
        g_test_message ("refused: %s", e->message);
      }
    {
      /* array values with no file named */
      g_autoptr (GString) t = g_string_new (data);
      g_autoptr (GError) e = NULL;
      g_autofree char *obj = NULL;
      const char *at = strstr (data, "\"values-file\" : {");
      const char *end = at != NULL ? strchr (at, '}') : NULL;

      g_assert_nonnull (end);
      obj = g_strndup (at, (gsize) (end + 1 - at));
      g_string_replace (t, obj, "\"values-file\" : null", 1);
      g_assert_null (rpe_session_load_data (t->str, t->len, file, &e));
      g_assert_nonnull (e);
    }
  }
  g_unlink (npy);
  g_unlink (file);
  g_rmdir (dir);
}

/* ------------------------------------------------------- hostile texts */

/* A session text with `inner` placed as an extra member "x" of the top object. */
static GString *
with_member (const char *inner)
{
  g_autofree char *valid = session_text (NULL, NULL);
  GString *t = g_string_new (valid);
  const char *brace = strchr (valid, '{');

  g_assert_nonnull (brace);
  g_string_insert (t, (gssize) (brace - valid) + 1, "\"x\" : ");
  g_string_insert (t, (gssize) (brace - valid) + 7, inner);
  g_string_insert (t, (gssize) (brace - valid) + 7 + (gssize) strlen (inner), ",\n");
  return t;
}

static void
deep_refused (const char *name,
              const char *before,
              const char *after)
{
  GString *inner = g_string_new (before);
  GString *t;
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeSession) s = NULL;

  for (int i = 0; i < 100000; i++)
    g_string_append_c (inner, '[');
  for (int i = 0; i < 100000; i++)
    g_string_append_c (inner, ']');
  g_string_append (inner, after);
  t = with_member (inner->str);
  /* before the fix this recursed 100k levels deep inside json-glib (a stack overflow) */
  s = rpe_session_load_data (t->str, t->len, NULL, &error);
  g_assert_null (s);
  g_assert_nonnull (error);
  g_test_message ("%s: %s", name, error->message);
  if (strstr (error->message, "nested") == NULL && strstr (error->message, "not JSON") == NULL)
    g_error ("%s: %s", name, error->message);
  g_string_free (inner, TRUE);
  g_string_free (t, TRUE);
}

/* The pre-scan reads the text as every JSON lexer does: whatever json-glib's
 * own scanner would take for a string or a comment cannot hide a deep
 * nesting, comments are ignored, and what is not JSON is refused. */
static void
test_hostile_text (void)
{
  g_autofree char *valid = session_text (NULL, NULL);
  g_autoptr (RpeSession) plain = rpe_session_load_data (valid, strlen (valid), NULL, NULL);

  g_assert_nonnull (plain);

  /* a quote inside a comment, a single-quoted string, json-glib's "/.../" comment,
   * a "\u" escape that swallows the closing quote, an escaped quote */
  deep_refused ("block-comment", "/* \" */ ", " /* \" */");
  deep_refused ("line-comment", "// \"\n", "\n// \"\n");
  deep_refused ("slash-comment", "/ \" / ", "");
  deep_refused ("single-quote", "'\"' , ", "");
  deep_refused ("short-u-escape", "\"\\u12\" , ", "");
  deep_refused ("escaped-quote", "\"\\\"\" , ", "");
  deep_refused ("lone-surrogate", "\"\\uD800\" , ", "");

  /* comments of both kinds (with quotes and brackets in them) are ignored */
  {
    GString *t = g_string_new ("/* a session { [ \" ' */\n");
    g_autoptr (GError) error = NULL;
    g_autoptr (RpeSession) s = NULL;
    char *nl;

    g_string_append (t, valid);
    nl = strchr (t->str + 25, '\n');
    g_assert_nonnull (nl);
    g_string_insert (t, nl - t->str, " // a note \" [ {");
    s = rpe_session_load_data (t->str, t->len, NULL, &error);
    g_assert_no_error (error);
    assert_states_equal (plain->state, s->state);
    g_string_free (t, TRUE);
  }

  /* what is not JSON, named with its place */
  {
    static const struct { const char *inner; const char *expect; } cases[] = {
      { "'x'", "unexpected “'”" },
      { "0x10", "malformed number" },
      { "01", "malformed number" },
      { "1.", "without digits after its point" },
      { "NaN", "unexpected “N”" },
      { "\"a\tb\"", "control character" },
      { "\"\\q\"", "unknown escape" },
      { "\"\\uDC00\"", "lone low surrogate" },
      { "\"\\uD800\\u0041\"", "not followed by a low one" },
      { "/* open", "comment that does not end" },
      { "\"open", "control character" },      /* it runs into the next line */
      { "]", "closes nothing" },
      { "true2", "unexpected “t”" },
    };

    for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
      {
        GString *t = with_member (cases[i].inner);
        g_autoptr (GError) error = NULL;
        g_autoptr (RpeSession) s = rpe_session_load_data (t->str, t->len, NULL, &error);

        g_assert_null (s);
        g_assert_nonnull (error);
        if (strstr (error->message, cases[i].expect) == NULL || strstr (error->message, "line ") == NULL)
          g_error ("%s: expected “%s” (and a line) in “%s”", cases[i].inner, cases[i].expect, error->message);
        g_string_free (t, TRUE);
      }
  }
  {
    g_autoptr (GError) error = NULL;

    g_assert_null (rpe_session_load_data ("{\"a\" : \"open", 11, NULL, &error));
    g_assert_nonnull (strstr (error->message, "string that does not end"));
  }
  /* found by fuzz-session: a comment, then a string whose last byte is a backslash
   * (the pre-scan took it for closed and the blanking ran past the end) */
  {
    g_autoptr (GError) error = NULL;
    g_autofree char *path = g_test_build_filename (G_TEST_DIST, "fixtures", "regress",
                                                   "session-comment-trailing-backslash.rpe-session", NULL);
    g_autofree char *text = NULL;
    gsize len = 0;

    g_assert_null (rpe_session_load_data ("/* c */ \"ab\\", 12, NULL, &error));
    g_assert_nonnull (strstr (error->message, "string that does not end"));
    g_clear_error (&error);
    g_assert_true (g_file_get_contents (path, &text, &len, NULL));
    g_assert_null (rpe_session_load_data (text, len, NULL, &error));
    g_assert_nonnull (error);
  }
  /* a NUL written as an escape would cut a name or a path short */
  {
    g_autoptr (GError) error = NULL;
    GString *t = with_member ("\"a\\u0000b\"");

    g_assert_null (rpe_session_load_data (t->str, t->len, NULL, &error));
    g_assert_nonnull (strstr (error->message, "NUL"));
    g_string_free (t, TRUE);
  }
  /* a NUL byte, in a string and outside one */
  {
    g_autoptr (GError) e1 = NULL, e2 = NULL;
    GString *t = with_member ("\"a b\"");
    char *space = strstr (t->str, "a b");

    space[1] = '\0';
    g_assert_null (rpe_session_load_data (t->str, t->len, NULL, &e1));
    g_assert_nonnull (strstr (e1->message, "NUL"));
    space[1] = ' ';
    t->str[t->len - 2] = '\0';
    g_assert_null (rpe_session_load_data (t->str, t->len, NULL, &e2));
    g_assert_nonnull (e2);
    g_string_free (t, TRUE);
  }
}

/* Strings and arrays are sized before json-glib builds its tree: a string is
 * at most RPE_SESSION_MAX_STRING bytes, the title RPE_SESSION_MAX_TITLE
 * characters, and the tree of the whole text must fit in the memory budget. */
static void
test_sized (void)
{
  size_t saved = rpe_budget_get ();

  /* a long string anywhere */
  {
    GString *inner = g_string_new ("\"");
    GString *t;
    g_autoptr (GError) error = NULL;

    for (guint i = 0; i <= RPE_SESSION_MAX_STRING; i++)
      g_string_append_c (inner, 'x');
    g_string_append_c (inner, '"');
    t = with_member (inner->str);
    g_assert_null (rpe_session_load_data (t->str, t->len, NULL, &error));
    g_assert_nonnull (strstr (error->message, "a string of"));
    g_string_free (inner, TRUE);
    g_string_free (t, TRUE);
  }
  /* the limit is on the value, not on its escapes: json-glib writes DEL as
   * "\u007f", so a string of the limit's length written that way is read */
  for (guint n = RPE_SESSION_MAX_STRING; n <= RPE_SESSION_MAX_STRING + 1; n++)
    {
      GString *inner = g_string_new ("[\"");
      GString *t;
      g_autoptr (GError) error = NULL;
      g_autoptr (RpeSession) s = NULL;

      for (guint i = 0; i < n; i++)
        g_string_append (inner, "\\u007f");
      g_string_append (inner, "\"]");
      t = with_member (inner->str);
      s = rpe_session_load_data (t->str, t->len, NULL, &error);
      if (n == RPE_SESSION_MAX_STRING)
        g_assert_no_error (error);
      else
        g_assert_nonnull (strstr (error->message, "a string of"));
      g_string_free (inner, TRUE);
      g_string_free (t, TRUE);
    }
  /* the title: 1000 characters (two bytes each) are taken, 1001 are not */
  for (guint n = RPE_SESSION_MAX_TITLE; n <= RPE_SESSION_MAX_TITLE + 1; n++)
    {
      GString *title = g_string_new ("\"title\" : \"");
      g_autofree char *text = NULL;
      g_autoptr (GError) error = NULL;
      g_autoptr (RpeSession) s = NULL;

      for (guint i = 0; i < n; i++)
        g_string_append (title, "é");
      g_string_append_c (title, '"');
      text = session_text ("\"title\" : null", title->str);
      s = rpe_session_load_data (text, strlen (text), NULL, &error);
      if (n == RPE_SESSION_MAX_TITLE)
        {
          g_assert_no_error (error);
          g_assert_cmpuint (g_utf8_strlen (s->export_title, -1), ==, n);
        }
      else
        {
          g_assert_null (s);
          g_assert_nonnull (strstr (error->message, "title is longer"));
        }
      g_string_free (title, TRUE);
    }
  /* 200k numbers: a few MB of json-glib nodes, refused up front under a 4 MiB budget
   * (the text itself is 400 kB) and read under the default */
  {
    GString *inner = g_string_new ("[");
    GString *t;
    g_autoptr (GError) error = NULL;
    g_autoptr (RpeSession) s = NULL;

    for (guint i = 0; i < 200000; i++)
      g_string_append (inner, i > 0 ? ",0" : "0");
    g_string_append_c (inner, ']');
    t = with_member (inner->str);
    rpe_budget_set ((size_t) 4 << 20);
    g_assert_null (rpe_session_load_data (t->str, t->len, NULL, &error));
    rpe_budget_set (saved);
    g_assert_cmpint (error->code, ==, RPE_ERROR_NO_MEMORY);
    g_assert_nonnull (strstr (error->message, "memory budget"));
    s = rpe_session_load_data (t->str, t->len, NULL, NULL);
    g_assert_nonnull (s);
    g_string_free (inner, TRUE);
    g_string_free (t, TRUE);
  }
}

/* A session's files are hashed only when they are regular files within the
 * budget: a huge sparse file, /proc/self/pagemap (regular, size 0, endless)
 * and /proc/kmsg (blocks) give a note instead of a hang. */
static void
test_bounded_hash (void)
{
  g_autofree char *sparse = rpe_test_tmp_path ("huge-sparse.safetensors");
  const char *specials[] = { sparse, "/proc/self/pagemap", "/proc/kmsg" };
  size_t saved = rpe_budget_get ();
  int fd = g_open (sparse, O_WRONLY | O_CREAT | O_TRUNC, 0644);

  g_assert_cmpint (fd, >=, 0);
  /* 200 GB, no blocks (tmpfs and ext4 take it) */
  g_assert_cmpint (ftruncate (fd, (off_t) 200 << 30), ==, 0);
  close (fd);
  rpe_budget_set ((size_t) 256 << 20);
  for (gsize i = 0; i < G_N_ELEMENTS (specials); i++)
    {
      g_autofree char *quoted = g_strescape (specials[i], NULL);
      g_autofree char *ck = g_strdup_printf ("\"checkpoint\" : { \"path\" : \"%s\", \"sha256\" : \"%064d\" }",
                                             quoted, 0);
      g_autofree char *text = session_text ("\"checkpoint\" : null", ck);
      g_autoptr (GError) error = NULL;
      g_autoptr (RpeSession) s = NULL;
      g_autoptr (GError) hash_error = NULL;
      g_autofree char *sum = NULL;

      if (!g_file_test (specials[i], G_FILE_TEST_IS_REGULAR))
        continue;
      s = rpe_session_load_data (text, strlen (text), NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (s->warnings->len, ==, 1);
      g_test_message ("%s", (char *) g_ptr_array_index (s->warnings, 0));
      g_assert_nonnull (strstr (g_ptr_array_index (s->warnings, 0), "was not compared"));
      /* and on save: no hash rather than a hang */
      sum = rpe_session_file_sha256 (specials[i], &hash_error);
      g_assert_null (sum);
      g_assert_nonnull (hash_error);
    }
  rpe_budget_set (saved);
  /* a FIFO is never opened for reading in a way that waits for a writer */
  {
    g_autofree char *fifo = rpe_test_tmp_path ("hash.fifo");
    g_autoptr (GError) error = NULL;

    g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
    g_assert_null (rpe_session_file_sha256 (fifo, &error));
    g_assert_nonnull (strstr (error->message, "FIFO"));
    g_unlink (fifo);
  }
  g_unlink (sparse);
}

/* A relative path in a session is read against the session file's folder, not
 * the working directory; saved paths are absolute. */
static void
test_relative_paths (void)
{
  g_autofree char *dir = rpe_test_tmp_path ("rel-session");
  g_autofree char *sub = g_build_filename (dir, "models", NULL);
  g_autofree char *ckpt = g_build_filename (sub, "m.safetensors", NULL);
  g_autofree char *session = g_build_filename (dir, "s.rpe-session", NULL);
  g_autofree char *cwd = g_get_current_dir ();
  g_autofree char *decoy_dir = rpe_test_tmp_path ("rel-cwd");
  g_autofree char *decoy_sub = g_build_filename (decoy_dir, "models", NULL);
  g_autofree char *decoy = g_build_filename (decoy_sub, "m.safetensors", NULL);
  g_autofree char *text = session_text ("\"checkpoint\" : null",
                                        "\"checkpoint\" : { \"path\" : \"models/m.safetensors\" }");
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeSession) s = NULL;

  g_assert_cmpint (g_mkdir_with_parents (sub, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (decoy_sub, 0755), ==, 0);
  g_assert_true (g_file_set_contents (ckpt, "beside the session", -1, NULL));
  g_assert_true (g_file_set_contents (decoy, "in the working directory", -1, NULL));
  g_assert_true (g_file_set_contents (session, text, -1, NULL));
  /* the working directory holds a file of the same relative name */
  g_assert_cmpint (g_chdir (decoy_dir), ==, 0);
  s = rpe_session_load (session, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (s->checkpoint.path, ==, ckpt);
  g_assert_cmpuint (s->warnings->len, ==, 0);

  /* saved: absolute, whatever the working directory was when it was given */
  {
    g_autoptr (RpeSession) w = rpe_session_new_from_state (s->state);
    g_autofree char *data = NULL;
    g_autofree char *want = NULL;

    rpe_session_set_checkpoint (w, "models/m.safetensors", NULL, -1, NULL);
    data = rpe_session_to_data (w, NULL, &error);
    g_assert_no_error (error);
    want = g_strescape (decoy, NULL);
    g_assert_nonnull (strstr (data, want));
  }
  g_assert_cmpint (g_chdir (cwd), ==, 0);
}

/* A restored capture is checked against the session's checkpoint: another model's is refused with
 * both named; one without a fingerprint is a warning; the right one loads with the fingerprint kept.
 * The Outputs view's captured-values choice is saved and read back. */
static void
test_capture_model (void)
{
  g_autoptr (RpeExplorerState) state = rpe_explorer_state_new ();
  g_autoptr (RpeExplorerCapture) demo = NULL, hand = NULL;
  g_autoptr (RpeSession) s = NULL;
  g_autoptr (RpeSession) back = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *path = rpe_test_tmp_path ("capture-model.rpe-session");
  g_autofree char *hand_path = rpe_test_tmp_path ("capture-hand.npz");

  demo = rpe_explorer_capture_open ("demo:conv-spe", &error);
  g_assert_no_error (error);
  rpe_explorer_state_restore_capture (state, demo);
  s = rpe_session_new_from_state (state);
  s->outputs.have = TRUE;
  s->outputs.channels = 4;
  s->outputs.captured = TRUE;

  /* its own model: read, fingerprinted, no warning, the choice kept */
  rpe_session_set_checkpoint (s, "demo:conv-spe", NULL, 0, NULL);
  g_assert_true (rpe_session_save (s, path, &error));
  g_assert_no_error (error);
  back = rpe_session_load (path, &error);
  g_assert_no_error (error);
  g_assert_nonnull (back->model_print);
  g_assert_cmpuint (back->warnings->len, ==, 0);
  g_assert_nonnull (rpe_explorer_state_get_capture (back->state));
  g_assert_true (back->outputs.captured);
  g_clear_pointer (&back, rpe_session_free);
  s->outputs.captured = FALSE;
  g_assert_true (rpe_session_save (s, path, &error));
  back = rpe_session_load (path, &error);
  g_assert_no_error (error);
  g_assert_false (back->outputs.captured);
  g_clear_pointer (&back, rpe_session_free);

  /* another model's checkpoint: refused, both named */
  rpe_session_set_checkpoint (s, "demo:sine-spe", NULL, 0, NULL);
  g_assert_true (rpe_session_save (s, path, &error));
  back = rpe_session_load (path, &error);
  g_assert_null (back);
  g_assert_error (error, RPE_ERROR, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "“demo:conv-spe”"));
  g_assert_nonnull (strstr (error->message, "“demo:sine-spe”"));
  g_assert_nonnull (strstr (error->message, "another model"));
  g_clear_error (&error);

  /* a capture without a fingerprint: loaded, with a warning that it cannot be checked */
  rpe_test_write_capture (hand_path, 1, 24, 4, 16, 0, 3, NULL, NULL, NULL);
  hand = rpe_explorer_capture_open (hand_path, &error);
  g_assert_no_error (error);
  rpe_explorer_state_restore_capture (s->state, hand);
  g_assert_true (rpe_session_save (s, path, &error));
  back = rpe_session_load (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (back->warnings->len, ==, 1);
  g_assert_nonnull (strstr (g_ptr_array_index (back->warnings, 0), "records no fingerprint"));
  g_assert_nonnull (strstr (g_ptr_array_index (back->warnings, 0), "demo:sine-spe"));
  g_clear_pointer (&back, rpe_session_free);

  /* a malformed choice is refused */
  {
    g_autofree char *text = NULL;
    g_autofree char *bad = NULL;
    char            *at;

    s->outputs.captured = TRUE;
    g_assert_true (rpe_session_save (s, path, &error));
    g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
    at = strstr (text, "\"captured-values\" : true");
    g_assert_nonnull (at);
    *at = '\0';
    bad = g_strconcat (text, "\"captured-values\" : 7", at + strlen ("\"captured-values\" : true"), NULL);
    g_assert_true (g_file_set_contents (path, bad, -1, NULL));
    back = rpe_session_load (path, &error);
    g_assert_null (back);
    g_assert_nonnull (strstr (error->message, "captured-values"));
    g_clear_error (&error);
  }
  g_remove (path);
  g_remove (hand_path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/session/round-trip", test_round_trip);
  g_test_add_func ("/session/content-file", test_content_file);
  g_test_add_func ("/session/malformed", test_malformed);
  g_test_add_func ("/session/lrpe-trained", test_lrpe_trained);
  g_test_add_func ("/session/trained-modules", test_trained_modules);
  g_test_add_func ("/session/checkpoint", test_checkpoint_moved_and_changed);
  g_test_add_func ("/session/cli", test_cli);
  g_test_add_func ("/session/argv", test_argv);
  g_test_add_func ("/session/outputs", test_outputs);
  g_test_add_func ("/session/hostile-text", test_hostile_text);
  g_test_add_func ("/session/sized", test_sized);
  g_test_add_func ("/session/bounded-hash", test_bounded_hash);
  g_test_add_func ("/session/relative-paths", test_relative_paths);
  g_test_add_func ("/session/capture-model", test_capture_model);
  return g_test_run ();
}

/* test-core-capture.c: the capture reader (core/io/rpe-capture.h).
 *
 * Captures are built here byte by byte (an independent .npy and zip writer, stored or deflated
 * members), read back, and compared value for value with what was written; then every kind of
 * hostile capture is refused with an error naming the member or both shapes, and
 * rpe_capture_load_content leaves its output untouched when it refuses.  The files numpy writes
 * (tools/rpe_capture.py) are read by the Python driver test (test-capture-torch.py) and the
 * shipped demo captures by test-demos.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <gio/gio.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "rpe-alloc.h"
#include "rpe-capture.h"
#include "rpe-error.h"
#include "rpe-test-utils.h"

/* ---- a capture under construction: its members in order ---------------- */

typedef struct
{
  char       *name; /* member name, ".npy" included */
  GByteArray *data;
} Member;

static void
member_clear (gpointer p)
{
  Member *m = p;

  g_free (m->name);
  g_byte_array_unref (m->data);
}

/* A capture under construction: its members in order. */
static GArray *
members_new (void)
{
  GArray *a = g_array_new (FALSE, TRUE, sizeof (Member));

  g_array_set_clear_func (a, member_clear);
  return a;
}

static void
add_member (GArray *a, const char *name, GByteArray *data)
{
  Member m = { g_strdup_printf ("%s.npy", name), data };

  g_array_append_val (a, m);
}

/* float32 (N, H, D) with values f(n, h, d) */
static void
add_f32 (GArray *a, const char *name, gsize n, gsize h, gsize d, float scale)
{
  gsize             shape[3] = { n, h, d }, count = n * h * d;
  g_autofree float *v = g_new (float, count > 0 ? count : 1);

  for (gsize i = 0; i < count; i++)
    v[i] = scale * (float) ((gint) (i % 17) - 8) / 8.0f;
  add_member (a, name, rpe_test_npy_bytes ("<f4", 3, shape, v, count * 4));
}

static void
add_tokens (GArray *a, gsize n, gint64 first)
{
  g_autofree gint64 *t = g_new (gint64, n);

  for (gsize i = 0; i < n; i++)
    t[i] = first + (gint64) (i % 8);
  add_member (a, "tokens", rpe_test_npy_bytes ("<i8", 1, &n, t, n * 8));
}

static void
add_meta (GArray *a, const char *json)
{
  gsize n = strlen (json);

  add_member (a, "meta", rpe_test_npy_bytes ("|u1", 1, &n, json, n));
}

static GByteArray *
zip_members (GArray *a, gboolean deflate)
{
  g_autofree const char **names = g_new (const char *, a->len + 1);
  g_autofree GByteArray **data = g_new (GByteArray *, a->len + 1);

  for (guint i = 0; i < a->len; i++)
    {
      names[i] = g_array_index (a, Member, i).name;
      data[i] = g_array_index (a, Member, i).data;
    }
  return rpe_test_zip_bytes (names, data, a->len, deflate);
}

#define META_OK                                                                     \
  "{\"format\": \"rpe-capture\", \"version\": 1, \"model_class\": \"test.Model\", " \
  "\"date\": \"2024-01-02T03:04:05Z\", \"layers\": {\"0\": {}}}"

/* layers 0 and 2 (N = 6, H = 2, D = 3), values (Dv = 4) for layer 2, tokens, meta */
static GArray *
good_members (void)
{
  GArray *a = members_new ();

  add_f32 (a, "layers.0.queries", 6, 2, 3, 1.0f);
  add_f32 (a, "layers.0.keys", 6, 2, 3, -0.5f);
  add_f32 (a, "layers.2.queries", 6, 2, 3, 2.0f);
  add_f32 (a, "layers.2.keys", 6, 2, 3, 0.25f);
  add_f32 (a, "layers.2.values", 6, 2, 4, 3.0f);
  add_tokens (a, 6, 3);
  add_meta (a, META_OK);
  return a;
}

static RpeCapture *
read_zip (GByteArray *z, GError **error)
{
  return rpe_capture_read_bytes (z->data, z->len, "t.npz", error);
}

static void
expect_refused (GArray *a, RpeStatus code, const char *needle)
{
  g_autoptr (GByteArray) z = zip_members (a, FALSE);
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeCapture) c = read_zip (z, &error);

  g_assert_null (c);
  g_assert_nonnull (error);
  if (g_test_verbose ())
    g_printerr ("refused: %s\n", error->message);
  g_assert_error (error, RPE_ERROR, (int) code);
  g_assert_nonnull (strstr (error->message, "t.npz"));
  if (needle != NULL && strstr (error->message, needle) == NULL)
    g_error ("message '%s' lacks '%s'", error->message, needle);
}

/* ---- tests -------------------------------------------------------------- */

static void
check_good (RpeCapture *c)
{
  const RpeTensor *q0, *k0, *v2, *t;
  g_autofree char *list = NULL;

  g_assert_nonnull (c);
  g_assert_cmpuint (rpe_capture_n_layers (c), ==, 2);
  g_assert_cmpuint (rpe_capture_layer (c, 0), ==, 0);
  g_assert_cmpuint (rpe_capture_layer (c, 1), ==, 2);
  g_assert_true (rpe_capture_has_layer (c, 2));
  g_assert_false (rpe_capture_has_layer (c, 1));
  list = rpe_capture_layer_list (c);
  g_assert_cmpstr (list, ==, "0, 2");
  q0 = rpe_capture_get (c, 0, RPE_CAPTURE_QUERIES);
  k0 = rpe_capture_get (c, 0, RPE_CAPTURE_KEYS);
  v2 = rpe_capture_get (c, 2, RPE_CAPTURE_VALUES);
  g_assert_nonnull (q0);
  g_assert_null (rpe_capture_get (c, 0, RPE_CAPTURE_VALUES));
  g_assert_null (rpe_capture_get (c, 1, RPE_CAPTURE_QUERIES));
  g_assert_cmpuint (q0->shape[0], ==, 6);
  g_assert_cmpuint (q0->shape[1], ==, 2);
  g_assert_cmpuint (q0->shape[2], ==, 3);
  g_assert_cmpuint (v2->shape[2], ==, 4);
  for (gsize i = 0; i < q0->n_elements; i++)
    {
      float want = (float) ((gint) (i % 17) - 8) / 8.0f;

      g_assert_cmpfloat (q0->data[i], ==, want);
      g_assert_cmpfloat (k0->data[i], ==, -0.5f * want);
    }
  t = rpe_capture_tokens (c);
  g_assert_nonnull (t);
  g_assert_cmpuint (t->n_elements, ==, 6);
  for (gsize i = 0; i < 6; i++)
    g_assert_cmpfloat (t->data[i], ==, (float) (3 + i % 8));
  g_assert_cmpstr (rpe_capture_model_class (c), ==, "test.Model");
  g_assert_cmpstr (rpe_capture_date (c), ==, "2024-01-02T03:04:05Z");
  g_assert_cmpstr (rpe_capture_meta_json (c), ==, META_OK);
}

static void
test_read (void)
{
  for (int deflate = 0; deflate < 2; deflate++)
    {
      g_autoptr (GArray) a = good_members ();
      g_autoptr (GByteArray) z = zip_members (a, deflate);
      g_autoptr (GError) error = NULL;
      g_autoptr (RpeCapture) c = read_zip (z, &error);
      g_autofree char *path = rpe_test_tmp_path ("good.npz");
      g_autoptr (RpeCapture) from_file = NULL;

      g_assert_no_error (error);
      check_good (c);
      g_assert_true (g_file_set_contents (path, (const char *) z->data, z->len, NULL));
      from_file = rpe_capture_open (path, &error);
      g_assert_no_error (error);
      check_good (from_file);
      g_assert_cmpstr (rpe_capture_name (from_file), ==, path);
    }
}

static void
test_minimal (void)
{
  /* no tokens, no metadata: a capture written by hand with np.savez */
  g_autoptr (GArray) a = members_new ();
  g_autoptr (GByteArray) z = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeCapture) c = NULL;

  add_f32 (a, "layers.7.keys", 1, 1, 1, 1.0f);
  add_f32 (a, "layers.7.queries", 1, 1, 1, 1.0f);
  z = zip_members (a, FALSE);
  c = read_zip (z, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rpe_capture_n_layers (c), ==, 1);
  g_assert_cmpuint (rpe_capture_layer (c, 0), ==, 7);
  g_assert_null (rpe_capture_tokens (c));
  g_assert_null (rpe_capture_meta_json (c));
  g_assert_null (rpe_capture_model_class (c));
}

static void
test_content (void)
{
  g_autoptr (GArray) a = good_members ();
  g_autoptr (GByteArray) z = zip_members (a, FALSE);
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeCapture) c = read_zip (z, &error);
  RpeCaptureContent content;
  const RpeTensor  *q2 = rpe_capture_get (c, 2, RPE_CAPTURE_QUERIES);
  const RpeTensor  *v2 = rpe_capture_get (c, 2, RPE_CAPTURE_VALUES);

  g_assert_true (rpe_capture_load_content (c, 2, 2, 3, 0, TRUE, &content, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (content.layer, ==, 2);
  g_assert_cmpuint (content.n, ==, 6);
  g_assert_cmpuint (content.dv, ==, 4);
  g_assert_cmpmem (content.q, 6 * 2 * 3 * sizeof (float), q2->data, q2->n_elements * sizeof (float));
  g_assert_cmpmem (content.v, 6 * 2 * 4 * sizeof (float), v2->data, v2->n_elements * sizeof (float));
  g_assert_nonnull (content.tokens);
  g_assert_cmpfloat (content.tokens[5], ==, 8.0f);
  rpe_capture_content_clear (&content);
  g_assert_null (content.q);

  /* without values asked for, none are copied */
  g_assert_true (rpe_capture_load_content (c, 0, 2, 3, 6, FALSE, &content, &error));
  g_assert_null (content.v);
  g_assert_cmpuint (content.dv, ==, 0);
  rpe_capture_content_clear (&content);

  /* refusals leave `out` zeroed */
  {
    struct
    {
      guint       layer;
      gsize       h, d, max;
      gboolean    values;
      const char *needle[3];
    } bad[] = {
      { 1, 2, 3, 0, FALSE, { "no layer 1", "0, 2", NULL } },
      { 0, 4, 16, 0, FALSE, { "(6, 2, 3)", "H = 4", "D = 16" } }, /* another model's module */
      { 0, 2, 4, 0, FALSE, { "(6, 2, 3)", "D = 4", NULL } },
      { 0, 2, 3, 5, FALSE, { "N = 6", "5", NULL } },
      { 0, 2, 3, 0, TRUE, { "no values", NULL, NULL } },
    };

    for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
      {
        memset (&content, 0x5a, sizeof content);
        g_assert_false (
          rpe_capture_load_content (c, bad[i].layer, bad[i].h, bad[i].d, bad[i].max, bad[i].values, &content, &error));
        g_assert_error (error, RPE_ERROR, RPE_ERROR_INVALID_ARGUMENT);
        for (int k = 0; k < 3; k++)
          if (bad[i].needle[k] != NULL && strstr (error->message, bad[i].needle[k]) == NULL)
            g_error ("message '%s' lacks '%s'", error->message, bad[i].needle[k]);
        g_assert_null (content.q);
        g_assert_null (content.k);
        g_assert_null (content.v);
        g_assert_cmpuint (content.n, ==, 0);
        g_clear_error (&error);
      }
  }
}

static void
test_hostile_shapes (void)
{
  {
    g_autoptr (GArray) a = members_new (); /* queries and keys disagree */
    add_f32 (a, "layers.0.queries", 6, 2, 3, 1.0f);
    add_f32 (a, "layers.0.keys", 6, 2, 4, 1.0f);
    expect_refused (a, RPE_ERROR_FORMAT, "(6, 2, 3) and keys (6, 2, 4)");
  }
  {
    g_autoptr (GArray) a = members_new (); /* values of another N */
    add_f32 (a, "layers.0.queries", 6, 2, 3, 1.0f);
    add_f32 (a, "layers.0.keys", 6, 2, 3, 1.0f);
    add_f32 (a, "layers.0.values", 5, 2, 3, 1.0f);
    expect_refused (a, RPE_ERROR_FORMAT, "values (5, 2, 3)");
  }
  {
    g_autoptr (GArray) a = members_new (); /* 0 rows */
    add_f32 (a, "layers.0.queries", 0, 2, 3, 1.0f);
    add_f32 (a, "layers.0.keys", 0, 2, 3, 1.0f);
    expect_refused (a, RPE_ERROR_FORMAT, "(0, 2, 3)");
  }
  {
    g_autoptr (GArray) a = members_new (); /* 2-D */
    gsize shape[2] = { 4, 3 };
    float v[12] = { 0 };
    add_member (a, "layers.0.queries", rpe_test_npy_bytes ("<f4", 2, shape, v, sizeof v));
    add_member (a, "layers.0.keys", rpe_test_npy_bytes ("<f4", 2, shape, v, sizeof v));
    expect_refused (a, RPE_ERROR_FORMAT, "(N, H, D)");
  }
  {
    g_autoptr (GArray) a = members_new (); /* keys without queries */
    add_f32 (a, "layers.3.keys", 6, 2, 3, 1.0f);
    expect_refused (a, RPE_ERROR_FORMAT, "layer 3");
  }
  {
    g_autoptr (GArray) a = members_new (); /* no layer at all */
    add_tokens (a, 4, 0);
    expect_refused (a, RPE_ERROR_FORMAT, "no layer");
  }
  {
    g_autoptr (GArray) a = good_members (); /* tokens of another length */
    g_array_remove_index (a, 5);
    add_tokens (a, 5, 0);
    expect_refused (a, RPE_ERROR_FORMAT, "tokens (5)");
  }
  {
    g_autoptr (GArray) a = good_members (); /* a token beyond 2^24 */
    g_array_remove_index (a, 5);
    add_tokens (a, 6, (gint64) 1 << 40);
    expect_refused (a, RPE_ERROR_INVALID_ARGUMENT, "2^24");
  }
  {
    g_autoptr (GArray) a = good_members (); /* float tokens */
    gsize n = 6;
    float t[6] = { 0 };
    g_array_remove_index (a, 5);
    add_member (a, "tokens", rpe_test_npy_bytes ("<f4", 1, &n, t, sizeof t));
    expect_refused (a, RPE_ERROR_FORMAT, "tokens must be integers");
  }
  {
    g_autoptr (GArray) a = members_new (); /* integer queries */
    gsize  shape[3] = { 1, 1, 2 };
    gint64 v[2] = { 1, 2 };
    add_member (a, "layers.0.queries", rpe_test_npy_bytes ("<i8", 3, shape, v, sizeof v));
    add_f32 (a, "layers.0.keys", 1, 1, 2, 1.0f);
    expect_refused (a, RPE_ERROR_UNSUPPORTED, "<i8");
  }
}

static void
test_hostile_values (void)
{
  const float bad[] = { NAN, INFINITY, -INFINITY };

  for (guint b = 0; b < G_N_ELEMENTS (bad); b++)
    for (int which = 0; which < 3; which++)
      {
        g_autoptr (GArray) a = members_new ();
        gsize       shape[3] = { 2, 1, 2 };
        float       v[4] = { 0.5f, 1.0f, -1.0f, 2.0f };
        const char *names[3] = { "layers.0.queries", "layers.0.keys", "layers.0.values" };

        for (int i = 0; i < 3; i++)
          {
            float w[4];

            memcpy (w, v, sizeof v);
            if (i == which)
              w[3] = bad[b];
            add_member (a, names[i], rpe_test_npy_bytes ("<f4", 3, shape, w, sizeof w));
          }
        expect_refused (a, RPE_ERROR_INVALID_ARGUMENT, names[which]);
      }
}

static void
test_hostile_names (void)
{
  const char *names[] = {
    "layers.01.queries", "layers.10000.queries", "layers.-1.queries", "layers..queries",
    "layers.0.query",    "layers.0.queries.x",   "layer.0.queries",   "Layers.0.queries",
    "spe.freqs",         "layers.0x1.queries",   "layers. 1.queries", "../layers.0.queries",
  };

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autoptr (GArray) a = good_members ();

      add_f32 (a, names[i], 6, 2, 3, 1.0f);
      expect_refused (a, RPE_ERROR_FORMAT, "is not part of a capture");
    }
  {
    g_autoptr (GArray) a = good_members (); /* a member that is not an .npy */
    Member m = { g_strdup ("layers.0.queries"), g_byte_array_new () };
    g_array_append_val (a, m);
    expect_refused (a, RPE_ERROR_FORMAT, "not part of a capture");
  }
  {
    g_autoptr (GArray) a = good_members (); /* the same member twice */
    add_f32 (a, "layers.0.keys", 6, 2, 3, 1.0f);
    expect_refused (a, RPE_ERROR_FORMAT, "twice");
  }
}

static void
test_hostile_meta (void)
{
  const struct
  {
    const char *json;
    RpeStatus   code;
    const char *needle;
  } bad[] = {
    { "not json", RPE_ERROR_FORMAT, "not JSON" },
    { "[1, 2]", RPE_ERROR_FORMAT, "not a JSON object" },
    { "{\"format\": \"other\", \"version\": 1}", RPE_ERROR_FORMAT, "not a capture" },
    { "{\"version\": 1}", RPE_ERROR_FORMAT, "not a capture" },
    { "{\"format\": \"rpe-capture\"}", RPE_ERROR_FORMAT, "integer version" },
    { "{\"format\": \"rpe-capture\", \"version\": \"1\"}", RPE_ERROR_FORMAT, "integer version" },
    { "{\"format\": \"rpe-capture\", \"version\": 2}", RPE_ERROR_UNSUPPORTED, "version 2" },
    { "{\"format\": \"rpe-capture\", \"version\": 1, /* \" */ \"x\": 1}", RPE_ERROR_FORMAT, "comment" },
    { "{\"format\": \"rpe-capture\", \"version\": 1, \"bad\": \"\xff\xfe\"}", RPE_ERROR_FORMAT, "UTF-8" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GArray) a = good_members ();

      g_array_remove_index (a, 6);
      add_meta (a, bad[i].json);
      expect_refused (a, bad[i].code, bad[i].needle);
    }
  {
    /* 100k-deep nesting is refused before the JSON parser recurses into it */
    g_autoptr (GArray) a = good_members ();
    GString *s = g_string_new ("{\"format\": \"rpe-capture\", \"version\": 1, \"x\": ");

    for (int i = 0; i < 100000; i++)
      g_string_append_c (s, '[');
    for (int i = 0; i < 100000; i++)
      g_string_append_c (s, ']');
    g_string_append_c (s, '}');
    g_array_remove_index (a, 6);
    add_meta (a, s->str);
    g_string_free (s, TRUE);
    expect_refused (a, RPE_ERROR_FORMAT, "deeper");
  }
  {
    /* a NUL byte inside the metadata */
    g_autoptr (GArray) a = good_members ();
    const char json[] = "{\"format\": \"rpe-capture\", \"version\": 1, \"x\": \"a\0b\"}";
    gsize      n = sizeof json - 1;

    g_array_remove_index (a, 6);
    add_member (a, "meta", rpe_test_npy_bytes ("|u1", 1, &n, json, n));
    expect_refused (a, RPE_ERROR_FORMAT, "UTF-8");
  }
  {
    /* metadata as float */
    g_autoptr (GArray) a = good_members ();
    gsize n = 2;
    float v[2] = { 123.0f, 125.0f };

    g_array_remove_index (a, 6);
    add_member (a, "meta", rpe_test_npy_bytes ("<f4", 1, &n, v, sizeof v));
    expect_refused (a, RPE_ERROR_FORMAT, "meta must be bytes");
  }
}

/* The metadata's own hostile cases: a NUL escape in a name of the model's fingerprint (it would
 * read as a shorter name: "w\u0000x" as "w"), and a text whose JSON tree would not fit in the
 * memory budget (1 MiB of "[0,0,...": half a million values, about 80 MB of parser nodes, once
 * parsed whole before any check). */
static void
test_hostile_meta_nul_and_tree (void)
{
  {
    g_autoptr (GArray) a = good_members ();

    g_array_remove_index (a, 6);
    add_meta (a, "{\"format\": \"rpe-capture\", \"version\": 1, \"model_fingerprint\": {\"hash\": "
                 "\"sha256-float32le\", \"tensors\": {\"w\\u0000x\": {\"shape\": [1], \"sha256\": "
                 "\"0000000000000000000000000000000000000000000000000000000000000000\"}}}}");
    expect_refused (a, RPE_ERROR_FORMAT, "NUL");
  }
  {
    g_autoptr (GArray) a = good_members ();
    GString *s = g_string_new ("{\"format\": \"rpe-capture\", \"version\": 1, \"x\": [0");

    while (s->len < RPE_CAPTURE_MAX_META - 16)
      g_string_append (s, ",0");
    g_string_append (s, "]}");
    g_array_remove_index (a, 6);
    add_meta (a, s->str);
    g_string_free (s, TRUE);
    rpe_budget_set ((gsize) 32 << 20); /* the arrays (4 MiB of text) fit; the tree does not */
    expect_refused (a, RPE_ERROR_NO_MEMORY, "metadata");
    rpe_budget_set (0);
  }
}

/* ---- the model a capture was made on ------------------------------------ */

static RpeTensor *
tensor_of (const char *name, gsize n, float first)
{
  g_autoptr (GError) error = NULL;
  RpeTensor *t = rpe_tensor_new (name, 1, &n, &error);

  g_assert_no_error (error);
  for (gsize i = 0; i < n; i++)
    t->data[i] = first + (float) i;
  return t;
}

/* The SHA-256 of n float32 values first, first + 1, ... (little-endian), written out here. */
static char *
sha_of (gsize n, float first)
{
  GChecksum *sum = g_checksum_new (G_CHECKSUM_SHA256);
  char      *hex;

  for (gsize i = 0; i < n; i++)
    {
      float   v = first + (float) i;
      guint32 bits;
      guint8  le[4];

      memcpy (&bits, &v, 4);
      for (int b = 0; b < 4; b++)
        le[b] = (guint8) (bits >> (8 * b));
      g_checksum_update (sum, le, 4);
    }
  hex = g_strdup (g_checksum_get_string (sum));
  g_checksum_free (sum);
  return hex;
}

/* A capture whose model is one tensor "enc.w" of 5 values 1, 2, ... */
static RpeCapture *
capture_of_model (void)
{
  g_autoptr (GArray) a = good_members ();
  g_autofree char *sha = sha_of (5, 1.0f);
  g_autofree char *meta = g_strdup_printf (
    "{\"format\": \"rpe-capture\", \"version\": 1, \"model_fingerprint\": {\"hash\": \"sha256-float32le\", "
    "\"tensors\": {\"enc.w\": {\"dtype\": \"float32\", \"shape\": [5], \"sha256\": \"%s\"}}}}",
    sha);
  g_autoptr (GByteArray) z = NULL;
  g_autoptr (GError) error = NULL;
  RpeCapture *c;

  g_array_remove_index (a, 6);
  add_meta (a, meta);
  z = zip_members (a, FALSE);
  c = read_zip (z, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rpe_capture_n_model_tensors (c), ==, 1);
  return c;
}

static RpeModelPrint *
print_of (const char *name, float first, const char *label)
{
  g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
  g_autoptr (GError) error = NULL;

  g_assert_true (rpe_tensor_set_add (set, tensor_of ("optimizer.step", 3, 0.0f), &error));
  g_assert_true (rpe_tensor_set_add (set, tensor_of (name, 5, first), &error));
  g_assert_no_error (error);
  return rpe_model_print_new (set, label);
}

/* The check against one model gives that model's answer however often and in whatever order
 * models are checked (the answer is kept per model); a checkpoint's prefix ("model.",
 * "model.module.") is found, up to 8 components: a name whose capture part sits deeper is
 * not searched for (finding the prefix costs a few lookups per name, whatever the names). */
static void
test_model_check (void)
{
  g_autoptr (RpeCapture) c = capture_of_model ();
  g_autoptr (RpeModelPrint) same = print_of ("enc.w", 1.0f, "same.pt");
  g_autoptr (RpeModelPrint) other = print_of ("enc.w", 2.0f, "other.pt");
  g_autoptr (RpeModelPrint) wrapped = print_of ("model.module.enc.w", 1.0f, "wrapped.pt");
  g_autoptr (RpeModelPrint) deep = print_of ("a.b.c.d.e.f.g.h.enc.w", 1.0f, "deep.pt");
  g_autoptr (RpeModelPrint) too_deep = print_of ("a.b.c.d.e.f.g.h.i.enc.w", 1.0f, "too-deep.pt");
  g_autoptr (GError) error = NULL;

  for (int round = 0; round < 2; round++)
    {
      g_assert_true (rpe_capture_check_model (c, same, NULL, &error));
      g_assert_no_error (error);
      g_assert_false (rpe_capture_check_model (c, other, NULL, &error));
      g_assert_error (error, RPE_ERROR, RPE_ERROR_INVALID_ARGUMENT);
      g_assert_nonnull (strstr (error->message, "other.pt"));
      g_assert_nonnull (strstr (error->message, "'enc.w' holds other values"));
      g_clear_error (&error);
      g_assert_false (rpe_capture_check_model (c, other, NULL, NULL));
      g_assert_true (rpe_capture_check_model (c, wrapped, NULL, &error));
      g_assert_no_error (error);
      g_assert_true (rpe_capture_check_model (c, deep, NULL, &error));
      g_assert_no_error (error);
      g_assert_false (rpe_capture_check_model (c, too_deep, NULL, &error));
      g_assert_nonnull (strstr (error->message, "none of the 1 tensors"));
      g_clear_error (&error);
    }
}

static void
test_hostile_sizes (void)
{
  /* huge N: arrays beyond the memory budget are refused before they are read */
  g_autoptr (GArray) a = members_new ();
  g_autoptr (GByteArray) z = NULL;
  g_autoptr (GError) error = NULL;
  RpeCapture *c;

  add_f32 (a, "layers.0.queries", 65536, 1, 4, 1.0f);
  add_f32 (a, "layers.0.keys", 65536, 1, 4, 1.0f);
  z = zip_members (a, TRUE); /* 2 MiB of arrays in a small deflated file */
  rpe_budget_set ((gsize) 1 << 20);
  c = read_zip (z, &error);
  rpe_budget_set (0);
  g_assert_null (c);
  g_assert_error (error, RPE_ERROR, RPE_ERROR_NO_MEMORY);
  g_assert_nonnull (strstr (error->message, "budget"));
  g_clear_error (&error);
  /* within the budget it is read, and a module's length limit refuses it */
  c = read_zip (z, &error);
  g_assert_no_error (error);
  {
    RpeCaptureContent content;

    g_assert_false (rpe_capture_load_content (c, 0, 1, 4, 65535, FALSE, &content, &error));
    g_assert_nonnull (strstr (error->message, "N = 65536"));
    g_clear_error (&error);
  }
  rpe_capture_free (c);
}

static void
test_truncated (void)
{
  /* every prefix of a valid capture, and every single-byte corruption of its first 2 KiB, is
   * refused or read whole; never a crash (the sanitizer runs catch reads out of bounds) */
  g_autoptr (GArray) a = good_members ();
  g_autoptr (GByteArray) z = zip_members (a, TRUE);
  guint refused = 0;

  for (gsize len = 0; len < z->len; len++)
    {
      g_autoptr (GError) error = NULL;
      RpeCapture *c = rpe_capture_read_bytes (z->data, len, "t.npz", &error);

      g_assert_true ((c == NULL) == (error != NULL));
      refused += c == NULL;
      rpe_capture_free (c);
    }
  g_assert_cmpuint (refused, ==, z->len);
  for (gsize i = 0; i < MIN (z->len, 2048); i += 7)
    {
      g_autoptr (GByteArray) bad = g_byte_array_sized_new (z->len);
      g_autoptr (GError) error = NULL;
      RpeCapture *c;

      g_byte_array_append (bad, z->data, z->len);
      bad->data[i] ^= 0x5a;
      c = rpe_capture_read_bytes (bad->data, bad->len, "t.npz", &error);
      g_assert_true ((c == NULL) == (error != NULL));
      rpe_capture_free (c);
    }
}

static void
test_spec (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *missing = rpe_test_tmp_path ("missing.npz");
  RpeCapture      *c;

  g_assert_true (rpe_capture_is_spec ("run.npz"));
  g_assert_true (rpe_capture_is_spec ("dir/RUN.NPZ"));
  g_assert_true (rpe_capture_is_spec ("demo:sine-spe"));
  g_assert_false (rpe_capture_is_spec ("unit"));
  g_assert_false (rpe_capture_is_spec ("random"));
  g_assert_false (rpe_capture_is_spec ("q.npy"));
  g_assert_false (rpe_capture_is_spec (".npz"));
  g_assert_false (rpe_capture_is_spec (NULL));
  c = rpe_capture_open (missing, &error);
  g_assert_null (c);
  g_assert_error (error, RPE_ERROR, RPE_ERROR_IO);
  g_assert_nonnull (strstr (error->message, "missing.npz"));
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/capture/read", test_read);
  g_test_add_func ("/capture/minimal", test_minimal);
  g_test_add_func ("/capture/content", test_content);
  g_test_add_func ("/capture/hostile/shapes", test_hostile_shapes);
  g_test_add_func ("/capture/hostile/values", test_hostile_values);
  g_test_add_func ("/capture/hostile/names", test_hostile_names);
  g_test_add_func ("/capture/hostile/meta", test_hostile_meta);
  g_test_add_func ("/capture/hostile/meta-nul-tree", test_hostile_meta_nul_and_tree);
  g_test_add_func ("/capture/hostile/sizes", test_hostile_sizes);
  g_test_add_func ("/capture/model-check", test_model_check);
  g_test_add_func ("/capture/truncated", test_truncated);
  g_test_add_func ("/capture/spec", test_spec);
  return g_test_run ();
}

/* test-cli-capture.c: `rpe` with a capture as its content (--content CAPTURE --layer l).
 *
 * A capture's layer is the same content as the .npy files holding the same arrays: every command
 * that takes content gives byte-identical output for `--content CAPTURE --layer l [--values
 * CAPTURE]` and for `--queries Q.npy --keys K.npy [--values V.npy]` of layer l's arrays (both
 * go through the same computation once loaded, with the same shapes).  A capture that does not fit
 * (another model's shape, a missing layer, NaN) and the combinations that make no sense are refused
 * with exit status 2, a message naming the problem, and no output written.  The PyTorch side
 * (tools/rpe_capture.py, exact logits of every layer against a reference) is test-capture-torch.py.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "rpe-npy.h"
#include "rpe-test-utils.h"

#define N 24
#define H 4
#define D 16
#define DV 5

typedef struct
{
  char *capture;
  char *q, *k, *v; /* layer 1's arrays as .npy */
} Files;

static void
files_clear (Files *f)
{
  g_free (f->capture);
  g_free (f->q);
  g_free (f->k);
  g_free (f->v);
}

static void
write_npy (const char *path, const float *data, gsize d3)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (rpe_npy_write (path, data, 3, (gsize[]) { N, H, d3 }, FALSE, &error));
  g_assert_no_error (error);
}

static void
make_files (Files *f)
{
  g_autofree float *q = NULL, *k = NULL, *v = NULL;

  f->capture = rpe_test_tmp_path ("run.npz");
  f->q = rpe_test_tmp_path ("q1.npy");
  f->k = rpe_test_tmp_path ("k1.npy");
  f->v = rpe_test_tmp_path ("v1.npy");
  /* H = 4 heads of D = 16 features: the trained demos' module shape */
  rpe_test_write_capture (f->capture, 2, N, H, D, DV, 17, &q, &k, &v);
  write_npy (f->q, q + N * H * D, D);
  write_npy (f->k, k + N * H * D, D);
  write_npy (f->v, v + N * H * DV, DV);
}

static GBytes *
file_bytes (const char *path, gboolean skip_comments)
{
  g_autofree char *text = NULL;
  gsize            len;

  g_assert_true (g_file_get_contents (path, &text, &len, NULL));
  if (skip_comments)
    {
      /* CSV tables: the "# command:" line names the options, which differ */
      GString *s = g_string_new (NULL);
      g_auto (GStrv) lines = g_strsplit (text, "\n", -1);

      for (guint i = 0; lines[i] != NULL; i++)
        if (!g_str_has_prefix (lines[i], "# command"))
          g_string_append_printf (s, "%s\n", lines[i]);
      return g_string_free_to_bytes (s);
    }
  return g_bytes_new (text, len);
}

/* `rpe ARGS... CONTENT... -o OUT` twice, once with the capture and once with the .npy files: both
 * succeed and write the same bytes.  VALUES_ONLY: both take the capture's queries and keys (the
 * commands that take no --queries), the values from the capture or from the .npy. */
enum
{
  QK,
  QKV,
  VALUES_ONLY
};

static void
same_output (const Files *f, const char *const *args, int mode, const char *ext)
{
  g_autofree char *a_name = g_strconcat ("a.", ext, NULL), *b_name = g_strconcat ("b.", ext, NULL);
  g_autofree char *a = rpe_test_tmp_path (a_name);
  g_autofree char *b = rpe_test_tmp_path (b_name);
  g_autoptr (GPtrArray) x = g_ptr_array_new ();
  g_autoptr (GPtrArray) y = g_ptr_array_new ();
  g_autoptr (GBytes) ba = NULL;
  g_autoptr (GBytes) bb = NULL;
  gboolean csv = g_str_equal (ext, "csv");

  g_remove (a);
  g_remove (b);
  for (guint i = 0; args[i] != NULL; i++)
    {
      g_ptr_array_add (x, (gpointer) args[i]);
      g_ptr_array_add (y, (gpointer) args[i]);
    }
  g_ptr_array_add (x, "--content");
  g_ptr_array_add (x, f->capture);
  /* --layer: the capture's layer, and the checkpoint's gate of that layer */
  g_ptr_array_add (x, "--layer");
  g_ptr_array_add (x, "1");
  g_ptr_array_add (y, "--layer");
  g_ptr_array_add (y, "1");
  g_ptr_array_add (y, mode == VALUES_ONLY ? "--content" : "--queries");
  g_ptr_array_add (y, mode == VALUES_ONLY ? f->capture : f->q);
  if (mode != VALUES_ONLY)
    {
      g_ptr_array_add (y, "--keys");
      g_ptr_array_add (y, f->k);
    }
  if (mode != QK)
    {
      g_ptr_array_add (x, "--values");
      g_ptr_array_add (x, f->capture);
      g_ptr_array_add (y, "--values");
      g_ptr_array_add (y, f->v);
    }
  g_ptr_array_add (x, "-o");
  g_ptr_array_add (x, a);
  g_ptr_array_add (x, NULL);
  g_ptr_array_add (y, "-o");
  g_ptr_array_add (y, b);
  g_ptr_array_add (y, NULL);
  g_assert_cmpint (rpe_test_run_cli_argv ((const char *const *) x->pdata, NULL, NULL), ==, 0);
  g_assert_cmpint (rpe_test_run_cli_argv ((const char *const *) y->pdata, NULL, NULL), ==, 0);
  ba = file_bytes (a, csv);
  bb = file_bytes (b, csv);
  if (!g_bytes_equal (ba, bb))
    g_error ("rpe %s %s: the capture and the .npy files give different output", args[0], args[1]);
}

static void
test_same_as_npy (void)
{
  Files f = { 0 };
  /* the SPE commands: the checkpoint's layer 1 gate with the capture's layer 1 */
  const char *attention[] = { "compute", "attention", "--checkpoint", "demo:sine-spe", "--seed", "3", NULL };
  const char *exact[] = { "compute", "logits", "--exact", "--checkpoint", "demo:conv-spe", NULL };
  const char *encode[] = { "compute", "encode", "--checkpoint", "demo:sine-spe", "--realizations", "8", NULL };
  const char *linear[] = { "compute", "linear", "--checkpoint", "demo:conv-spe", NULL };
  const char *rpe_logits[] = { "compute", "rpe-logits", "--checkpoint", "demo:sine-spe", NULL };
  const char *lrpe_enc[] = { "compute", "lrpe-encode", NULL };
  const char *lrpe_lin[] = { "compute", "lrpe-linear", "--lrpe-theta", "b", NULL };
  const char *fastrpb[] = { "compute", "fastrpb",      "--bias-layout", "full",     "--fastrpb-attention",
                            "softmax", "--checkpoint", "demo:fastrpb",  "--prefix", "layers.1.positional_bias",
                            NULL };
  const char *ex_att[] = { "export", "attention", "--checkpoint", "demo:sine-spe", "--exact", "--head", "2", NULL };
  const char *ex_cmp[] = { "export", "spe-vs-rpe", "--checkpoint", "demo:sine-spe", "--realizations", "16", NULL };
  const char *ex_out[] = { "export", "outputs", "--checkpoint", "demo:sine-spe", "--head", "1", NULL };
  const char *oe[] = { "curves", "output-error", "--checkpoint", "demo:conv-spe", "--realizations-list", "4,16", NULL };

  make_files (&f);
  same_output (&f, attention, QK, "npy");
  same_output (&f, exact, QK, "npy");
  same_output (&f, encode, QK, "npy");
  same_output (&f, linear, QKV, "npy");
  same_output (&f, rpe_logits, QK, "npy");
  same_output (&f, lrpe_enc, QK, "npy");
  same_output (&f, lrpe_lin, QKV, "npy");
  same_output (&f, fastrpb, QKV, "npy");
  same_output (&f, ex_att, QK, "png");
  same_output (&f, ex_cmp, QK, "npy");
  same_output (&f, ex_out, VALUES_ONLY, "npy");
  same_output (&f, oe, VALUES_ONLY, "csv");
  files_clear (&f);
}

static void
test_layer_matters (void)
{
  /* layers 0 and 1 of the capture hold different arrays: their exact logits differ, and the
   * capture's N (24) is the output's */
  Files            f = { 0 };
  g_autofree char *a = rpe_test_tmp_path ("l0.npy");
  g_autofree char *b = rpe_test_tmp_path ("l1.npy");
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeTensor) ta = NULL;
  g_autoptr (RpeTensor) tb = NULL;
  double diff = 0;

  make_files (&f);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL,
                                     "compute logits --exact --checkpoint demo:sine-spe --content '%s' "
                                     "--layer 0 -o '%s'",
                                     f.capture, a),
                   ==, 0);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL,
                                     "compute logits --exact --checkpoint demo:sine-spe --content '%s' "
                                     "--layer 1 -o '%s'",
                                     f.capture, b),
                   ==, 0);
  ta = rpe_npy_read (a, &error);
  tb = rpe_npy_read (b, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (ta->shape[0], ==, H);
  g_assert_cmpuint (ta->shape[1], ==, N);
  for (gsize i = 0; i < ta->n_elements; i++)
    diff = MAX (diff, fabs (ta->data[i] - tb->data[i]));
  g_assert_cmpfloat (diff, >, 0.01);
  files_clear (&f);
}

/* `rpe ARGS` exits 2 with `needle` (and `needle2`) in its message and writes no OUT. */
static void
refused (const char *out, const char *needle, const char *needle2, const char *format, ...)
{
  g_autofree char *args = NULL, *err = NULL;
  va_list          ap;
  int              rc;

  va_start (ap, format);
  args = g_strdup_vprintf (format, ap);
  va_end (ap);
  g_remove (out);
  rc = rpe_test_run_cli (NULL, &err, "%s -o '%s'", args, out);
  if (rc != 2 || strstr (err, needle) == NULL || (needle2 != NULL && strstr (err, needle2) == NULL))
    g_error ("rpe %s: exit %d, message '%s' (wanted exit 2 and '%s'%s%s)", args, rc, err, needle,
             needle2 != NULL ? ", " : "", needle2 != NULL ? needle2 : "");
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
}

static void
test_refusals (void)
{
  Files            f = { 0 };
  g_autofree char *other = rpe_test_tmp_path ("other.npz");
  g_autofree char *nan_path = rpe_test_tmp_path ("nan.npz");
  g_autofree char *out = rpe_test_tmp_path ("x.npy");
  g_autofree char *png = rpe_test_tmp_path ("x.png");
  g_autofree char *csv = rpe_test_tmp_path ("x.csv");
  g_autofree char *session = rpe_test_tmp_path ("x.rpe-session");

  make_files (&f);
  /* a capture of another model: H = 2 heads of D = 8 features against the demo's 4 x 16 */
  rpe_test_write_capture (other, 1, N, 2, 8, 0, 5, NULL, NULL, NULL);
  refused (out, "(24, 2, 8)", "H = 4", "compute logits --exact --checkpoint demo:sine-spe --content '%s'", other);
  refused (png, "(24, 2, 8)", "D = 16", "export attention --checkpoint demo:conv-spe --content '%s'", other);
  /* a layer it does not have */
  refused (out, "no layer 5", "0, 1", "compute lrpe-encode --content '%s' --layer 5", f.capture);
  /* NaN: a hostile file is refused whole */
  {
    gsize shape[3] = { 3, H, D };
    float q[3 * H * D] = { 0 };
    g_autoptr (GByteArray) a = NULL;
    g_autoptr (GByteArray) b = NULL;
    g_autoptr (GByteArray) z = NULL;
    const char *names[2] = { "layers.0.queries.npy", "layers.0.keys.npy" };
    GByteArray *data[2];

    q[7] = NAN;
    a = rpe_test_npy_bytes ("<f4", 3, shape, q, sizeof q);
    q[7] = 0.0f;
    b = rpe_test_npy_bytes ("<f4", 3, shape, q, sizeof q);
    data[0] = a;
    data[1] = b;
    z = rpe_test_zip_bytes (names, data, 2, TRUE);
    g_assert_true (g_file_set_contents (nan_path, (const char *) z->data, z->len, NULL));
  }
  refused (out, "not finite", "layers.0.queries", "compute attention --checkpoint demo:sine-spe --content '%s'",
           nan_path);
  /* content twice, values without their capture */
  refused (out, "give one", NULL, "compute encode --checkpoint demo:sine-spe --content '%s' --queries '%s'", f.capture,
           f.q);
  refused (out, "--content", NULL, "compute linear --checkpoint demo:sine-spe --values '%s'", f.capture);
  /* the commands that take no capture say so */
  refused (csv, "one content vector", NULL, "curves profile --checkpoint demo:sine-spe --models sine --content '%s'",
           f.capture);
  refused (png, "templates do not depend", NULL,
           "export compare-templates --checkpoint demo:sine-spe --b-head 1 --content '%s'", f.capture);
  refused (png, "captured --content", NULL,
           "export attention --checkpoint demo:sine-spe --attention-method lrpe "
           "--content '%s'",
           f.capture);
  g_remove (session);
  refused (png, "captured --content", NULL,
           "export attention --checkpoint demo:sine-spe --content '%s' "
           "--save-session '%s'",
           f.capture, session);
  g_assert_false (g_file_test (session, G_FILE_TEST_EXISTS));
  /* an unknown word is still an error */
  refused (out, "unit, random or a capture", NULL, "compute attention --content uniform");
  files_clear (&f);
}

/* A capture of the members names[i] = data[i] (stored, not deflated) at `path`. */
static void
write_members (const char *path, const char *const *names, GByteArray *const *data, gsize n)
{
  g_autoptr (GByteArray) z = rpe_test_zip_bytes (names, data, n, FALSE);

  g_assert_true (g_file_set_contents (path, (const char *) z->data, z->len, NULL));
}

/* `rpe ARGS -o out` with a file already at `out`: a non-zero exit, the message holds `needle`,
 * and the file is exactly as it was (nothing computed is written over it). */
static void
refused_keeps (const char *out, const char *needle, const char *format, ...)
{
  static const char before[] = "an earlier result that must survive";
  g_autofree char  *args = NULL, *err = NULL, *after = NULL;
  gsize             len = 0;
  va_list           ap;
  int               rc;

  va_start (ap, format);
  args = g_strdup_vprintf (format, ap);
  va_end (ap);
  g_assert_true (g_file_set_contents (out, before, -1, NULL));
  rc = rpe_test_run_cli (NULL, &err, "%s --force -o '%s'", args, out);
  if (rc == 0 || strstr (err, needle) == NULL)
    g_error ("rpe %s: exit %d, message '%s' (wanted a non-zero exit and '%s')", args, rc, err, needle);
  g_assert_true (g_file_get_contents (out, &after, &len, NULL));
  g_assert_cmpstr (after, ==, before);
  g_remove (out);
}

static void
test_hostile_files (void)
{
  /* files a reader must refuse whole, each against an existing output that must stay as it was */
  g_autofree char  *path = rpe_test_tmp_path ("hostile.npz");
  g_autofree char  *out = rpe_test_tmp_path ("kept.npy");
  g_autofree char  *png = rpe_test_tmp_path ("kept.png");
  const char       *qk[3] = { "layers.0.queries.npy", "layers.0.keys.npy", "tokens.npy" };
  g_autofree float *ones = g_new0 (float, N *H *D);
  GByteArray       *data[3] = { NULL, NULL, NULL };

  for (gsize i = 0; i < N * H * D; i++)
    ones[i] = 1.0f;

  /* 0 rows */
  {
    gsize shape[3] = { 0, H, D };

    data[0] = rpe_test_npy_bytes ("<f4", 3, shape, NULL, 0);
    data[1] = rpe_test_npy_bytes ("<f4", 3, shape, NULL, 0);
    write_members (path, qk, data, 2);
    g_byte_array_unref (data[0]);
    g_byte_array_unref (data[1]);
    refused_keeps (out, "layers.0.queries", "compute logits --exact --checkpoint demo:sine-spe --content '%s'", path);
    refused_keeps (png, "layers.0.queries", "export attention --checkpoint demo:sine-spe --content '%s'", path);
  }
  /* a huge N in the header (2^40 rows of 4 x 16) over a few bytes of data: refused from the
   * header, before anything of that size is allocated */
  {
    gsize shape[3] = { (gsize) 1 << 40, H, D };

    data[0] = rpe_test_npy_bytes ("<f4", 3, shape, ones, N * H * D * sizeof (float));
    data[1] = rpe_test_npy_bytes ("<f4", 3, shape, ones, N * H * D * sizeof (float));
    write_members (path, qk, data, 2);
    g_byte_array_unref (data[0]);
    g_byte_array_unref (data[1]);
    refused_keeps (out, "layers.0.queries", "compute attention --checkpoint demo:sine-spe --content '%s'", path);
  }
  /* tokens of the wrong length: 5 tokens for N = 24 */
  {
    gsize  shape[3] = { N, H, D }, nt = 5;
    gint64 tokens[5] = { 1, 2, 3, 4, 5 };

    data[0] = rpe_test_npy_bytes ("<f4", 3, shape, ones, N * H * D * sizeof (float));
    data[1] = rpe_test_npy_bytes ("<f4", 3, shape, ones, N * H * D * sizeof (float));
    data[2] = rpe_test_npy_bytes ("<i8", 1, &nt, tokens, sizeof tokens);
    write_members (path, qk, data, 3);
    for (guint i = 0; i < 3; i++)
      g_byte_array_unref (data[i]);
    refused_keeps (out, "tokens (5)", "compute logits --exact --checkpoint demo:conv-spe --content '%s'", path);
    refused_keeps (out, "tokens (5)", "compute lrpe-attention --checkpoint demo:lrpe --content '%s'", path);
  }
  /* queries and keys that disagree: both shapes named */
  {
    gsize qs[3] = { N, H, D }, ks[3] = { N - 1, H, D };

    data[0] = rpe_test_npy_bytes ("<f4", 3, qs, ones, N * H * D * sizeof (float));
    data[1] = rpe_test_npy_bytes ("<f4", 3, ks, ones, (N - 1) * H * D * sizeof (float));
    write_members (path, qk, data, 2);
    g_byte_array_unref (data[0]);
    g_byte_array_unref (data[1]);
    refused_keeps (out, "(23, 4, 16)", "compute logits --exact --checkpoint demo:sine-spe --content '%s'", path);
    refused_keeps (out, "(24, 4, 16)",
                   "compute fastrpb --checkpoint demo:fastrpb --prefix layers.0.positional_bias "
                   "--content '%s'",
                   path);
  }
  /* a capture from another model (2 heads of 8 features), and a layer the module has and the
   * capture lacks */
  {
    g_autofree char *other = rpe_test_tmp_path ("other-model.npz");

    rpe_test_write_capture (other, 2, N, 2, 8, 0, 9, NULL, NULL, NULL);
    refused_keeps (out, "(24, 2, 8)", "compute logits --exact --checkpoint demo:conv-spe --content '%s' --layer 1",
                   other);
    /* the module has layer 1 (its gate), the capture only layer 0 */
    rpe_test_write_capture (other, 1, N, H, D, 0, 9, NULL, NULL, NULL);
    refused_keeps (out, "no layer 1", "compute attention --checkpoint demo:conv-spe --content '%s' --layer 1", other);
    g_remove (other);
  }
  g_remove (path);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cli/capture/same-as-npy", test_same_as_npy);
  g_test_add_func ("/cli/capture/layer", test_layer_matters);
  g_test_add_func ("/cli/capture/refusals", test_refusals);
  g_test_add_func ("/cli/capture/hostile-files", test_hostile_files);
  return g_test_run ();
}

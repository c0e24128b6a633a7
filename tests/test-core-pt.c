#include "config.h"

#include <string.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "rpe-alloc.h"
#include "rpe-checkpoint.h"
#include "rpe-error.h"
#include "rpe-npy.h"
#include "rpe-pickle.h"
#include "rpe-pt.h"
#include "rpe-test-utils.h"

static char *
fixture (const char *name)
{
  return g_test_build_filename (G_TEST_DIST, "fixtures", name, NULL);
}

static void
check_error (const GError *error,
             RpeStatus     code,
             const char   *needle1,
             const char   *needle2)
{
  g_assert_nonnull (error);
  if (!g_error_matches (error, RPE_ERROR, (int) code))
    g_error ("expected code %d, got %d: %s", (int) code, error->code, error->message);
  if (needle1 != NULL && strstr (error->message, needle1) == NULL)
    g_error ("message '%s' lacks '%s'", error->message, needle1);
  if (needle2 != NULL && strstr (error->message, needle2) == NULL)
    g_error ("message '%s' lacks '%s'", error->message, needle2);
}

/* Reads fixtures/<stem>.pt and compares every tensor with fixtures/<stem>/<name>.npy
 * (written by numpy from the same torch tensors, read by the .npy reader).  The
 * sets of names must be equal. */
static RpeTensorSet *
check_against_npy (const char *stem)
{
  g_autofree char *file = g_strconcat (stem, ".pt", NULL);
  g_autofree char *path = fixture (file);
  g_autofree char *dir = fixture (stem);
  g_autoptr (GError) error = NULL;
  RpeTensorSet *set = rpe_pt_read (path, &error);
  g_autoptr (GDir) d = NULL;
  const char *entry;
  gsize n_npy = 0;

  g_assert_no_error (error);
  g_assert_nonnull (set);
  d = g_dir_open (dir, 0, &error);
  g_assert_no_error (error);
  while ((entry = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *np = g_build_filename (dir, entry, NULL);
      g_autofree char *tname = g_strndup (entry, strlen (entry) - 4);
      g_autoptr (RpeTensor) ref = NULL;
      const RpeTensor *t;

      if (!g_str_has_suffix (entry, ".npy"))
        continue;
      n_npy++;
      ref = rpe_npy_read (np, &error);
      g_assert_no_error (error);
      t = rpe_tensor_set_lookup (set, tname);
      if (t == NULL)
        g_error ("%s: tensor '%s' missing", stem, tname);
      if (t->ndim != ref->ndim)
        g_error ("%s: tensor %s: ndim %" G_GSIZE_FORMAT " vs %" G_GSIZE_FORMAT, stem, tname, t->ndim, ref->ndim);
      for (gsize k = 0; k < t->ndim; k++)
        g_assert_cmpuint (t->shape[k], ==, ref->shape[k]);
      g_assert_cmpuint (t->n_elements, ==, ref->n_elements);
      if (t->n_elements > 0)
        g_assert_cmpmem (t->data, t->n_elements * 4, ref->data, ref->n_elements * 4);
    }
  {
    gsize n_float = 0;   /* integer tensors (read since issue 10) have no .npy twin here */

    for (gsize i = 0; i < rpe_tensor_set_size (set); i++)
      if (rpe_tensor_set_get (set, i)->dtype != RPE_DTYPE_I64)
        n_float++;
    g_assert_cmpuint (n_npy, ==, n_float);
  }
  return set;
}

static void
test_fixtures (void)
{
  g_autoptr (RpeTensorSet) sine = check_against_npy ("sine");
  g_autoptr (RpeTensorSet) conv = check_against_npy ("conv");
  g_autoptr (RpeTensorSet) dt = check_against_npy ("dtypes");
  g_autoptr (RpeTensorSet) st = check_against_npy ("strided");
  g_autoptr (RpeTensorSet) nested = check_against_npy ("nested");
  const RpeTensor *t, *base;

  /* state_dict order is file order */
  g_assert_cmpstr (rpe_tensor_set_get (sine, 0)->name, ==, "layers.spe.freqs");
  g_assert_cmpstr (rpe_tensor_set_get (sine, 3)->name, ==, "layers.spe_filters.0.gate");
  g_assert_cmpuint (rpe_tensor_set_get (sine, 0)->shape[2], ==, 4);

  /* dtypes and exact values from the IEEE layouts: float16(6e-8) is 2^-24,
   * float16(1/3) = 1365/4096, bfloat16(1/3) = 171/512 */
  t = rpe_tensor_set_lookup (dt, "half");
  g_assert_cmpint (t->dtype, ==, RPE_DTYPE_F16);
  g_assert_cmpfloat (t->data[2], ==, 65504.0f);
  g_assert_cmpfloat (t->data[3], ==, 0x1p-24f);
  g_assert_cmpfloat (t->data[5], ==, 1365.0f / 4096.0f);
  t = rpe_tensor_set_lookup (dt, "bf16");
  g_assert_cmpint (t->dtype, ==, RPE_DTYPE_BF16);
  g_assert_cmpfloat (t->data[1], ==, -2.5f);
  g_assert_cmpfloat (t->data[5], ==, 171.0f / 512.0f);
  g_assert_cmpint (rpe_tensor_set_lookup (dt, "double")->dtype, ==, RPE_DTYPE_F64);
  t = rpe_tensor_set_lookup (dt, "scalar");
  g_assert_cmpuint (t->ndim, ==, 0);
  g_assert_cmpfloat (t->data[0], ==, 1.5f);
  g_assert_cmpuint (rpe_tensor_set_lookup (dt, "empty")->n_elements, ==, 0);
  t = rpe_tensor_set_lookup (dt, "steps");   /* int64 (e.g. LRPE's permutation buffer): read as float */
  g_assert_nonnull (t);
  g_assert_cmpint (t->dtype, ==, RPE_DTYPE_I64);
  g_assert_cmpuint (t->n_elements, ==, 5);
  for (gsize i = 0; i < 5; i++)
    g_assert_cmpfloat (t->data[i], ==, (float) i);   /* torch.arange (5) */

  /* strided views against index arithmetic on base = arange(24).reshape(4, 6) * 0.5 - 3 */
  base = rpe_tensor_set_lookup (st, "base");
  for (gsize i = 0; i < 24; i++)
    g_assert_cmpfloat (base->data[i], ==, (float) (i * 0.5 - 3.0));
  t = rpe_tensor_set_lookup (st, "transposed");
  g_assert_cmpuint (t->shape[0], ==, 6);
  for (gsize i = 0; i < 6; i++)
    for (gsize j = 0; j < 4; j++)
      g_assert_cmpfloat (t->data[i * 4 + j], ==, base->data[j * 6 + i]);
  t = rpe_tensor_set_lookup (st, "slice");   /* base[1:, 2::2] */
  g_assert_cmpuint (t->shape[0], ==, 3);
  g_assert_cmpuint (t->shape[1], ==, 2);
  for (gsize i = 0; i < 3; i++)
    for (gsize j = 0; j < 2; j++)
      g_assert_cmpfloat (t->data[i * 2 + j], ==, base->data[(i + 1) * 6 + 2 + 2 * j]);

  /* nested dicts are flattened with '.', non-tensors skipped */
  g_assert_cmpuint (rpe_tensor_set_size (nested), ==, 3);
  g_assert_nonnull (rpe_tensor_set_lookup (nested, "opt.state.0.exp_avg"));
}

/* rpe_checkpoint_read recognises .pt and maps the SPE modules */
static void
test_checkpoint (void)
{
  static const char *const files[] = { "sine.pt", "conv.pt" };

  for (gsize f = 0; f < G_N_ELEMENTS (files); f++)
    {
      g_autofree char *path = fixture (files[f]);
      g_autoptr (GError) error = NULL;
      g_autoptr (RpeTensorSet) set = rpe_checkpoint_read (path, &error);
      g_autoptr (GPtrArray) mods = NULL;
      const RpeSpeModuleInfo *info;
      RpeSpeParams params;

      g_assert_no_error (error);
      mods = rpe_checkpoint_find_modules (set);
      g_assert_cmpuint (mods->len, ==, 1);
      info = g_ptr_array_index (mods, 0);
      g_assert_cmpstr (info->prefix, ==, "layers");
      g_assert_cmpint (info->method, ==, f == 0 ? RPE_SPE_SINE : RPE_SPE_CONV);
      g_assert_cmpuint (info->n_heads, ==, 2);
      g_assert_cmpuint (info->n_features, ==, f == 0 ? 3 : 2);
      g_assert_cmpuint (info->size, ==, f == 0 ? 4 : 5);
      g_assert_cmpuint (info->layers->len, ==, 2);
      g_assert_true (rpe_checkpoint_load_spe (set, NULL, 1, &params, &error));
      g_assert_no_error (error);
      rpe_spe_params_clear (&params);
    }
}

/* The malicious fixtures are refused by name, and nothing runs. */
static void
test_malicious (void)
{
  g_autofree char *cwd = g_get_current_dir ();
  g_autofree char *sys_pt = fixture ("evil-system.pt");
  g_autofree char *eval_pt = fixture ("evil-eval.pt");
  g_autofree char *plain = fixture ("evil-plain.pkl");
  g_autofree char *legacy = fixture ("legacy.pt");
  g_autoptr (GError) error = NULL;

  /* the payloads `touch` a file in the current directory */
  g_assert_cmpint (chdir (rpe_test_tmpdir ()), ==, 0);

  g_assert_null (rpe_pt_read (sys_pt, &error));
  check_error (error, RPE_ERROR_UNSUPPORTED, "posix.system", "evil-system.pt");
  g_clear_error (&error);
  g_assert_null (rpe_checkpoint_read (sys_pt, &error));
  check_error (error, RPE_ERROR_UNSUPPORTED, "posix.system", "not allowed");
  g_clear_error (&error);

  g_assert_null (rpe_checkpoint_read (eval_pt, &error));
  check_error (error, RPE_ERROR_UNSUPPORTED, "builtins.eval", "not allowed");
  g_clear_error (&error);

  g_assert_null (rpe_checkpoint_read (plain, &error));
  check_error (error, RPE_ERROR_UNSUPPORTED, "legacy", "_use_new_zipfile_serialization=True");
  g_clear_error (&error);
  g_assert_null (rpe_pt_read (plain, &error));
  check_error (error, RPE_ERROR_UNSUPPORTED, "legacy", NULL);
  g_clear_error (&error);
  g_assert_null (rpe_checkpoint_read (legacy, &error));
  check_error (error, RPE_ERROR_UNSUPPORTED, "legacy", "_use_new_zipfile_serialization=True");
  g_clear_error (&error);

  g_assert_false (g_file_test ("rpe-pwned-system", G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test ("rpe-pwned-eval", G_FILE_TEST_EXISTS));
  g_assert_cmpint (chdir (cwd), ==, 0);
}

/* ---- hand-made pickles ------------------------------------------------- */

/* protocol 2: {'w': _rebuild_tensor_v2(('storage', FloatStorage, '0', 'cpu', numel),
 *                                       offset, (rows, cols), (s0, s1), False, OrderedDict())} */
static GByteArray *
tensor_pickle (guint numel,
               guint offset,
               guint rows,
               guint cols,
               guint s0,
               guint s1)
{
  GByteArray *b = g_byte_array_new ();
  guint8 nums[] = { 'K', (guint8) offset, 'K', (guint8) rows, 'K', (guint8) cols, 0x86,
                    'K', (guint8) s0, 'K', (guint8) s1, 0x86, 0x89 };

#define APPEND_S(s) g_byte_array_append (b, (const guint8 *) (s), sizeof (s) - 1)
  APPEND_S ("\x80\x02}(X\x01\x00\x00\x00w");
  APPEND_S ("ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\n"
            "X\x01\x00\x00\x00" "0X\x03\x00\x00\x00" "cpuM");
  {
    guint8 n[2] = { (guint8) numel, (guint8) (numel >> 8) };
    g_byte_array_append (b, n, 2);
  }
  APPEND_S ("tQ");
  g_byte_array_append (b, nums, sizeof nums);
  APPEND_S ("ccollections\nOrderedDict\n)RtRu.");
#undef APPEND_S
  return b;
}

static void
expect_pickle_error (const guint8 *data,
                     gsize         len,
                     RpeStatus     code,
                     const char   *needle)
{
  g_autoptr (GError) error = NULL;
  GPtrArray *refs = rpe_pickle_read_state_dict (data, len, "t.pkl", &error);

  g_assert_null (refs);
  check_error (error, code, "t.pkl", needle);
}

#define EXPECT_PICKLE(lit, code, needle) \
  expect_pickle_error ((const guint8 *) (lit), sizeof (lit) - 1, code, needle)

static void
test_pickle (void)
{
  g_autoptr (GError) error = NULL;

  /* a good one: (3, 2) with strides (1, 3) at offset 2 in a 12-element storage */
  {
    g_autoptr (GByteArray) p = tensor_pickle (12, 2, 3, 2, 1, 3);
    g_autoptr (GPtrArray) refs = rpe_pickle_read_state_dict (p->data, p->len, "t.pkl", &error);
    const RpePickleTensor *t;

    g_assert_no_error (error);
    g_assert_cmpuint (refs->len, ==, 1);
    t = g_ptr_array_index (refs, 0);
    g_assert_cmpstr (t->name, ==, "w");
    g_assert_cmpstr (t->storage_key, ==, "0");
    g_assert_cmpuint (t->storage_numel, ==, 12);
    g_assert_cmpuint (t->offset, ==, 2);
    g_assert_cmpuint (t->ndim, ==, 2);
    g_assert_cmpuint (t->shape[0], ==, 3);
    g_assert_cmpuint (t->stride[1], ==, 3);
    g_assert_cmpint (t->dtype, ==, RPE_DTYPE_F32);
  }
  /* the extent 2 + 2*1 + 1*3 = 7 must be < numel: 7 fails, 8 passes */
  {
    g_autoptr (GByteArray) p = tensor_pickle (7, 2, 3, 2, 1, 3);
    expect_pickle_error (p->data, p->len, RPE_ERROR_FORMAT, "reaches element 7");
  }
  {
    g_autoptr (GByteArray) p = tensor_pickle (8, 2, 3, 2, 1, 3);
    g_autoptr (GPtrArray) refs = rpe_pickle_read_state_dict (p->data, p->len, "t.pkl", &error);
    g_assert_no_error (error);
  }

  /* forbidden globals, by GLOBAL and STACK_GLOBAL; calling a storage type */
  EXPECT_PICKLE ("\x80\x02\x63os\nsystem\n.", RPE_ERROR_UNSUPPORTED, "'os.system'");
  EXPECT_PICKLE ("\x80\x04\x8c\x08\x62uiltins\x8c\x07getattr\x93.", RPE_ERROR_UNSUPPORTED, "'builtins.getattr'");
  EXPECT_PICKLE ("\x80\x02\x63torch\nFloatStorage\n)R.", RPE_ERROR_UNSUPPORTED, "torch.FloatStorage");
  EXPECT_PICKLE ("\x80\x02\x63torch._utils\n_rebuild_tensor\n.", RPE_ERROR_UNSUPPORTED, "torch._utils._rebuild_tensor'");
  /* forbidden opcodes, by name */
  {
    static const struct { const char *p; gsize n; const char *name; } ops[] = {
#define OP(lit, name) { lit, sizeof (lit) - 1, name }
      OP ("\x80\x02}\x81.", "NEWOBJ"),
      OP ("\x80\x02(i__main__\nX\n.", "INST"),
      OP ("\x80\x02(o.", "OBJ"),
      OP ("\x80\x02\x82\x01.", "EXT1"),
      OP ("\x80\x02\x83\x01\x00.", "EXT2"),
      OP ("\x80\x02\x84\x01\x00\x00\x00.", "EXT4"),
      OP ("\x80\x02P0\n.", "PERSID"),
      OP ("\x80\x02\x8b\x01\x00\x00\x00\x01.", "LONG4"),
      OP ("\x80\x02}0.", "POP"),
      OP ("\x80\x04\x92.", "NEWOBJ_EX"),
    };
    for (gsize i = 0; i < G_N_ELEMENTS (ops); i++)
      expect_pickle_error ((const guint8 *) ops[i].p, ops[i].n, RPE_ERROR_UNSUPPORTED, ops[i].name);
  }
  EXPECT_PICKLE ("\x80\x02\xff.", RPE_ERROR_FORMAT, "0xff");
  /* malformed: underflow, no STOP, unset memo, not a dict, BUILD on a list */
  EXPECT_PICKLE ("\x80\x02.", RPE_ERROR_FORMAT, "underflow");
  EXPECT_PICKLE ("\x80\x02}", RPE_ERROR_FORMAT, "STOP");
  EXPECT_PICKLE ("\x80\x02h\x05.", RPE_ERROR_FORMAT, "memo");
  EXPECT_PICKLE ("\x80\x02].", RPE_ERROR_UNSUPPORTED, "state_dict");
  EXPECT_PICKLE ("\x80\x02]}b.", RPE_ERROR_UNSUPPORTED, "BUILD");
  /* a string longer than the limit */
  EXPECT_PICKLE ("\x80\x02X\x00\x00\x00\x10.", RPE_ERROR_UNSUPPORTED, "limit");
  /* a dict that contains itself: bounded, not an endless loop */
  EXPECT_PICKLE ("\x80\x02}q\x00X\x01\x00\x00\x00kh\x00s.", RPE_ERROR_UNSUPPORTED, "nested");
  /* deep nesting of 40 dicts */
  {
    g_autoptr (GByteArray) p = g_byte_array_new ();

    g_byte_array_append (p, (const guint8 *) "\x80\x02", 2);
    for (int i = 0; i < 40; i++)
      g_byte_array_append (p, (const guint8 *) "}X\x01\x00\x00\x00k", 7);
    g_byte_array_append (p, (const guint8 *) "}", 1);
    for (int i = 0; i < 40; i++)
      g_byte_array_append (p, (const guint8 *) "s", 1);
    g_byte_array_append (p, (const guint8 *) ".", 1);
    expect_pickle_error (p->data, p->len, RPE_ERROR_UNSUPPORTED, "nested");
  }
  /* "billion laughs": level k holds level k-1 twice (through the memo), so
   * flattening 30 levels would visit 2^31 entries; the visit bound stops it */
  {
    g_autoptr (GByteArray) p = g_byte_array_new ();

    g_byte_array_append (p, (const guint8 *) "\x80\x02}X\x01\x00\x00\x00" "aNsq\x00", 13);
    for (guint8 k = 1; k <= 30; k++)
      {
        guint8 level[] = { '}', 'X', 1, 0, 0, 0, 'a', 'h', (guint8) (k - 1), 's',
                           'X', 1, 0, 0, 0, 'b', 'h', (guint8) (k - 1), 's', 'q', k };
        g_byte_array_append (p, level, sizeof level);
      }
    g_byte_array_append (p, (const guint8 *) ".", 1);
    expect_pickle_error (p->data, p->len, RPE_ERROR_UNSUPPORTED, "more than");
  }
  /* a stack that grows without bound */
  {
    g_autoptr (GByteArray) p = g_byte_array_new ();

    g_byte_array_append (p, (const guint8 *) "\x80\x02", 2);
    for (guint i = 0; i < RPE_PICKLE_MAX_STACK + 10; i++)
      g_byte_array_append (p, (const guint8 *) "N", 1);
    g_byte_array_append (p, (const guint8 *) ".", 1);
    expect_pickle_error (p->data, p->len, RPE_ERROR_UNSUPPORTED, "stack");
  }
}

/* Truncations and byte flips of a good pickle never crash. */
static void
test_pickle_mutations (void)
{
  g_autoptr (GByteArray) p = tensor_pickle (12, 2, 3, 2, 1, 3);

  for (gsize cut = 0; cut < p->len; cut++)
    {
      g_autoptr (GError) error = NULL;
      g_autofree guint8 *copy = g_memdup2 (p->data, cut);
      GPtrArray *refs = rpe_pickle_read_state_dict (copy, cut, "t.pkl", &error);

      g_assert_null (refs);
      g_assert_nonnull (error);
    }
  for (gsize i = 0; i < p->len; i++)
    for (guint v = 0; v < 256; v += 7)
      {
        g_autoptr (GError) error = NULL;
        g_autofree guint8 *copy = g_memdup2 (p->data, p->len);
        GPtrArray *refs;

        copy[i] = (guint8) v;
        refs = rpe_pickle_read_state_dict (copy, p->len, "t.pkl", &error);
        g_assert_true ((refs == NULL) == (error != NULL));
        if (refs != NULL)
          g_ptr_array_unref (refs);
      }
}

/* Truncations and byte flips of a real .pt never crash. */
static void
test_pt_mutations (void)
{
  g_autofree char *path = fixture ("strided.pt");
  g_autofree char *contents = NULL;
  gsize len;

  g_assert_true (g_file_get_contents (path, &contents, &len, NULL));
  for (gsize cut = 0; cut < len; cut += 3)
    {
      g_autoptr (GError) error = NULL;
      g_autofree guint8 *copy = g_memdup2 (contents, cut);
      RpeTensorSet *set = rpe_pt_read_bytes (copy, cut, "t.pt", &error);

      g_assert_null (set);
      g_assert_nonnull (error);
    }
  for (gsize i = 0; i < len; i++)
    {
      g_autoptr (GError) error = NULL;
      g_autofree guint8 *copy = g_memdup2 (contents, len);
      RpeTensorSet *set;

      copy[i] ^= 0x5a;
      set = rpe_pt_read_bytes (copy, len, "t.pt", &error);
      g_assert_true ((set == NULL) == (error != NULL));
      if (set != NULL)
        rpe_tensor_set_free (set);
    }
}

/* Every input under fixtures/regress/ (found by fuzzing or review) reads
 * cleanly: a result or an error, never both or neither (and no crash, leak or
 * hang under ASan/valgrind). */
static void
test_regress (void)
{
  g_autofree char *dir = fixture ("regress");
  g_autoptr (GError) error = NULL;
  g_autoptr (GDir) d = g_dir_open (dir, 0, &error);
  const char *entry;
  guint n = 0;

  g_assert_no_error (error);
  while ((entry = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, entry, NULL);
      g_autoptr (GError) e = NULL;
      RpeTensorSet *set = rpe_checkpoint_read (path, &e);

      g_test_message ("%s: %s", entry, e != NULL ? e->message : "read");
      g_assert_true ((set == NULL) == (e != NULL));
      if (set != NULL)
        rpe_tensor_set_free (set);
      if (strcmp (entry, "billion-laughs.pt") == 0)
        check_error (e, RPE_ERROR_UNSUPPORTED, "more than", NULL);
      n++;
    }
  g_assert_cmpuint (n, >=, 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/core/pt/fixtures", test_fixtures);
  g_test_add_func ("/core/pt/checkpoint", test_checkpoint);
  g_test_add_func ("/core/pt/malicious", test_malicious);
  g_test_add_func ("/core/pt/pickle", test_pickle);
  g_test_add_func ("/core/pt/pickle-mutations", test_pickle_mutations);
  g_test_add_func ("/core/pt/pt-mutations", test_pt_mutations);
  g_test_add_func ("/core/pt/regress", test_regress);
  return g_test_run ();
}

#include "config.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "rpe-alloc.h"
#include "rpe-error.h"
#include "rpe-npy.h"
#include "rpe-test-utils.h"

/* Builds a .npy file by hand, following the format spec: magic, version,
 * little-endian header length (u16 for 1.0, u32 for 2.0/3.0), header, data. */
static GByteArray *
make_npy (guint8      major,
          const char *header,
          const void *data,
          gsize       data_len)
{
  GByteArray *b = g_byte_array_new ();
  gsize hl = strlen (header);
  guint8 v[2] = { major, 0 };

  g_byte_array_append (b, (const guint8 *) "\x93NUMPY", 6);
  g_byte_array_append (b, v, 2);
  if (major == 1)
    {
      guint8 l[2] = { (guint8) (hl & 0xff), (guint8) (hl >> 8) };
      g_byte_array_append (b, l, 2);
    }
  else
    {
      guint8 l[4] = { (guint8) (hl & 0xff), (guint8) (hl >> 8), (guint8) (hl >> 16), (guint8) (hl >> 24) };
      g_byte_array_append (b, l, 4);
    }
  g_byte_array_append (b, (const guint8 *) header, (guint) hl);
  if (data_len > 0)
    g_byte_array_append (b, data, (guint) data_len);
  return b;
}

static void
put_le32 (guint8 *p, guint32 v)
{
  for (int i = 0; i < 4; i++)
    p[i] = (guint8) (v >> (8 * i));
}

static void
put_be32 (guint8 *p, guint32 v)
{
  for (int i = 0; i < 4; i++)
    p[i] = (guint8) (v >> (8 * (3 - i)));
}

static void
put_be64 (guint8 *p, guint64 v)
{
  for (int i = 0; i < 8; i++)
    p[i] = (guint8) (v >> (8 * (7 - i)));
}

static guint32
float_bits (float f)
{
  guint32 u;
  memcpy (&u, &f, 4);
  return u;
}

static RpeTensor *
read_npy (GByteArray *b,
          GError    **error)
{
  return rpe_npy_read_bytes (b->data, b->len, "test.npy", error);
}

/* Reads bytes that must fail with `code`; the message must name the file and
 * contain `needle` (if not NULL). */
static void
expect_error (GByteArray *b,
              RpeStatus   code,
              const char *needle)
{
  g_autoptr (GError) error = NULL;
  RpeTensor *t = read_npy (b, &error);

  g_assert_null (t);
  g_assert_error (error, RPE_ERROR, (int) code);
  g_assert_nonnull (strstr (error->message, "test.npy"));
  if (needle != NULL && strstr (error->message, needle) == NULL)
    g_error ("message '%s' lacks '%s'", error->message, needle);
  g_byte_array_unref (b);
}

/* ---- round trips ------------------------------------------------------ */

static void
test_roundtrip_f32 (void)
{
  /* values covering signs, a subnormal, the largest float, -0 */
  const float values[6] = { 1.5f, -2.25f, 1e-40f, 3.4028235e38f, -0.0f, 0.1f };
  const gsize shape[2] = { 2, 3 };
  g_autofree char *path = rpe_test_tmp_path ("f32.npy");
  g_autoptr (GError) error = NULL;
  g_autofree char *contents = NULL;
  gsize length;
  RpeTensor *t;
  /* numpy's exact header for np.save of a float32 (2, 3) array (format 1.0):
   * the dict, padded with spaces so that 10 + len(header) == 128, then '\n' */
  char expected_header[118 + 1];
  const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";

  memset (expected_header, ' ', 118);
  memcpy (expected_header, dict, strlen (dict));
  expected_header[117] = '\n';
  expected_header[118] = '\0';

  g_assert_true (rpe_npy_write (path, values, 2, shape, FALSE, &error));
  g_assert_no_error (error);

  g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
  g_assert_cmpuint (length, ==, 128 + 24);
  g_assert_cmpmem (contents, 6, "\x93NUMPY", 6);
  g_assert_cmpint ((guint8) contents[6], ==, 1);
  g_assert_cmpint ((guint8) contents[7], ==, 0);
  g_assert_cmpint ((guint8) contents[8], ==, 118);
  g_assert_cmpint ((guint8) contents[9], ==, 0);
  g_assert_cmpmem (contents + 10, 118, expected_header, 118);
  for (int i = 0; i < 6; i++)
    {
      guint8 le[4];
      put_le32 (le, float_bits (values[i]));
      g_assert_cmpmem (contents + 128 + 4 * i, 4, le, 4);
    }

  t = rpe_npy_read (path, &error);
  g_assert_no_error (error);
  g_assert_nonnull (t);
  g_assert_cmpuint (t->ndim, ==, 2);
  g_assert_cmpuint (t->shape[0], ==, 2);
  g_assert_cmpuint (t->shape[1], ==, 3);
  g_assert_cmpuint (t->n_elements, ==, 6);
  g_assert_cmpint (t->dtype, ==, RPE_DTYPE_F32);
  for (int i = 0; i < 6; i++)
    g_assert_cmpuint (float_bits (t->data[i]), ==, float_bits (values[i]));
  rpe_tensor_free (t);
}

static void
test_roundtrip_f64 (void)
{
  const float values[5] = { 0.1f, -7.0f, 1e-30f, 65504.0f, 3.0f };
  const gsize shape[1] = { 5 };
  g_autofree char *path = rpe_test_tmp_path ("f64.npy");
  g_autoptr (GError) error = NULL;
  g_autofree char *contents = NULL;
  gsize length;
  RpeTensor *t;
  const char *dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (5,), }";

  g_assert_true (rpe_npy_write (path, values, 1, shape, TRUE, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
  /* header padded to 64 bytes in total (spec), data = 5 doubles */
  g_assert_cmpuint (length, ==, 128 + 40);
  g_assert_cmpmem (contents + 10, strlen (dict), dict, strlen (dict));
  g_assert_cmpint (contents[127], ==, '\n');
  for (int i = 0; i < 5; i++)
    {
      double d = values[i];
      guint64 bits;
      guint8 le[8];
      memcpy (&bits, &d, 8);
      for (int j = 0; j < 8; j++)
        le[j] = (guint8) (bits >> (8 * j));
      g_assert_cmpmem (contents + 128 + 8 * i, 8, le, 8);
    }

  t = rpe_npy_read (path, &error);
  g_assert_no_error (error);
  g_assert_cmpint (t->dtype, ==, RPE_DTYPE_F64);
  g_assert_cmpuint (t->ndim, ==, 1);
  g_assert_cmpuint (t->shape[0], ==, 5);
  for (int i = 0; i < 5; i++)
    g_assert_cmpuint (float_bits (t->data[i]), ==, float_bits (values[i]));
  rpe_tensor_free (t);
}

static void
test_versions (void)
{
  guint8 data[8];
  g_autoptr (GError) error = NULL;
  RpeTensor *t;
  GByteArray *b;

  put_le32 (data, float_bits (1.0f));
  put_le32 (data + 4, float_bits (-0.5f));
  for (guint8 major = 1; major <= 3; major++)
    {
      /* double quotes, other key order, trailing comma in the tuple, no padding */
      b = make_npy (major, "{\"shape\": (1, 2,), \"fortran_order\": False, \"descr\": \"<f4\"}\n", data, 8);
      t = read_npy (b, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (t->ndim, ==, 2);
      g_assert_cmpuint (t->shape[0], ==, 1);
      g_assert_cmpuint (t->shape[1], ==, 2);
      g_assert_cmpfloat (t->data[0], ==, 1.0f);
      g_assert_cmpfloat (t->data[1], ==, -0.5f);
      rpe_tensor_free (t);
      g_byte_array_unref (b);
    }
  /* version 4.0 does not exist */
  b = make_npy (1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", data, 8);
  b->data[6] = 4;
  expect_error (b, RPE_ERROR_UNSUPPORTED, "4.0");
}

static void
test_big_endian (void)
{
  guint8 d4[8], d8[16];
  g_autoptr (GError) error = NULL;
  RpeTensor *t;
  GByteArray *b;

  put_be32 (d4, 0x3FC00000u);     /* 1.5 */
  put_be32 (d4 + 4, 0xC0100000u); /* -2.25 */
  b = make_npy (1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }\n", d4, 8);
  t = read_npy (b, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (t->data[0], ==, 1.5f);
  g_assert_cmpfloat (t->data[1], ==, -2.25f);
  g_assert_cmpint (t->dtype, ==, RPE_DTYPE_F32);
  rpe_tensor_free (t);
  g_byte_array_unref (b);

  put_be64 (d8, G_GUINT64_CONSTANT (0x3FF8000000000000));      /* 1.5 */
  put_be64 (d8 + 8, G_GUINT64_CONSTANT (0xC02E000000000000));  /* -15 */
  b = make_npy (2, "{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }\n", d8, 16);
  t = read_npy (b, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (t->data[0], ==, 1.5f);
  g_assert_cmpfloat (t->data[1], ==, -15.0f);
  g_assert_cmpint (t->dtype, ==, RPE_DTYPE_F64);
  rpe_tensor_free (t);
  g_byte_array_unref (b);

  /* '=f4' is the native order (little-endian here) */
  b = make_npy (1, "{'descr': '=f4', 'fortran_order': False, 'shape': (1,), }\n", d4, 4);
  t = read_npy (b, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (float_bits (t->data[0]), ==, G_BYTE_ORDER == G_LITTLE_ENDIAN ? 0x0000C03Fu : 0x3FC00000u);
  rpe_tensor_free (t);
  g_byte_array_unref (b);

  /* '<f2' (half): 0x3C00 = 1, 0x0001 = 2^-24 (smallest subnormal), 0xFC00 = -inf */
  {
    guint8 h[6] = { 0x00, 0x3C, 0x01, 0x00, 0x00, 0xFC };
    b = make_npy (1, "{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }\n", h, 6);
    t = read_npy (b, &error);
    g_assert_no_error (error);
    g_assert_cmpfloat (t->data[0], ==, 1.0f);
    g_assert_cmpfloat (t->data[1], ==, 5.9604644775390625e-08f);
    g_assert_true (isinf (t->data[2]) && t->data[2] < 0);
    rpe_tensor_free (t);
    g_byte_array_unref (b);
  }
}

static void
test_shapes (void)
{
  guint8 data[4 * 12];
  g_autoptr (GError) error = NULL;
  RpeTensor *t;
  GByteArray *b;

  for (int i = 0; i < 12; i++)
    put_le32 (data + 4 * i, float_bits ((float) i));

  /* scalar */
  b = make_npy (1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }\n", data + 12, 4);
  t = read_npy (b, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (t->ndim, ==, 0);
  g_assert_cmpuint (t->n_elements, ==, 1);
  g_assert_cmpfloat (t->data[0], ==, 3.0f);
  rpe_tensor_free (t);
  g_byte_array_unref (b);

  /* 1-D with a trailing comma and an old Python 2 long suffix */
  b = make_npy (1, "{'descr': '<f4', 'fortran_order': False, 'shape': (12L,), }\n", data, 48);
  t = read_npy (b, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (t->ndim, ==, 1);
  g_assert_cmpuint (t->shape[0], ==, 12);
  for (int i = 0; i < 12; i++)
    g_assert_cmpfloat (t->data[i], ==, (float) i);
  rpe_tensor_free (t);
  g_byte_array_unref (b);

  /* 3-D, and an empty array */
  b = make_npy (1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 2), }\n", data, 48);
  t = read_npy (b, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (t->ndim, ==, 3);
  g_assert_cmpfloat (t->data[1 * 6 + 2 * 2 + 1], ==, 11.0f);
  rpe_tensor_free (t);
  g_byte_array_unref (b);

  b = make_npy (1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 5), }\n", NULL, 0);
  t = read_npy (b, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (t->n_elements, ==, 0);
  rpe_tensor_free (t);
  g_byte_array_unref (b);
}

/* ---- malformed files -------------------------------------------------- */

static void
test_errors_structure (void)
{
  guint8 data[8] = { 0 };
  GByteArray *b;

  /* empty file */
  expect_error (g_byte_array_new (), RPE_ERROR_FORMAT, "empty");
  /* bad magic */
  b = make_npy (1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", data, 8);
  b->data[1] = 'X';
  expect_error (b, RPE_ERROR_FORMAT, "not a .npy");
  /* only the magic */
  b = g_byte_array_new ();
  g_byte_array_append (b, (const guint8 *) "\x93NUMPY\x01", 7);
  expect_error (b, RPE_ERROR_FORMAT, "truncated");
  /* truncated header: 60 bytes announced, 20 present */
  b = make_npy (1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", NULL, 0);
  g_byte_array_set_size (b, 30);
  expect_error (b, RPE_ERROR_FORMAT, "truncated");
  /* truncated data */
  b = make_npy (1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }\n", data, 8);
  expect_error (b, RPE_ERROR_FORMAT, "truncated");
  /* trailing data */
  b = make_npy (1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n", data, 8);
  expect_error (b, RPE_ERROR_FORMAT, "after");
  /* an absurd header length (2 GiB) */
  b = make_npy (2, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n", data, 4);
  b->data[11] = 0x80;
  expect_error (b, RPE_ERROR_FORMAT, "limit");
}

static void
test_errors_dict (void)
{
  guint8 data[8] = { 0 };
  static const char *const bad[] = {
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), \n",        /* unterminated */
    "{'descr' '<f4', 'fortran_order': False, 'shape': (2,), }\n",        /* no colon */
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2,) 'x': 1}\n",  /* no comma */
    "{'descr': '<f4', 'fortran_order': False}\n",                        /* no shape */
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}\n", /* unknown key */
    "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}\n", /* repeated */
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2)}\n",          /* not a tuple */
    "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}\n",             /* not a bool */
    "{'descr': '<f4', 'fortran_order': Falsey, 'shape': (2,)}\n",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x)}\n",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } junk\n",  /* text after */
    "{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}\n",          /* unterminated string */
    "['descr', '<f4']\n",                                                /* not a dict */
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2,\n",
    "{'descr': 4, 'fortran_order': False, 'shape': (2,)}\n",
    "",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    expect_error (make_npy (1, bad[i], data, 8), RPE_ERROR_FORMAT, "header");
  /* negative dimension */
  expect_error (make_npy (1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }\n", data, 8),
                RPE_ERROR_FORMAT, "negative");
}

static void
test_errors_dtype (void)
{
  guint8 data[16] = { 0 };
  static const char *const dtypes[] = { "<i4", "|b1", "<c8", "|O", "O", "<u2", ">i8", "|u1", "<M8[s]", "<f16", "|f4" };

  for (gsize i = 0; i < G_N_ELEMENTS (dtypes); i++)
    {
      g_autofree char *h = g_strdup_printf ("{'descr': '%s', 'fortran_order': False, 'shape': (1,), }\n",
                                            dtypes[i]);
      g_autofree char *quoted = g_strdup_printf ("'%s'", dtypes[i]);
      expect_error (make_npy (1, h, data, 16), RPE_ERROR_UNSUPPORTED, quoted);
    }
  /* structured dtypes */
  expect_error (make_npy (1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }\n", data, 4),
                RPE_ERROR_UNSUPPORTED, "structured");
}

/* Fortran order (issue 10): the file holds the array column-major; the tensor is
 * C order.  Element (i, j, k) of a (2, 3, 4) array sits at file offset
 * i + 2 (j + 3 k); its value here is 100 i + 10 j + k. */
static void
test_fortran (void)
{
  float f[24], d1[5] = { 1, 2, 3, 4, 5 };
  g_autoptr (GError) error = NULL;
  RpeTensor *t;
  GByteArray *b;

  for (gsize i = 0; i < 2; i++)
    for (gsize j = 0; j < 3; j++)
      for (gsize k = 0; k < 4; k++)
        f[i + 2 * (j + 3 * k)] = (float) (100 * i + 10 * j + k);
  b = make_npy (1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3, 4), }\n", (const guint8 *) f, sizeof f);
  t = read_npy (b, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (t->ndim, ==, 3);
  g_assert_cmpuint (t->shape[0], ==, 2);
  g_assert_cmpuint (t->shape[2], ==, 4);
  for (gsize i = 0; i < 2; i++)
    for (gsize j = 0; j < 3; j++)
      for (gsize k = 0; k < 4; k++)
        g_assert_cmpfloat (t->data[(i * 3 + j) * 4 + k], ==, (float) (100 * i + 10 * j + k));
  rpe_tensor_free (t);
  g_byte_array_unref (b);

  /* 1-D: the same bytes either way */
  b = make_npy (1, "{'descr': '<f4', 'fortran_order': True, 'shape': (5,), }\n", (const guint8 *) d1, sizeof d1);
  t = read_npy (b, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (t->data, sizeof d1, d1, sizeof d1);
  rpe_tensor_free (t);
  g_byte_array_unref (b);

  /* truncated Fortran data is refused like C data */
  expect_error (make_npy (1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }\n", (const guint8 *) f, 20),
                RPE_ERROR_FORMAT, "truncated");
}

static void
test_errors_sizes (void)
{
  guint8 data[8] = { 0 };

  /* (2**62, 8): the element count overflows size_t */
  expect_error (make_npy (1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 8), }\n",
                          data, 8), RPE_ERROR_OVERFLOW, "absurd");
  /* (2**62,) float32: the byte count overflows */
  expect_error (make_npy (1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,), }\n",
                          data, 8), RPE_ERROR_OVERFLOW, "absurd");
  /* a dimension that does not fit in size_t at all */
  expect_error (make_npy (1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }\n",
                          data, 8), RPE_ERROR_OVERFLOW, "too large");
  /* a huge but representable shape: refused because the data is not there,
   * before anything is allocated */
  expect_error (make_npy (1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000000), }\n",
                          data, 8), RPE_ERROR_FORMAT, "truncated");
  /* too many dimensions */
  expect_error (make_npy (1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }\n",
                          data, 4), RPE_ERROR_UNSUPPORTED, "dimensions");
}

static void
test_budget (void)
{
  g_autofree float *values = g_new0 (float, 1000);
  const gsize shape[1] = { 1000 };
  g_autofree char *path = rpe_test_tmp_path ("budget.npy");
  g_autoptr (GError) error = NULL;
  RpeTensor *t;

  g_assert_true (rpe_npy_write (path, values, 1, shape, FALSE, &error));
  rpe_budget_set (1024);
  t = rpe_npy_read (path, &error);
  rpe_budget_set (0);
  g_assert_null (t);
  g_assert_error (error, RPE_ERROR, RPE_ERROR_NO_MEMORY);
  g_assert_nonnull (strstr (error->message, "budget.npy"));
}

/* ---- the atomic writer ------------------------------------------------ */

static gsize
count_entries (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  gsize n = 0;

  g_assert_nonnull (d);
  while (g_dir_read_name (d) != NULL)
    n++;
  g_dir_close (d);
  return n;
}

static void
test_atomic (void)
{
  g_autofree char *dir = rpe_test_tmp_path ("atomic");
  g_autofree char *path = g_build_filename (dir, "keep.npy", NULL);
  g_autofree char *subdir = g_build_filename (dir, "adir.npy", NULL);
  g_autofree char *missing = g_build_filename (dir, "no-such-dir", "x.npy", NULL);
  g_autofree char *before = NULL, *after = NULL;
  g_autofree float *big = g_new0 (float, 100000);
  const float small[2] = { 1.0f, 2.0f };
  const gsize shape_small[1] = { 2 }, shape_big[1] = { 100000 };
  g_autoptr (GError) error = NULL;
  struct rlimit old, lim;
  gsize len_before, len_after;
  gboolean ok;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_true (rpe_npy_write (path, small, 1, shape_small, FALSE, &error));
  g_assert_true (g_file_get_contents (path, &before, &len_before, NULL));

  /* a non-existent directory */
  g_assert_false (rpe_npy_write (missing, small, 1, shape_small, FALSE, &error));
  g_assert_error (error, RPE_ERROR, RPE_ERROR_IO);
  g_assert_nonnull (strstr (error->message, "x.npy"));
  g_clear_error (&error);

  /* the target is a directory: the final rename fails, the directory stays */
  g_assert_cmpint (g_mkdir (subdir, 0755), ==, 0);
  g_assert_false (rpe_npy_write (subdir, small, 1, shape_small, FALSE, &error));
  g_assert_error (error, RPE_ERROR, RPE_ERROR_IO);
  g_clear_error (&error);
  g_assert_true (g_file_test (subdir, G_FILE_TEST_IS_DIR));

  /* a write that fails midway (file size limit): the old file is kept intact */
  g_assert_cmpint (getrlimit (RLIMIT_FSIZE, &old), ==, 0);
  lim = old;
  lim.rlim_cur = 4096;
  signal (SIGXFSZ, SIG_IGN);
  g_assert_cmpint (setrlimit (RLIMIT_FSIZE, &lim), ==, 0);
  ok = rpe_npy_write (path, big, 1, shape_big, FALSE, &error);
  g_assert_cmpint (setrlimit (RLIMIT_FSIZE, &old), ==, 0);
  g_assert_false (ok);
  /* EFBIG, as a full disk: the system's state, not the input's */
  g_assert_error (error, RPE_ERROR, RPE_ERROR_NO_SPACE);
  g_assert_nonnull (strstr (error->message, "keep.npy"));
  g_clear_error (&error);
  g_assert_true (g_file_get_contents (path, &after, &len_after, NULL));
  g_assert_cmpmem (before, len_before, after, len_after);

  /* no temporary files left behind: only keep.npy and adir.npy */
  g_assert_cmpuint (count_entries (dir), ==, 2);

  /* and a successful overwrite replaces it */
  g_assert_true (rpe_npy_write (path, big, 1, shape_big, FALSE, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (count_entries (dir), ==, 2);
}

/* Random corruptions of a valid file: each read either succeeds with a
 * consistent tensor or fails with an RPE_ERROR, never crashes. */
static void
test_fuzz (void)
{
  const float values[6] = { 1, 2, 3, 4, 5, 6 };
  const gsize shape[2] = { 3, 2 };
  g_autofree char *path = rpe_test_tmp_path ("fuzz.npy");
  g_autofree char *contents = NULL;
  g_autoptr (GError) error = NULL;
  GRand *rand = g_rand_new_with_seed (1234);
  gsize length;
  guint ok = 0;

  g_assert_true (rpe_npy_write (path, values, 2, shape, FALSE, &error));
  g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
  for (int iter = 0; iter < 3000; iter++)
    {
      g_autofree guint8 *buf = g_memdup2 (contents, length);
      gsize len = length;
      int n_flips = g_rand_int_range (rand, 1, 4);
      RpeTensor *t;

      for (int f = 0; f < n_flips; f++)
        {
          /* mostly the header, where the parser lives */
          gsize pos = (gsize) g_rand_int_range (rand, 0, g_rand_boolean (rand) ? 80 : (gint32) length);
          static const char pool[] = "{}()[],:' \"\\0123456789-TrueFalse<>|=f4i8\n\x00\xff";
          buf[pos] = g_rand_boolean (rand) ? (guint8) g_rand_int_range (rand, 0, 256)
                                           : (guint8) pool[g_rand_int_range (rand, 0, sizeof pool - 1)];
        }
      if (g_rand_int_range (rand, 0, 4) == 0)
        len = (gsize) g_rand_int_range (rand, 0, (gint32) length + 1);
      t = rpe_npy_read_bytes (buf, len, "fuzz.npy", &error);
      if (t != NULL)
        {
          gsize count = 1;
          for (gsize d = 0; d < t->ndim; d++)
            count *= t->shape[d];
          g_assert_cmpuint (count, ==, t->n_elements);
          g_assert_no_error (error);
          rpe_tensor_free (t);
          ok++;
        }
      else
        {
          g_assert_nonnull (error);
          g_assert_true (error->domain == RPE_ERROR);
          g_clear_error (&error);
        }
    }
  g_rand_free (rand);
  g_test_message ("%u of 3000 corrupted files still parsed", ok);
}

static void
test_missing_file (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = rpe_test_tmp_path ("does-not-exist.npy");

  g_assert_null (rpe_npy_read (path, &error));
  g_assert_error (error, RPE_ERROR, RPE_ERROR_IO);
  g_assert_nonnull (strstr (error->message, "does-not-exist.npy"));
}

/* An array with no rows is a valid .npy, but no content: the shared check
 * refuses it naming the shape (before its first dimension is taken for N). */
static void
test_empty_content (void)
{
  g_autofree char *path = rpe_test_tmp_path ("empty-rows.npy");
  const gsize shape[3] = { 0, 8, 64 };
  const gsize cols0[2] = { 4, 0 };
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeTensor) t = NULL;

  g_assert_true (rpe_npy_write (path, NULL, 3, shape, FALSE, &error));
  g_assert_no_error (error);
  t = rpe_npy_read (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (t->shape[0], ==, 0);
  g_assert_false (rpe_shape_check_nonempty ("--queries q.npy", t->ndim, t->shape, &error));
  g_assert_error (error, RPE_ERROR, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "(0, 8, 64)"));
  g_assert_nonnull (strstr (error->message, "no rows"));
  g_clear_error (&error);
  g_assert_false (rpe_shape_check_nonempty ("v", 2, cols0, &error));
  g_assert_nonnull (strstr (error->message, "a dimension of size 0"));
  g_clear_error (&error);
  g_assert_true (rpe_shape_check_nonempty ("v", 3, (const gsize[]) { 1, 1, 1 }, &error));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/core/npy/roundtrip-f32", test_roundtrip_f32);
  g_test_add_func ("/core/npy/roundtrip-f64", test_roundtrip_f64);
  g_test_add_func ("/core/npy/versions", test_versions);
  g_test_add_func ("/core/npy/big-endian-and-half", test_big_endian);
  g_test_add_func ("/core/npy/shapes", test_shapes);
  g_test_add_func ("/core/npy/errors/structure", test_errors_structure);
  g_test_add_func ("/core/npy/errors/dict", test_errors_dict);
  g_test_add_func ("/core/npy/errors/dtype", test_errors_dtype);
  g_test_add_func ("/core/npy/fortran", test_fortran);
  g_test_add_func ("/core/npy/errors/sizes", test_errors_sizes);
  g_test_add_func ("/core/npy/errors/budget", test_budget);
  g_test_add_func ("/core/npy/atomic-writer", test_atomic);
  g_test_add_func ("/core/npy/missing-file", test_missing_file);
  g_test_add_func ("/core/npy/fuzz", test_fuzz);
  g_test_add_func ("/core/npy/empty-content", test_empty_content);
  return g_test_run ();
}

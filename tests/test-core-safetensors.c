#include "config.h"

#include <math.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "rpe-alloc.h"
#include "rpe-error.h"
#include "rpe-safetensors.h"
#include "rpe-test-utils.h"

/* A .safetensors file built by hand: u64 LE header length, JSON, data. */
static GByteArray *
make_st (const char *json,
         const void *data,
         gsize       data_len)
{
  GByteArray *b = g_byte_array_new ();
  guint64 n = strlen (json);
  guint8 len[8];

  for (int i = 0; i < 8; i++)
    len[i] = (guint8) (n >> (8 * i));
  g_byte_array_append (b, len, 8);
  g_byte_array_append (b, (const guint8 *) json, (guint) n);
  if (data_len > 0)
    g_byte_array_append (b, data, (guint) data_len);
  return b;
}

static guint32
float_bits (float f)
{
  guint32 u;
  memcpy (&u, &f, 4);
  return u;
}

static RpeTensorSet *
read_st (GByteArray *b,
         GError    **error)
{
  return rpe_safetensors_read_bytes (b->data, b->len, "test.safetensors", error);
}

/* The bytes must fail with `code`; the message names the file and contains
 * every needle (NULL-terminated list). */
static void
expect_error (GByteArray *b,
              RpeStatus   code,
              ...)
{
  g_autoptr (GError) error = NULL;
  RpeTensorSet *set = read_st (b, &error);
  const char *needle;
  va_list ap;

  g_assert_null (set);
  g_assert_error (error, RPE_ERROR, (int) code);
  g_assert_nonnull (strstr (error->message, "test.safetensors"));
  va_start (ap, code);
  while ((needle = va_arg (ap, const char *)) != NULL)
    if (strstr (error->message, needle) == NULL)
      g_error ("message '%s' lacks '%s'", error->message, needle);
  va_end (ap);
  g_byte_array_unref (b);
}

/* ---- dtypes ----------------------------------------------------------- */

static void
test_dtypes (void)
{
  /* F16 bit patterns and their values, computed by hand from the IEEE 754
   * binary16 layout (1 sign, 5 exponent bits with bias 15, 10 mantissa bits) */
  static const guint16 f16_bits[] = { 0x3C00, 0xC000, 0x7BFF, 0x0001, 0x03FF, 0x0400, 0x3555, 0x8000,
                                      0x7C00, 0xFC00, 0x7E00 };
  static const double f16_vals[] = { 1.0, -2.0, 65504.0, 5.9604644775390625e-08 /* 2^-24 */,
                                     6.0975551605224609375e-05 /* 1023 * 2^-24 */,
                                     6.103515625e-05 /* 2^-14 */, 0.333251953125, -0.0,
                                     INFINITY, -INFINITY, NAN };
  /* bfloat16 = top 16 bits of a float32 */
  static const guint16 bf16_bits[] = { 0x3F80, 0xC049, 0x0001, 0x0080, 0x7F7F, 0x7F80, 0xFF80, 0x7FC0 };
  static const double bf16_vals[] = { 1.0, -3.140625, 9.1835496157991212e-41 /* 2^-133 */,
                                      1.1754943508222875e-38 /* 2^-126 */,
                                      3.3895313892515355e+38 /* (2 - 2^-7) 2^127 */,
                                      INFINITY, -INFINITY, NAN };
  static const guint64 f64_bits[] = { G_GUINT64_CONSTANT (0x3FF0000000000000),   /* 1 */
                                      G_GUINT64_CONSTANT (0xBFE0000000000000),   /* -0.5 */
                                      G_GUINT64_CONSTANT (0x3FD5555555555555),   /* 1/3 */
                                      G_GUINT64_CONSTANT (0x7E37E43C8800759C),   /* 1e300 */
                                      G_GUINT64_CONSTANT (0x01A56E1FC2F8F359) }; /* 1e-300 */
  /* 1/3 rounded to float32 is 0x3EAAAAAB = 0.3333333432674408 */
  static const double f64_vals[] = { 1.0, -0.5, 0.3333333432674408, INFINITY, 0.0 };
  static const guint32 f32_bits[] = { 0x3F800000, 0x00000001, 0x7F7FFFFF, 0xFF800000 };
  static const double f32_vals[] = { 1.0, 1.4012984643248171e-45, 3.4028234663852886e+38, -INFINITY };
  GByteArray *data = g_byte_array_new ();
  g_autofree char *json = NULL;
  g_autoptr (GError) error = NULL;
  RpeTensorSet *set;
  GByteArray *b;
  const RpeTensor *t;
  gsize o16, obf, o64, o32;

  o16 = data->len;
  for (gsize i = 0; i < G_N_ELEMENTS (f16_bits); i++)
    {
      guint8 le[2] = { (guint8) (f16_bits[i] & 0xff), (guint8) (f16_bits[i] >> 8) };
      g_byte_array_append (data, le, 2);
    }
  obf = data->len;
  for (gsize i = 0; i < G_N_ELEMENTS (bf16_bits); i++)
    {
      guint8 le[2] = { (guint8) (bf16_bits[i] & 0xff), (guint8) (bf16_bits[i] >> 8) };
      g_byte_array_append (data, le, 2);
    }
  o64 = data->len;
  for (gsize i = 0; i < G_N_ELEMENTS (f64_bits); i++)
    {
      guint8 le[8];
      for (int j = 0; j < 8; j++)
        le[j] = (guint8) (f64_bits[i] >> (8 * j));
      g_byte_array_append (data, le, 8);
    }
  o32 = data->len;
  for (gsize i = 0; i < G_N_ELEMENTS (f32_bits); i++)
    {
      guint8 le[4];
      for (int j = 0; j < 4; j++)
        le[j] = (guint8) (f32_bits[i] >> (8 * j));
      g_byte_array_append (data, le, 4);
    }

  json = g_strdup_printf ("{\"__metadata__\": {\"format\": \"pt\", \"note\": \"hand made\"},"
                          "\"half\": {\"dtype\": \"F16\", \"shape\": [11], \"data_offsets\": [%u, %u]},"
                          "\"brain\": {\"dtype\": \"BF16\", \"shape\": [2, 4], \"data_offsets\": [%u, %u]},"
                          "\"double\": {\"dtype\": \"F64\", \"shape\": [5, 1], \"data_offsets\": [%u, %u]},"
                          "\"single\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [%u, %u]}}",
                          (guint) o16, (guint) obf, (guint) obf, (guint) o64, (guint) o64, (guint) o32,
                          (guint) o32, (guint) data->len);
  b = make_st (json, data->data, data->len);
  set = read_st (b, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rpe_tensor_set_size (set), ==, 4);

  t = rpe_tensor_set_lookup (set, "half");
  g_assert_nonnull (t);
  g_assert_cmpint (t->dtype, ==, RPE_DTYPE_F16);
  for (gsize i = 0; i < G_N_ELEMENTS (f16_bits); i++)
    {
      if (isnan (f16_vals[i]))
        g_assert_true (isnan (t->data[i]));
      else
        g_assert_cmpfloat ((double) t->data[i], ==, f16_vals[i]);
    }
  g_assert_true (signbit (t->data[7]));   /* -0 keeps its sign */

  t = rpe_tensor_set_lookup (set, "brain");
  g_assert_cmpint (t->dtype, ==, RPE_DTYPE_BF16);
  g_assert_cmpuint (t->ndim, ==, 2);
  for (gsize i = 0; i < G_N_ELEMENTS (bf16_bits); i++)
    {
      if (isnan (bf16_vals[i]))
        g_assert_true (isnan (t->data[i]));
      else
        g_assert_cmpfloat ((double) t->data[i], ==, bf16_vals[i]);
    }

  t = rpe_tensor_set_lookup (set, "double");
  g_assert_cmpint (t->dtype, ==, RPE_DTYPE_F64);
  for (gsize i = 0; i < G_N_ELEMENTS (f64_bits); i++)
    g_assert_cmpfloat ((double) t->data[i], ==, f64_vals[i]);

  t = rpe_tensor_set_lookup (set, "single");
  for (gsize i = 0; i < G_N_ELEMENTS (f32_bits); i++)
    g_assert_cmpfloat ((double) t->data[i], ==, f32_vals[i]);

  /* file (data) order, not the name order or the JSON order */
  g_assert_cmpstr (rpe_tensor_set_get (set, 0)->name, ==, "half");
  g_assert_cmpstr (rpe_tensor_set_get (set, 3)->name, ==, "single");
  g_assert_null (rpe_tensor_set_lookup (set, "__metadata__"));

  rpe_tensor_set_free (set);
  g_byte_array_unref (b);
  g_byte_array_unref (data);
}

static void
test_order_and_padding (void)
{
  guint8 data[12] = { 0 };
  g_autoptr (GError) error = NULL;
  RpeTensorSet *set;
  GByteArray *b;

  /* JSON order b, a, c; data order a, c, b; header padded with spaces (allowed) */
  b = make_st ("{\"b\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [8, 12]},"
               " \"a\": {\"dtype\": \"F32\", \"shape\": [], \"data_offsets\": [0, 4]},"
               " \"c\": {\"dtype\": \"F32\", \"shape\": [1, 1], \"data_offsets\": [4, 8]}}      ",
               data, 12);
  set = read_st (b, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (rpe_tensor_set_get (set, 0)->name, ==, "a");
  g_assert_cmpstr (rpe_tensor_set_get (set, 1)->name, ==, "c");
  g_assert_cmpstr (rpe_tensor_set_get (set, 2)->name, ==, "b");
  g_assert_cmpuint (rpe_tensor_set_get (set, 0)->ndim, ==, 0);
  g_assert_cmpuint (rpe_tensor_set_get (set, 0)->n_elements, ==, 1);
  rpe_tensor_set_free (set);
  g_byte_array_unref (b);

  /* an empty header object is a valid, empty file */
  b = make_st ("{}", NULL, 0);
  set = read_st (b, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rpe_tensor_set_size (set), ==, 0);
  rpe_tensor_set_free (set);
  g_byte_array_unref (b);
}

/* ---- malformed files -------------------------------------------------- */

static void
test_errors (void)
{
  guint8 data[64] = { 0 };
  GByteArray *b;

  /* too short, empty */
  expect_error (g_byte_array_new (), RPE_ERROR_FORMAT, "too short", NULL);
  b = g_byte_array_new ();
  g_byte_array_append (b, (const guint8 *) "\x02\0\0", 3);
  expect_error (b, RPE_ERROR_FORMAT, "too short", NULL);

  /* header length beyond the file */
  b = make_st ("{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}}", data, 4);
  b->data[0] = 200;
  expect_error (b, RPE_ERROR_FORMAT, "exceeds the file size", NULL);
  /* absurd header length (2^40) */
  b = make_st ("{}", NULL, 0);
  b->data[5] = 1;
  expect_error (b, RPE_ERROR_FORMAT, "limit", NULL);

  /* not JSON, not an object, not UTF-8 */
  expect_error (make_st ("{\"a\": {\"dtype\": ", data, 4), RPE_ERROR_FORMAT, "not valid JSON", NULL);
  expect_error (make_st ("[1, 2, 3]", NULL, 0), RPE_ERROR_FORMAT, "not a JSON object", NULL);
  expect_error (make_st ("{\"\xff\xfe\": 1}", NULL, 0), RPE_ERROR_FORMAT, "UTF-8", NULL);
  expect_error (make_st ("{\"a\": 3}", NULL, 0), RPE_ERROR_FORMAT, "'a'", "not an object", NULL);

  /* dtypes */
  expect_error (make_st ("{\"idx\": {\"dtype\": \"I32\", \"shape\": [1], \"data_offsets\": [0, 4]}}", data, 4),
                RPE_ERROR_UNSUPPORTED, "I32", "'idx'", NULL);
  expect_error (make_st ("{\"w\": {\"dtype\": \"XYZ\", \"shape\": [1], \"data_offsets\": [0, 4]}}", data, 4),
                RPE_ERROR_UNSUPPORTED, "XYZ", "'w'", NULL);
  expect_error (make_st ("{\"w\": {\"dtype\": 4, \"shape\": [1], \"data_offsets\": [0, 4]}}", data, 4),
                RPE_ERROR_FORMAT, "'w'", "dtype", NULL);
  expect_error (make_st ("{\"w\": {\"shape\": [1], \"data_offsets\": [0, 4]}}", data, 4),
                RPE_ERROR_FORMAT, "'w'", "dtype", NULL);

  /* offsets */
  expect_error (make_st ("{\"w\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}}", data, 4),
                RPE_ERROR_FORMAT, "'w'", "beyond", NULL);
  expect_error (make_st ("{\"w\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [8, 4]}}", data, 8),
                RPE_ERROR_FORMAT, "'w'", "end < begin", NULL);
  expect_error (make_st ("{\"w\": {\"dtype\": \"F32\", \"shape\": [3], \"data_offsets\": [0, 8]}}", data, 8),
                RPE_ERROR_FORMAT, "'w'", "need 12", NULL);
  expect_error (make_st ("{\"w\": {\"dtype\": \"F16\", \"shape\": [3], \"data_offsets\": [0, 12]}}", data, 12),
                RPE_ERROR_FORMAT, "'w'", "need 6", NULL);
  expect_error (make_st ("{\"w\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [-4, 0]}}", data, 8),
                RPE_ERROR_FORMAT, "'w'", "data_offsets", NULL);
  expect_error (make_st ("{\"w\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0]}}", data, 8),
                RPE_ERROR_FORMAT, "'w'", "data_offsets", NULL);

  /* shapes */
  expect_error (make_st ("{\"w\": {\"dtype\": \"F32\", \"shape\": [4611686018427387904, 8], "
                         "\"data_offsets\": [0, 4]}}", data, 4), RPE_ERROR_OVERFLOW, "'w'", "absurd", NULL);
  expect_error (make_st ("{\"w\": {\"dtype\": \"F64\", \"shape\": [4611686018427387904], "
                         "\"data_offsets\": [0, 4]}}", data, 4), RPE_ERROR_OVERFLOW, "'w'", NULL);
  expect_error (make_st ("{\"w\": {\"dtype\": \"F32\", \"shape\": [-1], \"data_offsets\": [0, 4]}}", data, 4),
                RPE_ERROR_FORMAT, "'w'", "non-negative", NULL);
  expect_error (make_st ("{\"w\": {\"dtype\": \"F32\", \"shape\": [1.5], \"data_offsets\": [0, 4]}}", data, 4),
                RPE_ERROR_FORMAT, "'w'", "non-negative", NULL);
  expect_error (make_st ("{\"w\": {\"dtype\": \"F32\", \"shape\": 1, \"data_offsets\": [0, 4]}}", data, 4),
                RPE_ERROR_FORMAT, "'w'", "shape", NULL);
  expect_error (make_st ("{\"w\": {\"dtype\": \"F32\", \"shape\": [1,1,1,1,1,1,1,1,1], "
                         "\"data_offsets\": [0, 4]}}", data, 4), RPE_ERROR_UNSUPPORTED, "'w'", "dimensions", NULL);

  /* duplicate names (also spelled differently) */
  expect_error (make_st ("{\"w\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]},"
                         "\"w\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [4, 8]}}", data, 8),
                RPE_ERROR_FORMAT, "'w'", "more than once", NULL);
  expect_error (make_st ("{\"w\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]},"
                         "\"\\u0077\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [4, 8]}}", data, 8),
                RPE_ERROR_FORMAT, "repeats", NULL);

  /* deep nesting (would exhaust a recursive parser's stack) */
  {
    char *deep = g_malloc (2000001);
    memset (deep, '[', 1000000);
    memset (deep + 1000000, ']', 1000000);
    deep[2000000] = '\0';
    expect_error (make_st (deep, NULL, 0), RPE_ERROR_FORMAT, "nested too deeply", NULL);
    g_free (deep);
  }

  /* metadata must be a string map */
  expect_error (make_st ("{\"__metadata__\": {\"n\": 3}}", NULL, 0), RPE_ERROR_FORMAT, "__metadata__", NULL);
  expect_error (make_st ("{\"__metadata__\": [\"x\"]}", NULL, 0), RPE_ERROR_FORMAT, "__metadata__", NULL);
}

static void
test_truncated (void)
{
  g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
  g_autofree char *path = g_build_filename (rpe_test_tmpdir (), "trunc.safetensors", NULL);
  g_autofree char *contents = NULL;
  g_autoptr (GError) error = NULL;
  const gsize shape[2] = { 3, 5 };
  RpeTensor *t = rpe_tensor_new ("weights", 2, shape, &error);
  gsize length;
  GByteArray *b;

  g_assert_true (rpe_tensor_set_add (set, t, &error));
  g_assert_true (rpe_safetensors_write (path, set, &error));
  g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
  /* every strict prefix of the file is refused with an error, never a crash */
  for (gsize cut = 0; cut < length; cut++)
    {
      RpeTensorSet *s = rpe_safetensors_read_bytes ((const guint8 *) contents, cut, "trunc", &error);
      g_assert_null (s);
      g_assert_error (error, RPE_ERROR, RPE_ERROR_FORMAT);
      g_clear_error (&error);
    }
  b = g_byte_array_new ();
  g_byte_array_append (b, (const guint8 *) contents, (guint) length - 4);
  expect_error (b, RPE_ERROR_FORMAT, "'weights'", "truncated", NULL);
}

/* Random corruptions of a valid file: each read either succeeds or fails
 * with an RPE_ERROR, never crashes. */
static void
test_fuzz (void)
{
  g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
  g_autofree char *path = g_build_filename (rpe_test_tmpdir (), "fuzz.safetensors", NULL);
  g_autofree char *contents = NULL;
  g_autoptr (GError) error = NULL;
  const gsize s1[2] = { 2, 3 }, s2[1] = { 4 };
  GRand *rand = g_rand_new_with_seed (4321);
  gsize length;
  guint ok = 0;

  g_assert_true (rpe_tensor_set_add (set, rpe_tensor_new ("a.weight", 2, s1, NULL), NULL));
  g_assert_true (rpe_tensor_set_add (set, rpe_tensor_new ("b", 1, s2, NULL), NULL));
  g_assert_true (rpe_safetensors_write (path, set, &error));
  g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
  for (int iter = 0; iter < 3000; iter++)
    {
      g_autofree guint8 *buf = g_memdup2 (contents, length);
      gsize len = length;
      int n_flips = g_rand_int_range (rand, 1, 4);
      RpeTensorSet *back;

      for (int f = 0; f < n_flips; f++)
        {
          gsize pos = (gsize) g_rand_int_range (rand, 0, (gint32) length);
          static const char pool[] = "{}[],:\" \\0123456789-eE.FBI\x00\xff";
          buf[pos] = g_rand_boolean (rand) ? (guint8) g_rand_int_range (rand, 0, 256)
                                           : (guint8) pool[g_rand_int_range (rand, 0, sizeof pool - 1)];
        }
      if (g_rand_int_range (rand, 0, 4) == 0)
        len = (gsize) g_rand_int_range (rand, 0, (gint32) length + 1);
      back = rpe_safetensors_read_bytes (buf, len, "fuzz", &error);
      if (back != NULL)
        {
          g_assert_no_error (error);
          rpe_tensor_set_free (back);
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

/* ---- writer ----------------------------------------------------------- */

static void
test_roundtrip (void)
{
  g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
  g_autoptr (RpeTensorSet) back = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (rpe_test_tmpdir (), "rt.safetensors", NULL);
  g_autofree char *contents = NULL;
  g_autoptr (JsonParser) parser = NULL;
  const gsize s1[3] = { 2, 3, 4 }, s3[2] = { 0, 3 };
  RpeTensor *t;
  const char *names[4] = { "z.last.but.first", "scalar", "empty", "a/b" };
  gsize length;
  guint64 header_len = 0;

  t = rpe_tensor_new (names[0], 3, s1, &error);
  for (gsize i = 0; i < t->n_elements; i++)
    t->data[i] = (float) (sin ((double) i) * 1e3);
  t->data[5] = -0.0f;
  t->data[6] = 1e-42f;
  g_assert_true (rpe_tensor_set_add (set, t, &error));
  t = rpe_tensor_new (names[1], 0, NULL, &error);
  t->data[0] = 42.5f;
  g_assert_true (rpe_tensor_set_add (set, t, &error));
  t = rpe_tensor_new (names[2], 2, s3, &error);
  g_assert_true (rpe_tensor_set_add (set, t, &error));
  t = rpe_tensor_new (names[3], 1, s1, &error);
  t->data[1] = -1.0f;
  g_assert_true (rpe_tensor_set_add (set, t, &error));
  /* a duplicate is refused by the set */
  t = rpe_tensor_new ("scalar", 0, NULL, &error);
  g_assert_false (rpe_tensor_set_add (set, t, &error));
  g_assert_error (error, RPE_ERROR, RPE_ERROR_FORMAT);
  g_clear_error (&error);

  g_assert_true (rpe_safetensors_write (path, set, &error));
  g_assert_no_error (error);

  /* the raw layout: u64 header length, data 8-byte aligned, offsets contiguous */
  g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
  for (int i = 0; i < 8; i++)
    header_len |= (guint64) (guint8) contents[i] << (8 * i);
  g_assert_cmpuint ((8 + header_len) % 8, ==, 0);
  g_assert_cmpuint (length, ==, 8 + header_len + 4 * (24 + 1 + 0 + 2));
  g_assert_cmpint (contents[8], ==, '{');
  parser = json_parser_new ();
  g_assert_true (json_parser_load_from_data (parser, contents + 8, (gssize) header_len, NULL));
  {
    JsonObject *o = json_node_get_object (json_parser_get_root (parser));
    JsonArray *off = json_object_get_array_member (json_object_get_object_member (o, "scalar"), "data_offsets");
    g_assert_cmpint (json_array_get_int_element (off, 0), ==, 96);
    g_assert_cmpint (json_array_get_int_element (off, 1), ==, 100);
    g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (o, "a/b"), "dtype"), ==, "F32");
  }

  back = rpe_safetensors_read (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rpe_tensor_set_size (back), ==, 4);
  for (gsize i = 0; i < 4; i++)
    {
      const RpeTensor *a = rpe_tensor_set_get (set, i), *c = rpe_tensor_set_get (back, i);
      g_assert_cmpstr (a->name, ==, c->name);
      g_assert_cmpuint (a->ndim, ==, c->ndim);
      for (gsize d = 0; d < a->ndim; d++)
        g_assert_cmpuint (a->shape[d], ==, c->shape[d]);
      g_assert_cmpuint (a->n_elements, ==, c->n_elements);
      for (gsize k = 0; k < a->n_elements; k++)
        g_assert_cmpuint (float_bits (a->data[k]), ==, float_bits (c->data[k]));
    }
}

static void
test_writer_errors (void)
{
  g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (rpe_test_tmpdir (), "no-such-dir", "x.safetensors", NULL);

  g_assert_false (rpe_safetensors_write (path, set, &error));
  g_assert_error (error, RPE_ERROR, RPE_ERROR_IO);
  g_assert_nonnull (strstr (error->message, "x.safetensors"));
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  g_clear_error (&error);
  g_assert_null (rpe_safetensors_read (path, &error));
  g_assert_error (error, RPE_ERROR, RPE_ERROR_IO);
  g_clear_error (&error);

  /* "__metadata__" cannot be a tensor */
  {
    g_autofree char *ok_path = g_build_filename (rpe_test_tmpdir (), "meta.safetensors", NULL);
    g_assert_true (rpe_tensor_set_add (set, rpe_tensor_new ("__metadata__", 0, NULL, NULL), NULL));
    g_assert_false (rpe_safetensors_write (ok_path, set, &error));
    g_assert_error (error, RPE_ERROR, RPE_ERROR_INVALID_ARGUMENT);
    g_assert_false (g_file_test (ok_path, G_FILE_TEST_EXISTS));
  }
}

static void
test_budget (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree guint8 *data = g_malloc0 (4096);
  GByteArray *b = make_st ("{\"w\": {\"dtype\": \"F16\", \"shape\": [2048], \"data_offsets\": [0, 4096]}}",
                           data, 4096);
  RpeTensorSet *set;

  rpe_budget_set (4096);   /* the float32 copy needs 8192 bytes */
  set = read_st (b, &error);
  rpe_budget_set (0);
  g_assert_null (set);
  g_assert_error (error, RPE_ERROR, RPE_ERROR_NO_MEMORY);
  g_byte_array_unref (b);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/core/safetensors/dtypes", test_dtypes);
  g_test_add_func ("/core/safetensors/order", test_order_and_padding);
  g_test_add_func ("/core/safetensors/errors", test_errors);
  g_test_add_func ("/core/safetensors/truncated", test_truncated);
  g_test_add_func ("/core/safetensors/roundtrip", test_roundtrip);
  g_test_add_func ("/core/safetensors/writer-errors", test_writer_errors);
  g_test_add_func ("/core/safetensors/budget", test_budget);
  g_test_add_func ("/core/safetensors/fuzz", test_fuzz);
  return g_test_run ();
}

#include "config.h"

#include <string.h>

#include <gio/gio.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "rpe-alloc.h"
#include "rpe-checkpoint.h"
#include "rpe-error.h"
#include "rpe-npy.h"
#include "rpe-npz.h"
#include "rpe-test-utils.h"

/* ---- an independent zip writer (APPNOTE 4.3.7 / 4.3.12 / 4.3.16) ------- */

/* bitwise CRC-32, no table (the reader uses a table) */
static guint32
ref_crc32 (const guint8 *p,
           gsize         n)
{
  guint32 c = 0xFFFFFFFFu;

  for (gsize i = 0; i < n; i++)
    {
      c ^= p[i];
      for (int k = 0; k < 8; k++)
        c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
    }
  return ~c;
}

static void
put16 (GByteArray *b,
       guint       v)
{
  guint8 x[2] = { (guint8) v, (guint8) (v >> 8) };
  g_byte_array_append (b, x, 2);
}

static void
put32 (GByteArray *b,
       guint32     v)
{
  guint8 x[4] = { (guint8) v, (guint8) (v >> 8), (guint8) (v >> 16), (guint8) (v >> 24) };
  g_byte_array_append (b, x, 4);
}

static void
put64 (GByteArray *b,
       guint64     v)
{
  put32 (b, (guint32) v);
  put32 (b, (guint32) (v >> 32));
}

typedef struct
{
  const char   *name;
  const guint8 *data;
  gsize         len;
  gboolean      deflate;
  guint32       crc_xor;     /* corrupts the recorded CRC */
  guint16       flags;
  guint16       method;      /* 0: from `deflate` */
  gsize         name_len;    /* 0: strlen (name); else bytes of name (may hold NUL) */
} Member;

static GBytes *
deflate_raw (const guint8 *data,
             gsize         len)
{
  g_autoptr (GZlibCompressor) z = g_zlib_compressor_new (G_ZLIB_COMPRESSOR_FORMAT_RAW, 9);
  g_autoptr (GInputStream) mem = g_memory_input_stream_new_from_data (data, (gssize) len, NULL);
  g_autoptr (GInputStream) conv = g_converter_input_stream_new (mem, G_CONVERTER (z));
  g_autoptr (GByteArray) out = g_byte_array_new ();
  guint8 buf[4096];
  gssize n;

  while ((n = g_input_stream_read (conv, buf, sizeof buf, NULL, NULL)) > 0)
    g_byte_array_append (out, buf, (guint) n);
  g_assert_cmpint (n, ==, 0);
  return g_byte_array_free_to_bytes (g_steal_pointer (&out));
}

/* Builds a zip; with zip64 the sizes/offsets go into zip64 extra fields and a
 * zip64 end record. */
static GByteArray *
make_zip (const Member *m,
          gsize         n,
          gboolean      zip64)
{
  GByteArray *b = g_byte_array_new ();
  g_autoptr (GByteArray) cd = g_byte_array_new ();
  guint32 cd_off, cd_len;

  for (gsize i = 0; i < n; i++)
    {
      g_autoptr (GBytes) z = m[i].deflate ? deflate_raw (m[i].data, m[i].len) : NULL;
      const guint8 *payload = z != NULL ? g_bytes_get_data (z, NULL) : m[i].data;
      gsize plen = z != NULL ? g_bytes_get_size (z) : m[i].len;
      guint method = m[i].method != 0 ? m[i].method : (m[i].deflate ? 8 : 0);
      guint32 crc = ref_crc32 (m[i].data, m[i].len) ^ m[i].crc_xor;
      guint32 off = b->len;
      guint nlen = (guint) (m[i].name_len > 0 ? m[i].name_len : strlen (m[i].name));

      put32 (b, 0x04034b50); put16 (b, 20); put16 (b, m[i].flags); put16 (b, method);
      put16 (b, 0); put16 (b, 0); put32 (b, crc); put32 (b, (guint32) plen); put32 (b, (guint32) m[i].len);
      put16 (b, nlen); put16 (b, 0);
      g_byte_array_append (b, (const guint8 *) m[i].name, nlen);
      if (plen > 0)
        g_byte_array_append (b, payload, (guint) plen);

      put32 (cd, 0x02014b50); put16 (cd, 45); put16 (cd, 20); put16 (cd, m[i].flags); put16 (cd, method);
      put16 (cd, 0); put16 (cd, 0); put32 (cd, crc);
      put32 (cd, zip64 ? 0xFFFFFFFFu : (guint32) plen);
      put32 (cd, zip64 ? 0xFFFFFFFFu : (guint32) m[i].len);
      put16 (cd, nlen); put16 (cd, zip64 ? 28 : 0); put16 (cd, 0); put16 (cd, 0); put16 (cd, 0); put32 (cd, 0);
      put32 (cd, zip64 ? 0xFFFFFFFFu : off);
      g_byte_array_append (cd, (const guint8 *) m[i].name, nlen);
      if (zip64)
        {
          put16 (cd, 0x0001); put16 (cd, 24);
          put64 (cd, m[i].len); put64 (cd, plen); put64 (cd, off);
        }
    }
  cd_off = b->len;
  cd_len = cd->len;
  g_byte_array_append (b, cd->data, cd->len);
  if (zip64)
    {
      guint32 z64 = b->len;

      put32 (b, 0x06064b50); put64 (b, 44); put16 (b, 45); put16 (b, 45); put32 (b, 0); put32 (b, 0);
      put64 (b, n); put64 (b, n); put64 (b, cd_len); put64 (b, cd_off);
      put32 (b, 0x07064b50); put32 (b, 0); put64 (b, z64); put32 (b, 1);
    }
  put32 (b, 0x06054b50); put16 (b, 0); put16 (b, 0);
  put16 (b, zip64 ? 0xFFFF : (guint) n); put16 (b, zip64 ? 0xFFFF : (guint) n);
  put32 (b, zip64 ? 0xFFFFFFFFu : cd_len); put32 (b, zip64 ? 0xFFFFFFFFu : cd_off); put16 (b, 0);
  return b;
}

/* a '<f4' .npy of the given values (1-D), written by hand */
static GByteArray *
make_npy (const float *v,
          gsize        n)
{
  GByteArray *b = g_byte_array_new ();
  g_autofree char *h = g_strdup_printf ("{'descr': '<f4', 'fortran_order': False, 'shape': (%" G_GSIZE_FORMAT ",), }", n);
  GString *hdr = g_string_new (h);

  while ((10 + hdr->len + 1) % 64 != 0)
    g_string_append_c (hdr, ' ');
  g_string_append_c (hdr, '\n');
  g_byte_array_append (b, (const guint8 *) "\x93NUMPY\x01\x00", 8);
  put16 (b, (guint) hdr->len);
  g_byte_array_append (b, (const guint8 *) hdr->str, (guint) hdr->len);
  for (gsize i = 0; i < n; i++)
    {
      guint32 u;
      memcpy (&u, &v[i], 4);
      put32 (b, u);
    }
  g_string_free (hdr, TRUE);
  return b;
}

static void
expect_error (GByteArray *zip,
              RpeStatus   code,
              const char *needle)
{
  g_autoptr (GError) error = NULL;
  RpeTensorSet *set = rpe_npz_read_bytes (zip->data, zip->len, "t.npz", &error);

  g_assert_null (set);
  g_assert_error (error, RPE_ERROR, (int) code);
  g_assert_nonnull (strstr (error->message, "t.npz"));
  if (needle != NULL && strstr (error->message, needle) == NULL)
    g_error ("message '%s' lacks '%s'", error->message, needle);
}

/* ---- fixtures written by numpy ----------------------------------------- */

static void
check_fixture (const char *file)
{
  static const char *const names[] = { "a", "b", "layers.spe.gate" };
  static const RpeDType dtypes[] = { RPE_DTYPE_F32, RPE_DTYPE_F64, RPE_DTYPE_F16 };
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "fixtures", file, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeTensorSet) set = rpe_npz_read (path, &error);
  g_autoptr (RpeTensorSet) set2 = NULL;

  g_assert_no_error (error);
  g_assert_cmpuint (rpe_tensor_set_size (set), ==, 3);
  for (gsize i = 0; i < 3; i++)
    {
      g_autofree char *npy = g_strdup_printf ("%s.npy", names[i]);
      g_autofree char *np = g_test_build_filename (G_TEST_DIST, "fixtures", "arrays", npy, NULL);
      g_autoptr (RpeTensor) ref = rpe_npy_read (np, &error);
      const RpeTensor *t = rpe_tensor_set_get (set, i);

      g_assert_no_error (error);
      g_assert_cmpstr (t->name, ==, names[i]);
      g_assert_cmpint (t->dtype, ==, dtypes[i]);
      g_assert_cmpuint (t->ndim, ==, ref->ndim);
      for (gsize d = 0; d < t->ndim; d++)
        g_assert_cmpuint (t->shape[d], ==, ref->shape[d]);
      g_assert_cmpuint (t->n_elements, ==, ref->n_elements);
      g_assert_cmpmem (t->data, t->n_elements * 4, ref->data, ref->n_elements * 4);
    }
  /* closed forms: a = linspace(-1, 1, 12), b = arange(5) / 7 */
  for (gsize i = 0; i < 12; i++)
    g_assert_cmpfloat_with_epsilon (rpe_tensor_set_get (set, 0)->data[i], -1.0 + 2.0 * i / 11.0, 1e-6);
  for (gsize i = 0; i < 5; i++)
    g_assert_cmpfloat_with_epsilon (rpe_tensor_set_get (set, 1)->data[i], i / 7.0, 1e-7);

  /* and through the checkpoint dispatch */
  set2 = rpe_checkpoint_read (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rpe_tensor_set_size (set2), ==, 3);
  g_assert_nonnull (rpe_tensor_set_lookup (set2, "layers.spe.gate"));
}

static void
test_fixtures (void)
{
  check_fixture ("arrays.npz");             /* np.savez: stored */
  check_fixture ("arrays-compressed.npz");  /* np.savez_compressed: deflated */
}

/* ---- hand-made archives ------------------------------------------------ */

static void
test_handmade (void)
{
  const float v1[] = { 1.0f, -2.0f, 0.5f }, v2[] = { 3.25f, 1e-3f, -7.0f, 8.0f, 0.0f };
  g_autoptr (GByteArray) n1 = make_npy (v1, 3);
  g_autoptr (GByteArray) n2 = make_npy (v2, 5);

  for (int variant = 0; variant < 4; variant++)
    {
      gboolean deflate = variant & 1, zip64 = (variant & 2) != 0;
      Member m[] = {
        { "first.npy", n1->data, n1->len, deflate, 0, 0, 0 },
        { "dir/second.npy", n2->data, n2->len, !deflate, 0, 0, 0 },
      };
      g_autoptr (GByteArray) z = make_zip (m, 2, zip64);
      g_autoptr (GError) error = NULL;
      g_autoptr (RpeTensorSet) set = rpe_npz_read_bytes (z->data, z->len, "t.npz", &error);
      g_autoptr (RpeZip) zip = rpe_zip_open (z->data, z->len, "t.npz", &error);

      g_assert_no_error (error);
      g_assert_cmpuint (rpe_tensor_set_size (set), ==, 2);
      g_assert_cmpstr (rpe_tensor_set_get (set, 0)->name, ==, "first");
      g_assert_cmpstr (rpe_tensor_set_get (set, 1)->name, ==, "dir/second");
      g_assert_cmpmem (rpe_tensor_set_get (set, 0)->data, 12, v1, 12);
      g_assert_cmpmem (rpe_tensor_set_get (set, 1)->data, 20, v2, 20);
      g_assert_cmpuint (rpe_zip_n_entries (zip), ==, 2);
      g_assert_cmpint (rpe_zip_find (zip, "dir/second.npy"), ==, 1);
      g_assert_cmpint (rpe_zip_find (zip, "nope"), ==, -1);
      g_assert_cmpuint (rpe_zip_entry_size (zip, 1), ==, n2->len);
    }

  /* an empty archive is an empty set */
  {
    g_autoptr (GByteArray) z = make_zip (NULL, 0, FALSE);
    g_autoptr (GError) error = NULL;
    g_autoptr (RpeTensorSet) set = rpe_npz_read_bytes (z->data, z->len, "t.npz", &error);

    g_assert_no_error (error);
    g_assert_cmpuint (rpe_tensor_set_size (set), ==, 0);
  }
}

static void
test_errors (void)
{
  const float v[] = { 1.0f, 2.0f };
  g_autoptr (GByteArray) npy = make_npy (v, 2);

  /* CRC mismatch, stored and deflated */
  for (int d = 0; d < 2; d++)
    {
      Member m[] = { { "x.npy", npy->data, npy->len, d, 0x10, 0, 0 } };
      g_autoptr (GByteArray) z = make_zip (m, 1, FALSE);
      expect_error (z, RPE_ERROR_FORMAT, "CRC");
    }
  /* a member that is not an .npy */
  {
    Member m[] = { { "x.npy", npy->data, npy->len, FALSE, 0, 0, 0 }, { "notes.txt", (const guint8 *) "hi", 2, FALSE, 0, 0, 0 } };
    g_autoptr (GByteArray) z = make_zip (m, 2, FALSE);
    expect_error (z, RPE_ERROR_FORMAT, "notes.txt");
  }
  /* an .npy member that is not an .npy inside */
  {
    Member m[] = { { "x.npy", (const guint8 *) "garbage!", 8, FALSE, 0, 0, 0 } };
    g_autoptr (GByteArray) z = make_zip (m, 1, FALSE);
    expect_error (z, RPE_ERROR_FORMAT, "x.npy");
  }
  /* encrypted, unknown method, duplicate names */
  {
    Member m[] = { { "x.npy", npy->data, npy->len, FALSE, 0, 1, 0 } };
    g_autoptr (GByteArray) z = make_zip (m, 1, FALSE);
    expect_error (z, RPE_ERROR_UNSUPPORTED, "encrypted");
  }
  {
    Member m[] = { { "x.npy", npy->data, npy->len, FALSE, 0, 0, 12 } };
    g_autoptr (GByteArray) z = make_zip (m, 1, FALSE);
    expect_error (z, RPE_ERROR_UNSUPPORTED, "method 12");
  }
  {
    Member m[] = { { "x.npy", npy->data, npy->len, FALSE, 0, 0, 0 }, { "x.npy", npy->data, npy->len, FALSE, 0, 0, 0 } };
    g_autoptr (GByteArray) z = make_zip (m, 2, FALSE);
    expect_error (z, RPE_ERROR_FORMAT, "twice");
  }
  /* deflate data that inflates to more than declared: patch the sizes down */
  {
    Member m[] = { { "x.npy", npy->data, npy->len, TRUE, 0, 0, 0 } };
    g_autoptr (GByteArray) z = make_zip (m, 1, FALSE);
    guint8 *cd = z->data + z->len - 22 - (46 + 5);
    guint32 usize = (guint32) npy->len - 1;

    g_assert_cmpint (cd[0], ==, 0x50);
    memcpy (cd + 24, &usize, 4);     /* little-endian host */
    /* the local header disagrees with the directory: inconsistent */
    expect_error (z, RPE_ERROR_FORMAT, "inconsistent");
    /* both agree: the data inflates past the declared size */
    memcpy (z->data + 22, &usize, 4);
    expect_error (z, RPE_ERROR_FORMAT, "more than its declared");
  }
  /* overlapping members: B's local header and data sit inside A's data */
  {
    g_autoptr (GByteArray) inner = g_byte_array_new ();
    g_autoptr (GByteArray) z = NULL;
    guint32 crc = ref_crc32 (npy->data, npy->len);
    Member m[1];

    put32 (inner, 0x04034b50); put16 (inner, 20); put16 (inner, 0); put16 (inner, 0); put16 (inner, 0);
    put16 (inner, 0); put32 (inner, crc); put32 (inner, npy->len); put32 (inner, npy->len);
    put16 (inner, 5); put16 (inner, 0);
    g_byte_array_append (inner, (const guint8 *) "b.npy", 5);
    g_byte_array_append (inner, npy->data, npy->len);
    m[0] = (Member) { "a.npy", inner->data, inner->len, FALSE, 0, 0, 0 };
    z = make_zip (m, 1, FALSE);
    /* append a second central directory entry for b.npy at offset 30 + 5 */
    {
      guint32 cd_off, n_cd = 46 + 5;
      g_autoptr (GByteArray) z2 = g_byte_array_new ();

      memcpy (&cd_off, z->data + z->len - 6, 4);
      g_byte_array_append (z2, z->data, cd_off + n_cd);
      put32 (z2, 0x02014b50); put16 (z2, 20); put16 (z2, 20); put16 (z2, 0); put16 (z2, 0);
      put16 (z2, 0); put16 (z2, 0); put32 (z2, crc); put32 (z2, npy->len); put32 (z2, npy->len);
      put16 (z2, 5); put16 (z2, 0); put16 (z2, 0); put16 (z2, 0); put16 (z2, 0); put32 (z2, 0); put32 (z2, 35);
      g_byte_array_append (z2, (const guint8 *) "b.npy", 5);
      put32 (z2, 0x06054b50); put16 (z2, 0); put16 (z2, 0); put16 (z2, 2); put16 (z2, 2);
      put32 (z2, 2 * n_cd); put32 (z2, cd_off); put16 (z2, 0);
      /* libzip reads both; the budget bounds what overlapping members can
       * cost (and compressed sizes adding up to more than the file are refused
       * as overlap, see test_overlap_bomb); here a.npy is not an array */
      expect_error (z2, RPE_ERROR_FORMAT, "a.npy");
    }
  }
  /* no end record; a name mismatch between local and central headers */
  {
    Member m[] = { { "x.npy", npy->data, npy->len, FALSE, 0, 0, 0 } };
    g_autoptr (GByteArray) z = make_zip (m, 1, FALSE);

    z->data[z->len - 22] = 'X';
    expect_error (z, RPE_ERROR_FORMAT, "end-of-central-directory");
    z->data[z->len - 22] = 0x50;
    z->data[30] = 'y';
    expect_error (z, RPE_ERROR_FORMAT, "local header");
  }
  /* too many members (zip64 count) */
  {
    Member m[] = { { "x.npy", npy->data, npy->len, FALSE, 0, 0, 0 } };
    g_autoptr (GByteArray) z = make_zip (m, 1, TRUE);
    guint64 many = 1000000;
    guint8 *z64 = z->data + z->len - 22 - 20 - 56;

    g_assert_cmpint (z64[0], ==, 0x50);
    memcpy (z64 + 24, &many, 8);
    memcpy (z64 + 32, &many, 8);
    expect_error (z, RPE_ERROR_UNSUPPORTED, "at most");
  }
  /* the memory budget is checked before inflating */
  {
    g_autofree float *big = g_new0 (float, 50000);
    g_autoptr (GByteArray) bnpy = make_npy (big, 50000);
    Member m[] = { { "x.npy", bnpy->data, bnpy->len, TRUE, 0, 0, 0 } };
    g_autoptr (GByteArray) z = make_zip (m, 1, FALSE);

    rpe_budget_set (100000);
    expect_error (z, RPE_ERROR_NO_MEMORY, "budget");
    rpe_budget_set (0);
  }
}

/* Every truncation and many single-byte corruptions of valid archives either
 * read or fail with an error: never a crash (ASan/valgrind make this strict). */
static void
test_mutations (void)
{
  const float v[] = { 1.0f, 2.0f, 3.0f };
  g_autoptr (GByteArray) npy = make_npy (v, 3);

  for (int variant = 0; variant < 3; variant++)
    {
      Member m[] = { { "a.npy", npy->data, npy->len, variant == 1, 0, 0, 0 },
                     { "b.npy", npy->data, npy->len, FALSE, 0, 0, 0 } };
      g_autoptr (GByteArray) z = make_zip (m, 2, variant == 2);
      guint n_ok = 0, n_err = 0;

      for (gsize cut = 0; cut < z->len; cut++)
        {
          g_autoptr (GError) error = NULL;
          g_autofree guint8 *copy = g_memdup2 (z->data, cut);
          RpeTensorSet *set = rpe_npz_read_bytes (copy, cut, "t.npz", &error);

          g_assert_null (set);
          g_assert_nonnull (error);
        }
      for (gsize i = 0; i < z->len; i++)
        for (guint x = 1; x < 256; x <<= 7)
          {
            g_autoptr (GError) error = NULL;
            g_autofree guint8 *copy = g_memdup2 (z->data, z->len);
            RpeTensorSet *set;

            copy[i] ^= (guint8) x;
            set = rpe_npz_read_bytes (copy, z->len, "t.npz", &error);
            g_assert_true ((set == NULL) == (error != NULL));
            if (set != NULL)
              n_ok++;
            else
              n_err++;
            if (set != NULL)
              rpe_tensor_set_free (set);
          }
      /* most corruptions must be caught (CRC, structure) */
      g_assert_cmpuint (n_err, >, n_ok);
    }
}

/* A member name with a NUL byte in it is refused (libzip hands names over as C
 * strings: "a.npy\0x" and "a.npy" would read the same). */
static void
test_nul_name (void)
{
  static const float v[2] = { 1, 2 };
  g_autoptr (GByteArray) npy = make_npy (v, 2);
  Member m[2] = {
    { "a.npy\0hidden.npy", npy->data, npy->len, FALSE, 0, 0, 0, 16 },
    { "b.npy", npy->data, npy->len, FALSE, 0, 0, 0, 0 },
  };

  for (int zip64 = 0; zip64 < 2; zip64++)
    {
      g_autoptr (GByteArray) z = make_zip (m, 2, zip64);

      expect_error (z, RPE_ERROR_FORMAT, "NUL byte");
    }
  /* and the same archive with a plain name is read */
  {
    g_autoptr (GError) error = NULL;
    g_autoptr (GByteArray) z = NULL;
    RpeTensorSet *set;

    m[0].name_len = 0;
    z = make_zip (m, 2, FALSE);
    set = rpe_npz_read_bytes (z->data, z->len, "t.npz", &error);
    g_assert_no_error (error);
    g_assert_cmpuint (rpe_tensor_set_size (set), ==, 2);
    rpe_tensor_set_free (set);
  }
}

/* protocol-2 pickle of a state_dict of n one-element float tensors "t<i>",
 * each in its own storage "<i>" (what torch.save writes), set in batches of
 * 1000 as pickle.py does. */
static GByteArray *
many_tensors_pickle (guint n)
{
  GByteArray *b = g_byte_array_new ();

#define APPEND_S(s) g_byte_array_append (b, (const guint8 *) (s), sizeof (s) - 1)
  APPEND_S ("\x80\x02}");
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *key = g_strdup_printf ("t%u", i);
      g_autofree char *skey = g_strdup_printf ("%u", i);

      if (i % 1000 == 0)
        APPEND_S ("(");
      APPEND_S ("X");
      put32 (b, (guint32) strlen (key));
      g_byte_array_append (b, (const guint8 *) key, (guint) strlen (key));
      APPEND_S ("ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\nX");
      put32 (b, (guint32) strlen (skey));
      g_byte_array_append (b, (const guint8 *) skey, (guint) strlen (skey));
      APPEND_S ("X\x03\x00\x00\x00" "cpuK\x01tQK\x00K\x01\x85K\x01\x85\x89" "ccollections\nOrderedDict\n)RtR");
      if (i % 1000 == 999 || i + 1 == n)
        APPEND_S ("u");
    }
  APPEND_S (".");
#undef APPEND_S
  return b;
}

/* The tensor limit is on tensors: a .pt of 65,536 tensors (65,538 zip members
 * with data.pkl and version) is read; 65,537 are refused as too many tensors. */
static void
test_pt_many_tensors (void)
{
  for (guint n = RPE_TENSOR_SET_MAX_TENSORS; n <= RPE_TENSOR_SET_MAX_TENSORS + 1; n++)
    {
      g_autoptr (GByteArray) pkl = many_tensors_pickle (n);
      g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
      g_autofree Member *m = g_new0 (Member, n + 2);
      g_autofree float *values = g_new (float, n);
      g_autoptr (GByteArray) z = NULL;
      g_autoptr (GBytes) bytes = NULL;
      g_autoptr (GError) error = NULL;
      RpeTensorSet *set;

      m[0].name = "archive/data.pkl";
      m[0].data = pkl->data;
      m[0].len = pkl->len;
      m[1].name = "archive/version";
      m[1].data = (const guint8 *) "3\n";
      m[1].len = 2;
      for (guint i = 0; i < n; i++)
        {
          char *name = g_strdup_printf ("archive/data/%u", i);

          values[i] = (float) i;
          g_ptr_array_add (names, name);
          m[i + 2].name = name;
          m[i + 2].data = (const guint8 *) &values[i];
          m[i + 2].len = 4;
        }
      z = make_zip (m, n + 2, TRUE);
      bytes = g_bytes_new_static (z->data, z->len);
      set = rpe_checkpoint_read_bytes (bytes, "many.pt", &error);
      if (n == RPE_TENSOR_SET_MAX_TENSORS)
        {
          g_assert_no_error (error);
          g_assert_cmpuint (rpe_tensor_set_size (set), ==, n);
          g_assert_cmpfloat (rpe_tensor_set_lookup (set, "t65535")->data[0], ==, 65535.0f);
          rpe_tensor_set_free (set);
        }
      else
        {
          g_assert_null (set);
          g_assert_nonnull (error);
          g_test_message ("%s", error->message);
          g_assert_nonnull (strstr (error->message, "tensors"));
        }
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/core/npz/fixtures", test_fixtures);
  g_test_add_func ("/core/npz/handmade", test_handmade);
  g_test_add_func ("/core/npz/errors", test_errors);
  g_test_add_func ("/core/npz/mutations", test_mutations);
  g_test_add_func ("/core/npz/nul-name", test_nul_name);
  g_test_add_func ("/core/npz/pt-many-tensors", test_pt_many_tensors);
  return g_test_run ();
}

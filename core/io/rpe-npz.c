#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "rpe-alloc.h"
#include "rpe-error.h"
#include "rpe-npy.h"
#include "rpe-npz.h"

/* The zip format (PKWARE APPNOTE.TXT 6.3.x), the parts we need:
 *
 *   [local header 30 B + name + extra][data] ...   central directory   [zip64 EOCD][zip64 locator]   EOCD
 *
 * The central directory is authoritative for sizes, method and CRC (an entry
 * written with a data descriptor has zeros in its local header).  The local
 * header is only used to find where the data starts, and its name must match
 * the directory's (as Python's zipfile checks) so that two readers cannot see
 * different contents. */

#define SIG_LOCAL        0x04034b50u
#define SIG_CENTRAL      0x02014b50u
#define SIG_EOCD         0x06054b50u
#define SIG_ZIP64_EOCD   0x06064b50u
#define SIG_ZIP64_LOC    0x07064b50u

#define EOCD_LEN         22
#define ZIP64_LOC_LEN    20
#define ZIP64_EOCD_LEN   56
#define CENTRAL_LEN      46
#define LOCAL_LEN        30

#define METHOD_STORED    0
#define METHOD_DEFLATED  8

typedef struct
{
  char    *name;
  guint16  flags;
  guint16  method;
  guint32  crc;
  guint64  csize;
  guint64  usize;
  guint64  local_offset;
  guint64  data_offset;     /* filled from the local header */
} Entry;

struct _RpeZip
{
  const guint8 *data;
  gsize         length;
  char         *name;
  Entry        *entries;
  gsize         n_entries;
  GHashTable   *by_name;    /* name -> index + 1 */
};

static guint16
rd16 (const guint8 *p)
{
  return (guint16) (p[0] | (p[1] << 8));
}

static guint32
rd32 (const guint8 *p)
{
  return (guint32) p[0] | ((guint32) p[1] << 8) | ((guint32) p[2] << 16) | ((guint32) p[3] << 24);
}

static guint64
rd64 (const guint8 *p)
{
  return (guint64) rd32 (p) | ((guint64) rd32 (p + 4) << 32);
}

/* CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), table driven. */
static guint32 crc_table[256];

static gpointer
crc_init (gpointer unused)
{
  for (guint32 n = 0; n < 256; n++)
    {
      guint32 c = n;

      for (int k = 0; k < 8; k++)
        c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      crc_table[n] = c;
    }
  return NULL;
}

static guint32
crc32_bytes (const guint8 *p,
             gsize         n)
{
  static GOnce once = G_ONCE_INIT;
  guint32 c = 0xFFFFFFFFu;

  g_once (&once, crc_init, NULL);
  for (gsize i = 0; i < n; i++)
    c = crc_table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

/* [off, off + len) lies inside [0, limit) */
static gboolean
range_ok (guint64 off,
          guint64 len,
          guint64 limit)
{
  return off <= limit && len <= limit - off;
}

static gboolean
fail (RpeZip     *zip,
      GError    **error,
      const char *what)
{
  return rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': malformed zip archive: %s", zip->name, what);
}

void
rpe_zip_free (RpeZip *zip)
{
  if (zip == NULL)
    return;
  for (gsize i = 0; i < zip->n_entries; i++)
    g_free (zip->entries[i].name);
  g_free (zip->entries);
  if (zip->by_name != NULL)
    g_hash_table_unref (zip->by_name);
  g_free (zip->name);
  g_free (zip);
}

/* Reads the zip64 extended-information extra field (id 0x0001): the values
 * whose 32-bit fields are 0xFFFFFFFF follow in this order. */
static gboolean
apply_zip64_extra (const guint8 *extra,
                   gsize         extra_len,
                   Entry        *e,
                   gboolean      need_usize,
                   gboolean      need_csize,
                   gboolean      need_offset)
{
  gsize p = 0;

  while (p + 4 <= extra_len)
    {
      guint16 id = rd16 (extra + p);
      guint16 len = rd16 (extra + p + 2);
      gsize q, end;

      if ((gsize) len > extra_len - p - 4)
        return FALSE;
      q = p + 4;
      end = q + len;
      if (id == 0x0001)
        {
          if (need_usize)
            {
              if (q + 8 > end)
                return FALSE;
              e->usize = rd64 (extra + q);
              q += 8;
            }
          if (need_csize)
            {
              if (q + 8 > end)
                return FALSE;
              e->csize = rd64 (extra + q);
              q += 8;
            }
          if (need_offset)
            {
              if (q + 8 > end)
                return FALSE;
              e->local_offset = rd64 (extra + q);
            }
          return TRUE;
        }
      p = end;
    }
  return !need_usize && !need_csize && !need_offset;
}

static int
compare_offsets (const void *a,
                 const void *b)
{
  const Entry *const *x = a;
  const Entry *const *y = b;

  return (*x)->local_offset < (*y)->local_offset ? -1 : (*x)->local_offset > (*y)->local_offset;
}

RpeZip *
rpe_zip_open (const guint8  *data,
              gsize          length,
              const char    *name_for_errors,
              GError       **error)
{
  g_autoptr (RpeZip) zip = g_new0 (RpeZip, 1);
  gsize eocd = 0, search_floor;
  gboolean found = FALSE;
  guint64 n_entries, cd_size, cd_offset, cd_end, p;
  const Entry **sorted = NULL;

  zip->data = data;
  zip->length = length;
  zip->name = g_strdup (name_for_errors != NULL ? name_for_errors : "(zip)");

  if (length < EOCD_LEN)
    {
      fail (zip, error, "too short for an end-of-central-directory record");
      return NULL;
    }
  /* The EOCD is followed only by its comment (at most 65535 bytes). */
  search_floor = length - EOCD_LEN > 65535 ? length - EOCD_LEN - 65535 : 0;
  for (gsize i = length - EOCD_LEN + 1; i-- > search_floor;)
    if (rd32 (data + i) == SIG_EOCD && (gsize) rd16 (data + i + 20) == length - i - EOCD_LEN)
      {
        eocd = i;
        found = TRUE;
        break;
      }
  if (!found)
    {
      fail (zip, error, "no end-of-central-directory record");
      return NULL;
    }
  if (rd16 (data + eocd + 4) != 0 || rd16 (data + eocd + 6) != 0
      || rd16 (data + eocd + 8) != rd16 (data + eocd + 10))
    {
      rpe_set_error (error, RPE_ERROR_UNSUPPORTED,
                     "'%s': multi-volume zip archives are not supported", zip->name);
      return NULL;
    }
  n_entries = rd16 (data + eocd + 10);
  cd_size = rd32 (data + eocd + 12);
  cd_offset = rd32 (data + eocd + 16);

  if (eocd >= ZIP64_LOC_LEN && rd32 (data + eocd - ZIP64_LOC_LEN) == SIG_ZIP64_LOC)
    {
      const guint8 *loc = data + eocd - ZIP64_LOC_LEN;
      guint64 z = rd64 (loc + 8);
      const guint8 *r;

      if (rd32 (loc + 4) != 0 || rd32 (loc + 16) > 1)
        {
          rpe_set_error (error, RPE_ERROR_UNSUPPORTED,
                         "'%s': multi-volume zip archives are not supported", zip->name);
          return NULL;
        }
      if (!range_ok (z, ZIP64_EOCD_LEN, eocd - ZIP64_LOC_LEN) || rd32 (data + z) != SIG_ZIP64_EOCD)
        {
          fail (zip, error, "bad zip64 end-of-central-directory record");
          return NULL;
        }
      r = data + z;
      if (rd32 (r + 16) != 0 || rd32 (r + 20) != 0 || rd64 (r + 24) != rd64 (r + 32))
        {
          rpe_set_error (error, RPE_ERROR_UNSUPPORTED,
                         "'%s': multi-volume zip archives are not supported", zip->name);
          return NULL;
        }
      n_entries = rd64 (r + 32);
      cd_size = rd64 (r + 40);
      cd_offset = rd64 (r + 48);
      cd_end = z;
    }
  else
    cd_end = eocd;

  if (n_entries > RPE_ZIP_MAX_ENTRIES)
    {
      rpe_set_error (error, RPE_ERROR_UNSUPPORTED,
                     "'%s': the zip archive has %" G_GUINT64_FORMAT " members; at most %u are supported",
                     zip->name, n_entries, RPE_ZIP_MAX_ENTRIES);
      return NULL;
    }
  if (!range_ok (cd_offset, cd_size, cd_end) || n_entries > cd_size / CENTRAL_LEN)
    {
      fail (zip, error, "the central directory does not fit in the file");
      return NULL;
    }

  zip->entries = g_new0 (Entry, n_entries > 0 ? n_entries : 1);
  zip->by_name = g_hash_table_new (g_str_hash, g_str_equal);
  p = cd_offset;
  for (guint64 k = 0; k < n_entries; k++)
    {
      Entry *e = &zip->entries[k];
      const guint8 *c;
      guint16 nlen, elen, clen;
      gboolean need_u, need_c, need_o;

      if (!range_ok (p, CENTRAL_LEN, cd_offset + cd_size) || rd32 (data + p) != SIG_CENTRAL)
        {
          fail (zip, error, "bad central directory entry");
          return NULL;
        }
      c = data + p;
      e->flags = rd16 (c + 8);
      e->method = rd16 (c + 10);
      e->crc = rd32 (c + 16);
      e->csize = rd32 (c + 20);
      e->usize = rd32 (c + 24);
      nlen = rd16 (c + 28);
      elen = rd16 (c + 30);
      clen = rd16 (c + 32);
      e->local_offset = rd32 (c + 42);
      if (!range_ok (p + CENTRAL_LEN, (guint64) nlen + elen + clen, cd_offset + cd_size))
        {
          fail (zip, error, "a central directory entry overruns the directory");
          return NULL;
        }
      if (nlen == 0 || nlen > RPE_ZIP_MAX_NAME_LEN || memchr (c + CENTRAL_LEN, '\0', nlen) != NULL)
        {
          fail (zip, error, "a member name is empty, too long or holds a NUL byte");
          return NULL;
        }
      /* set the name first so that rpe_zip_free frees it on every path */
      e->name = g_strndup ((const char *) c + CENTRAL_LEN, nlen);
      zip->n_entries = k + 1;
      need_u = e->usize == 0xFFFFFFFFu;
      need_c = e->csize == 0xFFFFFFFFu;
      need_o = e->local_offset == 0xFFFFFFFFu;
      if ((need_u || need_c || need_o)
          && !apply_zip64_extra (c + CENTRAL_LEN + nlen, elen, e, need_u, need_c, need_o))
        {
          fail (zip, error, "bad zip64 extra field");
          return NULL;
        }
      if (e->flags & 0x0001)
        {
          rpe_set_error (error, RPE_ERROR_UNSUPPORTED,
                         "'%s': member '%s' is encrypted; encrypted zip archives are not supported",
                         zip->name, e->name);
          return NULL;
        }
      if (e->method != METHOD_STORED && e->method != METHOD_DEFLATED)
        {
          rpe_set_error (error, RPE_ERROR_UNSUPPORTED,
                         "'%s': member '%s' uses zip compression method %u; only stored (0) and "
                         "deflated (8) are supported", zip->name, e->name, e->method);
          return NULL;
        }
      if (e->method == METHOD_STORED && e->csize != e->usize)
        {
          fail (zip, error, "a stored member's compressed and uncompressed sizes differ");
          return NULL;
        }
      if (e->usize > RPE_ZIP_MAX_ENTRY_BYTES)
        {
          rpe_set_error (error, RPE_ERROR_UNSUPPORTED,
                         "'%s': member '%s' is %" G_GUINT64_FORMAT " bytes uncompressed, more than the %"
                         G_GUINT64_FORMAT "-byte limit", zip->name, e->name, e->usize,
                         (guint64) RPE_ZIP_MAX_ENTRY_BYTES);
          return NULL;
        }
      if (g_hash_table_contains (zip->by_name, e->name))
        {
          rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the zip archive holds '%s' twice",
                         zip->name, e->name);
          return NULL;
        }
      g_hash_table_insert (zip->by_name, e->name, GSIZE_TO_POINTER ((gsize) k + 1));

      /* the local header: inside the file, before the central directory, same name */
      if (!range_ok (e->local_offset, LOCAL_LEN, cd_offset)
          || rd32 (data + e->local_offset) != SIG_LOCAL)
        {
          fail (zip, error, "bad local header offset");
          return NULL;
        }
      {
        const guint8 *l = data + e->local_offset;
        guint16 lnlen = rd16 (l + 26), lelen = rd16 (l + 28);

        if (lnlen != nlen || !range_ok (e->local_offset + LOCAL_LEN, nlen, cd_offset)
            || memcmp (l + LOCAL_LEN, e->name, nlen) != 0)
          {
            fail (zip, error, "a local header's name differs from the central directory's");
            return NULL;
          }
        e->data_offset = e->local_offset + LOCAL_LEN + nlen + lelen;
        if (!range_ok (e->data_offset, e->csize, cd_offset))
          {
            fail (zip, error, "a member's data does not fit before the central directory");
            return NULL;
          }
      }
      p += CENTRAL_LEN + (guint64) nlen + elen + clen;
    }

  /* no two members may share bytes (overlapping entries are a classic way to
   * build zip bombs and to confuse readers) */
  if (zip->n_entries > 1)
    {
      sorted = g_new (const Entry *, zip->n_entries);
      for (gsize i = 0; i < zip->n_entries; i++)
        sorted[i] = &zip->entries[i];
      qsort (sorted, zip->n_entries, sizeof *sorted, compare_offsets);
      for (gsize i = 0; i + 1 < zip->n_entries; i++)
        if (sorted[i]->data_offset + sorted[i]->csize > sorted[i + 1]->local_offset)
          {
            g_free (sorted);
            fail (zip, error, "members overlap");
            return NULL;
          }
      g_free (sorted);
    }
  return g_steal_pointer (&zip);
}

gsize
rpe_zip_n_entries (const RpeZip *zip)
{
  return zip->n_entries;
}

const char *
rpe_zip_entry_name (const RpeZip *zip,
                    gsize         index)
{
  return index < zip->n_entries ? zip->entries[index].name : NULL;
}

guint64
rpe_zip_entry_size (const RpeZip *zip,
                    gsize         index)
{
  return index < zip->n_entries ? zip->entries[index].usize : 0;
}

gssize
rpe_zip_find (const RpeZip *zip,
              const char   *name)
{
  gpointer v = g_hash_table_lookup (zip->by_name, name);

  return v != NULL ? (gssize) GPOINTER_TO_SIZE (v) - 1 : -1;
}

static void
free_buffer (gpointer p)
{
  rpe_free (p);
}

/* Inflates exactly e->usize bytes (raw deflate, no zlib/gzip header). */
static guint8 *
inflate_entry (const RpeZip *zip,
               const Entry  *e,
               GError      **error)
{
  g_autoptr (GZlibDecompressor) z = g_zlib_decompressor_new (G_ZLIB_COMPRESSOR_FORMAT_RAW);
  const guint8 *in = zip->data + e->data_offset;
  gsize in_left = (gsize) e->csize, out_done = 0;
  RpeStatus status = RPE_OK;
  guint8 *out;
  gboolean finished = FALSE;

  if (rpe_budget_check ((gsize) e->usize) != RPE_OK)
    {
      rpe_set_error (error, RPE_ERROR_NO_MEMORY,
                     "'%s': member '%s' needs %" G_GUINT64_FORMAT " bytes, more than the memory budget",
                     zip->name, e->name, e->usize);
      return NULL;
    }
  out = rpe_alloc (e->usize > 0 ? (gsize) e->usize : 1, 1, &status);
  if (out == NULL)
    {
      rpe_set_error (error, status, "'%s': member '%s': out of memory", zip->name, e->name);
      return NULL;
    }
  while (!finished)
    {
      g_autoptr (GError) local = NULL;
      guint8 spare[16];
      gsize n_read = 0, n_written = 0;
      gboolean at_end = out_done == (gsize) e->usize;
      GConverterResult r;

      /* once the declared size is reached, any further output is an error */
      r = g_converter_convert (G_CONVERTER (z), in, in_left,
                               at_end ? spare : out + out_done,
                               at_end ? sizeof spare : (gsize) e->usize - out_done,
                               G_CONVERTER_INPUT_AT_END, &n_read, &n_written, &local);
      if (r == G_CONVERTER_ERROR)
        {
          rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': member '%s': bad deflate data (%s)",
                         zip->name, e->name, local->message);
          rpe_free (out);
          return NULL;
        }
      if (at_end && n_written > 0)
        {
          rpe_set_error (error, RPE_ERROR_FORMAT,
                         "'%s': member '%s' inflates to more than its declared %" G_GUINT64_FORMAT " bytes",
                         zip->name, e->name, e->usize);
          rpe_free (out);
          return NULL;
        }
      in += n_read;
      in_left -= n_read;
      out_done += n_written;
      finished = r == G_CONVERTER_FINISHED;
      if (!finished && n_read == 0 && n_written == 0)
        {
          rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': member '%s': truncated deflate data",
                         zip->name, e->name);
          rpe_free (out);
          return NULL;
        }
    }
  if (out_done != (gsize) e->usize)
    {
      rpe_set_error (error, RPE_ERROR_FORMAT,
                     "'%s': member '%s' inflates to %" G_GSIZE_FORMAT " bytes, not the declared %"
                     G_GUINT64_FORMAT, zip->name, e->name, out_done, e->usize);
      rpe_free (out);
      return NULL;
    }
  return out;
}

GBytes *
rpe_zip_extract (const RpeZip  *zip,
                 gsize          index,
                 GError       **error)
{
  const Entry *e;
  const guint8 *bytes;
  guint8 *owned = NULL;
  guint32 crc;

  g_return_val_if_fail (index < zip->n_entries, NULL);
  e = &zip->entries[index];
  if (e->method == METHOD_STORED)
    bytes = zip->data + e->data_offset;
  else
    {
      owned = inflate_entry (zip, e, error);
      if (owned == NULL)
        return NULL;
      bytes = owned;
    }
  crc = crc32_bytes (bytes, (gsize) e->usize);
  if (crc != e->crc)
    {
      rpe_set_error (error, RPE_ERROR_FORMAT,
                     "'%s': member '%s' is corrupt (CRC-32 %08x, the directory says %08x)",
                     zip->name, e->name, crc, e->crc);
      rpe_free (owned);
      return NULL;
    }
  if (owned == NULL)
    return g_bytes_new_static (bytes, (gsize) e->usize);
  return g_bytes_new_with_free_func (owned, (gsize) e->usize, free_buffer, owned);
}

/* ---- .npz -------------------------------------------------------------- */

RpeTensorSet *
rpe_npz_read_bytes (const guint8 *data,
                    gsize         length,
                    const char   *name_for_errors,
                    GError      **error)
{
  const char *name = name_for_errors != NULL ? name_for_errors : "(npz)";
  g_autoptr (RpeZip) zip = NULL;
  g_autoptr (RpeTensorSet) set = NULL;
  guint64 total = 0;

  zip = rpe_zip_open (data, length, name, error);
  if (zip == NULL)
    return NULL;
  if (zip->n_entries > RPE_NPZ_MAX_TENSORS)
    {
      rpe_set_error (error, RPE_ERROR_UNSUPPORTED, "'%s': too many arrays", name);
      return NULL;
    }
  /* every member must be an .npy; the arrays' total size (their bytes in the
   * file bound their float32 size within a factor 2) is checked before any is read */
  for (gsize i = 0; i < zip->n_entries; i++)
    {
      const char *m = zip->entries[i].name;

      if (!g_str_has_suffix (m, ".npy") || strlen (m) == 4)
        {
          rpe_set_error (error, RPE_ERROR_FORMAT,
                         "'%s': member '%s' is not an .npy array; this is not an .npz file", name, m);
          return NULL;
        }
      if (total + zip->entries[i].usize < total)
        total = G_MAXUINT64;
      else
        total += zip->entries[i].usize;
    }
  if (total > G_MAXSIZE / 2 || rpe_budget_check ((gsize) total) != RPE_OK)
    {
      rpe_set_error (error, RPE_ERROR_NO_MEMORY,
                     "'%s': the arrays hold %" G_GUINT64_FORMAT " bytes, more than the memory budget (%"
                     G_GSIZE_FORMAT " bytes)", name, total, rpe_budget_get ());
      return NULL;
    }

  set = rpe_tensor_set_new ();
  for (gsize i = 0; i < zip->n_entries; i++)
    {
      const char *m = zip->entries[i].name;
      g_autofree char *what = g_strdup_printf ("%s:%s", name, m);
      g_autoptr (GBytes) b = rpe_zip_extract (zip, i, error);
      const guint8 *p;
      gsize n;
      RpeTensor *t;

      if (b == NULL)
        return NULL;
      p = g_bytes_get_data (b, &n);
      t = rpe_npy_read_bytes (p, n, what, error);
      if (t == NULL)
        return NULL;
      g_free (t->name);
      t->name = g_strndup (m, strlen (m) - 4);
      if (!rpe_tensor_set_add (set, t, error))
        {
          g_prefix_error (error, "'%s': ", name);
          return NULL;
        }
    }
  return g_steal_pointer (&set);
}

RpeTensorSet *
rpe_npz_read (const char  *path,
              GError     **error)
{
  GBytes *bytes = rpe_map_file (path, error);
  RpeTensorSet *set;
  gsize length;
  const guint8 *data;

  if (bytes == NULL)
    return NULL;
  data = g_bytes_get_data (bytes, &length);
  set = rpe_npz_read_bytes (data, length, path, error);
  g_bytes_unref (bytes);
  return set;
}

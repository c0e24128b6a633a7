#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <zip.h>

#include "rpe-alloc.h"
#include "rpe-error.h"
#include "rpe-file.h"
#include "rpe-npy.h"
#include "rpe-npz.h"

/* The zip container is read by libzip (Debian's libzip, fuzzed upstream), from
 * the bytes in memory, with its consistency checks on (ZIP_CHECKCONS: every
 * local header must agree with the central directory).  On top of it we keep
 * our own limits: the member count and name length, stored and deflated
 * members only, no encryption, no duplicate names, the declared size of each
 * member (and it must fit the memory budget before anything is inflated), and
 * inflation in bounded chunks that stops at the declared size: a member whose
 * data inflates to more or less than it declares is refused, as is one whose
 * CRC-32 differs.  Every buffer is charged to the caller's budget scope, so one
 * budget covers the whole file. */

typedef struct
{
  char    *name;
  guint16  method;
  guint64  csize;
  guint64  usize;
  zip_uint64_t index;     /* libzip's index */
} Entry;

struct _RpeZip
{
  zip_t        *za;
  zip_source_t *source;
  char         *name;
  Entry        *entries;
  gsize         n_entries;
  GHashTable   *by_name;    /* name -> index + 1 */
};

#define CHUNK_BYTES ((gsize) 1 << 20)   /* inflate 1 MiB at a time */

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
  if (zip->za != NULL)
    zip_discard (zip->za);          /* also frees the source */
  else if (zip->source != NULL)
    zip_source_free (zip->source);
  g_free (zip->name);
  g_free (zip);
}

/* libzip's error, as text that says what is wrong with the file */
static char *
zip_error_text (zip_error_t *ze)
{
  switch (zip_error_code_zip (ze))
    {
    case ZIP_ER_NOZIP:
      return g_strdup ("no end-of-central-directory record (not a zip archive)");
    case ZIP_ER_INCONS:
      return g_strdup_printf ("inconsistent (%s): a local header differs from the central directory, "
                              "the directory does not fit in the file, or members overlap",
                              zip_error_strerror (ze));
    case ZIP_ER_EXISTS:
      return g_strdup ("it holds a member name twice");
    case ZIP_ER_MULTIDISK:
      return g_strdup ("multi-volume zip archives are not supported");
    case ZIP_ER_MEMORY:
      return g_strdup ("its directory does not fit in memory");
    default:
      return g_strdup (zip_error_strerror (ze));
    }
}

/* The member count the end-of-central-directory record (or its zip64 twin)
 * declares, read before libzip allocates its table for it: a hostile count is
 * refused without allocating anything.  G_MAXUINT64 if there is no record
 * (libzip then says what is wrong). */
static guint64
declared_entries (const guint8 *data,
                  gsize         length)
{
  gsize floor;

  if (length < 22)
    return G_MAXUINT64;
  floor = length - 22 > 65535 ? length - 22 - 65535 : 0;
  for (gsize i = length - 22 + 1; i-- > floor;)
    {
      const guint8 *p = data + i;
      guint64 n;

      if (p[0] != 'P' || p[1] != 'K' || p[2] != 5 || p[3] != 6)
        continue;
      n = (guint64) (p[10] | p[11] << 8);
      if (n == 0xFFFF && i >= 20)
        {
          const guint8 *loc = p - 20;
          guint64 z = 0;

          if (loc[0] == 'P' && loc[1] == 'K' && loc[2] == 6 && loc[3] == 7)
            {
              for (int b = 7; b >= 0; b--)
                z = z << 8 | loc[8 + b];
              if (length >= 56 && z <= length - 56 && data[z] == 'P' && data[z + 1] == 'K' && data[z + 2] == 6
                  && data[z + 3] == 6)
                {
                  n = 0;
                  for (int b = 7; b >= 0; b--)
                    n = n << 8 | data[z + 32 + b];
                }
            }
        }
      return n;
    }
  return G_MAXUINT64;
}

static guint64
le (const guint8 *p,
    int           n)
{
  guint64 v = 0;

  for (int b = n - 1; b >= 0; b--)
    v = v << 8 | p[b];
  return v;
}

/* The member names as the central directory spells them, byte for byte:
 * libzip gives names as C strings, so a name with a NUL byte in it ("a.npy\0x")
 * would reach us cut at the NUL and two names could read the same.  A name
 * must be unambiguous: one with a NUL byte is refused.  Called after libzip
 * has accepted the archive (its directory is where the end record says). */
static gboolean
check_raw_names (RpeZip        *zip,
                 const guint8  *data,
                 gsize          length,
                 gsize          n,
                 GError       **error)
{
  gsize floor, eocd = G_MAXSIZE;
  guint64 cd;

  if (length < 22)
    return TRUE;
  floor = length - 22 > 65535 ? length - 22 - 65535 : 0;
  for (gsize i = length - 22 + 1; i-- > floor;)
    if (data[i] == 'P' && data[i + 1] == 'K' && data[i + 2] == 5 && data[i + 3] == 6)
      {
        eocd = i;
        break;
      }
  if (eocd == G_MAXSIZE)
    return fail (zip, error, "no end-of-central-directory record");
  cd = le (data + eocd + 16, 4);
  if (cd == 0xFFFFFFFFu && eocd >= 20 && le (data + eocd - 20, 4) == 0x07064b50)
    {
      guint64 z = le (data + eocd - 20 + 8, 8);

      if (z > length - 56 || le (data + z, 4) != 0x06064b50)
        return fail (zip, error, "a zip64 end record out of place");
      cd = le (data + z + 48, 8);
    }
  for (gsize k = 0; k < n; k++)
    {
      guint64 name_len, extra_len, comment_len;

      if (cd > length || length - cd < 46 || le (data + cd, 4) != 0x02014b50)
        return fail (zip, error, "a central directory entry out of place");
      name_len = le (data + cd + 28, 2);
      extra_len = le (data + cd + 30, 2);
      comment_len = le (data + cd + 32, 2);
      if (length - cd - 46 < name_len + extra_len + comment_len)
        return fail (zip, error, "a central directory entry runs past the end of the file");
      if (memchr (data + cd + 46, '\0', name_len) != NULL)
        {
          g_autofree char *shown = rpe_escape_bytes ((const char *) data + cd + 46, name_len);

          rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the member name '%s' holds a NUL byte (member "
                         "names must be unambiguous)", zip->name, shown);
          return FALSE;
        }
      cd += 46 + name_len + extra_len + comment_len;
    }
  return TRUE;
}

RpeZip *
rpe_zip_open (const guint8  *data,
              gsize          length,
              const char    *name_for_errors,
              GError       **error)
{
  g_autoptr (RpeZip) zip = g_new0 (RpeZip, 1);
  zip_error_t ze;
  zip_int64_t n;
  gsize names_bytes = 0;
  RpeStatus charged;
  guint64 csize_sum = 0;

  zip->name = g_strdup (name_for_errors != NULL ? name_for_errors : "(zip)");
  /* libzip takes an empty buffer for an empty archive: not a zip file */
  if (length < 22)
    {
      fail (zip, error, "too short for an end-of-central-directory record");
      return NULL;
    }
  {
    guint64 declared = declared_entries (data, length);

    if (declared != G_MAXUINT64 && declared > RPE_ZIP_MAX_ENTRIES)
      {
        rpe_set_error (error, RPE_ERROR_UNSUPPORTED,
                       "'%s': the zip archive declares %" G_GUINT64_FORMAT " members; at most %u are "
                       "supported", zip->name, declared, RPE_ZIP_MAX_ENTRIES);
        return NULL;
      }
  }
  zip_error_init (&ze);
  zip->source = zip_source_buffer_create (length > 0 ? data : (const void *) "", length, 0, &ze);
  if (zip->source == NULL)
    {
      g_autofree char *why = zip_error_text (&ze);

      zip_error_fini (&ze);
      fail (zip, error, why);
      return NULL;
    }
  zip->za = zip_open_from_source (zip->source, ZIP_RDONLY | ZIP_CHECKCONS, &ze);
  if (zip->za == NULL)
    {
      g_autofree char *why = zip_error_text (&ze);

      zip_error_fini (&ze);
      /* the source is still ours */
      fail (zip, error, why);
      return NULL;
    }
  zip_error_fini (&ze);

  n = zip_get_num_entries (zip->za, 0);
  if (n < 0)
    {
      fail (zip, error, "no central directory");
      return NULL;
    }
  if ((guint64) n > RPE_ZIP_MAX_ENTRIES)
    {
      rpe_set_error (error, RPE_ERROR_UNSUPPORTED,
                     "'%s': the zip archive has %" G_GINT64_FORMAT " members; at most %u are supported",
                     zip->name, (gint64) n, RPE_ZIP_MAX_ENTRIES);
      return NULL;
    }
  if (!check_raw_names (zip, data, length, (gsize) n, error))
    return NULL;
  /* our table of members, charged to the budget like the rest of the file */
  if ((charged = rpe_budget_charge ((gsize) n * (sizeof (Entry) + 64))) != RPE_OK)
    {
      g_autofree char *limit = rpe_memory_limit_text (charged);

      rpe_set_error (error, charged, "'%s': the directory of %" G_GINT64_FORMAT " members does not fit in %s",
                     zip->name, (gint64) n, limit);
      return NULL;
    }
  zip->entries = g_new0 (Entry, n > 0 ? (gsize) n : 1);
  zip->by_name = g_hash_table_new (g_str_hash, g_str_equal);
  for (zip_int64_t k = 0; k < n; k++)
    {
      Entry *e = &zip->entries[k];
      zip_stat_t st;
      gsize nlen;

      zip_stat_init (&st);
      if (zip_stat_index (zip->za, (zip_uint64_t) k, 0, &st) != 0
          || (st.valid & (ZIP_STAT_NAME | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD))
             != (ZIP_STAT_NAME | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD))
        {
          fail (zip, error, "bad central directory entry");
          return NULL;
        }
      nlen = strlen (st.name);
      if (nlen == 0 || nlen > RPE_ZIP_MAX_NAME_LEN)
        {
          fail (zip, error, "a member name is empty or too long");
          return NULL;
        }
      names_bytes += nlen + 1;
      if ((charged = rpe_budget_charge (nlen + 1)) != RPE_OK)
        {
          g_autofree char *limit = rpe_memory_limit_text (charged);

          rpe_set_error (error, charged, "'%s': the member names (%" G_GSIZE_FORMAT " bytes so far) do not fit in %s",
                         zip->name, names_bytes, limit);
          return NULL;
        }
      /* set the name first so that rpe_zip_free frees it on every path */
      e->name = g_strdup (st.name);
      zip->n_entries = (gsize) k + 1;
      e->index = (zip_uint64_t) k;
      e->method = (guint16) st.comp_method;
      e->csize = st.comp_size;
      e->usize = st.size;
      if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE)
        {
          g_autofree char *shown = rpe_escape_name (e->name);

          rpe_set_error (error, RPE_ERROR_UNSUPPORTED,
                         "'%s': member '%s' is encrypted; encrypted zip archives are not supported",
                         zip->name, shown);
          return NULL;
        }
      if (st.comp_method != ZIP_CM_STORE && st.comp_method != ZIP_CM_DEFLATE)
        {
          g_autofree char *shown = rpe_escape_name (e->name);

          rpe_set_error (error, RPE_ERROR_UNSUPPORTED,
                         "'%s': member '%s' uses zip compression method %d; only stored (0) and "
                         "deflated (8) are supported", zip->name, shown, (int) st.comp_method);
          return NULL;
        }
      if (st.comp_method == ZIP_CM_STORE && st.comp_size != st.size)
        {
          fail (zip, error, "a stored member's compressed and uncompressed sizes differ");
          return NULL;
        }
      if (e->usize > RPE_ZIP_MAX_ENTRY_BYTES)
        {
          g_autofree char *shown = rpe_escape_name (e->name);

          rpe_set_error (error, RPE_ERROR_UNSUPPORTED,
                         "'%s': member '%s' is %" G_GUINT64_FORMAT " bytes uncompressed, more than the %"
                         G_GUINT64_FORMAT "-byte limit", zip->name, shown, e->usize,
                         (guint64) RPE_ZIP_MAX_ENTRY_BYTES);
          return NULL;
        }
      /* members that share compressed bytes (the overlapping-member zip bomb)
       * add up to more than the file */
      if (e->csize > length - csize_sum)
        {
          fail (zip, error, "members overlap (their compressed data add up to more than the file)");
          return NULL;
        }
      csize_sum += e->csize;
      if (g_hash_table_contains (zip->by_name, e->name))
        {
          g_autofree char *shown = rpe_escape_name (e->name);

          rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the zip archive holds '%s' twice",
                         zip->name, shown);
          return NULL;
        }
      g_hash_table_insert (zip->by_name, e->name, GSIZE_TO_POINTER ((gsize) k + 1));
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

GBytes *
rpe_zip_extract (const RpeZip  *zip,
                 gsize          index,
                 GError       **error)
{
  g_autofree char *shown = NULL;
  const Entry *e;
  zip_file_t *zf;
  RpeStatus status = RPE_OK;
  guint8 *out;
  gsize size, done = 0;
  guint8 spare[64];
  zip_int64_t n;

  g_return_val_if_fail (index < zip->n_entries, NULL);
  e = &zip->entries[index];
  shown = rpe_escape_name (e->name);
  if (e->usize > G_MAXSIZE / 2 || (status = rpe_budget_check ((gsize) e->usize)) != RPE_OK)
    {
      g_autofree char *limit = rpe_memory_limit_text (status != RPE_OK ? status : RPE_ERROR_NO_MEMORY);

      rpe_set_error (error, status != RPE_OK ? status : RPE_ERROR_NO_MEMORY,
                     "'%s': member '%s' needs %" G_GUINT64_FORMAT " bytes, more than %s (%" G_GSIZE_FORMAT
                     " bytes already held for this file)", zip->name, shown, e->usize, limit,
                     rpe_budget_scope_used ());
      return NULL;
    }
  size = (gsize) e->usize;
  /* the declared size is only reserved: pages are touched as data arrives, so a
   * member that declares 4 GiB and holds 96 bytes costs 96 bytes and is refused */
  out = rpe_alloc (size > 0 ? size : 1, 1, &status);
  if (out == NULL)
    {
      rpe_set_error (error, status, "'%s': member '%s' needs %" G_GSIZE_FORMAT " bytes: %s",
                     zip->name, shown, size, rpe_status_to_string (status));
      return NULL;
    }
  zf = zip_fopen_index (zip->za, e->index, 0);
  if (zf == NULL)
    {
      rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': member '%s' cannot be read: %s",
                     zip->name, shown, zip_strerror (zip->za));
      rpe_free (out);
      return NULL;
    }
  /* inflate in bounded chunks up to the declared size ... */
  while (done < size)
    {
      n = zip_fread (zf, out + done, MIN (size - done, CHUNK_BYTES));
      if (n < 0)
        goto read_error;
      if (n == 0)
        break;
      done += (gsize) n;
    }
  if (done < size)
    {
      rpe_set_error (error, RPE_ERROR_FORMAT,
                     "'%s': member '%s' inflates to %" G_GSIZE_FORMAT " bytes, not the declared %"
                     G_GSIZE_FORMAT, zip->name, shown, done, size);
      goto fail;
    }
  /* ... then one more read: it must find the end of the data (which is where
   * libzip verifies the CRC-32 and the size) */
  n = zip_fread (zf, spare, sizeof spare);
  if (n < 0)
    goto read_error;
  if (n > 0)
    {
      rpe_set_error (error, RPE_ERROR_FORMAT,
                     "'%s': member '%s' inflates to more than its declared %" G_GSIZE_FORMAT " bytes",
                     zip->name, shown, size);
      goto fail;
    }
  zip_fclose (zf);
  return g_bytes_new_with_free_func (out, size, free_buffer, out);

read_error:
  {
    zip_error_t *ze = zip_file_get_error (zf);

    if (zip_error_code_zip (ze) == ZIP_ER_CRC)
      rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': member '%s' is corrupt (CRC-32 mismatch)",
                     zip->name, shown);
    else if (zip_error_code_zip (ze) == ZIP_ER_INCONS)
      rpe_set_error (error, RPE_ERROR_FORMAT,
                     "'%s': member '%s' does not inflate to its declared %" G_GSIZE_FORMAT " bytes",
                     zip->name, shown, size);
    else
      rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': member '%s': bad compressed data (%s)",
                     zip->name, shown, zip_error_strerror (ze));
  }
fail:
  zip_fclose (zf);
  rpe_free (out);
  return NULL;
}

/* ---- .npz -------------------------------------------------------------- */

static RpeTensorSet *
rpe_npz_read_bytes_impl (const guint8 *data,
                    gsize         length,
                    const char   *name_for_errors,
                    GError      **error)
{
  RpeStatus st = RPE_OK;
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
  if (total > G_MAXSIZE / 2 || (st = rpe_budget_check ((gsize) total)) != RPE_OK)
    {
      g_autofree char *limit = rpe_memory_limit_text (st != RPE_OK ? st : RPE_ERROR_NO_MEMORY);

      rpe_set_error (error, st != RPE_OK ? st : RPE_ERROR_NO_MEMORY,
                     "'%s': the arrays hold %" G_GUINT64_FORMAT " bytes, more than %s", name, total, limit);
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
rpe_npz_read_bytes (const guint8 *data,
                    gsize         length,
                    const char   *name_for_errors,
                    GError      **error)
{
  return rpe_tensor_set_read_bytes_scoped (rpe_npz_read_bytes_impl, data, length, name_for_errors, error);
}

RpeTensorSet *
rpe_npz_read (const char  *path,
              GError     **error)
{
  return rpe_tensor_set_read_file (rpe_npz_read_bytes_impl, path, error);
}

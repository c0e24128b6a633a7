#include "config.h"

#include <string.h>

#include "rpe-alloc.h"
#include "rpe-error.h"
#include "rpe-pt.h"

/* torch.save's zip layout: torch/csrc/jit/serialization (PyTorchStreamWriter)
 * and torch/serialization.py (_save).  The pickle is described in rpe-pickle.c. */

/* The index of the one "<archive>/data.pkl" entry, or -1 (none or several). */
static gssize
find_pickle (const RpeZip *zip)
{
  gssize found = -1;

  for (gsize i = 0; i < rpe_zip_n_entries (zip); i++)
    {
      const char *n = rpe_zip_entry_name (zip, i);
      const char *slash = strchr (n, '/');

      if (slash != NULL && slash != n && strcmp (slash, "/data.pkl") == 0)
        {
          if (found >= 0)
            return -2;
          found = (gssize) i;
        }
    }
  return found;
}

gboolean
rpe_pt_is_archive (const RpeZip *zip)
{
  return find_pickle (zip) != -1;
}

static void
convert (const guint8 *src,
         RpeDType      dtype,
         gboolean      swap,
         float        *dst)
{
  switch (dtype)
    {
    case RPE_DTYPE_F32:
      {
        guint32 b;

        memcpy (&b, src, 4);
        b = swap ? GUINT32_FROM_BE (b) : GUINT32_FROM_LE (b);
        memcpy (dst, &b, 4);
      }
      break;
    case RPE_DTYPE_I32:
      {
        guint32 b;

        memcpy (&b, src, 4);
        b = swap ? GUINT32_FROM_BE (b) : GUINT32_FROM_LE (b);
        *dst = (float) (gint32) b;
      }
      break;
    case RPE_DTYPE_I64:
      {
        guint64 b;

        memcpy (&b, src, 8);
        b = swap ? GUINT64_FROM_BE (b) : GUINT64_FROM_LE (b);
        *dst = (float) (gint64) b;
      }
      break;
    case RPE_DTYPE_F64:
      {
        guint64 b;
        double d;

        memcpy (&b, src, 8);
        b = swap ? GUINT64_FROM_BE (b) : GUINT64_FROM_LE (b);
        memcpy (&d, &b, 8);
        *dst = (float) d;
      }
      break;
    case RPE_DTYPE_F16:
    case RPE_DTYPE_BF16:
    default:
      {
        guint16 b = swap ? (guint16) (src[0] << 8 | src[1]) : (guint16) (src[1] << 8 | src[0]);

        *dst = dtype == RPE_DTYPE_F16 ? rpe_half_to_float (b) : rpe_bfloat16_to_float (b);
      }
      break;
    }
}

/* Copies the strided view into C order.  The pickle reader has checked that
 * offset + sum (shape[i] - 1) * stride[i] < storage_numel, and the caller that
 * the storage holds storage_numel elements. */
static void
gather (const RpePickleTensor *ref,
        const guint8          *storage,
        gboolean               swap,
        float                 *out,
        gsize                  count)
{
  gsize idx[RPE_TENSOR_MAX_DIMS] = { 0 };
  gsize elem = rpe_dtype_size (ref->dtype);
  gsize pos = ref->offset;

  for (gsize n = 0; n < count; n++)
    {
      convert (storage + pos * elem, ref->dtype, swap, &out[n]);
      /* advance the multi-index, last dimension fastest */
      for (gsize d = ref->ndim; d-- > 0;)
        {
          idx[d]++;
          pos += ref->stride[d];
          if (idx[d] < ref->shape[d])
            break;
          pos -= ref->stride[d] * ref->shape[d];
          idx[d] = 0;
        }
    }
}

static void
bytes_unref (gpointer p)
{
  g_bytes_unref (p);
}

static RpeTensorSet *
rpe_pt_read_bytes_impl (const guint8 *data,
                   gsize         length,
                   const char   *name_for_errors,
                   GError      **error)
{
  const char *name = name_for_errors != NULL ? name_for_errors : "(pt)";
  g_autoptr (RpeZip) zip = NULL;
  g_autoptr (GBytes) pkl = NULL;
  g_autoptr (GPtrArray) refs = NULL;
  g_autoptr (GHashTable) storages = NULL;
  g_autoptr (RpeTensorSet) set = NULL;
  g_autofree char *prefix = NULL;
  g_autofree char *bo_name = NULL;
  gboolean swap = FALSE;
  gssize pi, bi;
  gsize total = 0;

  if (length >= 2 && data[0] == 0x80)
    {
      rpe_set_error (error, RPE_ERROR_UNSUPPORTED,
                     "'%s' is in the legacy (non-zip) torch.save format, which is not supported; "
                     "re-save it with torch.save(..., _use_new_zipfile_serialization=True)", name);
      return NULL;
    }
  zip = rpe_zip_open (data, length, name, error);
  if (zip == NULL)
    return NULL;
  pi = find_pickle (zip);
  if (pi < 0)
    {
      rpe_set_error (error, RPE_ERROR_FORMAT,
                     pi == -1 ? "'%s' is a zip archive without '<archive>/data.pkl': not a PyTorch .pt file"
                              : "'%s' holds several '<archive>/data.pkl': not a PyTorch .pt file", name);
      return NULL;
    }
  {
    const char *pn = rpe_zip_entry_name (zip, (gsize) pi);

    prefix = g_strndup (pn, strlen (pn) - strlen ("data.pkl"));   /* "archive/" */
  }

  /* byte order: "little" (or absent) or "big" */
  bo_name = g_strconcat (prefix, "byteorder", NULL);
  bi = rpe_zip_find (zip, bo_name);
  if (bi >= 0)
    {
      g_autoptr (GBytes) bo = NULL;
      g_autofree char *s = NULL;
      gsize n;
      const char *p;

      if (rpe_zip_entry_size (zip, (gsize) bi) > 16)
        {
          rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': bad '%s'", name, bo_name);
          return NULL;
        }
      bo = rpe_zip_extract (zip, (gsize) bi, error);
      if (bo == NULL)
        return NULL;
      p = g_bytes_get_data (bo, &n);
      s = g_strstrip (g_strndup (p != NULL ? p : "", n));
      if (strcmp (s, "big") == 0)
        swap = G_BYTE_ORDER == G_LITTLE_ENDIAN;
      else if (strcmp (s, "little") == 0)
        swap = G_BYTE_ORDER == G_BIG_ENDIAN;
      else
        {
          rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': '%s' is neither \"little\" nor \"big\"",
                         name, bo_name);
          return NULL;
        }
    }

  if (rpe_zip_entry_size (zip, (gsize) pi) > RPE_PT_MAX_PICKLE_BYTES)
    {
      rpe_set_error (error, RPE_ERROR_UNSUPPORTED,
                     "'%s': data.pkl is %" G_GUINT64_FORMAT " bytes, more than the %" G_GSIZE_FORMAT
                     "-byte limit", name, rpe_zip_entry_size (zip, (gsize) pi), RPE_PT_MAX_PICKLE_BYTES);
      return NULL;
    }
  pkl = rpe_zip_extract (zip, (gsize) pi, error);
  if (pkl == NULL)
    return NULL;
  {
    gsize n;
    const guint8 *p = g_bytes_get_data (pkl, &n);

    refs = rpe_pickle_read_state_dict (p != NULL ? p : (const guint8 *) "", n, name, error);
  }
  if (refs == NULL)
    return NULL;

  /* everything the file will make us hold, against the one budget before
   * anything is inflated: the float32 tensors and every storage they use (the
   * file's own bytes and what was read so far are already in the scope) */
  {
    g_autoptr (GHashTable) counted = g_hash_table_new (g_str_hash, g_str_equal);
    gsize storage_bytes = 0;

    for (guint i = 0; i < refs->len; i++)
      {
        const RpePickleTensor *ref = g_ptr_array_index (refs, i);
        gsize count, bytes;

        if (!rpe_size_prod (&count, ref->ndim, ref->shape)
            || rpe_size_bytes (&bytes, sizeof (float), count, 1, 1, 1) != RPE_OK
            || !rpe_size_add (total, bytes, &total))
          {
            rpe_set_error (error, RPE_ERROR_OVERFLOW, "'%s': the tensors' total size overflows", name);
            return NULL;
          }
        if (!g_hash_table_contains (counted, ref->storage_key))
          {
            g_autofree char *member = g_strconcat (prefix, "data/", ref->storage_key, NULL);
            gssize si = rpe_zip_find (zip, member);
            guint64 sbytes = si >= 0 ? rpe_zip_entry_size (zip, (gsize) si) : 0;

            g_hash_table_add (counted, (gpointer) ref->storage_key);
            if (sbytes > G_MAXSIZE / 4 || !rpe_size_add (storage_bytes, (gsize) sbytes, &storage_bytes))
              storage_bytes = G_MAXSIZE / 2;
          }
      }
    RpeStatus st = RPE_ERROR_NO_MEMORY;

    if (!rpe_size_add (total, storage_bytes, &total) || (st = rpe_budget_check (total)) != RPE_OK)
      {
        g_autofree char *limit = rpe_memory_limit_text (st);

        rpe_set_error (error, st,
                       "'%s': reading it needs %" G_GSIZE_FORMAT " bytes (%" G_GSIZE_FORMAT " of storages, "
                       "the tensors as float32 and %" G_GSIZE_FORMAT " already held), more than %s", name,
                       total + rpe_budget_scope_used (), storage_bytes, rpe_budget_scope_used (), limit);
        return NULL;
      }
  }

  storages = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, bytes_unref);
  set = rpe_tensor_set_new ();
  for (guint i = 0; i < refs->len; i++)
    {
      const RpePickleTensor *ref = g_ptr_array_index (refs, i);
      GBytes *sb = g_hash_table_lookup (storages, ref->storage_key);
      gsize sn = 0, need;
      const guint8 *sp;
      RpeTensor *t;

      if (sb == NULL)
        {
          g_autofree char *member = g_strconcat (prefix, "data/", ref->storage_key, NULL);
          gssize si = rpe_zip_find (zip, member);

          if (si < 0)
            {
              rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': tensor '%s': its storage '%s' is missing",
                             name, ref->name, member);
              return NULL;
            }
          sb = rpe_zip_extract (zip, (gsize) si, error);
          if (sb == NULL)
            return NULL;
          g_hash_table_insert (storages, g_strdup (ref->storage_key), sb);
        }
      sp = g_bytes_get_data (sb, &sn);
      /* the storage's bytes must be what its element count says (the pickle
       * reader checked that the tensor stays inside that count) */
      if (!rpe_size_mul (ref->storage_numel, rpe_dtype_size (ref->dtype), &need) || sn != need)
        {
          rpe_set_error (error, RPE_ERROR_FORMAT,
                         "'%s': tensor '%s': storage '%s' holds %" G_GSIZE_FORMAT " bytes, not the %"
                         G_GSIZE_FORMAT " elements of %s the pickle announces", name, ref->name,
                         ref->storage_key, sn, ref->storage_numel, rpe_dtype_to_string (ref->dtype));
          return NULL;
        }
      t = rpe_tensor_new (ref->name, ref->ndim, ref->shape, error);
      if (t == NULL)
        {
          g_prefix_error (error, "'%s': ", name);
          return NULL;
        }
      t->dtype = ref->dtype;
      if (t->n_elements > 0)
        gather (ref, sp, swap, t->data, t->n_elements);
      if (!rpe_tensor_set_add (set, t, error))
        {
          g_prefix_error (error, "'%s': ", name);
          return NULL;
        }
    }
  return g_steal_pointer (&set);
}

RpeTensorSet *
rpe_pt_read_bytes (const guint8 *data,
                   gsize         length,
                   const char   *name_for_errors,
                   GError      **error)
{
  return rpe_tensor_set_read_bytes_scoped (rpe_pt_read_bytes_impl, data, length, name_for_errors, error);
}

RpeTensorSet *
rpe_pt_read (const char  *path,
             GError     **error)
{
  return rpe_tensor_set_read_file (rpe_pt_read_bytes_impl, path, error);
}

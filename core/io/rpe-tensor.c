#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "rpe-publish.h"
#include "rpe-alloc.h"
#include "rpe-error.h"
#include "rpe-file.h"
#include "rpe-tensor.h"

/* ---- dtypes ----------------------------------------------------------- */

const char *
rpe_dtype_to_string (RpeDType dtype)
{
  switch (dtype)
    {
    case RPE_DTYPE_F32:
      return "F32";
    case RPE_DTYPE_F64:
      return "F64";
    case RPE_DTYPE_F16:
      return "F16";
    case RPE_DTYPE_BF16:
      return "BF16";
    case RPE_DTYPE_I64:
      return "I64";
    case RPE_DTYPE_I32:
      return "I32";
    case RPE_DTYPE_U8:
      return "U8";
    default:
      return "?";
    }
}

gsize
rpe_dtype_size (RpeDType dtype)
{
  switch (dtype)
    {
    case RPE_DTYPE_F32:
      return 4;
    case RPE_DTYPE_F64:
    case RPE_DTYPE_I64:
      return 8;
    case RPE_DTYPE_I32:
      return 4;
    case RPE_DTYPE_F16:
    case RPE_DTYPE_BF16:
      return 2;
    case RPE_DTYPE_U8:
      return 1;
    default:
      return 0;
    }
}

static float
float_from_bits (guint32 bits)
{
  float f;

  memcpy (&f, &bits, sizeof f);
  return f;
}

/* binary16: 1 sign bit, 5 exponent bits (bias 15), 10 mantissa bits. */
float
rpe_half_to_float (guint16 bits)
{
  guint32 sign = (guint32) (bits & 0x8000u) << 16;
  guint32 exponent = (bits >> 10) & 0x1fu;
  guint32 mantissa = bits & 0x3ffu;

  if (exponent == 0)
    {
      /* zero or subnormal: mantissa * 2^-24, exact in float32 */
      float v = ldexpf ((float) mantissa, -24);
      return sign ? -v : v;
    }
  if (exponent == 0x1f)
    /* infinity (mantissa 0) or NaN (payload kept in the top mantissa bits) */
    return float_from_bits (sign | 0x7f800000u | (mantissa << 13));
  return float_from_bits (sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

/* bfloat16 is the top half of a float32. */
float
rpe_bfloat16_to_float (guint16 bits)
{
  return float_from_bits ((guint32) bits << 16);
}

/* ---- tensors ---------------------------------------------------------- */

RpeTensor *
rpe_tensor_new (const char   *name,
                gsize         ndim,
                const gsize  *shape,
                GError      **error)
{
  RpeTensor *tensor;
  gsize count, bytes;
  RpeStatus status;

  if (ndim > RPE_TENSOR_MAX_DIMS)
    {
      rpe_set_error (error, RPE_ERROR_UNSUPPORTED,
                     "Tensor '%s' has %" G_GSIZE_FORMAT " dimensions; at most %d are supported",
                     name != NULL ? name : "", ndim, RPE_TENSOR_MAX_DIMS);
      return NULL;
    }
  if (ndim > 0 && shape == NULL)
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, "Tensor '%s': no shape given",
                     name != NULL ? name : "");
      return NULL;
    }
  if (!rpe_size_prod (&count, ndim, shape)
      || rpe_size_bytes (&bytes, sizeof (float), count, 1, 1, 1) != RPE_OK)
    {
      rpe_set_error (error, RPE_ERROR_OVERFLOW,
                     "Tensor '%s': the element count of its shape overflows", name != NULL ? name : "");
      return NULL;
    }
  if ((status = rpe_budget_check (bytes)) != RPE_OK)
    {
      g_autofree char *limit = rpe_memory_limit_text (status);

      rpe_set_error (error, status, "Tensor '%s' needs %" G_GSIZE_FORMAT " bytes, more than %s",
                     name != NULL ? name : "", bytes, limit);
      return NULL;
    }

  tensor = g_new0 (RpeTensor, 1);
  tensor->data = rpe_alloc0 (count, sizeof (float), &status);
  if (tensor->data == NULL)
    {
      rpe_set_error (error, status, "Tensor '%s': cannot allocate %" G_GSIZE_FORMAT " bytes (%s)",
                     name != NULL ? name : "", bytes, rpe_status_to_string (status));
      g_free (tensor);
      return NULL;
    }
  tensor->name = g_strdup (name != NULL ? name : "");
  tensor->dtype = RPE_DTYPE_F32;
  tensor->ndim = ndim;
  for (gsize i = 0; i < ndim; i++)
    tensor->shape[i] = shape[i];
  tensor->n_elements = count;
  return tensor;
}

void
rpe_tensor_free (RpeTensor *tensor)
{
  if (tensor == NULL)
    return;
  rpe_free (tensor->data);
  g_free (tensor->name);
  g_free (tensor);
}

gboolean
rpe_shape_check_nonempty (const char   *what,
                          gsize         ndim,
                          const gsize  *shape,
                          GError      **error)
{
  for (gsize i = 0; i < ndim; i++)
    if (shape[i] == 0)
      {
        GString *s = g_string_new ("(");

        for (gsize j = 0; j < ndim; j++)
          g_string_append_printf (s, "%s%" G_GSIZE_FORMAT, j > 0 ? ", " : "", shape[j]);
        g_string_append (s, ndim == 1 ? ",)" : ")");
        rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, "%s is empty: its shape %s has %s",
                       what, s->str, i == 0 ? "no rows" : "a dimension of size 0");
        g_string_free (s, TRUE);
        return FALSE;
      }
  return TRUE;
}

char *
rpe_tensor_shape_string (const RpeTensor *tensor)
{
  GString *s = g_string_new ("(");

  for (gsize i = 0; i < tensor->ndim; i++)
    g_string_append_printf (s, i == 0 ? "%" G_GSIZE_FORMAT : ", %" G_GSIZE_FORMAT, tensor->shape[i]);
  g_string_append_c (s, ')');
  return g_string_free (s, FALSE);
}

gboolean
rpe_tensor_check_finite (const RpeTensor *tensor,
                         GError         **error)
{
  for (gsize i = 0; i < tensor->n_elements; i++)
    {
      if (!isfinite (tensor->data[i]))
        {
          /* report the multi-index of the first bad value */
          GString *index = g_string_new ("[");
          gsize rest = i;
          gsize idx[RPE_TENSOR_MAX_DIMS] = { 0 };

          for (gsize d = tensor->ndim; d-- > 0;)
            {
              idx[d] = tensor->shape[d] != 0 ? rest % tensor->shape[d] : 0;
              rest = tensor->shape[d] != 0 ? rest / tensor->shape[d] : 0;
            }
          for (gsize d = 0; d < tensor->ndim; d++)
            g_string_append_printf (index, d == 0 ? "%" G_GSIZE_FORMAT : ", %" G_GSIZE_FORMAT, idx[d]);
          g_string_append_c (index, ']');
          if (tensor->name[0] != '\0')
            rpe_set_error (error, RPE_ERROR_NOT_FINITE,
                           "Tensor '%s' holds a non-finite value (%g) at index %s",
                           tensor->name, (double) tensor->data[i], index->str);
          else
            rpe_set_error (error, RPE_ERROR_NOT_FINITE,
                           "the array holds a non-finite value (%g) at index %s",
                           (double) tensor->data[i], index->str);
          g_string_free (index, TRUE);
          return FALSE;
        }
    }
  return TRUE;
}

/* ---- tensor sets ------------------------------------------------------ */

struct _RpeTensorSet
{
  GPtrArray  *tensors;   /* RpeTensor*, file order */
  GHashTable *by_name;   /* name (owned by the tensor) -> RpeTensor* */
};

RpeTensorSet *
rpe_tensor_set_new (void)
{
  RpeTensorSet *set = g_new0 (RpeTensorSet, 1);

  set->tensors = g_ptr_array_new_with_free_func ((GDestroyNotify) rpe_tensor_free);
  set->by_name = g_hash_table_new (g_str_hash, g_str_equal);
  return set;
}

void
rpe_tensor_set_free (RpeTensorSet *set)
{
  if (set == NULL)
    return;
  g_hash_table_destroy (set->by_name);
  g_ptr_array_unref (set->tensors);
  g_free (set);
}

gboolean
rpe_tensor_set_add (RpeTensorSet *set,
                    RpeTensor    *tensor,
                    GError      **error)
{
  RpeStatus st;

  if (set->tensors->len >= RPE_TENSOR_SET_MAX_TENSORS)
    {
      rpe_set_error (error, RPE_ERROR_UNSUPPORTED, "More than %u tensors; at most %u are supported",
                     RPE_TENSOR_SET_MAX_TENSORS, RPE_TENSOR_SET_MAX_TENSORS);
      rpe_tensor_free (tensor);
      return FALSE;
    }
  /* the set's own structures count in the file's budget too */
  if ((st = rpe_budget_charge (sizeof (RpeTensor) + strlen (tensor->name) + 64)) != RPE_OK)
    {
      g_autofree char *limit = rpe_memory_limit_text (st);

      rpe_set_error (error, st, "Tensor '%s' does not fit in %s", tensor->name, limit);
      rpe_tensor_free (tensor);
      return FALSE;
    }
  if (g_hash_table_contains (set->by_name, tensor->name))
    {
      rpe_set_error (error, RPE_ERROR_FORMAT, "Duplicate tensor name '%s'", tensor->name);
      rpe_tensor_free (tensor);
      return FALSE;
    }
  g_ptr_array_add (set->tensors, tensor);
  g_hash_table_insert (set->by_name, tensor->name, tensor);
  return TRUE;
}

gsize
rpe_tensor_set_size (const RpeTensorSet *set)
{
  return set->tensors->len;
}

const RpeTensor *
rpe_tensor_set_get (const RpeTensorSet *set,
                    gsize               index)
{
  if (index >= set->tensors->len)
    return NULL;
  return g_ptr_array_index (set->tensors, index);
}

const RpeTensor *
rpe_tensor_set_lookup (const RpeTensorSet *set,
                       const char         *name)
{
  return g_hash_table_lookup (set->by_name, name);
}

/* ---- atomic writing --------------------------------------------------- */

struct _RpeAtomicFile
{
  char  *path;
  char  *tmp_path;
  int    fd;
  off_t  offset;   /* bytes written so far */
};

static gboolean
io_error (GError    **error,
          const char *what,
          const char *path,
          int         saved_errno)
{
  return rpe_set_error (error, rpe_status_for_write_errno (saved_errno), "Cannot %s '%s': %s", what, path,
                        g_strerror (saved_errno));
}

RpeAtomicFile *
rpe_atomic_file_new (const char  *given,
                     GError     **error)
{
  /* onto a symbolic link: through it, to the file it names */
  g_autofree char *path = rpe_publish_resolve (given);
  g_autofree char *dir = NULL;
  g_autofree char *base = NULL;
  g_autofree char *tmpl = NULL;
  RpeAtomicFile *file;
  int fd;

  if (path == NULL)
    {
      rpe_set_error (error, RPE_ERROR_NO_MEMORY, "Out of memory");
      return NULL;
    }
  dir = g_path_get_dirname (path);
  base = g_path_get_basename (path);
  if (!rpe_output_check (path, error))
    return NULL;
  tmpl = g_strdup_printf ("%s%c.%s.XXXXXX", dir, G_DIR_SEPARATOR, base);
  fd = g_mkstemp_full (tmpl, O_RDWR | O_CLOEXEC, 0644);
  if (fd < 0)
    {
      io_error (error, "create a temporary file for", path, errno);
      return NULL;
    }
  /* mkstemp uses 0600; give the result ordinary permissions */
  (void) fchmod (fd, 0644);
  file = g_new0 (RpeAtomicFile, 1);
  file->path = g_strdup (path);
  file->tmp_path = g_steal_pointer (&tmpl);
  file->fd = fd;
  return file;
}

gboolean
rpe_atomic_file_write (RpeAtomicFile  *file,
                       const void     *data,
                       gsize           length,
                       GError        **error)
{
  const guint8 *p = data;
  gsize total = length;

  while (length > 0)
    {
      gssize n = write (file->fd, p, MIN (length, (gsize) 1 << 30));

      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          return io_error (error, "write", file->path, errno);
        }
      p += n;
      length -= (gsize) n;
    }
#ifdef SYNC_FILE_RANGE_WRITE
  /* a large write (a slab of a streamed output): start its writeback now, without waiting,
   * so that the disk works while the next slab is computed and commit's fsync has little
   * left to wait for (an error here is not one: fsync reports what matters) */
  if (total >= ((gsize) 1 << 20))
    (void) sync_file_range (file->fd, file->offset, (off_t) total, SYNC_FILE_RANGE_WRITE);
#endif
  file->offset += (off_t) total;
  return TRUE;
}

static void
atomic_file_free (RpeAtomicFile *file)
{
  g_free (file->path);
  g_free (file->tmp_path);
  g_free (file);
}

gboolean
rpe_atomic_file_flush (RpeAtomicFile  *file,
                       GError        **error)
{
  int fd = file->fd;

  if (fd < 0)
    return TRUE;
  file->fd = -1;
  if (fsync (fd) != 0)
    {
      io_error (error, "flush", file->path, errno);
      close (fd);
      return FALSE;
    }
  if (close (fd) != 0)
    return io_error (error, "close", file->path, errno);
  return TRUE;
}

gboolean
rpe_atomic_file_commit (RpeAtomicFile  *file,
                        GError        **error)
{
  int saved;

  if (!rpe_atomic_file_flush (file, error))
    goto fail;
  /* in place now, or with the rest of the command's output set */
  if ((saved = rpe_publish (file->tmp_path, file->path)) != 0)
    {
      io_error (error, "replace", file->path, saved);
      goto fail;
    }
  atomic_file_free (file);
  return TRUE;

fail:
  g_unlink (file->tmp_path);
  atomic_file_free (file);
  return FALSE;
}

void
rpe_atomic_file_abort (RpeAtomicFile *file)
{
  if (file == NULL)
    return;
  if (file->fd >= 0)
    close (file->fd);
  g_unlink (file->tmp_path);
  atomic_file_free (file);
}

gboolean
rpe_atomic_file_set_contents (const char  *path,
                              const void  *data,
                              gsize        length,
                              GError     **error)
{
  RpeAtomicFile *file = rpe_atomic_file_new (path, error);

  if (file == NULL)
    return FALSE;
  if (!rpe_atomic_file_write (file, data, length, error))
    {
      rpe_atomic_file_abort (file);
      return FALSE;
    }
  return rpe_atomic_file_commit (file, error);
}

/* ---- mapping ---------------------------------------------------------- */

GBytes *
rpe_map_file (const char  *path,
              GError     **error)
{
  /* read, not mapped: a file truncated under us must give an error, not SIGBUS */
  return rpe_read_file (path, error);
}

RpeTensorSet *
rpe_tensor_set_read_bytes_scoped (RpeTensorSetReader   read,
                                  const guint8        *data,
                                  gsize                length,
                                  const char          *name_for_errors,
                                  GError             **error)
{
  RpeTensorSet *set;

  rpe_budget_scope_begin ();
  set = read (data, length, name_for_errors, error);
  rpe_budget_scope_end ();
  return set;
}

RpeTensorSet *
rpe_tensor_set_read_file (RpeTensorSetReader   read,
                          const char          *path,
                          GError             **error)
{
  RpeTensorSet *set = NULL;
  GBytes *bytes;

  /* one budget for the whole file, its bytes included */
  rpe_budget_scope_begin ();
  bytes = rpe_map_file (path, error);
  if (bytes != NULL)
    {
      gsize length;
      const guint8 *data = g_bytes_get_data (bytes, &length);

      set = read (data, length, path, error);
      g_bytes_unref (bytes);
    }
  rpe_budget_scope_end ();
  return set;
}

#include "config.h"

#include <string.h>

#include <msgpack.h>

#include "rpe-alloc.h"
#include "rpe-error.h"
#include "rpe-msgpack.h"

#define EXT_NDARRAY  1
#define EXT_COMPLEX  2
#define EXT_NPSCALAR 3

gboolean
rpe_msgpack_looks_like (const guint8 *data,
                        gsize         length)
{
  return length >= 1 && ((data[0] >= 0x81 && data[0] <= 0x8f) || data[0] == 0xde || data[0] == 0xdf);
}

static guint64
be (const guint8 *p,
    gsize         n)
{
  guint64 v = 0;

  for (gsize i = 0; i < n; i++)
    v = (v << 8) | p[i];
  return v;
}

/* Counts the objects of one msgpack value at the start of data (headers only;
 * payloads skipped), checking that it is complete and fills the data exactly.
 * Every object takes at least one byte, so the count is at most `length`. */
static gboolean
count_objects (const guint8 *data,
               gsize         length,
               const char   *name,
               gsize        *count,
               GError      **error)
{
  gsize pos = 0, pending = 1, n = 0;

  while (pending > 0)
    {
      guint8 b;
      guint64 skip = 0, children = 0;
      gsize head = 1;

      if (pos >= length)
        return rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the msgpack data is truncated", name);
      b = data[pos];
      if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3)
        ;
      else if (b >= 0x80 && b <= 0x8f)
        children = 2u * (b & 0x0f);
      else if (b >= 0x90 && b <= 0x9f)
        children = b & 0x0f;
      else if (b >= 0xa0 && b <= 0xbf)
        skip = b & 0x1f;
      else
        {
          static const struct { guint8 code; guint8 len_bytes; guint8 fixed; guint8 kind; } t[] = {
            /* kind: 0 fixed payload, 1 length-prefixed payload, 2 ext (length + type), 3 array, 4 map */
            { 0xc4, 1, 0, 1 }, { 0xc5, 2, 0, 1 }, { 0xc6, 4, 0, 1 },
            { 0xc7, 1, 0, 2 }, { 0xc8, 2, 0, 2 }, { 0xc9, 4, 0, 2 },
            { 0xca, 0, 4, 0 }, { 0xcb, 0, 8, 0 },
            { 0xcc, 0, 1, 0 }, { 0xcd, 0, 2, 0 }, { 0xce, 0, 4, 0 }, { 0xcf, 0, 8, 0 },
            { 0xd0, 0, 1, 0 }, { 0xd1, 0, 2, 0 }, { 0xd2, 0, 4, 0 }, { 0xd3, 0, 8, 0 },
            { 0xd4, 0, 2, 0 }, { 0xd5, 0, 3, 0 }, { 0xd6, 0, 5, 0 }, { 0xd7, 0, 9, 0 }, { 0xd8, 0, 17, 0 },
            { 0xd9, 1, 0, 1 }, { 0xda, 2, 0, 1 }, { 0xdb, 4, 0, 1 },
            { 0xdc, 2, 0, 3 }, { 0xdd, 4, 0, 3 }, { 0xde, 2, 0, 4 }, { 0xdf, 4, 0, 4 },
          };
          gsize i;

          for (i = 0; i < G_N_ELEMENTS (t); i++)
            if (t[i].code == b)
              break;
          if (i == G_N_ELEMENTS (t))
            return rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': byte 0x%02x at offset %" G_GSIZE_FORMAT
                                  " is not msgpack", name, b, pos);
          if (t[i].kind == 0)
            skip = t[i].fixed;
          else
            {
              guint64 v;
              if (length - pos - 1 < t[i].len_bytes)
                return rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the msgpack data is truncated", name);
              v = be (data + pos + 1, t[i].len_bytes);
              head += t[i].len_bytes;
              if (t[i].kind == 1)
                skip = v;
              else if (t[i].kind == 2)
                skip = v + 1;                 /* the type byte */
              else if (t[i].kind == 3)
                children = v;
              else
                {
                  if (v > G_MAXUINT64 / 2)
                    return rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': a msgpack map is too large", name);
                  children = 2 * v;
                }
            }
        }
      if (skip > length - pos - head)
        return rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the msgpack data is truncated", name);
      pos += head + (gsize) skip;
      /* every pending value takes at least one byte */
      if (children > length - pos)
        return rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the msgpack data is truncated", name);
      pending = pending - 1 + (gsize) children;
      if (pending > length - pos)
        return rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the msgpack data is truncated", name);
      n++;
    }
  if (pos != length)
    return rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': %" G_GSIZE_FORMAT " bytes follow the msgpack data",
                          name, length - pos);
  *count = n;
  return TRUE;
}

typedef struct
{
  const char   *file;
  RpeTensorSet *set;
  gsize         tensor_bytes;      /* held so far, with the parse tree */
  guint         n_tensors;
  GString      *path;
} Reader;

static const msgpack_object *
map_get (const msgpack_object *map,
         const char           *key)
{
  gsize len = strlen (key);

  if (map->type != MSGPACK_OBJECT_MAP)
    return NULL;
  for (guint32 i = 0; i < map->via.map.size; i++)
    {
      const msgpack_object *k = &map->via.map.ptr[i].key;
      if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == len && memcmp (k->via.str.ptr, key, len) == 0)
        return &map->via.map.ptr[i].val;
    }
  return NULL;
}

static gboolean
float_dtype (const char *s,
             gsize       len,
             RpeDType   *dtype)
{
  static const struct { const char *name; RpeDType dtype; } known[] = {
    { "float32", RPE_DTYPE_F32 }, { "float64", RPE_DTYPE_F64 },
    { "float16", RPE_DTYPE_F16 }, { "bfloat16", RPE_DTYPE_BF16 },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (known); i++)
    if (strlen (known[i].name) == len && memcmp (known[i].name, s, len) == 0)
      {
        *dtype = known[i].dtype;
        return TRUE;
      }
  return FALSE;
}

static gboolean
is_other_dtype (const char *s,
                gsize       len)
{
  static const char *const others[] = {
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "complex64", "complex128",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (others); i++)
    if (strlen (others[i]) == len && memcmp (others[i], s, len) == 0)
      return TRUE;
  return FALSE;
}

static void
convert (const guint8 *src,
         RpeDType      dtype,
         gsize         n,
         float        *dst)
{
  for (gsize i = 0; i < n; i++)
    switch (dtype)
      {
      case RPE_DTYPE_F32:
        {
          guint32 bits;
          float f;
          memcpy (&bits, src + 4 * i, 4);
          bits = GUINT32_FROM_LE (bits);
          memcpy (&f, &bits, 4);
          dst[i] = f;
        }
        break;
      case RPE_DTYPE_F64:
        {
          guint64 bits;
          double v;
          memcpy (&bits, src + 8 * i, 8);
          bits = GUINT64_FROM_LE (bits);
          memcpy (&v, &bits, 8);
          dst[i] = (float) v;
        }
        break;
      case RPE_DTYPE_F16:
      case RPE_DTYPE_BF16:
        {
          guint16 bits;
          memcpy (&bits, src + 2 * i, 2);
          bits = GUINT16_FROM_LE (bits);
          dst[i] = dtype == RPE_DTYPE_F16 ? rpe_half_to_float (bits) : rpe_bfloat16_to_float (bits);
        }
        break;
      default:
        dst[i] = 0;
      }
}

/* An array leaf (ext 1: [shape, dtype, data]) or a numpy scalar (ext 3: [dtype, data]). */
static gboolean
read_array (Reader                *r,
            const msgpack_object  *ext,
            GError               **error)
{
  RpeStatus st = RPE_OK;
  const char *where = r->path->str;
  msgpack_unpacked u;
  size_t off = 0;
  msgpack_unpack_return ret;
  const msgpack_object *o, *shape_o = NULL, *dtype_o, *data_o;
  gsize shape[RPE_TENSOR_MAX_DIMS] = { 0 }, ndim = 0, n = 1, bytes;
  gsize count = 0;
  RpeDType dtype;
  RpeTensor *t;
  gboolean ok = FALSE;

  /* the payload is small msgpack around one bin: count it first, like the file */
  if (!count_objects ((const guint8 *) ext->via.ext.ptr, ext->via.ext.size, r->file, &count, error))
    {
      g_prefix_error (error, "array '%s': ", where);
      return FALSE;
    }
  if (count > 2 + 1 + RPE_TENSOR_MAX_DIMS + 2)
    return rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the array '%s' has more than %u dimensions",
                          r->file, where, RPE_TENSOR_MAX_DIMS);
  msgpack_unpacked_init (&u);
  ret = msgpack_unpack_next (&u, ext->via.ext.ptr, ext->via.ext.size, &off);
  if (ret != MSGPACK_UNPACK_SUCCESS || off != ext->via.ext.size)
    {
      rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the array '%s' is not valid msgpack", r->file, where);
      goto out;
    }
  o = &u.data;
  if (ext->via.ext.type == EXT_NDARRAY)
    {
      if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size != 3)
        {
          rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the array '%s' is not [shape, dtype, data]", r->file, where);
          goto out;
        }
      shape_o = &o->via.array.ptr[0];
      dtype_o = &o->via.array.ptr[1];
      data_o = &o->via.array.ptr[2];
    }
  else
    {
      if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size != 2)
        {
          rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the scalar '%s' is not [dtype, data]", r->file, where);
          goto out;
        }
      dtype_o = &o->via.array.ptr[0];
      data_o = &o->via.array.ptr[1];
    }
  if (dtype_o->type != MSGPACK_OBJECT_STR
      || (data_o->type != MSGPACK_OBJECT_BIN && data_o->type != MSGPACK_OBJECT_STR))
    {
      rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the array '%s' has no dtype name or data", r->file, where);
      goto out;
    }
  if (!float_dtype (dtype_o->via.str.ptr, dtype_o->via.str.size, &dtype))
    {
      if (is_other_dtype (dtype_o->via.str.ptr, dtype_o->via.str.size))
        ok = TRUE;                     /* an integer or boolean array: not a parameter */
      else
        {
          g_autofree char *d = g_strndup (dtype_o->via.str.ptr, MIN (dtype_o->via.str.size, 32));
          g_autofree char *esc = g_strescape (d, NULL);
          rpe_set_error (error, RPE_ERROR_UNSUPPORTED, "'%s': the array '%s' has the unsupported dtype '%s'",
                         r->file, where, esc);
        }
      goto out;
    }
  if (shape_o != NULL)
    {
      if (shape_o->type != MSGPACK_OBJECT_ARRAY || shape_o->via.array.size > RPE_TENSOR_MAX_DIMS)
        {
          rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the shape of '%s' is not a list of at most %u sizes",
                         r->file, where, RPE_TENSOR_MAX_DIMS);
          goto out;
        }
      ndim = shape_o->via.array.size;
      for (gsize i = 0; i < ndim; i++)
        {
          const msgpack_object *dim = &shape_o->via.array.ptr[i];
          if (dim->type != MSGPACK_OBJECT_POSITIVE_INTEGER || dim->via.u64 > G_MAXSIZE
              || !rpe_size_mul (n, (gsize) dim->via.u64, &n))
            {
              rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the shape of '%s' has an invalid or too large size",
                             r->file, where);
              goto out;
            }
          shape[i] = (gsize) dim->via.u64;
        }
    }
  if (!rpe_size_mul (n, rpe_dtype_size (dtype), &bytes) || bytes != data_o->via.bin.size)
    {
      rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the array '%s' holds %u bytes, not the %" G_GSIZE_FORMAT
                     " elements its shape and dtype need", r->file, where, (unsigned) data_o->via.bin.size, n);
      goto out;
    }
  if (r->n_tensors >= RPE_MSGPACK_MAX_TENSORS)
    {
      rpe_set_error (error, RPE_ERROR_UNSUPPORTED, "'%s' holds more than %u arrays", r->file, RPE_MSGPACK_MAX_TENSORS);
      goto out;
    }
  if (!rpe_size_mul (n, sizeof (float), &bytes) || !rpe_size_add (r->tensor_bytes, bytes, &r->tensor_bytes)
      || (st = rpe_budget_check (r->tensor_bytes)) != RPE_OK)
    {
      g_autofree char *limit = rpe_memory_limit_text (st);

      rpe_set_error (error, st, "'%s': reading the array '%s' would hold more than %s", r->file, where, limit);
      goto out;
    }
  t = rpe_tensor_new (where, ndim, shape, error);
  if (t == NULL)
    goto out;
  t->dtype = dtype;
  convert ((const guint8 *) data_o->via.bin.ptr, dtype, n, t->data);
  if (!rpe_tensor_set_add (r->set, t, error))
    {
      /* a name given twice ("a/b" and "a": {"b"}), too many, over the budget: which file */
      g_prefix_error (error, "'%s': ", r->file);
      goto out;
    }
  r->n_tensors++;
  ok = TRUE;
out:
  msgpack_unpacked_destroy (&u);
  return ok;
}

static gboolean
walk (Reader                *r,
      const msgpack_object  *o,
      guint                  depth,
      GError               **error)
{
  if (depth > RPE_MSGPACK_MAX_DEPTH)
    return rpe_set_error (error, RPE_ERROR_FORMAT, "'%s' nests maps deeper than %u", r->file, RPE_MSGPACK_MAX_DEPTH);
  if (o->type == MSGPACK_OBJECT_EXT)
    {
      if (o->via.ext.type == EXT_NDARRAY || o->via.ext.type == EXT_NPSCALAR)
        return read_array (r, o, error);
      return TRUE;                     /* complex scalars and others: not parameters */
    }
  if (o->type != MSGPACK_OBJECT_MAP)
    return TRUE;                       /* numbers, strings, lists: not arrays */
  if (map_get (o, "__msgpack_chunked_array__") != NULL)
    return rpe_set_error (error, RPE_ERROR_UNSUPPORTED, "'%s': the array '%s' is stored in chunks (over 1 GiB); "
                          "it is too large to view", r->file, r->path->str);
  for (guint32 i = 0; i < o->via.map.size; i++)
    {
      const msgpack_object *k = &o->via.map.ptr[i].key;
      gsize len = r->path->len;
      char num[24];
      const char *key;
      gsize key_len;

      if (k->type == MSGPACK_OBJECT_STR)
        {
          key = k->via.str.ptr;
          key_len = k->via.str.size;
        }
      else if (k->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
        {
          g_snprintf (num, sizeof num, "%" G_GUINT64_FORMAT, (guint64) k->via.u64);
          key = num;
          key_len = strlen (num);
        }
      else
        return rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': a key under '%s' is not a string",
                              r->file, r->path->str);
      if (key_len == 0 || memchr (key, '\0', key_len) != NULL)
        return rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': a key under '%s' is empty or holds a NUL byte",
                              r->file, r->path->str);
      if (len + 1 + key_len > RPE_MSGPACK_MAX_NAME)
        return rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': a name under '%s' is longer than %u bytes",
                              r->file, r->path->str, RPE_MSGPACK_MAX_NAME);
      if (len > 0)
        g_string_append_c (r->path, '/');
      g_string_append_len (r->path, key, (gssize) key_len);
      if (!walk (r, &o->via.map.ptr[i].val, depth + 1, error))
        return FALSE;
      g_string_truncate (r->path, len);
    }
  return TRUE;
}

RpeTensorSet *
rpe_msgpack_read_bytes (const guint8 *data,
                        gsize         length,
                        const char   *name,
                        GError      **error)
{
  RpeStatus st = RPE_OK;
  msgpack_unpacked u;
  msgpack_unpack_return ret;
  size_t off = 0;
  gsize count, tree;
  const msgpack_object *root, *sub, *target;
  Reader r = { 0 };

  if (name == NULL)
    name = "(msgpack)";
  if (!count_objects (data, length, name, &count, error))
    return NULL;
  if (!rpe_size_mul (count, RPE_MSGPACK_OBJECT_BYTES, &tree) || (st = rpe_budget_check (tree)) != RPE_OK)
    {
      g_autofree char *limit = rpe_memory_limit_text (st);

      rpe_set_error (error, st, "'%s' holds %" G_GSIZE_FORMAT " msgpack objects; parsing them would take more "
                     "than %s", name, count, limit);
      return NULL;
    }

  msgpack_unpacked_init (&u);
  ret = msgpack_unpack_next (&u, (const char *) data, length, &off);
  if (ret != MSGPACK_UNPACK_SUCCESS || off != length)
    {
      rpe_set_error (error, ret == MSGPACK_UNPACK_NOMEM_ERROR ? RPE_ERROR_FORMAT : RPE_ERROR_FORMAT,
                     "'%s' is not a valid msgpack file%s", name,
                     ret == MSGPACK_UNPACK_NOMEM_ERROR ? " (nested too deeply)" : "");
      msgpack_unpacked_destroy (&u);
      return NULL;
    }
  root = &u.data;
  if (root->type != MSGPACK_OBJECT_MAP)
    {
      rpe_set_error (error, RPE_ERROR_FORMAT, "'%s' is msgpack but not a map of parameters", name);
      msgpack_unpacked_destroy (&u);
      return NULL;
    }
  /* the parameters: target/params, params, target, or everything */
  target = map_get (root, "target");
  if (target != NULL && (sub = map_get (target, "params")) != NULL && sub->type == MSGPACK_OBJECT_MAP)
    ;
  else if ((sub = map_get (root, "params")) != NULL && sub->type == MSGPACK_OBJECT_MAP)
    ;
  else if (target != NULL && target->type == MSGPACK_OBJECT_MAP)
    sub = target;
  else
    sub = root;

  r.file = name;
  r.set = rpe_tensor_set_new ();
  r.tensor_bytes = tree;
  r.path = g_string_new (NULL);
  if (!walk (&r, sub, 0, error))
    g_clear_pointer (&r.set, rpe_tensor_set_free);
  else if (rpe_tensor_set_size (r.set) == 0)
    {
      rpe_set_error (error, RPE_ERROR_NOT_FOUND, "'%s' is a msgpack file without floating-point arrays", name);
      g_clear_pointer (&r.set, rpe_tensor_set_free);
    }
  g_string_free (r.path, TRUE);
  msgpack_unpacked_destroy (&u);
  return r.set;
}

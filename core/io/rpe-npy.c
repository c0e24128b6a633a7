#include "config.h"

#include <string.h>

#include "rpe-alloc.h"
#include "rpe-error.h"
#include "rpe-file.h"
#include "rpe-npy.h"

/* The .npy format (numpy/lib/format.py, "NEP 1"):
 *
 *   "\x93NUMPY" major minor  header_len  header  data
 *
 * header_len is a little-endian uint16 in version 1.0 and uint32 in 2.0 and
 * 3.0 (3.0 only allows UTF-8 in the header).  The header is the repr of a
 * Python dict with exactly the keys 'descr', 'fortran_order' and 'shape',
 * padded with spaces and a final newline.  We parse that literal strictly
 * (no eval): strings, True/False, tuples of non-negative integers. */

#define NPY_MAGIC           "\x93NUMPY"
#define NPY_MAGIC_LEN       6
#define NPY_MAX_HEADER_LEN  ((gsize) 1 << 20)   /* 1 MiB: numpy itself refuses > 10 KB by default */

typedef struct
{
  const char *p;
  const char *end;
  const char *name;   /* for errors */
  GError    **error;
} Parser;

typedef enum
{
  VALUE_STRING,
  VALUE_BOOL,
  VALUE_TUPLE,
  VALUE_INT,
} ValueKind;

typedef struct
{
  ValueKind kind;
  char     *string;
  gboolean  boolean;
  gsize     n;
  gsize     dims[RPE_TENSOR_MAX_DIMS];
  gboolean  too_many_dims;
} Value;

static gboolean
parse_fail (Parser     *ps,
            const char *what)
{
  return rpe_set_error (ps->error, RPE_ERROR_FORMAT,
                        "'%s': malformed .npy header: %s", ps->name, what);
}

static void
skip_ws (Parser *ps)
{
  while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
    ps->p++;
}

static gboolean
expect_char (Parser     *ps,
             char        c,
             const char *what)
{
  skip_ws (ps);
  if (ps->p >= ps->end || *ps->p != c)
    return parse_fail (ps, what);
  ps->p++;
  return TRUE;
}

/* A Python string literal in ' or " quotes; escapes are refused (no valid
 * key or dtype needs one). */
static gboolean
parse_string (Parser  *ps,
              char   **out)
{
  char quote;
  const char *start;

  skip_ws (ps);
  if (ps->p >= ps->end || (*ps->p != '\'' && *ps->p != '"'))
    return parse_fail (ps, "expected a quoted string");
  quote = *ps->p++;
  start = ps->p;
  while (ps->p < ps->end && *ps->p != quote)
    {
      if (*ps->p == '\\' || *ps->p == '\n' || *ps->p == '\0')
        return parse_fail (ps, "unexpected character in a string");
      ps->p++;
    }
  if (ps->p >= ps->end)
    return parse_fail (ps, "unterminated string");
  *out = g_strndup (start, (gsize) (ps->p - start));
  ps->p++;
  return TRUE;
}

/* A non-negative decimal integer (an optional Python 2 'L' suffix allowed). */
static gboolean
parse_int (Parser *ps,
           gsize  *out)
{
  gsize v = 0;
  const char *start;

  skip_ws (ps);
  if (ps->p < ps->end && *ps->p == '-')
    {
      rpe_set_error (ps->error, RPE_ERROR_FORMAT,
                     "'%s': the .npy shape has a negative dimension", ps->name);
      return FALSE;
    }
  start = ps->p;
  while (ps->p < ps->end && g_ascii_isdigit (*ps->p))
    {
      if (!rpe_size_mul (v, 10, &v) || !rpe_size_add (v, (gsize) (*ps->p - '0'), &v))
        {
          rpe_set_error (ps->error, RPE_ERROR_OVERFLOW,
                         "'%s': a dimension in the .npy shape is too large", ps->name);
          return FALSE;
        }
      ps->p++;
    }
  if (ps->p == start)
    return parse_fail (ps, "expected an integer in the shape");
  if (ps->p < ps->end && (*ps->p == 'L' || *ps->p == 'l'))
    ps->p++;
  *out = v;
  return TRUE;
}

static gboolean
starts_with_word (Parser     *ps,
                  const char *word)
{
  gsize n = strlen (word);

  return (gsize) (ps->end - ps->p) >= n && memcmp (ps->p, word, n) == 0
         && (ps->p + n == ps->end || !(g_ascii_isalnum (ps->p[n]) || ps->p[n] == '_'));
}

static gboolean
parse_value (Parser *ps,
             Value  *v)
{
  skip_ws (ps);
  memset (v, 0, sizeof *v);
  if (ps->p >= ps->end)
    return parse_fail (ps, "expected a value");
  if (*ps->p == '\'' || *ps->p == '"')
    {
      v->kind = VALUE_STRING;
      return parse_string (ps, &v->string);
    }
  if (starts_with_word (ps, "True") || starts_with_word (ps, "False"))
    {
      v->kind = VALUE_BOOL;
      v->boolean = *ps->p == 'T';
      ps->p += v->boolean ? 4 : 5;
      return TRUE;
    }
  if (*ps->p == '(')
    {
      /* (), (n,), (a, b), (a, b,) — but (n) is an int, not a tuple */
      gboolean comma_seen = FALSE;

      ps->p++;
      v->kind = VALUE_TUPLE;
      skip_ws (ps);
      while (ps->p < ps->end && *ps->p != ')')
        {
          gsize d;

          if (!parse_int (ps, &d))
            return FALSE;
          if (v->n < RPE_TENSOR_MAX_DIMS)
            v->dims[v->n] = d;
          else
            v->too_many_dims = TRUE;
          v->n++;
          skip_ws (ps);
          if (ps->p < ps->end && *ps->p == ',')
            {
              comma_seen = TRUE;
              ps->p++;
              skip_ws (ps);
            }
          else if (ps->p < ps->end && *ps->p != ')')
            return parse_fail (ps, "expected ',' or ')' in the shape tuple");
        }
      if (ps->p >= ps->end)
        return parse_fail (ps, "unterminated shape tuple");
      ps->p++;
      if (v->n == 1 && !comma_seen)
        return parse_fail (ps, "the shape is not a tuple (a 1-D shape is written (n,))");
      return TRUE;
    }
  if (g_ascii_isdigit (*ps->p) || *ps->p == '-')
    {
      v->kind = VALUE_INT;
      return parse_int (ps, &v->dims[0]);
    }
  if (*ps->p == '[' || *ps->p == '{')
    {
      rpe_set_error (ps->error, RPE_ERROR_UNSUPPORTED,
                     "'%s': structured or nested .npy dtypes are not supported", ps->name);
      return FALSE;
    }
  return parse_fail (ps, "unexpected value");
}

typedef struct
{
  RpeDType dtype;
  gboolean big_endian;
  gsize    itemsize;
} NpyDescr;

static gboolean
parse_descr (const char *descr, const char *name, guint allow, NpyDescr *out, GError **error)
{
  char order, kind;
  const char *size;

  /* '<f4', '>f8', '=f4' ('=' is the native order; ours is little-endian).
   * '|' marks byte-order-free types (one byte each), none of which is a float. */
  if (strlen (descr) < 3)
    goto unsupported;
  order = descr[0];
  kind = descr[1];
  size = descr + 2;
  if ((allow & RPE_NPY_ALLOW_U8) != 0 && kind == 'u' && strcmp (size, "1") == 0
      && (order == '|' || order == '<' || order == '>' || order == '='))
    {
      /* bytes (a capture's UTF-8 metadata), held as float32 */
      out->big_endian = FALSE;
      out->dtype = RPE_DTYPE_U8;
      out->itemsize = 1;
      return TRUE;
    }
  if ((allow & RPE_NPY_ALLOW_INT) != 0 && kind == 'i' && (order == '<' || order == '>' || order == '=')
      && (strcmp (size, "8") == 0 || strcmp (size, "4") == 0))
    {
      /* integer arrays (e.g. LRPE's permutation table), held as float32 */
      out->big_endian = order == '>' || (order == '=' && G_BYTE_ORDER == G_BIG_ENDIAN);
      out->dtype = size[0] == '8' ? RPE_DTYPE_I64 : RPE_DTYPE_I32;
      out->itemsize = size[0] == '8' ? 8 : 4;
      return TRUE;
    }
  if (kind == 'f' && (order == '<' || order == '>' || order == '='))
    {
      out->big_endian = order == '>' || (order == '=' && G_BYTE_ORDER == G_BIG_ENDIAN);
      if (strcmp (size, "4") == 0)
        {
          out->dtype = RPE_DTYPE_F32;
          out->itemsize = 4;
          return TRUE;
        }
      if (strcmp (size, "8") == 0)
        {
          out->dtype = RPE_DTYPE_F64;
          out->itemsize = 8;
          return TRUE;
        }
      if (strcmp (size, "2") == 0)
        {
          out->dtype = RPE_DTYPE_F16;
          out->itemsize = 2;
          return TRUE;
        }
    }

unsupported:
  {
    const char *what;

    switch (strlen (descr) >= 2 ? descr[1] : descr[0])
      {
      case 'i': what = "signed integer"; break;
      case 'u': what = "unsigned integer"; break;
      case 'b': what = "boolean"; break;
      case 'c': what = "complex"; break;
      case 'O': what = "Python object"; break;
      case 'S': case 'a': what = "byte string"; break;
      case 'U': what = "unicode string"; break;
      case 'V': what = "void/structured"; break;
      case 'M': case 'm': what = "datetime"; break;
      case 'f': what = "floating point of this size or byte order"; break;
      default: what = "unknown"; break;
      }
    if (strcmp (descr, "O") == 0 || strcmp (descr, "|O") == 0)
      what = "Python object";
    return rpe_set_error (error, RPE_ERROR_UNSUPPORTED,
                          "'%s': the .npy dtype '%s' (%s) is not supported; "
                          "only float16, float32 and float64 ('<f2', '<f4', '<f8') are%s",
                          name, descr, what,
                          (allow & RPE_NPY_ALLOW_INT) != 0 ? " and int32, int64 ('<i4', '<i8')" : "");
  }
}

static guint32
load_u32 (const guint8 *p,
          gboolean      big_endian)
{
  guint32 v;

  memcpy (&v, p, 4);
  return big_endian ? GUINT32_FROM_BE (v) : GUINT32_FROM_LE (v);
}

static guint64
load_u64 (const guint8 *p,
          gboolean      big_endian)
{
  guint64 v;

  memcpy (&v, p, 8);
  return big_endian ? GUINT64_FROM_BE (v) : GUINT64_FROM_LE (v);
}

/* Element i of the payload as a float. */
static float
load_elem (const guint8   *payload,
           gsize           i,
           const NpyDescr *nd)
{
  switch (nd->dtype)
    {
    case RPE_DTYPE_F32:
      {
        guint32 bits = load_u32 (payload + 4 * i, nd->big_endian);
        float f;

        memcpy (&f, &bits, 4);
        return f;
      }
    case RPE_DTYPE_F64:
      {
        guint64 bits = load_u64 (payload + 8 * i, nd->big_endian);
        double d;

        memcpy (&d, &bits, 8);
        return (float) d;
      }
    case RPE_DTYPE_I64:
      return (float) (gint64) load_u64 (payload + 8 * i, nd->big_endian);
    case RPE_DTYPE_I32:
      return (float) (gint32) load_u32 (payload + 4 * i, nd->big_endian);
    case RPE_DTYPE_U8:
      return (float) payload[i];
    case RPE_DTYPE_F16:
    case RPE_DTYPE_BF16:
    default:
      {
        const guint8 *b = payload + 2 * i;
        guint16 bits = nd->big_endian ? (guint16) (b[0] << 8 | b[1]) : (guint16) (b[1] << 8 | b[0]);

        return rpe_half_to_float (bits);
      }
    }
}

static RpeTensor *
read_bytes (const guint8 *data, gsize length, const char *name_for_errors, guint allow, GError **error)
{
  const char *name = name_for_errors != NULL ? name_for_errors : "(npy)";
  guint major, minor;
  gsize header_len, prefix_len, header_end, data_bytes, count, available;
  Parser ps;
  char *descr = NULL;
  gboolean have_descr = FALSE, have_order = FALSE, have_shape = FALSE;
  gboolean fortran = FALSE;
  Value shape = { 0 };
  NpyDescr nd = { 0 };
  RpeTensor *tensor = NULL;
  const guint8 *payload;

  if (length == 0)
    {
      rpe_set_error (error, RPE_ERROR_FORMAT, "'%s' is empty", name);
      return NULL;
    }
  if (length < NPY_MAGIC_LEN || memcmp (data, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
    {
      rpe_set_error (error, RPE_ERROR_FORMAT,
                     "'%s' is not a .npy file (it does not start with \"\\x93NUMPY\")", name);
      return NULL;
    }
  if (length < 8)
    {
      rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': truncated .npy header (no version)", name);
      return NULL;
    }
  major = data[6];
  minor = data[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    {
      rpe_set_error (error, RPE_ERROR_UNSUPPORTED,
                     "'%s': .npy format version %u.%u is not supported (1.0, 2.0 and 3.0 are)",
                     name, major, minor);
      return NULL;
    }
  prefix_len = major == 1 ? 10 : 12;
  if (length < prefix_len)
    {
      rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': truncated .npy header (no header length)", name);
      return NULL;
    }
  header_len = major == 1 ? (gsize) (data[8] | (data[9] << 8)) : (gsize) load_u32 (data + 8, FALSE);
  if (header_len > NPY_MAX_HEADER_LEN)
    {
      rpe_set_error (error, RPE_ERROR_FORMAT,
                     "'%s': the .npy header length (%" G_GSIZE_FORMAT " bytes) exceeds the %"
                     G_GSIZE_FORMAT "-byte limit", name, header_len, NPY_MAX_HEADER_LEN);
      return NULL;
    }
  if (!rpe_size_add (prefix_len, header_len, &header_end) || header_end > length)
    {
      rpe_set_error (error, RPE_ERROR_FORMAT,
                     "'%s': truncated .npy header (%" G_GSIZE_FORMAT " bytes announced, %"
                     G_GSIZE_FORMAT " present)", name, header_len, length - prefix_len);
      return NULL;
    }
  if (major < 3 && memchr (data + prefix_len, '\0', header_len) != NULL)
    {
      rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': malformed .npy header: NUL byte", name);
      return NULL;
    }
  if (major == 3 && !g_utf8_validate ((const char *) data + prefix_len, (gssize) header_len, NULL))
    {
      rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': malformed .npy header: invalid UTF-8", name);
      return NULL;
    }

  ps.p = (const char *) data + prefix_len;
  ps.end = (const char *) data + header_end;
  ps.name = name;
  ps.error = error;

  if (!expect_char (&ps, '{', "the header is not a dict (no '{')"))
    return NULL;
  skip_ws (&ps);
  while (ps.p < ps.end && *ps.p != '}')
    {
      char *key = NULL;
      Value v;

      if (!parse_string (&ps, &key))
        goto out;
      if (!expect_char (&ps, ':', "expected ':' after a key"))
        {
          g_free (key);
          goto out;
        }
      if (!parse_value (&ps, &v))
        {
          g_free (key);
          g_free (v.string);
          goto out;
        }
      if (strcmp (key, "descr") == 0 && !have_descr)
        {
          have_descr = TRUE;
          if (v.kind != VALUE_STRING)
            {
              g_free (key);
              parse_fail (&ps, "'descr' is not a string");
              goto out;
            }
          descr = v.string;
        }
      else if (strcmp (key, "fortran_order") == 0 && !have_order)
        {
          have_order = TRUE;
          if (v.kind != VALUE_BOOL)
            {
              g_free (key);
              g_free (v.string);
              parse_fail (&ps, "'fortran_order' is not True or False");
              goto out;
            }
          fortran = v.boolean;
        }
      else if (strcmp (key, "shape") == 0 && !have_shape)
        {
          have_shape = TRUE;
          if (v.kind != VALUE_TUPLE)
            {
              g_free (key);
              g_free (v.string);
              parse_fail (&ps, "'shape' is not a tuple of integers");
              goto out;
            }
          shape = v;
        }
      else
        {
          g_autofree char *msg = g_strdup_printf ("unexpected or repeated key '%s'", key);
          g_free (key);
          g_free (v.string);
          parse_fail (&ps, msg);
          goto out;
        }
      g_free (key);
      skip_ws (&ps);
      if (ps.p < ps.end && *ps.p == ',')
        {
          ps.p++;
          skip_ws (&ps);
        }
      else if (ps.p < ps.end && *ps.p != '}')
        {
          parse_fail (&ps, "expected ',' or '}' in the dict");
          goto out;
        }
    }
  if (ps.p >= ps.end)
    {
      parse_fail (&ps, "unterminated dict (no '}')");
      goto out;
    }
  ps.p++;
  skip_ws (&ps);
  if (ps.p != ps.end)
    {
      parse_fail (&ps, "unexpected text after the dict");
      goto out;
    }
  if (!have_descr || !have_order || !have_shape)
    {
      rpe_set_error (error, RPE_ERROR_FORMAT,
                     "'%s': malformed .npy header: missing key%s%s%s", name,
                     have_descr ? "" : " 'descr'", have_order ? "" : " 'fortran_order'",
                     have_shape ? "" : " 'shape'");
      goto out;
    }
  if (!parse_descr (descr, name, allow, &nd, error))
    goto out;
  if (shape.too_many_dims)
    {
      rpe_set_error (error, RPE_ERROR_UNSUPPORTED,
                     "'%s': the array has %" G_GSIZE_FORMAT " dimensions; at most %d are supported",
                     name, shape.n, RPE_TENSOR_MAX_DIMS);
      goto out;
    }

  /* sizes: overflow-checked, then against the bytes present, before allocating */
  if (!rpe_size_prod (&count, shape.n, shape.dims)
      || rpe_size_bytes (&data_bytes, nd.itemsize, count, 1, 1, 1) != RPE_OK)
    {
      rpe_set_error (error, RPE_ERROR_OVERFLOW,
                     "'%s': the .npy shape is absurd (its byte size overflows)", name);
      goto out;
    }
  available = length - header_end;
  if (available < data_bytes)
    {
      rpe_set_error (error, RPE_ERROR_FORMAT,
                     "'%s': truncated .npy data: the shape needs %" G_GSIZE_FORMAT " bytes, %"
                     G_GSIZE_FORMAT " are present", name, data_bytes, available);
      goto out;
    }
  if (available > data_bytes)
    {
      rpe_set_error (error, RPE_ERROR_FORMAT,
                     "'%s': %" G_GSIZE_FORMAT " unexpected bytes after the .npy data", name,
                     available - data_bytes);
      goto out;
    }

  tensor = rpe_tensor_new ("", shape.n, shape.dims, error);
  if (tensor == NULL)
    {
      /* rpe_tensor_new's message does not name the file: prefix it */
      g_prefix_error (error, "'%s': ", name);
      goto out;
    }
  tensor->dtype = nd.dtype;
  payload = data + header_end;
  if (!fortran || shape.n < 2)
    {
      for (gsize i = 0; i < count; i++)
        tensor->data[i] = load_elem (payload, i, &nd);
    }
  else
    {
      /* Fortran order: the file holds the array column-major (first index
       * fastest).  Each element goes straight to its C-order place, so the
       * load needs no memory beyond the tensor itself. */
      gsize idx[RPE_TENSOR_MAX_DIMS] = { 0 }, cstride[RPE_TENSOR_MAX_DIMS];
      gsize dst = 0;

      cstride[shape.n - 1] = 1;
      for (gsize k = shape.n - 1; k-- > 0;)
        cstride[k] = cstride[k + 1] * shape.dims[k + 1];
      for (gsize i = 0; i < count; i++)
        {
          tensor->data[dst] = load_elem (payload, i, &nd);
          for (gsize k = 0; k < shape.n; k++)
            {
              dst += cstride[k];
              if (++idx[k] < shape.dims[k])
                break;
              dst -= idx[k] * cstride[k];
              idx[k] = 0;
            }
        }
    }

out:
  g_free (descr);
  return tensor;
}

RpeTensor *
rpe_npy_read_bytes (const guint8 *data,
                    gsize         length,
                    const char   *name_for_errors,
                    GError      **error)
{
  return read_bytes (data, length, name_for_errors, 0, error);
}

RpeTensor *
rpe_npy_read_bytes_allowing (const guint8 *data, gsize length, const char *name_for_errors, guint allow, GError **error)
{
  return read_bytes (data, length, name_for_errors, allow, error);
}

static RpeTensor *
read_file (const char *path, guint allow, GError **error)
{
  GBytes *bytes;
  RpeTensor *tensor = NULL;
  gsize length;
  const guint8 *data;

  /* one budget for the file's bytes and the array made from them */
  rpe_budget_scope_begin ();
  bytes = rpe_map_file (path, error);
  if (bytes != NULL)
    {
      data = g_bytes_get_data (bytes, &length);
      tensor = read_bytes (data, length, path, allow, error);
      g_bytes_unref (bytes);
    }
  rpe_budget_scope_end ();
  return tensor;
}

RpeTensor *
rpe_npy_read (const char  *path,
              GError     **error)
{
  return read_file (path, 0, error);
}

RpeTensor *
rpe_npy_read_int_ok (const char  *path,
                     GError     **error)
{
  return read_file (path, RPE_NPY_ALLOW_INT, error);
}

/* ---- writer ----------------------------------------------------------- */

struct _RpeNpyWriter
{
  RpeAtomicFile *file;
  gboolean       as_f64;
  gsize          count;     /* elements the shape holds */
  gsize          written;   /* elements appended so far */
};

RpeNpyWriter *
rpe_npy_writer_new (const char   *path,
                    gsize         ndim,
                    const gsize  *shape,
                    gboolean      as_f64,
                    GError      **error)
{
  GString *header;
  gsize count, prefix_len, total, pad;
  guint8 prefix[12];
  RpeAtomicFile *file;
  RpeNpyWriter *w;

  if (ndim > RPE_TENSOR_MAX_DIMS || (ndim > 0 && shape == NULL))
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, "Cannot write '%s': invalid shape", path);
      return NULL;
    }
  if (!rpe_size_prod (&count, ndim, shape) || count > G_MAXSIZE / 8)
    {
      rpe_set_error (error, RPE_ERROR_OVERFLOW, "Cannot write '%s': the shape overflows", path);
      return NULL;
    }

  header = g_string_new (NULL);
  g_string_append_printf (header, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                          as_f64 ? "<f8" : "<f4");
  for (gsize i = 0; i < ndim; i++)
    g_string_append_printf (header, i == 0 ? "%" G_GSIZE_FORMAT : ", %" G_GSIZE_FORMAT, shape[i]);
  if (ndim == 1)
    g_string_append_c (header, ',');
  g_string_append (header, "), }");

  /* pad with spaces so that magic + version + length + header (ending in
   * '\n') is a multiple of 64 bytes */
  prefix_len = header->len + 1 + 10 <= 65535 + 10 ? 10 : 12;
  total = prefix_len + header->len + 1;
  pad = (64 - total % 64) % 64;
  if (prefix_len == 10 && header->len + 1 + pad > 65535)
    {
      prefix_len = 12;
      total = prefix_len + header->len + 1;
      pad = (64 - total % 64) % 64;
    }
  for (gsize i = 0; i < pad; i++)
    g_string_append_c (header, ' ');
  g_string_append_c (header, '\n');

  memcpy (prefix, NPY_MAGIC, NPY_MAGIC_LEN);
  prefix[6] = prefix_len == 10 ? 1 : 2;
  prefix[7] = 0;
  if (prefix_len == 10)
    {
      prefix[8] = (guint8) (header->len & 0xff);
      prefix[9] = (guint8) (header->len >> 8);
    }
  else
    {
      guint32 le = GUINT32_TO_LE ((guint32) header->len);
      memcpy (prefix + 8, &le, 4);
    }

  /* the whole file, checked against the free space before anything is written */
  if (!rpe_output_space_check (path, (guint64) prefix_len + header->len + (guint64) count * (as_f64 ? 8 : 4), error))
    file = NULL;
  else
    file = rpe_atomic_file_new (path, error);
  if (file == NULL)
    {
      g_string_free (header, TRUE);
      return NULL;
    }
  if (!rpe_atomic_file_write (file, prefix, prefix_len, error)
      || !rpe_atomic_file_write (file, header->str, header->len, error))
    {
      g_string_free (header, TRUE);
      rpe_atomic_file_abort (file);
      return NULL;
    }
  g_string_free (header, TRUE);

  w = g_new0 (RpeNpyWriter, 1);
  w->file = file;
  w->as_f64 = as_f64;
  w->count = count;
  return w;
}

gboolean
rpe_npy_writer_append (RpeNpyWriter  *w,
                       const float   *data,
                       gsize          count,
                       GError       **error)
{
  enum { CHUNK = 8192 };
  guint8 buf[CHUNK * 8];

  g_return_val_if_fail (w != NULL, FALSE);
  if (count > w->count - w->written)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          "npy writer: %zu more elements than the shape holds",
                          (size_t) (count - (w->count - w->written)));
  if (count > 0 && data == NULL)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, "npy writer: no data");
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
  if (!w->as_f64)
    {
      /* little-endian float32 is the file's layout: write the slab as it is */
      if (count > 0 && !rpe_atomic_file_write (w->file, data, count * 4, error))
        return FALSE;
      w->written += count;
      return TRUE;
    }
#endif
  for (gsize i = 0; i < count; i += CHUNK)
    {
      gsize n = MIN ((gsize) CHUNK, count - i);

      for (gsize j = 0; j < n; j++)
        {
          if (w->as_f64)
            {
              double d = data[i + j];
              guint64 bits;
              memcpy (&bits, &d, 8);
              bits = GUINT64_TO_LE (bits);
              memcpy (buf + 8 * j, &bits, 8);
            }
          else
            {
              guint32 bits;
              memcpy (&bits, &data[i + j], 4);
              bits = GUINT32_TO_LE (bits);
              memcpy (buf + 4 * j, &bits, 4);
            }
        }
      if (!rpe_atomic_file_write (w->file, buf, n * (w->as_f64 ? 8 : 4), error))
        return FALSE;
    }
  w->written += count;
  return TRUE;
}

gboolean
rpe_npy_writer_flush (RpeNpyWriter  *w,
                      GError       **error)
{
  g_return_val_if_fail (w != NULL, FALSE);
  if (w->written != w->count)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          "npy writer: %zu of %zu elements written", (size_t) w->written, (size_t) w->count);
  return rpe_atomic_file_flush (w->file, error);
}

gboolean
rpe_npy_writer_commit (RpeNpyWriter  *w,
                       GError       **error)
{
  gboolean ok;

  g_return_val_if_fail (w != NULL, FALSE);
  if (w->written != w->count)
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                     "npy writer: %zu of %zu elements written", (size_t) w->written, (size_t) w->count);
      rpe_npy_writer_abort (w);
      return FALSE;
    }
  ok = rpe_atomic_file_commit (w->file, error);
  g_free (w);
  return ok;
}

void
rpe_npy_writer_abort (RpeNpyWriter *w)
{
  if (w == NULL)
    return;
  rpe_atomic_file_abort (w->file);
  g_free (w);
}

gboolean
rpe_npy_write (const char   *path,
               const float  *data,
               gsize         ndim,
               const gsize  *shape,
               gboolean      as_f64,
               GError      **error)
{
  RpeNpyWriter *w;
  gsize count;

  if (ndim <= RPE_TENSOR_MAX_DIMS && (ndim == 0 || shape != NULL)
      && rpe_size_prod (&count, ndim, shape) && count > 0 && data == NULL)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, "Cannot write '%s': no data", path);
  w = rpe_npy_writer_new (path, ndim, shape, as_f64, error);
  if (w == NULL)
    return FALSE;
  if (!rpe_npy_writer_append (w, data, w->count, error))
    {
      rpe_npy_writer_abort (w);
      return FALSE;
    }
  return rpe_npy_writer_commit (w, error);
}

#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>

#include "rpe-alloc.h"
#include "rpe-error.h"
#include "rpe-file.h"
#include "rpe-safetensors.h"

/* The .safetensors format (huggingface/safetensors):
 *
 *   u64 little-endian N | N bytes of UTF-8 JSON | data buffer
 *
 * The JSON is an object mapping tensor names to
 *   {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}
 * (offsets relative to the start of the data buffer), plus an optional
 * "__metadata__" object of string values.
 *
 * Order: tensors are returned sorted by their data offsets, i.e. in the order
 * their data lies in the file (a zero-size tensor [k, k] comes before one that
 * starts at k; ties keep the JSON order).
 *
 * Validation is as strict as the reference reader's (safetensors' `validate`):
 * sorted by offsets, the tensors' data must be contiguous, starting at 0, with
 * no gap and no overlap (no two tensors share bytes), and must cover the data
 * buffer exactly (no trailing bytes).  Names may not hold NUL (a "\u0000"
 * anywhere in the header is refused: json-glib would cut the name there), the
 * "__metadata__" values must be strings, and a file holds at most
 * RPE_SAFETENSORS_MAX_TENSORS tensors. */

#define ST_MAX_HEADER_LEN ((guint64) 100 << 20)   /* 100 MiB, as the reference reader */
/* What a header costs in memory, per header byte: json-glib's nodes, the key
 * scan, our entries, the tensor set and the module discovery after it (measured:
 * peak RSS grows by 22 bytes per header byte for 60,000 zero-size tensors in a
 * 5 MB header).  Charged to the budget before parsing. */
#define ST_PARSE_BYTES_PER_BYTE 24

typedef struct
{
  char       *name;
  RpeDType    dtype;
  gsize       ndim;
  gsize       shape[RPE_TENSOR_MAX_DIMS];
  gsize       count;
  gsize       begin;
  gsize       end;
  gsize       json_index;
} Entry;

static void
entry_clear (gpointer p)
{
  Entry *e = p;

  g_free (e->name);
}

static int
entry_compare (gconstpointer a,
               gconstpointer b)
{
  const Entry *x = a, *y = b;

  if (x->begin != y->begin)
    return x->begin < y->begin ? -1 : 1;
  if (x->end != y->end)
    return x->end < y->end ? -1 : 1;
  return x->json_index < y->json_index ? -1 : x->json_index > y->json_index ? 1 : 0;
}

static gboolean
dtype_from_string (const char *s,
                   RpeDType   *out)
{
  if (strcmp (s, "F32") == 0)
    *out = RPE_DTYPE_F32;
  else if (strcmp (s, "F64") == 0)
    *out = RPE_DTYPE_F64;
  else if (strcmp (s, "F16") == 0)
    *out = RPE_DTYPE_F16;
  else if (strcmp (s, "BF16") == 0)
    *out = RPE_DTYPE_BF16;
  else
    return FALSE;
  return TRUE;
}

/* A JSON integer >= 0 that fits in gsize. */
static gboolean
node_get_size (JsonNode *node,
               gsize    *out)
{
  gint64 v;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64)
    return FALSE;
  v = json_node_get_int (node);
  if (v < 0 || (guint64) v > G_MAXSIZE)
    return FALSE;
  *out = (gsize) v;
  return TRUE;
}

/* Counts the members of the top-level JSON object by scanning the raw text
 * (which json-glib has already validated).  json-glib silently keeps the last
 * of duplicate keys, so a count above json_object_get_size() reveals
 * duplicates.  Also returns the raw spelling of the first repeated key, if a
 * repeat is spelled identically. */
static gsize
count_top_level_keys (const char  *p,
                      const char  *end,
                      char       **duplicate)
{
  int depth = 0;
  gsize count = 0;
  gboolean expect_key = FALSE;
  GHashTable *seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  *duplicate = NULL;
  for (; p < end; p++)
    {
      char c = *p;

      if (c == '"')
        {
          const char *start = ++p;

          while (p < end && *p != '"')
            {
              if (*p == '\\')
                p++;
              p++;
            }
          if (depth == 1 && expect_key)
            {
              char *key = g_strndup (start, (gsize) (MIN (p, end) - start));

              count++;
              if (g_hash_table_contains (seen, key))
                {
                  if (*duplicate == NULL)
                    *duplicate = g_strdup (key);
                  g_free (key);
                }
              else
                g_hash_table_add (seen, key);
              expect_key = FALSE;
            }
        }
      else if (c == '{' || c == '[')
        {
          depth++;
          expect_key = c == '{' && depth == 1;
        }
      else if (c == '}' || c == ']')
        depth--;
      else if (c == ',' && depth == 1)
        expect_key = TRUE;
    }
  g_hash_table_destroy (seen);
  return count;
}

/* TRUE if a JSON string in [p, end) holds the escape \u0000 (a NUL character). */
static gboolean
holds_nul_escape (const char *p,
                  const char *end)
{
  for (; p < end; p++)
    if (*p == '"')
      for (p++; p < end && *p != '"'; p++)
        if (*p == '\\')
          {
            if (p + 5 < end && p[1] == 'u' && memcmp (p + 2, "0000", 4) == 0)
              return TRUE;
            p++;
          }
  return FALSE;
}

/* json-glib's parser recurses once per nesting level: refuse deep nesting
 * (a valid header nests 3 levels) before handing it a 100 MiB "[[[[..." that
 * would exhaust the stack. */
#define ST_MAX_DEPTH 16

static gboolean
nesting_ok (const char *p,
            const char *end)
{
  int depth = 0;

  for (; p < end; p++)
    {
      if (*p == '"')
        {
          for (p++; p < end && *p != '"'; p++)
            if (*p == '\\')
              p++;
        }
      else if (*p == '{' || *p == '[')
        {
          if (++depth > ST_MAX_DEPTH)
            return FALSE;
        }
      else if (*p == '}' || *p == ']')
        depth--;
    }
  return TRUE;
}

static void
convert (const guint8 *src,
         RpeDType      dtype,
         gsize         count,
         float        *dst)
{
  switch (dtype)
    {
    case RPE_DTYPE_F32:
      for (gsize i = 0; i < count; i++)
        {
          guint32 bits;
          memcpy (&bits, src + 4 * i, 4);
          bits = GUINT32_FROM_LE (bits);
          memcpy (&dst[i], &bits, 4);
        }
      break;
    case RPE_DTYPE_F64:
      for (gsize i = 0; i < count; i++)
        {
          guint64 bits;
          double d;
          memcpy (&bits, src + 8 * i, 8);
          bits = GUINT64_FROM_LE (bits);
          memcpy (&d, &bits, 8);
          dst[i] = (float) d;
        }
      break;
    case RPE_DTYPE_F16:
      for (gsize i = 0; i < count; i++)
        dst[i] = rpe_half_to_float ((guint16) (src[2 * i] | src[2 * i + 1] << 8));
      break;
    case RPE_DTYPE_BF16:
      for (gsize i = 0; i < count; i++)
        dst[i] = rpe_bfloat16_to_float ((guint16) (src[2 * i] | src[2 * i + 1] << 8));
      break;
    default:
      break;
    }
}

static gboolean
parse_entry (const char  *file,
             const char  *tname,
             JsonNode    *node,
             gsize        data_size,
             Entry       *e,
             GError     **error)
{
  JsonObject *obj;
  JsonNode *dtype_node, *shape_node, *offsets_node;
  JsonArray *shape, *offsets;
  const char *dtype_str;
  gsize bytes;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    return rpe_set_error (error, RPE_ERROR_FORMAT,
                          "'%s': the header entry of tensor '%s' is not an object", file, tname);
  obj = json_node_get_object (node);
  dtype_node = json_object_get_member (obj, "dtype");
  shape_node = json_object_get_member (obj, "shape");
  offsets_node = json_object_get_member (obj, "data_offsets");
  if (dtype_node == NULL || shape_node == NULL || offsets_node == NULL)
    return rpe_set_error (error, RPE_ERROR_FORMAT,
                          "'%s': tensor '%s' lacks %s in the header", file, tname,
                          dtype_node == NULL ? "\"dtype\"" : shape_node == NULL ? "\"shape\"" : "\"data_offsets\"");
  if (!JSON_NODE_HOLDS_VALUE (dtype_node) || json_node_get_value_type (dtype_node) != G_TYPE_STRING)
    return rpe_set_error (error, RPE_ERROR_FORMAT,
                          "'%s': the dtype of tensor '%s' is not a string", file, tname);
  dtype_str = json_node_get_string (dtype_node);
  if (!dtype_from_string (dtype_str, &e->dtype))
    return rpe_set_error (error, RPE_ERROR_UNSUPPORTED,
                          "'%s': tensor '%s' has dtype %s, which is not supported "
                          "(only F32, F64, F16 and BF16 are)", file, tname, dtype_str);

  if (!JSON_NODE_HOLDS_ARRAY (shape_node))
    return rpe_set_error (error, RPE_ERROR_FORMAT,
                          "'%s': the shape of tensor '%s' is not an array", file, tname);
  shape = json_node_get_array (shape_node);
  e->ndim = json_array_get_length (shape);
  if (e->ndim > RPE_TENSOR_MAX_DIMS)
    return rpe_set_error (error, RPE_ERROR_UNSUPPORTED,
                          "'%s': tensor '%s' has %" G_GSIZE_FORMAT " dimensions; at most %d are supported",
                          file, tname, e->ndim, RPE_TENSOR_MAX_DIMS);
  for (guint i = 0; i < e->ndim; i++)
    if (!node_get_size (json_array_get_element (shape, i), &e->shape[i]))
      return rpe_set_error (error, RPE_ERROR_FORMAT,
                            "'%s': the shape of tensor '%s' has an entry that is not a non-negative integer",
                            file, tname);
  if (!rpe_size_prod (&e->count, e->ndim, e->shape)
      || rpe_size_bytes (&bytes, rpe_dtype_size (e->dtype), e->count, 1, 1, 1) != RPE_OK)
    return rpe_set_error (error, RPE_ERROR_OVERFLOW,
                          "'%s': the shape of tensor '%s' is absurd (its byte size overflows)", file, tname);

  if (!JSON_NODE_HOLDS_ARRAY (offsets_node)
      || json_array_get_length (offsets = json_node_get_array (offsets_node)) != 2
      || !node_get_size (json_array_get_element (offsets, 0), &e->begin)
      || !node_get_size (json_array_get_element (offsets, 1), &e->end))
    return rpe_set_error (error, RPE_ERROR_FORMAT,
                          "'%s': the data_offsets of tensor '%s' are not two non-negative integers",
                          file, tname);
  if (e->end < e->begin)
    return rpe_set_error (error, RPE_ERROR_FORMAT,
                          "'%s': tensor '%s' has data_offsets [%" G_GSIZE_FORMAT ", %" G_GSIZE_FORMAT
                          "] with end < begin", file, tname, e->begin, e->end);
  if (e->end > data_size)
    return rpe_set_error (error, RPE_ERROR_FORMAT,
                          "'%s': tensor '%s' has data_offsets [%" G_GSIZE_FORMAT ", %" G_GSIZE_FORMAT
                          "] beyond the %" G_GSIZE_FORMAT " bytes of data (truncated file?)",
                          file, tname, e->begin, e->end, data_size);
  if (e->end - e->begin != bytes)
    return rpe_set_error (error, RPE_ERROR_FORMAT,
                          "'%s': tensor '%s' has %" G_GSIZE_FORMAT " bytes of data but its shape and "
                          "dtype %s need %" G_GSIZE_FORMAT, file, tname, e->end - e->begin,
                          dtype_str, bytes);
  return TRUE;
}

static RpeTensorSet *
rpe_safetensors_read_bytes_impl (const guint8 *data,
                            gsize         length,
                            const char   *name_for_errors,
                            GError      **error)
{
  const char *file = name_for_errors != NULL ? name_for_errors : "(safetensors)";
  guint64 header_len;
  gsize data_size, total_bytes = 0;
  RpeStatus st;
  const guint8 *buffer;
  g_autoptr (JsonParser) parser = NULL;
  g_autoptr (GError) local = NULL;
  g_autofree char *duplicate = NULL;
  JsonNode *root;
  JsonObject *obj;
  GList *members;
  GArray *entries;
  RpeTensorSet *set = NULL;
  gsize raw_count, index = 0;

  if (length < 8)
    {
      rpe_set_error (error, RPE_ERROR_FORMAT,
                     "'%s' is too short for a .safetensors file (%" G_GSIZE_FORMAT " bytes)", file, length);
      return NULL;
    }
  memcpy (&header_len, data, 8);
  header_len = GUINT64_FROM_LE (header_len);
  if (header_len > ST_MAX_HEADER_LEN)
    {
      rpe_set_error (error, RPE_ERROR_FORMAT,
                     "'%s': the .safetensors header length (%" G_GUINT64_FORMAT " bytes) exceeds the %"
                     G_GUINT64_FORMAT "-byte limit", file, header_len, ST_MAX_HEADER_LEN);
      return NULL;
    }
  if (header_len > length - 8)
    {
      rpe_set_error (error, RPE_ERROR_FORMAT,
                     "'%s': the .safetensors header length (%" G_GUINT64_FORMAT " bytes) exceeds the "
                     "file size (%" G_GSIZE_FORMAT " bytes); the file is truncated or not .safetensors",
                     file, header_len, length);
      return NULL;
    }
  if (header_len < 2)
    {
      rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the .safetensors header is empty", file);
      return NULL;
    }
  buffer = data + 8 + header_len;
  data_size = length - 8 - (gsize) header_len;

  if (!g_utf8_validate ((const char *) data + 8, (gssize) header_len, NULL))
    {
      rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the .safetensors header is not valid UTF-8", file);
      return NULL;
    }
  if (!nesting_ok ((const char *) data + 8, (const char *) data + 8 + header_len))
    {
      rpe_set_error (error, RPE_ERROR_FORMAT,
                     "'%s': the .safetensors header is nested too deeply (more than %d levels)",
                     file, ST_MAX_DEPTH);
      return NULL;
    }
  if (holds_nul_escape ((const char *) data + 8, (const char *) data + 8 + header_len))
    {
      rpe_set_error (error, RPE_ERROR_FORMAT,
                     "'%s': the .safetensors header holds a NUL character (\\u0000); tensor names "
                     "and metadata may not", file);
      return NULL;
    }
  if ((st = rpe_budget_charge ((gsize) header_len * ST_PARSE_BYTES_PER_BYTE)) != RPE_OK)
    {
      g_autofree char *limit = rpe_memory_limit_text (st);

      rpe_set_error (error, st,
                     "'%s': parsing the %" G_GUINT64_FORMAT "-byte .safetensors header needs about %"
                     G_GUINT64_FORMAT " bytes, more than %s",
                     file, header_len, header_len * ST_PARSE_BYTES_PER_BYTE, limit);
      return NULL;
    }
  parser = json_parser_new ();
  if (!json_parser_load_from_data (parser, (const char *) data + 8, (gssize) header_len, &local))
    {
      rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the .safetensors header is not valid JSON: %s",
                     file, local->message);
      return NULL;
    }
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the .safetensors header is not a JSON object", file);
      return NULL;
    }
  obj = json_node_get_object (root);

  if (json_object_get_size (obj) > RPE_SAFETENSORS_MAX_TENSORS + 1)
    {
      rpe_set_error (error, RPE_ERROR_UNSUPPORTED,
                     "'%s' holds %u tensors; at most %u are supported", file,
                     json_object_get_size (obj), RPE_SAFETENSORS_MAX_TENSORS);
      return NULL;
    }
  raw_count = count_top_level_keys ((const char *) data + 8, (const char *) data + 8 + header_len, &duplicate);
  if (raw_count != json_object_get_size (obj))
    {
      if (duplicate != NULL)
        rpe_set_error (error, RPE_ERROR_FORMAT,
                       "'%s': the .safetensors header names tensor '%s' more than once", file, duplicate);
      else
        rpe_set_error (error, RPE_ERROR_FORMAT,
                       "'%s': the .safetensors header repeats a tensor name", file);
      return NULL;
    }

  entries = g_array_new (FALSE, TRUE, sizeof (Entry));
  g_array_set_clear_func (entries, entry_clear);
  members = json_object_get_members (obj);
  for (GList *l = members; l != NULL; l = l->next)
    {
      const char *tname = l->data;
      JsonNode *node = json_object_get_member (obj, tname);
      Entry e = { 0 };

      if (strcmp (tname, "__metadata__") == 0)
        {
          JsonObject *meta;
          GList *keys;
          gboolean ok = TRUE;

          if (!JSON_NODE_HOLDS_OBJECT (node))
            {
              rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': \"__metadata__\" is not an object", file);
              goto fail;
            }
          meta = json_node_get_object (node);
          keys = json_object_get_members (meta);
          for (GList *k = keys; k != NULL && ok; k = k->next)
            {
              JsonNode *v = json_object_get_member (meta, k->data);
              if (!JSON_NODE_HOLDS_VALUE (v) || json_node_get_value_type (v) != G_TYPE_STRING)
                {
                  rpe_set_error (error, RPE_ERROR_FORMAT,
                                 "'%s': \"__metadata__\" entry '%s' is not a string", file,
                                 (const char *) k->data);
                  ok = FALSE;
                }
            }
          g_list_free (keys);
          if (!ok)
            goto fail;
          continue;
        }
      if (!parse_entry (file, tname, node, data_size, &e, error))
        goto fail;
      if (!rpe_size_add (total_bytes, e.count, &total_bytes))
        {
          rpe_set_error (error, RPE_ERROR_OVERFLOW, "'%s': the tensors' total size overflows", file);
          goto fail;
        }
      e.name = g_strdup (tname);
      e.json_index = index++;
      g_array_append_val (entries, e);
    }

  /* everything fits the budget before anything is allocated */
  st = RPE_ERROR_NO_MEMORY;
  if (!rpe_size_mul (total_bytes, sizeof (float), &total_bytes) || (st = rpe_budget_check (total_bytes)) != RPE_OK)
    {
      g_autofree char *limit = rpe_memory_limit_text (st);

      rpe_set_error (error, st,
                     "'%s': the tensors need %" G_GSIZE_FORMAT " bytes as float32 (and %" G_GSIZE_FORMAT
                     " are already held for this file), more than %s", file, total_bytes,
                     rpe_budget_scope_used (), limit);
      goto fail;
    }
  if (entries->len > RPE_SAFETENSORS_MAX_TENSORS)
    {
      rpe_set_error (error, RPE_ERROR_UNSUPPORTED, "'%s' holds %u tensors; at most %u are supported",
                     file, entries->len, RPE_SAFETENSORS_MAX_TENSORS);
      goto fail;
    }

  /* the data offsets tile the buffer: contiguous from 0, no overlap, no gap,
   * nothing after the last tensor */
  g_array_sort (entries, entry_compare);
  {
    gsize expected = 0;

    for (guint i = 0; i < entries->len; i++)
      {
        const Entry *e = &g_array_index (entries, Entry, i);

        if (e->begin < expected)
          {
            const Entry *prev = &g_array_index (entries, Entry, i - 1);

            rpe_set_error (error, RPE_ERROR_FORMAT,
                           "'%s': the data of tensor '%s' [%" G_GSIZE_FORMAT ", %" G_GSIZE_FORMAT
                           ") overlaps that of tensor '%s' [%" G_GSIZE_FORMAT ", %" G_GSIZE_FORMAT ")",
                           file, e->name, e->begin, e->end, prev->name, prev->begin, prev->end);
            goto fail;
          }
        if (e->begin > expected)
          {
            rpe_set_error (error, RPE_ERROR_FORMAT,
                           "'%s': %" G_GSIZE_FORMAT " bytes of data at offset %" G_GSIZE_FORMAT
                           " belong to no tensor (tensor '%s' starts at %" G_GSIZE_FORMAT "); the "
                           "offsets must be contiguous", file, e->begin - expected, expected,
                           e->name, e->begin);
            goto fail;
          }
        expected = e->end;
      }
    if (expected != data_size)
      {
        rpe_set_error (error, RPE_ERROR_FORMAT,
                       "'%s': the tensors cover %" G_GSIZE_FORMAT " bytes of data but the file holds %"
                       G_GSIZE_FORMAT " (%" G_GSIZE_FORMAT " trailing bytes)", file, expected, data_size,
                       data_size - expected);
        goto fail;
      }
  }

  set = rpe_tensor_set_new ();
  for (guint i = 0; i < entries->len; i++)
    {
      Entry *e = &g_array_index (entries, Entry, i);
      RpeTensor *t = rpe_tensor_new (e->name, e->ndim, e->shape, error);

      if (t == NULL)
        {
          g_prefix_error (error, "'%s': ", file);
          g_clear_pointer (&set, rpe_tensor_set_free);
          goto fail;
        }
      t->dtype = e->dtype;
      convert (buffer + e->begin, e->dtype, e->count, t->data);
      if (!rpe_tensor_set_add (set, t, error))
        {
          g_prefix_error (error, "'%s': ", file);
          g_clear_pointer (&set, rpe_tensor_set_free);
          goto fail;
        }
    }

fail:
  g_list_free (members);
  g_array_unref (entries);
  return set;
}

/* ---- writer ----------------------------------------------------------- */

gboolean
rpe_safetensors_write (const char         *path,
                       const RpeTensorSet *set,
                       GError            **error)
{
  g_autoptr (JsonBuilder) builder = json_builder_new ();
  g_autoptr (JsonGenerator) gen = NULL;
  g_autoptr (JsonNode) root = NULL;
  g_autofree char *json = NULL;
  GString *header;
  gsize json_len, offset = 0;
  guint64 len_le;
  RpeAtomicFile *file;
  guint8 *buf;
  enum { CHUNK = 8192 };

  json_builder_begin_object (builder);
  for (gsize i = 0; i < rpe_tensor_set_size (set); i++)
    {
      const RpeTensor *t = rpe_tensor_set_get (set, i);
      gsize bytes;

      if (strcmp (t->name, "__metadata__") == 0)
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                              "Cannot write '%s': \"__metadata__\" is reserved, not a tensor name", path);
      if (rpe_size_bytes (&bytes, 4, t->n_elements, 1, 1, 1) != RPE_OK
          || !rpe_size_add (offset, bytes, &bytes) || bytes > (gsize) G_MAXINT64)
        return rpe_set_error (error, RPE_ERROR_OVERFLOW, "Cannot write '%s': the data is too large", path);
      json_builder_set_member_name (builder, t->name);
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "dtype");
      json_builder_add_string_value (builder, "F32");
      json_builder_set_member_name (builder, "shape");
      json_builder_begin_array (builder);
      for (gsize d = 0; d < t->ndim; d++)
        json_builder_add_int_value (builder, (gint64) t->shape[d]);
      json_builder_end_array (builder);
      json_builder_set_member_name (builder, "data_offsets");
      json_builder_begin_array (builder);
      json_builder_add_int_value (builder, (gint64) offset);
      json_builder_add_int_value (builder, (gint64) bytes);
      json_builder_end_array (builder);
      json_builder_end_object (builder);
      offset = bytes;
    }
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  gen = json_generator_new ();
  json_generator_set_root (gen, root);
  json = json_generator_to_data (gen, &json_len);

  /* pad the header with spaces so the data starts 8-byte aligned */
  header = g_string_new_len (json, (gssize) json_len);
  while ((8 + header->len) % 8 != 0)
    g_string_append_c (header, ' ');
  len_le = GUINT64_TO_LE ((guint64) header->len);

  /* the whole file, checked against the free space before anything is written */
  if (!rpe_output_space_check (path, 8 + (guint64) header->len + (guint64) offset, error))
    {
      g_string_free (header, TRUE);
      return FALSE;
    }
  file = rpe_atomic_file_new (path, error);
  if (file == NULL)
    {
      g_string_free (header, TRUE);
      return FALSE;
    }
  if (!rpe_atomic_file_write (file, &len_le, 8, error)
      || !rpe_atomic_file_write (file, header->str, header->len, error))
    {
      g_string_free (header, TRUE);
      rpe_atomic_file_abort (file);
      return FALSE;
    }
  g_string_free (header, TRUE);

  buf = g_malloc (CHUNK * 4);
  for (gsize i = 0; i < rpe_tensor_set_size (set); i++)
    {
      const RpeTensor *t = rpe_tensor_set_get (set, i);

      for (gsize k = 0; k < t->n_elements; k += CHUNK)
        {
          gsize n = MIN ((gsize) CHUNK, t->n_elements - k);

          for (gsize j = 0; j < n; j++)
            {
              guint32 bits;
              memcpy (&bits, &t->data[k + j], 4);
              bits = GUINT32_TO_LE (bits);
              memcpy (buf + 4 * j, &bits, 4);
            }
          if (!rpe_atomic_file_write (file, buf, n * 4, error))
            {
              g_free (buf);
              rpe_atomic_file_abort (file);
              return FALSE;
            }
        }
    }
  g_free (buf);
  return rpe_atomic_file_commit (file, error);
}

RpeTensorSet *
rpe_safetensors_read_bytes (const guint8 *data,
                            gsize         length,
                            const char   *name_for_errors,
                            GError      **error)
{
  return rpe_tensor_set_read_bytes_scoped (rpe_safetensors_read_bytes_impl, data, length, name_for_errors, error);
}

RpeTensorSet *
rpe_safetensors_read (const char  *path,
                      GError     **error)
{
  return rpe_tensor_set_read_file (rpe_safetensors_read_bytes_impl, path, error);
}

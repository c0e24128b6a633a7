/* rpe-capture.c: capture files (see rpe-capture.h). */
#include "config.h"

#include <math.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "rpe-alloc.h"
#include "rpe-capture.h"
#include "rpe-demos.h"
#include "rpe-error.h"
#include "rpe-npy.h"
#include "rpe-npz.h"

#define META_MAX_DEPTH 64
#define PRINT_HASH "sha256-float32le"

/* One tensor of a model's fingerprint. */
typedef struct
{
  char *name;
  gsize ndim;
  gsize shape[RPE_TENSOR_MAX_DIMS];
  char  sha256[65];
} PrintEntry;

static void
print_entry_free (gpointer data)
{
  PrintEntry *e = data;

  g_free (e->name);
  g_free (e);
}

typedef struct
{
  guint            index;
  const RpeTensor *a[3]; /* queries, keys, values (NULL: absent) */
} Layer;

struct _RpeCapture
{
  char            *name;
  RpeTensorSet    *set;
  GArray          *layers; /* Layer, by increasing index */
  const RpeTensor *tokens;
  char            *meta_json;
  char            *model_class;
  char            *date;
  GHashTable      *print; /* name -> PrintEntry: the model's fingerprint, or NULL */
  /* the last rpe_capture_check_model, by its model's serial (a capture is immutable: the check
   * of one capture against one model gives one answer, so it is made once) */
  GMutex  check_lock;
  guint64 checked_serial; /* 0: none yet */
  GError *checked_error;  /* NULL: that model passed */
};

static const char *const array_names[3] = { "queries", "keys", "values" };

void
rpe_capture_free (RpeCapture *capture)
{
  if (capture == NULL)
    return;
  g_free (capture->name);
  rpe_tensor_set_free (capture->set);
  if (capture->layers != NULL)
    g_array_unref (capture->layers);
  g_free (capture->meta_json);
  g_free (capture->model_class);
  g_free (capture->date);
  if (capture->print != NULL)
    g_hash_table_unref (capture->print);
  g_clear_error (&capture->checked_error);
  g_mutex_clear (&capture->check_lock);
  g_free (capture);
}

gboolean
rpe_capture_is_spec (const char *spec)
{
  gsize n;

  if (spec == NULL)
    return FALSE;
  if (g_str_has_prefix (spec, "demo:"))
    return TRUE;
  n = strlen (spec);
  return n > 4 && g_ascii_strcasecmp (spec + n - 4, ".npz") == 0;
}

/* ---- member names ------------------------------------------------------- */

typedef enum
{
  MEMBER_LAYER,
  MEMBER_TOKENS,
  MEMBER_META,
} MemberKind;

/* "layers.<l>.<what>" (l decimal, no leading zero, < RPE_CAPTURE_MAX_LAYERS), "tokens", "meta";
 * `base` is the member name without ".npy". */
static gboolean
parse_member (const char *base, MemberKind *kind, guint *layer, int *what)
{
  const char *p, *dot;
  guint64     l = 0;

  if (strcmp (base, "tokens") == 0)
    {
      *kind = MEMBER_TOKENS;
      return TRUE;
    }
  if (strcmp (base, "meta") == 0)
    {
      *kind = MEMBER_META;
      return TRUE;
    }
  if (!g_str_has_prefix (base, "layers."))
    return FALSE;
  p = base + strlen ("layers.");
  dot = strchr (p, '.');
  if (dot == NULL || dot == p || dot - p > 4 || (p[0] == '0' && dot - p > 1))
    return FALSE;
  for (const char *c = p; c < dot; c++)
    {
      if (!g_ascii_isdigit (*c))
        return FALSE;
      l = l * 10 + (guint64) (*c - '0');
    }
  if (l >= RPE_CAPTURE_MAX_LAYERS)
    return FALSE;
  for (int i = 0; i < 3; i++)
    if (strcmp (dot + 1, array_names[i]) == 0)
      {
        *kind = MEMBER_LAYER;
        *layer = (guint) l;
        *what = i;
        return TRUE;
      }
  return FALSE;
}

/* The members as tensors named without ".npy" (each member's dtype checked by its kind: floats
 * for the layers, integers for the tokens, bytes for the metadata). */
static RpeTensorSet *
read_members (const guint8 *data, gsize length, const char *name, GError **error)
{
  g_autoptr (RpeZip) zip = NULL;
  g_autoptr (RpeTensorSet) set = NULL;
  guint64 total = 0;
  gsize   n;

  zip = rpe_zip_open (data, length, name, error);
  if (zip == NULL)
    return NULL;
  n = rpe_zip_n_entries (zip);
  if (n == 0)
    {
      rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': an empty archive is not a capture", name);
      return NULL;
    }
  /* names first, and the arrays' total size (their bytes in the file bound their float32 size
   * within a factor 4, for the bytes of the metadata) against the budget before any is read */
  for (gsize i = 0; i < n; i++)
    {
      const char      *m = rpe_zip_entry_name (zip, i);
      g_autofree char *base = NULL;
      MemberKind       kind;
      guint            layer;
      int              what;
      guint64          size = rpe_zip_entry_size (zip, i);

      if (!g_str_has_suffix (m, ".npy") || !parse_member ((base = g_strndup (m, strlen (m) - 4)), &kind, &layer, &what))
        {
          g_autofree char *shown = g_strescape (m, NULL);

          rpe_set_error (error, RPE_ERROR_FORMAT,
                         "'%s': member '%s' is not part of a capture (layers.<l>.queries, "
                         "layers.<l>.keys, layers.<l>.values with l = 0 .. %u written without "
                         "leading zeros, tokens, meta)",
                         name, shown, RPE_CAPTURE_MAX_LAYERS - 1);
          return NULL;
        }
      if (kind == MEMBER_META && size > RPE_CAPTURE_MAX_META + 4096)
        {
          rpe_set_error (error, RPE_ERROR_UNSUPPORTED,
                         "'%s': the metadata is %" G_GUINT64_FORMAT " bytes, more than the %u a capture "
                         "may hold",
                         name, size, RPE_CAPTURE_MAX_META);
          return NULL;
        }
      if (kind == MEMBER_META)
        size *= 4;
      total = total + size < total ? G_MAXUINT64 : total + size;
    }
  if (total > G_MAXSIZE / 2 || rpe_budget_check ((gsize) total) != RPE_OK)
    {
      rpe_set_error (error, RPE_ERROR_NO_MEMORY,
                     "'%s': the arrays hold %" G_GUINT64_FORMAT " bytes, more than the memory budget (%" G_GSIZE_FORMAT
                     " bytes)",
                     name, total, rpe_budget_get ());
      return NULL;
    }

  set = rpe_tensor_set_new ();
  for (gsize i = 0; i < n; i++)
    {
      const char      *m = rpe_zip_entry_name (zip, i);
      g_autofree char *base = g_strndup (m, strlen (m) - 4);
      g_autofree char *what_name = g_strdup_printf ("%s:%s", name, m);
      g_autoptr (GBytes) b = NULL;
      MemberKind    kind = MEMBER_LAYER;
      guint         layer;
      int           what;
      const guint8 *p;
      gsize         len;
      RpeTensor    *t;

      parse_member (base, &kind, &layer, &what);
      b = rpe_zip_extract (zip, i, error);
      if (b == NULL)
        return NULL;
      p = g_bytes_get_data (b, &len);
      t = rpe_npy_read_bytes_allowing (p, len, what_name,
                                       kind == MEMBER_TOKENS ? RPE_NPY_ALLOW_INT
                                       : kind == MEMBER_META ? RPE_NPY_ALLOW_U8
                                                             : 0,
                                       error);
      if (t == NULL)
        return NULL;
      if ((kind == MEMBER_TOKENS && t->dtype != RPE_DTYPE_I64 && t->dtype != RPE_DTYPE_I32)
          || (kind == MEMBER_META && t->dtype != RPE_DTYPE_U8))
        {
          rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': %s must be %s, not %s", name, base,
                         kind == MEMBER_TOKENS ? "integers (int64 or int32)" : "bytes (uint8)",
                         rpe_dtype_to_string (t->dtype));
          rpe_tensor_free (t);
          return NULL;
        }
      g_free (t->name);
      t->name = g_steal_pointer (&base);
      if (!rpe_tensor_set_add (set, t, error))
        {
          g_prefix_error (error, "'%s': ", name);
          return NULL;
        }
    }
  return g_steal_pointer (&set);
}

/* ---- metadata ----------------------------------------------------------- */

/* What json-glib builds for one value of the metadata (a node, its object or array and their
 * table entries), with a margin, and for each byte of text (the string copies): the tree of the
 * text is charged to the memory budget before it is parsed. */
#define META_NODE_BYTES 160u
#define META_BYTE_COST 3u

/* Strict JSON has no comments; nesting deeper than META_MAX_DEPTH is refused before json-glib
 * (which recurses) sees the text; "\u0000" would cut a name short (two names of the model's
 * fingerprint could then read as one); and the tree the text would build must fit in the
 * memory budget. */
static gboolean
meta_shape_ok (const char *text, gsize len, const char *name, GError **error)
{
  gboolean in_string = FALSE;
  int      depth = 0;
  gsize     values = 1, need;
  RpeStatus st;

  for (gsize i = 0; i < len; i++)
    {
      char c = text[i];

      if (in_string)
        {
          if (c == '\\')
            {
              if (i + 5 < len && text[i + 1] == 'u' && strncmp (text + i + 2, "0000", 4) == 0)
                return rpe_set_error (error, RPE_ERROR_FORMAT,
                                      "'%s': the metadata holds a NUL character (\\u0000); its names and "
                                      "values may not",
                                      name);
              i++;
            }
          else if (c == '"')
            in_string = FALSE;
          continue;
        }
      if (c == '"')
        in_string = TRUE;
      else if (c == '{' || c == '[')
        {
          values++;
          if (++depth > META_MAX_DEPTH)
            return rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the metadata nests deeper than %d levels", name,
                                  META_MAX_DEPTH);
        }
      else if (c == '}' || c == ']')
        depth--;
      else if (c == ',' || c == ':')
        values++;
      else if (c == '/')
        return rpe_set_error (error, RPE_ERROR_FORMAT,
                              "'%s': the metadata is not plain JSON (it has a comment or a stray '/')", name);
    }
  /* len <= RPE_CAPTURE_MAX_META: no overflow */
  need = values * META_NODE_BYTES + len * META_BYTE_COST;
  if ((st = rpe_budget_check (need)) != RPE_OK)
    {
      g_autofree char *limit = rpe_memory_limit_text (st);

      return rpe_set_error (error, st, "'%s': reading the metadata (%zu values) needs about %zu bytes, more than %s",
                            name, (size_t) values, (size_t) need, limit);
    }
  return TRUE;
}

static gboolean
is_hex64 (const char *s)
{
  gsize i;

  for (i = 0; s[i] != '\0'; i++)
    if (!g_ascii_isxdigit (s[i]) || g_ascii_isupper (s[i]))
      return FALSE;
  return i == 64;
}

/* "model_fingerprint": {"hash": "sha256-float32le", "tensors": {NAME: {"shape", "sha256", "dtype"}}} */
static gboolean
read_print (RpeCapture *c, JsonNode *node, GError **error)
{
  g_autoptr (GHashTable) print = NULL;
  g_autoptr (GList) members = NULL;
  JsonObject *obj, *tensors;
  JsonNode   *hash, *tn;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    return rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the metadata's model_fingerprint is not a JSON object",
                          c->name);
  obj = json_node_get_object (node);
  hash = json_object_get_member (obj, "hash");
  if (hash == NULL || !JSON_NODE_HOLDS_VALUE (hash) || json_node_get_value_type (hash) != G_TYPE_STRING
      || strcmp (json_node_get_string (hash), PRINT_HASH) != 0)
    return rpe_set_error (error, RPE_ERROR_UNSUPPORTED,
                          "'%s': the model's fingerprint is not of the kind this program checks (hash \"%s\")", c->name,
                          PRINT_HASH);
  tn = json_object_get_member (obj, "tensors");
  if (tn == NULL || !JSON_NODE_HOLDS_OBJECT (tn) || json_object_get_size (json_node_get_object (tn)) == 0)
    return rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the model's fingerprint lists no tensors", c->name);
  tensors = json_node_get_object (tn);
  print = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, print_entry_free);
  members = json_object_get_members (tensors);
  for (GList *l = members; l != NULL; l = l->next)
    {
      const char      *name = l->data;
      JsonNode        *en = json_object_get_member (tensors, name);
      JsonNode        *shape, *sha;
      JsonArray       *dims;
      PrintEntry      *e;
      g_autofree char *shown = g_strescape (name, NULL);

      if (en == NULL || !JSON_NODE_HOLDS_OBJECT (en) || name[0] == '\0')
        return rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the model's fingerprint of '%s' is not an object",
                              c->name, shown);
      shape = json_object_get_member (json_node_get_object (en), "shape");
      sha = json_object_get_member (json_node_get_object (en), "sha256");
      if (shape == NULL || !JSON_NODE_HOLDS_ARRAY (shape)
          || json_array_get_length (dims = json_node_get_array (shape)) > RPE_TENSOR_MAX_DIMS || sha == NULL
          || !JSON_NODE_HOLDS_VALUE (sha) || json_node_get_value_type (sha) != G_TYPE_STRING
          || !is_hex64 (json_node_get_string (sha)))
        return rpe_set_error (error, RPE_ERROR_FORMAT,
                              "'%s': the model's fingerprint of '%s' needs a shape (at most %d dimensions) and a "
                              "sha256 (64 lower-case hex digits)",
                              c->name, shown, RPE_TENSOR_MAX_DIMS);
      e = g_new0 (PrintEntry, 1);
      e->name = g_strdup (name);
      e->ndim = json_array_get_length (dims);
      memcpy (e->sha256, json_node_get_string (sha), 65);
      g_hash_table_insert (print, e->name, e);
      for (gsize i = 0; i < e->ndim; i++)
        {
          JsonNode *d = json_array_get_element (dims, (guint) i);

          if (!JSON_NODE_HOLDS_VALUE (d) || json_node_get_value_type (d) != G_TYPE_INT64 || json_node_get_int (d) < 0)
            return rpe_set_error (error, RPE_ERROR_FORMAT,
                                  "'%s': the model's fingerprint of '%s' has a shape that is not a list of sizes",
                                  c->name, shown);
          e->shape[i] = (gsize) json_node_get_int (d);
        }
    }
  c->print = g_steal_pointer (&print);
  return TRUE;
}

static gboolean
read_meta (RpeCapture *c, const RpeTensor *t, GError **error)
{
  g_autoptr (JsonParser) parser = NULL;
  g_autoptr (GError) local = NULL;
  JsonNode   *root, *node;
  JsonObject *obj;
  char       *text;
  gsize       len = t->n_elements;

  if (t->ndim != 1 || len == 0 || len > RPE_CAPTURE_MAX_META)
    return rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': meta must be (bytes,) of 1 .. %u bytes of UTF-8 JSON",
                          c->name, RPE_CAPTURE_MAX_META);
  text = g_malloc (len + 1);
  for (gsize i = 0; i < len; i++)
    text[i] = (char) (guint8) t->data[i];
  text[len] = '\0';
  c->meta_json = text;
  if (!g_utf8_validate (text, (gssize) len, NULL))
    return rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the metadata is not UTF-8 text", c->name);
  if (!meta_shape_ok (text, len, c->name, error))
    return FALSE;
  parser = json_parser_new ();
  if (!json_parser_load_from_data (parser, text, (gssize) len, &local))
    return rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the metadata is not JSON (%s)", c->name, local->message);
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the metadata is not a JSON object", c->name);
  obj = json_node_get_object (root);
  node = json_object_get_member (obj, "format");
  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING
      || strcmp (json_node_get_string (node), RPE_CAPTURE_FORMAT) != 0)
    return rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the metadata does not say format \"%s\": not a capture",
                          c->name, RPE_CAPTURE_FORMAT);
  node = json_object_get_member (obj, "version");
  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64)
    return rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the metadata has no integer version", c->name);
  if (json_node_get_int (node) != RPE_CAPTURE_VERSION)
    return rpe_set_error (error, RPE_ERROR_UNSUPPORTED,
                          "'%s': capture version %" G_GINT64_FORMAT "; this program reads version %d", c->name,
                          json_node_get_int (node), RPE_CAPTURE_VERSION);
  node = json_object_get_member (obj, "model_class");
  if (node != NULL && JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING)
    c->model_class = g_strdup (json_node_get_string (node));
  node = json_object_get_member (obj, "date");
  if (node != NULL && JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING)
    c->date = g_strdup (json_node_get_string (node));
  node = json_object_get_member (obj, "model_fingerprint");
  if (node != NULL && !JSON_NODE_HOLDS_NULL (node) && !read_print (c, node, error))
    return FALSE;
  return TRUE;
}

/* ---- validation --------------------------------------------------------- */

static int
compare_layers (gconstpointer a, gconstpointer b)
{
  guint x = ((const Layer *) a)->index, y = ((const Layer *) b)->index;

  return x < y ? -1 : x > y;
}

static Layer *
find_layer (const RpeCapture *c, guint index)
{
  for (guint i = 0; i < c->layers->len; i++)
    if (g_array_index (c->layers, Layer, i).index == index)
      return &g_array_index (c->layers, Layer, i);
  return NULL;
}

static gboolean
check_layer (const RpeCapture *c, const Layer *l, GError **error)
{
  const RpeTensor *q = l->a[0], *k = l->a[1], *v = l->a[2];

  if (q == NULL || k == NULL)
    return rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': layer %u has %s but no %s", c->name, l->index,
                          q != NULL   ? "queries"
                          : k != NULL ? "keys"
                                      : "values",
                          q == NULL && k == NULL ? "queries or keys"
                          : q == NULL            ? "queries"
                                                 : "keys");
  for (int i = 0; i < 3; i++)
    {
      const RpeTensor *t = l->a[i];
      g_autofree char *shape = NULL;

      if (t == NULL)
        continue;
      shape = rpe_tensor_shape_string (t);
      if (t->ndim != 3 || t->shape[0] == 0 || t->shape[1] == 0 || t->shape[2] == 0)
        return rpe_set_error (error, RPE_ERROR_FORMAT,
                              "'%s': layers.%u.%s has shape %s; a capture holds (N, H, %s) with no empty "
                              "dimension",
                              c->name, l->index, array_names[i], shape, i == 2 ? "Dv" : "D");
      if (t->dtype != RPE_DTYPE_F32 && t->dtype != RPE_DTYPE_F64 && t->dtype != RPE_DTYPE_F16
          && t->dtype != RPE_DTYPE_BF16)
        return rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': layers.%u.%s must be floats", c->name, l->index,
                              array_names[i]);
      if (!rpe_all_finite_f (t->data, t->n_elements))
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                              "'%s': layers.%u.%s holds values that are not finite (NaN or infinite)", c->name,
                              l->index, array_names[i]);
    }
  if (memcmp (q->shape, k->shape, 3 * sizeof (gsize)) != 0)
    {
      g_autofree char *qs = rpe_tensor_shape_string (q), *ks = rpe_tensor_shape_string (k);

      return rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': layer %u's queries %s and keys %s differ in shape", c->name,
                            l->index, qs, ks);
    }
  if (v != NULL && (v->shape[0] != q->shape[0] || v->shape[1] != q->shape[1]))
    {
      g_autofree char *qs = rpe_tensor_shape_string (q), *vs = rpe_tensor_shape_string (v);

      return rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': layer %u's values %s do not match its queries %s in (N, H)",
                            c->name, l->index, vs, qs);
    }
  return TRUE;
}

/* Takes `set` (freed on failure). */
static RpeCapture *
capture_from_set (RpeTensorSet *set, const char *name, GError **error)
{
  g_autoptr (RpeCapture) c = g_new0 (RpeCapture, 1);
  const RpeTensor *meta = NULL;

  g_mutex_init (&c->check_lock);
  c->name = g_strdup (name);
  c->set = set;
  c->layers = g_array_new (FALSE, TRUE, sizeof (Layer));
  for (gsize i = 0; i < rpe_tensor_set_size (set); i++)
    {
      const RpeTensor *t = rpe_tensor_set_get (set, i);
      MemberKind       kind;
      guint            index = 0;
      int              what = 0;
      Layer           *l;

      if (!parse_member (t->name, &kind, &index, &what))
        {
          rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': '%s' is not part of a capture", name, t->name);
          return NULL;
        }
      if (kind == MEMBER_TOKENS)
        c->tokens = t;
      else if (kind == MEMBER_META)
        meta = t;
      else
        {
          if ((l = find_layer (c, index)) == NULL)
            {
              Layer fresh = { index, { NULL, NULL, NULL } };

              g_array_append_val (c->layers, fresh);
              l = &g_array_index (c->layers, Layer, c->layers->len - 1);
            }
          l->a[what] = t;
        }
    }
  if (meta != NULL && !read_meta (c, meta, error))
    return NULL;
  if (c->layers->len == 0)
    {
      rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': the capture holds no layer (layers.<l>.queries, .keys)", name);
      return NULL;
    }
  g_array_sort (c->layers, compare_layers);
  for (guint i = 0; i < c->layers->len; i++)
    if (!check_layer (c, &g_array_index (c->layers, Layer, i), error))
      return NULL;
  if (c->tokens != NULL)
    {
      const RpeTensor *t = c->tokens;
      g_autofree char *shape = rpe_tensor_shape_string (t);

      if (t->ndim != 1 || t->shape[0] == 0)
        {
          rpe_set_error (error, RPE_ERROR_FORMAT, "'%s': tokens has shape %s; a capture holds (N,)", name, shape);
          return NULL;
        }
      for (gsize i = 0; i < t->n_elements; i++)
        if (!(fabsf (t->data[i]) < RPE_CAPTURE_MAX_TOKEN))
          {
            rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                           "'%s': token %zu is %.0f; token ids must be below 2^24 in magnitude", name, (size_t) i,
                           (double) t->data[i]);
            return NULL;
          }
      for (guint i = 0; i < c->layers->len; i++)
        {
          const Layer *l = &g_array_index (c->layers, Layer, i);

          if (l->a[0]->shape[0] != t->shape[0])
            {
              rpe_set_error (error, RPE_ERROR_FORMAT,
                             "'%s': tokens %s do not match layer %u, whose queries are %zu positions long", name, shape,
                             l->index, (size_t) l->a[0]->shape[0]);
              return NULL;
            }
        }
    }
  return g_steal_pointer (&c);
}

static RpeTensorSet *
read_members_scoped (const guint8 *data, gsize length, const char *name, GError **error)
{
  return read_members (data, length, name != NULL ? name : "(capture)", error);
}

RpeCapture *
rpe_capture_read_bytes (const guint8 *data, gsize length, const char *name_for_errors, GError **error)
{
  const char   *name = name_for_errors != NULL ? name_for_errors : "(capture)";
  RpeTensorSet *set = rpe_tensor_set_read_bytes_scoped (read_members_scoped, data, length, name, error);

  if (set == NULL)
    return NULL;
  return capture_from_set (set, name, error);
}

RpeCapture *
rpe_capture_read (const char *path, GError **error)
{
  RpeTensorSet *set;

  g_return_val_if_fail (path != NULL, NULL);
  set = rpe_tensor_set_read_file (read_members_scoped, path, error);
  if (set == NULL)
    return NULL;
  return capture_from_set (set, path, error);
}

RpeCapture *
rpe_capture_open (const char *path_or_demo, GError **error)
{
  g_return_val_if_fail (path_or_demo != NULL, NULL);
  if (g_str_has_prefix (path_or_demo, "demo:") && !g_file_test (path_or_demo, G_FILE_TEST_EXISTS))
    {
      g_autoptr (GBytes) bytes = rpe_demos_lookup_capture (path_or_demo, error);
      const guint8 *data;
      gsize         length;

      if (bytes == NULL)
        return NULL;
      data = g_bytes_get_data (bytes, &length);
      return rpe_capture_read_bytes (data, length, path_or_demo, error);
    }
  return rpe_capture_read (path_or_demo, error);
}

/* ---- accessors ---------------------------------------------------------- */

const char *
rpe_capture_name (const RpeCapture *capture)
{
  return capture->name;
}

gsize
rpe_capture_n_layers (const RpeCapture *capture)
{
  return capture->layers->len;
}

guint
rpe_capture_layer (const RpeCapture *capture, gsize i)
{
  g_return_val_if_fail (i < capture->layers->len, 0);
  return g_array_index (capture->layers, Layer, i).index;
}

gboolean
rpe_capture_has_layer (const RpeCapture *capture, guint layer)
{
  return find_layer (capture, layer) != NULL;
}

char *
rpe_capture_layer_list (const RpeCapture *capture)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < capture->layers->len; i++)
    g_string_append_printf (s, "%s%u", i > 0 ? ", " : "", g_array_index (capture->layers, Layer, i).index);
  return g_string_free (s, FALSE);
}

const RpeTensor *
rpe_capture_get (const RpeCapture *capture, guint layer, RpeCaptureArray what)
{
  const Layer *l = find_layer (capture, layer);

  g_return_val_if_fail ((int) what >= 0 && what <= RPE_CAPTURE_VALUES, NULL);
  return l != NULL ? l->a[what] : NULL;
}

const RpeTensor *
rpe_capture_tokens (const RpeCapture *capture)
{
  return capture->tokens;
}

const char *
rpe_capture_meta_json (const RpeCapture *capture)
{
  return capture->meta_json;
}

const char *
rpe_capture_model_class (const RpeCapture *capture)
{
  return capture->model_class;
}

const char *
rpe_capture_date (const RpeCapture *capture)
{
  return capture->date;
}

/* ---- content ------------------------------------------------------------ */

void
rpe_capture_content_clear (RpeCaptureContent *content)
{
  rpe_free (content->q);
  rpe_free (content->k);
  rpe_free (content->v);
  rpe_free (content->tokens);
  memset (content, 0, sizeof *content);
}

static float *
copy_floats (const RpeTensor *t, RpeStatus *st)
{
  float *out = rpe_alloc (t->n_elements, sizeof (float), st);

  if (out != NULL)
    memcpy (out, t->data, t->n_elements * sizeof (float));
  return out;
}

gboolean
rpe_capture_load_content (const RpeCapture  *capture,
                          guint              layer,
                          gsize              n_heads,
                          gsize              dim,
                          gsize              max_length,
                          gboolean           want_values,
                          RpeCaptureContent *out,
                          GError           **error)
{
  const Layer      *l;
  const RpeTensor  *q;
  RpeCaptureContent c = { 0 };
  RpeStatus         st = RPE_OK;

  g_return_val_if_fail (capture != NULL && out != NULL, FALSE);
  memset (out, 0, sizeof *out);
  l = find_layer (capture, layer);
  if (l == NULL)
    {
      g_autofree char *list = rpe_capture_layer_list (capture);

      return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, "%s: the capture has no layer %u (its layers: %s)",
                            capture->name, layer, list);
    }
  q = l->a[0];
  if (q->shape[1] != n_heads || q->shape[2] != dim)
    {
      g_autofree char *shape = rpe_tensor_shape_string (q);

      return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                            "%s: layer %u's queries have shape %s (N, H, D), but the module has H = %zu heads "
                            "of D = %zu features: the capture does not fit this module (a capture from "
                            "another model?)",
                            capture->name, layer, shape, (size_t) n_heads, (size_t) dim);
    }
  if (max_length != 0 && q->shape[0] > max_length)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          "%s: layer %u holds N = %zu positions, more than the %zu allowed here", capture->name, layer,
                          (size_t) q->shape[0], (size_t) max_length);
  if (want_values && l->a[2] == NULL)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          "%s: layer %u has no values (record them with values= when capturing)", capture->name, layer);
  c.layer = layer;
  c.n = q->shape[0];
  c.n_heads = n_heads;
  c.dim = dim;
  c.q = copy_floats (q, &st);
  if (st == RPE_OK)
    c.k = copy_floats (l->a[1], &st);
  if (st == RPE_OK && want_values)
    {
      c.v = copy_floats (l->a[2], &st);
      c.dv = l->a[2]->shape[2];
    }
  if (st == RPE_OK && capture->tokens != NULL)
    c.tokens = copy_floats (capture->tokens, &st);
  if (st != RPE_OK)
    {
      rpe_capture_content_clear (&c);
      return rpe_set_error (error, st, "%s: layer %u does not fit in the memory budget (%" G_GSIZE_FORMAT " bytes)",
                            capture->name, layer, rpe_budget_get ());
    }
  *out = c;
  return TRUE;
}

/* ---- the model a capture was made on ------------------------------------ */

struct _RpeModelPrint
{
  char       *name;
  GHashTable *entries; /* name -> PrintEntry */
  guint64     serial;  /* unique in the process: what a capture's cached check refers to */
};

/* The prefix a checkpoint may add to the capture's names ("model.", "module.", "model.module."):
 * at most this many components, so that finding it costs a few lookups per name whatever the
 * names (4,096 bytes of "a.a.a..." would otherwise hash 2,048 suffixes of each name). */
#define PRINT_MAX_PREFIX_PARTS 8

static void
model_print_clear (gpointer data)
{
  RpeModelPrint *p = data;

  g_free (p->name);
  if (p->entries != NULL)
    g_hash_table_unref (p->entries);
}

static gint prints_made = 0;

guint
rpe_model_print_n_made (void)
{
  return (guint) g_atomic_int_get (&prints_made);
}

RpeModelPrint *
rpe_model_print_new (const RpeTensorSet *set, const char *name)
{
  RpeModelPrint *p;
  GChecksum     *sum;

  g_return_val_if_fail (set != NULL, NULL);
  p = g_atomic_rc_box_new0 (RpeModelPrint);
  p->serial = (guint64) (guint) g_atomic_int_add (&prints_made, 1) + 1;
  p->name = g_strdup (name != NULL ? name : "(checkpoint)");
  p->entries = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, print_entry_free);
  sum = g_checksum_new (G_CHECKSUM_SHA256);
  for (gsize i = 0; i < rpe_tensor_set_size (set); i++)
    {
      const RpeTensor *t = rpe_tensor_set_get (set, i);
      PrintEntry      *e = g_new0 (PrintEntry, 1);
      guint32          block[1024];

      g_checksum_reset (sum);
      /* the values as float32, little-endian, in blocks */
      for (gsize j = 0; j < t->n_elements; j += G_N_ELEMENTS (block))
        {
          gsize m = MIN (G_N_ELEMENTS (block), t->n_elements - j);

          for (gsize k = 0; k < m; k++)
            {
              guint32 bits;

              memcpy (&bits, &t->data[j + k], sizeof bits);
              block[k] = GUINT32_TO_LE (bits);
            }
          g_checksum_update (sum, (const guchar *) block, m * sizeof (guint32));
        }
      e->name = g_strdup (t->name);
      e->ndim = t->ndim;
      memcpy (e->shape, t->shape, sizeof e->shape);
      g_strlcpy (e->sha256, g_checksum_get_string (sum), sizeof e->sha256);
      g_hash_table_replace (p->entries, e->name, e);
    }
  g_checksum_free (sum);
  return p;
}

RpeModelPrint *
rpe_model_print_ref (RpeModelPrint *print)
{
  g_return_val_if_fail (print != NULL, NULL);
  return g_atomic_rc_box_acquire (print);
}

void
rpe_model_print_unref (RpeModelPrint *print)
{
  if (print != NULL)
    g_atomic_rc_box_release_full (print, model_print_clear);
}

const char *
rpe_model_print_name (const RpeModelPrint *print)
{
  return print->name;
}

gsize
rpe_capture_n_model_tensors (const RpeCapture *capture)
{
  return capture->print != NULL ? g_hash_table_size (capture->print) : 0;
}

static char *
shape_text (const PrintEntry *e)
{
  GString *s = g_string_new ("(");

  for (gsize i = 0; i < e->ndim; i++)
    g_string_append_printf (s, "%s%zu", i > 0 ? ", " : "", (size_t) e->shape[i]);
  if (e->ndim == 1)
    g_string_append_c (s, ',');
  g_string_append_c (s, ')');
  return g_string_free (s, FALSE);
}

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static gboolean
check_model (const RpeCapture *capture, const RpeModelPrint *model, GError **error)
{
  g_autoptr (GHashTable) votes = NULL;
  g_autoptr (GPtrArray) names = NULL;
  g_autoptr (GString) bad = NULL;
  GHashTableIter it;
  gpointer       key, value;
  const char    *prefix = NULL;
  guint          best = 0, n_bad = 0, n_shown = 0;

  /* the prefix: every '.'-boundary suffix (after at most PRINT_MAX_PREFIX_PARTS components) of
   * every name of the checkpoint that the capture's model has votes for the part before it */
  votes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_hash_table_iter_init (&it, model->entries);
  while (g_hash_table_iter_next (&it, &key, NULL))
    {
      const char *name = key;
      int         parts = 0;

      for (const char *s = name; s != NULL && parts <= PRINT_MAX_PREFIX_PARTS;
           s = strchr (s, '.') != NULL ? strchr (s, '.') + 1 : NULL, parts++)
        if (*s != '\0' && g_hash_table_contains (capture->print, s))
          {
            char *p = g_strndup (name, (gsize) (s - name));
            guint n = GPOINTER_TO_UINT (g_hash_table_lookup (votes, p)) + 1;

            g_hash_table_replace (votes, p, GUINT_TO_POINTER (n));
          }
    }
  g_hash_table_iter_init (&it, votes);
  while (g_hash_table_iter_next (&it, &key, &value))
    {
      guint n = GPOINTER_TO_UINT (value);

      if (n > best
          || (n == best
              && (strlen (key) < strlen (prefix) || (strlen (key) == strlen (prefix) && strcmp (key, prefix) < 0))))
        {
          best = n;
          prefix = key;
        }
    }
  /* the capture's tensors in name order, for messages that do not change from run to run */
  names = g_ptr_array_new ();
  g_hash_table_iter_init (&it, capture->print);
  while (g_hash_table_iter_next (&it, &key, NULL))
    g_ptr_array_add (names, key);
  g_ptr_array_sort (names, compare_strings);
  if (prefix == NULL)
    {
      g_autofree char *first = g_strescape (g_ptr_array_index (names, 0), NULL);

      return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                            "%s was made on another model than %s: none of the %u tensors of its model ('%s', ...) "
                            "is in the checkpoint",
                            capture->name, model->name, names->len, first);
    }
  bad = g_string_new (NULL);
  for (guint i = 0; i < names->len; i++)
    {
      const PrintEntry *e = g_hash_table_lookup (capture->print, g_ptr_array_index (names, i));
      g_autofree char  *full = g_strconcat (prefix, e->name, NULL);
      const PrintEntry *m = g_hash_table_lookup (model->entries, full);
      g_autofree char  *shown = g_strescape (full, NULL);
      g_autofree char  *what = NULL;

      if (m == NULL)
        what = g_strdup_printf ("'%s' is missing", shown);
      else if (m->ndim != e->ndim || memcmp (m->shape, e->shape, e->ndim * sizeof (gsize)) != 0)
        {
          g_autofree char *cs = shape_text (e), *ms = shape_text (m);

          what = g_strdup_printf ("'%s' has shape %s there, %s in the capture's model", shown, ms, cs);
        }
      else if (strcmp (m->sha256, e->sha256) != 0)
        what = g_strdup_printf ("'%s' holds other values", shown);
      if (what == NULL)
        continue;
      n_bad++;
      if (n_shown < 3)
        {
          g_string_append_printf (bad, "%s%s", n_shown > 0 ? "; " : "", what);
          n_shown++;
        }
    }
  if (n_bad == 0)
    return TRUE;
  if (n_bad > n_shown)
    g_string_append_printf (bad, "; %u more", n_bad - n_shown);
  return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                        "%s was made on another model than %s: %u of the %u tensors of its model differ (%s)",
                        capture->name, model->name, n_bad, names->len, bad->str);
}

gboolean
rpe_capture_check_model (const RpeCapture *capture, const RpeModelPrint *model, char **note, GError **error)
{
  RpeCapture *c = (RpeCapture *) capture; /* only its cache of this check changes */
  gboolean    ok;

  g_return_val_if_fail (capture != NULL && model != NULL, FALSE);
  if (note != NULL)
    *note = NULL;
  if (capture->print == NULL)
    {
      if (note != NULL)
        *note = g_strdup_printf ("%s records no fingerprint of the model it was made on (made with record() only, or "
                                 "by an older rpe_capture.py): that it comes from %s cannot be checked",
                                 capture->name, model->name);
      return TRUE;
    }
  g_mutex_lock (&c->check_lock);
  if (c->checked_serial != model->serial)
    {
      g_clear_error (&c->checked_error);
      check_model (capture, model, &c->checked_error);
      c->checked_serial = model->serial;
    }
  ok = c->checked_error == NULL;
  if (!ok && error != NULL)
    g_propagate_error (error, g_error_copy (c->checked_error));
  g_mutex_unlock (&c->check_lock);
  return ok;
}

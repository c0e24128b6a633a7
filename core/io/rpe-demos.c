/* rpe-demos.c: the embedded demo checkpoints (see rpe-demos.h). */
#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>

#include "rpe-checkpoint.h"
#include "rpe-demos.h"
#include "rpe-error.h"

#define DEMO_SUFFIX ".safetensors"
#define CAPTURE_SUFFIX ".npz"

gboolean
rpe_demos_is_spec (const char *spec)
{
  return spec != NULL && (g_str_equal (spec, "demo") || g_str_has_prefix (spec, "demo:"));
}

static int
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(char * const *) a, *(char * const *) b);
}

char **
rpe_demos_list (void)
{
  g_auto (GStrv) children = g_resources_enumerate_children (RPE_DEMOS_RESOURCE_DIR,
                                                             G_RESOURCE_LOOKUP_FLAGS_NONE, NULL);
  GPtrArray *names = g_ptr_array_new ();

  for (guint i = 0; children != NULL && children[i] != NULL; i++)
    if (g_str_has_suffix (children[i], DEMO_SUFFIX))
      g_ptr_array_add (names, g_strndup (children[i], strlen (children[i]) - strlen (DEMO_SUFFIX)));
  g_ptr_array_sort (names, compare_names);
  g_ptr_array_add (names, NULL);
  return (char **) g_ptr_array_free (names, FALSE);
}

GBytes *
rpe_demos_lookup (const char  *spec,
                  GError     **error)
{
  g_autofree char *path = NULL;
  const char *name;
  GBytes *bytes;

  g_return_val_if_fail (spec != NULL, NULL);
  if (g_str_equal (spec, "demo"))
    return g_resources_lookup_data (RPE_DEMO_DEFAULT_RESOURCE, G_RESOURCE_LOOKUP_FLAGS_NONE, error);
  if (!g_str_has_prefix (spec, "demo:"))
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, "'%s' is not a demo (demo or demo:NAME)", spec);
      return NULL;
    }
  name = spec + strlen ("demo:");
  /* names are plain: no path separators, nothing hidden */
  if (*name != '\0' && strchr (name, '/') == NULL && name[0] != '.')
    {
      path = g_strconcat (RPE_DEMOS_RESOURCE_DIR, name, DEMO_SUFFIX, NULL);
      bytes = g_resources_lookup_data (path, G_RESOURCE_LOOKUP_FLAGS_NONE, NULL);
      if (bytes != NULL)
        return bytes;
    }
  {
    g_auto (GStrv) names = rpe_demos_list ();
    g_autofree char *list = g_strjoinv (", ", names);
    g_autofree char *shown = g_strescape (name, NULL);

    rpe_set_error (error, RPE_ERROR_NOT_FOUND, "no demo named '%s' (the trained demos: %s)", shown,
                   *list != '\0' ? list : "none embedded");
  }
  return NULL;
}

GBytes *
rpe_demos_lookup_capture (const char *spec, GError **error)
{
  const char *name;

  g_return_val_if_fail (spec != NULL, NULL);
  if (!g_str_has_prefix (spec, "demo:"))
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, "'%s' is not a demo capture (demo:NAME)", spec);
      return NULL;
    }
  name = spec + strlen ("demo:");
  if (*name != '\0' && strchr (name, '/') == NULL && name[0] != '.')
    {
      g_autofree char *path = g_strconcat (RPE_DEMOS_RESOURCE_DIR, name, CAPTURE_SUFFIX, NULL);
      GBytes          *bytes = g_resources_lookup_data (path, G_RESOURCE_LOOKUP_FLAGS_NONE, NULL);

      if (bytes != NULL)
        return bytes;
    }
  {
    g_auto (GStrv) children =
      g_resources_enumerate_children (RPE_DEMOS_RESOURCE_DIR, G_RESOURCE_LOOKUP_FLAGS_NONE, NULL);
    g_autoptr (GString) list = g_string_new (NULL);
    g_autofree char *shown = g_strescape (name, NULL);

    for (guint i = 0; children != NULL && children[i] != NULL; i++)
      if (g_str_has_suffix (children[i], CAPTURE_SUFFIX))
        g_string_append_printf (list, "%s%.*s", list->len > 0 ? ", " : "",
                                (int) (strlen (children[i]) - strlen (CAPTURE_SUFFIX)), children[i]);
    rpe_set_error (error, RPE_ERROR_NOT_FOUND, "no demo capture named '%s' (the demos with one: %s)", shown,
                   list->len > 0 ? list->str : "none embedded");
  }
  return NULL;
}

GHashTable *
rpe_demos_metadata (const char  *spec,
                    GError     **error)
{
  g_autoptr (GBytes) bytes = rpe_demos_lookup (spec, error);
  g_autoptr (JsonParser) parser = NULL;
  GHashTable *meta;
  const guint8 *data;
  gsize size;
  guint64 len = 0;
  JsonNode *root;
  JsonObject *object, *m;
  GList *members;

  if (bytes == NULL)
    return NULL;
  data = g_bytes_get_data (bytes, &size);
  if (size >= 8)
    for (int i = 7; i >= 0; i--)
      len = (len << 8) | data[i];
  if (size < 8 || len > size - 8 || len > (1u << 20))
    {
      rpe_set_error (error, RPE_ERROR_FORMAT, "%s: not a .safetensors file", spec);
      return NULL;
    }
  parser = json_parser_new ();
  if (!json_parser_load_from_data (parser, (const char *) data + 8, (gssize) len, error))
    return NULL;
  root = json_parser_get_root (parser);
  meta = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return meta;
  object = json_node_get_object (root);
  if (!json_object_has_member (object, "__metadata__")
      || !JSON_NODE_HOLDS_OBJECT (json_object_get_member (object, "__metadata__")))
    return meta;
  m = json_object_get_object_member (object, "__metadata__");
  members = json_object_get_members (m);
  for (GList *l = members; l != NULL; l = l->next)
    {
      JsonNode *v = json_object_get_member (m, l->data);

      if (JSON_NODE_HOLDS_VALUE (v) && json_node_get_value_type (v) == G_TYPE_STRING)
        g_hash_table_insert (meta, g_strdup (l->data), g_strdup (json_node_get_string (v)));
    }
  g_list_free (members);
  return meta;
}

RpeTensorSet *
rpe_demos_read (const char  *spec,
                GError     **error)
{
  g_autoptr (GBytes) bytes = rpe_demos_lookup (spec, error);

  if (bytes == NULL)
    return NULL;
  return rpe_checkpoint_read_bytes (bytes, spec, error);
}

gboolean
rpe_demos_is_builtin (const char *path)
{
  return path != NULL && rpe_demos_is_spec (path) && !g_file_test (path, G_FILE_TEST_EXISTS);
}

RpeTensorSet *
rpe_demos_read_or_file (const char *path, GError **error)
{
  return rpe_demos_is_builtin (path) ? rpe_demos_read (path, error) : rpe_checkpoint_read (path, error);
}

gboolean
rpe_demos_model_shape (const char *path, gsize *heads, gsize *dim)
{
  g_autoptr (GHashTable) meta = NULL;
  const char *h, *d;

  *heads = *dim = 0;
  if (!rpe_demos_is_builtin (path) || g_str_equal (path, "demo") || (meta = rpe_demos_metadata (path, NULL)) == NULL)
    return FALSE;
  h = g_hash_table_lookup (meta, "heads");
  d = g_hash_table_lookup (meta, "features");
  *heads = h != NULL ? (gsize) g_ascii_strtoull (h, NULL, 10) : 0;
  *dim = d != NULL ? (gsize) g_ascii_strtoull (d, NULL, 10) : 0;
  return *heads > 0 && *dim > 0;
}

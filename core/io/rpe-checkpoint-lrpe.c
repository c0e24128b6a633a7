/* rpe-checkpoint-lrpe.c: LRPE and FastRPB modules by their leaves (see the header). */
#include "config.h"

#include <string.h>

#include "rpe-checkpoint-lrpe.h"
#include "rpe-error.h"

void
rpe_lrpe_module_info_free (RpeLrpeModuleInfo *info)
{
  if (info == NULL)
    return;
  g_free (info->prefix);
  g_free (info);
}

void
rpe_fastrpb_module_info_free (RpeFastrpbModuleInfo *info)
{
  if (info == NULL)
    return;
  g_free (info->prefix);
  g_free (info);
}

/* Splits "a.b.leaf" (or "a/b/leaf") into prefix "a.b" and the leaf; the
 * prefix is "" for a top-level leaf.  Returns the leaf (inside name). */
static const char *
split_leaf (const char *name,
            char      **prefix)
{
  const char *dot = strrchr (name, '.'), *slash = strrchr (name, '/');
  const char *sep = dot > slash ? dot : slash;

  if (sep == NULL)
    {
      *prefix = g_strdup ("");
      return name;
    }
  *prefix = g_strndup (name, (gsize) (sep - name));
  return sep + 1;
}

static RpeLrpeModuleInfo *
lrpe_find (GPtrArray  *modules,
           const char *prefix)
{
  for (guint i = 0; i < modules->len; i++)
    {
      RpeLrpeModuleInfo *m = g_ptr_array_index (modules, i);

      if (strcmp (m->prefix, prefix) == 0)
        return m;
    }
  return NULL;
}

GPtrArray *
rpe_checkpoint_find_lrpe_modules (const RpeTensorSet *set)
{
  GPtrArray *modules = g_ptr_array_new_with_free_func ((GDestroyNotify) rpe_lrpe_module_info_free);

  for (gsize i = 0; i < rpe_tensor_set_size (set); i++)
    {
      const RpeTensor *t = rpe_tensor_set_get (set, i);
      g_autofree char *prefix = NULL;
      const char *leaf = split_leaf (t->name, &prefix);
      RpeLrpeModuleInfo *m;
      int kind;

      if (t->ndim != 3 || t->n_elements == 0)
        continue;
      if (strcmp (leaf, "v") == 0 && t->shape[0] == 1 && t->shape[2] == 1)
        kind = 0;
      else if (strcmp (leaf, "theta") == 0 && t->shape[0] == 1 && t->shape[1] == 1)
        kind = 1;
      else if (strcmp (leaf, "permutation") == 0 && t->shape[0] == 1)
        kind = 2;
      else
        continue;
      m = lrpe_find (modules, prefix);
      if (m == NULL)
        {
          m = g_new0 (RpeLrpeModuleInfo, 1);
          m->prefix = g_steal_pointer (&prefix);
          g_ptr_array_add (modules, m);
        }
      if (kind == 0 && m->v == NULL)
        {
          m->v = t;
          m->dim = t->shape[1];
        }
      else if (kind == 1 && m->theta == NULL)
        m->theta = t;
      else if (kind == 2 && m->permutation == NULL)
        {
          m->permutation = t;
          if (m->dim == 0)
            m->dim = t->shape[2];
        }
    }
  return modules;
}

GPtrArray *
rpe_checkpoint_find_fastrpb_modules (const RpeTensorSet *set)
{
  GPtrArray *modules = g_ptr_array_new_with_free_func ((GDestroyNotify) rpe_fastrpb_module_info_free);

  for (gsize i = 0; i < rpe_tensor_set_size (set); i++)
    {
      const RpeTensor *t = rpe_tensor_set_get (set, i);
      const char *name = t->name;
      gsize len = strlen (name);
      RpeFastrpbModuleInfo *m;

      /* "<p>.bias.w", "<p>/bias/w", or a top-level "bias.w" */
      if (t->ndim != 3 || t->shape[0] != 1 || t->n_elements == 0 || len < 6
          || (strcmp (name + len - 6, "bias.w") != 0 && strcmp (name + len - 6, "bias/w") != 0)
          || (len > 6 && name[len - 7] != '.' && name[len - 7] != '/'))
        continue;
      m = g_new0 (RpeFastrpbModuleInfo, 1);
      m->prefix = g_strndup (name, len > 6 ? len - 7 : 0);
      m->n_heads = t->shape[1];
      m->width = t->shape[2];
      m->w = t;
      g_ptr_array_add (modules, m);
    }
  return modules;
}

static gconstpointer
pick (GPtrArray   *modules,
      const char  *prefix,
      const char  *family,
      const char  *(*prefix_of) (gconstpointer),
      GError     **error)
{
  g_autoptr(GString) list = g_string_new (NULL);

  for (guint i = 0; i < modules->len; i++)
    {
      const char *p = prefix_of (g_ptr_array_index (modules, i));

      if (prefix != NULL && strcmp (p, prefix) == 0)
        return g_ptr_array_index (modules, i);
      g_string_append_printf (list, "%s'%s'", i ? ", " : "", p);
    }
  if (prefix == NULL && modules->len == 1)
    return g_ptr_array_index (modules, 0);
  if (modules->len == 0)
    rpe_set_error (error, RPE_ERROR_NOT_FOUND, "no %s module in the checkpoint (see rpe info)", family);
  else if (prefix == NULL)
    rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                   "the checkpoint has %u %s modules (%s): choose one with --prefix",
                   modules->len, family, list->str);
  else
    rpe_set_error (error, RPE_ERROR_NOT_FOUND, "no %s module under the prefix '%s'; the checkpoint has %s",
                   family, prefix, list->str);
  return NULL;
}

static const char *
lrpe_prefix (gconstpointer p)
{
  return ((const RpeLrpeModuleInfo *) p)->prefix;
}

static const char *
fastrpb_prefix (gconstpointer p)
{
  return ((const RpeFastrpbModuleInfo *) p)->prefix;
}

const RpeLrpeModuleInfo *
rpe_checkpoint_pick_lrpe (const RpeTensorSet *set,
                          const char         *prefix,
                          GPtrArray         **modules,
                          GError            **error)
{
  *modules = rpe_checkpoint_find_lrpe_modules (set);
  return pick (*modules, prefix, "LRPE", lrpe_prefix, error);
}

const RpeFastrpbModuleInfo *
rpe_checkpoint_pick_fastrpb (const RpeTensorSet *set,
                             const char         *prefix,
                             GPtrArray         **modules,
                             GError            **error)
{
  *modules = rpe_checkpoint_find_fastrpb_modules (set);
  return pick (*modules, prefix, "FastRPB", fastrpb_prefix, error);
}

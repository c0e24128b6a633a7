/* rpe-checkpoint-lrpe.c: LRPE and FastRPB modules by their leaves (see the header). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "rpe-checkpoint-lrpe.h"
#include "rpe-checkpoint.h"
#include "rpe-error.h"
#include "rpe-findings.h"

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
  g_autoptr (GString) list = g_string_new (NULL);

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
    rpe_set_error_finding (error, RPE_ERROR_NOT_FOUND, RPE_FINDING_ROLES, NULL, "no %s module in the checkpoint",
                           family);
  else if (prefix == NULL)
    {
      g_autoptr (GPtrArray) names = g_ptr_array_new_null_terminated (modules->len, NULL, TRUE);

      for (guint i = 0; i < modules->len; i++)
        g_ptr_array_add (names, (gpointer) prefix_of (g_ptr_array_index (modules, i)));
      rpe_set_error_finding (error, RPE_ERROR_INVALID_ARGUMENT, RPE_FINDING_MODULE,
                             (const char *const *) names->pdata, "the checkpoint has %u %s modules (%s)",
                             modules->len, family, list->str);
    }
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

/* ------------------------------------------------------ trained parameters */

gboolean
rpe_lrpe_v_looks_learned (const float *v,
                          gsize        dim)
{
  double norm2 = 0;

  for (gsize j = 0; j < dim; j++)
    norm2 += (double) v[j] * v[j];
  return fabs (sqrt (norm2) - 1.0) > 1e-5;
}

RpeLrpeLambda
rpe_lrpe_implied_lambda (gsize n_theta,
                         gsize dim)
{
  /* the reference's learned theta: (1, 1, D//2) for rotation, (1, 1, D) for complex */
  return n_theta == dim && dim != dim / 2 ? RPE_LRPE_LAMBDA_COMPLEX_EXP : RPE_LRPE_LAMBDA_ROTATION;
}

RpeStatus
rpe_lrpe_pi_from_buffer (const RpeTensor *t,
                         gsize            pd,
                         uint32_t        *pi,
                         gsize           *bad_row)
{
  int64_t *table;
  RpeStatus st;

  if (bad_row != NULL)
    *bad_row = 0;
  if (pd == 0 || t->ndim < 2 || t->shape[t->ndim - 1] != pd || t->n_elements % pd != 0)
    return RPE_ERROR_INVALID_ARGUMENT;
  table = g_try_new (int64_t, t->n_elements);
  if (table == NULL)
    return RPE_ERROR_NO_MEMORY;
  for (gsize i = 0; i < t->n_elements; i++)
    {
      float x = t->data[i];

      table[i] = x >= 0 && x < (float) pd && x == floorf (x) ? (int64_t) x : -1;
    }
  st = rpe_lrpe_perm_from_table (table, t->n_elements / pd, pd, pi, bad_row);
  g_free (table);
  return st;
}

void
rpe_lrpe_trained_free (RpeLrpeTrained *t)
{
  if (t == NULL)
    return;
  g_free (t->v);
  g_free (t->theta);
  g_free (t->pi);
  g_free (t);
}

RpeLrpeTrained *
rpe_lrpe_trained_copy (const RpeLrpeTrained *t)
{
  RpeLrpeTrained *c;

  if (t == NULL)
    return NULL;
  c = g_new0 (RpeLrpeTrained, 1);
  *c = *t;
  c->v = t->v != NULL ? g_memdup2 (t->v, t->v_dim * sizeof (float)) : NULL;
  c->theta = t->theta != NULL ? g_memdup2 (t->theta, t->n_theta * sizeof (float)) : NULL;
  c->pi = t->pi != NULL ? g_memdup2 (t->pi, t->n_pi * sizeof (uint32_t)) : NULL;
  return c;
}

RpeLrpeTrained *
rpe_lrpe_trained_new (const RpeTensor  *v,
                      const RpeTensor  *theta,
                      const RpeTensor  *permutation,
                      const char       *from,
                      GError          **error)
{
  g_autoptr (RpeLrpeTrained) t = g_new0 (RpeLrpeTrained, 1);
  const RpeTensor *all[3] = { v, theta, permutation };

  if (v == NULL && theta == NULL && permutation == NULL)
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, "%s: no LRPE parameter (v, theta, permutation)", from);
      return NULL;
    }
  for (int i = 0; i < 3; i++)
    if (all[i] != NULL && (all[i]->n_elements == 0 || !rpe_tensor_check_finite (all[i], error)))
      {
        if (all[i]->n_elements == 0)
          rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, "%s: %s is empty", from, all[i]->name);
        else
          g_prefix_error (error, "%s: ", from);
        return NULL;
      }
  if (v != NULL)
    {
      t->v_dim = v->n_elements;
      t->v = g_memdup2 (v->data, v->n_elements * sizeof (float));
      t->v_learned = rpe_lrpe_v_looks_learned (t->v, t->v_dim);
    }
  if (theta != NULL)
    {
      t->n_theta = theta->n_elements;
      t->theta = g_memdup2 (theta->data, theta->n_elements * sizeof (float));
    }
  if (permutation != NULL)
    {
      gsize bad = 0;
      RpeStatus st;

      t->n_pi = permutation->ndim >= 2 ? permutation->shape[permutation->ndim - 1] : 0;
      t->pi = g_try_new (uint32_t, MAX (t->n_pi, 1));
      if (t->pi == NULL)
        {
          rpe_set_error (error, RPE_ERROR_NO_MEMORY, "%s: the permutation buffer does not fit in memory", from);
          return NULL;
        }
      st = rpe_lrpe_pi_from_buffer (permutation, t->n_pi, t->pi, &bad);
      if (st != RPE_OK)
        {
          g_autofree char *shape = rpe_tensor_shape_string (permutation);

          rpe_set_error (error, st, "%s: the permutation buffer %s of shape %s is not the powers "
                         "T[s] = T[s-1][pi] of one permutation starting at the identity (row %zu)",
                         from, permutation->name, shape, (size_t) bad);
          return NULL;
        }
    }
  return g_steal_pointer (&t);
}

gsize
rpe_lrpe_trained_dim (const RpeLrpeTrained *t)
{
  if (t->v != NULL)
    return t->v_dim;
  if (t->pi != NULL)
    return t->n_pi;
  return 0;
}

RpeStatus
rpe_lrpe_trained_apply (const RpeLrpeTrained *t,
                        RpeLrpeConfig        *config)
{
  gsize pd;

  if (t->v != NULL)
    {
      if (t->v_dim != config->dim)
        return RPE_ERROR_INVALID_ARGUMENT;
      config->p = RPE_LRPE_P_HOUSEHOLDER;
      config->householder_v = t->v;
      config->householder_learned = t->v_learned;
    }
  pd = rpe_lrpe_p_dims (config->p, config->dim);
  if (t->pi != NULL)
    {
      if (t->n_pi != pd || t->theta != NULL)
        return RPE_ERROR_INVALID_ARGUMENT;
      config->lambda = RPE_LRPE_LAMBDA_PERMUTATION;
      config->lambda_perm = t->pi;
    }
  if (t->theta != NULL)
    {
      if (config->lambda == RPE_LRPE_LAMBDA_PERMUTATION
          || t->n_theta != rpe_lrpe_theta_count (config->lambda, pd))
        return RPE_ERROR_INVALID_ARGUMENT;
      config->theta_kind = RPE_LRPE_THETA_CUSTOM;
      config->theta = t->theta;
      config->n_theta = t->n_theta;
    }
  return RPE_OK;
}

static void
append_names (GString *s, const char *kind, GPtrArray *names)
{
  g_string_append_printf (s, "%s%s: ", s->len > 0 ? "; " : "", kind);
  if (names->len == 0)
    g_string_append (s, "none");
  for (guint i = 0; i < names->len && i < 4; i++)
    g_string_append_printf (s, "%s%s", i > 0 ? ", " : "", (const char *) g_ptr_array_index (names, i));
  if (names->len > 4)
    g_string_append_printf (s, " and %u more", names->len - 4);
}

char *
rpe_checkpoint_summary (const RpeTensorSet *set)
{
  g_autoptr (GPtrArray) spe = rpe_checkpoint_find_modules (set);
  g_autoptr (GPtrArray) lrpe = rpe_checkpoint_find_lrpe_modules (set);
  g_autoptr (GPtrArray) fastrpb = rpe_checkpoint_find_fastrpb_modules (set);
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  GString *s = g_string_new (NULL);

  for (guint i = 0; spe != NULL && i < spe->len; i++)
    {
      const RpeSpeModuleInfo *m = g_ptr_array_index (spe, i);

      g_ptr_array_add (names, g_strdup_printf ("%s (%s)", m->prefix, m->method == RPE_SPE_SINE ? "sine" : "conv"));
    }
  append_names (s, "SPE modules", names);
  g_ptr_array_set_size (names, 0);
  for (guint i = 0; lrpe != NULL && i < lrpe->len; i++)
    {
      const RpeLrpeModuleInfo *m = g_ptr_array_index (lrpe, i);

      g_ptr_array_add (names, g_strdup (m->prefix[0] != '\0' ? m->prefix : "(top level)"));
    }
  append_names (s, "LRPE modules", names);
  g_ptr_array_set_size (names, 0);
  for (guint i = 0; fastrpb != NULL && i < fastrpb->len; i++)
    {
      const RpeFastrpbModuleInfo *m = g_ptr_array_index (fastrpb, i);

      g_ptr_array_add (names, g_strdup (m->prefix[0] != '\0' ? m->prefix : "(top level)"));
    }
  append_names (s, "FastRPB modules", names);
  g_ptr_array_set_size (names, 0);
  for (gsize i = 0; i < rpe_tensor_set_size (set); i++)
    {
      const RpeTensor *t = rpe_tensor_set_get (set, i);

      if (g_str_equal (t->name, "ape.weight") || g_str_has_suffix (t->name, ".ape.weight"))
        g_ptr_array_add (names, g_strdup (t->name));
    }
  append_names (s, "learned APE", names);
  return g_string_free (s, FALSE);
}

/* rpe-checkpoint-ape.c: a learned absolute position embedding in a checkpoint. */
#include "config.h"

#include "rpe-checkpoint-ape.h"
#include "rpe-error.h"

const RpeTensor *
rpe_checkpoint_find_learned_ape (const RpeTensorSet  *set,
                                 gsize                n_heads,
                                 gsize                n_features,
                                 GError             **error)
{
  const RpeTensor *found = NULL;

  g_return_val_if_fail (set != NULL, NULL);
  for (gsize i = 0; i < rpe_tensor_set_size (set); i++)
    {
      const RpeTensor *t = rpe_tensor_set_get (set, i);

      if (!g_str_equal (t->name, "ape.weight") && !g_str_has_suffix (t->name, ".ape.weight"))
        continue;
      if (found != NULL)
        {
          g_autofree char *a = g_strescape (found->name, NULL), *b = g_strescape (t->name, NULL);

          rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                         "two learned absolute embeddings, '%s' and '%s': the APE model is ambiguous", a, b);
          return NULL;
        }
      found = t;
    }
  if (found == NULL)
    return NULL;
  if (found->ndim != 2 || found->shape[0] < 1 || n_heads == 0 || n_features == 0
      || n_heads > G_MAXSIZE / n_features || found->shape[1] != n_heads * n_features)
    {
      g_autofree char *name = g_strescape (found->name, NULL);
      g_autofree char *shape = rpe_tensor_shape_string (found);

      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                     "the learned absolute embedding '%s' has shape %s; expected (positions, %zu) for "
                     "H = %zu heads of D = %zu features", name, shape,
                     (size_t) (n_heads * n_features), (size_t) n_heads, (size_t) n_features);
      return NULL;
    }
  if (!rpe_tensor_check_finite (found, error))
    return NULL;
  return found;
}

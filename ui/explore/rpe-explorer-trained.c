/* rpe-explorer-trained.c: a checkpoint's trained FastRPB biases and learned absolute embedding. */
#include "config.h"

#include <string.h>

#include "rpe-alloc.h"
#include "rpe-checkpoint-ape.h"
#include "rpe-checkpoint-lrpe.h"
#include "rpe-error.h"
#include "rpe-explorer-trained.h"
#include "rpe-fastrpb.h"

static void
trained_clear (gpointer data)
{
  RpeExplorerTrained *t = data;

  for (guint i = 0; i < t->n_fastrpb; i++)
    {
      g_free (t->fastrpb[i].prefix);
      rpe_free (t->fastrpb[i].w);
    }
  g_free (t->fastrpb);
  rpe_free (t->ape);
  g_free (t->source);
}

RpeExplorerTrained *
rpe_explorer_trained_ref (RpeExplorerTrained *trained)
{
  g_return_val_if_fail (trained != NULL, NULL);
  return g_atomic_rc_box_acquire (trained);
}

void
rpe_explorer_trained_unref (RpeExplorerTrained *trained)
{
  if (trained != NULL)
    g_atomic_rc_box_release_full (trained, trained_clear);
}

RpeExplorerTrained *
rpe_explorer_trained_new (gsize heads, gsize dim, const char *source, GError **error)
{
  RpeExplorerTrained *t;

  if (heads < 1 || heads > 4096 || dim < 1 || dim > 65536)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          "trained modules of H = %zu heads and D = %zu features: the explorer takes 1 .. 4096 "
                          "heads and 1 .. 65536 features",
                          (size_t) heads, (size_t) dim),
           NULL;
  t = g_atomic_rc_box_new0 (RpeExplorerTrained);
  t->heads = heads;
  t->dim = dim;
  t->source = g_strdup (source != NULL ? source : "trained modules");
  return t;
}

gboolean
rpe_explorer_trained_add_fastrpb (RpeExplorerTrained *t,
                                  guint               layer,
                                  const char         *prefix,
                                  gsize               taps,
                                  const float        *w,
                                  GError            **error)
{
  gsize                    count;
  RpeStatus                st = RPE_OK;
  RpeExplorerFastrpbLayer *l;

  g_return_val_if_fail (t != NULL && w != NULL, FALSE);
  if (t->n_fastrpb >= RPE_EXPLORER_TRAINED_MAX_LAYERS)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, "more than %d FastRPB modules",
                          RPE_EXPLORER_TRAINED_MAX_LAYERS);
  if (taps < 1 || taps > RPE_EXPLORER_TRAINED_MAX_TAPS || !rpe_size_mul (t->heads, 2 * taps - 1, &count))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          "the FastRPB module %s has M = %zu offsets a side (1 .. %d)", prefix ? prefix : "",
                          (size_t) taps, RPE_EXPLORER_TRAINED_MAX_TAPS);
  if (!rpe_all_finite_f (w, count))
    return rpe_set_error (error, RPE_ERROR_NOT_FINITE, "the FastRPB module %s holds NaN or infinite weights",
                          prefix ? prefix : "");
  t->fastrpb = g_renew (RpeExplorerFastrpbLayer, t->fastrpb, t->n_fastrpb + 1);
  l = &t->fastrpb[t->n_fastrpb];
  memset (l, 0, sizeof *l);
  if ((l->w = rpe_alloc (count, sizeof (float), &st)) == NULL)
    return rpe_set_error (error, st, "the FastRPB module %s: %s", prefix ? prefix : "", rpe_status_to_string (st));
  memcpy (l->w, w, count * sizeof (float));
  l->layer = layer;
  l->prefix = g_strdup (prefix != NULL ? prefix : "");
  l->taps = taps;
  t->n_fastrpb++;
  return TRUE;
}

gboolean
rpe_explorer_trained_set_ape (RpeExplorerTrained *t, gsize positions, const float *ape, GError **error)
{
  gsize     count;
  RpeStatus st = RPE_OK;
  float    *copy;

  g_return_val_if_fail (t != NULL && ape != NULL, FALSE);
  if (positions < 1 || positions > 65536 || !rpe_size_mul (positions, t->heads * t->dim, &count))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          "a learned absolute embedding of %zu positions (the explorer takes 1 .. 65536)",
                          (size_t) positions);
  if (!rpe_all_finite_f (ape, count))
    return rpe_set_error (error, RPE_ERROR_NOT_FINITE, "the learned absolute embedding holds NaN or infinite values");
  if ((copy = rpe_alloc (count, sizeof (float), &st)) == NULL)
    return rpe_set_error (error, st, "the learned absolute embedding: %s", rpe_status_to_string (st));
  memcpy (copy, ape, count * sizeof (float));
  rpe_free (t->ape);
  t->ape = copy;
  t->ape_positions = positions;
  return TRUE;
}

/* The layer a module's name gives: its first all-digit component ("layers.1.positional_bias"). */
static guint
layer_of (const char *prefix)
{
  g_auto (GStrv) parts = g_strsplit (prefix, ".", -1);

  for (guint i = 0; parts[i] != NULL; i++)
    {
      guint64 v;

      if (parts[i][0] != '\0' && strspn (parts[i], "0123456789") == strlen (parts[i]) && strlen (parts[i]) <= 6
          && g_ascii_string_to_unsigned (parts[i], 10, 0, 999999, &v, NULL))
        return (guint) v;
    }
  return RPE_EXPLORER_TRAINED_NO_LAYER;
}

RpeExplorerTrained *
rpe_explorer_trained_from_set (const RpeTensorSet *set, gsize heads, gsize dim, const char *source, GError **error)
{
  g_autoptr (GPtrArray) modules = NULL;
  g_autoptr (RpeExplorerTrained) t = NULL;
  const RpeTensor *ape;
  GError          *local = NULL;

  g_return_val_if_fail (set != NULL, NULL);
  modules = rpe_checkpoint_find_fastrpb_modules (set);
  ape = rpe_checkpoint_find_learned_ape (set, heads, dim, &local);
  if (local != NULL)
    {
      g_propagate_error (error, local);
      return NULL;
    }
  if ((modules == NULL || modules->len == 0) && ape == NULL)
    return NULL;
  if ((t = rpe_explorer_trained_new (heads, dim, source, error)) == NULL)
    return NULL;
  for (guint i = 0; modules != NULL && i < modules->len; i++)
    {
      const RpeFastrpbModuleInfo *m = g_ptr_array_index (modules, i);
      const RpeTensor            *w = m->w;
      RpeFastrpbLayout            layout;
      gsize                       width, taps, count;
      g_autofree char            *name = g_strescape (m->prefix, NULL);
      float                      *centred;
      RpeStatus                   st = RPE_OK;
      gboolean                    ok;

      if (w->ndim != 3 || w->shape[0] != 1 || w->shape[1] != heads)
        {
          g_autofree char *shape = rpe_tensor_shape_string (w);

          return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                                "the FastRPB module '%s' has weights of shape %s; expected (1, H = %zu, 2M - 1)", name,
                                shape, (size_t) heads),
                 NULL;
        }
      width = w->shape[2];
      layout = rpe_fastrpb_reference_layout (width);
      taps = rpe_fastrpb_layout_length (layout, width);
      if (taps == 0 || taps > RPE_EXPLORER_TRAINED_MAX_TAPS || !rpe_size_mul (heads, 2 * taps - 1, &count))
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                              "the FastRPB module '%s': %zu weights are not a FastRPB layout of at most %d offsets",
                              name, (size_t) width, RPE_EXPLORER_TRAINED_MAX_TAPS),
               NULL;
      if ((centred = rpe_alloc (count, sizeof (float), &st)) == NULL)
        return rpe_set_error (error, st, "the FastRPB module '%s': %s", name, rpe_status_to_string (st)), NULL;
      st = rpe_fastrpb_to_centred (layout, heads, width, w->data, taps, centred);
      ok = st == RPE_OK ? rpe_explorer_trained_add_fastrpb (t, layer_of (m->prefix), m->prefix, taps, centred, error)
                        : rpe_set_error (error, st, "the FastRPB module '%s': %s", name, rpe_status_to_string (st));
      rpe_free (centred);
      if (!ok)
        return NULL;
    }
  if (ape != NULL && !rpe_explorer_trained_set_ape (t, ape->shape[0], ape->data, error))
    return NULL;
  return g_steal_pointer (&t);
}

const RpeExplorerFastrpbLayer *
rpe_explorer_trained_fastrpb (const RpeExplorerTrained *t, guint layer)
{
  if (t == NULL || t->n_fastrpb == 0)
    return NULL;
  for (guint i = 0; i < t->n_fastrpb; i++)
    if (t->fastrpb[i].layer == layer)
      return &t->fastrpb[i];
  return &t->fastrpb[0];
}

gsize
rpe_explorer_trained_bytes (const RpeExplorerTrained *t)
{
  gsize bytes = 0;

  if (t == NULL)
    return 0;
  for (guint i = 0; i < t->n_fastrpb; i++)
    bytes += t->heads * (2 * t->fastrpb[i].taps - 1) * sizeof (float);
  return bytes + t->ape_positions * t->heads * t->dim * sizeof (float);
}

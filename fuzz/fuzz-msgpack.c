/* libFuzzer target: the Flax msgpack reader (rpe-msgpack.c), then discovery and
 * loading of every module found (every layer, with notes): none of it may crash,
 * leak, read out of bounds or hold more than the budget. */
#include "config.h"

#include <glib.h>

#include "rpe-alloc.h"
#include "rpe-checkpoint.h"
#include "rpe-msgpack.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

int
LLVMFuzzerTestOneInput (const guint8 *data,
                        size_t        size)
{
  static gboolean init = FALSE;
  GError *error = NULL;
  RpeTensorSet *set;

  if (!init)
    {
      rpe_budget_set ((size_t) 256 << 20);
      init = TRUE;
    }
  set = rpe_msgpack_read_bytes (data, size, "fuzz", &error);
  g_assert_true ((set == NULL) == (error != NULL));
  g_clear_error (&error);
  if (set != NULL)
    {
      GPtrArray *unpaired = NULL;
      GPtrArray *mods = rpe_checkpoint_discover (set, &unpaired, &error);

      g_clear_error (&error);
      for (guint i = 0; mods != NULL && i < mods->len; i++)
        {
          const RpeSpeModuleInfo *info = g_ptr_array_index (mods, i);
          RpeSpeSelection sel = RPE_SPE_SELECTION_INIT;
          RpeSpeParams params;
          char *note = NULL;

          sel.prefix = info->prefix;
          for (guint l = 0; l <= info->layers->len && l < 4; l++)
            {
              sel.layer = l == 0 ? -1 : g_array_index (info->layers, int, l - 1);
              if (rpe_checkpoint_load_spe_full (set, &sel, &params, &note, &error))
                rpe_spe_params_clear (&params);
              g_clear_error (&error);
              g_clear_pointer (&note, g_free);
            }
        }
      if (mods != NULL)
        g_ptr_array_unref (mods);
      if (unpaired != NULL)
        g_ptr_array_unref (unpaired);
      rpe_tensor_set_free (set);
    }
  return 0;
}

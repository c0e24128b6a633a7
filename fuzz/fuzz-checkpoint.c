/* libFuzzer target: read any checkpoint format, find the SPE modules and load
 * each of them (every layer): none of it may crash, leak or read out of bounds. */
#include "config.h"

#include <glib.h>

#include "rpe-alloc.h"
#include "rpe-checkpoint.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

int
LLVMFuzzerTestOneInput (const guint8 *data,
                        size_t        size)
{
  static gboolean init = FALSE;
  GError *error = NULL;
  GBytes *bytes;
  RpeTensorSet *set;

  if (!init)
    {
      rpe_budget_set ((size_t) 256 << 20);
      init = TRUE;
    }
  bytes = g_bytes_new_static (data, size);
  set = rpe_checkpoint_read_bytes (bytes, "fuzz.ckpt", &error);
  g_assert_true ((set == NULL) == (error != NULL));
  g_clear_error (&error);
  if (set != NULL)
    {
      GPtrArray *mods = rpe_checkpoint_find_modules (set);

      for (guint i = 0; i < mods->len; i++)
        {
          const RpeSpeModuleInfo *info = g_ptr_array_index (mods, i);
          RpeSpeParams params;

          if (rpe_checkpoint_load_spe (set, info->prefix, -1, &params, &error))
            rpe_spe_params_clear (&params);
          g_clear_error (&error);
          for (guint l = 0; l < info->layers->len && l < 4; l++)
            {
              if (rpe_checkpoint_load_spe (set, info->prefix, g_array_index (info->layers, int, l),
                                           &params, &error))
                rpe_spe_params_clear (&params);
              g_clear_error (&error);
            }
        }
      g_ptr_array_unref (mods);
      rpe_tensor_set_free (set);
    }
  g_bytes_unref (bytes);
  return 0;
}

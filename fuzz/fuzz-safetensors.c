/* libFuzzer target: the safetensors reader must never crash, leak or read out of
 * bounds, and must set an error exactly when it fails. */
#include "config.h"

#include <glib.h>

#include "rpe-alloc.h"
#include "rpe-safetensors.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

int
LLVMFuzzerTestOneInput (const guint8 *data,
                        size_t        size)
{
  GError *error = NULL;
  static gboolean init = FALSE;

  if (!init)
    {
      rpe_budget_set ((size_t) 256 << 20);   /* keep absurd-but-valid sizes cheap */
      init = TRUE;
    }
  {
  RpeTensorSet *set = rpe_safetensors_read_bytes (data, size, "fuzz.safetensors", &error);
  g_assert_true ((set == NULL) == (error != NULL));
  if (set != NULL)
    rpe_tensor_set_free (set);
  }
  g_clear_error (&error);
  return 0;
}

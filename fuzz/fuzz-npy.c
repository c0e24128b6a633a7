/* libFuzzer target: the npy reader must never crash, leak or read out of
 * bounds, and must set an error exactly when it fails. */
#include "config.h"

#include <glib.h>

#include "rpe-alloc.h"
#include "rpe-npy.h"

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
  RpeTensor *t = rpe_npy_read_bytes (data, size, "fuzz.npy", &error);
  g_assert_true ((t == NULL) == (error != NULL));
  rpe_tensor_free (t);
  }
  g_clear_error (&error);
  return 0;
}

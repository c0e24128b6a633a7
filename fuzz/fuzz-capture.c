/* libFuzzer target: the capture reader (rpe-capture.h) must never crash, leak or read out of
 * bounds, must set an error exactly when it fails, and what it accepts must hold what its
 * contract says (every layer's queries and keys of one (N, H, D) shape, finite, and loadable as
 * content of that shape). */
#include "config.h"

#include <glib.h>
#include <math.h>

#include "rpe-alloc.h"
#include "rpe-capture.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  GError         *error = NULL;
  static gboolean init = FALSE;
  RpeCapture     *c;

  if (!init)
    {
      rpe_budget_set ((size_t) 256 << 20); /* keep absurd-but-valid sizes cheap */
      init = TRUE;
    }
  c = rpe_capture_read_bytes (data, size, "fuzz.npz", &error);
  g_assert_true ((c == NULL) == (error != NULL));
  g_clear_error (&error);
  if (c != NULL)
    {
      g_assert_cmpuint (rpe_capture_n_layers (c), >, 0);
      for (gsize i = 0; i < rpe_capture_n_layers (c); i++)
        {
          guint             l = rpe_capture_layer (c, i);
          const RpeTensor  *q = rpe_capture_get (c, l, RPE_CAPTURE_QUERIES);
          const RpeTensor  *k = rpe_capture_get (c, l, RPE_CAPTURE_KEYS);
          RpeCaptureContent content;

          g_assert_nonnull (q);
          g_assert_nonnull (k);
          g_assert_cmpuint (q->ndim, ==, 3);
          g_assert_true (q->shape[0] == k->shape[0] && q->shape[1] == k->shape[1] && q->shape[2] == k->shape[2]);
          for (gsize j = 0; j < q->n_elements; j++)
            g_assert_true (isfinite (q->data[j]) && isfinite (k->data[j]));
          if (rpe_capture_load_content (c, l, q->shape[1], q->shape[2], 0,
                                        rpe_capture_get (c, l, RPE_CAPTURE_VALUES) != NULL, &content, &error))
            {
              g_assert_cmpuint (content.n, ==, q->shape[0]);
              rpe_capture_content_clear (&content);
            }
          g_clear_error (&error);
          /* another module's shape is refused */
          g_assert_false (rpe_capture_load_content (c, l, q->shape[1] + 1, q->shape[2], 0, FALSE, &content, &error));
          g_assert_null (content.q);
          g_clear_error (&error);
        }
      rpe_capture_free (c);
    }
  return 0;
}

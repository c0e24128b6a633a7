/* rpe-safetensors.h: .safetensors files (F32, F64, F16, BF16). */
#pragma once

#include <gio/gio.h>

#include "rpe-tensor.h"

G_BEGIN_DECLS

/* Limits (see the README's "File limits"). */
#define RPE_SAFETENSORS_MAX_TENSORS 65536u

RpeTensorSet *rpe_safetensors_read       (const char   *path,
                                          GError      **error);
RpeTensorSet *rpe_safetensors_read_bytes (const guint8 *data,
                                          gsize         length,
                                          const char   *name_for_errors,
                                          GError      **error);
/* Writes float32 tensors (used for the demo and test fixtures); atomic. */
gboolean      rpe_safetensors_write      (const char         *path,
                                          const RpeTensorSet *set,
                                          GError            **error);

G_END_DECLS

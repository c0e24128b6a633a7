/* rpe-npy.h: NumPy .npy arrays (format versions 1.0, 2.0 and 3.0), float32/float64 in C order. */
#pragma once

#include <gio/gio.h>

#include "rpe-tensor.h"

G_BEGIN_DECLS

RpeTensor *rpe_npy_read       (const char  *path,
                               GError     **error);
RpeTensor *rpe_npy_read_bytes (const guint8 *data,
                               gsize         length,
                               const char   *name_for_errors,
                               GError      **error);

/* Writes data (float32, C order) as '<f4' or, with as_f64, '<f8'.  Atomic: a failure
 * leaves no partial file and keeps any existing one. */
gboolean   rpe_npy_write      (const char   *path,
                               const float  *data,
                               gsize         ndim,
                               const gsize  *shape,
                               gboolean      as_f64,
                               GError      **error);

G_END_DECLS

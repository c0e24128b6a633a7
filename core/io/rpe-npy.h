/* rpe-npy.h: NumPy .npy arrays (format versions 1.0, 2.0 and 3.0): float16/32/64 (and int32/64 on
 * request, held as float32), C or Fortran order (a Fortran-order array is reordered to C order while
 * it is loaded, in place in the tensor: no extra memory). */
#pragma once

#include <gio/gio.h>

#include "rpe-tensor.h"

G_BEGIN_DECLS

RpeTensor *rpe_npy_read       (const char  *path,
                               GError     **error);
/* Also reads int32/int64 arrays ('<i4', '<i8'; dtype RPE_DTYPE_I32/I64), held as float32,
 * exact up to 2^24 (e.g. LRPE's permutation table).  The others refuse integers. */
RpeTensor *rpe_npy_read_int_ok (const char  *path,
                                GError     **error);
RpeTensor *rpe_npy_read_bytes (const guint8 *data,
                               gsize         length,
                               const char   *name_for_errors,
                               GError      **error);
/* rpe_npy_read_bytes that also reads the integer dtypes `allow` names: RPE_NPY_ALLOW_INT
 * int32/int64 (RPE_DTYPE_I32/I64), RPE_NPY_ALLOW_U8 uint8 ('|u1', RPE_DTYPE_U8); held as float32. */
#define RPE_NPY_ALLOW_INT 1u
#define RPE_NPY_ALLOW_U8 2u
RpeTensor *rpe_npy_read_bytes_allowing (const guint8 *data,
                                        gsize         length,
                                        const char   *name_for_errors,
                                        guint         allow,
                                        GError      **error);

/* Writes data (float32, C order) as '<f4' or, with as_f64, '<f8'.  Atomic: a failure
 * leaves no partial file and keeps any existing one. */
gboolean   rpe_npy_write      (const char   *path,
                               const float  *data,
                               gsize         ndim,
                               const gsize  *shape,
                               gboolean      as_f64,
                               GError      **error);

/* Streaming writer for outputs larger than memory: the header is written first, then slabs in
 * C order, then the temporary file is renamed over `path` by commit (the same atomic path as
 * rpe_npy_write: a failure or an abort leaves no partial file and keeps any existing one).
 * Commit fails (and aborts) unless exactly the shape's element count was appended. */
typedef struct _RpeNpyWriter RpeNpyWriter;

RpeNpyWriter *rpe_npy_writer_new    (const char    *path,
                                     gsize          ndim,
                                     const gsize   *shape,
                                     gboolean       as_f64,
                                     GError       **error);
gboolean      rpe_npy_writer_append (RpeNpyWriter  *writer,
                                     const float   *data,
                                     gsize          count,
                                     GError       **error);
/* Every element written: fsync and close the temporary file, without the rename (commit
 * then only renames), so that several outputs are published only once all are on disk.
 * FALSE on error; the caller then aborts the writer. */
gboolean      rpe_npy_writer_flush  (RpeNpyWriter  *writer,
                                     GError       **error);
gboolean      rpe_npy_writer_commit (RpeNpyWriter  *writer,   /* frees the writer */
                                     GError       **error);
void          rpe_npy_writer_abort  (RpeNpyWriter  *writer);  /* frees the writer, NULL-safe */

G_END_DECLS

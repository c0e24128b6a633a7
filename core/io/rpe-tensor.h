/* rpe-tensor.h: named n-d arrays as read from files (.npy, .safetensors, ...).
 *
 * Whatever the file's dtype, data is held as float32 in C order; `dtype`
 * records what the file stored.  Readers refuse NaN-free-ness nowhere: callers
 * that need finite values check with rpe_tensor_check_finite.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define RPE_TENSOR_MAX_DIMS 8

typedef enum
{
  RPE_DTYPE_F32,
  RPE_DTYPE_F64,
  RPE_DTYPE_F16,
  RPE_DTYPE_BF16,
  RPE_DTYPE_I64,   /* integer tensors (e.g. LRPE's `permutation` buffer), held */
  RPE_DTYPE_I32,   /* as float32: exact up to 2^24 in magnitude */
  RPE_DTYPE_U8,    /* bytes (a capture's UTF-8 metadata), held as float32 */
} RpeDType;

typedef struct
{
  char     *name;                       /* "" for a lone .npy array */
  RpeDType  dtype;                      /* dtype in the file */
  gsize     ndim;
  gsize     shape[RPE_TENSOR_MAX_DIMS];
  gsize     n_elements;
  float    *data;                       /* n_elements floats, C order (rpe_alloc'd) */
} RpeTensor;

const char *rpe_dtype_to_string (RpeDType dtype); /* "F32", "F64", "F16", "BF16", "I64", "I32", "U8" */
gsize       rpe_dtype_size (RpeDType dtype);      /* bytes per element in the file: 4, 8, 2, 2, 8, 4, 1 */

/* IEEE 754 binary16 and bfloat16 bit patterns to float32 (exact: subnormals,
 * infinities and NaN included). */
float       rpe_half_to_float     (guint16 bits);
float       rpe_bfloat16_to_float (guint16 bits);

/* Allocates a zero-filled tensor; checks the element count and bytes for
 * overflow and against the memory budget. */
RpeTensor *rpe_tensor_new (const char   *name,
                           gsize         ndim,
                           const gsize  *shape,
                           GError      **error);
void       rpe_tensor_free (RpeTensor *tensor);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RpeTensor, rpe_tensor_free)

/* FALSE (RPE_ERROR_INVALID_ARGUMENT) if a dimension of `shape` is 0: an array
 * with no rows (or no columns) is no content; the message names `what`, the
 * shape and which dimension is empty.  Inputs read from files go through it
 * before their first dimension is taken for a length. */
gboolean   rpe_shape_check_nonempty (const char   *what,
                                     gsize         ndim,
                                     const gsize  *shape,
                                     GError      **error);

/* "(2, 3, 4)" — newly allocated */
char      *rpe_tensor_shape_string (const RpeTensor *tensor);
gboolean   rpe_tensor_check_finite (const RpeTensor *tensor,
                                    GError         **error);

/* A set of named tensors, in file order.  Every format's reader stops at
 * RPE_TENSOR_SET_MAX_TENSORS (rpe_tensor_set_add refuses more). */
#define RPE_TENSOR_SET_MAX_TENSORS 65536u

typedef struct _RpeTensorSet RpeTensorSet;

RpeTensorSet    *rpe_tensor_set_new (void);
void             rpe_tensor_set_free (RpeTensorSet *set);
/* Takes ownership; FALSE (and frees tensor) if the name is already present. */
gboolean         rpe_tensor_set_add (RpeTensorSet *set,
                                     RpeTensor    *tensor,
                                     GError      **error);
gsize            rpe_tensor_set_size (const RpeTensorSet *set);
const RpeTensor *rpe_tensor_set_get (const RpeTensorSet *set,
                                     gsize               index);
const RpeTensor *rpe_tensor_set_lookup (const RpeTensorSet *set,
                                        const char         *name);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RpeTensorSet, rpe_tensor_set_free)

/* Atomic file writing, shared by the writers: data goes to a temporary file in
 * the target's directory, which commit fsyncs and renames over the target.  On
 * any failure (or abort) the temporary file is removed and an existing target
 * is left untouched.  rpe_atomic_file_new refuses what rpe_output_check
 * refuses (an input, a write-protected file).  Errors are RPE_ERROR_IO and name
 * the path; a full disk, a quota or the file size limit (ENOSPC, EDQUOT, EFBIG)
 * is RPE_ERROR_NO_SPACE, as an output found too large for the free space before
 * it is written. */
typedef struct _RpeAtomicFile RpeAtomicFile;

RpeAtomicFile *rpe_atomic_file_new    (const char     *path,
                                       GError        **error);
gboolean       rpe_atomic_file_write  (RpeAtomicFile  *file,
                                       const void     *data,
                                       gsize           length,
                                       GError        **error);
/* fsync and close, without the rename (for a writer that publishes several files together:
 * flush each, then commit each); FALSE on error, and then the caller aborts `file`. */
gboolean       rpe_atomic_file_flush  (RpeAtomicFile  *file,
                                       GError        **error);
/* fsync, close (unless flushed), rename; frees `file` whatever the outcome. */
gboolean       rpe_atomic_file_commit (RpeAtomicFile  *file,
                                       GError        **error);
/* Removes the temporary file and frees `file`; NULL-safe. */
void           rpe_atomic_file_abort  (RpeAtomicFile  *file);
/* new, write, commit: the whole of `data` as the file at `path`. */
gboolean       rpe_atomic_file_set_contents (const char  *path,
                                             const void  *data,
                                             gsize        length,
                                             GError     **error);

/* The whole file (rpe_read_file of rpe-file.h: read, not mapped; regular files
 * only; charged to the budget scope).  The GBytes may be empty (size 0).
 * RPE_ERROR_IO naming the path on failure. */
GBytes        *rpe_map_file           (const char     *path,
                                       GError        **error);

/* A format's reader from memory (the *_read_bytes of rpe-npz.h, rpe-pt.h, ...). */
typedef RpeTensorSet *(*RpeTensorSetReader) (const guint8  *data,
                                             gsize          length,
                                             const char    *name_for_errors,
                                             GError       **error);

/* `read` on `data`, under one memory-budget scope (rpe-alloc.h) for the whole file. */
RpeTensorSet  *rpe_tensor_set_read_bytes_scoped (RpeTensorSetReader   read,
                                                 const guint8        *data,
                                                 gsize                length,
                                                 const char          *name_for_errors,
                                                 GError             **error);
/* `read` on the file at `path` (rpe_map_file; `path` names it in errors), under one
 * memory-budget scope for the whole file, the file's bytes included. */
RpeTensorSet  *rpe_tensor_set_read_file         (RpeTensorSetReader   read,
                                                 const char          *path,
                                                 GError             **error);

G_END_DECLS

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

const char *rpe_dtype_to_string (RpeDType dtype);   /* "F32", "F64", "F16", "BF16" */

/* Allocates a zero-filled tensor; checks the element count and bytes for
 * overflow and against the memory budget. */
RpeTensor *rpe_tensor_new (const char   *name,
                           gsize         ndim,
                           const gsize  *shape,
                           GError      **error);
void       rpe_tensor_free (RpeTensor *tensor);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RpeTensor, rpe_tensor_free)

/* "(2, 3, 4)" — newly allocated */
char      *rpe_tensor_shape_string (const RpeTensor *tensor);
gboolean   rpe_tensor_check_finite (const RpeTensor *tensor,
                                    GError         **error);

/* A set of named tensors, in file order. */
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

G_END_DECLS

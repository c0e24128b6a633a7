/* rpe-pickle.h: a RESTRICTED reader for the pickle of a PyTorch state_dict.
 *
 * This is not a Python unpickler: it is a small stack machine that understands
 * the opcodes torch.save emits for a (possibly nested) dict of tensors and
 * recognises a fixed allow-list of global names, whose effect it implements
 * itself.  Nothing from the file is ever executed.  Every other global
 * (os.system, builtins.eval, ...), INST/OBJ/NEWOBJ, the EXT opcodes and unknown
 * opcodes are refused with an error naming them.
 *
 * Allowed globals: collections.OrderedDict, torch._utils._rebuild_tensor_v2,
 * torch._utils._rebuild_parameter, torch.{Float,Double,Half,BFloat16}Storage
 * and, so that whole training checkpoints can be opened, the integer/bool
 * storage types torch.{Long,Int,Short,Char,Byte,Bool}Storage, whose tensors are
 * recognised but left out of the result. */
#pragma once

#include <glib.h>

#include "rpe-tensor.h"

G_BEGIN_DECLS

/* Limits (see the README's "File limits"). */
#define RPE_PICKLE_MAX_STACK    65536u               /* values on the stack (plus marks) */
#define RPE_PICKLE_MAX_MEMO     (1u << 20)           /* memo entries */
#define RPE_PICKLE_MAX_OBJECTS  (1u << 21)           /* values created in total; also entries visited
                                                      * when flattening (shared sub-dicts count each time) */
#define RPE_PICKLE_MAX_STRING   ((gsize) 1 << 20)    /* bytes in one string */
#define RPE_PICKLE_MAX_DEPTH    32u                  /* nesting of dicts/lists when flattening */
#define RPE_PICKLE_MAX_TENSORS  65536u               /* tensors in one state_dict */

/* One tensor of the state_dict, as the pickle describes it (sizes in elements). */
typedef struct
{
  char     *name;          /* keys joined with '.' */
  RpeDType  dtype;         /* from the storage type */
  char     *storage_key;   /* the file "<archive>/data/<storage_key>" */
  gsize     storage_numel; /* elements in the storage, as the pickle says */
  gsize     offset;        /* storage_offset */
  gsize     ndim;
  gsize     shape[RPE_TENSOR_MAX_DIMS];
  gsize     stride[RPE_TENSOR_MAX_DIMS];
} RpePickleTensor;

void rpe_pickle_tensor_free (RpePickleTensor *t);

/* Reads the pickle of a state_dict (a dict, possibly nested, whose leaves are
 * tensors; other leaves such as ints, strings or None are skipped, as are
 * tensors of integer or bool dtypes).  Returns a GPtrArray of RpePickleTensor*
 * in file order (with its free function set).  Checks that every tensor's
 * extent (offset + sum (shape[i] - 1) * stride[i]) lies inside its storage.
 * RPE_ERROR_UNSUPPORTED names a refused global or opcode; RPE_ERROR_FORMAT for
 * malformed data. */
GPtrArray *rpe_pickle_read_state_dict (const guint8 *data,
                                       gsize         length,
                                       const char   *name_for_errors,
                                       GError      **error);

G_END_DECLS

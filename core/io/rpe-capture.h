/* rpe-capture.h: captures, a trained model's own queries, keys and values on one input.
 *
 * A capture (tools/rpe_capture.py, docs/checkpoints.md, "Captures") is one .npz file (numpy's savez layout,
 * stored or deflated members) holding, for each attention layer l of one forward pass, what its
 * positional step received, for the first item of the batch:
 *     layers.<l>.queries   (N, H, D)   float16/32/64, before the positional encoding
 *     layers.<l>.keys      (N, H, D)   the queries' shape
 *     layers.<l>.values    (N, H, Dv)  optional
 *     tokens               (N,)        int32/int64, optional (|token| < 2^24)
 *     meta                 (bytes,)    uint8, UTF-8 JSON: {"format": "rpe-capture", "version": 1,
 *                                      "model_class": ..., "date": ...,
 *                                      "model_fingerprint": ..., ...}, optional
 * l is written in decimal without leading zeros, 0 <= l < RPE_CAPTURE_MAX_LAYERS; layers may have
 * gaps.  Any other member is refused.  The reader goes through the zip reader of rpe-npz.h (its
 * limits: member count, name length, member size, CRC, overlap) under one memory-budget scope; the
 * arrays' total is checked against the budget before any is read.  Everything is validated when
 * the file is read: queries and keys of one shape, values agreeing in (N, H), no empty dimension,
 * only finite values, tokens as long as every layer's N, well-formed metadata of a version this
 * reader knows.  A capture that fails any check is refused whole, with a message naming the member.
 */
#pragma once

#include <glib.h>

#include "rpe-tensor.h"

G_BEGIN_DECLS

#define RPE_CAPTURE_FORMAT "rpe-capture"
#define RPE_CAPTURE_VERSION 1
#define RPE_CAPTURE_MAX_LAYERS 10000u    /* layer indices 0 .. 9999 */
#define RPE_CAPTURE_MAX_META (1u << 20)  /* bytes of metadata JSON */
#define RPE_CAPTURE_MAX_TOKEN 16777216.0 /* 2^24: tokens are held as float32 */

typedef enum
{
  RPE_CAPTURE_QUERIES,
  RPE_CAPTURE_KEYS,
  RPE_CAPTURE_VALUES,
} RpeCaptureArray;

typedef struct _RpeCapture RpeCapture;

/* Reads and validates a capture file. */
RpeCapture *rpe_capture_read (const char *path, GError **error);
/* The same from memory; `name_for_errors` names it in messages. */
RpeCapture *rpe_capture_read_bytes (const guint8 *data, gsize length, const char *name_for_errors, GError **error);
/* A path, or "demo:NAME" for the capture shipped with a trained demo (when no file of that name
 * exists; the lookup needs the executable to link the resources, as rpe-demos.h). */
RpeCapture *rpe_capture_open (const char *path_or_demo, GError **error);
void        rpe_capture_free (RpeCapture *capture);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RpeCapture, rpe_capture_free)

/* TRUE when `spec` names a capture rather than a .npy array or a content keyword: a path ending
 * in ".npz" (any case) or "demo:NAME".  Nothing is read. */
gboolean rpe_capture_is_spec (const char *spec);

/* The file as given to read/open. */
const char *rpe_capture_name (const RpeCapture *capture);
/* Layers present, in increasing order: rpe_capture_layer (capture, i) for i < n_layers. */
gsize    rpe_capture_n_layers (const RpeCapture *capture);
guint    rpe_capture_layer (const RpeCapture *capture, gsize i);
gboolean rpe_capture_has_layer (const RpeCapture *capture, guint layer);
/* "0, 1, 2" (newly allocated) */
char *rpe_capture_layer_list (const RpeCapture *capture);
/* Layer `layer`'s array (NULL if the layer or, for values, the array is absent).  Queries and
 * keys are (N, H, D), values (N, H, Dv). */
const RpeTensor *rpe_capture_get (const RpeCapture *capture, guint layer, RpeCaptureArray what);
/* (N,) token ids held as float32 (exact integers), or NULL. */
const RpeTensor *rpe_capture_tokens (const RpeCapture *capture);
/* The metadata JSON as stored (NULL without metadata), and two of its fields (NULL when absent). */
const char *rpe_capture_meta_json (const RpeCapture *capture);
const char *rpe_capture_model_class (const RpeCapture *capture);
const char *rpe_capture_date (const RpeCapture *capture);

/* ---- A capture layer as the content of a module (shared by `rpe` and the window) ----
 *
 * rpe_capture_load_content copies layer `layer` of `capture` into `out` as the query/key (and,
 * with want_values, value) content for a module of `n_heads` heads of `dim` features.  It refuses,
 * with RPE_ERROR_INVALID_ARGUMENT and both shapes named, a layer that is absent (listing the ones
 * present), queries of another (H, D) than the module's (a capture from another model), N above
 * max_length (0: no limit), and missing values when they are asked for; RPE_ERROR_NO_MEMORY when
 * the copies exceed the memory budget.  On failure `out` is left zeroed and nothing is allocated. */
typedef struct
{
  guint  layer;
  gsize  n;       /* N */
  gsize  n_heads; /* H */
  gsize  dim;     /* D */
  gsize  dv;      /* Dv (0 without values) */
  float *q;       /* (N, H, D), rpe_alloc'd */
  float *k;       /* (N, H, D) */
  float *v;       /* (N, H, Dv) or NULL */
  float *tokens;  /* (N,) or NULL (the capture has none) */
} RpeCaptureContent;

gboolean rpe_capture_load_content (const RpeCapture  *capture,
                                   guint              layer,
                                   gsize              n_heads,
                                   gsize              dim,
                                   gsize              max_length,
                                   gboolean           want_values,
                                   RpeCaptureContent *out,
                                   GError           **error);
void     rpe_capture_content_clear (RpeCaptureContent *content);

/* ---- The model a capture was made on ----
 *
 * rpe_capture.py records in the metadata a fingerprint of the model it ran:
 *     "model_fingerprint": {"hash": "sha256-float32le",
 *                           "tensors": {NAME: {"dtype": "float32", "shape": [...], "sha256": HEX}, ...}}
 * one entry per tensor of the model's state_dict (NAME without a leading "module."), HEX the
 * SHA-256 of the tensor's values converted to float32, little-endian, in C order: what a reader
 * of the checkpoint file, which holds every tensor as float32 (rpe-tensor.h), can compute again.
 * A malformed fingerprint makes the capture refused when it is read.
 *
 * An RpeModelPrint is the same fingerprint of every tensor of a checkpoint (a shared, immutable
 * object, computed once per opened file).  rpe_capture_check_model compares the capture's
 * fingerprint with it: the checkpoint's names may carry a prefix ("model." of a checkpoint saved
 * as {'model': state_dict}, "module." of DataParallel) and more tensors (an optimizer's state):
 * the prefix under which most of the capture's tensors are found is used, and every tensor of
 * the capture's model must be there with its shape and hash.  A mismatch is
 * RPE_ERROR_INVALID_ARGUMENT naming the capture, the checkpoint and the tensors that differ or
 * are missing.  A capture without a fingerprint is accepted; `note` (optional) then receives a
 * one-line message saying that its model cannot be checked (NULL otherwise).  The prefix has at
 * most 8 components, so that finding it costs a few lookups per name whatever the names; the
 * answer for one model is kept in the capture, so checking it again (the window does on every
 * change) costs nothing. */
typedef struct _RpeModelPrint RpeModelPrint;

/* Hashes every tensor of `set`; `name` is the checkpoint as the messages name it. */
RpeModelPrint *rpe_model_print_new (const RpeTensorSet *set, const char *name);
RpeModelPrint *rpe_model_print_ref (RpeModelPrint *print);
void           rpe_model_print_unref (RpeModelPrint *print); /* NULL-safe */
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RpeModelPrint, rpe_model_print_unref)
const char *rpe_model_print_name (const RpeModelPrint *print);
/* How many fingerprints this process has made (for tests and diagnostics: hashing reads every
 * value of a checkpoint, so a command makes at most one). */
guint rpe_model_print_n_made (void);

/* Whether the capture records the model's fingerprint, and of how many tensors. */
gsize    rpe_capture_n_model_tensors (const RpeCapture *capture);
gboolean rpe_capture_check_model (const RpeCapture *capture, const RpeModelPrint *model, char **note, GError **error);

G_END_DECLS

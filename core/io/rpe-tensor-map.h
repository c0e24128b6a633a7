/* rpe-tensor-map.h: an explicit map from parameter roles to tensor names, for
 * checkpoints whose names discovery cannot read (`rpe --map ROLE=TENSOR`, the
 * window's tensor browser).  Shared by every family: SPE (sine, conv, gate),
 * LRPE (v, theta, permutation) and FastRPB (w). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  RPE_ROLE_SINE_FREQS,        /* "freqs"        (H, D, K)                          */
  RPE_ROLE_SINE_OFFSETS,      /* "offsets"      (H, D, K)                          */
  RPE_ROLE_SINE_GAINS,        /* "gains"        (H, D, K)                          */
  RPE_ROLE_CONV_Q,            /* "conv_q"       the file's conv_q.weight (H*D, 1, L[, L2]);
                                 the reference uses it as the KEY filter wk        */
  RPE_ROLE_CONV_K,            /* "conv_k"       the file's conv_k.weight: the QUERY filter wq */
  RPE_ROLE_GATE,              /* "gate"         (H, D), g = sigmoid(gate) (Flax files: 1 - sigmoid) */
  RPE_ROLE_LRPE_V,            /* "lrpe.v"       Householder vector                 */
  RPE_ROLE_LRPE_THETA,        /* "lrpe.theta"   learned angles                     */
  RPE_ROLE_LRPE_PERMUTATION,  /* "lrpe.permutation"                                */
  RPE_ROLE_FASTRPB_W,         /* "fastrpb.w"    Toeplitz bias weights              */
  RPE_N_ROLES
} RpeRole;

/* "freqs", "conv_k", "lrpe.v", ... */
const char *rpe_role_to_string (RpeRole role);
/* Accepts the names above and the aliases "sine.freqs", "sine.offsets",
 * "sine.gains", "conv.q", "conv.k", "v", "theta", "permutation", "w"
 * (case-insensitive).  FALSE if unknown. */
gboolean    rpe_role_from_string (const char *text,
                                  RpeRole    *role);
/* One line per role, for --help and error messages ("freqs, offsets, ..."). */
char       *rpe_role_list (void);

typedef struct _RpeTensorMap RpeTensorMap;

RpeTensorMap *rpe_tensor_map_new   (void);
RpeTensorMap *rpe_tensor_map_copy  (const RpeTensorMap *map);   /* NULL-safe */
void          rpe_tensor_map_free  (RpeTensorMap *map);         /* NULL-safe */
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RpeTensorMap, rpe_tensor_map_free)

/* Assigns `name` to `role` (replacing an earlier assignment of the role and
 * removing the tensor from any other role).  name NULL clears the role. */
void          rpe_tensor_map_set   (RpeTensorMap *map,
                                    RpeRole       role,
                                    const char   *name);
/* Parses "ROLE=TENSOR" (the tensor name may itself hold '='); RPE_ERROR_INVALID_ARGUMENT
 * naming the known roles on a bad role, an empty name, or a role given twice. */
gboolean      rpe_tensor_map_parse (RpeTensorMap *map,
                                    const char   *assignment,
                                    GError      **error);
const char   *rpe_tensor_map_get   (const RpeTensorMap *map,   /* NULL-safe */
                                    RpeRole             role);
/* The role a tensor is assigned to, or FALSE. */
gboolean      rpe_tensor_map_role_of (const RpeTensorMap *map,
                                      const char         *name,
                                      RpeRole            *role);
gboolean      rpe_tensor_map_is_empty (const RpeTensorMap *map); /* NULL-safe */
/* TRUE if any of roles [first, last] is assigned. */
gboolean      rpe_tensor_map_has_any (const RpeTensorMap *map,
                                      RpeRole             first,
                                      RpeRole             last);
/* "freqs=a.b, gate=c" (for messages); newly allocated. */
char         *rpe_tensor_map_to_string (const RpeTensorMap *map);

G_END_DECLS

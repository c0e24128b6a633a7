/* rpe-checkpoint.h: reading checkpoints and mapping tensor names to SPE parameters
 * (docs/math.md, sections 3 and 10). */
#pragma once

#include <gio/gio.h>

#include "rpe-spe.h"
#include "rpe-tensor.h"
#include "rpe-tensor-map.h"

G_BEGIN_DECLS

/* The largest magnitude an effective SPE parameter may have (after the as-coded
 * transforms): with K, D <= 65536 and L <= 2^24 the templates, codes and their
 * products then stay finite in float32.  Larger finite values are refused on
 * load (see the README's limits). */
#define RPE_CHECKPOINT_MAX_PARAM 1e12

typedef struct
{
  char         *prefix;      /* the module's name, as a selection's prefix takes it */
  RpeSpeMethod  method;
  gsize         n_heads;
  gsize         n_features;
  gsize         size;        /* K (sine) or L (conv; L1 for 2-D) */
  gsize         size2;       /* 2-D conv: L2; 0 otherwise */
  GArray       *layers;      /* int: the layers a selection picks: the code's layers when unshared,
                                else the layers of its per-layer gates (may be empty) */
  char         *convention;  /* "pytorch", "pytorch-unshared", "flax" or "flax-unshared" */
  char         *code_name;   /* its first code tensor, e.g. "model.spe.freqs" */
  GPtrArray    *gates;       /* char*: every gate paired with it, in layer order */
  GArray       *gate_layers; /* int, parallel to gates: the gate's layer, -1 for a shared filter */
  char         *pairing_note;/* NULL, or why loading it needs a choice (ambiguous gates) */
} RpeSpeModuleInfo;

void rpe_spe_module_info_free (RpeSpeModuleInfo *info);

/* Reads a checkpoint; the format is recognised from the content: .safetensors,
 * .npy, .npz, PyTorch .pt zip archives (read with a restricted unpickler
 * that never executes anything, see rpe-pickle.h) and Flax msgpack. */
RpeTensorSet *rpe_checkpoint_read       (const char  *path,
                                         GError     **error);
RpeTensorSet *rpe_checkpoint_read_bytes (GBytes      *bytes,
                                         const char  *name_for_errors,
                                         GError     **error);

/* The SPE modules recognised in a tensor set: a GPtrArray of RpeSpeModuleInfo*
 * (with its free function set), in a stable order (first tensor in the file).
 * Linear time in the number of names.  Empty if discovery would exceed the
 * memory budget (rpe_checkpoint_discover says why). */
GPtrArray    *rpe_checkpoint_find_modules (const RpeTensorSet *set);

/* The same, with an error (RPE_ERROR_NO_MEMORY) when the discovery's own
 * structures would not fit in the memory budget; `unpaired` (optional) receives
 * the names (char*) of the tensors named like a gate that no module claims. */
GPtrArray    *rpe_checkpoint_discover (const RpeTensorSet  *set,
                                       GPtrArray          **unpaired,
                                       GError             **error);

typedef struct
{
  const char         *prefix;    /* NULL: the first module (of `method`, if set) */
  int                 layer;     /* -1: the first layer / gate */
  int                 method;    /* -1: any, else an RpeSpeMethod */
  gboolean            no_gate;   /* load no gate, even when the file has one */
  const RpeTensorMap *map;       /* NULL, or explicit roles that override discovery */
} RpeSpeSelection;

#define RPE_SPE_SELECTION_INIT { NULL, -1, -1, FALSE, NULL }

/* Fills `params` (initialised by the call) with the effective parameters of
 * the selected module and gate.  Applies the as-coded transforms and checks
 * every value is finite.  `note` (optional) receives NULL or a message for the
 * user about a choice made for them (which of several gates was used, gates
 * of the file that this module does not use); the caller prints it.
 *
 * The prefix selects a module by the name rpe_checkpoint_find_modules gives
 * it, its path (pattern), its owner, or any of these for one layer (the
 * layer's own path, "layers.1.attn" for the pattern "layers.*.attn", which
 * selects that layer), each with or without a "module."/"model." wrapper;
 * failing those, by a path above exactly one module ("layers" for
 * "layers.*.attn.spe", "layers.1" for its layer 1). */
gboolean      rpe_checkpoint_load_spe_full (const RpeTensorSet    *set,
                                            const RpeSpeSelection *selection,
                                            RpeSpeParams          *params,
                                            char                 **note,
                                            GError               **error);

/* The same, with what the selection found as RpeFinding*s (rpe-findings.h):
 * the choices made for the user (which module of several, which layer, gates
 * no module uses), each with the candidates a front end offers in its own
 * terms.  `findings` (optional) receives NULL or a non-empty array.  Errors
 * carry a finding too where the remedy is a choice (rpe_error_get_finding). */
gboolean      rpe_checkpoint_load_spe_findings (const RpeTensorSet    *set,
                                                const RpeSpeSelection *selection,
                                                RpeSpeParams          *params,
                                                GPtrArray            **findings,
                                                GError               **error);

/* The findings as one note: each finding's message (with the front end's
 * remedy) and a full stop, one per line.  NULL for none. */
char         *rpe_findings_to_note (const GPtrArray *findings);

/* Shorthand: prefix (NULL: the first module found), layer (-1: the first). */
gboolean      rpe_checkpoint_load_spe (const RpeTensorSet  *set,
                                       const char          *prefix,
                                       int                  layer,
                                       RpeSpeParams        *params,
                                       GError             **error);

/* Whether the set's names are Flax's (a '/' in a name, a Flax auto-name such
 * as "SineSPE_0", a conv "kernel" leaf, or a set read from msgpack). */
gboolean      rpe_checkpoint_is_flax (const RpeTensorSet *set);

G_END_DECLS

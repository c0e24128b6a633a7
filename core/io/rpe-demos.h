/* rpe-demos.h: the demo checkpoints embedded in the programs (GResource).
 *
 * "demo" is the default, synthetic demo (tools/rpe-make-demo.c: sine and conv SPE, LRPE, FastRPB
 * parameters drawn to look trained).  "demo:NAME" is one of the trained demos of
 * tools/train-demos.py (resources/demos/NAME.safetensors): small causal linear transformers trained
 * on a task where relative position matters, one per positional encoding, with their metadata
 * (task, N_train, steps, accuracies).  The lookups need the executable to link the resources that
 * hold them (the window's and `rpe`'s GResource bundles both do). */
#pragma once

#include <gio/gio.h>

#include "rpe-tensor.h"

G_BEGIN_DECLS

#define RPE_DEMOS_RESOURCE_DIR   "/io/github/rpestudio/RpeStudio/demos/"
#define RPE_DEMO_DEFAULT_RESOURCE "/io/github/rpestudio/RpeStudio/demo/demo.safetensors"

/* TRUE for "demo" and "demo:NAME" (whether or not NAME exists). */
gboolean      rpe_demos_is_spec    (const char  *spec);
/* The names of the trained demos, sorted (NULL-terminated; g_strfreev). */
char        **rpe_demos_list       (void);
/* The checkpoint bytes of "demo" or "demo:NAME"; an unknown name is an error that lists the names. */
GBytes       *rpe_demos_lookup     (const char  *spec,
                                    GError     **error);
/* The safetensors "__metadata__" of a demo (key -> value strings; g_hash_table_unref), or NULL with
 * an error. */
GHashTable   *rpe_demos_metadata   (const char  *spec,
                                    GError     **error);
/* The capture shipped with trained demo "demo:NAME" (resources/demos/NAME.npz: one task input at
 * 4 N_train through the trained model, rpe-capture.h); an unknown name is an error that lists the
 * demos that have one. */
GBytes *rpe_demos_lookup_capture (const char *spec, GError **error);
/* Reads the demo's tensors. */
RpeTensorSet *rpe_demos_read       (const char  *spec,
                                    GError     **error);
/* Whether path names a built-in demo: "demo" or "demo:NAME" with no file of that name. */
gboolean rpe_demos_is_builtin (const char *path);
/* A checkpoint file, or a built-in demo (rpe_demos_is_builtin). */
RpeTensorSet *rpe_demos_read_or_file (const char *path, GError **error);
/* The (H, D) a trained demo's metadata records ("heads", "features"); FALSE when path is no
 * built-in demo or its metadata lacks them. */
gboolean rpe_demos_model_shape (const char *path, gsize *heads, gsize *dim);

G_END_DECLS

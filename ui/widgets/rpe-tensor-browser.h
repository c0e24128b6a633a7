/* rpe-tensor-browser.h: what a checkpoint holds (name, dtype, shape of every
 * tensor) and which SPE modules were recognised (each with its gates), with
 * module and layer pickers, and beside every tensor a role picker: assigning
 * tensors to roles (freqs, conv_k, gate, ...) builds the same map as the CLI's
 * --map ROLE=TENSOR.  "Use Module" emits "module-chosen" (prefix, layer; layer
 * -1 = the default) and closes; the receiver reads the map with
 * rpe_tensor_browser_get_map. */
#pragma once

#include <adwaita.h>

#include "rpe-compute.h"
#include "rpe-tensor-map.h"

G_BEGIN_DECLS

#define RPE_TYPE_TENSOR_BROWSER (rpe_tensor_browser_get_type ())
G_DECLARE_FINAL_TYPE (RpeTensorBrowser, rpe_tensor_browser, RPE, TENSOR_BROWSER, AdwWindow)

RpeTensorBrowser  *rpe_tensor_browser_new         (GtkWindow         *parent,
                                                   RpeCheckpointData *data);
RpeCheckpointData *rpe_tensor_browser_get_data    (RpeTensorBrowser  *self);
/* Number of rows in the tensor list (one per tensor). */
guint              rpe_tensor_browser_get_n_rows  (RpeTensorBrowser  *self);
/* Picks module i (index into data->modules) and layer (-1: first gate) and
 * emits "module-chosen" as the button does. */
void               rpe_tensor_browser_choose      (RpeTensorBrowser  *self,
                                                   guint              module,
                                                   int                layer);
/* The roles assigned so far (never NULL; empty when none). */
const RpeTensorMap *rpe_tensor_browser_get_map    (RpeTensorBrowser  *self);
/* Assigns tensor `name` to `role` (-1: no role) as the picker beside it does;
 * FALSE if the checkpoint has no such tensor. */
gboolean           rpe_tensor_browser_assign      (RpeTensorBrowser  *self,
                                                   const char        *name,
                                                   int                role);
/* The role shown beside row i ("" when none). */
const char        *rpe_tensor_browser_get_row_role (RpeTensorBrowser *self,
                                                    guint             row);

/* The heads H the person stated for the module (the Shape picker), 0: as the file reads;
 * set_heads picks it (FALSE if H does not divide the module's H*D channels). */
gsize              rpe_tensor_browser_get_heads   (RpeTensorBrowser  *self);
gboolean           rpe_tensor_browser_set_heads   (RpeTensorBrowser  *self,
                                                   gsize              heads);

G_END_DECLS

/* rpe-tensor-browser.h: what a checkpoint holds (name, dtype, shape of every
 * tensor) and which SPE modules were recognised, with module and layer
 * pickers.  "Use Module" emits "module-chosen" (prefix, layer; layer -1 = the
 * first gate) and closes. */
#pragma once

#include <adwaita.h>

#include "rpe-compute.h"

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

G_END_DECLS

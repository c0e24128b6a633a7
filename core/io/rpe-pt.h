/* rpe-pt.h: PyTorch .pt checkpoints (the zip format torch.save writes since 1.6).
 *
 * The archive holds "<archive>/data.pkl" (the pickle, read by the restricted
 * reader of rpe-pickle.h: nothing in the file is executed), "<archive>/data/<key>"
 * (raw storage bytes), "<archive>/byteorder" ("little" or "big"; absent means
 * little) and "<archive>/version".  Tensors are gathered into C order whatever
 * their strides and converted to float32.  The legacy (non-zip) torch.save
 * format is refused. */
#pragma once

#include <gio/gio.h>

#include "rpe-npz.h"
#include "rpe-pickle.h"
#include "rpe-tensor.h"

G_BEGIN_DECLS

/* Limits (see the README's "File limits"; the zip and pickle limits apply too). */
#define RPE_PT_MAX_PICKLE_BYTES ((gsize) 64 << 20)   /* size of data.pkl: 64 MiB */
#define RPE_PT_MAX_TENSORS      RPE_PICKLE_MAX_TENSORS

/* TRUE if the zip archive looks like a .pt (exactly one "<archive>/data.pkl"). */
gboolean      rpe_pt_is_archive (const RpeZip *zip);

RpeTensorSet *rpe_pt_read       (const char   *path,
                                 GError      **error);
RpeTensorSet *rpe_pt_read_bytes (const guint8 *data,
                                 gsize         length,
                                 const char   *name_for_errors,
                                 GError      **error);

G_END_DECLS

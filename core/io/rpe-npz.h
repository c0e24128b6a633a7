/* rpe-npz.h: NumPy .npz archives, and the small zip reader they share with
 * PyTorch .pt files (rpe-pt.h).
 *
 * The zip reader is written here (no libzip): end of central directory (and the
 * zip64 records), central directory, local headers.  Entries may be STORED or
 * DEFLATED; every offset and size is checked against the file, entries may not
 * overlap, and each entry's CRC-32 is verified when it is extracted. */
#pragma once

#include <gio/gio.h>

#include "rpe-tensor.h"

G_BEGIN_DECLS

/* Limits (see the README's "File limits"). */
/* members in one archive: a tensor each (RPE_TENSOR_SET_MAX_TENSORS) and the
 * few records of their own that PyTorch's archives hold (data.pkl, version,
 * byteorder, .data/serialization_id, .format_version, .storage_alignment, ...) */
#define RPE_ZIP_MAX_ENTRIES     (RPE_TENSOR_SET_MAX_TENSORS + 64u)
#define RPE_ZIP_MAX_NAME_LEN    4096u                  /* bytes in one member name */
#define RPE_ZIP_MAX_ENTRY_BYTES ((guint64) 16 << 30)   /* uncompressed size of one member: 16 GiB */
#define RPE_NPZ_MAX_TENSORS     RPE_TENSOR_SET_MAX_TENSORS    /* arrays in one .npz */

/* ---- zip archives ------------------------------------------------------ */

typedef struct _RpeZip RpeZip;

/* Parses the archive's directory.  `data` must outlive the RpeZip and the
 * GBytes that rpe_zip_extract returns for STORED entries. */
RpeZip     *rpe_zip_open        (const guint8  *data,
                                 gsize          length,
                                 const char    *name_for_errors,
                                 GError       **error);
void        rpe_zip_free        (RpeZip        *zip);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RpeZip, rpe_zip_free)

gsize       rpe_zip_n_entries   (const RpeZip  *zip);
/* Entries are in central-directory order. */
const char *rpe_zip_entry_name  (const RpeZip  *zip,
                                 gsize          index);
guint64     rpe_zip_entry_size  (const RpeZip  *zip,
                                 gsize          index);   /* uncompressed bytes */
/* Index of the entry called `name`, or -1. */
gssize      rpe_zip_find        (const RpeZip  *zip,
                                 const char    *name);
/* The entry's uncompressed bytes, CRC-checked.  STORED entries are not copied
 * (the GBytes points into the archive's data); DEFLATED ones are inflated into
 * a budget-checked buffer. */
GBytes     *rpe_zip_extract     (const RpeZip  *zip,
                                 gsize          index,
                                 GError       **error);

/* ---- .npz -------------------------------------------------------------- */

/* A zip of "<name>.npy" members (np.savez, np.savez_compressed).  Tensor names
 * are the member names without ".npy", in archive order. */
RpeTensorSet *rpe_npz_read       (const char   *path,
                                  GError      **error);
RpeTensorSet *rpe_npz_read_bytes (const guint8 *data,
                                  gsize         length,
                                  const char   *name_for_errors,
                                  GError      **error);

G_END_DECLS

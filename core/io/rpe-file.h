/* rpe-file.h: reading input files safely, guarding outputs, and escaping what a
 * file says before it reaches a terminal or the window.
 *
 * Inputs are read, never mapped: a file truncated while we read it is an error,
 * not a SIGBUS.  Anything that is not a regular file (FIFO, directory, device,
 * socket) is refused without blocking (open with O_NONBLOCK, then fstat).
 *
 * Outputs: rpe_output_check refuses a target that is one of the inputs read so
 * far (same device and inode, when input tracking is on) and a target the user
 * may not write (unless forced).  Writers call it before creating their
 * temporary file. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The whole of a regular file, read into a budget-checked buffer (charged to
 * the current budget scope, see rpe-alloc.h).  RPE_ERROR_IO naming the path if
 * it cannot be opened or read, is not a regular file or changes size while
 * being read; RPE_ERROR_NO_MEMORY naming both sizes if it exceeds the budget.
 * When input tracking is on, the file is remembered as an input. */
GBytes   *rpe_read_file (const char  *path,
                         GError     **error);

/* The SHA-256 (64 lower-case hex digits) of a regular file, bounded: the file
 * is opened without blocking and checked before a byte is hashed (a FIFO,
 * device, directory or socket is refused, as is a file larger than `max_bytes`),
 * then exactly its stat size is read; a file that reads more or less than it
 * says (a /proc file, one being written) is refused.  RPE_ERROR_IO naming the
 * path, or RPE_ERROR_UNSUPPORTED for a file over `max_bytes`. */
char     *rpe_file_sha256 (const char  *path,
                           guint64      max_bytes,
                           GError     **error);

/* Remember (dev, inode) of every file rpe_read_file reads, so that
 * rpe_output_check refuses to write over it (the CLI turns this on). */
void      rpe_file_track_inputs (gboolean track);
/* Remember one more input (for files read by other means). */
void      rpe_file_add_input (const char *path);

/* Allow replacing an existing output the user may not write (the CLI's --force). */
void      rpe_output_set_force (gboolean force);

/* TRUE if `path` may be written: not an input, not a directory, and if it
 * exists, writable by us (or forced).  Errors are RPE_ERROR_IO naming the path. */
gboolean  rpe_output_check (const char  *path,
                            GError     **error);

/* TRUE if `bytes` more fit on the disk that holds `path` (through a symbolic link, to the file it
 * names): every writer that knows its size checks it before it writes (the temporary file sits
 * beside the old one until it replaces it, so the old one's space does not count).  A disk whose
 * free space cannot be read passes (the write itself then reports a full disk).  The error
 * (RPE_ERROR_NO_SPACE: `rpe` exits 1, as for a full disk found by the write) names the path,
 * the bytes needed and the bytes free. */
gboolean rpe_output_space_check (const char *path, guint64 bytes, GError **error);

/* `text` (any bytes, NUL-terminated) made safe for a terminal or a label:
 * printable UTF-8 is kept, control characters (C0, DEL, C1: ESC, BEL, CR, ...)
 * become \xNN or \uNNNN, invalid UTF-8 bytes become \xNN, and a backslash
 * becomes \\.  Newly allocated. */
char     *rpe_escape_name (const char *text);
/* The same, for `length` bytes that may hold NUL (shown as \x00). */
char     *rpe_escape_bytes (const char *text,
                            gsize       length);

/* For whole messages that may quote escaped names: like rpe_escape_name, but a
 * backslash is kept as it is (rpe_set_error passes every message through it). */
char     *rpe_escape_message (const char *text);

G_END_DECLS

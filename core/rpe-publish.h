/* rpe-publish.h: how every writer puts a finished file in place, and the output set that makes a
 * command's files appear together or not at all.
 *
 * Every writer writes a temporary file beside its output, flushes it, and calls rpe_publish ()
 * to rename it over the output.  Outside a set that renames at once.  Between
 * rpe_publish_set_begin () and rpe_publish_set_commit () the renames wait: commit renames every
 * file of the set (in the order they were published), rpe_publish_set_abort () removes their
 * temporary files, so a command whose later output fails leaves its earlier outputs as they were.
 * One set per process (the command line tool's); the calls are thread-safe.
 */
#pragma once

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Renames `tmp` to `path` now, or at commit inside a set.  0, or the errno of the rename. */
int  rpe_publish (const char *tmp, const char *path);

/* The file an output path names: `path` itself, or, when it is a symbolic link, what the link
 * points to (followed up to 40 links; a relative target read against the link's folder), so that
 * an output written onto a link writes through it, as cp and most tools do, and the link stays.
 * malloc'ed; NULL only when out of memory. */
char *rpe_publish_resolve (const char *path);

/* Starts the output set (nothing if one is open). */
void rpe_publish_set_begin (void);
/* Renames every waiting file; 0, or the errno of the first rename that failed (its path in
 * *failed_path if not NULL, malloc'ed; the files after it are removed).  Ends the set. */
int  rpe_publish_set_commit (char **failed_path);
/* Removes every waiting temporary file; ends the set. */
void rpe_publish_set_abort (void);
/* For a file the command writes only to read it back (an intermediate in a temporary folder):
 * pause the set (renames happen at once) and resume it with what pause returned. */
bool rpe_publish_set_pause (void);
void rpe_publish_set_resume (bool was_active);
/* Whether a set is open. */
bool rpe_publish_set_active (void);

#ifdef __cplusplus
}
#endif

/* rpe-test-utils.h: shared helpers for the GLib tests. */
#pragma once

#include <glib.h>
#include <stddef.h>

#include "rpe-capture.h"

/* max |a - b| / max(max |b|, floor): a relative error against a reference. */
double rpe_test_max_rel_err (const float  *a,
                             const double *ref,
                             size_t        n,
                             double        floor);
/* max |a - b| */
double rpe_test_max_abs_err (const float  *a,
                             const double *ref,
                             size_t        n);
/* A temporary directory for the test, removed at exit (path owned by the helper). */
const char *rpe_test_tmpdir (void);
/* $(rpe_test_tmpdir)/name (caller frees). */
char *rpe_test_tmp_path (const char *name);

/* Runs the `rpe` tool ($RPE_CLI) with `args` (NULL-terminated, without the program) and waits.
 * Asserts that it could be spawned and that it exited (not killed by a signal); returns its exit
 * status. `out_out`/`err_out` (nullable) receive its stdout/stderr (caller frees). With
 * `g_test_verbose ()`, or when it fails and the caller keeps neither stream, the command and
 * its output go to stderr. */
int rpe_test_run_cli_argv (const char *const *args,
                           char             **out_out,
                           char             **err_out);
/* The same with a command line: shell-quoted words after the program, printf-style. */
int rpe_test_run_cli (char       **out_out,
                      char       **err_out,
                      const char  *format,
                      ...) G_GNUC_PRINTF (3, 4);
/* The same with the words as arguments, NULL-terminated. */
int rpe_test_run_cli_args (char       **out_out,
                           char       **err_out,
                           const char  *first,
                           ...) G_GNUC_NULL_TERMINATED;
/* `rpe export [VIEW] ARGS... -o OUT` (`view` NULL: the view is ARGS[0]); returns its exit
 * status (its stderr in the test log when it fails). */
int rpe_test_run_cli_export (const char        *view,
                             const char *const *args,
                             const char        *out);
/* The fraction of differing pixels of two PNGs (their sizes must agree); the largest channel
 * difference to *max_delta (nullable). */
double rpe_test_png_difference (const char *a_path,
                                const char *b_path,
                                int        *max_delta);

/* A word of a PDF page as pdftotext -bbox reads it: its box in points from the page's top left
 * and its text (UTF-8, as pdftotext writes it: &amp; &lt; &gt; escaped). */
typedef struct
{
  double x0, y0, x1, y1;
  char  *text;
} RpeTestWord;

/* The words of each page of a PDF: an array of GArrays of RpeTestWord, or NULL when
 * pdftotext (poppler-utils) is not installed. */
GPtrArray *rpe_test_pdf_words (const char *path);

/* ---- .npy and .npz bytes written here (independent of the readers under test) ---- */

/* An .npy (format 1.0): `descr` ('<f4', '<i8', '|u1', ...), `shape`, the raw payload. */
GByteArray *
rpe_test_npy_bytes (const char *descr, gsize ndim, const gsize *shape, const void *payload, gsize payload_len);
/* A zip of `n` members (names[i], data[i]); deflated (raw deflate, method 8) or stored. */
GByteArray *rpe_test_zip_bytes (const char *const *names, GByteArray *const *data, gsize n, gboolean deflate);
/* A capture (docs/checkpoints.md, "Captures") at `path`: layers 0 .. n_layers - 1 with (N, H, D) float32 queries
 * and keys and, when dv > 0, (N, H, Dv) values, all seeded N(0, 1)-like values from `seed`; the
 * arrays are also returned (each n_layers * N * H * D floats, layer-major; nullable). */
/* The same with `tokens` (N,) int64 (NULL: none). */
void rpe_test_write_capture_tokens (const char   *path,
                                    gsize         n_layers,
                                    gsize         n,
                                    gsize         h,
                                    gsize         d,
                                    gsize         dv,
                                    guint32       seed,
                                    const gint64 *tokens,
                                    float       **q_out,
                                    float       **k_out,
                                    float       **v_out);
void rpe_test_write_capture (const char *path,
                             gsize       n_layers,
                             gsize       n,
                             gsize       h,
                             gsize       d,
                             gsize       dv,
                             guint32     seed,
                             float     **q_out,
                             float     **k_out,
                             float     **v_out);

/* Whether this system applies an address-space limit (ulimit -v) that a process sets with
 * setrlimit: a child lowers its limit and reads it back.  qemu-user accepts the call and applies
 * nothing (the limit would bind the emulator itself), so the read-back differs there. */
gboolean rpe_test_address_limit_applies (void);

/* The trained demo model's attention map (N, N) of head h, layer `layer` on a capture of it, as
 * tools/train-demos.py computes it, naively in double from the stored tensors (name: "ape",
 * "lrpe" or "fastrpb"); kappa (N): each row's normalisation condition sum |s| / |sum s|. */
void rpe_test_demo_model_map (const RpeTensorSet *set,
                              const RpeCapture   *capture,
                              const char         *name,
                              guint               layer,
                              gsize               h,
                              double             *ref,
                              double             *kappa);

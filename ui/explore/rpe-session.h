/* rpe-session.h: a saved session (.rpe-session, JSON through json-glib).
 *
 * A session is everything needed to redraw what the window shows: the view,
 * every property of RpeExplorerState (written generically, so a property added
 * later is saved without code here), every array edit (both SPE modules in
 * full, the FastRPB weights, the loaded content), the attention viewport, the
 * export settings, and the checkpoint the modules came from (path, SHA-256 and
 * how it was read: prefix, layer, --map roles).  Paths are written absolute;
 * a relative path in a session is read against the session file's folder.
 *
 *   { "format": "rpe-session", "version": 1,
 *     "view": "attention", "export-view": "attention", "template-cell": -1,
 *     "state": { "method": 0, "length": 96, ..., "colormap": "viridis" },
 *     "modules": { "sine": { "source": ..., "heads": H, "features": D, "sines": K,
 *                            "freqs": [...], "offsets": [...], "gains": [...], "gate": [...] | null },
 *                  "conv": { ..., "kernel": L, "wq": [...], "wk": [...], "gate": ... } },
 *     "fastrpb-weights": [ 63 numbers ],
 *     "content": { "path": ..., "sha256": ..., "shape": [N, D] | [N, H, D], "data": [...] } | null,
 *     "checkpoint": { "path": ..., "sha256": ..., "prefix": ..., "layer": -1, "map": [...] } | null,
 *     "viewport": [m0, m1, n0, n1] | null,
 *     "export": { "length": 0, "width": 0, "height": 0, "dpi": 0, "title": null,
 *                 "options": [ "--preset", "column", ... ] } }
 *
 * The text is strict JSON (RFC 8259); line (//) and block (/ *...* /) comments are allowed and
 * ignored.  Reading is bounded (file size, nesting depth, every string's
 * length, the memory json-glib's tree would take checked against the memory
 * budget before parsing, array lengths checked against the module shapes,
 * non-finite numbers refused, referenced files hashed only when they are
 * regular files within the budget) and all-or-nothing: the
 * session is read into a fresh state; rpe_session_apply () then copies it
 * onto the live one, which nothing touched before.
 */
#pragma once

#include <gio/gio.h>

#include "rpe-explorer-state.h"
#include "rpe-tensor.h"

G_BEGIN_DECLS

#define RPE_SESSION_FORMAT    "rpe-session"
#define RPE_SESSION_VERSION   1
#define RPE_SESSION_SUFFIX    ".rpe-session"
#define RPE_SESSION_MIME_TYPE "application/x-rpe-session"
#define RPE_SESSION_MAX_BYTES (256u << 20)   /* a session file larger than this is refused */
#define RPE_SESSION_MAX_STRING 16384u       /* bytes in any one string of a session (paths, names) */
#define RPE_SESSION_MAX_TITLE  1000u        /* characters in the export title */

/* Where the modules came from: a checkpoint file, "demo" or "demo:NAME". */
typedef struct
{
  char   *path;        /* absolute path, or a demo spec; NULL: none (random parameters) */
  char   *sha256;      /* hex; NULL for the embedded demos */
  char   *prefix;      /* module prefix; NULL: the first module of the kind */
  int     layer;       /* -1: the first */
  char  **map;         /* ROLE=TENSOR strings (NULL-terminated) or NULL */
} RpeSessionCheckpoint;

/* The Outputs view's own settings (what `rpe export outputs` options say). */
typedef struct
{
  gboolean  have;            /* FALSE: none saved (the view keeps its own) */
  guint     values;          /* RpeValuesKind: impulse, sweep, noise, array (.npy) */
  guint     channels;        /* Dv of generated values, 1 .. RPE_SESSION_OUTPUTS_MAX_CHANNELS */
  char     *positions;       /* impulse positions "P1,P2,..." (NULL or "": evenly spread) */
  guint     compare;         /* RpeOutputsCompare: softmax, kernel */
  guint     channel;         /* the channel of the line plot */
  gboolean  several_draws;   /* 16 draws (else 1) */
  char     *values_path;     /* values == array: the V .npy (path + SHA-256, like the content) */
  char     *values_sha256;
  gboolean  captured; /* the values of the captured layer the content is ("Captured values
                              * (layer l)"); the kind above is then the one chosen before */
} RpeSessionOutputs;

#define RPE_SESSION_OUTPUTS_MAX_CHANNELS 64
#define RPE_SESSION_OUTPUTS_DRAWS        16

typedef struct
{
  RpeExplorerState     *state;           /* owned; every property and array */
  char                 *view;            /* window view: templates attention curves teaching outputs */
  int                   template_cell;   /* templates view: the opened cell (feature), -1: the grid */
  gboolean              have_viewport;
  double                viewport[4];     /* attention view: m0, m1, n0, n1 */
  RpeSessionCheckpoint  checkpoint;
  char                 *content_path;    /* the .npy the content was loaded from (NULL: none) */
  char                 *content_sha256;
  guint                 export_length;   /* > 0: the figure's N when the view computed it at a cap
                                            below the state's N (Templates 512, SPE vs RPE 256) */
  double                export_width;    /* 0: the default */
  double                export_height;
  double                export_dpi;
  char                 *export_title;    /* NULL: the default */
  char                **export_options;  /* more `rpe export` options of the figure (NULL-terminated or
                                            NULL): --colormap X, --preset X, --reduce X,
                                            --attention-transform, --per-cell-scale only */
  RpeSessionOutputs     outputs;         /* the Outputs view's settings ("outputs") */
  char                 *file;            /* the file it was read from or written to (NULL: none yet) */
  GPtrArray            *warnings;        /* char *: read-time notes (checkpoint changed or moved) */
  RpeModelPrint        *model_print;     /* read: the fingerprint of the checkpoint's tensors (NULL: no
                                            checkpoint, or it could not be read); a capture is checked
                                            against it when the session is read, and so are later ones */
} RpeSession;

/* A session of a copy of state (deep copy: arrays included). */
RpeSession *rpe_session_new_from_state (RpeExplorerState *state);
void        rpe_session_free           (RpeSession       *session);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RpeSession, rpe_session_free)

void        rpe_session_set_checkpoint (RpeSession        *session,
                                        const char        *path,
                                        const char        *prefix,
                                        int                layer,
                                        const char *const *map);
void        rpe_session_set_content_path (RpeSession      *session,
                                          const char      *path);

/* Copies every property and array of src onto dest (one "changed" per
 * setter; nothing else of dest is kept but the modules absent from src). */
void        rpe_explorer_state_copy_into (RpeExplorerState *src,
                                          RpeExplorerState *dest);
/* TRUE if every property and array of a and b are equal; else FALSE and *what
 * (optional) names the first difference. */
gboolean    rpe_explorer_state_equal     (RpeExplorerState *a,
                                          RpeExplorerState *b,
                                          char            **what);

/* JSON text of the session (the SHA-256 of the checkpoint and content files
 * computed now when they are readable files). */
char       *rpe_session_to_data  (RpeSession   *session,
                                  gsize        *length,
                                  GError      **error);
/* Writes atomically; sets session->file. */
gboolean    rpe_session_save     (RpeSession   *session,
                                  const char   *path,
                                  GError      **error);
/* Parses and validates a session; `file` (may be NULL) is where it was read,
 * for the checkpoint lookup beside it.  Never touches any live state. */
RpeSession *rpe_session_load_data (const char  *data,
                                   gsize        length,
                                   const char  *file,
                                   GError     **error);
RpeSession *rpe_session_load     (const char   *path,
                                  GError      **error);
/* The same on a worker thread (the file and the hashes of the files it names
 * are read there: a large checkpoint does not stall the window). */
void        rpe_session_load_async  (const char          *path,
                                     GCancellable        *cancellable,
                                     GAsyncReadyCallback  callback,
                                     gpointer             user_data);
RpeSession *rpe_session_load_finish (GAsyncResult        *result,
                                     GError             **error);
/* Saves on a worker; takes ownership of session (only the worker touches it). */
void        rpe_session_save_async  (RpeSession          *session,
                                     const char          *path,
                                     GCancellable        *cancellable,
                                     GAsyncReadyCallback  callback,
                                     gpointer             user_data);
/* The saved session's canonical path, or NULL and error. */
char       *rpe_session_save_finish (GAsyncResult        *result,
                                     GError             **error);
/* Copies the session's state onto state (cannot fail: the session was checked). */
void        rpe_session_apply    (RpeSession       *session,
                                  RpeExplorerState *state);

/* The hex SHA-256 of a file, bounded (rpe_file_sha256 with the memory budget
 * as the largest size): NULL and error if it is not a regular file, is larger
 * than the budget or cannot be read. */
char       *rpe_session_file_sha256 (const char  *path,
                                     GError     **error);

/* ---- the session as `rpe export` options (shared by the CLI and the window) ---- */

/* The `rpe export` VIEW of the session (templates, template, attention,
 * spe-vs-rpe); NULL and an error naming why when the figure has none (the
 * Curves and Outputs views, attention methods other than SPE and exact,
 * loaded .npy content in the attention views). */
const char *rpe_session_export_view (RpeSession  *session,
                                     GError     **error);
/* argv (NULL-terminated, without "rpe export" and -o) that draws the session's
 * figure: VIEW first, then options.  with_source: include --checkpoint (and
 * --prefix, --layer, --map) so that the command stands alone; without it the
 * caller supplies the modules (`rpe export --session`). */
GStrv       rpe_session_export_argv (RpeSession  *session,
                                     gboolean     with_source,
                                     GError     **error);
/* TRUE when the modules of the session equal the ones its checkpoint gives
 * (the options can then name the checkpoint instead of carrying arrays);
 * FALSE with *why otherwise.  set: the checkpoint's tensors if already read
 * (NULL: the file is read). */
gboolean    rpe_session_modules_from_checkpoint (RpeSession         *session,
                                                 const RpeTensorSet *set,
                                                 char              **why);
/* TRUE if `name` is an export option a session may hold; *takes_value if it has a value. */
gboolean    rpe_session_export_option_ok (const char *name,
                                          gboolean   *takes_value);
/* The `rpe export` names of the window's choices: option is one of
 * "--attention-method" (RpeExplorerMethod), "--lrpe-p", "--lrpe-lambda",
 * "--lrpe-theta" (A, B, C) and "--feature-map" (RpeFeatureMap).  NULL / FALSE
 * for an unknown option or value. */
const char *rpe_session_choice_name  (const char *option,
                                      guint       value);
gboolean    rpe_session_choice_value (const char *option,
                                      const char *name,
                                      guint      *value);
/* The attention viewport [m0, m1, n0, n1] (window coordinates, fractional)
 * as the cell ranges the view computes: rows [*m0, *m1), columns [*n0, *n1),
 * clamped to 0 .. n.  FALSE when it covers nothing. */
gboolean    rpe_session_viewport_cells (const double  viewport[4],
                                        gsize         n,
                                        gsize        *m0,
                                        gsize        *m1,
                                        gsize        *n0,
                                        gsize        *n1);
/* A shell-quoted command line `rpe export ... -o OUT` of argv. */
char       *rpe_session_command_line (const char *const *argv,
                                      const char        *out);

G_END_DECLS

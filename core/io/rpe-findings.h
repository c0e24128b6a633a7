/* rpe-findings.h: what a reader found that a person has to act on, without
 * the words of any front end.
 *
 * A checkpoint may hold several modules, a module several layers, a filter
 * several gates; an output may exist already.  The readers say what they
 * found and what they chose (the text) and what the choice is about (the
 * kind, with the candidates to choose among); they never name an option of
 * the `rpe` tool or a control of the window.  The front end that shows the
 * message phrases the remedy in its own terms: the CLI names its options, the
 * window its pickers.
 *
 * Errors: every RPE_ERROR GError can carry a finding (rpe_error_get_finding),
 * set by rpe_set_error_finding.  Notes (choices made for the user): the
 * RpeFinding array that a reader returns.  The message of either is the text
 * followed by the remedy that the front end registered with
 * rpe_findings_set_remedy_func (once, at start-up); without one (library
 * use, tests) it is the text alone. */
#pragma once

#include <glib.h>

#include "rpe-status.h"

G_BEGIN_DECLS

typedef enum
{
  RPE_FINDING_NONE = 0,
  RPE_FINDING_MODULE,        /* which module of several (candidates: their names) */
  RPE_FINDING_MODULE_METHOD, /* a name that fits modules of both methods (candidates: their names) */
  RPE_FINDING_LAYER,         /* which layer of a per-layer module (candidates: the layers) */
  RPE_FINDING_GATE,          /* which gate tensor, if any (candidates: the gate tensors) */
  RPE_FINDING_UNUSED_GATES,  /* gates no module uses (candidates: the gate tensors) */
  RPE_FINDING_ROLES,         /* no module by its names: roles must be assigned to tensors */
  RPE_FINDING_TENSOR,        /* a role names a tensor the file does not have (candidate: the name) */
  RPE_FINDING_OVERWRITE,     /* an output the user may not write exists (candidate: the path) */
} RpeFindingKind;

typedef struct
{
  RpeFindingKind  kind;
  char           *text;        /* what was found or chosen, without a remedy or final stop */
  GPtrArray      *candidates;  /* char *: what could be chosen (never NULL, may be empty) */
} RpeFinding;

RpeFinding *rpe_finding_new  (RpeFindingKind      kind,
                              const char *const  *candidates,
                              const char         *format,
                              ...) G_GNUC_PRINTF (3, 4);
void        rpe_finding_free (RpeFinding *finding);
/* The candidates, NULL-terminated (never NULL). */
const char *const *rpe_finding_candidates (const RpeFinding *finding);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RpeFinding, rpe_finding_free)

/* The remedy of a finding in a front end's terms (the option to give,
 * the picker to use), or NULL for none. */
typedef char *(*RpeRemedyFunc) (RpeFindingKind     kind,
                                const char *const *candidates);

/* Registers the front end's phrasing (NULL: none); call once before any file
 * is read. */
void        rpe_findings_set_remedy_func (RpeRemedyFunc func);

/* The finding as a message: its text, then "; " and the remedy when one is
 * registered (newly allocated). */
char       *rpe_finding_to_message (const RpeFinding *finding);

/* Sets *error (if error != NULL) to an RPE_ERROR of code `status` that carries
 * the finding: its message is rpe_finding_to_message's.  Returns FALSE. */
gboolean    rpe_set_error_finding (GError            **error,
                                   RpeStatus           status,
                                   RpeFindingKind      kind,
                                   const char *const  *candidates,
                                   const char         *format,
                                   ...) G_GNUC_PRINTF (5, 6);

/* The finding an RPE_ERROR carries: its kind (RPE_FINDING_NONE if none or if
 * the error is of another domain), and (optional) its text without the remedy
 * and its candidates, owned by the error. */
RpeFindingKind rpe_error_get_finding (const GError        *error,
                                      const char         **text,
                                      const char *const  **candidates);

G_END_DECLS

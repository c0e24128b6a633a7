/* rpe-window-remedy.c: the window's words for what to do about a finding of
 * the readers (rpe-findings.h): its pickers and switches, never an option of
 * the `rpe` tool.  The one place where the window phrases a remedy. */
#include "config.h"

#include <glib/gi18n.h>

#include "rpe-findings.h"
#include "rpe-window-remedy.h"

static char *
window_remedy (RpeFindingKind     kind,
               const char *const *candidates)
{
  switch (kind)
    {
    case RPE_FINDING_MODULE:
      return g_strdup (_("choose the module in Checkpoint Contents"));
    case RPE_FINDING_MODULE_METHOD:
      return g_strdup (_("choose one of them in Checkpoint Contents"));
    case RPE_FINDING_LAYER:
      return g_strdup (_("choose the layer in Checkpoint Contents"));
    case RPE_FINDING_GATE:
      return g_strdup (_("give one of them the gate role in Checkpoint Contents, or switch Gated off"));
    case RPE_FINDING_UNUSED_GATES:
      return g_strdup (_("Checkpoint Contents can give one of them the gate role"));
    case RPE_FINDING_ROLES:
      return g_strdup (_("give tensors their roles in Checkpoint Contents"));
    case RPE_FINDING_TENSOR:
      return g_strdup (_("Checkpoint Contents lists the tensors"));
    case RPE_FINDING_OVERWRITE:
      return g_strdup (_("choose another name"));
    case RPE_FINDING_NONE:
    default:
      return NULL;
    }
}

void
rpe_window_remedy_install (void)
{
  rpe_findings_set_remedy_func (window_remedy);
}

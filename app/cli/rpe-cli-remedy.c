/* rpe-cli-remedy.c: the `rpe` tool's words for what to do about a finding of
 * the readers (rpe-findings.h): its options.  The readers say what they found;
 * this is the one place where the tool adds which option changes it. */
#include "config.h"

#include <glib/gi18n.h>

#include "rpe-cli.h"
#include "rpe-findings.h"

static char *
cli_remedy (RpeFindingKind     kind,
            const char *const *candidates)
{
  switch (kind)
    {
    case RPE_FINDING_MODULE:
      return g_strdup (_("choose with --prefix"));
    case RPE_FINDING_MODULE_METHOD:
      return g_strdup (_("give one of these (or --method)"));
    case RPE_FINDING_LAYER:
      return g_strdup (_("choose with --layer"));
    case RPE_FINDING_GATE:
      return g_strdup (_("choose with --map gate=TENSOR (or --no-gate)"));
    case RPE_FINDING_UNUSED_GATES:
      return g_strdup (_("use one with --map gate=TENSOR"));
    case RPE_FINDING_ROLES:
      return g_strdup (_("map other names with --map ROLE=TENSOR"));
    case RPE_FINDING_TENSOR:
      return g_strdup (_("rpe info lists the tensors"));
    case RPE_FINDING_OVERWRITE:
      return g_strdup (_("--force replaces it"));
    case RPE_FINDING_NONE:
    default:
      return NULL;
    }
}

void
rpe_cli_remedy_install (void)
{
  rpe_findings_set_remedy_func (cli_remedy);
}

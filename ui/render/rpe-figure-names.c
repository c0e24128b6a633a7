/* rpe-figure-names.c: the words of the figures (see rpe-figure-names.h). */
#include "config.h"

#include "rpe-figure-names.h"

#include <string.h>

#include <glib/gi18n.h>

char *
rpe_figure_spe_name (gboolean sine,
                     int      gated)
{
  /* Translators: "sine SPE, gated": the first %s is "sine" or "conv", the second ", gated", ", ungated" or nothing */
  return g_strdup_printf (_("%s SPE%s"), sine ? _("sine") : _("conv"),
                          gated > 0 ? _(", gated") : gated == 0 ? _(", ungated") : "");
}

char *
rpe_figure_escape (const char *text)
{
  return g_markup_escape_text (text != NULL ? text : "", -1);
}

char *
rpe_figure_model_name (const char *code)
{
  static const struct { const char *code; const char *name; } fixed[] = {
    { "ape", "APE" },
    { "lrpe", "LRPE" },
    { "fastrpb", "FastRPB" },
    { "spe_exact", N_("SPE, exact") },
    { "spe_estimate", N_("SPE, estimate") },
    { "spe_d", "SPE, P" "\xcc\x83" "<sub>d</sub>(" RPE_FIG_TAU ")" },
    { "spe_mean", N_("SPE, mean over d") },
    { "mean", N_("mean") },
  };
  g_auto (GStrv) words = NULL;
  GString *s;
  guint n;

  if (code == NULL)
    return g_strdup ("");
  for (gsize i = 0; i < G_N_ELEMENTS (fixed); i++)
    if (strcmp (code, fixed[i].code) == 0)
      return g_strdup (_(fixed[i].name));

  /* (sine|conv)[_gated|_ungated][_est] */
  words = g_strsplit (code, "_", -1);
  n = g_strv_length (words);
  if (n == 0 || n > 3 || (strcmp (words[0], "sine") != 0 && strcmp (words[0], "conv") != 0))
    return rpe_figure_escape (code);
  s = g_string_new (strcmp (words[0], "sine") == 0 ? _("sine SPE") : _("conv SPE"));
  for (guint i = 1; i < n; i++)
    {
      if (strcmp (words[i], "gated") == 0 || strcmp (words[i], "ungated") == 0)
        g_string_append (s, strcmp (words[i], "gated") == 0 ? _(", gated") : _(", ungated"));
      else if (strcmp (words[i], "est") == 0)
        g_string_append (s, _(", estimate"));
      else
        {
          g_string_free (s, TRUE);
          return rpe_figure_escape (code);
        }
    }
  return g_string_free (s, FALSE);
}

char *
rpe_figure_template_quantity (int    mode,
                              gssize d)
{
  g_autofree char *sub = d >= 0 ? g_strdup_printf ("%zd", d) : g_strdup ("d");

  switch (mode)
    {
    case 1:
      return g_strdup_printf (RPE_FIG_P_HAT "<sub>%s</sub>(m, n)", sub);
    case 2:
      return g_strdup_printf (RPE_FIG_P_HAT "<sub>%s</sub> " RPE_FIG_MINUS " " RPE_FIG_P_TILDE "<sub>%s</sub>",
                              sub, sub);
    default:
      return g_strdup_printf (RPE_FIG_P_TILDE "<sub>%s</sub>(m, n)", sub);
    }
}

static const char *
mode_word (int mode)
{
  /* Translators: put before "templates" or "template" (note the trailing space) */
  return mode == 1 ? _("empirical ") : mode == 2 ? _("empirical \xe2\x88\x92 analytic ") : _("analytic ");
}

char *
rpe_figure_templates_title (gboolean sine,
                            gboolean gated,
                            int      mode,
                            gsize    head,
                            gssize   d,
                            gsize    n)
{
  g_autofree char *spe = rpe_figure_spe_name (sine, gated ? 1 : -1);
  g_autofree char *q = rpe_figure_template_quantity (mode, d);

  if (d < 0)
    /* Translators: "sine SPE: analytic templates P̃_d(m, n) of head 0 (N = 64)" */
    return g_strdup_printf (_("%s: %stemplates %s of head %zu (N = %zu)"), spe, mode_word (mode), q,
                            (size_t) head, (size_t) n);
  return g_strdup_printf (_("%s: %stemplate %s, head %zu (N = %zu)"), spe, mode_word (mode), q, (size_t) head,
                          (size_t) n);
}

char *
rpe_figure_template_cell (gsize d)
{
  return g_strdup_printf ("d = %zu", (size_t) d);
}

char *
rpe_figure_template_bar (int mode)
{
  g_autofree char *q = rpe_figure_template_quantity (mode, -1);

  /* Translators: "template P̃_d(m, n)": the colour bar's label */
  return g_strdup_printf (mode == 2 ? _("difference %s") : _("template %s"), q);
}

char *
rpe_figure_attention_title (gboolean sine,
                            gboolean gated,
                            gboolean exact,
                            gsize    head,
                            gsize    r,
                            gboolean causal)
{
  g_autofree char *spe = rpe_figure_spe_name (sine, gated ? 1 : -1);

  if (exact)
    return g_strdup_printf (_("exact relative attention a(m, n) of %s, head %zu%s"), spe, (size_t) head,
                            causal ? _(", causal") : "");
  /* Translators: "sine SPE: attention â(m, n), head 0, R = 64, causal" */
  return g_strdup_printf (_("%s: attention a\xcc\x82(m, n), head %zu, R = %zu%s"), spe, (size_t) head,
                          (size_t) r, causal ? _(", causal") : "");
}

char *
rpe_figure_compare_title (gboolean sine,
                          gboolean gated,
                          gsize    head,
                          gboolean causal,
                          gsize    n)
{
  g_autofree char *spe = rpe_figure_spe_name (sine, gated ? 1 : -1);

  return g_strdup_printf (_("Exact relative attention vs its SPE estimate (%s; head %zu%s, N = %zu)"), spe,
                          (size_t) head, causal ? _(", causal") : "", (size_t) n);
}

char *
rpe_figure_compare_panel (guint i,
                          gsize r)
{
  switch (i)
    {
    case 0:
      return g_strdup (_("exact a"));
    case 1:
      return g_strdup_printf (_("SPE estimate a\xcc\x82 (R = %zu)"), (size_t) r);
    default:
      return g_strdup (_("error a\xcc\x82 \xe2\x88\x92 a"));
    }
}

const char *
rpe_figure_compare_bar (guint i)
{
  return i < 2 ? _("attention weight") : _("estimate \xe2\x88\x92 exact");
}

/* rpe-figure-names.h: the words of RPE Studio's figures, shared by the window and
 * `rpe export` so that both say the same thing (GTK-free; GLib strings).
 *
 * Human names for the code names of models and table columns ("sine_gated" ->
 * "sine SPE, gated", "lrpe" -> "LRPE"), and the Pango markup of the quantities
 * the figures show (P̂, P̃, â, N<sub>train</sub>), so that titles, legends and
 * colour bars carry real mathematics instead of ASCII stand-ins.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Markup of the quantities (UTF-8; P̂ and P̃ with combining marks U+0302, U+0303). */
#define RPE_FIG_P_HAT         "P\xcc\x82"                 /* empirical template P̂ */
#define RPE_FIG_P_TILDE       "P\xcc\x83"                 /* analytic (gated) template P̃ */
#define RPE_FIG_A_HAT         "a\xcc\x82"                 /* SPE attention â */
#define RPE_FIG_TAU           "\xcf\x84"                  /* τ */
#define RPE_FIG_SIGMA         "\xce\xa3"                  /* Σ */
#define RPE_FIG_MINUS         "\xe2\x88\x92"              /* − */
#define RPE_FIG_N_TRAIN       "N<sub>train</sub>"
/* The relative Frobenius error of the empirical template: ‖P̂ − P̃‖_F / ‖P̃‖_F. */
#define RPE_FIG_TEMPLATE_ERROR "\xe2\x80\x96" RPE_FIG_P_HAT " " RPE_FIG_MINUS " " RPE_FIG_P_TILDE \
                               "\xe2\x80\x96<sub>F</sub> / \xe2\x80\x96" RPE_FIG_P_TILDE "\xe2\x80\x96<sub>F</sub>"
/* The relative Frobenius error of the attention: ‖â − a‖_F / ‖a‖_F. */
#define RPE_FIG_ATTENTION_ERROR "\xe2\x80\x96" RPE_FIG_A_HAT " " RPE_FIG_MINUS " a\xe2\x80\x96<sub>F</sub>" \
                                " / \xe2\x80\x96" "a\xe2\x80\x96<sub>F</sub>"

/* "sine SPE" or "convolutional SPE" with ", gated" when gated (gated < 0: not said). */
char *rpe_figure_spe_name   (gboolean     sine,
                             int          gated);

/* The human name of a model / column code: ape, lrpe, fastrpb, sine, conv,
 * sine_gated, conv_ungated, sine_gated_est, spe_exact, spe_estimate, spe_d,
 * spe_mean...; an unknown code comes back as it is (escaped for markup).  Newly
 * allocated. */
char *rpe_figure_model_name (const char  *code);

/* text with & < > escaped, for a user's string inside markup. */
char *rpe_figure_escape     (const char  *text);

/* Templates: mode 0 analytic P̃, 1 empirical P̂, 2 their difference P̂ − P̃. */
/* The quantity of feature d (d < 0: the generic "d"), e.g. "P̃<sub>3</sub>(m, n)". */
char *rpe_figure_template_quantity (int       mode,
                                    gssize    d);
/* "sine SPE, gated: analytic templates P̃_d(m, n) of head 1 (N = 48)" (d < 0: the grid),
 * "sine SPE, gated: analytic template P̃_3(m, n), head 1 (N = 48)". */
char *rpe_figure_templates_title   (gboolean  sine,
                                    gboolean  gated,
                                    int       mode,
                                    gsize     head,
                                    gssize    d,
                                    gsize     n);
/* The title of a cell of the templates grid: "d = 3". */
char *rpe_figure_template_cell     (gsize     d);
/* The colour bar of the templates: "template value P̃_d(m, n)" and the like. */
char *rpe_figure_template_bar      (int       mode);

/* "sine SPE, gated: attention â(m, n), head 1, R = 64" or, exact, "exact relative
 * attention a(m, n) of sine SPE, gated, head 1" (", causal" appended when causal). */
char *rpe_figure_attention_title   (gboolean  sine,
                                    gboolean  gated,
                                    gboolean  exact,
                                    gsize     head,
                                    gsize     r,
                                    gboolean  causal);
/* SPE vs RPE: "Exact relative attention vs its SPE estimate (sine SPE, gated; head 1, N = 48)". */
char *rpe_figure_compare_title     (gboolean  sine,
                                    gboolean  gated,
                                    gsize     head,
                                    gboolean  causal,
                                    gsize     n);
/* Panel i of SPE vs RPE (0 exact, 1 estimate, 2 difference): its title and its colour
 * bar's label. */
char *rpe_figure_compare_panel     (guint     i,
                                    gsize     r);
const char *rpe_figure_compare_bar (guint     i);

G_END_DECLS

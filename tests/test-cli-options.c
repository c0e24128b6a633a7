/* test-cli-options.c: `rpe`'s command line itself: the number parser (in-process, from the
 * app/cli library), every command's options as --help-all lists them against a fixed
 * reference, options of other commands refused as unknown, the help of every command, its
 * example run as written, and hostile numbers refused with the option named. */
#include "config.h"

#include <math.h>
#include <string.h>
#include <sys/wait.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "rpe-cli-parse.h"
#include "rpe-error.h"
#include "rpe-npy.h"
#include "rpe-test-utils.h"

/* ---- the parser -------------------------------------------------------------- */

static void
assert_int (const char *text, gint64 min, gint64 max, gint64 want)
{
  g_autoptr (GError) error = NULL;
  gint64 v = -12345;

  g_assert_true (rpe_cli_parse_int ("--n", text, min, max, &v, &error));
  g_assert_no_error (error);
  g_assert_cmpint (v, ==, want);
}

static void
assert_int_refused (const char *text, gint64 min, gint64 max)
{
  g_autoptr (GError) error = NULL;
  gint64 v = 77;

  g_assert_false (rpe_cli_parse_int ("--n", text, min, max, &v, &error));
  g_assert_error (error, RPE_ERROR, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "--n"));
  g_assert_cmpint (v, ==, 77);
}

static void
test_parse_int (void)
{
  assert_int ("10", 1, 100, 10);
  assert_int_refused ("010", 1, 100); /* octal eight to C, ten to others: refused, not guessed */
  assert_int_refused ("-07", -10, 10);
  assert_int_refused ("00", 0, 100);
  assert_int ("0", 0, 5, 0);
  assert_int ("-5", -10, 10, -5);
  assert_int ("9223372036854775807", 0, G_MAXINT64, G_MAXINT64);
  assert_int ("-9223372036854775808", G_MININT64, 0, G_MININT64);
  assert_int_refused ("0x10", 0, 100);
  assert_int_refused ("0X10", 0, 100);
  assert_int_refused ("1e3", 0, 10000);
  assert_int_refused ("-1", 0, 100); /* not "not given": refused */
  assert_int_refused ("-0", 0, 100); /* no sign where the range has no negatives */
  assert_int_refused ("+5", 0, 100);
  assert_int_refused (" 5", 0, 100);
  assert_int_refused ("5 ", 0, 100);
  assert_int_refused ("", 0, 100);
  assert_int_refused ("-", -5, 100);
  assert_int_refused ("5.0", 0, 100);
  assert_int_refused ("101", 0, 100);
  assert_int_refused ("0", 1, 100);
  assert_int_refused ("9223372036854775808", 0, G_MAXINT64);
  assert_int_refused ("99999999999999999999999", 0, G_MAXINT64);
  assert_int_refused ("-9223372036854775809", G_MININT64, 0);
  assert_int_refused ("٣", 0, 100); /* a non-ASCII digit */
}

static void
test_parse_double (void)
{
  const char  *good[] = { "1", "0.5", ".5", "5.", "1e2", "1E-2", "2.5e+1" };
  const double want[] = { 1, 0.5, 0.5, 5, 100, 0.01, 25 };
  const char *bad[] = { "", "inf", "nan", "-inf", "0x1p3", "1e", "e5", ".", "1.2.3", " 1", "1 ", "+1", "1e999", "1,5", "01.5", "00" };

  for (gsize i = 0; i < G_N_ELEMENTS (good); i++)
    {
      double v = NAN;

      g_assert_true (rpe_cli_parse_double ("--x", good[i], 0, 1000, &v, NULL));
      g_assert_cmpfloat_with_epsilon (v, want[i], 1e-12);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) error = NULL;
      double v = 3;

      g_assert_false (rpe_cli_parse_double ("--x", bad[i], 0, G_MAXDOUBLE, &v, &error));
      g_assert_nonnull (strstr (error->message, "--x"));
      g_assert_cmpfloat (v, ==, 3);
    }
  /* the range, and negatives only where it has them */
  g_assert_false (rpe_cli_parse_double ("--gamma", "0.01", 0.05, 10, &(double) { 0 }, NULL));
  g_assert_false (rpe_cli_parse_double ("--gamma", "-1", 0.05, 10, &(double) { 0 }, NULL));
  g_assert_true (rpe_cli_parse_double ("--t", "-1.5", -2, 2, &(double) { 0 }, NULL));
}

static void
test_parse_size (void)
{
  static const struct
  {
    const char *text;
    guint64     bytes;
  } good[] = {
    { "1", 1 },           { "512", 512 },         { "1K", 1024 },
    { "1k", 1024 },       { "1KiB", 1024 },       { "1KB", 1024 },
    { "1M", 1048576 },    { "1.5G", 1610612736 }, { "2T", (guint64) 2 << 40 },
    { "10M", 10485760 },  { "50%", 500 },         { "100%", 1000 },
    { "0.1%", 1 },
  };
  const char *bad[] = { "",    "0",    "0M", "-1M", "0x10M", "1e3M", "1e3", "M",         "1X",
                        "1MM", "101%", "0%", "1 M", " 1M",   "inf",  "nan", "16777216T", "1.5", "010M" };

  for (gsize i = 0; i < G_N_ELEMENTS (good); i++)
    {
      guint64 b = 0;

      g_assert_true (rpe_cli_parse_size ("--memory-budget", good[i].text, 1000, &b, NULL));
      g_assert_cmpuint (b, ==, good[i].bytes);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) error = NULL;
      guint64 b = 9;

      if (g_str_equal (bad[i], "1.5"))
        continue; /* 1.5 bytes rounds down to one byte: accepted, see below */
      g_assert_false (rpe_cli_parse_size ("--memory-budget", bad[i], 1000, &b, &error));
      g_assert_nonnull (strstr (error->message, "--memory-budget"));
      g_assert_cmpuint (b, ==, 9);
    }
  g_assert_true (rpe_cli_parse_size ("--memory-budget", "1.5", 1000, &(guint64) { 0 }, NULL));
  /* a percentage of a tiny total that rounds to no byte is refused */
  g_assert_false (rpe_cli_parse_size ("--memory-budget", "0.01%", 1000, &(guint64) { 0 }, NULL));
}

static void
test_parse_lists (void)
{
  g_autoptr (GArray) ints = NULL;
  g_autoptr (GArray) reals = NULL;
  g_autoptr (GError) error = NULL;
  gsize n1 = 0, n2 = 0, a = 0, b = 0;

  g_assert_true (rpe_cli_parse_int_list ("--r", "4, 8,16", 1, 100, 8, &ints, NULL));
  g_assert_cmpuint (ints->len, ==, 3);
  g_assert_cmpint (g_array_index (ints, gint64, 1), ==, 8);
  g_assert_false (rpe_cli_parse_int_list ("--r", "4,,8", 1, 100, 8, &(GArray *) { NULL }, NULL));
  g_assert_false (rpe_cli_parse_int_list ("--r", "4,0x8", 1, 100, 8, &(GArray *) { NULL }, NULL));
  g_assert_false (rpe_cli_parse_int_list ("--r", "1,2,3", 1, 100, 2, &(GArray *) { NULL }, NULL));
  g_assert_false (rpe_cli_parse_int_list ("--r", "", 1, 100, 2, &(GArray *) { NULL }, &error));
  g_assert_nonnull (strstr (error->message, "--r"));
  g_clear_error (&error);

  /* ALiBi slopes: above 0, not from 0 */
  g_assert_true (rpe_cli_parse_double_list ("--alibi-slopes", "0.5,0.25", 0, TRUE, 10, 8, &reals, NULL));
  g_assert_cmpuint (reals->len, ==, 2);
  g_assert_false (rpe_cli_parse_double_list ("--alibi-slopes", "0", 0, TRUE, 10, 8, &(GArray *) { NULL }, NULL));
  g_assert_false (rpe_cli_parse_double_list ("--alibi-slopes", "-1", 0, TRUE, 10, 8, &(GArray *) { NULL }, NULL));
  g_assert_false (rpe_cli_parse_double_list ("--alibi-slopes", "0.5,nan", 0, TRUE, 10, 8, &(GArray *) { NULL }, NULL));

  g_assert_true (rpe_cli_parse_grid ("--grid", "16x8", 1 << 20, &n1, &n2, NULL));
  g_assert_cmpuint (n1, ==, 16);
  g_assert_cmpuint (n2, ==, 8);
  g_assert_false (rpe_cli_parse_grid ("--grid", "0x8", 1 << 20, &n1, &n2, NULL));
  g_assert_false (rpe_cli_parse_grid ("--grid", "0x10x8", 1 << 20, &n1, &n2, NULL));
  g_assert_false (rpe_cli_parse_grid ("--grid", "16x-8", 1 << 20, &n1, &n2, NULL));

  g_assert_true (rpe_cli_parse_range ("--rows", "3:7", 10, &a, &b, NULL));
  g_assert_cmpuint (a, ==, 3);
  g_assert_cmpuint (b, ==, 7);
  g_assert_true (rpe_cli_parse_range ("--rows", "3:", 10, &a, &b, NULL));
  g_assert_cmpuint (b, ==, 10);
  g_assert_false (rpe_cli_parse_range ("--rows", "7:3", 10, &a, &b, NULL));
  g_assert_false (rpe_cli_parse_range ("--rows", "0x1:3", 10, &a, &b, NULL));
  g_assert_false (rpe_cli_parse_range ("--rows", "3:11", 10, &a, &b, NULL));
}

/* ---- every command's options ---------------------------------------------------- */

/* What each command takes, as `rpe CMD [SUB] --help-all` must list it: the options the table of
 * the former single option list gave each command (its "which command uses which option" rows),
 * with each command's own options and the global ones; less the ones that leaf ignored or
 * refused after parsing them ('export outputs': --noise, --gate-noise, --exact, --lrpe-*,
 * --bias; the export curve views: the heatmap options; the compare views: what their own check
 * refused). */
/* clang-format off */
static const struct
{
  const char *command;
  const char *options;
} takes[] = {
  { "info", "memory-budget threads" },
  { "fit", "alibi-slopes csv fastrpb fastrpb-tensor features force gated heads kernel kerple-r1 kerple-r2 length "
           "max-iter memory-budget method output sines sweep-csv sweep-size t5-bias t5-buckets t5-max-distance "
           "t5-tensor t5-unidirectional target target-file threads" },
  { "bench", "force json kernels memory-budget only quick repeats threads" },
  { "help", "memory-budget threads" },
  { "compute template", "checkpoint f64 feature features force gate grid head heads kernel kernel-cols layer length "
                        "map memory-budget method no-gate output prefix seed sines threads" },
  { "compute empirical", "checkpoint f64 feature features force gate gate-noise grid head heads kernel kernel-cols "
                         "layer length map memory-budget method no-gate noise noise-scheme output prefix "
                         "realizations seed sines threads" },
  { "compute codes", "checkpoint f64 features force gate grid heads kernel kernel-cols layer length map "
                     "memory-budget method no-gate noise noise-scheme out-keys output prefix realizations seed sines "
                     "threads" },
  { "compute encode", "checkpoint content f64 features force gate gate-noise grid heads kernel kernel-cols keys layer "
                      "length map memory-budget method no-gate noise noise-scheme out-keys output prefix queries "
                      "realizations seed sines threads" },
  { "compute logits", "causal checkpoint content exact f64 features force gate gate-noise grid heads kernel keys layer "
                      "length map memory-budget method no-causal no-exact no-gate noise noise-scheme output prefix "
                      "queries realizations seed sines threads" },
  { "compute attention", "causal checkpoint content exact f64 features force gate gate-noise grid heads kernel keys "
                         "layer length map memory-budget method no-causal no-exact no-gate noise noise-scheme output "
                         "prefix queries realizations seed sines threads" },
  { "compute linear", "causal checkpoint content dpfp-nu f64 feature-map features force gate gate-noise grid heads "
                      "kernel keys layer length map memory-budget method no-causal no-gate noise noise-scheme output "
                      "performer-features prefix queries realizations seed sines threads values" },
  { "compute rpe-logits", "causal checkpoint content f64 features force gate grid heads kernel keys layer length map "
                          "memory-budget method no-causal no-gate output prefix queries relative-embeddings seed "
                          "sines threads" },
  { "compute lrpe-encode", "checkpoint content f64 features force heads keys layer length lrpe-householder lrpe-lambda "
                           "lrpe-p lrpe-permutation lrpe-theta lrpe-theta-file lrpe-v map memory-budget out-keys "
                           "output prefix queries seed threads train-length" },
  { "compute lrpe-attention", "causal checkpoint content dpfp-nu f64 feature-map features force heads keys layer "
                              "length lrpe-before lrpe-householder lrpe-lambda lrpe-p lrpe-permutation lrpe-theta "
                              "lrpe-theta-file lrpe-v map memory-budget no-causal output performer-features prefix "
                              "queries seed threads train-length" },
  { "compute lrpe-linear", "causal checkpoint content dpfp-nu f64 feature-map features force heads keys layer length "
                           "lrpe-before lrpe-householder lrpe-lambda lrpe-norm lrpe-p lrpe-permutation lrpe-theta "
                           "lrpe-theta-file lrpe-v map memory-budget no-causal output performer-features prefix "
                           "queries seed threads train-length values" },
  { "compute fastrpb", "bias bias-cols bias-layout bias-rows causal checkpoint content dpfp-nu f64 fastrpb-attention "
                       "feature-map features force grid heads keys layer length map memory-budget no-causal output "
                       "performer-features prefix queries seed threads values" },
  { "curves profile", "bias bias-layout causal checkpoint content feature features force gate head heads kernel layer "
                      "length lrpe-householder lrpe-lambda lrpe-p lrpe-permutation lrpe-theta lrpe-theta-file lrpe-v "
                      "map memory-budget method models no-causal no-gate output prefix seed sines threads "
                      "train-length" },
  { "curves error", "against checkpoint feature features force gate head heads kernel layer length map memory-budget "
                    "method no-gate noise-scheme output prefix realizations realizations-list seed seeds sines "
                    "threads train-length" },
  { "curves extrapolation", "bias bias-layout block causal checkpoint content feature features force gate head heads "
                            "kernel layer length lrpe-householder lrpe-lambda lrpe-p lrpe-permutation lrpe-theta "
                            "lrpe-theta-file lrpe-v map max-length memory-budget method models no-causal no-gate "
                            "output prefix realizations seed sines threads train-length window" },
  { "curves output-error", "causal channels checkpoint compare content dpfp-nu draws feature feature-map features "
                           "force gate head heads impulse-positions kernel keys layer length map memory-budget method "
                           "no-causal no-gate output performer-features prefix queries realizations realizations-list "
                           "seed sines threads train-length value-source values" },
#define HEATMAP_VIEW                                                                                                  \
  "all-heads attention-transform causal checkpoint color-scale colormap content difference dpi "                      \
  "empirical exact feature features force frame-delay frames gamma gate gate-noise head heads height kernel keys "    \
  "layer length lrpe-lambda lrpe-p lrpe-theta map "                                                                   \
  "memory-budget method no-causal no-exact no-gate noise noise-scheme output per-cell-scale percentile prefix "       \
  "preset queries realizations reduce save-session seed session sines sweep threads title train-length width"
  { "export templates", HEATMAP_VIEW },
  { "export template", HEATMAP_VIEW },
  { "export attention", HEATMAP_VIEW " attention-method cols feature-map rows" },
  { "export spe-vs-rpe", HEATMAP_VIEW },
  { "export profile", "bias bias-layout causal checkpoint colormap content dpi feature features force gate head heads "
                      "height kernel layer length lrpe-householder lrpe-lambda lrpe-p lrpe-permutation lrpe-theta "
                      "lrpe-theta-file lrpe-v map memory-budget method models no-causal no-gate output prefix preset "
                      "seed sines threads title train-length width" },
  { "export error", "against checkpoint colormap dpi feature features force gate head heads height kernel layer length "
                    "map memory-budget method no-gate noise-scheme output prefix preset realizations realizations-list "
                    "seed seeds sines threads title train-length width" },
  { "export extrapolation", "bias bias-layout block causal checkpoint colormap content dpi feature features force gate "
                            "head heads height kernel layer length lrpe-householder lrpe-lambda lrpe-p "
                            "lrpe-permutation lrpe-theta lrpe-theta-file lrpe-v map max-length memory-budget method "
                            "models no-causal no-gate output panel prefix preset realizations seed sines threads title "
                            "train-length width window" },
  { "export curves", "all-heads attention-transform causal checkpoint colormap content difference dpi empirical exact "
                     "feature features force frame-delay frames gate gate-noise head heads height kernel keys layer "
                     "length lrpe-lambda lrpe-p lrpe-theta map memory-budget method no-causal no-exact no-gate noise "
                     "noise-scheme output panel per-cell-scale prefix preset queries realizations reduce save-session "
                     "seed session sines sweep threads title train-length width" },
  { "export outputs", "causal channel channels checkpoint color-scale colormap compare content dpfp-nu dpi draws "
                      "feature feature-map features force gamma gate head heads height impulse-positions kernel keys "
                      "layer length map memory-budget method no-causal no-gate noise-scheme output per-cell-scale "
                      "percentile performer-features prefix preset queries realizations seed sines threads title "
                      "train-length value-source values width" },
#define COMPARE_VIEW                                                                                                  \
  "attention-transform causal checkpoint color-scale colormap content dpi exact feature features force gamma gate "  \
  "head heads height kernel layer length map memory-budget method no-causal no-exact no-gate output percentile "      \
  "prefix preset realizations seed sines threads title train-length width"
  { "export compare-templates", COMPARE_VIEW " b-checkpoint b-head b-layer b-method" },
  { "export compare-attention", COMPARE_VIEW " b-checkpoint b-head b-layer b-method b-content" },
  { "export overview", COMPARE_VIEW " cells" },
};
/* clang-format on */

static int
run_words (const char *words, const char *extra, char **out, char **err)
{
  g_autofree char *line = g_strdup_printf ("%s %s", words, extra != NULL ? extra : "");
  g_auto (GStrv) argv = NULL;

  g_assert_true (g_shell_parse_argv (line, NULL, &argv, NULL));
  return rpe_test_run_cli_argv ((const char *const *) argv, out, err);
}

/* The long options a --help-all text lists (the help options left out). */
static GHashTable *
listed_options (const char *help)
{
  g_autoptr (GRegex) re = g_regex_new ("^\\s+(?:-\\w, )?--([a-z0-9-]+)", G_REGEX_MULTILINE, 0, NULL);
  g_autoptr (GMatchInfo) match = NULL;
  GHashTable *set = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  g_regex_match (re, help, 0, &match);
  while (g_match_info_matches (match))
    {
      char *name = g_match_info_fetch (match, 1);

      if (g_str_equal (name, "help") || g_str_has_prefix (name, "help-"))
        g_free (name);
      else
        g_assert_true (g_hash_table_add (set, name)); /* listed once */
      g_match_info_next (match, NULL);
    }
  return set;
}

static void
test_help_all_lists_what_it_takes (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (takes); i++)
    {
      g_autofree char *out = NULL;
      g_auto (GStrv) want = g_strsplit (takes[i].options, " ", -1);
      g_autoptr (GHashTable) got = NULL;

      g_assert_cmpint (run_words (takes[i].command, "--help-all", &out, NULL), ==, 0);
      got = listed_options (out);
      for (guint k = 0; want[k] != NULL; k++)
        if (!g_hash_table_contains (got, want[k]))
          g_error ("rpe %s --help-all does not list --%s", takes[i].command, want[k]);
      if (g_hash_table_size (got) != g_strv_length (want))
        {
          GHashTableIter it;
          gpointer       name;

          g_hash_table_iter_init (&it, got);
          while (g_hash_table_iter_next (&it, &name, NULL))
            if (!g_strv_contains ((const char *const *) want, name))
              g_error ("rpe %s --help-all lists --%s, which it does not take", takes[i].command, (char *) name);
        }
    }
}

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* For every command, options that only other commands take: refused as unknown, with the
 * command that was given named and nothing written. */
static void
test_other_commands_options_refused (void)
{
  g_autoptr (GHashTable) all = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GPtrArray) names = g_ptr_array_new ();
  g_autofree char *out = rpe_test_tmp_path ("never-written.npy");
  char           **split[G_N_ELEMENTS (takes)] = { NULL };

  for (gsize i = 0; i < G_N_ELEMENTS (takes); i++)
    {
      split[i] = g_strsplit (takes[i].options, " ", -1);
      for (guint k = 0; split[i][k] != NULL; k++)
        if (g_hash_table_add (all, split[i][k]))
          g_ptr_array_add (names, split[i][k]);
    }
  g_ptr_array_sort (names, compare_names);
  for (gsize i = 0; i < G_N_ELEMENTS (takes); i++)
    {
      guint tried = 0;

      /* three of the options it does not take, spread over the list */
      for (guint k = (guint) i % 7; k < names->len && tried < 3; k += names->len / 3 + 1)
        {
          const char      *name = g_ptr_array_index (names, k);
          g_autofree char *err = NULL;
          g_autofree char *args = NULL;
          g_autofree char *said = g_strdup_printf ("'rpe %s'", takes[i].command);

          while (g_strv_contains ((const char *const *) split[i], name) && ++k < names->len)
            name = g_ptr_array_index (names, k);
          if (k >= names->len)
            break;
          args = g_strdup_printf ("--%s 1 -o '%s'", name, out);
          g_assert_cmpint (run_words (takes[i].command, args, NULL, &err), ==, 2);
          if (strstr (err, "is not used by") == NULL || strstr (err, said) == NULL || strstr (err, name) == NULL)
            g_error ("rpe %s --%s: %s", takes[i].command, name, err);
          tried++;
        }
      g_assert_cmpuint (tried, >, 0);
    }
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  for (gsize i = 0; i < G_N_ELEMENTS (takes); i++)
    g_strfreev (split[i]);
  /* an option no command has: GLib's own message */
  {
    g_autofree char *err = NULL;

    g_assert_cmpint (run_words ("compute template", "--no-such-option", NULL, &err), ==, 2);
    g_assert_nonnull (strstr (err, "--no-such-option"));
  }
}

/* ---- help ------------------------------------------------------------------------- */

static const char *const commands[] = { "info", "compute", "curves", "export", "fit", "bench", "help" };

static void
test_help (void)
{
  g_autofree char *top = NULL;
  g_autofree char *top_help = NULL;

  /* rpe --help and rpe help: every command, one line each */
  g_assert_cmpint (run_words ("--help", NULL, &top, NULL), ==, 0);
  g_assert_cmpint (run_words ("help", NULL, &top_help, NULL), ==, 0);
  g_assert_cmpstr (top, ==, top_help);
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      g_autofree char *line = g_strdup_printf ("\n  %s ", commands[i]);

      g_assert_nonnull (strstr (top, line));
    }
  g_assert_nonnull (strstr (top, "--memory-budget"));
  g_assert_nonnull (strstr (top, "--threads"));

  /* every command and subcommand: --help exits 0, says what it does and shows an example;
   * rpe help CMD [SUB] prints the very same */
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      g_autofree char *out = NULL;
      g_autofree char *same = NULL;
      g_autofree char *words = g_strdup_printf ("help %s", commands[i]);

      g_assert_cmpint (run_words (commands[i], "--help", &out, NULL), ==, 0);
      g_assert_cmpint (run_words (words, NULL, &same, NULL), ==, 0);
      g_assert_cmpstr (out, ==, same);
      g_assert_nonnull (strstr (out, "Usage:\n  rpe "));
      g_assert_nonnull (strstr (out, "Example:\n  rpe "));
    }
  for (gsize i = 0; i < G_N_ELEMENTS (takes); i++)
    {
      g_autofree char *out = NULL;
      g_autofree char *same = NULL;
      g_autofree char *words = g_strdup_printf ("help %s", takes[i].command);
      g_autofree char *usage = g_strdup_printf ("Usage:\n  rpe %s [OPTION", takes[i].command);
      g_autofree char *example = g_strdup_printf ("Example:\n  rpe %s", takes[i].command);

      g_assert_cmpint (run_words (takes[i].command, "--help", &out, NULL), ==, 0);
      g_assert_cmpint (run_words (words, NULL, &same, NULL), ==, 0);
      g_assert_cmpstr (out, ==, same);
      g_assert_nonnull (strstr (out, usage));
      if (strstr (out, example) == NULL)
        g_error ("rpe %s --help has no example of itself:\n%s", takes[i].command, out);
    }

  /* rpe export --help-all: exit 0, every view */
  {
    g_autofree char *out = NULL;
    const char      *views[] = {
           "templates",     "template", "attention", "spe-vs-rpe",        "profile",           "error",
           "extrapolation", "curves",   "outputs",   "compare-templates", "compare-attention", "overview"
    };

    g_assert_cmpint (run_words ("export", "--help-all", &out, NULL), ==, 0);
    for (gsize i = 0; i < G_N_ELEMENTS (views); i++)
      {
        g_autofree char *line = g_strdup_printf ("\n  %s ", views[i]);

        g_assert_nonnull (strstr (out, line));
      }
  }
  /* no command: the list on stderr, exit 2 */
  {
    g_autofree char *err = NULL;

    g_assert_cmpint (rpe_test_run_cli_argv ((const char *const[]) { NULL }, NULL, &err), ==, 2);
    g_assert_nonnull (strstr (err, "Usage:"));
    g_assert_cmpint (run_words ("help", "nosuchcommand", NULL, NULL), ==, 2);
  }
}

/* Runs a command line (after "rpe ") with a shell in `dir`; its exit status. */
static int
run_in (const char *dir, const char *line, char **err)
{
  g_autofree char *cmd = g_strdup_printf ("\"$RPE_CLI\" %s", line);
  const char      *argv[] = { "/bin/sh", "-c", cmd, NULL };
  g_autofree char *out = NULL; /* kept off this test's TAP stream */
  int              status = 0;

  g_assert_true (g_spawn_sync (dir, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, err, &status, NULL));
  g_assert_true (WIFEXITED (status));
  return WEXITSTATUS (status);
}

/* Every example of the help runs as written (bench aside: it times for a while). */
static void
test_examples_run (void)
{
  g_autofree char *dir = g_build_filename (rpe_test_tmpdir (), "examples", NULL);

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  for (gsize i = 0; i < G_N_ELEMENTS (takes); i++)
    {
      g_autofree char *out = NULL;
      g_autofree char *err = NULL;
      const char      *at;
      g_autofree char *line = NULL;

      if (g_str_equal (takes[i].command, "bench"))
        continue;
      g_assert_cmpint (run_words (takes[i].command, "--help", &out, NULL), ==, 0);
      at = strstr (out, "Example:\n  rpe ");
      g_assert_nonnull (at);
      at += strlen ("Example:\n  rpe ");
      line = g_strndup (at, strcspn (at, "\n"));
      if (run_in (dir, line, &err) != 0)
        g_error ("the example of rpe %s failed: rpe %s\n%s", takes[i].command, line, err);
    }
}

/* --panel: every value its help names is accepted, another is refused. */
static void
test_panel_values (void)
{
  g_autofree char *dir = g_build_filename (rpe_test_tmpdir (), "panels", NULL);
  const char      *metrics[] = { "distance", "entropy", "ti", "mono" };
  const char      *pages[] = { "profile",
                               "error",
                               "extrapolation",
                               "extrapolation-distance",
                               "extrapolation-entropy",
                               "extrapolation-ti",
                               "extrapolation-mono" };
  g_autofree char *help = NULL;
  g_autofree char *page_help = NULL;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_assert_cmpint (run_words ("export extrapolation", "--help-all", &help, NULL), ==, 0);
  g_assert_cmpint (run_words ("export curves", "--help-all", &page_help, NULL), ==, 0);
  for (gsize i = 0; i < G_N_ELEMENTS (metrics); i++)
    {
      g_autofree char *line = g_strdup_printf ("export extrapolation --train-length 8 --max-length 16 --panel %s "
                                               "--width 200 --height 150 -o p.png",
                                               metrics[i]);
      g_autofree char *err = NULL;

      g_assert_nonnull (strstr (help, metrics[i]));
      if (run_in (dir, line, &err) != 0)
        g_error ("rpe %s: %s", line, err);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (pages); i++)
    {
      const char      *extra = g_str_equal (pages[i], "error")     ? "--length 16 --realizations-list 4,8 --seeds 2"
                               : g_str_equal (pages[i], "profile") ? "--length 16"
                                                                   : "--train-length 8 --max-length 16";
      g_autofree char *line =
        g_strdup_printf ("export curves --panel %s %s --width 200 --height 150 -o p.png", pages[i], extra);
      g_autofree char *err = NULL;
      const char      *at = strstr (page_help, pages[i]);

      g_assert_nonnull (at);
      if (run_in (dir, line, &err) != 0)
        g_error ("rpe %s: %s", line, err);
    }
  {
    g_autofree char *err = NULL;

    g_assert_cmpint (run_in (dir, "export extrapolation --panel slope -o q.png", &err), ==, 2);
    g_assert_nonnull (strstr (err, "--panel"));
    g_clear_pointer (&err, g_free);
    g_assert_cmpint (run_in (dir, "export curves --panel slope -o q.png", &err), ==, 2);
    g_assert_nonnull (strstr (err, "--panel"));
    g_clear_pointer (&err, g_free);
    /* profile and error have one panel: no --panel */
    g_assert_cmpint (run_in (dir, "export profile --panel distance -o q.png", &err), ==, 2);
    g_assert_nonnull (strstr (err, "is not used by"));
    g_assert_false (g_file_test (dir, G_FILE_TEST_EXISTS) && g_file_test ("q.png", G_FILE_TEST_EXISTS));
  }
}

/* ---- hostile numbers on the command line --------------------------------------- */

static void
expect_refused (const char *line, const char *option)
{
  g_autofree char *err = NULL;
  g_autofree char *out = rpe_test_tmp_path (g_str_has_prefix (line, "export") ? "refused.png" : "refused.npy");
  g_autofree char *full = g_strdup_printf ("%s -o '%s'", line, out);

  if (run_words (full, NULL, NULL, &err) != 2 || strstr (err, option) == NULL)
    g_error ("rpe %s: want exit 2 naming %s, got: %s", full, option, err);
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
}

static void
test_hostile_numbers (void)
{
  g_autofree char *npy = rpe_test_tmp_path ("ten.npy");
  g_autofree char *err = NULL;
  g_autoptr (RpeTensor) t = NULL;

  /* decimal only: 10 is ten (the output is (10, 10)); 010 (octal eight to some tools) and 0x10
   * are refused */
  g_assert_cmpint (run_words ("compute template --length 10 --head 0 --feature 0 -o", npy, NULL, NULL), ==, 0);
  expect_refused ("compute template --length 010", "leading zero");
  expect_refused ("compute template --length 010", "--length");
  t = rpe_npy_read (npy, NULL);
  g_assert_nonnull (t);
  g_assert_cmpuint (t->ndim, ==, 2);
  g_assert_cmpuint (t->shape[0], ==, 10);
  expect_refused ("compute template --length 0x10", "--length");
  expect_refused ("compute template --length ' 16'", "--length");
  expect_refused ("compute template --length 1e3", "--length");
  /* an index below 0 is an error, not "not given" */
  expect_refused ("compute template --checkpoint demo --layer -5", "--layer");
  expect_refused ("compute template --head -1 --feature 0", "--head");
  expect_refused ("curves profile --feature -1", "--feature");
  expect_refused ("export compare-templates --b-head -1", "--b-head");
  /* their own stated ranges */
  expect_refused ("export attention --sweep seed=0:3 --frame-delay 0", "--frame-delay");
  expect_refused ("export attention --sweep seed=0:3 --frames 1", "--frames");
  expect_refused ("bench --repeats 0", "--repeats");
  expect_refused ("fit --target alibi --alibi-slopes -1", "--alibi-slopes");
  expect_refused ("fit --target alibi --alibi-slopes 0", "--alibi-slopes");
  expect_refused ("fit --target alibi --heads 2 --alibi-slopes 0.5,0", "--alibi-slopes");
  expect_refused ("fit --target alibi --max-iter 0", "--max-iter");
  expect_refused ("export attention --gamma inf", "--gamma");
  expect_refused ("export attention --width 0x100", "--width");
  expect_refused ("export attention --dpi nan", "--dpi");
  expect_refused ("export attention --rows 0x1:4", "--rows");
  expect_refused ("compute fastrpb --grid 4x0x2", "--grid");
  expect_refused ("curves error --realizations-list 4,0x8", "--realizations-list");
  expect_refused ("compute template --memory-budget 0x10M", "--memory-budget");
  expect_refused ("--threads 0 compute template", "--threads");
  {
    g_autofree char *gif = rpe_test_tmp_path ("sweep.gif");
    g_autofree char *line = g_strdup_printf ("export attention --length 16 --sweep seed=0:0x3 -o '%s'", gif);

    g_assert_cmpint (run_words (line, NULL, NULL, &err), ==, 2);
    g_assert_nonnull (strstr (err, "seed=0:0x3"));
    g_assert_false (g_file_test (gif, G_FILE_TEST_EXISTS));
    g_clear_pointer (&err, g_free);
  }
  /* a bundle of short options holding h is not a request for help (GOption's would print it and
   * exit 0) */
  expect_refused ("export templates -head 0", "-head");
  /* an empty file name is a usage error (exit 2), like the others */
  g_assert_cmpint (run_words ("compute template -o ''", NULL, NULL, &err), ==, 2);
  g_assert_nonnull (strstr (err, "-o"));
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run_words ("fit --target alibi -o ''", NULL, NULL, &err), ==, 2);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run_words ("compute codes --length 8 -o x.npy --out-keys ''", NULL, NULL, &err), ==, 2);
  g_assert_nonnull (strstr (err, "--out-keys"));
}

/* Global options before or after the command mean the same. */
static void
test_global_options (void)
{
  g_autofree char *out = rpe_test_tmp_path ("global.npy");
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  g_autofree char *err = NULL;
  g_autofree char *line = NULL;

  line = g_strdup_printf ("--memory-budget 1M compute template --length 512 -o '%s'", out);
  g_assert_cmpint (run_words (line, NULL, NULL, &before), ==, 2);
  g_free (line);
  line = g_strdup_printf ("compute template --length 512 -o '%s' --memory-budget 1M", out);
  g_assert_cmpint (run_words (line, NULL, NULL, &after), ==, 2);
  g_assert_cmpstr (before, ==, after);
  g_assert_nonnull (strstr (before, "budget"));
  g_free (line);
  line = g_strdup_printf ("--memory-budget=64M --threads 1 compute template --length 16 -o '%s'", out);
  g_assert_cmpint (run_words (line, NULL, NULL, NULL), ==, 0);
  g_free (line);
  line = g_strdup_printf ("compute template --threads=2 --length 16 -o '%s'", out);
  g_assert_cmpint (run_words (line, NULL, NULL, NULL), ==, 0);
  /* anything else before the command is refused, saying where command options go */
  g_assert_cmpint (run_words ("--length 16 compute template", NULL, NULL, &err), ==, 2);
  g_assert_nonnull (strstr (err, "--length"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cli/options/parse-int", test_parse_int);
  g_test_add_func ("/cli/options/parse-double", test_parse_double);
  g_test_add_func ("/cli/options/parse-size", test_parse_size);
  g_test_add_func ("/cli/options/parse-lists", test_parse_lists);
  g_test_add_func ("/cli/options/help-all-lists-what-it-takes", test_help_all_lists_what_it_takes);
  g_test_add_func ("/cli/options/other-commands-options-refused", test_other_commands_options_refused);
  g_test_add_func ("/cli/options/help", test_help);
  g_test_add_func ("/cli/options/examples-run", test_examples_run);
  g_test_add_func ("/cli/options/panel-values", test_panel_values);
  g_test_add_func ("/cli/options/hostile-numbers", test_hostile_numbers);
  g_test_add_func ("/cli/options/global-options", test_global_options);
  return g_test_run ();
}

/* test-core-curves.c: the analysis curves (docs/math.md, section 9) against naive
 * double-precision code written here: full-matrix metrics, closed-form
 * templates and lines, and the 1/sqrt(R) law of the SPE estimator. */
#include "config.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <locale.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "rpe-alloc.h"
#include "rpe-curves.h"
#include "rpe-fastrpb.h"
#include "rpe-lrpe.h"
#include "rpe-rng.h"
#include "rpe-spe.h"
#include "rpe-test-utils.h"

static void
make_params (RpeSpeParams *p, RpeSpeMethod method, size_t h, size_t d, size_t size, uint64_t seed)
{
  g_assert_cmpint (rpe_spe_params_init (p, method, h, d, size, true), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_params_random (p, seed), ==, RPE_OK);
}

/* Naive analytic template (docs/math.md, sections 1-3), lag tau of cell (h, d). */
static double
naive_template (const RpeSpeParams *p, size_t h, size_t d, long tau, gboolean gated)
{
  size_t c = h * p->n_features + d;
  double v = 0;

  if (p->method == RPE_SPE_SINE)
    {
      size_t K = p->n_sines;
      for (size_t k = 0; k < K; k++)
        {
          double lam = p->gains[c * K + k];
          v += lam * lam * cos (2 * G_PI * p->freqs[c * K + k] * (double) tau + p->offsets[c * K + k]);
        }
      v /= (double) (2 * K);
    }
  else
    {
      long L = (long) p->kernel;
      for (long j = 0; j < L; j++)
        if (j + tau >= 0 && j + tau < L)
          v += (double) p->wq[c * L + j] * p->wk[c * L + j + tau];
    }
  if (gated && p->gate != NULL)
    v = (1 - p->gate[c]) * v + p->gate[c];
  return v;
}

/* ---------------------------------------------------------------------- */
/* Tables and CSV                                                         */

static char *
read_file (const char *path)
{
  char *text = NULL;
  g_autoptr (GError) error = NULL;

  g_assert_true (g_file_get_contents (path, &text, NULL, &error));
  g_assert_no_error (error);
  return text;
}

static void
test_table_csv (void)
{
  RpeStatus st;
  RpeCurveTable *t = rpe_curve_table_new (3, &st);
  double a[3] = { 0.5, -1.25e-7, 3 }, b[3] = { NAN, INFINITY, 1.0 / 3.0 };
  size_t idx;
  g_autofree char *path = g_build_filename (rpe_test_tmpdir (), "table.csv", NULL);
  g_autofree char *bad = g_build_filename (rpe_test_tmpdir (), "no-such-dir", "t.csv", NULL);
  g_autofree char *text = NULL;
  g_auto (GStrv) lines = NULL;
  g_autoptr (GDir) dir = NULL;
  const char *name;
  int err = 0, n_entries = 0;
  const char *locales[] = { "de_DE.UTF-8", "fr_FR.UTF-8", "de_DE.utf8", NULL };
  char *old_locale = g_strdup (setlocale (LC_NUMERIC, NULL));

  g_assert_nonnull (t);
  g_assert_cmpint (rpe_curve_table_add_column (t, "x", a, &idx), ==, RPE_OK);
  g_assert_cmpuint (idx, ==, 0);
  g_assert_cmpint (rpe_curve_table_add_column (t, "y", b, &idx), ==, RPE_OK);
  g_assert_cmpuint (idx, ==, 1);
  /* bad or duplicate names */
  g_assert_cmpint (rpe_curve_table_add_column (t, "x", a, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_curve_table_add_column (t, "a,b", a, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_curve_table_add_column (t, "", a, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_curve_table_add_column (t, "a\nb", a, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  /* many columns: growth keeps earlier ones */
  for (int i = 0; i < 20; i++)
    {
      char nm[16];
      g_snprintf (nm, sizeof nm, "c%d", i);
      g_assert_cmpint (rpe_curve_table_add_column (t, nm, NULL, NULL), ==, RPE_OK);
      rpe_curve_table_column (t, (size_t) (2 + i))[1] = i;
    }
  g_assert_cmpuint (rpe_curve_table_n_cols (t), ==, 22);
  g_assert_cmpint (rpe_curve_table_find (t, "c7"), ==, 9);
  g_assert_cmpint (rpe_curve_table_find (t, "nope"), ==, -1);
  g_assert_cmpfloat (rpe_curve_table_column_const (t, 0)[1], ==, -1.25e-7);
  g_assert_cmpstr (rpe_curve_table_column_name (t, 1), ==, "y");
  g_assert_null (rpe_curve_table_column (t, 22));

  g_assert_cmpint (rpe_curve_table_set_meta (t, "command", "rpe curves test"), ==, RPE_OK);
  g_assert_cmpint (rpe_curve_table_set_meta_double (t, "slope", -0.4987654321), ==, RPE_OK);
  g_assert_cmpint (rpe_curve_table_set_meta (t, "bad:key", "x"), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_curve_table_set_meta (t, "k", "two\nlines"), ==, RPE_ERROR_INVALID_ARGUMENT);
  for (int i = 0; i < 12; i++)
    {
      char key[16];
      g_snprintf (key, sizeof key, "k%d", i);
      g_assert_cmpint (rpe_curve_table_set_meta_double (t, key, i), ==, RPE_OK);
    }
  g_assert_cmpint (rpe_curve_table_set_meta (t, "command", "replaced"), ==, RPE_OK);
  g_assert_cmpuint (rpe_curve_table_n_meta (t), ==, 14);
  g_assert_cmpstr (rpe_curve_table_get_meta (t, "command"), ==, "replaced");
  g_assert_cmpstr (rpe_curve_table_meta_key (t, 1), ==, "slope");

  /* a locale with a decimal comma must not leak into the CSV */
  for (int i = 0; locales[i] && setlocale (LC_NUMERIC, locales[i]) == NULL; i++)
    ;
  g_assert_cmpint (rpe_curve_table_write_csv (t, path, &err), ==, RPE_OK);
  g_assert_cmpint (err, ==, 0);
  setlocale (LC_NUMERIC, old_locale);
  g_free (old_locale);

  text = read_file (path);
  lines = g_strsplit (text, "\n", -1);
  g_assert_cmpstr (lines[0], ==, "# command: replaced");
  g_assert_cmpstr (lines[1], ==, "# slope: -0.498765432");
  g_assert_true (g_str_has_prefix (lines[14], "x,y,c0,c1,"));
  g_assert_true (g_str_has_prefix (lines[15], "0.5,nan,0,"));
  g_assert_true (g_str_has_prefix (lines[16], "-1.25e-07,inf,0,1,2,"));
  g_assert_true (g_str_has_prefix (lines[17], "3,0.333333333,0,"));
  g_assert_cmpstr (lines[18], ==, "");
  g_assert_null (lines[19]);

  /* failure: IO with errno, nothing left behind; success replaced the file atomically */
  g_assert_cmpint (rpe_curve_table_write_csv (t, bad, &err), ==, RPE_ERROR_IO);
  g_assert_cmpint (err, ==, ENOENT);
  dir = g_dir_open (rpe_test_tmpdir (), 0, NULL);
  while ((name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_prefix (name, "table.csv"))
      n_entries++;
  g_assert_cmpint (n_entries, ==, 1);   /* no temporary file left */
  rpe_curve_table_free (t);
  rpe_curve_table_free (NULL);
  g_assert_null (rpe_curve_table_new (0, &st));
  g_assert_cmpint (st, ==, RPE_ERROR_INVALID_ARGUMENT);
}

/* ---------------------------------------------------------------------- */
/* Fit                                                                    */

static void
test_fit (void)
{
  double x[7], y[7], slope, icpt, se;
  /* known residuals around log y = log 3 - 0.7 log x */
  const double eps[7] = { 0.01, -0.02, 0.015, 0.0, -0.01, 0.02, -0.005 };
  double sx = 0, sy = 0, sxx = 0, sxy = 0, det, b, a, ssr = 0;

  for (int i = 0; i < 7; i++)
    {
      x[i] = pow (2.0, i + 2);
      y[i] = 3.0 * pow (x[i], -0.7);
    }
  g_assert_cmpint (rpe_curve_fit_loglog (x, y, 7, &slope, &icpt, &se), ==, RPE_OK);
  g_assert_cmpfloat_with_epsilon (slope, -0.7, 1e-12);
  g_assert_cmpfloat_with_epsilon (icpt, log (3.0), 1e-12);
  g_assert_cmpfloat (se, <, 1e-12);

  /* with residuals: normal equations X^T X beta = X^T y solved here, and
   * SE(b) = sqrt (s^2 [(X^T X)^-1]_11) */
  for (int i = 0; i < 7; i++)
    {
      double lx = log (x[i]), ly = log (y[i]) + eps[i];
      y[i] = exp (ly);
      sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly;
    }
  det = 7 * sxx - sx * sx;
  b = (7 * sxy - sx * sy) / det;
  a = (sxx * sy - sx * sxy) / det;
  for (int i = 0; i < 7; i++)
    {
      double r = log (y[i]) - a - b * log (x[i]);
      ssr += r * r;
    }
  g_assert_cmpint (rpe_curve_fit_loglog (x, y, 7, &slope, &icpt, &se), ==, RPE_OK);
  g_assert_cmpfloat_with_epsilon (slope, b, 1e-12);
  g_assert_cmpfloat_with_epsilon (icpt, a, 1e-12);
  g_assert_cmpfloat_with_epsilon (se, sqrt (ssr / 5 * 7 / det), 1e-12);

  g_assert_cmpint (rpe_curve_fit_loglog (x, y, 2, &slope, NULL, &se), ==, RPE_OK);
  g_assert_true (isnan (se));
  g_assert_cmpint (rpe_curve_fit_loglog (x, y, 1, &slope, NULL, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  y[3] = 0;
  g_assert_cmpint (rpe_curve_fit_loglog (x, y, 7, &slope, NULL, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  y[3] = 1;
  x[1] = x[0];
  g_assert_cmpint (rpe_curve_fit_loglog (x, y, 2, &slope, NULL, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
}

/* ---------------------------------------------------------------------- */
/* Profiles                                                               */

static void
test_profile (void)
{
  RpeSpeParams sine, conv;
  const size_t H = 2, D = 3, n = 40, L = 7, len = 2 * n - 1;
  RpeStatus st;
  RpeCurveTable *t = rpe_curve_profile_new (n, &st);
  RpeLrpeConfig cfg = { 0 };
  RpeLrpe *lrpe;
  const size_t DL = 8;
  float *w = g_new (float, len);
  const double *col;

  make_params (&sine, RPE_SPE_SINE, H, D, 4, 11);
  make_params (&conv, RPE_SPE_CONV, H, D, L, 12);
  g_assert_nonnull (t);
  g_assert_cmpuint (rpe_curve_table_n_rows (t), ==, len);
  col = rpe_curve_table_column_const (t, 0);
  g_assert_cmpfloat (col[0], ==, -(double) (n - 1));
  g_assert_cmpfloat (col[len - 1], ==, (double) (n - 1));

  g_assert_cmpint (rpe_curve_profile_add_spe (t, "sine", &sine, 1, 2, false, NULL), ==, RPE_OK);
  g_assert_cmpint (rpe_curve_profile_add_spe (t, "sine_gated", &sine, 1, 2, true, NULL), ==, RPE_OK);
  g_assert_cmpint (rpe_curve_profile_add_spe (t, "sine_mean", &sine, 0, RPE_CURVE_ALL, true, NULL), ==, RPE_OK);
  g_assert_cmpint (rpe_curve_profile_add_spe (t, "conv", &conv, 1, 0, false, NULL), ==, RPE_OK);
  g_assert_cmpint (rpe_curve_profile_add_spe (t, "conv_gated", &conv, 1, 0, true, NULL), ==, RPE_OK);
  g_assert_cmpint (rpe_curve_profile_add_spe (t, "bad", &conv, 2, 0, true, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_curve_profile_add_spe (t, "sine", &conv, 0, 0, true, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);

  for (size_t i = 0; i < len; i++)
    {
      long tau = (long) i - (long) (n - 1);
      double mean = 0;

      for (size_t d = 0; d < D; d++)
        mean += naive_template (&sine, 0, d, tau, TRUE) / D;
      g_assert_cmpfloat_with_epsilon (rpe_curve_table_column (t, 1)[i], naive_template (&sine, 1, 2, tau, FALSE), 1e-5);
      g_assert_cmpfloat_with_epsilon (rpe_curve_table_column (t, 2)[i], naive_template (&sine, 1, 2, tau, TRUE), 1e-5);
      g_assert_cmpfloat_with_epsilon (rpe_curve_table_column (t, 3)[i], mean, 1e-5);
      g_assert_cmpfloat_with_epsilon (rpe_curve_table_column (t, 4)[i], naive_template (&conv, 1, 0, tau, FALSE), 1e-5);
      g_assert_cmpfloat_with_epsilon (rpe_curve_table_column (t, 5)[i], naive_template (&conv, 1, 0, tau, TRUE), 1e-5);
      /* conv templates vanish beyond L: exactly zero ungated, exactly g gated */
      if (labs (tau) >= (long) L)
        {
          g_assert_cmpfloat (rpe_curve_table_column (t, 4)[i], ==, 0.0);
          g_assert_cmpfloat_with_epsilon (rpe_curve_table_column (t, 5)[i], conv.gate[D + 0], 1e-7);
        }
    }

  /* LRPE, identity P, rotation, theta a, unit content: the score at lag tau is
   * sum_k |c_pair|^2 cos(tau a_k) = (2/D) sum_k cos(tau 10000^(-2k/D)) */
  cfg.dim = DL;
  cfg.length = n;
  cfg.p = RPE_LRPE_P_IDENTITY;
  cfg.lambda = RPE_LRPE_LAMBDA_ROTATION;
  cfg.theta_kind = RPE_LRPE_THETA_A;
  lrpe = rpe_lrpe_new (&cfg, &st);
  g_assert_nonnull (lrpe);
  g_assert_cmpint (rpe_curve_profile_add_lrpe (t, "lrpe", lrpe, NULL, NULL), ==, RPE_OK);
  for (size_t i = 0; i < len; i++)
    {
      double tau = (double) i - (double) (n - 1), ref = 0;
      for (size_t k = 0; k < DL / 2; k++)
        ref += 2.0 / DL * cos (tau * pow (10000.0, -2.0 * k / DL));
      g_assert_cmpfloat_with_epsilon (rpe_curve_table_column (t, 6)[i], ref, 1e-5);
    }

  /* FastRPB: the weights themselves; causal zeroes tau < 0 */
  for (size_t i = 0; i < len; i++)
    w[i] = (float) sin (0.3 * i) + 0.5f;
  g_assert_cmpint (rpe_curve_profile_add_fastrpb (t, "fastrpb", w, false), ==, RPE_OK);
  g_assert_cmpint (rpe_curve_profile_add_fastrpb (t, "fastrpb_causal", w, true), ==, RPE_OK);
  for (size_t i = 0; i < len; i++)
    {
      g_assert_cmpfloat (rpe_curve_table_column (t, 7)[i], ==, (double) w[i]);
      g_assert_cmpfloat (rpe_curve_table_column (t, 8)[i], ==, i < n - 1 ? 0.0 : (double) w[i]);
    }
  w[3] = NAN;
  g_assert_cmpint (rpe_curve_profile_add_fastrpb (t, "f2", w, false), ==, RPE_ERROR_NOT_FINITE);
  g_assert_cmpuint (rpe_curve_table_n_cols (t), ==, 9);

  rpe_lrpe_free (lrpe);
  g_free (w);
  rpe_curve_table_free (t);
  rpe_spe_params_clear (&sine);
  rpe_spe_params_clear (&conv);
}

/* ---------------------------------------------------------------------- */
/* Estimator error                                                        */

/* Reference: the FULL draw (all cells) through the ordinary code path, the
 * empirical template summed naively in double, the analytic template from the
 * formulas above; relative errors per (cell, seed), whole matrix or per row. */
static void
naive_errors (const RpeSpeParams *p, size_t n, size_t r, gboolean gated, uint64_t seed,
              size_t h, size_t d, double *whole, double *rows)
{
  size_t H = p->n_heads, D = p->n_features, zc, count = n * H * D * r;
  float *z, *eps = g_new (float, H * D * r), *qbar = g_new (float, count), *kbar = g_new (float, count);
  double num = 0, den = 0, scale = sqrt ((double) r * D) / r;

  g_assert_cmpint (rpe_spe_noise_size (p, n, r, &zc), ==, RPE_OK);
  z = g_new (float, zc);
  g_assert_cmpint (rpe_spe_noise_fill (p, n, r, seed, z), ==, RPE_OK);
  g_assert_cmpint (rpe_spe_codes (p, n, r, z, qbar, kbar, NULL), ==, RPE_OK);
  if (gated)
    {
      g_assert_cmpint (rpe_spe_gate_noise_fill (p, r, seed, eps), ==, RPE_OK);
      g_assert_cmpint (rpe_spe_gate_codes (p, n, r, eps, qbar, kbar), ==, RPE_OK);
    }
  for (size_t m = 0; m < n; m++)
    {
      double rn = 0, rd = 0;
      for (size_t j = 0; j < n; j++)
        {
          double ph = 0, pt = naive_template (p, h, d, (long) m - (long) j, gated), e;
          for (size_t i = 0; i < r; i++)
            ph += (double) qbar[((m * H + h) * D + d) * r + i] * kbar[((j * H + h) * D + d) * r + i];
          e = scale * ph - pt;
          rn += e * e;
          rd += pt * pt;
        }
      if (rows)
        rows[m] = sqrt (rn / rd);
      num += rn;
      den += rd;
    }
  if (whole)
    *whole = sqrt (num / den);
  g_free (z);
  g_free (eps);
  g_free (qbar);
  g_free (kbar);
}

static void
check_error_naive (RpeSpeMethod method, gboolean gated)
{
  RpeSpeParams p;
  const size_t n = 12, rl[2] = { 3, 10 }, S = 2;
  RpeCurveErrorConfig cfg = { 0 };
  double mean[2], rms[2], sd[2], pm[12], pr[12], psd[12];

  make_params (&p, method, 2, 3, method == RPE_SPE_SINE ? 3 : 5, 21);
  cfg.params = &p;
  cfg.n = n;
  cfg.gated = gated;
  cfg.head = RPE_CURVE_ALL;
  cfg.feature = 1;
  cfg.n_seeds = S;
  cfg.seed = 100;
  g_assert_cmpint (rpe_curve_error_vs_r (&cfg, rl, 2, mean, rms, sd, NULL), ==, RPE_OK);
  for (size_t i = 0; i < 2; i++)
    {
      double e[4], m = 0, q = 0, v = 0;
      size_t c = 0;

      for (size_t s = 0; s < S; s++)
        for (size_t h = 0; h < 2; h++)
          naive_errors (&p, n, rl[i], gated, 100 + s, h, 1, &e[c++], NULL);
      for (c = 0; c < 4; c++)
        m += e[c] / 4, q += e[c] * e[c] / 4;
      for (c = 0; c < 4; c++)
        v += (e[c] - m) * (e[c] - m) / 3;
      g_assert_cmpfloat_with_epsilon (mean[i], m, 1e-5 * m);
      g_assert_cmpfloat_with_epsilon (rms[i], sqrt (q), 1e-5 * m);
      g_assert_cmpfloat_with_epsilon (sd[i], sqrt (v), 1e-4 * m);
    }

  cfg.head = 1;
  cfg.feature = RPE_CURVE_ALL;
  g_assert_cmpint (rpe_curve_error_vs_position (&cfg, 7, pm, pr, psd, NULL), ==, RPE_OK);
  {
    double rows[3 * 2][12];
    size_t c = 0;

    for (size_t s = 0; s < S; s++)
      for (size_t d = 0; d < 3; d++)
        naive_errors (&p, n, 7, gated, 100 + s, 1, d, NULL, rows[c++]);
    for (size_t m = 0; m < n; m++)
      {
        double mm = 0, q = 0;
        for (c = 0; c < 6; c++)
          mm += rows[c][m] / 6, q += rows[c][m] * rows[c][m] / 6;
        g_assert_cmpfloat_with_epsilon (pm[m], mm, 1e-5 * mm);
        g_assert_cmpfloat_with_epsilon (pr[m], sqrt (q), 1e-5 * mm);
        g_assert_cmpfloat (psd[m], >, 0);
      }
  }
  rpe_spe_params_clear (&p);
}

static void
test_error_naive (void)
{
  check_error_naive (RPE_SPE_SINE, FALSE);
  check_error_naive (RPE_SPE_SINE, TRUE);
  check_error_naive (RPE_SPE_CONV, FALSE);
  check_error_naive (RPE_SPE_CONV, TRUE);
}

/* The estimator's error falls like R^-1/2: the fitted log-log slope is within
 * 0.05 of -0.5 (statistical tolerance; the SE is also reported). */
static void
check_slope (RpeSpeMethod method, gboolean gated)
{
  RpeSpeParams p;
  size_t rl[9];
  double mean[9], rms[9], slope, se, slope_rms;
  RpeCurveErrorConfig cfg = { 0 };
  gint64 t0 = g_get_monotonic_time ();

  for (int i = 0; i < 9; i++)
    rl[i] = (size_t) 4 << i;   /* 4 .. 1024 */
  make_params (&p, method, 2, 4, method == RPE_SPE_SINE ? 5 : 16, 5);
  cfg.params = &p;
  cfg.n = 64;
  cfg.gated = gated;
  cfg.head = 0;
  cfg.feature = RPE_CURVE_ALL;
  /* the sine estimator's error lives in a 2K-dim space and fluctuates more: more seeds */
  cfg.n_seeds = method == RPE_SPE_SINE ? 128 : 16;
  cfg.seed = 1;
  g_assert_cmpint (rpe_curve_error_vs_r (&cfg, rl, 9, mean, rms, NULL, NULL), ==, RPE_OK);
  for (int i = 0; i < 9; i++)
    g_assert_true (mean[i] > 0 && isfinite (mean[i]));
  g_assert_cmpint (rpe_curve_fit_loglog ((double[]) { 4, 8, 16, 32, 64, 128, 256, 512, 1024 }, mean, 9,
                                         &slope, NULL, &se), ==, RPE_OK);
  g_assert_cmpint (rpe_curve_fit_loglog ((double[]) { 4, 8, 16, 32, 64, 128, 256, 512, 1024 }, rms, 9,
                                         &slope_rms, NULL, NULL), ==, RPE_OK);
  g_test_message ("%s%s: slope %.4f +- %.4f (rms %.4f), %.2f s", method == RPE_SPE_SINE ? "sine" : "conv",
                  gated ? " gated" : "", slope, se, slope_rms, (g_get_monotonic_time () - t0) / 1e6);
  g_assert_cmpfloat (fabs (slope + 0.5), <, 0.05);
  g_assert_cmpfloat (fabs (slope_rms + 0.5), <, 0.05);
  rpe_spe_params_clear (&p);
}

static void
test_error_slope (void)
{
  check_slope (RPE_SPE_SINE, FALSE);
  check_slope (RPE_SPE_CONV, FALSE);
  check_slope (RPE_SPE_SINE, TRUE);
  check_slope (RPE_SPE_CONV, TRUE);
}

static void
test_error_args (void)
{
  RpeSpeParams p;
  RpeCurveErrorConfig cfg = { 0 };
  size_t rl[2] = { 4, 0 };
  double m[2];
  atomic_int cancel = 1;
  RpeMonitor mon = { &cancel, NULL, NULL };

  make_params (&p, RPE_SPE_SINE, 1, 2, 2, 3);
  cfg.params = &p;
  cfg.n = 8;
  cfg.head = 0;
  cfg.feature = 0;
  cfg.n_seeds = 1;
  g_assert_cmpint (rpe_curve_error_vs_r (&cfg, rl, 2, m, NULL, NULL, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (rpe_curve_error_vs_r (&cfg, rl, 1, m, NULL, NULL, &mon), ==, RPE_ERROR_CANCELLED);
  cfg.feature = 2;
  g_assert_cmpint (rpe_curve_error_vs_r (&cfg, rl, 1, m, NULL, NULL, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  cfg.feature = 0;
  cfg.n_seeds = 0;
  g_assert_cmpint (rpe_curve_error_vs_position (&cfg, 4, m, NULL, NULL, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  cfg.n_seeds = 1;
  rpe_free (p.gate);
  p.gate = NULL;
  cfg.gated = true;
  g_assert_cmpint (rpe_curve_error_vs_position (&cfg, 4, m, NULL, NULL, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  rpe_spe_params_clear (&p);
}

/* ---------------------------------------------------------------------- */
/* Extrapolation                                                          */

/* Naive Spearman: average ranks by counting, then Pearson. */
static double
naive_spearman (const double *x, const double *y, size_t n)
{
  double *rx = g_new (double, n), *ry = g_new (double, n), mx = (n + 1) / 2.0, sxy = 0, sxx = 0, syy = 0;

  for (size_t i = 0; i < n; i++)
    {
      double lx = 0, ex = 0, ly = 0, ey = 0;
      for (size_t j = 0; j < n; j++)
        {
          /* ties as the metric defines them: equal within a relative 1e-6 */
          double tol = 1e-6 * MAX (fabs (y[i]), fabs (y[j]));
          lx += x[j] < x[i], ex += x[j] == x[i];
          ly += y[j] < y[i] - tol, ey += fabs (y[j] - y[i]) <= tol;
        }
      rx[i] = 1 + lx + (ex - 1) / 2;
      ry[i] = 1 + ly + (ey - 1) / 2;
    }
  for (size_t i = 0; i < n; i++)
    {
      sxy += (rx[i] - mx) * (ry[i] - mx);
      sxx += (rx[i] - mx) * (rx[i] - mx);
      syy += (ry[i] - mx) * (ry[i] - mx);
    }
  g_free (rx);
  g_free (ry);
  return syy > 0 && sxx > 0 ? sxy / sqrt (sxx * syy) : 0.0;
}

/* Naive metrics from the full logits matrix l (N x N, double) of one head.
 * bias != NULL: FastRPB (b = softmax + w). */
static void
naive_metrics (const double *l, const float *bias, size_t n, size_t nt, size_t W, gboolean causal,
               double *dist, double *ent, double *ti, double *mono)
{
  double *a = g_new0 (double, n * n), *u = g_new0 (double, n * n);
  long kmin = causal ? 0 : -(long) (W - 1), kmax = (long) W - 1;
  size_t noff = (size_t) (kmax - kmin + 1);
  double *pbar = g_new0 (double, noff);

  for (size_t m = 0; m < n; m++)
    {
      size_t end = causal ? m + 1 : n;
      double mx = -INFINITY, s = 0, as = 0;

      for (size_t j = 0; j < end; j++)
        mx = MAX (mx, l[m * n + j]);
      for (size_t j = 0; j < end; j++)
        s += exp (l[m * n + j] - mx);
      for (size_t j = 0; j < end; j++)
        {
          a[m * n + j] = exp (l[m * n + j] - mx) / s;
          if (bias)
            {
              a[m * n + j] += bias[m + n - 1 - j];
              u[m * n + j] = a[m * n + j];
            }
          else
            u[m * n + j] = exp (l[m * n + j]);
          as += fabs (a[m * n + j]);
        }
      dist[m] = ent[m] = 0;
      for (size_t j = 0; j < end; j++)
        {
          double p = fabs (a[m * n + j]) / as;
          dist[m] += p * fabs ((double) m - (double) j);
          if (p > 0)
            ent[m] -= p * log (p);
        }
    }
  for (long k = kmin; k <= kmax; k++)
    {
      double s = 0;
      size_t c = 0;
      for (size_t m = 0; m < nt; m++)
        if ((long) m - k >= 0 && (long) m - k < (long) nt)
          s += u[m * n + (size_t) ((long) m - k)], c++;
      pbar[k - kmin] = s / c;
    }
  for (size_t m = 0; m < n; m++)
    {
      double num = 0, den = 0, xs[256], ys[256];
      size_t c = 0;

      for (long k = kmin; k <= kmax; k++)
        {
          long j = (long) m - k;
          if (j < 0 || j >= (long) n)
            continue;
          num += pow (u[m * n + j] - pbar[k - kmin], 2);
          den += pow (pbar[k - kmin], 2);
          xs[c] = labs (k);
          ys[c] = u[m * n + j];
          c++;
        }
      ti[m] = sqrt (num / den);
      mono[m] = c < 2 ? NAN : (1 + naive_spearman (xs, ys, c)) / 2;
    }
  g_free (a);
  g_free (u);
  g_free (pbar);
}

static void
assert_close_arrays (const double *a, const double *b, size_t n, double tol, const char *what)
{
  for (size_t i = 0; i < n; i++)
    {
      if (isnan (b[i]))
        {
          g_assert_true (isnan (a[i]));
          continue;
        }
      if (!(fabs (a[i] - b[i]) <= tol * MAX (1.0, fabs (b[i]))))
        g_test_message ("%s[%zu]: %.9g vs %.9g", what, i, a[i], b[i]);
      g_assert_cmpfloat (fabs (a[i] - b[i]), <=, tol * MAX (1.0, fabs (b[i])));
    }
}

/* Full logits (H, N, N) of each model, naive or from the full-matrix core calls. */
static double *
full_logits (RpeCurveModelKind kind, const RpeSpeParams *spe, gboolean gated, size_t R, uint64_t seed,
             size_t n, size_t H, size_t D, const double *c)
{
  double *l = g_new0 (double, H * n * n);

  for (size_t h = 0; h < H; h++)
    for (size_t m = 0; m < n; m++)
      for (size_t j = 0; j < n; j++)
        {
          double v = 0;

          switch (kind)
            {
            case RPE_CURVE_MODEL_APE:
              for (size_t d = 0; d < D; d++)
                {
                  size_t i2 = d / 2 * 2;
                  double fr = pow (10000.0, -(double) i2 / D);
                  double pm = d % 2 ? cos (m * fr) : sin (m * fr), pn = d % 2 ? cos (j * fr) : sin (j * fr);
                  v += (c[d] + pm) * (c[d] + pn);
                }
              break;
            case RPE_CURVE_MODEL_SPE_EXACT:
              for (size_t d = 0; d < D; d++)
                v += c[d] * c[d] * naive_template (spe, h, d, (long) m - (long) j, gated);
              break;
            case RPE_CURVE_MODEL_LRPE:
              /* rotation, identity P, theta a: each pair contributes |c_pair|^2 cos((n - m) a_k) */
              for (size_t k = 0; k < D / 2; k++)
                v += (c[2 * k] * c[2 * k] + c[2 * k + 1] * c[2 * k + 1])
                     * cos (((double) j - (double) m) * pow (10000.0, -2.0 * k / D));
              break;
            case RPE_CURVE_MODEL_FASTRPB:
              for (size_t d = 0; d < D; d++)
                v += c[d] * c[d];
              break;
            default:
              break;
            }
          l[(h * n + m) * n + j] = v / sqrt ((double) D);
        }

  if (kind == RPE_CURVE_MODEL_SPE_ESTIMATE)
    {
      /* the full-map path: noise, codes, gate, encode, rpe_spe_logits (H, N, N) */
      RpeSpeParams view = *spe;
      size_t zc, count = n * H * D;
      float *z, *eps = g_new (float, H * D * R), *q = g_new (float, count);
      float *qbar = g_new (float, count * R), *kbar = g_new (float, count * R);
      float *qh = g_new (float, n * H * R), *kh = g_new (float, n * H * R), *lf = g_new (float, H * n * n);

      if (!gated)
        view.gate = NULL;
      for (size_t i = 0; i < count; i++)
        q[i] = (float) c[i % D];
      g_assert_cmpint (rpe_spe_noise_size (&view, n, R, &zc), ==, RPE_OK);
      z = g_new (float, zc);
      g_assert_cmpint (rpe_spe_noise_fill (&view, n, R, seed, z), ==, RPE_OK);
      g_assert_cmpint (rpe_spe_codes (&view, n, R, z, qbar, kbar, NULL), ==, RPE_OK);
      if (gated)
        {
          g_assert_cmpint (rpe_spe_gate_noise_fill (&view, R, seed, eps), ==, RPE_OK);
          g_assert_cmpint (rpe_spe_gate_codes (&view, n, R, eps, qbar, kbar), ==, RPE_OK);
        }
      g_assert_cmpint (rpe_spe_encode (n, H, D, R, qbar, kbar, q, q, qh, kh, NULL), ==, RPE_OK);
      g_assert_cmpint (rpe_spe_logits (n, H, R, qh, kh, lf, NULL), ==, RPE_OK);
      for (size_t i = 0; i < H * n * n; i++)
        l[i] = lf[i];
      g_free (z); g_free (eps); g_free (q); g_free (qbar); g_free (kbar); g_free (qh); g_free (kh); g_free (lf);
    }
  return l;
}

static void
check_extrapolation_model (RpeCurveModelKind kind, gboolean gated, gboolean causal, const float *content)
{
  const size_t H = 2, D = 4, nt = 8, n = 24, W = 6, R = 16;
  RpeSpeParams spe;
  RpeLrpe *lrpe = NULL;
  RpeLrpeConfig lc = { 0 };
  RpeCurveModel model = { 0 };
  RpeCurveExtrapolationConfig cfg = { 0 };
  float *bias = g_new (float, H * (2 * n - 1));
  double c[4], *l, ref[4][24], got[4][24], avg[4][24] = { { 0 } };
  const size_t blocks[3] = { 1, 5, 0 };
  RpeStatus st;

  make_params (&spe, kind == RPE_CURVE_MODEL_SPE_ESTIMATE ? RPE_SPE_CONV : RPE_SPE_SINE, H, D, 3, 31);
  for (size_t d = 0; d < D; d++)
    c[d] = content ? content[d] : 0.5;
  for (size_t i = 0; i < H * (2 * n - 1); i++)
    bias[i] = (float) (0.05 * sin (0.7 * i) + 0.02);
  lc.dim = D;
  lc.length = nt;
  lc.p = RPE_LRPE_P_IDENTITY;
  lc.lambda = RPE_LRPE_LAMBDA_ROTATION;
  lc.theta_kind = RPE_LRPE_THETA_A;
  lrpe = rpe_lrpe_new (&lc, &st);
  g_assert_nonnull (lrpe);

  model.kind = kind;
  model.spe = &spe;
  model.gated = gated;
  model.realizations = R;
  model.seed = 77;
  model.lrpe = lrpe;
  model.bias = bias;
  model.bias_per_head = true;
  cfg.n_train = nt;
  cfg.n_max = n;
  cfg.n_heads = H;
  cfg.n_features = D;
  cfg.window = W;
  cfg.causal = causal;
  cfg.content = content;

  g_test_message ("kind %d gated %d causal %d content %d", kind, gated, causal, content != NULL);
  l = full_logits (kind, &spe, gated, R, 77, n, H, D, c);
  for (size_t h = 0; h < H; h++)
    {
      naive_metrics (l + h * n * n, kind == RPE_CURVE_MODEL_FASTRPB ? bias + h * (2 * n - 1) : NULL,
                     n, nt, W, causal, ref[0], ref[1], ref[2], ref[3]);
      for (size_t b = 0; b < 3; b++)
        {
          cfg.block_rows = blocks[b];
          g_assert_cmpint (rpe_curve_extrapolation (&cfg, &model, h, got[0], got[1], got[2], got[3], NULL), ==, RPE_OK);
          assert_close_arrays (got[0], ref[0], n, 2e-5, "distance");
          assert_close_arrays (got[1], ref[1], n, 2e-5, "entropy");
          assert_close_arrays (got[2], ref[2], n, 2e-5, "ti");
          assert_close_arrays (got[3], ref[3], n, 1e-9, "mono");
        }
      for (size_t a = 0; a < 4; a++)
        for (size_t m = 0; m < n; m++)
          avg[a][m] += got[a][m] / H;
    }
  /* the mean over heads */
  g_assert_cmpint (rpe_curve_extrapolation (&cfg, &model, RPE_CURVE_ALL, got[0], got[1], got[2], got[3], NULL), ==, RPE_OK);
  for (size_t a = 0; a < 4; a++)
    assert_close_arrays (got[a], avg[a], n, 1e-12, "head mean");

  g_free (l);
  g_free (bias);
  rpe_lrpe_free (lrpe);
  rpe_spe_params_clear (&spe);
}

static void
test_extrapolation_naive (void)
{
  const float content[4] = { 0.9f, -0.3f, 0.1f, 0.4f };


  for (int causal = 0; causal < 2; causal++)
    {
      check_extrapolation_model (RPE_CURVE_MODEL_APE, FALSE, causal, NULL);
      check_extrapolation_model (RPE_CURVE_MODEL_APE, FALSE, causal, content);
      check_extrapolation_model (RPE_CURVE_MODEL_SPE_EXACT, FALSE, causal, NULL);
      check_extrapolation_model (RPE_CURVE_MODEL_SPE_EXACT, TRUE, causal, content);
      check_extrapolation_model (RPE_CURVE_MODEL_SPE_ESTIMATE, FALSE, causal, NULL);
      check_extrapolation_model (RPE_CURVE_MODEL_SPE_ESTIMATE, TRUE, causal, content);
      check_extrapolation_model (RPE_CURVE_MODEL_LRPE, FALSE, causal, content);
      check_extrapolation_model (RPE_CURVE_MODEL_FASTRPB, FALSE, causal, content);
    }
}

static void
progress_cb (double fraction, void *user_data)
{
  double *last = user_data;

  g_assert_cmpfloat (fraction, >=, *last);
  *last = fraction;
}

/* Exact SPE with identical content is stationary: TI ~ 0 at every position,
 * before and beyond N_train; sinusoidal APE is not. */
static void
test_extrapolation_stationary (void)
{
  const size_t H = 4, D = 16, nt = 64, n = 256;
  RpeSpeParams sine, conv;
  RpeCurveModel models[5] = {
    { .kind = RPE_CURVE_MODEL_APE, .name = "ape" },
    { .kind = RPE_CURVE_MODEL_SPE_EXACT, .name = "sine", .spe = &sine, .gated = true },
    { .kind = RPE_CURVE_MODEL_SPE_EXACT, .name = "conv", .spe = &conv, .gated = false },
    { .kind = RPE_CURVE_MODEL_SPE_EXACT, .name = "sine_ug", .spe = &sine, .gated = false },
    { .kind = RPE_CURVE_MODEL_SPE_EXACT, .name = "conv_g", .spe = &conv, .gated = true },
  };
  RpeCurveExtrapolationConfig cfg = { nt, n, H, D, 0, true, NULL, 0 };
  RpeCurveTable *t;
  RpeStatus st;
  double last = 0, ape_max = 0;
  RpeMonitor mon = { NULL, progress_cb, &last };

  make_params (&sine, RPE_SPE_SINE, H, D, 5, 41);
  make_params (&conv, RPE_SPE_CONV, H, D, 32, 42);
  for (int causal = 0; causal < 2; causal++)
    {
      cfg.causal = causal;
      last = 0;
      t = rpe_curve_extrapolation_table (&cfg, models, 5, RPE_CURVE_ALL, &st, &mon);
      g_assert_cmpint (st, ==, RPE_OK);
      g_assert_cmpfloat_with_epsilon (last, 1.0, 1e-12);
      g_assert_cmpuint (rpe_curve_table_n_rows (t), ==, n);
      g_assert_cmpuint (rpe_curve_table_n_cols (t), ==, 1 + 5 * 4);
      g_assert_cmpstr (rpe_curve_table_column_name (t, 3), ==, "ape_ti");
      g_assert_cmpstr (rpe_curve_table_column_name (t, 8), ==, "sine_mono");
      g_assert_cmpstr (rpe_curve_table_get_meta (t, "n_train"), ==, "64");
      g_assert_cmpstr (rpe_curve_table_get_meta (t, "window"), ==, "64");
      for (size_t i = 1; i < 5; i++)
        {
          const double *ti = rpe_curve_table_column_const (t, 4 * i + 3);
          for (size_t m = 0; m < n; m++)
            g_assert_cmpfloat (ti[m], <, 1e-12);
        }
      for (size_t m = 0; m < n; m++)
        ape_max = MAX (ape_max, rpe_curve_table_column_const (t, 3)[m]);
      g_test_message ("causal=%d: APE max TI %.4f", causal, ape_max);
      g_assert_cmpfloat (ape_max, >, 0.01);
      rpe_curve_table_free (t);
    }
  rpe_spe_params_clear (&sine);
  rpe_spe_params_clear (&conv);
}

static void
test_extrapolation_args (void)
{
  RpeSpeParams sine;
  RpeCurveModel model = { .kind = RPE_CURVE_MODEL_SPE_EXACT, .name = "s", .spe = &sine };
  RpeCurveExtrapolationConfig cfg = { 8, 32, 2, 4, 0, false, NULL, 0 };
  double out[32];
  atomic_int cancel = 1;
  RpeMonitor mon = { &cancel, NULL, NULL };
  RpeStatus st;

  make_params (&sine, RPE_SPE_SINE, 2, 4, 2, 1);
  g_assert_cmpint (rpe_curve_extrapolation (&cfg, &model, 0, out, NULL, NULL, NULL, &mon), ==, RPE_ERROR_CANCELLED);
  g_assert_null (rpe_curve_extrapolation_table (&cfg, &model, 1, 0, &st, &mon));
  g_assert_cmpint (st, ==, RPE_ERROR_CANCELLED);
  g_assert_cmpint (rpe_curve_extrapolation (&cfg, &model, 2, out, NULL, NULL, NULL, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  cfg.window = 9;   /* > N_train */
  g_assert_cmpint (rpe_curve_extrapolation (&cfg, &model, 0, out, NULL, NULL, NULL, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  cfg.window = 0;
  cfg.n_features = 3;   /* does not match the params */
  g_assert_cmpint (rpe_curve_extrapolation (&cfg, &model, 0, out, NULL, NULL, NULL, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  cfg.n_features = 4;
  model.kind = RPE_CURVE_MODEL_FASTRPB;   /* no bias */
  g_assert_cmpint (rpe_curve_extrapolation (&cfg, &model, 0, out, NULL, NULL, NULL, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  model.kind = RPE_CURVE_MODEL_SPE_ESTIMATE;   /* R = 0 */
  g_assert_cmpint (rpe_curve_extrapolation (&cfg, &model, 0, out, NULL, NULL, NULL, NULL), ==, RPE_ERROR_INVALID_ARGUMENT);
  /* the memory budget bounds the work buffers */
  model.kind = RPE_CURVE_MODEL_APE;
  cfg.n_max = (size_t) 1 << 40;
  g_assert_cmpint (rpe_curve_extrapolation (&cfg, &model, 0, out, NULL, NULL, NULL, NULL), ==, RPE_ERROR_NO_MEMORY);
  cfg.n_max = SIZE_MAX / 2;
  g_assert_cmpint (rpe_curve_extrapolation (&cfg, &model, 0, out, NULL, NULL, NULL, NULL), ==, RPE_ERROR_OVERFLOW);
  /* the whole table is sized before a column is allocated or a model computed: 2^22
   * rows of 1 + 4 columns (and a model's working rows) are 288 MiB, over 48 MiB,
   * though each column alone (32 MiB) would pass a per-allocation check */
  cfg.n_max = (size_t) 1 << 22;
  rpe_budget_set ((size_t) 48 << 20);
  g_assert_null (rpe_curve_extrapolation_table (&cfg, &model, 1, RPE_CURVE_ALL, &st, NULL));
  g_assert_cmpint (st, ==, RPE_ERROR_NO_MEMORY);
  rpe_budget_set (0);
  rpe_spe_params_clear (&sine);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/core/curves/table-csv", test_table_csv);
  g_test_add_func ("/core/curves/fit", test_fit);
  g_test_add_func ("/core/curves/profile", test_profile);
  g_test_add_func ("/core/curves/error/naive", test_error_naive);
  g_test_add_func ("/core/curves/error/slope", test_error_slope);
  g_test_add_func ("/core/curves/error/args", test_error_args);
  g_test_add_func ("/core/curves/extrapolation/naive", test_extrapolation_naive);
  g_test_add_func ("/core/curves/extrapolation/stationary", test_extrapolation_stationary);
  g_test_add_func ("/core/curves/extrapolation/args", test_extrapolation_args);
  return g_test_run ();
}

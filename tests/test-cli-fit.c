/* test-cli-fit.c: `rpe fit` end to end (issue 16).
 *
 * The fitted checkpoint is read back two independent ways and must give the error `rpe fit`
 * printed: (1) `rpe compute template` (the engine, through the checkpoint reader), its head
 * profiles formed here; (2) the raw safetensors values through sigmoid/softplus written here
 * from docs/math.md.  Targets are evaluated here too.  Also the state_dict names and shapes, the
 * CSV, the sweep, and bad input exiting with 2 (or 1 for an unwritable output). */
#include "config.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "rpe-npy.h"
#include "rpe-safetensors.h"
#include "rpe-test-utils.h"

/* the number on the last line "relative error E" */
static double
last_error (const char *out)
{
  g_autofree char *copy = g_strstrip (g_strdup (out));
  g_auto (GStrv) lines = g_strsplit (copy, "\n", -1);
  guint n = g_strv_length (lines);
  const char *last;
  char *end = NULL;
  double e;

  g_assert_cmpuint (n, >=, 1);
  last = lines[n - 1];
  g_assert_true (g_str_has_prefix (last, "relative error "));
  e = g_ascii_strtod (last + strlen ("relative error "), &end);
  g_assert_true (end != NULL && *end == '\0');
  g_assert_true (isfinite (e));
  return e;
}

static double
err_of (size_t H, size_t n, const double *b, const double *l)
{
  size_t len = 2 * n - 1;
  double num = 0, den = 0;

  for (size_t h = 0; h < H; h++)
    {
      double mb = 0, ml = 0;
      for (size_t i = 0; i < len; i++)
        {
          mb += b[h * len + i] / (double) len;
          ml += l[h * len + i] / (double) len;
        }
      for (size_t i = 0; i < len; i++)
        {
          double e = (l[h * len + i] - ml) - (b[h * len + i] - mb);
          num += e * e;
          den += (b[h * len + i] - mb) * (b[h * len + i] - mb);
        }
    }
  return sqrt (num / den);
}

typedef enum { T_ALIBI, T_KERPLE_LOG, T_T5 } Target;

/* the T5 table of the test: (32, H), a smooth decreasing bias per direction */
static float
t5_value (size_t bucket, size_t h)
{
  return (float) (-(double) (bucket % 16) * (0.3 + 0.1 * h) + (bucket >= 16 ? 0.5 : 0.0));
}

/* T5 buckets (32, 128, bidirectional) in integers: see test-core-fit.c */
static size_t
t5_bucket (long tau)
{
  long a = labs (tau);
  size_t b = tau < 0 ? 16 : 0;

  if (a < 8)
    return b + (size_t) a;
  b += 8;
  for (int j = 1; j <= 7; j++)
    if (a * a >= 64L << j)
      b++;
  return b;
}

static double
target_value (Target t, size_t H, size_t h, long tau)
{
  switch (t)
    {
    case T_ALIBI:
      return -pow (2.0, -8.0 * (double) (h + 1) / (double) H) * labs (tau);
    case T_KERPLE_LOG:
      return -2.0 * log (1.0 + 0.5 * labs (tau));
    case T_T5:
    default:
      return t5_value (t5_bucket (tau), h);
    }
}

static double
sigm (double x)
{
  return 1.0 / (1.0 + exp (-x));
}

static double
softp (double x)
{
  return x > 0 ? x + log1p (exp (-x)) : log1p (exp (x));
}

static void
check_readback (const char *method, gboolean gated, Target target)
{
  static const char *names[] = { "alibi", "kerple-log", "t5" };
  size_t H = 3, D = 4, n = 40, len = 2 * n - 1, size = strcmp (method, "sine") == 0 ? 3 : 10;
  g_autofree char *ckpt = rpe_test_tmp_path ("fit.safetensors");
  g_autofree char *tpl = rpe_test_tmp_path ("fit-template.npy");
  g_autofree char *t5 = rpe_test_tmp_path ("t5.npy");
  g_autofree char *out = NULL;
  g_autofree char *extra = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeTensor) tt = NULL;
  g_autoptr (RpeTensorSet) set = NULL;
  double *b = g_new (double, H * len), *l = g_new (double, H * len), *raw = g_new0 (double, H * len);
  double e, e_tpl, e_raw;

  if (target == T_T5)
    {
      float table[32 * 3];
      gsize shape[2] = { 32, H };
      for (size_t k = 0; k < 32; k++)
        for (size_t h = 0; h < H; h++)
          table[k * H + h] = t5_value (k, h);
      g_assert_true (rpe_npy_write (t5, table, 2, shape, FALSE, &error));
      extra = g_strdup_printf ("--t5-bias '%s'", t5);
    }
  else if (target == T_KERPLE_LOG)
    extra = g_strdup ("--kerple-r1 2 --kerple-r2 0.5");
  else
    extra = g_strdup ("");
  g_assert_cmpint (rpe_test_run_cli (&out, NULL, "fit --target %s %s --method %s %s --heads %zu --features %zu "
                            "--sines 3 --kernel 10 --length %zu -o '%s'", names[target], extra, method,
                            gated ? "--gated" : "", H, D, n, ckpt), ==, 0);
  e = last_error (out);
  for (size_t h = 0; h < H; h++)
    for (size_t i = 0; i < len; i++)
      b[h * len + i] = target_value (target, H, h, (long) i - (long) (n - 1));

  /* (1) the engine's templates (H, D, N, N); an ungated conv file reads as (1, H*D, N, N) */
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute template --checkpoint '%s' --length %zu -o '%s'", ckpt, n, tpl), ==, 0);
  tt = rpe_npy_read (tpl, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (tt->ndim, ==, 4);
  g_assert_cmpuint (tt->shape[0] * tt->shape[1], ==, H * D);
  memset (l, 0, H * len * sizeof (double));
  for (size_t c = 0; c < H * D; c++)
    for (size_t i = 0; i < len; i++)
      {
        long tau = (long) i - (long) (n - 1);
        const float *m = tt->data + c * n * n;
        /* P(m, n') with m - n' = tau */
        double v = tau >= 0 ? m[(size_t) tau * n] : m[(size_t) -tau];
        l[(c / D) * len + i] += v / sqrt ((double) D);
      }
  e_tpl = err_of (H, n, b, l);

  /* (2) the raw values through the transforms written here (docs/math.md, sections 1-3) */
  set = rpe_safetensors_read (ckpt, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rpe_tensor_set_size (set), ==, (strcmp (method, "sine") == 0 ? 3 : 2) + (gated ? 1 : 0));
  {
    const RpeTensor *gate = rpe_tensor_set_lookup (set, "spe_filters.0.gate");

    g_assert_true ((gate != NULL) == gated);
    if (gate != NULL)
      g_assert_true (gate->ndim == 2 && gate->shape[0] == H && gate->shape[1] == D);
    if (strcmp (method, "sine") == 0)
      {
        const RpeTensor *fr = rpe_tensor_set_lookup (set, "spe.freqs");
        const RpeTensor *of = rpe_tensor_set_lookup (set, "spe.offsets");
        const RpeTensor *ga = rpe_tensor_set_lookup (set, "spe.gains");

        g_assert_true (fr != NULL && of != NULL && ga != NULL);
        g_assert_true (fr->ndim == 3 && fr->shape[0] == H && fr->shape[1] == D && fr->shape[2] == size);
        for (size_t c = 0; c < H * D; c++)
          {
            double g = gate != NULL ? sigm (gate->data[c]) : 0;
            for (size_t k = 0; k < size; k++)
              {
                double f = sigm (fr->data[c * size + k]) / 2, th = of->data[c * size + k];
                double lam = softp (ga->data[c * size + k]);
                for (size_t i = 0; i < len; i++)
                  {
                    double tau = (double) i - (double) (n - 1);
                    /* docs/math.md, sections 1 and 3: (1-g) lambda^2/(2K) cos(2 pi f tau + theta), + g once per (h, d) */
                    raw[(c / D) * len + i] += ((1 - g) * lam * lam / (2.0 * size) * cos (2 * M_PI * f * tau + th)
                                               + g / size) / sqrt ((double) D);
                  }
              }
          }
      }
    else
      {
        /* the reference swaps the names: the query filter is conv_k.weight */
        const RpeTensor *cq = rpe_tensor_set_lookup (set, "spe.conv_q.weight");
        const RpeTensor *ck = rpe_tensor_set_lookup (set, "spe.conv_k.weight");

        g_assert_true (cq != NULL && ck != NULL);
        g_assert_true (cq->ndim == 3 && cq->shape[0] == H * D && cq->shape[1] == 1 && cq->shape[2] == size);
        for (size_t c = 0; c < H * D; c++)
          {
            double g = gate != NULL ? sigm (gate->data[c]) : 0;
            for (size_t i = 0; i < len; i++)
              {
                long tau = (long) i - (long) (n - 1);
                double s = 0;
                for (long j = 0; j < (long) size; j++)
                  if (j + tau >= 0 && j + tau < (long) size)
                    s += (double) ck->data[c * size + j] * cq->data[c * size + j + tau];
                raw[(c / D) * len + i] += ((1 - g) * s + g) / sqrt ((double) D);
              }
          }
      }
  }
  e_raw = err_of (H, n, b, raw);
  if (g_test_verbose ())
    g_printerr ("%s %s %s: printed %.9g, template %.9g, raw %.9g\n", method, gated ? "gated" : "",
                names[target], e, e_tpl, e_raw);
  g_assert_cmpfloat (fabs (e_tpl - e), <=, 1e-4 * e + 1e-6);
  g_assert_cmpfloat (fabs (e_raw - e), <=, 1e-4 * e + 1e-6);
  /* a fit, not a constant: better than doing nothing */
  g_assert_cmpfloat (e, <, 1.0);
  g_free (b);
  g_free (l);
  g_free (raw);
}

static void
test_readback (void)
{
  for (int t = 0; t < 3; t++)
    for (int gated = 0; gated < 2; gated++)
      {
        check_readback ("sine", gated, t);
        check_readback ("conv", gated, t);
      }
}

static void
test_csv_sweep (void)
{
  g_autofree char *ckpt = rpe_test_tmp_path ("sweep.safetensors");
  g_autofree char *csv = rpe_test_tmp_path ("profiles.csv");
  g_autofree char *sweep = rpe_test_tmp_path ("sweep.csv");
  g_autofree char *out = NULL;
  g_autofree char *text = NULL;
  g_auto (GStrv) lines = NULL;
  g_auto (GStrv) slines = NULL;
  size_t H = 2, n = 30;
  double prev = INFINITY;
  int sweep_lines = 0;

  g_assert_cmpint (rpe_test_run_cli (&out, NULL, "fit --target alibi --heads 2 --features 2 --length 30 --sines 2 "
                            "--sweep-size 1,2,4 --sweep-csv '%s' --csv '%s' -o '%s'", sweep, csv, ckpt), ==, 0);
  lines = g_strsplit (out, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    if (g_str_has_prefix (lines[i], "K "))
      {
        double e = g_ascii_strtod (strstr (lines[i], "error ") + 6, NULL);
        g_assert_cmpfloat (e, <=, prev + 1e-6);   /* more sines never fit worse here */
        prev = e;
        sweep_lines++;
      }
  g_assert_cmpint (sweep_lines, ==, 3);
  g_assert_true (g_file_get_contents (sweep, &text, NULL, NULL));
  slines = g_strsplit (g_strstrip (text), "\n", -1);
  g_assert_cmpuint (g_strv_length (slines), ==, 4);
  g_assert_cmpstr (slines[0], ==, "size,relative_error");
  g_assert_true (g_str_has_prefix (slines[3], "4,"));
  g_clear_pointer (&text, g_free);

  /* profiles: 1 comment + header + 2N-1 rows, target columns equal ALiBi */
  {
    g_auto (GStrv) rows = NULL;
    g_assert_true (g_file_get_contents (csv, &text, NULL, NULL));
    rows = g_strsplit (g_strstrip (text), "\n", -1);
    g_assert_cmpuint (g_strv_length (rows), ==, 2 + 2 * n - 1);
    g_assert_cmpstr (rows[1], ==, "tau,target_h0,fit_h0,target_h1,fit_h1");
    for (size_t i = 0; i < 2 * n - 1; i++)
      {
        g_auto (GStrv) cols = g_strsplit (rows[2 + i], ",", -1);
        long tau = (long) i - (long) (n - 1);

        g_assert_cmpuint (g_strv_length (cols), ==, 1 + 2 * H);
        g_assert_cmpint (atol (cols[0]), ==, tau);
        for (size_t h = 0; h < H; h++)
          {
            double want = -pow (2.0, -8.0 * (double) (h + 1) / (double) H) * labs (tau);
            double fit = g_ascii_strtod (cols[2 + 2 * h], NULL);
            g_assert_cmpfloat_with_epsilon (g_ascii_strtod (cols[1 + 2 * h], NULL), want, 1e-6);
            /* the fit overlays the target (ALiBi with 4 cosines per head: close) */
            g_assert_cmpfloat (fabs (fit - want), <, 0.1 * (n - 1) * pow (2.0, -8.0 * (double) (h + 1) / (double) H));
          }
      }
  }
}

/* FastRPB PositionalBias "full" layout (1, H, 2M-1): index 0 is tau = M-1, index i >= 1 is
 * tau = i - M (docs/math.md, section 8); the CSV's target columns must show w(tau) at each tau */
static double
fastrpb_w (size_t h, long tau)
{
  return -0.1 * (double) (h + 1) * labs (tau) + (tau > 0 ? 0.25 : 0.0) + 0.01 * (double) tau;
}

static void
test_fastrpb (void)
{
  g_autofree char *file = rpe_test_tmp_path ("fastrpb.safetensors");
  g_autofree char *ckpt = rpe_test_tmp_path ("fastrpb-fit.safetensors");
  g_autofree char *csv = rpe_test_tmp_path ("fastrpb.csv");
  g_autofree char *text = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
  g_auto (GStrv) rows = NULL;
  size_t H = 2, M = 24, n = 16;
  gsize shape[3] = { 1, H, 2 * M - 1 };
  RpeTensor *w = rpe_tensor_new ("model.layers.0.pos.bias.w", 3, shape, &error);

  g_assert_no_error (error);
  for (size_t h = 0; h < H; h++)
    for (size_t i = 0; i < 2 * M - 1; i++)
      w->data[h * (2 * M - 1) + i] = (float) fastrpb_w (h, i == 0 ? (long) M - 1 : (long) i - (long) M);
  g_assert_true (rpe_tensor_set_add (set, w, &error));
  g_assert_true (rpe_safetensors_write (file, set, &error));
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "fit --target fastrpb --fastrpb '%s' --heads 2 --features 2 --length %zu "
                            "--csv '%s' -o '%s'", file, n, csv, ckpt), ==, 0);
  g_assert_true (g_file_get_contents (csv, &text, NULL, NULL));
  rows = g_strsplit (g_strstrip (text), "\n", -1);
  g_assert_cmpuint (g_strv_length (rows), ==, 2 + 2 * n - 1);
  for (size_t i = 0; i < 2 * n - 1; i++)
    {
      g_auto (GStrv) cols = g_strsplit (rows[2 + i], ",", -1);
      long tau = (long) i - (long) (n - 1);

      for (size_t h = 0; h < H; h++)
        g_assert_cmpfloat_with_epsilon (g_ascii_strtod (cols[1 + 2 * h], NULL), fastrpb_w (h, tau), 1e-6);
    }
  /* asking for more lags than the weights cover is refused */
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "fit --target fastrpb --fastrpb '%s' --heads 2 --length %zu -o '%s'",
                            file, M + 1, ckpt), ==, 2);
}

static void
test_bad_input (void)
{
  g_autofree char *ckpt = rpe_test_tmp_path ("bad.safetensors");
  g_autofree char *nan_npy = rpe_test_tmp_path ("nan.npy");
  g_autofree char *short_npy = rpe_test_tmp_path ("short.npy");
  g_autoptr (GError) error = NULL;
  float v[9] = { 0, 1, 2, NAN, 4, 5, 6, 7, 8 };
  gsize shape9[1] = { 9 }, shape5[2] = { 5, 2 };
  const char *bad[] = {
    "fit",
    "fit --target nope",
    "fit --target alibi --method fourier",
    "fit --target alibi --length 1",
    "fit --target alibi --length 99999999999",
    "fit --target alibi --heads 0",
    "fit --target alibi --alibi-slopes 1,2 --heads 3",
    "fit --target alibi --alibi-slopes nan",
    "fit --target kerple-power --kerple-r2 3",
    "fit --target kerple-log --kerple-r1 -1",
    "fit --target t5",
    "fit --target alibi --sweep-size 0,2",
    "fit --target alibi extra",
  };

  g_assert_true (rpe_npy_write (nan_npy, v, 1, shape9, FALSE, &error));
  {
    float ok[10] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
    g_assert_true (rpe_npy_write (short_npy, ok, 2, shape5, FALSE, &error));
  }
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autofree char *err = NULL;
      g_assert_cmpint (rpe_test_run_cli (NULL, &err, "%s -o '%s'", bad[i], ckpt), ==, 2);
      g_assert_true (strstr (err, "rpe fit") != NULL);
    }
  {
    g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "fit --target file --target-file '%s' -o '%s'", nan_npy, ckpt), ==, 2);
    g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "fit --target t5 --t5-bias '%s' --heads 2 -o '%s'", short_npy, ckpt), ==, 2);
    g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "fit --target fastrpb --fastrpb '%s' --length 20 --heads 2 -o '%s'",
                              short_npy, ckpt), ==, 2);
    g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "fit --target file --target-file /nonexistent.npy -o '%s'", ckpt), ==, 2);
    /* an unwritable output: 1 */
    g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "fit --target alibi --length 8 -o /nonexistent-dir/x.safetensors"), ==, 1);
  }
  g_assert_false (g_file_test (ckpt, G_FILE_TEST_EXISTS));
}

/* ---- noise schemes through the CLI (rpe-noise.h) ---------------------------------- */

static gboolean
same_file (const char *a, const char *b)
{
  g_autofree char *x = NULL;
  g_autofree char *y = NULL;
  gsize nx, ny;

  g_assert_true (g_file_get_contents (a, &x, &nx, NULL));
  g_assert_true (g_file_get_contents (b, &y, &ny, NULL));
  return nx == ny && memcmp (x, y, nx) == 0;
}

static void
test_noise_cli (void)
{
  g_autofree char *a = rpe_test_tmp_path ("noise-a.npy");
  g_autofree char *b = rpe_test_tmp_path ("noise-b.npy");
  g_autofree char *csv = rpe_test_tmp_path ("noise-err.csv");
  g_autofree char *text = NULL;
  g_autoptr (GError) error = NULL;
  const char *common = "--heads 2 --features 3 --sines 3 --kernel 5 --length 20 --realizations 7 --seed 4";

  /* iid stays bit-identical to today's draw, for sine and conv, fused and code paths */
  for (int m = 0; m < 2; m++)
    for (int what = 0; what < 2; what++)
      {
        const char *w = what ? "empirical" : "logits --content random";
        const char *method = m ? "conv" : "sine";
        g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute %s --method %s %s -o '%s'", w, method, common, a), ==, 0);
        g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute %s --method %s %s --noise-scheme iid -o '%s'", w, method, common, b), ==, 0);
        g_assert_true (same_file (a, b));
        g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute %s --method %s %s --noise-scheme orthogonal -o '%s'", w, method, common, b), ==, 0);
        g_assert_false (same_file (a, b));
      }

  /* sine + orthogonal with R = 2K + 1 (the random init is gated): the empirical template is
   * the analytic one */
  {
    g_autoptr (RpeTensor) emp = NULL;
    g_autoptr (RpeTensor) ana = NULL;
    double worst = 0, scale = 0;

    g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute empirical --method sine %s --noise-scheme orthogonal -o '%s'", common, a), ==, 0);
    /* the analytic template draws nothing: --realizations is not one of its options */
    g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute template --method sine --heads 2 --features 3 --sines 3 "
                              "--length 20 --seed 4 -o '%s'", b), ==, 0);
    emp = rpe_npy_read (a, &error);
    ana = rpe_npy_read (b, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (emp->n_elements, ==, ana->n_elements);
    for (gsize i = 0; i < ana->n_elements; i++)
      {
        worst = fmax (worst, fabs (emp->data[i] - ana->data[i]));
        scale = fmax (scale, fabs (ana->data[i]));
      }
    g_assert_cmpfloat (worst, <, 1e-5 * scale);
  }

  /* one error curve per scheme */
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "curves error --method sine --heads 1 --features 2 --sines 2 --length 16 "
                            "--realizations-list 2,5,16 --seeds 3 --noise-scheme iid,orthogonal,antithetic,sobol -o '%s'",
                            csv), ==, 0);
  g_assert_true (g_file_get_contents (csv, &text, NULL, NULL));
  {
    g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
    g_auto (GStrv) head = NULL;
    gint orth = -1, iid = -1;
    guint i = 0;

    while (lines[i] != NULL && lines[i][0] == '#')
      i++;
    head = g_strsplit (lines[i], ",", -1);
    for (gint j = 0; head[j] != NULL; j++)
      {
        if (g_str_equal (head[j], "sine_orthogonal"))
          orth = j;
        if (g_str_equal (head[j], "sine_iid"))
          iid = j;
      }
    g_assert_cmpint (orth, >, 0);
    g_assert_cmpint (iid, >, 0);
    g_assert_nonnull (strstr (lines[i], "sine_antithetic"));
    g_assert_nonnull (strstr (lines[i], "sine_sobol"));
    /* rows R = 5 and 16 are >= 2K + 1 = 5: exact; iid is not */
    for (guint k = 2; k <= 3; k++)
      {
        g_auto (GStrv) row = g_strsplit (lines[i + k], ",", -1);
        g_assert_cmpfloat (g_ascii_strtod (row[orth], NULL), <, 1e-5);
        g_assert_cmpfloat (g_ascii_strtod (row[iid], NULL), >, 1e-2);
      }
  }

  /* bad usage */
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "compute logits %s --noise-scheme halton -o '%s'", common, a), ==, 2);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "curves error %s --noise-scheme iid,bogus -o '%s'", common, csv), ==, 2);
  g_assert_cmpint (rpe_test_run_cli (NULL, NULL, "curves profile %s --noise-scheme sobol -o '%s'", common, csv), ==, 2);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cli/fit/readback", test_readback);
  g_test_add_func ("/cli/fit/csv-sweep", test_csv_sweep);
  g_test_add_func ("/cli/fit/fastrpb", test_fastrpb);
  g_test_add_func ("/cli/fit/bad-input", test_bad_input);
  g_test_add_func ("/cli/noise/schemes", test_noise_cli);
  return g_test_run ();
}

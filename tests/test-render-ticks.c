/* test-render-ticks.c: the labels of every axis and colour bar are data (rpe-ticks.h).
 *
 *   step          rpe_ticks_step against a walk over 1, 2, 5 x 10^k;
 *   values        value and log axes: every label reads back to its tick's value (also where a
 *                 mantissa of one digit cannot tell the ticks apart), at its place;
 *   positions     position axes of zoomed windows (and of lags from a negative one): absolute
 *                 positions, at their cells' centres;
 *   colour bars   every scale (linear, log, signed log, power, percentile, the SPE paper's
 *                 transform) over ranges from 1e-8 to 1e3, drawn into a PDF and read back with
 *                 pdftotext -bbox: each label's number is placed where an independent copy of
 *                 the scale puts it (to a point), lies inside the bar, the ends of a bent scale
 *                 show the true end values, a symmetric signed range has mirror-image labels;
 *   caption       a log bar's caption states the decades it spans;
 *   zoomed map    a heatmap of a window [246, 772) of positions exported to PDF (by the
 *                 library, and by `rpe export attention --rows/--cols`): its tick numbers
 *                 (pdftotext -bbox) are absolute positions at their cells' centres;
 *   tokens        a capture's tokens label every position where each cell has room for its
 *                 token (the axis, a PDF of a map of 12 positions, `rpe export attention` of a
 *                 captured input of 12 positions), and only there: a map of 256 positions
 *                 at the same size is numbered by position, its labels apart.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <cairo.h>
#include <cairo-pdf.h>

#include "rpe-export.h"
#include "rpe-test-utils.h"
#include "rpe-text.h"
#include "rpe-ticks.h"

const char *__lsan_default_suppressions (void);
const char *
__lsan_default_suppressions (void)
{
  return "leak:libfontconfig.so\n";
}

/* ------------------------------------------------------------------ words */

/* Words of a PDF: rpe_test_pdf_words (rpe-test-utils.h). */
typedef RpeTestWord Word;

/* "&amp;" etc. are not in numbers; "≥" / "≤" words are joined to the number after them. */
static char *
word_label (GArray *page,
            guint  *i)
{
  Word *w = &g_array_index (page, Word, *i);

  if ((g_str_equal (w->text, "\xe2\x89\xa5") || g_str_equal (w->text, "\xe2\x89\xa4")) && *i + 1 < page->len)
    {
      Word *next = &g_array_index (page, Word, *i + 1);

      if (fabs (next->y0 - w->y0) < 0.5)
        {
          (*i)++;
          return g_strdup_printf ("%s %s", w->text, next->text);
        }
    }
  return g_strdup (w->text);
}

/* ------------------------------------------------------------------- step */

static void
test_step (void)
{
  GRand *rand = g_rand_new_with_seed (7);

  for (int i = 0; i < 20000; i++)
    {
      double x = pow (10.0, g_rand_double_range (rand, -12.0, 12.0)), want = INFINITY;

      /* the smallest 1, 2, 5 x 10^k at least x, by walking them */
      for (int k = -14; k <= 14 && !isfinite (want); k++)
        for (int m = 0; m < 3; m++)
          {
            double s = (m == 0 ? 1.0 : m == 1 ? 2.0 : 5.0) * pow (10.0, k);

            if (s >= x * (1.0 - 1e-12))
              {
                want = s;
                break;
              }
          }
      g_assert_cmpfloat_with_epsilon (rpe_ticks_step (x), want, want * 1e-12);
    }
  /* the exact steps are steps */
  g_assert_cmpfloat (rpe_ticks_step (2.0), ==, 2.0);
  g_assert_cmpfloat (rpe_ticks_step (5.0), ==, 5.0);
  g_assert_cmpfloat (rpe_ticks_step (2.0001), ==, 5.0);
  g_assert_cmpfloat (rpe_ticks_step (NAN), ==, 1.0);
  g_assert_cmpfloat (rpe_ticks_step (-3.0), ==, 1.0);
  g_rand_free (rand);
}

/* ------------------------------------------------------------- value axes */

static gboolean
is_step (double s)
{
  double m = s / pow (10.0, floor (log10 (s) + 1e-12));

  return fabs (m - 1.0) < 1e-9 || fabs (m - 2.0) < 1e-9 || fabs (m - 5.0) < 1e-9 || fabs (m - 10.0) < 1e-9;
}

static void
check_value_axis (const RpeAxis *axis)
{
  RpeTicks t;

  rpe_ticks_compute (axis, &t);
  g_assert_cmpuint (t.n, >=, 1);
  for (size_t i = 0; i < t.n; i++)
    {
      double v = axis->kind == RPE_AXIS_LOG10 ? pow (10.0, t.tick[i].value) : t.tick[i].value;
      double read = rpe_ticks_label_value (t.tick[i].label);
      double scale = axis->kind == RPE_AXIS_LOG10 ? fabs (v) : fmax (fabs (axis->hi - axis->lo), fabs (v) * 1e-12);

      if (fabs (read - v) > scale * 1e-9 + 1e-300)
        g_error ("axis [%g, %g]: label \"%s\" reads %.17g, its tick is %.17g", axis->lo, axis->hi, t.tick[i].label,
                 read, v);
      g_assert_cmpfloat (fabs (t.tick[i].pos - (t.tick[i].value - axis->lo) / (axis->hi - axis->lo)), <, 1e-12);
      g_assert_cmpfloat (t.tick[i].pos, >=, -1e-9);
      g_assert_cmpfloat (t.tick[i].pos, <=, 1.0 + 1e-9);
      if (i > 0)
        {
          g_assert_cmpfloat (t.tick[i].pos, >, t.tick[i - 1].pos);
          if (axis->kind == RPE_AXIS_VALUE)
            g_assert_true (is_step (t.tick[i].value - t.tick[i - 1].value));
        }
    }
}

static void
test_values (void)
{
  static const double ranges[][2] = {
    { 0.0, 1.0 }, { -1.0, 1.0 }, { 1e-4, 1.5e-4 }, { 1.00e-4, 1.05e-4 }, { 0.0, 2.5e-7 }, { -3e-8, 7e-8 },
    { 1e5, 1.0001e5 }, { 123456.0, 987654.0 }, { 0.001, 0.0012 }, { 7.0, 7.003 }, { -1e3, -999.0 },
    { 0.0, 1e3 }, { 1e-8, 1e3 },
  };

  for (gsize r = 0; r < G_N_ELEMENTS (ranges); r++)
    for (int f = 0; f < 2; f++)
      for (double length = 40.0; length < 2000.0; length *= 3.0)
        {
          RpeAxis axis;

          rpe_axis_init (&axis, RPE_AXIS_VALUE, ranges[r][0], ranges[r][1], length, 30.0);
          axis.format = f == 0 ? RPE_TICK_FORMAT_FIXED : RPE_TICK_FORMAT_SHORT;
          axis.fallback_gap = 0.7;
          check_value_axis (&axis);
        }
  /* log axes: whole decades, and less than one (round values at their log10) */
  for (double lo = -9.0; lo < 3.0; lo += 1.37)
    for (double span = 0.2; span < 12.0; span *= 2.5)
      {
        RpeAxis axis;

        rpe_axis_init (&axis, RPE_AXIS_LOG10, lo, lo + span, 300.0, 40.0);
        axis.format = RPE_TICK_FORMAT_SHORT;
        axis.fallback_gap = 0.7;
        check_value_axis (&axis);
      }
  /* whole steps */
  {
    RpeAxis axis;
    RpeTicks t;

    rpe_axis_init (&axis, RPE_AXIS_VALUE, -7.0, 12.0, 1000.0, 10.0);
    axis.integer = TRUE;
    axis.max_count = 40.0;
    rpe_ticks_compute (&axis, &t);
    g_assert_cmpuint (t.n, ==, 20);
    g_assert_cmpstr (t.tick[0].label, ==, "\xe2\x88\x92" "7");
  }
}

/* ------------------------------------------------------------- positions */

static void
test_positions (void)
{
  static const double windows[][3] = {   /* lo, hi, limit */
    { 0, 256, 256 }, { 246, 772, 1024 }, { 100, 140, 256 }, { 0, 4, 4 }, { 1000.25, 1400.75, 4096 },
    { 65000, 65536, 65536 }, { 3, 5, 8 }, { -11, 12, 0 }, { -1023, 1024, 0 },
  };

  for (gsize w = 0; w < G_N_ELEMENTS (windows); w++)
    for (double length = 30.0; length < 3000.0; length *= 2.0)
      {
        RpeAxis axis;
        RpeTicks t;
        double lo = windows[w][0], hi = windows[w][1];

        rpe_axis_init (&axis, RPE_AXIS_POSITION, lo, hi, length, 25.0);
        axis.limit = (size_t) windows[w][2];
        axis.ends = TRUE;
        rpe_ticks_compute (&axis, &t);
        if (length >= 2.0 * 25.0)
          g_assert_cmpuint (t.n, >=, 2);
        for (size_t i = 0; i < t.n; i++)
          {
            double p = t.tick[i].value;

            /* whole, absolute positions of the window, numbered as they are */
            g_assert_cmpfloat (p, ==, floor (p));
            g_assert_cmpfloat (p + 0.5, >=, lo);
            g_assert_cmpfloat (p + 0.5, <=, hi);
            if (windows[w][2] > 0)
              g_assert_cmpfloat (p, <, windows[w][2]);
            g_assert_cmpfloat (rpe_ticks_label_value (t.tick[i].label), ==, p);
            /* at the centre of its cell */
            g_assert_cmpfloat (fabs (t.tick[i].pos - (p + 0.5 - lo) / (hi - lo)), <, 1e-12);
            if (i > 0)
              g_assert_cmpfloat ((t.tick[i].pos - t.tick[i - 1].pos) * length, >=, 25.0 * 0.75 - 1e-9);
          }
      }
}

/* A map of lags -11 .. 11 (a 2-D template's rows): numbered from -11, 0 among them. */
static void
test_lag_map (void)
{
  float v[23 * 23] = { 0 };
  RpeHeatmapData d;
  RpeTicks x, y;
  cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 1, 1);
  cairo_t *cr = cairo_create (s);
  gboolean zero = FALSE;

  v[0] = 1.0f;
  rpe_heatmap_data_init (&d);
  d.values = v;
  d.rows = d.cols = 23;
  d.row_origin = d.col_origin = -11;
  d.equal_aspect = TRUE;
  g_assert_true (rpe_plot_heatmap_ticks (cr, &d, 400, 400, &x, &y));
  g_assert_cmpuint (y.n, >=, 3);
  for (size_t i = 0; i < y.n; i++)
    {
      g_assert_cmpfloat (y.tick[i].value, >=, -11);
      g_assert_cmpfloat (y.tick[i].value, <=, 11);
      g_assert_cmpfloat (rpe_ticks_label_value (y.tick[i].label), ==, y.tick[i].value);
      g_assert_cmpfloat (fabs (y.tick[i].pos - (y.tick[i].value + 11.5) / 23.0), <, 1e-12);
      zero |= y.tick[i].value == 0.0;
    }
  g_assert_true (zero);
  g_assert_cmpstr (y.tick[0].label, ==, "\xe2\x88\x92" "10");
  cairo_destroy (cr);
  cairo_surface_destroy (s);
}

/* ------------------------------------------------------------ colour bars */

#define DECADES 4.0

/* Where value v goes on a bar of [lo, hi] under the scale: an independent copy of the scales
 * as rpe-plot-render.h describes them, not clamped.  *inside: v is in the part of the range
 * the bar shows, within half a point of `length` (a log scale shows 4 decades below its
 * largest magnitude on each side; below that the bar's end colour stands for the rest). */
static double
ref_position (RpeHeatmapTransform tr,
              double              gamma,
              double              lo,
              double              hi,
              double              v,
              double              length,
              gboolean           *inside)
{
  double tol = 0.5 / length, t;

  *inside = TRUE;
  switch (tr)
    {
    case RPE_HEATMAP_TRANSFORM_ATTENTION:
      *inside = v >= 0.0 && v <= 0.02 * (1.0 + 1e-12);
      return v <= 0.0 ? 0.0 : fmin (1.0, pow (v / 0.02, 0.4));
    case RPE_HEATMAP_TRANSFORM_LOG:
      if (lo < 0.0 && hi > 0.0)
        {
          double c = -lo / (hi - lo), s;

          if (v == 0.0)
            return c;
          if ((v > 0.0 && v > hi) || (v < 0.0 && v < lo))
            *inside = (v > 0.0 ? v / hi : v / lo) <= 1.0 + 1e-6;
          s = 1.0 + log10 (v > 0.0 ? v / hi : v / lo) / DECADES;   /* 0 .. 1 from the centre out */
          if (s < -tol / fmin (c, 1.0 - c))
            *inside = FALSE;
          return v > 0.0 ? c + (1.0 - c) * s : c - c * s;
        }
      if (lo >= 0.0)
        {
          double f = fmax (lo, hi * pow (10.0, -DECADES));

          t = log10 (v / f) / log10 (hi / f);
        }
      else
        {
          double f = fmax (-hi, -lo * pow (10.0, -DECADES));

          t = 1.0 - log10 (-v / f) / log10 (-lo / f);
        }
      break;
    case RPE_HEATMAP_TRANSFORM_POWER:
      if (lo < 0.0 && hi > 0.0)
        {
          double c = -lo / (hi - lo);

          t = v >= 0.0 ? c + (1.0 - c) * pow (v / hi, gamma) : c - c * pow (v / lo, gamma);
        }
      else if (lo >= 0.0)
        t = v >= lo ? pow ((v - lo) / (hi - lo), gamma) : -pow ((lo - v) / (hi - lo), gamma);
      else
        t = v <= hi ? 1.0 - pow ((hi - v) / (hi - lo), gamma) : 1.0 + pow ((v - hi) / (hi - lo), gamma);
      break;
    default:
      t = (v - lo) / (hi - lo);
      break;
    }
  if (!(t >= -tol && t <= 1.0 + tol))
    *inside = FALSE;
  return t;
}

typedef struct
{
  RpeHeatmapTransform tr;
  double              param;   /* POWER: gamma */
  double              lo, hi;
  double              length;
  RpePlotRect         bar;
  int                 page;
} BarCase;

#define FONT      10.0
#define SLOT_W    150.0
#define SLOTS     8
#define PAGE_TOP  20.0

static void
check_bar_ticks (const BarCase  *c,
                 const RpeTicks *t)
{
  double label_h = FONT * 1.2;
  double gamma = c->param > 0.0 ? c->param : 0.5;
  gboolean bent = c->tr == RPE_HEATMAP_TRANSFORM_LOG || c->tr == RPE_HEATMAP_TRANSFORM_POWER;
  gboolean symmetric = c->lo == -c->hi && c->tr != RPE_HEATMAP_TRANSFORM_ATTENTION;

  if (c->length >= 3.0 * label_h)
    g_assert_cmpuint (t->n, >=, 2);
  for (size_t i = 0; i < t->n; i++)
    {
      double v = rpe_ticks_label_value (t->tick[i].label), ref;
      gboolean inside;

      g_assert_false (isnan (v));
      ref = ref_position (c->tr, gamma, c->lo, c->hi, v, c->length, &inside);
      if (!inside || fabs (ref - t->tick[i].pos) * c->length > 0.5)
        g_error ("%s bar [%.17g, %.17g], %g long: label \"%s\" (%g) at %g belongs at %g%s",
                 rpe_plot_transform_name (c->tr), c->lo, c->hi, c->length, t->tick[i].label, v,
                 t->tick[i].pos, ref, inside ? "" : ", outside the bar");
      if (i > 0)
        g_assert_cmpfloat ((t->tick[i].pos - t->tick[i - 1].pos) * c->length, >=, label_h - 1e-9);
    }
  if (bent && t->n >= 1 && c->length >= 1.2 * label_h)
    {
      /* the true ends */
      gboolean inside;

      g_assert_cmpfloat (t->tick[t->n - 1].pos, ==, 1.0);
      g_assert_cmpfloat (fabs (ref_position (c->tr, gamma, c->lo, c->hi,
                                             rpe_ticks_label_value (t->tick[t->n - 1].label), c->length, &inside) - 1.0)
                         * c->length, <=, 0.5);
      if (c->length >= 2.0 * 1.2 * label_h)
        g_assert_cmpfloat (t->tick[0].pos, ==, 0.0);
    }
  if (symmetric)
    for (size_t i = 0; i < t->n; i++)
      {
        const RpeTick *a = &t->tick[i], *b = &t->tick[t->n - 1 - i];
        double va = rpe_ticks_label_value (a->label), vb = rpe_ticks_label_value (b->label);

        if (fabs (a->pos + b->pos - 1.0) > 1e-9 || fabs (va + vb) > 1e-9 * fabs (va))
          g_error ("%s bar [%g, %g]: \"%s\" at %g and \"%s\" at %g are not mirror images",
                   rpe_plot_transform_name (c->tr), c->lo, c->hi, a->label, a->pos, b->label, b->pos);
      }
}

static void
test_colour_bars (void)
{
  static const double mags[] = { 1e-8, 3.7e-7, 2.5e-6, 1e-4, 0.0154, 0.0254, 0.0403, 0.5, 1.0, 1.08, 7.3, 1e3 };
  static const struct { RpeHeatmapTransform tr; double param; } scales[] = {
    { RPE_HEATMAP_TRANSFORM_NONE, 0 }, { RPE_HEATMAP_TRANSFORM_LOG, 0 }, { RPE_HEATMAP_TRANSFORM_POWER, 0.5 },
    { RPE_HEATMAP_TRANSFORM_POWER, 2.0 }, { RPE_HEATMAP_TRANSFORM_PERCENTILE, 99 },
    { RPE_HEATMAP_TRANSFORM_ATTENTION, 0 },
  };
  static const double lengths[] = { 30.0, 120.0, 400.0, 900.0 };
  g_autofree char *path = rpe_test_tmp_path ("bars.pdf");
  g_autoptr (GArray) cases = g_array_new (FALSE, TRUE, sizeof (BarCase));
  g_autoptr (GPtrArray) pages = NULL;
  cairo_surface_t *surface;
  cairo_t *cr;
  const double fg[4] = { 0, 0, 0, 1 };
  int page = -1, slot = SLOTS;

  /* every range shape at every magnitude: from 0, 4 decades and more, 1.2 decades, narrow;
   * both signs (symmetric, not), one sign negative */
  for (gsize s = 0; s < G_N_ELEMENTS (scales); s++)
    for (gsize m = 0; m < G_N_ELEMENTS (mags); m++)
      for (int shape = 0; shape < 8; shape++)
        for (gsize l = 0; l < G_N_ELEMENTS (lengths); l++)
          {
            double a = mags[m];
            BarCase c = { scales[s].tr, scales[s].param, 0, 0, lengths[l], { 0 }, 0 };

            switch (shape)
              {
              case 0: c.lo = 0.0; c.hi = a; break;
              case 1: c.lo = a * 1e-4; c.hi = a; break;
              case 2: c.lo = a * 1e-7; c.hi = a; break;
              case 3: c.lo = a / 15.8; c.hi = a; break;        /* 1.2 decades */
              case 4: c.lo = a; c.hi = a * 1.0003; break;       /* narrow */
              case 5: c.lo = -a; c.hi = a; break;
              case 6: c.lo = -0.3 * a; c.hi = a; break;
              default: c.lo = -a; c.hi = -a * 0.01; break;
              }
            if (c.tr == RPE_HEATMAP_TRANSFORM_ATTENTION)
              {
                if (m > 0 || shape > 0)
                  continue;
                c.lo = 0.0;
                c.hi = 1.0;
              }
            g_array_append_val (cases, c);
          }

  /* the bars, SLOTS to a page */
  surface = cairo_pdf_surface_create (path, SLOTS * SLOT_W, 1000.0);
  cr = cairo_create (surface);
  for (guint i = 0; i < cases->len; i++)
    {
      BarCase *c = &g_array_index (cases, BarCase, i);

      if (slot == SLOTS)
        {
          if (page >= 0)
            cairo_show_page (cr);
          page++;
          slot = 0;
          cairo_pdf_surface_set_size (surface, SLOTS * SLOT_W, 900.0 + 2.0 * PAGE_TOP);
        }
      c->page = page;
      c->bar = (RpePlotRect) { slot * SLOT_W + 10.0, PAGE_TOP, 12.0, c->length };
      rpe_plot_render_colorbar (cr, NULL, c->lo, c->hi, c->tr, c->param, NULL, &c->bar, FONT, fg);
      slot++;
    }
  cairo_destroy (cr);
  cairo_surface_finish (surface);
  g_assert_cmpint (cairo_surface_status (surface), ==, CAIRO_STATUS_SUCCESS);
  cairo_surface_destroy (surface);

  /* the ticks as computed */
  for (guint i = 0; i < cases->len; i++)
    {
      BarCase *c = &g_array_index (cases, BarCase, i);
      RpeAxis axis;
      RpeTicks t;

      rpe_axis_init (&axis, RPE_AXIS_COLOR_SCALE, c->lo, c->hi, c->length, FONT * 1.2);
      axis.transform = c->tr;
      axis.param = c->param;
      rpe_ticks_compute (&axis, &t);
      check_bar_ticks (c, &t);
    }

  /* ... and as drawn: every word right of a bar is a label at its value's place */
  pages = rpe_test_pdf_words (path);
  if (pages == NULL)
    {
      g_test_skip ("pdftotext is not installed");
      return;
    }
  {
    guint checked = 0;

    for (guint i = 0; i < cases->len; i++)
      {
        BarCase *c = &g_array_index (cases, BarCase, i);
        GArray *words = g_ptr_array_index (pages, c->page);
        guint found = 0;
        RpeAxis axis;
        RpeTicks t;

        rpe_axis_init (&axis, RPE_AXIS_COLOR_SCALE, c->lo, c->hi, c->length, FONT * 1.2);
        axis.transform = c->tr;
        axis.param = c->param;
        rpe_ticks_compute (&axis, &t);
        for (guint k = 0; k < words->len; k++)
          {
            Word *w = &g_array_index (words, Word, k);
            g_autofree char *label = NULL;
            double v, y, want;
            gboolean inside;

            if (w->x0 < c->bar.x + c->bar.width || w->x0 > c->bar.x + SLOT_W - 10.0)
              continue;
            label = word_label (words, &k);
            v = rpe_ticks_label_value (label);
            if (isnan (v))
              g_error ("%s bar [%g, %g]: \"%s\" is no number", rpe_plot_transform_name (c->tr), c->lo, c->hi, label);
            y = (w->y0 + w->y1) / 2.0;
            want = c->bar.y + c->bar.height * (1.0 - ref_position (c->tr, c->param > 0.0 ? c->param : 0.5, c->lo, c->hi, v,
                                                                     c->length, &inside));
            if (!inside || fabs (y - want) > 1.0)
              g_error ("%s bar [%.9g, %.9g], %g pt: \"%s\" is drawn at y = %.2f, its value belongs at %.2f%s",
                       rpe_plot_transform_name (c->tr), c->lo, c->hi, c->length, label, y, want,
                       inside ? "" : " (outside the bar)");
            found++;
          }
        /* every label drawn, none missing */
        g_assert_cmpuint (found, ==, t.n);
        checked += found;
      }
    g_test_message ("%u colour bars, %u labels read back from the PDF", cases->len, checked);
  }
  g_ptr_array_unref (g_steal_pointer (&pages));
  g_unlink (path);
}

/* The figures' examples: a bar from 0.0254 down 4 decades ends at 2.54e-6, not "1e-06"; a
 * signed log bar of ±0.0403 has 0 at its centre and ±0.0403 at its ends. */
static void
test_colour_bar_examples (void)
{
  RpeAxis axis;
  RpeTicks t;

  rpe_axis_init (&axis, RPE_AXIS_COLOR_SCALE, 2.54e-6, 0.0254, 400.0, 12.0);
  axis.transform = RPE_HEATMAP_TRANSFORM_LOG;
  rpe_ticks_compute (&axis, &t);
  g_assert_cmpstr (t.tick[0].label, ==, "2.54e-06");
  g_assert_cmpstr (t.tick[t.n - 1].label, ==, "0.0254");

  rpe_axis_init (&axis, RPE_AXIS_COLOR_SCALE, 0.0, 0.0254, 400.0, 12.0);
  axis.transform = RPE_HEATMAP_TRANSFORM_LOG;
  rpe_ticks_compute (&axis, &t);
  g_assert_cmpstr (t.tick[0].label, ==, "\xe2\x89\xa4 2.54e-06");

  rpe_axis_init (&axis, RPE_AXIS_COLOR_SCALE, -0.0403, 0.0403, 400.0, 12.0);
  axis.transform = RPE_HEATMAP_TRANSFORM_LOG;
  rpe_ticks_compute (&axis, &t);
  g_assert_cmpuint (t.n % 2, ==, 1);
  g_assert_cmpstr (t.tick[t.n / 2].label, ==, "0");
  g_assert_cmpstr (t.tick[0].label, ==, "\xe2\x88\x92" "0.0403");
  g_assert_cmpstr (t.tick[t.n - 1].label, ==, "0.0403");
  for (size_t i = 0; i < t.n; i++)
    {
      double v = fabs (rpe_ticks_label_value (t.tick[i].label));

      /* nothing between the centre and the floor, 4 decades below the end */
      g_assert_true (v == 0.0 || v >= 0.0403e-4);
    }
}

static void
test_caption (void)
{
  char buf[128];

  rpe_plot_transform_caption (RPE_HEATMAP_TRANSFORM_LOG, 0, 0.0, 0.0254, buf, sizeof buf);
  g_assert_cmpstr (buf, ==, "log scale, 4 decades");
  rpe_plot_transform_caption (RPE_HEATMAP_TRANSFORM_LOG, 0, 0.0254 / 15.8, 0.0254, buf, sizeof buf);
  g_assert_cmpstr (buf, ==, "log scale, 1.2 decades");
  rpe_plot_transform_caption (RPE_HEATMAP_TRANSFORM_LOG, 0, 1e-9, 0.0254, buf, sizeof buf);
  g_assert_cmpstr (buf, ==, "log scale, 4 decades");
  rpe_plot_transform_caption (RPE_HEATMAP_TRANSFORM_LOG, 0, -2.0, -0.5, buf, sizeof buf);
  g_assert_cmpstr (buf, ==, "log scale, 0.6 decades");
  rpe_plot_transform_caption (RPE_HEATMAP_TRANSFORM_LOG, 0, -1.0, 1.0, buf, sizeof buf);
  g_assert_cmpstr (buf, ==, "log scale, 4 decades on each side");
  rpe_plot_transform_caption (RPE_HEATMAP_TRANSFORM_NONE, 0, 0.0, 1.0, buf, sizeof buf);
  g_assert_cmpstr (buf, ==, "");
}

/* --------------------------------------------------------------- zoomed map */

static void
test_zoomed_pdf (void)
{
  g_autofree char *path = rpe_test_tmp_path ("zoom.pdf");
  g_autofree float *values = g_new (float, 526 * 526);
  g_autoptr (GPtrArray) pages = NULL;
  g_autoptr (GError) error = NULL;
  RpeFigure fig;
  RpeHeatmapData d;
  RpePlotRect image;
  RpeExportSize size = { .width = 468.0, .height = 400.0 };
  cairo_surface_t *s;
  cairo_t *cr;
  guint nx = 0, ny = 0;

  for (gsize i = 0; i < 526 * 526; i++)
    values[i] = (float) ((i * 7919) % 1000) / 1000.0f;
  rpe_figure_init (&fig, RPE_FIGURE_HEATMAP);
  fig.title = "a window of a map";
  fig.heatmap.values = values;
  fig.heatmap.rows = fig.heatmap.cols = 526;
  fig.heatmap.row_origin = fig.heatmap.col_origin = 246;
  fig.heatmap.equal_aspect = TRUE;
  g_assert_true (rpe_export_figure (&fig, RPE_EXPORT_PDF, &size, path, &error));
  g_assert_no_error (error);

  /* where the image is, from the layout the export used */
  d = fig.heatmap;
  d.title = fig.title;
  s = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 1, 1);
  cr = cairo_create (s);
  g_assert_true (rpe_plot_heatmap_layout (cr, &d, 468.0, 400.0, &image, NULL));
  cairo_destroy (cr);
  cairo_surface_destroy (s);

  pages = rpe_test_pdf_words (path);
  if (pages == NULL)
    {
      g_test_skip ("pdftotext is not installed");
      return;
    }
  {
    GArray *words = g_ptr_array_index (pages, 0);

    for (guint k = 0; k < words->len; k++)
      {
        Word *w = &g_array_index (words, Word, k);
        char *end;
        double v = g_ascii_strtod (w->text, &end), x = (w->x0 + w->x1) / 2.0, y = (w->y0 + w->y1) / 2.0;

        if (*end != '\0' || end == w->text)
          continue;
        if (w->y0 > image.y + image.height && w->x1 < image.x + image.width + 30.0)
          {
            /* an x tick: an absolute position of the window, under its cell's centre */
            g_assert_cmpfloat (v, >=, 246);
            g_assert_cmpfloat (v, <=, 771);
            g_assert_cmpfloat (fabs (x - (image.x + image.width * (v + 0.5 - 246.0) / 526.0)), <=, 1.0);
            nx++;
          }
        else if (w->x1 < image.x)
          {
            g_assert_cmpfloat (v, >=, 246);
            g_assert_cmpfloat (v, <=, 771);
            g_assert_cmpfloat (fabs (y - (image.y + image.height * (v + 0.5 - 246.0) / 526.0)), <=, 1.0);
            ny++;
          }
      }
    g_assert_cmpuint (nx, >=, 3);
    g_assert_cmpuint (ny, >=, 3);
  }
  g_unlink (path);
}

/* Least squares x = a + b v over the words' (v, centre); the largest residual. */
static double
fit_line (const double *v,
          const double *x,
          guint         n,
          double       *a,
          double       *b)
{
  double sv = 0, sx = 0, svv = 0, svx = 0, worst = 0;

  for (guint i = 0; i < n; i++)
    {
      sv += v[i];
      sx += x[i];
      svv += v[i] * v[i];
      svx += v[i] * x[i];
    }
  *b = (n * svx - sv * sx) / (n * svv - sv * sv);
  *a = (sx - *b * sv) / n;
  for (guint i = 0; i < n; i++)
    worst = fmax (worst, fabs (*a + *b * v[i] - x[i]));
  return worst;
}

/* Whether a word is a whole number (a position; colour-bar labels have decimals). */
static gboolean
is_integer_word (const Word *w)
{
  char *end;
  double v = g_ascii_strtod (w->text, &end);

  return *end == '\0' && end != w->text && v == floor (v) && strchr (w->text, '.') == NULL;
}

/* `rpe export attention --rows 246:772 --cols 246:772` (the window's zoom as Copy as Command
 * writes it) to PDF: the numbers under the map (the row of numbers sharing a baseline) and
 * left of it (sharing a right edge) are absolute positions of the window, each at its
 * cell's centre: evenly placed by value, the map square, its left edge just right of the
 * row numbers. */
static void
test_cli_zoom (void)
{
  g_autofree char *path = rpe_test_tmp_path ("cli-zoom.pdf");
  static const char *const args[] = { "--length", "1024", "--rows", "246:772", "--cols", "246:772", NULL };
  g_autoptr (GPtrArray) pages = NULL;
  GArray *words;
  double xv[64], xc[64], yv[64], yc[64], ax, bx, ay, by, best_y = NAN, best_x = NAN, right_of_numbers = 0.0;
  guint nx = 0, ny = 0, best_nx = 0, best_ny = 0;

  if (g_getenv ("RPE_CLI") == NULL)
    {
      g_test_skip ("RPE_CLI is not set");
      return;
    }
  g_assert_cmpint (rpe_test_run_cli_export ("attention", args, path), ==, 0);
  pages = rpe_test_pdf_words (path);
  if (pages == NULL)
    {
      g_test_skip ("pdftotext is not installed");
      return;
    }
  words = g_ptr_array_index (pages, 0);
  /* the baseline and the right edge shared by the most whole numbers */
  for (guint i = 0; i < words->len; i++)
    {
      Word *w = &g_array_index (words, Word, i);
      guint same_y = 0, same_x = 0;

      if (!is_integer_word (w))
        continue;
      for (guint k = 0; k < words->len; k++)
        {
          Word *o = &g_array_index (words, Word, k);

          if (!is_integer_word (o))
            continue;
          same_y += fabs (o->y0 - w->y0) < 0.1;
          same_x += fabs (o->x1 - w->x1) < 0.1;
        }
      if (same_y > best_nx)
        {
          best_nx = same_y;
          best_y = w->y0;
        }
      if (same_x > best_ny)
        {
          best_ny = same_x;
          best_x = w->x1;
        }
    }
  for (guint i = 0; i < words->len; i++)
    {
      Word *w = &g_array_index (words, Word, i);
      double v = g_ascii_strtod (w->text, NULL);

      if (!is_integer_word (w))
        continue;
      if (fabs (w->y0 - best_y) < 0.1 && nx < G_N_ELEMENTS (xv))
        {
          xv[nx] = v;
          xc[nx++] = (w->x0 + w->x1) / 2.0;
        }
      else if (fabs (w->x1 - best_x) < 0.1 && ny < G_N_ELEMENTS (yv))
        {
          yv[ny] = v;
          yc[ny++] = (w->y0 + w->y1) / 2.0;
          right_of_numbers = fmax (right_of_numbers, w->x1);
        }
    }
  g_assert_cmpuint (nx, >=, 3);
  g_assert_cmpuint (ny, >=, 3);
  g_test_message ("zoomed export: %u numbers under the map (%g ... %g), %u left of it", nx, xv[0], xv[nx - 1], ny);
  for (guint i = 0; i < nx; i++)
    {
      g_assert_cmpfloat (xv[i], >=, 246.0);
      g_assert_cmpfloat (xv[i], <=, 771.0);
    }
  for (guint i = 0; i < ny; i++)
    {
      g_assert_cmpfloat (yv[i], >=, 246.0);
      g_assert_cmpfloat (yv[i], <=, 771.0);
    }
  /* placed by value (to half a point), one scale across and down (a square map) */
  g_assert_cmpfloat (fit_line (xv, xc, nx, &ax, &bx), <=, 0.5);
  g_assert_cmpfloat (fit_line (yv, yc, ny, &ay, &by), <=, 0.5);
  g_assert_cmpfloat (fabs (bx - by) * 526.0, <=, 1.0);
  /* the image's left edge (position 246's cell starts there: its centre is at 246.5) lies just
   * right of the row numbers, as a tick mark and a gap */
  g_assert_cmpfloat (ax + bx * 246.0 - right_of_numbers, >, 0.0);
  g_assert_cmpfloat (ax + bx * 246.0 - right_of_numbers, <, 12.0);
  g_unlink (path);
}

/* ----------------------------------------------------------------- tokens */

/* A token for position p that no position of these tests equals (so a label tells which it is). */
static float
token_of (gsize p)
{
  return (float) (300 + (p * 37) % 200);
}

static void
test_token_axis (void)
{
  float    tokens[300];
  RpeAxis  axis;
  RpeTicks t;

  for (gsize p = 0; p < G_N_ELEMENTS (tokens); p++)
    tokens[p] = token_of (p);
  /* 16 positions [100, 116) over 400 units: cells of 25, each token needs 20 */
  rpe_axis_init (&axis, RPE_AXIS_POSITION, 100.0, 116.0, 400.0, 30.0);
  axis.ends = true;
  axis.tokens = tokens;
  axis.n_tokens = G_N_ELEMENTS (tokens);
  axis.token_spacing = 20.0;
  rpe_ticks_compute (&axis, &t);
  g_assert_true (t.tokens);
  g_assert_cmpuint (t.n, ==, 16);
  for (gsize i = 0; i < t.n; i++)
    {
      char want[48];

      g_snprintf (want, sizeof want, "%.0f", (double) tokens[100 + i]);
      g_assert_cmpfloat (t.tick[i].value, ==, 100.0 + (double) i);
      g_assert_cmpfloat_with_epsilon (t.tick[i].pos, (i + 0.5) / 16.0, 1e-12);
      g_assert_cmpstr (t.tick[i].label, ==, want);
    }
  /* cells shorter than a token: the positions, numbered as ever */
  axis.token_spacing = 26.0;
  rpe_ticks_compute (&axis, &t);
  g_assert_false (t.tokens);
  g_assert_cmpuint (t.n, >=, 2);
  g_assert_cmpuint (t.n, <, 16);
  for (gsize i = 0; i < t.n; i++)
    g_assert_cmpfloat (rpe_ticks_label_value (t.tick[i].label), ==, t.tick[i].value);
  /* a window reaching beyond the tokens, or with more positions than ticks: numbers */
  axis.token_spacing = 1.0;
  axis.lo = 290.0;
  axis.hi = 306.0;
  rpe_ticks_compute (&axis, &t);
  g_assert_false (t.tokens);
  axis.lo = 0.0;
  axis.hi = 100.0;
  axis.length = 10000.0;
  rpe_ticks_compute (&axis, &t);
  g_assert_false (t.tokens);
  g_assert_cmpfloat (rpe_ticks_label_value (t.tick[1].label), ==, t.tick[1].value);
  /* a negative token is written with a minus sign */
  {
    char buf[48];

    rpe_ticks_token_text (-3.0f, buf, sizeof buf);
    g_assert_cmpstr (buf, ==,
                     "\xe2\x88\x92"
                     "3");
  }
}

/* The whole numbers of a page under the image (x) and left of it (y), their values and centres. */
static void
axis_numbers (GArray *words, const RpePlotRect *image, GArray *xs, GArray *ys)
{
  double top = INFINITY;

  /* the row of tick labels right under the image (the axis label is a line lower) */
  for (guint k = 0; k < words->len; k++)
    {
      Word *w = &g_array_index (words, Word, k);

      if (w->y0 > image->y + image->height && w->x1 > image->x && w->x0 < image->x + image->width)
        top = fmin (top, w->y0);
    }
  for (guint k = 0; k < words->len; k++)
    {
      Word *w = &g_array_index (words, Word, k);

      if (!is_integer_word (w))
        continue;
      if (fabs (w->y0 - top) < 1.0 && w->x1 > image->x && w->x0 < image->x + image->width)
        g_array_append_val (xs, *w);
      else if (w->x1 < image->x && w->y1 > image->y && w->y0 < image->y + image->height)
        g_array_append_val (ys, *w);
    }
  /* the column of tick labels right-aligned left of the image (the rotated axis label is
   * further left) */
  {
    double right = -INFINITY;

    for (guint k = 0; k < ys->len; k++)
      right = fmax (right, g_array_index (ys, Word, k).x1);
    for (guint k = ys->len; k-- > 0;)
      if (fabs (g_array_index (ys, Word, k).x1 - right) > 1.0)
        g_array_remove_index (ys, k);
  }
}

static gboolean
page_has_word (GArray *words, const char *text)
{
  for (guint k = 0; k < words->len; k++)
    if (g_str_equal (g_array_index (words, Word, k).text, text))
      return TRUE;
  return FALSE;
}

/* A heatmap of `n` positions from `origin` with tokens, to PDF at 468 x 400 points; its image. */
static GPtrArray *
token_pdf (gsize n, gsize origin, const float *tokens, gsize n_tokens, RpePlotRect *image)
{
  g_autofree char  *path = rpe_test_tmp_path ("tokens.pdf");
  g_autofree float *values = g_new (float, n *n);
  g_autoptr (GError) error = NULL;
  RpeExportSize    size = { .width = 468.0, .height = 400.0 };
  GPtrArray       *pages;
  RpeFigure        fig;
  cairo_surface_t *s;
  cairo_t         *cr;

  for (gsize i = 0; i < n * n; i++)
    values[i] = (float) ((i * 7919) % 1000) / 1000.0f;
  rpe_figure_init (&fig, RPE_FIGURE_HEATMAP);
  fig.heatmap.values = values;
  fig.heatmap.rows = fig.heatmap.cols = n;
  fig.heatmap.row_origin = fig.heatmap.col_origin = (ptrdiff_t) origin;
  fig.heatmap.equal_aspect = TRUE;
  fig.heatmap.tokens = tokens;
  fig.heatmap.n_tokens = n_tokens;
  g_assert_true (rpe_export_figure (&fig, RPE_EXPORT_PDF, &size, path, &error));
  g_assert_no_error (error);
  s = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 1, 1);
  cr = cairo_create (s);
  g_assert_true (rpe_plot_heatmap_layout (cr, &fig.heatmap, 468.0, 400.0, image, NULL));
  cairo_destroy (cr);
  cairo_surface_destroy (s);
  pages = rpe_test_pdf_words (path);
  g_unlink (path);
  return pages;
}

/* Every word of xs (under the image) is the token of the cell it is centred on, one per cell. */
static void
check_token_words (GArray *words, const RpePlotRect *image, gsize origin, gsize n, gboolean across)
{
  g_assert_cmpuint (words->len, ==, n);
  for (guint k = 0; k < words->len; k++)
    {
      Word  *w = &g_array_index (words, Word, k);
      double c = across ? (w->x0 + w->x1) / 2.0 : (w->y0 + w->y1) / 2.0;
      double lo = across ? image->x : image->y, len = across ? image->width : image->height;
      double cell = (c - lo) / len * (double) n - 0.5;
      gsize  p = origin + (gsize) floor (cell + 0.5);

      /* at its cell's centre (to a point) and reading as that position's token */
      g_assert_cmpfloat (fabs (cell - floor (cell + 0.5)) * len / (double) n, <=, 1.0);
      g_assert_cmpfloat (g_ascii_strtod (w->text, NULL), ==, token_of (p));
    }
}

static void
test_token_pdf (void)
{
  g_autofree float *tokens = g_new (float, 256);
  g_autoptr (GPtrArray) pages = NULL;
  g_autoptr (GArray) xs = g_array_new (FALSE, FALSE, sizeof (Word));
  g_autoptr (GArray) ys = g_array_new (FALSE, FALSE, sizeof (Word));
  RpePlotRect image;

  for (gsize p = 0; p < 256; p++)
    tokens[p] = token_of (p);
  /* positions [40, 52): room for every token */
  pages = token_pdf (12, 40, tokens, 256, &image);
  if (pages == NULL)
    {
      g_test_skip ("pdftotext is not installed");
      return;
    }
  axis_numbers (g_ptr_array_index (pages, 0), &image, xs, ys);
  check_token_words (xs, &image, 40, 12, TRUE);
  check_token_words (ys, &image, 40, 12, FALSE);
  /* the axis labels say what the labels are, and which positions */
  g_assert_true (page_has_word (g_ptr_array_index (pages, 0), "token"));
  g_assert_true (page_has_word (g_ptr_array_index (pages, 0), "51)"));
  g_clear_pointer (&pages, g_ptr_array_unref);

  /* 256 positions at the same size: no room; positions, numbered apart, at their cells */
  g_array_set_size (xs, 0);
  g_array_set_size (ys, 0);
  pages = token_pdf (256, 0, tokens, 256, &image);
  axis_numbers (g_ptr_array_index (pages, 0), &image, xs, ys);
  g_assert_false (page_has_word (g_ptr_array_index (pages, 0), "token"));
  g_assert_cmpuint (xs->len, >=, 3);
  g_assert_cmpuint (ys->len, >=, 3);
  for (guint k = 0; k < xs->len; k++)
    {
      Word  *w = &g_array_index (xs, Word, k);
      double v = g_ascii_strtod (w->text, NULL);

      g_assert_cmpfloat (v, <=, 255.0);
      g_assert_cmpfloat (fabs ((w->x0 + w->x1) / 2.0 - (image.x + image.width * (v + 0.5) / 256.0)), <=, 1.0);
      if (k > 0)
        g_assert_cmpfloat (g_array_index (xs, Word, k - 1).x1, <, w->x0);
    }
  for (guint k = 1; k < ys->len; k++)
    g_assert_cmpfloat (g_array_index (ys, Word, k - 1).y1, <, g_array_index (ys, Word, k).y0);
}

/* `rpe export attention` of a captured input with tokens: 12 positions have room for every
 * token on both axes (each the token of a position shown); 64 positions at the same size are
 * numbered by position. */
static void
test_cli_tokens (void)
{
  g_autofree char *dir = g_dir_make_tmp ("rpe-tokens-XXXXXX", NULL);
  g_autofree char *cap12 = g_build_filename (dir, "cap12.npz", NULL);
  g_autofree char *cap64 = g_build_filename (dir, "cap64.npz", NULL);
  g_autofree char *pdf = g_build_filename (dir, "short.pdf", NULL);
  g_autofree char *whole = g_build_filename (dir, "long.pdf", NULL);
  gint64           tokens[64];
  const char      *short_args[] = { "--checkpoint", "demo:conv-spe", "--content", cap12,      "--layer", "0",
                                    "--exact",      "--width",       "468",       "--height", "400",     NULL };
  const char      *long_args[] = { "--checkpoint", "demo:conv-spe", "--content", cap64,      "--layer", "0",
                                   "--exact",      "--width",       "468",       "--height", "400",     NULL };
  g_autoptr (GPtrArray) pages = NULL;
  GArray *words;
  guint   n_tok = 0;

  if (g_getenv ("RPE_CLI") == NULL)
    {
      g_test_skip ("RPE_CLI is not set");
      return;
    }
  for (gsize p = 0; p < 64; p++)
    tokens[p] = (gint64) token_of (p);
  /* the conv SPE demo's (H, D) = (4, 16) */
  rpe_test_write_capture_tokens (cap12, 1, 12, 4, 16, 0, 11, tokens, NULL, NULL, NULL);
  rpe_test_write_capture_tokens (cap64, 1, 64, 4, 16, 0, 11, tokens, NULL, NULL, NULL);
  g_assert_cmpint (rpe_test_run_cli_export ("attention", short_args, pdf), ==, 0);
  pages = rpe_test_pdf_words (pdf);
  if (pages == NULL)
    {
      g_test_skip ("pdftotext is not installed");
      return;
    }
  words = g_ptr_array_index (pages, 0);
  /* every whole number >= 300 on the page is a token: 12 under the map, 12 left of it */
  for (guint k = 0; k < words->len; k++)
    {
      Word *w = &g_array_index (words, Word, k);

      if (is_integer_word (w) && g_ascii_strtod (w->text, NULL) >= 300.0)
        n_tok++;
    }
  g_assert_cmpuint (n_tok, ==, 24);
  g_assert_true (page_has_word (words, "token"));
  for (gsize p = 0; p < 12; p++)
    {
      char want[32];

      g_snprintf (want, sizeof want, "%.0f", (double) token_of (p));
      g_assert_true (page_has_word (words, want));
    }
  g_clear_pointer (&pages, g_ptr_array_unref);

  g_assert_cmpint (rpe_test_run_cli_export ("attention", long_args, whole), ==, 0);
  pages = rpe_test_pdf_words (whole);
  words = g_ptr_array_index (pages, 0);
  g_assert_false (page_has_word (words, "token"));
  for (guint k = 0; k < words->len; k++)
    {
      Word *w = &g_array_index (words, Word, k);

      if (is_integer_word (w))
        g_assert_cmpfloat (g_ascii_strtod (w->text, NULL), <, 300.0);
    }
  g_unlink (pdf);
  g_unlink (whole);
  g_unlink (cap12);
  g_unlink (cap64);
  g_rmdir (dir);
}

int
main (int   argc,
      char *argv[])
{
  int ret;

  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/render/ticks/step", test_step);
  g_test_add_func ("/render/ticks/values", test_values);
  g_test_add_func ("/render/ticks/positions", test_positions);
  g_test_add_func ("/render/ticks/lag-map", test_lag_map);
  g_test_add_func ("/render/ticks/colour-bars", test_colour_bars);
  g_test_add_func ("/render/ticks/colour-bar-examples", test_colour_bar_examples);
  g_test_add_func ("/render/ticks/caption", test_caption);
  g_test_add_func ("/render/ticks/zoomed-pdf", test_zoomed_pdf);
  g_test_add_func ("/render/ticks/cli-zoom", test_cli_zoom);
  g_test_add_func ("/render/ticks/token-axis", test_token_axis);
  g_test_add_func ("/render/ticks/token-pdf", test_token_pdf);
  g_test_add_func ("/render/ticks/cli-tokens", test_cli_tokens);
  ret = g_test_run ();
  rpe_text_release_fonts ();
  return ret;
}

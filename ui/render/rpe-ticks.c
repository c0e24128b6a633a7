/* rpe-ticks.c: the ticks of every axis and colour bar (GTK-free). */
#include "config.h"

#include "rpe-ticks.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MINUS "\xe2\x88\x92"   /* U+2212, the typographic minus of every label */

void
rpe_axis_init (RpeAxis     *axis,
               RpeAxisKind  kind,
               double       lo,
               double       hi,
               double       length,
               double       spacing)
{
  memset (axis, 0, sizeof *axis);
  axis->kind = kind;
  axis->lo = lo;
  axis->hi = hi;
  axis->length = length;
  axis->spacing = spacing;
}

double
rpe_ticks_step (double min_step)
{
  double mag, f;

  if (!(min_step > 0.0) || !isfinite (min_step))
    return 1.0;
  mag = pow (10.0, floor (log10 (min_step)));
  f = min_step / mag;
  f = f <= 1.0 ? 1.0 : f <= 2.0 ? 2.0 : f <= 5.0 ? 5.0 : 10.0;
  return f * mag;
}

/* ------------------------------------------------------------------ text */

/* buf = text with a leading '-' written as the typographic minus. */
static void
set_label (char       *buf,
           size_t      size,
           const char *text)
{
  if (text[0] == '-')
    snprintf (buf, size, MINUS "%s", text + 1);
  else
    snprintf (buf, size, "%s", text);
}

/* The decimal exponent of |v| (v != 0). */
static int
exponent_of (double v)
{
  return (int) floor (log10 (fabs (v)) + 1e-12);
}

/* FIXED: every label of one axis with the same decimals, chosen from the step; e-notation
 * with the mantissa digits the step needs (at least one) for magnitudes out of [1e-3, 1e5). */
static void
format_fixed (char   *buf,
              size_t  size,
              double  v,
              double  step,
              double  magnitude)
{
  char tmp[40];

  if (magnitude >= 1e5 || (magnitude > 0.0 && magnitude < 1e-3))
    {
      int digits = exponent_of (magnitude) - exponent_of (step);

      snprintf (tmp, sizeof tmp, "%.*e", digits < 1 ? 1 : digits > 12 ? 12 : digits, v);
    }
  else
    {
      int decimals = step >= 1.0 ? 0 : (int) ceil (-log10 (step) - 1e-9);

      if (decimals > 12)
        decimals = 12;
      snprintf (tmp, sizeof tmp, "%.*f", decimals, v == 0.0 ? 0.0 : v);
    }
  set_label (buf, size, tmp);
}

/* SHORT: "0", fixed decimals in [1e-3, 1e5), else %g with the digits the step needs (at
 * least two). */
static void
format_short (char   *buf,
              size_t  size,
              double  v,
              double  step,
              double  magnitude)
{
  char tmp[40];

  if (v == 0.0)
    {
      snprintf (buf, size, "0");
      return;
    }
  if (magnitude >= 1e5 || magnitude < 1e-3)
    {
      int digits = exponent_of (v) - exponent_of (step) + 1;

      snprintf (tmp, sizeof tmp, "%.*g", digits < 2 ? 2 : digits > 15 ? 15 : digits, v);
      set_label (buf, size, tmp);
      return;
    }
  format_fixed (buf, size, v, step, magnitude);
}

static void
format_value (const RpeAxis *axis,
              char          *buf,
              size_t         size,
              double         v,
              double         step,
              double         magnitude)
{
  if (axis->integer)
    {
      char tmp[40];

      snprintf (tmp, sizeof tmp, "%.0f", v == 0.0 ? 0.0 : v);
      set_label (buf, size, tmp);
    }
  else if (axis->format == RPE_TICK_FORMAT_SHORT)
    format_short (buf, size, v, step, magnitude);
  else
    format_fixed (buf, size, v, step, magnitude);
}

double
rpe_ticks_label_value (const char *label)
{
  char buf[96];
  size_t k = 0;
  const char *p = label, *sup;
  char *end;
  double v;

  if (label == NULL)
    return NAN;
  /* "≥ " and "≤ " before an end value */
  if (strncmp (p, "\xe2\x89\xa5", 3) == 0 || strncmp (p, "\xe2\x89\xa4", 3) == 0)
    p += 3;
  while (*p == ' ')
    p++;
  sup = strstr (p, "<sup>");
  for (; *p != '\0' && k + 1 < sizeof buf; p++)
    {
      if (strncmp (p, MINUS, 3) == 0)
        {
          buf[k++] = '-';
          p += 2;
        }
      else if (*p == '<')
        {
          /* "10<sup>k</sup>": 10 to the k */
          if (p == sup)
            buf[k++] = '^';
          while (*p != '\0' && *p != '>')
            p++;
          if (*p == '\0')
            break;
        }
      else
        buf[k++] = *p;
    }
  buf[k] = '\0';
  if (strchr (buf, '^') != NULL)
    {
      char *caret = strchr (buf, '^');
      double base, e;

      *caret = '\0';
      base = strtod (buf, &end);
      if (end == buf || *end != '\0')
        return NAN;
      e = strtod (caret + 1, &end);
      if (end == caret + 1 || *end != '\0')
        return NAN;
      return pow (base, e);
    }
  v = strtod (buf, &end);
  if (end == buf || *end != '\0')
    return NAN;
  return v;
}

/* ------------------------------------------------------------------ values */

static void
add_tick (RpeTicks   *t,
          double      value,
          double      pos,
          const char *label)
{
  if (t->n >= RPE_TICKS_MAX)
    return;
  t->tick[t->n].value = value;
  t->tick[t->n].pos = pos;
  snprintf (t->tick[t->n].label, sizeof t->tick[0].label, "%s", label);
  t->n++;
}

/* Multiples of step in [lo, hi] (with a tolerance of 1e-9 step at both ends; a value within
 * 1e-9 step of 0 is 0) into v; returns their count. */
static size_t
multiples (double  lo,
           double  hi,
           double  step,
           double *v,
           size_t  max)
{
  double first = ceil (lo / step - 1e-9) * step;
  size_t count = 0;

  for (double x = first; x <= hi + step * 1e-9 && count < max; x = first + step * (double) count)
    v[count++] = fabs (x) < step * 1e-9 ? 0.0 : x;
  return count;
}

/* The ticks of a linear axis at step over [dlo, dhi] in data units; a log axis (`log10`)
 * keeps the positive ones at their log10.  The value of each tick is its axis coordinate. */
static void
linear_ticks (const RpeAxis *axis,
              double         dlo,
              double         dhi,
              double         step,
              bool           log10_axis,
              RpeTicks      *t)
{
  double v[RPE_TICKS_MAX], mag = fmax (fabs (dlo), fabs (dhi));
  size_t n = multiples (dlo, dhi, step, v, RPE_TICKS_MAX);

  t->n = 0;
  for (size_t i = 0; i < n; i++)
    {
      char label[48];
      double c;

      if (log10_axis && !(v[i] > 0.0))
        continue;
      c = log10_axis ? log10 (v[i]) : v[i];
      format_value (axis, label, sizeof label, v[i], step, mag);
      add_tick (t, c, (c - axis->lo) / (axis->hi - axis->lo), label);
    }
}

static double
value_step (const RpeAxis *axis,
            double         range,
            double         target)
{
  double step = rpe_ticks_step (range / target);

  return axis->integer ? fmax (1.0, round (step)) : step;
}

static void
value_ticks (const RpeAxis *axis,
             RpeTicks      *t)
{
  double min_count = axis->min_count > 0.0 ? axis->min_count : 2.0;
  double max_count = axis->max_count > 0.0 ? axis->max_count : 10.0;
  double target = fmax (min_count, fmin (max_count, axis->length / fmax (1.0, axis->spacing)));
  bool log10_axis = axis->kind == RPE_AXIS_LOG10;
  double dlo = log10_axis ? pow (10.0, axis->lo) : axis->lo;
  double dhi = log10_axis ? pow (10.0, axis->hi) : axis->hi;
  double limit = axis->fallback_count > 0.0 ? axis->fallback_count : 40.0;

  if (log10_axis && axis->hi - axis->lo >= 1.0)
    {
      /* whole decades, every `every`-th, with the 2 .. 9 between them when each is shown */
      int k0 = (int) ceil (axis->lo - 1e-9), k1 = (int) floor (axis->hi + 1e-9);
      int every = (int) ceil ((double) (k1 - k0 + 1) / target);

      if (every < 1)
        every = 1;
      for (int k = k0; k <= k1; k++)
        {
          char label[48];

          if ((k - k0) % every != 0)
            continue;
          if (k >= -3 && k <= 4)
            snprintf (label, sizeof label, "%.*f", k < 0 ? -k : 0, pow (10.0, k));
          else
            snprintf (label, sizeof label, "10<sup>%s%d</sup>", k < 0 ? MINUS : "", abs (k));
          add_tick (t, k, ((double) k - axis->lo) / (axis->hi - axis->lo), label);
        }
      if (every == 1 && k1 - k0 <= 8)
        for (int k = k0 - 1; k <= k1; k++)
          for (int m = 2; m <= 9 && t->n_minor < RPE_TICKS_MAX; m++)
            {
              double p = k + log10 ((double) m);

              if (p >= axis->lo && p <= axis->hi)
                t->minor[t->n_minor++] = p;
            }
      return;
    }
  linear_ticks (axis, dlo, dhi, value_step (axis, dhi - dlo, target), log10_axis, t);
  /* One number does not make a scale: finer steps while two labels keep their room. */
  for (double t2 = target * 2.0; axis->fallback_gap > 0.0 && t->n < 2 && t2 <= limit; t2 *= 2.0)
    {
      RpeTicks finer;

      memset (&finer, 0, sizeof finer);
      linear_ticks (axis, dlo, dhi, value_step (axis, dhi - dlo, t2), log10_axis, &finer);
      if (finer.n >= 2
          && axis->length * (finer.tick[1].value - finer.tick[0].value) / (axis->hi - axis->lo)
             >= axis->spacing * axis->fallback_gap)
        *t = finer;
    }
}

/* --------------------------------------------------------------- positions */

void
rpe_ticks_token_text (float token, char *buf, size_t size)
{
  char tmp[40];

  if (!isfinite (token))
    snprintf (tmp, sizeof tmp, "?");
  else
    snprintf (tmp, sizeof tmp, "%.0f", (double) token);
  set_label (buf, size, tmp);
}

/* The positions whose cells have their centres in [lo, hi] and lie below the limit. */
static bool
shown_positions (const RpeAxis *axis, double *pmin, double *pmax)
{
  *pmin = ceil (axis->lo - 0.5);
  *pmax = ceil (axis->hi - 0.5) - 1.0;
  if (axis->limit > 0)
    *pmax = fmin (*pmax, (double) axis->limit - 1.0);
  return *pmax >= *pmin && fabs (*pmax) <= 1e15 && fabs (*pmin) <= 1e15;
}

bool
rpe_ticks_tokens_shown (const RpeAxis *axis, double *first, double *last)
{
  double pmin, pmax;

  if (axis == NULL || axis->kind != RPE_AXIS_POSITION || axis->tokens == NULL || axis->n_tokens == 0
      || !(axis->hi > axis->lo) || !shown_positions (axis, &pmin, &pmax))
    return false;
  if (pmin < 0.0 || pmax >= (double) axis->n_tokens || pmax - pmin + 1.0 > (double) RPE_TICKS_MAX)
    return false;
  if (first != NULL)
    *first = pmin;
  if (last != NULL)
    *last = pmax;
  return true;
}

/* One tick per position, labelled with its token, when they all fit (rpe_ticks_tokens_shown
 * and a cell at least token_spacing long). */
static bool
token_ticks (const RpeAxis *axis, RpeTicks *t)
{
  double span = axis->hi - axis->lo, per = axis->length / span, pmin, pmax;
  double need = axis->token_spacing > 0.0 ? axis->token_spacing : axis->spacing;

  if (!(per > 0.0) || !isfinite (per) || !rpe_ticks_tokens_shown (axis, &pmin, &pmax) || per < need)
    return false;
  for (double p = pmin + 0.0; p <= pmax; p += 1.0)
    {
      char label[48];

      rpe_ticks_token_text (axis->tokens[(size_t) p], label, sizeof label);
      add_tick (t, p == 0.0 ? 0.0 : p, (p + 0.5 - axis->lo) / span, label);
    }
  t->tokens = true;
  return true;
}

static void
position_ticks (const RpeAxis *axis,
                RpeTicks      *t)
{
  double span = axis->hi - axis->lo, per = axis->length / span, step, pmin, pmax, first;
  double p[RPE_TICKS_MAX];
  size_t count = 0;

  if (!(per > 0.0) || !isfinite (per))
    return;
  /* the cells whose centres are in [lo, hi] (and below the limit) */
  pmin = ceil (axis->lo - 0.5);
  pmax = ceil (axis->hi - 0.5) - 1.0;
  if (axis->limit > 0)
    pmax = fmin (pmax, (double) axis->limit - 1.0);
  if (!(pmax >= pmin) || fabs (pmax) > 1e15 || fabs (pmin) > 1e15)
    return;
  /* labels `spacing` apart, and not more ticks than a figure's axis can tell apart */
  step = fmax (1.0, rpe_ticks_step (fmax (axis->spacing / per, (pmax - pmin) / 31.0)));
  first = ceil (pmin / step) * step;
  for (double q = first; q <= pmax && count < RPE_TICKS_MAX; q = first + step * (double) count)
    p[count++] = q == 0.0 ? 0.0 : q;
  /* At least the first and the last: one tick says nothing about an axis.  A short axis (a
   * few channels) ends on its last position when the spacing allows. */
  if (axis->ends && pmax > pmin)
    {
      double n_shown = pmax - pmin + 1.0;

      if (count == 0)
        p[count++] = pmin;
      if (count < 2 && (pmax - p[0]) * per >= axis->spacing * 0.75)
        p[count++] = pmax;
      else if (n_shown <= 16.0 && count >= 2 && p[count - 1] != pmax)
        {
          if ((pmax - p[count - 1]) * per >= axis->spacing)
            {
              if (count < RPE_TICKS_MAX)
                p[count++] = pmax;
            }
          else if ((pmax - p[count - 2]) * per >= axis->spacing)
            p[count - 1] = pmax;
        }
    }
  for (size_t i = 0; i < count; i++)
    {
      char label[48], tmp[40];

      snprintf (tmp, sizeof tmp, "%.0f", p[i]);
      set_label (label, sizeof label, tmp);
      add_tick (t, p[i], (p[i] + 0.5 - axis->lo) / span, label);
    }
}

/* -------------------------------------------------------------- colour bars */

/* An end of a bar as a label: the fewest significant digits (at least 3) that place it
 * within a quarter of a unit of length of value's place, rounded towards the inside of the
 * bar (dir > 0: a top end, never above value; dir < 0: a bottom end, never below). */
static void
format_exact (const RpeAxis *axis,
              char          *buf,
              size_t         size,
              const char    *prefix,
              double         value,
              int            dir)
{
  double at = rpe_plot_scale_position (axis->transform, axis->param, axis->lo, axis->hi, value);
  char tmp[40];

  for (int digits = 3; digits <= 17; digits++)
    {
      double p;

      snprintf (tmp, sizeof tmp, "%.*g", digits, value);
      p = strtod (tmp, NULL);
      if (dir > 0 ? p > value : p < value)
        {
          /* one unit of the last digit inwards */
          double unit = p != 0.0 ? pow (10.0, exponent_of (p) - digits + 1) : 0.0;

          snprintf (tmp, sizeof tmp, "%.*g", digits, dir > 0 ? p - unit : p + unit);
          p = strtod (tmp, NULL);
        }
      if ((dir > 0 ? p <= value : p >= value)
          && fabs (rpe_plot_scale_position (axis->transform, axis->param, axis->lo, axis->hi, p) - at)
             * axis->length <= 0.25)
        break;
    }
  if (tmp[0] == '-')
    snprintf (buf, size, "%s" MINUS "%s", prefix, tmp + 1);
  else
    snprintf (buf, size, "%s%s", prefix, tmp);
}

typedef struct
{
  double value;
  double pos;
  char   label[48];
} Candidate;

/* Adds c to the bar's ticks if its label keeps `gap` from every label already there. */
static bool
place (RpeTicks        *t,
       const Candidate *c,
       double           length,
       double           gap)
{
  if (isnan (c->pos))
    return false;
  for (size_t i = 0; i < t->n; i++)
    if (fabs (t->tick[i].pos - c->pos) * length < gap)
      return false;
  add_tick (t, c->value, c->pos, c->label);
  return true;
}

static void
candidate (const RpeAxis *axis,
           Candidate     *c,
           double         value)
{
  c->value = value;
  c->pos = rpe_plot_scale_position (axis->transform, axis->param, axis->lo, axis->hi, value);
  c->label[0] = '\0';
}

/* A bent scale (LOG, POWER): both ends labelled with their true values (a log scale's cut-off
 * with "≤" / "≥": everything beyond it has that end's colour), 0 at the centre of a signed
 * bar, then the round values inside (powers of ten; the step's multiples), from each end
 * towards the bottom or the centre, where their labels keep their room.  A signed bar's two
 * sides are chosen alike, so a symmetric range has mirror-image labels. */
static void
bent_ticks (const RpeAxis *axis,
            RpeTicks      *t)
{
  double vmin = axis->lo, vmax = axis->hi, gap = axis->spacing * 1.2;
  bool log_scale = axis->transform == RPE_HEATMAP_TRANSFORM_LOG;
  double cut = pow (10.0, -RPE_PLOT_LOG_DECADES);
  double step = rpe_ticks_step ((vmax - vmin) / 12.0), mag = fmax (fabs (vmin), fabs (vmax));
  Candidate c;
  int n_sides;
  struct { double end, inner; int dir; } side[2];   /* from `end` towards `inner` (exclusive) */

  if (vmin < 0.0 && vmax > 0.0)
    {
      candidate (axis, &c, vmax);
      format_exact (axis, c.label, sizeof c.label, "", vmax, 1);
      place (t, &c, axis->length, 0.0);
      candidate (axis, &c, vmin);
      format_exact (axis, c.label, sizeof c.label, "", vmin, -1);
      place (t, &c, axis->length, gap);
      candidate (axis, &c, 0.0);
      snprintf (c.label, sizeof c.label, "0");
      place (t, &c, axis->length, gap);
      side[0].end = vmax;
      side[0].inner = log_scale ? vmax * cut : 0.0;
      side[1].end = vmin;
      side[1].inner = log_scale ? vmin * cut : 0.0;
      n_sides = 2;
    }
  else
    {
      /* one sign: the end of the largest magnitude and the other end (a log scale's cut-off
       * when the range goes below it) */
      bool negative = vmax <= 0.0;
      double big = negative ? vmin : vmax, small = negative ? vmax : vmin;

      if (log_scale && fabs (big) * cut > fabs (small))
        {
          candidate (axis, &c, big);
          format_exact (axis, c.label, sizeof c.label, "", big, negative ? -1 : 1);
          place (t, &c, axis->length, 0.0);
          small = big * cut;
          candidate (axis, &c, small);
          format_exact (axis, c.label, sizeof c.label, negative ? "\xe2\x89\xa5 " : "\xe2\x89\xa4 ", small,
                        negative ? 1 : -1);
          place (t, &c, axis->length, gap);
        }
      else
        {
          candidate (axis, &c, big);
          format_exact (axis, c.label, sizeof c.label, "", big, negative ? -1 : 1);
          place (t, &c, axis->length, 0.0);
          candidate (axis, &c, small);
          format_exact (axis, c.label, sizeof c.label, "", small, negative ? 1 : -1);
          place (t, &c, axis->length, gap);
        }
      side[0].end = big;
      side[0].inner = small;
      n_sides = 1;
    }

  for (int s = 0; s < n_sides; s++)
    {
      double end = side[s].end, inner = side[s].inner, a = fabs (end), b = fabs (inner);
      double sign = end < 0.0 ? -1.0 : 1.0;

      if (log_scale)
        {
          /* the powers of ten strictly between the side's ends, from the end inwards */
          for (int k = (int) floor (log10 (a)); k >= -400; k--)
            {
              double v = pow (10.0, k);
              char tmp[40];

              if (!(v > b * (1.0 + 1e-9)))
                break;
              if (!(v < a * (1.0 - 1e-9)))
                continue;
              candidate (axis, &c, sign * v);
              snprintf (tmp, sizeof tmp, "%.3g", sign * v);
              set_label (c.label, sizeof c.label, tmp);
              place (t, &c, axis->length, gap);
            }
        }
      else
        {
          /* the multiples of the step, from the end inwards */
          double v[4 * RPE_TICKS_MAX];
          size_t n = multiples (vmin, vmax, step, v, 4 * RPE_TICKS_MAX);

          for (size_t i = 0; i < n; i++)
            {
              double x = sign > 0.0 ? v[n - 1 - i] : v[i];

              if (!(fabs (x) < a * (1.0 - 1e-9) && fabs (x) > b * (1.0 + 1e-9)) || x * sign <= 0.0)
                continue;
              candidate (axis, &c, x);
              format_fixed (c.label, sizeof c.label, x, step, mag);
              place (t, &c, axis->length, gap);
            }
        }
    }
}

/* The SPE paper's transform: attention weights 0 .. 0.02 and beyond (its top colour). */
static void
attention_ticks (const RpeAxis *axis,
                 RpeTicks      *t)
{
  static const double values[] = { 0.0, 0.0005, 0.002, 0.005, 0.01, 0.02 };
  static const char *const labels[] = { "0", "0.0005", "0.002", "0.005", "0.01", "\xe2\x89\xa5 0.02" };
  double pos[6], last = INFINITY;
  size_t keep[6], n = 0;

  /* From the top down, skipping labels that would overlap; 0 is kept rather than its
   * neighbour. */
  for (size_t k = 6; k-- > 0;)
    {
      double y;

      pos[k] = rpe_plot_attention_transform (values[k]);
      y = (1.0 - pos[k]) * axis->length;
      if (last != INFINITY && y - last < axis->spacing && k != 0)
        continue;
      if (k == 0 && last != INFINITY && y - last < axis->spacing && n > 1)
        n--;
      keep[n++] = k;
      last = y;
    }
  for (size_t i = n; i-- > 0;)
    add_tick (t, values[keep[i]], pos[keep[i]], labels[keep[i]]);
}

/* A linear bar (NONE, PERCENTILE): the multiples of the smallest step whose labels stand 1.3
 * lines apart; finer while fewer than two fit at a line apart. */
static void
linear_bar_ticks (const RpeAxis *axis,
                  RpeTicks      *t)
{
  double vmin = axis->lo, vmax = axis->hi, range = vmax - vmin, label_h = axis->spacing;
  double min_step = range * label_h * 1.3 / fmax (1.0, axis->length);
  double target = 2.0, step, v[RPE_TICKS_MAX], mag = fmax (fabs (vmin), fabs (vmax));
  size_t n;

  if (min_step > 0.0 && isfinite (min_step))
    target = range / rpe_ticks_step (min_step) * (1.0 + 1e-9);
  target = fmax (1.0, fmin (12.0, target));
  step = rpe_ticks_step (range / target);
  n = multiples (vmin, vmax, step, v, RPE_TICKS_MAX);
  for (double t2 = target * 2.0; n < 2 && t2 <= 24.0; t2 *= 2.0)
    {
      double v2[RPE_TICKS_MAX], step2 = rpe_ticks_step (range / t2);
      size_t n2 = multiples (vmin, vmax, step2, v2, RPE_TICKS_MAX);

      if (n2 >= 2 && axis->length * step2 / range >= label_h)
        {
          memcpy (v, v2, sizeof v);
          step = step2;
          n = n2;
        }
    }
  for (size_t i = 0; i < n; i++)
    {
      char label[48];

      format_fixed (label, sizeof label, v[i], step, mag);
      add_tick (t, v[i], (v[i] - vmin) / range, label);
    }
}

static int
compare_pos (const void *a,
             const void *b)
{
  double x = ((const RpeTick *) a)->pos, y = ((const RpeTick *) b)->pos;

  return (x > y) - (x < y);
}

void
rpe_ticks_compute (const RpeAxis *axis,
                   RpeTicks      *ticks)
{
  memset (ticks, 0, sizeof *ticks);
  if (axis == NULL || !isfinite (axis->lo) || !isfinite (axis->hi) || !isfinite (axis->length)
      || !isfinite (axis->spacing))
    return;
  if (axis->kind == RPE_AXIS_COLOR_SCALE && axis->transform == RPE_HEATMAP_TRANSFORM_ATTENTION)
    {
      attention_ticks (axis, ticks);
      return;
    }
  if (!(axis->hi > axis->lo) || !(axis->length > 0.0))
    return;
  switch (axis->kind)
    {
    case RPE_AXIS_VALUE:
    case RPE_AXIS_LOG10:
      value_ticks (axis, ticks);
      break;
    case RPE_AXIS_POSITION:
      if (!token_ticks (axis, ticks))
        position_ticks (axis, ticks);
      break;
    case RPE_AXIS_COLOR_SCALE:
      if (axis->transform == RPE_HEATMAP_TRANSFORM_LOG || axis->transform == RPE_HEATMAP_TRANSFORM_POWER)
        {
          bent_ticks (axis, ticks);
          qsort (ticks->tick, ticks->n, sizeof ticks->tick[0], compare_pos);
        }
      else
        linear_bar_ticks (axis, ticks);
      break;
    default:
      break;
    }
}

/* rpe-plot-render.c: Cairo renderers for RPE Studio's plots (GTK-free). */
#include "config.h"

#include "rpe-plot-render.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gi18n.h>

#include "rpe-alloc.h"
#include "rpe-text.h"
#include "rpe-ticks.h"

#define FONT_FAMILY   "Sans"
#define NAN_PIXEL     0x808080u   /* cells without a finite value */

void
rpe_plot_use_figure_fonts (cairo_t *cr)
{
  /* The same glyph rasterisation in every process (GTK's or the headless tool's) and on every
   * surface: grey antialiasing, no hinting, unhinted metrics (so layouts do not move either). */
  cairo_font_options_t *options = cairo_font_options_create ();

  cairo_font_options_set_antialias (options, CAIRO_ANTIALIAS_GRAY);
  cairo_font_options_set_hint_style (options, CAIRO_HINT_STYLE_NONE);
  cairo_font_options_set_hint_metrics (options, CAIRO_HINT_METRICS_OFF);
  cairo_font_options_set_subpixel_order (options, CAIRO_SUBPIXEL_ORDER_DEFAULT);
  cairo_set_font_options (cr, options);
  cairo_font_options_destroy (options);
}

void
rpe_heatmap_data_init (RpeHeatmapData *data)
{
  memset (data, 0, sizeof *data);
  data->scale = RPE_HEATMAP_SCALE_AUTO;
  data->reduce = RPE_HEATMAP_REDUCE_MEAN;
  data->show_colorbar = true;
  data->show_axes = true;
  data->foreground[3] = 1.0;
}

double
rpe_plot_auto_font (double width,
                    double height)
{
  return fmin (12.0, fmax (10.0, fmin (width, height) / 26.0));
}

/* ------------------------------------------------------------------ range */

static bool
data_is_usable (const RpeHeatmapData *data)
{
  size_t count;

  return data != NULL && data->values != NULL && data->rows > 0 && data->cols > 0
         && rpe_size_mul (data->rows, data->cols, &count);
}

static bool
is_symmetric (const RpeHeatmapData *data,
              double                lo,
              double                hi)
{
  switch (data->scale)
    {
    case RPE_HEATMAP_SCALE_SYMMETRIC:
      return true;
    case RPE_HEATMAP_SCALE_LINEAR:
      return false;
    case RPE_HEATMAP_SCALE_AUTO:
    default:
      return lo < 0.0 && hi > 0.0;
    }
}

static int
compare_floats (const void *a,
                const void *b)
{
  float x = *(const float *) a, y = *(const float *) b;

  return (x > y) - (x < y);
}

static double
percentile_of (const RpeHeatmapData *data)
{
  double p = data->transform_param;

  if (!isfinite (p) || p == 0.0)
    return RPE_PLOT_DEFAULT_PERCENTILE;
  return fmin (100.0, fmax (50.0, p));
}

/* [P(100 - p), P(p)] of the finite values (nearest rank on the sorted values: index
 * round (q / 100 * (count - 1))); more than 2^20 values are sampled with a fixed stride.
 * Leaves lo, hi as they are when memory is short. */
static void
percentile_range (const RpeHeatmapData *data,
                  double               *lo,
                  double               *hi)
{
  size_t count = data->rows * data->cols, stride = 1, n = 0, cap = (size_t) 1 << 20;
  double p = percentile_of (data);
  float *buf;

  if (count > cap)
    stride = (count + cap - 1) / cap;
  buf = malloc (sizeof (float) * (count / stride + 1));
  if (buf == NULL)
    return;
  for (size_t i = 0; i < count; i += stride)
    if (isfinite (data->values[i]))
      buf[n++] = data->values[i];
  if (n > 0)
    {
      qsort (buf, n, sizeof (float), compare_floats);
      *lo = buf[(size_t) floor ((100.0 - p) / 100.0 * (double) (n - 1) + 0.5)];
      *hi = buf[(size_t) floor (p / 100.0 * (double) (n - 1) + 0.5)];
    }
  free (buf);
}

bool
rpe_plot_heatmap_range (const RpeHeatmapData  *data,
                        double                *vmin,
                        double                *vmax,
                        const RpeColormap    **colormap)
{
  double lo = INFINITY, hi = -INFINITY;
  const RpeColormap *cmap;
  bool symmetric;

  if (!data_is_usable (data))
    return false;

  if (data->fixed_range && isfinite (data->vmin) && isfinite (data->vmax)
      && data->vmin <= data->vmax)
    {
      lo = data->vmin;
      hi = data->vmax;
    }
  else
    {
      size_t count = data->rows * data->cols;

      for (size_t i = 0; i < count; i++)
        {
          double v = data->values[i];

          if (!isfinite (v))
            continue;
          if (v < lo)
            lo = v;
          if (v > hi)
            hi = v;
        }
      if (!(lo <= hi))
        return false;
      if (data->transform == RPE_HEATMAP_TRANSFORM_PERCENTILE)
        percentile_range (data, &lo, &hi);
    }

  if (data->transform == RPE_HEATMAP_TRANSFORM_ATTENTION)
    {
      /* transformed weights lie in [0, 1] whatever the data */
      if (vmin != NULL)
        *vmin = 0.0;
      if (vmax != NULL)
        *vmax = 1.0;
      if (colormap != NULL)
        *colormap = data->colormap != NULL ? data->colormap : rpe_colormap_default ();
      return true;
    }

  symmetric = is_symmetric (data, lo, hi);
  if (symmetric)
    {
      double a = fmax (fabs (lo), fabs (hi));

      lo = -a;
      hi = a;
    }
  if (!(hi > lo))
    {
      /* Constant data: centre it in a unit-wide (or value-wide) range. */
      double half = lo != 0.0 ? 0.5 * fabs (lo) : 0.5;

      lo -= half;
      hi += half;
    }

  cmap = data->colormap;
  if (cmap == NULL)
    cmap = symmetric ? rpe_colormap_default_diverging () : rpe_colormap_default ();

  if (vmin != NULL)
    *vmin = lo;
  if (vmax != NULL)
    *vmax = hi;
  if (colormap != NULL)
    *colormap = cmap;
  return true;
}

/* ------------------------------------------------------------------ ticks */

/* The positions the rows / columns stand for (more than rows / cols for a pre-reduced map). */
static size_t
row_positions (const RpeHeatmapData *data)
{
  return data->row_positions > 0 ? data->row_positions : data->rows;
}

static size_t
col_positions (const RpeHeatmapData *data)
{
  return data->col_positions > 0 ? data->col_positions : data->cols;
}

/* Whether the boundary N_train falls inside the columns / rows shown (a line there). */
static bool
train_in_cols (const RpeHeatmapData *data)
{
  double t = (double) data->train_length - (double) data->col_origin;

  return data->train_length > 0 && t > 0.0 && t < (double) col_positions (data);
}

static bool
train_in_rows (const RpeHeatmapData *data)
{
  double t = (double) data->train_length - (double) data->row_origin;

  return data->train_length > 0 && t > 0.0 && t < (double) row_positions (data);
}

/* The axes a heatmap's data stands for: [origin, origin + positions) on each. */
static void
axes_of_data (const RpeHeatmapData *data,
              double                font,
              RpeHeatmapAxes       *axes)
{
  memset (axes, 0, sizeof *axes);
  axes->x0 = (double) data->col_origin;
  axes->x1 = (double) data->col_origin + (double) col_positions (data);
  axes->x_limit = 0;   /* the window is the data's: no position beyond it */
  axes->y0 = (double) data->row_origin;
  axes->y1 = (double) data->row_origin + (double) row_positions (data);
  axes->y_limit = 0;
  axes->x_label = data->x_label;
  axes->y_label = data->y_label;
  axes->font = font;
  memcpy (axes->foreground, data->foreground, sizeof axes->foreground);
  axes->tokens = data->tokens;
  axes->n_tokens = data->tokens != NULL ? data->n_tokens : 0;
}

/* The widest number an axis over [lo, hi) shows: its first or its last position's (into
 * buf; the first is wider from a negative start). */
static const char *
last_position_text (double  lo,
                    double  hi,
                    size_t  limit,
                    char   *buf,
                    size_t  size)
{
  double first = ceil (lo - 0.5), last = ceil (hi - 0.5) - 1.0;

  if (limit > 0)
    last = fmin (last, (double) limit - 1.0);
  if (first < 0.0 && -first * 10.0 > last)
    snprintf (buf, size, "\xe2\x88\x92%.0f", -first);
  else
    snprintf (buf, size, "%.0f", fmax (last, 0.0));
  return buf;
}

/* The axis of positions [lo, hi) with the tokens of `axes` (unset when there are none), the
 * room the widest token label shown needs set; cr's font is the axes'. */
static void
token_axis (cairo_t *cr, const RpeHeatmapAxes *axes, double font, bool across, RpeAxis *axis)
{
  double first, last, widest = 0.0;
  char   buf[48];

  if (axes == NULL || axes->tokens == NULL || axes->n_tokens == 0)
    return;
  axis->tokens = axes->tokens;
  axis->n_tokens = axes->n_tokens;
  if (!rpe_ticks_tokens_shown (axis, &first, &last))
    return;
  for (double p = first; p <= last; p += 1.0)
    {
      rpe_ticks_token_text (axes->tokens[(size_t) p], buf, sizeof buf);
      widest = fmax (widest, rpe_text_width (cr, buf));
    }
  /* across: a label and a space; down: a line of text */
  axis->token_spacing = across ? widest + fmax (2.0, font * 0.3) : font * 1.2;
}

/* The ticks of a position axis of a heatmap image: numbers a text width and a half apart
 * across (x), 1.6 lines apart down (y), or the tokens of `axes` where each cell has room for
 * its token; cr's font is the axes' (set by the caller). */
static void
heatmap_axis_ticks (cairo_t              *cr,
                    const RpeHeatmapAxes *axes,
                    double                lo,
                    double                hi,
                    size_t                limit,
                    double                length,
                    double                font,
                    bool                  across,
                    RpeTicks             *ticks)
{
  RpeAxis axis;
  char buf[64];
  double spacing = across ? rpe_text_width (cr, last_position_text (lo, hi, limit, buf, sizeof buf)) * 1.4 + 2.0
                          : font * 1.2 * 1.6;

  rpe_axis_init (&axis, RPE_AXIS_POSITION, lo, hi, length, spacing);
  axis.limit = limit;
  axis.ends = true;
  token_axis (cr, axes, font, across, &axis);
  rpe_ticks_compute (&axis, ticks);
}

/* The widest token label a y axis over [lo, hi) may show (0: none; cr's font). */
static double
widest_token_text (cairo_t *cr, const RpeHeatmapAxes *axes, double lo, double hi, size_t limit)
{
  RpeAxis axis;
  double  first, last, widest = 0.0;
  char    buf[48];

  rpe_axis_init (&axis, RPE_AXIS_POSITION, lo, hi, 1.0, 1.0);
  axis.limit = limit;
  axis.tokens = axes->tokens;
  axis.n_tokens = axes->n_tokens;
  if (axes->tokens == NULL || !rpe_ticks_tokens_shown (&axis, &first, &last))
    return 0.0;
  for (double p = first; p <= last; p += 1.0)
    {
      rpe_ticks_token_text (axes->tokens[(size_t) p], buf, sizeof buf);
      widest = fmax (widest, rpe_text_width (cr, buf));
    }
  return widest;
}

const char *
rpe_plot_position_axis_label (bool across, const RpeTicks *ticks, char *buf, size_t size)
{
  if (ticks == NULL || !ticks->tokens || ticks->n == 0)
    return across ? _("key position n") : _("query position m");
  if (ticks->n == 1)
    /* TRANSLATORS: the axis of a map labelled with the tokens of its positions */
    snprintf (buf, size, across ? _("key token (n = %.0f)") : _("query token (m = %.0f)"), ticks->tick[0].value);
  else
    /* TRANSLATORS: the axis of a map labelled with the tokens of its positions, first … last */
    snprintf (buf, size, across ? _("key token (n = %.0f … %.0f)") : _("query token (m = %.0f … %.0f)"),
              ticks->tick[0].value, ticks->tick[ticks->n - 1].value);
  return buf;
}

double
rpe_plot_attention_transform (double a)
{
  /* SPE paper (Liutkus et al. 2021), figures of attention: min(1, a^0.4 / 0.02^0.4). */
  if (isnan (a))
    return a;
  if (!(a > 0.0))
    return 0.0;
  return fmin (1.0, pow (a / 0.02, 0.4));
}

static double
gamma_of (double param)
{
  if (!isfinite (param) || param <= 0.0)
    return RPE_PLOT_DEFAULT_GAMMA;
  return fmin (10.0, fmax (0.05, param));
}

/* The bend of a magnitude fraction x in [0, 1] (1: the end of the range). */
static double
bend (RpeHeatmapTransform transform,
      double              param,
      double              x)
{
  if (!(x > 0.0))
    return 0.0;
  if (x >= 1.0)
    return 1.0;
  if (transform == RPE_HEATMAP_TRANSFORM_LOG)
    return fmax (0.0, 1.0 + log10 (x) / RPE_PLOT_LOG_DECADES);
  return pow (x, gamma_of (param));
}

double
rpe_plot_scale_position (RpeHeatmapTransform transform,
                         double              param,
                         double              vmin,
                         double              vmax,
                         double              v)
{
  double t;

  if (isnan (v))
    return NAN;
  switch (transform)
    {
    case RPE_HEATMAP_TRANSFORM_ATTENTION:
      t = (rpe_plot_attention_transform (v) - vmin) / (vmax - vmin);
      break;
    case RPE_HEATMAP_TRANSFORM_LOG:
    case RPE_HEATMAP_TRANSFORM_POWER:
      if (!(vmax > vmin))
        return 0.5;
      if (vmin < 0.0 && vmax > 0.0)
        {
          /* 0 stays where the linear scale puts it; each side bends towards it */
          double c = -vmin / (vmax - vmin);

          t = v >= 0.0 ? c + (1.0 - c) * bend (transform, param, v / vmax)
                       : c - c * bend (transform, param, v / vmin);
        }
      else if (vmin >= 0.0)
        {
          if (transform == RPE_HEATMAP_TRANSFORM_LOG)
            {
              /* magnitudes over [max (vmin, vmax 10^-decades), vmax] */
              double floor_ = fmax (vmin, vmax * pow (10.0, -RPE_PLOT_LOG_DECADES));

              t = !(v > floor_) ? 0.0 : !(vmax > floor_) ? 1.0 : log10 (v / floor_) / log10 (vmax / floor_);
            }
          else
            t = bend (transform, param, (v - vmin) / (vmax - vmin));
        }
      else
        {
          /* all negative: the mirror image (the largest magnitude at the bottom) */
          if (transform == RPE_HEATMAP_TRANSFORM_LOG)
            {
              double floor_ = fmax (-vmax, -vmin * pow (10.0, -RPE_PLOT_LOG_DECADES));

              t = !(-v > floor_) ? 1.0 : !(-vmin > floor_) ? 0.0 : 1.0 - log10 (-v / floor_) / log10 (-vmin / floor_);
            }
          else
            t = 1.0 - bend (transform, param, (vmax - v) / (vmax - vmin));
        }
      break;
    case RPE_HEATMAP_TRANSFORM_NONE:
    case RPE_HEATMAP_TRANSFORM_PERCENTILE:
    default:
      t = (v - vmin) / (vmax - vmin);
      break;
    }
  if (isnan (t))
    return t;
  return fmin (1.0, fmax (0.0, t));
}

static const char *const transform_names[RPE_HEATMAP_N_TRANSFORMS] = {
  "linear", "attention", "log", "power", "percentile",
};

bool
rpe_plot_transform_from_name (const char          *name,
                              RpeHeatmapTransform *transform)
{
  if (name == NULL)
    return false;
  for (int i = 0; i < RPE_HEATMAP_N_TRANSFORMS; i++)
    if (strcmp (name, transform_names[i]) == 0)
      {
        *transform = (RpeHeatmapTransform) i;
        return true;
      }
  return false;
}

const char *
rpe_plot_transform_name (RpeHeatmapTransform transform)
{
  return (unsigned) transform < RPE_HEATMAP_N_TRANSFORMS ? transform_names[transform] : "linear";
}

static const char *
ordinal_suffix (double p)
{
  long r = lround (p);

  if (fabs (p - (double) r) > 1e-9 || (r % 100 >= 11 && r % 100 <= 13))
    return "th";
  return r % 10 == 1 ? "st" : r % 10 == 2 ? "nd" : r % 10 == 3 ? "rd" : "th";
}

const char *
rpe_plot_transform_caption (RpeHeatmapTransform  transform,
                            double               param,
                            double               vmin,
                            double               vmax,
                            char                *buf,
                            size_t               size)
{
  double p, q;

  if (buf == NULL || size == 0)
    return "";
  buf[0] = '\0';
  switch (transform)
    {
    case RPE_HEATMAP_TRANSFORM_LOG:
      if (vmin < 0.0 && vmax > 0.0)
        snprintf (buf, size, _("log scale, %g decades on each side"), RPE_PLOT_LOG_DECADES);
      else
        {
          /* the decades the bar spans: from its largest magnitude down to the other end or the
           * cut-off RPE_PLOT_LOG_DECADES below, whichever is nearer (as rpe_plot_scale_position) */
          double big = fmax (fabs (vmin), fabs (vmax)), small = fmin (fabs (vmin), fabs (vmax));
          double span = big > 0.0 ? log10 (big / fmax (small, big * pow (10.0, -RPE_PLOT_LOG_DECADES)))
                                  : RPE_PLOT_LOG_DECADES;
          char num[32];

          /* two significant digits, as written */
          snprintf (num, sizeof num, "%.2g", isfinite (span) ? span : RPE_PLOT_LOG_DECADES);
          snprintf (buf, size, _("log scale, %g decades"), strtod (num, NULL));
        }
      break;
    case RPE_HEATMAP_TRANSFORM_POWER:
      snprintf (buf, size, _("power scale, \u03b3 = %g"), gamma_of (param));
      break;
    case RPE_HEATMAP_TRANSFORM_PERCENTILE:
      p = !isfinite (param) || param == 0.0 ? RPE_PLOT_DEFAULT_PERCENTILE : fmin (100.0, fmax (50.0, param));
      q = 100.0 - p;
      /* Translators: "clipped to the 1st–99th percentile": %g%s are a number and its English ordinal suffix */
      snprintf (buf, size, _("clipped to the %g%s\u2013%g%s percentile"), q, ordinal_suffix (q), p, ordinal_suffix (p));
      break;
    default:
      break;
    }
  return buf;
}

/* A colour bar's ticks: `height` long, labels `font` high. */
static void
colorbar_ticks (double               vmin,
                double               vmax,
                RpeHeatmapTransform  transform,
                double               param,
                double               height,
                double               font,
                RpeTicks            *ticks)
{
  RpeAxis axis;

  rpe_axis_init (&axis, RPE_AXIS_COLOR_SCALE, vmin, vmax, height, font * 1.2);
  axis.transform = transform;
  axis.param = param;
  rpe_ticks_compute (&axis, ticks);
}

/* ----------------------------------------------------------------- layout */

typedef struct
{
  double            font;        /* tick label size */
  double            offset_x;    /* shift of the plot when centred (equal aspect) */
  double            offset_y;
  double            title_font;
  double            tick;        /* tick length */
  double            gap;
  RpePlotRect       image;
  RpePlotRect       bar;
  RpeHeatmapAxes    axes;        /* the positions the image stands for */
  RpeTicks          xt, yt;
  double            vmin, vmax;
  const RpeColormap *cmap;
} Layout;

static double
text_width (cairo_t    *cr,
            const char *text)
{
  return rpe_text_width (cr, text);
}

static const char *
x_label_of (const RpeHeatmapData *data, const RpeTicks *ticks, char *buf, size_t size)
{
  return data->x_label != NULL ? data->x_label : rpe_plot_position_axis_label (true, ticks, buf, size);
}

static const char *
y_label_of (const RpeHeatmapData *data, const RpeTicks *ticks, char *buf, size_t size)
{
  return data->y_label != NULL ? data->y_label : rpe_plot_position_axis_label (false, ticks, buf, size);
}

/* The bar's label, with the scale named when it is not linear (into buf). */
static const char *
colorbar_label_of (const RpeHeatmapData *data,
                   double                vmin,
                   double                vmax,
                   char                 *buf,
                   size_t                size)
{
  const char *base;
  char caption[96];

  if (data->colorbar_label != NULL)
    base = data->colorbar_label[0] != '\0' ? data->colorbar_label : NULL;
  else
    base = data->transform == RPE_HEATMAP_TRANSFORM_ATTENTION ? _("attention weight") : NULL;
  rpe_plot_transform_caption (data->transform, data->transform_param, vmin, vmax, caption, sizeof caption);
  if (caption[0] == '\0')
    return base;
  if (base == NULL)
    snprintf (buf, size, "%s", caption);
  else
    snprintf (buf, size, "%s (%s)", base, caption);
  return buf;
}

static double
font_of (const RpeHeatmapData *data,
         double                width,
         double                height)
{
  return (data->font_size > 0.0 ? data->font_size : rpe_plot_auto_font (width, height))
         * (data->font_scale > 0.0 ? data->font_scale : 1.0);
}

/* Sets cr's font; caller saves/restores. */
static bool
compute_layout (cairo_t              *cr,
                const RpeHeatmapData *data,
                double                width,
                double                height,
                Layout               *lay)
{
  double left, right, top, bottom;
  double label_h;
  char buf[64];
  bool x_numbers = data->show_axes || (data->cell_ticks & (RPE_HEATMAP_TICKS_X | RPE_HEATMAP_TICKS_X_TEXT));
  bool y_numbers = data->show_axes || (data->cell_ticks & (RPE_HEATMAP_TICKS_Y | RPE_HEATMAP_TICKS_Y_TEXT));

  memset (lay, 0, sizeof *lay);
  if (!(width > 0.0) || !(height > 0.0))
    return false;
  if (!rpe_plot_heatmap_range (data, &lay->vmin, &lay->vmax, &lay->cmap))
    return false;

  lay->font = font_of (data, width, height);
  lay->title_font = lay->font * 1.15;
  lay->tick = fmax (2.0, lay->font * 0.35);
  lay->gap = fmax (2.0, lay->font * 0.3);
  label_h = lay->font * 1.2;

  cairo_select_font_face (cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, lay->font);
  axes_of_data (data, lay->font, &lay->axes);

  left = right = bottom = top = lay->gap;
  if (data->title != NULL && data->title[0] != '\0')
    top += lay->title_font * 1.25 + lay->gap;
  if (data->train_length > 0 && !data->hide_train_label)
    top += label_h;

  if (y_numbers)
    {
      last_position_text (lay->axes.y0, lay->axes.y1, lay->axes.y_limit, buf, sizeof buf);
      if (data->show_axes && data->hide_y_labels)
        left += lay->tick;
      else
        {
          /* room for the numbers, or for the tokens where they may be shown */
          left += fmax (text_width (cr, buf),
                        widest_token_text (cr, &lay->axes, lay->axes.y0, lay->axes.y1, lay->axes.y_limit))
                  + lay->gap + lay->tick;
          if (data->show_axes)
            left += label_h + lay->gap;
        }
    }
  if (x_numbers && data->show_axes && data->hide_x_labels)
    bottom += lay->tick;
  else if (x_numbers)
    {
      bottom += lay->tick + lay->gap + label_h;
      if (data->show_axes)
        bottom += lay->gap + label_h;
      /* The last x tick label may stick out to the right of the image. */
      last_position_text (lay->axes.x0, lay->axes.x1, lay->axes.x_limit, buf, sizeof buf);
      right = fmax (right, text_width (cr, buf) / 2.0);
    }

  if (data->show_colorbar)
    {
      double bar_w = fmax (6.0, lay->font * 1.1);
      double plot_h = height - top - bottom;
      char lbuf[256];
      double labels = rpe_plot_colorbar_label_width (cr, lay->vmin, lay->vmax, data->transform,
                                                     data->transform_param,
                                                     colorbar_label_of (data, lay->vmin, lay->vmax, lbuf, sizeof lbuf), plot_h,
                                                     lay->font);

      right = lay->gap + lay->gap * 2.0 + bar_w + labels + lay->gap;
      lay->bar.width = bar_w;
    }

  lay->image.x = round (left);
  lay->image.y = round (top);
  lay->image.width = floor (width - right) - lay->image.x;
  lay->image.height = floor (height - bottom) - lay->image.y;
  if (lay->image.width < 4.0 || lay->image.height < 4.0)
    return false;

  if (data->equal_aspect)
    {
      double cell = fmin (lay->image.width / (double) data->cols, lay->image.height / (double) data->rows);
      double w, h;

      if (data->max_cell > 0.0 && cell > data->max_cell)
        cell = data->max_cell;
      w = fmax (4.0, floor (cell * (double) data->cols));
      h = fmax (4.0, floor (cell * (double) data->rows));
      /* Centre the whole plot (labels move with the image). */
      lay->offset_x = floor ((lay->image.width - w) / 2.0);
      lay->offset_y = floor ((lay->image.height - h) / 2.0);
      lay->image.x += lay->offset_x;
      lay->image.y += lay->offset_y;
      lay->image.width = w;
      lay->image.height = h;
    }

  if (data->show_colorbar)
    {
      lay->bar.x = lay->image.x + lay->image.width + lay->gap * 3.0;
      lay->bar.y = lay->image.y;
      lay->bar.height = lay->image.height;
    }

  if (x_numbers || y_numbers)
    {
      heatmap_axis_ticks (cr, &lay->axes, lay->axes.x0, lay->axes.x1, lay->axes.x_limit, lay->image.width, lay->font,
                          true, &lay->xt);
      heatmap_axis_ticks (cr, &lay->axes, lay->axes.y0, lay->axes.y1, lay->axes.y_limit, lay->image.height, lay->font,
                          false, &lay->yt);
    }
  return true;
}

bool
rpe_plot_heatmap_layout (cairo_t              *cr,
                         const RpeHeatmapData *data,
                         double                width,
                         double                height,
                         RpePlotRect          *image,
                         RpePlotRect          *colorbar)
{
  Layout lay;
  bool ok;

  cairo_save (cr);
  rpe_plot_use_figure_fonts (cr);
  ok = compute_layout (cr, data, width, height, &lay);
  cairo_restore (cr);
  if (image != NULL)
    *image = lay.image;
  if (colorbar != NULL)
    *colorbar = lay.bar;
  return ok;
}

bool
rpe_plot_heatmap_ticks (cairo_t              *cr,
                        const RpeHeatmapData *data,
                        double                width,
                        double                height,
                        RpeTicks             *x,
                        RpeTicks             *y)
{
  Layout *lay = g_new0 (Layout, 1);
  bool ok;

  cairo_save (cr);
  rpe_plot_use_figure_fonts (cr);
  ok = compute_layout (cr, data, width, height, lay);
  cairo_restore (cr);
  if (x != NULL)
    *x = lay->xt;
  if (y != NULL)
    *y = lay->yt;
  g_free (lay);
  return ok;
}

void
rpe_plot_heatmap_axes_ticks (cairo_t              *cr,
                             const RpeHeatmapAxes *axes,
                             double                image_width,
                             double                image_height,
                             RpeTicks             *x,
                             RpeTicks             *y)
{
  cairo_save (cr);
  rpe_plot_use_figure_fonts (cr);
  cairo_select_font_face (cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, axes->font);
  if (x != NULL)
    heatmap_axis_ticks (cr, axes, axes->x0, axes->x1, axes->x_limit, image_width, axes->font, true, x);
  if (y != NULL)
    heatmap_axis_ticks (cr, axes, axes->y0, axes->y1, axes->y_limit, image_height, axes->font, false, y);
  cairo_restore (cr);
}

/* ------------------------------------------------------------------ image */

/* The colour of value v: lut is the colour map as rpe_colormap_rgb24_table packs it, so
 * lut[rpe_colormap_index (t)] is rpe_colormap_map_u8 (cmap, t), one table load per pixel. */
static inline uint32_t
pixel_of (double               v,
          double               vmin,
          double               vmax,
          const uint32_t      *lut,
          RpeHeatmapTransform  transform,
          double               param)
{
  if (transform == RPE_HEATMAP_TRANSFORM_ATTENTION)
    v = rpe_plot_attention_transform (v);
  if (!isfinite (v))
    return NAN_PIXEL;
  if (transform == RPE_HEATMAP_TRANSFORM_ATTENTION || transform == RPE_HEATMAP_TRANSFORM_NONE)
    return lut[rpe_colormap_index ((v - vmin) / (vmax - vmin))];
  return lut[rpe_colormap_index (rpe_plot_scale_position (transform, param, vmin, vmax, v))];
}

/* Reduces the cells [r0, r1) x [c0, c1) to one value (row by row, left to right). */
static double
reduce_block (const RpeHeatmapData *data,
              size_t                r0,
              size_t                r1,
              size_t                c0,
              size_t                c1)
{
  double sum = 0.0, best = NAN;
  size_t count = 0;

  switch (data->reduce)
    {
    case RPE_HEATMAP_REDUCE_MAX:
      for (size_t r = r0; r < r1; r++)
        {
          const float *row = data->values + r * data->cols;

          for (size_t c = c0; c < c1; c++)
            {
              double v = row[c];

              if (isfinite (v) && !(best >= v))
                best = v;
            }
        }
      return best;
    case RPE_HEATMAP_REDUCE_MAX_ABS:
      for (size_t r = r0; r < r1; r++)
        {
          const float *row = data->values + r * data->cols;

          for (size_t c = c0; c < c1; c++)
            {
              double v = row[c];

              if (isfinite (v) && !(fabs (best) >= fabs (v)))
                best = v;
            }
        }
      return best;
    case RPE_HEATMAP_REDUCE_MEAN:
    default:
      for (size_t r = r0; r < r1; r++)
        {
          const float *row = data->values + r * data->cols;

          for (size_t c = c0; c < c1; c++)
            {
              double v = row[c];

              if (isfinite (v))
                {
                  sum += v;
                  count++;
                }
            }
        }
      return count == 0 ? NAN : sum / (double) count;
    }
}

/* acc[i] += x[i], written 8-wide so that GCC's SLP vectoriser packs it at -O2 (its loop
 * vectoriser leaves loops of unknown length alone there). */
static void
add_row (double      *restrict acc,
         const float *restrict x,
         size_t                n)
{
  size_t i = 0;

  for (; i + 8 <= n; i += 8)
    {
      acc[i] += x[i];         acc[i + 1] += x[i + 1];
      acc[i + 2] += x[i + 2]; acc[i + 3] += x[i + 3];
      acc[i + 4] += x[i + 4]; acc[i + 5] += x[i + 5];
      acc[i + 6] += x[i + 6]; acc[i + 7] += x[i + 7];
    }
  for (; i < n; i++)
    acc[i] += x[i];
}

/* Pixel p of `pixels` shows the cells whose centres fall in it: cells c with
 * p <= (c + 1/2) pixels / cells < p + 1.  Returns the first such c (cells >= pixels,
 * so every pixel gets at least one cell). */
static size_t
block_start (size_t p,
             size_t cells,
             size_t pixels)
{
  size_t num = 2 * p * cells;

  if (num <= pixels)
    return 0;
  return (num - pixels + 2 * pixels - 1) / (2 * pixels);
}

/* The mean reduction of make_image without replication, image row by image row: the column
 * sums over the row's cells first (one vectorised pass through each data row, which
 * streams through memory once), then each pixel's block sum from them.  cols holds each
 * image column's cells [c0, c1).  False if out of memory. */
static bool
fill_mean (const RpeHeatmapData *data,
           const Layout         *lay,
           const uint32_t       *lut,
           const size_t         *cols,
           size_t                iw,
           size_t                ih,
           unsigned char        *pixels,
           int                   stride)
{
  size_t n = data->cols;
  double *acc = malloc (n * sizeof (double));
  size_t *miss = malloc (n * sizeof (size_t));   /* non-finite cells skipped, per column */

  if (acc == NULL || miss == NULL)
    {
      free (acc);
      free (miss);
      return false;
    }
  for (size_t i = 0; i < ih; i++)
    {
      uint32_t *out = (uint32_t *) (void *) (pixels + (size_t) stride * i);
      size_t r0 = block_start (i, data->rows, ih);
      size_t r1 = block_start (i + 1, data->rows, ih);
      bool any_miss = false;

      memset (acc, 0, n * sizeof (double));
      for (size_t r = r0; r < r1; r++)
        {
          const float *row = data->values + r * n;

          if (rpe_all_finite_f (row, n))
            add_row (acc, row, n);
          else
            {
              if (!any_miss)
                memset (miss, 0, n * sizeof (size_t));
              any_miss = true;
              for (size_t c = 0; c < n; c++)
                if (isfinite (row[c]))
                  acc[c] += row[c];
                else
                  miss[c]++;
            }
        }
      for (size_t j = 0; j < iw; j++)
        {
          size_t c0 = cols[2 * j], c1 = cols[2 * j + 1];
          size_t count = (r1 - r0) * (c1 - c0);
          double sum = 0.0;

          for (size_t c = c0; c < c1; c++)
            sum += acc[c];
          for (size_t c = c0; any_miss && c < c1; c++)
            count -= miss[c];
          out[j] = pixel_of (count == 0 ? NAN : sum / (double) count, lay->vmin, lay->vmax, lut,
                             data->transform, data->transform_param);
        }
    }
  free (acc);
  free (miss);
  return true;
}

/* An image of at most iw x ih pixels (never more than the data has cells). */
static cairo_surface_t *
make_image (const RpeHeatmapData *data,
            const Layout         *lay,
            size_t                iw,
            size_t                ih)
{
  cairo_surface_t *surface;
  unsigned char *pixels;
  size_t bytes, tmp, *cols;
  uint32_t lut[RPE_COLORMAP_SIZE];
  int stride;

  size_t kx = 1, ky = 1;

  /* More pixels than cells: whole cells replicated kx (ky) times, so that viewers
   * which smooth images on zoom keep the cells crisp; otherwise one pixel per cell. */
  if (iw > data->cols)
    {
      kx = data->full_resolution ? iw / data->cols : 1;
      iw = data->cols * kx;
    }
  if (ih > data->rows)
    {
      ky = data->full_resolution ? ih / data->rows : 1;
      ih = data->rows * ky;
    }
  if (iw == 0 || ih == 0 || iw > INT32_MAX / 4 || ih > INT32_MAX)
    return NULL;
  /* Index arithmetic below multiplies 2 * pixels * cells. */
  if (!rpe_size_mul (iw, data->cols, &tmp) || !rpe_size_mul (tmp, 2, &tmp)
      || !rpe_size_mul (ih, data->rows, &tmp) || !rpe_size_mul (tmp, 2, &tmp))
    return NULL;
  if (rpe_size_bytes (&bytes, 4, iw, ih, 1, 1) != RPE_OK || rpe_budget_check (bytes) != RPE_OK)
    return NULL;

  surface = cairo_image_surface_create (CAIRO_FORMAT_RGB24, (int) iw, (int) ih);
  if (cairo_surface_status (surface) != CAIRO_STATUS_SUCCESS)
    {
      cairo_surface_destroy (surface);
      return NULL;
    }
  cairo_surface_flush (surface);
  pixels = cairo_image_surface_get_data (surface);
  stride = cairo_image_surface_get_stride (surface);

  /* The colour map as packed pixels, and each image column's cells [c0, c1), once per image
   * (the same for every row). */
  rpe_colormap_rgb24_table (lay->cmap, lut);
  if ((cols = malloc (2 * iw * sizeof (size_t))) == NULL)
    {
      cairo_surface_destroy (surface);
      return NULL;
    }
  for (size_t j = 0; j < iw; j++)
    {
      cols[2 * j] = kx > 1 ? j / kx : block_start (j, data->cols, iw);
      cols[2 * j + 1] = kx > 1 ? cols[2 * j] + 1 : block_start (j + 1, data->cols, iw);
    }

  if (kx == 1 && ky == 1 && data->reduce != RPE_HEATMAP_REDUCE_MAX && data->reduce != RPE_HEATMAP_REDUCE_MAX_ABS)
    {
      if (!fill_mean (data, lay, lut, cols, iw, ih, pixels, stride))
        {
          free (cols);
          cairo_surface_destroy (surface);
          return NULL;
        }
    }
  else
    for (size_t i = 0; i < ih; i++)
      {
        uint32_t *out = (uint32_t *) (void *) (pixels + (size_t) stride * i);
        size_t r0 = ky > 1 ? i / ky : block_start (i, data->rows, ih);
        size_t r1 = ky > 1 ? r0 + 1 : block_start (i + 1, data->rows, ih);
        const float *row = data->values + r0 * data->cols;

        for (size_t j = 0; j < iw; j++)
          {
            size_t c0 = cols[2 * j], c1 = cols[2 * j + 1];
            double v;

            if (r1 - r0 == 1 && c1 - c0 == 1)
              v = row[c0];
            else
              v = reduce_block (data, r0, r1, c0, c1);
            out[j] = pixel_of (v, lay->vmin, lay->vmax, lut, data->transform, data->transform_param);
          }
      }
  free (cols);
  cairo_surface_mark_dirty (surface);
  return surface;
}

static cairo_surface_t *
make_colorbar (const RpeColormap *cmap)
{
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 1, RPE_COLORMAP_SIZE);
  uint32_t lut[RPE_COLORMAP_SIZE];
  unsigned char *pixels;
  int stride;

  if (cairo_surface_status (surface) != CAIRO_STATUS_SUCCESS)
    {
      cairo_surface_destroy (surface);
      return NULL;
    }
  cairo_surface_flush (surface);
  pixels = cairo_image_surface_get_data (surface);
  stride = cairo_image_surface_get_stride (surface);
  rpe_colormap_rgb24_table (cmap, lut);
  /* Row 0 (top) is the map's top entry. */
  for (size_t i = 0; i < RPE_COLORMAP_SIZE; i++)
    *(uint32_t *) (void *) (pixels + (size_t) stride * i) = lut[RPE_COLORMAP_SIZE - 1 - i];
  cairo_surface_mark_dirty (surface);
  return surface;
}

/* A colour bar's frame, then the font and colour its ticks and labels are drawn in. */
static void
colorbar_frame (cairo_t           *cr,
                const RpePlotRect *b,
                double             font,
                const double       fg[4])
{
  cairo_select_font_face (cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, font);
  cairo_set_line_width (cr, 1.0);
  cairo_set_line_cap (cr, CAIRO_LINE_CAP_BUTT);
  cairo_set_source_rgba (cr, fg[0], fg[1], fg[2], fg[3] * 0.8);
  cairo_rectangle (cr, b->x + 0.5, b->y + 0.5, b->width - 1.0, b->height - 1.0);
  cairo_stroke (cr);
  cairo_set_source_rgba (cr, fg[0], fg[1], fg[2], fg[3]);
}

static void
paint_surface (cairo_t           *cr,
               cairo_surface_t   *surface,
               const RpePlotRect *rect)
{
  int sw = cairo_image_surface_get_width (surface);
  int sh = cairo_image_surface_get_height (surface);

  cairo_save (cr);
  cairo_rectangle (cr, rect->x, rect->y, rect->width, rect->height);
  cairo_clip (cr);
  cairo_translate (cr, rect->x, rect->y);
  cairo_scale (cr, rect->width / sw, rect->height / sh);
  cairo_set_source_surface (cr, surface, 0, 0);
  cairo_pattern_set_filter (cairo_get_source (cr), CAIRO_FILTER_NEAREST);
  /* PAD keeps the raster edges crisp on screen; vector backends would rasterise a
   * padded pattern, and the image covers the clip exactly anyway. */
  cairo_pattern_set_extend (cairo_get_source (cr),
                            cairo_surface_get_type (cairo_get_target (cr)) == CAIRO_SURFACE_TYPE_IMAGE
                            ? CAIRO_EXTEND_PAD : CAIRO_EXTEND_NONE);
  cairo_paint (cr);
  cairo_restore (cr);
}

/* ------------------------------------------------------------------- text */

static void
show_text_at (cairo_t    *cr,
              const char *text,
              double      x,
              double      y,
              double      xalign,   /* 0 left, 0.5 centre, 1 right of x */
              double      yalign)   /* 0 top, 0.5 middle, 1 bottom at y */
{
  rpe_text_show (cr, text, x, y, xalign, yalign);
}

/* Shrinks cr's font (now `size`) so that text fits in max_width. */
static void
fit_text (cairo_t    *cr,
          const char *text,
          double      size,
          double      max_width)
{
  double w = text_width (cr, text);

  if (w > max_width && max_width > 0.0)
    cairo_set_font_size (cr, size * max_width / w);
}

static void
set_fg (cairo_t              *cr,
        const RpeHeatmapData *data,
        double                alpha)
{
  cairo_set_source_rgba (cr, data->foreground[0], data->foreground[1], data->foreground[2],
                         data->foreground[3] * alpha);
}

/* x of position tick k on an image (its cell's centre) */
static double
position_x (const RpePlotRect    *im,
            const RpeHeatmapAxes *axes,
            const RpeTick        *k)
{
  return round (im->x + im->width * (k->value + 0.5 - axes->x0) / (axes->x1 - axes->x0)) + 0.5;
}

static double
position_y (const RpePlotRect    *im,
            const RpeHeatmapAxes *axes,
            const RpeTick        *k)
{
  return round (im->y + im->height * (k->value + 0.5 - axes->y0) / (axes->y1 - axes->y0)) + 0.5;
}

/* The tick marks of a heatmap image (RPE_HEATMAP_TICKS_* bits in `which`): x under it, y left
 * of it, each with its number when asked; in cr's source and font. */
static void
draw_position_ticks (cairo_t              *cr,
                     const RpePlotRect    *im,
                     const RpeHeatmapAxes *axes,
                     const RpeTicks       *xt,
                     const RpeTicks       *yt,
                     unsigned int          which,
                     double                tick,
                     double                gap)
{
  if (which & (RPE_HEATMAP_TICKS_X | RPE_HEATMAP_TICKS_X_TEXT))
    for (size_t i = 0; i < xt->n; i++)
      {
        double x = position_x (im, axes, &xt->tick[i]);

        cairo_move_to (cr, x, im->y + im->height);
        cairo_line_to (cr, x, im->y + im->height + tick);
        cairo_stroke (cr);
        if (which & RPE_HEATMAP_TICKS_X_TEXT)
          show_text_at (cr, xt->tick[i].label, x, im->y + im->height + tick + gap, 0.5, 0.0);
      }
  if (which & (RPE_HEATMAP_TICKS_Y | RPE_HEATMAP_TICKS_Y_TEXT))
    for (size_t i = 0; i < yt->n; i++)
      {
        double y = position_y (im, axes, &yt->tick[i]);

        cairo_move_to (cr, im->x, y);
        cairo_line_to (cr, im->x - tick, y);
        cairo_stroke (cr);
        if (which & RPE_HEATMAP_TICKS_Y_TEXT)
          show_text_at (cr, yt->tick[i].label, im->x - tick - gap, y, 1.0, 0.5);
      }
}

void
rpe_plot_render_heatmap_axes (cairo_t              *cr,
                              const RpeHeatmapAxes *axes,
                              const RpePlotRect    *im)
{
  RpeTicks *xt, *yt;
  double font, tick, gap, label_h, widest = 0.0;
  const double *fg;
  char          lbuf[128];

  if (cr == NULL || axes == NULL || im == NULL || !(im->width > 0.0) || !(im->height > 0.0)
      || !(axes->x1 > axes->x0) || !(axes->y1 > axes->y0))
    return;
  font = axes->font > 0.0 ? axes->font : 10.0;
  tick = fmax (2.0, font * 0.35);
  gap = fmax (2.0, font * 0.3);
  label_h = font * 1.2;
  fg = axes->foreground;
  xt = g_new0 (RpeTicks, 1);
  yt = g_new0 (RpeTicks, 1);
  rpe_plot_heatmap_axes_ticks (cr, axes, im->width, im->height, xt, yt);

  cairo_save (cr);
  rpe_plot_use_figure_fonts (cr);
  cairo_select_font_face (cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, font);
  cairo_set_line_width (cr, 1.0);
  cairo_set_line_cap (cr, CAIRO_LINE_CAP_BUTT);
  cairo_set_source_rgba (cr, fg[0], fg[1], fg[2], fg[3] * 0.8);
  cairo_rectangle (cr, im->x + 0.5, im->y + 0.5, im->width - 1.0, im->height - 1.0);
  cairo_stroke (cr);
  cairo_set_source_rgba (cr, fg[0], fg[1], fg[2], fg[3]);
  draw_position_ticks (cr, im, axes, xt, yt, RPE_HEATMAP_TICKS_X | RPE_HEATMAP_TICKS_Y | RPE_HEATMAP_TICKS_X_TEXT
                                             | RPE_HEATMAP_TICKS_Y_TEXT, tick, gap);
  show_text_at (cr, axes->x_label != NULL ? axes->x_label : rpe_plot_position_axis_label (true, xt, lbuf, sizeof lbuf),
                im->x + im->width / 2.0, im->y + im->height + tick + gap + label_h + gap, 0.5, 0.0);
  for (size_t i = 0; i < yt->n; i++)
    widest = fmax (widest, text_width (cr, yt->tick[i].label));
  cairo_translate (cr, im->x - tick - gap - widest - gap - label_h, im->y + im->height / 2.0);
  cairo_rotate (cr, -M_PI_2);
  /* along the image, never beyond it (into a title above) */
  rpe_text_show_fitted (
    cr, axes->y_label != NULL ? axes->y_label : rpe_plot_position_axis_label (false, yt, lbuf, sizeof lbuf), 0, 0,
    -im->height / 2.0, im->height / 2.0, 0.0);
  cairo_restore (cr);
  g_free (xt);
  g_free (yt);
}

/* ----------------------------------------------------------------- render */

double
rpe_plot_vector_image_side (double device, size_t cells)
{
  double side;

  /* every cell (up to the cap), and at least 2 pixels per device unit (144 ppi in points) by
   * whole-cell replication */
  if (cells == 0)
    return fmin (2.0 * device, (double) RPE_PLOT_MAX_IMAGE_SIDE);
  side = fmin (fmax (2.0 * device, (double) cells), (double) RPE_PLOT_MAX_IMAGE_SIDE);
  if (side > (double) cells)
    side = fmax (1.0, fmin (ceil (side / (double) cells), floor (RPE_PLOT_MAX_IMAGE_SIDE / (double) cells)))
           * (double) cells;
  return side;
}

void
rpe_plot_render_heatmap (cairo_t              *cr,
                         const RpeHeatmapData *data,
                         double                width,
                         double                height)
{
  Layout lay;
  cairo_surface_t *image;
  const RpePlotRect *im;
  double dw, dh, title_left = INFINITY;
  size_t iw, ih;
  char buf[64];

  if (cr == NULL || data == NULL)
    return;

  cairo_save (cr);
  rpe_plot_use_figure_fonts (cr);
  cairo_rectangle (cr, 0, 0, width, height);
  cairo_clip (cr);
  if (data->background[3] > 0.0)
    {
      cairo_set_source_rgba (cr, data->background[0], data->background[1],
                             data->background[2], data->background[3]);
      cairo_paint (cr);
    }

  if (!compute_layout (cr, data, width, height, &lay))
    {
      cairo_restore (cr);
      return;
    }
  im = &lay.image;

  /* The image has one pixel per device pixel of the plot area at most, one
   * pixel per cell at least when the data is smaller. */
  dw = im->width;
  dh = im->height;
  cairo_user_to_device_distance (cr, &dw, &dh);
  dw = ceil (fabs (dw));
  dh = ceil (fabs (dh));
  if (data->full_resolution)
    {
      dw = rpe_plot_vector_image_side (dw, data->cols);
      dh = rpe_plot_vector_image_side (dh, data->rows);
    }
  iw = dw < 1.0 ? 1 : dw > 1e7 ? 10000000 : (size_t) dw;
  ih = dh < 1.0 ? 1 : dh > 1e7 ? 10000000 : (size_t) dh;

  image = make_image (data, &lay, iw, ih);
  if (image != NULL)
    {
      paint_surface (cr, image, im);
      cairo_surface_destroy (image);
    }

  cairo_set_line_width (cr, 1.0);
  cairo_set_line_cap (cr, CAIRO_LINE_CAP_BUTT);

  /* Training length N_train: thin dashed lines at the boundary between position
   * N_train - 1 and N_train (positions beyond it are extrapolation), light over a
   * faint dark edge so that they show on any colour without hiding the cells. */
  if (train_in_cols (data) || train_in_rows (data))
    {
      static const double dash[] = { 3.0, 3.0 };
      double x = round (im->x + im->width * ((double) data->train_length - (double) data->col_origin) / (double) col_positions (data)) + 0.5;
      double y = round (im->y + im->height * ((double) data->train_length - (double) data->row_origin) / (double) row_positions (data)) + 0.5;

      cairo_save (cr);
      cairo_rectangle (cr, im->x, im->y, im->width, im->height);
      cairo_clip (cr);
      for (int pass = 0; pass < 2; pass++)
        {
          if (pass == 0)
            {
              cairo_set_source_rgba (cr, 0, 0, 0, 0.3);
              cairo_set_line_width (cr, 2.0);
              cairo_set_dash (cr, dash, 2, 0);
            }
          else
            {
              cairo_set_source_rgba (cr, 1, 1, 1, 0.85);
              cairo_set_line_width (cr, 1.0);
              cairo_set_dash (cr, dash, 2, 0);
            }
          if (train_in_cols (data))
            {
              cairo_move_to (cr, x, im->y);
              cairo_line_to (cr, x, im->y + im->height);
            }
          if (train_in_rows (data))
            {
              cairo_move_to (cr, im->x, y);
              cairo_line_to (cr, im->x + im->width, y);
            }
          cairo_stroke (cr);
        }
      cairo_restore (cr);

      /* The label above the image, outside the data. */
      if (!data->hide_train_label)
      {
      set_fg (cr, data, 0.75);
      snprintf (buf, sizeof buf, "N<sub>train</sub> = %zu", data->train_length);
      cairo_set_font_size (cr, lay.font);
      {
        double tw = text_width (cr, buf);
        double tx = train_in_cols (data) ? x : im->x + im->width;

        /* centred on the line, kept over the image */
        tx = fmin (fmax (tx, im->x + tw / 2.0), im->x + im->width - tw / 2.0);
        show_text_at (cr, buf, tx, im->y - lay.gap * 0.5, 0.5, 1.0);
      }
      }
    }

  /* Frame. */
  set_fg (cr, data, 0.8);
  cairo_rectangle (cr, im->x + 0.5, im->y + 0.5, im->width - 1.0, im->height - 1.0);
  cairo_stroke (cr);

  if (data->title != NULL && data->title[0] != '\0')
    {
      double tw;

      cairo_save (cr);
      cairo_select_font_face (cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
      cairo_set_font_size (cr, lay.title_font);
      set_fg (cr, data, 1.0);
      /* over the image, within the figure's margins */
      rpe_text_show_fitted (cr, data->title, im->x + im->width / 2.0, lay.gap + lay.offset_y, lay.gap,
                            width - lay.gap, 0.0);
      /* where it begins (as rpe_text_show_fitted places it) */
      tw = fmin (text_width (cr, data->title), width - 2.0 * lay.gap);
      title_left = fmin (fmax (im->x + im->width / 2.0, lay.gap + tw / 2.0), width - lay.gap - tw / 2.0) - tw / 2.0;
      cairo_restore (cr);
    }

  {
    unsigned int t = data->show_axes ? (RPE_HEATMAP_TICKS_X | RPE_HEATMAP_TICKS_Y
                                        | (data->hide_x_labels ? 0u : RPE_HEATMAP_TICKS_X_TEXT)
                                        | (data->hide_y_labels ? 0u : RPE_HEATMAP_TICKS_Y_TEXT))
                                     : data->cell_ticks;
    double label_h = lay.font * 1.2;
    char         lbuf[128];

    set_fg (cr, data, 1.0);
    draw_position_ticks (cr, im, &lay.axes, &lay.xt, &lay.yt, t, lay.tick, lay.gap);
    if (data->show_axes)
      {
        if (!data->hide_x_labels)
          show_text_at (cr, x_label_of (data, &lay.xt, lbuf, sizeof lbuf), im->x + im->width / 2.0,
                        im->y + im->height + lay.tick + lay.gap + label_h + lay.gap, 0.5, 0.0);

        if (!data->hide_y_labels)
          {
            /* centred on the image, from the figure's top (or the image's, under a title that
             * reaches over the label's column) to its bottom */
            double column = lay.gap + lay.offset_x + label_h;
            double top = title_left < column ? im->y : lay.gap + lay.offset_y;
            double bottom = height - lay.gap - lay.offset_y;
            double centre = im->y + im->height / 2.0;

            cairo_save (cr);
            cairo_translate (cr, lay.gap + lay.offset_x, centre);
            cairo_rotate (cr, -M_PI_2);
            rpe_text_show_fitted (cr, y_label_of (data, &lay.yt, lbuf, sizeof lbuf), 0, 0, centre - bottom,
                                  centre - top, 0.0);
            cairo_restore (cr);
          }
      }
  }

  if (data->show_colorbar)
    {
      char lbuf[256];

      rpe_plot_render_colorbar (cr, lay.cmap, lay.vmin, lay.vmax, data->transform, data->transform_param,
                                colorbar_label_of (data, lay.vmin, lay.vmax, lbuf, sizeof lbuf),
                                &lay.bar, lay.font, data->foreground);
    }

  cairo_restore (cr);
}

/* -------------------------------------------------------------- colour bar */

double
rpe_plot_colorbar_label_width (cairo_t             *cr,
                               double               vmin,
                               double               vmax,
                               RpeHeatmapTransform  transform,
                               double               param,
                               const char          *label,
                               double               height,
                               double               font)
{
  RpeTicks bt;
  double widest = 0.0;

  if (!(vmax > vmin) && transform != RPE_HEATMAP_TRANSFORM_ATTENTION)
    return 0.0;
  cairo_save (cr);
  rpe_plot_use_figure_fonts (cr);
  cairo_select_font_face (cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, font);
  colorbar_ticks (vmin, vmax, transform, param, height, font, &bt);
  for (size_t i = 0; i < bt.n; i++)
    widest = fmax (widest, text_width (cr, bt.tick[i].label));
  cairo_restore (cr);
  return fmax (2.0, font * 0.35) + fmax (2.0, font * 0.3) + widest
         + (label != NULL && label[0] != '\0' ? fmax (2.0, font * 0.3) * 2.0 + font * 1.2 : 0.0);
}

void
rpe_plot_render_colorbar (cairo_t             *cr,
                          const RpeColormap   *colormap,
                          double               vmin,
                          double               vmax,
                          RpeHeatmapTransform  transform,
                          double               param,
                          const char          *label,
                          const RpePlotRect   *b,
                          double               font,
                          const double         fg[4])
{
  cairo_surface_t *bar;
  RpeTicks bt;
  double tick = fmax (2.0, font * 0.35), gap = fmax (2.0, font * 0.3), widest = 0.0;

  if (cr == NULL || b == NULL || !(b->width > 0.0) || !(b->height > 0.0))
    return;
  if (!(vmax > vmin) && transform != RPE_HEATMAP_TRANSFORM_ATTENTION)
    return;
  if (colormap == NULL)
    colormap = rpe_colormap_default ();

  cairo_save (cr);
  rpe_plot_use_figure_fonts (cr);
  bar = make_colorbar (colormap);
  if (bar != NULL)
    {
      /* inside the frame, so that its first and last rows are the map's end colours */
      RpePlotRect inner = { b->x + 1.0, b->y + 1.0, b->width - 2.0, b->height - 2.0 };

      if (inner.width > 0.0 && inner.height > 0.0)
        paint_surface (cr, bar, &inner);
      cairo_surface_destroy (bar);
    }
  colorbar_frame (cr, b, font, fg);
  colorbar_ticks (vmin, vmax, transform, param, b->height, font, &bt);
  for (size_t i = 0; i < bt.n; i++)
    {
      double y = round (b->y + b->height * (1.0 - bt.tick[i].pos)) + 0.5;

      cairo_move_to (cr, b->x + b->width, y);
      cairo_line_to (cr, b->x + b->width + tick, y);
      cairo_stroke (cr);
      show_text_at (cr, bt.tick[i].label, b->x + b->width + tick + gap, y, 0.0, 0.5);
      widest = fmax (widest, text_width (cr, bt.tick[i].label));
    }
  if (label != NULL && label[0] != '\0')
    {
      /* What the colours mean, read bottom to top right of the numbers. */
      double lx = b->x + b->width + tick + gap + widest + gap * 2.0;
      double w = text_width (cr, label);

      cairo_save (cr);
      if (w > b->height && w > 0.0)
        cairo_set_font_size (cr, font * fmax (0.6, b->height / w));
      cairo_translate (cr, lx, b->y + b->height / 2.0);
      cairo_rotate (cr, -M_PI_2);
      show_text_at (cr, label, 0.0, 0.0, 0.5, 0.0);
      cairo_restore (cr);
    }
  cairo_restore (cr);
}

/* -------------------------------------------------------------------- grid */

/* A horizontal colour bar in b (the map's bottom entry at the left), its numbers under it
 * and its label under them, centred. */
static void
render_colorbar_below (cairo_t             *cr,
                       const RpeColormap   *colormap,
                       double               vmin,
                       double               vmax,
                       RpeHeatmapTransform  transform,
                       double               param,
                       const char          *label,
                       const RpePlotRect   *b,
                       double               font,
                       const double         fg[4])
{
  cairo_surface_t *bar;
  RpeTicks bt;
  double tick = fmax (2.0, font * 0.35), gap = fmax (2.0, font * 0.3), widest = 0.0, eff;

  if (!(b->width > 2.0) || !(b->height > 2.0) || (!(vmax > vmin) && transform != RPE_HEATMAP_TRANSFORM_ATTENTION))
    return;
  if (colormap == NULL)
    colormap = rpe_colormap_default ();
  cairo_save (cr);
  bar = cairo_image_surface_create (CAIRO_FORMAT_RGB24, RPE_COLORMAP_SIZE, 1);
  if (cairo_surface_status (bar) == CAIRO_STATUS_SUCCESS)
    {
      uint32_t *px;
      RpePlotRect inner = { b->x + 1.0, b->y + 1.0, b->width - 2.0, b->height - 2.0 };

      cairo_surface_flush (bar);
      px = (uint32_t *) (void *) cairo_image_surface_get_data (bar);
      rpe_colormap_rgb24_table (colormap, px);
      cairo_surface_mark_dirty (bar);
      paint_surface (cr, bar, &inner);
    }
  cairo_surface_destroy (bar);
  colorbar_frame (cr, b, font, fg);
  /* The vertical bar's tick spacing is a line of text; across, a label's width and a space:
   * the length scaled so that one stands for the other. */
  colorbar_ticks (vmin, vmax, transform, param, b->width, font, &bt);
  for (size_t i = 0; i < bt.n; i++)
    widest = fmax (widest, text_width (cr, bt.tick[i].label));
  eff = b->width * font * 1.2 / fmax (1.0, widest + font);
  colorbar_ticks (vmin, vmax, transform, param, eff, font, &bt);
  for (size_t i = 0; i < bt.n; i++)
    {
      double x = round (b->x + b->width * bt.tick[i].pos) + 0.5;

      cairo_move_to (cr, x, b->y + b->height);
      cairo_line_to (cr, x, b->y + b->height + tick);
      cairo_stroke (cr);
      show_text_at (cr, bt.tick[i].label, x, b->y + b->height + tick + gap * 0.5, 0.5, 0.0);
    }
  if (label != NULL && label[0] != '\0')
    show_text_at (cr, label, b->x + b->width / 2.0, b->y + b->height + tick + gap + font * 1.2, 0.5, 0.0);
  cairo_restore (cr);
}

void
rpe_heatmap_grid_init (RpeHeatmapGrid *grid)
{
  memset (grid, 0, sizeof *grid);
  grid->shared_scale = true;
  grid->foreground[3] = 1.0;
}

bool
rpe_plot_grid_range (const RpeHeatmapGrid  *grid,
                     double                *vmin,
                     double                *vmax,
                     const RpeColormap    **colormap)
{
  double lo = INFINITY, hi = -INFINITY;
  const RpeColormap *cmap = NULL;
  bool symmetric = false, any = false, attention = false;

  if (grid == NULL || grid->cells == NULL)
    return false;
  for (size_t i = 0; i < grid->n_cells; i++)
    {
      const RpeHeatmapData *c = &grid->cells[i];
      const RpeColormap *cm;
      double a, b;

      if (!rpe_plot_heatmap_range (c, &a, &b, &cm))
        continue;
      if (!any)
        cmap = cm;
      any = true;
      lo = fmin (lo, a);
      hi = fmax (hi, b);
      if (c->transform == RPE_HEATMAP_TRANSFORM_ATTENTION)
        attention = true;
      else if (c->scale == RPE_HEATMAP_SCALE_SYMMETRIC || (c->scale == RPE_HEATMAP_SCALE_AUTO && a < 0.0 && b > 0.0))
        symmetric = true;
    }
  if (!any)
    return false;
  if (symmetric && !attention)
    {
      double m = fmax (fabs (lo), fabs (hi));

      lo = -m;
      hi = m;
      if (grid->cells[0].colormap == NULL)
        cmap = rpe_colormap_default_diverging ();
    }
  if (vmin != NULL)
    *vmin = lo;
  if (vmax != NULL)
    *vmax = hi;
  if (colormap != NULL)
    *colormap = cmap;
  return true;
}

static const char *
grid_bar_label (const RpeHeatmapGrid *grid,
                double                vmin,
                double                vmax,
                char                 *buf,
                size_t                size)
{
  RpeHeatmapData first;

  if (grid->n_cells == 0)
    return NULL;
  first = grid->cells[0];
  if (grid->colorbar_label != NULL)
    first.colorbar_label = grid->colorbar_label;
  return colorbar_label_of (&first, vmin, vmax, buf, size);
}

/* The grid is laid out like a matplotlib subplot grid with sharex / sharey: square images
 * of one size, close together, each with its title above; the tick numbers only left of the
 * first column and under the bottom row (the cells share the axes), the axis labels once, and
 * one colour bar right of all the cells when the scale is shared. */
typedef struct
{
  double      font;       /* axis labels, tick numbers, colour bar */
  double      cell_font;  /* the cells' titles */
  double      gap;
  double      tick;
  double      hsp, vsp;   /* room between two images across / down (the title band excluded) */
  double      title_h;    /* the band above each image for its title */
  double      extra_w;    /* right of each image: its own colour bar (scale not shared) */
  double      cell_gap;   /* the margin the cell renderer keeps round its image */
  size_t      n_cols, n_rows;
  double      side;       /* image side */
  double      x0, y0;     /* top left of the first image */
  double      top;        /* the grid title's band */
  double      shift_y;    /* the block centred down: the title moves with it */
  RpePlotRect bar;        /* shared colour bar (width 0: none) */
  bool        bar_below;  /* a narrow figure: the bar across under the cells */
  double      vmin, vmax;
  const RpeColormap *cmap;
  RpeHeatmapTransform transform;
  double      left_w;     /* y label + tick numbers + tick, left of the first column */
  RpeTicks    xt, yt;     /* the shared ticks (the first cell's axes) */
  double      param;
  char        label[256];
} GridLayout;

/* The side of the images with c columns in the given room (width, height of the cells' block). */
static double
grid_side (const GridLayout *gl,
           size_t            n_cells,
           size_t            c,
           double            room_w,
           double            room_h)
{
  size_t r = (n_cells + c - 1) / c;
  double sw = (room_w - (double) (c - 1) * gl->hsp - (double) c * gl->extra_w) / (double) c;
  double sh = (room_h - (double) r * gl->title_h - (double) (r - 1) * gl->vsp) / (double) r;

  return floor (fmin (sw, sh));
}

static bool
grid_layout (cairo_t              *cr,
             const RpeHeatmapGrid *grid,
             double                width,
             double                height,
             GridLayout           *gl)
{
  double scale, bottom, right, label_h, room_w, room_h, block_w, block_h, bar_extra = 0.0;
  const RpeHeatmapData *c0;
  char buf[64];

  memset (gl, 0, sizeof *gl);
  if (grid == NULL || grid->cells == NULL || grid->n_cells == 0 || !(width > 0.0) || !(height > 0.0))
    return false;
  c0 = &grid->cells[0];
  scale = grid->font_scale > 0.0 ? grid->font_scale : 1.0;
  gl->font = (grid->font_size > 0.0 ? grid->font_size : rpe_plot_auto_font (width, height)) * scale;
  gl->cell_font = gl->font * 0.9;
  gl->gap = fmax (2.0, gl->font * 0.3);
  gl->tick = fmax (2.0, gl->font * 0.35);
  gl->cell_gap = fmax (2.0, gl->cell_font * 0.3);
  gl->hsp = round (fmax (3.0, gl->font * 0.5));
  gl->vsp = round (fmax (2.0, gl->font * 0.25));
  gl->title_h = ceil (gl->cell_font * 1.3);
  label_h = gl->font * 1.2;

  cairo_save (cr);
  rpe_plot_use_figure_fonts (cr);
  cairo_select_font_face (cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, gl->font);

  gl->top = gl->gap;
  if (grid->title != NULL && grid->title[0] != '\0')
    gl->top += gl->font * 1.15 * 1.25 + gl->gap;
  {
    RpeHeatmapAxes axes;

    axes_of_data (c0, gl->font, &axes);
    last_position_text (axes.y0, axes.y1, axes.y_limit, buf, sizeof buf);
    gl->left_w = label_h + gl->gap + text_width (cr, buf) + gl->gap + gl->tick;
    /* the last x number may stick out right of the last column */
    last_position_text (axes.x0, axes.x1, axes.x_limit, buf, sizeof buf);
    right = gl->gap + text_width (cr, buf) / 2.0;
  }
  bottom = gl->tick + gl->gap + label_h + gl->gap + label_h + gl->gap;
  if (grid->shared_scale && rpe_plot_grid_range (grid, &gl->vmin, &gl->vmax, &gl->cmap))
    {
      gl->transform = c0->transform;
      gl->param = c0->transform_param;
      gl->bar.width = round (fmax (6.0, gl->font * 1.1));
      bar_extra = gl->gap * 2.0 + gl->bar.width
                  + rpe_plot_colorbar_label_width (cr, gl->vmin, gl->vmax, gl->transform, gl->param, grid_bar_label (grid, gl->vmin, gl->vmax, gl->label, sizeof gl->label),
                                                   height - gl->top - bottom, gl->font);
      /* A column of a paper: the bar right of the cells would take a fifth of the width
       * from them; under them it takes a few lines of the height instead. */
      gl->bar_below = width < gl->font * 30.0;
      if (gl->bar_below)
        {
          gl->bar.height = round (fmax (5.0, gl->font * 0.8));
          bottom += gl->gap * 2.0 + gl->bar.height + gl->tick + gl->gap * 0.5 + label_h
                    + (grid_bar_label (grid, gl->vmin, gl->vmax, gl->label, sizeof gl->label) != NULL ? label_h + gl->gap * 0.5 : 0.0);
        }
      else
        right = fmax (right, bar_extra + gl->gap);
    }
  else if (!grid->shared_scale)
    {
      /* each cell its own bar: the widest a cell's needs */
      double widest = 0.0;

      for (size_t i = 0; i < grid->n_cells; i++)
        {
          double a, b;

          if (rpe_plot_heatmap_range (&grid->cells[i], &a, &b, NULL))
            widest = fmax (widest, rpe_plot_colorbar_label_width (cr, a, b, grid->cells[i].transform,
                                                                  grid->cells[i].transform_param, NULL,
                                                                  height / 4.0, gl->cell_font));
        }
      gl->extra_w = ceil (gl->cell_gap * 3.0 + fmax (6.0, gl->cell_font * 1.1) + widest + gl->cell_gap);
    }
  cairo_restore (cr);

  room_w = floor (width - gl->gap - gl->left_w - right);
  room_h = floor (height - gl->top - bottom);
  if (grid->n_columns > 0)
    gl->n_cols = grid->n_columns < grid->n_cells ? grid->n_columns : grid->n_cells;
  else
    {
      /* the number of columns that gives the largest images, or nearly (7 %) with fewer
       * empty places in the last row (8 x 8 rather than 7 x 10 with one cell in the last) */
      double best = -INFINITY;
      size_t best_empty = SIZE_MAX;

      for (size_t c = 1; c <= grid->n_cells && c <= 64; c++)
        best = fmax (best, grid_side (gl, grid->n_cells, c, room_w, room_h));
      gl->n_cols = 1;
      for (size_t c = 1; c <= grid->n_cells && c <= 64; c++)
        {
          double side = grid_side (gl, grid->n_cells, c, room_w, room_h);
          size_t empty = (grid->n_cells + c - 1) / c * c - grid->n_cells;

          if (side >= best * 0.93 && empty < best_empty)
            {
              best_empty = empty;
              gl->n_cols = c;
            }
        }
    }
  gl->n_rows = (grid->n_cells + gl->n_cols - 1) / gl->n_cols;
  gl->side = grid_side (gl, grid->n_cells, gl->n_cols, room_w, room_h);
  if (gl->side < 4.0)
    return false;
  block_w = (double) gl->n_cols * (gl->side + gl->extra_w) + (double) (gl->n_cols - 1) * gl->hsp;
  block_h = (double) gl->n_rows * (gl->side + gl->title_h) + (double) (gl->n_rows - 1) * gl->vsp;
  /* the block with its labels and bar centred in the figure */
  gl->x0 = round (gl->gap + gl->left_w + floor ((room_w - block_w) / 2.0));
  gl->shift_y = fmax (0.0, floor ((room_h - block_h) / 2.0));
  gl->y0 = round (gl->top + gl->shift_y + gl->title_h);
  if (gl->bar.width > 0.0 && gl->bar_below)
    {
      gl->bar.x = gl->x0;
      gl->bar.width = block_w;
      gl->bar.y = round (gl->y0 - gl->title_h + block_h + gl->tick + gl->gap * 0.5 + label_h + gl->gap + label_h
                         + gl->gap * 2.0);
    }
  else if (gl->bar.width > 0.0)
    {
      gl->bar.x = gl->x0 + block_w + gl->gap * 2.0;
      gl->bar.y = gl->y0;
      gl->bar.height = block_h - gl->title_h;
    }

  /* Shared ticks: the positions of the first cell's axes, at least the first and last. */
  cairo_save (cr);
  rpe_plot_use_figure_fonts (cr);
  cairo_select_font_face (cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, gl->font);
  /* nice steps only: a number at an image's far edge would meet its neighbour's first */
  {
    RpeHeatmapAxes axes;
    RpeAxis axis;

    axes_of_data (c0, gl->font, &axes);
    rpe_axis_init (&axis, RPE_AXIS_POSITION, axes.x0, axes.x1, gl->side,
                   text_width (cr, last_position_text (axes.x0, axes.x1, axes.x_limit, buf, sizeof buf)) * 1.05 + gl->gap);
    axis.limit = axes.x_limit;
    rpe_ticks_compute (&axis, &gl->xt);
    /* the last number must end before the next image's first begins */
    while (gl->xt.n > 1)
      {
        const RpeTick *k = &gl->xt.tick[gl->xt.n - 1];
        double x = gl->side * (k->value + 0.5 - axes.x0) / (axes.x1 - axes.x0);

        if (x + text_width (cr, k->label) / 2.0 <= gl->side + gl->hsp - text_width (cr, "0") / 2.0 - gl->gap)
          break;
        gl->xt.n--;
      }
    rpe_axis_init (&axis, RPE_AXIS_POSITION, axes.y0, axes.y1, gl->side, label_h * 1.3);
    axis.limit = axes.y_limit;
    rpe_ticks_compute (&axis, &gl->yt);
  }
  cairo_restore (cr);
  return true;
}

static void
grid_image_rect (const GridLayout *gl,
                 size_t            i,
                 RpePlotRect      *r)
{
  r->x = gl->x0 + (double) (i % gl->n_cols) * (gl->side + gl->extra_w + gl->hsp);
  r->y = gl->y0 + (double) (i / gl->n_cols) * (gl->side + gl->title_h + gl->vsp);
  r->width = gl->side;
  r->height = gl->side;
}

/* Which tick numbers cell i shows: the left column its rows', the cells with nothing below
 * them their columns'. */
static unsigned int
grid_cell_ticks (const GridLayout *gl,
                 size_t            n_cells,
                 size_t            i)
{
  unsigned int t = 0;

  if (i % gl->n_cols == 0)
    t |= RPE_HEATMAP_TICKS_Y | RPE_HEATMAP_TICKS_Y_TEXT;
  if (i + gl->n_cols >= n_cells)
    t |= RPE_HEATMAP_TICKS_X | RPE_HEATMAP_TICKS_X_TEXT;
  return t;
}

bool
rpe_plot_grid_cell_rect (cairo_t              *cr,
                         const RpeHeatmapGrid *grid,
                         double                width,
                         double                height,
                         size_t                i,
                         RpePlotRect          *rect)
{
  GridLayout gl;
  RpePlotRect im;

  if (grid == NULL || i >= grid->n_cells || !grid_layout (cr, grid, width, height, &gl))
    return false;
  grid_image_rect (&gl, i, &im);
  rect->x = im.x;
  rect->y = im.y - gl.title_h;
  rect->width = im.width + gl.extra_w;
  rect->height = im.height + gl.title_h;
  return true;
}

bool
rpe_plot_grid_cell_layout (cairo_t              *cr,
                           const RpeHeatmapGrid *grid,
                           double                width,
                           double                height,
                           size_t                i,
                           RpePlotRect          *image,
                           unsigned int         *ticks,
                           size_t               *n_columns)
{
  GridLayout gl;

  if (grid == NULL || i >= grid->n_cells || !grid_layout (cr, grid, width, height, &gl))
    return false;
  if (image != NULL)
    grid_image_rect (&gl, i, image);
  if (ticks != NULL)
    *ticks = grid_cell_ticks (&gl, grid->n_cells, i);
  if (n_columns != NULL)
    *n_columns = gl.n_cols;
  return true;
}

double
rpe_plot_grid_height_for_width (const RpeHeatmapGrid *grid,
                                double                width,
                                double                max_height)
{
  cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 1, 1);
  cairo_t *cr = cairo_create (s);
  GridLayout gl;
  double h = 0.0;

  /* the columns and side at the largest height; then the height the block needs */
  if (grid_layout (cr, grid, width, max_height, &gl))
    {
      double label_h = gl.font * 1.2;
      double block_h = (double) gl.n_rows * (gl.side + gl.title_h) + (double) (gl.n_rows - 1) * gl.vsp;

      double bottom = gl.tick + gl.gap + label_h + gl.gap + label_h + gl.gap;

      if (gl.bar_below)
        bottom += gl.gap * 2.0 + gl.bar.height + gl.tick + gl.gap * 0.5 + label_h
                  + (grid_bar_label (grid, gl.vmin, gl.vmax, gl.label, sizeof gl.label) != NULL ? label_h + gl.gap * 0.5 : 0.0);
      h = fmin (max_height, ceil (gl.top + block_h + bottom) + 1.0);
    }
  cairo_destroy (cr);
  cairo_surface_destroy (s);
  return h;
}

void
rpe_plot_render_heatmap_grid (cairo_t              *cr,
                              const RpeHeatmapGrid *grid,
                              double                width,
                              double                height)
{
  GridLayout gl;
  const double *fg;
  RpePlotRect first, last;
  char buf[160];
  bool short_titles = false;

  if (cr == NULL || grid == NULL)
    return;
  cairo_save (cr);
  rpe_plot_use_figure_fonts (cr);
  cairo_rectangle (cr, 0, 0, width, height);
  cairo_clip (cr);
  if (grid->background[3] > 0.0)
    {
      cairo_set_source_rgba (cr, grid->background[0], grid->background[1], grid->background[2],
                             grid->background[3]);
      cairo_paint (cr);
    }
  if (!grid_layout (cr, grid, width, height, &gl))
    {
      cairo_restore (cr);
      return;
    }
  fg = grid->foreground;

  /* the cells' titles all shortened ("d = 3" to "3") if one is too wide for its image */
  {
    cairo_save (cr);
    cairo_select_font_face (cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
    cairo_set_font_size (cr, gl.cell_font);
    for (size_t i = 0; i < grid->n_cells && !short_titles; i++)
      if (grid->cells[i].title != NULL && text_width (cr, grid->cells[i].title) > gl.side + gl.hsp * 0.6)
        short_titles = true;
    cairo_restore (cr);
  }

  for (size_t i = 0; i < grid->n_cells; i++)
    {
      RpeHeatmapData cell = grid->cells[i];
      RpePlotRect im;
      unsigned int t = grid_cell_ticks (&gl, grid->n_cells, i);
      double m;

      grid_image_rect (&gl, i, &im);
      /* The image alone (and its own bar): the cell renderer keeps a margin m round it. */
      cell.title = NULL;
      cell.show_axes = false;
      cell.cell_ticks = 0;
      cell.show_colorbar = !grid->shared_scale;
      cell.equal_aspect = false;
      cell.max_cell = 0.0;
      cell.background[3] = 0.0;
      memcpy (cell.foreground, grid->foreground, sizeof cell.foreground);
      cell.font_size = gl.cell_font;
      cell.font_scale = 1.0;
      cell.hide_train_label = true;
      if (grid->shared_scale && gl.bar.width > 0.0)
        {
          cell.fixed_range = true;
          cell.vmin = gl.vmin;
          cell.vmax = gl.vmax;
          cell.colormap = gl.cmap;
          cell.scale = RPE_HEATMAP_SCALE_LINEAR;
        }
      m = round (gl.cell_gap);
      cairo_save (cr);
      cairo_translate (cr, im.x - m, im.y - m);
      if (cell.show_colorbar)
        rpe_plot_render_heatmap (cr, &cell, m + im.width + gl.extra_w, 2.0 * gl.cell_gap + im.height + 0.5);
      else
        rpe_plot_render_heatmap (cr, &cell, m + im.width + gl.cell_gap + 0.5, 2.0 * gl.cell_gap + im.height + 0.5);
      cairo_restore (cr);

      /* the cell's title over its image */
      if (grid->cells[i].title != NULL && grid->cells[i].title[0] != '\0')
        {
          cairo_save (cr);
          cairo_select_font_face (cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
          const char *title = grid->cells[i].title, *eq = strstr (title, "= ");

          cairo_set_font_size (cr, gl.cell_font);
          /* too wide over a small image: "d = 3" says "3" (the grid's title names d) */
          if (short_titles && eq != NULL && eq[2] != '\0')
            title = eq + 2;
          fit_text (cr, title, gl.cell_font, im.width + gl.hsp * 0.6);
          cairo_set_source_rgba (cr, fg[0], fg[1], fg[2], fg[3]);
          show_text_at (cr, title, im.x + im.width / 2.0, im.y - gl.cell_gap * 0.5, 0.5, 1.0);
          cairo_restore (cr);
        }

      /* the shared ticks on the outer edges */
      cairo_select_font_face (cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
      cairo_set_font_size (cr, gl.font);
      cairo_set_source_rgba (cr, fg[0], fg[1], fg[2], fg[3]);
      cairo_set_line_width (cr, 1.0);
      cairo_set_line_cap (cr, CAIRO_LINE_CAP_BUTT);
      {
        RpeHeatmapAxes axes;

        axes_of_data (&grid->cells[i], gl.font, &axes);
        draw_position_ticks (cr, &im, &axes, &gl.xt, &gl.yt, t, gl.tick, gl.gap * 0.5);
      }
    }

  if (gl.bar.width > 0.0 && gl.bar_below)
    render_colorbar_below (cr, gl.cmap, gl.vmin, gl.vmax, gl.transform, gl.param, grid_bar_label (grid, gl.vmin, gl.vmax, gl.label, sizeof gl.label), &gl.bar,
                           gl.font, fg);
  else if (gl.bar.width > 0.0)
    rpe_plot_render_colorbar (cr, gl.cmap, gl.vmin, gl.vmax, gl.transform, gl.param,
                              grid_bar_label (grid, gl.vmin, gl.vmax, gl.label, sizeof gl.label), &gl.bar,
                              gl.font, fg);

  grid_image_rect (&gl, 0, &first);
  grid_image_rect (&gl, grid->n_cells - 1, &last);
  cairo_select_font_face (cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, gl.font);
  cairo_set_source_rgba (cr, fg[0], fg[1], fg[2], fg[3]);
  {
    const RpeHeatmapData *c0 = &grid->cells[0];
    const char *xl = grid->x_label != NULL ? grid->x_label : _("key position n");
    const char *yl = grid->y_label != NULL ? grid->y_label : _("query position m");
    double block_w = (double) gl.n_cols * (gl.side + gl.extra_w) + (double) (gl.n_cols - 1) * gl.hsp - gl.extra_w;
    double bottom_y = gl.y0 + (double) (gl.n_rows - 1) * (gl.side + gl.title_h + gl.vsp) + gl.side;
    double label_h = gl.font * 1.2;

    /* The axes shared by every cell, and N_train once. */
    if (train_in_cols (c0) || train_in_rows (c0))
      snprintf (buf, sizeof buf, "%s   (dashed: N<sub>train</sub> = %zu)", xl, c0->train_length);
    else
      snprintf (buf, sizeof buf, "%s", xl);
    {
      double tw = text_width (cr, buf);
      double cx = fmin (fmax (gl.x0 + block_w / 2.0, tw / 2.0 + gl.gap), width - tw / 2.0 - gl.gap);

      show_text_at (cr, buf, cx, bottom_y + gl.tick + gl.gap * 0.5 + label_h + gl.gap, 0.5, 0.0);
    }
    cairo_save (cr);
    cairo_translate (cr, gl.x0 - gl.left_w, gl.y0 + (bottom_y - gl.y0) / 2.0);
    cairo_rotate (cr, -M_PI_2);
    rpe_text_show_fitted (cr, yl, 0, 0, -(bottom_y - gl.y0) / 2.0, (bottom_y - gl.y0) / 2.0, 0.0);
    cairo_restore (cr);
  }
  if (grid->title != NULL && grid->title[0] != '\0')
    {
      double block_w = (double) gl.n_cols * (gl.side + gl.extra_w) + (double) (gl.n_cols - 1) * gl.hsp;

      cairo_select_font_face (cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
      cairo_set_font_size (cr, gl.font * 1.15);
      rpe_text_show_fitted (cr, grid->title, gl.x0 + block_w / 2.0, gl.gap + gl.shift_y, gl.gap, width - gl.gap, 0.0);
    }
  (void) last;
  cairo_restore (cr);
}

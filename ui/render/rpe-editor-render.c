/* rpe-editor-render.c: Cairo drawing and hit testing for the parameter
 * editors (GTK-free). */
#include "config.h"

#include "rpe-editor-render.h"
#include "rpe-text.h"
#include "rpe-ticks.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <glib/gi18n.h>

#define FONT_FAMILY  "Sans"
#define NEEDLE_EXTRA 8.0   /* phase needle length beyond the point's radius */

static const double default_accent[4] = { 0x35 / 255.0, 0x84 / 255.0, 0xe4 / 255.0, 1.0 };

void
rpe_spectrum_render_data_init (RpeSpectrumRenderData *data)
{
  memset (data, 0, sizeof *data);
  data->selected = -1;
  data->hover = -1;
  data->foreground[3] = 1.0;
  memcpy (data->accent, default_accent, sizeof data->accent);
}

void
rpe_stem_render_data_init (RpeStemRenderData *data)
{
  memset (data, 0, sizeof *data);
  data->selected = -1;
  data->hover = -1;
  data->foreground[3] = 1.0;
  memcpy (data->accent, default_accent, sizeof data->accent);
}

double
rpe_editor_nice_ceiling (double v)
{
  static const double mantissas[] = { 1.0, 2.0, 2.5, 5.0, 10.0 };
  double mag;

  if (!isfinite (v) || v <= 0.0)
    return 1.0;
  mag = pow (10.0, floor (log10 (v)));
  for (size_t i = 0; i < sizeof mantissas / sizeof mantissas[0]; i++)
    if (mantissas[i] * mag >= v * (1.0 - 1e-12))
      return mantissas[i] * mag;
  return 10.0 * mag;
}

void
rpe_editor_frame_to_pixel (const RpeEditorFrame *frame,
                           double                x,
                           double                y,
                           double               *px,
                           double               *py)
{
  const RpePlotRect *a = &frame->area;

  if (px != NULL)
    *px = a->x + (x - frame->x_min) / (frame->x_max - frame->x_min) * a->width;
  if (py != NULL)
    *py = a->y + a->height - (y - frame->y_min) / (frame->y_max - frame->y_min) * a->height;
}

void
rpe_editor_frame_from_pixel (const RpeEditorFrame *frame,
                             double                px,
                             double                py,
                             double               *x,
                             double               *y)
{
  const RpePlotRect *a = &frame->area;

  if (x != NULL)
    *x = frame->x_min + (px - a->x) / a->width * (frame->x_max - frame->x_min);
  if (y != NULL)
    *y = frame->y_min + (a->y + a->height - py) / a->height * (frame->y_max - frame->y_min);
}

/* ------------------------------------------------------------------ layout */

static double
font_size (double width,
           double height)
{
  return fmin (11.0, fmax (8.5, fmin (width, 1.6 * height) / 22.0));
}

/* Margins around a plot with tick labels on the left and bottom and an axis
 * label under the ticks and left of them. */
typedef struct
{
  double font;
  double left;
  double right;
  double top;
  double axis;   /* height under a plot: ticks, tick labels, axis label */
} Margins;

static void
margins (double      width,
         double      height,
         const char *title,
         Margins    *m)
{
  m->font = font_size (width, height);
  m->left = m->font * 5.2;
  m->right = m->font * 1.6;
  m->top = m->font * 2.0;   /* room for the selection read-out */
  if (title != NULL && title[0] != '\0')
    m->top += m->font * 1.8;
  m->axis = m->font * 3.3;
}

double
rpe_editor_spectrum_auto_max (const RpeSpectrumRenderData *data)
{
  double hi = 0.0;

  for (size_t k = 0; data->lambda != NULL && k < data->n_components; k++)
    if (isfinite (data->lambda[k]) && data->lambda[k] > hi)
      hi = data->lambda[k];
  return fmax (1.0, rpe_editor_nice_ceiling (1.2 * hi));
}

static double
spectrum_lambda_max (const RpeSpectrumRenderData *data)
{
  if (isfinite (data->lambda_max) && data->lambda_max > 0.0)
    return data->lambda_max;
  return rpe_editor_spectrum_auto_max (data);
}

static double
profile_extent (const RpeSpectrumRenderData *data)
{
  double a = 0.0;

  for (size_t i = 0; i < data->n_profile; i++)
    if (isfinite (data->profile[i]))
      a = fmax (a, fabs (data->profile[i]));
  return rpe_editor_nice_ceiling (a);
}

static bool
has_profile (const RpeSpectrumRenderData *data)
{
  return data->profile != NULL && data->n_profile >= 2;
}

bool
rpe_editor_spectrum_layout (const RpeSpectrumRenderData *data,
                            double                       width,
                            double                       height,
                            RpeEditorFrame              *spectrum,
                            RpeEditorFrame              *profile)
{
  Margins m;
  double plot_w, avail, spec_h, prof_h;
  bool strip;

  if (data == NULL || !(width > 0.0) || !(height > 0.0))
    return false;
  margins (width, height, data->title, &m);
  plot_w = width - m.left - m.right;
  avail = height - m.top - m.axis;
  if (plot_w < 24.0 || avail < 24.0)
    return false;

  strip = has_profile (data) && (avail - m.axis) * 0.32 >= 28.0;
  if (strip)
    {
      avail -= m.axis;
      spec_h = avail * 0.68;
      prof_h = avail - spec_h;
    }
  else
    {
      spec_h = avail;
      prof_h = 0.0;
    }

  if (spectrum != NULL)
    {
      spectrum->area.x = m.left;
      spectrum->area.y = m.top;
      spectrum->area.width = plot_w;
      spectrum->area.height = spec_h;
      spectrum->x_min = 0.0;
      spectrum->x_max = 0.5;
      spectrum->y_min = 0.0;
      spectrum->y_max = spectrum_lambda_max (data);
    }
  if (profile != NULL)
    {
      memset (profile, 0, sizeof *profile);
      if (strip)
        {
          double a = profile_extent (data);

          profile->area.x = m.left;
          profile->area.y = m.top + spec_h + m.axis;
          profile->area.width = plot_w;
          profile->area.height = prof_h;
          profile->x_min = (double) data->profile_tau0;
          profile->x_max = (double) data->profile_tau0 + (double) (data->n_profile - 1);
          profile->y_min = -a;
          profile->y_max = a;
        }
    }
  return true;
}

ssize_t
rpe_editor_spectrum_hit (const RpeSpectrumRenderData *data,
                         double                       width,
                         double                       height,
                         double                       px,
                         double                       py,
                         double                       radius)
{
  RpeEditorFrame frame;
  ssize_t best = -1;
  double best_d2 = radius * radius;

  if (data == NULL || data->f == NULL || data->lambda == NULL
      || !rpe_editor_spectrum_layout (data, width, height, &frame, NULL))
    return -1;

  for (size_t k = 0; k < data->n_components; k++)
    {
      double x, y, d2;

      if (!isfinite (data->f[k]) || !isfinite (data->lambda[k]))
        continue;
      rpe_editor_frame_to_pixel (&frame, data->f[k], data->lambda[k], &x, &y);
      y = fmax (frame.area.y, y);
      d2 = (x - px) * (x - px) + (y - py) * (y - py);
      if (d2 <= best_d2)
        {
          best_d2 = d2;
          best = (ssize_t) k;
        }
    }
  return best;
}

void
rpe_editor_spectrum_value_at (const RpeEditorFrame *frame,
                              double                px,
                              double                py,
                              double               *f,
                              double               *lambda)
{
  double x, y;

  rpe_editor_frame_from_pixel (frame, px, py, &x, &y);
  if (f != NULL)
    *f = isfinite (x) ? fmin (0.5, fmax (0.0, x)) : 0.0;
  if (lambda != NULL)
    *lambda = isfinite (y) ? fmax (0.0, y) : 0.0;
}

double
rpe_editor_wrap_phase (double theta)
{
  double t;

  if (!isfinite (theta))
    return 0.0;
  t = fmod (theta + M_PI, 2.0 * M_PI);
  if (t <= 0.0)
    t += 2.0 * M_PI;
  return t - M_PI;
}

/* ------------------------------------------------------------------- stems */

void
rpe_editor_stem_range (const RpeStemRenderData *data,
                       double                  *lo,
                       double                  *hi)
{
  double a = 0.0;

  if (data->fixed_range && isfinite (data->vmin) && isfinite (data->vmax)
      && data->vmin < data->vmax)
    {
      *lo = data->vmin;
      *hi = data->vmax;
      return;
    }
  for (size_t i = 0; data->values != NULL && i < data->n; i++)
    if (isfinite (data->values[i]))
      a = fmax (a, fabs (data->values[i]));
  a = rpe_editor_nice_ceiling (a);
  *lo = -a;
  *hi = a;
}

bool
rpe_editor_stem_layout (const RpeStemRenderData *data,
                        double                   width,
                        double                   height,
                        RpeEditorFrame          *frame)
{
  Margins m;
  double plot_w, plot_h;

  if (data == NULL || data->n == 0 || !(width > 0.0) || !(height > 0.0))
    return false;
  margins (width, height, data->title, &m);
  plot_w = width - m.left - m.right;
  plot_h = height - m.top - m.axis;
  if (plot_w < 16.0 || plot_h < 16.0)
    return false;
  frame->area.x = m.left;
  frame->area.y = m.top;
  frame->area.width = plot_w;
  frame->area.height = plot_h;
  frame->x_min = -0.5;
  frame->x_max = (double) data->n - 0.5;
  rpe_editor_stem_range (data, &frame->y_min, &frame->y_max);
  return true;
}

double
rpe_editor_stem_index_at (const RpeEditorFrame *frame,
                          double                px)
{
  double x;

  rpe_editor_frame_from_pixel (frame, px, 0.0, &x, NULL);
  return x;
}

ssize_t
rpe_editor_stem_nearest (const RpeEditorFrame *frame,
                         size_t                n,
                         double                px)
{
  double x;

  if (n == 0)
    return -1;
  x = rpe_editor_stem_index_at (frame, px);
  if (!isfinite (x) || x <= 0.0)
    return 0;
  if (x >= (double) (n - 1))
    return (ssize_t) (n - 1);
  return (ssize_t) floor (x + 0.5);
}

double
rpe_editor_stem_value_at (const RpeEditorFrame *frame,
                          double                py,
                          bool                  clamp)
{
  double y;

  rpe_editor_frame_from_pixel (frame, 0.0, py, NULL, &y);
  if (!isfinite (y))
    return 0.0;
  if (clamp)
    y = fmin (frame->y_max, fmax (frame->y_min, y));
  return y;
}

bool
rpe_editor_stem_stroke (const RpeEditorFrame *frame,
                        float                *values,
                        size_t                n,
                        double                x0,
                        double                y0,
                        double                x1,
                        double                y1,
                        bool                  clamp,
                        size_t               *first,
                        size_t               *last)
{
  double i0, i1, lo_f, hi_f;
  size_t lo, hi;

  if (values == NULL || n == 0)
    return false;
  i0 = rpe_editor_stem_index_at (frame, x0);
  i1 = rpe_editor_stem_index_at (frame, x1);
  if (!isfinite (i0) || !isfinite (i1) || !isfinite (y0) || !isfinite (y1))
    return false;

  /* Each end selects its nearest index, so a stroke within one column still
   * sets that column; everything in between is crossed. */
  lo_f = floor (fmin (i0, i1) + 0.5);
  hi_f = floor (fmax (i0, i1) + 0.5);
  if (hi_f < 0.0 || lo_f > (double) (n - 1))
    return false;
  lo = lo_f <= 0.0 ? 0 : (size_t) lo_f;
  hi = hi_f >= (double) (n - 1) ? n - 1 : (size_t) hi_f;

  for (size_t i = lo; i <= hi; i++)
    {
      double t, py, v;

      /* Interpolate the pointer's row at this index's column.  An end
       * column whose centre the segment does not reach takes that end's
       * value; the newest end wins (a vertical segment, or one inside a
       * single column, sets the pointer's latest value). */
      if (fabs (i1 - i0) < 1e-9)
        t = 1.0;
      else
        {
          t = ((double) i - i0) / (i1 - i0);
          if (t < 0.0 || t > 1.0)
            t = (double) i == floor (i1 + 0.5) ? 1.0 : 0.0;
        }
      py = y0 + t * (y1 - y0);
      v = rpe_editor_stem_value_at (frame, py, clamp);
      values[i] = (float) v;
    }
  if (first != NULL)
    *first = lo;
  if (last != NULL)
    *last = hi;
  return true;
}

/* ----------------------------------------------------------------- drawing */

static void
set_rgba (cairo_t      *cr,
          const double  c[4],
          double        alpha)
{
  cairo_set_source_rgba (cr, c[0], c[1], c[2], c[3] * alpha);
}

static void
set_mix (cairo_t      *cr,
         const double  a[4],
         const double  b[4],
         double        t,
         double        alpha)
{
  cairo_set_source_rgba (cr,
                         a[0] + t * (b[0] - a[0]),
                         a[1] + t * (b[1] - a[1]),
                         a[2] + t * (b[2] - a[2]),
                         alpha * (a[3] + t * (b[3] - a[3])));
}

/* The ticks of a value axis [lo, hi] `length` long: at most max_count, `spacing` apart, at
 * least min_count. */
static void
value_axis_ticks (double    lo,
                  double    hi,
                  double    length,
                  double    spacing,
                  double    min_count,
                  double    max_count,
                  bool      integer,
                  RpeTicks *t)
{
  RpeAxis axis;

  rpe_axis_init (&axis, RPE_AXIS_VALUE, lo, hi, length, spacing);
  axis.min_count = min_count;
  axis.max_count = max_count;
  axis.integer = integer;
  axis.format = RPE_TICK_FORMAT_FIXED;
  rpe_ticks_compute (&axis, t);
}

/* Draws text with its anchor at (x, y): ax, ay in [0, 1] select left/centre/
 * right and top/centre/bottom (baseline-free: uses the font's ascent). */
static void
show_text (cairo_t    *cr,
           const char *text,
           double      x,
           double      y,
           double      ax,
           double      ay)
{
  double ascent, descent;

  /* baseline at y + (1 - ay) * ascent, as the font's ascent places it */
  rpe_text_metrics (cr, &ascent, &descent);
  rpe_text_show (cr, text, x, y, ax, ascent + descent > 0.0 ? ay * ascent / (ascent + descent) : 0.0);
}

/* Frame, horizontal grid lines and labelled y ticks; returns nothing. */
static void
draw_y_axis (cairo_t              *cr,
             const RpeEditorFrame *fr,
             const double          fg[4],
             double                font,
             const char           *label)
{
  RpeTicks t;
  const RpePlotRect *a = &fr->area;

  value_axis_ticks (fr->y_min, fr->y_max, fr->area.height, font * 2.6, 2.0, 8.0, false, &t);
  cairo_set_line_width (cr, 1.0);
  for (size_t i = 0; i < t.n; i++)
    {
      double py;

      rpe_editor_frame_to_pixel (fr, 0.0, t.tick[i].value, NULL, &py);
      py = round (py) + 0.5;
      set_rgba (cr, fg, 0.08);
      cairo_move_to (cr, a->x, py);
      cairo_line_to (cr, a->x + a->width, py);
      cairo_stroke (cr);
      set_rgba (cr, fg, 0.35);
      cairo_move_to (cr, a->x - font * 0.35, py);
      cairo_line_to (cr, a->x, py);
      cairo_stroke (cr);
      set_rgba (cr, fg, 0.7);
      show_text (cr, t.tick[i].label, a->x - font * 0.6, py, 1.0, 0.5);
    }
  if (label != NULL)
    {
      cairo_save (cr);
      cairo_translate (cr, font * 0.6, a->y + a->height / 2.0);
      cairo_rotate (cr, -M_PI / 2.0);
      set_rgba (cr, fg, 0.8);
      show_text (cr, label, 0.0, 0.0, 0.5, 0.0);
      cairo_restore (cr);
    }
}

/* The labelled x ticks (each at its value - offset in the frame's x) and the axis label. */
static void
draw_x_axis (cairo_t              *cr,
             const RpeEditorFrame *fr,
             const double          fg[4],
             double                font,
             const RpeTicks       *t,
             double                offset,
             const char           *label)
{
  const RpePlotRect *a = &fr->area;
  double bottom = a->y + a->height;

  cairo_set_line_width (cr, 1.0);
  for (size_t i = 0; i < t->n; i++)
    {
      double px;

      rpe_editor_frame_to_pixel (fr, t->tick[i].value - offset, 0.0, &px, NULL);
      px = round (px) + 0.5;
      set_rgba (cr, fg, 0.35);
      cairo_move_to (cr, px, bottom);
      cairo_line_to (cr, px, bottom + font * 0.35);
      cairo_stroke (cr);
      set_rgba (cr, fg, 0.7);
      show_text (cr, t->tick[i].label, px, bottom + font * 0.55, 0.5, 0.0);
    }
  if (label != NULL)
    {
      set_rgba (cr, fg, 0.8);
      show_text (cr, label, a->x + a->width / 2.0, bottom + font * 1.9, 0.5, 0.0);
    }
}

static void
draw_frame (cairo_t              *cr,
            const RpeEditorFrame *fr,
            const double          fg[4])
{
  const RpePlotRect *a = &fr->area;

  cairo_set_line_width (cr, 1.0);
  set_rgba (cr, fg, 0.3);
  cairo_rectangle (cr, round (a->x) + 0.5, round (a->y) + 0.5,
                   round (a->width) - 1.0, round (a->height) - 1.0);
  cairo_stroke (cr);
}

static void
draw_title (cairo_t      *cr,
            const char   *title,
            const double  fg[4],
            double        font,
            double        width)
{
  if (title == NULL || title[0] == '\0')
    return;
  cairo_save (cr);
  cairo_select_font_face (cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
  cairo_set_font_size (cr, font * 1.1);
  set_rgba (cr, fg, 0.9);
  show_text (cr, title, width / 2.0, font * 0.5, 0.5, 0.0);
  cairo_restore (cr);
}

static void
begin_drawing (cairo_t      *cr,
               const double  bg[4],
               double        width,
               double        height,
               double        font)
{
  cairo_save (cr);
  cairo_rectangle (cr, 0, 0, width, height);
  cairo_clip (cr);
  if (bg[3] > 0.0)
    {
      cairo_set_source_rgba (cr, bg[0], bg[1], bg[2], bg[3]);
      cairo_paint (cr);
    }
  cairo_select_font_face (cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, font);
}

static void
draw_profile (cairo_t                     *cr,
              const RpeSpectrumRenderData *data,
              const RpeEditorFrame        *fr,
              double                       font)
{
  const RpePlotRect *a = &fr->area;
  RpeTicks ticks;
  double zero_y;
  bool open = false;

  draw_y_axis (cr, fr, data->foreground, font, "P(τ)");
  value_axis_ticks (fr->x_min, fr->x_max, a->width, font * 5.0, 2.0, 10.0, true, &ticks);
  draw_x_axis (cr, fr, data->foreground, font, &ticks, 0.0, _("lag τ (positions)"));
  draw_frame (cr, fr, data->foreground);

  cairo_save (cr);
  cairo_rectangle (cr, a->x, a->y, a->width, a->height);
  cairo_clip (cr);
  rpe_editor_frame_to_pixel (fr, 0.0, 0.0, NULL, &zero_y);
  set_rgba (cr, data->foreground, 0.45);
  cairo_set_line_width (cr, 1.0);
  cairo_move_to (cr, a->x, round (zero_y) + 0.5);
  cairo_line_to (cr, a->x + a->width, round (zero_y) + 0.5);
  cairo_stroke (cr);

  /* Filled area to the zero line, then the curve itself. */
  for (int pass = 0; pass < 2; pass++)
    {
      double first_x = 0.0, last_x = 0.0;

      open = false;
      for (size_t i = 0; i < data->n_profile; i++)
        {
          double px, py, v = data->profile[i];

          if (!isfinite (v))
            continue;
          rpe_editor_frame_to_pixel (fr, (double) data->profile_tau0 + (double) i, v, &px, &py);
          if (!open)
            {
              if (pass == 0)
                {
                  cairo_move_to (cr, px, zero_y);
                  cairo_line_to (cr, px, py);
                }
              else
                cairo_move_to (cr, px, py);
              first_x = px;
              open = true;
            }
          else
            cairo_line_to (cr, px, py);
          last_x = px;
        }
      if (!open)
        break;
      if (pass == 0)
        {
          cairo_line_to (cr, last_x, zero_y);
          cairo_line_to (cr, first_x, zero_y);
          cairo_close_path (cr);
          set_rgba (cr, data->accent, 0.15);
          cairo_fill (cr);
        }
      else
        {
          set_mix (cr, data->accent, data->foreground, 0.45, 1.0);
          cairo_set_line_width (cr, 1.5);
          cairo_set_line_join (cr, CAIRO_LINE_JOIN_ROUND);
          cairo_stroke (cr);
        }
    }
  cairo_restore (cr);
}

void
rpe_editor_render_spectrum (cairo_t                     *cr,
                            const RpeSpectrumRenderData *data,
                            double                       width,
                            double                       height)
{
  RpeEditorFrame fr, prof;
  RpeTicks ticks;
  double font;
  const RpePlotRect *a;
  const double r = RPE_EDITOR_POINT_RADIUS;

  if (cr == NULL || data == NULL)
    return;
  font = font_size (width, height);
  begin_drawing (cr, data->background, width, height, font);
  if (!rpe_editor_spectrum_layout (data, width, height, &fr, &prof))
    {
      cairo_restore (cr);
      return;
    }
  a = &fr.area;

  draw_title (cr, data->title, data->foreground, font, width);
  draw_y_axis (cr, &fr, data->foreground, font, _("gain λ"));
  /* 0, 0.1, ... 0.5 whatever the width */
  value_axis_ticks (fr.x_min, fr.x_max, a->width, 1.0, 5.0, 5.0, false, &ticks);
  draw_x_axis (cr, &fr, data->foreground, font, &ticks, 0.0, _("frequency f (cycles / position)"));
  draw_frame (cr, &fr, data->foreground);

  if (data->f != NULL && data->lambda != NULL)
    {
      double base_y;

      rpe_editor_frame_to_pixel (&fr, 0.0, 0.0, NULL, &base_y);
      cairo_save (cr);
      cairo_rectangle (cr, a->x - r - NEEDLE_EXTRA - 2, a->y - r - NEEDLE_EXTRA - 2,
                       a->width + 2 * (r + NEEDLE_EXTRA + 2), a->height + 2 * (r + NEEDLE_EXTRA + 2));
      cairo_clip (cr);
      cairo_set_line_cap (cr, CAIRO_LINE_CAP_ROUND);

      /* Spectral lines first, then the points: the selected one last. */
      for (size_t k = 0; k < data->n_components; k++)
        {
          double px, py;

          if (!isfinite (data->f[k]) || !isfinite (data->lambda[k]))
            continue;
          rpe_editor_frame_to_pixel (&fr, data->f[k], data->lambda[k], &px, &py);
          py = fmax (a->y, py);
          set_rgba (cr, data->accent, 0.45);
          cairo_set_line_width (cr, 2.0);
          cairo_move_to (cr, px, base_y);
          cairo_line_to (cr, px, py);
          cairo_stroke (cr);
        }

      for (size_t pass = 0; pass < 2; pass++)
        for (size_t k = 0; k < data->n_components; k++)
          {
            bool selected = (ssize_t) k == data->selected;
            bool hover = (ssize_t) k == data->hover;
            double px, py, th, rr;

            if (selected != (pass == 1))
              continue;
            if (!isfinite (data->f[k]) || !isfinite (data->lambda[k]))
              continue;
            rpe_editor_frame_to_pixel (&fr, data->f[k], data->lambda[k], &px, &py);
            py = fmax (a->y, py);
            th = data->theta != NULL && isfinite (data->theta[k]) ? data->theta[k] : 0.0;
            rr = selected ? r + 1.5 : r;

            if (selected)
              {
                /* The phase dial: a faint circle the needle sweeps over. */
                set_rgba (cr, data->accent, data->focused ? 0.22 : 0.14);
                cairo_arc (cr, px, py, rr + NEEDLE_EXTRA, 0, 2 * M_PI);
                cairo_fill (cr);
              }
            else if (hover)
              {
                set_rgba (cr, data->accent, 0.18);
                cairo_arc (cr, px, py, rr + 4.0, 0, 2 * M_PI);
                cairo_fill (cr);
              }

            /* Phase needle: angle theta counter-clockwise from +x. */
            set_mix (cr, data->accent, data->foreground, 0.5, 1.0);
            cairo_set_line_width (cr, 2.0);
            cairo_move_to (cr, px, py);
            cairo_line_to (cr, px + (rr + NEEDLE_EXTRA) * cos (th), py - (rr + NEEDLE_EXTRA) * sin (th));
            cairo_stroke (cr);

            set_rgba (cr, data->accent, 1.0);
            cairo_arc (cr, px, py, rr, 0, 2 * M_PI);
            cairo_fill_preserve (cr);
            if (selected)
              {
                cairo_set_source_rgba (cr, 1, 1, 1, 0.95);
                cairo_set_line_width (cr, 1.5);
                cairo_stroke (cr);
                set_rgba (cr, data->foreground, 0.85);
                cairo_set_line_width (cr, 1.0);
                cairo_arc (cr, px, py, rr + 1.25, 0, 2 * M_PI);
                cairo_stroke (cr);
              }
            else
              cairo_new_path (cr);
          }
      cairo_restore (cr);

      if (data->selected >= 0 && (size_t) data->selected < data->n_components)
        {
          size_t k = (size_t) data->selected;
          char buf[96];

          snprintf (buf, sizeof buf, "k = %zu   f = %.4f   λ = %.3f   θ = %.3f rad", k,
                    data->f[k], data->lambda[k],
                    data->theta != NULL ? data->theta[k] : 0.0);
          set_rgba (cr, data->foreground, 0.75);
          show_text (cr, buf, a->x + a->width, a->y - font * 1.55, 1.0, 0.0);
        }
    }

  if (prof.area.width > 0.0)
    draw_profile (cr, data, &prof, font);
  cairo_restore (cr);
}

void
rpe_editor_render_stems (cairo_t                 *cr,
                         const RpeStemRenderData *data,
                         double                   width,
                         double                   height)
{
  RpeEditorFrame fr;
  RpeTicks ticks;
  double font, spacing, base, base_y, line_w, tip_r;
  const RpePlotRect *a;

  if (cr == NULL || data == NULL)
    return;
  font = font_size (width, height);
  begin_drawing (cr, data->background, width, height, font);
  if (!rpe_editor_stem_layout (data, width, height, &fr))
    {
      cairo_restore (cr);
      return;
    }
  a = &fr.area;
  spacing = a->width / (double) data->n;

  draw_title (cr, data->title, data->foreground, font, width);
  draw_y_axis (cr, &fr, data->foreground, font, NULL);

  /* Integer x ticks in label space (index + offset), so tau = 0 is a tick. */
  value_axis_ticks ((double) data->x_offset, (double) data->x_offset + (double) data->n - 1.0, a->width, font * 4.5,
                    1.0, 16.0, true, &ticks);

  /* Selection and hover bands behind everything else. */
  for (int pass = 0; pass < 2; pass++)
    {
      ssize_t i = pass == 0 ? data->hover : data->selected;
      double px;

      if (i < 0 || (size_t) i >= data->n)
        continue;
      rpe_editor_frame_to_pixel (&fr, (double) i, 0.0, &px, NULL);
      set_rgba (cr, data->accent, pass == 0 ? 0.07 : (data->focused ? 0.2 : 0.12));
      cairo_rectangle (cr, px - fmax (spacing, 3.0) / 2.0, a->y, fmax (spacing, 3.0), a->height);
      cairo_fill (cr);
    }

  draw_x_axis (cr, &fr, data->foreground, font, &ticks, (double) data->x_offset,
               data->x_label != NULL ? data->x_label : _("index"));
  draw_frame (cr, &fr, data->foreground);

  /* The baseline stems grow from: 0 if shown, else the nearest range end. */
  base = fmin (fr.y_max, fmax (fr.y_min, 0.0));
  rpe_editor_frame_to_pixel (&fr, 0.0, base, NULL, &base_y);

  cairo_save (cr);
  cairo_rectangle (cr, a->x, a->y - 6.0, a->width, a->height + 12.0);
  cairo_clip (cr);

  if (fr.y_min <= 0.0 && fr.y_max >= 0.0)
    {
      /* The zero line, highlighted. */
      set_rgba (cr, data->foreground, 0.6);
      cairo_set_line_width (cr, 1.5);
      cairo_move_to (cr, a->x, round (base_y));
      cairo_line_to (cr, a->x + a->width, round (base_y));
      cairo_stroke (cr);
    }

  line_w = fmin (2.5, fmax (1.0, spacing * 0.3));
  tip_r = fmin (4.0, spacing * 0.32);
  cairo_set_line_cap (cr, CAIRO_LINE_CAP_BUTT);
  for (size_t i = 0; data->values != NULL && i < data->n; i++)
    {
      double px, py, v = data->values[i];
      bool selected = (ssize_t) i == data->selected;

      if (!isfinite (v))
        continue;
      v = fmin (fr.y_max, fmax (fr.y_min, v));
      rpe_editor_frame_to_pixel (&fr, (double) i, v, &px, &py);
      if (line_w < 1.5)
        px = round (px) + 0.5;
      set_rgba (cr, data->accent, selected ? 1.0 : 0.85);
      cairo_set_line_width (cr, selected ? line_w + 1.0 : line_w);
      cairo_move_to (cr, px, base_y);
      cairo_line_to (cr, px, py);
      cairo_stroke (cr);
      if (tip_r >= 1.5 || selected)
        {
          double rr = fmax (tip_r, 2.5) + (selected ? 1.5 : 0.0);

          set_rgba (cr, data->accent, 1.0);
          cairo_arc (cr, px, py, rr, 0, 2 * M_PI);
          cairo_fill_preserve (cr);
          if (selected)
            {
              cairo_set_source_rgba (cr, 1, 1, 1, 0.95);
              cairo_set_line_width (cr, 1.5);
              cairo_stroke (cr);
              set_rgba (cr, data->foreground, 0.85);
              cairo_set_line_width (cr, 1.0);
              cairo_arc (cr, px, py, rr + 1.25, 0, 2 * M_PI);
              cairo_stroke (cr);
            }
          else
            cairo_new_path (cr);
        }
    }
  cairo_restore (cr);

  if (data->selected >= 0 && (size_t) data->selected < data->n && data->values != NULL)
    {
      char buf[96];
      size_t i = (size_t) data->selected;

      snprintf (buf, sizeof buf, "%s = %zd   value = %.4g",
                data->x_label != NULL ? data->x_label : _("index"),
                (ssize_t) i + data->x_offset, data->values[i]);
      set_rgba (cr, data->foreground, 0.75);
      show_text (cr, buf, a->x + a->width, a->y - font * 1.55, 1.0, 0.0);
    }
  cairo_restore (cr);
}

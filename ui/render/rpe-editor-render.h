/* rpe-editor-render.h: Cairo drawing and hit testing for the parameter
 * editors (GTK-free).
 *
 * Two editors share this file:
 *  - the sine spectrum editor (docs/math.md, section 1): K components of one (h, d),
 *    each a point at (f_k, lambda_k) with f in [0, 0.5] cycles/position and
 *    lambda >= 0, its phase theta_k drawn as a needle, and an optional strip
 *    under it with the resulting lag profile P(tau);
 *  - the stem editor: n values drawn as stems (conv taps wq/wk of length L,
 *    section 2; FastRPB weights w_tau for tau in [-(N-1), N-1], section 8;
 *    gates g in [0, 1] per feature, section 3).
 *
 * Everything here is a pure function of its inputs.  The layout does not use
 * font metrics, so the widgets' gesture handlers can map pointer positions to
 * values with the same functions the renderers use, without a cairo_t.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <cairo.h>

#include "rpe-plot-render.h"

/* A linear map between a pixel rectangle and a data window:
 * (x_min, y_min) is the bottom-left corner of area, (x_max, y_max) the
 * top-right one. */
typedef struct
{
  RpePlotRect area;
  double      x_min;
  double      x_max;
  double      y_min;
  double      y_max;
} RpeEditorFrame;

typedef struct
{
  const float *f;             /* n_components frequencies, cycles/position, in [0, 0.5] */
  const float *theta;         /* n_components phases, radians (NULL: all 0) */
  const float *lambda;        /* n_components gains >= 0 */
  size_t       n_components;  /* K */
  double       lambda_max;    /* top of the gain axis; <= 0: rpe_editor_spectrum_auto_max () */
  ssize_t      selected;      /* highlighted component, -1: none */
  ssize_t      hover;         /* component under the pointer, -1: none */
  const float *profile;       /* optional lag profile P(tau), n_profile values; NULL: no strip */
  size_t       n_profile;
  ssize_t      profile_tau0;  /* tau of profile[0] */
  const char  *title;         /* NULL: none */
  bool         focused;       /* draw the selection as keyboard-focused */
  double       foreground[4]; /* text, axes, RGBA */
  double       accent[4];     /* points and stems */
  double       background[4]; /* filled first when alpha > 0 */
} RpeSpectrumRenderData;

typedef struct
{
  const float *values;        /* n values */
  size_t       n;
  bool         fixed_range;   /* show [vmin, vmax] (e.g. [0, 1] for gates) */
  double       vmin;
  double       vmax;          /* else a symmetric range [-a, a], rpe_editor_stem_range () */
  ssize_t      x_offset;      /* label of index 0 (tau of w[0] for FastRPB: -(N-1)) */
  const char  *x_label;       /* NULL: "index" */
  const char  *title;         /* NULL: none */
  ssize_t      selected;      /* -1: none */
  ssize_t      hover;         /* -1: none */
  bool         focused;
  double       foreground[4];
  double       accent[4];
  double       background[4];
} RpeStemRenderData;

/* Defaults: nothing to draw, no selection, black foreground, GNOME blue
 * accent (#3584e4), transparent background. */
void    rpe_spectrum_render_data_init (RpeSpectrumRenderData *data);
void    rpe_stem_render_data_init     (RpeStemRenderData     *data);

/* Smallest "nice" number (1, 2, 2.5, 5 times a power of ten) >= v; 1 for v <= 0
 * or non-finite v. */
double  rpe_editor_nice_ceiling       (double v);

/* Frame mapping.  from_pixel is the exact inverse of to_pixel (no clamping). */
void    rpe_editor_frame_to_pixel     (const RpeEditorFrame *frame,
                                       double                x,
                                       double                y,
                                       double               *px,
                                       double               *py);
void    rpe_editor_frame_from_pixel   (const RpeEditorFrame *frame,
                                       double                px,
                                       double                py,
                                       double               *x,
                                       double               *y);

/* ---------------------------------------------------------------- spectrum */

/* The automatic top of the gain axis: nice ceiling of 1.2 max lambda, at least 1. */
double  rpe_editor_spectrum_auto_max  (const RpeSpectrumRenderData *data);

/* The frame of the spectrum plot (x: f in [0, 0.5]; y: lambda in
 * [0, lambda_max]) and, when the data has a profile and there is room, the
 * frame of the profile strip (x: tau; y: symmetric).  profile may be NULL.
 * Returns false if the area is too small to draw. */
bool    rpe_editor_spectrum_layout    (const RpeSpectrumRenderData *data,
                                       double                       width,
                                       double                       height,
                                       RpeEditorFrame              *spectrum,
                                       RpeEditorFrame              *profile);

/* The component whose point is nearest to (px, py) within radius pixels, or
 * -1.  Ties go to the higher index (drawn on top). */
ssize_t rpe_editor_spectrum_hit       (const RpeSpectrumRenderData *data,
                                       double                       width,
                                       double                       height,
                                       double                       px,
                                       double                       py,
                                       double                       radius);

/* The (f, lambda) under a pixel, f clamped to [0, 0.5] and lambda to >= 0
 * (lambda may exceed the axis: the caller grows the axis). */
void    rpe_editor_spectrum_value_at  (const RpeEditorFrame *frame,
                                       double                px,
                                       double                py,
                                       double               *f,
                                       double               *lambda);

/* Wraps a phase to (-pi, pi]. */
double  rpe_editor_wrap_phase         (double theta);

/* Radius of a component's point, pixels (hit tests should use at least this). */
#define RPE_EDITOR_POINT_RADIUS 5.5

void    rpe_editor_render_spectrum    (cairo_t                     *cr,
                                       const RpeSpectrumRenderData *data,
                                       double                       width,
                                       double                       height);

/* ------------------------------------------------------------------- stems */

/* The value range shown: [vmin, vmax] if fixed (and valid), else [-a, a] with
 * a the nice ceiling of max |v| (1 if all are 0 or there are none). */
void    rpe_editor_stem_range         (const RpeStemRenderData *data,
                                       double                  *lo,
                                       double                  *hi);

/* The frame of the stem plot: x in index space, index i at x = i, the frame
 * spanning [-0.5, n - 0.5]; y the value range.  Returns false if too small. */
bool    rpe_editor_stem_layout        (const RpeStemRenderData *data,
                                       double                   width,
                                       double                   height,
                                       RpeEditorFrame          *frame);

/* The fractional index under pixel column px (not clamped). */
double  rpe_editor_stem_index_at      (const RpeEditorFrame *frame,
                                       double                px);

/* The nearest index to pixel column px clamped to [0, n-1]; -1 if n == 0. */
ssize_t rpe_editor_stem_nearest       (const RpeEditorFrame *frame,
                                       size_t                n,
                                       double                px);

/* The value under pixel row py; clamped to [y_min, y_max] when clamp. */
double  rpe_editor_stem_value_at      (const RpeEditorFrame *frame,
                                       double                py,
                                       bool                  clamp);

/* One segment of a drawing stroke from pixel (x0, y0) to (x1, y1): every
 * index whose centre column lies in the closed x interval between the two
 * points (rounded to the nearest index at each end, so a stroke that stays in
 * one column still sets that index) gets the value linearly interpolated
 * along the segment at that column, clamped to the frame's range when clamp.
 * Writes into values[0..n-1]; returns the changed index range in
 * [*first, *last] and true, or false if no index was touched. */
bool    rpe_editor_stem_stroke        (const RpeEditorFrame *frame,
                                       float                *values,
                                       size_t                n,
                                       double                x0,
                                       double                y0,
                                       double                x1,
                                       double                y1,
                                       bool                  clamp,
                                       size_t               *first,
                                       size_t               *last);

void    rpe_editor_render_stems       (cairo_t                 *cr,
                                       const RpeStemRenderData *data,
                                       double                   width,
                                       double                   height);

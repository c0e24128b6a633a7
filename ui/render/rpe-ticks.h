/* rpe-ticks.h: the ticks of every axis and colour bar of RPE Studio's figures (GTK-free).
 *
 * Labels are data.  rpe_ticks_compute says which ticks an axis carries, each with the value
 * it stands for, its place along the axis and its text; the renderers (heatmaps and their
 * grids, colour bars, line plots, the spectrum and stem editors, the window's attention
 * map) draw what it returns and keep no tick rule of their own.  The step between two ticks
 * is always the smallest 1, 2 or 5 x 10^k that keeps their labels apart (rpe_ticks_step):
 * the one step rule of the figures.
 *
 * What it promises, and tests/test-render-ticks.c checks: every label reads back (as a
 * number) to its value; its place is where the axis' scale puts that value; it lies inside
 * the axis; a colour bar under a log or power scale labels its two ends with their true
 * values, and a signed scale of symmetric range has mirror-image labels.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "rpe-plot-render.h"

#define RPE_TICKS_MAX 64

typedef enum
{
  RPE_AXIS_VALUE,        /* values lo .. hi on a linear axis */
  RPE_AXIS_LOG10,        /* lo .. hi are the log10 of the values (a plot's log axis); a tick's
                          * value is the log10 too */
  RPE_AXIS_POSITION,     /* sequence positions: position p is the cell [p, p + 1) and its tick
                          * stands at the cell's centre; lo .. hi is the window shown (e.g. a
                          * zoomed map's [246, 772)); labels are the absolute positions */
  RPE_AXIS_COLOR_SCALE,  /* a colour bar: values lo .. hi (as rpe_plot_heatmap_range gives
                          * them) under `transform`, placed by rpe_plot_scale_position */
} RpeAxisKind;

typedef enum
{
  RPE_TICK_FORMAT_FIXED,  /* the same decimals on every label ("0.000", "0.005"), e-notation
                           * with the same mantissa digits for magnitudes < 1e-3 or >= 1e5 */
  RPE_TICK_FORMAT_SHORT,  /* "0" for zero, otherwise as FIXED in [1e-3, 1e5) and the fewest
                           * significant digits that tell the ticks apart outside it */
} RpeTickFormat;

typedef struct
{
  RpeAxisKind          kind;
  double               lo, hi;       /* the range the axis spans (lo < hi) */
  double               length;       /* its length in user units */
  double               spacing;      /* the room one label needs along the axis: its height on a
                                      * vertical axis, its width and a space across; a colour
                                      * bar: the label's line height (the bar keeps 1.2 to 1.3
                                      * of it between labels) */
  /* VALUE and LOG10 */
  double               min_count;    /* the step is at most (hi - lo) / min_count ... (0: 2) */
  double               max_count;    /* ... and at least (hi - lo) / max_count (0: 10) */
  double               fallback_gap; /* fewer than two ticks: finer steps while two labels stand
                                      * this many `spacing`s apart (0: no fallback) */
  double               fallback_count; /* ... trying at most this many ticks (0: 40) */
  bool                 integer;      /* VALUE: whole steps (at least 1) */
  double               label_offset; /* VALUE: the labels show value + label_offset */
  RpeTickFormat        format;       /* VALUE */
  /* POSITION */
  size_t               limit;        /* positions >= limit have no tick (0: no limit) */
  bool                 ends;         /* an axis with fewer than two ticks gets its last position
                                      * as the second; a short one (<= 16 positions) ends on
                                      * its last position when the spacing allows */
  /* COLOR_SCALE */
  RpeHeatmapTransform  transform;
  double               param;        /* the transform's parameter */
  /* POSITION, added for captures (zero in rpe_axis_init): the token of each position 0 ..
   * n_tokens - 1 (a capture's `tokens`).  When every position shown has a token, there are at
   * most RPE_TICKS_MAX of them and a cell is at least token_spacing long, every position gets a
   * tick labelled with its token (RpeTicks.tokens); otherwise the positions are numbered. */
  const float *tokens;
  size_t       n_tokens;
  double       token_spacing; /* the room the widest token label shown needs (0: spacing) */
} RpeAxis;

typedef struct
{
  double value;       /* what the tick stands for (LOG10: the exponent; POSITION: p) */
  double pos;         /* where it stands: 0 at lo .. 1 at hi (a colour bar: 0 at the bottom) */
  char   label[48];   /* its text, Pango markup ("\xe2\x88\x92" for a minus, 10<sup>k</sup>) */
} RpeTick;

/* (RpeTicks is declared in rpe-plot-render.h) */
struct _RpeTicks
{
  size_t  n;
  RpeTick tick[RPE_TICKS_MAX];   /* in increasing pos */
  size_t  n_minor;
  double  minor[RPE_TICKS_MAX];  /* unlabelled minor ticks (a log axis' 2 .. 9): their values
                                  * (axis coordinates, as RpeTick.value) */
  bool    tokens;                /* POSITION: the labels are the positions' tokens
                                  * (rpe_ticks_token_text), one tick per position, not numbers */
};

/* Zeroes axis and sets kind, range, length and spacing (the other fields: their defaults). */
void   rpe_axis_init     (RpeAxis     *axis,
                          RpeAxisKind  kind,
                          double       lo,
                          double       hi,
                          double       length,
                          double       spacing);

/* The tick step rule: the smallest 1, 2 or 5 x 10^k at least min_step (1 for a min_step that
 * is not a positive finite number). */
double rpe_ticks_step    (double       min_step);

/* The ticks of the axis into ticks (none for an empty or non-finite range). */
void   rpe_ticks_compute (const RpeAxis *axis,
                          RpeTicks      *ticks);

/* The label of a token id: its decimal digits ("17", "\xe2\x88\x92" for a minus). */
void rpe_ticks_token_text (float token, char *buf, size_t size);

/* TRUE when a POSITION axis gets token labels (as rpe_ticks_compute decides): the positions
 * shown, *first .. *last (either may be NULL), all have a token and are at most RPE_TICKS_MAX. */
bool rpe_ticks_tokens_shown (const RpeAxis *axis, double *first, double *last);

/* The number a label reads as: "−1.5e-05" -> -1.5e-05, "10<sup>−3</sup>" -> 0.001,
 * "≥ 0.02" and "≤ 2.5e-06" -> their number; NAN if it is none. */
double rpe_ticks_label_value (const char *label);

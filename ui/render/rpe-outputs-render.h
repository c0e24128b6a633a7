/* rpe-outputs-render.h: the Outputs figure (GTK-free), shared by the Outputs view and
 * `rpe export outputs`.
 *
 * From an RpeOutputs (core/rpe-outputs.h): three heatmap strips over (channel, position):
 * the reference Y, the SPE Y of the first draw and their difference (diverging, symmetric
 * scale), N_train marked; below, two line plots: channel c of both outputs against
 * position, and the relative error per position (the mean over the draws with a band of
 * one standard deviation when there are several draws), both with N_train marked.
 * CSV: the table position, reference_c, estimate_c (every channel), error_mean, error_sd.
 * NPY: (3, Dv, N) float32: reference, estimate, difference (channel-major).
 */
#pragma once

#include "rpe-export.h"
#include "rpe-outputs.h"

typedef struct _RpeOutputsFigure RpeOutputsFigure;

typedef struct
{
  size_t             channel;     /* channel of the line plot (clamped to Dv - 1) */
  const RpeColormap *colormap;    /* the two outputs' map; NULL: viridis */
  const char        *title;       /* NULL: what it shows */
  const char        *method;      /* e.g. "sine", for the title; may be NULL */
  const char        *feature_map; /* e.g. "elu1", for the title; may be NULL */
  /* Added for the colour-scale control (zero: linear, a shared range): */
  RpeHeatmapTransform transform;  /* of the three maps (the SPE paper's is taken as linear:
                                   * outputs are not attention weights) */
  double             transform_param;
  bool               per_panel;   /* each map its own range */
} RpeOutputsFigureOptions;

/* A figure over `outputs` (which must outlive it; nothing is copied but the strings).
 * NULL and *status when out of memory. */
RpeOutputsFigure *rpe_outputs_figure_new  (const RpeOutputs              *outputs,
                                           const RpeOutputsFigureOptions *options,
                                           RpeStatus                     *status);
void              rpe_outputs_figure_free (RpeOutputsFigure              *figure);   /* NULL-safe */
/* The figure description (points into `figure`). */
const RpeFigure  *rpe_outputs_figure_get  (const RpeOutputsFigure        *figure);

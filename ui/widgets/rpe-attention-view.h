/* rpe-attention-view.h: the full attention map of the chosen method and head
 * (docs/math.md, sections 4-9), causal or not, with N_train marked.
 *
 * Long sequences are never held as N x N: the worker computes blocks of rows
 * and reduces them to the canvas' pixels (mean or max per pixel).  Zoom
 * (scroll, pinch, + / - / 0), pan (drag) and a hover read-out of (m, n, value)
 * (the value of the pixel's cells: exact when one cell is one pixel).  While a
 * job runs the old image stays (moved to the new zoom at once).  An RpeFigurePage:
 * the job, its progress and Cancel, the zoom (rpe_figure_page_get_viewport ...), the
 * stale badge, the caption and the export are the page's (rpe-figure-page.h). */
#pragma once

#include <gtk/gtk.h>

#include "rpe-compute.h"
#include "rpe-figure-page.h"

G_BEGIN_DECLS

#define RPE_TYPE_ATTENTION_VIEW (rpe_attention_view_get_type ())
G_DECLARE_FINAL_TYPE (RpeAttentionView, rpe_attention_view, RPE, ATTENTION_VIEW, RpeFigurePage)

GtkWidget         *rpe_attention_view_new          (RpeExplorerState *state);
/* The image shown (NULL while none). */
RpeAttentionImage *rpe_attention_view_get_image    (RpeAttentionView *self);
void               rpe_attention_view_set_reduce   (RpeAttentionView *self,
                                                    RpeHeatmapReduce  reduce);
/* The read-out for canvas coordinates (x, y) (as hovering there shows);
 * NULL outside the map.  Free with g_free. */
char              *rpe_attention_view_describe_point (RpeAttentionView *self,
                                                      double            x,
                                                      double            y);
GtkWidget         *rpe_attention_view_get_canvas   (RpeAttentionView *self);
/* The N the axes show and the N of the map drawn (0: none).  They differ never: a map of
 * another N than the viewport's (after a cancel, or while a new job runs) is drawn under its
 * own axes, and the page's badge says it is stale. */
gsize              rpe_attention_view_get_axes_n  (RpeAttentionView *self);
gsize              rpe_attention_view_get_drawn_n (RpeAttentionView *self);
/* The ticks the canvas draws on its axes (as rpe_plot_render_heatmap_axes places them on the
 * map's side x side image; *side may be NULL); FALSE while nothing is drawn. */
gboolean           rpe_attention_view_get_axis_ticks (RpeAttentionView *self,
                                                      RpeTicks         *x,
                                                      RpeTicks         *y,
                                                      double           *side);
/* The query row m whose weights a(m, .) are plotted under the map (click a row, Up/Down
 * with the view focused); -1 clears it. */
void               rpe_attention_view_set_row      (RpeAttentionView *self,
                                                    gssize            m);
gssize             rpe_attention_view_get_row      (RpeAttentionView *self);
/* The plotted series: key positions (cell centres) and values, from the image shown;
 * returns their number (0: none). */
gsize              rpe_attention_view_get_row_series (RpeAttentionView  *self,
                                                      const double     **x,
                                                      const double     **y);

G_END_DECLS

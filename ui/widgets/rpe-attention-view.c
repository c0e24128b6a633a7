/* rpe-attention-view.c: the attention map, streamed in row blocks and reduced
 * to the canvas' pixels by the worker (rpe_compute_attention_async). */
#include "config.h"

#include <glib/gi18n.h>

#include "rpe-figure-names.h"
#include "rpe-attention-view.h"
#include "rpe-text.h"
#include "rpe-error.h"

#include <math.h>
#include <string.h>

#include "rpe-curve-render.h"

#include "rpe-colormap.h"
#include "rpe-gesture-helper.h"
#include "rpe-job-progress.h"

#define MARGIN_LEFT    58.0
#define MARGIN_TOP     10.0
#define MARGIN_RIGHT   86.0
#define MARGIN_BOTTOM  42.0
#define PROGRESS_DELAY_MS 150
#define ROW_PLOT_HEIGHT 120.0   /* the plot of a(m, .) under the map, when a row is chosen */
#define ROW_PLOT_GAP    8.0
#define AXES_FONT       11.0    /* the axes' text size (px) */

#define ATTENTION_CHANGES (RPE_EXPLORER_CHANGE_ALL & ~(RPE_EXPLORER_CHANGE_TEMPLATE_KIND \
                                                      | RPE_EXPLORER_CHANGE_TRAIN_LENGTH \
                                                      | RPE_EXPLORER_CHANGE_LOOK \
                                                      | RPE_EXPLORER_CHANGE_GRID))

struct _RpeAttentionView
{
  GtkWidget          parent_instance;

  RpeExplorerState  *state;
  gulong             changed_id;
  RpeJobSlot         slot;
  gboolean           dirty;
  RpeAttentionImage *image;
  RpeExplorerSnapshot *image_snapshot;  /* the parameters of image */
  cairo_surface_t   *surface;     /* the image, coloured */
  gsize              n;           /* N of the viewport */
  double             vm0, vm1, vn0, vn1;
  RpeHeatmapReduce   reduce;
  int                requested_side;
  guint              progress_timeout;
  double             drag_m0, drag_n0;
  RpeDragTracker     drag;
  double             pinch_last;  /* the pinch scale of the last zoom step */
  double             fraction;
  gssize             row;         /* the query position m whose row is plotted; -1: none */
  double            *row_x;       /* the plotted series (key positions, values) */
  double            *row_y;
  gsize              row_n;
  RpeProgressEstimate estimate;

  GtkWidget         *box;
  GtkLabel          *caption;
  GtkWidget         *canvas;
  GtkWidget         *progress_box;
  GtkProgressBar    *progress;
  GtkLabel          *hover;
  GtkWidget         *row_clear;
};

G_DEFINE_FINAL_TYPE (RpeAttentionView, rpe_attention_view, GTK_TYPE_WIDGET)

typedef struct
{
  GWeakRef             self;
  RpeExplorerSnapshot *snapshot;   /* what the job computes (for the figure's title) */
} ViewRef;

static guint figure_changed_signal;

/* ---------------------------------------------------------------- layout */

static gboolean
plot_rect (RpeAttentionView *self,
           double           *x,
           double           *y,
           double           *side)
{
  double w = gtk_widget_get_width (self->canvas) - MARGIN_LEFT - MARGIN_RIGHT;
  double h = gtk_widget_get_height (self->canvas) - MARGIN_TOP - MARGIN_BOTTOM;
  double s;

  if (self->row >= 0)
    h -= ROW_PLOT_HEIGHT + ROW_PLOT_GAP;   /* the row plot's strip under the map */
  s = floor (fmin (w, h));

  if (s < 16.0)
    return FALSE;
  *side = s;
  *x = MARGIN_LEFT + floor ((w - s) / 2.0);
  *y = MARGIN_TOP + floor ((h - s) / 2.0);
  return TRUE;
}

static const RpeColormap *
current_colormap (RpeAttentionView *self)
{
  const RpeColormap *cmap = rpe_colormap_lookup (rpe_explorer_state_get_colormap (self->state));

  return cmap != NULL ? cmap : rpe_colormap_default ();
}

static gboolean
method_has_attention (RpeExplorerMethod method)
{
  return method != RPE_EXPLORER_METHOD_FASTRPB && method != RPE_EXPLORER_METHOD_LRPE;
}

/* The renderer's input for img as the figure has it (rpe_attention_view_build_figure):
 * the view colours its pixels with the same range and scale. */
static void
image_render_data (RpeAttentionView  *self,
                   RpeAttentionImage *img,
                   RpeHeatmapData    *d)
{
  rpe_heatmap_data_init (d);
  d->values = img->values;
  d->rows = img->rows;
  d->cols = img->cols;
  d->colormap = current_colormap (self);
  d->reduce = img->reduce;
  d->equal_aspect = TRUE;
  d->scale = RPE_HEATMAP_SCALE_LINEAR;
  d->colorbar_label = _("attention weight");
  rpe_explorer_state_apply_color_scale (self->state, d, method_has_attention (img->method));
}

static void
rebuild_surface (RpeAttentionView *self)
{
  RpeAttentionImage *img = self->image;
  const RpeColormap *cmap = current_colormap (self);
  RpeHeatmapData rd;
  double lo, hi;
  guint8 *data;
  int stride;

  g_clear_pointer (&self->surface, cairo_surface_destroy);
  if (img == NULL)
    return;
  image_render_data (self, img, &rd);
  if (!rpe_plot_heatmap_range (&rd, &lo, &hi, &cmap))
    {
      lo = 0.0;
      hi = 1.0;
    }
  self->surface = cairo_image_surface_create (CAIRO_FORMAT_RGB24, (int) img->cols, (int) img->rows);
  cairo_surface_flush (self->surface);
  data = cairo_image_surface_get_data (self->surface);
  stride = cairo_image_surface_get_stride (self->surface);
  for (gsize i = 0; i < img->rows; i++)
    {
      guint32 *row = (guint32 *) (data + i * stride);

      for (gsize j = 0; j < img->cols; j++)
        {
          float v = img->values[i * img->cols + j];
          guint8 rgb[3];

          double t = rd.transform == RPE_HEATMAP_TRANSFORM_NONE ? (v - lo) / (hi - lo)
                     : rpe_plot_scale_position (rd.transform, rd.transform_param, lo, hi, v);

          rpe_colormap_map_u8 (cmap, isfinite (v) && !isnan (t) ? t : 0.0, rgb);
          row[j] = 0xff000000u | ((guint32) rgb[0] << 16) | ((guint32) rgb[1] << 8) | rgb[2];
        }
    }
  cairo_surface_mark_dirty (self->surface);
}

static void
draw_text (cairo_t    *cr,
           const char *text,
           double      x,
           double      y,
           double      ax,
           double      ay)
{
  /* through Pango like every figure's text: N<sub>train</sub> is a real subscript */
  rpe_text_show (cr, text, x, y, ax, ay);
}

/* The plot of row m of the image: key position n (cell centres) against a(m, n), its x axis
 * the map's key axis (the frame's plot area spans exactly the map's columns). */
static void
row_plot_setup (RpeAttentionView *self,
                RpeCurvePlot     *plot,
                RpeCurveSeries   *series,
                char             *title,
                gsize             title_size)
{
  memset (series, 0, sizeof *series);
  series->x = self->row_x;
  series->y = self->row_y;
  series->n = self->row_n;
  series->color[0] = 0.85;
  series->color[1] = 0.33;
  series->color[2] = 0.1;
  series->color[3] = 1.0;
  rpe_curve_plot_init (plot);
  plot->series = series;
  plot->n_series = 1;
  snprintf (title, title_size, _("row m = %zd: a(m, n)"), self->row);
  plot->title = title;
  plot->x_label = NULL;
  plot->y_label = NULL;
  plot->legend = RPE_CURVE_LEGEND_NONE;
  plot->fixed_x = TRUE;
  plot->x_min = self->vn0 - 0.5;
  plot->x_max = self->vn1 - 0.5;
  plot->font_size = 10.0;
}

static void
draw_row_plot (RpeAttentionView *self,
               cairo_t          *cr,
               double            x,
               double            y,
               double            side,
               GdkRGBA           fg)
{
  RpeCurvePlot plot;
  RpeCurveSeries series;
  RpeCurveFrame frame;
  char title[64];
  double w = gtk_widget_get_width (self->canvas), left, right;

  if (self->row_n == 0)
    return;
  row_plot_setup (self, &plot, &series, title, sizeof title);
  plot.foreground[0] = fg.red;
  plot.foreground[1] = fg.green;
  plot.foreground[2] = fg.blue;
  plot.foreground[3] = fg.alpha;
  /* place the plot so that its data area starts at x and is `side` wide */
  if (!rpe_curve_plot_layout (cr, &plot, w, ROW_PLOT_HEIGHT, &frame))
    return;
  left = frame.area.x;
  right = w - frame.area.x - frame.area.width;
  cairo_save (cr);
  cairo_translate (cr, x - left, y);
  rpe_curve_render (cr, &plot, left + side + right, ROW_PLOT_HEIGHT);
  cairo_restore (cr);
}

/* Fills the row series from the image for self->row (NaN where the image has no row). */
static void
update_row (RpeAttentionView *self)
{
  RpeAttentionImage *img = self->image;
  gsize i;

  g_clear_pointer (&self->row_x, g_free);
  g_clear_pointer (&self->row_y, g_free);
  self->row_n = 0;
  gtk_widget_set_visible (self->row_clear, self->row >= 0);
  if (self->row < 0 || img == NULL || img->rows == 0 || img->cols == 0 || (gsize) self->row < img->m0
      || (gsize) self->row >= img->m1)
    return;
  i = MIN ((gsize) (((guint64) ((gsize) self->row - img->m0) * img->rows) / (img->m1 - img->m0)), img->rows - 1);
  self->row_x = g_new (double, img->cols);
  self->row_y = g_new (double, img->cols);
  for (gsize j = 0; j < img->cols; j++)
    {
      /* the centre of the columns cell j covers */
      self->row_x[j] = (double) img->n0 + ((double) j + 0.5) * (double) (img->n1 - img->n0) / (double) img->cols - 0.5;
      self->row_y[j] = img->values[i * img->cols + j];
    }
  self->row_n = img->cols;
}

/* The map is stale when it was computed for another N than the viewport's: it is then
 * drawn under its own axes (its own window of its own N), never under the new N's. */
static gboolean
image_stale (RpeAttentionView *self)
{
  return self->image != NULL && self->image->n != self->n;
}

/* The window the axes show: the viewport, or the stale image's own window. */
static void
drawn_window (RpeAttentionView *self,
              double           *m0,
              double           *m1,
              double           *n0,
              double           *n1)
{
  if (image_stale (self))
    {
      *m0 = (double) self->image->m0;
      *m1 = (double) self->image->m1;
      *n0 = (double) self->image->n0;
      *n1 = (double) self->image->n1;
      return;
    }
  *m0 = self->vm0;
  *m1 = self->vm1;
  *n0 = self->vn0;
  *n1 = self->vn1;
}

/* The axes of the window drawn: the positions it shows, ticked by the figures' rule. */
static void
view_axes (RpeAttentionView *self,
           GdkRGBA           fg,
           RpeHeatmapAxes   *axes)
{
  memset (axes, 0, sizeof *axes);
  drawn_window (self, &axes->y0, &axes->y1, &axes->x0, &axes->x1);
  axes->x_limit = axes->y_limit = image_stale (self) ? self->image->n : self->n;
  axes->font = AXES_FONT;
  axes->foreground[0] = fg.red;
  axes->foreground[1] = fg.green;
  axes->foreground[2] = fg.blue;
  axes->foreground[3] = fg.alpha;
}

static void
canvas_draw (GtkDrawingArea *area,
             cairo_t        *cr,
             int             width,
             int             height,
             gpointer        user_data)
{
  RpeAttentionView *self = user_data;
  RpeAttentionImage *img = self->image;
  const RpeColormap *cmap = current_colormap (self);
  double x, y, side, vm0, vm1, vn0, vn1;
  GdkRGBA fg;
  guint train = 0;
  gsize axis_n = image_stale (self) ? img->n : self->n;

  if (!plot_rect (self, &x, &y, &side))
    return;
  drawn_window (self, &vm0, &vm1, &vn0, &vn1);
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (GTK_WIDGET (area)), &fg);
  G_GNUC_END_IGNORE_DEPRECATIONS

  cairo_save (cr);
  cairo_rectangle (cr, x, y, side, side);
  cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.08);
  cairo_fill_preserve (cr);
  cairo_clip (cr);
  if (img != NULL && self->surface != NULL)
    {
      /* the image's window [m0, m1) x [n0, n1), placed in the current viewport */
      double sx = side / (vn1 - vn0), sy = side / (vm1 - vm0);

      cairo_save (cr);
      cairo_translate (cr, x + (img->n0 - vn0) * sx, y + (img->m0 - vm0) * sy);
      cairo_scale (cr, (img->n1 - img->n0) * sx / img->cols, (img->m1 - img->m0) * sy / img->rows);
      cairo_set_source_surface (cr, self->surface, 0, 0);
      cairo_pattern_set_filter (cairo_get_source (cr), CAIRO_FILTER_NEAREST);
      cairo_paint (cr);
      cairo_restore (cr);
    }
  if (self->row >= 0 && self->vm1 > self->vm0)
    {
      /* the plotted row, framed */
      double ry = y + ((double) self->row - self->vm0) / (self->vm1 - self->vm0) * side;
      double rh = fmax (1.0, side / (self->vm1 - self->vm0));

      cairo_set_line_width (cr, 1.5);
      cairo_set_source_rgba (cr, 0.85, 0.33, 0.1, 1.0);
      cairo_rectangle (cr, x + 0.75, ry - 0.75, side - 1.5, rh + 1.5);
      cairo_stroke (cr);
    }
  /* N_train: keys n >= N_train right of the vertical line, queries below the horizontal */
  g_object_get (self->state, "train-length", &train, NULL);
  if (train > 0 && train < axis_n)
    {
      double tx = x + ((double) train - vn0) / (vn1 - vn0) * side;
      double ty = y + ((double) train - vm0) / (vm1 - vm0) * side;
      const double dash[] = { 6.0, 4.0 };

      cairo_set_line_width (cr, 1.5);
      cairo_set_dash (cr, dash, 2, 0);
      cairo_set_source_rgba (cr, 1.0, 1.0, 1.0, 0.9);
      cairo_move_to (cr, tx, y);
      cairo_line_to (cr, tx, y + side);
      cairo_move_to (cr, x, ty);
      cairo_line_to (cr, x + side, ty);
      cairo_stroke (cr);
      cairo_set_dash (cr, NULL, 0, 0);
      cairo_set_source_rgba (cr, 1.0, 1.0, 1.0, 0.9);
      cairo_set_font_size (cr, 11.0);
      draw_text (cr, "N<sub>train</sub>", tx + 4, y + 4, 0.0, 0.0);
    }
  if (image_stale (self))
    {
      g_autofree char *mark = g_strdup_printf (_("stale: N = %zu, not %zu"), img->n, self->n);
      cairo_text_extents_t ext;

      cairo_set_font_size (cr, 12.0);
      cairo_text_extents (cr, mark, &ext);
      /* bottom right, clear of the N_train label */
      cairo_set_source_rgba (cr, 0.0, 0.0, 0.0, 0.65);
      cairo_rectangle (cr, x + side - ext.width - 18, y + side - ext.height - 16, ext.width + 12, ext.height + 10);
      cairo_fill (cr);
      cairo_set_source_rgb (cr, 1.0, 0.85, 0.3);
      draw_text (cr, mark, x + side - 12, y + side - 11, 1.0, 1.0);
    }
  cairo_restore (cr);

  /* frame, ticks, labels: the figure's axes, numbered as an export of this window */
  {
    RpeHeatmapAxes axes;
    RpePlotRect image = { x, y, side, side };

    view_axes (self, fg, &axes);
    rpe_plot_render_heatmap_axes (cr, &axes, &image);
  }

  /* colour bar */
  if (img != NULL)
    {
      /* the figure's colour bar (ticks placed by the scale, its name in the label) */
      RpePlotRect bar = { x + side + 10, y, 14, side };
      RpeHeatmapData rd;
      double lo, hi, fgc[4] = { fg.red, fg.green, fg.blue, fg.alpha };
      char caption[96];
      g_autofree char *label = NULL;

      image_render_data (self, img, &rd);
      if (rpe_plot_heatmap_range (&rd, &lo, &hi, &cmap))
        {
          rpe_plot_transform_caption (rd.transform, rd.transform_param, lo, hi, caption, sizeof caption);
          label = caption[0] != '\0' ? g_strdup (caption) : NULL;
          rpe_plot_render_colorbar (cr, cmap, lo, hi, rd.transform, rd.transform_param, label, &bar, 10.0, fgc);
        }
    }
  if (self->row >= 0)
    draw_row_plot (self, cr, x, y + side + MARGIN_BOTTOM, side, fg);
}

/* -------------------------------------------------------------- requests */

/* The viewport is a finite window [v0, v0 + span) inside [0, N) with a span
 * of at least min (N, 4) cells: whatever a gesture computed (a NaN, an
 * infinity, an inverted or empty window) ends as such a window; a non-finite
 * one shows the whole map. */
static void
clamp_axis (double *v0,
            double *v1,
            double  n)
{
  double min_span = fmin (n, 4.0), span;

  if (!isfinite (*v0) || !isfinite (*v1))
    {
      *v0 = 0.0;
      *v1 = n;
      return;
    }
  span = *v1 - *v0;
  if (!isfinite (span) || span > n)
    span = n;
  if (span < min_span)
    {
      double c = 0.5 * (*v0 + *v1);

      span = min_span;
      *v0 = c - 0.5 * span;
    }
  *v0 = rpe_gesture_clamp (*v0, 0.0, n - span, 0.0);
  *v1 = *v0 + span;
}

static void
clamp_viewport (RpeAttentionView *self)
{
  double n = (double) self->n;

  if (self->n == 0)
    {
      self->vm0 = self->vm1 = self->vn0 = self->vn1 = 0.0;
      return;
    }
  clamp_axis (&self->vm0, &self->vm1, n);
  clamp_axis (&self->vn0, &self->vn1, n);
}

static void
set_cancelled_caption (RpeAttentionView *self)
{
  g_autofree char *text = NULL;

  if (image_stale (self))
    text = g_strdup_printf (_("Cancelled. The map shown is the last one computed, for N = %zu (stale, under its own "
                              "axes). Change a parameter or the zoom to compute again."), self->image->n);
  gtk_label_set_text (self->caption, text != NULL ? text : _("Cancelled. Change a parameter or the zoom to compute again."));
}

static void
hide_progress (RpeAttentionView *self)
{
  g_clear_handle_id (&self->progress_timeout, g_source_remove);
  gtk_widget_set_visible (self->progress_box, FALSE);
}

static gboolean
show_progress (gpointer data)
{
  RpeAttentionView *self = data;

  self->progress_timeout = 0;
  gtk_widget_set_visible (self->progress_box, TRUE);
  return G_SOURCE_REMOVE;
}

static void
attention_done (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  ViewRef *ref = user_data;
  g_autoptr (RpeAttentionView) self = g_weak_ref_get (&ref->self);
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeAttentionImage) img = rpe_compute_attention_finish (result, &error);
  g_autoptr (RpeExplorerSnapshot) snapshot = ref->snapshot;

  g_weak_ref_clear (&ref->self);
  g_free (ref);
  if (self == NULL || !rpe_job_slot_done (&self->slot, result))
    return;
  if (!rpe_job_slot_busy (&self->slot))
    hide_progress (self);
  if (img != NULL)
    {
      g_autofree char *caption = NULL;
      gboolean reduced = img->rows < img->m1 - img->m0 || img->cols < img->n1 - img->n0;

      g_clear_pointer (&self->image, rpe_attention_image_unref);
      self->image = g_steal_pointer (&img);
      g_clear_pointer (&self->image_snapshot, rpe_explorer_snapshot_unref);
      self->image_snapshot = g_steal_pointer (&snapshot);
      rebuild_surface (self);
      update_row (self);
      /* Translators: the first %s is the method ("SPE estimate", ...), the second ", causal" or
       * nothing, the last " (each pixel: the max of its cells)", its mean twin or nothing */
      caption = g_strdup_printf (_("%s attention of head %zu, N = %zu%s; rows %zu–%zu, columns %zu–%zu%s. "
                                   "Computed in %.0f ms. Scroll or +/− to zoom, drag to pan, 0 to reset."),
                                 _(rpe_explorer_method_name (self->image->method)), self->image->head,
                                 self->image->n, self->image->causal ? _(", causal") : "",
                                 self->image->m0, self->image->m1 - 1, self->image->n0, self->image->n1 - 1,
                                 reduced ? (self->image->reduce == RPE_HEATMAP_REDUCE_MAX
                                            ? _(" (each pixel: the max of its cells)")
                                            : _(" (each pixel: the mean of its cells)")) : "",
                                 self->image->seconds * 1e3);
      gtk_label_set_text (self->caption, caption);
      gtk_widget_queue_draw (self->canvas);
      g_signal_emit (self, figure_changed_signal, 0);
    }
  else if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    set_cancelled_caption (self);
  else
    {
      g_autofree char *text = g_strdup_printf (_("Could not compute the attention map: %s"), error->message);

      gtk_label_set_text (self->caption, text);
    }
}

static void
attention_progress (double   fraction,
                    gpointer user_data)
{
  RpeAttentionView *self = user_data;

  self->fraction = fraction;
  rpe_job_progress_update (self->progress, &self->estimate, fraction);
}

static void
attention_start (gpointer      owner,
                 GCancellable *cancellable)
{
  RpeAttentionView *self = owner;
  g_autoptr (RpeExplorerSnapshot) s = rpe_explorer_state_snapshot (self->state);
  RpeAttentionRequest req = { 0 };
  ViewRef *ref = g_new0 (ViewRef, 1);
  double x, y, side;
  int scale = gtk_widget_get_scale_factor (GTK_WIDGET (self));

  if (!plot_rect (self, &x, &y, &side))
    side = 512;
  self->requested_side = (int) side;
  clamp_viewport (self);
  req.m0 = (gsize) floor (self->vm0);
  req.m1 = (gsize) ceil (self->vm1);
  req.n0 = (gsize) floor (self->vn0);
  req.n1 = (gsize) ceil (self->vn1);
  req.max_rows = (gsize) side * scale;
  req.max_cols = (gsize) side * scale;
  req.reduce = self->reduce;
  g_weak_ref_init (&ref->self, self);
  ref->snapshot = rpe_explorer_snapshot_ref (s);
  self->fraction = 0.0;
  rpe_job_progress_begin (self->progress, &self->estimate);
  if (self->progress_timeout == 0 && !gtk_widget_get_visible (self->progress_box))
    self->progress_timeout = g_timeout_add (PROGRESS_DELAY_MS, show_progress, self);
  rpe_compute_attention_async (s, &req, attention_progress, self, cancellable, attention_done, ref);
}

static void
attention_request (RpeAttentionView *self)
{
  if (!gtk_widget_get_mapped (GTK_WIDGET (self)))
    {
      self->dirty = TRUE;
      return;
    }
  self->dirty = FALSE;
  rpe_job_slot_request (&self->slot);
}

static void
sync_length (RpeAttentionView *self)
{
  gsize n = rpe_explorer_state_get_length (self->state);

  if (n != self->n)
    {
      self->n = n;
      self->vm0 = self->vn0 = 0.0;
      self->vm1 = self->vn1 = (double) n;
      gtk_widget_queue_draw (self->canvas);
    }
}

static void
state_changed (RpeExplorerState  *state,
               RpeExplorerChange  what,
               RpeAttentionView  *self)
{
  if (what & RPE_EXPLORER_CHANGE_LENGTH)
    sync_length (self);
  if (what & ATTENTION_CHANGES)
    attention_request (self);
  else if (what & RPE_EXPLORER_CHANGE_LOOK)
    {
      rebuild_surface (self);
      gtk_widget_queue_draw (self->canvas);
    }
  else if (what & RPE_EXPLORER_CHANGE_TRAIN_LENGTH)
    gtk_widget_queue_draw (self->canvas);
}

/* ------------------------------------------------------------ interaction */

static void
viewport_changed (RpeAttentionView *self)
{
  clamp_viewport (self);
  gtk_widget_queue_draw (self->canvas);
  attention_request (self);
}

static void
zoom_at (RpeAttentionView *self,
         double            factor,
         double            fm,
         double            fn)
{
  /* keep the position under (fm, fn) (fractions of the plot) fixed */
  double cm, cn, sm, sn;

  if (!isfinite (factor) || !(factor > 0.0))
    return;
  factor = CLAMP (factor, 1.0 / RPE_GESTURE_MAX_ZOOM, RPE_GESTURE_MAX_ZOOM);
  fm = rpe_gesture_clamp (fm, 0.0, 1.0, 0.5);
  fn = rpe_gesture_clamp (fn, 0.0, 1.0, 0.5);
  clamp_viewport (self);
  cm = self->vm0 + fm * (self->vm1 - self->vm0);
  cn = self->vn0 + fn * (self->vn1 - self->vn0);
  sm = (self->vm1 - self->vm0) / factor;
  sn = (self->vn1 - self->vn0) / factor;
  self->vm0 = cm - fm * sm;
  self->vm1 = self->vm0 + sm;
  self->vn0 = cn - fn * sn;
  self->vn1 = self->vn0 + sn;
  viewport_changed (self);
}

static gboolean
canvas_scroll (GtkEventControllerScroll *controller,
               double                    dx,
               double                    dy,
               RpeAttentionView         *self)
{
  double x, y, side, px, py, notches;

  if (!plot_rect (self, &x, &y, &side))
    return FALSE;
  /* a wheel notch is dy = ±1; a smooth delta or the first XI2 event after a
   * device change can be anything: at most RPE_GESTURE_MAX_SCROLL notches */
  if (!rpe_gesture_scroll_delta (dy, &notches))
    return TRUE;
  if (!rpe_gesture_event_position (GTK_EVENT_CONTROLLER (controller), self->canvas, &px, &py))
    {
      px = x + side / 2;
      py = y + side / 2;
    }
  zoom_at (self, pow (1.25, -notches), (py - y) / side, (px - x) / side);
  return TRUE;
}

static void
canvas_drag_begin (GtkGestureDrag   *gesture,
                   double            x,
                   double            y,
                   RpeAttentionView *self)
{
  clamp_viewport (self);
  self->drag_m0 = self->vm0;
  self->drag_n0 = self->vn0;
  rpe_drag_tracker_begin (&self->drag, x, y);
}

static void
canvas_drag_update (GtkGestureDrag   *gesture,
                    double            dx,
                    double            dy,
                    RpeAttentionView *self)
{
  double x, y, side, sm = self->vm1 - self->vm0, sn = self->vn1 - self->vn0, px, py;

  if (!plot_rect (self, &x, &y, &side) || !rpe_drag_tracker_update (&self->drag, dx, dy, &px, &py))
    return;
  self->vm0 = self->drag_m0 - dy / side * sm;
  self->vm1 = self->vm0 + sm;
  self->vn0 = self->drag_n0 - dx / side * sn;
  self->vn1 = self->vn0 + sn;
  viewport_changed (self);
}

static void
canvas_zoom_begin (GtkGesture       *gesture,
                   GdkEventSequence *sequence,
                   RpeAttentionView *self)
{
  self->pinch_last = 1.0;
}

static void
canvas_zoom_changed (GtkGestureZoom   *gesture,
                     double            scale,
                     RpeAttentionView *self)
{
  double factor;

  if (!rpe_gesture_zoom_factor (scale, self->pinch_last, &factor))
    return;
  if (fabs (factor - 1.0) > 0.05)
    {
      zoom_at (self, factor, 0.5, 0.5);
      self->pinch_last = scale;
    }
}

/* The read-out over the row plot: the value of the column under x. */
static char *
describe_row_point (RpeAttentionView *self,
                    double            px,
                    double            py)
{
  double x, y, side, fn;
  gsize j;

  if (self->row < 0 || self->row_n == 0 || !plot_rect (self, &x, &y, &side))
    return NULL;
  if (!(py >= y + side + MARGIN_BOTTOM && py < y + side + MARGIN_BOTTOM + ROW_PLOT_HEIGHT
        && px >= x && px < x + side))
    return NULL;
  fn = self->vn0 + (px - x) / side * (self->vn1 - self->vn0);
  /* the series point nearest to fn */
  j = 0;
  for (gsize k = 1; k < self->row_n; k++)
    if (fabs (self->row_x[k] - fn + 0.5) < fabs (self->row_x[j] - fn + 0.5))
      j = k;
  return g_strdup_printf (_("row m = %zd, n ≈ %.0f: a(m, n) = %.6g"), self->row, self->row_x[j], self->row_y[j]);
}

static void
canvas_released (GtkGestureClick  *gesture,
                 int               n_press,
                 double            px,
                 double            py,
                 RpeAttentionView *self)
{
  double x, y, side, fm;

  gtk_widget_grab_focus (GTK_WIDGET (self));
  if (n_press != 1 || !rpe_gesture_point_ok (px, py) || !plot_rect (self, &x, &y, &side))
    return;
  if (!(px >= x && px < x + side && py >= y && py < y + side) || self->n == 0)
    return;
  fm = self->vm0 + (py - y) / side * (self->vm1 - self->vm0);
  if (!(fm >= 0.0 && fm < (double) self->n))
    return;
  rpe_attention_view_set_row (self, (gssize) fm);
}

static void
row_clear_clicked (GtkButton        *button,
                   RpeAttentionView *self)
{
  rpe_attention_view_set_row (self, -1);
}

static void
action_row (GtkWidget  *widget,
            const char *action_name,
            GVariant   *parameter)
{
  RpeAttentionView *self = RPE_ATTENTION_VIEW (widget);
  gint32 step = g_variant_get_int32 (parameter);
  gssize m;

  if (step == 0 || self->n == 0)
    {
      rpe_attention_view_set_row (self, -1);
      return;
    }
  /* the first step chooses the row in the middle of the viewport */
  m = self->row >= 0 ? self->row + step : (gssize) floor (0.5 * (self->vm0 + self->vm1));
  rpe_attention_view_set_row (self, CLAMP (m, 0, (gssize) self->n - 1));
}

static void
canvas_motion (GtkEventControllerMotion *controller,
               double                    x,
               double                    y,
               RpeAttentionView         *self)
{
  g_autofree char *text = rpe_gesture_point_ok (x, y) ? rpe_attention_view_describe_point (self, x, y) : NULL;

  if (text == NULL && rpe_gesture_point_ok (x, y))
    text = describe_row_point (self, x, y);
  gtk_label_set_text (self->hover, text != NULL ? text : " ");
}

static void
canvas_resize (GtkDrawingArea   *area,
               int               width,
               int               height,
               RpeAttentionView *self)
{
  double x, y, side;

  if (plot_rect (self, &x, &y, &side) && abs ((int) side - self->requested_side) > 8)
    attention_request (self);
}

static void
cancel_clicked (GtkButton        *button,
                RpeAttentionView *self)
{
  rpe_attention_view_cancel (self);
}

static void
reduce_changed (GtkDropDown      *dropdown,
                GParamSpec       *pspec,
                RpeAttentionView *self)
{
  rpe_attention_view_set_reduce (self, gtk_drop_down_get_selected (dropdown) == 1
                                       ? RPE_HEATMAP_REDUCE_MAX : RPE_HEATMAP_REDUCE_MEAN);
}

static void
reset_clicked (GtkButton        *button,
               RpeAttentionView *self)
{
  rpe_attention_view_reset_zoom (self);
}

static void
action_zoom (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  RpeAttentionView *self = RPE_ATTENTION_VIEW (widget);
  double factor = g_variant_get_double (parameter);

  if (factor <= 0.0)
    rpe_attention_view_reset_zoom (self);
  else
    rpe_attention_view_zoom (self, factor);
}

/* -------------------------------------------------------------- lifecycle */

static void
view_map (GtkWidget *widget)
{
  RpeAttentionView *self = RPE_ATTENTION_VIEW (widget);

  GTK_WIDGET_CLASS (rpe_attention_view_parent_class)->map (widget);
  if (self->dirty || self->image == NULL)
    attention_request (self);
}

static void
rpe_attention_view_dispose (GObject *object)
{
  RpeAttentionView *self = RPE_ATTENTION_VIEW (object);

  rpe_job_slot_clear (&self->slot);
  g_clear_handle_id (&self->progress_timeout, g_source_remove);
  if (self->state != NULL)
    g_clear_signal_handler (&self->changed_id, self->state);
  g_clear_object (&self->state);
  g_clear_pointer (&self->image, rpe_attention_image_unref);
  g_clear_pointer (&self->image_snapshot, rpe_explorer_snapshot_unref);
  g_clear_pointer (&self->surface, cairo_surface_destroy);
  g_clear_pointer (&self->row_x, g_free);
  g_clear_pointer (&self->row_y, g_free);
  g_clear_pointer (&self->box, gtk_widget_unparent);
  G_OBJECT_CLASS (rpe_attention_view_parent_class)->dispose (object);
}

static void
rpe_attention_view_class_init (RpeAttentionViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = rpe_attention_view_dispose;
  widget_class->map = view_map;
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);

  /**
   * RpeAttentionView::figure-changed:
   *
   * A new image is shown (rpe_attention_view_build_figure has changed).
   */
  figure_changed_signal = g_signal_new ("figure-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                        0, NULL, NULL, NULL, G_TYPE_NONE, 0);

  gtk_widget_class_install_action (widget_class, "attention.zoom", "d", action_zoom);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_plus, 0, "attention.zoom", "d", 1.25);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Add, 0, "attention.zoom", "d", 1.25);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_equal, 0, "attention.zoom", "d", 1.25);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_minus, 0, "attention.zoom", "d", 0.8);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Subtract, 0, "attention.zoom", "d", 0.8);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_0, 0, "attention.zoom", "d", 0.0);
  gtk_widget_class_install_action (widget_class, "attention.row", "i", action_row);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Down, 0, "attention.row", "i", 1);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Up, 0, "attention.row", "i", -1);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Page_Down, 0, "attention.row", "i", 10);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Page_Up, 0, "attention.row", "i", -10);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Delete, 0, "attention.row", "i", 0);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_BackSpace, 0, "attention.row", "i", 0);
}

static void
rpe_attention_view_init (RpeAttentionView *self)
{
  GtkWidget *overlay, *bottom, *button, *dropdown;
  GtkEventController *scroll, *motion;
  GtkGesture *drag, *zoom, *click;
  const char *reduce_names[] = { _("Mean per pixel"), _("Max per pixel"), NULL };

  rpe_job_slot_init (&self->slot, attention_start, self);
  self->pinch_last = 1.0;
  self->reduce = RPE_HEATMAP_REDUCE_MEAN;
  self->row = -1;
  gtk_widget_set_focusable (GTK_WIDGET (self), TRUE);

  self->box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  gtk_widget_add_css_class (self->box, "rpe-pane");
  gtk_widget_set_parent (self->box, GTK_WIDGET (self));
  self->caption = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_wrap (self->caption, TRUE);
  gtk_label_set_max_width_chars (self->caption, 100);   /* a natural width the screen has */
  gtk_label_set_xalign (self->caption, 0.0f);
  gtk_widget_add_css_class (GTK_WIDGET (self->caption), "dim-label");
  gtk_box_append (GTK_BOX (self->box), GTK_WIDGET (self->caption));

  overlay = gtk_overlay_new ();
  gtk_widget_set_vexpand (overlay, TRUE);
  self->canvas = gtk_drawing_area_new ();
  gtk_widget_set_hexpand (self->canvas, TRUE);
  gtk_widget_set_vexpand (self->canvas, TRUE);
  gtk_widget_set_size_request (self->canvas, 300, 260);
  gtk_widget_set_tooltip_text (self->canvas, NULL);
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (self->canvas), canvas_draw, self, NULL);
  g_signal_connect (self->canvas, "resize", G_CALLBACK (canvas_resize), self);
  gtk_overlay_set_child (GTK_OVERLAY (overlay), self->canvas);

  scroll = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_VERTICAL);
  g_signal_connect (scroll, "scroll", G_CALLBACK (canvas_scroll), self);
  gtk_widget_add_controller (self->canvas, scroll);
  drag = gtk_gesture_drag_new ();
  g_signal_connect (drag, "drag-begin", G_CALLBACK (canvas_drag_begin), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (canvas_drag_update), self);
  gtk_widget_add_controller (self->canvas, GTK_EVENT_CONTROLLER (drag));
  zoom = gtk_gesture_zoom_new ();
  g_signal_connect (zoom, "begin", G_CALLBACK (canvas_zoom_begin), self);
  g_signal_connect (zoom, "scale-changed", G_CALLBACK (canvas_zoom_changed), self);
  gtk_widget_add_controller (self->canvas, GTK_EVENT_CONTROLLER (zoom));
  motion = gtk_event_controller_motion_new ();
  g_signal_connect (motion, "motion", G_CALLBACK (canvas_motion), self);
  gtk_widget_add_controller (self->canvas, motion);
  click = gtk_gesture_click_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (click), GDK_BUTTON_PRIMARY);
  g_signal_connect (click, "released", G_CALLBACK (canvas_released), self);
  gtk_widget_add_controller (self->canvas, GTK_EVENT_CONTROLLER (click));

  self->progress_box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 8);
  gtk_widget_add_css_class (self->progress_box, "osd");
  gtk_widget_add_css_class (self->progress_box, "rpe-progress");
  gtk_widget_set_halign (self->progress_box, GTK_ALIGN_CENTER);
  gtk_widget_set_valign (self->progress_box, GTK_ALIGN_END);
  gtk_widget_set_margin_bottom (self->progress_box, 56);
  self->progress = GTK_PROGRESS_BAR (gtk_progress_bar_new ());
  gtk_widget_set_size_request (GTK_WIDGET (self->progress), 260, -1);
  gtk_widget_set_valign (GTK_WIDGET (self->progress), GTK_ALIGN_CENTER);
  gtk_box_append (GTK_BOX (self->progress_box), GTK_WIDGET (self->progress));
  button = gtk_button_new_with_mnemonic (_("_Cancel"));
  gtk_widget_set_tooltip_text (button, _("Stop computing this map (Escape)"));
  g_signal_connect (button, "clicked", G_CALLBACK (cancel_clicked), self);
  gtk_box_append (GTK_BOX (self->progress_box), button);
  gtk_widget_set_visible (self->progress_box, FALSE);
  gtk_overlay_add_overlay (GTK_OVERLAY (overlay), self->progress_box);
  gtk_box_append (GTK_BOX (self->box), overlay);

  bottom = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 8);
  self->hover = GTK_LABEL (gtk_label_new (" "));
  gtk_label_set_xalign (self->hover, 0.0f);
  gtk_widget_set_hexpand (GTK_WIDGET (self->hover), TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (self->hover), "monospace");
  gtk_box_append (GTK_BOX (bottom), GTK_WIDGET (self->hover));
  dropdown = gtk_drop_down_new_from_strings (reduce_names);
  gtk_widget_set_tooltip_text (dropdown, _("How a pixel covering several cells of a long map is coloured"));
  g_signal_connect (dropdown, "notify::selected", G_CALLBACK (reduce_changed), self);
  gtk_box_append (GTK_BOX (bottom), dropdown);
  self->row_clear = gtk_button_new_with_label (_("Clear row plot"));
  gtk_widget_set_tooltip_text (self->row_clear, _("Remove the plot of the chosen query row (Delete). Click a row of "
                               "the map, or press ↑/↓ with the map focused, to plot a(m, ·)"));
  g_signal_connect (self->row_clear, "clicked", G_CALLBACK (row_clear_clicked), self);
  gtk_widget_set_visible (self->row_clear, FALSE);
  gtk_box_append (GTK_BOX (bottom), self->row_clear);
  button = gtk_button_new_from_icon_name ("zoom-original-symbolic");
  gtk_widget_set_tooltip_text (button, _("Show the whole map (0)"));
  g_signal_connect (button, "clicked", G_CALLBACK (reset_clicked), self);
  gtk_box_append (GTK_BOX (bottom), button);
  gtk_box_append (GTK_BOX (self->box), bottom);
}

GtkWidget *
rpe_attention_view_new (RpeExplorerState *state)
{
  RpeAttentionView *self = g_object_new (RPE_TYPE_ATTENTION_VIEW, NULL);

  self->state = g_object_ref (state);
  self->changed_id = g_signal_connect (state, "changed", G_CALLBACK (state_changed), self);
  self->dirty = TRUE;
  sync_length (self);
  return GTK_WIDGET (self);
}

/* ----------------------------------------------------------------- public */

gsize
rpe_attention_view_get_axes_n (RpeAttentionView *self)
{
  g_return_val_if_fail (RPE_IS_ATTENTION_VIEW (self), 0);
  return image_stale (self) ? self->image->n : self->n;
}

gsize
rpe_attention_view_get_drawn_n (RpeAttentionView *self)
{
  g_return_val_if_fail (RPE_IS_ATTENTION_VIEW (self), 0);
  return self->image != NULL && self->surface != NULL ? self->image->n : 0;
}

gboolean
rpe_attention_view_get_stale (RpeAttentionView *self)
{
  g_return_val_if_fail (RPE_IS_ATTENTION_VIEW (self), FALSE);
  return image_stale (self);
}

const char *
rpe_attention_view_get_progress_text (RpeAttentionView *self)
{
  g_return_val_if_fail (RPE_IS_ATTENTION_VIEW (self), NULL);
  return gtk_progress_bar_get_text (self->progress);
}

RpeAttentionImage *
rpe_attention_view_get_image (RpeAttentionView *self)
{
  g_return_val_if_fail (RPE_IS_ATTENTION_VIEW (self), NULL);
  return self->image;
}

gboolean
rpe_attention_view_is_busy (RpeAttentionView *self)
{
  g_return_val_if_fail (RPE_IS_ATTENTION_VIEW (self), FALSE);
  return rpe_job_slot_busy (&self->slot);
}

void
rpe_attention_view_cancel (RpeAttentionView *self)
{
  g_return_if_fail (RPE_IS_ATTENTION_VIEW (self));
  if (rpe_job_slot_busy (&self->slot))
    set_cancelled_caption (self);
  rpe_job_slot_cancel (&self->slot);
  hide_progress (self);
}

void
rpe_attention_view_get_viewport (RpeAttentionView *self,
                                 double           *m0,
                                 double           *m1,
                                 double           *n0,
                                 double           *n1)
{
  g_return_if_fail (RPE_IS_ATTENTION_VIEW (self));
  *m0 = self->vm0;
  *m1 = self->vm1;
  *n0 = self->vn0;
  *n1 = self->vn1;
}

void
rpe_attention_view_set_viewport (RpeAttentionView *self,
                                 double            m0,
                                 double            m1,
                                 double            n0,
                                 double            n1)
{
  g_return_if_fail (RPE_IS_ATTENTION_VIEW (self));
  self->vm0 = m0;
  self->vm1 = m1;
  self->vn0 = n0;
  self->vn1 = n1;
  viewport_changed (self);
}

void
rpe_attention_view_zoom (RpeAttentionView *self,
                         double            factor)
{
  g_return_if_fail (RPE_IS_ATTENTION_VIEW (self));
  zoom_at (self, factor, 0.5, 0.5);
}

void
rpe_attention_view_reset_zoom (RpeAttentionView *self)
{
  g_return_if_fail (RPE_IS_ATTENTION_VIEW (self));
  rpe_attention_view_set_viewport (self, 0, (double) self->n, 0, (double) self->n);
}

void
rpe_attention_view_set_reduce (RpeAttentionView *self,
                               RpeHeatmapReduce  reduce)
{
  g_return_if_fail (RPE_IS_ATTENTION_VIEW (self));
  if (self->reduce != reduce)
    {
      self->reduce = reduce;
      attention_request (self);
    }
}

char *
rpe_attention_view_describe_point (RpeAttentionView *self,
                                   double            px,
                                   double            py)
{
  RpeAttentionImage *img = self->image;
  double x, y, side, fm, fn;
  gsize m, n, i, j;

  g_return_val_if_fail (RPE_IS_ATTENTION_VIEW (self), NULL);
  if (img == NULL || img->rows == 0 || img->cols == 0 || img->m1 <= img->m0 || img->n1 <= img->n0
      || !rpe_gesture_point_ok (px, py) || !plot_rect (self, &x, &y, &side))
    return NULL;
  {
    double m0, m1, n0, n1;

    drawn_window (self, &m0, &m1, &n0, &n1);
    fm = m0 + (py - y) / side * (m1 - m0);
    fn = n0 + (px - x) / side * (n1 - n0);
  }
  /* written so that a NaN fails every comparison and returns */
  if (!(fm >= (double) img->m0 && fn >= (double) img->n0 && fm < (double) img->m1 && fn < (double) img->n1))
    return NULL;
  m = (gsize) fm;
  n = (gsize) fn;
  i = MIN ((gsize) (((guint64) (m - img->m0) * img->rows) / (img->m1 - img->m0)), img->rows - 1);
  j = MIN ((gsize) (((guint64) (n - img->n0) * img->cols) / (img->n1 - img->n0)), img->cols - 1);
  if (img->rows == img->m1 - img->m0 && img->cols == img->n1 - img->n0)
    return g_strdup_printf ("m = %zu, n = %zu: %.6g", m, n, img->values[i * img->cols + j]);
  /* Translators: %s is "max" or "mean" */
  return g_strdup_printf (_("m ≈ %zu, n ≈ %zu: %.6g (%s of %.0f × %.0f cells)"), m, n,
                          img->values[i * img->cols + j],
                          img->reduce == RPE_HEATMAP_REDUCE_MAX ? _("max") : _("mean"),
                          (double) (img->m1 - img->m0) / img->rows, (double) (img->n1 - img->n0) / img->cols);
}

GtkWidget *
rpe_attention_view_get_canvas (RpeAttentionView *self)
{
  g_return_val_if_fail (RPE_IS_ATTENTION_VIEW (self), NULL);
  return self->canvas;
}

gboolean
rpe_attention_view_get_progress_visible (RpeAttentionView *self)
{
  g_return_val_if_fail (RPE_IS_ATTENTION_VIEW (self), FALSE);
  return gtk_widget_get_visible (self->progress_box);
}

double
rpe_attention_view_get_progress (RpeAttentionView *self)
{
  g_return_val_if_fail (RPE_IS_ATTENTION_VIEW (self), 0.0);
  return self->fraction;
}

const char *
rpe_attention_view_get_caption (RpeAttentionView *self)
{
  g_return_val_if_fail (RPE_IS_ATTENTION_VIEW (self), NULL);
  return gtk_label_get_text (self->caption);
}

gboolean
rpe_attention_view_get_axis_ticks (RpeAttentionView *self,
                                   RpeTicks         *x,
                                   RpeTicks         *y,
                                   double           *side)
{
  RpeHeatmapAxes axes;
  GdkRGBA fg = { 0, 0, 0, 1 };
  cairo_surface_t *surface;
  cairo_t *cr;
  double px, py, s;

  g_return_val_if_fail (RPE_IS_ATTENTION_VIEW (self), FALSE);
  if (self->n == 0 || !plot_rect (self, &px, &py, &s))
    return FALSE;
  view_axes (self, fg, &axes);
  surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cr = cairo_create (surface);
  rpe_plot_heatmap_axes_ticks (cr, &axes, s, s, x, y);
  cairo_destroy (cr);
  cairo_surface_destroy (surface);
  if (side != NULL)
    *side = s;
  return TRUE;
}

/* The figure of the image shown, as `rpe export attention` draws the same map
 * (app/rpe-cli-export.c): a linear scale, the state's colour map, N_train
 * marked, the CLI's title.  A zoomed or pixel-reduced image is exported as
 * shown, its axis labels naming the rows and columns it covers. */
static RpeFigureBundle *
attention_figure (RpeAttentionImage         *img,
                  const RpeExplorerSnapshot *s,
                  const RpeColormap         *cmap,
                  guint                      train,
                  RpeHeatmapTransform        transform,   /* the state's colour scale */
                  double                     param)
{
  RpeFigureBundle *b;
  char *strings[3] = { NULL, NULL, NULL };

  if (img == NULL || s == NULL || img->rows == 0 || img->cols == 0)
    return NULL;
  b = rpe_figure_bundle_new (RPE_FIGURE_HEATMAP);
  rpe_figure_bundle_keep (b, rpe_attention_image_ref (img), (GDestroyNotify) rpe_attention_image_unref);
  /* the figure `rpe export attention` draws of the same image (rpe-compute.c) */
  rpe_attention_figure_fill (&b->fig, img, s, cmap, train, transform, param, strings, &b->has_attention);
  for (guint i = 0; i < 3; i++)
    if (strings[i] != NULL)
      rpe_figure_bundle_keep (b, strings[i], g_free);
  b->default_name = g_strdup_printf ("attention-h%zu", img->head);
  return b;
}

void
rpe_attention_view_set_row (RpeAttentionView *self,
                            gssize            m)
{
  g_return_if_fail (RPE_IS_ATTENTION_VIEW (self));
  if (m < 0 || (gsize) m >= self->n)
    m = -1;
  if (self->row == m)
    return;
  self->row = m;
  update_row (self);
  gtk_widget_queue_draw (self->canvas);
  /* the map got smaller or larger: an image of the new size */
  attention_request (self);
}

gssize
rpe_attention_view_get_row (RpeAttentionView *self)
{
  g_return_val_if_fail (RPE_IS_ATTENTION_VIEW (self), -1);
  return self->row;
}

gsize
rpe_attention_view_get_row_series (RpeAttentionView  *self,
                                   const double     **x,
                                   const double     **y)
{
  g_return_val_if_fail (RPE_IS_ATTENTION_VIEW (self), 0);
  if (x != NULL)
    *x = self->row_x;
  if (y != NULL)
    *y = self->row_y;
  return self->row_n;
}

RpeFigureBundle *
rpe_attention_view_build_figure (RpeAttentionView *self)
{
  guint train = 0;
  RpeHeatmapTransform transform;
  double param;

  g_return_val_if_fail (RPE_IS_ATTENTION_VIEW (self), NULL);
  g_object_get (self->state, "train-length", &train, NULL);
  rpe_explorer_state_get_color_scale (self->state, &transform, &param, NULL);
  return attention_figure (self->image, self->image_snapshot, current_colormap (self), train, transform, param);
}

/* An animated sweep of the view: frames of the whole map (at most SWEEP_MAX_SIDE pixels a
 * side, as `rpe export attention`), computed by rpe_compute_attention (the code of the view's
 * own job) from the state's snapshot with the parameter changed. */
#define SWEEP_MAX_SIDE 2048

typedef struct
{
  RpeExplorerSnapshot *snapshot;
  const RpeColormap   *cmap;
  RpeHeatmapReduce     reduce;
  guint                train;
  RpeHeatmapTransform  transform;
  double               param;
} AttentionSweep;

static void
attention_sweep_free (gpointer p)
{
  AttentionSweep *as = p;

  rpe_explorer_snapshot_unref (as->snapshot);
  g_free (as);
}

static RpeFigureBundle *
attention_sweep_frame (gpointer        data,
                       RpeSweepParam   param,
                       gint64          value,
                       GCancellable   *cancellable,
                       GError        **error)
{
  AttentionSweep *as = data;
  g_autoptr (RpeExplorerSnapshot) s = rpe_explorer_snapshot_with_sweep (as->snapshot, param, value);
  RpeAttentionRequest req = { 0 };
  g_autoptr (RpeAttentionImage) img = NULL;
  RpeFigureBundle *b;

  req.max_rows = req.max_cols = MIN (s->n, (gsize) SWEEP_MAX_SIDE);
  req.reduce = as->reduce;
  img = rpe_compute_attention (s, &req, cancellable, error);
  if (img == NULL)
    return NULL;
  b = attention_figure (img, s, as->cmap, as->train, as->transform, as->param);
  if (b == NULL)
    g_set_error_literal (error, RPE_ERROR, RPE_ERROR_NOT_FOUND, _("the attention map has nothing to draw"));
  return b;
}

void
rpe_attention_view_setup_sweep (RpeAttentionView *self,
                                RpeExportDialog  *dialog)
{
  AttentionSweep *as;
  RpeExplorerSnapshot *s;

  g_return_if_fail (RPE_IS_ATTENTION_VIEW (self));
  s = rpe_explorer_state_snapshot (self->state);
  as = g_new0 (AttentionSweep, 1);
  as->snapshot = s;
  as->cmap = current_colormap (self);
  as->reduce = self->reduce;
  rpe_explorer_state_get_color_scale (self->state, &as->transform, &as->param, NULL);
  g_object_get (self->state, "train-length", &as->train, NULL);
  rpe_export_dialog_set_sweep (dialog, attention_sweep_frame, as, attention_sweep_free, (gint64) s->r, (gint64) s->n,
                               (gint64) s->seed);
}

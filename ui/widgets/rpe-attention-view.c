/* rpe-attention-view.c: the attention map, streamed in row blocks and reduced to the canvas'
 * pixels by the worker (rpe_compute_attention_async): its request (the viewport at the canvas'
 * resolution), its drawing (the map, its axes and colour bar, the row plot) and its controls. */
#include "config.h"

#include <glib/gi18n.h>

#include "rpe-figure-names.h"
#include "rpe-attention-view.h"
#include "rpe-text.h"
#include "rpe-ticks.h"
#include "rpe-error.h"

#include <math.h>
#include <string.h>

#include "rpe-curve-render.h"

#include "rpe-colormap.h"
#include "rpe-gesture-helper.h"

#define MARGIN_LEFT    58.0
#define MARGIN_TOP     10.0
#define MARGIN_RIGHT   86.0
#define MARGIN_BOTTOM  42.0
#define ROW_PLOT_HEIGHT 120.0   /* the plot of a(m, .) under the map, when a row is chosen */
#define ROW_PLOT_GAP    8.0
#define AXES_FONT       11.0    /* the axes' text size (px) */

#define ATTENTION_CHANGES (RPE_EXPLORER_CHANGE_ALL & ~(RPE_EXPLORER_CHANGE_TEMPLATE_KIND \
                                                      | RPE_EXPLORER_CHANGE_TRAIN_LENGTH \
                                                      | RPE_EXPLORER_CHANGE_FEATURE      \
                                                      | RPE_EXPLORER_CHANGE_LOOK         \
                                                      | RPE_EXPLORER_CHANGE_COMPARE      \
                                                      | RPE_EXPLORER_CHANGE_GRID))

struct _RpeAttentionView
{
  RpeFigurePage      parent_instance;

  cairo_surface_t   *surface;     /* the image, coloured */
  RpeHeatmapReduce   reduce;
  int                requested_side;
  double            *row_x;       /* the plotted series (key positions, values) */
  double            *row_y;
  gsize              row_n;

  GtkWidget         *canvas;
};

G_DEFINE_FINAL_TYPE (RpeAttentionView, rpe_attention_view, RPE_TYPE_FIGURE_PAGE)

static void attention_request_size (RpeAttentionView *self);

/* The image shown: the page's result. */
static RpeAttentionImage *
attention_image (RpeAttentionView *self)
{
  return rpe_figure_page_get_result (RPE_FIGURE_PAGE (self));
}

static RpeExplorerState *
attention_state (RpeAttentionView *self)
{
  return rpe_figure_page_get_state (RPE_FIGURE_PAGE (self));
}

/* The query position m whose row is plotted under the map (-1: none). */
static gssize
chosen_row (RpeAttentionView *self)
{
  return rpe_figure_page_get_row (RPE_FIGURE_PAGE (self));
}

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

  if (chosen_row (self) >= 0)
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
  RpeFigureLook look;

  rpe_figure_page_get_look (RPE_FIGURE_PAGE (self), TRUE, &look);
  return look.colormap;
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
  rpe_explorer_state_apply_color_scale (attention_state (self), d, method_has_attention (img->method));
}

static void
rebuild_surface (RpeAttentionView *self)
{
  RpeAttentionImage *img = attention_image (self);
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
  snprintf (title, title_size, _("row m = %zd: a(m, n)"), chosen_row (self));
  plot->title = title;
  plot->x_label = NULL;
  plot->y_label = NULL;
  plot->legend = RPE_CURVE_LEGEND_NONE;
  plot->fixed_x = TRUE;
  {
    double m0, m1, n0, n1;

    rpe_figure_page_get_viewport (RPE_FIGURE_PAGE (self), &m0, &m1, &n0, &n1);
    plot->x_min = n0 - 0.5;
    plot->x_max = n1 - 0.5;
  }
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

/* Fills the row series from the image for the chosen row (NaN where the image has no row). */
static void
update_row (RpeAttentionView *self)
{
  RpeAttentionImage *img = attention_image (self);
  gssize m = chosen_row (self);
  gsize i;

  g_clear_pointer (&self->row_x, g_free);
  g_clear_pointer (&self->row_y, g_free);
  self->row_n = 0;
  if (m < 0 || img == NULL || img->rows == 0 || img->cols == 0 || (gsize) m < img->m0 || (gsize) m >= img->m1)
    return;
  i = MIN ((gsize) (((guint64) ((gsize) m - img->m0) * img->rows) / (img->m1 - img->m0)), img->rows - 1);
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
  RpeAttentionImage *img = attention_image (self);

  return img != NULL && img->n != rpe_figure_page_get_viewport_n (RPE_FIGURE_PAGE (self));
}

/* The window the axes show: the viewport, or the stale image's own window. */
static void
drawn_window (RpeAttentionView *self,
              double           *m0,
              double           *m1,
              double           *n0,
              double           *n1)
{
  RpeAttentionImage *img = attention_image (self);

  if (image_stale (self))
    {
      *m0 = (double) img->m0;
      *m1 = (double) img->m1;
      *n0 = (double) img->n0;
      *n1 = (double) img->n1;
      return;
    }
  rpe_figure_page_get_viewport (RPE_FIGURE_PAGE (self), m0, m1, n0, n1);
}

/* The tokens of the captured input drawn (NULL when the content is not a capture that fits the
 * module, or the capture has none). */
static void
view_tokens (RpeAttentionView *self, const float **tokens, size_t *n_tokens)
{
  RpeExplorerState   *state = attention_state (self);
  RpeExplorerCapture *capture = rpe_explorer_state_get_capture (state);
  const RpeTensor    *t;
  guint               content = RPE_CONTENT_UNIT, layer = 0;

  *tokens = NULL;
  *n_tokens = 0;
  if (capture == NULL)
    return;
  g_object_get (state, "content", &content, "capture-layer", &layer, NULL);
  t = rpe_capture_tokens (capture->capture);
  if (content != RPE_CONTENT_CAPTURE || t == NULL || !rpe_explorer_state_check_capture (state, capture, layer, NULL))
    return;
  *tokens = t->data;
  *n_tokens = t->n_elements;
}

/* The axes of the window drawn: the positions it shows, ticked by the figures' rule. */
static void
view_axes (RpeAttentionView *self,
           GdkRGBA           fg,
           RpeHeatmapAxes   *axes)
{
  memset (axes, 0, sizeof *axes);
  drawn_window (self, &axes->y0, &axes->y1, &axes->x0, &axes->x1);
  axes->x_limit = axes->y_limit = image_stale (self) ? attention_image (self)->n : rpe_figure_page_get_viewport_n (RPE_FIGURE_PAGE (self));
  axes->font = AXES_FONT;
  view_tokens (self, &axes->tokens, &axes->n_tokens);
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
  RpeAttentionImage *img = attention_image (self);
  const RpeColormap *cmap = current_colormap (self);
  double x, y, side, vm0, vm1, vn0, vn1;
  GdkRGBA fg;
  guint train = 0;
  gsize axis_n = image_stale (self) ? img->n : rpe_figure_page_get_viewport_n (RPE_FIGURE_PAGE (self));
  double pm0, pm1, pn0, pn1;   /* the viewport (the row frame is drawn in it) */

  if (!plot_rect (self, &x, &y, &side))
    return;
  drawn_window (self, &vm0, &vm1, &vn0, &vn1);
  rpe_figure_page_get_viewport (RPE_FIGURE_PAGE (self), &pm0, &pm1, &pn0, &pn1);
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
  if (chosen_row (self) >= 0 && pm1 > pm0)
    {
      /* the plotted row, framed */
      double ry = y + ((double) chosen_row (self) - pm0) / (pm1 - pm0) * side;
      double rh = fmax (1.0, side / (pm1 - pm0));

      cairo_set_line_width (cr, 1.5);
      cairo_set_source_rgba (cr, 0.85, 0.33, 0.1, 1.0);
      cairo_rectangle (cr, x + 0.75, ry - 0.75, side - 1.5, rh + 1.5);
      cairo_stroke (cr);
    }
  /* N_train: keys n >= N_train right of the vertical line, queries below the horizontal */
  g_object_get (attention_state (self), "train-length", &train, NULL);
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
  if (chosen_row (self) >= 0)
    draw_row_plot (self, cr, x, y + side + MARGIN_BOTTOM, side, fg);
}

/* The read-out over the row plot: the value of the column under x. */
static char *
describe_row_point (RpeAttentionView *self,
                    double            px,
                    double            py)
{
  double x, y, side, fn;
  gsize j;

  if (chosen_row (self) < 0 || self->row_n == 0 || !plot_rect (self, &x, &y, &side))
    return NULL;
  if (!(py >= y + side + MARGIN_BOTTOM && py < y + side + MARGIN_BOTTOM + ROW_PLOT_HEIGHT
        && px >= x && px < x + side))
    return NULL;
  {
    double m0, m1, n0, n1;

    rpe_figure_page_get_viewport (RPE_FIGURE_PAGE (self), &m0, &m1, &n0, &n1);
    fn = n0 + (px - x) / side * (n1 - n0);
  }
  /* the series point nearest to fn */
  j = 0;
  for (gsize k = 1; k < self->row_n; k++)
    if (fabs (self->row_x[k] - fn + 0.5) < fabs (self->row_x[j] - fn + 0.5))
      j = k;
  return g_strdup_printf (_("row m = %zd, n ≈ %.0f: a(m, n) = %.6g"), chosen_row (self), self->row_x[j], self->row_y[j]);
}

static void
canvas_released (GtkGestureClick  *gesture,
                 int               n_press,
                 double            px,
                 double            py,
                 RpeAttentionView *self)
{
  double x, y, side, fm;

  gsize n = rpe_figure_page_get_viewport_n (RPE_FIGURE_PAGE (self));
  double m0, m1, n0, n1;

  gtk_widget_grab_focus (GTK_WIDGET (self));
  if (n_press != 1 || !rpe_gesture_point_ok (px, py) || !plot_rect (self, &x, &y, &side))
    return;
  if (!(px >= x && px < x + side && py >= y && py < y + side) || n == 0)
    return;
  rpe_figure_page_get_viewport (RPE_FIGURE_PAGE (self), &m0, &m1, &n0, &n1);
  fm = m0 + (py - y) / side * (m1 - m0);
  if (!(fm >= 0.0 && fm < (double) n))
    return;
  rpe_figure_page_set_row (RPE_FIGURE_PAGE (self), (gssize) fm);
}

/* The rows of the page's N; the first Down / Up chooses the row in the middle of the viewport. */
static gboolean
attention_row_range (RpeFigurePage *page,
                     gsize         *n_rows,
                     gsize         *first)
{
  double m0, m1, n0, n1;

  *n_rows = rpe_figure_page_get_viewport_n (page);
  rpe_figure_page_get_viewport (page, &m0, &m1, &n0, &n1);
  *first = (gsize) MAX (0.0, floor (0.5 * (m0 + m1)));
  return *n_rows > 0;
}

static void
attention_row_changed (RpeFigurePage *page)
{
  RpeAttentionView *self = RPE_ATTENTION_VIEW (page);

  update_row (self);
  gtk_widget_queue_draw (self->canvas);
  /* the map got smaller or larger: an image of the new size */
  rpe_figure_page_request (page);
}

/* ------------------------------------------------------------ the page */

static gboolean
attention_plot_area (RpeFigurePage *page,
                     double        *x,
                     double        *y,
                     double        *side)
{
  return plot_rect (RPE_ATTENTION_VIEW (page), x, y, side);
}

static void
attention_show (RpeFigurePage *page,
                gpointer       result)
{
  RpeAttentionView *self = RPE_ATTENTION_VIEW (page);
  RpeAttentionImage *img = result;
  g_autofree char *caption = NULL;
  gboolean reduced = img->rows < img->m1 - img->m0 || img->cols < img->n1 - img->n0;

  rebuild_surface (self);
  update_row (self);
  /* Translators: the first %s is the method ("SPE estimate", ...), the second ", causal" or
   * nothing, the last " (each pixel: the max of its cells)", its mean twin or nothing */
  caption = g_strdup_printf (_("%s attention of head %zu, N = %zu%s; rows %zu–%zu, columns %zu–%zu%s. "
                               "Computed in %.0f ms. Scroll or +/− to zoom, drag to pan, 0 to reset."),
                             _(rpe_explorer_method_name (img->method)), img->head,
                             img->n, img->causal ? _(", causal") : "",
                             img->m0, img->m1 - 1, img->n0, img->n1 - 1,
                             reduced ? (img->reduce == RPE_HEATMAP_REDUCE_MAX
                                        ? _(" (each pixel: the max of its cells)")
                                        : _(" (each pixel: the mean of its cells)")) : "",
                             img->seconds * 1e3);
  rpe_figure_page_set_caption (page, caption);
  gtk_widget_queue_draw (self->canvas);
}

static gboolean
attention_start (RpeFigurePage       *page,
                 RpeExplorerSnapshot *snapshot,
                 gsize                n_cap,
                 GCancellable        *cancellable,
                 GAsyncReadyCallback  callback,
                 gpointer             user_data,
                 char               **why)
{
  RpeAttentionView *self = RPE_ATTENTION_VIEW (page);
  RpeAttentionRequest req = { 0 };
  double x, y, side, m0, m1, n0, n1;
  int scale = gtk_widget_get_scale_factor (GTK_WIDGET (self));

  if (!plot_rect (self, &x, &y, &side))
    side = 512;
  self->requested_side = (int) side;
  rpe_figure_page_get_viewport (page, &m0, &m1, &n0, &n1);
  req.m0 = (gsize) floor (m0);
  req.m1 = (gsize) ceil (m1);
  req.n0 = (gsize) floor (n0);
  req.n1 = (gsize) ceil (n1);
  req.max_rows = (gsize) side * scale;
  req.max_cols = (gsize) side * scale;
  req.reduce = self->reduce;
  rpe_compute_attention_async (snapshot, &req, rpe_figure_page_job_progress, page, cancellable, callback, user_data);
  return TRUE;
}

static gpointer
attention_finish (RpeFigurePage *page,
                  GAsyncResult  *result,
                  GError       **error)
{
  return rpe_compute_attention_finish (result, error);
}

static void
attention_result_size (RpeFigurePage *page,
                       gconstpointer  result,
                       gsize         *n,
                       gsize         *n_asked)
{
  const RpeAttentionImage *img = result;

  *n = img->n;
  *n_asked = img->n;
}

static RpeFigurePageUpdate
attention_state_changed (RpeFigurePage     *page,
                         RpeExplorerChange  what)
{
  if ((what & ~ATTENTION_CHANGES) & RPE_EXPLORER_CHANGE_TRAIN_LENGTH)
    gtk_widget_queue_draw (RPE_ATTENTION_VIEW (page)->canvas);
  return RPE_FIGURE_PAGE_CLASS (rpe_attention_view_parent_class)->state_changed (page, what);
}

static char *
attention_describe_point (RpeFigurePage *page,
                          GtkWidget     *widget,
                          double         x,
                          double         y)
{
  RpeAttentionView *self = RPE_ATTENTION_VIEW (page);
  char *text;

  if (widget != self->canvas)
    return NULL;
  text = rpe_attention_view_describe_point (self, x, y);
  return text != NULL ? text : describe_row_point (self, x, y);
}

static RpeFigureBundle *attention_figure (RpeAttentionImage *img, const RpeExplorerSnapshot *s,
                                          const RpeColormap *cmap, guint train, RpeHeatmapTransform transform,
                                          double param);

static RpeFigureBundle *
attention_build_figure (RpeFigurePage *page)
{
  RpeAttentionView *self = RPE_ATTENTION_VIEW (page);
  guint train = 0;
  RpeHeatmapTransform transform;
  double param;

  g_object_get (attention_state (self), "train-length", &train, NULL);
  rpe_explorer_state_get_color_scale (attention_state (self), &transform, &param, NULL);
  return attention_figure (attention_image (self), rpe_figure_page_get_result_snapshot (page),
                           current_colormap (self), train, transform, param);
}

static void attention_setup_sweep (RpeFigurePage *page, RpeExportDialog *dialog);

/* The canvas changed size: a map of its new resolution (a change of a few pixels keeps the map). */
static void
attention_request_size (RpeAttentionView *self)
{
  double x, y, side;

  if (plot_rect (self, &x, &y, &side) && abs ((int) side - self->requested_side) > 8)
    rpe_figure_page_request (RPE_FIGURE_PAGE (self));
}

static void
canvas_resize (GtkDrawingArea   *area,
               int               width,
               int               height,
               RpeAttentionView *self)
{
  attention_request_size (self);
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
rpe_attention_view_dispose (GObject *object)
{
  RpeAttentionView *self = RPE_ATTENTION_VIEW (object);

  g_clear_pointer (&self->surface, cairo_surface_destroy);
  g_clear_pointer (&self->row_x, g_free);
  g_clear_pointer (&self->row_y, g_free);
  G_OBJECT_CLASS (rpe_attention_view_parent_class)->dispose (object);
}

static void
rpe_attention_view_class_init (RpeAttentionViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  RpeFigurePageClass *page_class = RPE_FIGURE_PAGE_CLASS (klass);

  object_class->dispose = rpe_attention_view_dispose;
  page_class->job_changes = ATTENTION_CHANGES;
  page_class->result_free = (GDestroyNotify) rpe_attention_image_unref;
  page_class->what = N_("the attention map");
  page_class->state_changed = attention_state_changed;
  page_class->start_job = attention_start;
  page_class->finish_job = attention_finish;
  page_class->show_result = attention_show;
  page_class->result_size = attention_result_size;
  page_class->describe_point = attention_describe_point;
  page_class->build_figure = attention_build_figure;
  page_class->setup_sweep = attention_setup_sweep;
  page_class->plot_area = attention_plot_area;
  page_class->row_range = attention_row_range;
  page_class->row_changed = attention_row_changed;
}

static void
rpe_attention_view_init (RpeAttentionView *self)
{
  RpeFigurePage *page = RPE_FIGURE_PAGE (self);
  GtkWidget *dropdown;
  GtkGesture *click;
  const char *reduce_names[] = { _("Mean per pixel"), _("Max per pixel"), NULL };

  self->reduce = RPE_HEATMAP_REDUCE_MEAN;

  self->canvas = gtk_drawing_area_new ();
  gtk_widget_set_hexpand (self->canvas, TRUE);
  gtk_widget_set_vexpand (self->canvas, TRUE);
  gtk_widget_set_size_request (self->canvas, 300, 260);
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (self->canvas), canvas_draw, self, NULL);
  g_signal_connect (self->canvas, "resize", G_CALLBACK (canvas_resize), self);
  rpe_figure_page_set_content (page, self->canvas);
  rpe_figure_page_set_zoom_widget (page, self->canvas);
  click = gtk_gesture_click_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (click), GDK_BUTTON_PRIMARY);
  g_signal_connect (click, "released", G_CALLBACK (canvas_released), self);
  gtk_widget_add_controller (self->canvas, GTK_EVENT_CONTROLLER (click));

  dropdown = gtk_drop_down_new_from_strings (reduce_names);
  gtk_widget_set_tooltip_text (dropdown, _("How a pixel covering several cells of a long map is coloured"));
  g_signal_connect (dropdown, "notify::selected", G_CALLBACK (reduce_changed), self);
  rpe_figure_page_add_footer (page, dropdown);
}

GtkWidget *
rpe_attention_view_new (RpeExplorerState *state)
{
  RpeAttentionView *self = g_object_new (RPE_TYPE_ATTENTION_VIEW, NULL);

  rpe_figure_page_set_state (RPE_FIGURE_PAGE (self), state);
  return GTK_WIDGET (self);
}

/* ----------------------------------------------------------------- public */

gsize
rpe_attention_view_get_axes_n (RpeAttentionView *self)
{
  g_return_val_if_fail (RPE_IS_ATTENTION_VIEW (self), 0);
  return image_stale (self) ? attention_image (self)->n : rpe_figure_page_get_viewport_n (RPE_FIGURE_PAGE (self));
}

gsize
rpe_attention_view_get_drawn_n (RpeAttentionView *self)
{
  g_return_val_if_fail (RPE_IS_ATTENTION_VIEW (self), 0);
  return attention_image (self) != NULL && self->surface != NULL ? attention_image (self)->n : 0;
}

RpeAttentionImage *
rpe_attention_view_get_image (RpeAttentionView *self)
{
  g_return_val_if_fail (RPE_IS_ATTENTION_VIEW (self), NULL);
  return attention_image (self);
}

void
rpe_attention_view_set_reduce (RpeAttentionView *self,
                               RpeHeatmapReduce  reduce)
{
  g_return_if_fail (RPE_IS_ATTENTION_VIEW (self));
  if (self->reduce != reduce)
    {
      self->reduce = reduce;
      rpe_figure_page_request (RPE_FIGURE_PAGE (self));
    }
}

char *
rpe_attention_view_describe_point (RpeAttentionView *self,
                                   double            px,
                                   double            py)
{
  RpeAttentionImage *img;
  double x, y, side, fm, fn;
  gsize m, n, i, j;

  g_return_val_if_fail (RPE_IS_ATTENTION_VIEW (self), NULL);
  img = attention_image (self);
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
    {
      const float *tokens;
      size_t       n_tokens;

      view_tokens (self, &tokens, &n_tokens);
      if (tokens != NULL && m < n_tokens && n < n_tokens)
        {
          char tm[48], tn[48];

          rpe_ticks_token_text (tokens[m], tm, sizeof tm);
          rpe_ticks_token_text (tokens[n], tn, sizeof tn);
          /* TRANSLATORS: a cell of an attention map on a captured input: query position and its
           * token, key position and its token, the value */
          return g_strdup_printf (_("m = %zu (token %s), n = %zu (token %s): %.6g"), m, tm, n, tn,
                                  img->values[i * img->cols + j]);
        }
      return g_strdup_printf ("m = %zu, n = %zu: %.6g", m, n, img->values[i * img->cols + j]);
    }
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
  if (rpe_figure_page_get_viewport_n (RPE_FIGURE_PAGE (self)) == 0 || !plot_rect (self, &px, &py, &s))
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
  /* the capture's tokens the figure points at */
  rpe_figure_bundle_keep (b, rpe_explorer_snapshot_ref ((RpeExplorerSnapshot *) s),
                          (GDestroyNotify) rpe_explorer_snapshot_unref);
  b->default_name = g_strdup_printf ("attention-h%zu", img->head);
  return b;
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

/* An animated sweep of the view: frames of the whole map (at most SWEEP_MAX_SIDE pixels a
 * side, as `rpe export attention`), computed by rpe_compute_attention (the code of the view's
 * own job) from the state's snapshot with the parameter changed. */
#define SWEEP_MAX_SIDE 2048

typedef struct
{
  const RpeColormap   *cmap;
  RpeHeatmapReduce     reduce;
  guint                train;
  RpeHeatmapTransform  transform;
  double               param;
} AttentionSweep;

static RpeFigureBundle *
attention_sweep_frame (RpeExplorerSnapshot       *s,
                       gconstpointer              look,
                       GCancellable              *cancellable,
                       GError                   **error)
{
  const AttentionSweep *as = look;
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

static void
attention_setup_sweep (RpeFigurePage   *page,
                       RpeExportDialog *dialog)
{
  RpeAttentionView *self = RPE_ATTENTION_VIEW (page);
  AttentionSweep as = { 0 };

  as.cmap = current_colormap (self);
  as.reduce = self->reduce;
  rpe_explorer_state_get_color_scale (attention_state (self), &as.transform, &as.param, NULL);
  g_object_get (attention_state (self), "train-length", &as.train, NULL);
  rpe_figure_page_offer_sweep (page, dialog, attention_sweep_frame, &as, sizeof as);
}

/* rpe-export-dialog.c: figure bundles, export options and the Export dialog. */
#include "config.h"

#include "rpe-export-dialog.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "rpe-error.h"
#include "rpe-explorer-state.h"
#include "rpe-text.h"

#define RPE_EXPORT_DIALOG_RESOURCE "/io/github/rpestudio/RpeStudio/ui/rpe-export-dialog.ui"

/* ================================================================ bundles */

typedef struct
{
  gpointer       data;
  GDestroyNotify destroy;
} Owned;

static void
owned_free (gpointer p)
{
  Owned *o = p;

  if (o->destroy != NULL && o->data != NULL)
    o->destroy (o->data);
  g_free (o);
}

RpeFigureBundle *
rpe_figure_bundle_new (RpeFigureKind kind)
{
  RpeFigureBundle *bundle = g_atomic_rc_box_new0 (RpeFigureBundle);

  rpe_figure_init (&bundle->fig, kind);
  bundle->owned = g_ptr_array_new_with_free_func (owned_free);
  return bundle;
}

RpeFigureBundle *
rpe_figure_bundle_ref (RpeFigureBundle *bundle)
{
  g_return_val_if_fail (bundle != NULL, NULL);
  return g_atomic_rc_box_acquire (bundle);
}

static void
bundle_clear (gpointer p)
{
  RpeFigureBundle *bundle = p;

  /* release in reverse order: derived data before what it points into */
  while (bundle->owned->len > 0)
    g_ptr_array_remove_index (bundle->owned, bundle->owned->len - 1);
  g_ptr_array_unref (bundle->owned);
  g_free (bundle->default_name);
}

void
rpe_figure_bundle_unref (RpeFigureBundle *bundle)
{
  if (bundle != NULL)
    g_atomic_rc_box_release_full (bundle, bundle_clear);
}

gpointer
rpe_figure_bundle_keep (RpeFigureBundle *bundle,
                        gpointer         data,
                        GDestroyNotify   destroy)
{
  Owned *o;

  g_return_val_if_fail (bundle != NULL, data);
  if (data == NULL)
    return NULL;
  o = g_new0 (Owned, 1);
  o->data = data;
  o->destroy = destroy;
  g_ptr_array_add (bundle->owned, o);
  return data;
}

const char *
rpe_figure_bundle_strdup (RpeFigureBundle *bundle,
                          const char      *s)
{
  return s != NULL ? rpe_figure_bundle_keep (bundle, g_strdup (s), g_free) : NULL;
}

const char *
rpe_figure_bundle_printf (RpeFigureBundle *bundle,
                          const char      *format,
                          ...)
{
  va_list args;
  char *s;

  va_start (args, format);
  s = g_strdup_vprintf (format, args);
  va_end (args);
  return rpe_figure_bundle_keep (bundle, s, g_free);
}

/* ================================================================ options */

void
rpe_export_options_init (RpeExportOptions *options)
{
  memset (options, 0, sizeof *options);
}

static void
apply_heatmap (RpeHeatmapData         *d,
               const RpeExportOptions *o,
               gboolean                attention)
{
  if (o->colormap != NULL)
    d->colormap = o->colormap;
  if (o->scale == RPE_EXPORT_SCALE_LINEAR || o->scale == RPE_EXPORT_SCALE_SYMMETRIC)
    {
      d->scale = o->scale == RPE_EXPORT_SCALE_LINEAR ? RPE_HEATMAP_SCALE_LINEAR : RPE_HEATMAP_SCALE_SYMMETRIC;
      d->fixed_range = FALSE;
    }
  /* the view's colour scale (the state's color-scale) unless the SPE paper's is asked for */
  if (attention && o->attention_transform)
    {
      d->transform = RPE_HEATMAP_TRANSFORM_ATTENTION;
      d->transform_param = 0.0;
    }
}

RpeFigureBundle *
rpe_figure_bundle_with_options (RpeFigureBundle        *base,
                                const RpeExportOptions *options)
{
  RpeExportOptions none;
  RpeFigureBundle *b;
  RpeFigure *fig;

  g_return_val_if_fail (base != NULL, NULL);
  if (options == NULL)
    {
      rpe_export_options_init (&none);
      options = &none;
    }
  b = rpe_figure_bundle_new (base->fig.kind);
  rpe_figure_bundle_keep (b, rpe_figure_bundle_ref (base), (GDestroyNotify) rpe_figure_bundle_unref);
  b->fig = base->fig;
  b->has_attention = base->has_attention;
  b->default_name = g_strdup (base->default_name);
  fig = &b->fig;
  if (options->title != NULL)
    fig->title = options->title[0] != '\0' ? rpe_figure_bundle_strdup (b, options->title) : NULL;
  if (options->text_size > 0.0)
    fig->text_size = options->text_size;

  switch (fig->kind)
    {
    case RPE_FIGURE_HEATMAP:
      apply_heatmap (&fig->heatmap, options, b->has_attention);
      break;

    case RPE_FIGURE_GRID:
      {
        RpeHeatmapData *cells = g_memdup2 (fig->grid.cells, fig->grid.n_cells * sizeof (RpeHeatmapData));

        rpe_figure_bundle_keep (b, cells, g_free);
        for (gsize i = 0; i < fig->grid.n_cells; i++)
          apply_heatmap (&cells[i], options, b->has_attention);
        fig->grid.cells = cells;
        if (options->scale == RPE_EXPORT_SCALE_SHARED)
          fig->grid.shared_scale = TRUE;
        else if (options->scale == RPE_EXPORT_SCALE_PER_CELL)
          fig->grid.shared_scale = FALSE;
      }
      break;

    case RPE_FIGURE_COMPARE:
      for (gsize i = 0; i < fig->n_panels; i++)
        {
          /* the difference panel (symmetric) keeps a diverging map */
          if (fig->panels[i].scale == RPE_HEATMAP_SCALE_SYMMETRIC && i >= 2)
            {
              if (options->colormap != NULL && rpe_colormap_is_diverging (options->colormap))
                fig->panels[i].colormap = options->colormap;
              continue;
            }
          apply_heatmap (&fig->panels[i], options, b->has_attention);
        }
      break;

    case RPE_FIGURE_CURVES:
      {
        RpeCurvePlot *plots = g_memdup2 (fig->plots, MAX (fig->n_plots, 1) * sizeof (RpeCurvePlot));

        rpe_figure_bundle_keep (b, plots, g_free);
        for (gsize i = 0; i < fig->n_plots; i++)
          {
            if (options->x_axis != RPE_EXPORT_AXIS_AS_VIEW)
              plots[i].x_log = options->x_axis == RPE_EXPORT_AXIS_LOG;
            if (options->y_axis != RPE_EXPORT_AXIS_AS_VIEW)
              plots[i].y_log = options->y_axis == RPE_EXPORT_AXIS_LOG;
          }
        fig->plots = plots;
        if (options->panel > 0 && (gsize) options->panel <= fig->n_plots)
          {
            /* one panel alone, with its legend; the figure's title is for the whole */
            plots[0] = plots[options->panel - 1];
            if (plots[0].legend == RPE_CURVE_LEGEND_NONE)
              plots[0].legend = RPE_CURVE_LEGEND_BEST;
            fig->n_plots = 1;
            fig->n_plot_columns = 1;
            if (options->title == NULL)
              fig->title = NULL;
          }
      }
      break;
    }
  return b;
}

gboolean
rpe_export_bundle (RpeFigureBundle        *bundle,
                   const RpeExportOptions *options,
                   RpeExportFormat         format,
                   const RpeExportSize    *size,
                   const char             *path,
                   GCancellable           *cancellable,
                   GError                **error)
{
  g_autoptr (RpeFigureBundle) derived = NULL;

  g_return_val_if_fail (bundle != NULL, FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  derived = rpe_figure_bundle_with_options (bundle, options);
  return rpe_export_figure_cancellable (&derived->fig, format, size, path, cancellable, error);
}

/* ================================================================= dialog */

#define MAX_FORMATS 5

/* the explorer's ranges */
#define RPE_EXPLORER_SWEEP_MAX_R RPE_EXPLORER_MAX_R
#define RPE_EXPLORER_SWEEP_MAX_N RPE_EXPLORER_MAX_LENGTH
#define MAX_SCALES  5

struct _RpeExportDialog
{
  AdwWindow             parent_instance;

  /* template children */
  AdwToastOverlay      *toasts;
  GtkButton            *cancel_button;
  GtkButton            *export_button;
  GtkSpinner           *spinner;
  GtkRevealer          *error_revealer;
  GtkLabel             *error_label;
  AdwComboRow          *format_row;
  AdwComboRow          *preset_row;
  AdwComboRow          *panel_row;
  AdwActionRow         *file_row;
  GtkButton            *choose_button;
  GtkWidget            *size_group;
  GtkWidget            *look_group;
  AdwActionRow         *width_row;
  AdwActionRow         *height_row;
  AdwActionRow         *dpi_row;
  GtkSpinButton        *width_spin;
  GtkSpinButton        *height_spin;
  GtkSpinButton        *dpi_spin;
  AdwEntryRow          *title_row;
  AdwComboRow          *colormap_row;
  AdwComboRow          *scale_row;
  GtkWidget            *transform_row;
  GtkSwitch            *transform_switch;
  GtkWidget            *xlog_row;
  GtkWidget            *ylog_row;
  GtkSwitch            *xlog_switch;
  GtkSwitch            *ylog_switch;
  GtkLabel             *preview_label;
  GtkWidget            *preview;

  RpeFigureBundle      *bundle;
  RpeFigureBundle      *shown;        /* the bundle with the current options (preview) */
  RpeExportFormat       formats[MAX_FORMATS];
  guint                 n_formats;
  RpeExportScale        scales[MAX_SCALES];
  guint                 n_scales;
  RpeExportFormat       format;       /* the format of the size controls */
  char                 *path;
  char                 *error;
  GCancellable         *cancellable;
  GtkFileChooserNative *chooser;
  gboolean              x_touched;
  gboolean              y_touched;
  gboolean              updating;
  gboolean              disposed;

  /* animated sweeps (rpe_export_dialog_set_sweep) */
  RpeExportSweepFunc    sweep_func;
  gpointer              sweep_data;
  GDestroyNotify        sweep_destroy;
  gint64                sweep_current[3];   /* R, N, seed of the state */
  guint                 gif_index;          /* the GIF entry of the format list (G_MAXUINT: none) */
  gboolean              gif;                /* GIF selected */
  GtkWidget            *sweep_group;
  AdwComboRow          *param_row;
  GtkSpinButton        *from_spin;
  GtkSpinButton        *to_spin;
  GtkSpinButton        *frames_spin;
  GtkSpinButton        *delay_spin;
  GtkProgressBar       *progress_bar;
  RpeFigureBundle      *gif_frame;          /* the GIF's first frame (its preview), NULL while computed */
  GCancellable         *gif_frame_cancellable;
};

G_DEFINE_FINAL_TYPE (RpeExportDialog, rpe_export_dialog, ADW_TYPE_WINDOW)

enum
{
  SIGNAL_EXPORTED,
  SIGNAL_FINISHED,
  SIGNAL_PROGRESS,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static const char *
format_label (RpeExportFormat format)
{
  switch (format)
    {
    case RPE_EXPORT_PNG: return _("PNG image");
    case RPE_EXPORT_SVG: return _("SVG vector image");
    case RPE_EXPORT_PDF: return _("PDF document");
    case RPE_EXPORT_CSV: return _("CSV table (the numbers)");
    case RPE_EXPORT_NPY: return _("NumPy array (.npy, the raw values)");
    default:             return "?";
    }
}

static gboolean
format_is_figure (RpeExportFormat format)
{
  return format == RPE_EXPORT_PNG || format == RPE_EXPORT_SVG || format == RPE_EXPORT_PDF;
}

static void
show_error (RpeExportDialog *self,
            const char      *text)
{
  g_free (self->error);
  self->error = g_strdup (text);
  gtk_label_set_text (self->error_label, text != NULL ? text : "");
  gtk_revealer_set_reveal_child (self->error_revealer, text != NULL);
}

/* ---------------------------------------------------------------- options */

void
rpe_export_dialog_get_options (RpeExportDialog  *self,
                               RpeExportOptions *options,
                               RpeExportSize    *size)
{
  guint cm, sc;

  g_return_if_fail (RPE_IS_EXPORT_DIALOG (self));
  if (options != NULL)
    {
      rpe_export_options_init (options);
      cm = adw_combo_row_get_selected (self->colormap_row);
      options->colormap = cm > 0 && cm != GTK_INVALID_LIST_POSITION ? rpe_colormap_get ((RpeColormapId) (cm - 1)) : NULL;
      options->title = gtk_editable_get_text (GTK_EDITABLE (self->title_row));
      sc = adw_combo_row_get_selected (self->scale_row);
      options->scale = sc < self->n_scales ? self->scales[sc] : RPE_EXPORT_SCALE_AS_VIEW;
      options->attention_transform = gtk_switch_get_active (self->transform_switch);
      if (self->x_touched)
        options->x_axis = gtk_switch_get_active (self->xlog_switch) ? RPE_EXPORT_AXIS_LOG : RPE_EXPORT_AXIS_LINEAR;
      if (self->y_touched)
        options->y_axis = gtk_switch_get_active (self->ylog_switch) ? RPE_EXPORT_AXIS_LOG : RPE_EXPORT_AXIS_LINEAR;
      {
        guint p = adw_combo_row_get_selected (self->preset_row);
        RpeExportSize preset = { 0 };

        if (p != GTK_INVALID_LIST_POSITION)
          rpe_export_preset_apply ((RpeExportPreset) p, &preset);
        options->text_size = preset.text_size;
        p = adw_combo_row_get_selected (self->panel_row);
        options->panel = p != GTK_INVALID_LIST_POSITION && gtk_widget_get_visible (GTK_WIDGET (self->panel_row))
                         ? (int) p : 0;
      }
    }
  if (size != NULL)
    {
      size->width = gtk_spin_button_get_value (self->width_spin);
      size->height = gtk_spin_button_get_value (self->height_spin);
      size->dpi = gtk_spin_button_get_value (self->dpi_spin);
    }
}

static void
update_preview (RpeExportDialog *self)
{
  RpeExportOptions options;

  rpe_export_dialog_get_options (self, &options, NULL);
  g_clear_pointer (&self->shown, rpe_figure_bundle_unref);
  /* a GIF holds the sweep's frames (whole maps, whatever the view's zoom): its first one is shown */
  if (!self->gif)
    self->shown = rpe_figure_bundle_with_options (self->bundle, &options);
  else if (self->gif_frame != NULL)
    self->shown = rpe_figure_bundle_with_options (self->gif_frame, &options);
  gtk_widget_queue_draw (self->preview);
}

typedef struct
{
  RpeExportSweepFunc func;
  gpointer           data;
  RpeSweepParam      param;
  gint64             value;
} FrameJob;

static void
frame_thread (GTask        *task,
              gpointer      source,
              gpointer      task_data,
              GCancellable *cancellable)
{
  FrameJob *job = task_data;
  GError *error = NULL;
  RpeFigureBundle *frame = job->func (job->data, job->param, job->value, cancellable, &error);

  if (frame == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, frame, (GDestroyNotify) rpe_figure_bundle_unref);
}

static void
frame_done (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  RpeExportDialog *self = RPE_EXPORT_DIALOG (source);
  g_autoptr (GError) error = NULL;
  RpeFigureBundle *frame = g_task_propagate_pointer (G_TASK (result), &error);

  if (self->disposed || g_task_get_cancellable (G_TASK (result)) != self->gif_frame_cancellable)
    {
      g_clear_pointer (&frame, rpe_figure_bundle_unref);
      return;
    }
  g_clear_object (&self->gif_frame_cancellable);
  g_clear_pointer (&self->gif_frame, rpe_figure_bundle_unref);
  self->gif_frame = frame;
  if (frame != NULL)
    gtk_label_set_text (self->preview_label, _("The GIF's first frame (its From value): the whole map, whatever the "
                                               "view's zoom."));
  else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_autofree char *text = g_strdup_printf (_("Cannot preview: %s"), error->message);

      gtk_label_set_text (self->preview_label, text);
    }
  update_preview (self);
}

/* Computes the GIF's first frame (the sweep's From value) on a worker, for the preview. */
static void
gif_frame_request (RpeExportDialog *self)
{
  FrameJob *job;
  GTask *task;
  guint p;

  if (!self->gif || self->sweep_func == NULL || self->disposed)
    return;
  if (self->gif_frame_cancellable != NULL)
    g_cancellable_cancel (self->gif_frame_cancellable);
  g_clear_object (&self->gif_frame_cancellable);
  g_clear_pointer (&self->gif_frame, rpe_figure_bundle_unref);
  self->gif_frame_cancellable = g_cancellable_new ();
  p = adw_combo_row_get_selected (self->param_row);
  job = g_new0 (FrameJob, 1);
  job->func = self->sweep_func;
  job->data = self->sweep_data;   /* freed in finalize: the task holds the dialog */
  job->param = p <= RPE_SWEEP_SEED ? (RpeSweepParam) p : RPE_SWEEP_REALIZATIONS;
  job->value = (gint64) gtk_spin_button_get_value (self->from_spin);
  gtk_label_set_text (self->preview_label, _("Computing the GIF's first frame…"));
  task = g_task_new (self, self->gif_frame_cancellable, frame_done, NULL);
  g_task_set_task_data (task, job, g_free);
  g_task_run_in_thread (task, frame_thread);
  g_object_unref (task);
  update_preview (self);
}

static void
preview_draw (GtkDrawingArea *area,
              cairo_t        *cr,
              int             width,
              int             height,
              gpointer        user_data)
{
  RpeExportDialog *self = user_data;
  RpeExportFormat format = format_is_figure (self->format) ? self->format : RPE_EXPORT_PDF;
  RpeExportSize size = { 0 };
  double wpt = 0, hpt = 0, scale, margin = 8.0;
  g_autoptr (GError) error = NULL;
  g_autofree char *text = NULL;

  if (self->shown == NULL)
    return;   /* the GIF's first frame is being computed (its label says so) */
  rpe_export_dialog_get_options (self, NULL, &size);
  if (!format_is_figure (self->format))
    size.width = size.height = 0;   /* CSV / npy: show the figure at its default size */
  if (!rpe_export_resolve_size (&self->shown->fig, format, &size, &wpt, &hpt, NULL, NULL, &error))
    {
      text = g_strdup_printf (_("Cannot preview: %s"), error->message);
      gtk_label_set_text (self->preview_label, text);
      return;
    }
  scale = fmin ((width - 2 * margin) / wpt, (height - 2 * margin) / hpt);
  if (!(scale > 0))
    return;
  text = g_strdup_printf (_("Preview at %.0f%% of the layout size %.0f × %.0f pt%s."), scale * 100, wpt, hpt,
                          format_is_figure (self->format) ? "" : _(" (the file holds the numbers, not the picture)"));
  gtk_label_set_text (self->preview_label, text);
  cairo_save (cr);
  cairo_translate (cr, floor ((width - wpt * scale) / 2), floor ((height - hpt * scale) / 2));
  cairo_scale (cr, scale, scale);
  cairo_rectangle (cr, 0, 0, wpt, hpt);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_fill (cr);
  rpe_figure_render (cr, &self->shown->fig, wpt, hpt);
  cairo_restore (cr);
  cairo_set_source_rgba (cr, 0.5, 0.5, 0.5, 0.6);
  cairo_set_line_width (cr, 1.0);
  cairo_rectangle (cr, floor ((width - wpt * scale) / 2) + 0.5, floor ((height - hpt * scale) / 2) + 0.5,
                   floor (wpt * scale), floor (hpt * scale));
  cairo_stroke (cr);
}

/* ------------------------------------------------------------------- size */

/* The default size of the figure in the units of format. */
static void
default_size (RpeExportDialog *self,
              RpeExportFormat  format,
              double           dpi,
              double          *w,
              double          *h)
{
  double wpt, hpt;

  rpe_figure_default_size (&self->bundle->fig, &wpt, &hpt);
  if (format == RPE_EXPORT_PNG)
    {
      *w = round (wpt * dpi / 72.0);
      *h = round (hpt * dpi / 72.0);
    }
  else
    {
      *w = round (wpt);
      *h = round (hpt);
    }
}

static void
sync_format_controls (RpeExportDialog *self,
                      RpeExportFormat  format)
{
  gboolean figure = format_is_figure (format);
  gboolean png = format == RPE_EXPORT_PNG;
  double dpi = gtk_spin_button_get_value (self->dpi_spin);
  const char *unit = png ? _("pixels") : _("points (1/72 in)");

  self->updating = TRUE;
  if (figure && format_is_figure (self->format) && (self->format == RPE_EXPORT_PNG) != png)
    {
      /* keep the physical size: pixels = points × dpi / 72 */
      double f = png ? dpi / 72.0 : 72.0 / dpi;

      gtk_adjustment_set_upper (gtk_spin_button_get_adjustment (self->width_spin), png ? 20000 : 14400);
      gtk_adjustment_set_upper (gtk_spin_button_get_adjustment (self->height_spin), png ? 20000 : 14400);
      gtk_spin_button_set_value (self->width_spin, round (gtk_spin_button_get_value (self->width_spin) * f));
      gtk_spin_button_set_value (self->height_spin, round (gtk_spin_button_get_value (self->height_spin) * f));
    }
  else if (figure && !format_is_figure (self->format))
    {
      double w, h;

      default_size (self, format, dpi, &w, &h);
      gtk_adjustment_set_upper (gtk_spin_button_get_adjustment (self->width_spin), png ? 20000 : 14400);
      gtk_adjustment_set_upper (gtk_spin_button_get_adjustment (self->height_spin), png ? 20000 : 14400);
      gtk_spin_button_set_value (self->width_spin, w);
      gtk_spin_button_set_value (self->height_spin, h);
    }
  adw_action_row_set_subtitle (self->width_row, unit);
  adw_action_row_set_subtitle (self->height_row, unit);
  gtk_widget_set_visible (GTK_WIDGET (self->dpi_row), png);
  gtk_widget_set_visible (self->size_group, figure);
  gtk_widget_set_visible (self->look_group, figure);
  self->format = format;
  self->updating = FALSE;
}

/* path with the extension of format (replacing a known one) */
static char *
path_with_extension (const char      *path,
                     RpeExportFormat  format)
{
  const char *ext = rpe_export_format_extension (format);
  RpeExportFormat current;
  g_autofree char *base = NULL;
  const char *dot;

  if (rpe_export_format_from_path (path, &current) && current == format)
    return g_strdup (path);
  base = g_path_get_basename (path);
  dot = strrchr (base, '.');
  if (dot != NULL && rpe_export_format_from_path (path, &current))
    return g_strdup_printf ("%.*s.%s", (int) (strlen (path) - strlen (dot)), path, ext);
  return g_strconcat (path, ".", ext, NULL);
}

/* path_with_extension, knowing .gif too */
static char *
path_with_extension_gif (const char      *path,
                         gboolean         gif,
                         RpeExportFormat  format)
{
  g_autofree char *stem = NULL;
  RpeExportFormat current;

  if (g_str_has_suffix (path, ".gif") || g_str_has_suffix (path, ".GIF"))
    stem = g_strndup (path, strlen (path) - 4);
  else if (gif && rpe_export_format_from_path (path, &current) && strrchr (path, '.') != NULL)
    stem = g_strndup (path, strrchr (path, '.') - path);
  else
    stem = g_strdup (path);
  if (gif)
    return g_strconcat (stem, ".gif", NULL);
  return path_with_extension (stem, format);
}

static void
update_file_row (RpeExportDialog *self)
{
  adw_action_row_set_subtitle (self->file_row, self->path != NULL ? self->path : _("No file chosen"));
  gtk_widget_set_sensitive (GTK_WIDGET (self->export_button), self->path != NULL && self->cancellable == NULL);
}

static void
format_selected (AdwComboRow     *row,
                 GParamSpec      *pspec,
                 RpeExportDialog *self)
{
  guint i = adw_combo_row_get_selected (row);
  gboolean gif = self->gif_index != G_MAXUINT && i == self->gif_index;

  if (i >= self->n_formats && !gif)
    return;
  self->gif = gif;
  if (self->sweep_group != NULL)
    gtk_widget_set_visible (self->sweep_group, gif);
  /* a GIF's frames are PNG images: sizes in pixels */
  sync_format_controls (self, gif ? RPE_EXPORT_PNG : self->formats[i]);
  if (self->path != NULL)
    {
      char *path = path_with_extension_gif (self->path, gif, gif ? RPE_EXPORT_PNG : self->formats[i]);

      g_free (self->path);
      self->path = path;
      update_file_row (self);
    }
  if (gif)
    gif_frame_request (self);
  else
    {
      if (self->gif_frame_cancellable != NULL)
        g_cancellable_cancel (self->gif_frame_cancellable);
      g_clear_object (&self->gif_frame_cancellable);
      update_preview (self);
    }
}

static void option_changed (RpeExportDialog *self);

/* A preset: its size in the units of the format (points, or pixels at the dpi), its
 * text size through the options. */
static void
preset_selected (RpeExportDialog *self)
{
  guint p = adw_combo_row_get_selected (self->preset_row);
  RpeExportSize size = { 0 };
  RpeExportOptions options;
  g_autoptr (RpeFigureBundle) shown = NULL;
  double wpt, hpt;
  int wpx, hpx;

  if (self->updating || p == GTK_INVALID_LIST_POSITION || p == RPE_EXPORT_PRESET_NONE)
    {
      option_changed (self);
      return;
    }
  rpe_export_preset_apply ((RpeExportPreset) p, &size);
  size.dpi = gtk_spin_button_get_value (self->dpi_spin);
  rpe_export_dialog_get_options (self, &options, NULL);
  shown = rpe_figure_bundle_with_options (self->bundle, &options);
  if (rpe_export_resolve_size (&shown->fig, format_is_figure (self->format) ? self->format : RPE_EXPORT_PDF, &size,
                               &wpt, &hpt, &wpx, &hpx, NULL))
    {
      self->updating = TRUE;
      gtk_spin_button_set_value (self->width_spin, self->format == RPE_EXPORT_PNG ? wpx : round (wpt * 100) / 100);
      gtk_spin_button_set_value (self->height_spin, self->format == RPE_EXPORT_PNG ? hpx : round (hpt * 100) / 100);
      self->updating = FALSE;
    }
  option_changed (self);
}

static void
option_changed (RpeExportDialog *self)
{
  if (!self->updating)
    update_preview (self);
}

static void
xlog_changed (RpeExportDialog *self)
{
  if (!self->updating)
    self->x_touched = TRUE;
  option_changed (self);
}

static void
ylog_changed (RpeExportDialog *self)
{
  if (!self->updating)
    self->y_touched = TRUE;
  option_changed (self);
}

static void
size_changed (RpeExportDialog *self)
{
  if (!self->updating)
    gtk_widget_queue_draw (self->preview);
}

/* ---------------------------------------------------------------- chooser */

static void
chooser_response (GtkNativeDialog *dialog,
                  int              response,
                  RpeExportDialog *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree char *path = file != NULL ? g_file_get_path (file) : NULL;

      if (path != NULL)
        rpe_export_dialog_set_path (self, path);
      else
        show_error (self, _("Only local files can be written."));
    }
  gtk_native_dialog_destroy (dialog);
  if (self->chooser == GTK_FILE_CHOOSER_NATIVE (dialog))
    g_clear_object (&self->chooser);
}

static void
choose_clicked (GtkButton       *button,
                RpeExportDialog *self)
{
  g_autofree char *name = NULL;

  if (self->chooser != NULL)
    {
      gtk_native_dialog_destroy (GTK_NATIVE_DIALOG (self->chooser));
      g_clear_object (&self->chooser);
    }
  self->chooser = gtk_file_chooser_native_new (_("Export Figure"), GTK_WINDOW (self), GTK_FILE_CHOOSER_ACTION_SAVE,
                                               _("_Save"), _("_Cancel"));
  if (self->path != NULL)
    {
      g_autoptr (GFile) file = g_file_new_for_path (self->path);
      g_autoptr (GFile) dir = g_file_get_parent (file);

      if (dir != NULL)
        gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (self->chooser), dir, NULL);
      name = g_path_get_basename (self->path);
    }
  else
    name = g_strconcat (self->bundle->default_name != NULL ? self->bundle->default_name : "figure", ".",
                        self->gif ? "gif" : rpe_export_format_extension (self->format), NULL);
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (self->chooser), name);
  g_signal_connect (self->chooser, "response", G_CALLBACK (chooser_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (self->chooser));
}

/* ----------------------------------------------------------------- export */

typedef struct
{
  RpeFigureBundle *bundle;
  RpeExportFormat  format;
  RpeExportSize    size;
  char            *path;
} ExportJob;

static void
export_job_free (gpointer p)
{
  ExportJob *job = p;

  rpe_figure_bundle_unref (job->bundle);
  g_free (job->path);
  g_free (job);
}

static void
export_thread (GTask        *task,
               gpointer      source,
               gpointer      task_data,
               GCancellable *cancellable)
{
  ExportJob *job = task_data;
  GError *error = NULL;

  if (rpe_export_figure_cancellable (&job->bundle->fig, job->format, &job->size, job->path, cancellable, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static void
set_exporting (RpeExportDialog *self,
               gboolean         exporting)
{
  gtk_spinner_set_spinning (self->spinner, exporting);
  gtk_widget_set_sensitive (GTK_WIDGET (self->choose_button), !exporting);
  gtk_widget_set_sensitive (GTK_WIDGET (self->format_row), !exporting);
  if (self->sweep_group != NULL)
    {
      gtk_progress_bar_set_fraction (self->progress_bar, 0.0);
      gtk_progress_bar_set_text (self->progress_bar, exporting ? _("Starting…") : NULL);
      gtk_widget_set_visible (GTK_WIDGET (self->progress_bar), exporting && self->gif);
    }
  update_file_row (self);
}

static void
export_done (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  RpeExportDialog *self = RPE_EXPORT_DIALOG (source);
  ExportJob *job = g_task_get_task_data (G_TASK (result));
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_strdup (job->path);
  gboolean ok = g_task_propagate_boolean (G_TASK (result), &error);

  g_clear_object (&self->cancellable);
  if (self->disposed)
    return;
  set_exporting (self, FALSE);
  if (ok)
    {
      show_error (self, NULL);
      g_signal_emit (self, signals[SIGNAL_EXPORTED], 0, path);
    }
  else if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    show_error (self, _("Export cancelled: no file was written and an existing file is unchanged."));
  else
    {
      g_autofree char *text = g_strdup_printf (_("Could not export to “%s”: %s"), path, error->message);

      show_error (self, text);
    }
  g_signal_emit (self, signals[SIGNAL_FINISHED], 0, ok);
}

/* ------------------------------------------------------------ GIF sweeps */

typedef struct
{
  RpeExportSweepFunc  func;
  gpointer            data;       /* the dialog's; alive while the task holds the dialog */
  RpeSweepParam       param;
  gint64              from, to;
  guint               frames;
  guint               delay_cs;
  RpeExportOptions    options;
  char               *title;      /* options.title's storage */
  RpeExportSize       size;
  char               *path;
} GifJob;

static void
gif_job_free (gpointer p)
{
  GifJob *job = p;

  g_free (job->title);
  g_free (job->path);
  g_free (job);
}

typedef struct
{
  RpeExportDialog *self;
  GCancellable    *cancellable;
  guint            done, frames;
} GifProgress;

static gboolean
gif_progress_dispatch (gpointer p)
{
  GifProgress *gp = p;
  RpeExportDialog *self = gp->self;

  if (!self->disposed && self->cancellable == gp->cancellable && !g_cancellable_is_cancelled (gp->cancellable))
    {
      g_autofree char *text = g_strdup_printf (_("Frame %u of %u"), gp->done, gp->frames);

      gtk_progress_bar_set_fraction (self->progress_bar, (double) gp->done / gp->frames);
      gtk_progress_bar_set_text (self->progress_bar, text);
      g_signal_emit (self, signals[SIGNAL_PROGRESS], 0, gp->done, gp->frames);
    }
  return G_SOURCE_REMOVE;
}

static void
gif_progress_free (gpointer p)
{
  GifProgress *gp = p;

  g_object_unref (gp->self);
  g_object_unref (gp->cancellable);
  g_free (gp);
}

static void
gif_thread (GTask        *task,
            gpointer      source,
            gpointer      task_data,
            GCancellable *cancellable)
{
  GifJob *job = task_data;
  RpeGifWriter *writer = NULL;
  GError *error = NULL;

  for (guint k = 0; k < job->frames; k++)
    {
      gint64 value = rpe_sweep_value (job->param, job->from, job->to, k, job->frames);
      g_autoptr (RpeFigureBundle) frame = NULL;
      g_autoptr (RpeFigureBundle) derived = NULL;
      cairo_surface_t *surface;
      gboolean ok;
      GifProgress *gp;

      if (g_cancellable_set_error_if_cancelled (cancellable, &error))
        goto fail;
      frame = job->func (job->data, job->param, value, cancellable, &error);
      if (frame == NULL)
        goto fail;
      derived = rpe_figure_bundle_with_options (frame, &job->options);
      surface = rpe_gif_render_frame (&derived->fig, &job->size, &error);
      if (surface == NULL)
        goto fail;
      if (writer == NULL)
        writer = rpe_gif_writer_new (job->path, cairo_image_surface_get_width (surface),
                                     cairo_image_surface_get_height (surface), (int) job->delay_cs, &error);
      ok = writer != NULL && rpe_gif_writer_add (writer, surface, &error);
      cairo_surface_destroy (surface);
      if (!ok)
        goto fail;
      gp = g_new0 (GifProgress, 1);
      gp->self = g_object_ref (source);
      gp->cancellable = g_object_ref (cancellable);
      gp->done = k + 1;
      gp->frames = job->frames;
      g_main_context_invoke_full (g_task_get_context (task), G_PRIORITY_DEFAULT, gif_progress_dispatch, gp,
                                  gif_progress_free);
    }
  if (g_cancellable_set_error_if_cancelled (cancellable, &error))
    goto fail;
  if (!rpe_gif_writer_finish (writer, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  g_task_return_boolean (task, TRUE);
  return;

fail:
  rpe_gif_writer_abort (writer);
  g_task_return_error (task, error);
}

static void
gif_done (GObject      *source,
          GAsyncResult *result,
          gpointer      user_data)
{
  RpeExportDialog *self = RPE_EXPORT_DIALOG (source);
  GifJob *job = g_task_get_task_data (G_TASK (result));
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_strdup (job->path);
  gboolean ok = g_task_propagate_boolean (G_TASK (result), &error);

  g_clear_object (&self->cancellable);
  if (self->disposed)
    return;
  set_exporting (self, FALSE);
  if (ok)
    {
      show_error (self, NULL);
      g_signal_emit (self, signals[SIGNAL_EXPORTED], 0, path);
    }
  else if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    show_error (self, _("Export cancelled: no file was written and an existing file is unchanged."));
  else
    {
      g_autofree char *text = g_strdup_printf (_("Could not export to “%s”: %s"), path, error->message);

      show_error (self, text);
    }
  g_signal_emit (self, signals[SIGNAL_FINISHED], 0, ok);
}

static void
gif_start (RpeExportDialog *self)
{
  GifJob *job = g_new0 (GifJob, 1);
  guint p = adw_combo_row_get_selected (self->param_row);
  GTask *task;

  job->func = self->sweep_func;
  job->data = self->sweep_data;
  job->param = p <= RPE_SWEEP_SEED ? (RpeSweepParam) p : RPE_SWEEP_REALIZATIONS;
  job->from = (gint64) gtk_spin_button_get_value (self->from_spin);
  job->to = (gint64) gtk_spin_button_get_value (self->to_spin);
  job->frames = (guint) gtk_spin_button_get_value (self->frames_spin);
  job->delay_cs = (guint) gtk_spin_button_get_value (self->delay_spin);
  rpe_export_dialog_get_options (self, &job->options, &job->size);
  /* a title left as the view's is each frame's own (it names R, N or the seed swept) */
  if (job->options.title != NULL && self->bundle->fig.title != NULL
      && g_str_equal (job->options.title, self->bundle->fig.title))
    job->options.title = NULL;
  job->title = g_strdup (job->options.title);
  job->options.title = job->title;
  job->path = g_strdup (self->path);
  self->cancellable = g_cancellable_new ();
  show_error (self, NULL);
  set_exporting (self, TRUE);
  task = g_task_new (self, self->cancellable, gif_done, NULL);
  g_task_set_source_tag (task, gif_start);
  g_task_set_task_data (task, job, gif_job_free);
  g_task_run_in_thread (task, gif_thread);
  g_object_unref (task);
}

/* The From / To range of a parameter and the state's value. */
static void
sweep_param_changed (RpeExportDialog *self)
{
  guint p = adw_combo_row_get_selected (self->param_row);
  double lo = p == RPE_SWEEP_SEED ? 0 : p == RPE_SWEEP_LENGTH ? 2 : 1;
  double hi = p == RPE_SWEEP_SEED ? G_MAXINT32 : p == RPE_SWEEP_LENGTH ? RPE_EXPLORER_SWEEP_MAX_N : RPE_EXPLORER_SWEEP_MAX_R;
  gint64 cur;

  if (p > RPE_SWEEP_SEED)
    return;
  cur = self->sweep_current[p];
  gtk_spin_button_set_range (self->from_spin, lo, hi);
  gtk_spin_button_set_range (self->to_spin, lo, hi);
  /* a sweep that ends at the state's current value */
  gtk_spin_button_set_value (self->from_spin, p == RPE_SWEEP_REALIZATIONS ? 1 : p == RPE_SWEEP_LENGTH ? MAX (2, cur / 4) : 0);
  gtk_spin_button_set_value (self->to_spin, p == RPE_SWEEP_SEED ? MAX (cur, 7) : cur);
}

static GtkSpinButton *
sweep_spin_row (AdwPreferencesGroup *group,
                const char          *title,
                const char          *subtitle,
                double               lo,
                double               hi,
                double               value)
{
  GtkWidget *row = adw_action_row_new ();
  GtkWidget *spin = gtk_spin_button_new_with_range (lo, hi, 1);

  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  if (subtitle != NULL)
    adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (spin), value);
  gtk_widget_set_valign (spin, GTK_ALIGN_CENTER);
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), spin);
  adw_action_row_set_activatable_widget (ADW_ACTION_ROW (row), spin);
  adw_preferences_group_add (group, row);
  return GTK_SPIN_BUTTON (spin);
}

void
rpe_export_dialog_set_sweep (RpeExportDialog    *self,
                             RpeExportSweepFunc  func,
                             gpointer            data,
                             GDestroyNotify      destroy,
                             gint64              realizations,
                             gint64              length,
                             gint64              seed)
{
  GtkStringList *formats;
  g_autoptr (GtkStringList) params = NULL;
  AdwPreferencesGroup *group;
  GtkWidget *row;

  g_return_if_fail (RPE_IS_EXPORT_DIALOG (self));
  g_return_if_fail (func != NULL);
  g_return_if_fail (self->sweep_func == NULL);
  self->sweep_func = func;
  self->sweep_data = data;
  self->sweep_destroy = destroy;
  self->sweep_current[RPE_SWEEP_REALIZATIONS] = realizations;
  self->sweep_current[RPE_SWEEP_LENGTH] = length;
  self->sweep_current[RPE_SWEEP_SEED] = seed;

  group = ADW_PREFERENCES_GROUP (adw_preferences_group_new ());
  adw_preferences_group_set_title (group, _("Animated sweep"));
  adw_preferences_group_set_description (group, _("Each frame is the view recomputed with one parameter changed; "
                                                  "the size, text and look below apply to every frame."));
  self->sweep_group = GTK_WIDGET (group);
  params = gtk_string_list_new (NULL);
  /* in the order of RpeSweepParam */
  gtk_string_list_append (params, _("Realizations R (geometric steps)"));
  gtk_string_list_append (params, _("Length N"));
  gtk_string_list_append (params, _("Seed"));
  row = adw_combo_row_new ();
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), _("Parameter"));
  adw_combo_row_set_model (ADW_COMBO_ROW (row), G_LIST_MODEL (params));
  adw_preferences_group_add (group, row);
  self->param_row = ADW_COMBO_ROW (row);
  self->from_spin = sweep_spin_row (group, _("From"), _("the first frame's value"), 1, RPE_EXPLORER_SWEEP_MAX_R, 1);
  self->to_spin = sweep_spin_row (group, _("To"), _("the last frame's value"), 1, RPE_EXPLORER_SWEEP_MAX_R, realizations);
  self->frames_spin = sweep_spin_row (group, _("Frames"), NULL, 2, RPE_GIF_MAX_FRAMES, 8);
  self->delay_spin = sweep_spin_row (group, _("Frame delay"), _("hundredths of a second per frame"), 1, 6000, 60);
  self->progress_bar = GTK_PROGRESS_BAR (gtk_progress_bar_new ());
  gtk_progress_bar_set_show_text (self->progress_bar, TRUE);
  gtk_widget_set_margin_top (GTK_WIDGET (self->progress_bar), 6);
  gtk_widget_set_visible (GTK_WIDGET (self->progress_bar), FALSE);
  adw_preferences_group_add (group, GTK_WIDGET (self->progress_bar));
  gtk_box_insert_child_after (GTK_BOX (gtk_widget_get_parent (self->size_group)), self->sweep_group,
                              gtk_widget_get_prev_sibling (self->size_group));
  gtk_widget_set_visible (self->sweep_group, FALSE);
  sweep_param_changed (self);
  g_signal_connect_swapped (self->param_row, "notify::selected", G_CALLBACK (sweep_param_changed), self);
  g_signal_connect_swapped (self->from_spin, "value-changed", G_CALLBACK (gif_frame_request), self);

  formats = GTK_STRING_LIST (adw_combo_row_get_model (self->format_row));
  self->gif_index = g_list_model_get_n_items (G_LIST_MODEL (formats));
  gtk_string_list_append (formats, _("GIF (animated sweep)"));
}

void
rpe_export_dialog_set_gif (RpeExportDialog *self,
                           RpeSweepParam    param,
                           gint64           from,
                           gint64           to,
                           guint            frames,
                           guint            delay_cs)
{
  g_return_if_fail (RPE_IS_EXPORT_DIALOG (self));
  g_return_if_fail (self->gif_index != G_MAXUINT);
  adw_combo_row_set_selected (self->format_row, self->gif_index);
  adw_combo_row_set_selected (self->param_row, (guint) param);
  gtk_spin_button_set_value (self->from_spin, (double) from);
  gtk_spin_button_set_value (self->to_spin, (double) to);
  gtk_spin_button_set_value (self->frames_spin, frames);
  gtk_spin_button_set_value (self->delay_spin, delay_cs);
}

gboolean
rpe_export_dialog_is_gif (RpeExportDialog *self)
{
  g_return_val_if_fail (RPE_IS_EXPORT_DIALOG (self), FALSE);
  return self->gif;
}

void
rpe_export_dialog_start (RpeExportDialog *self)
{
  RpeExportOptions options;
  ExportJob *job;
  GTask *task;

  g_return_if_fail (RPE_IS_EXPORT_DIALOG (self));
  if (self->cancellable != NULL)
    return;
  if (self->path == NULL)
    {
      choose_clicked (NULL, self);
      return;
    }
  if (self->gif)
    {
      gif_start (self);
      return;
    }
  job = g_new0 (ExportJob, 1);
  rpe_export_dialog_get_options (self, &options, &job->size);
  job->bundle = rpe_figure_bundle_with_options (self->bundle, &options);
  job->format = self->format;
  job->path = g_strdup (self->path);
  if (!format_is_figure (job->format))
    memset (&job->size, 0, sizeof job->size);
  self->cancellable = g_cancellable_new ();
  show_error (self, NULL);
  set_exporting (self, TRUE);
  task = g_task_new (self, self->cancellable, export_done, NULL);
  g_task_set_source_tag (task, rpe_export_dialog_start);
  g_task_set_task_data (task, job, export_job_free);
  g_task_run_in_thread (task, export_thread);
  g_object_unref (task);
}

void
rpe_export_dialog_cancel_export (RpeExportDialog *self)
{
  g_return_if_fail (RPE_IS_EXPORT_DIALOG (self));
  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
}

gboolean
rpe_export_dialog_is_exporting (RpeExportDialog *self)
{
  g_return_val_if_fail (RPE_IS_EXPORT_DIALOG (self), FALSE);
  return self->cancellable != NULL;
}

static void
export_clicked (GtkButton       *button,
                RpeExportDialog *self)
{
  rpe_export_dialog_start (self);
}

static void
cancel_clicked (GtkButton       *button,
                RpeExportDialog *self)
{
  if (self->cancellable != NULL)
    rpe_export_dialog_cancel_export (self);
  else
    gtk_window_close (GTK_WINDOW (self));
}

static void
action_cancel (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  cancel_clicked (NULL, RPE_EXPORT_DIALOG (widget));
}

static void
action_export (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  rpe_export_dialog_start (RPE_EXPORT_DIALOG (widget));
}

/* -------------------------------------------------------------- lifecycle */

static void
rpe_export_dialog_dispose (GObject *object)
{
  RpeExportDialog *self = RPE_EXPORT_DIALOG (object);

  self->disposed = TRUE;
  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  if (self->gif_frame_cancellable != NULL)
    g_cancellable_cancel (self->gif_frame_cancellable);
  if (self->chooser != NULL)
    {
      gtk_native_dialog_destroy (GTK_NATIVE_DIALOG (self->chooser));
      g_clear_object (&self->chooser);
    }
  G_OBJECT_CLASS (rpe_export_dialog_parent_class)->dispose (object);
}

static void
rpe_export_dialog_finalize (GObject *object)
{
  RpeExportDialog *self = RPE_EXPORT_DIALOG (object);

  g_clear_object (&self->cancellable);
  g_clear_object (&self->gif_frame_cancellable);
  g_clear_pointer (&self->gif_frame, rpe_figure_bundle_unref);
  g_clear_pointer (&self->shown, rpe_figure_bundle_unref);
  g_clear_pointer (&self->bundle, rpe_figure_bundle_unref);
  g_free (self->path);
  g_free (self->error);
  if (self->sweep_destroy != NULL && self->sweep_data != NULL)
    self->sweep_destroy (self->sweep_data);
  G_OBJECT_CLASS (rpe_export_dialog_parent_class)->finalize (object);
}

static void
rpe_export_dialog_class_init (RpeExportDialogClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = rpe_export_dialog_dispose;
  object_class->finalize = rpe_export_dialog_finalize;

  /**
   * RpeExportDialog::exported:
   * @path: the file written
   */
  signals[SIGNAL_EXPORTED] =
    g_signal_new ("exported", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_STRING);
  /**
   * RpeExportDialog::finished:
   * @ok: TRUE when the file was written
   */
  signals[SIGNAL_FINISHED] =
    g_signal_new ("finished", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_BOOLEAN);
  /**
   * RpeExportDialog::progress:
   * @done: frames written of an animated sweep
   * @frames: all its frames
   */
  signals[SIGNAL_PROGRESS] =
    g_signal_new ("progress", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 2, G_TYPE_UINT, G_TYPE_UINT);

  gtk_widget_class_set_template_from_resource (widget_class, RPE_EXPORT_DIALOG_RESOURCE);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, toasts);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, cancel_button);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, export_button);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, spinner);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, error_revealer);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, error_label);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, format_row);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, preset_row);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, panel_row);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, file_row);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, choose_button);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, size_group);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, look_group);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, width_row);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, height_row);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, dpi_row);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, width_spin);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, height_spin);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, dpi_spin);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, title_row);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, colormap_row);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, scale_row);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, transform_row);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, transform_switch);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, xlog_row);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, ylog_row);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, xlog_switch);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, ylog_switch);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, preview_label);
  gtk_widget_class_bind_template_child (widget_class, RpeExportDialog, preview);

  gtk_widget_class_install_action (widget_class, "export.cancel", NULL, action_cancel);
  gtk_widget_class_install_action (widget_class, "export.start", NULL, action_export);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "export.cancel", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Return, GDK_CONTROL_MASK, "export.start", NULL);
}

static void
rpe_export_dialog_init (RpeExportDialog *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->format = RPE_EXPORT_PNG;
  self->gif_index = G_MAXUINT;
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (self->preview), preview_draw, self, NULL);
  g_signal_connect (self->export_button, "clicked", G_CALLBACK (export_clicked), self);
  g_signal_connect (self->cancel_button, "clicked", G_CALLBACK (cancel_clicked), self);
  g_signal_connect (self->choose_button, "clicked", G_CALLBACK (choose_clicked), self);
}

static void
setup (RpeExportDialog *self)
{
  RpeFigure *fig = &self->bundle->fig;
  g_autoptr (GtkStringList) formats = gtk_string_list_new (NULL);
  g_autoptr (GtkStringList) cmaps = gtk_string_list_new (NULL);
  g_autoptr (GtkStringList) scales = gtk_string_list_new (NULL);
  gboolean heatmaps = fig->kind != RPE_FIGURE_CURVES;
  double w, h;

  self->updating = TRUE;
  self->formats[self->n_formats++] = RPE_EXPORT_PNG;
  self->formats[self->n_formats++] = RPE_EXPORT_SVG;
  self->formats[self->n_formats++] = RPE_EXPORT_PDF;
  if (fig->table != NULL)   /* curves, and figures with a table of their numbers (Outputs) */
    self->formats[self->n_formats++] = RPE_EXPORT_CSV;
  if (heatmaps)
    self->formats[self->n_formats++] = RPE_EXPORT_NPY;
  for (guint i = 0; i < self->n_formats; i++)
    gtk_string_list_append (formats, format_label (self->formats[i]));
  adw_combo_row_set_model (self->format_row, G_LIST_MODEL (formats));

  gtk_string_list_append (cmaps, _("As in the view"));
  for (guint i = 0; i < RPE_COLORMAP_N_MAPS; i++)
    gtk_string_list_append (cmaps, rpe_colormap_get_name (rpe_colormap_get (i)));
  adw_combo_row_set_model (self->colormap_row, G_LIST_MODEL (cmaps));
  gtk_widget_set_visible (GTK_WIDGET (self->colormap_row), heatmaps);

  self->scales[self->n_scales++] = RPE_EXPORT_SCALE_AS_VIEW;
  gtk_string_list_append (scales, _("As in the view"));
  if (fig->kind == RPE_FIGURE_GRID)
    {
      self->scales[self->n_scales++] = RPE_EXPORT_SCALE_SHARED;
      gtk_string_list_append (scales, _("One scale shared by the cells"));
      self->scales[self->n_scales++] = RPE_EXPORT_SCALE_PER_CELL;
      gtk_string_list_append (scales, _("Each cell its own scale"));
    }
  if (heatmaps)
    {
      self->scales[self->n_scales++] = RPE_EXPORT_SCALE_LINEAR;
      gtk_string_list_append (scales, _("Linear: [min, max]"));
      self->scales[self->n_scales++] = RPE_EXPORT_SCALE_SYMMETRIC;
      gtk_string_list_append (scales, _("Symmetric: [−a, a], 0 at the centre"));
    }
  adw_combo_row_set_model (self->scale_row, G_LIST_MODEL (scales));
  {
    g_autoptr (GtkStringList) presets = gtk_string_list_new (NULL);
    g_autoptr (GtkStringList) panels = gtk_string_list_new (NULL);

    /* in the order of RpeExportPreset */
    gtk_string_list_append (presets, _("Custom size"));
    gtk_string_list_append (presets, _("Paper column: 3.25 in wide, 8 pt text"));
    gtk_string_list_append (presets, _("Page width: 6.75 in wide, 9 pt text"));
    gtk_string_list_append (presets, _("Slide: 13.333 × 7.5 in, 20 pt text"));
    adw_combo_row_set_model (self->preset_row, G_LIST_MODEL (presets));
    gtk_string_list_append (panels, _("All panels"));
    for (gsize i = 0; fig->kind == RPE_FIGURE_CURVES && i < fig->n_plots; i++)
      {
        g_autofree char *plain = rpe_text_plain (fig->plots[i].title != NULL ? fig->plots[i].title : "");
        g_autofree char *item = g_strdup_printf (_("Panel %zu alone: %s"), (size_t) i + 1, plain);

        gtk_string_list_append (panels, item);
      }
    adw_combo_row_set_model (self->panel_row, G_LIST_MODEL (panels));
    gtk_widget_set_visible (GTK_WIDGET (self->panel_row), fig->kind == RPE_FIGURE_CURVES && fig->n_plots > 1);
  }
  gtk_widget_set_visible (GTK_WIDGET (self->scale_row), heatmaps);
  gtk_widget_set_visible (self->transform_row, self->bundle->has_attention);
  gtk_widget_set_visible (self->xlog_row, !heatmaps);
  gtk_widget_set_visible (self->ylog_row, !heatmaps);
  if (!heatmaps && fig->n_plots > 0)
    {
      gtk_switch_set_active (self->xlog_switch, fig->plots[0].x_log);
      gtk_switch_set_active (self->ylog_switch, fig->plots[0].y_log);
      adw_action_row_set_subtitle (ADW_ACTION_ROW (self->xlog_row), _("Untouched: each plot as in the view"));
      adw_action_row_set_subtitle (ADW_ACTION_ROW (self->ylog_row), _("Untouched: each plot as in the view"));
    }
  gtk_editable_set_text (GTK_EDITABLE (self->title_row), fig->title != NULL ? fig->title : "");

  default_size (self, RPE_EXPORT_PNG, 150.0, &w, &h);
  gtk_adjustment_set_upper (gtk_spin_button_get_adjustment (self->width_spin), 20000);
  gtk_adjustment_set_upper (gtk_spin_button_get_adjustment (self->height_spin), 20000);
  gtk_spin_button_set_value (self->width_spin, w);
  gtk_spin_button_set_value (self->height_spin, h);
  self->updating = FALSE;
  sync_format_controls (self, RPE_EXPORT_PNG);

  g_signal_connect (self->format_row, "notify::selected", G_CALLBACK (format_selected), self);
  g_signal_connect_swapped (self->colormap_row, "notify::selected", G_CALLBACK (option_changed), self);
  g_signal_connect_swapped (self->preset_row, "notify::selected", G_CALLBACK (preset_selected), self);
  g_signal_connect_swapped (self->panel_row, "notify::selected", G_CALLBACK (preset_selected), self);
  g_signal_connect_swapped (self->scale_row, "notify::selected", G_CALLBACK (option_changed), self);
  g_signal_connect_swapped (self->title_row, "changed", G_CALLBACK (option_changed), self);
  g_signal_connect_swapped (self->transform_switch, "notify::active", G_CALLBACK (option_changed), self);
  g_signal_connect_swapped (self->xlog_switch, "notify::active", G_CALLBACK (xlog_changed), self);
  g_signal_connect_swapped (self->ylog_switch, "notify::active", G_CALLBACK (ylog_changed), self);
  g_signal_connect_swapped (self->width_spin, "value-changed", G_CALLBACK (size_changed), self);
  g_signal_connect_swapped (self->height_spin, "value-changed", G_CALLBACK (size_changed), self);
  g_signal_connect_swapped (self->dpi_spin, "value-changed", G_CALLBACK (size_changed), self);
  update_file_row (self);
  update_preview (self);
}

RpeExportDialog *
rpe_export_dialog_new (GtkWindow       *parent,
                       RpeFigureBundle *bundle)
{
  RpeExportDialog *self;

  g_return_val_if_fail (bundle != NULL, NULL);
  self = g_object_new (RPE_TYPE_EXPORT_DIALOG, "transient-for", parent, NULL);
  self->bundle = rpe_figure_bundle_ref (bundle);
  setup (self);
  return self;
}

void
rpe_export_dialog_set_path (RpeExportDialog *self,
                            const char      *path)
{
  RpeExportFormat format;

  g_return_if_fail (RPE_IS_EXPORT_DIALOG (self));
  g_free (self->path);
  self->path = g_strdup (path);
  /* a known extension picks the format, if this figure offers it */
  if (path != NULL && self->gif_index != G_MAXUINT && (g_str_has_suffix (path, ".gif") || g_str_has_suffix (path, ".GIF")))
    adw_combo_row_set_selected (self->format_row, self->gif_index);
  else if (path != NULL && rpe_export_format_from_path (path, &format))
    for (guint i = 0; i < self->n_formats; i++)
      if (self->formats[i] == format)
        {
          adw_combo_row_set_selected (self->format_row, i);
          break;
        }
  if (self->path != NULL)
    {
      char *fixed = path_with_extension_gif (self->path, self->gif, self->format);

      g_free (self->path);
      self->path = fixed;
    }
  update_file_row (self);
}

const char *
rpe_export_dialog_get_path (RpeExportDialog *self)
{
  g_return_val_if_fail (RPE_IS_EXPORT_DIALOG (self), NULL);
  return self->path;
}

void
rpe_export_dialog_set_format (RpeExportDialog *self,
                              RpeExportFormat  format)
{
  g_return_if_fail (RPE_IS_EXPORT_DIALOG (self));
  for (guint i = 0; i < self->n_formats; i++)
    if (self->formats[i] == format)
      adw_combo_row_set_selected (self->format_row, i);
}

void
rpe_export_dialog_set_size (RpeExportDialog     *self,
                            const RpeExportSize *size)
{
  g_return_if_fail (RPE_IS_EXPORT_DIALOG (self));
  g_return_if_fail (size != NULL);
  if (size->width > 0)
    gtk_spin_button_set_value (self->width_spin, size->width);
  if (size->height > 0)
    gtk_spin_button_set_value (self->height_spin, size->height);
  if (size->dpi > 0)
    gtk_spin_button_set_value (self->dpi_spin, size->dpi);
}

RpeExportFormat
rpe_export_dialog_get_format (RpeExportDialog *self)
{
  g_return_val_if_fail (RPE_IS_EXPORT_DIALOG (self), RPE_EXPORT_PNG);
  return self->format;
}

const char *
rpe_export_dialog_get_error (RpeExportDialog *self)
{
  g_return_val_if_fail (RPE_IS_EXPORT_DIALOG (self), NULL);
  return self->error;
}

GtkWidget *
rpe_export_dialog_get_preview (RpeExportDialog *self)
{
  g_return_val_if_fail (RPE_IS_EXPORT_DIALOG (self), NULL);
  return self->preview;
}

void
rpe_export_dialog_set_preset (RpeExportDialog *self,
                              RpeExportPreset  preset)
{
  g_return_if_fail (RPE_IS_EXPORT_DIALOG (self));
  adw_combo_row_set_selected (self->preset_row, (guint) preset);
}

void
rpe_export_dialog_set_panel (RpeExportDialog *self,
                             guint            panel)
{
  g_return_if_fail (RPE_IS_EXPORT_DIALOG (self));
  adw_combo_row_set_selected (self->panel_row, panel);
}

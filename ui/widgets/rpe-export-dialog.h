/* rpe-export-dialog.h: the Export dialog of the explorer's views, and the
 * figure bundles the views hand to it.
 *
 * RpeFigureBundle  an RpeFigure (rpe-export.h) together with everything it
 *                  points at: the view's result (a reference on it), the
 *                  per-cell descriptions, titles and series.  Immutable once
 *                  built and atomically refcounted, so an export can run on a
 *                  worker while the view moves on to newer results.
 * RpeExportOptions what the dialog lets the user change on top of the view's
 *                  figure (colour map, title, scale, attention transform,
 *                  log axes); rpe_figure_bundle_with_options derives a new
 *                  bundle from them.
 * RpeExportDialog  a modal window: format, size and DPI, colour map, title,
 *                  scale, transform, a live preview (rpe_figure_render), the
 *                  target file (GtkFileChooserNative) and Export / Cancel; the
 *                  export runs on a worker (GTask + GCancellable,
 *                  rpe_export_figure_cancellable) and writes atomically.
 */
#pragma once

#include <adwaita.h>

#include "rpe-export.h"

G_BEGIN_DECLS

/* ------------------------------------------------------------ bundles */

typedef struct _RpeFigureBundle RpeFigureBundle;

struct _RpeFigureBundle
{
  RpeFigure  fig;         /* points into the bundle's own storage */
  /* What the figure shows, for the dialog's choices: */
  gboolean   has_attention;    /* heatmaps of attention weights (>= 0): the transform applies */
  char      *default_name;     /* a file name without extension, e.g. "templates-h0" */
  /*< private >*/
  GPtrArray *owned;            /* (pointer, destroy) pairs released with the bundle */
};

RpeFigureBundle *rpe_figure_bundle_new     (RpeFigureKind    kind);
RpeFigureBundle *rpe_figure_bundle_ref     (RpeFigureBundle *bundle);
void             rpe_figure_bundle_unref   (RpeFigureBundle *bundle);
/* Keeps data alive as long as the bundle (destroy is called on release; may be
 * NULL to only remember it); returns data. */
gpointer         rpe_figure_bundle_keep    (RpeFigureBundle *bundle,
                                            gpointer         data,
                                            GDestroyNotify   destroy);
/* A copy of s owned by the bundle (NULL for NULL). */
const char      *rpe_figure_bundle_strdup  (RpeFigureBundle *bundle,
                                            const char      *s);
const char      *rpe_figure_bundle_printf  (RpeFigureBundle *bundle,
                                            const char      *format,
                                            ...) G_GNUC_PRINTF (2, 3);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RpeFigureBundle, rpe_figure_bundle_unref)

/* ------------------------------------------------------------ options */

typedef enum
{
  RPE_EXPORT_SCALE_AS_VIEW,     /* keep the view's scales */
  RPE_EXPORT_SCALE_SHARED,      /* grid: one scale over all cells */
  RPE_EXPORT_SCALE_PER_CELL,    /* grid: each cell its own scale and colour bar */
  RPE_EXPORT_SCALE_LINEAR,      /* heatmaps: [min, max] */
  RPE_EXPORT_SCALE_SYMMETRIC,   /* heatmaps: [-a, a], 0 at the diverging map's centre */
} RpeExportScale;

typedef enum
{
  RPE_EXPORT_AXIS_AS_VIEW,
  RPE_EXPORT_AXIS_LINEAR,
  RPE_EXPORT_AXIS_LOG,
} RpeExportAxis;

typedef struct
{
  const RpeColormap *colormap;          /* NULL: as the view */
  const char        *title;             /* NULL: the view's title; "" no title */
  RpeExportScale     scale;
  gboolean           attention_transform; /* the SPE paper's display transform (attention figures) */
  RpeExportAxis      x_axis;            /* curves */
  RpeExportAxis      y_axis;
  double             text_size;         /* > 0: text size in points (a preset's); 0: automatic */
  int                panel;             /* curves with several plots: 0 all, k > 0 plot k - 1 alone */
} RpeExportOptions;



/* Zeroes: everything as the view shows it. */
void             rpe_export_options_init       (RpeExportOptions       *options);
/* A new bundle: the figure of base with the options applied (holds a reference on base). */
RpeFigureBundle *rpe_figure_bundle_with_options (RpeFigureBundle        *base,
                                                 const RpeExportOptions *options);

/* ------------------------------------------------------------- dialog */

#define RPE_TYPE_EXPORT_DIALOG (rpe_export_dialog_get_type ())
G_DECLARE_FINAL_TYPE (RpeExportDialog, rpe_export_dialog, RPE, EXPORT_DIALOG, AdwWindow)

/* A modal dialog over parent exporting bundle (a reference is taken). */
RpeExportDialog *rpe_export_dialog_new            (GtkWindow        *parent,
                                                   RpeFigureBundle  *bundle);
/* The target file (the file chooser sets it; tests too). */
void             rpe_export_dialog_set_path       (RpeExportDialog  *self,
                                                   const char       *path);
const char      *rpe_export_dialog_get_path       (RpeExportDialog  *self);
void             rpe_export_dialog_set_format     (RpeExportDialog  *self,
                                                   RpeExportFormat   format);
RpeExportFormat  rpe_export_dialog_get_format     (RpeExportDialog  *self);
/* Sets the size controls (in the units of the current format). */
void             rpe_export_dialog_set_size       (RpeExportDialog     *self,
                                                   const RpeExportSize *size);
/* Picks a size preset (as the Preset row does): the size controls take its size in the
 * current format's units, the text its size. */
void             rpe_export_dialog_set_preset     (RpeExportDialog  *self,
                                                   RpeExportPreset   preset);
/* Curves with several panels: 0 all, k > 0 panel k alone. */
void             rpe_export_dialog_set_panel      (RpeExportDialog  *self,
                                                   guint             panel);
/* The options and size as the controls set them now. */
void             rpe_export_dialog_get_options    (RpeExportDialog  *self,
                                                   RpeExportOptions *options,
                                                   RpeExportSize    *size);
/* Starts the export (as the Export button does); "finished" follows. */
void             rpe_export_dialog_start          (RpeExportDialog  *self);
/* Cancels a running export (the target is left untouched). */
void             rpe_export_dialog_cancel_export  (RpeExportDialog  *self);
gboolean         rpe_export_dialog_is_exporting   (RpeExportDialog  *self);
/* The reason of the last failure shown in the dialog (NULL if none). */
const char      *rpe_export_dialog_get_error      (RpeExportDialog  *self);
/* The preview area (for screenshots and tests). */
GtkWidget       *rpe_export_dialog_get_preview    (RpeExportDialog  *self);

/* The export of a bundle with options, synchronously (the window API and tests). */
gboolean         rpe_export_bundle                (RpeFigureBundle        *bundle,
                                                   const RpeExportOptions *options,
                                                   RpeExportFormat         format,
                                                   const RpeExportSize    *size,
                                                   const char             *path,
                                                   GCancellable           *cancellable,
                                                   GError                **error);

G_END_DECLS

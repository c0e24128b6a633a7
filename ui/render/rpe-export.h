/* rpe-export.h: publication figures: one description, rendered on screen or to
 * PNG / SVG / PDF files, plus the data as CSV (curves) or .npy (arrays).
 * GTK-free (GLib for GError and GCancellable only).
 *
 * A figure is a tagged description pointing at caller-owned data:
 *   HEATMAP  one heatmap with axes, colour bar, title, N_train marker;
 *   GRID     small multiples (e.g. the D templates of a head), per-cell titles,
 *            a shared or per-cell scale;
 *   COMPARE  2 or 3 heatmaps side by side (e.g. exact | SPE estimate | difference);
 *            with share_scale the first two share one range; with plots (n_plots > 0)
 *            the heatmaps are stacked as full-width strips (their own aspect) above
 *            a row of the line plots (the Outputs view);
 *   CURVES   1 .. n line plots in a grid (e.g. the four extrapolation metrics).
 *
 * rpe_figure_render draws it on any cairo_t (the widgets and the exporter share
 * it, so the window and a headless export are identical).  Sizes are in points
 * (1/72 in) for the vector formats; PNG is rendered at the same layout scaled to
 * pixels, so text and lines keep their proportions at any DPI.
 *
 * Writing is atomic: a temporary file in the target's directory, fsync, rename.
 * A failure or a cancellation leaves no partial file and keeps an existing one.
 */
#pragma once

#include <gio/gio.h>

#include "rpe-curve-render.h"
#include "rpe-curves.h"
#include "rpe-plot-render.h"

G_BEGIN_DECLS

typedef enum
{
  RPE_EXPORT_PNG,
  RPE_EXPORT_SVG,
  RPE_EXPORT_PDF,
  RPE_EXPORT_CSV,   /* CURVES with a table only */
  RPE_EXPORT_NPY,   /* the raw float32 arrays of heatmap figures */
} RpeExportFormat;

typedef enum
{
  RPE_FIGURE_HEATMAP,
  RPE_FIGURE_GRID,
  RPE_FIGURE_COMPARE,
  RPE_FIGURE_CURVES,
} RpeFigureKind;

#define RPE_FIGURE_MAX_PANELS 4

typedef struct
{
  RpeFigureKind        kind;
  const char          *title;         /* figure title (above everything); NULL: none */
  /* HEATMAP */
  RpeHeatmapData       heatmap;
  /* GRID */
  RpeHeatmapGrid       grid;
  /* COMPARE: n_panels heatmaps, each with its own title and colour bar */
  RpeHeatmapData       panels[RPE_FIGURE_MAX_PANELS];
  size_t               n_panels;
  gboolean             share_scale;   /* panels 0 and 1 share one range */
  /* CURVES: n_plots plots, n_plot_columns per row (0: all in one row up to 2, then 2) */
  const RpeCurvePlot  *plots;
  size_t               n_plots;
  size_t               n_plot_columns;
  const RpeCurveTable *table;         /* the data written by RPE_EXPORT_CSV (may be NULL; any kind) */
  /* Every part */
  double               foreground[4]; /* text and frames (default black) */
  double               background[4]; /* default opaque white; alpha 0: transparent */
  /* Added for publication figures (zero in rpe_figure_init): */
  double               text_size;     /* > 0: the text size of ticks and labels in points (titles
                                       * 15 % larger); 0: automatic from each part's size */
} RpeFigure;

/* The layout of a COMPARE figure: where each panel's image goes (user units of
 * a figure drawn in (0, 0, width, height)); their tops and heights are equal (and their
 * widths, for panels of one shape).
 * Returns the number of panels placed (0: nothing to draw). */
size_t    rpe_figure_compare_images  (cairo_t         *cr,
                                      const RpeFigure *fig,
                                      double           width,
                                      double           height,
                                      RpePlotRect      images[RPE_FIGURE_MAX_PANELS]);

typedef struct
{
  double width;    /* SVG/PDF: points; PNG: pixels.  0: the figure's default size */
  double height;   /* 0: from width and the default aspect ratio */
  double dpi;      /* PNG: pixels per inch.  With width/height in pixels it sets the text
                    * scale (layout size = pixels * 72 / dpi); without, pixels = points * dpi / 72.
                    * 0: 150 */
  /* Added for presets (zero: as before): */
  double text_size;  /* > 0: text size in points (overrides the figure's) */
  double width_pt;   /* > 0: the layout width in points whatever the format (a preset; width,
                      * when given, still wins) */
  double height_pt;  /* > 0: the layout height in points (0: from width_pt and the figure's
                      * default aspect ratio) */
} RpeExportSize;

typedef enum
{
  RPE_EXPORT_PRESET_NONE,
  RPE_EXPORT_PRESET_COLUMN,   /* one column of a two-column paper: 3.25 in wide, 8 pt text */
  RPE_EXPORT_PRESET_PAGE,     /* the text width of a page: 6.75 in, 9 pt text */
  RPE_EXPORT_PRESET_SLIDE,    /* a 16:9 slide: 13.333 x 7.5 in, 20 pt text */
} RpeExportPreset;

/* The preset of a name ("column", "page", "slide"; "none" or NULL: none); FALSE if unknown. */
gboolean  rpe_export_preset_from_name (const char      *name,
                                       RpeExportPreset *preset);
const char *rpe_export_preset_name   (RpeExportPreset  preset);
/* Fills size's width_pt, height_pt and text_size for the preset (others untouched). */
void      rpe_export_preset_apply    (RpeExportPreset  preset,
                                      RpeExportSize   *size);

/* Zeroes and sets the defaults: black on opaque white. */
void      rpe_figure_init            (RpeFigure       *fig,
                                      RpeFigureKind    kind);
/* The default size in points of the figure (e.g. 6.5 x 4.5 in for curves). */
void      rpe_figure_default_size    (const RpeFigure *fig,
                                      double          *width_pt,
                                      double          *height_pt);
/* Draws the figure in (0, 0, width, height) of cr's user space.  Returns FALSE
 * when it has nothing to draw (missing data). */
gboolean  rpe_figure_render          (cairo_t         *cr,
                                      const RpeFigure *fig,
                                      double           width,
                                      double           height);

/* The format of a file name's extension (.png .svg .pdf .csv .npy, any case). */
gboolean  rpe_export_format_from_path (const char      *path,
                                       RpeExportFormat *format);
const char *rpe_export_format_extension (RpeExportFormat format);

/* Resolves size for the format: the layout size in points and, for PNG, the
 * pixel size.  Errors (RPE_ERROR_INVALID_ARGUMENT) for sizes out of range
 * (1 .. 20000 px, 1 .. 14400 pt, dpi 10 .. 2400). */
gboolean  rpe_export_resolve_size    (const RpeFigure     *fig,
                                      RpeExportFormat      format,
                                      const RpeExportSize *size,
                                      double              *width_pt,
                                      double              *height_pt,
                                      int                 *width_px,
                                      int                 *height_px,
                                      GError             **error);

/* The memory a width x height PNG holds at once while it is drawn and written: its surface and
 * a heatmap image of at most its size (overflow-checked; FALSE when it overflows).  The
 * command line checks it against the budget before computing the figure. */
gboolean rpe_export_png_bytes (int width, int height, size_t *bytes);
/* The same for an SVG or PDF page of width_pt x height_pt points: the heatmap images embedded in
 * it, which cairo holds with its own encoded copy until the page ends; 0 for curves.  FALSE for
 * an absurd size.  A figure whose maps are set counts each image as the renderer sizes it (every
 * cell, at least 2 pixels a point, RPE_PLOT_MAX_IMAGE_SIDE a side); a probe without data counts
 * 2 pixels a point.  rpe_export_figure checks it with the maps, beside what is held. */
gboolean rpe_export_vector_bytes (const RpeFigure *fig, double width_pt, double height_pt, size_t *bytes);

/* Writes the figure to path atomically.  size may be NULL (defaults).  NPY writes
 * the heatmap (rows, cols), a grid or comparison (n, rows, cols) when the shapes
 * agree; CSV writes fig->table.  Errors are in RPE_ERROR (INVALID_ARGUMENT for a
 * figure or size that cannot be exported, IO for the file system, NO_MEMORY). */
gboolean  rpe_export_figure          (const RpeFigure     *fig,
                                      RpeExportFormat      format,
                                      const RpeExportSize *size,
                                      const char          *path,
                                      GError             **error);
/* The same, checking cancellable (may be NULL) between the stages; a cancelled
 * export fails with G_IO_ERROR_CANCELLED and leaves the target untouched. */
gboolean  rpe_export_figure_cancellable (const RpeFigure     *fig,
                                         RpeExportFormat      format,
                                         const RpeExportSize *size,
                                         const char          *path,
                                         GCancellable        *cancellable,
                                         GError             **error);

G_END_DECLS

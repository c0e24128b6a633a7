/* rpe-gif.h: animated GIFs of figures (giflib), written atomically.
 *
 * Frames are Cairo image surfaces of one size, added one at a time (nothing but
 * the current frame is held); each is quantised to its own 256-colour table
 * (giflib's median cut, GifQuantizeBuffer), composited over white where it is
 * not opaque.  The file loops forever (the NETSCAPE2.0 extension).  It is
 * written to a temporary file beside the target and renamed on success; a
 * failure or an abandoned writer leaves no partial file and keeps an existing
 * one.  Errors are in RPE_ERROR (IO, INVALID_ARGUMENT, NO_MEMORY).
 */
#pragma once

#include <cairo.h>
#include <gio/gio.h>

#include "rpe-export.h"

G_BEGIN_DECLS

typedef struct _RpeGifWriter RpeGifWriter;

/* The largest number of frames a writer takes. */
#define RPE_GIF_MAX_FRAMES 1000

/* A writer of a width x height animation (1 .. 20000 pixels a side) to path, each frame
 * shown delay_cs hundredths of a second (1 .. 6000). */
RpeGifWriter *rpe_gif_writer_new    (const char       *path,
                                     int               width,
                                     int               height,
                                     int               delay_cs,
                                     GError          **error);
/* The memory one width x height frame holds at once, drawn and then added (overflow-checked;
 * FALSE when it overflows): checked against the budget before a sweep computes anything. */
gboolean rpe_gif_frame_bytes (int width, int height, size_t *bytes);
/* Appends a frame (an image surface of the writer's size). */
gboolean      rpe_gif_writer_add    (RpeGifWriter     *writer,
                                     cairo_surface_t  *frame,
                                     GError          **error);
/* Finishes the file and puts it in place; frees the writer in every case. */
gboolean      rpe_gif_writer_finish (RpeGifWriter     *writer,
                                     GError          **error);
/* Abandons the file (the target is untouched); frees the writer.  NULL is fine. */
void          rpe_gif_writer_abort  (RpeGifWriter     *writer);
/* How many frames were added. */
guint         rpe_gif_writer_n_frames (RpeGifWriter   *writer);

/* ---- Sweeps: one implementation for `rpe export --sweep` and the Export dialog ---- */

typedef enum
{
  RPE_SWEEP_REALIZATIONS,   /* R, in geometric steps (the estimator's error goes like 1/sqrt(R)) */
  RPE_SWEEP_LENGTH,         /* N, linear steps */
  RPE_SWEEP_SEED,           /* the draw's seed, linear steps */
} RpeSweepParam;

/* "realizations", "length", "seed" -> param; FALSE for anything else. */
gboolean         rpe_sweep_param_from_name (const char      *name,
                                            RpeSweepParam   *param);
/* The value of param at frame k of frames (>= 2) going from `from` to `to` (both >= 1, or
 * >= 0 for seeds): realizations round(exp(lerp(log from, log to))), the others round(lerp). */
gint64           rpe_sweep_value           (RpeSweepParam    param,
                                            gint64           from,
                                            gint64           to,
                                            guint            k,
                                            guint            frames);
/* One frame: the figure drawn as its PNG of that size would be (size in PNG units; its
 * text size, when > 0, overrides the figure's), on a transparent ARGB32 surface. */
cairo_surface_t *rpe_gif_render_frame      (const RpeFigure     *fig,
                                            const RpeExportSize *size,
                                            GError             **error);

G_END_DECLS

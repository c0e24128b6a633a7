/* rpe-text.h: the text of RPE Studio's figures, laid out by Pango (GTK-free).
 *
 * Every renderer draws its words through these calls, so that mathematical text
 * comes out right everywhere: combining marks (P̂, P̃) are positioned by the
 * shaper, subscripts and superscripts are real (N<sub>train</sub>), and the PDF
 * and SVG exports carry the characters (a PDF's text extracts as written).
 *
 * Strings are Pango markup (<sub>, <sup>, <i>, <b>, entities); a string that is
 * not valid markup (e.g. a user's title "a < b & c") is shown as plain text.
 * The font is the one selected on cr with the Cairo "toy" calls
 * (cairo_select_font_face: family and weight; cairo_set_font_size: the size in
 * user units), so the renderers keep their font state on cr as before.  The
 * layout uses the figure font options of rpe_plot_use_figure_fonts (grey
 * antialiasing, no hinting, unhinted metrics, unrounded glyph positions): the
 * window, the exporter and the headless tool lay out and rasterise text
 * identically, and a layout scales exactly with the user-space matrix.
 */
#pragma once

#include <stdbool.h>

#include <cairo.h>

/* The advance width of text at cr's current font. */
double rpe_text_width  (cairo_t    *cr,
                        const char *text);

/* The font's ascent and descent (user units) at cr's current font: the box text
 * is aligned in by rpe_text_show, whatever sub/superscripts it holds. */
void   rpe_text_metrics (cairo_t *cr,
                         double  *ascent,
                         double  *descent);

/* Draws text with its box anchored at (x, y): xalign 0 left, 0.5 centre, 1 right
 * of x; yalign 0 top, 0.5 middle, 1 bottom at y (the box is the font's ascent +
 * descent).  Uses cr's source; leaves cr's path empty. */
void   rpe_text_show   (cairo_t    *cr,
                        const char *text,
                        double      x,
                        double      y,
                        double      xalign,
                        double      yalign);

/* The smallest fraction of its size rpe_text_show_fitted shrinks a text to. */
#define RPE_TEXT_MIN_SCALE 0.6

/* Draws a line of text (a title) centred at x where it fits, moved to stay inside [left,
 * right]; a text wider than that is shrunk to fit, down to RPE_TEXT_MIN_SCALE of cr's font
 * size, and beyond that cut short with "…" (its plain characters): never drawn outside
 * [left, right].  yalign as rpe_text_show.  Leaves cr's font as it found it. */
void   rpe_text_show_fitted (cairo_t    *cr,
                             const char *text,
                             double      x,
                             double      y,
                             double      left,
                             double      right,
                             double      yalign);

/* The plain characters of text (markup removed), newly allocated (free()). */
char  *rpe_text_plain  (const char *text);

/* Releases the fonts the figure text holds (this thread's Pango font map), for a
 * leak checker's clean exit before cairo_debug_reset_static_data. */
void   rpe_text_release_fonts (void);

/* rpe-text.c: figure text through PangoCairo (see rpe-text.h). */
#include "config.h"

#include "rpe-text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <pango/pangocairo.h>

#define FALLBACK_FAMILY "Sans"

/* The family, weight and size of cr's current (toy) font. */
static PangoFontDescription *
font_of (cairo_t *cr)
{
  PangoFontDescription *desc = pango_font_description_new ();
  cairo_font_face_t *face = cairo_get_font_face (cr);
  cairo_matrix_t m;
  const char *family = FALLBACK_FAMILY;
  double size;

  cairo_get_font_matrix (cr, &m);
  size = hypot (m.yx, m.yy);
  if (!(size > 0.0) || !isfinite (size))
    size = 10.0;
  if (face != NULL && cairo_font_face_get_type (face) == CAIRO_FONT_TYPE_TOY)
    {
      const char *f = cairo_toy_font_face_get_family (face);

      if (f != NULL && f[0] != '\0')
        family = f;
      if (cairo_toy_font_face_get_weight (face) == CAIRO_FONT_WEIGHT_BOLD)
        pango_font_description_set_weight (desc, PANGO_WEIGHT_BOLD);
      if (cairo_toy_font_face_get_slant (face) == CAIRO_FONT_SLANT_ITALIC)
        pango_font_description_set_style (desc, PANGO_STYLE_ITALIC);
    }
  pango_font_description_set_family (desc, family);
  pango_font_description_set_size (desc, (int) lround (size * PANGO_SCALE));
  return desc;
}

static PangoContext *
context_for (cairo_t *cr)
{
  PangoContext *ctx = pango_cairo_create_context (cr);
  cairo_font_options_t *options = cairo_font_options_create ();

  /* The options of rpe_plot_use_figure_fonts, whatever the surface or GTK would add. */
  cairo_font_options_set_antialias (options, CAIRO_ANTIALIAS_GRAY);
  cairo_font_options_set_hint_style (options, CAIRO_HINT_STYLE_NONE);
  cairo_font_options_set_hint_metrics (options, CAIRO_HINT_METRICS_OFF);
  cairo_font_options_set_subpixel_order (options, CAIRO_SUBPIXEL_ORDER_DEFAULT);
  pango_cairo_context_set_font_options (ctx, options);
  cairo_font_options_destroy (options);
  pango_context_set_round_glyph_positions (ctx, FALSE);
  /* sizes in points = user units */
  pango_cairo_context_set_resolution (ctx, 72.0);
  return ctx;
}

/* <sub> and <sup> as explicit sizes and rises of the base size (Pango's own scale them
 * from the font's OS/2 tables, which come out wrong at a 72 dpi resolution). */
static char *
explicit_scripts (const char *text,
                  double      size)
{
  GString *s = g_string_new (text);
  char sub[96], sup[96];

  if (strstr (text, "<su") == NULL)
    return g_string_free (s, FALSE);
  snprintf (sub, sizeof sub, "<span size=\"%d\" rise=\"%d\">", (int) lround (size * 0.72 * PANGO_SCALE),
            (int) lround (-size * 0.2 * PANGO_SCALE));
  snprintf (sup, sizeof sup, "<span size=\"%d\" rise=\"%d\">", (int) lround (size * 0.72 * PANGO_SCALE),
            (int) lround (size * 0.38 * PANGO_SCALE));
  g_string_replace (s, "<sub>", sub, 0);
  g_string_replace (s, "<sup>", sup, 0);
  g_string_replace (s, "</sub>", "</span>", 0);
  g_string_replace (s, "</sup>", "</span>", 0);
  return g_string_free (s, FALSE);
}

static PangoLayout *
layout_for (cairo_t              *cr,
            PangoContext         *ctx,
            const PangoFontDescription *desc,
            const char           *text)
{
  PangoLayout *layout = pango_layout_new (ctx);

  pango_layout_set_font_description (layout, desc);
  if (text == NULL)
    text = "";
  /* Markup when it parses, else the characters as they are. */
  if (pango_parse_markup (text, -1, 0, NULL, NULL, NULL, NULL))
    {
      char *markup = explicit_scripts (text, (double) pango_font_description_get_size (desc) / PANGO_SCALE);

      pango_layout_set_markup (layout, markup, -1);
      g_free (markup);
    }
  else
    pango_layout_set_text (layout, text, -1);
  (void) cr;
  return layout;
}

double
rpe_text_width (cairo_t    *cr,
                const char *text)
{
  PangoFontDescription *desc;
  PangoContext *ctx;
  PangoLayout *layout;
  PangoRectangle logical;

  if (cr == NULL || text == NULL || text[0] == '\0')
    return 0.0;
  desc = font_of (cr);
  ctx = context_for (cr);
  layout = layout_for (cr, ctx, desc, text);
  pango_layout_get_extents (layout, NULL, &logical);
  g_object_unref (layout);
  g_object_unref (ctx);
  pango_font_description_free (desc);
  return (double) logical.width / PANGO_SCALE;
}

/* The font's ascent and descent from the line box of a plain layout (the context's
 * font metrics come out divided by the user-space scale). */
static void
metrics_of (PangoContext               *ctx,
            const PangoFontDescription *desc,
            double                     *ascent,
            double                     *descent)
{
  PangoLayout *layout = pango_layout_new (ctx);
  PangoRectangle logical;
  int baseline;

  pango_layout_set_font_description (layout, desc);
  pango_layout_set_text (layout, "x", -1);
  pango_layout_get_extents (layout, NULL, &logical);
  baseline = pango_layout_get_baseline (layout);
  *ascent = (double) baseline / PANGO_SCALE;
  *descent = (double) (logical.height - baseline) / PANGO_SCALE;
  g_object_unref (layout);
}

void
rpe_text_metrics (cairo_t *cr,
                  double  *ascent,
                  double  *descent)
{
  PangoFontDescription *desc = font_of (cr);
  PangoContext *ctx = context_for (cr);
  double a, d;

  metrics_of (ctx, desc, &a, &d);
  if (ascent != NULL)
    *ascent = a;
  if (descent != NULL)
    *descent = d;
  g_object_unref (ctx);
  pango_font_description_free (desc);
}

void
rpe_text_show (cairo_t    *cr,
               const char *text,
               double      x,
               double      y,
               double      xalign,
               double      yalign)
{
  PangoFontDescription *desc;
  PangoContext *ctx;
  PangoLayout *layout;
  PangoRectangle logical;
  double ascent, descent, baseline;

  if (cr == NULL || text == NULL || text[0] == '\0')
    return;
  desc = font_of (cr);
  ctx = context_for (cr);
  layout = layout_for (cr, ctx, desc, text);
  metrics_of (ctx, desc, &ascent, &descent);
  pango_layout_get_extents (layout, NULL, &logical);
  baseline = (double) pango_layout_get_baseline (layout) / PANGO_SCALE;
  cairo_new_path (cr);
  cairo_move_to (cr, x - (double) logical.width / PANGO_SCALE * xalign - (double) logical.x / PANGO_SCALE,
                 y + ascent - (ascent + descent) * yalign - baseline);
  pango_cairo_show_layout (cr, layout);
  cairo_new_path (cr);
  g_object_unref (layout);
  g_object_unref (ctx);
  pango_font_description_free (desc);
}

char *
rpe_text_plain (const char *text)
{
  char *plain = NULL;

  if (text == NULL)
    return strdup ("");
  if (pango_parse_markup (text, -1, 0, NULL, &plain, NULL, NULL))
    {
      char *copy = strdup (plain);

      g_free (plain);
      return copy;
    }
  return strdup (text);
}

void
rpe_text_release_fonts (void)
{
  pango_cairo_font_map_set_default (NULL);
}

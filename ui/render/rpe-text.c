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

/* ---- memo of measurements and layouts ----
 *
 * A width, a font's ascent and descent, and a laid-out text are pure functions of the text,
 * cr's toy font (family, weight, slant, font matrix), the linear part of cr's matrix and the
 * font options of cr and of its target (what pango_cairo_create_context reads), the options
 * context_for sets being fixed.  Figures measure and draw the same few strings (tick
 * numbers, titles, labels) again on every redraw, each time a fresh Pango context and
 * layout: this thread's memo keeps the results by all those inputs, so a hit gives exactly
 * what a fresh measure or layout would.  It is emptied when it reaches MEMO_MAX entries. */

#define MEMO_MAX 2048

typedef struct
{
  double       a, b;      /* 'w': width; 'm': ascent, descent; 's': logical x, width */
  double       baseline;  /* 's' */
  PangoLayout *layout;    /* 's': the layout drawn (owned), else NULL */
} MemoValue;

static void
memo_value_free (gpointer data)
{
  MemoValue *v = data;

  if (v->layout != NULL)
    g_object_unref (v->layout);
  g_free (v);
}

static void
memo_table_free (gpointer table)
{
  g_hash_table_destroy (table);
}

static GPrivate memo_private = G_PRIVATE_INIT (memo_table_free);

static GHashTable *
memo_table (void)
{
  GHashTable *table = g_private_get (&memo_private);

  if (table == NULL)
    {
      table = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, memo_value_free);
      g_private_set (&memo_private, table);
    }
  return table;
}

/* The key of a measure of `what` (a kind letter) of text under cr's state: the numbers it
 * depends on as hex digits of their bytes (no printf: this runs for every text drawn), then
 * the family and the text. */
static char *
memo_key (cairo_t    *cr,
          char        what,
          const char *text)
{
  static const char hex[] = "0123456789abcdef";
  cairo_font_face_t *face = cairo_get_font_face (cr);
  cairo_font_options_t *cr_options = cairo_font_options_create ();
  cairo_font_options_t *surface_options = cairo_font_options_create ();
  cairo_matrix_t font, ctm;
  const char *family = "";
  struct
  {
    double        m[8];
    unsigned long options[2];
    int           ints[4];
  } raw;
  const unsigned char *bytes = (const unsigned char *) &raw;
  size_t family_len, text_len;
  char *key, *p;

  memset (&raw, 0, sizeof raw);
  raw.ints[0] = what;
  raw.ints[1] = raw.ints[2] = -1;
  if (face != NULL && cairo_font_face_get_type (face) == CAIRO_FONT_TYPE_TOY)
    {
      family = cairo_toy_font_face_get_family (face);
      raw.ints[1] = cairo_toy_font_face_get_weight (face);
      raw.ints[2] = cairo_toy_font_face_get_slant (face);
    }
  if (family == NULL)
    family = "";
  raw.ints[3] = cairo_surface_get_type (cairo_get_target (cr));
  cairo_get_font_matrix (cr, &font);
  cairo_get_matrix (cr, &ctm);
  raw.m[0] = font.xx; raw.m[1] = font.yx; raw.m[2] = font.xy; raw.m[3] = font.yy;
  raw.m[4] = ctm.xx;  raw.m[5] = ctm.yx;  raw.m[6] = ctm.xy;  raw.m[7] = ctm.yy;
  cairo_get_font_options (cr, cr_options);
  cairo_surface_get_font_options (cairo_get_target (cr), surface_options);
  raw.options[0] = cairo_font_options_hash (cr_options);
  raw.options[1] = cairo_font_options_hash (surface_options);
  cairo_font_options_destroy (cr_options);
  cairo_font_options_destroy (surface_options);

  family_len = strlen (family);
  text_len = strlen (text);
  p = key = g_malloc (2 * sizeof raw + family_len + text_len + 2);
  for (size_t i = 0; i < sizeof raw; i++)
    {
      *p++ = hex[bytes[i] >> 4];
      *p++ = hex[bytes[i] & 15];
    }
  memcpy (p, family, family_len);
  p += family_len;
  *p++ = '\n';   /* not in a family name */
  memcpy (p, text, text_len + 1);
  return key;
}

/* A copy of the entry of key (its layout with a new reference, to unref). */
static bool
memo_get (const char *key,
          MemoValue  *value)
{
  MemoValue *v = g_hash_table_lookup (memo_table (), key);

  if (v == NULL)
    return false;
  *value = *v;
  if (value->layout != NULL)
    g_object_ref (value->layout);
  return true;
}

/* Takes key, and value's layout reference. */
static void
memo_put (char      *key,
          MemoValue  value)
{
  GHashTable *table = memo_table ();

  if (g_hash_table_size (table) >= MEMO_MAX)
    g_hash_table_remove_all (table);
  g_hash_table_replace (table, key, g_memdup2 (&value, sizeof value));
}

double
rpe_text_width (cairo_t    *cr,
                const char *text)
{
  PangoFontDescription *desc;
  PangoContext *ctx;
  PangoLayout *layout;
  PangoRectangle logical;

  MemoValue value;
  char *key;

  if (cr == NULL || text == NULL || text[0] == '\0')
    return 0.0;
  key = memo_key (cr, 'w', text);
  if (memo_get (key, &value))
    {
      g_free (key);
      return value.a;
    }
  desc = font_of (cr);
  ctx = context_for (cr);
  layout = layout_for (cr, ctx, desc, text);
  pango_layout_get_extents (layout, NULL, &logical);
  g_object_unref (layout);
  g_object_unref (ctx);
  pango_font_description_free (desc);
  value.a = (double) logical.width / PANGO_SCALE;
  value.b = value.baseline = 0.0;
  value.layout = NULL;
  memo_put (key, value);
  return value.a;
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

/* metrics_of for cr's font, through the memo; ctx and desc are cr's (NULL: made here). */
static void
metrics_memo (cairo_t                    *cr,
              PangoContext               *ctx,
              const PangoFontDescription *desc,
              double                     *ascent,
              double                     *descent)
{
  char *key = memo_key (cr, 'm', "");
  MemoValue value;

  if (!memo_get (key, &value))
    {
      PangoFontDescription *own_desc = desc == NULL ? font_of (cr) : NULL;
      PangoContext *own_ctx = ctx == NULL ? context_for (cr) : NULL;

      metrics_of (ctx != NULL ? ctx : own_ctx, desc != NULL ? desc : own_desc, &value.a, &value.b);
      value.baseline = 0.0;
      value.layout = NULL;
      if (own_ctx != NULL)
        g_object_unref (own_ctx);
      if (own_desc != NULL)
        pango_font_description_free (own_desc);
      memo_put (key, value);
    }
  else
    g_free (key);
  *ascent = value.a;
  *descent = value.b;
}

void
rpe_text_metrics (cairo_t *cr,
                  double  *ascent,
                  double  *descent)
{
  double a, d;

  metrics_memo (cr, NULL, NULL, &a, &d);
  if (ascent != NULL)
    *ascent = a;
  if (descent != NULL)
    *descent = d;
}

void
rpe_text_show (cairo_t    *cr,
               const char *text,
               double      x,
               double      y,
               double      xalign,
               double      yalign)
{
  MemoValue value;
  double ascent, descent;
  char *key;

  if (cr == NULL || text == NULL || text[0] == '\0')
    return;
  key = memo_key (cr, 's', text);
  if (memo_get (key, &value))
    {
      g_free (key);
      metrics_memo (cr, NULL, NULL, &ascent, &descent);
    }
  else
    {
      PangoFontDescription *desc = font_of (cr);
      PangoContext *ctx = context_for (cr);
      PangoRectangle logical;

      value.layout = layout_for (cr, ctx, desc, text);
      metrics_memo (cr, ctx, desc, &ascent, &descent);
      pango_layout_get_extents (value.layout, NULL, &logical);
      value.a = (double) logical.x / PANGO_SCALE;
      value.b = (double) logical.width / PANGO_SCALE;
      value.baseline = (double) pango_layout_get_baseline (value.layout) / PANGO_SCALE;
      g_object_unref (ctx);
      pango_font_description_free (desc);
      g_object_ref (value.layout);
      memo_put (key, value);
    }
  cairo_new_path (cr);
  cairo_move_to (cr, x - value.b * xalign - value.a,
                 y + ascent - (ascent + descent) * yalign - value.baseline);
  pango_cairo_show_layout (cr, value.layout);
  cairo_new_path (cr);
  g_object_unref (value.layout);
}

void
rpe_text_show_fitted (cairo_t    *cr,
                      const char *text,
                      double      x,
                      double      y,
                      double      left,
                      double      right,
                      double      yalign)
{
  double room = right - left, w;
  char *shown = NULL;

  if (cr == NULL || text == NULL || text[0] == '\0' || !(room > 0.0))
    return;
  cairo_save (cr);
  w = rpe_text_width (cr, text);
  if (w > room)
    {
      cairo_matrix_t font;
      double scale = room / w;

      cairo_get_font_matrix (cr, &font);
      cairo_set_font_size (cr, font.yy * fmax (scale, RPE_TEXT_MIN_SCALE));
      if (scale >= RPE_TEXT_MIN_SCALE)
        w = room;
      else
        {
          /* shrunk as far as it reads: the longest start of its characters that fits, and "…" */
          char *plain = rpe_text_plain (text);
          long lo = 0, hi = g_utf8_strlen (plain, -1);

          while (lo < hi)
            {
              long mid = (lo + hi + 1) / 2;
              char *start = g_utf8_substring (plain, 0, mid);
              char *escaped = g_markup_escape_text (start, -1);
              char *cut = g_strconcat (escaped, "\xe2\x80\xa6", NULL);

              if (rpe_text_width (cr, cut) <= room)
                lo = mid;
              else
                hi = mid - 1;
              g_free (cut);
              g_free (escaped);
              g_free (start);
            }
          {
            char *start = g_utf8_substring (plain, 0, lo);
            char *escaped = g_markup_escape_text (g_strchomp (start), -1);

            shown = g_strconcat (escaped, "\xe2\x80\xa6", NULL);
            g_free (escaped);
            g_free (start);
          }
          free (plain);
          text = shown;
          w = rpe_text_width (cr, text);
        }
    }
  x = fmin (fmax (x, left + w / 2.0), right - w / 2.0);
  rpe_text_show (cr, text, x, y, 0.5, yalign);
  cairo_restore (cr);
  g_free (shown);
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
  GHashTable *table = g_private_get (&memo_private);

  if (table != NULL)
    g_hash_table_remove_all (table);
  pango_cairo_font_map_set_default (NULL);
}

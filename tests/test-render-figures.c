/* test-render-figures.c: the words, alignment and sizes of the publication figures.
 *
 *   text       the PDFs of `rpe export` carry the mathematics and the human names
 *              (pdftotext): P̂ and P̃ with their combining marks, τ, Σ, N_train as
 *              "N" + subscript "train", "sine SPE, gated", "LRPE", "FastRPB", "APE";
 *              no code name (sine_gated, lrpe, N_train, P_est) is left;
 *   alignment  the three panels of SPE vs RPE: the pixel rows of their frames are
 *              equal (found by scanning the picture, not from the layout);
 *   presets    --preset column | page | slide give the page sizes asked for (pdfinfo),
 *              and --width still overrides the preset's width;
 *   text size  ticks are at least 10 px at 1x in the window (the automatic size);
 *   titles     every word of a figure lies inside its page with a margin (pdftotext -bbox),
 *              long titles shrunk, wrapped or cut short with "…", never off the page;
 *   narrow     a narrow panel's rotated y label stays clear of a title wider than the image.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <cairo.h>
#include <cairo-pdf.h>

#include <gif_lib.h>

#include "rpe-export.h"
#include "rpe-figure-names.h"
#include "rpe-ticks.h"
#include "rpe-test-utils.h"
#include "rpe-text.h"

/* Under LeakSanitizer: fontconfig's pattern cache (Pango's and cairo's fonts) is never
 * freed before exit (as in tests/test-ui-lsan.supp).  Unused otherwise. */
const char *__lsan_default_suppressions (void);
const char *
__lsan_default_suppressions (void)
{
  return "leak:libfontconfig.so\n";
}

static char *
tmp_file (const char *name)
{
  return g_build_filename (rpe_test_tmpdir (), name, NULL);
}

static gboolean
have_cli (void)
{
  const char *cli = g_getenv ("RPE_CLI");

  if (cli == NULL || !g_file_test (cli, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("RPE_CLI is not set");
      return FALSE;
    }
  return TRUE;
}

/* rpe export ARGS...; returns the exit status. */
static int
run_export (const char * const *args)
{
  GPtrArray *argv = g_ptr_array_new ();
  int status = -1;
  g_autofree char *err = NULL;

  g_ptr_array_add (argv, (char *) g_getenv ("RPE_CLI"));
  g_ptr_array_add (argv, (char *) "export");
  for (gsize i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (char *) args[i]);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL,
                               &err, &status, NULL));
  if (!g_spawn_check_wait_status (status, NULL))
    g_test_message ("rpe export failed: %s", err);
  g_ptr_array_unref (argv);
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

/* The text of a PDF (pdftotext), or NULL when poppler-utils are missing. */
static char *
pdf_text (const char *path)
{
  g_autofree char *tool = g_find_program_in_path ("pdftotext");
  char *out = NULL;
  int status;

  if (tool == NULL)
    return NULL;
  g_assert_true (g_spawn_sync (NULL, (char *[]) { tool, "-enc", "UTF-8", (char *) path, "-", NULL }, NULL,
                               G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out, NULL, &status, NULL));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  return out;
}

/* pdftotext guesses spaces from the gaps between glyphs: compare without them */
static char *
squeeze (const char *s)
{
  GString *out = g_string_new (NULL);

  for (; *s != '\0'; s++)
    if (*s != ' ' && *s != '\n')
      g_string_append_c (out, *s);
  return g_string_free (out, FALSE);
}

static void
assert_has (const char *text,
            const char *what)
{
  g_autofree char *t = squeeze (text), *w = squeeze (what);

  if (strstr (t, w) == NULL)
    g_error ("the figure's text lacks “%s”:\n%s", what, text);
}

static void
assert_lacks (const char *text,
              const char *what)
{
  if (strstr (text, what) != NULL)
    g_error ("the figure's text still has “%s”:\n%s", what, text);
}

static void
test_text (void)
{
  static const struct
  {
    const char *name;
    const char *args[16];
    const char *has[8];
  } cases[] = {
    { "error.pdf", { "error", "--checkpoint", "demo", "--length", "16", "--seeds", "2", "--realizations-list", "4,8,16", NULL },
      /* ‖P̂ − P̃‖_F / ‖P̃‖_F: P + U+0302, P + U+0303, a real minus, the F as its own (subscript) run */
      { "\xe2\x80\x96P\xcc\x82 \xe2\x88\x92 P\xcc\x83\xe2\x80\x96", "sine SPE, gated", "conv SPE, gated",
        "\xe2\x88\x9d R", NULL } },
    { "profile.pdf", { "profile", "--checkpoint", "demo", "--length", "64", NULL },
      { "sine SPE, ungated", "sine SPE, gated", "conv SPE, gated", "LRPE", "\xcf\x84 = m \xe2\x88\x92 n",
        "P\xcc\x83(\xcf\x84)", NULL } },
    { "extrapolation.pdf", { "extrapolation", "--checkpoint", "demo", "--max-length", "96", "--train-length", "32",
                             "--models", "ape,sine,lrpe,fastrpb", NULL },
      { "APE", "sine SPE", "LRPE", "FastRPB", "\xce\xa3", "train", NULL } },
    { "spe-vs-rpe.pdf", { "spe-vs-rpe", "--checkpoint", "demo", "--length", "24", "--realizations", "8",
                          "--train-length", "16", NULL },
      { "SPE estimate a\xcc\x82", "error a\xcc\x82 \xe2\x88\x92 a", "attention weight", "sine SPE, gated",
        "exact a", "train", NULL } },
    { "templates.pdf", { "templates", "--checkpoint", "demo", "--length", "24", "--train-length", "16", NULL },
      { "P\xcc\x83", "template", "d = 0", "d = 15", "sine SPE, gated", NULL } },
  };

  if (!have_cli ())
    return;
  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autofree char *path = tmp_file (cases[c].name);
      const char *args[20];
      g_autofree char *text = NULL;
      gsize n = 0;

      for (; cases[c].args[n] != NULL; n++)
        args[n] = cases[c].args[n];
      args[n++] = "-o";
      args[n++] = path;
      args[n] = NULL;
      g_assert_cmpint (run_export (args), ==, 0);
      text = pdf_text (path);
      if (text == NULL)
        {
          g_test_skip ("pdftotext is not installed");
          return;
        }
      for (gsize k = 0; cases[c].has[k] != NULL; k++)
        assert_has (text, cases[c].has[k]);
      /* no code names, no ASCII stand-ins for the mathematics */
      assert_lacks (text, "N_train");
      assert_lacks (text, "sine_");
      assert_lacks (text, "conv_");
      assert_lacks (text, "lrpe");
      assert_lacks (text, "fastrpb");
      assert_lacks (text, "P_est");
      assert_lacks (text, "_F");
      assert_lacks (text, "w_tau");
      assert_lacks (text, "R^(");
      g_test_message ("%s: %zu characters of text, every expected name found", cases[c].name, strlen (text));
    }
}

/* ---------------------------------------------------------------- alignment */

/* The first row, from the top, holding a run of painted (not white) pixels at least
 * min_len long within columns [x0, x1): a frame's top edge (text and the thin N_train
 * lines make no such runs).  -1 if none. */
static int
frame_top (cairo_surface_t *s,
           int              x0,
           int              x1,
           int              min_len)
{
  const guint8 *data = cairo_image_surface_get_data (s);
  int stride = cairo_image_surface_get_stride (s), h = cairo_image_surface_get_height (s);

  for (int y = 0; y < h; y++)
    {
      int run = 0;

      for (int x = x0; x < x1; x++)
        {
          guint32 p = *(const guint32 *) (const void *) (data + (gsize) y * stride + 4 * (gsize) x);
          int r = (p >> 16) & 0xff, g = (p >> 8) & 0xff, b = p & 0xff;

          run = r < 245 || g < 245 || b < 245 ? run + 1 : 0;
          if (run >= min_len)
            return y;
        }
    }
  return -1;
}

static void
test_alignment (void)
{
  enum { N = 40 };
  static float maps[3][N * N];
  RpeFigure fig;
  RpePlotRect images[RPE_FIGURE_MAX_PANELS];
  int width = 1275, height = 417;   /* the default 612 x 200 pt at 150 dpi */
  int tops[3];

  /* exact / estimate in [0.01, 0.04]; their difference signed, with wide (minus) labels */
  for (int m = 0; m < N; m++)
    for (int n = 0; n < N; n++)
      {
        maps[0][m * N + n] = 0.01f + 0.03f * expf (-fabsf ((float) (m - n)) / 6.0f);
        maps[1][m * N + n] = maps[0][m * N + n] * (1.0f + 0.2f * sinf ((float) (m * 7 + n * 3)));
        maps[2][m * N + n] = maps[1][m * N + n] - maps[0][m * N + n];
      }
  rpe_figure_init (&fig, RPE_FIGURE_COMPARE);
  fig.n_panels = 3;
  fig.share_scale = TRUE;
  fig.title = "alignment";
  for (int i = 0; i < 3; i++)
    {
      g_autofree char *t = rpe_figure_compare_panel ((guint) i, 64);

      fig.panels[i].values = maps[i];
      fig.panels[i].rows = fig.panels[i].cols = N;
      fig.panels[i].train_length = 24;
      fig.panels[i].title = g_intern_string (t);
      fig.panels[i].colorbar_label = rpe_figure_compare_bar ((guint) i);
      fig.panels[i].scale = i < 2 ? RPE_HEATMAP_SCALE_LINEAR : RPE_HEATMAP_SCALE_SYMMETRIC;
    }
  fig.panels[2].colormap = rpe_colormap_default_diverging ();

  for (int pass = 0; pass < 3; pass++)
    {
      /* 1x window-like pixels, the 150-dpi export, and the page preset */
      double scale = pass == 1 ? 150.0 / 72.0 : 1.0;
      double wpt = pass == 2 ? 486.0 : (pass == 0 ? 900.0 : 612.0), hpt = pass == 2 ? 159.0 : (pass == 0 ? 300.0 : 200.0);
      cairo_surface_t *s;
      cairo_t *cr;

      fig.text_size = pass == 2 ? 9.0 : 0.0;   /* the page preset's text */
      width = (int) ceil (wpt * scale);
      height = (int) ceil (hpt * scale);
      s = cairo_image_surface_create (CAIRO_FORMAT_RGB24, width, height);
      cr = cairo_create (s);
      cairo_scale (cr, scale, scale);
      g_assert_true (rpe_figure_render (cr, &fig, wpt, hpt));
      g_assert_cmpuint (rpe_figure_compare_images (cr, &fig, wpt, hpt, images), ==, 3);
      cairo_destroy (cr);
      cairo_surface_flush (s);
      for (int i = 0; i < 3; i++)
        {
          /* scan the panel's third of the picture for its frame's top edge */
          int x0 = (int) floor (width * i / 3.0), x1 = (int) floor (width * (i + 1) / 3.0);
          int len = (int) floor (images[i].width * scale * 0.8);

          tops[i] = frame_top (s, x0, x1, len);
          g_assert_cmpint (tops[i], >=, 0);
          g_assert_cmpfloat_with_epsilon (images[i].width, images[0].width, 1e-9);
          g_assert_cmpfloat_with_epsilon (images[i].height, images[0].height, 1e-9);
          g_assert_cmpfloat_with_epsilon (images[i].y, images[0].y, 1e-9);
        }
      if (g_getenv ("RPE_FIG_DEBUG"))
        {
          const guint8 *px = cairo_image_surface_get_data (s);
          int st = cairo_image_surface_get_stride (s), xx = (int) (images[0].x * scale) + 20;

          for (int yy = (int) (images[0].y * scale) - 3; yy < (int) (images[0].y * scale) + 3; yy++)
            g_printerr ("row %d: %08x (image y %g x %g)\n", yy, *(const guint32 *) (const void *) (px + yy * st + 4 * xx),
                        images[0].y, images[0].x);
        }
      g_test_message ("%.0f x %.0f pt at %.2fx: frame tops at pixel rows %d, %d, %d; images %.0f x %.0f", wpt, hpt,
                      scale, tops[0], tops[1], tops[2], images[0].width, images[0].height);
      g_assert_cmpint (tops[1], ==, tops[0]);
      g_assert_cmpint (tops[2], ==, tops[0]);
      /* the frame is where the layout says: its top edge's first painted pixel row */
      g_assert_cmpint (tops[0], ==, (int) floor (images[0].y * scale));
      cairo_surface_destroy (s);
    }
}

/* ------------------------------------------------------------------ presets */

static void
page_size (const char *path,
           double     *w,
           double     *h)
{
  g_autofree char *tool = g_find_program_in_path ("pdfinfo");
  g_autofree char *out = NULL;
  g_autoptr (GMatchInfo) match = NULL;
  g_autoptr (GRegex) re = g_regex_new ("Page size:\\s+([0-9.]+) x ([0-9.]+) pts", 0, 0, NULL);
  int status;

  *w = *h = -1;
  if (tool == NULL)
    return;
  g_assert_true (g_spawn_sync (NULL, (char *[]) { tool, (char *) path, NULL }, NULL, G_SPAWN_STDERR_TO_DEV_NULL,
                               NULL, NULL, &out, NULL, &status, NULL));
  g_assert_true (g_regex_match (re, out, 0, &match));
  {
    g_autofree char *ws = g_match_info_fetch (match, 1), *hs = g_match_info_fetch (match, 2);

    *w = g_ascii_strtod (ws, NULL);
    *h = g_ascii_strtod (hs, NULL);
  }
}

static void
test_presets (void)
{
  static const struct { const char *preset; double w, h; } sizes[] = {
    { "column", 3.25 * 72, 0 }, { "page", 6.75 * 72, 0 }, { "slide", 13.333 * 72, 7.5 * 72 },
  };
  static const char *const views[][12] = {
    { "spe-vs-rpe", "--checkpoint", "demo", "--length", "16", "--realizations", "4", NULL },
    { "templates", "--checkpoint", "demo", "--length", "16", NULL },
    { "error", "--checkpoint", "demo", "--length", "16", "--seeds", "2", "--realizations-list", "4,8", NULL },
  };

  if (!have_cli ())
    return;
  for (gsize v = 0; v < G_N_ELEMENTS (views); v++)
    for (gsize p = 0; p < G_N_ELEMENTS (sizes); p++)
      {
        g_autofree char *name = g_strdup_printf ("preset-%s-%s.pdf", views[v][0], sizes[p].preset);
        g_autofree char *path = tmp_file (name);
        const char *args[24];
        gsize n = 0;
        double w, h;

        for (; views[v][n] != NULL; n++)
          args[n] = views[v][n];
        args[n++] = "--preset";
        args[n++] = sizes[p].preset;
        args[n++] = "-o";
        args[n++] = path;
        args[n] = NULL;
        g_assert_cmpint (run_export (args), ==, 0);
        page_size (path, &w, &h);
        if (w < 0)
          {
            g_test_skip ("pdfinfo is not installed");
            return;
          }
        g_test_message ("%s: %g x %g pt", name, w, h);
        /* pdfinfo prints the size to 2 decimals at most */
        g_assert_cmpfloat (fabs (w - sizes[p].w), <, 0.01);
        if (sizes[p].h > 0)
          g_assert_cmpfloat (fabs (h - sizes[p].h), <, 0.01);
        else
          g_assert_cmpfloat (h, >, 0.2 * w);
      }

  /* --width overrides the preset's width; the text size stays the preset's */
  {
    g_autofree char *path = tmp_file ("preset-override.pdf");
    const char *args[] = { "templates", "--checkpoint", "demo", "--length", "16", "--preset", "column",
                           "--width", "300", "--height", "200", "-o", path, NULL };
    double w, h;

    g_assert_cmpint (run_export (args), ==, 0);
    page_size (path, &w, &h);
    g_assert_cmpfloat (fabs (w - 300), <, 0.01);
    g_assert_cmpfloat (fabs (h - 200), <, 0.01);
  }
  /* an unknown preset is bad usage */
  {
    g_autofree char *path = tmp_file ("preset-bad.pdf");
    const char *args[] = { "templates", "--checkpoint", "demo", "--preset", "poster", "-o", path, NULL };

    g_assert_cmpint (run_export (args), ==, 2);
    g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  }
}

/* The text size sets the drawn text: at a preset's 8 pt the tick numbers are 8 pt
 * tall in a PDF... measured here on pixels: a figure drawn at 1x has its tick
 * numbers' glyphs at least the automatic 10 px (the digit "0" is ~0.73 em tall). */
static void
test_text_size (void)
{
  cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 10, 10);
  cairo_t *cr = cairo_create (s);
  double a, d;

  /* the automatic sizes never go below 10 user units (px at 1x in the window) */
  for (double side = 20; side < 3000; side *= 1.3)
    {
      g_assert_cmpfloat (rpe_plot_auto_font (side, side), >=, 10.0);
      g_assert_cmpfloat (rpe_curve_auto_font (side, side), >=, 10.0);
    }
  /* and the text helper lays text out at the size set on cr: the font's ascent +
   * descent of DejaVu/Sans fonts is 1.0 .. 1.3 em */
  cairo_select_font_face (cr, "Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  for (double size = 8; size <= 20; size += 4)
    {
      cairo_set_font_size (cr, size);
      rpe_text_metrics (cr, &a, &d);
      g_assert_cmpfloat ((a + d) / size, >, 0.95);
      g_assert_cmpfloat ((a + d) / size, <, 1.35);
      /* a subscript does not change the width of what precedes it, and is narrower than full size */
      g_assert_cmpfloat (rpe_text_width (cr, "N<sub>train</sub>"), <, rpe_text_width (cr, "Ntrain"));
      g_assert_cmpfloat (rpe_text_width (cr, "N<sub>train</sub>"), >, rpe_text_width (cr, "N"));
      /* a combining mark takes no advance: P̂ is as wide as P */
      g_assert_cmpfloat_with_epsilon (rpe_text_width (cr, "P\xcc\x82"), rpe_text_width (cr, "P"), 1e-6);
      /* text that is not markup is shown as it is */
      g_assert_cmpfloat (rpe_text_width (cr, "a < b & c"), >, rpe_text_width (cr, "a  b  c"));
    }
  cairo_destroy (cr);
  cairo_surface_destroy (s);
}

/* ---------------------------------------------------------------------- GIF */

typedef struct
{
  int      width, height, frames;
  guint8  *rgb[2];     /* the first and last frames, RGB */
  int      delay[2];
} Gif;

static gboolean
read_gif (const char *path,
          Gif        *g)
{
  int err = 0;
  GifFileType *gif = DGifOpenFileName (path, &err);

  memset (g, 0, sizeof *g);
  if (gif == NULL)
    return FALSE;
  if (DGifSlurp (gif) != GIF_OK)
    {
      DGifCloseFile (gif, &err);
      return FALSE;
    }
  g->width = gif->SWidth;
  g->height = gif->SHeight;
  g->frames = gif->ImageCount;
  for (int k = 0; k < 2 && g->frames > 0; k++)
    {
      int i = k == 0 ? 0 : g->frames - 1;
      SavedImage *img = &gif->SavedImages[i];
      ColorMapObject *map = img->ImageDesc.ColorMap != NULL ? img->ImageDesc.ColorMap : gif->SColorMap;
      GraphicsControlBlock gcb;

      g_assert_nonnull (map);
      g_assert_cmpint (img->ImageDesc.Width, ==, g->width);
      g_assert_cmpint (img->ImageDesc.Height, ==, g->height);
      g->rgb[k] = g_malloc ((gsize) g->width * g->height * 3);
      for (int p = 0; p < g->width * g->height; p++)
        {
          GifColorType c = map->Colors[img->RasterBits[p]];

          g->rgb[k][3 * p] = c.Red;
          g->rgb[k][3 * p + 1] = c.Green;
          g->rgb[k][3 * p + 2] = c.Blue;
        }
      g->delay[k] = DGifSavedExtensionToGCB (gif, i, &gcb) == GIF_OK ? gcb.DelayTime : -1;
    }
  DGifCloseFile (gif, &err);
  return TRUE;
}

/* Mean |difference| per channel between an RGB frame and a PNG of the same size. */
static double
frame_vs_png (const Gif    *g,
              const guint8 *rgb,
              const char   *png)
{
  cairo_surface_t *s = cairo_image_surface_create_from_png (png);
  const guint8 *data;
  int stride;
  double sum = 0.0;

  g_assert_cmpint (cairo_surface_status (s), ==, CAIRO_STATUS_SUCCESS);
  g_assert_cmpint (cairo_image_surface_get_width (s), ==, g->width);
  g_assert_cmpint (cairo_image_surface_get_height (s), ==, g->height);
  data = cairo_image_surface_get_data (s);
  stride = cairo_image_surface_get_stride (s);
  for (int y = 0; y < g->height; y++)
    for (int x = 0; x < g->width; x++)
      {
        guint32 p = *(const guint32 *) (const void *) (data + (gsize) y * stride + 4 * (gsize) x);
        const guint8 *q = rgb + 3 * ((gsize) y * g->width + x);

        /* opaque white background: the premultiplied values are the colour */
        sum += abs ((int) ((p >> 16) & 0xff) - q[0]) + abs ((int) ((p >> 8) & 0xff) - q[1])
               + abs ((int) (p & 0xff) - q[2]);
      }
  cairo_surface_destroy (s);
  return sum / (3.0 * g->width * g->height);
}

static void
test_gif (void)
{
  g_autofree char *gif_path = tmp_file ("sweep.gif");
  g_autofree char *first = tmp_file ("sweep-first.png");
  g_autofree char *last = tmp_file ("sweep-last.png");
  const char *base[] = { "spe-vs-rpe", "--checkpoint", "demo", "--head", "1", "--length", "24", "--train-length",
                         "16", "--seed", "3" };
  Gif g;

  if (!have_cli ())
    return;
  {
    const char *args[] = { base[0], base[1], base[2], base[3], base[4], base[5], base[6], base[7], base[8],
                           base[9], base[10], "--sweep", "realizations=2:512", "--frames", "5", "--frame-delay", "40",
                           "-o", gif_path, NULL };

    g_assert_cmpint (run_export (args), ==, 0);
  }
  /* the first and the last frame as PNGs, R = 2 and R = 512 */
  for (int k = 0; k < 2; k++)
    {
      const char *args[] = { base[0], base[1], base[2], base[3], base[4], base[5], base[6], base[7], base[8],
                             base[9], base[10], "--realizations", k == 0 ? "2" : "512", "-o", k == 0 ? first : last,
                             NULL };

      g_assert_cmpint (run_export (args), ==, 0);
    }
  g_assert_true (read_gif (gif_path, &g));
  if (g_getenv ("RPE_SCREENSHOT_DIR") != NULL)
    for (int k = 0; k < 2; k++)
      {
        /* the decoded frames, to look at */
        cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_RGB24, g.width, g.height);
        guint8 *d = cairo_image_surface_get_data (s);
        g_autofree char *name = g_strdup_printf ("%s/gif-frame-%s.png", g_getenv ("RPE_SCREENSHOT_DIR"),
                                                 k == 0 ? "first" : "last");

        for (int p = 0; p < g.width * g.height; p++)
          *(guint32 *) (void *) (d + (gsize) (p / g.width) * cairo_image_surface_get_stride (s) + 4 * (p % g.width))
            = ((guint32) g.rgb[k][3 * p] << 16) | ((guint32) g.rgb[k][3 * p + 1] << 8) | g.rgb[k][3 * p + 2];
        cairo_surface_mark_dirty (s);
        cairo_surface_write_to_png (s, name);
        cairo_surface_destroy (s);
      }
  g_test_message ("GIF: %d frames of %d x %d, delays %d, %d cs", g.frames, g.width, g.height, g.delay[0], g.delay[1]);
  g_assert_cmpint (g.frames, ==, 5);
  g_assert_cmpint (g.delay[0], ==, 40);
  g_assert_cmpint (g.delay[1], ==, 40);
  /* each frame is the PNG of its parameter (to the 256-colour quantisation), and the two
   * ends differ: the estimate changed with R */
  {
    double d00 = frame_vs_png (&g, g.rgb[0], first), d11 = frame_vs_png (&g, g.rgb[1], last);
    double d01 = frame_vs_png (&g, g.rgb[0], last);

    g_test_message ("mean |GIF - PNG| per channel: first %.3f, last %.3f; first vs last PNG %.3f", d00, d11, d01);
    g_assert_cmpfloat (d00, <, 1.5);
    g_assert_cmpfloat (d11, <, 1.5);
    g_assert_cmpfloat (d01, >, 4.0 * fmax (d00, d11));
  }
  g_free (g.rgb[0]);
  g_free (g.rgb[1]);

  /* a bad sweep is bad usage and leaves the existing file as it was */
  {
    g_autofree char *before = NULL, *after = NULL;
    gsize lb, la;
    const char *bad[] = { "spe-vs-rpe", "--checkpoint", "demo", "--sweep", "realizations=0:8", "-o", gif_path, NULL };
    const char *frames[] = { "spe-vs-rpe", "--checkpoint", "demo", "--sweep", "seed=1:4", "--frames", "1", "-o",
                             gif_path, NULL };
    const char *nogif[] = { "spe-vs-rpe", "--checkpoint", "demo", "--sweep", "seed=1:4", "-o", first, NULL };

    g_assert_true (g_file_get_contents (gif_path, &before, &lb, NULL));
    g_assert_cmpint (run_export (bad), ==, 2);
    g_assert_cmpint (run_export (frames), ==, 2);
    g_assert_cmpint (run_export (nogif), ==, 2);
    g_assert_true (g_file_get_contents (gif_path, &after, &la, NULL));
    g_assert_cmpuint (la, ==, lb);
    g_assert_true (memcmp (before, after, la) == 0);
  }
  /* an unwritable directory: exit 1, no file, no temporary left */
  {
    g_autofree char *dir = tmp_file ("gif-missing-dir");
    g_autofree char *path = g_build_filename (dir, "x.gif", NULL);
    const char *args[] = { "template", "--checkpoint", "demo", "--length", "8", "--sweep", "seed=1:2", "--frames", "2",
                           "-o", path, NULL };

    g_assert_cmpint (run_export (args), ==, 1);
    g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  }
}

/* ------------------------------------------------------- shared-axes grid */

/* 64 templates at the column preset (3.25 in, 8 pt text, the height the export picks): the
 * cells are square, of one size, and fill most of the width left of the labels; tick numbers
 * only on the left column and the bottom row. */
static void
test_grid_shared (void)
{
  const size_t n = 32, cells = 64;
  g_autofree float *a = g_new0 (float, cells * n * n);
  RpeHeatmapData d[64];
  char titles[64][16];
  RpeHeatmapGrid g;
  cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 10, 10);
  cairo_t *cr = cairo_create (s);
  double width = 3.25 * 72.0, height, side = -1, x0 = -1, x_end = 0;
  size_t cols = 0;

  for (size_t k = 0; k < cells; k++)
    {
      for (size_t i = 0; i < n * n; i++)
        a[k * n * n + i] = sinf ((float) (i % n + k) * 0.3f) - 0.2f;
      rpe_heatmap_data_init (&d[k]);
      d[k].values = a + k * n * n;
      d[k].rows = d[k].cols = n;
      g_snprintf (titles[k], sizeof titles[k], "d = %zu", k);
      d[k].title = titles[k];
    }
  rpe_heatmap_grid_init (&g);
  g.cells = d;
  g.n_cells = cells;
  g.font_size = 8.0;
  g.colorbar_label = "template";
  height = rpe_plot_grid_height_for_width (&g, width, width * 1.6);
  g_assert_cmpfloat (height, >, 0.0);
  for (size_t k = 0; k < cells; k++)
    {
      RpePlotRect im;
      unsigned int t = 0;
      bool left, bottom;

      g_assert_true (rpe_plot_grid_cell_layout (cr, &g, width, height, k, &im, &t, &cols));
      g_assert_cmpfloat (im.width, ==, im.height);
      if (side < 0)
        {
          side = im.width;
          x0 = im.x;
        }
      g_assert_cmpfloat (im.width, ==, side);
      x_end = MAX (x_end, im.x + im.width);
      left = k % cols == 0;
      bottom = k + cols >= cells;
      g_assert_cmpint (!!(t & RPE_HEATMAP_TICKS_Y_TEXT), ==, left);
      g_assert_cmpint (!!(t & RPE_HEATMAP_TICKS_X_TEXT), ==, bottom);
    }
  g_test_message ("column grid: %zu columns, %g pt images, %g x %g pt", cols, side, width, height);
  g_assert_cmpuint (cols, >=, 2);
  /* the width right of the y labels, shared by the columns: the images take at least 3/4 */
  g_assert_cmpfloat (side, >=, 0.75 * (width - x0) / (double) cols);
  g_assert_cmpfloat (x_end, <=, width);
  cairo_destroy (cr);
  cairo_surface_destroy (s);
}

/* ------------------------------------------------------------ slide figures */

static gsize
count_of (const char *text,
          const char *what)
{
  g_autofree char *t = squeeze (text), *w = squeeze (what);
  gsize c = 0;

  for (const char *p = strstr (t, w); p != NULL; p = strstr (p + 1, w))
    c++;
  return c;
}

/* At the slide preset (20 pt text) the line plots keep their legends (outside the axes when
 * no corner is free), and the outputs' channel strips more than one channel number. */
static void
test_slide (void)
{
  g_autofree char *out = tmp_file ("slide-outputs.pdf"), *ext = tmp_file ("slide-extrapolation.pdf");
  const char *oargs[] = { "outputs", "--checkpoint", "demo", "--preset", "slide", "-o", out, NULL };
  const char *eargs[] = { "extrapolation", "--checkpoint", "demo", "--length", "128", "--preset", "slide",
                          "-o", ext, NULL };
  g_autofree char *otext = NULL, *etext = NULL;

  if (!have_cli ())
    return;
  g_assert_cmpint (run_export (oargs), ==, 0);
  g_assert_cmpint (run_export (eargs), ==, 0);
  otext = pdf_text (out);
  if (otext == NULL)
    {
      g_test_skip ("pdftotext is not installed");
      return;
    }
  etext = pdf_text (ext);
  /* the title and the first strip name the exact attention; the legend a third time */
  g_assert_cmpuint (count_of (otext, "exact softmax attention"), >=, 3);
  assert_has (etext, "APE");
  assert_has (etext, "sine SPE");
  assert_has (etext, "conv SPE");

  /* four channels in a strip at the slide's text size: ticks 0 and 3 at least */
  {
    float v[4 * 256];
    RpeHeatmapData d;
    RpeTicks yt;
    cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 10, 10);
    cairo_t *cr = cairo_create (s);

    for (size_t i = 0; i < G_N_ELEMENTS (v); i++)
      v[i] = (float) (i % 7);
    rpe_heatmap_data_init (&d);
    d.values = v;
    d.rows = 4;
    d.cols = 256;
    d.font_size = 20.0;
    d.hide_x_labels = TRUE;
    g_assert_true (rpe_plot_heatmap_ticks (cr, &d, 600, 115, NULL, &yt));
    g_assert_cmpuint (yt.n, >=, 2);
    g_assert_cmpfloat (yt.tick[0].value, ==, 0);
    g_assert_cmpfloat (yt.tick[yt.n - 1].value, ==, 3);
    cairo_destroy (cr);
    cairo_surface_destroy (s);
  }
  g_assert_cmpuint (count_of (otext, "channel"), >=, 3);
  {
    g_auto (GStrv) lines = g_strsplit (otext, "\n", -1);
    gsize threes = 0;

    for (gsize i = 0; lines[i] != NULL; i++)
      if (g_strcmp0 (g_strstrip (lines[i]), "3") == 0)
        threes++;
    g_assert_cmpuint (threes, >=, 3);   /* the last channel's number on each strip */
  }
}

/* The words of page 1 of a PDF with their boxes (pdftotext -bbox) and the page's width;
 * NULL without poppler-utils. */
typedef struct
{
  double x0, x1, y0, y1;
  char  *text;
} BoxWord;

static GArray *
pdf_boxes (const char *path,
           double     *page_width)
{
  g_autofree char *tool = g_find_program_in_path ("pdftotext");
  g_autofree char *out = NULL;
  GArray *words;
  const char *page;
  int status;

  if (tool == NULL)
    return NULL;
  g_assert_true (g_spawn_sync (NULL, (char *[]) { tool, "-bbox", "-enc", "UTF-8", (char *) path, "-", NULL }, NULL,
                               G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out, NULL, &status, NULL));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  page = strstr (out, "<page width=\"");
  g_assert_nonnull (page);
  *page_width = g_ascii_strtod (page + strlen ("<page width=\""), NULL);
  words = g_array_new (FALSE, TRUE, sizeof (BoxWord));
  for (const char *p = page; (p = strstr (p, "<word ")) != NULL; p++)
    {
      const char *close = strchr (p, '>'), *end = strstr (p, "</word>");
      BoxWord w;

      w.x0 = g_ascii_strtod (strstr (p, "xMin=\"") + 6, NULL);
      w.x1 = g_ascii_strtod (strstr (p, "xMax=\"") + 6, NULL);
      w.y0 = g_ascii_strtod (strstr (p, "yMin=\"") + 6, NULL);
      w.y1 = g_ascii_strtod (strstr (p, "yMax=\"") + 6, NULL);
      w.text = g_strndup (close + 1, end - close - 1);
      g_array_append_val (words, w);
    }
  return words;
}

/* Titles stand inside the page with a margin: the default titles, which reached the left edge
 * (x = 0) before, and titles too long for a line, which are shrunk, wrapped (at a preset's text
 * size) or cut short with "…", never drawn off the page. */
static void
test_titles (void)
{
  static const char *const long_title =
    "sine SPE, gated: a title far too long for any figure of a paper, which goes on about the "
    "attention of head 0 at R = 64 and N = 256, its training length and every other parameter there is";
  static const struct
  {
    const char *view;
    gboolean    long_title;
    const char *preset;
  } cases[] = {
    { "attention", FALSE, NULL }, { "attention", TRUE, NULL }, { "attention", TRUE, "column" },
    { "templates", FALSE, NULL }, { "templates", TRUE, NULL }, { "templates", TRUE, "column" },
    { "spe-vs-rpe", FALSE, NULL }, { "spe-vs-rpe", TRUE, NULL }, { "template", TRUE, NULL },
    { "profile", TRUE, NULL }, { "curves", TRUE, NULL }, { "outputs", TRUE, NULL },
  };

  if (!have_cli ())
    return;
  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autofree char *out = tmp_file ("title.pdf");
      const char *args[12];
      g_autoptr (GArray) words = NULL;
      double page_w = 0.0, left = INFINITY, right = -INFINITY;
      gsize k = 0;
      gboolean first = FALSE;

      args[k++] = cases[c].view;
      args[k++] = "--length";
      args[k++] = "64";
      if (cases[c].long_title)
        {
          args[k++] = "--title";
          args[k++] = long_title;
        }
      if (cases[c].preset != NULL)
        {
          args[k++] = "--preset";
          args[k++] = cases[c].preset;
        }
      args[k++] = "-o";
      args[k++] = out;
      args[k] = NULL;
      g_assert_cmpint (run_export (args), ==, 0);
      words = pdf_boxes (out, &page_w);
      if (words == NULL)
        {
          g_test_skip ("pdftotext is not installed");
          return;
        }
      for (guint i = 0; i < words->len; i++)
        {
          BoxWord *w = &g_array_index (words, BoxWord, i);

          left = fmin (left, w->x0);
          right = fmax (right, w->x1);
          if (w->y0 < 30.0 && g_str_equal (w->text, "sine"))
            first = TRUE;
          g_free (w->text);
        }
      g_test_message ("%s%s%s: words from x = %.1f to %.1f on a %.0f pt page", cases[c].view,
                      cases[c].long_title ? " (long title)" : "", cases[c].preset != NULL ? " (column)" : "", left, right,
                      page_w);
      /* the title begins the figure and every word is inside the page, off its edges */
      if (cases[c].long_title || g_str_has_prefix (cases[c].view, "attention") || g_str_has_prefix (cases[c].view, "template"))
        g_assert_true (first);
      g_assert_cmpfloat (left, >=, 2.0);
      g_assert_cmpfloat (right, <=, page_w - 2.0);
      g_unlink (out);
    }
}

/* Narrow panels (SPE vs RPE in a 644 px window: three heatmaps about 160 x 230): a title wider
 * than the image reaches over the y label's column; the rotated label then keeps below the
 * image's top, clear of the title. */
static void
test_narrow_panel (void)
{
  g_autofree char *path = tmp_file ("narrow.pdf");
  g_autofree float *v = g_new (float, 96 * 96);
  g_autoptr (GArray) words = NULL;
  RpeHeatmapData d;
  RpePlotRect image;
  cairo_surface_t *surface;
  cairo_t *cr;
  double page_w;
  guint label_words = 0;

  for (gsize i = 0; i < 96 * 96; i++)
    v[i] = (float) ((i * 37) % 101) / 3000.0f;
  rpe_heatmap_data_init (&d);
  d.values = v;
  d.rows = d.cols = 96;
  d.title = "SPE estimate \xc3\xa2 (R = 16)";
  d.colorbar_label = "attention weight";
  d.equal_aspect = TRUE;
  surface = cairo_pdf_surface_create (path, 160.0, 230.0);
  cr = cairo_create (surface);
  rpe_plot_render_heatmap (cr, &d, 160.0, 230.0);
  g_assert_true (rpe_plot_heatmap_layout (cr, &d, 160.0, 230.0, &image, NULL));
  cairo_destroy (cr);
  cairo_surface_finish (surface);
  cairo_surface_destroy (surface);
  words = pdf_boxes (path, &page_w);
  if (words == NULL)
    {
      g_test_skip ("pdftotext is not installed");
      return;
    }
  {
    double title_x0 = INFINITY, title_x1 = -INFINITY, title_y0 = INFINITY, title_y1 = -INFINITY;

    for (guint i = 0; i < words->len; i++)
      {
        BoxWord *w = &g_array_index (words, BoxWord, i);

        if (w->y1 <= image.y)   /* the title's words, above the image */
          {
            title_x0 = fmin (title_x0, w->x0);
            title_x1 = fmax (title_x1, w->x1);
            title_y0 = fmin (title_y0, w->y0);
            title_y1 = fmax (title_y1, w->y1);
          }
      }
    /* the title is wider than the image here: it reaches over the y label's column */
    g_assert_cmpfloat (title_x0, <, image.x - 20.0);
    for (guint i = 0; i < words->len; i++)
      {
        BoxWord *w = &g_array_index (words, BoxWord, i);

        /* the y label's words, left of the image: clear of the title, inside the page */
        if (w->x1 < image.x && (g_str_equal (w->text, "query") || g_str_equal (w->text, "position")
                                || g_str_equal (w->text, "m")))
          {
            gboolean meets = w->x0 < title_x1 && w->x1 > title_x0 && w->y0 < title_y1 && w->y1 > title_y0;

            if (meets)
              g_error ("the y label's \"%s\" (%.1f .. %.1f down) meets the title (%.1f .. %.1f)", w->text, w->y0, w->y1,
                       title_y0, title_y1);
            g_assert_cmpfloat (w->y0, >=, 0.0);
            g_assert_cmpfloat (w->y1, <=, 230.0);
            label_words++;
          }
        g_free (w->text);
      }
  }
  g_assert_cmpuint (label_words, ==, 3);   /* "query position m" */
  g_unlink (path);
}

int
main (int   argc,
      char *argv[])
{
  int ret;

  g_test_init (&argc, &argv, NULL);
  if (g_getenv ("G_TEST_SRCDIR") != NULL)
    {
      /* the spawned `rpe export` under a sanitizer: the same suppression */
      g_autofree char *supp = g_build_filename (g_getenv ("G_TEST_SRCDIR"), "test-ui-lsan.supp", NULL);
      g_autofree char *lsan = g_strdup_printf ("print_suppressions=0:suppressions=%s", supp);

      g_setenv ("LSAN_OPTIONS", lsan, FALSE);
    }
  g_test_add_func ("/render/figures/text", test_text);
  g_test_add_func ("/render/figures/alignment", test_alignment);
  g_test_add_func ("/render/figures/presets", test_presets);
  g_test_add_func ("/render/figures/text-size", test_text_size);
  g_test_add_func ("/render/figures/gif", test_gif);
  g_test_add_func ("/render/figures/grid-shared-axes", test_grid_shared);
  g_test_add_func ("/render/figures/slide", test_slide);
  g_test_add_func ("/render/figures/titles", test_titles);
  g_test_add_func ("/render/figures/narrow-panel", test_narrow_panel);
  ret = g_test_run ();
  rpe_text_release_fonts ();
  return ret;
}

/* test-ui-editors.c: the spectrum and stem editors (renderers, mapping,
 * strokes, drags, keys) and their widgets realised under Xvfb. */
#include "config.h"

#include <math.h>
#include <string.h>

#include <gtk/gtk.h>

#include "rpe-editor-render.h"
#include "rpe-spectrum-editor.h"
#include "rpe-stem-editor.h"
#include "rpe-test-utils.h"
#include "rpe-ui-wait.h"

static const double RED[4] = { 1.0, 0.0, 0.0, 1.0 };
static const double BLACK[4] = { 0.0, 0.0, 0.0, 1.0 };
static const double WHITE[4] = { 1.0, 1.0, 1.0, 1.0 };

/* ------------------------------------------------------------ pixel helpers */

typedef struct
{
  int r, g, b;
} Pixel;

static Pixel
pixel_at (cairo_surface_t *s,
          double           x,
          double           y)
{
  int ix = (int) floor (x), iy = (int) floor (y);
  int stride = cairo_image_surface_get_stride (s);
  const unsigned char *data;
  guint32 v;
  Pixel p = { -1, -1, -1 };

  cairo_surface_flush (s);
  if (ix < 0 || iy < 0 || ix >= cairo_image_surface_get_width (s)
      || iy >= cairo_image_surface_get_height (s))
    return p;
  data = cairo_image_surface_get_data (s);
  memcpy (&v, data + (gsize) iy * stride + (gsize) ix * 4, 4);
  p.r = (v >> 16) & 0xff;
  p.g = (v >> 8) & 0xff;
  p.b = v & 0xff;
  return p;
}

static gboolean
is_red (Pixel p)
{
  return p.r > 200 && p.g < 70 && p.b < 70;
}

static gboolean
is_reddish (Pixel p)
{
  /* Red mixed with black (the phase needle): red clearly dominant. */
  return p.r > 60 && p.r > p.g + 40 && p.r > p.b + 40;
}

static gboolean
is_light (Pixel p)
{
  return p.r > 215 && p.g > 215 && p.b > 215;
}

/* Independent linear map: the frame's rectangle spans the data window. */
static void
expect_pixel (const RpeEditorFrame *fr,
              double                x,
              double                y,
              double               *px,
              double               *py)
{
  *px = fr->area.x + fr->area.width * (x - fr->x_min) / (fr->x_max - fr->x_min);
  *py = fr->area.y + fr->area.height * (fr->y_max - y) / (fr->y_max - fr->y_min);
}

/* -------------------------------------------------------------- pure tests */

static void
test_nice_ceiling (void)
{
  g_assert_cmpfloat_with_epsilon (rpe_editor_nice_ceiling (0.0), 1.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (rpe_editor_nice_ceiling (NAN), 1.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (rpe_editor_nice_ceiling (1.0), 1.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (rpe_editor_nice_ceiling (1.01), 2.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (rpe_editor_nice_ceiling (2.2), 2.5, 1e-12);
  g_assert_cmpfloat_with_epsilon (rpe_editor_nice_ceiling (3.0), 5.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (rpe_editor_nice_ceiling (7.0), 10.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (rpe_editor_nice_ceiling (0.031), 0.05, 1e-12);
  g_assert_cmpfloat_with_epsilon (rpe_editor_nice_ceiling (120.0), 200.0, 1e-9);
  /* Always >= v and < 2.5 v (the largest gap is 1 -> 2.5 ... 2 -> 5 is 2.5x). */
  for (double v = 1e-3; v < 1e3; v *= 1.37)
    {
      double c = rpe_editor_nice_ceiling (v);

      g_assert_true (c >= v * (1 - 1e-12));
      g_assert_true (c <= 2.5 * v);
    }
  g_assert_cmpfloat_with_epsilon (rpe_editor_wrap_phase (3 * G_PI / 2), -G_PI / 2, 1e-12);
  g_assert_cmpfloat_with_epsilon (rpe_editor_wrap_phase (-G_PI), G_PI, 1e-12);
  g_assert_cmpfloat_with_epsilon (rpe_editor_wrap_phase (G_PI), G_PI, 1e-12);
  g_assert_cmpfloat_with_epsilon (rpe_editor_wrap_phase (0.25 + 8 * G_PI), 0.25, 1e-9);
}

static void
test_mapping (void)
{
  RpeSpectrumRenderData sd;
  RpeStemRenderData td;
  RpeEditorFrame fr, prof;
  float f[2] = { 0.1f, 0.4f }, lambda[2] = { 0.5f, 3.1f };
  float v[5] = { 0.0f, 0.3f, -0.7f, 0.2f, 0.1f };
  float profile[9] = { 0 };
  GRand *rand = g_rand_new_with_seed (7);

  rpe_spectrum_render_data_init (&sd);
  sd.f = f;
  sd.lambda = lambda;
  sd.n_components = 2;
  g_assert_true (rpe_editor_spectrum_layout (&sd, 500, 300, &fr, &prof));
  g_assert_cmpfloat (fr.x_min, ==, 0.0);
  g_assert_cmpfloat (fr.x_max, ==, 0.5);
  g_assert_cmpfloat (fr.y_min, ==, 0.0);
  /* Auto axis: nice ceiling of 1.2 * 3.1 = 3.72 -> 5. */
  g_assert_cmpfloat_with_epsilon (fr.y_max, 5.0, 1e-12);
  g_assert_cmpfloat (prof.area.width, ==, 0.0);
  g_assert_true (fr.area.x >= 0 && fr.area.x + fr.area.width <= 500);
  g_assert_true (fr.area.y >= 0 && fr.area.y + fr.area.height <= 300);

  /* Round trips, and the map agrees with the independent linear formula. */
  for (int i = 0; i < 200; i++)
    {
      double x = g_rand_double_range (rand, -0.2, 0.7);
      double y = g_rand_double_range (rand, -1.0, 6.0);
      double px, py, ex, ey, x2, y2, ff, ll;

      rpe_editor_frame_to_pixel (&fr, x, y, &px, &py);
      expect_pixel (&fr, x, y, &ex, &ey);
      g_assert_cmpfloat_with_epsilon (px, ex, 1e-9);
      g_assert_cmpfloat_with_epsilon (py, ey, 1e-9);
      rpe_editor_frame_from_pixel (&fr, px, py, &x2, &y2);
      g_assert_cmpfloat_with_epsilon (x2, x, 1e-12);
      g_assert_cmpfloat_with_epsilon (y2, y, 1e-12);
      rpe_editor_spectrum_value_at (&fr, px, py, &ff, &ll);
      g_assert_cmpfloat_with_epsilon (ff, CLAMP (x, 0.0, 0.5), 1e-12);
      g_assert_cmpfloat_with_epsilon (ll, MAX (y, 0.0), 1e-12);
    }

  /* Hit testing: at a point's centre, within the radius, and not far away. */
  {
    double px, py;

    expect_pixel (&fr, 0.4, 3.1, &px, &py);
    g_assert_cmpint (rpe_editor_spectrum_hit (&sd, 500, 300, px, py, 8), ==, 1);
    g_assert_cmpint (rpe_editor_spectrum_hit (&sd, 500, 300, px + 5, py - 5, 8), ==, 1);
    g_assert_cmpint (rpe_editor_spectrum_hit (&sd, 500, 300, px + 9, py, 8), ==, -1);
    expect_pixel (&fr, 0.1, 0.5, &px, &py);
    g_assert_cmpint (rpe_editor_spectrum_hit (&sd, 500, 300, px, py + 3, 8), ==, 0);
  }

  /* With a profile the strip sits under the spectrum, sharing its width. */
  sd.profile = profile;
  sd.n_profile = 9;
  sd.profile_tau0 = -4;
  profile[4] = 0.3f;
  g_assert_true (rpe_editor_spectrum_layout (&sd, 500, 300, &fr, &prof));
  g_assert_cmpfloat (prof.area.height, >, 20.0);
  g_assert_cmpfloat (prof.area.y, >=, fr.area.y + fr.area.height);
  g_assert_cmpfloat (prof.area.y + prof.area.height, <=, 300.0);
  g_assert_cmpfloat (prof.x_min, ==, -4.0);
  g_assert_cmpfloat (prof.x_max, ==, 4.0);
  g_assert_cmpfloat_with_epsilon (prof.y_max, 0.5, 1e-12);
  g_assert_cmpfloat_with_epsilon (prof.y_min, -0.5, 1e-12);

  /* Stems: index i at the centre of its 1/n slot; symmetric auto range. */
  rpe_stem_render_data_init (&td);
  td.values = v;
  td.n = 5;
  g_assert_true (rpe_editor_stem_layout (&td, 400, 200, &fr));
  g_assert_cmpfloat_with_epsilon (fr.y_min, -1.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (fr.y_max, 1.0, 1e-12);
  for (size_t i = 0; i < 5; i++)
    {
      double cx = fr.area.x + (i + 0.5) * fr.area.width / 5.0;

      g_assert_cmpfloat_with_epsilon (rpe_editor_stem_index_at (&fr, cx), (double) i, 1e-9);
      g_assert_cmpint (rpe_editor_stem_nearest (&fr, 5, cx + 0.4 * fr.area.width / 5.0), ==, i);
      g_assert_cmpint (rpe_editor_stem_nearest (&fr, 5, cx - 0.4 * fr.area.width / 5.0), ==, i);
    }
  g_assert_cmpint (rpe_editor_stem_nearest (&fr, 5, -100.0), ==, 0);
  g_assert_cmpint (rpe_editor_stem_nearest (&fr, 5, 1e4), ==, 4);
  g_assert_cmpfloat_with_epsilon (rpe_editor_stem_value_at (&fr, fr.area.y, FALSE), 1.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (rpe_editor_stem_value_at (&fr, fr.area.y - 50, TRUE), 1.0, 1e-12);
  g_assert_cmpfloat (rpe_editor_stem_value_at (&fr, fr.area.y - 50, FALSE), >, 1.0);
  g_assert_cmpfloat_with_epsilon (rpe_editor_stem_value_at (&fr, fr.area.y + fr.area.height * 0.75, FALSE),
                                  -0.5, 1e-12);
  td.fixed_range = true;
  td.vmin = 0.0;
  td.vmax = 1.0;
  g_assert_true (rpe_editor_stem_layout (&td, 400, 200, &fr));
  g_assert_cmpfloat (fr.y_min, ==, 0.0);
  g_assert_cmpfloat (fr.y_max, ==, 1.0);
  g_assert_false (rpe_editor_stem_layout (&td, 30, 20, &fr));
  g_rand_free (rand);
}

/* A fast stroke (one segment over many columns) sets every column it crosses
 * to the linearly interpolated value. */
static void
test_stroke_pure (void)
{
  RpeStemRenderData td;
  RpeEditorFrame fr;
  float v[40];
  size_t first = 99, last = 99;
  double x0, y0, x1, y1;

  for (int i = 0; i < 40; i++)
    v[i] = 0.25f;
  rpe_stem_render_data_init (&td);
  td.values = v;
  td.n = 40;
  td.fixed_range = true;
  td.vmin = -1.0;
  td.vmax = 1.0;
  g_assert_true (rpe_editor_stem_layout (&td, 640, 240, &fr));

  /* From column 3 at value 0.8 to column 30 at value -0.6. */
  expect_pixel (&fr, 3.0, 0.8, &x0, &y0);
  expect_pixel (&fr, 30.0, -0.6, &x1, &y1);
  g_assert_true (rpe_editor_stem_stroke (&fr, v, 40, x0, y0, x1, y1, TRUE, &first, &last));
  g_assert_cmpuint (first, ==, 3);
  g_assert_cmpuint (last, ==, 30);
  for (int i = 0; i < 40; i++)
    {
      double expect = i < 3 || i > 30 ? 0.25 : 0.8 + (i - 3) * (-1.4 / 27.0);

      g_assert_cmpfloat_with_epsilon (v[i], expect, 1e-5);
    }

  /* Right to left, beyond the top: clamped to the range, order irrelevant. */
  expect_pixel (&fr, 12.2, 3.0, &x0, &y0);
  expect_pixel (&fr, 9.8, 3.0, &x1, &y1);
  g_assert_true (rpe_editor_stem_stroke (&fr, v, 40, x0, y0, x1, y1, TRUE, &first, &last));
  g_assert_cmpuint (first, ==, 10);
  g_assert_cmpuint (last, ==, 12);
  for (int i = 10; i <= 12; i++)
    g_assert_cmpfloat_with_epsilon (v[i], 1.0, 1e-6);
  g_assert_cmpfloat_with_epsilon (v[9], 0.8 + 6 * (-1.4 / 27.0), 1e-5);
  g_assert_cmpfloat_with_epsilon (v[13], 0.8 + 10 * (-1.4 / 27.0), 1e-5);

  /* A stroke inside one column sets just that column; off the plot, nothing. */
  expect_pixel (&fr, 20.1, 0.0, &x0, &y0);
  expect_pixel (&fr, 20.3, 0.5, &x1, &y1);
  g_assert_true (rpe_editor_stem_stroke (&fr, v, 40, x0, y0, x1, y1, TRUE, &first, &last));
  g_assert_cmpuint (first, ==, 20);
  g_assert_cmpuint (last, ==, 20);
  g_assert_cmpfloat_with_epsilon (v[20], 0.5, 1e-5);
  expect_pixel (&fr, 45.0, 0.0, &x0, &y0);
  expect_pixel (&fr, 50.0, 0.0, &x1, &y1);
  g_assert_false (rpe_editor_stem_stroke (&fr, v, 40, x0, y0, x1, y1, TRUE, &first, &last));
}

static cairo_surface_t *
render_spectrum (const RpeSpectrumRenderData *d,
                 int                          w,
                 int                          h)
{
  cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, w, h);
  cairo_t *cr = cairo_create (s);

  rpe_editor_render_spectrum (cr, d, w, h);
  g_assert_cmpint (cairo_status (cr), ==, CAIRO_STATUS_SUCCESS);
  cairo_destroy (cr);
  return s;
}

static void
test_render_spectrum (void)
{
  RpeSpectrumRenderData d;
  RpeEditorFrame fr;
  float f[3] = { 0.25f, 0.1f, 0.4f };
  float theta[3] = { 0.0f, (float) (G_PI / 2), (float) G_PI };
  float lambda[3] = { 1.0f, 0.5f, 1.5f };
  const double r = RPE_EDITOR_POINT_RADIUS, out = RPE_EDITOR_POINT_RADIUS + 4.0;
  cairo_surface_t *s;
  double px, py;

  rpe_spectrum_render_data_init (&d);
  d.f = f;
  d.theta = theta;
  d.lambda = lambda;
  d.n_components = 3;
  d.lambda_max = 2.0;
  memcpy (d.foreground, BLACK, sizeof d.foreground);
  memcpy (d.accent, RED, sizeof d.accent);
  memcpy (d.background, WHITE, sizeof d.background);
  s = render_spectrum (&d, 480, 320);
  g_assert_true (rpe_editor_spectrum_layout (&d, 480, 320, &fr, NULL));
  g_assert_cmpfloat (fr.y_max, ==, 2.0);

  /* Component 0 at (0.25, 1.0), phase 0: needle to the right only. */
  expect_pixel (&fr, 0.25, 1.0, &px, &py);
  g_assert_true (is_red (pixel_at (s, px, py)));
  g_assert_true (is_red (pixel_at (s, px + r - 2, py + 1)));
  g_assert_true (is_reddish (pixel_at (s, px + out, py)));
  g_assert_true (is_light (pixel_at (s, px - out, py - 2)));
  g_assert_true (is_light (pixel_at (s, px, py - out)));
  /* The spectral line from the baseline up to the point. */
  g_assert_true (is_reddish (pixel_at (s, px, fr.area.y + fr.area.height - 20)));
  g_assert_true (is_light (pixel_at (s, px + 12, fr.area.y + fr.area.height - 20)));

  /* Component 1 at (0.1, 0.5), phase pi/2: needle up, not right. */
  expect_pixel (&fr, 0.1, 0.5, &px, &py);
  g_assert_true (is_red (pixel_at (s, px, py)));
  g_assert_true (is_reddish (pixel_at (s, px, py - out)));
  g_assert_true (is_light (pixel_at (s, px + out, py - 2)));

  /* Component 2 at (0.4, 1.5), phase pi: needle to the left. */
  expect_pixel (&fr, 0.4, 1.5, &px, &py);
  g_assert_true (is_red (pixel_at (s, px, py)));
  g_assert_true (is_reddish (pixel_at (s, px - out, py)));
  g_assert_true (is_light (pixel_at (s, px + out, py - 2)));
  /* Nothing above it. */
  g_assert_true (is_light (pixel_at (s, px, py - 25)));
  cairo_surface_destroy (s);

  /* A gain above a fixed axis is drawn at the top edge, not outside. */
  lambda[2] = 9.0f;
  s = render_spectrum (&d, 480, 320);
  expect_pixel (&fr, 0.4, 2.0, &px, &py);
  g_assert_true (is_red (pixel_at (s, px, py + 1)));
  cairo_surface_destroy (s);

  /* With a profile strip: the curve reaches its peak value at its tau. */
  {
    float profile[21];
    RpeEditorFrame prof;

    for (int i = 0; i < 21; i++)
      profile[i] = (float) (0.8 * cos (2 * G_PI * 0.05 * (i - 10)));
    d.profile = profile;
    d.n_profile = 21;
    d.profile_tau0 = -10;
    lambda[2] = 1.5f;
    s = render_spectrum (&d, 480, 420);
    g_assert_true (rpe_editor_spectrum_layout (&d, 480, 420, &fr, &prof));
    g_assert_cmpfloat (prof.area.width, >, 0.0);
    g_assert_cmpfloat_with_epsilon (prof.y_max, 1.0, 1e-12);
    /* At tau = 0 the curve is at 0.8; at tau = +-5 it crosses 0. */
    expect_pixel (&prof, 0.0, 0.8, &px, &py);
    g_assert_false (is_light (pixel_at (s, px, py)));
    g_assert_true (is_light (pixel_at (s, px, py - 8)));
    cairo_surface_destroy (s);
  }
}

static cairo_surface_t *
render_stems (const RpeStemRenderData *d,
              int                      w,
              int                      h)
{
  cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, w, h);
  cairo_t *cr = cairo_create (s);

  rpe_editor_render_stems (cr, d, w, h);
  g_assert_cmpint (cairo_status (cr), ==, CAIRO_STATUS_SUCCESS);
  cairo_destroy (cr);
  return s;
}

static void
test_render_stems (void)
{
  RpeStemRenderData d;
  RpeEditorFrame fr;
  float v[6] = { 0.5f, -0.25f, 1.0f, 0.0f, -0.75f, 0.3f };
  cairo_surface_t *s;
  double px, py, zx, zy;

  rpe_stem_render_data_init (&d);
  d.values = v;
  d.n = 6;
  d.fixed_range = true;
  d.vmin = -1.0;
  d.vmax = 1.0;
  d.x_offset = -3;
  d.x_label = "lag τ";
  memcpy (d.foreground, BLACK, sizeof d.foreground);
  memcpy (d.accent, RED, sizeof d.accent);
  memcpy (d.background, WHITE, sizeof d.background);
  s = render_stems (&d, 420, 240);
  g_assert_true (rpe_editor_stem_layout (&d, 420, 240, &fr));

  for (int i = 0; i < 6; i++)
    {
      double dir = v[i] >= 0 ? -1.0 : 1.0;   /* pixel direction from zero to tip */

      expect_pixel (&fr, i, v[i], &px, &py);
      expect_pixel (&fr, i, 0.0, &zx, &zy);
      /* The tip at the value's height. */
      g_assert_true (is_red (pixel_at (s, px, py)));
      if (v[i] != 0.0f)
        {
          /* The stem between zero and the tip, and nothing beyond the tip. */
          g_assert_true (is_red (pixel_at (s, px, (py + zy) / 2)));
          if (fabs (v[i]) < 0.95)
            g_assert_true (is_light (pixel_at (s, px, py + dir * 9)));
        }
      /* Between stems there is only background (away from the zero line
       * and the frame). */
      if (v[i] != 0.0f && fabs (v[i]) < 0.95)
        g_assert_true (is_light (pixel_at (s, px + (i < 5 ? 1 : -1) * fr.area.width / 12.0, py)));
    }
  /* The zero line is drawn dark between stems. */
  expect_pixel (&fr, 1.5, 0.0, &zx, &zy);
  {
    Pixel p = pixel_at (s, zx, zy);

    g_assert_cmpint (p.r, <, 160);
    g_assert_cmpint (p.g, <, 160);
  }
  cairo_surface_destroy (s);

  /* Gates: fixed [0, 1]; the baseline is the bottom and 1.0 is the top. */
  d.vmin = 0.0;
  d.vmax = 1.0;
  v[1] = 0.25f;
  v[4] = 0.75f;
  s = render_stems (&d, 420, 240);
  g_assert_true (rpe_editor_stem_layout (&d, 420, 240, &fr));
  expect_pixel (&fr, 4, 0.75, &px, &py);
  g_assert_true (is_red (pixel_at (s, px, py)));
  g_assert_true (is_light (pixel_at (s, px, py - 9)));
  g_assert_true (is_red (pixel_at (s, px, fr.area.y + fr.area.height - 5)));
  cairo_surface_destroy (s);

  /* Many taps (FastRPB, N = 128: 255 weights) draw without tips, no errors. */
  {
    float w[255];

    for (int i = 0; i < 255; i++)
      w[i] = (float) exp (-fabs (i - 127.0) / 20.0);
    d.values = w;
    d.n = 255;
    d.x_offset = -127;
    d.fixed_range = false;
    s = render_stems (&d, 600, 200);
    g_assert_true (rpe_editor_stem_layout (&d, 600, 200, &fr));
    g_assert_cmpfloat_with_epsilon (fr.y_max, 1.0, 1e-12);
    /* One-pixel stems are snapped to the pixel grid: allow +-1 column. */
    expect_pixel (&fr, 127, 0.5, &px, &py);
    g_assert_true (is_reddish (pixel_at (s, px, py)) || is_reddish (pixel_at (s, px - 1, py))
                   || is_reddish (pixel_at (s, px + 1, py)));
    g_assert_true (is_light (pixel_at (s, px, fr.area.y + 4)));
    cairo_surface_destroy (s);
  }
}

/* ------------------------------------------------------------ widget tests */

static gboolean
child_laid_out (gpointer data)
{
  GtkWidget *child = data;

  return gtk_widget_get_mapped (child) && gtk_widget_get_width (child) > 0;
}

static GtkWidget *
show_in_window (GtkWidget *child,
                int        width,
                int        height)
{
  GtkWidget *window = gtk_window_new ();

  gtk_window_set_default_size (GTK_WINDOW (window), width, height);
  gtk_window_set_child (GTK_WINDOW (window), child);
  gtk_window_present (GTK_WINDOW (window));
  rpe_test_iterate_until (child_laid_out, child);
  g_assert_cmpint (gtk_widget_get_width (child), >, 100);
  /* drawn at least once, so snapshots have content */
  rpe_test_wait_frames (window, 2);
  return window;
}

typedef struct
{
  int    n_changed;
  int    n_finished;
  guint  lo;           /* union of the changed ranges */
  guint  hi;
  guint8 touched[256];
  guint  k;
  double f, theta, lambda;
  int    n_notify;
} Record;

static void
values_changed_cb (RpeStemEditor *editor,
                   guint          first,
                   guint          count,
                   Record        *rec)
{
  g_assert_cmpuint (count, >, 0);
  if (rec->n_changed == 0 || first < rec->lo)
    rec->lo = first;
  if (rec->n_changed == 0 || first + count - 1 > rec->hi)
    rec->hi = first + count - 1;
  for (guint i = first; i < first + count && i < 256; i++)
    rec->touched[i] = 1;
  rec->n_changed++;
}

static void
finished_cb (GtkWidget *editor,
             Record    *rec)
{
  rec->n_finished++;
}

static void
notify_cb (GObject    *object,
           GParamSpec *pspec,
           Record     *rec)
{
  rec->n_notify++;
}

static void
stem_pixel (RpeStemEditor *editor,
            double         i,
            double         v,
            double        *x,
            double        *y)
{
  RpeStemRenderData d;
  RpeEditorFrame fr;

  rpe_stem_editor_get_render_data (editor, &d);
  g_assert_true (rpe_editor_stem_layout (&d, gtk_widget_get_width (GTK_WIDGET (editor)),
                                         gtk_widget_get_height (GTK_WIDGET (editor)), &fr));
  expect_pixel (&fr, i, v, x, y);
}

static void
test_stem_widget (void)
{
  GtkWidget *widget = rpe_stem_editor_new ();
  RpeStemEditor *editor = RPE_STEM_EDITOR (widget);
  GtkWidget *window;
  Record rec = { 0 };
  float zeros[32] = { 0 };
  const float *v;
  gsize n;
  double x0, y0, x1, y1, lo, hi;

  rpe_stem_editor_set_values (editor, zeros, 32);
  rpe_stem_editor_set_label (editor, "tap j");
  g_signal_connect (editor, "values-changed", G_CALLBACK (values_changed_cb), &rec);
  g_signal_connect (editor, "editing-finished", G_CALLBACK (finished_cb), &rec);
  window = show_in_window (widget, 640, 260);

  rpe_stem_editor_get_range (editor, &lo, &hi);
  g_assert_cmpfloat (lo, ==, -1.0);
  g_assert_cmpfloat (hi, ==, 1.0);

  /* A fast stroke: press at tap 2 (value 0.5), one motion event at tap 29
   * (value -0.5), release.  Every tap in between is set, no gaps. */
  stem_pixel (editor, 2, 0.5, &x0, &y0);
  stem_pixel (editor, 29, -0.5, &x1, &y1);
  _rpe_stem_editor_stroke_begin (editor, x0, y0);
  g_assert_cmpint (rec.n_changed, ==, 1);
  g_assert_cmpint (rec.n_finished, ==, 0);
  _rpe_stem_editor_stroke_to (editor, x1, y1);
  _rpe_stem_editor_stroke_end (editor);
  g_assert_cmpint (rec.n_finished, ==, 1);
  g_assert_cmpuint (rec.lo, ==, 2);
  g_assert_cmpuint (rec.hi, ==, 29);
  for (int i = 0; i < 32; i++)
    g_assert_cmpint (rec.touched[i], ==, i >= 2 && i <= 29);
  v = rpe_stem_editor_get_values (editor, &n);
  g_assert_cmpuint (n, ==, 32);
  for (int i = 0; i < 32; i++)
    {
      double expect = i < 2 || i > 29 ? 0.0 : 0.5 - (i - 2) / 27.0;

      g_assert_cmpfloat_with_epsilon (v[i], expect, 1e-4);
    }
  g_assert_cmpint (rpe_stem_editor_get_selected (editor), ==, 29);
  /* The automatic range was refitted to the drawn values: [-0.5, 0.5]. */
  rpe_stem_editor_get_range (editor, &lo, &hi);
  g_assert_cmpfloat (lo, ==, -0.5);
  g_assert_cmpfloat (hi, ==, 0.5);

  /* Auto range: a stroke above the plot goes beyond the range; the range is
   * held during the stroke and refitted (nice, symmetric) at its end. */
  stem_pixel (editor, 5, 1.6, &x0, &y0);
  _rpe_stem_editor_stroke_begin (editor, x0, y0);
  rpe_stem_editor_get_range (editor, &lo, &hi);
  g_assert_cmpfloat (hi, ==, 0.5);
  g_assert_cmpfloat_with_epsilon (rpe_stem_editor_get_values (editor, NULL)[5], 1.6, 1e-4);
  _rpe_stem_editor_stroke_end (editor);
  rpe_stem_editor_get_range (editor, &lo, &hi);
  g_assert_cmpfloat (hi, ==, 2.0);
  g_assert_cmpfloat (lo, ==, -2.0);

  /* Gates: fixed [0, 1]; drawing above the top clamps to 1, below to 0. */
  rpe_stem_editor_set_range (editor, TRUE, 0.0, 1.0);
  memset (&rec, 0, sizeof rec);
  stem_pixel (editor, 10, 1.7, &x0, &y0);
  stem_pixel (editor, 12, -0.4, &x1, &y1);
  _rpe_stem_editor_stroke_begin (editor, x0, y0);
  _rpe_stem_editor_stroke_to (editor, x1, y1);
  _rpe_stem_editor_stroke_end (editor);
  v = rpe_stem_editor_get_values (editor, NULL);
  g_assert_cmpfloat_with_epsilon (v[10], 1.0, 1e-6);
  g_assert_cmpfloat_with_epsilon (v[12], 0.0, 1e-6);
  /* At column 11 the pointer was at 1.7 + (-0.4 - 1.7) / 2 = 0.65. */
  g_assert_cmpfloat_with_epsilon (v[11], 0.65, 1e-4);
  g_assert_cmpuint (rec.lo, ==, 10);
  g_assert_cmpuint (rec.hi, ==, 12);

  /* Keyboard: select with arrows, nudge with Up/Down (1/50 of the range). */
  memset (&rec, 0, sizeof rec);
  rpe_stem_editor_set_selected (editor, 11);
  g_assert_true (_rpe_stem_editor_handle_key (editor, GDK_KEY_Right, 0));
  g_assert_cmpint (rpe_stem_editor_get_selected (editor), ==, 12);
  g_assert_true (_rpe_stem_editor_handle_key (editor, GDK_KEY_Up, 0));
  g_assert_true (_rpe_stem_editor_handle_key (editor, GDK_KEY_Up, 0));
  g_assert_cmpfloat_with_epsilon (rpe_stem_editor_get_values (editor, NULL)[12], 0.04, 1e-6);
  g_assert_true (_rpe_stem_editor_handle_key (editor, GDK_KEY_Down, GDK_SHIFT_MASK));
  g_assert_cmpfloat_with_epsilon (rpe_stem_editor_get_values (editor, NULL)[12], 0.038, 1e-6);
  g_assert_cmpint (rec.n_changed, ==, 3);
  g_assert_cmpint (rec.n_finished, ==, 3);
  g_assert_cmpuint (rec.lo, ==, 12);
  g_assert_cmpuint (rec.hi, ==, 12);
  g_assert_true (_rpe_stem_editor_handle_key (editor, GDK_KEY_End, 0));
  g_assert_cmpint (rpe_stem_editor_get_selected (editor), ==, 31);
  g_assert_true (_rpe_stem_editor_handle_key (editor, GDK_KEY_Right, 0));
  g_assert_cmpint (rpe_stem_editor_get_selected (editor), ==, 31);
  /* Clamped at the bottom of [0, 1]. */
  g_assert_true (_rpe_stem_editor_handle_key (editor, GDK_KEY_Down, 0));
  g_assert_cmpfloat (rpe_stem_editor_get_values (editor, NULL)[31], ==, 0.0f);
  g_assert_false (_rpe_stem_editor_handle_key (editor, GDK_KEY_a, 0));

  /* Properties notify. */
  g_signal_connect (editor, "notify::x-offset", G_CALLBACK (notify_cb), &rec);
  rpe_stem_editor_set_x_offset (editor, -15);
  rpe_stem_editor_set_x_offset (editor, -15);
  g_assert_cmpint (rec.n_notify, ==, 1);
  g_assert_cmpint (rpe_stem_editor_get_x_offset (editor), ==, -15);

  rpe_test_wait_frames (window, 1);
  gtk_window_destroy (GTK_WINDOW (window));
  rpe_test_drain ();
}

static void
spectrum_pixel (RpeSpectrumEditor *editor,
                double             f,
                double             lambda,
                double            *x,
                double            *y)
{
  RpeSpectrumRenderData d;
  RpeEditorFrame fr;

  rpe_spectrum_editor_get_render_data (editor, &d);
  g_assert_true (rpe_editor_spectrum_layout (&d, gtk_widget_get_width (GTK_WIDGET (editor)),
                                             gtk_widget_get_height (GTK_WIDGET (editor)), &fr, NULL));
  expect_pixel (&fr, f, lambda, x, y);
}

static void
component_changed_cb (RpeSpectrumEditor *editor,
                      guint              k,
                      double             f,
                      double             theta,
                      double             lambda,
                      Record            *rec)
{
  rec->n_changed++;
  rec->k = k;
  rec->f = f;
  rec->theta = theta;
  rec->lambda = lambda;
}

static void
test_spectrum_widget (void)
{
  GtkWidget *widget = rpe_spectrum_editor_new ();
  RpeSpectrumEditor *editor = RPE_SPECTRUM_EDITOR (widget);
  GtkWidget *window;
  Record rec = { 0 };
  float f[3] = { 0.05f, 0.2f, 0.45f };
  float theta[3] = { 0.0f, 1.0f, -2.0f };
  float lambda[3] = { 0.3f, 0.9f, 0.6f };
  double x, y, ff, tt, ll;

  rpe_spectrum_editor_set_components (editor, f, theta, lambda, 3);
  g_assert_cmpfloat (rpe_spectrum_editor_get_lambda_max (editor), ==, 2.0);  /* 1.2 * 0.9 -> 2 */
  g_signal_connect (editor, "component-changed", G_CALLBACK (component_changed_cb), &rec);
  g_signal_connect (editor, "editing-finished", G_CALLBACK (finished_cb), &rec);
  g_signal_connect (editor, "notify::lambda-max", G_CALLBACK (notify_cb), &rec);
  window = show_in_window (widget, 560, 320);

  /* Nowhere near a point: nothing grabbed. */
  spectrum_pixel (editor, 0.33, 1.8, &x, &y);
  g_assert_false (_rpe_spectrum_editor_drag_begin (editor, x, y, 0));

  /* Grab component 1 slightly off-centre; the grab offset is kept. */
  spectrum_pixel (editor, 0.2, 0.9, &x, &y);
  g_assert_true (_rpe_spectrum_editor_drag_begin (editor, x + 3, y - 2, 0));
  g_assert_cmpint (rpe_spectrum_editor_get_selected (editor), ==, 1);
  {
    double tx, ty;

    spectrum_pixel (editor, 0.3, 0.8, &tx, &ty);
    _rpe_spectrum_editor_drag_to (editor, tx + 3, ty - 2);
  }
  g_assert_cmpint (rec.n_changed, ==, 1);
  g_assert_cmpuint (rec.k, ==, 1);
  g_assert_cmpfloat_with_epsilon (rec.f, 0.3, 1e-5);
  g_assert_cmpfloat_with_epsilon (rec.lambda, 0.8, 1e-5);
  g_assert_cmpfloat_with_epsilon (rec.theta, 1.0, 1e-6);
  g_assert_true (rpe_spectrum_editor_get_component (editor, 1, &ff, &tt, &ll));
  g_assert_cmpfloat_with_epsilon (ff, 0.3, 1e-5);
  g_assert_cmpfloat_with_epsilon (ll, 0.8, 1e-5);

  /* Past the right edge and below the baseline: clamped to 0.5 and 0. */
  spectrum_pixel (editor, 0.9, -0.7, &x, &y);
  _rpe_spectrum_editor_drag_to (editor, x + 3, y - 2);
  g_assert_cmpfloat (rec.f, ==, 0.5);
  g_assert_cmpfloat (rec.lambda, ==, 0.0);
  g_assert_cmpint (rec.n_notify, ==, 0);

  /* Above the top: the gain follows and the axis grows to hold it. */
  spectrum_pixel (editor, 0.25, 2.6, &x, &y);
  _rpe_spectrum_editor_drag_to (editor, x + 3, y - 2);
  g_assert_cmpfloat_with_epsilon (rec.lambda, 2.6, 1e-4);
  g_assert_cmpfloat (rpe_spectrum_editor_get_lambda_max (editor), >=, 2.6);
  g_assert_cmpint (rec.n_notify, >=, 1);
  g_assert_cmpint (rec.n_finished, ==, 0);
  _rpe_spectrum_editor_drag_end (editor);
  g_assert_cmpint (rec.n_finished, ==, 1);
  g_assert_cmpint (rec.n_changed, ==, 3);
  /* Still a nice ceiling holding the data (1.2 * 2.6 = 3.12 -> 5). */
  g_assert_cmpfloat (rpe_spectrum_editor_get_lambda_max (editor), ==, 5.0);

  /* Shift+drag turns the phase: 45 px up is a quarter turn counter-clockwise. */
  memset (&rec, 0, sizeof rec);
  spectrum_pixel (editor, 0.05, 0.3, &x, &y);
  g_assert_true (_rpe_spectrum_editor_drag_begin (editor, x, y, GDK_SHIFT_MASK));
  _rpe_spectrum_editor_drag_to (editor, x + 20, y - 45);
  g_assert_cmpuint (rec.k, ==, 0);
  g_assert_cmpfloat_with_epsilon (rec.theta, G_PI / 2, 1e-5);
  g_assert_cmpfloat_with_epsilon (rec.f, 0.05, 1e-7);     /* position unchanged */
  g_assert_cmpfloat_with_epsilon (rec.lambda, 0.3, 1e-7);
  _rpe_spectrum_editor_drag_to (editor, x, y - 180);        /* a full turn: wraps */
  g_assert_cmpfloat_with_epsilon (rec.theta, 0.0, 1e-5);
  _rpe_spectrum_editor_drag_end (editor);
  g_assert_cmpint (rec.n_finished, ==, 1);

  /* Scroll over a point turns its phase; elsewhere it is not consumed. */
  spectrum_pixel (editor, 0.45, 0.6, &x, &y);
  g_assert_true (_rpe_spectrum_editor_scroll (editor, x, y, -1.0));
  g_assert_cmpuint (rec.k, ==, 2);
  g_assert_cmpfloat_with_epsilon (rec.theta, -2.0 + G_PI / 24, 1e-5);
  spectrum_pixel (editor, 0.35, 4.0, &x, &y);
  g_assert_false (_rpe_spectrum_editor_scroll (editor, x, y, -1.0));

  /* Keyboard: Tab walks the points and then lets focus go. */
  rpe_spectrum_editor_set_selected (editor, -1);
  g_assert_true (_rpe_spectrum_editor_handle_key (editor, GDK_KEY_Tab, 0));
  g_assert_cmpint (rpe_spectrum_editor_get_selected (editor), ==, 0);
  g_assert_true (_rpe_spectrum_editor_handle_key (editor, GDK_KEY_Tab, 0));
  g_assert_true (_rpe_spectrum_editor_handle_key (editor, GDK_KEY_Tab, 0));
  g_assert_cmpint (rpe_spectrum_editor_get_selected (editor), ==, 2);
  g_assert_false (_rpe_spectrum_editor_handle_key (editor, GDK_KEY_Tab, 0));
  g_assert_true (_rpe_spectrum_editor_handle_key (editor, GDK_KEY_ISO_Left_Tab, GDK_SHIFT_MASK));
  g_assert_cmpint (rpe_spectrum_editor_get_selected (editor), ==, 1);

  /* Arrows nudge the selected point; f stays clamped. */
  memset (&rec, 0, sizeof rec);
  rpe_spectrum_editor_set_component (editor, 1, 0.2, 0.5, 1.0);
  g_assert_true (_rpe_spectrum_editor_handle_key (editor, GDK_KEY_Right, 0));
  g_assert_cmpfloat_with_epsilon (rec.f, 0.205, 1e-6);
  g_assert_true (_rpe_spectrum_editor_handle_key (editor, GDK_KEY_Left, GDK_SHIFT_MASK));
  g_assert_cmpfloat_with_epsilon (rec.f, 0.2045, 1e-6);
  {
    double top = rpe_spectrum_editor_get_lambda_max (editor);

    g_assert_true (_rpe_spectrum_editor_handle_key (editor, GDK_KEY_Up, 0));
    g_assert_cmpfloat_with_epsilon (rec.lambda, 1.0 + top / 50.0, 1e-6);
  }
  g_assert_true (_rpe_spectrum_editor_handle_key (editor, GDK_KEY_Page_Up, 0));
  g_assert_cmpfloat_with_epsilon (rec.theta, 0.5 + G_PI / 12, 1e-6);
  g_assert_cmpint (rec.n_changed, ==, 4);
  g_assert_cmpint (rec.n_finished, ==, 4);
  rpe_spectrum_editor_set_component (editor, 1, 0.499, 0.0, 0.0);
  g_assert_true (_rpe_spectrum_editor_handle_key (editor, GDK_KEY_Right, 0));
  g_assert_cmpfloat (rec.f, ==, 0.5);
  g_assert_true (_rpe_spectrum_editor_handle_key (editor, GDK_KEY_Down, 0));
  g_assert_cmpfloat (rec.lambda, ==, 0.0);

  /* set_components clamps what it is given. */
  {
    float bf[2] = { -0.2f, 0.9f }, bl[2] = { -1.0f, 2.0f };
    const float *gf, *gl, *gt;

    rpe_spectrum_editor_set_components (editor, bf, NULL, bl, 2);
    g_assert_cmpuint (rpe_spectrum_editor_get_components (editor, &gf, &gt, &gl), ==, 2);
    g_assert_cmpfloat (gf[0], ==, 0.0f);
    g_assert_cmpfloat (gf[1], ==, 0.5f);
    g_assert_cmpfloat (gl[0], ==, 0.0f);
    g_assert_cmpfloat (gl[1], ==, 2.0f);
    g_assert_cmpfloat (gt[0], ==, 0.0f);
    g_assert_cmpint (rpe_spectrum_editor_get_selected (editor), ==, 1);
    g_assert_cmpfloat (rpe_spectrum_editor_get_lambda_max (editor), ==, 2.5);
  }

  rpe_test_wait_frames (window, 1);
  gtk_window_destroy (GTK_WINDOW (window));
  rpe_test_drain ();
}

/* Both editors (and a gate bar) in one window, as the explorer will show
 * them: realised without warnings, drawn with the theme's colours.  The
 * window is rendered to a PNG (RPE_EDITORS_SCREENSHOT, or the temp dir). */
static void
test_screenshot (void)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 12);
  GtkWidget *row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  GtkWidget *spectrum = rpe_spectrum_editor_new ();
  GtkWidget *taps = rpe_stem_editor_new ();
  GtkWidget *weights = rpe_stem_editor_new ();
  GtkWidget *gates = rpe_stem_editor_new ();
  GtkWidget *window;
  float f[4] = { 0.02f, 0.11f, 0.23f, 0.41f };
  float theta[4] = { 0.0f, 1.2f, -2.4f, 2.9f };
  float lambda[4] = { 1.3f, 0.8f, 0.55f, 0.3f };
  float profile[65], wq[16], w[127], g[16];
  GtkSnapshot *snap;
  GdkPaintable *paintable;
  GskRenderNode *node;
  GdkTexture *texture;
  const char *env = g_getenv ("RPE_EDITORS_SCREENSHOT");
  char *path;
  int width, height;

  for (int i = 0; i < 65; i++)
    {
      double tau = i - 32, p = 0.0;

      for (int k = 0; k < 4; k++)
        p += lambda[k] * lambda[k] * cos (2 * G_PI * f[k] * tau + theta[k]);
      profile[i] = (float) (p / 8.0);   /* P(tau) = 1/(2K) sum lambda^2 cos(...) */
    }
  for (int j = 0; j < 16; j++)
    {
      wq[j] = (float) (exp (-j / 5.0) * cos (j * 0.7));
      g[j] = (float) (0.5 + 0.45 * sin (j * 0.9));
    }
  for (int i = 0; i < 127; i++)
    w[i] = (float) (0.6 * exp (-fabs (i - 63.0) / 12.0) * (i < 63 ? 0.5 : 1.0));

  rpe_spectrum_editor_set_components (RPE_SPECTRUM_EDITOR (spectrum), f, theta, lambda, 4);
  rpe_spectrum_editor_set_profile (RPE_SPECTRUM_EDITOR (spectrum), profile, 65, -32);
  rpe_spectrum_editor_set_selected (RPE_SPECTRUM_EDITOR (spectrum), 1);
  rpe_spectrum_editor_set_title (RPE_SPECTRUM_EDITOR (spectrum), "Sines of head 0, feature 3");
  rpe_stem_editor_set_values (RPE_STEM_EDITOR (taps), wq, 16);
  rpe_stem_editor_set_label (RPE_STEM_EDITOR (taps), "tap j");
  rpe_stem_editor_set_title (RPE_STEM_EDITOR (taps), "Query filter wq");
  rpe_stem_editor_set_selected (RPE_STEM_EDITOR (taps), 4);
  rpe_stem_editor_set_values (RPE_STEM_EDITOR (weights), w, 127);
  rpe_stem_editor_set_x_offset (RPE_STEM_EDITOR (weights), -63);
  rpe_stem_editor_set_label (RPE_STEM_EDITOR (weights), "lag τ");
  rpe_stem_editor_set_title (RPE_STEM_EDITOR (weights), "FastRPB weights w_τ");
  rpe_stem_editor_set_range (RPE_STEM_EDITOR (gates), TRUE, 0.0, 1.0);
  rpe_stem_editor_set_values (RPE_STEM_EDITOR (gates), g, 16);
  rpe_stem_editor_set_label (RPE_STEM_EDITOR (gates), "feature d");
  rpe_stem_editor_set_title (RPE_STEM_EDITOR (gates), "Gates g");

  gtk_box_append (GTK_BOX (row), spectrum);
  gtk_box_append (GTK_BOX (row), taps);
  gtk_box_append (GTK_BOX (box), row);
  row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  gtk_widget_set_vexpand (row, TRUE);
  gtk_box_append (GTK_BOX (row), weights);
  gtk_box_append (GTK_BOX (row), gates);
  gtk_box_append (GTK_BOX (box), row);
  gtk_widget_set_margin_start (box, 12);
  gtk_widget_set_margin_end (box, 12);
  gtk_widget_set_margin_top (box, 12);
  gtk_widget_set_margin_bottom (box, 12);
  window = show_in_window (box, 1000, 600);
  gtk_widget_grab_focus (spectrum);
  rpe_test_wait_frames (window, 2);

  g_assert_cmpint (gtk_widget_get_width (spectrum), >, 200);
  g_assert_cmpint (gtk_widget_get_height (gates), >, 100);

  width = gtk_widget_get_width (window);
  height = gtk_widget_get_height (window);
  paintable = gtk_widget_paintable_new (window);
  snap = gtk_snapshot_new ();
  gdk_paintable_snapshot (paintable, snap, width, height);
  node = gtk_snapshot_free_to_node (snap);
  g_assert_nonnull (node);
  texture = gsk_renderer_render_texture (gtk_native_get_renderer (GTK_NATIVE (window)), node,
                                         &GRAPHENE_RECT_INIT (0, 0, width, height));
  g_assert_nonnull (texture);
  path = env != NULL ? g_strdup (env) : g_build_filename (rpe_test_tmpdir (), "editors.png", NULL);
  g_assert_true (gdk_texture_save_to_png (texture, path));
  g_test_message ("screenshot: %s", path);

  /* The selected spectrum point is drawn in the accent colour where the
   * mapping puts it (a blue-dominant pixel, the theme's accent). */
  {
    gsize stride = (gsize) width * 4;
    guchar *pixels = g_malloc ((gsize) height * stride);
    graphene_point_t pt;
    double x, y;
    const guchar *p;

    gdk_texture_download (texture, pixels, stride);
    spectrum_pixel (RPE_SPECTRUM_EDITOR (spectrum), f[0], lambda[0], &x, &y);
    g_assert_true (gtk_widget_compute_point (spectrum, window, &GRAPHENE_POINT_INIT (x, y), &pt));
    p = pixels + (gsize) pt.y * stride + (gsize) pt.x * 4;   /* BGRA, premultiplied */
    g_test_message ("pixel at the point: %d %d %d", p[2], p[1], p[0]);
    g_assert_cmpint (p[0], >, p[2] + 60);
    g_free (pixels);
  }

  g_free (path);
  gsk_render_node_unref (node);
  g_object_unref (texture);
  g_object_unref (paintable);
  gtk_window_destroy (GTK_WINDOW (window));
  rpe_test_drain ();
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/ui/editors/render/nice-ceiling", test_nice_ceiling);
  g_test_add_func ("/ui/editors/render/mapping", test_mapping);
  g_test_add_func ("/ui/editors/render/stroke", test_stroke_pure);
  g_test_add_func ("/ui/editors/render/spectrum-pixels", test_render_spectrum);
  g_test_add_func ("/ui/editors/render/stem-pixels", test_render_stems);

  if (gtk_init_check ())
    {
      g_test_add_func ("/ui/editors/stem/widget", test_stem_widget);
      g_test_add_func ("/ui/editors/spectrum/widget", test_spectrum_widget);
      g_test_add_func ("/ui/editors/screenshot", test_screenshot);
    }
  else
    g_test_message ("no display: widget tests skipped");

  return g_test_run ();
}

#include "config.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <string.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cairo.h>
#include <stdlib.h>

#include "rpe-capture.h"
#include "rpe-test-utils.h"

double
rpe_test_max_rel_err (const float  *a,
                      const double *ref,
                      size_t        n,
                      double        floor)
{
  double scale = floor, err = 0;

  for (size_t i = 0; i < n; i++)
    scale = MAX (scale, fabs (ref[i]));
  for (size_t i = 0; i < n; i++)
    {
      double e = fabs ((double) a[i] - ref[i]);
      if (!(e <= err))   /* NaN counts as infinite error */
        err = isnan (e) ? INFINITY : e;
    }
  return err / scale;
}

double
rpe_test_max_abs_err (const float  *a,
                      const double *ref,
                      size_t        n)
{
  double err = 0;

  for (size_t i = 0; i < n; i++)
    {
      double e = fabs ((double) a[i] - ref[i]);
      if (!(e <= err))
        err = isnan (e) ? INFINITY : e;
    }
  return err;
}

static char *tmpdir;

static void
remove_tree (const char *path)
{
  GDir *dir = g_dir_open (path, 0, NULL);
  const char *name;

  if (dir != NULL)
    {
      while ((name = g_dir_read_name (dir)) != NULL)
        {
          char *child = g_build_filename (path, name, NULL);
          if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
            remove_tree (child);
          else
            g_unlink (child);
          g_free (child);
        }
      g_dir_close (dir);
    }
  g_rmdir (path);
}

static void
cleanup_tmpdir (void)
{
  if (tmpdir != NULL)
    remove_tree (tmpdir);
  g_clear_pointer (&tmpdir, g_free);
}

const char *
rpe_test_tmpdir (void)
{
  if (tmpdir == NULL)
    {
      tmpdir = g_dir_make_tmp ("rpe-test-XXXXXX", NULL);
      g_assert_nonnull (tmpdir);
      atexit (cleanup_tmpdir);
    }
  return tmpdir;
}

char *
rpe_test_tmp_path (const char *name)
{
  return g_build_filename (rpe_test_tmpdir (), name, NULL);
}

int
rpe_test_run_cli_argv (const char *const *args,
                       char             **out_out,
                       char             **err_out)
{
  const char *rpe = g_getenv ("RPE_CLI");
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr (GError) error = NULL;
  int wait_status = 0;
  gboolean failed;

  g_assert_nonnull (rpe);
  g_ptr_array_add (argv, (gpointer) rpe);
  for (gsize i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               &out, &err, &wait_status, &error));
  g_assert_no_error (error);
  failed = !WIFEXITED (wait_status) || WEXITSTATUS (wait_status) != 0;
  if (g_test_verbose () || (failed && out_out == NULL && err_out == NULL))
    {
      g_autofree char *line = g_strjoinv (" ", (char **) args);
      g_printerr ("$ rpe %s\n%s%s", line, out, err);
    }
  if (out_out != NULL)
    *out_out = g_steal_pointer (&out);
  if (err_out != NULL)
    *err_out = g_steal_pointer (&err);
  g_assert_true (WIFEXITED (wait_status));
  return WEXITSTATUS (wait_status);
}

int
rpe_test_run_cli (char       **out_out,
                  char       **err_out,
                  const char  *format,
                  ...)
{
  va_list ap;
  g_autofree char *cmdline = NULL;
  g_auto (GStrv) words = NULL;
  g_autoptr (GError) error = NULL;

  va_start (ap, format);
  cmdline = g_strdup_vprintf (format, ap);
  va_end (ap);
  g_assert_true (g_shell_parse_argv (cmdline, NULL, &words, &error));
  g_assert_no_error (error);
  return rpe_test_run_cli_argv ((const char *const *) words, out_out, err_out);
}

int
rpe_test_run_cli_args (char       **out_out,
                       char       **err_out,
                       const char  *first,
                       ...)
{
  g_autoptr (GPtrArray) words = g_ptr_array_new ();
  va_list ap;

  va_start (ap, first);
  for (const char *a = first; a != NULL; a = va_arg (ap, const char *))
    g_ptr_array_add (words, (gpointer) a);
  va_end (ap);
  g_ptr_array_add (words, NULL);
  return rpe_test_run_cli_argv ((const char *const *) words->pdata, out_out, err_out);
}

int
rpe_test_run_cli_export (const char        *view,
                         const char *const *args,
                         const char        *out)
{
  g_autoptr (GPtrArray) words = g_ptr_array_new ();
  g_autofree char *err = NULL;
  int status;

  g_ptr_array_add (words, (gpointer) "export");
  if (view != NULL)
    g_ptr_array_add (words, (gpointer) view);
  for (gsize i = 0; args[i] != NULL; i++)
    g_ptr_array_add (words, (gpointer) args[i]);
  g_ptr_array_add (words, (gpointer) "-o");
  g_ptr_array_add (words, (gpointer) out);
  g_ptr_array_add (words, NULL);
  status = rpe_test_run_cli_argv ((const char *const *) words->pdata, NULL, &err);
  if (status != 0)
    g_test_message ("rpe export failed: %s", err);
  return status;
}

double
rpe_test_png_difference (const char *a_path,
                         const char *b_path,
                         int        *max_delta)
{
  cairo_surface_t *a = cairo_image_surface_create_from_png (a_path);
  cairo_surface_t *b = cairo_image_surface_create_from_png (b_path);
  int w, h, sa, sb;
  const guint8 *da, *db;
  gsize differ = 0;
  int largest;

  g_assert_cmpint (cairo_surface_status (a), ==, CAIRO_STATUS_SUCCESS);
  g_assert_cmpint (cairo_surface_status (b), ==, CAIRO_STATUS_SUCCESS);
  w = cairo_image_surface_get_width (a);
  h = cairo_image_surface_get_height (a);
  g_assert_cmpint (w, ==, cairo_image_surface_get_width (b));
  g_assert_cmpint (h, ==, cairo_image_surface_get_height (b));
  sa = cairo_image_surface_get_stride (a);
  sb = cairo_image_surface_get_stride (b);
  da = cairo_image_surface_get_data (a);
  db = cairo_image_surface_get_data (b);
  if (max_delta == NULL)
    max_delta = &largest;
  *max_delta = 0;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        gboolean same = TRUE;

        for (int c = 0; c < 4; c++)
          {
            int delta = abs ((int) da[y * sa + 4 * x + c] - (int) db[y * sb + 4 * x + c]);

            *max_delta = MAX (*max_delta, delta);
            same = same && delta == 0;
          }
        differ += !same;
      }
  cairo_surface_destroy (a);
  cairo_surface_destroy (b);
  return (double) differ / ((double) w * h);
}

static void
word_clear (gpointer p)
{
  g_free (((RpeTestWord *) p)->text);
}

static double
word_attr (const char *tag,
           const char *name)
{
  g_autofree char *key = g_strdup_printf (" %s=\"", name);
  const char *p = strstr (tag, key);

  g_assert_nonnull (p);
  return g_ascii_strtod (p + strlen (key), NULL);
}

GPtrArray *
rpe_test_pdf_words (const char *path)
{
  g_autofree char *tool = g_find_program_in_path ("pdftotext");
  g_autofree char *out = NULL;
  GPtrArray *pages;
  GArray *page = NULL;
  const char *p;
  int status;

  if (tool == NULL)
    return NULL;
  g_assert_true (g_spawn_sync (NULL, (char *[]) { tool, "-bbox", "-enc", "UTF-8", (char *) path, "-", NULL }, NULL,
                               G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out, NULL, &status, NULL));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  pages = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  for (p = out; (p = strchr (p, '<')) != NULL; p++)
    {
      if (g_str_has_prefix (p, "<page "))
        {
          page = g_array_new (FALSE, TRUE, sizeof (RpeTestWord));
          g_array_set_clear_func (page, word_clear);
          g_ptr_array_add (pages, page);
        }
      else if (g_str_has_prefix (p, "<word "))
        {
          const char *close = strchr (p, '>'), *end = strstr (p, "</word>");
          g_autofree char *tag = g_strndup (p, close - p);
          RpeTestWord w;

          g_assert_nonnull (page);
          w.x0 = word_attr (tag, "xMin");
          w.y0 = word_attr (tag, "yMin");
          w.x1 = word_attr (tag, "xMax");
          w.y1 = word_attr (tag, "yMax");
          w.text = g_strndup (close + 1, end - close - 1);
          g_array_append_val (page, w);
        }
    }
  return pages;
}

/* ---- .npy and .npz bytes ---------------------------------------------------- */

static guint32
test_crc32 (const guint8 *p, gsize n)
{
  guint32 c = 0xFFFFFFFFu;

  for (gsize i = 0; i < n; i++)
    {
      c ^= p[i];
      for (int k = 0; k < 8; k++)
        c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
    }
  return ~c;
}

static void
put16 (GByteArray *b, guint v)
{
  guint8 x[2] = { (guint8) v, (guint8) (v >> 8) };

  g_byte_array_append (b, x, 2);
}

static void
put32 (GByteArray *b, guint32 v)
{
  guint8 x[4] = { (guint8) v, (guint8) (v >> 8), (guint8) (v >> 16), (guint8) (v >> 24) };

  g_byte_array_append (b, x, 4);
}

GByteArray *
rpe_test_npy_bytes (const char *descr, gsize ndim, const gsize *shape, const void *payload, gsize payload_len)
{
  GByteArray *b = g_byte_array_new ();
  GString    *hdr = g_string_new (NULL);

  g_string_printf (hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (gsize i = 0; i < ndim; i++)
    g_string_append_printf (hdr, "%" G_GSIZE_FORMAT "%s", shape[i], ndim == 1 ? "," : i + 1 < ndim ? ", " : "");
  g_string_append (hdr, "), }");
  while ((10 + hdr->len + 1) % 64 != 0)
    g_string_append_c (hdr, ' ');
  g_string_append_c (hdr, '\n');
  g_byte_array_append (b, (const guint8 *) "\x93NUMPY\x01\x00", 8);
  put16 (b, (guint) hdr->len);
  g_byte_array_append (b, (const guint8 *) hdr->str, (guint) hdr->len);
  if (payload_len > 0)
    g_byte_array_append (b, payload, (guint) payload_len);
  g_string_free (hdr, TRUE);
  return b;
}

static GBytes *
deflate_raw (const guint8 *data, gsize len)
{
  GZlibCompressor *z = g_zlib_compressor_new (G_ZLIB_COMPRESSOR_FORMAT_RAW, 6);
  GInputStream    *mem = g_memory_input_stream_new_from_data (data, (gssize) len, NULL);
  GInputStream    *conv = g_converter_input_stream_new (mem, G_CONVERTER (z));
  GByteArray      *out = g_byte_array_new ();
  guint8           buf[4096];
  gssize           n;

  while ((n = g_input_stream_read (conv, buf, sizeof buf, NULL, NULL)) > 0)
    g_byte_array_append (out, buf, (guint) n);
  g_assert_cmpint (n, ==, 0);
  g_object_unref (conv);
  g_object_unref (mem);
  g_object_unref (z);
  return g_byte_array_free_to_bytes (out);
}

GByteArray *
rpe_test_zip_bytes (const char *const *names, GByteArray *const *data, gsize n, gboolean deflate)
{
  GByteArray *b = g_byte_array_new ();
  GByteArray *cd = g_byte_array_new ();
  guint32     cd_off;

  for (gsize i = 0; i < n; i++)
    {
      GBytes       *z = deflate ? deflate_raw (data[i]->data, data[i]->len) : NULL;
      const guint8 *payload = z != NULL ? g_bytes_get_data (z, NULL) : data[i]->data;
      gsize         plen = z != NULL ? g_bytes_get_size (z) : data[i]->len;
      guint32       crc = test_crc32 (data[i]->data, data[i]->len), off = b->len;
      guint         nlen = (guint) strlen (names[i]);

      put32 (b, 0x04034b50);
      put16 (b, 20);
      put16 (b, 0);
      put16 (b, deflate ? 8 : 0);
      put16 (b, 0);
      put16 (b, 0);
      put32 (b, crc);
      put32 (b, (guint32) plen);
      put32 (b, data[i]->len);
      put16 (b, nlen);
      put16 (b, 0);
      g_byte_array_append (b, (const guint8 *) names[i], nlen);
      g_byte_array_append (b, payload, (guint) plen);

      put32 (cd, 0x02014b50);
      put16 (cd, 20);
      put16 (cd, 20);
      put16 (cd, 0);
      put16 (cd, deflate ? 8 : 0);
      put16 (cd, 0);
      put16 (cd, 0);
      put32 (cd, crc);
      put32 (cd, (guint32) plen);
      put32 (cd, data[i]->len);
      put16 (cd, nlen);
      put16 (cd, 0);
      put16 (cd, 0);
      put16 (cd, 0);
      put16 (cd, 0);
      put32 (cd, 0);
      put32 (cd, off);
      g_byte_array_append (cd, (const guint8 *) names[i], nlen);
      if (z != NULL)
        g_bytes_unref (z);
    }
  cd_off = b->len;
  g_byte_array_append (b, cd->data, cd->len);
  put32 (b, 0x06054b50);
  put16 (b, 0);
  put16 (b, 0);
  put16 (b, (guint) n);
  put16 (b, (guint) n);
  put32 (b, cd->len);
  put32 (b, cd_off);
  put16 (b, 0);
  g_byte_array_unref (cd);
  return b;
}

void
rpe_test_write_capture (const char *path,
                        gsize       n_layers,
                        gsize       n,
                        gsize       h,
                        gsize       d,
                        gsize       dv,
                        guint32     seed,
                        float     **q_out,
                        float     **k_out,
                        float     **v_out)
{
  rpe_test_write_capture_tokens (path, n_layers, n, h, d, dv, seed, NULL, q_out, k_out, v_out);
}

void
rpe_test_write_capture_tokens (const char   *path,
                               gsize         n_layers,
                               gsize         n,
                               gsize         h,
                               gsize         d,
                               gsize         dv,
                               guint32       seed,
                               const gint64 *tokens,
                               float       **q_out,
                               float       **k_out,
                               float       **v_out)
{
  gsize        qk = n * h * d, vv = n * h * dv, members = 0;
  float       *q = g_new (float, n_layers *qk), *k = g_new (float, n_layers *qk);
  float       *v = g_new (float, MAX (n_layers * vv, 1));
  GRand       *rand = g_rand_new_with_seed (seed);
  const char **names = g_new0 (const char *, 3 * n_layers + 2);
  GByteArray **data = g_new0 (GByteArray *, 3 * n_layers + 2);
  GPtrArray   *owned = g_ptr_array_new_with_free_func (g_free);
  GByteArray  *zip;
  GError      *error = NULL;

  /* sums of 4 uniforms, centred and scaled: N(0, 1)-like, deterministic for the seed */
  for (gsize i = 0; i < n_layers * qk; i++)
    {
      q[i] = (float) ((g_rand_double (rand) + g_rand_double (rand) + g_rand_double (rand) + g_rand_double (rand) - 2.0)
                      * sqrt (3.0));
      k[i] = (float) ((g_rand_double (rand) + g_rand_double (rand) + g_rand_double (rand) + g_rand_double (rand) - 2.0)
                      * sqrt (3.0));
    }
  for (gsize i = 0; i < n_layers * vv; i++)
    v[i] = (float) ((g_rand_double (rand) + g_rand_double (rand) - 1.0) * sqrt (6.0));
  for (gsize l = 0; l < n_layers; l++)
    {
      gsize shape[3] = { n, h, d }, vshape[3] = { n, h, dv };

      names[members] = g_strdup_printf ("layers.%zu.queries.npy", (size_t) l);
      g_ptr_array_add (owned, (gpointer) names[members]);
      data[members++] = rpe_test_npy_bytes ("<f4", 3, shape, q + l * qk, qk * sizeof (float));
      names[members] = g_strdup_printf ("layers.%zu.keys.npy", (size_t) l);
      g_ptr_array_add (owned, (gpointer) names[members]);
      data[members++] = rpe_test_npy_bytes ("<f4", 3, shape, k + l * qk, qk * sizeof (float));
      if (dv > 0)
        {
          names[members] = g_strdup_printf ("layers.%zu.values.npy", (size_t) l);
          g_ptr_array_add (owned, (gpointer) names[members]);
          data[members++] = rpe_test_npy_bytes ("<f4", 3, vshape, v + l * vv, vv * sizeof (float));
        }
    }
  if (tokens != NULL)
    {
      names[members] = "tokens.npy";
      data[members++] = rpe_test_npy_bytes ("<i8", 1, &n, tokens, n * sizeof (gint64));
    }
  zip = rpe_test_zip_bytes (names, data, members, FALSE);
  g_assert_true (g_file_set_contents (path, (const char *) zip->data, zip->len, &error));
  g_assert_no_error (error);
  g_byte_array_unref (zip);
  for (gsize i = 0; i < members; i++)
    g_byte_array_unref (data[i]);
  g_free (data);
  g_free (names);
  g_ptr_array_unref (owned);
  g_rand_free (rand);
  if (q_out != NULL)
    *q_out = q;
  else
    g_free (q);
  if (k_out != NULL)
    *k_out = k;
  else
    g_free (k);
  if (v_out != NULL)
    *v_out = v;
  else
    g_free (v);
}

gboolean
rpe_test_address_limit_applies (void)
{
  pid_t pid = fork ();
  int   status = 0;

  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      struct rlimit rl;
      rlim_t        want = (rlim_t) 1 << 40;

      if (getrlimit (RLIMIT_AS, &rl) != 0)
        _exit (2);
      if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur <= want)
        want = rl.rlim_cur - 4096;
      rl.rlim_cur = want;
      if (setrlimit (RLIMIT_AS, &rl) != 0 || getrlimit (RLIMIT_AS, &rl) != 0)
        _exit (2);
      _exit (rl.rlim_cur == want ? 0 : 1);
    }
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  return WIFEXITED (status) && WEXITSTATUS (status) == 0;
}

static double
elu1 (double x)
{
  return x > 0 ? x + 1.0 : exp (x);
}

/* The demo model's map of head h, layer l on its shipped capture, computed here from the stored
 * tensors as tools/train-demos.py's Layer.forward does (O(N^2) loops in double):
 *   ape:     q + p, k + p (p = ape.weight for positions < 64, nothing beyond), elu + 1, causal
 *            linear attention normalised by its row sum;
 *   lrpe:    elu + 1 first, then the rotation by s theta_j of the pairs (x_2j, x_2j+1) with the
 *            stored lrpe.theta, unnormalised scores (the model's output is layer-normalised per
 *            row, so the row-normalised scores are the map that gives it);
 *   fastrpb: the linear attention of elu + 1 plus the causal bias W[m, n] = w[(m - n + M) mod X]. */
void
rpe_test_demo_model_map (const RpeTensorSet *set,
                         const RpeCapture   *c,
                         const char         *name,
                         guint               layer,
                         gsize               h,
                         double             *ref,
                         double             *kappa)
{
  const RpeTensor   *q = rpe_capture_get (c, layer, RPE_CAPTURE_QUERIES);
  const RpeTensor   *k = rpe_capture_get (c, layer, RPE_CAPTURE_KEYS);
  const gsize        N = q->shape[0], H = q->shape[1], D = q->shape[2];
  g_autofree double *fq = g_new (double, N *D), *fk = g_new (double, N *D);
  gboolean           ape = g_str_equal (name, "ape"), lrpe = g_str_equal (name, "lrpe");

  for (gsize m = 0; m < N; m++)
    for (gsize d = 0; d < D; d++)
      {
        double a = q->data[(m * H + h) * D + d], b = k->data[(m * H + h) * D + d];

        if (ape && m < 64)
          {
            const RpeTensor *p = rpe_tensor_set_lookup (set, "ape.weight");

            a += p->data[m * H * D + h * D + d];
            b += p->data[m * H * D + h * D + d];
          }
        fq[m * D + d] = elu1 (a);
        fk[m * D + d] = elu1 (b);
      }
  if (lrpe)
    {
      const RpeTensor *theta = rpe_tensor_set_lookup (set, "lrpe.theta");

      for (gsize m = 0; m < N; m++)
        for (gsize j = 0; j < D / 2; j++)
          {
            double  ang = (double) m * theta->data[j], cs = cos (ang), sn = sin (ang);
            double *x[2] = { fq + m * D + 2 * j, fk + m * D + 2 * j };

            for (int i = 0; i < 2; i++)
              {
                double x0 = x[i][0], x1 = x[i][1];

                x[i][0] = x0 * cs - x1 * sn;
                x[i][1] = x1 * cs + x0 * sn;
              }
          }
    }
  for (gsize m = 0; m < N; m++)
    {
      double sum = 0.0, abs_sum = 0.0;

      for (gsize n = 0; n < N; n++)
        {
          double s = 0.0;

          for (gsize d = 0; d < D && n <= m; d++)
            s += fq[m * D + d] * fk[n * D + d];
          ref[m * N + n] = s;
          sum += s;
          abs_sum += fabs (s);
        }
      for (gsize n = 0; n <= m; n++)
        ref[m * N + n] /= sum;
      /* the condition of the row's normalisation: 1 for positive scores (elu + 1 features), large
       * where signed LRPE scores nearly cancel in the sum */
      kappa[m] = abs_sum / fabs (sum);
      if (g_str_equal (name, "fastrpb"))
        {
          g_autofree char *wname = g_strdup_printf ("layers.%u.positional_bias.bias.w", layer);
          const RpeTensor *w = rpe_tensor_set_lookup (set, wname);
          const gsize      X = w->shape[2], M = (X + 1) / 2;

          for (gsize n = 0; n <= m; n++)
            ref[m * N + n] += w->data[h * X + (m - n + M) % X];
        }
    }
}

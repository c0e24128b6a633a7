/* rpe-gif.c: animated GIFs of figures through giflib (see rpe-gif.h). */
#include "config.h"

#include "rpe-publish.h"
#include "rpe-gif.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include <gif_lib.h>
#include <glib/gi18n.h>
#include <stdlib.h>
#include <glib/gstdio.h>

#include "rpe-alloc.h"
#include "rpe-error.h"

/* the nearest-colour cache of refine_palette: 2^16 slots */
#define GIF_CACHE_BITS 16
#define GIF_CACHE_SLOTS ((size_t) 1 << GIF_CACHE_BITS)
#define GIF_CACHE_BYTES (GIF_CACHE_SLOTS * (sizeof (guint32) + sizeof (GifByteType)))

struct _RpeGifWriter
{
  GifFileType *gif;
  int          fd;
  int          write_errno;
  char        *path;
  char        *tmp;
  int          width;
  int          height;
  int          delay_cs;
  guint        n_frames;
};

static int
gif_output (GifFileType   *gif,
            const GifByteType *data,
            int            length)
{
  RpeGifWriter *w = gif->UserData;
  int done = 0;

  while (done < length)
    {
      ssize_t n = write (w->fd, data + done, (size_t) (length - done));

      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          w->write_errno = errno;
          return done;
        }
      done += (int) n;
    }
  return done;
}

static gboolean
gif_error (RpeGifWriter *w,
           int           code,
           GError      **error)
{
  if (w->write_errno != 0)
    return rpe_set_error (error, rpe_status_for_write_errno (w->write_errno), _("%s: cannot write: %s"), w->path,
                          g_strerror (w->write_errno));
  return rpe_set_error (error, code == E_GIF_ERR_NOT_ENOUGH_MEM ? RPE_ERROR_NO_MEMORY : RPE_ERROR_IO,
                        _("%s: cannot write the GIF: %s"), w->path, GifErrorString (code));
}

RpeGifWriter *
rpe_gif_writer_new (const char  *path,
                    int          width,
                    int          height,
                    int          delay_cs,
                    GError     **error)
{
  RpeGifWriter *w;
  g_autofree char *dir = NULL, *base = NULL;
  int err = 0;

  if (path == NULL || path[0] == '\0')
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("no output file given"));
      return NULL;
    }
  if (width < 1 || height < 1 || width > 20000 || height > 20000 || delay_cs < 1 || delay_cs > 6000)
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                     _("%s: a GIF of %d x %d pixels, %d cs a frame, cannot be written"), path, width, height, delay_cs);
      return NULL;
    }
  w = g_new0 (RpeGifWriter, 1);
  w->fd = -1;
  {
    /* onto a symbolic link: through it, to the file it names */
    char *real = rpe_publish_resolve (path);

    w->path = g_strdup (real != NULL ? real : path);
    free (real);
  }
  w->width = width;
  w->height = height;
  w->delay_cs = delay_cs;
  dir = g_path_get_dirname (w->path);
  base = g_path_get_basename (w->path);
  w->tmp = g_strdup_printf ("%s%c.%s.XXXXXX", dir, G_DIR_SEPARATOR, base);
  w->fd = g_mkstemp_full (w->tmp, O_WRONLY | O_CLOEXEC, 0644);
  if (w->fd < 0)
    {
      int e = errno;

      rpe_set_error (error, RPE_ERROR_IO, _("%s: cannot create a file in %s: %s"), path, dir, g_strerror (e));
      g_clear_pointer (&w->tmp, g_free);
      rpe_gif_writer_abort (w);
      return NULL;
    }
  w->gif = EGifOpen (w, gif_output, &err);
  if (w->gif == NULL)
    {
      gif_error (w, err, error);
      rpe_gif_writer_abort (w);
      return NULL;
    }
  EGifSetGifVersion (w->gif, true);
  if (EGifPutScreenDesc (w->gif, width, height, 8, 0, NULL) == GIF_ERROR)
    {
      gif_error (w, w->gif->Error, error);
      rpe_gif_writer_abort (w);
      return NULL;
    }
  {
    /* loop forever */
    static const GifByteType app[11] = { 'N', 'E', 'T', 'S', 'C', 'A', 'P', 'E', '2', '.', '0' };
    static const GifByteType loop[3] = { 1, 0, 0 };

    if (EGifPutExtensionLeader (w->gif, APPLICATION_EXT_FUNC_CODE) == GIF_ERROR
        || EGifPutExtensionBlock (w->gif, sizeof app, app) == GIF_ERROR
        || EGifPutExtensionBlock (w->gif, sizeof loop, loop) == GIF_ERROR
        || EGifPutExtensionTrailer (w->gif) == GIF_ERROR)
      {
        gif_error (w, w->gif->Error, error);
        rpe_gif_writer_abort (w);
        return NULL;
      }
  }
  return w;
}

guint
rpe_gif_writer_n_frames (RpeGifWriter *w)
{
  return w != NULL ? w->n_frames : 0;
}

/* giflib's median cut works on 5-bit colours: its table is moved to the mean of the 8-bit
 * pixels each entry stands for (white stays white), and every pixel then takes its
 * nearest entry (a step of Lloyd's algorithm), with a fixed-size cache of colours. */
static void
refine_palette (const GifByteType *planes,
                GifByteType       *index,
                size_t             pixels,
                GifColorType      *colors,
                int                n,
                guint32           *cache_key,
                GifByteType       *cache_val)
{
  double sum[256][3] = { { 0 } };
  size_t count[256] = { 0 };

  if (n <= 0 || n > 256)
    return;
  for (size_t i = 0; i < pixels; i++)
    {
      sum[index[i]][0] += planes[i];
      sum[index[i]][1] += planes[pixels + i];
      sum[index[i]][2] += planes[2 * pixels + i];
      count[index[i]]++;
    }
  for (int k = 0; k < n; k++)
    if (count[k] > 0)
      {
        colors[k].Red = (GifByteType) lround (sum[k][0] / (double) count[k]);
        colors[k].Green = (GifByteType) lround (sum[k][1] / (double) count[k]);
        colors[k].Blue = (GifByteType) lround (sum[k][2] / (double) count[k]);
      }
  /* a direct-mapped cache of the nearest entry per colour: a fixed size whatever the number of
   * distinct colours (a hash table of them grew with the frame: up to one entry per pixel) */
  memset (cache_key, 0, sizeof (guint32) * GIF_CACHE_SLOTS);
  for (size_t i = 0; i < pixels; i++)
    {
      int r = planes[i], g = planes[pixels + i], b = planes[2 * pixels + i];
      guint32 key = (((guint32) r << 16) | ((guint32) g << 8) | (guint32) b) + 1;
      guint32 slot = (key * 2654435761u) >> (32 - GIF_CACHE_BITS);

      if (cache_key[slot] != key)
        {
          int best = index[i];
          long best_d = LONG_MAX;

          for (int k = 0; k < n; k++)
            {
              long dr = r - colors[k].Red, dg = g - colors[k].Green, db = b - colors[k].Blue;
              long d = dr * dr + dg * dg + db * db;

              if (count[k] > 0 && d < best_d)
                {
                  best_d = d;
                  best = k;
                }
            }
          cache_key[slot] = key;
          cache_val[slot] = (GifByteType) best;
        }
      index[i] = cache_val[slot];
    }
}

gboolean
rpe_gif_writer_add (RpeGifWriter    *w,
                    cairo_surface_t *frame,
                    GError         **error)
{
  size_t pixels = 0, bytes;
  GifByteType *planes = NULL, *index = NULL;
  guint32             *cache_key = NULL;
  GifColorType colors[256];
  ColorMapObject *map = NULL;
  int map_size = 256, stride;
  const unsigned char *data;
  GraphicsControlBlock gcb = { 0 };
  GifByteType ext[4];
  gboolean ok = FALSE;
  RpeStatus st = RPE_OK;

  g_return_val_if_fail (w != NULL && w->gif != NULL, FALSE);
  if (frame == NULL || cairo_surface_get_type (frame) != CAIRO_SURFACE_TYPE_IMAGE
      || cairo_image_surface_get_width (frame) != w->width || cairo_image_surface_get_height (frame) != w->height
      || (cairo_image_surface_get_format (frame) != CAIRO_FORMAT_ARGB32
          && cairo_image_surface_get_format (frame) != CAIRO_FORMAT_RGB24))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("%s: frame %u is not a %d x %d RGB image"), w->path,
                          w->n_frames + 1, w->width, w->height);
  if (w->n_frames >= RPE_GIF_MAX_FRAMES)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("%s: at most %d frames"), w->path, RPE_GIF_MAX_FRAMES);
  /* the frame itself, its planes and indices, and the colour cache, held at once */
  if (!rpe_gif_frame_bytes (w->width, w->height, &bytes) || rpe_budget_check (bytes) != RPE_OK)
    return rpe_set_error (error, RPE_ERROR_NO_MEMORY, _("%s: a %d x %d frame exceeds the memory budget"), w->path,
                          w->width, w->height);
  pixels = (size_t) w->width * (size_t) w->height;
  planes = rpe_alloc (pixels, 4, &st);   /* r, g, b planes and the indices */
  if (planes != NULL)
    cache_key = rpe_alloc (GIF_CACHE_SLOTS, sizeof (guint32) + sizeof (GifByteType), &st);
  if (cache_key == NULL)
    {
      rpe_free (planes);
      return rpe_set_error (error, st, _("%s: no memory for a frame"), w->path);
    }
  index = planes + 3 * pixels;

  cairo_surface_flush (frame);
  data = cairo_image_surface_get_data (frame);
  stride = cairo_image_surface_get_stride (frame);
  for (int y = 0; y < w->height; y++)
    {
      const guint32 *row = (const guint32 *) (const void *) (data + (size_t) y * (size_t) stride);

      for (int x = 0; x < w->width; x++)
        {
          guint32 p = row[x];
          /* premultiplied ARGB over white: c + (255 - a) */
          unsigned a = cairo_image_surface_get_format (frame) == CAIRO_FORMAT_RGB24 ? 255u : (p >> 24) & 0xffu;
          size_t i = (size_t) y * (size_t) w->width + (size_t) x;

          planes[i] = (GifByteType) MIN (255u, ((p >> 16) & 0xffu) + 255u - a);
          planes[pixels + i] = (GifByteType) MIN (255u, ((p >> 8) & 0xffu) + 255u - a);
          planes[2 * pixels + i] = (GifByteType) MIN (255u, (p & 0xffu) + 255u - a);
        }
    }
  if (GifQuantizeBuffer ((unsigned) w->width, (unsigned) w->height, &map_size, planes, planes + pixels,
                         planes + 2 * pixels, index, colors) == GIF_ERROR)
    {
      rpe_set_error (error, RPE_ERROR_NO_MEMORY, _("%s: cannot reduce frame %u to 256 colours"), w->path, w->n_frames + 1);
      goto out;
    }
  refine_palette (planes, index, pixels, colors, map_size, cache_key, (GifByteType *) (cache_key + GIF_CACHE_SLOTS));
  /* giflib wants a power of two colour table */
  map = GifMakeMapObject (256, NULL);
  if (map == NULL)
    {
      rpe_set_error (error, RPE_ERROR_NO_MEMORY, _("%s: no memory for a colour table"), w->path);
      goto out;
    }
  memset (map->Colors, 0, 256 * sizeof (GifColorType));
  memcpy (map->Colors, colors, (size_t) MIN (map_size, 256) * sizeof (GifColorType));

  gcb.DisposalMode = DISPOSE_BACKGROUND;
  gcb.DelayTime = w->delay_cs;
  gcb.TransparentColor = NO_TRANSPARENT_COLOR;
  EGifGCBToExtension (&gcb, ext);
  if (EGifPutExtension (w->gif, GRAPHICS_EXT_FUNC_CODE, 4, ext) == GIF_ERROR
      || EGifPutImageDesc (w->gif, 0, 0, w->width, w->height, false, map) == GIF_ERROR)
    {
      gif_error (w, w->gif->Error, error);
      goto out;
    }
  for (int y = 0; y < w->height; y++)
    if (EGifPutLine (w->gif, index + (size_t) y * (size_t) w->width, w->width) == GIF_ERROR)
      {
        gif_error (w, w->gif->Error, error);
        goto out;
      }
  w->n_frames++;
  ok = TRUE;

out:
  if (map != NULL)
    GifFreeMapObject (map);
  rpe_free (planes);
  rpe_free (cache_key);
  return ok;
}

void
rpe_gif_writer_abort (RpeGifWriter *w)
{
  if (w == NULL)
    return;
  if (w->gif != NULL)
    {
      int err;

      EGifCloseFile (w->gif, &err);
      w->gif = NULL;
    }
  if (w->fd >= 0)
    close (w->fd);
  if (w->tmp != NULL)
    (void) g_unlink (w->tmp);
  g_free (w->tmp);
  g_free (w->path);
  g_free (w);
}

gboolean
rpe_gif_writer_finish (RpeGifWriter *w,
                       GError      **error)
{
  int err = 0, fd;

  g_return_val_if_fail (w != NULL, FALSE);
  if (w->n_frames == 0)
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("%s: the animation has no frame"), w->path);
      rpe_gif_writer_abort (w);
      return FALSE;
    }
  if (EGifCloseFile (w->gif, &err) == GIF_ERROR)
    {
      w->gif = NULL;
      gif_error (w, err, error);
      rpe_gif_writer_abort (w);
      return FALSE;
    }
  w->gif = NULL;
  if (fsync (w->fd) != 0 && errno != EINVAL && errno != EROFS)
    {
      int e = errno;

      rpe_set_error (error, rpe_status_for_write_errno (e), _("%s: cannot write: %s"), w->path, g_strerror (e));
      rpe_gif_writer_abort (w);
      return FALSE;
    }
  fd = w->fd;
  w->fd = -1;
  if (close (fd) != 0)
    {
      int e = errno;

      rpe_set_error (error, rpe_status_for_write_errno (e), _("%s: cannot write: %s"), w->path, g_strerror (e));
      rpe_gif_writer_abort (w);
      return FALSE;
    }
  (void) g_chmod (w->tmp, 0644);
  if ((errno = rpe_publish (w->tmp, w->path)) != 0)
    {
      int e = errno;

      rpe_set_error (error, RPE_ERROR_IO, _("%s: cannot replace the file: %s"), w->path, g_strerror (e));
      rpe_gif_writer_abort (w);
      return FALSE;
    }
  g_clear_pointer (&w->tmp, g_free);
  rpe_gif_writer_abort (w);
  return TRUE;
}

/* ------------------------------------------------------------------ sweeps */

gboolean
rpe_sweep_param_from_name (const char    *name,
                           RpeSweepParam *param)
{
  if (g_strcmp0 (name, "realizations") == 0)
    *param = RPE_SWEEP_REALIZATIONS;
  else if (g_strcmp0 (name, "length") == 0)
    *param = RPE_SWEEP_LENGTH;
  else if (g_strcmp0 (name, "seed") == 0)
    *param = RPE_SWEEP_SEED;
  else
    return FALSE;
  return TRUE;
}

gint64
rpe_sweep_value (RpeSweepParam param,
                 gint64        from,
                 gint64        to,
                 guint         k,
                 guint         frames)
{
  double t = frames > 1 ? (double) k / (double) (frames - 1) : 0.0;

  if (param == RPE_SWEEP_REALIZATIONS && from > 0 && to > 0)
    return (gint64) llround (exp (log ((double) from) + t * (log ((double) to) - log ((double) from))));
  return (gint64) llround ((double) from + t * (double) (to - from));
}

cairo_surface_t *
rpe_gif_render_frame (const RpeFigure     *fig,
                      const RpeExportSize *size,
                      GError             **error)
{
  RpeFigure sized = *fig;
  double wpt, hpt;
  int wpx, hpx;
  cairo_surface_t *surface;
  cairo_t *cr;

  if (!rpe_export_resolve_size (fig, RPE_EXPORT_PNG, size, &wpt, &hpt, &wpx, &hpx, error))
    return NULL;
  if (size != NULL && size->text_size > 0.0)
    sized.text_size = size->text_size;
  {
    /* the frame and a heatmap image of at most its size, drawn into it */
    size_t bytes;

    if (!rpe_gif_frame_bytes (wpx, hpx, &bytes) || rpe_budget_check (bytes) != RPE_OK)
      {
        rpe_set_error (error, RPE_ERROR_NO_MEMORY, _("a %d x %d frame exceeds the memory budget"), wpx, hpx);
        return NULL;
      }
  }
  surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, wpx, hpx);
  if (cairo_surface_status (surface) != CAIRO_STATUS_SUCCESS)
    {
      cairo_surface_destroy (surface);
      rpe_set_error (error, RPE_ERROR_NO_MEMORY, _("cannot make a %d x %d frame"), wpx, hpx);
      return NULL;
    }
  cr = cairo_create (surface);
  cairo_scale (cr, (double) wpx / wpt, (double) hpx / hpt);
  rpe_figure_render (cr, &sized, wpt, hpt);
  cairo_destroy (cr);
  return surface;
}

gboolean
rpe_gif_frame_bytes (int width, int height, size_t *bytes)
{
  size_t one;

  /* two w x h x 4 buffers at once (the frame and the heatmap image drawn into it, then the
   * frame and its planes with the indices), and the colour cache with its alignment */
  if (width < 1 || height < 1 || rpe_size_bytes (&one, 4, (size_t) width, (size_t) height, 1, 1) != RPE_OK
      || !rpe_size_mul (one, 2, bytes) || !rpe_size_add (*bytes, GIF_CACHE_BYTES + 128, bytes))
    return FALSE;
  return TRUE;
}

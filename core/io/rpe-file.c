#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "rpe-alloc.h"
#include "rpe-error.h"
#include "rpe-file.h"
#include "rpe-findings.h"
#include "rpe-publish.h"

/* ---- inputs ----------------------------------------------------------- */

typedef struct
{
  dev_t dev;
  ino_t ino;
} FileId;

static GMutex inputs_lock;
static GArray *inputs;          /* FileId */
static gboolean track_inputs;
static gboolean output_force;

void
rpe_file_track_inputs (gboolean track)
{
  g_mutex_lock (&inputs_lock);
  track_inputs = track;
  g_mutex_unlock (&inputs_lock);
}

static void
remember (const struct stat *st)
{
  FileId id = { st->st_dev, st->st_ino };

  g_mutex_lock (&inputs_lock);
  if (track_inputs)
    {
      if (inputs == NULL)
        inputs = g_array_new (FALSE, FALSE, sizeof (FileId));
      /* a command reads a handful of files: a linear list is enough */
      if (inputs->len < 4096)
        g_array_append_val (inputs, id);
    }
  g_mutex_unlock (&inputs_lock);
}

void
rpe_file_add_input (const char *path)
{
  struct stat st;

  if (path != NULL && stat (path, &st) == 0)
    remember (&st);
}

static gboolean
is_input (const struct stat *st)
{
  gboolean found = FALSE;

  g_mutex_lock (&inputs_lock);
  for (guint i = 0; inputs != NULL && i < inputs->len && !found; i++)
    {
      const FileId *id = &g_array_index (inputs, FileId, i);

      found = id->dev == st->st_dev && id->ino == st->st_ino;
    }
  g_mutex_unlock (&inputs_lock);
  return found;
}

static const char *
kind_of (mode_t mode)
{
  if (S_ISDIR (mode))
    return "a directory";
  if (S_ISFIFO (mode))
    return "a FIFO (named pipe)";
  if (S_ISCHR (mode))
    return "a character device";
  if (S_ISBLK (mode))
    return "a block device";
  if (S_ISSOCK (mode))
    return "a socket";
  return "not a regular file";
}

static void
free_buffer (gpointer p)
{
  rpe_free (p);
}

/* Opens a regular file for reading without blocking: a FIFO must not wait for
 * a writer, and a special file that says it is regular (/proc/kmsg) must not
 * wait for data.  -1 with *error set otherwise. */
static int
open_regular (const char   *path,
              struct stat  *st,
              GError      **error)
{
  int fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

  if (fd < 0)
    {
      int err = errno;

      rpe_set_error (error, RPE_ERROR_IO, "Cannot read '%s': %s", path, g_strerror (err));
      return -1;
    }
  if (fstat (fd, st) != 0)
    {
      int err = errno;

      close (fd);
      rpe_set_error (error, RPE_ERROR_IO, "Cannot read '%s': %s", path, g_strerror (err));
      return -1;
    }
  if (!S_ISREG (st->st_mode))
    {
      close (fd);
      rpe_set_error (error, RPE_ERROR_IO, "Cannot read '%s': it is %s, not a regular file",
                     path, kind_of (st->st_mode));
      return -1;
    }
  return fd;
}

/* read(2) for regular files: EINTR retried; EAGAIN (a special file that would
 * block) is an error. */
static gssize
read_some (int         fd,
           void       *buffer,
           gsize       count,
           const char *path,
           GError    **error)
{
  for (;;)
    {
      gssize n = read (fd, buffer, count);

      if (n >= 0)
        return n;
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        rpe_set_error (error, RPE_ERROR_IO, "Cannot read '%s': it has no data to give (it is not an ordinary "
                       "file)", path);
      else
        rpe_set_error (error, RPE_ERROR_IO, "Cannot read '%s': %s", path, g_strerror (errno));
      return -1;
    }
}

GBytes *
rpe_read_file (const char  *path,
               GError     **error)
{
  const char *shown = path;
  struct stat st;
  RpeStatus status = RPE_OK;
  guint8 *buffer = NULL;
  gsize size, done = 0;
  int fd;

  if (path == NULL)
    {
      rpe_set_error (error, RPE_ERROR_IO, "no file given");
      return NULL;
    }
  if ((fd = open_regular (path, &st, error)) < 0)
    return NULL;
  if (st.st_size < 0 || (guint64) st.st_size > G_MAXSIZE / 2)
    {
      close (fd);
      rpe_set_error (error, RPE_ERROR_NO_MEMORY, "Cannot read '%s': it is too large", shown);
      return NULL;
    }
  size = (gsize) st.st_size;
  buffer = rpe_alloc (size > 0 ? size : 1, 1, &status);
  if (buffer == NULL)
    {
      close (fd);
      g_autofree char *limit = rpe_memory_limit_text (status);

      rpe_set_error (error, status, "Cannot read '%s': the file is %" G_GSIZE_FORMAT " bytes, more than %s "
                     "allows", shown, size, limit);
      return NULL;
    }
  /* read exactly st_size bytes; a file that shrinks or grows meanwhile is an error */
  for (;;)
    {
      guint8 extra;
      gsize want = done < size ? MIN (size - done, (gsize) 1 << 24) : 1;
      gssize n = read_some (fd, done < size ? buffer + done : &extra, want, shown, error);

      if (n < 0)
        {
          close (fd);
          rpe_free (buffer);
          return NULL;
        }
      if (done == size)
        {
          if (n == 0)
            break;
          close (fd);
          rpe_free (buffer);
          rpe_set_error (error, RPE_ERROR_IO, "Cannot read '%s': it grew while being read", shown);
          return NULL;
        }
      if (n == 0)
        {
          close (fd);
          rpe_free (buffer);
          rpe_set_error (error, RPE_ERROR_IO,
                         "Cannot read '%s': it was truncated while being read (%" G_GSIZE_FORMAT
                         " of %" G_GSIZE_FORMAT " bytes)", shown, done, size);
          return NULL;
        }
      done += (gsize) n;
    }
  close (fd);
  remember (&st);
  return g_bytes_new_with_free_func (buffer, size, free_buffer, buffer);
}

char *
rpe_file_sha256 (const char  *path,
                 guint64      max_bytes,
                 GError     **error)
{
  g_autoptr (GChecksum) sum = NULL;
  g_autofree guint8 *buffer = NULL;
  struct stat st;
  guint64 size, done = 0;
  int fd;

  g_return_val_if_fail (path != NULL, NULL);
  if ((fd = open_regular (path, &st, error)) < 0)
    return NULL;
  size = st.st_size > 0 ? (guint64) st.st_size : 0;
  if (size > max_bytes)
    {
      g_autofree char *have = g_format_size_full (size, G_FORMAT_SIZE_IEC_UNITS);
      g_autofree char *most = g_format_size_full (max_bytes, G_FORMAT_SIZE_IEC_UNITS);

      close (fd);
      rpe_set_error (error, RPE_ERROR_UNSUPPORTED, "'%s' is %s, more than the %s a checksum is computed for",
                     path, have, most);
      return NULL;
    }
  buffer = g_malloc (65536);
  sum = g_checksum_new (G_CHECKSUM_SHA256);
  for (;;)
    {
      gsize want = done < size ? (gsize) MIN (size - done, (guint64) 65536) : 1;
      gssize n = read_some (fd, buffer, want, path, error);

      if (n < 0)
        {
          close (fd);
          return NULL;
        }
      if (done == size)
        {
          close (fd);
          if (n != 0)
            {
              rpe_set_error (error, RPE_ERROR_IO, "Cannot read '%s': it holds more than the %" G_GUINT64_FORMAT
                             " bytes it says it has (it is not an ordinary file, or it is being written)",
                             path, size);
              return NULL;
            }
          break;
        }
      if (n == 0)
        {
          close (fd);
          rpe_set_error (error, RPE_ERROR_IO,
                         "Cannot read '%s': it was truncated while being read (%" G_GUINT64_FORMAT
                         " of %" G_GUINT64_FORMAT " bytes)", path, done, size);
          return NULL;
        }
      g_checksum_update (sum, buffer, (gsize) n);
      done += (guint64) n;
    }
  return g_strdup (g_checksum_get_string (sum));
}

/* ---- outputs ---------------------------------------------------------- */

void
rpe_output_set_force (gboolean force)
{
  output_force = force;
}

/* Whether we may write `path` (`st` its stat): access (2) says so, and a
 * file we own is not write-protected (root, whom access never stops, respects
 * that too, like rm and cp -i do). */
static gboolean
may_write (const char        *path,
           const struct stat *st)
{
  if (access (path, W_OK) != 0)
    return FALSE;
  if (st->st_uid == geteuid () && (st->st_mode & S_IWUSR) == 0)
    return FALSE;
  return TRUE;
}

gboolean
rpe_output_check (const char  *path,
                  GError     **error)
{
  const char *shown = path;
  struct stat st;

  if (path == NULL || path[0] == '\0')
    return rpe_set_error (error, RPE_ERROR_IO, "no output file given");
  if (stat (path, &st) != 0)
    return TRUE;   /* a new file (the directory is checked when the file is created) */
  if (S_ISDIR (st.st_mode))
    return rpe_set_error (error, RPE_ERROR_IO, "Cannot write '%s': it is a directory", shown);
  if (is_input (&st))
    return rpe_set_error (error, RPE_ERROR_IO,
                          "Cannot write '%s': it is also an input of this command; refusing to "
                          "write over it", shown);
  if (!S_ISREG (st.st_mode))
    return rpe_set_error (error, RPE_ERROR_IO, "Cannot write '%s': it is %s, not a regular file",
                          shown, kind_of (st.st_mode));
  if (!output_force && !may_write (path, &st))
    return rpe_set_error_finding (error, RPE_ERROR_IO, RPE_FINDING_OVERWRITE, (const char *const[]) { path, NULL },
                                  "Cannot write '%s': the file exists and is write-protected (mode %04o); "
                                  "refusing to replace it", shown,
                          (unsigned) (st.st_mode & 07777));
  return TRUE;
}

gboolean
rpe_output_space_check (const char *path, guint64 bytes, GError **error)
{
  char          *target, *dir;
  struct statvfs vfs;
  guint64        free_bytes;
  int            rc;

  if (path == NULL || path[0] == '\0')
    return TRUE;
  target = rpe_publish_resolve (path);
  if (target == NULL)
    return TRUE;
  dir = g_path_get_dirname (target);
  free (target);
  rc = statvfs (dir, &vfs);
  g_free (dir);
  if (rc != 0)
    return TRUE;
  free_bytes = (guint64) vfs.f_bavail * (guint64) vfs.f_frsize;
  if (bytes > free_bytes)
    {
      g_autofree char *need = g_format_size_full (bytes, G_FORMAT_SIZE_IEC_UNITS);
      g_autofree char *have = g_format_size_full (free_bytes, G_FORMAT_SIZE_IEC_UNITS);

      return rpe_set_error (error, RPE_ERROR_NO_SPACE,
                            "Cannot write '%s': it needs %s (%" G_GUINT64_FORMAT
                            " bytes), more than the %s (%" G_GUINT64_FORMAT
                            " bytes) free on its disk; nothing was written",
                            path, need, bytes, have, free_bytes);
    }
  return TRUE;
}

/* ---- escaping --------------------------------------------------------- */

static char *
escape (const char *text,
        gsize       length,
        gboolean    backslash)
{
  GString *out = g_string_sized_new (length + 8);
  const char *p = text, *end = text + length;

  while (p < end)
    {
      gunichar c = g_utf8_get_char_validated (p, end - p);

      if (*p == '\0')
        {
          g_string_append (out, "\\x00");
          p++;
        }
      else if (c == (gunichar) -1 || c == (gunichar) -2)
        {
          /* not UTF-8: the byte itself, escaped */
          g_string_append_printf (out, "\\x%02X", (guint8) *p);
          p++;
        }
      else
        {
          const char *next = g_utf8_next_char (p);

          if (c == '\\' && backslash)
            g_string_append (out, "\\\\");
          else if (c < 0x100 && !g_unichar_isprint (c))
            g_string_append_printf (out, "\\x%02X", (guint) c);   /* C0, DEL, C1 (ESC, BEL, CR, CSI) */
          else if (!g_unichar_isprint (c))
            g_string_append_printf (out, "\\u%04X", (guint) c);   /* bidi overrides, zero-width, ... */
          else
            g_string_append_len (out, p, next - p);
          p = next;
        }
    }
  return g_string_free (out, FALSE);
}

char *
rpe_escape_bytes (const char *text,
                  gsize       length)
{
  return escape (text, length, TRUE);
}

char *
rpe_escape_name (const char *text)
{
  if (text == NULL)
    return g_strdup ("(null)");
  return escape (text, strlen (text), TRUE);
}

char *
rpe_escape_message (const char *text)
{
  if (text == NULL)
    return g_strdup ("");
  return escape (text, strlen (text), FALSE);
}

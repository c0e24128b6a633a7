/* rpe-publish.c: the output set (rpe-publish.h). */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rpe-publish.h"

typedef struct
{
  char *tmp;
  char *path;
} Pending;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool            active;
static Pending        *pending;
static size_t          n_pending, cap_pending;

static void
clear_locked (bool remove_tmp)
{
  for (size_t i = 0; i < n_pending; i++)
    {
      if (remove_tmp)
        (void) unlink (pending[i].tmp);
      free (pending[i].tmp);
      free (pending[i].path);
    }
  free (pending);
  pending = NULL;
  n_pending = cap_pending = 0;
  active = false;
}

int
rpe_publish (const char *tmp,
             const char *path)
{
  int result = 0;

  pthread_mutex_lock (&lock);
  if (!active)
    {
      pthread_mutex_unlock (&lock);
      return rename (tmp, path) == 0 ? 0 : errno;
    }
  if (n_pending == cap_pending)
    {
      size_t  cap = cap_pending == 0 ? 4 : 2 * cap_pending;
      Pending *p = realloc (pending, cap * sizeof *p);

      if (p == NULL)
        result = ENOMEM;
      else
        {
          pending = p;
          cap_pending = cap;
        }
    }
  if (result == 0)
    {
      char *t = strdup (tmp), *d = strdup (path);

      if (t == NULL || d == NULL)
        {
          free (t);
          free (d);
          result = ENOMEM;
        }
      else
        {
          pending[n_pending].tmp = t;
          pending[n_pending].path = d;
          n_pending++;
        }
    }
  pthread_mutex_unlock (&lock);
  return result;
}

char *
rpe_publish_resolve (const char *path)
{
  char *cur = strdup (path);

  for (int hops = 0; cur != NULL && hops < 40; hops++)
    {
      struct stat st;
      char        target[4096];
      ssize_t     n;
      char       *next;

      if (lstat (cur, &st) != 0 || !S_ISLNK (st.st_mode))
        break;
      n = readlink (cur, target, sizeof target - 1);
      if (n <= 0)
        break;
      target[n] = '\0';
      if (target[0] == '/')
        next = strdup (target);
      else
        {
          /* relative to the folder holding the link */
          const char *slash = strrchr (cur, '/');
          size_t      dir = slash != NULL ? (size_t) (slash - cur) + 1 : 0;

          next = malloc (dir + (size_t) n + 1);
          if (next != NULL)
            {
              memcpy (next, cur, dir);
              memcpy (next + dir, target, (size_t) n + 1);
            }
        }
      free (cur);
      cur = next;
    }
  return cur;
}

void
rpe_publish_set_begin (void)
{
  pthread_mutex_lock (&lock);
  active = true;
  pthread_mutex_unlock (&lock);
}

int
rpe_publish_set_commit (char **failed_path)
{
  int result = 0;

  if (failed_path != NULL)
    *failed_path = NULL;
  pthread_mutex_lock (&lock);
  for (size_t i = 0; i < n_pending; i++)
    {
      if (result == 0 && rename (pending[i].tmp, pending[i].path) != 0)
        {
          result = errno;
          if (failed_path != NULL)
            *failed_path = strdup (pending[i].path);
        }
      if (result != 0)
        (void) unlink (pending[i].tmp);
    }
  clear_locked (false);
  pthread_mutex_unlock (&lock);
  return result;
}

void
rpe_publish_set_abort (void)
{
  pthread_mutex_lock (&lock);
  clear_locked (true);
  pthread_mutex_unlock (&lock);
}

bool
rpe_publish_set_pause (void)
{
  bool was;

  pthread_mutex_lock (&lock);
  was = active;
  active = false;
  pthread_mutex_unlock (&lock);
  return was;
}

void
rpe_publish_set_resume (bool was_active)
{
  pthread_mutex_lock (&lock);
  active = was_active;
  pthread_mutex_unlock (&lock);
}

bool
rpe_publish_set_active (void)
{
  bool a;

  pthread_mutex_lock (&lock);
  a = active;
  pthread_mutex_unlock (&lock);
  return a;
}

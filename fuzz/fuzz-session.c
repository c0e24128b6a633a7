/* libFuzzer target: read any bytes as an .rpe-session and, when they are one,
 * apply it to a live state and write it back: none of it may crash, leak,
 * recurse without bound or read out of bounds.  A session read from memory
 * names its files relative to the working directory; the run starts in an
 * empty directory of its own (see main below), so what it may open is only
 * what it names absolutely, and those are hashed and read within the budget. */
#include "config.h"

#include <glib.h>
#include <glib/gstdio.h>

#include "rpe-alloc.h"
#include "rpe-session.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);
int LLVMFuzzerInitialize (int *argc, char ***argv);

int
LLVMFuzzerInitialize (int    *argc,
                      char ***argv)
{
  g_autofree char *dir = g_dir_make_tmp ("rpe-fuzz-session-XXXXXX", NULL);

  rpe_budget_set ((size_t) 256 << 20);
  if (dir != NULL)
    (void) g_chdir (dir);
  return 0;
}

int
LLVMFuzzerTestOneInput (const guint8 *data,
                        size_t        size)
{
  GError *error = NULL;
  RpeSession *s = rpe_session_load_data ((const char *) data, size, NULL, &error);

  g_assert_true ((s == NULL) == (error != NULL));
  g_clear_error (&error);
  if (s != NULL)
    {
      RpeExplorerState *live = rpe_explorer_state_new ();
      char *text;
      gsize length = 0;

      rpe_session_apply (s, live);
      /* what was read can be written and read again */
      text = rpe_session_to_data (s, &length, &error);
      g_assert_true ((text == NULL) == (error != NULL));
      g_clear_error (&error);
      if (text != NULL)
        {
          RpeSession *again = rpe_session_load_data (text, length, NULL, &error);

          if (again == NULL)
            g_error ("a session written from a read one is refused: %s", error->message);
          rpe_session_free (again);
          g_free (text);
        }
      g_object_unref (live);
      rpe_session_free (s);
    }
  return 0;
}

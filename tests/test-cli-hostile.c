/* test-cli-hostile.c: crafted files and hostile situations (issue 11), end to end.
 *
 * Every case runs the `rpe` tool in an empty directory and checks: the exit
 * status (2 for bad input or usage, 1 for output failures), that the message
 * says what is wrong, that nothing was created or left behind in the directory
 * (no output, no temporary file), and, where a memory budget is set, that the
 * child's peak resident memory (getrusage) stayed within it.  The crafted files
 * are in tests/fixtures/hostile/, made by make-hostile.py; the large or
 * many-named ones are generated here.  A few core-level checks (the budget
 * scope, rpe_read_file, rpe_escape_name) come first. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "rpe-alloc.h"
#include "rpe-checkpoint.h"
#include "rpe-error.h"
#include "rpe-file.h"
#include "rpe-fit.h"
#include "rpe-npy.h"
#include "rpe-npz.h"
#include "rpe-safetensors.h"
#include "rpe-test-utils.h"

/* Under AddressSanitizer, freed memory sits in a quarantine and every byte has
 * shadow: the child's peak RSS says nothing about the budget there. */
#if defined(__SANITIZE_ADDRESS__)
#define RSS_BUILD_MEANINGFUL FALSE
#else
#define RSS_BUILD_MEANINGFUL TRUE
#endif
#define RSS_MEANINGFUL (RSS_BUILD_MEANINGFUL && rss_meaningful ())
static gboolean rss_meaningful (void);

/* ---- running the tool ------------------------------------------------------- */

typedef struct
{
  int   status;       /* exit status */
  char *out;
  char *err;
  long  maxrss_kb;    /* the child's peak resident memory */
} Run;

static void
run_clear (Run *r)
{
  g_free (r->out);
  g_free (r->err);
}

static char *
fixture (const char *name)
{
  return g_test_build_filename (G_TEST_DIST, "fixtures", "hostile", name, NULL);
}

/* A fresh empty directory for one case. */
static char *
case_dir (void)
{
  static int n;
  char *dir = g_strdup_printf ("%s/case-%d", rpe_test_tmpdir (), n++);

  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  return dir;
}

/* RLIMIT_AS of the next runs (0: none), for the system-limit cases. */
static rlim_t run_as_limit;

/* Runs rpe with `args` (NULL-terminated) in `cwd`, with RPE_MEMORY_BUDGET=`budget`
 * (or unset) and RLIMIT_FSIZE = `fsize` bytes (0: unlimited). */
static Run
run_rpe (const char         *cwd,
         const char         *budget,
         rlim_t              fsize,
         const char *const  *args)
{
  g_autofree char *capture = g_strdup_printf ("%s/capture-XXXXXX", rpe_test_tmpdir ());
  g_autofree char *out_path = NULL, *err_path = NULL;
  GPtrArray *argv = g_ptr_array_new ();
  struct rusage ru;
  Run r = { 0 };
  int wstatus = 0;
  pid_t pid;

  g_assert_nonnull (g_mkdtemp (capture));
  out_path = g_build_filename (capture, "out", NULL);
  err_path = g_build_filename (capture, "err", NULL);
  g_ptr_array_add (argv, (gpointer) g_getenv ("RPE_CLI"));
  for (gsize i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);

  pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      int fo = open (out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int fe = open (err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

      if (fo < 0 || fe < 0 || chdir (cwd) != 0)
        _exit (99);
      dup2 (fo, 1);
      dup2 (fe, 2);
      if (budget != NULL)
        g_setenv ("RPE_MEMORY_BUDGET", budget, TRUE);
      else
        g_unsetenv ("RPE_MEMORY_BUDGET");
      /* glibc's MALLOC_CHECK_ keeps freed memory around: measure plain malloc */
      g_unsetenv ("MALLOC_CHECK_");
      if (fsize > 0)
        {
          struct rlimit rl = { fsize, fsize };
          setrlimit (RLIMIT_FSIZE, &rl);
        }
      if (run_as_limit > 0)
        {
          struct rlimit rl = { run_as_limit, run_as_limit };
          setrlimit (RLIMIT_AS, &rl);
        }
      execv ((const char *) argv->pdata[0], (char **) argv->pdata);
      _exit (98);
    }
  g_assert_cmpint (wait4 (pid, &wstatus, 0, &ru), ==, pid);
  if (WIFSIGNALED (wstatus))
    g_error ("rpe %s ... died of signal %d", args[0], WTERMSIG (wstatus));
  g_assert_true (WIFEXITED (wstatus));
  r.status = WEXITSTATUS (wstatus);
  g_assert_cmpint (r.status, <, 98);
  r.maxrss_kb = ru.ru_maxrss;
  g_assert_true (g_file_get_contents (out_path, &r.out, NULL, NULL));
  g_assert_true (g_file_get_contents (err_path, &r.err, NULL, NULL));
  g_unlink (out_path);
  g_unlink (err_path);
  g_rmdir (capture);
  g_ptr_array_unref (argv);
  return r;
}

/* Whether a child's peak resident memory measures what rpe allocates: under an emulator
 * (qemu-user runs the arm64 build) it is the emulator's, tens of MB for `rpe --version`. */
static gboolean
rss_meaningful (void)
{
  static int meaningful = -1;

  if (meaningful < 0)
    {
      static const char *const version[] = { "--version", NULL };
      Run                      r = run_rpe (rpe_test_tmpdir (), NULL, 0, version);

      meaningful = r.status == 0 && r.maxrss_kb <= 24 * 1024;
      if (!meaningful)
        g_test_message ("`rpe --version` peaks at %ld kB resident (an emulator's runtime): peak-RSS bounds are "
                        "not asserted",
                        r.maxrss_kb);
      run_clear (&r);
    }
  return meaningful;
}

static guint
dir_count (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  guint n = 0;

  g_assert_nonnull (d);
  while (g_dir_read_name (d) != NULL)
    n++;
  return n;
}

/* The message is on stderr and contains every needle (case-sensitive). */
static void
assert_message (const Run *r,
                ...)
{
  va_list ap;
  const char *needle;

  va_start (ap, r);
  while ((needle = va_arg (ap, const char *)) != NULL)
    if (strstr (r->err, needle) == NULL)
      g_error ("stderr '%s' lacks '%s'", r->err, needle);
  va_end (ap);
}

/* No byte that a terminal would act on: no C0 control but \n, no DEL, no C1
 * (as UTF-8 U+0080..U+009F), and valid UTF-8. */
static void
assert_terminal_safe (const char *text)
{
  g_assert_true (g_utf8_validate (text, -1, NULL));
  for (const char *p = text; *p; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);

      if ((c < 0x20 && c != '\n') || (c >= 0x7f && c < 0xa0) || c == 0x202e)
        g_error ("output holds U+%04X: %s", c, text);
    }
}

/* A crafted file, refused with exit 2 and `needle` in the message, nothing left behind. */
static void
expect_refused_full (const char *file,
                     const char *budget,
                     const char *needle,
                     gboolean    info_refuses)
{
  g_autofree char *dir = case_dir ();
  g_autofree char *path = fixture (file);
  const char *info[] = { "info", path, NULL };
  const char *compute[] = { "compute", "template", "--checkpoint", path, "--length", "16", "-o", "out.npy", NULL };
  Run r;

  r = run_rpe (dir, budget, 0, info);
  g_assert_cmpint (r.status, ==, info_refuses ? 2 : 0);
  if (info_refuses)
    assert_message (&r, needle, NULL);
  assert_terminal_safe (r.err);
  assert_terminal_safe (r.out);
  run_clear (&r);
  r = run_rpe (dir, budget, 0, compute);
  g_assert_cmpint (r.status, ==, 2);
  assert_message (&r, needle, NULL);
  if (budget != NULL && RSS_MEANINGFUL)
    {
      gsize b = 0;

      g_assert_true (rpe_budget_parse (budget, &b));
      g_assert_cmpint (r.maxrss_kb * 1024L, <=, (long) b);
    }
  run_clear (&r);
  g_assert_cmpuint (dir_count (dir), ==, 0);
}

static void
expect_refused (const char *file,
                const char *budget,
                const char *needle)
{
  expect_refused_full (file, budget, needle, TRUE);
}

/* ---- 1. the zip container: lying sizes, one budget for the whole file ------ */

static void
test_zip_lies (void)
{
  /* the storage holds 96 bytes but declares 4 GiB + 96: refused (by the
   * budget, or by the size check when the budget is larger), fast and small */
  expect_refused ("pt-declares-4g.pt", "128M", "4294967392");
  expect_refused ("npz-declares-4g.npz", "128M", "4294967520");
  /* without a budget as small as that: the data is inflated and found short */
  {
    g_autofree char *path = fixture ("pt-declares-4g.pt");
    g_autoptr (GError) error = NULL;
    g_autoptr (RpeTensorSet) set = NULL;

    rpe_budget_set ((gsize) 64 << 30);   /* 64 GiB: only reserved, never touched */
    set = rpe_checkpoint_read (path, &error);
    rpe_budget_set (0);
    g_assert_null (set);
    g_assert_nonnull (error);
    if (!g_error_matches (error, RPE_ERROR, RPE_ERROR_NO_MEMORY))
      g_assert_nonnull (strstr (error->message, "inflates to 96 bytes, not the declared 4294967392"));
  }
}

static void
test_zip_whole_file_budget (void)
{
  /* four 100 MiB storages in a 400 KB .pt: refused under 128M, and the peak
   * stays under it (it was 409 MiB when the budget was checked per member) */
  expect_refused ("pt-four-storages.pt", "128M", "budget");
  expect_refused ("pt-four-storages.pt", "128M", "419430400 of storages");

  /* the scope counts every allocation of the read, given back when freed */
  rpe_budget_set (1000000);
  rpe_budget_scope_begin ();
  {
    RpeStatus st;
    void *a = rpe_alloc (600000, 1, &st), *b;

    g_assert_nonnull (a);
    b = rpe_alloc (600000, 1, &st);              /* 1.2 MB held: over */
    g_assert_null (b);
    g_assert_cmpint (st, ==, RPE_ERROR_NO_MEMORY);
    rpe_free (a);
    b = rpe_alloc (600000, 1, &st);              /* given back: fits again */
    g_assert_nonnull (b);
    g_assert_cmpint (rpe_budget_charge (500000), ==, RPE_ERROR_NO_MEMORY);
    g_assert_cmpint (rpe_budget_charge (300000), ==, RPE_OK);
    g_assert_cmpuint (rpe_budget_scope_used (), >=, 900000);
    rpe_free (b);
  }
  rpe_budget_scope_end ();
  g_assert_cmpuint (rpe_budget_scope_used (), ==, 0);
  rpe_budget_set (0);
}

/* ---- 2. tensor-count limits --------------------------------------------------- */

static void
test_tensor_count (void)
{
  g_autofree char *dir = case_dir ();
  g_autofree char *path = g_build_filename (rpe_test_tmpdir (), "many.safetensors", NULL);
  GString *h = g_string_new ("{");
  GString *file;
  guint64 len;
  const char *info[] = { "info", path, NULL };
  Run r;

  /* 65537 zero-size tensors: one over the limit */
  for (guint i = 0; i <= RPE_SAFETENSORS_MAX_TENSORS; i++)
    g_string_append_printf (h, "%s\"t%u\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}",
                            i ? "," : "", i);
  g_string_append_c (h, '}');
  len = GUINT64_TO_LE ((guint64) h->len);
  file = g_string_new_len ((const char *) &len, 8);
  g_string_append_len (file, h->str, (gssize) h->len);
  g_assert_true (g_file_set_contents (path, file->str, (gssize) file->len, NULL));
  r = run_rpe (dir, "256M", 0, info);
  g_assert_cmpint (r.status, ==, 2);
  assert_message (&r, "65537 tensors", "at most 65536", NULL);
  if (RSS_MEANINGFUL)
    g_assert_cmpint (r.maxrss_kb, <=, 256 * 1024);
  run_clear (&r);
  g_assert_cmpuint (dir_count (dir), ==, 0);
  g_unlink (path);
  g_string_free (h, TRUE);
  g_string_free (file, TRUE);

  /* the set itself refuses a 65537th tensor whatever the format */
  {
    g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
    g_autoptr (GError) error = NULL;

    for (guint i = 0; i < RPE_TENSOR_SET_MAX_TENSORS; i++)
      {
        g_autofree char *name = g_strdup_printf ("t%u", i);
        g_assert_true (rpe_tensor_set_add (set, rpe_tensor_new (name, 0, NULL, NULL), NULL));
      }
    g_assert_false (rpe_tensor_set_add (set, rpe_tensor_new ("one-more", 0, NULL, NULL), &error));
    g_assert_error (error, RPE_ERROR, RPE_ERROR_UNSUPPORTED);
  }
}

/* ---- 3. strict .safetensors ----------------------------------------------------- */

static void
test_safetensors_strict (void)
{
  expect_refused ("st-overlap.safetensors", NULL, "overlaps");
  expect_refused ("st-alias.safetensors", NULL, "overlaps");
  expect_refused ("st-gap.safetensors", NULL, "belong to no tensor");
  expect_refused ("st-trailing.safetensors", NULL, "4 trailing bytes");
  expect_refused ("st-nul-name.safetensors", NULL, "NUL");
  expect_refused ("st-meta-int.safetensors", NULL, "is not a string");
  expect_refused ("st-header-over.safetensors", NULL, "104857601 bytes) exceeds the 104857600-byte limit");
}

static void
test_budget_message (void)
{
  /* --checkpoint under a budget the tensors do not fit: the message names the
   * size needed and the budget, in bytes */
  g_autofree char *dir = case_dir ();
  g_autofree char *path = g_build_filename (rpe_test_tmpdir (), "f16.safetensors", NULL);
  const gsize n = 300000;   /* 600 KB of F16 -> 1.2 MB of float32 */
  g_autofree char *h = g_strdup_printf ("{\"w\":{\"dtype\":\"F16\",\"shape\":[%zu],\"data_offsets\":[0,%zu]}}",
                                        (size_t) n, (size_t) (2 * n));
  guint64 len = GUINT64_TO_LE ((guint64) strlen (h));
  GString *file = g_string_new_len ((const char *) &len, 8);
  const char *args[] = { "compute", "template", "--checkpoint", path, "-o", "out.npy", NULL };
  Run r;

  g_string_append (file, h);
  g_string_set_size (file, file->len + 2 * n);
  g_assert_true (g_file_set_contents (path, file->str, (gssize) file->len, NULL));
  r = run_rpe (dir, "1000000", 0, args);
  g_assert_cmpint (r.status, ==, 2);
  assert_message (&r, "need 1200000 bytes", "budget (1000000 bytes)", NULL);
  run_clear (&r);
  g_assert_cmpuint (dir_count (dir), ==, 0);
  /* a small budget is said in bytes, not as "0.0 MiB" */
  {
    const char *random[] = { "compute", "template", "--length", "64", "-o", "out.npy", NULL };

    r = run_rpe (dir, "1000", 0, random);
    g_assert_cmpint (r.status, ==, 2);
    assert_message (&r, "budget of 1000 bytes", NULL);
    g_assert_null (strstr (r.err, "0.0 MiB"));
    run_clear (&r);
    g_assert_cmpuint (dir_count (dir), ==, 0);
  }
  g_unlink (path);
  g_string_free (file, TRUE);
}

/* An (H, N, N) output its disk cannot hold is refused before the encoding's work: here the
 * encoding alone (2 x N x R floats, 512 MB) would exceed the budget, so the disk's refusal can
 * only come first if it is checked before the encoding is computed.  Not enough free space is
 * the system's state, not bad input: exit 1, as when the writer itself finds it (it was 2 here
 * and 1 from the writer). */
static void
test_output_space_first (void)
{
  g_autofree char *dir = case_dir ();
  g_autoptr (GFile) f = g_file_new_for_path (dir);
  g_autoptr (GFileInfo) info = g_file_query_filesystem_info (f, G_FILE_ATTRIBUTE_FILESYSTEM_FREE, NULL, NULL);
  const char *args[] = { "compute",  "attention", "--heads", "1",       "--features", "2",
                         "--length", "1000000",   "-o",      "out.npy", NULL };
  Run         r;

  /* the output is 4 TB (1 x 10^6 x 10^6 float32) */
  if (info == NULL || !g_file_info_has_attribute (info, G_FILE_ATTRIBUTE_FILESYSTEM_FREE)
      || g_file_info_get_attribute_uint64 (info, G_FILE_ATTRIBUTE_FILESYSTEM_FREE)
           >= G_GUINT64_CONSTANT (4000000000000))
    {
      g_test_skip ("the test directory's free space is unknown or above 4 TB");
      return;
    }
  r = run_rpe (dir, "67108864", 0, args);
  g_assert_cmpint (r.status, ==, 1);
  assert_message (&r, "free on its disk", "nothing was computed", NULL);
  g_assert_null (strstr (r.err, "over the memory budget"));
  run_clear (&r);
  g_assert_cmpuint (dir_count (dir), ==, 0);
}

/* The memory drawing a figure takes is checked before the figure is computed: a 20000 x 20000
 * GIF sweep under 64M reached 1.58 GB before its frame was refused, and a large PNG of a long
 * attention map computed the map before refusing the image.  The length here is so large that
 * the attention's own budget check refuses it too: only a check made before that one names the
 * image, so the order is observed without timing.  A session's export size takes the same path. */
static void
test_budget_before_work (void)
{
  g_autofree char *dir = case_dir ();
  static const struct
  {
    const char *budget;
    const char *args[20];
    const char *says;
    long        rss_below_mb; /* when not 0: refused before a block of this size was made */
  } cases[] = {
    { "64M",
      { "export", "attention", "--length", "64", "--sweep", "seed=1:3", "--frames", "2", "--width", "20000", "--height",
        "20000", "-o", "s.gif", NULL },
      "each 20000 x 20000 frame needs" },
    { "256M",
      { "export", "attention", "--length", "10000000", "--width", "20000", "--height", "20000", "-o", "a.png", NULL },
      "(3200000000 bytes) to draw" },
    { "64M",
      { "export", "spe-vs-rpe", "--length", "10000000", "--width", "6000", "-o", "c.png", NULL },
      "image needs" },
    { "64M",
      { "export", "templates", "--length", "100000", "--preset", "slide", "--dpi", "600", "-o", "t.png", NULL },
      "image needs" },
    { "64M",
      { "export", "extrapolation", "--max-length", "60000000", "--width", "8000", "--height", "8000", "-o", "e.png",
        NULL },
      "image needs" },
    { "32M", { "export", "overview", "--checkpoint", "demo", "--width", "4000", "-o", "o.png", NULL }, "image needs" },
    { "32M", { "export", "outputs", "--checkpoint", "demo", "--width", "4000", "-o", "o.png", NULL }, "image needs" },
    /* SVG and PDF pages: the heatmap images they hold until the page ends, from the size (a 14400 pt
     * square page of a 256-position map peaked at 150 MB under 64M and exited 0) */
    { "64M",
      { "export", "attention", "--length", "256", "--width", "14400", "--height", "14400", "-o", "a.pdf", NULL },
      "pt page needs" },
    { "64M",
      { "export", "attention", "--length", "256", "--width", "14400", "--height", "14400", "-o", "a.svg", NULL },
      "pt page needs" },
    { "64M", { "export", "spe-vs-rpe", "--length", "256", "--width", "14400", "-o", "c.pdf", NULL }, "pt page needs" },
    /* a map of many more cells than the page has points: its images are one pixel a cell (2048^2
     * here, 36 MiB with cairo's copy beside the 16 MiB map), counted once the map is known and
     * before anything is drawn (exit 0 and 68 MB resident under 64M before) */
    { "48M",
      { "export", "attention", "--length", "2048", "-o", "d.pdf", NULL },
      "the images of this 360 x 300 pt page" },
    { "48M",
      { "export", "attention", "--length", "2048", "-o", "d.svg", NULL },
      "the images of this 360 x 300 pt page" },
    /* a fit: the target, the profiles and the solver's work, before the target is made */
    { "64M",
      { "fit", "--target", "alibi", "--heads", "64", "--features", "64", "--length", "65536", "-o", "f.safetensors",
        NULL },
      "the fit needs" },
    /* a 2-D template: the slab, the lags and the codes together, before any is made */
    { "64M",
      { "compute", "empirical", "--grid", "2000x2000", "--kernel", "4", "-o", "x.npy", NULL },
      "template: the arrays need" },
    /* the default 2-D filters (8 x 64 x 128 x 128, twice, and the gate): 64 MiB and 2 KiB, refused
     * before they are drawn (the filters' check missed the gate: 79 MB resident under 64M) */
    { "64M", { "compute", "template", "--grid", "1000x1000", "-o", "x.npy", NULL }, "template: the arrays need", 40 },
    /* filters that fit (49.6 MB) beside a slab and lags that fit (20 MB), but not both: one sum,
     * checked before the filters are drawn (they were drawn, then the template's check refused) */
    { "64M",
      { "compute", "template", "--grid", "1000x1000", "--kernel", "110", "-o", "x.npy", NULL },
      "template: the arrays need",
      40 },
    { "64M",
      { "compute", "codes", "--grid", "300x300", "--kernel", "110", "--realizations", "1", "-o", "x.npy", "--out-keys",
        "k.npy", NULL },
      "codes: the arrays need",
      40 },
    /* computed arrays: refused by their own check, before they are computed */
    { "512M", { "curves", "extrapolation", "--max-length", "60000000", "-o", "e.csv", NULL }, "memory budget" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      Run   r = run_rpe (dir, cases[i].budget, 0, cases[i].args);
      gsize b = 0;

      if (r.status != 2 || strstr (r.err, cases[i].says) == NULL
          || (strstr (r.err, "image needs") != NULL
              && (strstr (r.err, "nothing was computed") == NULL || strstr (r.err, "--width") == NULL)))
        g_error ("rpe %s %s (case %zu): exit %d, '%s' (want 2 and '%s')", cases[i].args[0], cases[i].args[1], i,
                 r.status, r.err, cases[i].says);
      g_assert_true (rpe_budget_parse (cases[i].budget, &b));
      if (RSS_MEANINGFUL)
        g_assert_cmpint (r.maxrss_kb * 1024L, <=, (long) b);
      if (RSS_MEANINGFUL && cases[i].rss_below_mb > 0)
        g_assert_cmpint (r.maxrss_kb, <, cases[i].rss_below_mb * 1024L);
      run_clear (&r);
    }
  g_assert_cmpuint (dir_count (dir), ==, 0);

  /* the export size of a session */
  {
    g_autofree char *ses = g_build_filename (dir, "s.rpe-session", NULL);
    g_autofree char *text = NULL;
    const char *save[] = { "export", "attention",      "--length",      "16", "--width", "801", "--height", "601", "-o",
                           "a.png",  "--save-session", "s.rpe-session", NULL };
    const char *again[] = { "export", "--session", "s.rpe-session", "-o", "b.png", NULL };
    GString    *edited;
    Run         r = run_rpe (dir, NULL, 0, save);

    g_assert_cmpint (r.status, ==, 0);
    run_clear (&r);
    g_assert_true (g_file_get_contents (ses, &text, NULL, NULL));
    edited = g_string_new (text);
    g_assert_cmpuint (g_string_replace (edited, "\"width\" : 801.0", "\"width\" : 20000.0", 1), ==, 1);
    g_assert_cmpuint (g_string_replace (edited, "\"height\" : 601.0", "\"height\" : 20000.0", 1), ==, 1);
    g_assert_true (g_file_set_contents (ses, edited->str, -1, NULL));
    g_string_free (edited, TRUE);
    r = run_rpe (dir, "256M", 0, again);
    g_assert_cmpint (r.status, ==, 2);
    assert_message (&r, "20000 x 20000 image needs", "nothing was computed", NULL);
    run_clear (&r);
    g_assert_cmpuint (dir_count (dir), ==, 2); /* a.png and the session */
  }
}

/* ---- 4. non-finite results ---------------------------------------------------- */

static void
test_non_finite (void)
{
  expect_refused_full ("st-gains-3e38.safetensors", NULL, "'layers.spe.gains' holds 3e+38 at index [0, 0, 0]", FALSE);
  expect_refused_full ("st-conv-1e30.safetensors", NULL, "'layers.spe.conv_k.weight' holds 1e+30 at channel 0", FALSE);

  /* finite inputs whose logits overflow: checked before writing, nothing written */
  {
    g_autofree char *dir = case_dir ();
    g_autofree char *q = g_build_filename (rpe_test_tmpdir (), "huge-q.npy", NULL);
    float v[4 * 1 * 2];
    const char *args[] = { "compute", "logits", "--exact", "--heads", "1", "--features", "2",
                           "--queries", q, "-o", "out.npy", NULL };
    g_autoptr (GError) error = NULL;
    Run r;

    for (gsize i = 0; i < G_N_ELEMENTS (v); i++)
      v[i] = 1e30f;
    g_assert_true (rpe_npy_write (q, v, 3, (gsize[]) { 4, 1, 2 }, FALSE, &error));
    r = run_rpe (dir, NULL, 0, args);
    g_assert_cmpint (r.status, ==, 2);
    /* refused where the logits are computed (the core's range check), or where the output is
     * checked (the index): either way too large for float32 and nothing written */
    assert_message (&r, "too large", "float32", NULL);
    run_clear (&r);
    g_assert_cmpuint (dir_count (dir), ==, 0);
    g_unlink (q);
  }

  /* the same for sine `encode`, written in slabs of 512 rows: rows 600 .. overflow, in the
   * second slab, after the first was appended; both temporary files are removed */
  {
    g_autofree char *dir = case_dir ();
    g_autofree char *q = g_build_filename (rpe_test_tmpdir (), "huge-eq.npy", NULL);
    const gsize n = 700, H = 8, D = 2;
    g_autofree float *v = g_new (float, n * H * D);
    const char *args[] = { "compute", "encode", "--heads", "8", "--features", "2", "--sines", "2",
                           "--realizations", "64", "--queries", q, "-o", "out.npy", "--out-keys", "k.npy", NULL };
    g_autoptr (GError) error = NULL;
    Run r;

    for (gsize i = 0; i < n * H * D; i++)
      v[i] = i < 600 * H * D ? 1.0f : 3e38f;
    g_assert_true (rpe_npy_write (q, v, 3, (gsize[]) { n, H, D }, FALSE, &error));
    r = run_rpe (dir, NULL, 0, args);
    g_assert_cmpint (r.status, ==, 2);
    assert_message (&r, "out.npy", "too large for float32", "nothing was written", NULL);
    run_clear (&r);
    g_assert_cmpuint (dir_count (dir), ==, 0);
    g_unlink (q);
  }

  /* an empirical template of codes from finite noise of 1e30: refused as overflowing, as `rpe
   * compute empirical` refuses it (the figure said "no data to draw") */
  {
    g_autofree char *dir = case_dir ();
    g_autofree char *z = g_build_filename (rpe_test_tmpdir (), "huge-z.npy", NULL);
    float            v[1 * 2 * 2 * 4];
    g_autoptr (GError) error = NULL;

    for (gsize i = 0; i < G_N_ELEMENTS (v); i++)
      v[i] = 1e30f;
    g_assert_true (rpe_npy_write (z, v, 4, (gsize[]) { 1, 2, 2, 4 }, FALSE, &error));
    for (int mode = 0; mode < 2; mode++)
      {
        const char *args[] = { "export",
                               "template",
                               mode == 0 ? "--empirical" : "--difference",
                               "--heads",
                               "1",
                               "--features",
                               "2",
                               "--sines",
                               "1",
                               "--realizations",
                               "4",
                               "--noise",
                               z,
                               "--length",
                               "8",
                               "-o",
                               "t.png",
                               NULL };
        Run         r = run_rpe (dir, NULL, 0, args);

        g_assert_cmpint (r.status, ==, 2);
        assert_message (&r, "template", "overflows float32", NULL);
        run_clear (&r);
      }
    g_assert_cmpuint (dir_count (dir), ==, 0);
    g_unlink (z);
  }
}

/* ---- 5. escaping ---------------------------------------------------------------- */

static void
test_escape (void)
{
  static const struct { const char *in; const char *out; } cases[] = {
    { "plain.name", "plain.name" },
    { "\x1b]0;pwned\x07", "\\x1B]0;pwned\\x07" },
    { "a\rb\nc\td", "a\\x0Db\\x0Ac\\x09d" },
    { "bad\xff\xfe", "bad\\xFF\\xFE" },
    { "c1\xc2\x9b", "c1\\x9B" },
    { "\xe2\x80\xae" "exe", "\\u202Eexe" },
    { "back\\slash", "back\\\\slash" },
    { "caf\xc3\xa9", "caf\xc3\xa9" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *got = rpe_escape_name (cases[i].in);
      g_assert_cmpstr (got, ==, cases[i].out);
    }
  {
    g_autofree char *got = rpe_escape_bytes ("a\0b", 3);
    g_assert_cmpstr (got, ==, "a\\x00b");
  }
  /* a message keeps its backslashes but loses control characters */
  {
    g_autoptr (GError) error = NULL;

    rpe_set_error (&error, RPE_ERROR_FORMAT, "name '%s' and \\x", "\x1b[2J");
    g_assert_cmpstr (error->message, ==, "name '\\x1B[2J' and \\x");
  }

  /* rpe info prints escaped names; the window's browser uses the same function */
  for (int f = 0; f < 2; f++)
    {
      g_autofree char *dir = case_dir ();
      g_autofree char *path = fixture (f == 0 ? "st-evil-names.safetensors" : "npz-evil-names.npz");
      const char *args[] = { "info", path, NULL };
      Run r = run_rpe (dir, NULL, 0, args);

      g_assert_cmpint (r.status, ==, 0);
      assert_terminal_safe (r.out);
      if (f == 0)
        {
          g_assert_nonnull (strstr (r.out, "\\x1B]0;pwned\\x07"));
          g_assert_nonnull (strstr (r.out, "x\\x0Dlayers.spe.gate"));
          g_assert_nonnull (strstr (r.out, "\\u202Egnp.exe"));
        }
      else
        g_assert_nonnull (strstr (r.out, "hidden\\x0Dshown"));
      run_clear (&r);
      g_assert_cmpuint (dir_count (dir), ==, 0);
    }
}

/* ---- 6. outputs --------------------------------------------------------------- */

static void
test_outputs (void)
{
  g_autofree char *dir = case_dir ();
  g_autofree char *out = g_build_filename (dir, "out.npy", NULL);
  const char *write[] = { "compute", "template", "--length", "8", "--heads", "1", "--features", "2", "-o", "out.npy", NULL };
  const char *forced[] = { "compute", "template", "--length", "8", "--heads", "1", "--features", "2", "-o", "out.npy", "--force", NULL };
  g_autofree char *before = NULL, *after = NULL;
  gsize lb, la;
  struct stat st;
  Run r;

  /* an existing write-protected output: refused (exit 1), untouched, mode kept */
  g_assert_true (g_file_set_contents (out, "precious", -1, NULL));
  g_assert_cmpint (chmod (out, 0444), ==, 0);
  r = run_rpe (dir, NULL, 0, write);
  g_assert_cmpint (r.status, ==, 1);
  assert_message (&r, "write-protected", "--force", NULL);
  run_clear (&r);
  g_assert_true (g_file_get_contents (out, &before, &lb, NULL));
  g_assert_cmpstr (before, ==, "precious");
  g_assert_cmpint (stat (out, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0444);
  g_assert_cmpuint (dir_count (dir), ==, 1);
  /* --force replaces it */
  r = run_rpe (dir, NULL, 0, forced);
  g_assert_cmpint (r.status, ==, 0);
  run_clear (&r);
  g_assert_true (g_file_get_contents (out, &after, &la, NULL));
  g_assert_cmpuint (la, >, 8);
  g_assert_cmpuint (dir_count (dir), ==, 1);

  /* the output is an input (same inode, also through another name) */
  {
    g_autofree char *alias = g_build_filename (dir, "alias.npy", NULL);
    const char *same[] = { "compute", "logits", "--exact", "--queries", "out.npy", "-o", "out.npy", NULL };
    const char *linked[] = { "compute", "template", "--checkpoint", "out.npy", "-o", "alias.npy", NULL };
    g_autofree char *now = NULL;
    gsize ln;

    r = run_rpe (dir, NULL, 0, same);
    g_assert_cmpint (r.status, ==, 1);
    assert_message (&r, "also an input", NULL);
    run_clear (&r);
    g_assert_cmpint (link (out, alias), ==, 0);
    r = run_rpe (dir, NULL, 0, linked);
    g_assert_cmpint (r.status, ==, 1);
    assert_message (&r, "also an input", NULL);
    run_clear (&r);
    g_assert_true (g_file_get_contents (out, &now, &ln, NULL));
    g_assert_cmpuint (ln, ==, la);
    g_assert_true (memcmp (now, after, la) == 0);
    g_unlink (alias);
  }
  g_unlink (out);

  /* over `ulimit -f`: a message, exit 1, no temporary file, the old file kept */
  {
    const char *big[] = { "compute", "template", "--length", "64", "-o", "out.npy", NULL };
    const char *csv[] = { "curves", "profile", "--length", "256", "-o", "out.csv", NULL };
    const char *session[] = { "export",        "attention", "--length", "16", "--save-session",
                              "s.rpe-session", "-o",        "fig.npy",  NULL };

    r = run_rpe (dir, NULL, 4096, big);
    g_assert_cmpint (r.status, ==, 1);
    assert_message (&r, "File too large", NULL);
    run_clear (&r);
    g_assert_cmpuint (dir_count (dir), ==, 0);
    r = run_rpe (dir, NULL, 1024, csv);
    g_assert_cmpint (r.status, ==, 1);
    assert_message (&r, "File too large", NULL);
    run_clear (&r);
    g_assert_cmpuint (dir_count (dir), ==, 0);
    /* the figure fits, its session (the window's whole state, some 200 kB) does not: exit 1
     * as for every output, and neither file is published */
    r = run_rpe (dir, NULL, 8192, session);
    g_assert_cmpint (r.status, ==, 1);
    assert_message (&r, "s.rpe-session", "File too large", NULL);
    run_clear (&r);
    g_assert_cmpuint (dir_count (dir), ==, 0);
  }
}

/* ---- 7. inputs ---------------------------------------------------------------- */

static void
test_inputs (void)
{
  g_autofree char *dir = case_dir ();
  g_autofree char *fifo = g_build_filename (rpe_test_tmpdir (), "fifo", NULL);
  const char *paths[] = { fifo, rpe_test_tmpdir (), "/dev/zero" };
  const char *words[] = { "FIFO", "directory", "device" };

  /* a FIFO with no writer would block a plain open(); a device never ends */
  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
  for (gsize i = 0; i < G_N_ELEMENTS (paths); i++)
    {
      const char *info[] = { "info", paths[i], NULL };
      const char *noise[] = { "compute", "codes", "--noise", paths[i], "-o", "out.npy", "--out-keys", "k.npy", NULL };
      Run r = run_rpe (dir, NULL, 0, info);

      g_assert_cmpint (r.status, ==, 2);
      assert_message (&r, words[i], "not a regular file", NULL);
      run_clear (&r);
      r = run_rpe (dir, NULL, 0, noise);
      g_assert_cmpint (r.status, ==, 2);
      assert_message (&r, words[i], NULL);
      run_clear (&r);
    }
  g_assert_cmpuint (dir_count (dir), ==, 0);
  g_unlink (fifo);

  /* read, not mapped: a file whose size changes while it is read is an error
   * (a /proc file says 0 bytes and then gives more: "grew") */
  {
    g_autoptr (GError) error = NULL;
    g_autoptr (GBytes) b = rpe_read_file ("/proc/self/status", &error);

    g_assert_null (b);
    g_assert_error (error, RPE_ERROR, RPE_ERROR_IO);
    g_assert_nonnull (strstr (error->message, "grew while being read"));
  }
}

/* Arrays with no rows are no content: every command that reads queries, values or a profile
 * refuses them by name (0 rows was taken for "no length given" and N fell back to 256: the
 * SPE commands read past the buffer, lrpe-attention wrote a map of garbage). */
static void
test_empty_arrays (void)
{
  g_autofree char *dir = case_dir ();
  g_autofree char *q = g_build_filename (rpe_test_tmpdir (), "q-0-rows.npy", NULL);
  g_autofree char *ql = g_build_filename (rpe_test_tmpdir (), "ql-0-rows.npy", NULL);
  g_autofree char *t1 = g_build_filename (rpe_test_tmpdir (), "target-1.npy", NULL);
  g_autofree char *t0 = g_build_filename (rpe_test_tmpdir (), "target-0.npy", NULL);
  const char *spe[] = { "attention", "logits", "linear", "rpe-logits", "encode" };
  const char *lrpe[] = { "lrpe-attention", "lrpe-encode", "lrpe-linear" };
  float one = 1.0f;

  g_assert_true (rpe_npy_write (q, NULL, 3, (gsize[]) { 0, 8, 64 }, FALSE, NULL));
  g_assert_true (rpe_npy_write (ql, NULL, 3, (gsize[]) { 0, 4, 16 }, FALSE, NULL));
  g_assert_true (rpe_npy_write (t0, NULL, 1, (gsize[]) { 0 }, FALSE, NULL));
  g_assert_true (rpe_npy_write (t1, &one, 1, (gsize[]) { 1 }, FALSE, NULL));
  for (gsize i = 0; i < G_N_ELEMENTS (spe) + G_N_ELEMENTS (lrpe); i++)
    {
      const char *cmd = i < G_N_ELEMENTS (spe) ? spe[i] : lrpe[i - G_N_ELEMENTS (spe)];
      const char *args[] = { "compute", cmd, "--queries", i < G_N_ELEMENTS (spe) ? q : ql, "-o", "out.npy", NULL };
      const char *vals[] = { "compute", cmd, "--values", i < G_N_ELEMENTS (spe) ? q : ql, "-o", "out.npy", NULL };
      Run r = run_rpe (dir, NULL, 0, args);

      if (r.status != 2 || strstr (r.err, "empty") == NULL)
        g_error ("compute %s --queries (0 rows): exit %d, '%s'", cmd, r.status, r.err);
      run_clear (&r);
      if (g_str_equal (cmd, "linear") || g_str_equal (cmd, "lrpe-linear"))
        {
          r = run_rpe (dir, NULL, 0, vals);
          if (r.status != 2 || strstr (r.err, "empty") == NULL)
            g_error ("compute %s --values (0 rows): exit %d, '%s'", cmd, r.status, r.err);
          run_clear (&r);
        }
    }
  /* a fit target: empty, or too short for a profile (the file's fault, not --length's) */
  {
    const char *a0[] = { "fit", "--target", "file", "--target-file", t0, "-o", "f.safetensors", NULL };
    const char *a1[] = { "fit", "--target", "file", "--target-file", t1, "-o", "f.safetensors", NULL };
    Run r = run_rpe (dir, NULL, 0, a0);

    g_assert_cmpint (r.status, ==, 2);
    assert_message (&r, "empty", NULL);
    run_clear (&r);
    r = run_rpe (dir, NULL, 0, a1);
    g_assert_cmpint (r.status, ==, 2);
    assert_message (&r, "target-1.npy", "1 values", NULL);
    g_assert_null (strstr (r.err, "--length"));
    run_clear (&r);
  }
  g_assert_cmpuint (dir_count (dir), ==, 0);
  g_unlink (q);
  g_unlink (ql);
  g_unlink (t0);
  g_unlink (t1);
}

/* Fit targets that cannot be fitted are refused naming the target and what is wrong with it
 * (they exited 0 printing "relative error inf"): all zero, subnormal, constant, a NaN or an
 * infinity inside, one element, and ALiBi slopes of 0, below 0, subnormal or huge. */
static void
test_fit_targets (void)
{
  g_autofree char *dir = case_dir ();
  static const struct
  {
    const char *name;
    float       first, rest;
    gsize       n;
    const char *says;
  } files[] = {
    { "t-zero.npy", 0.0f, 0.0f, 63, "is all zero" },
    { "t-negzero.npy", -0.0f, -0.0f, 63, "is all zero" },
    { "t-subnormal.npy", 1e-40f, 1e-40f, 63, "below float32's normal range" },
    { "t-one-subnormal.npy", 1e-45f, 0.0f, 63, "below float32's normal range" },
    { "t-constant.npy", 3.0f, 3.0f, 63, "is constant" },
    { "t-huge-constant.npy", 3e38f, 3e38f, 31, "is constant" },
    { "t-nan.npy", 1.0f, NAN, 63, "nan" },
    { "t-inf.npy", -INFINITY, 1.0f, 63, "inf" },
    { "t-one.npy", 1.0f, 1.0f, 1, "1 values" },
  };
  static const struct
  {
    const char *slopes;
    const char *says;
  } alibi[] = {
    { "0", "above 0" },                    /* zero */
    { "-1", "above 0" },                   /* negative */
    { "0,0.5", "above 0" },                /* one of several */
    { "1e-42", "float32's normal range" }, /* subnormal */
    { "1e39", "at most 1e+18" },           /* beyond float32 */
  };

  for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char  *path = g_build_filename (rpe_test_tmpdir (), files[i].name, NULL);
      g_autofree float *v = g_new (float, files[i].n);
      const char       *args[] = { "fit", "--target", "file", "--target-file", path, "-o", "f.safetensors", NULL };
      Run               r;

      for (gsize k = 0; k < files[i].n; k++)
        v[k] = k == 0 ? files[i].first : files[i].rest;
      g_assert_true (rpe_npy_write (path, v, 1, (gsize[]) { files[i].n }, FALSE, NULL));
      r = run_rpe (dir, NULL, 0, args);
      if (r.status != 2 || strstr (r.err, files[i].name) == NULL || strstr (r.err, files[i].says) == NULL
          || strstr (r.err, "--length") != NULL || strstr (r.err, "relative error") != NULL)
        g_error ("fit --target-file %s: exit %d, '%s' (want 2 and '%s')", files[i].name, r.status, r.err,
                 files[i].says);
      run_clear (&r);
      g_unlink (path);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (alibi); i++)
    {
      const char *args[] = { "fit",           "--target", "alibi",          "--heads",       "2",
                             "--length",      "16",       "--alibi-slopes", alibi[i].slopes, "-o",
                             "f.safetensors", NULL };
      Run         r = run_rpe (dir, NULL, 0, args);

      if (r.status != 2 || strstr (r.err, "--alibi-slopes") == NULL || strstr (r.err, alibi[i].says) == NULL
          || strstr (r.err, "relative error") != NULL)
        g_error ("fit --alibi-slopes %s: exit %d, '%s' (want 2 and '%s')", alibi[i].slopes, r.status, r.err,
                 alibi[i].says);
      run_clear (&r);
    }
  g_assert_cmpuint (dir_count (dir), ==, 0);

  /* the core's diagnosis: where, and which fault */
  {
    double t[2 * 5];
    gsize  head = 9, index = 9;
    double value = 0;

    for (gsize k = 0; k < G_N_ELEMENTS (t); k++)
      t[k] = 2.0;
    g_assert_cmpint (rpe_fit_target_fault (2, 3, t, &head, &index, &value), ==, RPE_FIT_TARGET_CONSTANT);
    g_assert_cmpfloat (value, ==, 2.0);
    t[7] = 1e25; /* head 1 deviates by 0.8e25 */
    g_assert_cmpint (rpe_fit_target_fault (2, 3, t, &head, &index, &value), ==, RPE_FIT_TARGET_HUGE);
    g_assert_cmpuint (head, ==, 1);
    g_assert_cmpint (rpe_fit_target_check (2, 3, t), ==, RPE_ERROR_RANGE);
    t[7] = NAN;
    g_assert_cmpint (rpe_fit_target_fault (2, 3, t, &head, &index, &value), ==, RPE_FIT_TARGET_NOT_FINITE);
    g_assert_cmpuint (head, ==, 1);
    g_assert_cmpuint (index, ==, 2);
    t[7] = 3.0;
    g_assert_cmpint (rpe_fit_target_fault (2, 3, t, NULL, NULL, NULL), ==, RPE_FIT_TARGET_FINE);
    g_assert_cmpint (rpe_fit_target_check (2, 3, t), ==, RPE_OK);
  }
}

/* A zero Householder v (+0 or -0) is named as the file's fault, not "invalid argument" or a
 * bare "degenerate input". */
static void
test_zero_householder (void)
{
  g_autofree char *dir = case_dir ();
  const float      values[] = { 0.0f, -0.0f };

  for (gsize i = 0; i < G_N_ELEMENTS (values); i++)
    {
      g_autofree char *path = g_strdup_printf ("%s/v-%zu.npy", rpe_test_tmpdir (), (size_t) i);
      float            v[16];
      const char      *args[] = {
             "compute", "lrpe-encode", "--lrpe-p", "householder", "--lrpe-v", path,       "--lrpe-householder",
             "fixed",   "--features",  "16",       "--heads",     "1",        "--length", "8",
             "-o",      "x.npy",       NULL
      };
      Run r;

      for (gsize k = 0; k < G_N_ELEMENTS (v); k++)
        v[k] = values[i];
      g_assert_true (rpe_npy_write (path, v, 1, (gsize[]) { 16 }, FALSE, NULL));
      r = run_rpe (dir, NULL, 0, args);
      g_assert_cmpint (r.status, ==, 2);
      assert_message (&r, path, "Householder v is zero", NULL);
      run_clear (&r);
      g_unlink (path);
    }
  g_assert_cmpuint (dir_count (dir), ==, 0);
}

/* A command's outputs are one set: put in place together when the command succeeds, none of
 * them when one fails (the first output was replaced before the second failed). */
static void
assert_contents (const char *dir, const char *name, const char *want)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autofree char *text = NULL;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_assert_cmpstr (text, ==, want);
}

static void
put (const char *dir, const char *name, const char *text)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);

  g_assert_true (g_file_set_contents (path, text, -1, NULL));
}

static void
test_output_set (void)
{
  g_autofree char *dir = case_dir ();

  put (dir, "fig.png", "old");
  put (dir, "f.safetensors", "old");
  {
    const char *args[] = { "export", "attention", "--length", "16", "-o", "fig.png",
                           "--save-session", "nodir/s.rpe-session", NULL };
    Run r = run_rpe (dir, NULL, 0, args);

    g_assert_cmpint (r.status, !=, 0);
    assert_message (&r, "nodir/s.rpe-session", NULL);
    run_clear (&r);
    assert_contents (dir, "fig.png", "old");
  }
  {
    const char *args[] = { "fit", "--target", "alibi", "--heads", "2", "--features", "4", "--length", "16",
                           "-o", "f.safetensors", "--csv", "nodir/x.csv", NULL };
    Run r = run_rpe (dir, NULL, 0, args);

    g_assert_cmpint (r.status, !=, 0);
    assert_message (&r, "nodir/x.csv", NULL);
    run_clear (&r);
    assert_contents (dir, "f.safetensors", "old");
  }
  /* nothing else left behind (no temporary file) */
  g_assert_cmpuint (dir_count (dir), ==, 2);
  /* and both, when both can be written */
  {
    const char *args[] = { "export", "attention", "--length", "16", "-o", "fig.png",
                           "--save-session", "s.rpe-session", NULL };
    Run r = run_rpe (dir, NULL, 0, args);
    g_autofree char *png = g_build_filename (dir, "fig.png", NULL);
    g_autofree char *ses = g_build_filename (dir, "s.rpe-session", NULL);
    g_autofree char *text = NULL;

    g_assert_cmpint (r.status, ==, 0);
    run_clear (&r);
    g_assert_true (g_file_get_contents (png, &text, NULL, NULL));
    g_assert_true (g_str_has_prefix (text, "\x89PNG"));
    g_assert_true (g_file_test (ses, G_FILE_TEST_IS_REGULAR));
  }
}

/* An output onto a symbolic link is written through it (as cp does): the link stays and the
 * file it names is replaced, for every writer (images, arrays, CSV). */
static void
test_output_symlink (void)
{
  g_autofree char *dir = case_dir ();
  const char *cases[][2] = { { "a.png", "export" }, { "a.npy", "compute" }, { "a.csv", "curves" } };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *target = g_strdup_printf ("target-%s", cases[i][0]);
      g_autofree char *link = g_strdup_printf ("link-%s", cases[i][0]);
      g_autofree char *lpath = g_build_filename (dir, link, NULL);
      g_autofree char *tpath = g_build_filename (dir, target, NULL);
      const char *exp[] = { "export", "attention", "--length", "16", "-o", link, NULL };
      const char *cmp[] = { "compute", "template", "--length", "8", "--head", "0", "--feature", "0", "-o", link, NULL };
      const char *crv[] = { "curves", "profile", "--length", "16", "-o", link, NULL };
      const char *const *args = i == 0 ? exp : i == 1 ? cmp : crv;
      g_autofree char *text = NULL;
      Run r;

      put (dir, target, "old");
      g_assert_cmpint (symlink (target, lpath), ==, 0);
      r = run_rpe (dir, NULL, 0, args);
      if (r.status != 0)
        g_error ("%s onto a link: exit %d: %s", cases[i][0], r.status, r.err);
      run_clear (&r);
      g_assert_true (g_file_test (lpath, G_FILE_TEST_IS_SYMLINK));
      g_assert_true (g_file_get_contents (tpath, &text, NULL, NULL));
      g_assert_cmpstr (text, !=, "old");
    }
}

/* A full disk: a small tmpfs when this process may mount one (the PDF writer exited 0 leaving
 * a truncated file); the old file stays and the exit is non-zero. */
static void
test_full_disk (void)
{
  g_autofree char *mnt = g_build_filename (rpe_test_tmpdir (), "full-disk", NULL);
  g_autofree char *opts = NULL;
  const char *mount_argv[] = { "mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt, NULL };
  const char *umount_argv[] = { "umount", mnt, NULL };
  const char *formats[] = { "pdf", "svg", "png" };
  int wait = -1;

  g_assert_cmpint (g_mkdir_with_parents (mnt, 0700), ==, 0);
  if (!g_spawn_sync (NULL, (char **) mount_argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL, NULL,
                     NULL, NULL, NULL, &wait, NULL)
      || wait != 0)
    {
      g_test_skip ("cannot mount a small tmpfs here");
      return;
    }
  for (gsize i = 0; i < G_N_ELEMENTS (formats); i++)
    {
      g_autofree char *name = g_strdup_printf ("fig.%s", formats[i]);
      const char *args[] = { "export", "attention", "--length", "512", "--width", "2000", "--height", "2000",
                             "-o", name, NULL };
      Run r;

      put (mnt, name, "old");
      r = run_rpe (mnt, NULL, 0, args);
      g_assert_cmpint (r.status, ==, 1);
      run_clear (&r);
      assert_contents (mnt, name, "old");
    }
  /* every other writer: an animation, CSV, .npy (streamed and whole), a checkpoint, a session */
  {
    static const struct
    {
      const char *name;
      const char *args[24];
    } more[] = {
      { "s.gif",
        { "export", "attention", "--length", "64", "--sweep", "seed=1:8", "--frames", "4", "--width", "800", "--height",
          "800", "-o", "s.gif", NULL } },
      { "p.csv", { "curves", "profile", "--length", "8192", "-o", "p.csv", NULL } },
      { "t.npy", { "compute", "template", "--length", "256", "-o", "t.npy", NULL } },
      { "a.npy", { "compute", "attention", "--length", "256", "-o", "a.npy", NULL } },
      { "f.safetensors",
        { "fit", "--target", "alibi", "--heads", "32", "--features", "64", "--length", "16", "--max-iter", "1", "-o",
          "f.safetensors", NULL } },
      { "s.rpe-session",
        { "export", "attention", "--length", "16", "-o", "../full-disk-fig.png", "--save-session", "s.rpe-session",
          NULL } },
    };

    for (gsize i = 0; i < G_N_ELEMENTS (more); i++)
      {
        Run r;

        put (mnt, more[i].name, "old");
        r = run_rpe (mnt, NULL, 0, more[i].args);
        /* a full disk is the system's state: exit 1, whether the writer's own check or the
         * write finds it */
        if (r.status != 1)
          g_error ("%s onto a full disk: exit %d, not 1: '%s'", more[i].name, r.status, r.err);
        /* a writer that knows its size says so before writing: the bytes needed and free */
        if ((g_str_has_suffix (more[i].name, ".npy") || g_str_has_suffix (more[i].name, ".safetensors"))
            && (strstr (r.err, "free on its disk") == NULL || strstr (r.err, " bytes") == NULL))
          g_error ("%s onto a full disk: '%s'", more[i].name, r.err);
        run_clear (&r);
        assert_contents (mnt, more[i].name, "old");
      }
    g_assert_cmpuint (dir_count (mnt), ==, G_N_ELEMENTS (formats) + G_N_ELEMENTS (more));
    /* the session's figure, outside the full disk, waited for the session and was not put in place */
    {
      g_autofree char *fig = g_build_filename (rpe_test_tmpdir (), "full-disk-fig.png", NULL);

      g_assert_false (g_file_test (fig, G_FILE_TEST_EXISTS));
    }
  }
  g_spawn_sync (NULL, (char **) umount_argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
}

/* ---- 8. options a command does not use ---------------------------------------- */

static void
test_unused_options (void)
{
  g_autofree char *dir = case_dir ();
  static const char *const cases[][10] = {
    { "curves", "error", "--noise", "/no/such/file.npy", "-o", "out.csv", NULL },
    { "curves", "profile", "--realizations-list", "4,8", "-o", "out.csv", NULL },
    { "compute", "template", "--queries", "/no/such/q.npy", "-o", "out.npy", NULL },
    { "compute", "codes", "--gate-noise=/no/such/e.npy", "-o", "out.npy", NULL },
    { "compute", "lrpe-encode", "--noise", "/no/such/z.npy", "-o", "out.npy", NULL },
    { "export", "templates", "--relative-embeddings", "e.npy", "-o", "out.png", NULL },
  };
  static const char *const names[] = { "--noise", "--realizations-list", "--queries", "--gate-noise",
                                       "--noise", "--relative-embeddings" };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      Run r = run_rpe (dir, NULL, 0, (const char *const *) cases[i]);
      g_autofree char *cmd = g_strdup_printf ("'rpe %s %s'", cases[i][0], cases[i][1]);

      g_assert_cmpint (r.status, ==, 2);
      assert_message (&r, names[i], "is not used by", cmd, NULL);
      run_clear (&r);
    }
  g_assert_cmpuint (dir_count (dir), ==, 0);

  /* options of the command that this figure does not read: refused, not dropped (each was exit 0,
   * the file never opened; --map and --prefix without a checkpoint likewise) */
  {
    static const char *const taken[][12] = {
      { "export", "templates", "--noise", "/no/such/z.npy", "-o", "out.png", NULL },
      { "export", "template", "--gate-noise", "/no/such/e.npy", "-o", "out.png", NULL },
      { "export", "templates", "--queries", "/no/such/q.npy", "-o", "out.png", NULL },
      { "export", "attention", "--keys", "/no/such/k.npy", "-o", "out.png", NULL },
      { "export", "attention", "--exact", "--noise", "/no/such/z.npy", "-o", "out.png", NULL },
      { "export", "attention", "--attention-method", "fastrpb", "--bias", "/no/such/w.npy", "-o", "out.png", NULL },
      { "export", "attention", "--attention-method", "lrpe", "--lrpe-v", "/no/such/v.npy", "-o", "out.png", NULL },
      { "export", "curves", "--lrpe-theta-file", "/no/such/t.npy", "-o", "out.png", NULL },
      { "export", "spe-vs-rpe", "--lrpe-p", "dct", "-o", "out.png", NULL },
      { "compute", "template", "--map", "gate=g", "-o", "out.npy", NULL },
      { "curves", "profile", "--prefix", "layers.0", "-o", "out.csv", NULL },
      { "compute", "attention", "--exact", "--noise", "/no/such/z.npy", "-o", "out.npy", NULL },
      { "compute", "logits", "--exact", "--gate-noise", "/no/such/e.npy", "-o", "out.npy", NULL },
      { "curves", "profile", "--models", "sine", "--lrpe-v", "/no/such/v.npy", "-o", "out.csv", NULL },
      { "curves", "extrapolation", "--models", "sine,lrpe", "--bias", "/no/such/w.npy", "-o", "out.csv", NULL },
    };
    static const char *const said[][2] = {
      { "--noise", "is not used by" },
      { "--gate-noise", "is not used by" },
      { "--queries", "is not used by" },
      { "--keys", "is not used by" },
      { "--noise", "is not used by" },
      { "--bias", "is not used by" },
      { "--lrpe-v", "is not used by" },
      { "--lrpe-theta-file", "is not used by" },
      { "--lrpe-p", "is not used by" },
      { "--map", "--checkpoint" },
      { "--prefix", "--checkpoint" },
      { "--noise", "is not used with --exact" },
      { "--gate-noise", "is not used with --exact" },
      { "--lrpe-v", "--models does not draw" },
      { "--bias", "--models does not draw" },
    };

    for (gsize i = 0; i < G_N_ELEMENTS (taken); i++)
      {
        Run r = run_rpe (dir, NULL, 0, (const char *const *) taken[i]);

        g_assert_cmpint (r.status, ==, 2);
        assert_message (&r, said[i][0], said[i][1], NULL);
        run_clear (&r);
      }
    g_assert_cmpuint (dir_count (dir), ==, 0);
  }
}

/* ---- the system's memory limit (ulimit -v) ------------------------------------ */

/* Under an address-space limit, what does not fit is an error that names the
 * limit, never an abort in GLib's allocator or an endless retry in OpenBLAS's:
 * `rpe info` on a file of 65536 tensors under 150 MB (was SIGABRT in g_malloc or
 * GSlice), and `rpe compute attention --length 256` under 400 MB, which runs
 * (with one thread when two do not fit; was an endless mmap retry inside sgemm)
 * and under 150 MB, which is refused. */
static void
test_system_limit (void)
{
#if defined(__SANITIZE_ADDRESS__)
  g_test_skip ("AddressSanitizer reserves the address space this limit counts");
#else
  g_autofree char *dir = case_dir ();
  g_autofree char *path = g_build_filename (rpe_test_tmpdir (), "many-small.safetensors", NULL);
  const char *info[] = { "info", path, NULL };
  const char *attention[] = { "compute", "attention", "--length", "256", "-o", "out.npy", NULL };
  GString *h = g_string_new ("{");
  GString *file;
  guint64 len;
  Run r;

  if (!rpe_test_address_limit_applies ())
    {
      g_test_skip ("this system does not apply an address-space limit set with setrlimit "
                   "(qemu-user accepts it and applies nothing)");
      g_string_free (h, TRUE);
      return;
    }
  for (guint i = 0; i < RPE_SAFETENSORS_MAX_TENSORS; i++)
    g_string_append_printf (h, "%s\"layers.%u.attn.w%u\":{\"dtype\":\"F32\",\"shape\":[1],"
                            "\"data_offsets\":[%u,%u]}", i ? "," : "", i, i % 3, 4 * i, 4 * i + 4);
  g_string_append_c (h, '}');
  len = GUINT64_TO_LE ((guint64) h->len);
  file = g_string_new_len ((const char *) &len, 8);
  g_string_append_len (file, h->str, (gssize) h->len);
  for (guint i = 0; i < RPE_SAFETENSORS_MAX_TENSORS; i++)
    g_string_append_len (file, "\0\0\0\0", 4);
  g_assert_true (g_file_set_contents (path, file->str, (gssize) file->len, NULL));

  run_as_limit = (rlim_t) 150 << 20;
  r = run_rpe (dir, NULL, 0, info);      /* a signal fails run_rpe itself */
  g_assert_cmpint (r.status, ==, 1);
  assert_message (&r, "ulimit", NULL);
  run_clear (&r);

  run_as_limit = (rlim_t) 400 << 20;
  r = run_rpe (dir, NULL, 0, attention);
  g_assert_cmpint (r.status, ==, 0);
  run_clear (&r);
  {
    g_autofree char *out = g_build_filename (dir, "out.npy", NULL);

    g_assert_true (g_file_test (out, G_FILE_TEST_IS_REGULAR));
  }

  run_as_limit = (rlim_t) 150 << 20;
  r = run_rpe (dir, NULL, 0, attention);
  g_assert_cmpint (r.status, ==, 1);
  assert_message (&r, "out of memory", "limit", NULL);
  g_assert_null (strstr (r.err, "budget"));
  run_clear (&r);
  run_as_limit = 0;
  g_string_free (h, TRUE);
  g_string_free (file, TRUE);
#endif
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cli/hostile/zip-lies", test_zip_lies);
  g_test_add_func ("/cli/hostile/zip-whole-file-budget", test_zip_whole_file_budget);
  g_test_add_func ("/cli/hostile/tensor-count", test_tensor_count);
  g_test_add_func ("/cli/hostile/safetensors-strict", test_safetensors_strict);
  g_test_add_func ("/cli/hostile/budget-message", test_budget_message);
  g_test_add_func ("/cli/hostile/output-space-first", test_output_space_first);
  g_test_add_func ("/cli/hostile/budget-before-work", test_budget_before_work);
  g_test_add_func ("/cli/hostile/non-finite", test_non_finite);
  g_test_add_func ("/cli/hostile/escape", test_escape);
  g_test_add_func ("/cli/hostile/outputs", test_outputs);
  g_test_add_func ("/cli/hostile/inputs", test_inputs);
  g_test_add_func ("/cli/hostile/empty-arrays", test_empty_arrays);
  g_test_add_func ("/cli/hostile/fit-targets", test_fit_targets);
  g_test_add_func ("/cli/hostile/zero-householder", test_zero_householder);
  g_test_add_func ("/cli/hostile/output-set", test_output_set);
  g_test_add_func ("/cli/hostile/output-symlink", test_output_symlink);
  g_test_add_func ("/cli/hostile/full-disk", test_full_disk);
  g_test_add_func ("/cli/hostile/unused-options", test_unused_options);
  g_test_add_func ("/cli/hostile/system-limit", test_system_limit);
  return g_test_run ();
}

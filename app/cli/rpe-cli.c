/* rpe-cli.c: `rpe`, the headless command-line tool over the numeric core.
 *
 * Scripts depend on this interface: options are only ever added, never changed.
 * Exit status: 0 success, 2 bad usage or bad input, 1 any other failure.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <glib/gi18n.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "rpe-alloc.h"
#include "rpe-attention.h"
#include "rpe-capture.h"
#include "rpe-checkpoint.h"
#include "rpe-checkpoint-lrpe.h"
#include "rpe-demos.h"
#include "rpe-error.h"
#include "rpe-file.h"
#include "rpe-npy.h"
#include "rpe-rng.h"
#include "rpe-spe.h"
#include "rpe-text.h"

#include "rpe-gif.h"

#include "rpe-cli.h"

#define EXIT_USAGE 2
#define EXIT_FAILURE_OTHER 1

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */

int
rpe_cli_exit_code_for_error (const GError *error)
{
  if (error == NULL)
    return 0;
  if (error->domain == G_OPTION_ERROR)
    return EXIT_USAGE;
  if (error->domain == RPE_ERROR)
    {
      switch ((RpeStatus) error->code)
        {
        case RPE_ERROR_INVALID_ARGUMENT:
        case RPE_ERROR_OVERFLOW:
        case RPE_ERROR_NO_MEMORY:
        case RPE_ERROR_NOT_FINITE:
        case RPE_ERROR_RANGE:
        case RPE_ERROR_DEGENERATE:
        case RPE_ERROR_FORMAT:
        case RPE_ERROR_UNSUPPORTED:
        case RPE_ERROR_NOT_FOUND:
          return EXIT_USAGE;
        case RPE_ERROR_IO:
          /* an unreadable input file is bad input; write failures are reported as IO too,
           * callers that write map them to 1 themselves */
          return EXIT_USAGE;
        case RPE_ERROR_NO_SPACE:
          /* an output larger than its disk's free space, whether found before anything is
           * computed or by the writer before it writes: the system's state, as a full disk */
          return EXIT_FAILURE_OTHER;
        default:
          return EXIT_FAILURE_OTHER;
        }
    }
  if (error->domain == G_FILE_ERROR || error->domain == G_IO_ERROR)
    return EXIT_USAGE;
  return EXIT_FAILURE_OTHER;
}

gboolean
rpe_cli_usage_error (GError **error, const char *format, ...)
{
  va_list          args;
  g_autofree char *msg = NULL;

  va_start (args, format);
  msg = g_strdup_vprintf (format, args);
  va_end (args);
  return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, "%s", msg);
}

gboolean
rpe_cli_alloc_floats (float **out, gsize a, gsize b, gsize c, gsize d, const char *what, GError **error)
{
  gsize     count;
  RpeStatus st = rpe_size_bytes (&count, 1, a, b, c, d);

  *out = NULL;
  if (st == RPE_OK)
    *out = rpe_alloc (count, sizeof (float), &st);
  return rpe_cli_status_error (st, what, error);
}

gboolean
rpe_cli_status_error (RpeStatus status, const char *what, GError **error)
{
  if (status == RPE_OK)
    return TRUE;
  if (status == RPE_ERROR_OVERFLOW)
    return rpe_set_error (error, status,
                          _("%s: the request is far too large (its size does not fit in memory addresses); "
                            "reduce --length, --realizations, --heads or --features"),
                          what);
  if (status == RPE_ERROR_NO_MEMORY)
    {
      g_autofree char *budget = g_format_size_full (rpe_budget_get (), G_FORMAT_SIZE_IEC_UNITS);

      return rpe_set_error (error, status,
                            _("%s: the arrays would not fit in the memory budget of %s "
                              "(reduce --length, --realizations, --heads or --features)"),
                            what, budget);
    }
  return rpe_set_error (error, status, "%s: %s", what, rpe_status_to_string (status));
}

gboolean
rpe_cli_noise_scheme (const RpeCliArgs *o, RpeNoiseScheme *scheme, GError **error)
{
  *scheme = RPE_NOISE_IID;
  if (o->draw.noise_scheme == NULL)
    return TRUE;
  if (!rpe_noise_scheme_from_string (o->draw.noise_scheme, scheme))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          _("--noise-scheme must be iid, orthogonal, antithetic or sobol (got '%s')"),
                          o->draw.noise_scheme);
  if (*scheme != RPE_NOISE_IID && (o->draw.noise != NULL || o->draw.gate_noise != NULL))
    return rpe_set_error (
      error, RPE_ERROR_INVALID_ARGUMENT,
      _("--noise-scheme %s shapes the drawn noise: it cannot apply to replayed --noise/--gate-noise"),
      o->draw.noise_scheme);
  return TRUE;
}

/* What the figure's drawing will hold (rpe_cli_check_image), counted in every later budget check. */
static gsize image_reserve;

gboolean
rpe_cli_check_image (const RpeFigure     *probe,
                     RpeExportFormat      format,
                     const RpeExportSize *size,
                     gboolean             animation,
                     GError             **error)
{
  int      wpx = 0, hpx = 0;
  gsize    bytes = 0;
  gboolean fits;

  image_reserve = 0;
  if (format == RPE_EXPORT_SVG || format == RPE_EXPORT_PDF)
    {
      /* the heatmap images the page holds until it ends, from the size alone */
      double wpt = 0.0, hpt = 0.0;

      if (!rpe_export_resolve_size (probe, format, size, &wpt, &hpt, NULL, NULL, error))
        return FALSE;
      if (!rpe_export_vector_bytes (probe, wpt, hpt, &bytes) || rpe_budget_check (bytes) != RPE_OK)
        {
          g_autofree char *need = g_format_size_full (bytes, G_FORMAT_SIZE_IEC_UNITS);
          g_autofree char *budget = g_format_size_full (rpe_budget_get (), G_FORMAT_SIZE_IEC_UNITS);

          return rpe_set_error (error, RPE_ERROR_NO_MEMORY,
                                _("a %.0f x %.0f pt page needs %s (%zu bytes) to draw its images, over the memory "
                                  "budget of %s; nothing was computed (reduce --width, --height or --preset)"),
                                wpt, hpt, need, (size_t) bytes, budget);
        }
      image_reserve = bytes;
      return TRUE;
    }
  if (format != RPE_EXPORT_PNG)
    return TRUE; /* data: counted with the arrays */
  if (!rpe_export_resolve_size (probe, format, size, NULL, NULL, &wpx, &hpx, error))
    return FALSE;
  fits = animation ? rpe_gif_frame_bytes (wpx, hpx, &bytes) : rpe_export_png_bytes (wpx, hpx, &bytes);
  if (!fits || rpe_budget_check (bytes) != RPE_OK)
    {
      g_autofree char *need = g_format_size_full (bytes, G_FORMAT_SIZE_IEC_UNITS);
      g_autofree char *budget = g_format_size_full (rpe_budget_get (), G_FORMAT_SIZE_IEC_UNITS);

      return rpe_set_error (error, RPE_ERROR_NO_MEMORY,
                            animation ? _("each %d x %d frame needs %s (%zu bytes) to draw, over the memory budget of "
                                          "%s; nothing was computed (reduce --width, --height, --dpi or --preset)")
                                      : _("a %d x %d image needs %s (%zu bytes) to draw, over the memory budget of "
                                          "%s; nothing was computed (reduce --width, --height, --dpi or --preset)"),
                            wpx, hpx, need, (size_t) bytes, budget);
    }
  image_reserve = bytes;
  return TRUE;
}

gboolean
rpe_cli_check_budget (const char *what, gsize n_arrays, const gsize (*dims)[4], GError **error)
{
  /* beside what the command holds already (parameters, inputs, codes: every rpe_alloc'd block
   * not yet freed) and what its figure's drawing will hold */
  gsize total = image_reserve + rpe_alloc_held ();

  for (gsize i = 0; i < n_arrays; i++)
    {
      gsize bytes;

      if (rpe_size_bytes (&bytes, sizeof (float), dims[i][0], dims[i][1], dims[i][2], dims[i][3]) != RPE_OK
          || !rpe_size_add (total, bytes, &total))
        return rpe_cli_status_error (RPE_ERROR_OVERFLOW, what, error);
    }
  if (rpe_budget_check (total) != RPE_OK)
    {
      /* sizes as GLib says them: "512 bytes", "1.5 MiB", never "0.0 MiB" */
      g_autofree char *need = g_format_size_full (total, G_FORMAT_SIZE_IEC_UNITS);
      g_autofree char *budget = g_format_size_full (rpe_budget_get (), G_FORMAT_SIZE_IEC_UNITS);

      /* and in bytes: 64.0 MiB can be over a budget of 64.0 MiB */
      return rpe_set_error (error, RPE_ERROR_NO_MEMORY,
                            _("%s: the arrays need %s (%zu bytes), over the memory budget of %s (%zu bytes) "
                              "(reduce --length, --realizations, --heads or --features)"),
                            what, need, (size_t) total, budget, (size_t) rpe_budget_get ());
    }
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* Parameters and inputs                                                    */

static gboolean
check_positive (gint64 value, gint64 max, const char *option, GError **error)
{
  if (value < 1 || value > max)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          "%s must be between 1 and %" G_GINT64_FORMAT " (got %" G_GINT64_FORMAT ")", option, max,
                          value);
  return TRUE;
}

/* --map ROLE=TENSOR (repeatable) into a tensor map; NULL when not given. */
gboolean
rpe_cli_parse_map (const RpeCliArgs *o, RpeTensorMap **map, GError **error)
{
  *map = NULL;
  if (o->model.map == NULL || o->model.map[0] == NULL)
    return TRUE;
  if (o->model.checkpoint == NULL)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          _("--map names tensors of a checkpoint: give --checkpoint"));
  *map = rpe_tensor_map_new ();
  for (char **a = o->model.map; *a != NULL; a++)
    if (!rpe_tensor_map_parse (*map, *a, error))
      {
        g_clear_pointer (map, rpe_tensor_map_free);
        return FALSE;
      }
  return TRUE;
}

gboolean
rpe_cli_map_only (const RpeTensorMap *map, RpeRole first, RpeRole last, const char *what, GError **error)
{
  for (int r = 0; r < RPE_N_ROLES; r++)
    if ((r < (int) first || r > (int) last) && rpe_tensor_map_get (map, (RpeRole) r) != NULL)
      return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                            _("--map %s=...: %s reads no such role (it reads %s%s%s)"),
                            rpe_role_to_string ((RpeRole) r), what, rpe_role_to_string (first),
                            first != last ? " .. " : "", first != last ? rpe_role_to_string (last) : "");
  return TRUE;
}

void
rpe_cli_phrase_pick_error (GError *error, const char *checkpoint, const char *prefix)
{
  char *text;

  if (error == NULL)
    return;
  /* the reader found several modules and was told none: the CLI's way to tell it */
  if (prefix == NULL && g_error_matches (error, RPE_ERROR, RPE_ERROR_INVALID_ARGUMENT))
    text = g_strdup_printf ("%s: %s (--prefix PREFIX)", checkpoint, error->message);
  else
    text = g_strdup_printf ("%s: %s", checkpoint, error->message);
  g_free (error->message);
  error->message = text;
}

RpeTensorSet *
rpe_cli_read_checkpoint (const char *path, GError **error)
{
  /* "demo" is the embedded demo checkpoint and "demo:NAME" a trained one (rpe-demos.h), unless a
   * file of that name exists */
  return rpe_demos_read_or_file (path, error);
}

gboolean
rpe_cli_check_method_module (const RpeCliArgs *o, const char *method, gboolean module, gboolean spe, GError **error)
{
  g_autoptr (RpeTensorSet) set = NULL;
  g_autoptr (GPtrArray) found = NULL;
  g_autofree char *summary = NULL;
  gboolean         lrpe = g_strcmp0 (method, "lrpe") == 0, fastrpb = g_strcmp0 (method, "fastrpb") == 0;

  if (o->model.checkpoint == NULL || o->model.map != NULL)
    return TRUE;
  if ((set = rpe_cli_read_checkpoint (o->model.checkpoint, error)) == NULL)
    return FALSE;
  if (module && (lrpe || fastrpb))
    {
      found = lrpe ? rpe_checkpoint_find_lrpe_modules (set) : rpe_checkpoint_find_fastrpb_modules (set);
      if (found == NULL || found->len == 0)
        {
          summary = rpe_checkpoint_summary (set);
          return rpe_set_error (error, RPE_ERROR_NOT_FOUND,
                                _("--attention-method %s: %s holds no %s module (it holds %s)"), method,
                                o->model.checkpoint, lrpe ? "LRPE" : "FastRPB", summary);
        }
      g_clear_pointer (&found, g_ptr_array_unref);
    }
  if (spe)
    {
      found = rpe_checkpoint_find_modules (set);
      if (found == NULL || found->len == 0)
        {
          summary = rpe_checkpoint_summary (set);
          if (lrpe || fastrpb || g_strcmp0 (method, "ape") == 0)
            return rpe_set_error (
              error, RPE_ERROR_NOT_FOUND,
              _("--attention-method %s: %s holds neither its trained module (%s) nor an SPE module "
                "to draw seeded parameters beside (it holds %s)"),
              method, o->model.checkpoint,
              lrpe      ? "LRPE"
              : fastrpb ? "FastRPB"
                        : "learned APE",
              summary);
          return rpe_set_error (error, RPE_ERROR_NOT_FOUND,
                                _("--attention-method %s draws the window's map beside an SPE module, and %s holds "
                                  "none (it holds %s)"),
                                method, o->model.checkpoint, summary);
        }
    }
  return TRUE;
}

gboolean
rpe_cli_trained_modules (const RpeCliArgs    *o,
                         const char          *method,
                         RpeExplorerTrained **trained,
                         RpeLrpeTrained     **lrpe,
                         gboolean            *has_method,
                         gboolean            *has_spe,
                         GError             **error)
{
  g_autoptr (RpeTensorSet) set = NULL;
  g_autoptr (GPtrArray) spe = NULL, lrpe_modules = NULL, fastrpb = NULL;
  g_autofree char *base = NULL;
  gsize            H = 0, D = 0;

  *trained = NULL;
  *lrpe = NULL;
  *has_method = FALSE;
  /* no checkpoint: seeded SPE parameters; --map: the SPE module it names (rpe_cli_load_params
   * says when it names none) */
  *has_spe = o->model.checkpoint == NULL || o->model.map != NULL;
  if (*has_spe)
    return TRUE;
  if ((set = rpe_cli_read_checkpoint (o->model.checkpoint, error)) == NULL)
    return FALSE;
  spe = rpe_checkpoint_find_modules (set);
  *has_spe = spe != NULL && spe->len > 0;
  lrpe_modules = rpe_checkpoint_find_lrpe_modules (set);
  fastrpb = rpe_checkpoint_find_fastrpb_modules (set);
  base = g_path_get_basename (o->model.checkpoint);

  /* the model's (H, D): the capture's, the demo's metadata, the FastRPB bias's H and --features */
  if (rpe_cli_content_is_capture (o))
    {
      gsize n;

      if (!rpe_cli_capture_shape (o, &n, &H, &D, error))
        return FALSE;
    }
  else
    rpe_demos_model_shape (o->model.checkpoint, &H, &D);
  if (H == 0 || D == 0)
    {
      const RpeFastrpbModuleInfo *m = fastrpb != NULL && fastrpb->len > 0 ? g_ptr_array_index (fastrpb, 0) : NULL;

      H = m != NULL ? m->n_heads : (gsize) o->model.heads;
      D = (gsize) o->model.features;
    }
  *trained = rpe_explorer_trained_from_set (set, H, D, base, error);
  if (*trained == NULL && error != NULL && *error != NULL)
    return FALSE;
  if (*trained == NULL && lrpe_modules != NULL && lrpe_modules->len > 0)
    {
      /* LRPE alone: an empty set that carries the model's shape */
      if ((*trained = rpe_explorer_trained_new (H, D, base, error)) == NULL)
        return FALSE;
    }
  if (g_strcmp0 (method, "lrpe") == 0 && lrpe_modules != NULL && lrpe_modules->len > 0)
    {
      g_autoptr (GPtrArray) modules = NULL;
      const RpeLrpeModuleInfo *m = rpe_checkpoint_pick_lrpe (set, o->model.prefix, &modules, error);
      g_autofree char         *from = NULL;

      if (m == NULL)
        goto fail;
      from = g_strdup_printf ("%s module “%s”", base, m->prefix[0] != '\0' ? m->prefix : "(top)");
      if ((*lrpe = rpe_lrpe_trained_new (m->v, m->theta, m->permutation, from, error)) == NULL)
        goto fail;
      *has_method = TRUE;
    }
  else if (g_strcmp0 (method, "fastrpb") == 0)
    *has_method = *trained != NULL && (*trained)->n_fastrpb > 0;
  else if (g_strcmp0 (method, "ape") == 0)
    *has_method = *trained != NULL && (*trained)->ape != NULL;
  return TRUE;

fail:
  g_clear_pointer (trained, rpe_explorer_trained_unref);
  return FALSE;
}

gboolean
rpe_cli_load_params (const RpeCliArgs *o, RpeSpeParams *params, GError **error)
{
  return rpe_cli_load_params_full (o, params, TRUE, error);
}

gboolean
rpe_cli_load_params_full (const RpeCliArgs *o, RpeSpeParams *params, gboolean print_notes, GError **error)
{
  RpeSpeMethod method = RPE_SPE_SINE;
  RpeStatus    st;

  memset (params, 0, sizeof *params);
  if (o->model.method != NULL)
    {
      if (g_str_equal (o->model.method, "sine"))
        method = RPE_SPE_SINE;
      else if (g_str_equal (o->model.method, "conv"))
        method = RPE_SPE_CONV;
      else
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--method must be sine or conv (got '%s')"),
                              o->model.method);
    }

  if (o->model.checkpoint != NULL)
    {
      g_autoptr (RpeTensorSet) set = rpe_cli_read_checkpoint (o->model.checkpoint, error);
      g_autoptr (RpeTensorMap) map = NULL;
      g_autofree char *note = NULL;
      RpeSpeSelection  sel = RPE_SPE_SELECTION_INIT;

      if (set == NULL)
        return FALSE;
      if (!rpe_cli_parse_map (o, &map, error)
          || (map != NULL && !rpe_cli_map_only (map, RPE_ROLE_SINE_FREQS, RPE_ROLE_GATE, "an SPE module", error)))
        return FALSE;
      sel.prefix = o->model.prefix;
      sel.layer = o->model.layer;
      sel.method = o->model.method != NULL ? (int) method : -1;
      sel.no_gate = o->model.no_gate;
      sel.map = map;
      if (!rpe_checkpoint_load_spe_full (set, &sel, params, &note, error))
        {
          g_prefix_error (error, "%s: ", o->model.checkpoint);
          return FALSE;
        }
      if (note != NULL && print_notes)
        {
          g_autofree char *escaped = g_strescape (note, "\n");
          fprintf (stderr, _("rpe: %s\n"), escaped);
          /* the reader says what it chose; the options that choose otherwise are the CLI's */
          fprintf (stderr, _("rpe: choose the module with --prefix, the layer with --layer and a gate with "
                             "--map gate=TENSOR (rpe info lists them)\n"));
        }
    }
  else
    {
      if (!check_positive (o->model.heads, 4096, "--heads", error)
          || !check_positive (o->model.features, 1 << 16, "--features", error)
          || (method == RPE_SPE_SINE && !check_positive (o->model.sines, 1 << 16, "--sines", error))
          || (method == RPE_SPE_CONV && !check_positive (o->model.kernel, 1 << 24, "--kernel", error)))
        return FALSE;
      {
        /* sine: freqs, offsets, gains (H, D, K); conv: two (H*D, L) filters; the gate (H, D) */
        const gsize dims[2][4] = {
          { (gsize) o->model.heads, (gsize) o->model.features,
            method == RPE_SPE_SINE ? (gsize) o->model.sines : (gsize) o->model.kernel, method == RPE_SPE_SINE ? 3 : 2 },
          { (gsize) o->model.heads, (gsize) o->model.features, 1, 1 },
        };
        if (!rpe_cli_check_budget ("random parameters", 2, dims, error))
          return FALSE;
      }
      st = rpe_spe_params_init (params, method, (size_t) o->model.heads, (size_t) o->model.features,
                                method == RPE_SPE_SINE ? (size_t) o->model.sines : (size_t) o->model.kernel, TRUE);
      if (st == RPE_OK)
        st = rpe_spe_params_random (params, (uint64_t) o->draw.seed);
      if (st != RPE_OK)
        {
          rpe_spe_params_clear (params);
          return rpe_cli_status_error (st, "random parameters", error);
        }
    }
  if (o->model.no_gate && params->gate != NULL)
    {
      rpe_free (params->gate);
      params->gate = NULL;
    }
  return TRUE;
}

/* Every .npy the tool reads: refused when a dimension is 0 (no content, never "not given"). */
RpeTensor *
rpe_cli_read_npy (const char *path, GError **error)
{
  g_autoptr (RpeTensor) t = rpe_npy_read (path, error);

  if (t == NULL)
    return NULL;
  if (!rpe_shape_check_nonempty (path, t->ndim, t->shape, error))
    return NULL;
  return g_steal_pointer (&t);
}

/* Reads an .npy of `want_ndim` dims, accepting one extra leading 1 (a batch of one). */
RpeTensor *
rpe_cli_read_array (const char *path, gsize want_ndim, const char *what, GError **error)
{
  g_autoptr (RpeTensor) t = rpe_npy_read (path, error);

  if (t == NULL)
    return NULL;
  if (t->ndim == want_ndim + 1 && t->shape[0] == 1)
    {
      memmove (t->shape, t->shape + 1, want_ndim * sizeof t->shape[0]);
      t->ndim = want_ndim;
    }
  if (t->ndim != want_ndim)
    {
      g_autofree char *shape = rpe_tensor_shape_string (t);
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("%s: %s must have %zu dimensions, got shape %s"), path, what,
                     (size_t) want_ndim, shape);
      return NULL;
    }
  /* an array with no rows is no content: its length is never taken for "not given" */
  if (!rpe_shape_check_nonempty (what, t->ndim, t->shape, error) || !rpe_tensor_check_finite (t, error))
    {
      g_prefix_error (error, "%s: ", path);
      return NULL;
    }
  return g_steal_pointer (&t);
}

/* N, from --length or the inputs. */
gboolean
rpe_cli_resolve_length (const RpeCliArgs *o, gsize input_length, gsize *n, GError **error)
{
  if (o->draw.length != RPE_CLI_UNSET)
    {
      if (!check_positive (o->draw.length, (gint64) 1 << 32, "--length", error))
        return FALSE;
      if (input_length != 0 && (gsize) o->draw.length != input_length)
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                              "--length %" G_GINT64_FORMAT " does not match the inputs' length %zu", o->draw.length,
                              (size_t) input_length);
      *n = (gsize) o->draw.length;
    }
  else
    *n = input_length != 0 ? input_length : 256;
  return TRUE;
}

void
rpe_cli_inputs_clear (RpeCliInputs *in)
{
  rpe_free (in->q);
  rpe_free (in->k);
  rpe_free (in->v);
  memset (in, 0, sizeof *in);
}

static float *
take_tensor_data (RpeTensor *t)
{
  float *data = t->data;

  t->data = NULL;
  rpe_tensor_free (t);
  return data;
}

gboolean
rpe_cli_content_random (const RpeCliArgs *o, gboolean *random, GError **error)
{
  *random = FALSE;
  if (o->content.kind == NULL || g_str_equal (o->content.kind, "unit"))
    return TRUE;
  if (g_str_equal (o->content.kind, "random"))
    {
      *random = TRUE;
      return TRUE;
    }
  if (rpe_capture_is_spec (o->content.kind))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          _("--content %s: this command draws its content per position (unit or random) "
                            "and takes no capture"),
                          o->content.kind);
  return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                        _("--content must be unit, random or a capture (.npz, demo:NAME) (got '%s')"),
                        o->content.kind);
}

void
rpe_cli_content_rows (const RpeCliArgs *o, gboolean random, gsize H, gsize D, gsize m0, gsize rows, float *q, float *k)
{
  gsize count = rows * H * D; /* the caller allocated it */

  if (random)
    {
      rpe_rng_normal_parallel ((uint64_t) o->draw.seed, RPE_STREAM_QUERIES, m0 * H * D, q, count, 0);
      if (k != NULL)
        rpe_rng_normal_parallel ((uint64_t) o->draw.seed, RPE_STREAM_KEYS, m0 * H * D, k, count, 0);
    }
  else
    for (gsize i = 0; i < count; i++)
      {
        q[i] = 1.0f;
        if (k != NULL)
          k[i] = 1.0f;
      }
}

gboolean
rpe_cli_content_is_capture (const RpeCliArgs *o)
{
  return o->content.kind != NULL && rpe_capture_is_spec (o->content.kind);
}

/* The fingerprint of --checkpoint's model, made once per command however many captures are
 * checked against it (hashing reads every value of the checkpoint). */
static RpeModelPrint *command_print;
static char          *command_print_path;

void
rpe_cli_forget_model_print (void)
{
  g_clear_pointer (&command_print, rpe_model_print_unref);
  g_clear_pointer (&command_print_path, g_free);
}

static RpeModelPrint *
model_print_for (const char *checkpoint, GError **error)
{
  g_autoptr (RpeTensorSet) set = NULL;

  if (command_print != NULL && g_strcmp0 (command_print_path, checkpoint) == 0)
    return command_print;
  if ((set = rpe_cli_read_checkpoint (checkpoint, error)) == NULL)
    return NULL;
  rpe_cli_forget_model_print ();
  command_print = rpe_model_print_new (set, checkpoint);
  command_print_path = g_strdup (checkpoint);
  return command_print;
}

/* Opens a capture (a path or demo:NAME) and, with --checkpoint, checks that it was made on that
 * model (rpe_capture_check_model) before anything is computed; a capture that records no model
 * is taken with a one-line note (said once). */
static RpeCapture *
open_capture_for_model (const RpeCliArgs *o, const char *spec, GError **error)
{
  static gboolean noted = FALSE;
  g_autoptr (RpeCapture) capture = rpe_capture_open (spec, error);
  RpeModelPrint *print;

  if (capture == NULL || o->model.checkpoint == NULL)
    return g_steal_pointer (&capture);
  if (rpe_capture_n_model_tensors (capture) == 0)
    {
      if (!noted)
        fprintf (stderr,
                 _("rpe: %s records no fingerprint of the model it was made on: that it comes from %s "
                   "cannot be checked\n"),
                 spec, o->model.checkpoint);
      noted = TRUE;
      return g_steal_pointer (&capture);
    }
  if ((print = model_print_for (o->model.checkpoint, error)) == NULL
      || !rpe_capture_check_model (capture, print, NULL, error))
    return NULL;
  return g_steal_pointer (&capture);
}

gboolean
rpe_cli_capture_layer (const RpeCliArgs  *o,
                       gsize              H,
                       gsize              D,
                       gboolean           want_values,
                       RpeCaptureContent *content,
                       GError           **error)
{
  g_autoptr (RpeCapture) capture = NULL;
  g_autoptr (RpeCapture) values = NULL;
  gboolean          values_here = want_values && o->content.values != NULL && rpe_capture_is_spec (o->content.values);
  RpeCaptureContent vc = { 0 };
  guint             layer;

  memset (content, 0, sizeof *content);
  if (o->content.queries != NULL || o->content.keys != NULL)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          _("--content %s and --queries/--keys both give the queries and keys: give one"),
                          o->content.kind);
  if ((capture = open_capture_for_model (o, o->content.kind, error)) == NULL)
    return FALSE;
  if (o->model.layer >= 0)
    layer = (guint) o->model.layer;
  else
    {
      layer = rpe_capture_layer (capture, 0);
      if (rpe_capture_n_layers (capture) > 1)
        {
          g_autofree char *list = rpe_capture_layer_list (capture);

          fprintf (stderr, _("rpe: %s: using the capture's layer %u (its layers: %s); choose with --layer\n"),
                   o->content.kind, layer, list);
        }
    }
  if (!rpe_capture_load_content (capture, layer, H, D, 0,
                                 values_here && g_str_equal (o->content.values, o->content.kind), content, error))
    return FALSE;
  if (values_here && !g_str_equal (o->content.values, o->content.kind))
    {
      /* values from another capture: the same layer, as long */
      if ((values = open_capture_for_model (o, o->content.values, error)) == NULL
          || !rpe_capture_load_content (values, layer, H,
                                        rpe_capture_get (values, layer, RPE_CAPTURE_QUERIES) != NULL
                                          ? rpe_capture_get (values, layer, RPE_CAPTURE_QUERIES)->shape[2]
                                          : D,
                                        0, TRUE, &vc, error))
        {
          rpe_capture_content_clear (content);
          return FALSE;
        }
      if (vc.n != content->n)
        {
          rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                         _("%s: layer %u has %zu positions, but the values of %s have %zu"), o->content.kind, layer,
                         (size_t) content->n, o->content.values, (size_t) vc.n);
          rpe_capture_content_clear (&vc);
          rpe_capture_content_clear (content);
          return FALSE;
        }
      content->v = g_steal_pointer (&vc.v);
      content->dv = vc.dv;
      rpe_capture_content_clear (&vc);
    }
  return TRUE;
}

gboolean
rpe_cli_capture_shape (const RpeCliArgs *o, gsize *N, gsize *H, gsize *D, GError **error)
{
  g_autoptr (RpeCapture) capture = open_capture_for_model (o, o->content.kind, error);
  const RpeTensor *q;
  guint            layer;

  if (capture == NULL)
    return FALSE;
  layer = o->model.layer >= 0 ? (guint) o->model.layer : rpe_capture_layer (capture, 0);
  q = rpe_capture_get (capture, layer, RPE_CAPTURE_QUERIES);
  if (q == NULL)
    {
      g_autofree char *list = rpe_capture_layer_list (capture);

      return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("%s: the capture has no layer %u (its layers: %s)"),
                            o->content.kind, layer, list);
    }
  *N = q->shape[0];
  *H = q->shape[1];
  *D = q->shape[2];
  return TRUE;
}

RpeTensor *
rpe_cli_capture_values (const RpeCliArgs *o, gsize H, gsize D, GError **error)
{
  RpeCaptureContent cc;
  RpeTensor        *t;

  if (!rpe_cli_content_is_capture (o))
    {
      rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                     _("--values %s takes the values of a capture's layer: give the capture as --content too"),
                     o->content.values);
      return NULL;
    }
  if (!rpe_cli_capture_layer (o, H, D, TRUE, &cc, error))
    return NULL;
  t = rpe_tensor_new ("values", 3, (gsize[]) { cc.n, H, cc.dv }, error);
  if (t != NULL)
    memcpy (t->data, cc.v, cc.n * H * cc.dv * sizeof (float));
  rpe_capture_content_clear (&cc);
  return t;
}

/* Queries/keys (N, H, D) and optionally values (N, H, Dv); decides N. */
gboolean
rpe_cli_load_inputs (const RpeCliArgs   *o,
                     const RpeSpeParams *params,
                     gboolean            want_values,
                     RpeCliInputs       *in,
                     GError            **error)
{
  gsize      H = params->n_heads, D = params->n_features, n_in = 0, count;
  RpeTensor *v = NULL;
  RpeStatus  st;

  memset (in, 0, sizeof *in);
  if (rpe_cli_content_is_capture (o))
    {
      /* layer --layer of a capture: queries, keys (and values when --values names a capture) */
      RpeCaptureContent cc;

      if (!rpe_cli_capture_layer (o, H, D, want_values, &cc, error))
        return FALSE;
      if (!rpe_cli_resolve_length (o, cc.n, &in->n, error))
        {
          rpe_capture_content_clear (&cc);
          return FALSE;
        }
      in->q = g_steal_pointer (&cc.q);
      in->k = g_steal_pointer (&cc.k);
      if (cc.v != NULL)
        {
          in->v = g_steal_pointer (&cc.v);
          in->dv = cc.dv;
        }
      rpe_capture_content_clear (&cc);
      n_in = in->n;
      if (want_values && in->v == NULL && o->content.values != NULL)
        {
          v = rpe_cli_read_array (o->content.values, 3, "values", error);
          if (v == NULL)
            {
              rpe_cli_inputs_clear (in);
              return FALSE;
            }
        }
      goto values;
    }
  if (o->content.keys != NULL && o->content.queries == NULL)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--keys needs --queries"));
  if (o->content.queries != NULL)
    {
      RpeTensor *q = rpe_cli_read_array (o->content.queries, 3, "queries", error), *k = NULL;

      if (q == NULL)
        return FALSE;
      if (q->shape[1] != H || q->shape[2] != D)
        {
          rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                         _("%s: queries must have shape (N, %zu, %zu) to match the parameters, got (%zu, %zu, %zu)"),
                         o->content.queries, (size_t) H, (size_t) D, (size_t) q->shape[0], (size_t) q->shape[1],
                         (size_t) q->shape[2]);
          rpe_tensor_free (q);
          return FALSE;
        }
      if (o->content.keys != NULL)
        {
          k = rpe_cli_read_array (o->content.keys, 3, "keys", error);
          if (k == NULL)
            {
              rpe_tensor_free (q);
              return FALSE;
            }
          if (k->shape[0] != q->shape[0] || k->shape[1] != H || k->shape[2] != D)
            {
              rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                             _("%s: keys must have the queries' shape (%zu, %zu, %zu)"), o->content.keys,
                             (size_t) q->shape[0], (size_t) H, (size_t) D);
              rpe_tensor_free (q);
              rpe_tensor_free (k);
              return FALSE;
            }
        }
      n_in = q->shape[0];
      in->n = n_in;
      in->q = take_tensor_data (q);
      if (k != NULL)
        in->k = take_tensor_data (k);
      else
        {
          in->k = rpe_alloc (n_in * H * D, sizeof (float), &st);
          if (in->k == NULL)
            {
              rpe_cli_inputs_clear (in);
              return rpe_cli_status_error (st, "keys", error);
            }
          memcpy (in->k, in->q, n_in * H * D * sizeof (float));
        }
    }

  if (want_values && o->content.values != NULL)
    {
      v = rpe_capture_is_spec (o->content.values) ? rpe_cli_capture_values (o, H, D, error)
                                                  : rpe_cli_read_array (o->content.values, 3, "values", error);
      if (v == NULL)
        {
          rpe_cli_inputs_clear (in);
          return FALSE;
        }
      if (n_in == 0)
        n_in = v->shape[0]; /* without queries, the values decide N */
    }

  if (!rpe_cli_resolve_length (o, n_in, &in->n, error))
    {
      rpe_tensor_free (v);
      rpe_cli_inputs_clear (in);
      return FALSE;
    }

  if (in->q == NULL)
    {
      gboolean random = FALSE;

      if (!rpe_cli_content_random (o, &random, error))
        {
          rpe_tensor_free (v);
          rpe_cli_inputs_clear (in);
          return FALSE;
        }
      st = rpe_size_bytes (&count, 1, in->n, H, D, 1);
      if (st == RPE_OK)
        in->q = rpe_alloc (count, sizeof (float), &st);
      if (st == RPE_OK)
        in->k = rpe_alloc (count, sizeof (float), &st);
      if (st != RPE_OK)
        {
          rpe_tensor_free (v);
          rpe_cli_inputs_clear (in);
          return rpe_cli_status_error (st, "queries and keys", error);
        }
      rpe_cli_content_rows (o, random, H, D, 0, in->n, in->q, in->k);
    }

values:
  if (in->v != NULL)
    return TRUE; /* a capture's values */
  in->dv = D;
  /* v is only read when want_values */
  if (want_values)
    {
      if (v != NULL)
        {
          if (v->shape[0] != in->n || v->shape[1] != H || v->shape[2] == 0)
            {
              rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                             _("%s: values must have shape (%zu, %zu, Dv), got (%zu, %zu, %zu)"), o->content.values,
                             (size_t) in->n, (size_t) H, (size_t) v->shape[0], (size_t) v->shape[1],
                             (size_t) v->shape[2]);
              rpe_tensor_free (v);
              rpe_cli_inputs_clear (in);
              return FALSE;
            }
          in->dv = v->shape[2];
          in->v = take_tensor_data (v);
        }
      else
        {
          st = rpe_size_bytes (&count, 1, in->n, H, D, 1);
          if (st == RPE_OK)
            in->v = rpe_alloc (count, sizeof (float), &st);
          if (st != RPE_OK)
            {
              rpe_cli_inputs_clear (in);
              return rpe_cli_status_error (st, "values", error);
            }
          rpe_rng_normal ((uint64_t) o->draw.seed, RPE_STREAM_VALUES, 0, in->v, count);
        }
    }
  return TRUE;
}

/* R from --realizations, or from the noise file, or 64. */
static gboolean
resolve_realizations (const RpeCliArgs *o, gsize from_noise, gsize *r, GError **error)
{
  if (o->draw.realizations != RPE_CLI_UNSET)
    {
      if (!check_positive (o->draw.realizations, (gint64) 1 << 24, "--realizations", error))
        return FALSE;
      if (from_noise != 0 && (gsize) o->draw.realizations != from_noise)
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                              "--realizations %" G_GINT64_FORMAT " does not match the noise's R = %zu",
                              o->draw.realizations, (size_t) from_noise);
      *r = (gsize) o->draw.realizations;
    }
  else
    *r = from_noise != 0 ? from_noise : 64;
  return TRUE;
}

void
rpe_cli_codes_clear (RpeCliCodes *c)
{
  rpe_free (c->qbar);
  rpe_free (c->kbar);
  memset (c, 0, sizeof *c);
}

/* Codes (N, H, D, R) from replayed or seeded noise; gated if `gate` and the params have a gate. */
gboolean
rpe_cli_make_codes (const RpeCliArgs   *o,
                    const RpeSpeParams *params,
                    gsize               n,
                    gboolean            gate,
                    RpeCliCodes        *codes,
                    GError            **error)
{
  gsize H = params->n_heads, D = params->n_features, r = 0, count, zcount;
  g_autoptr (RpeTensor) z = NULL;
  g_autoptr (RpeTensor) eps = NULL;
  float         *zbuf = NULL, *ebuf = NULL;
  RpeNoiseScheme scheme;
  RpeStatus      st;
  gboolean       ok = FALSE;

  memset (codes, 0, sizeof *codes);
  if (!rpe_cli_noise_scheme (o, &scheme, error))
    return FALSE;
  if (o->draw.noise != NULL)
    {
      gsize want_ndim = params->method == RPE_SPE_SINE ? 4 : 3;

      z = rpe_cli_read_array (o->draw.noise, want_ndim, "the code noise", error);
      if (z == NULL)
        return FALSE;
      if (params->method == RPE_SPE_SINE)
        {
          if (z->shape[0] != H || z->shape[1] != D || z->shape[2] != 2 * params->n_sines)
            return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                                  _("%s: sine noise must have shape (%zu, %zu, %zu, R), got (%zu, %zu, %zu, %zu)"),
                                  o->draw.noise, (size_t) H, (size_t) D, (size_t) (2 * params->n_sines),
                                  (size_t) z->shape[0], (size_t) z->shape[1], (size_t) z->shape[2],
                                  (size_t) z->shape[3]);
          r = z->shape[3];
        }
      else
        {
          if (z->shape[1] != H * D || z->shape[2] != n + 4 * params->kernel)
            return rpe_set_error (
              error, RPE_ERROR_INVALID_ARGUMENT,
              _("%s: conv noise must have shape (R, %zu, %zu) = (R, H*D, N+4L), got (%zu, %zu, %zu)"), o->draw.noise,
              (size_t) (H * D), (size_t) (n + 4 * params->kernel), (size_t) z->shape[0], (size_t) z->shape[1],
              (size_t) z->shape[2]);
          r = z->shape[0];
        }
      if (r == 0)
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("%s: the noise has R = 0"), o->draw.noise);
    }
  if (!resolve_realizations (o, r, &r, error))
    return FALSE;
  {
    /* the noise, both codes, the gate noise */
    const gsize dims[4][4] = {
      { H, D, params->method == RPE_SPE_SINE ? 2 * params->n_sines : 1,
        params->method == RPE_SPE_SINE ? r : r * (n + 4 * params->kernel) },
      { n, H, D, r },
      { n, H, D, r },
      { H, D, r, 1 },
    };
    if (z == NULL && !rpe_cli_check_budget ("codes", 4, dims, error))
      return FALSE;
    if (z != NULL && !rpe_cli_check_budget ("codes", 3, dims + 1, error))
      return FALSE;
  }

  if (z != NULL)
    zbuf = z->data;
  else
    {
      st = rpe_spe_noise_size (params, n, r, &zcount);
      if (st == RPE_OK)
        zbuf = rpe_alloc (zcount, sizeof (float), &st);
      if (st == RPE_OK)
        st = rpe_spe_noise_fill (params, n, r, (uint64_t) o->draw.seed, zbuf);
      /* noise scheme hook (rpe-noise.h): with a gate, its noise is one more coordinate of
       * each cell, so it is drawn here, before the codes */
      if (st == RPE_OK && scheme != RPE_NOISE_IID && gate && params->gate != NULL)
        {
          st = rpe_size_bytes (&count, 1, H, D, r, 1);
          if (st == RPE_OK)
            ebuf = rpe_alloc (count, sizeof (float), &st);
          if (st == RPE_OK)
            st = rpe_spe_gate_noise_fill (params, r, (uint64_t) o->draw.seed, ebuf);
        }
      if (st == RPE_OK && scheme != RPE_NOISE_IID)
        st = rpe_noise_apply (scheme, params, n, r, (uint64_t) o->draw.seed, zbuf, ebuf);
      if (st != RPE_OK)
        {
          rpe_cli_status_error (st, "code noise", error);
          goto out;
        }
    }

  st = rpe_size_bytes (&count, 1, n, H, D, r);
  if (st == RPE_OK)
    codes->qbar = rpe_alloc (count, sizeof (float), &st);
  if (st == RPE_OK)
    codes->kbar = rpe_alloc (count, sizeof (float), &st);
  if (st == RPE_OK)
    st = rpe_spe_codes (params, n, r, zbuf, codes->qbar, codes->kbar, NULL);
  if (st != RPE_OK)
    {
      rpe_cli_status_error (st, "codes", error);
      goto out;
    }
  codes->n = n;
  codes->r = r;

  if (gate && params->gate != NULL)
    {
      if (o->draw.gate_noise != NULL)
        {
          eps = rpe_cli_read_array (o->draw.gate_noise, 3, "the gate noise", error);
          if (eps == NULL)
            goto out;
          if (eps->shape[0] != H || eps->shape[1] != D || eps->shape[2] != r)
            {
              rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                             _("%s: gate noise must have shape (%zu, %zu, %zu) = (H, D, R), got (%zu, %zu, %zu)"),
                             o->draw.gate_noise, (size_t) H, (size_t) D, (size_t) r, (size_t) eps->shape[0],
                             (size_t) eps->shape[1], (size_t) eps->shape[2]);
              goto out;
            }
          ebuf = eps->data;
        }
      else if (ebuf == NULL)
        {
          st = rpe_size_bytes (&count, 1, H, D, r, 1);
          if (st == RPE_OK)
            ebuf = rpe_alloc (count, sizeof (float), &st);
          if (st == RPE_OK)
            st = rpe_spe_gate_noise_fill (params, r, (uint64_t) o->draw.seed, ebuf);
          if (st != RPE_OK)
            {
              rpe_cli_status_error (st, "gate noise", error);
              goto out;
            }
        }
      st = rpe_spe_gate_codes (params, n, r, ebuf, codes->qbar, codes->kbar);
      if (st != RPE_OK)
        {
          rpe_cli_status_error (st, "gating", error);
          goto out;
        }
    }
  ok = TRUE;

out:
  if (z == NULL)
    rpe_free (zbuf);
  if (eps == NULL)
    rpe_free (ebuf);
  if (!ok)
    rpe_cli_codes_clear (codes);
  return ok;
}

/* Encoded queries and keys (N, H, R) from gated codes and the content. */
gboolean
rpe_cli_encode (const RpeSpeParams *params,
                const RpeCliCodes  *codes,
                const RpeCliInputs *in,
                float             **qhat,
                float             **khat,
                GError            **error)
{
  gsize     count;
  RpeStatus st = rpe_size_bytes (&count, 1, codes->n, params->n_heads, codes->r, 1);

  *qhat = *khat = NULL;
  if (st == RPE_OK)
    *qhat = rpe_alloc (count, sizeof (float), &st);
  if (st == RPE_OK)
    *khat = rpe_alloc (count, sizeof (float), &st);
  if (st == RPE_OK)
    st = rpe_spe_encode (codes->n, params->n_heads, params->n_features, codes->r, codes->qbar, codes->kbar, in->q,
                         in->k, *qhat, *khat, NULL);
  if (st != RPE_OK)
    {
      g_clear_pointer (qhat, rpe_free);
      g_clear_pointer (khat, rpe_free);
      return rpe_cli_status_error (st, "encoding", error);
    }
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* Output                                                                   */

gboolean
rpe_cli_check_output (const RpeCliArgs *o, const char *path, GError **error)
{
  const char *inputs[] = {
    o->model.checkpoint,
    o->draw.noise,
    o->draw.gate_noise,
    o->content.queries,
    o->content.keys,
    o->content.values,
    o->content.relative_embeddings,
    o->fastrpb.bias,
    o->fastrpb.rows,
    o->fastrpb.cols,
  };

  GStatBuf st;

  for (gsize i = 0; i < G_N_ELEMENTS (inputs); i++)
    rpe_file_add_input (inputs[i]);
  if (path == NULL || rpe_output_check (path, error))
    return TRUE;
  /* a write-protected file the reader refused to replace: the option that replaces it */
  if (error != NULL && *error != NULL && g_stat (path, &st) == 0 && S_ISREG (st.st_mode) && (st.st_mode & 0222) == 0)
    {
      char *text = g_strdup_printf ("%s (--force replaces it)", (*error)->message);

      g_free ((*error)->message);
      (*error)->message = text;
    }
  return FALSE;
}

gboolean
rpe_cli_check_finite (const char  *path,
                      const float *data,
                      gsize        count,
                      gsize        first,
                      gsize        ndim,
                      const gsize *shape,
                      int         *exit_code,
                      GError     **error)
{
  if (rpe_all_finite_f (data, count))
    return TRUE;
  for (gsize i = 0; i < count; i++)
    if (!isfinite (data[i]))
      {
        GString         *index = g_string_new (NULL);
        gsize            rest = first + i;
        gsize            idx[RPE_TENSOR_MAX_DIMS] = { 0 };
        g_autofree char *name = g_path_get_basename (path);

        for (gsize d = ndim; d-- > 0 && d < RPE_TENSOR_MAX_DIMS;)
          {
            idx[d] = shape[d] != 0 ? rest % shape[d] : 0;
            rest = shape[d] != 0 ? rest / shape[d] : 0;
          }
        for (gsize d = 0; d < ndim && d < RPE_TENSOR_MAX_DIMS; d++)
          g_string_append_printf (index, d == 0 ? "%zu" : ", %zu", (size_t) idx[d]);
        *exit_code = EXIT_USAGE;
        rpe_set_error (error, RPE_ERROR_NOT_FINITE,
                       _("the result for %s would hold %g at index [%s]: the parameters or inputs are "
                         "finite but too large for float32 arithmetic; nothing was written"),
                       name, (double) data[i], index->str);
        g_string_free (index, TRUE);
        return FALSE;
      }
  return TRUE;
}

static gboolean
check_finite_result (const char  *path,
                     const float *data,
                     gsize        ndim,
                     const gsize *shape,
                     int         *exit_code,
                     GError     **error)
{
  gsize count;

  return !rpe_size_prod (&count, ndim, shape)
         || rpe_cli_check_finite (path, data, count, 0, ndim, shape, exit_code, error);
}

gboolean
rpe_cli_write (const RpeCliArgs *o,
               const char       *path,
               const float      *data,
               gsize             ndim,
               const gsize      *shape,
               int              *exit_code,
               GError          **error)
{
  if (!check_finite_result (path, data, ndim, shape, exit_code, error))
    return FALSE;
  if (!rpe_npy_write (path, data, ndim, shape, o->output.f64, error))
    {
      *exit_code = EXIT_FAILURE_OTHER;
      return FALSE;
    }
  return TRUE;
}

typedef struct
{
  RpeNpyWriter *writer;
  GError       *error;
} FlushJob;

static gpointer
flush_job (gpointer data)
{
  FlushJob *f = data;

  if (f->writer != NULL && !rpe_npy_writer_flush (f->writer, &f->error))
    g_clear_pointer (&f->writer, rpe_npy_writer_abort);
  return NULL;
}

gboolean
rpe_cli_commit_pair (RpeNpyWriter *a, RpeNpyWriter *b, int *exit_code, GError **error)
{
  FlushJob jobs[2] = { { a, NULL }, { b, NULL } };
  GThread *thread = b != NULL ? g_thread_try_new ("rpe-flush", flush_job, &jobs[1], NULL) : NULL;
  gboolean ok = TRUE;

  /* the two fsyncs overlap */
  flush_job (&jobs[0]);
  if (thread != NULL)
    g_thread_join (thread);
  else
    flush_job (&jobs[1]);
  for (int i = 0; i < 2; i++)
    if (jobs[i].error != NULL)
      {
        if (ok)
          g_propagate_error (error, g_steal_pointer (&jobs[i].error));
        g_clear_error (&jobs[i].error);
        ok = FALSE;
      }
  for (int i = 0; i < 2; i++)
    {
      if (ok)
        ok = jobs[i].writer == NULL || rpe_npy_writer_commit (g_steal_pointer (&jobs[i].writer), error);
      else
        rpe_npy_writer_abort (g_steal_pointer (&jobs[i].writer));
    }
  if (!ok)
    *exit_code = EXIT_FAILURE_OTHER;
  return ok;
}

/* One file of rpe_cli_write_pair: written and flushed, not yet renamed. */
typedef struct
{
  const char   *path;
  const float  *data;
  gsize         ndim;
  const gsize  *shape;
  gboolean      f64;
  RpeNpyWriter *writer; /* flushed, on success */
  GError       *error;
} PairFile;

static gpointer
pair_file_write (gpointer data)
{
  PairFile     *f = data;
  RpeNpyWriter *w = rpe_npy_writer_new (f->path, f->ndim, f->shape, f->f64, &f->error);
  gsize         count = 1;

  for (gsize i = 0; i < f->ndim; i++)
    count *= f->shape[i]; /* rpe_npy_writer_new checked the product */
  if (w != NULL && (!rpe_npy_writer_append (w, f->data, count, &f->error) || !rpe_npy_writer_flush (w, &f->error)))
    g_clear_pointer (&w, rpe_npy_writer_abort);
  f->writer = w;
  return NULL;
}

gboolean
rpe_cli_write_pair (const RpeCliArgs *o,
                    const char       *path_a,
                    const float      *a,
                    const char       *path_b,
                    const float      *b,
                    gsize             ndim,
                    const gsize      *shape,
                    int              *exit_code,
                    GError          **error)
{
  PairFile files[2] = {
    { path_a, a, ndim, shape, o->output.f64, NULL, NULL },
    { path_b, b, ndim, shape, o->output.f64, NULL, NULL },
  };
  GThread *thread;
  gboolean ok = TRUE;

  if (path_b == NULL)
    return rpe_cli_write (o, path_a, a, ndim, shape, exit_code, error);
  if (!check_finite_result (path_a, a, ndim, shape, exit_code, error)
      || !check_finite_result (path_b, b, ndim, shape, exit_code, error))
    return FALSE;
  /* the copies into the page cache and the two fsyncs overlap */
  thread = g_thread_try_new ("rpe-write", pair_file_write, &files[1], NULL);
  pair_file_write (&files[0]);
  if (thread != NULL)
    g_thread_join (thread);
  else
    pair_file_write (&files[1]);
  for (int i = 0; i < 2; i++)
    if (files[i].writer == NULL && ok)
      {
        g_propagate_error (error, g_steal_pointer (&files[i].error));
        ok = FALSE;
      }
  /* both are on disk: publish them (a rename that still fails leaves the other file in place) */
  for (int i = 0; i < 2; i++)
    {
      if (ok)
        ok = rpe_npy_writer_commit (g_steal_pointer (&files[i].writer), error);
      else
        rpe_npy_writer_abort (g_steal_pointer (&files[i].writer));
      g_clear_error (&files[i].error);
    }
  if (!ok)
    *exit_code = EXIT_FAILURE_OTHER;
  return ok;
}

/* The heatmap colour scale of `rpe export` (--color-scale NAME, --gamma G, --percentile P,
 * --attention-transform): the transform and its parameter; FALSE after a message on stderr
 * (a usage error).  Shared by the heatmap, outputs and compare exports. */
gboolean
rpe_cli_color_scale (const char          *view,
                     const char          *name,
                     double               gamma,
                     double               percentile,
                     gboolean             attention_transform,
                     RpeHeatmapTransform *transform,
                     double              *param)
{
  *transform = attention_transform ? RPE_HEATMAP_TRANSFORM_ATTENTION : RPE_HEATMAP_TRANSFORM_NONE;
  if (name != NULL)
    {
      RpeHeatmapTransform t;

      if (!rpe_plot_transform_from_name (name, &t))
        {
          fprintf (stderr,
                   _("rpe export %s: --color-scale must be linear, log, power, percentile or attention "
                     "(got '%s')\n"),
                   view, name);
          return FALSE;
        }
      if (attention_transform && t != RPE_HEATMAP_TRANSFORM_ATTENTION)
        {
          fprintf (stderr, _("rpe export %s: --attention-transform contradicts --color-scale %s\n"), view, name);
          return FALSE;
        }
      *transform = t;
    }
  if (gamma != 0.0 && (*transform != RPE_HEATMAP_TRANSFORM_POWER || !(gamma >= 0.05 && gamma <= 10.0)))
    {
      fprintf (stderr, _("rpe export %s: --gamma needs --color-scale power and a value in 0.05 .. 10\n"), view);
      return FALSE;
    }
  if (percentile != 0.0
      && (*transform != RPE_HEATMAP_TRANSFORM_PERCENTILE || !(percentile >= 50.0 && percentile <= 100.0)))
    {
      fprintf (stderr, _("rpe export %s: --percentile needs --color-scale percentile and a value in 50 .. 100\n"),
               view);
      return FALSE;
    }
  *param = *transform == RPE_HEATMAP_TRANSFORM_POWER ? (gamma != 0.0 ? gamma : RPE_PLOT_DEFAULT_GAMMA)
           : *transform == RPE_HEATMAP_TRANSFORM_PERCENTILE
             ? (percentile != 0.0 ? percentile : RPE_PLOT_DEFAULT_PERCENTILE)
             : 0.0;
  return TRUE;
}

/* rpe-cli-export.c: `rpe export VIEW [options] -o FILE.png|svg|pdf|csv|npy`
 *
 * Publication figures of the views of RPE Studio, rendered by the same
 * GTK-free renderers as the window (ui/render/rpe-export.h).
 *   heatmap views  templates | template | attention | spe-vs-rpe: the options of
 *                  `rpe compute` (parameters, length, realizations, seed, inputs);
 *   curve views    profile | error | extrapolation: every option of `rpe curves`
 *                  (the table is computed by it, then plotted).
 * Exit status: 0 success, 2 bad usage or bad input, 1 any other failure.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <glib/gi18n.h>

#include <glib/gstdio.h>

#include "rpe-publish.h"
#include "rpe-alloc.h"
#include "rpe-attention.h"
#include "rpe-curves.h"
#include "rpe-demos.h"
#include "rpe-error.h"
#include "rpe-export.h"
#include "rpe-figure-names.h"
#include "rpe-gif.h"
#include "rpe-rng.h"
#include "rpe-compute.h"
#include "rpe-session.h"
#include "rpe-spe.h"

#include "rpe-cli.h"

#define EXIT_USAGE 2
#define EXIT_FAILURE_OTHER 1

typedef struct
{
  char     *out;
  char     *colormap;
  char     *title;
  char     *reduce;
  char     *preset;
  char     *panel;
  char     *sweep;
  char     *save_session;
  char     *session;            /* --session: read by rpe_cli_export before the view's options */
  char     *attention_method;   /* attention: spe exact ape lrpe fastrpb linear (NULL: spe, or exact with --exact) */
  char     *rows;               /* attention: the rows A:B shown (NULL: all) */
  char     *cols;               /* attention: the columns C:D shown */
  gint      frames;
  gint      frame_delay;
  double    width;
  double    height;
  double    dpi;
  gboolean  all_heads;
  gboolean  attention_transform;
  gboolean  empirical;
  gboolean  difference;
  gboolean  per_cell_scale;
  char     *color_scale;
  double    gamma;
  double    percentile;
} ExportOptions;

typedef struct
{
  const char          *view;
  const RpeCliArgs    *o;
  const ExportOptions *eo;
  RpeExportFormat      format;
  RpeExportSize        size;
  const RpeColormap   *cmap;
  RpeHeatmapReduce     reduce;
  RpeHeatmapTransform  transform;   /* --color-scale (ATTENTION also from --attention-transform) */
  double               transform_param;
  RpeSpeParams         params;
  gboolean             gated;
  int                  exit_code;
  /* --sweep: frames of an animated GIF instead of files */
  gboolean             gif_mode;
  RpeGifWriter        *gif;
  RpeSession          *session;   /* --session: its state holds what options cannot say */
  float               *kept_gate; /* --no-gate: the module's gate, kept for --save-session (--gate undoes) */
  /* --attention-method ape|lrpe|fastrpb: the checkpoint's trained modules (NULL: none); params is
   * empty (n_heads 0) when the checkpoint holds no SPE module */
  RpeExplorerTrained *trained;
  RpeLrpeTrained     *lrpe_trained;
} Ctx;

static const char *const heatmap_views[] = { "templates", "template", "attention", "spe-vs-rpe", NULL };
static const char *const curve_views[] = { "profile", "error", "extrapolation", NULL };

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */

/* The output path of a head: every "{head}" replaced by its number. */
static char *
path_for_head (const char *pattern, gsize head)
{
  g_autofree char *num = g_strdup_printf ("%zu", (size_t) head);
  GString *s = g_string_new (pattern);

  g_string_replace (s, "{head}", num, 0);
  return g_string_free (s, FALSE);
}

/* One frame of the animation: the figure drawn as its PNG would be (rpe_gif_render_frame,
 * shared with the window's Export dialog). */
static gboolean
add_frame (Ctx *c, const RpeFigure *fig, GError **error)
{
  cairo_surface_t *surface;
  gboolean ok;

  surface = rpe_gif_render_frame (fig, &c->size, error);
  if (surface == NULL)
    return FALSE;
  if (c->gif == NULL)
    {
      c->gif = rpe_gif_writer_new (c->eo->out, cairo_image_surface_get_width (surface),
                                   cairo_image_surface_get_height (surface),
                                   c->eo->frame_delay > 0 ? c->eo->frame_delay : 60, error);
      if (c->gif == NULL)
        {
          cairo_surface_destroy (surface);
          c->exit_code = EXIT_FAILURE_OTHER;
          return FALSE;
        }
    }
  ok = rpe_gif_writer_add (c->gif, surface, error);
  cairo_surface_destroy (surface);
  if (!ok)
    c->exit_code = EXIT_FAILURE_OTHER;
  return ok;
}

static gboolean
export_file (Ctx *c, const RpeFigure *fig, const char *path, GError **error)
{
  if (c->gif_mode)
    return add_frame (c, fig, error);
  if (rpe_export_figure (fig, c->format, &c->size, path, error))
    return TRUE;
  if ((*error)->domain == RPE_ERROR && (*error)->code == RPE_ERROR_IO)
    c->exit_code = EXIT_FAILURE_OTHER;
  return FALSE;
}

static void
heatmap_defaults (Ctx *c, RpeHeatmapData *d, const float *values, gsize rows, gsize cols)
{
  rpe_heatmap_data_init (d);
  d->values = values;
  d->rows = rows;
  d->cols = cols;
  d->colormap = c->cmap;
  d->reduce = c->reduce;
  d->equal_aspect = TRUE;
  /* the SPE paper's transform is for attention weights only (the attention views set it) */
  if (c->transform != RPE_HEATMAP_TRANSFORM_ATTENTION)
    {
      d->transform = c->transform;
      d->transform_param = c->transform_param;
    }
  if (c->o->draw.train_length != RPE_CLI_UNSET && c->o->draw.train_length > 0)
    d->train_length = (gsize) c->o->draw.train_length;
}

/* ------------------------------------------------------------------------ */
/* Heatmap views                                                            */

/* The template of (h, d) in the mode asked for: analytic, empirical or their difference. */
static gboolean
template_of (Ctx *c, const RpeCliCodes *codes, gsize n, gsize h, gsize d, float *out, float *scratch,
             GError **error)
{
  const RpeCliArgs *o = c->o;
  RpeStatus st = RPE_OK;

  (void) o;
  if (c->eo->empirical || c->eo->difference)
    st = rpe_spe_empirical_template (n, c->params.n_heads, c->params.n_features, codes->r, codes->qbar,
                                     codes->kbar, h, d, out);
  if (st == RPE_OK && (!c->eo->empirical || c->eo->difference))
    st = rpe_spe_template (&c->params, h, d, n, c->gated, c->eo->difference ? scratch : out);
  if (st == RPE_OK && c->eo->difference)
    for (gsize i = 0; i < n * n; i++)
      out[i] -= scratch[i];
  /* finite codes whose products overflow (noise of 1e30): refused as `rpe compute empirical`
   * refuses them, not drawn as a figure without data */
  if (st == RPE_OK && !rpe_all_finite_f (out, n * n))
    st = RPE_ERROR_RANGE;
  return rpe_cli_status_error (st, "template", error);
}

static int
template_mode (Ctx *c)
{
  return c->eo->difference ? 2 : c->eo->empirical ? 1 : 0;
}

static gboolean
view_templates (Ctx *c, gboolean one, GError **error)
{
  const RpeCliArgs *o = c->o;
  gsize H = c->params.n_heads, D = c->params.n_features, n, h0, h1, d0, d1, cells;
  RpeCliCodes codes = { 0 };
  float *maps = NULL, *scratch = NULL;
  RpeHeatmapData *data = NULL;
  char **titles = NULL;
  gboolean ok = FALSE;
  g_autofree char *bar = rpe_figure_template_bar (template_mode (c));

  if (o->model.head >= 0 && (gsize) o->model.head >= H)
    return rpe_cli_usage_error (error, "--head must be between 0 and %zu (got %d)", (size_t) H - 1, o->model.head);
  if (o->model.feature >= 0 && (gsize) o->model.feature >= D)
    return rpe_cli_usage_error (error, "--feature must be between 0 and %zu (got %d)", (size_t) D - 1,
                                o->model.feature);
  if (!one && o->model.feature >= 0)
    return rpe_cli_usage_error (error,
                                "templates shows every feature of a head; use the view 'template' for --feature");
  if (c->eo->empirical && c->eo->difference)
    return rpe_cli_usage_error (error,
                                "--empirical and --difference are exclusive (--difference is empirical - analytic)");
  if (!rpe_cli_resolve_length (o, 0, &n, error))
    return FALSE;
  {
    const gsize dims[3][4] = { { one ? 1 : D, n, n, 2 }, { n, H, D, c->eo->empirical || c->eo->difference ? 2 * 64 : 0 },
                               { n, n, 1, 1 } };
    if (!rpe_cli_check_budget ("templates", 3, dims, error))
      return FALSE;
  }
  if ((c->eo->empirical || c->eo->difference) && !rpe_cli_make_codes (o, &c->params, n, c->gated, &codes, error))
    return FALSE;

  h0 = c->eo->all_heads ? 0 : o->model.head >= 0 ? (gsize) o->model.head : 0;
  h1 = c->eo->all_heads ? H : h0 + 1;
  d0 = one && o->model.feature >= 0 ? (gsize) o->model.feature : 0;
  d1 = one ? d0 + 1 : D;
  cells = d1 - d0;
  if (!rpe_cli_alloc_floats (&maps, cells, n, n, 1, "templates", error)
      || !rpe_cli_alloc_floats (&scratch, n, n, 1, 1, "templates", error))
    goto out;
  data = g_new0 (RpeHeatmapData, cells);
  titles = g_new0 (char *, cells + 1);

  for (gsize h = h0; h < h1; h++)
    {
      RpeFigure fig;
      g_autofree char *path = path_for_head (c->eo->out, h);
      g_autofree char *title = NULL;

      for (gsize d = d0; d < d1; d++)
        {
          gsize i = d - d0;

          if (!template_of (c, &codes, n, h, d, maps + i * n * n, scratch, error))
            goto out;
          heatmap_defaults (c, &data[i], maps + i * n * n, n, n);
          g_free (titles[i]);
          titles[i] = rpe_figure_template_cell (d);
          data[i].title = titles[i];
          data[i].x_label = "key position n";
          data[i].y_label = "query position m";
          data[i].colorbar_label = bar;
        }
      title = rpe_figure_templates_title (c->params.method == RPE_SPE_SINE, c->gated, template_mode (c), h,
                                          one ? (gssize) d0 : -1, n);
      if (one)
        {
          rpe_figure_init (&fig, RPE_FIGURE_HEATMAP);
          fig.heatmap = data[0];
        }
      else
        {
          rpe_figure_init (&fig, RPE_FIGURE_GRID);
          fig.grid.cells = data;
          fig.grid.n_cells = cells;
          fig.grid.shared_scale = !c->eo->per_cell_scale;
          fig.grid.colorbar_label = bar;
        }
      fig.title = c->eo->title != NULL ? c->eo->title : title;
      if (!export_file (c, &fig, path, error))
        goto out;
    }
  ok = TRUE;

out:
  if (titles != NULL)
    g_strfreev (titles);
  g_free (data);
  rpe_free (maps);
  rpe_free (scratch);
  rpe_cli_codes_clear (&codes);
  return ok;
}

/* Attention views draw one head at a time, streamed in blocks of rows through the core
 * (rpe_attention_rows, rpe_attention_rows_func) and reduced to at most ATTENTION_MAX_SIDE
 * pixels per side by rpe_map_reduce (the binning of the window's attention view): the
 * N x N maps never exist, and only the drawn heads are encoded.  Up to that side the image
 * is the map itself. */
#define ATTENTION_MAX_SIDE 2048
#define ATTENTION_BLOCK_FLOATS ((gsize) 1 << 21)   /* 8 MiB of rows per block */

typedef struct
{
  gsize        n, D, r;
  gboolean     causal;
  float       *q, *k;        /* (N, D) the head's content */
  float       *qhat, *khat;  /* (N, R) the head's encoding (SPE estimate) */
  float       *lags;         /* (D, 2N-1) the head's gated template profiles (exact) */
} HeadSource;

static void
head_source_clear (HeadSource *src)
{
  rpe_free (src->q);
  rpe_free (src->k);
  rpe_free (src->qhat);
  rpe_free (src->khat);
  rpe_free (src->lags);
  memset (src, 0, sizeof *src);
}

/* The exact logits of the head (rpe_compute_exact_logits_rows), for rpe_attention_rows_func. */
static RpeStatus
exact_logits_rows (size_t m0, size_t n_rows, size_t n_cols, float *out, void *user_data)
{
  const HeadSource *src = user_data;

  return rpe_compute_exact_logits_rows (src->q, src->k, src->lags, src->n, src->D, src->causal, m0, n_rows, n_cols,
                                        out);
}

static RpeStatus
exact_rows (size_t m0, size_t n_rows, float *out, void *user_data)
{
  HeadSource *src = user_data;

  return rpe_attention_rows_func (src->n, m0, n_rows, n_rows, src->causal, exact_logits_rows, src, out, NULL);
}

static RpeStatus
estimate_rows (size_t m0, size_t n_rows, float *out, void *user_data)
{
  HeadSource *src = user_data;
  /* lhat = qhat . khat / sqrt(R): the dot logits of width R */
  RpeLogitsSpec spec = { RPE_LOGITS_DOT, src->n, 1, src->r, src->qhat, src->khat, NULL, false, true };

  return rpe_attention_rows (&spec, 0, m0, n_rows, src->causal, out, NULL);
}

/* The SPE estimate reduced to side x side pixels without its rows: logits tiles go through
 * an online softmax straight into the pixel bins (rpe_attention_map_reduce; the values of
 * rpe_map_reduce over estimate_rows). */
static RpeStatus
estimate_image (HeadSource *src, gsize side, RpeMapReduce red, float *image)
{
  RpeLogitsSpec spec = { RPE_LOGITS_DOT, src->n, 1, src->r, src->qhat, src->khat, NULL, false, true };

  return rpe_attention_map_reduce (&spec, 0, src->causal, side, side, red, image, NULL);
}

/* Called from several workers at once (rpe_map_reduce): the exact rows go to a scratch of
 * the call's own. */
static RpeStatus
difference_rows (size_t m0, size_t n_rows, float *out, void *user_data)
{
  HeadSource *src = user_data;
  RpeStatus st;
  float *exact = rpe_alloc (n_rows * src->n, sizeof (float), &st);

  if (exact == NULL)
    return st;
  if ((st = estimate_rows (m0, n_rows, out, src)) == RPE_OK
      && (st = exact_rows (m0, n_rows, exact, src)) == RPE_OK)
    for (gsize i = 0; i < n_rows * src->n; i++)
      out[i] -= exact[i];
  rpe_free (exact);
  return st;
}

/* The head's content: from the loaded inputs (full), or drawn for this head only (the same
 * values as the (N, H, D) draw of rpe_cli_load_inputs: --content random or unit). */
static gboolean
head_content (Ctx *c, const RpeCliInputs *full, gsize n, gsize h, HeadSource *src, GError **error)
{
  const RpeCliArgs *o = c->o;
  gsize H = c->params.n_heads, D = c->params.n_features;
  gboolean          random = o->content.kind != NULL && g_str_equal (o->content.kind, "random");

  if (!rpe_cli_alloc_floats (&src->q, n, D, 1, 1, "queries", error)
      || !rpe_cli_alloc_floats (&src->k, n, D, 1, 1, "keys", error))
    return FALSE;
  for (gsize m = 0; m < n; m++)
    {
      float *qm = src->q + m * D, *km = src->k + m * D;

      if (full != NULL)
        {
          memcpy (qm, full->q + (m * H + h) * D, D * sizeof (float));
          memcpy (km, full->k + (m * H + h) * D, D * sizeof (float));
        }
      else if (random)
        {
          rpe_rng_normal ((uint64_t) o->draw.seed, RPE_STREAM_QUERIES, (m * H + h) * D, qm, D);
          rpe_rng_normal ((uint64_t) o->draw.seed, RPE_STREAM_KEYS, (m * H + h) * D, km, D);
        }
      else
        for (gsize d = 0; d < D; d++)
          qm[d] = km[d] = 1.0f;
    }
  return TRUE;
}

static gboolean
head_source_init (Ctx *c, const RpeCliInputs *full, const float *qhat_all, const float *khat_all, gsize r_all,
                  gsize n, gsize h, gboolean estimate, gboolean exact, HeadSource *src, GError **error)
{
  gsize H = c->params.n_heads, D = c->params.n_features;

  memset (src, 0, sizeof *src);
  src->n = n;
  src->D = D;
  src->causal = c->o->attention.causal;
  if (!head_content (c, full, n, h, src, error))
    return FALSE;
  if (estimate && qhat_all != NULL)
    {
      /* encoded with the full inputs (--queries or --noise): the head's slice */
      src->r = r_all;
      if (!rpe_cli_alloc_floats (&src->qhat, n, r_all, 1, 1, "encoding", error)
          || !rpe_cli_alloc_floats (&src->khat, n, r_all, 1, 1, "encoding", error))
        return FALSE;
      for (gsize m = 0; m < n; m++)
        {
          memcpy (src->qhat + m * r_all, qhat_all + (m * H + h) * r_all, r_all * sizeof (float));
          memcpy (src->khat + m * r_all, khat_all + (m * H + h) * r_all, r_all * sizeof (float));
        }
    }
  else if (estimate
           && !rpe_cli_encode_head (c->o, &c->params, c->gated, n, h, src->q, src->k, &src->r, &src->qhat,
                                    &src->khat, error))
    return FALSE;
  if (estimate)
    {
      /* once here, so the streamed blocks do not rescan the keys (inputs_checked) */
      RpeLogitsSpec spec = { RPE_LOGITS_DOT, n, 1, src->r, src->qhat, src->khat, NULL, false, false };

      if (!rpe_cli_status_error (rpe_logits_spec_check (&spec), "encoding", error))
        return FALSE;
    }
  if (exact)
    {
      gsize lags = 2 * n - 1;

      if (!rpe_cli_alloc_floats (&src->lags, D, lags, 1, 1, "template profiles", error))
        return FALSE;
      for (gsize d = 0; d < D; d++)
        {
          RpeStatus st = rpe_spe_template_lags (&c->params, h, d, n, c->gated, src->lags + d * lags);

          if (!rpe_cli_status_error (st, "template profile", error))
            return FALSE;
        }
    }
  return TRUE;
}

static RpeMapReduce
map_reduce_of (RpeHeatmapReduce reduce)
{
  return reduce == RPE_HEATMAP_REDUCE_MAX ? RPE_MAP_REDUCE_MAX
         : reduce == RPE_HEATMAP_REDUCE_MAX_ABS ? RPE_MAP_REDUCE_MAX_ABS : RPE_MAP_REDUCE_MEAN;
}

static RpeExplorerState *explorer_state (const Ctx *c, GError **error);

/* The attention view drawn by the window's own code (rpe_compute_attention and
 * rpe_attention_figure_fill): every method, loaded content, a sub-window. */
static gboolean
uses_explorer (const Ctx *c)
{
  guint content = RPE_CONTENT_UNIT;

  if (c->eo->attention_method != NULL && !g_str_equal (c->eo->attention_method, "spe")
      && !g_str_equal (c->eo->attention_method, "exact"))
    return TRUE;
  if (c->eo->rows != NULL || c->eo->cols != NULL)
    return TRUE;
  if (c->session != NULL)
    g_object_get (c->session->state, "content", &content, NULL);
  return content == RPE_CONTENT_NPY && c->o->content.kind == NULL;
}

static gboolean
view_attention_explorer (Ctx *c, GError **error)
{
  const RpeCliArgs *o = c->o;
  g_autoptr (RpeExplorerState) state = NULL;
  gsize n, H = c->params.n_heads, h0, h1;
  guint train = 0;
  RpeAttentionRequest req = { 0 };

  if (o->content.queries != NULL || o->content.keys != NULL || o->draw.noise != NULL || o->draw.gate_noise != NULL
      || o->draw.noise_scheme != NULL)
    return rpe_cli_usage_error (error,
                                "--attention-method, --rows and --cols draw the window's content (unit, random, a "
                                "capture or a session's .npy): they take no --queries, --keys, --noise, "
                                "--gate-noise or --noise-scheme");
  state = explorer_state (c, error);
  if (state == NULL)
    return FALSE;
  if (H == 0)
    {
      /* no SPE module: the heads of the trained modules' model */
      g_autoptr (RpeExplorerSnapshot) probe = rpe_explorer_state_snapshot (state);

      H = probe->content_heads;
    }
  if (o->model.head >= 0 && (gsize) o->model.head >= H)
    return rpe_cli_usage_error (error, "--head must be between 0 and %zu (got %d)", (size_t) H - 1, o->model.head);
  g_object_get (state, "length", &train, NULL);
  n = train;
  g_object_get (state, "train-length", &train, NULL);
  req.m0 = req.n0 = 0;
  req.m1 = req.n1 = n;
  if (c->eo->rows != NULL && !rpe_cli_parse_range ("--rows", c->eo->rows, n, &req.m0, &req.m1, error))
    return FALSE;
  if (c->eo->cols != NULL && !rpe_cli_parse_range ("--cols", c->eo->cols, n, &req.n0, &req.n1, error))
    return FALSE;
  /* a picture needs at most ATTENTION_MAX_SIDE pixels a side; a data export (.npy) is the window's cells */
  req.max_rows = c->format == RPE_EXPORT_NPY ? req.m1 - req.m0 : MIN (req.m1 - req.m0, (gsize) ATTENTION_MAX_SIDE);
  req.max_cols = c->format == RPE_EXPORT_NPY ? req.n1 - req.n0 : MIN (req.n1 - req.n0, (gsize) ATTENTION_MAX_SIDE);
  {
    const gsize dims[1][4] = { { req.max_rows, req.max_cols, 1, 1 } };

    if (!rpe_cli_check_budget ("attention", 1, dims, error))
      return FALSE;
  }
  req.reduce = c->reduce;
  h0 = c->eo->all_heads ? 0 : o->model.head >= 0 ? (gsize) o->model.head : 0;
  h1 = c->eo->all_heads ? H : h0 + 1;
  for (gsize h = h0; h < h1; h++)
    {
      g_autoptr (RpeExplorerSnapshot) snap = NULL;
      g_autoptr (RpeAttentionImage) img = NULL;
      g_autofree char *path = path_for_head (c->eo->out, h);
      char *strings[3] = { NULL, NULL, NULL };
      gboolean has_attention = FALSE, ok;
      RpeFigure fig;

      g_object_set (state, "head", (guint) h, NULL);
      snap = rpe_explorer_state_snapshot (state);
      img = rpe_compute_attention (snap, &req, NULL, error);
      if (img == NULL)
        return FALSE;
      /* the colour scale (--color-scale, --gamma, --percentile, --attention-transform) as the window's */
      rpe_attention_figure_fill (&fig, img, snap, c->cmap != NULL ? c->cmap : rpe_colormap_default (), train,
                                 c->transform, c->transform_param, strings, &has_attention);
      if (c->eo->title != NULL)
        fig.title = c->eo->title;
      ok = export_file (c, &fig, path, error);
      for (guint i = 0; i < 3; i++)
        g_free (strings[i]);
      if (!ok)
        return FALSE;
    }
  return TRUE;
}

/* A capture's tokens on the axes of a map of its positions (where they fit, rpe-ticks.h); the
 * default axis labels then say which labels are tokens. */
static void
set_tokens (RpeHeatmapData *d, const RpeTensor *tokens)
{
  if (tokens == NULL)
    return;
  d->tokens = tokens->data;
  d->n_tokens = tokens->n_elements;
  if (d->x_label != NULL && g_str_equal (d->x_label, "key position n"))
    d->x_label = NULL;
  if (d->y_label != NULL && g_str_equal (d->y_label, "query position m"))
    d->y_label = NULL;
}

static gboolean
view_attention (Ctx *c, gboolean compare, GError **error)
{
  const RpeCliArgs *o = c->o;
  gsize H = c->params.n_heads, D = c->params.n_features, n, r = 0, h0, h1, side, r_all = 0;
  gboolean          full_inputs = o->content.queries != NULL || o->draw.noise != NULL || rpe_cli_content_is_capture (o);
  gboolean          want_exact = compare || o->attention.exact, want_est = compare || !o->attention.exact;
  RpeCliInputs in = { 0 };
  float *qhat_all = NULL, *khat_all = NULL, *img[3] = { NULL, NULL, NULL };
  HeadSource src = { 0 };
  gboolean ok = FALSE;
  g_autoptr (RpeCapture) capture = NULL; /* its tokens label the axes where they fit */
  const RpeTensor *tokens = NULL;

  if (!compare && uses_explorer (c))
    return view_attention_explorer (c, error);
  if (compare && (c->eo->rows != NULL || c->eo->cols != NULL))
    return rpe_cli_usage_error (error, "--rows and --cols are for the view 'attention'");
  if (o->model.head >= 0 && (gsize) o->model.head >= H)
    return rpe_cli_usage_error (error, "--head must be between 0 and %zu (got %d)", (size_t) H - 1, o->model.head);
  if (compare && o->attention.exact)
    return rpe_cli_usage_error (error, "spe-vs-rpe always shows both; --exact is for the view 'attention'");
  if (o->content.kind != NULL && !g_str_equal (o->content.kind, "random") && !g_str_equal (o->content.kind, "unit")
      && !rpe_cli_content_is_capture (o))
    return rpe_cli_usage_error (error, "--content must be unit, random or a capture (.npz, demo:NAME) (got '%s')",
                                o->content.kind);
  if (full_inputs)
    {
      if (!rpe_cli_load_inputs (o, &c->params, FALSE, &in, error))
        return FALSE;
      n = in.n;
      if (rpe_cli_content_is_capture (o) && (capture = rpe_capture_open (o->content.kind, NULL)) != NULL)
        tokens = rpe_capture_tokens (capture);
    }
  else if (!rpe_cli_resolve_length (o, 0, &n, error))
    return FALSE;
  /* a picture needs at most ATTENTION_MAX_SIDE pixels a side; a data export (.npy) is the map */
  side = c->format == RPE_EXPORT_NPY ? n : MIN (n, (gsize) ATTENTION_MAX_SIDE);
  {
    gsize rr = o->draw.realizations != RPE_CLI_UNSET && o->draw.realizations > 0 ? (gsize) o->draw.realizations : 64;
    /* images, the head's content + encoding + profiles, one block of rows (two for differences) */
    const gsize dims[4][4] = { { side, side, compare ? 3 : 1, 1 }, { n, D + rr, 2, 1 }, { want_exact ? D : 0, 2 * n, 1, 1 },
                               { MAX (ATTENTION_BLOCK_FLOATS, n * ((n + side - 1) / side)), compare ? 2 : 1, 1, 1 } };
    if (!rpe_cli_check_budget ("attention", 4, dims, error))
      goto out;
  }
  if (full_inputs && want_est && !rpe_cli_encode_fused (o, &c->params, &in, c->gated, &r_all, &qhat_all, &khat_all, error))
    goto out;
  for (int i = 0; i < (compare ? 3 : 1); i++)
    if (!rpe_cli_alloc_floats (&img[i], side, side, 1, 1, "attention image", error))
      goto out;

  h0 = c->eo->all_heads ? 0 : o->model.head >= 0 ? (gsize) o->model.head : 0;
  h1 = c->eo->all_heads ? H : h0 + 1;
  for (gsize h = h0; h < h1; h++)
    {
      RpeFigure fig;
      g_autofree char *path = path_for_head (c->eo->out, h);
      g_autofree char *title = NULL;
      g_autofree char *t_exact = NULL, *t_est = NULL, *t_diff = NULL;
      RpeMapReduce red = map_reduce_of (c->reduce);
      RpeStatus st = RPE_OK;

      if (!head_source_init (c, full_inputs ? &in : NULL, qhat_all, khat_all, r_all, n, h, want_est, want_exact,
                             &src, error))
        goto out;
      r = src.r;
      if (!want_exact)
        {
          /* the content is encoded: only qhat, khat are read from here on */
          g_clear_pointer (&src.q, rpe_free);
          g_clear_pointer (&src.k, rpe_free);
        }
      t_exact = rpe_figure_compare_panel (0, r);
      t_est = rpe_figure_compare_panel (1, r);
      t_diff = rpe_figure_compare_panel (2, r);
      if (compare)
        {
          st = rpe_map_reduce (n, side, side, red, ATTENTION_BLOCK_FLOATS, exact_rows, &src, img[0], NULL);
          /* the rows path for all three panels: the difference panel is estimate - exact of
           * the same rows (and the window's comparison view bins the same way) */
          if (st == RPE_OK)
            st = rpe_map_reduce (n, side, side, red, ATTENTION_BLOCK_FLOATS, estimate_rows, &src, img[1], NULL);
          if (st == RPE_OK)
            st = rpe_map_reduce (n, side, side, red, ATTENTION_BLOCK_FLOATS, difference_rows, &src, img[2], NULL);
        }
      else if (o->attention.exact)
        st = rpe_map_reduce (n, side, side, red, ATTENTION_BLOCK_FLOATS, exact_rows, &src, img[0], NULL);
      else
        st = estimate_image (&src, side, red, img[0]);
      if (!rpe_cli_status_error (st, "attention", error))
        goto out;

      if (compare)
        {
          rpe_figure_init (&fig, RPE_FIGURE_COMPARE);
          fig.n_panels = 3;
          fig.share_scale = !c->eo->per_cell_scale;   /* exact and estimate on one range */
          for (int i = 0; i < 3; i++)
            {
              heatmap_defaults (c, &fig.panels[i], img[i], side, side);
              fig.panels[i].row_positions = fig.panels[i].col_positions = n;
              set_tokens (&fig.panels[i], tokens);
            }
          fig.panels[0].title = t_exact;
          fig.panels[1].title = t_est;
          fig.panels[2].title = t_diff;
          for (guint i = 0; i < 3; i++)
            fig.panels[i].colorbar_label = rpe_figure_compare_bar (i);
          for (int i = 0; i < 2; i++)
            {
              fig.panels[i].scale = RPE_HEATMAP_SCALE_LINEAR;
              if (c->transform == RPE_HEATMAP_TRANSFORM_ATTENTION)
                fig.panels[i].transform = RPE_HEATMAP_TRANSFORM_ATTENTION;
            }
          fig.panels[2].scale = RPE_HEATMAP_SCALE_SYMMETRIC;
          fig.panels[2].colormap = c->eo->colormap != NULL && rpe_colormap_is_diverging (c->cmap)
                                   ? c->cmap : rpe_colormap_default_diverging ();
          title = rpe_figure_compare_title (c->params.method == RPE_SPE_SINE, c->gated, h, o->attention.causal, n);
        }
      else
        {
          rpe_figure_init (&fig, RPE_FIGURE_HEATMAP);
          heatmap_defaults (c, &fig.heatmap, img[0], side, side);
          fig.heatmap.row_positions = fig.heatmap.col_positions = n;
          set_tokens (&fig.heatmap, tokens);
          fig.heatmap.scale = RPE_HEATMAP_SCALE_LINEAR;
          if (c->transform == RPE_HEATMAP_TRANSFORM_ATTENTION)
            fig.heatmap.transform = RPE_HEATMAP_TRANSFORM_ATTENTION;
          fig.heatmap.colorbar_label = "attention weight";
          title = rpe_figure_attention_title (c->params.method == RPE_SPE_SINE, c->gated, o->attention.exact, h, r,
                                              o->attention.causal);
        }
      fig.title = c->eo->title != NULL ? c->eo->title : title;
      head_source_clear (&src);
      if (!export_file (c, &fig, path, error))
        goto out;
    }
  ok = TRUE;

out:
  head_source_clear (&src);
  for (int i = 0; i < 3; i++)
    rpe_free (img[i]);
  rpe_free (qhat_all);
  rpe_free (khat_all);
  rpe_cli_inputs_clear (&in);
  return ok;
}

/* ------------------------------------------------------------------------ */
/* Curve views                                                              */

/* Reads the CSV written by rpe_curve_table_write_csv. */
static RpeCurveTable *
read_curve_csv (const char *path, GError **error)
{
  g_autofree char *text = NULL;
  g_auto (GStrv) lines = NULL;
  g_auto (GStrv) names = NULL;
  GPtrArray *meta = g_ptr_array_new_with_free_func (g_free);
  GArray *values = g_array_new (FALSE, FALSE, sizeof (double));
  RpeCurveTable *t = NULL;
  gsize n_cols = 0, n_rows = 0;
  RpeStatus st = RPE_OK;

  if (!g_file_get_contents (path, &text, NULL, error))
    goto out;
  lines = g_strsplit (text, "\n", -1);
  for (gsize i = 0; lines[i] != NULL; i++)
    {
      char *line = lines[i];

      if (line[0] == '\0')
        continue;
      if (line[0] == '#')
        {
          char *colon = strchr (line, ':');

          if (colon != NULL && names == NULL)
            {
              *colon = '\0';
              g_ptr_array_add (meta, g_strdup (g_strstrip (line + 1)));
              g_ptr_array_add (meta, g_strdup (g_strstrip (colon + 1)));
            }
          continue;
        }
      if (names == NULL)
        {
          names = g_strsplit (line, ",", -1);
          n_cols = g_strv_length (names);
          continue;
        }
      {
        g_auto (GStrv) cells = g_strsplit (line, ",", -1);

        if (g_strv_length (cells) != n_cols)
          {
            rpe_set_error (error, RPE_ERROR_FORMAT, _("%s: row %zu has %u values, expected %zu"), path,
                           (size_t) n_rows + 1, g_strv_length (cells), (size_t) n_cols);
            goto out;
          }
        for (gsize j = 0; j < n_cols; j++)
          {
            double v = g_ascii_strtod (cells[j], NULL);
            g_array_append_val (values, v);
          }
        n_rows++;
      }
    }
  if (names == NULL || n_cols == 0 || n_rows == 0)
    {
      rpe_set_error (error, RPE_ERROR_FORMAT, _("%s: the curve table is empty"), path);
      goto out;
    }
  t = rpe_curve_table_new (n_rows, &st);
  for (gsize j = 0; st == RPE_OK && j < n_cols; j++)
    {
      size_t col;

      st = rpe_curve_table_add_column (t, names[j], NULL, &col);
      if (st == RPE_OK)
        {
          double *dst = rpe_curve_table_column (t, col);
          for (gsize i = 0; i < n_rows; i++)
            dst[i] = g_array_index (values, double, i * n_cols + j);
        }
    }
  for (guint k = 0; st == RPE_OK && k + 1 < meta->len; k += 2)
    st = rpe_curve_table_set_meta (t, g_ptr_array_index (meta, k), g_ptr_array_index (meta, k + 1));
  if (st != RPE_OK)
    {
      rpe_curve_table_free (t);
      t = NULL;
      rpe_cli_status_error (st, "curve table", error);
    }

out:
  g_ptr_array_unref (meta);
  g_array_unref (values);
  return t;
}

typedef struct
{
  GArray    *series;   /* RpeCurveSeries */
  GPtrArray *strings;  /* labels */
} SeriesSet;

static const RpeCurveMarker markers[] = {
  RPE_CURVE_MARKER_CIRCLE, RPE_CURVE_MARKER_SQUARE, RPE_CURVE_MARKER_TRIANGLE, RPE_CURVE_MARKER_DIAMOND,
};

static RpeCurveSeries *
add_series (SeriesSet *set, const RpeCurveTable *t, size_t xcol, size_t ycol, char *label)
{
  RpeCurveSeries s = { 0 };

  s.x = rpe_curve_table_column_const (t, xcol);
  s.y = rpe_curve_table_column_const (t, ycol);
  s.n = rpe_curve_table_n_rows (t);
  s.label = label;
  g_ptr_array_add (set->strings, label);
  g_array_append_val (set->series, s);
  return &g_array_index (set->series, RpeCurveSeries, set->series->len - 1);
}

static double
meta_double (const RpeCurveTable *t, const char *key)
{
  const char *v = rpe_curve_table_get_meta (t, key);

  return v != NULL ? g_ascii_strtod (v, NULL) : NAN;
}

static gboolean
view_curves (const char *view, GPtrArray *forward, const ExportOptions *eo, Ctx *c, GError **error)
{
  g_autofree char *tmpdir = NULL;
  g_autofree char *csv = NULL;
  g_autoptr (GPtrArray) args = g_ptr_array_new ();
  RpeCurveTable *t = NULL;
  SeriesSet sets[4];
  RpeCurvePlot plots[4];
  RpeCurveSeries ref = { 0 };
  double *ref_y = NULL;
  size_t n_plots = 0;
  gboolean ok = FALSE;
  int status;

  for (int i = 0; i < 4; i++)
    {
      sets[i].series = g_array_new (FALSE, TRUE, sizeof (RpeCurveSeries));
      sets[i].strings = g_ptr_array_new_with_free_func (g_free);
      rpe_curve_plot_init (&plots[i]);
    }

  /* rpe curves VIEW [its options] -o CSV */
  g_ptr_array_add (args, (char *) "curves");
  g_ptr_array_add (args, (char *) view);
  for (guint i = 0; i < forward->len; i++) /* every argument of `rpe export` but the view and the figure's */
    g_ptr_array_add (args, g_ptr_array_index (forward, i));
  if (c->format == RPE_EXPORT_CSV)
    csv = g_strdup (eo->out);
  else
    {
      tmpdir = g_dir_make_tmp ("rpe-export-XXXXXX", error);
      if (tmpdir == NULL)
        {
          c->exit_code = EXIT_FAILURE_OTHER;
          goto out;
        }
      csv = g_build_filename (tmpdir, "curve.csv", NULL);
    }
  g_ptr_array_add (args, (char *) "-o");
  g_ptr_array_add (args, csv);
  g_ptr_array_add (args, NULL);
  {
    /* the CSV in the temporary folder is read back below: written at once, not with the
     * command's output set (the CSV view's own output stays in the set) */
    bool was = c->format == RPE_EXPORT_CSV ? rpe_publish_set_active () : rpe_publish_set_pause ();

    status = rpe_cli_curves ((int) args->len - 1, (char **) args->pdata);
    rpe_publish_set_resume (was);
  }
  if (status != 0)
    {
      /* rpe curves has said why */
      c->exit_code = status;
      goto out;
    }
  if (c->format == RPE_EXPORT_CSV)
    {
      ok = TRUE;
      goto out;
    }
  t = read_curve_csv (csv, error);
  if (t == NULL)
    {
      c->exit_code = EXIT_FAILURE_OTHER;
      goto out;
    }

  if (g_str_equal (view, "profile"))
    {
      long xcol = rpe_curve_table_find (t, "tau");
      const char *feature = rpe_curve_table_get_meta (t, "feature");

      if (xcol < 0)
        {
          rpe_cli_usage_error (error, "the profile table has no tau column");
          goto out;
        }
      for (size_t j = 0; j < rpe_curve_table_n_cols (t); j++)
        if ((long) j != xcol)
          add_series (&sets[0], t, (size_t) xcol, j, rpe_figure_model_name (rpe_curve_table_column_name (t, j)));
      plots[0].x_label = "lag " RPE_FIG_TAU " = m " RPE_FIG_MINUS " n";
      plots[0].y_label = "template " RPE_FIG_P_TILDE "(" RPE_FIG_TAU ")";
      plots[0].title = g_strdup_printf ("Template profiles, head %.0f (%s%s)", meta_double (t, "head"),
                                        feature != NULL && g_ascii_isdigit (feature[0]) ? "feature " : "",
                                        feature != NULL ? feature : "");
      g_ptr_array_add (sets[0].strings, (char *) plots[0].title);
      if (isfinite (meta_double (t, "n_train")))
        {
          plots[0].x_marker = meta_double (t, "n_train");
          plots[0].x_marker_label = RPE_FIG_N_TRAIN;
        }
      n_plots = 1;
    }
  else if (g_str_equal (view, "error"))
    {
      long xcol = rpe_curve_table_find (t, "R");
      gboolean by_r = xcol >= 0;
      size_t k = 0;

      if (!by_r)
        xcol = rpe_curve_table_find (t, "m");
      if (xcol < 0)
        {
          rpe_cli_usage_error (error, "the error table has neither an R nor an m column");
          goto out;
        }
      for (size_t j = 0; j < rpe_curve_table_n_cols (t); j++)
        {
          const char *name = rpe_curve_table_column_name (t, j);
          g_autofree char *sd_name = g_strdup_printf ("%s_sd", name);
          g_autofree char *slope_key = g_strdup_printf ("%s_slope", name);
          double slope = meta_double (t, slope_key);
          long sd = rpe_curve_table_find (t, sd_name);
          RpeCurveSeries *s;

          if ((long) j == xcol || g_str_has_suffix (name, "_sd") || g_str_has_suffix (name, "_rms"))
            continue;
          {
            g_autofree char *gated_key = g_strdup_printf ("%s_gated", name);
            const char *gated = rpe_curve_table_get_meta (t, gated_key);
            g_autofree char *human = rpe_figure_model_name (name);
            g_autofree char *full = gated != NULL && strchr (name, '_') == NULL
                                    ? g_strdup_printf ("%s, %s", human, g_str_equal (gated, "true") ? "gated" : "ungated")
                                    : g_strdup (human);

            s = add_series (&sets[0], t, (size_t) xcol, j,
                            by_r && isfinite (slope)
                            ? g_strdup_printf ("%s (slope %s%.2f)", full, slope < 0 ? RPE_FIG_MINUS : "", fabs (slope))
                            : g_strdup (full));
          }
          s->marker = markers[k % G_N_ELEMENTS (markers)];
          if (sd >= 0)
            s->y_err = rpe_curve_table_column_const (t, (size_t) sd);
          k++;
        }
      if (by_r && sets[0].series->len > 0)
        {
          /* The Monte Carlo rate R^(-1/2) through the first series' first point. */
          const RpeCurveSeries *s0 = &g_array_index (sets[0].series, RpeCurveSeries, 0);
          size_t rows = rpe_curve_table_n_rows (t);

          ref_y = g_new (double, rows);
          for (size_t i = 0; i < rows; i++)
            ref_y[i] = s0->y[0] * sqrt (s0->x[0] / s0->x[i]);
          ref.x = s0->x;
          ref.y = ref_y;
          ref.n = rows;
          ref.label = "\xe2\x88\x9d R<sup>" RPE_FIG_MINUS "1/2</sup>";
          ref.dashed = TRUE;
          ref.line_width = 1.0;
          ref.color[0] = ref.color[1] = ref.color[2] = 0.45;
          ref.color[3] = 1.0;
          g_array_append_val (sets[0].series, ref);
        }
      plots[0].x_log = plots[0].y_log = by_r;
      plots[0].x_label = by_r ? "realizations R" : "query position m";
      plots[0].y_label = by_r ? "relative error " RPE_FIG_TEMPLATE_ERROR
                              : "relative row error of " RPE_FIG_P_HAT;
      plots[0].title = by_r ? "SPE estimator error against R" : "SPE estimator error per query position";
      n_plots = 1;
    }
  else
    {
      static const char *const suffix[4] = { "_distance", "_entropy", "_ti", "_mono" };
      static const char *const titles[4] = {
        "Mean attended distance", "Attention entropy (nats)",
        "Translation invariance (lower is better)", "Monotonicity (lower is better)",
      };
      static const char *const ylabels[4] = {
        RPE_FIG_SIGMA "<sub>n</sub> a(m, n) |m " RPE_FIG_MINUS " n|",
        RPE_FIG_MINUS RPE_FIG_SIGMA "<sub>n</sub> a(m, n) log a(m, n)",
        "TI(m)", "mono(m)",
      };
      long xcol = rpe_curve_table_find (t, "m");
      double nt = meta_double (t, "n_train");

      if (xcol < 0)
        {
          rpe_cli_usage_error (error, "the extrapolation table has no m column");
          goto out;
        }
      for (int p = 0; p < 4; p++)
        {
          for (size_t j = 0; j < rpe_curve_table_n_cols (t); j++)
            {
              const char *name = rpe_curve_table_column_name (t, j);

              if (g_str_has_suffix (name, suffix[p]))
                {
                  g_autofree char *code = g_strndup (name, strlen (name) - strlen (suffix[p]));

                  add_series (&sets[p], t, (size_t) xcol, j, rpe_figure_model_name (code));
                }
            }
          plots[p].title = titles[p];
          plots[p].x_label = "query position m";
          plots[p].y_label = ylabels[p];
          plots[p].legend = p == 0 ? RPE_CURVE_LEGEND_BEST : RPE_CURVE_LEGEND_NONE;
          if (isfinite (nt))
            {
              plots[p].x_marker = nt;
              plots[p].x_marker_label = RPE_FIG_N_TRAIN;
            }
        }
      n_plots = 4;
    }

  for (size_t p = 0; p < n_plots; p++)
    {
      plots[p].series = (const RpeCurveSeries *) (void *) sets[p].series->data;
      plots[p].n_series = sets[p].series->len;
    }
  if (eo->panel != NULL && n_plots == 4)
    {
      /* one extrapolation panel alone, with its legend */
      static const char *const names[4] = { "distance", "entropy", "ti", "mono" };

      for (size_t p = 0; p < 4; p++)
        if (g_str_equal (eo->panel, names[p]))
          {
            RpeCurvePlot one = plots[p];

            one.legend = RPE_CURVE_LEGEND_BEST;
            plots[0] = one;
          }
      n_plots = 1;
    }
  {
    RpeFigure fig;
    g_autofree char *ftitle = NULL;

    rpe_figure_init (&fig, RPE_FIGURE_CURVES);
    fig.plots = plots;
    fig.n_plots = n_plots;
    fig.table = t;
    if (n_plots > 1)
      {
        const char *heads = rpe_curve_table_get_meta (t, "heads");
        ftitle = g_strdup_printf ("Extrapolation of identical tokens (" RPE_FIG_N_TRAIN " = %.0f, %s)",
                                  meta_double (t, "n_train"),
                                  heads != NULL ? heads : "");
      }
    fig.title = eo->title != NULL ? eo->title : ftitle;
    ok = export_file (c, &fig, eo->out, error);
  }

out:
  for (int i = 0; i < 4; i++)
    {
      g_array_unref (sets[i].series);
      g_ptr_array_unref (sets[i].strings);
    }
  g_free (ref_y);
  rpe_curve_table_free (t);
  if (tmpdir != NULL)
    {
      if (csv != NULL)
        (void) g_unlink (csv);
      (void) g_rmdir (tmpdir);
    }
  return ok;
}

/* ------------------------------------------------------------------------ */
/* Entry point                                                              */

static int export_main (int argc, char **argv, RpeSession *session);

/* A file given to a heatmap view is read by its figure: one the view would not read (--noise of
 * an analytic template, --keys without --queries) is refused by name, not dropped unread (it may
 * not even exist); the LRPE choices go to --attention-method lrpe or to the session saved.  (The
 * LRPE and FastRPB files are options of the commands that read them.) */
static gboolean
heatmap_view_reads_its_files (const char          *view,
                              const RpeCliArgs    *o,
                              const ExportOptions *eo,
                              gboolean             from_session,
                              GError             **error)
{
  const char *method = eo->attention_method != NULL ? eo->attention_method : o->attention.exact ? "exact" : "spe";
  gboolean    attention = g_str_equal (view, "attention"), templates = g_str_has_prefix (view, "template");
  gboolean    draws = (templates && (eo->empirical || eo->difference)) || g_str_equal (view, "spe-vs-rpe")
                   || (attention && g_str_equal (method, "spe"));
  gboolean content = attention || g_str_equal (view, "spe-vs-rpe");
  /* the Curves page's extrapolation and a session's redraw (its every choice) take them too */
  gboolean lrpe = eo->save_session != NULL || from_session || g_str_equal (view, "curves")
                  || (attention && g_str_equal (method, "lrpe"));
  const struct
  {
    const char *name, *value;
    gboolean    read;
    const char *why;
  } files[] = {
    { "--noise", o->draw.noise, draws, N_("it draws no codes") },
    { "--gate-noise", o->draw.gate_noise, draws, N_("it draws no codes") },
    { "--queries", o->content.queries, content, N_("it shows no content") },
    { "--keys", o->content.keys, content && o->content.queries != NULL,
      content ? N_("--keys goes with --queries") : N_("it shows no content") },
    { "--lrpe-p", o->lrpe.p, lrpe, N_("only --attention-method lrpe, the Curves page or --save-session takes it") },
    { "--lrpe-lambda", o->lrpe.lambda, lrpe,
      N_("only --attention-method lrpe, the Curves page or --save-session takes it") },
    { "--lrpe-theta", o->lrpe.theta, lrpe,
      N_("only --attention-method lrpe, the Curves page or --save-session takes it") },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
    if (files[i].value != NULL && !files[i].read)
      return rpe_cli_usage_error (error, _("%s %s is not used by this figure (%s): remove it"), files[i].name,
                                  files[i].value, _(files[i].why));
  return TRUE;
}

/* The argv of `rpe export --session S [VIEW] [options]`: the session's VIEW and
 * options first, the options given after them (GOption keeps the last value
 * of an option, so they override the session's). */
static char **
session_argv (int argc, char **argv, const char *session_path, RpeSession *session, gboolean with_source,
              GError **error)
{
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func (g_free);
  g_auto (GStrv) from_session = rpe_session_export_argv (session, with_source, error);
  int first = 1;

  if (from_session == NULL)
    {
      g_prefix_error (error, "%s: ", session_path);
      return NULL;
    }
  g_ptr_array_add (out, g_strdup (argv[0]));
  /* a VIEW given beside --session replaces the session's */
  if (argc > 1 && argv[1][0] != '-')
    {
      g_ptr_array_add (out, g_strdup (argv[1]));
      first = 2;
    }
  else
    g_ptr_array_add (out, g_strdup (from_session[0]));
  for (guint i = 1; from_session[i] != NULL; i++)
    {
      /* the feature of "template" only when the view stays "template" */
      if (first == 2 && g_str_equal (from_session[i], "--feature") && !g_str_equal (argv[1], "template"))
        {
          i++;
          continue;
        }
      g_ptr_array_add (out, g_strdup (from_session[i]));
    }
  for (int i = first; i < argc; i++)
    {
      if (g_str_equal (argv[i], "--session"))
        {
          i++;
          continue;
        }
      if (g_str_has_prefix (argv[i], "--session="))
        continue;
      g_ptr_array_add (out, g_strdup (argv[i]));
    }
  g_ptr_array_add (out, NULL);
  return (char **) g_ptr_array_free (g_steal_pointer (&out), FALSE);
}

int
rpe_cli_export (int argc, char **argv)
{
  const char *session_path = NULL;
  g_autoptr (RpeSession) session = NULL;
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) rebuilt = NULL;

  for (int i = 1; i < argc; i++)
    {
      if (g_str_equal (argv[i], "--"))
        break;
      if (g_str_equal (argv[i], "--session") && i + 1 < argc)
        session_path = argv[i + 1];
      else if (g_str_has_prefix (argv[i], "--session="))
        session_path = argv[i] + strlen ("--session=");
      else if (g_str_equal (argv[i], "--session"))
        {
          fprintf (stderr, _("rpe export: --session needs a FILE.rpe-session\n"));
          return EXIT_USAGE;
        }
    }
  if (session_path == NULL)
    return export_main (argc, argv, NULL);
  if (argc > 1 && argv[1][0] != '-' && !g_strv_contains (heatmap_views, argv[1]) && !g_str_equal (argv[1], "curves")
      && !g_str_equal (argv[1], "outputs"))
    {
      fprintf (stderr,
               _("rpe export %s: --session is not used by 'rpe export %s': it redraws the views of the window "
                 "(templates, template, attention, spe-vs-rpe, curves, outputs)\n"),
               argv[1], argv[1]);
      return EXIT_USAGE;
    }
  session = rpe_session_load (session_path, &error);
  if (session == NULL)
    {
      fprintf (stderr, _("rpe export: %s: %s\n"), session_path, error->message);
      return EXIT_USAGE;
    }
  for (guint i = 0; i < session->warnings->len; i++)
    fprintf (stderr, _("rpe export: %s\n"), (const char *) g_ptr_array_index (session->warnings, i));
  if ((argc > 1 && g_str_equal (argv[1], "outputs"))
      || (g_strcmp0 (session->view, "outputs") == 0 && !(argc > 1 && argv[1][0] != '-')))
    {
      /* the Outputs view: `rpe export outputs` reads its modules from the checkpoint, so the
       * session's must be the checkpoint's (edited modules have no `rpe export outputs` line) */
      g_autofree char *why = NULL;

      g_free (session->view);
      session->view = g_strdup ("outputs");
      if (!rpe_session_modules_from_checkpoint (session, NULL, &why))
        {
          fprintf (stderr, _("rpe export: %s: the Outputs view draws the checkpoint's modules, and %s\n"),
                   session_path, why != NULL ? why : "these differ");
          return EXIT_USAGE;
        }
      rebuilt = session_argv (argc, argv, session_path, session, TRUE, &error);
      if (rebuilt == NULL)
        {
          fprintf (stderr, _("rpe export: %s\n"), error->message);
          return EXIT_USAGE;
        }
      {
        /* as below: GOption drops the options it parses from the argv it is given without
         * freeing them, so it gets a copy of the pointers and the strings are freed here */
        guint n = g_strv_length (rebuilt);
        g_autofree char **outputs_argv = g_memdup2 (rebuilt, (n + 1) * sizeof (char *));

        return rpe_cli_export_outputs ((int) n, outputs_argv);
      }
    }
  if (argc > 1 && argv[1][0] != '-')
    {
      /* a VIEW beside --session: the session's figure in that view */
      const char *v = argv[1];

      g_free (session->view);
      session->view = g_strdup (g_str_equal (v, "templates") || g_str_equal (v, "template") ? "templates"
                                : g_str_equal (v, "attention") ? "attention"
                                : g_str_equal (v, "curves") ? "curves" : "teaching");
      if (g_str_equal (v, "templates"))
        session->template_cell = -1;
      else if (g_str_equal (v, "template") && session->template_cell < 0)
        session->template_cell = (int) rpe_explorer_state_get_feature (session->state);
    }
  rebuilt = session_argv (argc, argv, session_path, session, FALSE, &error);
  if (rebuilt == NULL)
    {
      fprintf (stderr, _("rpe export: %s\n"), error->message);
      return EXIT_USAGE;
    }
  {
    /* GOption removes the options it parses from the argv it is given (without
     * freeing them): give it a copy of the pointers, free the strings here */
    guint n = g_strv_length (rebuilt);
    g_autofree char **view_argv = g_memdup2 (rebuilt, (n + 1) * sizeof (char *));

    return export_main ((int) n, view_argv, session);
  }
}

static RpeExplorerState *explorer_state (const Ctx *c, GError **error);

/* `rpe export curves` without --panel: the Curves page's four plots, computed
 * and drawn by the window's own code (rpe_compute_curves, rpe_curves_figure_fill). */
static gboolean
view_curves_page (Ctx *c, GError **error)
{
  g_autoptr (RpeExplorerState) state = NULL;
  g_autoptr (RpeExplorerSnapshot) snap = NULL;
  g_autoptr (RpeCurves) curves = NULL;
  RpeCurvePlot plots[4];
  RpeCurveSeries series[4 * RPE_CURVES_MAX_SERIES];
  char *strings[2] = { NULL, NULL };
  RpeFigure fig;
  gboolean ok;

  if (c->eo->all_heads || c->gif_mode)
    return rpe_cli_usage_error (error, "the Curves page is one figure: no --all-heads or --sweep");
  if (c->o->model.head >= 0 && (gsize) c->o->model.head >= c->params.n_heads)
    return rpe_cli_usage_error (error, "--head must be between 0 and %zu (got %d)", (size_t) c->params.n_heads - 1,
                                c->o->model.head);
  state = explorer_state (c, error);
  if (state == NULL)
    return FALSE;
  snap = rpe_explorer_state_snapshot (state);
  /* the N asked for (the figure's N of a session that the page computed at its cap) */
  curves = rpe_compute_curves (snap, snap->n, NULL, error);
  if (curves == NULL)
    return FALSE;
  rpe_curves_figure_fill (&fig, curves, (guint) snap->head, plots, series, strings);
  if (c->eo->title != NULL)
    fig.title = c->eo->title;
  ok = export_file (c, &fig, c->eo->out, error);
  g_free (strings[0]);
  g_free (strings[1]);
  return ok;
}

/* The window's state of the figure drawn: every option as a state property,
 * the module drawn; over a session's own state (--session) so that what no
 * option says (FastRPB weights, loaded content, LRPE choices) is kept. */
static RpeExplorerState *
explorer_state (const Ctx *c, GError **error)
{
  const RpeCliArgs    *o = c->o;
  const ExportOptions *eo = c->eo;
  RpeSession *from = c->session;
  g_autoptr (RpeExplorerState) state = rpe_explorer_state_new ();
  g_autofree char *source = NULL;
  gsize n;
  guint method = o->attention.exact ? RPE_EXPLORER_METHOD_EXACT : RPE_EXPLORER_METHOD_SPE, content = RPE_CONTENT_UNIT,
        v;

  if (rpe_cli_content_is_capture (o) && (!g_str_equal (c->view, "attention") || eo->save_session != NULL))
    return rpe_cli_usage_error (
             error,
             "this figure is drawn by the window's code, which takes unit, random or a session's "
             "content; a capture (--content %s) is drawn by the views attention and spe-vs-rpe and by "
             "rpe compute",
             o->content.kind),
           NULL;
  if (!rpe_cli_resolve_length (o, 0, &n, error))
    return NULL;
  if (n < 2 || n > RPE_EXPLORER_MAX_LENGTH)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("the length %zu is outside the "
                          "window's range 2 .. %d"), (size_t) n, RPE_EXPLORER_MAX_LENGTH), NULL;
  if (o->draw.realizations != RPE_CLI_UNSET && (o->draw.realizations < 1 || o->draw.realizations > RPE_EXPLORER_MAX_R))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, "R = %" G_GINT64_FORMAT " is outside the window's 1 .. %d",
                          o->draw.realizations, RPE_EXPLORER_MAX_R),
           NULL;
  if (o->draw.seed < 0 || o->draw.seed > G_MAXINT)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("the seed must be 0 .. %d"), G_MAXINT), NULL;
  if (c->params.n_heads > 1024 || c->params.n_features > 4096)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("the module is larger than the window "
                          "shows (1024 heads, 4096 features)")), NULL;
  if (eo->attention_method != NULL && !rpe_session_choice_value ("--attention-method", eo->attention_method, &method))
    return rpe_cli_usage_error (error, "--attention-method must be spe, exact, ape, lrpe, fastrpb or linear (got '%s')",
                                eo->attention_method),
           NULL;
  if (method == RPE_EXPLORER_METHOD_SPE && o->attention.exact)
    method = RPE_EXPLORER_METHOD_EXACT;
  if (from != NULL)
    {
      /* the session's state first (its FastRPB weights, .npy content, choices), the options over it */
      rpe_explorer_state_copy_into (from->state, state);
      g_object_get (from->state, "content", &content, NULL);
    }
  if (o->model.checkpoint != NULL)
    {
      g_autofree char *base = g_path_get_basename (o->model.checkpoint);

      source = o->model.prefix != NULL ? g_strdup_printf ("%s module “%s”", base, o->model.prefix)
                                       : g_strdup_printf ("%s", base);
    }
  else if (from != NULL)
    source = g_strdup (rpe_explorer_state_get_source (from->state, c->params.method));
  if (c->params.n_heads > 0)
    {
      /* the module drawn, with the gate that --no-gate switched off (the state's "gated" says it is off) */
      RpeSpeParams module = c->params;

      if (c->kept_gate != NULL)
        module.gate = c->kept_gate;
      if (c->params.method == RPE_SPE_SINE)
        {
          if (!rpe_explorer_state_set_modules (state, &module, source != NULL ? source : "random parameters", NULL,
                                               NULL, error))
            return NULL;
        }
      else if (!rpe_explorer_state_set_modules (state, NULL, NULL, &module,
                                                source != NULL ? source : "random parameters", error))
        return NULL;
    }
  /* the checkpoint's trained FastRPB biases, learned APE, LRPE module */
  if (c->trained != NULL)
    rpe_explorer_state_set_trained (state, c->trained);
  if (c->lrpe_trained != NULL)
    rpe_explorer_state_set_lrpe_trained (state, c->lrpe_trained, source);
  if (o->content.kind != NULL && !rpe_cli_content_is_capture (o))
    content = g_str_equal (o->content.kind, "random") ? RPE_CONTENT_RANDOM : RPE_CONTENT_UNIT;
  g_object_set (state, "spe-kind", (guint) c->params.method, "method", method, "length", (guint) n, "realizations",
                (guint) (o->draw.realizations != RPE_CLI_UNSET ? o->draw.realizations : 64), "seed",
                (guint) o->draw.seed, "head", (guint) (o->model.head >= 0 ? o->model.head : 0), "feature",
                (guint) (o->model.feature >= 0 ? o->model.feature : 0), "causal", o->attention.causal, "gated",
                c->gated, "template-kind",
                (guint) (eo->difference  ? RPE_TEMPLATE_DIFFERENCE
                         : eo->empirical ? RPE_TEMPLATE_EMPIRICAL
                                         : RPE_TEMPLATE_ANALYTIC),
                "content", content, "train-length",
                (guint) (o->draw.train_length != RPE_CLI_UNSET && o->draw.train_length > 0
                           ? MIN (o->draw.train_length, RPE_EXPLORER_MAX_LENGTH)
                           : 0),
                "colormap", eo->colormap != NULL ? eo->colormap : "viridis", NULL);
  g_object_set (state, "color-scale", (guint) c->transform,
                "color-range", (guint) (eo->per_cell_scale ? RPE_COLOR_RANGE_PER_PANEL : RPE_COLOR_RANGE_SHARED), NULL);
  if (c->transform == RPE_HEATMAP_TRANSFORM_POWER)
    g_object_set (state, "color-gamma", c->transform_param, NULL);
  if (c->transform == RPE_HEATMAP_TRANSFORM_PERCENTILE)
    g_object_set (state, "color-percentile", c->transform_param, NULL);
  /* the choices of LRPE and linear attention */
  if (o->lrpe.p != NULL && !rpe_session_choice_value ("--lrpe-p", o->lrpe.p, &v))
    return rpe_cli_usage_error (error,
                                "--lrpe-p must be identity, householder, permutation, odd-even, fourier or dct "
                                "(got '%s')",
                                o->lrpe.p),
           NULL;
  if (o->lrpe.p != NULL)
    g_object_set (state, "lrpe-p", v, NULL);
  if (o->lrpe.lambda != NULL && !rpe_session_choice_value ("--lrpe-lambda", o->lrpe.lambda, &v))
    return rpe_cli_usage_error (error, "--lrpe-lambda must be rotation, mixed, complex or permutation (got '%s')",
                                o->lrpe.lambda),
           NULL;
  if (o->lrpe.lambda != NULL)
    g_object_set (state, "lrpe-lambda", v, NULL);
  if (o->lrpe.theta != NULL && !rpe_session_choice_value ("--lrpe-theta", o->lrpe.theta, &v))
    return rpe_cli_usage_error (error, "--lrpe-theta must be a, b or c (got '%s')", o->lrpe.theta), NULL;
  if (o->lrpe.theta != NULL)
    g_object_set (state, "lrpe-theta", v, NULL);
  if (o->attention.feature_map != NULL && !rpe_session_choice_value ("--feature-map", o->attention.feature_map, &v))
    return rpe_cli_usage_error (error, "--feature-map must be relu, elu1, exp, performer or dpfp (got '%s')",
                                o->attention.feature_map),
           NULL;
  if (o->attention.feature_map != NULL)
    g_object_set (state, "feature-map", v, NULL);
  if (c->trained != NULL && o->model.prefix != NULL)
    {
      /* --prefix names the FastRPB module (layer) drawn */
      for (guint i = 0; i < c->trained->n_fastrpb; i++)
        if (g_str_equal (c->trained->fastrpb[i].prefix, o->model.prefix)
            && c->trained->fastrpb[i].layer != RPE_EXPLORER_TRAINED_NO_LAYER)
          g_object_set (state, "capture-layer", c->trained->fastrpb[i].layer, NULL);
    }
  if (rpe_cli_content_is_capture (o))
    {
      /* the capture's layer --layer as the content, as the window's Open Capture */
      g_autoptr (RpeExplorerCapture) capture = rpe_explorer_capture_open (o->content.kind, error);
      g_autoptr (RpeTensorSet) set = NULL;
      guint layer;

      if (capture == NULL)
        return NULL;
      if (o->model.checkpoint != NULL && o->model.map == NULL
          && (set = rpe_cli_read_checkpoint (o->model.checkpoint, error)) != NULL)
        {
          g_autoptr (RpeModelPrint) print = rpe_model_print_new (set, o->model.checkpoint);

          rpe_explorer_state_set_model_print (state, print);
        }
      else if (o->model.checkpoint != NULL && o->model.map == NULL)
        return NULL;
      layer = o->model.layer >= 0 ? (guint) o->model.layer : rpe_capture_layer (capture->capture, 0);
      if (!rpe_explorer_state_set_capture (state, capture, layer, error))
        return NULL;
    }
  return g_steal_pointer (&state);
}

/* The session of the figure drawn: its state (explorer_state), the module's
 * checkpoint, the zoom and the export settings. */
static gboolean
save_session (const Ctx *c, RpeSession *from, GError **error)
{
  const RpeCliArgs    *o = c->o;
  const ExportOptions *eo = c->eo;
  g_autoptr (RpeExplorerState) state = explorer_state (c, error);
  g_autoptr (RpeSession) s = NULL;
  gboolean templates = g_str_equal (c->view, "templates") || g_str_equal (c->view, "template");

  if (state == NULL)
    return FALSE;
  s = rpe_session_new_from_state (state);
  g_free (s->view);
  s->view = g_strdup (templates ? "templates" : g_str_equal (c->view, "attention") ? "attention"
                      : g_str_equal (c->view, "curves") ? "curves" : "teaching");
  s->template_cell = g_str_equal (c->view, "template") ? (o->model.feature >= 0 ? o->model.feature : 0) : -1;
  if (o->model.checkpoint != NULL)
    {
      g_autofree char *abs =
        rpe_demos_is_spec (o->model.checkpoint) && !g_file_test (o->model.checkpoint, G_FILE_TEST_EXISTS)
          ? g_strdup (o->model.checkpoint)
          : g_canonicalize_filename (o->model.checkpoint, NULL);

      rpe_session_set_checkpoint (s, abs, o->model.prefix, o->model.layer, (const char *const *) o->model.map);
    }
  else if (from != NULL && from->checkpoint.path != NULL)
    rpe_session_set_checkpoint (s, from->checkpoint.path, from->checkpoint.prefix, from->checkpoint.layer,
                                (const char *const *) from->checkpoint.map);
  if (from != NULL && from->content_path != NULL)
    {
      guint content = 0;

      g_object_get (state, "content", &content, NULL);
      if (content == RPE_CONTENT_NPY)
        {
          rpe_session_set_content_path (s, from->content_path);
        }
    }
  if (g_str_equal (c->view, "attention") && (eo->rows != NULL || eo->cols != NULL))
    {
      guint n = 0;
      gsize m0 = 0, m1, n0 = 0, n1;

      g_object_get (state, "length", &n, NULL);
      m1 = n1 = n;
      if ((eo->rows != NULL && !rpe_cli_parse_range ("--rows", eo->rows, n, &m0, &m1, error))
          || (eo->cols != NULL && !rpe_cli_parse_range ("--cols", eo->cols, n, &n0, &n1, error)))
        return FALSE;
      s->have_viewport = TRUE;
      s->viewport[0] = (double) m0;
      s->viewport[1] = (double) m1;
      s->viewport[2] = (double) n0;
      s->viewport[3] = (double) n1;
    }
  s->export_width = eo->width;
  s->export_height = eo->height;
  s->export_dpi = eo->dpi;
  s->export_title = g_strdup (eo->title);
  {
    /* what the window has no setting for, as the options themselves */
    g_autoptr (GPtrArray) extra = g_ptr_array_new ();

    if (eo->colormap != NULL)
      {
        g_ptr_array_add (extra, (char *) "--colormap");
        g_ptr_array_add (extra, eo->colormap);
      }
    if (eo->preset != NULL)
      {
        g_ptr_array_add (extra, (char *) "--preset");
        g_ptr_array_add (extra, eo->preset);
      }
    if (eo->reduce != NULL)
      {
        g_ptr_array_add (extra, (char *) "--reduce");
        g_ptr_array_add (extra, eo->reduce);
      }
    if (eo->attention_transform)
      g_ptr_array_add (extra, (char *) "--attention-transform");
    if (eo->per_cell_scale)
      g_ptr_array_add (extra, (char *) "--per-cell-scale");
    g_ptr_array_add (extra, NULL);
    if (extra->len > 1)
      s->export_options = g_strdupv ((char **) extra->pdata);
  }
  return rpe_session_save (s, eo->save_session, error);
}

/* The export figure's own options (ExportOptions): rows of part 0 in every view (the curve
 * views too), the others where the leaves' `own` says. */
#define EXPORT_HEATMAP 1     /* the heatmap views and the Curves page */
#define EXPORT_SCALE 2       /* the heatmap views' colour scale */
#define EXPORT_ATTENTION 4   /* the Attention view's method and zoom */
#define EXPORT_PANEL 8       /* extrapolation's panels */
#define EXPORT_PAGE_PANEL 16 /* the Curves page's panels */

#define E(field) G_STRUCT_OFFSET (ExportOptions, field)

/* clang-format off */
static const RpeCliOption export_options[] = {
  { .name = "output", .short_name = 'o', .arg = RPE_CLI_ARG_FILE, .offset = E (out),
    .help = N_("Write the figure here (.png, .svg, .pdf; .csv for curves, .npy for arrays; .gif with --sweep)"),
    .arg_name = "FILE" },
  RPE_CLI_STRING ("title", E (title), 0, N_("Figure title (default: what it shows)"), "T"),
  RPE_CLI_DOUBLE ("width", E (width), 0, 1, 1e6, N_("Width: pixels (PNG) or points (SVG, PDF)"), "W"),
  RPE_CLI_DOUBLE ("height", E (height), 0, 1, 1e6, N_("Height: pixels (PNG) or points (SVG, PDF)"), "H"),
  RPE_CLI_DOUBLE ("dpi", E (dpi), 0, 10, 2400, N_("PNG resolution (default 150)"), "D"),
  RPE_CLI_STRING ("preset", E (preset), 0,
                  N_("column (3.25 in, 8 pt text), page (6.75 in, 9 pt), slide (13.333 x 7.5 in, 20 pt); --width/--height still override"),
                  "column|page|slide"),
  RPE_CLI_STRING ("panel", E (panel), EXPORT_PANEL, N_("One panel alone"), "distance|entropy|ti|mono"),
  RPE_CLI_STRING ("panel", E (panel), EXPORT_PAGE_PANEL,
                  N_("One panel of the Curves page alone, with the options of its curve ('rpe curves KIND')"),
                  "profile|error|extrapolation|extrapolation-distance|extrapolation-entropy|extrapolation-ti|extrapolation-mono"),
  RPE_CLI_STRING ("colormap", E (colormap), 0,
                  N_("viridis (default), magma, inferno, cividis, rdbu (diverging), grey"),
                  "viridis|magma|inferno|cividis|rdbu|grey"),
  RPE_CLI_FLAG ("attention-transform", E (attention_transform), EXPORT_HEATMAP,
                N_("Attention shown as min(1, a^0.4 / 0.02^0.4) (the SPE paper's figures)")),
  RPE_CLI_STRING ("color-scale", E (color_scale), EXPORT_SCALE,
                  N_("Heatmap colour scale: linear (default), log (4 decades), power (--gamma), percentile (clipped, --percentile) or attention (= --attention-transform)"),
                  "linear|log|power|percentile|attention"),
  RPE_CLI_DOUBLE ("gamma", E (gamma), EXPORT_SCALE, 0.05, 10,
                  N_("--color-scale power: the exponent (0.05 .. 10, default 0.5)"), "G"),
  RPE_CLI_DOUBLE ("percentile", E (percentile), EXPORT_SCALE, 50, 100,
                  N_("--color-scale percentile: clip to [P(100-p), P(p)] (50 .. 100, default 99)"), "P"),
  RPE_CLI_FLAG ("all-heads", E (all_heads), EXPORT_HEATMAP, N_("One file per head; -o must contain {head}")),
  RPE_CLI_STRING ("sweep", E (sweep), EXPORT_HEATMAP,
                  N_("Heatmap views: an animated GIF (-o FILE.gif) over PARAM = realizations (geometric steps), length or seed"),
                  "PARAM=FROM:TO"),
  RPE_CLI_INT ("frames", E (frames), EXPORT_HEATMAP, 2, RPE_GIF_MAX_FRAMES,
               N_("--sweep: the number of frames K (2 .. 1000, default 8)"), "K"),
  RPE_CLI_INT ("frame-delay", E (frame_delay), EXPORT_HEATMAP, 1, 6000,
               N_("--sweep: hundredths of a second per frame (1 .. 6000, default 60)"), "CS"),
  RPE_CLI_FILE ("save-session", E (save_session), EXPORT_HEATMAP,
                N_("Also write the session of this figure (open it with rpe-studio, redraw it with --session)"),
                "S.rpe-session"),
  RPE_CLI_FILE ("session", E (session), EXPORT_HEATMAP,
                N_("Redraw the figure of a saved session (options given beside it override its values)"),
                "S.rpe-session"),
  RPE_CLI_STRING ("attention-method", E (attention_method), EXPORT_ATTENTION,
                  N_("attention: the map of spe (default; exact with --exact), exact, ape, lrpe (--lrpe-p/--lrpe-lambda/--lrpe-theta), fastrpb or linear (--feature-map), as the window's Attention view"),
                  "spe|exact|ape|lrpe|fastrpb|linear"),
  RPE_CLI_STRING ("rows", E (rows), EXPORT_ATTENTION,
                  N_("attention: draw rows A .. B-1 of the map only (the window's zoom)"), "A:B"),
  RPE_CLI_STRING ("cols", E (cols), EXPORT_ATTENTION, N_("attention: draw columns C .. D-1 of the map only"), "C:D"),
  RPE_CLI_FLAG ("empirical", E (empirical), EXPORT_HEATMAP,
                N_("templates/template: the empirical template of the draw")),
  RPE_CLI_FLAG ("difference", E (difference), EXPORT_HEATMAP, N_("templates/template: empirical - analytic")),
  RPE_CLI_FLAG ("per-cell-scale", E (per_cell_scale), EXPORT_HEATMAP,
                N_("templates, spe-vs-rpe: each cell (panel) its own colour range")),
  RPE_CLI_STRING ("reduce", E (reduce), EXPORT_HEATMAP,
                  N_("Cells per pixel when the map is larger than the image: mean (default) or max"), "mean|max"),
  { NULL }
};
/* clang-format on */

#define HEATMAP_TAKES                                                                                                  \
  (RPE_CLI_TAKES_MODEL | RPE_CLI_TAKES_SPE | RPE_CLI_TAKES_SEQUENCE | RPE_CLI_TAKES_REALIZATIONS | RPE_CLI_TAKES_NOISE \
   | RPE_CLI_TAKES_GATE_NOISE | RPE_CLI_TAKES_NOISE_SCHEME | RPE_CLI_TAKES_QUERIES | RPE_CLI_TAKES_CONTENT             \
   | RPE_CLI_TAKES_EXACT | RPE_CLI_TAKES_CAUSAL | RPE_CLI_TAKES_HEAD_FEATURE | RPE_CLI_TAKES_LRPE                      \
   | RPE_CLI_TAKES_TRAIN_LENGTH | RPE_CLI_TAKES_FORCE)
#define COMPARE_TAKES                                                                                \
  (RPE_CLI_TAKES_MODEL | RPE_CLI_TAKES_SPE | RPE_CLI_TAKES_SEQUENCE | RPE_CLI_TAKES_REALIZATIONS     \
   | RPE_CLI_TAKES_CONTENT | RPE_CLI_TAKES_EXACT | RPE_CLI_TAKES_CAUSAL | RPE_CLI_TAKES_HEAD_FEATURE \
   | RPE_CLI_TAKES_TRAIN_LENGTH | RPE_CLI_TAKES_FORCE)

static const RpeCliLeaf export_leaves[] = {
  { "templates", N_("All D templates of one head in a grid (analytic, --empirical or --difference)"),
    N_("The templates Ptilde_hd(m, n) of every feature d of --head, in a grid, as the window's Templates\n"
       "view draws them: analytic, or the empirical template of the draw (--empirical) or their\n"
       "difference (--difference).  --all-heads writes one file per head."),
    "export templates --checkpoint demo --length 64 --head 0 -o templates.png", HEATMAP_TAKES,
    EXPORT_HEATMAP | EXPORT_SCALE, "checkpoint length head", NULL, NULL, NULL },
  { "template", N_("One template, of --head and --feature"),
    N_("One template Ptilde_hd(m, n), of --head and --feature: analytic, --empirical or --difference."),
    "export template --checkpoint demo --length 128 --head 0 --feature 3 -o template.pdf", HEATMAP_TAKES,
    EXPORT_HEATMAP | EXPORT_SCALE, "checkpoint length head feature", NULL, NULL, NULL },
  { "attention", N_("One head's attention map (SPE estimate, exact, APE, LRPE, FastRPB, linear)"),
    N_("The attention map of --head as the window's Attention view draws it: the SPE estimate (or\n"
       "--exact), or --attention-method ape|lrpe|fastrpb|linear; --causal masks, --train-length marks\n"
       "N_train, --rows A:B --cols C:D draw the window's zoom.  --sweep makes an animated GIF."),
    "export attention --checkpoint demo --length 256 --head 0 -o attention.png",
    HEATMAP_TAKES | RPE_CLI_TAKES_FEATURE_MAP, EXPORT_HEATMAP | EXPORT_SCALE | EXPORT_ATTENTION,
    "checkpoint length head exact causal", NULL, NULL, NULL },
  { "spe-vs-rpe", N_("Exact | SPE estimate | difference, side by side"),
    N_("The exact attention map, the SPE estimate of it and their difference, side by side (the\n"
       "window's SPE vs RPE view).  --sweep realizations=1:1024 shows the estimate sharpen with R."),
    "export spe-vs-rpe --checkpoint demo --length 128 --realizations 64 -o spe-vs-rpe.png", HEATMAP_TAKES,
    EXPORT_HEATMAP | EXPORT_SCALE, "checkpoint length realizations head", NULL, NULL, NULL },
  { "profile", N_("Template profiles P(tau): every option of 'rpe curves profile'"),
    N_("The table of 'rpe curves profile' (its options), drawn: the template profiles P(tau) of the\n"
       "models.  .csv writes the table itself."),
    "export profile --checkpoint demo --length 128 -o profile.svg", 0, 0, NULL, NULL, &rpe_cli_curves_command,
    "profile" },
  { "error", N_("Estimator error against R: every option of 'rpe curves error'"),
    N_("The table of 'rpe curves error' (its options), drawn: the SPE estimator's relative error against R\n"
       "on log-log axes, with the fitted slopes.  .csv writes the table itself."),
    "export error --checkpoint demo --realizations-list 4,16,64 --seeds 2 -o error.pdf", 0, 0, NULL, NULL,
    &rpe_cli_curves_command, "error" },
  { "extrapolation", N_("The four extrapolation metrics: every option of 'rpe curves extrapolation'"),
    N_("The table of 'rpe curves extrapolation' (its options), drawn: mean attended distance, entropy,\n"
       "translation invariance and monotonicity per query position; --panel draws one alone."),
    "export extrapolation --checkpoint demo --train-length 32 --max-length 128 -o extrapolation.png", 0, EXPORT_PANEL,
    NULL, NULL, &rpe_cli_curves_command, "extrapolation" },
  { "curves", N_("The window's Curves page (its four plots), or one panel of it with --panel"),
    N_("The Curves page as the window draws it: profile, error and extrapolation of the module, with\n"
       "the page's settings.  --panel profile|error|extrapolation|extrapolation-distance|\n"
       "extrapolation-entropy|extrapolation-ti|extrapolation-mono draws one panel alone, with the\n"
       "options of that curve ('rpe curves KIND')."),
    "export curves --checkpoint demo -o curves.png", HEATMAP_TAKES, EXPORT_HEATMAP | EXPORT_PAGE_PANEL,
    "checkpoint length realizations", NULL, NULL, NULL },
  { "outputs", N_("What attention does to chosen values V: exact and SPE outputs, their error"),
    N_("Y of exact attention and of SPE for chosen values V (--values, or --value-source impulse|sweep|\n"
       "noise), for one head: the window's Outputs view.  .csv writes the table, .npy (3, Dv, N) the\n"
       "reference, the estimate and their difference."),
    "export outputs --checkpoint demo --length 64 -o outputs.png", RPE_CLI_OUTPUTS_TAKES | RPE_CLI_TAKES_NOISE_SCHEME,
    RPE_CLI_OUTPUTS_FIGURE, "checkpoint length values", rpe_cli_outputs_options, NULL, NULL },
  { "compare-templates", N_("Templates of A | B | A - B (two checkpoints, layers, heads or methods)"),
    N_("The window's Compare view for templates: A (the options) against B, which --b-checkpoint,\n"
       "--b-layer, --b-head and --b-method change, and A - B.  .npy writes (3, rows, cols)."),
    "export compare-templates --checkpoint demo --b-method conv -o compare.png", COMPARE_TAKES, RPE_CLI_COMPARE_B,
    "checkpoint length head", rpe_cli_compare_options, NULL, NULL },
  { "compare-attention", N_("Attention maps of A | B | A - B"),
    N_("The window's Compare view for attention maps: A against B (--b-checkpoint, --b-layer, --b-head,\n"
       "--b-method spe|exact|ape|lrpe|fastrpb|linear, --b-content CAPTURE) and A - B."),
    "export compare-attention --checkpoint demo --length 128 --b-method exact -o compare-attention.png", COMPARE_TAKES,
    RPE_CLI_COMPARE_B | RPE_CLI_COMPARE_B_CONTENT, "checkpoint length head exact", rpe_cli_compare_options, NULL,
    NULL },
  { "overview", N_("Every layer and head of a checkpoint at a glance"),
    N_("The window's Overview: one small map per layer and head (templates, or --cells attention).\n"
       ".npy writes (layers * heads, rows, cols), cell (l, h) at l * H + h."),
    "export overview --checkpoint demo -o overview.png", COMPARE_TAKES, RPE_CLI_COMPARE_CELLS, "checkpoint length",
    rpe_cli_compare_options, NULL, NULL },
};

const RpeCliCommand rpe_cli_export_command = {
  .name = "export",
  .summary = N_("Publication figures of the views: PNG, SVG, PDF (and CSV, npy, GIF)"),
  .leaf_arg = "VIEW",
  .description = N_("Draws the window's views with the window's own renderers; the extension of -o picks the\n"
                    "format.  Size: --width/--height (pixels for PNG, points for SVG/PDF), --dpi, or --preset\n"
                    "column|page|slide.  'rpe export --session S.rpe-session [VIEW]' redraws a saved session."),
  .example = "export attention --checkpoint demo --length 256 -o attention.png",
  .options = export_options,
  .leaves = export_leaves,
  .n_leaves = G_N_ELEMENTS (export_leaves),
  .run = rpe_cli_export,
};

#define VIEWS                                                                                             \
  "templates | template | attention | spe-vs-rpe | profile | error | extrapolation | curves | outputs | " \
  "compare-templates | compare-attention | overview"

/* The arguments `rpe curves VIEW` takes from `rpe export VIEW ...`: every argument but the view
 * (at view_index) and the export figure's own options. */
static GPtrArray *
curves_args (const RpeCliLeaf *leaf, int argc, char **argv, int view_index)
{
  GPtrArray *out = g_ptr_array_new ();

  for (int i = 1; i < argc; i++)
    {
      const RpeCliOption *own = NULL;

      if (i == view_index)
        continue;
      if (g_str_equal (argv[i], "--"))
        {
          for (; i < argc; i++)
            if (i != view_index)
              g_ptr_array_add (out, argv[i]);
          break;
        }
      for (const RpeCliOption *e = export_options; e->name != NULL && own == NULL; e++)
        if ((e->part == 0 || (e->part & leaf->own) != 0)
            && ((g_str_has_prefix (argv[i], "--") && g_str_has_prefix (argv[i] + 2, e->name)
                 && (argv[i][2 + strlen (e->name)] == '\0' || argv[i][2 + strlen (e->name)] == '='))
                || (e->short_name != 0 && argv[i][0] == '-' && argv[i][1] == e->short_name && argv[i][2] == '\0')))
          own = e;
      if (own == NULL)
        g_ptr_array_add (out, argv[i]);
      else if (strchr (argv[i], '=') == NULL)
        i++; /* its value (every figure option takes one) */
    }
  return out;
}

static int
export_main (int argc, char **argv, RpeSession *session)
{
  const RpeCliCommand *command = &rpe_cli_export_command;
  const RpeCliLeaf    *leaf;
  RpeCliLeaf           panel_leaf;
  RpeCliArgs           o;
  ExportOptions eo = { 0 };
  Ctx c = { 0 };
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) forward = NULL;
  const char *view, *label = NULL;
  gboolean curves, page, ok = FALSE;
  int         status = 0, index;

  leaf = rpe_cli_find_leaf (command, argc, argv, &index);
  if (leaf == NULL)
    {
      if (rpe_cli_wants_help (command, NULL, argc, argv))
        {
          rpe_cli_print_command_help (command, stdout);
          return 0;
        }
      if (argc < 2)
        rpe_cli_print_command_help (command, stderr);
      else if (index < 0)
        fprintf (stderr, _("rpe export: %s\n"), "say which VIEW: " VIEWS);
      else
        fprintf (stderr, _("rpe export: unknown VIEW '%s' (" VIEWS ")\n"), argv[index]);
      return EXIT_USAGE;
    }
  view = leaf->name;
  if (g_str_equal (view, "outputs"))
    return rpe_cli_export_outputs (argc, argv); /* rpe-cli-outputs.c */
  if (g_str_equal (view, "compare-templates") || g_str_equal (view, "compare-attention")
      || g_str_equal (view, "overview"))
    return rpe_cli_export_compare (argc, argv); /* rpe-cli-compare.c */

  /* `rpe export curves` without --panel: the Curves page as the window draws it; with it, the
   * options of the panel's curve */
  page = g_str_equal (view, "curves");
  for (int i = 1; i < argc && page; i++)
    {
      gboolean    value = FALSE;
      const char *p = NULL;

      if (g_str_equal (argv[i], "--"))
        break;
      if (g_str_has_prefix (argv[i], "--panel="))
        p = argv[i] + strlen ("--panel=");
      else if (g_str_equal (argv[i], "--panel"))
        p = i + 1 < argc ? argv[i + 1] : "";
      if (p != NULL)
        {
          const char *kind = g_str_has_prefix (p, "extrapolation") ? "extrapolation"
                             : g_str_equal (p, "error")            ? "error"
                                                                   : "profile";

          panel_leaf = *rpe_cli_leaf_lookup (command, kind);
          panel_leaf.own = (panel_leaf.own & ~(guint64) EXPORT_PANEL) | EXPORT_PAGE_PANEL;
          leaf = &panel_leaf;
          label = "export curves";
          page = FALSE;
        }
      else if ((g_str_equal (argv[i], "-o")
                || (g_str_has_prefix (argv[i], "--") && strchr (argv[i], '=') == NULL
                    && rpe_cli_leaf_takes (command, leaf, argv[i] + 2, &value) && value))
               && i + 1 < argc)
        i++; /* an option's value */
    }
  curves = (g_strv_contains (curve_views, view) || g_str_equal (view, "curves")) && !page;

  rpe_cli_args_init (&o);
  if (curves)
    forward = curves_args (leaf, argc, argv, index);
  if (!rpe_cli_parse (command, leaf, label, &o, &eo, &argc, &argv, &status))
    goto done;
  status = EXIT_USAGE;
  if (argc != 2)
    {
      fprintf (stderr, _("rpe export: too many arguments\n"));
      goto done;
    }
  status = 0;

  if (curves && g_str_equal (view, "curves"))
    {
      /* the Curves page's panels one by one: profile | error | extrapolation[-METRIC] */
      const char *p = eo.panel;

      if (g_str_equal (p, "profile") || g_str_equal (p, "error") || g_str_equal (p, "extrapolation"))
        {
          view = g_str_equal (p, "profile") ? "profile" : g_str_equal (p, "error") ? "error" : "extrapolation";
          g_clear_pointer (&eo.panel, g_free);
        }
      else if (g_str_has_prefix (p, "extrapolation-"))
        {
          char *metric = g_strdup (p + strlen ("extrapolation-"));

          view = "extrapolation";
          g_free (eo.panel);
          eo.panel = metric;
        }
      else
        {
          fprintf (stderr, _("rpe export curves: unknown --panel '%s'\n"), p);
          status = EXIT_USAGE;
          goto done;
        }
    }
  if (eo.panel != NULL && !g_str_equal (eo.panel, "distance") && !g_str_equal (eo.panel, "entropy")
      && !g_str_equal (eo.panel, "ti") && !g_str_equal (eo.panel, "mono"))
    {
      fprintf (stderr, _("rpe export %s: --panel must be distance, entropy, ti or mono (got '%s')\n"), view, eo.panel);
      status = EXIT_USAGE;
      goto done;
    }

  if (eo.out != NULL && !rpe_cli_check_output (&o, eo.out, &error))
    {
      fprintf (stderr, _("rpe export %s: %s\n"), view, error->message);
      status = EXIT_FAILURE_OTHER;
      goto done;
    }
  c.view = view;
  c.session = session;
  c.o = &o;
  c.eo = &eo;
  if (eo.out == NULL)
    {
      fprintf (stderr, _("rpe export %s: -o FILE.png|svg|pdf%s is required\n"), view, curves ? "|csv" : "|npy");
      status = EXIT_USAGE;
      goto done;
    }
  if (g_str_has_suffix (eo.out, ".gif") || g_str_has_suffix (eo.out, ".GIF") || eo.sweep != NULL)
    {
      if (eo.sweep == NULL || !(g_str_has_suffix (eo.out, ".gif") || g_str_has_suffix (eo.out, ".GIF")))
        {
          fprintf (stderr, _("rpe export %s: an animation needs both --sweep PARAM=FROM:TO and -o FILE.gif\n"), view);
          status = EXIT_USAGE;
          goto done;
        }
      if (curves || eo.all_heads)
        {
          fprintf (stderr, _("rpe export %s: --sweep animates one heatmap view (templates, template, attention, "
                             "spe-vs-rpe), without --all-heads\n"), view);
          status = EXIT_USAGE;
          goto done;
        }
      c.gif_mode = TRUE;
      c.format = RPE_EXPORT_PNG;   /* the frames' size is the PNG's */
    }
  else if (!rpe_export_format_from_path (eo.out, &c.format))
    {
      fprintf (stderr, _("rpe export %s: cannot tell the format of '%s' (use .png, .svg, .pdf, .csv or .npy)\n"),
               view, eo.out);
      status = EXIT_USAGE;
      goto done;
    }
  if ((curves && c.format == RPE_EXPORT_NPY) || (!curves && c.format == RPE_EXPORT_CSV))
    {
      fprintf (stderr, _("rpe export %s: %s\n"), view, curves ? "curves are written as .csv, not .npy"
                                                          : "heatmaps are written as .npy, not .csv");
      status = EXIT_USAGE;
      goto done;
    }
  if (eo.all_heads && (curves || strstr (eo.out, "{head}") == NULL))
    {
      fprintf (stderr, _("rpe export %s: %s\n"), view,
               curves ? "--all-heads is for the heatmap views; give --head to the curves"
                      : "--all-heads needs {head} in the output name, e.g. -o 'attn-h{head}.pdf'");
      status = EXIT_USAGE;
      goto done;
    }
  c.size.width = eo.width;
  c.size.height = eo.height;
  c.size.dpi = eo.dpi;
  {
    RpeExportPreset preset;

    if (!rpe_export_preset_from_name (eo.preset, &preset))
      {
        fprintf (stderr, _("rpe export %s: unknown --preset '%s' (column, page or slide)\n"), view, eo.preset);
        status = EXIT_USAGE;
        goto done;
      }
    rpe_export_preset_apply (preset, &c.size);
  }
  {
    /* Validate the size, and the memory drawing it takes, before any computation. */
    RpeFigure probe;

    rpe_figure_init (&probe, curves || page                     ? RPE_FIGURE_CURVES
                             : g_str_equal (view, "templates")  ? RPE_FIGURE_GRID
                             : g_str_equal (view, "spe-vs-rpe") ? RPE_FIGURE_COMPARE
                                                                : RPE_FIGURE_HEATMAP);
    if (probe.kind == RPE_FIGURE_COMPARE)
      probe.n_panels = 3;
    if (!rpe_export_resolve_size (&probe, c.format, &c.size, NULL, NULL, NULL, NULL, &error))
      {
        fprintf (stderr, _("rpe export %s: %s\n"), view, error->message);
        status = EXIT_USAGE;
        goto done;
      }
    if (!rpe_cli_check_image (&probe, c.format, &c.size, c.gif_mode, &error))
      {
        fprintf (stderr, _("rpe export %s: %s: %s\n"), view, eo.out, error->message);
        status = EXIT_USAGE;
        goto done;
      }
  }
  c.cmap = rpe_colormap_default ();
  if (eo.colormap != NULL && (c.cmap = rpe_colormap_lookup (eo.colormap)) == NULL)
    {
      fprintf (stderr, _("rpe export %s: unknown colour map '%s' (viridis, magma, inferno, cividis, rdbu, grey)\n"),
               view, eo.colormap);
      status = EXIT_USAGE;
      goto done;
    }
  if (eo.colormap == NULL && !curves && !g_str_equal (view, "attention") && !g_str_equal (view, "spe-vs-rpe"))
    c.cmap = NULL;   /* templates: viridis, or the diverging map for signed data */
  if (curves && (eo.color_scale != NULL || eo.gamma != 0.0 || eo.percentile != 0.0))
    {
      fprintf (stderr, _("rpe export %s: --color-scale, --gamma and --percentile are for heatmap views\n"), view);
      status = EXIT_USAGE;
      goto done;
    }
  if (!rpe_cli_color_scale (view, eo.color_scale, eo.gamma, eo.percentile, eo.attention_transform, &c.transform,
                            &c.transform_param))
    {
      status = EXIT_USAGE;
      goto done;
    }
  c.reduce = RPE_HEATMAP_REDUCE_MEAN;
  if (eo.reduce != NULL)
    {
      if (g_str_equal (eo.reduce, "max"))
        c.reduce = RPE_HEATMAP_REDUCE_MAX;
      else if (!g_str_equal (eo.reduce, "mean"))
        {
          fprintf (stderr, _("rpe export %s: --reduce must be mean or max (got '%s')\n"), view, eo.reduce);
          status = EXIT_USAGE;
          goto done;
        }
    }

  if (curves && eo.save_session != NULL)
    {
      fprintf (stderr, _("rpe export %s: --save-session holds the heatmap views (templates, template, attention, "
                         "spe-vs-rpe)\n"), view);
      status = EXIT_USAGE;
      goto done;
    }
  if (!curves && !heatmap_view_reads_its_files (view, &o, &eo, session != NULL, &error))
    {
      fprintf (stderr, _("rpe export %s: %s\n"), view, error->message);
      status = EXIT_USAGE;
      goto done;
    }
  if (curves)
    {
      ok = view_curves (view, forward, &eo, &c, &error);
      if (!ok && error == NULL)
        {
          status = c.exit_code != 0 ? c.exit_code : EXIT_FAILURE_OTHER;
          goto done;
        }
    }
  else
    {
      gint64 *param = NULL, from = 0, to = 0;
      RpeSweepParam sweep_param = RPE_SWEEP_SEED;
      int frames = 1;

      if (c.gif_mode)
        {
          g_auto (GStrv) kv = g_strsplit (eo.sweep, "=", 2);
          g_auto (GStrv) range = kv[0] != NULL && kv[1] != NULL ? g_strsplit (kv[1], ":", 2) : NULL;
          gboolean parsed = FALSE;

          if (kv[0] != NULL && rpe_sweep_param_from_name (kv[0], &sweep_param))
            param = sweep_param == RPE_SWEEP_REALIZATIONS ? &o.draw.realizations
                    : sweep_param == RPE_SWEEP_LENGTH     ? &o.draw.length
                                                          : &o.draw.seed;
          if (param != NULL && range != NULL && range[0] != NULL && range[1] != NULL)
            {
              gint64 lo = param == &o.draw.seed ? 0 : 1;

              parsed = rpe_cli_parse_int ("--sweep", range[0], lo, G_MAXINT32, &from, NULL)
                       && rpe_cli_parse_int ("--sweep", range[1], lo, G_MAXINT32, &to, NULL);
            }
          frames = eo.frames != 0 ? eo.frames : 8;
          if (!parsed)
            {
              fprintf (stderr, _("rpe export %s: --sweep must be realizations=FROM:TO, length=FROM:TO or seed=FROM:TO "
                                 "with whole numbers (>= 1; seeds >= 0), got '%s'\n"), view, eo.sweep);
              status = EXIT_USAGE;
              goto done;
            }
          if (frames < 2 || frames > RPE_GIF_MAX_FRAMES || eo.frame_delay < 0 || eo.frame_delay > 6000)
            {
              fprintf (stderr, _("rpe export %s: --frames must be 2 .. %d and --frame-delay 1 .. 6000 cs\n"), view,
                       RPE_GIF_MAX_FRAMES);
              status = EXIT_USAGE;
              goto done;
            }
        }
      if (eo.save_session != NULL
          && (c.gif_mode || eo.all_heads || o.draw.noise != NULL || o.draw.gate_noise != NULL
              || o.content.queries != NULL || o.content.keys != NULL || o.draw.noise_scheme != NULL
              || rpe_cli_content_is_capture (&o)))
        {
          fprintf (stderr,
                   _("rpe export %s: --save-session holds one figure of the window's parameters: it cannot "
                     "hold --sweep, --all-heads, --noise, --gate-noise, --queries, --keys, "
                     "--noise-scheme or a captured --content\n"),
                   view);
          status = EXIT_USAGE;
          goto done;
        }
      if (session != NULL && o.model.checkpoint == NULL)
        {
          /* the session's own module (edits included), unless --checkpoint overrides it */
          RpeSpeMethod kind =
            o.model.method != NULL && g_str_equal (o.model.method, "conv") ? RPE_SPE_CONV : RPE_SPE_SINE;
          const RpeSpeParams *p = rpe_explorer_state_get_params (session->state, kind);
          RpeStatus st;

          if (p == NULL)
            {
              rpe_set_error (&error, RPE_ERROR_NOT_FOUND, _("the session has no %s module"),
                             kind == RPE_SPE_SINE ? "sine" : "conv");
              goto report;
            }
          st = rpe_spe_params_copy (&c.params, p);
          if (!rpe_cli_status_error (st, "the session's parameters", &error))
            goto report;
          if (o.model.no_gate && c.params.gate != NULL)
            c.kept_gate = g_steal_pointer (&c.params.gate);
        }
      else
        {
          /* a saved session keeps the gate that --no-gate switches off (its --gate switches it on) */
          gboolean no_gate = o.model.no_gate, loaded;

          if (eo.save_session != NULL)
            o.model.no_gate = FALSE;
          gboolean has_method = FALSE, has_spe = TRUE;

          /* ape, lrpe, fastrpb: the checkpoint's trained module when it holds one; beside an SPE
           * module, seeded parameters (said on stderr); neither: refused with what it holds */
          if (eo.attention_method != NULL
              && (g_str_equal (eo.attention_method, "ape") || g_str_equal (eo.attention_method, "lrpe")
                  || g_str_equal (eo.attention_method, "fastrpb")))
            {
              if (!rpe_cli_trained_modules (&o, eo.attention_method, &c.trained, &c.lrpe_trained, &has_method, &has_spe,
                                            &error))
                goto report;
              if (o.model.checkpoint != NULL && o.model.map == NULL && !has_method)
                {
                  if (!has_spe)
                    {
                      rpe_cli_check_method_module (&o, eo.attention_method, FALSE, TRUE, &error);
                      goto report;
                    }
                  if (rpe_cli_content_is_capture (&o))
                    {
                      /* a capture is drawn by the model's own module: seeded parameters on its
                       * queries and keys would not be the attention the model computed */
                      rpe_cli_usage_error (&error,
                                           _("a captured --content is drawn by the model's own module, and %s "
                                             "holds no trained %s module (seeded parameters on captured queries "
                                             "and keys are no model's attention)"),
                                           o.model.checkpoint, eo.attention_method);
                      goto report;
                    }
                  fprintf (stderr,
                           _("rpe export %s: note: %s holds no trained %s module: %s is drawn with seeded "
                             "parameters beside its SPE module\n"),
                           view, o.model.checkpoint, eo.attention_method, eo.attention_method);
                }
            }
          else if (eo.attention_method != NULL && !g_str_equal (eo.attention_method, "spe")
                   && !g_str_equal (eo.attention_method, "exact")
                   && !rpe_cli_check_method_module (&o, eo.attention_method, FALSE, TRUE, &error))
            goto report;
          loaded = !has_spe || rpe_cli_load_params (&o, &c.params, &error);
          o.model.no_gate = no_gate;
          if (!loaded)
            goto report;
          if (no_gate && c.params.gate != NULL)
            c.kept_gate = g_steal_pointer (&c.params.gate);
        }
      c.gated = c.params.gate != NULL;
      for (int k = 0; k < frames; k++)
        {
          if (param != NULL)
            *param = rpe_sweep_value (sweep_param, from, to, (guint) k, (guint) frames);
          if (g_str_equal (view, "templates"))
            ok = view_templates (&c, FALSE, &error);
          else if (g_str_equal (view, "template"))
            ok = view_templates (&c, TRUE, &error);
          else if (g_str_equal (view, "attention"))
            ok = view_attention (&c, FALSE, &error);
          else if (page)
            ok = view_curves_page (&c, &error);
          else
            ok = view_attention (&c, TRUE, &error);
          if (!ok)
            break;
        }
      if (c.gif_mode)
        {
          if (ok && c.gif != NULL)
            {
              ok = rpe_gif_writer_finish (c.gif, &error);
              if (!ok)
                c.exit_code = EXIT_FAILURE_OTHER;
            }
          else
            rpe_gif_writer_abort (c.gif);
          c.gif = NULL;
        }
    }
  if (ok && eo.save_session != NULL)
    {
      ok = save_session (&c, session, &error);
      if (!ok)
        g_prefix_error (&error, "%s: ", eo.save_session);
    }

report:
  if (ok)
    status = 0;
  else
    {
      fprintf (stderr, _("rpe export %s: %s\n"), view, error ? error->message : "failed");
      status = c.exit_code != 0 ? c.exit_code : rpe_cli_exit_code_for_error (error);
    }

done:
  rpe_spe_params_clear (&c.params);
  rpe_free (c.kept_gate);
  rpe_explorer_trained_unref (c.trained);
  rpe_lrpe_trained_free (c.lrpe_trained);
  rpe_cli_own_clear (export_options, &eo);
  rpe_cli_args_clear (&o);
  return status;
}

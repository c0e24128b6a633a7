/* rpe-cli-conv2d.c: `rpe compute template|empirical|codes|encode --grid N1xN2`, 2-D convSPE over
 * an image grid (core/rpe-conv-spe-2d.h); positions row-major, p = i * N2 + j. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <glib/gi18n.h>

#include "rpe-alloc.h"
#include "rpe-conv-spe-2d.h"
#include "rpe-error.h"
#include "rpe-npy.h"

#include "rpe-cli.h"

#define GRID_SLAB_FLOATS ((gsize) 1 << 20)

/* R as given, else 64 (a --noise file's R is checked again when it is read) */
static gsize
grid_realizations (const RpeCliArgs *o)
{
  return o->draw.realizations != RPE_CLI_UNSET && o->draw.realizations > 0 ? (gsize) o->draw.realizations : 64;
}

/* The arrays `what` makes over the grid for H heads of D features with L1 x L2 filters, as dims of
 * floats for rpe_cli_check_budget; returns how many (at most 4).  The template: a slab of rows, the
 * lags and (empirical) the codes and their noise; codes: both codes and the noise; encode: those
 * and the encoded queries and keys. */
static gsize
grid_work_dims (const char       *what,
                const RpeCliArgs *o,
                gsize             H,
                gsize             D,
                gsize             l1,
                gsize             l2,
                gsize             n1,
                gsize             n2,
                gsize (*dims)[4])
{
  gsize    n = n1 * n2, r = grid_realizations (o), k = 0;
  gboolean empirical = g_str_equal (what, "empirical"), encode = g_str_equal (what, "encode");

  if (empirical || g_str_equal (what, "template"))
    {
      memcpy (dims[k++], (gsize[4]) { MAX ((gsize) 1, MIN (n, GRID_SLAB_FLOATS / n)), n, 1, 1 }, sizeof dims[0]);
      memcpy (dims[k++], (gsize[4]) { 2 * n1 - 1, 2 * n2 - 1, 1, 1 }, sizeof dims[0]);
    }
  if (empirical || encode || g_str_equal (what, "codes"))
    {
      memcpy (dims[k++], (gsize[4]) { n, H * D, r, 2 }, sizeof dims[0]);
      memcpy (dims[k++], (gsize[4]) { r, H * D, n1 + 4 * l1, n2 + 4 * l2 }, sizeof dims[0]);
    }
  if (encode)
    memcpy (dims[k++], (gsize[4]) { n, H, r, 2 }, sizeof dims[0]);
  return k;
}

/* 2-D convSPE parameters: a checkpoint's 2-D module, or seeded ones of --heads, --features,
 * --kernel L1 and --kernel-cols L2 (default L1).  Seeded ones are checked against the budget
 * together with what `what` makes next over the N1 x N2 grid, before any is drawn. */
static gboolean
grid_params (const RpeCliArgs *o, const char *what, gsize n1, gsize n2, RpeSpeParams *params, GError **error)
{
  RpeStatus st;
  gsize l1, l2;

  memset (params, 0, sizeof *params);
  if (o->model.checkpoint != NULL)
    {
      if (!rpe_cli_load_params (o, params, error))
        return FALSE;
      if (!rpe_conv_spe_is_2d (params))
        {
          rpe_spe_params_clear (params);
          return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                                _("%s: --grid needs a 2-D convSPE module (filters (H*D, 1, L1, L2)); "
                                  "the module used is 1-D (see rpe info)"),
                                o->model.checkpoint);
        }
      return TRUE;
    }
  if (o->model.method != NULL && !g_str_equal (o->model.method, "conv"))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--grid is 2-D convSPE: --method must be conv"));
  if (o->model.heads < 1 || o->model.heads > 4096 || o->model.features < 1 || o->model.features > (1 << 16)
      || o->model.kernel < 1 || o->model.kernel > 4096 || o->model.kernel_cols < 0 || o->model.kernel_cols > 4096)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          _("--heads must be 1..4096, --features 1..65536, --kernel and --kernel-cols 1..4096"));
  l1 = (gsize) o->model.kernel;
  l2 = o->model.kernel_cols > 0 ? (gsize) o->model.kernel_cols : l1;
  {
    /* the query and key filters and the gate, and what is made from them: one sum */
    gsize H = (gsize) o->model.heads, D = (gsize) o->model.features,
          dims[6][4] = {
            { H, D, l1 * l2, 2 },
            { H, D, 1, 1 },
          };
    gsize k = 2 + grid_work_dims (what, o, H, D, l1, l2, n1, n2, dims + 2);

    if (!rpe_cli_check_budget (g_str_equal (what, "empirical") ? "template" : what, k, (const gsize (*)[4]) dims,
                               error))
      return FALSE;
  }
  st = rpe_conv_spe_2d_params_init (params, (gsize) o->model.heads, (gsize) o->model.features, l1, l2, TRUE);
  if (st == RPE_OK)
    st = rpe_conv_spe_2d_params_random (params, (uint64_t) o->draw.seed);
  if (st != RPE_OK)
    {
      rpe_spe_params_clear (params);
      return rpe_cli_status_error (st, "random 2-D filters", error);
    }
  if (o->model.no_gate)
    g_clear_pointer (&params->gate, rpe_free);
  return TRUE;
}

/* Codes Qbar, Kbar (N, H, D, R) from --noise (R, H*D, N1 + 4 L1, N2 + 4 L2) or the seeded draw;
 * gated (with --gate-noise (H, D, R) or the seeded eps) when `gated`. */
static gboolean
grid_codes (const RpeCliArgs   *o,
            const RpeSpeParams *p,
            gsize               n1,
            gsize               n2,
            gboolean            gated,
            RpeCliCodes        *codes,
            GError            **error)
{
  gsize H = p->n_heads, D = p->n_features, hd = H * D, n = n1 * n2, r, z1, z2, count;
  g_autoptr (RpeTensor) zt = NULL;
  g_autoptr (RpeTensor) et = NULL;
  float *z = NULL, *eps = NULL;
  gboolean ok = FALSE;
  RpeStatus st;

  memset (codes, 0, sizeof *codes);
  z1 = n1 + 4 * p->kernel;
  z2 = n2 + 4 * p->kernel_cols;
  r = o->draw.realizations != RPE_CLI_UNSET ? (gsize) MAX (o->draw.realizations, 0) : 0;
  if (o->draw.noise != NULL)
    {
      zt = rpe_cli_read_array (o->draw.noise, 4, "the code noise", error);
      if (zt == NULL)
        {
          g_prefix_error (error, _("2-D conv noise is (R, H*D, N1+4L1, N2+4L2) = (R, %zu, %zu, %zu): "),
                          (size_t) hd, (size_t) z1, (size_t) z2);
          return FALSE;
        }
      if (zt->shape[1] != hd || zt->shape[2] != z1 || zt->shape[3] != z2 || zt->shape[0] == 0)
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                              _("%s: 2-D conv noise must have shape (R, %zu, %zu, %zu) = (R, H*D, N1+4L1, N2+4L2), "
                                "got (%zu, %zu, %zu, %zu)"),
                              o->draw.noise, (size_t) hd, (size_t) z1, (size_t) z2, (size_t) zt->shape[0],
                              (size_t) zt->shape[1], (size_t) zt->shape[2], (size_t) zt->shape[3]);
      if (r != 0 && r != zt->shape[0])
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                              _("--realizations %zu does not match the noise's R = %zu"), (size_t) r,
                              (size_t) zt->shape[0]);
      r = zt->shape[0];
    }
  if (r == 0)
    r = o->draw.realizations != RPE_CLI_UNSET ? 0 : grid_realizations (o);
  if (r == 0 || r > ((gsize) 1 << 24))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--realizations must be between 1 and %d"), 1 << 24);
  {
    const gsize dims[3][4] = { { n, hd, r, 1 }, { n, hd, r, 1 }, { r, hd, z1, z2 } };
    if (!rpe_cli_check_budget ("2-D codes and their noise", zt != NULL ? 2 : 3, dims, error))
      return FALSE;
  }
  st = rpe_conv_spe_2d_noise_size (p, n1, n2, r, &count);
  if (!rpe_cli_status_error (st, "2-D noise", error))
    return FALSE;
  if (zt == NULL)
    {
      if ((z = rpe_alloc (count, sizeof (float), &st)) == NULL
          || (st = rpe_conv_spe_2d_noise_fill (p, n1, n2, r, (uint64_t) o->draw.seed, z)) != RPE_OK)
        {
          rpe_cli_status_error (st, "2-D noise", error);
          goto out;
        }
    }
  if ((codes->qbar = rpe_alloc (n * hd * r, sizeof (float), &st)) == NULL
      || (codes->kbar = rpe_alloc (n * hd * r, sizeof (float), &st)) == NULL)
    {
      rpe_cli_status_error (st, "2-D codes", error);
      goto out;
    }
  codes->n = n;
  codes->r = r;
  st = rpe_conv_spe_2d_codes (p, n1, n2, r, zt != NULL ? zt->data : z, codes->qbar, codes->kbar,
                              RPE_CONV_SPE_PATH_AUTO, NULL);
  if (!rpe_cli_status_error (st, "2-D codes", error))
    goto out;
  if (gated && p->gate != NULL)
    {
      if (o->draw.gate_noise != NULL)
        {
          et = rpe_cli_read_array (o->draw.gate_noise, 3, "the gate noise", error);
          if (et == NULL)
            goto out;
          if (et->shape[0] != H || et->shape[1] != D || et->shape[2] != r)
            {
              rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                             _("%s: gate noise must have shape (%zu, %zu, %zu) = (H, D, R)"), o->draw.gate_noise,
                             (size_t) H, (size_t) D, (size_t) r);
              goto out;
            }
        }
      else
        {
          if ((eps = rpe_alloc (hd * r, sizeof (float), &st)) == NULL
              || (st = rpe_spe_gate_noise_fill (p, r, (uint64_t) o->draw.seed, eps)) != RPE_OK)
            {
              rpe_cli_status_error (st, "gate noise", error);
              goto out;
            }
        }
      st = rpe_conv_spe_2d_gate_codes (p, n1, n2, r, et != NULL ? et->data : eps, codes->qbar, codes->kbar);
      if (!rpe_cli_status_error (st, "gating", error))
        goto out;
    }
  ok = TRUE;

out:
  rpe_free (z);
  rpe_free (eps);
  if (!ok)
    rpe_cli_codes_clear (codes);
  return ok;
}

static gboolean
grid_template (const RpeCliArgs   *o,
               const RpeSpeParams *p,
               gsize               n1,
               gsize               n2,
               gboolean            empirical,
               gboolean            gated,
               int                *exit_code,
               GError            **error)
{
  gsize H = p->n_heads, D = p->n_features, n = n1 * n2, rows, h0 = 0, h1 = H, d0 = 0, d1 = D;
  RpeCliCodes codes = { 0 };
  RpeNpyWriter *w = NULL;
  float *slab = NULL, *lags = NULL;
  gboolean ok = FALSE;
  RpeStatus st = RPE_OK;

  if (o->model.head >= (int) H || o->model.feature >= (int) D || (o->model.head >= 0) != (o->model.feature >= 0))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          _("--head (0..%zu) and --feature (0..%zu) go together"), (size_t) H - 1, (size_t) D - 1);
  if (o->model.head >= 0)
    {
      h0 = (gsize) o->model.head, h1 = h0 + 1;
      d0 = (gsize) o->model.feature, d1 = d0 + 1;
    }
  rows = MAX ((gsize) 1, MIN (n, GRID_SLAB_FLOATS / n));
  {
    /* the slab, the lags and (empirical) the codes and their noise, together, before any of them
     * is made */
    gsize dims[4][4];
    gsize k = grid_work_dims (empirical ? "empirical" : "template", o, H, D, p->kernel, p->kernel_cols, n1, n2, dims);

    if (!rpe_cli_check_budget ("template", k, (const gsize (*)[4]) dims, error))
      goto out;
  }
  /* the output first: a disk that cannot hold it refuses before the codes are drawn */
  if (o->model.head >= 0)
    w = rpe_npy_writer_new (o->output.out, 2, (gsize[]) { n, n }, o->output.f64, error);
  else
    w = rpe_npy_writer_new (o->output.out, 4, (gsize[]) { H, D, n, n }, o->output.f64, error);
  if (w == NULL)
    {
      *exit_code = 1;
      goto out;
    }
  if ((slab = rpe_alloc (rows * n, sizeof (float), &st)) == NULL
      || (lags = rpe_alloc ((2 * n1 - 1) * (2 * n2 - 1), sizeof (float), &st)) == NULL)
    {
      rpe_cli_status_error (st, "template", error);
      goto out;
    }
  if (empirical && !grid_codes (o, p, n1, n2, gated, &codes, error))
    goto out;
  for (gsize h = h0; h < h1; h++)
    for (gsize d = d0; d < d1; d++)
      {
        if (!empirical)
          {
            st = rpe_conv_spe_2d_template_lags (p, h, d, n1, n2, gated, lags);
            if (!rpe_cli_status_error (st, "template", error))
              goto out;
          }
        for (gsize m0 = 0; m0 < n; m0 += rows)
          {
            gsize b = MIN (rows, n - m0);

            if (empirical)
              st = rpe_spe_empirical_template_rows (n, H, D, codes.r, codes.qbar, codes.kbar, h, d, m0, b, slab);
            else
              st = rpe_conv_spe_2d_template_rows (lags, n1, n2, m0, b, slab);
            if (!rpe_cli_status_error (st, "template", error))
              goto out;
            if (!rpe_npy_writer_append (w, slab, b * n, error))
              {
                *exit_code = 1;
                goto out;
              }
          }
      }
  ok = rpe_npy_writer_commit (w, error);
  w = NULL;
  if (!ok)
    *exit_code = 1;

out:
  rpe_npy_writer_abort (w);
  rpe_cli_codes_clear (&codes);
  rpe_free (slab);
  rpe_free (lags);
  return ok;
}

gboolean
rpe_cli_compute_grid (const char *what, const RpeCliArgs *o, int *exit_code, GError **error)
{
  RpeSpeParams p;
  RpeCliCodes codes = { 0 };
  gsize n1 = 0, n2 = 0, n;
  gboolean gated, ok = FALSE;

  if (!rpe_cli_parse_grid ("--grid", o->model.grid, 1 << 20, &n1, &n2, error))
    return FALSE;
  n = n1 * n2;
  if (o->draw.length != RPE_CLI_UNSET && (gsize) o->draw.length != n)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("--length must be N1*N2 = %zu with --grid"), (size_t) n);
  if (!grid_params (o, what, n1, n2, &p, error))
    return FALSE;
  gated = p.gate != NULL;

  if (g_str_equal (what, "template") || g_str_equal (what, "empirical"))
    ok = grid_template (o, &p, n1, n2, g_str_equal (what, "empirical"), gated, exit_code, error);
  else if (g_str_equal (what, "codes"))
    {
      if (o->output.out_keys == NULL)
        rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("codes writes two arrays: give --out-keys K.npy too"));
      else if (grid_codes (o, &p, n1, n2, FALSE, &codes, error))
        {
          gsize shape[4] = { n, p.n_heads, p.n_features, codes.r };

          ok = rpe_cli_write (o, o->output.out, codes.qbar, 4, shape, exit_code, error)
               && rpe_cli_write (o, o->output.out_keys, codes.kbar, 4, shape, exit_code, error);
        }
    }
  else if (g_str_equal (what, "encode"))
    {
      RpeCliArgs   o2 = *o;
      RpeCliInputs in = { 0 };
      RpeSpeParams flat = p;
      float *qhat = NULL, *khat = NULL;
      RpeStatus st;

      o2.draw.length = (gint64) n;
      flat.kernel = p.kernel * p.kernel_cols;   /* the inputs only need H and D */
      flat.kernel_cols = 0;
      if (rpe_cli_load_inputs (&o2, &flat, FALSE, &in, error))
        {
          if (in.n != n)
            rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("%s: the queries have %zu positions, the grid %zu"),
                           o->content.queries, (size_t) in.n, (size_t) n);
          else if (grid_codes (o, &p, n1, n2, gated, &codes, error))
            {
              gsize shape[3] = { n, p.n_heads, codes.r };

              if ((qhat = rpe_alloc (n * p.n_heads * codes.r, sizeof (float), &st)) == NULL
                  || (khat = rpe_alloc (n * p.n_heads * codes.r, sizeof (float), &st)) == NULL)
                rpe_cli_status_error (st, "encoded queries", error);
              else if (rpe_cli_status_error (rpe_spe_encode (n, p.n_heads, p.n_features, codes.r, codes.qbar,
                                                             codes.kbar, in.q, in.k, qhat, khat, NULL),
                                             "encoding", error))
                ok = rpe_cli_write (o, o->output.out, qhat, 3, shape, exit_code, error)
                     && (o->output.out_keys == NULL
                         || rpe_cli_write (o, o->output.out_keys, khat, 3, shape, exit_code, error));
            }
        }
      rpe_free (qhat);
      rpe_free (khat);
      rpe_cli_inputs_clear (&in);
    }
  else
    rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                   _("--grid works with template, empirical, codes and encode (2-D convSPE) and fastrpb"));
  rpe_cli_codes_clear (&codes);
  rpe_spe_params_clear (&p);
  return ok;
}

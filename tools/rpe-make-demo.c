/* rpe-make-demo: writes the embedded demo checkpoint, deterministically.
 *
 * A small "trained-looking" model in the PyTorch SPE naming (docs/math.md, section 10),
 * H = 4 heads, D = 16 features:
 *   sine.spe.freqs|offsets|gains (4, 16, 5)     sineSPE, K = 5
 *   sine.spe_filters.{0,1}.gate  (4, 16)
 *   conv.spe.conv_q.weight|conv_k.weight (64, 1, 32)   convSPE, L = 32
 *   conv.spe_filters.{0,1}.gate  (4, 16)
 * Values are stored RAW, i.e. through the inverse of the as-coded transforms:
 * freqs = logit(2 f), gains = softplus^-1(lambda), gate = logit(g).  As in the
 * reference, conv_k.weight holds the QUERY filter and conv_q.weight the KEY filter.
 * Everything is a closed-form function of the indices: no randomness. */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "rpe-safetensors.h"

#define H 4
#define D 16
#define K 5
#define L 32
#define N_LAYERS 2

static double
logit (double p)
{
  return log (p / (1.0 - p));
}

/* softplus^-1(y) = log(e^y - 1), written to stay accurate for small and large y */
static double
softplus_inv (double y)
{
  return y + log (-expm1 (-y));
}

static RpeTensor *
new_tensor (const char *name,
            gsize       ndim,
            gsize       d0,
            gsize       d1,
            gsize       d2,
            GError    **error)
{
  gsize shape[3] = { d0, d1, d2 };

  return rpe_tensor_new (name, ndim, shape, error);
}

static gboolean
add (RpeTensorSet *set,
     RpeTensor    *t,
     GError      **error)
{
  return t != NULL && rpe_tensor_set_add (set, t, error);
}

/* smooth bump (raised cosine times a Gaussian) centred at mu with width sigma */
static double
bump (double j,
      double mu,
      double sigma)
{
  double x = (j - mu) / sigma;

  return exp (-0.5 * x * x) * (1.0 + 0.25 * cos (0.7 * x));
}

static gboolean
make_demo (const char *path,
           GError    **error)
{
  g_autoptr (RpeTensorSet) set = rpe_tensor_set_new ();
  RpeTensor *freqs, *offsets, *gains, *conv_q, *conv_k;
  /* base frequencies (cycles per position): periods from ~200 down to ~6 */
  static const double base_f[K] = { 0.005, 0.014, 0.035, 0.075, 0.16 };

  freqs = new_tensor ("sine.spe.freqs", 3, H, D, K, error);
  if (!add (set, freqs, error))
    return FALSE;
  offsets = new_tensor ("sine.spe.offsets", 3, H, D, K, error);
  if (!add (set, offsets, error))
    return FALSE;
  gains = new_tensor ("sine.spe.gains", 3, H, D, K, error);
  if (!add (set, gains, error))
    return FALSE;
  for (int h = 0; h < H; h++)
    for (int d = 0; d < D; d++)
      for (int k = 0; k < K; k++)
        {
          gsize i = ((gsize) h * D + (gsize) d) * K + (gsize) k;
          /* spread across features and heads, kept well inside (0, 0.5) */
          double f = base_f[k] * (0.6 + 0.8 * d / (D - 1.0)) * (1.0 + 0.15 * h);
          double theta = 0.3 * sin (1.7 * h + 0.9 * d + 2.3 * k);
          /* gains decay with the frequency index; some features favour the low ones more */
          double lambda = 1.4 * exp (-(0.35 + 0.25 * ((d + h) % 4) / 3.0) * k) * (1.0 + 0.15 * cos (0.5 * d + h));

          f = MIN (f, 0.45);
          freqs->data[i] = (float) logit (2.0 * f);
          offsets->data[i] = (float) theta;
          gains->data[i] = (float) softplus_inv (lambda);
        }

  for (int layer = 0; layer < N_LAYERS; layer++)
    {
      g_autofree char *name = g_strdup_printf ("sine.spe_filters.%d.gate", layer);
      RpeTensor *gate = new_tensor (name, 2, H, D, 1, error);

      if (!add (set, gate, error))
        return FALSE;
      for (int h = 0; h < H; h++)
        for (int d = 0; d < D; d++)
          {
            /* g in [0.05, 0.6]: later layers and higher heads lean more on the gate */
            double u = 0.5 + 0.5 * sin (0.8 * d + 1.3 * h + 2.1 * layer);
            double g = 0.05 + 0.55 * u * (0.6 + 0.4 * layer);
            gate->data[h * D + d] = (float) logit (g);
          }
    }

  conv_q = new_tensor ("conv.spe.conv_q.weight", 3, H * D, 1, L, error);
  if (!add (set, conv_q, error))
    return FALSE;
  conv_k = new_tensor ("conv.spe.conv_k.weight", 3, H * D, 1, L, error);
  if (!add (set, conv_k, error))
    return FALSE;
  for (int h = 0; h < H; h++)
    for (int d = 0; d < D; d++)
      {
        int c = h * D + d;
        /* query and key bumps of different widths and centres: the template
         * P(tau) = sum_j wq[j] wk[j + tau] is a band around tau = mu_k - mu_q,
         * wider for later heads and slightly asymmetric */
        double sq = 1.5 + 0.8 * h + 0.15 * (d % 4);
        double sk = 2.5 + 0.5 * h + 0.3 * (d % 3);
        double mq = 12.0 + (d % 5) - 0.5 * h;
        double mk = 14.0 + 0.5 * (d % 3) + 0.25 * h;
        double nq = 0, nk = 0;

        for (int j = 0; j < L; j++)
          {
            double wq = bump (j, mq, sq), wk = bump (j, mk, sk);
            nq += wq * wq;
            nk += wk * wk;
          }
        for (int j = 0; j < L; j++)
          {
            /* unit-norm filters, so the template peaks near 1 */
            double wq = bump (j, mq, sq) / sqrt (nq), wk = bump (j, mk, sk) / sqrt (nk);
            conv_k->data[c * L + j] = (float) wq;   /* the reference's swap: conv_k = query */
            conv_q->data[c * L + j] = (float) wk;
          }
      }

  for (int layer = 0; layer < N_LAYERS; layer++)
    {
      g_autofree char *name = g_strdup_printf ("conv.spe_filters.%d.gate", layer);
      RpeTensor *gate = new_tensor (name, 2, H, D, 1, error);

      if (!add (set, gate, error))
        return FALSE;
      for (int h = 0; h < H; h++)
        for (int d = 0; d < D; d++)
          {
            double u = 0.5 + 0.5 * cos (0.6 * d - 1.1 * h + 1.7 * layer);
            double g = 0.05 + 0.55 * u * (0.5 + 0.5 * layer);
            gate->data[h * D + d] = (float) logit (g);
          }
    }

  return rpe_safetensors_write (path, set, error);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr (GError) error = NULL;

  if (argc != 2)
    {
      fprintf (stderr, "usage: %s OUTPUT.safetensors\n", argv[0]);
      return 2;
    }
  if (!make_demo (argv[1], &error))
    {
      fprintf (stderr, "rpe-make-demo: %s\n", error != NULL ? error->message : "failed");
      return 1;
    }
  return 0;
}

/* test-core-lrpe.c: LRPE against dense double-precision references.
 *
 * The references build P (d' x D) and Lambda(s) (d' x d') as explicit complex
 * matrices from their definitions (docs/math.md, section 7), in double, inside the
 * test; only the random draws (Householder v, permutations) are read back from
 * the object.  d' = D//2 + 1 for the Fourier P (rfft), else D.
 *
 * /core/lrpe/reference-forward is a second, independent reference: a plain
 * double re-implementation of the reference module's forward (Urpe) step by
 * step as docs/math.md, section 7 describes it (rfft, the x_half trick, the
 * permutation buffer built by repeated gathers, learned theta and v).
 */
#include "config.h"

#include <complex.h>
#include <glib.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "rpe-lrpe.h"
#include "rpe-test-utils.h"

typedef double complex cplx;

static const RpeLrpeP all_p[] = {
  RPE_LRPE_P_IDENTITY, RPE_LRPE_P_HOUSEHOLDER, RPE_LRPE_P_PERMUTATION,
  RPE_LRPE_P_ODD_EVEN, RPE_LRPE_P_FOURIER, RPE_LRPE_P_DCT,
};
static const RpeLrpeLambda all_lambda[] = {
  RPE_LRPE_LAMBDA_ROTATION, RPE_LRPE_LAMBDA_MIXED,
  RPE_LRPE_LAMBDA_COMPLEX_EXP, RPE_LRPE_LAMBDA_PERMUTATION,
};

static RpeLrpe *
make (size_t d, size_t n, RpeLrpeP p, RpeLrpeLambda lam, RpeLrpeTheta th, uint64_t seed)
{
  RpeLrpeConfig config = { 0 };
  RpeStatus st;
  RpeLrpe *l;

  config.dim = d;
  config.length = n;
  config.p = p;
  config.lambda = lam;
  config.theta_kind = th;
  config.seed = seed;
  l = rpe_lrpe_new (&config, &st);
  g_assert_cmpint (st, ==, RPE_OK);
  g_assert_nonnull (l);
  return l;
}

/* e, and the theta table written from docs/math.md / rpe-lrpe.h independently. */
static size_t
ref_e (RpeLrpeLambda lam, size_t d)
{
  if (lam == RPE_LRPE_LAMBDA_PERMUTATION)
    return d;
  if (lam == RPE_LRPE_LAMBDA_MIXED)
    {
      size_t e = d / 2;
      return e % 2 ? e + 1 : e;
    }
  if (lam == RPE_LRPE_LAMBDA_COMPLEX_EXP)
    return d;   /* every component, D itself when D is odd */
  return d % 2 ? d - 1 : d;
}

/* d' */
static size_t
ref_pd (RpeLrpeP p, size_t d)
{
  return p == RPE_LRPE_P_FOURIER ? d / 2 + 1 : d;
}

static double
ref_theta (RpeLrpeLambda lam, RpeLrpeTheta th, size_t d, size_t n, size_t idx)
{
  double e = (double) ref_e (lam, d);

  if (lam == RPE_LRPE_LAMBDA_COMPLEX_EXP)
    {
      /* one frequency per dim j < e */
      double j = (double) idx;
      switch (th)
        {
        case RPE_LRPE_THETA_A: return pow (10000.0, -2.0 * j / e);
        case RPE_LRPE_THETA_B: return M_PI / 2 / (double) n / e * (j + 1);
        default: return M_PI / 2 / (double) n / (j + 1);
        }
    }
  else
    {
      /* k = 0..e/2-1 for type a, k = 1..e/2 for types b, c */
      switch (th)
        {
        case RPE_LRPE_THETA_A: return pow (10000.0, -2.0 * (double) idx / e);
        case RPE_LRPE_THETA_B: return M_PI / 2 / (double) n / (e / 2) * (double) (idx + 1);
        default: return M_PI / 2 / (double) n / (double) (idx + 1);
        }
    }
}

/* Dense P (d' x D), row-major. */
static void
build_p (const RpeLrpe *l, RpeLrpeP kind, size_t d, cplx *p)
{
  memset (p, 0, ref_pd (kind, d) * d * sizeof (cplx));
  switch (kind)
    {
    case RPE_LRPE_P_IDENTITY:
      for (size_t j = 0; j < d; j++)
        p[j * d + j] = 1;
      break;
    case RPE_LRPE_P_HOUSEHOLDER:
      {
        double *v = g_new (double, d), norm = 0;

        g_assert_cmpint (rpe_lrpe_get_householder_v (l, v), ==, RPE_OK);
        for (size_t j = 0; j < d; j++)
          norm += v[j] * v[j];
        g_assert_cmpfloat_with_epsilon (norm, 1.0, 1e-12);   /* drawn: normalised once */
        for (size_t a = 0; a < d; a++)
          for (size_t b = 0; b < d; b++)
            p[a * d + b] = (a == b ? 1.0 : 0.0) - 2.0 * v[a] * v[b];
        g_free (v);
      }
      break;
    case RPE_LRPE_P_PERMUTATION:
      {
        uint32_t *perm = g_new (uint32_t, d);
        gboolean *seen = g_new0 (gboolean, d);

        g_assert_cmpint (rpe_lrpe_get_p_perm (l, perm), ==, RPE_OK);
        for (size_t j = 0; j < d; j++)
          {
            g_assert_cmpuint (perm[j], <, d);
            g_assert_false (seen[perm[j]]);
            seen[perm[j]] = TRUE;
            p[j * d + perm[j]] = 1;    /* out[j] = x[perm[j]] */
          }
        g_free (perm);
        g_free (seen);
      }
      break;
    case RPE_LRPE_P_ODD_EVEN:
      /* out[2k] = x[k], out[2k+1] = x[ceil(D/2) + k] */
      for (size_t k = 0; 2 * k < d; k++)
        p[(2 * k) * d + k] = 1;
      for (size_t k = 0; 2 * k + 1 < d; k++)
        p[(2 * k + 1) * d + (d + 1) / 2 + k] = 1;
      break;
    case RPE_LRPE_P_FOURIER:
      /* rfft, norm = "ortho": rows k = 0..D//2 */
      for (size_t k = 0; k <= d / 2; k++)
        for (size_t j = 0; j < d; j++)
          p[k * d + j] = cexp (-2.0 * M_PI * I * (double) (j * k) / (double) d) / sqrt ((double) d);
      break;
    case RPE_LRPE_P_DCT:
      for (size_t k = 0; k < d; k++)
        for (size_t j = 0; j < d; j++)
          p[k * d + j] = sqrt ((k == 0 ? 1.0 : 2.0) / (double) d)
                         * cos (M_PI * (double) k * (2.0 * (double) j + 1.0) / (2.0 * (double) d));
      break;
    }
}

/* Pi^s applied to x by |s| repeated gathers (out[j] = x[pi[j]], or the
 * inverse scatter for s < 0). */
static void
perm_power_repeated (const uint32_t *pi, size_t d, long s, const cplx *x, cplx *out)
{
  cplx *cur = g_memdup2 (x, d * sizeof (cplx)), *nxt = g_new (cplx, d);

  for (long r = 0; r < labs (s); r++)
    {
      for (size_t j = 0; j < d; j++)
        {
          if (s > 0)
            nxt[j] = cur[pi[j]];
          else
            nxt[pi[j]] = cur[j];
        }
      memcpy (cur, nxt, d * sizeof (cplx));
    }
  memcpy (out, cur, d * sizeof (cplx));
  g_free (cur);
  g_free (nxt);
}

/* Dense Lambda(s) (D x D). */
static void
build_lambda (const RpeLrpe *l, RpeLrpeLambda lam, RpeLrpeTheta th, size_t d, size_t n,
              long s, cplx *m)
{
  size_t e = ref_e (lam, d);

  memset (m, 0, d * d * sizeof (cplx));
  switch (lam)
    {
    case RPE_LRPE_LAMBDA_ROTATION:
    case RPE_LRPE_LAMBDA_MIXED:
      for (size_t k = 0; k < e / 2; k++)
        {
          double a = (double) s * ref_theta (lam, th, d, n, k);
          size_t i0 = 2 * k, i1 = 2 * k + 1;

          /* x cos + (-x1, x0) sin: [[c, -s], [s, c]] */
          m[i0 * d + i0] = cos (a);
          m[i0 * d + i1] = -sin (a);
          m[i1 * d + i0] = sin (a);
          m[i1 * d + i1] = cos (a);
        }
      for (size_t j = e; j < d; j++)
        m[j * d + j] = 1;
      break;
    case RPE_LRPE_LAMBDA_COMPLEX_EXP:
      for (size_t j = 0; j < d; j++)
        m[j * d + j] = j < e ? cexp (I * (double) s * ref_theta (lam, th, d, n, j)) : 1.0;
      break;
    case RPE_LRPE_LAMBDA_PERMUTATION:
      {
        uint32_t *pi = g_new (uint32_t, d);
        cplx *col = g_new0 (cplx, d), *out = g_new (cplx, d);

        g_assert_cmpint (rpe_lrpe_get_lambda_perm (l, pi), ==, RPE_OK);
        for (size_t j = 0; j < d; j++)
          {
            memset (col, 0, d * sizeof (cplx));
            col[j] = 1;
            perm_power_repeated (pi, d, s, col, out);
            for (size_t r = 0; r < d; r++)
              m[r * d + j] = out[r];
          }
        g_free (pi);
        g_free (col);
        g_free (out);
      }
      break;
    }
}

static void
matvec2 (const cplx *m, const cplx *x, size_t rows, size_t cols, cplx *y)
{
  for (size_t r = 0; r < rows; r++)
    {
      cplx acc = 0;
      for (size_t c = 0; c < cols; c++)
        acc += m[r * cols + c] * x[c];
      y[r] = acc;
    }
}

static void
matvec (const cplx *m, const cplx *x, size_t d, cplx *y)
{
  matvec2 (m, x, d, d, y);
}

/* Encode one D-vector at position s; return it as d' complex values. */
static void
encode_one (const RpeLrpe *l, long s, const float *x, cplx *out)
{
  size_t d = rpe_lrpe_components (l), w = rpe_lrpe_out_width (l);
  float *buf = g_new (float, w);

  g_assert_cmpint (rpe_lrpe_encode (l, 1, 1, s, x, buf, NULL), ==, RPE_OK);
  for (size_t j = 0; j < d; j++)
    out[j] = w == 2 * d ? buf[j] + I * buf[d + j] : buf[j];
  g_free (buf);
}

static void
random_vec (GRand *rand, float *x, size_t d)
{
  for (size_t j = 0; j < d; j++)
    x[j] = (float) g_rand_double_range (rand, -1, 1);
}

static void
test_identity (void)
{
  const size_t dims[] = { 1, 2, 3, 5, 8, 16 };
  const long pos[][2] = { { 0, 0 }, { 3, 10 }, { 10, 3 }, { -5, 17 }, { 1000, -999 }, { 12345, 12300 } };
  const size_t n = 50;
  GRand *rand = g_rand_new_with_seed (42);
  double worst_enc = 0, worst_id = 0;
  unsigned combos = 0;

  for (size_t di = 0; di < G_N_ELEMENTS (dims); di++)
    for (size_t pi = 0; pi < G_N_ELEMENTS (all_p); pi++)
      for (size_t li = 0; li < G_N_ELEMENTS (all_lambda); li++)
        for (int th = RPE_LRPE_THETA_A; th <= RPE_LRPE_THETA_C; th++)
          {
            size_t d = dims[di], pd = ref_pd (all_p[pi], dims[di]);
            RpeLrpeLambda lam = all_lambda[li];
            RpeLrpe *l;
            cplx *pm = g_new (cplx, pd * d), *lm = g_new (cplx, pd * pd);
            cplx *pq = g_new (cplx, pd), *pk = g_new (cplx, pd), *tmp = g_new (cplx, pd);
            cplx *eq = g_new (cplx, pd), *ek = g_new (cplx, pd);
            float *q = g_new (float, d), *k = g_new (float, d);

            if (lam == RPE_LRPE_LAMBDA_PERMUTATION && th != RPE_LRPE_THETA_A)
              goto next;   /* no theta */
            l = make (d, n, all_p[pi], lam, th, 1000 + combos);
            combos++;
            g_assert_cmpuint (rpe_lrpe_out_width (l), ==,
                              (all_p[pi] == RPE_LRPE_P_FOURIER || lam == RPE_LRPE_LAMBDA_COMPLEX_EXP) ? 2 * pd : d);

            /* the theta table follows the formulas */
            if (lam != RPE_LRPE_LAMBDA_PERMUTATION && rpe_lrpe_n_theta (l) > 0)
              {
                double *t = g_new (double, rpe_lrpe_n_theta (l));

                g_assert_cmpuint (rpe_lrpe_n_theta (l), ==,
                                  lam == RPE_LRPE_LAMBDA_COMPLEX_EXP ? ref_e (lam, pd) : ref_e (lam, pd) / 2);
                g_assert_cmpint (rpe_lrpe_get_theta (l, t), ==, RPE_OK);
                for (size_t j = 0; j < rpe_lrpe_n_theta (l); j++)
                  g_assert_cmpfloat_with_epsilon (t[j], ref_theta (lam, th, pd, n, j), 1e-15);
                g_free (t);
              }

            build_p (l, all_p[pi], d, pm);
            for (size_t pp = 0; pp < G_N_ELEMENTS (pos); pp++)
              {
                long s = pos[pp][0], t = pos[pp][1];
                cplx x[64], lhs = 0, rhs = 0;
                double nq = 0, nk = 0, err;

                random_vec (rand, q, d);
                random_vec (rand, k, d);
                for (size_t j = 0; j < d; j++)
                  {
                    nq += (double) q[j] * q[j];
                    nk += (double) k[j] * k[j];
                  }
                nq = sqrt (nq);
                nk = sqrt (nk);

                /* the encoding itself: Lambda(s) P q */
                encode_one (l, s, q, eq);
                encode_one (l, t, k, ek);
                for (size_t j = 0; j < d; j++)
                  x[j] = q[j];
                matvec2 (pm, x, pd, d, pq);
                build_lambda (l, lam, th, pd, n, s, lm);
                matvec (lm, pq, pd, tmp);
                for (size_t j = 0; j < pd; j++)
                  {
                    err = cabs (eq[j] - tmp[j]) / nq;
                    worst_enc = MAX (worst_enc, err);
                    g_assert_cmpfloat (err, <, 1e-5);
                  }

                /* (Lambda(s) P q)^H (Lambda(t) P k) = q^H P^H Lambda(t - s) P k */
                for (size_t j = 0; j < pd; j++)
                  lhs += conj (eq[j]) * ek[j];
                for (size_t j = 0; j < d; j++)
                  x[j] = k[j];
                matvec2 (pm, x, pd, d, pk);
                build_lambda (l, lam, th, pd, n, t - s, lm);
                matvec (lm, pk, pd, tmp);
                for (size_t j = 0; j < pd; j++)
                  rhs += conj (pq[j]) * tmp[j];
                err = cabs (lhs - rhs) / (nq * nk);
                worst_id = MAX (worst_id, err);
                if (err >= 1e-5)
                  g_test_message ("D=%zu P=%d L=%d th=%d s=%ld t=%ld err=%g", d, all_p[pi], lam, th, s, t, err);
                g_assert_cmpfloat (err, <, 1e-5);
              }
            rpe_lrpe_free (l);
          next:
            g_free (pm);
            g_free (lm);
            g_free (pq);
            g_free (pk);
            g_free (tmp);
            g_free (eq);
            g_free (ek);
            g_free (q);
            g_free (k);
          }
  g_test_message ("%u combinations; worst encode error %.3g, worst identity error %.3g",
                  combos, worst_enc, worst_id);
  g_rand_free (rand);
}

/* ---- an independent re-implementation of the reference module's forward ---- */

typedef struct
{
  RpeLrpeP       p;
  RpeLrpeLambda  lam;
  RpeLrpeTheta   th;
  size_t         d;
  const double  *theta;      /* learned theta or NULL */
  size_t         n_theta;
  const double  *v;          /* Householder v (D) */
  gboolean       v_learned;
  const int64_t *table;      /* permutation buffer T (L x d') */
} Urpe;

/* out (L x d' complex) = Lambda(s) P x[s] for s = 0..L-1, x (L x D), as the
 * reference forward computes it: P first, then the core transform with
 * positions arange (L) and theta types b/c from the input length L. */
static void
urpe_forward (const Urpe *u, size_t len, const float *x, cplx *out)
{
  size_t d = u->d, pd = ref_pd (u->p, d), e;
  cplx *z = g_new (cplx, pd);
  double *th2 = g_new0 (double, pd);

  for (size_t s = 0; s < len; s++)
    {
      const float *xs = x + s * d;
      cplx *o = out + s * pd;

      /* P */
      switch (u->p)
        {
        case RPE_LRPE_P_IDENTITY:
          for (size_t j = 0; j < d; j++)
            z[j] = xs[j];
          break;
        case RPE_LRPE_P_DCT:
          for (size_t k = 0; k < d; k++)
            {
              double acc = 0;

              for (size_t j = 0; j < d; j++)
                acc += xs[j] * cos (M_PI * (double) k * (2.0 * (double) j + 1.0) / (2.0 * (double) d));
              z[k] = acc * sqrt ((k == 0 ? 1.0 : 2.0) / (double) d);
            }
          break;
        case RPE_LRPE_P_HOUSEHOLDER:
          {
            double norm = 0, scale, dot = 0;

            for (size_t j = 0; j < d; j++)
              norm += u->v[j] * u->v[j];
            scale = u->v_learned ? 1.0 / (sqrt (norm) + 1e-6) : 1.0;
            for (size_t j = 0; j < d; j++)
              dot += xs[j] * u->v[j] * scale;
            for (size_t j = 0; j < d; j++)
              z[j] = xs[j] - 2.0 * dot * u->v[j] * scale;
          }
          break;
        case RPE_LRPE_P_FOURIER:
          for (size_t k = 0; k < pd; k++)
            {
              cplx acc = 0;

              for (size_t j = 0; j < d; j++)
                acc += xs[j] * cexp (-2.0 * M_PI * I * (double) ((j * k) % d) / (double) d);
              z[k] = acc / sqrt ((double) d);
            }
          break;
        case RPE_LRPE_P_ODD_EVEN:
        default:
          {
            size_t h = d - d / 2;

            for (size_t j = 0; j < d; j++)
              z[j] = xs[j % 2 == 0 ? j / 2 : (j - 1) / 2 + h];
          }
          break;
        }

      /* Lambda(s) */
      switch (u->lam)
        {
        case RPE_LRPE_LAMBDA_ROTATION:
        case RPE_LRPE_LAMBDA_MIXED:
          if (u->lam == RPE_LRPE_LAMBDA_ROTATION)
            e = pd % 2 == 1 ? pd - 1 : pd;
          else
            e = pd / 2 + (pd / 2) % 2;
          for (size_t k = 0; k < e / 2; k++)
            {
              double a;

              if (u->theta != NULL)
                a = u->theta[k];
              else if (u->th == RPE_LRPE_THETA_A)
                a = pow (10000.0, -2.0 / (double) e * (double) k);
              else if (u->th == RPE_LRPE_THETA_B)
                a = M_PI / 2 / (double) len / (double) (e / 2) * (double) (k + 1);
              else
                a = M_PI / 2 / (double) len / (double) (k + 1);
              th2[2 * k] = th2[2 * k + 1] = a * (double) s;
            }
          for (size_t j = 0; j < pd; j++)
            {
              if (j < e)
                {
                  cplx half = j % 2 == 0 ? -z[j + 1] : z[j - 1];
                  o[j] = z[j] * cos (th2[j]) + half * sin (th2[j]);
                }
              else
                o[j] = z[j];
            }
          break;
        case RPE_LRPE_LAMBDA_COMPLEX_EXP:
          for (size_t j = 0; j < pd; j++)
            {
              double a = u->theta != NULL ? u->theta[j] : pow (10000.0, -2.0 / (double) pd * (double) j);
              o[j] = z[j] * (cos (a * (double) s) + I * sin (a * (double) s));
            }
          break;
        case RPE_LRPE_LAMBDA_PERMUTATION:
        default:
          for (size_t j = 0; j < pd; j++)
            o[j] = z[u->table[s * pd + j]];
          break;
        }
    }
  g_free (z);
  g_free (th2);
}

/* The reference's buffer: T[0] = id, T[s][j] = T[s-1][pi[j]] (repeated gathers). */
static int64_t *
permutation_buffer (const uint32_t *pi, size_t rows, size_t d)
{
  int64_t *t = g_new (int64_t, rows * d);

  for (size_t j = 0; j < d; j++)
    t[j] = (int64_t) j;
  for (size_t s = 1; s < rows; s++)
    for (size_t j = 0; j < d; j++)
      t[s * d + j] = t[(s - 1) * d + pi[j]];
  return t;
}

static void
test_reference_forward (void)
{
  static const RpeLrpeP ref_p[] = {
    RPE_LRPE_P_IDENTITY, RPE_LRPE_P_DCT, RPE_LRPE_P_HOUSEHOLDER, RPE_LRPE_P_FOURIER, RPE_LRPE_P_ODD_EVEN,
  };
  const size_t dims[] = { 6, 7, 8, 9, 16 }, len = 40, max_pos = 64;
  GRand *rand = g_rand_new_with_seed (2023);
  unsigned combos = 0;
  double worst = 0;

  for (size_t di = 0; di < G_N_ELEMENTS (dims); di++)
    for (size_t pi_ = 0; pi_ < G_N_ELEMENTS (ref_p); pi_++)
      for (size_t li = 0; li < G_N_ELEMENTS (all_lambda); li++)
        for (int th = RPE_LRPE_THETA_A; th <= RPE_LRPE_THETA_C + 1; th++)   /* C + 1: learned */
          for (int vl = 0; vl < (ref_p[pi_] == RPE_LRPE_P_HOUSEHOLDER ? 2 : 1); vl++)
            {
              size_t d = dims[di], pd = ref_pd (ref_p[pi_], d), e, n_theta = 0, w;
              RpeLrpeLambda lam = all_lambda[li];
              RpeLrpeConfig config = { 0 };
              Urpe u = { 0 };
              double theta[16], v[16], err = 0, scale = 0;
              float thetaf[16], vf[16], *x, *out;
              uint32_t pi[16], pi_back[16];
              int64_t *table = NULL;
              cplx *ref;
              RpeLrpe *l;
              RpeStatus st;

              /* the combinations the reference module runs */
              if (lam == RPE_LRPE_LAMBDA_PERMUTATION && (th != RPE_LRPE_THETA_A || ref_p[pi_] == RPE_LRPE_P_FOURIER))
                continue;   /* no theta; its (1, L, D) gather does not fit rfft's d' */
              if (lam == RPE_LRPE_LAMBDA_COMPLEX_EXP && (th == RPE_LRPE_THETA_B || th == RPE_LRPE_THETA_C))
                continue;   /* complex_exp defines type a only */
              if (lam == RPE_LRPE_LAMBDA_MIXED && (pd < 3 || th > RPE_LRPE_THETA_C))
                continue;   /* asserts d >= 3; has no learned theta */
              e = rpe_lrpe_lambda_dims (lam, pd);
              g_assert_cmpuint (e, ==, ref_e (lam, pd));
              if (th > RPE_LRPE_THETA_C)
                {
                  /* learned theta: (1, 1, D//2) rotation, (1, 1, D) complex; the reference's
                   * reshape needs exactly e/2 (e) of them */
                  n_theta = lam == RPE_LRPE_LAMBDA_ROTATION ? d / 2 : d;
                  if (n_theta != (lam == RPE_LRPE_LAMBDA_ROTATION ? e / 2 : e))
                    continue;
                  for (size_t k = 0; k < n_theta; k++)
                    {
                      thetaf[k] = (float) g_rand_double_range (rand, -0.5, 1.5);
                      theta[k] = thetaf[k];
                    }
                  u.theta = theta;
                  u.n_theta = n_theta;
                  config.theta_kind = RPE_LRPE_THETA_CUSTOM;
                  config.theta = thetaf;
                  config.n_theta = n_theta;
                }
              else
                config.theta_kind = (RpeLrpeTheta) th;
              combos++;

              u.p = ref_p[pi_];
              u.lam = lam;
              u.th = (RpeLrpeTheta) th;
              u.d = d;
              config.dim = d;
              config.length = len;
              config.p = ref_p[pi_];
              config.lambda = lam;
              config.seed = combos;
              if (ref_p[pi_] == RPE_LRPE_P_HOUSEHOLDER)
                {
                  double norm = 0;

                  /* vl 0: a fixed v (stored normalised, used as is); 1: a learned v */
                  for (size_t j = 0; j < d; j++)
                    {
                      vf[j] = (float) g_rand_double_range (rand, -1.5, 1.5);
                      norm += (double) vf[j] * vf[j];
                    }
                  for (size_t j = 0; j < d; j++)
                    {
                      if (vl == 0)
                        vf[j] = (float) (vf[j] / sqrt (norm));
                      v[j] = vf[j];
                    }
                  u.v = v;
                  u.v_learned = vl == 1;
                  config.householder_v = vf;
                  config.householder_learned = vl == 1;
                }
              if (lam == RPE_LRPE_LAMBDA_PERMUTATION)
                {
                  for (size_t j = 0; j < pd; j++)
                    pi[j] = (uint32_t) j;
                  for (size_t j = pd; j-- > 1;)
                    {
                      size_t r = (size_t) g_rand_int_range (rand, 0, (gint32) j + 1);
                      uint32_t t = pi[j];
                      pi[j] = pi[r];
                      pi[r] = t;
                    }
                  table = permutation_buffer (pi, max_pos, pd);
                  u.table = table;
                  g_assert_cmpint (rpe_lrpe_perm_from_table (table, max_pos, pd, pi_back, NULL), ==, RPE_OK);
                  config.lambda_perm = pi_back;
                }

              l = rpe_lrpe_new (&config, &st);
              g_assert_cmpint (st, ==, RPE_OK);
              w = rpe_lrpe_out_width (l);
              g_assert_cmpuint (rpe_lrpe_components (l), ==, pd);
              g_assert_cmpuint (w, ==, (ref_p[pi_] == RPE_LRPE_P_FOURIER || lam == RPE_LRPE_LAMBDA_COMPLEX_EXP)
                                       ? 2 * pd : d);
              x = g_new (float, len * d);
              out = g_new (float, len * w);
              ref = g_new (cplx, len * pd);
              for (size_t i = 0; i < len * d; i++)
                x[i] = (float) g_rand_double_range (rand, -1, 1);
              g_assert_cmpint (rpe_lrpe_encode (l, len, 1, 0, x, out, NULL), ==, RPE_OK);
              urpe_forward (&u, len, x, ref);
              for (size_t i = 0; i < len * pd; i++)
                scale = MAX (scale, cabs (ref[i]));
              for (size_t s = 0; s < len; s++)
                for (size_t j = 0; j < pd; j++)
                  {
                    cplx r = ref[s * pd + j];
                    /* [real | imag] for complex outputs */
                    cplx got = w == 2 * pd ? out[s * w + j] + I * out[s * w + pd + j] : out[s * w + j];

                    if (w != 2 * pd)
                      g_assert_cmpfloat (fabs (cimag (r)), <, 1e-12);
                    err = MAX (err, cabs (got - r));
                  }
              err /= scale;
              worst = MAX (worst, err);
              if (err >= 2e-6)
                g_test_message ("D=%zu P=%d Lambda=%d theta=%d v_learned=%d: err %g", d, ref_p[pi_], lam, th,
                                vl, err);
              g_assert_cmpfloat (err, <, 2e-6);
              g_free (x);
              g_free (out);
              g_free (ref);
              g_free (table);
              rpe_lrpe_free (l);
            }
  g_test_message ("%u reference combinations; worst error %.3g (relative to the largest output)", combos, worst);
  g_assert_cmpuint (combos, >=, 117);
  g_rand_free (rand);
}

static void
test_permutation_table (void)
{
  /* the buffer must be the powers of one permutation starting at the identity */
  const uint32_t pi[5] = { 2, 0, 4, 1, 3 };
  int64_t *t = permutation_buffer (pi, 8, 5);
  uint32_t back[5];
  size_t bad = 0;

  g_assert_cmpint (rpe_lrpe_perm_from_table (t, 8, 5, back, &bad), ==, RPE_OK);
  g_assert_cmpmem (back, sizeof back, pi, sizeof pi);
  g_assert_cmpint (rpe_lrpe_perm_from_table (t, 1, 5, back, NULL), ==, RPE_OK);   /* T[0] only: pi = id */
  for (size_t j = 0; j < 5; j++)
    g_assert_cmpuint (back[j], ==, j);
  t[6 * 5 + 2] = t[6 * 5 + 3];
  g_assert_cmpint (rpe_lrpe_perm_from_table (t, 8, 5, back, &bad), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpuint (bad, ==, 6);
  t[0] = 1;
  g_assert_cmpint (rpe_lrpe_perm_from_table (t, 8, 5, back, &bad), ==, RPE_ERROR_INVALID_ARGUMENT);
  t[0] = 0;
  t[5] = 7;   /* out of range */
  g_assert_cmpint (rpe_lrpe_perm_from_table (t, 2, 5, back, &bad), ==, RPE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpuint (bad, ==, 1);
  g_free (t);
}

static void
test_p_unitary (void)
{
  /* Columns of P from the object (encode e_j at s = 0, where Lambda(0) = I): P^H P = I */
  const size_t dims[] = { 1, 2, 7, 12, 33 };

  for (size_t di = 0; di < G_N_ELEMENTS (dims); di++)
    for (size_t pi = 0; pi < G_N_ELEMENTS (all_p); pi++)
      {
        size_t d = dims[di], pd = ref_pd (all_p[pi], dims[di]);
        RpeLrpe *l = make (d, 10, all_p[pi], RPE_LRPE_LAMBDA_ROTATION, RPE_LRPE_THETA_A, 9);
        cplx *cols = g_new (cplx, d * pd);
        float *e = g_new0 (float, d);
        double worst = 0;

        for (size_t j = 0; j < d; j++)
          {
            memset (e, 0, d * sizeof (float));
            e[j] = 1;
            encode_one (l, 0, e, cols + j * pd);
          }
        /* rfft keeps half the spectrum: the full unitary DFT's Gram matrix is
         * sum_r w_r conj (X_r) Y_r with w = 2 for the bins that stand for a
         * conjugate pair (0 < r < D/2) and 1 for r = 0 and r = D/2 (D even) */
        for (size_t a = 0; a < d; a++)
          for (size_t b = 0; b < d; b++)
            {
              cplx dot = 0;

              for (size_t r = 0; r < pd; r++)
                {
                  double w = all_p[pi] != RPE_LRPE_P_FOURIER || r == 0 || 2 * r == d ? 1.0 : 2.0;
                  dot += w * conj (cols[a * pd + r]) * cols[b * pd + r];
                }
              if (all_p[pi] == RPE_LRPE_P_FOURIER)
                dot = creal (dot);
              worst = MAX (worst, cabs (dot - (a == b ? 1.0 : 0.0)));
            }
        g_assert_cmpfloat (worst, <, 1e-6);
        g_free (cols);
        g_free (e);
        rpe_lrpe_free (l);
      }
}

static void
test_rope (void)
{
  /* identity P + rotation + theta a is RoPE (Su et al.):
   * out[2i] = x[2i] cos(m w_i) - x[2i+1] sin(m w_i), out[2i+1] = x[2i] sin(m w_i) + x[2i+1] cos(m w_i),
   * w_i = 10000^(-2i/D) */
  const size_t n = 200, nh = 3, d = 64;
  const int64_t pos0 = 17;
  GRand *rand = g_rand_new_with_seed (1);
  RpeLrpe *l = make (d, n, RPE_LRPE_P_IDENTITY, RPE_LRPE_LAMBDA_ROTATION, RPE_LRPE_THETA_A, 0);
  float *x = g_new (float, n * nh * d), *out = g_new (float, n * nh * d);
  double *ref = g_new (double, n * nh * d);
  double err;

  random_vec (rand, x, n * nh * d);
  for (size_t m = 0; m < n; m++)
    for (size_t h = 0; h < nh; h++)
      for (size_t i = 0; i < d / 2; i++)
        {
          const float *xr = x + (m * nh + h) * d;
          double *rr = ref + (m * nh + h) * d;
          double ang = (double) (m + (size_t) pos0) * pow (10000.0, -2.0 * (double) i / (double) d);

          rr[2 * i] = xr[2 * i] * cos (ang) - xr[2 * i + 1] * sin (ang);
          rr[2 * i + 1] = xr[2 * i] * sin (ang) + xr[2 * i + 1] * cos (ang);
        }
  g_assert_cmpint (rpe_lrpe_encode (l, n, nh, pos0, x, out, NULL), ==, RPE_OK);
  err = rpe_test_max_rel_err (out, ref, n * nh * d, 1e-12);
  g_test_message ("RoPE max rel err %.3g", err);
  g_assert_cmpfloat (err, <, 1e-6);
  g_free (x);
  g_free (out);
  g_free (ref);
  rpe_lrpe_free (l);
  g_rand_free (rand);
}

static void
test_permutation_power (void)
{
  /* Pi^s by cycles (the object) equals s repeated gathers, for s in [-40, 120];
   * the same seed gives the same permutation */
  const size_t d = 23;
  RpeLrpe *l = make (d, 10, RPE_LRPE_P_IDENTITY, RPE_LRPE_LAMBDA_PERMUTATION, RPE_LRPE_THETA_A, 77);
  RpeLrpe *l2 = make (d, 10, RPE_LRPE_P_IDENTITY, RPE_LRPE_LAMBDA_PERMUTATION, RPE_LRPE_THETA_A, 77);
  RpeLrpe *l3 = make (d, 10, RPE_LRPE_P_IDENTITY, RPE_LRPE_LAMBDA_PERMUTATION, RPE_LRPE_THETA_A, 78);
  uint32_t pi[23], pi2[23], pi3[23];
  float x[23], *out = g_new (float, 161 * d);
  cplx xc[23], ref[23];
  gboolean same3 = TRUE, identity = TRUE;

  g_assert_cmpint (rpe_lrpe_get_lambda_perm (l, pi), ==, RPE_OK);
  g_assert_cmpint (rpe_lrpe_get_lambda_perm (l2, pi2), ==, RPE_OK);
  g_assert_cmpint (rpe_lrpe_get_lambda_perm (l3, pi3), ==, RPE_OK);
  for (size_t j = 0; j < d; j++)
    {
      g_assert_cmpuint (pi[j], ==, pi2[j]);
      same3 = same3 && pi[j] == pi3[j];
      identity = identity && pi[j] == j;
      x[j] = (float) j;   /* distinct values: the output names the source index */
      xc[j] = x[j];
    }
  g_assert_false (same3);
  g_assert_false (identity);

  /* one call over 161 positions starting at -40 (x repeated per position) */
  {
    float *xs = g_new (float, 161 * d);

    for (size_t i = 0; i < 161; i++)
      memcpy (xs + i * d, x, sizeof x);
    g_assert_cmpint (rpe_lrpe_encode (l, 161, 1, -40, xs, out, NULL), ==, RPE_OK);
    g_free (xs);
  }
  for (long s = -40; s <= 120; s++)
    {
      perm_power_repeated (pi, d, s, xc, ref);
      for (size_t j = 0; j < d; j++)
        g_assert_cmpfloat (out[(size_t) (s + 40) * d + j], ==, creal (ref[j]));
    }
  g_free (out);
  rpe_lrpe_free (l);
  rpe_lrpe_free (l2);
  rpe_lrpe_free (l3);
}

static void
test_template (void)
{
  /* template[i] = Re (q^H P^H Lambda(-tau) P k), tau = i - (N-1); NULL = unit all-ones */
  const size_t n = 21;
  GRand *rand = g_rand_new_with_seed (8);

  for (size_t pi = 0; pi < G_N_ELEMENTS (all_p); pi++)
    for (size_t li = 0; li < G_N_ELEMENTS (all_lambda); li++)
      for (int use_null = 0; use_null < 2; use_null++)
        {
          const size_t d = 7, pd = ref_pd (all_p[pi], 7);
          RpeLrpe *l = make (d, n, all_p[pi], all_lambda[li], RPE_LRPE_THETA_B, 5);
          float q[7], k[7], out[41];
          cplx pm[49], lm[49], x[7], pq[7], pk[7], tmp[7];

          random_vec (rand, q, d);
          random_vec (rand, k, d);
          if (use_null)
            for (size_t j = 0; j < d; j++)
              q[j] = k[j] = (float) (1 / sqrt (7.0));
          g_assert_cmpint (rpe_lrpe_template (l, n, use_null ? NULL : q, use_null ? NULL : k, out), ==, RPE_OK);
          build_p (l, all_p[pi], d, pm);
          for (size_t j = 0; j < d; j++)
            x[j] = q[j];
          matvec2 (pm, x, pd, d, pq);
          for (size_t j = 0; j < d; j++)
            x[j] = k[j];
          matvec2 (pm, x, pd, d, pk);
          for (size_t i = 0; i < 2 * n - 1; i++)
            {
              long tau = (long) i - (long) (n - 1);
              cplx acc = 0;

              build_lambda (l, all_lambda[li], RPE_LRPE_THETA_B, pd, n, -tau, lm);
              matvec (lm, pk, pd, tmp);
              for (size_t j = 0; j < pd; j++)
                acc += conj (pq[j]) * tmp[j];
              g_assert_cmpfloat_with_epsilon (out[i], creal (acc), 1e-5);
            }
          if (use_null && all_p[pi] != RPE_LRPE_P_FOURIER)   /* rfft is not unitary on R^D */
            g_assert_cmpfloat_with_epsilon (out[n - 1], 1.0, 1e-5);
          rpe_lrpe_free (l);
        }
  g_rand_free (rand);
}

/* Quadratic reference for linear attention with LRPE on the features:
 * s(m, n) = Re (phi_q[m]^H P^H Lambda(n - m) P phi_k[n]) from dense matrices. */
static double *
ref_scores (const RpeLrpe *l, RpeLrpeP pk_, RpeLrpeLambda lam, RpeLrpeTheta th, size_t n,
            size_t nh, size_t f, const float *phq, const float *phk, size_t len)
{
  double *s = g_new (double, nh * n * n);
  size_t pd = ref_pd (pk_, f);
  cplx *pm = g_new (cplx, f * f), *lm = g_new (cplx, f * f);
  cplx *x = g_new (cplx, f), *a = g_new (cplx, f), *b = g_new (cplx, f), *t = g_new (cplx, f);

  if (l != NULL)
    build_p (l, pk_, f, pm);
  for (size_t h = 0; h < nh; h++)
    for (size_t m = 0; m < n; m++)
      for (size_t k = 0; k < n; k++)
        {
          cplx acc = 0;

          if (l == NULL)
            {
              for (size_t j = 0; j < f; j++)
                acc += (double) phq[(m * nh + h) * f + j] * phk[(k * nh + h) * f + j];
            }
          else
            {
              for (size_t j = 0; j < f; j++)
                x[j] = phq[(m * nh + h) * f + j];
              matvec2 (pm, x, pd, f, a);
              for (size_t j = 0; j < f; j++)
                x[j] = phk[(k * nh + h) * f + j];
              matvec2 (pm, x, pd, f, b);
              build_lambda (l, lam, th, pd, len, (long) k - (long) m, lm);
              matvec (lm, b, pd, t);
              for (size_t j = 0; j < pd; j++)
                acc += conj (a[j]) * t[j];
            }
          s[(h * n + m) * n + k] = creal (acc);
        }
  g_free (pm);
  g_free (lm);
  g_free (x);
  g_free (a);
  g_free (b);
  g_free (t);
  return s;
}

static void
test_linear_attention (void)
{
  const struct { RpeLrpeP p; RpeLrpeLambda lam; RpeLrpeTheta th; gboolean none; } cases[] = {
    { RPE_LRPE_P_IDENTITY, RPE_LRPE_LAMBDA_ROTATION, RPE_LRPE_THETA_A, FALSE },
    { RPE_LRPE_P_HOUSEHOLDER, RPE_LRPE_LAMBDA_ROTATION, RPE_LRPE_THETA_B, FALSE },
    { RPE_LRPE_P_FOURIER, RPE_LRPE_LAMBDA_COMPLEX_EXP, RPE_LRPE_THETA_C, FALSE },
    { RPE_LRPE_P_DCT, RPE_LRPE_LAMBDA_MIXED, RPE_LRPE_THETA_A, FALSE },
    { RPE_LRPE_P_ODD_EVEN, RPE_LRPE_LAMBDA_PERMUTATION, RPE_LRPE_THETA_A, FALSE },
    { RPE_LRPE_P_PERMUTATION, RPE_LRPE_LAMBDA_COMPLEX_EXP, RPE_LRPE_THETA_B, FALSE },
    { RPE_LRPE_P_IDENTITY, RPE_LRPE_LAMBDA_ROTATION, RPE_LRPE_THETA_A, TRUE },  /* no LRPE ("before") */
  };
  const size_t n = 33, nh = 2, f = 6, dv = 5;
  GRand *rand = g_rand_new_with_seed (31);
  float *phq = g_new (float, n * nh * f), *phk = g_new (float, n * nh * f);
  float *v = g_new (float, n * nh * dv), *y = g_new (float, n * nh * dv);
  float *map = g_new (float, nh * n * n);
  double *ref = g_new (double, n * nh * dv), *num = g_new (double, dv);
  double worst = 0;

  for (size_t c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      RpeLrpe *l = cases[c].none ? NULL : make (f, n, cases[c].p, cases[c].lam, cases[c].th, 3 + c);
      double *s;

      /* positive features, as a kernel feature map would give */
      for (size_t i = 0; i < n * nh * f; i++)
        {
          phq[i] = (float) g_rand_double_range (rand, 0.05, 1.0);
          phk[i] = (float) g_rand_double_range (rand, 0.05, 1.0);
        }
      random_vec (rand, v, n * nh * dv);
      s = ref_scores (l, cases[c].p, cases[c].lam, cases[c].th, n, nh, f, phq, phk, n);

      for (int causal = 0; causal < 2; causal++)
        {
          /* implied map */
          for (int rn = 0; rn < 2; rn++)
            {
              g_assert_cmpint (rpe_lrpe_attention_map (l, n, nh, f, phq, phk, causal, rn, map, NULL), ==, RPE_OK);
              for (size_t h = 0; h < nh; h++)
                for (size_t m = 0; m < n; m++)
                  {
                    double den = 0, scale = 0;

                    for (size_t k = 0; k <= (causal ? m : n - 1); k++)
                      {
                        den += s[(h * n + m) * n + k];
                        scale += fabs (s[(h * n + m) * n + k]);
                      }
                    if (rn && fabs (den) < 0.05 * scale)
                      continue;   /* ill-conditioned row */
                    for (size_t k = 0; k < n; k++)
                      {
                        double e = (causal && k > m) ? 0.0 : s[(h * n + m) * n + k] / (rn ? den : 1.0);
                        g_assert_cmpfloat_with_epsilon (map[(h * n + m) * n + k], e,
                                                        1e-5 * (rn ? scale / fabs (den) : scale));
                      }
                  }
            }

          for (int norm = RPE_LRPE_NORM_NONE; norm <= RPE_LRPE_NORM_LAYER; norm++)
            {
              size_t checked = 0;

              g_assert_cmpint (rpe_lrpe_linear_attention (l, n, nh, f, dv, phq, phk, v, causal,
                                                          norm, y, NULL), ==, RPE_OK);
              for (size_t m = 0; m < n; m++)
                for (size_t h = 0; h < nh; h++)
                  {
                    double den = 0, scale = 0, mean = 0, var = 0, err = 0, ymax = 0;
                    size_t last = causal ? m : n - 1;

                    for (size_t b = 0; b < dv; b++)
                      num[b] = 0;
                    for (size_t k = 0; k <= last; k++)
                      {
                        double sc = s[(h * n + m) * n + k];

                        den += sc;
                        scale += fabs (sc);
                        for (size_t b = 0; b < dv; b++)
                          num[b] += sc * v[(k * nh + h) * dv + b];
                      }
                    for (size_t b = 0; b < dv; b++)
                      mean += num[b] / dv;
                    for (size_t b = 0; b < dv; b++)
                      var += (num[b] - mean) * (num[b] - mean) / dv;
                    if (norm == RPE_LRPE_NORM_DENOMINATOR && fabs (den) < 0.05 * scale)
                      continue;
                    checked++;
                    for (size_t b = 0; b < dv; b++)
                      {
                        double r = norm == RPE_LRPE_NORM_NONE ? num[b]
                                   : norm == RPE_LRPE_NORM_DENOMINATOR ? num[b] / den
                                   : (num[b] - mean) / sqrt (var + RPE_LRPE_LN_EPS);

                        ref[(m * nh + h) * dv + b] = r;
                        ymax = MAX (ymax, fabs (r));
                        err = MAX (err, fabs (r - y[(m * nh + h) * dv + b]));
                      }
                    /* relative to the row (row magnitudes differ a lot with causal prefixes) */
                    err /= MAX (ymax, 1e-3);
                    worst = MAX (worst, err);
                    if (err >= 1e-4)
                      g_test_message ("case %zu causal %d norm %d m %zu h %zu: err %g", c, causal, norm, m, h, err);
                    g_assert_cmpfloat (err, <, 1e-4);
                  }
              g_test_message ("case %zu causal %d norm %d: %zu of %zu rows checked", c, causal, norm, checked, n * nh);
              g_assert_cmpuint (checked, >=, n * nh / 4);
            }
        }
      g_free (s);
      rpe_lrpe_free (l);
    }
  g_test_message ("linear attention worst row-relative error %.3g", worst);
  g_free (phq);
  g_free (phk);
  g_free (v);
  g_free (y);
  g_free (map);
  g_free (ref);
  g_free (num);
  g_rand_free (rand);
}

static void
test_invalid (void)
{
  RpeLrpeConfig config = { 0 };
  RpeStatus st;
  float theta[3] = { 1, 2, 3 }, v0[4] = { 0, 0, 0, 0 }, x[4] = { 1, 2, 3, 4 }, out[8];
  uint32_t bad[4] = { 0, 1, 1, 3 };
  atomic_int cancel = 1;
  RpeMonitor monitor = { &cancel, NULL, NULL };
  RpeLrpe *l;

  config.dim = 0;
  config.length = 4;
  g_assert_null (rpe_lrpe_new (&config, &st));
  g_assert_cmpint (st, ==, RPE_ERROR_INVALID_ARGUMENT);
  config.dim = 4;
  config.theta_kind = RPE_LRPE_THETA_CUSTOM;
  config.theta = theta;
  config.n_theta = 3;   /* rotation on D = 4 needs 2 */
  g_assert_null (rpe_lrpe_new (&config, &st));
  g_assert_cmpint (st, ==, RPE_ERROR_INVALID_ARGUMENT);
  config.lambda = RPE_LRPE_LAMBDA_COMPLEX_EXP;   /* complex on D = 4 needs 4 */
  config.n_theta = 4;
  {
    float t4[4] = { 1, 2, NAN, 4 };
    config.theta = t4;
    g_assert_null (rpe_lrpe_new (&config, &st));
    g_assert_cmpint (st, ==, RPE_ERROR_NOT_FINITE);
  }
  config.lambda = RPE_LRPE_LAMBDA_ROTATION;
  config.theta_kind = RPE_LRPE_THETA_A;
  config.p = RPE_LRPE_P_HOUSEHOLDER;
  config.householder_v = v0;
  g_assert_null (rpe_lrpe_new (&config, &st));
  /* said as what it is: a zero vector, not an "invalid argument" */
  g_assert_cmpint (st, ==, RPE_ERROR_DEGENERATE);
  g_assert_nonnull (strstr (rpe_status_to_string (st), "zero"));
  config.householder_v = NULL;
  config.p = RPE_LRPE_P_PERMUTATION;
  config.p_perm = bad;
  g_assert_null (rpe_lrpe_new (&config, &st));
  g_assert_cmpint (st, ==, RPE_ERROR_INVALID_ARGUMENT);
  config.p_perm = NULL;
  config.lambda = RPE_LRPE_LAMBDA_PERMUTATION;
  config.lambda_perm = bad;
  g_assert_null (rpe_lrpe_new (&config, &st));
  g_assert_cmpint (st, ==, RPE_ERROR_INVALID_ARGUMENT);
  config.lambda_perm = NULL;
  config.p = (RpeLrpeP) 99;
  g_assert_null (rpe_lrpe_new (&config, &st));
  g_assert_cmpint (st, ==, RPE_ERROR_INVALID_ARGUMENT);

  l = make (4, 4, RPE_LRPE_P_IDENTITY, RPE_LRPE_LAMBDA_ROTATION, RPE_LRPE_THETA_A, 0);
  g_assert_cmpint (rpe_lrpe_encode (l, 1, 1, 0, x, out, &monitor), ==, RPE_ERROR_CANCELLED);
  g_assert_cmpint (rpe_lrpe_encode (l, 2, 1, INT64_MAX, x, out, NULL), ==, RPE_ERROR_OVERFLOW);
  g_assert_cmpint (rpe_lrpe_linear_attention (l, 1, 1, 5, 1, x, x, x, FALSE, RPE_LRPE_NORM_NONE, out, NULL),
                   ==, RPE_ERROR_INVALID_ARGUMENT);   /* f != D */
  g_assert_cmpint (rpe_lrpe_linear_attention (l, 1, 1, 4, 1, x, x, x, FALSE, RPE_LRPE_NORM_NONE, out, &monitor),
                   ==, RPE_ERROR_CANCELLED);
  g_assert_cmpint (rpe_lrpe_get_householder_v (l, (double *) out), ==, RPE_ERROR_INVALID_ARGUMENT);
  rpe_lrpe_free (l);

  /* a caller-given learned v is used as v / (|v| + 1e-6) (the reference's learned
   * Householder), a stored fixed v as is */
  {
    float va[4] = { 3, 0, 4, 0 };
    double got[4], u0 = 3 / (5 + 1e-6), u2 = 4 / (5 + 1e-6), dot;

    config.p = RPE_LRPE_P_HOUSEHOLDER;
    config.lambda = RPE_LRPE_LAMBDA_ROTATION;
    config.householder_v = va;
    config.householder_learned = true;
    l = rpe_lrpe_new (&config, &st);
    g_assert_cmpint (st, ==, RPE_OK);
    g_assert_cmpint (rpe_lrpe_get_householder_v (l, got), ==, RPE_OK);
    g_assert_cmpfloat_with_epsilon (got[0], u0, 1e-15);
    g_assert_cmpfloat_with_epsilon (got[2], u2, 1e-15);
    /* P x at s = 0: x - 2 v (v . x) */
    dot = u0 * 1 + u2 * 3;
    g_assert_cmpint (rpe_lrpe_encode (l, 1, 1, 0, x, out, NULL), ==, RPE_OK);
    g_assert_cmpfloat_with_epsilon (out[0], 1 - 2 * u0 * dot, 1e-6);
    g_assert_cmpfloat_with_epsilon (out[1], 2, 1e-6);
    g_assert_cmpfloat_with_epsilon (out[2], 3 - 2 * u2 * dot, 1e-6);
    g_assert_cmpfloat_with_epsilon (out[3], 4, 1e-6);
    rpe_lrpe_free (l);

    /* fixed: x - 2 (x . v) v with v = (3, 0, 4, 0) itself, x . v = 15 */
    config.householder_learned = false;
    l = rpe_lrpe_new (&config, &st);
    g_assert_cmpint (st, ==, RPE_OK);
    g_assert_cmpint (rpe_lrpe_encode (l, 1, 1, 0, x, out, NULL), ==, RPE_OK);
    g_assert_cmpfloat_with_epsilon (out[0], 1 - 2 * 15 * 3, 1e-4);
    g_assert_cmpfloat_with_epsilon (out[2], 3 - 2 * 15 * 4, 1e-4);
    rpe_lrpe_free (l);
  }
}

static void
record_progress (double fraction, void *user_data)
{
  double *last = user_data;

  g_assert_true (fraction >= last[0]);   /* monotone */
  last[0] = fraction;
  last[1] += 1;
}

static void
test_timing (void)
{
  /* encode and linear attention at a realistic size (reported, loosely bounded) */
  const size_t n = 4096, nh = 8, d = 64, dv = 64;
  GRand *rand = g_rand_new_with_seed (2);
  RpeLrpe *l = make (d, n, RPE_LRPE_P_HOUSEHOLDER, RPE_LRPE_LAMBDA_ROTATION, RPE_LRPE_THETA_A, 1);
  float *x = g_new (float, n * nh * d), *out = g_new (float, n * nh * d), *y = g_new (float, n * nh * dv);
  gint64 t0;
  double prog[2] = { 0, 0 };
  RpeMonitor monitor = { NULL, record_progress, prog };

  for (size_t i = 0; i < n * nh * d; i++)
    x[i] = (float) g_rand_double_range (rand, 0, 1);
  t0 = g_get_monotonic_time ();
  g_assert_cmpint (rpe_lrpe_encode (l, n, nh, 0, x, out, &monitor), ==, RPE_OK);
  g_assert_cmpfloat (prog[0], ==, 1.0);
  g_assert_cmpfloat (prog[1], >, 2);
  g_test_message ("encode N=%zu H=%zu D=%zu: %.1f ms", n, nh, d, (g_get_monotonic_time () - t0) / 1000.0);
  t0 = g_get_monotonic_time ();
  g_assert_cmpint (rpe_lrpe_linear_attention (l, n, nh, d, dv, x, x, x, TRUE, RPE_LRPE_NORM_LAYER, y, NULL),
                   ==, RPE_OK);
  g_test_message ("causal linear attention with LRPE N=%zu H=%zu D=%zu Dv=%zu: %.1f ms", n, nh, d, dv,
                  (g_get_monotonic_time () - t0) / 1000.0);
  for (size_t i = 0; i < n * nh * dv; i++)
    g_assert_true (isfinite (y[i]));
  g_free (x);
  g_free (out);
  g_free (y);
  rpe_lrpe_free (l);
  g_rand_free (rand);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/core/lrpe/identity", test_identity);
  g_test_add_func ("/core/lrpe/reference-forward", test_reference_forward);
  g_test_add_func ("/core/lrpe/permutation-table", test_permutation_table);
  g_test_add_func ("/core/lrpe/p-unitary", test_p_unitary);
  g_test_add_func ("/core/lrpe/rope", test_rope);
  g_test_add_func ("/core/lrpe/permutation-power", test_permutation_power);
  g_test_add_func ("/core/lrpe/template", test_template);
  g_test_add_func ("/core/lrpe/linear-attention", test_linear_attention);
  g_test_add_func ("/core/lrpe/invalid", test_invalid);
  g_test_add_func ("/core/lrpe/timing", test_timing);
  return g_test_run ();
}

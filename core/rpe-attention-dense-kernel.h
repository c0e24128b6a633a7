/* rpe-attention-dense-kernel.h: the register-tiled logits + row softmax of
 * rpe-attention-dense.c, written once for a vector width and included once per
 * instruction set (private; no include guard on purpose).
 *
 * The includer defines:
 *   DK_W          lanes of a vector (16: AVX-512, 8: AVX2 or the baseline)
 *   DK_MR         rows of the register tile (the tile is DK_MR x 2 DK_W logits)
 *   DK_ATTR       the functions' attributes (a target ("...") or nothing)
 *   DK_NAME(x)    x with the instruction set's suffix
 *   DK_MAX(a, b)  lane-wise max of two vectors whose lanes are not NaN
 *   DK_STREAM     1 if DK_STREAM_STORE (p, v) (a non-temporal store to a DK_W * 4 byte
 *                 aligned p) and DK_SFENCE () exist, else 0
 */

#define VF DK_NAME (vf)
#define VI DK_NAME (vi)
#define NR (2 * DK_W)

typedef float   VF __attribute__ ((vector_size (DK_W * 4)));
typedef int32_t VI __attribute__ ((vector_size (DK_W * 4)));

static inline __attribute__ ((always_inline)) DK_ATTR VF
DK_NAME (load) (const float *p)
{
  VF v;

  memcpy (&v, p, sizeof v);
  return v;
}

static inline __attribute__ ((always_inline)) DK_ATTR void
DK_NAME (store) (float *p,
                 VF     v)
{
  memcpy (p, &v, sizeof v);
}

static inline __attribute__ ((always_inline)) DK_ATTR VF
DK_NAME (splat) (float x)
{
  VF z = { 0 };

  return x - z;   /* x - (+0) is x for every x (x + 0 is not, for -0): folded to a broadcast */
}

static inline __attribute__ ((always_inline)) DK_ATTR VF
DK_NAME (select) (VI mask,
                  VF a,
                  VF b)
{
  return (VF) (((VI) a & mask) | ((VI) b & ~mask));
}

/* exp (x) for x <= 0 or NaN: the algorithm of rpe-attention.c's v8_exp_nonpos (Cephes,
 * Cody-Waite reduction, degree-5 polynomial, 2^n as two factors), x < -104 gives 0. */
static inline __attribute__ ((always_inline)) DK_ATTR VF
DK_NAME (exp) (VF x)
{
#ifdef DK_EXP_SCALEF
  /* the same reduction and polynomial, 2^n applied by one vscalefps (exact, with the
   * gradual underflow to 0); max (lo, x) keeps a NaN x */
  const VF lo = DK_NAME (splat) (-104.0f);
  VF xc, nf, r, p, y;

  xc = _mm512_max_ps (lo, x);
  nf = _mm512_roundscale_ps (xc * 1.44269504088896341f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  r = xc - nf * 0.693359375f;
  r = r - nf * -2.12194440e-4f;
  p = DK_NAME (splat) (1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  y = p * (r * r) + r + 1.0f;
  return _mm512_scalef_ps (y, nf);
#else
  const VF lo = DK_NAME (splat) (-104.0f), magic = DK_NAME (splat) (12582912.0f);
  VF xc, t, nf, r, p, y;
  VI n, n1, n2;

  xc = DK_NAME (select) (x < lo, lo, x);
  t = xc * 1.44269504088896341f + magic;
  n = (VI) t - (VI) magic;
  nf = t - magic;
  r = xc - nf * 0.693359375f;
  r = r - nf * -2.12194440e-4f;
  p = DK_NAME (splat) (1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  y = p * (r * r) + r + 1.0f;
  n1 = n >> 1;
  n2 = n - n1;
  y = y * (VF) ((n1 + 127) << 23);
  return y * (VF) ((n2 + 127) << 23);
#endif
}

/* One DK_MR x NR tile of logits: c[i][j] = scale sum_r qa[r][i] kp[r][j] (qa: (R, DK_MR),
 * kp: (R, NR), both packed), stored at c with row stride ldc (with nt, non-temporal stores:
 * c and ldc then keep every row DK_W * 4 byte aligned).  With track, rmax[i] (a vector per
 * row) takes the lane-wise max of the row's tile. */
static inline __attribute__ ((always_inline)) DK_ATTR void
DK_NAME (tile) (const float *restrict qa,
                const float *restrict kp,
                size_t                R,
                float                 scale,
                float       *restrict c,
                size_t                ldc,
                float       *restrict rmax,
                bool                  track,
                bool                  nt)
{
  VF a0[DK_MR], a1[DK_MR];

#if !DK_STREAM
  (void) nt;
#endif
#pragma GCC unroll 16
  for (int i = 0; i < DK_MR; i++)
    a0[i] = a1[i] = DK_NAME (splat) (0.0f);
  for (size_t r = 0; r < R; r++)
    {
      const VF b0 = DK_NAME (load) (kp + r * NR), b1 = DK_NAME (load) (kp + r * NR + DK_W);

#pragma GCC unroll 16
      for (int i = 0; i < DK_MR; i++)
        {
          const VF q = DK_NAME (splat) (qa[r * DK_MR + i]);

          a0[i] += q * b0;
          a1[i] += q * b1;
        }
    }
#pragma GCC unroll 16
  for (int i = 0; i < DK_MR; i++)
    {
      a0[i] *= scale;
      a1[i] *= scale;
#if DK_STREAM
      if (nt)
        {
          DK_STREAM_STORE (c + i * ldc, a0[i]);
          DK_STREAM_STORE (c + i * ldc + DK_W, a1[i]);
        }
      else
#endif
        {
          DK_NAME (store) (c + i * ldc, a0[i]);
          DK_NAME (store) (c + i * ldc + DK_W, a1[i]);
        }
      if (track)
        DK_NAME (store) (rmax + i * DK_W,
                         DK_MAX (DK_NAME (load) (rmax + i * DK_W), DK_MAX (a0[i], a1[i])));
    }
}

/* The queries q[i * ldq + r] of rows i < nr as strips of DK_MR rows, (R, DK_MR) each, zero
 * rows past nr; the rows (usually not cached yet) have all their lines requested first. */
static inline __attribute__ ((always_inline)) DK_ATTR void
DK_NAME (pack_q) (const float *q,
                  size_t       ldq,
                  size_t       nr,
                  size_t       R,
                  float       *qa)
{
  const size_t strips = (nr + DK_MR - 1) / DK_MR;

  for (size_t i = 0; i < nr; i++)
    for (size_t r = 0; r < R; r += 16)
      __builtin_prefetch (q + i * ldq + r);
  for (size_t s = 0; s < strips; s++)
    for (size_t i = 0; i < DK_MR; i++)
      {
        size_t row = s * DK_MR + i;
        float *dst = qa + s * R * DK_MR + i;

        if (row < nr)
          {
            const float *src = q + row * ldq;

            for (size_t r = 0; r < R; r++)
              dst[r * DK_MR] = src[r];
          }
        else
          for (size_t r = 0; r < R; r++)
            dst[r * DK_MR] = 0.0f;
      }
}

/* Rows m .. m + nr - 1 of the block (see DenseJob in rpe-attention-dense.c): logits tiles into
 * scratch (rows of npad floats), then per row the max, exp and sum while the row is in L1,
 * and the scaled row into out (nr, n).  false if a row's max or sum is not finite (the caller
 * recomputes the block through the reference path). */
static DK_ATTR bool
DK_NAME (block) (const DenseJob *job,
                 size_t          m,
                 size_t          nr,
                 float          *scratch,
                 float          *qa,
                 float          *rmax,
                 float          *out)
{
  const size_t n = job->n, R = job->r, npad = job->npad, ldq = job->ldq;
  const size_t strips = (nr + DK_MR - 1) / DK_MR;
  size_t np_max = 0;
  VI lane;
  bool ok = true;

  for (int l = 0; l < DK_W; l++)
    lane[l] = l;

  DK_NAME (pack_q) (job->q + m * ldq, ldq, nr, R, qa);
  for (size_t i = 0; i < strips * DK_MR; i++)
    DK_NAME (store) (rmax + i * DK_W, DK_NAME (splat) (-INFINITY));

  /* the panels each strip needs (causal: up to its last row's diagonal) */
  for (size_t s = 0; s < strips; s++)
    {
      size_t last = m + (s * DK_MR + DK_MR < nr ? s * DK_MR + DK_MR : nr) - 1;
      size_t hi = job->causal && last + 1 < n ? last + 1 : n;
      size_t np = (hi + NR - 1) / NR;

      np_max = np > np_max ? np : np_max;
    }
  for (size_t p = 0; p < np_max; p++)
    for (size_t s = 0; s < strips; s++)
      {
        size_t first = m + s * DK_MR;
        size_t last = m + (s * DK_MR + DK_MR < nr ? s * DK_MR + DK_MR : nr) - 1;
        size_t hi = job->causal && last + 1 < n ? last + 1 : n;
        /* columns valid for every row of the strip: the tiles that may feed the running max */
        size_t valid = job->causal && first + 1 < n ? first + 1 : n;

        if (p * NR >= hi)
          continue;
        DK_NAME (tile) (qa + s * R * DK_MR, job->kp + p * R * NR, R, job->scale,
                        scratch + s * DK_MR * npad + p * NR, npad, rmax + s * DK_MR * DK_W,
                        (p + 1) * NR <= valid, false);
      }

  for (size_t i = 0; i < nr && ok; i++)
    {
      size_t s = i / DK_MR, first = m + s * DK_MR, row = m + i;
      size_t cols = job->causal && row + 1 < n ? row + 1 : n;
      size_t valid = job->causal && first + 1 < n ? first + 1 : n;
      size_t covered = valid / NR * NR, j;
      float *x = scratch + i * npad, *o = out + i * n;
      VF mv = DK_NAME (load) (rmax + i * DK_W);
      float mx = -INFINITY, inv;
      double sum = 0;

      for (int l = 0; l < DK_W; l++)
        mx = mv[l] > mx ? mv[l] : mx;
      for (j = covered; j < cols; j++)
        mx = x[j] > mx ? x[j] : mx;
      if (!isfinite (mx))
        {
          ok = false;
          break;
        }

      /* e = exp (x - max) in place; the lanes past cols of the last vector give 0 */
      mv = DK_NAME (splat) (mx);
      j = 0;
      while (j < cols)
        {
          VF acc0 = DK_NAME (splat) (0.0f), acc1 = acc0;
          size_t end = j + 512 < cols ? j + 512 : cols;

          for (; j + 2 * DK_W <= end; j += 2 * DK_W)
            {
              VF e0 = DK_NAME (exp) (DK_NAME (load) (x + j) - mv);
              VF e1 = DK_NAME (exp) (DK_NAME (load) (x + j + DK_W) - mv);

              DK_NAME (store) (x + j, e0);
              DK_NAME (store) (x + j + DK_W, e1);
              acc0 += e0;
              acc1 += e1;
            }
          for (; j < end; j += DK_W)
            {
              VF v = DK_NAME (load) (x + j) - mv, e;

              /* padding columns (past cols, within npad) hold anything: masked to -inf */
              v = DK_NAME (select) (lane < (VI) { 0 } + (int32_t) (end - j), v, DK_NAME (splat) (-INFINITY));
              e = DK_NAME (exp) (v);
              DK_NAME (store) (x + j, e);
              acc0 += e;
            }
          acc0 += acc1;
          for (int l = 0; l < DK_W; l++)
            sum += acc0[l];
          j = end;
        }
      if (!isfinite (sum))
        {
          ok = false;
          break;
        }

      inv = (float) (1.0 / sum);
      mv = DK_NAME (splat) (inv);
      j = 0;
#if DK_STREAM
      if (job->stream && ((uintptr_t) o % (DK_W * 4)) == 0)
        for (; j + DK_W <= cols; j += DK_W)
          DK_STREAM_STORE (o + j, DK_NAME (load) (x + j) * mv);
#endif
      for (; j + DK_W <= cols; j += DK_W)
        DK_NAME (store) (o + j, DK_NAME (load) (x + j) * mv);
      for (; j < cols; j++)
        o[j] = x[j] * inv;
      if (cols < n)
        memset (o + cols, 0, (n - cols) * sizeof (float));
    }
#if DK_STREAM
  if (job->stream)
    DK_SFENCE ();
#endif
  return ok;
}

/* Rows m .. m + nr - 1 of the plain product (job->plain): out (nr, n) = scale q k^T, the
 * tiles stored from the registers straight into out (non-temporal stores when job->stream
 * and every row of out is DK_W * 4 byte aligned); the tiles that cross the last row or
 * column go through a tile-sized buffer. */
static DK_ATTR void
DK_NAME (product_block) (const DenseJob *job,
                         size_t          m,
                         size_t          nr,
                         float          *qa,
                         float          *out)
{
  const size_t n = job->n, R = job->r, ldq = job->ldq;
  const size_t strips = (nr + DK_MR - 1) / DK_MR, panels = (n + NR - 1) / NR;
  const bool nt = job->stream && ((uintptr_t) out % (DK_W * 4)) == 0 && n % DK_W == 0;
  float edge[DK_MR * NR];

  DK_NAME (pack_q) (job->q + m * ldq, ldq, nr, R, qa);
  for (size_t p = 0; p < panels; p++)
    for (size_t s = 0; s < strips; s++)
      {
        size_t rows = nr - s * DK_MR < DK_MR ? nr - s * DK_MR : DK_MR;
        size_t cols = n - p * NR < NR ? n - p * NR : NR;
        float *c = out + s * DK_MR * n + p * NR;

        if (rows == DK_MR && cols == NR)
          {
            DK_NAME (tile) (qa + s * R * DK_MR, job->kp + p * R * NR, R, job->scale, c, n, NULL, false, nt);
            continue;
          }
        DK_NAME (tile) (qa + s * R * DK_MR, job->kp + p * R * NR, R, job->scale, edge, NR, NULL, false,
                        false);
        for (size_t i = 0; i < rows; i++)
          memcpy (c + i * n, edge + i * NR, cols * sizeof (float));
      }
#if DK_STREAM
  if (nt)
    DK_SFENCE ();
#endif
}

/* ---- floors for rpe bench ---- */

/* x[j] = exp (x[j] - x[0]) for j < n (a multiple of DK_W): the exps of the kernel, in place
 * (x stays in L1) */
static DK_ATTR void
DK_NAME (exp_rows) (float  *x,
                    size_t  n)
{
  const VF mv = DK_NAME (splat) (x[0]);

  for (size_t j = 0; j + DK_W <= n; j += DK_W)
    DK_NAME (store) (x + j, DK_NAME (exp) (DK_NAME (load) (x + j) - mv));
}

#if DK_STREAM
/* zeros with the kernel's non-temporal stores; p DK_W * 4 byte aligned, n a multiple of DK_W */
static DK_ATTR void
DK_NAME (fill) (float  *p,
                size_t  n)
{
  const VF z = DK_NAME (splat) (0.0f);

  for (size_t j = 0; j + DK_W <= n; j += DK_W)
    DK_STREAM_STORE (p + j, z);
  DK_SFENCE ();
}
#endif

#undef NR
#undef VI
#undef VF

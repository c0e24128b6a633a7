/* rpe-gemm-kernel.h: the register-tiled product of rpe-gemm.c, written once for a vector
 * width and included once per instruction set (private; no include guard on purpose).
 *
 * The includer defines:
 *   GK_W                  lanes of a vector
 *   GK_MR, GK_NV          rows (6) and vectors of columns (2 or 4) of the largest register tile
 *   GK_ATTR               the functions' attributes (a target ("...") or nothing)
 *   GK_NAME(x)            x with the build's suffix
 *   GK_FMA(a, b, c)       a b + c on vectors (one rounding in the FMA builds)
 *   GK_LOAD_TAIL(p, n)    a vector of p[0 .. n - 1] and zeros (0 < n < GK_W)
 *   GK_STORE_TAIL(p, v, n) stores the first n lanes of v to p
 *
 * Every element of C is one lane of one accumulator that goes through the same sequence of
 * operations whatever the tile it sits in: acc = 0; for t: acc = fma (A(i, t), B(t, j), acc);
 * c = alpha acc (+ c).  Partial tiles (fewer rows, fewer vectors, a last vector of fewer lanes)
 * run the same text with fewer accumulators, the missing lanes of B read as zeros. */

#define GV GK_NAME (v)
typedef float GV __attribute__ ((vector_size (GK_W * 4)));

static inline __attribute__ ((always_inline)) GK_ATTR GV
GK_NAME (load) (const float *p)
{
  GV v;

  memcpy (&v, p, sizeof v);
  return v;
}

static inline __attribute__ ((always_inline)) GK_ATTR void
GK_NAME (store) (float *p,
                 GV     v)
{
  memcpy (p, &v, sizeof v);
}

static inline __attribute__ ((always_inline)) GK_ATTR GV
GK_NAME (splat) (float x)
{
  GV z = { 0 };

  return x - z;   /* x - (+0) is x for every x: folded to a broadcast */
}

/* One tile of R rows and V vectors of columns (the last holding `tail` lanes when partial). */
static inline __attribute__ ((always_inline)) GK_ATTR void
GK_NAME (tile) (const int    R,
                const int    V,
                const bool   partial,
                size_t       k,
                const float *a,
                size_t       ars,
                size_t       acs,
                const float *b,
                size_t       ldb,
                float        alpha,
                bool         accumulate,
                float       *c,
                size_t       ldc,
                size_t       tail)
{
  GV acc[GK_MR][GK_NV];

#pragma GCC unroll 8
  for (int r = 0; r < R; r++)
#pragma GCC unroll 8
    for (int v = 0; v < V; v++)
      acc[r][v] = GK_NAME (splat) (0.0f);
  for (size_t t = 0; t < k; t++)
    {
      const float *bt = b + t * ldb;
      const float *at = a + t * acs;
      GV bv[GK_NV];

#pragma GCC unroll 8
      for (int v = 0; v < V; v++)
        bv[v] = partial && v == V - 1 ? GK_LOAD_TAIL (bt + v * GK_W, tail) : GK_NAME (load) (bt + v * GK_W);
#pragma GCC unroll 8
      for (int r = 0; r < R; r++)
        {
          const GV p = GK_NAME (splat) (at[r * ars]);

#pragma GCC unroll 8
          for (int v = 0; v < V; v++)
            acc[r][v] = GK_FMA (p, bv[v], acc[r][v]);
        }
    }
#pragma GCC unroll 8
  for (int r = 0; r < R; r++)
#pragma GCC unroll 8
    for (int v = 0; v < V; v++)
      {
        float *cp = c + r * ldc + v * GK_W;
        const bool last = partial && v == V - 1;
        GV out;

        if (accumulate)
          out = GK_FMA (GK_NAME (splat) (alpha), acc[r][v],
                        last ? GK_LOAD_TAIL (cp, tail) : GK_NAME (load) (cp));
        else
          out = GK_NAME (splat) (alpha) * acc[r][v];
        if (last)
          GK_STORE_TAIL (cp, out, tail);
        else
          GK_NAME (store) (cp, out);
      }
}

#define GK_TILE_ARGS size_t k, const float *a, size_t ars, size_t acs, const float *b, size_t ldb, \
                     float alpha, bool accumulate, float *c, size_t ldc, size_t tail
typedef void (*GK_NAME (fn)) (GK_TILE_ARGS);

#define GK_DEF(R, V)                                                                               \
  static GK_ATTR void GK_NAME (full_##R##_##V) (GK_TILE_ARGS)                                     \
  {                                                                                                \
    GK_NAME (tile) (R, V, false, k, a, ars, acs, b, ldb, alpha, accumulate, c, ldc, tail);         \
  }                                                                                                \
  static GK_ATTR void GK_NAME (part_##R##_##V) (GK_TILE_ARGS)                                     \
  {                                                                                                \
    GK_NAME (tile) (R, V, true, k, a, ars, acs, b, ldb, alpha, accumulate, c, ldc, tail);          \
  }

#define GK_DEF_ROWS(V) GK_DEF (1, V) GK_DEF (2, V) GK_DEF (3, V) GK_DEF (4, V) GK_DEF (5, V) GK_DEF (6, V)
GK_DEF_ROWS (1)
GK_DEF_ROWS (2)
#if GK_NV > 2
GK_DEF_ROWS (3)
GK_DEF_ROWS (4)
#endif

#define GK_ROW(V) { { GK_NAME (full_1_##V), GK_NAME (part_1_##V) }, { GK_NAME (full_2_##V), GK_NAME (part_2_##V) }, \
                    { GK_NAME (full_3_##V), GK_NAME (part_3_##V) }, { GK_NAME (full_4_##V), GK_NAME (part_4_##V) }, \
                    { GK_NAME (full_5_##V), GK_NAME (part_5_##V) }, { GK_NAME (full_6_##V), GK_NAME (part_6_##V) } }

/* [V - 1][R - 1][partial] */
static const GK_NAME (fn) GK_NAME (table)[GK_NV][6][2] = {
  GK_ROW (1), GK_ROW (2),
#if GK_NV > 2
  GK_ROW (3), GK_ROW (4),
#endif
};

/* The whole product: panels of GK_NV vectors of columns (the panel of B stays in cache across
 * the strips of rows), strips of GK_MR rows. */
static GK_ATTR void
GK_NAME (gemm) (size_t       m,
                size_t       n,
                size_t       k,
                float        alpha,
                const float *a,
                size_t       ars,
                size_t       acs,
                const float *b,
                size_t       ldb,
                bool         accumulate,
                float       *c,
                size_t       ldc)
{
  _Static_assert (GK_MR == 6, "tiles of 1 to 6 rows");
  for (size_t j0 = 0; j0 < n; j0 += GK_NV * GK_W)
    {
      const size_t cols = n - j0 < GK_NV * GK_W ? n - j0 : GK_NV * GK_W;
      const size_t vecs = (cols + GK_W - 1) / GK_W, tail = cols - (vecs - 1) * GK_W;
      const bool partial = tail != GK_W;

      for (size_t i0 = 0; i0 < m; i0 += GK_MR)
        {
          const size_t rows = m - i0 < GK_MR ? m - i0 : GK_MR;

          GK_NAME (table)[vecs - 1][rows - 1][partial] (k, a + i0 * ars, ars, acs, b + j0, ldb, alpha, accumulate,
                                                       c + i0 * ldc + j0, ldc, tail);
        }
    }
}

#undef GK_DEF
#undef GK_DEF_ROWS
#undef GK_ROW
#undef GK_TILE_ARGS
#undef GV

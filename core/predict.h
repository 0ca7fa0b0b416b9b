/* Online least-squares prediction (the improved online DPCM), one band of
 * columns at a time.
 *
 * This file is the reference for the arithmetic every backend must repeat
 * bit for bit (docs/FORMAT.md, section "Prediction").  The normal equations
 * of every pixel are built from N+1 running column sums of lag products
 * (exact, in uint64) and solved by one fixed LDL^T sequence in IEEE double.
 *
 * Use, for a frame of width W processed row by row:
 *     aurp_predictor_init(&p, W, N, M, c0, c1);
 *     for each row m:
 *         aurp_predictor_prepare_row(&p);        // coefficients for row m
 *         for n in [c0, c1): pred = aurp_predictor_predict(&p, cur, prev, n);
 *         aurp_predictor_add_row(&p, cur);       // row m joins the sums
 *     aurp_predictor_free(&p);
 * Bands are independent, so an encoder may run one band per thread; the
 * decoder prepares all bands in parallel and then reconstructs the row.
 */
#ifndef AURP_PREDICT_H
#define AURP_PREDICT_H

#include <stddef.h>
#include <stdint.h>

#include "hostdev.h"

#define AURP_MAX_ORDER 32     /* N */
#define AURP_MAX_EQUATIONS 16 /* M */

/* The pivot test of the LDL^T solve: a pivot d_j is accepted only if
 * d_j > A_jj * 2^-30.  Shared by every backend. */
#define AURP_PIVOT_REL 0x1p-30

typedef struct {
    uint32_t width;  /* W */
    int order;       /* N */
    int equations;   /* M */
    uint32_t c0, c1; /* this band predicts columns [c0, c1) */
    uint32_t lo;     /* first column it keeps sums for: c0 - (N+M-1), >= 0 */
    uint32_t span;   /* c1 - lo */
    uint32_t rows;   /* rows added so far = index m of the next row */
    uint64_t *colsum; /* [(N+1) * span]: sum over rows i<m of x[i][q]*x[i][q+d] */
    uint64_t *prefix; /* [(N+1) * (span+1)]: prefix of colsum along q */
    double *coef;     /* [(c1-c0) * N]: a_r for r = 0..K'-1, r=0 is column n-1 */
    uint8_t *kused;   /* [(c1-c0)]: K', the order actually used; 0 = left neighbour */
    double *wsum;     /* [(N+1) * (span+1)]: M-row window sums of colsum as doubles, for the
                         lane-parallel solve of the columns with K = N and R = M */
} aurp_predictor;

/* Returns 0, or -1 when out of memory or the parameters are out of range. */
int aurp_predictor_init(aurp_predictor *p, uint32_t width, int order, int equations,
                        uint32_t c0, uint32_t c1);
void aurp_predictor_free(aurp_predictor *p);

/* Solves the normal equations of every column of the band for row m = p->rows
 * (m >= 1; for m == 0 it does nothing: row 0 uses the edge rule). */
void aurp_predictor_prepare_row(aurp_predictor *p);

/* The prediction of x[m][n] for c0 <= n < c1.  cur is row m (only columns
 * < n are read), prev is row m-1 (NULL when m == 0). */
uint16_t aurp_predictor_predict(const aurp_predictor *p, const uint16_t *cur,
                                const uint16_t *prev, uint32_t n);

/* Adds row m (columns [lo, c1) are read) to the running sums. */
void aurp_predictor_add_row(aurp_predictor *p, const uint16_t *row);

/* The per-pixel solve, exposed for the tests and for other backends' checks:
 * G is the k x k matrix G'[r][s] (row-major, only r <= s is read) and h the
 * k right-hand sides, both exact integers, with k = min(K, m*R).  Writes
 * a[0..K'-1] and returns K' <= k (0 = use the left neighbour). */
int aurp_solve_ldl(int k, const uint64_t *G, const uint64_t *h, double *a);

/* aurp_solve_ldl of AURP_SOLVE_LANES ridge systems at once, one a vector
 * lane: each lane does exactly the scalar sequence of IEEE operations.  Lane
 * l's exact integers are read from G + l * stride: G'[r][s] = G[l * stride +
 * gidx[r * k + s]] (r <= s), the diagonal aurp_ridged, and h[j] = G[l *
 * stride + hidx[j]], the same k for every lane; ne: entries read a lane,
 * aurp_solve_lanes_entries of the same k, gidx and hidx (computed once for
 * a layout, not per call).  Returns the lanes that
 * kept all k regressors, bit l for lane l (a[l * k + j], j < k, written,
 * bit for bit the scalar result); the caller solves the others with
 * aurp_solve_ldl (a lane whose pivot fails stops at a smaller order
 * there).  Only k = AURP_SOLVE_LANES_ORDER, lsmix's default (6 lags
 * and its six other regressors), has the lane path: compiled for that k
 * alone, the triangular loops unroll and the factors stay in registers
 * (about 13 % of a frame's decoding time); any other k returns 0. */
#define AURP_SOLVE_LANES 8
#define AURP_SOLVE_LANES_ORDER 12
int aurp_solve_ldl_lanes(int k, const uint64_t *G, size_t stride, int ne, const uint16_t *gidx,
                         const uint16_t *hidx, int ridge_shift, double *a);
/* aurp_solve_ldl_lanes over groups of AURP_SOLVE_LANES columns that come
 * left to right, each right after the one before, where a lane's entry may
 * be an entry of a column up to AURP_SOLVE_LANES to its left.  pairs (the
 * caller's, 2 * ne * AURP_SOLVE_LANES words, 64-byte aligned, not read
 * elsewhere) holds, for each entry e < ne, the group before's eight
 * columns and this group's side by side (16 words); lane l's G'[r][s] is
 * word goff[r * k + s] + l of entry e's 16 (goff = 16 e + 8 - d for entry
 * e of the column d to the left), h[j] word hoff[j] + l.  first: no call
 * before (the group before is read from G, stride before). */
int aurp_solve_ldl_lanes_shifted(int k, const uint64_t *G, size_t stride, int ne, const uint16_t *goff,
                                 const uint16_t *hoff, int ridge_shift, void *pairs, int first, double *a);
/* 1 + the largest entry of gidx (r <= s) and hidx: what a lane reads. */
int aurp_solve_lanes_entries(int k, const uint16_t *gidx, const uint16_t *hidx);

/* A ridge system's diagonal entry: the regressor's energy g plus g >> r, a
 * shrinkage in proportion to its own energy (lsmix, FORMAT.md 3.2). */
static inline AURP_HD uint64_t aurp_ridged(uint64_t g, int ridge_shift) { return g + (g >> ridge_shift); }

/* Rounds and clamps a prediction value: floor(v + 0.5) limited to [0, 65535]. */
static inline AURP_HD uint16_t aurp_round_clamp(double v)
{
    double t = v + 0.5;
    if (!(t > 0.0)) return 0; /* also NaN */
    if (t >= 65535.0) return 65535;
    return (uint16_t)(int32_t)t; /* truncation of t > 0 is floor */
}

/* K and R of ALGORITHM.md for column n >= 2 (N = order, M = equations). */
static inline int aurp_order_at(uint32_t n, int N) { return n < (uint32_t)N ? (int)n : N; }
static inline int aurp_rows_at(uint32_t n, int N, int M)
{
    if (n <= (uint32_t)N) return 1;
    uint32_t r = n - (uint32_t)N + 1;
    return r < (uint32_t)M ? (int)r : M;
}

#endif

/* The encoder's fit of the lsmix cascade stage (lsmix_cascade.h): the clip
 * from the median |e1|, and the weights by ridge least squares of the
 * clipped residuals on their lags.  The normal equations are read from the
 * frame's correlations at every difference of two lags (a stationary
 * approximation: about 400 integer dot products over the frame instead of
 * NL^2 / 2 products a pixel), solved by Cholesky in double, and the
 * weights rounded to units of 2^-LSX_CAS_SHIFT.  The correlations are
 * exact integers, and the solve is this one function on the host, so the
 * GPU encoder, which sums the correlations on the device, gets the same
 * weights (research/r10-cascade.md). */
#include <assert.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lsmix.h"

/* Offsets of two lags: dm in 0 .. LSX_CAS_ROWS_MAX once (dm, dn) and its
 * opposite are one, |dn| <= LSX_CAS_NR + the widest half width (16). */
#define PLAN_DN 160
typedef int plan_grid[LSX_CAS_ROWS_MAX + 1][2 * PLAN_DN + 1];

/* Index of the offset (dm, dn) or its opposite in the plan, added if new
 * (grid: the index of every offset seen, -1 before). */
static int offset_index(lsx_cas_plan *pl, plan_grid grid, int dm, int dn)
{
    if (dm < 0 || (dm == 0 && dn < 0)) dm = -dm, dn = -dn;
    int *at = &grid[dm][dn + PLAN_DN];
    if (*at < 0) {
        pl->dm[pl->no] = dm;
        pl->dn[pl->no] = dn;
        *at = pl->no++;
    }
    return *at;
}

void lsx_cas_plan_make(lsx_cas_plan *pl)
{
    static_assert(LSX_CAS_NR + 16 <= PLAN_DN, "the plan's grid holds every column offset");
    static_assert(LSX_CAS_MAXO <= 65536, "solve_pair's 16-bit entries index every offset");
    plan_grid grid;
    memset(grid, 0xff, sizeof grid);
    memset(pl, 0, sizeof *pl);
    offset_index(pl, grid, 0, 0);
    for (int wide = 0; wide <= 1; wide++) { /* the narrow support's offsets first */
        const int nl = pl->sup[wide].nl = lsx_cas_nl(wide);
        for (int a = 0; a < nl; a++) {
            int am, an;
            lsx_cas_lag(wide, a, &am, &an);
            pl->sup[wide].lag[a] = offset_index(pl, grid, am, an);
            for (int b = 0; b < nl; b++) {
                int bm, bn;
                lsx_cas_lag(wide, b, &bm, &bn);
                pl->sup[wide].pair[a * nl + b] = offset_index(pl, grid, bm - am, bn - an);
            }
        }
    }
    /* the solve order: the narrow support's lags as it orders them, then
     * the wide support's others */
    int used[LSX_CAS_NL_MAX] = {0}, p = 0;
    for (int a = 0; a < pl->sup[0].nl; a++) {
        int am, an;
        lsx_cas_lag(0, a, &am, &an);
        for (int b = 0; b < pl->sup[1].nl; b++) {
            int bm, bn;
            lsx_cas_lag(1, b, &bm, &bn);
            if (bm == am && bn == an) pl->order[p++] = b, used[b] = 1;
        }
    }
    for (int b = 0; b < pl->sup[1].nl; b++)
        if (!used[b]) pl->order[p++] = b;
    const int nw = pl->sup[1].nl;
    for (int a = 0; a < nw; a++)
        for (int b = 0; b < nw; b++) pl->solve_pair[a * nw + b] = (uint16_t)pl->sup[1].pair[pl->order[a] * nw + pl->order[b]];
}

/* acc[n] += w e[n], n < len: one lag of the rows above along a row;
 * above_add4: four lags of one row at once, w[j] at e + j (a quarter of
 * the passes over acc: the row 25 % faster) */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define ABOVE_VECTOR __attribute__((target_clones("avx2", "default"), optimize("tree-vectorize")))
#else
#define ABOVE_VECTOR
#endif
ABOVE_VECTOR static void above_add(int32_t *restrict acc, const int16_t *restrict e, int32_t w, size_t len)
{
    for (size_t n = 0; n < len; n++) acc[n] += w * (int32_t)e[n];
}

ABOVE_VECTOR static void above_add4(int32_t *restrict acc, const int16_t *restrict e, const int16_t *w, size_t len)
{
    const int32_t w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3];
    for (size_t n = 0; n < len; n++) acc[n] += w0 * e[n] + w1 * e[n + 1] + w2 * e[n + 2] + w3 * e[n + 3];
}

/* The same integers as lsx_cas_finish's sum over the lags above, lag after
 * lag along the row instead of pixel after pixel (exact int32 sums: the
 * order does not matter): 90 lags pixel by pixel made the decoder 2.9x
 * slower, a row at a time 1-2 % (research/r18-cascade-above.md). */
void lsx_cas_above(const int16_t *w, int wide, const int16_t *erow, uint32_t W, uint32_t m, uint32_t c0,
                   uint32_t c1, int32_t *above)
{
    memset(above + c0, 0, (size_t)(c1 - c0) * sizeof *above);
    const int64_t W64 = W;
    int k = LSX_CAS_NR;
    for (int r = 1; r <= lsx_cas_rows_up(wide); k += 2 * lsx_cas_half(wide, r) + 1, r++) {
        const int h = lsx_cas_half(wide, r);
        if ((uint32_t)r > m) break; /* above the frame: 0 */
        const int16_t *row = erow - (size_t)r * W;
        /* lag k + j of this row is (r, j - h): pixel n reads row[n + h - j] */
        int j = 0;
        for (; j + 4 <= 2 * h + 1; j += 4) {
            /* lags j .. j + 3 read columns n + h - j - 3 .. n + h - j, all
             * inside the row for n in [n0, n1); at the edges one by one */
            const int16_t w4[4] = {w[k + j + 3], w[k + j + 2], w[k + j + 1], w[k + j]};
            int64_t n0 = j + 3 - h, n1 = W64 - h + j;
            if (n0 < (int64_t)c0) n0 = c0;
            if (n1 > (int64_t)c1) n1 = c1;
            if (n1 > n0) above_add4(above + n0, row + n0 + h - j - 3, w4, (size_t)(n1 - n0));
            for (int64_t n = c0; n < c1; n++) {
                if (n >= n0 && n < n1) {
                    n = n1 - 1;
                    continue;
                }
                for (int q = j; q < j + 4; q++) {
                    const int64_t col = n + h - q;
                    if (col >= 0 && col < W64) above[n] += (int32_t)w[k + q] * row[col];
                }
            }
        }
        for (; j < 2 * h + 1; j++) {
            int64_t n0 = j - h, n1 = W64 - h + j;
            if (n0 < (int64_t)c0) n0 = c0;
            if (n1 > (int64_t)c1) n1 = c1;
            if (n1 > n0) above_add(above + n0, row + n0 + h - j, w[k + j], (size_t)(n1 - n0));
        }
    }
}

int32_t lsx_cas_clip(const uint32_t *abs_hist, uint64_t count)
{
    uint64_t acc = 0, half = count / 2;
    uint32_t md = 0;
    for (; md < 65535; md++)
        if ((acc += abs_hist[md]) > half) break;
    return lsx_cas_clip_of_median(md);
}

int64_t lsx_cas_correlation(const int16_t *ec, uint32_t W, uint32_t H, int dm, int dn)
{
    int64_t sum = 0;
    for (uint32_t m = dm > 1 ? (uint32_t)dm : 1; m < H; m++) {
        const int16_t *r = ec + (size_t)m * W, *q = ec + (size_t)(m - dm) * W;
        const int64_t n0 = dn > 0 ? dn : 0, n1 = dn < 0 ? (int64_t)W + dn : (int64_t)W;
        int64_t t = 0;
        for (int64_t n = n0; n < n1; n++) t += (int32_t)r[n] * (int32_t)q[n - dn];
        sum += t;
    }
    return sum;
}

/* Entries i0 .. i0 + rows - 1 of columns j0 .. j0 + CHOL_COLS - 1 of the
 * factor, the part of the sums from the columns k < j0: t_ij = A_ij -
 * sum_{k<j0} L[i][k] L[j][k], the products subtracted in increasing k
 * (each lane does its entry's operations exactly as alone).  Each step is
 * one fused multiply-subtract, fma(-l, b, t), rounded once: C's fma is
 * correctly rounded everywhere (the x86-64-v3 and v4 clones' FMA
 * instructions; on a CPU without them libm's, in software, slower but the
 * same bits), so the factor is the same on every machine, with half the
 * instructions of a product and a difference (lsx_cas_choose 0.195 ->
 * 0.172 ms on the Debian machine; the weights' hash over 120 systems and
 * the 14 bench frames' sizes did not move).  The weights are the encoder's
 * (the stream carries them), so this is no format rule; the decoder's
 * arithmetic has no FMA.  Each L[i][k] loaded serves
 * the panel's four columns, the sums stay in registers.  L[i][k] at A[k
 * stride + i].  Blocks of 32 rows where the CPU has AVX-512 (the sums in
 * 16 of its 32 vector registers: lsx_cas_choose 0.33 -> 0.24 ms on the GPU
 * machine's host, where it sits on the GPU encoder's cascade trial, 0.23
 * -> 0.19 on the Debian machine), else 8 (16 rows without AVX-512 were
 * slower: 0.23 -> 0.25 ms). */
#define CHOL_COLS 4
#define CHOL_ROWS_MAX 32 /* the widest block: the rows' margin in the stride */
static inline __attribute__((always_inline)) void panel_block_rows(double *A, int stride, int j0, int i0,
                                                                   const int rows)
{
    double t[CHOL_COLS][CHOL_ROWS_MAX];
    for (int c = 0; c < CHOL_COLS; c++)
        for (int q = 0; q < rows; q++) t[c][q] = A[(size_t)(j0 + c) * stride + i0 + q];
    for (int k = 0; k < j0; k++) {
        const double *l = A + (size_t)k * stride + i0, *b = A + (size_t)k * stride + j0;
#pragma GCC unroll 4
        for (int c = 0; c < CHOL_COLS; c++) {
            const double bc = b[c];
#pragma GCC unroll 8
            for (int q = 0; q < rows; q++) t[c][q] = fma(-l[q], bc, t[c][q]);
        }
    }
    for (int c = 0; c < CHOL_COLS; c++)
        for (int q = 0; q < rows; q++) A[(size_t)(j0 + c) * stride + i0 + q] = t[c][q];
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("arch=x86-64-v3", "default"), optimize("tree-vectorize")))
#endif
static void panel_block8(double *A, int stride, int j0, int i0) { panel_block_rows(A, stride, j0, i0, 8); }

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define CHOL_WIDE_BLOCKS 1
__attribute__((target("arch=x86-64-v4"), optimize("tree-vectorize")))
static void panel_block32(double *A, int stride, int j0, int i0) { panel_block_rows(A, stride, j0, i0, 32); }
#endif

/* The rows of a panel block: 32 (panel_block32) where the CPU runs
 * x86-64-v4, else 8 (panel_block8). */
static int chol_rows(void)
{
#ifdef CHOL_WIDE_BLOCKS
    __builtin_cpu_init();
    if (__builtin_cpu_supports("x86-64-v4")) return 32;
#endif
    return 8;
}

/* x / d, correctly rounded, from y = 1 / d (correctly rounded): q = x y
 * is within an ulp of x / d, the residual x - q d is exact by fma, and q
 * + (x - q d) y rounded once is x / d rounded (Markstein's theorem; the
 * same as the division on 2e8 random pairs, significands of all ones
 * among them, and the weights' hash over 120 systems unchanged).  A
 * product and two fmas where a column's divisions cost a fifth of the
 * factor (one division a vector of 8 every 16 cycles on the AVX-512
 * machines). */
static inline __attribute__((always_inline)) double quotient(double x, double d, double y)
{
    const double q = x * y;
    return fma(fma(-q, d, x), y, q);
}

/* Cholesky factor of the SPD system A (n x n, symmetric; A overwritten),
 * A with n + CHOL_COLS rows `stride` >= n + CHOL_ROWS_MAX apart, zero beyond
 * the n x n system; returns the columns factored (n, or the first whose
 * pivot is not positive).  The factor L is kept transposed (L[i][k] at A[k
 * stride + i], k <= i), so that column j's entries below the diagonal are
 * one row of A.  Each entry, the diagonal's too, is A_ij - sum_{k<j}
 * L[i][k] L[j][k], the products subtracted in increasing k (fused, as in
 * panel_block_rows), then the diagonal's square root and the column
 * divided by it (quotient): the same
 * operations in the same order as entry by entry, in panels of CHOL_COLS
 * columns (panel_block their sums over the columns before the panel, then
 * the panel's own columns one by one). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), optimize("tree-vectorize")))
#endif
static int cholesky_factor(int n, int stride, double *A)
{
    const int rows = chol_rows();
    for (int j0 = 0; j0 < n; j0 += CHOL_COLS) {
        /* rows j0 .. (those above the diagonal of the panel's later columns
         * are computed and never read; the last block runs into the zero
         * columns, the last panel into the zero rows) */
        for (int i0 = j0; i0 < n;) {
#ifdef CHOL_WIDE_BLOCKS
            /* (the rows past the last whole block of 32 in blocks of 8: 32
             * there computed up to 31 rows of the zero margin) */
            if (rows == 32 && n - i0 > 24) {
                panel_block32(A, stride, j0, i0);
                i0 += 32;
                continue;
            }
#endif
            panel_block8(A, stride, j0, i0);
            i0 += 8;
        }
        for (int j = j0; j < j0 + CHOL_COLS && j < n; j++) {
            double *col = A + (size_t)j * stride; /* col[i], i >= j: A_ij, then L[i][j] */
            for (int k = j0; k < j; k++) {
                const double *l = A + (size_t)k * stride, b = l[j];
                for (int i = j; i < n; i++) col[i] = fma(-l[i], b, col[i]);
            }
            double d = col[j];
            if (!(d > 0)) return j;
            d = sqrt(d);
            col[j] = d;
            const double y = 1.0 / d;
            for (int i = j + 1; i < n; i++) col[i] = quotient(col[i], d, y);
        }
    }
    return n;
}

/* w from L L' w = h with the factor's leading m x m block (as
 * cholesky_factor left it): the solution of the leading m x m system.
 * Each row subtracts its products in one fixed order: the forward
 * substitution in increasing k, the backward one in decreasing k, so that
 * in both the products of the unknowns already known come first.  Rows go
 * in blocks of SUBST_ROWS: a block's rows first subtract those products
 * side by side (independent chains of subtractions; one row's chain
 * alone waited on each subtraction), then the block's own, row by row.
 * (The backward order was increasing k before: a row's first product
 * then needed the unknown just solved, so no two rows' chains overlapped;
 * research/README.md round 32.) */
#define SUBST_ROWS 8
static void cholesky_substitute(const double *A, int stride, int m, const double *h, double *w)
{
    for (int i0 = 0; i0 < m; i0 += SUBST_ROWS) {
        const int rows = m - i0 < SUBST_ROWS ? m - i0 : SUBST_ROWS;
        double t[SUBST_ROWS];
        for (int r = 0; r < SUBST_ROWS; r++) t[r] = r < rows ? h[i0 + r] : 0.0;
        for (int k = 0; k < i0; k++) { /* (rows past m: the stride's margin, never used) */
            const double *l = A + (size_t)k * stride + i0, wk = w[k]; /* L[i0 + r][k] */
#pragma GCC unroll 8
            for (int r = 0; r < SUBST_ROWS; r++) t[r] = t[r] - l[r] * wk;
        }
        for (int r = 0; r < rows; r++) {
            const int i = i0 + r;
            for (int k = i0; k < i; k++) t[r] = t[r] - A[(size_t)k * stride + i] * w[k];
            w[i] = t[r] / A[(size_t)i * stride + i];
        }
    }
    for (int i1 = m; i1 > 0; i1 -= SUBST_ROWS) { /* rows i0 .. i1 - 1 */
        const int i0 = i1 > SUBST_ROWS ? i1 - SUBST_ROWS : 0, rows = i1 - i0;
        double t[SUBST_ROWS];
        for (int r = 0; r < SUBST_ROWS; r++) t[r] = r < rows ? w[i0 + r] : 0.0;
        for (int k = m - 1; k >= i1; k--) { /* (the first block's rows past i1: rows of A, never used) */
            const double wk = w[k];
#pragma GCC unroll 8
            for (int r = 0; r < SUBST_ROWS; r++) t[r] = t[r] - A[(size_t)(i0 + r) * stride + k] * wk; /* L[k][i0 + r] */
        }
        for (int r = rows - 1; r >= 0; r--) {
            const int i = i0 + r;
            for (int k = i1 - 1; k > i; k--) t[r] = t[r] - A[(size_t)i * stride + k] * w[k];
            w[i] = t[r] / A[(size_t)i * stride + i];
        }
    }
}

/* v's stage from the weights w (lag order of the support): in units of
 * 2^-S, scaled down where sum |w| (clip + 1) would reach 2^31. */
static void set_weights(const double *w, int wide, int32_t clip, lsx_view *v)
{
    const int nl = lsx_cas_nl(wide);
    const double unit = (double)(1 << LSX_CAS_SHIFT), lim = 2147483647.0;
    double sw = 0;
    for (int j = 0; j < nl; j++) sw += fabs(w[j]) * unit + 1;
    const double sc = sw * (double)(clip + 1) > lim ? lim / (double)(clip + 1) / sw : 1.0;
    for (int j = 0; j < nl; j++) {
        double q = floor(sc * w[j] * unit + 0.5);
        v->cas_w[j] = (int16_t)(q > 32767 ? 32767 : q < -32768 ? -32768 : q);
    }
    for (int j = 0; j < LSX_CAS_NR; j++) v->cas_wrev[LSX_CAS_NR - 1 - j] = v->cas_w[j];
    v->cas_clip = clip;
    v->cas_wide = wide;
    v->cas = 1;
}

/* The clipped residuals' energy the weights of v leave (as sent, in units
 * of 2^-S), from the correlations: sum (e - sum_a w_a e_a)^2 = R0 - 2 w.h
 * + w'Aw, one fixed sequence of double operations: t_a = sum_b A_ab w_b
 * in increasing b, then e in increasing a.  The t_a of ENERGY_ROWS rows
 * are summed side by side, each in its own order (the same operations:
 * one row's chain of additions alone waited on each addition, 15 % of
 * lsx_cas_choose). */
#define ENERGY_ROWS 8
static double residual_energy(const lsx_cas_plan *pl, const int64_t *R, const lsx_view *v)
{
    const int nl = pl->sup[v->cas_wide].nl;
    const int *pair = pl->sup[v->cas_wide].pair, *lag = pl->sup[v->cas_wide].lag;
    double w[LSX_CAS_NL_MAX], t[LSX_CAS_NL_MAX];
    for (int j = 0; j < nl; j++) w[j] = (double)v->cas_w[j] / (double)(1 << LSX_CAS_SHIFT);
    for (int a = 0; a < nl; a += ENERGY_ROWS) {
        /* (the last block's rows past nl repeat row nl - 1, never used) */
        const int *row[ENERGY_ROWS];
        for (int r = 0; r < ENERGY_ROWS; r++) row[r] = pair + (size_t)(a + r < nl ? a + r : nl - 1) * nl;
        double s[ENERGY_ROWS] = {0};
        for (int b = 0; b < nl; b++) {
            const double wb = w[b];
#pragma GCC unroll 8
            for (int r = 0; r < ENERGY_ROWS; r++) s[r] = s[r] + (double)R[row[r][b]] * wb;
        }
        for (int r = 0; r < ENERGY_ROWS && a + r < nl; r++) t[a + r] = s[r];
    }
    double e = (double)R[0];
    for (int a = 0; a < nl; a++) e = e - 2.0 * w[a] * (double)R[lag[a]] + w[a] * t[a];
    return e;
}

/* log2(r), r > 0, by basic operations only (no libm: the encoders' choice
 * must not depend on a library's rounding): r = 2^k f exactly, f in
 * [1/sqrt 2, sqrt 2), ln f = 2 atanh(x), x = (f - 1) / (f + 1), |x| <
 * 0.172, by five terms (error below 3e-9). */
static double log2_basic(double r)
{
    int k;
    double f = frexp(r, &k); /* exact: f in [0.5, 1) */
    if (f < 0.70710678118654752) f = f * 2.0, k--;
    const double x = (f - 1.0) / (f + 1.0), x2 = x * x;
    const double s = x * (1.0 + x2 * (1.0 / 3 + x2 * (1.0 / 5 + x2 * (1.0 / 7 + x2 * (1.0 / 9)))));
    return (double)k + 2.0 * s / 0.69314718055994531;
}

size_t lsx_cas_work_doubles(void) { return (size_t)(LSX_CAS_NL_MAX + CHOL_COLS) * (LSX_CAS_NL_MAX + CHOL_ROWS_MAX); }

int lsx_cas_solve(const lsx_cas_plan *pl, const int64_t *R, int32_t clip, const lsx_view *v, double *work,
                  lsx_cas_solution *s)
{
    /* one factor for both supports: the wide support's system in the
     * plan's solve order, whose leading block is the narrow support's
     * system in its own lag order (so its weights are those of the narrow
     * system solved alone, bit for bit) */
    const int nn = pl->sup[0].nl, nw = LSX_CAS_WIDE ? pl->sup[1].nl : nn;
    const int *lag = pl->sup[1].lag;
    s->stride = nw + CHOL_ROWS_MAX;
    s->wide = *v;
    s->wide.cas = 0;
    s->done = 0;
    s->owned = !work;
    s->A = work ? work : calloc((size_t)(nw + CHOL_COLS) * s->stride, sizeof *s->A);
    if (!s->A) return 0;
    /* the lower triangle (row q >= p of column p): the factor's results
     * read no other.  Its blocks also read the rows past nw and the columns
     * past nw (zero from calloc, and they stay zero) and a panel's rows
     * above the diagonal (zeroed here: the factor writes them) */
    for (int p = 0; p < nw; p++) {
        const uint16_t *row = pl->solve_pair + p * pl->sup[1].nl;
        double *col = s->A + (size_t)p * s->stride;
        for (int q = p / CHOL_COLS * CHOL_COLS; q < p; q++) col[q] = 0;
        for (int q = p; q < nw; q++) col[q] = (double)R[row[q]];
        col[p] = col[p] + 1e-3 * (double)R[0] + 1.0; /* the ridge */
        s->h[p] = (double)R[lag[pl->order[p]]];
    }
    s->done = cholesky_factor(nw, s->stride, s->A);
    if (s->done == nw && nw > nn) {
        double w[LSX_CAS_NL_MAX], wl[LSX_CAS_NL_MAX];
        cholesky_substitute(s->A, s->stride, nw, s->h, w);
        for (int p = 0; p < nw; p++) wl[pl->order[p]] = w[p];
        set_weights(wl, 1, clip, &s->wide);
    }
    return 1;
}

int lsx_cas_decide(const lsx_cas_plan *pl, const int64_t *R, int32_t clip, uint64_t pixels, lsx_cas_solution *s,
                   lsx_view *v)
{
    const lsx_view wv = s->wide;
    lsx_view nv = *v;
    v->cas = 0;
    nv.cas = 0;
    if (s->A && s->done >= pl->sup[0].nl) {
        double w[LSX_CAS_NL_MAX];
        cholesky_substitute(s->A, s->stride, pl->sup[0].nl, s->h, w);
        set_weights(w, 0, clip, &nv);
    }
    if (s->owned) free(s->A);
    s->A = NULL;
    if (nv.cas && wv.cas) {
        /* per pixel, a residual's code length moves by half the log of its
         * variance's ratio; the wide support costs its extra weights */
        const double en = residual_energy(pl, R, &nv), ew = residual_energy(pl, R, &wv);
        const double gain = en > 0 && ew > 0 ? 0.5 * (double)pixels * log2_basic(en / ew) : 0;
        const double cost = 8.0 * ((double)lsx_cas_bytes(&wv) - (double)lsx_cas_bytes(&nv));
        *v = gain > cost ? wv : nv;
    } else if (nv.cas || wv.cas) {
        *v = nv.cas ? nv : wv;
    }
    return v->cas;
}

int lsx_cas_choose(const lsx_cas_plan *pl, const int64_t *R, int32_t clip, uint64_t pixels, lsx_view *v)
{
    lsx_cas_solution s;
    v->cas = 0;
    return lsx_cas_solve(pl, R, clip, v, NULL, &s) && lsx_cas_decide(pl, R, clip, pixels, &s, v);
}

/* A row's products r[n] q[n], n < len: in 32 bits where the caller knows
 * they cannot overflow (the vector multiply-adds of 16-bit pairs), else
 * in 64. */
ABOVE_VECTOR static int32_t dot32(const int16_t *restrict r, const int16_t *restrict q, size_t len)
{
    int32_t t = 0;
    for (size_t n = 0; n < len; n++) t += (int32_t)r[n] * (int32_t)q[n];
    return t;
}

ABOVE_VECTOR static int64_t dot64(const int16_t *restrict r, const int16_t *restrict q, size_t len)
{
    int64_t t = 0;
    for (size_t n = 0; n < len; n++) t += (int32_t)r[n] * (int32_t)q[n];
    return t;
}

/* The correlations of the plan's offsets on threads: each thread takes
 * blocks of CORR_ROWS rows (with the 6 above them, in cache) for every
 * offset and keeps its own sums, added at the end (integers: exact in any
 * order).  An offset a thread over the whole frame read the frame from
 * memory once an offset: with the wide support's 1051 offsets the pack
 * took 0.49 -> 0.66 s. */
#define CORR_ROWS 16
typedef struct {
    const lsx_cas_plan *pl;
    const int16_t *ec;
    uint32_t W, H;
    int narrow; /* every row's sum fits in 32 bits: W clip^2 < 2^31 */
    int threads;
    int64_t *part; /* [threads][LSX_CAS_MAXO] */
} corr_job;

static void correlations_from(void *arg, int worker)
{
    const corr_job *j = arg;
    const lsx_cas_plan *pl = j->pl;
    int64_t *R = j->part + (size_t)worker * LSX_CAS_MAXO;
    memset(R, 0, sizeof *R * (size_t)pl->no);
    for (uint64_t m0 = (uint64_t)worker * CORR_ROWS; m0 < j->H; m0 += (uint64_t)j->threads * CORR_ROWS) {
        const uint32_t m1 = m0 + CORR_ROWS < j->H ? (uint32_t)m0 + CORR_ROWS : j->H;
        for (int k = 0; k < pl->no; k++) {
            const int dm = pl->dm[k], dn = pl->dn[k];
            const int64_t n0 = dn > 0 ? dn : 0, n1 = dn < 0 ? (int64_t)j->W + dn : (int64_t)j->W;
            if (n1 <= n0) continue;
            const uint32_t first = dm > 1 ? (uint32_t)dm : 1;
            for (uint32_t m = m0 > first ? (uint32_t)m0 : first; m < m1; m++) {
                const int16_t *r = j->ec + (size_t)m * j->W + n0, *q = j->ec + (size_t)(m - dm) * j->W + n0 - dn;
                R[k] += j->narrow ? dot32(r, q, (size_t)(n1 - n0)) : dot64(r, q, (size_t)(n1 - n0));
            }
        }
    }
}

int lsx_cas_correlations(const lsx_cas_plan *pl, const int16_t *ec, uint32_t W, uint32_t H, int32_t clip,
                         int threads, int64_t *R)
{
    if (threads < 1) threads = 1;
    int64_t *part = malloc(sizeof *part * LSX_CAS_MAXO * (size_t)threads);
    if (!part) return -1;
    corr_job j = {pl, ec, W, H, (uint64_t)clip * (uint64_t)clip * W < ((uint64_t)1 << 31), threads, part};
    if (aurp_parallel(threads, correlations_from, &j) != 0) {
        j.threads = threads = 1;
        correlations_from(&j, 0);
    }
    for (int k = 0; k < pl->no; k++) {
        R[k] = 0;
        for (int w = 0; w < threads; w++) R[k] += part[(size_t)w * LSX_CAS_MAXO + k];
    }
    free(part);
    return 0;
}

int lsx_cas_fit(lsx_view *v, const int32_t *e1, int16_t *ec, int threads)
{
    const uint32_t W = v->W, H = v->H;
    const uint64_t pixels = (uint64_t)W * H;
    v->cas = 0;
    if (H < 2) return 0;
    uint32_t *hist = calloc(65536, sizeof *hist);
    lsx_cas_plan *pl = malloc(sizeof *pl);
    int64_t *R = malloc(sizeof *R * LSX_CAS_MAXO);
    int ok = 0;
    if (hist && pl && R) {
        for (uint64_t i = W; i < pixels; i++) {
            uint32_t a = (uint32_t)(e1[i] < 0 ? -e1[i] : e1[i]);
            hist[a > 65535 ? 65535 : a]++;
        }
        const int32_t clip = lsx_cas_clip(hist, pixels - W);
        for (uint64_t i = 0; i < pixels; i++) ec[i] = lsx_cas_clipped(e1[i], clip);
        lsx_cas_plan_make(pl);
        ok = lsx_cas_correlations(pl, ec, W, H, clip, threads, R) == 0 && lsx_cas_choose(pl, R, clip, pixels - W, v);
    }
    free(hist);
    free(pl);
    free(R);
    return ok;
}

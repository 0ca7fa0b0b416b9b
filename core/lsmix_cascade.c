/* The encoder's fit of the lsmix cascade stage (lsmix_cascade.h): the clip
 * from the median |e1|, and the weights by ridge least squares of the
 * clipped residuals on their lags.  The normal equations are read from the
 * frame's correlations at every difference of two lags (a stationary
 * approximation: about 400 integer dot products over the frame instead of
 * NL^2 / 2 products a pixel), solved by conjugate gradients in double
 * (lsmix_cascade_cg.h), and the weights rounded to units of
 * 2^-LSX_CAS_SHIFT.  The correlations are exact integers and the solve one
 * fixed sequence of operations, so the GPU encoder, which sums the
 * correlations and fits the wide support on the device, gets the same
 * weights (research/r10-cascade.md). */
#include <assert.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lsmix.h"
#include "lsmix_cascade_cg.h"

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
    static_assert(LSX_CAS_MAXO <= 65536, "the pairs' 16-bit entries index every offset");
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
                pl->sup[wide].pair[a * nl + b] = (uint16_t)offset_index(pl, grid, bm - am, bn - an);
            }
        }
    }
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

/* The weights of support `wide` by conjugate gradients, the sequence of
 * lsmix_cascade_cg.h (the GPU encoder's kernel runs it too): 1 and w (lag
 * order), or 0 where the system is not positive definite along the way. */
static double cg_dot(const double *u, const double *v, int n)
{
    double t[LSX_CAS_CG_LEAVES];
    for (int i = 0; i < LSX_CAS_CG_LEAVES; i++) t[i] = i < n ? u[i] * v[i] : 0.0;
    for (int h = LSX_CAS_CG_LEAVES / 2; h >= 1; h >>= 1)
        for (int i = 0; i < h; i++) t[i] = t[i] + t[i + h];
    return t[0];
}

/* q = A p, lsx_cas_cg_part's operations for each row, CG_ROWS rows side by
 * side (a row's four partial sums are chains of additions each, and one
 * row alone waited on them: lsx_cas_choose 0.40-0.52 ms against 0.50-0.73
 * on the Debian machine) */
#define CG_ROWS 8
static void cg_product(const uint16_t *pair, const double *rd, double diag, int n, const double *p, double *q)
{
    for (int a0 = 0; a0 < n; a0 += CG_ROWS) {
        const uint16_t *row[CG_ROWS];
        for (int i = 0; i < CG_ROWS; i++) row[i] = pair + (size_t)(a0 + i < n ? a0 + i : n - 1) * n; /* (past n: never used) */
        double s[LSX_CAS_CG_PARTS][CG_ROWS] = {{0}};
        for (int b0 = 0; b0 < n; b0 += LSX_CAS_CG_PARTS)
            for (int k = 0; k < LSX_CAS_CG_PARTS && b0 + k < n; k++) {
                const int b = b0 + k;
                const double pb = p[b];
#pragma GCC unroll 8
                for (int i = 0; i < CG_ROWS; i++) s[k][i] = s[k][i] + lsx_cas_cg_entry(row[i], rd, diag, a0 + i, b) * pb;
            }
        for (int i = 0; i < CG_ROWS && a0 + i < n; i++) q[a0 + i] = (s[0][i] + s[1][i]) + (s[2][i] + s[3][i]);
    }
}

static int cg_solve(const lsx_cas_plan *pl, int wide, const int64_t *R, double *w)
{
    const int n = pl->sup[wide].nl;
    double rd[LSX_CAS_MAXO], r[LSX_CAS_NL_MAX], p[LSX_CAS_NL_MAX], q[LSX_CAS_NL_MAX];
    for (int o = 0; o < pl->no; o++) rd[o] = (double)R[o];
    const double diag = lsx_cas_cg_diag(R[0]);
    for (int a = 0; a < n; a++) w[a] = 0.0, r[a] = p[a] = rd[pl->sup[wide].lag[a]];
    double rr = cg_dot(r, r, n);
    const double tol = rr * LSX_CAS_CG_TOL;
    for (int it = 0; it < LSX_CAS_CG_MAX_ITERS && rr > tol; it++) {
        cg_product(pl->sup[wide].pair, rd, diag, n, p, q);
        const double pq = cg_dot(p, q, n);
        if (!(pq > 0)) return 0;
        const double al = rr / pq;
        for (int a = 0; a < n; a++) w[a] = w[a] + al * p[a], r[a] = r[a] - al * q[a];
        const double rn = cg_dot(r, r, n), be = rn / rr;
        rr = rn;
        for (int a = 0; a < n; a++) p[a] = r[a] + be * p[a];
    }
    return 1;
}

/* v's stage from the weights w (lag order of the support): in units of
 * 2^-S, scaled down where sum |w| (clip + 1) would reach 2^31. */
void lsx_cas_set_stage(const int16_t *w, int wide, int32_t clip, lsx_view *v)
{
    for (int j = 0; j < lsx_cas_nl(wide); j++) v->cas_w[j] = w[j];
    for (int j = 0; j < LSX_CAS_NR; j++) v->cas_wrev[LSX_CAS_NR - 1 - j] = w[j];
    v->cas_clip = clip;
    v->cas_wide = wide;
    v->cas = 1;
}

static void set_weights(const double *w, int wide, int32_t clip, lsx_view *v)
{
    const int nl = lsx_cas_nl(wide);
    const double sc = lsx_cas_scale(w, nl, clip);
    int16_t q[LSX_CAS_NL_MAX];
    for (int j = 0; j < nl; j++) q[j] = lsx_cas_quantize(w[j], sc);
    lsx_cas_set_stage(q, wide, clip, v);
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
    const uint16_t *pair = pl->sup[v->cas_wide].pair;
    const int *lag = pl->sup[v->cas_wide].lag;
    double w[LSX_CAS_NL_MAX], t[LSX_CAS_NL_MAX];
    for (int j = 0; j < nl; j++) w[j] = (double)v->cas_w[j] / (double)(1 << LSX_CAS_SHIFT);
    for (int a = 0; a < nl; a += ENERGY_ROWS) {
        /* (the last block's rows past nl repeat row nl - 1, never used) */
        const uint16_t *row[ENERGY_ROWS];
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

void lsx_cas_solve(const lsx_cas_plan *pl, const int64_t *R, int32_t clip, const lsx_view *v, lsx_view *wide)
{
    double w[LSX_CAS_NL_MAX];
    *wide = *v;
    wide->cas = 0;
    if (LSX_CAS_WIDE && cg_solve(pl, 1, R, w)) set_weights(w, 1, clip, wide);
}

int lsx_cas_decide(const lsx_cas_plan *pl, const int64_t *R, int32_t clip, uint64_t pixels, const lsx_view *wide,
                   lsx_view *v)
{
    const lsx_view wv = *wide;
    lsx_view nv = *v;
    v->cas = 0;
    nv.cas = 0;
    double w[LSX_CAS_NL_MAX];
    if (cg_solve(pl, 0, R, w)) set_weights(w, 0, clip, &nv);
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
    lsx_view wide;
    v->cas = 0;
    lsx_cas_solve(pl, R, clip, v, &wide);
    return lsx_cas_decide(pl, R, clip, pixels, &wide, v);
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

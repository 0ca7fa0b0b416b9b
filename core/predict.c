/* Reference implementation of the prediction rules of docs/FORMAT.md.
 * Every floating-point operation here is part of the format: change its
 * order and old streams no longer decode.  Build with -ffp-contract=off. */
#include "predict.h"

#include <stdlib.h>
#include <string.h>

int aurp_predictor_init(aurp_predictor *p, uint32_t width, int order, int equations,
                        uint32_t c0, uint32_t c1)
{
    memset(p, 0, sizeof *p);
    if (order < 1 || order > AURP_MAX_ORDER || equations < 1 || equations > AURP_MAX_EQUATIONS ||
        c0 >= c1 || c1 > width)
        return -1;
    uint32_t halo = (uint32_t)(order + equations - 1);
    p->width = width;
    p->order = order;
    p->equations = equations;
    p->c0 = c0;
    p->c1 = c1;
    p->lo = c0 > halo ? c0 - halo : 0;
    p->span = c1 - p->lo;
    size_t lags = (size_t)order + 1;
    p->colsum = calloc(lags * p->span, sizeof *p->colsum);
    p->prefix = calloc(lags * ((size_t)p->span + 1), sizeof *p->prefix);
    p->coef = calloc((size_t)(c1 - c0) * (size_t)order, sizeof *p->coef);
    p->kused = calloc(c1 - c0, 1);
    p->wsum = calloc(lags * ((size_t)p->span + 1), sizeof *p->wsum);
    if (!p->colsum || !p->prefix || !p->coef || !p->kused || !p->wsum) {
        aurp_predictor_free(p);
        return -1;
    }
    return 0;
}

void aurp_predictor_free(aurp_predictor *p)
{
    free(p->colsum);
    free(p->prefix);
    free(p->coef);
    free(p->kused);
    free(p->wsum);
    memset(p, 0, sizeof *p);
}

void aurp_predictor_add_row(aurp_predictor *p, const uint16_t *row)
{
    /* Products x[q]*x[q+d] whose right factor lies beyond the band are never
     * used (no window of a column < c1 reaches them), so they stay 0. */
    for (int d = 0; d <= p->order; d++) {
        uint64_t *cs = p->colsum + (size_t)d * p->span;
        for (uint32_t q = p->lo; q + (uint32_t)d < p->c1; q++)
            cs[q - p->lo] += (uint64_t)row[q] * row[q + (uint32_t)d];
    }
    p->rows++;
}

int aurp_solve_ldl(int k, const uint64_t *G, const uint64_t *h, double *a)
{
    double A[AURP_MAX_ORDER][AURP_MAX_ORDER];
    double L[AURP_MAX_ORDER][AURP_MAX_ORDER];
    double U[AURP_MAX_ORDER];
    double invD[AURP_MAX_ORDER];
    double y[AURP_MAX_ORDER];

    for (int r = 0; r < k; r++)
        for (int s = r; s < k; s++)
            A[s][r] = (double)G[r * k + s]; /* lower triangle, A[j][i] with i <= j */

    int kk = k;
    for (int j = 0; j < k; j++) {
        for (int i = 0; i < j; i++) {
            double t = A[j][i];
            for (int l = 0; l < i; l++) t = t - U[l] * L[i][l];
            U[i] = t;
            L[j][i] = t * invD[i];
        }
        double d = A[j][j];
        for (int l = 0; l < j; l++) d = d - U[l] * L[j][l];
        if (!(d > A[j][j] * AURP_PIVOT_REL)) { /* dependent column: stop at order j */
            kk = j;
            break;
        }
        invD[j] = 1.0 / d;
    }

    for (int j = 0; j < kk; j++) {
        double t = (double)h[j];
        for (int l = 0; l < j; l++) t = t - L[j][l] * y[l];
        y[j] = t;
    }
    for (int j = kk - 1; j >= 0; j--) {
        double t = y[j] * invD[j];
        for (int l = j + 1; l < kk; l++) t = t - L[l][j] * a[l];
        a[j] = t;
    }
    return kk;
}

#define LANES 4
typedef double lanes_t __attribute__((vector_size(LANES * sizeof(double))));
typedef long long lmask_t __attribute__((vector_size(LANES * sizeof(long long))));

/* Eight systems a call: two AVX2 registers (or one AVX-512 one) a step, so
 * that the dependent subtraction chains of two groups overlap. */
#define GLANES AURP_SOLVE_LANES
typedef double glanes_t __attribute__((vector_size(GLANES * sizeof(double))));
typedef long long gmask_t __attribute__((vector_size(GLANES * sizeof(long long))));

typedef unsigned long long gwords_t __attribute__((vector_size(GLANES * sizeof(unsigned long long))));

/* T[e][l] = G[l * stride + e] for e < ne: lane l's entries side by side,
 * eight entries at a time by an 8 x 8 transpose of whole-vector loads (the
 * lanes lie a column's entries apart; loading lane by lane into a vector
 * cost more than the solve), the last ne % 8 one by one. */
static inline __attribute__((always_inline)) void transpose_lanes(const uint64_t *G, size_t stride, int ne,
                                                                  gwords_t *T, const int tstep)
{
    _Static_assert(GLANES == 8, "the transpose is 8 x 8");
/* (GCC 12 and clang both have __builtin_shufflevector; the fuzzers build with clang) */
#define LO2(a, b) __builtin_shufflevector(a, b, 0, 8, 2, 10, 4, 12, 6, 14)
#define HI2(a, b) __builtin_shufflevector(a, b, 1, 9, 3, 11, 5, 13, 7, 15)
#define LO4(a, b) __builtin_shufflevector(a, b, 0, 1, 8, 9, 4, 5, 12, 13)
#define HI4(a, b) __builtin_shufflevector(a, b, 2, 3, 10, 11, 6, 7, 14, 15)
#define LO8(a, b) __builtin_shufflevector(a, b, 0, 1, 2, 3, 8, 9, 10, 11)
#define HI8(a, b) __builtin_shufflevector(a, b, 4, 5, 6, 7, 12, 13, 14, 15)
    int e0 = 0;
    for (; e0 + 8 <= ne; e0 += 8) {
        gwords_t r[8], t[8], u[8];
#pragma GCC unroll 8
        for (int l = 0; l < 8; l++) memcpy(&r[l], G + l * stride + e0, sizeof r[l]);
#pragma GCC unroll 8
        for (int i = 0; i < 8; i += 2) { /* lanes i, i+1: their even and their odd entries */
            t[i] = LO2(r[i], r[i + 1]);
            t[i + 1] = HI2(r[i], r[i + 1]);
        }
#pragma GCC unroll 8
        for (int i = 0; i < 8; i += 4) /* lanes i..i+3: entries {0,4} {1,5} {2,6} {3,7} at u[i..i+3] */
#pragma GCC unroll 2
            for (int o = 0; o < 2; o++) {
                u[i + o] = LO4(t[i + o], t[i + o + 2]);
                u[i + o + 2] = HI4(t[i + o], t[i + o + 2]);
            }
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++) { /* all eight lanes */
            T[(e0 + j) * tstep] = LO8(u[j], u[j + 4]);
            T[(e0 + j + 4) * tstep] = HI8(u[j], u[j + 4]);
        }
    }
    for (; e0 < ne; e0++)
        for (int l = 0; l < GLANES; l++) T[e0 * tstep][l] = G[l * stride + e0];
}
#undef LO2
#undef HI2
#undef LO4
#undef HI4
#undef LO8
#undef HI8

int aurp_solve_lanes_entries(int k, const uint16_t *gidx, const uint16_t *hidx)
{
    int ne = 0;
    for (int r = 0; r < k; r++) {
        for (int s = r; s < k; s++) ne = gidx[r * k + s] >= ne ? gidx[r * k + s] + 1 : ne;
        ne = hidx[r] >= ne ? hidx[r] + 1 : ne;
    }
    return ne;
}

/* Compiled for one order K alone, so that the triangular loops unroll
 * completely and the factors stay in registers: the chains of different
 * rows then overlap (the generic loops ran about twice as long). */
#define K AURP_SOLVE_LANES_ORDER
#define TMAX 96 /* entries a lane: lsmix's (K + 1)(K + 2) / 2 = 91, rounded up to 8 */

/* The factorization and both substitutions of aurp_solve_ldl_lanes, from
 * the systems' exact integers side by side: every lane's G'[r][s] (r <= s)
 * is the vector at word unit * goff[r * K + s] of T, its h[j] at word
 * unit * hoff[j].  (Macros and always_inline: a function taking or
 * returning a vector type would change the ABI between the clones.) */
#define LANES_AT(v, T, word) memcpy(&(v), (const char *)(T) + (word) * sizeof(uint64_t), sizeof(v))
static inline __attribute__((always_inline)) int ldl_lanes(const void *T, const uint16_t *goff,
                                                            const uint16_t *hoff, const size_t unit,
                                                            int ridge_shift, double *a)
{
    glanes_t A[K][K], L[K][K], U[K], invD[K], y[K], x[K], rel, one;
    gmask_t okall;
    for (int l = 0; l < GLANES; l++) rel[l] = AURP_PIVOT_REL, one[l] = 1.0, okall[l] = -1;
#pragma GCC unroll 16
    for (int r = 0; r < K; r++) {
        gwords_t v;
        LANES_AT(v, T, unit * goff[r * K + r]);
        A[r][r] = __builtin_convertvector(v + (v >> ridge_shift), glanes_t);
#pragma GCC unroll 16
        for (int s = r + 1; s < K; s++) {
            LANES_AT(v, T, unit * goff[r * K + s]);
            A[s][r] = __builtin_convertvector(v, glanes_t);
        }
    }
#pragma GCC unroll 16
    for (int j = 0; j < K; j++) {
#pragma GCC unroll 16
        for (int i = 0; i < j; i++) {
            glanes_t t = A[j][i];
#pragma GCC unroll 16
            for (int l = 0; l < i; l++) t = t - U[l] * L[i][l];
            U[i] = t;
            L[j][i] = t * invD[i];
        }
        glanes_t d = A[j][j];
#pragma GCC unroll 16
        for (int l = 0; l < j; l++) d = d - U[l] * L[j][l];
        okall &= (gmask_t)(d > A[j][j] * rel);
        long long any = 0;
#pragma GCC unroll 8
        for (int l = 0; l < GLANES; l++) any |= okall[l];
        if (!any) return 0;
        invD[j] = one / d; /* a lane whose pivot failed goes on with garbage, alone, and is not written */
    }
#pragma GCC unroll 16
    for (int j = 0; j < K; j++) {
        gwords_t v;
        LANES_AT(v, T, unit * hoff[j]);
        glanes_t t = __builtin_convertvector(v, glanes_t);
#pragma GCC unroll 16
        for (int l = 0; l < j; l++) t = t - L[j][l] * y[l];
        y[j] = t;
    }
#pragma GCC unroll 16
    for (int j = K - 1; j >= 0; j--) {
        glanes_t t = y[j] * invD[j];
#pragma GCC unroll 16
        for (int l = j + 1; l < K; l++) t = t - L[l][j] * x[l];
        x[j] = t;
    }
    int solved = 0;
    for (int l = 0; l < GLANES; l++) {
        if (!okall[l]) continue;
        for (int j = 0; j < K; j++) a[l * (size_t)K + j] = x[j][l];
        solved |= 1 << l;
    }
    return solved;
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#endif
int aurp_solve_ldl_lanes(int k, const uint64_t *G, size_t stride, int ne, const uint16_t *gidx,
                         const uint16_t *hidx, int ridge_shift, double *a)
{
    if (k != K || ne > TMAX) return 0;
    gwords_t T[TMAX];
    transpose_lanes(G, stride, ne, T, 1);
    return ldl_lanes(T, gidx, hidx, GLANES, ridge_shift, a);
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#endif
int aurp_solve_ldl_lanes_shifted(int k, const uint64_t *G, size_t stride, int ne, const uint16_t *goff,
                                 const uint16_t *hoff, int ridge_shift, void *pairs, int first, double *a)
{
    if (k != K || ne > TMAX) return 0;
    gwords_t *P = pairs; /* P[2e]: entry e of the group before, P[2e + 1]: of this group */
    if (first) transpose_lanes(G - GLANES * stride, stride, ne, P, 2);
    transpose_lanes(G, stride, ne, P + 1, 2);
    const int solved = ldl_lanes(P, goff, hoff, 1, ridge_shift, a);
    for (int e = 0; e < ne; e++) P[2 * e] = P[2 * e + 1]; /* the next group's group before */
    return solved;
}

#undef K
#undef TMAX

/* The reference path for one column: G and h from the prefix sums, then
 * the scalar solve. */
static void solve_column(aurp_predictor *p, uint32_t n)
{
    const int N = p->order, M = p->equations;
    const size_t stride = (size_t)p->span + 1;
    uint64_t G[AURP_MAX_ORDER * AURP_MAX_ORDER];
    uint64_t h[AURP_MAX_ORDER];
    int K = aurp_order_at(n, N);
    int R = aurp_rows_at(n, N, M);
    uint64_t eq = (uint64_t)p->rows * (uint64_t)R;
    int k = eq < (uint64_t)K ? (int)eq : K;
    /* G'[r][s] = sum_w P_{s-r}[n-1-s-w]  and  h'[r] = sum_w P_{r+1}[n-1-r-w],
     * each window a difference of two prefix entries. */
    for (int r = 0; r < k; r++) {
        for (int s = r; s < k; s++) {
            const uint64_t *pf = p->prefix + (size_t)(s - r) * stride;
            uint32_t t1 = n - (uint32_t)s - p->lo;
            G[r * k + s] = pf[t1] - pf[t1 - (uint32_t)R];
        }
        const uint64_t *pf = p->prefix + (size_t)(r + 1) * stride;
        uint32_t t1 = n - (uint32_t)r - p->lo;
        h[r] = pf[t1] - pf[t1 - (uint32_t)R];
    }
    double *a = p->coef + (size_t)(n - p->c0) * (size_t)N;
    p->kused[n - p->c0] = (uint8_t)aurp_solve_ldl(k, G, h, a);
}

/* The solve of aurp_solve_ldl for LANES adjacent columns at once, one column
 * a vector lane: every lane performs exactly the scalar sequence of IEEE
 * operations (vector add, mul, div and compare round like scalar ones, and
 * -ffp-contract=off forbids fused multiply-add), so a lane's result equals
 * the scalar one bit for bit.  A lane whose pivot test fails stops, in the
 * scalar code, at a different order: such columns are redone by the
 * scalar path.  Entry A[j][i] (i <= j) of column n is the window sum
 * wsum[j-i][n-j-lo], and lane L reads n+L: one unaligned vector load. */
/* unaligned load of LANES doubles (a macro: a function returning a vector
 * type would change the ABI between the clones) */
#define LOAD_LANES(v, ptr) memcpy(&(v), (ptr), sizeof(lanes_t))

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("avx2", "default")))
#endif
static void solve_lanes(aurp_predictor *p, uint32_t n, int k)
{
    const size_t stride = (size_t)p->span + 1;
    const double *ws = p->wsum;
    const uint32_t t0 = n - p->lo;
    lanes_t L[AURP_MAX_ORDER][AURP_MAX_ORDER], U[AURP_MAX_ORDER], invD[AURP_MAX_ORDER];
    lanes_t y[AURP_MAX_ORDER], a[AURP_MAX_ORDER];
    const lanes_t rel = {AURP_PIVOT_REL, AURP_PIVOT_REL, AURP_PIVOT_REL, AURP_PIVOT_REL};
    const lanes_t one = {1.0, 1.0, 1.0, 1.0};
    lmask_t okall = {-1, -1, -1, -1};

    for (int j = 0; j < k; j++) {
        for (int i = 0; i < j; i++) {
            lanes_t t;
            LOAD_LANES(t, ws + (size_t)(j - i) * stride + t0 - (uint32_t)j);
            for (int l = 0; l < i; l++) t = t - U[l] * L[i][l];
            U[i] = t;
            L[j][i] = t * invD[i];
        }
        lanes_t ajj;
        LOAD_LANES(ajj, ws + t0 - (uint32_t)j);
        lanes_t d = ajj;
        for (int l = 0; l < j; l++) d = d - U[l] * L[j][l];
        okall &= (lmask_t)(d > ajj * rel);
        if (!(okall[0] | okall[1] | okall[2] | okall[3])) break;
        invD[j] = one / d;
    }

    int all_ok = okall[0] & okall[1] & okall[2] & okall[3] & 1;
    if (all_ok) {
        for (int j = 0; j < k; j++) {
            lanes_t t;
            LOAD_LANES(t, ws + (size_t)(j + 1) * stride + t0 - (uint32_t)j);
            for (int l = 0; l < j; l++) t = t - L[j][l] * y[l];
            y[j] = t;
        }
        for (int j = k - 1; j >= 0; j--) {
            lanes_t t = y[j] * invD[j];
            for (int l = j + 1; l < k; l++) t = t - L[l][j] * a[l];
            a[j] = t;
        }
    }
    for (int lane = 0; lane < LANES; lane++) {
        uint32_t c = n + (uint32_t)lane - p->c0;
        if (all_ok) {
            double *out = p->coef + (size_t)c * (size_t)p->order;
            for (int r = 0; r < k; r++) out[r] = a[r][lane];
            p->kused[c] = (uint8_t)k;
        } else {
            solve_column(p, n + (uint32_t)lane);
        }
    }
}

void aurp_predictor_prepare_row(aurp_predictor *p)
{
    uint32_t m = p->rows;
    if (m == 0) return;
    const int N = p->order, M = p->equations;
    const size_t stride = (size_t)p->span + 1;

    for (int d = 0; d <= N; d++) {
        const uint64_t *cs = p->colsum + (size_t)d * p->span;
        uint64_t *pf = p->prefix + (size_t)d * stride;
        uint64_t acc = 0;
        pf[0] = 0;
        for (uint32_t t = 0; t < p->span; t++) {
            acc += cs[t];
            pf[t + 1] = acc;
        }
    }

    /* Columns with K = N and R = M (n >= N+M-1) share one shape: their
     * window sums are read from wsum, LANES columns at a time. */
    uint32_t first = p->c0 > 2 ? p->c0 : 2;
    uint32_t bulk = (uint32_t)(N + M - 1) > first ? (uint32_t)(N + M - 1) : first;
    uint32_t n = first;
    if (bulk < p->c1) {
        for (int d = 0; d <= N; d++) {
            const uint64_t *pf = p->prefix + (size_t)d * stride;
            double *ws = p->wsum + (size_t)d * stride;
            for (uint32_t t = (uint32_t)M; t <= p->span; t++) ws[t] = (double)(pf[t] - pf[t - (uint32_t)M]);
        }
        for (; n < bulk; n++) solve_column(p, n);
        uint64_t eq = (uint64_t)m * (uint64_t)M;
        int k = eq < (uint64_t)N ? (int)eq : N;
        for (; n + LANES <= p->c1; n += LANES) solve_lanes(p, n, k);
    }
    for (; n < p->c1; n++) solve_column(p, n);
}

uint16_t aurp_predictor_predict(const aurp_predictor *p, const uint16_t *cur,
                                const uint16_t *prev, uint32_t n)
{
    uint32_t m = p->rows;
    if (m == 0) return n == 0 ? 0 : cur[n - 1];
    if (n == 0) return prev[0];
    if (n == 1) return cur[0];
    int k = p->kused[n - p->c0];
    if (k == 0) return cur[n - 1];
    const double *a = p->coef + (size_t)(n - p->c0) * (size_t)p->order;
    double v = 0.0;
    for (int r = 0; r < k; r++) v = v + a[r] * (double)cur[n - 1 - (uint32_t)r];
    return aurp_round_clamp(v);
}

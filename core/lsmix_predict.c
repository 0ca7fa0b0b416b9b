/* The lsmix predictor (docs/FORMAT.md 3.2): training sums, ridge solve, the
 * LS, column-mean (CM) and affine (AF) predictions and their blend.  Every floating-point
 * operation here is part of the format; build with -ffp-contract=off. */
#include <stdlib.h>
#include <string.h>

#include "lsmix.h"
#include "predict.h"

_Static_assert(LSX_DEFAULT_K + LSX_PREV + LSX_EXTRA == AURP_SOLVE_LANES_ORDER,
               "the default order is the one the lane solve is compiled for");

/* ---- regressors --------------------------------------------------------- */

/* The regressor vector z[0..D-1] of pixel (i, n): lsx_regressor, K
 * spectral lags of row i, three pixels of row i-1, the two column means
 * before row i, the constant (the training adds the target x[i][n], j = D,
 * after them).  Every one is below 2^21 (pixels, Q4 means): 32-bit values
 * whose products the vector units form exactly. */
static inline __attribute__((always_inline)) void regressors(int K, uint32_t W, const uint16_t *cur,
                                                            const uint16_t *prev, const int32_t *cm_a,
                                                            const int32_t *cm_b, uint32_t n, uint32_t *z)
{
    /* every z[j] is lsx_regressor(j); the loop is split after the lags and
     * the rest unrolled only so that each z[j] compiles to its kind alone */
    for (int j = 0; j < K; j++) z[j] = lsx_regressor(cur, prev, cm_a, cm_b, W, K, n, j);
#pragma GCC unroll 8
    for (int d = 0; d < LSX_PREV + LSX_EXTRA; d++) z[K + d] = lsx_regressor(cur, prev, cm_a, cm_b, W, K, n, K + d);
}

/* ---- one band's training sums and solve ------------------------------ */

int lsx_band_init(lsx_band *b, const lsx_params *p, uint32_t W, uint32_t c0, uint32_t c1)
{
    memset(b, 0, sizeof *b);
    if (p->K < 1 || p->K > LSX_MAX_K || p->M < 1 || p->M > LSX_MAX_M || !(p->M & 1) ||
        c0 >= c1 || c1 > W)
        return -1;
    b->p = *p;
    b->W = W;
    b->c0 = c0;
    b->c1 = c1;
    b->D = p->K + LSX_PREV + LSX_EXTRA;
    b->Z = b->D + 1;
    b->NE = b->Z * (b->Z + 1) / 2;
    for (int r = 0; r < b->D; r++) {
        for (int s = r; s < b->D; s++) b->gidx[r * b->D + s] = (uint16_t)lsx_tri(r, s, b->Z);
        b->hidx[r] = (uint16_t)lsx_tri(r, b->D, b->Z);
    }
    b->lane_entries = aurp_solve_lanes_entries(b->D, b->gidx, b->hidx);
    uint32_t R = (uint32_t)(p->M - 1) / 2;
    b->lo = c0 > R ? c0 - R : 0;
    b->hi = c1 + R < W ? c1 + R : W;
    size_t cols = c1 - c0;
    b->G = calloc(cols * (size_t)b->NE, sizeof *b->G);
    /* the ring's rows on whole cache lines (add_outer_product_13) */
    const size_t pre_bytes = ((size_t)p->M + 1) * LSX_PRE_STRIDE(b->NE) * sizeof *b->pre;
    b->pre = aligned_alloc(64, (pre_bytes + 63) / 64 * 64);
    if (b->pre) memset(b->pre, 0, pre_bytes);
    b->coef = calloc(cols * (size_t)b->D, sizeof *b->coef);
    b->kused = calloc(cols, 1);
    if (!b->G || !b->pre || !b->coef || !b->kused) {
        lsx_band_free(b);
        return -1;
    }
    return 0;
}

void lsx_band_free(lsx_band *b)
{
    free(b->G);
    free(b->pre);
    free(b->coef);
    free(b->kused);
    memset(b, 0, sizeof *b);
}

/* Row r of the triangle (entries z_r z_{r+j}, j < Z - r) as `width`
 * products at once (whole vectors), added to a's row into o's. */
static inline __attribute__((always_inline)) void outer_products_row(const uint32_t *z, uint64_t zr,
                                                                    const uint64_t *a, uint64_t *o,
                                                                    const int width)
{
    for (int j = 0; j < width; j++) o[j] = a[j] + zr * z[j];
}

/* o = a + the outer product of one column's regressors z (Z of them):
 * the upper triangle row by row, each row as 8, 16 or 32 products at
 * once, the fewest that cover it, whose tail, products with the entries
 * past z's Z, lands on the first entries of row r+1 and is overwritten by
 * that row (the last row's in the LSX_PRE_STRIDE padding).  Short
 * triangle rows one by one cost twice as much. */
static inline __attribute__((always_inline)) void add_outer_product(const uint32_t *z, int Z, const uint64_t *a,
                                                                   uint64_t *o)
{
    for (int r = 0, e = 0; r < Z; e += Z - r, r++) {
        if (Z - r > 16)
            outer_products_row(z + r, z[r], a + e, o + e, 32);
        else if (Z - r > 8)
            outer_products_row(z + r, z[r], a + e, o + e, 16);
        else
            outer_products_row(z + r, z[r], a + e, o + e, 8);
    }
}

/* add_outer_product for the default order (Z = 13, NE = 91), in G's own
 * layout: eight entries a vector, each entry's two factors picked out of
 * the regressors by a constant shuffle.  Every store is then one whole
 * aligned vector, which the next column's prefix and the window's
 * difference load back whole: the row-by-row stores above overlap, and a
 * load over parts of two stores still in flight waits until both reach
 * the cache, once a column (9-12 % of the decode, docs/BENCHMARKS.md).
 * The products are formed in double: the factors are below 2^21, so a
 * product is an exact integer below 2^42, and its bits plus 2^52's are
 * the integer itself (GCC picks no 32 x 32 -> 64 vector multiply for
 * these vectors on any target).  Chunk c's lane j is entry e = 8c + j =
 * lsx_tri(r, s, 13), factors z[r] z[s]; the lanes past 90 write (0, 0)
 * into the ring's padding. */
typedef double lsx_z16 __attribute__((vector_size(16 * sizeof(double))));
typedef double lsx_z8 __attribute__((vector_size(8 * sizeof(double))));
typedef uint64_t lsx_e8 __attribute__((vector_size(8 * sizeof(uint64_t))));
_Static_assert(AURP_SOLVE_LANES_ORDER + 1 == 13 && LSX_PRE_STRIDE(91) % 8 == 0 && LSX_PRE_STRIDE(91) >= 96,
               "the chunks below cover the default order's 91 entries in whole aligned vectors");
static inline __attribute__((always_inline)) void add_outer_product_13(const uint32_t *z, const uint64_t *a,
                                                                      uint64_t *o)
{
    const lsx_z16 zv = {z[0], z[1], z[2], z[3], z[4], z[5], z[6], z[7], z[8], z[9], z[10], z[11], z[12], 0, 0, 0};
    const double two52 = 0x1p52;
    const lsx_z8 bias = {two52, two52, two52, two52, two52, two52, two52, two52};
    lsx_e8 bias_bits;
    memcpy(&bias_bits, &bias, sizeof bias_bits);
#define CHUNK(c, r0, r1, r2, r3, r4, r5, r6, r7, s0, s1, s2, s3, s4, s5, s6, s7)                           \
    do {                                                                                                \
        const lsx_z8 zr = __builtin_shufflevector(zv, zv, r0, r1, r2, r3, r4, r5, r6, r7);              \
        const lsx_z8 zs = __builtin_shufflevector(zv, zv, s0, s1, s2, s3, s4, s5, s6, s7);              \
        const lsx_z8 biased = zr * zs + bias;                                                           \
        lsx_e8 prefix, product;                                                                         \
        memcpy(&product, &biased, sizeof product);                                                      \
        memcpy(&prefix, a + 8 * (c), sizeof prefix);                                                    \
        prefix += product - bias_bits;                                                                  \
        memcpy(o + 8 * (c), &prefix, sizeof prefix);                                                    \
    } while (0)
    /*    c  r of lanes 0..7            s of lanes 0..7 */
    CHUNK(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7);
    CHUNK(1, 0, 0, 0, 0, 0, 1, 1, 1, 8, 9, 10, 11, 12, 1, 2, 3);
    CHUNK(2, 1, 1, 1, 1, 1, 1, 1, 1, 4, 5, 6, 7, 8, 9, 10, 11);
    CHUNK(3, 1, 2, 2, 2, 2, 2, 2, 2, 12, 2, 3, 4, 5, 6, 7, 8);
    CHUNK(4, 2, 2, 2, 2, 3, 3, 3, 3, 9, 10, 11, 12, 3, 4, 5, 6);
    CHUNK(5, 3, 3, 3, 3, 3, 3, 4, 4, 7, 8, 9, 10, 11, 12, 4, 5);
    CHUNK(6, 4, 4, 4, 4, 4, 4, 4, 5, 6, 7, 8, 9, 10, 11, 12, 5);
    CHUNK(7, 5, 5, 5, 5, 5, 5, 5, 6, 6, 7, 8, 9, 10, 11, 12, 6);
    CHUNK(8, 6, 6, 6, 6, 6, 6, 7, 7, 7, 8, 9, 10, 11, 12, 7, 8);
    CHUNK(9, 7, 7, 7, 7, 8, 8, 8, 8, 9, 10, 11, 12, 8, 9, 10, 11);
    CHUNK(10, 8, 9, 9, 9, 9, 10, 10, 10, 12, 9, 10, 11, 12, 10, 11, 12);
    CHUNK(11, 11, 11, 12, 0, 0, 0, 0, 0, 11, 12, 12, 0, 0, 0, 0, 0);
#undef CHUNK
}

/* Adds row i = m-1 to G: G <- G - round(G / 2^f) + (window sum of z z^T).
 * The window sums are differences of a prefix over the columns of the
 * outer products (mod 2^64; every window difference is a true sum <
 * 2^53), entry (r, s) at e = lsx_tri(r, s, Z).  Each column's G takes its
 * window as soon as the prefix reaches the window's right end, so only the
 * last M + 1 prefix rows are kept (b->pre, a ring that stays in L1).  Z is
 * b->Z, a constant where inlined for the default order (the rows of the
 * triangle and of G's update then unroll). */
static inline __attribute__((always_inline)) void add_training_row_z(lsx_band *b, const uint16_t *img, uint32_t m,
                                                                    const int32_t *cm_a, const int32_t *cm_b,
                                                                    const int Z)
{
    const uint32_t W = b->W, i = m - 1;
    const int NE = Z * (Z + 1) / 2, K = Z - 1 - LSX_PREV - LSX_EXTRA;
    const uint16_t *cur = img + (size_t)i * W;
    const uint16_t *prev = i ? cur - W : NULL;
    const uint32_t span = b->hi - b->lo;
    const uint32_t R = (uint32_t)(b->p.M - 1) / 2, ring = (uint32_t)b->p.M + 1;
    const int f = b->p.forget_shift;
    const uint64_t half = (uint64_t)1 << (f - 1);
    const size_t ps = LSX_PRE_STRIDE(NE);
    uint64_t *pre = b->pre;
    uint32_t z[LSX_MAX_Z + LSX_PRE_PAD] = {0}; /* the rows' vectors read past Z */
    memset(pre, 0, ps * sizeof *pre);
    uint32_t n = b->c0; /* the next column whose G takes its window */
    for (uint32_t t = 1; t <= span; t++) {
        /* prefix row t: the outer products of columns lo .. lo + t - 1 */
        const uint32_t q = b->lo + t - 1;
        regressors(K, W, cur, prev, cm_a, cm_b, q, z);
        z[Z - 1] = lsx_regressor(cur, prev, cm_a, cm_b, W, K, q, Z - 1); /* the target */
        uint64_t *ph = pre + (size_t)(t % ring) * ps;
        if (Z == AURP_SOLVE_LANES_ORDER + 1)
            add_outer_product_13(z, pre + (size_t)((t - 1) % ring) * ps, ph);
        else
            add_outer_product(z, Z, pre + (size_t)((t - 1) % ring) * ps, ph);
        /* the columns whose window ends at column lo + t (w1 - w0 <= M: w0's row is in the ring) */
        for (; n < b->c1 && (n + R + 1 < W ? n + R + 1 : W) == b->lo + t; n++) {
            const uint32_t w0 = n > R ? n - R : 0;
            const uint64_t *pl = pre + (size_t)((w0 - b->lo) % ring) * ps;
            uint64_t *g = b->G + (size_t)(n - b->c0) * NE;
            for (int e = 0; e < NE; e++) g[e] = g[e] - ((g[e] + half) >> f) + (ph[e] - pl[e]);
        }
    }
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"), optimize("tree-vectorize")))
#endif
static void add_training_row(lsx_band *b, const uint16_t *img, uint32_t m, const int32_t *cm_a,
                             const int32_t *cm_b)
{
    if (b->Z == AURP_SOLVE_LANES_ORDER + 1)
        add_training_row_z(b, img, m, cm_a, cm_b, AURP_SOLVE_LANES_ORDER + 1);
    else
        add_training_row_z(b, img, m, cm_a, cm_b, b->Z);
}

/* The ridge system of one column: the regressor block of G plus G_jj >> r
 * on the diagonal (A, D x D, r <= s), and h, solved by the paper profile's
 * LDL^T (aurp_solve_ldl). */
static void column_system(const lsx_band *b, uint32_t n, uint64_t *A, uint64_t *h)
{
    const int D = b->D;
    const uint64_t *g = b->G + (size_t)(n - b->c0) * b->NE;
    for (int r = 0; r < D; r++) { /* row D of G (the target's energy) is not needed */
        for (int s = r; s < D; s++) A[r * D + s] = g[b->gidx[r * D + s]];
        h[r] = g[b->hidx[r]];
    }
    for (int r = 0; r < D; r++) A[r * D + r] = aurp_ridged(A[r * D + r], b->p.ridge_shift);
}

/* AURP_SOLVE_LANES adjacent columns a vector lane each (the same bits as
 * one by one): each lane reads its column's training sums in place (gidx,
 * hidx); a partial group, or the lanes whose pivots stop early (the
 * columns at the image's edges, whose windows miss a regressor), go one by
 * one. */
static void solve_columns(lsx_band *b, uint32_t n, uint32_t count)
{
    const int D = b->D, NE = b->NE;
    const int solved = count == AURP_SOLVE_LANES
                           ? aurp_solve_ldl_lanes(D, b->G + (size_t)(n - b->c0) * NE, (size_t)NE, b->lane_entries,
                                                  b->gidx, b->hidx, b->p.ridge_shift,
                                                  b->coef + (size_t)(n - b->c0) * D)
                           : 0;
    for (uint32_t l = 0; l < count; l++) {
        if (solved >> l & 1) {
            b->kused[n + l - b->c0] = (uint8_t)D;
            continue;
        }
        uint64_t A[LSX_MAX_D * LSX_MAX_D], h[LSX_MAX_D];
        column_system(b, n + l, A, h);
        b->kused[n + l - b->c0] = (uint8_t)aurp_solve_ldl(D, A, h, b->coef + (size_t)(n + l - b->c0) * D);
    }
}

void lsx_band_prepare(lsx_band *b, const uint16_t *img, uint32_t m, const int32_t *cm_a,
                      const int32_t *cm_b)
{
    if (m == 0) return;
    add_training_row(b, img, m, cm_a, cm_b);
    for (uint32_t n = b->c0; n < b->c1; n += AURP_SOLVE_LANES)
        solve_columns(b, n, b->c1 - n < AURP_SOLVE_LANES ? b->c1 - n : AURP_SOLVE_LANES);
}

/* lsx_band_predict with K lags (a constant where inlined for the default
 * order: the regressors then unroll into loads). */
static inline __attribute__((always_inline)) double band_predict_k(const lsx_band *b, const uint16_t *cur,
                                                                  const uint16_t *prev, const int32_t *cm_a,
                                                                  const int32_t *cm_b, uint32_t n, const int K)
{
    uint32_t z[LSX_MAX_Z];
    regressors(K, b->W, cur, prev, cm_a, cm_b, n, z);
    const double *a = b->coef + (size_t)(n - b->c0) * b->D;
    int k = b->kused[n - b->c0];
    double v = 0.0;
    for (int r = 0; r < k; r++) v = v + a[r] * (double)z[r];
    return v;
}

double lsx_band_predict(const lsx_band *b, const uint16_t *cur, const uint16_t *prev,
                        const int32_t *cm_a, const int32_t *cm_b, uint32_t n)
{
    if (b->p.K == LSX_DEFAULT_K) return band_predict_k(b, cur, prev, cm_a, cm_b, n, LSX_DEFAULT_K);
    return band_predict_k(b, cur, prev, cm_a, cm_b, n, b->p.K);
}

/* ---- column means, error levels, blend ------------------------------ */

/* The members' error rows and column levels (lsx_state.err, colerr). */
typedef int32_t lanes_i32 __attribute__((vector_size(LSX_LANES * sizeof(int32_t))));
typedef double lanes_f64 __attribute__((vector_size(LSX_LANES * sizeof(double))));
_Static_assert(LSX_LANES >= LSX_NPRED, "a lane for every member");

/* (macros: a function taking or returning a vector type would change the
 * ABI between the target clones) */
#define LOAD_LANES(v, ptr) memcpy(&(v), (ptr), sizeof(lanes_i32))
#define STORE_LANES(ptr, v) memcpy((ptr), &(v), sizeof(lanes_i32))
#define SELECT_LANES(mask, a, b) (((a) & (mask)) | ((b) & ~(mask)))
#define MIN_LANES(a, b) SELECT_LANES((a) < (b), a, b)
#define MAX_LANES(a, b) SELECT_LANES((a) > (b), a, b)

int lsx_state_init(lsx_state *s, uint32_t W, int set, int bg)
{
    memset(s, 0, sizeof *s);
    s->W = W;
    s->set = set;
    s->bg = bg != 0;
    s->np = lsx_npred(set, s->bg);
    s->colerr_w = lsx_colerr_weight(set, s->bg);
    int32_t **arrays[4 + 2], ***a = arrays;
    *a++ = &s->cm_a, *a++ = &s->cm_b, *a++ = &s->cm_a_prev, *a++ = &s->cm_b_prev;
    if (s->bg) *a++ = &s->bg_c, *a++ = &s->bg_s;
    for (int32_t ***p = arrays; p < a; p++) {
        **p = calloc(W, sizeof(int32_t));
        if (!**p) {
            lsx_state_free(s);
            return -1;
        }
    }
    const size_t err_cols = LSX_ERR_PAD + (size_t)W + 1;
    s->err[0] = calloc(err_cols * LSX_LANES, sizeof(int32_t));
    s->err[1] = calloc(err_cols * LSX_LANES, sizeof(int32_t));
    s->colerr = calloc((size_t)W * LSX_LANES, sizeof(int32_t));
    s->blend_w = malloc(LSX_BLEND_TABLE * sizeof *s->blend_w);
    if (!s->err[0] || !s->err[1] || !s->colerr || !s->blend_w ||
        (s->bg && !(s->bg_w = calloc(W, sizeof(int64_t))))) {
        lsx_state_free(s);
        return -1;
    }
    const int kind = lsx_blend_kind(set, s->bg);
    for (int32_t e = 0; e < LSX_BLEND_TABLE; e++) s->blend_w[e] = lsx_blend_weight(e, kind);
    return 0;
}

void lsx_state_free(lsx_state *s)
{
    free(s->cm_a);
    free(s->cm_b);
    free(s->cm_a_prev);
    free(s->cm_b_prev);
    free(s->err[0]);
    free(s->err[1]);
    free(s->colerr);
    free(s->bg_c);
    free(s->bg_s);
    free(s->bg_w);
    free(s->blend_w);
    memset(s, 0, sizeof *s);
}

/* Column n of a row of errors (lsx_state.err). */
static inline int32_t *err_at(const lsx_state *s, uint32_t m, uint32_t n)
{
    return s->err[m & 1] + (LSX_ERR_PAD + (size_t)n) * LSX_LANES;
}

/* lsx_blend_at and lsx_blend_of (lsmix_arith.h), every member in its own
 * lane: the error levels (lsx_error_level: the pad columns stand for the
 * neighbours outside the row; in row 0 the other parity's row is still
 * all 0, as no row above) and the weights are independent across members,
 * each lane the scalar sequence of operations; only the sums num and den
 * run member by member, in the scalar order. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#endif
uint16_t lsx_blend(const lsx_state *s, uint32_t m, uint32_t n, const double *p, int32_t *emin)
{
    const int32_t *cur = err_at(s, m, n), *up = err_at(s, m + 1, n);
    lanes_i32 w_, nw, n_, ne, ww, col;
    LOAD_LANES(w_, cur - LSX_LANES);
    LOAD_LANES(nw, up - LSX_LANES);
    LOAD_LANES(n_, up);
    LOAD_LANES(ne, up + LSX_LANES);
    LOAD_LANES(col, s->colerr + (size_t)n * LSX_LANES);
    lanes_i32 local = w_ + nw + n_ + ne;
    if (s->set) { /* set 1: the error two to the left too */
        LOAD_LANES(ww, cur - 2 * LSX_LANES);
        local += ww;
    }
    const lanes_i32 e = local + s->colerr_w * col, ectx = local + lsx_colerr_ctx_weight(s->set) * col;
    int32_t lowest = ectx[0];
    for (int k = 1; k < s->np; k++) lowest = ectx[k] < lowest ? ectx[k] : lowest;
    *emin = lowest;
    /* the weights, a pure function of the integer level: from the table
     * where every level is in it (lanes past np are 0), which takes the
     * powers and the division off the pixel's critical path */
    const lanes_i32 outside = (e < 0) | (e >= LSX_BLEND_TABLE);
    int any_outside = 0;
    for (int k = 0; k < LSX_LANES; k++) any_outside |= outside[k];
    lanes_f64 w = {0};
    if (!any_outside) {
        for (int k = 0; k < s->np; k++) w[k] = s->blend_w[e[k]];
    } else { /* lsx_blend_weight in vector lanes (calling it lane by lane
              * cost 7 % of the bright twilight frame's decode, mostly
              * outside the table; tests/unit/test_core_blend.c checks
              * that the two agree) */
        const int kind = lsx_blend_kind(s->set, s->bg);
        const lanes_f64 t = __builtin_convertvector(e, lanes_f64) * (kind == LSX_BLEND_CUBE16 ? 0.0625 : 0.0078125) + 1.0;
        const lanes_f64 u = t * t * t;
        w = 1.0 / (kind == LSX_BLEND_SIXTH128 ? u * t * t * t : u);
    }
    double num = 0.0, den = 0.0;
    for (int k = 0; k < s->np; k++) {
        num = num + w[k] * p[k];
        den = den + w[k];
    }
    return aurp_round_clamp(num / den);
}

void lsx_sources(lsx_state *s, const uint16_t *cur, uint32_t m, uint32_t n, double p_ls, int32_t *z)
{
    z[0] = s->cm_b[n];
    if (!s->set) return; /* set 0 reads only z[0] */
    const uint16_t *up = cur - s->W, *up2 = m >= 2 ? up - s->W : up;
    z[1] = lsx_q16(p_ls);
    z[2] = 16 * (int32_t)up[n];
    z[3] = 16 * (int32_t)up2[n];
    if (s->set == 2) /* RL, on BG's C and S (set 2 streams have BG: parse refuses others) */
        AURP_UNROLL
        for (int q = 0; q < LSX_RL_N; q++) { /* unrolled: each member's solve compiles for its size */
            lsx_rl_regressors(&s->rl[q], q, cur, up, up2, s->bg_c, s->W, n);
            s->rl_pred[q] = lsx_rl_pixel(&s->rl[q], q, n, s->W, up, s->bg_c, s->bg_s);
        }
}

void lsx_row_predict(const lsx_state *s, uint32_t n, const int32_t *z, double *p)
{
    if (s->set == 2) { /* RV, AL, RL1, RL2 */
        p[2] = lsx_rv_fit(s->rv, n, (double)z[2], (double)z[3]);
        p[3] = lsx_af_fit(s->af[1], n, (double)z[1]);
        p[4] = s->rl_pred[0];
        p[5] = s->rl_pred[1];
    } else { /* AF; set 1: RV, AL */
        p[2] = lsx_af_fit(s->af[0], n, (double)z[0]);
        if (s->set) {
            p[3] = lsx_rv_fit(s->rv, n, (double)z[2], (double)z[3]);
            p[4] = lsx_af_fit(s->af[1], n, (double)z[1]);
        }
    }
    if (s->bg) p[s->np - 1] = lsx_bg_predict(&s->bg_row, s->bg_c[n]);
}

void lsx_record(lsx_state *s, uint32_t m, uint32_t n, uint16_t x, const double *p, const int32_t *z)
{
    int32_t x16 = (int32_t)x * 16, *err = err_at(s, m, n);
    for (int k = 0; k < s->np; k++) {
        int32_t d = x16 - lsx_q16(p[k]);
        err[k] = d < 0 ? -d : d;
    }
    if (n == 0) {
        memset(s->af, 0, sizeof s->af);
        memset(s->rv, 0, sizeof s->rv);
        memset(s->rl, 0, sizeof s->rl);
    }
    if (m > 0) {
        /* terms scaled by 2^16: the rounding of the decay stays far below
         * them (every sum < 2^59: z, y < 2^20) */
        int64_t y = x16;
        if (s->set != 2) lsx_af_add(s->af[0], y, z[0]); /* set 2 has no AF */
        if (s->set) {
            lsx_af_add(s->af[1], y, z[1]);
            lsx_rv_add(s->rv, y, z[2], z[3]);
        }
        if (s->set == 2 && n > 0) /* the row's sums start at 0 with pixel 1 */
            AURP_UNROLL
            for (int q = 0; q < LSX_RL_N; q++) lsx_rl_add(&s->rl[q], q, x, s->bg_c[n]);
        if (s->bg) {
            lsx_bg_row_add(&s->bg_row, s->bg_c[n], s->bg_s[n], s->bg_w[n], x);
        }
    }
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"), optimize("tree-vectorize")))
#endif
void lsx_end_row(lsx_state *s, uint32_t m, const uint16_t *row)
{
    if (s->colerr_w != 0) /* every member at once (lanes past np stay 0) */
        for (uint32_t n = 0; n < s->W; n++) {
            const int32_t *e = err_at(s, m, n);
            lanes_i32 v;
            LOAD_LANES(v, e);
            if (s->bg) { /* lsx_colerr_input: the median of the column and its neighbours */
                lanes_i32 l = v, r = v;
                if (n > 0) LOAD_LANES(l, e - LSX_LANES);
                if (n + 1 < s->W) LOAD_LANES(r, e + LSX_LANES);
                v = MAX_LANES(MIN_LANES(l, v), MIN_LANES(MAX_LANES(l, v), r));
            }
            int32_t *c = s->colerr + (size_t)n * LSX_LANES;
            if (m > 0) { /* lsx_mean_step; >> of a negative lane shifts in its sign (GCC, clang) */
                const int sh = lsx_colerr_shift(s->bg);
                lanes_i32 c0;
                LOAD_LANES(c0, c);
                v = c0 + ((v - c0 + (1 << (sh - 1))) >> sh);
            }
            STORE_LANES(c, v);
        }
    int32_t *t = s->cm_a_prev;
    s->cm_a_prev = s->cm_a;
    s->cm_a = t;
    t = s->cm_b_prev;
    s->cm_b_prev = s->cm_b;
    s->cm_b = t;
    for (uint32_t n = 0; n < s->W; n++) {
        int32_t x16 = (int32_t)row[n] * 16;
        int32_t a = s->cm_a_prev[n], b = s->cm_b_prev[n];
        s->cm_a[n] = m == 0 ? x16 : lsx_mean_step(a, x16, LSX_CM_A_SHIFT);
        s->cm_b[n] = m == 0 ? x16 : lsx_mean_step(b, x16, LSX_CM_B_SHIFT);
    }
    if (s->bg) {
        if (m == 0)
            for (uint32_t n = 0; n < s->W; n++) lsx_bg_column_start(&s->bg_c[n], &s->bg_s[n], row[n]);
        else
            lsx_bg_columns_step(s->bg_c, s->bg_s, m, row, s->W);
        /* lsx_bg_weight, 2^48 / (s^2 + 2^14), as a double division (a
         * vector of them, where the integer ones ran one by one).  Exact:
         * a level stays in [0, 16 * 65535], so 16 |r| < 2^24 and a scale,
         * which grows only below that, stays below 2^25; then d = s^2 +
         * 2^14 < 2^51 is an exact double, and 2^48 + d < 2^53 keeps the
         * rounded quotient below the next integer (checked for every s <
         * 2^26). */
        for (uint32_t n = 0; n < s->W; n++)
            s->bg_w[n] = (int64_t)(281474976710656.0 / ((double)s->bg_s[n] * (double)s->bg_s[n] + 16384.0));
        lsx_bg_row_start(&s->bg_row);
    }
}

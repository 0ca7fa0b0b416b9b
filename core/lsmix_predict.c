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

/* Sums that columns share.  In the default order (Z = 13) most entries of
 * a column's training sums are entries of a column to its left: the lags,
 * the row above and the constant are zero-padded signals seen at shifted
 * columns, so where the windows of columns n and n - d lie inside the
 * image, the sum of x[m][q-1-a] x[m][q-1-b] over column n's window is the
 * sum of x[m][q-1-a+d] x[m][q-1-b+d] over column n - d's, and both run the
 * same forgetting recurrence from the same zeros: the same integers.  47
 * of the 91 entries are new in a column (those with the target,
 * x[m-1][n+1], a column mean, or the constant squared); each of the other
 * 44 is new d = 1..6 columns to the left.  Columns far enough from the
 * image's edges and the band's start keep and update only the new entries
 * (slots 0..46 of LSX13_SLOT's layout) and the solve reads the others
 * where they are new (LSX13_HEAD, LSX13_DEP); the others keep all 91.
 * FORMAT.md still defines every entry as its sum: this is only how they
 * are computed.  Generated and checked by research/r13_shift_layout.py. */
#define LSX13_KEPT 48 /* the slots such a column updates: its 47 new entries and slot 47 (not read), whole vectors */
static const uint8_t LSX13_SLOT[91] = { /* slot of entry e = lsx_tri(r, s, 13) in a column keeping all */
    48, 49, 50, 51, 56, 61, 63, 59, 5,  17, 18, 47, 2,  65, 66, 67, 68, 73, 76, 52, 6,  19, 20,
    64, 3,  78, 79, 80, 81, 69, 53, 7,  21, 22, 77, 4,  83, 84, 85, 70, 54, 8,  23, 24, 82, 9,
    87, 88, 71, 55, 13, 25, 26, 86, 14, 90, 72, 60, 27, 28, 29, 89, 30, 74, 62, 31, 32, 33, 75,
    34, 57, 15, 35, 36, 58, 16, 10, 37, 38, 11, 12, 39, 40, 41, 42, 43, 44, 45, 46, 0,  1};
static const uint8_t LSX13_HEAD[91] = { /* entry e of column n is slot LSX13_HEAD[e] of column n - LSX13_DEP[e] */
    1,  2,  3,  4,  9,  14, 16, 12, 5,  17, 18, 0,  2,  1,  2,  3,  4,  9,  12, 5,  6,  19, 20,
    0,  3,  1,  2,  3,  4,  5,  6,  7,  21, 22, 0,  4,  1,  2,  3,  6,  7,  8,  23, 24, 0,  9,
    1,  2,  7,  8,  13, 25, 26, 0,  14, 1,  8,  13, 27, 28, 29, 0,  30, 10, 15, 31, 32, 33, 11,
    34, 10, 15, 35, 36, 11, 16, 10, 37, 38, 11, 12, 39, 40, 41, 42, 43, 44, 45, 46, 0,  1};
static const uint8_t LSX13_DEP[91] = {
    1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0, 2, 2, 2, 2, 2, 2, 1, 0, 0, 0, 2, 0, 3, 3, 3, 3, 2,
    1, 0, 0, 0, 3, 0, 4, 4, 4, 2, 1, 0, 0, 0, 4, 0, 5, 5, 2, 1, 0, 0, 0, 5, 0, 6, 2, 1, 0, 0,
    0, 6, 0, 2, 1, 0, 0, 0, 2, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
#define LSX13_MAX_DEP 6

/* The columns that keep only their new entries: whole groups of
 * AURP_SOLVE_LANES from c0 (the lane solve reads the group before, and a
 * group is all of one kind), from the second group on, whose columns and
 * their left neighbours up to LSX13_MAX_DEP have windows inside the image. */
static void shared_columns(lsx_band *b)
{
    const uint32_t R = (uint32_t)(b->p.M - 1) / 2, G = AURP_SOLVE_LANES;
    b->new_lo = b->new_hi = b->c1;
    if (b->Z != AURP_SOLVE_LANES_ORDER + 1) return;
    uint32_t g0 = b->c0 + G;
    while (g0 < R + LSX13_MAX_DEP) g0 += G;
    if ((uint64_t)g0 + G + R > b->W || g0 + G > b->c1) return;
    b->new_lo = g0;
    while ((uint64_t)g0 + G + G + R <= b->W && g0 + G + G <= b->c1) g0 += G;
    b->new_hi = g0 + G;
}

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
    const int shared = b->Z == AURP_SOLVE_LANES_ORDER + 1;
    for (int r = 0; r < b->D; r++) { /* row D of G (the target's energy) is not needed */
        for (int s = r; s <= b->D; s++) { /* s = D: h[r] */
            const int e = lsx_tri(r, s, b->Z);
            const uint16_t slot = (uint16_t)(shared ? LSX13_SLOT[e] : e);
            const uint16_t off = shared ? (uint16_t)(2 * AURP_SOLVE_LANES * LSX13_HEAD[e] + AURP_SOLVE_LANES -
                                                     LSX13_DEP[e])
                                        : 0;
            if (s < b->D) b->gidx[r * b->D + s] = slot, b->soff[r * b->D + s] = off;
            else b->hidx[r] = slot, b->shoff[r] = off;
        }
    }
    b->lane_entries = aurp_solve_lanes_entries(b->D, b->gidx, b->hidx);
    shared_columns(b);
    if (p->weighted) b->new_lo = b->new_hi = b->c1; /* weighted sums are not shifts of a neighbour's */
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
    b->lane_pairs = aligned_alloc(64, 2 * LSX13_KEPT * AURP_SOLVE_LANES * sizeof(uint64_t));
    if (!b->G || !b->pre || !b->coef || !b->kused || !b->lane_pairs) {
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
    free(b->lane_pairs);
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

/* o = a + w times the outer product of one column's regressors z (Z of
 * them; w the equation's weight, 1 but in set 3's weighted training):
 * the upper triangle row by row, each row as 8, 16 or 32 products at
 * once, the fewest that cover it, whose tail, products with the entries
 * past z's Z, lands on the first entries of row r+1 and is overwritten by
 * that row (the last row's in the LSX_PRE_STRIDE padding).  Short
 * triangle rows one by one cost twice as much. */
static inline __attribute__((always_inline)) void add_outer_product(const uint32_t *z, int Z, const uint64_t *a,
                                                                   uint64_t *o, uint64_t w)
{
    for (int r = 0, e = 0; r < Z; e += Z - r, r++) {
        const uint64_t zr = w * z[r];
        if (Z - r > 16)
            outer_products_row(z + r, zr, a + e, o + e, 32);
        else if (Z - r > 8)
            outer_products_row(z + r, zr, a + e, o + e, 16);
        else
            outer_products_row(z + r, zr, a + e, o + e, 8);
    }
}

typedef uint32_t lsx_u16 __attribute__((vector_size(16 * sizeof(uint32_t))));
typedef uint16_t lsx_w8 __attribute__((vector_size(8 * sizeof(uint16_t))));
typedef uint32_t lsx_d8 __attribute__((vector_size(8 * sizeof(uint32_t))));

/* The default order's regressors and target of column q in the lanes the
 * shuffles of add_outer_product_13 read: 0..7 x[i][q-7 .. q] (the lags
 * 6..1 in lanes 1..6, the target in lane 7; lane 0 unused), 8..11
 * x[i-1][q-2 .. q+1] (lane 8 unused), 12 and 13 the column means, 14 the
 * constant, 15 zero.  Inside the image two vector loads and one whole
 * store, which the product's load takes back whole; near the edges
 * lsx_regressor's zeros, lane by lane.  (Written lane by lane, the
 * regressors cost the load a wait for thirteen stores to reach the cache:
 * about 3 % of a decode.) */
static inline __attribute__((always_inline)) void raw_regressors_13(const uint16_t *cur, const uint16_t *prev,
                                                                    const int32_t *cm_a, const int32_t *cm_b,
                                                                    uint32_t W, uint32_t q, uint32_t *raw)
{
    if (q >= 7 && q + 1 < W && prev) {
        lsx_w8 c, p;
        memcpy(&c, cur + q - 7, sizeof c);
        memcpy(&p, prev + q - 2, 4 * sizeof(uint16_t));
        const lsx_d8 cw = __builtin_convertvector(c, lsx_d8), pw = __builtin_convertvector(p, lsx_d8);
        const lsx_d8 rest = {pw[0], pw[1], pw[2], pw[3], (uint32_t)cm_a[q], (uint32_t)cm_b[q], LSX_CONST, 0};
        const lsx_u16 v = __builtin_shufflevector(cw, rest, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        memcpy(raw, &v, sizeof v);
        return;
    }
    const int K = LSX_DEFAULT_K;
    uint32_t r[16] = {0};
    for (int a = 0; a < K; a++) r[K - a] = lsx_regressor(cur, prev, cm_a, cm_b, W, K, q, a);
    r[7] = cur[q];
    for (int j = 0; j < LSX_PREV + LSX_EXTRA; j++) r[9 + j] = lsx_regressor(cur, prev, cm_a, cm_b, W, K, q, K + j);
    memcpy(raw, r, sizeof r);
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
 * these vectors on any target).  Chunk c's lane j is slot 8c + j of
 * LSX13_SLOT's layout, its factors two lanes of raw_regressors_13 (the
 * generator, research/r13_shift_layout.py, prints the table); the lanes
 * past 90 write 0 into the ring's padding.  chunks = 6 forms only the
 * first 48 slots: the new entries. */
typedef double lsx_z16 __attribute__((vector_size(16 * sizeof(double))));
typedef double lsx_z8 __attribute__((vector_size(8 * sizeof(double))));
typedef uint64_t lsx_e8 __attribute__((vector_size(8 * sizeof(uint64_t))));
_Static_assert(AURP_SOLVE_LANES_ORDER + 1 == 13 && LSX_PRE_STRIDE(91) % 8 == 0 && LSX_PRE_STRIDE(91) >= 96,
               "the chunks below cover the default order's 91 entries in whole aligned vectors");
static inline __attribute__((always_inline)) void add_outer_product_13(const uint32_t *raw, const uint64_t *a,
                                                                      uint64_t *o, const int chunks, const double wt)
{
    lsx_u16 zu;
    memcpy(&zu, raw, sizeof zu);
    const lsx_z16 zv = __builtin_convertvector(zu, lsx_z16);
    const double two52 = 0x1p52;
    const lsx_z8 bias = {two52, two52, two52, two52, two52, two52, two52, two52};
    lsx_e8 bias_bits;
    memcpy(&bias_bits, &bias, sizeof bias_bits);
#define CHUNK(c, r0, r1, r2, r3, r4, r5, r6, r7, s0, s1, s2, s3, s4, s5, s6, s7)                           \
    do {                                                                                                \
        const lsx_z8 zr = __builtin_shufflevector(zv, zv, r0, r1, r2, r3, r4, r5, r6, r7);              \
        const lsx_z8 zs = __builtin_shufflevector(zv, zv, s0, s1, s2, s3, s4, s5, s6, s7);              \
        const lsx_z8 biased = zr * zs * wt + bias;                                                      \
        lsx_e8 prefix, product;                                                                         \
        memcpy(&product, &biased, sizeof product);                                                      \
        memcpy(&prefix, a + 8 * (c), sizeof prefix);                                                    \
        prefix += product - bias_bits;                                                                  \
        memcpy(o + 8 * (c), &prefix, sizeof prefix);                                                    \
    } while (0)
    /*    c  r of lanes 0..7            s of lanes 0..7 (raw lanes of slots 8c .. 8c + 7) */
    CHUNK(0, 14, 7, 6, 5, 4, 6, 5, 4, 7, 7, 7, 7, 7, 11, 11, 11);
    CHUNK(1, 3, 3, 11, 11, 11, 2, 2, 10, 11, 7, 11, 14, 7, 11, 7, 11);
    CHUNK(2, 10, 6, 6, 5, 5, 4, 4, 3, 7, 12, 13, 12, 13, 12, 13, 12);
    CHUNK(3, 3, 2, 2, 1, 1, 1, 1, 9, 13, 12, 13, 11, 12, 13, 7, 11);
    CHUNK(4, 9, 9, 9, 10, 10, 11, 11, 12, 12, 13, 7, 12, 13, 12, 13, 12);
    CHUNK(5, 12, 12, 12, 13, 13, 13, 14, 6, 13, 14, 7, 13, 14, 7, 14, 14);
    if (chunks == 6) return; /* the new entries (and slot 47) */
    CHUNK(6, 6, 6, 6, 6, 5, 4, 3, 2, 6, 5, 4, 3, 10, 10, 10, 10);
    CHUNK(7, 6, 10, 10, 6, 1, 6, 9, 6, 2, 10, 14, 10, 10, 1, 10, 9);
    CHUNK(8, 5, 5, 5, 5, 5, 4, 3, 2, 14, 5, 4, 3, 2, 9, 9, 9);
    CHUNK(9, 1, 5, 9, 9, 5, 4, 4, 4, 9, 1, 9, 14, 9, 14, 4, 3);
    CHUNK(10, 4, 4, 3, 3, 3, 3, 2, 2, 2, 1, 14, 3, 2, 1, 14, 2);
    CHUNK(11, 2, 1, 1, 15, 15, 15, 15, 15, 1, 14, 1, 15, 15, 15, 15, 15);
#undef CHUNK
}

/* Adds row i = m-1 to G: G <- G - round(G / 2^f) + (window sum of z z^T).
 * The window sums are differences of a prefix over the columns of the
 * outer products (mod 2^64; every window difference is a true sum <
 * 2^53), entry (r, s) at e = lsx_tri(r, s, Z) (at LSX13_SLOT[e] in the
 * default order).  Each column's G takes its window as soon as the prefix
 * reaches the window's right end, so only the last M + 1 prefix rows are
 * kept (b->pre, a ring that stays in L1).  Z is b->Z, a constant where
 * inlined for the default order (the rows of the triangle and of G's
 * update then unroll).  The columns [new_lo, new_hi) update only their
 * new entries, so the prefix needs the others only where the window of a
 * column outside them reads it. */
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
    const size_t ps = LSX_PRE_STRIDE(NE);
    uint64_t *pre = b->pre;
    uint32_t z[LSX_MAX_Z + LSX_PRE_PAD] = {0}; /* the rows' vectors read past Z */
    _Alignas(64) uint32_t raw[16];
    memset(pre, 0, ps * sizeof *pre);
    const int weighted = b->p.weighted;
    uint16_t lo = 0; /* weighted: the least pixel of row i - 1 over the whole width (0 in row 0) */
    if (weighted && prev) {
        lo = 65535;
        for (uint32_t q = 0; q < W; q++) lo = prev[q] < lo ? prev[q] : lo;
    }
    uint32_t n = b->c0; /* the next column whose G takes its window */
    for (uint32_t t = 1; t <= span; t++) {
        /* prefix row t: the outer products of columns lo .. lo + t - 1 */
        const uint32_t q = b->lo + t - 1;
        uint64_t *ph = pre + (size_t)(t % ring) * ps;
        if (Z == AURP_SOLVE_LANES_ORDER + 1) {
            raw_regressors_13(cur, prev, cm_a, cm_b, W, q, raw);
            if (weighted) /* every entry (no shared columns) */
                add_outer_product_13(raw, pre + (size_t)((t - 1) % ring) * ps, ph, 12,
                                     (double)lsx_ls_weight(cur[q], lo)); /* (lsmix_arith.h) */
            else
                add_outer_product_13(raw, pre + (size_t)((t - 1) % ring) * ps, ph,
                                     q < b->new_lo + R || q + R >= b->new_hi ? 12 : 6, 1.0);
        } else {
            regressors(K, W, cur, prev, cm_a, cm_b, q, z);
            z[Z - 1] = lsx_regressor(cur, prev, cm_a, cm_b, W, K, q, Z - 1); /* the target */
            add_outer_product(z, Z, pre + (size_t)((t - 1) % ring) * ps, ph, weighted ? lsx_ls_weight(cur[q], lo) : 1);
        }
        /* the columns whose window ends at column lo + t (w1 - w0 <= M: w0's row is in the ring) */
        for (; n < b->c1 && (n + R + 1 < W ? n + R + 1 : W) == b->lo + t; n++) {
            const uint32_t w0 = n > R ? n - R : 0;
            const uint64_t *pl = pre + (size_t)((w0 - b->lo) % ring) * ps;
            uint64_t *g = b->G + (size_t)(n - b->c0) * NE;
            const int kept = Z == AURP_SOLVE_LANES_ORDER + 1 && n >= b->new_lo && n < b->new_hi ? LSX13_KEPT : NE;
            for (int e = 0; e < kept; e++) g[e] = lsx_ls_forget(g[e], f, ph[e] - pl[e]);
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

/* Entry e = lsx_tri(r, s, 13) of the sums of a column in [new_lo, new_hi)
 * whose own sums start at g: where the entry is new. */
static inline uint64_t shared_entry(const uint64_t *g, int NE, int e)
{
    return g[LSX13_HEAD[e] - (ptrdiff_t)LSX13_DEP[e] * NE];
}

/* The ridge system of one column: the regressor block of G plus G_jj >> r
 * on the diagonal (A, D x D, r <= s), and h, solved by the paper profile's
 * LDL^T (aurp_solve_ldl). */
static void column_system(const lsx_band *b, uint32_t n, uint64_t *A, uint64_t *h)
{
    const int D = b->D;
    const uint64_t *g = b->G + (size_t)(n - b->c0) * b->NE;
    if (n >= b->new_lo && n < b->new_hi) { /* the entries where they are new */
        for (int r = 0; r < D; r++) {
            for (int s = r; s < D; s++) A[r * D + s] = shared_entry(g, b->NE, lsx_tri(r, s, b->Z));
            h[r] = shared_entry(g, b->NE, lsx_tri(r, D, b->Z));
        }
    } else {
        for (int r = 0; r < D; r++) { /* row D of G (the target's energy) is not needed */
            for (int s = r; s < D; s++) A[r * D + s] = g[b->gidx[r * D + s]];
            h[r] = g[b->hidx[r]];
        }
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
    const uint64_t *g = b->G + (size_t)(n - b->c0) * NE;
    double *coef = b->coef + (size_t)(n - b->c0) * D;
    int solved = 0;
    if (count == AURP_SOLVE_LANES && n >= b->new_lo && n < b->new_hi)
        solved = aurp_solve_ldl_lanes_shifted(D, g, (size_t)NE, LSX13_KEPT, b->soff, b->shoff, b->p.ridge_shift,
                                              b->lane_pairs, n == b->new_lo, coef);
    else if (count == AURP_SOLVE_LANES)
        solved = aurp_solve_ldl_lanes(D, g, (size_t)NE, b->lane_entries, b->gidx, b->hidx, b->p.ridge_shift, coef);
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
    if (b->p.K == LSX_DEFAULT_K && b->kused[n - b->c0] == AURP_SOLVE_LANES_ORDER && n >= LSX_DEFAULT_K &&
        n + 1 < b->W && prev) {
        /* inside the image with every regressor: the same sums in the same
         * order, unrolled (the loop to a runtime order and the edges'
         * tests cost about 4 % of a decode) */
        const double *a = b->coef + (size_t)(n - b->c0) * AURP_SOLVE_LANES_ORDER;
        double v = 0.0;
        v = v + a[0] * (double)cur[n - 1];
        v = v + a[1] * (double)cur[n - 2];
        v = v + a[2] * (double)cur[n - 3];
        v = v + a[3] * (double)cur[n - 4];
        v = v + a[4] * (double)cur[n - 5];
        v = v + a[5] * (double)cur[n - 6];
        v = v + a[6] * (double)prev[n - 1];
        v = v + a[7] * (double)prev[n];
        v = v + a[8] * (double)prev[n + 1];
        v = v + a[9] * (double)(uint32_t)cm_a[n];
        v = v + a[10] * (double)(uint32_t)cm_b[n];
        v = v + a[11] * (double)LSX_CONST;
        return v;
    }
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
    int32_t **arrays[4 + 2 + 2], ***a = arrays;
    *a++ = &s->cm_a, *a++ = &s->cm_b, *a++ = &s->cm_a_prev, *a++ = &s->cm_b_prev;
    if (s->bg) *a++ = &s->bg_c, *a++ = &s->bg_s;
    if (set == 3) *a++ = &s->br_l, *a++ = &s->br_s;
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
        (s->bg && !(s->bg_w = calloc(W, sizeof(int64_t)))) || (set == 3 && !(s->br_lit = calloc(W, sizeof(uint16_t))))) {
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
    free(s->br_l);
    free(s->br_s);
    free(s->br_lit);
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
double lsx_blend(const lsx_state *s, uint32_t m, uint32_t n, const double *p, int32_t *emin)
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
    return num / den;
}

void lsx_sources(lsx_state *s, const uint16_t *cur, uint32_t m, uint32_t n, double p_ls, int32_t *z)
{
    z[0] = s->cm_b[n];
    if (!s->set) return; /* set 0 reads only z[0] */
    const uint16_t *up = cur - s->W, *up2 = m >= 2 ? up - s->W : up;
    z[1] = lsx_q16(p_ls);
    z[2] = 16 * (int32_t)up[n];
    z[3] = 16 * (int32_t)up2[n];
    if (s->set >= 2) /* RL, on BG's C and S (set 2 and 3 streams have BG: parse refuses others) */
        AURP_UNROLL
        for (int q = 0; q < LSX_RL_N; q++) { /* unrolled: each member's solve compiles for its size */
            lsx_rl_regressors(&s->rl[q], q, cur, up, up2, s->bg_c, s->W, n);
            s->rl_pred[q] = lsx_rl_pixel(&s->rl[q], q, n, s->W, up, s->bg_c, s->bg_s);
        }
    if (s->set == 3) s->lg_pred = lsx_lg_predict(&s->lg, up, s->bg_c, s->W, n);
}

void lsx_row_predict(const lsx_state *s, uint32_t n, const int32_t *z, double *p)
{
    if (s->set == 3) { /* LG, RV, RC, RL1, RL2, BR */
        p[1] = s->lg_pred;
        p[2] = lsx_rv_fit(s->rv, n, (double)z[2], (double)z[3]);
        p[3] = lsx_br_level(s->br_l[n]);
        p[4] = s->rl_pred[0];
        p[5] = s->rl_pred[1];
        p[6] = lsx_br_predict(s->br_l[n], s->br_o);
        return;
    }
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
        if (s->set < 2) lsx_af_add(s->af[0], y, z[0]); /* sets 2 and 3 have no AF */
        if (s->set && s->set < 3) lsx_af_add(s->af[1], y, z[1]); /* nor set 3 AL */
        if (s->set) lsx_rv_add(s->rv, y, z[2], z[3]);
        if (s->set >= 2 && n > 0) /* the row's sums start at 0 with pixel 1 */
            AURP_UNROLL
            for (int q = 0; q < LSX_RL_N; q++) lsx_rl_add(&s->rl[q], q, x, s->bg_c[n]);
        if (s->set == 3) {
            if (n > 0) lsx_lg_add(&s->lg, x, s->bg_c[n], s->bg_s[n]);
            lsx_br_row_add(&s->br_o, &s->br_k, s->br_l[n], s->br_s[n], x);
        } else if (s->bg) {
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
        if (s->set != 3) { /* BG's row offset (set 3 blends BR instead) */
            for (uint32_t n = 0; n < s->W; n++) s->bg_w[n] = lsx_bg_weight_fp(s->bg_s[n]);
            lsx_bg_row_start(&s->bg_row);
        }
    }
    s->br_o = s->br_k = 0; /* BR's next row offset */
    if (s->set == 3)
        for (uint32_t n = 0; n < s->W; n++) {
            if (m == 0) lsx_br_column_start(&s->br_l[n], &s->br_s[n], &s->br_lit[n], row[n]);
            else lsx_br_column_step(&s->br_l[n], &s->br_s[n], &s->br_lit[n], row[n]);
        }
}

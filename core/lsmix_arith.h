/* The per-pixel arithmetic of the lsmix profile (docs/FORMAT.md 3.2, 3.3)
 * that every backend repeats bit for bit: the Q4 rounding, the row-fitted
 * predictors (AF, AL, RV), the decay of their sums, the error levels, the
 * blend, and the context inputs.  One definition for the C core and the
 * CUDA kernels (AURP_HD); every double operation here is part of the
 * format (no FMA contraction: -ffp-contract=off, nvcc --fmad=false). */
#ifndef AURP_LSMIX_ARITH_H
#define AURP_LSMIX_ARITH_H

#include <stdint.h>

#include "hostdev.h"
#include "predict.h"

#define LSX_CM_A_SHIFT 4      /* column mean A moves 1/16 of the way each row */
#define LSX_CM_B_SHIFT 2      /* column mean B: 1/4 */
#define LSX_COLERR_SHIFT 3    /* the column error level: 1/8 (BG streams: 1/16) */
#define LSX_COLERR_SHIFT_BG 4
#define LSX_CONST 16          /* value of the constant regressor (Q4 "1") */
#define LSX_RV_SHIFT 3        /* RV sums lose 1/8 of their weight each pixel */
#define LSX_RV_SCALE 14       /* RV sum terms are scaled by 2^14 */
#define LSX_RV_NS 9           /* RV sums: w, y, z0, z1, z0*y, z1*y, z0*z0, z0*z1, z1*z1 */
#define LSX_RV_RIDGE 16384.0  /* RV ridge (Q4^2 units): pulls both slopes toward 1/2 */
#define LSX_COLERR_W 2        /* weight of the column error level in an error level (set 0; set 1: 0) */
#define LSX_COLERR_W_BG 32    /* in BG streams' blend (their context's Emin keeps LSX_COLERR_W) */
#define LSX_AF_SHIFT 2        /* AF sums lose 1/4 of their weight each pixel */
#define LSX_AF_SCALE 16       /* AF sum terms are scaled by 2^16 */
#define LSX_AF_RIDGE 16384.0  /* AF slope ridge (Q4^2 units): pulls the slope toward 1 */

/* ---- the LS predictor's regressors and training sums (3.2) ---- */

#define LSX_NPRED 7           /* blended predictors: LS, CM, AF (set 0); RV, AL (set 1); set 2: LS, CM, RV, AL, RL1, RL2;
                               * set 3: LS, LG, RV, RC, RL1, RL2; BG (last, where on; BR in set 3) */
#define LSX_PREV 3            /* pixels of the row above: n-1, n, n+1 */
#define LSX_EXTRA 3           /* column means A and B, the constant */

/* The weight of a training equation whose target is x, in a row whose row
 * above's least pixel is lo (set 3's LS with forgetting 2^-1, research
 * round 23): 2^8 R / (R + max(0, x - lo)), R = 128 ADU^2 (about the read
 * noise's variance plus a margin), at least 1: the inverse of the noise
 * variance of a Poisson pixel over a bias near lo, in units of 2^-8 of the
 * darkest pixel's.  A weighted product w z_r z_s stays below 2^50. */
#define LSX_LSW_R 128
static inline AURP_HD uint32_t lsx_ls_weight(uint16_t x, uint16_t lo)
{
    const uint32_t ex = x > lo ? (uint32_t)(x - lo) : 0, w = ((uint32_t)LSX_LSW_R << 8) / (LSX_LSW_R + ex);
    return w < 1 ? 1 : w;
}

/* Regressor j of pixel (i, n) of the LS predictor with K spectral lags, in
 * the order of the format: j < K: x[i][n-1-j]; K .. K+2: x[i-1][n-1 .. n+1];
 * K+3, K+4: the column means A and B before row i; K+5: the constant; and
 * j = D = K+6, the target x[i][n] the training adds after them.  cur and
 * prev are rows i and i-1 (prev NULL in row 0), cm_a and cm_b the column
 * means before row i; a pixel outside the image is 0.  Every value is
 * below 2^21 (pixels, Q4 means). */
static inline AURP_HD uint32_t lsx_regressor(const uint16_t *cur, const uint16_t *prev, const int32_t *cm_a,
                                             const int32_t *cm_b, uint32_t W, int K, uint32_t n, int j)
{
    if (j < K) return n > (uint32_t)j ? cur[n - 1 - (uint32_t)j] : 0u;
    j -= K;
    if (j < LSX_PREV) {
        const int64_t q = (int64_t)n + j - 1;
        return (prev && q >= 0 && q < (int64_t)W) ? prev[q] : 0u;
    }
    j -= LSX_PREV;
    if (j == 0) return (uint32_t)cm_a[n];
    if (j == 1) return (uint32_t)cm_b[n];
    if (j == 2) return LSX_CONST;
    return cur[n];
}

/* Where entry (r, s), r <= s, of the upper triangle of a Z x Z matrix lies
 * when the triangle is stored row by row, (0,0) (0,1) .. (0,Z-1) (1,1) ..:
 * the layout of a column's training sums of z z^T (z: the D regressors and
 * the target, Z = D + 1). */
static inline AURP_HD int lsx_tri(int r, int s, int Z)
{
    return r * Z - r * (r - 1) / 2 + (s - r);
}

/* floor(v / 2^s) for any sign (>> of a negative value is implementation-defined in C;
 * nvcc's is the arithmetic shift, one instruction where the portable form took eight
 * and a select on the device's serial column passes). */
static inline AURP_HD int32_t lsx_floor_shr(int32_t v, int s)
{
#ifdef __CUDA_ARCH__
    return v >> s;
#else
    return v >= 0 ? (int32_t)((uint32_t)v >> s) : (int32_t) ~((uint32_t)~v >> s);
#endif
}

/* A running mean (column means, column error levels) takes the value v:
 * c + round(2^-s (v - c)). */
static inline AURP_HD int32_t lsx_mean_step(int32_t c, int32_t v, int s)
{
    return c + lsx_floor_shr(v - c + (1 << (s - 1)), s);
}

/* A prediction in Q4, rounded and clamped to [0, 16 * 65535]. */
static inline AURP_HD int32_t lsx_q16(double p)
{
    double t = p * 16.0 + 0.5;
    if (!(t > 0.0)) return 0;
    if (t >= 1048560.0) return 1048560;
    return (int32_t)t;
}

/* The affine fit of row sums a (w, y, z, zz, zy) at source value zc (AF, AL). */
static inline AURP_HD double lsx_af_fit(const int64_t *a, uint32_t n, double zc)
{
    if (n == 0 || a[0] == 0) return zc * 0.0625;
    double w = (double)a[0]; /* each term is scaled by 2^LSX_AF_SCALE, as the weight */
    double my = (double)a[1] / w, mz = (double)a[2] / w;
    double vzz = (double)a[3] / w - mz * mz, vzy = (double)a[4] / w - mz * my;
    double slope = (vzy + LSX_AF_RIDGE) / (vzz + LSX_AF_RIDGE);
    return (my + slope * (zc - mz)) * 0.0625;
}

/* RV: (C + L I) b = c + L (1/2, 1/2) with C, c the centred second moments
 * of the sums, L = LSX_RV_RIDGE; P = my + b0 (z0 - m0) + b1 (z1 - m1). */
static inline AURP_HD double lsx_rv_fit(const int64_t *a, uint32_t n, double z0, double z1)
{
    if (n == 0 || a[0] == 0) return (z0 + z1) * 0.03125;
    double w = (double)a[0];
    double my = (double)a[1] / w, m0 = (double)a[2] / w, m1 = (double)a[3] / w;
    double c0 = (double)a[4] / w - m0 * my + LSX_RV_RIDGE * 0.5;
    double c1 = (double)a[5] / w - m1 * my + LSX_RV_RIDGE * 0.5;
    double a00 = (double)a[6] / w - m0 * m0 + LSX_RV_RIDGE;
    double a01 = (double)a[7] / w - m0 * m1;
    double a11 = (double)a[8] / w - m1 * m1 + LSX_RV_RIDGE;
    double f = a01 / a00;
    double d11 = a11 - f * a01, e1 = c1 - f * c0;
    double b1 = e1 / d11;
    double b0 = (c0 - a01 * b1) / a00;
    return (my + b0 * (z0 - m0) + b1 * (z1 - m1)) * 0.0625;
}

/* The LS training's forgetting step, one entry of G for one row:
 * G - round(G / 2^f) + the row's window sum (FORMAT.md 3.2).  One
 * definition for the C decoder and the GPU encoder; every G is below 2^63.
 * lsx_decay_add's step in unsigned words: G is stored unsigned (its window
 * sums are differences of prefixes mod 2^64), and the decoder's avx2
 * clone has a vector shift for unsigned 64-bit words only. */
static inline AURP_HD uint64_t lsx_ls_forget(uint64_t g, int f, uint64_t sum)
{
    return g - ((g + ((uint64_t)1 << (f - 1))) >> f) + sum;
}

/* A row sum of AF, AL or RV takes a term: s - round(s / 2^shift) + v.
 * Every term and so every sum is >= 0 (pixels, means and their products). */
static inline AURP_HD int64_t lsx_decay_add(int64_t s, int shift, int64_t v)
{
    return s - ((s + ((int64_t)1 << (shift - 1))) >> shift) + v;
}

/* AF and AL sums take the pixel y = 16 x with source z (both Q4). */
static inline AURP_HD void lsx_af_add(int64_t *a, int64_t y, int64_t z)
{
    a[0] = lsx_decay_add(a[0], LSX_AF_SHIFT, (int64_t)1 << LSX_AF_SCALE);
    a[1] = lsx_decay_add(a[1], LSX_AF_SHIFT, y << LSX_AF_SCALE);
    a[2] = lsx_decay_add(a[2], LSX_AF_SHIFT, z << LSX_AF_SCALE);
    a[3] = lsx_decay_add(a[3], LSX_AF_SHIFT, (z * z) << LSX_AF_SCALE);
    a[4] = lsx_decay_add(a[4], LSX_AF_SHIFT, (z * y) << LSX_AF_SCALE);
}

/* RV sums take the pixel y with sources z0, z1 (terms scaled by 2^14,
 * every sum < 2^58). */
static inline AURP_HD void lsx_rv_add(int64_t *a, int64_t y, int64_t z0, int64_t z1)
{
    const int64_t t[LSX_RV_NS] = {1, y, z0, z1, z0 * y, z1 * y, z0 * z0, z0 * z1, z1 * z1};
    for (int k = 0; k < LSX_RV_NS; k++) a[k] = lsx_decay_add(a[k], LSX_RV_SHIFT, t[k] << LSX_RV_SCALE);
}

/* The error level of one predictor at (m, n) from its errors |16x - q16(P)|
 * of row m (cur, columns < n) and row m-1 (up, NULL in row 0): W, N, NW, NE,
 * and in set 1 also WW; plus colterm (the column error level times its
 * weight; 0 in set 1). */
static inline AURP_HD int32_t lsx_error_level(const int32_t *cur, const int32_t *up, uint32_t n,
                                              uint32_t W, int set, int32_t colterm)
{
    int32_t e = colterm;
    if (n > 0) e += cur[n - 1];
    if (set && n > 1) e += cur[n - 2]; /* set 1: the error two to the left too */
    if (up) {
        e += up[n];
        if (n > 0) e += up[n - 1];
        if (n + 1 < W) e += up[n + 1];
    }
    return e;
}

/* The input of a column error level from row m's errors e of one member:
 * e[n] in streams without BG; in BG streams the median of e[n-1], e[n],
 * e[n+1] (e[n] standing in for a neighbour outside the row), so that one
 * outlier does not lift a column's level for tens of rows. */
static inline AURP_HD int32_t lsx_colerr_input(const int32_t *e, uint32_t n, uint32_t W, int bg)
{
    if (!bg) return e[n];
    const int32_t l = n > 0 ? e[n - 1] : e[n], c = e[n], r = n + 1 < W ? e[n + 1] : e[n];
    /* max(min(l, c), min(max(l, c), r)): selects, not branches (the
     * errors are noise, the branches would be mispredicted) */
    const int32_t lo = l < c ? l : c, hi = l < c ? c : l, m = hi < r ? hi : r;
    return lo > m ? lo : m;
}

/* The blend's members (3.2): LS, CM, AF in set 0, and RV, AL in set 1;
 * LS, CM, RV, AL, RL1, RL2 in set 2 and LS, LG, RV, RC, RL1, RL2 in set 3;
 * BG last in streams with the BG flag (BR in set 3, whose streams have it). */
static inline AURP_HD int lsx_npred(int set, int bg) { return (set >= 2 ? 6 : set ? 5 : 3) + (bg != 0); }

/* The column error level (set 0 only): its weight in the blend's error
 * level, its weight in the context's Emin, and its rate (a shift). */
static inline AURP_HD int lsx_colerr_weight(int set, int bg)
{
    return set ? 0 : bg ? LSX_COLERR_W_BG : LSX_COLERR_W;
}
static inline AURP_HD int lsx_colerr_ctx_weight(int set) { return set ? 0 : LSX_COLERR_W; }
static inline AURP_HD int lsx_colerr_shift(int bg) { return bg ? LSX_COLERR_SHIFT_BG : LSX_COLERR_SHIFT; }

/* The weights of the blend (3.2): (1 + E/16)^-3 in streams without BG; in
 * BG streams (1 + E/128)^-6 in set 0, whose error levels carry a heavy,
 * smooth column term and can afford a sharp choice, and (1 + E/128)^-3 in
 * set 1. */
enum { LSX_BLEND_CUBE16, LSX_BLEND_SIXTH128, LSX_BLEND_CUBE128 };

static inline AURP_HD int lsx_blend_kind(int set, int bg)
{
    return !bg ? LSX_BLEND_CUBE16 : set ? LSX_BLEND_CUBE128 : LSX_BLEND_SIXTH128;
}

/* The weight of a member whose error level is e. */
static inline AURP_HD double lsx_blend_weight(int32_t e, int kind)
{
    double t = (double)e * (kind == LSX_BLEND_CUBE16 ? 0.0625 : 0.0078125) + 1.0, u = t * t * t;
    return 1.0 / (kind == LSX_BLEND_SIXTH128 ? u * t * t * t : u);
}

/* The blend of predictions p[0..np-1] with error levels e[0..np-1],
 * unrounded (num / den): aurp_round_clamp of it is the prediction P1, and
 * the adaptive sign's context reads it (lsmix_sign.h). */
static inline AURP_HD double lsx_blend_of(int np, const int32_t *e, const double *p, int kind)
{
    double num = 0.0, den = 0.0;
    for (int k = 0; k < np; k++) {
        double w = lsx_blend_weight(e[k], kind);
        num = num + w * p[k];
        den = den + w;
    }
    return num / den;
}

/* The blend at one pixel (3.2): member k's error level is its neighbours'
 * errors local[k] (lsx_error_level without the column term) plus its
 * column error level col[k] weighted colerr_w in the blend and colerr_ctx_w
 * in the context's Emin (written to *emin); kind: lsx_blend_kind. */
static inline AURP_HD double lsx_blend_at(int np, const int32_t *local, const int32_t *col, int colerr_w,
                                            int colerr_ctx_w, int kind, const double *p, int32_t *emin)
{
    int32_t e[LSX_NPRED];
    for (int k = 0; k < np; k++) {
        e[k] = local[k] + colerr_w * col[k];
        const int32_t ectx = local[k] + colerr_ctx_w * col[k];
        if (k == 0 || ectx < *emin) *emin = ectx;
    }
    return lsx_blend_of(np, e, p, kind);
}

/* ---- context inputs (3.3) ---- */

/* Token of |e| (hybrid integer: 16 direct values, then 4 per octave) and
 * its raw low bits. */
static inline AURP_HD int ctx_token(uint32_t v, int *nraw)
{
    if (v < 16) {
        *nraw = 0;
        return (int)v;
    }
    int nb = aurp_msb32(v);
    *nraw = nb - 2;
    return 16 + (nb - 4) * 4 + (int)((v >> (nb - 2)) & 3);
}

/* Smallest |e| of token t and its raw bit count (ctx_token's inverse). */
static inline AURP_HD uint32_t ctx_token_base(int t, int *nraw)
{
    if (t < 16) {
        *nraw = 0;
        return (uint32_t)t;
    }
    int nb = (t - 16) / 4 + 4;
    *nraw = nb - 2;
    return (uint32_t)(4 + ((t - 16) & 3)) << (nb - 2);
}

/* ---- the encoder's size estimate (not part of the format) ---- */

/* The encoder picks among its predictor and context candidates by the
 * bits each would code to, in units of 2^-16 bit, and codes the winner
 * only (docs/FORMAT.md 3.3, the encoder of this version).  The estimate
 * is integer arithmetic so that every backend makes the same choice and
 * writes the same bytes. */
#define LSX_COST_Q 16

/* log2(f) in Q16 for f >= 1: the integer part from the top bit, then 16
 * fraction bits by squaring the mantissa (Q31, truncated each step). */
static inline AURP_HD uint32_t lsx_log2_q16(uint32_t f)
{
    const int k = aurp_msb32(f);
    uint64_t m = (uint64_t)f << (31 - k); /* 1.xxx in Q31: [2^31, 2^32) */
    uint32_t r = (uint32_t)k << 16;
    for (int i = 15; i >= 0; i--) {
        m = (m * m) >> 31;
        if (m >> 32) {
            m >>= 1;
            r |= 1u << i;
        }
    }
    return r;
}

/* The bits (Q16) of token t coded at frequency freq out of 2^prob_bits,
 * with its raw bits and, for t > 0, the sign. */
static inline AURP_HD uint32_t lsx_token_cost_q16(uint32_t freq, int t, int prob_bits)
{
    int nraw;
    ctx_token_base(t, &nraw);
    return ((uint32_t)(prob_bits + nraw + (t > 0)) << LSX_COST_Q) - lsx_log2_q16(freq);
}

/* A stream's estimate (Q16 bits) from its tokens' bits: with the bytes of
 * its header (the segment table and cascade block included) and of its
 * segments' final states. */
static inline AURP_HD uint64_t lsx_stream_estimate(uint64_t token_bits, uint64_t header_bytes, uint32_t nseg)
{
    return token_bits + ((header_bytes + 4 * (uint64_t)nseg) * 8 << LSX_COST_Q);
}

/* The context index of an activity against increasing thresholds. */
static inline AURP_HD int ctx_of(uint32_t act16, const uint32_t *thr, int nctx)
{
    int c = 0;
    while (c < nctx - 1 && act16 >= thr[c]) c++;
    return c;
}

/* The residual activity around (m, n): 2|eW| + 2|eN| + |eNW| + |eNE| +
 * |eWW| + |eNN|; rows r0 = m, r1 = m-1, r2 = m-2 (NULL above the image). */
static inline AURP_HD uint32_t lsx_residual_activity(const int32_t *r0, const int32_t *r1,
                                                     const int32_t *r2, uint32_t W, uint32_t n)
{
#define LSX_ABSV(v) ((uint32_t)((v) < 0 ? -(v) : (v)))
    uint32_t a = 0;
    if (n > 0) a += 2 * LSX_ABSV(r0[n - 1]);
    if (n > 1) a += LSX_ABSV(r0[n - 2]);
    if (r1) {
        a += 2 * LSX_ABSV(r1[n]);
        if (n > 0) a += LSX_ABSV(r1[n - 1]);
        if (n + 1 < W) a += LSX_ABSV(r1[n + 1]);
    }
    if (r2) a += LSX_ABSV(r2[n]);
    return a;
#undef LSX_ABSV
}

/* The context's activity input: 8 x the residual activity + the blend's
 * smallest error level, saturated. */
static inline AURP_HD uint32_t lsx_activity16(uint32_t activity, int32_t emin)
{
    uint64_t a = 8 * (uint64_t)activity + (uint64_t)emin;
    return a > UINT32_MAX ? UINT32_MAX : (uint32_t)a;
}

/* The intensity token of a prediction: the token of max(0, pred - ioff). */
static inline AURP_HD int lsx_intensity_token(uint16_t pred, uint16_t ioff)
{
    int nraw;
    return ctx_token(pred > ioff ? (uint32_t)(pred - ioff) : 0, &nraw);
}

/* Its class against the increasing token bounds ibnd[0..nib-2]. */
static inline AURP_HD int lsx_intensity_class(int itok, const uint8_t *ibnd, int nib)
{
    int c = 0;
    while (c < nib - 1 && itok >= ibnd[c]) c++;
    return c;
}

/* Intensity classes of about equal population (3.3): the bounds ibnd on
 * the intensity tokens from their histogram h[64] over pixels; returns the
 * class count nib. */
static inline AURP_HD int lsx_intensity_bounds(const uint64_t *h, uint64_t pixels, int want,
                                              uint8_t *ibnd)
{
    uint64_t acc = 0;
    int b = 0;
    for (int t = 0; t < 63 && b < want - 1; t++) {
        acc += h[t];
        if (acc * (uint64_t)want >= (uint64_t)(b + 1) * pixels) ibnd[b++] = (uint8_t)(t + 1);
    }
    return b + 1;
}

/* Index of the token table a pixel is coded with: the tables are rebuilt
 * before pixel p when p % 1024 == 0, or p < 1024 and p % 128 == 0 (p > 0). */
static inline AURP_HD uint32_t lsx_table_index(uint64_t p)
{
    return p < 1024 ? (uint32_t)(p >> 7) : (uint32_t)(7 + (p >> 10));
}

/* The encoder's threshold search (lsmix_thresholds.c) bins a16 on a grid
 * of 2^LSX_TQ_FRAC bins an octave of x = a16 + 128: bin 2^F (log2(x) - 7)
 * + the F bits below x's leading one; the last bin, LSX_TQ - 1, holds every
 * a16 from its edge (7 x 2^16 - 128) up.  Quarter octaves: eighth octaves
 * were no better and double the DP's work.  Integer only, so that the GPU
 * encoder builds the same histogram. */
#define LSX_TQ_FRAC 2
#define LSX_TQ (12 << LSX_TQ_FRAC)
static inline AURP_HD int lsx_thr_bin(uint32_t a16)
{
    uint32_t x = a16 < (1u << 20) ? a16 + 128 : (1u << 20);
    int e = aurp_msb32(x); /* >= 7 */
    int q = ((e - 7) << LSX_TQ_FRAC) + (int)((x >> (e - LSX_TQ_FRAC)) & ((1u << LSX_TQ_FRAC) - 1));
    return q < LSX_TQ - 1 ? q : LSX_TQ - 1;
}
/* The smallest a16 of bin q (0 for bin 0). */
static inline AURP_HD uint32_t lsx_thr_bin_edge(int q)
{
    return ((uint32_t)((1 << LSX_TQ_FRAC) + (q & ((1 << LSX_TQ_FRAC) - 1)))
            << ((q >> LSX_TQ_FRAC) + 7 - LSX_TQ_FRAC)) - 128;
}

/* The histogram cell of a pixel: [a16 bin][intensity token][residual token]. */
static inline AURP_HD uint32_t lsx_thr_cell(uint32_t a16, int itok, int32_t e)
{
    int nraw;
    int t = ctx_token((uint32_t)(e < 0 ? -e : e), &nraw);
    return ((uint32_t)lsx_thr_bin(a16) * 64 + (uint32_t)itok) * 64 + (uint32_t)t;
}

#endif

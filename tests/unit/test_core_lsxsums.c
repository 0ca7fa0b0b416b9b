/* The lsmix LS predictor's training sums and solves (core/lsmix_predict.c)
 * against their definition (FORMAT.md 3.2): every column's 91 (or Z(Z+1)/2)
 * sums kept in full by direct window sums and the forgetting recurrence,
 * solved by the scalar aurp_solve_ldl.  The band keeps most of the default
 * order's sums only where they are new (a column to the left holds the
 * rest) and solves eight columns a call: its coefficients and orders must
 * be the definition's, bit for bit, in every column, at the image's edges
 * and the bands' starts, for several windows, band splits and frames
 * (flat ones too, whose systems stop early and go the scalar way); and
 * each pixel's prediction from them (lsx_band_predict), bit for bit. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "core_frames.h"
#include "lsmix.h"
#include "predict.h"

typedef struct {
    uint32_t W, H;
    int K, M, f, r;
} sums_case;

/* Runs the bands [cuts[i], cuts[i+1]) over the frame and the definition
 * beside them; fails at the first coefficient that differs. */
static void compare(const sums_case *c, core_frame_kind kind, const uint32_t *cuts, int nbands, uint64_t seed)
{
    const uint32_t W = c->W, H = c->H, R = (uint32_t)(c->M - 1) / 2;
    const int D = c->K + LSX_PREV + LSX_EXTRA, Z = D + 1, NE = Z * (Z + 1) / 2;
    uint16_t *x = malloc((size_t)W * H * sizeof *x);
    core_frame_make(kind, W, H, seed, x);
    int32_t *cm_a = malloc(W * sizeof *cm_a), *cm_b = malloc(W * sizeof *cm_b);
    uint64_t *G = calloc((size_t)W * NE, sizeof *G); /* the definition's sums, lsx_tri order */
    lsx_params p = {.K = c->K, .M = c->M, .forget_shift = c->f, .ridge_shift = c->r};
    lsx_band band[4];
    uint32_t shared = 0;
    for (int b = 0; b < nbands; b++) {
        cr_assert_eq(lsx_band_init(&band[b], &p, W, cuts[b], cuts[b + 1]), 0);
        shared += band[b].new_hi - band[b].new_lo;
    }
    /* the default order shares sums wherever a band has room for it */
    if (c->K == LSX_DEFAULT_K && W >= 64 && cuts[1] - cuts[0] >= 64)
        cr_assert_gt(shared, W / 2, "%ux%u M %d: %u columns share sums", W, H, c->M, shared);
    if (c->K != LSX_DEFAULT_K) cr_assert_eq(shared, 0);
    uint64_t rng = seed * 31 + 5;
    int solved_short = 0;
    for (uint32_t m = 1; m < H; m++) {
        /* any column means below 2^21 will do: they are regressors like the others */
        for (uint32_t n = 0; n < W; n++) {
            cm_a[n] = (int32_t)(core_rand(&rng) % (kind == CORE_FRAME_CONST0 ? 1 : 1u << 20));
            cm_b[n] = (int32_t)(core_rand(&rng) % (kind == CORE_FRAME_CONST0 ? 1 : 1u << 20));
        }
        const uint16_t *cur = x + (size_t)(m - 1) * W, *prev = m > 1 ? cur - W : NULL;
        for (uint32_t n = 0; n < W; n++) {
            uint64_t *g = G + (size_t)n * NE, win[LSX_MAX_Z * (LSX_MAX_Z + 1) / 2] = {0};
            const uint32_t w0 = n > R ? n - R : 0, w1 = n + R + 1 < W ? n + R + 1 : W;
            for (uint32_t q = w0; q < w1; q++) {
                uint64_t z[LSX_MAX_Z];
                for (int j = 0; j < Z; j++) z[j] = lsx_regressor(cur, prev, cm_a, cm_b, W, c->K, q, j);
                for (int r = 0; r < Z; r++)
                    for (int s = r; s < Z; s++) win[lsx_tri(r, s, Z)] += z[r] * z[s];
            }
            const uint64_t half = (uint64_t)1 << (c->f - 1);
            for (int e = 0; e < NE; e++) g[e] = g[e] - ((g[e] + half) >> c->f) + win[e];
        }
        for (int b = 0; b < nbands; b++) lsx_band_prepare(&band[b], x, m, cm_a, cm_b);
        for (int b = 0; b < nbands; b++) {
            for (uint32_t n = band[b].c0; n < band[b].c1; n++) {
                const uint64_t *g = G + (size_t)n * NE;
                uint64_t A[LSX_MAX_D * LSX_MAX_D], h[LSX_MAX_D];
                for (int r = 0; r < D; r++) {
                    for (int s = r; s < D; s++) A[r * D + s] = g[lsx_tri(r, s, Z)];
                    A[r * D + r] = aurp_ridged(A[r * D + r], c->r);
                    h[r] = g[lsx_tri(r, D, Z)];
                }
                double want[LSX_MAX_D];
                const int k = aurp_solve_ldl(D, A, h, want);
                solved_short += k < D;
                const uint32_t i = n - band[b].c0;
                cr_assert_eq(band[b].kused[i], k, "%ux%u K %d M %d, band %d, row %u column %u: order %d, not %d", W,
                             H, c->K, c->M, b, m, n, band[b].kused[i], k);
                cr_assert(memcmp(band[b].coef + (size_t)i * D, want, (size_t)k * sizeof(double)) == 0,
                          "%ux%u K %d M %d, band %d, row %u column %u: coefficients differ in their bits", W, H, c->K,
                          c->M, b, m, n);
                /* and the prediction of (m, n) from them, its sum in the format's order */
                const uint16_t *row = x + (size_t)m * W;
                double v = 0.0;
                for (int j = 0; j < k; j++) v = v + want[j] * (double)lsx_regressor(row, row - W, cm_a, cm_b, W, c->K, n, j);
                const double got = lsx_band_predict(&band[b], row, row - W, cm_a, cm_b, n);
                cr_assert(memcmp(&got, &v, sizeof v) == 0, "%ux%u K %d, row %u column %u: prediction %.17g, not %.17g",
                          W, H, c->K, m, n, got, v);
            }
        }
    }
    if (kind == CORE_FRAME_CONST0) cr_assert_gt(solved_short, 0, "a flat frame's systems stop early");
    for (int b = 0; b < nbands; b++) lsx_band_free(&band[b]);
    free(G);
    free(cm_a);
    free(cm_b);
    free(x);
}

/* The decoder's bands (128 columns with threads, one band without) and
 * the encoder's, over the default order and another. */
Test(core_lsxsums, bands_solve_the_definition)
{
    const sums_case cases[] = {
        {300, 9, LSX_DEFAULT_K, LSX_DEFAULT_M, 2, 12}, /* the default order: sums shared */
        {300, 7, LSX_DEFAULT_K, 17, 1, 20},            /* the widest window */
        {300, 7, LSX_DEFAULT_K, 1, 4, 9},              /* a window of one column */
        {300, 7, LSX_DEFAULT_K, 7, 2, 12},             /* the first group whose windows all lie inside */
        {299, 7, LSX_DEFAULT_K, 9, 2, 12},             /* the last such group ends one column from the edge */
        {61, 7, LSX_DEFAULT_K, 9, 2, 12},              /* too narrow for whole groups in a band */
        {300, 6, 4, 9, 2, 12},                         /* another order: every sum kept */
    };
    const uint32_t W = 300, split3[] = {0, 128, 256, W}, split2[] = {0, 131, W}, whole[] = {0, W};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const sums_case *c = &cases[i];
        const uint32_t other[] = {0, c->W};
        if (c->W != W) {
            compare(c, CORE_FRAME_SPECTRUM, other, 1, 3 + i);
            continue;
        }
        compare(c, CORE_FRAME_SPECTRUM, whole, 1, 3 + i);
        compare(c, CORE_FRAME_SPECTRUM, split3, 3, 3 + i);
        compare(c, CORE_FRAME_NOISE, split2, 2, 11 + i);
    }
}

/* Flat and degenerate frames: systems whose pivots stop early, in groups
 * that share sums (the scalar path must read the shared ones too). */
Test(core_lsxsums, singular_systems_solve_the_definition)
{
    const sums_case c = {300, 6, LSX_DEFAULT_K, LSX_DEFAULT_M, 2, 40};
    const uint32_t split[] = {0, 128, 256, 300};
    compare(&c, CORE_FRAME_CONST0, split, 3, 1);
    compare(&c, CORE_FRAME_DEGENERATE, split, 3, 2);
}

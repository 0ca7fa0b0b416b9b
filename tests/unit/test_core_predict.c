/* The predictor (prefix sums, lane-parallel solve, bands) against a
 * brute-force reference that builds the normal equations of every pixel by
 * direct sums over previous rows and window offsets and calls the scalar
 * aurp_solve_ldl: predictions and coefficients must agree bit for bit. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core_frames.h"
#include "predict.h"

/* FORMAT.md 2.1 by definition, pixel by pixel. */
static uint16_t brute_predict(const uint16_t *x, uint32_t w, uint32_t m, uint32_t n, int N, int M,
                              int *kk_out, double *a)
{
    *kk_out = -1;
    if (m == 0) return n == 0 ? 0 : x[n - 1];
    if (n == 0) return x[(size_t)(m - 1) * w];
    if (n == 1) return x[(size_t)m * w];
    int K = aurp_order_at(n, N), R = aurp_rows_at(n, N, M);
    int k = (uint64_t)m * (uint64_t)R < (uint64_t)K ? (int)(m * (uint32_t)R) : K;
    uint64_t G[AURP_MAX_ORDER * AURP_MAX_ORDER] = {0}, h[AURP_MAX_ORDER] = {0};
    for (uint32_t i = 0; i < m; i++) {
        const uint16_t *row = x + (size_t)i * w;
        for (int wo = 0; wo < R; wo++) {
            uint32_t c = n - (uint32_t)wo; /* equation: sum_r a_r row[c-1-r] = row[c] */
            for (int r = 0; r < k; r++) {
                for (int s = r; s < k; s++)
                    G[r * k + s] += (uint64_t)row[c - 1 - (uint32_t)r] * row[c - 1 - (uint32_t)s];
                h[r] += (uint64_t)row[c - 1 - (uint32_t)r] * row[c];
            }
        }
    }
    int kk = aurp_solve_ldl(k, G, h, a);
    *kk_out = kk;
    if (kk == 0) return x[(size_t)m * w + n - 1];
    double v = 0;
    for (int r = 0; r < kk; r++) v = v + a[r] * (double)x[(size_t)m * w + n - 1 - (uint32_t)r];
    return aurp_round_clamp(v);
}

static void compare(core_frame_kind kind, uint32_t w, uint32_t h, int N, int M, int nbands, uint64_t seed)
{
    uint16_t *x = malloc((size_t)w * h * sizeof *x);
    core_frame_make(kind, w, h, seed, x);
    aurp_predictor pr[8];
    for (int b = 0; b < nbands; b++)
        cr_assert_eq(aurp_predictor_init(&pr[b], w, N, M, (uint32_t)((uint64_t)w * b / nbands),
                                         (uint32_t)((uint64_t)w * (b + 1) / nbands)), 0);
    double a[AURP_MAX_ORDER];
    for (uint32_t m = 0; m < h; m++) {
        const uint16_t *cur = x + (size_t)m * w, *prev = m ? cur - w : NULL;
        for (int b = 0; b < nbands; b++) {
            aurp_predictor_prepare_row(&pr[b]);
            for (uint32_t n = pr[b].c0; n < pr[b].c1; n++) {
                int kk;
                uint16_t want = brute_predict(x, w, m, n, N, M, &kk, a);
                uint16_t got = aurp_predictor_predict(&pr[b], cur, prev, n);
                cr_assert_eq(got, want, "kind %d %ux%u N=%d M=%d bands %d: pixel (%u,%u) %u != %u", kind,
                             w, h, N, M, nbands, m, n, got, want);
                if (kk >= 0) {
                    uint32_t c = n - pr[b].c0;
                    cr_assert_eq(pr[b].kused[c], kk, "(%u,%u): order %d != %d", m, n, pr[b].kused[c], kk);
                    cr_assert(memcmp(pr[b].coef + (size_t)c * (size_t)N, a, (size_t)kk * sizeof(double)) == 0,
                              "(%u,%u): coefficients differ in their bits", m, n);
                }
            }
        }
        for (int b = 0; b < nbands; b++) aurp_predictor_add_row(&pr[b], cur);
    }
    for (int b = 0; b < nbands; b++) aurp_predictor_free(&pr[b]);
    free(x);
}

Test(core_predict, spectrum_default_params)
{
    compare(CORE_FRAME_SPECTRUM, 70, 30, 11, 7, 1, 1);
    compare(CORE_FRAME_SPECTRUM, 70, 30, 11, 7, 3, 1);
}

Test(core_predict, noise_several_orders)
{
    static const int NM[][2] = {{1, 1}, {2, 1}, {3, 5}, {5, 2}, {8, 8}, {11, 7}, {16, 3}};
    for (int i = 0; i < 7; i++) compare(CORE_FRAME_NOISE, 45, 12, NM[i][0], NM[i][1], 1 + i % 3, (uint64_t)i);
}

Test(core_predict, degenerate_systems_stop_early)
{
    /* flat, saturated and proportional columns make pivots fail inside the
     * lane-parallel solve: those columns must still match */
    compare(CORE_FRAME_DEGENERATE, 90, 25, 11, 7, 1, 5);
    compare(CORE_FRAME_DEGENERATE, 90, 25, 4, 2, 2, 5);
    compare(CORE_FRAME_CHECKER, 40, 10, 11, 7, 1, 0);
    compare(CORE_FRAME_CONST65535, 40, 6, 11, 7, 2, 0);
}

Test(core_predict, largest_order)
{
    compare(CORE_FRAME_SPECTRUM, 80, 8, 32, 16, 2, 9);
    compare(CORE_FRAME_SPECTRUM, 80, 8, 32, 1, 1, 9);
}

/* aurp_solve_ldl itself: a well-conditioned system is solved accurately,
 * and a rank-deficient one stops at its rank. */
Test(core_predict, solve_ldl_properties)
{
    /* G = C^T C for C with independent columns; h = C^T b with b = C a* */
    enum { K = 6, ROWS = 20 };
    uint64_t s = 42;
    int64_t C[ROWS][K];
    double astar[K] = {0.5, -0.25, 1.0, 0.125, -1.0, 2.0};
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < K; j++) C[i][j] = (int64_t)(core_rand(&s) % 200);
    uint64_t G[K * K], h[K];
    for (int r = 0; r < K; r++) {
        for (int c = 0; c < K; c++) {
            int64_t acc = 0;
            for (int i = 0; i < ROWS; i++) acc += C[i][r] * C[i][c];
            G[r * K + c] = (uint64_t)acc;
        }
        double acc = 0;
        for (int i = 0; i < ROWS; i++) {
            double bi = 0;
            for (int j = 0; j < K; j++) bi += astar[j] * (double)C[i][j];
            acc += (double)C[i][r] * bi;
        }
        h[r] = (uint64_t)llround(acc * 8); /* exact: a* has 1/8 steps; scale back below */
    }
    double a[K];
    cr_assert_eq(aurp_solve_ldl(K, G, h, a), K);
    for (int j = 0; j < K; j++) cr_assert(fabs(a[j] / 8 - astar[j]) < 1e-9, "a[%d] = %g", j, a[j] / 8);
    /* column 3 = 2 * column 1: the solve stops at order 3 */
    for (int i = 0; i < ROWS; i++) C[i][3] = 2 * C[i][1];
    for (int r = 0; r < K; r++)
        for (int c = 0; c < K; c++) {
            int64_t acc = 0;
            for (int i = 0; i < ROWS; i++) acc += C[i][r] * C[i][c];
            G[r * K + c] = (uint64_t)acc;
        }
    cr_assert_eq(aurp_solve_ldl(K, G, h, a), 3);
}

/* aurp_solve_ldl_lanes: eight systems of the order it is compiled for, read
 * in place from a strided layout of packed upper triangles (lsmix's), give
 * bit for bit the scalar solve's coefficients; a rank-deficient lane is
 * left to the scalar path (its bit clear, the others solved), as is every
 * lane of any other order. */
Test(core_predict, solve_ldl_lanes_equals_the_scalar_solve)
{
    enum { K = AURP_SOLVE_LANES_ORDER, Z = K + 1, NE = Z * (Z + 1) / 2, L = AURP_SOLVE_LANES, ROWS = 40 };
    const size_t stride = NE + 5; /* lanes need not be packed */
    uint64_t *G = calloc(L * stride, sizeof *G);
    uint16_t gidx[K * K], hidx[K];
    for (int r = 0; r < K; r++) { /* entry (r, s) of the packed upper triangle of Z x Z, column Z-1 the target */
        for (int s = r; s < K; s++) gidx[r * K + s] = (uint16_t)(r * Z - r * (r - 1) / 2 + (s - r));
        hidx[r] = (uint16_t)(r * Z - r * (r - 1) / 2 + (K - r));
    }
    uint64_t seed = 7;
    for (int trial = 0; trial < 50; trial++) {
        int deficient = trial % 10 == 9 ? (int)(core_rand(&seed) % L) : -1;
        for (int l = 0; l < L; l++) { /* sums of z z^T over rows of random regressors, 16-bit pixels */
            uint64_t *g = G + l * stride;
            memset(g, 0, NE * sizeof *g);
            for (int i = 0; i < ROWS; i++) {
                uint64_t z[Z];
                for (int j = 0; j < Z; j++) z[j] = core_rand(&seed) % (trial & 1 ? 65536 : 300);
                if (l == deficient) z[4] = z[2]; /* two equal regressors */
                for (int r = 0, e = 0; r < Z; r++)
                    for (int s = r; s < Z; s++, e++) g[e] += z[r] * z[s];
            }
        }
        const int ridge_shift = deficient >= 0 ? 62 : 10; /* the deficient lane must stay singular */
        double a[L * K];
        int lanes = aurp_solve_ldl_lanes(K, G, stride, aurp_solve_lanes_entries(K, gidx, hidx), gidx, hidx,
                                         ridge_shift, a);
        cr_assert_eq(lanes, (1 << L) - 1 - (deficient < 0 ? 0 : 1 << deficient), "trial %d: lanes %#x", trial, lanes);
        for (int l = 0; l < L; l++) {
            if (!(lanes >> l & 1)) continue;
            uint64_t A[K * K], h[K];
            for (int r = 0; r < K; r++) {
                for (int s = r; s < K; s++) A[r * K + s] = G[l * stride + gidx[r * K + s]];
                A[r * K + r] = aurp_ridged(A[r * K + r], ridge_shift);
                h[r] = G[l * stride + hidx[r]];
            }
            double want[K];
            cr_assert_eq(aurp_solve_ldl(K, A, h, want), K);
            cr_assert(memcmp(want, a + l * K, sizeof want) == 0, "trial %d lane %d: not the scalar bits", trial, l);
        }
    }
    double a[L * K];
    cr_assert_eq(aurp_solve_ldl_lanes(K - 1, G, stride, aurp_solve_lanes_entries(K - 1, gidx, hidx), gidx, hidx, 10, a),
                 0, "another order has no lane path");
    free(G);
}

/* Causality check of the MRP plane: design on the true frame, then recompute
 * the plane with the same coefficients and class map on a copy whose pixels
 * at raster index >= i0 are random; every plane value at index <= i0 must be
 * the same bit for bit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lab_io.h"
#include "r17_mrp.h"
int main(int argc, char **argv)
{
    uint32_t W, H;
    uint16_t *u = lab_load_fits(argv[1], &W, &H);
    size_t N = (size_t)W * H;
    r17_opts o = {16, 16, 3, 8, atoi(argv[2])};
    double *P = malloc(N * sizeof *P), *P2 = malloc(N * sizeof *P2);
    int32_t *qc;
    int *cls;
    r17_mrp_plane(u, W, H, &o, P, &qc, &cls, NULL);
    uint16_t *u2 = malloc(N * 2);
    srand(1);
    int bad = 0;
    size_t tries[] = {W + 0, W + 5, 3 * W + 7, 4 * W + W - 1, 300 * W + 517, 777 * W + 1, (N / 2) | 3, N - 2};
    for (int t = 0; t < 8; t++) {
        size_t i0 = tries[t] < N ? tries[t] : N - 1;
        memcpy(u2, u, N * 2);
        for (size_t i = i0; i < N; i++) u2[i] = (uint16_t)rand();
        r17_mrp_apply(u2, W, H, o.sup, o.C, o.B, qc, cls, P2);
        size_t diff = 0, after = 0;
        for (size_t i = 0; i <= i0; i++) diff += memcmp(&P[i], &P2[i], sizeof *P) != 0;
        for (size_t i = i0 + 1; i < N; i++) after += P[i] != P2[i];
        printf("i0 %zu (m %zu n %zu): differing at <= i0: %zu; after: %zu of %zu\n", i0, i0 / W, i0 % W, diff, after, N - i0 - 1);
        bad += diff != 0;
    }
    printf(bad ? "NOT CAUSAL\n" : "causal\n");
    return bad;
}

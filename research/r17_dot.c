/* Per-pixel cost of the class predictor in the decoder: D = npx + 3 integer
 * products (Q12 coefficients, 16-bit pixels, int64 sum), a class lookup per
 * pixel (16x16 blocks), the two column means and the constant; interior
 * pixels of a 1024x1024 frame, the image read from a real frame. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "lab_io.h"
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
int main(int argc, char **argv)
{
    uint32_t W, H;
    uint16_t *u = lab_load_fits(argv[1], &W, &H);
    int sup = atoi(argv[2]), C = 16, B = 16;
    int dy[40], dx[40], n = 0;
    if (sup == 2) {
        for (int k = 1; k <= 6; k++) dy[n] = 0, dx[n++] = -k;
        for (int k = -3; k <= 3; k++) dy[n] = -1, dx[n++] = k;
        for (int k = -2; k <= 2; k++) dy[n] = -2, dx[n++] = k;
        for (int k = -1; k <= 1; k++) dy[n] = -3, dx[n++] = k;
    } else {
        for (int k = 1; k <= 8; k++) dy[n] = 0, dx[n++] = -k;
        for (int k = -4; k <= 4; k++) dy[n] = -1, dx[n++] = k;
        for (int k = -3; k <= 3; k++) dy[n] = -2, dx[n++] = k;
        for (int k = -2; k <= 2; k++) dy[n] = -3, dx[n++] = k;
        dy[n] = -4, dx[n++] = 0;
    }
    const int D = n + 3;
    ptrdiff_t off[40];
    for (int k = 0; k < n; k++) off[k] = (ptrdiff_t)dy[k] * W + dx[k];
    int32_t *qc = malloc(C * D * 4), *cma = malloc(W * 4), *cmb = malloc(W * 4);
    srand(1);
    for (int q = 0; q < C * D; q++) qc[q] = rand() % 2000 - 1000;
    for (uint32_t i = 0; i < W; i++) cma[i] = 16 * u[i], cmb[i] = 16 * u[i + W];
    int *cls = malloc((W / B) * (H / B) * sizeof *cls);
    for (uint32_t b = 0; b < (W / B) * (H / B); b++) cls[b] = rand() % C;
    double *plane = malloc((size_t)W * H * sizeof *plane), best = 1e9;
    for (int rep = 0; rep < 7; rep++) {
        double t0 = now();
        for (uint32_t m = 4; m < H; m++) {
            const uint16_t *row = u + (size_t)m * W;
            for (uint32_t x = 8; x + 4 < W; x++) {
                const int32_t *c = qc + cls[(m / B) * (W / B) + x / B] * D;
                int64_t s = 0;
                for (int k = 0; k < n; k++) s += (int64_t)c[k] * row[x + off[k]];
                s = s * 16 + (int64_t)c[n] * cma[x] + (int64_t)c[n + 1] * cmb[x] + (int64_t)c[n + 2] * 4096;
                plane[(size_t)m * W + x] = (double)s * (1.0 / 65536);
            }
        }
        double t = now() - t0;
        if (t < best) best = t;
    }
    double chk = 0;
    for (size_t i = 0; i < (size_t)W * H; i += 997) chk += plane[i];
    printf("sup %d D %d: %.2f ms per %ux%u frame, %.2f ns/pixel (min of 7) chk %g\n", sup, D, best * 1e3, W, H,
           best * 1e9 / ((double)(H - 4) * (W - 12)), chk);
    return 0;
}

/* research: a robust background predictor (causal), BGR */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
void bgr_predict(const int64_t *x, int W, int H, double arow_min, double acol, double kout, double *pred)
{
    double *L = malloc(sizeof(double) * W);
    int *cnt = calloc(W, sizeof(int));
    double s = 8.0;
    for (int n = 0; n < W; n++) { L[n] = (double)x[n]; pred[n] = n ? (double)x[n - 1] : 0; }
    for (int m = 1; m < H; m++) {
        const int64_t *r = x + (size_t)m * W;
        double o = 0; int k = 0;
        for (int n = 0; n < W; n++) {
            pred[(size_t)m * W + n] = L[n] + o;
            double d = (double)r[n] - L[n];
            if (fabs(d - o) < kout * s) {
                double a = 1.0 / (k + 2); if (a < arow_min) a = arow_min;
                s += (fabs(d - o) * 1.2533 - s) / 256.0;
                o += (d - o) * a; k++;
                if (o > 3 * s) o = 3 * s;
                if (o < -3 * s) o = -3 * s;
            }
        }
        for (int n = 0; n < W; n++) {
            double d = (double)r[n] - L[n];
            if (fabs(d) < kout * s) L[n] += d * acol, cnt[n] = 0;
            else if (d < 0) L[n] += d * 0.5, cnt[n] = 0; /* light only adds: a level above the pixel is wrong */
            else if (++cnt[n] > 48) L[n] += d * acol; /* lit for long: the level moved */
        }
    }
    free(L); free(cnt);
}

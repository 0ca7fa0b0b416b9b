/* r36: the encoder's fit of the echelle geometry from the frame alone (no
 * simulator knowledge beyond "orders are smooth bands along the rows, with
 * a star-like (Gaussian) or slit-filling (top-hat) profile and tilted
 * lines"): writes a geometry file for lsmix_px.h from the quantized values
 * a stream would carry, and prints the side-information bytes.
 *   cc -O2 -Iresearch -o /tmp/x/fitgeo research/r36_fitgeo.c -lm
 *   /tmp/x/fitgeo FRAME.fits > geo.txt   (side-information bytes on stderr) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include "lab_io.h"

#define BW 32
#define MAXO 64
static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
static double median(double *v, int n) { if (n <= 0) return 0; qsort(v, n, sizeof *v, cmpd); return n & 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]); }

static uint16_t *img; static uint32_t W, H;
static double px(int m, int n) { return img[(size_t)m * W + n]; }

/* fit y = a + b xn + c xn^2, weighted LS with outlier rejection */
static int fitq(const double *x, const double *y, int *ok, int n, double *co)
{
    for (int it = 0; it < 4; it++) {
        double S[3][4] = {{0}};
        int cnt = 0;
        for (int i = 0; i < n; i++) {
            if (!ok[i]) continue;
            double b[3] = {1, x[i], x[i] * x[i]};
            for (int r = 0; r < 3; r++) { for (int c = 0; c < 3; c++) S[r][c] += b[r] * b[c]; S[r][3] += b[r] * y[i]; }
            cnt++;
        }
        if (cnt < 4) return -1;
        for (int r = 0; r < 3; r++) S[r][r] += 1e-9;
        for (int p = 0; p < 3; p++)
            for (int r = p + 1; r < 3; r++) { double f = S[r][p] / S[p][p]; for (int c = p; c < 4; c++) S[r][c] -= f * S[p][c]; }
        for (int r = 2; r >= 0; r--) { double v = S[r][3]; for (int c = r + 1; c < 3; c++) v -= S[r][c] * co[c]; co[r] = v / S[r][r]; }
        double res[4096]; int k = 0;
        for (int i = 0; i < n; i++) if (ok[i]) res[k++] = fabs(y[i] - co[0] - co[1] * x[i] - co[2] * x[i] * x[i]);
        double mad = median(res, k) + 0.05;
        for (int i = 0; i < n; i++) ok[i] = fabs(y[i] - co[0] - co[1] * x[i] - co[2] * x[i] * x[i]) < 4 * mad;
    }
    return 0;
}

int main(int argc, char **argv)
{
    img = lab_load_fits(argv[1], &W, &H);
    if (!img) return 1;
    /* the lit width: columns whose 99th-percentile row value stands out from the overscan-like right edge */
    double *colmax = malloc(sizeof(double) * W);
    for (uint32_t n = 0; n < W; n++) { static double cv[4096]; double mx = 0; for (uint32_t m = 0; m < H; m++) { cv[m] = px(m, n); if (m >= 2) { double a = fmin(px(m, n), fmin(px(m - 1, n), px(m - 2, n))); mx = a > mx ? a : mx; } } qsort(cv, H, sizeof *cv, cmpd); colmax[n] = mx - cv[H / 2]; }
    uint32_t wi = W;
    { double rr[8]; for (int q = 0; q < 8; q++) rr[q] = colmax[W - 1 - q]; double ref = median(rr, 8); while (wi > W / 2 && (colmax[wi - 1] < 3 * ref + 20 || colmax[wi - 2] < 3 * ref + 20)) wi--; /* stop at the first lit column from the right */ }
    const double half = 0.5 * wi;
    const int NB = wi / BW;
    /* block profiles, background, order runs and centroids */
    static double P[64][4096], S[64][4096];
    double cx[MAXO * 64], cy[MAXO * 64], cvar[MAXO * 64]; int cb[MAXO * 64], nc = 0;
    for (int b = 0; b < NB; b++) {
        for (uint32_t m = 0; m < H; m++) { double s = 0; for (int n = b * BW; n < (b + 1) * BW; n++) s += px(m, n); P[b][m] = s / BW; }
        /* background: the minimum over +-30 rows, then the max over +-30 (an opening) */
        static double mn[4096];
        for (int m = 0; m < (int)H; m++) { double v = 1e30; for (int d = -30; d <= 30; d++) { int q = m + d; if (q >= 0 && q < (int)H && P[b][q] < v) v = P[b][q]; } mn[m] = v; }
        for (int m = 0; m < (int)H; m++) { double v = -1e30; for (int d = -30; d <= 30; d++) { int q = m + d; if (q >= 0 && q < (int)H && mn[q] > v) v = mn[q]; } S[b][m] = P[b][m] - v; }
        /* noise of a block row: MAD of row differences in low rows */
        double dd[4096]; int k = 0;
        for (int m = 1; m < (int)H; m++) dd[k++] = fabs(S[b][m] - S[b][m - 1]);
        double thr = 8 * median(dd, k) + 1;
        for (int m = 0; m < (int)H;) {
            if (S[b][m] <= thr) { m++; continue; }
            int m0 = m;
            while (m < (int)H && S[b][m] > thr) m++;
            int m1 = m - 1;
            if (m0 <= 2 || m1 >= (int)H - 3 || m1 - m0 < 2) continue;
            double sw = 0, sm = 0, smm = 0;
            for (int q = m0 - 3; q <= m1 + 3; q++) { if (q < 0 || q >= (int)H) continue; double v = S[b][q] > 0 ? S[b][q] : 0; sw += v, sm += v * q, smm += v * q * q; }
            if (nc < MAXO * 64) { cx[nc] = ((b + 0.5) * BW - 0.5 - half) / half; cy[nc] = sm / sw; cvar[nc] = smm / sw - (sm / sw) * (sm / sw); cb[nc] = b; nc++; }
        }
    }
    /* link centroids into orders: from the middle block outward */
    int ord[MAXO * 64]; for (int i = 0; i < nc; i++) ord[i] = -1;
    int nord = 0, mid = NB / 2; double last[MAXO];
    for (int i = 0; i < nc; i++) if (cb[i] == mid) { ord[i] = nord; last[nord] = cy[i]; nord++; }
    for (int dir = -1; dir <= 1; dir += 2) {
        double cur[MAXO]; memcpy(cur, last, sizeof cur);
        for (int b = mid + dir; b >= 0 && b < NB; b += dir)
            for (int i = 0; i < nc; i++) {
                if (cb[i] != b) continue;
                int best = -1; double bd = 8;
                for (int o = 0; o < nord; o++) if (fabs(cy[i] - cur[o]) < bd) bd = fabs(cy[i] - cur[o]), best = o;
                if (best >= 0) { ord[i] = best; cur[best] = cy[i]; }
                else if (nord < MAXO) { ord[i] = nord; cur[nord] = cy[i]; last[nord] = cy[i]; nord++; }
            }
    }
    /* star or lamp: the profile's second moment */
    double vv[MAXO * 64]; int nv = 0;
    for (int i = 0; i < nc; i++) if (ord[i] >= 0) vv[nv++] = cvar[i];
    double mvar = median(vv, nv);
    int lamp = mvar > 8;
    int npts[MAXO] = {0};
    for (int i = 0; i < nc; i++) if (ord[i] >= 0) npts[ord[i]]++;
    /* per order: trace */
    double co[MAXO][3]; int good[MAXO];
    for (int o = 0; o < nord; o++) {
        double xs[256], ys[256]; int ok[256], k = 0;
        for (int i = 0; i < nc; i++) if (ord[i] == o && k < 256) xs[k] = cx[i], ys[k] = cy[i], ok[k] = 1, k++;
        good[o] = k >= 6 && fitq(xs, ys, ok, k, co[o]) == 0;
    }
    { int mx = 0; for (int o = 0; o < nord; o++) mx = npts[o] > mx ? npts[o] : mx; for (int o = 0; o < nord; o++) if (npts[o] < mx / 3) good[o] = 0; }
    /* drop duplicate orders (curves within 6 rows at the centre: keep the one with more points) */
    for (int o = 0; o < nord; o++)
        for (int q = 0; q < nord; q++)
            if (o != q && good[o] && good[q] && fabs(co[o][0] - co[q][0]) < 6 && (npts[q] > npts[o] || (npts[q] == npts[o] && q < o))) good[o] = 0;
    /* straightened profiles: blocks of 64 columns, each column read at yc(n) + u (linear across rows) */
    #define RR 22
    static double Qs[MAXO][32][2 * RR + 1]; int nbq = wi / 64;
    for (int pass2 = 0; pass2 < 2; pass2++) {
    for (int it = 0; it < 4; it++)
    for (int o = 0; o < nord; o++) {
        if (!good[o]) continue;
        double xs[64], ys[64]; int ok[64], k = 0;
        for (int b = 0; b < nbq && b < 32; b++) {
            double *Q = Qs[o][b]; int bad = 0;
            for (int u = -RR; u <= RR; u++) {
                double sum = 0;
                for (int n = b * 64; n < (b + 1) * 64; n++) {
                    double xn = (n - half) / half, y = co[o][0] + co[o][1] * xn + co[o][2] * xn * xn + u;
                    int q = (int)floor(y); double f = y - q;
                    if (q < 0 || q + 1 >= (int)H) { bad = 1; break; }
                    sum += (1 - f) * px(q, n) + f * px(q + 1, n);
                }
                if (bad) break;
                Q[u + RR] = sum / 64;
            }
            if (bad) { Qs[o][b][0] = -1; continue; }
            double bg = 1e30; for (int u = -RR; u <= RR; u++) bg = Q[u + RR] < bg ? Q[u + RR] : bg;
            double pl[16]; int np = 0;
            for (int u = -RR; u <= RR; u++) if (lamp ? abs(u) < 3 : (abs(u) >= 5 && abs(u) <= 7)) pl[np++] = Q[u + RR] - bg;
            double lev = median(pl, np), ctr;
            if (lamp) { /* the midpoint of the slit image's 50 % edges */
                if (lev < 2) continue;
                double e[2]; int okk = 1;
                for (int sd = -1; sd <= 1; sd += 2) {
                    int u = 0;
                    while (abs(u) < RR && Q[u + RR] - bg > 0.5 * lev) u += sd;
                    if (abs(u) >= RR) { okk = 0; break; }
                    double a = Q[u - sd + RR] - bg, c = Q[u + RR] - bg;
                    e[sd > 0] = (u - sd) + sd * (a - 0.5 * lev) / (a - c);
                }
                if (!okk) continue;
                ctr = 0.5 * (e[0] + e[1]);
            } else { /* the centroid of the core above the wing's level */
                double sw = 0, sm = 0;
                for (int u = -5; u <= 5; u++) { double v = Q[u + RR] - bg - lev; sw += v, sm += v * u; }
                if (sw <= 0) continue;
                ctr = sm / sw;
            }
            xs[k] = ((b + 0.5) * 64 - 0.5 - half) / half; ys[k] = co[o][0] + co[o][1] * xs[k] + co[o][2] * xs[k] * xs[k] + ctr; ok[k] = 1; k++;
        }
        double c2[3];
        if (k >= 5 && fitq(xs, ys, ok, k, c2) == 0) memcpy(co[o], c2, sizeof c2);
        else good[o] = 0;
    }
    if (pass2 == 0) {
        double xs[MAXO], ys[MAXO], c3[3], c4[3]; int ok[MAXO], k = 0;
        for (int o = 0; o < nord; o++) if (good[o]) xs[k] = co[o][0] / H, ys[k] = co[o][2], ok[k] = 1, k++;
        int f2 = k >= 5 && fitq(xs, ys, ok, k, c3) == 0;
        k = 0;
        for (int o = 0; o < nord; o++) if (good[o]) xs[k] = co[o][0] / H, ys[k] = co[o][1], ok[k] = 1, k++;
        int f1 = k >= 5 && fitq(xs, ys, ok, k, c4) == 0;
        for (int o = 0; o < nord && f1 && f2; o++) {
            if (!good[o]) continue;
            double x = co[o][0] / H, p2 = c3[0] + c3[1] * x + c3[2] * x * x, p1 = c4[0] + c4[1] * x + c4[2] * x * x;
            if (fabs(co[o][2] - p2) > 1.5 || fabs(co[o][1] - p1) > 1.5) co[o][1] = p1, co[o][2] = p2;
        }
    }
    for (int o = 0; o < nord; o++)
        for (int q = 0; q < nord; q++)
            if (o != q && good[o] && good[q] && fabs(co[o][0] - co[q][0]) < 6 && (npts[q] > npts[o] || (npts[q] == npts[o] && q < o))) good[o] = 0;
    }
    /* seeing (star) from log-parabola at the block peaks; slit from area / plateau */
    double sees[4096], slits[MAXO][128]; int ns = 0, nsl[MAXO] = {0};
    for (int i = 0; i < nc; i++) {
        int o = ord[i]; if (o < 0 || !good[o]) continue;
        int b = cb[i];
        double xn = cx[i], yc = co[o][0] + co[o][1] * xn + co[o][2] * xn * xn;
        int c = (int)lrint(yc);
        if (c < 20 || c > (int)H - 21) continue;
        if (!lamp) {
            int pk = c; for (int q = c - 2; q <= c + 2; q++) if (S[b][q] > S[b][pk]) pk = q;
            double a = S[b][pk - 1], m0 = S[b][pk], d = S[b][pk + 1];
            if (a > 0 && m0 > 0 && d > 0) { double cc = 0.5 * (log(a) + log(d)) - log(m0); if (cc < 0) sees[ns++] = sqrt(-0.5 / cc); }
        }
        /* plateau: lamp, the central rows; star, the wing beyond 4 sigma */
        double area = 0, pl[64]; int np = 0;
        for (int q = c - 20; q <= c + 20; q++) {
            double u = q - yc;
            if (lamp ? fabs(u) < 3 : (fabs(u) > 5 && fabs(u) < 7.5)) pl[np++] = S[b][q];
        }
        double plat = median(pl, np);
        if (plat <= 0) continue;
        if (lamp) { for (int q = c - 20; q <= c + 20; q++) area += S[b][q]; }
        else { /* the wing's extent: rows beyond 5 sigma-ish above half the plateau, both sides */
            int up = 0, dn = 0;
            for (int d = 5; d <= 20; d++) { if (S[b][c - d] > 0.5 * plat) up = d; else if (d > 8) break; }
            for (int d = 5; d <= 20; d++) { if (S[b][c + d] > 0.5 * plat) dn = d; else if (d > 8) break; }
            area = plat * (up + dn + 1);
        }
        if (nsl[o] < 128) slits[o][nsl[o]++] = area / plat;
    }
    if (!lamp) {
        ns = 0;
        for (int o = 0; o < nord; o++) {
            if (!good[o]) continue;
            for (uint32_t n = 0; n < wi && ns < 4096; n += 1) {
                double xn = (n - half) / half, yc = co[o][0] + co[o][1] * xn + co[o][2] * xn * xn;
                int c = (int)lrint(yc);
                if (c < 20 || c > (int)H - 21) continue;
                double bg = 0.5 * (px(c - 14, n) + px(c + 14, n));
                double a = px(c - 1, n) - bg, m0 = px(c, n) - bg, d = px(c + 1, n) - bg;
                if (m0 < 1000 || a <= 0 || d <= 0) continue;
                double cc = 0.5 * (log(a) + log(d)) - log(m0);
                if (cc < 0) sees[ns++] = sqrt(-0.5 / cc);
            }
        }
    }
    double seeing = lamp ? 2.0 : median(sees, ns);
    double slitv[MAXO];
    for (int o = 0; o < nord; o++) {
        double L[32]; int k = 0;
        if (!good[o]) continue;
        for (int b = 0; b < nbq && b < 32; b++) {
            double *Q = Qs[o][b]; if (Q[0] < 0) continue;
            double bg = 1e30; for (int u = -RR; u <= RR; u++) bg = Q[u + RR] < bg ? Q[u + RR] : bg;
            double pl[16]; int np = 0;
            for (int u = -RR; u <= RR; u++) if (lamp ? abs(u) < 3 : (abs(u) >= 5 && abs(u) <= 7)) pl[np++] = Q[u + RR] - bg;
            double lev = median(pl, np);
            if (lev < 2) continue;
            double e[2]; int okk = 1;
            for (int sd = -1; sd <= 1; sd += 2) {
                int u = lamp ? 0 : 5 * sd; e[sd > 0] = 0;
                while (abs(u) < RR && Q[u + RR] - bg > 0.5 * lev) u += sd;
                if (abs(u) >= RR) { okk = 0; break; }
                double a = Q[u - sd + RR] - bg, c = Q[u + RR] - bg; /* crossing between u - sd and u */
                e[sd > 0] = (u - sd) + sd * (a - 0.5 * lev) / (a - c);
            }
            if (okk) L[k++] = e[1] - e[0];
        }
        slitv[o] = k ? median(L, k) : 10;
    }
    /* tilt and bend per order: cross-correlation of rows along the trace */
    double tilt[MAXO], bend[MAXO], slit[MAXO];
    for (int o = 0; o < nord; o++) {
        tilt[o] = bend[o] = 0; slit[o] = slitv[o];
        if (!good[o]) continue;
        const double a = lamp ? fmin(5.0, 0.5 * slit[o] - 2) : 3.0;
        double sh[3];
        const double us[3][2] = {{-a, a}, {-a, 0}, {0, a}};
        for (int t = 0; t < 3; t++) {
            /* high-passed spectra of rows u1, u2 along the trace (linear interpolation across rows) */
            static double r1[4096], r2[4096];
            for (uint32_t n = 0; n < wi; n++) {
                double xn = (n - half) / half, yc = co[o][0] + co[o][1] * xn + co[o][2] * xn * xn;
                for (int z = 0; z < 2; z++) {
                    double y = yc + us[t][z]; int q = (int)floor(y); double f = y - q;
                    double v = (q < 0 || q + 1 >= (int)H) ? 0 : (1 - f) * px(q, n) + f * px(q + 1, n);
                    (z ? r2 : r1)[n] = v;
                }
            }
            static double h1[4096], h2[4096];
            for (int n = 0; n < (int)wi; n++) {
                double s1 = 0, s2 = 0; int k = 0;
                for (int d = -8; d <= 8; d++) { int q = n + d; if (q < 0 || q >= (int)wi) continue; s1 += r1[q], s2 += r2[q], k++; }
                h1[n] = fmax(-0.5, fmin(0.5, r1[n] / (s1 / k + 1) - 1)), h2[n] = fmax(-0.5, fmin(0.5, r2[n] / (s2 / k + 1) - 1));
            }
            double cc[9]; int best = 4;
            for (int d = -4; d <= 4; d++) {
                double s = 0;
                for (int n = 10; n < (int)wi - 10; n++) s += h2[n] * h1[n - d];
                cc[d + 4] = s;
                if (cc[d + 4] > cc[best]) best = d + 4;
            }
            double off = 0;
            if (best > 0 && best < 8) { double l = cc[best - 1], c0 = cc[best], r = cc[best + 1]; off = 0.5 * (l - r) / (l - 2 * c0 + r); }
            sh[t] = best - 4 + off;
        }
        tilt[o] = sh[0] / (2 * a);
        bend[o] = (sh[2] - sh[1]) / (2 * a * a);
    }
    /* smooth tilt, bend, slit across orders: a robust line in the order's centre row */
    {
        double xs[MAXO], ys[MAXO]; int ok[MAXO], k; double c3[3];
        double *arrs[3] = {tilt, bend, slit};
        for (int t = 0; t < 3; t++) {
            k = 0;
            for (int o = 0; o < nord; o++) if (good[o]) xs[k] = co[o][0] / H, ys[k] = arrs[t][o], ok[k] = 1, k++;
            if (k >= 5 && fitq(xs, ys, ok, k, c3) == 0) {
                for (int o = 0; o < nord; o++) { double x = co[o][0] / H; arrs[t][o] = c3[0] + c3[1] * x + c3[2] * x * x; }
            }
        }
    }
    /* quantize as a stream would carry them, and write */
    int ng = 0; for (int o = 0; o < nord; o++) ng += good[o];
    printf("%d %.17g %.17g %d\n", lamp, half, (double)wi, ng);
    double Q[7] = {32, 256, 256, 256, 256, 16384, 65536};
    double qsee = round(seeing * 256) / 256;
    for (int o = 0; o < nord; o++) {
        if (!good[o]) continue;
        double v[8] = {co[o][0], co[o][1], co[o][2], qsee, slit[o], tilt[o], bend[o], 0};
        v[0] = round(v[0] * Q[0]) / Q[0];
        for (int t = 1; t < 7; t++) if (t != 3) v[t] = round(v[t] * Q[t]) / Q[t];
        v[7] = 0.5 * v[4] + (lamp ? 3 : 4 * v[3] + 3);
        printf("%.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
    }
    fprintf(stderr, "%s: lamp %d wi %u seeing %.3f orders %d (of %d found); side info %d bytes\n", argv[1], lamp, wi, seeing, ng, nord, 6 + 1 + 2 + 12 * ng);
    return 0;
}

/* Research lab for the default profile (issue #8): residuals of candidate
 * predictors and the exact code length of candidate residual coders, on real
 * and simulated frames.  Double arithmetic throughout: this measures ideas,
 * it is not the format.
 *
 *   cc -O2 -march=native -o lab research/lab.c -lm
 *   ./lab pgm FRAME.fits OUT.pgm
 *   ./lab eval [options] FRAME.fits...
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab_io.h"

#define MAXD 40

typedef struct {
    int nreg;
    int dy[MAXD], dx[MAXD];
    int intercept;
    double ridge;   /* lambda = ridge * trace / D */
    int forget;     /* 0: no forgetting; else decay 2^-forget per row */
    int wl, wr;     /* training window columns n-wl .. n+wr of previous rows */
    int solve_every;
    double cmrate, cmrate2;
    int dev;
} pcfg;

static inline double px(const uint16_t *u, int W, int H, int m, int n)
{
    if (n < 0) n = 0;
    if (n >= W) n = W - 1;
    if (m < 0) m = 0;
    (void)H;
    return u[(size_t)m * W + n];
}

/* LDL solve with ridge; returns 0 if failed */
static int solve(int D, double *G, double *hv, double *a)
{
    double L[MAXD][MAXD], d[MAXD], y[MAXD];
    for (int j = 0; j < D; j++) {
        double s = G[j * D + j];
        for (int k = 0; k < j; k++) s -= L[j][k] * L[j][k] * d[k];
        if (!(s > 1e-9 * (G[j * D + j] + 1e-30))) return 0;
        d[j] = s;
        for (int i = j + 1; i < D; i++) {
            double t = G[i * D + j];
            for (int k = 0; k < j; k++) t -= L[i][k] * L[j][k] * d[k];
            L[i][j] = t / s;
        }
    }
    for (int i = 0; i < D; i++) {
        double t = hv[i];
        for (int k = 0; k < i; k++) t -= L[i][k] * y[k];
        y[i] = t;
    }
    for (int i = D - 1; i >= 0; i--) {
        double t = y[i] / d[i];
        for (int k = i + 1; k < D; k++) t -= L[k][i] * a[k];
        a[i] = t;
    }
    return 1;
}

/* residuals of the generalized online LS predictor */
static double *g_pred; /* if set, predict_ls stores its prediction here */
static void predict_ls(const uint16_t *u, int W, int H, const pcfg *c, int32_t *res)
{
    int D = c->nreg + (c->intercept ? 1 : 0);
    int Z = D + 1; /* regressors + target */
    size_t msz = (size_t)Z * Z;
    double *C = calloc((size_t)W * msz, sizeof(double));      /* per column decayed sums */
    double *P = calloc((size_t)(W + 1) * msz, sizeof(double)); /* prefix along columns */
    double *coef = calloc((size_t)W * D, sizeof(double));
    uint8_t *ok = calloc(W, 1);
    double decay = c->forget ? 1.0 - ldexp(1.0, -c->forget) : 1.0;
    double z[MAXD + 1];
    double *cm = calloc(W, sizeof(double)), *cm2 = calloc(W, sizeof(double));
#define CMAT(nn) (c->dev ? cm[(nn) < 0 ? 0 : (nn) >= W ? W - 1 : (nn)] : 0.0)
#define REGV(mm, r, nn) (c->dy[r] == 99 ? cm[nn] : c->dy[r] == 98 ? cm2[nn] : px(u, W, H, (mm) + c->dy[r], (nn) + c->dx[r]) - CMAT((nn) + c->dx[r]))
    for (int m = 0; m < H; m++) {
        if (m >= 1 && (m % c->solve_every == 0 || m == 1)) {
            for (int n = 0; n < W; n++)
                for (size_t k = 0; k < msz; k++) P[(n + 1) * msz + k] = P[n * msz + k] + C[n * msz + k];
            for (int n = 0; n < W; n++) {
                int a0 = n - c->wl, a1 = n + c->wr;
                if (a0 < 0) a0 = 0;
                if (a1 > W - 1) a1 = W - 1;
                double G[MAXD * MAXD], hv[MAXD];
                double tr = 0;
                for (int i = 0; i < D; i++) {
                    for (int j = 0; j < D; j++)
                        G[i * D + j] = P[(a1 + 1) * msz + i * Z + j] - P[a0 * msz + i * Z + j];
                    hv[i] = P[(a1 + 1) * msz + i * Z + D] - P[a0 * msz + i * Z + D];
                    tr += G[i * D + i];
                }
                double lam = c->ridge * tr / D + 1e-9;
                for (int i = 0; i < D; i++) G[i * D + i] += lam;
                ok[n] = (uint8_t)solve(D, G, hv, coef + (size_t)n * D);
            }
        }
        for (int n = 0; n < W; n++) {
            double pred;
            if (m == 0) pred = n ? u[n - 1] : 32768;
            else if (!ok[n]) pred = n ? u[(size_t)m * W + n - 1] : u[(size_t)(m - 1) * W];
            else {
                double v = 0;
                const double *a = coef + (size_t)n * D;
                for (int r = 0; r < c->nreg; r++) v += a[r] * REGV(m, r, n);
                if (c->intercept) v += a[c->nreg] * 256.0;
                pred = v + CMAT(n);
            }
            if (g_pred) g_pred[(size_t)m * W + n] = pred;
            double t = floor(pred + 0.5);
            if (t < 0) t = 0;
            if (t > 65535) t = 65535;
            res[(size_t)m * W + n] = (int32_t)u[(size_t)m * W + n] - (int32_t)t;
        }
        /* row m joins the training sums (needs row m-2 for dy=-2) */
        for (int n = 0; n < W; n++) {
            double *Cn = C + (size_t)n * msz;
            if (decay != 1.0)
                for (size_t k = 0; k < msz; k++) Cn[k] *= decay;
            for (int r = 0; r < c->nreg; r++) {
                z[r] = REGV(m, r, n);
            }
            if (c->intercept) z[c->nreg] = 256.0;
            z[D] = u[(size_t)m * W + n] - CMAT(n);
            for (int i = 0; i < Z; i++)
                for (int j = 0; j < Z; j++) Cn[i * Z + j] += z[i] * z[j];
        }
        for (int n = 0; n < W; n++) {
            double x = u[(size_t)m * W + n];
            cm[n] = m == 0 ? x : cm[n] + (x - cm[n]) * c->cmrate;
            cm2[n] = m == 0 ? x : cm2[n] + (x - cm2[n]) * c->cmrate2;
        }
    }
    free(cm); free(cm2);
    free(C);
    free(P);
    free(coef);
    free(ok);
}

/* blend of two predictions by causal local error energy */
static double g_bpow = 2, g_bcol = 1;
static double *g_act; static double g_actw = 1; static int g_np = 2;
static void blend(const uint16_t *u, int W, int H, const double *p1, const double *p2, const double *p3, int32_t *res)
{
    const double *P[3] = {p1, p2, p3};
    double *err[3], *col[3];
    const int NP = g_np;
    for (int k = 0; k < NP; k++) { err[k] = calloc((size_t)W * H, sizeof(double)); col[k] = calloc(W, sizeof(double)); }
    for (int m = 0; m < H; m++) {
        for (int n = 0; n < W; n++) {
            double w[3], num = 0, den = 0, eact = 0;
            for (int k = 0; k < NP; k++) {
                double E = 0;
                if (n) E += err[k][(size_t)m * W + n - 1];
                if (m) {
                    E += err[k][(size_t)(m - 1) * W + n];
                    if (n) E += err[k][(size_t)(m - 1) * W + n - 1];
                    if (n + 1 < W) E += err[k][(size_t)(m - 1) * W + n + 1];
                }
                E += g_bcol * 4 * col[k][n];
                w[k] = 1.0 / pow(E + 1.0, g_bpow);
                eact += w[k] * E;
                num += w[k] * P[k][(size_t)m * W + n];
                den += w[k];
            }
            double t = floor(num / den + 0.5);
            if (t < 0) t = 0;
            if (t > 65535) t = 65535;
            size_t i = (size_t)m * W + n;
            res[i] = (int32_t)u[i] - (int32_t)t;
            if (g_act) g_act[i] = eact / den;
            for (int k = 0; k < NP; k++) err[k][i] = fabs(u[i] - P[k][i]);
        }
        for (int k = 0; k < NP; k++)
            for (int n = 0; n < W; n++) col[k][n] = m == 0 ? err[k][(size_t)m * W + n] : col[k][n] * 0.875 + 0.125 * err[k][(size_t)m * W + n];
    }
    for (int k = 0; k < NP; k++) { free(err[k]); free(col[k]); }
}

/* ---- coders ------------------------------------------------------------ */

static double static_bits(const int32_t *e, size_t n)
{
    int *hist = calloc(131071, sizeof(int));
    for (size_t i = 0; i < n; i++) hist[e[i] + 65535]++;
    double b = 0;
    for (int i = 0; i < 131071; i++)
        if (hist[i]) b -= hist[i] * log2((double)hist[i] / n);
    free(hist);
    return b;
}

typedef struct {
    int split;   /* magnitudes < 2^split are their own token */
    int msb;     /* mantissa bits in the token */
    int qa;      /* activity context levels */
    int qc;      /* column-level context levels */
    double qs;   /* quantizer scale: q = floor(qs * log2(1 + x)) */
    int decay;   /* counts decay 2^-decay per row (0 = none) */
    int perpixel;/* update after every pixel instead of every row */
    int sign_ctx;
} ccfg;

static int token_of(uint32_t v, const ccfg *c, int *raw)
{
    uint32_t lim = 1u << c->split;
    if (v < lim) { *raw = 0; return (int)v; }
    int nb = 31 - __builtin_clz(v);
    int h = c->msb;
    *raw = nb - h;
    return (int)lim + (nb - c->split) * (1 << h) + (int)((v >> (nb - h)) & ((1u << h) - 1));
}

static inline int qlog(double x, double s, int levels)
{
    int q = (int)(s * log2(1.0 + x));
    return q < levels ? q : levels - 1;
}

static double ctx_bits(const int32_t *e, int W, int H, const ccfg *c)
{
    int T = (1 << c->split) + (16 - c->split) * (1 << c->msb) + 1;
    int NC = c->qa * c->qc;
    double *cnt = calloc((size_t)NC * T, sizeof(double));
    double *tot = calloc(NC, sizeof(double));
    double *rh = calloc((size_t)NC * T, sizeof(double));
    double *colm = calloc(W, sizeof(double));
    double *rowsum = calloc(W, sizeof(double));
    double sgn[3][3][2];
    for (int i = 0; i < 18; i++) ((double *)sgn)[i] = 1;
    double bits = 0;
    double dec = c->decay ? 1.0 - ldexp(1.0, -c->decay) : 1.0;
    for (int k = 0; k < NC * T; k++) cnt[k] = 0.05;
    for (int k = 0; k < NC; k++) tot[k] = 0.05 * T;
    for (int m = 0; m < H; m++) {
        memset(rh, 0, sizeof(double) * NC * T);
        for (int n = 0; n < W; n++) {
#define E(mm, nn) ((mm) >= 0 && (nn) >= 0 && (nn) < W ? abs(e[(size_t)(mm) * W + (nn)]) : 0)
            double A;
            if (m == 0 && n == 0) A = 0;
            else {
                A = 2.0 * E(m, n - 1) + 2.0 * E(m - 1, n) + E(m - 1, n - 1) + E(m - 1, n + 1) +
                    E(m, n - 2) + E(m - 2, n);
                if (m == 0) A = 4.0 * E(m, n - 1) + 2.0 * E(m, n - 2) + 2.0 * E(m, n - 1);
            }
            if (g_act) A = (1 - g_actw) * A + g_actw * 8.0 * g_act[(size_t)m * W + n] / 4.0;
            int qa = qlog(A / 8.0, c->qs, c->qa);
            int qc = c->qc > 1 ? qlog(colm[n], c->qs, c->qc) : 0;
            int ctx = qa * c->qc + qc;
            int32_t ev = e[(size_t)m * W + n];
            uint32_t v = (uint32_t)abs(ev);
            int raw;
            int t = token_of(v, c, &raw);
            bits += -log2(cnt[ctx * T + t] / tot[ctx]) + raw;
            if (v) {
                if (c->sign_ctx) {
                    int s1 = n ? (e[(size_t)m * W + n - 1] > 0) - (e[(size_t)m * W + n - 1] < 0) + 1 : 1;
                    int s2 = m ? (e[(size_t)(m - 1) * W + n] > 0) - (e[(size_t)(m - 1) * W + n] < 0) + 1 : 1;
                    int sb = ev > 0;
                    bits += -log2(sgn[s1][s2][sb] / (sgn[s1][s2][0] + sgn[s1][s2][1]));
                    sgn[s1][s2][sb] += 1;
                } else bits += 1;
            }
            if (c->perpixel) {
                cnt[ctx * T + t] += 1;
                tot[ctx] += 1;
            } else rh[ctx * T + t] += 1;
            rowsum[n] = v;
        }
        if (!c->perpixel) {
            for (int k = 0; k < NC; k++) {
                double s = 0;
                for (int t = 0; t < T; t++) {
                    cnt[k * T + t] = cnt[k * T + t] * dec + rh[k * T + t];
                    s += cnt[k * T + t];
                }
                tot[k] = s;
            }
        }
        for (int n = 0; n < W; n++) colm[n] = m == 0 ? rowsum[n] : colm[n] * 0.875 + rowsum[n] * 0.125;
    }
    free(cnt); free(tot); free(rh); free(colm); free(rowsum);
    return bits;
}

/* ---- paper predictor residuals (for reference): N=11, M=7, all rows ---- */
static void predict_paper(const uint16_t *u, int W, int H, int32_t *res)
{
    pcfg c = {0};
    c.nreg = 11;
    for (int r = 0; r < 11; r++) { c.dy[r] = 0; c.dx[r] = -1 - r; }
    c.ridge = 0;
    c.forget = 0;
    c.wl = 6;
    c.wr = 0;
    c.solve_every = 1;
    predict_ls(u, W, H, &c, res);
}

static void add_reg(pcfg *c, int dy, int dx) { c->dy[c->nreg] = dy; c->dx[c->nreg] = dx; c->nreg++; }

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "pgm")) {
        uint32_t w, h;
        uint16_t *u = lab_load_fits(argv[2], &w, &h);
        if (!u) return 1;
        return lab_write_pgm(argv[3], u, w, h) ? 1 : 0;
    }
    if (argc < 3) { fprintf(stderr, "usage: lab eval [opts] FRAME...\n"); return 2; }
    /* options */
    pcfg pc = {0};
    int f3 = 6, w3 = 8, actctx = 0, blendmode = 0; double cmr = 0, cmr2 = 0; int prev2 = 0, K = 11, prevrow = 5, intercept = 1, paper = 0;
    double ridge = 3e-4;
    pc.forget = 4;
    pc.wl = 6; pc.wr = 0; pc.solve_every = 1;
    ccfg cc = {.split = 4, .msb = 2, .qa = 12, .qc = 1, .qs = 2.0, .decay = 0, .perpixel = 0};
    int i = 2;
    for (; i < argc && argv[i][0] == '-'; i++) {
        char *a = argv[i];
        if (!strncmp(a, "-K=", 3)) K = atoi(a + 3);
        else if (!strncmp(a, "-prev=", 6)) prevrow = atoi(a + 6);
        else if (!strncmp(a, "-prev2=", 7)) prev2 = atoi(a + 7);
        else if (!strncmp(a, "-cm=", 4)) { cmr = atof(a + 4); }
        else if (!strncmp(a, "-dev=", 5)) { pc.dev = 1; pc.cmrate = atof(a + 5); }
        else if (!strncmp(a, "-cm2=", 5)) { cmr2 = atof(a + 5); }
        else if (!strncmp(a, "-icpt=", 6)) intercept = atoi(a + 6);
        else if (!strncmp(a, "-ridge=", 7)) ridge = atof(a + 7);
        else if (!strncmp(a, "-forget=", 8)) pc.forget = atoi(a + 8);
        else if (!strncmp(a, "-wl=", 4)) pc.wl = atoi(a + 4);
        else if (!strncmp(a, "-wr=", 4)) pc.wr = atoi(a + 4);
        else if (!strncmp(a, "-every=", 7)) pc.solve_every = atoi(a + 7);
        else if (!strncmp(a, "-paper", 6)) paper = 1;
        else if (!strncmp(a, "-blend=", 7)) { blendmode = 1; g_bpow = atof(a + 7); }
        else if (!strncmp(a, "-bcol=", 6)) g_bcol = atof(a + 6);
        else if (!strncmp(a, "-p3=", 4)) { g_np = 3; sscanf(a + 4, "%d,%d", &f3, &w3); }
        else if (!strncmp(a, "-actctx=", 8)) { actctx = 1; g_actw = atof(a + 8); }
        else if (!strncmp(a, "-split=", 7)) cc.split = atoi(a + 7);
        else if (!strncmp(a, "-msb=", 5)) cc.msb = atoi(a + 5);
        else if (!strncmp(a, "-qa=", 4)) cc.qa = atoi(a + 4);
        else if (!strncmp(a, "-qc=", 4)) cc.qc = atoi(a + 4);
        else if (!strncmp(a, "-qs=", 4)) cc.qs = atof(a + 4);
        else if (!strncmp(a, "-decay=", 7)) cc.decay = atoi(a + 7);
        else if (!strncmp(a, "-pp", 3)) cc.perpixel = 1;
        else if (!strncmp(a, "-sctx", 5)) cc.sign_ctx = 1;
        else { fprintf(stderr, "unknown %s\n", a); return 2; }
    }
    for (int r = 0; r < K; r++) add_reg(&pc, 0, -1 - r);
    /* previous row, centred: 1 -> n; 3 -> n-1..n+1; 5 -> n-2..n+2; ... */
    for (int r = 0; r < prevrow; r++) add_reg(&pc, -1, r - prevrow / 2);
    for (int r = 0; r < prev2; r++) add_reg(&pc, -2, r - prev2 / 2);
    if (cmr > 0) { add_reg(&pc, 99, 0); pc.cmrate = cmr; }
    if (cmr2 > 0) { add_reg(&pc, 98, 0); pc.cmrate2 = cmr2; }
    pc.intercept = intercept;
    pc.ridge = ridge;
    for (; i < argc; i++) {
        uint32_t w, h;
        uint16_t *u = lab_load_fits(argv[i], &w, &h);
        if (!u) { fprintf(stderr, "%s: cannot load\n", argv[i]); continue; }
        size_t n = (size_t)w * h;
        int32_t *e = malloc(n * sizeof *e);
        if (paper) predict_paper(u, (int)w, (int)h, e);
        else if (blendmode) {
            double *p1 = malloc(n * sizeof(double)), *p2 = malloc(n * sizeof(double));
            g_pred = p1;
            predict_ls(u, (int)w, (int)h, &pc, e);
            pcfg c2 = {0};
            c2.intercept = 1; c2.forget = 4; c2.solve_every = 1; c2.ridge = 0;
            g_pred = p2;
            predict_ls(u, (int)w, (int)h, &c2, e);
            double *p3 = NULL;
            if (g_np == 3) {
                pcfg c3 = pc;
                c3.forget = f3; c3.wl = c3.wr = w3;
                p3 = malloc(n * sizeof(double));
                g_pred = p3;
                predict_ls(u, (int)w, (int)h, &c3, e);
            }
            g_pred = NULL;
            if (actctx) g_act = malloc(n * sizeof(double));
            blend(u, (int)w, (int)h, p1, p2, p3, e);
            free(p1); free(p2); free(p3);
        }
        else predict_ls(u, (int)w, (int)h, &pc, e);
        double sb = static_bits(e, n), cb = ctx_bits(e, (int)w, (int)h, &cc);
        printf("%-40s static %.4f ctx %.4f bpp\n", strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i],
               sb / n, cb / n);
        fflush(stdout);
        free(u);
        free(e);
        free(g_act); g_act = NULL;
    }
    return 0;
}

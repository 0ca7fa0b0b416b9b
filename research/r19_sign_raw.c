/* Analysis of a residual dump (lsmix decoder, SX_DUMP): ideal adaptive code
 * lengths of the sign and of the top raw bit(s) under several contexts.
 *   sxan DUMP STREAM_BYTES
 * Prints one line per (model, estimator): name, events, bits saved vs uniform. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { int32_t m, n, c, e, pred, pred1, acc, nctx, nib, np, cas, pad; double bl; double pp[8]; } sx_rec;

static int tok_of(uint32_t v, int *nraw)
{
    if (v < 16) { *nraw = 0; return (int)v; }
    int b = 31 - __builtin_clz(v);
    *nraw = b - 2;
    return 16 + 4 * (b - 4) + (int)((v >> (b - 2)) & 3);
}
static inline int sg(int64_t x) { return x < 0 ? 0 : x == 0 ? 1 : 2; }
static inline int tbk(int t) { return t < 4 ? 0 : t < 16 ? 1 : 2; }

/* ---- estimators --------------------------------------------------------- */
/* K-ary adaptive counts (delta each), halving when the total exceeds lim. */
static double cost_counts(const uint32_t *ctx, const uint8_t *sym, size_t n, uint32_t nctx, int K, double delta,
                          double lim)
{
    double *cnt = malloc(sizeof(double) * nctx * K), *tot = malloc(sizeof(double) * nctx);
    for (size_t i = 0; i < (size_t)nctx * K; i++) cnt[i] = 0;
    for (uint32_t i = 0; i < nctx; i++) tot[i] = 0;
    double bits = 0;
    for (size_t i = 0; i < n; i++) {
        double *c = cnt + (size_t)ctx[i] * K;
        bits -= log2((c[sym[i]] + delta) / (tot[ctx[i]] + K * delta));
        c[sym[i]] += 1;
        tot[ctx[i]] += 1;
        if (tot[ctx[i]] > lim) {
            double t = 0;
            for (int k = 0; k < K; k++) t += (c[k] *= 0.5);
            tot[ctx[i]] = t;
        }
    }
    free(cnt);
    free(tot);
    return bits;
}

/* Binary shift-update probability (16-bit), one or two rates averaged; the
 * kind of model a rANS coder would carry (p quantized to 12 bits for coding). */
static double cost_shift(const uint32_t *ctx, const uint8_t *sym, size_t n, uint32_t nctx, int r1, int r2)
{
    uint16_t *pa = malloc(2 * nctx), *pb = malloc(2 * nctx);
    for (uint32_t i = 0; i < nctx; i++) pa[i] = pb[i] = 32768;
    double bits = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = ctx[i];
        uint32_t p = r2 ? ((uint32_t)pa[c] + pb[c]) >> 1 : pa[c]; /* P(sym = 1), 16 bits */
        uint32_t q12 = p >> 4;
        if (q12 < 1) q12 = 1;
        if (q12 > 4095) q12 = 4095;
        bits -= log2((sym[i] ? q12 : 4096 - q12) / 4096.0);
        if (sym[i]) {
            pa[c] += (65535 - pa[c]) >> r1;
            if (r2) pb[c] += (65535 - pb[c]) >> r2;
        } else {
            pa[c] -= pa[c] >> r1;
            if (r2) pb[c] -= pb[c] >> r2;
        }
    }
    free(pa);
    free(pb);
    return bits;
}


static int W, H, nctx, nib, C;
static int32_t *E, *X, *T;
static sx_rec **P;
#define EA(mm, nn) (((mm) >= 0 && (nn) >= 0 && (nn) < W) ? E[(size_t)(mm) * W + (nn)] : 0)
static uint32_t sign_ctx(int s, size_t j, uint32_t *ncp)
{
    uint32_t nc = 1;
            int m = (int)(j / W), n = (int)(j % W);
            int eW = EA(m, n - 1), eN = EA(m - 1, n), eNW = EA(m - 1, n - 1), eNE = EA(m - 1, n + 1);
            int eWW = EA(m, n - 2), eNN = EA(m - 2, n);
            int t = T[j], tb = tbk(t), a = P[j]->c / nib, c = P[j]->c;
            int WN = sg(eW) * 3 + sg(eN);
            int WNx = WN * 9 + sg(eNW) * 3 + sg(eNE);
            const sx_rec *r = P[j];
            double u = r->m == 0 ? r->pred : r->bl + r->acc / 1024.0; /* unrounded final prediction */
            double d = u - r->pred;                                     /* in about [-1, 1] */
            int f8 = (int)floor((d + 1.0) * 4.0);
            f8 = f8 < 0 ? 0 : f8 > 7 ? 7 : f8;
            int f4 = d < -0.25 ? 0 : d < 0 ? 1 : d < 0.25 ? 2 : 3;
            int64_t s6 = 2 * (int64_t)eW + 2 * eN + eNW + eNE + eWW + eNN;
            int ppb = 0;
            for (int q = 0; q < r->np && q < 7; q++) ppb |= (r->pp[q] > u) << q;
            uint32_t x = 0;
            switch (s) {
            case 0: x = 0; nc = 1; break;
            case 1: x = sg(eW); nc = 3; break;
            case 2: x = WN; nc = 9; break;
            case 3: x = WNx; nc = 81; break;
            case 4: x = WN * 3 + tb; nc = 27; break;
            case 5: x = WNx * 3 + tb; nc = 243; break;
            case 6: x = WN * nctx + a; nc = 9 * nctx; break;
            case 7: x = WN * C + c; nc = 9 * C; break;
            case 8: x = sg(eW + eN) * 3 + tb; nc = 9; break;
            case 9: x = sg(s6) * 3 + tb; nc = 9; break;
            case 10: x = f8; nc = 8; break;
            case 11: x = f8 * 3 + tb; nc = 24; break;
            case 12: x = (f4 * 9 + WN) * 3 + tb; nc = 108; break;
            case 13: x = ppb * 3 + tb; nc = 128 * 3; break;
            case 14: {
                int xW = n > 0 ? X[j - 1] : r->pred, xN = m > 0 ? X[j - W] : r->pred;
                x = (sg(xW - r->pred) * 3 + sg(xN - r->pred)) * 3 + tb;
                nc = 27;
                break;
            }
            case 15: x = WNx * 9 + sg(eWW) * 3 + sg(eNN); nc = 729; break;
            case 16: { /* sign and size of the neighbours' sum relative to v */
                uint32_t v = (uint32_t)abs(E[j]);
                int64_t as = s6 < 0 ? -s6 : s6;
                int q = as == 0 ? 0 : as < 8 * (int64_t)v ? 1 : 2;
                x = (sg(s6) * 3 + q) * 3 + tb;
                nc = 27;
                break;
            }
            case 17: { /* fine fraction x token (tokens >= 8 pooled) */
                int f16 = (int)floor((d + 1.0) * 8.0);
                f16 = f16 < 0 ? 0 : f16 > 15 ? 15 : f16;
                x = f16 * 9 + (t < 8 ? t : 8);
                nc = 144;
                break;
            }
            case 18: x = (ppb * 4 + f4) * 3 + tb; nc = 128 * 12; break;
            case 19: x = ((WN * 4 + f4) * 3 + sg(s6)) * 3 + tb; nc = 324; break;
            case 20: { /* fine fraction x token 1,2,3,4+ x activity third */
                int f16 = (int)floor((d + 1.0) * 8.0);
                f16 = f16 < 0 ? 0 : f16 > 15 ? 15 : f16;
                int tt = t < 4 ? t - 1 : 3, a3 = a * 3 / nctx;
                x = (f16 * 4 + tt) * 3 + a3;
                nc = 192;
                break;
            }
            case 21: {
                int cnt = 0;
                for (int q = 0; q < r->np; q++) cnt += r->pp[q] > u;
                x = (cnt * 8 + f8) * 3 + tb;
                nc = 9 * 8 * 3; /* cnt <= np <= 8 (predictor set 3 of round 24: 8 members) */
                break;
            }
            case 22: case 23: {
                double dev = 0;
                if (s == 22) {
                    for (int q = 0; q < r->np; q++) dev += r->pp[q] - u;
                    if (r->np) dev /= r->np;
                } else dev = r->np ? r->pp[0] - u : 0;
                double v = abs(E[j]), ad = fabs(dev);
                int q = ad < v / 8 ? 0 : ad < v / 2 ? 1 : ad < 2 * v ? 2 : 3;
                int sq = q == 0 ? 3 : dev < 0 ? 3 - q : 3 + q;
                x = (sq * 4 + f4) * 3 + tb;
                nc = 84;
                break;
            }
            case 24: {
                int b4 = ppb & 15, tt = t < 4 ? t - 1 : 3;
                x = (b4 * 4 + f4) * 4 + tt;
                nc = 256;
                break;
            }
            case 25: {
                int tern = 0;
                for (int q = 0; q < 3; q++) {
                    double dv = q < r->np ? r->pp[q] - u : 0;
                    tern = tern * 3 + (dv < -0.25 ? 0 : dv < 0.25 ? 1 : 2);
                }
                x = (tern * 4 + f4) * 3 + tb;
                nc = 324;
                break;
            }
            case 26: x = (ppb * 8 + f8) * 3 + tb; nc = 128 * 24; break;
            case 27: x = ((ppb * 4 + f4) * 3 + tb) * 2 + (a * 2 >= nctx); nc = 128 * 24; break;
            default: break;
            }
    *ncp = nc;
    return x;
}

/* Binary, KT-like start then a fixed rate: p += (y - p) / min(n + 2, D), p in
 * 16-bit fixed point (integer division by a small reciprocal table in a
 * real coder), coded with p quantized to 15 bits, clamped to [32, 32736]. */
static double cost_var(const uint32_t *ctx, const uint8_t *sym, size_t n, uint32_t nctx, int D)
{
    int32_t *p = malloc(4 * nctx);
    uint16_t *cnt = calloc(nctx, 2);
    for (uint32_t i = 0; i < nctx; i++) p[i] = 32768;
    double bits = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = ctx[i];
        int32_t q = p[c] >> 1;
        q = q < 32 ? 32 : q > 32736 ? 32736 : q;
        bits -= log2((sym[i] ? q : 32768 - q) / 32768.0);
        int d = cnt[c] + 2 < D ? cnt[c] + 2 : D;
        if (cnt[c] + 2 < D) cnt[c]++;
        p[c] += ((sym[i] ? 65535 : 0) - p[c]) / d;
    }
    free(p);
    free(cnt);
    return bits;
}

static const char *g_frame;
static void report(const char *model, const char *what, const uint32_t *ctx, const uint8_t *sym, size_t n,
                   uint32_t nctx, int K, double uniform_bits)
{
    struct { const char *name; double bits; } r[16];
    int nr = 0;
    r[nr++] = (typeof(r[0])){"kt", cost_counts(ctx, sym, n, nctx, K, 0.5, 1e300)};
    r[nr++] = (typeof(r[0])){"kt1023", cost_counts(ctx, sym, n, nctx, K, 0.5, 1023)};
    r[nr++] = (typeof(r[0])){"kt255", cost_counts(ctx, sym, n, nctx, K, 0.5, 255)};
    r[nr++] = (typeof(r[0])){"lap", cost_counts(ctx, sym, n, nctx, K, 1.0, 1e300)};
    if (K == 2) {
        r[nr++] = (typeof(r[0])){"sh5", cost_shift(ctx, sym, n, nctx, 5, 0)};
        r[nr++] = (typeof(r[0])){"sh7", cost_shift(ctx, sym, n, nctx, 7, 0)};
        r[nr++] = (typeof(r[0])){"sh4_7", cost_shift(ctx, sym, n, nctx, 4, 7)};
        r[nr++] = (typeof(r[0])){"var128", cost_var(ctx, sym, n, nctx, 128)};
        r[nr++] = (typeof(r[0])){"var1024", cost_var(ctx, sym, n, nctx, 1024)};
    }
    for (int k = 0; k < nr; k++)
        printf("%s\t%s\t%s\t%s\t%u\t%zu\t%.1f\t%.1f\n", g_frame, what, model, r[k].name, nctx, n, uniform_bits, uniform_bits - r[k].bits);
    (void)r;
}

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    g_frame = argv[2];
    FILE *f = fopen(argv[1], "rb");
    if (!f) return 1;
    fseek(f, 0, SEEK_END);
    size_t N = (size_t)ftell(f) / sizeof(sx_rec);
    fseek(f, 0, SEEK_SET);
    sx_rec *R = malloc(N * sizeof *R);
    if (fread(R, sizeof *R, N, f) != N) return 1;
    fclose(f);
    W = 0; H = 0;
    for (size_t i = 0; i < N; i++) {
        if (R[i].n + 1 > W) W = R[i].n + 1;
        if (R[i].m + 1 > H) H = R[i].m + 1;
    }
    if ((size_t)W * H != N) { fprintf(stderr, "not a full plane\n"); return 1; }
    E = calloc(N, 4); X = calloc(N, 4); T = calloc(N, 4);
    P = malloc(N * sizeof *P);
    for (size_t i = 0; i < N; i++) {
        size_t j = (size_t)R[i].m * W + R[i].n;
        P[j] = &R[i];
        E[j] = R[i].e;
        X[j] = R[i].pred + R[i].e;
        int nr;
        T[j] = tok_of((uint32_t)abs(R[i].e), &nr);
    }
    nctx = R[0].nctx; nib = R[0].nib; C = nctx * nib;
    /* ---- stats ---- */
    size_t nnz = 0, nraw_px = 0;
    double rawbits = 0;
    for (size_t j = 0; j < N; j++) {
        int nr;
        uint32_t v = (uint32_t)abs(E[j]);
        tok_of(v, &nr);
        nnz += v > 0;
        nraw_px += nr > 0;
        rawbits += nr;
    }
    printf("%s\tSTAT\tW=%d H=%d nctx=%d nib=%d cas=%d np=%d\t%zu\t%zu\t%zu\t%.0f\n", g_frame, W, H, nctx, nib,
           R[0].cas, P[(size_t)W + 1]->np, N, nnz, nraw_px, rawbits);
    /* ---- sign ---- */
    uint32_t *ctx = malloc(N * 4);
    uint8_t *sym = malloc(N);
    size_t ns = 0;
    size_t *idx = malloc(N * sizeof *idx);
    for (size_t j = 0; j < N; j++)
        if (E[j] != 0) idx[ns++] = j;
    for (size_t k = 0; k < ns; k++) sym[k] = E[idx[k]] < 0;
    enum { NSM = 28 };
    const char *sname[NSM] = {"none", "W", "WN", "WNx", "WN_tb", "WNx_tb", "WN_a", "WN_c", "sum_tb", "sum6_tb",
                              "frac8", "frac8_tb", "frac4_WN_tb", "pp_tb", "grad_tb", "WNxx", "sum6q_tb",
                              "fracQ_tok", "pp_frac4_tb", "WN_frac4_sum6_tb", "frac16_t4_a3", "ppcnt_frac8_tb", "ppmean_f4_tb", "ls_f4_tb", "pp4_f4_t4", "tern3_f4_tb", "pp_f8_tb", "pp_f4_tb_a2"};
    for (int s = 0; s < NSM; s++) {
        uint32_t nc = 1;
        for (size_t k = 0; k < ns; k++) {
            size_t j = idx[k];
            uint32_t x = sign_ctx(s, j, &nc);
            ctx[k] = x;
        }
        report(sname[s], "sign", ctx, sym, ns, nc, 2, (double)ns);
    }
    /* ---- sign: logistic mix of several context models (an upper-ish bound) ---- */
    {
      static const int subs[3][10] = {{11, 13, 5, 16, 14, 17, 20, 22, 23, 21}, {18, 22, 23}, {18, 20}};
      static const int nsubs[3] = {10, 3, 2};
      static const char *mixname[3] = {"mix10", "mix3", "mix2"};
      for (int ms = 0; ms < 3; ms++) {
        const int *sub = subs[ms];
        const int NS = nsubs[ms];
        uint32_t *cx[10], ncs[10];
        double *c0[10], *c1[10];
        for (int i = 0; i < NS; i++) {
            cx[i] = malloc(ns * 4);
            for (size_t k = 0; k < ns; k++) cx[i][k] = sign_ctx(sub[i], idx[k], &ncs[i]);
            c0[i] = calloc(ncs[i], sizeof(double));
            c1[i] = calloc(ncs[i], sizeof(double));
        }
        for (int lri = 0; lri < 3; lri++) {
            const double lr = lri == 0 ? 0.002 : lri == 1 ? 0.006 : 0.02;
            for (int i = 0; i < NS; i++) {
                memset(c0[i], 0, ncs[i] * sizeof(double));
                memset(c1[i], 0, ncs[i] * sizeof(double));
            }
            double w[3][11];
            for (int a = 0; a < 3; a++)
                for (int i = 0; i <= NS; i++) w[a][i] = i < NS ? 0.3 : 0;
            double bits = 0;
            for (size_t k = 0; k < ns; k++) {
                double st[11], dot = 0;
                int sel = tbk(T[idx[k]]);
                for (int i = 0; i < NS; i++) {
                    uint32_t x = cx[i][k];
                    double p1 = (c1[i][x] + 0.4) / (c0[i][x] + c1[i][x] + 0.8);
                    st[i] = log(p1 / (1 - p1));
                }
                st[NS] = 0.3;
                for (int i = 0; i <= NS; i++) dot += w[sel][i] * st[i];
                double p = 1 / (1 + exp(-dot));
                if (p < 1e-4) p = 1e-4;
                if (p > 1 - 1e-4) p = 1 - 1e-4;
                int y = sym[k];
                bits -= log2(y ? p : 1 - p);
                double g = (y - p) * lr;
                for (int i = 0; i <= NS; i++) w[sel][i] += g * st[i];
                for (int i = 0; i < NS; i++) {
                    uint32_t x = cx[i][k];
                    if (y) c1[i][x] += 1; else c0[i][x] += 1;
                    if (c0[i][x] + c1[i][x] > 1023) { c0[i][x] *= 0.5; c1[i][x] *= 0.5; }
                }
            }
            printf("%s\tsign\t%s\tlr%g\t0\t%zu\t%.1f\t%.1f\n", g_frame, mixname[ms], lr, ns, (double)ns, (double)ns - bits);
        }
        for (int i = 0; i < NS; i++) { free(cx[i]); free(c0[i]); free(c1[i]); }
      }
    }
    /* ---- raw bits ---- */
    size_t nr_ev = 0;
    for (size_t j = 0; j < N; j++)
        if (T[j] >= 16) idx[nr_ev++] = j;
    /* uniform cost of the top bit: 1; of the top two: 2 */
    enum { NRM = 6 };
    const char *rname[NRM] = {"none", "tok", "tok_a", "tok_c", "tok_actq", "tok_WNmag"};
    for (int top = 1; top <= 2; top++)
        for (int s = 0; s < NRM; s++) {
            uint32_t nc = 1;
            for (size_t k = 0; k < nr_ev; k++) {
                size_t j = idx[k];
                int m = (int)(j / W), n = (int)(j % W);
                uint32_t v = (uint32_t)abs(E[j]);
                int nr, t = tok_of(v, &nr);
                sym[k] = top == 1 ? (v >> (nr - 1)) & 1 : (v >> (nr - 2)) & 3;
                int a = P[j]->c / nib, c = P[j]->c;
                uint32_t x;
                switch (s) {
                case 0: x = 0; nc = 1; break;
                case 1: x = t; nc = 64; break;
                case 2: x = t * nctx + a; nc = 64 * nctx; break;
                case 3: x = t * C + c; nc = 64 * C; break;
                case 4: { /* the neighbours' activity against v: log2 ratio, 6 classes */
                    int64_t act = 2 * (int64_t)abs(EA(m, n - 1)) + 2 * abs(EA(m - 1, n)) + abs(EA(m - 1, n - 1)) +
                                  abs(EA(m - 1, n + 1)) + abs(EA(m, n - 2)) + abs(EA(m - 2, n));
                    /* act ~ 8 |e| typical; compare with 8 v */
                    int q = act < 2 * (int64_t)v ? 0 : act < 4 * (int64_t)v ? 1 : act < 8 * (int64_t)v ? 2 : act < 16 * (int64_t)v ? 3 : act < 32 * (int64_t)v ? 4 : 5;
                    x = t * 6 + q;
                    nc = 64 * 6;
                    break;
                }
                case 5: { /* max of |eW|, |eN| against the token's range */
                    uint32_t mx = (uint32_t)abs(EA(m, n - 1)) > (uint32_t)abs(EA(m - 1, n)) ? (uint32_t)abs(EA(m, n - 1)) : (uint32_t)abs(EA(m - 1, n));
                    uint32_t lo = v & ~((1u << nr) - 1), hi = lo + (1u << nr);
                    int q = mx < lo / 2 ? 0 : mx < lo ? 1 : mx < hi ? 2 : mx < 2 * hi ? 3 : 4;
                    x = t * 5 + q;
                    nc = 64 * 5;
                    break;
                }
                }
                ctx[k] = x;
            }
            report(rname[s], top == 1 ? "raw1" : "raw2", ctx, sym, nr_ev, nc, top == 1 ? 2 : 4,
                   (double)nr_ev * top);
        }
    /* top two raw bits as a binary chain: top | token, second | token, top */
    {
        uint8_t *s1 = malloc(nr_ev), *s2 = malloc(nr_ev);
        uint32_t *x1 = malloc(nr_ev * 4), *x2 = malloc(nr_ev * 4);
        for (size_t k = 0; k < nr_ev; k++) {
            uint32_t v = (uint32_t)abs(E[idx[k]]);
            int nr, t = tok_of(v, &nr);
            s1[k] = (v >> (nr - 1)) & 1;
            s2[k] = (v >> (nr - 2)) & 1;
            x1[k] = t;
            x2[k] = t * 2 + s1[k];
        }
        for (int e = 0; e < 3; e++) {
            double b1 = e == 0 ? cost_counts(x1, s1, nr_ev, 64, 2, 1.0, 1e300) : e == 1 ? cost_counts(x1, s1, nr_ev, 64, 2, 0.5, 1e300) : cost_shift(x1, s1, nr_ev, 64, 4, 7);
            double b2 = e == 0 ? cost_counts(x2, s2, nr_ev, 128, 2, 1.0, 1e300) : e == 1 ? cost_counts(x2, s2, nr_ev, 128, 2, 0.5, 1e300) : cost_shift(x2, s2, nr_ev, 128, 4, 7);
            printf("%s\traw2\tchain_tok\t%s\t128\t%zu\t%.1f\t%.1f\n", g_frame, e == 0 ? "lap" : e == 1 ? "kt" : "sh4_7", nr_ev,
                   2.0 * nr_ev, 2.0 * nr_ev - b1 - b2);
        }
    }
    return 0;
}

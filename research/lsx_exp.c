/* Research harness for the lsmix profile: the real integer LS predictor
 * (lsx_band, cached per frame and parameter set) and variants of the blend,
 * contexts and adaptive coder, measured as exact adaptive code length.
 *   lsx_exp FRAME.fits [key=value ...]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lsmix.h"
#include "predict.h"

static uint16_t *load_fits(const char *path, uint32_t *W, uint32_t *H)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char card[81];
    card[80] = 0;
    long pos = 0;
    int w = 0, h = 0;
    for (;;) {
        if (fread(card, 1, 80, f) != 80) return NULL;
        pos += 80;
        if (!strncmp(card, "NAXIS1  =", 9)) w = atoi(card + 10);
        if (!strncmp(card, "NAXIS2  =", 9)) h = atoi(card + 10);
        if (!strncmp(card, "END     ", 8)) break;
    }
    pos = (pos + 2879) / 2880 * 2880;
    fseek(f, pos, SEEK_SET);
    size_t n = (size_t)w * h;
    uint8_t *buf = malloc(2 * n);
    if (fread(buf, 1, 2 * n, f) != 2 * n) return NULL;
    fclose(f);
    uint16_t *u = malloc(2 * n);
    for (size_t i = 0; i < n; i++) u[i] = (uint16_t)(((buf[2 * i] << 8) | buf[2 * i + 1]) ^ 0x8000);
    free(buf);
    *W = (uint32_t)w;
    *H = (uint32_t)h;
    return u;
}

/* ---- options ---- */
static int o_K = 6, o_M = 9, o_F = 4, o_R = 12;
static int o_K2 = 0, o_M2 = 9, o_F2 = 2, o_R2 = 12; /* second LS, K2=0: none */
static int o_exp = 3, o_cw = 4, o_preds = 3, o_emode = 0, o_nctx = 12, o_thr = 0, o_actw = 8;
static int o_bias = 0, o_halve = 16, o_refresh = 10, o_inc = 1, o_ctxcol = 0, o_bshift = 0;
static int o_colshift = 3, o_oracle = 0, o_nbw = 0, o_emw = 1, o_biasn = 16;
static int o_ibmode = 0;
static int o_pen = 0, o_penaff = -1;
static int o_iw = 0, o_irate = 5, o_ipct = 1, o_ibins = 0;
static int o_adec = 2, o_alam = 64, o_ashift = 0;
static const char *o_cache = "/tmp/rsf/cache";

int cmpu(const void *a, const void *b);
static double *ls_predictions(const char *name, const uint16_t *u, uint32_t W, uint32_t H, int K,
                              int M, int F, int R)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s_K%d_M%d_F%d_R%d.bin", o_cache, name, K, M, F, R);
    size_t n = (size_t)W * H;
    double *p = malloc(n * sizeof *p);
    FILE *f = fopen(path, "rb");
    if (f) {
        if (fread(p, sizeof *p, n, f) == n) {
            fclose(f);
            return p;
        }
        fclose(f);
    }
    lsx_params pp = {K, M, F, R};
    lsx_band b;
    lsx_state s;
    lsx_band_init(&b, &pp, W, 0, W);
    lsx_state_init(&s, W, 0, 0);
    for (uint32_t m = 0; m < H; m++) {
        const uint16_t *cur = u + (size_t)m * W;
        if (m > 0) {
            lsx_band_prepare(&b, u, m, s.cm_a_prev, s.cm_b_prev);
            for (uint32_t nn = 0; nn < W; nn++)
                p[(size_t)m * W + nn] = lsx_band_predict(&b, cur, cur - W, s.cm_a, s.cm_b, nn);
        } else {
            for (uint32_t nn = 0; nn < W; nn++) p[nn] = nn ? cur[nn - 1] : 0;
        }
        lsx_end_row(&s, m, cur);
    }
    lsx_state_free(&s);
    lsx_band_free(&b);
    mkdir(o_cache, 0755);
    f = fopen(path, "wb");
    if (f) {
        fwrite(p, sizeof *p, n, f);
        fclose(f);
    }
    return p;
}

/* ---- adaptive coder emulation ---- */
#define NT CTX_TOKENS
#define MAXC 64
typedef struct {
    uint32_t count[MAXC][NT];
    uint32_t freq[MAXC][NT];
} model;

static void refresh(model *cm, int nctx)
{
    const uint32_t one = 1u << CTX_PROB_BITS;
    for (int k = 0; k < nctx; k++) {
        uint64_t total = 0;
        for (int t = 0; t < NT; t++) total += cm->count[k][t];
        if (total > (1ull << o_halve)) {
            total = 0;
            for (int t = 0; t < NT; t++) total += cm->count[k][t] = (cm->count[k][t] + 1) >> 1;
        }
        if (total == 0) {
            for (int t = 0; t < NT; t++) cm->freq[k][t] = one / NT;
            continue;
        }
        uint32_t sum = 0;
        int best = 0;
        for (int t = 0; t < NT; t++) {
            cm->freq[k][t] = 1 + (uint32_t)((uint64_t)cm->count[k][t] * (one - NT) / total);
            sum += cm->freq[k][t];
            if (cm->count[k][t] > cm->count[k][best]) best = t;
        }
        cm->freq[k][best] += one - sum;
    }
}

static int refresh_due(uint64_t p)
{
    uint64_t mask = (1ull << o_refresh) - 1;
    return p != 0 && ((p & mask) == 0 || (p < 1024 && (p & 127) == 0));
}

/* bits of the residual stream: contexts ctx[i], residuals res[i] */
static double code_bits(const int32_t *res, const uint8_t *ctx, size_t n, int nctx)
{
    model *cm = calloc(1, sizeof *cm);
    refresh(cm, nctx);
    double bits = 0;
    uint64_t rawbits = 0;
    for (size_t i = 0; i < n; i++) {
        if (refresh_due(i)) refresh(cm, nctx);
        uint32_t v = (uint32_t)(res[i] < 0 ? -res[i] : res[i]);
        int nraw;
        int t = ctx_token(v, &nraw);
        bits += CTX_PROB_BITS - log2((double)cm->freq[ctx[i]][t]);
        rawbits += (uint64_t)nraw + (v != 0);
        cm->count[ctx[i]][t] += (uint32_t)o_inc;
    }
    free(cm);
    /* segments: 4 bytes of length + ~4 bytes of final state each 2^14 px */
    return bits + (double)rawbits + 64.0 * (double)((n + 16383) >> 14);
}

/* ---- the blend and contexts ---- */
#define MAXP 12
static const char *g_name;

static int32_t q16(double p)
{
    double t = p * 16.0 + 0.5;
    if (!(t > 0.0)) return 0;
    if (t >= 1048560.0) return 1048560;
    return (int32_t)t;
}

static uint32_t absv(int32_t v) { return (uint32_t)(v < 0 ? -v : v); }

int main(int argc, char **argv)
{
    double Sy = 0, Sz = 0, Szz = 0, Szy = 0, Sw = 0;
    double A[3][5] = {{0}};
    if (argc < 2) return 2;
    for (int i = 2; i < argc; i++) {
        char k[64];
        int v;
        if (sscanf(argv[i], "%63[^=]=%d", k, &v) != 2) return 2;
#define OPT(s, var) else if (!strcmp(k, s)) var = v;
        if (0) {}
        OPT("K", o_K) OPT("M", o_M) OPT("F", o_F) OPT("R", o_R) OPT("K2", o_K2) OPT("M2", o_M2)
        OPT("F2", o_F2) OPT("R2", o_R2) OPT("exp", o_exp) OPT("cw", o_cw) OPT("preds", o_preds)
        OPT("emode", o_emode) OPT("nctx", o_nctx) OPT("thr", o_thr) OPT("actw", o_actw)
        OPT("bias", o_bias) OPT("halve", o_halve) OPT("refresh", o_refresh) OPT("inc", o_inc)
        OPT("ctxcol", o_ctxcol) OPT("bshift", o_bshift) OPT("colshift", o_colshift)
        OPT("oracle", o_oracle) OPT("nbw", o_nbw) OPT("emw", o_emw) OPT("biasn", o_biasn) OPT("adec", o_adec) OPT("ibmode", o_ibmode) OPT("pen", o_pen) OPT("penaff", o_penaff) OPT("iw", o_iw) OPT("irate", o_irate) OPT("ipct", o_ipct) OPT("ibins", o_ibins) OPT("alam", o_alam) OPT("ashift", o_ashift)
        else { fprintf(stderr, "unknown %s\n", k); return 2; }
    }
    uint32_t W, H;
    uint16_t *u = load_fits(argv[1], &W, &H);
    if (!u) return 1;
    const char *base = strrchr(argv[1], '/');
    base = base ? base + 1 : argv[1];
    char name[256];
    snprintf(name, sizeof name, "%s", base);
    char *dot = strstr(name, ".fits");
    if (dot) *dot = 0;
    g_name = name;
    size_t N = (size_t)W * H;
    uint32_t ioff = 0;
    {
        uint32_t *hist = calloc(65536, 4);
        for (size_t i = 0; i < N; i++) hist[u[i]]++;
        size_t acc = 0, want = (size_t)((double)N * o_ipct / 1000.0);
        for (uint32_t v = 0; v < 65536; v++) { acc += hist[v]; if (acc > want) { ioff = v; break; } }
        free(hist);
    }
    int32_t T[64] = {0};
    uint8_t *ibin = malloc(N);
    uint32_t *texps = malloc(N * 4);
    double *pls = ls_predictions(name, u, W, H, o_K, o_M, o_F, o_R);
    double *pls2 = o_K2 ? ls_predictions(name, u, W, H, o_K2, o_M2, o_F2, o_R2) : NULL;

    /* predictors: bit 0 LS, 1 CM_A, 2 N (above), 3 CM_B, 4 grad W+N-NW, 5 LS2, 6 W, 7 med */
    int np = 0, pid[MAXP];
    for (int b = 0; b < MAXP; b++)
        if (o_preds >> b & 1) pid[np++] = b;
    if (pls2 == NULL)
        for (int i = 0; i < np; i++)
            if (pid[i] == 5) return 3;
    int32_t *err[MAXP][2], *colerr[MAXP];
    for (int k = 0; k < np + 1; k++) {
        err[k][0] = calloc(W, 4);
        err[k][1] = calloc(W, 4);
        colerr[k] = calloc(W, 4);
    }
    int32_t *cma = calloc(W, 4), *cmb = calloc(W, 4);
    int32_t *res = malloc(N * 4);
    uint8_t *ctx = malloc(N);
    uint32_t *act = malloc(N * 4);
    /* bias correction state per bias context */
    int64_t bsum[256] = {0};
    int32_t bcnt[256] = {0};
    uint32_t thr[MAXC];
    int nctx = o_nctx;
    for (int q = 1; q < nctx; q++) thr[q - 1] = (uint32_t)ceil(128.0 * (exp2(q * 0.5) - 1.0));
    double wsum_stat[MAXP] = {0};

    for (uint32_t m = 0; m < H; m++) {
        const uint16_t *cur = u + (size_t)m * W, *up = m ? cur - W : NULL;
        int32_t *r0 = res + (size_t)m * W;
        const int32_t *r1 = m > 0 ? r0 - W : NULL, *r2 = m > 1 ? r0 - 2 * (size_t)W : NULL;
        Sy = Sz = Szz = Szy = Sw = 0;
        memset(A, 0, sizeof A);
        for (uint32_t n = 0; n < W; n++) {
            double pv[MAXP];
            int32_t emin = 0, eb = 0;
            int32_t pred;
            int bctx = 0;
            double praw = 0;
            if (m == 0) {
                pred = n ? cur[n - 1] : 0;
                for (int k = 0; k < np; k++) pv[k] = pred;
            } else {
                for (int k = 0; k < np; k++) {
                    double W_ = n ? cur[n - 1] : up[n], N_ = up[n], NW = n ? up[n - 1] : up[n];
                    switch (pid[k]) {
                    case 0: pv[k] = pls[(size_t)m * W + n]; break;
                    case 1: pv[k] = cma[n] * 0.0625; break;
                    case 2: pv[k] = N_; break;
                    case 3: pv[k] = cmb[n] * 0.0625; break;
                    case 4: pv[k] = W_ + N_ - NW; break;
                    case 5: pv[k] = pls2[(size_t)m * W + n]; break;
                    case 6: pv[k] = W_; break;
                    case 8: {
                        double zc = up[n];
                        if (Sw <= 0) { pv[k] = W_; break; }
                        double mz = Sz / Sw, my = Sy / Sw;
                        double vzz = Szz / Sw - mz * mz, vzy = Szy / Sw - mz * my;
                        double lam = o_alam;
                        double a = (vzy + lam) / (vzz + lam);
                        pv[k] = my + a * (zc - mz);
                    } break;
                    case 9: case 10: case 11: {
                        int a_ = pid[k] - 9;
                        double zc = a_ == 0 ? pls[(size_t)m * W + n] : a_ == 1 ? cmb[n] * 0.0625 : N_;
                        double *S = A[a_];
                        if (S[4] <= 0) { pv[k] = zc; break; }
                        double mz = S[1] / S[4], my = S[0] / S[4];
                        double vzz = S[2] / S[4] - mz * mz, vzy = S[3] / S[4] - mz * my;
                        double lam = o_alam;
                        double a = (vzy + lam) / (vzz + lam);
                        pv[k] = my + a * (zc - mz);
                    } break;
                    case 7: {
                        double mx = W_ > N_ ? W_ : N_, mn = W_ > N_ ? N_ : W_;
                        pv[k] = NW >= mx ? mn : NW <= mn ? mx : W_ + N_ - NW;
                    } break;
                    }
                }
                double num = 0, den = 0;
                int32_t el[MAXP + 1];
                for (int k = 0; k < np + 1; k++) {
                    const int32_t *ec = err[k][m & 1], *eu = err[k][(m + 1) & 1];
                    int32_t e = o_cw * colerr[k][n];
                    if (n > 0) e += o_emw * ec[n - 1];
                    e += eu[n];
                    if (n > 0) e += eu[n - 1];
                    if (n + 1 < W) e += eu[n + 1];
                    if (o_nbw == 0 && n > 0) {} /* default weights */
                    if (k < np && pid[k] != 0) e = (int32_t)((int64_t)e * (8 + (pid[k] == 8 && o_penaff >= 0 ? o_penaff : o_pen)) / 8);
                    el[k] = e;
                }
                emin = el[0];
                for (int k = 1; k < np; k++)
                    if (el[k] < emin) emin = el[k];
                eb = el[np];
                int best = 0;
                for (int k = 0; k < np; k++) {
                    double t = el[k] * 0.0625 + 1.0, w = 1.0;
                    for (int e = 0; e < o_exp; e++) w *= t;
                    w = 1.0 / w;
                    num += w * pv[k];
                    den += w;
                    if (el[k] < el[best]) best = k;
                }
                double pb = o_oracle == 1 ? pv[best] : num / den;
                praw = pb;
                if (o_bias) {
                    /* bias context: the activity context so far (below) is not known yet:
                       use the quantized error level of the blend */
                    uint32_t a = (uint32_t)(o_emode ? eb : emin);
                    int c = 0;
                    while (c < 15 && a >= (32u << c)) c++;
                    bctx = c;
                    if (o_bias == 2) {
                        /* add sign of W and N residual */
                        int sw = n ? (r0[n - 1] > 0) - (r0[n - 1] < 0) : 0;
                        int sn = (r1[n] > 0) - (r1[n] < 0);
                        bctx = bctx * 9 + (sw + 1) * 3 + (sn + 1);
                    }
                    if (bcnt[bctx] > 0) pb += (double)bsum[bctx] / (double)bcnt[bctx] / 16.0;
                }
                pred = aurp_round_clamp(pb);
                (void)wsum_stat;
            }
            r0[n] = (int32_t)cur[n] - pred;
            int nr_;
            int ib = ctx_token(pred > (int32_t)ioff ? (uint32_t)(pred - (int32_t)ioff) : 0, &nr_);
            ibin[(size_t)m * W + n] = (uint8_t)ib;
            int32_t texp = T[ib];
            texps[(size_t)m * W + n] = (uint32_t)texp;
            T[ib] += lsx_floor_shr(16 * (int32_t)absv(r0[n]) - T[ib], o_irate);
            if (m > 0) {
                double d = 1.0 - ldexp(1.0, -o_adec), y = cur[n], z = up[(int64_t)n + o_ashift < 0 ? 0 : n + o_ashift < W ? n + o_ashift : W - 1];
                for (int a_ = 0; a_ < 3; a_++) {
                    double zz = a_ == 0 ? pls[(size_t)m * W + n] : a_ == 1 ? cmb[n] * 0.0625 : (n + 1 < W ? up[n + 1] : up[n]);
                    double *S = A[a_];
                    S[0] = d * S[0] + y; S[1] = d * S[1] + zz; S[2] = d * S[2] + zz * zz; S[3] = d * S[3] + zz * y; S[4] = d * S[4] + 1;
                }
                Sy = d * Sy + y; Sz = d * Sz + z; Szz = d * Szz + z * z; Szy = d * Szy + z * y; Sw = d * Sw + 1;
            }
            /* context */
            uint32_t a = 0;
            if (n > 0) a += 2 * absv(r0[n - 1]);
            if (n > 1) a += absv(r0[n - 2]);
            if (r1) {
                a += 2 * absv(r1[n]);
                if (n > 0) a += absv(r1[n - 1]);
                if (n + 1 < W) a += absv(r1[n + 1]);
            }
            if (r2) a += absv(r2[n]);
            uint64_t a16 = (uint64_t)o_actw * a + (uint64_t)(o_emode ? eb : emin) + (uint64_t)o_iw * (uint64_t)texp;
            act[(size_t)m * W + n] = a16 > UINT32_MAX ? UINT32_MAX : (uint32_t)a16;
            /* record errors */
            int32_t x16 = (int32_t)cur[n] * 16;
            for (int k = 0; k < np; k++) err[k][m & 1][n] = absv(x16 - q16(pv[k]));
            err[np][m & 1][n] = absv(16 * r0[n]);
            if (o_bias && m > 0) {
                bsum[bctx] += x16 - q16(praw);
                bcnt[bctx]++;
                if (bcnt[bctx] >= o_biasn) {
                    bsum[bctx] /= 2;
                    bcnt[bctx] /= 2;
                }
            }
        }
        for (int k = 0; k < np + 1; k++) {
            const int32_t *e = err[k][m & 1];
            int32_t *c = colerr[k];
            int s = o_colshift;
            for (uint32_t n = 0; n < W; n++)
                c[n] = m == 0 ? e[n] : c[n] + lsx_floor_shr(e[n] - c[n] + (1 << (s - 1)), s);
        }
        for (uint32_t n = 0; n < W; n++) {
            int32_t x16 = (int32_t)cur[n] * 16, a = cma[n], b = cmb[n];
            cma[n] = m == 0 ? x16 : a + lsx_floor_shr(x16 - a + 8, 4);
            cmb[n] = m == 0 ? x16 : b + lsx_floor_shr(x16 - b + 2, 2);
        }
    }
    /* thresholds */
    if (o_thr == 1) {
        /* quantiles of the activity, equal population */
        uint32_t *s = malloc(N * 4);
        memcpy(s, act, N * 4);
        int cmpu(const void *a, const void *b);
        qsort(s, N, 4, cmpu);
        int k = 0;
        for (int q = 1; q < nctx; q++) {
            uint32_t t = s[(size_t)((double)N * q / nctx)];
            if (k > 0 && t <= thr[k - 1]) t = thr[k - 1] + 1;
            thr[k++] = t;
        }
        free(s);
    }
    for (size_t i = 0; i < N; i++) {
        int c = 0;
        while (c < nctx - 1 && act[i] >= thr[c]) c++;
        ctx[i] = (uint8_t)c;
    }
    if (o_ibins > 1 && o_ibmode == 1) {
        uint32_t *s2 = malloc(N * 4), tb[16];
        memcpy(s2, texps, N * 4);
        qsort(s2, N, 4, cmpu);
        for (int q = 1; q < o_ibins; q++) tb[q - 1] = s2[(size_t)((double)N * q / o_ibins)];
        free(s2);
        for (size_t i = 0; i < N; i++) {
            int b = 0;
            while (b < o_ibins - 1 && texps[i] >= tb[b]) b++;
            ctx[i] = (uint8_t)(ctx[i] * o_ibins + b);
        }
        nctx *= o_ibins;
    } else if (o_ibins > 1) {
        /* 2-D: activity context x intensity bin (quantiles of ibin) */
        uint32_t h[64] = {0};
        for (size_t i = 0; i < N; i++) h[ibin[i]]++;
        int map[64], b = 0;
        size_t acc = 0;
        for (int t = 0; t < 64; t++) { map[t] = b; acc += h[t]; if (acc * o_ibins >= (size_t)(b + 1) * N && b < o_ibins - 1) b++; }
        for (size_t i = 0; i < N; i++) ctx[i] = (uint8_t)(ctx[i] * o_ibins + map[ibin[i]]);
        nctx *= o_ibins;
    }
    double bits = code_bits(res, ctx, N, nctx);
    printf("%s %.0f\n", name, bits / 8.0 + 4.0 * (nctx - 1) + 16);
    return 0;
}

int cmpu(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

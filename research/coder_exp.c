/* Round 4 harness: residual modelling, coding and blend of the lsmix
 * profile, measured as exact adaptive code length on the real predictors.
 *
 *   coder_exp pack FRAME.fits          the real encoder: size, set, f, C, I
 *   coder_exp LIST [key=value ...]     LIST: lines "FRAME.fits set f"
 *
 * The LS predictions come from core/lsmix_predict.c (cached per frame and
 * forgetting shift), CM/AF/RV/AL from lsx_sources/lsx_row_predict/lsx_record;
 * the blend is re-implemented here (identical to lsx_blend with the default
 * options) so that its options can vary.  The coder stage runs pixel by
 * pixel: contexts, optional SSE correction, token/raw/sign code length.
 * Build: cc -O2 -ffp-contract=off -Icore -o coder_exp research/coder_exp.c core/(*).c -lm -lpthread
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "aurp.h"
#include "lsmix.h"
#include "predict.h"
#define MAXC_ 256

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
static int o_exp = 3, o_expq = 0;      /* blend weight (1+E/16)^-exp; expq: exp in quarters (overrides) */
static int o_cw = -1, o_blww = -1;     /* column error weight, WW in the error level (-1: the set's) */
static int o_nact = 12, o_nact2 = 16, o_aq = 2, o_nib = 4, o_cands = 7;
static int o_wW = 2, o_wN = 2, o_wNW = 1, o_wNE = 1, o_wWW = 1, o_wNN = 1, o_wNWW = 0, o_wNNE = 0, o_wNNW = 0;
static int o_actw = 8, o_emw = 4, o_colw = 0; /* a16 = actw*act + emw*emin/4 + colw*colres/4 */
static int o_inc = 1, o_halve = 16, o_refresh = 10;
static int o_two = 0, o_fhalve = 12;   /* two count sets, the fast one halves at 2^fhalve */
static int o_prior = 0;                /* counts start from a geometric prior of this weight */
static int o_sign = 0;                 /* 1: adaptive sign, ctx signs of eW,eN; 2: + activity ctx */
static int o_sse = 0, o_ssesh = 5, o_sseflip = 0, o_ssectx = 0;
static int o_ib2 = 0;                  /* intensity from the half-token (finer) */
static int o_pctx = 0, o_pshift = 0;   /* parametric: 1 = shift tokens */
static int o_iw = 0, o_irate = 5;
static int o_verbose = 0, o_fbins = 8, o_static = 0;
static uint32_t g_scount[MAXC_][CTX_TOKENS]; static int g_pass;
static const char *o_cache = "/tmp/c4/cache";

static uint32_t absv(int32_t v) { return (uint32_t)(v < 0 ? -v : v); }

static int32_t q16(double p)
{
    double t = p * 16.0 + 0.5;
    if (!(t > 0.0)) return 0;
    if (t >= 1048560.0) return 1048560;
    return (int32_t)t;
}

static double *ls_predictions(const char *name, const uint16_t *u, uint32_t W, uint32_t H, int F)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s_F%d.bin", o_cache, name, F);
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
    lsx_params pp = {6, 9, F, 12};
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
            for (uint32_t nn = 0; nn < W; nn++) p[nn] = 0;
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

/* ---- predictor pass: pred, emin (and the unrounded blend) ---- */
static double blend_w(int32_t e)
{
    double t = (double)e * 0.0625 + 1.0;
    if (o_expq) return pow(t, -o_expq / 4.0);
    double w = t;
    for (int k = 1; k < o_exp; k++) w *= t;
    return 1.0 / w;
}

static void predict_pass(const uint16_t *u, uint32_t W, uint32_t H, int set, const double *pls,
                         uint16_t *pred, int32_t *emin_out, float *frac)
{
    lsx_state s;
    lsx_state_init(&s, W, set, 0);
    int cw = o_cw >= 0 ? o_cw : s.colerr_w;
    int ww = o_blww >= 0 ? o_blww : set;
    s.colerr_w = cw; /* lsx_end_row keeps the column levels only when nonzero */
    for (uint32_t m = 0; m < H; m++) {
        const uint16_t *cur = u + (size_t)m * W;
        for (uint32_t n = 0; n < W; n++) {
            int32_t emin = 0, z[4] = {0};
            uint16_t pr;
            double pp[LSX_NPRED], pb = 0;
            if (m == 0) {
                pr = n ? cur[n - 1] : 0;
                pb = pr;
                for (int k = 0; k < LSX_NPRED; k++) pp[k] = pr;
            } else {
                pp[0] = pls[(size_t)m * W + n];
                pp[1] = lsx_cm_predict(&s, n);
                lsx_sources(&s, cur, m, n, pp[0], z);
                lsx_row_predict(&s, n, z, pp);
                double num = 0, den = 0;
                for (int k = 0; k < s.np; k++) {
                    const int32_t *ec = s.err[k][m & 1], *eu = s.err[k][(m + 1) & 1];
                    int32_t e = cw * s.colerr[k][n];
                    if (n > 0) e += ec[n - 1];
                    if (ww && n > 1) e += ec[n - 2];
                    e += eu[n];
                    if (n > 0) e += eu[n - 1];
                    if (n + 1 < W) e += eu[n + 1];
                    if (k == 0 || e < emin) emin = e;
                    double w = blend_w(e);
                    num = num + w * pp[k];
                    den = den + w;
                }
                pb = num / den;
                pr = aurp_round_clamp(pb);
            }
            pred[(size_t)m * W + n] = pr;
            emin_out[(size_t)m * W + n] = emin;
            frac[(size_t)m * W + n] = (float)(pb - pr);
            lsx_record(&s, m, n, cur[n], pp, z);
        }
        lsx_end_row(&s, m, cur);
    }
    lsx_state_free(&s);
}

/* ---- adaptive coder emulation ---- */
#define NT CTX_TOKENS
#define MAXC 256
typedef struct {
    uint32_t count[MAXC][NT], fast[MAXC][NT];
    uint32_t freq[MAXC][NT];
} model;

static void refresh(model *cm, int nctx)
{
    const uint32_t one = 1u << CTX_PROB_BITS;
    for (int k = 0; k < nctx; k++) {
        uint64_t total = 0, ft = 0;
        for (int t = 0; t < NT; t++) total += cm->count[k][t];
        if (total > (1ull << o_halve)) {
            total = 0;
            for (int t = 0; t < NT; t++) total += cm->count[k][t] = (cm->count[k][t] + 1) >> 1;
        }
        if (o_two) {
            for (int t = 0; t < NT; t++) ft += cm->fast[k][t];
            if (ft > (1ull << o_fhalve)) {
                ft = 0;
                for (int t = 0; t < NT; t++) ft += cm->fast[k][t] = (cm->fast[k][t] + 1) >> 1;
            }
        }
        if (total == 0) {
            for (int t = 0; t < NT; t++) cm->freq[k][t] = one / NT;
            continue;
        }
        uint32_t sum = 0;
        int best = 0;
        for (int t = 0; t < NT; t++) {
            uint64_t c = (uint64_t)cm->count[k][t] * (one - NT) / total;
            if (o_two && ft) c = (c + (uint64_t)cm->fast[k][t] * (one - NT) / ft) / 2;
            cm->freq[k][t] = 1 + (uint32_t)c;
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

/* binary adaptive probability (12 bits), shift 5 */
static double bin_bits(uint16_t *p, int bit)
{
    double pr = *p / 4096.0;
    double b = -log2(bit ? pr : 1.0 - pr);
    if (bit) *p += (4096 - *p) >> 5;
    else *p -= *p >> 5;
    if (*p < 32) *p = 32;
    if (*p > 4064) *p = 4064;
    return b;
}

typedef struct {
    const char *name;
    uint32_t W, H;
    const uint16_t *u, *pred;
    const int32_t *emin;
    const float *frac;
    uint16_t ioff;
    uint8_t *itok;
} frame_t;

/* Codes the frame with nact activity classes x nib intensity classes. */
static double code_frame(const frame_t *fr, int nact, int nib)
{
    const uint32_t W = fr->W, H = fr->H;
    const size_t N = (size_t)W * H;
    uint32_t thr[MAXC];
    for (int q = 1; q < nact; q++) thr[q - 1] = (uint32_t)ceil(128.0 * (exp2((double)q / o_aq) - 1.0));
    /* intensity bounds of equal population */
    uint8_t ibnd[16];
    int nb = 0;
    {
        uint64_t h[256] = {0}, acc = 0;
        for (size_t i = 0; i < N; i++) h[fr->itok[i]]++;
        for (int t = 0; t < 255 && nb < nib - 1; t++) {
            acc += h[t];
            if (acc * nib >= (uint64_t)(nb + 1) * N) ibnd[nb++] = (uint8_t)(t + 1);
        }
    }
    nib = nb + 1;
    int nctx = nact * nib;
    if (nctx > MAXC) return 1e30;
    model *cm = calloc(1, sizeof *cm);
    if (o_prior) {
        /* a geometric prior per activity class: mean |e| ~ (thr/8)/8 */
        for (int a = 0; a < nact; a++) {
            double mean = a == 0 ? 1.0 : (thr[a - 1] / 8.0 / 8.0) * 1.2 + 0.5;
            double th = mean / (1.0 + mean);
            double pr[NT] = {0}, tot = 0;
            for (uint32_t v = 0; v < 65536; v++) {
                int nr;
                double pv = pow(th, v) * (v ? 2 : 1);
                if (pv < 1e-12 && v > 16) break;
                pr[ctx_token(v, &nr)] += pv;
            }
            for (int t = 0; t < NT; t++) tot += pr[t];
            for (int b = 0; b < nib; b++)
                for (int t = 0; t < NT; t++)
                    cm->count[a * nib + b][t] = (uint32_t)(o_prior * pr[t] / tot + 0.5);
        }
    }
    if (o_static && g_pass == 1) {
        memcpy(cm->count, g_scount, sizeof g_scount);
        int h = o_halve;
        o_halve = 40;
        refresh(cm, nctx);
        o_halve = h;
    } else
        refresh(cm, nctx);
    int32_t *rr = calloc(3 * (size_t)W, 4); /* coded residuals of rows m, m-1, m-2 */
    int32_t *colres = calloc(W, 4);
    /* SSE tables */
    static int32_t sse_sum[4096];
    static int32_t sse_cnt[4096];
    memset(sse_sum, 0, sizeof sse_sum);
    memset(sse_cnt, 0, sizeof sse_cnt);
    static uint16_t sgn[65536];
    for (int i = 0; i < 65536; i++) sgn[i] = 2048;
    double bits = 0;
    uint64_t rawbits = 0;
    int32_t Tq[256] = {0};
    for (uint32_t m = 0; m < H; m++) {
        int32_t *r0 = rr + (size_t)(m % 3) * W;
        const int32_t *r1 = m > 0 ? rr + (size_t)((m + 2) % 3) * W : NULL;
        const int32_t *r2 = m > 1 ? rr + (size_t)((m + 1) % 3) * W : NULL;
        for (uint32_t n = 0; n < W; n++) {
            size_t i = (size_t)m * W + n;
            if (!o_static && refresh_due(i)) refresh(cm, nctx);
            uint32_t a = 0;
            if (n > 0) a += o_wW * absv(r0[n - 1]);
            if (n > 1) a += o_wWW * absv(r0[n - 2]);
            if (r1) {
                a += o_wN * absv(r1[n]);
                if (n > 0) a += o_wNW * absv(r1[n - 1]);
                if (n + 1 < W) a += o_wNE * absv(r1[n + 1]);
                if (n > 1) a += o_wNWW * absv(r1[n - 2]);
            }
            if (r2) {
                a += o_wNN * absv(r2[n]);
                if (n + 1 < W) a += o_wNNE * absv(r2[n + 1]);
                if (n > 0) a += o_wNNW * absv(r2[n - 1]);
            }
            uint64_t a16 = (uint64_t)o_actw * a + (uint64_t)o_emw * (uint64_t)fr->emin[i] / 4 +
                           (uint64_t)o_colw * colres[n] / 4 + (uint64_t)o_iw * (uint64_t)Tq[fr->itok[i]] / 4;
            if (a16 > UINT32_MAX) a16 = UINT32_MAX;
            int ac = 0;
            while (ac < nact - 1 && a16 >= thr[ac]) ac++;
            int it = fr->itok[i], ib = 0;
            while (ib < nib - 1 && it >= ibnd[ib]) ib++;
            int ctx = ac * nib + ib;
            int32_t pred = fr->pred[i];
            int sctx = 0, flip = 0;
            if (o_sse && m > 0) {
                int sw = n ? (r0[n - 1] > 0) - (r0[n - 1] < 0) : 0;
                int sn = (r1[n] > 0) - (r1[n] < 0);
                sctx = o_ssectx == 0 ? ctx : o_ssectx == 1 ? ctx * 9 + (sw + 1) * 3 + sn + 1
                                                           : ac * 9 + (sw + 1) * 3 + sn + 1;
                int32_t c = sse_cnt[sctx] ? (int32_t)lrint((double)sse_sum[sctx] / sse_cnt[sctx] / 16.0) : 0;
                if (o_sse == 1) {
                    pred += c;
                    if (pred < 0) pred = 0;
                    if (pred > 65535) pred = 65535;
                }
                flip = sse_sum[sctx] < 0;
            }
            int32_t e = (int32_t)fr->u[i] - pred;
            uint32_t v = absv(e);
            int nraw;
            int t = ctx_token(v, &nraw);
            bits += CTX_PROB_BITS - log2((double)cm->freq[ctx][t]);
            rawbits += (uint64_t)nraw;
            if (v) {
                int neg = e < 0;
                if (o_sse && o_sseflip) neg ^= flip;
                if (o_sign) {
                    int sw = n ? (r0[n - 1] > 0) - (r0[n - 1] < 0) : 0;
                    int sn = r1 ? (r1[n] > 0) - (r1[n] < 0) : 0;
                    int sc = (sw + 1) * 3 + sn + 1;
                    if (o_sign == 2) sc = sc * 16 + (t < 15 ? t : 15);
                    if (o_sign == 3) sc = sc * 64 + ctx;
                    if (o_sign == 4) sc = (o_sse ? sctx : ctx) * 2 + flip;
                    if (o_sign >= 5) {
                        /* the blend's rounding: frac = P - pred in [-0.5, 0.5] */
                        int fb = (int)floor((fr->frac[i] + 0.5) * o_fbins);
                        if (fb < 0) fb = 0;
                        if (fb >= o_fbins) fb = o_fbins - 1;
                        int tt = t < 15 ? t : 15;
                        if (o_sign == 5) sc = fb;
                        if (o_sign == 6) sc = fb * 16 + tt;
                        if (o_sign == 7) sc = fb * 64 + ac;
                        if (o_sign == 8) sc = (fb * 16 + tt) * 16 + (ac < 15 ? ac : 15);
                        if (o_sign == 9) sc = (fb * 16 + tt) * 9 + ((n ? (r0[n - 1] > 0) - (r0[n - 1] < 0) : 0) + 1) * 3 + (r1 ? (r1[n] > 0) - (r1[n] < 0) : 0) + 1;
                    }
                    bits += bin_bits(&sgn[sc & 65535], neg);
                } else
                    rawbits++;
            }
            if (o_static) g_scount[ctx][t] += g_pass == 0;
            else cm->count[ctx][t] += (uint32_t)o_inc;
            if (o_two) cm->fast[ctx][t] += (uint32_t)o_inc;
            if (o_sse && m > 0) {
                sse_sum[sctx] += 16 * ((int32_t)fr->u[i] - fr->pred[i]);
                if (++sse_cnt[sctx] >= (1 << o_ssesh)) {
                    sse_sum[sctx] /= 2;
                    sse_cnt[sctx] /= 2;
                }
            }
            r0[n] = e;
            Tq[fr->itok[i]] += lsx_floor_shr(16 * (int32_t)v - Tq[fr->itok[i]], o_irate);
        }
        for (uint32_t n = 0; n < W; n++) {
            int32_t x = 16 * (int32_t)absv(r0[n]);
            colres[n] = m == 0 ? x : colres[n] + lsx_floor_shr(x - colres[n] + 4, 3);
        }
    }
    free(rr);
    free(colres);
    free(cm);
    size_t nseg = (N + 16383) >> 14;
    return (bits + (double)rawbits) / 8.0 + 4.0 * nseg + 4.0 * nseg + 24 + 4.0 * (nact - 1);
}

static int pack_mode(const char *path)
{
    uint32_t W, H;
    uint16_t *u = load_fits(path, &W, &H);
    if (!u) return 1;
    aurp_params p;
    aurp_params_for_profile(&p, AURP_PROFILE_LSMIX);
    size_t cap = (size_t)W * H * 3 + 65536, len = 0;
    uint8_t *out = malloc(cap);
    aurp_error err;
    if (lsx_image_encode(u, W, H, &p, 1, out, cap, &len, &err) != AURP_OK) return 1;
    printf("%s %zu set %d f %d C %d I %d\n", path, len, out[22], out[12], out[3], out[18]);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "pack")) return pack_mode(argv[2]);
    if (argc < 2) return 2;
    for (int i = 2; i < argc; i++) {
        char k[64];
        int v;
        if (sscanf(argv[i], "%63[^=]=%d", k, &v) != 2) return 2;
#define OPT(s, var) else if (!strcmp(k, s)) var = v;
        if (0) {}
        OPT("exp", o_exp) OPT("expq", o_expq) OPT("cw", o_cw) OPT("blww", o_blww) OPT("nact", o_nact)
        OPT("nact2", o_nact2) OPT("aq", o_aq) OPT("nib", o_nib) OPT("cands", o_cands) OPT("wW", o_wW)
        OPT("wN", o_wN) OPT("wNW", o_wNW) OPT("wNE", o_wNE) OPT("wWW", o_wWW) OPT("wNN", o_wNN)
        OPT("wNWW", o_wNWW) OPT("wNNE", o_wNNE) OPT("wNNW", o_wNNW) OPT("actw", o_actw) OPT("emw", o_emw)
        OPT("colw", o_colw) OPT("inc", o_inc) OPT("halve", o_halve) OPT("refresh", o_refresh)
        OPT("two", o_two) OPT("fhalve", o_fhalve) OPT("prior", o_prior) OPT("sign", o_sign)
        OPT("sse", o_sse) OPT("ssesh", o_ssesh) OPT("sseflip", o_sseflip) OPT("ssectx", o_ssectx)
        OPT("ib2", o_ib2) OPT("pctx", o_pctx) OPT("pshift", o_pshift) OPT("v", o_verbose) OPT("fbins", o_fbins) OPT("static", o_static) OPT("iw", o_iw) OPT("irate", o_irate)
        else { fprintf(stderr, "unknown %s\n", k); return 2; }
    }
    FILE *lf = fopen(argv[1], "r");
    if (!lf) return 1;
    char path[512];
    int set, F;
    double total = 0;
    while (fscanf(lf, "%511s %d %d", path, &set, &F) == 3) {
        uint32_t W, H;
        uint16_t *u = load_fits(path, &W, &H);
        if (!u) return 1;
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        char name[256];
        snprintf(name, sizeof name, "%s", base);
        char *dot = strstr(name, ".fits");
        if (dot) *dot = 0;
        size_t N = (size_t)W * H;
        double *pls = ls_predictions(name, u, W, H, F);
        uint16_t *pred = malloc(N * 2);
        int32_t *emin = malloc(N * 4);
        float *frac = malloc(N * 4);
        predict_pass(u, W, H, set, pls, pred, emin, frac);
        frame_t fr = {name, W, H, u, pred, emin, frac, 0, malloc(N)};
        {
            uint32_t *hist = calloc(65536, 4);
            for (size_t i = 0; i < N; i++) hist[u[i]]++;
            uint64_t want = N / 1000, acc = 0;
            uint32_t v = 0;
            for (; v < 65535; v++) {
                acc += hist[v];
                if (acc > want) break;
            }
            fr.ioff = (uint16_t)v;
            free(hist);
        }
        for (size_t i = 0; i < N; i++) {
            int nr;
            uint32_t d = pred[i] > fr.ioff ? pred[i] - fr.ioff : 0;
            int t = ctx_token(d, &nr);
            if (o_ib2) {
                /* half-steps: 8 per octave above 16 */
                if (d >= 16) {
                    int nb = 31 - __builtin_clz(d);
                    t = 16 + (nb - 4) * 8 + (int)((d >> (nb - 3)) & 7);
                }
            }
            fr.itok[i] = (uint8_t)t;
        }
        double best = 1e30;
        int bc = -1;
        int cand[3][2] = {{o_nact, o_nib}, {o_nact2, o_nib}, {o_nact, 1}};
        for (int c = 0; c < 3; c++) {
            if (!(o_cands >> c & 1)) continue;
            double b;
            if (o_static) {
                memset(g_scount, 0, sizeof g_scount);
                g_pass = 0;
                code_frame(&fr, cand[c][0], cand[c][1]);
                g_pass = 1;
            }
            b = code_frame(&fr, cand[c][0], cand[c][1]);
            if (o_verbose) fprintf(stderr, "  %s cand %d %.0f\n", name, c, b);
            if (b < best) best = b, bc = c;
        }
        printf("%s %.0f %d\n", name, best, bc);
        fflush(stdout);
        total += best;
        free(pls);
        free(pred);
        free(emin);
        free(frac);
        free(fr.itok);
        free(u);
    }
    printf("TOTAL %.0f\n", total);
    return 0;
}

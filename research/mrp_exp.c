/* Round 5 harness: MRP-style encoder-designed class predictors against the
 * online LS of lsmix, measured as exact adaptive code length with the real
 * context coder model (ctx_model, prior counts, refresh schedule, the
 * encoder's three context candidates), side information included.
 *
 *   mrp_exp FRAME.fits SET F [key=value ...]
 *
 * SET, F: the predictor set and LS forgetting the real encoder chose.
 * Prints one line per variant: name, coded bytes (residual stream + side
 * information), side bytes, and the change against the lsmix baseline that
 * this harness recomputes with the real predictors (core/lsmix_predict.c).
 * Variants:
 *   base     lsmix (LS, CM, AF; set 1 + RV, AL), error-weighted blend
 *   blkB_C   C classes, one per BxB block (class map sent), fitted by
 *            iterated least squares on the blocks' Gram matrices
 *   cau_C    the same C classes, class chosen per pixel from causal
 *            neighbours: the class with the smallest sum of |errors| on
 *            W, WW, N, NW, NE (refitted on that assignment)
 *   feat_Q   classes of a causal feature (quantised local gradient activity
 *            x 4 brightness levels), one LS fit per class, no map
 *   +bl      the class predictor as a further member of the lsmix blend
 *   lsextE   (c) the online LS recomputed in double precision with a wider
 *            support (E = 0 today's support .. 3), in LS's place in the blend
 *   +noLS    the class predictor in LS's place in the blend (no solve)
 * Options: C classes, B block size, sup 1/2/3 (11/21/30 pixels + column
 * means A, B + constant), cm=0 drops the column means, it SSE rounds,
 * irls=k rounds of L1-IRLS refits (irw=1: L1.5 weights), l1a=1 reassign
 * blocks by sum |e| in those rounds, mapl=1 add the map's rate to that
 * choice, feat/cau/blk=0 skip a family, Q feature quantiles, ext=bitmask of
 * lsext variants.  MRP_CACHE=dir: LS cache (default /tmp/mrp/cache); the
 * LS and dot-product times go to stderr.  Round 5 (research/round5-mrp.md).
 * Coefficients: 12 fractional bits, 16 bits each in the side information;
 * the class map is coded adaptively with the class of the block above as
 * its context (KT estimator).
 * Build: cc -O2 -ffp-contract=off -Icore -o /tmp/mrp/mx research/mrp_exp.c core/(*).c -lm -lpthread
 *        (add -Ithird_party/xxhash)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "aurp.h"
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

static int o_K = 6, o_M = 9, o_R = 12;
static const char *o_cache = "/tmp/mrp/cache";
static uint32_t W, H;
static size_t N;
static const uint16_t *U;
static int SET, NP;

static double *ls_predictions(const char *name, int F)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s_K%d_M%d_F%d_R%d.bin", o_cache, name, o_K, o_M, F, o_R);
    double *p = malloc(N * sizeof *p);
    FILE *f = fopen(path, "rb");
    if (f) {
        if (fread(p, sizeof *p, N, f) == N) {
            fclose(f);
            return p;
        }
        fclose(f);
    }
    lsx_params pp = {o_K, o_M, F, o_R};
    lsx_band b;
    lsx_state s;
    lsx_band_init(&b, &pp, W, 0, W);
    lsx_state_init(&s, W, 0, 0);
    for (uint32_t m = 0; m < H; m++) {
        const uint16_t *cur = U + (size_t)m * W;
        if (m > 0) {
            lsx_band_prepare(&b, U, m, s.cm_a_prev, s.cm_b_prev);
            for (uint32_t nn = 0; nn < W; nn++)
                p[(size_t)m * W + nn] = lsx_band_predict(&b, cur, cur - W, s.cm_a, s.cm_b, nn);
        } else {
            for (uint32_t nn = 0; nn < W; nn++) p[nn] = nn ? cur[nn - 1] : 0;
        }
        lsx_end_row(&s, m, cur);
    }
    lsx_state_free(&s);
    lsx_band_free(&b);
    mkdir("/tmp/mrp", 0755);
    mkdir(o_cache, 0755);
    f = fopen(path, "wb");
    if (f) {
        fwrite(p, sizeof *p, N, f);
        fclose(f);
    }
    return p;
}

/* ---- exact adaptive code length of residuals with the real context model ---- */
static uint16_t g_ioff;

static double code_len_view(const lsx_view *v, const int32_t *res, const uint32_t *act, const uint8_t *itok)
{
    static ctx_model cm;
    ctx_model_init(&cm, v->nctx * v->nib, v->nib, v->prior);
    double bits = 0;
    for (size_t i = 0; i < N; i++) {
        if (ctx_refresh_due(i)) ctx_model_refresh(&cm);
        int c = ctx_of(act[i], v->thr, v->nctx) * v->nib + lsx_intensity_class(itok[i], v->ibnd, v->nib);
        uint32_t a = (uint32_t)(res[i] < 0 ? -res[i] : res[i]);
        int nraw;
        int t = ctx_token(a, &nraw);
        bits += CTX_PROB_BITS - log2((double)cm.freq[c][t]) + nraw + (a != 0);
        ctx_model_count(&cm, c, t);
    }
    uint32_t nseg = (uint32_t)((N + (1u << LSX_SEG_LOG2) - 1) >> LSX_SEG_LOG2);
    return bits / 8.0 + 4.0 * nseg + (double)lsx_header_len(v->nctx, nseg, 1);
}

/* the encoder's candidates: 12 x I, 16 x I, 12 x 1; the smallest */
static double code_len(const int32_t *res, const uint32_t *act, const uint8_t *itok)
{
    lsx_view v = {.p = {o_K, o_M, 2, o_R}, .W = W, .H = H, .seg_log2 = LSX_SEG_LOG2, .nctx = 1, .nib = 1,
                  .prior = LSX_PRIOR, .ioff = g_ioff};
    lsx_view full = v, wide = v, activity = v;
    full.nctx = activity.nctx = LSX_NCTX;
    wide.nctx = LSX_NCTX_WIDE;
    ctx_default_thresholds(full.thr, full.nctx);
    ctx_default_thresholds(wide.thr, wide.nctx);
    ctx_default_thresholds(activity.thr, activity.nctx);
    uint64_t h[CTX_TOKENS] = {0};
    for (size_t i = 0; i < N; i++) h[itok[i]]++;
    lsx_intensity_classes(&full, h, N);
    wide.nib = full.nib;
    memcpy(wide.ibnd, full.ibnd, sizeof wide.ibnd);
    double best = code_len_view(&full, res, act, itok);
    double b2 = code_len_view(&wide, res, act, itok);
    if (b2 < best) best = b2;
    if (full.nib != 1) {
        b2 = code_len_view(&activity, res, act, itok);
        if (b2 < best) best = b2;
    }
    return best;
}

/* ---- error-level tracking of blend members (as lsx_record / lsx_end_row) ---- */
#define MAXM 8
typedef struct {
    int np;
    int32_t *err[MAXM][2], *colerr[MAXM];
} tracker;

static void tr_init(tracker *t, int np)
{
    t->np = np;
    for (int k = 0; k < np; k++) {
        t->err[k][0] = calloc(W, 4);
        t->err[k][1] = calloc(W, 4);
        t->colerr[k] = calloc(W, 4);
    }
}
static void tr_free(tracker *t)
{
    for (int k = 0; k < t->np; k++) free(t->err[k][0]), free(t->err[k][1]), free(t->colerr[k]);
}
static int32_t tr_level(const tracker *t, int k, uint32_t m, uint32_t n)
{
    const int32_t *cur = t->err[k][m & 1], *up = m > 0 ? t->err[k][(m + 1) & 1] : NULL;
    return lsx_error_level(cur, up, n, W, SET, (SET ? 0 : LSX_COLERR_W) * t->colerr[k][n]);
}
static void tr_record(tracker *t, uint32_t m, uint32_t n, uint16_t x, const double *p)
{
    int32_t x16 = (int32_t)x * 16;
    for (int k = 0; k < t->np; k++) {
        int32_t d = x16 - lsx_q16(p[k]);
        t->err[k][m & 1][n] = d < 0 ? -d : d;
    }
}
static void tr_end_row(tracker *t, uint32_t m)
{
    if (SET) return;
    for (int k = 0; k < t->np; k++) {
        const int32_t *e = t->err[k][m & 1];
        int32_t *c = t->colerr[k];
        for (uint32_t n = 0; n < W; n++) c[n] = m == 0 ? e[n] : lsx_mean_step(c[n], e[n], LSX_COLERR_SHIFT);
    }
}

/* ---- the baseline pass: lsmix, storing its members' predictions ---- */
static double *PP;          /* [N * NP] */
static int32_t *CMA, *CMB;  /* column means before row m (Q4) */

static void lsmix_pass(const double *p_ls, int32_t *res, uint32_t *act, uint8_t *itok)
{
    lsx_state s;
    lsx_state_init(&s, W, SET, 0);
    NP = s.np;
    PP = malloc(N * NP * sizeof *PP);
    CMA = malloc(N * 4);
    CMB = malloc(N * 4);
    for (uint32_t m = 0; m < H; m++) {
        const uint16_t *cur = U + (size_t)m * W;
        int32_t *r0 = res + (size_t)m * W;
        const int32_t *r1 = m > 0 ? r0 - W : NULL, *r2 = m > 1 ? r0 - 2 * (size_t)W : NULL;
        memcpy(CMA + (size_t)m * W, s.cm_a, W * 4);
        memcpy(CMB + (size_t)m * W, s.cm_b, W * 4);
        for (uint32_t n = 0; n < W; n++) {
            int32_t emin = 0, z[4] = {0};
            uint16_t pred;
            double pp[LSX_NPRED];
            if (m == 0) {
                pred = n ? cur[n - 1] : 0;
                for (int k = 0; k < LSX_NPRED; k++) pp[k] = pred;
            } else {
                pp[0] = p_ls[(size_t)m * W + n];
                pp[1] = lsx_cm_predict(&s, n);
                lsx_sources(&s, cur, m, n, pp[0], z);
                lsx_row_predict(&s, n, z, pp);
                pred = lsx_blend(&s, m, n, pp, &emin);
            }
            memcpy(PP + ((size_t)m * W + n) * NP, pp, NP * sizeof *pp);
            r0[n] = (int32_t)cur[n] - pred;
            act[(size_t)m * W + n] = lsx_activity16(lsx_residual_activity(r0, r1, r2, W, n), emin);
            itok[(size_t)m * W + n] = (uint8_t)lsx_intensity_token(pred, g_ioff);
            lsx_record(&s, m, n, cur[n], pp, z);
        }
        lsx_end_row(&s, m, cur);
    }
    lsx_state_free(&s);
}

static double *g_ls2;
/* blend of the stored members (nb of them) plus optional extra predictions pm;
 * use_base = 0: pm alone (its own error level as emin). */
static double blend_pass(const double *pm, int use_base, int32_t *res, uint32_t *act, uint8_t *itok)
{
    /* use_base 1: every lsmix member; 2: all but LS (set 1: CM, AF, RV: AL reads LS) */
    int k0 = use_base == 2 ? 1 : 0;
    int sub = use_base == 3;
    if (sub) use_base = 1;
    int nb = use_base == 1 ? NP : use_base == 2 ? (SET ? 3 : NP - 1) : 0, nm = nb + (pm != NULL);
    tracker t;
    tr_init(&t, nm);
    for (uint32_t m = 0; m < H; m++) {
        const uint16_t *cur = U + (size_t)m * W;
        int32_t *r0 = res + (size_t)m * W;
        const int32_t *r1 = m > 0 ? r0 - W : NULL, *r2 = m > 1 ? r0 - 2 * (size_t)W : NULL;
        for (uint32_t n = 0; n < W; n++) {
            size_t i = (size_t)m * W + n;
            double p[MAXM];
            int32_t e[MAXM], emin = 0;
            uint16_t pred;
            for (int k = 0; k < nb; k++) p[k] = PP[i * NP + k0 + k];
            if (sub) p[0] = g_ls2[i];
            if (pm) p[nb] = pm[i];
            if (m == 0) {
                pred = n ? cur[n - 1] : 0;
                for (int k = 0; k < nm; k++) p[k] = pred;
            } else {
                for (int k = 0; k < nm; k++) {
                    e[k] = tr_level(&t, k, m, n);
                    if (k == 0 || e[k] < emin) emin = e[k];
                }
                pred = lsx_blend_of(nm, e, p, LSX_BLEND_CUBE16);
            }
            r0[n] = (int32_t)cur[n] - pred;
            act[i] = lsx_activity16(lsx_residual_activity(r0, r1, r2, W, n), emin);
            itok[i] = (uint8_t)lsx_intensity_token(pred, g_ioff);
            tr_record(&t, m, n, cur[n], p);
        }
        tr_end_row(&t, m);
    }
    tr_free(&t);
    return code_len(res, act, itok);
}

/* ---- class predictors ---- */
#define MAXD 40
static int D, NPX, o_sup = 2, o_cm = 1;
static int DY[MAXD], DX[MAXD];

static void set_support(int sup)
{
    NPX = 0;
#define ADD(y, x) (DY[NPX] = (y), DX[NPX] = (x), NPX++)
    if (sup == 1) { /* 11 px: W WW WWW, N-row n-2..n+2, NN-row n-1..n+1 */
        for (int k = 1; k <= 3; k++) ADD(0, -k);
        for (int k = -2; k <= 2; k++) ADD(-1, k);
        for (int k = -1; k <= 1; k++) ADD(-2, k);
    } else if (sup == 2) { /* 21 px */
        for (int k = 1; k <= 6; k++) ADD(0, -k);
        for (int k = -3; k <= 3; k++) ADD(-1, k);
        for (int k = -2; k <= 2; k++) ADD(-2, k);
        for (int k = -1; k <= 1; k++) ADD(-3, k);
    } else { /* 30 px */
        for (int k = 1; k <= 8; k++) ADD(0, -k);
        for (int k = -4; k <= 4; k++) ADD(-1, k);
        for (int k = -3; k <= 3; k++) ADD(-2, k);
        for (int k = -2; k <= 2; k++) ADD(-3, k);
        ADD(-4, 0);
    }
    D = NPX + (o_cm ? 2 : 0) + 1;
}

/* regressors of (m, n), m >= 1; z[D] = target */
static inline void build_z(uint32_t m, uint32_t n, double *z)
{
    for (int k = 0; k < NPX; k++) {
        int y = (int)m + DY[k], x = (int)n + DX[k];
        if (DY[k] == 0 && x < 0) { y = (int)m - 1; x = 0; }
        if (y < 0) y = 0;
        if (x < 0) x = 0;
        if (x >= (int)W) x = (int)W - 1;
        z[k] = U[(size_t)y * W + x];
    }
    int j = NPX;
    if (o_cm) {
        z[j++] = CMA[(size_t)m * W + n] * 0.0625;
        z[j++] = CMB[(size_t)m * W + n] * 0.0625;
    }
    z[j++] = 1.0;
    z[D] = U[(size_t)m * W + n];
}

#define NE_(d) (((d) + 1) * ((d) + 2) / 2)
static inline void gram_add(double *g, const double *z, int Z)
{
    int q = 0;
    for (int a = 0; a < Z; a++) {
        double za = z[a];
        for (int b = a; b < Z; b++) g[q++] += za * z[b];
    }
}
static inline double gram_at(const double *g, int Z, int a, int b)
{
    if (a > b) { int t = a; a = b; b = t; }
    return g[a * Z - a * (a - 1) / 2 + (b - a)];
}

/* ridge LS from a Gram over (z, target); coef[D] quantised */
static void solve_q(const double *g, double *coef)
{
    int Z = D + 1;
    double A[MAXD][MAXD], r[MAXD], tr = 0;
    for (int a = 0; a < D; a++) {
        for (int b = 0; b < D; b++) A[a][b] = gram_at(g, Z, a, b);
        r[a] = gram_at(g, Z, a, D);
        tr += A[a][a];
    }
    if (tr <= 0) { memset(coef, 0, D * sizeof *coef); coef[0] = 1; return; }
    for (int a = 0; a < D; a++) A[a][a] += 1e-7 * tr / D + 1e-9;
    /* Cholesky */
    for (int a = 0; a < D; a++) {
        for (int b = 0; b <= a; b++) {
            double s = A[a][b];
            for (int k = 0; k < b; k++) s -= A[a][k] * A[b][k];
            if (a == b) A[a][a] = sqrt(s > 1e-12 ? s : 1e-12);
            else A[a][b] = s / A[b][b];
        }
    }
    double y[MAXD];
    for (int a = 0; a < D; a++) {
        double s = r[a];
        for (int k = 0; k < a; k++) s -= A[a][k] * y[k];
        y[a] = s / A[a][a];
    }
    for (int a = D - 1; a >= 0; a--) {
        double s = y[a];
        for (int k = a + 1; k < D; k++) s -= A[k][a] * coef[k];
        coef[a] = s / A[a][a];
    }
    /* quantise: 12 fractional bits; the constant (last) to 1/16 */
    for (int a = 0; a < D - 1; a++) coef[a] = round(coef[a] * 4096.0) / 4096.0;
    coef[D - 1] = round(coef[D - 1] * 16.0) / 16.0;
}

/* SSE of coef on a Gram */
static double sse(const double *g, const double *c)
{
    int Z = D + 1;
    double v[MAXD + 1];
    for (int a = 0; a < D; a++) v[a] = c[a];
    v[D] = -1;
    double s = 0;
    int q = 0;
    for (int a = 0; a < Z; a++)
        for (int b = a; b < Z; b++, q++) s += (a == b ? 1.0 : 2.0) * g[q] * v[a] * v[b];
    return s;
}

static inline double dotp(const double *c, const double *z)
{
    double s = 0;
    for (int a = 0; a < D; a++) s += c[a] * z[a];
    return s;
}

static double side_bytes_coefs(int C) { return C * D * 2.0 + 2; }

/* class map code length: adaptive, context = class of the block above */
static double map_bytes(const int *cls, int bw, int bh, int C)
{
    double *cnt = calloc((size_t)(C + 1) * C, sizeof *cnt), bits = 0;
    for (int by = 0; by < bh; by++)
        for (int bx = 0; bx < bw; bx++) {
            int ctx = by ? cls[(by - 1) * bw + bx] : C, s = cls[by * bw + bx];
            double tot = 0;
            for (int k = 0; k < C; k++) tot += cnt[ctx * C + k];
            bits += -log2((cnt[ctx * C + s] + 0.5) / (tot + 0.5 * C));
            cnt[ctx * C + s] += 1;
        }
    free(cnt);
    return bits / 8.0;
}


/* ---- (c) online LS with a wider support, double precision (lsx's training:
 * per-column sums decayed by 2^-f each row, window of M columns, ridge
 * G_jj 2^-r, out-of-frame pixels 0) ---- */
static int ext_sup(int ext, int *dy, int *dx)
{
    int n = 0;
    for (int k = 1; k <= o_K; k++) dy[n] = 0, dx[n++] = -k;
    for (int d = -1; d <= 1; d++) dy[n] = -1, dx[n++] = d;
    if (ext >= 2) { dy[n] = -1, dx[n++] = -2; dy[n] = -1, dx[n++] = 2; }
    if (ext >= 1) for (int d = -1; d <= 1; d++) dy[n] = -2, dx[n++] = d;
    if (ext >= 3) { dy[n] = -2, dx[n++] = -2; dy[n] = -2, dx[n++] = 2; dy[n] = -3, dx[n++] = 0; }
    return n;
}

static inline void ext_z(int np_, const int *dy, const int *dx, uint32_t m, uint32_t n, double *z)
{
    int j = 0;
    for (int k = 0; k < np_; k++) {
        int64_t y = (int64_t)m + dy[k], x = (int64_t)n + dx[k];
        z[j++] = (y >= 0 && x >= 0 && x < (int64_t)W) ? U[(size_t)y * W + x] : 0.0;
    }
    z[j++] = CMA[(size_t)m * W + n];
    z[j++] = CMB[(size_t)m * W + n];
    z[j++] = 1.0;
    z[j] = U[(size_t)m * W + n];
}

static double *ls_ext(int ext, int F)
{
    int dy[40], dx[40], np_ = ext_sup(ext, dy, dx), Dl = np_ + 3, Z = Dl + 1, NE = Z * (Z + 1) / 2;
    double *P = malloc(N * sizeof *P);
    double *Cs = calloc((size_t)W * NE, sizeof *Cs), *pre = calloc((size_t)(W + 1) * NE, sizeof *pre);
    double *cf = calloc((size_t)W * Dl, sizeof *cf);
    uint8_t *ok = calloc(W, 1);
    double dec = 1.0 - ldexp(1.0, -F), z[48];
    int R = (o_M - 1) / 2;
    for (uint32_t m = 0; m < H; m++) {
        if (m >= 1) {
            for (uint32_t n = 0; n < W; n++) {
                double *c = Cs + (size_t)n * NE;
                for (int q = 0; q < NE; q++) c[q] *= dec;
                ext_z(np_, dy, dx, m - 1, n, z);
                int q = 0;
                for (int a = 0; a < Z; a++)
                    for (int b = a; b < Z; b++) c[q++] += z[a] * z[b];
            }
            for (uint32_t n = 0; n < W; n++)
                for (int q = 0; q < NE; q++) pre[(size_t)(n + 1) * NE + q] = pre[(size_t)n * NE + q] + Cs[(size_t)n * NE + q];
            for (uint32_t n = 0; n < W; n++) {
                int a0 = (int)n - R, a1 = (int)n + R;
                if (a0 < 0) a0 = 0;
                if (a1 > (int)W - 1) a1 = (int)W - 1;
                double A[MAXD][MAXD], r[MAXD], y[MAXD], *co = cf + (size_t)n * Dl;
                const double *p1 = pre + (size_t)(a1 + 1) * NE, *p0 = pre + (size_t)a0 * NE;
                int q = 0;
                for (int a = 0; a < Z; a++)
                    for (int b = a; b < Z; b++, q++) {
                        double v = p1[q] - p0[q];
                        if (b < Dl) A[a][b] = A[b][a] = v; else r[a] = v;
                    }
                for (int a = 0; a < Dl; a++) A[a][a] += A[a][a] * ldexp(1.0, -o_R) + 1e-9;
                int good = 1;
                for (int a = 0; a < Dl && good; a++)
                    for (int b = 0; b <= a; b++) {
                        double s = A[a][b];
                        for (int k = 0; k < b; k++) s -= A[a][k] * A[b][k];
                        if (a == b) { if (!(s > 1e-9)) { good = 0; break; } A[a][a] = sqrt(s); }
                        else A[a][b] = s / A[b][b];
                    }
                ok[n] = (uint8_t)good;
                if (!good) continue;
                for (int a = 0; a < Dl; a++) {
                    double s = r[a];
                    for (int k = 0; k < a; k++) s -= A[a][k] * y[k];
                    y[a] = s / A[a][a];
                }
                for (int a = Dl - 1; a >= 0; a--) {
                    double s = y[a];
                    for (int k = a + 1; k < Dl; k++) s -= A[k][a] * co[k];
                    co[a] = s / A[a][a];
                }
            }
        }
        for (uint32_t n = 0; n < W; n++) {
            size_t i = (size_t)m * W + n;
            if (m == 0 || !ok[n]) { P[i] = n ? U[i - 1] : (m ? U[i - W] : 0); continue; }
            ext_z(np_, dy, dx, m, n, z);
            double v = 0;
            for (int a = 0; a < Dl; a++) v += cf[(size_t)n * Dl + a] * z[a];
            P[i] = v;
        }
    }
    free(Cs), free(pre), free(cf), free(ok);
    return P;
}

static double *g_key;

static double *g_z; /* per pixel regressors [N * (D+1)], float would do */

static void fill_z(void)
{
    free(g_z);
    g_z = malloc(N * (D + 1) * sizeof *g_z);
    for (uint32_t m = 1; m < H; m++)
        for (uint32_t n = 0; n < W; n++) build_z(m, n, g_z + ((size_t)m * W + n) * (D + 1));
}

static double *prev_pred(const int *pcls, const double *coef)
{
    double *pm = malloc(N * sizeof *pm);
    for (size_t i = 0; i < W; i++) pm[i] = 0;
    for (size_t i = W; i < N; i++) pm[i] = dotp(coef + pcls[i] * D, g_z + i * (D + 1));
    return pm;
}

static void report(const char *name, double bytes, double side, double base)
{
    printf("%-14s %10.0f side %7.0f  %+7.3f%%\n", name, bytes + side, side, 100.0 * (bytes + side - base) / base);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc < 4) return 2;
    SET = atoi(argv[2]);
    int F = atoi(argv[3]);
    int o_mapl = 0, o_irw = 2, o_l1a = 0, o_irls = 0, o_ext = 0, o_B = 16, o_C = 16, o_it = 8, o_cau = 1, o_feat = 1, o_blk = 1, o_Q = 8;
    for (int i = 4; i < argc; i++) {
        char k[64];
        int v;
        if (sscanf(argv[i], "%63[^=]=%d", k, &v) != 2) return 2;
        if (!strcmp(k, "B")) o_B = v;
        else if (!strcmp(k, "C")) o_C = v;
        else if (!strcmp(k, "it")) o_it = v;
        else if (!strcmp(k, "sup")) o_sup = v;
        else if (!strcmp(k, "cm")) o_cm = v;
        else if (!strcmp(k, "cau")) o_cau = v;
        else if (!strcmp(k, "feat")) o_feat = v;
        else if (!strcmp(k, "blk")) o_blk = v;
        else if (!strcmp(k, "Q")) o_Q = v;
        else if (!strcmp(k, "ext")) o_ext = v;
        else if (!strcmp(k, "irls")) o_irls = v;
        else if (!strcmp(k, "irw")) o_irw = v;
        else if (!strcmp(k, "l1a")) o_l1a = v;
        else if (!strcmp(k, "mapl")) o_mapl = v;
        else { fprintf(stderr, "unknown %s\n", k); return 2; }
    }
    U = load_fits(argv[1], &W, &H);
    if (!U) return 1;
    N = (size_t)W * H;
    const char *base = strrchr(argv[1], '/');
    base = base ? base + 1 : argv[1];
    char name[256];
    snprintf(name, sizeof name, "%s", base);
    char *dot = strstr(name, ".fits");
    if (dot) *dot = 0;
    {
        uint32_t *hist = calloc(65536, 4);
        for (size_t i = 0; i < N; i++) hist[U[i]]++;
        g_ioff = lsx_ioff_of_histogram(hist, N);
        free(hist);
    }
    int32_t *res = malloc(N * 4);
    uint32_t *act = malloc(N * 4);
    uint8_t *itok = malloc(N);
    if (getenv("MRP_CACHE")) o_cache = getenv("MRP_CACHE");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    double *p_ls = ls_predictions(name, F);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fprintf(stderr, "time LS (or cache) %.3f s\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
    lsmix_pass(p_ls, res, act, itok);
    double b0 = code_len(res, act, itok);
    double b1 = blend_pass(NULL, 1, res, act, itok);
    double bn = blend_pass(NULL, 2, res, act, itok);
    printf("%s %ux%u set %d f %d sup %d D %d C %d B %d\n", name, W, H, SET, F, o_sup, 0, o_C, o_B);
    set_support(o_sup);
    printf("# D %d\n", D);
    report("base", b0, 0, b0);
    if (fabs(b1 - b0) > 0.5) report("base(re-blend)", b1, 0, b0);
    report("noLS(CM,AF..)", bn, 0, b0);
    for (int e = 0; e < 4; e++) {
        if (!(o_ext >> e & 1)) continue;
        g_ls2 = ls_ext(e, F);
        char nm[32];
        snprintf(nm, sizeof nm, "lsext%d", e);
        report(nm, blend_pass(NULL, 3, res, act, itok), 0, b0);
        free(g_ls2);
    }
    if (!o_feat && !o_blk && !o_cau) return 0;
    int C = o_C;
    fill_z();
    int *pcls = calloc(N, sizeof *pcls);
    double *coef = calloc((size_t)C * D, sizeof *coef);

    /* ---- feature classes: quantised local activity x brightness ---- */
    if (o_feat) {
        int Q = o_Q, NIB_ = 4, CF = Q * NIB_;
        /* activity feature */
        double *fa = malloc(N * sizeof *fa), *fb = malloc(N * sizeof *fb);
        for (uint32_t m = 1; m < H; m++)
            for (uint32_t n = 0; n < W; n++) {
                const double *z = g_z + ((size_t)m * W + n) * (D + 1);
                /* z: 0 W,1 WW ... ; locate N,NW,NE via support order */
                double Wv = z[0], WWv = z[1];
                int iN = -1;
                for (int k = 0; k < NPX; k++) if (DY[k] == -1 && DX[k] == 0) iN = k;
                double Nv = z[iN], NWv = z[iN - 1], NEv = z[iN + 1];
                fa[(size_t)m * W + n] = fabs(Wv - WWv) + fabs(Nv - NWv) + fabs(NEv - Nv) + fabs(Wv - NWv) +
                                        fabs(Nv - U[(size_t)(m >= 2 ? m - 2 : 0) * W + n]);
                fb[(size_t)m * W + n] = Nv + Wv;
            }
        /* quantile bounds (sample) */
        size_t ns = (N - W) / 64 + 1;
        double *sa = malloc(ns * sizeof *sa), *sb = malloc(ns * sizeof *sb);
        for (size_t j = 0; j < ns; j++) { sa[j] = fa[W + j * 64 < N ? W + j * 64 : N - 1]; sb[j] = fb[W + j * 64 < N ? W + j * 64 : N - 1]; }
        int cmpd(const void *, const void *);
        qsort(sa, ns, sizeof *sa, cmpd);
        qsort(sb, ns, sizeof *sb, cmpd);
        double ta[64], tb[8];
        for (int q = 1; q < Q; q++) ta[q - 1] = sa[ns * q / Q];
        for (int q = 1; q < NIB_; q++) tb[q - 1] = sb[ns * q / NIB_];
        int *fc = calloc(N, sizeof *fc);
        for (size_t i = W; i < N; i++) {
            int a = 0, b = 0;
            while (a < Q - 1 && fa[i] >= ta[a]) a++;
            while (b < NIB_ - 1 && fb[i] >= tb[b]) b++;
            fc[i] = a * NIB_ + b;
        }
        double *gf = calloc((size_t)CF * NE_(D), sizeof *gf), *cf = calloc((size_t)CF * D, sizeof *cf);
        for (size_t i = W; i < N; i++) gram_add(gf + (size_t)fc[i] * NE_(D), g_z + i * (D + 1), D + 1);
        for (int c = 0; c < CF; c++) solve_q(gf + (size_t)c * NE_(D), cf + (size_t)c * D);
        double *pm = prev_pred(fc, cf);
        char nm[64];
        double side = side_bytes_coefs(CF) + 8.0 * (Q + NIB_);
        snprintf(nm, sizeof nm, "feat%dx4", Q);
        report(nm, blend_pass(pm, 0, res, act, itok), side, b0);
        snprintf(nm, sizeof nm, "feat%dx4+bl", Q);
        report(nm, blend_pass(pm, 1, res, act, itok), side, b0);
        snprintf(nm, sizeof nm, "feat%dx4+noLS", Q);
        report(nm, blend_pass(pm, 2, res, act, itok), side, b0);
        free(pm), free(gf), free(cf), free(fc), free(fa), free(fb), free(sa), free(sb);
    }

    /* ---- block classes with a sent map ---- */
    if (o_blk || o_cau) {
        int B = o_B, bw = (int)(W + B - 1) / B, bh = (int)(H + B - 1) / B, nbk = bw * bh;
        double *gb = calloc((size_t)nbk * NE_(D), sizeof *gb);
        for (uint32_t m = 1; m < H; m++)
            for (uint32_t n = 0; n < W; n++)
                gram_add(gb + (size_t)((m / B) * bw + n / B) * NE_(D), g_z + ((size_t)m * W + n) * (D + 1), D + 1);
        /* init: classes by quantile of the block's SSE under the LS prediction */
        double *bv = calloc(nbk, sizeof *bv);
        for (size_t i = W; i < N; i++) {
            double d = U[i] - PP[i * NP];
            bv[(i / W / B) * bw + (i % W) / B] += d * d;
        }
        int *cls = calloc(nbk, sizeof *cls), *ord = malloc(nbk * sizeof *ord);
        for (int b = 0; b < nbk; b++) ord[b] = b;
        /* sort blocks by bv (simple) */
        {
            double *key = bv;
            int cmpi_key(const void *, const void *);
            g_key = key;
            qsort(ord, nbk, sizeof *ord, cmpi_key);
        }
        for (int r = 0; r < nbk; r++) cls[ord[r]] = (int)((long)r * C / nbk);
        double *gc = malloc((size_t)C * NE_(D) * sizeof *gc);
        for (int it = 0; it < o_it; it++) {
            memset(gc, 0, (size_t)C * NE_(D) * sizeof *gc);
            for (int b = 0; b < nbk; b++)
                for (int q = 0; q < NE_(D); q++) gc[(size_t)cls[b] * NE_(D) + q] += gb[(size_t)b * NE_(D) + q];
            for (int c = 0; c < C; c++) solve_q(gc + (size_t)c * NE_(D), coef + (size_t)c * D);
            double tot = 0;
            int moved = 0;
            for (int b = 0; b < nbk; b++) {
                int best = cls[b];
                double bs = sse(gb + (size_t)b * NE_(D), coef + (size_t)best * D);
                for (int c = 0; c < C; c++) {
                    double s = sse(gb + (size_t)b * NE_(D), coef + (size_t)c * D);
                    if (s < bs) bs = s, best = c;
                }
                moved += best != cls[b];
                cls[b] = best;
                tot += bs;
            }
            fprintf(stderr, "it %d rms %.3f moved %d\n", it, sqrt(tot / (N - W)), moved);
        }
        for (size_t i = W; i < N; i++) pcls[i] = cls[(i / W / B) * bw + (i % W) / B];
        /* IRLS toward an L1 (Laplacian code length) fit: weights 1/max(|e|, delta) */
        for (int r = 0; r < o_irls; r++) {
            memset(gc, 0, (size_t)C * NE_(D) * sizeof *gc);
            double zw[MAXD + 1];
            for (size_t i = W; i < N; i++) {
                const double *z = g_z + i * (D + 1);
                double e = fabs(z[D] - dotp(coef + (size_t)pcls[i] * D, z)), w = o_irw == 2 ? 1.0 / sqrt(e > 1.0 ? e : 1.0) : 1.0 / sqrt(sqrt(e > 1.0 ? e : 1.0));
                for (int a = 0; a <= D; a++) zw[a] = z[a] * w;
                gram_add(gc + (size_t)pcls[i] * NE_(D), zw, D + 1);
            }
            for (int c = 0; c < C; c++) solve_q(gc + (size_t)c * NE_(D), coef + (size_t)c * D);
            if (o_l1a) {
                /* reassign blocks by the sum of |e| (L1) */
                double *bc = calloc((size_t)nbk * C, sizeof *bc);
                for (size_t i = W; i < N; i++) {
                    const double *z = g_z + i * (D + 1);
                    size_t b = (i / W / B) * bw + (i % W) / B;
                    for (int c = 0; c < C; c++) bc[b * C + c] += fabs(z[D] - dotp(coef + (size_t)c * D, z));
                }
                int moved = 0;
                for (int b = 0; b < nbk; b++) {
                    int best = cls[b];
                    if (o_mapl) {
                        /* bits: sum|e| / (mean|e| ln 2) + map bits (about 1 for the class above, log2 C + 1 else) */
                        double mn = 1e300, npx = 0;
                        for (int c = 0; c < C; c++) if (bc[(size_t)b * C + c] < mn) mn = bc[(size_t)b * C + c];
                        int bx = b % bw, by = b / bw;
                        npx = (double)B * B;
                        double sc = 1.0 / ((mn / npx + 0.5) * 0.6931), bb = 1e300;
                        int up = by ? cls[b - bw] : -1;
                        for (int c = 0; c < C; c++) {
                            double t = bc[(size_t)b * C + c] * sc + (c == up ? 0.4 : log2((double)C) + 1.0) * o_mapl;
                            if (t < bb) bb = t, best = c;
                        }
                        (void)bx;
                    } else
                    for (int c = 0; c < C; c++) if (bc[(size_t)b * C + c] < bc[(size_t)b * C + best]) best = c;
                    moved += best != cls[b];
                    cls[b] = best;
                }
                free(bc);
                for (size_t i = W; i < N; i++) pcls[i] = cls[(i / W / B) * bw + (i % W) / B];
                fprintf(stderr, "irls %d moved %d\n", r, moved);
            }
        }
        char nm[64];
        if (o_blk) {
            {
                /* decoder cost: integer dot product per pixel, coefficients Q12 */
                int32_t *qc = malloc((size_t)C * D * 4);
                for (int q = 0; q < C * D; q++) qc[q] = (int32_t)lrint(coef[q] * 4096.0);
                int32_t *cmq = malloc(W * 4);
                for (uint32_t n = 0; n < W; n++) cmq[n] = CMA[n];
                clock_gettime(CLOCK_MONOTONIC, &t0);
                int64_t chk = 0;
                for (uint32_t m = 4; m < H; m++)
                    for (uint32_t n = 8; n + 8 < W; n++) {
                        const int32_t *c = qc + (size_t)pcls[(size_t)m * W + n] * D;
                        int64_t s = 0;
                        for (int k = 0; k < NPX; k++) s += (int64_t)c[k] * U[(size_t)(m + DY[k]) * W + n + DX[k]];
                        s += (int64_t)c[NPX] * cmq[n] + (int64_t)c[NPX + 1] * cmq[n] + c[NPX + 2];
                        chk += s >> 12;
                    }
                clock_gettime(CLOCK_MONOTONIC, &t1);
                fprintf(stderr, "time dot %.3f s (%lld)\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec), (long long)chk);
                free(qc), free(cmq);
            }
            double *pm = prev_pred(pcls, coef);
            double side = side_bytes_coefs(C) + map_bytes(cls, bw, bh, C);
            snprintf(nm, sizeof nm, "blk%d_C%d", B, C);
            report(nm, blend_pass(pm, 0, res, act, itok), side, b0);
            snprintf(nm, sizeof nm, "blk%d_C%d+bl", B, C);
            report(nm, blend_pass(pm, 1, res, act, itok), side, b0);
            snprintf(nm, sizeof nm, "blk%d_C%d+noLS", B, C);
            report(nm, blend_pass(pm, 2, res, act, itok), side, b0);
            free(pm);
        }
        if (o_cau) {
            /* causal choice: class with the smallest |error| sum on W, WW, N, NW, NE */
            float *ec = malloc(N * C * sizeof *ec);
            double *pm = malloc(N * sizeof *pm);
            int *cc = calloc(N, sizeof *cc);
            for (int it = 0; it < 3; it++) {
                for (size_t i = W; i < N; i++)
                    for (int c = 0; c < C; c++) ec[i * C + c] = (float)fabs(U[i] - dotp(coef + (size_t)c * D, g_z + i * (D + 1)));
                for (uint32_t m = 1; m < H; m++)
                    for (uint32_t n = 0; n < W; n++) {
                        size_t i = (size_t)m * W + n;
                        int best = 0;
                        double bs = 1e300;
                        for (int c = 0; c < C; c++) {
                            double s = 0;
                            if (n > 0 && m > 1) s += 2 * ec[(i - 1) * C + c];
                            if (n > 1 && m > 1) s += ec[(i - 2) * C + c];
                            if (m > 1) {
                                s += 2 * ec[(i - W) * C + c];
                                if (n > 0) s += ec[(i - W - 1) * C + c];
                                if (n + 1 < W) s += ec[(i - W + 1) * C + c];
                            }
                            if (s < bs) bs = s, best = c;
                        }
                        cc[i] = best;
                        pm[i] = dotp(coef + (size_t)best * D, g_z + i * (D + 1));
                    }
                snprintf(nm, sizeof nm, "cau_C%d_it%d", C, it);
                report(nm, blend_pass(pm, 0, res, act, itok), side_bytes_coefs(C), b0);
                if (it == 2) {
                    snprintf(nm, sizeof nm, "cau_C%d+bl", C);
                    report(nm, blend_pass(pm, 1, res, act, itok), side_bytes_coefs(C), b0);
                    break;
                }
                /* refit on the causal assignment */
                memset(gc, 0, (size_t)C * NE_(D) * sizeof *gc);
                for (size_t i = W; i < N; i++) gram_add(gc + (size_t)cc[i] * NE_(D), g_z + i * (D + 1), D + 1);
                for (int c = 0; c < C; c++) solve_q(gc + (size_t)c * NE_(D), coef + (size_t)c * D);
            }
            free(ec), free(pm), free(cc);
        }
        free(gb), free(bv), free(cls), free(ord), free(gc);
    }
    return 0;
}

int cmpi_key(const void *a, const void *b)
{
    double x = g_key[*(const int *)a], y = g_key[*(const int *)b];
    return x < y ? -1 : x > y;
}
int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

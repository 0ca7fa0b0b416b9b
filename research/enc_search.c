/* Round 4: encoder-only levers of the lsmix profile (no format change).
 *
 * Includes core/lsmix_codec.c itself (its static encoder pieces) and codes
 * each candidate with the real coder: every length printed is the exact
 * image-stream length that the codec would write with those header fields.
 * The chosen streams are decoded with lsx_image_decode and compared.
 *
 *   cc -O2 -ffp-contract=off -fno-fast-math -Icore -Iresearch -Ithird_party/xxhash \
 *      -o /tmp/enc_search research/enc_search.c `ls core/[!l]*.c core/lsmix_p*.c` -lm -lpthread
 *   /tmp/enc_search FRAME.fits [rows=R] [P=set:f:K:M:r] [ctx=0] [ls=0]
 *     rows=R: code only the middle R rows (R < 0: H/-R, at least 64) and stop
 *     after the LS levers (the cheap rules decide on these);
 *     P=...: skip levers 1-2, use these LS parameters and predictor set;
 *     grid=1: DP activity bins on a fixed 1/8-octave grid (no sort);
 *     quick=1: stop after the cheap rule's stream.
 *
 * Output lines: "<frame> <lever> <choice> <bytes>".  Not part of the build. */
#include "lsmix_codec.c"

#include <math.h>
#include <stdio.h>
#include <time.h>

#include "lab_io.h"

static const uint16_t *g_u;
static uint32_t g_W, g_H;
static uint64_t g_N;
static const char *g_name;
static int32_t *g_res;
static uint32_t *g_act;
static uint8_t *g_itok, *g_ctx, *g_tok;
static ctx_model *g_snap;
static enc_job g_j;
static double g_lg[(1 << CTX_PROB_BITS) + 1];

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static double *ls_pred(lsx_params p)
{
    double *pl = calloc(g_N, sizeof *pl);
    enc_job j = {.u = g_u, .W = g_W, .H = g_H, .p = p, .nbands = 1, .p_ls = pl};
    atomic_init(&j.failed, 0);
    predict_band(&j, 0);
    if (atomic_load(&j.failed)) abort();
    return pl;
}

static lsx_view base_view(lsx_params p, int set, uint16_t ioff)
{
    lsx_view v = {.p = p, .W = g_W, .H = g_H, .seg_log2 = LSX_SEG_LOG2, .nctx = 1, .nib = 1,
                  .set = set, .ioff = ioff};
    v.nseg = (uint32_t)((g_N + (1u << v.seg_log2) - 1) >> v.seg_log2);
    return v;
}

static void residuals(const lsx_view *v, const double *pl)
{
    if (residuals_and_contexts(v, g_u, pl, g_res, g_act, g_itok) != AURP_OK) abort();
    for (uint64_t i = 0; i < g_N; i++) {
        int nraw;
        g_tok[i] = (uint8_t)ctx_token((uint32_t)(g_res[i] < 0 ? -g_res[i] : g_res[i]), &nraw);
    }
}

/* intensity tokens for another ioff (pred = x - e) */
static void retoken(lsx_view *v, uint16_t ioff)
{
    v->ioff = ioff;
    for (uint64_t i = 0; i < g_N; i++) {
        uint16_t pred = (uint16_t)((int32_t)g_u[i] - g_res[i]);
        g_itok[i] = (uint8_t)intensity_token(v, pred);
    }
}

static size_t exact(const lsx_view *v)
{
    atomic_store(&g_j.failed, 0);
    g_j.seg_cap = 4 + 4 * ((size_t)1 << v->seg_log2);
    if (g_j.seg_cap > 4 + 4 * g_N) g_j.seg_cap = 4 + 4 * g_N;
    size_t len = code_residuals(&g_j, v, g_res, g_act, g_itok, g_ctx, g_snap, 1);
    if (len == 0) abort();
    return len;
}

/* The encoder's three (four) context candidates of try_residuals; *best
 * the winner.  Returns its length. */
static size_t std_cands(const lsx_view *v0, lsx_view *best, int *which)
{
    lsx_view v = *v0, full = v, wide = v, activity = v;
    v.nctx = v.nib = 1;
    full.nctx = activity.nctx = LSX_NCTX;
    wide.nctx = LSX_NCTX_WIDE;
    activity.nib = 1;
    ctx_default_thresholds(full.thr, full.nctx);
    ctx_default_thresholds(wide.thr, wide.nctx);
    ctx_default_thresholds(activity.thr, activity.nctx);
    choose_intensity_classes(&full, g_itok, g_N);
    wide.nib = full.nib;
    memcpy(wide.ibnd, full.ibnd, sizeof wide.ibnd);
    const lsx_view *cand[4] = {&full, &wide, &activity, &v};
    int nc = g_N < (1u << 16) ? 4 : 3;
    size_t bl = 0;
    for (int k = 0; k < nc; k++) {
        size_t len = exact(cand[k]);
        if (bl == 0 || len < bl) {
            bl = len;
            if (best) *best = *cand[k];
            if (which) *which = k;
        }
    }
    return bl;
}

static size_t one_cand(const lsx_view *v0, int k)
{
    lsx_view v = *v0, full = v, wide = v, activity = v;
    v.nctx = v.nib = 1;
    full.nctx = activity.nctx = LSX_NCTX;
    wide.nctx = LSX_NCTX_WIDE;
    activity.nib = 1;
    ctx_default_thresholds(full.thr, full.nctx);
    ctx_default_thresholds(wide.thr, wide.nctx);
    ctx_default_thresholds(activity.thr, activity.nctx);
    choose_intensity_classes(&full, g_itok, g_N);
    wide.nib = full.nib;
    memcpy(wide.ibnd, full.ibnd, sizeof wide.ibnd);
    const lsx_view *cand[4] = {&full, &wide, &activity, &v};
    return exact(cand[k]);
}

/* ---- context search: static entropy DP over activity bins and intensity tokens ---- */

#define NB 96 /* activity bins (quantiles of act16) */
static uint32_t g_edge[NB + 1]; /* bin b: act16 in [edge[b], edge[b+1]) ; edge[0]=0 */
static int g_nbin;
static uint8_t *g_bin;
static uint32_t g_h[NB][CTX_TOKENS][CTX_TOKENS]; /* [bin][itok][tok] */

static int g_grid; /* 1: bins on a fixed 1/8-octave grid instead of quantiles */
static void make_bins(void)
{
    if (g_grid) {
        g_nbin = 0;
        g_edge[0] = 0;
        for (int q = 1; q < NB; q++) {
            uint32_t e = (uint32_t)ceil(128.0 * (exp2(q * 0.125) - 1.0));
            if (e > g_edge[g_nbin]) g_edge[++g_nbin] = e;
        }
        g_nbin++;
        g_edge[g_nbin] = UINT32_MAX;
        memset(g_h, 0, sizeof g_h);
        for (uint64_t i = 0; i < g_N; i++) {
            int b = ctx_of(g_act[i], g_edge + 1, g_nbin);
            g_bin[i] = (uint8_t)b;
            g_h[b][g_itok[i]][g_tok[i]]++;
        }
        return;
    }
    /* quantile edges of act16 (distinct) */
    uint32_t *s = malloc(g_N * sizeof *s);
    memcpy(s, g_act, g_N * sizeof *s);
    /* counting-free: sort */
    int cmp(const void *a, const void *b);
    qsort(s, g_N, sizeof *s, cmp);
    g_nbin = 0;
    g_edge[0] = 0;
    for (int b = 1; b < NB; b++) {
        uint32_t e = s[(uint64_t)g_N * b / NB];
        if (e > g_edge[g_nbin]) g_edge[++g_nbin] = e;
    }
    g_nbin++;
    g_edge[g_nbin] = UINT32_MAX;
    free(s);
    memset(g_h, 0, sizeof g_h);
    for (uint64_t i = 0; i < g_N; i++) {
        int lo = 0, hi = g_nbin; /* edge[lo] <= a < edge[hi] */
        uint32_t a = g_act[i];
        while (hi - lo > 1) {
            int mid = (lo + hi) / 2;
            if (g_edge[mid] <= a) lo = mid;
            else hi = mid;
        }
        g_bin[i] = (uint8_t)lo;
        g_h[lo][g_itok[i]][g_tok[i]]++;
    }
}
int cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* n H(hist) in bits, plus a learning penalty per used token */
static double ent(const double *h, double pen)
{
    double n = 0, s = 0;
    int used = 0;
    for (int t = 0; t < CTX_TOKENS; t++)
        if (h[t] > 0) {
            n += h[t];
            s += h[t] * log2(h[t]);
            used++;
        }
    return n > 0 ? n * log2(n) - s + pen * used : 0;
}

/* intensity class of every itok for bounds ib[0..nib-2] */
static int iclass_of(const uint8_t *ib, int nib, int itok)
{
    int c = 0;
    while (c < nib - 1 && itok >= ib[c]) c++;
    return c;
}

static double g_pen = 8.0; /* bits of learning cost per used token of a context */

/* optimal activity partition (nctx groups of bins) for given intensity
 * classes; thr out.  Returns static bits. */
static double dp_activity(int nctx, const uint8_t *ib, int nib, uint32_t *thr)
{
    int B = g_nbin;
    /* prefix[b][c][t] */
    double(*pre)[CTX_MAX_IB][CTX_TOKENS] = calloc((size_t)(B + 1), sizeof *pre);
    for (int b = 0; b < B; b++) {
        memcpy(pre[b + 1], pre[b], sizeof pre[b]);
        for (int it = 0; it < CTX_TOKENS; it++) {
            int c = iclass_of(ib, nib, it);
            for (int t = 0; t < CTX_TOKENS; t++) pre[b + 1][c][t] += g_h[b][it][t];
        }
    }
    double *cost = malloc(sizeof(double) * (B + 1) * (B + 1));
    for (int a = 0; a < B; a++)
        for (int b = a + 1; b <= B; b++) {
            double s = 0, h[CTX_TOKENS];
            for (int c = 0; c < nib; c++) {
                for (int t = 0; t < CTX_TOKENS; t++) h[t] = pre[b][c][t] - pre[a][c][t];
                s += ent(h, g_pen);
            }
            cost[a * (B + 1) + b] = s;
        }
    if (nctx > B) nctx = B;
    double *D = malloc(sizeof(double) * (nctx + 1) * (B + 1));
    int *arg = malloc(sizeof(int) * (nctx + 1) * (B + 1));
    for (int b = 0; b <= B; b++) D[b] = b == 0 ? 0 : 1e300;
    for (int k = 1; k <= nctx; k++)
        for (int b = 0; b <= B; b++) {
            double bestv = 1e300;
            int ba = -1;
            for (int a = k - 1; a < b; a++) {
                double v = D[(k - 1) * (B + 1) + a] + cost[a * (B + 1) + b];
                if (v < bestv) bestv = v, ba = a;
            }
            D[k * (B + 1) + b] = bestv;
            arg[k * (B + 1) + b] = ba;
        }
    double r = D[nctx * (B + 1) + B];
    int b = B;
    for (int k = nctx; k >= 1; k--) {
        int a = arg[k * (B + 1) + b];
        if (k > 1) thr[k - 2] = g_edge[a];
        b = a;
    }
    free(pre);
    free(cost);
    free(D);
    free(arg);
    return r;
}

/* optimal intensity bounds (nib classes of itok) for given activity thresholds */
static double dp_intensity(int nctx, const uint32_t *thr, int nib, uint8_t *ib)
{
    /* activity group of every bin */
    int grp[NB];
    for (int b = 0; b < g_nbin; b++) grp[b] = ctx_of(g_edge[b], thr, nctx);
    int T = CTX_TOKENS;
    double(*pre)[CTX_MAX][CTX_TOKENS] = calloc((size_t)(T + 1), sizeof *pre);
    for (int it = 0; it < T; it++) {
        memcpy(pre[it + 1], pre[it], sizeof pre[it]);
        for (int b = 0; b < g_nbin; b++)
            for (int t = 0; t < T; t++) pre[it + 1][grp[b]][t] += g_h[b][it][t];
    }
    double *cost = malloc(sizeof(double) * (T + 1) * (T + 1));
    for (int a = 0; a < T; a++)
        for (int b = a + 1; b <= T; b++) {
            double s = 0, h[CTX_TOKENS];
            for (int c = 0; c < nctx; c++) {
                for (int t = 0; t < T; t++) h[t] = pre[b][c][t] - pre[a][c][t];
                s += ent(h, g_pen);
            }
            cost[a * (T + 1) + b] = s;
        }
    double D[CTX_MAX_IB + 1][CTX_TOKENS + 1];
    int arg[CTX_MAX_IB + 1][CTX_TOKENS + 1];
    for (int b = 0; b <= T; b++) D[0][b] = b == 0 ? 0 : 1e300;
    for (int k = 1; k <= nib; k++)
        for (int b = 0; b <= T; b++) {
            D[k][b] = 1e300;
            arg[k][b] = -1;
            for (int a = k - 1; a < b; a++) {
                double v = D[k - 1][a] + cost[a * (T + 1) + b];
                if (v < D[k][b]) D[k][b] = v, arg[k][b] = a;
            }
        }
    int b = T;
    for (int k = nib; k >= 1; k--) {
        int a = arg[k][b];
        if (k > 1) ib[k - 2] = (uint8_t)a;
        b = a;
    }
    free(pre);
    free(cost);
    return D[nib][T];
}

/* bounds are bounds on tokens: a class of empty tokens at the top is harmless;
 * drop duplicate / zero bounds (a bound 0 makes class 0 empty) */
static void fix_bounds(lsx_view *v)
{
    int n = 0;
    uint8_t out[CTX_MAX_IB];
    for (int i = 0; i < v->nib - 1; i++)
        if (v->ibnd[i] > 0 && (n == 0 || v->ibnd[i] > out[n - 1])) out[n++] = v->ibnd[i];
    memset(v->ibnd, 0, sizeof v->ibnd);
    memcpy(v->ibnd, out, n);
    v->nib = n + 1;
}
static void fix_thr(lsx_view *v)
{
    int n = 0;
    uint32_t out[CTX_MAX];
    for (int i = 0; i < v->nctx - 1; i++)
        if (v->thr[i] > 0 && (n == 0 || v->thr[i] > out[n - 1])) out[n++] = v->thr[i];
    memcpy(v->thr, out, n * sizeof *out);
    v->nctx = n + 1;
}

/* alternate activity / intensity DP, nctx x nib contexts; exact length */
static size_t dp_joint(const lsx_view *v0, int nctx, int nib, int iters, lsx_view *out)
{
    lsx_view v = *v0;
    v.nctx = nctx;
    v.nib = nib;
    /* start: equal-population classes */
    lsx_view tmp = v;
    choose_intensity_classes(&tmp, g_itok, g_N);
    memset(v.ibnd, 0, sizeof v.ibnd);
    if (nib > 1) {
        memcpy(v.ibnd, tmp.ibnd, sizeof v.ibnd);
        v.nib = tmp.nib;
    }
    for (int it = 0; it < iters; it++) {
        dp_activity(nctx, v.ibnd, v.nib, v.thr);
        v.nctx = nctx;
        fix_thr(&v);
        if (nib > 1) {
            v.nib = nib;
            dp_intensity(v.nctx, v.thr, nib, v.ibnd);
            fix_bounds(&v);
        }
    }
    if (out) *out = v;
    return exact(&v);
}

/* equal-population activity thresholds */
static void quantile_thr(lsx_view *v, int nctx)
{
    uint32_t *s = malloc(g_N * sizeof *s);
    memcpy(s, g_act, g_N * sizeof *s);
    qsort(s, g_N, sizeof *s, cmp);
    v->nctx = nctx;
    for (int q = 1; q < nctx; q++) v->thr[q - 1] = s[(uint64_t)g_N * q / nctx];
    free(s);
    fix_thr(v);
}

static uint16_t ioff_permille(double pm)
{
    uint32_t *hist = calloc(65536, sizeof *hist);
    for (uint64_t i = 0; i < g_N; i++) hist[g_u[i]]++;
    uint64_t want = (uint64_t)(g_N * pm / 1000), acc = 0;
    uint32_t v = 0;
    for (; v < 65535; v++) {
        acc += hist[v];
        if (acc > want) break;
    }
    free(hist);
    return (uint16_t)v;
}


/* The adaptive code length (bits of the tokens; raw bits and signs do not
 * depend on the contexts) with thresholds at bin edges: amap[bin], imap[itok]. */
static double adaptive_bits(const lsx_view *v)
{
    static ctx_model cm;
    uint8_t amap[NB], imap[CTX_TOKENS];
    for (int b = 0; b < g_nbin; b++) amap[b] = (uint8_t)ctx_of(g_edge[b], v->thr, v->nctx);
    for (int t = 0; t < CTX_TOKENS; t++) imap[t] = (uint8_t)intensity_class(v, t);
    ctx_model_init(&cm, v->nctx * v->nib, v->nib, v->prior);
    double b = 0;
    const int nib = v->nib;
    for (uint64_t i = 0; i < g_N; i++) {
        if (ctx_refresh_due(i)) ctx_model_refresh(&cm);
        int c = amap[g_bin[i]] * nib + imap[g_itok[i]], t = g_tok[i];
        b += g_lg[cm.freq[c][t]];
        cm.count[c][t]++;
    }
    return b;
}

/* coordinate descent on the thresholds (bin edges) and bounds by the adaptive cost */
static double descend(lsx_view *v, int passes)
{
    double cur = adaptive_bits(v);
    for (int ps = 0; ps < passes; ps++) {
        int moved = 0;
        for (int i = 0; i < v->nctx - 1; i++) {
            /* bin index of thr[i] */
            int bi = 0;
            while (bi < g_nbin && g_edge[bi] < v->thr[i]) bi++;
            int lo = i > 0 ? 0 : 1, hi = g_nbin - 1;
            for (int b = 0; b < g_nbin; b++) {
                if (i > 0 && g_edge[b] <= v->thr[i - 1]) lo = b + 1;
                if (i < v->nctx - 2 && g_edge[b] >= v->thr[i + 1] && b - 1 < hi) { hi = b - 1; break; }
            }
            uint32_t keep = v->thr[i];
            for (int b = lo; b <= hi; b++) {
                if (b == bi || b == 0) continue;
                if (abs(b - bi) > 6) continue;
                v->thr[i] = g_edge[b];
                double c = adaptive_bits(v);
                if (c < cur - 1) cur = c, keep = v->thr[i], moved = 1;
            }
            v->thr[i] = keep;
        }
        for (int i = 0; i < v->nib - 1; i++) {
            uint8_t keep = v->ibnd[i];
            int lo = i > 0 ? v->ibnd[i - 1] + 1 : 1, hi = i < v->nib - 2 ? v->ibnd[i + 1] - 1 : CTX_TOKENS - 1;
            for (int t = lo; t <= hi; t++) {
                if (t == keep || abs(t - (int)keep) > 4) continue;
                v->ibnd[i] = (uint8_t)t;
                double c = adaptive_bits(v);
                if (c < cur - 1) cur = c, keep = (uint8_t)t, moved = 1;
            }
            v->ibnd[i] = keep;
        }
        if (!moved) break;
    }
    return cur;
}

static void verify(const lsx_view *v, const char *what)
{
    size_t len = exact(v);
    uint8_t *buf = malloc(len);
    write_stream(buf, v, &g_j);
    uint16_t *back = malloc(g_N * sizeof *back);
    aurp_error err;
    memset(&err, 0, sizeof err);
    aurp_status st = lsx_image_decode(buf, len, g_W, g_H, 1, back, &err);
    int ok = st == AURP_OK && memcmp(back, g_u, g_N * sizeof *back) == 0;
    printf("%s verify %s %s %zu\n", g_name, what, ok ? "OK" : "FAIL", len);
    fflush(stdout);
    free(buf);
    free(back);
}

#define P(lever, choice, len) \
    do { printf("%s %s %s %zu\n", g_name, lever, choice, (size_t)(len)); fflush(stdout); } while (0)

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    int rows = 0, ctxlev = 1, lslev = 1, fixed = 0, fx_set = 0, fx_f = 2, fx_K = 6, fx_M = 9, fx_r = 12, quick = 0;
    for (int i = 2; i < argc; i++) {
        if (!strncmp(argv[i], "rows=", 5)) rows = atoi(argv[i] + 5);
        if (!strncmp(argv[i], "ctx=", 4)) ctxlev = atoi(argv[i] + 4);
        if (!strncmp(argv[i], "ls=", 3)) lslev = atoi(argv[i] + 3);
        if (!strncmp(argv[i], "grid=", 5)) g_grid = atoi(argv[i] + 5);
        if (!strncmp(argv[i], "quick=", 6)) quick = atoi(argv[i] + 6);
        if (!strncmp(argv[i], "P=", 2) &&
            sscanf(argv[i] + 2, "%d:%d:%d:%d:%d", &fx_set, &fx_f, &fx_K, &fx_M, &fx_r) == 5) fixed = 1;
    }
    uint32_t W, H;
    uint16_t *u = lab_load_fits(argv[1], &W, &H);
    if (!u) return 1;
    const char *base = strrchr(argv[1], '/');
    char name[256];
    snprintf(name, sizeof name, "%s", base ? base + 1 : argv[1]);
    char *dot = strstr(name, ".fits");
    if (dot) *dot = 0;
    g_name = name;
    g_u = u;
    g_W = W;
    g_H = H;
    if (rows < 0) rows = (int)(H / (uint32_t)-rows) < 64 ? 64 : (int)(H / (uint32_t)-rows);
    if (rows > 0 && (uint32_t)rows < H) {
        g_u = u + (size_t)W * ((H - rows) / 2);
        g_H = rows;
    }
    g_N = (uint64_t)g_W * g_H;
    for (int f = 1; f <= (1 << CTX_PROB_BITS); f++) g_lg[f] = CTX_PROB_BITS - log2(f);
    g_res = malloc(g_N * 4);
    g_act = malloc(g_N * 4);
    g_itok = malloc(g_N);
    g_ctx = malloc(g_N);
    g_tok = malloc(g_N);
    g_bin = malloc(g_N);
    uint32_t nseg_max = (uint32_t)((g_N + (1u << LSX_SEG_LOG2) - 1) >> LSX_SEG_LOG2);
    g_snap = malloc((size_t)nseg_max * sizeof *g_snap);
    g_j.seg_buf = malloc((size_t)nseg_max * (4 + 4 * ((size_t)1 << LSX_SEG_LOG2)) + 4 * g_N + 64);
    g_j.seg_len = malloc((size_t)nseg_max * sizeof *g_j.seg_len);
    g_j.u = g_u;
    g_j.W = g_W;
    g_j.H = g_H;
    atomic_init(&g_j.failed, 0);
    printf("%s size %ux%u 0\n", name, g_W, g_H);

    const int K0 = 6, M0 = 9;
    uint16_t ioff0 = choose_ioff(g_u, g_N);
    double t0 = now();
    int bset = 0, bf = 2, bK = K0, bM = M0, bR = LSX_RIDGE;
    if (fixed) {
        bset = fx_set, bf = fx_f, bK = fx_K, bM = fx_M, bR = fx_r;
        goto combo;
    }
    /* ---- baseline: lsx_image_encode's candidates ---- */
    lsx_params p2 = {K0, M0, LSX_FORGET, LSX_RIDGE};
    double *pl[9] = {0}; /* by f */
    pl[2] = ls_pred(p2);
    double tls = now() - t0;
    lsx_view v = base_view(p2, 0, ioff0), win;
    int which;
    double t1 = now();
    residuals(&v, pl[2]);
    double tres = now() - t1;
    t1 = now();
    size_t b0 = std_cands(&v, &win, &which);
    double tcode = (now() - t1) / 3;
    size_t best = b0;
    lsx_view bestv = win;
    v.set = 1;
    residuals(&v, pl[2]);
    size_t b1 = one_cand(&v, which);
    int set1won = b1 < best;
    if (set1won) best = b1;
    if (set1won) {
        lsx_params p1 = {K0, M0, LSX_ROW_FORGET, LSX_RIDGE};
        pl[1] = ls_pred(p1);
        lsx_view v1 = base_view(p1, 1, ioff0), w1;
        residuals(&v1, pl[1]);
        size_t b2 = std_cands(&v1, &w1, NULL);
        if (b2 < best) best = b2, bestv = w1;
        else bestv = win, bestv.set = 1;
    }
    printf("%s time ls=%.3f res=%.3f code=%.3f 0\n", name, tls, tres, tcode);
    P("baseline", "enc", best);

    /* ---- lever 1: forgetting per set ---- */
    size_t Lf[2][9] = {{0}};
    size_t bl = 0;
    for (int f = 1; f <= 4; f++) {
        if (!pl[f]) pl[f] = ls_pred((lsx_params){K0, M0, f, LSX_RIDGE});
        for (int s = 0; s < 2; s++) {
            lsx_view vv = base_view((lsx_params){K0, M0, f, LSX_RIDGE}, s, ioff0);
            residuals(&vv, pl[f]);
            Lf[s][f] = std_cands(&vv, NULL, NULL);
            char c[32];
            snprintf(c, sizeof c, "s%d_f%d", s, f);
            P("forget", c, Lf[s][f]);
            if (bl == 0 || Lf[s][f] < bl) bl = Lf[s][f], bset = s, bf = f;
        }
    }
    for (int f = 1; f <= 8; f++) free(pl[f]);
    /* ---- lever 2: M, K, r around the best (set, f) ---- */
    if (lslev) {
        size_t bestM = bl, bestK = bl, bestR = bl;
        int Ms[] = {5, 7, 11, 13}, Ks[] = {4, 8, 10, 12}, Rs[] = {10, 14};
        for (int i = 0; i < 4 + 4 + 2; i++) {
            lsx_params p = {K0, M0, bf, LSX_RIDGE};
            const char *lev;
            if (i < 4) p.M = Ms[i], lev = "M";
            else if (i < 8) p.K = Ks[i - 4], lev = "K";
            else p.ridge_shift = Rs[i - 8], lev = "R";
            double *q = ls_pred(p);
            lsx_view vv = base_view(p, bset, ioff0);
            residuals(&vv, q);
            free(q);
            size_t L = std_cands(&vv, NULL, NULL);
            char c[32];
            snprintf(c, sizeof c, "%d", i < 4 ? p.M : i < 8 ? p.K : p.ridge_shift);
            P(lev, c, L);
            if (i < 4 && L < bestM) bestM = L, bM = p.M;
            if (i >= 4 && i < 8 && L < bestK) bestK = L, bK = p.K;
            if (i >= 8 && L < bestR) bestR = L, bR = p.ridge_shift;
        }
    }
    /* combination of the best of each */
combo:;
    lsx_params pc = {bK, bM, bf, bR};
    double *q = ls_pred(pc);
    lsx_view vc = base_view(pc, bset, ioff0), vw;
    residuals(&vc, q);
    free(q);
    size_t Lc = std_cands(&vc, &vw, NULL);
    {
        char c[64];
        snprintf(c, sizeof c, "s%d_f%d_K%d_M%d_r%d", bset, bf, bK, bM, bR);
        P("lscombo", c, Lc);
    }
    if (rows) return 0;
    verify(&vw, "lscombo");
    if (!ctxlev) return 0;

    /* ---- levers 3-5 on the residuals of the best LS combination ---- */
    size_t ref = Lc;
    P("ctx", "std", ref);
    {
        lsx_view t = vc;
        for (int k = 0; k < 3; k++) {
            t = vc;
            if (k == 2) t.nib = 1;
            else choose_intensity_classes(&t, g_itok, g_N);
            int nctx = k == 1 ? 16 : 12;
            quantile_thr(&t, nctx);
            char c[32];
            snprintf(c, sizeof c, "quant%dx%d", nctx, t.nib);
            P("ctx", c, exact(&t));
        }
    }
    make_bins();
    {
        /* the cheap rule: the standard candidates, one DP candidate (8 x 4,
         * static entropy, no learning penalty), one segment per 2^20 pixels */
        lsx_view d;
        g_pen = 0;
        double tq = now();
        size_t L = dp_joint(&vc, 8, 4, 3, &d);
        printf("%s dptime %.3f 0\n", g_name, now() - tq);
        lsx_view c = L < ref ? d : vw;
        c.seg_log2 = 20;
        c.nseg = (uint32_t)((g_N + (1u << 20) - 1) >> 20);
        P("cheap", "std_or_dp8x4_seg20", exact(&c));
        verify(&c, "cheap");
        c.seg_log2 = 16;
        c.nseg = (uint32_t)((g_N + (1u << 16) - 1) >> 16);
        P("cheap", "std_or_dp8x4_seg16", exact(&c));
        if (quick) return 0;
    }
    size_t bestctx = ref;
    lsx_view bestcv = vw;
    int combos[][2] = {{12, 4}, {16, 4}, {12, 1}, {16, 1}, {8, 4}, {21, 3}, {32, 2}, {24, 1}, {32, 1}, {10, 4}, {16, 3}, {16, 2}};
    double pens[] = {0, 8, 32};
    for (int pi = 0; pi < 3; pi++) {
        g_pen = pens[pi];
        for (size_t c = 0; c < sizeof combos / sizeof combos[0]; c++) {
            lsx_view o;
            size_t L = dp_joint(&vc, combos[c][0], combos[c][1], combos[c][1] > 1 ? 3 : 1, &o);
            char s[48];
            snprintf(s, sizeof s, "dp%dx%d_pen%g", combos[c][0], combos[c][1], pens[pi]);
            P("ctx", s, L);
            if (L < bestctx) bestctx = L, bestcv = o;
        }
    }
    /* intensity bounds alone: DP with the default thresholds */
    g_pen = 8;
    for (int k = 0; k < 2; k++) {
        lsx_view t = vc;
        t.nctx = k ? 16 : 12;
        ctx_default_thresholds(t.thr, t.nctx);
        t.nib = 4;
        dp_intensity(t.nctx, t.thr, 4, t.ibnd);
        fix_bounds(&t);
        char s[48];
        snprintf(s, sizeof s, "dpI_default%dx4", t.nctx);
        P("ctx", s, exact(&t));
    }
    P("ctx", "best", bestctx);
    {
        lsx_view t = bestcv;
        double a0 = adaptive_bits(&t);
        double t1d = now();
        double a1 = descend(&t, 3);
        printf("%s cdtime %.2f %zu\n", g_name, now() - t1d, (size_t)0);
        size_t L = exact(&t);
        printf("%s adaptive bits %.0f -> %.0f (bytes %.0f) 0\n", g_name, a0, a1, (a0 - a1) / 8);
        P("ctx", "cd_from_best", L);
        if (L < bestctx) bestctx = L, bestcv = t;
        lsx_view d = vc;
        g_pen = 8;
        dp_joint(&vc, 12, 4, 3, &d);
        descend(&d, 3);
        L = exact(&d);
        P("ctx", "cd_from_dp12x4", L);
        if (L < bestctx) bestctx = L, bestcv = d;
        d = vw;
        if (d.nctx > 1) {
            descend(&d, 3);
            L = exact(&d);
            P("ctx", "cd_from_std", L);
            if (L < bestctx) bestctx = L, bestcv = d;
        }
    }
    P("ctx", "best2", bestctx);
    verify(&bestcv, "ctxbest");
    /* ---- ioff quantile (default contexts, and with the best DP) ---- */
    double pms[] = {0, 0.1, 5, 20, 100};
    for (int k = 0; k < 5; k++) {
        lsx_view t = vc;
        retoken(&t, ioff_permille(pms[k]));
        char s[48];
        snprintf(s, sizeof s, "pm%g_std", pms[k]);
        P("ioff", s, std_cands(&t, NULL, NULL));
    }
    retoken(&vc, ioff0);
    /* ---- segment size (header byte 14) ---- */
    for (int sl = 16; sl <= 24; sl += 4) {
        lsx_view t = bestcv;
        t.seg_log2 = sl;
        t.nseg = (uint32_t)((g_N + (1u << sl) - 1) >> sl);
        char s[16];
        snprintf(s, sizeof s, "seg%d", sl);
        P("seg", s, exact(&t));
    }
    printf("%s time total=%.1f 0\n", name, now() - t0);
    return 0;
}

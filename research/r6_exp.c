/* Round 6 harness: predictor mechanisms for sharp / tilted / curved
 * structure (arc, echelle, echelle-arc), measured as the exact adaptive code
 * length with the real context coder (as research/mrp_exp.c, from which the
 * baseline pass, the code length and the blend tracking are taken).
 *
 *   r6_exp FRAME.fits SET F [spec=kind:seed:level] [key=value ...]
 *
 * SET, F: the predictor set and LS forgetting the real encoder chose.
 * spec: regenerate the frame with sim_frame_model (checked equal to the
 * FITS pixels) to get each pixel's noise model: prints the oracle (the
 * true mean as the predictor) and where the gap to the noise floor lies.
 * Every variant prints: name, bytes, change against the harness baseline.
 * Variants and options: see main().  LS cache: R6_CACHE (default
 * /tmp/r6/cache).
 * Build (sim sources for the model; a snapshot of sim/ works as well):
 *   cc -O2 -ffp-contract=off -Icore -Ithird_party/xxhash -Isim -o /tmp/r6/rx \
 *      research/r6_exp.c core/(*).c sim/sim_frame.c sim/sim_kinds.c -lm -lpthread
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
#include "sim.h"

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
static const char *o_cache = "/tmp/r6/cache";
static uint32_t W, H;
static size_t N;
static const uint16_t *U;
static int SET, NP;
static double *MU, *VAR; /* noise model (sim frames only) */

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
    mkdir(o_cache, 0755);
    f = fopen(path, "wb");
    if (f) {
        fwrite(p, sizeof *p, N, f);
        fclose(f);
    }
    return p;
}

/* ---- exact adaptive code length with the real context model ---- */
static uint16_t g_ioff;

static double code_len_view(const lsx_view *v, const int32_t *res, const uint32_t *act, const uint8_t *itok,
                            float *pxbits)
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
        double b = CTX_PROB_BITS - log2((double)cm.freq[c][t]) + nraw + (a != 0);
        if (pxbits) pxbits[i] = (float)b;
        bits += b;
        ctx_model_count(&cm, c, t);
    }
    uint32_t nseg = (uint32_t)((N + (1u << LSX_SEG_LOG2) - 1) >> LSX_SEG_LOG2);
    return bits / 8.0 + 4.0 * nseg + (double)lsx_header_len(v->nctx, nseg, 1);
}

/* the encoder's candidates: 12 x I, 16 x I, 12 x 1; the smallest */
static double code_len(const int32_t *res, const uint32_t *act, const uint8_t *itok, float *pxbits)
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
    full.nib = lsx_intensity_bounds(h, N, LSX_NIB, full.ibnd);
    wide.nib = full.nib;
    memcpy(wide.ibnd, full.ibnd, sizeof wide.ibnd);
    const lsx_view *cand[3] = {&full, &wide, &activity};
    double best = 1e300;
    int bk = 0;
    for (int k = 0; k < 3; k++) {
        if (k == 2 && full.nib == 1) continue;
        double b = code_len_view(cand[k], res, act, itok, NULL);
        if (b < best) best = b, bk = k;
    }
    if (pxbits) code_len_view(cand[bk], res, act, itok, pxbits);
    return best;
}

/* ---- error-level tracking of blend members (as lsx_record / lsx_end_row) ---- */
#define MAXM 10
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
static int g_set_blend = -1; /* error-level rule: -1 = SET */
static int32_t tr_level(const tracker *t, int k, uint32_t m, uint32_t n)
{
    int set = g_set_blend < 0 ? SET : g_set_blend;
    const int32_t *cur = t->err[k][m & 1], *up = m > 0 ? t->err[k][(m + 1) & 1] : NULL;
    return lsx_error_level(cur, up, n, W, set, (set ? 0 : LSX_COLERR_W) * t->colerr[k][n]);
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
    int set = g_set_blend < 0 ? SET : g_set_blend;
    if (set) return;
    for (int k = 0; k < t->np; k++) {
        const int32_t *e = t->err[k][m & 1];
        int32_t *c = t->colerr[k];
        for (uint32_t n = 0; n < W; n++) c[n] = m == 0 ? e[n] : lsx_mean_step(c[n], e[n], LSX_COLERR_SHIFT);
    }
}

/* ---- the baseline pass: lsmix, storing its members' predictions ---- */
static double *MEM[LSX_NPRED]; /* [N] each: LS, CM, AF (, RV, AL) */
static int32_t *CMA, *CMB;     /* column means before row m (Q4) */

static void lsmix_pass(const double *p_ls, int32_t *res, uint32_t *act, uint8_t *itok)
{
    lsx_state s;
    lsx_state_init(&s, W, SET, 0);
    NP = s.np;
    for (int k = 0; k < NP; k++) MEM[k] = malloc(N * sizeof(double));
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
            for (int k = 0; k < NP; k++) MEM[k][(size_t)m * W + n] = pp[k];
            r0[n] = (int32_t)cur[n] - pred;
            act[(size_t)m * W + n] = lsx_activity16(lsx_residual_activity(r0, r1, r2, W, n), emin);
            itok[(size_t)m * W + n] = (uint8_t)lsx_intensity_token(pred, g_ioff);
            lsx_record(&s, m, n, cur[n], pp, z);
        }
        lsx_end_row(&s, m, cur);
    }
    lsx_state_free(&s);
}

/* Blend of nm member arrays (error-weighted, lsmix's rule); out: optional
 * blended prediction.  Returns the code length. */
static double blend_members(int nm, double *const *mem, int32_t *res, uint32_t *act, uint8_t *itok,
                            float *pxbits, uint16_t *out)
{
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
            for (int k = 0; k < nm; k++) p[k] = mem[k][i];
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
            if (out) out[i] = pred;
            r0[n] = (int32_t)cur[n] - pred;
            act[i] = lsx_activity16(lsx_residual_activity(r0, r1, r2, W, n), emin);
            itok[i] = (uint8_t)lsx_intensity_token(pred, g_ioff);
            tr_record(&t, m, n, cur[n], p);
        }
        tr_end_row(&t, m);
    }
    tr_free(&t);
    return code_len(res, act, itok, pxbits);
}

static double g_base;
static void report(const char *name, double bytes)
{
    printf("%-22s %10.0f  %+7.3f%%\n", name, bytes, 100.0 * (bytes - g_base) / g_base);
    fflush(stdout);
}

/* ---- candidate predictors ---- */

static inline double px(uint32_t m, int64_t n)
{
    if (n < 0) n = 0;
    if (n >= (int64_t)W) n = W - 1;
    return U[(size_t)m * W + (size_t)n];
}

/* value of a row (double array of W) at real position x: cubic (Catmull-Rom) */
static inline double interp_row(const double *r, double x)
{
    double fl = floor(x), t = x - fl;
    int64_t i = (int64_t)fl;
    double v[4];
    for (int k = 0; k < 4; k++) {
        int64_t j = i - 1 + k;
        if (j < 0) j = 0;
        if (j >= (int64_t)W) j = W - 1;
        v[k] = r[j];
    }
    return v[1] + 0.5 * t * (v[2] - v[0] + t * (2 * v[0] - 5 * v[1] + 4 * v[2] - v[3] + t * (3 * (v[1] - v[2]) + v[3] - v[0])));
}
static inline double interp_lin(const double *r, double x)
{
    double fl = floor(x), t = x - fl;
    int64_t i = (int64_t)fl, j = i + 1;
    if (i < 0) i = 0;
    if (i >= (int64_t)W) i = W - 1;
    if (j < 0) j = 0;
    if (j >= (int64_t)W) j = W - 1;
    return r[i] + t * (r[j] - r[i]);
}

/* AF-like affine map of a source z along the row (decay 2^-sh per pixel,
 * ridge on the slope toward 1), exactly lsx_af_fit's arithmetic in double. */
typedef struct {
    double w, y, z, zz, zy;
} afsum;
static inline double af_pred(const afsum *a, double zc, double ridge)
{
    if (a->w <= 0) return zc;
    double my = a->y / a->w, mz = a->z / a->w;
    double vzz = a->zz / a->w - mz * mz, vzy = a->zy / a->w - mz * my;
    double slope = (vzy + ridge) / (vzz + ridge);
    return my + slope * (zc - mz);
}
static inline void af_add(afsum *a, double y, double z, double dec)
{
    a->w = a->w * dec + 1;
    a->y = a->y * dec + y;
    a->z = a->z * dec + z;
    a->zz = a->zz * dec + z * z;
    a->zy = a->zy * dec + z * y;
}

/* AF of an arbitrary source array src[N] (values in ADU): a row-fitted affine
 * map, as lsmix's AF (decay 1/4 per pixel, ridge 64 ADU^2). */
static double *af_of(const double *src, double decay, double ridge)
{
    double *P = malloc(N * sizeof *P);
    for (uint32_t m = 0; m < H; m++) {
        afsum a = {0};
        for (uint32_t n = 0; n < W; n++) {
            size_t i = (size_t)m * W + n;
            P[i] = m == 0 ? (n ? U[i - 1] : 0) : af_pred(&a, src[i], ridge);
            af_add(&a, U[i], src[i], decay);
        }
    }
    return P;
}

/* RV-like two-source ridge affine map along the row (decay per pixel, ridge
 * toward slopes 1/2, 1/2). */
static double *rv_of(const double *s0, const double *s1, double decay, double ridge)
{
    double *P = malloc(N * sizeof *P);
    for (uint32_t m = 0; m < H; m++) {
        double a[9] = {0};
        for (uint32_t n = 0; n < W; n++) {
            size_t i = (size_t)m * W + n;
            double z0 = s0[i], z1 = s1[i], y = U[i];
            if (m == 0 || a[0] <= 0) P[i] = m == 0 ? (n ? U[i - 1] : 0) : 0.5 * (z0 + z1);
            else {
                double w = a[0], my = a[1] / w, m0 = a[2] / w, m1 = a[3] / w;
                double c0 = a[4] / w - m0 * my + ridge * 0.5, c1 = a[5] / w - m1 * my + ridge * 0.5;
                double a00 = a[6] / w - m0 * m0 + ridge, a01 = a[7] / w - m0 * m1, a11 = a[8] / w - m1 * m1 + ridge;
                double det = a00 * a11 - a01 * a01;
                double b0 = (c0 * a11 - c1 * a01) / det, b1 = (c1 * a00 - c0 * a01) / det;
                P[i] = my + b0 * (z0 - m0) + b1 * (z1 - m1);
            }
            const double t[9] = {1, y, z0, z1, z0 * y, z1 * y, z0 * z0, z0 * z1, z1 * z1};
            for (int k = 0; k < 9; k++) a[k] = a[k] * decay + t[k];
        }
    }
    return P;
}

/* Shift-tracking column mean ("STCM").  Per column a sub-pixel shift per
 * row t[n] is estimated causally; the mean is an EMA along the estimated
 * line direction:  C_{m+1}(x) = (1-a) C_m(x - t) + a x_m(x - t)... i.e. after
 * row m the blended row is resampled at n - t[n] so that it is aligned to
 * row m+1.  t: a local LS of (x_m - C_m) against C_m' (gradient flow) with
 * affine nuisance, window +-R columns, forgetting over rows, ridge toward 0.
 * mode: 0 straight EMA (t = 0), 1 estimated t per column, 2 one t per row
 * segment of 64 columns.  Returns the means before each row (ADU) in out. */
static int o_stR = 8;
static double o_stF = 0.25, o_stRidge = 1.0, o_tmax = 1.0;
static double *T_EST; /* [N] the shift estimate used for row m */
static void stcm(double alpha, int mode, double *out)
{
    double *C = calloc(W, sizeof *C), *Cn = calloc(W, sizeof *Cn), *t = calloc(W, sizeof *t);
    double *gs = calloc((size_t)W * 6, sizeof *gs), *pre = calloc((size_t)(W + 1) * 6, sizeof *pre);
    double *row = malloc(W * sizeof *row), *d = malloc(W * sizeof *d);
    for (uint32_t m = 0; m < H; m++) {
        for (uint32_t n = 0; n < W; n++) {
            out[(size_t)m * W + n] = m == 0 ? U[n] : C[n];
            if (T_EST) T_EST[(size_t)m * W + n] = t[n];
        }
        for (uint32_t n = 0; n < W; n++) row[n] = U[(size_t)m * W + n];
        if (m == 0) {
            memcpy(C, row, W * sizeof *C);
            continue;
        }
        if (mode) {
            /* flow of row m against C (aligned to row m): x = a + b C + c C',
             * shift residual = -c/b; accumulate sums with forgetting */
            for (uint32_t n = 0; n < W; n++) {
                double g = 0.5 * (C[n + 1 < W ? n + 1 : n] - C[n ? n - 1 : 0]);
                double cc = C[n], y = row[n];
                double *s = gs + (size_t)n * 6;
                /* centred by a local mean to remove the affine part cheaply:
                 * regress y - C on g (unit slope assumed; the level handled by
                 * the window mean) */
                double r = y - cc;
                for (int k = 0; k < 6; k++) s[k] *= (1.0 - o_stF);
                s[0] += 1, s[1] += g, s[2] += r, s[3] += g * g, s[4] += g * r, s[5] += r * r;
            }
            for (uint32_t n = 0; n < W; n++)
                for (int k = 0; k < 6; k++) pre[(size_t)(n + 1) * 6 + k] = pre[(size_t)n * 6 + k] + gs[(size_t)n * 6 + k];
            for (uint32_t n = 0; n < W; n++) {
                int a0 = (int)n - o_stR, a1 = (int)n + o_stR;
                if (mode == 2) a0 = (int)(n / 64) * 64, a1 = a0 + 63;
                if (a0 < 0) a0 = 0;
                if (a1 > (int)W - 1) a1 = (int)W - 1;
                double S[6];
                for (int k = 0; k < 6; k++) S[k] = pre[(size_t)(a1 + 1) * 6 + k] - pre[(size_t)a0 * 6 + k];
                double w = S[0], mg = S[1] / w, mr = S[2] / w;
                double vgg = S[3] / w - mg * mg, vgr = S[4] / w - mg * mr;
                /* residual shift this row: r ~ -dt * g  (C(x - dt) = C - dt C') */
                double dt = -vgr / (vgg + o_stRidge);
                d[n] = dt;
            }
            for (uint32_t n = 0; n < W; n++) {
                /* the shift per row: t accumulates the residual (the EMA lags
                 * the moving pattern by (1-alpha)/alpha rows of shift) */
                double tn = t[n] + d[n] * alpha;
                if (tn > o_tmax) tn = o_tmax;
                if (tn < -o_tmax) tn = -o_tmax;
                t[n] = tn;
            }
        }
        /* blend, then move the blend by one row's shift */
        for (uint32_t n = 0; n < W; n++) Cn[n] = C[n] + alpha * (row[n] - C[n]);
        for (uint32_t n = 0; n < W; n++) C[n] = mode ? interp_row(Cn, (double)n - t[n]) : Cn[n];
        if (getenv("R6_DBG") && mode) {
            double cmax = 0, tmin = 1e9, tmax = -1e9, ta = 0;
            for (uint32_t n = 0; n < W; n++) {
                if (fabs(C[n]) > cmax) cmax = fabs(C[n]);
                if (t[n] < tmin) tmin = t[n];
                if (t[n] > tmax) tmax = t[n];
                ta += fabs(t[n]);
            }
            if (m % 32 == 0 || cmax > 1e6) fprintf(stderr, "m %u cmax %.1f t [%.3f %.3f] mean|t| %.3f\n", m, cmax, tmin, tmax, ta / W);
            if (cmax > 1e6) exit(1);
        }
    }
    free(C), free(Cn), free(t), free(gs), free(pre), free(row), free(d);
}

/* Tilt: per column the shift per row of the pattern, t[m][n] (used for row
 * m), from rows m-1 and m-2: fit x1 = a + b x2 + c x2' over columns n-R..n+R
 * (x2' the central difference), with the sums forgotten by 2^-tf per row;
 * t = -c / b, the ridge on c scaled by the noise (s2, a robust estimate of
 * the pixel noise variance from row differences) so that flat columns
 * keep t near 0. */
static int o_tR = 6;
static double o_tF = 0.25, o_tK = 4.0;
static double *tilt_est(void)
{
    double *T = calloc(N, sizeof *T);
    const int NS = 9; /* w, y, z, g, zz, zg, gg, zy, gy */
    double *S = calloc((size_t)W * NS, 8), *pre = calloc((size_t)(W + 1) * NS, 8);
    /* noise: median of |x[m][n] - x[m-1][n]| over row 1..8 -> sigma^2 = (med/0.674)^2 / 2 */
    double s2;
    {
        size_t cnt = 0;
        uint32_t *h = calloc(65536, 4);
        for (uint32_t m = 1; m < H && m < 9; m++)
            for (uint32_t n = 0; n < W; n++) h[abs((int)U[(size_t)m * W + n] - (int)U[(size_t)(m - 1) * W + n])]++, cnt++;
        size_t acc = 0;
        int med = 0;
        for (; med < 65535; med++) { acc += h[med]; if (2 * acc >= cnt) break; }
        s2 = (med + 0.5) / 0.674;
        s2 = s2 * s2 / 2;
        free(h);
    }
    for (uint32_t m = 2; m < H; m++) {
        const uint16_t *x1 = U + (size_t)(m - 1) * W, *x2 = x1 - W;
        for (uint32_t n = 0; n < W; n++) {
            double z = x2[n], g = 0.5 * ((double)x2[n + 1 < W ? n + 1 : n] - x2[n ? n - 1 : 0]), y = x1[n];
            double t[9] = {1, y, z, g, z * z, z * g, g * g, z * y, g * y};
            double *sv = S + (size_t)n * NS;
            for (int k = 0; k < NS; k++) sv[k] = sv[k] * (1 - o_tF) + t[k];
        }
        for (uint32_t n = 0; n < W; n++)
            for (int k = 0; k < NS; k++) pre[(size_t)(n + 1) * NS + k] = pre[(size_t)n * NS + k] + S[(size_t)n * NS + k];
        for (uint32_t n = 0; n < W; n++) {
            int a0 = (int)n - o_tR, a1 = (int)n + o_tR;
            if (a0 < 0) a0 = 0;
            if (a1 > (int)W - 1) a1 = (int)W - 1;
            double v[9];
            for (int k = 0; k < NS; k++) v[k] = pre[(size_t)(a1 + 1) * NS + k] - pre[(size_t)a0 * NS + k];
            double w = v[0], my = v[1] / w, mz = v[2] / w, mg = v[3] / w;
            double czz = v[4] / w - mz * mz, czg = v[5] / w - mz * mg, cgg = v[6] / w - mg * mg;
            double czy = v[7] / w - mz * my, cgy = v[8] / w - mg * my;
            /* ridge on c: noise / (samples * prior var of c ~ (0.3 b)^2) */
            double lam = o_tK * s2, lamb = s2;
            double a00 = czz + lamb / w, a01 = czg, a11 = cgg + lam;
            double det = a00 * a11 - a01 * a01;
            double b = (czy * a11 - cgy * a01) / det, c = (cgy * a00 - czy * a01) / det;
            double tt = b > 0.2 ? -c / b : 0;
            if (tt > 0.9) tt = 0.9;
            if (tt < -0.9) tt = -0.9;
            T[(size_t)m * W + n] = tt;
        }
    }
    free(S), free(pre);
    return T;
}

/* Members on the tilt: the rows above resampled along the line direction
 * (cubic), RV-fitted along the row (SRV); and an EMA along the line
 * direction (rate a), AF-fitted along the row (STA). */
static double *shifted_rows(const double *T, int k)
{
    double *P = malloc(N * sizeof *P), *row = malloc(W * 8);
    for (uint32_t m = 0; m < H; m++) {
        uint32_t q = m >= (uint32_t)k ? m - k : 0;
        for (uint32_t n = 0; n < W; n++) row[n] = U[(size_t)q * W + n];
        for (uint32_t n = 0; n < W; n++) P[(size_t)m * W + n] = interp_row(row, n - k * T[(size_t)m * W + n]);
    }
    free(row);
    return P;
}
static double *aligned_ema(const double *T, double alpha)
{
    double *P = malloc(N * sizeof *P), *C = calloc(W, 8), *Cn = calloc(W, 8);
    for (uint32_t m = 0; m < H; m++) {
        const uint16_t *x = U + (size_t)m * W;
        for (uint32_t n = 0; n < W; n++) P[(size_t)m * W + n] = m ? C[n] : x[n];
        double a = alpha > 1.0 / (m + 1) ? alpha : 1.0 / (m + 1);
        for (uint32_t n = 0; n < W; n++) Cn[n] = m ? C[n] + a * (x[n] - C[n]) : x[n];
        if (m + 1 < H)
            for (uint32_t n = 0; n < W; n++) C[n] = interp_row(Cn, n - T[(size_t)(m + 1) * W + n]);
    }
    free(C), free(Cn);
    return P;
}

/* Robust background ("BG"): a column mean that moves by at most k s[n] a
 * row (clipped EMA, rate a; s[n] a running mean absolute deviation), plus a
 * row offset fitted along the row from clipped residuals with decay d per
 * pixel; the offset starts each row from the previous row's. */
static int o_bgW = 1, o_bgWarm = 1, o_bgRej = 1, o_bgAll = 0, o_bgFix = 0;
static double o_bgK = 2.5, o_bgD = 1.0 / 32, o_bgA = 1.0 / 16;
/* GPU-parallel variants (section 2b of r6-predict.md):
 *   0 BG as in section 2 (column pass on x - C - off_prev; row offset starts
 *     from the previous row's mean offset: serial over the whole frame);
 *   2 V2: the column pass (clip, C update, rejection, S tracker) uses
 *     r = x - C only: column-parallel; the row start stays off_prev;
 *   3 V3: V2, and the row's start offset is the 1/(S^2+0.25)-weighted mean
 *     over row m-1 of clip(x - C, +-lim) (C, S as used for row m-1): a plain
 *     reduction, so every row's recurrence is independent: row-parallel;
 *   4 V3b: V2 with start offset 0;
 *   5 V3c: V3 with the within-row clip relative to the start offset o0
 *     instead of the current o: a linear recurrence (a scan). */
static double *bg_member_v(int V)
{
    double *P = malloc(N * sizeof *P), *C = calloc(W, 8), *S = calloc(W, 8);
    double off_prev = 0, start_next = 0;
    for (uint32_t m = 0; m < H; m++) {
        const uint16_t *x = U + (size_t)m * W;
        if (m == 0) {
            for (uint32_t n = 0; n < W; n++) {
                P[n] = n ? x[n - 1] : 0;
                C[n] = x[n];
                S[n] = 4;
            }
            continue;
        }
        double o0 = V == 0 || V == 2 ? off_prev : V == 4 ? 0 : start_next;
        double ow = 1e-6, os = o0 * 1e-6; /* weak start */
        double sum_off = 0, rw = 0, rs = 0;
        for (uint32_t n = 0; n < W; n++) {
            double o = os / ow;
            P[(size_t)m * W + n] = C[n] + o;
            double r = x[n] - C[n], lim = o_bgK * S[n] * 1.48;
            double ctr = V == 5 ? o0 : o;
            double rc = r - ctr;
            if (rc > lim) rc = lim;
            if (rc < -lim) rc = -lim;
            double wt = o_bgW ? 1.0 / (S[n] * S[n] + 0.25) : 1.0;
            ow = ow * (1 - o_bgD) + wt;
            os = os * (1 - o_bgD) + wt * (ctr + rc);
            sum_off += ctr + rc;
            /* the V3 start for row m+1: a reduction of row m */
            double r0 = r > lim ? lim : r < -lim ? -lim : r;
            rw += wt, rs += wt * r0;
        }
        off_prev = sum_off / W;
        start_next = rs / rw;
        double cof = V == 0 ? off_prev : 0;
        for (uint32_t n = 0; n < W; n++) {
            double r = x[n] - C[n] - cof, lim = o_bgK * S[n] * 1.48;
            double rc = r > lim ? lim : r < -lim ? -lim : r;
            double a = o_bgA > 1.0 / (m + 1) ? o_bgA : 1.0 / (m + 1); /* warm-up: a running mean */
            if (!o_bgWarm) a = o_bgA;
            if (o_bgRej && fabs(r) > lim) a *= 0.125;
            C[n] += a * rc;
            /* median tracker of |r|: S -> 0.674 sigma */
            S[n] *= fabs(r) > S[n] ? 1.0 + 1.0 / 16 : 1.0 - 1.0 / 16;
            if (S[n] < 0.5) S[n] = 0.5;
        }
    }
    free(C), free(S);
    return P;
}
static double *bg_member(void) { return bg_member_v(0); }

/* The same variants in fixed point (bgFix=1): C, S, offsets in Q8, weights
 * 2^36 / (S^2 + 0.25) in Q28, the row sums in int64; every rate a shift
 * (the warm-up an integer division by m + 1), the median step S +- S >> 4,
 * (weights in Q28: 2^36 / (S^2 + 0.25), weak start 268 = 1e-6; Q16
 * weights round to 0 above S ~ 256 ADU and cost twilight 0.4 %)
 * lim = 2.5 * 1.48 S as (947 S) >> 8. The member is (C + o) / 256. */
static double *bg_member_fx(int V)
{
    double *P = malloc(N * sizeof *P);
    int32_t *C = calloc(W, 4), *S = calloc(W, 4);
    int64_t off_prev = 0, start_next = 0;
    int sh = 0;
    while ((1.0 / (1 << sh)) > o_bgA * 1.0001) sh++; /* a = 2^-sh */
    int dsh = 0;
    while ((1.0 / (1 << dsh)) > o_bgD * 1.0001) dsh++;
    for (uint32_t m = 0; m < H; m++) {
        const uint16_t *x = U + (size_t)m * W;
        if (m == 0) {
            for (uint32_t n = 0; n < W; n++) {
                P[n] = n ? x[n - 1] : 0;
                C[n] = (int32_t)x[n] << 8;
                S[n] = 4 << 8;
            }
            continue;
        }
        int64_t o0 = V == 0 || V == 2 ? off_prev : V == 4 ? 0 : start_next;
        int64_t ow = 268, os = 268 * o0; /* weak start: weight 1e-6 */
        int64_t sum_off = 0, rw = 0, rs = 0;
        for (uint32_t n = 0; n < W; n++) {
            int64_t o = os >= 0 ? os / ow : -((-os + ow - 1) / ow); /* floor */
            P[(size_t)m * W + n] = (C[n] + o) / 256.0;
            int64_t r = ((int64_t)x[n] << 8) - C[n], lim = ((int64_t)947 * S[n]) >> 8;
            int64_t ctr = V == 5 ? o0 : o;
            int64_t rc = r - ctr;
            if (rc > lim) rc = lim;
            if (rc < -lim) rc = -lim;
            int64_t den = (((int64_t)S[n] * S[n]) + 16384) >> 8;
            int64_t wt = ((int64_t)1 << 36) / den;
            ow = ow - (ow >> dsh) + wt;
            os = os - (os >> dsh) + wt * (ctr + rc);
            sum_off += ctr + rc;
            int64_t r0 = r > lim ? lim : r < -lim ? -lim : r;
            rw += wt, rs += wt * r0;
        }
        off_prev = sum_off >= 0 ? sum_off / W : -((-sum_off + W - 1) / W);
        start_next = rs >= 0 ? rs / rw : -((-rs + rw - 1) / rw);
        int64_t cof = V == 0 ? off_prev : 0;
        for (uint32_t n = 0; n < W; n++) {
            int64_t r = ((int64_t)x[n] << 8) - C[n] - cof, lim = ((int64_t)947 * S[n]) >> 8;
            int64_t rc = r > lim ? lim : r < -lim ? -lim : r;
            int rej = o_bgRej && (r > lim || -r > lim);
            int64_t d;
            if ((1u << sh) > m + 1) d = rc / (int64_t)((m + 1) << (rej ? 3 : 0)); /* warm-up */
            else d = rc >> (sh + (rej ? 3 : 0));
            C[n] += (int32_t)d;
            int64_t ar = r < 0 ? -r : r;
            S[n] += ar > S[n] ? S[n] >> 4 : -(S[n] >> 4);
            if (S[n] < 128) S[n] = 128;
        }
    }
    free(C), free(S);
    return P;
}

int main(int argc, char **argv)
{
    if (argc < 4) return 2;
    SET = atoi(argv[2]);
    int F = atoi(argv[3]);
    const char *spec = NULL;
    int o_tilt = 0, o_stcm = 0, o_diag = 0, o_var = 0, o_dump = 0, o_dy = 0, o_dx = 0;
    double o_alpha = 1.0 / 16;
    for (int i = 4; i < argc; i++) {
        char k[64], sv[128];
        if (!strncmp(argv[i], "spec=", 5)) {
            spec = argv[i] + 5;
            continue;
        }
        if (sscanf(argv[i], "%63[^=]=%127s", k, sv) != 2) return 2;
        double v = atof(sv);
        if (!strcmp(k, "diag")) o_diag = (int)v;
        else if (!strcmp(k, "var")) o_var = (int)v;
        else if (!strcmp(k, "dump")) o_dump = (int)v;
        else if (!strcmp(k, "dy")) o_dy = (int)v;
        else if (!strcmp(k, "dx")) o_dx = (int)v;
        else if (!strcmp(k, "alpha")) o_alpha = v;
        else if (!strcmp(k, "stR")) o_stR = (int)v;
        else if (!strcmp(k, "stF")) o_stF = v;
        else if (!strcmp(k, "stRidge")) o_stRidge = v;
        else if (!strcmp(k, "tmax")) o_tmax = v;
        else if (!strcmp(k, "bgK")) o_bgK = v;
        else if (!strcmp(k, "bgD")) o_bgD = v;
        else if (!strcmp(k, "bgA")) o_bgA = v;
        else if (!strcmp(k, "bgW")) o_bgW = (int)v;
        else if (!strcmp(k, "bgWarm")) o_bgWarm = (int)v;
        else if (!strcmp(k, "bgRej")) o_bgRej = (int)v;
        else if (!strcmp(k, "bgAll")) o_bgAll = (int)v;
        else if (!strcmp(k, "bgFix")) o_bgFix = (int)v;
        else if (!strcmp(k, "stcm")) o_stcm = (int)v;
        else if (!strcmp(k, "tilt")) o_tilt = (int)v;
        else if (!strcmp(k, "tR")) o_tR = (int)v;
        else if (!strcmp(k, "tF")) o_tF = v;
        else if (!strcmp(k, "tK")) o_tK = v;
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
        uint64_t want = N * LSX_IOFF_PERMILLE / 1000, acc = 0;
        uint32_t v = 0;
        for (; v < 65535; v++) {
            acc += hist[v];
            if (acc > want) break;
        }
        g_ioff = (uint16_t)v;
        free(hist);
    }
    if (getenv("R6_CACHE")) o_cache = getenv("R6_CACHE");
    mkdir("/tmp/r6", 0755);
    if (spec) {
        char kind[32];
        double level = 1;
        unsigned long long seed;
        if (sscanf(spec, "%31[^:]:%llu:%lf", kind, &seed, &level) < 2) return 2;
        sim_options o;
        sim_options_for_kind(&o, (sim_kind)sim_kind_from_name(kind));
        o.level = level;
        uint16_t *pix = malloc(N * 2);
        double *el = malloc(N * 8), *rs = malloc(N * 8);
        MU = malloc(N * 8);
        VAR = malloc(N * 8);
        sim_noise_model model = {MU, el, rs};
        if (sim_frame_model(W, H, seed, 0, &o, pix, &model)) return 1;
        size_t diff = 0;
        for (size_t i = 0; i < N; i++) diff += pix[i] != U[i];
        if (diff) fprintf(stderr, "WARNING: %zu pixels differ from the model frame\n", diff);
        double g = o.gain_e_per_adu, r = o.read_noise_adu;
        for (size_t i = 0; i < N; i++) {
            double lam = el[i] > 0 ? el[i] : 0;
            VAR[i] = lam / (g * g) + r * r + rs[i] * rs[i] + 1.0 / (12 * g * g);
        }
        free(pix), free(el), free(rs);
    }
    int32_t *res = malloc(N * 4);
    uint32_t *act = malloc(N * 4);
    uint8_t *itok = malloc(N);
    double *p_ls = ls_predictions(name, F);
    lsmix_pass(p_ls, res, act, itok);
    float *bits0 = malloc(N * sizeof *bits0);
    g_base = code_len(res, act, itok, bits0);
    printf("%s %ux%u set %d f %d\n", name, W, H, SET, F);
    report("base", g_base);
    double *mem[MAXM];
    for (int k = 0; k < NP; k++) mem[k] = MEM[k];
    uint16_t *pb = malloc(N * 2);
    double b1 = blend_members(NP, mem, res, act, itok, NULL, pb);
    if (fabs(b1 - g_base) > 0.5) report("base(re-blend)", b1);

    if (MU && o_diag) {
        /* the oracle: the true mean as the only predictor */
        double *mu = malloc(N * 8);
        for (size_t i = 0; i < N; i++) mu[i] = MU[i];
        float *bitsO = malloc(N * sizeof *bitsO);
        double bo = blend_members(1, &mu, res, act, itok, bitsO, NULL);
        report("oracle(mu)", bo);
        /* where the gap lies: classes of var / r^2 (shot share) */
        double lim[] = {1.3, 2, 4, 16, 1e30};
        const char *nm[] = {"read", "<2x", "<4x", "<16x", "bright"};
        double cnt[5] = {0}, bb[5] = {0}, bo_[5] = {0}, fl[5] = {0}, e2[5] = {0}, e2m[NP > 0 ? 8 : 8][5];
        memset(e2m, 0, sizeof e2m);
        double rmin = 1e30;
        for (size_t i = 0; i < N; i++) if (VAR[i] < rmin) rmin = VAR[i];
        for (size_t i = W; i < N; i++) {
            int c = 0;
            while (VAR[i] / rmin >= lim[c]) c++;
            cnt[c]++;
            bb[c] += bits0[i];
            bo_[c] += bitsO[i];
            fl[c] += 0.5 * log2(2 * M_PI * M_E * VAR[i]);
            double d = pb[i] - MU[i];
            e2[c] += fmin(d * d / VAR[i], 100.0);
            for (int k = 0; k < NP; k++) {
                double dk = MEM[k][i] - MU[i];
                e2m[k][c] += fmin(dk * dk / VAR[i], 100.0);
            }
        }
        printf("# class  share  bpp_lsmix bpp_oracle bpp_gauss  (pred-mu)^2/var: blend");
        for (int k = 0; k < NP; k++) printf(" m%d", k);
        printf("\n");
        for (int c = 0; c < 5; c++) {
            if (!cnt[c]) continue;
            printf("# %-6s %6.3f %8.3f %8.3f %8.3f   %6.3f", nm[c], cnt[c] / (N - W), bb[c] / cnt[c], bo_[c] / cnt[c],
                   fl[c] / cnt[c], e2[c] / cnt[c]);
            for (int k = 0; k < NP; k++) printf(" %6.3f", e2m[k][c] / cnt[c]);
            printf("   excess kB lsmix %.1f oracle %.1f\n", (bb[c] - fl[c]) / 8192, (bo_[c] - fl[c]) / 8192);
        }
        if (o_dump) {
            /* 512x256 crops at (dy, dx): frame (asinh), |blend - mu| / sd, |x - blend| / sd */
            char fn[300];
            snprintf(fn, sizeof fn, "/tmp/r6/%s_dump.pgm", name);
            FILE *f = fopen(fn, "wb");
            int cw = 512, ch = 256;
            fprintf(f, "P5 %d %d 255\n", cw, 3 * ch);
            double lo = g_ioff;
            for (int pan = 0; pan < 3; pan++)
                for (int y = 0; y < ch; y++)
                    for (int x = 0; x < cw; x++) {
                        size_t i = (size_t)(o_dy + y) * W + (size_t)(o_dx + x);
                        double v;
                        if (pan == 0) v = 40 * asinh((U[i] - lo) / 10.0);
                        else if (pan == 1) v = 60 * fabs(pb[i] - MU[i]) / sqrt(VAR[i]);
                        else v = 60 * fabs(U[i] - MU[i]) / sqrt(VAR[i]);
                        fputc(v > 255 ? 255 : v < 0 ? 0 : (int)v, f);
                    }
            fclose(f);
        }
        free(mu), free(bitsO);
    }

    {
        double *bg = bg_member(), *m2[MAXM];
        int k = 0;
        for (; k < NP; k++) m2[k] = MEM[k];
        m2[k] = bg;
        float *bb = MU ? malloc(N * sizeof *bb) : NULL;
        report("+BG", blend_members(NP + 1, m2, res, act, itok, bb, pb));
        if (MU) {
            double e[2] = {0}, cnt = 0, ex = 0, rmin = 1e30;
            for (size_t i = 0; i < N; i++) if (VAR[i] < rmin) rmin = VAR[i];
            for (size_t i = W; i < N; i++) {
                if (VAR[i] > 1.3 * rmin) continue;
                double d = bg[i] - MU[i], d2 = pb[i] - MU[i];
                e[0] += fmin(d * d / VAR[i], 100), e[1] += fmin(d2 * d2 / VAR[i], 100), cnt++;
                ex += bb[i] - 0.5 * log2(2 * M_PI * M_E * VAR[i]);
            }
            if (getenv("R6_DBG"))
                for (uint32_t m = 50; m < H; m += 150) {
                    double sd = 0, sa = 0; int c = 0;
                    for (uint32_t n = 0; n < W; n++) { size_t i = (size_t)m * W + n; if (VAR[i] > 1.3 * rmin) continue; sd += bg[i] - MU[i]; sa += fabs(bg[i] - MU[i]); c++; }
                    fprintf(stderr, "row %u faint %d mean(bg-mu) %.2f mean|.| %.2f  mu[500] %.1f bg[500] %.1f\n", m, c, sd / c, sa / c, MU[(size_t)m*W+500], bg[(size_t)m*W+500]);
                }
            printf("# faint(var<1.3*9): BG alone %.3f, blend+BG %.3f, excess kB %.1f (n %.0f)\n", e[0] / cnt, e[1] / cnt, ex / 8192, cnt);
        }
        free(bb), free(bg);
    }
    if (o_bgAll) {
        /* section 2b: the GPU-parallel variants, each as one more member */
        static const struct { int v; const char *nm; } vv[] = {{0, "+BG_ref"}, {2, "+BG_V2"}, {3, "+BG_V3"}, {4, "+BG_V3b"}, {5, "+BG_V3c"}};
        double *m2[MAXM];
        for (int k = 0; k < NP; k++) m2[k] = MEM[k];
        for (int j = o_bgFix ? 0 : 1; j < 5; j++) {
            double *bg = bg_member_v(vv[j].v);
            m2[NP] = bg;
            report(vv[j].nm, blend_members(NP + 1, m2, res, act, itok, NULL, NULL));
            free(bg);
            if (o_bgFix) {
                char nm[32];
                snprintf(nm, sizeof nm, "%sfx", vv[j].nm);
                bg = bg_member_fx(vv[j].v);
                m2[NP] = bg;
                report(nm, blend_members(NP + 1, m2, res, act, itok, NULL, NULL));
                free(bg);
            }
        }
    }
    if (o_tilt) {
        double *T = tilt_est();
        if (MU) {
            /* diagnostics: mean t over bright pixels in row bands */
            double st = 0, sa = 0; size_t c = 0;
            for (size_t i = 2 * W; i < N; i++) if (VAR[i] > 16 * 9) st += T[i], sa += fabs(T[i]), c++;
            printf("# tilt over bright pixels: mean %.3f mean|t| %.3f (n %zu)\n", st / c, sa / c, c);
        }
        double *s1 = shifted_rows(T, 1), *s2 = shifted_rows(T, 2);
        double *srv = rv_of(s1, s2, 0.875, 64.0);
        double *z0 = calloc(N, 8);
        double *ema4 = aligned_ema(T, 0.25), *ema8 = aligned_ema(T, 0.125);
        double *sta4 = af_of(ema4, 0.75, 64.0), *sta8 = af_of(ema8, 0.75, 64.0);
        double *bg = bg_member();
        for (size_t i = 0; i < N; i++) z0[i] = 0;
        double *T0 = z0; /* no tilt: the same members unshifted (reference) */
        double *u1 = shifted_rows(T0, 1), *u2 = shifted_rows(T0, 2), *urv = rv_of(u1, u2, 0.875, 64.0);
        double *uema4 = aligned_ema(T0, 0.25), *usta4 = af_of(uema4, 0.75, 64.0);
        if (MU) {
            double e[6] = {0}; size_t c = 0;
            for (size_t i = 8 * W; i < N; i++) {
                if (VAR[i] < 16 * 9) continue;
                c++;
                double d[6] = {srv[i] - MU[i], urv[i] - MU[i], sta4[i] - MU[i], usta4[i] - MU[i], sta8[i] - MU[i], MEM[NP - 1][i] - MU[i]};
                for (int k = 0; k < 6; k++) e[k] += fmin(d[k] * d[k] / VAR[i], 100);
            }
            printf("# bright (pred-mu)^2/var: SRV %.3f RV(double) %.3f STA4 %.3f AF(EMA4) %.3f STA8 %.3f lastmember %.3f\n",
                   e[0] / c, e[1] / c, e[2] / c, e[3] / c, e[4] / c, e[5] / c);
        }
        double *m2[MAXM];
        int k = 0;
        for (; k < NP; k++) m2[k] = MEM[k];
        m2[k] = bg;
        struct { const char *nm; double *p; } v[] = {{"+BG+SRV", srv}, {"+BG+RVu", urv}, {"+BG+STA4", sta4}, {"+BG+STA8", sta8}, {"+BG+AF(EMA4)", usta4}};
        for (size_t j = 0; j < sizeof v / sizeof v[0]; j++) {
            m2[k + 1] = v[j].p;
            report(v[j].nm, blend_members(NP + 2, m2, res, act, itok, NULL, NULL));
        }
        m2[k + 1] = srv, m2[k + 2] = sta4;
        report("+BG+SRV+STA4", blend_members(NP + 3, m2, res, act, itok, NULL, NULL));
        if (SET == 1) {
            m2[3] = srv;
            report("RV:=SRV +BG", blend_members(NP + 1, m2, res, act, itok, NULL, NULL));
            report("RV:=SRV", blend_members(NP, m2, res, act, itok, NULL, NULL));
            m2[k + 1] = sta4;
            report("RV:=SRV +BG+STA4", blend_members(NP + 2, m2, res, act, itok, NULL, NULL));
            m2[3] = MEM[3];
            m2[2] = sta4;
            report("AF:=STA4 +BG", blend_members(NP + 1, m2, res, act, itok, NULL, NULL));
            m2[3] = srv;
            report("AF:=STA4 RV:=SRV +BG", blend_members(NP + 1, m2, res, act, itok, NULL, NULL));
        }
    }
    if (!o_stcm) return 0;
    /* ---- STCM variants ---- */
    double *cmS = malloc(N * 8), *cmT = malloc(N * 8);
    stcm(o_alpha, 0, cmS);
    stcm(o_alpha, 1, cmT);
    double *afS = af_of(cmS, 0.75, 64.0), *afT = af_of(cmT, 0.75, 64.0);
    if (MU && o_diag) {
        double e[4] = {0};
        size_t c = 0;
        for (size_t i = W * 32; i < N; i++) {
            if (VAR[i] < 4 * 16) continue;
            c++;
            double a = afS[i] - MU[i], b = afT[i] - MU[i], x = cmS[i] - MU[i], y = cmT[i] - MU[i];
            e[0] += a * a / VAR[i], e[1] += b * b / VAR[i], e[2] += x * x / VAR[i], e[3] += y * y / VAR[i];
        }
        printf("# bright(var>64): AF(straight) %.3f AF(STCM) %.3f  mean straight %.3f STCM %.3f (n %zu)\n", e[0] / c,
               e[1] / c, e[2] / c, e[3] / c, c);
    }
    {
        double *m2[MAXM];
        int k = 0;
        for (; k < NP; k++) m2[k] = MEM[k];
        m2[k] = afS;
        report("+AF(EMA a)", blend_members(NP + 1, m2, res, act, itok, NULL, NULL));
        m2[k] = afT;
        report("+AF(STCM a)", blend_members(NP + 1, m2, res, act, itok, NULL, NULL));
        m2[2] = afT;
        report("AF:=AF(STCM a)", blend_members(NP, m2, res, act, itok, NULL, NULL));
    }
    return 0;
}

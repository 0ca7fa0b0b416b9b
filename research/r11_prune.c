/* Round 11: can the encoder skip context candidates that provably cannot
 * win?  Rigorous bounds on a rANS segment's exact length from its ideal
 * cost (research/r11-prune.md has the derivation), measured against the
 * exact lengths of every candidate the CPU and the GPU encoders code.
 *
 * The harness includes core/lsmix_codec.c (for its static encoder stages)
 * with four calls renamed to recording hooks; the codec's behaviour is not
 * changed (the replayed winner's length is checked against
 * lsx_image_encode's).  Build (every core file but lsmix_codec.c):
 *   cc -O2 -ffp-contract=off -mavx2 -Icore -Iresearch -Ithird_party/xxhash -o /tmp/r11 \
 *      research/r11_prune.c $(ls core/*.c | grep -v lsmix_codec.c) -lm -lpthread
 *   /tmp/r11 [-t THREADS] [-s SEGS.tsv] FRAME.fits...
 * R11_MODE=oracle|ideal|fixed: the rules on other bounds (see below).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aurp.h"
#include "internal.h"
#include "lab_io.h"
#include "lsmix.h"
#define XXH_INLINE_ALL
#include "xxhash.h"

/* ---- the bound of one segment ------------------------------------------- */

typedef struct {
    double ideal;        /* sum log2(2^bits / freq), bits */
    double dmax, dmin;   /* sums of the per-step deviation bounds, bits */
    double e2;           /* sum of the second-byte renormalisation losses' bounds */
    uint32_t nsym;
    uint32_t exact;      /* ctx_rans_encode's length, bytes */
    uint32_t lo, up;     /* the bounds, bytes */
    uint32_t flo, fup;   /* the integer version's */
} seg_rec;

#define EPS_FIRST 1.7608305274918585e-05 /* log2(1 + 2^-15), computed below */
static double eps_first;
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* Bounds on the length of ctx_rans_encode(sym, n) (see r11-prune.md):
 *   8 B = I + sum delta - sum eps + 23 - log2 x_N,  len = B + 4,
 * delta_i in [log2(1 - (f-1)(2^b-f)/(f 2^23)), log2(1 + cum/2^23)],
 * eps_j in [0, log2(1 + 1/floor(x/256))), 23 <= log2 x_N < 31. */
static void bound_segment(const ctx_sym *sym, size_t n, seg_rec *r)
{
    double I = 0, dmax = 0, dmin = 0, e2 = 0;
    const double L = (double)AURP_RANS_L;
    for (size_t i = 0; i < n; i++) {
        const double f = sym[i].freq, M = (double)(1u << sym[i].bits), cum = sym[i].cum;
        I += sym[i].bits - log2(f);
        dmax += log1p(cum / L) / M_LN2;
        if (sym[i].freq > 1) dmin += log1p(-(f - 1) * (M - f) / (f * L)) / M_LN2;
        /* a second byte in one renormalisation: only where xmax < 2^23;
         * the state after it is at least xmax/256 = f 2^(23-b) */
        const double xmax = (double)((AURP_RANS_L >> sym[i].bits) << 8) * f;
        if (xmax < L) e2 += log1p(1.0 / (xmax / 256)) / M_LN2;
    }
    /* directed margins for the double sums (relative 2^-40 of the sum and
     * an absolute 1e-6 bits: far above the rounding of <= 3 * 2^14 terms) */
    const double m = 1e-6 + 1e-12 * (I + 1);
    const double up_bits = I + dmax + m;                  /* >= 8 B */
    const double bup = floor(up_bits / 8);
    const double elo = bup * eps_first + e2;               /* >= sum eps */
    const double lo_bits = I + dmin - elo - m;             /* 8 B > lo_bits - 8 */
    r->ideal = I, r->dmax = dmax, r->dmin = dmin, r->e2 = e2, r->nsym = (uint32_t)n;
    r->up = 4 + (uint32_t)bup;
    r->lo = 4 + (uint32_t)(floor(lo_bits / 8 - 1) + 1);
    if (lo_bits / 8 - 1 < 0) r->lo = 4;
}

/* The same bound in integer arithmetic (what an encoder would ship: exact,
 * deterministic on CPU and GPU).  Units of 2^-16 bit; per-token tables by
 * frequency with directed rounding (one unit of margin, far above the
 * double evaluation's error); the cum term linear (log2(1+u) <= u/ln 2)
 * from the integer sum of cum.  Raw bits and signs are exact integers. */
#define QB 16
static int64_t tok_lo[(1 << CTX_PROB_BITS) + 1], tok_up[(1 << CTX_PROB_BITS) + 1], raw_lo[32];
static void fixed_tables(void)
{
    const double Q = ldexp(1, QB), L = (double)AURP_RANS_L, M = (double)(1 << CTX_PROB_BITS);
    for (uint32_t f = 1; f <= (1u << CTX_PROB_BITS); f++) {
        const double c = CTX_PROB_BITS - log2((double)f);
        const double dmin = log1p(-(f - 1.0) * (M - f) / (f * L)) / M_LN2;
        const double xmax = ldexp(f, 31 - CTX_PROB_BITS);
        const double e2 = xmax < L ? log1p(256.0 / xmax) / M_LN2 : 0;
        tok_up[f] = (int64_t)ceil(c * Q) + 1;
        tok_lo[f] = (int64_t)floor((c + dmin - e2) * Q) - 1;
    }
    for (int b = 0; b < 32; b++) {
        const double xmax = ldexp(1, 31 - b);
        raw_lo[b] = (int64_t)b << QB;
        if (b > 0 && xmax < L) raw_lo[b] = (int64_t)floor((b - log1p(256.0 / xmax) / M_LN2) * Q) - 1;
    }
}
static void bound_segment_fixed(const ctx_sym *sym, size_t n, uint32_t *lo, uint32_t *up)
{
    int64_t sl = 0, su = 0;
    uint64_t scum = 0;
    for (size_t i = 0; i < n; i++) {
        const ctx_sym *s = &sym[i];
        if (s->freq > 1 || s->bits == CTX_PROB_BITS) {
            sl += tok_lo[s->freq], su += tok_up[s->freq];
        } else { /* raw bits and signs: freq 1, exact cost bits */
            sl += raw_lo[s->bits], su += (int64_t)s->bits << QB;
        }
        scum += s->cum;
    }
    /* sum log2(1 + cum/2^23) <= scum / (2^23 ln 2): in units, ceil(scum * 2^16 / (2^23 ln 2)) <= scum * 92 / 8192 + 1 */
    su += (int64_t)((scum * 93 + 8191) / 8192) + 1; /* 2^16/(2^23 ln 2) = 0.011271 < 93/8192 = 0.011353 */
    const int64_t bup = (su >> QB) / 8; /* floor(up_bits / 8) */
    /* first-byte losses: bup * log2(1 + 2^-15) <= bup * 3 units (1.154 units) */
    sl -= bup * 3;
    /* B > lo_bits/8 - 1:  B >= floor(sl / (8 * 2^16)) */
    *up = 4 + (uint32_t)bup;
    *lo = sl <= 0 ? 4 : 4 + (uint32_t)(sl / (8 << QB));
}

/* ---- recording --------------------------------------------------------- */

#define MAXC 64
typedef struct {
    int group, kind, nctx, nib;
    size_t hdr;
    seg_rec *seg;
    uint64_t exact, lo, up; /* totals with the header */
    double ideal;
    double t0, t1, trans, tbound, tfix, tfirst; /* seconds: ctx_model_init to the last segment; in the rANS; in the bound */
} cand_rec;

static cand_rec cands[MAXC];
static int ncand, cur_group, last_kind = -1;
static size_t cur_cas_bytes;
static uint32_t rec_nseg;
static const uint8_t *rec_seg_base;
static size_t rec_seg_cap;
static int rec_off;
static double tfixed; /* lsx_image_encode's own run: not recorded */

static int rec_tried(int k, int tried)
{
    if (tried) last_kind = k;
    return tried;
}

static void rec_model_init(ctx_model *cm, int nctx, int nib, int prior)
{
    ctx_model_init(cm, nctx, nib, prior);
    if (rec_off == 1) return;
    if (ncand == MAXC) abort();
    cand_rec *c = &cands[ncand++];
    c->group = cur_group;
    c->kind = last_kind;
    c->nctx = nctx / nib;
    c->nib = nib;
    c->hdr = lsx_header_len(c->nctx, rec_nseg, 1) + cur_cas_bytes;
    c->seg = calloc(rec_nseg, sizeof *c->seg);
    c->trans = c->tbound = c->tfix = 0;
    c->t0 = c->t1 = now();
    c->tfirst = 0;
}

static size_t rec_rans_encode(const ctx_sym *sym, size_t n, uint8_t *out, size_t cap)
{
    double t0 = now();
    size_t len = ctx_rans_encode(sym, n, AURP_RANS_L, out, cap);
    if (rec_off == 1) return len;
    if (cands[ncand - 1].tfirst == 0) cands[ncand - 1].tfirst = t0;
    double t1 = now();
    static size_t cnt;
    if (ncand > 0 && cands[ncand - 1].seg[0].nsym == 0) cnt = 0;
    size_t s = rec_off ? cnt++ : (size_t)(out - rec_seg_base) / rec_seg_cap;
    seg_rec *r = &cands[ncand - 1].seg[s];
    bound_segment(sym, n, r);
    r->exact = (uint32_t)len;
    double t2 = now();
    bound_segment_fixed(sym, n, &r->flo, &r->fup);
    double t3 = now();
    tfixed += t3 - t2;
    cands[ncand - 1].tfix += t3 - t2, cands[ncand - 1].t1 = t3;
    cands[ncand - 1].trans += t1 - t0, cands[ncand - 1].tbound += t2 - t1, cands[ncand - 1].t1 = t2;
    return len;
}

static int rec_cas_fit(lsx_view *v, const int32_t *e1, int16_t *ec, int threads)
{
    int ok = lsx_cas_fit(v, e1, ec, threads);
    cur_cas_bytes = ok ? lsx_cas_bytes(v) : 0;
    return ok;
}

#define lsx_candidate_tried(k, ...) rec_tried((k), lsx_candidate_tried((k), __VA_ARGS__))
#define ctx_model_init rec_model_init
#define ctx_rans_encode rec_rans_encode
#define lsx_cas_fit rec_cas_fit
#include "lsmix_codec.c"
#undef lsx_candidate_tried
#undef ctx_model_init
#undef ctx_rans_encode
#undef lsx_cas_fit

/* ---- the encoder's candidates, all of them (the GPU's set) -------------- */

/* Codes every candidate of the three pipelines (want ~0 each: the GPU's
 * set), then replays the C encoder's comparisons for the winner and codes
 * the cascade trial on it.  Returns the stream length the C encoder makes. */
static int find(int group, int kind) __attribute__((unused));
static int find(int group, int kind)
{
    for (int i = 0; i < ncand; i++)
        if (cands[i].group == group && cands[i].kind == kind) return i;
    return -1;
}

/* try_pipe of gpu/lsmix_encoder.cu on the values val[] (UINT64_MAX: not coded) */
static void replay_group(const uint64_t *val, int group, unsigned want, uint64_t *best, int *choice, unsigned *mask)
{
    *mask = 0;
    for (int i = 0; i < ncand; i++) {
        if (cands[i].group != group || !(want >> cands[i].kind & 1)) continue;
        if (*best != 0 && val[i] >= *best) continue;
        *best = val[i], *choice = i, *mask = 1u << cands[i].kind;
    }
}

/* choose(): the winner of the three pipelines; *win_pipe, *win_kind */
static uint64_t replay_choose(const uint64_t *val, int *choice, int *win_pipe, unsigned *win_kind)
{
    uint64_t best = 0;
    unsigned mask, want = ~0u;
    *choice = -1;
    *win_pipe = -1;
    for (int pipe = 0; pipe < 3; pipe++) {
        if (pipe == 2) {
            if (mask == 0) break;
            want = ~0u;
        }
        replay_group(val, pipe, want, &best, choice, &mask);
        if (mask) *win_pipe = pipe, *win_kind = mask;
        want = mask;
    }
    return best;
}

static aurp_status encode_all(const uint16_t *u, uint32_t W, uint32_t H, int threads, uint8_t *out, size_t cap,
                              uint64_t *cpu_len)
{
    aurp_params p;
    aurp_params_for_profile(&p, AURP_PROFILE_LSMIX);
    aurp_error err;
    const uint64_t pixels = (uint64_t)W * H;
    const lsx_params ls_of[2] = {{p.order, p.equations, LSX_FORGET, LSX_RIDGE},
                                 {p.order, p.equations, LSX_ROW_FORGET, LSX_RIDGE}};
    lsx_view v = {.p = ls_of[0], .W = W, .H = H, .seg_log2 = LSX_SEG_LOG2, .nctx = 1, .nib = 1,
                  .prior = LSX_PRIOR, .bg = LSX_BG};
    v.nseg = (uint32_t)((pixels + (1u << LSX_SEG_LOG2) - 1) >> LSX_SEG_LOG2);
    v.ioff = choose_ioff(u, pixels);
    enc_job j = {.u = u, .W = W, .H = H, .p = v.p};
    atomic_init(&j.failed, 0);
    j.p_ls = malloc((size_t)pixels * sizeof *j.p_ls);
    enc_planes pl = {malloc((size_t)pixels * sizeof *pl.e1), malloc((size_t)pixels * sizeof *pl.emin),
                     malloc((size_t)pixels * sizeof *pl.res), malloc((size_t)pixels * sizeof *pl.p1),
                     malloc((size_t)pixels * sizeof *pl.ec), malloc((size_t)pixels * sizeof *pl.act),
                     malloc((size_t)pixels)};
    uint8_t *ctx = malloc((size_t)pixels);
    ctx_model *snap = malloc((size_t)v.nseg * sizeof *snap);
    j.seg_cap = 4 + 4 * ((size_t)1 << LSX_SEG_LOG2);
    j.seg_buf = malloc((size_t)v.nseg * j.seg_cap);
    j.seg_len = malloc((size_t)v.nseg * sizeof *j.seg_len);
    rec_nseg = v.nseg, rec_seg_base = j.seg_buf, rec_seg_cap = j.seg_cap;
    j.nbands = (uint32_t)threads < W ? threads : (int)W;
    aurp_status st = AURP_OK;
    for (int pipe = 0; pipe < 3 && st == AURP_OK; pipe++) {
        if (pipe == 0 || pipe == 2)
            if (predict_ls(&j, ls_of[pipe == 2]) != 0) return AURP_ERR_NOMEM;
        v.set = pipe == 0 ? 0 : 2;
        v.p = ls_of[pipe == 2];
        size_t dummy = 0;
        unsigned mask = ~0u;
        cur_group = pipe, cur_cas_bytes = 0;
        st = try_residuals(&j, &v, threads, &pl, ctx, snap, out, cap, &dummy, &mask, &err);
        if (getenv("R11_DEBUG")) fprintf(stderr, "pipe %d e1 %llx p1 %llx emin %llx pls %llx\n", pipe, (unsigned long long)XXH64(pl.e1, 4 * pixels, 0), (unsigned long long)XXH64(pl.p1, 2 * pixels, 0), (unsigned long long)XXH64(pl.emin, 4 * pixels, 0), (unsigned long long)XXH64(j.p_ls + W, 8 * (pixels - W), 0));
    }
    uint64_t *val = malloc(sizeof *val * MAXC);
    for (int i = 0; i < ncand; i++) {
        val[i] = cands[i].hdr;
        for (uint32_t s = 0; s < v.nseg; s++) val[i] += cands[i].seg[s].exact;
    }
    int choice, win;
    unsigned win_kind;
    uint64_t best = replay_choose(val, &choice, &win, &win_kind);
    if (st == AURP_OK && LSX_CASCADE && win >= 0) {
        v.set = win == 0 ? 0 : 2;
        v.p = ls_of[win == 2];
        v.cas = 0;
        if (predict_ls(&j, ls_of[win == 2]) != 0) return AURP_ERR_NOMEM;
        if (blend_pass(&v, j.u, j.p_ls, pl.e1, pl.p1, pl.emin) != AURP_OK) return AURP_ERR_NOMEM;
        cur_group = 3;
        if (getenv("R11_DEBUG")) fprintf(stderr, "cas e1 %llx p1 %llx emin %llx pls %llx set %d\n", (unsigned long long)XXH64(pl.e1, 4 * pixels, 0), (unsigned long long)XXH64(pl.p1, 2 * pixels, 0), (unsigned long long)XXH64(pl.emin, 4 * pixels, 0), (unsigned long long)XXH64(j.p_ls + W, 8 * (pixels - W), 0), v.set);
        size_t b = best;
        st = try_cascade(&j, &v, threads, win_kind, &pl, ctx, snap, out, cap, &b, &err);
        best = b;
        cur_cas_bytes = 0;
    }
    *cpu_len = best;
    free(val);
    free(j.p_ls), free(pl.e1), free(pl.emin), free(pl.res), free(pl.p1), free(pl.ec), free(pl.act),
        free(pl.itok), free(ctx), free(snap), free(j.seg_buf), free(j.seg_len);
    return st;
}

/* ---- pruning rules -------------------------------------------------------- */

/* In-group pre-pass: candidate i of group g can be dropped when its lower
 * bound reaches an earlier candidate's upper bound (>=) or exceeds a later
 * one's (>), or reaches bb (the best before the group, 0: none). */
static int group_prunes_v(int i, uint64_t bb, const int *in, const uint64_t *lo, const uint64_t *up)
{
    if (bb && lo[i] >= bb) return 1;
    for (int k = 0; k < ncand; k++) {
        if (k == i || !in[k] || cands[k].group != cands[i].group) continue;
        if (k < i && lo[i] >= up[k]) return 1;
        if (k > i && lo[i] > up[k]) return 1;
    }
    return 0;
}

static int group_prunes(int i, uint64_t bb, const int *in)
{
    uint64_t lo[MAXC], up[MAXC];
    for (int k = 0; k < ncand; k++) lo[k] = cands[k].lo, up[k] = cands[k].up;
    return group_prunes_v(i, bb, in, lo, up);
}

/* The GPU's candidates (pipelines 0-2, every kind) that must be coded for
 * choose() to be decided, from bounds lo/up (exact where lo == up): an
 * interval replay of choose(). */
static void gpu_needed(const uint64_t *lo, const uint64_t *up, int *need)
{
    int all[MAXC];
    for (int i = 0; i < ncand; i++) all[i] = cands[i].group < 3, need[i] = 0;
    uint64_t B0u = UINT64_MAX;
    unsigned kinds0 = 0;
    for (int i = 0; i < ncand; i++)
        if (cands[i].group == 0) {
            if (up[i] < B0u) B0u = up[i];
            if (!group_prunes_v(i, 0, all, lo, up)) need[i] = 1, kinds0 |= 1u << cands[i].kind;
        }
    /* pipeline 1 codes the kind that won pipeline 0 (one of kinds0); it
     * improves only if below the best after pipeline 0 (<= B0u) */
    uint64_t max_up1 = 0;
    int any1 = 0;
    for (int i = 0; i < ncand; i++)
        if (cands[i].group == 1 && (kinds0 >> cands[i].kind & 1) && lo[i] < B0u) {
            need[i] = 1, any1 = 1;
            if (up[i] > max_up1) max_up1 = up[i];
        }
    /* pipeline 2 runs only if pipeline 1 improved: the best before it is
     * then below B0u and at most the improving candidate's upper bound */
    if (any1) {
        uint64_t bb2 = B0u < max_up1 ? B0u : max_up1;
        for (int i = 0; i < ncand; i++)
            if (cands[i].group == 2 && !group_prunes_v(i, bb2, all, lo, up)) need[i] = 1;
    }
    /* exact values need no coding to be known only if coded: lo == up does
     * not mean coded, the caller adds what it coded */
}

int main(int argc, char **argv)
{
    eps_first = log1p(ldexp(1, -15)) / M_LN2;
    fixed_tables();
    int threads = 1, a = 1;
    FILE *segf = NULL;
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (!strcmp(argv[a], "-t") && a + 1 < argc) threads = atoi(argv[++a]);
        else if (!strcmp(argv[a], "-s") && a + 1 < argc) segf = fopen(argv[++a], "w");
    }
    if (segf) fprintf(segf, "frame\tcand\tgroup\tkind\tseg\tnsym\texact\tlo\tup\tideal\tdmax\tdmin\te2\tflo\tfup\n");
    uint64_t tot[10] = {0}; /* chains: gpu base, gpu pruned, cpu base, cpu a, cpu b, cpu a+b */
    long violations = 0, segs = 0;
    double fslack_lo = 0, fslack_up = 0, dslack_lo = 0, dslack_up = 0;
    printf("# frame cand group kind nctx nib hdr exact ideal/8+4 lo up  (lo-exact) (up-exact)  flags\n");
    for (; a < argc; a++) {
        uint32_t W, H;
        uint16_t *u = lab_load_fits(argv[a], &W, &H);
        if (!u) return 1;
        const char *name = strrchr(argv[a], '/') ? strrchr(argv[a], '/') + 1 : argv[a];
        for (int i = 0; i < ncand; i++) free(cands[i].seg);
        ncand = 0, last_kind = -1;
        size_t cap = aurp_image_bound(W, H), real_len = 0;
        uint8_t *out = malloc(cap);
        uint64_t cpu_len;
        if (encode_all(u, W, H, threads, out, cap, &cpu_len) != AURP_OK) return 1;
        aurp_params p;
        aurp_params_for_profile(&p, AURP_PROFILE_LSMIX);
        aurp_error err;
        int nc_all = ncand;
        rec_off = getenv("R11_DEBUG") ? 2 : 1;
        double t_enc = now();
        if (lsx_image_encode(u, W, H, &p, threads, out, cap, &real_len, &err) != AURP_OK) return 1;
        t_enc = now() - t_enc;
        rec_off = 0;
        for (int i = nc_all; i < ncand; i++) {
            uint64_t e = cands[i].hdr;
            for (uint32_t s = 0; s < rec_nseg; s++) e += cands[i].seg[s].exact;
            fprintf(stderr, "real cand %d kind %d nctx %d nib %d hdr %zu exact %llu\n", i, cands[i].kind, cands[i].nctx,
                    cands[i].nib, cands[i].hdr, (unsigned long long)e);
            free(cands[i].seg);
        }
        ncand = nc_all;
        const uint32_t nseg = rec_nseg;
        /* totals and violations */
        for (int i = 0; i < ncand; i++) {
            cand_rec *c = &cands[i];
            c->exact = c->lo = c->up = c->hdr;
            c->ideal = 0;
            for (uint32_t s = 0; s < nseg; s++) {
                seg_rec *r = &c->seg[s];
                c->exact += r->exact, c->lo += r->lo, c->up += r->up, c->ideal += r->ideal;
                segs++;
                if (r->flo > r->exact || r->fup < r->exact) {
                    violations++;
                    fprintf(stderr, "FIXED VIOLATION %s cand %d seg %u: %u not in [%u, %u]\n", name, i, s, r->exact,
                            r->flo, r->fup);
                }
                fslack_lo += r->exact - r->flo, fslack_up += r->fup - r->exact;
                dslack_lo += r->exact - r->lo, dslack_up += r->up - r->exact;
                if (r->lo > r->exact || r->up < r->exact) {
                    violations++;
                    fprintf(stderr, "VIOLATION %s cand %d seg %u: %u not in [%u, %u]\n", name, i, s, r->exact,
                            r->lo, r->up);
                }
                if (segf)
                    fprintf(segf, "%s\t%d\t%d\t%d\t%u\t%u\t%u\t%u\t%u\t%.4f\t%.4f\t%.4f\t%.4f\t%u\t%u\n", name, i, c->group,
                            c->kind, s, r->nsym, r->exact, r->lo, r->up, r->ideal, r->dmax, r->dmin, r->e2, r->flo, r->fup);
            }
        }
        /* R11_MODE=oracle: the rules on exact lengths (the ceiling);
         * R11_MODE=ideal: lo/up = 4 + ideal/8 -1.25/+0.25 a segment (NOT rigorous) */
        const char *mode = getenv("R11_MODE");
        if (mode)
            for (int i = 0; i < ncand; i++) {
                cand_rec *c = &cands[i];
                if (!strcmp(mode, "oracle")) c->lo = c->up = c->exact;
                else if (!strcmp(mode, "fixed")) {
                    c->lo = c->up = c->hdr;
                    for (uint32_t s = 0; s < nseg; s++) c->lo += c->seg[s].flo, c->up += c->seg[s].fup;
                }
                else if (!strcmp(mode, "ideal")) {
                    c->lo = c->up = c->hdr;
                    for (uint32_t s = 0; s < nseg; s++) {
                        c->lo += 4 + (uint64_t)floor(c->seg[s].ideal / 8 - 1.25);
                        c->up += 4 + (uint64_t)ceil(c->seg[s].ideal / 8 + 0.25);
                    }
                }
            }
        /* the winner: the C encoder's replay */
        uint64_t val[MAXC];
        for (int i = 0; i < ncand; i++) val[i] = cands[i].exact;
        int choice, win;
        unsigned win_kind;
        uint64_t best = replay_choose(val, &choice, &win, &win_kind);
        int cas = -1;
        for (int i = 0; i < ncand; i++)
            if (cands[i].group == 3) cas = i;
        int final = choice;
        if (cas >= 0 && cands[cas].exact < best) final = cas, best = cands[cas].exact;
        if (best != real_len) fprintf(stderr, "MISMATCH %s: replay %llu, lsx_image_encode %zu\n", name,
                                      (unsigned long long)best, real_len);
        /* the CPU's coded set, in order */
        int cpu_set[MAXC] = {0}, ncpu = 0;
        {
            unsigned w0 = 0, m1 = 0;
            uint64_t b = 0;
            int ch;
            replay_group(val, 0, ~0u, &b, &ch, &w0);
            for (int i = 0; i < ncand; i++) if (cands[i].group == 0) cpu_set[i] = 1;
            for (int i = 0; i < ncand; i++) if (cands[i].group == 1 && (w0 >> cands[i].kind & 1)) cpu_set[i] = 1;
            replay_group(val, 1, w0, &b, &ch, &m1);
            for (int i = 0; i < ncand; i++) if (cands[i].group == 2 && m1) cpu_set[i] = 1;
            if (cas >= 0) cpu_set[cas] = 1;
            for (int i = 0; i < ncand; i++) ncpu += cpu_set[i];
        }
        /* (a) sequential: skip when lo >= the exact best so far */
        int code_a[MAXC] = {0}, code_b[MAXC] = {0}, code_ab[MAXC] = {0}, code_g[MAXC] = {0};
        {
            uint64_t b = 0;
            for (int i = 0; i < ncand; i++) {
                if (!cpu_set[i]) continue;
                if (b && cands[i].lo >= b) continue;
                code_a[i] = 1;
                if (!b || cands[i].exact < b) b = cands[i].exact;
            }
        }
        /* (b) pre-pass per try_candidates call (best before it exact), and
         * (a+b) the pre-pass then (a) on what is left */
        {
            uint64_t b = 0, bab = 0;
            for (int g = 0; g < 4; g++) {
                for (int i = 0; i < ncand; i++)
                    if (cpu_set[i] && cands[i].group == g && !group_prunes(i, b, cpu_set)) code_b[i] = 1;
                for (int i = 0; i < ncand; i++) {
                    if (!cpu_set[i] || cands[i].group != g) continue;
                    if (!b || cands[i].exact < b) b = cands[i].exact; /* the exact best after the group */
                    if (!code_b[i] || (bab && cands[i].lo >= bab)) continue;
                    code_ab[i] = 1;
                    if (!bab || cands[i].exact < bab) bab = cands[i].exact;
                }
            }
        }
        /* GPU: every candidate of the three pipelines at once from bounds only
         * (interval replay of choose()), then the cascade trial against the
         * exact best */
        int code_g2[MAXC] = {0}, code_aseg_n = 0, code_abseg_n = 0;
        {
            uint64_t lo[MAXC], up[MAXC];
            for (int i = 0; i < ncand; i++) lo[i] = cands[i].lo, up[i] = cands[i].up;
            gpu_needed(lo, up, code_g);
            /* two rounds: first the likeliest winner of each pipeline (the
             * least lo + up among those needed), then what its exact
             * length leaves undecided */
            for (int g = 0; g < 3; g++) {
                int arg = -1;
                for (int i = 0; i < ncand; i++)
                    if (cands[i].group == g && code_g[i] && (arg < 0 || lo[i] + up[i] < lo[arg] + up[arg])) arg = i;
                if (arg >= 0) code_g2[arg] = 1, lo[arg] = up[arg] = cands[arg].exact;
            }
            int need2[MAXC];
            gpu_needed(lo, up, need2);
            for (int i = 0; i < ncand; i++) code_g2[i] |= need2[i];
            /* check: choose() on the coded ones (the rest as never smaller) */
            for (int pass = 0; pass < 2; pass++) {
                const int *cg = pass ? code_g2 : code_g;
                uint64_t gv[MAXC];
                for (int i = 0; i < ncand; i++) gv[i] = cg[i] ? cands[i].exact : UINT64_MAX;
                int gch, gw;
                unsigned gk;
                uint64_t gb = replay_choose(gv, &gch, &gw, &gk);
                if (gch != choice || gb != cands[choice].exact)
                    fprintf(stderr, "GPU PRUNE (%d) CHANGED THE WINNER %s: %d against %d\n", pass, name, gch, choice);
            }
            if (cas >= 0 && cands[cas].lo < cands[choice].exact) code_g[cas] = code_g2[cas] = 1;
            /* CPU, segment by segment: a candidate's segments coded in
             * order until hdr + exact so far + lo of the rest reaches the
             * best (then it cannot win: dropped) */
            for (int pass = 0; pass < 2; pass++) {
                const int *set = pass ? code_b : cpu_set;
                uint64_t b = 0;
                int n = 0;
                for (int i = 0; i < ncand; i++) {
                    if (!set[i]) continue;
                    const cand_rec *c = &cands[i];
                    if (b && c->lo >= b) continue;
                    uint64_t sofar = c->hdr, rest = c->lo - c->hdr;
                    int dropped = 0;
                    for (uint32_t s2 = 0; s2 < nseg; s2++) {
                        sofar += c->seg[s2].exact, rest -= c->seg[s2].lo, n++;
                        if (b && sofar + rest >= b) { dropped = 1; break; }
                    }
                    if (!dropped && (!b || c->exact < b)) b = c->exact;
                }
                if (pass) code_abseg_n = n; else code_aseg_n = n;
            }
        }
        /* the table */
        static const char *kn[] = {"full", "wide", "act", "one", "dp"};
        uint64_t ch[10] = {0};
        for (int i = 0; i < ncand; i++) {
            const cand_rec *c = &cands[i];
            char flags[64];
            snprintf(flags, sizeof flags, "%s%s%s%s%s%s%s", i == final ? "WIN " : "", cpu_set[i] ? "cpu " : "",
                     code_a[i] ? "a " : "", code_b[i] ? "b " : "", code_ab[i] ? "ab " : "", code_g[i] ? "g " : "", code_g2[i] ? "g2" : "");
            printf("%-34s %2d %d %-4s %2d %d %4zu %8llu %10.1f %8llu %8llu %6lld %+5lld  %s\n", name, i, c->group,
                   c->kind >= 0 ? kn[c->kind] : "?", c->nctx, c->nib, c->hdr, (unsigned long long)c->exact,
                   c->hdr + c->ideal / 8 + 4.0 * nseg, (unsigned long long)c->lo, (unsigned long long)c->up,
                   (long long)c->lo - (long long)c->exact, (long long)c->up - (long long)c->exact, flags);
            ch[0] += nseg;
            ch[1] += code_g[i] * nseg;
            ch[2] += cpu_set[i] * nseg;
            ch[3] += code_a[i] * nseg;
            ch[4] += code_b[i] * nseg;
            ch[5] += code_ab[i] * nseg;
            ch[6] += code_g2[i] * nseg;
        }
        ch[7] = code_aseg_n, ch[8] = code_abseg_n;
        printf("SUMMARY %-30s len %7zu win %2d(%-4s) | gpu %3llu: g %3llu (%.3f) g2 %3llu (%.3f) | cpu %3llu: a %3llu (%.3f) "
               "b %3llu (%.3f) ab %3llu (%.3f) aseg %3llu (%.3f) abseg %3llu (%.3f)\n",
               name, real_len, final, kn[cands[final].kind], (unsigned long long)ch[0], (unsigned long long)ch[1],
               (double)ch[1] / ch[0], (unsigned long long)ch[6], (double)ch[6] / ch[0], (unsigned long long)ch[2],
               (unsigned long long)ch[3], (double)ch[3] / ch[2], (unsigned long long)ch[4], (double)ch[4] / ch[2],
               (unsigned long long)ch[5], (double)ch[5] / ch[2], (unsigned long long)ch[7], (double)ch[7] / ch[2],
               (unsigned long long)ch[8], (double)ch[8] / ch[2]);
        {
            double tc = 0, tr = 0, tb = 0, tcpu = 0, tcpu_a = 0, tcpu_ab = 0, twalk = 0;
            for (int i = 0; i < ncand; i++) {
                const double d = cands[i].t1 - cands[i].t0 - cands[i].tbound - cands[i].tfix;
                tc += d, tr += cands[i].trans, tb += cands[i].tbound;
                tcpu += cpu_set[i] * d, tcpu_a += code_a[i] * d, tcpu_ab += code_ab[i] * d;
                twalk += cpu_set[i] * (cands[i].tfirst - cands[i].t0);
            }
            printf("TIME %-34s encode %.3f s | all cands: coding %.3f (rANS %.3f) bound %.3f | cpu set coding %.3f "
                   "(walks to the first segment %.3f), a %.3f, ab %.3f\n", name, t_enc, tc, tr, tb, tcpu, twalk, tcpu_a, tcpu_ab);
        }
        fflush(stdout);
        for (int k = 0; k < 9; k++) tot[k] += ch[k];
        free(out);
        free(u);
    }
    printf("TOTAL gpu %llu: g %llu (%.4f) g2 %llu (%.4f) | cpu %llu: a %llu (%.4f) b %llu (%.4f) ab %llu (%.4f) "
           "aseg %llu (%.4f) abseg %llu (%.4f) | segments %ld violations %ld | slack a segment: double lo %.3f up %.3f, "
           "fixed lo %.3f up %.3f | fixed-bound time %.3f s\n",
           (unsigned long long)tot[0], (unsigned long long)tot[1], (double)tot[1] / tot[0], (unsigned long long)tot[6],
           (double)tot[6] / tot[0], (unsigned long long)tot[2], (unsigned long long)tot[3], (double)tot[3] / tot[2],
           (unsigned long long)tot[4], (double)tot[4] / tot[2], (unsigned long long)tot[5], (double)tot[5] / tot[2],
           (unsigned long long)tot[7], (double)tot[7] / tot[2], (unsigned long long)tot[8], (double)tot[8] / tot[2],
           segs, violations, dslack_lo / segs, dslack_up / segs, fslack_lo / segs, fslack_up / segs, tfixed);
    if (segf) fclose(segf);
    return 0;
}

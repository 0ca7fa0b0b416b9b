/* The lsmix image stream (docs/FORMAT.md section 3): encoder and decoder.
 *
 * Encoder: the LS predictions of every pixel, one band of columns a thread
 * (the encoder has every pixel, so bands are independent); then, in raster
 * order, the blend, the residual and its context; then the token counts
 * walked once to snapshot the model where each coding thread's run of
 * segments starts; then the rANS segments, a run of them a thread, each
 * thread replaying the model from its snapshot through its run.
 * Decoder: the pixels are decoded left to right, row by row (contexts and
 * blend need the pixels and residuals left of them); the columns' training
 * and solving for row m+1, chunk by chunk, runs on the other threads (and
 * on the decoding thread when it would otherwise wait) as soon as row m is
 * decoded past each chunk's window (aurp_decode_wavefront). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lsmix.h"
#include "predict.h"

#define MAX_THREADS 64

static uint32_t band_edge(uint32_t width, int nb, int b)
{
    return (uint32_t)((uint64_t)width * (uint64_t)b / (uint64_t)nb);
}

static uint32_t activity16(const lsx_view *v, const int32_t *r0, const int32_t *r1,
                           const int32_t *r2, uint32_t n, int32_t emin)
{
    return lsx_activity16(lsx_residual_activity(r0, r1, r2, v->W, n), emin);
}

static inline int intensity_token(const lsx_view *v, uint16_t pred)
{
    return lsx_intensity_token(pred, v->ioff);
}

static inline int intensity_class(const lsx_view *v, int itok)
{
    return lsx_intensity_class(itok, v->ibnd, v->nib);
}

static int context_at(const lsx_view *v, const int32_t *r0, const int32_t *r1, const int32_t *r2,
                      uint32_t n, int32_t emin, uint16_t pred)
{
    int a = ctx_of(activity16(v, r0, r1, r2, n, emin), v->thr, v->nctx);
    return a * v->nib + intensity_class(v, intensity_token(v, pred));
}

/* Row 0 and the first pixel: the left neighbour, or 0. */
static inline uint16_t edge_prediction(const uint16_t *row, uint32_t n)
{
    return n ? row[n - 1] : 0;
}

/* ---- header ------------------------------------------------------------ */

size_t lsx_header_len(int nctx, uint32_t nseg, int seg_lengths)
{
    return LSX_HEADER + 4 * (size_t)(nctx - 1) + (seg_lengths ? 4 * (size_t)nseg : 0);
}

/* The cascade block: clip (u16), then the weights of the support's
 * lsx_cas_nl lags, each a zigzag varint (aurp_put_varint, at most 3 bytes). */
static inline uint32_t cas_zigzag(int16_t w) { return (uint32_t)(((int32_t)w * 2) ^ -(int32_t)(w < 0)) & 0xffff; }

size_t lsx_cas_bytes(const lsx_view *v)
{
    if (!v->cas) return 0;
    size_t b = 2;
    for (int j = 0; j < lsx_cas_nl(v->cas_wide); j++) {
        uint32_t z = cas_zigzag(v->cas_w[j]);
        b += z < 128 ? 1 : z < 16384 ? 2 : 3;
    }
    return b;
}

static size_t stream_header_len(const lsx_view *v)
{
    return lsx_header_len(v->nctx, v->nseg, v->seg_lengths) + lsx_cas_bytes(v);
}

size_t lsx_write_header(uint8_t *h, const lsx_view *v, const uint32_t *seg_len)
{
    memset(h, 0, LSX_HEADER);
    h[0] = AURP_PROFILE_LSMIX;
    h[1] = (uint8_t)v->p.K;
    h[2] = (uint8_t)v->p.M;
    h[3] = (uint8_t)v->nctx;
    aurp_put_u32(h + 4, v->W);
    aurp_put_u32(h + 8, v->H);
    h[12] = (uint8_t)v->p.forget_shift;
    h[13] = (uint8_t)v->p.ridge_shift;
    h[14] = (uint8_t)v->seg_log2;
    h[15] = CTX_PROB_BITS;
    aurp_put_u16(h + 16, v->ioff);
    h[18] = (uint8_t)v->nib;
    for (int i = 0; i < v->nib - 1; i++) h[19 + i] = v->ibnd[i];
    h[22] = (uint8_t)v->set;
    h[23] = (uint8_t)(v->prior | v->bg << 1 | (v->cas != 0) << 2 | !v->seg_lengths << 3 |
                      (v->cas != 0 && v->cas_wide) << 4 | (!v->seg_lengths && v->carry) << 5 | (v->sgn != 0) << 6);
    for (int i = 0; i < v->nctx - 1; i++) aurp_put_u32(h + LSX_HEADER + 4 * i, v->thr[i]);
    if (v->cas) {
        uint8_t *q = h + LSX_HEADER + 4 * (size_t)(v->nctx - 1);
        aurp_put_u16(q, (uint16_t)v->cas_clip);
        q += 2;
        for (int j = 0; j < lsx_cas_nl(v->cas_wide); j++) q += aurp_put_varint(q, cas_zigzag(v->cas_w[j]));
    }
    size_t pos = LSX_HEADER + 4 * (size_t)(v->nctx - 1) + lsx_cas_bytes(v);
    if (v->seg_lengths)
        for (uint32_t s = 0; s < v->nseg; s++, pos += 4) aurp_put_u32(h + pos, seg_len[s]);
    return pos;
}

aurp_status lsx_parse_header(const uint8_t *in, size_t in_len, aurp_stream_view *sv,
                             aurp_error *err)
{
    if (in_len < LSX_HEADER)
        return aurp_fail(err, AURP_ERR_CORRUPT, "lsmix stream truncated: %zu bytes", in_len);
    sv->profile = in[0];
    sv->order = in[1];
    sv->equations = in[2];
    sv->width = aurp_get_u32(in + 4);
    sv->height = aurp_get_u32(in + 8);
    int nctx = in[3];
    if (sv->order < 1 || sv->order > LSX_MAX_K || sv->equations < 1 ||
        sv->equations > LSX_MAX_M || !(sv->equations & 1))
        return aurp_fail(err, AURP_ERR_CORRUPT, "lsmix stream: K=%d M=%d out of range",
                         sv->order, sv->equations);
    int nib = in[18];
    if (nctx < 1 || nib < 1 || nib > CTX_MAX_IB || nctx * nib > CTX_MAX)
        return aurp_fail(err, AURP_ERR_CORRUPT, "lsmix stream: %d x %d contexts", nctx, nib);
    if (in[12] < 1 || in[12] > 8 || in[13] < 8 || in[13] > 40 || in[14] < 8 || in[14] > 24 ||
        in[15] != CTX_PROB_BITS)
        return aurp_fail(err, AURP_ERR_CORRUPT, "lsmix stream: parameters out of range");
    if (sv->width == 0 || sv->height == 0 || (uint64_t)sv->width * sv->height > UINT32_MAX)
        return aurp_fail(err, AURP_ERR_CORRUPT, "lsmix stream: image %ux%u", sv->width,
                         sv->height);
    sv->seg_log2 = in[14];
    sv->prob_bits = in[15];
    sv->t_lo = 1; /* no escape range in this profile */
    sv->t_hi = 0;
    return AURP_OK;
}

/* nseg segments (at least 4 bytes each, and a 4-byte length each where
 * the stream has them) fit behind the first `before` bytes of the stream. */
static aurp_status segments_fit(uint64_t nseg, int seg_lengths, uint64_t before, size_t in_len, aurp_error *err)
{
    if (nseg * (seg_lengths ? 8 : 4) + before <= in_len) return AURP_OK;
    return aurp_fail(err, AURP_ERR_CORRUPT, "lsmix stream: %llu segments do not fit in %zu bytes",
                     (unsigned long long)nseg, in_len);
}

static aurp_status parse(const uint8_t *in, size_t in_len, lsx_view *v, aurp_error *err)
{
    aurp_stream_view sv;
    memset(&sv, 0, sizeof sv);
    aurp_status st = lsx_parse_header(in, in_len, &sv, err);
    if (st != AURP_OK) return st;
    v->p = (lsx_params){sv.order, sv.equations, in[12], in[13], 0};
    v->W = sv.width;
    v->H = sv.height;
    v->nctx = in[3];
    v->seg_log2 = sv.seg_log2;
    v->ioff = aurp_get_u16(in + 16);
    v->nib = in[18];
    memset(v->ibnd, 0, sizeof v->ibnd);
    for (int i = 0; i < v->nib - 1; i++) {
        v->ibnd[i] = in[19 + i];
        if (v->ibnd[i] >= CTX_TOKENS || (i > 0 && v->ibnd[i] <= v->ibnd[i - 1]))
            return aurp_fail(err, AURP_ERR_CORRUPT, "lsmix stream: intensity bounds not increasing tokens");
    }
    v->set = in[22];
    v->prior = in[23] & 1;
    v->bg = in[23] >> 1 & 1;
    v->cas = in[23] >> 2 & 1;
    v->seg_lengths = !(in[23] >> 3 & 1);
    v->cas_wide = in[23] >> 4 & 1;
    v->carry = in[23] >> 5 & 1;
    v->sgn = in[23] >> 6 & 1;
    /* bit 4 describes the cascade stage's block; bit 5 the ends of segments
     * that have no lengths */
    if (in[23] > 127 || (v->cas_wide && !v->cas) || (v->carry && v->seg_lengths))
        return aurp_fail(err, AURP_ERR_CORRUPT, "lsmix stream: header flags %#x unknown", (unsigned)in[23]);
    if (v->set >= LSX_NSETS)
        return aurp_fail(err, AURP_ERR_CORRUPT, "lsmix stream: predictor set %d unknown", v->set);
    if (v->set >= 2 && !v->bg) /* RL reads BG's column levels and scales */
        return aurp_fail(err, AURP_ERR_CORRUPT, "lsmix stream: predictor set %d without BG", v->set);
    v->p.weighted = v->set == 3 && v->p.forget_shift == LSX_ROW_FORGET;
    for (int i = 19 + v->nib - 1; i < LSX_HEADER; i++)
        if (i < 22 && in[i] != 0) return aurp_fail(err, AURP_ERR_CORRUPT, "lsmix stream: reserved bytes not zero");
    uint64_t pixels = (uint64_t)v->W * v->H;
    uint64_t nseg = (pixels + ((uint64_t)1 << v->seg_log2) - 1) >> v->seg_log2;
    v->nseg = (uint32_t)nseg;
    /* every segment has at least 4 bytes (and its 4-byte length where the
     * stream has them): checked before anything is allocated, and again
     * behind the cascade block */
    if ((st = segments_fit(nseg, v->seg_lengths, LSX_HEADER + 4 * (uint64_t)(v->nctx - 1), in_len, err)) != AURP_OK)
        return st;
    for (int i = 0; i < v->nctx - 1; i++) {
        v->thr[i] = aurp_get_u32(in + LSX_HEADER + 4 * i);
        if (i > 0 && v->thr[i] <= v->thr[i - 1])
            return aurp_fail(err, AURP_ERR_CORRUPT, "lsmix stream: context thresholds not increasing");
    }
    size_t pos = LSX_HEADER + 4 * (size_t)(v->nctx - 1);
    if (v->cas) { /* the cascade block */
        if (pos + 2 > in_len) return aurp_fail(err, AURP_ERR_CORRUPT, "lsmix stream: cascade block truncated");
        v->cas_clip = aurp_get_u16(in + pos);
        pos += 2;
        int64_t sw = 0;
        for (int j = 0; j < lsx_cas_nl(v->cas_wide); j++) {
            const size_t at = pos;
            uint64_t z;
            if (aurp_get_varint(in, in_len, &pos, &z) != 0 || pos - at > 3 || z > 0xffff)
                return aurp_fail(err, AURP_ERR_CORRUPT, "lsmix stream: cascade weights corrupt");
            v->cas_w[j] = (int16_t)(int32_t)(((uint32_t)z >> 1) ^ (0u - ((uint32_t)z & 1)));
            sw += v->cas_w[j] < 0 ? -(int64_t)v->cas_w[j] : v->cas_w[j];
        }
        if (v->cas_clip > 32767 || sw * (v->cas_clip + 1) >= ((int64_t)1 << 31))
            return aurp_fail(err, AURP_ERR_CORRUPT, "lsmix stream: cascade weights out of range");
        for (int j = 0; j < LSX_CAS_NR; j++) v->cas_wrev[LSX_CAS_NR - 1 - j] = v->cas_w[j];
        if ((st = segments_fit(nseg, v->seg_lengths, pos, in_len, err)) != AURP_OK) return st;
    }
    const size_t head = stream_header_len(v);
    v->body_len = in_len - head;
    v->segs = in + head;
    if (!v->seg_lengths) { /* the decoder checks every segment's end */
        v->seg_lens = NULL;
        return AURP_OK;
    }
    v->seg_lens = in + pos;
    uint64_t total = 0;
    for (uint32_t s = 0; s < v->nseg; s++) {
        uint32_t len = aurp_get_u32(v->seg_lens + 4 * (size_t)s);
        if (len < 4) return aurp_fail(err, AURP_ERR_CORRUPT, "lsmix stream: segment %u too short", s);
        total += len;
    }
    if (total != v->body_len)
        return aurp_fail(err, AURP_ERR_CORRUPT,
                         "lsmix stream: segments hold %llu bytes, the stream has %zu after the header",
                         (unsigned long long)total, v->body_len);
    return AURP_OK;
}

/* ---- encoder ------------------------------------------------------------ */

typedef struct {
    const uint16_t *u;
    uint32_t W, H;
    lsx_params p;
    /* two banks of threads, each with its own count: a shared one let the
     * segments' count (up to the segments there are) leave LS more bands
     * than columns, and an empty band failed the frame */
    int ls_bands;   /* predict_band's column bands: min(threads, W) */
    int code_bands; /* encode_segment_range's runs of segments (coding_bands) */
    double *p_ls;   /* [W * H] */
    atomic_int failed;
    /* segments */
    const lsx_view *v;
    const int32_t *res;
    const uint8_t *ctx;
    const uint8_t *sbase;  /* the sign bases where v->sgn (sign_pass) */
    int sign_model;        /* the adaptive sign: 0 never, 1 where its estimate wins, 2 always (try_sign_model) */
    const ctx_model *snap; /* [code_bands] the model where each thread's segments start (seg_run) */
    uint8_t *seg_buf;
    size_t seg_cap;
    uint32_t *seg_len;
    /* the estimate's tables: lsx_log2_q16 of every frequency, and the bits
     * of every token at probability 1 (lsx_token_cost_q16) */
    uint32_t *log2_freq;                /* [2^CTX_PROB_BITS + 1] */
    uint32_t token_bits[CTX_TOKENS];
    /* each pipeline's DP candidate (try_candidates), where the DP ran:
     * the cascade trial of the pipeline takes its contexts */
    lsx_view dp_of[3];
} enc_job;

/* The encoder's best candidate so far: its estimate (model_pass; 0: none
 * yet), the length of its stream in out (0: it did not fit) and its view
 * (predictor set, cascade stage, contexts). */
typedef struct {
    uint64_t est;
    size_t len;
    lsx_view view;
} enc_best;

static void predict_band(void *arg, int bi)
{
    enc_job *j = arg;
    const uint32_t W = j->W;
    uint32_t c0 = band_edge(W, j->ls_bands, bi), c1 = band_edge(W, j->ls_bands, bi + 1);
    lsx_band b;
    lsx_state s; /* only the column means are used here */
    if (lsx_band_init(&b, &j->p, W, c0, c1) != 0) {
        atomic_store(&j->failed, 1);
        return;
    }
    if (lsx_state_init(&s, W, 0, 0) != 0) {
        lsx_band_free(&b);
        atomic_store(&j->failed, 1);
        return;
    }
    for (uint32_t m = 0; m < j->H; m++) {
        const uint16_t *cur = j->u + (size_t)m * W;
        if (m > 0) {
            lsx_band_prepare(&b, j->u, m, s.cm_a_prev, s.cm_b_prev);
            for (uint32_t n = c0; n < c1; n++)
                j->p_ls[(size_t)m * W + n] = lsx_band_predict(&b, cur, cur - W, s.cm_a, s.cm_b, n);
        }
        lsx_end_row(&s, m, cur);
    }
    lsx_state_free(&s);
    lsx_band_free(&b);
}

/* The coding threads: min(threads, nseg); thread t codes the segments from
 * seg_run(nseg, t, bands) up to seg_run(nseg, t + 1, bands). */
static uint32_t coding_bands(const lsx_view *v, int threads)
{
    return (uint32_t)threads < v->nseg ? (uint32_t)threads : v->nseg;
}
static uint32_t seg_run(uint32_t nseg, uint32_t t, uint32_t bands)
{
    return (uint32_t)((uint64_t)nseg * t / bands);
}

static void encode_segment_range(void *arg, int t)
{
    enc_job *j = arg;
    const lsx_view *v = j->v;
    const uint64_t pixels = (uint64_t)v->W * v->H;
    const uint32_t bands = (uint32_t)j->code_bands;
    uint32_t s0 = seg_run(v->nseg, (uint32_t)t, bands), s1 = seg_run(v->nseg, (uint32_t)t + 1, bands);
    size_t seg_pixels = (size_t)1 << v->seg_log2;
    ctx_sym *sym = malloc(4 * seg_pixels * sizeof *sym);
    ctx_model *cm = malloc(sizeof *cm);
    if (!sym || !cm) {
        atomic_store(&j->failed, 1);
        free(sym);
        free(cm);
        return;
    }
    for (uint32_t s = s0; s < s1; s++) {
        uint64_t a = (uint64_t)s << v->seg_log2;
        uint64_t b = a + seg_pixels < pixels ? a + seg_pixels : pixels;
        /* with the carry: this segment's first uniform symbols ride in the
         * state of the one before, and the next one's in this one's */
        lsx_carry_end own = {0, 0};
        uint32_t x0 = AURP_RANS_L;
        if (v->carry && s > 0) lsx_carry(j->res + a, pixels - a, &own);
        if (v->carry && b < pixels) x0 += lsx_carry(j->res + b, pixels - b, NULL);
        if (s == s0) *cm = j->snap[t]; /* then the model runs on across the segments */
        size_t ns = 0;
        for (uint64_t i = a; i < b; i++) {
            if (ctx_refresh_due(i)) ctx_model_refresh(cm);
            int nraw;
            uint32_t mag = (uint32_t)(j->res[i] < 0 ? -j->res[i] : j->res[i]);
            const uint32_t q = (uint32_t)(i - a);
            const int b = v->sgn ? j->sbase[i] : -1, t = ctx_token(mag, &nraw);
            ns += (size_t)ctx_symbols(cm, j->ctx[i], j->res[i], lsx_carry_raw(&own, q), lsx_carry_sign(&own, q), b,
                                      sym + ns);
            ctx_model_count(cm, j->ctx[i], t);
            if (v->sgn) ctx_bin_count(&cm->b, b, j->res[i], t, nraw);
        }
        size_t len = ctx_rans_encode(sym, ns, x0, j->seg_buf + (size_t)s * j->seg_cap, j->seg_cap);
        if (len == 0) atomic_store(&j->failed, 1);
        j->seg_len[s] = (uint32_t)len;
    }
    free(sym);
    free(cm);
}

/* Pass over the frame in raster order: the blend's prediction P1 of every
 * pixel, its residual e1 = x - P1, the smallest error level (the
 * context's second input) and the blend's part of the sign context
 * (lsx_sign_pre).  The blend's records use the members' errors only:
 * nothing here depends on the cascade stage. */
static aurp_status blend_pass(const lsx_view *v, const uint16_t *u, const double *p_ls, int32_t *e1,
                              uint16_t *p1, int32_t *eminv, uint16_t *spre)
{
    const uint32_t W = v->W;
    lsx_state s;
    if (lsx_state_init(&s, W, v->set, v->bg) != 0) return AURP_ERR_NOMEM;
    for (uint32_t m = 0; m < v->H; m++) {
        const uint16_t *cur = u + (size_t)m * W;
        for (uint32_t n = 0; n < W; n++) {
            int32_t emin = 0, z[4] = {0};
            uint16_t pred, pre = LSX_SIGN_PRE_ROW0;
            double pp[LSX_NPRED];
            if (m == 0) {
                pred = edge_prediction(cur, n);
                for (int k = 0; k < LSX_NPRED; k++) pp[k] = pred;
            } else {
                pp[0] = p_ls[(size_t)m * W + n];
                pp[1] = lsx_cm_predict(&s, n);
                lsx_sources(&s, cur, m, n, pp[0], z);
                lsx_row_predict(&s, n, z, pp);
                const double bl = lsx_blend(&s, m, n, pp, &emin);
                pred = aurp_round_clamp(bl);
                pre = lsx_sign_pre(bl, pred, pp[0], pp[s.np - 1]);
            }
            spre[(size_t)m * W + n] = pre;
            e1[(size_t)m * W + n] = (int32_t)cur[n] - pred;
            p1[(size_t)m * W + n] = pred;
            eminv[(size_t)m * W + n] = emin;
            lsx_record(&s, m, n, cur[n], pp, z);
        }
        lsx_end_row(&s, m, cur);
    }
    lsx_state_free(&s);
    return AURP_OK;
}

/* The coded residuals x - P, the activity and intensity token of their
 * contexts (the classes are chosen after) and their sign bases
 * (lsx_sign_base of the blend pass's spre): P = P1, or with the cascade
 * (v->cas) P1 + its correction from ec, the clipped e1. */
static void final_pass(const lsx_view *v, const uint16_t *u, const int16_t *ec, const uint16_t *p1,
                       const int32_t *eminv, const uint16_t *spre, int32_t *res, uint32_t *act, uint8_t *itok,
                       uint8_t *sbase, int32_t *above)
{
    const uint32_t W = v->W;
    for (uint32_t m = 0; m < v->H; m++) {
        int32_t *r0 = res + (size_t)m * W;
        const int32_t *r1 = m > 0 ? r0 - W : NULL, *r2 = m > 1 ? r0 - 2 * (size_t)W : NULL;
        const int cas = v->cas && m > 0;
        if (cas) lsx_cas_above(v->cas_w, v->cas_wide, ec + (size_t)m * W, W, m, 0, W, above);
        for (uint32_t n = 0; n < W; n++) {
            const size_t i = (size_t)m * W + n;
            const int32_t acc = cas ? lsx_cas_raster(v->cas_w, v->cas_wrev, ec, (int64_t)i) + above[n] : 0;
            const uint16_t pred = cas ? lsx_cas_apply(p1[i], lsx_cas_round(acc)) : p1[i];
            sbase[i] = (uint8_t)lsx_sign_base(spre[i], acc, pred, p1[i]);
            r0[n] = (int32_t)u[i] - pred;
            act[i] = activity16(v, r0, r1, r2, n, eminv[i]);
            itok[i] = (uint8_t)intensity_token(v, pred);
        }
    }
}

/* The intensity offset: a low quantile of the pixel values (the GPU
 * encoder's ioff_kernel finds the same one by a block scan). */
static uint16_t choose_ioff(const uint16_t *u, uint64_t pixels)
{
    uint32_t *hist = calloc(65536, sizeof *hist);
    if (!hist) return 0;
    for (uint64_t i = 0; i < pixels; i++) hist[u[i]]++;
    uint64_t want = pixels * LSX_IOFF_PERMILLE / 1000, acc = 0;
    uint32_t v = 0;
    for (; v < 65535; v++) {
        acc += hist[v];
        if (acc > want) break;
    }
    free(hist);
    return (uint16_t)v;
}

/* Intensity classes of about equal population: bounds on the intensity tokens. */
static void choose_intensity_classes(lsx_view *v, const uint8_t *itok, uint64_t pixels)
{
    uint64_t h[CTX_TOKENS] = {0};
    for (uint64_t i = 0; i < pixels; i++) h[itok[i]]++;
    v->nib = lsx_intensity_bounds(h, pixels, LSX_NIB, v->ibnd);
}

/* The model pass of candidate v: every pixel's context into ctx, the
 * model where each of the coding threads' runs of segments starts
 * (coding_bands, seg_run) into snap, and the estimate of the stream's
 * size in Q16 bits (lsx_token_cost_q16 of every pixel's token under the
 * table it is coded with, plus the header's and the segment states' bits):
 * exact integers, which the GPU encoder sums the same way. */
static uint64_t model_pass(const enc_job *j, const lsx_view *v, const int32_t *res, const uint32_t *act,
                           const uint8_t *itok, uint8_t *ctx, ctx_model *snap, int threads)
{
    const uint64_t pixels = (uint64_t)v->W * v->H;
    const uint32_t bands = coding_bands(v, threads);
    uint32_t run = 0; /* the next run's snapshot */
    for (uint64_t i = 0; i < pixels; i++)
        ctx[i] = (uint8_t)(ctx_of(act[i], v->thr, v->nctx) * v->nib + intensity_class(v, itok[i]));
    ctx_model cm;
    ctx_model_init(&cm, v->nctx * v->nib, v->nib, v->prior, 0);
    uint64_t bits = 0;
    for (uint64_t i = 0; i < pixels; i++) {
        if (run < bands && i == (uint64_t)seg_run(v->nseg, run, bands) << v->seg_log2) snap[run++] = cm;
        if (ctx_refresh_due(i)) ctx_model_refresh(&cm);
        int nraw;
        const int t = ctx_token((uint32_t)(res[i] < 0 ? -res[i] : res[i]), &nraw);
        bits += j->token_bits[t] - j->log2_freq[cm.freq[ctx[i]][t]];
        ctx_model_count(&cm, ctx[i], t);
    }
    return lsx_stream_estimate(bits, stream_header_len(v), v->nseg);
}

/* The binary contexts of the sign and the top raw bit (lsmix_sign.h) of
 * residuals res with sign bases sbase, walked once in raster order as
 * model_pass walks the tokens: their state where each coding thread's run
 * starts into snap (whose token models model_pass made), and the
 * estimate (lsx_sign_model_wins) of their symbols' bits coded with them,
 * est[0], and as uniform bits, est[1]. */
static void sign_pass(const enc_job *j, const lsx_view *v, const int32_t *res, const uint8_t *sbase,
                      ctx_model *snap, int threads, uint64_t est[2])
{
    const uint64_t pixels = (uint64_t)v->W * v->H;
    const uint32_t bands = coding_bands(v, threads);
    uint32_t run = 0;
    ctx_bin_model bm;
    memset(&bm, 0, sizeof bm);
    ctx_bin_refresh(&bm);
    for (uint64_t i = 0; i < pixels; i++) {
        if (run < bands && i == (uint64_t)seg_run(v->nseg, run, bands) << v->seg_log2) {
            snap[run].bin = 1;
            snap[run++].b = bm;
        }
        if (ctx_refresh_due(i)) ctx_bin_refresh(&bm);
        int nraw;
        const uint32_t mag = (uint32_t)(res[i] < 0 ? -res[i] : res[i]);
        const int t = ctx_token(mag, &nraw);
        if (mag != 0) {
            const uint32_t f0 = bm.sign_f0[lsx_sign_ctx(sbase[i], t)];
            est[0] += lsx_bin_cost_q16(res[i] < 0 ? (1u << LSX_BIN_BITS) - f0 : f0, j->log2_freq);
            est[1] += 1u << LSX_COST_Q;
        }
        if (nraw > 0) {
            const uint32_t f0 = bm.raw_f0[t];
            est[0] += lsx_bin_cost_q16(mag >> (nraw - 1) & 1 ? (1u << LSX_BIN_BITS) - f0 : f0, j->log2_freq);
            est[1] += 1u << LSX_COST_Q;
        }
        ctx_bin_count(&bm, sbase[i], res[i], t, nraw);
    }
}

/* The rANS segments of the candidate whose model_pass ran last (ctx,
 * snap) into j->seg_buf / j->seg_len; returns the stream length, or 0 on
 * failure. */
static size_t code_segments(enc_job *j, const lsx_view *v, const int32_t *res, const uint8_t *ctx,
                            const ctx_model *snap, int threads)
{
    j->v = v;
    j->res = res;
    j->ctx = ctx;
    j->snap = snap;
    j->code_bands = (int)coding_bands(v, threads);
    aurp_parallel(j->code_bands, encode_segment_range, j);
    if (atomic_load(&j->failed)) return 0;
    size_t len = stream_header_len(v);
    for (uint32_t s = 0; s < v->nseg; s++) len += j->seg_len[s];
    return len;
}

static void write_stream(uint8_t *out, const lsx_view *v, const enc_job *j)
{
    size_t pos = lsx_write_header(out, v, j->seg_len);
    for (uint32_t s = 0; s < v->nseg; s++) {
        memcpy(out + pos, j->seg_buf + (size_t)s * j->seg_cap, j->seg_len[s]);
        pos += j->seg_len[s];
    }
}

/* The residuals res (activities act, intensity tokens itok) with the
 * prediction of v0 (set, cascade), coded with each context candidate of
 * want: activity (LSX_NCTX, then LSX_NCTX_WIDE contexts) x intensity
 * classes of equal population; activity alone (where brightness says
 * nothing the activity does not); and, for images below 2^16 pixels, too
 * few to teach many contexts their statistics, a single context; and the
 * contexts a dynamic program fits to this residual set's histogram
 * (lsmix_thresholds.c: 12 activity runs x 4 intensity runs; it wins on most
 * frames, by 0.1-0.5 %, but its static cost model can miss).  Each is
 * judged by its model pass's estimate (model_pass: the bits of its tokens
 * under its own adaptive tables, which the coded length follows to a few
 * bytes); one whose estimate is below best->est is coded into out (if it
 * fits; best->len 0 if not), becomes the best, and sets *mask to its bit.
 * So the coder runs only for candidates that lead, and the GPU encoder,
 * which makes the same estimates, codes only the final winner. */
static aurp_status try_candidates(enc_job *j, const lsx_view *v0, int threads, unsigned want,
                                  const lsx_view *dp_given, lsx_view *dp_made, const int32_t *res,
                                  const uint32_t *act, const uint8_t *itok, uint8_t *ctx, ctx_model *snap,
                                  uint8_t *out, size_t cap, enc_best *best, unsigned *mask, aurp_error *err)
{
    const uint64_t pixels = (uint64_t)v0->W * v0->H;
    lsx_view v = *v0;
    v.nctx = 1;
    v.nib = 1;
    lsx_view full = v, wide = v, activity = v;
    full.nctx = activity.nctx = LSX_NCTX;
    wide.nctx = LSX_NCTX_WIDE;
    ctx_default_thresholds(full.thr, full.nctx);
    ctx_default_thresholds(wide.thr, wide.nctx);
    ctx_default_thresholds(activity.thr, activity.nctx);
    choose_intensity_classes(&full, itok, pixels);
    wide.nib = full.nib;
    memcpy(wide.ibnd, full.ibnd, sizeof wide.ibnd);
    /* candidate 4: activity thresholds and intensity bounds by the DP over
     * the histogram of (a16 bin, intensity token, residual token), starting
     * from full's intensity classes, copied to *dp_made; or those of
     * *dp_given: the cascade trial takes its pipeline's instead of a DP of
     * its own (the cascade moves few residuals across the DP's cells: on
     * the 26 frames of research round 17 the streams came out 0.001 %
     * larger in all, -0.02 to +0.06 % by frame; and the trial is the GPU
     * frame's longest path) */
    lsx_view dp = full;
    int have_dp = 0;
    if ((want >> 4 & 1) && dp_given) {
        dp.nctx = dp_given->nctx;
        memcpy(dp.thr, dp_given->thr, sizeof dp.thr);
        dp.nib = dp_given->nib;
        memcpy(dp.ibnd, dp_given->ibnd, sizeof dp.ibnd);
        have_dp = 1;
    } else if (want >> 4 & 1) {
        uint32_t *hist = malloc(sizeof *hist * LSX_THR_CELLS);
        if (hist) {
            lsx_thr_histogram(act, itok, res, pixels, hist);
            have_dp = lsx_dp_contexts(hist, LSX_DP_NCTX, LSX_NIB, threads, &dp) == 0;
        }
        free(hist);
        if (have_dp && dp_made) *dp_made = dp;
    }
    const lsx_view *cand[LSX_NCAND] = {&full, &wide, &activity, &v, &dp};
    for (int k = 0; k < LSX_NCAND; k++) {
        const int repeats = k > 0 && cand[k]->nib == cand[k - 1]->nib && cand[k]->nctx == cand[k - 1]->nctx;
        if (!lsx_candidate_tried(k, want, pixels, have_dp, repeats)) continue;
        const uint64_t est = model_pass(j, cand[k], res, act, itok, ctx, snap, threads);
        if (best->est != 0 && est >= best->est) continue;
        size_t len = code_segments(j, cand[k], res, ctx, snap, threads);
        if (len == 0) return aurp_fail(err, AURP_ERR_NOMEM, "image %ux%u: rANS segment failed", v.W, v.H);
        if (len <= cap) write_stream(out, cand[k], j);
        best->est = est;
        best->len = len <= cap ? len : 0;
        best->view = *cand[k];
        *mask = 1u << k;
    }
    return AURP_OK;
}

/* The planes of one predictor set's pass (enc_planes): the blend's
 * prediction P1, its residual e1, the smallest error level of each pixel,
 * and, for the cascade, e1 clipped; then the coded residuals, their
 * activities and intensity tokens. */
typedef struct {
    int32_t *e1, *emin, *res;
    uint16_t *p1;
    int16_t *ec;
    uint32_t *act;
    uint8_t *itok;
    int32_t *above; /* a row: the cascade's part from the rows above */
    uint16_t *spre; /* the blend's part of the sign contexts (lsx_sign_pre) */
    uint8_t *sbase; /* the sign bases (lsx_sign_base) */
} enc_planes;

/* Pipeline pipe (predictor set v0->set on j->p_ls), without the cascade:
 * the blend's residuals coded with the context candidates of *mask
 * (try_candidates).  Leaves in *mask the bit of the candidate that made
 * the stream (0 when none did). */
static aurp_status try_residuals(enc_job *j, const lsx_view *v0, int pipe, int threads, const enc_planes *pl,
                                 uint8_t *ctx, ctx_model *snap, uint8_t *out, size_t cap, enc_best *best,
                                 unsigned *mask, aurp_error *err)
{
    const unsigned want = *mask;
    lsx_view v = *v0;
    v.cas = 0;
    if (blend_pass(&v, j->u, j->p_ls, pl->e1, pl->p1, pl->emin, pl->spre) != AURP_OK)
        return aurp_fail(err, AURP_ERR_NOMEM, "image %ux%u: out of memory for the predictors", v.W, v.H);
    *mask = 0;
    final_pass(&v, j->u, NULL, pl->p1, pl->emin, pl->spre, pl->res, pl->act, pl->itok, pl->sbase, pl->above);
    return try_candidates(j, &v, threads, want, NULL, &j->dp_of[pipe], pl->res, pl->act, pl->itok, ctx, snap, out,
                          cap, best, mask, err);
}

/* The winner of try_residuals (pipeline pipe, set v0->set, context
 * candidate bit want) again with the cascade stage fitted to its e1
 * (lsx_cas_fit): the stream where smaller.  pl holds the winner's blend
 * pass (e1, P1, emin).  The GPU encoder replays this on the same winner. */
static aurp_status try_cascade(enc_job *j, const lsx_view *v0, int pipe, int threads, unsigned want,
                               const enc_planes *pl, uint8_t *ctx, ctx_model *snap, uint8_t *out, size_t cap,
                               enc_best *best, aurp_error *err)
{
    lsx_view v = *v0;
    v.cas = 0;
    if (!lsx_cas_fit(&v, pl->e1, pl->ec, threads)) return AURP_OK;
    final_pass(&v, j->u, pl->ec, pl->p1, pl->emin, pl->spre, pl->res, pl->act, pl->itok, pl->sbase, pl->above);
    unsigned mask = 0;
    return try_candidates(j, &v, threads, want, &j->dp_of[pipe], NULL, pl->res, pl->act, pl->itok, ctx, snap, out,
                          cap, best, &mask, err);
}

/* The winner best->view (its blend pass in pl) coded again with the
 * adaptive sign and top raw bit (header byte 23 bit 6) where their
 * estimate (sign_pass) is below the uniform bits they replace, or
 * always (sign_model 2: the tests): on frames below about 30 000 pixels
 * their 112 contexts can cost more to learn than they save (research
 * round 40).  An estimate, not the two streams' lengths, decides, so that
 * the GPU encoder codes the winner once.  Its residuals and contexts are
 * made again first (a later candidate's or the cascade trial's may be in
 * the planes). */
static aurp_status try_sign_model(enc_job *j, const enc_planes *pl, uint8_t *ctx, ctx_model *snap, int threads,
                                  int sign_model, uint8_t *out, size_t cap, enc_best *best, aurp_error *err)
{
    lsx_view on = best->view;
    on.sgn = 1;
    final_pass(&on, j->u, pl->ec, pl->p1, pl->emin, pl->spre, pl->res, pl->act, pl->itok, pl->sbase, pl->above);
    model_pass(j, &on, pl->res, pl->act, pl->itok, ctx, snap, threads);
    uint64_t est[2] = {0, 0};
    sign_pass(j, &on, pl->res, pl->sbase, snap, threads, est);
    if (!lsx_sign_model_wins(est[0], est[1]) && sign_model != 2) return AURP_OK;
    j->sbase = pl->sbase;
    const size_t len = code_segments(j, &on, pl->res, ctx, snap, threads);
    if (len == 0) return aurp_fail(err, AURP_ERR_NOMEM, "image %ux%u: rANS segment failed", on.W, on.H);
    best->len = len <= cap ? len : 0;
    if (len <= cap) write_stream(out, &on, j);
    return AURP_OK;
}

/* The LS predictions of params lp into j->p_ls (all bands). */
static int predict_ls(enc_job *j, lsx_params lp)
{
    j->p = lp;
    aurp_parallel(j->ls_bands, predict_band, j);
    return atomic_load(&j->failed) ? -1 : 0;
}

aurp_status lsx_image_encode(const uint16_t *u, uint32_t W, uint32_t H, const aurp_params *p,
                             int threads, uint8_t *out, size_t cap, size_t *out_len,
                             aurp_error *err)
{
    return lsx_image_encode_set(u, W, H, p, LSX_WRITE_SET, LSX_SIGN_MODEL, threads, out, cap, out_len, err);
}

aurp_status lsx_image_encode_set(const uint16_t *u, uint32_t W, uint32_t H, const aurp_params *p, int row_set,
                                 int sign_model, int threads, uint8_t *out, size_t cap, size_t *out_len,
                                 aurp_error *err)
{
    *out_len = 0;
    if (row_set != 2 && row_set != 3) return aurp_fail(err, AURP_ERR_PARAM, "lsmix: row-member set %d", row_set);
    const uint64_t pixels = (uint64_t)W * H;
    const lsx_params ls_of[2] = {{p->order, p->equations, LSX_FORGET, LSX_RIDGE, 0},
                                 {p->order, p->equations, LSX_ROW_FORGET, LSX_RIDGE, row_set == 3}};
    lsx_view v = {.p = ls_of[0], .W = W, .H = H, .seg_log2 = LSX_SEG_LOG2, .nctx = 1, .nib = 1,
                  .prior = LSX_PRIOR, .bg = LSX_BG};
    v.nseg = (uint32_t)((pixels + (1u << LSX_SEG_LOG2) - 1) >> LSX_SEG_LOG2);
    v.seg_lengths = LSX_SEG_LENGTHS;
    v.carry = LSX_CARRY && !LSX_SEG_LENGTHS;
    v.ioff = choose_ioff(u, pixels);
    if (threads < 1) threads = 1;
    if (threads > MAX_THREADS) threads = MAX_THREADS;

    aurp_status st = AURP_OK;
    enc_job j = {.u = u, .W = W, .H = H, .p = v.p, .sign_model = sign_model};
    atomic_init(&j.failed, 0);
    j.p_ls = malloc((size_t)pixels * sizeof *j.p_ls);
    enc_planes pl = {malloc((size_t)pixels * sizeof *pl.e1), malloc((size_t)pixels * sizeof *pl.emin),
                     malloc((size_t)pixels * sizeof *pl.res), malloc((size_t)pixels * sizeof *pl.p1),
                     malloc((size_t)pixels * sizeof *pl.ec), malloc((size_t)pixels * sizeof *pl.act),
                     malloc((size_t)pixels), malloc((size_t)W * sizeof *pl.above),
                     malloc((size_t)pixels * sizeof *pl.spre), malloc((size_t)pixels)};
    uint8_t *ctx = malloc((size_t)pixels);
    ctx_model *snap = malloc((size_t)coding_bands(&v, threads) * sizeof *snap);
    j.seg_cap = 4 + 4 * ((size_t)1 << LSX_SEG_LOG2);
    j.seg_buf = malloc((size_t)v.nseg * j.seg_cap);
    j.seg_len = malloc((size_t)v.nseg * sizeof *j.seg_len);
    j.log2_freq = malloc((((size_t)1 << CTX_PROB_BITS) + 1) * sizeof *j.log2_freq);
    if (!j.p_ls || !pl.e1 || !pl.emin || !pl.res || !pl.p1 || !pl.ec || !pl.act || !pl.itok || !pl.above ||
        !pl.spre || !pl.sbase || !ctx || !snap || !j.seg_buf || !j.seg_len || !j.log2_freq) {
        st = aurp_fail(err, AURP_ERR_NOMEM, "image %ux%u: out of memory", W, H);
        goto done;
    }
    for (uint32_t f = 1; f <= (1u << CTX_PROB_BITS); f++) j.log2_freq[f] = lsx_log2_q16(f);
    j.log2_freq[0] = 0; /* (no table holds 0: every frequency is at least 1) */
    for (int t = 0; t < CTX_TOKENS; t++) j.token_bits[t] = lsx_token_cost_q16(1, t, CTX_PROB_BITS);

    /* Candidates, each judged by its estimate and the smallest one's
     * stream kept (the decoder only reads what the header says), three
     * pipelines in turn: 0, predictor
     * set 0 on the LS of (F 2, M) with every context candidate of
     * try_residuals; 1, the row-member set (row_set: 2 or 3) on the same LS
     * with the contexts that won; and, where that won, 2, the same set on
     * the LS with forgetting 2^-1 (weighted in set 3) and the caller's K
     * and M (a relation between rows that changes every row wants a short
     * memory) with every context candidate.  (Set 1, set 2 without RL and
     * with AF, is no longer written: set 2 was smaller wherever set 1 had
     * won; set 3 is set 2 with LG, RC and BR for CM, AL and BG.)  Then the winner with the cascade stage. */
    enc_best best = {.est = 0, .len = 0};
    j.ls_bands = (uint32_t)threads < W ? threads : (int)W;
    int win = -1, ls_now = 0, planes_of = -1; /* planes_of: the pipeline whose blend pass pl holds */
    unsigned win_kind = 0, mask = ~0u;
    if (predict_ls(&j, ls_of[0]) != 0) {
        st = aurp_fail(err, AURP_ERR_NOMEM, "image %ux%u: out of memory for the predictors", W, H);
        goto done;
    }
    for (int pipe = 0; pipe < 3 && st == AURP_OK; pipe++) {
        if (pipe == 2) {
            if (mask == 0) break; /* set 2 lost to set 0 */
            mask = ~0u;
            if (predict_ls(&j, ls_of[1]) != 0) {
                st = aurp_fail(err, AURP_ERR_NOMEM, "image %ux%u: out of memory for the predictors", W, H);
                goto done;
            }
            ls_now = 1;
        }
        v.set = pipe == 0 ? 0 : row_set;
        v.p = ls_of[pipe == 2];
        st = try_residuals(&j, &v, pipe, threads, &pl, ctx, snap, out, cap, &best, &mask, err);
        planes_of = pipe;
        if (st == AURP_OK && mask != 0) win = pipe, win_kind = mask;
    }
    if (st == AURP_OK && win >= 0) {
        v.set = win == 0 ? 0 : row_set;
        v.p = ls_of[win == 2];
        v.cas = 0;
        if (planes_of != win) { /* a later pipeline's pass is in pl: the winner's again */
            if (ls_now != (win == 2) && predict_ls(&j, ls_of[win == 2]) != 0) {
                st = aurp_fail(err, AURP_ERR_NOMEM, "image %ux%u: out of memory for the predictors", W, H);
                goto done;
            }
            if (blend_pass(&v, j.u, j.p_ls, pl.e1, pl.p1, pl.emin, pl.spre) != AURP_OK) {
                st = aurp_fail(err, AURP_ERR_NOMEM, "image %ux%u: out of memory for the predictors", W, H);
                goto done;
            }
        }
        if (LSX_CASCADE) st = try_cascade(&j, &v, win, threads, win_kind, &pl, ctx, snap, out, cap, &best, err);
        /* then the winner, its blend pass in pl, with the adaptive sign */
        if (st == AURP_OK && sign_model)
            st = try_sign_model(&j, &pl, ctx, snap, threads, sign_model, out, cap, &best, err);
    }
    if (st == AURP_OK && best.est != 0 && best.len == 0)
        st = aurp_fail(err, AURP_ERR_CAPACITY, "image %ux%u: output buffer of %zu bytes too small", W, H, cap);
    *out_len = st == AURP_OK ? best.len : 0;

done:
    free(j.p_ls);
    free(pl.e1);
    free(pl.emin);
    free(pl.res);
    free(pl.p1);
    free(pl.ec);
    free(pl.act);
    free(pl.itok);
    free(pl.above);
    free(pl.spre);
    free(pl.sbase);
    free(ctx);
    free(snap);
    free(j.seg_buf);
    free(j.seg_len);
    free(j.log2_freq);
    return st;
}

/* ---- decoder ------------------------------------------------------------ */

/* With helpers, the columns are cut into chunks of this many (a multiple of
 * 4, the solver's lanes), each its own band, so that chunk k of row m can be
 * prepared as soon as row m-1 is decoded past it (wavefront.c).  Smaller
 * chunks hand over sooner but recompute more window edges (M-1 columns
 * each); 64 to 192 measured alike on a 1024-column frame with 2 threads. */
#define DECODE_CHUNK 128
/* Rows of the cascade's plane besides the history it reads (the history
 * is copied back every this many rows). */
#define DECODE_CAS_ROWS 32
/* How often the decoding thread says how far its row is (columns). */
#define DECODE_PUBLISH_COLS 16

/* The column means the preparers read ("before row m-1" for row m), copied
 * out of the decoder's state: the state moves on at the end of every row
 * while helpers may still be preparing from them.  Row r's copy is
 * rewritten for row r+3, after every job of row r+1 (its only readers) was
 * awaited. */
#define CM_RING 3

/* The decoder's state between rows (aurp_decode_wavefront calls back). */
typedef struct {
    const lsx_view *v;
    lsx_band *bands;
    uint32_t nb;
    lsx_state s;
    int32_t *cm_ring_a[CM_RING], *cm_ring_b[CM_RING]; /* column means before row r: [r % CM_RING] */
    uint16_t *img;
    int32_t *rows; /* residuals of rows m, m-1, m-2 */
    ctx_model *cm;
    ctx_rans_dec dec;
    lsx_carry_dec carry; /* the current segment's carry (lsmix_carry.h) while open */
    uint64_t seg_off, i; /* seg_off: where the current segment starts in the body */
    /* the cascade: the blend's residuals e1, clipped, of rows ec_m0 ..
     * (ec_rows of them at most; row ec_m0 + r at ec + r * W) */
    int16_t *ec;
    uint32_t ec_m0, ec_rows, ec_hist;
    /* the current row's part of the corrections from the rows above, made
     * at the row's start (made by the preparers with the bands instead:
     * the echelle frames 1-3 % faster, the dark and bias frames up to 9 %
     * slower, where the preparers are the busier thread) */
    int32_t *above;
} dec_rows;

static void dec_prepare(void *arg, uint32_t b, uint32_t m)
{
    dec_rows *d = arg;
    uint32_t r = (m + CM_RING - 1) % CM_RING; /* row m-1's copy (row 0 prepares nothing) */
    lsx_band_prepare(&d->bands[b], d->img, m, d->cm_ring_a[r], d->cm_ring_b[r]);
}

/* Keeps the column means before row m for the preparers of row m+1. */
static void dec_keep_column_means(dec_rows *d, uint32_t m)
{
    memcpy(d->cm_ring_a[m % CM_RING], d->s.cm_a, d->v->W * sizeof(int32_t));
    memcpy(d->cm_ring_b[m % CM_RING], d->s.cm_b, d->v->W * sizeof(int32_t));
}

/* Decodes row m left to right; nonzero when the stream is corrupt. */
static int dec_reconstruct(void *arg, uint32_t m, aurp_wavefront *wf)
{
    dec_rows *d = arg;
    const lsx_view *v = d->v;
    const uint32_t W = v->W;
    const uint64_t seg_mask = ((uint64_t)1 << v->seg_log2) - 1;
    uint16_t *cur = d->img + (size_t)m * W;
    int32_t *r0 = d->rows + (size_t)(m % 3) * W;
    const int32_t *r1 = m > 0 ? d->rows + (size_t)((m + 2) % 3) * W : NULL;
    const int32_t *r2 = m > 1 ? d->rows + (size_t)((m + 1) % 3) * W : NULL;
    lsx_state *s = &d->s;
    uint32_t b = 0;
    if (v->cas && m - d->ec_m0 == d->ec_rows) { /* the plane is full: keep the last ec_hist rows */
        memmove(d->ec, d->ec + (size_t)(d->ec_rows - d->ec_hist) * W, (size_t)d->ec_hist * W * sizeof *d->ec);
        d->ec_m0 = m - d->ec_hist;
    }
    /* the correction of row m reads the support's rows above and the
     * LSX_CAS_NR pixels before (m, n): from row ec_m0 on they are all there
     * when m - ec_m0 >= ec_hist, so that row m - ec_m0 of the plane has the
     * same correction; the rows-above part is summed for the whole row now
     * (it reads nothing of row m) */
    int16_t *ec_row = v->cas ? d->ec + (size_t)(m - d->ec_m0) * W : NULL;
    const int32_t *above = d->above;
    if (v->cas && m > 0) lsx_cas_above(v->cas_w, v->cas_wide, ec_row, W, m, 0, W, d->above);
    aurp_wavefront_await(wf, m, 0);
    for (uint32_t n = 0; n < W; n++, d->i++) {
        if (n == d->bands[b].c1) aurp_wavefront_await(wf, m, ++b);
        if ((d->i & seg_mask) == 0) {
            uint32_t sidx = (uint32_t)(d->i >> v->seg_log2);
            if (sidx > 0) { /* the segment before ends where its bytes were read */
                if (d->carry.open && lsx_carry_close(&d->carry) != 0) return -1;
                if ((v->seg_lengths  ? ctx_rans_dec_finish(&d->dec)
                     : v->carry      ? ctx_rans_dec_carry(&d->dec, &d->carry)
                                     : ctx_rans_dec_at_start_state(&d->dec)) != 0)
                    return -1;
                d->seg_off += d->dec.pos;
            }
            /* without the lengths a segment may read the rest of the body;
             * it ends where its coder comes back to its initial state */
            const size_t len = v->seg_lengths ? aurp_get_u32(v->seg_lens + 4 * (size_t)sidx) : v->body_len - d->seg_off;
            if (ctx_rans_dec_init(&d->dec, v->segs + d->seg_off, len) != 0) return -1;
        }
        if (ctx_refresh_due(d->i)) ctx_model_refresh(d->cm);
        int32_t emin = 0, z[4] = {0};
        uint16_t pred, pre = LSX_SIGN_PRE_ROW0;
        double pp[LSX_NPRED];
        if (m == 0) {
            pred = edge_prediction(cur, n);
        } else {
            pp[0] = lsx_band_predict(&d->bands[b], cur, cur - W, s->cm_a, s->cm_b, n);
            pp[1] = lsx_cm_predict(s, n);
            lsx_sources(s, cur, m, n, pp[0], z);
            lsx_row_predict(s, n, z, pp);
            const double bl = lsx_blend(s, m, n, pp, &emin);
            pred = aurp_round_clamp(bl);
            if (v->sgn) pre = lsx_sign_pre(bl, pred, pp[0], pp[s->np - 1]);
        }
        const int32_t pred1 = pred;
        int32_t acc = 0;
        if (v->cas && m > 0) {
            const int64_t i = (int64_t)(m - d->ec_m0) * W + n;
            acc = lsx_cas_raster(v->cas_w, v->cas_wrev, d->ec, i) + above[n];
            pred = lsx_cas_apply(pred1, lsx_cas_round(acc));
        }
        int c = context_at(v, r0, r1, r2, n, emin, pred);
        int32_t e;
        if (d->carry.open && (d->i & seg_mask) >= LSX_CARRY_PIXELS && lsx_carry_close(&d->carry) != 0) return -1;
        const int sb = v->sgn ? lsx_sign_base(pre, acc, pred, pred1) : -1;
        if (v->sgn) { /* the adaptive sign and top raw bit (lsmix_sign.h), the carry open or not */
            const int was_open = d->carry.open;
            if (ctx_decode_residual_bin(&d->dec, d->cm, c, was_open ? &d->carry : NULL, sb, &e) != 0) return -1;
            if (was_open && !d->carry.open && lsx_carry_close(&d->carry) != 0) return -1;
        } else if (d->carry.open) { /* the segment's first pixels: symbols from the carry while they fit */
            if (ctx_decode_residual_carry(&d->dec, d->cm, c, &d->carry, &e) != 0) return -1;
            if (!d->carry.open && lsx_carry_close(&d->carry) != 0) return -1;
        } else if (ctx_decode_residual(&d->dec, d->cm, c, &e) != 0) {
            return -1;
        }
        int32_t x = (int32_t)pred + e;
        if (x < 0 || x > 65535) return -1;
        cur[n] = (uint16_t)x;
        r0[n] = e;
        if (v->cas) ec_row[n] = lsx_cas_clipped(x - pred1, v->cas_clip);
        int nraw;
        const int t = ctx_token((uint32_t)(e < 0 ? -e : e), &nraw);
        ctx_model_count(d->cm, c, t);
        if (v->sgn) ctx_bin_count(&d->cm->b, sb, e, t, nraw);
        if (m == 0)
            for (int k = 0; k < LSX_NPRED; k++) pp[k] = pred;
        lsx_record(s, m, n, cur[n], pp, z);
        if (n % DECODE_PUBLISH_COLS == DECODE_PUBLISH_COLS - 1) aurp_wavefront_publish(wf, m, n + 1);
    }
    lsx_end_row(s, m, cur);
    dec_keep_column_means(d, m + 1);
    return 0;
}

aurp_status lsx_image_decode(const uint8_t *in, size_t in_len, uint32_t W, uint32_t H,
                             int threads, uint16_t *img, aurp_error *err)
{
    lsx_view v;
    aurp_status st = parse(in, in_len, &v, err);
    if (st != AURP_OK) return st;
    if (v.W != W || v.H != H)
        return aurp_fail(err, AURP_ERR_CORRUPT, "image stream is %ux%u, expected %ux%u", v.W, v.H, W, H);
    if (threads < 1) threads = 1;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    /* one thread: one band, prepared whole before its row (no window edges
     * recomputed); helpers: chunks they can take while the row above decodes */
    uint32_t nb = threads == 1 ? 1 : (W + DECODE_CHUNK - 1) / DECODE_CHUNK;
    dec_rows d = {.v = &v, .img = img};
    /* the cascade reads lags up to LSX_CAS_NR pixels back in readout order
     * and its support's rows up: a plane of DECODE_CAS_ROWS rows more than
     * those (ec_hist), slid back when full (a whole frame's plane cost its
     * page faults on the decoding thread) */
    d.ec_hist = (uint32_t)lsx_cas_rows_up(v.cas_wide) + (LSX_CAS_NR + W - 1) / W;
    d.ec_rows = d.ec_hist + DECODE_CAS_ROWS < H ? d.ec_hist + DECODE_CAS_ROWS : H;
    if (v.cas && (!(d.ec = malloc((size_t)W * d.ec_rows * sizeof *d.ec)) ||
                  !(d.above = malloc((size_t)W * sizeof *d.above)))) {
        free(d.ec);
        return aurp_fail(err, AURP_ERR_NOMEM, "image %ux%u: out of memory", W, H);
    }
    int have_state = lsx_state_init(&d.s, W, v.set, v.bg) == 0;
    d.bands = calloc(nb, sizeof *d.bands);
    uint32_t *need = malloc(nb * sizeof *need);
    d.rows = malloc(3 * (size_t)W * sizeof *d.rows);
    d.cm = malloc(sizeof *d.cm);
    int have_ring = 1;
    for (int r = 0; r < CM_RING; r++) {
        d.cm_ring_a[r] = malloc((size_t)W * sizeof(int32_t));
        d.cm_ring_b[r] = malloc((size_t)W * sizeof(int32_t));
        have_ring &= d.cm_ring_a[r] && d.cm_ring_b[r];
    }
    if (!d.bands || !need || !d.rows || !d.cm || !have_state || !have_ring) {
        st = aurp_fail(err, AURP_ERR_NOMEM, "image %ux%u: out of memory", W, H);
        goto done;
    }
    for (; d.nb < nb; d.nb++) {
        uint32_t c0 = d.nb * DECODE_CHUNK, c1 = nb == 1 || c0 + DECODE_CHUNK > W ? W : c0 + DECODE_CHUNK;
        if (lsx_band_init(&d.bands[d.nb], &v.p, W, c0, c1) != 0) {
            st = aurp_fail(err, AURP_ERR_NOMEM, "image %ux%u: out of memory for the predictors", W, H);
            goto done;
        }
        /* the band's training reads row m-1 up to its last window column
         * (the target there; the lags lie left of it) */
        need[d.nb] = d.bands[d.nb].hi;
    }
    ctx_model_init(d.cm, v.nctx * v.nib, v.nib, v.prior, v.sgn);
    dec_keep_column_means(&d, 0);
    int bad = aurp_decode_wavefront(threads, W, H, nb, need, dec_prepare, dec_reconstruct, &d);
    if (bad == -2)
        st = aurp_fail(err, AURP_ERR_NOMEM, "image %ux%u: out of memory for the decoder's threads", W, H);
    else if (bad != 0 || ctx_rans_dec_finish(&d.dec) != 0 || (d.carry.open && lsx_carry_close(&d.carry) != 0))
        st = aurp_fail(err, AURP_ERR_CORRUPT, "lsmix stream: the residuals do not decode");
done:
    for (uint32_t b = 0; b < d.nb; b++) lsx_band_free(&d.bands[b]);
    if (have_state) lsx_state_free(&d.s);
    for (int r = 0; r < CM_RING; r++) {
        free(d.cm_ring_a[r]);
        free(d.cm_ring_b[r]);
    }
    free(d.bands);
    free(need);
    free(d.rows);
    free(d.cm);
    free(d.ec);
    free(d.above);
    return st;
}

/* The lsmix image stream (docs/FORMAT.md section 3): encoder and decoder.
 *
 * Encoder: the LS predictions of every pixel, one band of columns a thread
 * (the encoder has every pixel, so bands are independent); then, in raster
 * order, the blend, the residual and its context; then the token counts
 * walked once to snapshot the model at every segment start; then the rANS
 * segments, a thread each, each replaying the model from its snapshot.
 * Decoder: row by row, the bands solve the row's coefficients, then the
 * pixels are decoded left to right (contexts and blend need the pixels and
 * residuals left of them). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lsmix.h"
#include "predict.h"

#define LSX_HEADER 16
#define LSX_SEG_LOG2 14
#define LSX_NCTX 12
#define LSX_FORGET 4
#define LSX_RIDGE 12
#define MAX_THREADS 64
#define DECODE_MAX_BANDS 8 /* as the paper decoder: past that, waiting costs more than solving */

typedef struct {
    lsx_params p;
    uint32_t W, H;
    int nctx, seg_log2;
    uint32_t thr[CTX_MAX];
    uint32_t nseg;
    const uint8_t *seg_lens, *segs;
} lsx_view;

static uint32_t band_edge(uint32_t width, int nb, int b)
{
    return (uint32_t)((uint64_t)width * (uint64_t)b / (uint64_t)nb);
}

/* The activity of the residuals around (m, n): 2|eW| + 2|eN| + |eNW| +
 * |eNE| + |eWW| + |eNN|; rows r0 = m, r1 = m-1, r2 = m-2 (NULL above the image). */
static uint32_t residual_activity(const int32_t *r0, const int32_t *r1, const int32_t *r2,
                                  uint32_t W, uint32_t n)
{
#define ABSV(v) ((uint32_t)((v) < 0 ? -(v) : (v)))
    uint32_t a = 0;
    if (n > 0) a += 2 * ABSV(r0[n - 1]);
    if (n > 1) a += ABSV(r0[n - 2]);
    if (r1) {
        a += 2 * ABSV(r1[n]);
        if (n > 0) a += ABSV(r1[n - 1]);
        if (n + 1 < W) a += ABSV(r1[n + 1]);
    }
    if (r2) a += ABSV(r2[n]);
    return a;
#undef ABSV
}

static int context_at(const lsx_view *v, const int32_t *r0, const int32_t *r1, const int32_t *r2,
                      uint32_t n, int32_t emin)
{
    uint64_t act16 = 8 * (uint64_t)residual_activity(r0, r1, r2, v->W, n) + (uint64_t)emin;
    return ctx_of(act16 > UINT32_MAX ? UINT32_MAX : (uint32_t)act16, v->thr, v->nctx);
}

/* Row 0 and the first pixel: the left neighbour, or 0. */
static inline uint16_t edge_prediction(const uint16_t *row, uint32_t n)
{
    return n ? row[n - 1] : 0;
}

/* ---- header ------------------------------------------------------------ */

static size_t header_len(int nctx, uint32_t nseg)
{
    return LSX_HEADER + 4 * (size_t)(nctx - 1) + 4 * (size_t)nseg;
}

static void write_header(uint8_t *h, const lsx_view *v)
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
    for (int i = 0; i < v->nctx - 1; i++) aurp_put_u32(h + LSX_HEADER + 4 * i, v->thr[i]);
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
    if (nctx < 1 || nctx > CTX_MAX)
        return aurp_fail(err, AURP_ERR_CORRUPT, "lsmix stream: %d contexts", nctx);
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

static aurp_status parse(const uint8_t *in, size_t in_len, lsx_view *v, aurp_error *err)
{
    aurp_stream_view sv;
    memset(&sv, 0, sizeof sv);
    aurp_status st = lsx_parse_header(in, in_len, &sv, err);
    if (st != AURP_OK) return st;
    v->p = (lsx_params){sv.order, sv.equations, in[12], in[13]};
    v->W = sv.width;
    v->H = sv.height;
    v->nctx = in[3];
    v->seg_log2 = sv.seg_log2;
    uint64_t pixels = (uint64_t)v->W * v->H;
    uint64_t nseg = (pixels + ((uint64_t)1 << v->seg_log2) - 1) >> v->seg_log2;
    v->nseg = (uint32_t)nseg;
    /* every segment has its 4-byte length and at least 4 bytes: checked
     * before anything is allocated */
    if (nseg * 8 + LSX_HEADER + 4 * (uint64_t)(v->nctx - 1) > in_len)
        return aurp_fail(err, AURP_ERR_CORRUPT, "lsmix stream: %llu segments do not fit in %zu bytes",
                         (unsigned long long)nseg, in_len);
    for (int i = 0; i < v->nctx - 1; i++) {
        v->thr[i] = aurp_get_u32(in + LSX_HEADER + 4 * i);
        if (i > 0 && v->thr[i] <= v->thr[i - 1])
            return aurp_fail(err, AURP_ERR_CORRUPT, "lsmix stream: context thresholds not increasing");
    }
    size_t pos = LSX_HEADER + 4 * (size_t)(v->nctx - 1);
    v->seg_lens = in + pos;
    v->segs = in + pos + 4 * (size_t)nseg;
    uint64_t total = 0;
    for (uint32_t s = 0; s < v->nseg; s++) {
        uint32_t len = aurp_get_u32(v->seg_lens + 4 * (size_t)s);
        if (len < 4) return aurp_fail(err, AURP_ERR_CORRUPT, "lsmix stream: segment %u too short", s);
        total += len;
    }
    if (total != in_len - header_len(v->nctx, v->nseg))
        return aurp_fail(err, AURP_ERR_CORRUPT,
                         "lsmix stream: segments hold %llu bytes, the stream has %zu after the header",
                         (unsigned long long)total, in_len - header_len(v->nctx, v->nseg));
    return AURP_OK;
}

/* ---- encoder ------------------------------------------------------------ */

typedef struct {
    const uint16_t *u;
    uint32_t W, H;
    lsx_params p;
    int nbands;
    double *p_ls; /* [W * H] */
    atomic_int failed;
    /* segments */
    const lsx_view *v;
    const int32_t *res;
    const uint8_t *ctx;
    const ctx_model *snap; /* [nseg] model at each segment start */
    uint8_t *seg_buf;
    size_t seg_cap;
    uint32_t *seg_len;
} enc_job;

static void predict_band(void *arg, int bi)
{
    enc_job *j = arg;
    const uint32_t W = j->W;
    uint32_t c0 = band_edge(W, j->nbands, bi), c1 = band_edge(W, j->nbands, bi + 1);
    lsx_band b;
    lsx_state s; /* only the column means are used here */
    if (lsx_band_init(&b, &j->p, W, c0, c1) != 0) {
        atomic_store(&j->failed, 1);
        return;
    }
    if (lsx_state_init(&s, W) != 0) {
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

static void encode_segment_range(void *arg, int t)
{
    enc_job *j = arg;
    const lsx_view *v = j->v;
    const uint64_t pixels = (uint64_t)v->W * v->H;
    uint32_t s0 = (uint32_t)((uint64_t)v->nseg * (uint64_t)t / (uint64_t)j->nbands);
    uint32_t s1 = (uint32_t)((uint64_t)v->nseg * (uint64_t)(t + 1) / (uint64_t)j->nbands);
    size_t seg_pixels = (size_t)1 << v->seg_log2;
    ctx_sym *sym = malloc(3 * seg_pixels * sizeof *sym);
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
        *cm = j->snap[s];
        size_t ns = 0;
        for (uint64_t i = a; i < b; i++) {
            if (ctx_refresh_due(i)) ctx_model_refresh(cm);
            int nraw;
            uint32_t mag = (uint32_t)(j->res[i] < 0 ? -j->res[i] : j->res[i]);
            ns += (size_t)ctx_symbols(cm, j->ctx[i], j->res[i], sym + ns);
            ctx_model_count(cm, j->ctx[i], ctx_token(mag, &nraw));
        }
        size_t len = ctx_rans_encode(sym, ns, j->seg_buf + (size_t)s * j->seg_cap, j->seg_cap);
        if (len == 0) atomic_store(&j->failed, 1);
        j->seg_len[s] = (uint32_t)len;
    }
    free(sym);
    free(cm);
}

/* Pass over the frame in raster order: blend, residual, context. */
static aurp_status residuals_and_contexts(const lsx_view *v, const uint16_t *u, const double *p_ls,
                                          int32_t *res, uint8_t *ctx)
{
    const uint32_t W = v->W;
    lsx_state s;
    if (lsx_state_init(&s, W) != 0) return AURP_ERR_NOMEM;
    for (uint32_t m = 0; m < v->H; m++) {
        const uint16_t *cur = u + (size_t)m * W;
        int32_t *r0 = res + (size_t)m * W;
        const int32_t *r1 = m > 0 ? r0 - W : NULL, *r2 = m > 1 ? r0 - 2 * (size_t)W : NULL;
        for (uint32_t n = 0; n < W; n++) {
            int32_t emin = 0;
            uint16_t pred;
            double pl, pc;
            if (m == 0) {
                pred = edge_prediction(cur, n);
                pl = pc = pred;
            } else {
                pl = p_ls[(size_t)m * W + n];
                pc = lsx_cm_predict(&s, n);
                pred = lsx_blend(&s, m, n, pl, pc, &emin);
            }
            r0[n] = (int32_t)cur[n] - pred;
            ctx[(size_t)m * W + n] = (uint8_t)context_at(v, r0, r1, r2, n, emin);
            lsx_record(&s, m, n, cur[n], pl, pc);
        }
        lsx_end_row(&s, m, cur);
    }
    lsx_state_free(&s);
    return AURP_OK;
}

aurp_status lsx_image_encode(const uint16_t *u, uint32_t W, uint32_t H, const aurp_params *p,
                             int threads, uint8_t *out, size_t cap, size_t *out_len,
                             aurp_error *err)
{
    *out_len = 0;
    const uint64_t pixels = (uint64_t)W * H;
    lsx_view v = {.p = {p->order, p->equations, LSX_FORGET, LSX_RIDGE}, .W = W, .H = H,
                  .nctx = LSX_NCTX, .seg_log2 = LSX_SEG_LOG2};
    v.nseg = (uint32_t)((pixels + (1u << LSX_SEG_LOG2) - 1) >> LSX_SEG_LOG2);
    ctx_default_thresholds(v.thr, v.nctx);
    if (threads < 1) threads = 1;
    if (threads > MAX_THREADS) threads = MAX_THREADS;

    aurp_status st = AURP_OK;
    enc_job j = {.u = u, .W = W, .H = H, .p = v.p, .v = &v};
    atomic_init(&j.failed, 0);
    j.p_ls = malloc((size_t)pixels * sizeof *j.p_ls);
    int32_t *res = malloc((size_t)pixels * sizeof *res);
    uint8_t *ctx = malloc((size_t)pixels);
    ctx_model *snap = malloc((size_t)v.nseg * sizeof *snap);
    j.seg_cap = 4 + 4 * ((size_t)1 << LSX_SEG_LOG2);
    j.seg_buf = malloc((size_t)v.nseg * j.seg_cap);
    j.seg_len = malloc((size_t)v.nseg * sizeof *j.seg_len);
    if (!j.p_ls || !res || !ctx || !snap || !j.seg_buf || !j.seg_len) {
        st = aurp_fail(err, AURP_ERR_NOMEM, "image %ux%u: out of memory", W, H);
        goto done;
    }

    j.nbands = (uint32_t)threads < W ? threads : (int)W;
    aurp_parallel(j.nbands, predict_band, &j);
    if (atomic_load(&j.failed) || residuals_and_contexts(&v, u, j.p_ls, res, ctx) != AURP_OK) {
        st = aurp_fail(err, AURP_ERR_NOMEM, "image %ux%u: out of memory for the predictors", W, H);
        goto done;
    }

    /* the model at every segment start */
    ctx_model cm;
    ctx_model_init(&cm, v.nctx);
    for (uint64_t i = 0; i < pixels; i++) {
        if ((i & (((uint64_t)1 << LSX_SEG_LOG2) - 1)) == 0) snap[i >> LSX_SEG_LOG2] = cm;
        if (ctx_refresh_due(i)) ctx_model_refresh(&cm);
        int nraw;
        ctx_model_count(&cm, ctx[i], ctx_token((uint32_t)(res[i] < 0 ? -res[i] : res[i]), &nraw));
    }

    j.res = res;
    j.ctx = ctx;
    j.snap = snap;
    j.nbands = (uint32_t)threads < v.nseg ? threads : (int)v.nseg;
    aurp_parallel(j.nbands, encode_segment_range, &j);
    if (atomic_load(&j.failed)) {
        st = aurp_fail(err, AURP_ERR_NOMEM, "image %ux%u: rANS segment failed", W, H);
        goto done;
    }
    size_t need = header_len(v.nctx, v.nseg);
    for (uint32_t s = 0; s < v.nseg; s++) need += j.seg_len[s];
    if (need > cap) {
        st = aurp_fail(err, AURP_ERR_CAPACITY, "image %ux%u: output buffer of %zu bytes too small",
                       W, H, cap);
        goto done;
    }
    write_header(out, &v);
    size_t pos = LSX_HEADER + 4 * (size_t)(v.nctx - 1);
    for (uint32_t s = 0; s < v.nseg; s++, pos += 4) aurp_put_u32(out + pos, j.seg_len[s]);
    for (uint32_t s = 0; s < v.nseg; s++) {
        memcpy(out + pos, j.seg_buf + (size_t)s * j.seg_cap, j.seg_len[s]);
        pos += j.seg_len[s];
    }
    *out_len = pos;

done:
    free(j.p_ls);
    free(res);
    free(ctx);
    free(snap);
    free(j.seg_buf);
    free(j.seg_len);
    return st;
}

/* ---- decoder ------------------------------------------------------------ */

/* The decoder's state between rows (aurp_decode_rows calls back). */
typedef struct {
    const lsx_view *v;
    lsx_band *bands;
    int nb;
    lsx_state s;
    uint16_t *img;
    int32_t *rows; /* residuals of rows m, m-1, m-2 */
    ctx_model *cm;
    ctx_rans_dec dec;
    uint64_t seg_off, i;
} dec_rows;

static void dec_prepare(void *arg, int b, uint32_t m)
{
    dec_rows *d = arg;
    lsx_band_prepare(&d->bands[b], d->img, m, d->s.cm_a_prev, d->s.cm_b_prev);
}

/* Decodes row m left to right; nonzero when the stream is corrupt. */
static int dec_reconstruct(void *arg, uint32_t m)
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
    int b = 0;
    for (uint32_t n = 0; n < W; n++, d->i++) {
        if ((d->i & seg_mask) == 0) {
            uint32_t sidx = (uint32_t)(d->i >> v->seg_log2);
            if (sidx > 0 && ctx_rans_dec_finish(&d->dec) != 0) return -1;
            uint32_t len = aurp_get_u32(v->seg_lens + 4 * (size_t)sidx);
            if (ctx_rans_dec_init(&d->dec, v->segs + d->seg_off, len) != 0) return -1;
            d->seg_off += len;
        }
        if (ctx_refresh_due(d->i)) ctx_model_refresh(d->cm);
        int32_t emin = 0;
        uint16_t pred;
        double pl = 0, pc = 0;
        if (m == 0) {
            pred = edge_prediction(cur, n);
        } else {
            while (n >= d->bands[b].c1) b++;
            pl = lsx_band_predict(&d->bands[b], cur, cur - W, s->cm_a, s->cm_b, n);
            pc = lsx_cm_predict(s, n);
            pred = lsx_blend(s, m, n, pl, pc, &emin);
        }
        int c = context_at(v, r0, r1, r2, n, emin);
        int32_t e;
        if (ctx_decode_residual(&d->dec, d->cm, c, &e) != 0) return -1;
        int32_t x = (int32_t)pred + e;
        if (x < 0 || x > 65535) return -1;
        cur[n] = (uint16_t)x;
        r0[n] = e;
        int nraw;
        ctx_model_count(d->cm, c, ctx_token((uint32_t)(e < 0 ? -e : e), &nraw));
        if (m == 0) pl = pc = pred;
        lsx_record(s, m, n, cur[n], pl, pc);
    }
    lsx_end_row(s, m, cur);
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
    int nb = threads < DECODE_MAX_BANDS ? threads : DECODE_MAX_BANDS;
    if ((uint32_t)nb > W) nb = (int)W;
    lsx_band bands[DECODE_MAX_BANDS];
    dec_rows d = {.v = &v, .bands = bands, .img = img};
    int have_state = lsx_state_init(&d.s, W) == 0;
    d.rows = malloc(3 * (size_t)W * sizeof *d.rows);
    d.cm = malloc(sizeof *d.cm);
    if (!d.rows || !d.cm || !have_state) {
        st = aurp_fail(err, AURP_ERR_NOMEM, "image %ux%u: out of memory", W, H);
        goto done;
    }
    for (; d.nb < nb; d.nb++) {
        if (lsx_band_init(&bands[d.nb], &v.p, W, band_edge(W, nb, d.nb), band_edge(W, nb, d.nb + 1)) != 0) {
            st = aurp_fail(err, AURP_ERR_NOMEM, "image %ux%u: out of memory for the predictors", W, H);
            goto done;
        }
    }
    ctx_model_init(d.cm, v.nctx);
    if (aurp_decode_rows(nb, H, dec_prepare, dec_reconstruct, &d) != 0 || ctx_rans_dec_finish(&d.dec) != 0)
        st = aurp_fail(err, AURP_ERR_CORRUPT, "lsmix stream: the residuals do not decode");
done:
    for (int b = 0; b < d.nb; b++) lsx_band_free(&bands[b]);
    if (have_state) lsx_state_free(&d.s);
    free(d.rows);
    free(d.cm);
    return st;
}

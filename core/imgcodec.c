/* The CPU image encoder and the image decoder (docs/FORMAT.md section 2).
 *
 * Encoder: the columns are split into bands, one predictor and one thread
 * each (a band reads the pixels left of it from the original, so bands are
 * independent); then histogram, plan, symbols, and the rANS segments, again
 * in parallel.  Decoder: segments are entropy-decoded in parallel; then, row
 * by row, every band adds the previous row to its sums and prepares this
 * row's coefficients on its own thread, and the caller's thread then
 * reconstructs the row left to right (each pixel needs the decoded pixels
 * left of it).  Bands never change a bit of the result, so the bytes do not
 * depend on the thread count. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#include "internal.h"
#include "lsmix.h"
#include "predict.h"

#define MAX_THREADS 64

static void be16_to_u(const uint8_t *be, uint16_t *u, size_t n)
{
    for (size_t i = 0; i < n; i++) u[i] = (uint16_t)(((be[2 * i] << 8) | be[2 * i + 1]) ^ 0x8000);
}

/* u and be may be the same memory (aurp_image_decode_in_place): each
 * sample is read before its own two bytes are written, and no other's. */
static void u_to_be16(const uint16_t *u, uint8_t *be, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint16_t b = u[i] ^ 0x8000;
        be[2 * i] = (uint8_t)(b >> 8);
        be[2 * i + 1] = (uint8_t)b;
    }
}

static uint32_t band_edge(uint32_t width, int nb, int b)
{
    return (uint32_t)((uint64_t)width * (uint64_t)b / (uint64_t)nb);
}

size_t aurp_image_bound(uint32_t width, uint32_t height)
{
    uint64_t pixels = (uint64_t)width * height;
    uint64_t nseg = (pixels + (1u << AURP_SEG_LOG2) - 1) >> AURP_SEG_LOG2;
    /* header + table (131072 varints of <= 5 bytes, coded a little larger
     * at worst) + segment lengths + segments (<= 3 bytes a symbol + 4) +
     * escapes (<= 2 bytes a pixel, never together with 3-byte symbols) */
    uint64_t b = AURP_STREAM_HEADER + 4 + 131072ull * 6 + 1024 + nseg * 8 + pixels * 5;
    return b > SIZE_MAX ? SIZE_MAX : (size_t)b;
}

/* ---- encoder -------------------------------------------------------- */

typedef struct {
    const uint16_t *u;
    int32_t *res;
    uint32_t width, height;
    const aurp_params *p;
    int nbands;
    atomic_int failed;
    /* segment phase */
    const uint32_t *sym;
    const aurp_plan *plan;
    uint32_t nseg;
    size_t seg_cap;
    uint8_t *seg_buf;
    uint32_t *seg_len;
} enc_job;

static void encode_band(void *arg, int b)
{
    enc_job *j = arg;
    uint32_t c0 = band_edge(j->width, j->nbands, b), c1 = band_edge(j->width, j->nbands, b + 1);
    aurp_predictor pr;
    if (aurp_predictor_init(&pr, j->width, j->p->order, j->p->equations, c0, c1) != 0) {
        atomic_store(&j->failed, 1);
        return;
    }
    const size_t W = j->width;
    for (uint32_t m = 0; m < j->height; m++) {
        const uint16_t *cur = j->u + m * W, *prev = m ? cur - W : NULL;
        int32_t *res = j->res + m * W;
        aurp_predictor_prepare_row(&pr);
        for (uint32_t n = c0; n < c1; n++) res[n] = (int32_t)cur[n] - aurp_predictor_predict(&pr, cur, prev, n);
        aurp_predictor_add_row(&pr, cur);
    }
    aurp_predictor_free(&pr);
}

static void encode_segments(void *arg, int t)
{
    enc_job *j = arg;
    uint64_t pixels = (uint64_t)j->width * j->height;
    uint32_t s0 = (uint32_t)((uint64_t)j->nseg * (uint64_t)t / (uint64_t)j->nbands);
    uint32_t s1 = (uint32_t)((uint64_t)j->nseg * (uint64_t)(t + 1) / (uint64_t)j->nbands);
    for (uint32_t s = s0; s < s1; s++) {
        uint64_t a = (uint64_t)s << AURP_SEG_LOG2;
        uint64_t n = pixels - a < (1u << AURP_SEG_LOG2) ? pixels - a : (1u << AURP_SEG_LOG2);
        size_t len = aurp_rans_encode_segment(j->sym + a, (size_t)n, j->plan->freq, j->plan->cum,
                                              j->seg_buf + (size_t)s * j->seg_cap, j->seg_cap);
        if (len == 0) atomic_store(&j->failed, 1);
        j->seg_len[s] = (uint32_t)len;
    }
}

/* The lsmix profile works on the samples as the paper profile does. */
static aurp_status encode_lsmix(const uint8_t *be16, uint32_t width, uint32_t height,
                                const aurp_params *p, int threads, uint8_t *out, size_t cap,
                                size_t *out_len, aurp_error *err)
{
    uint16_t *u = malloc((size_t)width * height * sizeof *u);
    if (!u) return aurp_fail(err, AURP_ERR_NOMEM, "image %ux%u: out of memory", width, height);
    be16_to_u(be16, u, (size_t)width * height);
    aurp_status st = lsx_image_encode(u, width, height, p, threads, out, cap, out_len, err);
    free(u);
    return st;
}

/* The samples go to plane (the output's own memory, in place) or, when it
 * is NULL, to a plane of their own. */
static aurp_status decode_lsmix(const uint8_t *in, size_t in_len, uint32_t width, uint32_t height,
                                int threads, uint8_t *be16_out, uint16_t *plane, aurp_error *err)
{
    uint16_t *u = plane ? plane : malloc((size_t)width * height * sizeof *u);
    if (!u) return aurp_fail(err, AURP_ERR_NOMEM, "image %ux%u: out of memory", width, height);
    aurp_status st = lsx_image_decode(in, in_len, width, height, threads, u, err);
    if (st == AURP_OK) u_to_be16(u, be16_out, (size_t)width * height);
    if (u != plane) free(u);
    return st;
}

aurp_status aurp_image_encode(const uint8_t *be16, uint32_t width, uint32_t height,
                              const aurp_params *p, int threads, uint8_t *out, size_t cap,
                              size_t *out_len, aurp_error *err)
{
    *out_len = 0;
    aurp_status st = aurp_params_check(p, err);
    if (st != AURP_OK) return st;
    uint64_t pixels = (uint64_t)width * height;
    if (width == 0 || height == 0 || pixels > UINT32_MAX)
        return aurp_fail(err, AURP_ERR_PARAM, "image %ux%u: sides must be >= 1 and the pixels < 2^32",
                         width, height);
    if (threads < 1) threads = 1;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    if (p->profile == AURP_PROFILE_LSMIX) return encode_lsmix(be16, width, height, p, threads, out, cap, out_len, err);

    uint16_t *u = malloc((size_t)pixels * sizeof *u);
    int32_t *res = malloc((size_t)pixels * sizeof *res);
    uint64_t *hist = calloc(AURP_HIST_BINS, sizeof *hist);
    uint16_t *esc = NULL;
    uint8_t *seg_buf = NULL;
    uint32_t *seg_len = NULL;
    aurp_plan plan = {0};
    if (!u || !res || !hist) {
        st = aurp_fail(err, AURP_ERR_NOMEM, "image %ux%u: out of memory", width, height);
        goto done;
    }
    be16_to_u(be16, u, (size_t)pixels);

    enc_job j = {.u = u, .res = res, .width = width, .height = height, .p = p};
    j.nbands = (uint32_t)threads < width ? threads : (int)width;
    atomic_init(&j.failed, 0);
    aurp_parallel(j.nbands, encode_band, &j);
    if (atomic_load(&j.failed)) {
        st = aurp_fail(err, AURP_ERR_NOMEM, "image %ux%u: out of memory for the predictors", width,
                       height);
        goto done;
    }

    for (size_t i = 0; i < pixels; i++) hist[res[i] + AURP_RESIDUAL_MAX]++;
    if (aurp_plan_build(hist, p->threshold, &plan) != AURP_OK) {
        st = aurp_fail(err, AURP_ERR_NOMEM, "image %ux%u: out of memory for the plan", width, height);
        goto done;
    }
    esc = malloc(plan.escapes ? (size_t)plan.escapes * sizeof *esc : 1);
    uint32_t *sym = (uint32_t *)res; /* symbols replace residuals in place */
    uint32_t nseg = (uint32_t)((pixels + (1u << AURP_SEG_LOG2) - 1) >> AURP_SEG_LOG2);
    size_t seg_cap = 4 + 3 * ((size_t)1 << AURP_SEG_LOG2);
    seg_buf = malloc((size_t)nseg * seg_cap);
    seg_len = malloc((size_t)nseg * sizeof *seg_len);
    if (!esc || !seg_buf || !seg_len) {
        st = aurp_fail(err, AURP_ERR_NOMEM, "image %ux%u: out of memory", width, height);
        goto done;
    }
    size_t ne = 0;
    for (size_t i = 0; i < pixels; i++) {
        uint32_t s = aurp_symbol_of(&plan, res[i]);
        if (s == plan.nsym - 1) esc[ne++] = u[i];
        sym[i] = s;
    }

    j.sym = sym;
    j.plan = &plan;
    j.nseg = nseg;
    j.seg_cap = seg_cap;
    j.seg_buf = seg_buf;
    j.seg_len = seg_len;
    j.nbands = (uint32_t)threads < nseg ? threads : (int)nseg;
    aurp_parallel(j.nbands, encode_segments, &j);
    if (atomic_load(&j.failed)) {
        st = aurp_fail(err, AURP_ERR_PARAM, "image %ux%u: rANS segment overflow", width, height);
        goto done;
    }
    /* segments back to back: each moves to a lower or equal offset */
    size_t off = 0;
    for (uint32_t s = 0; s < nseg; s++) {
        memmove(seg_buf + off, seg_buf + (size_t)s * seg_cap, seg_len[s]);
        off += seg_len[s];
    }
    st = aurp_stream_write(out, cap, out_len, width, height, p, &plan, seg_len, nseg, seg_buf, esc);
    if (st == AURP_ERR_CAPACITY)
        aurp_fail(err, st, "image %ux%u: output buffer of %zu bytes too small", width, height, cap);
    else if (st != AURP_OK)
        aurp_fail(err, st, "image %ux%u: cannot write the stream", width, height);

done:
    aurp_plan_free(&plan);
    free(u);
    free(res);
    free(hist);
    free(esc);
    free(seg_buf);
    free(seg_len);
    return st;
}

/* ---- decoder -------------------------------------------------------- */

typedef struct {
    const aurp_stream_view *v;
    const aurp_rans_table *tab;
    uint32_t *sym;
    int nthreads;
    atomic_int corrupt;
} seg_job;

static void decode_segments(void *arg, int t)
{
    seg_job *j = arg;
    const aurp_stream_view *v = j->v;
    uint64_t pixels = (uint64_t)v->width * v->height;
    uint32_t s0 = (uint32_t)((uint64_t)v->nseg * (uint64_t)t / (uint64_t)j->nthreads);
    uint32_t s1 = (uint32_t)((uint64_t)v->nseg * (uint64_t)(t + 1) / (uint64_t)j->nthreads);
    for (uint32_t s = s0; s < s1 && !atomic_load_explicit(&j->corrupt, memory_order_relaxed); s++) {
        uint64_t a = (uint64_t)s << v->seg_log2;
        uint64_t n = pixels - a < ((uint64_t)1 << v->seg_log2) ? pixels - a : ((uint64_t)1 << v->seg_log2);
        if (aurp_rans_decode_segment(j->tab, v->segs + v->seg_off[s], v->seg_off[s + 1] - v->seg_off[s],
                                     j->sym + a, (size_t)n) != 0)
            atomic_store(&j->corrupt, 1);
    }
}

#define DECODE_MAX_BANDS 8

/* The paper decoder's rows (aurp_decode_rows): a band adds row m-1 to its
 * sums and solves row m; the caller reconstructs row m from its symbols. */
typedef struct {
    const aurp_stream_view *v;
    aurp_predictor *pr;
    int nb;
    uint16_t *img;
    const uint32_t *sym;
    uint64_t esc_i;
} paper_rows;

static void paper_prepare(void *arg, int b, uint32_t m)
{
    paper_rows *r = arg;
    if (m > 0) aurp_predictor_add_row(&r->pr[b], r->img + (size_t)(m - 1) * r->v->width);
    aurp_predictor_prepare_row(&r->pr[b]);
}

static int reconstruct_row(const aurp_stream_view *v, aurp_predictor *pr, int nb, uint16_t *img,
                           const uint32_t *sym, uint32_t m, uint64_t *esc_i);

static int paper_reconstruct(void *arg, uint32_t m)
{
    paper_rows *r = arg;
    return reconstruct_row(r->v, r->pr, r->nb, r->img, r->sym, m, &r->esc_i);
}

/* Reconstructs row m from its symbols; -1 on an impossible value. */
static int reconstruct_row(const aurp_stream_view *v, aurp_predictor *pr, int nb, uint16_t *img,
                           const uint32_t *sym, uint32_t m, uint64_t *esc_i)
{
    const size_t W = v->width;
    uint16_t *cur = img + m * W;
    const uint16_t *prev = m ? cur - W : NULL;
    const uint32_t *s = sym + m * W;
    const uint32_t escsym = v->nsym - 1;
    for (int b = 0; b < nb; b++) {
        for (uint32_t n = pr[b].c0; n < pr[b].c1; n++) {
            if (s[n] == escsym) {
                if (*esc_i >= v->escapes) return -1;
                cur[n] = aurp_get_u16(v->esc + 2 * (*esc_i)++);
            } else {
                int32_t x = (int32_t)aurp_predictor_predict(&pr[b], cur, prev, n) + v->t_lo + (int32_t)s[n];
                if (x < 0 || x > 65535) return -1;
                cur[n] = (uint16_t)x;
            }
        }
    }
    return 0;
}

static aurp_status image_decode(const uint8_t *in, size_t in_len, uint32_t width, uint32_t height,
                                int threads, uint8_t *be16_out, uint16_t *plane, aurp_error *err)
{
    if (in_len > 0 && in[0] == AURP_PROFILE_LSMIX)
        return decode_lsmix(in, in_len, width, height, threads, be16_out, plane, err);
    aurp_stream_view v;
    aurp_status st = aurp_stream_parse(in, in_len, &v, err);
    if (st != AURP_OK) return st;
    if (v.width != width || v.height != height) {
        aurp_stream_view_free(&v);
        return aurp_fail(err, AURP_ERR_CORRUPT, "image stream is %ux%u, expected %ux%u", v.width,
                         v.height, width, height);
    }
    if (threads < 1) threads = 1;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    const uint64_t pixels = (uint64_t)width * height;
    uint32_t *sym = malloc((size_t)pixels * sizeof *sym);
    uint16_t *img = plane ? plane : malloc((size_t)pixels * sizeof *img);
    aurp_rans_table *tab = malloc(sizeof *tab);
    /* The row bands meet once per row, so past a few bands the waiting
     * costs more than the solving saves: on a 16-core host a 1024 x 1024
     * frame decodes in 85 ms with 8 bands and 287 ms with 16 (docs/BENCHMARKS.md). */
    int nb = threads < DECODE_MAX_BANDS ? threads : DECODE_MAX_BANDS;
    if ((uint32_t)nb > width) nb = (int)width;
    aurp_predictor pr[MAX_THREADS];
    int npr = 0;
    if (!sym || !img || !tab) {
        st = aurp_fail(err, AURP_ERR_NOMEM, "image %ux%u: out of memory", width, height);
        goto done;
    }
    aurp_rans_table_init(tab, v.freq, v.cum, v.nsym, v.prob_bits);
    seg_job sj = {.v = &v, .tab = tab, .sym = sym};
    sj.nthreads = (uint32_t)threads < v.nseg ? threads : (int)v.nseg;
    atomic_init(&sj.corrupt, 0);
    aurp_parallel(sj.nthreads, decode_segments, &sj);
    if (atomic_load(&sj.corrupt)) {
        st = aurp_fail(err, AURP_ERR_CORRUPT, "image stream: a rANS segment does not decode");
        goto done;
    }

    for (; npr < nb; npr++) {
        if (aurp_predictor_init(&pr[npr], width, v.order, v.equations, band_edge(width, nb, npr),
                                band_edge(width, nb, npr + 1)) != 0) {
            st = aurp_fail(err, AURP_ERR_NOMEM, "image %ux%u: out of memory for the predictors",
                           width, height);
            goto done;
        }
    }

    paper_rows rows = {.v = &v, .pr = pr, .nb = nb, .img = img, .sym = sym};
    int bad = aurp_decode_rows(nb, height, paper_prepare, paper_reconstruct, &rows);
    uint64_t esc_i = rows.esc_i;
    if (bad || esc_i != v.escapes) {
        st = aurp_fail(err, AURP_ERR_CORRUPT, "image stream: residuals or escapes inconsistent");
        goto done;
    }
    u_to_be16(img, be16_out, (size_t)pixels);

done:
    for (int b = 0; b < npr; b++) aurp_predictor_free(&pr[b]);
    aurp_stream_view_free(&v);
    free(sym);
    if (img != plane) free(img);
    free(tab);
    return st;
}

aurp_status aurp_image_decode(const uint8_t *in, size_t in_len, uint32_t width, uint32_t height,
                              int threads, uint8_t *be16_out, aurp_error *err)
{
    return image_decode(in, in_len, width, height, threads, be16_out, NULL, err);
}

aurp_status aurp_image_decode_in_place(const uint8_t *in, size_t in_len, uint32_t width,
                                       uint32_t height, int threads, void *out, aurp_error *err)
{
    return image_decode(in, in_len, width, height, threads, out, out, err);
}

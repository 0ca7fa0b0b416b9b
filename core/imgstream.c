/* The image stream layout (docs/FORMAT.md section 2): writing it from its
 * parts, and checking + reading it back.  Every length is checked before
 * use, with overflow-safe arithmetic, so any input is safe to parse. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

aurp_status aurp_stream_write(uint8_t *out, size_t cap, size_t *out_len, uint32_t width,
                              uint32_t height, const aurp_params *p, const aurp_plan *plan,
                              const uint32_t *seg_len, uint32_t nseg, const uint8_t *seg_data,
                              const uint16_t *escapes)
{
    *out_len = 0;
    if (cap < AURP_STREAM_HEADER + 4) return AURP_ERR_CAPACITY;
    uint8_t *h = out;
    memset(h, 0, AURP_STREAM_HEADER);
    h[0] = (uint8_t)p->profile;
    h[1] = (uint8_t)p->order;
    h[2] = (uint8_t)p->equations;
    h[3] = AURP_PROB_BITS;
    aurp_put_u32(h + 4, width);
    aurp_put_u32(h + 8, height);
    aurp_put_u32(h + 12, (uint32_t)p->threshold);
    aurp_put_u32(h + 16, (uint32_t)plan->t_lo);
    aurp_put_u32(h + 20, (uint32_t)plan->t_hi);
    h[24] = AURP_SEG_LOG2;
    aurp_put_u64(h + 32, plan->escapes);

    /* count table: u32 decoded length, then the general coding of the varints */
    uint8_t *var = malloc((size_t)plan->nsym * 5);
    if (!var) return AURP_ERR_NOMEM;
    size_t vlen = 0;
    for (uint32_t s = 0; s < plan->nsym; s++) vlen += aurp_put_varint(var + vlen, plan->count[s]);
    size_t pos = AURP_STREAM_HEADER;
    aurp_put_u32(out + pos, (uint32_t)vlen);
    size_t glen = aurp_gc_encode(var, vlen, out + pos + 4, cap - pos - 4);
    free(var);
    if (glen == (size_t)-1) return AURP_ERR_NOMEM;
    if (glen == 0) return AURP_ERR_CAPACITY;
    aurp_put_u32(h + 28, (uint32_t)(4 + glen));
    pos += 4 + glen;

    uint64_t seg_total = 0;
    for (uint32_t i = 0; i < nseg; i++) seg_total += seg_len[i];
    uint64_t rest = (uint64_t)nseg * 4 + seg_total + 2 * plan->escapes;
    if (rest > cap - pos) return AURP_ERR_CAPACITY;
    for (uint32_t i = 0; i < nseg; i++, pos += 4) aurp_put_u32(out + pos, seg_len[i]);
    memcpy(out + pos, seg_data, (size_t)seg_total);
    pos += (size_t)seg_total;
    for (uint64_t i = 0; i < plan->escapes; i++, pos += 2) aurp_put_u16(out + pos, escapes[i]);
    *out_len = pos;
    return AURP_OK;
}

aurp_status aurp_stream_parse_header(const uint8_t *in, size_t in_len, aurp_stream_view *v,
                                     aurp_error *err)
{
    memset(v, 0, sizeof *v);
    if (in_len < AURP_STREAM_HEADER)
        return aurp_fail(err, AURP_ERR_CORRUPT, "image stream truncated: %zu bytes, header needs %d",
                         in_len, AURP_STREAM_HEADER);
    v->profile = in[0];
    if (v->profile == AURP_PROFILE_LSMIX) return lsx_parse_header(in, in_len, v, err);
    v->order = in[1];
    v->equations = in[2];
    v->prob_bits = in[3];
    v->width = aurp_get_u32(in + 4);
    v->height = aurp_get_u32(in + 8);
    v->threshold = aurp_get_u32(in + 12);
    v->t_lo = (int32_t)aurp_get_u32(in + 16);
    v->t_hi = (int32_t)aurp_get_u32(in + 20);
    v->seg_log2 = in[24];
    v->table_len = aurp_get_u32(in + 28);
    v->escapes = aurp_get_u64(in + 32);
    if (v->profile != AURP_PROFILE_PAPER)
        return aurp_fail(err, AURP_ERR_VERSION, "image stream: unknown profile %d", v->profile);
    if (v->order < 1 || v->order > 32 || v->equations < 1 || v->equations > 16)
        return aurp_fail(err, AURP_ERR_CORRUPT, "image stream: N=%d M=%d out of range", v->order,
                         v->equations);
    if (v->prob_bits < 12 || v->prob_bits > 20)
        return aurp_fail(err, AURP_ERR_CORRUPT, "image stream: probability bits %d out of 12..20",
                         v->prob_bits);
    if (v->seg_log2 < 8 || v->seg_log2 > 24)
        return aurp_fail(err, AURP_ERR_CORRUPT, "image stream: segment log2 %d out of 8..24",
                         v->seg_log2);
    if (in[25] | in[26] | in[27])
        return aurp_fail(err, AURP_ERR_CORRUPT, "image stream: reserved bytes not zero");
    if (v->width == 0 || v->height == 0)
        return aurp_fail(err, AURP_ERR_CORRUPT, "image stream: empty image %ux%u", v->width,
                         v->height);
    if (v->threshold > INT32_MAX)
        return aurp_fail(err, AURP_ERR_CORRUPT, "image stream: threshold %u too large", v->threshold);
    if (v->t_lo <= v->t_hi) {
        if (v->t_lo < -AURP_RESIDUAL_MAX || v->t_hi > AURP_RESIDUAL_MAX)
            return aurp_fail(err, AURP_ERR_CORRUPT, "image stream: coded range [%d, %d] invalid",
                             v->t_lo, v->t_hi);
        v->nsym = (uint32_t)(v->t_hi - v->t_lo + 2);
    } else {
        if (v->t_lo != 1 || v->t_hi != 0)
            return aurp_fail(err, AURP_ERR_CORRUPT, "image stream: empty range must be [1, 0]");
        v->nsym = 1;
    }
    uint64_t pixels = (uint64_t)v->width * v->height;
    if (pixels > UINT32_MAX)
        return aurp_fail(err, AURP_ERR_CORRUPT, "image stream: %ux%u is more than 2^32-1 pixels",
                         v->width, v->height);
    if (v->escapes > pixels)
        return aurp_fail(err, AURP_ERR_CORRUPT, "image stream: %llu escapes for %llu pixels",
                         (unsigned long long)v->escapes, (unsigned long long)pixels);
    return AURP_OK;
}

aurp_status aurp_stream_parse(const uint8_t *in, size_t in_len, aurp_stream_view *v,
                              aurp_error *err)
{
    aurp_status st = aurp_stream_parse_header(in, in_len, v, err);
    if (st != AURP_OK) return st;
    uint64_t pixels = (uint64_t)v->width * v->height;
    size_t pos = AURP_STREAM_HEADER;
    if (v->table_len < 4 + 5 || v->table_len > in_len - pos)
        return aurp_fail(err, AURP_ERR_CORRUPT, "image stream: count table length %u invalid",
                         v->table_len);
    uint32_t vlen = aurp_get_u32(in + pos);
    if ((uint64_t)vlen > (uint64_t)v->nsym * 10 || vlen < v->nsym)
        return aurp_fail(err, AURP_ERR_CORRUPT, "image stream: count table of %u bytes for %u symbols",
                         vlen, v->nsym);
    uint8_t *var = malloc(vlen);
    v->count = malloc((size_t)v->nsym * sizeof *v->count);
    v->freq = malloc((size_t)v->nsym * sizeof *v->freq);
    v->cum = malloc(((size_t)v->nsym + 1) * sizeof *v->cum);
    if (!var || !v->count || !v->freq || !v->cum) {
        free(var);
        aurp_stream_view_free(v);
        return aurp_fail(err, AURP_ERR_NOMEM, "image stream: out of memory for the count table");
    }
    int rc = aurp_gc_decode(in + pos + 4, v->table_len - 4, var, vlen);
    if (rc != 0) {
        free(var);
        aurp_stream_view_free(v);
        return rc == -2 ? aurp_fail(err, AURP_ERR_NOMEM, "image stream: out of memory")
                        : aurp_fail(err, AURP_ERR_CORRUPT, "image stream: count table undecodable");
    }
    size_t vp = 0;
    uint64_t sum = 0;
    for (uint32_t s = 0; s < v->nsym; s++) {
        uint64_t c;
        if (aurp_get_varint(var, vlen, &vp, &c) != 0 || c > pixels) {
            free(var);
            aurp_stream_view_free(v);
            return aurp_fail(err, AURP_ERR_CORRUPT, "image stream: count %u malformed", s);
        }
        v->count[s] = (uint32_t)c;
        sum += c;
    }
    free(var);
    if (vp != vlen || sum != pixels || v->count[v->nsym - 1] != v->escapes) {
        aurp_stream_view_free(v);
        return aurp_fail(err, AURP_ERR_CORRUPT,
                         "image stream: counts do not match (sum %llu of %llu pixels, table end %zu of %u)",
                         (unsigned long long)sum, (unsigned long long)pixels, vp, vlen);
    }
    if (aurp_normalize_bits(v->count, v->nsym, v->prob_bits, v->freq, v->cum) != AURP_OK) {
        aurp_stream_view_free(v);
        return aurp_fail(err, AURP_ERR_CORRUPT, "image stream: counts cannot be normalised to 2^%d",
                         v->prob_bits);
    }
    pos += v->table_len;

    uint64_t nseg = (pixels + ((uint64_t)1 << v->seg_log2) - 1) >> v->seg_log2;
    if (nseg > (in_len - pos) / 4) {
        aurp_stream_view_free(v);
        return aurp_fail(err, AURP_ERR_CORRUPT, "image stream: truncated in the segment lengths");
    }
    v->nseg = (uint32_t)nseg;
    v->seg_lens = in + pos;
    pos += (size_t)nseg * 4;
    v->seg_off = malloc(((size_t)nseg + 1) * sizeof *v->seg_off);
    if (!v->seg_off) {
        aurp_stream_view_free(v);
        return aurp_fail(err, AURP_ERR_NOMEM, "image stream: out of memory");
    }
    uint64_t off = 0;
    for (uint32_t i = 0; i < v->nseg; i++) {
        v->seg_off[i] = off;
        uint32_t l = aurp_get_u32(v->seg_lens + 4 * (size_t)i);
        if (l < 4) {
            aurp_stream_view_free(v);
            return aurp_fail(err, AURP_ERR_CORRUPT, "image stream: segment %u has %u bytes", i, l);
        }
        off += l;
    }
    v->seg_off[v->nseg] = off;
    uint64_t avail = in_len - pos;
    if (off > avail || avail - off != 2 * v->escapes) {
        aurp_stream_view_free(v);
        return aurp_fail(err, AURP_ERR_CORRUPT,
                         "image stream: %llu bytes after the segment table, expected %llu + 2 x %llu",
                         (unsigned long long)avail, (unsigned long long)off,
                         (unsigned long long)v->escapes);
    }
    v->segs = in + pos;
    v->esc = in + pos + off;
    return AURP_OK;
}

void aurp_stream_view_free(aurp_stream_view *v)
{
    free(v->count);
    free(v->freq);
    free(v->cum);
    free(v->seg_off);
    v->count = v->freq = v->cum = NULL;
    v->seg_off = NULL;
}

/* FORMAT.md 2.2-2.3 on a slice of the histogram (aurp_plan_build passes
 * all of it); the bins outside the slice are all below T' by the caller's
 * promise, so they move neither T- nor T+ and only add to the escapes
 * (total - coded). */
aurp_status aurp_plan_build_range(const uint64_t *hist, int32_t e_lo, uint32_t n, uint64_t total,
                                  int threshold, aurp_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    plan->threshold = threshold;
    if (n > 0 && (e_lo < -AURP_RESIDUAL_MAX || (int64_t)e_lo + n - 1 > AURP_RESIDUAL_MAX))
        return AURP_ERR_PARAM;
    uint64_t tq = threshold > 1 ? (uint64_t)threshold : 1; /* T' = max(T, 1) */
    int64_t lo = -1, hi = -2;
    for (uint32_t i = 0; i < n; i++)
        if (hist[i] >= tq) {
            if (lo < 0) lo = i;
            hi = i;
        }
    if (lo < 0) {
        plan->t_lo = 1;
        plan->t_hi = 0;
        plan->nsym = 1;
    } else {
        plan->t_lo = e_lo + (int32_t)lo;
        plan->t_hi = e_lo + (int32_t)hi;
        plan->nsym = (uint32_t)(hi - lo + 2);
    }
    plan->total = total;
    plan->count = calloc(plan->nsym, sizeof *plan->count);
    plan->freq = calloc(plan->nsym, sizeof *plan->freq);
    plan->cum = calloc((size_t)plan->nsym + 1, sizeof *plan->cum);
    if (!plan->count || !plan->freq || !plan->cum) {
        aurp_plan_free(plan);
        return AURP_ERR_NOMEM;
    }
    uint64_t coded = 0;
    for (uint32_t s = 0; s + 1 < plan->nsym; s++) {
        plan->count[s] = (uint32_t)hist[lo + s];
        coded += hist[lo + s];
    }
    if (coded > total) {
        aurp_plan_free(plan);
        return AURP_ERR_PARAM;
    }
    plan->escapes = total - coded;
    plan->count[plan->nsym - 1] = (uint32_t)plan->escapes;
    if (aurp_normalize(plan->count, plan->nsym, plan->freq, plan->cum) != AURP_OK) {
        aurp_plan_free(plan);
        return AURP_ERR_PARAM;
    }
    return AURP_OK;
}

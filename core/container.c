/* The .aurp container (docs/FORMAT.md section 1): a header, then chunks that
 * restore the original in order: image regions through the image codec,
 * everything between them through the general-purpose coder, and any chunk
 * that would not shrink stored as is. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include "xxhash.h"

#include "internal.h"
#include "lsmix.h"

#define CONTAINER_HEADER 40
#define CHUNK_HEADER 24
/* The general coder cannot restore more than this many bytes per coded
 * byte: its probabilities stay within 15..65521 of 65536 (FORMAT.md
 * section 5), so every bit shrinks the range by at least 2.28e-4 of itself
 * and every byte of input pays for at most ~3040 restored bytes (measured:
 * 3028 on a run of 0xFF).  A general chunk that claims more is refused
 * before anything is allocated for it. */
#define GC_MAX_EXPANSION 4096
static const uint8_t MAGIC[8] = {0x89, 'A', 'U', 'R', 'P', '\r', '\n', 0x1a};

aurp_status aurp_fail(aurp_error *err, aurp_status s, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return s;
}

const char *aurp_status_name(aurp_status s)
{
    switch (s) {
    case AURP_OK: return "ok";
    case AURP_ERR_PARAM: return "bad parameter";
    case AURP_ERR_NOMEM: return "out of memory";
    case AURP_ERR_CAPACITY: return "output buffer too small";
    case AURP_ERR_CORRUPT: return "corrupt stream";
    case AURP_ERR_CHECKSUM: return "checksum mismatch";
    case AURP_ERR_VERSION: return "unsupported format version";
    case AURP_ERR_BACKEND: return "encoder backend failed";
    case AURP_ERR_LIMIT: return "output limit exceeded";
    }
    return "unknown status";
}

int aurp_params_for_profile(aurp_params *p, int profile)
{
    if (profile == AURP_PROFILE_PAPER) *p = (aurp_params){AURP_PROFILE_PAPER, 11, 7, 13};
    else if (profile == AURP_PROFILE_LSMIX) *p = (aurp_params){AURP_PROFILE_LSMIX, LSX_DEFAULT_K, LSX_DEFAULT_M, 0};
    else return -1;
    return 0;
}

void aurp_params_default(aurp_params *p)
{
    aurp_params_for_profile(p, AURP_PROFILE_LSMIX);
}

aurp_status aurp_params_check(const aurp_params *p, aurp_error *err)
{
    if (!p) return aurp_fail(err, AURP_ERR_PARAM, "parameters missing");
    if (p->profile == AURP_PROFILE_LSMIX) {
        if (p->order < 1 || p->order > 16)
            return aurp_fail(err, AURP_ERR_PARAM, "lsmix: N=%d spectral lags out of 1..16", p->order);
        if (p->equations < 1 || p->equations > 17 || !(p->equations & 1))
            return aurp_fail(err, AURP_ERR_PARAM, "lsmix: M=%d window columns not odd in 1..17",
                             p->equations);
        return AURP_OK;
    }
    if (p->profile != AURP_PROFILE_PAPER)
        return aurp_fail(err, AURP_ERR_PARAM, "unknown profile %d", p->profile);
    if (p->order < 1 || p->order > 32)
        return aurp_fail(err, AURP_ERR_PARAM, "order N=%d out of 1..32", p->order);
    if (p->equations < 1 || p->equations > 16)
        return aurp_fail(err, AURP_ERR_PARAM, "equations M=%d out of 1..16", p->equations);
    if (p->threshold < 0)
        return aurp_fail(err, AURP_ERR_PARAM, "threshold T=%d is negative", p->threshold);
    return AURP_OK;
}

const char *aurp_profile_name(int profile)
{
    return profile == AURP_PROFILE_PAPER ? "paper" : profile == AURP_PROFILE_LSMIX ? "lsmix" : NULL;
}

int aurp_profile_from_name(const char *name)
{
    if (!name) return 0;
    if (strcmp(name, "paper") == 0) return AURP_PROFILE_PAPER;
    if (strcmp(name, "lsmix") == 0) return AURP_PROFILE_LSMIX;
    return 0;
}

uint64_t aurp_checksum(const void *data, size_t len)
{
    return XXH3_64bits(data, len);
}

/* ---- pack ------------------------------------------------------------- */

size_t aurp_pack_bound(size_t original_size)
{
    /* stored is the worst case of every chunk; at most 2*regions+1 chunks */
    size_t over = CONTAINER_HEADER + CHUNK_HEADER * (2 * (size_t)AURP_MAX_REGIONS + 1);
    return original_size > SIZE_MAX - over ? SIZE_MAX : original_size + over;
}

static void put_chunk_header(uint8_t *p, int method, uint64_t raw, uint64_t enc)
{
    memset(p, 0, CHUNK_HEADER);
    p[0] = (uint8_t)method;
    aurp_put_u64(p + 8, raw);
    aurp_put_u64(p + 16, enc);
}

/* The coder of the bytes outside the images (FORMAT.md section 1): the
 * text coder for lsmix packs, the general coder for paper packs (whose
 * bytes stay those of the first encoder) and for chunks too large for the
 * text coder's speed. */
static int text_coded(const aurp_params *p, size_t n)
{
    return p->profile == AURP_PROFILE_LSMIX && n <= AURP_TEXT_CHUNK_MAX;
}

/* Appends a general or text (or, if that does not shrink, stored) chunk. */
static aurp_status pack_general(const uint8_t *src, size_t n, const aurp_params *p, uint8_t *out, size_t cap,
                                size_t *pos, aurp_error *err)
{
    if (n == 0) return AURP_OK;
    if (cap - *pos < CHUNK_HEADER + n)
        return aurp_fail(err, AURP_ERR_CAPACITY, "output buffer too small (%zu bytes)", cap);
    uint8_t *h = out + *pos;
    /* the coder stops as soon as it reaches n bytes: then the chunk is stored */
    int text = text_coded(p, n);
    size_t len = (text ? aurp_tc_encode : aurp_gc_encode)(src, n, h + CHUNK_HEADER, n - 1);
    if (len == (size_t)-1) return aurp_fail(err, AURP_ERR_NOMEM, "out of memory in the general coder");
    if (len == 0 || len >= n) {
        memcpy(h + CHUNK_HEADER, src, n);
        put_chunk_header(h, AURP_CHUNK_STORED, n, n);
        *pos += CHUNK_HEADER + n;
    } else {
        put_chunk_header(h, text ? AURP_CHUNK_TEXT : AURP_CHUNK_GENERAL, n, len);
        *pos += CHUNK_HEADER + len;
    }
    return AURP_OK;
}

aurp_status aurp_pack(const uint8_t *src, size_t src_len, const aurp_region *regions,
                      int nregions, const aurp_params *p, const aurp_image_encoder *enc,
                      int threads, uint8_t *out, size_t cap, size_t *out_len, aurp_error *err)
{
    *out_len = 0;
    aurp_status st = aurp_params_check(p, err);
    if (st != AURP_OK) return st;
    if (nregions < 0 || nregions > AURP_MAX_REGIONS || (nregions > 0 && !regions))
        return aurp_fail(err, AURP_ERR_PARAM, "%d image regions (at most %d)", nregions,
                         AURP_MAX_REGIONS);
    uint64_t prev_end = 0;
    for (int i = 0; i < nregions; i++) {
        const aurp_region *r = &regions[i];
        uint64_t bytes = 2 * (uint64_t)r->width * r->height;
        if (r->width == 0 || r->height == 0 || r->offset < prev_end || r->offset > src_len ||
            bytes > src_len - r->offset)
            return aurp_fail(err, AURP_ERR_PARAM,
                             "image region %d (offset %llu, %ux%u) empty, unsorted, overlapping or "
                             "beyond the %zu-byte input",
                             i, (unsigned long long)r->offset, r->width, r->height, src_len);
        prev_end = r->offset + bytes;
    }
    if (cap < CONTAINER_HEADER)
        return aurp_fail(err, AURP_ERR_CAPACITY, "output buffer too small (%zu bytes)", cap);

    memcpy(out, MAGIC, 8);
    aurp_put_u16(out + 8, AURP_FORMAT_VERSION);
    aurp_put_u16(out + 10, 0);
    aurp_put_u64(out + 16, src_len);
    aurp_put_u64(out + 24, aurp_checksum(src, src_len));
    size_t pos = CONTAINER_HEADER;
    uint32_t nchunks = 0;
    uint64_t at = 0;
    uint8_t *scratch = NULL;
    size_t scratch_cap = 0;

    for (int i = 0; i <= nregions; i++) {
        uint64_t gap_end = i < nregions ? regions[i].offset : src_len;
        size_t before = pos;
        st = pack_general(src + at, (size_t)(gap_end - at), p, out, cap, &pos, err);
        if (st != AURP_OK) goto done;
        nchunks += pos != before;
        at = gap_end;
        if (i == nregions) break;

        const aurp_region *r = &regions[i];
        size_t raw = 2 * (size_t)r->width * r->height;
        size_t need = aurp_image_bound(r->width, r->height);
        if (need > scratch_cap) {
            free(scratch);
            scratch = malloc(need);
            scratch_cap = scratch ? need : 0;
            if (!scratch) {
                st = aurp_fail(err, AURP_ERR_NOMEM, "out of memory for image region %d", i);
                goto done;
            }
        }
        size_t len = 0;
        if (enc)
            st = enc->encode(enc->ctx, src + at, r->width, r->height, p, scratch, scratch_cap, &len, err);
        else
            st = aurp_image_encode(src + at, r->width, r->height, p, threads, scratch, scratch_cap,
                                   &len, err);
        if (st != AURP_OK) goto done;
        int stored = len >= raw;
        size_t payload = stored ? raw : len;
        if (cap - pos < CHUNK_HEADER + payload) {
            st = aurp_fail(err, AURP_ERR_CAPACITY, "output buffer too small (%zu bytes)", cap);
            goto done;
        }
        put_chunk_header(out + pos, stored ? AURP_CHUNK_STORED : AURP_CHUNK_IMAGE, raw, payload);
        memcpy(out + pos + CHUNK_HEADER, stored ? src + at : scratch, payload);
        pos += CHUNK_HEADER + payload;
        nchunks++;
        at += raw;
    }
    aurp_put_u32(out + 12, nchunks);
    aurp_put_u64(out + 32, aurp_checksum(out + CONTAINER_HEADER, pos - CONTAINER_HEADER));
    *out_len = pos;
done:
    free(scratch);
    return st;
}

/* ---- reading ---------------------------------------------------------- */

typedef struct {
    uint32_t nchunks;
    uint64_t original_size, checksum, stream_checksum;
} container_header;

static aurp_status read_header(const uint8_t *in, size_t in_len, int verify, container_header *h,
                               aurp_error *err)
{
    if (in_len < CONTAINER_HEADER)
        return aurp_fail(err, AURP_ERR_CORRUPT,
                         in_len >= 8 && memcmp(in, MAGIC, 8) == 0
                             ? "truncated: %zu bytes, the header needs %d"
                             : "not an .aurp stream: %zu bytes, header needs %d",
                         in_len, CONTAINER_HEADER);
    if (memcmp(in, MAGIC, 8) != 0)
        return aurp_fail(err, AURP_ERR_CORRUPT, "not an .aurp stream: bad magic");
    uint16_t version = aurp_get_u16(in + 8);
    if (version != AURP_FORMAT_VERSION)
        return aurp_fail(err, AURP_ERR_VERSION, "format version %u, this reader knows %d", version,
                         AURP_FORMAT_VERSION);
    if (aurp_get_u16(in + 10) != 0)
        return aurp_fail(err, AURP_ERR_VERSION, "unknown flags 0x%04x", aurp_get_u16(in + 10));
    h->nchunks = aurp_get_u32(in + 12);
    h->original_size = aurp_get_u64(in + 16);
    h->checksum = aurp_get_u64(in + 24);
    h->stream_checksum = aurp_get_u64(in + 32);
    /* every byte after the header is covered: damage anywhere is caught
     * before any decoding, even where it would not change the output */
    if (verify && aurp_checksum(in + CONTAINER_HEADER, in_len - CONTAINER_HEADER) != h->stream_checksum)
        return aurp_fail(err, AURP_ERR_CORRUPT, "stream damaged: XXH3-64 of its %zu chunk bytes does not match",
                         in_len - CONTAINER_HEADER);
    return AURP_OK;
}

typedef struct {
    int method;
    uint64_t raw, enc;
    const uint8_t *payload;
} chunk;

/* Reads the chunk at *pos and checks its header against what is left.
 * *short_by (may be NULL) is set when the stream ends inside the chunk. */
static aurp_status read_chunk(const uint8_t *in, size_t in_len, size_t *pos, uint32_t index,
                              chunk *c, uint64_t *short_by, aurp_error *err)
{
    if (in_len - *pos < CHUNK_HEADER) {
        if (short_by) *short_by = CHUNK_HEADER - (in_len - *pos);
        return aurp_fail(err, AURP_ERR_CORRUPT,
                         "truncated: chunk %u's header at byte %zu needs %d bytes, %zu left", index,
                         *pos, CHUNK_HEADER, in_len - *pos);
    }
    const uint8_t *h = in + *pos;
    c->method = h[0];
    for (int i = 1; i < 8; i++)
        if (h[i]) return aurp_fail(err, AURP_ERR_CORRUPT, "chunk %u: reserved bytes not zero", index);
    c->raw = aurp_get_u64(h + 8);
    c->enc = aurp_get_u64(h + 16);
    if (c->method > AURP_CHUNK_TEXT)
        return aurp_fail(err, AURP_ERR_CORRUPT, "chunk %u: unknown method %d", index, c->method);
    if (c->raw == 0) return aurp_fail(err, AURP_ERR_CORRUPT, "chunk %u: restores 0 bytes", index);
    if (c->method == AURP_CHUNK_STORED && c->raw != c->enc)
        return aurp_fail(err, AURP_ERR_CORRUPT, "chunk %u: stored with raw %llu != encoded %llu", index,
                         (unsigned long long)c->raw, (unsigned long long)c->enc);
    if (c->enc > in_len - *pos - CHUNK_HEADER) {
        if (short_by) *short_by = c->enc - (in_len - *pos - CHUNK_HEADER);
        return aurp_fail(err, AURP_ERR_CORRUPT, "truncated: chunk %u has %llu payload bytes, only %zu left",
                         index, (unsigned long long)c->enc, in_len - *pos - CHUNK_HEADER);
    }
    c->payload = h + CHUNK_HEADER;
    *pos += CHUNK_HEADER + (size_t)c->enc;
    return AURP_OK;
}

/* An image chunk's stream must describe exactly the chunk's raw bytes.
 * Only the image stream's own header is read (the codec's parser, whatever
 * the profile); nothing is allocated. */
static aurp_status check_image_chunk(const chunk *c, uint32_t index, aurp_stream_view *v,
                                     aurp_error *err)
{
    aurp_status st = aurp_stream_parse_header(c->payload, (size_t)c->enc, v, err);
    if (st != AURP_OK) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err ? err->msg : "");
        why[sizeof why - 20] = 0; /* room for the prefix */
        return aurp_fail(err, st, "chunk %u: %s", index, why);
    }
    if (2 * (uint64_t)v->width * v->height != c->raw)
        return aurp_fail(err, AURP_ERR_CORRUPT, "chunk %u: image %ux%u does not fill %llu bytes", index,
                         v->width, v->height, (unsigned long long)c->raw);
    return AURP_OK;
}

/* The walk every decoder does before it allocates: the whole chunk layout
 * against the stream and the header, and the output size against the
 * limit.  *largest: the largest raw length of a chunk that must be decoded
 * (stored chunks are passed through, not decoded). */
static aurp_status check_layout(const uint8_t *in, size_t in_len, const container_header *h,
                                uint64_t max_output, uint64_t *largest, aurp_error *err)
{
    if (max_output == 0) max_output = AURP_DEFAULT_MAX_OUTPUT;
    if (h->original_size > max_output)
        return aurp_fail(err, AURP_ERR_LIMIT,
                         "the stream declares %llu bytes of output, over the limit of %llu",
                         (unsigned long long)h->original_size, (unsigned long long)max_output);
    /* every chunk takes >= 24 bytes */
    if (h->nchunks > (in_len - CONTAINER_HEADER) / CHUNK_HEADER)
        return aurp_fail(err, AURP_ERR_CORRUPT, "%u chunks cannot fit in %zu bytes", h->nchunks, in_len);
    size_t pos = CONTAINER_HEADER;
    uint64_t at = 0, big = 0;
    for (uint32_t i = 0; i < h->nchunks; i++) {
        chunk c;
        aurp_status st = read_chunk(in, in_len, &pos, i, &c, NULL, err);
        if (st != AURP_OK) return st;
        if (c.raw > h->original_size - at)
            return aurp_fail(err, AURP_ERR_CORRUPT, "chunk %u: restores past the original size %llu", i,
                             (unsigned long long)h->original_size);
        if (c.method == AURP_CHUNK_IMAGE) {
            aurp_stream_view v;
            st = check_image_chunk(&c, i, &v, err);
            if (st != AURP_OK) return st;
        }
        if ((c.method == AURP_CHUNK_GENERAL || c.method == AURP_CHUNK_TEXT) && c.raw / GC_MAX_EXPANSION >= c.enc)
            return aurp_fail(err, AURP_ERR_CORRUPT,
                             "chunk %u: %llu bytes cannot be general-coded in %llu (at most %d per byte)",
                             i, (unsigned long long)c.raw, (unsigned long long)c.enc, GC_MAX_EXPANSION);
        if (c.method != AURP_CHUNK_STORED && c.raw > big) big = c.raw;
        at += c.raw;
    }
    if (at != h->original_size)
        return aurp_fail(err, AURP_ERR_CORRUPT, "chunks restore %llu bytes, header says %llu",
                         (unsigned long long)at, (unsigned long long)h->original_size);
    if (pos != in_len)
        return aurp_fail(err, AURP_ERR_CORRUPT, "%zu trailing bytes after the last chunk", in_len - pos);
    if (big > SIZE_MAX)
        return aurp_fail(err, AURP_ERR_NOMEM, "a chunk of %llu bytes does not fit in memory",
                         (unsigned long long)big);
    if (largest) *largest = big;
    return AURP_OK;
}

aurp_status aurp_original_size(const uint8_t *in, size_t in_len, uint64_t *size, aurp_error *err)
{
    container_header h;
    aurp_status st = read_header(in, in_len, 0, &h, err);
    if (st == AURP_OK) *size = h.original_size;
    return st;
}

aurp_status aurp_check_stream(const uint8_t *in, size_t in_len, uint64_t max_output,
                              uint64_t *original_size, aurp_error *err)
{
    container_header h;
    aurp_status st = read_header(in, in_len, 1, &h, err);
    if (st == AURP_OK) st = check_layout(in, in_len, &h, max_output, NULL, err);
    if (st == AURP_OK && original_size) *original_size = h.original_size;
    return st;
}

/* Decodes one chunk (already checked by check_layout) into dst; own: dst is
 * this file's malloc'd scratch, where an image may be decoded in place. */
static aurp_status decode_chunk(const chunk *c, uint32_t index, int threads, uint8_t *dst, int own,
                                aurp_error *err)
{
    if (c->method == AURP_CHUNK_STORED) {
        memcpy(dst, c->payload, (size_t)c->raw);
        return AURP_OK;
    }
    if (c->method == AURP_CHUNK_GENERAL || c->method == AURP_CHUNK_TEXT) {
        int text = c->method == AURP_CHUNK_TEXT;
        int rc = (text ? aurp_tc_decode : aurp_gc_decode)(c->payload, (size_t)c->enc, dst, (size_t)c->raw);
        if (rc == -2) return aurp_fail(err, AURP_ERR_NOMEM, "chunk %u: out of memory", index);
        if (rc != 0)
            return aurp_fail(err, AURP_ERR_CORRUPT, "chunk %u: %s coding corrupt", index, text ? "text" : "general");
        return AURP_OK;
    }
    aurp_stream_view v;
    aurp_status st = check_image_chunk(c, index, &v, err);
    if (st != AURP_OK) return st;
    st = own ? aurp_image_decode_in_place(c->payload, (size_t)c->enc, v.width, v.height, threads, dst, err)
             : aurp_image_decode(c->payload, (size_t)c->enc, v.width, v.height, threads, dst, err);
    if (st != AURP_OK) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err ? err->msg : "");
        why[sizeof why - 20] = 0; /* room for the prefix */
        return aurp_fail(err, st, "chunk %u: %s", index, why);
    }
    return AURP_OK;
}

/* The one decoding loop: into out (the whole original, cap bytes) when out
 * is given, else chunk by chunk through a scratch buffer of the largest
 * chunk and into write (which may be NULL).  The restored bytes are hashed
 * as they come, so nothing needs the whole output at once. */
static aurp_status decode_all(const uint8_t *in, size_t in_len, int threads, uint64_t max_output,
                              uint8_t *out, size_t cap, aurp_write_fn write, void *ctx,
                              uint64_t *restored, aurp_error *err)
{
    container_header h;
    aurp_status st = read_header(in, in_len, 1, &h, err);
    if (st != AURP_OK) return st;
    if (out && h.original_size > cap)
        return aurp_fail(err, AURP_ERR_CAPACITY, "original of %llu bytes, output buffer %zu",
                         (unsigned long long)h.original_size, cap);
    uint64_t largest = 0;
    st = check_layout(in, in_len, &h, out ? (h.original_size ? h.original_size : 1) : max_output,
                      &largest, err);
    if (st != AURP_OK) return st;
    if (threads < 1) threads = 1;
    uint8_t *scratch = NULL;
    if (!out && largest) {
        scratch = malloc((size_t)largest);
        if (!scratch)
            return aurp_fail(err, AURP_ERR_NOMEM, "out of memory (%llu bytes for the largest chunk)",
                             (unsigned long long)largest);
    }
    XXH3_state_t hash;
    XXH3_64bits_reset(&hash);
    size_t pos = CONTAINER_HEADER;
    uint64_t at = 0;
    for (uint32_t i = 0; i < h.nchunks && st == AURP_OK; i++) {
        chunk c;
        st = read_chunk(in, in_len, &pos, i, &c, NULL, err);
        if (st != AURP_OK) break;
        const uint8_t *bytes;
        if (out) {
            st = decode_chunk(&c, i, threads, out + at, 0, err);
            bytes = out + at;
        } else if (c.method == AURP_CHUNK_STORED) {
            bytes = c.payload; /* passed through: no copy */
        } else {
            st = decode_chunk(&c, i, threads, scratch, 1, err);
            bytes = scratch;
        }
        if (st != AURP_OK) break;
        XXH3_64bits_update(&hash, bytes, (size_t)c.raw);
        if (write && write(ctx, bytes, (size_t)c.raw) != 0)
            st = aurp_fail(err, AURP_ERR_PARAM, "chunk %u: the output stopped the decoding", i);
        at += c.raw;
    }
    free(scratch);
    if (st != AURP_OK) return st;
    if (XXH3_64bits_digest(&hash) != h.checksum)
        return aurp_fail(err, AURP_ERR_CHECKSUM, "XXH3-64 of the restored bytes does not match");
    if (restored) *restored = at;
    return AURP_OK;
}

aurp_status aurp_unpack(const uint8_t *in, size_t in_len, int threads, uint8_t *out, size_t cap,
                        size_t *out_len, aurp_error *err)
{
    *out_len = 0;
    uint64_t n = 0;
    /* the caller's buffer is the limit: nothing is allocated beyond it */
    aurp_status st = decode_all(in, in_len, threads, 0, out, cap, NULL, NULL, &n, err);
    if (st == AURP_OK) *out_len = (size_t)n;
    return st;
}

aurp_status aurp_unpack_chunks(const uint8_t *in, size_t in_len, int threads,
                               uint64_t max_output, aurp_write_fn write, void *ctx,
                               uint64_t *restored, aurp_error *err)
{
    if (restored) *restored = 0;
    return decode_all(in, in_len, threads, max_output, NULL, 0, write, ctx, restored, err);
}

/* Fills info chunk by chunk; stops at the first chunk that cannot be read,
 * keeping those before it. */
static aurp_status inspect_chunks(const uint8_t *in, size_t in_len, const container_header *h,
                                  aurp_info *info, aurp_damage *d, aurp_error *err)
{
    /* every chunk takes >= 24 bytes: bounds the allocation by the input */
    uint32_t fit = (uint32_t)((in_len - CONTAINER_HEADER) / CHUNK_HEADER);
    uint32_t room = h->nchunks < fit ? h->nchunks : fit;
    info->chunks = calloc(room ? room : 1, sizeof *info->chunks);
    if (!info->chunks) return aurp_fail(err, AURP_ERR_NOMEM, "out of memory");
    size_t pos = CONTAINER_HEADER;
    uint64_t at = 0;
    for (uint32_t i = 0; i < h->nchunks; i++) {
        chunk c;
        uint64_t short_by = 0;
        if (i == room) { /* the declared chunks cannot all fit: the stream is cut */
            d->truncated = 1;
            d->missing = (uint64_t)(h->nchunks - i) * CHUNK_HEADER;
            return aurp_fail(err, AURP_ERR_CORRUPT,
                             "truncated: %u chunks declared, the stream ends after %u (%zu bytes)",
                             h->nchunks, i, in_len);
        }
        aurp_status st = read_chunk(in, in_len, &pos, i, &c, &short_by, err);
        if (st != AURP_OK) {
            if (short_by) {
                d->truncated = 1;
                d->missing = short_by + (uint64_t)(h->nchunks - i - 1) * CHUNK_HEADER;
            }
            return st;
        }
        if (c.raw > h->original_size - at)
            return aurp_fail(err, AURP_ERR_CORRUPT, "chunk %u: restores past the original size", i);
        aurp_chunk_info *ci = &info->chunks[i];
        ci->method = c.method;
        ci->raw_len = c.raw;
        ci->enc_len = c.enc;
        if (c.method == AURP_CHUNK_IMAGE) {
            aurp_stream_view v;
            st = check_image_chunk(&c, i, &v, err);
            if (st != AURP_OK) return st;
            ci->width = v.width;
            ci->height = v.height;
            ci->profile = v.profile;
            ci->order = v.order;
            ci->equations = v.equations;
            ci->threshold = (int)v.threshold;
            ci->t_lo = v.t_lo;
            ci->t_hi = v.t_hi;
            ci->escapes = v.escapes;
        }
        at += c.raw;
        d->readable_raw = at;
        info->nchunks = (int)(i + 1);
    }
    if (at != h->original_size || pos != in_len)
        return aurp_fail(err, AURP_ERR_CORRUPT, "chunks restore %llu of %llu bytes, %zu trailing bytes",
                         (unsigned long long)at, (unsigned long long)h->original_size, in_len - pos);
    return AURP_OK;
}

aurp_status aurp_inspect_partial(const uint8_t *in, size_t in_len, aurp_info *info,
                                 aurp_damage *damage, aurp_error *err)
{
    memset(info, 0, sizeof *info);
    aurp_damage local;
    aurp_damage *d = damage ? damage : &local;
    memset(d, 0, sizeof *d);
    container_header h;
    aurp_status st = read_header(in, in_len, 0, &h, err);
    if (st != AURP_OK) {
        d->truncated = in_len < CONTAINER_HEADER && in_len >= 8 && memcmp(in, MAGIC, 8) == 0;
        if (d->truncated) d->missing = CONTAINER_HEADER - in_len;
        return st;
    }
    d->header_ok = 1;
    d->declared_chunks = h.nchunks;
    d->checksum_ok =
        aurp_checksum(in + CONTAINER_HEADER, in_len - CONTAINER_HEADER) == h.stream_checksum;
    info->version = AURP_FORMAT_VERSION;
    info->original_size = h.original_size;
    info->checksum = h.checksum;
    /* the chunks are read even when the checksum fails: they say how much
     * is there and whether the stream was cut short */
    aurp_error chunk_err = {{0}};
    aurp_status cst = inspect_chunks(in, in_len, &h, info, d, &chunk_err);
    if (cst != AURP_OK && (d->truncated || d->checksum_ok)) {
        if (err) *err = chunk_err;
        return cst;
    }
    if (!d->checksum_ok) {
        if (cst != AURP_OK)
            return aurp_fail(err, AURP_ERR_CORRUPT, "stream damaged: checksum of the chunk bytes does not match; %s",
                             chunk_err.msg);
        return aurp_fail(err, AURP_ERR_CORRUPT,
                         "stream damaged: XXH3-64 of its %zu chunk bytes does not match",
                         in_len - CONTAINER_HEADER);
    }
    return AURP_OK;
}

aurp_status aurp_inspect(const uint8_t *in, size_t in_len, aurp_info *info, aurp_error *err)
{
    aurp_status st = aurp_inspect_partial(in, in_len, info, NULL, err);
    if (st != AURP_OK) aurp_info_free(info);
    return st;
}

void aurp_info_free(aurp_info *info)
{
    free(info->chunks);
    info->chunks = NULL;
    info->nchunks = 0;
}

/* The decoder under hostile declared sizes (issue 9 item 5): streams that
 * declare 2^62 bytes, or a huge image in a tiny stream, must be refused
 * with a clean error before anything big is allocated.  Runs under ASan in
 * `make test`, where an allocation of 2^62 bytes (or of more than the
 * machine has) aborts the program instead of returning NULL.  Also: streaming decode (aurp_unpack_chunks) against
 * aurp_unpack, and what aurp_inspect_partial says about damaged streams. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "aurp.h"
#include "core_frames.h"
#include "frame.h"
#include "internal.h"

#define HDR 40
#define CHDR 24

/* Finishes a container of total length len whose chunks are in place:
 * header fields and both checksums (original's given). */
static void finish_container(uint8_t *s, size_t len, uint32_t nchunks, uint64_t original_size,
                             uint64_t original_checksum)
{
    static const uint8_t magic[8] = {0x89, 'A', 'U', 'R', 'P', '\r', '\n', 0x1a};
    memcpy(s, magic, 8);
    aurp_put_u16(s + 8, 1);
    aurp_put_u16(s + 10, 0);
    aurp_put_u32(s + 12, nchunks);
    aurp_put_u64(s + 16, original_size);
    aurp_put_u64(s + 24, original_checksum);
    aurp_put_u64(s + 32, aurp_checksum(s + HDR, len - HDR));
}

static void put_chunk(uint8_t *p, int method, uint64_t raw, uint64_t enc)
{
    memset(p, 0, CHDR);
    p[0] = (uint8_t)method;
    aurp_put_u64(p + 8, raw);
    aurp_put_u64(p + 16, enc);
}

/* A valid image stream (FORMAT.md section 2) of a W x H image of zeros with
 * segments of 2^seg_log2 symbols: every residual is 0, so one symbol has
 * all the probability and every rANS segment is its 4-byte final state.
 * That is how a stream of a few kilobytes validly declares gigabytes. */
static uint8_t *zero_image_stream(uint32_t w, uint32_t h, int seg_log2, size_t *len)
{
    uint64_t px = (uint64_t)w * h;
    uint8_t var[16];
    size_t vl = 0;
    for (uint64_t c = px; ; c >>= 7) { /* count of symbol 0, then ESC's 0 */
        var[vl++] = (uint8_t)((c & 0x7F) | (c >= 0x80 ? 0x80 : 0));
        if (c < 0x80) break;
    }
    var[vl++] = 0;
    uint8_t table[256];
    size_t tl = aurp_gc_encode(var, vl, table, sizeof table);
    cr_assert(tl > 0 && tl != (size_t)-1);
    uint64_t nseg = (px + (1ull << seg_log2) - 1) >> seg_log2;
    *len = HDR + 4 + tl + 8 * nseg;
    uint8_t *s = calloc(1, *len);
    s[0] = 1, s[1] = 11, s[2] = 7, s[3] = 20;
    aurp_put_u32(s + 4, w);
    aurp_put_u32(s + 8, h);
    aurp_put_u32(s + 12, 13);
    aurp_put_u32(s + 16, 0); /* T- = 0 */
    aurp_put_u32(s + 20, 0); /* T+ = 0: symbols {0, ESC} */
    s[24] = (uint8_t)seg_log2;
    aurp_put_u32(s + 28, (uint32_t)(4 + tl));
    aurp_put_u64(s + 32, 0);
    aurp_put_u32(s + HDR, (uint32_t)vl);
    memcpy(s + HDR + 4, table, tl);
    uint8_t *lens = s + HDR + 4 + tl, *segs = lens + 4 * nseg;
    for (uint64_t i = 0; i < nseg; i++) {
        aurp_put_u32(lens + 4 * i, 4);
        aurp_put_u32(segs + 4 * i, AURP_RANS_L);
    }
    return s;
}

/* A container holding one image chunk. */
static uint8_t *image_container(const uint8_t *img, size_t img_len, uint64_t raw,
                                uint64_t checksum, size_t *len)
{
    *len = HDR + CHDR + img_len;
    uint8_t *s = calloc(1, *len);
    put_chunk(s + HDR, AURP_CHUNK_IMAGE, raw, img_len);
    memcpy(s + HDR + CHDR, img, img_len);
    finish_container(s, *len, 1, raw, checksum);
    return s;
}

Test(core_limits, a_stream_declaring_2_pow_62_bytes_is_refused_before_allocation)
{
    /* one general chunk of 2^62 bytes in 16 bytes of payload */
    size_t len = HDR + CHDR + 16;
    uint8_t s[HDR + CHDR + 16] = {0};
    const uint64_t huge = 1ull << 62;
    put_chunk(s + HDR, AURP_CHUNK_GENERAL, huge, 16);
    finish_container(s, len, 1, huge, 0);
    aurp_error err = {{0}};
    uint64_t size = 0;
    cr_assert_eq(aurp_check_stream(s, len, 0, &size, &err), AURP_ERR_LIMIT);
    cr_assert(strstr(err.msg, "over the limit"), "%s", err.msg);
    /* no limit at all: still refused, by what 16 bytes can restore */
    cr_assert_eq(aurp_check_stream(s, len, UINT64_MAX, &size, &err), AURP_ERR_CORRUPT, "%s", err.msg);
    uint8_t *out = NULL;
    size_t out_len = 0;
    cr_assert_eq(frame_unpack(s, len, 2, &out, &out_len, &err), AURP_ERR_LIMIT, "%s", err.msg);
    cr_assert_null(out);
    cr_assert_eq(frame_unpack_limited(s, len, 2, UINT64_MAX, &out, &out_len, &err), AURP_ERR_CORRUPT);
    uint64_t restored = 1;
    cr_assert_eq(aurp_unpack_chunks(s, len, 2, 0, NULL, NULL, &restored, &err), AURP_ERR_LIMIT);
    cr_assert_eq(restored, 0);
    uint8_t small[64];
    cr_assert_eq(aurp_unpack(s, len, 1, small, sizeof small, &out_len, &err), AURP_ERR_CAPACITY);

    /* the header alone declaring 2^62, no chunks */
    uint8_t bare[HDR];
    finish_container(bare, HDR, 0, huge, 0);
    cr_assert_eq(aurp_check_stream(bare, HDR, 0, NULL, &err), AURP_ERR_LIMIT);
    cr_assert_eq(aurp_check_stream(bare, HDR, UINT64_MAX, NULL, &err), AURP_ERR_CORRUPT);
    cr_assert_eq(frame_unpack_limited(bare, HDR, 1, UINT64_MAX, &out, &out_len, &err), AURP_ERR_CORRUPT);
    /* and 2^32 chunks declared in a 40-byte stream */
    aurp_put_u32(bare + 12, UINT32_MAX);
    aurp_put_u64(bare + 16, 100);
    cr_assert_eq(aurp_check_stream(bare, HDR, 0, NULL, &err), AURP_ERR_CORRUPT);
    aurp_info info;
    cr_assert_neq(aurp_inspect(bare, HDR, &info, &err), AURP_OK);
}

Test(core_limits, an_8_gib_image_in_a_2_kib_stream_is_refused_by_the_default_limit)
{
    size_t img_len, len;
    uint8_t *img = zero_image_stream(65536, 65535, 24, &img_len);
    uint64_t raw = 2ull * 65536 * 65535;
    uint8_t *s = image_container(img, img_len, raw, 0, &len);
    cr_assert_lt(len, 4096, "the stream is %zu bytes", len);
    aurp_error err = {{0}};
    /* the stream is valid: inspect reads it */
    aurp_info info;
    cr_assert_eq(aurp_inspect(s, len, &info, &err), AURP_OK, "%s", err.msg);
    cr_assert_eq(info.chunks[0].width, 65536);
    aurp_info_free(&info);
    cr_assert_eq(aurp_check_stream(s, len, 0, NULL, &err), AURP_ERR_LIMIT, "%s", err.msg);
    uint8_t *out = NULL;
    size_t out_len = 0;
    cr_assert_eq(frame_unpack(s, len, 2, &out, &out_len, &err), AURP_ERR_LIMIT);
    cr_assert_eq(aurp_unpack_chunks(s, len, 2, 0, NULL, NULL, NULL, &err), AURP_ERR_LIMIT);
    cr_assert_eq(aurp_unpack_chunks(s, len, 2, 1u << 20, NULL, NULL, NULL, &err), AURP_ERR_LIMIT);
    free(s);
    free(img);
}

typedef struct {
    uint8_t *buf;
    size_t len, cap;
    int calls, stop_after;
} collector;

static int collect(void *ctx, const uint8_t *data, size_t len)
{
    collector *c = ctx;
    if (c->stop_after && c->calls == c->stop_after) return 1;
    c->calls++;
    cr_assert_leq(c->len + len, c->cap);
    memcpy(c->buf + c->len, data, len);
    c->len += len;
    return 0;
}

Test(core_limits, a_valid_tiny_stream_decodes_within_its_limit_and_not_beyond, .timeout = 120)
{
    const uint32_t w = 1024, h = 1024;
    size_t img_len, len;
    uint8_t *img = zero_image_stream(w, h, 24, &img_len);
    size_t raw = 2 * (size_t)w * h;
    uint8_t *expect = malloc(raw);
    for (size_t i = 0; i < raw; i += 2) expect[i] = 0x80, expect[i + 1] = 0; /* u = 0 */
    uint8_t *s = image_container(img, img_len, raw, aurp_checksum(expect, raw), &len);
    aurp_error err = {{0}};
    cr_assert_eq(aurp_check_stream(s, len, raw - 1, NULL, &err), AURP_ERR_LIMIT);
    uint64_t size = 0;
    cr_assert_eq(aurp_check_stream(s, len, raw, &size, &err), AURP_OK, "%s", err.msg);
    cr_assert_eq(size, raw);
    collector c = {malloc(raw), 0, raw, 0, 0};
    uint64_t restored = 0;
    cr_assert_eq(aurp_unpack_chunks(s, len, 2, raw, collect, &c, &restored, &err), AURP_OK, "%s", err.msg);
    cr_assert_eq(restored, raw);
    cr_assert_eq(c.len, raw);
    cr_assert_eq(memcmp(c.buf, expect, raw), 0);
    /* verify only: no sink */
    cr_assert_eq(aurp_unpack_chunks(s, len, 1, 0, NULL, NULL, &restored, &err), AURP_OK, "%s", err.msg);
    free(c.buf);
    free(expect);
    free(s);
    free(img);
}

/* A frame-like original: a header block, an image, padding, so that the
 * stream has general, image and stored chunks. */
static uint8_t *frame_like(size_t *olen, uint8_t **packed, size_t *plen)
{
    const uint32_t w = 64, h = 48;
    size_t n = 2880 + 2 * w * h + 1000;
    uint8_t *src = calloc(1, n);
    for (size_t i = 0; i < 2880; i++) src[i] = (uint8_t)("SIMPLE  =                    T / "[i % 33]);
    uint16_t *u = malloc(2 * w * h);
    core_frame_make(CORE_FRAME_SPECTRUM, w, h, 5, u);
    core_frame_to_be16(u, (size_t)w * h, src + 2880);
    free(u);
    uint64_t st = 3;
    for (size_t i = 2880 + 2 * w * h; i < n; i++) src[i] = (uint8_t)core_rand(&st); /* stored */
    aurp_region r = {2880, w, h};
    aurp_params p;
    aurp_params_default(&p);
    size_t cap = aurp_pack_bound(n);
    *packed = malloc(cap);
    aurp_error err = {{0}};
    cr_assert_eq(aurp_pack(src, n, &r, 1, &p, NULL, 1, *packed, cap, plen, &err), AURP_OK, "%s", err.msg);
    *olen = n;
    return src;
}

Test(core_limits, streaming_decode_restores_what_unpack_restores_chunk_by_chunk)
{
    size_t olen, plen;
    uint8_t *packed;
    uint8_t *orig = frame_like(&olen, &packed, &plen);
    aurp_info info;
    aurp_error err = {{0}};
    cr_assert_eq(aurp_inspect(packed, plen, &info, &err), AURP_OK);
    cr_assert_eq(info.nchunks, 3);
    cr_assert_eq(info.chunks[2].method, AURP_CHUNK_STORED);
    aurp_info_free(&info);
    collector c = {malloc(olen), 0, olen, 0, 0};
    uint64_t restored = 0;
    cr_assert_eq(aurp_unpack_chunks(packed, plen, 2, 0, collect, &c, &restored, &err), AURP_OK, "%s", err.msg);
    cr_assert_eq(c.calls, 3, "one write per chunk");
    cr_assert_eq(restored, olen);
    cr_assert_eq(memcmp(c.buf, orig, olen), 0);
    /* a sink that stops the decoding */
    collector stop = {malloc(olen), 0, olen, 0, 1};
    cr_assert_eq(aurp_unpack_chunks(packed, plen, 1, 0, collect, &stop, &restored, &err), AURP_ERR_PARAM);
    cr_assert_eq(restored, 0);
    /* a damaged checksum of the original: the sink saw the bytes, the result says no */
    aurp_put_u64(packed + 24, aurp_get_u64(packed + 24) ^ 1);
    c.len = 0;
    cr_assert_eq(aurp_unpack_chunks(packed, plen, 1, 0, collect, &c, &restored, &err), AURP_ERR_CHECKSUM);
    free(stop.buf);
    free(c.buf);
    free(orig);
    free(packed);
}

Test(core_limits, inspect_partial_says_truncated_and_keeps_the_readable_chunks)
{
    size_t olen, plen;
    uint8_t *packed;
    uint8_t *orig = frame_like(&olen, &packed, &plen);
    aurp_info info;
    aurp_damage d;
    aurp_error err = {{0}};
    cr_assert_eq(aurp_inspect_partial(packed, plen, &info, &d, &err), AURP_OK, "%s", err.msg);
    cr_assert(d.checksum_ok && !d.truncated);
    aurp_info_free(&info);
    /* cut inside the last chunk */
    size_t cut = plen - 100;
    cr_assert_eq(aurp_inspect_partial(packed, cut, &info, &d, &err), AURP_ERR_CORRUPT);
    cr_assert(d.header_ok && d.truncated && !d.checksum_ok);
    cr_assert_eq(d.missing, 100);
    cr_assert_eq(info.nchunks, 2, "the two chunks before the cut are readable");
    cr_assert(strstr(err.msg, "truncated"), "%s", err.msg);
    aurp_info_free(&info);
    /* cut inside the header */
    cr_assert_eq(aurp_inspect_partial(packed, 20, &info, &d, &err), AURP_ERR_CORRUPT);
    cr_assert(d.truncated && !d.header_ok);
    cr_assert(strstr(err.msg, "truncated"), "%s", err.msg);
    aurp_info_free(&info);
    /* one flipped payload byte: damaged, not truncated, every chunk listed */
    packed[plen - 7] ^= 0x10;
    cr_assert_eq(aurp_inspect_partial(packed, plen, &info, &d, &err), AURP_ERR_CORRUPT);
    cr_assert(d.header_ok && !d.truncated && !d.checksum_ok);
    cr_assert_eq(info.nchunks, 3);
    cr_assert(strstr(err.msg, "damaged"), "%s", err.msg);
    aurp_info_free(&info);
    free(orig);
    free(packed);
}

/* Damaged streams: every single-bit flip and every truncation of a small
 * packed container must be reported as an error (never a crash, never
 * wrong output); so must trailing bytes.  Runs under ASan + UBSan in
 * `make test`, which also catches any read out of bounds. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "aurp.h"
#include "core_frames.h"

static const int profiles[] = {AURP_PROFILE_PAPER, AURP_PROFILE_LSMIX};

static uint8_t *make_packed(int profile, size_t *plen, uint8_t **orig, size_t *olen)
{
    /* a header-like block, a 19 x 13 image, a little padding */
    uint32_t w = 24, h = 16;
    size_t n = 160 + 2 * w * h + 40;
    uint8_t *src = calloc(1, n);
    for (size_t i = 0; i < 160; i++) src[i] = (uint8_t)("NAXIS1  =                   24 / "[i % 33]);
    /* smooth ramps (well predicted) with a few spikes (escapes) */
    uint16_t *u = malloc(2 * w * h);
    uint64_t s = 11;
    for (uint32_t i = 0; i < w * h; i++) {
        uint32_t m = i / w, c = i % w;
        u[i] = (uint16_t)(3000 + 40 * c + 7 * m + (core_rand(&s) % 3));
        if (core_rand(&s) % 40 == 0) u[i] = (uint16_t)core_rand(&s);
    }
    core_frame_to_be16(u, (size_t)w * h, src + 160);
    free(u);
    aurp_region r = {160, w, h};
    aurp_params p;
    aurp_params_for_profile(&p, profile);
    if (profile == AURP_PROFILE_PAPER) p.threshold = 2; /* some escapes, so every stream part is present */
    size_t cap = aurp_pack_bound(n);
    uint8_t *out = malloc(cap);
    aurp_error err = {{0}};
    cr_assert_eq(aurp_pack(src, n, &r, 1, &p, NULL, 1, out, cap, plen, &err), AURP_OK, "%s", err.msg);
    aurp_info info;
    cr_assert_eq(aurp_inspect(out, *plen, &info, &err), AURP_OK);
    cr_assert_eq(info.nchunks, 3);
    cr_assert_eq(info.chunks[1].method, AURP_CHUNK_IMAGE, "the image must be coded, not stored");
    if (profile == AURP_PROFILE_PAPER) cr_assert_gt(info.chunks[1].escapes, 0);
    aurp_info_free(&info);
    *orig = src;
    *olen = n;
    return out;
}

Test(core_damage, every_bit_flip_is_an_error, .timeout = 600)
{
  for (int pi = 0; pi < 2; pi++) {
    size_t plen, olen;
    uint8_t *orig;
    uint8_t *packed = make_packed(profiles[pi], &plen, &orig, &olen);
    uint8_t *buf = malloc(plen), *out = malloc(olen);
    for (size_t i = 0; i < plen; i++) {
        for (int b = 0; b < 8; b++) {
            memcpy(buf, packed, plen);
            buf[i] ^= (uint8_t)(1u << b);
            size_t len = 12345;
            aurp_error err = {{0}};
            aurp_status st = aurp_unpack(buf, plen, 1 + (int)(i & 1), out, olen, &len, &err);
            cr_assert_neq(st, AURP_OK, "profile %d: flip of bit %d of byte %zu/%zu was not detected",
                          profiles[pi], b, i, plen);
            cr_assert_eq(len, 0);
            cr_assert(err.msg[0] != 0, "no reason given for byte %zu bit %d", i, b);
            aurp_info info;
            if (aurp_inspect(buf, plen, &info, &err) == AURP_OK) aurp_info_free(&info);
        }
    }
    free(buf);
    free(out);
    free(packed);
    free(orig);
  }
}

/* The same flips with the stream checksum recomputed, as if the damage had
 * happened before it was computed: the decoders' own checks and the
 * checksum of the original must still catch every one, except in the image
 * stream's T field (it records the encoder's setting and does not take
 * part in decoding) and S (segments of 2^12 or 2^13 symbols are one and
 * the same for this small image): there the damage gives another valid
 * stream of the same original, which only the stream checksum reveals.
 * In an lsmix stream every field takes part in decoding, but a flip in the
 * parameters or the context thresholds (bytes 12 to 23 + 4 (C - 1)) may
 * still decode to the same pixels (a threshold no pixel reaches); anywhere
 * else it must be caught. */
Test(core_damage, flips_behind_a_valid_stream_checksum, .timeout = 600)
{
  for (int pi = 0; pi < 2; pi++) {
    int lsmix = profiles[pi] == AURP_PROFILE_LSMIX;
    size_t plen, olen;
    uint8_t *orig;
    uint8_t *packed = make_packed(profiles[pi], &plen, &orig, &olen);
    aurp_info info;
    aurp_error err = {{0}};
    cr_assert_eq(aurp_inspect(packed, plen, &info, &err), AURP_OK);
    size_t img = 40 + 24 + (size_t)info.chunks[0].enc_len + 24; /* image stream start */
    aurp_info_free(&info);
    uint8_t *buf = malloc(plen), *out = malloc(olen);
    size_t lsx_params_end = img + 24 + 4 * (size_t)(packed[img + 3] - 1);
    int benign = 0;
    for (size_t i = 40; i < plen; i++) {
        if (!lsmix && ((i >= img + 12 && i < img + 16) || i == img + 24)) continue;
        for (int b = 0; b < 8; b++) {
            memcpy(buf, packed, plen);
            buf[i] ^= (uint8_t)(1u << b);
            uint64_t c = aurp_checksum(buf + 40, plen - 40);
            for (int k = 0; k < 8; k++) buf[32 + k] = (uint8_t)(c >> (8 * k));
            size_t len = 12345;
            aurp_status st = aurp_unpack(buf, plen, 1 + (int)(i & 1), out, olen, &len, &err);
            /* chunk by chunk, the image decoded in place in the container's scratch (as unpack and verify do) */
            uint64_t restored = 12345;
            aurp_status st_chunks = aurp_unpack_chunks(buf, plen, 2 - (int)(i & 1), 0, NULL, NULL, &restored, &err);
            cr_assert_eq(st_chunks == AURP_OK, st == AURP_OK, "byte %zu bit %d: the two decoding paths disagree", i, b);
            if (lsmix && st == AURP_OK && i >= img + 12 && i < lsx_params_end) {
                cr_assert(len == olen && memcmp(out, orig, olen) == 0); /* the original's checksum held */
                benign++;
                continue;
            }
            cr_assert_neq(st, AURP_OK, "profile %d: flip of bit %d of byte %zu/%zu (image stream at %zu) not detected",
                          profiles[pi], b, i, plen, img);
            cr_assert_eq(len, 0);
        }
    }
    if (lsmix) cr_assert_lt(benign, 8 * 16, "%d flips of the parameters went unnoticed", benign);
    free(buf);
    free(out);
    free(packed);
    free(orig);
  }
}

Test(core_damage, every_truncation_and_extension_is_an_error)
{
  for (int pi = 0; pi < 2; pi++) {
    size_t plen, olen;
    uint8_t *orig;
    uint8_t *packed = make_packed(profiles[pi], &plen, &orig, &olen);
    uint8_t *out = malloc(olen);
    for (size_t n = 0; n < plen; n++) {
        uint8_t *buf = malloc(n ? n : 1); /* exact size: ASan sees any overread */
        memcpy(buf, packed, n);
        size_t len;
        aurp_error err = {{0}};
        cr_assert_neq(aurp_unpack(buf, n, 2, out, olen, &len, &err), AURP_OK, "truncation to %zu accepted", n);
        aurp_info info;
        if (aurp_inspect(buf, n, &info, &err) == AURP_OK) {
            aurp_info_free(&info);
            cr_assert_fail("inspect accepted a truncation to %zu bytes", n);
        }
        free(buf);
    }
    uint8_t *ext = malloc(plen + 1);
    memcpy(ext, packed, plen);
    ext[plen] = 0;
    size_t len;
    aurp_error err = {{0}};
    cr_assert_eq(aurp_unpack(ext, plen + 1, 1, out, olen, &len, &err), AURP_ERR_CORRUPT);
    cr_assert(err.msg[0] != 0);
    /* and the intact stream does decode */
    cr_assert_eq(aurp_unpack(packed, plen, 1, out, olen, &len, &err), AURP_OK, "%s", err.msg);
    cr_assert(len == olen && memcmp(out, orig, olen) == 0);
    free(ext);
    free(out);
    free(packed);
    free(orig);
  }
}

Test(core_damage, image_stream_alone_rejects_damage)
{
  for (int pi = 0; pi < 2; pi++) {
    /* the image decoder without the container checksum: flips in the
     * header, table, lengths and segments are caught or give other pixels,
     * never a crash; truncations always fail */
    uint32_t w = 23, h = 9;
    uint16_t *u = malloc(2 * w * h);
    core_frame_make(CORE_FRAME_SPECTRUM, w, h, 5, u);
    uint8_t *be = malloc(2 * w * h), *back = malloc(2 * w * h);
    core_frame_to_be16(u, (size_t)w * h, be);
    aurp_params p;
    aurp_params_for_profile(&p, profiles[pi]);
    size_t cap = aurp_image_bound(w, h), len;
    uint8_t *s = malloc(cap);
    aurp_error err = {{0}};
    cr_assert_eq(aurp_image_encode(be, w, h, &p, 1, s, cap, &len, &err), AURP_OK);
    for (size_t n = 0; n < len; n++)
        cr_assert_neq(aurp_image_decode(s, n, w, h, 1, back, &err), AURP_OK, "truncation to %zu", n);
    for (size_t i = 0; i < len; i++)
        for (int b = 0; b < 8; b++) {
            s[i] ^= (uint8_t)(1u << b);
            (void)aurp_image_decode(s, len, w, h, 2, back, &err);
            s[i] ^= (uint8_t)(1u << b);
        }
    cr_assert_eq(aurp_image_decode(s, len, w, h, 1, back, &err), AURP_OK);
    cr_assert_eq(aurp_image_decode(s, len, w + 1, h, 1, back, &err), AURP_ERR_CORRUPT);
    free(u);
    free(be);
    free(back);
    free(s);
  }
}

Test(core_damage, lsmix_unknown_header_flags_are_refused)
{
    /* header byte 23 (FORMAT.md 3.1): bit 0 = prior counts, bit 1 = the BG
     * member, bit 3 = the segments' lengths left out, bit 5 = the carry,
     * all four of which this encoder always sets, bit 2 = the cascade stage
     * and bit 4 its wide support (per frame); bits 6 and 7, bit 4 without
     * bit 2 and bit 5 without bit 3 are unknown and refused by name */
    uint32_t w = 31, h = 7;
    uint16_t *u = malloc(2 * w * h);
    core_frame_make(CORE_FRAME_SPECTRUM, w, h, 3, u);
    uint8_t *be = malloc(2 * w * h), *back = malloc(2 * w * h);
    core_frame_to_be16(u, (size_t)w * h, be);
    aurp_params p;
    aurp_params_for_profile(&p, AURP_PROFILE_LSMIX);
    size_t cap = aurp_image_bound(w, h), len;
    uint8_t *s = malloc(cap);
    aurp_error err = {{0}};
    cr_assert_eq(aurp_image_encode(be, w, h, &p, 1, s, cap, &len, &err), AURP_OK, "%s", err.msg);
    cr_assert_eq(s[0], AURP_PROFILE_LSMIX);
    cr_assert_eq(s[23] & 43, 43, "the encoder sets the prior-counts, BG, no-lengths and carry flags");
    cr_assert_eq(aurp_image_decode(s, len, w, h, 1, back, &err), AURP_OK, "%s", err.msg);
    cr_assert(memcmp(back, be, 2 * (size_t)w * h) == 0);
    /* the same segments read as if their lengths preceded them: refused */
    s[23] ^= 40;
    cr_assert_eq(aurp_image_decode(s, len, w, h, 1, back, &err), AURP_ERR_CORRUPT, "bit 3 cleared: %s", err.msg);
    s[23] ^= 40;
    const uint8_t flags = s[23];
    for (int v = 16; v < 256; v++) {
        s[23] = (uint8_t)v;
        const aurp_status st = aurp_image_decode(s, len, w, h, 1, back, &err);
        if (v >> 7 || ((v & 16) && !(v & 4)) || ((v & 32) && !(v & 8))) {
            cr_assert_eq(st, AURP_ERR_CORRUPT, "flags %#x", v);
            cr_assert(strstr(err.msg, "header flags"), "flags %#x: %s", v, err.msg);
        } else if ((v & ~32) != (flags & ~32)) { /* a wide cascade block read where there is none, or other
                                                     * flags (bit 5 alone changes nothing in one segment) */
            cr_assert(st != AURP_OK || memcmp(back, be, 2 * (size_t)w * h) != 0, "flags %#x: the same pixels", v);
        }
    }
    free(u);
    free(be);
    free(back);
    free(s);
}

/* lsmix streams leave the segments' lengths out (header byte 23 bit 3): a
 * segment ends where its last pixel brings the coder back to its initial
 * state plus the next segment's carry (bit 5: lsmix_carry.h), and the last
 * one at the stream's end.  On a stream of twenty segments every truncation
 * near the end (and a sample before it) and an extra byte are refused, the
 * stream read without its carry is refused, and flips over the whole
 * stream never crash. */
Test(core_damage, segments_without_lengths_end_where_their_coder_says, .timeout = 600)
{
    uint32_t w = 256, h = 160; /* 40960 pixels: twenty segments of 2^11 */
    uint16_t *u = malloc(2 * w * h);
    core_frame_make(CORE_FRAME_SPECTRUM, w, h, 7, u);
    uint8_t *be = malloc(2 * (size_t)w * h), *back = malloc(2 * (size_t)w * h);
    core_frame_to_be16(u, (size_t)w * h, be);
    aurp_params p;
    aurp_params_for_profile(&p, AURP_PROFILE_LSMIX);
    size_t cap = aurp_image_bound(w, h) + 1, len;
    uint8_t *s = malloc(cap);
    aurp_error err = {{0}};
    cr_assert_eq(aurp_image_encode(be, w, h, &p, 2, s, cap, &len, &err), AURP_OK, "%s", err.msg);
    cr_assert_eq(s[23] & 40, 40, "the encoder leaves the segments' lengths out and carries");
    for (int threads = 1; threads <= 2; threads++) {
        cr_assert_eq(aurp_image_decode(s, len, w, h, threads, back, &err), AURP_OK, "%s", err.msg);
        cr_assert(memcmp(back, be, 2 * (size_t)w * h) == 0, "%d threads: other pixels", threads);
    }
    s[23] ^= 32;
    cr_assert_eq(aurp_image_decode(s, len, w, h, 1, back, &err), AURP_ERR_CORRUPT, "the carry ignored");
    s[23] ^= 32;
    for (size_t n = 0; n < len; n += n + 600 < len ? 97 : 1)
        cr_assert_neq(aurp_image_decode(s, n, w, h, 1, back, &err), AURP_OK, "truncation to %zu of %zu", n, len);
    s[len] = 0;
    cr_assert_eq(aurp_image_decode(s, len + 1, w, h, 1, back, &err), AURP_ERR_CORRUPT, "a byte after the last segment");
    for (size_t i = 0; i < len; i += 29) {
        s[i] ^= (uint8_t)(1u << (i % 8));
        (void)aurp_image_decode(s, len, w, h, 2, back, &err);
        s[i] ^= (uint8_t)(1u << (i % 8));
    }
    cr_assert_eq(aurp_image_decode(s, len, w, h, 1, back, &err), AURP_OK, "%s", err.msg);
    free(u);
    free(be);
    free(back);
    free(s);
}

/* The adaptive sign and top raw bit of the lsmix profile (docs/FORMAT.md
 * 3.3, header byte 23 bit 6; core/lsmix_sign.h): the binary contexts'
 * tables from their counts, the sign context's parts from the blend and
 * the cascade, and the encoder's choice between the streams with and
 * without them, both decoding at several thread counts. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lsmix.h"
#include "lsmix_decodes.h"
#include "core_frames.h"
#include "sim.h"

static uint32_t f0_of(uint32_t n0, uint32_t n1)
{
    uint32_t n[2] = {n0, n1};
    return lsx_bin_refresh(n);
}

Test(core_sign, binary_tables_follow_the_specification)
{
    cr_assert_eq(f0_of(0, 0), 2048, "no counts: even odds");
    cr_assert_eq(f0_of(10, 0), 4096 - 4096 / 22, "KT: f1 = floor(1 * 4096 / 22)");
    cr_assert_eq(f0_of(0, 1000), 32, "f1 = 4093 is limited to 4064");
    cr_assert_eq(f0_of(1000, 0), 4064, "f1 = 2 is raised to 32");
    uint32_t n[2] = {700, 500};
    cr_assert_eq(lsx_bin_refresh(n), 4096 - (2 * 250 + 1) * 4096 / (2 * 600 + 2), "halved first: 1200 > 1023");
    cr_assert(n[0] == 350 && n[1] == 250, "the counts are halved in place, rounding up: %u %u", n[0], n[1]);
    n[0] = 512, n[1] = 511; /* 1023: not halved */
    lsx_bin_refresh(n);
    cr_assert(n[0] == 512 && n[1] == 511);
    /* every pair a refresh can see: the frequencies stay in range, and a
     * context that saw more ones gives zero less room */
    for (uint32_t a = 0; a <= 2047; a += 7)
        for (uint32_t b = 0; a + b <= 2047; b += 5) {
            const uint32_t f = f0_of(a, b);
            cr_assert(f >= LSX_BIN_FMIN && f <= 4096 - LSX_BIN_FMIN, "f0(%u, %u) = %u", a, b, f);
            if (a + b + 5 <= LSX_BIN_HALVE) cr_assert(f0_of(a, b + 5) <= f, "f0 rises with n1 at (%u, %u)", a, b);
        }
}

Test(core_sign, context_parts_follow_the_specification)
{
    /* bl = 100.3: r = floor(1024 * 0.3) = 307; LS above, the last member below */
    const uint16_t pre = lsx_sign_pre(100.3, 100, 101.0, 99.0);
    cr_assert_eq(pre, (307 + 512) | 1 << 10);
    cr_assert_eq(lsx_sign_base(pre, 0, 100, 100), 4 * 1 + 3, "no cascade: D = 307 >= 256");
    /* the cascade's sum -400 leaves pred at 100: D = 307 - 400 = -93 */
    cr_assert_eq(lsx_sign_base(pre, -400, 100, 100), 4 + 1);
    /* -700 moves pred to 99: D = 307 - 700 + 1024 = 631 */
    cr_assert_eq(lsx_sign_base(pre, -700, 99, 100), 4 + 3);
    /* below the rounded value, both members above: r = floor(-409.6) = -410 */
    cr_assert_eq(lsx_sign_pre(99.6, 100, 120.0, 101.5), (uint16_t)((-410 + 512) | 3 << 10));
    cr_assert_eq(lsx_sign_base(lsx_sign_pre(99.6, 100, 120.0, 101.5), 0, 100, 100), 12 + 0);
    /* clamped predictions: r at its limits */
    cr_assert_eq(lsx_sign_pre(-3.2, 0, 0.0, 0.0) & 1023, 0);
    cr_assert_eq(lsx_sign_pre(70000.0, 65535, 0.0, 0.0) & 1023, 1023);
    cr_assert_eq(lsx_sign_base(LSX_SIGN_PRE_ROW0, 0, 7, 7), 2, "row 0: D = 0");
    cr_assert(lsx_sign_ctx(5, 1) == 15 && lsx_sign_ctx(5, 4) == 16 && lsx_sign_ctx(5, 16) == 17 &&
              lsx_sign_ctx(15, 63) == LSX_SIGN_CTX - 1);
    /* without the cascade the base's quarter is where bl fell against its
     * rounding, d = bl - P1 at -1/4, 0 and 1/4, exactly (floor(1024 d) >= k
     * where 1024 d >= k): checked on values next to the bounds */
    uint64_t st = 7;
    for (int i = 0; i < 200000; i++) {
        const double p1 = (double)(core_rand(&st) % 60000 + 1000);
        const double q[] = {-0.5, -0.25, 0.0, 0.25};
        double bl = p1 + q[core_rand(&st) % 4];
        const int steps = (int)(core_rand(&st) % 5) - 2;
        for (int s = 0; s < abs(steps); s++) bl = nextafter(bl, steps > 0 ? INFINITY : -INFINITY);
        if (aurp_round_clamp(bl) != p1) continue;
        const double d = bl - p1;
        const int f4 = (d >= -0.25) + (d >= 0) + (d >= 0.25);
        cr_assert_eq(lsx_sign_base(lsx_sign_pre(bl, (uint16_t)p1, 0.0, 0.0), 0, (int32_t)p1, (int32_t)p1), f4,
                     "bl = %.17g", bl);
    }
}

/* The frame's lsmix stream without the adaptive sign (sign_model 0), where
 * its estimate wins (1), with it (2). */
static uint8_t *stream_of(const uint16_t *u, uint32_t w, uint32_t h, int sign_model, size_t *len)
{
    aurp_params p;
    aurp_params_for_profile(&p, AURP_PROFILE_LSMIX);
    const size_t cap = aurp_image_bound(w, h);
    uint8_t *s = malloc(cap);
    aurp_error err = {{0}};
    cr_assert_eq(lsx_image_encode_set(u, w, h, &p, LSX_WRITE_SET, sign_model, 2, s, cap, len, &err), AURP_OK, "%s",
                 err.msg);
    return s;
}

Test(core_sign, the_encoder_keeps_the_stream_the_estimate_says_and_both_decode, .timeout = 600)
{
    static const struct {
        sim_kind kind;
        uint32_t w, h;
    } frames[] = {
        {SIM_KIND_AURORA, 32, 32},   {SIM_KIND_TWILIGHT, 200, 120}, {SIM_KIND_BIAS, 257, 65},
        {SIM_KIND_ECHELLE, 512, 128}, {SIM_KIND_DARK, 256, 256},     {SIM_KIND_ARC, 640, 100},
    };
    int with = 0, without = 0;
    for (size_t f = 0; f < sizeof frames / sizeof frames[0]; f++) {
        const uint32_t w = frames[f].w, h = frames[f].h;
        sim_options o;
        sim_options_for_kind(&o, frames[f].kind);
        uint16_t *u = malloc(2 * (size_t)w * h);
        cr_assert_eq(sim_frame(w, h, 31 + f, 0, &o, u), 0);
        size_t len0, len1, len2;
        uint8_t *s0 = stream_of(u, w, h, 0, &len0), *s1 = stream_of(u, w, h, 1, &len1),
                *s2 = stream_of(u, w, h, 2, &len2);
        cr_assert_eq(s0[23] >> 6 & 1, 0, "frame %zu: the flag without the sign model", f);
        cr_assert_eq(s2[23] >> 6 & 1, 1, "frame %zu: no flag with the sign model asked for", f);
        s2[23] &= (uint8_t)~64u; /* the rest of the header is the unflagged stream's */
        cr_assert(memcmp(s0, s2, LSX_HEADER) == 0, "frame %zu: the headers differ beyond bit 6", f);
        s2[23] |= 64u;
        /* the estimate's choice is one of the two streams, and where they
         * differ by more than the estimate's few bytes, the smaller */
        const int flagged = s1[23] >> 6 & 1;
        const uint8_t *chosen = flagged ? s2 : s0;
        cr_assert(len1 == (flagged ? len2 : len0) && memcmp(s1, chosen, len1) == 0, "frame %zu: another stream", f);
        if (len0 > len2 + 16 || len2 > len0 + 16)
            cr_assert_eq(flagged, len2 < len0, "frame %zu: %zu bytes with, %zu without: the larger kept", f, len2,
                         len0);
        with += flagged, without += !flagged;
        lsmix_assert_decodes(s0, len0, w, h, u);
        lsmix_assert_decodes(s2, len2, w, h, u);
        free(s0);
        free(s1);
        free(s2);
        free(u);
    }
    cr_assert(with >= 2 && without >= 1, "the choice went %d times each way (with %d, without %d)", with + without,
              with, without);
}

/* Damage to a stream with the adaptive sign: every truncation and a byte
 * after the last segment are refused, flips over the whole stream never
 * crash (ASan and UBSan in make test) nor decode to the original without
 * notice where they hit the body, and the flag cleared reads another
 * stream. */
Test(core_sign, damaged_flagged_streams_are_refused, .timeout = 600)
{
    const uint32_t w = 256, h = 160; /* twenty segments: the carry between them */
    uint16_t *u = malloc(2 * (size_t)w * h), *back = malloc(2 * (size_t)w * h);
    core_frame_make(CORE_FRAME_SPECTRUM, w, h, 7, u);
    size_t len;
    uint8_t *s = stream_of(u, w, h, 2, &len);
    s = realloc(s, len + 1);
    cr_assert_eq(s[23] & 104, 104, "the carry, no lengths and the adaptive sign: flags %#x", s[23]);
    aurp_error err = {{0}};
    lsmix_assert_decodes(s, len, w, h, u);
    for (size_t n = 0; n < len; n += n + 600 < len ? 89 : 1)
        cr_assert_neq(lsx_image_decode(s, n, w, h, 1, back, &err), AURP_OK, "truncation to %zu of %zu", n, len);
    s[len] = 0;
    cr_assert_eq(lsx_image_decode(s, len + 1, w, h, 1, back, &err), AURP_ERR_CORRUPT, "a byte after the end");
    s[23] ^= 64;
    cr_assert(lsx_image_decode(s, len, w, h, 1, back, &err) != AURP_OK || memcmp(back, u, 2 * (size_t)w * h) != 0,
              "the flag cleared: the same pixels");
    s[23] ^= 64;
    const size_t head = LSX_HEADER + 4 * (size_t)(s[3] - 1); /* (the cascade block after it, if any) */
    int wrong_silently = 0;
    for (size_t i = head; i < len; i += 31) {
        s[i] ^= (uint8_t)(1u << (i % 8));
        if (lsx_image_decode(s, len, w, h, 1 + (int)(i & 1), back, &err) == AURP_OK &&
            memcmp(back, u, 2 * (size_t)w * h) == 0)
            wrong_silently++;
        s[i] ^= (uint8_t)(1u << (i % 8));
    }
    cr_assert_eq(wrong_silently, 0, "%d flips decoded to the original", wrong_silently);
    lsmix_assert_decodes(s, len, w, h, u);
    free(s);
    free(u);
    free(back);
}

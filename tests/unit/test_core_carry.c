/* The carry of the lsmix segments (core/lsmix_carry.h, FORMAT.md 3.4):
 * the encoders' rule (lsx_carry) and the decoder's (lsx_carry_take) must
 * pick the same symbols and the same bits.  (A stream's carry, its flag
 * and damage to it: test_core_damage.c.) */
#include <criterion/criterion.h>
#include <string.h>

#include "lsmix.h"

static uint32_t next(uint32_t *rng)
{
    *rng = *rng * 1664525u + 1013904223u;
    return *rng >> 8;
}

/* The decoder's side over the residuals res[0..n): each pixel's raw bits
 * then its sign, taken from k while it is open; the values must be the
 * residuals' own, and the carry must close where the encoders' end says. */
static void decode_side(const int32_t *res, uint32_t n, uint32_t c, const lsx_carry_end *end)
{
    lsx_carry_dec k = {c, LSX_CARRY_BITS, 1};
    for (uint32_t q = 0; q < n && q < LSX_CARRY_PIXELS; q++) {
        const uint32_t v = (uint32_t)(res[q] < 0 ? -res[q] : res[q]);
        int nraw;
        ctx_token(v, &nraw);
        uint32_t got;
        if (nraw > 0) {
            const int took = lsx_carry_take(&k, nraw, &got);
            cr_assert_eq(took, lsx_carry_raw(end, q), "pixel %u: raw bits carried %d", q, took);
            if (took) cr_assert_eq(got, v & ((1u << nraw) - 1), "pixel %u: raw bits", q);
        }
        if (v != 0) {
            const int took = lsx_carry_take(&k, 1, &got);
            cr_assert_eq(took, lsx_carry_sign(end, q), "pixel %u: sign carried %d", q, took);
            if (took) cr_assert_eq(got, (uint32_t)(res[q] < 0), "pixel %u: sign", q);
        }
    }
    cr_assert_eq(lsx_carry_close(&k), 0, "bits left in the carry");
}

Test(core_carry, the_encoders_rule_and_the_decoders_agree)
{
    /* by hand: zeros carry nothing; then 0, -1, 40000 and zeros */
    int32_t res[LSX_CARRY_PIXELS + 8];
    lsx_carry_end end;
    memset(res, 0, sizeof res);
    cr_assert_eq(lsx_carry(res, 40, &end), 0u, "zeros carry nothing");
    cr_assert_eq(end.q_end, (uint32_t)LSX_CARRY_PIXELS, "a carry of zeros runs to its last pixel");
    res[1] = -1;
    res[2] = 40000;
    int nraw;
    ctx_token(40000, &nraw);
    const uint32_t c = lsx_carry(res, 40, &end);
    /* pixel 1: no raw bits (|e| < 16 is a token of its own), sign 1 at bit
     * 0; pixel 2: the 13 raw bits of 40000 from bit 1, then its sign (0) */
    cr_assert_eq(nraw > 0 && 1 + nraw + 1 <= LSX_CARRY_BITS, 1, "40000 has %d raw bits", nraw);
    cr_assert_eq(c, 1u | (40000u & ((1u << nraw) - 1)) << 1, "carry %#x", c);
    decode_side(res, 40, c, &end);

    uint32_t rng = 3;
    for (int trial = 0; trial < 20000; trial++) {
        const uint32_t n = 1 + next(&rng) % (LSX_CARRY_PIXELS + 8);
        const int scale = 1 << (next(&rng) % 16);
        for (uint32_t q = 0; q < n; q++) {
            const int32_t m = next(&rng) % 4 == 0 ? 0 : (int32_t)(next(&rng) % (uint32_t)scale);
            res[q] = next(&rng) & 1 ? -m : m;
        }
        const uint32_t cc = lsx_carry(res, n, &end);
        cr_assert_lt(cc, 1u << LSX_CARRY_BITS);
        cr_assert_leq(end.q_end, n < LSX_CARRY_PIXELS ? n : LSX_CARRY_PIXELS);
        decode_side(res, n, cc, &end);
    }
}

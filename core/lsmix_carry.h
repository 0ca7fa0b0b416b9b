/* The carry of the lsmix segments (docs/FORMAT.md 3.4, header byte 23 bit
 * 5): the first uniform symbols (raw bits and signs) of segment s+1 ride in
 * segment s's final rANS state instead of in segment s+1's bytes.
 *
 * Why: a segment's final state costs 4 bytes, but the encoder's initial
 * state 2^23 carries no information, so about 30 of those 32 bits are
 * waste.  An encoder that starts segment s at 2^23 + c, c the next
 * segment's first symbols packed into 30 bits, puts that room to use; the
 * segments' encoders stay independent (c is made of residuals, not of
 * coded bytes), so shorter segments, which shorten the GPU encoder's
 * serial rANS chains, cost about half a byte each instead of four.
 *
 * The symbols carried: in decoding order, the uniform symbols of the
 * segment's first LSX_CARRY_PIXELS pixels, up to the first one that does
 * not fit in the LSX_CARRY_BITS bits left; packed from bit 0 up.  Both
 * encoders and the decoder apply this one rule. */
#ifndef AURP_LSMIX_CARRY_H
#define AURP_LSMIX_CARRY_H

#include <stdint.h>

#include "hostdev.h"
#include "lsmix_arith.h"

#define LSX_CARRY_BITS 30   /* 2^23 + c < 2^31, the rANS state's bound */
#define LSX_CARRY_PIXELS 32 /* a segment's pixels whose symbols may ride */
/* Every segment but the last has at least 2^8 pixels (S >= 8, FORMAT.md
 * 3.1): so a segment's first LSX_CARRY_PIXELS pixels are the first of
 * those left in the image from its start, however long the segment. */
#ifdef __cplusplus
static_assert(LSX_CARRY_PIXELS <= 256, "the carry's pixels lie in the shortest segment");
#else
_Static_assert(LSX_CARRY_PIXELS <= 256, "the carry's pixels lie in the shortest segment");
#endif

/* Where the carry of a segment ends: its pixels [0, q_end) have their raw
 * bits and sign carried, pixel q_end its raw bits too where raw_too. */
typedef struct {
    uint32_t q_end;
    int raw_too;
} lsx_carry_end;

/* The carry of the segment whose first pixel's residual is res[0], with
 * `left` pixels from it to the image's end: the packed value, and (end,
 * where not NULL) how far it reaches. */
static inline AURP_HD uint32_t lsx_carry(const int32_t *res, uint64_t left, lsx_carry_end *end)
{
    lsx_carry_end unused;
    if (!end) end = &unused;
    const uint32_t lim = left < LSX_CARRY_PIXELS ? (uint32_t)left : LSX_CARRY_PIXELS;
    uint32_t c = 0;
    int used = 0;
    for (uint32_t q = 0; q < lim; q++) {
        const int32_t e = res[q];
        const uint32_t v = (uint32_t)(e < 0 ? -e : e);
        int nraw;
        ctx_token(v, &nraw);
        if (used + nraw > LSX_CARRY_BITS) {
            end->q_end = q, end->raw_too = 0;
            return c;
        }
        c |= (v & ((1u << nraw) - 1)) << used;
        used += nraw;
        if (v != 0) {
            if (used + 1 > LSX_CARRY_BITS) {
                end->q_end = q, end->raw_too = 1;
                return c;
            }
            c |= (uint32_t)(e < 0) << used;
            used++;
        }
    }
    end->q_end = lim, end->raw_too = 0;
    return c;
}

/* Whether pixel q of a segment has its raw bits / its sign carried. */
static inline AURP_HD int lsx_carry_raw(const lsx_carry_end *end, uint32_t q)
{
    return q < end->q_end || (q == end->q_end && end->raw_too);
}
static inline AURP_HD int lsx_carry_sign(const lsx_carry_end *end, uint32_t q) { return q < end->q_end; }

/* The decoder's side: the carried bits of the current segment, taken
 * symbol by symbol in the encoders' order. */
typedef struct {
    uint32_t c;    /* the bits not yet taken */
    int left;      /* bits the rule still allows */
    int open;      /* symbols still come from c */
} lsx_carry_dec;

/* A uniform symbol of `bits` bits: from the carry while it is open and the
 * symbol fits (*v set, 1), else the carry closes for good (0).  A closed
 * carry's bits not taken must be zero: lsx_carry_close says so. */
static inline int lsx_carry_take(lsx_carry_dec *k, int bits, uint32_t *v)
{
    if (!k->open) return 0;
    if (bits > k->left) {
        k->open = 0;
        return 0;
    }
    *v = k->c & ((1u << bits) - 1);
    k->c >>= bits;
    k->left -= bits;
    return 1;
}

/* Closes the carry (its pixels are past); 0 when its bits not taken are
 * zero, as the encoders leave them. */
static inline int lsx_carry_close(lsx_carry_dec *k)
{
    k->open = 0;
    return k->c == 0 ? 0 : -1;
}

#endif

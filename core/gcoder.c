/* The general-purpose byte coder (docs/FORMAT.md section 5): an adaptive
 * binary range coder (LZMA-style: 32-bit range, carry through a cached
 * byte) over the 8 bits of every byte, most significant first.  Each bit's
 * probability is the mean of two adaptive estimates, one in the context of
 * the previous byte (order 1) and one in a hash of the previous two bytes
 * (order 2), which suits FITS headers (80-column ASCII cards) and zero
 * padding.  Every step is integer arithmetic, so it is exact everywhere. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "rangecoder.h"

#define PROB_ONE (1u << RC_PROB_BITS)
#define ADAPT 4
#define O2_HASH_BITS 8

typedef struct {
    uint16_t o1[256 * 256];                 /* [previous byte][tree node] */
    uint16_t o2[(1u << O2_HASH_BITS) * 256]; /* [hash of two bytes][tree node] */
} model;

static model *model_new(void)
{
    model *m = malloc(sizeof *m);
    if (!m) return NULL;
    for (size_t i = 0; i < sizeof m->o1 / sizeof m->o1[0]; i++) m->o1[i] = PROB_ONE / 2;
    for (size_t i = 0; i < sizeof m->o2 / sizeof m->o2[0]; i++) m->o2[i] = PROB_ONE / 2;
    return m;
}

static inline uint32_t o2_base(uint32_t c1, uint32_t c2)
{
    uint32_t h = (((c2 << 8) | c1) * 0x9E3779B1u) >> (32 - O2_HASH_BITS);
    return h << 8;
}

static inline void adapt(uint16_t *p, int bit)
{
    if (bit) *p = (uint16_t)(*p - (*p >> ADAPT));
    else *p = (uint16_t)(*p + ((PROB_ONE - *p) >> ADAPT));
}

/* ---- encoder ---------------------------------------------------------- */

size_t aurp_gc_encode(const uint8_t *src, size_t n, uint8_t *out, size_t cap)
{
    model *m = model_new();
    if (!m) return (size_t)-1;
    rc_enc e;
    rc_enc_init(&e, out, cap);
    uint32_t c1 = 0, c2 = 0;
    for (size_t i = 0; i < n && !e.overflow; i++) {
        uint16_t *t1 = m->o1 + (c1 << 8);
        uint16_t *t2 = m->o2 + o2_base(c1, c2);
        uint32_t node = 1;
        for (int b = 7; b >= 0; b--) {
            int bit = (src[i] >> b) & 1;
            uint32_t p0 = ((uint32_t)t1[node] + t2[node]) >> 1;
            rc_enc_bit(&e, p0, bit);
            adapt(&t1[node], bit);
            adapt(&t2[node], bit);
            node = (node << 1) | (uint32_t)bit;
        }
        c2 = c1;
        c1 = src[i];
    }
    free(m);
    return rc_enc_finish(&e);
}

/* ---- decoder ---------------------------------------------------------- */

int aurp_gc_decode(const uint8_t *in, size_t in_len, uint8_t *out, size_t n)
{
    rc_dec d;
    if (rc_dec_init(&d, in, in_len) != 0) return -1;
    model *m = model_new();
    if (!m) return -2;
    uint32_t c1 = 0, c2 = 0;
    for (size_t i = 0; i < n && !d.overrun; i++) {
        uint16_t *t1 = m->o1 + (c1 << 8);
        uint16_t *t2 = m->o2 + o2_base(c1, c2);
        uint32_t node = 1;
        for (int b = 0; b < 8; b++) {
            uint32_t p0 = ((uint32_t)t1[node] + t2[node]) >> 1;
            int bit = rc_dec_bit(&d, p0);
            adapt(&t1[node], bit);
            adapt(&t2[node], bit);
            node = (node << 1) | (uint32_t)bit;
        }
        out[i] = (uint8_t)node;
        c2 = c1;
        c1 = out[i];
    }
    free(m);
    return rc_dec_valid_end(&d) ? 0 : -1;
}

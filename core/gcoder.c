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

#define PROB_BITS 16
#define PROB_ONE (1u << PROB_BITS)
#define ADAPT 4
#define TOP (1u << 24)
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

typedef struct {
    uint64_t low;
    uint32_t range;
    uint8_t cache;
    uint64_t cache_size;
    uint8_t *out;
    size_t pos, cap;
    int overflow;
} rc_enc;

static void put(rc_enc *e, uint8_t b)
{
    if (e->pos < e->cap) e->out[e->pos++] = b;
    else e->overflow = 1;
}

static void shift_low(rc_enc *e)
{
    if ((uint32_t)e->low < 0xFF000000u || (e->low >> 32) != 0) {
        uint8_t carry = (uint8_t)(e->low >> 32);
        uint8_t temp = e->cache;
        do {
            put(e, (uint8_t)(temp + carry));
            temp = 0xFF;
        } while (--e->cache_size != 0);
        e->cache = (uint8_t)(e->low >> 24);
    }
    e->cache_size++;
    e->low = (e->low & 0x00FFFFFFu) << 8;
}

static inline void enc_bit(rc_enc *e, uint32_t p0, int bit)
{
    uint32_t bound = (e->range >> PROB_BITS) * p0;
    if (!bit) {
        e->range = bound;
    } else {
        e->low += bound;
        e->range -= bound;
    }
    while (e->range < TOP) {
        e->range <<= 8;
        shift_low(e);
    }
}

size_t aurp_gc_encode(const uint8_t *src, size_t n, uint8_t *out, size_t cap)
{
    model *m = model_new();
    if (!m) return (size_t)-1;
    rc_enc e = {.low = 0, .range = 0xFFFFFFFFu, .cache = 0, .cache_size = 1, .out = out, .cap = cap};
    uint32_t c1 = 0, c2 = 0;
    for (size_t i = 0; i < n && !e.overflow; i++) {
        uint16_t *t1 = m->o1 + (c1 << 8);
        uint16_t *t2 = m->o2 + o2_base(c1, c2);
        uint32_t node = 1;
        for (int b = 7; b >= 0; b--) {
            int bit = (src[i] >> b) & 1;
            uint32_t p0 = ((uint32_t)t1[node] + t2[node]) >> 1;
            enc_bit(&e, p0, bit);
            adapt(&t1[node], bit);
            adapt(&t2[node], bit);
            node = (node << 1) | (uint32_t)bit;
        }
        c2 = c1;
        c1 = src[i];
    }
    for (int i = 0; i < 5; i++) shift_low(&e);
    free(m);
    return e.overflow ? 0 : e.pos;
}

/* ---- decoder ---------------------------------------------------------- */

typedef struct {
    uint32_t range, code;
    const uint8_t *in;
    size_t pos, len;
    int overrun;
} rc_dec;

static inline uint8_t next(rc_dec *d)
{
    if (d->pos < d->len) return d->in[d->pos++];
    d->overrun = 1;
    return 0;
}

static inline int dec_bit(rc_dec *d, uint32_t p0)
{
    uint32_t bound = (d->range >> PROB_BITS) * p0;
    int bit;
    if (d->code < bound) {
        d->range = bound;
        bit = 0;
    } else {
        d->code -= bound;
        d->range -= bound;
        bit = 1;
    }
    while (d->range < TOP) {
        d->range <<= 8;
        d->code = (d->code << 8) | next(d);
    }
    return bit;
}

int aurp_gc_decode(const uint8_t *in, size_t in_len, uint8_t *out, size_t n)
{
    if (in_len < 5 || in[0] != 0) return -1;
    model *m = model_new();
    if (!m) return -2;
    rc_dec d = {.range = 0xFFFFFFFFu, .code = aurp_get_u32(in + 1), .in = in, .pos = 5, .len = in_len};
    d.code = (d.code >> 24) | ((d.code >> 8) & 0xFF00u) | ((d.code << 8) & 0xFF0000u) | (d.code << 24);
    uint32_t c1 = 0, c2 = 0;
    for (size_t i = 0; i < n && !d.overrun; i++) {
        uint16_t *t1 = m->o1 + (c1 << 8);
        uint16_t *t2 = m->o2 + o2_base(c1, c2);
        uint32_t node = 1;
        for (int b = 0; b < 8; b++) {
            uint32_t p0 = ((uint32_t)t1[node] + t2[node]) >> 1;
            int bit = dec_bit(&d, p0);
            adapt(&t1[node], bit);
            adapt(&t2[node], bit);
            node = (node << 1) | (uint32_t)bit;
        }
        out[i] = (uint8_t)node;
        c2 = c1;
        c1 = out[i];
    }
    free(m);
    /* the encoder flushes all of low: a valid stream leaves code = 0 */
    return (!d.overrun && d.pos == in_len && d.code == 0) ? 0 : -1;
}

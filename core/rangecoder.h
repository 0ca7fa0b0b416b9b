/* The binary range coder of the general-purpose coders (docs/FORMAT.md
 * section 5): LZMA-style, a 32-bit range, carries through a cached byte,
 * bit probabilities p0 (of a 0) in 1/65536.  Shared by the model of
 * section 5.1 (gcoder.c) and that of section 5.2 (textcoder.c). */
#ifndef AURP_RANGECODER_H
#define AURP_RANGECODER_H

#include <stddef.h>
#include <stdint.h>

#define RC_PROB_BITS 16
#define RC_TOP (1u << 24)

typedef struct {
    uint64_t low;
    uint32_t range;
    uint8_t cache;
    uint64_t cache_size;
    uint8_t *out;
    size_t pos, cap;
    int overflow;
} rc_enc;

static inline void rc_enc_init(rc_enc *e, uint8_t *out, size_t cap)
{
    *e = (rc_enc){.low = 0, .range = 0xFFFFFFFFu, .cache = 0, .cache_size = 1, .out = out, .cap = cap};
}

static inline void rc_put(rc_enc *e, uint8_t b)
{
    if (e->pos < e->cap) e->out[e->pos++] = b;
    else e->overflow = 1;
}

static inline void rc_shift_low(rc_enc *e)
{
    if ((uint32_t)e->low < 0xFF000000u || (e->low >> 32) != 0) {
        uint8_t carry = (uint8_t)(e->low >> 32);
        uint8_t temp = e->cache;
        do {
            rc_put(e, (uint8_t)(temp + carry));
            temp = 0xFF;
        } while (--e->cache_size != 0);
        e->cache = (uint8_t)(e->low >> 24);
    }
    e->cache_size++;
    e->low = (e->low & 0x00FFFFFFu) << 8;
}

static inline void rc_enc_bit(rc_enc *e, uint32_t p0, int bit)
{
    uint32_t bound = (e->range >> RC_PROB_BITS) * p0;
    if (!bit) {
        e->range = bound;
    } else {
        e->low += bound;
        e->range -= bound;
    }
    while (e->range < RC_TOP) {
        e->range <<= 8;
        rc_shift_low(e);
    }
}

/* Writes all of low; returns the coded length, or 0 if it did not fit. */
static inline size_t rc_enc_finish(rc_enc *e)
{
    for (int i = 0; i < 5; i++) rc_shift_low(e);
    return e->overflow ? 0 : e->pos;
}

typedef struct {
    uint32_t range, code;
    const uint8_t *in;
    size_t pos, len;
    int overrun;
} rc_dec;

static inline uint8_t rc_next(rc_dec *d)
{
    if (d->pos < d->len) return d->in[d->pos++];
    d->overrun = 1;
    return 0;
}

/* 0, or -1 when the string cannot be a coding (shorter than 5 bytes, or a
 * first byte other than 0). */
static inline int rc_dec_init(rc_dec *d, const uint8_t *in, size_t in_len)
{
    if (in_len < 5 || in[0] != 0) return -1;
    *d = (rc_dec){.range = 0xFFFFFFFFu, .in = in, .pos = 5, .len = in_len};
    d->code = (uint32_t)in[1] << 24 | (uint32_t)in[2] << 16 | (uint32_t)in[3] << 8 | in[4];
    return 0;
}

static inline int rc_dec_bit(rc_dec *d, uint32_t p0)
{
    uint32_t bound = (d->range >> RC_PROB_BITS) * p0;
    int bit;
    if (d->code < bound) {
        d->range = bound;
        bit = 0;
    } else {
        d->code -= bound;
        d->range -= bound;
        bit = 1;
    }
    while (d->range < RC_TOP) {
        d->range <<= 8;
        d->code = (d->code << 8) | rc_next(d);
    }
    return bit;
}

/* A valid coding was read to its end exactly: the encoder flushes all of
 * low, so nothing is left over in code. */
static inline int rc_dec_valid_end(const rc_dec *d)
{
    return !d->overrun && d->pos == d->len && d->code == 0;
}

#endif

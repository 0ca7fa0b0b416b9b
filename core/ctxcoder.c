/* The lsmix residual coder (docs/FORMAT.md 3.3): contexts, hybrid-integer
 * tokens, adaptive token tables refreshed at fixed pixel indices, and a
 * byte-wise rANS whose symbols each carry their own precision. */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "lsmix.h"
#include "lsmix_prior.h"

void ctx_default_thresholds(uint32_t *thr, int nctx)
{
    /* context q >= 1 once floor(2 log2(1 + act16 / 128)) >= q */
    for (int q = 1; q < nctx; q++) thr[q - 1] = (uint32_t)ceil(128.0 * (exp2(q * 0.5) - 1.0));
}

void ctx_model_init(ctx_model *cm, int nctx, int nib, int prior, int bin)
{
    memset(cm, 0, sizeof *cm);
    cm->nctx = nctx;
    cm->bin = bin;
    for (int k = 0; prior && k < nctx; k++) {
        int a = k / nib; /* the activity class of context a * nib + b */
        const uint8_t *row = lsx_ctx_prior[a < LSX_PRIOR_ROWS ? a : LSX_PRIOR_ROWS - 1];
        for (int t = 0; t < CTX_TOKENS; t++) cm->count[k][t] = row[t];
    }
    memset(cm->stale, 1, (size_t)nctx);
    ctx_model_refresh(cm);
}

/* Frequencies of one context: every token at least 1, the rest in
 * proportion to the counts (floor), the remainder to the most counted token
 * (the lowest index among equals).  No counts yet: uniform. */
static inline __attribute__((always_inline)) void refresh_context(const uint32_t *count, uint32_t *freq,
                                                                 uint32_t *cum)
{
    const uint32_t one = 1u << CTX_PROB_BITS;
    uint64_t total = 0;
    for (int t = 0; t < CTX_TOKENS; t++) total += count[t];
    if (total == 0) {
        for (int t = 0; t < CTX_TOKENS; t++) freq[t] = one / CTX_TOKENS;
    } else {
        /* floor(count * spare / total) as a double division, truncated: a
         * vector of divisions where the integer ones ran one by one.  Exact:
         * count * spare < 2^47 and total < 2^38 are exact doubles, and for a
         * quotient k + r / total (0 < r < total) the rounding error, at most
         * (k + 1) 2^-53 with k + 1 <= spare, stays below the distance
         * 1 / total to k + 1 (total (k + 1) < 2^53); an exact k stays k. */
        const double spare = one - CTX_TOKENS, total_d = (double)total;
        uint32_t sum = 0;
        int best = 0;
        for (int t = 0; t < CTX_TOKENS; t++) /* (the quotient is below 2^15: an int32 conversion) */
            freq[t] = 1 + (uint32_t)(int32_t)((double)count[t] * spare / total_d);
        for (int t = 0; t < CTX_TOKENS; t++) {
            sum += freq[t];
            if (count[t] > count[best]) best = t;
        }
        freq[best] += one - sum;
    }
    uint32_t c = 0;
    for (int t = 0; t < CTX_TOKENS; t++) {
        cum[t] = c;
        c += freq[t];
    }
    cum[CTX_TOKENS] = c;
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"), optimize("tree-vectorize")))
#endif
void ctx_model_refresh(ctx_model *cm)
{
    for (int k = 0; k < cm->nctx; k++) {
        if (!cm->stale[k]) continue;
        uint64_t total = 0;
        for (int t = 0; t < CTX_TOKENS; t++) total += cm->count[k][t];
        cm->stale[k] = 0;
        if (total > CTX_HALVE_AT) {
            total = 0;
            for (int t = 0; t < CTX_TOKENS; t++) total += cm->count[k][t] = (cm->count[k][t] + 1) >> 1;
            cm->stale[k] = total > CTX_HALVE_AT;
        }
        refresh_context(cm->count[k], cm->freq[k], cm->cum[k]);
    }
    if (cm->bin) ctx_bin_refresh(&cm->b);
}

void ctx_bin_refresh(ctx_bin_model *bm)
{
    for (int k = 0; k < LSX_SIGN_CTX; k++) bm->sign_f0[k] = lsx_bin_refresh(bm->sign_n[k]);
    for (int t = 0; t < LSX_RAWBIT_CTX; t++) bm->raw_f0[t] = lsx_bin_refresh(bm->raw_n[t]);
}

/* A binary symbol of frequency f0 for 0 (lsmix_sign.h). */
static inline ctx_sym bin_symbol(uint32_t f0, uint32_t bit)
{
    return bit ? (ctx_sym){f0, (1u << LSX_BIN_BITS) - f0, LSX_BIN_BITS} : (ctx_sym){0, f0, LSX_BIN_BITS};
}

int ctx_symbols(const ctx_model *cm, int ctx, int32_t e, int raw_carried, int sign_carried, int b, ctx_sym *out)
{
    uint32_t v = (uint32_t)(e < 0 ? -e : e);
    int nraw, n = 0;
    int t = ctx_token(v, &nraw);
    out[n++] = (ctx_sym){cm->cum[ctx][t], cm->freq[ctx][t], CTX_PROB_BITS};
    if (nraw > 0 && !raw_carried) {
        if (b < 0) {
            out[n++] = (ctx_sym){v & ((1u << nraw) - 1), 1, (uint8_t)nraw};
        } else { /* the top raw bit, then the others (none where nraw is 1) */
            out[n++] = bin_symbol(cm->b.raw_f0[t], v >> (nraw - 1) & 1);
            if (nraw > 1) out[n++] = (ctx_sym){v & ((1u << (nraw - 1)) - 1), 1, (uint8_t)(nraw - 1)};
        }
    }
    if (v != 0 && !sign_carried)
        out[n++] = b < 0 ? (ctx_sym){e < 0, 1, 1} : bin_symbol(cm->b.sign_f0[lsx_sign_ctx(b, t)], e < 0);
    return n;
}

size_t ctx_rans_encode(const ctx_sym *sym, size_t n, uint32_t x0, uint8_t *out, size_t cap)
{
    if (cap < 4) return 0;
    uint8_t *p = out + cap; /* bytes are produced back to front */
    uint32_t x = x0;
    for (size_t i = n; i-- > 0;) {
        const ctx_sym *s = &sym[i];
        uint32_t xmax = ((AURP_RANS_L >> s->bits) << 8) * s->freq;
        while (x >= xmax) {
            if (p == out + 4) return 0;
            *--p = (uint8_t)x;
            x >>= 8;
        }
        x = ((x / s->freq) << s->bits) + (x % s->freq) + s->cum;
    }
    p -= 4;
    aurp_put_u32(p, x);
    size_t len = (size_t)(out + cap - p);
    memmove(out, p, len);
    return len;
}

int ctx_rans_dec_init(ctx_rans_dec *d, const uint8_t *in, size_t len)
{
    if (len < 4) return -1;
    d->in = in;
    d->len = len;
    d->pos = 4;
    d->x = aurp_get_u32(in);
    return 0;
}

/* Takes one symbol of precision bits whose slot is known: x advances by
 * freq * (x >> bits) + slot - cum, then refills. */
static inline int advance(ctx_rans_dec *d, uint32_t freq, uint32_t cum, int bits, uint32_t slot)
{
    d->x = freq * (d->x >> bits) + slot - cum;
    while (d->x < AURP_RANS_L) {
        if (d->pos >= d->len) return -1;
        d->x = (d->x << 8) | d->in[d->pos++];
    }
    return 0;
}

/* A uniform value of bits bits (raw bits and signs): freq 1, cum = value. */
static inline int take_raw(ctx_rans_dec *d, int bits, uint32_t *v)
{
    uint32_t slot = d->x & ((1u << bits) - 1);
    *v = slot;
    return advance(d, 1, slot, bits, slot);
}

/* A binary symbol of frequency f0 for 0 (lsmix_sign.h).  Branchless: a
 * sign is a coin toss to the branch predictor. */
static inline int take_bin(ctx_rans_dec *d, uint32_t f0, uint32_t *v)
{
    const uint32_t slot = d->x & ((1u << LSX_BIN_BITS) - 1);
    const uint32_t bit = slot >= f0, mask = 0u - bit;
    *v = bit;
    return advance(d, f0 + (((1u << LSX_BIN_BITS) - 2 * f0) & mask), f0 & mask, LSX_BIN_BITS, slot);
}

/* Sixteen token bounds a vector: the token search compares all of them at once. */
typedef uint32_t cum_lanes __attribute__((vector_size(16 * sizeof(uint32_t))));
typedef int32_t cum_mask __attribute__((vector_size(16 * sizeof(int32_t))));

/* One residual; its raw bits and sign from the carry k first where k is
 * not NULL (lsx_carry_take); with sign base b >= 0, the adaptive sign and
 * top raw bit (b is a constant -1 in the callers without them). */
static inline __attribute__((always_inline)) int decode_residual(ctx_rans_dec *d, const ctx_model *cm, int ctx,
                                                                 lsx_carry_dec *k, int b, int32_t *e)
{
    const uint32_t *cum = cm->cum[ctx];
    uint32_t slot = d->x & ((1u << CTX_PROB_BITS) - 1);
    /* the token t with cum[t] <= slot < cum[t+1]: every frequency is at
     * least 1 (refresh_context), so cum rises strictly from cum[0] = 0 and
     * t + 1 is the number of cum[0..63] <= slot, counted by vector compares
     * (a binary search's six dependent loads and compares cost more) */
    cum_mask below = {0};
    for (int t = 0; t < CTX_TOKENS; t += 16) {
        cum_lanes c;
        memcpy(&c, cum + t, sizeof c);
        below += (cum_mask)(c <= slot); /* -1 where cum[t] <= slot */
    }
    int32_t count = 0;
    for (int l = 0; l < 16; l++) count -= below[l];
    const int lo = count - 1;
    if (advance(d, cm->freq[ctx][lo], cum[lo], CTX_PROB_BITS, slot) != 0) return -1;
    int nraw;
    uint32_t v = ctx_token_base(lo, &nraw), raw = 0, sign = 0;
    if (nraw > 0 && !(k && lsx_carry_take(k, nraw, &raw))) {
        if (b < 0) {
            if (take_raw(d, nraw, &raw) != 0) return -1;
        } else {
            uint32_t top, rest = 0;
            if (take_bin(d, cm->b.raw_f0[lo], &top) != 0 || (nraw > 1 && take_raw(d, nraw - 1, &rest) != 0)) return -1;
            raw = top << (nraw - 1) | rest;
        }
    }
    v += raw;
    if (v > AURP_RESIDUAL_MAX) return -1;
    if (v != 0 && !(k && lsx_carry_take(k, 1, &sign)) &&
        (b < 0 ? take_raw(d, 1, &sign) : take_bin(d, cm->b.sign_f0[lsx_sign_ctx(b, lo)], &sign)) != 0)
        return -1;
    *e = sign ? -(int32_t)v : (int32_t)v;
    return 0;
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#endif
int ctx_decode_residual(ctx_rans_dec *d, const ctx_model *cm, int ctx, int32_t *e)
{
    return decode_residual(d, cm, ctx, NULL, -1, e);
}

int ctx_decode_residual_carry(ctx_rans_dec *d, const ctx_model *cm, int ctx, lsx_carry_dec *k, int32_t *e)
{
    return decode_residual(d, cm, ctx, k, -1, e);
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#endif
int ctx_decode_residual_bin(ctx_rans_dec *d, const ctx_model *cm, int ctx, lsx_carry_dec *k, int b, int32_t *e)
{
    return decode_residual(d, cm, ctx, k, b, e);
}

int ctx_rans_dec_at_start_state(const ctx_rans_dec *d)
{
    return d->x == AURP_RANS_L ? 0 : -1;
}

int ctx_rans_dec_carry(const ctx_rans_dec *d, lsx_carry_dec *k)
{
    if (d->x - AURP_RANS_L >= (1u << LSX_CARRY_BITS)) return -1; /* (x >= 2^23 after any symbol) */
    *k = (lsx_carry_dec){d->x - AURP_RANS_L, LSX_CARRY_BITS, 1};
    return 0;
}

int ctx_rans_dec_finish(const ctx_rans_dec *d)
{
    return (d->x == AURP_RANS_L && d->pos == d->len) ? 0 : -1;
}

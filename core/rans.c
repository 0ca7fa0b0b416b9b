/* Residual coding: escape thresholds, frequency normalisation and the
 * byte-wise rANS segment coder of docs/FORMAT.md 2.2, 2.3 and 2.5. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The whole histogram is the widest slice (core/imgstream.c holds the one
 * definition of T-, T+ and the counts). */
aurp_status aurp_plan_build(const uint64_t *hist, int threshold, aurp_plan *plan)
{
    uint64_t total = 0;
    for (int i = 0; i < AURP_HIST_BINS; i++) total += hist[i];
    return aurp_plan_build_range(hist, -AURP_RESIDUAL_MAX, AURP_HIST_BINS, total, threshold, plan);
}

void aurp_plan_free(aurp_plan *plan)
{
    free(plan->count);
    free(plan->freq);
    free(plan->cum);
    plan->count = plan->freq = plan->cum = NULL;
}

static int cmp_by_freq_desc(const void *a, const void *b, const uint32_t *f)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (f[x] != f[y]) return f[x] > f[y] ? -1 : 1;
    return x < y ? -1 : (x > y);
}

/* qsort has no context argument in C11: a small merge sort instead. */
static void sort_by_freq(uint32_t *idx, uint32_t *tmp, uint32_t n, const uint32_t *f)
{
    for (uint32_t w = 1; w < n; w *= 2) {
        for (uint32_t i = 0; i < n; i += 2 * w) {
            uint32_t a = i, am = i + w < n ? i + w : n, b = am, bm = i + 2 * w < n ? i + 2 * w : n;
            uint32_t o = i;
            while (a < am && b < bm) tmp[o++] = cmp_by_freq_desc(&idx[b], &idx[a], f) < 0 ? idx[b++] : idx[a++];
            while (a < am) tmp[o++] = idx[a++];
            while (b < bm) tmp[o++] = idx[b++];
        }
        memcpy(idx, tmp, (size_t)n * sizeof *idx);
    }
}

aurp_status aurp_normalize_bits(const uint32_t *count, uint32_t nsym, int P, uint32_t *freq,
                                uint32_t *cum)
{
    uint64_t total = 0, nonzero = 0;
    for (uint32_t s = 0; s < nsym; s++) {
        total += count[s];
        nonzero += count[s] > 0;
    }
    const uint64_t one = (uint64_t)1 << P;
    if (total == 0 || nonzero > one) return AURP_ERR_CORRUPT;
    uint64_t sum = 0;
    uint32_t best = 0;
    for (uint32_t s = 0; s < nsym; s++) {
        /* count < 2^32 and P <= 20: the product fits in 64 bits */
        uint64_t f = (uint64_t)count[s] * one / total;
        if (count[s] > 0 && f == 0) f = 1;
        freq[s] = (uint32_t)f;
        sum += f;
        if (count[s] > count[best]) best = s;
    }
    if (sum < one) {
        freq[best] += (uint32_t)(one - sum);
    } else if (sum > one) {
        /* The spec's loop takes from the smallest s of largest f, again and
         * again; a taken symbol drops to 1, below every untaken one, so the
         * picks follow the order (f descending, s ascending). */
        uint64_t diff = sum - one;
        uint32_t *idx = malloc((size_t)nsym * 2 * sizeof *idx);
        if (!idx) return AURP_ERR_NOMEM;
        for (uint32_t s = 0; s < nsym; s++) idx[s] = s;
        sort_by_freq(idx, idx + nsym, nsym, freq);
        for (uint32_t i = 0; i < nsym && diff > 0; i++) {
            uint32_t s = idx[i];
            if (freq[s] <= 1) break;
            uint64_t take = freq[s] - 1 < diff ? freq[s] - 1 : diff;
            freq[s] -= (uint32_t)take;
            diff -= take;
        }
        free(idx);
        if (diff > 0) return AURP_ERR_CORRUPT;
    }
    uint32_t c = 0;
    for (uint32_t s = 0; s < nsym; s++) {
        cum[s] = c;
        c += freq[s];
    }
    cum[nsym] = c;
    return AURP_OK;
}

aurp_status aurp_normalize(const uint32_t *count, uint32_t nsym, uint32_t *freq, uint32_t *cum)
{
    return aurp_normalize_bits(count, nsym, AURP_PROB_BITS, freq, cum);
}

size_t aurp_rans_encode_segment_bits(const uint32_t *sym, size_t n, const uint32_t *freq,
                                     const uint32_t *cum, int P, uint8_t *out, size_t cap)
{
    if (cap < 4) return 0;
    uint8_t *p = out + cap; /* bytes are produced back to front */
    uint32_t x = AURP_RANS_L;
    const uint32_t xmax_unit = (AURP_RANS_L >> P) << 8;
    for (size_t i = n; i-- > 0;) {
        uint32_t s = sym[i], f = freq[s];
        uint32_t xmax = xmax_unit * f;
        while (x >= xmax) {
            if (p == out + 4) return 0;
            *--p = (uint8_t)x;
            x >>= 8;
        }
        x = ((x / f) << P) + (x % f) + cum[s];
    }
    p -= 4;
    aurp_put_u32(p, x);
    size_t len = (size_t)(out + cap - p);
    memmove(out, p, len);
    return len;
}

size_t aurp_rans_encode_segment(const uint32_t *sym, size_t n, const uint32_t *freq,
                                const uint32_t *cum, uint8_t *out, size_t cap)
{
    return aurp_rans_encode_segment_bits(sym, n, freq, cum, AURP_PROB_BITS, out, cap);
}

void aurp_rans_table_init(aurp_rans_table *t, const uint32_t *freq, const uint32_t *cum,
                          uint32_t nsym, int P)
{
    t->P = P;
    t->nsym = nsym;
    t->freq = freq;
    t->cum = cum;
    int shift = P > AURP_RANS_BUCKET_BITS ? P - AURP_RANS_BUCKET_BITS : 0;
    uint32_t nb = 1u << (P - shift);
    uint32_t s = 0;
    for (uint32_t b = 0; b < nb; b++) {
        uint32_t slot = b << shift;
        while (s + 1 < nsym && cum[s + 1] <= slot) s++;
        t->bucket[b] = s;
    }
}

int aurp_rans_decode_segment(const aurp_rans_table *t, const uint8_t *in, size_t in_len,
                             uint32_t *sym, size_t n)
{
    if (in_len < 4) return -1;
    const int P = t->P;
    const uint32_t mask = (1u << P) - 1;
    const int shift = P > AURP_RANS_BUCKET_BITS ? P - AURP_RANS_BUCKET_BITS : 0;
    const uint32_t *cum = t->cum, *freq = t->freq;
    const uint32_t last = t->nsym - 1;
    uint32_t x = aurp_get_u32(in);
    size_t pos = 4;
    for (size_t i = 0; i < n; i++) {
        uint32_t slot = x & mask;
        uint32_t s = t->bucket[slot >> shift];
        while (s < last && cum[s + 1] <= slot) s++;
        sym[i] = s;
        x = freq[s] * (x >> P) + slot - cum[s];
        while (x < AURP_RANS_L) {
            if (pos >= in_len) return -1;
            x = (x << 8) | in[pos++];
        }
    }
    return (x == AURP_RANS_L && pos == in_len) ? 0 : -1;
}

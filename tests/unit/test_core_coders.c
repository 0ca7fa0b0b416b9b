/* The entropy coding pieces on their own: escape thresholds and
 * frequencies (FORMAT.md 2.2-2.3), rANS segments (2.5), the
 * general-purpose byte coder (5.1) and the text coder (5.2). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_fitshdr.h"
#include "core_frames.h"
#include "internal.h"

Test(core_coders, plan_thresholds_and_escapes)
{
    uint64_t *hist = calloc(AURP_HIST_BINS, sizeof *hist);
    hist[AURP_RESIDUAL_MAX - 5] = 13; /* e = -5: reaches T */
    hist[AURP_RESIDUAL_MAX - 9] = 12; /* e = -9: below T, escape */
    hist[AURP_RESIDUAL_MAX + 0] = 1000;
    hist[AURP_RESIDUAL_MAX + 7] = 20;
    hist[AURP_RESIDUAL_MAX + 8] = 3;  /* escape */
    aurp_plan pl;
    cr_assert_eq(aurp_plan_build(hist, 13, &pl), AURP_OK);
    cr_assert_eq(pl.t_lo, -5);
    cr_assert_eq(pl.t_hi, 7);
    cr_assert_eq(pl.nsym, 14u);
    cr_assert_eq(pl.escapes, 15u);
    cr_assert_eq(pl.total, 1048u);
    cr_assert_eq(pl.count[0], 13u);
    cr_assert_eq(pl.count[5], 1000u);
    cr_assert_eq(pl.count[13], 15u);
    cr_assert_eq(pl.cum[pl.nsym], 1u << AURP_PROB_BITS);
    for (uint32_t s = 0; s < pl.nsym; s++) cr_assert_eq(pl.freq[s] > 0, pl.count[s] > 0, "symbol %u", s);
    cr_assert_eq(aurp_symbol_of(&pl, -9), 13u);
    cr_assert_eq(aurp_symbol_of(&pl, 0), 5u);
    aurp_plan_free(&pl);
    /* T = 0: every value present is coded; T above every count: all escapes */
    cr_assert_eq(aurp_plan_build(hist, 0, &pl), AURP_OK);
    cr_assert(pl.t_lo == -9 && pl.t_hi == 8 && pl.escapes == 0);
    aurp_plan_free(&pl);
    cr_assert_eq(aurp_plan_build(hist, 5000, &pl), AURP_OK);
    cr_assert(pl.t_lo == 1 && pl.t_hi == 0 && pl.nsym == 1 && pl.escapes == 1048);
    cr_assert_eq(pl.freq[0], 1u << AURP_PROB_BITS);
    aurp_plan_free(&pl);
    free(hist);
}

/* The GPU builds its plan from the bins between T- and T+ only: any slice
 * that covers them gives the plan of the whole histogram. */
Test(core_coders, plan_from_a_slice_equals_the_whole_plan)
{
    uint64_t *hist = calloc(AURP_HIST_BINS, sizeof *hist);
    uint64_t total = 0;
    for (int e = -40; e <= 60; e++) { /* a two-sided, uneven distribution with a tail */
        uint64_t c = (uint64_t)(4000 / (1 + (e < 0 ? -e : e) * (e < 0 ? 3 : 1)));
        hist[AURP_RESIDUAL_MAX + e] = c;
        total += c;
    }
    hist[0] = 2, hist[AURP_HIST_BINS - 1] = 1, total += 3; /* far escapes at -65535, 65535 */
    const int thresholds[] = {0, 1, 13, 200, 100000};
    for (size_t t = 0; t < sizeof thresholds / sizeof thresholds[0]; t++) {
        aurp_plan whole, part;
        cr_assert_eq(aurp_plan_build(hist, thresholds[t], &whole), AURP_OK);
        /* the narrowest slice that covers [T-, T+], and a wider one */
        for (int wide = 0; wide < 2; wide++) {
            int32_t lo = whole.nsym > 1 ? whole.t_lo - 5 * wide : 0;
            int32_t hi = whole.nsym > 1 ? whole.t_hi + 7 * wide : -1;
            if (lo < -AURP_RESIDUAL_MAX) lo = -AURP_RESIDUAL_MAX; /* T <= 1: the far escapes are coded */
            if (hi > AURP_RESIDUAL_MAX) hi = AURP_RESIDUAL_MAX;
            uint32_t n = hi >= lo ? (uint32_t)(hi - lo + 1) : 0;
            cr_assert_eq(aurp_plan_build_range(hist + (lo + AURP_RESIDUAL_MAX), lo, n, total, thresholds[t], &part),
                         AURP_OK, "T=%d", thresholds[t]);
            cr_assert(part.t_lo == whole.t_lo && part.t_hi == whole.t_hi && part.nsym == whole.nsym &&
                          part.escapes == whole.escapes && part.total == whole.total,
                      "T=%d wide=%d", thresholds[t], wide);
            cr_assert_arr_eq(part.count, whole.count, whole.nsym * sizeof *whole.count);
            cr_assert_arr_eq(part.freq, whole.freq, whole.nsym * sizeof *whole.freq);
            aurp_plan_free(&part);
        }
        aurp_plan_free(&whole);
    }
    /* a slice outside the residual range is refused */
    aurp_plan bad;
    cr_assert_eq(aurp_plan_build_range(hist, -AURP_RESIDUAL_MAX - 1, 3, total, 13, &bad), AURP_ERR_PARAM);
    free(hist);
}

Test(core_coders, normalize_takes_from_the_largest)
{
    /* many rare symbols forced up to 1: the excess comes off the largest */
    enum { NS = 3000 };
    uint32_t count[NS], freq[NS], cum[NS + 1];
    for (int s = 0; s < NS; s++) count[s] = 1;
    count[7] = 4000000;
    count[8] = 4000000;
    cr_assert_eq(aurp_normalize(count, NS, freq, cum), AURP_OK);
    cr_assert_eq(cum[NS], 1u << 20);
    for (int s = 0; s < NS; s++)
        if (s != 7 && s != 8) cr_assert_eq(freq[s], 1u);
    /* s = 7 (smallest of the largest) gives everything it can first */
    uint64_t raw = (uint64_t)4000000 << 20;
    uint64_t total = 8000000 + NS - 2;
    uint32_t f78 = (uint32_t)(raw / total);
    uint32_t excess = 2 * f78 + (NS - 2) - (1u << 20);
    cr_assert_eq(freq[7], f78 - excess);
    cr_assert_eq(freq[8], f78);
    /* more symbols than 2^P cannot be normalised */
    cr_assert_eq(aurp_normalize_bits(count, NS, 11 + 0 * 12, freq, cum), AURP_ERR_CORRUPT);
}

static void rans_roundtrip(const uint32_t *sym, size_t n, const uint32_t *count, uint32_t nsym)
{
    uint32_t *freq = malloc(nsym * 4), *cum = malloc((nsym + 1) * 4), *back = malloc(n * 4 + 4);
    cr_assert_eq(aurp_normalize(count, nsym, freq, cum), AURP_OK);
    size_t cap = 4 + 3 * n;
    uint8_t *buf = malloc(cap);
    size_t len = aurp_rans_encode_segment(sym, n, freq, cum, buf, cap);
    cr_assert_gt(len, 0);
    aurp_rans_table *t = malloc(sizeof *t);
    aurp_rans_table_init(t, freq, cum, nsym, AURP_PROB_BITS);
    cr_assert_eq(aurp_rans_decode_segment(t, buf, len, back, n), 0);
    cr_assert(memcmp(sym, back, n * 4) == 0);
    /* one byte short or one too many: invalid */
    cr_assert_neq(aurp_rans_decode_segment(t, buf, len - 1, back, n), 0);
    cr_assert_eq(aurp_rans_encode_segment(sym, n, freq, cum, buf, len - 1), 0u, "cap too small accepted");
    free(t);
    free(freq);
    free(cum);
    free(back);
    free(buf);
}

Test(core_coders, rans_segments)
{
    enum { N = 4096, NS = 2000 };
    uint32_t *sym = malloc(N * 4), *count = calloc(NS, 4);
    uint64_t s = 3;
    for (int i = 0; i < N; i++) {
        /* skewed: mostly small symbols, a few rare large ones */
        uint32_t r = (uint32_t)core_rand(&s);
        sym[i] = (r & 15) ? (r >> 8) % 8 : (r >> 8) % NS;
        count[sym[i]]++;
    }
    rans_roundtrip(sym, N, count, NS);
    /* a single symbol; and a symbol with frequency 1 */
    uint32_t one[1] = {N};
    memset(sym, 0, N * 4);
    rans_roundtrip(sym, N, one, 1);
    uint32_t two[2] = {N - 1, 1};
    sym[100] = 1;
    rans_roundtrip(sym, N, two, 2);
    rans_roundtrip(sym, 1, (uint32_t[]){1, 0}, 2);
    free(sym);
    free(count);
}

typedef size_t (*byte_encoder)(const uint8_t *src, size_t n, uint8_t *out, size_t cap);
typedef int (*byte_decoder)(const uint8_t *in, size_t in_len, uint8_t *out, size_t n);

/* A byte coder's round trip; a truncated coding and a too small output are
 * refused.  Returns the coded length. */
static size_t coder_roundtrip(byte_encoder enc, byte_decoder dec, const uint8_t *src, size_t n)
{
    size_t cap = n + n / 8 + 64;
    uint8_t *buf = malloc(cap), *back = malloc(n + 1);
    size_t len = enc(src, n, buf, cap);
    cr_assert(len > 0 && len != (size_t)-1);
    cr_assert_eq(dec(buf, len, back, n), 0);
    cr_assert(memcmp(src, back, n) == 0, "round trip of %zu bytes", n);
    cr_assert_neq(dec(buf, len - 1, back, n), 0, "truncated coding accepted");
    cr_assert_eq(enc(src, n, buf, len - 1), 0u, "cap too small accepted");
    free(buf);
    free(back);
    return len;
}

static void gc_roundtrip(const uint8_t *src, size_t n, size_t *coded)
{
    *coded = coder_roundtrip(aurp_gc_encode, aurp_gc_decode, src, n);
}

Test(core_coders, general_coder)
{
    /* FITS-like header: 36 cards of 80 columns, padded with spaces */
    static const char *cards[] = {"SIMPLE  =                    T / conforms to FITS standard",
                                  "BITPIX  =                   16 / array data type",
                                  "NAXIS   =                    2 / number of array dimensions",
                                  "NAXIS1  =                 1024", "NAXIS2  =                 1024",
                                  "BZERO   =                32768", "DATE-OBS= '2023-05-03T06:00:00'", "END"};
    uint8_t hdr[2880];
    memset(hdr, ' ', sizeof hdr);
    for (int i = 0; i < 8; i++) memcpy(hdr + 80 * i, cards[i], strlen(cards[i]));
    size_t len;
    gc_roundtrip(hdr, sizeof hdr, &len);
    cr_assert_lt(len, 400u, "a sparse FITS header coded to %zu bytes", len);
    uint8_t zeros[20000] = {0};
    gc_roundtrip(zeros, sizeof zeros, &len);
    cr_assert_lt(len, 100u, "20000 zero bytes coded to %zu bytes", len);
    uint8_t rnd[5000];
    uint64_t s = 1;
    for (size_t i = 0; i < sizeof rnd; i++) rnd[i] = (uint8_t)core_rand(&s);
    gc_roundtrip(rnd, sizeof rnd, &len);
    cr_assert_lt(len, sizeof rnd + sizeof rnd / 50, "random data expanded to %zu", len);
    gc_roundtrip(rnd, 1, &len);
}

/* The header (everything before the image) of a real frame in tests/data/real. */
static uint8_t *real_header(const char *name, size_t *n)
{
    char path[256];
    snprintf(path, sizeof path, "tests/data/real/%s", name);
    size_t len;
    uint8_t *file = core_read_file(path, &len);
    cr_assert(file, "%s: cannot read (tests run from the repository root)", path);
    uint64_t off;
    uint32_t w, h;
    cr_assert_eq(core_fits_primary_image(file, len, &off, &w, &h), 0, "%s: no primary image", path);
    *n = (size_t)off;
    return file;
}

static const char *const real_frames[] = {"kast_b1_arc.fits", "kast_b27_science.fits",
                                          "trex_20230503T060000_f0.fits", "trex_20230503T060000_f1.fits"};

Test(core_coders, text_coder)
{
    /* what the general coder is tested on, round trip and bounds */
    uint8_t zeros[20000] = {0}, rnd[5000];
    cr_assert_lt(coder_roundtrip(aurp_tc_encode, aurp_tc_decode, zeros, sizeof zeros), 100u);
    uint64_t s = 1;
    for (size_t i = 0; i < sizeof rnd; i++) rnd[i] = (uint8_t)core_rand(&s);
    /* random bytes cost a little more than the general coder's (its model
     * starts primed for FITS text); the container stores them anyway */
    cr_assert_lt(coder_roundtrip(aurp_tc_encode, aurp_tc_decode, rnd, sizeof rnd), sizeof rnd + sizeof rnd / 25);
    coder_roundtrip(aurp_tc_encode, aurp_tc_decode, rnd, 1);
    /* the real frames' headers: less than 0.6 of the general coder's bytes
     * (0.50-0.52 when written: the card column, the match, the priming) */
    for (size_t f = 0; f < sizeof real_frames / sizeof real_frames[0]; f++) {
        size_t n;
        uint8_t *hdr = real_header(real_frames[f], &n);
        size_t gc = coder_roundtrip(aurp_gc_encode, aurp_gc_decode, hdr, n);
        size_t tc = coder_roundtrip(aurp_tc_encode, aurp_tc_decode, hdr, n);
        cr_assert_lt((double)tc, 0.6 * (double)gc, "%s: header of %zu bytes, text %zu, general %zu", real_frames[f], n,
                     tc, gc);
        free(hdr);
    }
}

/* Every single-bit flip of a real header's text coding is refused or gives
 * other bytes (the container's checksum then refuses them), never a crash. */
Test(core_coders, text_coding_bit_flips)
{
    size_t n;
    uint8_t *hdr = real_header(real_frames[2], &n);
    size_t cap = n + 64;
    uint8_t *buf = malloc(cap), *back = malloc(n);
    size_t len = aurp_tc_encode(hdr, n, buf, cap);
    cr_assert(len > 0 && len != (size_t)-1);
    for (size_t bit = 0; bit < 8 * len; bit++) {
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        int rc = aurp_tc_decode(buf, len, back, n);
        cr_assert(rc != 0 || memcmp(back, hdr, n) != 0, "bit %zu flipped: the same bytes, accepted", bit);
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    free(buf);
    free(back);
    free(hdr);
}

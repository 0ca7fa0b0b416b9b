/* Image codec and container round trips: every size, parameter and thread
 * count must give the original bytes back, and the encoder's bytes must not
 * depend on the thread count. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "aurp.h"
#include "core_frames.h"
#include "internal.h" /* aurp_image_decode_in_place */

/* Encodes with threads, decodes with dthreads; returns the stream (malloc'd). */
static uint8_t *roundtrip(const uint16_t *u, uint32_t w, uint32_t h, const aurp_params *p, int threads,
                          int dthreads, size_t *len)
{
    size_t n = (size_t)w * h;
    uint8_t *be = malloc(2 * n), *back = malloc(2 * n);
    size_t cap = aurp_image_bound(w, h);
    uint8_t *s = malloc(cap);
    cr_assert(be && back && s);
    core_frame_to_be16(u, n, be);
    aurp_error err = {{0}};
    aurp_status st = aurp_image_encode(be, w, h, p, threads, s, cap, len, &err);
    cr_assert_eq(st, AURP_OK, "encode %ux%u N=%d M=%d T=%d: %s", w, h, p->order, p->equations,
                 p->threshold, err.msg);
    st = aurp_image_decode(s, *len, w, h, dthreads, back, &err);
    cr_assert_eq(st, AURP_OK, "decode %ux%u N=%d M=%d T=%d: %s", w, h, p->order, p->equations,
                 p->threshold, err.msg);
    cr_assert(memcmp(be, back, 2 * n) == 0, "%ux%u N=%d M=%d T=%d: pixels differ", w, h, p->order,
              p->equations, p->threshold);
    /* the samples in the output's own memory, then big-endian in place */
    memset(back, 0xA5, 2 * n);
    st = aurp_image_decode_in_place(s, *len, w, h, dthreads, back, &err);
    cr_assert_eq(st, AURP_OK, "decode in place %ux%u: %s", w, h, err.msg);
    cr_assert(memcmp(be, back, 2 * n) == 0, "%ux%u N=%d M=%d T=%d: pixels decoded in place differ", w, h,
              p->order, p->equations, p->threshold);
    free(be);
    free(back);
    return s;
}

static void check_profile(int profile, core_frame_kind kind, uint32_t w, uint32_t h, int N, int M, int T)
{
    uint16_t *u = malloc((size_t)w * h * 2);
    core_frame_make(kind, w, h, (uint64_t)w * 31 + h, u);
    aurp_params p = {profile, N, M, T};
    size_t l1, l2;
    uint8_t *a = roundtrip(u, w, h, &p, 1, 1, &l1);
    uint8_t *b = roundtrip(u, w, h, &p, 3, 2, &l2);
    cr_assert(l1 == l2 && memcmp(a, b, l1) == 0, "%ux%u: 1 and 3 threads give different streams", w, h);
    free(a);
    free(b);
    free(u);
}

/* The paper profile with N, M, T. */
static void check(core_frame_kind kind, uint32_t w, uint32_t h, int N, int M, int T)
{
    check_profile(AURP_PROFILE_PAPER, kind, w, h, N, M, T);
}

/* The lsmix profile with K spectral lags and a window of M columns. */
static void check_lsmix(core_frame_kind kind, uint32_t w, uint32_t h, int K, int M)
{
    check_profile(AURP_PROFILE_LSMIX, kind, w, h, K, M, 0);
}

Test(core_roundtrip, tiny_sizes)
{
    static const uint32_t sides[] = {1, 2, 3, 5, 12, 13};
    for (size_t i = 0; i < 6; i++)
        for (size_t j = 0; j < 6; j++) {
            check(CORE_FRAME_NOISE, sides[i], sides[j], 11, 7, 13);
            check(CORE_FRAME_SPECTRUM, sides[i], sides[j], 3, 2, 1);
        }
}

Test(core_roundtrip, strips)
{
    check(CORE_FRAME_SPECTRUM, 1, 700, 11, 7, 13);
    check(CORE_FRAME_SPECTRUM, 700, 1, 11, 7, 13);
    check(CORE_FRAME_NOISE, 1, 5000, 11, 7, 13);
    check(CORE_FRAME_NOISE, 5000, 1, 11, 7, 13);
}

Test(core_roundtrip, sizes_around_N_and_N_plus_M)
{
    static const int NM[][2] = {{11, 7}, {4, 3}, {1, 1}, {32, 16}};
    for (int k = 0; k < 4; k++) {
        int N = NM[k][0], M = NM[k][1];
        for (int dw = -1; dw <= 1; dw++)
            for (int base = N; base <= N + M; base += M) {
                uint32_t w = (uint32_t)(base + dw) < 1 ? 1 : (uint32_t)(base + dw);
                check(CORE_FRAME_SPECTRUM, w, 9, N, M, 13);
                check(CORE_FRAME_DEGENERATE, w, 9, N, M, 0);
            }
    }
}

Test(core_roundtrip, constant_and_extreme)
{
    check(CORE_FRAME_CONST0, 64, 48, 11, 7, 13);
    check(CORE_FRAME_CONST65535, 64, 48, 11, 7, 13);
    check(CORE_FRAME_CHECKER, 64, 48, 11, 7, 13);
    check(CORE_FRAME_CHECKER, 64, 48, 11, 7, 0);
    check(CORE_FRAME_NOISE, 97, 61, 11, 7, 13);
    check(CORE_FRAME_DEGENERATE, 97, 61, 11, 7, 13);
}

Test(core_roundtrip, orders_and_equations)
{
    for (int N = 1; N <= 32; N += (N < 4 ? 1 : 7))
        for (int M = 1; M <= 16; M += (M < 3 ? 1 : 6))
            check(CORE_FRAME_SPECTRUM, 67, 23, N, M, 13);
    check(CORE_FRAME_SPECTRUM, 67, 23, 32, 16, 13);
}

Test(core_roundtrip, thresholds)
{
    static const int T[] = {0, 1, 2, 13, 1000, 0x7FFFFFFF};
    for (int i = 0; i < 6; i++) {
        check(CORE_FRAME_SPECTRUM, 80, 40, 11, 7, T[i]);
        check(CORE_FRAME_NOISE, 80, 40, 11, 7, T[i]);
    }
}

/* The stream of a 300 x 50 spectrum with the profile's defaults is the
 * same for 1..max_threads encoder (and decoder) threads. */
static void check_threads_give_identical_bytes(int profile, int max_threads)
{
    uint32_t w = 300, h = 50;
    uint16_t *u = malloc((size_t)w * h * 2);
    core_frame_make(CORE_FRAME_SPECTRUM, w, h, 7, u);
    aurp_params p;
    cr_assert_eq(aurp_params_for_profile(&p, profile), 0);
    size_t l0;
    uint8_t *ref = roundtrip(u, w, h, &p, 1, 1, &l0);
    for (int t = 2; t <= max_threads; t++) {
        size_t l;
        uint8_t *s = roundtrip(u, w, h, &p, t, t, &l);
        cr_assert(l == l0 && memcmp(s, ref, l) == 0, "profile %d: threads=%d changed the stream", profile, t);
        free(s);
    }
    free(ref);
    free(u);
}

Test(core_roundtrip, threads_give_identical_bytes)
{
    check_threads_give_identical_bytes(AURP_PROFILE_PAPER, 4);
}

Test(core_roundtrip, station_frame_1024, .timeout = 300)
{
    check(CORE_FRAME_SPECTRUM, 1024, 1024, 11, 7, 13);
}

Test(core_roundtrip, kast_shape_2112x350, .timeout = 300)
{
    check(CORE_FRAME_SPECTRUM, 2112, 350, 11, 7, 13);
}

/* ---- the lsmix profile ------------------------------------------------ */

Test(lsmix_roundtrip, tiny_sizes)
{
    static const uint32_t sides[] = {1, 2, 3, 5, 12, 13};
    for (size_t i = 0; i < 6; i++)
        for (size_t j = 0; j < 6; j++) {
            check_lsmix(CORE_FRAME_NOISE, sides[i], sides[j], 6, 9);
            check_lsmix(CORE_FRAME_SPECTRUM, sides[i], sides[j], 1, 1);
            check_lsmix(CORE_FRAME_DEGENERATE, sides[i], sides[j], 16, 17);
        }
}

Test(lsmix_roundtrip, strips)
{
    check_lsmix(CORE_FRAME_SPECTRUM, 1, 700, 6, 9);
    check_lsmix(CORE_FRAME_SPECTRUM, 700, 1, 6, 9);
    check_lsmix(CORE_FRAME_NOISE, 1, 5000, 6, 9);
    check_lsmix(CORE_FRAME_NOISE, 5000, 1, 6, 9);
    check_lsmix(CORE_FRAME_SPECTRUM, 2, 3000, 16, 17);
}

Test(lsmix_roundtrip, sizes_around_K_and_the_window)
{
    static const int KM[][2] = {{6, 9}, {3, 3}, {1, 1}, {16, 17}};
    for (int k = 0; k < 4; k++) {
        int K = KM[k][0], M = KM[k][1];
        for (int dw = -1; dw <= 1; dw++)
            for (int base = K; base <= K + M; base += M) {
                uint32_t w = (uint32_t)(base + dw) < 1 ? 1 : (uint32_t)(base + dw);
                check_lsmix(CORE_FRAME_SPECTRUM, w, 9, K, M);
                check_lsmix(CORE_FRAME_DEGENERATE, w, 9, K, M);
            }
    }
}

Test(lsmix_roundtrip, constant_and_extreme)
{
    check_lsmix(CORE_FRAME_CONST0, 64, 48, 6, 9);
    check_lsmix(CORE_FRAME_CONST65535, 64, 48, 6, 9);
    check_lsmix(CORE_FRAME_CHECKER, 64, 48, 6, 9);
    check_lsmix(CORE_FRAME_NOISE, 97, 61, 6, 9);
    check_lsmix(CORE_FRAME_DEGENERATE, 97, 61, 6, 9);
    check_lsmix(CORE_FRAME_CHECKER, 97, 61, 16, 1);
}

Test(lsmix_roundtrip, lags_and_windows)
{
    for (int K = 1; K <= 16; K += (K < 4 ? 1 : 5))
        for (int M = 1; M <= 17; M += (M < 5 ? 2 : 6))
            check_lsmix(CORE_FRAME_SPECTRUM, 67, 23, K, M);
}

/* Frames of fewer columns than the encoder's threads and segments (rows
 * along a slow triangle wave with noise, where the encoder predicts LS a
 * second time): LS's column bands once took the segments' count, and an
 * empty band failed the frame ("out of memory for the predictors"). */
Test(lsmix_roundtrip, fewer_columns_than_threads_and_segments, .timeout = 300)
{
    static const uint32_t widths[] = {1, 2, 3}, heights[] = {2049, 5000};
    for (size_t a = 0; a < 3; a++)
        for (size_t b = 0; b < 2; b++) {
            const uint32_t w = widths[a], h = heights[b];
            uint16_t *u = malloc(2 * (size_t)w * h);
            uint64_t s = 5;
            for (uint32_t m = 0; m < h; m++)
                for (uint32_t n = 0; n < w; n++) {
                    const uint32_t tri = m % 400 < 200 ? m % 400 : 400 - m % 400;
                    u[(size_t)m * w + n] = (uint16_t)(2000 + 3 * tri + 50 * n + core_rand(&s) % 5);
                }
            aurp_params p;
            aurp_params_for_profile(&p, AURP_PROFILE_LSMIX);
            size_t l0;
            uint8_t *ref = roundtrip(u, w, h, &p, 1, 1, &l0);
            for (int t = 2; t <= 6; t++) {
                size_t l;
                uint8_t *st = roundtrip(u, w, h, &p, t, t, &l);
                cr_assert(l == l0 && memcmp(st, ref, l) == 0, "%ux%u: threads=%d changed the stream", w, h, t);
                free(st);
            }
            free(ref);
            free(u);
        }
}

Test(lsmix_roundtrip, threads_give_identical_bytes)
{
    check_threads_give_identical_bytes(AURP_PROFILE_LSMIX, 5);
}

/* The wavefront decoder (helpers prepare chunks of columns of the next row
 * while the row above decodes) gives every pixel back for any thread count,
 * widths around its chunk edges and the narrowest and widest windows; each
 * decode is repeated, as a race would show only now and then. */
Test(lsmix_roundtrip, decoder_threads_and_chunk_edges, .timeout = 300)
{
    static const uint32_t widths[] = {1, 5, 127, 128, 129, 257, 700};
    static const int KM[][2] = {{6, 9}, {1, 1}, {16, 17}};
    static const int dthreads[] = {1, 2, 3, 4, 5, 8, 13};
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
        for (size_t km = 0; km < 3; km++) {
            uint32_t w = widths[wi], h = 37;
            size_t n = (size_t)w * h, len, cap = aurp_image_bound(w, h);
            uint16_t *u = malloc(2 * n);
            uint8_t *be = malloc(2 * n), *back = malloc(2 * n), *s = malloc(cap);
            cr_assert(u && be && back && s);
            core_frame_make(km == 1 ? CORE_FRAME_NOISE : CORE_FRAME_SPECTRUM, w, h, w + km, u);
            core_frame_to_be16(u, n, be);
            aurp_params p = {AURP_PROFILE_LSMIX, KM[km][0], KM[km][1], 0};
            aurp_error err = {{0}};
            cr_assert_eq(aurp_image_encode(be, w, h, &p, 2, s, cap, &len, &err), AURP_OK, "%s", err.msg);
            for (size_t ti = 0; ti < sizeof dthreads / sizeof dthreads[0]; ti++)
                for (int rep = 0; rep < 3; rep++) {
                    memset(back, 0xA5, 2 * n);
                    cr_assert_eq(aurp_image_decode(s, len, w, h, dthreads[ti], back, &err), AURP_OK,
                                 "%ux%u K=%d M=%d threads=%d: %s", w, h, p.order, p.equations, dthreads[ti], err.msg);
                    cr_assert(memcmp(be, back, 2 * n) == 0, "%ux%u K=%d M=%d threads=%d: pixels differ", w, h,
                              p.order, p.equations, dthreads[ti]);
                }
            free(u);
            free(be);
            free(back);
            free(s);
        }
}

/* Several segments and many table refreshes. */
Test(lsmix_roundtrip, station_frame_1024, .timeout = 300)
{
    check_lsmix(CORE_FRAME_SPECTRUM, 1024, 1024, 6, 9);
}

Test(lsmix_roundtrip, kast_shape_2112x350, .timeout = 300)
{
    check_lsmix(CORE_FRAME_SPECTRUM, 2112, 350, 6, 9);
}

/* What the profile is for: on a spectrum it is smaller than the paper's. */
Test(lsmix_roundtrip, smaller_than_the_paper_profile_on_a_spectrum, .timeout = 300)
{
    uint32_t w = 512, h = 256;
    uint16_t *u = malloc((size_t)w * h * 2);
    core_frame_make(CORE_FRAME_SPECTRUM, w, h, 21, u);
    aurp_params paper, lsmix;
    aurp_params_for_profile(&paper, AURP_PROFILE_PAPER);
    aurp_params_for_profile(&lsmix, AURP_PROFILE_LSMIX);
    size_t lp, ll;
    uint8_t *a = roundtrip(u, w, h, &paper, 2, 2, &lp), *b = roundtrip(u, w, h, &lsmix, 2, 2, &ll);
    cr_assert_lt(ll, lp, "lsmix %zu bytes, paper %zu", ll, lp);
    free(a);
    free(b);
    free(u);
}

/* ---- container ------------------------------------------------------ */

static void pack_unpack(const uint8_t *src, size_t n, const aurp_region *r, int nr, int threads,
                        uint8_t **packed, size_t *plen)
{
    aurp_params p;
    aurp_params_default(&p);
    size_t cap = aurp_pack_bound(n);
    uint8_t *out = malloc(cap), *back = malloc(n ? n : 1);
    aurp_error err = {{0}};
    cr_assert_eq(aurp_pack(src, n, r, nr, &p, NULL, threads, out, cap, plen, &err), AURP_OK, "pack: %s",
                 err.msg);
    uint64_t osz = 0;
    cr_assert_eq(aurp_original_size(out, *plen, &osz, &err), AURP_OK);
    cr_assert_eq(osz, n);
    size_t blen = 0;
    cr_assert_eq(aurp_unpack(out, *plen, threads, back, n, &blen, &err), AURP_OK, "unpack: %s", err.msg);
    cr_assert_eq(blen, n);
    cr_assert(memcmp(src, back, n) == 0, "restored bytes differ");
    free(back);
    *packed = out;
}

Test(core_container, fits_like_file_with_two_images)
{
    /* header block of ASCII cards, image, zero padding, a second header and image */
    uint32_t w1 = 200, h1 = 90, w2 = 33, h2 = 17;
    size_t n = 2880 + 2 * w1 * h1 + 1000 + 2880 + 2 * w2 * h2 + 77;
    uint8_t *src = calloc(1, n);
    for (size_t i = 0; i < 2880; i++) src[i] = (i % 80 < 30) ? (uint8_t)("SIMPLE  =                    T"[i % 30]) : ' ';
    uint16_t *u = malloc(2 * w1 * h1);
    core_frame_make(CORE_FRAME_SPECTRUM, w1, h1, 3, u);
    core_frame_to_be16(u, (size_t)w1 * h1, src + 2880);
    size_t off2 = 2880 + 2 * w1 * h1 + 1000 + 2880;
    memset(src + off2 - 2880, 'X', 2880);
    core_frame_make(CORE_FRAME_NOISE, w2, h2, 4, u);
    core_frame_to_be16(u, (size_t)w2 * h2, src + off2);
    aurp_region r[2] = {{2880, w1, h1}, {off2, w2, h2}};
    uint8_t *packed;
    size_t plen;
    pack_unpack(src, n, r, 2, 2, &packed, &plen);
    cr_assert_lt(plen, n * 3 / 4, "packed %zu of %zu bytes", plen, n);

    aurp_info info;
    aurp_error err = {{0}};
    cr_assert_eq(aurp_inspect(packed, plen, &info, &err), AURP_OK, "%s", err.msg);
    cr_assert_eq(info.original_size, n);
    cr_assert_eq(info.checksum, aurp_checksum(src, n));
    /* text, image, text, stored (noise does not shrink), text: lsmix codes
     * the bytes between images with the text coder */
    cr_assert_eq(info.nchunks, 5);
    cr_assert_eq(info.chunks[0].method, AURP_CHUNK_TEXT);
    cr_assert_eq(info.chunks[2].method, AURP_CHUNK_TEXT);
    cr_assert_eq(info.chunks[4].method, AURP_CHUNK_TEXT);
    cr_assert_eq(info.chunks[1].method, AURP_CHUNK_IMAGE);
    cr_assert_eq(info.chunks[1].width, w1);
    cr_assert_eq(info.chunks[1].height, h1);
    cr_assert_eq(info.chunks[1].profile, AURP_PROFILE_LSMIX);
    cr_assert_eq(info.chunks[1].order, 6);
    cr_assert_eq(info.chunks[1].equations, 9);
    cr_assert_eq(info.chunks[3].method, AURP_CHUNK_STORED);
    cr_assert_eq(info.chunks[3].raw_len, 2 * w2 * h2);
    aurp_info_free(&info);
    free(packed);
    free(src);
    free(u);
}

/* The coder of the bytes outside the images (FORMAT.md section 1): text
 * for lsmix packs up to 2^20 bytes, general above that and for every paper
 * pack; each round trips. */
Test(core_container, non_image_bytes_coder_by_profile_and_size)
{
    size_t n = ((size_t)1 << 20) + 80;
    uint8_t *src = malloc(n), *out = NULL;
    for (size_t i = 0; i < n; i++) src[i] = (uint8_t)("KEYWORD = 'value' / comment   "[i % 30]);
    static const struct {
        int profile;
        size_t len;
        int method;
    } cases[] = {{AURP_PROFILE_LSMIX, 2880, AURP_CHUNK_TEXT},
                 {AURP_PROFILE_LSMIX, (size_t)1 << 20, AURP_CHUNK_TEXT},
                 {AURP_PROFILE_LSMIX, ((size_t)1 << 20) + 80, AURP_CHUNK_GENERAL},
                 {AURP_PROFILE_PAPER, 2880, AURP_CHUNK_GENERAL}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        aurp_params p;
        aurp_params_for_profile(&p, cases[c].profile);
        size_t cap = aurp_pack_bound(cases[c].len), len, back_len;
        out = realloc(out, cap);
        aurp_error err = {{0}};
        cr_assert_eq(aurp_pack(src, cases[c].len, NULL, 0, &p, NULL, 2, out, cap, &len, &err), AURP_OK, "%s",
                     err.msg);
        aurp_info info;
        cr_assert_eq(aurp_inspect(out, len, &info, &err), AURP_OK, "%s", err.msg);
        cr_assert_eq(info.nchunks, 1);
        cr_assert_eq(info.chunks[0].method, cases[c].method, "case %zu: method %d", c, info.chunks[0].method);
        aurp_info_free(&info);
        uint8_t *back = malloc(cases[c].len);
        cr_assert_eq(aurp_unpack(out, len, 2, back, cases[c].len, &back_len, &err), AURP_OK, "%s", err.msg);
        cr_assert(back_len == cases[c].len && memcmp(back, src, back_len) == 0, "case %zu: other bytes", c);
        free(back);
    }
    free(out);
    free(src);
}

Test(core_container, any_bytes)
{
    static const size_t sizes[] = {0, 1, 2, 79, 4096, 100000};
    uint64_t s = 9;
    for (int i = 0; i < 6; i++) {
        uint8_t *src = malloc(sizes[i] + 1);
        for (size_t k = 0; k < sizes[i]; k++) src[k] = (i & 1) ? (uint8_t)core_rand(&s) : (uint8_t)("aurora "[k % 7]);
        uint8_t *packed;
        size_t plen;
        pack_unpack(src, sizes[i], NULL, 0, 1, &packed, &plen);
        cr_assert_leq(plen, aurp_pack_bound(sizes[i]));
        free(packed);
        free(src);
    }
}

Test(core_container, rejects_bad_regions)
{
    uint8_t src[100] = {0}, out[1000];
    size_t len;
    aurp_params p;
    aurp_params_default(&p);
    aurp_error err = {{0}};
    aurp_region overlap[2] = {{0, 5, 5}, {40, 2, 2}};
    cr_assert_eq(aurp_pack(src, 100, overlap, 2, &p, NULL, 1, out, sizeof out, &len, &err), AURP_ERR_PARAM);
    cr_assert(strstr(err.msg, "region 1") != NULL, "%s", err.msg);
    aurp_region beyond = {90, 3, 2};
    cr_assert_eq(aurp_pack(src, 100, &beyond, 1, &p, NULL, 1, out, sizeof out, &len, &err), AURP_ERR_PARAM);
    aurp_params bad = p;
    bad.order = 33; /* out of range for every profile */
    cr_assert_eq(aurp_pack(src, 100, NULL, 0, &bad, NULL, 1, out, sizeof out, &len, &err), AURP_ERR_PARAM);
    cr_assert(strstr(err.msg, "33") != NULL, "%s", err.msg);
}

Test(core_container, names)
{
    cr_assert_str_eq(aurp_profile_name(AURP_PROFILE_PAPER), "paper");
    cr_assert_str_eq(aurp_profile_name(AURP_PROFILE_LSMIX), "lsmix");
    cr_assert_eq(aurp_profile_from_name("paper"), AURP_PROFILE_PAPER);
    cr_assert_eq(aurp_profile_from_name("lsmix"), AURP_PROFILE_LSMIX);
    cr_assert_eq(aurp_profile_from_name("jpeg"), 0);
    cr_assert_str_eq(aurp_status_name(AURP_ERR_CHECKSUM), "checksum mismatch");
    aurp_params p;
    aurp_params_default(&p);
    cr_assert(p.profile == AURP_PROFILE_LSMIX && p.order == 6 && p.equations == 9);
    cr_assert_eq(aurp_params_check(&p, NULL), AURP_OK);
    p.equations = 8; /* the window is centred: odd */
    cr_assert_eq(aurp_params_check(&p, NULL), AURP_ERR_PARAM);
    cr_assert_eq(aurp_params_for_profile(&p, AURP_PROFILE_PAPER), 0);
    cr_assert(p.order == 11 && p.equations == 7 && p.threshold == 13);
    cr_assert_eq(aurp_params_check(&p, NULL), AURP_OK);
    cr_assert_eq(aurp_params_for_profile(&p, 99), -1);
}

/* The encoder's DP context candidate (core/lsmix_thresholds.c): on a
 * histogram of two activity populations it puts the threshold between
 * them, and on a real frame its contexts win and the stream round trips. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_fitshdr.h"
#include "internal.h"
#include "lsmix.h"

Test(core_thresholds, the_dp_cuts_between_two_activity_populations)
{
    uint32_t *hist = calloc(LSX_THR_CELLS, sizeof *hist);
    /* quiet pixels (a16 = 100) with residuals 0, +-1; busy ones (a16 =
     * 50000) with residuals of 200..400 */
    for (int e = -1; e <= 1; e++) hist[lsx_thr_cell(100, 0, e)] += 50000;
    for (int e = 200; e <= 400; e += 4) hist[lsx_thr_cell(50000, 0, e)] += 1000;
    lsx_view v;
    memset(&v, 0, sizeof v);
    v.nib = 1;
    cr_assert_eq(lsx_dp_contexts(hist, 2, 1, 1, &v), 0);
    cr_assert_eq(v.nctx, 2);
    cr_assert(v.thr[0] > 100 && v.thr[0] <= 50000, "threshold %u not between the populations", v.thr[0]);
    /* with room for 12 the thresholds still increase and sit on bin edges */
    memset(&v, 0, sizeof v);
    v.nib = 1;
    cr_assert_eq(lsx_dp_contexts(hist, 12, 1, 3, &v), 0);
    for (int a = 0; a < v.nctx - 1; a++) {
        cr_assert(a == 0 || v.thr[a] > v.thr[a - 1], "thresholds not increasing at %d", a);
        cr_assert_eq(v.thr[a], lsx_thr_bin_edge(lsx_thr_bin(v.thr[a])), "threshold %u is not a bin edge", v.thr[a]);
    }
    free(hist);
}

/* A real frame of tests/data/real, whole, and where its image lies. */
static uint8_t *real_frame(const char *name, uint64_t *off, uint32_t *w, uint32_t *h)
{
    char path[256];
    snprintf(path, sizeof path, "tests/data/real/%s", name);
    size_t len;
    uint8_t *file = core_read_file(path, &len);
    cr_assert(file, "%s: run from the repository root", path);
    cr_assert_eq(core_fits_primary_image(file, len, off, w, h), 0, "%s: no primary image", path);
    return file;
}

Test(core_thresholds, a_real_frame_takes_the_dp_contexts_and_round_trips)
{
    uint64_t off;
    uint32_t w, h;
    uint8_t *file = real_frame("trex_20230503T060000_f0.fits", &off, &w, &h);
    aurp_params p;
    aurp_params_for_profile(&p, AURP_PROFILE_LSMIX);
    size_t cap = aurp_image_bound(w, h), slen;
    uint8_t *s = malloc(cap), *back = malloc(2 * (size_t)w * h);
    aurp_error err = {{0}};
    cr_assert_eq(aurp_image_encode(file + off, w, h, &p, 2, s, cap, &slen, &err), AURP_OK, "%s", err.msg);
    /* the header's thresholds are not the fixed half-octaves of any other
     * candidate: the DP's contexts made the smallest stream */
    const int nctx = s[3];
    uint32_t def[CTX_MAX];
    ctx_default_thresholds(def, nctx);
    int differs = 0;
    for (int a = 0; a < nctx - 1; a++) differs |= aurp_get_u32(s + LSX_HEADER + 4 * a) != def[a];
    cr_assert(differs, "trex f0: the stream's %d contexts are the default ones", nctx);
    cr_assert_eq(aurp_image_decode(s, slen, w, h, 2, back, &err), AURP_OK, "%s", err.msg);
    cr_assert(memcmp(back, file + off, 2 * (size_t)w * h) == 0);
    free(s);
    free(back);
    free(file);
}

/* The DP's run costs are split over threads by start: any thread count
 * gives the same contexts, on a real frame's histogram (its pixels as
 * intensity tokens, their differences to the left neighbour as residuals,
 * and the activity of those). */
Test(core_thresholds, any_thread_count_gives_the_same_contexts)
{
    uint64_t off;
    uint32_t w, h;
    uint8_t *file = real_frame("kast_b1_arc.fits", &off, &w, &h);
    const uint64_t px = (uint64_t)w * h;
    uint32_t *act = malloc(sizeof *act * px);
    uint8_t *itok = malloc(px);
    int32_t *res = malloc(sizeof *res * px);
    for (uint64_t i = 0; i < px; i++) {
        const int32_t x = (int32_t)((file[off + 2 * i] << 8 | file[off + 2 * i + 1]) ^ 0x8000);
        const int32_t left = i % w ? (int32_t)((file[off + 2 * i - 2] << 8 | file[off + 2 * i - 1]) ^ 0x8000) : x;
        int nraw;
        res[i] = x - left;
        itok[i] = (uint8_t)ctx_token((uint32_t)x, &nraw);
        act[i] = 16 * (uint32_t)(i % w > 1 ? abs(res[i - 1]) * 2 + abs(res[i - 2]) : 0);
    }
    uint32_t *hist = malloc(sizeof *hist * LSX_THR_CELLS);
    lsx_thr_histogram(act, itok, res, px, hist);
    lsx_view one, many;
    memset(&one, 0, sizeof one);
    one.nib = 1;
    many = one;
    cr_assert_eq(lsx_dp_contexts(hist, LSX_DP_NCTX, LSX_NIB, 1, &one), 0);
    cr_assert_eq(lsx_dp_contexts(hist, LSX_DP_NCTX, LSX_NIB, 7, &many), 0);
    cr_assert(one.nctx > 2 && one.nib > 1, "the frame's DP: %d contexts, %d classes", one.nctx, one.nib);
    cr_assert_eq(many.nctx, one.nctx);
    cr_assert_eq(many.nib, one.nib);
    cr_assert(memcmp(many.thr, one.thr, sizeof one.thr) == 0, "thresholds differ with 7 threads");
    cr_assert(memcmp(many.ibnd, one.ibnd, sizeof one.ibnd) == 0, "brightness bounds differ with 7 threads");
    free(act), free(itok), free(res), free(hist), free(file);
}

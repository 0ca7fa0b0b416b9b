/* The encoder's DP context candidate (core/lsmix_thresholds.c): on a
 * histogram of two activity populations it puts the threshold between
 * them, and on a real frame its contexts win and the stream round trips. */
#include <criterion/criterion.h>
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
    cr_assert_eq(lsx_dp_contexts(hist, 2, 1, &v), 0);
    cr_assert_eq(v.nctx, 2);
    cr_assert(v.thr[0] > 100 && v.thr[0] <= 50000, "threshold %u not between the populations", v.thr[0]);
    /* with room for 12 the thresholds still increase and sit on bin edges */
    memset(&v, 0, sizeof v);
    v.nib = 1;
    cr_assert_eq(lsx_dp_contexts(hist, 12, 1, &v), 0);
    for (int a = 0; a < v.nctx - 1; a++) {
        cr_assert(a == 0 || v.thr[a] > v.thr[a - 1], "thresholds not increasing at %d", a);
        cr_assert_eq(v.thr[a], lsx_thr_bin_edge(lsx_thr_bin(v.thr[a])), "threshold %u is not a bin edge", v.thr[a]);
    }
    free(hist);
}

Test(core_thresholds, a_real_frame_takes_the_dp_contexts_and_round_trips)
{
    size_t len;
    uint8_t *file = core_read_file("tests/data/real/trex_20230503T060000_f0.fits", &len);
    cr_assert(file, "tests/data/real: run from the repository root");
    uint64_t off;
    uint32_t w, h;
    cr_assert_eq(core_fits_primary_image(file, len, &off, &w, &h), 0);
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

/* The lsmix cascade stage (core/lsmix_cascade.[ch], FORMAT.md 3.2): the fit
 * finds a filter that is there, a real frame takes the stage and round
 * trips, and the decoder refuses a damaged cascade block by name (never a
 * crash: the test runs under ASan + UBSan too). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_fitshdr.h"
#include "internal.h"
#include "lsmix.h"

Test(core_cascade, the_plan_stays_in_its_bounds)
{
    lsx_cas_plan *pl = malloc(sizeof *pl);
    lsx_cas_plan_make(pl);
    cr_assert(pl->no > LSX_CAS_NR && pl->no <= LSX_CAS_MAXO, "%d offsets", pl->no);
    cr_assert(pl->dm[0] == 0 && pl->dn[0] == 0, "offset 0 is (0, 0), the ridge's R[0]");
    for (int k = 0; k < pl->no; k++)
        cr_assert(pl->dm[k] > 0 || (pl->dm[k] == 0 && pl->dn[k] >= 0), "offset %d not normalised", k);
    for (int a = 0; a < LSX_CAS_NL; a++) {
        cr_assert(pl->lag[a] > 0 && pl->lag[a] < pl->no);
        cr_assert_eq(pl->pair[a * LSX_CAS_NL + a], 0, "a lag with itself is offset (0, 0)");
        for (int b = 0; b < LSX_CAS_NL; b++)
            cr_assert_eq(pl->pair[a * LSX_CAS_NL + b], pl->pair[b * LSX_CAS_NL + a], "pairs not symmetric");
    }
    free(pl);
}

Test(core_cascade, the_fit_finds_a_filter_in_the_residuals)
{
    /* e[t] = 0.5 e[t-1] - 0.25 e[t-2] + noise along the readout: the fit
     * must find the two weights and leave the rest near 0 */
    const uint32_t W = 256, H = 64;
    const size_t n = (size_t)W * H;
    int32_t *e1 = malloc(n * sizeof *e1);
    int16_t *ec = malloc(n * sizeof *ec);
    uint64_t s = 7;
    double a = 0, b = 0;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        const double noise = (double)((s >> 33) % 41) - 20.0;
        const double v = 0.5 * a - 0.25 * b + noise;
        b = a, a = v;
        e1[i] = (int32_t)(v < 0 ? v - 0.5 : v + 0.5);
    }
    lsx_view v;
    memset(&v, 0, sizeof v);
    v.W = W, v.H = H;
    cr_assert_eq(lsx_cas_fit(&v, e1, ec, 2), 1, "the system is solvable");
    cr_assert(v.cas && v.cas_clip > 0);
    const int unit = 1 << LSX_CAS_SHIFT;
    cr_assert(abs(v.cas_w[0] - unit / 2) < unit / 16, "lag 1: %d, want ~%d", v.cas_w[0], unit / 2);
    cr_assert(abs(v.cas_w[1] + unit / 4) < unit / 16, "lag 2: %d, want ~%d", v.cas_w[1], -unit / 4);
    for (int j = 2; j < LSX_CAS_NL; j++) cr_assert(abs(v.cas_w[j]) < unit / 16, "lag %d: %d, want ~0", j, v.cas_w[j]);
    for (int j = 0; j < LSX_CAS_NR; j++) cr_assert_eq(v.cas_wrev[LSX_CAS_NR - 1 - j], v.cas_w[j]);
    /* the same sums from 1 thread */
    lsx_view v1 = v;
    cr_assert_eq(lsx_cas_fit(&v1, e1, ec, 1), 1);
    cr_assert(memcmp(v1.cas_w, v.cas_w, sizeof v.cas_w) == 0 && v1.cas_clip == v.cas_clip,
              "the thread count changed the weights");
    free(e1);
    free(ec);
}

/* 64 rows of a real TREx frame: the stage wins there (as in the golden
 * stream lsmix_trex64); s holds its stream. */
static uint8_t *trex64_stream(size_t *slen, uint8_t **be, uint32_t *w, uint32_t *h)
{
    size_t len;
    uint64_t off;
    uint8_t *file = core_read_file("tests/data/real/trex_20230503T060000_f0.fits", &len);
    cr_assert(file, "run from the repository root");
    cr_assert_eq(core_fits_primary_image(file, len, &off, w, h), 0);
    cr_assert(*h >= 64);
    *h = 64;
    *be = malloc(2 * (size_t)*w * *h);
    memcpy(*be, file + off, 2 * (size_t)*w * *h);
    free(file);
    aurp_params p;
    aurp_params_for_profile(&p, AURP_PROFILE_LSMIX);
    size_t cap = aurp_image_bound(*w, *h);
    uint8_t *s = malloc(cap);
    aurp_error err = {{0}};
    cr_assert_eq(aurp_image_encode(*be, *w, *h, &p, 2, s, cap, slen, &err), AURP_OK, "%s", err.msg);
    return s;
}

Test(core_cascade, a_real_frame_takes_the_stage_and_round_trips)
{
    size_t slen;
    uint8_t *be;
    uint32_t w, h;
    uint8_t *s = trex64_stream(&slen, &be, &w, &h);
    cr_assert(s[23] & 4, "header byte 23 %#x: the cascade stage should win on 64 TREx rows", s[23]);
    uint8_t *back = malloc(2 * (size_t)w * h);
    aurp_error err = {{0}};
    for (int threads = 1; threads <= 3; threads++) {
        memset(back, 0, 2 * (size_t)w * h);
        cr_assert_eq(aurp_image_decode(s, slen, w, h, threads, back, &err), AURP_OK, "%s", err.msg);
        cr_assert(memcmp(back, be, 2 * (size_t)w * h) == 0, "%d threads: other pixels", threads);
    }
    free(s);
    free(be);
    free(back);
}

Test(core_cascade, a_damaged_cascade_block_is_refused, .timeout = 600)
{
    size_t slen;
    uint8_t *be;
    uint32_t w, h;
    uint8_t *s = trex64_stream(&slen, &be, &w, &h);
    uint8_t *back = malloc(2 * (size_t)w * h);
    aurp_error err = {{0}};
    const size_t block = LSX_HEADER + 4 * (size_t)(s[3] - 1); /* the block follows the thresholds */
    /* a clip beyond 32767 */
    uint8_t *d = malloc(slen);
    memcpy(d, s, slen);
    d[block] = 0xff, d[block + 1] = 0xff;
    cr_assert_eq(aurp_image_decode(d, slen, w, h, 1, back, &err), AURP_ERR_CORRUPT);
    cr_assert(strstr(err.msg, "cascade"), "%s", err.msg);
    /* a weight's varint that never ends */
    memcpy(d, s, slen);
    memset(d + block + 2, 0xff, 4);
    cr_assert_eq(aurp_image_decode(d, slen, w, h, 1, back, &err), AURP_ERR_CORRUPT);
    cr_assert(strstr(err.msg, "cascade"), "%s", err.msg);
    /* the stream cut inside the block */
    for (size_t n = block; n < block + 40; n++)
        cr_assert_neq(aurp_image_decode(s, n, w, h, 1, back, &err), AURP_OK, "truncation to %zu", n);
    /* every flip of the header, the thresholds and the block: an error or
     * other pixels, never a crash */
    for (size_t i = 0; i < block + 200 && i < slen; i++)
        for (int b = 0; b < 8; b++) {
            memcpy(d, s, slen);
            d[i] ^= (uint8_t)(1u << b);
            (void)aurp_image_decode(d, slen, w, h, 2, back, &err);
        }
    free(d);
    free(s);
    free(be);
    free(back);
}

/* Predictor set 3 (docs/FORMAT.md 3.2): its LG member's exp and log made
 * of basic operations, BR's column level and row offset, LG on a moving
 * Gaussian profile, and set 3 streams of curved orders, with the weighted
 * LS training in the default order and in the general one, round tripping
 * at several thread counts. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lsmix.h"
#include "lsmix_decodes.h"
#include "sim.h"

Test(core_set3, basic_exp_and_log_match_libm)
{
    double worst_ln = 0, worst_exp = 0;
    for (int i = 0; i < 200000; i++) {
        const double v = exp(-12.0 + 24.0 * i / 200000.0); /* 6e-6 .. 1.6e5 */
        const double d = fabs(lsx_ln_basic(v) - log(v));
        worst_ln = d > worst_ln ? d : worst_ln;
    }
    for (int i = 0; i <= 40000; i++) {
        const double a = -2.0 + 4.0 * i / 40000.0;
        const double d = fabs(lsx_exp_basic(a) / exp(a) - 1.0);
        worst_exp = d > worst_exp ? d : worst_exp;
    }
    cr_assert(worst_ln < 1e-12, "ln_basic is %.3g from log", worst_ln);
    cr_assert(worst_exp < 1e-13, "exp_basic is %.3g (relative) from exp", worst_exp);
    cr_assert_eq(lsx_ln_basic(1.0), 0.0);
    cr_assert_eq(lsx_exp_basic(0.0), 1.0);
}

/* Deterministic noise of about +-sd (a sum of uniforms). */
static int noise(uint32_t *state, int sd)
{
    int v = 0;
    for (int k = 0; k < 4; k++) {
        *state = *state * 1664525u + 1013904223u;
        v += (int)(*state >> 16) % (sd + 1) - sd / 2;
    }
    return v;
}

Test(core_set3, br_level_stays_under_an_order_and_follows_the_floor)
{
    uint32_t rng = 3;
    int32_t L, s;
    uint16_t lit;
    lsx_br_column_start(&L, &s, &lit, 1000);
    for (int m = 1; m < 300; m++) lsx_br_column_step(&L, &s, &lit, (uint16_t)(1000 + noise(&rng, 8)));
    cr_assert(L > 256 * 997 && L < 256 * 1003, "level %d (Q8) after 300 rows of 1000 +- noise", L);
    cr_assert(s > 256 && s < 256 * 10, "scale %d (Q8) for noise of a few ADU", s);
    /* an order crosses the column for 40 rows: the level does not move */
    const int32_t before = L;
    for (int m = 0; m < 40; m++) lsx_br_column_step(&L, &s, &lit, 20000);
    cr_assert_eq(L, before, "an order of 20000 ADU moved the level from %d to %d", before, L);
    /* the floor drops to 900 (light only adds: a level above a pixel is wrong) */
    for (int m = 0; m < 6; m++) lsx_br_column_step(&L, &s, &lit, (uint16_t)(900 + noise(&rng, 8)));
    cr_assert(L < 256 * 920, "level %d (Q8) 6 rows after the floor fell to 900", L); /* halves the gap a row */
    for (int m = 0; m < 150; m++) lsx_br_column_step(&L, &s, &lit, (uint16_t)(900 + noise(&rng, 8)));
    cr_assert(L > 256 * 897 && L < 256 * 903, "level %d (Q8) 156 rows after the floor fell to 900", L);
    /* light that stays longer than 48 rows is the column's level now */
    for (int m = 0; m < 48 + 200; m++) lsx_br_column_step(&L, &s, &lit, 5000);
    cr_assert(L > 256 * 4900, "level %d (Q8) after 248 rows at 5000", L);
}

Test(core_set3, br_row_offset_follows_the_row_and_ignores_outliers)
{
    int32_t o = 0, k = 0;
    const int32_t L = 256 * 1000, s = 256 * 2; /* level 1000, noise 2 ADU */
    uint32_t rng = 9;
    /* the row lies 3 ADU above the columns' levels, with a bright pixel every 7th */
    for (int n = 0; n < 200; n++) {
        const uint16_t x = (uint16_t)(n % 7 == 3 ? 30000 : 1003 + noise(&rng, 2));
        lsx_br_row_add(&o, &k, L, s, x);
    }
    cr_assert(o > 256 * 2 && o < 256 * 4, "offset %d (Q8) for a row 3 ADU above its levels", o);
    cr_assert(lsx_br_predict(L, o) > 1002.0 && lsx_br_predict(L, o) < 1004.0);
    cr_assert_eq(lsx_br_level(L), 1000.0);
    /* the offset stays within 3 s: a row far above is not followed */
    o = k = 0;
    for (int n = 0; n < 50; n++) lsx_br_row_add(&o, &k, L, s, 1007);
    cr_assert(o <= 3 * s && o >= -3 * s, "offset %d beyond 3 s = %d", o, 3 * s);
}

/* A Gaussian order across the rows, centred at c along the row. */
static uint16_t order_px(int n, double c, double peak) { return (uint16_t)lround(500.0 + peak * exp(-(n - c) * (n - c) / 200.0)); }

Test(core_set3, lg_follows_the_ratio_of_a_moving_order)
{
    enum { W = 96 };
    uint16_t up[W], cur[W];
    int32_t c[W];
    /* the order's peak drifts 0.4 column from one row to the next (a
     * curved order): the ratio of the rows is e^(a + b d) along the row */
    for (int n = 0; n < W; n++) up[n] = order_px(n, 48.0, 20000.0), cur[n] = order_px(n, 48.4, 20000.0), c[n] = 16 * 500;
    lsx_lg g;
    double worst_lg = 0, worst_up = 0;
    for (uint32_t n = 0; n < W; n++) {
        const double p = lsx_lg_predict(&g, up, c, W, n);
        if (n >= 30 && n < 66) { /* on the order, where it is bright */
            worst_lg = fmax(worst_lg, fabs(p - cur[n]) / (cur[n] - 500.0));
            worst_up = fmax(worst_up, fabs((double)up[n] - cur[n]) / (cur[n] - 500.0));
        }
        if (n >= 1) lsx_lg_add(&g, cur[n], c[n], 256 * 3);
    }
    cr_assert(worst_lg < 0.02, "LG is %.3f (relative to the light) from the order", worst_lg);
    cr_assert(worst_lg < worst_up / 4, "LG %.4f is not much better than the row above %.4f", worst_lg, worst_up);
}

/* A simulated frame of the kind (codec values) and its lsmix stream with
 * the row-member set row_set, parameters K and M. */
static uint8_t *stream_of(sim_kind kind, uint32_t w, uint32_t h, uint64_t seed, int row_set, int K, int M,
                          uint16_t **u, size_t *len)
{
    sim_options o;
    sim_options_for_kind(&o, kind);
    *u = malloc(2 * (size_t)w * h);
    cr_assert_eq(sim_frame(w, h, seed, 0, &o, *u), 0);
    aurp_params p = {AURP_PROFILE_LSMIX, K, M, 0};
    size_t cap = aurp_image_bound(w, h);
    uint8_t *s = malloc(cap);
    aurp_error err = {{0}};
    cr_assert_eq(lsx_image_encode_set(*u, w, h, &p, row_set, LSX_SIGN_MODEL, 2, s, cap, len, &err), AURP_OK, "%s", err.msg);
    return s;
}

Test(core_set3, curved_orders_write_set_3_smaller_than_set_2, .timeout = 300)
{
    enum { W = 512, H = 256 };
    uint16_t *u, *u2;
    size_t len3, len2;
    uint8_t *s3 = stream_of(SIM_KIND_ECHELLE, W, H, 3, 3, LSX_DEFAULT_K, LSX_DEFAULT_M, &u, &len3);
    uint8_t *s2 = stream_of(SIM_KIND_ECHELLE, W, H, 3, 2, LSX_DEFAULT_K, LSX_DEFAULT_M, &u2, &len2);
    cr_assert_eq(s3[22], 3, "an echelle frame: predictor set %d", s3[22]);
    cr_assert_eq(s2[22], 2, "an echelle frame with set 2 asked for: predictor set %d", s2[22]);
    cr_assert(len3 < len2, "set 3 %zu bytes, set 2 %zu", len3, len2);
    lsmix_assert_decodes(s3, len3, W, H, u);
    lsmix_assert_decodes(s2, len2, W, H, u);
    /* the encoder writes LSX_WRITE_SET */
    size_t cap = aurp_image_bound(W, H), len;
    uint8_t *s = malloc(cap);
    aurp_params p;
    aurp_params_for_profile(&p, AURP_PROFILE_LSMIX);
    aurp_error err = {{0}};
    cr_assert_eq(lsx_image_encode(u, W, H, &p, 2, s, cap, &len, &err), AURP_OK, "%s", err.msg);
    cr_assert(s[22] == LSX_WRITE_SET && len == (LSX_WRITE_SET == 3 ? len3 : len2));
    /* LG, RL and BR read BG's levels: a set 3 stream without the BG flag is refused */
    s3[23] &= (uint8_t)~2u;
    cr_assert_eq(lsx_image_decode(s3, len3, W, H, 1, u2, &err), AURP_ERR_CORRUPT);
    cr_assert(strstr(err.msg, "set 3 without BG"), "%s", err.msg);
    cr_assert_eq(lsx_image_encode_set(u, W, H, &p, 4, 1, 1, s, cap, &len, &err), AURP_ERR_PARAM);
    free(s);
    free(s2);
    free(s3);
    free(u);
    free(u2);
}

/* The weighted training (set 3 with forgetting 2^-1) in the general order
 * (K != 6: each product weighted apart) and in the default order (the
 * vector products): streams of both decode, at 1 to 3 threads. */
Test(core_set3, weighted_training_round_trips_in_every_order, .timeout = 300)
{
    static const struct {
        sim_kind kind;
        uint32_t w, h;
        uint64_t seed;
        int K, M;
    } cases[] = {
        {SIM_KIND_ECHELLE, 192, 96, 3, 6, 9},   {SIM_KIND_ECHELLE, 192, 96, 3, 3, 5},
        {SIM_KIND_ECHELLE, 160, 80, 2, 16, 17}, {SIM_KIND_ARC, 192, 96, 1, 1, 1},
        {SIM_KIND_ECHELLE_ARC, 128, 128, 2, 9, 13},
    };
    int weighted_general = 0, weighted_default = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uint16_t *u;
        size_t len;
        uint8_t *s = stream_of(cases[c].kind, cases[c].w, cases[c].h, cases[c].seed, 3, cases[c].K, cases[c].M, &u,
                               &len);
        if (s[22] == 3 && s[12] == LSX_ROW_FORGET) {
            if (cases[c].K == LSX_DEFAULT_K) weighted_default++;
            else weighted_general++;
        }
        lsmix_assert_decodes(s, len, cases[c].w, cases[c].h, u);
        free(s);
        free(u);
    }
    cr_assert(weighted_default >= 1 && weighted_general >= 2,
              "cases with the weighted training: %d in the default order, %d in others", weighted_default,
              weighted_general);
}

/* Damage to a set 3 stream (the weighted training, LG, BR: state that a
 * flipped bit can drive anywhere): every single-bit flip decodes or is
 * refused, never reads or writes out of bounds (the ASan build runs this
 * too), and every truncation is refused. */
Test(core_set3, every_flip_and_truncation_of_a_set_3_stream_is_safe, .timeout = 300)
{
    enum { W = 32, H = 24 };
    uint16_t *u;
    size_t len;
    uint8_t *s = stream_of(SIM_KIND_ECHELLE_ARC, W, H, 1, 3, LSX_DEFAULT_K, LSX_DEFAULT_M, &u, &len);
    cr_assert(s[22] == 3 && s[12] == LSX_ROW_FORGET, "the case wants set 3 with the weighted training: set %d, f %d",
              s[22], s[12]);
    uint8_t *buf = malloc(len);
    uint16_t *back = malloc(2 * W * H);
    aurp_error err = {{0}};
    int refused = 0;
    for (size_t i = 0; i < len; i++)
        for (int b = 0; b < 8; b++) {
            memcpy(buf, s, len);
            buf[i] ^= (uint8_t)(1u << b);
            const aurp_status st = lsx_image_decode(buf, len, W, H, 1 + (int)(i & 1), back, &err);
            cr_assert(st == AURP_OK || st == AURP_ERR_CORRUPT, "byte %zu bit %d: status %d", i, b, st);
            refused += st != AURP_OK;
        }
    /* most flips end the segments elsewhere than their coder says */
    cr_assert_gt(refused, (int)(8 * len) / 2, "only %d of %zu flips refused", refused, 8 * len);
    for (size_t cut = 0; cut < len; cut++)
        cr_assert_eq(lsx_image_decode(s, cut, W, H, 1, back, &err), AURP_ERR_CORRUPT, "cut at %zu of %zu", cut, len);
    free(back);
    free(buf);
    free(s);
    free(u);
}

/* RL, the row members of predictor sets 2 and 3 (core/lsmix_rl.h): on
 * bright pixels a member follows the relation of the last pixels along the
 * row, on faint ones it falls back to BG's column level; curved orders pick
 * the row-member set the encoder writes (LSX_WRITE_SET), and such a stream
 * without BG is refused. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lsmix.h"
#include "sim.h"

/* Runs member q along row m = 2 of rows[3][W] (rows[2] the current row)
 * and writes its predictions. */
static void run_row(int q, uint16_t rows[3][64], const int32_t *c, const int32_t *s, double *pred)
{
    lsx_rl r;
    memset(&r, 0, sizeof r);
    for (uint32_t n = 0; n < 64; n++) {
        lsx_rl_regressors(&r, q, rows[2], rows[1], rows[0], c, 64, n);
        pred[n] = lsx_rl_pixel(&r, q, n, 64, rows[1], c, s);
        if (n > 0) lsx_rl_add(&r, q, rows[2][n], c[n]);
    }
}

Test(core_rl, follows_a_bright_order_and_falls_back_to_the_level_when_faint)
{
    uint16_t rows[3][64];
    int32_t c[64], s[64];
    double pred[64];
    /* bright: the current row is the row above times 1.5, along a profile
     * that changes from pixel to pixel (an order crossing the row) */
    for (int n = 0; n < 64; n++) {
        rows[0][n] = (uint16_t)(2000 + 900 * ((n * 7) % 11));
        rows[1][n] = (uint16_t)(2000 + 1000 * ((n * 7) % 11));
        rows[2][n] = (uint16_t)(3 * rows[1][n] / 2);
        c[n] = 16 * 100, s[n] = 256; /* level 100 ADU, noise about 1.5 ADU */
    }
    run_row(0, rows, c, s, pred); /* RL1 (RL2 sees one pixel of the row above, and this profile jumps) */
    for (int n = 8; n < 64; n++)
        cr_assert(pred[n] > 0.98 * rows[2][n] && pred[n] < 1.02 * rows[2][n], "RL1 at %d: %.1f for %u", n, pred[n],
                  rows[2][n]);
    /* faint: noise of +-4 ADU about a level of 1000 with a scale of 20 ADU:
     * the ridge of 30 sigma^2 holds the member at the level */
    uint32_t rng = 7;
    for (int n = 0; n < 64; n++)
        for (int r = 0; r < 3; r++) {
            rng = rng * 1664525u + 1013904223u;
            rows[r][n] = (uint16_t)(1000 + (int)(rng >> 29) - 4);
            c[n] = 16 * 1000, s[n] = 256 * 20;
        }
    for (int q = 0; q < LSX_RL_N; q++) {
        run_row(q, rows, c, s, pred);
        for (int n = 2; n < 64; n++)
            cr_assert(pred[n] > 999.0 && pred[n] < 1001.0, "RL%d at %d: %.2f, not the level 1000", q + 1, n, pred[n]);
    }
}

/* The lsmix image stream of a simulated frame of the kind. */
static uint8_t *stream_of(sim_kind kind, uint32_t w, uint32_t h, uint8_t **be, size_t *len)
{
    sim_options o;
    sim_options_for_kind(&o, kind);
    uint16_t *u = malloc(2 * (size_t)w * h);
    cr_assert_eq(sim_frame(w, h, 3, 0, &o, u), 0);
    *be = malloc(2 * (size_t)w * h);
    for (size_t i = 0; i < (size_t)w * h; i++) (*be)[2 * i] = (uint8_t)((u[i] ^ 0x8000) >> 8), (*be)[2 * i + 1] = (uint8_t)(u[i] ^ 0x8000);
    free(u);
    aurp_params p;
    aurp_params_for_profile(&p, AURP_PROFILE_LSMIX);
    size_t cap = aurp_image_bound(w, h);
    uint8_t *s = malloc(cap);
    aurp_error err = {{0}};
    cr_assert_eq(aurp_image_encode(*be, w, h, &p, 2, s, cap, len, &err), AURP_OK, "%s", err.msg);
    return s;
}

Test(core_rl, curved_orders_pick_the_row_member_set_and_the_stream_round_trips)
{
    enum { W = 512, H = 256 };
    uint8_t *be, *back = malloc(2 * W * H);
    size_t len;
    aurp_error err = {{0}};
    uint8_t *s = stream_of(SIM_KIND_ECHELLE, W, H, &be, &len);
    cr_assert_eq(s[22], LSX_WRITE_SET, "an echelle frame: predictor set %d", s[22]);
    cr_assert_eq(aurp_image_decode(s, len, W, H, 2, back, &err), AURP_OK, "%s", err.msg);
    cr_assert(memcmp(back, be, 2 * W * H) == 0, "set %d stream decodes to other pixels", s[22]);
    /* RL reads BG's levels: a row-member stream without the BG flag is refused */
    s[23] &= (uint8_t)~2u;
    cr_assert_eq(aurp_image_decode(s, len, W, H, 1, back, &err), AURP_ERR_CORRUPT);
    cr_assert(strstr(err.msg, "without BG"), "%s", err.msg);
    free(s);
    free(be);
    /* a frame without curved structure keeps set 0 */
    s = stream_of(SIM_KIND_AURORA, W, H, &be, &len);
    cr_assert_eq(s[22], 0, "an aurora frame: predictor set %d", s[22]);
    free(s);
    free(be);
    free(back);
}

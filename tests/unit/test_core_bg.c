/* BG, the lsmix blend's background member (core/lsmix_bg.h): its column
 * level and scale follow the background and not the lines that cross it,
 * and its row offset follows a row's level change and not an outlier. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include "lsmix.h"

/* The next state of a linear congruential generator. */
static uint32_t lcg(uint32_t *state)
{
    *state = *state * 1664525u + 1013904223u;
    return *state;
}

/* Deterministic noise of about +-sd (a sum of uniforms). */
static int noise(uint32_t *state, int sd)
{
    int v = 0;
    for (int k = 0; k < 4; k++) v += (int)(lcg(state) >> 16) % (sd + 1) - sd / 2;
    return v;
}

Test(core_bg, column_level_follows_the_background_not_a_line)
{
    uint32_t rng = 1;
    int32_t c, s;
    lsx_bg_column_start(&c, &s, 1000);
    for (uint32_t m = 1; m < 200; m++) lsx_bg_column_step(&c, &s, m, (uint16_t)(1000 + noise(&rng, 6)));
    cr_assert(c > 16 * 997 && c < 16 * 1003, "level %d after 200 rows of 1000 +- noise", c);
    const int32_t scale = s;
    cr_assert(scale >= LSX_BG_SMIN && scale < 256 * 20, "scale %d (Q8) for noise of a few ADU", scale);
    /* a bright line crosses the column for 20 rows: the level barely moves */
    const int32_t before = c;
    for (uint32_t m = 200; m < 220; m++) lsx_bg_column_step(&c, &s, m, 30000);
    cr_assert(c - before < 16 * 4, "a 30000 ADU line moved the level by %d (Q4)", c - before);
    for (uint32_t m = 220; m < 400; m++) lsx_bg_column_step(&c, &s, m, (uint16_t)(1000 + noise(&rng, 6)));
    cr_assert(c > 16 * 995 && c < 16 * 1005, "level %d after the line", c);
    /* a real change of the background is followed: a step to 1200 */
    for (uint32_t m = 400; m < 700; m++) lsx_bg_column_step(&c, &s, m, (uint16_t)(1200 + noise(&rng, 6)));
    cr_assert(c > 16 * 1190 && c < 16 * 1210, "level %d after a step to 1200", c);
}

Test(core_bg, first_rows_are_a_running_mean)
{
    int32_t c, s;
    lsx_bg_column_start(&c, &s, 100);
    cr_assert_eq(c, 1600);
    cr_assert_eq(s, LSX_BG_S0);
    lsx_bg_column_step(&c, &s, 1, 102); /* rate 1/2: the mean of two rows */
    cr_assert_eq(c, 1616);
}

Test(core_bg, row_offset_follows_the_row_and_ignores_an_outlier)
{
    enum { W = 200 };
    int32_t c[W], s[W];
    int64_t w[W];
    for (int n = 0; n < W; n++) c[n] = 16 * (500 + 3 * n), s[n] = 256 * 4, w[n] = lsx_bg_weight(s[n]);
    lsx_bg_row r;
    lsx_bg_row_start(&r);
    cr_assert_eq(lsx_bg_predict(&r, c[0]), 500.0, "row start: the column level");
    /* this row sits 20 ADU above the column levels; pixel 120 is a cosmic ray */
    for (int n = 0; n < W; n++) {
        if (n == 100) cr_assert(r.o > 16 * 18 && r.o < 16 * 22, "offset %d (Q4) after 100 pixels 20 ADU up", r.o);
        uint16_t x = (uint16_t)(n == 120 ? 40000 : 500 + 3 * n + 20);
        lsx_bg_row_add(&r, c[n], s[n], w[n], x);
        if (n == 120) cr_assert(r.o < 16 * 26, "one outlier threw the offset to %d (Q4)", r.o);
    }
    cr_assert(lsx_bg_predict(&r, c[W - 1]) > 500 + 3 * (W - 1) + 18, "prediction follows the row's level");
}

Test(core_bg, weights_favour_quiet_columns_and_never_vanish)
{
    cr_assert_gt(lsx_bg_weight(LSX_BG_SMIN), lsx_bg_weight(256 * 100));
    cr_assert_geq(lsx_bg_weight(256 * 65535), 1, "the brightest columns still count");
    cr_assert_eq(lsx_bg_limit(256), 59, "2.5 sigma of a 1 ADU scale, Q4");
}

/* The row and column passes take the weight by one double division
 * (lsx_bg_weight_fp): the integer one's value for every scale a column
 * can reach (below 2^25) and up to twice that. */
Test(core_bg, double_weight_is_the_integer_weight)
{
    int32_t wrong = -1;
    for (int32_t s = 0; s < (1 << 26) && wrong < 0; s++)
        if (lsx_bg_weight_fp(s) != lsx_bg_weight(s)) wrong = s;
    cr_assert_eq(wrong, -1, "scale %d: %lld against %lld", wrong, (long long)lsx_bg_weight_fp(wrong),
                 (long long)lsx_bg_weight(wrong));
}

/* lsx_bg_columns_step, the vector form lsx_end_row uses, gives the values
 * of lsx_bg_column_step column by column: on random states over the whole
 * range the format allows (levels of 16-bit pixels, scales up to 2^25),
 * at every rate (the first rows' and the outliers' shifts), and along
 * rows of extreme pixels that drive the scales to their largest. */
Test(core_bg, columns_step_is_the_column_step)
{
    enum { W = 4099 }; /* not a multiple of any vector width */
    static int32_t c[W], s[W], c_ref[W], s_ref[W];
    static uint16_t x[W];
    uint32_t rng = 7;
    const uint32_t rows[] = {1, 2, 3, 6, 7, 14, 15, 30, 31, 32, 33, 1000, 65535};
    for (size_t k = 0; k < sizeof rows / sizeof *rows; k++) {
        for (int n = 0; n < W; n++) {
            c[n] = (int32_t)(lcg(&rng) % (16u * 65535u + 1));
            s[n] = LSX_BG_SMIN + (int32_t)(lcg(&rng) % ((1u << 25) - LSX_BG_SMIN));
            x[n] = n % 7 == 0 ? (uint16_t)(n % 2 ? 65535 : 0) : (uint16_t)(lcg(&rng) >> 16);
            c_ref[n] = c[n], s_ref[n] = s[n];
        }
        lsx_bg_columns_step(c, s, rows[k], x, W);
        for (int n = 0; n < W; n++) {
            lsx_bg_column_step(&c_ref[n], &s_ref[n], rows[k], x[n]);
            cr_assert(c[n] == c_ref[n] && s[n] == s_ref[n], "row %u column %d: (%d, %d), the column step (%d, %d)",
                      rows[k], n, c[n], s[n], c_ref[n], s_ref[n]);
        }
    }
    /* a frame's worth of rows from row 0, alternating 0 and 65535 in some
     * columns (the scale grows as far as it can), noise in the others */
    for (int n = 0; n < W; n++) {
        lsx_bg_column_start(&c[n], &s[n], (uint16_t)(1000 + n));
        c_ref[n] = c[n], s_ref[n] = s[n];
    }
    int32_t s_max = 0;
    for (uint32_t m = 1; m < 1100; m++) {
        for (int n = 0; n < W; n++)
            x[n] = n % 3 == 0 ? (uint16_t)((m + (uint32_t)n) % 2 ? 65535 : 0) : (uint16_t)(1000 + n + noise(&rng, 50));
        lsx_bg_columns_step(c, s, m, x, W);
        for (int n = 0; n < W; n++) {
            lsx_bg_column_step(&c_ref[n], &s_ref[n], m, x[n]);
            cr_assert(c[n] == c_ref[n] && s[n] == s_ref[n], "row %u column %d differs", m, n);
            s_max = s[n] > s_max ? s[n] : s_max;
        }
    }
    cr_assert_gt(s_max, 1 << 20, "the extreme columns' scales grew (%d, Q8)", s_max);
}

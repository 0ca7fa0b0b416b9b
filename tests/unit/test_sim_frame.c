/* The spectrometer simulator: deterministic frames with the features of a
 * real aurora spectrograph frame. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#define W 1024
#define H 256

static uint16_t *frame(uint64_t seed, uint64_t index, const sim_options *o)
{
    uint16_t *p = malloc(sizeof(uint16_t) * W * H);
    cr_assert_not_null(p);
    cr_assert_eq(sim_frame(W, H, seed, index, o, p), 0);
    return p;
}

static int cmp_u16(const void *a, const void *b)
{
    return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* Median of column n over all rows. */
static double column_median(const uint16_t *p, long n)
{
    uint16_t col[H];
    for (int m = 0; m < H; m++) col[m] = p[(size_t)m * W + (size_t)n];
    qsort(col, H, sizeof col[0], cmp_u16);
    return 0.5 * (col[H / 2 - 1] + col[H / 2]);
}

Test(sim_frame, same_inputs_same_frame_other_inputs_other_frame)
{
    sim_options o;
    sim_options_default(&o);
    uint16_t *a = frame(7, 3, &o), *b = frame(7, 3, &o), *c = frame(7, 4, &o), *d = frame(8, 3, &o);
    cr_assert(memcmp(a, b, sizeof(uint16_t) * W * H) == 0, "same seed and index differ");
    cr_assert(memcmp(a, c, sizeof(uint16_t) * W * H) != 0, "next frame identical");
    cr_assert(memcmp(a, d, sizeof(uint16_t) * W * H) != 0, "other seed identical");
    free(a), free(b), free(c), free(d);
}

Test(sim_frame, rejects_empty_frames)
{
    sim_options o;
    sim_options_default(&o);
    uint16_t px;
    cr_assert_eq(sim_frame(0, 5, 1, 0, &o, &px), -1);
    cr_assert_eq(sim_frame(5, 0, 1, 0, &o, &px), -1);
    cr_assert_eq(sim_frame(1, 1, 1, 0, &o, &px), 0);
}

Test(sim_frame, bias_level_in_range)
{
    sim_options o;
    sim_options_default(&o);
    o.hot_pixel_fraction = 0, o.cosmic_rays = 0, o.line_scale = 0, o.continuum_adu = 0,
    o.dark_adu = 0;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        double bias = sim_bias_of(seed, &o);
        cr_assert(bias >= 500 && bias <= 1000, "seed %llu bias %f", (unsigned long long)seed, bias);
        uint16_t *p = frame(seed, 0, &o);
        double sum = 0;
        for (size_t i = 0; i < (size_t)W * H; i++) sum += p[i];
        double mean = sum / (W * H);
        cr_assert(fabs(mean - bias) < 1.0, "seed %llu: dark frame mean %f, bias %f",
                  (unsigned long long)seed, mean, bias);
        free(p);
    }
}

Test(sim_frame, emission_lines_stand_above_their_surroundings)
{
    sim_options o;
    sim_options_default(&o);
    const sim_line *lines;
    int nlines = sim_lines(&lines);
    cr_assert_geq(nlines, 6);
    int found_green = 0, found_red = 0;
    for (uint64_t index = 0; index < 3; index++) {
        uint16_t *p = frame(11, index * 40, &o);
        for (int i = 0; i < nlines; i++) {
            long n = lround(sim_column_of(W, &o, lines[i].nm));
            if (n < 12 || n >= W - 12) continue;
            double at = column_median(p, n);
            /* continuum on both sides, clear of the line's profile */
            double side = 0.5 * (column_median(p, n - 10) + column_median(p, n + 10));
            double excess = at - side;
            if (fabs(lines[i].nm - 557.7) < 0.1) {
                found_green = 1;
                cr_assert_gt(excess, 100, "frame %llu: 557.7 nm excess %.1f ADU", (unsigned long long)index, excess);
            } else if (fabs(lines[i].nm - 630.0) < 0.1) {
                found_red = 1;
                cr_assert_gt(excess, 40, "frame %llu: 630.0 nm excess %.1f ADU", (unsigned long long)index, excess);
            } else if (fabs(lines[i].nm - 589.0) < 0.1) {
                cr_assert_gt(excess, 20, "Na D excess %.1f ADU", excess);
            }
        }
        free(p);
    }
    cr_assert(found_green && found_red);
}

Test(sim_frame, green_line_follows_arcs_along_the_slit)
{
    sim_options o;
    sim_options_default(&o);
    o.hot_pixel_fraction = 0, o.cosmic_rays = 0;
    uint16_t *p = frame(3, 0, &o);
    long n = lround(sim_column_of(W, &o, 557.7));
    int lo = 65535, hi = 0;
    for (int m = 0; m < H; m++) {
        int v = p[(size_t)m * W + (size_t)n];
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    cr_assert_gt(hi - lo, 500, "557.7 nm along the slit: %d..%d, no arc structure", lo, hi);
    free(p);
}

/* Noise in a line-free band: the spread of horizontal neighbour differences
 * (robust: median absolute deviation) against read noise + shot noise. */
Test(sim_frame, noise_matches_read_and_shot_noise)
{
    sim_options o;
    sim_options_default(&o);
    o.hot_pixel_fraction = 0, o.cosmic_rays = 0;
    uint16_t *p = frame(5, 0, &o);
    long n0 = lround(sim_column_of(W, &o, 445.0)), n1 = lround(sim_column_of(W, &o, 462.0));
    size_t count = 0;
    double *d = malloc(sizeof(double) * H * (size_t)(n1 - n0));
    double level = 0;
    for (int m = H / 4; m < 3 * H / 4; m++)
        for (long n = n0; n < n1; n++) {
            double a = p[(size_t)m * W + (size_t)n], b = p[(size_t)m * W + (size_t)n + 1];
            d[count++] = fabs(a - b);
            level += a;
        }
    level /= (double)count;
    qsort(d, count, sizeof *d, cmp_double);
    double sigma = d[count / 2] / 0.6745 / sqrt(2.0);
    double signal = level - sim_bias_of(5, &o);
    double want = sqrt(o.read_noise_adu * o.read_noise_adu + signal / o.gain_e_per_adu);
    cr_assert(fabs(sigma - want) < 0.15 * want, "noise %.2f ADU, expected %.2f (signal %.1f ADU)",
              sigma, want, signal);
    free(d);
    free(p);
}

Test(sim_frame, hot_pixels_are_fixed_cosmic_rays_are_not)
{
    sim_options o;
    sim_options_default(&o);
    o.hot_pixel_fraction = 2e-4; /* about 52 hot pixels, 70% of them above bias + 1500 */
    o.line_scale = 0;            /* no bright aurora in the way */
    uint16_t *a = frame(9, 0, &o), *b = frame(9, 1, &o);
    int hot_a = 0, hot_both = 0, hot_b = 0;
    double bright = sim_bias_of(9, &o) + 1500;
    for (size_t i = 0; i < (size_t)W * H; i++) {
        int ha = a[i] > bright, hb = b[i] > bright;
        hot_a += ha, hot_b += hb, hot_both += ha && hb;
    }
    cr_assert_gt(hot_both, 20, "only %d bright pixels in both frames", hot_both);
    /* cosmic rays: bright in one frame only */
    cr_assert_gt(hot_a + hot_b - 2 * hot_both, 0, "no cosmic ray in two frames");
    free(a), free(b);
}

Test(sim_frame, saturates_at_65535_without_wrapping)
{
    sim_options o;
    sim_options_default(&o);
    o.line_scale = 40; /* the green line far beyond full well */
    uint16_t *p = frame(2, 0, &o);
    long n = lround(sim_column_of(W, &o, 557.7));
    int saturated = 0;
    double bias = sim_bias_of(2, &o);
    for (int m = 0; m < H; m++) {
        uint16_t v = p[(size_t)m * W + (size_t)n];
        saturated += v == 65535;
        cr_assert_gt(v, bias + 1000, "row %d: %u ADU at the saturated line (wrapped?)", m, v);
    }
    cr_assert_gt(saturated, 0);
    free(p);
    /* and a quiet frame never reaches it */
    sim_options_default(&o);
    o.hot_pixel_fraction = 0, o.cosmic_rays = 0;
    p = frame(2, 0, &o);
    for (size_t i = 0; i < (size_t)W * H; i++) cr_assert_lt(p[i], 65535, "pixel %zu saturated", i);
    free(p);
}

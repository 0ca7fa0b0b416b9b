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

/* ---- the other kinds (issue #8): each shows what it claims ---- */

static uint16_t *frame_of(sim_kind kind, uint32_t w, uint32_t h, uint64_t seed, uint64_t index,
                          double level)
{
    sim_options o;
    sim_options_for_kind(&o, kind);
    o.level = level;
    uint16_t *p = malloc(sizeof(uint16_t) * w * h);
    cr_assert_not_null(p);
    cr_assert_eq(sim_frame(w, h, seed, index, &o, p), 0, "kind %s", sim_kind_name(kind));
    return p;
}

static double median_of(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Robust sigma: the standard deviation of what lies within 5 sigma of the
 * median, sigma first from the median absolute deviation (which alone is
 * too coarse on integer counts). */
static double robust_sigma(double *v, size_t n)
{
    double med = median_of(v, n);
    double *dev = malloc(sizeof(double) * n);
    for (size_t i = 0; i < n; i++) dev[i] = fabs(v[i] - med);
    double mad_sigma = median_of(dev, n) / 0.6745 + 0.5, sum = 0, sum2 = 0;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (fabs(v[i] - med) < 5 * mad_sigma) sum += v[i], sum2 += v[i] * v[i], kept++;
    free(dev);
    double mean = sum / (double)kept;
    return sqrt(sum2 / (double)kept - mean * mean);
}

/* Median over rows m0..m1-1 of column n (robust to hot pixels and cosmic rays). */
static double column_median_of(const uint16_t *p, uint32_t w, uint32_t m0, uint32_t m1, uint32_t n)
{
    double *v = malloc(sizeof(double) * (m1 - m0));
    for (uint32_t m = m0; m < m1; m++) v[m - m0] = p[(size_t)m * w + n];
    double med = median_of(v, m1 - m0);
    free(v);
    return med;
}

/* Mean over rows m0..m1-1 of column n. */
static double column_mean(const uint16_t *p, uint32_t w, uint32_t m0, uint32_t m1, uint32_t n)
{
    double s = 0;
    for (uint32_t m = m0; m < m1; m++) s += p[(size_t)m * w + n];
    return s / (m1 - m0);
}

static double correlation(const double *a, const double *b, size_t n)
{
    double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;
    for (size_t i = 0; i < n; i++) ma += a[i], mb += b[i];
    ma /= (double)n, mb /= (double)n;
    for (size_t i = 0; i < n; i++)
        sab += (a[i] - ma) * (b[i] - mb), saa += (a[i] - ma) * (a[i] - ma), sbb += (b[i] - mb) * (b[i] - mb);
    return sab / sqrt(saa * sbb);
}

Test(sim_kinds, names_round_trip_and_every_kind_is_a_function_of_its_seed)
{
    cr_assert_eq(sim_kind_from_name("echelle-arc"), SIM_KIND_ECHELLE_ARC);
    cr_assert_eq(sim_kind_from_name("nonsense"), -1);
    for (int k = 0; k < SIM_KIND_COUNT; k++) {
        cr_assert_eq(sim_kind_from_name(sim_kind_name((sim_kind)k)), k);
        uint16_t *a = frame_of((sim_kind)k, 300, 200, 4, 2, 1), *b = frame_of((sim_kind)k, 300, 200, 4, 2, 1);
        uint16_t *c = frame_of((sim_kind)k, 300, 200, 5, 2, 1);
        cr_assert(memcmp(a, b, sizeof(uint16_t) * 300 * 200) == 0, "%s: same seed differs", sim_kind_name((sim_kind)k));
        cr_assert(memcmp(a, c, sizeof(uint16_t) * 300 * 200) != 0, "%s: other seed identical", sim_kind_name((sim_kind)k));
        free(a), free(b), free(c);
        /* tiny frames too */
        uint16_t px[6];
        sim_options o;
        sim_options_for_kind(&o, (sim_kind)k);
        cr_assert_eq(sim_frame(1, 1, 1, 0, &o, px), 0);
        cr_assert_eq(sim_frame(3, 2, 1, 0, &o, px), 0);
    }
}

/* A dark aurora frame is bias and read noise: the median sits at the bias
 * (plus a little dark current and the bias's own structure) and the robust
 * spread of a line-free band is the read noise; the green line is there, faint. */
Test(sim_kinds, dark_frame_is_bias_plus_read_noise_with_faint_lines)
{
    sim_options o;
    sim_options_for_kind(&o, SIM_KIND_DARK);
    uint16_t *p = frame_of(SIM_KIND_DARK, W, H, 6, 0, 1);
    uint32_t wi = W - sim_overscan_columns(W, &o);
    double *v = malloc(sizeof(double) * W * H);
    size_t count = 0;
    for (size_t m = 0; m < H; m++)
        for (size_t n = 0; n < wi; n++) v[count++] = p[m * W + n];
    double med = median_of(v, count), bias = sim_bias_of(6, &o);
    cr_assert(fabs(med - bias) < 1.5 * o.read_noise_adu, "median %.1f, bias %.1f", med, bias);
    long n0 = lround(sim_column_of(W, &o, 445.0)), n1 = lround(sim_column_of(W, &o, 462.0));
    count = 0;
    for (size_t m = 0; m < H; m++)
        for (long n = n0; n < n1; n++) v[count++] = p[m * W + (size_t)n];
    double sigma = robust_sigma(v, count);
    cr_assert(sigma > o.read_noise_adu && sigma < 1.25 * o.read_noise_adu,
              "robust sigma %.2f ADU, read noise %.2f", sigma, o.read_noise_adu);
    long green = lround(sim_column_of(W, &o, 557.7));
    double excess = column_median(p, green) - 0.5 * (column_median(p, green - 10) + column_median(p, green + 10));
    cr_assert(excess > 3 && excess < 10 * o.read_noise_adu, "557.7 nm excess %.1f ADU", excess);
    free(v), free(p);
}

/* A bias frame's column pattern is fixed: the top and the bottom half of the
 * frame, and the next frame, show the same column means; its rows are not
 * (banding), and the overscan sits at the bias. */
Test(sim_kinds, bias_column_pattern_repeats_across_rows_and_frames)
{
    sim_options o;
    sim_options_for_kind(&o, SIM_KIND_BIAS);
    uint16_t *a = frame_of(SIM_KIND_BIAS, W, H, 8, 0, 1), *b = frame_of(SIM_KIND_BIAS, W, H, 8, 1, 1);
    uint32_t ov = sim_overscan_columns(W, &o), wi = W - ov;
    cr_assert_geq(ov, 16);
    double *top = malloc(sizeof(double) * W), *bottom = malloc(sizeof(double) * W), *next = malloc(sizeof(double) * W);
    /* away from the amplifier's settling (its own fixed pattern, an easy pass) */
    uint32_t n0 = 150, cols = wi - n0;
    for (uint32_t n = n0; n < wi; n++) {
        top[n - n0] = column_median_of(a, W, 0, H / 2, n);
        bottom[n - n0] = column_median_of(a, W, H / 2, H, n);
        next[n - n0] = column_median_of(b, W, 0, H, n);
    }
    double halves = correlation(top, bottom, cols), frames = correlation(top, next, cols);
    cr_assert_gt(halves, 0.8, "column means of the two halves correlate %.3f", halves);
    cr_assert_gt(frames, 0.8, "column means of two frames correlate %.3f", frames);
    /* banding: row means scatter far more than read noise / sqrt(columns) */
    double *rows = malloc(sizeof(double) * H);
    for (uint32_t m = 0; m < H; m++) {
        double s = 0;
        for (uint32_t n = n0; n < wi; n++) s += a[(size_t)m * W + n] - top[n - n0];
        rows[m] = s / cols;
    }
    double spread = robust_sigma(rows, H), white = o.read_noise_adu / sqrt(cols);
    cr_assert_gt(spread, 4 * white, "row means spread %.3f ADU, white noise alone %.3f", spread, white);
    /* the amplifier's gradient: the first columns read higher */
    cr_assert_gt(column_mean(a, W, 0, H, 0) - column_mean(a, W, 0, H, 300), 6.0);
    free(top), free(bottom), free(next), free(rows), free(a), free(b);
}

/* Twilight: bright, close to (not at) saturation at level 1, saturated when
 * brighter; Fraunhofer lines dark in the mean spectrum; the overscan dark. */
Test(sim_kinds, twilight_is_a_bright_solar_spectrum_with_dark_overscan)
{
    sim_options o;
    sim_options_for_kind(&o, SIM_KIND_TWILIGHT);
    uint16_t *p = frame_of(SIM_KIND_TWILIGHT, W, H, 3, 0, 1);
    uint32_t ov = sim_overscan_columns(W, &o), wi = W - ov;
    double bias = sim_bias_of(3, &o);
    double *mean = malloc(sizeof(double) * W);
    double top = 0;
    for (uint32_t n = 0; n < W; n++) {
        mean[n] = column_mean(p, W, 0, H, n);
        if (n < wi && mean[n] > top) top = mean[n];
    }
    cr_assert(top > bias + 25000 && top < 65535, "brightest column mean %.0f", top);
    for (uint32_t n = wi; n < W; n++) cr_assert_lt(mean[n], bias + 30, "overscan column %u: %.1f", n, mean[n]);
    const double dips[] = {656.28, 486.13, 430.8};
    for (int i = 0; i < 3; i++) {
        long n = lround(sim_column_of(W, &o, dips[i]));
        double side = 0.5 * (mean[n - 25] + mean[n + 25]) - bias, at = mean[n] - bias;
        cr_assert_lt(at, 0.85 * side, "%.2f nm: %.0f ADU against %.0f beside it", dips[i], at, side);
    }
    free(p);
    /* level scales the light */
    uint16_t *half = frame_of(SIM_KIND_TWILIGHT, W, H, 3, 0, 0.5), *bright = frame_of(SIM_KIND_TWILIGHT, W, H, 3, 0, 1.8);
    long n = lround(sim_column_of(W, &o, 550.0));
    double ratio = (column_mean(half, W, 0, H, n) - bias) / (mean[n] - bias);
    cr_assert(fabs(ratio - 0.5) < 0.03, "level 0.5 gives %.3f of level 1", ratio);
    size_t saturated = 0;
    for (size_t i = 0; i < (size_t)W * H; i++) saturated += bright[i] == 65535;
    cr_assert_gt(saturated, 1000, "level 1.8: %zu saturated pixels", saturated);
    free(mean), free(half), free(bright);
}

/* Centroid of the brightest peak within +-6 columns of near, row m. */
static double peak_column(const uint16_t *p, uint32_t w, uint32_t m, long near)
{
    const uint16_t *row = p + (size_t)m * w;
    long best = near;
    for (long n = near - 6; n <= near + 6; n++)
        if (row[n] > row[best]) best = n;
    double floor_v = row[best - 5] < row[best + 5] ? row[best - 5] : row[best + 5], s = 0, sx = 0;
    for (long n = best - 3; n <= best + 3; n++) {
        double v = row[n] - floor_v;
        if (v > 0) s += v, sx += v * n;
    }
    return sx / s;
}

/* An arc lamp: sharp isolated lines whose column shifts with the row (the
 * slit image is tilted and curved). */
Test(sim_kinds, arc_lines_are_sharp_and_curve_along_the_slit)
{
    uint16_t *p = frame_of(SIM_KIND_ARC, W, H, 2, 0, 1);
    sim_options o;
    sim_options_for_kind(&o, SIM_KIND_ARC);
    uint32_t mid = H / 2, lo = H / 10, hi = 9 * H / 10;
    /* the brightest unsaturated line in the middle row */
    long best = -1;
    for (long n = 20; n < (long)(W - sim_overscan_columns(W, &o)) - 20; n++) {
        uint16_t v = p[(size_t)mid * W + (size_t)n];
        if (v < 60000 && (best < 0 || v > p[(size_t)mid * W + (size_t)best])) best = n;
    }
    double bias = sim_bias_of(2, &o), peak = p[(size_t)mid * W + (size_t)best] - bias;
    cr_assert_gt(peak, 2000);
    /* sharp: 4 columns away the line has fallen below a tenth */
    cr_assert_lt(p[(size_t)mid * W + (size_t)best + 4] - bias, 0.1 * peak);
    cr_assert_lt(p[(size_t)mid * W + (size_t)best - 4] - bias, 0.1 * peak);
    double x_lo = peak_column(p, W, lo, best), x_mid = peak_column(p, W, mid, best),
           x_hi = peak_column(p, W, hi, best);
    cr_assert_gt(fabs(x_hi - x_lo), 1.5, "line at %.2f / %.2f / %.2f: not tilted", x_lo, x_mid, x_hi);
    cr_assert_gt(0.5 * (x_lo + x_hi) - x_mid, 0.8, "line at %.2f / %.2f / %.2f: not curved", x_lo, x_mid, x_hi);
    free(p);
}

/* Echelle: many orders, one above the other, each curved: the profile along
 * a column moves with the column. */
Test(sim_kinds, echelle_orders_are_many_and_curved)
{
    const uint32_t w = 1024, h = 1024;
    uint16_t *p = frame_of(SIM_KIND_ECHELLE, w, h, 1, 0, 1);
    double *a = malloc(sizeof(double) * h), *b = malloc(sizeof(double) * h);
    for (uint32_t m = 0; m < h; m++) {
        a[m] = b[m] = 0;
        for (uint32_t n = 0; n < 5; n++) {
            a[m] += p[(size_t)m * w + w / 2 + n];
            b[m] += p[(size_t)m * w + w / 8 + n];
        }
    }
    /* orders: local maxima of the smoothed middle column well above the mean */
    double mean = 0;
    for (uint32_t m = 0; m < h; m++) mean += a[m] / h;
    int orders = 0;
    for (uint32_t m = 8; m + 8 < h; m++) {
        int top = a[m] > 3 * mean;
        for (int d = -8; d <= 8 && top; d++) top = a[m + d] <= a[m];
        orders += top;
    }
    cr_assert_geq(orders, 15, "%d orders", orders);
    /* the best lag between the two columns' profiles is not zero */
    int best = 0;
    double best_c = -1e300;
    for (int lag = -40; lag <= 40; lag++) {
        double c = 0;
        for (int m = 50; m < (int)h - 50; m++) c += a[m] * b[m + lag];
        if (c > best_c) best_c = c, best = lag;
    }
    cr_assert(abs(best) >= 5, "orders shift %d rows between columns %u and %u", best, w / 8, w / 2);
    free(a), free(b), free(p);
}

/* The ThAr echelle frame: mostly dark, lines in every order, some saturated. */
Test(sim_kinds, echelle_arc_is_sparse_bright_lines)
{
    uint16_t *p = frame_of(SIM_KIND_ECHELLE_ARC, W, 512, 4, 0, 1);
    sim_options o;
    sim_options_for_kind(&o, SIM_KIND_ECHELLE_ARC);
    double bias = sim_bias_of(4, &o);
    size_t bright = 0, saturated = 0, n = (size_t)W * 512;
    for (size_t i = 0; i < n; i++) bright += p[i] > bias + 200, saturated += p[i] == 65535;
    cr_assert(bright > n / 500 && bright < n / 10, "%zu of %zu pixels bright", bright, n);
    cr_assert_gt(saturated, 0);
    free(p);
}

/* ---- the noise model (research/noise_floor.c bounds every coder with it) ---- */

/* For every kind: sim_frame_model gives sim_frame's pixels, and the pixels
 * scatter about the model's mean with the model's variance: the normalised
 * deviation has mean ~0 and variance ~1 over the unclipped pixels, and a
 * model that forgot a term (here: the response's sd) fails that on twilight. */
Test(sim_kinds, noise_model_explains_every_pixel)
{
    const uint32_t w = 256, h = 128;
    const size_t npix = (size_t)w * h;
    uint16_t *a = malloc(sizeof(uint16_t) * npix), *b = malloc(sizeof(uint16_t) * npix);
    double *mean = malloc(sizeof(double) * npix), *elec = malloc(sizeof(double) * npix);
    double *resp = malloc(sizeof(double) * npix);
    cr_assert(a && b && mean && elec && resp);
    for (int k = 0; k < SIM_KIND_COUNT; k++) {
        sim_options o;
        sim_options_for_kind(&o, (sim_kind)k);
        cr_assert_eq(sim_frame(w, h, 5, 2, &o, a), 0);
        sim_noise_model model = {mean, elec, resp};
        cr_assert_eq(sim_frame_model(w, h, 5, 2, &o, b, &model), 0);
        cr_assert(memcmp(a, b, sizeof(uint16_t) * npix) == 0, "%s: model run changed pixels", sim_kind_name(k));
        double s1 = 0, s2 = 0, s2_no_resp = 0;
        size_t used = 0;
        const double g = o.gain_e_per_adu, r = o.read_noise_adu;
        for (size_t i = 0; i < npix; i++) {
            if (mean[i] > 65000 || mean[i] < 50) continue; /* clipped: no scatter */
            double shot = elec[i] / (g * g), d = b[i] - mean[i];
            /* + 1/12: the rounding of the pixel to an integer */
            double var = shot + r * r + resp[i] * resp[i] + 1.0 / 12;
            s1 += d / sqrt(var), s2 += d * d / var, s2_no_resp += d * d / (shot + r * r + 1.0 / 12);
            used++;
        }
        cr_assert_gt(used, npix / 2, "%s", sim_kind_name(k));
        double zmean = s1 / (double)used, zvar = s2 / (double)used;
        cr_assert_lt(fabs(zmean), 0.03, "%s: normalised deviation has mean %g", sim_kind_name(k), zmean);
        cr_assert(fabs(zvar - 1) < 0.05, "%s: normalised deviation has variance %g", sim_kind_name(k), zvar);
        if (k == SIM_KIND_TWILIGHT)
            cr_assert_gt(s2_no_resp / (double)used, 2.0, "twilight: the response's sd should matter");
    }
    sim_options o;
    sim_options_default(&o);
    sim_noise_model partial = {mean, elec, NULL};
    cr_assert_eq(sim_frame_model(w, h, 5, 2, &o, b, &partial), -1, "a model without its response array");
    free(a), free(b), free(mean), free(elec), free(resp);
}

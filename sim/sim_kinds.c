/* The simulator's other kinds of frame: what other instruments and other
 * times of day put on a 16-bit spectrograph detector.
 *
 * Every kind here is  scene (ADU above bias)  ->  detector:
 *   scene x pixel response (fixed per seed, 0.6% rms) + dark + amplifier glow,
 *   Poisson in electrons, Gaussian read noise, then the bias structure:
 *   base level + fixed column pattern (with a few bad columns and an
 *   even/odd offset) + the amplifier's settling gradient along the row +
 *   per-frame row offsets and drift + pickup (a sinusoid in readout order,
 *   hence tilted bands), an overscan strip at the right edge that sees no
 *   light, hot pixels and cosmic rays; clipped to 0..65535.
 *
 * Scenes are drawn in column coordinates on an oversampled grid and read
 * back with a per-row shift: that is how tilted and curved lines (the
 * spectrograph's slit image) arise.  Line lists of lamps and of the sun are
 * fixed (the same for every seed); what a seed changes is the instrument
 * (bias, columns, pixel response, slit dust, lamp intensities) and the frame
 * index changes the noise, banding, cosmic rays and the aurora.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "sim_internal.h"
#include "sim_rng.h"

static const char *const KIND_NAMES[SIM_KIND_COUNT] = {
    "aurora", "dark", "bias", "twilight", "arc", "echelle", "echelle-arc"};

const char *sim_kind_name(sim_kind kind)
{
    return (int)kind >= 0 && kind < SIM_KIND_COUNT ? KIND_NAMES[kind] : "unknown";
}

int sim_kind_from_name(const char *name)
{
    for (int k = 0; k < SIM_KIND_COUNT; k++)
        if (!strcmp(name, KIND_NAMES[k])) return k;
    return -1;
}

void sim_options_for_kind(sim_options *o, sim_kind kind)
{
    sim_options_default(o);
    o->kind = kind;
    switch (kind) {
    case SIM_KIND_AURORA:
    case SIM_KIND_COUNT: break;
    case SIM_KIND_DARK: /* the station's camera on a quiet night */
        o->read_noise_adu = 4.5, o->gain_e_per_adu = 2.0, o->dark_adu = 1.5;
        o->continuum_adu = 1.0;
        break;
    case SIM_KIND_BIAS:
        o->read_noise_adu = 3.8, o->gain_e_per_adu = 1.5, o->dark_adu = 0;
        o->continuum_adu = 0, o->line_scale = 0, o->cosmic_rays = 1, o->exposure_s = 0;
        break;
    case SIM_KIND_TWILIGHT: /* continuum_adu: the solar continuum's peak */
        o->read_noise_adu = 4.0, o->gain_e_per_adu = 2.5, o->dark_adu = 0.2;
        o->continuum_adu = 50000, o->cosmic_rays = 1, o->exposure_s = 0.5;
        break;
    case SIM_KIND_ARC: /* line_scale x 60000 ADU: the brightest line's peak */
        o->read_noise_adu = 3.5, o->gain_e_per_adu = 1.2, o->dark_adu = 0.5;
        o->continuum_adu = 0.5, o->cosmic_rays = 2, o->exposure_s = 10;
        break;
    case SIM_KIND_ECHELLE: /* continuum_adu: the star at the blaze peak */
        o->read_noise_adu = 3.0, o->gain_e_per_adu = 1.1, o->dark_adu = 3.0;
        o->continuum_adu = 5000, o->cosmic_rays = 150, o->exposure_s = 900;
        break;
    case SIM_KIND_ECHELLE_ARC:
        o->read_noise_adu = 3.0, o->gain_e_per_adu = 1.1, o->dark_adu = 0.1;
        o->continuum_adu = 0, o->cosmic_rays = 2, o->exposure_s = 20;
        break;
    }
}

uint32_t sim_overscan_columns(uint32_t width, const sim_options *o)
{
    return o->kind == SIM_KIND_AURORA || width < 128 ? 0 : width / 32;
}

/* ---- spectra on an oversampled column grid ---- */

#define OVERSAMPLE 4
#define PAD 48 /* columns beyond both edges: lines shifted in from outside */

typedef struct {
    double *v; /* v[j] at column x = j / OVERSAMPLE - PAD */
    long n;
} fine_spectrum;

static int fine_alloc(fine_spectrum *s, uint32_t width)
{
    s->n = ((long)width + 2 * PAD) * OVERSAMPLE + 1;
    s->v = calloc((size_t)s->n, sizeof *s->v);
    return s->v ? 0 : -1;
}

static void fine_fill(fine_spectrum *s, double value)
{
    for (long j = 0; j < s->n; j++) s->v[j] = value;
}

static double fine_x(long j) { return (double)j / OVERSAMPLE - PAD; }

/* Linear interpolation; constant beyond the grid. */
static double fine_at(const fine_spectrum *s, double x)
{
    double j = (x + PAD) * OVERSAMPLE;
    if (!(j > 0)) return s->v[0];
    if (j >= (double)(s->n - 1)) return s->v[s->n - 1];
    long i = (long)j;
    double f = j - (double)i;
    return s->v[i] * (1 - f) + s->v[i + 1] * f;
}

/* The grid indices within 6 sigma of x0. */
static void fine_span(const fine_spectrum *s, double x0, double sigma, long *lo, long *hi)
{
    double a = (x0 - 6 * sigma + PAD) * OVERSAMPLE, b = (x0 + 6 * sigma + PAD) * OVERSAMPLE;
    *lo = a < 0 ? 0 : (long)ceil(a);
    *hi = b > (double)(s->n - 1) ? s->n - 1 : (long)floor(b);
}

static void fine_add_gauss(fine_spectrum *s, double x0, double sigma, double peak)
{
    long lo, hi;
    fine_span(s, x0, sigma, &lo, &hi);
    for (long j = lo; j <= hi; j++) {
        double d = (fine_x(j) - x0) / sigma;
        s->v[j] += peak * exp(-0.5 * d * d);
    }
}

/* Multiplies by an absorption line of the given depth (0..1). */
static void fine_absorb(fine_spectrum *s, double x0, double sigma, double depth)
{
    long lo, hi;
    fine_span(s, x0, sigma, &lo, &hi);
    for (long j = lo; j <= hi; j++) {
        double d = (fine_x(j) - x0) / sigma;
        s->v[j] *= 1.0 - depth * exp(-0.5 * d * d);
    }
}

/* An absorption line of equivalent width ew_nm and intrinsic width w_nm seen
 * at instrumental resolution sigma_inst_nm: the depth that keeps the area. */
static double absorption_depth(double ew_nm, double w_nm, double sigma_inst_nm, double *sigma_nm)
{
    *sigma_nm = sqrt(w_nm * w_nm + sigma_inst_nm * sigma_inst_nm);
    double depth = ew_nm / (sqrt(2 * PI) * *sigma_nm);
    return depth > 0.95 ? 0.95 : depth;
}

/* ---- fixed line lists ---- */

/* A forest of lines with exponential gaps (per_nm lines per nm on average):
 * fixed by salt, so every seed sees the same sun and the same lamp. */
typedef struct {
    sim_rng r;
    double nm, hi, per_nm;
} line_forest;

static void forest_start(line_forest *f, uint64_t salt, double lo, double hi, double per_nm)
{
    sim_rng_seed(&f->r, salt, STREAM_LAMP);
    f->nm = lo, f->hi = hi, f->per_nm = per_nm;
}

/* The next line's wavelength and a uniform strength draw; 0 at the end. */
static int forest_next(line_forest *f, double *nm, double *u)
{
    f->nm += -log(1.0 - sim_uniform(&f->r)) / f->per_nm;
    *u = sim_uniform(&f->r);
    *nm = f->nm;
    return f->nm < f->hi;
}

#define SUN_FOREST 0x50CA5u  /* weak photospheric lines */
#define THAR_FOREST 0x7A4u   /* thorium-argon lamp */
#define OH_FOREST 0x0B1u     /* night-sky OH lines */
#define ARC_LAMP 0xA2Cu      /* relative intensities of the long-slit lamp */

typedef struct {
    double nm, ew_nm, w_nm;
} absorption_line;

/* Strong solar (and telluric O2, H2O) absorption, equivalent widths in nm. */
static const absorption_line FRAUNHOFER[] = {
    {410.17, 0.31, 0.10}, {422.67, 0.15, 0.05}, {430.80, 0.60, 0.40}, {434.05, 0.29, 0.10},
    {438.35, 0.10, 0.03}, {440.48, 0.09, 0.03}, {486.13, 0.37, 0.10}, {516.73, 0.07, 0.04},
    {517.27, 0.13, 0.04}, {518.36, 0.16, 0.04}, {527.04, 0.09, 0.03}, {532.80, 0.06, 0.03},
    {588.995, 0.075, 0.02}, {589.592, 0.056, 0.02}, {628.00, 0.30, 0.60}, {651.00, 0.10, 0.50},
    {656.28, 0.40, 0.10}, {687.00, 0.90, 0.80},
};
#define NFRAUNHOFER (sizeof FRAUNHOFER / sizeof FRAUNHOFER[0])

/* Hg, Ne and Ar lines of a long-slit comparison lamp (nm). */
static const double ARC_LINES[] = {
    404.66, 407.78, 415.86, 419.83, 420.07, 425.94, 426.63, 427.22, 430.01, 433.36, 434.52,
    435.83, 451.07, 452.23, 459.61, 462.84, 470.23, 476.49, 480.60, 487.99, 501.72, 516.23,
    540.06, 546.07, 549.59, 555.87, 560.67, 565.07, 576.96, 579.07, 585.25, 588.19, 594.48,
    597.55, 603.00, 607.43, 609.62, 614.31, 616.36, 621.73, 626.65, 630.48, 633.44, 638.30,
    640.22, 650.65, 653.29, 659.90, 667.83, 671.70, 692.95,
};
#define NARC_LINES (sizeof ARC_LINES / sizeof ARC_LINES[0])

/* Smooth spectrum of a black body at temp_k (relative, 1 at 560 nm). */
static double planck_rel(double nm, double temp_k)
{
    const double c2 = 1.438777e7; /* nm K */
    return pow(560.0 / nm, 5) * (exp(c2 / (560.0 * temp_k)) - 1) / (exp(c2 / (nm * temp_k)) - 1);
}

/* The station spectrograph's throughput, as in the aurora kind. */
static double throughput(double nm)
{
    double dl = (nm - 560.0) / 140.0;
    return 0.55 + 0.45 * exp(-0.5 * dl * dl);
}

/* ---- slit illumination ---- */

/* Dust on the slit: a few narrow dips along the slit, fixed per seed, the
 * same at every wavelength.  y in 0..1, rows of the frame = height. */
typedef struct {
    int n;
    double y[4], width[4], depth[4];
} slit_dust;

static void dust_of_seed(uint64_t seed, uint32_t height, slit_dust *d)
{
    sim_rng r;
    sim_rng_seed(&r, seed, STREAM_SCENE);
    d->n = 1 + (int)sim_below(&r, 4);
    for (int i = 0; i < d->n; i++) {
        d->y[i] = sim_uniform(&r);
        double rows = (0.7 + 1.5 * sim_uniform(&r)) * (0.3 + height / 1024.0);
        d->width[i] = rows / (height > 1 ? height : 1);
        d->depth[i] = 0.03 + 0.17 * sim_uniform(&r);
    }
}

static double dust_transmission(const slit_dust *d, double y)
{
    double t = 1.0;
    for (int i = 0; i < d->n; i++) {
        double z = (y - d->y[i]) / d->width[i];
        t *= 1.0 - d->depth[i] * exp(-0.5 * z * z);
    }
    return t;
}

/* A top-hat of length len with soft edges (the slit image). */
static double top_hat(double u, double len, double soft)
{
    return 0.5 * (erf((u + 0.5 * len) / soft) - erf((u - 0.5 * len) / soft));
}

/* ---- scenes: ADU above bias at level 1 x o->level, columns 0..wi-1 ---- */

static double nm_per_col(uint32_t width, const sim_options *o)
{
    return (o->lambda_max_nm - o->lambda_min_nm) / (width > 1 ? width - 1 : 1);
}

/* A quiet auroral night: faint green, red and N2+ 427.8 nm (a band head
 * shaded to the violet), all following the same arcs as the aurora kind. */
static int scene_dark(uint32_t w, uint32_t h, uint32_t wi, uint64_t seed, uint64_t index,
                      const sim_options *o, double *img)
{
    enum { GREEN, RED, N2P, N2P_470, NA, NPROF };
    double *prof = malloc(sizeof(double) * NPROF * w);
    if (!prof) return -1;
    const double dnm = nm_per_col(w, o);
    for (uint32_t n = 0; n < w; n++) {
        double lam = o->lambda_min_nm + n * dnm;
        double g = (lam - 557.7) / 0.5, r = (lam - 630.0) / 0.5, na = (lam - 589.3) / 0.6;
        prof[GREEN * w + n] = exp(-0.5 * g * g);
        prof[RED * w + n] = exp(-0.5 * r * r);
        prof[NA * w + n] = exp(-0.5 * na * na);
        /* band head at 427.8 and 470.9 nm: a sharp red edge and a tail of
         * rotational lines to the blue */
        double heads[2] = {427.8, 470.9};
        for (int b = 0; b < 2; b++) {
            double d = lam - heads[b], edge = exp(-0.5 * (d / 0.5) * (d / 0.5));
            double tail = d < 0 ? 0.6 * exp(d / 1.8) * (1 - exp(d / 0.4)) : 0;
            prof[(b ? N2P_470 : N2P) * w + n] = edge + tail;
        }
    }
    sim_arcs a;
    sim_arcs_of_seed(seed, &a);
    const double t = (double)index, s = o->line_scale * o->level;
    for (uint32_t m = 0; m < h; m++) {
        double y = (m + 0.5) / h;
        double arc = sim_arc_activity(&a, y, t, 0), wide = sim_arc_activity(&a, y, t, 1);
        double gain[NPROF] = {s * (40 * arc + 8), s * (15 * wide + 5), s * 9 * arc,
                              s * 3 * arc, s * 2};
        double vignette = 1.0 - 0.25 * (2 * y - 1) * (2 * y - 1);
        double *row = img + (size_t)m * w;
        for (uint32_t n = 0; n < wi; n++) {
            double lam = o->lambda_min_nm + n * dnm;
            double v = o->continuum_adu * o->level * throughput(lam) * vignette;
            for (int p = 0; p < NPROF; p++) v += gain[p] * prof[p * w + n];
            row[n] = v;
        }
    }
    free(prof);
    return 0;
}

/* Scattered sunlight: the solar spectrum (black body x Rayleigh x the
 * instrument, Fraunhofer and telluric absorption) slightly curved along the
 * slit (the spectrograph's smile), brighter toward one end of the slit. */
static int scene_twilight(uint32_t w, uint32_t h, uint32_t wi, uint64_t seed,
                          const sim_options *o, double *img)
{
    fine_spectrum s;
    if (fine_alloc(&s, w)) return -1;
    const double dnm = nm_per_col(w, o), sigma_inst = 0.35;
    double peak = 0;
    for (long j = 0; j < s.n; j++) {
        double lam = o->lambda_min_nm + fine_x(j) * dnm;
        s.v[j] = planck_rel(lam, 5778) * pow(560.0 / lam, 4) * throughput(lam);
        if (fine_x(j) >= 0 && fine_x(j) <= wi && s.v[j] > peak) peak = s.v[j];
    }
    for (long j = 0; j < s.n; j++) s.v[j] *= o->continuum_adu * o->level / (peak > 0 ? peak : 1);
    double sig;
    for (size_t i = 0; i < NFRAUNHOFER; i++) {
        double depth = absorption_depth(FRAUNHOFER[i].ew_nm, FRAUNHOFER[i].w_nm, sigma_inst, &sig);
        fine_absorb(&s, (FRAUNHOFER[i].nm - o->lambda_min_nm) / dnm, sig / dnm, depth);
    }
    line_forest f;
    double nm, u;
    forest_start(&f, SUN_FOREST, o->lambda_min_nm - PAD * dnm, o->lambda_max_nm + PAD * dnm, 8.0);
    while (forest_next(&f, &nm, &u)) {
        double depth = absorption_depth(0.0005 + 0.012 * u * u * u, 0.01, sigma_inst, &sig);
        fine_absorb(&s, (nm - o->lambda_min_nm) / dnm, sig / dnm, depth);
    }
    slit_dust dust;
    dust_of_seed(seed, h, &dust);
    const double smile = 1.5 * w / 1024.0;
    for (uint32_t m = 0; m < h; m++) {
        double y = (m + 0.5) / h, c = 2 * y - 1;
        double along = (0.7 + 0.3 * y) * (1.0 - 0.2 * c * c) * dust_transmission(&dust, y);
        double shift = smile * c * c;
        double *row = img + (size_t)m * w;
        for (uint32_t n = 0; n < wi; n++) row[n] = along * fine_at(&s, n - shift);
    }
    free(s.v);
    return 0;
}

/* A long-slit comparison lamp: sharp isolated lines (Hg, Ne, Ar) across the
 * slit, tilted and curved, from faint to saturated; the slit ends dark. */
static int scene_arc(uint32_t w, uint32_t h, uint32_t wi, uint64_t seed, const sim_options *o,
                     double *img)
{
    fine_spectrum s;
    if (fine_alloc(&s, w)) return -1;
    fine_fill(&s, o->continuum_adu * o->level);
    const double dnm = nm_per_col(w, o);
    sim_rng lamp, warm;
    sim_rng_seed(&lamp, ARC_LAMP, STREAM_LAMP);   /* fixed relative intensities */
    sim_rng_seed(&warm, seed, STREAM_SCENE + 16);         /* this lamp, this night */
    for (size_t i = 0; i < NARC_LINES; i++) {
        double rel = pow(10.0, -2.7 * sim_uniform(&lamp)) * (0.7 + 0.6 * sim_uniform(&warm));
        fine_add_gauss(&s, (ARC_LINES[i] - o->lambda_min_nm) / dnm, 0.9,
                       60000.0 * o->line_scale * o->level * rel);
    }
    slit_dust dust;
    dust_of_seed(seed, h, &dust);
    const double scale = w / 1024.0, soft = 1.5 / (h > 1 ? h : 1);
    for (uint32_t m = 0; m < h; m++) {
        double y = (m + 0.5) / h, c = 2 * y - 1;
        double along = top_hat(y - 0.5, 0.94, soft) * (1.0 - 0.15 * c * c) * dust_transmission(&dust, y);
        double shift = scale * (1.5 * c + 3.0 * c * c);
        double *row = img + (size_t)m * w;
        for (uint32_t n = 0; n < wi; n++) row[n] = along * fine_at(&s, n - shift);
    }
    free(s.v);
    return 0;
}

/* A cross-dispersed echelle: orders one above another, each a curved band
 * across the frame (the trace), the slit image tilted within it; the blaze
 * falls toward both ends of every order.  A star (a narrow profile across
 * the order, the solar forest at high resolution) under night-sky lines that
 * fill the slit, or the ThAr lamp filling the slit. */
static int scene_echelle(uint32_t w, uint32_t h, uint32_t wi, uint64_t seed, const sim_options *o,
                         int lamp, double *img)
{
    fine_spectrum star, sky;
    if (fine_alloc(&star, w)) return -1;
    if (fine_alloc(&sky, w)) {
        free(star.v);
        return -1;
    }
    sim_rng r;
    sim_rng_seed(&r, seed, STREAM_SCENE + 32);
    const double flexure = 2.0 * (sim_uniform(&r) - 0.5); /* rows, per seed */
    const double half = 0.5 * (wi > 1 ? wi : 1);
    const double light = o->level;
    double scatter = lamp ? 2.0 * light * o->line_scale : 0.004 * o->continuum_adu * light;
    for (size_t i = 0; i < (size_t)w * h; i++) img[i] = 0;
    int k = 0;
    for (double f = -0.03; f < 1.03; k++) {
        const double spacing = 0.058 - 0.022 * f;
        const double y0 = f * h + flexure;
        const double order = 118 - k, lam_c = 60000.0 / order;
        const double dlam = 1.2 * lam_c / order / (wi > 1 ? wi : 1); /* nm per column */
        const double slit = 0.3 * spacing * h, seeing = 1.6 * h / 1024.0 + 0.3;
        const double tilt = 0.12 + 0.10 * f, bend = 0.004;
        const double sigma_cols = 1.3, blaze_x = half * (1.0 + 0.1 * (f - 0.5));
        /* the order's spectrum in its own column coordinate */
        fine_fill(&sky, 0);
        double sig;
        if (lamp) {
            fine_fill(&star, 0);
            line_forest lf;
            double nm, u;
            forest_start(&lf, THAR_FOREST, 300, 800, 8.0);
            while (forest_next(&lf, &nm, &u)) {
                double x = half + (nm - lam_c) / dlam;
                if (x < -PAD || x > wi + PAD) continue;
                double peak = 120.0 * pow(1.0 - u, -1.5);
                fine_add_gauss(&star, x, sigma_cols, o->line_scale * light * (peak < 250000 ? peak : 250000));
            }
        } else {
            for (long j = 0; j < star.n; j++) {
                double lam = lam_c + (fine_x(j) - half) * dlam;
                star.v[j] = o->continuum_adu * light * planck_rel(lam, 5200) / planck_rel(560, 5200);
            }
            const double sigma_inst = sigma_cols * dlam;
            for (size_t i = 0; i < NFRAUNHOFER; i++) {
                double depth = absorption_depth(FRAUNHOFER[i].ew_nm, FRAUNHOFER[i].w_nm, sigma_inst, &sig);
                fine_absorb(&star, half + (FRAUNHOFER[i].nm - lam_c) / dlam, sig / dlam, depth);
            }
            line_forest lf;
            double nm, u;
            forest_start(&lf, SUN_FOREST, lam_c - 0.7 * lam_c / order, lam_c + 0.7 * lam_c / order, 15.0);
            while (forest_next(&lf, &nm, &u)) {
                double depth = absorption_depth(0.0005 + 0.02 * u * u * u, 0.004, sigma_inst, &sig);
                fine_absorb(&star, half + (nm - lam_c) / dlam, sig / dlam, depth);
            }
            const double night[] = {557.734, 588.995, 589.592, 630.030, 636.378};
            const double night_adu[] = {60, 25, 20, 30, 10};
            for (int i = 0; i < 5; i++)
                fine_add_gauss(&sky, half + (night[i] - lam_c) / dlam, sigma_cols,
                               o->line_scale * light * night_adu[i]);
            forest_start(&lf, OH_FOREST, 540, 720, 0.4);
            while (forest_next(&lf, &nm, &u))
                fine_add_gauss(&sky, half + (nm - lam_c) / dlam, sigma_cols, o->line_scale * light * (3 + 40 * u * u));
            for (long j = 0; j < sky.n; j++) sky.v[j] += 0.002 * star.v[j]; /* scattered moonlight */
        }
        /* draw the order: rows within reach of its trace, column by column */
        const double reach = 0.5 * slit + 4 * seeing + 3;
        for (uint32_t n = 0; n < wi; n++) {
            double xn = (n - half) / half;
            double yc = y0 + h * (0.015 * xn + 0.03 * (1 + 0.5 * f) * xn * xn);
            long m0 = (long)ceil(yc - reach), m1 = (long)floor(yc + reach);
            if (m0 < 0) m0 = 0;
            if (m1 > (long)h - 1) m1 = (long)h - 1;
            for (long m = m0; m <= m1; m++) {
                double u = m - yc, x = n - tilt * u - bend * u * u;
                double b = (x - blaze_x) / half * 0.9 * PI;
                double blaze = fabs(b) < 1e-9 ? 1.0 : (sin(b) / b) * (sin(b) / b);
                double across = top_hat(u, slit, 0.8);
                double v = lamp ? fine_at(&star, x) * across
                                : fine_at(&star, x) * exp(-0.5 * (u / seeing) * (u / seeing)) +
                                      fine_at(&sky, x) * across;
                img[(size_t)m * w + n] += blaze * v;
            }
        }
        f += spacing;
    }
    /* light scattered inside the spectrograph: smooth under every order */
    for (uint32_t m = 0; m < h; m++) {
        double y = (m + 0.5) / h - 0.5;
        for (uint32_t n = 0; n < wi; n++) {
            double xn = (n - half) / half;
            img[(size_t)m * w + n] += scatter * (1.0 - 0.3 * xn * xn) * (1.0 - 0.8 * y * y);
        }
    }
    free(star.v), free(sky.v);
    return 0;
}

/* ---- the detector ---- */

static void detect(uint32_t w, uint32_t h, uint32_t wi, uint64_t seed, uint64_t index,
                   const sim_options *o, double *img, double *col, double *rowoff, uint16_t *out,
                   const sim_noise_model *model)
{
    /* light: pixel response, dark current and the amplifier's glow (its
     * corner at row 0, column 0 grows with the exposure) */
    sim_rng pr;
    sim_rng_seed(&pr, seed, STREAM_PRNU);
    const double glow = fmin(60.0, 0.05 * o->exposure_s), glow_len = 0.08 * (w > h ? w : h) + 1;
    for (uint32_t m = 0; m < h; m++) {
        double *row = img + (size_t)m * w;
        for (uint32_t n = 0; n < w; n++) {
            double response = 1.0 + SIM_PRNU_SD * sim_gauss(&pr); /* drawn for every pixel: fixed per seed */
            if (n >= wi) {
                row[n] = 0;
                continue;
            }
            if (model) {
                size_t i = (size_t)m * w + n;
                model->mean_adu[i] = row[n] * (response - 1.0);
                model->response_sd[i] = SIM_PRNU_SD * row[n];
            }
            double r = sqrt((double)m * m + (double)n * n);
            row[n] = row[n] * response + o->dark_adu + glow * exp(-r / glow_len);
        }
    }
    /* the bias's fixed column pattern: per column, even/odd, bad columns */
    sim_rng cr;
    sim_rng_seed(&cr, seed, STREAM_COLUMNS);
    for (uint32_t n = 0; n < w; n++)
        col[n] = n < wi ? 1.2 * sim_gauss(&cr) + (n & 1 ? 0.4 : -0.4) : 0.3 * sim_gauss(&cr);
    uint32_t bad = wi / 256;
    for (uint32_t i = 0; i < bad; i++) {
        uint32_t n = (uint32_t)sim_below(&cr, wi);
        double u = sim_uniform(&cr);
        col[n] += 8 + 50 * u * u;
    }
    /* the amplifier settles along each row; a slope across it */
    for (uint32_t n = 0; n < w; n++) col[n] += 12.0 * exp(-(double)n / 25.0) + 2.0 * n / w;
    /* this frame's rows: an offset each, drift during the readout, pickup */
    sim_rng br;
    sim_rng_seed(&br, seed ^ (index * 0xA0761D6478BD642Full), STREAM_BANDING);
    const double pickup_period = 61.7 + 20.0 * sim_uniform(&br), pickup_phase = 2 * PI * sim_uniform(&br);
    for (uint32_t m = 0; m < h; m++) rowoff[m] = 1.0 * sim_gauss(&br) + 2.5 * m / h;

    const double bias = sim_bias_of(seed, o), g = o->gain_e_per_adu;
    sim_rng nr;
    sim_rng_seed(&nr, seed ^ (index * 0xD6E8FEB86659FD93ull), STREAM_NOISE);
    for (uint32_t m = 0; m < h; m++) {
        double *row = img + (size_t)m * w;
        double readout = (double)m * w;
        for (uint32_t n = 0; n < w; n++) {
            double lambda = row[n] * g, electrons = sim_poisson(&nr, lambda);
            double pickup = 1.2 * sin(2 * PI * (readout + n) / pickup_period + pickup_phase);
            double read = o->read_noise_adu * sim_gauss(&nr);
            sim_model_note(model, (size_t)m * w + n, lambda, (electrons - lambda) / g + read);
            row[n] = bias + col[n] + rowoff[m] + pickup + electrons / g + read;
        }
    }
    /* hot pixels collect dark current: weaker in short exposures */
    double hot_scale = o->exposure_s / 13.0;
    sim_add_hot_pixels(w, h, seed, o, hot_scale < 0.02 ? 0.02 : hot_scale > 1 ? 1 : hot_scale, img);
    sim_add_cosmic_rays(w, h, seed, index, o, img);
    sim_model_finish(model, img, (size_t)w * h);
    for (size_t i = 0; i < (size_t)w * h; i++) out[i] = sim_clip_adu(img[i]);
}

int sim_frame_of_kind(uint32_t width, uint32_t height, uint64_t seed, uint64_t frame_index,
                      const sim_options *o, uint16_t *out, const sim_noise_model *model)
{
    if ((int)o->kind <= SIM_KIND_AURORA || o->kind >= SIM_KIND_COUNT) return -1;
    const uint32_t w = width, h = height, wi = w - sim_overscan_columns(w, o);
    double *img = calloc((size_t)w * h, sizeof *img);
    double *col = malloc(sizeof(double) * w), *rowoff = malloc(sizeof(double) * h);
    int rc = img && col && rowoff ? 0 : -1;
    if (rc == 0) {
        switch (o->kind) {
        case SIM_KIND_DARK: rc = scene_dark(w, h, wi, seed, frame_index, o, img); break;
        case SIM_KIND_TWILIGHT: rc = scene_twilight(w, h, wi, seed, o, img); break;
        case SIM_KIND_ARC: rc = scene_arc(w, h, wi, seed, o, img); break;
        case SIM_KIND_ECHELLE: rc = scene_echelle(w, h, wi, seed, o, 0, img); break;
        case SIM_KIND_ECHELLE_ARC: rc = scene_echelle(w, h, wi, seed, o, 1, img); break;
        default: break; /* BIAS: no light */
        }
    }
    if (rc == 0) detect(w, h, wi, seed, frame_index, o, img, col, rowoff, out, model);
    free(img), free(col), free(rowoff);
    return rc;
}

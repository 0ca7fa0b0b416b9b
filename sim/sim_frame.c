/* sim_frame: one simulated aurora spectrograph frame (the default kind; the
 * other kinds are drawn in sim_kinds.c).
 *
 * Signal model, in ADU above bias, for row m (position y along the slit) and
 * column n (wavelength l):
 *   S = sum over lines of  I_line(y, t) * G(l; line, instrument width)
 *     + continuum(l) * vignetting(y) + dark
 * I_line(y, t) follows drifting aurora arcs (green, N2+, red with a wider
 * spatial spread), diffuse proton aurora (H-beta, H-alpha) and uniform
 * airglow (Na D, a floor under every line).  The detector adds a per-seed
 * bias with a faint column pattern, Poisson shot noise (in electrons),
 * Gaussian read noise, fixed hot pixels, cosmic-ray streaks and clips at
 * 65535.
 */
#include "sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"
#include "sim_rng.h"

typedef enum { SPATIAL_ARCS, SPATIAL_WIDE_ARCS, SPATIAL_DIFFUSE, SPATIAL_UNIFORM } spatial_kind;

typedef struct {
    const char *name;
    double nm;
    double sigma_nm;   /* intrinsic + instrument width */
    spatial_kind kind;
    double peak_adu;   /* at unit activity */
    double airglow_adu;
} line_model;

static const line_model LINES[] = {
    {"N2+ 427.8", 427.8, 0.5, SPATIAL_ARCS, 700, 5},
    {"N2+ 470.9", 470.9, 0.5, SPATIAL_ARCS, 220, 2},
    {"H-beta 486.1", 486.1, 0.7, SPATIAL_DIFFUSE, 150, 0},
    {"[NI] 520.0", 520.0, 0.5, SPATIAL_ARCS, 60, 3},
    {"[OI] 557.7", 557.7, 0.5, SPATIAL_ARCS, 3000, 120},
    {"Na D 589.0", 589.0, 0.5, SPATIAL_UNIFORM, 0, 45},
    {"Na D 589.6", 589.6, 0.5, SPATIAL_UNIFORM, 0, 30},
    {"[OI] 630.0", 630.0, 0.5, SPATIAL_WIDE_ARCS, 700, 60},
    {"[OI] 636.4", 636.4, 0.5, SPATIAL_WIDE_ARCS, 233, 20},
    {"H-alpha 656.3", 656.3, 0.7, SPATIAL_DIFFUSE, 250, 0},
    {"N2 1PG 670", 670.0, 2.0, SPATIAL_ARCS, 150, 0},
};
#define NLINES (sizeof LINES / sizeof LINES[0])

static sim_line PUBLIC_LINES[NLINES];

int sim_lines(const sim_line **lines)
{
    for (size_t i = 0; i < NLINES; i++) {
        PUBLIC_LINES[i].name = LINES[i].name;
        PUBLIC_LINES[i].nm = LINES[i].nm;
    }
    *lines = PUBLIC_LINES;
    return (int)NLINES;
}

void sim_options_default(sim_options *o)
{
    memset(o, 0, sizeof *o);
    o->lambda_min_nm = 400.0;
    o->lambda_max_nm = 700.0;
    o->bias_adu = 0; /* from the seed */
    o->read_noise_adu = 5.0;
    o->gain_e_per_adu = 2.0;
    o->dark_adu = 8.0;
    o->line_scale = 1.0;
    o->continuum_adu = 60.0;
    o->hot_pixel_fraction = 5e-5;
    o->cosmic_rays = 4;
    o->exposure_s = 13.0;
    o->kind = SIM_KIND_AURORA;
    o->level = 1.0;
}

static double nm_per_column(uint32_t width, const sim_options *o)
{
    return (o->lambda_max_nm - o->lambda_min_nm) / (width > 1 ? width - 1 : 1);
}

double sim_column_of(uint32_t width, const sim_options *o, double lambda_nm)
{
    return (lambda_nm - o->lambda_min_nm) / nm_per_column(width, o);
}

double sim_bias_of(uint64_t seed, const sim_options *o)
{
    if (o->bias_adu > 0) return o->bias_adu;
    sim_rng r;
    sim_rng_seed(&r, seed, STREAM_BIAS);
    return 500.0 + floor(500.0 * sim_uniform(&r));
}

/* Aurora arcs: drawn per seed, drifting and brightening frame by frame. */
void sim_arcs_of_seed(uint64_t seed, sim_arcs *a)
{
    sim_rng r;
    sim_rng_seed(&r, seed, STREAM_ARCS);
    a->n = 2 + (int)sim_below(&r, MAX_ARCS - 1);
    for (int k = 0; k < a->n; k++) {
        a->y0[k] = 0.15 + 0.7 * sim_uniform(&r);
        a->speed[k] = (sim_uniform(&r) - 0.5) * 0.004; /* slit heights per frame */
        a->width[k] = 0.01 + 0.05 * sim_uniform(&r);
        a->bright[k] = 0.3 + 0.7 * sim_uniform(&r);
        a->wobble_period[k] = 20 + 60 * sim_uniform(&r);
        a->wobble_phase[k] = 2 * PI * sim_uniform(&r);
        a->pulse_period[k] = 8 + 40 * sim_uniform(&r);
        a->pulse_phase[k] = 2 * PI * sim_uniform(&r);
    }
    a->activity_phase = 2 * PI * sim_uniform(&r);
}

/* Reflects a position into [0, 1] (arcs bounce between the slit ends). */
static double reflect01(double y)
{
    y = fmod(y, 2.0);
    if (y < 0) y += 2.0;
    return y > 1.0 ? 2.0 - y : y;
}

/* Activity along the slit at frame t; wide = the red line's larger spread. */
double sim_arc_activity(const sim_arcs *a, double y, double t, int wide)
{
    double overall = 0.35 + 0.65 * pow(0.5 + 0.5 * sin(2 * PI * t / 240.0 + a->activity_phase), 2);
    double sum = 0;
    for (int k = 0; k < a->n; k++) {
        double c = reflect01(a->y0[k] + a->speed[k] * t +
                             0.03 * sin(2 * PI * t / a->wobble_period[k] + a->wobble_phase[k]));
        double w = a->width[k] * (wide ? 3.0 : 1.0);
        double b = a->bright[k] * (0.6 + 0.4 * sin(2 * PI * t / a->pulse_period[k] + a->pulse_phase[k]));
        double d = (y - c) / w;
        sum += b * exp(-0.5 * d * d) * (wide ? 0.6 : 1.0);
    }
    return overall * sum;
}

double sim_diffuse_activity(const sim_arcs *a, double y, double t)
{
    double c = 0.5 + 0.25 * sin(2 * PI * t / 600.0 + a->activity_phase);
    double d = (y - c) / 0.35;
    return 0.5 * exp(-0.5 * d * d) * (0.7 + 0.3 * cos(2 * PI * t / 300.0));
}

uint16_t sim_clip_adu(double v)
{
    if (!(v > 0)) return 0;
    if (v >= 65535.0) return 65535;
    return (uint16_t)floor(v + 0.5);
}

void sim_add_hot_pixels(uint32_t w, uint32_t h, uint64_t seed, const sim_options *o, double scale,
                        double *img)
{
    sim_rng r;
    sim_rng_seed(&r, seed, STREAM_HOT);
    uint64_t npix = (uint64_t)w * h;
    uint64_t count = (uint64_t)floor(o->hot_pixel_fraction * (double)npix + 0.5);
    for (uint64_t i = 0; i < count; i++) {
        uint64_t at = sim_below(&r, npix);
        /* log-uniform from warm (300 ADU) to beyond saturation */
        img[at] += scale * exp(log(300.0) + (log(80000.0) - log(300.0)) * sim_uniform(&r));
    }
}

void sim_add_cosmic_rays(uint32_t w, uint32_t h, uint64_t seed, uint64_t index,
                          const sim_options *o, double *img)
{
    if (o->cosmic_rays <= 0) return;
    sim_rng r;
    sim_rng_seed(&r, seed ^ (index * 0x9E3779B97F4A7C15ull), STREAM_COSMIC);
    int count = (int)sim_poisson(&r, o->cosmic_rays);
    for (int c = 0; c < count; c++) {
        double x = sim_uniform(&r) * w, y = sim_uniform(&r) * h;
        double angle = 2 * PI * sim_uniform(&r);
        int len = 1 + (int)sim_below(&r, 8);
        double energy = 2000.0 + 50000.0 * sim_uniform(&r);
        for (int s = 0; s < len; s++) {
            long px = (long)floor(x + s * cos(angle)), py = (long)floor(y + s * sin(angle));
            if (px < 0 || py < 0 || px >= (long)w || py >= (long)h) break;
            img[(size_t)py * w + (size_t)px] += energy * (0.6 + 0.4 * sim_uniform(&r));
        }
    }
}

void sim_model_finish(const sim_noise_model *m, const double *img, size_t npix)
{
    if (!m) return;
    for (size_t i = 0; i < npix; i++) m->mean_adu[i] = img[i] - m->mean_adu[i];
}

int sim_frame(uint32_t width, uint32_t height, uint64_t seed, uint64_t frame_index,
              const sim_options *o, uint16_t *out)
{
    return sim_frame_model(width, height, seed, frame_index, o, out, NULL);
}

int sim_frame_model(uint32_t width, uint32_t height, uint64_t seed, uint64_t frame_index,
                    const sim_options *o, uint16_t *out, const sim_noise_model *model)
{
    if (width == 0 || height == 0 || !o || !out) return -1;
    if (!(o->lambda_max_nm > o->lambda_min_nm) || !(o->gain_e_per_adu > 0)) return -1;
    if (!(o->level >= 0)) return -1;
    if (model && (!model->mean_adu || !model->electrons || !model->response_sd)) return -1;
    if (model) {
        memset(model->mean_adu, 0, (size_t)width * height * sizeof *model->mean_adu);
        memset(model->response_sd, 0, (size_t)width * height * sizeof *model->response_sd);
    }
    if (o->kind != SIM_KIND_AURORA)
        return sim_frame_of_kind(width, height, seed, frame_index, o, out, model);
    /* brightness scales the light, not the detector (x 1.0 leaves every bit as it was) */
    sim_options lit = *o;
    lit.line_scale *= o->level;
    lit.continuum_adu *= o->level;
    o = &lit;
    size_t npix = (size_t)width * height;
    double *signal = malloc(npix * sizeof *signal);
    double *profile = malloc((size_t)NLINES * width * sizeof *profile);
    double *row_gain = malloc((size_t)NLINES * sizeof *row_gain);
    double *continuum = malloc((size_t)width * sizeof *continuum);
    double *col_bias = malloc((size_t)width * sizeof *col_bias);
    if (!signal || !profile || !row_gain || !continuum || !col_bias) {
        free(signal), free(profile), free(row_gain), free(continuum), free(col_bias);
        return -1;
    }
    const double t = (double)frame_index;
    const double dnm = nm_per_column(width, o);
    sim_arcs a;
    sim_arcs_of_seed(seed, &a);

    /* Spectral shapes: one Gaussian per line, sampled at column centres. */
    for (size_t l = 0; l < NLINES; l++) {
        for (uint32_t n = 0; n < width; n++) {
            double lam = o->lambda_min_nm + n * dnm;
            double d = (lam - LINES[l].nm) / LINES[l].sigma_nm;
            profile[l * width + n] = fabs(d) < 8 ? exp(-0.5 * d * d) : 0.0;
        }
    }
    for (uint32_t n = 0; n < width; n++) {
        double lam = o->lambda_min_nm + n * dnm;
        double dl = (lam - 560.0) / 140.0;
        continuum[n] = o->continuum_adu * (0.55 + 0.45 * exp(-0.5 * dl * dl));
    }
    sim_rng br;
    sim_rng_seed(&br, seed, STREAM_BIAS);
    double bias = sim_bias_of(seed, o);
    for (uint32_t n = 0; n < width; n++) col_bias[n] = bias + 3.0 * (sim_uniform(&br) - 0.5);

    for (uint32_t m = 0; m < height; m++) {
        double y = (m + 0.5) / height;
        double arc = sim_arc_activity(&a, y, t, 0), wide = sim_arc_activity(&a, y, t, 1);
        double diffuse = sim_diffuse_activity(&a, y, t);
        for (size_t l = 0; l < NLINES; l++) {
            double act = LINES[l].kind == SPATIAL_ARCS        ? arc
                         : LINES[l].kind == SPATIAL_WIDE_ARCS ? wide
                         : LINES[l].kind == SPATIAL_DIFFUSE   ? diffuse
                                                              : 0.0;
            row_gain[l] = o->line_scale * (LINES[l].peak_adu * act + LINES[l].airglow_adu);
        }
        double vignette = 1.0 - 0.25 * (2 * y - 1) * (2 * y - 1);
        double *row = signal + (size_t)m * width;
        for (uint32_t n = 0; n < width; n++) {
            double s = continuum[n] * vignette + o->dark_adu;
            for (size_t l = 0; l < NLINES; l++) s += row_gain[l] * profile[l * width + n];
            row[n] = s;
        }
    }

    /* Detector: shot noise in electrons, read noise, bias. */
    sim_rng nr;
    sim_rng_seed(&nr, seed ^ (frame_index * 0xD6E8FEB86659FD93ull), STREAM_NOISE);
    const double g = o->gain_e_per_adu;
    for (uint32_t m = 0; m < height; m++) {
        double *row = signal + (size_t)m * width;
        for (uint32_t n = 0; n < width; n++) {
            double lambda = row[n] * g, electrons = sim_poisson(&nr, lambda);
            double read = o->read_noise_adu * sim_gauss(&nr);
            sim_model_note(model, (size_t)m * width + n, lambda, (electrons - lambda) / g + read);
            row[n] = col_bias[n] + electrons / g + read;
        }
    }
    sim_add_hot_pixels(width, height, seed, o, 1.0, signal);
    sim_add_cosmic_rays(width, height, seed, frame_index, o, signal);
    sim_model_finish(model, signal, npix);
    for (size_t i = 0; i < npix; i++) out[i] = sim_clip_adu(signal[i]);

    free(signal), free(profile), free(row_gain), free(continuum), free(col_bias);
    return 0;
}

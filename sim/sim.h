/* The spectrometer simulator: realistic spectrograph frames, computed in
 * memory (no I/O).  Rows are spatial samples along the slit, columns are
 * wavelength (400..700 nm by default, linear dispersion).  A frame is a pure
 * function of (width, height, seed, frame index, options): the same inputs
 * give the same pixels on the same platform (libm exp/log/sqrt/cos/erf are
 * the only outside arithmetic).
 *
 * The default kind is the station's aurora spectrograph; the other kinds
 * stand for frames of other instruments and other times of day, so that the
 * codec is measured on more than one kind of picture (issue #8).
 */
#ifndef SIM_H
#define SIM_H

#include <stddef.h>
#include <stdint.h>

#define SIM_CADENCE_S 15 /* seconds between frames of the simulated clock */

/* What the frame shows.  Every kind but AURORA adds the structure of a real
 * CCD's bias (column pattern, row banding and pickup, an overscan strip at
 * the right edge, the amplifier's settling gradient and glow) and a fixed
 * pixel response non-uniformity. */
typedef enum {
    SIM_KIND_AURORA = 0,  /* the station at night: aurora arcs, airglow (the default) */
    SIM_KIND_DARK,        /* a quiet night: bias + read noise, faint 557.7/630.0/427.8 nm */
    SIM_KIND_BIAS,        /* zero exposure: the bias structure alone */
    SIM_KIND_TWILIGHT,    /* scattered sunlight: Fraunhofer spectrum near saturation */
    SIM_KIND_ARC,         /* long-slit arc lamp: sharp isolated lines, curved along the slit */
    SIM_KIND_ECHELLE,     /* cross-dispersed echelle, a star: curved orders, absorption lines */
    SIM_KIND_ECHELLE_ARC, /* the same echelle, ThAr lamp: dense tilted lines in every order */
    SIM_KIND_COUNT
} sim_kind;

const char *sim_kind_name(sim_kind kind);   /* "aurora", "dark", ..., "echelle-arc" */
int sim_kind_from_name(const char *name);   /* the kind, or -1 if unknown */

typedef struct {
    double lambda_min_nm, lambda_max_nm; /* wavelength of column 0 and W-1 */
    double bias_adu;                     /* 0: chosen from the seed in 500..1000 */
    double read_noise_adu;               /* Gaussian read noise sigma */
    double gain_e_per_adu;               /* shot noise: Poisson in electrons */
    double dark_adu;                     /* dark current per exposure */
    double line_scale;                   /* multiplies every emission line */
    double continuum_adu;                /* peak of the smooth sky continuum */
    double hot_pixel_fraction;           /* fixed per seed */
    int cosmic_rays;                     /* mean number of streaks per frame */
    double exposure_s;                   /* recorded in headers only */
    sim_kind kind;                       /* SIM_KIND_AURORA by default */
    double level;                        /* multiplies the light of the scene, default 1 */
} sim_options;

/* The station's aurora spectrograph (kind AURORA, level 1). */
void sim_options_default(sim_options *o);

/* The defaults of another kind: its detector (read noise, gain, dark current,
 * exposure, cosmic rays) and its light; level 1. */
void sim_options_for_kind(sim_options *o, sim_kind kind);

/* Columns of the overscan strip at the right edge (no light; bias only):
 * 0 for AURORA and for frames narrower than 128 columns. */
uint32_t sim_overscan_columns(uint32_t width, const sim_options *o);

/* The emission lines the simulator draws (nm). */
typedef struct {
    const char *name;
    double nm;
} sim_line;
int sim_lines(const sim_line **lines); /* returns the count */

/* Column whose centre is closest to lambda_nm (may be outside 0..W-1). */
double sim_column_of(uint32_t width, const sim_options *o, double lambda_nm);

/* Bias level of a seed when o->bias_adu is 0. */
double sim_bias_of(uint64_t seed, const sim_options *o);

/* Writes width*height physical counts (0..65535) row-major into out.
 * Returns 0, or -1 if width or height is 0 or o is invalid. */
int sim_frame(uint32_t width, uint32_t height, uint64_t seed, uint64_t frame_index,
              const sim_options *o, uint16_t *out);

/* A frame's noise model, per pixel (arrays of width*height):
 *   mean_adu     the pixel without noise: offsets, light at the pixel
 *                response's mean, hot pixels, cosmic rays;
 *   electrons    the mean of its Poisson electron count (shot noise);
 *   response_sd  the sd in ADU of its fixed response non-uniformity
 *                (PRNU), which a coder of single frames cannot tell from
 *                noise (0 for the AURORA kind).
 * The pixel is clip(round(mean_adu + (E - electrons) / gain + read_noise *
 * N(0,1) + response_sd * N(0,1))), E ~ Poisson(electrons) as sim_poisson
 * draws it.  For bounds on what any coder can reach (research/noise_floor.c). */
typedef struct {
    double *mean_adu, *electrons, *response_sd;
} sim_noise_model;

/* sim_frame, and its noise model when model is not NULL. */
int sim_frame_model(uint32_t width, uint32_t height, uint64_t seed, uint64_t frame_index,
                    const sim_options *o, uint16_t *out, const sim_noise_model *model);

#endif

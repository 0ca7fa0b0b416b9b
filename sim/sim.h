/* The spectrometer simulator: realistic aurora spectrograph frames, computed
 * in memory (no I/O).  Rows are spatial samples along the slit, columns are
 * wavelength (400..700 nm by default, linear dispersion).  A frame is a pure
 * function of (width, height, seed, frame index, options): the same inputs
 * give the same pixels on the same platform (libm exp/log/sqrt/cos are the
 * only outside arithmetic).
 */
#ifndef SIM_H
#define SIM_H

#include <stddef.h>
#include <stdint.h>

#define SIM_CADENCE_S 15 /* seconds between frames of the simulated clock */

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
} sim_options;

void sim_options_default(sim_options *o);

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

#endif

/* What the simulator's files share and its callers do not see: the random
 * streams, the aurora arcs and the detector pieces every kind uses. */
#ifndef SIM_INTERNAL_H
#define SIM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "sim.h"

#define PI 3.14159265358979323846

/* Stream identifiers: each random quantity has its own reproducible stream.
 * New streams go at the end so that the old ones keep their numbers (and
 * the default kind its pixels). */
enum {
    STREAM_ARCS = 1, STREAM_BIAS, STREAM_HOT, STREAM_NOISE, STREAM_COSMIC,
    STREAM_COLUMNS,  /* fixed column pattern and bad columns of a seed */
    STREAM_BANDING,  /* per-frame row offsets and pickup phase */
    STREAM_PRNU,     /* fixed pixel response of a seed */
    STREAM_SCENE,    /* per-seed choices of a scene (lamp intensities, slit dust) */
    STREAM_LAMP,     /* the fixed line lists (the same lamp and sun for every seed) */
};

/* Aurora arcs: drawn per seed, drifting and brightening frame by frame. */
#define MAX_ARCS 4
typedef struct {
    int n;
    double y0[MAX_ARCS], speed[MAX_ARCS], width[MAX_ARCS], bright[MAX_ARCS];
    double wobble_period[MAX_ARCS], wobble_phase[MAX_ARCS], pulse_period[MAX_ARCS],
        pulse_phase[MAX_ARCS];
    double activity_phase;
} sim_arcs;

void sim_arcs_of_seed(uint64_t seed, sim_arcs *a);
/* Activity along the slit (y in 0..1) at frame t; wide = the red line's spread. */
double sim_arc_activity(const sim_arcs *a, double y, double t, int wide);
double sim_diffuse_activity(const sim_arcs *a, double y, double t);

/* The pixel response non-uniformity: sd of the gain of a pixel. */
#define SIM_PRNU_SD 0.006

/* Adds pixel i's noise draw (shot + read, ADU) to the model's mean field
 * and notes its shot-noise mean.  The mean field holds the draws (response,
 * shot, read) until sim_model_finish subtracts them from the final pixel,
 * so that hot pixels and cosmic rays, added after the noise, count as part
 * of the model.  Nothing when m is NULL (sim_frame). */
static inline void sim_model_note(const sim_noise_model *m, size_t i, double electrons, double noise_adu)
{
    if (m) m->electrons[i] = electrons, m->mean_adu[i] += noise_adu;
}
void sim_model_finish(const sim_noise_model *m, const double *img, size_t npix);

uint16_t sim_clip_adu(double v);
/* Fixed hot pixels of a seed, scale x (300..80000 ADU, log-uniform). */
void sim_add_hot_pixels(uint32_t w, uint32_t h, uint64_t seed, const sim_options *o, double scale,
                        double *img);
/* Cosmic-ray streaks of one frame (o->cosmic_rays on average). */
void sim_add_cosmic_rays(uint32_t w, uint32_t h, uint64_t seed, uint64_t index,
                         const sim_options *o, double *img);

/* sim_frame for every kind but AURORA (sim_kinds.c); arguments checked. */
int sim_frame_of_kind(uint32_t width, uint32_t height, uint64_t seed, uint64_t frame_index,
                      const sim_options *o, uint16_t *out, const sim_noise_model *model);

#endif

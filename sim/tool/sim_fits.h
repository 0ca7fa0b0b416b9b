/* FITS output of the simulator (cfitsio): one simulated frame as a
 * BITPIX=16, BZERO=32768 image with the header a station camera writes. */
#ifndef SIM_FITS_H
#define SIM_FITS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "sim.h"

typedef struct {
    time_t capture;       /* DATE-OBS (UTC) */
    uint64_t frame_index; /* FRAMEIDX */
    uint64_t seed;        /* SIMSEED */
    const sim_options *opt;
    int bitpix;           /* 16 normally; 32 for the broken-frame option */
} sim_fits_meta;

/* Writes pixels (width x height physical counts) to path, replacing it, and
 * fsyncs it.  0 on success; -1 with the reason (naming path) in err. */
int sim_fits_write(const char *path, uint32_t width, uint32_t height, const uint16_t *pixels,
                   const sim_fits_meta *meta, char *err, size_t err_len);

#endif

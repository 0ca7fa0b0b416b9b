/* Frames for the GPU test and benchmark programs, without cfitsio (the
 * device machine has none): the first 2-D BITPIX=16 image of a FITS file read
 * by a small header walker, and simulated frames.  Pixels are returned as
 * FITS stores them: big-endian 16-bit, bits = u XOR 0x8000. */
#ifndef GPU_FRAMES_H
#define GPU_FRAMES_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    char name[128];
    uint32_t width, height;
    uint8_t *be16; /* malloc'd, 2 * width * height bytes */
} gpu_frame;

/* 0, or -1 with the reason (naming the file) in why. */
int gpu_frame_read_fits(const char *path, gpu_frame *f, char *why, size_t why_len);

enum { SIM_SPECTRUM, SIM_CONSTANT, SIM_NOISE, SIM_RAMP };
/* Deterministic simulated frame: aurora-like emission lines on a smooth
 * background with Poisson-like noise (SIM_SPECTRUM), one value, full-range
 * uniform noise, or a diagonal ramp.  Returns 0, -1 when out of memory. */
int gpu_frame_sim(gpu_frame *f, int kind, uint32_t width, uint32_t height, uint32_t seed);

void gpu_frame_free(gpu_frame *f);

#endif

/* Deterministic test frames for the codec core's tests, generated in
 * memory (the FITS simulator belongs to sim/). */
#ifndef CORE_FRAMES_H
#define CORE_FRAMES_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    CORE_FRAME_NOISE,        /* full-range uniform noise */
    CORE_FRAME_CONST0,       /* every sample 0 */
    CORE_FRAME_CONST65535,   /* every sample 65535 */
    CORE_FRAME_CHECKER,      /* 0 / 65535 checkerboard */
    CORE_FRAME_SPECTRUM,     /* emission lines on a sky continuum, slit profile, Poisson-like noise */
    CORE_FRAME_DEGENERATE,   /* flat + saturated blocks, proportional columns: singular systems */
} core_frame_kind;

/* Fills u[0..w*h-1] (sample values 0..65535, row-major) from seed. */
void core_frame_make(core_frame_kind kind, uint32_t w, uint32_t h, uint64_t seed, uint16_t *u);

/* Samples -> FITS BITPIX=16 big-endian bytes (bits = u ^ 0x8000), and back. */
void core_frame_to_be16(const uint16_t *u, size_t n, uint8_t *be);
void core_frame_from_be16(const uint8_t *be, size_t n, uint16_t *u);

/* A small deterministic PRNG (splitmix64). */
uint64_t core_rand(uint64_t *state);

#endif

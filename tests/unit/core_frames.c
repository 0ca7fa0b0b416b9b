/* Test frames for the codec core (see core_frames.h). */
#include "core_frames.h"

#include <math.h>

uint64_t core_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double gauss(uint64_t *s)
{
    double a = ((double)(core_rand(s) >> 11) + 0.5) / 9007199254740992.0;
    double b = ((double)(core_rand(s) >> 11) + 0.5) / 9007199254740992.0;
    return sqrt(-2.0 * log(a)) * cos(6.283185307179586 * b);
}

static uint16_t clamp16(double v)
{
    if (v < 0) return 0;
    if (v > 65535) return 65535;
    return (uint16_t)(v + 0.5);
}

void core_frame_make(core_frame_kind kind, uint32_t w, uint32_t h, uint64_t seed, uint16_t *u)
{
    uint64_t s = seed * 0x2545F4914F6CDD1Dull + 1;
    for (uint32_t m = 0; m < h; m++) {
        for (uint32_t n = 0; n < w; n++) {
            uint16_t *x = &u[(size_t)m * w + n];
            switch (kind) {
            case CORE_FRAME_NOISE: *x = (uint16_t)core_rand(&s); break;
            case CORE_FRAME_CONST0: *x = 0; break;
            case CORE_FRAME_CONST65535: *x = 65535; break;
            case CORE_FRAME_CHECKER: *x = ((m + n) & 1) ? 65535 : 0; break;
            case CORE_FRAME_SPECTRUM: {
                /* lines at fixed wavelengths, brightness varying along the slit */
                double slit = 1.0 + 0.5 * sin(6.283185307179586 * (double)m / (h + 17.0));
                double sky = 400.0 + 30.0 * sin((double)n / 37.0) + 0.05 * n;
                double line = 0;
                for (int k = 0; k < 5; k++) {
                    double c = (double)w * (0.13 + 0.19 * k), d = ((double)n - c) / (1.5 + k);
                    line += (2000.0 + 3000.0 * k) * exp(-0.5 * d * d);
                }
                double mean = sky + slit * line;
                *x = clamp16(mean + sqrt(mean) * gauss(&s) + 3.0 * gauss(&s));
                break;
            }
            case CORE_FRAME_DEGENERATE: {
                uint32_t blk = (n / 7 + m / 5) % 4;
                if (blk == 0) *x = 1000;                               /* flat */
                else if (blk == 1) *x = 65535;                         /* saturated */
                else if (blk == 2) *x = (uint16_t)((n % 64) * 512);  /* proportional ramp */
                else *x = (uint16_t)(core_rand(&s) & 0xFF);
                break;
            }
            }
        }
    }
}

void core_frame_to_be16(const uint16_t *u, size_t n, uint8_t *be)
{
    for (size_t i = 0; i < n; i++) {
        uint16_t b = u[i] ^ 0x8000;
        be[2 * i] = (uint8_t)(b >> 8);
        be[2 * i + 1] = (uint8_t)b;
    }
}

void core_frame_from_be16(const uint8_t *be, size_t n, uint16_t *u)
{
    for (size_t i = 0; i < n; i++) u[i] = (uint16_t)(((be[2 * i] << 8) | be[2 * i + 1]) ^ 0x8000);
}

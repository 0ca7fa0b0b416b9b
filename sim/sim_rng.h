/* The simulator's own PRNG: splitmix64 seeds xoshiro256**, so frames do not
 * depend on libc's rand. */
#ifndef SIM_RNG_H
#define SIM_RNG_H

#include <math.h>
#include <stdint.h>

typedef struct {
    uint64_t s[4];
    int have_spare;
    double spare;
} sim_rng;

static inline uint64_t sim_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline void sim_rng_seed(sim_rng *r, uint64_t a, uint64_t b)
{
    uint64_t x = a * 0xD1B54A32D192ED03ull ^ (b + 0x8CB92BA72F3D8DD7ull);
    for (int i = 0; i < 4; i++) r->s[i] = sim_splitmix64(&x);
    r->have_spare = 0;
    r->spare = 0;
}

static inline uint64_t sim_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t sim_next(sim_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = sim_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = sim_rotl(s[3], 45);
    return result;
}

/* Uniform in [0, 1). */
static inline double sim_uniform(sim_rng *r) { return (double)(sim_next(r) >> 11) * 0x1.0p-53; }

/* Uniform integer in [0, n). */
static inline uint64_t sim_below(sim_rng *r, uint64_t n) { return n ? sim_next(r) % n : 0; }

/* Standard normal (Box-Muller, both values used). */
static inline double sim_gauss(sim_rng *r)
{
    if (r->have_spare) {
        r->have_spare = 0;
        return r->spare;
    }
    double u1 = sim_uniform(r), u2 = sim_uniform(r);
    double rad = sqrt(-2.0 * log(1.0 - u1));
    r->spare = rad * sin(6.283185307179586 * u2);
    r->have_spare = 1;
    return rad * cos(6.283185307179586 * u2);
}

/* Poisson: exact (multiplication method) below 30, normal approximation
 * with continuity correction above, where it is indistinguishable here. */
static inline double sim_poisson(sim_rng *r, double lambda)
{
    if (lambda <= 0) return 0;
    if (lambda < 30) {
        double limit = exp(-lambda), p = 1.0;
        int k = -1;
        do {
            k++;
            p *= sim_uniform(r);
        } while (p > limit);
        return k;
    }
    double v = floor(lambda + sqrt(lambda) * sim_gauss(r) + 0.5);
    return v < 0 ? 0 : v;
}

#endif

/* Round 20: the simulator's frame as a per-pixel dump (pixels, true mean,
 * electrons, response sd, each pixel's floor bits and noise sd, then the
 * hot pixels and cosmic rays alone), for the analyses of r20_py/.  The
 * floor per pixel is tests/bench/noise_floor.c's, whose helpers are
 * included from there (one definition).
 *   cc -O2 -Isim -Icore -o /tmp/simdump research/r20_simdump.c sim/sim_frame.c sim/sim_kinds.c -lm
 *   /tmp/simdump echelle:9:1 /tmp/sim_echelle_9_1.sim */
#define main noise_floor_main /* noise_floor.c's own main, unused here */
#include "../tests/bench/noise_floor.c"
#undef main

#include "sim_internal.h"

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    unsigned w = 1024, h = 1024;
    size_t npix = (size_t)w * h;
    uint16_t *pix = malloc(npix * sizeof *pix);
    double *mean = malloc(npix * sizeof *mean), *elec = malloc(npix * sizeof *elec);
    double *resp = malloc(npix * sizeof *resp), *fb = malloc(npix * sizeof *fb), *sd = malloc(npix * sizeof *sd);
    double *table = malloc(sizeof(double) * (LAMBDA_STEPS + 1) * FRAC_STEPS);
    sim_options o;
    unsigned long long seed;
    if (parse_spec(argv[1], &o, &seed)) return 2;
    sim_noise_model model = {mean, elec, resp};
    if (sim_frame_model(w, h, seed, 0, &o, pix, &model)) return 1;
    const double g = o.gain_e_per_adu, r = o.read_noise_adu;
    for (int i = 0; i <= LAMBDA_STEPS; i++)
        for (int j = 0; j < FRAC_STEPS; j++)
            table[i * FRAC_STEPS + j] = exact_small(30.0 * i / LAMBDA_STEPS, (double)j / FRAC_STEPS, g, r);
    double bits = 0;
    for (size_t i = 0; i < npix; i++) {
        double lam = elec[i] > 0 ? elec[i] : 0, shot = lam / (g * g), p2 = resp[i] * resp[i];
        double var = shot + r * r + p2, b;
        sd[i] = sqrt(var + 1.0 / (12 * g * g));
        if (lam < 30) {
            double t = lam * LAMBDA_STEPS / 30.0, fr = mean[i] - floor(mean[i]);
            int i0 = (int)t, j = (int)(fr * FRAC_STEPS) % FRAC_STEPS;
            double u = t - i0;
            b = (1 - u) * table[i0 * FRAC_STEPS + j] + u * table[(i0 + 1) * FRAC_STEPS + j];
            b += 0.5 * log2(var / (shot + r * r));
        } else {
            b = normal_clipped(mean[i], sqrt(var + 1.0 / (12 * g * g)));
        }
        fb[i] = b; bits += b;
    }
    fprintf(stderr, "%s floor %.0f bytes g=%g r=%g\n", argv[1], ceil(bits / 8), g, r);
    FILE *f = fopen(argv[2], "wb");
    fwrite(pix, 2, npix, f); fwrite(mean, 8, npix, f); fwrite(elec, 8, npix, f); fwrite(resp, 8, npix, f);
    fwrite(fb, 8, npix, f); fwrite(sd, 8, npix, f);
    /* artefacts alone: hot pixels and cosmic rays on a zero image */
    double *z = calloc(npix, sizeof *z);
    double hs = o.kind == SIM_KIND_AURORA ? 1.0 : o.exposure_s / 13.0;
    if (o.kind != SIM_KIND_AURORA) hs = hs < 0.02 ? 0.02 : hs > 1 ? 1 : hs;
    sim_add_hot_pixels(w, h, seed, &o, hs, z);
    sim_add_cosmic_rays(w, h, seed, 0, &o, z);
    fwrite(z, 8, npix, f);
    fclose(f);
    return 0;
}

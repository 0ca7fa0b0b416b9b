/* noise_floor: a lower bound on the size of any lossless code of a
 * simulated frame.
 *
 * The simulator draws each pixel as X = clip(round(mu + (E - lambda)/g +
 * r Z + p Y)), E ~ Poisson(lambda) (sim_poisson: exact below 30 electrons, a
 * rounded normal above), Z, Y ~ N(0,1), with mu, lambda and the response
 * sd p fixed by the scene and the detector (sim_frame_model).  p Y is the
 * pixel response non-uniformity: fixed per seed, so a flat field would
 * remove it, but white noise to a coder of single frames.  Whatever such a
 * coder knows, its expected code length is at least H(X) >= H(X | mu,
 * lambda, p) = sum over pixels of the entropy of that pixel's noise.  This program prints that sum per frame,
 * so that a target such as "3 % below cjxl -e 9" can be checked against
 * what the noise leaves possible.
 *
 *   build/tests/bench/noise_floor 1024 1024 aurora:1:1 dark:4:1 ...
 *   (-q: the bytes alone, one line per frame; scripts/bench-size.sh)
 *
 * Per pixel: below 30 electrons the exact distribution (Poisson times the
 * read noise's bins), tabulated over lambda and the fraction of mu, plus
 * the normal's entropy change for p (< 0.2 ADU there); above, the
 * discretised normal of variance lambda/g^2 + 1/(12 g^2) + r^2 + p^2 (the
 * electron lattice, <= 0.91 ADU, is far finer than r >= 3 ADU), with the
 * clip at 65535 computed bin by bin where it is within 9 sigma.  Check
 * column: the share of unclipped pixels within 3 model sd of mu (0.9973
 * for a normal).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#define LAMBDA_STEPS 1200 /* exact table: lambda in [0, 30) by 1/40 */
#define FRAC_STEPS 16

static double bin_prob(double lo, double hi, double mean, double sd)
{
    return 0.5 * (erfc((lo - mean) / (sd * M_SQRT2)) - erfc((hi - mean) / (sd * M_SQRT2)));
}

/* Entropy (bits) of round(f + (E - lambda)/g + r Z), E ~ Poisson(lambda). */
static double exact_small(double lambda, double f, double g, double r)
{
    double pk[128];
    int kmax = 0;
    double p = exp(-lambda);
    for (int k = 0; k < 128; k++) {
        pk[k] = p;
        kmax = k;
        p *= lambda / (k + 1);
        if (k > lambda && p < 1e-15) break;
    }
    int lo = (int)floor(f - lambda / g - 10 * r) - 1, hi = (int)ceil(f + (kmax - lambda) / g + 10 * r) + 1;
    double h = 0;
    for (int x = lo; x <= hi; x++) {
        double px = 0;
        for (int k = 0; k <= kmax; k++) {
            double c = f + (k - lambda) / g;
            px += pk[k] * bin_prob(x - 0.5, x + 0.5, c, r);
        }
        if (px > 0) h -= px * log2(px);
    }
    return h;
}

/* Entropy of the discretised normal (mean, sd) clipped at 65535. */
static double normal_clipped(double mean, double sd)
{
    if (mean + 9 * sd < 65534.5) return 0.5 * log2(2 * M_PI * M_E * sd * sd);
    double h = 0, below = 0;
    for (long x = (long)floor(mean - 10 * sd); x < 65535; x++) {
        double px = bin_prob(x - 0.5, x + 0.5, mean, sd);
        below += px;
        if (px > 0) h -= px * log2(px);
    }
    double top = 1 - below;
    if (top > 0) h -= top * log2(top);
    return h;
}

/* The exact entropies by lambda step i and mean fraction step j, each
 * computed on its first use (NAN until then): a small frame needs few of
 * the table's 19216, whose erfc sums cost about 3.5 s all together. */
static double exact_entry(double *table, int i, int j, double g, double r)
{
    double *e = &table[i * FRAC_STEPS + j];
    if (isnan(*e)) *e = exact_small(30.0 * i / LAMBDA_STEPS, (double)j / FRAC_STEPS, g, r);
    return *e;
}

static int parse_spec(const char *spec, sim_options *o, unsigned long long *seed)
{
    char kind[32];
    double level = 1;
    if (sscanf(spec, "%31[^:]:%llu:%lf", kind, seed, &level) < 2) return -1;
    int k = sim_kind_from_name(kind);
    if (k < 0) return -1;
    sim_options_for_kind(o, (sim_kind)k);
    o->level = level;
    return 0;
}

int main(int argc, char **argv)
{
    int quiet = argc > 1 && strcmp(argv[1], "-q") == 0;
    argv += quiet, argc -= quiet;
    if (argc < 4) {
        fprintf(stderr, "usage: noise_floor [-q] W H kind:seed[:level]...\n");
        return 2;
    }
    unsigned w = (unsigned)atoi(argv[1]), h = (unsigned)atoi(argv[2]);
    size_t npix = (size_t)w * h;
    uint16_t *pix = malloc(npix * sizeof *pix);
    double *mean = malloc(npix * sizeof *mean), *elec = malloc(npix * sizeof *elec);
    double *resp = malloc(npix * sizeof *resp);
    double *table = malloc(sizeof(double) * (LAMBDA_STEPS + 1) * FRAC_STEPS);
    if (!pix || !mean || !elec || !resp || !table) return 1;
    if (!quiet) printf("%-22s %12s %9s %9s %9s\n", "frame", "floor_bytes", "bpp", "gauss_bpp", "in_3sd");
    for (int a = 3; a < argc; a++) {
        sim_options o;
        unsigned long long seed;
        if (parse_spec(argv[a], &o, &seed)) {
            fprintf(stderr, "bad spec %s\n", argv[a]);
            return 2;
        }
        sim_noise_model model = {mean, elec, resp};
        if (sim_frame_model(w, h, seed, 0, &o, pix, &model)) return 1;
        const double g = o.gain_e_per_adu, r = o.read_noise_adu;
        for (int i = 0; i < (LAMBDA_STEPS + 1) * FRAC_STEPS; i++) table[i] = NAN;
        double bits = 0, gauss_bits = 0;
        size_t inside = 0, unclipped = 0;
        for (size_t i = 0; i < npix; i++) {
            double lam = elec[i] > 0 ? elec[i] : 0, shot = lam / (g * g), p2 = resp[i] * resp[i];
            double var = shot + r * r + p2;
            gauss_bits += 0.5 * log2(2 * M_PI * M_E * var);
            if (mean[i] < 65000) {
                unclipped++;
                inside += fabs(pix[i] - mean[i]) < 3 * sqrt(var);
            }
            if (lam < 30) {
                double t = lam * LAMBDA_STEPS / 30.0, fr = mean[i] - floor(mean[i]);
                int i0 = (int)t, j = (int)(fr * FRAC_STEPS) % FRAC_STEPS;
                double u = t - i0;
                bits += (1 - u) * exact_entry(table, i0, j, g, r) + u * exact_entry(table, i0 + 1, j, g, r);
                bits += 0.5 * log2(var / (shot + r * r));
            } else {
                bits += normal_clipped(mean[i], sqrt(var + 1.0 / (12 * g * g)));
            }
        }
        if (quiet)
            printf("%.0f\n", ceil(bits / 8));
        else
            printf("%-22s %12.0f %9.4f %9.4f %9.4f\n", argv[a], ceil(bits / 8), bits / npix, gauss_bits / npix,
                   (double)inside / (double)unclipped);
        fflush(stdout);
    }
    free(pix), free(mean), free(elec), free(resp), free(table);
    return 0;
}

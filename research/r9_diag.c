/* Round 9 diagnosis: per-member error against the simulator's true mean.
 * Reads a frame, regenerates its noise model (kind:seed:level, index), and
 * a dump of the members' predictions written by a diagnostic copy of
 * core/lsmix_codec.c (R9DUMP: per pixel LSX_NPRED floats + the blend; NP
 * below must equal that build's LSX_NPRED, 8 in round 9's: LS CM AF RV AL
 * BG RL1 RL2 in set 1, LS CM AF BG in set 0).  Prints, per noise class, each
 * member's mean min((P - mu)^2 / var, 100), an approximate excess (kB) and
 * its clipped signed bias; research/r9-orders.md section 1.
 *   cc -O2 -ffp-contract=off -Icore -Iresearch -Ithird_party/xxhash -Isim -o r9_diag \
 *      research/r9_diag.c sim/sim_frame.c sim/sim_kinds.c -lm
 *   r9_diag FRAME.fits kind:seed:level index DUMP.bin np   (np: the stream's member count)
 *
 * The dump hunk (in residuals_and_contexts of a copy of lsmix_codec.c):
 *   FILE *dumpf = NULL;   // after lsx_state_init
 *   if (getenv("R9DUMP")) { char fn[512]; snprintf(fn, sizeof fn, "%s_s%d_f%d.bin",
 *       getenv("R9DUMP"), v->set, v->p.forget_shift); dumpf = fopen(fn, "wb"); }
 *   ...                   // before r0[n] = cur[n] - pred:
 *   if (dumpf) { float fb[LSX_NPRED + 1]; for (int k = 0; k < LSX_NPRED; k++)
 *       fb[k] = (float)(k < s.np ? pp[k] : 0); fb[LSX_NPRED] = pred; fwrite(fb, sizeof fb, 1, dumpf); }
 *   ...                   // after lsx_state_free: if (dumpf) fclose(dumpf);
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lab_io.h"
#include "sim.h"

#define NP 8
int main(int argc, char **argv)
{
    if (argc < 6) return 2;
    uint32_t W, H;
    uint16_t *u = lab_load_fits(argv[1], &W, &H);
    char kind[32]; unsigned long long seed; double level = 1;
    sscanf(argv[2], "%31[^:]:%llu:%lf", kind, &seed, &level);
    int idx = atoi(argv[3]), np = atoi(argv[5]);
    sim_options o;
    sim_options_for_kind(&o, (sim_kind)sim_kind_from_name(kind));
    o.level = level;
    size_t N = (size_t)W * H;
    uint16_t *pix = malloc(N * 2);
    double *mean = malloc(N * 8), *el = malloc(N * 8), *rs = malloc(N * 8);
    sim_noise_model mo = {mean, el, rs};
    sim_frame_model(W, H, seed, idx, &o, pix, &mo);
    size_t diff = 0;
    for (size_t i = 0; i < N; i++) diff += pix[i] != u[i];
    fprintf(stderr, "pixels differing from model frame: %zu\n", diff);
    float *d = malloc(N * sizeof(float) * (NP + 1));
    FILE *f = fopen(argv[4], "rb");
    if (!f || fread(d, sizeof(float) * (NP + 1), N, f) != N) { fprintf(stderr, "dump\n"); return 1; }
    const double g = o.gain_e_per_adu, r = o.read_noise_adu;
    double vmin = 1e30;
    double *var = malloc(N * 8);
    for (size_t i = 0; i < N; i++) {
        double lam = el[i] > 0 ? el[i] : 0;
        var[i] = lam / (g * g) + r * r + rs[i] * rs[i] + 1.0 / 12;
        if (var[i] < vmin) vmin = var[i];
    }
    const char *cn[6] = {"read<1.3", "<2x", "<4x", "<16x", "<100x", "bright"};
    double lim[6] = {1.3, 2, 4, 16, 100, 1e300};
    double cnt[6] = {0}, err[6][NP + 2] = {{0}}, xs[6][NP + 2] = {{0}}, bias[6] = {0}, mb[6][NP + 1] = {{0}};
    const char *mn[NP + 2] = {"LS", "CM", "AF", "RV/BG", "AL", "BG", "RL1", "RL2", "blend", "bestmem"};
    for (size_t i = W; i < N; i++) {
        if (mean[i] > 65000) continue;
        int c = 0;
        while (var[i] > lim[c] * vmin) c++;
        cnt[c]++;
        const float *q = d + i * (NP + 1);
        double best = 1e300;
        for (int k = 0; k <= NP; k++) {
            if (k < NP && k >= np) continue;
            double e = (q[k] - mean[i]) * (q[k] - mean[i]) / var[i];
            if (e > 100) e = 100;
            if (k < NP && e < best) best = e;
            err[c][k] += e;
            { double t = (q[k] - mean[i]) / sqrt(var[i]); mb[c][k] += t > 3 ? 3 : t < -3 ? -3 : t; }
            xs[c][k] += 0.5 * log2(1 + e);
        }
        err[c][NP + 1] += best; xs[c][NP + 1] += 0.5 * log2(1 + best);
        { double t = (q[NP] - mean[i]) / sqrt(var[i]); bias[c] += t > 3 ? 3 : t < -3 ? -3 : t; }
    }
    printf("class     share  | mean err/var (approx excess kB) per member\n");
    for (int c = 0; c < 6; c++) {
        if (!cnt[c]) continue;
        printf("%-8s %5.1f%% bias%+.2f |", cn[c], 100 * cnt[c] / N, bias[c] / cnt[c]);
        for (int k = 0; k < NP + 2; k++) {
            if (k < NP && k >= np) continue;
            printf(" %s %.2f (%.1f)", mn[k], err[c][k] / cnt[c], xs[c][k] / 8 / 1000);
        }
        printf("\n        member bias/sd:");
        for (int k = 0; k <= NP; k++) if (k >= np && k < NP) continue; else printf(" %s %+.2f", mn[k], mb[c][k] / cnt[c]);
        printf("\n");
    }
    return 0;
}

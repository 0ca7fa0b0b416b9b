/* r36: structural error of PX on the noise-free echelle scene (oracle geometry).
 * Build (a core copy /tmp/x/core with r36-px-member.patch applied):
 *   cc -O2 -Isim -I/tmp/x/core -o /tmp/x/nf research/r36_nf.c sim/sim_frame.c -lm
 *   R36_GEO=geo_s9.txt /tmp/x/nf 9 0 1     (seed, lamp 0/1, level) */
#include "sim_kinds.c" /* the simulator scene code, from sim/ */
#include <stdint.h>
#include "lsmix_px.h" /* from a core/ copy with r36-px-member.patch */
int main(int argc, char **argv)
{
    unsigned long long seed = strtoull(argv[1], 0, 10);
    int lamp = atoi(argv[2]);
    double level = atof(argv[3]);
    const uint32_t w = 1024, h = 1024, wi = 992;
    sim_options o;
    sim_options_for_kind(&o, lamp ? SIM_KIND_ECHELLE_ARC : SIM_KIND_ECHELLE);
    o.level = level;
    double *img = calloc(w * h, sizeof *img);
    scene_echelle(w, h, wi, seed, &o, lamp, img);
    uint16_t *u = malloc(2 * w * h);
    const double off = 1000;
    for (size_t i = 0; i < (size_t)w * h; i++) { double v = img[i] + off; u[i] = v > 65535 ? 65535 : (uint16_t)(v + 0.5); }
    int32_t *bgc = malloc(4 * w);
    for (uint32_t n = 0; n < w; n++) bgc[n] = 16 * 1000;
    r36_geo_load(w);
    int dbg = 0;
    double se[3] = {0}, sv[3] = {0}; long cnt[3] = {0};
    for (uint32_t m = 2; m < h; m++)
        for (uint32_t n = 0; n < w; n++) {
            double p;
            { double xn = (n - 496.0) / 496.0, y = (m + 0.5) / h - 0.5; double sc = (lamp ? 2.0 * level * o.line_scale : 0.004 * o.continuum_adu * level) * (1.0 - 0.3 * xn * xn) * (1.0 - 0.8 * y * y);
              if (n == 0) for (uint32_t q = 0; q < w; q++) { double xq = (q - 496.0) / 496.0; bgc[q] = (int32_t)lrint(16 * (off + (lamp ? 2.0 * level * o.line_scale : 0.004 * o.continuum_adu * level) * (1.0 - 0.3 * xq * xq) * (1.0 - 0.8 * y * y))); } (void)sc; }
            if (!r36_px_predict(u + (size_t)m * w, m, n, bgc, 0, &p)) continue;
            double L = img[(size_t)m * w + n] - (bgc[n] / 16.0 - off);
            if (L < 50 || L + off > 60000) continue;
            { double z2=(p-off-L)*(p-off-L)/(9+L/1.1); if (z2>1000 && getenv("DBG") && dbg++<6) printf("m %u n %u L %.1f p %.1f\n", m, n, L, p-off); }
            int c = L < 500 ? 0 : L < 5000 ? 1 : 2;
            double var = 9 + L / 1.1;
            se[c] += (p - off - L) * (p - off - L) / var; cnt[c]++;
        }
    for (int c = 0; c < 3; c++) printf("light class %d: %ld px, structural z^2 %.3f\n", c, cnt[c], se[c] / cnt[c]);
    return 0;
}

/* r36: the echelle scene's order geometry (oracle): per order y0, c1, c2
 * (yc(n) = y0 + c1 xn + c2 xn^2, xn = (n - half) / half), seeing, slit,
 * tilt, bend, reach; as scene_echelle computes them.
 *   cc -O2 -Isim -o /tmp/x/geo research/r36_geo.c -lm
 *   /tmp/x/geo SEED LAMP(0 echelle, 1 echelle-arc) > geo_sSEED.txt */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include "sim_internal.h"
#include "sim_rng.h"
int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    unsigned long long seed = strtoull(argv[1], 0, 10);
    int lamp = atoi(argv[2]);
    const double w = 1024, h = 1024, wi = w - w / 32;
    sim_rng r;
    sim_rng_seed(&r, seed, STREAM_SCENE + 32);
    const double flexure = 2.0 * (sim_uniform(&r) - 0.5);
    const double half = 0.5 * wi;
    int k = 0, cnt = 0;
    for (double f = -0.03; f < 1.03; k++) { cnt++; f += 0.058 - 0.022 * f; }
    printf("%d %.17g %.17g %d\n", lamp, half, wi, cnt);
    k = 0;
    for (double f = -0.03; f < 1.03; k++) {
        const double spacing = 0.058 - 0.022 * f;
        const double y0 = f * h + flexure;
        const double slit = 0.3 * spacing * h, seeing = 1.6 * h / 1024.0 + 0.3;
        const double tilt = 0.12 + 0.10 * f, bend = 0.004;
        const double reach = 0.5 * slit + 4 * seeing + 3;
        printf("%.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", y0, h * 0.015, h * 0.03 * (1 + 0.5 * f), seeing,
               slit, tilt, bend, reach);
        f += spacing;
    }
    return 0;
}

/* Round 9: decode time of the lsmix image stream, one thread, the best of
 * R runs (encode once).  Build like codec_size.c:
 *   cc -O2 -ffp-contract=off -mavx2 -I/tmp/x/core -Iresearch -Ithird_party/xxhash \
 *      -o /tmp/x/dectime research/r9_dectime.c /tmp/x/core/*.c -lm -lpthread
 *   /tmp/x/dectime R FRAME.fits... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aurp.h"
#include "lab_encode.h"
#include "lab_io.h"
#include "lsmix.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv)
{
    int R = atoi(argv[1]);
    for (int a = 2; a < argc; a++) {
        uint32_t W, H;
        uint16_t *u = lab_load_fits(argv[a], &W, &H);
        if (!u) return 1;
        size_t len;
        uint8_t *out = lab_lsmix_encode(u, W, H, 1, &len);
        if (!out) return 1;
        aurp_error err;
        uint16_t *back = malloc(sizeof *back * (size_t)W * H);
        double best = 1e9;
        for (int r = 0; r < R; r++) {
            double t0 = now();
            if (lsx_image_decode(out, len, W, H, 1, back, &err) != AURP_OK) return 1;
            double t = now() - t0;
            if (t < best) best = t;
        }
        int ok = memcmp(back, u, sizeof *back * (size_t)W * H) == 0;
        printf("%-32s %9zu bytes  decode %.3f s (best of %d)%s\n", strrchr(argv[a], '/') + 1, len, best, R,
               ok ? "" : " MISMATCH");
        free(out), free(back), free(u);
    }
    return 0;
}

/* The real lsmix encoder's size on frames, for research on a private copy
 * of core/ (edit the copy, rebuild, compare): prints each frame's image
 * stream bytes, and with -d checks that the stream decodes to the frame.
 *   cp -r core /tmp/x/core   # then edit /tmp/x/core
 *   cc -O2 -ffp-contract=off -mavx2 -I/tmp/x/core -Iresearch -Ithird_party/xxhash \
 *      -o /tmp/x/size research/codec_size.c /tmp/x/core/*.c -lm -lpthread
 *   /tmp/x/size [-d] [-t THREADS] FRAME.fits...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aurp.h"
#include "lab_encode.h"
#include "lab_io.h"
#include "lsmix.h"

int main(int argc, char **argv)
{
    int check = 0, threads = 1, a = 1;
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (!strcmp(argv[a], "-d")) check = 1;
        else if (!strcmp(argv[a], "-t") && a + 1 < argc) threads = atoi(argv[++a]);
    }
    unsigned long long total = 0;
    for (; a < argc; a++) {
        uint32_t W, H;
        uint16_t *u = lab_load_fits(argv[a], &W, &H);
        if (!u) {
            fprintf(stderr, "%s: cannot read\n", argv[a]);
            return 1;
        }
        size_t len;
        uint8_t *out = lab_lsmix_encode(u, W, H, threads, &len);
        if (!out) {
            fprintf(stderr, "%s: not encoded\n", argv[a]);
            return 1;
        }
        const char *ok = "";
        if (check) {
            uint16_t *back = malloc(sizeof *back * (size_t)W * H);
            aurp_error err;
            ok = lsx_image_decode(out, len, W, H, threads, back, &err) == AURP_OK &&
                         memcmp(back, u, sizeof *back * (size_t)W * H) == 0
                     ? " decoded"
                     : " DECODE FAILED";
            free(back);
        }
        const char *base = strrchr(argv[a], '/');
        printf("%-40s %10zu%s\n", base ? base + 1 : argv[a], len, ok);
        total += len;
        free(out);
        free(u);
    }
    printf("%-40s %10llu\n", "total", total);
    return 0;
}

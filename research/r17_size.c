/* codec_size with the r17 side information and winners printed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "aurp.h"
#include "lab_encode.h"
#include "lab_io.h"
#include "lsmix.h"
#include "r17_mrp.h"

int main(int argc, char **argv)
{
    double total = 0;
    for (int a = 1; a < argc; a++) {
        uint32_t W, H;
        uint16_t *u = lab_load_fits(argv[a], &W, &H);
        if (!u) return 1;
        size_t len;
        uint8_t *out = lab_lsmix_encode(u, W, H, 1, &len);
        if (!out) return 1;
        const char *base = strrchr(argv[a], '/');
        printf("%-32s stream %9zu side %7.1f total %11.1f side2 %7.1f win %d cas %d design %.2fs est %llu %llu %llu %llu\n",
               base ? base + 1 : argv[a], len, r17_side, len + r17_side, r17_side2, r17_win, r17_win_cas, r17_design_s,
               (unsigned long long)r17_est[0] >> 16, (unsigned long long)r17_est[1] >> 16,
               (unsigned long long)r17_est[2] >> 16, (unsigned long long)r17_est[3] >> 16);
        fflush(stdout);
        total += len + r17_side;
        free(out);
        free(u);
    }
    printf("total %.1f\n", total);
    return 0;
}

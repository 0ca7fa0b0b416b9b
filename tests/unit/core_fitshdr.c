/* Minimal FITS primary-header reading for the core's tests (see core_fitshdr.h). */
#include "core_fitshdr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long card_int(const char *card)
{
    char buf[72];
    memcpy(buf, card + 10, 70);
    buf[70] = 0;
    return strtol(buf, NULL, 10);
}

int core_fits_primary_image(const uint8_t *file, size_t len, uint64_t *offset, uint32_t *width,
                            uint32_t *height)
{
    long bitpix = 0, naxis = -1, n1 = 0, n2 = 0;
    for (size_t pos = 0; pos + 80 <= len; pos += 80) {
        const char *c = (const char *)file + pos;
        if (!strncmp(c, "BITPIX  =", 9)) bitpix = card_int(c);
        else if (!strncmp(c, "NAXIS   =", 9)) naxis = card_int(c);
        else if (!strncmp(c, "NAXIS1  =", 9)) n1 = card_int(c);
        else if (!strncmp(c, "NAXIS2  =", 9)) n2 = card_int(c);
        else if (!strncmp(c, "END     ", 8)) {
            uint64_t data = (pos / 2880 + 1) * 2880;
            if (bitpix != 16 || naxis != 2 || n1 < 1 || n2 < 1 || data + 2 * (uint64_t)n1 * n2 > len)
                return -1;
            *offset = data;
            *width = (uint32_t)n1;
            *height = (uint32_t)n2;
            return 0;
        }
    }
    return -1;
}

uint8_t *core_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t *buf = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) != NULL) {
            if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
                free(buf);
                buf = NULL;
            } else {
                *len = (size_t)n;
            }
        }
    }
    fclose(f);
    return buf;
}

/* Research lab: frame loading (FITS BITPIX=16 primary image, u = bits ^ 0x8000)
 * and PGM writing for the JPEG XL anchors.  Not part of the product. */
#ifndef LAB_IO_H
#define LAB_IO_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint16_t *lab_load_fits(const char *path, uint32_t *w, uint32_t *h)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char card[81];
    card[80] = 0;
    long nx = 0, ny = 0, bitpix = 0, ncards = 0;
    int end = 0;
    while (!end && fread(card, 1, 80, f) == 80) {
        ncards++;
        if (!strncmp(card, "BITPIX  =", 9)) bitpix = atol(card + 10);
        if (!strncmp(card, "NAXIS1  =", 9)) nx = atol(card + 10);
        if (!strncmp(card, "NAXIS2  =", 9)) ny = atol(card + 10);
        if (!strncmp(card, "END     ", 8)) end = 1;
    }
    if (!end || bitpix != 16 || nx <= 0 || ny <= 0) { fclose(f); return NULL; }
    long hdr = ((ncards * 80 + 2879) / 2880) * 2880;
    fseek(f, hdr, SEEK_SET);
    size_t n = (size_t)nx * (size_t)ny;
    uint8_t *b = malloc(2 * n);
    uint16_t *u = malloc(2 * n);
    if (fread(b, 2, n, f) != n) { fclose(f); free(b); free(u); return NULL; }
    fclose(f);
    for (size_t i = 0; i < n; i++) u[i] = (uint16_t)(((b[2 * i] << 8) | b[2 * i + 1]) ^ 0x8000);
    free(b);
    *w = (uint32_t)nx;
    *h = (uint32_t)ny;
    return u;
}

static int lab_write_pgm(const char *path, const uint16_t *u, uint32_t w, uint32_t h)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    fprintf(f, "P5\n%u %u\n65535\n", w, h);
    for (size_t i = 0; i < (size_t)w * h; i++) {
        fputc(u[i] >> 8, f);
        fputc(u[i] & 255, f);
    }
    return fclose(f);
}
#endif

#include "gpu_frames.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A FITS header keyword's integer value, or def when absent. */
static long card_int(const char *hdr, size_t ncards, const char *key, long def)
{
    size_t klen = strlen(key);
    for (size_t i = 0; i < ncards; i++) {
        const char *c = hdr + 80 * i;
        if (strncmp(c, key, klen) == 0 && (c[klen] == ' ' || c[klen] == '=') && c[8] == '=')
            return strtol(c + 10, NULL, 10);
    }
    return def;
}

int gpu_frame_read_fits(const char *path, gpu_frame *f, char *why, size_t why_len)
{
    memset(f, 0, sizeof f[0]);
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        snprintf(why, why_len, "%s: cannot open", path);
        return -1;
    }
    fseek(fp, 0, SEEK_END);
    long size = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint8_t *buf = malloc(size > 0 ? (size_t)size : 1);
    if (!buf || fread(buf, 1, (size_t)size, fp) != (size_t)size) {
        fclose(fp);
        free(buf);
        snprintf(why, why_len, "%s: cannot read", path);
        return -1;
    }
    fclose(fp);
    size_t pos = 0;
    while (pos + 2880 <= (size_t)size) {
        size_t start = pos, ncards = 0;
        int ended = 0;
        while (!ended && pos + 2880 <= (size_t)size) {
            for (int i = 0; i < 36; i++)
                if (strncmp((const char *)buf + pos + 80 * i, "END     ", 8) == 0) ended = 1;
            pos += 2880;
            ncards += 36;
        }
        if (!ended) break;
        const char *hdr = (const char *)buf + start;
        long bitpix = card_int(hdr, ncards, "BITPIX", 0), naxis = card_int(hdr, ncards, "NAXIS", 0);
        long n1 = card_int(hdr, ncards, "NAXIS1", 0), n2 = card_int(hdr, ncards, "NAXIS2", 0);
        long pcount = card_int(hdr, ncards, "PCOUNT", 0), gcount = card_int(hdr, ncards, "GCOUNT", 1);
        size_t data = 0;
        if (naxis > 0) {
            data = (size_t)labs(bitpix) / 8;
            for (int a = 1; a <= naxis; a++) {
                char k[16];
                snprintf(k, sizeof k, "NAXIS%d", a);
                data *= (size_t)card_int(hdr, ncards, k, 0);
            }
            data = (data + (size_t)labs(bitpix) / 8 * (size_t)pcount) * (size_t)gcount;
        }
        if (bitpix == 16 && naxis == 2 && n1 > 0 && n2 > 0 && pos + data <= (size_t)size) {
            f->width = (uint32_t)n1;
            f->height = (uint32_t)n2;
            f->be16 = malloc(data);
            if (!f->be16) break;
            memcpy(f->be16, buf + pos, data);
            const char *base = strrchr(path, '/');
            snprintf(f->name, sizeof f->name, "%s", base ? base + 1 : path);
            free(buf);
            return 0;
        }
        pos += (data + 2879) / 2880 * 2880;
    }
    free(buf);
    snprintf(why, why_len, "%s: no 2-D BITPIX=16 image found", path);
    return -1;
}

static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

int gpu_frame_sim(gpu_frame *f, int kind, uint32_t W, uint32_t H, uint32_t seed)
{
    static const char *names[] = {"spectrum", "constant", "noise", "ramp"};
    memset(f, 0, sizeof f[0]);
    f->width = W;
    f->height = H;
    snprintf(f->name, sizeof f->name, "sim-%s-%ux%u", names[kind], W, H);
    f->be16 = malloc(2 * (size_t)W * H);
    if (!f->be16) return -1;
    uint32_t s = seed * 2654435761u + 1;
    for (uint32_t m = 0; m < H; m++) {
        for (uint32_t n = 0; n < W; n++) {
            double v;
            switch (kind) {
            case SIM_CONSTANT: v = 1234 + seed; break;
            case SIM_NOISE: v = lcg(&s) & 0xffff; break;
            case SIM_RAMP: v = (m * 37 + n * 11) & 0xffff; break;
            default: {
                double pos = W > 1 ? (double)n / (W - 1) : 0;
                double along = H > 1 ? (double)m / (H - 1) : 0;
                double line = 9000 * exp(-pow((pos - 0.31) / 0.004, 2)) +
                              4000 * exp(-pow((pos - 0.62) / 0.006, 2)) * (0.5 + along);
                double bg = 900 + 300 * sin(6.28 * pos) + 200 * along;
                double mean = bg + line;
                double noise = ((double)(lcg(&s) & 0xffff) / 65536.0 - 0.5) * 2 * sqrt(mean);
                v = mean + noise;
            }
            }
            if (v < 0) v = 0;
            if (v > 65535) v = 65535;
            uint16_t bits = (uint16_t)((uint32_t)v ^ 0x8000u);
            f->be16[2 * ((size_t)m * W + n)] = (uint8_t)(bits >> 8);
            f->be16[2 * ((size_t)m * W + n) + 1] = (uint8_t)bits;
        }
    }
    return 0;
}

void gpu_frame_free(gpu_frame *f)
{
    free(f->be16);
    memset(f, 0, sizeof f[0]);
}

#include "stats.h"

#include <stdlib.h>
#include <string.h>

int stats_init(stats *s, int window)
{
    memset(s, 0, sizeof *s);
    s->window = window > 0 ? window : 1;
    s->latency_ms = calloc((size_t)s->window, sizeof *s->latency_ms);
    s->bits = calloc((size_t)s->window, sizeof *s->bits);
    s->pixels = calloc((size_t)s->window, sizeof *s->pixels);
    return s->latency_ms && s->bits && s->pixels ? 0 : -1;
}

void stats_free(stats *s)
{
    free(s->latency_ms);
    free(s->bits);
    free(s->pixels);
    s->latency_ms = NULL;
    s->bits = s->pixels = NULL;
}

void stats_add_frame(stats *s, double latency_ms, uint64_t bytes_out, uint64_t pixels)
{
    s->latency_ms[s->head] = latency_ms;
    s->bits[s->head] = bytes_out * 8;
    s->pixels[s->head] = pixels;
    s->head = (s->head + 1) % s->window;
    if (s->n < s->window) s->n++;
}

void stats_latency(const stats *s, double *mean_ms, double *max_ms)
{
    double sum = 0, mx = 0;
    for (int i = 0; i < s->n; i++) {
        sum += s->latency_ms[i];
        if (s->latency_ms[i] > mx) mx = s->latency_ms[i];
    }
    *mean_ms = s->n ? sum / s->n : 0;
    *max_ms = mx;
}

double stats_bpp(const stats *s)
{
    uint64_t b = 0, p = 0;
    for (int i = 0; i < s->n; i++) {
        b += s->bits[i];
        p += s->pixels[i];
    }
    return p ? (double)b / (double)p : 0;
}

/* Running figures for STATUS= and the periodic status log line: totals,
 * and latency and bits per pixel over a window of the most recent frames. */
#ifndef AURORAD_STATS_H
#define AURORAD_STATS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int window;
    int n, head;
    double *latency_ms;
    uint64_t *bits, *pixels;
    uint64_t committed, recovered, quarantined, retries, gpu_fallbacks, over_budget;
    uint64_t bytes_in, bytes_out;
} stats;

int stats_init(stats *s, int window);
void stats_free(stats *s);
void stats_add_frame(stats *s, double latency_ms, uint64_t bytes_out, uint64_t pixels);

void stats_latency(const stats *s, double *mean_ms, double *max_ms);
double stats_bpp(const stats *s); /* over the window; 0 when empty */

#endif

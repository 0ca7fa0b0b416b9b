/* Prometheus metrics in node_exporter's textfile-collector format,
 * written atomically (temporary file in the same directory, rename) so
 * the collector never reads half a file.  Point node_exporter's
 * --collector.textfile.directory at the directory of metrics_file (the
 * name must end in .prom). */
#ifndef AURORAD_METRICS_H
#define AURORAD_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "counters.h"
#include "spool.h"

#define METRICS_MAX_DIRS 5
#define METRICS_MAX_GPUS 16

typedef struct {
    const counters *totals;
    spool_summary outbox, incoming;
    int64_t now_s;
    int dirs;
    const char *dir_key[METRICS_MAX_DIRS]; /* "incoming", "outbox", ... */
    uint64_t dir_free[METRICS_MAX_DIRS];
    int gpus;
    char gpu_label[METRICS_MAX_GPUS][48];
    bool gpu_up[METRICS_MAX_GPUS];
    int in_flight, held, verify_queued;
    bool outbox_paused;                    /* outbox fault or disk reserve */
    uint64_t done_files, done_bytes;
} metrics_snapshot;

int metrics_write(const char *path, const metrics_snapshot *m, char *err, size_t err_len);

#endif

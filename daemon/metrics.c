#include "metrics.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* One metric of one sample: its HELP and TYPE lines, then the value (every
 * one here is a count, never negative). */
static void metric(FILE *f, const char *name, const char *type, const char *help, unsigned long long v)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n%s %llu\n", name, help, name, type, name, v);
}

int metrics_write(const char *path, const metrics_snapshot *m, char *err, size_t err_len)
{
    char tmp[4200];
    /* a hidden name: node_exporter reads only *.prom */
    const char *slash = strrchr(path, '/');
    snprintf(tmp, sizeof tmp, "%.*s/.%s.tmp-%ld", (int)(slash - path), path, slash + 1,
             (long)getpid());
    FILE *f = fopen(tmp, "we");
    if (!f) {
        snprintf(err, err_len, "%s: cannot create: %s", tmp, strerror(errno));
        return -1;
    }
    const counters *c = m->totals;
    fprintf(f, "# HELP aurorad_frames_total Frames handled, by outcome, since counters began.\n"
               "# TYPE aurorad_frames_total counter\n");
    fprintf(f, "aurorad_frames_total{outcome=\"committed\"} %llu\n", (unsigned long long)c->committed);
    fprintf(f, "aurorad_frames_total{outcome=\"recovered\"} %llu\n", (unsigned long long)c->recovered);
    fprintf(f, "aurorad_frames_total{outcome=\"quarantined\"} %llu\n",
            (unsigned long long)c->quarantined);
    metric(f, "aurorad_over_budget_total", "counter",
           "Frames committed later than budget_seconds.", c->over_budget);
    metric(f, "aurorad_retries_total", "counter", "Faults retried (outbox and single files).", c->retries);
    metric(f, "aurorad_gpu_fallbacks_total", "counter",
           "Frames redone on the CPU after a GPU failed.", c->gpu_fallbacks);
    metric(f, "aurorad_bytes_in_total", "counter", "Bytes of originals packed.", c->bytes_in);
    metric(f, "aurorad_bytes_out_total", "counter", "Bytes of packed copies committed.", c->bytes_out);
    metric(f, "aurorad_retention_removed_total", "counter",
           "Originals removed from done_dir by retention.", c->retention_removed);
    fprintf(f, "# HELP aurorad_frame_latency_seconds From complete on disk to committed.\n"
               "# TYPE aurorad_frame_latency_seconds histogram\n");
    uint64_t cum = 0;
    for (int b = 0; b < COUNTERS_BUCKETS; b++) {
        cum += c->latency_bucket[b];
        fprintf(f, "aurorad_frame_latency_seconds_bucket{le=\"%g\"} %llu\n", counters_bucket_le[b],
                (unsigned long long)cum);
    }
    cum += c->latency_bucket[COUNTERS_BUCKETS];
    fprintf(f, "aurorad_frame_latency_seconds_bucket{le=\"+Inf\"} %llu\n", (unsigned long long)cum);
    fprintf(f, "aurorad_frame_latency_seconds_sum %.6f\n", c->latency_sum_s);
    fprintf(f, "aurorad_frame_latency_seconds_count %llu\n", (unsigned long long)cum);
    metric(f, "aurorad_outbox_files", "gauge",
           "Packed frames waiting in the outbox (not yet sent).", m->outbox.files);
    metric(f, "aurorad_outbox_bytes", "gauge",
           "Bytes of packed frames waiting in the outbox.", m->outbox.bytes);
    double age = m->outbox.files ? (double)(m->now_s - m->outbox.oldest_mtime_s) : 0;
    fprintf(f, "# HELP aurorad_outbox_oldest_age_seconds Age of the oldest unsent packed frame (0: none).\n"
               "# TYPE aurorad_outbox_oldest_age_seconds gauge\naurorad_outbox_oldest_age_seconds %.0f\n",
            age < 0 ? 0 : age);
    metric(f, "aurorad_incoming_files", "gauge",
           "Files waiting in incoming (not yet packed).", m->incoming.files);
    metric(f, "aurorad_incoming_bytes", "gauge", "Bytes waiting in incoming.", m->incoming.bytes);
    metric(f, "aurorad_done_files", "gauge", "Originals kept in done_dir.", m->done_files);
    metric(f, "aurorad_done_bytes", "gauge", "Bytes of originals kept in done_dir.", m->done_bytes);
    metric(f, "aurorad_in_flight", "gauge", "Frames being packed now.", m->in_flight);
    metric(f, "aurorad_verify_queued", "gauge",
           "Packed frames waiting for a verify thread.", m->verify_queued);
    metric(f, "aurorad_held_files", "gauge", "Files left in incoming that cannot be moved aside.", m->held);
    metric(f, "aurorad_outbox_paused", "gauge",
           "1 while packing pauses (outbox fault or disk reserve).", m->outbox_paused);
    fprintf(f, "# HELP aurorad_disk_free_bytes Free bytes on each configured directory's file system.\n"
               "# TYPE aurorad_disk_free_bytes gauge\n");
    for (int i = 0; i < m->dirs; i++)
        if (m->dir_free[i] != UINT64_MAX)
            fprintf(f, "aurorad_disk_free_bytes{dir=\"%s\"} %llu\n", m->dir_key[i],
                    (unsigned long long)m->dir_free[i]);
    fprintf(f, "# HELP aurorad_gpu_up 1 when the configured GPU packs frames, 0 when missing, "
               "out of service or unused (a profile the GPU encoder lacks).\n"
               "# TYPE aurorad_gpu_up gauge\n");
    for (int i = 0; i < m->gpus; i++)
        fprintf(f, "aurorad_gpu_up{device=\"%s\"} %d\n", m->gpu_label[i], m->gpu_up[i]);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        snprintf(err, err_len, "%s: cannot write: %s", tmp, strerror(errno));
        unlink(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        snprintf(err, err_len, "%s: cannot rename into place: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

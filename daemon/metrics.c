#include "metrics.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
    fprintf(f, "# HELP aurorad_over_budget_total Frames committed later than budget_seconds.\n"
               "# TYPE aurorad_over_budget_total counter\naurorad_over_budget_total %llu\n",
            (unsigned long long)c->over_budget);
    fprintf(f, "# HELP aurorad_retries_total Faults retried (outbox and single files).\n"
               "# TYPE aurorad_retries_total counter\naurorad_retries_total %llu\n",
            (unsigned long long)c->retries);
    fprintf(f, "# HELP aurorad_gpu_fallbacks_total Frames redone on the CPU after a GPU failed.\n"
               "# TYPE aurorad_gpu_fallbacks_total counter\naurorad_gpu_fallbacks_total %llu\n",
            (unsigned long long)c->gpu_fallbacks);
    fprintf(f, "# HELP aurorad_bytes_in_total Bytes of originals packed.\n"
               "# TYPE aurorad_bytes_in_total counter\naurorad_bytes_in_total %llu\n",
            (unsigned long long)c->bytes_in);
    fprintf(f, "# HELP aurorad_bytes_out_total Bytes of packed copies committed.\n"
               "# TYPE aurorad_bytes_out_total counter\naurorad_bytes_out_total %llu\n",
            (unsigned long long)c->bytes_out);
    fprintf(f, "# HELP aurorad_retention_removed_total Originals removed from done_dir by retention.\n"
               "# TYPE aurorad_retention_removed_total counter\naurorad_retention_removed_total %llu\n",
            (unsigned long long)c->retention_removed);
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
    fprintf(f, "# HELP aurorad_outbox_files Packed frames waiting in the outbox (not yet sent).\n"
               "# TYPE aurorad_outbox_files gauge\naurorad_outbox_files %d\n", m->outbox.files);
    fprintf(f, "# HELP aurorad_outbox_bytes Bytes of packed frames waiting in the outbox.\n"
               "# TYPE aurorad_outbox_bytes gauge\naurorad_outbox_bytes %llu\n",
            (unsigned long long)m->outbox.bytes);
    double age = m->outbox.files ? (double)(m->now_s - m->outbox.oldest_mtime_s) : 0;
    fprintf(f, "# HELP aurorad_outbox_oldest_age_seconds Age of the oldest unsent packed frame (0: none).\n"
               "# TYPE aurorad_outbox_oldest_age_seconds gauge\naurorad_outbox_oldest_age_seconds %.0f\n",
            age < 0 ? 0 : age);
    fprintf(f, "# HELP aurorad_incoming_files Files waiting in incoming (not yet packed).\n"
               "# TYPE aurorad_incoming_files gauge\naurorad_incoming_files %d\n", m->incoming.files);
    fprintf(f, "# HELP aurorad_incoming_bytes Bytes waiting in incoming.\n"
               "# TYPE aurorad_incoming_bytes gauge\naurorad_incoming_bytes %llu\n",
            (unsigned long long)m->incoming.bytes);
    fprintf(f, "# HELP aurorad_done_files Originals kept in done_dir.\n"
               "# TYPE aurorad_done_files gauge\naurorad_done_files %llu\n",
            (unsigned long long)m->done_files);
    fprintf(f, "# HELP aurorad_done_bytes Bytes of originals kept in done_dir.\n"
               "# TYPE aurorad_done_bytes gauge\naurorad_done_bytes %llu\n",
            (unsigned long long)m->done_bytes);
    fprintf(f, "# HELP aurorad_in_flight Frames being packed now.\n"
               "# TYPE aurorad_in_flight gauge\naurorad_in_flight %d\n", m->in_flight);
    fprintf(f, "# HELP aurorad_verify_queued Packed frames waiting for a verify thread.\n"
               "# TYPE aurorad_verify_queued gauge\naurorad_verify_queued %d\n", m->verify_queued);
    fprintf(f, "# HELP aurorad_held_files Files left in incoming that cannot be moved aside.\n"
               "# TYPE aurorad_held_files gauge\naurorad_held_files %d\n", m->held);
    fprintf(f, "# HELP aurorad_outbox_paused 1 while packing pauses (outbox fault or disk reserve).\n"
               "# TYPE aurorad_outbox_paused gauge\naurorad_outbox_paused %d\n", m->outbox_paused);
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

/* metrics.c: node_exporter textfile format; the histogram's buckets are
 * cumulative and end at +Inf = count; every labelled series is there. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "metrics.h"
#include "scratch_dir.h"

TestSuite(daemon_metrics, .init = scratch_dir_make, .fini = scratch_dir_remove);

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static void has_line(const char *text, const char *line)
{
    char want[512];
    snprintf(want, sizeof want, "\n%s\n", line);
    cr_assert(strstr(text, want) != NULL, "missing line: %s", line);
}

Test(daemon_metrics, every_series_in_textfile_format)
{
    counters c = {0};
    c.committed = 10;
    c.recovered = 1;
    c.quarantined = 2;
    c.over_budget = 3;
    counters_add_latency(&c, counters_bucket_le[0] / 2);
    counters_add_latency(&c, counters_bucket_le[1]);
    counters_add_latency(&c, 1e9);
    metrics_snapshot m = {0};
    m.totals = &c;
    m.now_s = 1000;
    m.outbox.files = 4;
    m.outbox.bytes = 4096;
    m.outbox.oldest_mtime_s = 940;
    m.incoming.files = 2;
    m.verify_queued = 5;
    m.dirs = 2;
    m.dir_key[0] = "incoming";
    m.dir_free[0] = 111;
    m.dir_key[1] = "outbox";
    m.dir_free[1] = 222;
    m.gpus = 2;
    snprintf(m.gpu_label[0], 48, "gpu:0");
    m.gpu_up[0] = true;
    snprintf(m.gpu_label[1], 48, "gpu:1");
    m.gpu_up[1] = false;
    char path[256], err[512];
    snprintf(path, sizeof path, "%s/aurorad.prom", scratch_dir);
    cr_assert_eq(metrics_write(path, &m, err, sizeof err), 0, "%s", err);
    const char *t = slurp(path);
    has_line(t, "aurorad_frames_total{outcome=\"committed\"} 10");
    has_line(t, "aurorad_frames_total{outcome=\"recovered\"} 1");
    has_line(t, "aurorad_frames_total{outcome=\"quarantined\"} 2");
    has_line(t, "aurorad_over_budget_total 3");
    char b0[128], b1[128];
    snprintf(b0, sizeof b0, "aurorad_frame_latency_seconds_bucket{le=\"%g\"} 1", counters_bucket_le[0]);
    snprintf(b1, sizeof b1, "aurorad_frame_latency_seconds_bucket{le=\"%g\"} 2", counters_bucket_le[1]);
    has_line(t, b0);
    has_line(t, b1); /* cumulative */
    has_line(t, "aurorad_frame_latency_seconds_bucket{le=\"+Inf\"} 3");
    has_line(t, "aurorad_frame_latency_seconds_count 3");
    has_line(t, "aurorad_outbox_files 4");
    has_line(t, "aurorad_outbox_bytes 4096");
    has_line(t, "aurorad_outbox_oldest_age_seconds 60");
    has_line(t, "aurorad_incoming_files 2");
    has_line(t, "aurorad_verify_queued 5");
    has_line(t, "aurorad_disk_free_bytes{dir=\"incoming\"} 111");
    has_line(t, "aurorad_disk_free_bytes{dir=\"outbox\"} 222");
    has_line(t, "aurorad_gpu_up{device=\"gpu:0\"} 1");
    has_line(t, "aurorad_gpu_up{device=\"gpu:1\"} 0");
    cr_assert(strstr(t, "# TYPE aurorad_frame_latency_seconds histogram") != NULL);
    /* written through a temporary file: nothing else is left beside it */
    char cmd[400];
    snprintf(cmd, sizeof cmd, "test $(ls -A %s | wc -l) -eq 1", scratch_dir);
    cr_assert_eq(system(cmd), 0);
}

Test(daemon_metrics, an_unwritable_directory_is_an_error)
{
    counters c = {0};
    metrics_snapshot m = {0};
    m.totals = &c;
    char err[512];
    cr_assert_eq(metrics_write("/nonexistent/dir/aurorad.prom", &m, err, sizeof err), -1);
    cr_assert(strstr(err, "/nonexistent/dir") != NULL, "%s", err);
}

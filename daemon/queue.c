#include "queue.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "counters.h"
#include "retention.h"
#include "spool.h"

static void human_bytes(uint64_t b, char *out, size_t cap)
{
    static const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int i = 0;
    while (v >= 1024 && i < 4) {
        v /= 1024;
        i++;
    }
    snprintf(out, cap, i ? "%.1f %s" : "%.0f %s", v, u[i]);
}

static void human_age(double s, char *out, size_t cap)
{
    if (s < 0) s = 0;
    if (s < 120) snprintf(out, cap, "%.0fs", s);
    else if (s < 7200) snprintf(out, cap, "%.0fm", s / 60);
    else if (s < 172800) snprintf(out, cap, "%.1fh", s / 3600);
    else snprintf(out, cap, "%.1fd", s / 86400);
}

/* Whether a daemon holds the lock of this state directory, and its pid. */
static bool daemon_running(const char *state_dir, long *pid)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/aurorad.lock", state_dir);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    bool held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    char buf[32] = "";
    ssize_t n = read(fd, buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = 0;
    *pid = atol(buf);
    close(fd);
    return held;
}

int queue_print(const aurorad_config *c, const char *cfg_path, int max_listed, FILE *out)
{
    time_t now = time(NULL);
    char b1[32], b2[32], a1[32];
    spool_summary ob;
    if (spool_scan(c->outbox_dir, ".aurp", 1, &ob) != 0) {
        fprintf(stderr, "%s: cannot list: %s\n", c->outbox_dir, strerror(errno));
        return 1;
    }
    long pid = 0;
    bool running = daemon_running(c->state_dir, &pid);
    char status[1600] = "", devices[700] = "";
    counters_read_text(c->state_dir, "status", status, sizeof status);
    counters_read_text(c->state_dir, "devices", devices, sizeof devices);
    fprintf(out, "aurorad queue (%s)\n", cfg_path);
    if (running) fprintf(out, "daemon:    running, pid %ld\n", pid);
    else fprintf(out, "daemon:    NOT RUNNING (no process holds %s/aurorad.lock)\n", c->state_dir);
    fprintf(out, "devices:   %s%s\n", devices[0] ? devices : "unknown (no counters yet)",
            c->gpus ? "" : " (gpus: 0 in the configuration)");
    if (status[0]) fprintf(out, "status:    %s%s\n", status, running ? "" : " (when it last ran)");

    human_bytes(ob.bytes, b1, sizeof b1);
    fprintf(out, "\n-Packed frame (outbox, capture order)-------------- -Size- -Waiting-\n");
    for (int i = 0; i < ob.files && i < max_listed; i++) {
        human_bytes(ob.list[i].size, b2, sizeof b2);
        human_age((double)(now - ob.list[i].mtime_s), a1, sizeof a1);
        fprintf(out, "%-50s %10s %8s\n", ob.list[i].name, b2, a1);
    }
    if (ob.files > max_listed) fprintf(out, "... and %d more\n", ob.files - max_listed);
    if (ob.files) {
        human_age((double)(now - ob.oldest_mtime_s), a1, sizeof a1);
        fprintf(out, "-- %s in %d unsent frame%s; oldest waiting %s (%s)\n", b1, ob.files,
                ob.files == 1 ? "" : "s", a1, ob.oldest);
    } else {
        fprintf(out, "-- outbox is empty: every packed frame has been sent\n");
    }
    spool_free(&ob);

    spool_summary in, done;
    if (spool_scan(c->incoming_dir, NULL, 0, &in) == 0) {
        human_bytes(in.bytes, b1, sizeof b1);
        fprintf(out, "\nincoming:  %d file%s, %s not yet packed", in.files, in.files == 1 ? "" : "s", b1);
        if (in.files) {
            human_age((double)(now - in.oldest_mtime_s), a1, sizeof a1);
            fprintf(out, "; oldest %s", a1);
        }
        fputc('\n', out);
    }
    if (c->done_dir[0] && spool_scan(c->done_dir, NULL, 0, &done) == 0) {
        human_bytes(done.bytes, b1, sizeof b1);
        fprintf(out, "done:      %d original%s kept, %s\n", done.files, done.files == 1 ? "" : "s", b1);
    }
    const char *keys[] = {"incoming", "outbox", "done", "quarantine", "state"};
    const char *dirs[] = {c->incoming_dir, c->outbox_dir, c->done_dir, c->quarantine_dir, c->state_dir};
    fprintf(out, "disk free:");
    for (int i = 0; i < 5; i++) {
        if (!dirs[i][0]) continue;
        uint64_t f = disk_free_bytes(dirs[i]);
        if (f == UINT64_MAX) snprintf(b1, sizeof b1, "?");
        else human_bytes(f, b1, sizeof b1);
        fprintf(out, " %s %s%s", keys[i], b1,
                f != UINT64_MAX && c->disk_warn_free && f < c->disk_warn_free ? " (LOW)" : "");
    }
    fputc('\n', out);

    counters t;
    char err[600];
    if (counters_load(c->state_dir, &t, err, sizeof err) != 0) {
        fprintf(out, "totals:    unreadable: %s\n", err);
        return 0;
    }
    char since[32];
    struct tm tm;
    time_t ss = (time_t)t.since_s;
    gmtime_r(&ss, &tm);
    strftime(since, sizeof since, "%Y-%m-%dT%H:%MZ", &tm);
    human_bytes(t.bytes_in, b1, sizeof b1);
    human_bytes(t.bytes_out, b2, sizeof b2);
    fprintf(out, "totals since %s: %llu committed, %llu recovered, %llu quarantined, "
                 "%llu over budget, %llu retries, %llu GPU fallbacks; %s in, %s out; "
                 "%llu originals removed by retention\n",
            since, (unsigned long long)t.committed, (unsigned long long)t.recovered,
            (unsigned long long)t.quarantined, (unsigned long long)t.over_budget,
            (unsigned long long)t.retries, (unsigned long long)t.gpu_fallbacks, b1, b2,
            (unsigned long long)t.retention_removed);
    return 0;
}

#include "counters.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commit.h"

const double counters_bucket_le[COUNTERS_BUCKETS] = {0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60, 120, 300};

void counters_add_latency(counters *c, double seconds)
{
    int b = 0;
    while (b < COUNTERS_BUCKETS && seconds > counters_bucket_le[b]) b++;
    c->latency_bucket[b]++;
    c->latency_sum_s += seconds;
    c->latency_count++;
}

/* key -> field, for the integer counters */
static uint64_t *field(counters *c, const char *key)
{
    static const struct { const char *k; size_t off; } f[] = {
        {"committed", offsetof(counters, committed)},
        {"recovered", offsetof(counters, recovered)},
        {"quarantined", offsetof(counters, quarantined)},
        {"over_budget", offsetof(counters, over_budget)},
        {"retries", offsetof(counters, retries)},
        {"gpu_fallbacks", offsetof(counters, gpu_fallbacks)},
        {"bytes_in", offsetof(counters, bytes_in)},
        {"bytes_out", offsetof(counters, bytes_out)},
        {"retention_removed", offsetof(counters, retention_removed)},
        {"retention_removed_bytes", offsetof(counters, retention_removed_bytes)},
        {"latency_count", offsetof(counters, latency_count)},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (!strcmp(key, f[i].k)) return (uint64_t *)((char *)c + f[i].off);
    return NULL;
}

int counters_load(const char *state_dir, counters *c, char *err, size_t err_len)
{
    memset(c, 0, sizeof *c);
    c->since_s = (int64_t)time(NULL);
    char path[4200];
    snprintf(path, sizeof path, "%s/counters", state_dir);
    FILE *f = fopen(path, "re");
    if (!f) {
        if (errno == ENOENT) return 0;
        snprintf(err, err_len, "%s: cannot read: %s", path, strerror(errno));
        return -1;
    }
    counters got = *c;
    char line[2048];
    int lineno = 0, bad = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char key[64];
        unsigned long long v;
        double d;
        int b;
        if (sscanf(line, "latency_bucket_%d %llu", &b, &v) == 2 && b >= 0 && b <= COUNTERS_BUCKETS)
            got.latency_bucket[b] = v;
        else if (sscanf(line, "latency_sum_s %lf", &d) == 1) got.latency_sum_s = d;
        else if (sscanf(line, "since_s %llu", &v) == 1) got.since_s = (int64_t)v;
        else if (sscanf(line, "%63s %llu", key, &v) == 2 && field(&got, key)) *field(&got, key) = v;
        else if (!strncmp(line, "status ", 7) || !strncmp(line, "devices ", 8) ||
                 !strncmp(line, "saved_at ", 9) || !strncmp(line, "pid ", 4)) continue;
        else if (!bad) bad = lineno;
    }
    fclose(f);
    if (bad) {
        snprintf(err, err_len, "%s:%d: not a counter line", path, bad);
        return -1;
    }
    *c = got;
    return 0;
}

int counters_save(const char *state_dir, const counters *c, const char *status,
                  const char *devices, char *err, size_t err_len)
{
    char buf[8192];
    size_t o = 0;
#define PUT(...) o += (size_t)snprintf(buf + o, o < sizeof buf ? sizeof buf - o : 0, __VA_ARGS__)
    PUT("since_s %" PRId64 "\n", c->since_s);
    PUT("saved_at %lld\n", (long long)time(NULL));
    counters tmp = *c;
    static const char *keys[] = {"committed", "recovered", "quarantined", "over_budget", "retries",
                                 "gpu_fallbacks", "bytes_in", "bytes_out", "retention_removed",
                                 "retention_removed_bytes", "latency_count"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        PUT("%s %llu\n", keys[i], (unsigned long long)*field(&tmp, keys[i]));
    for (int b = 0; b <= COUNTERS_BUCKETS; b++)
        PUT("latency_bucket_%d %llu\n", b, (unsigned long long)c->latency_bucket[b]);
    PUT("latency_sum_s %.6f\n", c->latency_sum_s);
    PUT("pid %ld\n", (long)getpid());
    if (status) PUT("status %.1500s\n", status);
    if (devices) PUT("devices %.600s\n", devices);
#undef PUT
    if (o >= sizeof buf) o = sizeof buf - 1;
    return commit_write_atomic(state_dir, "counters", buf, o, err, err_len);
}

bool counters_read_text(const char *state_dir, const char *key, char *out, size_t cap)
{
    char path[4200], line[2048];
    snprintf(path, sizeof path, "%s/counters", state_dir);
    FILE *f = fopen(path, "re");
    if (!f) return false;
    size_t kl = strlen(key);
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, kl) || line[kl] != ' ') continue;
        line[strcspn(line, "\n")] = 0;
        snprintf(out, cap, "%s", line + kl + 1);
        found = true;
    }
    fclose(f);
    return found;
}

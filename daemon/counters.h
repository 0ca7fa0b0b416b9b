/* Totals that survive restarts: frames by outcome, over budget, retries,
 * bytes, and the frame latency histogram.  Kept in STATE_DIR/counters as
 * "key value" lines, written atomically (temporary file, fsync, rename),
 * so a crash leaves the previous or the new file, never a torn one; at
 * most the last few seconds of counts are lost on a power cut.  Also
 * holds the daemon's last STATUS text and device states, for
 * `aurorad --queue`. */
#ifndef AURORAD_COUNTERS_H
#define AURORAD_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Upper bounds (seconds) of the latency histogram's buckets; +Inf follows. */
#define COUNTERS_BUCKETS 12
extern const double counters_bucket_le[COUNTERS_BUCKETS];

typedef struct {
    uint64_t committed, recovered, quarantined, over_budget, retries, gpu_fallbacks;
    uint64_t bytes_in, bytes_out;
    uint64_t retention_removed, retention_removed_bytes;
    uint64_t latency_bucket[COUNTERS_BUCKETS + 1]; /* per bucket, not cumulative; last = +Inf */
    double latency_sum_s;
    uint64_t latency_count;
    int64_t since_s;        /* when the counters were first created (wall clock) */
} counters;

void counters_add_latency(counters *c, double seconds);

/* Reads STATE_DIR/counters; a missing file gives zeros (since = now) and
 * 0; an unreadable or damaged file -1 with err (the caller starts from
 * zero and says so). */
int counters_load(const char *state_dir, counters *c, char *err, size_t err_len);

/* Writes STATE_DIR/counters atomically, with extra "key text" lines
 * (status, devices) appended as they are. */
int counters_save(const char *state_dir, const counters *c, const char *status,
                  const char *devices, char *err, size_t err_len);

/* The text of key in STATE_DIR/counters (status, devices, saved_at); false if absent. */
bool counters_read_text(const char *state_dir, const char *key, char *out, size_t cap);

#endif

/* Retention of the originals in done_dir, and the free space of the disks.
 *
 * Everything in done_dir got there after its packed copy was committed to
 * the outbox (commit.c, step 3), so any visible file there may go; hidden
 * names (a copy in progress across file systems) are never touched.
 * Originals are removed oldest first (by mtime, which the move keeps: the
 * writer's time), while any rule holds:
 *   - older than max_age_s,
 *   - done_dir holds more than max_bytes,
 *   - done_dir's file system has less than min_free bytes free.
 * docs/OPERATIONS.md section 12 gives the order in which things give way
 * when the disk is nearly full. */
#ifndef AURORAD_RETENTION_H
#define AURORAD_RETENTION_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    uint64_t min_free;  /* 0 = off */
    uint64_t max_bytes; /* 0 = off */
    double max_age_s;   /* 0 = off */
} retention_rules;

typedef struct {
    int removed;
    uint64_t removed_bytes;
    int by_age, by_size, by_free;   /* which rule removed them */
    int kept;
    uint64_t kept_bytes;
    double oldest_kept_age_s;       /* 0 when none is kept */
    uint64_t free_after;            /* done_dir's disk, after the pass */
    bool free_unmet;                /* min_free not reached with nothing left to remove */
    int errors;
    char first_error[512];
} retention_report;

bool retention_enabled(const retention_rules *r);

/* One pass over done_dir at wall-clock time now_s.  Returns -1 (errno)
 * when done_dir cannot be listed. */
int retention_pass(const char *done_dir, const retention_rules *r, double now_s,
                   retention_report *rep);

/* Bytes an unprivileged writer can still write on dir's file system;
 * UINT64_MAX when unknown (statvfs failed). */
uint64_t disk_free_bytes(const char *dir);

/* How low free space is against the warning level warn: 0 at or above it,
 * 1 below it, 2 below half of it, 3 below a quarter ... (at most 8), so
 * that a warning is logged each time free space halves again. */
int disk_low_level(uint64_t free_bytes, uint64_t warn);

#endif

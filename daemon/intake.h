/* The incoming directory as the loop thread sees it: every file it knows,
 * when each became complete, and the two queues that decide which frame
 * goes next.  Pure bookkeeping (stat and a header read per look); no libuv,
 * no threads, so it is unit-tested directly.
 *
 * Readiness: a file is taken when its FITS structure is complete and its
 * size and mtime have not changed for settle_ms, at once when it is
 * complete and older than settle_ms at first sight (moved into place, or
 * the start-up backlog).  Not-FITS files are taken (to be quarantined)
 * after settle_ms unchanged; files whose structure stays incomplete after
 * stall_seconds unchanged are taken as truncated.
 *
 * Scheduling: frames seen at start-up (or after a reload) are the backlog;
 * everything later is new.  When both queues hold frames, picks alternate,
 * new first, so a backlog never starves new frames and still drains.
 */
#ifndef AURORAD_INTAKE_H
#define AURORAD_INTAKE_H

#include <stdbool.h>
#include <stdint.h>

#include "fitsready.h"
#include "worker.h"

typedef enum {
    ENTRY_WATCHING = 0, /* not complete yet */
    ENTRY_QUEUED,       /* complete, waiting for a worker */
    ENTRY_IN_FLIGHT,    /* a worker has it */
} entry_state;

typedef struct {
    char name[JOB_NAME_MAX];
    entry_state state;
    bool backlog;
    uint64_t size;
    int64_t mtime_ns;     /* wall clock */
    int64_t stable_since; /* monotonic: last change of size or mtime */
    int64_t first_seen;
    int64_t t_complete;
    uint64_t seq;         /* queue order */
    fitsready_result fits;
    bool fits_known;
} entry;

typedef struct {
    char dir[4096];
    int settle_ms;
    double stall_seconds;
    entry *e;
    int n, cap;
    uint64_t next_seq;
    bool last_pick_new;
} intake;

void intake_init(intake *in, const char *dir, int settle_ms, double stall_seconds);
void intake_free(intake *in);

/* Whether a directory entry name is a candidate frame (not hidden, not a
 * writer's temporary file). */
bool intake_name_wanted(const char *name);

/* Looks at one name again (event or rescan); backlog marks files found by
 * the start-up scan.  Returns true when it became QUEUED. */
bool intake_look(intake *in, const char *name, bool backlog, int64_t now);

/* Lists the directory and looks at every name; returns names queued. */
int intake_rescan(intake *in, bool backlog, int64_t now);

/* Looks again at every WATCHING entry (settle timer). */
int intake_tick(intake *in, int64_t now);

/* The next job (marks it IN_FLIGHT); false when both queues are empty. */
bool intake_pick(intake *in, job *j);

/* A worker finished with it: forget it (gone) or queue it again (retry). */
void intake_done(intake *in, const char *name, bool requeue);

int intake_count(const intake *in, entry_state s, int backlog /* -1 any, 0 new, 1 backlog */);

#endif

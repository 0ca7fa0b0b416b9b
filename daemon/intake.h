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
 *
 * No file holds back the others: a file whose handling failed for a reason
 * that may pass goes to the back of its queue with its own backoff
 * (not_before); a file that cannot even be moved aside is HELD: left where
 * it is and skipped until its inode, size or mtime changes.
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
    ENTRY_HELD,         /* cannot be handled (nor moved aside): skipped until it changes */
} entry_state;

typedef struct {
    char name[JOB_NAME_MAX];
    entry_state state;
    bool backlog;
    uint64_t size;
    int64_t mtime_ns;     /* wall clock */
    uint64_t dev, ino;
    int64_t stable_since; /* monotonic: last change of size or mtime */
    int64_t first_seen;
    int64_t t_complete;
    uint64_t seq;         /* queue order */
    fitsready_result fits;
    bool fits_known;
    bool unreadable;      /* regular file intake cannot open (EACCES) */
    int64_t not_before;   /* monotonic: a retried entry waits until then */
    int attempts;         /* consecutive retries, for the backoff */
} entry;

typedef struct {
    char dir[4096];
    int settle_ms;
    double stall_seconds;
    entry *e;
    int n, cap;
    uint64_t next_seq;
    bool last_pick_new;
    /* called once when a file is refused at intake (name too long); the
     * loop logs it.  NULL: nobody is told. */
    void (*on_refused)(const char *name, const char *reason);
} intake;

void intake_init(intake *in, const char *dir, int settle_ms, double stall_seconds);
void intake_free(intake *in);

/* Whether a directory entry name is a candidate frame (not hidden, not a
 * writer's temporary file).  Names longer than JOB_NAME_ACCEPTED are
 * candidates too, so that they are refused loudly rather than ignored. */
bool intake_name_wanted(const char *name);

/* Looks at one name again (event or rescan); backlog marks files found by
 * the start-up scan.  Returns true when it became QUEUED. */
bool intake_look(intake *in, const char *name, bool backlog, int64_t now);

/* Lists the directory and looks at every name; returns names queued. */
int intake_rescan(intake *in, bool backlog, int64_t now);

/* Looks again at every WATCHING entry (settle timer). */
int intake_tick(intake *in, int64_t now);

/* The next job due at now (marks it IN_FLIGHT); false when none is due. */
bool intake_pick(intake *in, job *j, int64_t now);

/* When the earliest retried entry becomes due (0: none waits). */
int64_t intake_next_due(const intake *in);

/* A worker finished with it (committed, quarantined, vanished): forget it. */
void intake_forget(intake *in, const char *name);

/* A fault that may pass: back of its queue, due after a backoff that starts
 * at 250 ms and doubles per consecutive retry up to cap_ns.  Returns the
 * delay; *attempt is the number of consecutive retries. */
int64_t intake_retry(intake *in, const char *name, int64_t now, int64_t cap_ns, int *attempt);

/* Cannot be handled nor moved aside: skipped until it changes. */
void intake_hold(intake *in, const char *name);

/* Changed under the worker: watched again, must settle again. */
void intake_rewatch(intake *in, const char *name, int64_t now);

int intake_count(const intake *in, entry_state s, int backlog /* -1 any, 0 new, 1 backlog */);

#endif

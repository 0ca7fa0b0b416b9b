/* aurorad workers: threads that take frames from disk to the outbox.
 *
 * One worker per GPU handle (split: columns = one handle over every device;
 * split: frames = one handle per device) and cpu_workers CPU workers, the
 * encoders; and verify_workers verify threads (verifypool.h).  A job is only
 * a file name: the encoder reads the file and packs it (frame/), then hands
 * the packed copy to the verify pool and takes its next job; a verify thread
 * checks the copy, commits it (commit.c) and reports a result to the loop
 * thread through the wake callback.  A frame that ends before it is packed
 * (quarantine, changed, vanished) is reported by its encoder.  The loop
 * never blocks on a worker, and a worker never touches the loop's data.
 *
 * Threads, bounded: GPU workers + cpu_workers x cpu_threads + verify_workers
 * (pool_threads), besides the loop and libuv's own pool.
 */
#ifndef AURORAD_WORKER_H
#define AURORAD_WORKER_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

#define JOB_NAME_MAX 256 /* NAME_MAX + 1 */

/* The longest incoming name the daemon takes: NAME.reason (the quarantine
 * note) must still fit in NAME_MAX, and so must NAME.aurp.  Longer names
 * are refused at intake, reported once, and left where they are. */
#define JOB_NAME_ACCEPTED 248

/* What intake saw of a file: the worker packs only this file, and releases
 * it only if it is still exactly this (same inode, size and mtime). */
typedef struct {
    uint64_t dev, ino, size;
    int64_t mtime_ns;
} file_ident;

typedef struct {
    char name[JOB_NAME_MAX];
    int64_t t_complete_ns; /* monotonic: when the frame was complete on disk */
    bool backlog;
    bool suspect;          /* the loop thinks it is broken (not FITS, stalled) */
    char suspect_why[200];
    file_ident seen;       /* at intake */
    bool unreadable;       /* intake could not open it (seen from lstat) */
    bool check_writers;    /* refuse it while another process has it open for writing */
} job;

typedef enum {
    OUTCOME_COMMITTED = 0,  /* packed copy in the outbox, original released */
    OUTCOME_RECOVERED,      /* outbox copy existed (restart), verified, original released */
    OUTCOME_QUARANTINED,    /* broken or unsupported: moved to quarantine_dir */
    OUTCOME_RETRY_OUTBOX,   /* the outbox cannot take files now: everything pauses */
    OUTCOME_RETRY_FILE,     /* a fault of this file only (read, release, quarantine): it
                               backs off alone, the others flow */
    OUTCOME_HELD,           /* cannot even be moved aside: left in incoming, skipped
                               until it changes */
    OUTCOME_CHANGED,        /* not what intake saw any more (replaced, growing, still open
                               for writing): watched again from the start */
    OUTCOME_VANISHED,       /* the file disappeared before it was read */
} outcome;

typedef struct {
    job j;
    outcome what;
    int worker;
    char device[48];
    uint64_t bytes_in, bytes_out, pixels;
    double wait_ms, read_ms, encode_ms, verify_ms, write_ms, release_ms, latency_ms;
    double verify_wait_ms; /* packed, waiting for a verify thread */
    int err_no;          /* RETRY_* / HELD: errno of the fault */
    bool gpu_fallback;   /* a GPU failed on this frame; it was redone on the CPU */
    bool already_sent;   /* RECOVERED: committed before a restart and already taken from
                            the outbox (journal.h); released without packing */
    char outbox_name[320]; /* COMMITTED / RECOVERED: the packed copy's name in the outbox */
    char reason[4096];   /* QUARANTINED / RETRY_* / HELD / CHANGED: why */
} result;

typedef struct pool pool;

/* Starts the workers.  wake(ud) is called from a worker thread whenever a
 * result is ready (uv_async_send).  Logs which devices it found. */
pool *pool_start(const aurorad_config *cfg, void (*wake)(void *), void *ud);

/* Encoders (GPU and CPU workers). */
int pool_workers(const pool *p);
/* Threads of the verify pool. */
int pool_verify_workers(const pool *p);
/* Packed frames waiting for a verify thread (a GPU outrunning the CPU
 * shows here first). */
int pool_verify_queued(pool *p);
/* Every thread that packs or verifies: GPU workers + CPU workers x their
 * threads + verify threads. */
int pool_threads(const pool *p);
/* The GPU handles: "gpu:0" (or "gpu:0+1" with split: columns) labels and
 * whether each is in service now; returns how many (at most max). */
int pool_gpu_states(pool *p, char labels[][48], bool *up, int max);
/* "gpu:0+1, cpu x2" style description of the devices in use. */
void pool_describe(pool *p, char *buf, size_t len);

/* Queues a job (never blocks; the loop bounds the number in flight). */
void pool_submit(pool *p, const job *j);

/* Takes one finished result; false when none. */
bool pool_take_result(pool *p, result *r);

/* True when no worker has been on one frame longer than stuck_ns. */
bool pool_healthy(pool *p, int64_t stuck_ns);

/* Finishes queued and running jobs, joins the threads, closes the GPUs.
 * Results not yet taken are freed. */
void pool_stop(pool *p);

int64_t mono_ns(void);

#endif

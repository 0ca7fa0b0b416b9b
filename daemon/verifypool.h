/* The verify pool: threads that check and commit packed frames, apart from
 * the encoders (issue #10 item 4).
 *
 * An encoder (GPU or CPU worker, worker.c) hands each packed frame here and
 * takes its next frame at once, so a GPU never waits for the CPU decode
 * that proves a frame; the two stages overlap and a backlog drains at the
 * pace of the slower one.  The pool knows nothing about frames: a task is
 * an opaque pointer that fn(task) finishes and frees.  The queue is
 * unbounded here because the loop bounds the frames in flight
 * (max_in_flight), which bounds it.
 */
#ifndef AURORAD_VERIFYPOOL_H
#define AURORAD_VERIFYPOOL_H

#include <stdbool.h>
#include <stdint.h>

typedef struct verify_pool verify_pool;
typedef void (*verify_fn)(void *task);

/* Starts threads (>= 1) that run fn on each submitted task; NULL when out
 * of memory or threads. */
verify_pool *verify_pool_start(int threads, verify_fn fn);

int verify_pool_threads(const verify_pool *vp);

/* Queues a task (never blocks). */
void verify_pool_submit(verify_pool *vp, void *task);

/* Tasks queued, not yet taken by a thread (for the tests and the status). */
int verify_pool_queued(verify_pool *vp);

/* True when no thread has been on one task longer than stuck_ns (now and
 * the start times are monotonic nanoseconds, as mono_ns()). */
bool verify_pool_healthy(verify_pool *vp, int64_t now, int64_t stuck_ns);

/* Runs every queued task to its end, then joins the threads and frees the
 * pool.  Call after the encoders are joined: nothing may submit any more. */
void verify_pool_stop(verify_pool *vp);

#endif

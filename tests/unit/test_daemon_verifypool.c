/* verifypool.c: every submitted task runs exactly once, on several threads
 * at once, and stop runs what is still queued before it returns. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "verifypool.h"

static _Atomic int ran[1000];
static _Atomic int running, most_at_once;

static void task_fn(void *task)
{
    int now = ++running;
    int seen = most_at_once;
    while (now > seen && !atomic_compare_exchange_weak(&most_at_once, &seen, now)) {}
    usleep(2000); /* long enough that the threads overlap */
    ran[*(int *)task]++;
    running--;
    free(task);
}

static void submit_n(verify_pool *vp, int n)
{
    for (int i = 0; i < n; i++) {
        int *t = malloc(sizeof *t);
        cr_assert_not_null(t);
        *t = i;
        verify_pool_submit(vp, t);
    }
}

Test(daemon_verifypool, every_task_once_across_threads)
{
    verify_pool *vp = verify_pool_start(4, task_fn);
    cr_assert_not_null(vp);
    cr_assert_eq(verify_pool_threads(vp), 4);
    submit_n(vp, 200);
    verify_pool_stop(vp); /* runs the queued ones first */
    for (int i = 0; i < 200; i++) cr_assert_eq(ran[i], 1, "task %d ran %d times", i, ran[i]);
    cr_assert_gt(most_at_once, 1, "the tasks never overlapped");
    cr_assert_leq(most_at_once, 4);
}

Test(daemon_verifypool, at_least_one_thread_and_health)
{
    verify_pool *vp = verify_pool_start(0, task_fn);
    cr_assert_not_null(vp);
    cr_assert_eq(verify_pool_threads(vp), 1);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    cr_assert(verify_pool_healthy(vp, now, 1000000000));
    cr_assert_eq(verify_pool_queued(vp), 0);
    submit_n(vp, 3);
    verify_pool_stop(vp);
    for (int i = 0; i < 3; i++) cr_assert_eq(ran[i], 1);
}

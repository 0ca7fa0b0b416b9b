/* Fork-join over C11 threads for the independent phases of the codec. */
#include <stdlib.h>
#include <threads.h>

#include "internal.h"

typedef struct {
    void (*fn)(void *ctx, int i);
    void *ctx;
    int i;
} job;

static int run_job(void *arg)
{
    job *j = arg;
    j->fn(j->ctx, j->i);
    return 0;
}

int aurp_parallel(int n, void (*fn)(void *ctx, int i), void *ctx)
{
    if (n <= 1) {
        fn(ctx, 0);
        return 0;
    }
    thrd_t *th = malloc((size_t)n * sizeof *th);
    job *jobs = malloc((size_t)n * sizeof *jobs);
    int *started = calloc((size_t)n, sizeof *started);
    if (!th || !jobs || !started) {
        free(th);
        free(jobs);
        free(started);
        for (int i = 0; i < n; i++) fn(ctx, i);
        return 0;
    }
    for (int i = 1; i < n; i++) {
        jobs[i] = (job){fn, ctx, i};
        started[i] = thrd_create(&th[i], run_job, &jobs[i]) == thrd_success;
    }
    fn(ctx, 0);
    /* A job whose thread could not start runs here: same result, later. */
    for (int i = 1; i < n; i++) {
        if (started[i]) thrd_join(th[i], NULL);
        else fn(ctx, i);
    }
    free(th);
    free(jobs);
    free(started);
    return 0;
}

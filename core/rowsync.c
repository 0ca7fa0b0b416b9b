/* aurp_decode_rows (internal.h): row-synchronised band workers for the
 * decoders.  Band b > 0 runs on its own thread and, for row m, waits until
 * the caller has published rows < m, then runs prepare(ctx, b, m) and says
 * so.  The caller prepares band 0 itself, waits for the others,
 * reconstructs the row and publishes it.  Spinning first keeps a row's hand-over cheap (a frame has
 * a thousand of them); a condition variable keeps a long wait idle. */
#include <stdatomic.h>
#include <stdlib.h>
#include <threads.h>

#include "internal.h"

#define MAX_BANDS 64

typedef struct aurp_rowsync aurp_rowsync;
static void rowsync_stop(aurp_rowsync *rs);

struct aurp_rowsync {
    void (*prepare)(void *ctx, int band, uint32_t m);
    void *ctx;
    uint32_t height;
    int nb, started;
    atomic_uint done_rows;        /* rows reconstructed by the caller */
    atomic_uint ready[MAX_BANDS]; /* m + 1 once band b prepared row m */
    atomic_int stop;
    mtx_t mu;
    cnd_t cv;
    thrd_t th[MAX_BANDS];
    struct worker {
        aurp_rowsync *rs;
        int band;
    } w[MAX_BANDS];
};

static void publish(aurp_rowsync *rs, atomic_uint *a, unsigned v)
{
    atomic_store_explicit(a, v, memory_order_release);
    mtx_lock(&rs->mu);
    cnd_broadcast(&rs->cv);
    mtx_unlock(&rs->mu);
}

/* Waits until *a >= v or stop; returns 0, or -1 when stopped. */
static int await(aurp_rowsync *rs, atomic_uint *a, unsigned v)
{
    for (int spin = 0; spin < 4000; spin++) {
        if (atomic_load_explicit(a, memory_order_acquire) >= v) return 0;
        if (atomic_load_explicit(&rs->stop, memory_order_relaxed)) return -1;
    }
    mtx_lock(&rs->mu);
    while (atomic_load_explicit(a, memory_order_acquire) < v && !atomic_load(&rs->stop))
        cnd_wait(&rs->cv, &rs->mu);
    mtx_unlock(&rs->mu);
    return atomic_load(&rs->stop) ? -1 : 0;
}

static int worker_main(void *arg)
{
    struct worker *w = arg;
    aurp_rowsync *rs = w->rs;
    for (uint32_t m = 0; m < rs->height; m++) {
        if (m > 0 && await(rs, &rs->done_rows, m) != 0) return 0;
        rs->prepare(rs->ctx, w->band, m);
        publish(rs, &rs->ready[w->band], m + 1);
    }
    return 0;
}

static aurp_rowsync *rowsync_start(int nb, uint32_t height,
                                 void (*prepare)(void *ctx, int band, uint32_t m), void *ctx)
{
    if (nb < 2 || nb > MAX_BANDS) return NULL;
    aurp_rowsync *rs = calloc(1, sizeof *rs);
    if (!rs) return NULL;
    if (mtx_init(&rs->mu, mtx_plain) != thrd_success) {
        free(rs);
        return NULL;
    }
    if (cnd_init(&rs->cv) != thrd_success) {
        mtx_destroy(&rs->mu);
        free(rs);
        return NULL;
    }
    rs->prepare = prepare;
    rs->ctx = ctx;
    rs->height = height;
    rs->nb = nb;
    for (rs->started = 1; rs->started < nb; rs->started++) {
        rs->w[rs->started] = (struct worker){rs, rs->started};
        if (thrd_create(&rs->th[rs->started], worker_main, &rs->w[rs->started]) != thrd_success) break;
    }
    if (rs->started < nb) { /* not every thread: nothing has been published, stop them */
        rowsync_stop(rs);
        return NULL;
    }
    return rs;
}

static void rowsync_wait_prepared(aurp_rowsync *rs, uint32_t m)
{
    for (int b = 1; b < rs->nb; b++) await(rs, &rs->ready[b], m + 1);
}

static void rowsync_publish_row(aurp_rowsync *rs, uint32_t m)
{
    publish(rs, &rs->done_rows, m + 1);
}

static void rowsync_stop(aurp_rowsync *rs)
{
    if (!rs) return;
    atomic_store(&rs->stop, 1);
    publish(rs, &rs->done_rows, rs->height);
    for (int b = 1; b < rs->started; b++) thrd_join(rs->th[b], NULL);
    cnd_destroy(&rs->cv);
    mtx_destroy(&rs->mu);
    free(rs);
}

int aurp_decode_rows(int nb, uint32_t height, void (*prepare)(void *ctx, int band, uint32_t m),
                     int (*reconstruct)(void *ctx, uint32_t m), void *ctx)
{
    aurp_rowsync *rs = nb > 1 ? rowsync_start(nb, height, prepare, ctx) : NULL;
    int bad = 0;
    for (uint32_t m = 0; m < height && !bad; m++) {
        if (rs) {
            prepare(ctx, 0, m);
            rowsync_wait_prepared(rs, m);
        } else {
            for (int b = 0; b < nb; b++) prepare(ctx, b, m);
        }
        bad = reconstruct(ctx, m);
        if (rs && !bad) rowsync_publish_row(rs, m);
    }
    rowsync_stop(rs);
    return bad;
}

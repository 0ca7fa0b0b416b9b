/* aurp_decode_wavefront (internal.h): a row-trained decoder whose per-row
 * preparation (training and solving, per chunk of columns) overlaps the
 * sequential reconstruction of the row before.
 *
 * The jobs are (row m, chunk k), ticketed in raster order m * nchunks + k
 * and claimed in ticket order from one atomic counter.  Job (m, k) may run
 * once the decoding thread has published row m-1 up to column need[k]; the
 * decoding thread, before reconstructing chunk k of row m, waits for job
 * (m, k), and while it waits it claims and runs jobs of rows <= m itself
 * (their inputs are complete), so it idles only while the one job it needs
 * is running elsewhere.  Workers claim the next ticket only once its
 * inputs are there, so that a claimed job is always running.
 *
 * Why jobs of one chunk never overlap: job (m+1, k) waits for the decoder
 * to pass column need[k] >= c1 of row m, which it does only after it waited
 * for job (m, k) and reconstructed the whole chunk with it; so a chunk's
 * state is also never rewritten while the decoder still reads it.
 *
 * Waiting spins briefly (a chunk's hand-over is microseconds) and then
 * sleeps on the waiter's own condition variable; a publisher wakes a waiter
 * only when what it waits for has happened, so progress published every
 * few columns costs no system call. */
#include <stdatomic.h>
#include <stdlib.h>
#include <threads.h>

#include "internal.h"

#define WF_MAX_WORKERS 63
#define WF_SPIN 2000 /* polls before sleeping: a few chunks' hand-over */

typedef struct aurp_wavefront {
    void (*prepare)(void *ctx, uint32_t chunk, uint32_t m);
    void *ctx;
    uint32_t width, height, nchunks;
    const uint32_t *need;
    uint64_t njobs;
    atomic_ullong next_job;     /* the next unclaimed ticket */
    atomic_ullong decoded;      /* raster index m * width + n: pixels before it are final */
    atomic_uint *ready;         /* [nchunks] m + 1 once chunk k is prepared for row m */
    atomic_int stop;
    mtx_t mu;
    /* a sleeping waiter's target + 1 (0: not sleeping); the publisher that
     * fulfils it clears it and signals the waiter's own variable */
    atomic_ullong decoder_wants_job;
    cnd_t decoder_cv;
    int nworkers;
    struct wf_worker {
        struct aurp_wavefront *wf;
        atomic_ullong wants_decoded;
        cnd_t cv;
        thrd_t th;
    } *workers;
} aurp_wavefront;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Clears *slot if it holds a target <= reached, and then signals cv. */
static void wake_if_fulfilled(aurp_wavefront *wf, atomic_ullong *slot, uint64_t reached, cnd_t *cv)
{
    unsigned long long want = atomic_load(slot);
    if (want == 0 || want - 1 > reached || !atomic_compare_exchange_strong(slot, &want, 0)) return;
    mtx_lock(&wf->mu);
    cnd_signal(cv);
    mtx_unlock(&wf->mu);
}

/* Waits until *counter >= target (or stop); the waiter sleeps with target
 * in *slot.  The slot store and the counter load are sequentially
 * consistent, as the publisher's counter store and slot load: one of the
 * two sees the other, so no wake-up is lost.  Returns -1 when stopped. */
static int wait_for(aurp_wavefront *wf, const atomic_ullong *counter, uint64_t target,
                    atomic_ullong *slot, cnd_t *cv)
{
    for (int spin = 0; spin < WF_SPIN; spin++) {
        if (atomic_load_explicit(counter, memory_order_acquire) >= target) return 0;
        if (atomic_load_explicit(&wf->stop, memory_order_relaxed)) return -1;
        if (spin % 64 == 63) thrd_yield(); /* more threads than cores: let the publisher run */
        else cpu_relax();
    }
    mtx_lock(&wf->mu);
    for (;;) {
        atomic_store(slot, target + 1);
        if (atomic_load(counter) >= target || atomic_load(&wf->stop)) break;
        cnd_wait(cv, &wf->mu);
    }
    atomic_store(slot, 0);
    mtx_unlock(&wf->mu);
    return atomic_load(&wf->stop) ? -1 : 0;
}

/* Job ticket t: prepares its chunk and says so. */
static void run_job(aurp_wavefront *wf, uint64_t t)
{
    uint32_t m = (uint32_t)(t / wf->nchunks), k = (uint32_t)(t % wf->nchunks);
    wf->prepare(wf->ctx, k, m);
    atomic_store(&wf->ready[k], m + 1);
    wake_if_fulfilled(wf, &wf->decoder_wants_job, t, &wf->decoder_cv);
}

static int worker_main(void *arg)
{
    struct wf_worker *w = arg;
    aurp_wavefront *wf = w->wf;
    for (;;) {
        unsigned long long t = atomic_load(&wf->next_job);
        if (t >= wf->njobs) return 0;
        uint32_t m = (uint32_t)(t / wf->nchunks), k = (uint32_t)(t % wf->nchunks);
        uint64_t inputs_at = m > 0 ? (uint64_t)(m - 1) * wf->width + wf->need[k] : 0;
        if (atomic_load_explicit(&wf->decoded, memory_order_acquire) < inputs_at) {
            /* claim only what can run now: a claimed job the decoder needs
             * must not wait for this thread to be woken and scheduled */
            if (wait_for(wf, &wf->decoded, inputs_at, &w->wants_decoded, &w->cv) != 0) return 0;
            continue; /* the decoder may have taken the ticket meanwhile */
        }
        if (atomic_compare_exchange_weak(&wf->next_job, &t, t + 1)) run_job(wf, t);
    }
}

void aurp_wavefront_await(aurp_wavefront *wf, uint32_t m, uint32_t chunk)
{
    const uint64_t wanted = (uint64_t)m * wf->nchunks + chunk;
    const uint64_t last_of_row = (uint64_t)m * wf->nchunks + wf->nchunks - 1;
    int spin = 0;
    while (atomic_load_explicit(&wf->ready[chunk], memory_order_acquire) < m + 1) {
        /* a job of this row or earlier is ready to run: do it rather than wait */
        unsigned long long t = atomic_load(&wf->next_job);
        if (t <= last_of_row) {
            if (atomic_compare_exchange_weak(&wf->next_job, &t, t + 1)) run_job(wf, t);
            continue;
        }
        if (++spin < WF_SPIN) {
            if (spin % 64 == 63) thrd_yield();
            else cpu_relax();
            continue;
        }
        /* every job up to the wanted one is claimed: sleep until it is done */
        mtx_lock(&wf->mu);
        for (;;) {
            atomic_store(&wf->decoder_wants_job, wanted + 1);
            if (atomic_load(&wf->ready[chunk]) >= m + 1) break;
            cnd_wait(&wf->decoder_cv, &wf->mu);
        }
        atomic_store(&wf->decoder_wants_job, 0);
        mtx_unlock(&wf->mu);
    }
}

void aurp_wavefront_publish(aurp_wavefront *wf, uint32_t m, uint32_t columns)
{
    uint64_t decoded = (uint64_t)m * wf->width + columns;
    atomic_store(&wf->decoded, decoded);
    for (int i = 0; i < wf->nworkers; i++)
        wake_if_fulfilled(wf, &wf->workers[i].wants_decoded, decoded, &wf->workers[i].cv);
}

static void stop_workers(aurp_wavefront *wf)
{
    atomic_store(&wf->stop, 1);
    mtx_lock(&wf->mu);
    for (int i = 0; i < wf->nworkers; i++) cnd_signal(&wf->workers[i].cv);
    mtx_unlock(&wf->mu);
    for (int i = 0; i < wf->nworkers; i++) {
        thrd_join(wf->workers[i].th, NULL);
        cnd_destroy(&wf->workers[i].cv);
    }
    wf->nworkers = 0;
}

int aurp_decode_wavefront(int threads, uint32_t width, uint32_t height, uint32_t nchunks,
                          const uint32_t *need, void (*prepare)(void *ctx, uint32_t chunk, uint32_t m),
                          int (*reconstruct)(void *ctx, uint32_t m, aurp_wavefront *wf), void *ctx)
{
    aurp_wavefront wf = {.prepare = prepare, .ctx = ctx, .width = width, .height = height,
                         .nchunks = nchunks, .need = need, .njobs = (uint64_t)height * nchunks};
    atomic_init(&wf.next_job, 0);
    atomic_init(&wf.decoded, 0);
    atomic_init(&wf.stop, 0);
    atomic_init(&wf.decoder_wants_job, 0);
    wf.ready = malloc(nchunks * sizeof *wf.ready);
    if (!wf.ready) return -2;
    for (uint32_t k = 0; k < nchunks; k++) atomic_init(&wf.ready[k], 0);
    int want_workers = threads - 1;
    if ((uint32_t)want_workers > nchunks) want_workers = (int)nchunks; /* more would only wait */
    if (want_workers > WF_MAX_WORKERS) want_workers = WF_MAX_WORKERS;
    int have_sync = 0;
    if (want_workers > 0 && mtx_init(&wf.mu, mtx_plain) == thrd_success) {
        if (cnd_init(&wf.decoder_cv) == thrd_success) have_sync = 1;
        else mtx_destroy(&wf.mu);
    }
    if (have_sync) wf.workers = calloc((size_t)want_workers, sizeof *wf.workers);
    /* workers are an optimisation: with fewer (none) the caller does every job */
    for (; wf.workers && wf.nworkers < want_workers; wf.nworkers++) {
        struct wf_worker *w = &wf.workers[wf.nworkers];
        w->wf = &wf;
        atomic_init(&w->wants_decoded, 0);
        if (cnd_init(&w->cv) != thrd_success) break;
        if (thrd_create(&w->th, worker_main, w) != thrd_success) {
            cnd_destroy(&w->cv);
            break;
        }
    }
    int bad = 0;
    for (uint32_t m = 0; m < height && !bad; m++) {
        bad = reconstruct(ctx, m, &wf);
        if (!bad) aurp_wavefront_publish(&wf, m + 1, 0);
    }
    stop_workers(&wf);
    free(wf.workers);
    if (have_sync) {
        cnd_destroy(&wf.decoder_cv);
        mtx_destroy(&wf.mu);
    }
    free(wf.ready);
    return bad;
}

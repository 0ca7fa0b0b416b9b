#include "verifypool.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

typedef struct vnode {
    struct vnode *next;
    void *task;
} vnode;

typedef struct {
    verify_pool *owner;
    pthread_t thread;
    int64_t busy_since; /* 0 = idle (under the pool's mutex) */
} vthread;

struct verify_pool {
    verify_fn fn;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    vnode *head, *tail;
    int queued;
    bool quit;
    int nthreads;
    vthread *t;
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *verify_main(void *arg)
{
    vthread *me = arg;
    verify_pool *vp = me->owner;
    for (;;) {
        pthread_mutex_lock(&vp->mu);
        while (!vp->head && !vp->quit) pthread_cond_wait(&vp->cv, &vp->mu);
        vnode *n = vp->head;
        if (!n) { /* quit and nothing left: every task was finished */
            pthread_mutex_unlock(&vp->mu);
            return NULL;
        }
        vp->head = n->next;
        if (!vp->head) vp->tail = NULL;
        vp->queued--;
        me->busy_since = now_ns();
        pthread_mutex_unlock(&vp->mu);

        void *task = n->task;
        free(n);
        vp->fn(task);

        pthread_mutex_lock(&vp->mu);
        me->busy_since = 0;
        pthread_mutex_unlock(&vp->mu);
    }
}

verify_pool *verify_pool_start(int threads, verify_fn fn)
{
    if (threads < 1) threads = 1;
    verify_pool *vp = calloc(1, sizeof *vp);
    if (!vp) return NULL;
    vp->t = calloc((size_t)threads, sizeof *vp->t);
    if (!vp->t) {
        free(vp);
        return NULL;
    }
    vp->fn = fn;
    pthread_mutex_init(&vp->mu, NULL);
    pthread_cond_init(&vp->cv, NULL);
    for (int i = 0; i < threads; i++) {
        vp->t[i].owner = vp;
        if (pthread_create(&vp->t[i].thread, NULL, verify_main, &vp->t[i]) != 0) break;
        vp->nthreads++;
    }
    if (vp->nthreads == 0) {
        pthread_mutex_destroy(&vp->mu);
        pthread_cond_destroy(&vp->cv);
        free(vp->t);
        free(vp);
        return NULL;
    }
    return vp;
}

int verify_pool_threads(const verify_pool *vp) { return vp->nthreads; }

void verify_pool_submit(verify_pool *vp, void *task)
{
    vnode *n = calloc(1, sizeof *n);
    if (!n) abort(); /* cannot hand the frame on; systemd restarts us and nothing is lost */
    n->task = task;
    pthread_mutex_lock(&vp->mu);
    if (vp->tail) vp->tail->next = n;
    else vp->head = n;
    vp->tail = n;
    vp->queued++;
    pthread_cond_signal(&vp->cv);
    pthread_mutex_unlock(&vp->mu);
}

int verify_pool_queued(verify_pool *vp)
{
    pthread_mutex_lock(&vp->mu);
    int n = vp->queued;
    pthread_mutex_unlock(&vp->mu);
    return n;
}

bool verify_pool_healthy(verify_pool *vp, int64_t now, int64_t stuck_ns)
{
    bool ok = true;
    pthread_mutex_lock(&vp->mu);
    for (int i = 0; i < vp->nthreads; i++)
        if (vp->t[i].busy_since && now - vp->t[i].busy_since > stuck_ns) ok = false;
    pthread_mutex_unlock(&vp->mu);
    return ok;
}

void verify_pool_stop(verify_pool *vp)
{
    if (!vp) return;
    pthread_mutex_lock(&vp->mu);
    vp->quit = true;
    pthread_cond_broadcast(&vp->cv);
    pthread_mutex_unlock(&vp->mu);
    for (int i = 0; i < vp->nthreads; i++) pthread_join(vp->t[i].thread, NULL);
    pthread_mutex_destroy(&vp->mu);
    pthread_cond_destroy(&vp->cv);
    free(vp->t);
    free(vp);
}

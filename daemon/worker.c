#include "worker.h"

#include <errno.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "aurp_gpu.h"
#include "capture.h"
#include "commit.h"
#include "frame.h"
#include "journal.h"
#include "log.h"
#include "sha256.h"
#include "verifypool.h"

int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double ms_since(int64_t t0) { return (double)(mono_ns() - t0) / 1e6; }

typedef struct jnode {
    struct jnode *next;
    job j;
} jnode;

typedef struct rnode {
    struct rnode *next;
    result r;
} rnode;

typedef struct {
    pool *owner;
    int index;
    pthread_t thread;
    aurp_gpu *gpu;           /* NULL: CPU worker */
    char label[48];
    int threads;             /* CPU threads for a CPU-coded frame */
    _Atomic int64_t gpu_down_until; /* monotonic ns; 0 = in service (read by pool_describe) */
    _Atomic int64_t gpu_backoff_ns; /* also set by a verify thread that catches a bad GPU copy */
    int64_t busy_since;      /* 0 = idle (under pool mutex) */
} worker;

struct pool {
    aurorad_config cfg;
    void (*wake)(void *);
    void *ud;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    jnode *jhead, *jtail;
    rnode *rhead, *rtail;
    bool quit;
    int nworkers;
    worker *w;
    verify_pool *verify;     /* checks and commits what the workers packed */
};

/* A verify thread decodes one frame on one thread: the pool, not the
 * frame, spreads over the cores. */
#define VERIFY_THREADS 1

/* ---- one frame ------------------------------------------------------ */

static void path_of(char *buf, size_t len, const char *dir, const char *name)
{
    snprintf(buf, len, "%s/%s", dir, name);
}

static void set_outcome(result *r, outcome what, int err_no, const char *reason)
{
    r->what = what;
    r->err_no = err_no;
    snprintf(r->reason, sizeof r->reason, "%s", reason);
}

/* The quarantine name for NAME: NAME, then NAME.1, NAME.2, ... (never over
 * an earlier quarantined file), each short enough that NAME.reason still
 * fits in NAME_MAX. */
static void quarantine_name(const char *dir, const char *name, char *qname, size_t len)
{
    const size_t room = (JOB_NAME_MAX - 1) - strlen(".reason");
    snprintf(qname, len, "%.*s", (int)room, name);
    struct stat st;
    for (int i = 1; i < 100000; i++) {
        char p[4096 + JOB_NAME_MAX];
        path_of(p, sizeof p, dir, qname);
        if (lstat(p, &st) != 0) return;
        char suffix[16];
        int sl = snprintf(suffix, sizeof suffix, ".%d", i);
        snprintf(qname, len, "%.*s%s", (int)(room - (size_t)sl), name, suffix);
    }
}

/* Moves the original to quarantine with a NAME.reason sidecar beside it.
 * When that fails for a reason that may pass (quarantine full, missing),
 * the file backs off alone; when it cannot pass (no permission to move it,
 * a name the file system refuses) the file is held where it is. */
static void quarantine(worker *wk, result *r, const char *why)
{
    const aurorad_config *c = &wk->owner->cfg;
    char qname[JOB_NAME_MAX], err[1024];
    quarantine_name(c->quarantine_dir, r->j.name, qname, sizeof qname);
    char sidecar_name[JOB_NAME_MAX + 8], text[4200];
    snprintf(sidecar_name, sizeof sidecar_name, "%s.reason", qname);
    int tl = snprintf(text, sizeof text, "%s\n", why);
    if (tl >= (int)sizeof text) tl = (int)sizeof text - 1;
    /* sidecar first: a crash between the two leaves a harmless note, never
     * a quarantined file without its reason */
    bool noted = commit_write_atomic(c->quarantine_dir, sidecar_name, text, (size_t)tl, err,
                                     sizeof err) == 0;
    if (noted && commit_move(c->incoming_dir, r->j.name, c->quarantine_dir, qname, err,
                             sizeof err) == 0) {
        set_outcome(r, OUTCOME_QUARANTINED, 0, why);
        return;
    }
    int e = errno;
    char reason[sizeof r->reason];
    snprintf(reason, sizeof reason, "cannot quarantine (%.1500s): %s", why, err);
    if (e == ENOENT && access(c->incoming_dir, F_OK) == 0) {
        char src[4096 + JOB_NAME_MAX];
        path_of(src, sizeof src, c->incoming_dir, r->j.name);
        if (lstat(src, &(struct stat){0}) != 0) {
            set_outcome(r, OUTCOME_VANISHED, e, err);
            if (noted) {
                path_of(src, sizeof src, c->quarantine_dir, sidecar_name);
                unlink(src);
            }
            return;
        }
    }
    if (commit_errno_is_permanent(e)) {
        if (noted) { /* no note without its file */
            char sp[4096 + JOB_NAME_MAX];
            path_of(sp, sizeof sp, c->quarantine_dir, sidecar_name);
            unlink(sp);
        }
        set_outcome(r, OUTCOME_HELD, e, reason);
    } else {
        set_outcome(r, OUTCOME_RETRY_FILE, e, reason);
    }
}

/* Packs with this worker's GPU when it is in service, else on the CPU. */
static aurp_status encode(worker *wk, const uint8_t *data, size_t len, const frame_layout *lay,
                          uint8_t **out, size_t *out_len, result *r, aurp_error *err)
{
    const aurorad_config *c = &wk->owner->cfg;
    int64_t now = mono_ns();
    /* a profile the GPU encoder lacks (a reload may bring one) is packed on the CPU */
    if (wk->gpu && aurp_gpu_has_profile(c->codec.profile) && now >= wk->gpu_down_until) {
        bool fits = true;
        for (int i = 0; i < lay->nregions; i++)
            if (lay->regions[i].width > AURP_GPU_MAX_SIDE || lay->regions[i].height > AURP_GPU_MAX_SIDE)
                fits = false;
        if (fits) {
            aurp_image_encoder enc = aurp_gpu_encoder(wk->gpu);
            aurp_status s = frame_pack(data, len, lay, &c->codec, &enc, 1, out, out_len, err);
            if (s == AURP_OK) {
                snprintf(r->device, sizeof r->device, "%s", wk->label);
                if (wk->gpu_down_until) {
                    log_msg(LOG_NOTICE, "gpu_restored", "%s passed its retry on %s; back in service",
                            wk->label, r->j.name);
                    wk->gpu_down_until = 0;
                    wk->gpu_backoff_ns = 0;
                }
                return s;
            }
            if (s != AURP_ERR_BACKEND) return s;
            /* the device failed: this frame goes to the CPU, the device out
             * of service until a later frame passes on it */
            wk->gpu_backoff_ns = wk->gpu_backoff_ns ? wk->gpu_backoff_ns * 2
                                                    : (int64_t)(c->gpu_retry_seconds * 1e9);
            if (wk->gpu_backoff_ns > (int64_t)(c->gpu_retry_seconds * 1e9) * 16)
                wk->gpu_backoff_ns = (int64_t)(c->gpu_retry_seconds * 1e9) * 16;
            wk->gpu_down_until = mono_ns() + wk->gpu_backoff_ns;
            r->gpu_fallback = true;
            log_line l;
            log_begin(&l, LOG_ERR, "gpu_failed");
            log_str(&l, "device", wk->label);
            log_str(&l, "file", r->j.name);
            log_str(&l, "reason", err->msg);
            log_num(&l, "retry_in_s", (double)wk->gpu_backoff_ns / 1e9, 1);
            log_end(&l);
        }
    }
    snprintf(r->device, sizeof r->device, "cpu");
    return frame_pack(data, len, lay, &c->codec, NULL, wk->threads, out, out_len, err);
}

/* Unpacks packed and compares with the original bytes. */
static bool same_as(const uint8_t *packed, size_t plen, const uint8_t *orig, size_t olen,
                    int threads, char *why, size_t why_len)
{
    uint8_t *back = NULL;
    size_t blen = 0;
    aurp_error e = {{0}};
    aurp_status s = frame_unpack(packed, plen, threads, &back, &blen, &e);
    bool ok = s == AURP_OK && blen == olen && memcmp(back, orig, olen) == 0;
    if (!ok) {
        if (s != AURP_OK) snprintf(why, why_len, "decode failed: %s: %s", aurp_status_name(s), e.msg);
        else snprintf(why, why_len, "decoded %zu bytes differ from the %zu-byte original", blen, olen);
    }
    free(back);
    return ok;
}

/* Opens the frame the job names, only if it is still the regular file
 * intake saw; on failure sets the outcome and returns -1. */
static int open_frame(worker *wk, result *r, const char *path)
{
    const aurorad_config *c = &wk->owner->cfg;
    char err[1024], why[1200];
    /* checked before any byte is read: a huge file must not reach memory */
    if (r->j.seen.size > c->max_frame_bytes) {
        snprintf(why, sizeof why, "too large: %llu bytes, more than max_frame_bytes (%llu)",
                 (unsigned long long)r->j.seen.size, (unsigned long long)c->max_frame_bytes);
        quarantine(wk, r, why);
        return -1;
    }
    int fd = commit_open_seen(path, &r->j.seen, err, sizeof err);
    if (fd >= 0) return fd;
    int e = errno;
    if (e == ENOENT) set_outcome(r, OUTCOME_VANISHED, e, err);
    else if (e == ESTALE) set_outcome(r, OUTCOME_CHANGED, e, err);
    else if (commit_errno_is_transient(e)) set_outcome(r, OUTCOME_RETRY_FILE, e, err);
    else {
        /* e.g. EACCES (a writer's umask): retrying cannot help; moving needs
         * no read permission, so the file goes aside with its reason */
        snprintf(why, sizeof why, "cannot be read: %s", err);
        quarantine(wk, r, why);
    }
    return -1;
}

/* Whether the file is still exactly what was read and nobody is writing it;
 * if not, sets CHANGED (it will be watched and taken again). */
static bool unchanged(result *r, const char *path, int fd)
{
    char err[1024];
    if (commit_still_seen(path, fd, &r->j.seen, err, sizeof err)) {
        set_outcome(r, OUTCOME_CHANGED, 0, err);
        return false;
    }
    if (r->j.check_writers && commit_open_for_writing(fd) == 1) {
        snprintf(err, sizeof err, "%s: still open for writing by another process", path);
        set_outcome(r, OUTCOME_CHANGED, 0, err);
        return false;
    }
    return true;
}

/* Releases the original; sets the outcome when that did not happen. */
static bool release(worker *wk, result *r, int fd)
{
    const aurorad_config *c = &wk->owner->cfg;
    char err[1024];
    int rc = commit_release(c->incoming_dir, r->j.name, c->done_dir, fd, &r->j.seen, err,
                            sizeof err);
    if (rc == 1) set_outcome(r, OUTCOME_CHANGED, 0, err);
    /* the packed copy is durable; the next attempt finds it and releases */
    else if (rc) set_outcome(r, OUTCOME_RETRY_FILE, errno, err);
    return rc == 0;
}

/* NAME.aurp's checksum sidecar is NAME.sha256 (not NAME.aurp.sha256: a
 * 248-byte NAME must still fit in NAME_MAX), one `sha256sum -c` line. */
static void sidecar_name_of(const char *outname, char *sidecar, size_t cap)
{
    size_t n = strlen(outname) - strlen(AURP_EXTENSION);
    snprintf(sidecar, cap, "%.*s.sha256", (int)n, outname);
}

static int write_sidecar(const aurorad_config *c, const char *outname, const uint8_t *packed,
                         size_t plen, char *err, size_t err_len)
{
    char sidecar[JOB_NAME_MAX + CAPTURE_PREFIX_LEN + 16], line[JOB_NAME_MAX + 128];
    sidecar_name_of(outname, sidecar, sizeof sidecar);
    char hex[SHA256_HEX_LEN + 1];
    sha256_hex(packed, plen, hex);
    int n = snprintf(line, sizeof line, "%s  %s\n", hex, outname);
    return commit_write_atomic(c->outbox_dir, sidecar, line, (size_t)n, err, err_len);
}

/* The original is released: its journal entry goes.  If that fails the
 * entry stays, harmless: the next frame of that name has another identity
 * and finds it stale. */
static void forget_commit(worker *wk, result *r)
{
    char err[1024];
    if (journal_end(wk->owner->cfg.state_dir, r->outbox_name, err, sizeof err) != 0)
        log_msg(LOG_WARNING, "journal_failed", "%s", err);
}

/* A restart after kill -9 between commit and release: the outbox copy is
 * durable; check it and finish the release instead of coding again. */
static void recover(worker *wk, result *r, int fd, const uint8_t *data, size_t len,
                    const char *outpath, const char *outname)
{
    const aurorad_config *c = &wk->owner->cfg;
    char err[1024];
    uint8_t *packed = NULL;
    size_t plen = 0;
    int64_t tv = mono_ns();
    size_t packed_max = c->max_frame_bytes + c->max_frame_bytes / 4 + (1u << 20);
    if (commit_read_file(outpath, packed_max, &packed, &plen, err, sizeof err) == 0 &&
        same_as(packed, plen, data, len, VERIFY_THREADS, err, sizeof err)) {
        r->verify_ms = ms_since(tv);
        r->bytes_out = plen;
        /* the sidecar is written first, so it is there unless someone
         * removed it: a sender needs it */
        char sidecar[JOB_NAME_MAX + CAPTURE_PREFIX_LEN + 16], sp[4096 + sizeof sidecar];
        sidecar_name_of(outname, sidecar, sizeof sidecar);
        path_of(sp, sizeof sp, c->outbox_dir, sidecar);
        if (access(sp, F_OK) != 0 && write_sidecar(c, outname, packed, plen, err, sizeof err)) {
            set_outcome(r, OUTCOME_RETRY_OUTBOX, errno, err);
            free(packed);
            return;
        }
        int64_t tw = mono_ns();
        if (release(wk, r, fd)) {
            r->what = OUTCOME_RECOVERED;
            forget_commit(wk, r);
        }
        r->release_ms = ms_since(tw);
        r->latency_ms = (double)(mono_ns() - r->j.t_complete_ns) / 1e6;
        snprintf(r->device, sizeof r->device, "none");
    } else if (errno == EMFILE || errno == ENFILE || errno == EIO || errno == ENOMEM) {
        set_outcome(r, OUTCOME_RETRY_FILE, errno, err);
    } else {
        char why[2200];
        snprintf(why, sizeof why, "the outbox already holds a different %s (%s)", outname, err);
        quarantine(wk, r, why);
    }
    free(packed);
}

/* Packs (an encoder's part); on failure quarantines and returns false. */
static bool pack_frame(worker *wk, result *r, const uint8_t *data, size_t len, frame_layout *lay,
                       uint8_t **packed, size_t *plen)
{
    frame_layout_of(data, len, lay);
    if (lay->kind != FRAME_FITS_IMAGE) {
        char why[400];
        snprintf(why, sizeof why, "%s: %s", lay->kind == FRAME_NOT_FITS ? "not a valid FITS file"
                                                                       : "unsupported FITS file",
                 lay->why[0] ? lay->why : (r->j.suspect ? r->j.suspect_why : "no reason given"));
        quarantine(wk, r, why);
        return false;
    }
    for (int i = 0; i < lay->nregions; i++)
        r->pixels += (uint64_t)lay->regions[i].width * lay->regions[i].height;

    int64_t te = mono_ns();
    aurp_error e = {{0}};
    aurp_status s = encode(wk, data, len, lay, packed, plen, r, &e);
    r->encode_ms = ms_since(te);
    if (s != AURP_OK) {
        char why[400];
        snprintf(why, sizeof why, "cannot be packed: %s: %s", aurp_status_name(s), e.msg);
        quarantine(wk, r, why);
        return false;
    }
    return true;
}

/* With verify on, checks the packed copy (a verify thread's part): a copy
 * a GPU got wrong is redone on the CPU, here, and the GPU is put out of
 * service; on failure quarantines and returns false. */
static bool verify_packed(worker *wk, result *r, const uint8_t *data, size_t len,
                          const frame_layout *lay, const char *outname, uint8_t **packed,
                          size_t *plen)
{
    const aurorad_config *c = &wk->owner->cfg;
    char err[1024];
    if (!c->verify) return true;
    int64_t tv = mono_ns();
    bool ok = same_as(*packed, *plen, data, len, VERIFY_THREADS, err, sizeof err);
    if (!ok && strcmp(r->device, "cpu") != 0) {
        /* a GPU that writes wrong bytes is a failed GPU */
        log_msg(LOG_ERR, "gpu_failed", "%s: %s packed by %s does not verify (%s); redone on the CPU",
                r->j.name, outname, r->device, err);
        wk->gpu_backoff_ns = (int64_t)(c->gpu_retry_seconds * 1e9);
        wk->gpu_down_until = mono_ns() + wk->gpu_backoff_ns;
        r->gpu_fallback = true;
        free(*packed);
        *packed = NULL;
        snprintf(r->device, sizeof r->device, "cpu");
        aurp_error e = {{0}};
        aurp_status s = frame_pack(data, len, lay, &c->codec, NULL, VERIFY_THREADS, packed, plen, &e);
        ok = s == AURP_OK && same_as(*packed, *plen, data, len, VERIFY_THREADS, err, sizeof err);
        if (s != AURP_OK) snprintf(err, sizeof err, "%s: %s", aurp_status_name(s), e.msg);
    }
    r->verify_ms = ms_since(tv);
    if (!ok) {
        char why[2200];
        snprintf(why, sizeof why, "packed copy does not verify: %s", err);
        quarantine(wk, r, why);
    }
    return ok;
}

/* Writes the packed copy, its checksum sidecar first so that a sender
 * never sees a NAME.aurp without its NAME.sha256; a fault of the outbox
 * pauses everything, a name the outbox refuses (EFBIG, ...) is this
 * frame's problem. */
static bool write_outbox(worker *wk, result *r, const char *outname, const uint8_t *packed,
                         size_t plen)
{
    const aurorad_config *c = &wk->owner->cfg;
    char err[1024], tmp_name[64];
    int64_t tw = mono_ns();
    int rc = write_sidecar(c, outname, packed, plen, err, sizeof err);
    if (rc == 0)
        rc = commit_write_temp(c->outbox_dir, packed, plen, tmp_name, sizeof tmp_name, err,
                               sizeof err);
    if (rc == 0) {
        /* the journal entry first (journal.h): from the rename on, a
         * restart must know the copy was committed even if a sender has
         * taken it */
        char jerr[1024];
        char tmp_path[4096 + 64];
        path_of(tmp_path, sizeof tmp_path, c->outbox_dir, tmp_name);
        if (journal_begin(c->state_dir, outname, tmp_name, &r->j.seen, jerr, sizeof jerr) != 0) {
            int e = errno;
            unlink(tmp_path);
            set_outcome(r, OUTCOME_RETRY_OUTBOX, e, jerr);
            return false;
        }
        rc = commit_rename_into_place(c->outbox_dir, tmp_name, outname, err, sizeof err);
        if (rc != 0 && access(tmp_path, F_OK) == 0) {
            /* not renamed: the entry goes before the temporary file, so an
             * entry never outlives a copy that was never committed */
            int e = errno;
            if (journal_end(c->state_dir, outname, jerr, sizeof jerr) == 0) unlink(tmp_path);
            errno = e;
        }
    }
    r->write_ms = ms_since(tw);
    if (rc == 0) return true;
    int e = errno;
    if (e == EFBIG || e == ENAMETOOLONG || e == EINVAL) {
        char why[1200];
        snprintf(why, sizeof why, "the outbox refuses its packed copy: %s", err);
        quarantine(wk, r, why);
    } else {
        set_outcome(r, OUTCOME_RETRY_OUTBOX, e, err);
    }
    return false;
}

/* The outbox name of a frame: its capture time first, so that the outbox
 * sorts in capture order (capture.h); a name too long for the prefix (and
 * its .sha256 sidecar) keeps its plain name. */
static void outbox_name_of(const aurorad_config *c, const result *r, const uint8_t *data,
                           size_t len, char *outname, size_t cap)
{
    size_t room = JOB_NAME_ACCEPTED - CAPTURE_PREFIX_LEN;
    if (!c->outbox_capture_names || strlen(r->j.name) > room) {
        snprintf(outname, cap, "%s%s", r->j.name, AURP_EXTENSION);
        return;
    }
    int64_t ms;
    if (!capture_time_from_header(data, len, &ms)) ms = r->j.seen.mtime_ns / 1000000;
    char prefix[CAPTURE_PREFIX_LEN + 1];
    capture_prefix(ms, prefix);
    snprintf(outname, cap, "%s%s%s", prefix, r->j.name, AURP_EXTENSION);
}

/* A frame between its encoder and the verify pool: the original's
 * descriptor (kept open until the release, which checks it), its bytes and
 * the packed copy.  The verify thread finishes it and reports its result. */
typedef struct {
    worker *wk;
    rnode *rn;
    int fd;
    char path[4096 + JOB_NAME_MAX];
    uint8_t *data, *packed;
    size_t len, plen;
    frame_layout lay;
    char outname[JOB_NAME_MAX + CAPTURE_PREFIX_LEN + 8];
    char outpath[4096 + JOB_NAME_MAX + CAPTURE_PREFIX_LEN + 8];
    bool recover;      /* the outbox already holds outname (a restart): check it, release */
    int64_t handed_ns; /* monotonic: when the encoder handed it over */
} finish_task;

static void finish_task_free(finish_task *t)
{
    free(t->packed);
    free(t->data);
    free(t);
}

static void post_result(pool *p, rnode *rn)
{
    pthread_mutex_lock(&p->mu);
    if (p->rtail) p->rtail->next = rn;
    else p->rhead = rn;
    p->rtail = rn;
    pthread_mutex_unlock(&p->mu);
    p->wake(p->ud);
}

/* Verified, still the same original: outbox copy, then the release (the
 * order of commit.h). */
static void commit_packed(finish_task *t)
{
    worker *wk = t->wk;
    result *r = &t->rn->r;
    if (!verify_packed(wk, r, t->data, t->len, &t->lay, t->outname, &t->packed, &t->plen)) return;
    r->bytes_out = t->plen;
    /* what goes to the outbox must be what is in incoming now */
    if (!unchanged(r, t->path, t->fd)) return;
    if (!write_outbox(wk, r, t->outname, t->packed, t->plen)) return;
    r->latency_ms = (double)(mono_ns() - r->j.t_complete_ns) / 1e6;
    int64_t tr = mono_ns();
    if (!release(wk, r, t->fd)) return; /* the journal entry stays: the copy is committed */
    r->release_ms = ms_since(tr);
    r->what = OUTCOME_COMMITTED;
    forget_commit(wk, r);
}

/* The verify pool's task: runs on a verify thread. */
static void finish_frame(void *arg)
{
    finish_task *t = arg;
    result *r = &t->rn->r;
    r->verify_wait_ms = ms_since(t->handed_ns);
    if (t->recover) recover(t->wk, r, t->fd, t->data, t->len, t->outpath, t->outname);
    else commit_packed(t);
    close(t->fd);
    post_result(t->wk->owner, t->rn);
    finish_task_free(t);
}

/* Reads and packs the frame, then hands it to the verify pool and returns
 * true (the task owns fd and rn from then on); false with the outcome set
 * when the frame ends here. */
static bool process_open(worker *wk, rnode *rn, int fd, const char *path, int64_t t0)
{
    const aurorad_config *c = &wk->owner->cfg;
    result *r = &rn->r;
    char err[1024];
    finish_task *t = calloc(1, sizeof *t);
    if (!t) {
        set_outcome(r, OUTCOME_RETRY_FILE, ENOMEM, "out of memory");
        return false;
    }
    t->wk = wk;
    t->rn = rn;
    t->fd = fd;
    t->len = (size_t)r->j.seen.size;
    snprintf(t->path, sizeof t->path, "%s", path);
    if (commit_read_fd(fd, path, t->len, &t->data, err, sizeof err)) {
        int e = errno;
        set_outcome(r, e == ESTALE ? OUTCOME_CHANGED : OUTCOME_RETRY_FILE, e, err);
        goto ends_here;
    }
    r->bytes_in = t->len;
    r->read_ms = ms_since(t0);
    outbox_name_of(c, r, t->data, t->len, t->outname, sizeof t->outname);
    snprintf(r->outbox_name, sizeof r->outbox_name, "%s", t->outname);
    path_of(t->outpath, sizeof t->outpath, c->outbox_dir, t->outname);
    if (!unchanged(r, path, fd)) goto ends_here; /* written to while read: not this file */
    if (access(t->outpath, F_OK) == 0) {
        t->recover = true;
    } else if (journal_committed(c->state_dir, t->outname, &r->j.seen)) {
        /* committed before a crash, and the sender has taken it since:
         * released, not packed (and sent) again */
        int64_t tr = mono_ns();
        if (release(wk, r, fd)) {
            r->what = OUTCOME_RECOVERED;
            r->already_sent = true;
            r->release_ms = ms_since(tr);
            r->latency_ms = (double)(mono_ns() - r->j.t_complete_ns) / 1e6;
            snprintf(r->device, sizeof r->device, "none");
            forget_commit(wk, r);
        }
        goto ends_here;
    } else if (!pack_frame(wk, r, t->data, t->len, &t->lay, &t->packed, &t->plen)) goto ends_here;
    t->handed_ns = mono_ns();
    verify_pool_submit(wk->owner->verify, t);
    return true;
ends_here:
    finish_task_free(t);
    return false;
}

/* Returns true when the frame went on to the verify pool (which reports
 * it), false when its result is ready here. */
static bool process(worker *wk, rnode *rn)
{
    const aurorad_config *c = &wk->owner->cfg;
    result *r = &rn->r;
    char path[4096 + JOB_NAME_MAX];
    int64_t t0 = mono_ns();
    r->wait_ms = (double)(t0 - r->j.t_complete_ns) / 1e6;
    snprintf(r->device, sizeof r->device, "%s", wk->gpu ? wk->label : "cpu");
    path_of(path, sizeof path, c->incoming_dir, r->j.name);
    int fd = open_frame(wk, r, path);
    if (fd < 0) return false;
    if (process_open(wk, rn, fd, path, t0)) return true;
    close(fd);
    return false;
}

/* ---- threads -------------------------------------------------------- */

static void *worker_main(void *arg)
{
    worker *wk = arg;
    pool *p = wk->owner;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (!p->jhead && !p->quit) pthread_cond_wait(&p->cv, &p->mu);
        if (!p->jhead) {
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        jnode *n = p->jhead;
        p->jhead = n->next;
        if (!p->jhead) p->jtail = NULL;
        wk->busy_since = mono_ns();
        pthread_mutex_unlock(&p->mu);

        rnode *rn = calloc(1, sizeof *rn);
        if (!rn) abort(); /* cannot report; systemd restarts us and nothing is lost */
        rn->r.j = n->j;
        rn->r.worker = wk->index;
        free(n);
        bool handed = process(wk, rn);

        pthread_mutex_lock(&p->mu);
        wk->busy_since = 0;
        pthread_mutex_unlock(&p->mu);
        if (!handed) post_result(p, rn);
    }
}

static int cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Opens the GPU handles the configuration asks for; returns how many
 * workers they make (0: CPU fallback, with a warning). */
static int open_gpus(const aurorad_config *c, aurp_gpu **handles)
{
    if (c->gpus == 0) return 0;
    if (!aurp_gpu_has_profile(c->codec.profile)) {
        log_msg(LOG_NOTICE, "gpu_profile_cpu", "the GPU encoder does not have profile %s yet: "
                "every frame is packed on the CPU", aurp_profile_name(c->codec.profile));
        return 0;
    }
    char why[256] = "";
    int have = aurp_gpu_count(why, sizeof why);
    int want = c->gpus;
    int devs[CONFIG_MAX_GPUS];
    int n = 0;
    for (int i = 0; i < want; i++) {
        int d = c->ngpu_devices ? c->gpu_devices[i] : i;
        if (d < have) devs[n++] = d;
    }
    if (n < want) {
        log_line l;
        log_begin(&l, LOG_WARNING, n ? "gpu_missing" : "gpu_none");
        log_int(&l, "wanted", want);
        log_int(&l, "found", have);
        /* say it plainly: the driver's own words ("CUDA driver version is
         * insufficient") mislead on a machine that simply has no GPU */
        char plain[400];
        snprintf(plain, sizeof plain, "no usable NVIDIA GPU on this machine (the CUDA runtime "
                 "says: %.300s)", why[0] ? why : "nothing");
        log_str(&l, "reason", have ? "fewer devices than configured" : plain);
        log_str(&l, "fallback", n ? "fewer GPUs" : "cpu");
        log_end(&l);
    }
    if (n == 0) return 0;
    int nh = 0;
    int groups = c->split == SPLIT_COLUMNS ? 1 : n;
    for (int g = 0; g < groups; g++) {
        aurp_error e = {{0}};
        const int *d = c->split == SPLIT_COLUMNS ? devs : &devs[g];
        int nd = c->split == SPLIT_COLUMNS ? n : 1;
        aurp_gpu *h = NULL;
        if (aurp_gpu_open(d, nd, AURP_GPU_MAX_SIDE, AURP_GPU_MAX_SIDE, &h, &e) != AURP_OK) {
            log_msg(LOG_WARNING, "gpu_open_failed", "device %d%s: %s; using the CPU instead", d[0],
                    nd > 1 ? " and others" : "", e.msg);
            continue;
        }
        handles[nh++] = h;
    }
    return nh;
}

pool *pool_start(const aurorad_config *cfg, void (*wake)(void *), void *ud)
{
    pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->cfg = *cfg;
    p->wake = wake;
    p->ud = ud;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    aurp_gpu *handles[CONFIG_MAX_GPUS];
    int ngpu = open_gpus(cfg, handles);
    int ncpu = cfg->cpu_workers >= 0 ? cfg->cpu_workers : (ngpu ? 0 : cpu_count());
    if (ngpu + ncpu == 0) ncpu = 1; /* gpus wanted, none found, cpu_workers: 0 */
    int cpu_threads = cfg->cpu_threads > 0 ? cfg->cpu_threads
                                           : (ncpu ? (cpu_count() + ncpu - 1) / ncpu : cpu_count());
    if (cpu_threads < 1) cpu_threads = 1;
    p->nworkers = ngpu + ncpu;
    p->w = calloc((size_t)p->nworkers, sizeof *p->w);
    if (!p->w) abort();
    for (int i = 0; i < p->nworkers; i++) {
        worker *wk = &p->w[i];
        wk->owner = p;
        wk->index = i;
        wk->threads = cpu_threads;
        if (i < ngpu) {
            wk->gpu = handles[i];
            snprintf(wk->label, sizeof wk->label, "%s", aurp_gpu_label(wk->gpu));
        } else {
            snprintf(wk->label, sizeof wk->label, "cpu");
        }
    }
    /* all cores by default: verify threads decode one frame each */
    p->verify = verify_pool_start(cfg->verify_workers > 0 ? cfg->verify_workers : cpu_count(),
                                  finish_frame);
    if (!p->verify) abort();
    for (int i = 0; i < p->nworkers; i++)
        if (pthread_create(&p->w[i].thread, NULL, worker_main, &p->w[i]) != 0) abort();
    return p;
}

int pool_workers(const pool *p) { return p->nworkers; }

int pool_verify_workers(const pool *p) { return verify_pool_threads(p->verify); }

int pool_verify_queued(pool *p) { return verify_pool_queued(p->verify); }

int pool_threads(const pool *p)
{
    int n = verify_pool_threads(p->verify);
    for (int i = 0; i < p->nworkers; i++) n += p->w[i].gpu ? 1 : p->w[i].threads;
    return n;
}

int pool_gpu_states(pool *p, char labels[][48], bool *up, int max)
{
    int n = 0;
    pthread_mutex_lock(&p->mu);
    int64_t now = mono_ns();
    for (int i = 0; i < p->nworkers && n < max; i++) {
        if (!p->w[i].gpu) continue;
        snprintf(labels[n], 48, "%s", p->w[i].label);
        up[n++] = now >= p->w[i].gpu_down_until;
    }
    pthread_mutex_unlock(&p->mu);
    return n;
}

void pool_describe(pool *p, char *buf, size_t len)
{
    size_t o = 0;
    int ncpu = 0;
    buf[0] = 0;
    pthread_mutex_lock(&p->mu);
    int64_t now = mono_ns();
    for (int i = 0; i < p->nworkers; i++) {
        worker *wk = &p->w[i];
        if (!wk->gpu) {
            ncpu++;
            continue;
        }
        int n = snprintf(buf + o, len - o, "%s%s%s", o ? ", " : "", wk->label,
                         now < wk->gpu_down_until ? " (out of service)" : "");
        if (n > 0 && (size_t)n < len - o) o += (size_t)n;
    }
    pthread_mutex_unlock(&p->mu);
    if (ncpu) snprintf(buf + o, len - o, "%scpu x%d (%d threads each)", o ? ", " : "", ncpu,
                       p->w[p->nworkers - 1].threads);
}

void pool_submit(pool *p, const job *j)
{
    jnode *n = calloc(1, sizeof *n);
    if (!n) abort();
    n->j = *j;
    pthread_mutex_lock(&p->mu);
    if (p->jtail) p->jtail->next = n;
    else p->jhead = n;
    p->jtail = n;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

bool pool_take_result(pool *p, result *r)
{
    pthread_mutex_lock(&p->mu);
    rnode *n = p->rhead;
    if (n) {
        p->rhead = n->next;
        if (!p->rhead) p->rtail = NULL;
    }
    pthread_mutex_unlock(&p->mu);
    if (!n) return false;
    *r = n->r;
    free(n);
    return true;
}

bool pool_healthy(pool *p, int64_t stuck_ns)
{
    bool ok = true;
    pthread_mutex_lock(&p->mu);
    int64_t now = mono_ns();
    for (int i = 0; i < p->nworkers; i++)
        if (p->w[i].busy_since && now - p->w[i].busy_since > stuck_ns) ok = false;
    pthread_mutex_unlock(&p->mu);
    return ok && verify_pool_healthy(p->verify, now, stuck_ns);
}

void pool_stop(pool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->quit = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nworkers; i++) pthread_join(p->w[i].thread, NULL);
    /* the encoders are done: what they handed over is verified and committed */
    verify_pool_stop(p->verify);
    for (int i = 0; i < p->nworkers; i++)
        if (p->w[i].gpu) aurp_gpu_close(p->w[i].gpu);
    while (p->rhead) {
        rnode *n = p->rhead;
        p->rhead = n->next;
        free(n);
    }
    while (p->jhead) {
        jnode *n = p->jhead;
        p->jhead = n->next;
        free(n);
    }
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p->w);
    free(p);
}

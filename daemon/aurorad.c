/* aurorad: the station daemon.
 *
 * The libuv loop thread only watches and decides: directory events, a
 * settle timer, a periodic rescan, signals, the watchdog and the results of
 * the workers.  Reading, packing, verifying and committing frames happen on
 * worker threads (worker.c); the loop hands them file names, never more
 * than max_in_flight at a time, so frames wait on disk, not in memory.
 * See docs/OPERATIONS.md for the operator's view.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "commit.h"
#include "config.h"
#include "counters.h"
#include "frame.h"
#include "housekeep.h"
#include "intake.h"
#include "log.h"
#include "journal.h"
#include "metrics.h"
#include "queue.h"
#include "stats.h"
#include "worker.h"

#include "version.h"

typedef struct {
    char cfg_path[4096];
    bool log_format_forced;        /* --log-format given: it wins over the file's log_format */
    config_log_format log_format_flag;
    aurorad_config cfg, pending;
    uv_loop_t *loop;
    uv_fs_event_t watch;
    bool watching;
    dev_t watched_dev;           /* the incoming directory the watch is on */
    ino_t watched_ino;
    bool incoming_missing_logged;
    bool dir_trouble_logged[5];  /* per configured directory: told the operator once */
    uv_timer_t tick, rescan, retry, watchdog, status_timer;
    uv_signal_t sighup, sigterm, sigint;
    uv_async_t wake;
    pool *workers;
    intake in;
    stats st;
    int inflight, max_in_flight;
    bool stopping, reload_pending;
    /* outbox fault: nothing is dispatched before blocked_until */
    int64_t blocked_until, backoff_ns;
    char fault[4096];
    char devices[512];
    uint64_t watchdog_usec;
    bool stuck_logged;
    char last_status[1024];
    int64_t last_status_at;
    int64_t last_status_log;
    int lock_fd;
    /* totals since the counters began (state_dir/counters, counters.c) */
    counters totals;
    bool totals_dirty;
    /* the periodic look at the disks (housekeep.c), off the loop thread */
    uv_timer_t housekeep_timer;
    uv_work_t housekeep_work;
    housekeep_pass *housekeep;   /* non-NULL while a pass runs */
    int disk_level[HOUSEKEEP_DIRS]; /* per dir key: the disk_low level last logged */
    bool reserve_paused;         /* free space on the outbox's disk under disk_reserve */
    spool_summary last_outbox, last_incoming, last_done;
    uint64_t last_free[HOUSEKEEP_DIRS];
    const char *last_free_key[HOUSEKEEP_DIRS];
    int last_dirs;
} daemon_state;

static daemon_state D;

/* ---- helpers -------------------------------------------------------- */

static int mkdir_p(const char *dir, char *err, size_t err_len)
{
    char p[CONFIG_PATH_MAX];
    snprintf(p, sizeof p, "%s", dir);
    for (char *s = p + 1;; s++) {
        if (*s == '/' || !*s) {
            char c = *s;
            *s = 0;
            if (mkdir(p, 0750) != 0 && errno != EEXIST) {
                snprintf(err, err_len, "%s: cannot create directory: %s", p, strerror(errno));
                return -1;
            }
            *s = c;
            if (!c) break;
        }
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, err_len, "%s: not a directory", dir);
        return -1;
    }
    return 0;
}

static int setup_dirs(const aurorad_config *c, char *err, size_t err_len)
{
    const char *dirs[] = {c->incoming_dir, c->outbox_dir, c->quarantine_dir, c->state_dir,
                          c->done_dir};
    /* before creating anything: an alias would be created as a real directory */
    if (config_check_dirs_on_disk(c, "directories", err, err_len)) return -1;
    for (int i = 0; i < 5; i++)
        if (dirs[i][0] && mkdir_p(dirs[i], err, err_len)) return -1;
    /* now all exist: device and inode tell bind mounts apart */
    if (config_check_dirs_on_disk(c, "directories", err, err_len)) return -1;
    if (c->outbox_group[0]) {
        /* the sender's group reads and removes outbox files (it marks a
         * frame sent by deleting it): group-writable, setgid so every file
         * gets the group; the files themselves are 0640 */
        struct group *g = getgrnam(c->outbox_group);
        if (!g) {
            snprintf(err, err_len, "outbox_group: no group '%s'", c->outbox_group);
            return -1;
        }
        if (chown(c->outbox_dir, (uid_t)-1, g->gr_gid) != 0 || chmod(c->outbox_dir, 02770) != 0) {
            snprintf(err, err_len, "%s: cannot give it to group %s (mode 2770): %s", c->outbox_dir,
                     c->outbox_group, strerror(errno));
            return -1;
        }
    }
    /* the commit journal first: whether a temporary outbox file is still
     * there tells a commit that never happened (journal.h) */
    int dropped = 0;
    int kept = journal_resolve(c->state_dir, c->outbox_dir, &dropped, err, err_len);
    if (kept < 0) return -1;
    if (kept || dropped)
        log_msg(LOG_NOTICE, "journal_resolved", "%d frame(s) committed before the restart are "
                "released without packing if the sender took them; %d unfinished commit(s) "
                "dropped (packed again)", kept, dropped);
    /* stale temporary files of a killed process: never visible as frames
     * (hidden names), removed so they do not accumulate */
    for (int i = 1; i < 5; i++) {
        if (!dirs[i][0]) continue;
        int n = commit_cleanup_temps(dirs[i]);
        if (n > 0)
            log_msg(LOG_NOTICE, "cleanup", "%s: removed %d stale temporary file(s) of an earlier run",
                    dirs[i], n);
    }
    return 0;
}

static void notify(const char *msg) { sd_notify(0, msg); }

static void status_text(char *buf, size_t len)
{
    double mean, mx;
    stats_latency(&D.st, &mean, &mx);
    int q_new = intake_count(&D.in, ENTRY_QUEUED, 0), q_old = intake_count(&D.in, ENTRY_QUEUED, 1);
    int watching = intake_count(&D.in, ENTRY_WATCHING, -1);
    int held = intake_count(&D.in, ENTRY_HELD, -1);
    int verify_queued = D.workers ? pool_verify_queued(D.workers) : 0;
    /* devices now, so that a GPU taken out of service shows as such */
    if (D.workers) pool_describe(D.workers, D.devices, sizeof D.devices);
    char fault[600] = "outbox ok";
    if (D.reserve_paused)
        snprintf(fault, sizeof fault, "DISK RESERVE: outbox disk under disk_reserve, packing paused");
    if (D.fault[0]) {
        double in_s = (double)(D.blocked_until - mono_ns()) / 1e9;
        snprintf(fault, sizeof fault, "OUTBOX FAULT %.300s, retry in %.1f s", D.fault,
                 in_s > 0 ? in_s : 0);
    }
    snprintf(buf, len,
             "%s%llu frames done (%llu quarantined, %llu over budget); backlog %d, new %d, "
             "arriving %d, in flight %d (%d awaiting verify), held %d; "
             "latency mean %.2f s max %.2f s (last %d); %.3f bpp; devices %.200s; %.400s",
             D.stopping ? "stopping: " : (D.reload_pending ? "reloading: " : ""),
             (unsigned long long)(D.st.committed + D.st.recovered),
             (unsigned long long)D.st.quarantined, (unsigned long long)D.st.over_budget, q_old, q_new, watching, D.inflight, verify_queued, held, mean / 1e3,
             mx / 1e3, D.st.n, stats_bpp(&D.st), D.devices, fault);
}

/* Sends STATUS= when it changed (at most every 200 ms unless forced). */
static void send_status(bool force)
{
    char s[1024];
    status_text(s, sizeof s);
    int64_t now = mono_ns();
    if (!force && (strcmp(s, D.last_status) == 0 || now - D.last_status_at < 200000000)) return;
    snprintf(D.last_status, sizeof D.last_status, "%s", s);
    D.last_status_at = now;
    sd_notifyf(0, "STATUS=%s", s);
}

/* ---- dispatch ------------------------------------------------------- */

static void on_tick(uv_timer_t *t);

static void ensure_tick(void)
{
    bool watching = intake_count(&D.in, ENTRY_WATCHING, -1) > 0;
    if (watching && !uv_is_active((uv_handle_t *)&D.tick)) {
        uint64_t ms = (uint64_t)(D.cfg.settle_ms / 4);
        if (ms < 20) ms = 20;
        if (ms > 250) ms = 250;
        uv_timer_start(&D.tick, on_tick, ms, ms);
    } else if (!watching && uv_is_active((uv_handle_t *)&D.tick)) {
        uv_timer_stop(&D.tick);
    }
}

static void on_retry(uv_timer_t *t);

static void dispatch(void)
{
    if (D.stopping || D.reload_pending || !D.workers) return;
    int64_t now = mono_ns();
    if (now < D.blocked_until) {
        uint64_t ms = (uint64_t)((D.blocked_until - now) / 1000000) + 1;
        uv_timer_start(&D.retry, on_retry, ms, 0);
        return;
    }
    /* the last free space on the outbox's disk is the spectrograph's: a
     * packed copy is written only while more than disk_reserve is free
     * (docs/OPERATIONS.md section 12); the housekeeping timer looks again */
    if (D.cfg.disk_reserve) {
        uint64_t free_now = disk_free_bytes(D.cfg.outbox_dir);
        bool low = free_now != UINT64_MAX && free_now < D.cfg.disk_reserve;
        if (low != D.reserve_paused) {
            log_line l;
            log_begin(&l, low ? LOG_ERR : LOG_NOTICE, low ? "disk_reserve" : "disk_reserve_cleared");
            log_str(&l, "dir", D.cfg.outbox_dir);
            log_int(&l, "free_bytes", (int64_t)free_now);
            log_int(&l, "reserve_bytes", (int64_t)D.cfg.disk_reserve);
            log_str(&l, "action", low ? "packing paused; frames wait in incoming; the sender must "
                                        "empty the outbox (nothing unsent is removed)"
                                      : "packing again");
            log_end(&l);
            D.reserve_paused = low;
        }
        if (low) return;
    }
    job j;
    while (D.inflight < D.max_in_flight && intake_pick(&D.in, &j, now)) {
        pool_submit(D.workers, &j);
        D.inflight++;
    }
    /* a file backing off alone: wake when it is due (the others went on) */
    int64_t due = intake_next_due(&D.in);
    if (D.inflight < D.max_in_flight && due > now)
        uv_timer_start(&D.retry, on_retry, (uint64_t)((due - now) / 1000000) + 1, 0);
}

static void on_retry(uv_timer_t *t)
{
    (void)t;
    dispatch();
    send_status(true);
}

static void on_tick(uv_timer_t *t)
{
    (void)t;
    intake_tick(&D.in, mono_ns());
    dispatch();
    ensure_tick();
}

/* ---- self-repair ---------------------------------------------------- */

static int take_lock(const char *state_dir);

/* The daemon's own directories (outbox, quarantine, state, done) are
 * recreated when they vanish, but only when their parent still exists:
 * a missing parent may be an unmounted disk, and creating the tree on the
 * root file system would hide that.  Otherwise the operator is told once. */
static void repair_dirs(void)
{
    const char *keys[] = {"outbox_dir", "quarantine_dir", "state_dir", "done_dir"};
    const char *dirs[] = {D.cfg.outbox_dir, D.cfg.quarantine_dir, D.cfg.state_dir, D.cfg.done_dir};
    for (int i = 0; i < 4; i++) {
        if (!dirs[i][0]) continue;
        struct stat st;
        if (stat(dirs[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            D.dir_trouble_logged[i] = false;
            continue;
        }
        bool missing = errno == ENOENT;
        char parent[CONFIG_PATH_MAX];
        snprintf(parent, sizeof parent, "%s", dirs[i]);
        char *slash = strrchr(parent, '/');
        if (slash && slash != parent) *slash = 0;
        else snprintf(parent, sizeof parent, "/");
        bool parent_ok = stat(parent, &st) == 0 && S_ISDIR(st.st_mode);
        if (missing && parent_ok && mkdir(dirs[i], 0750) == 0) {
            log_line l;
            log_begin(&l, LOG_WARNING, "dir_recreated");
            log_str(&l, "key", keys[i]);
            log_str(&l, "dir", dirs[i]);
            log_str(&l, "msg", "the directory had disappeared; created it again (mode 0750)");
            log_end(&l);
            D.dir_trouble_logged[i] = false;
            if (dirs[i] == D.cfg.state_dir) { /* the lock lived there: take it again */
                int fd = take_lock(D.cfg.state_dir);
                if (fd >= 0) {
                    close(D.lock_fd);
                    D.lock_fd = fd;
                }
            }
            continue;
        }
        if (D.dir_trouble_logged[i]) continue;
        D.dir_trouble_logged[i] = true;
        log_line l;
        log_begin(&l, LOG_ERR, "dir_missing");
        log_str(&l, "key", keys[i]);
        log_str(&l, "dir", dirs[i]);
        char what[CONFIG_PATH_MAX + 200];
        if (!missing)
            snprintf(what, sizeof what, "%s is not a directory: remove what is there; aurorad "
                     "recreates it", dirs[i]);
        else
            snprintf(what, sizeof what, "%s is missing and so is its parent %s (an unmounted "
                     "disk?): mount it or create it (mkdir -p, owner aurorad, mode 0750); "
                     "aurorad continues by itself", dirs[i], parent);
        log_str(&l, "action", what);
        log_end(&l);
    }
}

static void on_fs_event(uv_fs_event_t *h, const char *filename, int events, int status);

/* Incoming is the writer's directory: aurorad never creates it while
 * running, but when it is deleted and created again the watch must follow
 * it to the new directory (inotify watches the old inode). */
static bool check_incoming_watch(void)
{
    struct stat st;
    if (stat(D.cfg.incoming_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        if (D.watching) uv_fs_event_stop(&D.watch);
        D.watching = false;
        if (!D.incoming_missing_logged)
            log_msg(LOG_ERR, "incoming_missing",
                    "%s: gone (%s); create it again for the writer (mode 2770, group aurorad): "
                    "aurorad watches it again by itself", D.cfg.incoming_dir,
                    strerror(errno ? errno : ENOTDIR));
        D.incoming_missing_logged = true;
        return false;
    }
    D.incoming_missing_logged = false;
    if (D.watching && st.st_dev == D.watched_dev && st.st_ino == D.watched_ino) return true;
    if (D.watching) uv_fs_event_stop(&D.watch);
    D.watching = false;
    int rc = uv_fs_event_start(&D.watch, on_fs_event, D.cfg.incoming_dir, 0);
    if (rc < 0) {
        log_msg(LOG_ERR, "watch_failed", "%s: cannot watch: %s; listing every %.1f s instead",
                D.cfg.incoming_dir, uv_strerror(rc), D.cfg.rescan_seconds);
        return true;
    }
    D.watching = true;
    D.watched_dev = st.st_dev;
    D.watched_ino = st.st_ino;
    log_msg(LOG_NOTICE, "watch_rearmed", "%s: the directory was replaced; watching the new one",
            D.cfg.incoming_dir);
    return true;
}

static void on_rescan(uv_timer_t *t)
{
    (void)t;
    repair_dirs();
    if (check_incoming_watch() && intake_rescan(&D.in, false, mono_ns()) < 0)
        log_msg(LOG_ERR, "rescan_failed", "%s: cannot list: %s", D.cfg.incoming_dir, strerror(errno));
    dispatch();
    ensure_tick();
}

static void on_fs_event(uv_fs_event_t *h, const char *filename, int events, int status)
{
    (void)h;
    (void)events;
    int64_t now = mono_ns();
    if (status < 0) {
        log_msg(LOG_WARNING, "watch_error", "%s: %s; rescanning", D.cfg.incoming_dir,
                uv_strerror(status));
        intake_rescan(&D.in, false, now);
    } else if (filename) {
        intake_look(&D.in, filename, false, now);
    } else {
        intake_rescan(&D.in, false, now); /* overflow or unknown name */
    }
    dispatch();
    ensure_tick();
}

/* ---- results -------------------------------------------------------- */

static void log_frame(const result *r)
{
    bool over = r->latency_ms > D.cfg.budget_seconds * 1e3;
    log_line l;
    log_begin(&l, over ? LOG_WARNING : LOG_INFO,
              r->what == OUTCOME_RECOVERED ? "frame_recovered" : "frame");
    log_str(&l, "file", r->j.name);
    log_str(&l, "outbox_file", r->outbox_name);
    log_int(&l, "bytes_in", (int64_t)r->bytes_in);
    log_int(&l, "bytes_out", (int64_t)r->bytes_out);
    log_num(&l, "bpp", r->pixels ? (double)r->bytes_out * 8 / (double)r->pixels : 0, 3);
    log_num(&l, "latency_ms", r->latency_ms, 1);
    log_str(&l, "device", r->device);
    log_num(&l, "wait_ms", r->wait_ms, 1);
    log_num(&l, "read_ms", r->read_ms, 1);
    log_num(&l, "encode_ms", r->encode_ms, 1);
    log_num(&l, "verify_wait_ms", r->verify_wait_ms, 1);
    log_num(&l, "verify_ms", r->verify_ms, 1);
    log_num(&l, "write_ms", r->write_ms, 1);
    log_num(&l, "release_ms", r->release_ms, 1);
    log_bool(&l, "backlog", r->j.backlog);
    if (over) {
        log_bool(&l, "over_budget", true);
        log_num(&l, "budget_ms", D.cfg.budget_seconds * 1e3, 0);
    }
    if (r->gpu_fallback) log_bool(&l, "gpu_fallback", true);
    if (r->already_sent) log_bool(&l, "already_sent", true);
    log_end(&l);
}

static void log_fault(int level, const char *event, const result *r, double retry_s)
{
    log_line l;
    log_begin(&l, level, event);
    log_str(&l, "file", r->j.name);
    log_str(&l, "reason", r->reason);
    log_str(&l, "errno", commit_errno_name(r->err_no));
    if (retry_s >= 0) log_num(&l, "retry_in_s", retry_s, 2);
    log_str(&l, "original", "kept in incoming");
    log_end(&l);
}

static void handle_done(const result *r)
{
    intake_forget(&D.in, r->j.name);
    if (r->what == OUTCOME_COMMITTED) D.st.committed++;
    else D.st.recovered++;
    D.st.bytes_in += r->bytes_in;
    D.st.bytes_out += r->bytes_out;
    if (r->gpu_fallback) D.st.gpu_fallbacks++;
    if (r->latency_ms > D.cfg.budget_seconds * 1e3) D.st.over_budget++;
    if (r->pixels) stats_add_frame(&D.st, r->latency_ms, r->bytes_out, r->pixels);
    if (r->what == OUTCOME_COMMITTED) D.totals.committed++;
    else D.totals.recovered++;
    D.totals.bytes_in += r->bytes_in;
    D.totals.bytes_out += r->bytes_out;
    if (r->gpu_fallback) D.totals.gpu_fallbacks++;
    if (r->latency_ms > D.cfg.budget_seconds * 1e3) D.totals.over_budget++;
    counters_add_latency(&D.totals, r->latency_ms / 1e3);
    D.totals_dirty = true;
    log_frame(r);
    if (D.fault[0]) {
        log_msg(LOG_NOTICE, "outbox_recovered", "%s: writing again after: %s", D.cfg.outbox_dir,
                D.fault);
        D.fault[0] = 0;
        D.backoff_ns = 0;
        D.blocked_until = 0;
    }
}

/* The outbox cannot take files: nothing is dispatched until the pause is
 * over; the file goes to the back of its queue, so the next try is another
 * frame's. */
static void handle_outbox_fault(const result *r)
{
    int attempt;
    intake_retry(&D.in, r->j.name, mono_ns(), 0, &attempt);
    D.st.retries++;
    D.totals.retries++;
    D.totals_dirty = true;
    int64_t cap = (int64_t)(D.cfg.retry_max_seconds * 1e9);
    D.backoff_ns = D.backoff_ns ? D.backoff_ns * 2 : 250000000;
    if (D.backoff_ns > cap) D.backoff_ns = cap;
    D.blocked_until = mono_ns() + D.backoff_ns;
    snprintf(D.fault, sizeof D.fault, "%s", r->reason);
    log_fault(LOG_ERR, "outbox_fault", r, (double)D.backoff_ns / 1e9);
}

/* A fault of one file: it backs off alone.  Logged on the 1st, 2nd, 4th,
 * 8th... consecutive attempt, so a long fault does not flood the journal. */
static void handle_file_fault(const result *r)
{
    int attempt;
    int64_t delay = intake_retry(&D.in, r->j.name, mono_ns(),
                                 (int64_t)(D.cfg.retry_max_seconds * 1e9), &attempt);
    D.st.retries++;
    D.totals.retries++;
    D.totals_dirty = true;
    if ((attempt & (attempt - 1)) == 0) log_fault(LOG_ERR, "file_fault", r, (double)delay / 1e9);
}

static void handle_result(const result *r)
{
    D.inflight--;
    if (r->err_no == ENOENT) repair_dirs(); /* a directory of ours may have gone */
    switch (r->what) {
    case OUTCOME_COMMITTED:
    case OUTCOME_RECOVERED:
        handle_done(r);
        break;
    case OUTCOME_QUARANTINED: {
        intake_forget(&D.in, r->j.name);
        D.st.quarantined++;
        D.totals.quarantined++;
        D.totals_dirty = true;
        log_line l;
        log_begin(&l, LOG_WARNING, "quarantined");
        log_str(&l, "file", r->j.name);
        log_str(&l, "reason", r->reason);
        log_str(&l, "dir", D.cfg.quarantine_dir);
        log_end(&l);
        break;
    }
    case OUTCOME_VANISHED:
        intake_forget(&D.in, r->j.name);
        log_msg(LOG_NOTICE, "vanished", "%s: removed by someone else before it was read", r->j.name);
        break;
    case OUTCOME_CHANGED: {
        intake_rewatch(&D.in, r->j.name, mono_ns());
        log_line l;
        log_begin(&l, LOG_NOTICE, "frame_changed");
        log_str(&l, "file", r->j.name);
        log_str(&l, "reason", r->reason);
        log_str(&l, "action", "nothing released; taken again once it settles");
        log_end(&l);
        break;
    }
    case OUTCOME_HELD: {
        intake_hold(&D.in, r->j.name);
        log_line l;
        log_begin(&l, LOG_ERR, "held");
        log_str(&l, "file", r->j.name);
        log_str(&l, "reason", r->reason);
        log_str(&l, "errno", commit_errno_name(r->err_no));
        log_str(&l, "action", "left in incoming and skipped until it changes (or a reload)");
        log_end(&l);
        break;
    }
    case OUTCOME_RETRY_OUTBOX:
        handle_outbox_fault(r);
        break;
    case OUTCOME_RETRY_FILE:
        handle_file_fault(r);
        break;
    }
}

static void on_refused(const char *name, const char *reason)
{
    log_line l;
    log_begin(&l, LOG_ERR, "refused");
    log_str(&l, "file", name);
    log_str(&l, "reason", reason);
    log_end(&l);
}

static void finish_stop(void);
static void finish_reload(void);

static void on_wake(uv_async_t *a)
{
    (void)a;
    if (!D.workers) return;
    result r;
    bool any = false;
    while (pool_take_result(D.workers, &r)) {
        handle_result(&r);
        any = true;
    }
    if (!any) return;
    if (D.stopping && D.inflight == 0) {
        finish_stop();
        return;
    }
    if (D.reload_pending && D.inflight == 0) finish_reload();
    dispatch();
    send_status(false);
}

/* ---- watchdog and status ------------------------------------------- */

static void on_watchdog(uv_timer_t *t)
{
    (void)t;
    /* a worker on one frame for 4 budgets (at least a minute) is stuck
     * (a hung device call): stop feeding the watchdog so systemd restarts
     * us; the frame is still in incoming and will be taken again */
    int64_t stuck = (int64_t)(D.cfg.budget_seconds * 4e9);
    if (stuck < 60000000000LL) stuck = 60000000000LL;
    if (!D.workers || pool_healthy(D.workers, stuck)) {
        notify("WATCHDOG=1");
        D.stuck_logged = false;
    } else if (!D.stuck_logged) {
        log_msg(LOG_CRIT, "workers_stuck",
                "a worker has been on one frame for over %.0f s; no longer feeding the watchdog",
                (double)stuck / 1e9);
        D.stuck_logged = true;
    }
}

static void on_status_timer(uv_timer_t *t)
{
    (void)t;
    send_status(false);
    int64_t now = mono_ns();
    if (now - D.last_status_log >= 60000000000LL) {
        D.last_status_log = now;
        char s[1024];
        status_text(s, sizeof s);
        log_line l;
        log_begin(&l, LOG_INFO, "status");
        log_str(&l, "status", s);
        log_int(&l, "frames_done", (int64_t)(D.st.committed + D.st.recovered));
        log_int(&l, "quarantined", (int64_t)D.st.quarantined);
        log_int(&l, "over_budget_count", (int64_t)D.st.over_budget);
        log_int(&l, "backlog_count", intake_count(&D.in, ENTRY_QUEUED, -1));
        log_end(&l);
    }
}

/* ---- disks, counters, metrics -------------------------------------- */

static void save_counters(void)
{
    char status[1024], err[1200];
    status_text(status, sizeof status);
    if (counters_save(D.cfg.state_dir, &D.totals, status, D.devices, err, sizeof err) == 0)
        D.totals_dirty = false;
    else
        log_msg(LOG_WARNING, "counters_not_saved", "%s; kept in memory, tried again later", err);
}

/* configured GPUs: "gpu:N" each, up when a handle in service covers it */
static int gpu_states(char labels[][48], bool *up, int max)
{
    char hl[METRICS_MAX_GPUS][48];
    bool hup[METRICS_MAX_GPUS];
    int nh = D.workers ? pool_gpu_states(D.workers, hl, hup, METRICS_MAX_GPUS) : 0;
    int n = 0;
    for (int i = 0; i < D.cfg.gpus && n < max; i++) {
        int dev = D.cfg.ngpu_devices ? D.cfg.gpu_devices[i] : i;
        snprintf(labels[n], 48, "gpu:%d", dev);
        up[n] = false;
        for (int h = 0; h < nh; h++) {
            /* "gpu:0+1": the handle's devices */
            for (const char *p = hl[h] + 4; *p; p++) {
                if (atoi(p) == dev && (p == hl[h] + 4 || p[-1] == '+')) up[n] = up[n] || hup[h];
                while (p[1] && p[1] != '+') p++;
            }
        }
        n++;
    }
    return n;
}

static void write_metrics(void)
{
    if (!D.cfg.metrics_file[0]) return;
    metrics_snapshot m = {0};
    m.totals = &D.totals;
    m.outbox = D.last_outbox;
    m.incoming = D.last_incoming;
    m.done_files = (uint64_t)D.last_done.files;
    m.done_bytes = D.last_done.bytes;
    m.now_s = (int64_t)time(NULL);
    m.dirs = D.last_dirs;
    for (int i = 0; i < D.last_dirs; i++) {
        m.dir_key[i] = D.last_free_key[i];
        m.dir_free[i] = D.last_free[i];
    }
    m.gpus = gpu_states(m.gpu_label, m.gpu_up, METRICS_MAX_GPUS);
    m.in_flight = D.inflight;
    m.verify_queued = D.workers ? pool_verify_queued(D.workers) : 0;
    m.held = D.workers ? intake_count(&D.in, ENTRY_HELD, -1) : 0;
    m.outbox_paused = D.fault[0] || D.reserve_paused;
    char err[4400];
    static bool failed_logged;
    if (metrics_write(D.cfg.metrics_file, &m, err, sizeof err) != 0) {
        if (!failed_logged) log_msg(LOG_WARNING, "metrics_not_written", "%s", err);
        failed_logged = true;
    } else {
        failed_logged = false;
    }
}

static int dir_index(const char *key)
{
    static const char *keys[HOUSEKEEP_DIRS] = {"incoming", "outbox", "done", "quarantine", "state"};
    for (int i = 0; i < HOUSEKEEP_DIRS; i++)
        if (!strcmp(keys[i], key)) return i;
    return 0;
}

static void log_retention(const housekeep_pass *h)
{
    const retention_report *r = &h->retention;
    if (h->retention_rc) {
        log_msg(LOG_ERR, "retention_failed", "%s: cannot list: %s", h->cfg.done_dir,
                strerror(h->retention_errno));
        return;
    }
    if (r->removed) {
        D.totals.retention_removed += (uint64_t)r->removed;
        D.totals.retention_removed_bytes += r->removed_bytes;
        D.totals_dirty = true;
        log_line l;
        log_begin(&l, LOG_INFO, "retention");
        log_str(&l, "dir", h->cfg.done_dir);
        log_int(&l, "removed", r->removed);
        log_int(&l, "removed_bytes", (int64_t)r->removed_bytes);
        log_int(&l, "by_age", r->by_age);
        log_int(&l, "by_size", r->by_size);
        log_int(&l, "by_free", r->by_free);
        log_int(&l, "kept", r->kept);
        log_int(&l, "kept_bytes", (int64_t)r->kept_bytes);
        log_num(&l, "oldest_kept_age_days", r->oldest_kept_age_s / 86400, 2);
        log_int(&l, "free_bytes", (int64_t)r->free_after);
        log_end(&l);
    }
    if (r->errors) log_msg(LOG_ERR, "retention_failed", "%s (%d file(s) not removed)", r->first_error,
                           r->errors);
    static bool unmet_logged;
    if (r->free_unmet && !unmet_logged)
        log_msg(LOG_WARNING, "retention_exhausted",
                "%s: no originals left to remove and the disk still has only %llu bytes free "
                "(done_min_free %llu): the rest is the outbox, incoming and other files",
                h->cfg.done_dir, (unsigned long long)r->free_after,
                (unsigned long long)h->cfg.done_min_free);
    unmet_logged = r->free_unmet;
}

/* disk_low once per halving of free space under disk_warn_free, disk_ok
 * when it is back above */
static void log_disk_levels(const housekeep_pass *h)
{
    for (int i = 0; i < h->dirs; i++) {
        int k = dir_index(h->dir_key[i]);
        if (h->dir_free[i] == UINT64_MAX) continue;
        int level = disk_low_level(h->dir_free[i], D.cfg.disk_warn_free);
        if (level == D.disk_level[k]) continue;
        bool worse = level > D.disk_level[k];
        D.disk_level[k] = level;
        if (!worse && level > 0) continue; /* better but still low: said when it went down */
        log_line l;
        log_begin(&l, level ? (level >= 3 ? LOG_ERR : LOG_WARNING) : LOG_NOTICE,
                  level ? "disk_low" : "disk_ok");
        char key[32];
        snprintf(key, sizeof key, "%s_dir", h->dir_key[i]);
        log_str(&l, "key", key);
        log_str(&l, "dir", h->dir_path[i]);
        log_int(&l, "free_bytes", (int64_t)h->dir_free[i]);
        log_int(&l, "warn_bytes", (int64_t)D.cfg.disk_warn_free);
        if (level)
            log_str(&l, "action", "free space falling: see docs/OPERATIONS.md section 12 (retention "
                                  "of done_dir, disk_reserve, the sender)");
        log_end(&l);
    }
}

static void housekeep_in_thread(uv_work_t *w) { housekeep_run(w->data); }

static void on_housekeep_done(uv_work_t *w, int status)
{
    (void)status;
    housekeep_pass *h = w->data;
    D.housekeep = NULL;
    if (h->retention_ran) log_retention(h);
    log_disk_levels(h);
    D.last_outbox = h->outbox;
    D.last_incoming = h->incoming;
    D.last_done = h->done;
    D.last_dirs = h->dirs;
    for (int i = 0; i < h->dirs; i++) {
        D.last_free_key[i] = h->dir_key[i]; /* static strings */
        D.last_free[i] = h->dir_free[i];
    }
    free(h);
    write_metrics();
    if (D.totals_dirty) save_counters();
    if (!D.stopping) dispatch(); /* a disk reserve may have cleared */
}

static void on_housekeep_timer(uv_timer_t *t)
{
    (void)t;
    if (D.housekeep || D.stopping) return; /* the previous pass still runs */
    housekeep_pass *h = calloc(1, sizeof *h);
    if (!h) return;
    h->cfg = D.cfg;
    h->now_s = (double)time(NULL);
    D.housekeep = h;
    D.housekeep_work.data = h;
    if (uv_queue_work(D.loop, &D.housekeep_work, housekeep_in_thread, on_housekeep_done) != 0) {
        D.housekeep = NULL;
        free(h);
    }
}

/* ---- start, reload, stop ------------------------------------------- */

static void wake_from_worker(void *ud) { uv_async_send((uv_async_t *)ud); }

static int start_workers_and_watch(bool first)
{
    D.workers = pool_start(&D.cfg, wake_from_worker, &D.wake);
    if (!D.workers) {
        log_msg(LOG_ERR, "start_failed", "cannot start the workers: out of memory");
        return -1;
    }
    pool_describe(D.workers, D.devices, sizeof D.devices);
    /* enough frames that every encoder has one while every verify thread
     * checks one: the two stages overlap */
    D.max_in_flight = D.cfg.max_in_flight > 0
                          ? D.cfg.max_in_flight
                          : pool_workers(D.workers) + pool_verify_workers(D.workers);
    intake_init(&D.in, D.cfg.incoming_dir, D.cfg.settle_ms, D.cfg.stall_seconds);
    D.in.on_refused = on_refused;
    struct stat st;
    int rc = stat(D.cfg.incoming_dir, &st) == 0 ? 0 : uv_translate_sys_error(errno);
    if (rc == 0) rc = uv_fs_event_start(&D.watch, on_fs_event, D.cfg.incoming_dir, 0);
    if (rc < 0) {
        log_msg(LOG_ERR, "watch_failed", "%s: cannot watch: %s", D.cfg.incoming_dir, uv_strerror(rc));
        return -1;
    }
    D.watching = true;
    D.watched_dev = st.st_dev;
    D.watched_ino = st.st_ino;
    D.incoming_missing_logged = false;
    uint64_t rescan_ms = (uint64_t)(D.cfg.rescan_seconds * 1e3);
    uv_timer_start(&D.rescan, on_rescan, rescan_ms, rescan_ms);
    uv_timer_start(&D.housekeep_timer, on_housekeep_timer, 0, rescan_ms);
    int backlog = intake_rescan(&D.in, true, mono_ns());
    log_line l;
    log_begin(&l, LOG_INFO, first ? "started" : "reloaded");
    log_str(&l, "version", AURORAD_VERSION);
    log_str(&l, "config", D.cfg_path);
    log_str(&l, "incoming_dir", D.cfg.incoming_dir);
    log_str(&l, "outbox_dir", D.cfg.outbox_dir);
    log_str(&l, "done_dir", D.cfg.done_dir[0] ? D.cfg.done_dir : NULL);
    log_str(&l, "devices", D.devices);
    log_int(&l, "workers", pool_workers(D.workers));
    log_int(&l, "verify_workers", pool_verify_workers(D.workers));
    log_int(&l, "threads", pool_threads(D.workers));
    log_int(&l, "max_in_flight", D.max_in_flight);
    log_str(&l, "split", config_split_name(D.cfg.split));
    log_str(&l, "profile", aurp_profile_name(D.cfg.codec.profile));
    log_int(&l, "order", D.cfg.codec.order);
    log_int(&l, "equations", D.cfg.codec.equations);
    log_int(&l, "threshold", D.cfg.codec.threshold);
    log_bool(&l, "verify", D.cfg.verify);
    log_num(&l, "budget_seconds", D.cfg.budget_seconds, 3);
    log_int(&l, "backlog_count", backlog);
    log_end(&l);
    dispatch();
    ensure_tick();
    return 0;
}

static void stop_workers_and_watch(void)
{
    if (D.watching) uv_fs_event_stop(&D.watch);
    D.watching = false;
    uv_timer_stop(&D.tick);
    uv_timer_stop(&D.rescan);
    uv_timer_stop(&D.retry);
    uv_timer_stop(&D.housekeep_timer);
    pool_stop(D.workers);
    D.workers = NULL;
    intake_free(&D.in);
}

static void begin_reload(void)
{
    if (D.stopping) return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu",
               (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000);
    char err[1200];
    aurorad_config nc;
    if (config_load(D.cfg_path, &nc, err, sizeof err) != 0 ||
        config_check_dirs_on_disk(&nc, D.cfg_path, err, sizeof err) != 0) {
        log_line l;
        log_begin(&l, LOG_ERR, "reload_failed");
        log_str(&l, "config", D.cfg_path);
        log_str(&l, "error", err);
        log_str(&l, "action", "keeping the running configuration");
        log_end(&l);
        sd_notifyf(0, "READY=1\nSTATUS=reload failed, previous configuration kept: %s", err);
        D.last_status[0] = 0;
        return;
    }
    log_msg(LOG_NOTICE, "reloading", "%s: new configuration read; switching after %d frame(s) in flight",
            D.cfg_path, D.inflight);
    D.pending = nc;
    D.reload_pending = true;
    if (D.inflight == 0) finish_reload();
}

static void setup_logging(void)
{
    log_setup(D.cfg.log_level, D.cfg.log_prefix,
              D.log_format_forced ? D.log_format_flag : D.cfg.log_format);
}

static void finish_reload(void)
{
    aurorad_config old = D.cfg;
    stop_workers_and_watch();
    D.reload_pending = false;
    D.cfg = D.pending;
    setup_logging();
    char err[1200];
    bool ok = setup_dirs(&D.cfg, err, sizeof err) == 0;
    if (!ok) log_msg(LOG_ERR, "reload_failed", "%s; keeping the running configuration", err);
    if (ok && D.cfg.latency_window != old.latency_window) {
        stats keep = D.st;
        if (stats_init(&D.st, D.cfg.latency_window) == 0) {
            D.st.committed = keep.committed;
            D.st.recovered = keep.recovered;
            D.st.quarantined = keep.quarantined;
            D.st.retries = keep.retries;
            D.st.gpu_fallbacks = keep.gpu_fallbacks;
            D.st.over_budget = keep.over_budget;
            D.st.bytes_in = keep.bytes_in;
            D.st.bytes_out = keep.bytes_out;
            stats_free(&keep);
        } else {
            D.st = keep;
        }
    }
    if (ok && start_workers_and_watch(false) != 0) {
        stop_workers_and_watch();
        ok = false;
    }
    if (!ok) {
        D.cfg = old;
        setup_logging();
        if (start_workers_and_watch(false) != 0) {
            log_msg(LOG_CRIT, "reload_failed", "cannot restart with the previous configuration either");
            exit(EXIT_FAILURE); /* systemd restarts us; nothing is lost */
        }
    }
    D.blocked_until = 0;
    D.backoff_ns = 0;
    D.fault[0] = 0;
    notify("READY=1");
    send_status(true);
}

static void begin_stop(int signum)
{
    if (D.stopping) {
        log_msg(LOG_NOTICE, "stopping", "already stopping; %d frame(s) still in flight", D.inflight);
        return;
    }
    D.stopping = true;
    notify("STOPPING=1");
    log_line l;
    log_begin(&l, LOG_NOTICE, "stopping");
    log_str(&l, "signal", signum == SIGINT ? "SIGINT" : "SIGTERM");
    log_int(&l, "in_flight", D.inflight);
    log_end(&l);
    if (D.watching) uv_fs_event_stop(&D.watch);
    D.watching = false;
    uv_timer_stop(&D.tick);
    uv_timer_stop(&D.rescan);
    uv_timer_stop(&D.retry);
    uv_timer_stop(&D.housekeep_timer);
    send_status(true);
    if (D.inflight == 0) finish_stop();
}

static void close_cb(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h)) uv_close(h, NULL);
}

static void finish_stop(void)
{
    pool_stop(D.workers);
    D.workers = NULL;
    log_line l;
    log_begin(&l, LOG_NOTICE, "stopped");
    log_int(&l, "frames_done", (int64_t)(D.st.committed + D.st.recovered));
    log_int(&l, "quarantined", (int64_t)D.st.quarantined);
    log_int(&l, "left_in_incoming", intake_count(&D.in, ENTRY_QUEUED, -1) +
                                        intake_count(&D.in, ENTRY_WATCHING, -1) +
                                        intake_count(&D.in, ENTRY_HELD, -1));
    log_end(&l);
    save_counters();
    write_metrics();
    intake_free(&D.in);
    uv_walk(D.loop, close_cb, NULL);
}

static void on_signal(uv_signal_t *s, int signum)
{
    (void)s;
    if (signum == SIGHUP) begin_reload();
    else begin_stop(signum);
}

/* ---- main ----------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: aurorad -c FILE          run with this configuration\n"
            "       aurorad --check-config FILE   check a configuration and exit\n"
            "       aurorad --queue [-c FILE]     show the queue (outbox, incoming, totals) like mailq\n"
            "       aurorad --version\n"
            "options: --log-format auto|json|text   readable lines or JSON (auto: text on a\n"
            "         terminal, JSON otherwise, e.g. for journald); overrides log_format\n");
}

static int take_lock(const char *state_dir)
{
    char p[4200], err[256];
    snprintf(p, sizeof p, "%s/aurorad.lock", state_dir);
    int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0640);
    if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
        snprintf(err, sizeof err, "%s", strerror(errno));
        log_msg(LOG_ERR, "start_failed", "%s: %s", p,
                errno == EWOULDBLOCK ? "another aurorad is running on this state directory" : err);
        if (fd >= 0) close(fd);
        return -1;
    }
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) == 0 && write(fd, pid, (size_t)n) < 0) { /* informative only */ }
    return fd;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
                                         {"check-config", required_argument, NULL, 'C'},
                                         {"version", no_argument, NULL, 'V'},
                                         {"queue", no_argument, NULL, 'Q'},
                                         {"log-format", required_argument, NULL, 'L'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *cfg_path = NULL, *check = NULL;
    bool queue = false;
    int o;
    while ((o = getopt_long(argc, argv, "c:hV", opts, NULL)) != -1) {
        switch (o) {
        case 'c': cfg_path = optarg; break;
        case 'C': check = optarg; break;
        case 'Q': queue = true; break;
        case 'L':
            if (config_log_format_from_name(optarg, &D.log_format_flag)) {
                fprintf(stderr, "aurorad: --log-format: expected auto, json or text, not '%s'\n",
                        optarg);
                return 2;
            }
            D.log_format_forced = true;
            break;
        case 'V': printf("aurorad %s\n", AURORAD_VERSION); return 0;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (queue && !cfg_path) cfg_path = "/etc/aurorad/aurorad.yaml";
    if (optind != argc || (!cfg_path && !check)) {
        usage(stderr);
        return 2;
    }
    char err[16384];
    if (check) {
        aurorad_config c;
        if (config_load(check, &c, err, sizeof err) != 0 ||
            config_check_dirs_on_disk(&c, check, err, sizeof err) != 0) {
            int lines = 1;
            for (const char *q = err; *q; q++) lines += *q == '\n';
            fprintf(stderr, "%s\n", err);
            if (lines > 1) fprintf(stderr, "%s: %d errors\n", check, lines);
            return 1;
        }
        if (c.outbox_group[0] && !getgrnam(c.outbox_group)) {
            fprintf(stderr, "%s: outbox_group: no group '%s' on this machine\n", check,
                    c.outbox_group);
            return 1;
        }
        printf("%s: ok\n", check);
        return 0;
    }

    if (queue) {
        aurorad_config c;
        if (config_load(cfg_path, &c, err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        return queue_print(&c, cfg_path, 50, stdout);
    }
    snprintf(D.cfg_path, sizeof D.cfg_path, "%s", cfg_path);
    log_setup(LOG_INFO, LOG_PREFIX_AUTO, D.log_format_forced ? D.log_format_flag : LOG_FORMAT_AUTO);
    if (config_load(cfg_path, &D.cfg, err, sizeof err) != 0 ||
        config_check_dirs_on_disk(&D.cfg, cfg_path, err, sizeof err) != 0) {
        log_msg(LOG_ERR, "config_error", "%s", err);
        return 1;
    }
    setup_logging();
    /* a daemon that cannot read FITS headers would take every frame for
     * a bad file: refuse to start instead (cfitsio is opened on first use) */
    if (frame_fits_ready(err, sizeof err) != 0) {
        log_msg(LOG_ERR, "start_failed", "%s", err);
        return 1;
    }
    if (setup_dirs(&D.cfg, err, sizeof err) != 0) {
        log_msg(LOG_ERR, "start_failed", "%s", err);
        return 1;
    }
    D.lock_fd = take_lock(D.cfg.state_dir);
    if (D.lock_fd < 0) return 1;
    if (stats_init(&D.st, D.cfg.latency_window) != 0) return 1;
    if (counters_load(D.cfg.state_dir, &D.totals, err, sizeof err) != 0) {
        log_msg(LOG_ERR, "counters_reset", "%s; the totals start again from zero", err);
        D.totals_dirty = true;
    }

    D.loop = uv_default_loop();
    uv_async_init(D.loop, &D.wake, on_wake);
    uv_fs_event_init(D.loop, &D.watch);
    uv_timer_init(D.loop, &D.tick);
    uv_timer_init(D.loop, &D.rescan);
    uv_timer_init(D.loop, &D.retry);
    uv_timer_init(D.loop, &D.watchdog);
    uv_timer_init(D.loop, &D.status_timer);
    uv_timer_init(D.loop, &D.housekeep_timer);
    uv_signal_init(D.loop, &D.sighup);
    uv_signal_init(D.loop, &D.sigterm);
    uv_signal_init(D.loop, &D.sigint);
    uv_signal_start(&D.sighup, on_signal, SIGHUP);
    uv_signal_start(&D.sigterm, on_signal, SIGTERM);
    uv_signal_start(&D.sigint, on_signal, SIGINT);
    signal(SIGPIPE, SIG_IGN);
    /* the read leases that tell whether a writer still has a frame open are
     * dropped at once; a lease break in between must not kill us (SIGIO's
     * default action) */
    signal(SIGIO, SIG_IGN);

    if (start_workers_and_watch(true) != 0) return 1;
    D.last_status_log = mono_ns();
    uv_timer_start(&D.status_timer, on_status_timer, 1000, 1000);
    if (sd_watchdog_enabled(0, &D.watchdog_usec) > 0 && D.watchdog_usec > 0) {
        uint64_t ms = D.watchdog_usec / 2000;
        if (ms < 1) ms = 1;
        uv_timer_start(&D.watchdog, on_watchdog, 0, ms);
    }
    notify("READY=1");
    send_status(true);

    uv_run(D.loop, UV_RUN_DEFAULT);
    uv_loop_close(D.loop);
    stats_free(&D.st);
    close(D.lock_fd);
    return 0;
}

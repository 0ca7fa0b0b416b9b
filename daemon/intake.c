#include "intake.h"

#include "commit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void intake_init(intake *in, const char *dir, int settle_ms, double stall_seconds)
{
    memset(in, 0, sizeof *in);
    snprintf(in->dir, sizeof in->dir, "%s", dir);
    in->settle_ms = settle_ms;
    in->stall_seconds = stall_seconds;
}

void intake_free(intake *in)
{
    free(in->e);
    in->e = NULL;
    in->n = in->cap = 0;
}

static bool ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

bool intake_name_wanted(const char *name)
{
    if (!name[0] || name[0] == '.') return false;
    if (strlen(name) >= JOB_NAME_MAX) return false;
    return !ends_with(name, ".tmp") && !ends_with(name, ".part") && !ends_with(name, ".partial") &&
           !strchr(name, '/');
}

static entry *find(intake *in, const char *name)
{
    for (int i = 0; i < in->n; i++)
        if (!strcmp(in->e[i].name, name)) return &in->e[i];
    return NULL;
}

static void drop(intake *in, entry *e)
{
    *e = in->e[--in->n];
}

static int64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void enqueue(intake *in, entry *e, int64_t t_complete)
{
    e->state = ENTRY_QUEUED;
    e->t_complete = t_complete;
    e->seq = in->next_seq++;
    e->not_before = 0;
}

static entry *add_entry(intake *in, const char *name, bool backlog, int64_t now)
{
    if (in->n == in->cap) {
        int nc = in->cap ? in->cap * 2 : 64;
        entry *ne = realloc(in->e, (size_t)nc * sizeof *ne);
        if (!ne) return NULL; /* the rescan will find it again */
        in->e = ne;
        in->cap = nc;
    }
    entry *e = &in->e[in->n++];
    memset(e, 0, sizeof *e);
    snprintf(e->name, sizeof e->name, "%s", name);
    e->backlog = backlog;
    e->first_seen = now;
    e->stable_since = now;
    return e;
}

static int64_t mtime_of(const struct stat *st)
{
    return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

static bool same_file(const entry *e, const struct stat *st)
{
    return e->dev == (uint64_t)st->st_dev && e->ino == (uint64_t)st->st_ino &&
           e->size == (uint64_t)st->st_size && e->mtime_ns == mtime_of(st);
}

static void remember(entry *e, const struct stat *st)
{
    e->dev = (uint64_t)st->st_dev;
    e->ino = (uint64_t)st->st_ino;
    e->size = (uint64_t)st->st_size;
    e->mtime_ns = mtime_of(st);
}

/* Opens the regular file PATH without following a link and without
 * blocking (a FIFO swapped in must not stall the loop); -1 with errno when
 * it cannot, ENOENT/ELOOP/EINVAL-like when it is not a regular file. */
static int open_regular(const char *path, const struct stat *lst, struct stat *st)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY);
    if (fd < 0) return -1;
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode) || st->st_ino != lst->st_ino ||
        st->st_dev != lst->st_dev) {
        close(fd);
        errno = ENOENT; /* replaced between lstat and open: the next look sees the new one */
        return -1;
    }
    return fd;
}

/* Whether the complete, settled file in e may be queued: not while another
 * process still has it open for writing (a writer pausing between HDUs),
 * unless it has been unchanged for stall_seconds (a writer that never
 * closes). */
static bool writer_gone(const intake *in, const entry *e, int fd, int64_t now)
{
    if (now - e->stable_since >= (int64_t)(in->stall_seconds * 1e9)) return true;
    return commit_open_for_writing(fd) != 1;
}

bool intake_look(intake *in, const char *name, bool backlog, int64_t now)
{
    if (!intake_name_wanted(name)) return false;
    entry *e = find(in, name);
    if (e && (e->state == ENTRY_QUEUED || e->state == ENTRY_IN_FLIGHT))
        return false; /* not ours to touch; the worker checks what it opens */
    char path[4096 + JOB_NAME_MAX];
    snprintf(path, sizeof path, "%s/%s", in->dir, name);
    struct stat lst, st;
    /* lstat first: special files are never opened (a FIFO would block, a
     * device may act on open), links never followed */
    if (lstat(path, &lst) != 0 || !S_ISREG(lst.st_mode)) {
        if (e) drop(in, e);
        return false;
    }
    if (e && e->state == ENTRY_HELD) {
        if (same_file(e, &lst)) return false; /* skipped until it changes */
        drop(in, e);
        e = NULL; /* changed: a new file as far as intake is concerned */
    }
    if (!e && strlen(name) > JOB_NAME_ACCEPTED) {
        e = add_entry(in, name, backlog, now);
        if (!e) return false;
        remember(e, &lst);
        e->state = ENTRY_HELD;
        if (in->on_refused) {
            char why[200];
            snprintf(why, sizeof why,
                     "name of %zu bytes is longer than %d: its quarantine note would not fit; "
                     "left in incoming (rename it shorter to have it packed)",
                     strlen(name), JOB_NAME_ACCEPTED);
            in->on_refused(name, why);
        }
        return false;
    }
    int fd = open_regular(path, &lst, &st);
    int open_errno = fd < 0 ? errno : 0;
    /* A regular file that cannot be opened (EACCES: a writer's umask) is
     * still taken once it stops changing, as a broken file: the worker
     * quarantines it with the reason instead of it sitting unseen. */
    bool unreadable = fd < 0 && open_errno != ENOENT && open_errno != ELOOP;
    if (fd < 0 && !unreadable) {
        if (e) drop(in, e);
        return false;
    }
    if (unreadable) st = lst;
    bool first = false;
    if (!e) {
        e = add_entry(in, name, backlog, now);
        if (!e) {
            if (fd >= 0) close(fd);
            return false;
        }
        remember(e, &st);
        first = true;
    } else if (!same_file(e, &st)) {
        remember(e, &st);
        e->stable_since = now;
        e->fits_known = false;
    }
    e->unreadable = unreadable;
    if (unreadable) {
        e->fits.state = FITSREADY_BROKEN;
        snprintf(e->fits.why, sizeof e->fits.why, "cannot be opened: %s", strerror(open_errno));
        e->fits_known = false; /* look again if it becomes readable */
    } else if (!e->fits_known) {
        fitsready_check_fd(fd, e->size, &e->fits);
        e->fits_known = true; /* unchanged size: the answer cannot change */
    }

    int64_t settle = (int64_t)in->settle_ms * 1000000;
    int64_t stall = (int64_t)(in->stall_seconds * 1e9);
    int64_t stable = now - e->stable_since;
    bool old_at_first_sight = first && wall_ns() - e->mtime_ns >= settle;
    bool take = false;
    int64_t t_complete = now;
    switch (e->fits.state) {
    case FITSREADY_COMPLETE:
        take = (old_at_first_sight || stable >= settle) && (fd < 0 || writer_gone(in, e, fd, now));
        if (!old_at_first_sight) t_complete = e->stable_since;
        break;
    case FITSREADY_BROKEN:
        take = old_at_first_sight || stable >= settle;
        break;
    default:
        take = stable >= stall || (first && wall_ns() - e->mtime_ns >= stall);
        break;
    }
    if (fd >= 0) close(fd);
    if (take) enqueue(in, e, t_complete);
    return take;
}

int intake_rescan(intake *in, bool backlog, int64_t now)
{
    DIR *d = opendir(in->dir);
    if (!d) return -1;
    int queued = 0;
    struct dirent *de;
    /* names first, then looks: intake_look may reallocate the table */
    char (*names)[JOB_NAME_MAX] = NULL;
    size_t nn = 0, cap = 0;
    while ((de = readdir(d)) != NULL) {
        if (!intake_name_wanted(de->d_name)) continue;
        if (nn == cap) {
            size_t nc = cap ? cap * 2 : 64;
            void *p = realloc(names, nc * sizeof *names);
            if (!p) break;
            names = p;
            cap = nc;
        }
        snprintf(names[nn++], JOB_NAME_MAX, "%s", de->d_name);
    }
    closedir(d);
    /* the start-up backlog is taken oldest name first (names are capture times) */
    if (nn > 1) qsort(names, nn, sizeof *names, (int (*)(const void *, const void *))strcmp);
    for (size_t i = 0; i < nn; i++) queued += intake_look(in, names[i], backlog, now);
    /* entries whose files vanished without an event */
    for (int i = 0; i < in->n;) {
        entry *e = &in->e[i];
        bool present = false;
        for (size_t k = 0; k < nn && !present; k++) present = !strcmp(names[k], e->name);
        if (!present && (e->state == ENTRY_WATCHING || e->state == ENTRY_HELD)) drop(in, e);
        else i++;
    }
    free(names);
    return queued;
}

int intake_tick(intake *in, int64_t now)
{
    int queued = 0;
    char name[JOB_NAME_MAX];
    for (int i = 0; i < in->n; i++) {
        if (in->e[i].state != ENTRY_WATCHING) continue; /* HELD: rescans and events only */
        snprintf(name, sizeof name, "%s", in->e[i].name);
        int before = in->n;
        queued += intake_look(in, name, in->e[i].backlog, now);
        if (in->n < before) i--; /* dropped: another entry moved into slot i */
    }
    return queued;
}

static entry *oldest(intake *in, bool backlog, int64_t now)
{
    entry *best = NULL;
    for (int i = 0; i < in->n; i++) {
        entry *e = &in->e[i];
        if (e->state == ENTRY_QUEUED && e->backlog == backlog && e->not_before <= now &&
            (!best || e->seq < best->seq))
            best = e;
    }
    return best;
}

bool intake_pick(intake *in, job *j, int64_t now)
{
    entry *nw = oldest(in, false, now), *bl = oldest(in, true, now);
    entry *e;
    if (nw && bl) e = in->last_pick_new ? bl : nw; /* alternate, new first */
    else e = nw ? nw : bl;
    if (!e) return false;
    in->last_pick_new = !e->backlog;
    e->state = ENTRY_IN_FLIGHT;
    memset(j, 0, sizeof *j);
    snprintf(j->name, sizeof j->name, "%s", e->name);
    j->t_complete_ns = e->t_complete;
    j->backlog = e->backlog;
    j->seen = (file_ident){e->dev, e->ino, e->size, e->mtime_ns};
    j->unreadable = e->unreadable;
    /* past stall_seconds a writer that keeps the file open no longer
     * stops it (intake took it for the same reason) */
    j->check_writers = now - e->stable_since < (int64_t)(in->stall_seconds * 1e9);
    if (e->fits.state != FITSREADY_COMPLETE) {
        j->suspect = true;
        snprintf(j->suspect_why, sizeof j->suspect_why, "%s%s",
                 e->fits.state == FITSREADY_INCOMPLETE ? "truncated: " : "", e->fits.why);
    }
    return true;
}

int64_t intake_next_due(const intake *in)
{
    int64_t due = 0;
    for (int i = 0; i < in->n; i++) {
        const entry *e = &in->e[i];
        if (e->state == ENTRY_QUEUED && e->not_before && (!due || e->not_before < due))
            due = e->not_before;
    }
    return due;
}

void intake_forget(intake *in, const char *name)
{
    entry *e = find(in, name);
    if (e) drop(in, e);
}

int64_t intake_retry(intake *in, const char *name, int64_t now, int64_t cap_ns, int *attempt)
{
    entry *e = find(in, name);
    *attempt = 0;
    if (!e) return 0;
    int64_t delay = 250000000;
    for (int i = 0; i < e->attempts && delay < cap_ns; i++) delay *= 2;
    if (delay > cap_ns) delay = cap_ns;
    e->attempts++;
    *attempt = e->attempts;
    e->state = ENTRY_QUEUED;
    e->seq = in->next_seq++; /* the back of its queue: it never holds the others */
    e->not_before = now + delay;
    return delay;
}

void intake_hold(intake *in, const char *name)
{
    entry *e = find(in, name);
    if (e) e->state = ENTRY_HELD;
}

void intake_rewatch(intake *in, const char *name, int64_t now)
{
    entry *e = find(in, name);
    if (!e) return;
    e->state = ENTRY_WATCHING;
    e->stable_since = now;
    e->fits_known = false;
    e->size = UINT64_MAX; /* the next look records the file as it is now */
}

int intake_count(const intake *in, entry_state s, int backlog)
{
    int n = 0;
    for (int i = 0; i < in->n; i++)
        if (in->e[i].state == s && (backlog < 0 || in->e[i].backlog == (backlog == 1))) n++;
    return n;
}

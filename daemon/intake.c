#include "intake.h"

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
    if (strlen(name) >= JOB_NAME_MAX - 16) return false;
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
}

bool intake_look(intake *in, const char *name, bool backlog, int64_t now)
{
    if (!intake_name_wanted(name)) return false;
    entry *e = find(in, name);
    if (e && e->state != ENTRY_WATCHING) return false; /* queued or in flight: not ours to touch */
    char path[4096 + JOB_NAME_MAX];
    snprintf(path, sizeof path, "%s/%s", in->dir, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    int open_errno = fd < 0 ? errno : 0;
    struct stat st;
    /* A regular file that cannot be opened (EACCES: a writer's umask) is
     * still taken once it stops changing, as a broken file: the worker
     * quarantines it with the reason instead of it sitting unseen. */
    bool unreadable = fd < 0 && open_errno != ENOENT && open_errno != ELOOP &&
                      lstat(path, &st) == 0 && S_ISREG(st.st_mode);
    if (!unreadable && (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        if (fd >= 0) close(fd);
        if (e) drop(in, e); /* gone, or not a regular file */
        return false;
    }
    int64_t mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    bool first = false;
    if (!e) {
        if (in->n == in->cap) {
            int nc = in->cap ? in->cap * 2 : 64;
            entry *ne = realloc(in->e, (size_t)nc * sizeof *ne);
            if (!ne) {
                close(fd);
                return false; /* the rescan will find it again */
            }
            in->e = ne;
            in->cap = nc;
        }
        e = &in->e[in->n++];
        memset(e, 0, sizeof *e);
        snprintf(e->name, sizeof e->name, "%s", name);
        e->backlog = backlog;
        e->first_seen = now;
        e->stable_since = now;
        e->size = (uint64_t)st.st_size;
        e->mtime_ns = mtime;
        first = true;
    } else if (e->size != (uint64_t)st.st_size || e->mtime_ns != mtime) {
        e->size = (uint64_t)st.st_size;
        e->mtime_ns = mtime;
        e->stable_since = now;
        e->fits_known = false;
    }
    if (unreadable) {
        e->fits.state = FITSREADY_BROKEN;
        snprintf(e->fits.why, sizeof e->fits.why, "cannot be opened: %s", strerror(open_errno));
        e->fits_known = false; /* look again if it becomes readable */
    } else {
        if (!e->fits_known) {
            fitsready_check_fd(fd, e->size, &e->fits);
            e->fits_known = true; /* unchanged size: the answer cannot change */
        }
        close(fd);
    }

    int64_t settle = (int64_t)in->settle_ms * 1000000;
    int64_t stable = now - e->stable_since;
    bool old_at_first_sight = first && wall_ns() - mtime >= settle;
    switch (e->fits.state) {
    case FITSREADY_COMPLETE:
        if (old_at_first_sight || stable >= settle) {
            enqueue(in, e, old_at_first_sight ? now : e->stable_since);
            return true;
        }
        return false;
    case FITSREADY_BROKEN:
        if (old_at_first_sight || stable >= settle) {
            enqueue(in, e, now);
            return true;
        }
        return false;
    default:
        if (stable >= (int64_t)(in->stall_seconds * 1e9) ||
            (first && wall_ns() - mtime >= (int64_t)(in->stall_seconds * 1e9))) {
            enqueue(in, e, now);
            return true;
        }
        return false;
    }
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
        if (!present && e->state == ENTRY_WATCHING) drop(in, e);
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
        if (in->e[i].state != ENTRY_WATCHING) continue;
        snprintf(name, sizeof name, "%s", in->e[i].name);
        int before = in->n;
        queued += intake_look(in, name, in->e[i].backlog, now);
        if (in->n < before) i--; /* dropped: another entry moved into slot i */
    }
    return queued;
}

static entry *oldest(intake *in, bool backlog)
{
    entry *best = NULL;
    for (int i = 0; i < in->n; i++) {
        entry *e = &in->e[i];
        if (e->state == ENTRY_QUEUED && e->backlog == backlog && (!best || e->seq < best->seq))
            best = e;
    }
    return best;
}

bool intake_pick(intake *in, job *j)
{
    entry *nw = oldest(in, false), *bl = oldest(in, true);
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
    if (e->fits.state != FITSREADY_COMPLETE) {
        j->suspect = true;
        snprintf(j->suspect_why, sizeof j->suspect_why, "%s%s",
                 e->fits.state == FITSREADY_INCOMPLETE ? "truncated: " : "", e->fits.why);
    }
    return true;
}

void intake_done(intake *in, const char *name, bool requeue)
{
    entry *e = find(in, name);
    if (!e) return;
    if (requeue) e->state = ENTRY_QUEUED; /* keeps its place (seq) at the head */
    else drop(in, e);
}

int intake_count(const intake *in, entry_state s, int backlog)
{
    int n = 0;
    for (int i = 0; i < in->n; i++)
        if (in->e[i].state == s && (backlog < 0 || in->e[i].backlog == (backlog == 1))) n++;
    return n;
}

#include "retention.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

typedef struct {
    char *name;
    uint64_t size, disk; /* st_size, and what removing it frees (st_blocks) */
    int64_t mtime_ns;
} original;

static int by_age(const void *a, const void *b)
{
    const original *x = a, *y = b;
    if (x->mtime_ns != y->mtime_ns) return x->mtime_ns < y->mtime_ns ? -1 : 1;
    return strcmp(x->name, y->name);
}

bool retention_enabled(const retention_rules *r)
{
    return r->min_free || r->max_bytes || r->max_age_s > 0;
}

uint64_t disk_free_bytes(const char *dir)
{
    struct statvfs vs;
    if (statvfs(dir, &vs) != 0) return UINT64_MAX;
    return (uint64_t)vs.f_bavail * vs.f_frsize;
}

int disk_low_level(uint64_t free_bytes, uint64_t warn)
{
    if (!warn || free_bytes >= warn) return 0;
    int level = 1;
    for (uint64_t t = warn / 2; level < 8 && free_bytes < t; t /= 2) level++;
    return level;
}

int retention_pass(const char *done_dir, const retention_rules *r, double now_s,
                   retention_report *rep)
{
    memset(rep, 0, sizeof *rep);
    int dfd = open(done_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return -1;
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return -1;
    }
    original *v = NULL;
    size_t n = 0, cap = 0;
    uint64_t total = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue; /* temporary copies, . and .. */
        struct stat st;
        if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 1024;
            original *nv = realloc(v, cap * sizeof *v);
            if (!nv) break;
            v = nv;
        }
        v[n].name = strdup(de->d_name);
        if (!v[n].name) break;
        v[n].size = (uint64_t)st.st_size;
        v[n].disk = (uint64_t)st.st_blocks * 512;
        v[n].mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
        total += v[n].size;
        n++;
    }
    if (n) qsort(v, n, sizeof *v, by_age); /* v is NULL when done_dir has no original: UB for qsort */
    uint64_t free_now = disk_free_bytes(done_dir);
    size_t i = 0;
    for (; i < n; i++) {
        double age = now_s - (double)v[i].mtime_ns / 1e9;
        int *why = NULL;
        if (r->max_age_s > 0 && age > r->max_age_s) why = &rep->by_age;
        else if (r->max_bytes && total > r->max_bytes) why = &rep->by_size;
        else if (r->min_free && free_now != UINT64_MAX && free_now < r->min_free) why = &rep->by_free;
        if (!why) break;
        if (unlinkat(dfd, v[i].name, 0) != 0 && errno != ENOENT) {
            if (!rep->errors++)
                snprintf(rep->first_error, sizeof rep->first_error, "%s/%.200s: cannot remove: %s",
                         done_dir, v[i].name, strerror(errno));
            continue;
        }
        (*why)++;
        rep->removed++;
        rep->removed_bytes += v[i].size;
        total -= v[i].size;
        if (free_now != UINT64_MAX) free_now += v[i].disk;
    }
    if (rep->removed) fsync(dfd); /* the space is really free only once the unlinks are durable */
    rep->kept = (int)(n - i);
    rep->kept_bytes = total;
    if (i < n) rep->oldest_kept_age_s = now_s - (double)v[i].mtime_ns / 1e9;
    rep->free_after = disk_free_bytes(done_dir);
    rep->free_unmet = r->min_free && i == n && rep->free_after != UINT64_MAX &&
                      rep->free_after < r->min_free;
    for (size_t k = 0; k < n; k++) free(v[k].name);
    free(v);
    closedir(d);
    return 0;
}

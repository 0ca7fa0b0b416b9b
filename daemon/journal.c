#include "journal.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commit.h"

#define PATHLEN 4096

static void journal_dir(const char *state_dir, char *out, size_t cap)
{
    snprintf(out, cap, "%s/" JOURNAL_SUBDIR, state_dir);
}

/* The entry: "tmp NAME\nident DEV INO SIZE MTIME_NS\n". */
typedef struct {
    char tmp_name[JOB_NAME_MAX];
    file_ident ident;
} journal_entry;

static bool read_entry(const char *path, journal_entry *e)
{
    FILE *f = fopen(path, "re");
    if (!f) return false;
    long long mtime;
    unsigned long long dev, ino, size;
    bool ok = fscanf(f, "tmp %255s\nident %llu %llu %llu %lld", e->tmp_name, &dev, &ino, &size,
                     &mtime) == 5;
    fclose(f);
    if (ok) {
        e->ident.dev = dev;
        e->ident.ino = ino;
        e->ident.size = size;
        e->ident.mtime_ns = mtime;
    }
    return ok;
}

int journal_begin(const char *state_dir, const char *outname, const char *tmp_name,
                  const file_ident *seen, char *err, size_t err_len)
{
    char dir[PATHLEN], text[JOB_NAME_MAX + 128];
    journal_dir(state_dir, dir, sizeof dir);
    int n = snprintf(text, sizeof text, "tmp %s\nident %llu %llu %llu %lld\n", tmp_name,
                     (unsigned long long)seen->dev, (unsigned long long)seen->ino,
                     (unsigned long long)seen->size, (long long)seen->mtime_ns);
    int rc = commit_write_atomic(dir, outname, text, (size_t)n, err, err_len);
    if (rc != 0 && errno == ENOENT && mkdir(dir, 0750) == 0) /* removed while running */
        rc = commit_write_atomic(dir, outname, text, (size_t)n, err, err_len);
    return rc;
}

int journal_end(const char *state_dir, const char *outname, char *err, size_t err_len)
{
    char dir[PATHLEN], path[PATHLEN + JOB_NAME_MAX];
    journal_dir(state_dir, dir, sizeof dir);
    snprintf(path, sizeof path, "%s/%s", dir, outname);
    if (unlink(path) != 0) {
        if (errno == ENOENT) return 0;
        snprintf(err, err_len, "%s: unlink: %s", path, strerror(errno));
        return -1;
    }
    return commit_fsync_dir(dir, err, err_len);
}

static bool same_ident(const file_ident *a, const file_ident *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime_ns == b->mtime_ns;
}

bool journal_committed(const char *state_dir, const char *outname, const file_ident *seen)
{
    char dir[PATHLEN], path[PATHLEN + JOB_NAME_MAX], err[512];
    journal_dir(state_dir, dir, sizeof dir);
    snprintf(path, sizeof path, "%s/%s", dir, outname);
    journal_entry e;
    if (access(path, F_OK) != 0) return false;
    if (read_entry(path, &e) && same_ident(&e.ident, seen)) return true;
    /* another file of that name, or an unreadable entry: the frame is
     * packed as new (the outbox decides whether that name is free) */
    journal_end(state_dir, outname, err, sizeof err);
    return false;
}

int journal_resolve(const char *state_dir, const char *outbox_dir, int *dropped, char *err,
                    size_t err_len)
{
    char dir[PATHLEN];
    journal_dir(state_dir, dir, sizeof dir);
    *dropped = 0;
    if (mkdir(dir, 0750) != 0 && errno != EEXIST) {
        snprintf(err, err_len, "%s: cannot create: %s", dir, strerror(errno));
        return -1;
    }
    commit_cleanup_temps(dir); /* an entry being written when the process died */
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, err_len, "%s: cannot list: %s", dir, strerror(errno));
        return -1;
    }
    int kept = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.') continue;
        char path[PATHLEN + JOB_NAME_MAX], tmp[PATHLEN + JOB_NAME_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        journal_entry e;
        bool readable = read_entry(path, &e);
        if (readable) snprintf(tmp, sizeof tmp, "%s/%s", outbox_dir, e.tmp_name);
        /* an unreadable entry cannot prove a commit: packing again is the
         * safe side (a possible duplicate, never a loss) */
        if (!readable || access(tmp, F_OK) == 0) {
            unlink(path);
            (*dropped)++;
        } else {
            kept++;
        }
    }
    closedir(d);
    commit_fsync_dir(dir, err, err_len);
    return kept;
}

#include "commit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PATHLEN 4096

static int fail(char *err, size_t err_len, const char *path, const char *what)
{
    int e = errno;
    snprintf(err, err_len, "%s: %s: %s", path, what, strerror(e));
    errno = e;
    return -1;
}

int commit_errno_is_transient(int e)
{
    return e == ENOSPC || e == EDQUOT || e == EIO || e == EROFS || e == EAGAIN || e == ENOMEM ||
           e == EINTR;
}

int commit_fsync_dir(const char *dir, char *err, size_t err_len)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return fail(err, err_len, dir, "open directory");
    if (fsync(fd) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return fail(err, err_len, dir, "fsync directory");
    }
    close(fd);
    return 0;
}

static int write_all(int fd, const void *data, size_t len)
{
    const uint8_t *p = data;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int commit_write_atomic(const char *dir, const char *name, const void *data, size_t len, char *err,
                        size_t err_len)
{
    char tmp[PATHLEN], dst[PATHLEN];
    snprintf(tmp, sizeof tmp, "%s/.%s.tmp-%ld", dir, name, (long)getpid());
    snprintf(dst, sizeof dst, "%s/%s", dir, name);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
    if (fd < 0) return fail(err, err_len, tmp, "create");
    if (write_all(fd, data, len) != 0 || fsync(fd) != 0) {
        int e = errno;
        fail(err, err_len, tmp, "write");
        close(fd);
        unlink(tmp);
        errno = e;
        return -1;
    }
    if (close(fd) != 0) {
        int e = errno;
        fail(err, err_len, tmp, "close");
        unlink(tmp);
        errno = e;
        return -1;
    }
    if (rename(tmp, dst) != 0) {
        int e = errno;
        fail(err, err_len, dst, "rename into place");
        unlink(tmp);
        errno = e;
        return -1;
    }
    return commit_fsync_dir(dir, err, err_len);
}

static int copy_file(const char *src, const char *dst_dir, const char *dst_name, char *err,
                     size_t err_len)
{
    uint8_t *data;
    size_t len;
    if (commit_read_file(src, &data, &len, err, err_len)) return -1;
    int rc = commit_write_atomic(dst_dir, dst_name, data, len, err, err_len);
    int e = errno;
    free(data);
    errno = e;
    return rc;
}

int commit_move(const char *src_dir, const char *name, const char *dst_dir, const char *dst_name,
                char *err, size_t err_len)
{
    char src[PATHLEN], dst[PATHLEN];
    snprintf(src, sizeof src, "%s/%s", src_dir, name);
    snprintf(dst, sizeof dst, "%s/%s", dst_dir, dst_name);
    if (rename(src, dst) == 0) {
        if (commit_fsync_dir(dst_dir, err, err_len)) return -1;
        return commit_fsync_dir(src_dir, err, err_len);
    }
    if (errno != EXDEV) return fail(err, err_len, src, "rename");
    /* another file system: durable copy first, then remove the source */
    if (copy_file(src, dst_dir, dst_name, err, err_len)) return -1;
    if (unlink(src) != 0) return fail(err, err_len, src, "unlink after copy");
    return commit_fsync_dir(src_dir, err, err_len);
}

int commit_release(const char *incoming_dir, const char *name, const char *done_dir, char *err,
                   size_t err_len)
{
    if (done_dir && done_dir[0]) return commit_move(incoming_dir, name, done_dir, name, err, err_len);
    char src[PATHLEN];
    snprintf(src, sizeof src, "%s/%s", incoming_dir, name);
    if (unlink(src) != 0) return fail(err, err_len, src, "unlink");
    return commit_fsync_dir(incoming_dir, err, err_len);
}

int commit_cleanup_temps(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] != '.' || !strstr(e->d_name, ".tmp-")) continue;
        char p[PATHLEN];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (unlink(p) == 0) n++;
    }
    closedir(d);
    return n;
}

int commit_read_file(const char *path, uint8_t **data, size_t *len, char *err, size_t err_len)
{
    *data = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail(err, err_len, path, "open");
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return fail(err, err_len, path, "stat");
    }
    size_t cap = (size_t)st.st_size;
    uint8_t *buf = malloc(cap ? cap : 1);
    if (!buf) {
        close(fd);
        errno = ENOMEM;
        return fail(err, err_len, path, "allocate");
    }
    size_t got = 0;
    while (got < cap) {
        ssize_t r = read(fd, buf + got, cap - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            close(fd);
            errno = e;
            return fail(err, err_len, path, "read");
        }
        if (r == 0) break; /* shrank under us: what is there is the file */
        got += (size_t)r;
    }
    close(fd);
    *data = buf;
    *len = got;
    return 0;
}

const char *commit_errno_name(int e)
{
    switch (e) {
    case ENOSPC: return "ENOSPC";
    case EDQUOT: return "EDQUOT";
    case EIO: return "EIO";
    case EROFS: return "EROFS";
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case ENOENT: return "ENOENT";
    case ENOMEM: return "ENOMEM";
    case EAGAIN: return "EAGAIN";
    case EINTR: return "EINTR";
    case EXDEV: return "EXDEV";
    case ENOTDIR: return "ENOTDIR";
    case EISDIR: return "EISDIR";
    case EMFILE: return "EMFILE";
    case ENFILE: return "ENFILE";
    default: return "other";
    }
}

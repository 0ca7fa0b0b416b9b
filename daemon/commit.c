#define _GNU_SOURCE /* renameat2, F_SETLEASE */
#include "commit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
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
           e == EINTR || e == ENOENT || e == EMFILE || e == ENFILE || e == EBUSY;
}

int commit_errno_is_permanent(int e)
{
    return e == ENAMETOOLONG || e == EACCES || e == EPERM || e == EISDIR || e == ENOTDIR ||
           e == EINVAL || e == EFBIG || e == ELOOP || e == EEXIST || e == ENOTEMPTY;
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

/* Creates path (it must not be linked anywhere yet), writes data and makes
 * it durable (fsync, close); on any error the file is removed, errno kept. */
static int write_new_file(const char *path, const void *data, size_t len, char *err, size_t err_len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
    if (fd < 0) return fail(err, err_len, path, "create");
    if (write_all(fd, data, len) != 0 || fsync(fd) != 0) {
        int e = errno;
        fail(err, err_len, path, "write");
        close(fd);
        unlink(path);
        errno = e;
        return -1;
    }
    if (close(fd) != 0) {
        int e = errno;
        fail(err, err_len, path, "close");
        unlink(path);
        errno = e;
        return -1;
    }
    return 0;
}

int commit_write_atomic(const char *dir, const char *name, const void *data, size_t len, char *err,
                        size_t err_len)
{
    /* a short temporary name: NAME itself may be NAME_MAX bytes long */
    static _Atomic unsigned long serial;
    char tmp[PATHLEN], dst[PATHLEN];
    snprintf(tmp, sizeof tmp, "%s/.tmp-%ld-%lu", dir, (long)getpid(), ++serial);
    snprintf(dst, sizeof dst, "%s/%s", dir, name);
    if (write_new_file(tmp, data, len, err, err_len) != 0) return -1;
    if (rename(tmp, dst) != 0) {
        int e = errno;
        fail(err, err_len, dst, "rename into place");
        unlink(tmp);
        errno = e;
        return -1;
    }
    return commit_fsync_dir(dir, err, err_len);
}

int commit_write_temp(const char *dir, const void *data, size_t len, char *tmp_name,
                      size_t tmp_cap, char *err, size_t err_len)
{
    static _Atomic unsigned long serial;
    char tmp[PATHLEN];
    snprintf(tmp_name, tmp_cap, ".tmp-%ld-j%lu", (long)getpid(), ++serial);
    snprintf(tmp, sizeof tmp, "%s/%s", dir, tmp_name);
    if (write_new_file(tmp, data, len, err, err_len) != 0) return -1;
    /* the journal names this file: it must be durable in the directory too */
    if (commit_fsync_dir(dir, err, err_len) != 0) {
        int e = errno;
        unlink(tmp);
        errno = e;
        return -1;
    }
    return 0;
}

int commit_rename_into_place(const char *dir, const char *tmp_name, const char *name, char *err,
                             size_t err_len)
{
    char tmp[PATHLEN], dst[PATHLEN];
    snprintf(tmp, sizeof tmp, "%s/%s", dir, tmp_name);
    snprintf(dst, sizeof dst, "%s/%s", dir, name);
    if (rename(tmp, dst) != 0) return fail(err, err_len, dst, "rename into place");
    return commit_fsync_dir(dir, err, err_len);
}

static int copy_file(const char *src, const char *dst_dir, const char *dst_name, char *err,
                     size_t err_len)
{
    uint8_t *data;
    size_t len;
    if (commit_read_file(src, SIZE_MAX, &data, &len, err, err_len)) return -1;
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

static bool is_seen(const struct stat *st, const file_ident *seen)
{
    return (uint64_t)st->st_dev == seen->dev && (uint64_t)st->st_ino == seen->ino;
}

/* Puts a file that was renamed into done_dir but is not the one packed
 * back under its name in incoming, never over another file there. */
static void put_back(const char *done_path, const char *src_path)
{
    if (renameat2(AT_FDCWD, done_path, AT_FDCWD, src_path, RENAME_NOREPLACE) != 0) {
        /* a third file took the name meanwhile: keep it visible beside */
        char aside[PATHLEN + 16];
        snprintf(aside, sizeof aside, "%s.unpacked", src_path);
        if (renameat2(AT_FDCWD, done_path, AT_FDCWD, aside, RENAME_NOREPLACE) != 0) { /* left in done */ }
    }
}

static int copy_from_fd(int fd, const file_ident *seen, const char *dst_dir, const char *name,
                        char *err, size_t err_len)
{
    uint8_t *data;
    if (commit_read_fd(fd, name, (size_t)seen->size, &data, err, err_len)) return -1;
    int rc = commit_write_atomic(dst_dir, name, data, (size_t)seen->size, err, err_len);
    int e = errno;
    free(data);
    errno = e;
    return rc;
}

int commit_release(const char *incoming_dir, const char *name, const char *done_dir, int fd,
                   const file_ident *seen, char *err, size_t err_len)
{
    char src[PATHLEN];
    snprintf(src, sizeof src, "%s/%s", incoming_dir, name);
    int changed = commit_still_seen(src, fd, seen, err, err_len);
    if (changed) return changed;
    if (!done_dir || !done_dir[0]) {
        if (unlink(src) != 0) return fail(err, err_len, src, "unlink");
        return commit_fsync_dir(incoming_dir, err, err_len);
    }
    char dst[PATHLEN];
    snprintf(dst, sizeof dst, "%s/%s", done_dir, name);
    struct stat st;
    if (rename(src, dst) == 0) {
        /* the check above and the rename are two steps: a file renamed over
         * the name in between must not pass as released */
        if (lstat(dst, &st) == 0 && !is_seen(&st, seen)) {
            put_back(dst, src);
            snprintf(err, err_len, "%s: replaced by another file just before its release", src);
            return 1;
        }
        if (commit_fsync_dir(done_dir, err, err_len)) return -1;
        return commit_fsync_dir(incoming_dir, err, err_len);
    }
    if (errno != EXDEV) return fail(err, err_len, src, "rename");
    /* another file system: a durable copy of what was packed, from the
     * worker's descriptor, then the source if it is still that file */
    if (copy_from_fd(fd, seen, done_dir, name, err, err_len)) return -1;
    if (lstat(src, &st) != 0 || !is_seen(&st, seen)) {
        snprintf(err, err_len, "%s: replaced by another file during its release", src);
        return 1;
    }
    if (unlink(src) != 0) return fail(err, err_len, src, "unlink after copy");
    return commit_fsync_dir(incoming_dir, err, err_len);
}

int commit_open_seen(const char *path, const file_ident *seen, char *err, size_t err_len)
{
    struct stat st;
    if (lstat(path, &st) != 0) return fail(err, err_len, path, "lstat");
    if (!S_ISREG(st.st_mode) || !is_seen(&st, seen)) {
        snprintf(err, err_len, "%s: no longer the file seen at intake (%s)", path,
                 S_ISREG(st.st_mode) ? "another file" : "not a regular file");
        errno = ESTALE;
        return -1;
    }
    /* O_NONBLOCK: a FIFO swapped in after the lstat opens at once instead
     * of waiting for a writer; O_NOFOLLOW: a link is refused (ELOOP) */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        if (errno == ELOOP) {
            snprintf(err, err_len, "%s: no longer the file seen at intake (a link)", path);
            errno = ESTALE;
            return -1;
        }
        return fail(err, err_len, path, "open");
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !is_seen(&st, seen)) {
        close(fd);
        snprintf(err, err_len, "%s: no longer the file seen at intake (replaced while opening)", path);
        errno = ESTALE;
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return fail(err, err_len, path, "fcntl");
    }
    return fd;
}

static int64_t mtime_ns_of(const struct stat *st)
{
    return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

int commit_still_seen(const char *path, int fd, const file_ident *seen, char *err, size_t err_len)
{
    struct stat by_name, by_fd;
    if (lstat(path, &by_name) != 0 || !S_ISREG(by_name.st_mode) || !is_seen(&by_name, seen)) {
        snprintf(err, err_len, "%s: replaced, moved or removed while it was packed", path);
        return 1;
    }
    if (fstat(fd, &by_fd) != 0 || (uint64_t)by_fd.st_size != seen->size ||
        mtime_ns_of(&by_fd) != seen->mtime_ns) {
        snprintf(err, err_len, "%s: written to while it was packed (size or mtime changed)", path);
        return 1;
    }
    return 0;
}

int commit_open_for_writing(int fd)
{
    if (fcntl(fd, F_SETLEASE, F_RDLCK) == 0) {
        fcntl(fd, F_SETLEASE, F_UNLCK);
        return 0;
    }
    return errno == EAGAIN ? 1 : -1;
}

int commit_read_fd(int fd, const char *path, size_t len, uint8_t **data, char *err, size_t err_len)
{
    *data = NULL;
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf) {
        errno = ENOMEM;
        return fail(err, err_len, path, "allocate");
    }
    size_t got = 0;
    while (got < len) {
        ssize_t r = pread(fd, buf + got, len - got, (off_t)got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            int e = r < 0 ? errno : ESTALE; /* shorter than seen: it changed */
            free(buf);
            errno = e;
            return r < 0 ? fail(err, err_len, path, "read")
                         : (snprintf(err, err_len, "%s: shrank while it was read", path), -1);
        }
        got += (size_t)r;
    }
    *data = buf;
    return 0;
}

int commit_cleanup_temps(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        /* ".tmp-PID-N" now; ".NAME.tmp-PID" from earlier versions */
        if (e->d_name[0] != '.' || !strstr(e->d_name, "tmp-")) continue;
        char p[PATHLEN];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (unlink(p) == 0) n++;
    }
    closedir(d);
    return n;
}

int commit_read_file(const char *path, size_t max, uint8_t **data, size_t *len, char *err,
                     size_t err_len)
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
    if ((uint64_t)st.st_size > max) {
        close(fd);
        errno = EFBIG;
        return fail(err, err_len, path, "larger than the limit");
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
    case ENAMETOOLONG: return "ENAMETOOLONG";
    case EFBIG: return "EFBIG";
    case EBUSY: return "EBUSY";
    case ESTALE: return "ESTALE";
    case ELOOP: return "ELOOP";
    default: return "other";
    }
}

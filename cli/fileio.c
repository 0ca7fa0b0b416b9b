/* File helpers of the CLI: whole-file reads and atomic writes. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

int cli_read_file(const char *path, uint8_t **data, size_t *len, char *err, size_t err_len)
{
    *data = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, err_len, "%s: cannot open: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, err_len, "%s: not a regular file", path);
        close(fd);
        return -1;
    }
    size_t n = (size_t)st.st_size;
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf) {
        snprintf(err, err_len, "%s: out of memory (%zu bytes)", path, n);
        close(fd);
        return -1;
    }
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            snprintf(err, err_len, "%s: cannot read: %s", path,
                     r < 0 ? strerror(errno) : "file shrank while reading");
            free(buf);
            close(fd);
            return -1;
        }
        got += (size_t)r;
    }
    close(fd);
    *data = buf;
    *len = n;
    return 0;
}

int cli_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

int cli_ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

double cli_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int cli_write_atomic(const char *path, const uint8_t *data, size_t len, int force, char *err,
                     size_t err_len)
{
    if (!force && cli_exists(path)) {
        snprintf(err, err_len, "%s: already exists (use -f to overwrite)", path);
        return -1;
    }
    char dir_buf[4096], base_buf[4096], tmp[8300];
    snprintf(dir_buf, sizeof dir_buf, "%s", path);
    snprintf(base_buf, sizeof base_buf, "%s", path);
    const char *dir = dirname(dir_buf), *base = basename(base_buf);
    snprintf(tmp, sizeof tmp, "%s/.%s.XXXXXX", dir, base);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(err, err_len, "%s: cannot create a temporary file in %s: %s", path, dir,
                 strerror(errno));
        return -1;
    }
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, data + done, len - done);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) {
            snprintf(err, err_len, "%s: cannot write: %s", path, strerror(errno));
            goto fail;
        }
        done += (size_t)w;
    }
    if (fchmod(fd, 0644) != 0 || fsync(fd) != 0) {
        snprintf(err, err_len, "%s: cannot sync: %s", path, strerror(errno));
        goto fail;
    }
    close(fd);
    fd = -1;
    /* The check above and the rename race with other writers; without -f,
     * link() refuses to replace a path that appeared meanwhile. */
    if (!force) {
        int linked = link(tmp, path);
        if (linked != 0 && (errno == EPERM || errno == ENOTSUP || errno == EXDEV) &&
            !cli_exists(path))
            linked = rename(tmp, path); /* no hard links here: the check above must do */
        if (linked != 0) {
            snprintf(err, err_len, "%s: %s", path,
                     errno == EEXIST ? "already exists (use -f to overwrite)" : strerror(errno));
            goto fail;
        }
        unlink(tmp);
    } else if (rename(tmp, path) != 0) {
        snprintf(err, err_len, "%s: cannot rename into place: %s", path, strerror(errno));
        goto fail;
    }
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return 0;
fail:
    if (fd >= 0) close(fd);
    unlink(tmp);
    return -1;
}

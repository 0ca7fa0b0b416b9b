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

/* The whole of standard input. */
static int read_stdin(uint8_t **data, size_t *len, char *err, size_t err_len)
{
    size_t cap = 1 << 20, n = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            snprintf(err, err_len, "-: out of memory reading standard input");
            return -1;
        }
        if (n == cap) {
            uint8_t *bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
                continue;
            }
            buf = bigger;
            cap *= 2;
        }
        ssize_t r = read(STDIN_FILENO, buf + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            snprintf(err, err_len, "-: cannot read standard input: %s", strerror(errno));
            free(buf);
            return -1;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    *data = buf;
    *len = n;
    return 0;
}

int cli_read_input(const char *path, uint8_t **data, size_t *len, char *err, size_t err_len)
{
    return strcmp(path, "-") == 0 ? read_stdin(data, len, err, err_len)
                                  : cli_read_file(path, data, len, err, err_len);
}

int cli_write_all(int fd, const uint8_t *data, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, data + done, len - done);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return -1;
        done += (size_t)w;
    }
    return 0;
}

static mode_t file_mode = 0644;

void cli_init_umask(void)
{
    mode_t u = umask(0);
    umask(u);
    file_mode = 0666 & ~u;
}

int cli_make_parents(const char *path, char *err, size_t err_len)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        snprintf(err, err_len, "%s: name too long", path);
        return -1;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
            snprintf(err, err_len, "%s: cannot create the directory %s: %s", path, buf, strerror(errno));
            return -1;
        }
        *p = '/';
    }
    return 0;
}

int cli_atomic_open(cli_atomic *a, const char *path, int force, char *err, size_t err_len)
{
    a->fd = -1;
    a->force = force;
    if (!force && cli_exists(path)) {
        snprintf(err, err_len, "%s: already exists (use -f to overwrite)", path);
        return -1;
    }
    char base_buf[4096];
    snprintf(a->path, sizeof a->path, "%s", path);
    snprintf(a->dir, sizeof a->dir, "%s", path);
    snprintf(base_buf, sizeof base_buf, "%s", path);
    char *dir = dirname(a->dir);
    if (dir != a->dir) snprintf(a->dir, sizeof a->dir, "%s", dir);
    snprintf(a->tmp, sizeof a->tmp, "%s/.%s.XXXXXX", a->dir, basename(base_buf));
    a->fd = mkstemp(a->tmp);
    if (a->fd < 0) {
        snprintf(err, err_len, "%s: cannot create a temporary file in %s: %s", path, a->dir,
                 strerror(errno));
        return -1;
    }
    return 0;
}

int cli_atomic_write(cli_atomic *a, const uint8_t *data, size_t len, char *err, size_t err_len)
{
    if (cli_write_all(a->fd, data, len) != 0) {
        snprintf(err, err_len, "%s: cannot write: %s", a->path, strerror(errno));
        return -1;
    }
    return 0;
}

void cli_atomic_abort(cli_atomic *a)
{
    if (a->fd >= 0) close(a->fd);
    a->fd = -1;
    if (a->tmp[0]) unlink(a->tmp);
    a->tmp[0] = '\0';
}

int cli_atomic_commit(cli_atomic *a, char *err, size_t err_len)
{
    /* the umask decides the mode, as for any file a program creates */
    if (fchmod(a->fd, file_mode) != 0 || fsync(a->fd) != 0) {
        snprintf(err, err_len, "%s: cannot sync: %s", a->path, strerror(errno));
        cli_atomic_abort(a);
        return -1;
    }
    close(a->fd);
    a->fd = -1;
    /* The check at open and the rename race with other writers; without -f,
     * link() refuses to replace a path that appeared meanwhile. */
    if (!a->force) {
        int linked = link(a->tmp, a->path);
        if (linked != 0 && (errno == EPERM || errno == ENOTSUP || errno == EXDEV) &&
            !cli_exists(a->path))
            linked = rename(a->tmp, a->path); /* no hard links here: the check above must do */
        if (linked != 0) {
            snprintf(err, err_len, "%s: %s", a->path,
                     errno == EEXIST ? "already exists (use -f to overwrite)" : strerror(errno));
            cli_atomic_abort(a);
            return -1;
        }
        unlink(a->tmp);
    } else if (rename(a->tmp, a->path) != 0) {
        snprintf(err, err_len, "%s: cannot rename into place: %s", a->path, strerror(errno));
        cli_atomic_abort(a);
        return -1;
    }
    a->tmp[0] = '\0';
    int dfd = open(a->dir, O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return 0;
}

int cli_write_atomic(const char *path, const uint8_t *data, size_t len, int force, char *err,
                     size_t err_len)
{
    cli_atomic a;
    if (cli_atomic_open(&a, path, force, err, err_len) != 0) return -1;
    if (cli_atomic_write(&a, data, len, err, err_len) != 0) {
        cli_atomic_abort(&a);
        return -1;
    }
    return cli_atomic_commit(&a, err, err_len);
}

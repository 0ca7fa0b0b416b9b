/* aurorapack unpack: FILE.aurp -> FILE (or -o OUT, or into -C DIR), checksum
 * verified, written atomically; many files at once (-j N, directories,
 * --files-from), with a progress line on a terminal.
 *
 * A restored file is decoded chunk by chunk into its temporary file and
 * moved into place only once its checksum is verified, so memory is the
 * largest chunk plus the decoder's, not the whole file; standard output
 * (-o -) cannot be taken back, so there the whole file is decoded and
 * verified first. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "frame.h"

typedef struct {
    const cli_options *o;
    const cli_inputs *in;
    int threads; /* decoder threads per file */
    atomic_size_t next;
    atomic_size_t done, failed;
    pthread_mutex_t out_mu; /* lines on stdout/stderr and the progress line */
    int progress;           /* a progress line on stderr (a terminal) */
    double start_ms, shown_ms;
} bulk;

static void progress_clear(bulk *b)
{
    if (b->progress) fputs("\r\033[K", stderr);
}

static void progress_show(bulk *b, int force)
{
    if (!b->progress) return;
    double now = cli_now_ms();
    if (!force && now - b->shown_ms < 200) return;
    b->shown_ms = now;
    size_t done = atomic_load(&b->done), failed = atomic_load(&b->failed), total = b->in->n;
    double rate = done / ((now - b->start_ms) / 1e3 + 1e-9);
    fprintf(stderr, "\r\033[Kunpack: %zu/%zu files, %zu failed, %.1f files/s", done, total, failed, rate);
    if (rate > 0 && done < total) fprintf(stderr, ", about %.0f s left", (total - done) / rate);
    fflush(stderr);
}

/* A line about one file: under the lock, with the progress line redrawn. */
static void say(bulk *b, FILE *to, const char *fmt, const char *a, const char *c, const char *d)
{
    pthread_mutex_lock(&b->out_mu);
    progress_clear(b);
    fprintf(to, fmt, a, c, d);
    fflush(to);
    progress_show(b, 1);
    pthread_mutex_unlock(&b->out_mu);
}

typedef struct {
    cli_atomic *file;
    char *err;
    size_t err_len;
} file_sink;

static int write_chunk(void *ctx, const uint8_t *data, size_t len)
{
    file_sink *s = ctx;
    return cli_atomic_write(s->file, data, len, s->err, s->err_len);
}

/* Where it->path restores to; "-" for standard output. */
static int output_name(const cli_options *o, const cli_input *it, char *out, size_t out_len,
                       char *err, size_t err_len)
{
    int from_stdin = !strcmp(it->path, "-");
    if (o->out) return snprintf(out, out_len, "%s", o->out) < (int)out_len ? 0 : -1;
    if (from_stdin && !o->outdir) return snprintf(out, out_len, "-"), 0;
    if (from_stdin) {
        snprintf(err, err_len, "standard input has no name to restore under -C (use -o OUT)");
        return -1;
    }
    const char *name = o->outdir ? it->rel : it->path;
    if (!cli_ends_with(name, AURP_EXTENSION) || strlen(name) == strlen(AURP_EXTENSION) ||
        name[strlen(name) - strlen(AURP_EXTENSION) - 1] == '/') {
        snprintf(err, err_len, "name does not end in %s (use -o OUT)", AURP_EXTENSION);
        return -1;
    }
    int n = (int)(strlen(name) - strlen(AURP_EXTENSION));
    int w = o->outdir ? snprintf(out, out_len, "%s/%.*s", o->outdir, n, name)
                      : snprintf(out, out_len, "%.*s", n, name);
    if (w < 0 || (size_t)w >= out_len) {
        snprintf(err, err_len, "output name too long");
        return -1;
    }
    return 0;
}

static int unpack_one(bulk *b, const cli_input *it)
{
    const cli_options *o = b->o;
    char err[1024] = "", out[4096];
    if (output_name(o, it, out, sizeof out, err, sizeof err) != 0) {
        say(b, stderr, "aurorapack unpack: %s: %s%s\n", it->path, err, "");
        return -1;
    }
    int to_stdout = !strcmp(out, "-");
    if (!to_stdout && !o->force && cli_exists(out)) {
        say(b, stderr, "aurorapack unpack: %s: %s already exists (use -f to overwrite)%s\n", it->path, out, "");
        return -1;
    }
    uint8_t *packed;
    size_t plen;
    int rd = cli_read_input(it->path, &packed, &plen, err, sizeof err);
    if (rd) {
        say(b, stderr, "aurorapack unpack: %s%s%s\n", err, "", "");
        return -1;
    }
    aurp_error ae = {{0}};
    aurp_status st;
    int rc = 0;
    uint64_t restored = 0;
    if (to_stdout) {
        uint8_t *data = NULL;
        size_t len = 0;
        st = frame_unpack_limited(packed, plen, b->threads, o->max_output, &data, &len, &ae);
        if (st == AURP_OK) {
            pthread_mutex_lock(&b->out_mu);
            rc = cli_write_all(STDOUT_FILENO, data, len);
            pthread_mutex_unlock(&b->out_mu);
            if (rc) snprintf(err, sizeof err, "-: cannot write to standard output");
            restored = len;
        }
        free(data);
    } else {
        cli_atomic file;
        /* -C DIR is made if missing, and a directory tree lands in the
         * same tree under it */
        if (o->outdir && cli_make_parents(out, err, sizeof err) != 0) {
            free(packed);
            say(b, stderr, "aurorapack unpack: %s: %s%s\n", it->path, err, "");
            return -1;
        }
        if (cli_atomic_open(&file, out, o->force, err, sizeof err) != 0) {
            free(packed);
            say(b, stderr, "aurorapack unpack: %s: %s%s\n", it->path, err, "");
            return -1;
        }
        file_sink sink = {&file, err, sizeof err};
        st = aurp_unpack_chunks(packed, plen, b->threads, o->max_output, write_chunk, &sink,
                                &restored, &ae);
        if (st == AURP_OK) rc = cli_atomic_commit(&file, err, sizeof err);
        else cli_atomic_abort(&file); /* a damaged stream writes nothing */
        if (st != AURP_OK && err[0]) st = AURP_OK, rc = -1; /* the write failed: err says why */
    }
    free(packed);
    if (st != AURP_OK) {
        char why[400];
        snprintf(why, sizeof why, "%s: %s", aurp_status_name(st), ae.msg);
        say(b, stderr, "aurorapack unpack: %s: cannot unpack: %s%s\n", it->path, why, "");
        return -1;
    }
    if (rc) {
        say(b, stderr, "aurorapack unpack: %s: %s%s\n", it->path, err, "");
        return -1;
    }
    if (!o->quiet && !to_stdout) {
        char tail[64];
        snprintf(tail, sizeof tail, ": %llu bytes, checksum OK", (unsigned long long)restored);
        say(b, stdout, "%s -> %s%s\n", it->path, out, tail);
    }
    return 0;
}

static void *worker(void *arg)
{
    bulk *b = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&b->next, 1);
        if (i >= b->in->n) break;
        if (unpack_one(b, &b->in->items[i]) != 0) atomic_fetch_add(&b->failed, 1);
        atomic_fetch_add(&b->done, 1);
        if (b->progress) {
            pthread_mutex_lock(&b->out_mu);
            progress_show(b, 0);
            pthread_mutex_unlock(&b->out_mu);
        }
    }
    return NULL;
}

int cmd_unpack(int argc, char **argv)
{
    cli_options o;
    if (cli_parse("unpack", argc, argv, "tfoqCJFL", &o)) return EXIT_USAGE;
    if (o.files_from && !strcmp(o.files_from, "-"))
        for (int i = 0; i < o.nfiles; i++)
            if (!strcmp(o.files[i], "-")) {
                fprintf(stderr, "aurorapack unpack: '-' and --files-from - both want standard input\n");
                return EXIT_USAGE;
            }
    cli_inputs in;
    if (cli_collect_inputs("unpack", &o, AURP_EXTENSION, &in) != 0) return EXIT_FILE_ERROR;
    if (o.out && in.n != 1) {
        fprintf(stderr, "aurorapack unpack: -o needs exactly one input file (got %zu)\n", in.n);
        cli_inputs_free(&in);
        return EXIT_USAGE;
    }
    bulk b = {.o = &o, .in = &in};
    int jobs = o.jobs < (int)in.n ? o.jobs : (int)in.n;
    /* the cores go to files first; one file alone gets them all */
    b.threads = o.threads_given ? o.threads : (cli_nproc() / jobs > 0 ? cli_nproc() / jobs : 1);
    b.progress = !o.quiet && in.n > 1 && isatty(STDERR_FILENO);
    b.start_ms = cli_now_ms();
    pthread_mutex_init(&b.out_mu, NULL);
    atomic_init(&b.next, 0);
    atomic_init(&b.done, 0);
    atomic_init(&b.failed, 0);
    pthread_t th[1024];
    int started = 0;
    for (; started < jobs - 1; started++)
        if (pthread_create(&th[started], NULL, worker, &b) != 0) break;
    worker(&b); /* this thread works too (and alone if no thread could start) */
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    if (b.progress) {
        progress_show(&b, 1);
        fputc('\n', stderr);
    }
    pthread_mutex_destroy(&b.out_mu);
    size_t failed = atomic_load(&b.failed);
    cli_inputs_free(&in);
    return failed ? EXIT_FILE_ERROR : 0;
}

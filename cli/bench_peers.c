/* The benchmark peers run as external processes: cjxl/djxl, fpack/funpack,
 * bzip2 and xz (their times include process start).  CharLS, in process, is
 * bench_charls.c. */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

extern char **environ;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int bench_have_program(const char *name)
{
    const char *path = getenv("PATH");
    if (!path) path = "/usr/bin:/bin";
    char buf[4096];
    while (*path) {
        size_t n = strcspn(path, ":");
        snprintf(buf, sizeof buf, "%.*s/%s", (int)n, path, name);
        if (access(buf, X_OK) == 0) return 1;
        path += n;
        if (*path == ':') path++;
    }
    return 0;
}

static uint64_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Runs argv with stdout to out_path (if not NULL), stderr discarded; returns
 * the exit status (-1 if it did not run) and the wall time in ms. */
static int run_timed(char *const argv[], const char *out_path, double *ms)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (out_path) posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    double t0 = cli_now_ms();
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return -1;
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    *ms = cli_now_ms() - t0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int same_files(const char *a, const char *b)
{
    char err[512];
    uint8_t *x, *y;
    size_t nx, ny;
    if (cli_read_file(a, &x, &nx, err, sizeof err)) return 0;
    if (cli_read_file(b, &y, &ny, err, sizeof err)) {
        free(x);
        return 0;
    }
    int same = nx == ny && memcmp(x, y, nx) == 0;
    free(x), free(y);
    return same;
}

static int write_pgm16(const char *path, const uint16_t *pix, uint32_t w, uint32_t h)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    fprintf(f, "P5\n%u %u\n65535\n", w, h);
    size_t n = (size_t)w * h;
    uint8_t *be = malloc(n * 2);
    if (!be) {
        fclose(f);
        return -1;
    }
    for (size_t i = 0; i < n; i++) be[2 * i] = (uint8_t)(pix[i] >> 8), be[2 * i + 1] = (uint8_t)pix[i];
    int rc = fwrite(be, 1, n * 2, f) == n * 2 ? 0 : -1;
    free(be);
    return fclose(f) || rc ? -1 : 0;
}

void bench_jxl(const uint16_t *pix, uint32_t width, uint32_t height, const char *workdir,
               int repeat, bench_result *r)
{
    memset(r, 0, sizeof *r);
    r->name = "JPEG XL lossless (cjxl -d 0 -e 7)";
    r->pixels_only = 1;
    r->external = 1;
    if (!bench_have_program("cjxl") || !bench_have_program("djxl")) {
        r->note = "not installed";
        return;
    }
    r->available = 1;
    char pgm[4200], jxl[4200], dec[4200];
    snprintf(pgm, sizeof pgm, "%s/pixels.pgm", workdir);
    snprintf(jxl, sizeof jxl, "%s/pixels.jxl", workdir);
    snprintf(dec, sizeof dec, "%s/decoded.pgm", workdir);
    if (write_pgm16(pgm, pix, width, height)) {
        r->note = "cannot write the PGM";
        return;
    }
    double te[1000], td[1000];
    for (int i = 0; i < repeat; i++) {
        char *argv[] = {"cjxl", pgm, jxl, "-d", "0", "-e", "7", NULL};
        if (run_timed(argv, NULL, &te[i]) != 0) {
            r->note = "cjxl failed";
            return;
        }
    }
    for (int i = 0; i < repeat; i++) {
        char *argv[] = {"djxl", jxl, dec, NULL};
        if (run_timed(argv, NULL, &td[i]) != 0) {
            r->note = "djxl failed";
            return;
        }
    }
    r->bytes = file_size(jxl);
    r->enc_ms = bench_median(te, repeat);
    r->dec_ms = bench_median(td, repeat);
    r->ok = same_files(pgm, dec);
    r->note = r->ok ? "16-bit PGM of the pixels" : "decoded PGM DIFFERS";
}

void bench_fpack(const char *fits_path, const char *workdir, int repeat, bench_result *r)
{
    memset(r, 0, sizeof *r);
    r->name = "fpack -r (Rice)";
    r->external = 1;
    if (!bench_have_program("fpack") || !bench_have_program("funpack")) {
        r->note = "not installed";
        return;
    }
    r->available = 1;
    char fz[4200], dec[4200];
    snprintf(fz, sizeof fz, "%s/file.fits.fz", workdir);
    snprintf(dec, sizeof dec, "%s/funpacked.fits", workdir);
    double te[1000], td[1000];
    for (int i = 0; i < repeat; i++) {
        unlink(fz);
        char *argv[] = {"fpack", "-r", "-O", fz, (char *)fits_path, NULL};
        if (run_timed(argv, NULL, &te[i]) != 0) {
            r->note = "fpack failed";
            return;
        }
    }
    for (int i = 0; i < repeat; i++) {
        unlink(dec);
        char *argv[] = {"funpack", "-O", dec, fz, NULL};
        if (run_timed(argv, NULL, &td[i]) != 0) {
            r->note = "funpack failed";
            return;
        }
    }
    r->bytes = file_size(fz);
    r->enc_ms = bench_median(te, repeat);
    r->dec_ms = bench_median(td, repeat);
    r->ok = 1;
    r->note = same_files(fits_path, dec) ? "whole file" : "whole file (pixels kept, header rewritten)";
}

void bench_stream_tool(const char *tool, const char *name, const char *fits_path,
                       const char *workdir, int repeat, bench_result *r)
{
    memset(r, 0, sizeof *r);
    r->name = name;
    r->external = 1;
    if (!bench_have_program(tool)) {
        r->note = "not installed";
        return;
    }
    r->available = 1;
    char packed[4200], dec[4200];
    snprintf(packed, sizeof packed, "%s/file.%s", workdir, tool);
    snprintf(dec, sizeof dec, "%s/file.%s.out", workdir, tool);
    double te[1000], td[1000];
    for (int i = 0; i < repeat; i++) {
        char *argv[] = {(char *)tool, "-9", "-c", (char *)fits_path, NULL};
        if (run_timed(argv, packed, &te[i]) != 0) {
            r->note = "compressor failed";
            return;
        }
    }
    for (int i = 0; i < repeat; i++) {
        char *argv[] = {(char *)tool, "-d", "-c", packed, NULL};
        if (run_timed(argv, dec, &td[i]) != 0) {
            r->note = "decompressor failed";
            return;
        }
    }
    r->bytes = file_size(packed);
    r->enc_ms = bench_median(te, repeat);
    r->dec_ms = bench_median(td, repeat);
    r->ok = same_files(fits_path, dec);
    r->note = r->ok ? "whole file" : "restored file DIFFERS";
}

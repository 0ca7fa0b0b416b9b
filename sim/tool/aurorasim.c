/* aurorasim: the spectrometer simulator as a program.
 *
 *   aurorasim [options] OUTDIR        a stream of frames, one every --interval s
 *   aurorasim --one OUT.fits [...]    one frame
 *
 * Files are named by simulated capture time (start time + 15 s per frame),
 * e.g. 20140715_132940.fits, and appear atomically in rename mode.  Every
 * written path is printed on stdout, one per line.  SIGINT/SIGTERM finish
 * the file being written and stop.
 */
#define _XOPEN_SOURCE 700 /* strptime */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sim.h"
#include "sim_fits.h"
#include "sim_rng.h"

typedef enum { WRITE_RENAME, WRITE_SLOW, WRITE_DIRECT } write_mode;
typedef enum { BROKEN_NONE, BROKEN_TRUNCATED, BROKEN_GARBAGE, BROKEN_BITPIX32 } broken_kind;

typedef struct {
    uint32_t width, height;
    uint64_t seed, start_index, index;
    long long count; /* 0: until stopped */
    double interval_s, slow_seconds;
    const char *prefix, *outdir, *one;
    time_t start_time;
    write_mode mode;
    broken_kind broken;
    long long broken_every;
    int quiet;
    int kind;                   /* -1: not given (the aurora kind) */
    double level, line_scale;   /* < 0: not given (the kind's own) */
    long long cosmic_rays;      /* < 0: not given */
    sim_options opt;
} config;

static volatile sig_atomic_t stop_requested;
static void on_signal(int sig) { (void)sig; stop_requested = 1; }

static void usage(FILE *to)
{
    fprintf(to,
            "usage: aurorasim [options] OUTDIR\n"
            "       aurorasim --one OUT.fits [-W W] [-H H] [--kind K] [--seed S] [--level X] [--index I]\n"
            "  -W, --width W          columns (wavelength), default 1024\n"
            "  -H, --height H         rows (along the slit), default 1024\n"
            "  --seed S               scene and detector seed, default 1\n"
            "  --kind K               what the frame shows, default aurora:\n"
            "                         aurora   the station at night (arcs, airglow)\n"
            "                         dark     a quiet night: bias, read noise, faint 557.7/630.0/427.8 nm\n"
            "                         bias     zero exposure: column pattern, banding, overscan, amplifier\n"
            "                         twilight scattered sunlight: Fraunhofer spectrum near saturation\n"
            "                         arc      long-slit arc lamp: sharp lines, curved along the slit\n"
            "                         echelle  cross-dispersed echelle, a star: curved orders\n"
            "                         echelle-arc  the same echelle, ThAr lamp: tilted lines in every order\n"
            "  --level X              multiply the light of the scene, default 1\n"
            "  --count K              frames to write, default 0 = until SIGINT/SIGTERM\n"
            "  --interval SECONDS     real time between frames, default 15 (0 = no wait)\n"
            "  --prefix P             file name prefix, default none\n"
            "  --start-index I        frame index of the first frame, default 0\n"
            "  --index I              frame index for --one, default 0\n"
            "  --start-time T         simulated capture time of the first frame,\n"
            "                         YYYY-MM-DDTHH:MM:SS UTC or Unix seconds; default now\n"
            "  --write-mode M         rename (temp + fsync + rename, default),\n"
            "                         slow (final name, written in pieces over --slow-seconds),\n"
            "                         direct (cfitsio writes the final name)\n"
            "  --slow-seconds S       duration of a slow write, default 4\n"
            "  --broken K             write broken frames: truncated | garbage | bitpix32\n"
            "  --broken-every N       only every N-th frame broken (default: all)\n"
            "  --cosmic-rays N        mean cosmic-ray streaks per frame, default 4\n"
            "  --line-scale X         multiply every emission line, default 1\n"
            "  -q, --quiet            do not print written paths\n"
            "  --help\n");
}

static int parse_u64(const char *s, const char *what, uint64_t *v)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 0);
    if (errno || end == s || *end || s[0] == '-') {
        fprintf(stderr, "aurorasim: %s: not a non-negative integer: '%s'\n", what, s);
        return -1;
    }
    *v = x;
    return 0;
}

static int parse_double(const char *s, const char *what, double *v)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (errno || end == s || *end || !(x >= 0)) {
        fprintf(stderr, "aurorasim: %s: not a non-negative number: '%s'\n", what, s);
        return -1;
    }
    *v = x;
    return 0;
}

static int parse_time(const char *s, time_t *t)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (end && *end == '\0') {
        *t = timegm(&tm);
        return 0;
    }
    uint64_t v;
    if (parse_u64(s, "--start-time", &v) == 0) {
        *t = (time_t)v;
        return 0;
    }
    return -1;
}

static int parse_args(int argc, char **argv, config *c)
{
    enum { O_SEED = 256, O_COUNT, O_INTERVAL, O_PREFIX, O_START_INDEX, O_INDEX, O_START_TIME,
           O_MODE, O_SLOW, O_BROKEN, O_BROKEN_EVERY, O_ONE, O_COSMIC, O_LINES, O_KIND, O_LEVEL,
           O_HELP };
    static const struct option longopts[] = {
        {"width", required_argument, 0, 'W'}, {"height", required_argument, 0, 'H'},
        {"seed", required_argument, 0, O_SEED}, {"count", required_argument, 0, O_COUNT},
        {"interval", required_argument, 0, O_INTERVAL}, {"prefix", required_argument, 0, O_PREFIX},
        {"start-index", required_argument, 0, O_START_INDEX},
        {"index", required_argument, 0, O_INDEX},
        {"start-time", required_argument, 0, O_START_TIME},
        {"write-mode", required_argument, 0, O_MODE},
        {"slow-seconds", required_argument, 0, O_SLOW},
        {"broken", required_argument, 0, O_BROKEN},
        {"broken-every", required_argument, 0, O_BROKEN_EVERY},
        {"one", required_argument, 0, O_ONE}, {"cosmic-rays", required_argument, 0, O_COSMIC},
        {"line-scale", required_argument, 0, O_LINES}, {"quiet", no_argument, 0, 'q'},
        {"kind", required_argument, 0, O_KIND}, {"level", required_argument, 0, O_LEVEL},
        {"help", no_argument, 0, O_HELP}, {0, 0, 0, 0}};
    int ch;
    uint64_t v;
    while ((ch = getopt_long(argc, argv, "W:H:q", longopts, NULL)) != -1) {
        switch (ch) {
        case 'W':
        case 'H':
            if (parse_u64(optarg, ch == 'W' ? "-W" : "-H", &v) || v < 1 || v > 65536) {
                fprintf(stderr, "aurorasim: %s must be 1..65536\n", ch == 'W' ? "-W" : "-H");
                return -1;
            }
            if (ch == 'W') c->width = (uint32_t)v; else c->height = (uint32_t)v;
            break;
        case O_SEED: if (parse_u64(optarg, "--seed", &c->seed)) return -1; break;
        case O_COUNT:
            if (parse_u64(optarg, "--count", &v)) return -1;
            c->count = (long long)v;
            break;
        case O_INTERVAL: if (parse_double(optarg, "--interval", &c->interval_s)) return -1; break;
        case O_PREFIX: c->prefix = optarg; break;
        case O_START_INDEX: if (parse_u64(optarg, "--start-index", &c->start_index)) return -1; break;
        case O_INDEX: if (parse_u64(optarg, "--index", &c->index)) return -1; break;
        case O_START_TIME:
            if (parse_time(optarg, &c->start_time)) {
                fprintf(stderr, "aurorasim: --start-time: expected YYYY-MM-DDTHH:MM:SS or Unix seconds, got '%s'\n", optarg);
                return -1;
            }
            break;
        case O_MODE:
            if (!strcmp(optarg, "rename")) c->mode = WRITE_RENAME;
            else if (!strcmp(optarg, "slow")) c->mode = WRITE_SLOW;
            else if (!strcmp(optarg, "direct")) c->mode = WRITE_DIRECT;
            else {
                fprintf(stderr, "aurorasim: --write-mode: unknown mode '%s' (rename|slow|direct)\n", optarg);
                return -1;
            }
            break;
        case O_SLOW: if (parse_double(optarg, "--slow-seconds", &c->slow_seconds)) return -1; break;
        case O_BROKEN:
            if (!strcmp(optarg, "truncated")) c->broken = BROKEN_TRUNCATED;
            else if (!strcmp(optarg, "garbage")) c->broken = BROKEN_GARBAGE;
            else if (!strcmp(optarg, "bitpix32")) c->broken = BROKEN_BITPIX32;
            else {
                fprintf(stderr, "aurorasim: --broken: unknown kind '%s' (truncated|garbage|bitpix32)\n", optarg);
                return -1;
            }
            break;
        case O_BROKEN_EVERY:
            if (parse_u64(optarg, "--broken-every", &v) || v < 1) {
                fprintf(stderr, "aurorasim: --broken-every must be >= 1\n");
                return -1;
            }
            c->broken_every = (long long)v;
            break;
        case O_ONE: c->one = optarg; break;
        case O_COSMIC:
            if (parse_u64(optarg, "--cosmic-rays", &v) || v > 1000000) {
                fprintf(stderr, "aurorasim: --cosmic-rays must be 0..1000000\n");
                return -1;
            }
            c->cosmic_rays = (long long)v;
            break;
        case O_LINES: if (parse_double(optarg, "--line-scale", &c->line_scale)) return -1; break;
        case O_LEVEL: if (parse_double(optarg, "--level", &c->level)) return -1; break;
        case O_KIND:
            c->kind = sim_kind_from_name(optarg);
            if (c->kind < 0) {
                fprintf(stderr, "aurorasim: --kind: unknown kind '%s' (", optarg);
                for (int k = 0; k < SIM_KIND_COUNT; k++)
                    fprintf(stderr, "%s%s", k ? "|" : "", sim_kind_name((sim_kind)k));
                fprintf(stderr, ")\n");
                return -1;
            }
            break;
        case 'q': c->quiet = 1; break;
        case O_HELP: usage(stdout); exit(0);
        default: usage(stderr); return -1;
        }
    }
    /* the kind's own detector and light first, then what was given */
    sim_options_for_kind(&c->opt, c->kind < 0 ? SIM_KIND_AURORA : (sim_kind)c->kind);
    if (c->cosmic_rays >= 0) c->opt.cosmic_rays = (int)c->cosmic_rays;
    if (c->line_scale >= 0) c->opt.line_scale = c->line_scale;
    if (c->level >= 0) c->opt.level = c->level;
    if (c->one) {
        if (optind != argc) {
            fprintf(stderr, "aurorasim: --one takes no OUTDIR\n");
            return -1;
        }
        return 0;
    }
    if (optind != argc - 1) {
        fprintf(stderr, "aurorasim: expected one OUTDIR\n");
        usage(stderr);
        return -1;
    }
    c->outdir = argv[optind];
    return 0;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w, n -= (size_t)w;
    }
    return 0;
}

static int read_file(const char *path, uint8_t **data, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    *data = malloc(n > 0 ? (size_t)n : 1);
    if (!*data || fread(*data, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(*data);
        return -1;
    }
    fclose(f);
    *len = (size_t)n;
    return 0;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (!stop_requested && nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

/* Writes bytes to final in pieces over c->slow_seconds: a writer that a
 * watcher sees growing.  On a stop request the rest is written at once. */
static int write_slowly(const config *c, const char *final, const uint8_t *data, size_t len)
{
    int fd = open(final, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return -1;
    const int pieces = 8;
    size_t done = 0;
    for (int i = 0; i < pieces; i++) {
        size_t upto = len * (size_t)(i + 1) / pieces;
        if (write_all(fd, data + done, upto - done)) {
            close(fd);
            return -1;
        }
        done = upto;
        if (i + 1 < pieces && !stop_requested) sleep_s(c->slow_seconds / pieces);
    }
    int rc = fsync(fd);
    close(fd);
    return rc;
}

static void fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

/* Makes a frame broken after cfitsio wrote it to tmp. */
static int break_file(const config *c, const char *tmp, uint64_t index)
{
    uint8_t *data;
    size_t len;
    if (read_file(tmp, &data, &len)) return -1;
    int rc = 0;
    if (c->broken == BROKEN_TRUNCATED) {
        /* keep the header and about half of the data */
        size_t keep = 2880 + (len - 2880) / 2;
        rc = truncate(tmp, (off_t)keep);
    } else if (c->broken == BROKEN_GARBAGE) {
        sim_rng r;
        sim_rng_seed(&r, c->seed, 0xBADull ^ index);
        for (size_t i = 0; i < len; i++) data[i] = (uint8_t)sim_next(&r);
        if (data[0] == 'S') data[0] = 'X';
        int fd = open(tmp, O_WRONLY | O_TRUNC);
        rc = fd < 0 || write_all(fd, data, len) || fsync(fd) ? -1 : 0;
        if (fd >= 0) close(fd);
    }
    free(data);
    return rc;
}

static int write_frame(const config *c, const char *final, const char *tmp, uint64_t index,
                       time_t capture, const uint16_t *pix)
{
    char err[512];
    int broken = c->broken != BROKEN_NONE &&
                 (c->broken_every <= 1 || (index - c->start_index) % (uint64_t)c->broken_every == 0);
    sim_fits_meta meta = {capture, index, c->seed, &c->opt,
                          broken && c->broken == BROKEN_BITPIX32 ? 32 : 16};
    const char *first = c->mode == WRITE_DIRECT && !broken ? final : tmp;
    if (sim_fits_write(first, c->width, c->height, pix, &meta, err, sizeof err)) {
        fprintf(stderr, "aurorasim: %s\n", err);
        return -1;
    }
    if (first == final) return 0;
    if (broken && break_file(c, tmp, index)) {
        fprintf(stderr, "aurorasim: %s: cannot make it broken: %s\n", tmp, strerror(errno));
        return -1;
    }
    if (c->mode == WRITE_SLOW) {
        uint8_t *data;
        size_t len;
        if (read_file(tmp, &data, &len)) {
            fprintf(stderr, "aurorasim: %s: cannot read back: %s\n", tmp, strerror(errno));
            return -1;
        }
        unlink(tmp);
        int rc = write_slowly(c, final, data, len);
        free(data);
        if (rc) fprintf(stderr, "aurorasim: %s: cannot write: %s\n", final, strerror(errno));
        return rc;
    }
    if (rename(tmp, final) != 0) {
        fprintf(stderr, "aurorasim: %s: cannot rename to %s: %s\n", tmp, final, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    config c;
    memset(&c, 0, sizeof c);
    c.width = 1024, c.height = 1024, c.seed = 1, c.interval_s = 15, c.slow_seconds = 4;
    c.prefix = "", c.start_time = time(NULL), c.mode = WRITE_RENAME;
    c.kind = -1, c.level = -1, c.line_scale = -1, c.cosmic_rays = -1;
    sim_options_default(&c.opt);
    if (parse_args(argc, argv, &c)) return 2;

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    uint16_t *pix = malloc((size_t)c.width * c.height * sizeof *pix);
    if (!pix) {
        fprintf(stderr, "aurorasim: out of memory for a %ux%u frame\n", c.width, c.height);
        return 1;
    }
    if (c.one) {
        char err[512];
        if (sim_frame(c.width, c.height, c.seed, c.index, &c.opt, pix)) {
            fprintf(stderr, "aurorasim: out of memory for a %ux%u frame\n", c.width, c.height);
            free(pix);
            return 1;
        }
        sim_fits_meta meta = {c.start_time, c.index, c.seed, &c.opt, 16};
        int rc = sim_fits_write(c.one, c.width, c.height, pix, &meta, err, sizeof err);
        if (rc) fprintf(stderr, "aurorasim: %s\n", err);
        else if (!c.quiet) printf("%s\n", c.one);
        free(pix);
        return rc ? 1 : 0;
    }

    struct stat st;
    if (stat(c.outdir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "aurorasim: %s: not a directory\n", c.outdir);
        free(pix);
        return 1;
    }
    int rc = 0;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (long long k = 0; !stop_requested && (c.count == 0 || k < c.count); k++) {
        uint64_t index = c.start_index + (uint64_t)k;
        time_t capture = c.start_time + (time_t)(k * SIM_CADENCE_S);
        struct tm tm;
        gmtime_r(&capture, &tm);
        char stamp[32], final[4096], tmp[4096];
        strftime(stamp, sizeof stamp, "%Y%m%d_%H%M%S", &tm);
        snprintf(final, sizeof final, "%s/%s%s.fits", c.outdir, c.prefix, stamp);
        snprintf(tmp, sizeof tmp, "%s/.%s%s.fits.tmp", c.outdir, c.prefix, stamp);
        if (sim_frame(c.width, c.height, c.seed, index, &c.opt, pix)) {
            fprintf(stderr, "aurorasim: out of memory for a %ux%u frame\n", c.width, c.height);
            rc = 1;
            break;
        }
        if (write_frame(&c, final, tmp, index, capture, pix)) {
            rc = 1;
            break;
        }
        fsync_dir(c.outdir);
        if (!c.quiet) {
            printf("%s\n", final);
            fflush(stdout);
        }
        if (c.count != 0 && k + 1 >= c.count) break;
        /* a fixed cadence: sleep until the next multiple of the interval */
        next.tv_sec += (time_t)c.interval_s;
        next.tv_nsec += (long)((c.interval_s - (double)(time_t)c.interval_s) * 1e9);
        if (next.tv_nsec >= 1000000000L) next.tv_sec++, next.tv_nsec -= 1000000000L;
        while (!stop_requested &&
               clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR) {}
    }
    free(pix);
    return rc;
}

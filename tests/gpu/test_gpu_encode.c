/* GPU encoder tests (make test-gpu, on a machine with a GPU): every GPU
 * stream must be byte-identical to the CPU encoder's (aurp_image_encode) and
 * decode on the CPU decoder to the original pixels, for the real frames
 * (paths given as arguments, read without cfitsio), simulated frames of many
 * sizes and kinds, several N/M/T, and column splits over 1..G devices.
 * Plain C (no Criterion on the device machine); ends "N passed, N failed". */
#include "aurp.h"
#include "aurp_gpu.h"
#include "gpu_frames.h"
#include "gpu_check.h"

#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cpu_threads = 8;

/* A handle over every device with the lsmix column split forced
 * (AURP_GPU_TEST_LSMIX_SPLIT_ALL): a handle splits only the frames wider
 * than its first device's SMs take in one pass of LS blocks (encoder.cu
 * lsx_split_devices), so this one makes every device's band run on the
 * frames here too.  It follows the others in the main handles' list, for
 * lsmix only. */
static aurp_gpu *forced_split;
/* lsmix streams the CPU encoder wrote without and with the adaptive sign
 * (header byte 23 bit 6): the GPU's bytes are put to the test both ways */
static int sign_seen[2];
static const char *handle_name(const aurp_gpu *h)
{
    static char name[8 * AURP_GPU_MAX_DEVICES + 16];
    snprintf(name, sizeof name, "%s%s", aurp_gpu_label(h), h == forced_split ? " split forced" : "");
    return name;
}

/* A crash names where it happened (addresses for addr2line -f -e). */
static void on_fatal_signal(int sig)
{
    void *frames[64];
    int n = backtrace(frames, 64);
    char msg[64];
    int len = snprintf(msg, sizeof msg, "FATAL signal %d; backtrace:\n", sig);
    if (write(2, msg, (size_t)len) < 0) _exit(128 + sig);
    backtrace_symbols_fd(frames, n, 2);
    _exit(128 + sig);
}

/* AURP_GPU_TEST_ONLY=SUBSTRING: only the frames whose name contains it;
 * AURP_GPU_TEST_TRACE: a line before every case (to find a crash). */
static int skip_frame(const gpu_frame *f)
{
    const char *only = getenv("AURP_GPU_TEST_ONLY");
    return only && *only && !strstr(f->name, only);
}

/* One frame, one profile and parameter set, every device count 1..ndev
 * (handles[0..ndev-1]; for lsmix also handles[ndev], the forced split,
 * unless NULL). Returns the lsmix predictor set the CPU encoder chose (-1:
 * none). */
static int check_profile(aurp_gpu **handles, int ndev, const gpu_frame *f, int profile, int N, int M, int T)
{
    const int nh = ndev + (profile == AURP_PROFILE_LSMIX && handles[ndev] != NULL);
    if (skip_frame(f)) return -1;
    const char *pn = aurp_profile_name(profile);
    if (getenv("AURP_GPU_TEST_TRACE")) printf("case %s %s N=%d M=%d T=%d\n", f->name, pn, N, M, T);
    aurp_params p;
    aurp_params_for_profile(&p, profile);
    p.order = N, p.equations = M, p.threshold = T;
    size_t cap = aurp_image_bound(f->width, f->height);
    uint8_t *ref = malloc(cap), *got = malloc(cap), *back = malloc(2 * (size_t)f->width * f->height);
    size_t ref_len = 0;
    aurp_error err = {{0}};
    aurp_status st = aurp_image_encode(f->be16, f->width, f->height, &p, cpu_threads, ref, cap, &ref_len, &err);
    CHECK(st == AURP_OK, "%s %s N=%d M=%d T=%d: CPU encode: %s", f->name, pn, N, M, T, err.msg);
    for (int g = 1; st == AURP_OK && g <= nh; g++) {
        const char *hn = handle_name(handles[g - 1]);
        size_t got_len = 0;
        memset(got, 0xA5, cap);
        aurp_status gs = aurp_gpu_encode(handles[g - 1], f->be16, f->width, f->height, &p, got, cap, &got_len, &err);
        CHECK(gs == AURP_OK, "%s %s N=%d M=%d T=%d %s: GPU encode: %s", f->name, pn, N, M, T, hn, err.msg);
        if (gs != AURP_OK) continue;
        size_t diff = 0;
        while (diff < ref_len && diff < got_len && ref[diff] == got[diff]) diff++;
        CHECK(got_len == ref_len && diff == ref_len,
              "%s %s N=%d M=%d T=%d %s: GPU stream %zu bytes, CPU %zu, first difference at byte %zu",
              f->name, pn, N, M, T, hn, got_len, ref_len, diff);
        aurp_status ds = aurp_image_decode(got, got_len, f->width, f->height, cpu_threads, back, &err);
        CHECK(ds == AURP_OK && memcmp(back, f->be16, 2 * (size_t)f->width * f->height) == 0,
              "%s %s N=%d M=%d T=%d %s: CPU decode of the GPU stream: %s", f->name, pn, N, M, T, hn,
              ds == AURP_OK ? "pixels differ" : err.msg);
    }
    char chosen[40] = "";
    int set = -1;
    /* lsmix: the predictor set, forgetting and adaptive sign the encoder
     * chose (3.1 header bytes 22, 12, 23 bit 6) */
    if (profile == AURP_PROFILE_LSMIX && st == AURP_OK && ref_len > 23) {
        snprintf(chosen, sizeof chosen, " set %d f %d sign %d", ref[22], ref[12], ref[23] >> 6 & 1);
        set = ref[22];
        sign_seen[ref[23] >> 6 & 1]++;
    }
    printf("  %-34s %-6s %5ux%-5u N=%-2d M=%-2d T=%-3d %zu bytes (%.3f bpp)%s, G=1..%d%s\n", f->name, pn, f->width,
           f->height, N, M, T, ref_len, 8.0 * ref_len / ((double)f->width * f->height), chosen, ndev,
           nh > ndev ? " and split forced" : "");
    free(ref), free(got), free(back);
    return set;
}

static void check_frame(aurp_gpu **handles, int ndev, const gpu_frame *f, int N, int M, int T)
{
    check_profile(handles, ndev, f, AURP_PROFILE_PAPER, N, M, T);
}

/* The lsmix profile: K lags, window M (T is not used); the set chosen. */
static int check_lsmix(aurp_gpu **handles, int ndev, const gpu_frame *f, int K, int M)
{
    return check_profile(handles, ndev, f, AURP_PROFILE_LSMIX, K, M, 0);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGSEGV, on_fatal_signal);
    signal(SIGBUS, on_fatal_signal);
    signal(SIGABRT, on_fatal_signal);
    signal(SIGFPE, on_fatal_signal);
    char why[256];
    int have = aurp_gpu_count(why, sizeof why);
    if (have == 0) {
        printf("GPU tests skipped: %s\n0 passed, 0 failed\n", why);
        return 77;
    }
    int ndev = have;
    const char *lim = getenv("AURP_GPU_TEST_DEVICES");
    if (lim && atoi(lim) > 0 && atoi(lim) < ndev) ndev = atoi(lim);
    /* one device: the column split over 2 and 3 "devices" that are all
     * device 0 (each with its own stream and buffers), so that the split's
     * code runs and is checked here too (AURP_GPU_TEST_SPLIT=0: not) */
    int same = 0;
    if (ndev == 1 && !(getenv("AURP_GPU_TEST_SPLIT") && !strcmp(getenv("AURP_GPU_TEST_SPLIT"), "0"))) {
        setenv("AURP_GPU_TEST_SAME_DEVICE", "1", 1);
        same = 1;
        ndev = 3;
    }
    printf("GPU tests on %d device(s)%s\n", ndev, same ? " (all device 0: the column split on one GPU)" : "");

    /* handle g-1 splits every frame over devices 0..g-1 */
    aurp_gpu *handles[AURP_GPU_MAX_DEVICES + 1] = {0};
    int ids[AURP_GPU_MAX_DEVICES];
    for (int i = 0; i < ndev; i++) ids[i] = same ? 0 : i;
    aurp_error err = {{0}};
    for (int g = 1; g <= ndev; g++) {
        aurp_status st = aurp_gpu_open(ids, g, 2112, 1024, &handles[g - 1], &err);
        CHECK(st == AURP_OK, "open %d devices: %s", g, err.msg);
        if (st != AURP_OK) {
            printf("%d passed, %d failed\n", passed, failed);
            return 1;
        }
    }
    if (ndev > 1) {
        setenv("AURP_GPU_TEST_LSMIX_SPLIT_ALL", "1", 1);
        aurp_status st = aurp_gpu_open(ids, ndev, 2112, 1024, &handles[ndev], &err);
        unsetenv("AURP_GPU_TEST_LSMIX_SPLIT_ALL");
        CHECK(st == AURP_OK, "open %d devices, the lsmix split forced: %s", ndev, err.msg);
        if (st != AURP_OK) {
            printf("%d passed, %d failed\n", passed, failed);
            return 1;
        }
        forced_split = handles[ndev];
    }

    /* limits are refused before any work, with a reason */
    {
        aurp_gpu *big = NULL;
        aurp_status st = aurp_gpu_open(ids, 1, 4097, 16, &big, &err);
        CHECK(st == AURP_ERR_PARAM && big == NULL && strstr(err.msg, "4097"), "open 4097 wide: %s", err.msg);
        gpu_frame f;
        gpu_frame_sim(&f, SIM_SPECTRUM, 2113, 4, 1);
        aurp_params p;
        aurp_params_for_profile(&p, AURP_PROFILE_PAPER); /* the GPU encoder has the paper profile */
        uint8_t out[64];
        size_t len = 1;
        st = aurp_gpu_encode(handles[0], f.be16, f.width, f.height, &p, out, sizeof out, &len, &err);
        CHECK(st == AURP_ERR_PARAM && len == 0 && strstr(err.msg, "2113"), "frame over the opened limit: %s", err.msg);
        gpu_frame_free(&f);
        gpu_frame_sim(&f, SIM_SPECTRUM, 64, 64, 1);
        p.order = 33;
        st = aurp_gpu_encode(handles[0], f.be16, 64, 64, &p, out, sizeof out, &len, &err);
        CHECK(st == AURP_ERR_PARAM, "N=33 refused: %s", err.msg);
        gpu_frame_free(&f);
    }

    /* AURP_GPU_TEST_QUICK: small frames only (for compute-sanitizer) */
    const int quick = getenv("AURP_GPU_TEST_QUICK") != NULL;

    /* real frames (and simulated FITS frames), given as arguments */
    for (int i = 1; i < argc; i++) {
        gpu_frame f;
        int rc = gpu_frame_read_fits(argv[i], &f, why, sizeof why);
        CHECK(rc == 0, "%s", why);
        if (rc) continue;
        check_frame(handles, ndev, &f, 11, 7, 13);
        check_frame(handles, ndev, &f, 4, 2, 0);
        check_frame(handles, ndev, &f, 16, 3, 200);
        check_lsmix(handles, ndev, &f, 6, 9);
        check_lsmix(handles, ndev, &f, 4, 5);
        if (!quick) check_lsmix(handles, ndev, &f, 16, 17);
        gpu_frame_free(&f);
    }

    /* A fresh handle over the frames of the arguments, forward, then
     * backward: a handle guesses from the last frame (the cascade trial's
     * pipeline; whether the LS of forgetting 1 and pipeline 2 run before
     * the choice asks for them), so each change of the chosen predictor
     * set between neighbours (set 0 where pipeline 1 lost and pipeline 2
     * was not needed, set 2 where it was) is met both ways, each stream
     * checked against the CPU's. */
    if (argc > 2 && !quick) {
        aurp_gpu *seq = NULL;
        aurp_status st = aurp_gpu_open(ids, 1, 2112, 1024, &seq, &err);
        CHECK(st == AURP_OK, "open a fresh handle: %s", err.msg);
        int changes = 0, last = -1;
        for (int k = 0; st == AURP_OK && k < 2 * (argc - 1); k++) {
            const int i = k < argc - 1 ? 1 + k : 2 * (argc - 1) - k;
            gpu_frame f;
            if (gpu_frame_read_fits(argv[i], &f, why, sizeof why) != 0) continue;
            aurp_gpu *one[2] = {seq, NULL}; /* no forced split after it */
            const int set = check_lsmix(one, 1, &f, 6, 9);
            if (last >= 0 && set >= 0 && (set == 0) != (last == 0)) changes++;
            if (set >= 0) last = set;
            gpu_frame_free(&f);
        }
        CHECK(changes >= 2, "the frames' chosen sets changed %d times in the sequence: the handle's guesses were "
                            "not put to the test both ways (give frames of both kinds)", changes);
        aurp_gpu_close(seq);
    }

    /* simulated frames: sizes around the edges of every rule */
    static const uint32_t sizes[][2] = {{1, 1},   {1, 9},   {9, 1},    {2, 2},    {3, 17},   {17, 3},
                                        {5, 5},   {17, 40}, {18, 18},  {37, 100}, {129, 33}, {333, 129},
                                        {1000, 7}, {4097 - 2112 + 100, 50}, {1024, 1024}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        if (quick && sizes[i][0] * sizes[i][1] > 20000) continue;
        gpu_frame f;
        gpu_frame_sim(&f, SIM_SPECTRUM, sizes[i][0], sizes[i][1], (uint32_t)i);
        check_frame(handles, ndev, &f, 11, 7, 13);
        if (f.width * f.height <= 200000) {
            check_frame(handles, ndev, &f, 1, 1, 1);
            check_frame(handles, ndev, &f, 3, 16, 2);
        }
        if (f.width * f.height <= 20000) check_frame(handles, ndev, &f, 32, 16, 13);
        check_lsmix(handles, ndev, &f, 6, 9);
        if (f.width * f.height <= 200000) {
            check_lsmix(handles, ndev, &f, 1, 1);
            check_lsmix(handles, ndev, &f, 3, 3);
            check_lsmix(handles, ndev, &f, 16, 17);
        }
        gpu_frame_free(&f);
    }
    if (!quick && !getenv("AURP_GPU_TEST_ONLY")) /* (the quick set's frames are all small) */
        CHECK(sign_seen[0] > 0 && sign_seen[1] > 0, "lsmix streams without the adaptive sign %d, with it %d: "
              "not put to the test both ways", sign_seen[0], sign_seen[1]);
    /* fewer columns than the CPU encoder's threads and segments (handles
     * opened for such frames: the others stop at 1024 rows) */
    {
        aurp_gpu *narrow[AURP_GPU_MAX_DEVICES + 1] = {0};
        int opened = 1;
        for (int g = 1; g <= ndev && opened; g++) {
            aurp_status st = aurp_gpu_open(ids, g, 3, 3000, &narrow[g - 1], &err);
            CHECK(st == AURP_OK, "open %d devices for 3 x 3000: %s", g, err.msg);
            opened = st == AURP_OK;
        }
        static const uint32_t tall[][2] = {{1, 3000}, {3, 2100}};
        for (size_t i = 0; opened && i < sizeof tall / sizeof tall[0]; i++) {
            gpu_frame f;
            gpu_frame_sim(&f, SIM_SPECTRUM, tall[i][0], tall[i][1], (uint32_t)i);
            check_frame(narrow, ndev, &f, 11, 7, 13);
            check_lsmix(narrow, ndev, &f, 6, 9);
            check_lsmix(narrow, ndev, &f, 16, 17);
            gpu_frame_free(&f);
        }
        for (int g = 0; g < ndev; g++) aurp_gpu_close(narrow[g]);
    }
    static const int kinds[] = {SIM_CONSTANT, SIM_NOISE, SIM_RAMP};
    for (int k = 0; k < 3; k++) {
        gpu_frame f;
        gpu_frame_sim(&f, kinds[k], quick ? 61 : 257, quick ? 23 : 65, 7);
        check_frame(handles, ndev, &f, 11, 7, 13);
        check_frame(handles, ndev, &f, 11, 7, 0);
        check_frame(handles, ndev, &f, 8, 4, 100000);
        check_lsmix(handles, ndev, &f, 6, 9);
        check_lsmix(handles, ndev, &f, 16, 17);
        gpu_frame_free(&f);
    }

    /* both profiles, and parameters out of range refused with a reason */
    {
        gpu_frame f;
        gpu_frame_sim(&f, SIM_SPECTRUM, 64, 64, 1);
        aurp_params p;
        aurp_params_for_profile(&p, AURP_PROFILE_LSMIX);
        uint8_t out[64];
        size_t len = 1;
        CHECK(aurp_gpu_has_profile(AURP_PROFILE_PAPER) && aurp_gpu_has_profile(AURP_PROFILE_LSMIX) &&
                  !aurp_gpu_has_profile(3),
              "the GPU encoder has paper and lsmix");
        p.equations = 4;
        aurp_status st = aurp_gpu_encode(handles[0], f.be16, 64, 64, &p, out, sizeof out, &len, &err);
        CHECK(st == AURP_ERR_PARAM && len == 0 && strstr(err.msg, "M=4"), "lsmix M=4 refused: %s", err.msg);
        p.equations = 9;
        p.profile = 3;
        st = aurp_gpu_encode(handles[0], f.be16, 64, 64, &p, out, sizeof out, &len, &err);
        CHECK(st == AURP_ERR_PARAM && len == 0 && strstr(err.msg, "profile"), "profile 3 refused: %s", err.msg);
        /* too small an output: an error, as on the CPU */
        aurp_params_for_profile(&p, AURP_PROFILE_LSMIX);
        st = aurp_gpu_encode(handles[0], f.be16, 64, 64, &p, out, sizeof out, &len, &err);
        CHECK(st == AURP_ERR_CAPACITY && len == 0, "lsmix 64-byte output refused as too small: %s", err.msg);
        gpu_frame_free(&f);
    }

    /* an output buffer too small: an error, nothing written past it (last,
     * on the heap, so that an overrun shows) */
    {
        gpu_frame f;
        gpu_frame_sim(&f, SIM_SPECTRUM, 64, 64, 1);
        aurp_params p;
        aurp_params_for_profile(&p, AURP_PROFILE_PAPER); /* the GPU encoder has the paper profile */
        size_t len = 1;
        uint8_t *small = malloc(64);
        aurp_status st = aurp_gpu_encode(handles[0], f.be16, 64, 64, &p, small, 64, &len, &err);
        CHECK(st == AURP_ERR_CAPACITY, "64-byte output refused as too small: %s", err.msg);
        free(small);
        gpu_frame_free(&f);
    }
    for (int g = 0; g <= ndev; g++) aurp_gpu_close(handles[g]);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

/* GPU encoder benchmark.
 * usage: aurp-gpu-bench [FITS] [-p lsmix|paper] [-g G] [-n frames] [-j J]
 * Frame: the FITS file's first image, or a simulated 1024x1024 spectrum.
 * Prints, for G = 1..G devices:
 *   latency  median / p90 of one frame, pinned host pixels -> finished stream
 *            in host memory, one handle (column split over g devices), and
 *            the device time of each stage (aurp_gpu_stage_times);
 *   split    frames/s with 2 handles over the g devices, one thread each;
 *   frames   frames/s frame-parallel: J handles per device (default 2), one
 *            device each, one thread each.
 * With -j a list (-j 1,2,4,8) the frame-parallel rate is printed for each J:
 * how far frames in flight on one GPU overlap. */
#include "aurp.h"
#include "aurp_gpu.h"
#include "gpu_frames.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int bench_profile = AURP_PROFILE_PAPER; /* -p lsmix|paper */

typedef struct {
    aurp_gpu *g;
    const gpu_frame *f;
    int frames;
    int ok;
} worker;

static void *run_worker(void *arg)
{
    worker *w = arg;
    aurp_params p;
    aurp_params_for_profile(&p, bench_profile);
    size_t cap = aurp_image_bound(w->f->width, w->f->height), len;
    uint8_t *out = malloc(cap);
    size_t hcap;
    uint8_t *in = aurp_gpu_host_buffer(w->g, &hcap);
    memcpy(in, w->f->be16, 2 * (size_t)w->f->width * w->f->height);
    aurp_error err;
    w->ok = 1;
    for (int i = 0; i < w->frames; i++)
        if (aurp_gpu_encode(w->g, in, w->f->width, w->f->height, &p, out, cap, &len, &err) != AURP_OK) {
            printf("encode failed: %s\n", err.msg);
            w->ok = 0;
            break;
        }
    free(out);
    return NULL;
}

#define MAX_PER_DEVICE 32

/* frames/s of nh handles, one thread each. */
static double throughput(aurp_gpu **h, int nh, const gpu_frame *f, int frames)
{
    pthread_t t[MAX_PER_DEVICE * AURP_GPU_MAX_DEVICES];
    worker w[MAX_PER_DEVICE * AURP_GPU_MAX_DEVICES];
    double t0 = now_ms();
    for (int i = 0; i < nh; i++) {
        w[i] = (worker){h[i], f, frames, 0};
        pthread_create(&t[i], NULL, run_worker, &w[i]);
    }
    int ok = 1;
    for (int i = 0; i < nh; i++) {
        pthread_join(t[i], NULL);
        ok &= w[i].ok;
    }
    double ms = now_ms() - t0;
    return ok ? 1000.0 * nh * frames / ms : 0;
}

int main(int argc, char **argv)
{
    int G = 0, frames = 200, per_device[8] = {2}, nper = 1;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-g") && i + 1 < argc) G = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-n") && i + 1 < argc) frames = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-j") && i + 1 < argc) {
            nper = 0;
            for (char *tok = strtok(argv[++i], ","); tok && nper < 8; tok = strtok(NULL, ",")) {
                int j = atoi(tok);
                per_device[nper++] = j < 1 ? 1 : j > MAX_PER_DEVICE ? MAX_PER_DEVICE : j;
            }
            if (nper == 0) per_device[nper++] = 2;
        } else if (!strcmp(argv[i], "-p") && i + 1 < argc)
            bench_profile = !strcmp(argv[++i], "lsmix") ? AURP_PROFILE_LSMIX : AURP_PROFILE_PAPER;
        else path = argv[i];
    }
    char why[256];
    int have = aurp_gpu_count(why, sizeof why);
    if (have == 0) {
        printf("no GPU: %s\n", why);
        return 77;
    }
    if (G <= 0 || G > have) G = have;
    gpu_frame f;
    if (path) {
        if (gpu_frame_read_fits(path, &f, why, sizeof why)) {
            printf("%s\n", why);
            return 1;
        }
    } else {
        gpu_frame_sim(&f, SIM_SPECTRUM, 1024, 1024, 3);
    }
    aurp_params p;
    aurp_params_for_profile(&p, bench_profile);
    printf("frame %s %ux%u, profile %s, N=%d M=%d T=%d, %d frames per measurement\n", f.name, f.width, f.height,
           aurp_profile_name(p.profile), p.order, p.equations, p.threshold, frames);
    size_t cap = aurp_image_bound(f.width, f.height), len = 0;
    uint8_t *out = malloc(cap);
    aurp_error err;
    int ids[AURP_GPU_MAX_DEVICES];
    for (int i = 0; i < AURP_GPU_MAX_DEVICES; i++) ids[i] = i;
    static const char *paper_stage[] = {"H2D frame", "unpack+lag sums", "solve+residuals(+gather)",
                                        "histogram+D2H", "plan(host)+table H2D", "rANS+scan+compact",
                                        "D2H body"};
    static const char *lsmix_stage[] = {"H2D frame+unpack",      "column means+LS f=2,1",
                                        "row fits (+side waits)", "3 pipelines' residuals",
                                        "contexts+counts+tables+est", "choice+cascade trial",
                                        "rANS (winner)+gather+D2H"};
    const char **stage = bench_profile == AURP_PROFILE_LSMIX ? lsmix_stage : paper_stage;
    printf("\n%-6s %-10s %10s %10s %10s %12s %12s\n", "GPUs", "", "median_ms", "p90_ms", "min_ms",
           "split_fps", "frames_fps");
    for (int g = 1; g <= G; g++) {
        aurp_gpu *h = NULL;
        if (aurp_gpu_open(ids, g, f.width, f.height, &h, &err) != AURP_OK) {
            printf("open: %s\n", err.msg);
            return 1;
        }
        size_t hcap;
        uint8_t *in = aurp_gpu_host_buffer(h, &hcap);
        memcpy(in, f.be16, 2 * (size_t)f.width * f.height);
        aurp_gpu_profile(h, 1);
        int lat_n = frames < 50 ? 50 : frames;
        double *lat = malloc(sizeof(double) * lat_n);
        double st_sum[AURP_GPU_STAGES + 1] = {0}, st[AURP_GPU_STAGES + 1];
        for (int i = 0; i < 10; i++) aurp_gpu_encode(h, in, f.width, f.height, &p, out, cap, &len, &err);
        for (int i = 0; i < lat_n; i++) {
            double t0 = now_ms();
            if (aurp_gpu_encode(h, in, f.width, f.height, &p, out, cap, &len, &err) != AURP_OK) {
                printf("encode: %s\n", err.msg);
                return 1;
            }
            lat[i] = now_ms() - t0;
            aurp_gpu_stage_times(h, st, AURP_GPU_STAGES + 1);
            for (int s = 0; s <= AURP_GPU_STAGES; s++) st_sum[s] += st[s];
        }
        aurp_gpu_profile(h, 0);
        qsort(lat, lat_n, sizeof *lat, cmp_d);
        double med = lat[lat_n / 2], p90 = lat[lat_n * 9 / 10], mn = lat[0];
        /* throughput: two split handles; two frame-parallel handles per device */
        aurp_gpu *sh[2] = {h, NULL};
        double split_fps = 0, frame_fps = 0;
        if (aurp_gpu_open(ids, g, f.width, f.height, &sh[1], &err) == AURP_OK) {
            split_fps = throughput(sh, 2, &f, frames);
            aurp_gpu_close(sh[1]);
        }
        aurp_gpu_close(h);
        double fps_of[8] = {0};
        for (int q = 0; q < nper; q++) {
            aurp_gpu *fh[MAX_PER_DEVICE * AURP_GPU_MAX_DEVICES];
            int nf = 0;
            for (int d = 0; d < g; d++)
                for (int k = 0; k < per_device[q]; k++)
                    if (aurp_gpu_open(&ids[d], 1, f.width, f.height, &fh[nf], &err) == AURP_OK) nf++;
                    else printf("open: %s\n", err.msg);
            if (nf == per_device[q] * g) fps_of[q] = throughput(fh, nf, &f, frames);
            for (int i = 0; i < nf; i++) aurp_gpu_close(fh[i]);
        }
        frame_fps = fps_of[0];
        printf("%-6d %-10s %10.3f %10.3f %10.3f %12.1f %12.1f   (%zu bytes, %.3f bpp)\n", g, "", med, p90,
               mn, split_fps, frame_fps, len, 8.0 * len / ((double)f.width * f.height));
        for (int q = 0; q < nper; q++)
            printf("         frame-parallel, %2d handles per device: %8.1f frames/s\n", per_device[q], fps_of[q]);
        for (int s = 0; s < AURP_GPU_STAGES; s++)
            printf("         stage %-26s %8.3f ms (mean device time)\n", stage[s], st_sum[s] / lat_n);
        printf("         host plan build %24.3f ms (mean, inside the stage above)\n", st_sum[AURP_GPU_STAGES] / lat_n);
        free(lat);
    }
    /* CPU reference on this machine, for scale */
    {
        double t0 = now_ms();
        aurp_image_encode(f.be16, f.width, f.height, &p, 16, out, cap, &len, &err);
        printf("\nCPU aurp_image_encode, 16 threads: %.1f ms\n", now_ms() - t0);
    }
    free(out);
    gpu_frame_free(&f);
    return 0;
}

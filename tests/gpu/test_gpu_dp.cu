/* The device DP of the lsmix encoder's context candidate
 * (lsx_gpu_dp_contexts, gpu/lsmix_dp_kernels.cu) against the C core's
 * lsx_dp_contexts, on the same histograms: the same thresholds, intensity
 * classes and bounds, or the same refusal of an empty histogram.  The GPU
 * identity tests (test_gpu_encode) see a difference only where the DP's
 * candidate wins a frame; this compares every DP directly, on histograms
 * of every shape: sparse and dense, one bin, one token, all 64 tokens,
 * 1 to 4 starting intensity classes.  Built by nvcc (it calls the kernels'
 * launcher); ends "N passed, N failed" like the other GPU tests. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lsmix.h"
#include "lsmix_kernels.h"
#include "gpu_check.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(uint32_t below)
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return (uint32_t)((rng_state >> 11) % below);
}

/* A histogram like a frame's: active activity bins and intensity tokens,
 * each cell's residual tokens around a peak that grows with the activity
 * (spread and shape vary by trial), some cells empty. */
static void make_histogram(uint32_t *h, int bins, int itoks, int spread, int dense)
{
    memset(h, 0, sizeof *h * LSX_THR_CELLS);
    int qlo = (int)rnd(LSX_TQ - bins + 1), ilo = (int)rnd(CTX_TOKENS - itoks + 1);
    for (int q = qlo; q < qlo + bins; q++)
        for (int i = ilo; i < ilo + itoks; i++) {
            if (!dense && rnd(4) == 0) continue;
            const uint32_t total = dense ? 1 + rnd(100000) : rnd(6000);
            const int peak = q / 3 + (int)rnd(3) + i / 16;
            for (int t = 0; t < CTX_TOKENS; t++) {
                const int d = t > peak ? t - peak : peak - t;
                uint32_t c = dense ? total >> (d < 16 ? d : 16) : (d <= spread ? total >> (2 * d) : 0);
                if (dense && c == 0) c = 1;
                h[((size_t)q * CTX_TOKENS + i) * CTX_TOKENS + t] = c;
            }
        }
}

/* A pipeline's starting intensity classes: info[0] of them, bounds after. */
static void make_classes(uint8_t *info, int nib)
{
    memset(info, 0, 8);
    info[0] = (uint8_t)nib;
    int t = 0;
    for (int c = 0; c < nib - 1; c++) {
        t += 1 + (int)rnd(12);
        info[1 + c] = (uint8_t)t;
    }
}

#define NPIPE 3

static int run(const uint32_t *h_hist, const uint8_t *h_info, lsx_gpu_cand *h_cand, int *h_ok)
{
    uint32_t *hist;
    uint8_t *info;
    lsx_gpu_cand *cand;
    int *ok;
    void *scratch;
    cudaError_t rc = cudaMalloc((void **)&hist, sizeof *hist * NPIPE * LSX_THR_CELLS);
    if (rc == cudaSuccess) rc = cudaMalloc((void **)&info, 8 * NPIPE);
    if (rc == cudaSuccess) rc = cudaMalloc((void **)&cand, sizeof *cand * NPIPE);
    if (rc == cudaSuccess) rc = cudaMalloc((void **)&ok, sizeof *ok * NPIPE);
    if (rc == cudaSuccess) rc = cudaMalloc(&scratch, lsx_gpu_dp_scratch_bytes(NPIPE));
    if (rc == cudaSuccess) rc = cudaMemcpy(hist, h_hist, sizeof *hist * NPIPE * LSX_THR_CELLS, cudaMemcpyHostToDevice);
    if (rc == cudaSuccess) rc = cudaMemcpy(info, h_info, 8 * NPIPE, cudaMemcpyHostToDevice);
    if (rc == cudaSuccess) rc = cudaMemcpy(cand, h_cand, sizeof *cand * NPIPE, cudaMemcpyHostToDevice);
    if (rc == cudaSuccess) rc = lsx_gpu_dp_contexts(hist, info, NPIPE, cand, 1, ok, scratch, 0);
    if (rc == cudaSuccess) rc = cudaMemcpy(h_cand, cand, sizeof *cand * NPIPE, cudaMemcpyDeviceToHost);
    if (rc == cudaSuccess) rc = cudaMemcpy(h_ok, ok, sizeof *ok * NPIPE, cudaMemcpyDeviceToHost);
    cudaFree(hist), cudaFree(info), cudaFree(cand), cudaFree(ok), cudaFree(scratch);
    if (rc != cudaSuccess) printf("CUDA: %s\n", cudaGetErrorString(rc));
    return rc == cudaSuccess ? 0 : -1;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("GPU DP tests skipped: no device\n0 passed, 0 failed\n");
        return 77;
    }
    uint32_t *hist = (uint32_t *)malloc(sizeof *hist * NPIPE * LSX_THR_CELLS);
    if (!hist) return 1;
    int differ = 0;
    const int trials = getenv("AURP_GPU_TEST_QUICK") ? 12 : 120; /* quick: under compute-sanitizer */
    for (int trial = 0; trial < trials; trial++) {
        uint8_t info[8 * NPIPE];
        lsx_gpu_cand cand[NPIPE];
        memset(cand, 0x5a, sizeof cand); /* what a failed DP must leave as it is */
        const lsx_gpu_cand before = cand[0];
        for (int p = 0; p < NPIPE; p++) {
            uint32_t *h = hist + (size_t)p * LSX_THR_CELLS;
            const int shape = (trial + p) % 8;
            if (trial == 0 && p == 0) {
                memset(h, 0, sizeof *h * LSX_THR_CELLS); /* an empty frame: no DP */
            } else if (shape == 0) {
                make_histogram(h, 1, 1, 3, 0); /* one bin, one token */
                h[rnd(LSX_THR_CELLS)] += 1;
            } else if (shape == 1) {
                make_histogram(h, LSX_TQ, CTX_TOKENS, 64, 1); /* every cell */
            } else {
                make_histogram(h, 1 + (int)rnd(LSX_TQ), 1 + (int)rnd(40), 1 + (int)rnd(12), shape == 2);
            }
            make_classes(info + 8 * p, 1 + (int)rnd(CTX_MAX_IB));
        }
        int ok[NPIPE] = {-1, -1, -1};
        if (run(hist, info, cand, ok) != 0) {
            CHECK(0, "trial %d: the device DP ran", trial);
            break;
        }
        for (int p = 0; p < NPIPE; p++) {
            lsx_view v;
            memset(&v, 0, sizeof v); /* as the GPU encoder's DP started before */
            v.nctx = LSX_NCTX;
            v.nib = info[8 * p];
            if (v.nib > 1) memcpy(v.ibnd, info + 8 * p + 1, (size_t)v.nib - 1);
            const int host_ok = lsx_dp_contexts(hist + (size_t)p * LSX_THR_CELLS, LSX_DP_NCTX, LSX_NIB, 1, &v) == 0;
            const lsx_gpu_cand *c = &cand[p];
            int same = ok[p] == host_ok;
            if (same && host_ok)
                same = c->nctx == v.nctx && c->use_classes == 2 && !memcmp(c->thr, v.thr, sizeof c->thr) &&
                       c->classes[0] == v.nib && !memcmp(c->classes + 1, v.ibnd, CTX_MAX_IB);
            if (same && !host_ok) same = !memcmp(c, &before, sizeof before);
            if (!same && differ++ < 5)
                printf("trial %d pipe %d: device ok %d nctx %d nib %d, host ok %d nctx %d nib %d\n", trial, p, ok[p],
                       c->nctx, c->classes[0], host_ok, v.nctx, v.nib);
            CHECK(same, "trial %d pipeline %d: the device DP's contexts are the C core's", trial, p);
        }
    }
    free(hist);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

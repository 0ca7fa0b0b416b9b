/* The device's forms of the format's arithmetic against the C core's:
 * - aurp_div_s64 (core/hostdev.h), which the device computes from a float
 *   estimate and its remainder, and the host by C's division.  The
 *   identity tests meet it only at the quotients BG's row pass reaches on
 *   the test frames; this compares every sign, quotients from 0 to 2^62,
 *   divisors from 1 to 2^61, and the values next to exact multiples.
 * - rcp_in_range (gpu/rcp_in_range.cuh), the LS solve's 1.0 / d without
 *   the division's branch: against the host's division on a million d
 *   from 2^-40 to 2^72 (the pivots lie in (2^-30, 2^64)), mantissas of
 *   every kind and the ones next to powers of two, and against the
 *   device's own IEEE division on 2^28 more.  The identity tests meet it
 *   only at their frames' pivots.
 * Built by nvcc; ends "N passed, N failed" like the other GPU tests. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostdev.h"
#include "gpu_check.h"
#include "rcp_in_range.cuh"

#define CASES (1 << 20)

__global__ void div_kernel(const int64_t *num, const int64_t *den, int64_t *q, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) q[i] = aurp_div_s64(num[i], den[i]);
}

__global__ void rcp_kernel(const double *d, double *r, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) r[i] = rcp_in_range(d[i]);
}

/* A d of exponent lo .. lo + span - 1 from the bits of x: a random
 * mantissa, or one next to all ones or next to a power of two. */
__host__ __device__ static double rcp_case(uint64_t x, int lo, int span)
{
    uint64_t mant = x & 0xfffffffffffffull;
    if ((x >> 61) == 0) mant = 0xfffffffffffffull - ((x >> 52) & 0xff);
    if ((x >> 61) == 1) mant = (x >> 52) & 0xfff;
    const uint64_t e = (uint64_t)(1023 + lo + (int)((x >> 32) % (uint64_t)span));
    const uint64_t bits = e << 52 | mant;
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* 2^28 d on the device, each rcp_in_range against 1.0 / d there. */
__global__ void rcp_sweep_kernel(uint64_t seed, unsigned long long *differ)
{
    uint64_t x = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) * 0x9E3779B97F4A7C15ull + seed;
    x ^= x >> 31, x *= 0xBF58476D1CE4E5B9ull, x ^= x >> 29, x *= 0x94D049BB133111EBull, x ^= x >> 32;
    const double d = rcp_case(x, -40, 112);
    if (__double_as_longlong(rcp_in_range(d)) != __double_as_longlong(1.0 / d)) atomicAdd(differ, 1ull);
}

static uint64_t rng_state = 0x243F6A8885A308D3ull;
static uint64_t rnd64(void)
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return rng_state;
}

/* A divisor of 1 to 2^61 bits long and a numerator whose quotient is of
 * any length up to 2^62, sometimes an exact multiple or one off it. */
static void make_case(int64_t *num, int64_t *den)
{
    const int db = 1 + (int)(rnd64() % 61), qb = (int)(rnd64() % 63);
    int64_t d = (int64_t)(rnd64() >> (64 - db)) | 1;
    const int qmax = 62 - db < qb ? 62 - db : qb; /* |num| below 2^62 */
    const int64_t q = qmax > 0 ? (int64_t)(rnd64() >> (64 - qmax)) : 0;
    int64_t n = q * d;
    switch (rnd64() % 4) {
    case 0: break;                                   /* exact multiple */
    case 1: n += (int64_t)(rnd64() % (uint64_t)d); break; /* any remainder */
    case 2: n += d - 1; break;                       /* the largest remainder */
    default: n -= n > 0 ? 1 : 0;                     /* just below a multiple */
    }
    *num = rnd64() & 1 ? -n : n;
    *den = d;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("GPU arithmetic tests skipped: no device\n0 passed, 0 failed\n");
        return 77;
    }
    const int n = getenv("AURP_GPU_TEST_QUICK") ? CASES / 64 : CASES;
    int64_t *num = (int64_t *)malloc(3 * sizeof(int64_t) * n), *den = num + n, *q = den + n;
    int64_t *d_num = NULL;
    if (!num || cudaMalloc(&d_num, 3 * sizeof(int64_t) * n) != cudaSuccess) return 1;
    const int64_t edge_num[] = {0, 1, -1, 15, -16, (int64_t)1 << 59, -((int64_t)1 << 59), ((int64_t)1 << 62) - 1};
    const int64_t edge_den[] = {1, 1, 1, 16, 16, 3, 7, 1};
    const int nedge = (int)(sizeof edge_num / sizeof *edge_num);
    for (int i = 0; i < n; i++) {
        if (i < nedge) num[i] = edge_num[i], den[i] = edge_den[i];
        else make_case(&num[i], &den[i]);
    }
    cudaMemcpy(d_num, num, 2 * sizeof(int64_t) * n, cudaMemcpyHostToDevice);
    div_kernel<<<(n + 255) / 256, 256>>>(d_num, d_num + n, d_num + 2 * n, n);
    const cudaError_t rc = cudaMemcpy(q, d_num + 2 * n, sizeof(int64_t) * n, cudaMemcpyDeviceToHost);
    CHECK(rc == cudaSuccess, "the division kernel ran: %s", cudaGetErrorString(rc));
    int wrong = 0;
    for (int i = 0; i < n && rc == cudaSuccess; i++)
        if (q[i] != num[i] / den[i] && wrong++ < 10)
            printf("  %lld / %lld: device %lld, C %lld\n", (long long)num[i], (long long)den[i], (long long)q[i],
                   (long long)(num[i] / den[i]));
    CHECK(wrong == 0, "aurp_div_s64 on the device is C's division on %d cases (%d differ)", n, wrong);
    cudaFree(d_num);
    free(num);

    /* the reciprocal against the host's division */
    double *dv = (double *)malloc(2 * sizeof(double) * n), *rv = dv + n, *d_dv = NULL;
    if (!dv || cudaMalloc(&d_dv, 2 * sizeof(double) * n) != cudaSuccess) return 1;
    const double edge_d[] = {1.0, 2.0, 3.0, 0x1p-30, 0x1.0000000000001p-30, 0x1p64, 0x1.fffffffffffffp63,
                             1.0 / 3.0, 9007199254740991.0, 4503599627370497.0};
    const int nedge_d = (int)(sizeof edge_d / sizeof *edge_d);
    for (int i = 0; i < n; i++) dv[i] = i < nedge_d ? edge_d[i] : rcp_case(rnd64(), -40, 112);
    cudaMemcpy(d_dv, dv, sizeof(double) * n, cudaMemcpyHostToDevice);
    rcp_kernel<<<(n + 255) / 256, 256>>>(d_dv, d_dv + n, n);
    const cudaError_t rr = cudaMemcpy(rv, d_dv + n, sizeof(double) * n, cudaMemcpyDeviceToHost);
    CHECK(rr == cudaSuccess, "the reciprocal kernel ran: %s", cudaGetErrorString(rr));
    wrong = 0;
    for (int i = 0; i < n && rr == cudaSuccess; i++) {
        const double want = 1.0 / dv[i];
        if (memcmp(&rv[i], &want, sizeof want) != 0 && wrong++ < 10)
            printf("  1 / %a: device %a, host %a\n", dv[i], rv[i], want);
    }
    CHECK(wrong == 0, "rcp_in_range is the host's 1.0 / d on %d cases (%d differ)", n, wrong);
    cudaFree(d_dv);
    free(dv);

    /* and against the device's IEEE division, on many more */
    unsigned long long *d_differ = NULL, differ = 0;
    const int sweeps = getenv("AURP_GPU_TEST_QUICK") ? 1 : 16;
    if (cudaMalloc(&d_differ, sizeof differ) != cudaSuccess) return 1;
    cudaMemset(d_differ, 0, sizeof differ);
    for (int k = 0; k < sweeps; k++) rcp_sweep_kernel<<<1 << 16, 256>>>((uint64_t)k << 40, d_differ);
    const cudaError_t rs = cudaMemcpy(&differ, d_differ, sizeof differ, cudaMemcpyDeviceToHost);
    CHECK(rs == cudaSuccess && differ == 0, "rcp_in_range is the device's 1.0 / d on %d x 2^24 cases (%llu differ; %s)",
          sweeps, differ, cudaGetErrorString(rs));
    cudaFree(d_differ);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

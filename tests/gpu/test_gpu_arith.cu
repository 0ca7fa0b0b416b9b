/* The device's forms of the format's integer arithmetic against the C
 * core's: aurp_div_s64 (core/hostdev.h), which the device computes from a
 * float estimate and its remainder, and the host by C's division.  The
 * identity tests meet it only at the quotients BG's row pass reaches on
 * the test frames; this compares every sign, quotients from 0 to 2^62,
 * divisors from 1 to 2^61, and the values next to exact multiples.  Built
 * by nvcc; ends "N passed, N failed" like the other GPU tests. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "hostdev.h"
#include "gpu_check.h"

#define CASES (1 << 20)

__global__ void div_kernel(const int64_t *num, const int64_t *den, int64_t *q, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) q[i] = aurp_div_s64(num[i], den[i]);
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
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

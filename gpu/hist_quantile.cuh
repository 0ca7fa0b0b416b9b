/* The first bin of a 65536-bin histogram whose running count passes a
 * bound, for one block of HIST_QUANTILE_THREADS threads: the intensity
 * offset (choose_ioff) and the cascade's median |e1| (lsx_cas_clip) are
 * both this search. */
#ifndef AURP_HIST_QUANTILE_CUH
#define AURP_HIST_QUANTILE_CUH

#include <stdint.h>

#include "warp_sum.cuh"

#define HIST_QUANTILE_THREADS 1024

/* The smallest v < 65535 whose cumulative count hist[0] + ... + hist[v]
 * exceeds `want`, else 65535; every thread of the block gets it.  Warp w
 * owns bins [2048 w, 2048 (w + 1)), read 32 consecutive bins at a time
 * (a thread's 64 consecutive bins, read strided across the warp, cost the
 * cascade's trial 47 us under ncu); the warps' totals give each its count
 * before its bins, and the one warp whose bins pass `want` walks them
 * again, 32 at a time, by a warp scan. */
static __device__ uint32_t hist_quantile(const uint32_t *__restrict__ hist, uint64_t want)
{
    static_assert(HIST_QUANTILE_THREADS == 1024, "32 warps of 2048 bins");
    __shared__ uint64_t total[32];
    __shared__ uint32_t found;
    const int warp = (int)(threadIdx.x / 32), lane = (int)(threadIdx.x % 32);
    const uint32_t base = (uint32_t)warp * 2048;
    if (threadIdx.x == 0) found = 65535;
    uint64_t sum = 0;
#pragma unroll 16
    for (int i = 0; i < 64; i++) sum += hist[base + 32 * i + lane];
    sum = warp_sum(sum);
    if (lane == 0) total[warp] = sum;
    __syncthreads();
    const uint64_t before = warp_sum(lane < warp ? total[lane] : 0);
    if (before <= want && want < before + total[warp]) { /* the first bin past want is here */
        uint64_t acc = before;
        for (int i = 0; i < 64; i++) {
            const uint32_t v = base + 32 * (uint32_t)i + (uint32_t)lane;
            uint64_t incl = hist[v]; /* inclusive scan over the warp's 32 bins */
            for (int o = 1; o < 32; o <<= 1) {
                const uint64_t t = __shfl_up_sync(0xffffffffu, incl, o);
                if (lane >= o) incl += t;
            }
            const unsigned past = __ballot_sync(0xffffffffu, acc + incl > want && v < 65535);
            if (past) {
                if (lane == __ffs(past) - 1) found = v;
                break;
            }
            acc += __shfl_sync(0xffffffffu, incl, 31);
        }
    }
    __syncthreads();
    return found;
}

#endif

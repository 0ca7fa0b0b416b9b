/* The first bin of a 65536-bin histogram whose running count passes a
 * bound, for one block of HIST_QUANTILE_THREADS threads: the intensity
 * offset (choose_ioff) and the cascade's median |e1| (lsx_cas_clip) are
 * both this search. */
#ifndef AURP_HIST_QUANTILE_CUH
#define AURP_HIST_QUANTILE_CUH

#include <cub/block/block_scan.cuh>
#include <stdint.h>

#define HIST_QUANTILE_THREADS 1024

/* The smallest v < 65535 whose cumulative count hist[0] + ... + hist[v]
 * exceeds `want`, else 65535; every thread of the block gets it.  Each
 * thread sums 64 bins, a block scan gives it the count before them, and
 * it walks its bins again. */
static __device__ uint32_t hist_quantile(const uint32_t *__restrict__ hist, uint64_t want)
{
    typedef cub::BlockScan<uint64_t, HIST_QUANTILE_THREADS> Scan;
    __shared__ typename Scan::TempStorage tmp;
    __shared__ uint32_t found;
    if (threadIdx.x == 0) found = 65535;
    uint64_t sum = 0;
    for (int i = 0; i < 64; i++) sum += hist[threadIdx.x * 64 + i];
    uint64_t before;
    Scan(tmp).ExclusiveSum(sum, before);
    __syncthreads();
    uint64_t acc = before;
    for (int i = 0; i < 64; i++) {
        const uint32_t v = threadIdx.x * 64 + i;
        if (v >= 65535) break;
        acc += hist[v];
        if (acc > want) {
            atomicMin(&found, v);
            break;
        }
    }
    __syncthreads();
    return found;
}

#endif

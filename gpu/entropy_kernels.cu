/* Residual coding on the GPU (docs/FORMAT.md 2.2-2.5): the residual
 * histogram, the rANS coding of independent segments (one thread each), and
 * the compaction of segments and escapes into the body of the stream. */
#include "gpu_kernels.h"

#include <cub/block/block_scan.cuh>

/* Most residuals are small: count those in a shared-memory histogram and
 * send only the rare large ones straight to global memory. */
#define HIST_NEAR 2048

__global__ void histogram_kernel(const int32_t *__restrict__ e, size_t n, uint32_t *__restrict__ hist)
{
    __shared__ uint32_t near[2 * HIST_NEAR];
    for (int i = threadIdx.x; i < 2 * HIST_NEAR; i += blockDim.x) near[i] = 0;
    __syncthreads();
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        int32_t v = e[i];
        if (v >= -HIST_NEAR && v < HIST_NEAR)
            atomicAdd(&near[v + HIST_NEAR], 1u);
        else
            atomicAdd(&hist[v + 65535], 1u);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 2 * HIST_NEAR; i += blockDim.x)
        if (near[i]) atomicAdd(&hist[i - HIST_NEAR + 65535], near[i]);
}

cudaError_t gpu_histogram(const int32_t *e, size_t count, uint32_t *hist, cudaStream_t st)
{
    if (count == 0) return cudaSuccess;
    size_t blocks = (count + 4095) / 4096;
    if (blocks > 1024) blocks = 1024;
    histogram_kernel<<<(unsigned)blocks, 512, 0, st>>>(e, count, hist);
    return cudaGetLastError();
}

/* One thread per segment: symbols in reverse order, bytes back to front
 * into the end of the segment's slot (FORMAT.md 2.5). */
__global__ void rans_kernel(gpu_code_args a)
{
    uint32_t s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= a.nseg) return;
    uint64_t first = (uint64_t)s << a.seg_log2;
    uint64_t last = first + ((uint64_t)1 << a.seg_log2);
    if (last > a.count) last = a.count;
    uint8_t *end = a.scratch + (size_t)(s + 1) * a.slot;
    uint8_t *p = end;
    const uint32_t L = 1u << 23;
    const uint32_t xmax_unit = (L >> a.prob_bits) << 8;
    uint32_t x = L, esc = 0;
    for (uint64_t i = last; i-- > first;) {
        int32_t v = a.e[i];
        uint32_t sym;
        if (v >= a.t_lo && v <= a.t_hi) {
            sym = (uint32_t)(v - a.t_lo);
        } else {
            sym = a.esc_sym;
            esc++;
        }
        uint32_t f = a.freq[sym], c = a.cum[sym];
        uint32_t xmax = xmax_unit * f;
        while (x >= xmax) {
            *--p = (uint8_t)(x & 0xff);
            x >>= 8;
        }
        x = ((x / f) << a.prob_bits) + (x % f) + c;
    }
    p -= 4;
    p[0] = (uint8_t)x, p[1] = (uint8_t)(x >> 8), p[2] = (uint8_t)(x >> 16), p[3] = (uint8_t)(x >> 24);
    a.seg_len[s] = (uint32_t)(end - p);
    a.seg_esc[s] = esc;
}

#define SCAN_THREADS 1024
#define SCAN_ITEMS 4 /* nseg <= 4096: a 4096 x 4096 frame in 4096-symbol segments */

__global__ void __launch_bounds__(SCAN_THREADS) scan_kernel(gpu_code_args a)
{
    typedef cub::BlockScan<uint64_t, SCAN_THREADS> Scan;
    __shared__ typename Scan::TempStorage tmp;
    uint64_t len[SCAN_ITEMS], esc[SCAN_ITEMS];
    for (int i = 0; i < SCAN_ITEMS; i++) {
        uint32_t s = threadIdx.x * SCAN_ITEMS + i;
        len[i] = s < a.nseg ? a.seg_len[s] : 0;
        esc[i] = s < a.nseg ? a.seg_esc[s] : 0;
    }
    uint64_t tot_len, tot_esc;
    Scan(tmp).ExclusiveSum(len, len, tot_len);
    __syncthreads();
    Scan(tmp).ExclusiveSum(esc, esc, tot_esc);
    for (int i = 0; i < SCAN_ITEMS; i++) {
        uint32_t s = threadIdx.x * SCAN_ITEMS + i;
        if (s < a.nseg) {
            a.seg_off[s] = (uint32_t)len[i];
            a.esc_off[s] = (uint32_t)esc[i];
        }
    }
    if (threadIdx.x == 0) {
        a.totals[0] = tot_len;
        a.totals[1] = tot_esc;
    }
}

#define GATHER_THREADS 256

/* One block per segment: its length word, its bytes, and its escapes in
 * raster order (a block-wide scan keeps their order). */
__global__ void __launch_bounds__(GATHER_THREADS) gather_kernel(gpu_code_args a)
{
    typedef cub::BlockScan<uint32_t, GATHER_THREADS> Scan;
    __shared__ typename Scan::TempStorage tmp;
    uint32_t s = blockIdx.x;
    uint32_t len = a.seg_len[s];
    uint8_t *seg_base = a.body + 4 * (size_t)a.nseg;
    if (threadIdx.x == 0) ((uint32_t *)a.body)[s] = len;
    const uint8_t *src = a.scratch + (size_t)(s + 1) * a.slot - len;
    uint8_t *dst = seg_base + a.seg_off[s];
    for (uint32_t i = threadIdx.x; i < len; i += GATHER_THREADS) dst[i] = src[i];

    uint8_t *esc_out = seg_base + a.totals[0] + 2 * (size_t)a.esc_off[s];
    uint64_t first = (uint64_t)s << a.seg_log2;
    uint64_t last = first + ((uint64_t)1 << a.seg_log2);
    if (last > a.count) last = a.count;
    uint32_t written = 0;
    for (uint64_t base = first; base < last; base += GATHER_THREADS) {
        uint64_t i = base + threadIdx.x;
        uint32_t flag = 0;
        if (i < last) {
            int32_t v = a.e[i];
            flag = (v < a.t_lo || v > a.t_hi) ? 1u : 0u;
        }
        uint32_t pos, round_total;
        Scan(tmp).ExclusiveSum(flag, pos, round_total);
        __syncthreads();
        if (flag) {
            uint16_t u = a.x[i];
            uint8_t *o = esc_out + 2 * (size_t)(written + pos);
            o[0] = (uint8_t)u;
            o[1] = (uint8_t)(u >> 8);
        }
        written += round_total;
    }
}

cudaError_t gpu_code_segments(const gpu_code_args *a, cudaStream_t st)
{
    if (a->nseg == 0 || a->nseg > SCAN_THREADS * SCAN_ITEMS) return cudaErrorInvalidValue;
    rans_kernel<<<(a->nseg + 63) / 64, 64, 0, st>>>(*a);
    cudaError_t r = cudaGetLastError();
    if (r != cudaSuccess) return r;
    scan_kernel<<<1, SCAN_THREADS, 0, st>>>(*a);
    r = cudaGetLastError();
    if (r != cudaSuccess) return r;
    gather_kernel<<<a->nseg, GATHER_THREADS, 0, st>>>(*a);
    return cudaGetLastError();
}

/* Residual coding on the GPU (docs/FORMAT.md 2.2-2.5): the residual
 * histogram, the rANS coding of independent segments (one thread each), and
 * the compaction of segments and escapes into the body of the stream. */
#include "gpu_kernels.h"

#include <cub/block/block_scan.cuh>

#include "rans_entry.cuh"

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
            atomicAdd(&hist[v + AURP_RESIDUAL_MAX], 1u);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 2 * HIST_NEAR; i += blockDim.x)
        if (near[i]) atomicAdd(&hist[i - HIST_NEAR + AURP_RESIDUAL_MAX], near[i]);
}

cudaError_t gpu_histogram(const int32_t *e, size_t count, uint32_t *hist, cudaStream_t st)
{
    if (count == 0) return cudaSuccess;
    size_t blocks = (count + 4095) / 4096;
    if (blocks > 1024) blocks = 1024;
    histogram_kernel<<<(unsigned)blocks, 512, 0, st>>>(e, count, hist);
    return cudaGetLastError();
}

/* T-/T+ on the device (FORMAT.md 2.2), so that the host copies and scans
 * only the coded range instead of 131071 bins: one block finds the first
 * and last bin with count >= T', then copies up to AURP_GPU_SLICE_CAP bins
 * of [T-, T+] (as uint64, the core's histogram type) behind a 2-word header
 * {first bin, last bin}; first > last when no bin qualifies. */
#define RANGE_THREADS 1024

__global__ void __launch_bounds__(RANGE_THREADS)
    hist_range_kernel(const uint32_t *__restrict__ hist, uint32_t tq, uint64_t *__restrict__ out)
{
    __shared__ int lo_s, hi_s;
    if (threadIdx.x == 0) lo_s = AURP_GPU_HIST_BINS, hi_s = -1;
    __syncthreads();
    int lo = AURP_GPU_HIST_BINS, hi = -1;
    for (int i = threadIdx.x; i < AURP_GPU_HIST_BINS; i += RANGE_THREADS)
        if (hist[i] >= tq) {
            lo = min(lo, i);
            hi = max(hi, i);
        }
    for (int o = 16; o > 0; o >>= 1) {
        lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, o));
        hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, o));
    }
    if ((threadIdx.x & 31) == 0) {
        atomicMin(&lo_s, lo);
        atomicMax(&hi_s, hi);
    }
    __syncthreads();
    lo = lo_s, hi = hi_s;
    if (threadIdx.x == 0) out[0] = (uint64_t)lo, out[1] = (uint64_t)(int64_t)hi;
    int n = hi - lo + 1;
    if (n > AURP_GPU_SLICE_CAP) n = AURP_GPU_SLICE_CAP;
    for (int i = threadIdx.x; i < n; i += RANGE_THREADS) out[2 + i] = hist[lo + i];
}

cudaError_t gpu_hist_range(const uint32_t *hist, uint32_t tq, uint64_t *out, cudaStream_t st)
{
    hist_range_kernel<<<1, RANGE_THREADS, 0, st>>>(hist, tq, out);
    return cudaGetLastError();
}

/* The coder entry of every symbol (rans_entry.cuh). */
__global__ void rans_table_kernel(const uint32_t *__restrict__ freq, const uint32_t *__restrict__ cum,
                                  uint32_t nsym, int prob_bits, uint4 *__restrict__ tab)
{
    uint32_t s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= nsym) return;
    tab[s] = aurp_rans_entry(freq[s], cum[s], prob_bits, aurp_rans_rcp_computed());
}

/* One block per segment.  The serial rANS chain (one state per segment, the
 * format's choice) runs in one thread, so everything it touches is made
 * ready in shared memory first: the block reads the segment's residuals
 * coalesced, maps them to symbols and gathers each symbol's table entry
 * (tab[i], 16 bytes) in parallel; then thread 0 walks the symbols backwards,
 * writing bytes back to front into a shared buffer, with no global load on
 * the dependency chain; then the block copies the bytes to the end of the
 * segment's slot in scratch. */
#define RANS_THREADS 256

__global__ void __launch_bounds__(RANS_THREADS) rans_kernel(gpu_code_args a)
{
    extern __shared__ uint4 tab[]; /* [2^seg_log2] entries, then the byte buffer */
    const uint32_t s = blockIdx.x;
    const uint64_t first = (uint64_t)s << a.seg_log2;
    uint64_t last = first + ((uint64_t)1 << a.seg_log2);
    if (last > a.count) last = a.count;
    const uint32_t n = (uint32_t)(last - first);
    uint8_t *buf = (uint8_t *)(tab + ((size_t)1 << a.seg_log2));
    __shared__ uint32_t len_s;

    uint32_t esc = 0;
    for (uint32_t base = 0; base < n; base += RANS_THREADS) {
        uint32_t i = base + threadIdx.x;
        int out = 0;
        if (i < n) {
            int32_t v = a.e[first + i];
            out = v < a.t_lo || v > a.t_hi;
            tab[i] = a.sym_tab[out ? a.esc_sym : (uint32_t)(v - a.t_lo)];
        }
        esc += (uint32_t)__syncthreads_count(out); /* also the barrier before the chain */
    }

    if (threadIdx.x == 0) {
        uint8_t *const end = buf + a.slot;
        uint8_t *p = end;
        uint32_t x = 1u << 23;
        uint4 t = tab[n - 1];
        for (uint32_t i = n; i-- > 0;) {
            const uint4 nt = tab[i ? i - 1 : 0]; /* next entry, off the chain */
            /* renormalise: x < 2^31 and xmax >= 2^11, so at most 3 bytes;
             * c3 => c2 => c1, so the bytes are the low ones in order */
            const uint32_t c1 = x >= t.y, c2 = (x >> 8) >= t.y, c3 = (x >> 16) >= t.y;
            if (c1) p[-1] = (uint8_t)x;
            if (c2) p[-2] = (uint8_t)(x >> 8);
            if (c3) p[-3] = (uint8_t)(x >> 16);
            const uint32_t nb = c1 + c2 + c3;
            p -= nb;
            x >>= 8 * nb;
            const uint32_t q = __umulhi(x, t.x) >> (t.w >> 24);
            x = x + t.z + q * (t.w & 0xffffffu);
            t = nt;
        }
        p -= 4;
        p[0] = (uint8_t)x, p[1] = (uint8_t)(x >> 8), p[2] = (uint8_t)(x >> 16), p[3] = (uint8_t)(x >> 24);
        len_s = (uint32_t)(end - p);
        a.seg_len[s] = len_s;
        a.seg_esc[s] = esc;
    }
    __syncthreads();
    const uint32_t len = len_s;
    const uint8_t *src = buf + a.slot - len;
    uint8_t *dst = a.scratch + (size_t)(s + 1) * a.slot - len;
    for (uint32_t i = threadIdx.x; i < len; i += RANS_THREADS) dst[i] = src[i];
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

cudaError_t gpu_code_segments(const gpu_code_args *a, const uint32_t *freq, const uint32_t *cum,
                              uint32_t nsym, uint4 *sym_tab, cudaStream_t st)
{
    if (a->nseg == 0 || a->nseg > SCAN_THREADS * SCAN_ITEMS || a->sym_tab != sym_tab) return cudaErrorInvalidValue;
    rans_table_kernel<<<(nsym + 255) / 256, 256, 0, st>>>(freq, cum, nsym, a->prob_bits, sym_tab);
    cudaError_t r = cudaGetLastError();
    if (r != cudaSuccess) return r;
    size_t shmem = ((size_t)16 << a->seg_log2) + a->slot;
    /* over the 48 KB default: opt in (cheap, per call so that every device
     * and thread has it) */
    r = cudaFuncSetAttribute(rans_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem);
    if (r != cudaSuccess) return r;
    rans_kernel<<<a->nseg, RANS_THREADS, shmem, st>>>(*a);
    r = cudaGetLastError();
    if (r != cudaSuccess) return r;
    scan_kernel<<<1, SCAN_THREADS, 0, st>>>(*a);
    r = cudaGetLastError();
    if (r != cudaSuccess) return r;
    gather_kernel<<<a->nseg, GATHER_THREADS, 0, st>>>(*a);
    return cudaGetLastError();
}

/* The cascade stage on the device (lsmix_kernels.h: lsx_gpu_cas_sums,
 * lsx_gpu_cas_final): what core/lsmix_cascade.c does before and after its
 * solve, which the GPU encoder runs on the host with the C core's own
 * function.
 *   |e1| histogram  a block's small values in shared memory, the rest and
 *                   the merge by global atomics;
 *   median          one block: a scan of 64 bins a thread (the first bin
 *                   whose running count exceeds half, as lsx_cas_clip);
 *   clip            a thread per pixel (lsx_cas_clipped);
 *   correlations    a block per 8 rows, staged in shared memory, a warp
 *                   per offset, integer atomics: exact, so the order of
 *                   the sums does not matter;
 *   final           a block per 1024 pixels of a row, the residuals its
 *                   sums read staged in shared memory, a thread four
 *                   pixels side by side (lsx_cas_finish's sum without its
 *                   bounds tests). */
#include "lsmix_kernels.h"

#include "hist_quantile.cuh"
#include "lsmix_arith.h"
#include "warp_sum.cuh"

#define CAS_SMALL 1024     /* |e1| below this: a block's shared histogram */
#define CAS_THREADS 256
#define CAS_CORR_THREADS 512
#define CAS_CORR_ROWS 8         /* rows a block of the correlations */
#define CAS_CORR_UP LSX_CAS_ROWS_MAX /* rows above them it stages: the plan's offsets reach so far up */
/* a block's shared memory at most: more than the default 48 kB, so that
 * 2112-column frames still stage their rows (the wide support reaches 6
 * rows up) */
#define CAS_CORR_SMEM (96 * 1024)

__global__ void __launch_bounds__(CAS_THREADS) cas_hist_kernel(const int32_t *__restrict__ e1, uint64_t i0,
                                                               uint64_t px, uint32_t *__restrict__ hist)
{
    __shared__ uint32_t sh[CAS_SMALL];
    for (int b = threadIdx.x; b < CAS_SMALL; b += blockDim.x) sh[b] = 0;
    __syncthreads();
    for (uint64_t i = i0 + (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < px;
         i += (uint64_t)gridDim.x * blockDim.x) {
        const int32_t e = e1[i];
        uint32_t a = (uint32_t)(e < 0 ? -e : e);
        if (a > 65535) a = 65535;
        if (a < CAS_SMALL)
            atomicAdd(&sh[a], 1u);
        else
            atomicAdd(&hist[a], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < CAS_SMALL; b += blockDim.x)
        if (sh[b]) atomicAdd(&hist[b], sh[b]);
}

/* The smallest v < 65535 whose running count exceeds count / 2, else 65535
 * (lsx_cas_clip's median). */
__global__ void __launch_bounds__(HIST_QUANTILE_THREADS) cas_median_kernel(const uint32_t *__restrict__ hist,
                                                                           uint64_t count, uint32_t *__restrict__ md)
{
    const uint32_t v = hist_quantile(hist, count / 2);
    if (threadIdx.x == 0) *md = v;
}

__global__ void cas_clip_kernel(const int32_t *__restrict__ e1, uint64_t px, const uint32_t *__restrict__ md,
                                int16_t *__restrict__ ec)
{
    const int32_t clip = lsx_cas_clip_of_median(*md);
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < px; i += (uint64_t)gridDim.x * blockDim.x)
        ec[i] = lsx_cas_clipped(e1[i], clip);
}

/* R[k] = sum over rows m >= max(dm, 1), columns n with n - dn in the row,
 * of ec[m][n] ec[m - dm][n - dn] (lsx_cas_correlation).  A block takes
 * CAS_CORR_ROWS rows for every offset: it stages them and the CAS_CORR_UP
 * rows above in shared memory (where they fit; else it reads them where
 * they are), a warp takes every offset of its share across the rows, and
 * adds its sum to R[k] (zeroed before) by an integer atomic: exact, so the
 * order of the sums does not matter.  Each pixel is read from global
 * memory once a block, not once an offset. */
__global__ void __launch_bounds__(CAS_CORR_THREADS) cas_corr_kernel(const int16_t *__restrict__ ec, uint32_t W,
                                                                    uint32_t H, const int *__restrict__ odm,
                                                                    const int *__restrict__ odn, int no, int staged,
                                                                    unsigned long long *__restrict__ R)
{
    extern __shared__ int16_t band[]; /* rows top .. end-1 */
    const uint32_t m0 = blockIdx.x * CAS_CORR_ROWS, end = min(m0 + CAS_CORR_ROWS, H);
    const uint32_t top = m0 > CAS_CORR_UP ? m0 - CAS_CORR_UP : 0;
    if (staged) {
        for (size_t i = threadIdx.x; i < (size_t)(end - top) * W; i += CAS_CORR_THREADS) band[i] = ec[top * (size_t)W + i];
        __syncthreads();
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int k = warp; k < no; k += CAS_CORR_THREADS / 32) {
        const int dm = odm[k], dn = odn[k];
        const int64_t n0 = dn > 0 ? dn : 0, n1 = dn < 0 ? (int64_t)W + dn : (int64_t)W;
        long long sum = 0;
        for (uint32_t m = max(m0, dm > 1 ? (uint32_t)dm : 1u); m < end; m++) {
            const uint32_t u = m - (uint32_t)dm;
            const bool in_band = staged && u >= top;
            const int16_t *a = staged ? band + (size_t)(m - top) * W : ec + (size_t)m * W;
            const int16_t *b = in_band ? band + (size_t)(u - top) * W : ec + (size_t)u * W;
            for (int64_t n = n0 + lane; n < n1; n += 32) sum += (int32_t)a[n] * (int32_t)b[n - dn];
        }
        sum = warp_sum(sum);
        if (lane == 0 && sum != 0) atomicAdd(&R[k], (unsigned long long)sum); /* two's complement: exact */
    }
}

/* The same sums where the block's rows fit in shared memory with `pad`
 * zero columns on either side (pad >= every |dn|) and a row of zeros:
 * then every offset reads every column of every row, a product that
 * falls outside the frame is a product with 0, and a warp takes
 * CAS_CORR_GROUP offsets at once, each pixel of row m loaded once for
 * all of them.  A lane's products of one row are added in 32 bits where
 * they cannot overflow (ceil(W / 32) of them, each at most clip^2: the
 * clip is the frame's, from md), then into the 64-bit sums.  (A warp an
 * offset, every product into 64 bits: 0.23 ms a frame.) */
#define CAS_CORR_GROUP 4
/* Blocks of the same rows, each a share of the offsets: the wide support's
 * 1051 offsets over one block an SM left the SMs' warps too few to hide the
 * shared loads' latency */
#define CAS_CORR_SLICES 4

template <typename Acc>
static __device__ __forceinline__ void corr_row(const int16_t *a, const int16_t *const *b, uint32_t W, int lane,
                                                long long *sum)
{
    Acc part[CAS_CORR_GROUP] = {0};
    /* the lane's columns n = lane + 32 q: every load at its row's base plus
     * a constant once unrolled (the column index in each address cost two
     * integer instructions a load) */
    const int16_t *pa = a + lane, *pb[CAS_CORR_GROUP];
#pragma unroll
    for (int j = 0; j < CAS_CORR_GROUP; j++) pb[j] = b[j] + lane;
    const int iters = ((int)W - lane + 31) / 32;
#pragma unroll 4
    for (int q = 0; q < iters; q++) {
        const int32_t av = pa[32 * q];
#pragma unroll
        for (int j = 0; j < CAS_CORR_GROUP; j++) part[j] += (Acc)(av * (int32_t)pb[j][32 * q]);
    }
#pragma unroll
    for (int j = 0; j < CAS_CORR_GROUP; j++) sum[j] += (long long)part[j];
}

/* The offsets g .. g + CAS_CORR_GROUP - 1 of a warp's group; past the
 * last one, an offset that never reaches a valid row. */
static __device__ __forceinline__ void offset_group(const int *__restrict__ odm, const int *__restrict__ odn, int no,
                                                   int g, uint32_t H, int *dm, int *dn)
{
#pragma unroll
    for (int j = 0; j < CAS_CORR_GROUP; j++) {
        const bool have = g + j < no;
        dm[j] = have ? odm[g + j] : (int)H;
        dn[j] = have ? odn[g + j] : 0;
    }
}

/* The warp's sums of its group added to R (integer atomics: exact, in any
 * order). */
static __device__ __forceinline__ void add_group_sums(const long long *sum, int g, int no, int lane,
                                                      unsigned long long *__restrict__ R)
{
#pragma unroll
    for (int j = 0; j < CAS_CORR_GROUP; j++) {
        const long long v = warp_sum(sum[j]);
        if (lane == 0 && v != 0 && g + j < no) atomicAdd(&R[g + j], (unsigned long long)v);
    }
}

/* The 8-bit layout of a block's rows (stage_rows8): pad8 zero columns
 * either side (a multiple of 4, at least every |dn| + 3), a pitch of a
 * multiple of 4, and four copies of the rows and the row of zeros, copy s
 * shifted by s bytes (its byte i the value at position i + s), each
 * cas_copy8 bytes: so that the 4 columns an offset reads from any column
 * of any row are one aligned 32-bit word of one copy. */
static __host__ __device__ __forceinline__ uint32_t cas_pad8(uint32_t max_dn) { return (max_dn + 3 + 3) / 4 * 4; }
static __host__ __device__ __forceinline__ uint32_t cas_pitch8(uint32_t W, uint32_t pad8) { return (W + 3) / 4 * 4 + 2 * pad8; }
static __host__ __device__ __forceinline__ size_t cas_copy8(uint32_t W, uint32_t pad8)
{
    return (size_t)(CAS_CORR_ROWS + CAS_CORR_UP + 1) * cas_pitch8(W, pad8);
}

/* The 8-bit rows (the launch has room for them: pad8 != 0) where every
 * clipped residual fits in 8 bits (clip <= 127: the clip is twice the
 * median |e1| plus 2, so most frames): a lane then takes 4 columns a step,
 * and each offset's 4 products are one __dp4a, summed exactly in 32 bits
 * (a row's at most 4 x 127^2 x ceil(W / 128)), about a quarter of the
 * 16-bit rows' instructions.  Staging: position p's value goes to byte
 * p - s of copy s; positions past the row of zeros are zeros too, so that
 * every byte of the copies is written. */
static __device__ void stage_rows8(const int16_t *__restrict__ ec, uint32_t W, uint32_t top, uint32_t rows,
                                   uint32_t pad8, uint8_t *band8)
{
    const uint32_t pitch = cas_pitch8(W, pad8);
    const size_t cb = cas_copy8(W, pad8), filled = (size_t)(rows + 1) * pitch;
    for (size_t p = threadIdx.x; p < cb + 3; p += CAS_CORR_THREADS) {
        int8_t v = 0;
        if (p < filled) {
            const uint32_t r = (uint32_t)(p / pitch), c = (uint32_t)(p - (size_t)r * pitch);
            if (r < rows && c >= pad8 && c < pad8 + W) v = (int8_t)ec[(size_t)(top + r) * W + (c - pad8)];
        }
#pragma unroll
        for (uint32_t sh = 0; sh < 4; sh++)
            if (p >= sh && p - sh < cb) band8[sh * cb + (p - sh)] = (uint8_t)v;
    }
}

/* Row r (of the block's band) of the 8-bit rows against the rows r - dm
 * (rb[j]: that row, or the row of zeros), into the group's sums. */
static __device__ __forceinline__ void corr_row8(const uint8_t *band8, uint32_t W, uint32_t pad8, uint32_t r,
                                                 const uint32_t *rb, const int *dn, int lane, long long *sum)
{
    const uint32_t pitch = cas_pitch8(W, pad8);
    const size_t cb = cas_copy8(W, pad8);
    const int *a = (const int *)(band8 + (size_t)r * pitch + pad8) + lane;
    const int *b[CAS_CORR_GROUP];
#pragma unroll
    for (int j = 0; j < CAS_CORR_GROUP; j++) { /* the aligned word of the copy shifted by p mod 4 */
        const size_t p = (size_t)rb[j] * pitch + pad8 - (int64_t)dn[j];
        const uint32_t sh = (uint32_t)(p & 3);
        b[j] = (const int *)(band8 + sh * cb + (p - sh)) + lane;
    }
    const int iters = ((int)((W + 3) / 4) - lane + 31) / 32;
    int part[CAS_CORR_GROUP] = {0};
#pragma unroll 4
    for (int q = 0; q < iters; q++) {
        const int av = a[32 * q];
#pragma unroll
        for (int j = 0; j < CAS_CORR_GROUP; j++) part[j] = __dp4a(av, b[j][32 * q], part[j]);
    }
#pragma unroll
    for (int j = 0; j < CAS_CORR_GROUP; j++) sum[j] += (long long)part[j];
}

__global__ void __launch_bounds__(CAS_CORR_THREADS) cas_corr_padded_kernel(const int16_t *__restrict__ ec, uint32_t W,
                                                                           uint32_t H, const int *__restrict__ odm,
                                                                           const int *__restrict__ odn, int no,
                                                                           uint32_t pad, uint32_t pad8,
                                                                           const uint32_t *__restrict__ md,
                                                                           unsigned long long *__restrict__ R)
{
    /* 16-bit rows: top .. end-1, pitch W + 2 pad, then a row of zeros; or
     * the 8-bit rows (stage_rows8) */
    extern __shared__ int16_t band[];
    const uint32_t m0 = blockIdx.x * CAS_CORR_ROWS, end = min(m0 + CAS_CORR_ROWS, H);
    const uint32_t top = m0 > CAS_CORR_UP ? m0 - CAS_CORR_UP : 0, rows = end - top, pitch = W + 2 * pad;
    const uint32_t clip = (uint32_t)lsx_cas_clip_of_median(*md);
    const bool rows8 = pad8 && clip <= 127;
    if (rows8) {
        stage_rows8(ec, W, top, rows, pad8, (uint8_t *)band);
    } else {
        for (uint32_t i = threadIdx.x; i < (rows + 1) * pitch; i += CAS_CORR_THREADS) {
            const uint32_t r = i / pitch, c = i - r * pitch;
            band[i] = r < rows && c >= pad && c < pad + W ? ec[(size_t)(top + r) * W + (c - pad)] : (int16_t)0;
        }
    }
    __syncthreads();
    const bool narrow = (uint64_t)clip * clip * ((W + 31) / 32) < ((uint64_t)1 << 31);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int g = (blockIdx.y * (CAS_CORR_THREADS / 32) + warp) * CAS_CORR_GROUP; g < no;
         g += gridDim.y * (CAS_CORR_THREADS / 32) * CAS_CORR_GROUP) {
        int dm[CAS_CORR_GROUP], dn[CAS_CORR_GROUP];
        offset_group(odm, odn, no, g, H, dm, dn);
        long long sum[CAS_CORR_GROUP] = {0};
        for (uint32_t m = max(m0, 1u); m < end; m++) {
            uint32_t rb[CAS_CORR_GROUP]; /* row m - dm of the band (>= top: dm <= CAS_CORR_UP), or the zeros */
#pragma unroll
            for (int j = 0; j < CAS_CORR_GROUP; j++) rb[j] = (int64_t)m >= dm[j] ? m - (uint32_t)dm[j] - top : rows;
            if (rows8) {
                corr_row8((const uint8_t *)band, W, pad8, m - top, rb, dn, lane, sum);
                continue;
            }
            const int16_t *a = band + (size_t)(m - top) * pitch + pad;
            const int16_t *b[CAS_CORR_GROUP];
#pragma unroll
            for (int j = 0; j < CAS_CORR_GROUP; j++) b[j] = band + (size_t)rb[j] * pitch + pad - dn[j];
            if (narrow)
                corr_row<int32_t>(a, b, W, lane, sum);
            else
                corr_row<long long>(a, b, W, lane, sum);
        }
        add_group_sums(sum, g, no, lane, R);
    }
}

/* Lets kernel fn take the `bytes` of dynamic shared memory a launch needs
 * where they pass the 48 kB every kernel may have: the attribute of the
 * current device, always set to CAS_CORR_SMEM (never the launch's own
 * need, which a handle on another thread launching a wider frame would
 * undercut between its call and its launch). */
static cudaError_t allow_shared(const void *fn, size_t bytes)
{
    return bytes > 48 * 1024 ? cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, CAS_CORR_SMEM)
                             : cudaSuccess;
}

cudaError_t lsx_gpu_cas_sums(const int32_t *e1, uint32_t W, uint32_t H, uint32_t *hist, uint32_t *md, int16_t *ec,
                             const int *dm, const int *dn, int no, int max_dn, int64_t *R, cudaStream_t st)
{
    const uint64_t px = (uint64_t)W * H;
    cudaError_t rc = cudaMemsetAsync(hist, 0, 65536 * sizeof *hist, st);
    if (rc != cudaSuccess) return rc;
    cas_hist_kernel<<<264, CAS_THREADS, 0, st>>>(e1, W, px, hist);
    cas_median_kernel<<<1, HIST_QUANTILE_THREADS, 0, st>>>(hist, px - W, md);
    cas_clip_kernel<<<1024, CAS_THREADS, 0, st>>>(e1, px, md, ec);
    rc = cudaMemsetAsync(R, 0, sizeof *R * (size_t)no, st);
    if (rc != cudaSuccess) return rc;
    const size_t padded = (size_t)(CAS_CORR_ROWS + CAS_CORR_UP + 1) * (W + 2 * (size_t)max_dn) * sizeof *ec;
    if (padded <= CAS_CORR_SMEM) {
        /* room for the 8-bit layout too where it fits (its four copies),
         * which the kernel takes where the frame's clip allows */
        const uint32_t pad8 = cas_pad8((uint32_t)max_dn);
        const size_t bytes8 = 4 * cas_copy8(W, pad8);
        const size_t bytes = bytes8 <= CAS_CORR_SMEM && bytes8 > padded ? bytes8 : padded;
        if ((rc = allow_shared((const void *)cas_corr_padded_kernel, bytes)) != cudaSuccess) return rc;
        const dim3 grid((H + CAS_CORR_ROWS - 1) / CAS_CORR_ROWS, CAS_CORR_SLICES);
        cas_corr_padded_kernel<<<grid, CAS_CORR_THREADS, bytes, st>>>(
            ec, W, H, dm, dn, no, (uint32_t)max_dn, bytes8 <= bytes ? pad8 : 0, md, (unsigned long long *)R);
        return cudaGetLastError();
    }
    const size_t band = (size_t)(CAS_CORR_ROWS + CAS_CORR_UP) * W * sizeof *ec;
    const int staged = band <= CAS_CORR_SMEM;
    if (staged && (rc = allow_shared((const void *)cas_corr_kernel, band)) != cudaSuccess) return rc;
    cas_corr_kernel<<<(H + CAS_CORR_ROWS - 1) / CAS_CORR_ROWS, CAS_CORR_THREADS, staged ? band : 0, st>>>(
        ec, W, H, dm, dn, no, staged, (unsigned long long *)R);
    return cudaGetLastError();
}

/* A block of CAS_FINAL_PIXELS consecutive pixels n0 .. of row m >= 1, a
 * thread CAS_FINAL_PER consecutive ones: the block stages the clipped
 * residuals its sums read in shared memory, zeros outside the frame (the
 * raster window of the LSX_CAS_NR pixels before the first, and each row
 * of the support above from h columns left of n0), and each row's weights
 * reversed, zero-padded to a multiple of 4.  Then a thread's four sums
 * slide along the window: each step loads four weights and the next four
 * residuals (8-byte loads) for 16 products, where a thread a pixel loaded
 * a weight and a residual for each product (the shared loads were the
 * kernel's limit: 82 us a frame under ncu).  The same int32 sums as
 * lsx_cas_finish's: exact (the weights are scaled so that no sum reaches
 * 2^31), so in any order, and the padding's zero weights add nothing.
 * Row 0 takes P = P1. */
#define CAS_FINAL_THREADS 256
#define CAS_FINAL_PER 4
#define CAS_FINAL_PIXELS (CAS_FINAL_THREADS * CAS_FINAL_PER)

/* Row r's (1-based) products padded to a multiple of 4; the offset of its
 * staged residuals, and of its weights, in the block's arrays. */
static __host__ __device__ __forceinline__ int cf_span(int wide, int r) { return (2 * lsx_cas_half(wide, r) + 1 + 3) & ~3; }
static __host__ __device__ __forceinline__ int cf_row_at(int wide, int r)
{
    int at = 0;
    for (int q = 1; q < r; q++) at += CAS_FINAL_PIXELS + cf_span(wide, q);
    return at;
}
static __host__ __device__ __forceinline__ int cf_w_at(int wide, int r)
{
    int at = LSX_CAS_NR;
    for (int q = 1; q < r; q++) at += cf_span(wide, q);
    return at;
}

/* The four int16 in v (an 8-byte load), sign-extended. */
static __device__ __forceinline__ void cf_unpack(uint2 v, int32_t *o)
{
    o[0] = (int32_t)(int16_t)(v.x & 0xffffu);
    o[1] = (int32_t)v.x >> 16;
    o[2] = (int32_t)(int16_t)(v.y & 0xffffu);
    o[3] = (int32_t)v.y >> 16;
}

/* acc[q] += sum over a < span of w[a] e[a + q], q < 4 (w, e 8-byte aligned;
 * e read to e[span + 3]). */
static __device__ __forceinline__ void cf_slide(const int16_t *w, const int16_t *e, int span, int32_t *acc)
{
    int32_t d[8];
    cf_unpack(*(const uint2 *)e, d);
#pragma unroll 4
    for (int a = 0; a < span; a += 4) {
        int32_t ww[4];
        cf_unpack(*(const uint2 *)(w + a), ww);
        cf_unpack(*(const uint2 *)(e + a + 4), d + 4);
#pragma unroll
        for (int da = 0; da < 4; da++)
#pragma unroll
            for (int q = 0; q < 4; q++) acc[q] += ww[da] * d[da + q];
#pragma unroll
        for (int k = 0; k < 4; k++) d[k] = d[k + 4];
    }
}

template <int WIDE>
__global__ void __launch_bounds__(CAS_FINAL_THREADS)
    cas_final_kernel(const uint16_t *__restrict__ x, const int32_t *__restrict__ e1, const int16_t *__restrict__ ec,
                     uint32_t W, uint32_t H, const int16_t *__restrict__ w, const uint16_t *__restrict__ ioff,
                     lsx_gpu_pipe pp)
{
    constexpr int ROWS = WIDE ? LSX_CAS_ROWS_MAX : LSX_CAS_ROWS_NARROW;
    /* the weights, raster then the rows' padded; the rows' staged
     * residuals (bounds: a row pads at most 3) */
    constexpr int NW = LSX_CAS_NR + (WIDE ? LSX_CAS_NUP_MAX : LSX_CAS_NUP_NARROW) + 3 * ROWS;
    constexpr int NUP = ROWS * CAS_FINAL_PIXELS + (WIDE ? LSX_CAS_NUP_MAX : LSX_CAS_NUP_NARROW) + 3 * ROWS;
    constexpr int NRAST = LSX_CAS_NR + CAS_FINAL_PIXELS;
    __shared__ __align__(8) int16_t sw[NW];
    __shared__ __align__(8) int16_t up[NUP];
    __shared__ __align__(8) int16_t rast[NRAST]; /* raster index t0 - NR .. */
    /* the weights reversed, each lag k (lsx_cas_lag: (dm, dn)) to its slot:
     * the raster ones (dm = 0, dn = k + 1) at NR - 1 - k, row dm's at h -
     * dn of its run; then each row's padding zero (slots no lag takes) */
    for (int k = threadIdx.x; k < lsx_cas_nl(WIDE); k += blockDim.x) {
        int dm, dn;
        lsx_cas_lag(WIDE, k, &dm, &dn);
        sw[dm == 0 ? LSX_CAS_NR - 1 - k : cf_w_at(WIDE, dm) + lsx_cas_half(WIDE, dm) - dn] = w[k];
    }
#pragma unroll
    for (int r = 1; r <= ROWS; r++)
        for (int a = 2 * lsx_cas_half(WIDE, r) + 1 + (int)threadIdx.x; a < cf_span(WIDE, r); a += blockDim.x)
            sw[cf_w_at(WIDE, r) + a] = 0;
    const uint16_t off = *ioff;
    const uint32_t per_row = (W + CAS_FINAL_PIXELS - 1) / CAS_FINAL_PIXELS;
    const uint64_t px = (uint64_t)W * H;
    for (uint64_t blk = blockIdx.x; blk < (uint64_t)H * per_row; blk += gridDim.x) {
        const uint32_t m = (uint32_t)(blk / per_row), n0 = (uint32_t)(blk % per_row) * CAS_FINAL_PIXELS;
        const uint64_t t0 = (uint64_t)m * W + n0;
        if (m > 0) {
            __syncthreads(); /* the block before is done with the planes (and the weights are staged) */
#pragma unroll
            for (int r = 1; r <= ROWS; r++) {
                const int h = lsx_cas_half(WIDE, r), len = CAS_FINAL_PIXELS + cf_span(WIDE, r);
                for (int q = threadIdx.x; q < len; q += blockDim.x) {
                    const int64_t col = (int64_t)n0 - h + q;
                    up[cf_row_at(WIDE, r) + q] = (int64_t)m >= r && col >= 0 && col < (int64_t)W
                                                     ? ec[(uint64_t)(m - r) * W + (uint64_t)col]
                                                     : (int16_t)0;
                }
            }
            for (int q = threadIdx.x; q < NRAST; q += blockDim.x) {
                const int64_t t = (int64_t)t0 - LSX_CAS_NR + q;
                rast[q] = t >= 0 && (uint64_t)t < px ? ec[t] : (int16_t)0;
            }
            __syncthreads();
        }
        const uint32_t l0 = threadIdx.x * CAS_FINAL_PER;
        if (n0 + l0 >= W) continue;
        int32_t acc[CAS_FINAL_PER] = {0, 0, 0, 0};
        if (m > 0) {
            cf_slide(sw, rast + l0, LSX_CAS_NR, acc);
#pragma unroll
            for (int r = 1; r <= ROWS; r++)
                cf_slide(sw + cf_w_at(WIDE, r), up + cf_row_at(WIDE, r) + l0, cf_span(WIDE, r), acc);
        }
#pragma unroll
        for (int q = 0; q < CAS_FINAL_PER; q++) {
            if (n0 + l0 + q >= W) break;
            const uint64_t i = t0 + l0 + q;
            int32_t pred = (int32_t)x[i] - e1[i]; /* P1 */
            if (m > 0) pred = lsx_cas_apply(pred, lsx_cas_round(acc[q]));
            pp.res[i] = (int32_t)x[i] - pred;
            pp.itok[i] = (uint8_t)lsx_intensity_token((uint16_t)pred, off);
        }
    }
}

cudaError_t lsx_gpu_cas_final(const uint16_t *x, const int32_t *e1, const int16_t *ec, uint32_t W, uint32_t H,
                              const int16_t *w, int wide, const uint16_t *ioff, const lsx_gpu_pipe *pp,
                              cudaStream_t st)
{
    const uint64_t tiles = (uint64_t)H * ((W + CAS_FINAL_PIXELS - 1) / CAS_FINAL_PIXELS);
    const unsigned grid = (unsigned)(tiles < 4096 ? tiles : 4096);
    if (wide)
        cas_final_kernel<1><<<grid, CAS_FINAL_THREADS, 0, st>>>(x, e1, ec, W, H, w, ioff, *pp);
    else
        cas_final_kernel<0><<<grid, CAS_FINAL_THREADS, 0, st>>>(x, e1, ec, W, H, w, ioff, *pp);
    return cudaGetLastError();
}

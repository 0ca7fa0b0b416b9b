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

#include <limits.h>
#include <stdlib.h>

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
                                                                    const uint32_t *__restrict__ md, int skip8,
                                                                    unsigned long long *__restrict__ R)
{
    extern __shared__ int16_t band[]; /* rows top .. end-1 */
    if (skip8 && lsx_cas_clip_of_median(*md) <= 127) return; /* the tensor cores' sums */
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

/* The correlations on the tensor cores, where every clipped residual fits
 * in 8 bits (clip <= 127: the clip is twice the median |e1| plus 2, so most
 * frames).  For one row offset dm the plan's column offsets are a run of
 * at most 256 lags d = d0 .. d0 + 255 (cas_tc_lags, from the plan on the
 * host), and the sums of row m against row m - dm at those lags are two
 * integer matrix products a 32-column chunk of the row (the mma of
 * m16n8k32, int8 in, exact int32 sums):
 *   A[s][k] = a[n0 + k + s]           s = 0..15 (shifts), k = 0..31
 *   B[k][j] = b[n0 + k - 16 j - D]    j = 0..7, D = d0 or d0 + 128
 *   (A B)[s][j] = sum_k a[n] b[n - d], n = n0 + k + s, d = D + s + 16 j
 * so each tile holds 128 lags.  For a fixed shift s the chunks n0 = -32,
 * 0, 32, ... cover every column n once, and every position outside the
 * frame is a zero of the staged rows: the products are exactly those of
 * lsx_cas_correlation.  About a fortieth of the instructions of four
 * products a __dp4a (research round of the twenty-eighth session,
 * docs/GPU.md).  A block takes CAS_TC_ROWS rows, a warp each; each warp
 * keeps its row's sums of every tile in registers (at most W 127^2 <
 * 2^26 each), the block adds its warps' in shared memory (at most
 * CAS_TC_ROWS W 127^2 < 2^31) and into the dense sums Rd[dm][i] (lag d0
 * + i) by integer atomics: exact in any order; cas_tc_gather_kernel then
 * picks the plan's offsets. */
#define CAS_TC_ROWS 8
#define CAS_TC_THREADS (64 * CAS_TC_ROWS)
#define CAS_TC_LAGS 256
static_assert((CAS_CORR_UP + 1) * CAS_TC_LAGS + 1 == LSX_GPU_CAS_RD, "Rd: the dense sums and the count");
#define CAS_TC_PAD 288 /* zero bytes either side of a staged row: runs with -288 <= d0 <= 16 */

typedef struct {
    int d0[CAS_CORR_UP + 1]; /* row offset dm's run of lags: d0[dm] .. d0[dm] + CAS_TC_LAGS - 1 */
} cas_tc_lags;

static __host__ __device__ __forceinline__ uint32_t cas_tc_pitch(uint32_t W)
{
    return (W + 31) / 32 * 32 + 2 * CAS_TC_PAD;
}

static __host__ __device__ __forceinline__ size_t cas_tc_bytes(uint32_t W)
{
    return (size_t)(CAS_TC_ROWS + CAS_CORR_UP + 1) * cas_tc_pitch(W);
}

/* The 4 bytes at positions p .. p + 3 of a staged row (row: its position
 * 0, 4-byte aligned), from the two aligned words they lie in. */
static __device__ __forceinline__ uint32_t bytes_at(const uint8_t *row, int p)
{
    const uint32_t *w = (const uint32_t *)(row + (p & ~3));
    return __funnelshift_r(w[0], w[1], 8 * (uint32_t)(p & 3));
}

static __device__ __forceinline__ void mma_s8(int *c, const uint32_t *a, uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* Positions p .. p + 3 of staged row r (r < rows: row top + r of ec; else
 * zeros) as 4 bytes, zeros outside the row. */
static __device__ __forceinline__ uint32_t staged_word(const int16_t *__restrict__ ec, uint32_t W, uint32_t top,
                                                       uint32_t rows, uint32_t r, int p)
{
    if (r >= rows || p + 4 <= 0 || p >= (int)W) return 0;
    const int16_t *row = ec + (size_t)(top + r) * W;
    if (W % 4 == 0 && p >= 0 && p + 4 <= (int)W) { /* 8-byte aligned: W, p multiples of 4 */
        const uint2 v = __ldg((const uint2 *)(row + p));
        return __byte_perm(v.x, v.y, 0x6420); /* the low byte of each 16-bit value */
    }
    uint32_t v = 0;
#pragma unroll
    for (int b = 0; b < 4; b++)
        if (p + b >= 0 && p + b < (int)W) v |= (uint32_t)(uint8_t)row[p + b] << (8 * b);
    return v;
}

__global__ void __launch_bounds__(CAS_TC_THREADS) cas_corr_tc_kernel(const int16_t *__restrict__ ec, uint32_t W,
                                                                     uint32_t H, const uint32_t *__restrict__ md,
                                                                     cas_tc_lags lags, const int *__restrict__ odm,
                                                                     const int *__restrict__ odn, int no,
                                                                     unsigned long long *__restrict__ Rd,
                                                                     int64_t *__restrict__ R)
{
    if (lsx_cas_clip_of_median(*md) > 127) return; /* the 16-bit sums' frame */
    extern __shared__ uint32_t band32[]; /* rows top .. end-1, then a row of zeros, int8 */
    __shared__ int sums[CAS_CORR_UP + 1][CAS_TC_LAGS];
    __shared__ int last;
    const uint32_t m0 = blockIdx.x * CAS_TC_ROWS, end = min(m0 + CAS_TC_ROWS, H);
    const uint32_t top = m0 > CAS_CORR_UP ? m0 - CAS_CORR_UP : 0, rows = end - top, pitch = cas_tc_pitch(W);
    const uint32_t words = (rows + 1) * pitch / 4;
    for (uint32_t i = threadIdx.x; i < words; i += CAS_TC_THREADS) {
        const uint32_t r = i / (pitch / 4);
        band32[i] = staged_word(ec, W, top, rows, r, (int)(4 * (i - r * (pitch / 4))) - CAS_TC_PAD);
    }
    for (uint32_t i = threadIdx.x; i < (CAS_CORR_UP + 1) * CAS_TC_LAGS; i += CAS_TC_THREADS) (&sums[0][0])[i] = 0;
    __syncthreads();
    const uint8_t *band = (const uint8_t *)band32;
    /* two warps a row, each one of the two tiles of every row offset */
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3, h = warp & 1;
    const uint32_t m = m0 + (uint32_t)(warp >> 1);
    if (m >= 1 && m < end) {
        int acc[CAS_CORR_UP + 1][4] = {};
        const uint8_t *a_row = band + (size_t)(m - top) * pitch + CAS_TC_PAD;
        const int chunks = (int)((W + 31) / 32) + 1;
        for (int c = 0; c < chunks; c++) {
            const int n0 = 32 * c - 32;
            /* A's fragment: rows s = g and g + 8, columns 4t .. 4t + 3 and 16 more */
            const uint32_t a[4] = {bytes_at(a_row, n0 + g + 4 * t), bytes_at(a_row, n0 + g + 8 + 4 * t),
                                   bytes_at(a_row, n0 + g + 16 + 4 * t), bytes_at(a_row, n0 + g + 24 + 4 * t)};
#pragma unroll
            for (int dm = 0; dm <= CAS_CORR_UP; dm++) {
                if (m < (uint32_t)dm) break;
                /* B's fragment: column j = g, rows k = 4t .. 4t + 3 and 16 more */
                const uint8_t *b_row = band + (size_t)(m - (uint32_t)dm - top) * pitch + CAS_TC_PAD;
                const int q = n0 + 4 * t - 16 * g - lags.d0[dm] - 128 * h;
                mma_s8(acc[dm], a, *(const uint32_t *)(b_row + q), *(const uint32_t *)(b_row + q + 16));
            }
        }
        /* acc[dm][i]: s = g (+ 8 for i >= 2), j = 2t (+ 1 for odd i) */
#pragma unroll
        for (int dm = 0; dm <= CAS_CORR_UP; dm++)
#pragma unroll
            for (int i = 0; i < 4; i++)
                if (acc[dm][i]) atomicAdd(&sums[dm][128 * h + g + 8 * (i >> 1) + 16 * (2 * t + (i & 1))], acc[dm][i]);
    }
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < (CAS_CORR_UP + 1) * CAS_TC_LAGS; i += CAS_TC_THREADS) {
        const int v = (&sums[0][0])[i];
        if (v) atomicAdd(&Rd[i], (unsigned long long)(long long)v); /* two's complement: exact */
    }
    /* the last block to finish picks the plan's offsets from the dense
     * sums (the entry after them counts the finished blocks) */
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(&Rd[(CAS_CORR_UP + 1) * CAS_TC_LAGS], 1ull) == gridDim.x - 1;
    __syncthreads();
    if (!last) return;
    __threadfence();
    for (int k = threadIdx.x; k < no; k += CAS_TC_THREADS)
        R[k] = (int64_t)__ldcg(&Rd[odm[k] * CAS_TC_LAGS + (odn[k] - lags.d0[odm[k]])]);
}

__global__ void __launch_bounds__(CAS_CORR_THREADS) cas_corr_padded_kernel(const int16_t *__restrict__ ec, uint32_t W,
                                                                           uint32_t H, const int *__restrict__ odm,
                                                                           const int *__restrict__ odn, int no,
                                                                           uint32_t pad, const uint32_t *__restrict__ md,
                                                                           int skip8, unsigned long long *__restrict__ R)
{
    /* rows top .. end-1, pitch W + 2 pad, then a row of zeros */
    extern __shared__ int16_t band[];
    const uint32_t clip = (uint32_t)lsx_cas_clip_of_median(*md);
    if (skip8 && clip <= 127) return; /* the tensor cores' sums */
    const uint32_t m0 = blockIdx.x * CAS_CORR_ROWS, end = min(m0 + CAS_CORR_ROWS, H);
    const uint32_t top = m0 > CAS_CORR_UP ? m0 - CAS_CORR_UP : 0, rows = end - top, pitch = W + 2 * pad;
    for (uint32_t i = threadIdx.x; i < (rows + 1) * pitch; i += CAS_CORR_THREADS) {
        const uint32_t r = i / pitch, c = i - r * pitch;
        band[i] = r < rows && c >= pad && c < pad + W ? ec[(size_t)(top + r) * W + (c - pad)] : (int16_t)0;
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
            const int16_t *a = band + (size_t)(m - top) * pitch + pad;
            const int16_t *b[CAS_CORR_GROUP]; /* row m - dm of the band (>= top: dm <= CAS_CORR_UP), or the zeros */
#pragma unroll
            for (int j = 0; j < CAS_CORR_GROUP; j++)
                b[j] = band + (size_t)((int64_t)m >= dm[j] ? m - (uint32_t)dm[j] - top : rows) * pitch + pad - dn[j];
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

/* The run of 256 lags of every row offset of the plan (the smallest dn
 * rounded down to a multiple of 4, so that B's words are aligned); 0
 * where some offset falls outside them or outside the staged rows' zeros,
 * the 16-bit sums' case. */
static int cas_tc_lags_of(const lsx_cas_plan *pl, cas_tc_lags *lags)
{
    int lo[CAS_CORR_UP + 1], hi[CAS_CORR_UP + 1];
    for (int dm = 0; dm <= CAS_CORR_UP; dm++) lo[dm] = INT_MAX, hi[dm] = INT_MIN;
    for (int k = 0; k < pl->no; k++) {
        if (pl->dm[k] < 0 || pl->dm[k] > CAS_CORR_UP) return 0;
        lo[pl->dm[k]] = min(lo[pl->dm[k]], pl->dn[k]);
        hi[pl->dm[k]] = max(hi[pl->dm[k]], pl->dn[k]);
    }
    for (int dm = 0; dm <= CAS_CORR_UP; dm++) {
        if (lo[dm] > hi[dm]) lo[dm] = hi[dm] = 0; /* no offset of this row: any run */
        lags->d0[dm] = lo[dm] >= 0 ? lo[dm] / 4 * 4 : -((-lo[dm] + 3) / 4 * 4);
        /* B's bytes reach 32 + 112 + 128 + d0 left of column 0 and -d0
         * right of the last rounded-up column */
        if (hi[dm] - lags->d0[dm] >= CAS_TC_LAGS || lags->d0[dm] < -CAS_TC_PAD || lags->d0[dm] > CAS_TC_PAD - 272)
            return 0;
    }
    return 1;
}

cudaError_t lsx_gpu_cas_sums(const int32_t *e1, uint32_t W, uint32_t H, uint32_t *hist, uint32_t *md, int16_t *ec,
                             const lsx_cas_plan *pl, const int *dm, const int *dn, int64_t *Rd, int64_t *R,
                             cudaStream_t st)
{
    const uint64_t px = (uint64_t)W * H;
    const int no = pl->no;
    cudaError_t rc = cudaMemsetAsync(hist, 0, 65536 * sizeof *hist, st);
    if (rc != cudaSuccess) return rc;
    cas_hist_kernel<<<264, CAS_THREADS, 0, st>>>(e1, W, px, hist);
    cas_median_kernel<<<1, HIST_QUANTILE_THREADS, 0, st>>>(hist, px - W, md);
    cas_clip_kernel<<<1024, CAS_THREADS, 0, st>>>(e1, px, md, ec);
    rc = cudaMemsetAsync(R, 0, sizeof *R * (size_t)no, st);
    if (rc != cudaSuccess) return rc;
    /* where the frame's clip is at most 127 (known on the device), the
     * tensor cores' sums; else these kernels return at once and the 16-bit
     * sums below run */
    cas_tc_lags lags;
    const int tc = cas_tc_lags_of(pl, &lags) && cas_tc_bytes(W) <= CAS_CORR_SMEM;
    if (tc) {
        rc = cudaMemsetAsync(Rd, 0, sizeof *Rd * LSX_GPU_CAS_RD, st);
        if (rc == cudaSuccess) rc = allow_shared((const void *)cas_corr_tc_kernel, cas_tc_bytes(W));
        if (rc != cudaSuccess) return rc;
        cas_corr_tc_kernel<<<(H + CAS_TC_ROWS - 1) / CAS_TC_ROWS, CAS_TC_THREADS, cas_tc_bytes(W), st>>>(
            ec, W, H, md, lags, dm, dn, no, (unsigned long long *)Rd, R);
    }
    int max_dn = 0;
    for (int k = 0; k < no; k++) max_dn = max(max_dn, abs(pl->dn[k]));
    const size_t padded = (size_t)(CAS_CORR_ROWS + CAS_CORR_UP + 1) * (W + 2 * (size_t)max_dn) * sizeof *ec;
    if (padded <= CAS_CORR_SMEM) {
        if ((rc = allow_shared((const void *)cas_corr_padded_kernel, padded)) != cudaSuccess) return rc;
        const dim3 grid((H + CAS_CORR_ROWS - 1) / CAS_CORR_ROWS, CAS_CORR_SLICES);
        cas_corr_padded_kernel<<<grid, CAS_CORR_THREADS, padded, st>>>(ec, W, H, dm, dn, no, (uint32_t)max_dn, md, tc,
                                                                       (unsigned long long *)R);
        return cudaGetLastError();
    }
    const size_t band = (size_t)(CAS_CORR_ROWS + CAS_CORR_UP) * W * sizeof *ec;
    const int staged = band <= CAS_CORR_SMEM;
    if (staged && (rc = allow_shared((const void *)cas_corr_kernel, band)) != cudaSuccess) return rc;
    cas_corr_kernel<<<(H + CAS_CORR_ROWS - 1) / CAS_CORR_ROWS, CAS_CORR_THREADS, staged ? band : 0, st>>>(
        ec, W, H, dm, dn, no, staged, md, tc, (unsigned long long *)R);
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

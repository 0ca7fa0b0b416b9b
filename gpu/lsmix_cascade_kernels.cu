/* The cascade stage on the device (lsmix_kernels.h: lsx_gpu_cas_sums,
 * lsx_gpu_cas_final): what core/lsmix_cascade.c does before and after its
 * solve, which the GPU encoder runs on the host with the C core's own
 * function.
 *   |e1| histogram  a block's small values in shared memory, the rest and
 *                   the merge by global atomics;
 *   median          one block: a scan of 64 bins a thread (the first bin
 *                   whose running count exceeds half, as lsx_cas_clip);
 *   clip            a thread per pixel (lsx_cas_clipped);
 *   correlations    on the tensor cores: a block per 8 rows, staged in
 *                   shared memory as bytes, two warps a row, integer
 *                   atomics: exact, so the order of the sums does not
 *                   matter;
 *   final           a block per 1024 pixels of a row, the residuals its
 *                   sums read staged in shared memory, a thread four
 *                   pixels side by side (lsx_cas_finish's sum without its
 *                   bounds tests). */
#include "lsmix_kernels.h"

#include <limits.h>

#include "hist_quantile.cuh"
#include "lsmix_arith.h"

#define CAS_SMALL 1024     /* |e1| below this: a block's shared histogram */
#define CAS_THREADS 256
#define CAS_CORR_UP LSX_CAS_ROWS_MAX /* rows above a block's that the correlations stage: the plan's offsets reach so far up */

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

/* The correlations on the tensor cores.  For one row offset dm the plan's
 * column offsets are a run of at most 256 lags d = d0 .. d0 + 255
 * (lsx_gpu_cas_lags, from the plan on the host), and the sums of row m against
 * row m - dm at those lags are two integer matrix products a 32-column
 * chunk of the row (the mma of m16n8k32: 8-bit values in, exact 32-bit
 * sums out):
 *   A[s][k] = a[n0 + k + s]           s = 0..15 (shifts), k = 0..31
 *   B[k][j] = b[n0 + k - 16 j - D]    j = 0..7, D = d0 or d0 + 128
 *   (A B)[s][j] = sum_k a[n] b[n - d], n = n0 + k + s, d = D + s + 16 j
 * so each product (a tile) holds 128 lags.  For a fixed shift s the chunks
 * n0 = -32, 0, 32, ... cover every column n once, and every position
 * outside the frame is a zero of the staged rows: the sums are exactly
 * those of lsx_cas_correlation.
 *
 * Where the clip is at most 127 (twice the median |e1| plus 2: most
 * frames), every value is one signed byte (one plane).  Else (bright
 * frames) a value e is 256 hi + lo, hi = e >> 8 signed and lo = e & 255
 * unsigned (two planes), and a b = 65536 hi_a hi_b + 256 (hi_a lo_b + lo_a
 * hi_b) + lo_a lo_b: four products a tile, three sums.  A warp's sums of
 * its row are below 2^31 (at most W 2^16 each; the middle one 2 W 2^15),
 * the block adds them as 64-bit integers in shared memory and into the
 * dense sums Rd[dm][i] (lag d0 + i) by integer atomics: exact in any
 * order; the last block picks the plan's offsets from them.
 *
 * A block takes CAS_TC_ROWS rows, two warps a row, each one tile of every
 * row offset.  Against a warp's __dp4a of four products over the 16-bit
 * rows, about a tenth of the instructions (docs/GPU.md, twenty-eighth
 * session). */
#define CAS_TC_ROWS 8
#define CAS_TC_THREADS (64 * CAS_TC_ROWS)
#define CAS_TC_LAGS 256
static_assert((CAS_CORR_UP + 1) * CAS_TC_LAGS + 1 == LSX_GPU_CAS_RD, "Rd: the dense sums and the count");
#define CAS_TC_PAD 288 /* zero bytes either side of a staged row: runs with -288 <= d0 <= 16 */
static_assert(sizeof(lsx_gpu_cas_lags) == sizeof(int) * (CAS_CORR_UP + 1), "a run of lags a row offset");

static __host__ __device__ __forceinline__ uint32_t cas_tc_pitch(uint32_t W)
{
    return (W + 31) / 32 * 32 + 2 * CAS_TC_PAD;
}

/* A plane of a block's staged rows: rows top .. end-1, then a row of zeros. */
static __host__ __device__ __forceinline__ size_t cas_tc_plane(uint32_t W)
{
    return (size_t)(CAS_TC_ROWS + CAS_CORR_UP + 1) * cas_tc_pitch(W);
}

/* The shared memory of the widest frame's two planes (4096 columns: 140 kB). */
#define CAS_TC_SMEM (2 * (CAS_TC_ROWS + CAS_CORR_UP + 1) * ((4096 + 2 * CAS_TC_PAD)))

/* The 4 bytes at positions p .. p + 3 of a staged row (row: its position
 * 0, 4-byte aligned), from the two aligned words they lie in. */
static __device__ __forceinline__ uint32_t bytes_at(const uint8_t *row, int p)
{
    const uint32_t *w = (const uint32_t *)(row + (p & ~3));
    return __funnelshift_r(w[0], w[1], 8 * (uint32_t)(p & 3));
}

/* c += a b, a: 16 x 32 and b: 32 x 8 bytes, signed or unsigned each */
#define CAS_MMA(name, ta, tb)                                                                                      \
    static __device__ __forceinline__ void name(int *c, const uint32_t *a, uint32_t b0, uint32_t b1)               \
    {                                                                                                              \
        asm volatile("mma.sync.aligned.m16n8k32.row.col.s32." ta "." tb ".s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "     \
                     "{%8,%9}, {%0,%1,%2,%3};"                                                                     \
                     : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])                                              \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));                              \
    }
CAS_MMA(mma_ss, "s8", "s8")
CAS_MMA(mma_su, "s8", "u8")
CAS_MMA(mma_us, "u8", "s8")
CAS_MMA(mma_uu, "u8", "u8")

/* Positions p .. p + 3 of staged row r (r < rows: row top + r of ec; else
 * zeros) as 4 bytes each, zeros outside the row: the low bytes of the
 * values into *lo and (WIDE) the high bytes into *hi, from one load. */
template <bool WIDE>
static __device__ __forceinline__ void staged_words(const int16_t *__restrict__ ec, uint32_t W, uint32_t top,
                                                    uint32_t rows, uint32_t r, int p, uint32_t *lo, uint32_t *hi)
{
    *lo = *hi = 0;
    if (r >= rows || p + 4 <= 0 || p >= (int)W) return;
    const int16_t *row = ec + (size_t)(top + r) * W;
    if (W % 4 == 0 && p >= 0 && p + 4 <= (int)W) { /* 8-byte aligned: W, p multiples of 4 */
        const uint2 v = __ldg((const uint2 *)(row + p));
        *lo = __byte_perm(v.x, v.y, 0x6420);
        if (WIDE) *hi = __byte_perm(v.x, v.y, 0x7531);
        return;
    }
#pragma unroll
    for (int b = 0; b < 4; b++)
        if (p + b >= 0 && p + b < (int)W) {
            const int16_t e = row[p + b];
            *lo |= (uint32_t)(uint8_t)e << (8 * b);
            if (WIDE) *hi |= (uint32_t)(uint8_t)(e >> 8) << (8 * b);
        }
}

/* One chunk's A fragment of a plane's row: rows s = g and g + 8, columns
 * 4t .. 4t + 3 and 16 more. */
static __device__ __forceinline__ void fragment_a(const uint8_t *a_row, int n0, int g, int t, uint32_t *a)
{
    a[0] = bytes_at(a_row, n0 + g + 4 * t), a[1] = bytes_at(a_row, n0 + g + 8 + 4 * t);
    a[2] = bytes_at(a_row, n0 + g + 16 + 4 * t), a[3] = bytes_at(a_row, n0 + g + 24 + 4 * t);
}

/* WIDE: the two planes (clip > 127); else one.  Each kernel returns at once
 * where the frame's clip is the other's. */
template <bool WIDE>
__global__ void __launch_bounds__(CAS_TC_THREADS) cas_corr_tc_kernel(const int16_t *__restrict__ ec, uint32_t W,
                                                                     uint32_t H, const uint32_t *__restrict__ md,
                                                                     lsx_gpu_cas_lags lags, const int *__restrict__ odm,
                                                                     const int *__restrict__ odn, int no,
                                                                     unsigned long long *__restrict__ Rd,
                                                                     int64_t *__restrict__ R)
{
    if ((lsx_cas_clip_of_median(*md) > 127) != WIDE) return;
    extern __shared__ uint32_t band32[]; /* the low bytes' plane, then (WIDE) the high bytes' */
    __shared__ unsigned long long sums[CAS_CORR_UP + 1][CAS_TC_LAGS];
    __shared__ int last;
    const uint32_t m0 = blockIdx.x * CAS_TC_ROWS, end = min(m0 + CAS_TC_ROWS, H);
    const uint32_t top = m0 > CAS_CORR_UP ? m0 - CAS_CORR_UP : 0, rows = end - top, pitch = cas_tc_pitch(W);
    const uint32_t words = (rows + 1) * pitch / 4, plane = (uint32_t)cas_tc_plane(W);
    for (uint32_t i = threadIdx.x; i < words; i += CAS_TC_THREADS) {
        const uint32_t r = i / (pitch / 4);
        const int p = (int)(4 * (i - r * (pitch / 4))) - CAS_TC_PAD;
        uint32_t lo_word, hi_word;
        staged_words<WIDE>(ec, W, top, rows, r, p, &lo_word, &hi_word);
        band32[i] = lo_word;
        if (WIDE) band32[plane / 4 + i] = hi_word;
    }
    for (uint32_t i = threadIdx.x; i < (CAS_CORR_UP + 1) * CAS_TC_LAGS; i += CAS_TC_THREADS) (&sums[0][0])[i] = 0;
    __syncthreads();
    const uint8_t *lo = (const uint8_t *)band32, *hi = lo + plane;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3, h = warp & 1;
    const uint32_t m = m0 + (uint32_t)(warp >> 1);
    if (m >= 1 && m < end) {
        /* the sums of lo lo (or of the values), the cross products, hi hi */
        enum { LL = 0, CROSS = WIDE ? 1 : 0, HH = WIDE ? 2 : 0 };
        int acc[WIDE ? 3 : 1][CAS_CORR_UP + 1][4] = {};
        const size_t a_at = (size_t)(m - top) * pitch + CAS_TC_PAD;
        const int chunks = (int)((W + 31) / 32) + 1;
        for (int c = 0; c < chunks; c++) {
            const int n0 = 32 * c - 32;
            uint32_t a_lo[4], a_hi[4];
            fragment_a(lo + a_at, n0, g, t, a_lo);
            if (WIDE) fragment_a(hi + a_at, n0, g, t, a_hi);
#pragma unroll
            for (int dm = 0; dm <= CAS_CORR_UP; dm++) {
                if (m < (uint32_t)dm) break;
                /* B's fragment: column j = g, rows k = 4t .. 4t + 3 and 16 more */
                const size_t b_at = (size_t)(m - (uint32_t)dm - top) * pitch + CAS_TC_PAD +
                                    (ptrdiff_t)(n0 + 4 * t - 16 * g - lags.d0[dm] - 128 * h);
                const uint32_t b0 = *(const uint32_t *)(lo + b_at), b1 = *(const uint32_t *)(lo + b_at + 16);
                if (!WIDE) {
                    mma_ss(acc[LL][dm], a_lo, b0, b1);
                } else {
                    const uint32_t c0 = *(const uint32_t *)(hi + b_at), c1 = *(const uint32_t *)(hi + b_at + 16);
                    mma_uu(acc[LL][dm], a_lo, b0, b1);
                    mma_us(acc[CROSS][dm], a_lo, c0, c1);
                    mma_su(acc[CROSS][dm], a_hi, b0, b1);
                    mma_ss(acc[HH][dm], a_hi, c0, c1);
                }
            }
        }
        /* acc[.][dm][i]: s = g (+ 8 for i >= 2), j = 2t (+ 1 for odd i) */
#pragma unroll
        for (int dm = 0; dm <= CAS_CORR_UP; dm++)
#pragma unroll
            for (int i = 0; i < 4; i++) {
                long long v = acc[LL][dm][i];
                if (WIDE) v += 256 * (long long)acc[CROSS][dm][i] + 65536 * (long long)acc[HH][dm][i];
                if (v)
                    atomicAdd(&sums[dm][128 * h + g + 8 * (i >> 1) + 16 * (2 * t + (i & 1))],
                              (unsigned long long)v); /* two's complement: exact */
            }
    }
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < (CAS_CORR_UP + 1) * CAS_TC_LAGS; i += CAS_TC_THREADS) {
        const unsigned long long v = (&sums[0][0])[i];
        if (v) atomicAdd(&Rd[i], v);
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

/* The run of 256 lags of every row offset of the plan: the smallest dn
 * rounded down to a multiple of 4, so that B's words are aligned.  0 where
 * some offset falls outside them or outside the staged rows' zeros (the
 * format's plan never does). */
static int cas_tc_lags_of(const lsx_cas_plan *pl, lsx_gpu_cas_lags *lags)
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

cudaError_t lsx_gpu_cas_setup(const lsx_cas_plan *pl, lsx_gpu_cas_lags *lags)
{
    if (!cas_tc_lags_of(pl, lags)) return cudaErrorInvalidValue;
    /* the attribute: always the widest frame's need, never a launch's,
     * which a handle on another thread launching a wider frame would
     * undercut between its call and its launch; a property of the device's
     * kernel, so once per device */
    cudaError_t rc = cudaFuncSetAttribute((const void *)cas_corr_tc_kernel<false>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize, CAS_TC_SMEM / 2);
    if (rc == cudaSuccess)
        rc = cudaFuncSetAttribute((const void *)cas_corr_tc_kernel<true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  CAS_TC_SMEM);
    return rc;
}

cudaError_t lsx_gpu_cas_sums(const int32_t *e1, uint32_t W, uint32_t H, uint32_t *hist, uint32_t *md, int16_t *ec,
                             const lsx_gpu_cas_lags *lags, int no, const int *dm, const int *dn, int64_t *Rd,
                             int64_t *R, cudaStream_t st)
{
    const uint64_t px = (uint64_t)W * H;
    if (W > 4096) return cudaErrorInvalidValue;
    cudaError_t rc = cudaMemsetAsync(hist, 0, 65536 * sizeof *hist, st);
    if (rc == cudaSuccess) rc = cudaMemsetAsync(Rd, 0, sizeof *Rd * LSX_GPU_CAS_RD, st);
    if (rc != cudaSuccess) return rc;
    cas_hist_kernel<<<264, CAS_THREADS, 0, st>>>(e1, W, px, hist);
    cas_median_kernel<<<1, HIST_QUANTILE_THREADS, 0, st>>>(hist, px - W, md);
    cas_clip_kernel<<<1024, CAS_THREADS, 0, st>>>(e1, px, md, ec);
    /* one plane where the frame's clip (known on the device) is at most
     * 127, else two: the other kernel returns at once */
    const uint32_t blocks = (H + CAS_TC_ROWS - 1) / CAS_TC_ROWS;
    cas_corr_tc_kernel<false><<<blocks, CAS_TC_THREADS, cas_tc_plane(W), st>>>(ec, W, H, md, *lags, dm, dn, no,
                                                                             (unsigned long long *)Rd, R);
    cas_corr_tc_kernel<true><<<blocks, CAS_TC_THREADS, 2 * cas_tc_plane(W), st>>>(ec, W, H, md, *lags, dm, dn, no,
                                                                                (unsigned long long *)Rd, R);
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
            const int32_t p1 = (int32_t)x[i] - e1[i];
            int32_t pred = p1;
            if (m > 0) pred = lsx_cas_apply(pred, lsx_cas_round(acc[q]));
            pp.res[i] = (int32_t)x[i] - pred;
            pp.itok[i] = (uint8_t)lsx_intensity_token((uint16_t)pred, off);
            /* the sign base with the stage's sum (final_pass; 0 in row 0) */
            if (pp.sbase) pp.sbase[i] = (uint8_t)lsx_sign_base(pp.spre[i], m > 0 ? acc[q] : 0, pred, p1);
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

/* The kernels of the lsmix profile's GPU encoder (lsmix_kernels.h).  The
 * arithmetic per pixel is core/lsmix_arith.h, compiled for the device;
 * what is written here is only the order of the work: which thread does
 * which pixel, and the integer recurrences (training sums, column means,
 * token counts) in the same order as the C core. */
#include "lsmix_kernels.h"

#include <cuda_pipeline.h>

#include "hist_quantile.cuh"
#include "imgstream.h"
#include "lsmix_arith.h"
#include "lsmix_prior.h"
#include "rans_entry.cuh"
#include "rcp_in_range.cuh"
#include "warp_sum.cuh"

static unsigned blocks_for(size_t n, unsigned threads)
{
    size_t b = (n + threads - 1) / threads;
    return (unsigned)(b > 65535u * 32u ? 65535u * 32u : b);
}

/* ---- the intensity offset (choose_ioff in core/lsmix_codec.c) ---------- */

/* A block counts up to 65535 pixels in a shared histogram of 16-bit
 * counters, two to a word, and adds the nonzero ones to the global bins. */
#define PXH_THREADS 1024
#define PXH_PER_BLOCK 65535u

__global__ void __launch_bounds__(PXH_THREADS) pixel_hist_kernel(const uint16_t *__restrict__ x, size_t px,
                                                                 uint32_t *__restrict__ hist)
{
    extern __shared__ uint32_t pair[]; /* [32768] */
    for (int i = threadIdx.x; i < 32768; i += PXH_THREADS) pair[i] = 0;
    __syncthreads();
    size_t a = (size_t)blockIdx.x * PXH_PER_BLOCK, b = a + PXH_PER_BLOCK < px ? a + PXH_PER_BLOCK : px;
    for (size_t i = a + threadIdx.x; i < b; i += PXH_THREADS) {
        uint32_t v = x[i];
        atomicAdd(&pair[v >> 1], 1u << (16 * (v & 1)));
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 32768; i += PXH_THREADS) {
        uint32_t w = pair[i];
        if (w & 0xffffu) atomicAdd(&hist[2 * i], w & 0xffffu);
        if (w >> 16) atomicAdd(&hist[2 * i + 1], w >> 16);
    }
}

cudaError_t lsx_gpu_pixel_histogram(const uint16_t *x, size_t px, uint32_t *hist, cudaStream_t st)
{
    cudaError_t rc = cudaFuncSetAttribute(pixel_hist_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 32768 * 4);
    if (rc != cudaSuccess) return rc;
    rc = cudaMemsetAsync(hist, 0, 65536 * sizeof(uint32_t), st);
    if (rc != cudaSuccess) return rc;
    unsigned blocks = (unsigned)((px + PXH_PER_BLOCK - 1) / PXH_PER_BLOCK);
    pixel_hist_kernel<<<blocks, PXH_THREADS, 32768 * 4, st>>>(x, px, hist);
    return cudaGetLastError();
}

/* The smallest v < 65535 whose cumulative count exceeds px / 1000, else
 * 65535. */
__global__ void __launch_bounds__(HIST_QUANTILE_THREADS) ioff_kernel(const uint32_t *__restrict__ hist, uint64_t px,
                                                                     uint16_t *__restrict__ ioff)
{
    const uint32_t v = hist_quantile(hist, px * LSX_IOFF_PERMILLE / 1000);
    if (threadIdx.x == 0) *ioff = (uint16_t)v;
}

cudaError_t lsx_gpu_ioff(const uint32_t *hist, uint64_t px, uint16_t *ioff, cudaStream_t st)
{
    ioff_kernel<<<1, HIST_QUANTILE_THREADS, 0, st>>>(hist, px, ioff);
    return cudaGetLastError();
}

/* ---- serial passes down the columns; the column means (lsx_end_row) ----- */

/* A recurrence down each column of a plane (the column means, set 0's
 * column error levels): a few operations a row, which wait only on the
 * row's value.  One thread a column that loaded its next 32 rows ahead
 * still waited on memory once a batch (the column means: 88 us a frame
 * under ncu, on the LS stage's path, in 8 blocks of 128 columns).  Here a
 * block takes CP_COLS columns: its loader warps bring the next CP_ROWS
 * rows into shared memory, CP_ROWS / CP_LOADERS independent loads a lane,
 * while the lanes of warp 0 run their columns over the chunk before (the
 * mean's step three dependent instructions a row: lsx_floor_shr is the
 * device's arithmetic shift).
 * col.start(i, v) takes row 0's value, col.step(i, v) each next row's (i:
 * the value's index in the plane). */
#define CP_COLS 32
#define CP_ROWS 128
#define CP_LOADERS 8
#define CP_THREADS (32 * (1 + CP_LOADERS))
static_assert(CP_ROWS % CP_LOADERS == 0, "the loaders share a chunk's rows evenly");

template <typename T, typename Column>
__device__ __forceinline__ void column_pass(const T *__restrict__ in, uint32_t W, uint32_t H, Column &col)
{
    __shared__ T chunk[2][CP_ROWS][CP_COLS];
    const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const uint32_t n = blockIdx.x * CP_COLS + lane;
    const uint32_t nch = (H + CP_ROWS - 1) / CP_ROWS;
    auto load = [&](uint32_t ch) { /* by the loader warps */
        T v[CP_ROWS / CP_LOADERS]; /* every load issued before the first store */
#pragma unroll
        for (int j = 0; j < CP_ROWS / CP_LOADERS; j++) {
            const uint32_t m = ch * CP_ROWS + (warp - 1) + (uint32_t)j * CP_LOADERS;
            v[j] = m < H && n < W ? in[(size_t)m * W + n] : (T)0;
        }
#pragma unroll
        for (int j = 0; j < CP_ROWS / CP_LOADERS; j++) chunk[ch & 1][(warp - 1) + j * CP_LOADERS][lane] = v[j];
    };
    if (warp > 0) load(0);
    __syncthreads();
    for (uint32_t ch = 0; ch < nch; ch++) {
        if (warp > 0) {
            if (ch + 1 < nch) load(ch + 1);
        } else if (n < W) {
            const T(*v)[CP_COLS] = chunk[ch & 1];
            const uint32_t rows = H - ch * CP_ROWS < CP_ROWS ? H - ch * CP_ROWS : CP_ROWS;
            size_t i = (size_t)ch * CP_ROWS * W + n;
            uint32_t r = 0;
            if (ch == 0) col.start(i, v[0][lane]), i += W, r = 1;
#pragma unroll 8
            for (; r < rows; r++, i += W) col.step(i, v[r][lane]);
        }
        __syncthreads(); /* the chunk is run before it is loaded again */
    }
}

/* The column means before each row (lsx_end_row): 0 before row 0. */
struct column_means_col {
    int32_t *__restrict__ cma, *__restrict__ cmb;
    int32_t a, b;
    __device__ void start(size_t i, uint16_t v) { cma[i] = 0, cmb[i] = 0, a = b = 16 * (int32_t)v; }
    __device__ void step(size_t i, uint16_t v)
    {
        const int32_t q = 16 * (int32_t)v;
        cma[i] = a, cmb[i] = b;
        a = lsx_mean_step(a, q, LSX_CM_A_SHIFT);
        b = lsx_mean_step(b, q, LSX_CM_B_SHIFT);
    }
};

__global__ void __launch_bounds__(CP_THREADS) column_means_kernel(const uint16_t *__restrict__ x, uint32_t W,
                                                                 uint32_t H, int32_t *__restrict__ cma,
                                                                 int32_t *__restrict__ cmb)
{
    column_means_col col = {cma, cmb, 0, 0};
    column_pass(x, W, H, col);
}

cudaError_t lsx_gpu_column_means(const uint16_t *x, uint32_t W, uint32_t H, int32_t *cma, int32_t *cmb,
                                 cudaStream_t st)
{
    column_means_kernel<<<(W + CP_COLS - 1) / CP_COLS, CP_THREADS, 0, st>>>(x, W, H, cma, cmb);
    return cudaGetLastError();
}

/* ---- LS predictions (lsmix_predict.c: training sums, ridge LDL^T) ------- */

#define LS_TC LSX_GPU_LS_COLUMNS /* columns per block */
#define LS_ROWS_MAX 16   /* rows per chunk: 2 trainings x 16 rows x LS_TC columns, a solve a thread */
#define LS_THREADS (2 * LS_ROWS_MAX * LS_TC)
/* a block's dynamic shared memory: two blocks, with the 1 kB the driver
 * keeps for each, within an SM's 228 kB (2 x 113 kB; one training's
 * chunk of 30 rows with its scratch takes 111.5 kB) */
#define LS_SMEM_BUDGET (LSX_GPU_LS_BLOCKS_PER_SM == 1 ? 210 * 1024 : 112 * 1024)
#define LS_WIN_UNROLLED 9 /* windows of up to M = 9 columns run unrolled */
#define LS_CPG 4          /* columns a training thread slides its window over (inner blocks) */

struct ls_args {
    const uint16_t *x;
    const int32_t *cma, *cmb;
    uint32_t W, H, c0, c1;
    int K, D, Z, NE, R, ridge, rows;
    int nls;           /* trainings (forgetting shifts) sharing the window sums: 1 or 2 */
    int f[2];
    int wt[2];         /* training l weighted (lsx_params.weighted: set 3's forgetting 2^-1) */
    int wany;          /* wt[0] or wt[1]: the weights are staged */
    const uint16_t *rowmin; /* where wany: the least pixel of each row (rowmin_kernel) */
    double *out[2];
    size_t pitch;
    uint32_t col0;
};

/* Regressor j of pixel (i, n), j = D: the target (lsx_regressor); K the
 * lag count (a.K, or a constant where the kernel knows it). */
__device__ __forceinline__ uint32_t regressor(const ls_args &a, int K, uint32_t i, uint32_t n, int j)
{
    const uint16_t *row = a.x + (size_t)i * a.W;
    return lsx_regressor(row, i > 0 ? row - a.W : NULL, a.cma + (size_t)i * a.W, a.cmb + (size_t)i * a.W, a.W,
                         K, n, j);
}

/* The least pixel of each row, a block per row (the weighted training's
 * lo reads row i - 1 over the whole width, beyond any block's window). */
#define RM_THREADS 256
__global__ void __launch_bounds__(RM_THREADS) rowmin_kernel(const uint16_t *__restrict__ x, uint32_t W,
                                                            uint16_t *__restrict__ rowmin)
{
    __shared__ uint32_t wmin[RM_THREADS / 32];
    const uint16_t *row = x + (size_t)blockIdx.x * W;
    uint32_t v = 65535u;
    for (uint32_t n = threadIdx.x; n < W; n += RM_THREADS) v = min(v, (uint32_t)row[n]);
    v = __reduce_min_sync(0xffffffffu, v);
    if ((threadIdx.x & 31) == 0) wmin[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int k = 1; k < RM_THREADS / 32; k++) v = min(v, wmin[k]);
        rowmin[blockIdx.x] = (uint16_t)v;
    }
}

/* aurp_solve_ldl (core/predict.c) on the ridge system of one column's
 * training sums g (k <= DM regressors, Z entries a row of the triangle):
 * the same operations in the same order on the rows that matter (L: its
 * strict lower triangle row by row), with no branch that depends on the
 * data, so that the whole solve is one basic block and the compiler
 * overlaps the rows' chains.  (ncu on the echelle frame's LS kernel, with
 * the solve of the eighteenth session: tests of each row against kk, the
 * pivot's test and the branch of nvcc's IEEE `1.0 / d` each ended a basic
 * block, and ptxas schedules within one; docs/GPU.md, nineteenth
 * session.)  Where pivot j fails, aurp_solve_ldl stops at order kk = j;
 * here every row is factored regardless: the rows from kk on hold garbage
 * that nothing reads, the rows before kk and the forward substitution's
 * first kk values are the same operations on the same values, and the
 * back substitution stops each sum at kk by selecting, not branching.
 * The divisions are rcp_in_range, which is exact for every pivot that
 * passes (d > A_jj 2^-30 with A_jj an integer >= 1, and d <= A_jj < 2^64).
 * One body, two placements of the arrays.  REG (small DM): the loops run
 * to the compile-time bound DM and unroll, so that the arrays live in
 * registers; the rows from k on read zeros (k and Z are constants where
 * the caller's are, and these selects then vanish).  Else the loops run
 * to k and the arrays live in local memory.  Only the outer loops carry
 * the pragma: the inner ones' bounds are constants once those unroll, and
 * on an inner loop with a runtime bound it would forbid the partial
 * unrolling the compiler does there by itself.  Returns kk. */
template <int DM, bool REG>
__device__ __forceinline__ int ldl_solve(int k, int Z, const uint64_t *g, int ridge, double *a)
{
    double L[DM * (DM - 1) / 2 + 1], U[DM], invD[DM], y[DM];
    const int n = REG ? DM : k; /* rows factored */
    int kk = k;
#pragma unroll
    for (int j = 0; j < n; j++) {
        const bool row = j < k; /* a row of the system (REG: the rows past k are padding) */
        for (int i = 0; i < j; i++) {
            double t = row ? (double)g[lsx_tri(i, j, Z)] : 0.0;
            for (int l = 0; l < i; l++) t = t - U[l] * L[i * (i - 1) / 2 + l];
            U[i] = t;
            L[j * (j - 1) / 2 + i] = t * invD[i];
        }
        const double ajj = row ? (double)aurp_ridged(g[lsx_tri(j, j, Z)], ridge) : 1.0;
        double d = ajj;
        for (int l = 0; l < j; l++) d = d - U[l] * L[j * (j - 1) / 2 + l];
        kk = kk == k && row && !(d > ajj * AURP_PIVOT_REL) ? j : kk; /* the first failed pivot */
        invD[j] = rcp_in_range(d);
    }
#pragma unroll
    for (int j = 0; j < n; j++) {
        double t = j < k ? (double)g[lsx_tri(j, k, Z)] : 0.0;
        for (int l = 0; l < j; l++) t = t - L[j * (j - 1) / 2 + l] * y[l];
        y[j] = t;
    }
#pragma unroll
    for (int j = n - 1; j >= 0; j--) {
        double t = y[j] * invD[j];
        for (int l = j + 1; l < n; l++) {
            const double u = t - L[l * (l - 1) / 2 + j] * a[l];
            t = l < kk ? u : t;
        }
        a[j] = t;
    }
    return kk;
}

/* The training of ls_kernel where the window's half width is the constant
 * RC: a thread takes one entry e of LS_CPG adjacent columns c0 .. and
 * slides the window along them (LS_CPG + 2 RC products a row, not LS_CPG
 * (2 RC + 1)), through every row of the chunk; column c's window is staged
 * columns c .. c + 2 RC.  (The blocks at the image's edges, whose windows
 * were staged cut to the image, ran a (column, entry) a thread, 2.25 times
 * the products: their SMs took 1.26 M cycles while the others took 0.79 to
 * 0.86 M (ncu, H100), and the kernel lasts its slowest block.) */
/* WT: the weighted trainings (bit l: training l), whose window sums are
 * those of w z_r z_s, w the equation's weight staged in ws ([rows][NZ]);
 * where both kinds run (pipelines 0-1's unweighted and pipeline 2's
 * weighted training) a second prefix of the weighted products. */
template <int RC, int NLS, int WT>
__device__ __forceinline__ void ls_train_slide(const uint32_t *zs, const uint32_t *ws, int Z, int NE, int nr,
                                               const uint8_t *er, const uint8_t *es, uint64_t *gst, uint64_t *gs,
                                               size_t plane, int f0, int f1)
{
    constexpr int nls = NLS;
    constexpr bool any_w = (WT & ((1 << NLS) - 1)) != 0, any_u = (~WT & ((1 << NLS) - 1)) != 0;
    static_assert(LS_TC % LS_CPG == 0, "whole groups of columns");
    constexpr int NQ = LS_CPG + 2 * RC, NZ = LS_TC + 2 * RC; /* staged columns a thread reads, and a row's */
    static_assert(NQ % 4 == 0 && NZ % 4 == 0 && LS_CPG % 4 == 0, "whole 16-byte words");
    const int zrow = NZ * Z;
    for (int t = threadIdx.x; t < LS_TC / LS_CPG * NE; t += LS_THREADS) {
        const int c0 = t / NE * LS_CPG, e = t % NE;
        const uint32_t *zr = zs + er[e] * NZ + c0, *zsb = zs + es[e] * NZ + c0, *wr = ws + c0;
        uint64_t g[2][LS_CPG];
#pragma unroll
        for (int c = 0; c < LS_CPG; c++) {
            g[0][c] = gst[(c0 + c) * NE + e];
            g[1][c] = nls > 1 ? gst[LS_TC * NE + (c0 + c) * NE + e] : 0;
        }
        uint64_t *out = gs + c0 * NE + e;
        /* two rows at a time: their products are independent, only the
         * forgetting steps chain (two trainings: the LS kernel 595 -> 568
         * us on the echelle frame; one: the same) */
#pragma unroll 2
        for (int ii = 0; ii < nr; ii++, zr += zrow, zsb += zrow, wr += NZ, out += LS_TC * NE) {
            uint32_t vr[NQ], vs[NQ], vw[any_w ? NQ : 1]; /* regressors r and s of staged columns c0 .. c0 + NQ - 1 */
#pragma unroll
            for (int q = 0; q < NQ; q += 4) {
                const uint4 u = *(const uint4 *)(zr + q), w = *(const uint4 *)(zsb + q);
                vr[q] = u.x, vr[q + 1] = u.y, vr[q + 2] = u.z, vr[q + 3] = u.w;
                vs[q] = w.x, vs[q + 1] = w.y, vs[q + 2] = w.z, vs[q + 3] = w.w;
                if constexpr (any_w) {
                    const uint4 k = *(const uint4 *)(wr + q);
                    vw[q] = k.x, vw[q + 1] = k.y, vw[q + 2] = k.z, vw[q + 3] = k.w;
                }
            }
            /* pre[q], prw[q]: the products (weighted) of staged columns c0 .. c0 + q - 1 */
            uint64_t pre[any_u ? NQ + 1 : 1], prw[any_w ? NQ + 1 : 1];
            pre[0] = 0, prw[0] = 0;
#pragma unroll
            for (int q = 0; q < NQ; q++) {
                if constexpr (any_u) pre[q + 1] = pre[q] + (uint64_t)vr[q] * vs[q];
                /* w (lsx_ls_weight, core/lsmix_arith.h; row i - 1's least
                 * pixel as lo, 0 in row 0) times a regressor (< 2^20) still
                 * fits 32 bits, and w z_r z_s is the CPU's integer whichever
                 * factor takes w */
                if constexpr (any_w) prw[q + 1] = prw[q] + (uint64_t)(vr[q] * vw[q]) * vs[q];
            }
#pragma unroll
            for (int c = 0; c < LS_CPG; c++) {
#pragma unroll
                for (int l = 0; l < nls; l++) {
                    const bool wl = (WT >> l) & 1;
                    const uint64_t sum = wl ? prw[any_w ? c + 2 * RC + 1 : 0] - prw[any_w ? c : 0]
                                            : pre[any_u ? c + 2 * RC + 1 : 0] - pre[any_u ? c : 0];
                    g[l][c] = lsx_ls_forget(g[l][c], l ? f1 : f0, sum);
                    out[l * plane + c * NE] = g[l][c];
                }
            }
        }
#pragma unroll
        for (int c = 0; c < LS_CPG; c++) {
            gst[(c0 + c) * NE + e] = g[0][c];
            if (nls > 1) gst[LS_TC * NE + (c0 + c) * NE + e] = g[1][c];
        }
    }
}

/* The default order's staging, in two passes.  First the values its
 * regressors are made of, each loaded once into a scratch of its own:
 * pixel rows i0 - 1 .. i0 + nr at columns lo - K .. lo + nz (a row of PW =
 * nz + K + 1, 16-bit), then the column means A and B of rows i0 .. i0 + nr
 * at columns lo .. lo + nz - 1; 0 outside the image.  Every load of a
 * batch is issued before its first store, and a warp's loads are adjacent
 * words.  (The staging made each of a pixel's 13 regressors from global
 * memory, bounds and all: 16 % of the kernel's stall samples, 42 % of them
 * waiting on those loads; ncu, H100.)  Where the window slides
 * (ls_train_slide), the training leaves the block's last warp idle: that
 * warp stages the next chunk's scratch while the others train, and only
 * the first chunk's is staged by the whole block. */
#define LS_WARPS (LS_THREADS / 32)
#define LS_RAW_ROWS 8       /* rows a warp has in flight when every warp stages: 3 loads a lane each */
#define LS_RAW_ROWS_AHEAD 16 /* rows in flight when the last warp alone stages the next chunk */
static_assert(LS_TC + (LSX_MAX_M - 1) + LSX_DEFAULT_K + 1 <= 32, "a warp's lanes span a staged row");

/* The scratch's layout for a chunk of nr rows: nr + 2 pixel rows of nz +
 * K + 1 halfwords (padded to a whole word), then the means A, then B,
 * `means` words each (the staging's passes, and the host's room for it). */
struct ls_raw_layout {
    int pixel_words, means;
    __host__ __device__ int words() const { return pixel_words + 2 * means; }
};
__host__ __device__ __forceinline__ ls_raw_layout ls_raw_layout_of(int nr, int nz, int K)
{
    return {((nr + 2) * (nz + K + 1) + 1) / 2, (nr + 1) * nz};
}

/* NW warps, this thread's the warp-th of them, stage the scratch of rows
 * i0 .. i0 + nr, ROWS rows a warp in flight */
template <int NW, int ROWS>
__device__ __forceinline__ void ls_stage_raw(const ls_args &a, int K, uint32_t i0, int nr, int64_t lo, int nz,
                                             int warp, uint32_t *raw)
{
    const int PW = nz + K + 1, lane = (int)(threadIdx.x & 31);
    const ls_raw_layout L = ls_raw_layout_of(nr, nz, K);
    uint16_t *px = (uint16_t *)raw;
    uint32_t *ma = raw + L.pixel_words, *mb = ma + L.means;
    const int64_t np = lo - K + lane, nm = lo + lane; /* lane's pixel column, and its means' */
    const bool p_in = lane < PW && np >= 0 && np < (int64_t)a.W, m_in = lane < nz && nm >= 0 && nm < (int64_t)a.W;
    const uint16_t *xc = a.x + (p_in ? np : 0);
    const int32_t *ac = a.cma + (m_in ? nm : 0), *bc = a.cmb + (m_in ? nm : 0);
    /* scratch row r: pixels of image row i0 - 1 + r (r < nr + 2), means of
     * that row at r - 1 (1 <= r <= nr + 1); the row's offset a 32-bit row
     * index times W (i0 - 1 wraps where i0 = 0, and that row is not read) */
    for (int r0 = warp; r0 < nr + 2; r0 += ROWS * NW) {
        uint32_t v[ROWS][3];
#pragma unroll
        for (int b = 0; b < ROWS; b++) {
            const int r = r0 + b * NW;
            const uint32_t i = i0 - 1u + (uint32_t)r;
            const bool rp = r < nr + 2 && (i0 > 0 || r > 0), rm = r >= 1 && r <= nr + 1;
            const size_t off = (size_t)i * a.W;
            v[b][0] = p_in && rp ? xc[off] : 0u;
            v[b][1] = m_in && rm ? (uint32_t)ac[off] : 0u;
            v[b][2] = m_in && rm ? (uint32_t)bc[off] : 0u;
        }
#pragma unroll
        for (int b = 0; b < ROWS; b++) {
            const int r = r0 + b * NW;
            if (r < nr + 2 && lane < PW) px[r * PW + lane] = (uint16_t)v[b][0];
            if (r >= 1 && r <= nr + 1 && lane < nz) ma[(r - 1) * nz + lane] = v[b][1], mb[(r - 1) * nz + lane] = v[b][2];
        }
    }
}

/* Second, the staged regressors of every position (row ii, column lo +
 * q) from the scratch, as lsx_regressor makes them: the lags, the three
 * pixels above, the means, the constant and the target; a position
 * outside the image all 0. */
template <int ZC, int NZC> /* NZC: nz where it is a constant (else 0): t / nz a multiplication */
__device__ __forceinline__ void ls_stage_expand(const ls_args &a, int K, uint32_t i0, int nr, int64_t lo, int nz_,
                                                const uint32_t *raw, uint32_t *zs, uint32_t *ws)
{
    const int nz = NZC ? NZC : nz_;
    static_assert(ZC == LSX_DEFAULT_K + LSX_PREV + LSX_EXTRA + 1, "the default order's regressors");
    const int PW = nz + K + 1;
    const ls_raw_layout L = ls_raw_layout_of(nr, nz, K);
    const int nm = L.means;
    const uint16_t *px = (const uint16_t *)raw;
    const uint32_t *ma = raw + L.pixel_words, *mb = ma + nm;
    for (int t = threadIdx.x; t < nm; t += LS_THREADS) {
        const int ii = t / nz, q = t % nz;
        const int64_t n = lo + q;
        uint32_t v[ZC];
        const uint16_t *cur = px + (ii + 1) * PW + q + K, *prev = cur - PW;
#pragma unroll
        for (int j = 0; j < LSX_DEFAULT_K; j++) v[j] = cur[-1 - j];
#pragma unroll
        for (int j = 0; j < LSX_PREV; j++) v[LSX_DEFAULT_K + j] = prev[j - 1];
        v[LSX_DEFAULT_K + LSX_PREV] = ma[t];
        v[LSX_DEFAULT_K + LSX_PREV + 1] = mb[t];
        v[LSX_DEFAULT_K + LSX_PREV + 2] = LSX_CONST;
        v[ZC - 1] = cur[0];
        const bool in = n >= 0 && n < (int64_t)a.W;
#pragma unroll
        for (int j = 0; j < ZC; j++) zs[(ii * ZC + j) * nz + q] = in ? v[j] : 0u;
        if (a.wany) { /* the equation's weight: its target, and row i - 1's least pixel */
            const uint32_t i = i0 + (uint32_t)ii;
            ws[t] = in ? lsx_ls_weight(cur[0], i > 0 ? a.rowmin[i - 1] : 0) : 0u;
        }
    }
}

/* A block owns LS_TC columns.  For each chunk of rows it adds rows i one
 * by one to the columns' training sums of each forgetting shift (G <- G -
 * round(G / 2^f) + the window sum of z z^T, one window sum for both, the z
 * of the window's columns staged in shared memory), keeping each row's
 * sums; then every (training, row i+1, column) of the chunk is solved and
 * predicted by its own thread.  The staged columns are every window's
 * whole, cb0 - R .. cb0 + LS_TC + R - 1, those outside the image 0.  RC:
 * the window's half width where it is a constant (the default M): every
 * block's threads then slide the window along LS_CPG columns
 * (ls_train_slide); else a thread takes one (column, entry). */
template <int DM, bool UNROLLED, int ZC, int RC, int NLS, int WT> /* NLS: a.nls where a constant (else 0); WT: a.wt
                                                                  * as a mask where RC is (the sliding training) */
__global__ void __launch_bounds__(LS_THREADS, LSX_GPU_LS_BLOCKS_PER_SM) ls_kernel(ls_args a)
{
    extern __shared__ __align__(16) uint64_t sm[];
    /* ZC: the regressor count + 1 where it is a constant (the default
     * order): the window's shared-memory offsets become immediates, which
     * the training loop, short of registers beside the solve, needs, and
     * the regressors' kinds are known where they are staged */
    const int Z = ZC ? ZC : a.Z, NE = ZC ? ZC * (ZC + 1) / 2 : a.NE, nls = NLS ? NLS : a.nls;
    const int K = ZC ? ZC - 1 - LSX_PREV - LSX_EXTRA : a.K;
    uint64_t *gst = sm;                                          /* [nls][LS_TC][NE] running sums */
    uint64_t *gs = gst + (size_t)nls * LS_TC * NE;               /* [nls][rows][LS_TC][NE] per row */
    /* [rows + 1][Z][LS_TC + 2R]: a row's regressor j of every staged column
     * adjacent (whole 16-byte words for the training's loads) */
    uint32_t *zs = (uint32_t *)(gs + (size_t)nls * a.rows * LS_TC * NE);
    /* where a training is weighted, [rows + 1][LS_TC + 2R] the weights of
     * the staged positions (lsx_ls_weight) */
    uint32_t *ws = zs + (size_t)(a.rows + 1) * (LS_TC + 2 * a.R) * Z;
    /* the default order's scratch (ls_stage_raw), then [NE] r and [NE] s */
    uint32_t *raw = ws + (a.wany ? (size_t)(a.rows + 1) * (LS_TC + 2 * a.R) : 0);
    uint8_t *er = (uint8_t *)(raw + (ZC ? ls_raw_layout_of(a.rows, LS_TC + 2 * a.R, K).words() : 0));
    uint8_t *es = er + NE;
    const size_t plane = (size_t)a.rows * LS_TC * NE;

    const uint32_t cb0 = a.c0 + blockIdx.x * LS_TC;
    const int cols = (int)min((uint32_t)LS_TC, a.c1 - cb0);
    const uint32_t R = (uint32_t)a.R;
    /* staged columns lo .. lo + nz - 1, every window's whole; those
     * outside the image staged as 0 (their products add nothing) */
    const int64_t lo = (int64_t)cb0 - R;
    const int nz = LS_TC + 2 * (int)R;
    const bool slide = RC > 0 && (uint32_t)RC == R; /* ls_train_slide, and nz the constant LS_TC + 2 RC */

    /* the sliding training leaves the last warp to stage the next chunk */
    static_assert(ZC == 0 || LS_TC / LS_CPG * (ZC * (ZC + 1) / 2) <= LS_THREADS - 32, "the last warp is free");
    const bool ahead = ZC > 0 && slide;
    const int warp = (int)(threadIdx.x >> 5);

    for (int t = threadIdx.x; t < nls * LS_TC * NE; t += LS_THREADS) gst[t] = 0;
    if (threadIdx.x == 0)
        for (int r = 0, e = 0; r < Z; r++)
            for (int s = r; s < Z; s++, e++) er[e] = (uint8_t)r, es[e] = (uint8_t)s; /* e = lsx_tri(r, s, Z) */
    if (ahead) ls_stage_raw<LS_WARPS, LS_RAW_ROWS>(a, K, 0, (int)min((uint32_t)a.rows, a.H - 1), lo, nz, warp, raw);
    __syncthreads();

    for (uint32_t i0 = 0; i0 + 1 < a.H; i0 += (uint32_t)a.rows) {
        const int nr = (int)min((uint32_t)a.rows, a.H - 1 - i0);
        /* the regressors of rows i0 .. i0 + nr at once (the last for the
         * predictions of the chunk's last row): one wait for global memory
         * per chunk, not per row */
        if constexpr (ZC > 0) {
            if (!ahead) {
                ls_stage_raw<LS_WARPS, LS_RAW_ROWS>(a, K, i0, nr, lo, nz, warp, raw);
                __syncthreads();
            }
            if (slide) ls_stage_expand<ZC, LS_TC + 2 * RC>(a, K, i0, nr, lo, nz, raw, zs, ws);
            else ls_stage_expand<ZC, 0>(a, K, i0, nr, lo, nz, raw, zs, ws);
        } else {
            for (int t = threadIdx.x; t < (nr + 1) * nz; t += LS_THREADS) {
                const int ii = t / nz, q = t % nz;
                const int64_t n = lo + q;
                const uint32_t i = i0 + (uint32_t)ii;
                const bool in = n >= 0 && n < (int64_t)a.W;
                for (int j = 0; j < Z; j++) zs[(ii * Z + j) * nz + q] = in ? regressor(a, K, i, (uint32_t)n, j) : 0u;
                if (a.wany) ws[t] = in ? lsx_ls_weight(a.x[(size_t)i * a.W + n], i > 0 ? a.rowmin[i - 1] : 0) : 0u;
            }
        }
        __syncthreads();
        /* a thread takes its (column, entry) sums through every row of the
         * chunk: the entries are independent recurrences, and the chunk's
         * regressors are all staged, so no barrier between rows */
        const int zrow = nz * Z;
        if (slide) {
            const uint32_t i1 = i0 + (uint32_t)a.rows; /* the next chunk */
            if (!ahead || warp < LS_WARPS - 1)
                ls_train_slide<RC, NLS ? NLS : 1, WT>(zs, ws, Z, NE, nr, er, es, gst, gs, plane, a.f[0], a.f[1]);
            else if (i1 + 1 < a.H)
                ls_stage_raw<1, LS_RAW_ROWS_AHEAD>(a, K, i1, (int)min((uint32_t)a.rows, a.H - 1 - i1), lo, nz, 0,
                                                   raw);
        } else
        for (int t = threadIdx.x; t < cols * NE; t += LS_THREADS) {
            const int c = t / NE, e = t % NE;
            const uint32_t n = cb0 + (uint32_t)c;
            const int q0 = (int)((int64_t)(n > R ? n - R : 0) - lo), len = (int)((int64_t)min(n + R + 1, a.W) - lo) - q0;
            const uint32_t *zr = zs + er[e] * nz + q0, *zsb = zs + es[e] * nz + q0, *wq = ws + q0;
            uint64_t g[2] = {gst[t], nls > 1 ? gst[LS_TC * NE + t] : 0};
            uint64_t *out = gs + t;
#pragma unroll 2
            for (int ii = 0; ii < nr; ii++, zr += zrow, zsb += zrow, wq += nz, out += LS_TC * NE) {
                uint64_t sum = 0, sumw = 0; /* sumw: the weighted products, where a training is weighted */
                if (len <= LS_WIN_UNROLLED) {
#pragma unroll
                    for (int q = 0; q < LS_WIN_UNROLLED; q++)
                        if (q < len) {
                            const uint64_t pr = (uint64_t)zr[q] * zsb[q];
                            sum += pr;
                            if (a.wany) sumw += pr * wq[q];
                        }
                } else {
                    for (int q = 0; q < len; q++) {
                        const uint64_t pr = (uint64_t)zr[q] * zsb[q];
                        sum += pr;
                        if (a.wany) sumw += pr * wq[q];
                    }
                }
#pragma unroll
                for (int l = 0; l < 2; l++) {
                    if (l >= nls) break;
                    const int f = l ? a.f[1] : a.f[0];
                    g[l] = lsx_ls_forget(g[l], f, a.wt[l] ? sumw : sum);
                    out[l * plane] = g[l];
                }
            }
            gst[t] = g[0];
            if (nls > 1) gst[LS_TC * NE + t] = g[1];
        }
        __syncthreads();
        for (int t = threadIdx.x; t < nls * nr * cols; t += LS_THREADS) {
            const int l = t / (nr * cols), ii = t % (nr * cols) / cols, c = t % cols;
            const uint32_t m = i0 + (uint32_t)ii + 1, n = cb0 + (uint32_t)c;
            const uint64_t *g = gs + l * plane + ((size_t)ii * LS_TC + c) * NE;
            double coef[DM];
            const int k = ldl_solve<DM, UNROLLED>(ZC ? ZC - 1 : a.D, Z, g, a.ridge, coef);
            /* pixel (m, n)'s regressors, staged; the sum cut at k by
             * selects (the same additions as stopping there), no branch */
            const uint32_t *zp = zs + (size_t)(ii + 1) * Z * nz + (size_t)(c + (int)R);
            double v = 0.0;
#pragma unroll
            for (int j = 0; j < DM; j++) {
                const uint32_t zj = ZC || j < Z ? zp[j * nz] : 0u;
                const double u = v + coef[j] * (double)zj;
                v = j < k ? u : v;
            }
            a.out[l][(size_t)m * a.pitch + (n - a.col0)] = v;
        }
        __syncthreads();
    }
}

static_assert(LSX_DEFAULT_K + LSX_PREV + LSX_EXTRA == 12, "the default order's kernel is ls_kernel<12, true, 13, R, nls>");

template <int DM, bool UNROLLED, int ZC, int RC = 0, int NLS = 0, int WT = 0>
static cudaError_t launch_ls(const ls_args &a, size_t smem, cudaStream_t st)
{
    cudaError_t rc = cudaFuncSetAttribute(ls_kernel<DM, UNROLLED, ZC, RC, NLS, WT>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (rc == cudaSuccess) /* the whole of the SM's shared memory: room for LSX_GPU_LS_BLOCKS_PER_SM blocks */
        rc = cudaFuncSetAttribute(ls_kernel<DM, UNROLLED, ZC, RC, NLS, WT>,
                                  cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared);
    if (rc != cudaSuccess) return rc;
    unsigned blocks = (a.c1 - a.c0 + LS_TC - 1) / LS_TC;
    ls_kernel<DM, UNROLLED, ZC, RC, NLS, WT><<<blocks, LS_THREADS, smem, st>>>(a);
    return cudaGetLastError();
}

cudaError_t lsx_gpu_ls_predict(const uint16_t *x, const int32_t *cma, const int32_t *cmb, uint32_t W,
                               uint32_t H, uint32_t c0, uint32_t c1, const lsx_params *p, int nls,
                               double *const *p_ls, size_t pitch, uint32_t col0, uint16_t *rowmin,
                               cudaStream_t st)
{
    if (H < 2 || c1 <= c0) return cudaSuccess;
    ls_args a;
    a.x = x, a.cma = cma, a.cmb = cmb, a.W = W, a.H = H, a.c0 = c0, a.c1 = c1;
    a.K = p[0].K, a.D = p[0].K + LSX_PREV + LSX_EXTRA, a.Z = a.D + 1, a.NE = a.Z * (a.Z + 1) / 2;
    a.R = (p[0].M - 1) / 2, a.ridge = p[0].ridge_shift;
    a.nls = nls;
    a.wany = 0;
    for (int l = 0; l < 2; l++) {
        a.f[l] = p[l < nls ? l : 0].forget_shift;
        a.wt[l] = l < nls && p[l].weighted;
        a.wany |= a.wt[l];
        a.out[l] = p_ls[l < nls ? l : 0];
    }
    a.rowmin = rowmin;
    if (a.wany) { /* row i - 1's least pixel for row i's weights (rows to H - 3 are read) */
        rowmin_kernel<<<H - 1, RM_THREADS, 0, st>>>(x, W, rowmin);
        const cudaError_t rc = cudaGetLastError();
        if (rc != cudaSuccess) return rc;
    }
    const size_t zrow = (size_t)(LS_TC + 2 * a.R) * a.Z * 4;
    const size_t per_row = (size_t)nls * LS_TC * a.NE * 8 + zrow;
    /* the running sums, the staged row past the chunk's last, r and s */
    const size_t fixed = (size_t)nls * LS_TC * a.NE * 8 + zrow + 2 * (size_t)a.NE + 16;
    /* the staged weights, a word per staged position of rows + 1 */
    const size_t wrow = a.wany ? (size_t)(LS_TC + 2 * a.R) * 4 : 0;
    /* and the default order's scratch (ls_stage_raw): its kernels are
     * ls_kernel<12, true, 13, ...> */
    const bool default_order = a.D == LSX_DEFAULT_K + LSX_PREV + LSX_EXTRA;
    const auto smem_of = [&](size_t rows) {
        return fixed + (per_row + wrow) * rows + wrow +
               (default_order ? (size_t)ls_raw_layout_of((int)rows, LS_TC + 2 * a.R, a.K).words() * 4 : 0);
    };
    size_t rows = LS_THREADS / (LS_TC * (size_t)nls); /* rows whose solves fill the block once */
    while (rows > 1 && smem_of(rows) > LS_SMEM_BUDGET) rows--;
    if (smem_of(rows) > LS_SMEM_BUDGET) return cudaErrorInvalidValue;
    a.rows = (int)rows;
    a.pitch = pitch, a.col0 = col0;
    const size_t smem = smem_of(rows);
    /* the default order and M with the trainings' count a constant too:
     * the training's loop then has no test of it a column and a row */
    constexpr int RD = (LSX_DEFAULT_M - 1) / 2;
    if (default_order && a.R == RD) {
        const int wt = a.wt[0] | a.wt[1] << 1;
        if (nls == 1)
            return wt ? launch_ls<12, true, 13, RD, 1, 1>(a, smem, st) : launch_ls<12, true, 13, RD, 1, 0>(a, smem, st);
        if (wt == 2) return launch_ls<12, true, 13, RD, 2, 2>(a, smem, st); /* pipeline 2's training weighted */
        if (wt == 0) return launch_ls<12, true, 13, RD, 2, 0>(a, smem, st);
        /* (no encoder weights forgetting 2's training: the general kernel) */
    }
    if (default_order) return launch_ls<12, true, 13>(a, smem, st);
    if (a.D <= 12) return launch_ls<12, true, 0>(a, smem, st);
    if (a.D <= 16) return launch_ls<16, false, 0>(a, smem, st);
    return launch_ls<LSX_MAX_D, false, 0>(a, smem, st);
}

/* ---- row fits (lsx_row_predict / lsx_record) ----------------------------- */

/* Four members fitted along the row: AF on B, AL on each LS plane, RV on
 * the two pixels above.  Each has its sums (5, 5, 5, 9: AF 0-4, AL of ls_a
 * 5-9, AL of ls_b 10-14, RV 15-23), every sum a decaying integer
 * recurrence of its own along the row; the fits, with their divisions,
 * are then independent per pixel. */
#define ROW_SUMS 24
#define ROW_GROUPS 4

struct row_fit_args {
    const uint16_t *x;
    const int32_t *cmb;
    const double *ls_a, *ls_b;
    uint32_t W, H;
    double *p_af, *p_rv, *al_a, *al_b;
};

/* What the row fits read of (m, n), m >= 1, for member g, as loaded
 * (row_load), and the sources made of it (row_z): the target y = 16
 * x[m][n], and z0 = B (AF), q16(ls_a) (AL of ls_a), q16(ls_b) (AL of
 * ls_b), or z0 = 16 x[m-1][n], z1 = 16 x[m-2][n] (RV; row 1: x[m-1][n]).
 * src keeps the member's values as loaded (B, the LS plane's double, the
 * two pixels above) in one word, so that a fit thread holds its loads of
 * a tile ahead in few registers and waits on them only when it stores. */
struct row_inputs {
    uint64_t src;
    uint16_t cur;
};

__device__ __forceinline__ row_inputs row_load(const row_fit_args &a, int g, uint32_t m, uint32_t n)
{
    const size_t i = (size_t)m * a.W + n;
    row_inputs r;
    r.cur = a.x[i];
    if (g == 0) r.src = (uint32_t)a.cmb[i];
    else if (g < 3) r.src = (uint64_t)__double_as_longlong((g == 1 ? a.ls_a : a.ls_b)[i]);
    else r.src = a.x[i - a.W] | (uint64_t)a.x[m >= 2 ? i - 2 * (size_t)a.W : i - a.W] << 16;
    return r;
}

__device__ __forceinline__ void row_z(const row_inputs &r, int g, int32_t *z0, int32_t *z1)
{
    if (g == 0) *z0 = (int32_t)(uint32_t)r.src;
    else if (g < 3) *z0 = lsx_q16(__longlong_as_double((long long)r.src));
    else *z0 = 16 * (int32_t)(r.src & 0xffff), *z1 = 16 * (int32_t)(r.src >> 16);
}

/* The sources a sum's terms multiply: the constant 1, then a tile's planes
 * y, z0, z1 (row_z). */
enum { RS_ONE = -1, RS_Y, RS_Z0, RS_Z1, RF_ZP };

/* Sum s takes (source pa x source pb) << scale each pixel, with its decay
 * shift: the terms of lsx_af_add and lsx_rv_add, one at a time. */
struct row_sum_term {
    int pa, pb, shift, scale;
};

__device__ __forceinline__ row_sum_term row_sum_term_of(int s)
{
    if (s < 15) { /* AF / AL: 1, y, z0, z0 z0, z0 y */
        const int pa[5] = {RS_ONE, RS_Y, RS_Z0, RS_Z0, RS_Z0}, pb[5] = {RS_ONE, RS_ONE, RS_ONE, RS_Z0, RS_Y};
        return {pa[s % 5], pb[s % 5], LSX_AF_SHIFT, LSX_AF_SCALE};
    }
    /* RV: 1, y, z0, z1, z0 y, z1 y, z0 z0, z0 z1, z1 z1 */
    const int pa[LSX_RV_NS] = {RS_ONE, RS_Y, RS_Z0, RS_Z1, RS_Z0, RS_Z1, RS_Z0, RS_Z0, RS_Z1};
    const int pb[LSX_RV_NS] = {RS_ONE, RS_ONE, RS_ONE, RS_ONE, RS_Y, RS_Y, RS_Z0, RS_Z1, RS_Z1};
    return {pa[s - 15], pb[s - 15], LSX_RV_SHIFT, LSX_RV_SCALE};
}

/* A block takes one member (blockIdx.y: AF, AL of ls_a, AL of ls_b, RV) of
 * 32 rows through tiles of 16 columns, in two roles that work on
 * consecutive tiles at once, a barrier between steps:
 *   - a sum warp per sum (lane = row) runs its recurrence over tile k,
 *     keeping the sums before each pixel in shared memory;
 *   - the other warps, the fit warps, fit tile k-1 from its sums, store
 *     the sources of tile k+1 (read across the columns, coalesced, one step
 *     before) and load those of tile k+2 into registers.
 * The sums come in two buffers and the sources in three, so that neither
 * role waits for the other within a step.  (With the roles one after the
 * other, three barriers a tile, the kernel took 0.26 ms under ncu on an
 * H100, its 9 warps an SM mostly waiting at the barriers and on the fits'
 * divisions; in two roles, 0.16 ms.  Earlier, with the sums written out,
 * 201 MB a frame, and fitted by a second kernel, the two took 0.32 ms
 * after the LS stage.) */
#define RF_ROWS 32
#define RF_COLS 16
/* A block's warps: the member's sum warps, then its fit warps.  RV's
 * blocks, whose fits are the heaviest and which the kernel waits for, keep
 * 16 fit warps: a tile's 512 fits in one full round.  (ncu, H100, tiles of
 * 32 columns: 16, 20, 24, 25, 28 warps took 0.257, 0.179, 0.186, 0.149,
 * 0.153 ms, 24 leaving RV's third round a thread in seven; 16 columns, 25
 * warps: 0.156, the same frame times, and 98 kB of shared memory where 32
 * columns took 190, more than an A100's SM has.) */
#define RF_WARPS 25
#define RF_THREADS (32 * RF_WARPS)
#define RF_FIT_MIN (RF_THREADS - 32 * LSX_RV_NS) /* the fewest fit threads (RV's blocks) */
#define RF_PER ((RF_ROWS * RF_COLS + RF_FIT_MIN - 1) / RF_FIT_MIN) /* tile entries a fit thread loads */
#define RF_STRIDE (RF_ROWS * (RF_COLS + 1))   /* a tile's plane in shared memory */
#define RF_BUF 3 /* source tiles: the sums' (k), the fit's (k - 1), the one stored for the next step (k + 1) */
#define RF_SMEM (sizeof(int64_t) * 2 * LSX_RV_NS * RF_STRIDE + sizeof(int32_t) * RF_BUF * RF_ZP * RF_STRIDE)

__global__ void __launch_bounds__(RF_THREADS) row_fits_kernel(row_fit_args a)
{
    extern __shared__ int64_t rf_smem[];
    int64_t *sums = rf_smem;                                        /* [2][LSX_RV_NS][RF_STRIDE] */
    int32_t *zt = (int32_t *)(rf_smem + 2 * LSX_RV_NS * RF_STRIDE); /* [RF_BUF][RF_ZP][RF_STRIDE] */
    __shared__ int32_t ones[RF_COLS]; /* the source RS_ONE of the sums' terms */
    /* (without AL, set 3's case, the grid's two groups are AF and RV) */
    const int g = a.al_a ? (int)blockIdx.y : 3 * (int)blockIdx.y, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int ns = g < 3 ? 5 : LSX_RV_NS;
    const bool summer = warp < ns;
    const int ft = threadIdx.x - 32 * ns, nfit = RF_THREADS - 32 * ns; /* a fit thread's index, their count */
    const uint32_t m0 = 1 + blockIdx.x * RF_ROWS, m = m0 + lane;
    const uint32_t ntiles = (a.W + RF_COLS - 1) / RF_COLS;
    if (threadIdx.x < RF_COLS) ones[threadIdx.x] = 1;
    /* fit thread ft's entries of a tile: t = ft + j * nfit, row t /
     * RF_COLS, column t % RF_COLS (consecutive threads: consecutive
     * columns) */
    row_inputs in[RF_PER];
    auto load = [&](uint32_t k) {
#pragma unroll
        for (int j = 0; j < RF_PER; j++) {
            const int t = ft + j * nfit, r = t / RF_COLS, c = t % RF_COLS;
            const uint32_t mr = m0 + (uint32_t)r, nc = k * RF_COLS + (uint32_t)c;
            if (t < RF_ROWS * RF_COLS && mr < a.H && nc < a.W) in[j] = row_load(a, g, mr, nc);
        }
    };
    auto store = [&](uint32_t k) {
        int32_t *zb = zt + (k % RF_BUF) * RF_ZP * RF_STRIDE;
#pragma unroll
        for (int j = 0; j < RF_PER; j++) {
            const int t = ft + j * nfit, r = t / RF_COLS, c = t % RF_COLS;
            if (t >= RF_ROWS * RF_COLS || m0 + (uint32_t)r >= a.H || k * RF_COLS + (uint32_t)c >= a.W) continue;
            int32_t z0, z1 = 0;
            row_z(in[j], g, &z0, &z1);
            const int e = r * (RF_COLS + 1) + c;
            zb[RS_Y * RF_STRIDE + e] = 16 * (int32_t)in[j].cur;
            zb[RS_Z0 * RF_STRIDE + e] = z0;
            if (g == 3) zb[RS_Z1 * RF_STRIDE + e] = z1;
        }
    };
    if (!summer) {
        load(0);
        store(0);
        if (ntiles > 1) load(1);
    }
    const row_sum_term term = row_sum_term_of(g * 5 + (summer ? warp : 0));
    int64_t v = 0;
    __syncthreads();
    for (uint32_t k = 0; k <= ntiles; k++) {
        if (summer) {
            if (k < ntiles && m < a.H) {
                const int32_t *zb = zt + (k % RF_BUF) * RF_ZP * RF_STRIDE + lane * (RF_COLS + 1);
                const int32_t *za = term.pa == RS_ONE ? ones : zb + term.pa * RF_STRIDE;
                const int32_t *zc = term.pb == RS_ONE ? ones : zb + term.pb * RF_STRIDE;
                int64_t *out = sums + ((k % 2) * LSX_RV_NS + warp) * RF_STRIDE + lane * (RF_COLS + 1);
                const uint32_t cols = min((uint32_t)RF_COLS, a.W - k * RF_COLS);
                for (uint32_t c = 0; c < cols; c++) {
                    out[c] = v;
                    const int64_t t = (int64_t)za[c] * zc[c];
                    v = lsx_decay_add(v, term.shift, t << term.scale);
                }
            }
        } else {
            if (k >= 1) { /* the fits of tile k - 1 */
                const uint32_t kf = k - 1;
                const int64_t *sb = sums + (kf % 2) * LSX_RV_NS * RF_STRIDE;
                const int32_t *zb = zt + (kf % RF_BUF) * RF_ZP * RF_STRIDE;
                for (int t = ft; t < RF_ROWS * RF_COLS; t += nfit) {
                    const int r = t / RF_COLS, c = t % RF_COLS, e = r * (RF_COLS + 1) + c;
                    const uint32_t mr = m0 + (uint32_t)r, n = kf * RF_COLS + (uint32_t)c;
                    if (mr >= a.H || n >= a.W) continue;
                    const size_t i = (size_t)mr * a.W + n;
                    const double z0 = (double)zb[RS_Z0 * RF_STRIDE + e];
                    if (g == 3) {
                        int64_t sv[LSX_RV_NS];
#pragma unroll
                        for (int q = 0; q < LSX_RV_NS; q++) sv[q] = sb[q * RF_STRIDE + e];
                        a.p_rv[i] = lsx_rv_fit(sv, n, z0, (double)zb[RS_Z1 * RF_STRIDE + e]);
                    } else {
                        int64_t sv[5];
#pragma unroll
                        for (int q = 0; q < 5; q++) sv[q] = sb[q * RF_STRIDE + e];
                        (g == 0 ? a.p_af : g == 1 ? a.al_a : a.al_b)[i] = lsx_af_fit(sv, n, z0);
                    }
                }
            }
            if (k + 1 < ntiles) {
                store(k + 1);
                if (k + 2 < ntiles) load(k + 2);
            }
        }
        __syncthreads();
    }
}

cudaError_t lsx_gpu_row_fits(const uint16_t *x, const int32_t *cmb, const double *ls_a, const double *ls_b,
                             uint32_t W, uint32_t H, double *p_af, double *p_rv, double *al_a, double *al_b,
                             cudaStream_t st)
{
    if (H < 2) return cudaSuccess;
    row_fit_args a = {x, cmb, ls_a, ls_b, W, H, p_af, p_rv, al_a, al_b};
    static_assert(ROW_GROUPS * 5 + LSX_RV_NS - 5 == ROW_SUMS, "AF, two ALs and RV");
    cudaError_t rc = cudaFuncSetAttribute(row_fits_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)RF_SMEM);
    if (rc != cudaSuccess) return rc;
    row_fits_kernel<<<dim3((H - 1 + RF_ROWS - 1) / RF_ROWS, al_a ? ROW_GROUPS : 2), RF_THREADS, RF_SMEM, st>>>(a);
    return cudaGetLastError();
}

/* ---- BG (core/lsmix_bg.h) ---------------------------------------------------- */

/* The column pass: a thread's next BG_AHEAD rows' pixels are loaded before
 * the recurrence runs over the current ones: a thread (one a column, so
 * few of them) waits for memory once a batch, and the batch's latency
 * overlaps the recurrence over the one before. */
#define BG_AHEAD 16

/* BG's column pass: C, S and the weight before each row, row-major, a
 * thread per column.  Where br_l (set 3), the block's second half of
 * threads runs BR's column pass (core/lsmix_br.h) over the same columns,
 * BR's level and scale before each row into br_l, br_s: its own
 * recurrence, in warps of its own beside BG's on the same SMs.  (As a
 * second recurrence in BG's threads it made this pass 0.39 ms under ncu,
 * against 0.25; in blocks of its own, on four more SMs, it kept LS blocks
 * from theirs: the LS stage 0.32 -> 0.42 ms.) */
#define BGC_COLS 256 /* columns a block */

__global__ void bg_columns_kernel(const uint16_t *__restrict__ x, uint32_t W, uint32_t H, int32_t *__restrict__ c,
                                  int32_t *__restrict__ s, int64_t *__restrict__ w, int32_t *__restrict__ br_l,
                                  int32_t *__restrict__ br_s)
{
    const bool br = threadIdx.x >= BGC_COLS;
    const uint32_t n = blockIdx.x * BGC_COLS + threadIdx.x % BGC_COLS;
    if (n >= W) return;
    int32_t cn = 0, sn = 0; /* BG's C and S, or BR's L and s */
    uint16_t lit = 0;       /* BR's rows lit */
    uint16_t v[BG_AHEAD], v_next[BG_AHEAD];
    auto load = [&](uint16_t *dst, uint32_t m0) {
#pragma unroll
        for (int j = 0; j < BG_AHEAD; j++) dst[j] = m0 + j < H ? x[(size_t)(m0 + j) * W + n] : 0;
    };
    load(v, 0);
    for (uint32_t m0 = 0; m0 < H; m0 += BG_AHEAD) {
        if (m0 + BG_AHEAD < H) load(v_next, m0 + BG_AHEAD);
        if (!br) {
#pragma unroll
            for (int j = 0; j < BG_AHEAD; j++) {
                const uint32_t m = m0 + (uint32_t)j;
                if (m >= H) break;
                const size_t i = (size_t)m * W + n;
                c[i] = cn;
                s[i] = sn;
                w[i] = m ? lsx_bg_weight_fp(sn) : 0;
                if (m == 0) lsx_bg_column_start(&cn, &sn, v[j]);
                else lsx_bg_column_step(&cn, &sn, m, v[j]);
            }
        } else {
#pragma unroll
            for (int j = 0; j < BG_AHEAD; j++) {
                const uint32_t m = m0 + (uint32_t)j;
                if (m >= H) break;
                const size_t i = (size_t)m * W + n;
                br_l[i] = cn;
                br_s[i] = sn;
                if (m == 0) lsx_br_column_start(&cn, &sn, &lit, v[j]);
                else lsx_br_column_step(&cn, &sn, &lit, v[j]);
            }
        }
#pragma unroll
        for (int j = 0; j < BG_AHEAD; j++) v[j] = v_next[j];
    }
}

/* A thread per row m >= 1: the offset along the row, the prediction of
 * every pixel.  A warp takes 32 rows through tiles of 32 columns: the
 * tile's inputs are read across the columns (coalesced) into shared
 * memory, each thread runs its row over the tile, and the tile's
 * predictions go out across the columns again.  (Read and written by each
 * thread along its own row, every access of a warp touched 32 lines: the
 * pass took 0.9 ms on the few SMs the LS kernel leaves.) */
#define BGR_COLS 32

/* A row pass's next tile is in: this lane's copies (its issued ones, all
 * of them that tile's), then its pixels from the registers xn into the
 * tile tx, then every lane's (the rows read across the lanes' columns). */
__device__ __forceinline__ void row_tile_arrived(uint16_t (*tx)[BGR_COLS + 2], const uint16_t *xn)
{
    __pipeline_wait_prior(0);
#pragma unroll
    for (int r = 0; r < 32; r++) tx[r][threadIdx.x] = xn[r];
    __syncwarp();
}

__global__ void __launch_bounds__(32) bg_rows_kernel(const uint16_t *__restrict__ x, uint32_t W, uint32_t H,
                                                     const int32_t *__restrict__ c, const int32_t *__restrict__ s,
                                                     const int64_t *__restrict__ w, double *__restrict__ p_bg)
{
    /* two buffers of a tile's levels, scales and weights: the next tile's
     * come in by asynchronous copies (its pixels into registers) while the
     * rows run over this one.  A warp a block, so a tile's loads, made
     * after the rows had run over the tile before, waited on memory with
     * nothing else to run: the row fits' stage (this pass and BR's, the
     * frame waits for both) 0.361 -> 0.282 ms and the bench frame 1.528 ->
     * 1.44 ms on an H200 (thirty-third session) */
    __shared__ int32_t tc[2][32][BGR_COLS + 1], ts[2][32][BGR_COLS + 1];
    __shared__ int64_t tw[2][32][BGR_COLS + 1];
    __shared__ double tp[32][BGR_COLS + 1];
    __shared__ uint16_t tx[32][BGR_COLS + 2];
    const int lane = threadIdx.x;
    const uint32_t m0 = 1 + blockIdx.x * 32, m = m0 + lane;
    uint16_t xn[32]; /* the next tile's pixels, column n0 + lane of each row */
    auto fetch = [&](uint32_t n0, int b) {
        const uint32_t n = n0 + (uint32_t)lane;
#pragma unroll
        for (int k = 0; k < 32; k++) {
            const size_t i = (size_t)(m0 + k) * W + n;
            if (m0 + k < H && n < W) {
                __pipeline_memcpy_async(&tc[b][k][lane], c + i, sizeof *c);
                __pipeline_memcpy_async(&ts[b][k][lane], s + i, sizeof *s);
                __pipeline_memcpy_async(&tw[b][k][lane], w + i, sizeof *w);
                xn[k] = x[i];
            }
        }
        __pipeline_commit();
    };
    lsx_bg_row r;
    lsx_bg_row_start(&r);
    fetch(0, 0);
    for (uint32_t n0 = 0, b = 0; n0 < W; n0 += BGR_COLS, b ^= 1) {
        const uint32_t n = n0 + (uint32_t)lane, cols = min((uint32_t)BGR_COLS, W - n0);
        row_tile_arrived(tx, xn);
        if (n0 + BGR_COLS < W) fetch(n0 + BGR_COLS, b ^ 1);
        /* unrolled by 4, so that a pixel's weight sum (which does not wait
         * for the offset before it) runs beside the chain of the pixel
         * before: 0.524 -> 0.497 ms (ncu, H100); unrolled whole, the
         * tile's 32 copies of the division took 0.86 */
        if (m < H)
#pragma unroll 4
            for (uint32_t j = 0; j < cols; j++) {
                tp[lane][j] = lsx_bg_predict(&r, tc[b][lane][j]);
                lsx_bg_row_add(&r, tc[b][lane][j], ts[b][lane][j], tw[b][lane][j], tx[lane][j]);
            }
        __syncwarp();
#pragma unroll 8
        for (int k = 0; k < 32; k++)
            if (m0 + k < H && n < W) p_bg[(size_t)(m0 + k) * W + n] = tp[k][lane];
        __syncwarp(); /* tile b and the predictions are read before they are written again */
    }
}

/* Set 3's BR row pass (lsx_br_row_add from pixel 0 of every row m >= 1),
 * in bg_rows_kernel's form: a thread per row, a warp's 32 rows through
 * tiles of 32 columns read and written across the columns.  BR's offset
 * into br_o before each pixel (over the level in the tile: a pixel's level
 * is read before its offset is written).  Its own kernel on a stream of
 * its own, not a second chain in bg_rows_kernel's threads: BG's row pass
 * already ended after the LS stage (0.52 ms alone under ncu, before the
 * tiles were loaded ahead), and the frame waits for it; BR's (then 0.34
 * ms alone) runs beside it. */
__global__ void __launch_bounds__(32) br_rows_kernel(const uint16_t *__restrict__ x, uint32_t W, uint32_t H,
                                                     const int32_t *__restrict__ br_l,
                                                     const int32_t *__restrict__ br_s, int32_t *__restrict__ br_o)
{
    /* bg_rows_kernel's two buffers: the next tile in flight while the rows
     * run over this one */
    __shared__ int32_t tl[2][32][BGR_COLS + 1], ts[2][32][BGR_COLS + 1];
    __shared__ uint16_t tx[32][BGR_COLS + 2];
    const int lane = threadIdx.x;
    const uint32_t m0 = 1 + blockIdx.x * 32, m = m0 + lane;
    uint16_t xn[32];
    auto fetch = [&](uint32_t n0, int b) {
        const uint32_t n = n0 + (uint32_t)lane;
#pragma unroll
        for (int r = 0; r < 32; r++) {
            const size_t i = (size_t)(m0 + r) * W + n;
            if (m0 + r < H && n < W) {
                __pipeline_memcpy_async(&tl[b][r][lane], br_l + i, sizeof *br_l);
                __pipeline_memcpy_async(&ts[b][r][lane], br_s + i, sizeof *br_s);
                xn[r] = x[i];
            }
        }
        __pipeline_commit();
    };
    int32_t o = 0, k = 0; /* the row's offset and inliers so far */
    fetch(0, 0);
    for (uint32_t n0 = 0, b = 0; n0 < W; n0 += BGR_COLS, b ^= 1) {
        const uint32_t n = n0 + (uint32_t)lane, cols = min((uint32_t)BGR_COLS, W - n0);
        row_tile_arrived(tx, xn);
        if (n0 + BGR_COLS < W) fetch(n0 + BGR_COLS, b ^ 1);
        /* the offset's divisor is min(k + 2, 16): from k = 14 on, the call
         * with k a constant 14 takes the same steps, and its division by
         * the constant 16 compiles to shifts (a division by a variable at
         * every pixel: 0.44 ms under ncu, against 0.34; unrolled by 8, in
         * blocks of 4 warps, 0.62) */
        if (m < H)
            for (uint32_t j = 0; j < cols; j++) {
                const int32_t L = tl[b][lane][j];
                tl[b][lane][j] = o; /* the offset before pixel n0 + j, over its level */
                if (k >= 14) {
                    int32_t k14 = 14;
                    lsx_br_row_add(&o, &k14, L, ts[b][lane][j], tx[lane][j]);
                } else {
                    lsx_br_row_add(&o, &k, L, ts[b][lane][j], tx[lane][j]);
                }
            }
        __syncwarp();
#pragma unroll 8
        for (int r = 0; r < 32; r++)
            if (m0 + r < H && n < W) br_o[(size_t)(m0 + r) * W + n] = tl[b][r][lane];
        __syncwarp(); /* tile b is read before it is written again */
    }
}

cudaError_t lsx_gpu_bg_columns(const uint16_t *x, uint32_t W, uint32_t H, int32_t *c, int32_t *s, int64_t *w,
                               int32_t *br_l, int32_t *br_s, cudaStream_t st)
{
    /* 256 columns a block: the pass starts on the side stream before the
     * LS kernel, whose blocks each need a whole SM's registers; in four
     * blocks (a 1024-column frame) it leaves the LS kernel's 128 blocks
     * their 128 SMs of an H100's 132 (in eight it held up four of them
     * until it ended) */
    bg_columns_kernel<<<(W + BGC_COLS - 1) / BGC_COLS, br_l ? 2 * BGC_COLS : BGC_COLS, 0, st>>>(x, W, H, c, s, w,
                                                                                          br_l, br_s);
    return cudaGetLastError();
}

cudaError_t lsx_gpu_bg_rows(const uint16_t *x, uint32_t W, uint32_t H, const int32_t *c, const int32_t *s,
                            const int64_t *w, double *p_bg, cudaStream_t st)
{
    if (H > 1) bg_rows_kernel<<<(H - 1 + 31) / 32, 32, 0, st>>>(x, W, H, c, s, w, p_bg);
    return cudaGetLastError();
}

cudaError_t lsx_gpu_br_rows(const uint16_t *x, uint32_t W, uint32_t H, const int32_t *br_l, const int32_t *br_s,
                            int32_t *br_o, cudaStream_t st)
{
    if (H > 1) br_rows_kernel<<<(H - 1 + 31) / 32, 32, 0, st>>>(x, W, H, br_l, br_s, br_o);
    return cudaGetLastError();
}

/* A warp per row m >= 1: the RL members along the row, as lsx_sources and
 * lsx_record run them (the sums start at 0 with pixel 1), 32 pixels at a
 * time.  Each entry of A and b is a recurrence of its own
 * (lsx_rl_halve_add): lane e < RL_ENTRIES runs entry e along the chunk and
 * keeps its value before every pixel; then lane l factors and solves the
 * systems of pixel n0 + l from those values, the pixels' solves in
 * parallel (a thread per row, solving pixel after pixel, took about 1 ms). */
#define RL_CHUNK 32
#define RL_ZS (LSX_RL_N * LSX_RL_MAXR)                           /* a pixel's z of both members, then x - C/16 */
/* A member of d regressors has d (d + 1) / 2 entries of A (its lower
 * triangle, row by row) and then d of b; RL1's come first, then RL2's. */
#define RL_MEMBER_ENTRIES(d) ((d) * ((d) + 1) / 2 + (d))
#define RL_ENTRIES (RL_MEMBER_ENTRIES(LSX_RL_MAXR) + RL_MEMBER_ENTRIES(LSX_RL2_R))

/* Member q's first entry, and how many of its entries are A's. */
__device__ __forceinline__ int rl_first_entry(int q) { return q ? RL_MEMBER_ENTRIES(LSX_RL_MAXR) : 0; }
__device__ __forceinline__ int rl_a_entries(int q) { return lsx_rl_size(q) * (lsx_rl_size(q) + 1) / 2; }

/* Lane e's entry: member *q, b[*i] when *isb, else A[*i][*j] (j <= i). */
__device__ __forceinline__ void rl_entry(int e, int *q, int *i, int *j, int *isb)
{
    *isb = 0;
    *q = e >= rl_first_entry(1);
    int k = e - rl_first_entry(*q);
    const int na = rl_a_entries(*q);
    if (k >= na) {
        *isb = 1, *i = k - na, *j = 0;
        return;
    }
    for (*i = 0; k > *i; (*i)++) k -= *i + 1;
    *j = k;
}

__global__ void __launch_bounds__(RL_CHUNK) rl_rows_kernel(const uint16_t *__restrict__ x, uint32_t W, uint32_t H,
                                                          const int32_t *__restrict__ c,
                                                          const int32_t *__restrict__ s,
                                                          double *__restrict__ p_rl0, double *__restrict__ p_rl1)
{
    __shared__ double zs[RL_CHUNK][RL_ZS + 1];
    __shared__ double before[RL_CHUNK][RL_ENTRIES];
    const uint32_t m = 1 + blockIdx.x;
    const int l = threadIdx.x;
    const uint16_t *cur = x + (size_t)m * W, *up = cur - W, *up2 = m >= 2 ? up - W : up;
    const int32_t *cr = c + (size_t)m * W, *sr = s + (size_t)m * W;
    int eq = 0, ei = 0, ej = 0, eb = 0;
    if (l < RL_ENTRIES) rl_entry(l, &eq, &ei, &ej, &eb);
    double v = 0.0; /* lane l's entry before the pixel */
    for (uint32_t n0 = 0; n0 < W; n0 += RL_CHUNK) {
        const uint32_t n = n0 + l, len = W - n0 < RL_CHUNK ? W - n0 : RL_CHUNK;
        if (l < 5 && n0 + RL_CHUNK < W) {
            /* the next chunk's lines into L1 while this one is worked:
             * its regressors' loads otherwise wait on L2 (a sixth of the
             * kernel's time; 0.139 -> 0.135 ms) */
            const uint32_t nn = n0 + RL_CHUNK;
            const void *line = l == 0 ? (const void *)(cur + nn) : l == 1 ? (const void *)(up + nn)
                             : l == 2 ? (const void *)(up2 + nn) : l == 3 ? (const void *)(cr + nn)
                                      : (const void *)(sr + nn);
            asm volatile("prefetch.global.L1 [%0];" ::"l"(line));
        }
        if (n < W) {
            lsx_rl r;
#pragma unroll
            for (int q = 0; q < LSX_RL_N; q++) {
                lsx_rl_regressors(&r, q, cur, up, up2, cr, W, n);
#pragma unroll
                for (int k = 0; k < LSX_RL_MAXR; k++) zs[l][q * LSX_RL_MAXR + k] = k < lsx_rl_size(q) ? r.z[k] : 0.0;
            }
            zs[l][RL_ZS] = lsx_rl_target(cur[n], cr[n]);
        }
        __syncwarp();
        if (l < RL_ENTRIES && n0 > 0 && n0 + RL_CHUNK < W) {
            /* an inner chunk: every pixel updates every entry, so the
             * chunk's products are loaded and made ahead of the chain of
             * halvings, which is all that waits on the pixel before
             * (ncu, H100: 0.21 -> 0.14 ms for the kernel, whose steps
             * each waited on their branches and loads, more than half its
             * time) */
            const int ca = eq * LSX_RL_MAXR + ei, cb = eb ? RL_ZS : eq * LSX_RL_MAXR + ej;
#pragma unroll
            for (int t = 0; t < RL_CHUNK; t++) {
                before[t][l] = v;
                v = lsx_rl_halve_add(v, zs[t][ca], zs[t][cb]);
            }
        } else if (l < RL_ENTRIES)
            for (uint32_t t = 0; t < len; t++) {
                const uint32_t nt = n0 + t;
                const double *z = zs[t] + eq * LSX_RL_MAXR;
                before[t][l] = v;
                if (eb) { /* b: after x (lsx_rl_add), from pixel 1 */
                    if (nt > 0) v = lsx_rl_halve_add(v, z[ei], zs[t][RL_ZS]);
                } else if (nt > 0 && nt + 1 < W) { /* A: for the next pixel (lsx_rl_pixel) */
                    v = lsx_rl_halve_add(v, z[ei], z[ej]);
                }
            }
        __syncwarp();
        if (n < W) {
            const size_t i = (size_t)m * W + n;
#pragma unroll
            for (int q = 0; q < LSX_RL_N; q++) {
                lsx_rl r;
                const int base = rl_first_entry(q), na = rl_a_entries(q), D = lsx_rl_size(q);
#pragma unroll
                for (int a = 0, e = base; a < D; a++) {
#pragma unroll
                    for (int b2 = 0; b2 <= a; b2++, e++) r.A[a * LSX_RL_MAXR + b2] = before[l][e];
                    r.b[a] = before[l][base + na + a];
                    r.z[a] = zs[l][q * LSX_RL_MAXR + a];
                }
                if (n >= 2) lsx_rl_factor(&r, q, sr[n]);
                (q ? p_rl1 : p_rl0)[i] = lsx_rl_predict(&r, q, n, up, cr[n]);
            }
        }
        __syncwarp();
    }
}

cudaError_t lsx_gpu_rl(const uint16_t *x, uint32_t W, uint32_t H, const int32_t *c, const int32_t *s,
                       double *p_rl0, double *p_rl1, cudaStream_t st)
{
    if (H > 1) rl_rows_kernel<<<H - 1, RL_CHUNK, 0, st>>>(x, W, H, c, s, p_rl0, p_rl1);
    return cudaGetLastError();
}

/* ---- LG (core/lsmix_lg.h) ------------------------------------------------------ */

/* A warp per row m >= 1, 32 pixels at a time (research round 38's
 * sketch): every lane makes its pixel's terms, lane 0 runs the sums'
 * chain over the 32 and keeps their values before each pixel, then every
 * lane predicts its pixel from those (lsx_lg_predict).  The terms (a log,
 * divisions) do not depend on the sums, and the chain is a few dependent
 * operations a pixel; a thread per row, doing both, would run every row's
 * divisions and logs one after another.  A lane predicts its pixel of one
 * chunk and makes the terms of its pixel of the next in the same step
 * (independent work, so their latencies overlap; the terms in two
 * buffers).  lsx_lg_add is lsx_lg_terms then lsx_lg_step, so the
 * lanes' terms and lane 0's steps are its operations exactly. */
#define LG_CHUNK 32

/* pixel n's terms (lsx_lg_terms) into *w, *wr */
__device__ __forceinline__ void lg_terms(const uint16_t *cur, const uint16_t *up, const int32_t *cr,
                                         const int32_t *sr, uint32_t W, uint32_t n, double *w, double *wr)
{
    lsx_lg_terms(cur[n], cr[n], sr[n], lsx_lg_ref(up, cr, W, n), w, wr);
}

__global__ void __launch_bounds__(LG_CHUNK) lg_rows_kernel(const uint16_t *__restrict__ x, uint32_t W, uint32_t H,
                                                          const int32_t *__restrict__ c,
                                                          const int32_t *__restrict__ s, double *__restrict__ p_lg)
{
    __shared__ double tw[2][LG_CHUNK], twr[2][LG_CHUNK], before[5][LG_CHUNK + 1];
    const uint32_t m = 1 + blockIdx.x;
    const int l = threadIdx.x;
    const uint16_t *cur = x + (size_t)m * W, *up = cur - W;
    const int32_t *cr = c + (size_t)m * W, *sr = s + (size_t)m * W;
    lsx_lg q; /* lane 0's sums: after pixel n0 - 1 */
    lsx_lg_reset(&q);
    if ((uint32_t)l < W) lg_terms(cur, up, cr, sr, W, l, &tw[0][l], &twr[0][l]);
    for (uint32_t n0 = 0, b = 0; n0 < W; n0 += LG_CHUNK, b ^= 1) {
        const uint32_t n = n0 + l, len = W - n0 < LG_CHUNK ? W - n0 : LG_CHUNK;
        __syncwarp(); /* the chunk's terms are made, and the sums before the last chunk read */
        if (l == 0)
            for (uint32_t j = 0; j < len; j++) {
#pragma unroll
                for (int k = 0; k < 5; k++) before[k][j] = q.q[k];
                if (n0 + j > 0) lsx_lg_step(&q, tw[b][j], twr[b][j]); /* lsx_lg_add from pixel 1 */
            }
        __syncwarp();
        if (n < W) {
            lsx_lg g;
#pragma unroll
            for (int k = 0; k < 5; k++) g.q[k] = before[k][l];
            p_lg[(size_t)m * W + n] = lsx_lg_predict(&g, up, cr, W, n);
        }
        if (n + LG_CHUNK < W) lg_terms(cur, up, cr, sr, W, n + LG_CHUNK, &tw[b ^ 1][l], &twr[b ^ 1][l]);
    }
}

cudaError_t lsx_gpu_lg(const uint16_t *x, uint32_t W, uint32_t H, const int32_t *c, const int32_t *s,
                       double *p_lg, cudaStream_t st)
{
    if (H > 1) lg_rows_kernel<<<H - 1, LG_CHUNK, 0, st>>>(x, W, H, c, s, p_lg);
    return cudaGetLastError();
}

/* ---- residuals of one pipeline ------------------------------------------- */

/* The np = lsx_npred predictions of (m, n): LS, CM, then AF (set 0), AF,
 * RV, AL (set 1) or RV, AL, RL1, RL2 (set 2); BG last where on.  Row 0:
 * the edge prediction for all. */
__device__ __forceinline__ void predictions(const lsx_gpu_planes &pl, int set, int np, uint32_t m, uint32_t n,
                                            double *p)
{
    const size_t i = (size_t)m * pl.W + n;
    if (m == 0) {
        double e = n ? (double)pl.x[i - 1] : 0.0;
        for (int k = 0; k < np; k++) p[k] = e;
        return;
    }
    p[0] = pl.p_ls[i];
    if (set == 3) { /* LG, RV, RC, RL1, RL2, BR (lsx_row_predict) */
        const int32_t L = pl.br_l[i];
        p[1] = pl.p_lg[i];
        p[2] = pl.p_rv[i];
        p[3] = lsx_br_level(L);
        p[4] = pl.p_rl[0][i];
        p[5] = pl.p_rl[1][i];
        p[6] = lsx_br_predict(L, pl.br_o[i]);
        return;
    }
    p[1] = (double)pl.cma[i] * 0.0625;
    if (set == 2) {
        p[2] = pl.p_rv[i];
        p[3] = pl.p_al[i];
        p[4] = pl.p_rl[0][i];
        p[5] = pl.p_rl[1][i];
    } else {
        p[2] = pl.p_af[i];
        if (set) {
            p[3] = pl.p_rv[i];
            p[4] = pl.p_al[i];
        }
    }
    if (pl.p_bg) p[np - 1] = pl.p_bg[i];
}

#define CI_COLS 128 /* columns a block of colerr_inputs_kernel */

/* Set 0: the input of every member's column error level at every pixel
 * (lsx_colerr_input, the median of the errors |16x - q16(P_k)| at n - 1,
 * n, n + 1 in BG streams), made apart from the levels' serial pass, which
 * then loads one word a row.  A block takes CI_COLS columns of one row;
 * thread t makes the errors of column n0 - 1 + t, clamped into the row, so
 * that a neighbour outside the row is the pixel's own error, as
 * lsx_colerr_input takes it. */
template <int BG>
__global__ void __launch_bounds__(CI_COLS + 32) colerr_inputs_kernel(lsx_gpu_planes pl, lsx_gpu_pipe pp)
{
    const int np = lsx_npred(0, BG);
    __shared__ int32_t errs[LSX_NPRED][CI_COLS + 2];
    const uint32_t W = pl.W, m = blockIdx.y, t = threadIdx.x;
    const int64_t c = (int64_t)blockIdx.x * CI_COLS - 1 + t;
    const uint32_t n = c < 0 ? 0 : c >= (int64_t)W ? W - 1 : (uint32_t)c;
    if (t < CI_COLS + 2) {
        double p[LSX_NPRED];
        predictions(pl, 0, np, m, n, p);
        const int32_t x16 = 16 * (int32_t)pl.x[(size_t)m * W + n];
        for (int k = 0; k < np; k++) {
            const int32_t d = x16 - lsx_q16(p[k]);
            errs[k][t] = d < 0 ? -d : d;
        }
    }
    __syncthreads();
    if (t < 1 || t > CI_COLS || c >= (int64_t)W) return;
    const size_t px = (size_t)W * pl.H, i = (size_t)m * W + n;
    for (int k = 0; k < np; k++) pp.err[k * px + i] = lsx_colerr_input(errs[k], t, CI_COLS + 2, BG);
}

/* Set 0: the column error level of each predictor before each row, from
 * the inputs of colerr_inputs_kernel (bg: the stream has the BG member,
 * and with it the rate LSX_COLERR_SHIFT_BG): 0 before row 0. */
struct column_errors_col {
    int32_t *__restrict__ col;
    int shift;
    int32_t c;
    __device__ void start(size_t i, int32_t e) { col[i] = 0, c = e; }
    __device__ void step(size_t i, int32_t e) { col[i] = c, c = lsx_mean_step(c, e, shift); }
};

__global__ void __launch_bounds__(CP_THREADS) column_errors_kernel(uint32_t W, uint32_t H, lsx_gpu_pipe pp, int bg)
{
    const size_t px = (size_t)W * H, k = blockIdx.y;
    column_errors_col col = {pp.colerr + k * px, lsx_colerr_shift(bg), 0};
    column_pass(pp.err + k * px, W, H, col);
}

/* The blend of every pixel (lsx_blend_at).  Each error |16x - q16(P_k)|
 * is read only by the error levels of its row and of the row below, so a
 * block takes a strip of SB_COLS columns down SB_ROWS rows and makes the
 * errors of its rows itself, keeping the last three rows' in shared
 * memory.  (A kernel that wrote every error plane and one that read them
 * back with the predictions moved 300 MB a set-2 pipeline of the echelle
 * frame; set 0's column error levels come from colerr_inputs_kernel,
 * which keeps its errors in shared memory as well.)  Thread t makes the
 * errors of column n0 - 2 + t: the strip, the two columns left and the
 * one right that its error levels read.  An error outside the frame is 0, so
 * lsx_error_level, given the strip's local index (always > 1 and one less
 * than the row's end), sums exactly the neighbours it would take at n.
 * The block first makes the errors of the row above its first. */
#define SB_COLS 128
#define SB_ROWS 16
#define SB_WIDTH (SB_COLS + 3)
#define SB_THREADS (SB_COLS + 32) /* the last warp makes the errors of three columns */

/* SET and BG (pp.set, pl.p_bg != NULL) constants, so that the members'
 * loops unroll and their arrays stay in registers */
template <int SET, int BG>
__global__ void __launch_bounds__(SB_THREADS) strip_blend_kernel(lsx_gpu_planes pl, lsx_gpu_pipe pp,
                                                                 const uint16_t *__restrict__ ioff)
{
    __shared__ int32_t errs[3][LSX_NPRED][SB_WIDTH];
    const uint32_t W = pl.W, H = pl.H, t = threadIdx.x;
    const int64_t c = (int64_t)blockIdx.x * SB_COLS - 2 + t; /* this thread's column */
    const bool makes = t < SB_WIDTH && c >= 0 && c < (int64_t)W;
    const bool blends = makes && t >= 2 && t < SB_COLS + 2;
    const uint32_t n = makes ? (uint32_t)c : 0;
    const uint32_t m0 = blockIdx.y * SB_ROWS, m1 = m0 + SB_ROWS < H ? m0 + SB_ROWS : H;
    const int np = lsx_npred(SET, BG);
    const int colerr_w = lsx_colerr_weight(SET, BG), colerr_ctx_w = lsx_colerr_ctx_weight(SET);
    const int kind = lsx_blend_kind(SET, BG);
    const uint16_t off = *ioff;
    uint32_t m = m0 > 0 ? m0 - 1 : 0;
    /* row m's predictions and pixel, loaded one row ahead of their use */
    double p[LSX_NPRED], p_next[LSX_NPRED] = {0};
    int32_t x16 = 0, x16_next = 0;
    if (makes) predictions(pl, SET, np, m, n, p_next), x16_next = 16 * (int32_t)pl.x[(size_t)m * W + n];
    for (int b = 0; m < m1; m++, b = b == 2 ? 0 : b + 1) {
        for (int k = 0; k < np; k++) p[k] = p_next[k];
        x16 = x16_next;
        if (makes && m + 1 < m1)
            predictions(pl, SET, np, m + 1, n, p_next), x16_next = 16 * (int32_t)pl.x[(size_t)(m + 1) * W + n];
        if (t < SB_WIDTH)
            for (int k = 0; k < np; k++) {
                const int32_t d = x16 - lsx_q16(p[k]);
                errs[b][k][t] = makes ? (d < 0 ? -d : d) : 0;
            }
        /* one barrier a row: the row written next, in buffer b + 1, was
         * last read by the blend of the row before this one */
        __syncthreads();
        if (!blends || m < m0) continue;
        const size_t i = (size_t)m * W + n;
        uint16_t pred, pre = LSX_SIGN_PRE_ROW0;
        int32_t emin = 0;
        if (m == 0) {
            pred = n ? pl.x[i - 1] : 0;
        } else {
            const int up = b == 0 ? 2 : b - 1;
            int32_t local[LSX_NPRED], col[LSX_NPRED];
            for (int k = 0; k < np; k++) {
                local[k] = lsx_error_level(errs[b][k], errs[up][k], t, SB_WIDTH, SET, 0);
                col[k] = SET ? 0 : pp.colerr[(size_t)k * W * H + i]; /* set 1 and 2 keep no column levels */
            }
            const double bl = lsx_blend_at(np, local, col, colerr_w, colerr_ctx_w, kind, p, &emin);
            pred = aurp_round_clamp(bl);
            pre = lsx_sign_pre(bl, pred, p[0], p[np - 1]);
        }
        /* the sign's blend part, and the sign base without the cascade
         * (acc 0, P = P1: lsx_sign_base's D is r) */
        if (pp.spre) pp.spre[i] = pre;
        if (pp.sbase) pp.sbase[i] = (uint8_t)lsx_sign_base(pre, 0, pred, pred);
        pp.res[i] = (x16 >> 4) - (int32_t)pred;
        pp.emin[i] = emin;
        pp.itok[i] = (uint8_t)lsx_intensity_token(pred, off);
    }
}

/* Adds 1 to counter[bin] for each lane of the warp with `in` set: one
 * atomic per distinct bin of the warp, by its lowest lane.  Neighbouring
 * pixels mostly fall in the same bin, and a warp's atomics to one address
 * run one after another.  Every lane of the warp calls it. */
template <typename T>
static __device__ __forceinline__ void warp_count(T *counter, uint32_t bin, bool in)
{
    const unsigned lanes = __ballot_sync(0xffffffffu, in);
    if (!in) return;
    const unsigned same = __match_any_sync(lanes, bin);
    if ((threadIdx.x & 31) == (unsigned)(__ffs(same) - 1)) atomicAdd(&counter[bin], (T)__popc(same));
}

#define ACT_THREADS 256
#define ACT_PIX 4 /* pixels a thread a step, a grid apart */

/* Each pixel's context activity (act16) into pp.act, the histogram of the
 * intensity tokens (pp.itok_hist) and, where thr_hist is given, the DP's
 * (activity bin, intensity token, residual token) histogram.  A thread
 * takes four pixels a step, a grid of threads apart, so that their
 * neighbours' loads are in flight together: with a pixel a thread the
 * kernel waited on them (ncu, H100: a third of its stall samples).  The
 * block's token counts are 32-bit (a 64-bit shared add is a loop of
 * compare-and-swaps); the block adds them to the 64-bit histogram. */
__global__ void __launch_bounds__(ACT_THREADS) activity_kernel(uint32_t W, uint32_t H, lsx_gpu_pipe pp,
                                                               uint32_t *thr_hist)
{
    __shared__ uint32_t h[CTX_TOKENS];
    if (threadIdx.x < CTX_TOKENS) h[threadIdx.x] = 0;
    __syncthreads();
    const size_t px = (size_t)W * H, grid = (size_t)gridDim.x * ACT_THREADS;
    const int32_t *__restrict__ res = pp.res;
    /* the whole block steps together (the histograms' warp_count) */
    for (size_t i0 = (size_t)blockIdx.x * ACT_THREADS + threadIdx.x; i0 - threadIdx.x < px; i0 += ACT_PIX * grid) {
        uint32_t tok[ACT_PIX], cell[ACT_PIX];
        bool in[ACT_PIX];
#pragma unroll
        for (int q = 0; q < ACT_PIX; q++) {
            const size_t i = i0 + q * grid;
            in[q] = i < px;
            tok[q] = 0, cell[q] = 0;
            if (in[q]) {
                uint32_t m, n;
                pixel_at(i, W, &m, &n);
                const int32_t *r0 = res + (size_t)m * W;
                const int32_t *r1 = m > 0 ? r0 - W : NULL, *r2 = m > 1 ? r0 - 2 * (size_t)W : NULL;
                const uint32_t act = lsx_activity16(lsx_residual_activity(r0, r1, r2, W, n), pp.emin[i]);
                pp.act[i] = act;
                tok[q] = pp.itok[i];
                if (thr_hist) cell[q] = lsx_thr_cell(act, (int)tok[q], r0[n]);
            }
        }
#pragma unroll
        for (int q = 0; q < ACT_PIX; q++) warp_count(h, tok[q], in[q]);
        if (thr_hist)
#pragma unroll
            for (int q = 0; q < ACT_PIX; q++) warp_count(thr_hist, cell[q], in[q]);
    }
    __syncthreads();
    if (threadIdx.x < CTX_TOKENS && h[threadIdx.x])
        atomicAdd(&pp.itok_hist[threadIdx.x], (unsigned long long)h[threadIdx.x]);
}

__global__ void classes_kernel(lsx_gpu_pipe pp, uint64_t px)
{
    uint64_t h[CTX_TOKENS];
    for (int t = 0; t < CTX_TOKENS; t++) h[t] = pp.itok_hist[t];
    uint8_t b[CTX_MAX_IB] = {0};
    int nib = lsx_intensity_bounds(h, px, LSX_NIB, b);
    pp.classes[0] = (uint8_t)nib;
    for (int i = 0; i < CTX_MAX_IB; i++) pp.classes[1 + i] = b[i];
}

cudaError_t lsx_gpu_finish_pipe(uint32_t W, uint32_t H, const lsx_gpu_pipe *pp, uint32_t *thr_hist,
                                cudaStream_t st)
{
    const size_t px = (size_t)W * H;
    cudaError_t rc = cudaMemsetAsync(pp->itok_hist, 0, CTX_TOKENS * sizeof(unsigned long long), st);
    if (rc == cudaSuccess && thr_hist) rc = cudaMemsetAsync(thr_hist, 0, sizeof(uint32_t) * LSX_THR_CELLS, st);
    if (rc != cudaSuccess) return rc;
    const unsigned act_blocks = blocks_for(px, ACT_THREADS * ACT_PIX);
    activity_kernel<<<act_blocks < 4096 ? act_blocks : 4096, ACT_THREADS, 0, st>>>(W, H, *pp, thr_hist);
    classes_kernel<<<1, 1, 0, st>>>(*pp, px);
    return cudaGetLastError();
}

cudaError_t lsx_gpu_residuals(const lsx_gpu_planes *pl, const lsx_gpu_pipe *pp, const uint16_t *ioff,
                              uint32_t *thr_hist, cudaStream_t st)
{
    const int bg = pl->p_bg != NULL;
    if (!pp->set) { /* set 0's column error levels */
        const dim3 rows((pl->W + CI_COLS - 1) / CI_COLS, pl->H);
        if (bg) colerr_inputs_kernel<1><<<rows, CI_COLS + 32, 0, st>>>(*pl, *pp);
        else colerr_inputs_kernel<0><<<rows, CI_COLS + 32, 0, st>>>(*pl, *pp);
        /* a block a member's 32 columns (column_pass) */
        const dim3 ce_grid((pl->W + CP_COLS - 1) / CP_COLS, lsx_npred(0, bg));
        column_errors_kernel<<<ce_grid, CP_THREADS, 0, st>>>(pl->W, pl->H, *pp, bg);
    }
    const dim3 grid((pl->W + SB_COLS - 1) / SB_COLS, (pl->H + SB_ROWS - 1) / SB_ROWS);
    switch (pp->set * 2 + bg) {
    case 0: strip_blend_kernel<0, 0><<<grid, SB_THREADS, 0, st>>>(*pl, *pp, ioff); break;
    case 1: strip_blend_kernel<0, 1><<<grid, SB_THREADS, 0, st>>>(*pl, *pp, ioff); break;
    case 2: strip_blend_kernel<1, 0><<<grid, SB_THREADS, 0, st>>>(*pl, *pp, ioff); break;
    case 3: strip_blend_kernel<1, 1><<<grid, SB_THREADS, 0, st>>>(*pl, *pp, ioff); break;
    case 4: strip_blend_kernel<2, 0><<<grid, SB_THREADS, 0, st>>>(*pl, *pp, ioff); break;
    case 5: strip_blend_kernel<2, 1><<<grid, SB_THREADS, 0, st>>>(*pl, *pp, ioff); break;
    default: strip_blend_kernel<3, 1><<<grid, SB_THREADS, 0, st>>>(*pl, *pp, ioff); break; /* set 3 has BG's flag */
    }
    return lsx_gpu_finish_pipe(pl->W, pl->H, pp, thr_hist, st);
}

/* ---- coding ---------------------------------------------------------------- */

/* First pixel of table interval j (lsx_table_index). */
__device__ __forceinline__ uint64_t interval_start(uint32_t j)
{
    return j < 8 ? (uint64_t)j << 7 : (uint64_t)(j - 7) << 10;
}

/* The intensity classes of candidate k: nib, then the bounds (NULL: one
 * class). */
__device__ __forceinline__ const uint8_t *cand_classes(const lsx_gpu_coding &c, int k)
{
    const lsx_gpu_cand &cd = c.cand[k];
    return cd.use_classes == 2 ? cd.classes : cd.use_classes ? c.pipe[c.cand_pipe[k]].classes : NULL;
}

__device__ __forceinline__ int cand_nib(const lsx_gpu_coding &c, int k)
{
    const uint8_t *cls = cand_classes(c, k);
    return cls ? cls[0] : 1;
}

#define CTX_REG 16 /* activity contexts whose thresholds interval_counts_kernel keeps in registers */
static_assert(LSX_NCTX <= CTX_REG && LSX_NCTX_WIDE <= CTX_REG && LSX_DP_NCTX <= CTX_REG,
              "the encoder's candidates take interval_counts_kernel's register path");
static_assert(CTX_REG <= 32, "an activity context is a bit of a word");

#define IC_THREADS 256

/* ctx_of for at most R + 1 contexts, the thresholds in registers: the
 * lowest bit of a word with a bit for each threshold the activity is
 * below and one for the last context (last_bit), so that the compares are
 * independent (the loop waited on a load from the candidate's table at
 * every step). */
template <int R>
static __device__ __forceinline__ int ctx_in_registers(uint32_t act, const uint32_t *thr, uint32_t last_bit)
{
    uint32_t below = last_bit;
#pragma unroll
    for (int q = 0; q < R; q++) below |= (uint32_t)(act < thr[q]) << q;
    return __ffs(below) - 1;
}

/* Each pixel's context of candidate k in table interval blockIdx.x
 * (written for the coding pass, rans_kernel) and the interval's token
 * counts of every (context, token) of the candidate's contexts (counts_kernel
 * and tables_kernel read no other).  The contexts are made here, from the
 * pipeline's activity and intensity token, rather than by a kernel of
 * their own that wrote them for this one to read back: that kernel took
 * 69 us for the echelle frame's 12 candidates (ncu, H100).
 *
 * Kept off each step's path, where ncu's source counters (H100) found the
 * step waiting on them: the warp's match (__match_any_sync, then one
 * atomic per distinct bin by its lowest lane), which was the largest
 * wait; each pixel now adds its own 1 to its bin, and the shared memory
 * unit serializes the lanes that share a bin (ncu footprint -28 % on the
 * bench frame, -26 % on the dark frame, whose small residuals share bins
 * most, -30 % on the echelle frame; 12.5 % of the samples had waited on
 * the match's result); the pipeline's arrays are read through restricted
 * pointers taken once (the compiler loaded them again from the pipeline
 * at every step, since the context stores might have changed them); the
 * shared addresses of the counts and of the intensity class of each of
 * the 64 tokens (core's lsx_intensity_class, made once per block) are
 * made once, where the compiler remade them from the block's shared
 * window at every step; and a pixel's index is 32-bit (the GPU encoder's
 * frames have fewer than 2^32 pixels, pixel_at). */
__global__ void __launch_bounds__(IC_THREADS) interval_counts_kernel(lsx_gpu_coding c)
{
    __shared__ uint32_t cnt[CTX_MAX * CTX_TOKENS];
    __shared__ uint8_t class_of_token[CTX_TOKENS];
    const int k = blockIdx.y;
    const uint32_t j = blockIdx.x;
    const lsx_gpu_cand &cd = c.cand[k];
    const lsx_gpu_pipe &pp = c.pipe[c.cand_pipe[k]];
    const uint8_t *cls = cand_classes(c, k);
    const int nib = cls ? cls[0] : 1, nctx = cd.nctx;
    const int used = nctx * nib * CTX_TOKENS;
    for (int t = threadIdx.x; t < used; t += IC_THREADS) cnt[t] = 0;
    if (threadIdx.x < CTX_TOKENS) {
        const uint8_t *bnd = cls ? cls + 1 : pp.classes + 1;
        class_of_token[threadIdx.x] = (uint8_t)lsx_intensity_class((int)threadIdx.x, bnd, nib);
    }
    uint32_t thr[CTX_REG - 1];
#pragma unroll
    for (int q = 0; q < CTX_REG - 1; q++) thr[q] = cd.thr[q];
    __syncthreads();
    const uint32_t *__restrict__ act = pp.act;
    const int32_t *__restrict__ res = pp.res;
    const uint8_t *__restrict__ itok = pp.itok;
    uint8_t *__restrict__ ctx = c.ctx + (size_t)k * c.px;
    const uint32_t cnt_at = (uint32_t)__cvta_generic_to_shared(cnt);
    const uint32_t class_at = (uint32_t)__cvta_generic_to_shared(class_of_token);
    const uint32_t last_bit = 1u << (nctx - 1);
    const uint64_t b0 = j + 1 < c.nint ? interval_start(j + 1) : c.px;
    const uint32_t a = (uint32_t)interval_start(j), b = (uint32_t)(b0 < c.px ? b0 : c.px);
    for (uint32_t i = a + threadIdx.x; i < b; i += IC_THREADS) {
        const uint32_t av = __ldg(act + i), t = __ldg(itok + i);
        const int32_t e = __ldg(res + i);
        const int cx = nctx <= LSX_NCTX  ? ctx_in_registers<LSX_NCTX - 1>(av, thr, last_bit)
                       : nctx <= CTX_REG ? ctx_in_registers<CTX_REG - 1>(av, thr, last_bit)
                                         : ctx_of(av, cd.thr, nctx);
        uint32_t ic;
        asm volatile("ld.shared.u8 %0, [%1];" : "=r"(ic) : "r"(class_at + t));
        const uint32_t cxt = (uint32_t)(cx * nib) + ic;
        ctx[i] = (uint8_t)cxt;
        int nraw;
        const uint32_t bin = cxt * CTX_TOKENS + (uint32_t)ctx_token((uint32_t)(e < 0 ? -e : e), &nraw);
        asm volatile("red.shared.add.u32 [%0], 1;" ::"r"(cnt_at + 4 * bin) : "memory");
    }
    __syncthreads();
    uint16_t *h = c.hist + ((size_t)k * c.nint + j) * (CTX_MAX * CTX_TOKENS);
    for (int t = threadIdx.x; t < used; t += IC_THREADS) h[t] = (uint16_t)cnt[t];
}

/* ctx_model_refresh in two passes.  The counts every table is built from
 * (table j from the counts of intervals < j; j = 0: none) are a walk over
 * the intervals in order, since the C model halves a context's counts
 * where its total passes 2^16 at a refresh.  Counts: a warp per context
 * walks them (lane l holds tokens 2l and 2l + 1, one 32-bit word of an
 * interval's 16-bit counts) and writes the counts of every
 * TABLE_CHECKPOINT-th table into the table array.  Tables: a warp per
 * (context, run of TABLE_CHECKPOINT intervals) takes the counts at the
 * run's start, walks the run again (the same steps) and turns the counts
 * before each interval into its table, cum << 16 | freq, in place, with
 * the size estimate's bits.  The walk's counts then never go through
 * memory but at the checkpoints (every table's counts were written and
 * read again: about 400 MB a frame). */
#define TABLE_WARPS 16
#define COUNTS_AHEAD 16 /* intervals a group of the walk */
#define TABLE_CHECKPOINT 32

/* lsx_log2_q16(f) for every frequency f of 2^15 (index f; entry 0
 * unused), made once per device (lsx_gpu_init_tables): the size
 * estimate's log2 (tables_kernel). */
__device__ uint32_t log2_of_freq[(1u << CTX_PROB_BITS) + 1];

/* A lane's place in a walk: the counts of its two tokens and the
 * context's total, kept exact (an interval's total is summed off the
 * chain, and the warp sums the halved counts again only where it halves). */
struct counts_state {
    uint32_t c0, c1, total;
};

/* The counts after interval j's word v (its total at, summed ahead) */
__device__ __forceinline__ void counts_step(counts_state &st, uint32_t v, uint32_t at)
{
    st.c0 += v & 0xffffu, st.c1 += v >> 16;
    st.total += at;
    if (st.total > CTX_HALVE_AT) {
        st.c0 = (st.c0 + 1) >> 1, st.c1 = (st.c1 + 1) >> 1;
        st.total = warp_sum(st.c0 + st.c1);
    }
}

/* The lane's words of intervals j0 .. j0 + COUNTS_AHEAD - 1 (0 from end on) */
__device__ __forceinline__ void counts_load(const uint32_t *h, size_t wstride, uint32_t j0, uint32_t end,
                                            uint32_t (&v)[COUNTS_AHEAD])
{
#pragma unroll
    for (int q = 0; q < COUNTS_AHEAD; q++) v[q] = j0 + q < end ? h[(size_t)(j0 + q) * wstride] : 0;
}

/* The walk over the group of intervals j0 .. (their words v); the
 * checkpoints' counts stored */
__device__ __forceinline__ void counts_walk(const uint32_t (&v)[COUNTS_AHEAD], uint32_t j0, uint32_t nuse,
                                            counts_state &st, uint2 *tab, size_t tstride)
{
    /* An interval adds at most 1024 counts (its pixels), so where the
     * group cannot take the total past 2^16 nothing halves in it: the
     * counts are plain sums and the total one warp sum (most groups: a
     * context halves about every 32 intervals at the most) */
    if (st.total + (uint32_t)COUNTS_AHEAD * 1024 <= CTX_HALVE_AT) {
        uint32_t added = 0;
#pragma unroll
        for (int q = 0; q < COUNTS_AHEAD; q++) {
            const uint32_t j = j0 + (uint32_t)q;
            if (j >= nuse) break;
            st.c0 += v[q] & 0xffffu, st.c1 += v[q] >> 16;
            added += (v[q] & 0xffffu) + (v[q] >> 16);
            if ((j + 1) % TABLE_CHECKPOINT == 0) tab[(size_t)(j + 1) * tstride] = make_uint2(st.c0, st.c1);
        }
        st.total += warp_sum(added);
        return;
    }
    uint32_t at[COUNTS_AHEAD];
#pragma unroll
    for (int q = 0; q < COUNTS_AHEAD; q++) at[q] = warp_sum((v[q] & 0xffffu) + (v[q] >> 16));
#pragma unroll
    for (int q = 0; q < COUNTS_AHEAD; q++) {
        const uint32_t j = j0 + (uint32_t)q;
        if (j >= nuse) break;
        counts_step(st, v[q], at[q]);
        if ((j + 1) % TABLE_CHECKPOINT == 0) tab[(size_t)(j + 1) * tstride] = make_uint2(st.c0, st.c1);
    }
}

/* The walk's loads go through a ring of COUNTS_RING groups in shared
 * memory, a warp's own, by asynchronous copies (cp.async) issued
 * COUNTS_RING - 1 groups ahead of the group walked.  Loads into a ring of
 * registers left the kernel at 0.11 ms (under ncu) however few warps
 * walked, the cascade trial's one candidate too, as with two groups: the
 * compiler placed them near their use.  With the copies 0.08 ms, with the
 * groups that cannot halve summed at once (counts_walk) 0.06; a ring of 12
 * groups did no better than 4. */
#define COUNTS_WARPS 4
#define COUNTS_RING 4

__global__ void __launch_bounds__(32 * COUNTS_WARPS) counts_kernel(lsx_gpu_coding c)
{
    __shared__ uint32_t ring[COUNTS_WARPS][COUNTS_RING][COUNTS_AHEAD][32];
    const int k = blockIdx.y, warp = threadIdx.x / 32;
    const int ctx = blockIdx.x * COUNTS_WARPS + warp, lane = threadIdx.x & 31;
    const lsx_gpu_cand &cd = c.cand[k];
    const int nib = cand_nib(c, k);
    if (ctx >= cd.nctx * nib) return;
    const size_t stride = CTX_MAX * CTX_TOKENS;
    const uint32_t *h = (const uint32_t *)(c.hist + (size_t)k * c.nint * stride + ctx * CTX_TOKENS) + lane;
    uint2 *tab = (uint2 *)(c.table + (size_t)k * c.nint * stride + ctx * CTX_TOKENS) + lane;
    /* the counts before the first pixel: zeros, or the prior table's row of
     * the context's activity class (ctx_model_init) */
    counts_state st = {0, 0, 0};
    if (c.prior) {
        const int a = ctx / nib;
        const uint8_t *row = lsx_ctx_prior[a < LSX_PRIOR_ROWS ? a : LSX_PRIOR_ROWS - 1];
        st.c0 = row[2 * lane], st.c1 = row[2 * lane + 1];
    }
    tab[0] = make_uint2(st.c0, st.c1);
    st.total = warp_sum(st.c0 + st.c1);
    /* table j + 1 from table j's counts and interval j's.  A lane copies
     * and reads back only its own words: no barrier between the lanes. */
    const uint32_t nuse = c.nint - 1;
    uint32_t(*r)[COUNTS_AHEAD][32] = ring[warp];
    auto fetch = [&](uint32_t g) { /* group g into its slot; a commit every call */
        uint32_t *slot = &r[g % COUNTS_RING][0][lane];
#pragma unroll
        for (int q = 0; q < COUNTS_AHEAD; q++) {
            const uint32_t j = g * COUNTS_AHEAD + (uint32_t)q;
            if (j < nuse) __pipeline_memcpy_async(slot + q * 32, h + (size_t)j * (stride / 2), 4);
            else slot[q * 32] = 0;
        }
        __pipeline_commit();
    };
    for (uint32_t g = 0; g + 1 < COUNTS_RING; g++) fetch(g);
    for (uint32_t g = 0; g * COUNTS_AHEAD < nuse; g++) {
        fetch(g + COUNTS_RING - 1); /* into the slot of group g - 1, walked */
        __pipeline_wait_prior(COUNTS_RING - 1);
        uint32_t v[COUNTS_AHEAD];
#pragma unroll
        for (int q = 0; q < COUNTS_AHEAD; q++) v[q] = r[g % COUNTS_RING][q][lane];
        counts_walk(v, g * COUNTS_AHEAD, nuse, st, tab, stride / 2);
    }
}

/* The bits of token t at probability 1 (lsx_token_cost_q16). */
static __device__ __forceinline__ uint32_t token_bits_q16(int t) { return lsx_token_cost_q16(1, t, CTX_PROB_BITS); }

/* The table of the counts st (refresh_context): where WRITE, stored at tj
 * as cum << 16 | freq, lane l's tokens 2l and 2l + 1; where EST, returns
 * the estimate's bits of the interval's tokens v of this context under it
 * (every lane). */
template <bool WRITE, bool EST>
static __device__ __forceinline__ uint32_t context_table(const counts_state &st, uint32_t v, uint2 *tj, int lane)
{
    const uint32_t one = 1u << CTX_PROB_BITS, spare = one - CTX_TOKENS;
    const int t0 = 2 * lane, t1 = 2 * lane + 1;
    uint32_t f0, f1;
    if (st.total == 0) {
        f0 = f1 = one / CTX_TOKENS;
    } else {
        /* total <= 2^16: a context starts from at most 64 x 255 counts (the
         * prior's row) and an interval adds at most 1024 (its pixels), and
         * the walk halves a total above 2^16 (CTX_HALVE_AT) to at most
         * (2^16 + 1024) / 2 + 32 before the next interval's table.  So
         * c * spare < 2^17 * (2^15 - 64) < 2^32: the 32-bit quotient is the
         * 64-bit one of refresh_context.  A total of 2^17 or more would be a
         * broken invariant: the launch fails (the host's CK sees it) rather
         * than coding with wrong tables. */
        if (st.total >= (1u << 17)) __trap();
        f0 = 1 + st.c0 * spare / st.total;
        f1 = 1 + st.c1 * spare / st.total;
        /* the most counted token, the lowest index among equals (a count
         * is at most the total, < 2^17: the key fits in 32 bits) */
        const uint32_t key = __reduce_max_sync(0xffffffffu, max(st.c0 << 8 | (uint32_t)(255 - t0),
                                                                 st.c1 << 8 | (uint32_t)(255 - t1)));
        const int best = 255 - (int)(key & 255);
        const uint32_t sum = warp_sum(f0 + f1);
        if (best == t0) f0 += one - sum;
        if (best == t1) f1 += one - sum;
    }
    /* the size estimate (model_pass of core/lsmix_codec.c): the bits of
     * this interval's tokens of this context under this table.  A token
     * costs at most 29 bits (lsx_token_cost_q16 at frequency 1: < 2^21 in
     * Q16) and an interval has at most 1024 pixels, so the warp's sum is
     * below 2^31: 32-bit sums are the 64-bit ones. */
    uint32_t bits = 0;
    if (EST) {
        const uint32_t n0 = v & 0xffffu, n1 = v >> 16;
        if (n0) bits += n0 * (token_bits_q16(t0) - log2_of_freq[f0]);
        if (n1) bits += n1 * (token_bits_q16(t1) - log2_of_freq[f1]);
    }
    if (WRITE) {
        /* exclusive prefix over tokens 0..63: the lanes' pairs inclusive */
        uint32_t s = f0 + f1;
        for (int o = 1; o < 32; o <<= 1) {
            const uint32_t a = __shfl_up_sync(0xffffffffu, s, o);
            if (lane >= o) s += a;
        }
        const uint32_t cum0 = s - f0 - f1;
        *tj = make_uint2(cum0 << 16 | f0, (cum0 + f0) << 16 | f1);
    }
    return EST ? warp_sum(bits) : 0;
}

/* Every (run of TABLE_CHECKPOINT intervals, context) of every candidate a
 * warp: the walk from the run's checkpoint, each interval's table before
 * its counts are added (context_table).  EST: the estimate's bits summed
 * per block, then added to the candidate's total (exact integers: the
 * order does not matter).  WRITE: the tables stored over the counts (a
 * run's checkpoint too: after that, no second pass).  The candidates'
 * estimates are made without the tables (about 150 MB of stores a frame),
 * and only the winner's tables then (lsx_gpu_model, lsx_gpu_tables). */
template <bool WRITE, bool EST>
__global__ void __launch_bounds__(32 * TABLE_WARPS) tables_kernel(lsx_gpu_coding c)
{
    __shared__ unsigned long long block_bits;
    const int k = blockIdx.y;
    const uint64_t w = (uint64_t)blockIdx.x * TABLE_WARPS + threadIdx.x / 32; /* run * CTX_MAX + context */
    const int lane = threadIdx.x & 31;
    const uint32_t nrun = (c.nint + TABLE_CHECKPOINT - 1) / TABLE_CHECKPOINT;
    if (threadIdx.x == 0) block_bits = 0;
    __syncthreads();
    const int ctx = (int)(w % CTX_MAX);
    if (w < (uint64_t)nrun * CTX_MAX && ctx < c.cand[k].nctx * cand_nib(c, k)) {
        const size_t stride = CTX_MAX * CTX_TOKENS;
        const uint32_t j0 = (uint32_t)(w / CTX_MAX) * TABLE_CHECKPOINT;
        const uint32_t end = min(j0 + TABLE_CHECKPOINT, c.nint);
        const uint32_t *h = (const uint32_t *)(c.hist + (size_t)k * c.nint * stride + ctx * CTX_TOKENS) + lane;
        uint2 *tab = (uint2 *)(c.table + (size_t)k * c.nint * stride + ctx * CTX_TOKENS) + lane;
        uint32_t va[COUNTS_AHEAD], vb[COUNTS_AHEAD];
        static_assert(TABLE_CHECKPOINT == 2 * COUNTS_AHEAD, "a run is two groups");
        counts_load(h, stride / 2, j0, end, va);
        counts_load(h, stride / 2, j0 + COUNTS_AHEAD, end, vb);
        /* a run without a pixel of the context adds no counts and no
         * bits, and nothing reads its tables (rans_kernel looks up a
         * pixel's own context's): skipped.  (The same test an interval,
         * inside the walk, made the echelle frame's estimate 108 -> 129 us
         * under ncu: the walk's intervals no longer one block of code.) */
        uint32_t any = 0;
#pragma unroll
        for (int q = 0; q < COUNTS_AHEAD; q++) any |= va[q] | vb[q];
        if (__any_sync(0xffffffffu, any != 0)) {
            const uint2 start = tab[(size_t)j0 * (stride / 2)];
            counts_state st = {start.x, start.y, warp_sum(start.x + start.y)};
            uint64_t bits = 0;
#pragma unroll
            for (int q = 0; q < TABLE_CHECKPOINT; q++) {
                const uint32_t j = j0 + (uint32_t)q;
                if (j >= end) break;
                const uint32_t v = q < COUNTS_AHEAD ? va[q] : vb[q - COUNTS_AHEAD];
                bits += context_table<WRITE, EST>(st, v, tab + (size_t)j * (stride / 2), lane);
                if (j + 1 < end) counts_step(st, v, warp_sum((v & 0xffffu) + (v >> 16)));
            }
            if (EST && lane == 0 && bits) atomicAdd(&block_bits, (unsigned long long)bits);
        }
    }
    __syncthreads();
    if (EST && threadIdx.x == 0 && block_bits) atomicAdd(c.bits + k, block_bits);
}

/* rANS (ctx_rans_encode): a block per (segment, candidate).  The symbols
 * of 256 pixels at a time are staged in shared memory by warps 1-3 while
 * lane 0 of warp 0 runs the chain over the previous chunk, back to front,
 * into a shared buffer; warps 1-3 copy a chunk's bytes to the end of the
 * segment's slot while the chain runs the next.
 *
 * The chain's instructions set the stage's time as much as its latency
 * (about 1000 chains share the 528 schedulers), so the stagers prepare
 * every value that does not depend on the state: a step of the chain is
 * its compares against x, two byte stores, the shifts and one
 * multiply-add (43 instructions a pixel against 74 with the symbols
 * staged as the token's entry and a packed word; the stage 1.84 -> 1.33-
 * 1.39 ms on the H100, docs/GPU.md).  512 pixels a chunk would not fit
 * 48 KiB of shared memory; 128 took 2.2 ms. */
#define RANS_CHUNK 256
#define RANS_THREADS 128
#define RANS_STAGERS (RANS_THREADS - 32)

/* A staged pixel, at index q + 1 (so that the chain reads the next
 * pixel's entries at [i] with no test for i = 0; [0] is never written):
 *   sgn = {the sign step's bound, its multiplier 1 or 2, the sign bit, the raw value}
 *   raw = {the raw step's bound for one byte, for two bytes, its multiplier 2^nraw,
 *          the token step's bound for two bytes}
 *   tok = the token's entry {rcp, bound for one byte, bias, (2^P - f) | shift << 24}
 *         (aurp_rans_entry, rans_entry.cuh)
 * A missing step (no sign, no raw bits) has bounds 2^32 - 1, multiplier 1
 * and value 0, which the state (< 2^31) never reaches.  A bound for two
 * bytes is 2^8 times the one for one byte, or 2^32 - 1 where that is at
 * least 2^32: x >= 2^8 xmax is (x >> 8) >= xmax, the second byte's test. */
struct rans_chunk {
    uint4 sgn[RANS_CHUNK + 1];
    uint4 raw[RANS_CHUNK + 1];
    uint4 tok[RANS_CHUNK + 1];
};

/* aurp_rans_rcp(f) = ceil(2^(31+S) / f), S = ceil(log2 f), for every
 * frequency f of 2^15 (index f; entries 0 and 1 unused), made once per
 * device: the table aurp_rans_entry reads the tokens' reciprocals from. */
__device__ uint32_t rcp_of_freq[(1u << CTX_PROB_BITS) + 1];

__global__ void freq_tables_kernel()
{
    const uint32_t f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f < 1 || f > (1u << CTX_PROB_BITS)) return;
    log2_of_freq[f] = lsx_log2_q16(f);
    if (f >= 2) rcp_of_freq[f] = aurp_rans_rcp(f);
}

cudaError_t lsx_gpu_init_tables(cudaStream_t st)
{
    freq_tables_kernel<<<((1u << CTX_PROB_BITS) + 256) / 256, 256, 0, st>>>();
    return cudaGetLastError();
}

/* The bound of a step for its second byte, saturated (see rans_chunk). */
static __device__ __forceinline__ uint32_t second_byte_bound(uint32_t xmax)
{
    return xmax >= (1u << 24) ? 0xffffffffu : xmax << 8;
}

/* A reciprocal read ahead (aurp_rans_entry asks for it only where f >= 2). */
struct rcp_loaded {
    uint32_t rcp;
    __device__ __forceinline__ uint32_t operator()(uint32_t, uint32_t) const { return rcp; }
};

/* Stager t0 of `step` stages pixels t0, t0 + step, ... of the n from a.
 * A pixel's four global loads depend on each other (residual and context,
 * then the table entry, then the reciprocal), so each kind is loaded for
 * all of a stager's pixels before the next kind is needed. */
__device__ void stage_chunk(const lsx_gpu_coding &c, int k, uint64_t a, uint32_t n, rans_chunk *buf, int t0,
                            int step)
{
    constexpr int per = (RANS_CHUNK + RANS_STAGERS - 1) / RANS_STAGERS;
    const int32_t *res = c.pipe[c.cand_pipe[k]].res;
    const uint8_t *ctx = c.ctx + (size_t)k * c.px;
    const uint32_t *tab = c.table + (size_t)k * c.nint * (CTX_MAX * CTX_TOKENS);
    int32_t e_of[per];
    uint32_t ctx_of[per], cf_of[per], rcp_of[per];
    int nraw_of[per];
    /* a segment's first chunk leaves out the symbols its carry took (the
     * state of the segment before has them: lsmix_carry.h) */
    lsx_carry_end own = {0, 0};
    if (LSX_CARRY && !LSX_SEG_LENGTHS && (a & (((uint64_t)1 << LSX_SEG_LOG2) - 1)) == 0 && a > 0)
        lsx_carry(res + a, c.px - a, &own);
#pragma unroll
    for (int r = 0; r < per; r++) {
        const uint32_t q = (uint32_t)(t0 + r * step);
        e_of[r] = q < n ? __ldg(res + a + q) : 0;
        ctx_of[r] = q < n ? __ldg(ctx + a + q) : 0;
    }
#pragma unroll
    for (int r = 0; r < per; r++) {
        const uint32_t q = (uint32_t)(t0 + r * step);
        const int t = ctx_token((uint32_t)(e_of[r] < 0 ? -e_of[r] : e_of[r]), &nraw_of[r]);
        cf_of[r] = q < n ? __ldg(tab + (size_t)lsx_table_index(a + q) * (CTX_MAX * CTX_TOKENS) +
                                 ctx_of[r] * CTX_TOKENS + t)
                         : 0u;
    }
#pragma unroll
    for (int r = 0; r < per; r++) {
        const uint32_t f = cf_of[r] & 0xffffu;
        rcp_of[r] = f >= 2 ? __ldg(rcp_of_freq + f) : 0u;
    }
#pragma unroll
    for (int r = 0; r < per; r++) {
        const uint32_t q = (uint32_t)(t0 + r * step);
        if (q >= n) break;
        const int32_t e = e_of[r];
        const uint32_t v = (uint32_t)(e < 0 ? -e : e), has_sign = v != 0 && !lsx_carry_sign(&own, q);
        const int nraw = lsx_carry_raw(&own, q) ? 0 : nraw_of[r];
        const uint4 tok = aurp_rans_entry(cf_of[r] & 0xffffu, cf_of[r] >> 16, CTX_PROB_BITS, rcp_loaded{rcp_of[r]});
        const uint32_t raw_bound = nraw ? (AURP_RANS_L >> nraw) << 8 : 0xffffffffu;
        buf->sgn[q + 1] = make_uint4(has_sign ? 1u << 30 : 0xffffffffu, 1u + has_sign, (uint32_t)(e < 0) & has_sign,
                                     v & ((1u << nraw) - 1));
        buf->raw[q + 1] = make_uint4(raw_bound, nraw ? second_byte_bound(raw_bound) : 0xffffffffu, 1u << nraw,
                                     second_byte_bound(tok.y));
        buf->tok[q + 1] = tok;
    }
}

/* A pixel writes at most 5 bytes (sign 1, raw 2, token 2). */
#define RANS_CHUNK_BYTES (5 * RANS_CHUNK)
/* Bytes below a chunk's output that the chain's unconditional stores of
 * bytes it then does not emit may reach (two). */
#define RANS_OUT_SLACK 4

/* The renormalisation before a step whose bounds for one and for two
 * bytes are b1 and b2 (rans_chunk): x shifted past the bytes it emits
 * (b2 reached implies b1 reached); *n of them.  The bytes are stored
 * after the pixel's steps (store_upto2), off the chain. */
static __device__ __forceinline__ uint32_t renorm_upto2(uint32_t x, uint32_t b1, uint32_t b2, int *n)
{
    const bool c1 = x >= b1, c2 = x >= b2;
    *n = (int)c1 + (int)c2;
    return c2 ? x >> 16 : c1 ? x >> 8 : x;
}

/* A step's two candidate bytes of the state v it renormalised, stored
 * below p unconditionally; p moved past the n it emitted. */
static __device__ __forceinline__ void store_upto2(uint8_t *&p, uint32_t v, int n)
{
    p[-1] = (uint8_t)v;
    p[-2] = (uint8_t)(v >> 8);
    p -= n;
}

/* Chunk q's bytes (the top `len` bytes of out, a buffer of `bytes`) to
 * the slot, below the `before` bytes of the chunks after it: only where
 * they fit above the slot's 4 bytes for the state (else the segment
 * overflows, as ctx_rans_encode's does, and nothing is written). */
template <uint32_t bytes>
__device__ void copy_chunk_out(const uint8_t *out, uint32_t len, uint32_t before, uint8_t *end, uint32_t room,
                               int t0, int step)
{
    if (before + len > room) return;
    uint8_t *dst = end - before - len;
    const uint8_t *src = out + bytes - len;
    for (uint32_t i = (uint32_t)t0; i < len; i += (uint32_t)step) dst[i] = src[i];
}

__global__ void __launch_bounds__(RANS_THREADS) rans_kernel(lsx_gpu_coding c)
{
    if (c.bin_bits && lsx_sign_model_wins(c.bin_bits[0], c.bin_bits[1])) return; /* the adaptive sign codes it */
    __shared__ rans_chunk buf[2];
    /* the chain's bytes of a chunk, back to front from the top; copied to
     * the slot by warps 1-3 during the next chunk: the chain's positions
     * are 32-bit shared offsets, and the slot's room is checked once a
     * chunk, not at every byte */
    __shared__ uint8_t out_mem[2][RANS_OUT_SLACK + RANS_CHUNK_BYTES];
    __shared__ uint32_t out_len[2], out_before[2];
    const int k = blockIdx.y;
    const uint32_t s = blockIdx.x;
    const uint64_t a = (uint64_t)s << LSX_SEG_LOG2;
    const uint64_t b = a + ((uint64_t)1 << LSX_SEG_LOG2) < c.px ? a + ((uint64_t)1 << LSX_SEG_LOG2) : c.px;
    const uint32_t nch = (uint32_t)((b - a + RANS_CHUNK - 1) / RANS_CHUNK);
    uint8_t *const end = c.slots + ((size_t)k * c.nseg + s + 1) * c.slot;
    const uint32_t room = (uint32_t)c.slot - 4; /* the bytes before the state's 4 */
    uint32_t x = AURP_RANS_L, written = 0;
    if (LSX_CARRY && !LSX_SEG_LENGTHS && threadIdx.x == 0 && b < c.px) /* the next segment's carry (lsmix_carry.h) */
        x += lsx_carry(c.pipe[c.cand_pipe[k]].res + b, c.px - b, NULL);

    auto out = [&](uint32_t q) { return out_mem[q & 1] + RANS_OUT_SLACK; };
    auto chunk_len = [&](uint32_t q) { return (uint32_t)min((uint64_t)RANS_CHUNK, b - a - (uint64_t)q * RANS_CHUNK); };
    if (threadIdx.x >= 32) /* the stagers (warp 0's negative indices would repeat their pixels) */
        stage_chunk(c, k, a + (uint64_t)(nch - 1) * RANS_CHUNK, chunk_len(nch - 1), &buf[(nch - 1) & 1],
                    (int)threadIdx.x - 32, RANS_STAGERS);
    __syncthreads();
    for (uint32_t q = nch; q-- > 0;) {
        if (threadIdx.x == 0) {
            /* The chain: a pixel is three steps (sign, raw bits, token),
             * each the encoder's renormalisation and then its symbol.  A
             * step writes its two candidate bytes below p unconditionally
             * and moves p past the ones it emits (c2 implies c1, so they
             * are the low bytes in order); a byte not emitted lies below
             * p, where the next store overwrites it or, at the bottom, in
             * the slack; only [p, top) is copied out.  The next pixel's
             * entries are read before this pixel's steps, off the chain. */
            const rans_chunk &in = buf[q & 1];
            uint8_t *const o = out(q);
            uint8_t *p = o + RANS_CHUNK_BYTES;
            const uint32_t len = chunk_len(q);
            const uint4 *sgn = in.sgn + len, *raw = in.raw + len, *tok = in.tok + len;
            uint4 sg = *sgn, rw = *raw, t = *tok;
            for (uint32_t i = len; i-- > 0;) {
                const uint4 sg_n = *--sgn, rw_n = *--raw, t_n = *--tok;
                /* the steps on the state; the states before each
                 * renormalisation (x0, y, z) are kept for the bytes */
                const uint32_t x0 = x;
                const bool s1 = x0 >= sg.x; /* the sign's bound 2^30: at most one byte */
                const uint32_t y = (s1 ? x0 >> 8 : x0) * sg.y + sg.z;
                int n_raw, n_tok;
                const uint32_t z = renorm_upto2(y, rw.x, rw.y, &n_raw) * rw.z + sg.w;
                const uint32_t zr = renorm_upto2(z, t.y, rw.w, &n_tok);
                const uint32_t qq = __umulhi(zr, t.x) >> (t.w >> 24);
                x = zr + t.z + qq * (t.w & 0xffffffu);
                /* the bytes, in the order the steps emit them: a store
                 * here does not hold up the state's registers */
                p[-1] = (uint8_t)x0;
                p -= s1;
                store_upto2(p, y, n_raw);
                store_upto2(p, z, n_tok);
                sg = sg_n, rw = rw_n, t = t_n;
            }
            const uint32_t chunk_bytes = (uint32_t)(o + RANS_CHUNK_BYTES - p);
            out_len[q & 1] = chunk_bytes;
            out_before[q & 1] = written;
            written += chunk_bytes;
        } else if (threadIdx.x >= 32) {
            if (q > 0)
                stage_chunk(c, k, a + (uint64_t)(q - 1) * RANS_CHUNK, chunk_len(q - 1), &buf[(q - 1) & 1],
                            (int)threadIdx.x - 32, RANS_STAGERS);
            if (q + 1 < nch) /* the chunk before, coded in the last round */
                copy_chunk_out<RANS_CHUNK_BYTES>(out(q + 1), out_len[(q + 1) & 1], out_before[(q + 1) & 1], end,
                                                 room, (int)threadIdx.x - 32, RANS_STAGERS);
        }
        __syncthreads();
    }
    /* chunk 0 */
    copy_chunk_out<RANS_CHUNK_BYTES>(out(0), out_len[0], out_before[0], end, room, threadIdx.x, RANS_THREADS);
    if (threadIdx.x == 0) {
        const bool overflow = written > room;
        if (!overflow) {
            uint8_t *p = end - written - 4;
            p[0] = (uint8_t)x, p[1] = (uint8_t)(x >> 8), p[2] = (uint8_t)(x >> 16), p[3] = (uint8_t)(x >> 24);
        }
        c.seg_len[(size_t)k * c.nseg + s] = overflow ? 0u : written + 4;
    }
}

/* ---- the adaptive sign and top raw bit (core/lsmix_sign.h) ----------------- */

#define BIN_THREADS 256

/* Interval blockIdx.x's counts of candidate k's binary contexts
 * (ctx_bin_count of every pixel, carried or not): the sign in
 * context lsx_sign_ctx(b, t) where e != 0, the top raw bit in context t
 * where the token has raw bits.  At most 1024 a cell (an interval's
 * pixels): 16-bit counts. */
__global__ void __launch_bounds__(BIN_THREADS) bin_counts_kernel(lsx_gpu_coding c)
{
    __shared__ uint32_t cnt[2 * LSX_GPU_BIN_CTX];
    const int k = 0; /* (one candidate) */
    const uint32_t j = blockIdx.x;
    const lsx_gpu_pipe &pp = c.pipe[c.cand_pipe[k]];
    for (int q = threadIdx.x; q < 2 * LSX_GPU_BIN_CTX; q += BIN_THREADS) cnt[q] = 0;
    __syncthreads();
    const int32_t *__restrict__ res = pp.res;
    const uint8_t *__restrict__ sb = pp.sbase;
    const uint64_t b0 = j + 1 < c.nint ? interval_start(j + 1) : c.px;
    const uint32_t a = (uint32_t)interval_start(j), b = (uint32_t)(b0 < c.px ? b0 : c.px);
    for (uint32_t i = a + threadIdx.x; i < b; i += BIN_THREADS) {
        const int32_t e = __ldg(res + i);
        const uint32_t v = (uint32_t)(e < 0 ? -e : e);
        int nraw;
        const int t = ctx_token(v, &nraw);
        if (v != 0) atomicAdd(&cnt[2 * lsx_sign_ctx(__ldg(sb + i), t) + (e < 0)], 1u);
        if (nraw > 0) atomicAdd(&cnt[2 * (LSX_SIGN_CTX + t) + (v >> (nraw - 1) & 1)], 1u);
    }
    __syncthreads();
    uint16_t *h = c.bin_hist + (size_t)j * (2 * LSX_GPU_BIN_CTX);
    for (int q = threadIdx.x; q < 2 * LSX_GPU_BIN_CTX; q += BIN_THREADS) h[q] = (uint16_t)cnt[q];
}

/* The walk over the intervals (sign_pass): table j is lsx_bin_refresh of
 * the counts before interval j, halved in place there as the C model's
 * (table 0 that of no counts).  A warp a binary context, a tile of
 * BIN_TILE intervals at a time: the warp loads the tile's counts, lane 0
 * walks them (the halving makes it a recurrence: an add, a compare and a
 * shift an interval) keeping the counts each table is made of, and then
 * the 32 lanes make the tables (a division each) and the estimate's bits
 * (lsx_sign_model_wins: each interval's counts under its table) in
 * parallel.  (A thread a context making its tables as it walked took the
 * frame's 1031 divisions one after another.) */
#define BIN_WARPS 4
#define BIN_TILE 512

__global__ void __launch_bounds__(32 * BIN_WARPS) bin_tables_kernel(lsx_gpu_coding c)
{
    __shared__ uint32_t counts[BIN_WARPS][BIN_TILE], before[BIN_WARPS][BIN_TILE];
    __shared__ uint32_t log2q[(1u << LSX_BIN_BITS) + 1]; /* log2_of_freq of the binary frequencies */
    for (uint32_t f = threadIdx.x; f <= (1u << LSX_BIN_BITS); f += blockDim.x) log2q[f] = log2_of_freq[f];
    __syncthreads();
    const int warp = threadIdx.x / 32, lane = threadIdx.x & 31;
    const int q = blockIdx.x * BIN_WARPS + warp; /* the binary context */
    if (q >= LSX_GPU_BIN_CTX) return;
    const uint32_t *h = (const uint32_t *)c.bin_hist + q;
    uint16_t *f = c.bin_f0 + q;
    uint32_t n[2] = {0, 0}; /* lane 0's counts */
    unsigned long long on = 0, uniform = 0;
    for (uint32_t j0 = 0; j0 < c.nint; j0 += BIN_TILE) {
        const uint32_t len = min((uint32_t)BIN_TILE, c.nint - j0);
        for (uint32_t r = lane; r < len; r += 32) counts[warp][r] = __ldg(h + (size_t)(j0 + r) * LSX_GPU_BIN_CTX);
        __syncwarp();
        if (lane == 0) { /* the tile's counts read ahead, 16 at a time, off the walk's chain */
            for (uint32_t r0 = 0; r0 < len; r0 += 16) {
                uint32_t v[16];
#pragma unroll
                for (int r = 0; r < 16; r++) v[r] = r0 + r < len ? counts[warp][r0 + r] : 0u;
#pragma unroll
                for (int r = 0; r < 16; r++) {
                    if (r0 + r >= len) break;
                    lsx_bin_halve(n); /* the refresh before interval j0 + r0 + r */
                    before[warp][r0 + r] = n[0] | n[1] << 16; /* (at most 1024 each after it) */
                    n[0] += v[r] & 0xffffu, n[1] += v[r] >> 16;
                }
            }
        }
        __syncwarp();
        for (uint32_t r = lane; r < len; r += 32) {
            const uint32_t b = before[warp][r], v = counts[warp][r];
            const uint32_t f0 = lsx_bin_f0(b & 0xffffu, b >> 16), c0 = v & 0xffffu, c1 = v >> 16;
            f[(size_t)(j0 + r) * LSX_GPU_BIN_CTX] = (uint16_t)f0;
            on += (unsigned long long)c0 * lsx_bin_cost_q16(f0, log2q) +
                  (unsigned long long)c1 * lsx_bin_cost_q16((1u << LSX_BIN_BITS) - f0, log2q);
            uniform += (unsigned long long)(c0 + c1) << LSX_COST_Q;
        }
        __syncwarp();
    }
    on = warp_sum((uint64_t)on), uniform = warp_sum((uint64_t)uniform);
    if (lane == 0 && uniform) atomicAdd(c.bin_bits, on), atomicAdd(c.bin_bits + 1, uniform);
}

cudaError_t lsx_gpu_bin_tables(const lsx_gpu_coding *c, cudaStream_t st)
{
    cudaError_t rc = cudaMemsetAsync(c->bin_bits, 0, 2 * sizeof *c->bin_bits, st);
    if (rc != cudaSuccess) return rc;
    bin_counts_kernel<<<c->nint, BIN_THREADS, 0, st>>>(*c);
    bin_tables_kernel<<<(LSX_GPU_BIN_CTX + BIN_WARPS - 1) / BIN_WARPS, 32 * BIN_WARPS, 0, st>>>(*c);
    return cudaGetLastError();
}

/* rANS with the adaptive sign and top raw bit: rans_kernel's layout (a
 * block per segment, warps 1-3 stage a chunk while lane 0 of warp 0 runs
 * the chain over the one before) with a pixel's four symbols (ctx_symbols
 * with b >= 0: token, top raw bit, the other raw bits, sign), coded back
 * to front: sign, other raw bits, top raw bit, token.
 *   sgn, top = a binary symbol's entry (aurp_rans_entry, precision
 *              LSX_BIN_BITS; its frequency is at least LSX_BIN_FMIN, so
 *              its renormalisation emits at most one byte);
 *   rest     = {the uniform step's bound for one byte, for two bytes, its
 *              multiplier 2^(nraw - 1), the value} as rans_chunk's raw;
 *   tok      = the token's entry, tok2 its bound for two bytes.
 * A missing symbol is an entry that leaves the state as it is (binary:
 * {0, 2^32 - 1, 0, 0}; rest: bounds 2^32 - 1, multiplier 1, value 0). */
struct rans_sgn_chunk {
    uint4 sgn[RANS_CHUNK + 1];
    uint4 rest[RANS_CHUNK + 1];
    uint4 top[RANS_CHUNK + 1];
    uint4 tok[RANS_CHUNK + 1];
    uint32_t tok2[RANS_CHUNK + 1];
};

/* A pixel writes at most 6 bytes (sign 1, other raw bits 2, top raw bit 1, token 2). */
#define RANS_SGN_CHUNK_BYTES (6 * RANS_CHUNK)

/* A binary symbol's entry: bit 0 cum 0 freq f0, bit 1 cum f0 freq 2^12 - f0
 * (32 <= f0 <= 2^12 - 32), its reciprocal read ahead. */
static __device__ __forceinline__ uint4 bin_entry(uint32_t f0, uint32_t bit, uint32_t rcp)
{
    return aurp_rans_entry(bit ? (1u << LSX_BIN_BITS) - f0 : f0, bit ? f0 : 0u, LSX_BIN_BITS, rcp_loaded{rcp});
}

/* stage_chunk's loads for the four symbols, each kind for all of a
 * stager's pixels before the next kind needs it: residual, context and
 * sign base; the token's table entry and the binary tables' f0; the
 * reciprocals. */
__device__ void stage_chunk_sgn(const lsx_gpu_coding &c, uint64_t a, uint32_t n, rans_sgn_chunk *buf, int t0,
                                int step)
{
    constexpr int per = (RANS_CHUNK + RANS_STAGERS - 1) / RANS_STAGERS;
    const lsx_gpu_pipe &pp = c.pipe[c.cand_pipe[0]];
    const int32_t *res = pp.res;
    const uint8_t *sb = pp.sbase, *ctx = c.ctx;
    const uint32_t *tab = c.table;
    int32_t e_of[per];
    uint32_t ctx_of[per], sb_of[per], cf_of[per], sf_of[per], tf_of[per], rcp_of[per], srcp_of[per], trcp_of[per];
    int nraw_of[per], t_of[per];
    lsx_carry_end own = {0, 0};
    if (LSX_CARRY && !LSX_SEG_LENGTHS && (a & (((uint64_t)1 << LSX_SEG_LOG2) - 1)) == 0 && a > 0)
        lsx_carry(res + a, c.px - a, &own);
#pragma unroll
    for (int r = 0; r < per; r++) {
        const uint32_t q = (uint32_t)(t0 + r * step);
        e_of[r] = q < n ? __ldg(res + a + q) : 0;
        ctx_of[r] = q < n ? __ldg(ctx + a + q) : 0;
        sb_of[r] = q < n ? __ldg(sb + a + q) : 0;
    }
#pragma unroll
    for (int r = 0; r < per; r++) {
        const uint32_t q = (uint32_t)(t0 + r * step);
        const int32_t e = e_of[r];
        const uint32_t v = (uint32_t)(e < 0 ? -e : e);
        t_of[r] = ctx_token(v, &nraw_of[r]);
        const uint32_t j = lsx_table_index(a + q);
        const uint16_t *f0 = c.bin_f0 + (size_t)j * LSX_GPU_BIN_CTX;
        cf_of[r] = q < n ? __ldg(tab + (size_t)j * (CTX_MAX * CTX_TOKENS) + ctx_of[r] * CTX_TOKENS + t_of[r]) : 0u;
        sf_of[r] = q < n && v != 0 ? __ldg(f0 + lsx_sign_ctx((int)sb_of[r], t_of[r])) : 2048u;
        tf_of[r] = q < n && nraw_of[r] > 0 ? __ldg(f0 + LSX_SIGN_CTX + t_of[r]) : 2048u;
        /* the frequencies of the values coded: f0, or 2^12 - f0 for a 1 */
        if (e < 0) sf_of[r] = (1u << LSX_BIN_BITS) - sf_of[r];
        if (nraw_of[r] > 0 && (v >> (nraw_of[r] - 1) & 1)) tf_of[r] = (1u << LSX_BIN_BITS) - tf_of[r];
    }
#pragma unroll
    for (int r = 0; r < per; r++) {
        const uint32_t f = cf_of[r] & 0xffffu;
        rcp_of[r] = f >= 2 ? __ldg(rcp_of_freq + f) : 0u;
        srcp_of[r] = __ldg(rcp_of_freq + sf_of[r]);
        trcp_of[r] = __ldg(rcp_of_freq + tf_of[r]);
    }
    const uint4 none = make_uint4(0u, 0xffffffffu, 0u, 0u);
#pragma unroll
    for (int r = 0; r < per; r++) {
        const uint32_t q = (uint32_t)(t0 + r * step);
        if (q >= n) break;
        const int32_t e = e_of[r];
        const uint32_t v = (uint32_t)(e < 0 ? -e : e);
        const int nraw = lsx_carry_raw(&own, q) ? 0 : nraw_of[r];
        const uint32_t sbit = (uint32_t)(e < 0), tbit = nraw > 0 ? v >> (nraw - 1) & 1 : 0u;
        /* (sf_of, tf_of hold the coded value's frequency: back to f0) */
        const uint32_t sf0 = sbit ? (1u << LSX_BIN_BITS) - sf_of[r] : sf_of[r];
        const uint32_t tf0 = tbit ? (1u << LSX_BIN_BITS) - tf_of[r] : tf_of[r];
        buf->sgn[q + 1] = v != 0 && !lsx_carry_sign(&own, q) ? bin_entry(sf0, sbit, srcp_of[r]) : none;
        buf->top[q + 1] = nraw > 0 ? bin_entry(tf0, tbit, trcp_of[r]) : none;
        const int nrest = nraw > 1 ? nraw - 1 : 0;
        const uint32_t rest_bound = nrest ? (AURP_RANS_L >> nrest) << 8 : 0xffffffffu;
        buf->rest[q + 1] = make_uint4(rest_bound, nrest ? second_byte_bound(rest_bound) : 0xffffffffu, 1u << nrest,
                                      v & ((1u << nrest) - 1));
        const uint4 tok = aurp_rans_entry(cf_of[r] & 0xffffu, cf_of[r] >> 16, CTX_PROB_BITS, rcp_loaded{rcp_of[r]});
        buf->tok[q + 1] = tok;
        buf->tok2[q + 1] = second_byte_bound(tok.y);
    }
}

__global__ void __launch_bounds__(RANS_THREADS) rans_sgn_kernel(lsx_gpu_coding c)
{
    if (!lsx_sign_model_wins(c.bin_bits[0], c.bin_bits[1])) return; /* rans_kernel codes it */
    __shared__ rans_sgn_chunk buf[2];
    __shared__ uint8_t out_mem[2][RANS_OUT_SLACK + RANS_SGN_CHUNK_BYTES];
    __shared__ uint32_t out_len[2], out_before[2];
    const uint32_t s = blockIdx.x;
    const uint64_t a = (uint64_t)s << LSX_SEG_LOG2;
    const uint64_t b = a + ((uint64_t)1 << LSX_SEG_LOG2) < c.px ? a + ((uint64_t)1 << LSX_SEG_LOG2) : c.px;
    const uint32_t nch = (uint32_t)((b - a + RANS_CHUNK - 1) / RANS_CHUNK);
    uint8_t *const end = c.slots + ((size_t)s + 1) * c.slot;
    const uint32_t room = (uint32_t)c.slot - 4;
    uint32_t x = AURP_RANS_L, written = 0;
    if (LSX_CARRY && !LSX_SEG_LENGTHS && threadIdx.x == 0 && b < c.px)
        x += lsx_carry(c.pipe[c.cand_pipe[0]].res + b, c.px - b, NULL);

    auto out = [&](uint32_t q) { return out_mem[q & 1] + RANS_OUT_SLACK; };
    auto chunk_len = [&](uint32_t q) { return (uint32_t)min((uint64_t)RANS_CHUNK, b - a - (uint64_t)q * RANS_CHUNK); };
    if (threadIdx.x >= 32)
        stage_chunk_sgn(c, a + (uint64_t)(nch - 1) * RANS_CHUNK, chunk_len(nch - 1), &buf[(nch - 1) & 1],
                        (int)threadIdx.x - 32, RANS_STAGERS);
    __syncthreads();
    for (uint32_t q = nch; q-- > 0;) {
        if (threadIdx.x == 0) {
            /* rans_kernel's chain with four steps.  The next pixel's
             * entries are read before this pixel's steps, off the chain,
             * through pointers walked down (an index made an address of
             * each); the bytes go to the shared buffer by st.shared at a
             * 32-bit address (a generic pointer cost 64-bit arithmetic at
             * every byte, and the compiler remade the buffer's shared
             * window at every store) */
            const rans_sgn_chunk &in = buf[q & 1];
            uint8_t *const o = out_mem[q & 1] + RANS_OUT_SLACK;
            const uint32_t oa = (uint32_t)__cvta_generic_to_shared(o);
            auto put = [&](uint32_t at, uint32_t v) { asm volatile("st.shared.u8 [%0], %1;" ::"r"(oa + at), "r"(v)); };
            uint32_t pos = RANS_SGN_CHUNK_BYTES; /* the bytes [pos, top) are emitted */
            const uint32_t len = chunk_len(q);
            const uint4 *sgp = in.sgn + len, *rsp = in.rest + len, *tpp = in.top + len, *tkp = in.tok + len;
            const uint32_t *t2p = in.tok2 + len;
            uint4 sg = *sgp, rs = *rsp, tp = *tpp, t = *tkp;
            uint32_t t2 = *t2p;
            for (uint32_t i = len; i-- > 0;) {
                const uint4 sg_n = *--sgp, rs_n = *--rsp, tp_n = *--tpp, t_n = *--tkp;
                const uint32_t t2_n = *--t2p;
                /* the steps a pixel has, by branches (one thread runs the
                 * chain: no divergence): most pixels have no raw bits */
                if (sg.y != 0xffffffffu) { /* the sign: at most one byte */
                    const bool c1 = x >= sg.y;
                    put(pos - 1, x);
                    pos -= c1;
                    const uint32_t xr = c1 ? x >> 8 : x;
                    x = xr + sg.z + (__umulhi(xr, sg.x) >> (sg.w >> 24)) * (sg.w & 0xffffffu);
                }
                if (tp.y != 0xffffffffu) { /* raw bits: the others (uniform), then the top one */
                    const bool c1 = x >= rs.x, c2 = x >= rs.y;
                    put(pos - 1, x);
                    put(pos - 2, x >> 8);
                    pos -= (uint32_t)c1 + (uint32_t)c2;
                    x = (c2 ? x >> 16 : c1 ? x >> 8 : x) * rs.z + rs.w;
                    const bool b1 = x >= tp.y;
                    put(pos - 1, x);
                    pos -= b1;
                    const uint32_t xr = b1 ? x >> 8 : x;
                    x = xr + tp.z + (__umulhi(xr, tp.x) >> (tp.w >> 24)) * (tp.w & 0xffffffu);
                }
                { /* the token */
                    const bool c1 = x >= t.y, c2 = x >= t2;
                    put(pos - 1, x);
                    put(pos - 2, x >> 8);
                    pos -= (uint32_t)c1 + (uint32_t)c2;
                    const uint32_t zr = c2 ? x >> 16 : c1 ? x >> 8 : x;
                    x = zr + t.z + (__umulhi(zr, t.x) >> (t.w >> 24)) * (t.w & 0xffffffu);
                }
                sg = sg_n, rs = rs_n, tp = tp_n, t = t_n, t2 = t2_n;
            }
            uint8_t *const p = o + pos;
            const uint32_t chunk_bytes = (uint32_t)(o + RANS_SGN_CHUNK_BYTES - p);
            out_len[q & 1] = chunk_bytes;
            out_before[q & 1] = written;
            written += chunk_bytes;
        } else if (threadIdx.x >= 32) {
            if (q > 0)
                stage_chunk_sgn(c, a + (uint64_t)(q - 1) * RANS_CHUNK, chunk_len(q - 1), &buf[(q - 1) & 1],
                                (int)threadIdx.x - 32, RANS_STAGERS);
            if (q + 1 < nch)
                copy_chunk_out<RANS_SGN_CHUNK_BYTES>(out(q + 1), out_len[(q + 1) & 1], out_before[(q + 1) & 1], end,
                                                     room, (int)threadIdx.x - 32, RANS_STAGERS);
        }
        __syncthreads();
    }
    copy_chunk_out<RANS_SGN_CHUNK_BYTES>(out(0), out_len[0], out_before[0], end, room, threadIdx.x, RANS_THREADS);
    if (threadIdx.x == 0) {
        const bool overflow = written > room;
        if (!overflow) {
            uint8_t *p = end - written - 4;
            p[0] = (uint8_t)x, p[1] = (uint8_t)(x >> 8), p[2] = (uint8_t)(x >> 16), p[3] = (uint8_t)(x >> 24);
        }
        c.seg_len[s] = overflow ? 0u : written + 4;
    }
}

cudaError_t lsx_gpu_rans_sgn(const lsx_gpu_coding *c, cudaStream_t st)
{
    rans_sgn_kernel<<<c->nseg, RANS_THREADS, 0, st>>>(*c);
    return cudaGetLastError();
}

static unsigned tables_blocks(const lsx_gpu_coding *c)
{
    const uint64_t warps = (uint64_t)(c->nint + TABLE_CHECKPOINT - 1) / TABLE_CHECKPOINT * CTX_MAX;
    return (unsigned)((warps + TABLE_WARPS - 1) / TABLE_WARPS);
}

cudaError_t lsx_gpu_model(const lsx_gpu_coding *c, int max_ctx, int tables, cudaStream_t st)
{
    const unsigned k = (unsigned)c->ncand;
    cudaError_t rc = cudaMemsetAsync(c->bits, 0, sizeof(unsigned long long) * k, st);
    if (rc != cudaSuccess) return rc;
    interval_counts_kernel<<<dim3(c->nint, k), IC_THREADS, 0, st>>>(*c);
    counts_kernel<<<dim3((max_ctx + COUNTS_WARPS - 1) / COUNTS_WARPS, k), 32 * COUNTS_WARPS, 0, st>>>(*c);
    if (tables)
        tables_kernel<true, true><<<dim3(tables_blocks(c), k), 32 * TABLE_WARPS, 0, st>>>(*c);
    else
        tables_kernel<false, true><<<dim3(tables_blocks(c), k), 32 * TABLE_WARPS, 0, st>>>(*c);
    return cudaGetLastError();
}

cudaError_t lsx_gpu_tables(const lsx_gpu_coding *c, cudaStream_t st)
{
    tables_kernel<true, false><<<dim3(tables_blocks(c), (unsigned)c->ncand), 32 * TABLE_WARPS, 0, st>>>(*c);
    return cudaGetLastError();
}

cudaError_t lsx_gpu_rans(const lsx_gpu_coding *c, cudaStream_t st)
{
    rans_kernel<<<dim3(c->nseg, (unsigned)c->ncand), RANS_THREADS, 0, st>>>(*c);
    return cudaGetLastError();
}

__global__ void gather_kernel(lsx_gpu_coding off_c, lsx_gpu_coding on_c, int k, uint8_t *__restrict__ body)
{
    /* on_c where its estimate chose the adaptive sign (lsx_gpu_gather_signed) */
    const lsx_gpu_coding &c =
        on_c.bin_bits && lsx_sign_model_wins(on_c.bin_bits[0], on_c.bin_bits[1]) ? on_c : off_c;
    __shared__ uint64_t off;
    const uint32_t s = blockIdx.x;
    const uint32_t *len = c.seg_len + (size_t)k * c.nseg;
    if (threadIdx.x == 0) {
        uint64_t o = 0;
        for (uint32_t t = 0; t < s; t++) o += len[t];
        off = o;
    }
    __syncthreads();
    const uint32_t n = len[s];
    const uint8_t *src = c.slots + ((size_t)k * c.nseg + s + 1) * c.slot - n;
    for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) body[off + i] = src[i];
}

cudaError_t lsx_gpu_gather(const lsx_gpu_coding *c, int cand, uint8_t *body, cudaStream_t st)
{
    lsx_gpu_coding none = *c;
    none.bin_bits = NULL;
    gather_kernel<<<c->nseg, 256, 0, st>>>(*c, none, cand, body);
    return cudaGetLastError();
}

cudaError_t lsx_gpu_gather_signed(const lsx_gpu_coding *off, const lsx_gpu_coding *on, uint8_t *body,
                                  cudaStream_t st)
{
    gather_kernel<<<off->nseg, 256, 0, st>>>(*off, *on, 0, body);
    return cudaGetLastError();
}

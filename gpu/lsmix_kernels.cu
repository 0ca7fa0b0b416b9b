/* The kernels of the lsmix profile's GPU encoder (lsmix_kernels.h).  The
 * arithmetic per pixel is core/lsmix_arith.h, compiled for the device;
 * what is written here is only the order of the work: which thread does
 * which pixel, and the integer recurrences (training sums, column means,
 * token counts) in the same order as the C core. */
#include "lsmix_kernels.h"

#include <cub/block/block_scan.cuh>

#include "imgstream.h"
#include "lsmix_arith.h"

static unsigned blocks_for(size_t n, unsigned threads)
{
    size_t b = (n + threads - 1) / threads;
    return (unsigned)(b > 65535u * 32u ? 65535u * 32u : b);
}

/* ---- the intensity offset (lsx_ioff_of_histogram) ---------------------- */

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
 * 65535: each thread scans 64 bins after a block scan of their sums. */
__global__ void __launch_bounds__(1024) ioff_kernel(const uint32_t *__restrict__ hist, uint64_t px,
                                                    uint16_t *__restrict__ ioff)
{
    typedef cub::BlockScan<uint64_t, 1024> Scan;
    __shared__ typename Scan::TempStorage tmp;
    __shared__ uint32_t found;
    if (threadIdx.x == 0) found = 65535;
    const uint64_t want = px * LSX_IOFF_PERMILLE / 1000;
    uint64_t sum = 0;
    for (int i = 0; i < 64; i++) sum += hist[threadIdx.x * 64 + i];
    uint64_t before;
    Scan(tmp).ExclusiveSum(sum, before);
    __syncthreads();
    uint64_t acc = before;
    for (int i = 0; i < 64; i++) {
        uint32_t v = threadIdx.x * 64 + i;
        if (v >= 65535) break;
        acc += hist[v];
        if (acc > want) {
            atomicMin(&found, v);
            break;
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) *ioff = (uint16_t)found;
}

cudaError_t lsx_gpu_ioff(const uint32_t *hist, uint64_t px, uint16_t *ioff, cudaStream_t st)
{
    ioff_kernel<<<1, 1024, 0, st>>>(hist, px, ioff);
    return cudaGetLastError();
}

/* ---- column means (lsx_end_row) ----------------------------------------- */

__global__ void column_means_kernel(const uint16_t *__restrict__ x, uint32_t W, uint32_t H,
                                    int32_t *__restrict__ cma, int32_t *__restrict__ cmb)
{
    uint32_t n = blockIdx.x * blockDim.x + threadIdx.x;
    if (n >= W) return;
    int32_t a = 0, b = 0;
    for (uint32_t m = 0; m < H; m++) {
        size_t i = (size_t)m * W + n;
        cma[i] = a;
        cmb[i] = b;
        int32_t x16 = 16 * (int32_t)x[i];
        a = m == 0 ? x16 : lsx_mean_step(a, x16, LSX_CM_A_SHIFT);
        b = m == 0 ? x16 : lsx_mean_step(b, x16, LSX_CM_B_SHIFT);
    }
}

cudaError_t lsx_gpu_column_means(const uint16_t *x, uint32_t W, uint32_t H, int32_t *cma, int32_t *cmb,
                                 cudaStream_t st)
{
    column_means_kernel<<<(W + 127) / 128, 128, 0, st>>>(x, W, H, cma, cmb);
    return cudaGetLastError();
}

/* ---- LS predictions (lsmix_predict.c: training sums, ridge LDL^T) ------- */

#define LS_TC 8         /* columns per block */
#define LS_THREADS 128
#define LS_ROWS_MAX 16  /* rows per chunk: LS_TC * 16 = 128 solves, one a thread */
#define LS_SMEM_BUDGET (200 * 1024)

struct ls_args {
    const uint16_t *x;
    const int32_t *cma, *cmb;
    uint32_t W, H, c0, c1;
    int K, D, Z, NE, R, f, ridge, rows;
    double *out;
    size_t pitch;
    uint32_t col0;
};

/* Regressor j of pixel (i, n) (lsmix_predict.c regressors(); j = D: the target). */
__device__ __forceinline__ uint32_t regressor(const ls_args &a, uint32_t i, uint32_t n, int j)
{
    const uint16_t *row = a.x + (size_t)i * a.W;
    if (j < a.K) return n >= (uint32_t)(j + 1) ? row[n - 1 - j] : 0u;
    j -= a.K;
    if (j < 3) {
        int64_t q = (int64_t)n + j - 1;
        return (i > 0 && q >= 0 && q < (int64_t)a.W) ? row[(int64_t)q - (int64_t)a.W] : 0u;
    }
    if (j == 3) return (uint32_t)a.cma[(size_t)i * a.W + n];
    if (j == 4) return (uint32_t)a.cmb[(size_t)i * a.W + n];
    if (j == 5) return LSX_CONST;
    return row[n];
}

/* Entry (r, s), r <= s, of the upper triangle of Z x Z. */
__device__ __forceinline__ int tri(int r, int s, int Z) { return r * Z - r * (r - 1) / 2 + (s - r); }

/* aurp_solve_ldl (core/predict.c) on the ridge system of one column's
 * training sums g: the same operations in the same order. */
template <int DM>
__device__ int ldl_solve(int k, int Z, const uint64_t *g, int ridge, double *a)
{
    double L[DM * (DM - 1) / 2 + 1], U[DM], invD[DM], y[DM];
    int kk = k;
    for (int j = 0; j < k; j++) {
        for (int i = 0; i < j; i++) {
            double t = (double)g[tri(i, j, Z)];
            for (int l = 0; l < i; l++) t = t - U[l] * L[i * (i - 1) / 2 + l];
            U[i] = t;
            L[j * (j - 1) / 2 + i] = t * invD[i];
        }
        uint64_t gjj = g[tri(j, j, Z)];
        double ajj = (double)(gjj + (gjj >> ridge));
        double d = ajj;
        for (int l = 0; l < j; l++) d = d - U[l] * L[j * (j - 1) / 2 + l];
        if (!(d > ajj * AURP_PIVOT_REL)) {
            kk = j;
            break;
        }
        invD[j] = 1.0 / d;
    }
    for (int j = 0; j < kk; j++) {
        double t = (double)g[tri(j, k, Z)];
        for (int l = 0; l < j; l++) t = t - L[j * (j - 1) / 2 + l] * y[l];
        y[j] = t;
    }
    for (int j = kk - 1; j >= 0; j--) {
        double t = y[j] * invD[j];
        for (int l = j + 1; l < kk; l++) t = t - L[l * (l - 1) / 2 + j] * a[l];
        a[j] = t;
    }
    return kk;
}

/* A block owns LS_TC columns.  For each chunk of rows it adds rows i one
 * by one to the columns' training sums (G <- G - round(G / 2^f) + the
 * window sum of z z^T, the z of the window's columns staged in shared
 * memory), keeping each row's sums; then every (row i+1, column) of the
 * chunk is solved and predicted by its own thread. */
template <int DM>
__global__ void __launch_bounds__(LS_THREADS) ls_kernel(ls_args a)
{
    extern __shared__ uint64_t sm[];
    const int NE = a.NE, Z = a.Z;
    uint64_t *gst = sm;                                       /* [LS_TC][NE] running sums */
    uint64_t *gs = gst + LS_TC * NE;                          /* [rows][LS_TC][NE] per row */
    uint32_t *zs = (uint32_t *)(gs + (size_t)a.rows * LS_TC * NE); /* [LS_TC + 2R][Z] */
    uint8_t *er = (uint8_t *)(zs + (LS_TC + 2 * a.R) * Z);    /* [NE] r, then [NE] s */
    uint8_t *es = er + NE;

    const uint32_t cb0 = a.c0 + blockIdx.x * LS_TC;
    const int cols = (int)min((uint32_t)LS_TC, a.c1 - cb0);
    const uint32_t R = (uint32_t)a.R;
    const uint32_t lo = cb0 > R ? cb0 - R : 0, hi = min(cb0 + (uint32_t)cols + R, a.W);
    const int nz = (int)(hi - lo);
    const uint64_t half = (uint64_t)1 << (a.f - 1);

    for (int t = threadIdx.x; t < LS_TC * NE; t += LS_THREADS) gst[t] = 0;
    if (threadIdx.x == 0)
        for (int r = 0, e = 0; r < Z; r++)
            for (int s = r; s < Z; s++, e++) er[e] = (uint8_t)r, es[e] = (uint8_t)s;
    __syncthreads();

    for (uint32_t i0 = 0; i0 + 1 < a.H; i0 += (uint32_t)a.rows) {
        const int nr = (int)min((uint32_t)a.rows, a.H - 1 - i0);
        for (int ii = 0; ii < nr; ii++) {
            const uint32_t i = i0 + (uint32_t)ii;
            for (int t = threadIdx.x; t < nz * Z; t += LS_THREADS)
                zs[t] = regressor(a, i, lo + (uint32_t)(t / Z), t % Z);
            __syncthreads();
            for (int t = threadIdx.x; t < cols * NE; t += LS_THREADS) {
                const int c = t / NE, e = t % NE;
                const uint32_t n = cb0 + (uint32_t)c;
                const uint32_t w0 = n > R ? n - R : 0, w1 = min(n + R + 1, a.W);
                const int r = er[e], s = es[e];
                uint64_t sum = 0;
                for (uint32_t q = w0; q < w1; q++) {
                    const uint32_t *zq = zs + (q - lo) * (uint32_t)Z;
                    sum += (uint64_t)zq[r] * zq[s];
                }
                uint64_t g = gst[t];
                g = g - ((g + half) >> a.f) + sum;
                gst[t] = g;
                gs[(size_t)ii * LS_TC * NE + t] = g;
            }
            __syncthreads();
        }
        for (int t = threadIdx.x; t < nr * cols; t += LS_THREADS) {
            const int ii = t / cols, c = t % cols;
            const uint32_t m = i0 + (uint32_t)ii + 1, n = cb0 + (uint32_t)c;
            double coef[DM];
            int k = ldl_solve<DM>(a.D, Z, gs + ((size_t)ii * LS_TC + c) * NE, a.ridge, coef);
            double v = 0.0;
            for (int j = 0; j < k; j++) v = v + coef[j] * (double)regressor(a, m, n, j);
            a.out[(size_t)m * a.pitch + (n - a.col0)] = v;
        }
        __syncthreads();
    }
}

template <int DM>
static cudaError_t launch_ls(const ls_args &a, cudaStream_t st)
{
    size_t smem = (size_t)LS_TC * a.NE * 8 * (1 + (size_t)a.rows) + (size_t)(LS_TC + 2 * a.R) * a.Z * 4 +
                  2 * (size_t)a.NE + 16;
    cudaError_t rc = cudaFuncSetAttribute(ls_kernel<DM>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (rc != cudaSuccess) return rc;
    unsigned blocks = (a.c1 - a.c0 + LS_TC - 1) / LS_TC;
    ls_kernel<DM><<<blocks, LS_THREADS, smem, st>>>(a);
    return cudaGetLastError();
}

cudaError_t lsx_gpu_ls_predict(const uint16_t *x, const int32_t *cma, const int32_t *cmb, uint32_t W,
                               uint32_t H, uint32_t c0, uint32_t c1, const lsx_params *p, double *p_ls,
                               size_t pitch, uint32_t col0, cudaStream_t st)
{
    if (H < 2 || c1 <= c0) return cudaSuccess;
    ls_args a;
    a.x = x, a.cma = cma, a.cmb = cmb, a.W = W, a.H = H, a.c0 = c0, a.c1 = c1;
    a.K = p->K, a.D = p->K + LSX_PREV + LSX_EXTRA, a.Z = a.D + 1, a.NE = a.Z * (a.Z + 1) / 2;
    a.R = (p->M - 1) / 2, a.f = p->forget_shift, a.ridge = p->ridge_shift;
    size_t per_row = (size_t)LS_TC * a.NE * 8;
    size_t fixed = per_row + (size_t)(LS_TC + 2 * a.R) * a.Z * 4 + 2 * (size_t)a.NE + 16;
    size_t rows = (LS_SMEM_BUDGET - fixed) / per_row;
    a.rows = (int)(rows > LS_ROWS_MAX ? LS_ROWS_MAX : rows);
    a.out = p_ls, a.pitch = pitch, a.col0 = col0;
    if (a.D <= 12) return launch_ls<12>(a, st);
    if (a.D <= 16) return launch_ls<16>(a, st);
    return launch_ls<LSX_MAX_D>(a, st);
}

/* ---- row fits (lsx_row_predict / lsx_record) ----------------------------- */

__global__ void row_fits_kernel(const uint16_t *__restrict__ x, const int32_t *__restrict__ cmb,
                                const double *__restrict__ ls_a, const double *__restrict__ ls_b, uint32_t W,
                                uint32_t H, int want_set1, double *__restrict__ p_af, double *__restrict__ p_rv,
                                double *__restrict__ al_a, double *__restrict__ al_b)
{
    uint32_t m = blockIdx.x * blockDim.x + threadIdx.x + 1;
    if (m >= H) return;
    int64_t af[5] = {0}, sa[5] = {0}, sb[5] = {0}, rv[LSX_RV_NS] = {0};
    const size_t row = (size_t)m * W, up = row - W, up2 = m >= 2 ? up - W : up;
    for (uint32_t n = 0; n < W; n++) {
        const size_t i = row + n;
        const int64_t y = 16 * (int64_t)x[i];
        const int32_t z0 = cmb[i];
        p_af[i] = lsx_af_fit(af, n, (double)z0);
        lsx_af_add(af, y, z0);
        if (want_set1) {
            const int32_t za = lsx_q16(ls_a[i]), zb = lsx_q16(ls_b[i]);
            const int32_t z2 = 16 * (int32_t)x[up + n], z3 = 16 * (int32_t)x[up2 + n];
            p_rv[i] = lsx_rv_fit(rv, n, (double)z2, (double)z3);
            al_a[i] = lsx_af_fit(sa, n, (double)za);
            al_b[i] = lsx_af_fit(sb, n, (double)zb);
            lsx_af_add(sa, y, za);
            lsx_af_add(sb, y, zb);
            lsx_rv_add(rv, y, z2, z3);
        }
    }
}

cudaError_t lsx_gpu_row_fits(const uint16_t *x, const int32_t *cmb, const double *ls_a, const double *ls_b,
                             uint32_t W, uint32_t H, int want_set1, double *p_af, double *p_rv,
                             double *al_a, double *al_b, cudaStream_t st)
{
    if (H < 2) return cudaSuccess;
    row_fits_kernel<<<(H - 1 + 63) / 64, 64, 0, st>>>(x, cmb, ls_a, ls_b, W, H, want_set1, p_af, p_rv, al_a,
                                                       al_b);
    return cudaGetLastError();
}

/* ---- residuals of one pipeline ------------------------------------------- */

/* The predictions of (m, n): LS, CM, AF (set 0), RV, AL (set 1); row 0:
 * the edge prediction for all. */
__device__ __forceinline__ void predictions(const lsx_gpu_planes &pl, int np, uint32_t m, uint32_t n,
                                            double *p)
{
    const size_t i = (size_t)m * pl.W + n;
    if (m == 0) {
        double e = n ? (double)pl.x[i - 1] : 0.0;
        for (int k = 0; k < np; k++) p[k] = e;
        return;
    }
    p[0] = pl.p_ls[i];
    p[1] = (double)pl.cma[i] * 0.0625;
    p[2] = pl.p_af[i];
    if (np > 3) {
        p[3] = pl.p_rv[i];
        p[4] = pl.p_al[i];
    }
}

__global__ void errors_kernel(lsx_gpu_planes pl, lsx_gpu_pipe pp)
{
    const size_t px = (size_t)pl.W * pl.H;
    const int np = pp.set ? 5 : 3;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < px; i += (size_t)gridDim.x * blockDim.x) {
        double p[LSX_NPRED];
        predictions(pl, np, (uint32_t)(i / pl.W), (uint32_t)(i % pl.W), p);
        const int32_t x16 = 16 * (int32_t)pl.x[i];
        for (int k = 0; k < np; k++) {
            int32_t d = x16 - lsx_q16(p[k]);
            pp.err[(size_t)k * px + i] = d < 0 ? -d : d;
        }
    }
}

/* Set 0: the column error level of each predictor before each row. */
__global__ void column_errors_kernel(uint32_t W, uint32_t H, lsx_gpu_pipe pp)
{
    uint32_t n = blockIdx.x * blockDim.x + threadIdx.x;
    if (n >= W) return;
    const size_t px = (size_t)W * H;
    for (int k = 0; k < 3; k++) {
        int32_t c = 0;
        for (uint32_t m = 0; m < H; m++) {
            size_t i = (size_t)k * px + (size_t)m * W + n;
            pp.colerr[i] = c;
            c = m == 0 ? pp.err[i] : lsx_mean_step(c, pp.err[i], LSX_COLERR_SHIFT);
        }
    }
}

__global__ void blend_kernel(lsx_gpu_planes pl, lsx_gpu_pipe pp, const uint16_t *__restrict__ ioff)
{
    const uint32_t W = pl.W;
    const size_t px = (size_t)W * pl.H;
    const int np = pp.set ? 5 : 3;
    const uint16_t off = *ioff;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < px; i += (size_t)gridDim.x * blockDim.x) {
        const uint32_t m = (uint32_t)(i / W), n = (uint32_t)(i % W);
        uint16_t pred;
        int32_t emin = 0;
        if (m == 0) {
            pred = n ? pl.x[i - 1] : 0;
        } else {
            double p[LSX_NPRED];
            int32_t e[LSX_NPRED];
            predictions(pl, np, m, n, p);
            for (int k = 0; k < np; k++) {
                const int32_t *ek = pp.err + (size_t)k * px + (size_t)m * W;
                int32_t col = pp.set ? 0 : LSX_COLERR_W * pp.colerr[(size_t)k * px + i];
                e[k] = lsx_error_level(ek, ek - W, n, W, pp.set, col);
                if (k == 0 || e[k] < emin) emin = e[k];
            }
            pred = lsx_blend_of(np, e, p);
        }
        pp.res[i] = (int32_t)pl.x[i] - (int32_t)pred;
        pp.emin[i] = emin;
        pp.itok[i] = (uint8_t)lsx_intensity_token(pred, off);
    }
}

__global__ void activity_kernel(uint32_t W, uint32_t H, lsx_gpu_pipe pp)
{
    __shared__ unsigned long long h[CTX_TOKENS];
    if (threadIdx.x < CTX_TOKENS) h[threadIdx.x] = 0;
    __syncthreads();
    const size_t px = (size_t)W * H;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < px; i += (size_t)gridDim.x * blockDim.x) {
        const uint32_t m = (uint32_t)(i / W), n = (uint32_t)(i % W);
        const int32_t *r0 = pp.res + (size_t)m * W;
        const int32_t *r1 = m > 0 ? r0 - W : NULL, *r2 = m > 1 ? r0 - 2 * (size_t)W : NULL;
        pp.act[i] = lsx_activity16(lsx_residual_activity(r0, r1, r2, W, n), pp.emin[i]);
        atomicAdd(&h[pp.itok[i]], 1ull);
    }
    __syncthreads();
    if (threadIdx.x < CTX_TOKENS && h[threadIdx.x]) atomicAdd(&pp.itok_hist[threadIdx.x], h[threadIdx.x]);
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

cudaError_t lsx_gpu_residuals(const lsx_gpu_planes *pl, const lsx_gpu_pipe *pp, const uint16_t *ioff,
                              cudaStream_t st)
{
    const size_t px = (size_t)pl->W * pl->H;
    const unsigned blocks = blocks_for(px, 256);
    errors_kernel<<<blocks, 256, 0, st>>>(*pl, *pp);
    if (!pp->set) column_errors_kernel<<<(pl->W + 127) / 128, 128, 0, st>>>(pl->W, pl->H, *pp);
    blend_kernel<<<blocks, 256, 0, st>>>(*pl, *pp, ioff);
    cudaError_t rc = cudaMemsetAsync(pp->itok_hist, 0, CTX_TOKENS * sizeof(unsigned long long), st);
    if (rc != cudaSuccess) return rc;
    activity_kernel<<<blocks_for(px, 1024) < 1024 ? blocks_for(px, 1024) : 1024, 1024, 0, st>>>(pl->W, pl->H, *pp);
    classes_kernel<<<1, 1, 0, st>>>(*pp, px);
    return cudaGetLastError();
}

/* ---- coding ---------------------------------------------------------------- */

/* First pixel of table interval j (lsx_table_index). */
__device__ __forceinline__ uint64_t interval_start(uint32_t j)
{
    return j < 8 ? (uint64_t)j << 7 : (uint64_t)(j - 7) << 10;
}

__global__ void contexts_kernel(lsx_gpu_coding c)
{
    const int k = blockIdx.y;
    const lsx_gpu_cand &cd = c.cand[k];
    const lsx_gpu_pipe &pp = c.pipe[c.cand_pipe[k]];
    const int nib = cd.use_classes ? pp.classes[0] : 1;
    const uint8_t *ibnd = pp.classes + 1;
    uint8_t *ctx = c.ctx + (size_t)k * c.px;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < c.px; i += (size_t)gridDim.x * blockDim.x)
        ctx[i] = (uint8_t)(ctx_of(pp.act[i], cd.thr, cd.nctx) * nib + lsx_intensity_class(pp.itok[i], ibnd, nib));
}

/* Token counts of every (context, token) in table interval blockIdx.x. */
__global__ void __launch_bounds__(256) interval_counts_kernel(lsx_gpu_coding c)
{
    __shared__ uint32_t cnt[CTX_MAX * CTX_TOKENS];
    const int k = blockIdx.y;
    const uint32_t j = blockIdx.x;
    const int32_t *res = c.pipe[c.cand_pipe[k]].res;
    const uint8_t *ctx = c.ctx + (size_t)k * c.px;
    for (int t = threadIdx.x; t < CTX_MAX * CTX_TOKENS; t += 256) cnt[t] = 0;
    __syncthreads();
    const uint64_t a = interval_start(j), b0 = j + 1 < c.nint ? interval_start(j + 1) : c.px;
    const uint64_t b = b0 < c.px ? b0 : c.px;
    for (uint64_t i = a + threadIdx.x; i < b; i += 256) {
        int32_t e = res[i];
        int nraw;
        int t = ctx_token((uint32_t)(e < 0 ? -e : e), &nraw);
        atomicAdd(&cnt[ctx[i] * CTX_TOKENS + t], 1u);
    }
    __syncthreads();
    uint16_t *h = c.hist + ((size_t)k * c.nint + j) * (CTX_MAX * CTX_TOKENS);
    for (int t = threadIdx.x; t < CTX_MAX * CTX_TOKENS; t += 256) h[t] = (uint16_t)cnt[t];
}

__device__ __forceinline__ uint32_t warp_sum(uint32_t v)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* ctx_model_refresh, a warp per context, down the intervals: lane l holds
 * tokens l and l + 32.  Table j is built before interval j from the
 * counts of intervals < j (j = 0: no counts, uniform). */
#define TABLE_WARPS 16

__global__ void __launch_bounds__(32 * TABLE_WARPS) tables_kernel(lsx_gpu_coding c)
{
    const int k = blockIdx.y;
    const int ctx = blockIdx.x * TABLE_WARPS + threadIdx.x / 32, lane = threadIdx.x & 31;
    const lsx_gpu_cand &cd = c.cand[k];
    const int nib = cd.use_classes ? c.pipe[c.cand_pipe[k]].classes[0] : 1;
    if (ctx >= cd.nctx * nib) return;
    const uint16_t *h = c.hist + (size_t)k * c.nint * (CTX_MAX * CTX_TOKENS) + ctx * CTX_TOKENS;
    uint32_t *tab = c.table + (size_t)k * c.nint * (CTX_MAX * CTX_TOKENS) + ctx * CTX_TOKENS;
    const uint32_t one = 1u << CTX_PROB_BITS, spare = one - CTX_TOKENS;
    uint32_t c0 = 0, c1 = 0;
    uint32_t n0 = h[lane], n1 = h[lane + 32]; /* interval 0's counts, loaded ahead */
    for (uint32_t j = 0; j < c.nint; j++) {
        if (j > 0) {
            c0 += n0, c1 += n1;
            if (j < c.nint) {
                const uint16_t *hj = h + (size_t)j * (CTX_MAX * CTX_TOKENS);
                n0 = hj[lane], n1 = hj[lane + 32];
            }
            if (warp_sum(c0 + c1) > CTX_HALVE_AT) c0 = (c0 + 1) >> 1, c1 = (c1 + 1) >> 1;
        }
        const uint32_t total = warp_sum(c0 + c1);
        uint32_t f0, f1;
        if (total == 0) {
            f0 = f1 = one / CTX_TOKENS;
        } else {
            f0 = 1 + (uint32_t)((uint64_t)c0 * spare / total);
            f1 = 1 + (uint32_t)((uint64_t)c1 * spare / total);
            /* the most counted token, the lowest index among equals */
            uint64_t key = ((uint64_t)c0 << 8) | (uint32_t)(255 - lane);
            uint64_t k1 = ((uint64_t)c1 << 8) | (uint32_t)(255 - (lane + 32));
            if (k1 > key) key = k1;
            for (int o = 16; o > 0; o >>= 1) {
                uint64_t other = __shfl_xor_sync(0xffffffffu, key, o);
                if (other > key) key = other;
            }
            const int best = 255 - (int)(key & 255);
            const uint32_t sum = warp_sum(f0 + f1);
            if (best == lane) f0 += one - sum;
            if (best == lane + 32) f1 += one - sum;
        }
        /* exclusive prefix over tokens 0..63 */
        uint32_t s0 = f0, s1 = f1;
        for (int o = 1; o < 32; o <<= 1) {
            uint32_t a0 = __shfl_up_sync(0xffffffffu, s0, o), a1 = __shfl_up_sync(0xffffffffu, s1, o);
            if (lane >= o) s0 += a0, s1 += a1;
        }
        const uint32_t first_half = __shfl_sync(0xffffffffu, s0, 31);
        uint32_t *tj = tab + (size_t)j * (CTX_MAX * CTX_TOKENS);
        tj[lane] = (s0 - f0) << 16 | f0;
        tj[lane + 32] = (first_half + s1 - f1) << 16 | f1;
    }
}

/* rANS (ctx_rans_encode): a block per (segment, candidate).  The symbols
 * of 1024 pixels at a time are staged in shared memory by warps 1-3 while
 * lane 0 of warp 0 runs the chain over the previous chunk, back to front;
 * bytes go to the end of the segment's slot. */
#define RANS_CHUNK 1024
#define RANS_THREADS 128

/* A staged pixel: its token's coder entry {rcp, xmax, bias, (2^P - f) |
 * shift << 24} (as entropy_kernels.cu) and aux = raw value | nraw << 16 |
 * (v != 0) << 20 | sign << 21. */
struct rans_chunk {
    uint4 tok[RANS_CHUNK];
    uint32_t aux[RANS_CHUNK];
};

__device__ __forceinline__ uint4 token_entry(uint32_t f, uint32_t cum)
{
    const uint32_t P = CTX_PROB_BITS;
    uint4 t;
    t.y = ((AURP_RANS_L >> P) << 8) * f;
    if (f < 2) {
        t.x = 0xffffffffu;
        t.z = cum + (1u << P) - 1;
        t.w = (1u << P) - f;
    } else {
        uint32_t shift = 32 - __clz(f - 1);
        t.x = (uint32_t)((((uint64_t)1 << (shift + 31)) + f - 1) / f);
        t.z = cum;
        t.w = ((1u << P) - f) | (shift - 1) << 24;
    }
    return t;
}

__device__ void stage_chunk(const lsx_gpu_coding &c, int k, uint64_t a, uint32_t n, rans_chunk *buf, int t0,
                            int step)
{
    const int32_t *res = c.pipe[c.cand_pipe[k]].res;
    const uint8_t *ctx = c.ctx + (size_t)k * c.px;
    const uint32_t *tab = c.table + (size_t)k * c.nint * (CTX_MAX * CTX_TOKENS);
    for (uint32_t q = (uint32_t)t0; q < n; q += (uint32_t)step) {
        const uint64_t i = a + q;
        const int32_t e = res[i];
        const uint32_t v = (uint32_t)(e < 0 ? -e : e);
        int nraw;
        const int t = ctx_token(v, &nraw);
        const uint32_t cf = tab[(size_t)lsx_table_index(i) * (CTX_MAX * CTX_TOKENS) + ctx[i] * CTX_TOKENS + t];
        buf->tok[q] = token_entry(cf & 0xffffu, cf >> 16);
        buf->aux[q] = (v & ((1u << nraw) - 1)) | (uint32_t)nraw << 16 | (uint32_t)(v != 0) << 20 |
                     (uint32_t)(e < 0) << 21;
    }
}

__global__ void __launch_bounds__(RANS_THREADS) rans_kernel(lsx_gpu_coding c)
{
    __shared__ rans_chunk buf[2];
    const int k = blockIdx.y;
    const uint32_t s = blockIdx.x;
    const uint64_t a = (uint64_t)s << LSX_SEG_LOG2;
    const uint64_t b = a + ((uint64_t)1 << LSX_SEG_LOG2) < c.px ? a + ((uint64_t)1 << LSX_SEG_LOG2) : c.px;
    const uint32_t nch = (uint32_t)((b - a + RANS_CHUNK - 1) / RANS_CHUNK);
    uint8_t *const end = c.slots + ((size_t)k * c.nseg + s + 1) * c.slot;
    uint8_t *p = end;
    uint8_t *const floor = end - c.slot + 4;
    uint32_t x = AURP_RANS_L;
    bool overflow = false;

    auto chunk_len = [&](uint32_t q) { return (uint32_t)min((uint64_t)RANS_CHUNK, b - a - (uint64_t)q * RANS_CHUNK); };
    stage_chunk(c, k, a + (uint64_t)(nch - 1) * RANS_CHUNK, chunk_len(nch - 1), &buf[(nch - 1) & 1], threadIdx.x,
                RANS_THREADS);
    __syncthreads();
    for (uint32_t q = nch; q-- > 0;) {
        if (threadIdx.x == 0) {
            const rans_chunk *e = &buf[q & 1];
            for (uint32_t i = chunk_len(q); i-- > 0 && !overflow;) {
                const uint32_t aux = e->aux[i];
                if (aux >> 20 & 1) { /* sign: 1 bit, xmax 2^30 */
                    if (x >= (1u << 30)) {
                        if (p == floor) { overflow = true; break; }
                        *--p = (uint8_t)x;
                        x >>= 8;
                    }
                    x = (x << 1) | (aux >> 21 & 1);
                }
                const uint32_t nraw = aux >> 16 & 15;
                if (nraw) {
                    const uint32_t xmax = (AURP_RANS_L >> nraw) << 8;
                    while (x >= xmax) {
                        if (p == floor) { overflow = true; break; }
                        *--p = (uint8_t)x;
                        x >>= 8;
                    }
                    if (overflow) break;
                    x = (x << nraw) + (aux & 0xffffu);
                }
                const uint4 t = e->tok[i];
                while (x >= t.y) {
                    if (p == floor) { overflow = true; break; }
                    *--p = (uint8_t)x;
                    x >>= 8;
                }
                if (overflow) break;
                const uint32_t qq = __umulhi(x, t.x) >> (t.w >> 24);
                x = x + t.z + qq * (t.w & 0xffffffu);
            }
        } else if (threadIdx.x >= 32 && q > 0) {
            stage_chunk(c, k, a + (uint64_t)(q - 1) * RANS_CHUNK, chunk_len(q - 1), &buf[(q - 1) & 1],
                        threadIdx.x - 32, RANS_THREADS - 32);
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        if (!overflow) {
            p -= 4;
            p[0] = (uint8_t)x, p[1] = (uint8_t)(x >> 8), p[2] = (uint8_t)(x >> 16), p[3] = (uint8_t)(x >> 24);
        }
        c.seg_len[(size_t)k * c.nseg + s] = overflow ? 0u : (uint32_t)(end - p);
    }
}

cudaError_t lsx_gpu_code(const lsx_gpu_coding *c, int max_ctx, cudaStream_t st)
{
    const unsigned k = (unsigned)c->ncand;
    contexts_kernel<<<dim3(blocks_for(c->px, 256) < 4096 ? blocks_for(c->px, 256) : 4096, k), 256, 0, st>>>(*c);
    interval_counts_kernel<<<dim3(c->nint, k), 256, 0, st>>>(*c);
    tables_kernel<<<dim3((max_ctx + TABLE_WARPS - 1) / TABLE_WARPS, k), 32 * TABLE_WARPS, 0, st>>>(*c);
    rans_kernel<<<dim3(c->nseg, k), RANS_THREADS, 0, st>>>(*c);
    return cudaGetLastError();
}

__global__ void gather_kernel(lsx_gpu_coding c, int k, uint8_t *__restrict__ body)
{
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
    gather_kernel<<<c->nseg, 256, 0, st>>>(*c, cand, body);
    return cudaGetLastError();
}

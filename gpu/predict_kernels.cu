/* Prediction on the GPU: the lag-product sums and the per-pixel least-squares
 * solve of docs/FORMAT.md 2.1, repeating core/predict.c operation for
 * operation.  Built with --fmad=false and IEEE division (the nvcc default):
 * every double here is the double the CPU computes.
 *
 * Work split: gpu_lag_sums scans each (lag d, column q) down the rows (a
 * blocked two-level scan), so P[d][m][q] holds the exact sum over the rows
 * above m.  gpu_predict runs one
 * block per (row, 128-column tile): the block loads the tile's P rows plus
 * the N+M-1 halo columns into shared memory as prefix sums along the row
 * (uint64, modular: a window is a difference of two entries and is exact
 * because the true window sum is below 2^64), then each thread assembles the
 * k x k normal equations of its pixel from window sums, factors them LDL^T in
 * registers and writes its residual. */
#include "gpu_kernels.h"

#include <stdint.h>

#define PRED_TILE 128

__global__ void unpack_kernel(const uint8_t *__restrict__ be, uint16_t *__restrict__ x, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = (uint16_t)(((uint32_t)be[2 * i] << 8 | be[2 * i + 1]) ^ 0x8000u);
}

cudaError_t gpu_unpack(const uint8_t *be16, uint16_t *x, size_t count, cudaStream_t st)
{
    if (count == 0) return cudaSuccess;
    unpack_kernel<<<(unsigned)((count + 255) / 256), 256, 0, st>>>(be16, x, count);
    return cudaGetLastError();
}

/* Lag sums as a two-level scan down the rows: a walk of H rows per (d, q)
 * thread left too few threads (12k at 1024^2, N=11) each waiting on H
 * dependent steps.  Here a block is 32 columns x 32 row chunks of one lag:
 * each thread sums its chunk, the chunk sums are scanned in shared memory,
 * and each thread then writes the running sums of its chunk from its
 * chunk's offset.  Integer adds are exact and associative, so the order
 * does not matter.  Warps run along columns: loads of x and stores of P are
 * coalesced. */
#define LAG_COLS 32
#define LAG_CHUNKS 32

__global__ void __launch_bounds__(LAG_COLS *LAG_CHUNKS)
    lag_sums_kernel(const uint16_t *__restrict__ x, uint32_t W, uint32_t H, uint32_t lo, uint32_t c1,
                    uint64_t *__restrict__ P)
{
    __shared__ uint64_t part[LAG_CHUNKS][LAG_COLS + 1];
    const uint32_t span = c1 - lo;
    const uint32_t qi = blockIdx.x * LAG_COLS + threadIdx.x;
    const uint32_t d = blockIdx.y;
    const uint32_t chunk = (H + LAG_CHUNKS - 1) / LAG_CHUNKS;
    const uint32_t m0 = min(H, threadIdx.y * chunk), m1 = min(H, m0 + chunk);
    const uint32_t q = lo + qi;
    const bool inside = qi < span;
    const bool valid = inside && q + d < c1;
    const uint16_t *col = x + q;
    uint64_t acc = 0;
    if (valid)
        for (uint32_t m = m0; m < m1; m++) acc += (uint64_t)col[(size_t)m * W] * col[(size_t)m * W + d];
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (!inside) return;
    uint64_t pre = 0;
    for (uint32_t c = 0; c < threadIdx.y; c++) pre += part[c][threadIdx.x];
    uint64_t *out = P + (size_t)d * H * span + qi;
    for (uint32_t m = m0; m < m1; m++) {
        out[(size_t)m * span] = pre;
        if (valid) pre += (uint64_t)col[(size_t)m * W] * col[(size_t)m * W + d];
    }
}

cudaError_t gpu_lag_sums(const uint16_t *x, uint32_t width, uint32_t height, uint32_t lo,
                         uint32_t c1, int order, uint64_t *P, cudaStream_t st)
{
    uint32_t span = c1 - lo;
    dim3 grid((span + LAG_COLS - 1) / LAG_COLS, (unsigned)order + 1);
    lag_sums_kernel<<<grid, dim3(LAG_COLS, LAG_CHUNKS), 0, st>>>(x, width, height, lo, c1, P);
    return cudaGetLastError();
}

__device__ __forceinline__ uint16_t round_clamp(double v)
{
    double t = v + 0.5;
    if (!(t > 0.0)) return 0;
    if (t >= 65535.0) return 65535;
    return (uint16_t)(int32_t)t;
}

/* NM: the largest order this instantiation handles (N <= NM).  Every loop
 * runs over the compile-time NM with a guard, so that for small NM the
 * arrays stay in registers; the guards keep exactly the reference's
 * operations in the reference's order. */
template <int NM>
__global__ void __launch_bounds__(PRED_TILE)
    predict_kernel(const uint16_t *__restrict__ x, uint32_t W, const uint64_t *__restrict__ P,
                   uint32_t H, uint32_t lo, uint32_t c0, uint32_t c1, int N, int M,
                   int32_t *__restrict__ e, size_t e_pitch, uint32_t e_col0)
{
    extern __shared__ uint64_t pf[];
    const uint32_t m = blockIdx.y;
    const uint32_t tile0 = c0 + blockIdx.x * PRED_TILE;
    const int halo = N + M - 1;
    const int pw = PRED_TILE + halo + 1; /* prefix entries per lag */
    const int64_t base = (int64_t)tile0 - halo;
    const uint32_t span = c1 - lo;
    const uint16_t *row = x + (size_t)m * W;

    if (m > 0) {
        /* pf[d][j] = sum of P[d][m][q] over base <= q < base + j (0 outside the band). */
        const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
        const int len = pw - 1;
        for (int d = warp; d <= N; d += PRED_TILE / 32) {
            const uint64_t *Prow = P + ((size_t)d * H + m) * span;
            uint64_t carry = 0;
            if (lane == 0) pf[d * pw] = 0;
            for (int c = 0; c < len; c += 32) {
                int j = c + lane;
                int64_t q = base + j;
                uint64_t v = 0;
                if (j < len && q >= (int64_t)lo && q < (int64_t)c1) v = Prow[q - lo];
                for (int o = 1; o < 32; o <<= 1) {
                    uint64_t u = __shfl_up_sync(0xffffffffu, v, o);
                    if (lane >= o) v += u;
                }
                if (j < len) pf[d * pw + j + 1] = carry + v;
                carry += __shfl_sync(0xffffffffu, v, 31);
            }
        }
        __syncthreads();
    }

    const uint32_t n = tile0 + threadIdx.x;
    if (n >= c1) return;
    const uint16_t xv = row[n];
    uint16_t pred;
    if (m == 0) {
        pred = n == 0 ? 0 : row[n - 1];
    } else if (n == 0) {
        pred = row[(size_t)0 - W];
    } else if (n == 1) {
        pred = row[0];
    } else {
        const int K = n < (uint32_t)N ? (int)n : N;
        const int R = n <= (uint32_t)N ? 1 : (n - N + 1 < (uint32_t)M ? (int)(n - N + 1) : M);
        const uint64_t eq = (uint64_t)m * (uint64_t)R;
        const int k = eq < (uint64_t)K ? (int)eq : K;
        /* window sum over q in (t-R, t] of lag d: pf[d][t-base+1] - pf[d][t-base+1-R] */
        const int tb = (int)((int64_t)n - base); /* index of column n-1 plus one */
#define WIN(d, r) (pf[(d) * pw + tb - (r)] - pf[(d) * pw + tb - (r) - R])
        double L[NM][NM];
        double U[NM], invD[NM], y[NM], a[NM];
        int kk = k;
#pragma unroll
        for (int j = 0; j < NM; j++) {
            if (j < kk) {
#pragma unroll
                for (int i = 0; i < j; i++) {
                    double t = (double)WIN(j - i, j);
#pragma unroll
                    for (int l = 0; l < i; l++) t = t - U[l] * L[i][l];
                    U[i] = t;
                    L[j][i] = t * invD[i];
                }
                const double ajj = (double)WIN(0, j);
                double dj = ajj;
#pragma unroll
                for (int l = 0; l < j; l++) dj = dj - U[l] * L[j][l];
                if (!(dj > ajj * 0x1p-30))
                    kk = j;
                else
                    invD[j] = 1.0 / dj;
            }
        }
#pragma unroll
        for (int j = 0; j < NM; j++) {
            if (j < kk) {
                double t = (double)WIN(j + 1, j);
#pragma unroll
                for (int l = 0; l < j; l++) t = t - L[j][l] * y[l];
                y[j] = t;
            }
        }
#pragma unroll
        for (int j = NM - 1; j >= 0; j--) {
            if (j < kk) {
                double t = y[j] * invD[j];
#pragma unroll
                for (int l = j + 1; l < NM; l++)
                    if (l < kk) t = t - L[l][j] * a[l];
                a[j] = t;
            }
        }
#undef WIN
        if (kk == 0) {
            pred = row[n - 1];
        } else {
            double v = 0.0;
#pragma unroll
            for (int r = 0; r < NM; r++)
                if (r < kk) v = v + a[r] * (double)row[n - 1 - r];
            pred = round_clamp(v);
        }
    }
    e[(size_t)m * e_pitch + (n - e_col0)] = (int32_t)xv - (int32_t)pred;
}

template <int NM>
static cudaError_t launch_predict(const uint16_t *x, uint32_t W, uint32_t H, const uint64_t *P,
                                  uint32_t lo, uint32_t c0, uint32_t c1, int N, int M, int32_t *e,
                                  size_t e_pitch, uint32_t e_col0, cudaStream_t st)
{
    size_t shmem = (size_t)(N + 1) * (PRED_TILE + N + M) * sizeof(uint64_t);
    dim3 grid((c1 - c0 + PRED_TILE - 1) / PRED_TILE, H);
    predict_kernel<NM><<<grid, PRED_TILE, shmem, st>>>(x, W, P, H, lo, c0, c1, N, M, e, e_pitch,
                                                       e_col0);
    return cudaGetLastError();
}

cudaError_t gpu_predict(const uint16_t *x, uint32_t width, uint32_t height, const uint64_t *P,
                        uint32_t lo, uint32_t c0, uint32_t c1, int order, int equations,
                        int32_t *e, size_t e_pitch, uint32_t e_col0, cudaStream_t st)
{
    if (c1 <= c0 || height == 0) return cudaSuccess;
#define GO(NM) launch_predict<NM>(x, width, height, P, lo, c0, c1, order, equations, e, e_pitch, e_col0, st)
    if (order <= 4) return GO(4);
    if (order <= 8) return GO(8);
    if (order <= 11) return GO(11);
    if (order <= 16) return GO(16);
    return GO(32);
#undef GO
}

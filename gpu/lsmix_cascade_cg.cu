/* The cascade trial's weights on the device: the wide support's system from
 * the correlations R, solved by conjugate gradients in one block, the
 * sequence of operations of core/lsmix_cascade_cg.h (the C encoder's
 * cg_solve), rounded as lsx_cas_set_stage's weights.  The trial's final
 * prediction then starts on them with no host in between (the host's
 * solve and its two copies were 0.2 ms of the frame's longest path).
 *
 * Threads: four a row of A p (lsx_cas_cg_part's partial sums, combined by
 * two shuffles: (s0 + s1) + (s2 + s3), addition being commutative bit for
 * bit); the dot products by warp 0 over the 256 leaves, the tree's top
 * three levels in registers (lane L holds leaves L, L + 32, .., L + 224)
 * and the rest by shuffles, the pairs of lsx_cas_cg.h's tree. */
#include <cuda_runtime.h>

#include "lsmix_cascade_cg.h"
#include "lsmix_kernels.h"

#define CG_THREADS (LSX_CAS_CG_PARTS * 256) /* four a row, rows up to 256 */
#define FULL 0xffffffffu

static_assert(LSX_CAS_NL_MAX <= CG_THREADS / LSX_CAS_CG_PARTS, "a row's four threads for every lag");
static_assert(LSX_CAS_CG_LEAVES == 256, "the tree's top levels are unrolled for 256 leaves");

/* dot(u, v) over n (lsmix_cascade_cg.h), called by every thread after a
 * barrier that made u, v complete; every thread returns the sum. */
static __device__ double block_dot(const double *u, const double *v, int n, double *slot)
{
    if (threadIdx.x < 32) {
        const int L = threadIdx.x;
        double l[8];
#pragma unroll
        for (int j = 0; j < 8; j++) {
            const int i = L + 32 * j;
            l[j] = i < n ? u[i] * v[i] : 0.0;
        }
        /* levels 128, 64, 32: t[i] = t[i] + t[i + h] at positions L + 32 j */
        const double a0 = l[0] + l[4], a1 = l[1] + l[5], a2 = l[2] + l[6], a3 = l[3] + l[7];
        const double b0 = a0 + a2, b1 = a1 + a3;
        double c = b0 + b1;
#pragma unroll
        for (int h = 16; h >= 1; h >>= 1) c = c + __shfl_down_sync(FULL, c, h);
        if (L == 0) *slot = c;
    }
    __syncthreads();
    return *slot;
}

__global__ void __launch_bounds__(CG_THREADS)
    cas_cg_kernel(const int64_t *__restrict__ R, int no, const uint32_t *__restrict__ md,
                  const uint16_t *__restrict__ pair, const int *__restrict__ lag, int n, int16_t *__restrict__ w,
                  int *__restrict__ ok)
{
    __shared__ double rd[LSX_CAS_MAXO];
    __shared__ double x[LSX_CAS_CG_LEAVES], r[LSX_CAS_CG_LEAVES], p[LSX_CAS_CG_LEAVES], q[LSX_CAS_CG_LEAVES];
    __shared__ double dots[3], scale;
    const int t = threadIdx.x;
    for (int o = t; o < no; o += CG_THREADS) rd[o] = (double)R[o];
    __syncthreads();
    const double diag = lsx_cas_cg_diag(R[0]);
    if (t < n) x[t] = 0.0, r[t] = p[t] = rd[lag[t]];
    __syncthreads();
    double rr = block_dot(r, r, n, &dots[0]);
    const double tol = rr * LSX_CAS_CG_TOL;
    int solved = 1;
    const int a = t / LSX_CAS_CG_PARTS, k = t % LSX_CAS_CG_PARTS;
    for (int it = 0; it < LSX_CAS_CG_MAX_ITERS && rr > tol; it++) {
        const double s = a < n ? lsx_cas_cg_part(pair + (size_t)a * n, rd, diag, a, n, k, p) : 0.0;
        const double u = s + __shfl_xor_sync(FULL, s, 1);     /* s0 + s1 (k = 0, 1), s2 + s3 (k = 2, 3) */
        const double row = u + __shfl_xor_sync(FULL, u, 2);  /* (s0 + s1) + (s2 + s3) */
        if (a < n && k == 0) q[a] = row;
        __syncthreads();
        const double pq = block_dot(p, q, n, &dots[1]);
        if (!(pq > 0)) { /* (every thread sees the same pq) */
            solved = 0;
            break;
        }
        const double al = rr / pq;
        if (t < n) x[t] = x[t] + al * p[t], r[t] = r[t] - al * q[t];
        __syncthreads();
        const double rn = block_dot(r, r, n, &dots[2]), be = rn / rr;
        rr = rn;
        if (t < n) p[t] = r[t] + be * p[t];
        __syncthreads();
    }
    if (t == 0) scale = solved ? lsx_cas_scale(x, n, lsx_cas_clip_of_median(*md)) : 0.0;
    __syncthreads();
    if (t < n) w[t] = solved ? lsx_cas_quantize(x[t], scale) : 0;
    if (t == 0) *ok = solved;
}

cudaError_t lsx_gpu_cas_cg(const int64_t *R, int no, const uint32_t *md, const uint16_t *pair, const int *lag, int n,
                           int16_t *w, int *ok, cudaStream_t st)
{
    if (n < 1 || n > LSX_CAS_NL_MAX || no < 1 || no > LSX_CAS_MAXO) return cudaErrorInvalidValue;
    cas_cg_kernel<<<1, CG_THREADS, 0, st>>>(R, no, md, pair, lag, n, w, ok);
    return cudaGetLastError();
}

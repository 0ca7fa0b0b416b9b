/* The DP context candidate on the device (lsx_gpu_dp_contexts in
 * lsmix_kernels.h): lsx_dp_contexts of core/lsmix_thresholds.c, the same
 * contexts from the same histogram, without a round trip to the host.
 *
 * The C function, per pipeline: pack the histogram to its non-empty
 * activity bins, intensity tokens and residual tokens; then three
 * alternating steps (activity runs, intensity runs, activity runs), each
 *   items     each item's histogram summed over the other dimension's
 *             classes (the C code keeps prefix sums along the items);
 *   run costs the cost of every run a..b-1 of items (lsx_dp_group_cost);
 *   cut       the optimal cut into runs (lsx_dp_cut_cell), its classes.
 * Here each of these is a kernel over all pipelines at once:
 *   sums      a block per activity bin: the bin's, its tokens' counts;
 *   pack      a block per pipeline: the non-empty lists (by a warp's
 *             ballots), the start;
 *   items     a block per (item, pipeline), a thread per (group, token),
 *             read through the lists from the histogram itself;
 *   run costs a block per (start, pipeline), a warp per group: each warp
 *             grows the run along the items on its own, 8 ends at a
 *             time, and the groups' costs are added once at the end;
 *   cut       a block per pipeline, a warp per two or three cells of a
 *             row of the recurrence, its lanes over the run starts.
 * Every sum is of integers and every minimum keeps the smallest start
 * among equals, so the results are the C code's. */
#include "lsmix_kernels.h"

#include "lsmix_arith.h"
#include "lsmix_dp.h"
#include "warp_sum.cuh"

#define DP_RUNS_AHEAD 8 /* dp_runs_kernel's loads this many items ahead */
#define DP_NMAX CTX_TOKENS   /* items of a step: activity bins (LSX_TQ) or intensity tokens */
#define DP_NGMAX LSX_DP_NCTX /* groups of a step: the other dimension's classes */
#define DP_KMAX LSX_DP_NCTX  /* runs of a cut */
#define DP_PACK_THREADS 256
#define DP_CUT_THREADS 1024
#define DP_CUT_CELLS ((DP_NMAX + DP_CUT_THREADS / 32) / (DP_CUT_THREADS / 32)) /* cells b <= DP_NMAX a warp */
static_assert(LSX_TQ <= DP_NMAX, "activity bins are items of a cut");
static_assert(LSX_NIB <= DP_KMAX && CTX_MAX_IB <= DP_NGMAX, "intensity classes are runs and groups");
static_assert(CTX_TOKENS == 64, "a warp holds a group's tokens two a lane");
static_assert(DP_NMAX % 32 == 0, "a lane takes every 32nd start of a run");

/* One pipeline's DP between the kernels (the C function's locals). */
struct dp_state {
    int ok;         /* the histogram has pixels */
    int B, NI, T;   /* non-empty activity bins, intensity tokens, residual tokens */
    int nctx, nib;  /* the runs wanted: min(LSX_DP_NCTX, B), min(LSX_NIB, NI) */
    int ni;         /* the intensity classes of now */
    uint8_t ibnd[CTX_MAX_IB];
    int qb[LSX_TQ], ib[CTX_TOKENS], tb[CTX_TOKENS];
    int icls[CTX_TOKENS], acls[LSX_TQ];
    int acut[DP_KMAX], icut[DP_KMAX];
};

struct dp_scratch {
    dp_state *st;    /* [npipe] */
    uint32_t *sums;  /* [npipe][LSX_TQ][2][CTX_TOKENS]: a bin's counts by intensity token, by token */
    uint32_t *items; /* [npipe][DP_NMAX][DP_NGMAX][CTX_TOKENS] */
    uint64_t *cost;  /* [npipe][(DP_NMAX + 1)^2] */
};

static const size_t sum_cells = (size_t)LSX_TQ * 2 * CTX_TOKENS;
static const size_t item_cells = (size_t)DP_NMAX * DP_NGMAX * CTX_TOKENS;
static const size_t cost_cells = (size_t)(DP_NMAX + 1) * (DP_NMAX + 1);

size_t lsx_gpu_dp_scratch_bytes(int npipe)
{
    return (size_t)npipe * (8 * cost_cells + 4 * sum_cells + 4 * item_cells + sizeof(dp_state));
}

static dp_scratch scratch_of(void *p, int npipe)
{
    uint8_t *b = (uint8_t *)p;
    dp_scratch s;
    s.cost = (uint64_t *)b;
    b += 8 * cost_cells * npipe;
    s.sums = (uint32_t *)b;
    b += 4 * sum_cells * npipe;
    s.items = (uint32_t *)b;
    b += 4 * item_cells * npipe;
    s.st = (dp_state *)b;
    return s;
}

/* A step's items, groups and runs: steps 0 and 2 cut the activity bins
 * (groups: the intensity classes), step 1 the intensity tokens (groups:
 * the activity classes); step 1 is skipped with fewer than two tokens. */
struct dp_step {
    bool skip, along_bins;
    int n, other, ng, k;
    const int *cls;
};

__device__ dp_step step_of(const dp_state &d, int step)
{
    dp_step s;
    s.along_bins = step != 1;
    s.skip = !d.ok || (step == 1 && d.nib <= 1);
    s.n = s.along_bins ? d.B : d.NI;
    s.other = s.along_bins ? d.NI : d.B;
    s.ng = s.along_bins ? d.ni : d.nctx;
    s.k = s.along_bins ? d.nctx : d.nib;
    s.cls = s.along_bins ? d.icls : d.acls;
    return s;
}

/* Bin q's counts by intensity token and by residual token (the C code's
 * sq, si, st are their sums over the bins). */
__global__ void __launch_bounds__(DP_PACK_THREADS) dp_sums_kernel(const uint32_t *__restrict__ hist, dp_scratch sc)
{
    const int p = blockIdx.y, q = blockIdx.x;
    const uint32_t *h = hist + ((size_t)p * LSX_TQ + q) * CTX_TOKENS * CTX_TOKENS;
    uint32_t *out = sc.sums + (size_t)p * sum_cells + (size_t)q * 2 * CTX_TOKENS;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    /* by intensity token: a warp per token, lanes over the residual tokens */
    for (int i = warp; i < CTX_TOKENS; i += DP_PACK_THREADS / 32) {
        const uint64_t v = warp_sum((uint64_t)h[i * CTX_TOKENS + lane] + h[i * CTX_TOKENS + lane + 32]);
        if (lane == 0) out[i] = (uint32_t)v;
    }
    /* by residual token: a thread per token, down the intensity tokens */
    if (threadIdx.x < CTX_TOKENS) {
        uint32_t v = 0;
        for (int i = 0; i < CTX_TOKENS; i++) v += h[i * CTX_TOKENS + threadIdx.x];
        out[CTX_TOKENS + threadIdx.x] = v;
    }
}

/* The non-empty bins and tokens, and the start: v's intensity classes
 * (the pipeline's: info[0] of them with bounds info[1..]). */
__global__ void __launch_bounds__(DP_PACK_THREADS) dp_pack_kernel(const uint8_t *__restrict__ info, dp_scratch sc)
{
    __shared__ unsigned long long sq[LSX_TQ], si[CTX_TOKENS], stk[CTX_TOKENS];
    const int p = blockIdx.x;
    const uint32_t *sums = sc.sums + (size_t)p * sum_cells;
    dp_state &d = sc.st[p];
    if (threadIdx.x < CTX_TOKENS) {
        unsigned long long a = 0, b = 0;
#pragma unroll 16
        for (int q = 0; q < LSX_TQ; q++) {
            a += sums[q * 2 * CTX_TOKENS + threadIdx.x];
            b += sums[q * 2 * CTX_TOKENS + CTX_TOKENS + threadIdx.x];
        }
        si[threadIdx.x] = a, stk[threadIdx.x] = b;
    } else if (threadIdx.x < CTX_TOKENS + LSX_TQ) {
        const int q = threadIdx.x - CTX_TOKENS;
        unsigned long long a = 0;
#pragma unroll 16
        for (int i = 0; i < CTX_TOKENS; i++) a += sums[q * 2 * CTX_TOKENS + i];
        sq[q] = a;
    }
    __syncthreads();
    if (threadIdx.x >= 32) return;
    /* one warp lists the non-empty entries in order, 32 at a time by a
     * ballot (one thread's loops over the lists, with the state in global
     * memory, took 0.02 ms a launch) */
    const int lane = threadIdx.x;
    const unsigned below = (1u << lane) - 1;
    const uint8_t *cls = info + 8 * p;
    const int ni = cls[0];
    uint8_t ibnd[CTX_MAX_IB];
    for (int c = 0; c < CTX_MAX_IB; c++) ibnd[c] = c < ni - 1 ? cls[1 + c] : 0;
    int B = 0, NI = 0, T = 0;
    for (int q0 = 0; q0 < LSX_TQ; q0 += 32) {
        const int q = q0 + lane;
        const bool used = q < LSX_TQ && sq[q] != 0;
        const unsigned m = __ballot_sync(0xffffffffu, used);
        if (used) d.qb[B + __popc(m & below)] = q;
        B += __popc(m);
    }
    for (int i0 = 0; i0 < CTX_TOKENS; i0 += 32) {
        const int i = i0 + lane;
        const bool used = si[i] != 0, usedt = stk[i] != 0;
        const unsigned m = __ballot_sync(0xffffffffu, used), mt = __ballot_sync(0xffffffffu, usedt);
        if (used) {
            const int at = NI + __popc(m & below);
            d.ib[at] = i;
            d.icls[at] = lsx_intensity_class(i, ibnd, ni);
        }
        if (usedt) d.tb[T + __popc(mt & below)] = i;
        NI += __popc(m), T += __popc(mt);
    }
    if (lane != 0) return;
    d.B = B, d.NI = NI, d.T = T;
    d.ok = B > 0;
    d.nctx = LSX_DP_NCTX < B ? LSX_DP_NCTX : B;
    d.nib = LSX_NIB < NI ? LSX_NIB : NI;
    d.ni = ni;
    for (int c = 0; c < CTX_MAX_IB; c++) d.ibnd[c] = ibnd[c];
}

/* Each item's counts in the other dimension's classes, items[x][g][t]:
 * what pre[x + 1] - pre[x] is in the C code's prefix sums; a block per
 * item, a thread per (g, t). */
__global__ void __launch_bounds__(DP_PACK_THREADS) dp_items_kernel(const uint32_t *__restrict__ hist,
                                                                   dp_scratch sc, int step)
{
    const int p = blockIdx.y, x = blockIdx.x;
    const dp_state &d = sc.st[p];
    const dp_step s = step_of(d, step);
    if (s.skip || x >= s.n) return;
    const uint32_t *h = hist + (size_t)p * LSX_THR_CELLS;
    const int w = s.ng * d.T;
    uint32_t *item = sc.items + (size_t)p * item_cells + (size_t)x * w;
    /* each other item y's class and histogram row, once for the block: the
     * sums below then issue their loads several at once (uint32 sums: any
     * order is the C code's), where a test and two state reads before each
     * load made every step wait for the one before (0.02 ms a launch) */
    __shared__ int cls[DP_NMAX], row[DP_NMAX];
    for (int y = threadIdx.x; y < s.other; y += blockDim.x) {
        const int q = d.qb[s.along_bins ? x : y], i = d.ib[s.along_bins ? y : x];
        cls[y] = s.cls[y], row[y] = (q * CTX_TOKENS + i) * CTX_TOKENS;
    }
    __syncthreads();
    for (int e = threadIdx.x; e < w; e += blockDim.x) {
        const int g = e / d.T, t = d.tb[e % d.T];
        uint32_t sum = 0;
#pragma unroll 8
        for (int y = 0; y < s.other; y++) sum += cls[y] == g ? h[row[y] + t] : 0;
        item[e] = sum;
    }
}

/* run_costs() of the C code for start a = blockIdx.x: warp g keeps group
 * g's running counts (two tokens a lane) and, for every end b, the group's
 * cost of the run a..b-1; the groups' costs are added at the end. */
__global__ void __launch_bounds__(DP_NGMAX * 32) dp_runs_kernel(dp_scratch sc, int step)
{
    __shared__ unsigned long long gcost[DP_NMAX][DP_NGMAX];
    const int p = blockIdx.y, a = blockIdx.x;
    const dp_state &d = sc.st[p];
    const dp_step s = step_of(d, step);
    if (s.skip || a >= s.n) return;
    const int g = threadIdx.x / 32, lane = threadIdx.x % 32, T = d.T, w = s.ng * T;
    if (g < s.ng) {
        const uint32_t *items = sc.items + (size_t)p * item_cells + (size_t)g * T;
        const uint64_t learn = (uint64_t)LSX_DP_LEARN_BITS << 20;
        uint32_t acc0 = 0, acc1 = 0;
        uint64_t accx0 = 0, accx1 = 0, sum = 0, cnt = 0, used = 0;
        /* item b - 1's counts DP_RUNS_AHEAD steps ahead (a ring of
         * registers): the loads do not depend on the walk, which otherwise
         * waited for each one (0.02-0.07 ms a launch) */
        uint32_t r0[DP_RUNS_AHEAD], r1[DP_RUNS_AHEAD];
        auto load = [&](int b, int q) {
            const uint32_t *it = items + (size_t)(b - 1) * w;
            r0[q] = b <= s.n && lane < T ? it[lane] : 0;
            r1[q] = b <= s.n && lane + 32 < T ? it[lane + 32] : 0;
        };
#pragma unroll
        for (int q = 0; q < DP_RUNS_AHEAD; q++) load(a + 1 + q, q);
        for (int b0 = a + 1; b0 <= s.n; b0 += DP_RUNS_AHEAD) {
            /* DP_RUNS_AHEAD ends at once, with no branch: the lane's terms
             * first (an empty token adds nothing: x = accx, as accx is
             * xlogx(acc) throughout; items past n read as empty), then the
             * warp sums of all of them, whose shuffles then overlap (one
             * end at a time, each sum waited on the one before: 0.04 ms a
             * launch), then the runs' costs in order */
            uint64_t ds[DP_RUNS_AHEAD], dc[DP_RUNS_AHEAD];
            uint32_t du[DP_RUNS_AHEAD];
#pragma unroll
            for (int q = 0; q < DP_RUNS_AHEAD; q++) {
                const uint32_t c0 = r0[q], c1 = r1[q];
                load(b0 + q + DP_RUNS_AHEAD, q);
                const uint64_t x0 = lsx_dp_xlogx((uint64_t)acc0 + c0), x1 = lsx_dp_xlogx((uint64_t)acc1 + c1);
                ds[q] = (x0 - accx0) + (x1 - accx1);
                du[q] = (uint32_t)(acc0 == 0 && c0) + (uint32_t)(acc1 == 0 && c1);
                dc[q] = (uint64_t)c0 + c1;
                acc0 += c0, accx0 = x0, acc1 += c1, accx1 = x1;
            }
#pragma unroll
            for (int q = 0; q < DP_RUNS_AHEAD; q++) {
                ds[q] = warp_sum(ds[q]);
                dc[q] = warp_sum(dc[q]);
                du[q] = warp_sum(du[q]);
            }
#pragma unroll
            for (int q = 0; q < DP_RUNS_AHEAD; q++) {
                sum += ds[q], used += du[q], cnt += dc[q];
                const int b = b0 + q;
                if (lane == 0 && b <= s.n) gcost[b - 1][g] = lsx_dp_group_cost(cnt, sum, used, learn);
            }
        }
    }
    __syncthreads();
    uint64_t *cost = sc.cost + (size_t)p * cost_cells;
    for (int b = a + 1 + (int)threadIdx.x; b <= s.n; b += blockDim.x) {
        uint64_t total = 0;
        for (int k = 0; k < s.ng; k++) total += gcost[b - 1][k];
        cost[a * (s.n + 1) + b] = total;
    }
}

/* cut_runs() and the classes of the C code; after the last step, the
 * candidate's contexts (dp_run's view: nctx, thr, nib, ibnd).  Cell (j, b)
 * is lsx_dp_cut_cell's minimum, taken by a warp: each lane over its
 * starts a in order, then the lanes' (value, a) by the smallest value and
 * among equals the smallest a. */
__global__ void __launch_bounds__(DP_CUT_THREADS) dp_cut_kernel(dp_scratch sc, int step, int last,
                                                                lsx_gpu_cand *cand0, int cand_stride, int *ok)
{
    __shared__ unsigned long long D[(DP_KMAX + 1) * (DP_NMAX + 1)];
    __shared__ int arg[(DP_KMAX + 1) * (DP_NMAX + 1)];
    __shared__ unsigned long long cost[(DP_NMAX + 1) * (DP_NMAX + 1)];
    const int p = blockIdx.x;
    dp_state &d = sc.st[p];
    const dp_step s = step_of(d, step);
    if (!s.skip) {
        const int n = s.n, k = s.k, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        /* the run costs a < b (the others are never read) */
        const uint64_t *gc = sc.cost + (size_t)p * cost_cells;
        for (int i = threadIdx.x; i < (n + 1) * (n + 1); i += blockDim.x) cost[i] = gc[i];
        for (int b = threadIdx.x; b <= n; b += blockDim.x) D[b] = b == 0 ? 0 : UINT64_MAX;
        __syncthreads();
        for (int j = 1; j <= k; j++) {
            const unsigned long long *prev = D + (j - 1) * (n + 1);
            /* the warp's cells b = warp + 32 t at once, with no branch, so
             * that their shuffles overlap (a cell at a time, each
             * minimum's five shuffle steps waited on each other) */
            uint64_t best[DP_CUT_CELLS];
            int ba[DP_CUT_CELLS];
#pragma unroll
            for (int t = 0; t < DP_CUT_CELLS; t++) {
                const int b = warp + t * (DP_CUT_THREADS / 32), end = b <= n ? b : 0;
                best[t] = UINT64_MAX, ba[t] = 0x7fffffff;
#pragma unroll
                for (int u = 0; u < DP_NMAX / 32; u++) {
                    const int a = j - 1 + lane + 32 * u;
                    if (a < end) {
                        const uint64_t pa = prev[a];
                        const uint64_t v = pa == UINT64_MAX ? UINT64_MAX : pa + cost[a * (n + 1) + b];
                        if (v < best[t]) best[t] = v, ba[t] = a;
                    }
                }
            }
            for (int o = 16; o > 0; o >>= 1)
#pragma unroll
                for (int t = 0; t < DP_CUT_CELLS; t++) {
                    const uint64_t ob = __shfl_xor_sync(0xffffffffu, best[t], o);
                    const int oa = __shfl_xor_sync(0xffffffffu, ba[t], o);
                    if (ob < best[t] || (ob == best[t] && oa < ba[t])) best[t] = ob, ba[t] = oa;
                }
#pragma unroll
            for (int t = 0; t < DP_CUT_CELLS; t++) {
                const int b = warp + t * (DP_CUT_THREADS / 32);
                if (lane == 0 && b <= n) {
                    D[j * (n + 1) + b] = best[t];
                    arg[j * (n + 1) + b] = best[t] == UINT64_MAX ? 0 : ba[t]; /* lsx_dp_cut_cell's 0 where none */
                }
            }
            __syncthreads();
        }
        if (threadIdx.x == 0) {
            int *cut = s.along_bins ? d.acut : d.icut;
            for (int j = k, b = n; j >= 1; j--) {
                b = arg[j * (n + 1) + b];
                if (j > 1) cut[j - 2] = b;
            }
            if (s.along_bins) {
                lsx_dp_classes(d.acut, d.nctx, d.B, d.acls);
            } else {
                lsx_dp_classes(d.icut, d.nib, d.NI, d.icls);
                d.ni = d.nib;
                for (int c = 0; c < CTX_MAX_IB; c++) d.ibnd[c] = c < d.nib - 1 ? (uint8_t)d.ib[d.icut[c]] : 0;
            }
        }
    }
    if (!last || threadIdx.x != 0) return;
    ok[p] = d.ok;
    if (!d.ok) return;
    lsx_gpu_cand *c = cand0 + (size_t)p * cand_stride;
    c->nctx = d.nctx;
    c->use_classes = 2;
    for (int a = 0; a < CTX_MAX; a++) c->thr[a] = a < d.nctx - 1 ? lsx_thr_bin_edge(d.qb[d.acut[a]]) : 0;
    c->classes[0] = (uint8_t)d.ni;
    for (int i = 0; i < CTX_MAX_IB; i++) c->classes[1 + i] = d.ibnd[i];
}

cudaError_t lsx_gpu_dp_contexts(const uint32_t *hist, const uint8_t *info, int npipe, lsx_gpu_cand *cand0,
                                int cand_stride, int *ok, void *scratch, cudaStream_t st)
{
    const dp_scratch sc = scratch_of(scratch, npipe);
    dp_sums_kernel<<<dim3(LSX_TQ, npipe), DP_PACK_THREADS, 0, st>>>(hist, sc);
    dp_pack_kernel<<<npipe, DP_PACK_THREADS, 0, st>>>(info, sc);
    for (int step = 0; step < 3; step++) {
        dp_items_kernel<<<dim3(DP_NMAX, npipe), DP_PACK_THREADS, 0, st>>>(hist, sc, step);
        dp_runs_kernel<<<dim3(DP_NMAX, npipe), DP_NGMAX * 32, 0, st>>>(sc, step);
        dp_cut_kernel<<<npipe, DP_CUT_THREADS, 0, st>>>(sc, step, step == 2, cand0, cand_stride, ok);
    }
    return cudaGetLastError();
}

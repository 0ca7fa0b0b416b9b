/* Encoder-only context candidate (docs/FORMAT.md 3.3): activity thresholds
 * and brightness bounds chosen per residual set by a dynamic program over an
 * integer histogram, instead of the fixed half-octave thresholds and the
 * equal-population brightness classes.  The decoder reads any thresholds, so
 * nothing in the format changes; the encoder codes this candidate next to
 * the others and keeps the smallest stream (research/r9-thresholds.md:
 * -0.13 % on the 14 bench frames, -0.15 % on 8 held-out ones).
 *
 * The histogram: pixel counts of [a16 bin][intensity token][residual token]
 * (lsx_thr_cell in lsmix_arith.h; lsx_thr_histogram counts them),
 * a16 on a quarter-octave grid (an eighth-octave one was no better and
 * doubles the DP's work).  The cost of a context is the static code length
 * of its tokens plus LSX_DP_LEARN_BITS per token it uses (a stand-in for
 * what the adaptive coder pays to learn them: without it the DP splits too
 * finely; 8 bits beat 0, 2, 4, 16, 32 and 0.5 log2 n).  Everything is
 * integer arithmetic (code lengths in Q20 bits from a fixed log2 table), so
 * the same histogram gives the same contexts on every machine: the GPU
 * encoder counts the histogram on the device from its own residuals,
 * activities and intensity tokens (lsx_thr_cell is AURP_HD) and runs the
 * same DP there (gpu/lsmix_dp_kernels.cu) with the arithmetic of
 * lsmix_dp.h, which this file uses too. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lsmix.h"
#include "lsmix_dp.h"

/* Optimal cut of n ordered items into k runs, cost[a * (n + 1) + b] the cost
 * of the run of items a..b-1; writes the k - 1 cut points (the first item of
 * runs 1..k-1) into cut.  O(n^2 k); ties keep the smallest cut. */
static void cut_runs(const uint64_t *cost, int n, int k, int *cut)
{
    uint64_t D[(CTX_MAX + 1) * (LSX_TQ + 1)];
    int arg[(CTX_MAX + 1) * (LSX_TQ + 1)];
    for (int b = 0; b <= n; b++) D[b] = b == 0 ? 0 : UINT64_MAX;
    for (int j = 1; j <= k; j++)
        for (int b = 0; b <= n; b++)
            D[j * (n + 1) + b] = lsx_dp_cut_cell(D + (j - 1) * (n + 1), cost, n, j, b, &arg[j * (n + 1) + b]);
    for (int j = k, b = n; j >= 1; j--) {
        b = arg[j * (n + 1) + b];
        if (j > 1) cut[j - 2] = b;
    }
}

/* Cost of every run a..b-1 of n ordered items (activity bins or intensity
 * tokens) into cost[a * (n + 1) + b]: the sum over ng groups (the classes
 * of the other dimension) of the static code length of the run's tokens,
 * n H(tok) = n log2 n - sum c log2 c, plus a learning charge per token the
 * context uses (the adaptive coder pays to learn each one).  The items'
 * histograms come as prefix sums pre[item][ng][T] (item 0 = nothing).  For
 * each start a the run grows item by item, updating only the entries the
 * new item touches (its non-zero counts), so sparse items cost little.
 * The starts are independent: worker i of `threads` takes a = i, i +
 * threads, ... (interleaved: early starts grow the longest runs), each
 * writing its own rows of cost, so any thread count gives the same costs. */
typedef struct {
    int n, ng, T, threads;
    uint64_t learn;
    const uint16_t *nzk;
    const uint32_t *nzc;
    const size_t *nzo;
    uint64_t *cost;
    atomic_int failed;
} run_job;

static void run_costs_from(void *arg, int worker)
{
    run_job *j = arg;
    const int n = j->n, ng = j->ng;
    const size_t w = (size_t)ng * j->T;
    uint32_t *acc = malloc(sizeof *acc * w);
    uint64_t *accx = malloc(sizeof *accx * w); /* xlogx(acc) */
    if (!acc || !accx) {
        free(acc), free(accx);
        atomic_store(&j->failed, 1);
        return;
    }
    for (int a = worker; a < n; a += j->threads) {
        uint64_t s[CTX_MAX] = {0}, cnt[CTX_MAX] = {0}, used[CTX_MAX] = {0};
        memset(acc, 0, sizeof *acc * w);
        memset(accx, 0, sizeof *accx * w);
        for (int b = a + 1; b <= n; b++) {
            for (size_t e = j->nzo[b - 1]; e < j->nzo[b]; e++) {
                int k = j->nzk[e], g = k / j->T;
                uint64_t x = lsx_dp_xlogx(acc[k] + j->nzc[e]);
                used[g] += acc[k] == 0;
                acc[k] += j->nzc[e];
                s[g] += x - accx[k];
                accx[k] = x;
                cnt[g] += j->nzc[e];
            }
            uint64_t total = 0;
            for (int g = 0; g < ng; g++)
                total += lsx_dp_group_cost(cnt[g], s[g], used[g], j->learn);
            j->cost[a * (n + 1) + b] = total;
        }
    }
    free(acc), free(accx);
}

static int run_costs(const uint32_t *pre, int n, int ng, int T, uint64_t learn, int threads, uint64_t *cost)
{
    const size_t w = (size_t)ng * T;
    uint16_t *nzk = malloc(sizeof *nzk * n * w);
    uint32_t *nzc = malloc(sizeof *nzc * n * w);
    size_t *nzo = malloc(sizeof *nzo * (n + 1));
    if (!nzk || !nzc || !nzo) {
        free(nzk), free(nzc), free(nzo);
        return -1;
    }
    size_t o = 0;
    for (int i = 0; i < n; i++) {
        nzo[i] = o;
        for (size_t k = 0; k < w; k++) {
            uint32_t c = pre[(i + 1) * w + k] - pre[i * w + k];
            if (c) nzk[o] = (uint16_t)k, nzc[o++] = c;
        }
    }
    nzo[n] = o;
    run_job j = {n, ng, T, threads < 1 ? 1 : threads > n ? n : threads, learn, nzk, nzc, nzo, cost, 0};
    aurp_parallel(j.threads, run_costs_from, &j);
    free(nzk), free(nzc), free(nzo);
    return atomic_load(&j.failed) ? -1 : 0;
}

/* Sums the items' histograms (of h[B][NI][T], along the bins when
 * along_bins, else along the intensity tokens) into prefix sums pre[item +
 * 1][group][T], each item's entries added to the group cls[] of the other
 * dimension. */
static void prefix(const uint32_t *h, int B, int NI, int T, int along_bins, const int *cls, int ng,
                   uint32_t *pre)
{
    int n = along_bins ? B : NI;
    const size_t w = (size_t)ng * T;
    memset(pre, 0, sizeof *pre * w);
    for (int x = 0; x < n; x++) {
        uint32_t *p = pre + (x + 1) * w;
        memcpy(p, p - w, sizeof *p * w);
        for (int y = 0; y < (along_bins ? NI : B); y++) {
            int q = along_bins ? x : y, i = along_bins ? y : x;
            const uint32_t *r = h + ((size_t)q * NI + i) * T;
            uint32_t *d = p + (size_t)cls[y] * T;
            for (int t = 0; t < T; t++) d[t] += r[t];
        }
    }
}

void lsx_thr_histogram(const uint32_t *act, const uint8_t *itok, const int32_t *res,
                       uint64_t pixels, uint32_t *hist)
{
    memset(hist, 0, sizeof *hist * LSX_THR_CELLS);
    for (uint64_t i = 0; i < pixels; i++) hist[lsx_thr_cell(act[i], itok[i], res[i])]++;
}

int lsx_dp_contexts(const uint32_t *hist, int nctx, int nib, int threads, lsx_view *v)
{
    const uint64_t learn = (uint64_t)LSX_DP_LEARN_BITS << 20;
    /* pack the histogram to its non-empty activity bins qb[], intensity
     * tokens ib[] and residual tokens tb[]: no cut can fall inside an
     * empty run, and the DP's cost grows with the square of the items */
    int qb[LSX_TQ], ib[CTX_TOKENS], tb[CTX_TOKENS], B = 0, NI = 0, T = 0;
    uint64_t sq[LSX_TQ] = {0}, si[CTX_TOKENS] = {0}, st[CTX_TOKENS] = {0};
    for (int q = 0; q < LSX_TQ; q++)
        for (int i = 0; i < CTX_TOKENS; i++)
            for (int t = 0; t < CTX_TOKENS; t++) {
                uint32_t c = hist[((size_t)q * CTX_TOKENS + i) * CTX_TOKENS + t];
                sq[q] += c, si[i] += c, st[t] += c;
            }
    for (int q = 0; q < LSX_TQ; q++)
        if (sq[q]) qb[B++] = q;
    for (int i = 0; i < CTX_TOKENS; i++)
        if (si[i]) ib[NI++] = i;
    for (int t = 0; t < CTX_TOKENS; t++)
        if (st[t]) tb[T++] = t;
    if (B == 0) return -1;
    int N = B > NI ? B : NI;
    uint32_t *h = malloc(sizeof *h * (size_t)B * NI * T);
    uint32_t *pre = malloc(sizeof *pre * (size_t)(N + 1) * CTX_MAX * T);
    uint64_t *cost = malloc(sizeof *cost * (size_t)(N + 1) * (N + 1));
    int ok = h && pre && cost;
    for (int q = 0; ok && q < B; q++)
        for (int i = 0; i < NI; i++)
            for (int t = 0; t < T; t++)
                h[((size_t)q * NI + i) * T + t] = hist[((size_t)qb[q] * CTX_TOKENS + ib[i]) * CTX_TOKENS + tb[t]];
    if (nctx > B) nctx = B;
    if (nib > NI) nib = NI;
    /* Alternating, each step optimal for the other's classes: activity
     * runs for v's intensity classes (the equal-population ones), intensity
     * runs for those, activity runs again (a further round changed 1 stream
     * of 28 by 0.01 %) */
    int icls[CTX_TOKENS], acls[LSX_TQ], acut[CTX_MAX], icut[CTX_MAX_IB];
    int ni = v->nib;
    for (int i = 0; i < NI; i++) icls[i] = lsx_intensity_class(ib[i], v->ibnd, v->nib);
    for (int step = 0; ok && step < 3; step++) {
        if (step == 1 && nib <= 1) continue;
        if (step != 1) {
            prefix(h, B, NI, T, 1, icls, ni, pre);
            if (!(ok = run_costs(pre, B, ni, T, learn, threads, cost) == 0)) break;
            cut_runs(cost, B, nctx, acut);
            lsx_dp_classes(acut, nctx, B, acls);
        } else {
            prefix(h, B, NI, T, 0, acls, nctx, pre);
            if (!(ok = run_costs(pre, NI, nctx, T, learn, threads, cost) == 0)) break;
            cut_runs(cost, NI, nib, icut);
            lsx_dp_classes(icut, nib, NI, icls);
            ni = nib;
            /* the header's bounds: the first token of classes 1.. (never
             * token 0: a cut is at packed index >= 1) */
            v->nib = nib;
            memset(v->ibnd, 0, sizeof v->ibnd);
            for (int c = 0; c < nib - 1; c++) v->ibnd[c] = (uint8_t)ib[icut[c]];
        }
    }
    /* thresholds: the smallest a16 of the first bin of contexts 1.. */
    v->nctx = nctx;
    for (int a = 0; a < nctx - 1; a++) v->thr[a] = lsx_thr_bin_edge(qb[acut[a]]);
    free(h), free(pre), free(cost);
    return ok ? 0 : -1;
}

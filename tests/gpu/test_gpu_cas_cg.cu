/* The device's sums of the cascade stage (lsx_gpu_cas_sums, gpu/
 * lsmix_cascade_kernels.cu) against the C encoder's: the same median and
 * the same correlations, to the integer, on residual planes of widths from
 * 1 to 4096 columns and clips on both sides of 127 (the values as one plane
 * of bytes and as two).  Then the device's fit of the cascade's wide stage
 * (lsx_gpu_cas_cg, gpu/lsmix_cascade_cg.cu) against the C encoder's
 * (lsx_cas_solve): the same
 * rounded weights and the same verdict on whether the system is solvable,
 * bit for bit, on the correlations of planes of every kind the encoders
 * meet: white residuals, structure in the rows above, along the readout
 * or both (strongly coloured ones take many iterations), a constant plane
 * (R = 0), clips from 1 to 32767 and correlations no plane can have
 * (indefinite).  The identity tests meet the kernel only on their frames'
 * systems.  Ends "N passed, N failed" like the other GPU tests. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_check.h"
#include "lsmix.h"
#include "lsmix_kernels.h"

static uint64_t lcg(uint64_t *s) { return *s = *s * 6364136223846793005ull + 1442695040888963407ull; }

/* Plane `kind` of W x H clipped residuals with clip c. */
static void make_plane(int kind, uint32_t W, uint32_t H, int32_t clip, uint64_t *s, int16_t *ec)
{
    const int32_t amp = clip < 3 ? 2 : clip < 200 ? clip : 200;
    for (size_t i = 0; i < (size_t)W * H; i++) {
        const uint32_t m = (uint32_t)(i / W), n = (uint32_t)(i % W);
        int32_t e = kind == 4 ? 0 : (int32_t)((lcg(s) >> 33) % (uint64_t)(2 * amp + 1)) - amp;
        if ((kind == 1 || kind == 3) && m >= 2 && n >= 5) e += ec[i - 2 * W - 5] * 2 / 3;
        if ((kind == 2 || kind == 3) && n >= 2) e += ec[i - 2] / 2 - ec[i - 1] / 4;
        ec[i] = lsx_cas_clipped(e, clip);
    }
}

/* Residuals e1 of a W x H plane with median |e1| about amp / 2, coloured
 * along the rows and down the columns; where `spikes`, hot pixels of
 * +-60000 too (the clip keeps them out of the sums). */
static void make_residuals(uint32_t W, uint32_t H, int32_t amp, int spikes, uint64_t *s, int32_t *e1)
{
    for (size_t i = 0; i < (size_t)W * H; i++) {
        const uint32_t n = (uint32_t)(i % W);
        int32_t e = (int32_t)((lcg(s) >> 33) % (uint64_t)(2 * amp + 1)) - amp;
        if (n >= 1) e += e1[i - 1] / 3;
        if (i >= W) e -= e1[i - W] / 4;
        if (spikes && (lcg(s) >> 40) % 97 == 0) e = (lcg(s) >> 63) ? 60000 : -60000;
        e1[i] = e;
    }
}

/* lsx_gpu_cas_sums against the C encoder's median, clip and correlations. */
static void check_sums(const lsx_cas_plan *pl)
{
    static const uint32_t shapes[][2] = {{1, 9},     {7, 40},    {33, 20},   {300, 50},
                                         {1000, 24}, {1024, 64}, {2112, 20}, {4096, 12}};
    static const int32_t amps[] = {1, 20, 120, 400, 5000};
    const size_t max_px = 2112 * 64;
    int32_t *e1 = (int32_t *)malloc(sizeof *e1 * max_px), *d_e1;
    int16_t *ec = (int16_t *)malloc(sizeof *ec * max_px), *d_ec;
    uint32_t *hist = (uint32_t *)malloc(sizeof *hist * 65536), *d_hist, *d_md;
    int64_t R[LSX_CAS_MAXO], G[LSX_CAS_MAXO], *d_R, *d_Rd;
    int *d_dm, *d_dn;
    if (!e1 || !ec || !hist || cudaMalloc(&d_e1, sizeof *e1 * max_px) || cudaMalloc(&d_ec, sizeof *ec * max_px) ||
        cudaMalloc(&d_hist, sizeof *hist * 65536) || cudaMalloc(&d_md, 4) || cudaMalloc(&d_R, sizeof R) ||
        cudaMalloc(&d_Rd, sizeof(int64_t) * LSX_GPU_CAS_RD) || cudaMalloc(&d_dm, sizeof(int) * pl->no) ||
        cudaMalloc(&d_dn, sizeof(int) * pl->no)) {
        CHECK(0, "sums: memory");
        return;
    }
    cudaMemcpy(d_dm, pl->dm, sizeof(int) * pl->no, cudaMemcpyHostToDevice);
    cudaMemcpy(d_dn, pl->dn, sizeof(int) * pl->no, cudaMemcpyHostToDevice);
    lsx_gpu_cas_lags lags;
    CHECK(lsx_gpu_cas_setup(pl, &lags) == cudaSuccess, "sums: the plan's runs of lags and the kernels' set-up");
    /* a plan whose offsets lie beyond a run of 256 lags of their row (or
     * beyond the rows the kernels stage) is refused, not summed wrong */
    lsx_cas_plan *bad = (lsx_cas_plan *)malloc(sizeof *bad);
    lsx_gpu_cas_lags bad_lags;
    if (bad) {
        *bad = *pl;
        bad->dn[bad->no - 1] = bad->dn[0] + 300;
        bad->dm[bad->no - 1] = bad->dm[0];
        CHECK(lsx_gpu_cas_setup(bad, &bad_lags) == cudaErrorInvalidValue, "sums: a run of lags past 256 is refused");
        *bad = *pl;
        bad->dm[0] = LSX_CAS_ROWS_MAX + 1;
        CHECK(lsx_gpu_cas_setup(bad, &bad_lags) == cudaErrorInvalidValue, "sums: a row offset past the staged rows is refused");
        free(bad);
    }
    uint64_t s = 11;
    int small = 0, large = 0;
    for (size_t sh = 0; sh < sizeof shapes / sizeof *shapes; sh++)
        for (size_t a = 0; a < sizeof amps / sizeof *amps; a++) {
            const uint32_t W = shapes[sh][0], H = shapes[sh][1];
            const uint64_t px = (uint64_t)W * H;
            make_residuals(W, H, amps[a], (int)(a + sh) % 2, &s, e1);
            memset(hist, 0, sizeof *hist * 65536);
            for (uint64_t i = W; i < px; i++) {
                const uint32_t v = (uint32_t)(e1[i] < 0 ? -e1[i] : e1[i]);
                hist[v > 65535 ? 65535 : v]++;
            }
            const int32_t clip = lsx_cas_clip(hist, px - W);
            for (uint64_t i = 0; i < px; i++) ec[i] = lsx_cas_clipped(e1[i], clip);
            if (lsx_cas_correlations(pl, ec, W, H, clip, 2, R) != 0) {
                CHECK(0, "sums: C correlations");
                continue;
            }
            cudaMemcpy(d_e1, e1, sizeof *e1 * px, cudaMemcpyHostToDevice);
            cudaError_t rc = lsx_gpu_cas_sums(d_e1, W, H, d_hist, d_md, d_ec, &lags, pl->no, d_dm, d_dn, d_Rd, d_R, 0);
            uint32_t md = 0;
            if (rc == cudaSuccess) rc = cudaMemcpy(G, d_R, sizeof(int64_t) * pl->no, cudaMemcpyDeviceToHost);
            if (rc == cudaSuccess) rc = cudaMemcpy(&md, d_md, 4, cudaMemcpyDeviceToHost);
            CHECK(rc == cudaSuccess, "sums %u x %u: the kernels ran: %s", W, H, cudaGetErrorString(rc));
            CHECK(lsx_cas_clip_of_median(md) == clip, "sums %u x %u amp %d: device clip %d, C %d", W, H, amps[a],
                  lsx_cas_clip_of_median(md), clip);
            int differ = 0, first = -1;
            for (int k = 0; k < pl->no; k++)
                if (G[k] != R[k]) differ++, first = first < 0 ? k : first;
            CHECK(differ == 0, "sums %u x %u clip %d: %d of %d correlations differ, first (%d, %d): %lld against %lld",
                  W, H, clip, differ, pl->no, first < 0 ? 0 : pl->dm[first], first < 0 ? 0 : pl->dn[first],
                  first < 0 ? 0LL : (long long)G[first], first < 0 ? 0LL : (long long)R[first]);
            small += clip <= 127, large += clip > 127;
        }
    CHECK(small > 0 && large > 0, "sums: clips at most 127 (%d planes) and above (%d) both met", small, large);
    cudaFree(d_e1), cudaFree(d_ec), cudaFree(d_hist), cudaFree(d_md), cudaFree(d_R), cudaFree(d_Rd);
    cudaFree(d_dm), cudaFree(d_dn);
    free(e1), free(ec), free(hist);
}

int main(void)
{
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("GPU cascade fit tests skipped: no device\n0 passed, 0 failed\n");
        return 77;
    }
    const int quick = getenv("AURP_GPU_TEST_QUICK") != NULL;
    const uint32_t W = 300, H = 120;
    lsx_cas_plan *pl = (lsx_cas_plan *)malloc(sizeof *pl);
    int16_t *ec = (int16_t *)malloc(sizeof(int16_t) * W * H);
    int64_t R[LSX_CAS_MAXO];
    if (!pl || !ec) return 1;
    lsx_cas_plan_make(pl);
    check_sums(pl);
    const int nw = pl->sup[1].nl;
    int64_t *d_R;
    uint32_t *d_md;
    uint16_t *d_pair;
    int *d_lag, *d_ok;
    int16_t *d_w;
    if (cudaMalloc(&d_R, sizeof R) || cudaMalloc(&d_md, 4) || cudaMalloc(&d_pair, 2 * (size_t)nw * nw) ||
        cudaMalloc(&d_lag, sizeof(int) * nw) || cudaMalloc(&d_ok, sizeof(int)) || cudaMalloc(&d_w, 2 * (size_t)nw))
        return 1;
    cudaMemcpy(d_pair, pl->sup[1].pair, 2 * (size_t)nw * nw, cudaMemcpyHostToDevice);
    cudaMemcpy(d_lag, pl->sup[1].lag, sizeof(int) * nw, cudaMemcpyHostToDevice);
    static const uint32_t medians[] = {0, 1, 3, 10, 40, 300, 16382, 20000};
    const int nmed = (int)(sizeof medians / sizeof *medians);
    int seen_ok = 0, seen_not = 0;
    uint64_t s = 7;
    for (int t = 0; t < (quick ? 24 : 120); t++) {
        const int kind = t % 6; /* 0 white, 1 above, 2 raster, 3 both, 4 constant, 5 indefinite */
        const uint32_t md = medians[(t / 6) % nmed];
        const int32_t clip = lsx_cas_clip_of_median(md);
        make_plane(kind == 5 ? 0 : kind, W, H, clip, &s, ec);
        if (lsx_cas_correlations(pl, ec, W, H, clip, 2, R) != 0) return 1;
        if (kind == 5)
            for (int k = 1; k < pl->no; k++) R[k] = R[0] - (int64_t)(lcg(&s) >> 50);
        lsx_view v;
        memset(&v, 0, sizeof v);
        v.W = W, v.H = H;
        lsx_view wide;
        lsx_cas_solve(pl, R, clip, &v, &wide);
        cudaMemcpy(d_R, R, sizeof(int64_t) * pl->no, cudaMemcpyHostToDevice);
        cudaMemcpy(d_md, &md, 4, cudaMemcpyHostToDevice);
        cudaError_t rc = lsx_gpu_cas_cg(d_R, pl->no, d_md, d_pair, d_lag, nw, d_w, d_ok, 0);
        int16_t w[LSX_CAS_NL_MAX];
        int ok = -1;
        if (rc == cudaSuccess) rc = cudaMemcpy(w, d_w, 2 * (size_t)nw, cudaMemcpyDeviceToHost);
        if (rc == cudaSuccess) rc = cudaMemcpy(&ok, d_ok, sizeof ok, cudaMemcpyDeviceToHost);
        CHECK(rc == cudaSuccess, "system %d: the kernel ran: %s", t, cudaGetErrorString(rc));
        CHECK(ok == wide.cas, "system %d (kind %d, clip %d): device solvable %d, C %d", t, kind, clip, ok,
              wide.cas);
        if (ok == 1 && wide.cas) {
            int differ = 0;
            for (int j = 0; j < nw; j++) differ += w[j] != wide.cas_w[j];
            CHECK(differ == 0, "system %d (kind %d, clip %d): %d of %d weights differ", t, kind, clip, differ, nw);
        }
        seen_ok += ok == 1, seen_not += ok == 0;
    }
    CHECK(seen_ok > 0 && seen_not > 0, "systems solved %d, not solvable %d: both verdicts met", seen_ok, seen_not);
    cudaFree(d_R), cudaFree(d_md), cudaFree(d_pair), cudaFree(d_lag), cudaFree(d_ok), cudaFree(d_w);
    free(ec);
    free(pl);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

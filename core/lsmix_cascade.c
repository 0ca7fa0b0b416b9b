/* The encoder's fit of the lsmix cascade stage (lsmix_cascade.h): the clip
 * from the median |e1|, and the weights by ridge least squares of the
 * clipped residuals on their lags.  The normal equations are read from the
 * frame's correlations at every difference of two lags (a stationary
 * approximation: about 400 integer dot products over the frame instead of
 * NL^2 / 2 products a pixel), solved by Cholesky in double, and the
 * weights rounded to units of 2^-LSX_CAS_SHIFT.  The correlations are
 * exact integers, and the solve is this one function on the host, so the
 * GPU encoder, which sums the correlations on the device, gets the same
 * weights (research/r10-cascade.md). */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lsmix.h"

/* Index of the offset (dm, dn) or its opposite in the plan, added if new. */
static int offset_index(lsx_cas_plan *pl, int dm, int dn)
{
    if (dm < 0 || (dm == 0 && dn < 0)) dm = -dm, dn = -dn;
    for (int k = 0; k < pl->no; k++)
        if (pl->dm[k] == dm && pl->dn[k] == dn) return k;
    pl->dm[pl->no] = dm;
    pl->dn[pl->no] = dn;
    return pl->no++;
}

void lsx_cas_plan_make(lsx_cas_plan *pl)
{
    memset(pl, 0, sizeof *pl);
    offset_index(pl, 0, 0);
    for (int a = 0; a < LSX_CAS_NL; a++) {
        int am, an;
        lsx_cas_lag(a, &am, &an);
        pl->lag[a] = offset_index(pl, am, an);
        for (int b = 0; b < LSX_CAS_NL; b++) {
            int bm, bn;
            lsx_cas_lag(b, &bm, &bn);
            pl->pair[a * LSX_CAS_NL + b] = offset_index(pl, bm - am, bn - an);
        }
    }
}

int32_t lsx_cas_clip(const uint32_t *abs_hist, uint64_t count)
{
    uint64_t acc = 0, half = count / 2;
    uint32_t md = 0;
    for (; md < 65535; md++)
        if ((acc += abs_hist[md]) > half) break;
    return lsx_cas_clip_of_median(md);
}

int64_t lsx_cas_correlation(const int16_t *ec, uint32_t W, uint32_t H, int dm, int dn)
{
    int64_t sum = 0;
    for (uint32_t m = dm > 1 ? (uint32_t)dm : 1; m < H; m++) {
        const int16_t *r = ec + (size_t)m * W, *q = ec + (size_t)(m - dm) * W;
        const int64_t n0 = dn > 0 ? dn : 0, n1 = dn < 0 ? (int64_t)W + dn : (int64_t)W;
        int64_t t = 0;
        for (int64_t n = n0; n < n1; n++) t += (int32_t)r[n] * (int32_t)q[n - dn];
        sum += t;
    }
    return sum;
}

/* Cholesky solve of the SPD system A w = h (n x n, A overwritten). */
static int cholesky_solve(int n, double *A, const double *h, double *w)
{
    for (int j = 0; j < n; j++) {
        double d = A[j * n + j];
        for (int k = 0; k < j; k++) d = d - A[j * n + k] * A[j * n + k];
        if (!(d > 0)) return -1;
        d = sqrt(d);
        A[j * n + j] = d;
        /* column j below the diagonal, four rows at once: each row's sum
         * is the same sequence of operations as alone (the weights do not
         * change), but four independent chains keep the FPU busy where one
         * waits on each subtraction (a solve 0.20 -> 0.10 ms on a Xeon) */
        const double *aj = A + j * n;
        int i = j + 1;
        for (; i + 4 <= n; i += 4) {
            double *a0 = A + i * n, *a1 = a0 + n, *a2 = a1 + n, *a3 = a2 + n;
            double t0 = a0[j], t1 = a1[j], t2 = a2[j], t3 = a3[j];
            for (int k = 0; k < j; k++) {
                const double b = aj[k];
                t0 = t0 - a0[k] * b;
                t1 = t1 - a1[k] * b;
                t2 = t2 - a2[k] * b;
                t3 = t3 - a3[k] * b;
            }
            a0[j] = t0 / d, a1[j] = t1 / d, a2[j] = t2 / d, a3[j] = t3 / d;
        }
        for (; i < n; i++) {
            double t = A[i * n + j];
            for (int k = 0; k < j; k++) t = t - A[i * n + k] * aj[k];
            A[i * n + j] = t / d;
        }
    }
    for (int i = 0; i < n; i++) {
        double t = h[i];
        for (int k = 0; k < i; k++) t = t - A[i * n + k] * w[k];
        w[i] = t / A[i * n + i];
    }
    for (int i = n - 1; i >= 0; i--) {
        double t = w[i];
        for (int k = i + 1; k < n; k++) t = t - A[k * n + i] * w[k];
        w[i] = t / A[i * n + i];
    }
    return 0;
}

int lsx_cas_solve(const lsx_cas_plan *pl, const int64_t *R, int32_t clip, lsx_view *v)
{
    enum { NL = LSX_CAS_NL };
    v->cas = 0;
    double *A = malloc(sizeof *A * NL * NL), h[NL], w[NL];
    if (!A) return 0;
    for (int a = 0; a < NL; a++) {
        for (int b = 0; b < NL; b++) A[a * NL + b] = (double)R[pl->pair[a * NL + b]];
        A[a * NL + a] = A[a * NL + a] + 1e-3 * (double)R[0] + 1.0; /* the ridge */
        h[a] = (double)R[pl->lag[a]];
    }
    const int ok = cholesky_solve(NL, A, h, w) == 0;
    free(A);
    if (!ok) return 0;
    /* weights in units of 2^-S, scaled down where sum |w| (clip + 1) would reach 2^31 */
    const double unit = (double)(1 << LSX_CAS_SHIFT), lim = 2147483647.0;
    double sw = 0;
    for (int j = 0; j < NL; j++) sw += fabs(w[j]) * unit + 1;
    const double sc = sw * (double)(clip + 1) > lim ? lim / (double)(clip + 1) / sw : 1.0;
    for (int j = 0; j < NL; j++) {
        double q = floor(sc * w[j] * unit + 0.5);
        v->cas_w[j] = (int16_t)(q > 32767 ? 32767 : q < -32768 ? -32768 : q);
    }
    for (int j = 0; j < LSX_CAS_NR; j++) v->cas_wrev[LSX_CAS_NR - 1 - j] = v->cas_w[j];
    v->cas_clip = clip;
    v->cas = 1;
    return 1;
}

/* The correlations of the plan's offsets on threads (each its own). */
typedef struct {
    const lsx_cas_plan *pl;
    const int16_t *ec;
    uint32_t W, H;
    int threads;
    int64_t *R;
} corr_job;

static void correlations_from(void *arg, int worker)
{
    corr_job *j = arg;
    for (int k = worker; k < j->pl->no; k += j->threads)
        j->R[k] = lsx_cas_correlation(j->ec, j->W, j->H, j->pl->dm[k], j->pl->dn[k]);
}

int lsx_cas_fit(lsx_view *v, const int32_t *e1, int16_t *ec, int threads)
{
    const uint32_t W = v->W, H = v->H;
    const uint64_t pixels = (uint64_t)W * H;
    v->cas = 0;
    if (H < 2) return 0;
    uint32_t *hist = calloc(65536, sizeof *hist);
    lsx_cas_plan *pl = malloc(sizeof *pl);
    int64_t *R = malloc(sizeof *R * LSX_CAS_MAXO);
    int ok = 0;
    if (hist && pl && R) {
        for (uint64_t i = W; i < pixels; i++) {
            uint32_t a = (uint32_t)(e1[i] < 0 ? -e1[i] : e1[i]);
            hist[a > 65535 ? 65535 : a]++;
        }
        const int32_t clip = lsx_cas_clip(hist, pixels - W);
        for (uint64_t i = 0; i < pixels; i++) ec[i] = lsx_cas_clipped(e1[i], clip);
        lsx_cas_plan_make(pl);
        corr_job j = {pl, ec, W, H, threads < 1 ? 1 : threads, R};
        if (aurp_parallel(j.threads, correlations_from, &j) != 0) correlations_from(&(corr_job){pl, ec, W, H, 1, R}, 0);
        ok = lsx_cas_solve(pl, R, clip, v);
    }
    free(hist);
    free(pl);
    free(R);
    return ok;
}

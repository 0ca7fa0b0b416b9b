/* RL, the row members of predictor set 2 (docs/FORMAT.md 3.2): two small
 * ridge least-squares fits trained along the current row, on pixels minus
 * BG's column level C.  Member q predicts C[n] plus the fit of its
 * regressors z, the pixels at (m - dm, n + dn) of its support minus their
 * columns' C; the sums A = sum z z^T and b = sum z y halve every pixel (a
 * memory of about two pixels: along a curved order the relation between
 * neighbours changes from pixel to pixel) and restart at every row.  The
 * ridge adds 0.002 A_jj plus 30 sigma^2 (sigma = BG's column scale S /
 * 172.5, the noise's sd in ADU) to the diagonal, so that on faint,
 * noise-dominated pixels the member falls back to C and on bright ones it
 * follows the last pixels' relation.  Research round 9 (research/
 * r9-orders.md): about 1 % off curved cross-dispersed orders.
 *
 * A row needs only the pixels of rows m-2..m left of n and C, S of row m;
 * each entry of A and b is a recurrence of its own (the GPU runs a warp a
 * row, a lane an entry, then the pixels' solves in parallel).  Every operation is one fixed
 * sequence of IEEE double operations. */
#ifndef AURP_LSMIX_RL_H
#define AURP_LSMIX_RL_H

#include <stdint.h>

#include "hostdev.h"

#define LSX_RL_N 2     /* members */
#define LSX_RL_MAXR 5  /* regressors of the larger one, RL1 */
#define LSX_RL2_R 3    /* regressors of RL2 */
#define LSX_RL_RIDGE 0.002
#define LSX_RL_NOISE 30.0

typedef struct {
    double A[LSX_RL_MAXR * LSX_RL_MAXR]; /* lower triangle, [i * LSX_RL_MAXR + j], j <= i */
    double b[LSX_RL_MAXR];
    double z[LSX_RL_MAXR]; /* this pixel's regressors */
    /* A's ridge factors for the pixel to predict: L (strict lower
     * triangle), 1 / pivot, whether every pivot was positive */
    double L[LSX_RL_MAXR * LSX_RL_MAXR], inv[LSX_RL_MAXR];
    int ok;
} lsx_rl;

/* Member q's regressor count: RL1 5, RL2 3. */
static inline AURP_HD_FORCE int lsx_rl_size(int q) { return q ? LSX_RL2_R : LSX_RL_MAXR; }

/* Regressor k of member q is the pixel (m - dm, n + dn): RL1 the row above
 * at n-1, n, n+1, two rows above at n, the left pixel; RL2 the two left
 * pixels and the pixel above. */
static inline AURP_HD_FORCE void lsx_rl_support(int q, int k, int *dm, int *dn)
{
    if (!q) { /* (1,-1) (1,0) (1,1) (2,0) (0,-1) */
        *dm = k < 3 ? 1 : k == 3 ? 2 : 0;
        *dn = k < 3 ? k - 1 : k == 3 ? 0 : -1;
    } else { /* (0,-1) (0,-2) (1,0) */
        *dm = k < 2 ? 0 : 1;
        *dn = k < 2 ? -1 - k : 0;
    }
}

/* The regressors of member q at (m >= 1, n): rows cur = m, up = m-1, up2 =
 * m-2 (m-1 when m = 1); c: BG's column levels of row m (Q4).  Columns are
 * clamped to the image; the current row's pixel left of column 0 is the
 * pixel above it. */
static inline AURP_HD_FORCE void lsx_rl_regressors(lsx_rl *r, int q, const uint16_t *cur, const uint16_t *up,
                                             const uint16_t *up2, const int32_t *c, uint32_t W, uint32_t n)
{
    AURP_UNROLL
    for (int k = 0; k < lsx_rl_size(q); k++) {
        int dm, dn;
        lsx_rl_support(q, k, &dm, &dn);
        int64_t j = (int64_t)n + dn;
        if (j < 0) j = 0;
        if (j >= (int64_t)W) j = W - 1;
        const uint16_t *row = dm == 0 ? cur : dm == 1 ? up : up2;
        if (dm == 0 && n == 0) row = up, j = 0;
        r->z[k] = (double)row[j] - c[j] * 0.0625;
    }
}

/* One step of a sum with a memory of about two pixels: v / 2 + a b.  Each
 * entry of A and b is such a recurrence of its own (the GPU runs them a
 * lane an entry). */
static inline AURP_HD_FORCE double lsx_rl_halve_add(double v, double a, double b) { return v * 0.5 + a * b; }

/* The fit's target at a pixel: x - C / 16. */
static inline AURP_HD_FORCE double lsx_rl_target(uint16_t x, int32_t c_n) { return (double)x - c_n * 0.0625; }

/* The factors of the ridge system of the pixel to predict: A plus 0.002
 * A_jj + 30 sigma^2 on the diagonal (sigma = S[n] / 172.5; s_n: BG's
 * scale S[n], Q8), as LDL^T with one division a pivot.  A holds the pixels
 * left of n only, and their regressors lie left of them: so that the
 * factors need not x[m][n-1], and a decoder computes them while that pixel
 * decodes (lsx_rl_pixel). */
static inline AURP_HD_FORCE void lsx_rl_factor(lsx_rl *r, int q, int32_t s_n)
{
    const int D = lsx_rl_size(q);
    double dd[LSX_RL_MAXR];
    const double sg = (double)s_n * (1.0 / 172.5), absr = LSX_RL_NOISE * sg * sg;
    r->ok = 1;
    AURP_UNROLL
    for (int i = 0; i < D; i++) {
        AURP_UNROLL
        for (int j = 0; j < i; j++) {
            double t = r->A[i * LSX_RL_MAXR + j];
            AURP_UNROLL
            for (int k = 0; k < j; k++) t = t - r->L[i * LSX_RL_MAXR + k] * r->L[j * LSX_RL_MAXR + k] * dd[k];
            r->L[i * LSX_RL_MAXR + j] = t * r->inv[j];
        }
        double d = r->A[i * LSX_RL_MAXR + i];
        d = d + d * LSX_RL_RIDGE + absr;
        AURP_UNROLL
        for (int k = 0; k < i; k++) d = d - r->L[i * LSX_RL_MAXR + k] * r->L[i * LSX_RL_MAXR + k] * dd[k];
        if (!(d > 0)) r->ok = 0, d = 1;
        dd[i] = d;
        r->inv[i] = 1.0 / d;
    }
}

/* Member q's prediction of x[m][n] from its factors (lsx_rl_factor), sums
 * and regressors (lsx_rl_regressors): the pixel above for n < 2; else C[n]
 * / 16 plus the ridge solution times z; C[n] / 16 alone if a pivot was not
 * positive.  c_n: C[n] (Q4). */
static inline AURP_HD_FORCE double lsx_rl_predict(const lsx_rl *r, int q, uint32_t n, const uint16_t *up, int32_t c_n)
{
    if (n < 2) return (double)up[n];
    const int D = lsx_rl_size(q);
    double y[LSX_RL_MAXR], a[LSX_RL_MAXR];
    AURP_UNROLL
    for (int i = 0; i < D; i++) {
        double t = r->b[i];
        AURP_UNROLL
        for (int k = 0; k < i; k++) t = t - r->L[i * LSX_RL_MAXR + k] * y[k];
        y[i] = t;
    }
    AURP_UNROLL
    for (int i = D - 1; i >= 0; i--) {
        double t = y[i] * r->inv[i];
        AURP_UNROLL
        for (int k = i + 1; k < D; k++) t = t - r->L[k * LSX_RL_MAXR + i] * a[k];
        a[i] = t;
    }
    double p = c_n * 0.0625;
    if (r->ok) {
        AURP_UNROLL
        for (int k = 0; k < D; k++) p = p + a[k] * r->z[k];
    }
    return p;
}

/* Member q at pixel n of a row of W, its regressors set: the prediction;
 * then pixel n >= 1 joins A (A halves and takes z z^T) and the factors of
 * pixel n+1 follow (s: BG's scales of the row).  The row's sums start at
 * 0 with pixel 1 (the caller clears them at n = 0). */
static inline AURP_HD_FORCE double lsx_rl_pixel(lsx_rl *r, int q, uint32_t n, uint32_t W, const uint16_t *up,
                                          const int32_t *c, const int32_t *s)
{
    const double p = lsx_rl_predict(r, q, n, up, c[n]);
    if (n > 0 && n + 1 < W) {
        AURP_UNROLL
        for (int i = 0; i < lsx_rl_size(q); i++)
            AURP_UNROLL
            for (int j = 0; j <= i; j++)
                r->A[i * LSX_RL_MAXR + j] = lsx_rl_halve_add(r->A[i * LSX_RL_MAXR + j], r->z[i], r->z[j]);
        lsx_rl_factor(r, q, s[n + 1]);
    }
    return p;
}

/* After x[m][n] (n >= 1) is known: b halves and takes z (x - C[n]/16). */
static inline AURP_HD_FORCE void lsx_rl_add(lsx_rl *r, int q, uint16_t x, int32_t c_n)
{
    const double yv = lsx_rl_target(x, c_n);
    AURP_UNROLL
    for (int i = 0; i < lsx_rl_size(q); i++) r->b[i] = lsx_rl_halve_add(r->b[i], r->z[i], yv);
}

#endif

/* LG, the log-gain member of predictor set 3 (docs/FORMAT.md 3.2;
 * research rounds 22-24): along row m, to the left of n, a weighted fit of
 *     log((x - C) / S1) = a + b d,
 * where C is BG's column level, S1 the row above's 1-2-1 smoothed value
 * minus C, and d = j - n the column offset of a training pixel (0 at the
 * pixel to predict); the prediction is C[n] + S1 e^a, a clamped to +-2.
 * Across a curved echelle order the profile is about Gaussian, and the log
 * ratio of one row to the row above is then exactly linear along the row.
 * Training takes the pixels where both y = x - C and S1 exceed 0.5 sigma +
 * 1 (sigma = S[n] / 172.5, BG's column scale as a noise sd in ADU), weights
 * 1 / (1/y + 0.375/S1) (Poisson), every sum decaying by 0.9 a pixel and
 * starting at 0 each row (a decoder needs only rows m-1, m-2 and the
 * pixels left of n).
 *
 * Every operation is one fixed sequence of IEEE binary64 operations (+, -,
 * *, / and exact bit moves; no libm: exp and log are lsx_exp_basic and
 * lsx_ln_basic below), compiled from this one text by gcc for the CPU and
 * by nvcc for the GPU, both without contraction into fused multiply-adds. */
#ifndef AURP_LSMIX_LG_H
#define AURP_LSMIX_LG_H

#include <stdint.h>
#include <string.h>

#include "hostdev.h"

#define LSX_LG_LAM 0.9    /* the sums' decay a pixel */
#define LSX_LG_MIN 0.5    /* training pixels exceed LSX_LG_MIN sigma + 1 */
#define LSX_LG_WMIN 100.0 /* no fit below this much weight */
#define LSX_LG_AMAX 2.0   /* |a| at most this */
#define LSX_LG_EPS 0.01   /* the slope's ridge, a share of the weight */

/* ln x, x > 0 and normal, by basic operations only: x = 2^k f exactly (the
 * bits), f in [1/sqrt 2, sqrt 2), ln f = 2 atanh(s), s = (f - 1) / (f + 1),
 * |s| < 0.172, by seven terms (absolute error below 1e-12). */
static inline AURP_HD double lsx_ln_basic(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    int k = (int)((u >> 52) & 0x7ff) - 1023;
    u = (u & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
    double f;
    memcpy(&f, &u, sizeof f);
    if (f > 1.4142135623730951) f = f * 0.5, k++;
    const double s = (f - 1.0) / (f + 1.0), s2 = s * s;
    const double t = s2 * (1.0 / 3 + s2 * (1.0 / 5 + s2 * (1.0 / 7 + s2 * (1.0 / 9 + s2 * (1.0 / 11 + s2 * (1.0 / 13))))));
    return (double)k * 0.69314718055994531 + (2.0 * s + 2.0 * s * t);
}

/* e^a, |a| <= 2 (the clamp), by basic operations only: (e^(a/16))^16,
 * e^(a/16) by its Taylor series to degree 9 (|a/16| <= 1/8; relative
 * error below 1e-14 after the four squarings). */
static inline AURP_HD double lsx_exp_basic(double a)
{
    const double x = a * 0.0625;
    double e = 1.0 + x * (1.0 + x * (1.0 / 2 + x * (1.0 / 6 + x * (1.0 / 24 + x * (1.0 / 120 + x * (1.0 / 720 + x * (1.0 / 5040 + x * (1.0 / 40320 + x * (1.0 / 362880)))))))));
    e = e * e;
    e = e * e;
    e = e * e;
    return e * e;
}

/* LG's state along one row: the sums of w, w d, w d^2, w r, w r d (r the
 * log ratio), and S1 of the pixel last predicted. */
typedef struct {
    double q[5], ref;
} lsx_lg;

/* Row pixel j minus C[j] (Q4), j clamped into the row. */
static inline AURP_HD double lsx_lg_px(const uint16_t *row, const int32_t *c, int64_t j, uint32_t W)
{
    if (j < 0) j = 0;
    if (j >= (int64_t)W) j = W - 1;
    return (double)row[j] - c[j] * 0.0625;
}

static inline AURP_HD void lsx_lg_reset(lsx_lg *g)
{
    for (int i = 0; i < 5; i++) g->q[i] = 0;
}

/* S1 of pixel n: the row above (up) minus C, smoothed 1-2-1. */
static inline AURP_HD double lsx_lg_ref(const uint16_t *up, const int32_t *c, uint32_t W, uint32_t n)
{
    return (lsx_lg_px(up, c, (int64_t)n - 1, W) + 2.0 * lsx_lg_px(up, c, n, W) + lsx_lg_px(up, c, (int64_t)n + 1, W)) *
           0.25;
}

/* The prediction of x[m][n], m >= 1 (n = 0 resets the sums first); up: row
 * m-1; c: BG's column levels C before row m (Q4).  Sets g->ref. */
static inline AURP_HD double lsx_lg_predict(lsx_lg *g, const uint16_t *up, const int32_t *c, uint32_t W, uint32_t n)
{
    if (n == 0) lsx_lg_reset(g);
    const double s1 = lsx_lg_ref(up, c, W, n);
    g->ref = s1;
    if (n < 2) return (double)up[n];
    const double *q = g->q;
    double a = 0;
    const double w2 = q[2] + LSX_LG_EPS * q[0], det = q[0] * w2 - q[1] * q[1];
    if (q[0] > LSX_LG_WMIN && det > 0) a = (q[3] * w2 - q[1] * q[4]) / det;
    if (a > LSX_LG_AMAX) a = LSX_LG_AMAX;
    if (a < -LSX_LG_AMAX) a = -LSX_LG_AMAX;
    return c[n] * 0.0625 + s1 * lsx_exp_basic(a);
}

/* The terms pixel x (y = x - C[n]) adds to LG's sums, from c_n = C[n]
 * and s_n = S[n] (Q8) and S1 of its prediction (g->ref): *w and *wr = w r
 * where it trains (then w > 0), else 0 and 0.  They do not depend on the
 * sums: the GPU makes a row's terms in parallel and runs only
 * lsx_lg_step along the row. */
static inline AURP_HD void lsx_lg_terms(uint16_t x, int32_t c_n, int32_t s_n, double ref, double *w, double *wr)
{
    const double y = (double)x - c_n * 0.0625;
    const double lo = LSX_LG_MIN * ((double)s_n * (1.0 / 172.5)) + 1.0;
    *w = 0.0, *wr = 0.0;
    if (y > lo && ref > lo) {
        const double r = lsx_ln_basic(y / ref);
        *w = 1.0 / (1.0 / y + 0.375 / ref);
        *wr = *w * r;
    }
}

/* The sums after a pixel with terms w, wr (lsx_lg_terms): every sum
 * decays and takes the pixel where it trains; then the origin of d moves
 * one pixel right (d -> d - 1). */
static inline AURP_HD void lsx_lg_step(lsx_lg *g, double w, double wr)
{
    double *q = g->q;
    for (int k = 0; k < 5; k++) q[k] = q[k] * LSX_LG_LAM;
    if (w > 0) {
        q[0] = q[0] + w;
        q[3] = q[3] + wr;
    }
    q[2] = q[2] - 2.0 * q[1] + q[0];
    q[1] = q[1] - q[0];
    q[4] = q[4] - q[3];
}

/* After x[m][n] (m, n >= 1) is known: LG's sums take it (c_n = C[n], s_n =
 * S[n] in Q8). */
static inline AURP_HD void lsx_lg_add(lsx_lg *g, uint16_t x, int32_t c_n, int32_t s_n)
{
    double w, wr;
    lsx_lg_terms(x, c_n, s_n, g->ref, &w, &wr);
    lsx_lg_step(g, w, wr);
}

#endif

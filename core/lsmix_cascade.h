/* The lsmix cascade stage (docs/FORMAT.md 3.2, header byte 23 bit 2): a
 * linear predictor of the blend's own residuals e1 = x - P1, with weights
 * the encoder fits per frame and sends in the header.  The final
 * prediction is P = clamp(P1 + c, 0, 65535), with
 *   c = (sum_j w_j e[lag_j] + 2^(S-1)) >> S   (int32, exact),
 * e = e1 clamped to +-clip, S = LSX_CAS_SHIFT, and the lags: the
 * LSX_CAS_NR previous pixels in readout (raster) order, across row
 * boundaries (e[i-1] .. e[i-NR], i = m W + n, 0 before the frame), then
 * x[m-1][n+2..n-2] and x[m-2][n] (0 outside the frame).  Row 0 has c = 0.
 * The encoder keeps (sum_j |w_j|) * (clip + 1) < 2^31, so the sum cannot
 * overflow; the decoder refuses weights that break it.  Integer only.
 *
 * Why: the blend leaves linear structure in e1 that no member models:
 * correlations along the spectrum beyond the LS's lags (TREx), periodic
 * pickup along the readout (CCD bias structure).  The clip keeps hot
 * pixels and bright lines out of the fit (research/r10-cascade.md). */
#ifndef AURP_LSMIX_CASCADE_H
#define AURP_LSMIX_CASCADE_H

#include <stdint.h>

#include "hostdev.h"

#define LSX_CAS_NR 128              /* raster lags */
#define LSX_CAS_NUP 6               /* lags in the rows above */
#define LSX_CAS_NL (LSX_CAS_NR + LSX_CAS_NUP)
#define LSX_CAS_SHIFT 10            /* weights in units of 2^-10 */

/* Lag k (0 <= k < LSX_CAS_NL) as (rows up, columns left): raster lags
 * (0, k + 1), then (1, -2), (1, -1), (1, 0), (1, 1), (1, 2), (2, 0). */
static inline AURP_HD void lsx_cas_lag(int k, int *dm, int *dn)
{
    if (k < LSX_CAS_NR) {
        *dm = 0, *dn = k + 1;
    } else {
        k -= LSX_CAS_NR;
        *dm = k < 5 ? 1 : 2, *dn = k < 5 ? k - 2 : 0;
    }
}

/* e1 clamped to +-clip (the stage's input). */
static inline AURP_HD int16_t lsx_cas_clipped(int32_t e1, int32_t clip)
{
    return (int16_t)(e1 > clip ? clip : e1 < -clip ? -clip : e1);
}

/* The clip from the median |e1| of rows 1..: 2 md + 2, at most 32767. */
static inline AURP_HD int32_t lsx_cas_clip_of_median(uint32_t md)
{
    return md > 16382 ? 32767 : (int32_t)(2 * md + 2);
}

/* The final prediction from the blend's P1 and the correction c. */
static inline AURP_HD uint16_t lsx_cas_apply(int32_t p1, int32_t c)
{
    const int32_t p = p1 + c;
    return (uint16_t)(p < 0 ? 0 : p > 65535 ? 65535 : p);
}

/* The raster part: wrev[j] = w[NR-1-j] (the weights in memory order), e
 * = the clipped residuals from pixel i - NR. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__CUDACC__)
__attribute__((target_clones("avx2", "default"), optimize("tree-vectorize"), unused))
#elif defined(__GNUC__)
__attribute__((unused))
#endif
static int32_t lsx_cas_dot(const int16_t *wrev, const int16_t *e)
{
    int32_t acc = 0;
    for (int j = 0; j < LSX_CAS_NR; j++) acc += (int32_t)wrev[j] * (int32_t)e[j];
    return acc;
}

/* The part of the lags in the rows above, and the rounding shift: the
 * correction from the raster part's sum acc. */
static inline AURP_HD int32_t lsx_cas_finish(int32_t acc, const int16_t *w, const int16_t *e, uint32_t W,
                                             uint32_t m, uint32_t n)
{
    for (int k = LSX_CAS_NR; k < LSX_CAS_NL; k++) {
        int dm, dn;
        lsx_cas_lag(k, &dm, &dn);
        const int64_t mm = (int64_t)m - dm, nn = (int64_t)n - dn;
        if (mm >= 0 && nn >= 0 && nn < (int64_t)W) acc += (int32_t)w[k] * e[mm * W + nn];
    }
    return (acc + (1 << (LSX_CAS_SHIFT - 1))) >> LSX_CAS_SHIFT;
}

/* The correction c at (m, n), m >= 1; e: the frame's clipped residuals
 * (rows < m and row m left of n read); w: the weights in lag order, wrev
 * the raster ones reversed. */
static inline int32_t lsx_cas_correction(const int16_t *w, const int16_t *wrev, const int16_t *e,
                                         uint32_t W, uint32_t m, uint32_t n)
{
    const int64_t i = (int64_t)m * W + n;
    int32_t acc = 0;
    if (i >= LSX_CAS_NR) {
        acc = lsx_cas_dot(wrev, e + i - LSX_CAS_NR);
    } else {
        for (int j = 0; j < LSX_CAS_NR; j++)
            if (i - 1 - j >= 0) acc += (int32_t)w[j] * e[i - 1 - j];
    }
    return lsx_cas_finish(acc, w, e, W, m, n);
}

#endif

/* The lsmix cascade stage (docs/FORMAT.md 3.2, header byte 23 bit 2): a
 * linear predictor of the blend's own residuals e1 = x - P1, with weights
 * the encoder fits per frame and sends in the header.  The final
 * prediction is P = clamp(P1 + c, 0, 65535), with
 *   c = (sum_j w_j e[lag_j] + 2^(S-1)) >> S   (int32, exact),
 * e = e1 clamped to +-clip, S = LSX_CAS_SHIFT, and the lags: the
 * LSX_CAS_NR previous pixels in readout (raster) order, across row
 * boundaries (e[i-1] .. e[i-NR], i = m W + n, 0 before the frame), then
 * those of the support in the rows above (lsx_cas_half; 0 outside the
 * frame).  Row 0 has c = 0.
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
#define LSX_CAS_NUP_NARROW 6        /* lags in the rows above, the narrow support */
#define LSX_CAS_ROWS_NARROW 2       /* rows above the narrow support reaches */
#define LSX_CAS_NUP_MAX 90          /* lags in the rows above, the wide support */
#define LSX_CAS_NL_MAX (LSX_CAS_NR + LSX_CAS_NUP_MAX)
#define LSX_CAS_SHIFT 10            /* weights in units of 2^-10 */
#define LSX_CAS_ROWS_MAX 6          /* rows above the wide support reaches */

/* The supports in the rows above (header byte 23 bit 4, `wide`): row m - r
 * (r = 1, 2, ...) holds the lags x[m-r][n+h..n-h], h its half width:
 *   narrow (bit clear, the streams before): h = 2, 0            (6 lags)
 *   wide   (bit set):  h = 16, 12, 8, 4, 2, 0                   (90 lags)
 * (The wide support: research/r18-cascade-above.md, -0.06 % on the bench
 * frames, every frame smaller.)  lsx_cas_half: h of row r (1-based), -1
 * beyond the support. */
static inline AURP_HD int lsx_cas_half(int wide, int r)
{
    if (!wide) return r == 1 ? 2 : r == 2 ? 0 : -1;
    return r <= 4 ? 20 - 4 * r : r == 5 ? 2 : r == 6 ? 0 : -1;
}

static inline AURP_HD int lsx_cas_rows_up(int wide) { return wide ? LSX_CAS_ROWS_MAX : LSX_CAS_ROWS_NARROW; }

/* The lags of a support: LSX_CAS_NR raster ones and those above. */
static inline AURP_HD int lsx_cas_nl(int wide) { return LSX_CAS_NR + (wide ? LSX_CAS_NUP_MAX : LSX_CAS_NUP_NARROW); }

/* Lag k (0 <= k < lsx_cas_nl(wide)) as (rows up, columns left): raster
 * lags (0, k + 1), then row after row above, left to right: (1, -h1) ..
 * (1, h1), (2, -h2) .. (2, h2), ... */
static inline AURP_HD void lsx_cas_lag(int wide, int k, int *dm, int *dn)
{
    if (k < LSX_CAS_NR) {
        *dm = 0, *dn = k + 1;
        return;
    }
    k -= LSX_CAS_NR;
    int r = 1;
    while (k >= 2 * lsx_cas_half(wide, r) + 1) k -= 2 * lsx_cas_half(wide, r) + 1, r++;
    *dm = r, *dn = k - lsx_cas_half(wide, r);
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

/* The correction from the sum of every lag's product. */
static inline AURP_HD int32_t lsx_cas_round(int32_t acc) { return (acc + (1 << (LSX_CAS_SHIFT - 1))) >> LSX_CAS_SHIFT; }

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
 * correction from the raster part's sum acc (pixel by pixel: the
 * definition; the CPU sums a row's part at once, lsx_cas_above, the GPU's
 * final kernel from rows staged in shared memory). */
static inline AURP_HD int32_t lsx_cas_finish(int32_t acc, const int16_t *w, int wide, const int16_t *e, uint32_t W,
                                             uint32_t m, uint32_t n)
{
    const int nl = lsx_cas_nl(wide);
    for (int k = LSX_CAS_NR; k < nl; k++) {
        int dm, dn;
        lsx_cas_lag(wide, k, &dm, &dn);
        const int64_t mm = (int64_t)m - dm, nn = (int64_t)n - dn;
        if (mm >= 0 && nn >= 0 && nn < (int64_t)W) acc += (int32_t)w[k] * e[mm * W + nn];
    }
    return lsx_cas_round(acc);
}

/* The raster part's sum at pixel i = m W + n of the plane e. */
static inline int32_t lsx_cas_raster(const int16_t *w, const int16_t *wrev, const int16_t *e, int64_t i)
{
    if (i >= LSX_CAS_NR) return lsx_cas_dot(wrev, e + i - LSX_CAS_NR);
    int32_t acc = 0;
    for (int j = 0; j < LSX_CAS_NR; j++)
        if (i - 1 - j >= 0) acc += (int32_t)w[j] * e[i - 1 - j];
    return acc;
}

/* The rows-above part of the corrections of row m >= 1, columns c0 <= n <
 * c1: above[n]; erow: row m of a plane of clipped residuals, W a row, that
 * holds the rows m - 1 .. m - r before it for r = min(m,
 * lsx_cas_rows_up(wide)) (lsmix_cascade.c). */
void lsx_cas_above(const int16_t *w, int wide, const int16_t *erow, uint32_t W, uint32_t m, uint32_t c0,
                   uint32_t c1, int32_t *above);

#endif

/* BG, the background member of the lsmix blend (docs/FORMAT.md 3.2): a
 * robust estimate of a pixel's background, the column's level plus the
 * row's offset, that bright structure does not drag along.  Streams with
 * header byte 23 bit 1 blend it as their last member.
 *
 *   column level C[n] (Q4): a running mean of the column that moves by the
 *     residual r = 16 x - C clipped to +-L(S) (an outlier, |r| > L, moves it
 *     1/8 as far), at rate 1/(m+1) rounded to a power of two in the first
 *     rows (a true running mean while few rows are in) and 1/32 after;
 *   column scale S[n] (Q8): a median tracker of |r|, S *= 1 +- 1/16 a row;
 *     a line or an order in the column cannot blow it up as a mean would;
 *   row offset o (Q4): along the row, a weighted mean of the residuals r
 *     clipped to o +- L, weights 1/(S^2 + 1/4) (columns carrying lines
 *     count little), decaying by 1/32 a pixel; each row starts at 0.
 *   BG = (C[n] + o) / 16.
 * The column pass depends on nothing but its column and the row pass on
 * nothing but C, S and its own row: the GPU runs the columns in parallel,
 * then the rows in parallel.  Every value is an integer; only the final
 * division by 16 is a double, and exact. */
#ifndef AURP_LSMIX_BG_H
#define AURP_LSMIX_BG_H

#include <stdint.h>

#include "hostdev.h"

#define LSX_BG_SHIFT 5     /* the column level's rate after the first rows: 2^-5 */
#define LSX_BG_OUTLIER 3   /* an outlier moves the level 2^-3 as far */
#define LSX_BG_S0 1024     /* the scale of row 0's columns: 4 ADU (Q8) */
#define LSX_BG_SMIN 128    /* the least scale: 0.5 ADU */
#define LSX_BG_DECAY 5     /* the row offset's sums lose 2^-5 of their weight a pixel */

/* floor(v / 2^s) for any sign. */
static inline AURP_HD int64_t lsx_bg_floor_shr64(int64_t v, int s)
{
    return v >= 0 ? (int64_t)((uint64_t)v >> s) : (int64_t) ~((uint64_t)~v >> s);
}

/* The clip limit (Q4) of scale s (Q8): 2.5 sigma with sigma = S / 0.674,
 * 59/256 = 3.69 / 16. */
static inline AURP_HD int32_t lsx_bg_limit(int32_t s) { return (int32_t)(((int64_t)s * 59) >> 8); }

/* The weight of a column of scale s (Q8): 2^48 / (s^2 + 2^14) = 2^32 /
 * (S^2 + 1/4), S in ADU; at most 2^33 (s >= 128) and at least 1 up to
 * S = 65536, so that the brightest columns still count a little.  Every
 * sum stays below 2^59: w |rc| < 2^53 (|rc| <= |o| + L, and a heavy
 * weight means a small L), 32 terms of decay. */
static inline AURP_HD int64_t lsx_bg_weight(int32_t s)
{
    return (int64_t)(((uint64_t)1 << 48) / ((uint64_t)((int64_t)s * s) + 16384u));
}

/* lsx_bg_weight as one double division, for the passes that make a whole
 * row's or column's weights (a vector of them on the CPU, where the
 * integer ones ran one by one; on the GPU the column pass's 64-bit
 * division a pixel took half its time).  Exact: a level stays in [0, 16 *
 * 65535], so 16 |r| < 2^24 and a scale, which grows only below that, stays
 * below 2^25; then d = s^2 + 2^14 < 2^51 is an exact double, and 2^48 + d
 * < 2^53 keeps the rounded quotient below the next integer
 * (tests/unit/test_core_bg.c checks every s < 2^26 against lsx_bg_weight). */
static inline AURP_HD int64_t lsx_bg_weight_fp(int32_t s)
{
    return (int64_t)(281474976710656.0 / ((double)s * (double)s + 16384.0));
}

static inline AURP_HD int32_t lsx_bg_clip(int32_t v, int32_t lo, int32_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Row 0: the column starts at its pixel. */
static inline AURP_HD void lsx_bg_column_start(int32_t *c, int32_t *s, uint16_t x)
{
    *c = 16 * (int32_t)x;
    *s = LSX_BG_S0;
}


/* Row m >= 1 joins the column (after the row's prediction used c and s). */
static inline AURP_HD void lsx_bg_column_step(int32_t *c, int32_t *s, uint32_t m, uint16_t x)
{
    const int32_t r = 16 * (int32_t)x - *c, lim = lsx_bg_limit(*s);
    int shift = m + 1 < (1u << LSX_BG_SHIFT) ? aurp_msb32(m + 1) : LSX_BG_SHIFT;
    if (r > lim || r < -lim) shift += LSX_BG_OUTLIER;
    *c += (int32_t)lsx_bg_floor_shr64((int64_t)lsx_bg_clip(r, -lim, lim) + (1 << (shift - 1)), shift);
    const int64_t a = 16 * (int64_t)(r < 0 ? -r : r);
    *s = a > *s ? *s + (*s >> 4) : *s - (*s >> 4);
    if (*s < LSX_BG_SMIN) *s = LSX_BG_SMIN;
}

/* lsx_bg_column_step for the W columns of row m >= 1 at once, in 32-bit
 * lanes and without branches, so that the compiler can run the columns in
 * vector lanes (the scalar steps cost a twentieth of a decode, on its
 * sequential thread).  The same values (tests/unit/test_core_bg.c checks
 * them against lsx_bg_column_step): c is a level of 16-bit pixels (Q4,
 * below 2^20), so |r| < 2^20; s stays below 2^25 (lsx_end_row), so 59 s <
 * 2^31 and L < 2^23; the rounded move (rc + 2^(shift-1)) is below 2^24
 * and floor(v / 2^shift) is the arithmetic shift v >> shift.  (Host
 * only: the GPU steps a column a thread.) */
#ifndef __CUDACC__
static inline void lsx_bg_columns_step(int32_t *restrict c, int32_t *restrict s, uint32_t m,
                                       const uint16_t *restrict x, uint32_t W)
{
    const int base = m + 1 < (1u << LSX_BG_SHIFT) ? aurp_msb32(m + 1) : LSX_BG_SHIFT;
    const int outlier = base + LSX_BG_OUTLIER;
    const int32_t half = 1 << (base - 1), half_outlier = 1 << (outlier - 1);
    for (uint32_t n = 0; n < W; n++) {
        const int32_t cn = c[n], sn = s[n];
        const int32_t r = 16 * (int32_t)x[n] - cn, lim = (sn * 59) >> 8;
        const int32_t ar = r < 0 ? -r : r;
        const int32_t rc = r > lim ? lim : r < -lim ? -lim : r;
        c[n] = cn + (ar > lim ? (rc + half_outlier) >> outlier : (rc + half) >> base);
        const int32_t s2 = 16 * ar > sn ? sn + (sn >> 4) : sn - (sn >> 4);
        s[n] = s2 < LSX_BG_SMIN ? LSX_BG_SMIN : s2;
    }
}
#endif

/* The row offset along row m: sums w and w * (clipped residual), and
 * their quotient o (Q4), the offset of the next pixel. */
typedef struct {
    int64_t ow, os;
    int32_t o;
} lsx_bg_row;

/* Before pixel 0 of a row: a weak start at offset 0 (a start at the row
 * above's offset measured the same, research/r6-predict.md 2b). */
static inline AURP_HD void lsx_bg_row_start(lsx_bg_row *r)
{
    r->ow = 1;
    r->os = 0;
    r->o = 0;
}

/* The member's prediction (ADU) at a column of level c. */
static inline AURP_HD double lsx_bg_predict(const lsx_bg_row *r, int32_t c)
{
    return (double)(c + r->o) * 0.0625;
}

/* Pixel x of a column of level c, scale s and weight w = lsx_bg_weight(s)
 * joins the row's offset. */
static inline AURP_HD void lsx_bg_row_add(lsx_bg_row *r, int32_t c, int32_t s, int64_t w, uint16_t x)
{
    const int32_t lim = lsx_bg_limit(s);
    const int64_t rc = lsx_bg_clip(16 * (int32_t)x - c, r->o - lim, r->o + lim);
    r->ow = r->ow - lsx_bg_floor_shr64(r->ow + (1 << (LSX_BG_DECAY - 1)), LSX_BG_DECAY) + w;
    r->os = r->os - lsx_bg_floor_shr64(r->os + (1 << (LSX_BG_DECAY - 1)), LSX_BG_DECAY) + w * rc;
    r->o = (int32_t)aurp_div_s64(r->os, r->ow); /* ow >= 1 */
}

#endif

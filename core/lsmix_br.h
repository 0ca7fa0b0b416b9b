/* BR, the robust background of predictor set 3 (docs/FORMAT.md 3.2;
 * research rounds 23 and 39): a column level that light cannot drag
 * along, plus a row offset from the row's background pixels.  Set 3 blends
 * it in BG's place, and its column level alone (RC) in AL's.  BG's level
 * follows a column's mean and is lifted by an order that crosses it; BR's
 * level follows only pixels near or below it, which between the orders of
 * an echelle is the scattered light and the bias.
 *
 * Every value is an integer (levels in Q8 ADU); divisions are C's,
 * truncating toward zero.  Per column n, after row m (m = 0: L = 256 x,
 * scale 2048, lit 0), with d = 256 x[m][n] - L:
 *   |d| < 4 s[n]:   s[n] += (5|d|/4 - s[n]) / 32, L += d / 32, lit = 0
 *                   (s: a running mean of 5/4 |d| over the column's
 *                   inliers, about the noise sd);
 *   else d < 0:     L += d / 2, lit = 0 (light only adds: a level above
 *                   the pixel is wrong);
 *   else:           lit += 1 while lit <= 48; once lit > 48 (the column
 *                   has been lit for that many rows) L += d / 32.
 * Per row m >= 1 the offset o starts at 0 with k = 0 inliers; pixel n, with
 * e = 256 x - L[n] - o, when |e| < 4 s[n]: o += e / min(k + 2, 16), k += 1,
 * o clamped to +-3 s[n].
 *   BR = (L[n] + o) / 256 and RC = L[n] / 256, both before pixel n joins.
 * The column pass depends on nothing but its column, the row pass on
 * nothing but L and s and its own row: the GPU runs the columns in
 * parallel, then the rows (research round 38: the first definition's one
 * scale for the whole frame made a serial chain over every pixel).
 * Every value fits 32 bits: |d| < 2^25, s < 2^26. */
#ifndef AURP_LSMIX_BR_H
#define AURP_LSMIX_BR_H

#include <stdint.h>

#include "hostdev.h"

#define LSX_BR_ACOL 32 /* the column level's rate, 1/32 */
#define LSX_BR_ASCALE 32 /* the column scale's rate, 1/32 */
#define LSX_BR_AROW 16 /* the row offset's least rate, 1/16 */
#define LSX_BR_KOUT 4  /* inliers lie within 4 s */
#define LSX_BR_LIT 48  /* rows lit before the level follows the light */
#define LSX_BR_S0 2048 /* the start scale: 8 ADU (Q8) */

/* Column n's state after row 0. */
static inline AURP_HD void lsx_br_column_start(int32_t *L, int32_t *s, uint16_t *lit, uint16_t x)
{
    *L = 256 * (int32_t)x;
    *s = LSX_BR_S0;
    *lit = 0;
}

/* Column n's state after row m >= 1, whose pixel there is x. */
static inline AURP_HD void lsx_br_column_step(int32_t *L, int32_t *s, uint16_t *lit, uint16_t x)
{
    const int32_t d = 256 * (int32_t)x - *L, ad = d < 0 ? -d : d;
    if (ad < LSX_BR_KOUT * *s) {
        *s += (ad * 5 / 4 - *s) / LSX_BR_ASCALE;
        *L += d / LSX_BR_ACOL;
        *lit = 0;
    } else if (d < 0) {
        *L += d / 2;
        *lit = 0;
    } else {
        if (*lit <= LSX_BR_LIT) *lit += 1;
        if (*lit > LSX_BR_LIT) *L += d / LSX_BR_ACOL;
    }
}

/* BR's prediction of the pixel at a column of level L, row offset o. */
static inline AURP_HD double lsx_br_predict(int32_t L, int32_t o) { return (double)(L + o) * (1.0 / 256.0); }

/* RC's prediction: the column level alone. */
static inline AURP_HD double lsx_br_level(int32_t L) { return (double)L * (1.0 / 256.0); }

/* Pixel x of row m >= 1 at a column of level L and scale s joins the row
 * offset o (k: the row's inliers so far). */
static inline AURP_HD void lsx_br_row_add(int32_t *o, int32_t *k, int32_t L, int32_t s, uint16_t x)
{
    const int32_t e = 256 * (int32_t)x - L - *o, ae = e < 0 ? -e : e;
    if (ae < LSX_BR_KOUT * s) {
        *o += e / (*k + 2 < LSX_BR_AROW ? *k + 2 : LSX_BR_AROW);
        *k += 1;
        const int32_t lim = 3 * s;
        *o = *o > lim ? lim : *o < -lim ? -lim : *o;
    }
}

#endif

/* The lsmix profile's adaptive sign and top raw bit (docs/FORMAT.md 3.3,
 * header byte 23 bit 6; research/README.md round 40): the sign of a
 * residual is a binary symbol of 12-bit precision in one of 48 contexts
 * (where LS and the blend's last member lie against the blend, where the
 * cascade's correction left the unrounded prediction against the rounded
 * one, and the token's group), and the highest raw bit of tokens 16..63 a
 * binary symbol in the token's context.  Their counts are refreshed at
 * the token tables' refresh points.  One definition for the C core and
 * the CUDA kernels (AURP_HD), so that both encoders make the same
 * contexts and tables. */
#ifndef AURP_LSMIX_SIGN_H
#define AURP_LSMIX_SIGN_H

#include <stdint.h>

#include "hostdev.h"

#define LSX_BIN_BITS 12   /* a binary symbol's frequencies sum to 2^12 */
#define LSX_BIN_FMIN 32   /* and each is at least this */
#define LSX_BIN_HALVE 1023 /* a context's counts are halved at a refresh where their total is above this */
#define LSX_SIGN_BASES 16 /* the part of a sign context known before the pixel's token */
#define LSX_SIGN_CTX (3 * LSX_SIGN_BASES)
#define LSX_RAWBIT_CTX 64 /* the top raw bit's contexts: the token (16..63 have raw bits) */
#define LSX_SIGN_PRE_ROW0 512u /* row 0's blend part: no members, r = 0 */

/* The blend's part of a pixel's sign context, known where the blend is
 * made (bl its unrounded value num / den, p1 = aurp_round_clamp(bl),
 * p_first and p_last the blend's first (LS) and last members):
 *   r  = floor(1024 (bl - p1)) clamped to [-512, 511] (bl - p1 lies in
 *        [-1/2, 1/2) unless the rounding clamped; exact in doubles),
 *   mb = (p_first > bl) + 2 (p_last > bl),
 * packed as (r + 512) | mb << 10.  The floor is a truncation, corrected
 * below the value: the same on every compiler and on the GPU. */
static inline AURP_HD uint16_t lsx_sign_pre(double bl, uint16_t p1, double p_first, double p_last)
{
    const double y = (bl - (double)p1) * 1024.0;
    int32_t r;
    if (!(y > -512.0)) {
        r = -512;
    } else if (y >= 511.0) {
        r = 511;
    } else {
        r = (int32_t)y;
        r -= (double)r > y;
    }
    const uint32_t mb = (uint32_t)(p_first > bl) | (uint32_t)(p_last > bl) << 1;
    return (uint16_t)((uint32_t)(r + 512) | mb << 10);
}

/* A pixel's sign base (0..15) from its blend part pre, the cascade's sum
 * acc (0 without the stage and in row 0), its final prediction pred and
 * the blend's rounded one p1: with D = r + acc - 1024 (pred - p1), the
 * unrounded final prediction's place against pred in 1/1024 units,
 *   f4 = (D >= -256) + (D >= 0) + (D >= 256),  base = 4 mb + f4. */
static inline AURP_HD int lsx_sign_base(uint16_t pre, int32_t acc, int32_t pred, int32_t p1)
{
    const int64_t d = (int64_t)(pre & 1023u) - 512 + acc - 1024 * (int64_t)(pred - p1);
    const int f4 = (d >= -256) + (d >= 0) + (d >= 256);
    return (int)(pre >> 10) * 4 + f4;
}

/* The sign context of a residual of token t >= 1 and base b. */
static inline AURP_HD int lsx_sign_ctx(int b, int t) { return b * 3 + (t >= 4) + (t >= 16); }

/* A binary context's frequency of 0 at a refresh, from its counts n[0],
 * n[1] (halved first, once, where their total is above LSX_BIN_HALVE:
 * lsx_bin_halve, then lsx_bin_f0):
 * f1 = floor((2 n1 + 1) 2^12 / (2 (n0 + n1) + 2)) clamped to
 * [LSX_BIN_FMIN, 2^12 - LSX_BIN_FMIN], f0 = 2^12 - f1.  A total is at
 * most 1023 + 1024 before the halving (an interval's pixels). */
static inline AURP_HD void lsx_bin_halve(uint32_t *n)
{
    if (n[0] + n[1] > LSX_BIN_HALVE) {
        n[0] = (n[0] + 1) >> 1;
        n[1] = (n[1] + 1) >> 1;
    }
}
static inline AURP_HD uint32_t lsx_bin_f0(uint32_t n0, uint32_t n1)
{
    const uint32_t one = 1u << LSX_BIN_BITS;
    uint32_t f1 = ((2 * n1 + 1) << LSX_BIN_BITS) / (2 * (n0 + n1) + 2);
    f1 = f1 < LSX_BIN_FMIN ? LSX_BIN_FMIN : f1 > one - LSX_BIN_FMIN ? one - LSX_BIN_FMIN : f1;
    return one - f1;
}
static inline AURP_HD uint32_t lsx_bin_refresh(uint32_t *n)
{
    lsx_bin_halve(n);
    return lsx_bin_f0(n[0], n[1]);
}

/* The encoders' estimate (not the format's) of a binary symbol's bits, in
 * 2^-16 bits, from the frequency f of its value (log2q: lsx_log2_q16 of
 * every frequency, as the token estimate's table): 12 - log2 f. */
static inline AURP_HD uint32_t lsx_bin_cost_q16(uint32_t f, const uint32_t *log2q)
{
    return ((uint32_t)LSX_BIN_BITS << 16) - log2q[f];
}

/* The encoders code their winner with the adaptive sign and top raw bit
 * where the estimate of those symbols' bits, est_on (lsx_bin_cost_q16 of
 * every pixel's sign and top raw bit under the tables it is coded with,
 * carried or not), is below est_uniform (2^16 for each of them): exact
 * integers, so that the CPU and the GPU encoders choose alike. */
static inline AURP_HD int lsx_sign_model_wins(uint64_t est_on, uint64_t est_uniform)
{
    return est_on < est_uniform;
}

#endif

/* The cascade stage's weights by conjugate gradients (the encoders' fit;
 * docs/FORMAT.md 3.2 leaves the weights to the encoder, which sends them).
 *
 * The system of a support is A w = h: A_ab = R(lag_b - lag_a), plus the
 * ridge 1e-3 R0 + 1 on the diagonal, h_a = R(lag_a), R the correlations of
 * the clipped residuals.  Those residuals are the blend's, nearly white
 * (the weights leave 0.89-0.99 of R0 on every frame measured), so A is
 * well conditioned and conjugate gradients from w = 0 reach, within 9-16
 * iterations, the weights a Cholesky solve gave once rounded to 2^-10
 * (research round 33: the same int16 weights, the same streams, on every
 * frame measured); strongly coloured residuals take more iterations.  Its steps
 * are matrix-vector and dot products, which one GPU block runs in
 * parallel: the GPU encoder fits the trial's weights on the device, with
 * no round trip through the host (a Cholesky's 218 pivots and its fixed
 * order of sums ran 0.43 ms on a GPU block, rounds 27 and 31).
 *
 * One fixed sequence of IEEE double operations, no fused multiply-add
 * (nvcc --fmad=false, gcc -ffp-contract=off), so that the C encoder and
 * the GPU kernel (gpu/lsmix_cascade_kernels.cu) give the same weights bit
 * for bit:
 *   w = 0, r = h, p = h, rr = dot(r, r), tol = rr LSX_CAS_CG_TOL;
 *   while rr > tol, at most LSX_CAS_CG_MAX_ITERS times:
 *     q = A p (lsx_cas_cg_part); pq = dot(p, q); not solvable unless pq > 0;
 *     al = rr / pq; w_a = w_a + al p_a; r_a = r_a - al q_a;
 *     rn = dot(r, r); be = rn / rr; rr = rn; p_a = r_a + be p_a;
 * dot(u, v): the products u_a v_a (0 past n) as the leaves of a pairwise
 * tree over LSX_CAS_CG_LEAVES: for s = 128, 64, .., 1, t_i = t_i + t_{i+s}
 * (i < s); the sum is t_0. */
#ifndef AURP_LSMIX_CASCADE_CG_H
#define AURP_LSMIX_CASCADE_CG_H

#include <math.h>
#include <stdint.h>

#include "hostdev.h"
#include "lsmix_cascade.h"

#define LSX_CAS_CG_MAX_ITERS 256 /* real frames stop after 9-16 */
#define LSX_CAS_CG_TOL 1e-12      /* stop where r'r <= 1e-12 of h'h: a residual 1e-6 of h */
#define LSX_CAS_CG_PARTS 4    /* a row of A p in interleaved partial sums (a GPU thread each) */
#define LSX_CAS_CG_LEAVES 256 /* the dot products' tree */

#if defined(__cplusplus)
static_assert(LSX_CAS_NL_MAX <= LSX_CAS_CG_LEAVES, "a dot product's leaves hold every lag");
#else
_Static_assert(LSX_CAS_NL_MAX <= LSX_CAS_CG_LEAVES, "a dot product's leaves hold every lag");
#endif

/* A's diagonal: R0 and the ridge. */
static inline AURP_HD double lsx_cas_cg_diag(int64_t r0) { return ((double)r0 + 1e-3 * (double)r0) + 1.0; }

/* Entry (a, b) of A, the system's row a: pair = the support's offsets of
 * row a (pair[b]: the offset lag_b - lag_a, an index into rd), rd[o] =
 * (double) R[o], diag = lsx_cas_cg_diag(R[0]). */
static inline AURP_HD double lsx_cas_cg_entry(const uint16_t *pair, const double *rd, double diag, int a, int b)
{
    return b == a ? diag : rd[pair[b]];
}

/* Row a of A p is (s0 + s1) + (s2 + s3), s_k the partial sum over b = k,
 * k + 4, .. < n in increasing b: s_k = s_k + A_ab p_b from 0. */
static inline AURP_HD double lsx_cas_cg_part(const uint16_t *pair, const double *rd, double diag, int a, int n,
                                             int k, const double *p)
{
    double s = 0.0;
    for (int b = k; b < n; b += LSX_CAS_CG_PARTS) s = s + lsx_cas_cg_entry(pair, rd, diag, a, b) * p[b];
    return s;
}

/* The weights in units of 2^-LSX_CAS_SHIFT, scaled down where needed so
 * that (sum |w_j|) (clip + 1) < 2^31 (the decoder's bound): sw is summed
 * in increasing j. */
static inline AURP_HD double lsx_cas_scale(const double *w, int nl, int32_t clip)
{
    const double unit = (double)(1 << LSX_CAS_SHIFT), lim = 2147483647.0;
    double sw = 0;
    for (int j = 0; j < nl; j++) sw = sw + (fabs(w[j]) * unit + 1);
    return sw * (double)(clip + 1) > lim ? lim / (double)(clip + 1) / sw : 1.0;
}

static inline AURP_HD int16_t lsx_cas_quantize(double w, double sc)
{
    const double q = floor(sc * w * (double)(1 << LSX_CAS_SHIFT) + 0.5);
    return (int16_t)(q > 32767 ? 32767 : q < -32768 ? -32768 : q);
}

#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "lsmix.h"

/* adaptive coder replay: per-pixel ideal bits of residual e in context ctx */
double cm_code(const int32_t *e, const uint8_t *ctx, size_t n, int nctx, int nib, int prior, float *bits)
{
    ctx_model *cm = malloc(sizeof *cm);
    ctx_model_init(cm, nctx, nib, prior);
    double tot = 0;
    for (size_t i = 0; i < n; i++) {
        if (ctx_refresh_due(i)) ctx_model_refresh(cm);
        int c = ctx[i], nraw;
        uint32_t v = (uint32_t)(e[i] < 0 ? -e[i] : e[i]);
        int t = ctx_token(v, &nraw);
        double b = 15.0 - log2((double)cm->freq[c][t]) + nraw + (v != 0);
        if (bits) bits[i] = (float)b;
        tot += b;
        ctx_model_count(cm, c, t);
    }
    free(cm);
    return tot;
}

/* contexts as the codec forms them (3.3) */
void cm_contexts(const int32_t *e, const int32_t *emin, const uint16_t *pred, uint32_t W, uint32_t H,
                 const uint32_t *thr, int nact, int ioff, const uint8_t *ibnd, int nib, uint8_t *ctx)
{
    for (uint32_t m = 0; m < H; m++)
        for (uint32_t n = 0; n < W; n++) {
            const int32_t *r0 = e + (size_t)m * W, *r1 = m ? r0 - W : NULL, *r2 = m > 1 ? r0 - 2 * W : NULL;
            uint32_t a16 = lsx_activity16(lsx_residual_activity(r0, r1, r2, W, n), emin[(size_t)m * W + n]);
            int a = 0;
            while (a < nact - 1 && a16 >= thr[a]) a++;
            int it = lsx_intensity_token(pred[(size_t)m * W + n], (uint16_t)ioff);
            ctx[(size_t)m * W + n] = (uint8_t)(a * nib + lsx_intensity_class(it, ibnd, nib));
        }
}

/* -log2 of the discretised normal N(c, s) at integer x (tails floored at 1e-300) */
void gauss_bits(const double *x, const double *c, const double *s, size_t n, double *out)
{
    for (size_t i = 0; i < n; i++) {
        double lo = (x[i] - 0.5 - c[i]) / (s[i] * M_SQRT2), hi = (x[i] + 0.5 - c[i]) / (s[i] * M_SQRT2);
        double p = lo > 0 ? 0.5 * (erfc(lo) - erfc(hi)) : 0.5 * (erfc(-hi) - erfc(-lo));
        out[i] = -log2(p > 1e-300 ? p : 1e-300);
    }
}
/* -log2 of the discretised Laplacian of sd s centred at c */
void laplace_bits(const double *x, const double *c, const double *s, size_t n, double *out)
{
    for (size_t i = 0; i < n; i++) {
        double b = s[i] / M_SQRT2, d = fabs(x[i] - c[i]);
        double F = (d > 0.5) ? 0.5 * (exp(-(d - 0.5) / b) - exp(-(d + 0.5) / b)) : 1.0 - 0.5 * (exp(-(0.5 - d) / b) + exp(-(0.5 + d) / b));
        out[i] = -log2(F > 1e-300 ? F : 1e-300);
    }
}

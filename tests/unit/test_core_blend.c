/* lsx_blend, the vector blend of the C codec with its table of weights,
 * against lsx_blend_at, the scalar definition the GPU kernels compile
 * (lsmix_arith.h): the same prediction and Emin for every predictor set,
 * with and without BG, at error levels inside the table, across its edge
 * and far beyond it. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lsmix.h"

static uint32_t next(uint32_t *rng)
{
    *rng = *rng * 1664525u + 1013904223u;
    return *rng >> 8;
}

Test(core_blend, vector_blend_is_the_scalar_definition)
{
    enum { W = 40, M = 5 };
    const int sets[][2] = {{0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 1}};
    /* error magnitudes: levels well inside the table, around its edge, beyond */
    const uint32_t scales[] = {16, 1024, LSX_BLEND_TABLE / 4, LSX_BLEND_TABLE / 2, 1u << 20};
    uint32_t rng = 3;
    long table_pixels = 0, other_pixels = 0;
    for (size_t si = 0; si < sizeof sets / sizeof *sets; si++) {
        lsx_state s;
        cr_assert_eq(lsx_state_init(&s, W, sets[si][0], sets[si][1]), 0);
        const int kind = lsx_blend_kind(s.set, s.bg), ctx_w = lsx_colerr_ctx_weight(s.set);
        for (size_t ci = 0; ci < sizeof scales / sizeof *scales; ci++) {
            for (int trial = 0; trial < 20; trial++) {
                /* rows M (current) and M - 1 of errors, the column levels: lanes past np stay 0 */
                for (int parity = 0; parity < 2; parity++)
                    for (uint32_t n = 0; n < W; n++)
                        for (int k = 0; k < s.np; k++)
                            s.err[parity][(LSX_ERR_PAD + n) * LSX_LANES + k] = (int32_t)(next(&rng) % scales[ci]);
                for (uint32_t n = 0; n < W; n++)
                    for (int k = 0; k < s.np; k++) s.colerr[n * LSX_LANES + k] = (int32_t)(next(&rng) % scales[ci]);
                for (uint32_t n = 2; n + 1 < W; n++) {
                    double p[LSX_NPRED];
                    for (int k = 0; k < s.np; k++) p[k] = (double)(next(&rng) % 6553600) / 100.0;
                    const int32_t *cur = s.err[M & 1] + (LSX_ERR_PAD + n) * LSX_LANES;
                    const int32_t *up = s.err[(M + 1) & 1] + (LSX_ERR_PAD + n) * LSX_LANES;
                    int32_t local[LSX_NPRED], col[LSX_NPRED];
                    int inside = 1;
                    for (int k = 0; k < s.np; k++) {
                        local[k] = cur[k - LSX_LANES] + up[k - LSX_LANES] + up[k] + up[k + LSX_LANES];
                        if (s.set) local[k] += cur[k - 2 * LSX_LANES];
                        col[k] = s.colerr[n * LSX_LANES + k];
                        inside &= local[k] + s.colerr_w * col[k] < LSX_BLEND_TABLE;
                    }
                    table_pixels += inside, other_pixels += !inside;
                    int32_t emin = -1, emin_ref = -1;
                    /* the unrounded blends, bit for bit (the sign's context reads them) */
                    const double bl = lsx_blend(&s, M, n, p, &emin);
                    const double ref = lsx_blend_at(s.np, local, col, s.colerr_w, ctx_w, kind, p, &emin_ref);
                    cr_assert(memcmp(&bl, &ref, sizeof bl) == 0 && emin == emin_ref,
                              "set %d bg %d scale %u column %u: %.17g (Emin %d), the definition %.17g (Emin %d)",
                              s.set, s.bg, scales[ci], n, bl, emin, ref, emin_ref);
                }
            }
        }
        lsx_state_free(&s);
    }
    cr_assert(table_pixels > 1000 && other_pixels > 1000, "both paths taken: %ld from the table, %ld not",
              table_pixels, other_pixels);
}

/* ctx_model_refresh skips the contexts whose tables cannot change (the
 * stale flags): after every refresh its counts, frequencies and cumulative
 * frequencies must be those of a refresh of every context.  Runs of
 * counts concentrated on few contexts (as on a frame's rows), contexts
 * never counted, the prior's starting counts, the halving at CTX_HALVE_AT,
 * and a context still over it after one halving (it must halve again at
 * the next refresh with no new counts). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "imgstream.h"
#include "lsmix.h"

static uint32_t next(uint32_t *rng)
{
    *rng = *rng * 1664525u + 1013904223u;
    return *rng >> 8;
}

/* The reference: every context refreshed. */
static void refresh_all(ctx_model *cm)
{
    memset(cm->stale, 1, sizeof cm->stale);
    ctx_model_refresh(cm);
}

static void assert_same_model(const ctx_model *a, const ctx_model *b, int step)
{
    for (int k = 0; k < a->nctx; k++) {
        cr_assert(memcmp(a->count[k], b->count[k], sizeof a->count[k]) == 0, "step %d context %d: counts", step, k);
        cr_assert(memcmp(a->freq[k], b->freq[k], sizeof a->freq[k]) == 0, "step %d context %d: freq", step, k);
        cr_assert(memcmp(a->cum[k], b->cum[k], sizeof a->cum[k]) == 0, "step %d context %d: cum", step, k);
    }
}

Test(core_ctxmodel, skipped_refresh_is_the_full_refresh)
{
    static ctx_model skip, full;
    uint32_t rng = 11;
    const int shapes[][3] = {{16, 1, 0}, {48, 3, 1}, {CTX_MAX, 4, 1}, {8, 2, 0}}; /* nctx x nib, nib, prior */
    long skipped = 0, refreshed = 0;
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
        ctx_model_init(&skip, shapes[si][0], shapes[si][1], shapes[si][2], 0);
        ctx_model_init(&full, shapes[si][0], shapes[si][1], shapes[si][2], 0);
        assert_same_model(&skip, &full, -1);
        const int nctx = skip.nctx;
        for (int step = 0; step < 300; step++) {
            /* one interval: most counts in a few contexts, a few elsewhere;
             * every 50th a burst past two halvings in context 0 */
            const int hot = (int)(next(&rng) % (uint32_t)nctx), spread = 1 + (int)(next(&rng) % 3);
            const uint32_t n = step % 50 == 49 ? 3 * CTX_HALVE_AT : 1024;
            for (uint32_t i = 0; i < n; i++) {
                int k = step % 50 == 49 ? 0 : (hot + (int)(next(&rng) % (uint32_t)spread)) % nctx;
                if (next(&rng) % 512 == 0) k = (int)(next(&rng) % (uint32_t)nctx);
                const int tok = (int)(next(&rng) % 7 + next(&rng) % 9) % CTX_TOKENS;
                ctx_model_count(&skip, k, tok);
                ctx_model_count(&full, k, tok);
            }
            for (int k = 0; k < nctx; k++) {
                if (skip.stale[k]) refreshed++;
                else skipped++;
            }
            ctx_model_refresh(&skip);
            refresh_all(&full);
            assert_same_model(&skip, &full, step);
            /* a refresh with no counts in between changes only what is
             * still over the halving bound */
            ctx_model_refresh(&skip);
            refresh_all(&full);
            assert_same_model(&skip, &full, step);
        }
    }
    cr_assert_gt(skipped, refreshed, "the test's intervals should leave most contexts uncounted");
}

/* The encoder's size estimate (lsx_log2_q16, lsx_token_cost_q16), which
 * picks the candidate it codes: log2 within 2^-15 of the true value and
 * never decreasing, and the estimate of a coded sequence within 0.2 % (and
 * a few bytes) of the rANS coder's length for the same symbols. */
Test(core_ctxmodel, size_estimate_follows_the_coded_length)
{
    uint32_t prev = 0;
    for (uint32_t f = 1; f <= (1u << CTX_PROB_BITS); f++) {
        const uint32_t l = lsx_log2_q16(f);
        cr_assert(fabs(l / 65536.0 - log2((double)f)) <= 1.0 / 32768, "log2(%u): %u / 2^16", f, l);
        cr_assert_geq(l, prev, "log2(%u) below log2(%u)", f, f - 1);
        prev = l;
    }
    cr_assert_eq(lsx_log2_q16(1), 0u);
    cr_assert_eq(lsx_log2_q16(1u << 15), 15u << 16);

    static ctx_model cm;
    static ctx_sym sym[3 * 16384];
    static uint8_t out[4 + 4 * 16384];
    const double scales[] = {0.3, 3, 40, 900};
    uint32_t rng = 5;
    for (size_t si = 0; si < sizeof scales / sizeof *scales; si++) {
        ctx_model_init(&cm, 8, 1, 1, 0);
        uint64_t bits = 0;
        size_t ns = 0;
        for (uint64_t i = 0; i < 16384; i++) {
            if (ctx_refresh_due(i)) ctx_model_refresh(&cm);
            const int k = (int)(i / 97 % 8); /* runs of one context, as along a row */
            /* a two-sided geometric-like residual of scale scales[si] x (1 + k) */
            double u = (next(&rng) + 0.5) / 16777216.0;
            int32_t e = (int32_t)(-log(u) * scales[si] * (1 + k));
            if (next(&rng) & 1) e = -e;
            int nraw;
            const int t = ctx_token((uint32_t)(e < 0 ? -e : e), &nraw);
            bits += lsx_token_cost_q16(cm.freq[k][t], t, CTX_PROB_BITS);
            ns += (size_t)ctx_symbols(&cm, k, e, 0, 0, -1, sym + ns);
            ctx_model_count(&cm, k, t);
        }
        const size_t len = ctx_rans_encode(sym, ns, AURP_RANS_L, out, sizeof out);
        cr_assert_gt(len, 0u, "scale %g: the coder failed", scales[si]);
        const double est = (double)bits / 65536.0 / 8.0 + 4; /* and the coder's final state */
        cr_assert(fabs(est - (double)len) <= 0.002 * (double)len + 8, "scale %g: estimate %.1f bytes, coded %zu",
                  scales[si], est, len);
    }
}

/* ctx_model_refresh skips the contexts whose tables cannot change (the
 * stale flags): after every refresh its counts, frequencies and cumulative
 * frequencies must be those of a refresh of every context.  Runs of
 * counts concentrated on few contexts (as on a frame's rows), contexts
 * never counted, the prior's starting counts, the halving at CTX_HALVE_AT,
 * and a context still over it after one halving (it must halve again at
 * the next refresh with no new counts). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

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
        ctx_model_init(&skip, shapes[si][0], shapes[si][1], shapes[si][2]);
        ctx_model_init(&full, shapes[si][0], shapes[si][1], shapes[si][2]);
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

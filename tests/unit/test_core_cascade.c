/* The lsmix cascade stage (core/lsmix_cascade.[ch], FORMAT.md 3.2): the fit
 * finds a filter that is there, a real frame takes the stage and round
 * trips, and the decoder refuses a damaged cascade block by name (never a
 * crash: the test runs under ASan + UBSan too). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_fitshdr.h"
#include "internal.h"
#include "lsmix.h"
#include "lsmix_cascade_cg.h"

/* The tests' noise: the next state of a 64-bit LCG (Knuth's MMIX constants). */
static uint64_t lcg_next(uint64_t *s) { return *s = *s * 6364136223846793005ull + 1442695040888963407ull; }

Test(core_cascade, the_plan_stays_in_its_bounds)
{
    lsx_cas_plan *pl = malloc(sizeof *pl);
    lsx_cas_plan_make(pl);
    cr_assert_eq(pl->no, 1051, "%d offsets", pl->no); /* research/r18-cascade-above.md */
    cr_assert(pl->no <= LSX_CAS_MAXO);
    cr_assert(pl->dm[0] == 0 && pl->dn[0] == 0, "offset 0 is (0, 0), the ridge's R[0]");
    for (int k = 0; k < pl->no; k++) {
        cr_assert(pl->dm[k] > 0 || (pl->dm[k] == 0 && pl->dn[k] >= 0), "offset %d not normalised", k);
        cr_assert(pl->dm[k] <= LSX_CAS_ROWS_MAX, "offset %d: %d rows up", k, pl->dm[k]);
        for (int j = 0; j < k; j++)
            cr_assert(pl->dm[j] != pl->dm[k] || pl->dn[j] != pl->dn[k], "offsets %d and %d repeat", j, k);
    }
    const int want_no[2] = {391, 1051}; /* the narrow support's offsets come first */
    for (int wide = 0; wide <= 1; wide++) {
        const int nl = pl->sup[wide].nl;
        const uint16_t *pair = pl->sup[wide].pair;
        const int *lag = pl->sup[wide].lag;
        cr_assert_eq(nl, lsx_cas_nl(wide));
        int top = 0;
        for (int a = 0; a < nl; a++) {
            int am, an;
            lsx_cas_lag(wide, a, &am, &an);
            cr_assert(lag[a] > 0 && lag[a] < pl->no);
            cr_assert(pl->dm[lag[a]] == am && pl->dn[lag[a]] == an, "lag %d", a);
            if (lag[a] + 1 > top) top = lag[a] + 1;
            cr_assert_eq(pair[a * nl + a], 0, "a lag with itself is offset (0, 0)");
            for (int b = 0; b < nl; b++) {
                cr_assert_eq(pair[a * nl + b], pair[b * nl + a], "pairs not symmetric");
                int bm, bn;
                lsx_cas_lag(wide, b, &bm, &bn);
                const int k = pair[a * nl + b], sg = pl->dm[k] == bm - am && pl->dn[k] == bn - an ? 1 : -1;
                cr_assert(pl->dm[k] == sg * (bm - am) && pl->dn[k] == sg * (bn - an), "pair %d %d", a, b);
                if (k + 1 > top) top = k + 1;
            }
        }
        cr_assert_eq(top, want_no[wide], "support %d reads offsets below %d", wide, top);
    }
    free(pl);
}

/* The correlations by row blocks on threads (lsx_cas_correlations, 32-bit
 * row sums where they cannot overflow) are the definition's
 * (lsx_cas_correlation) for every offset, on both paths. */
Test(core_cascade, the_correlations_are_the_definitions)
{
    lsx_cas_plan *pl = malloc(sizeof *pl);
    lsx_cas_plan_make(pl);
    int64_t *R = malloc(sizeof *R * LSX_CAS_MAXO);
    const struct {
        uint32_t W, H;
        int32_t clip;
    } cases[] = {{37, 23, 1000}, {300, 41, 30000}, {5, 2, 7}, {129, 17, 32767}};
    uint64_t s = 3;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const uint32_t W = cases[c].W, H = cases[c].H;
        int16_t *ec = malloc(sizeof *ec * W * H);
        for (size_t i = 0; i < (size_t)W * H; i++) {
            ec[i] = (int16_t)((int64_t)(lcg_next(&s) >> 33) % (2 * cases[c].clip + 1) - cases[c].clip);
        }
        for (int threads = 1; threads <= 3; threads++) {
            cr_assert_eq(lsx_cas_correlations(pl, ec, W, H, cases[c].clip, threads, R), 0);
            for (int k = 0; k < pl->no; k++)
                cr_assert_eq(R[k], lsx_cas_correlation(ec, W, H, pl->dm[k], pl->dn[k]),
                             "%ux%u clip %d, %d threads: offset (%d, %d)", W, H, cases[c].clip, threads, pl->dm[k],
                             pl->dn[k]);
        }
        free(ec);
    }
    free(R);
    free(pl);
}

/* The supports' lags (FORMAT.md 3.2): the narrow one as the streams before
 * it had them, the wide one row after row, every lag once. */
Test(core_cascade, the_supports_lags)
{
    const int narrow[6][2] = {{1, -2}, {1, -1}, {1, 0}, {1, 1}, {1, 2}, {2, 0}};
    int dm, dn;
    cr_assert_eq(lsx_cas_nl(0), LSX_CAS_NR + 6);
    for (int k = 0; k < 6; k++) {
        lsx_cas_lag(0, LSX_CAS_NR + k, &dm, &dn);
        cr_assert(dm == narrow[k][0] && dn == narrow[k][1], "narrow lag %d: (%d, %d)", k, dm, dn);
    }
    cr_assert_eq(lsx_cas_nl(1), LSX_CAS_NR + 90);
    const int half[6] = {16, 12, 8, 4, 2, 0};
    int k = LSX_CAS_NR;
    for (int r = 1; r <= 6; r++)
        for (int c = -half[r - 1]; c <= half[r - 1]; c++, k++) {
            lsx_cas_lag(1, k, &dm, &dn);
            cr_assert(dm == r && dn == c, "wide lag %d: (%d, %d), want (%d, %d)", k, dm, dn, r, c);
        }
    cr_assert_eq(k, lsx_cas_nl(1));
    for (int wide = 0; wide <= 1; wide++)
        for (k = 0; k < LSX_CAS_NR; k++) {
            lsx_cas_lag(wide, k, &dm, &dn);
            cr_assert(dm == 0 && dn == k + 1);
        }
}

/* The decoder's and the CPU encoder's row pass (lsx_cas_above plus
 * lsx_cas_raster) gives every pixel the correction of the pixel-by-pixel
 * definition (lsx_cas_finish), at the frame's edges
 * and for frames narrower than the support, with weights at their limits. */
Test(core_cascade, the_row_pass_is_the_definition)
{
    const uint32_t widths[] = {1, 3, 17, 33, 40, 130, 300};
    const uint32_t H = 9;
    uint64_t s = 11;
    for (size_t wi = 0; wi < sizeof widths / sizeof *widths; wi++) {
        const uint32_t W = widths[wi];
        int16_t *e = malloc(sizeof *e * W * H);
        int32_t *above = malloc(sizeof *above * W);
        for (int wide = 0; wide <= 1; wide++) {
            int16_t w[LSX_CAS_NL_MAX], wrev[LSX_CAS_NR];
            for (int j = 0; j < LSX_CAS_NL_MAX; j++) {
                w[j] = (int16_t)((int64_t)(lcg_next(&s) >> 40) % 100 - 50);
            }
            for (int j = 0; j < LSX_CAS_NR; j++) wrev[LSX_CAS_NR - 1 - j] = w[j];
            for (size_t i = 0; i < (size_t)W * H; i++) {
                e[i] = (int16_t)((int64_t)(lcg_next(&s) >> 40) % 2001 - 1000);
            }
            for (uint32_t m = 1; m < H; m++) {
                /* the whole row, and the row in column ranges (each gives its columns' part) */
                lsx_cas_above(w, wide, e + (size_t)m * W, W, m, 0, W, above);
                int32_t *banded = malloc(sizeof *banded * W);
                for (uint32_t c0 = 0; c0 < W; c0 += 7)
                    lsx_cas_above(w, wide, e + (size_t)m * W, W, m, c0, c0 + 7 < W ? c0 + 7 : W, banded);
                cr_assert(memcmp(banded, above, sizeof *above * W) == 0, "W %u: bands of the row differ", W);
                free(banded);
                for (uint32_t n = 0; n < W; n++) {
                    const int64_t i = (int64_t)m * W + n;
                    const int32_t raster = lsx_cas_raster(w, wrev, e, i);
                    cr_assert_eq(lsx_cas_round(raster + above[n]), lsx_cas_finish(raster, w, wide, e, W, m, n),
                                 "W %u, support %d, pixel (%u, %u)", W, wide, m, n);
                }
            }
        }
        free(e);
        free(above);
    }
}

Test(core_cascade, the_fit_finds_a_filter_in_the_residuals)
{
    /* e[t] = 0.5 e[t-1] - 0.25 e[t-2] + noise along the readout: the fit
     * must find the two weights and leave the rest near 0 */
    const uint32_t W = 256, H = 64;
    const size_t n = (size_t)W * H;
    int32_t *e1 = malloc(n * sizeof *e1);
    int16_t *ec = malloc(n * sizeof *ec);
    uint64_t s = 7;
    double a = 0, b = 0;
    for (size_t i = 0; i < n; i++) {
        const double noise = (double)((lcg_next(&s) >> 33) % 41) - 20.0;
        const double v = 0.5 * a - 0.25 * b + noise;
        b = a, a = v;
        e1[i] = (int32_t)(v < 0 ? v - 0.5 : v + 0.5);
    }
    lsx_view v;
    memset(&v, 0, sizeof v);
    v.W = W, v.H = H;
    cr_assert_eq(lsx_cas_fit(&v, e1, ec, 2), 1, "the system is solvable");
    cr_assert(v.cas && v.cas_clip > 0);
    const int unit = 1 << LSX_CAS_SHIFT;
    cr_assert(abs(v.cas_w[0] - unit / 2) < unit / 16, "lag 1: %d, want ~%d", v.cas_w[0], unit / 2);
    cr_assert(abs(v.cas_w[1] + unit / 4) < unit / 16, "lag 2: %d, want ~%d", v.cas_w[1], -unit / 4);
    cr_assert(v.cas_wide == 0, "nothing in the rows above: the narrow support's fewer weights");
    for (int j = 2; j < lsx_cas_nl(v.cas_wide); j++)
        cr_assert(abs(v.cas_w[j]) < unit / 16, "lag %d: %d, want ~0", j, v.cas_w[j]);
    for (int j = 0; j < LSX_CAS_NR; j++) cr_assert_eq(v.cas_wrev[LSX_CAS_NR - 1 - j], v.cas_w[j]);
    /* the same sums from 1 thread */
    lsx_view v1 = v;
    cr_assert_eq(lsx_cas_fit(&v1, e1, ec, 1), 1);
    cr_assert(memcmp(v1.cas_w, v.cas_w, sizeof v.cas_w) == 0 && v1.cas_clip == v.cas_clip,
              "the thread count changed the weights");
    free(e1);
    free(ec);
}

/* Structure three rows up and six columns left, e[m][n] = 0.5 e[m-3][n-6]
 * + noise, which only the wide support reaches: the choice takes it and
 * the fit finds the weight. */
Test(core_cascade, the_choice_takes_the_wide_support_where_it_pays)
{
    const uint32_t W = 512, H = 256;
    const size_t n = (size_t)W * H;
    int32_t *e1 = malloc(n * sizeof *e1);
    int16_t *ec = malloc(n * sizeof *ec);
    uint64_t s = 5;
    for (size_t i = 0; i < n; i++) {
        const uint32_t m = (uint32_t)(i / W), c = (uint32_t)(i % W);
        const int32_t up = m >= 3 && c >= 6 ? e1[i - 3 * W - 6] : 0;
        e1[i] = up / 2 + (int32_t)((lcg_next(&s) >> 33) % 41) - 20;
    }
    lsx_view v;
    memset(&v, 0, sizeof v);
    v.W = W, v.H = H;
    cr_assert_eq(lsx_cas_fit(&v, e1, ec, 2), 1);
    cr_assert_eq(v.cas_wide, 1, "the wide support should win");
    const int unit = 1 << LSX_CAS_SHIFT;
    for (int k = 0; k < lsx_cas_nl(1); k++) {
        int dm, dn;
        lsx_cas_lag(1, k, &dm, &dn);
        const int want = dm == 3 && dn == 6 ? unit / 2 : 0;
        cr_assert(abs(v.cas_w[k] - want) < unit / 16, "lag (%d, %d): %d, want ~%d", dm, dn, v.cas_w[k], want);
    }
    free(e1);
    free(ec);
}

/* The GPU encoder starts its trial on lsx_cas_solve's wide stage before
 * lsx_cas_decide has chosen: where the choice is the wide support, the
 * solve's stage must be the chosen one, bit for bit; where the wide system
 * is not positive definite along the way, the solve offers none.  Planes: structure only the wide
 * support reaches (the wide one wins), raster structure on few pixels (the
 * narrow one wins), and correlations no plane can have (indefinite). */
static int same_stage(const lsx_view *a, const lsx_view *b)
{
    return a->cas == b->cas && a->cas_wide == b->cas_wide && a->cas_clip == b->cas_clip &&
           memcmp(a->cas_w, b->cas_w, sizeof a->cas_w) == 0 && memcmp(a->cas_wrev, b->cas_wrev, sizeof a->cas_wrev) == 0;
}

Test(core_cascade, the_wide_stage_before_the_choice_is_the_chosen_one)
{
    const uint32_t W = 256, H = 128;
    const size_t n = (size_t)W * H;
    int16_t *ec = malloc(n * sizeof *ec);
    int64_t *R = malloc(LSX_CAS_MAXO * sizeof *R);
    lsx_cas_plan *pl = malloc(sizeof *pl);
    lsx_cas_plan_make(pl);
    const int32_t clip = 40;
    int seen[3] = {0}; /* wide chosen, narrow chosen, no wide solution */
    uint64_t s = 11;
    for (int trial = 0; trial < 12; trial++) {
        for (size_t i = 0; i < n; i++) {
            const uint32_t m = (uint32_t)(i / W), c = (uint32_t)(i % W);
            int32_t e = (int32_t)((lcg_next(&s) >> 33) % 41) - 20;
            if (trial % 3 == 0 && m >= 3 && c >= 6) e += ec[i - 3 * W - 6] / 2;
            if (trial % 3 == 1 && c >= 1) e += ec[i - 1] / 3;
            ec[i] = lsx_cas_clipped(e, clip);
        }
        cr_assert_eq(lsx_cas_correlations(pl, ec, W, H, clip, 2, R), 0);
        if (trial % 3 == 2)
            for (int k = 1; k < pl->no; k++) R[k] = R[0] - (int64_t)(lcg_next(&s) >> 50); /* indefinite */
        /* the narrow support wins on a few pixels (its weights cost less) */
        const uint64_t pixels = trial % 3 == 1 ? 4096 : (uint64_t)W * (H - 1);
        lsx_view chosen, v;
        memset(&chosen, 0, sizeof chosen);
        chosen.W = W, chosen.H = H;
        v = chosen;
        const int ok = lsx_cas_choose(pl, R, clip, pixels, &chosen);
        lsx_view wide;
        lsx_cas_solve(pl, R, clip, &v, &wide);
        cr_assert_eq(lsx_cas_decide(pl, R, clip, pixels, &wide, &v), ok);
        cr_assert(same_stage(&v, &chosen), "trial %d: the two steps chose otherwise than one", trial);
        /* the GPU encoder's path: the wide stage from its weights alone */
        lsx_view vd, dev;
        memset(&vd, 0, sizeof vd);
        vd.W = W, vd.H = H;
        dev = vd;
        if (wide.cas) lsx_cas_set_stage(wide.cas_w, 1, clip, &dev);
        cr_assert(same_stage(&dev, &wide), "trial %d: the stage from the weights differs", trial);
        cr_assert_eq(lsx_cas_decide(pl, R, clip, pixels, &dev, &vd), ok);
        cr_assert(same_stage(&vd, &chosen), "trial %d: the choice from the weights differs", trial);
        if (ok && chosen.cas_wide) {
            cr_assert(same_stage(&wide, &chosen), "trial %d: the early wide stage is not the chosen one",
                      trial);
            seen[0]++;
        } else if (ok) {
            seen[1]++;
        }
        if (!wide.cas) seen[2]++;
    }
    cr_assert(seen[0] > 0 && seen[1] > 0 && seen[2] > 0, "cases: wide %d, narrow %d, no wide solution %d", seen[0],
              seen[1], seen[2]);
    free(pl);
    free(R);
    free(ec);
}

/* The first `rows` rows of a real TREx frame: the stage wins on 64 with the
 * narrow support and on 96 with the wide one (as in the golden streams
 * lsmix_trex64 and lsmix_trex96); returns their stream. */
static uint8_t *trex_stream(uint32_t rows, size_t *slen, uint8_t **be, uint32_t *w, uint32_t *h)
{
    size_t len;
    uint64_t off;
    uint8_t *file = core_read_file("tests/data/real/trex_20230503T060000_f0.fits", &len);
    cr_assert(file, "run from the repository root");
    cr_assert_eq(core_fits_primary_image(file, len, &off, w, h), 0);
    cr_assert(*h >= rows);
    *h = rows;
    *be = malloc(2 * (size_t)*w * *h);
    memcpy(*be, file + off, 2 * (size_t)*w * *h);
    free(file);
    aurp_params p;
    aurp_params_for_profile(&p, AURP_PROFILE_LSMIX);
    size_t cap = aurp_image_bound(*w, *h);
    uint8_t *s = malloc(cap);
    aurp_error err = {{0}};
    cr_assert_eq(aurp_image_encode(*be, *w, *h, &p, 2, s, cap, slen, &err), AURP_OK, "%s", err.msg);
    return s;
}

Test(core_cascade, a_real_frame_takes_the_stage_and_round_trips)
{
    for (uint32_t rows = 64; rows <= 96; rows += 32) {
        size_t slen;
        uint8_t *be;
        uint32_t w, h;
        uint8_t *s = trex_stream(rows, &slen, &be, &w, &h);
        cr_assert(s[23] & 4, "header byte 23 %#x: the cascade stage should win on %u TREx rows", s[23], rows);
        /* the choice of the support: on 64 rows the wide one's 84 more
         * weights cost more than it gains, on 96 it pays */
        cr_assert_eq(!!(s[23] & 16), rows == 96, "header byte 23 %#x on %u rows", s[23], rows);
        uint8_t *back = malloc(2 * (size_t)w * h);
        aurp_error err = {{0}};
        for (int threads = 1; threads <= 3; threads++) {
            memset(back, 0, 2 * (size_t)w * h);
            cr_assert_eq(aurp_image_decode(s, slen, w, h, threads, back, &err), AURP_OK, "%s", err.msg);
            cr_assert(memcmp(back, be, 2 * (size_t)w * h) == 0, "%u rows, %d threads: other pixels", rows, threads);
        }
        /* the support's bit read as the other support: a wrong block length
         * or other pixels, never these */
        s[23] ^= 16;
        if (aurp_image_decode(s, slen, w, h, 2, back, &err) == AURP_OK)
            cr_assert(memcmp(back, be, 2 * (size_t)w * h) != 0, "%u rows: the support's bit is not read", rows);
        /* the support's bit without the stage's */
        s[23] = (uint8_t)((s[23] | 16) & ~4);
        cr_assert_eq(aurp_image_decode(s, slen, w, h, 2, back, &err), AURP_ERR_CORRUPT);
        cr_assert(strstr(err.msg, "header flags"), "%s", err.msg);
        free(s);
        free(be);
        free(back);
    }
}

Test(core_cascade, a_damaged_cascade_block_is_refused, .timeout = 600)
{
    size_t slen;
    uint8_t *be;
    uint32_t w, h;
    uint8_t *s = trex_stream(96, &slen, &be, &w, &h);
    uint8_t *back = malloc(2 * (size_t)w * h);
    aurp_error err = {{0}};
    cr_assert(s[23] & 16, "the wide support's block (218 weights)");
    const size_t block = LSX_HEADER + 4 * (size_t)(s[3] - 1); /* the block follows the thresholds */
    /* a clip beyond 32767 */
    uint8_t *d = malloc(slen);
    memcpy(d, s, slen);
    d[block] = 0xff, d[block + 1] = 0xff;
    cr_assert_eq(aurp_image_decode(d, slen, w, h, 1, back, &err), AURP_ERR_CORRUPT);
    cr_assert(strstr(err.msg, "cascade"), "%s", err.msg);
    /* a weight's varint that never ends */
    memcpy(d, s, slen);
    memset(d + block + 2, 0xff, 4);
    cr_assert_eq(aurp_image_decode(d, slen, w, h, 1, back, &err), AURP_ERR_CORRUPT);
    cr_assert(strstr(err.msg, "cascade"), "%s", err.msg);
    /* the stream cut inside the block */
    for (size_t n = block; n < block + 40; n++)
        cr_assert_neq(aurp_image_decode(s, n, w, h, 1, back, &err), AURP_OK, "truncation to %zu", n);
    /* every flip of the header, the thresholds and the block: an error or
     * other pixels, never a crash */
    for (size_t i = 0; i < block + 200 && i < slen; i++)
        for (int b = 0; b < 8; b++) {
            memcpy(d, s, slen);
            d[i] ^= (uint8_t)(1u << b);
            (void)aurp_image_decode(d, slen, w, h, 2, back, &err);
        }
    free(d);
    free(s);
    free(be);
    free(back);
}

/* The conjugate gradients' weights (lsmix_cascade_cg.h, a fixed count of
 * iterations) leave the residual energy of the least-squares weights:
 * against an exact solve of the same system (Gaussian elimination with
 * pivoting in long double), both rounded to 2^-10, the energy sum (e -
 * sum w_a e_a)^2 from the correlations within 1e-4 of it (a code length
 * 1e-5 bits a pixel longer at most), on planes whose structure only the
 * rows above, only the raster lags, or both reach, far stronger than the
 * blend's residuals have (where 15 iterations reached the rounded exact
 * weights on every frame measured). */
/* sum (e - sum_a w_a e_a)^2 from the correlations, w in units of 2^-10 */
static long double stage_energy(const lsx_cas_plan *pl, int wide, const int64_t *R, const int16_t *q)
{
    const int nl = pl->sup[wide].nl;
    long double e = (long double)R[0];
    for (int a = 0; a < nl; a++) {
        const long double wa = q[a] / 1024.0L;
        e -= 2 * wa * (long double)R[pl->sup[wide].lag[a]];
        for (int b = 0; b < nl; b++) e += wa * (q[b] / 1024.0L) * (long double)R[pl->sup[wide].pair[a * nl + b]];
    }
    return e;
}

static void exact_solve(int n, long double *A, long double *h)
{
    for (int c = 0; c < n; c++) {
        int piv = c;
        for (int r = c + 1; r < n; r++)
            if (fabsl(A[r * n + c]) > fabsl(A[piv * n + c])) piv = r;
        for (int k = 0; k < n; k++) {
            const long double t = A[c * n + k];
            A[c * n + k] = A[piv * n + k], A[piv * n + k] = t;
        }
        const long double t = h[c];
        h[c] = h[piv], h[piv] = t;
        for (int r = c + 1; r < n; r++) {
            const long double f = A[r * n + c] / A[c * n + c];
            for (int k = c; k < n; k++) A[r * n + k] -= f * A[c * n + k];
            h[r] -= f * h[c];
        }
    }
    for (int r = n - 1; r >= 0; r--) {
        for (int k = r + 1; k < n; k++) h[r] -= A[r * n + k] * h[k];
        h[r] /= A[r * n + r];
    }
}

Test(core_cascade, the_conjugate_gradients_give_the_least_squares_weights)
{
    const uint32_t W = 320, H = 160;
    const size_t n = (size_t)W * H;
    int16_t *ec = malloc(n * sizeof *ec);
    int64_t *R = malloc(LSX_CAS_MAXO * sizeof *R);
    lsx_cas_plan *pl = malloc(sizeof *pl);
    long double *A = malloc(sizeof *A * LSX_CAS_NL_MAX * LSX_CAS_NL_MAX), h[LSX_CAS_NL_MAX];
    lsx_cas_plan_make(pl);
    const int32_t clip = 60;
    uint64_t s = 29;
    int checked = 0;
    for (int trial = 0; trial < 6; trial++) {
        for (size_t i = 0; i < n; i++) {
            const uint32_t m = (uint32_t)(i / W), c = (uint32_t)(i % W);
            int32_t e = (int32_t)((lcg_next(&s) >> 33) % 61) - 30;
            if (trial % 3 != 1 && m >= 2 && c >= 4) e += ec[i - 2 * W - 4] * (trial < 3 ? 1 : 2) / 3;
            if (trial % 3 != 0 && c >= 2) e += ec[i - 2] / 2 - ec[i - 1] / 4;
            ec[i] = lsx_cas_clipped(e, clip);
        }
        cr_assert_eq(lsx_cas_correlations(pl, ec, W, H, clip, 2, R), 0);
        for (int wide = 0; wide <= 1; wide++) {
            lsx_view v;
            memset(&v, 0, sizeof v);
            v.W = W, v.H = H;
            lsx_view solved, got;
            lsx_cas_solve(pl, R, clip, &v, &solved);
            got = solved;
            if (!wide) { /* the narrow stage: where chosen on few pixels */
                cr_assert(lsx_cas_decide(pl, R, clip, 64, &solved, &got));
                if (got.cas_wide) continue;
            }
            cr_assert(got.cas, "trial %d: support %d not solved", trial, wide);
            const int nl = pl->sup[wide].nl;
            for (int a = 0; a < nl; a++) {
                for (int b = 0; b < nl; b++)
                    A[a * nl + b] = a == b ? lsx_cas_cg_diag(R[0]) : (long double)R[pl->sup[wide].pair[a * nl + b]];
                h[a] = (long double)R[pl->sup[wide].lag[a]];
            }
            exact_solve(nl, A, h);
            double w[LSX_CAS_NL_MAX];
            for (int a = 0; a < nl; a++) w[a] = (double)h[a];
            const double sc = lsx_cas_scale(w, nl, clip);
            int16_t exact[LSX_CAS_NL_MAX];
            for (int a = 0; a < nl; a++) exact[a] = lsx_cas_quantize(w[a], sc);
            const long double e_cg = stage_energy(pl, wide, R, got.cas_w), e_exact = stage_energy(pl, wide, R, exact);
            cr_assert(e_exact > 0 && e_exact < (long double)R[0], "trial %d, support %d: no gain", trial, wide);
            cr_assert_leq((double)((e_cg - e_exact) / e_exact), 1e-4, "trial %d, support %d: energy %Lg against %Lg",
                          trial, wide, e_cg, e_exact);
            checked++;
        }
    }
    cr_assert_geq(checked, 8, "only %d systems checked", checked);
    free(A);
    free(pl);
    free(R);
    free(ec);
}

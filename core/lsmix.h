/* The "lsmix" profile (docs/FORMAT.md section 3): internal interface between
 * its predictor (lsmix_predict.c), its residual coder (ctxcoder.c) and its
 * stream (lsmix_codec.c).  Not a public API.
 *
 * Prediction of x[m][n] blends three predictors by their recent errors:
 *   - LS: ridge least squares over K spectral lags of the same row, three
 *     pixels of the row above, two running column means and a constant,
 *     trained on previous rows with exponential forgetting in a window of
 *     M columns centred on n;
 *   - CM: the slow running mean of column n;
 *   - AF: an affine map of the fast column mean B fitted along row m to the
 *     left of n (exponentially decaying integer sums): follows a row whose
 *     level changes from the row above (a trace profile across the rows);
 * and, in predictor set 1 (the encoder's choice per frame, for frames whose
 * row-to-row relation changes every row: curved cross-dispersed orders):
 *   - RV: a ridge affine map of the two pixels above, x[m-1][n] and
 *     x[m-2][n], fitted along row m to the left of n;
 *   - AL: the affine map of the LS prediction fitted along row m;
 * and last, in streams that say so (all new ones):
 *   - BG: a robust background, column level plus row offset (lsmix_bg.h).
 * Set 2 has LS, CM, RV, AL, the two row LS members RL1 and RL2
 * (lsmix_rl.h) and BG; set 3 has LS, LG (lsmix_lg.h), RV, RC, RL1, RL2 and
 * BR (lsmix_br.h), and its LS with forgetting 2^-1 weights each training
 * equation by the inverse of its pixel's Poisson variance.
 * Every integer is exact; the double operations follow one fixed sequence.
 */
#ifndef AURP_LSMIX_H
#define AURP_LSMIX_H

#include <stddef.h>
#include <stdint.h>

#include "aurp.h"
#include "lsmix_arith.h"
#include "lsmix_bg.h"
#include "lsmix_br.h"
#include "lsmix_carry.h"
#include "lsmix_cascade.h"
#include "lsmix_lg.h"
#include "lsmix_rl.h"
#include "lsmix_sign.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LSX_MAX_K 16          /* spectral lags */
#define LSX_DEFAULT_K 6       /* the profile's defaults (aurp_params_for_profile) */
#define LSX_DEFAULT_M 9
/* LSX_PREV, LSX_EXTRA (the regressors besides the lags): lsmix_arith.h */
#define LSX_MAX_D (LSX_MAX_K + LSX_PREV + LSX_EXTRA)
#define LSX_MAX_Z (LSX_MAX_D + 1) /* regressors and the target */
#define LSX_MAX_M 17          /* training window, odd */
/* LSX_NPRED (the most blended predictors): lsmix_arith.h */
#define LSX_NSETS 4           /* predictor sets (3.2) */

/* Stream-level parameters (the image stream header records them). */
typedef struct {
    int K;            /* spectral lags, 1..16 */
    int M;            /* training window in columns, odd 1..17 */
    int forget_shift; /* training sums lose 2^-f of their weight each row, 1..8 */
    int ridge_shift;  /* ridge of regressor j: G_jj >> r, 8..40 */
    int weighted;     /* each training equation weighted by lsx_ls_weight (set 3 with
                       * forgetting 2^-1; not a header field: implied by those two) */
} lsx_params;

/* ---- the LS predictor of one band of columns ------------------------ */

/* The prefix rows are written a whole vector row at a time, past the last
 * entry (lsmix_predict.c): LSX_PRE_PAD entries of room after each, and a
 * row starts on a 64-byte boundary. */
#define LSX_PRE_PAD 32
#define LSX_PRE_STRIDE(ne) (((size_t)(ne) + LSX_PRE_PAD + 7) / 8 * 8)

typedef struct {
    lsx_params p;
    uint32_t W, c0, c1; /* this band solves columns [c0, c1) */
    int D, Z, NE;       /* regressors, regressors + target, upper-triangle entries of Z x Z */
    uint64_t *G;        /* [(c1-c0) * NE] forgetting training sums */
    uint64_t *pre;      /* [M + 1][LSX_PRE_STRIDE(NE)] the last rows of a prefix of one row's outer products */
    double *coef;       /* [(c1-c0) * D] */
    uint8_t *kused;     /* [(c1-c0)] regressors in use (LDL order) */
    uint32_t lo, hi;    /* columns whose outer products the window needs */
    uint16_t gidx[LSX_MAX_D * LSX_MAX_D], hidx[LSX_MAX_D]; /* where A[r][s] and h[r] lie in a column's G */
    int lane_entries;   /* aurp_solve_lanes_entries of gidx, hidx */
    /* The default order's shared sums (lsmix_predict.c, LSX13_SLOT): the
     * columns [new_lo, new_hi) keep only their new entries; their A[r][s]
     * and h[r] lie at soff, shoff in aurp_solve_ldl_lanes_shifted's pairs. */
    uint32_t new_lo, new_hi;
    uint16_t soff[LSX_MAX_D * LSX_MAX_D], shoff[LSX_MAX_D];
    void *lane_pairs;   /* aurp_solve_ldl_lanes_shifted's pairs */
} lsx_band;

int lsx_band_init(lsx_band *b, const lsx_params *p, uint32_t W, uint32_t c0, uint32_t c1);
void lsx_band_free(lsx_band *b);

/* Row m >= 1: adds row m-1 to the training sums (img holds rows m-2 and
 * m-1 decoded; cm_a/cm_b are the column means before row m-1 joined them)
 * and solves every column of the band for row m. */
void lsx_band_prepare(lsx_band *b, const uint16_t *img, uint32_t m, const int32_t *cm_a,
                      const int32_t *cm_b);

/* The LS prediction (unrounded) of x[m][n], m >= 1, c0 <= n < c1; cur is row m
 * (columns < n read), prev row m-1; cm_a/cm_b the column means before row m. */
double lsx_band_predict(const lsx_band *b, const uint16_t *cur, const uint16_t *prev,
                        const int32_t *cm_a, const int32_t *cm_b, uint32_t n);

/* ---- column means and the blend ------------------------------------- */

#define LSX_LANES 8   /* LSX_NPRED rounded up to a vector of lanes */
#define LSX_ERR_PAD 2 /* zero columns left of a row of errors */

/* The per-frame running state of the column means and of the two
 * predictors' error levels, and the previous row's errors. */
typedef struct {
    uint32_t W;
    int32_t *cm_a, *cm_b;         /* before the current row (Q4) */
    int32_t *cm_a_prev, *cm_b_prev; /* before the previous row (training uses these) */
    /* the members' errors and levels side by side, LSX_LANES a column, so
     * that a pixel's error levels are a few vector additions: */
    int32_t *err[2];              /* [row parity][(LSX_ERR_PAD + n) * LSX_LANES + k] |16x - q16(P_k)|;
                                   * the pad columns (2 left of the row, 1 right) stay 0 */
    int32_t *colerr;              /* [n * LSX_LANES + k] column error level of each predictor, Q4 */
    int64_t af[2][5];             /* AF (source B) and AL (source LS) sums of the current row:
                                   * w, y, z, zz, zy (Q4) */
    int64_t rv[LSX_RV_NS];        /* RV sums of the current row */
    int set, np, colerr_w;        /* predictor set, its predictors, its column error weight in the blend */
    int bg;                       /* the blend's last member is BG (lsmix_bg.h) */
    int32_t *bg_c, *bg_s;         /* BG column levels (Q4) and scales (Q8) before the current row */
    int64_t *bg_w;                /* and the scales' weights (lsx_bg_weight) */
    lsx_bg_row bg_row;            /* BG row offset of the current row */
    lsx_rl rl[LSX_RL_N];          /* sets 2, 3: the RL members of the current row (lsmix_rl.h) */
    double rl_pred[LSX_RL_N];     /* and their predictions of the current pixel */
    lsx_lg lg;                    /* set 3: LG of the current row (lsmix_lg.h) */
    double lg_pred;               /* and its prediction of the current pixel */
    int32_t *br_l, *br_s;         /* set 3: BR's column levels and scales before the current row */
    uint16_t *br_lit;             /* and the rows each column has been lit */
    int32_t br_o, br_k;           /* BR's row offset and the row's inliers so far */
    double *blend_w;              /* [LSX_BLEND_TABLE] lsx_blend_weight(e) of the stream's blend kind */
} lsx_state;

/* Error levels below this have their blend weight looked up (lsx_blend). */
#define LSX_BLEND_TABLE 16384

int lsx_state_init(lsx_state *s, uint32_t W, int set, int bg);
void lsx_state_free(lsx_state *s);

/* The blend of x[m][n]'s predictions p[0..np-1] (LS, CM, then set 0: AF;
 * set 1: AF, RV, AL; set 2: RV, AL, RL1, RL2; then BG where on; set 3: LS,
 * LG, RV, RC, RL1, RL2, BR), unrounded (num / den: aurp_round_clamp of it
 * is the prediction P1); writes the smallest error level (the context's
 * second input) to *emin. */
double lsx_blend(const lsx_state *s, uint32_t m, uint32_t n, const double *p, int32_t *emin);
/* The sources of the row-fitted predictors at (m, n), m >= 1 (Q4): z[0] =
 * B_m[n] (AF), z[1] = q16(P_LS) (AL), z[2] = 16 x[m-1][n], z[3] = 16
 * x[m-2][n] (16 x[m-1][n] in row 1) (RV); cur is row m of the image.  In
 * sets 2 and 3 also the RL members' regressors and predictions, in set 3
 * LG's prediction (into s). */
void lsx_sources(lsx_state *s, const uint16_t *cur, uint32_t m, uint32_t n, double p_ls, int32_t *z);
/* Fills p[2..np-1] (AF; set 1: AF, RV, AL; set 2: RV, AL, RL1, RL2; then
 * BG) from the sources z; set 3: p[1..6] (LG, RV, RC, RL1, RL2, BR). */
void lsx_row_predict(const lsx_state *s, uint32_t n, const int32_t *z, double *p);
/* Records the errors of every predictor at (m, n) once x is known, and
 * (m >= 1) adds x to the row sums (z: the sources, unused in row 0). */
void lsx_record(lsx_state *s, uint32_t m, uint32_t n, uint16_t x, const double *p, const int32_t *z);
/* After row m: column error levels and column means take the row in. */
void lsx_end_row(lsx_state *s, uint32_t m, const uint16_t *row);

/* The CM prediction of column n (the slow column mean). */
static inline double lsx_cm_predict(const lsx_state *s, uint32_t n)
{
    return (double)s->cm_a[n] * 0.0625;
}

/* ---- context-adaptive residual coder (ctxcoder.c) ------------------- */

#define CTX_MAX 64            /* contexts (activity x intensity) */
#define CTX_MAX_IB 4          /* intensity classes */
#define CTX_TOKENS 64         /* hybrid-integer tokens of |e| <= 65535 */
#define CTX_PROB_BITS 15      /* token frequencies sum to 2^15 */
#define CTX_HALVE_AT (1u << 16)

/* Default thresholds: the contexts are half-octaves of activity. */
void ctx_default_thresholds(uint32_t *thr, int nctx);

/* The binary contexts of the adaptive sign and top raw bit (lsmix_sign.h;
 * header byte 23 bit 6): each one's counts of 0 and 1, and its frequency
 * of 0 from the last refresh. */
typedef struct {
    uint32_t sign_n[LSX_SIGN_CTX][2], raw_n[LSX_RAWBIT_CTX][2];
    uint32_t sign_f0[LSX_SIGN_CTX], raw_f0[LSX_RAWBIT_CTX];
} ctx_bin_model;
/* Every frequency from the counts (lsx_bin_refresh; counts zero: 2048). */
void ctx_bin_refresh(ctx_bin_model *bm);
/* Counts residual e of token t (its raw bits nraw) in the binary contexts
 * of sign base b: its sign where e != 0, its top raw bit where it has raw
 * bits (every pixel, carried or not). */
static inline void ctx_bin_count(ctx_bin_model *bm, int b, int32_t e, int t, int nraw)
{
    const uint32_t v = (uint32_t)(e < 0 ? -e : e);
    if (v != 0) bm->sign_n[lsx_sign_ctx(b, t)][e < 0]++;
    if (nraw > 0) bm->raw_n[t][v >> (nraw - 1) & 1]++;
}

/* Adaptive token statistics: counts per context, refreshed into rANS
 * tables at fixed pixel indices (ctx_refresh_due). */
typedef struct {
    int nctx;
    uint32_t count[CTX_MAX][CTX_TOKENS];
    uint32_t freq[CTX_MAX][CTX_TOKENS];
    uint32_t cum[CTX_MAX][CTX_TOKENS + 1];
    /* nonzero where a refresh may change the context's table: counted
     * since its last refresh, or still over CTX_HALVE_AT after it (so the
     * next refresh halves again).  A refresh skips the others: their
     * tables are what their unchanged counts give.  On a 1024-wide frame
     * about one context in ten is counted between two refreshes. */
    uint8_t stale[CTX_MAX];
    /* the adaptive sign and top raw bit: refreshed with the tokens where bin is set */
    int bin;
    ctx_bin_model b;
} ctx_model;

/* The model at the start of a frame: nctx contexts of nib intensity
 * classes each, counts zero or (prior) the prior table's; bin: the binary
 * contexts of the sign and the top raw bit too (their counts zero). */
void ctx_model_init(ctx_model *cm, int nctx, int nib, int prior, int bin);
/* True when the tables are rebuilt before pixel p (raster index). */
static inline int ctx_refresh_due(uint64_t p)
{
    return p != 0 && ((p & 1023) == 0 || (p < 1024 && (p & 127) == 0));
}
void ctx_model_refresh(ctx_model *cm);
static inline void ctx_model_count(ctx_model *cm, int ctx, int tok)
{
    cm->count[ctx][tok]++;
    cm->stale[ctx] = 1;
}

/* One rANS symbol: cum/freq out of 2^bits. */
typedef struct {
    uint32_t cum, freq;
    uint8_t bits;
} ctx_sym;

/* Appends the symbols of residual e in context ctx (token, raw bits, sign),
 * leaving out its raw bits / its sign where the segment's carry holds them
 * (lsmix_carry.h: lsx_carry_raw, lsx_carry_sign).  b: the pixel's sign
 * base where the stream has the adaptive sign and top raw bit (the raw
 * bits then a binary symbol and a uniform one, the sign a binary symbol),
 * -1 where it has not (uniform raw bits and sign). */
int ctx_symbols(const ctx_model *cm, int ctx, int32_t e, int raw_carried, int sign_carried, int b, ctx_sym *out);

/* rANS with per-symbol precision, as the paper profile's byte-wise coder,
 * from the initial state x0 (AURP_RANS_L, or that plus a carry:
 * lsmix_carry.h). */
size_t ctx_rans_encode(const ctx_sym *sym, size_t n, uint32_t x0, uint8_t *out, size_t cap);

typedef struct {
    const uint8_t *in;
    size_t len, pos;
    uint32_t x;
} ctx_rans_dec;

int ctx_rans_dec_init(ctx_rans_dec *d, const uint8_t *in, size_t len);
/* Decodes one residual in context ctx; -1 when the stream is corrupt. */
int ctx_decode_residual(ctx_rans_dec *d, const ctx_model *cm, int ctx, int32_t *e);
/* The same while a segment's carry k is open (lsmix_carry.h). */
int ctx_decode_residual_carry(ctx_rans_dec *d, const ctx_model *cm, int ctx, lsx_carry_dec *k, int32_t *e);
/* The same with the adaptive sign and top raw bit, sign base b; k is the
 * open carry or NULL. */
int ctx_decode_residual_bin(ctx_rans_dec *d, const ctx_model *cm, int ctx, lsx_carry_dec *k, int b, int32_t *e);
/* The carry in the state a segment ended with (x = 2^23 + c); -1 where c
 * is not below 2^LSX_CARRY_BITS. */
int ctx_rans_dec_carry(const ctx_rans_dec *d, lsx_carry_dec *k);
/* 0 when the segment ended exactly where it should. */
int ctx_rans_dec_finish(const ctx_rans_dec *d);
/* 0 when the coder is back at the encoder's initial state: a segment's
 * last pixel decoded, its bytes are all read (the next segment's follow). */
int ctx_rans_dec_at_start_state(const ctx_rans_dec *d);

/* ---- the profile's codec (lsmix_codec.c) ---------------------------- */

#define LSX_HEADER 24
/* segments of 2^11 pixels: the GPU encoder codes them in parallel, each a
 * serial rANS chain on the frame's longest path; 2^12 cost 0.018 % less
 * (a segment's end, with the carry, about half a byte) for a chain twice
 * as long (research/README.md, round 28) */
#define LSX_SEG_LOG2 11
#define LSX_NCTX 12         /* activity contexts of the first candidate */
#define LSX_NIB 4           /* intensity classes the encoder aims for */
#define LSX_IOFF_PERMILLE 1 /* intensity offset: this quantile of the pixels */
#define LSX_FORGET 2        /* the LS training of predictor sets 0 and 1 */
#define LSX_NCTX_WIDE 16    /* the second activity-context count the encoder tries */
#define LSX_ROW_FORGET 1    /* the LS training of the row-member sets' second try (weighted in set 3) */
#define LSX_WRITE_SET 3     /* the row-member set the encoders write (2 or 3; the GPU encoder writes
                             * the same, gpu/lsmix_encoder.cu) */
#define LSX_RIDGE 12
#define LSX_PRIOR 1         /* new streams start the coder's counts from the prior table */
#define LSX_BG 1            /* new streams blend the BG member */
#define LSX_CASCADE 1       /* new streams try the cascade stage (3.2), kept where smaller */
#define LSX_CAS_WIDE 1      /* the encoder weighs the wide support in the rows above (header byte 23 bit 4) */
#define LSX_CARRY 1         /* new streams carry a segment's first uniform symbols in the state of the
                             * one before (header byte 23 bit 5; lsmix_carry.h) */
#define LSX_SIGN_MODEL 1    /* the encoder codes its winner with the adaptive sign and top raw bit where
                             * their estimate wins (header byte 23 bit 6; lsmix_sign.h) */
#define LSX_SEG_LENGTHS 0   /* new streams leave out the segments' lengths (3.1: a decoder finds each
                             * segment's end where its last pixel leaves the coder's initial state) */

/* What the stream header says (3.1) and where its segments are. */
typedef struct {
    lsx_params p;
    uint32_t W, H;
    int nctx, seg_log2;
    uint32_t thr[CTX_MAX];
    /* intensity classes: the token of max(0, pred - ioff) against the
     * increasing token bounds ibnd[0..nib-2]; context = activity * nib + class */
    int nib;
    int set; /* predictor set (3.2) */
    int prior; /* the coder's counts start from the prior table (3.3; header byte 23 bit 0) */
    int bg;    /* the blend's last member is BG (3.2; header byte 23 bit 1) */
    uint16_t ioff;
    uint8_t ibnd[CTX_MAX_IB];
    uint32_t nseg;
    int seg_lengths; /* the segments' lengths precede them (header byte 23 bit 3 clear) */
    int carry;       /* the carry of the segments (lsmix_carry.h; header byte 23 bit 5, only with bit 3) */
    int sgn;         /* the adaptive sign and top raw bit (lsmix_sign.h; header byte 23 bit 6) */
    const uint8_t *seg_lens, *segs; /* seg_lens: NULL without the lengths */
    size_t body_len;                /* the bytes of every segment together */
    /* the cascade stage (lsmix_cascade.h; header byte 23 bit 2) */
    int cas;
    int cas_wide; /* its support in the rows above (lsmix_cascade.h; header byte 23 bit 4) */
    int32_t cas_clip;
    int16_t cas_w[LSX_CAS_NL_MAX], cas_wrev[LSX_CAS_NR];
} lsx_view;

/* The encoder's DP context candidate (lsmix_thresholds.c): hist holds the
 * pixel counts of [lsx_thr_bin(a16)][intensity token][residual token]
 * (lsx_thr_cell; lsx_thr_histogram counts them over a frame's act16,
 * intensity tokens and residuals); lsx_dp_contexts sets v's nctx, thr, nib
 * and ibnd from it (v's intensity classes are the start; at most nctx x nib
 * contexts) on up to `threads` threads (the same contexts for any count);
 * nonzero on failure. */
#define LSX_DP_NCTX 12      /* activity contexts of the DP candidate */
#define LSX_DP_LEARN_BITS 8 /* its charge per token a context uses */
#define LSX_THR_CELLS ((size_t)LSX_TQ * CTX_TOKENS * CTX_TOKENS) /* the histogram's cells */

/* The encoder's context candidates (try_residuals; the GPU encoder replays
 * its choice): 0 full (LSX_NCTX x the equal-population intensity classes),
 * 1 wide (LSX_NCTX_WIDE x them), 2 activity (LSX_NCTX x 1), 3 single (1 x 1),
 * 4 the DP's.  Candidate k is coded when bit k of want is set, except the
 * single context at 2^16 pixels and more, the DP candidate where its DP
 * failed, and a candidate 1..3 whose contexts repeat those of k - 1. */
#define LSX_NCAND 5
#define LSX_CAND_DP 4
static inline int lsx_candidate_tried(int k, unsigned want, uint64_t pixels, int have_dp, int repeats_previous)
{
    if (!(want >> k & 1)) return 0;
    if (k == 3 && pixels >= ((uint64_t)1 << 16)) return 0;
    if (k == LSX_CAND_DP) return have_dp;
    return !(k > 0 && repeats_previous);
}
void lsx_thr_histogram(const uint32_t *act, const uint8_t *itok, const int32_t *res,
                       uint64_t pixels, uint32_t *hist);
int lsx_dp_contexts(const uint32_t *hist, int nctx, int nib, int threads, lsx_view *v);

/* The encoder's fit of the cascade stage (lsmix_cascade.c).  The plan:
 * the no offsets (dm, dn) whose correlations of the clipped residuals,
 *   R[k] = sum over rows m >= max(dm, 1), columns n with n - dn in the row,
 *          of e[m][n] e[m - dm][n - dn],
 * the normal equations of both supports read (the narrow support's
 * offsets first: 391 of 1051); sup[wide]: the support's nl lags, pair[a *
 * nl + b] the offset of lags a and b, lag[a] that of lag a and the target.
 * lsx_cas_clip: the clip from the histogram of min(|e1|, 65535) over the
 * count pixels of rows 1..; lsx_cas_choose: the weights of both supports
 * from R, and v's stage (cas, cas_wide, cas_clip, cas_w, cas_wrev) with the
 * support whose estimated code length (residual energy in `pixels`, W (H -
 * 1), and the header's weights) is smaller; 0 where neither system is
 * solvable: no stage; lsx_cas_fit: all of it on a frame's e1 (ec: the
 * clipped residuals, out).  lsx_cas_correlation: R of one offset (the
 * definition); lsx_cas_correlations: R of every offset of the plan on up to
 * `threads` threads, e clipped to +-clip (the same integers; nonzero when
 * out of memory). */
#define LSX_CAS_MAXO 1152 /* offsets of the wide support: 1051 */
typedef struct {
    int no;
    int dm[LSX_CAS_MAXO], dn[LSX_CAS_MAXO];
    struct {
        int nl;
        uint16_t pair[LSX_CAS_NL_MAX * LSX_CAS_NL_MAX]; /* [a nl + b]: the offset lag_b - lag_a */
        int lag[LSX_CAS_NL_MAX];
    } sup[2];
} lsx_cas_plan;
void lsx_cas_plan_make(lsx_cas_plan *pl);
int32_t lsx_cas_clip(const uint32_t *abs_hist, uint64_t count);
int64_t lsx_cas_correlation(const int16_t *ec, uint32_t W, uint32_t H, int dm, int dn);
int lsx_cas_correlations(const lsx_cas_plan *pl, const int16_t *ec, uint32_t W, uint32_t H, int32_t clip,
                         int threads, int64_t *R);
int lsx_cas_choose(const lsx_cas_plan *pl, const int64_t *R, int32_t clip, uint64_t pixels, lsx_view *v);
/* lsx_cas_choose in two steps, for an encoder that starts its trial on the
 * wide support's stage before the choice (the wide support won on every
 * frame measured): lsx_cas_solve, the wide support's stage into *wide (v
 * with its stage; wide->cas 0 where the system is not solvable);
 * lsx_cas_decide, the narrow support's stage and the choice between it and
 * *wide into v, as lsx_cas_choose.  (The GPU encoder fits the wide stage
 * on the device, lsmix_cascade_cg.h, and makes *wide by
 * lsx_cas_set_stage.)  lsx_cas_set_stage: v's stage from the weights w of
 * support `wide`. */
void lsx_cas_solve(const lsx_cas_plan *pl, const int64_t *R, int32_t clip, const lsx_view *v, lsx_view *wide);
int lsx_cas_decide(const lsx_cas_plan *pl, const int64_t *R, int32_t clip, uint64_t pixels, const lsx_view *wide,
                   lsx_view *v);
void lsx_cas_set_stage(const int16_t *w, int wide, int32_t clip, lsx_view *v);
int lsx_cas_fit(lsx_view *v, const int32_t *e1, int16_t *ec, int threads);

/* The header's bytes before the cascade block (24 and the thresholds) and,
 * after it, the segments' lengths where the stream has them. */
size_t lsx_header_len(int nctx, uint32_t nseg, int seg_lengths);
/* The bytes of the cascade block after the thresholds (0 without the stage). */
size_t lsx_cas_bytes(const lsx_view *v);
/* The 24-byte header, the thresholds, the cascade block and, where the
 * stream has them, the segments' lengths seg_len[0..nseg-1]; returns
 * where the segments start (stream_header_len). */
size_t lsx_write_header(uint8_t *h, const lsx_view *v, const uint32_t *seg_len);

aurp_status lsx_image_encode(const uint16_t *u, uint32_t W, uint32_t H, const aurp_params *p,
                             int threads, uint8_t *out, size_t cap, size_t *out_len,
                             aurp_error *err);
/* lsx_image_encode with the row-member set row_set (2 or 3) in place of
 * LSX_WRITE_SET and sign_model in place of LSX_SIGN_MODEL (the adaptive
 * sign and top raw bit: 0 never, 1 where their estimate wins, 2 always):
 * the tests write every form that decoders read. */
aurp_status lsx_image_encode_set(const uint16_t *u, uint32_t W, uint32_t H, const aurp_params *p, int row_set,
                                 int sign_model, int threads, uint8_t *out, size_t cap, size_t *out_len,
                                 aurp_error *err);
aurp_status lsx_image_decode(const uint8_t *in, size_t in_len, uint32_t W, uint32_t H,
                             int threads, uint16_t *u, aurp_error *err);

#ifdef __cplusplus
}
#endif

#endif

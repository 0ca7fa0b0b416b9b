/* The lsmix profile's GPU encoder: host-side orchestration (lsmix_encoder.h).
 *
 * The C encoder (core/lsmix_codec.c lsx_image_encode) codes up to three
 * pipelines, each with up to four context candidates, and keeps the
 * smallest stream in a fixed order of comparisons:
 *   pipeline 0  predictor set 0 on the LS of forgetting 2, every candidate;
 *   pipeline 1  set LSX_WRITE_SET (2 or 3) on the same LS, the candidate
 *               that won pipeline 0;
 *   pipeline 2  that set on the LS of forgetting 1 (weighted in set 3),
 *               every candidate, only if pipeline 1 won.
 * The C encoder judges a candidate by its size estimate (model_pass: the
 * bits of its tokens under its adaptive tables, exact integers).  The GPU
 * runs the pipelines at once (a stream each: pipeline 2 and its LS only
 * where the last frame needed them, else after the choice asks, in
 * run_pipe2), finds each one's DP candidate on the device
 * (lsmix_dp_kernels.cu), builds the model of every candidate of every
 * pipeline at once with its estimate (each is independent work, and the
 * device has the room), brings back the estimates, and replays the same
 * comparisons on them (try_pipe), so it picks the stream the CPU picks;
 * then it codes the winner alone and brings back its segments. */
#include "lsmix_encoder.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lsmix_kernels.h"

#define NPIPE 3
/* the row-member set of pipelines 1 and 2, the C encoder's */
#define ROW_SET LSX_WRITE_SET
static_assert(ROW_SET == 2 || ROW_SET == 3, "the GPU encoder writes set 2 or set 3");
#define NKIND LSX_NCAND /* the C encoder's context candidates (lsx_candidate_tried) */
#define KIND_DP LSX_CAND_DP

static const int kind_nctx[NKIND] = {LSX_NCTX, LSX_NCTX_WIDE, LSX_NCTX, 1, LSX_DP_NCTX};
static const int kind_classes[NKIND] = {1, 1, 0, 0, 2};

/* A pipeline's candidates: kinds 0..nk-1 (nk = 3, or 4 below 2^16 pixels),
 * then the DP candidate, at position nk. */
static int kind_at(int nk, int pos) { return pos < nk ? pos : KIND_DP; }

struct lsx_gpu_state {
    size_t px_cap;
    uint32_t nint_cap, nseg_cap;
    /* planes */
    int32_t *cma, *cmb;
    double *ls[2], *af, *rv, *al[2]; /* [0]: forgetting LSX_FORGET, [1]: LSX_ROW_FORGET */
    int32_t *err, *colerr, *emin[NPIPE]; /* err, colerr: pipeline 0's column error levels' inputs and levels */
    int32_t *bg_c, *bg_s; /* BG column levels and scales before each row */
    int64_t *bg_w;
    double *bg;
    double *rl[2]; /* sets 2 and 3: the RL members */
    double *lg;    /* set 3: LG */
    int32_t *br_l, *br_s, *br_o; /* set 3: BR's column levels and scales before each row, row offsets */
    uint16_t *rowmin; /* set 3's weighted LS training: each row's least pixel */
    uint32_t *thr_hist; /* [NPIPE][LSX_THR_CELLS] the DP candidate's histograms */
    void *dp_scratch;
    int *dp_ok;         /* [NPIPE + 1] the DP candidate exists (the last: the cascade's) */
    /* the cascade trial (core/lsmix_cascade.c): its pipeline (index NPIPE
     * of pipes), the winner's e1 clipped, the correlations, the weights */
    int32_t *cas_res;
    uint32_t *cas_act;
    uint8_t *cas_itok, *cas_classes;
    unsigned long long *cas_itok_hist;
    int16_t *cas_ec, *cas_w;
    int64_t *cas_R, *cas_Rd; /* the correlations; the dense sums they are picked from */
    uint32_t *cas_md;
    int *cas_dm, *cas_dn;
    uint16_t *cas_pair; /* the wide support's pair table and lags (the plan's), for lsx_gpu_cas_cg */
    int *cas_lag, *cas_ok;
    lsx_cas_plan *cas_plan; /* host, made once */
    lsx_gpu_cas_lags cas_lags; /* the plan's runs of lags (lsx_gpu_cas_setup, once) */
    int guess_pipe, guess_kind; /* the last frame's winner (-1: none): the trial starts on it early */
    int skip_p2; /* the last frame did not need pipeline 2: it runs only if the choice asks for it */
    int32_t *res[NPIPE];
    uint16_t *spre[NPIPE];  /* the adaptive sign's blend part (lsx_sign_pre) */
    uint8_t *sbase[NPIPE];  /* and the sign bases without the cascade */
    uint8_t *cas_sbase;     /* the cascade trial's sign bases */
    uint16_t *bin_hist, *bin_f0; /* the winner's binary contexts: counts and tables per interval */
    unsigned long long *bin_bits; /* [2] their estimate (lsx_gpu_coding.bin_bits) */
    uint32_t *act[NPIPE];
    uint8_t *itok[NPIPE];
    unsigned long long *itok_hist; /* [NPIPE][CTX_TOKENS] */
    uint8_t *info;                 /* [NPIPE][8] classes, then ioff (u16) at NPIPE * 8 */
    uint32_t *pxhist;
    lsx_gpu_pipe *pipes;
    lsx_gpu_cand *cands;
    int *cand_pipe;
    /* coding */
    uint8_t *ctx, *slots, *body;
    uint16_t *hist;
    uint32_t *table, *seg_len;
    unsigned long long *bits; /* [max_cand + 1] the candidates' size estimates (Q16 bits of the tokens) */
    int guess_cas;            /* the last frame's cascade trial won: the trial codes its candidate at once */
    int staged_nk; /* candidates per pipeline the device's pipes and cands hold; 0: none */
    /* kept across buffer regrowth: BG depends on the pixels alone, so it
     * runs on side[0] (RL, after BG's column pass, on side[1]) while the
     * LS stage runs on the caller's stream; the
     * pipelines are independent, so they run on the three streams at once,
     * the last frame's winner on side[0] (the cascade trial follows it) */
    struct {
        cudaStream_t side[2];
        cudaEvent_t fork, join, pipes_fork, pipe_done[2];
        cudaEvent_t bg_columns, join_rl; /* BG's column pass done; RL done (side[1]) */
        /* set 3: BR's row pass on set3[0], LG (after the LS stage:
         * ls_done) on set3[1]; join_set3[i]: stream i's done */
        cudaStream_t set3[2];
        cudaEvent_t ls_done, join_set3[2];
        cudaEvent_t dp_done;             /* the DP's contexts made (a trial of the DP kind takes them) */
        cudaEvent_t cas_fit;             /* the trial's R, median and device weights on the host */
    } sync;
    /* pinned host */
    uint8_t *h_stage;   /* pipes, cands, cand_pipe, as the device holds them */
    uint32_t *h_seg_len;
    unsigned long long *h_bits;
    unsigned long long *h_bin_bits; /* [2] bin_bits of the winner */
    int *h_dp_ok;
    uint8_t *h_info;
    uint8_t *h_cas; /* R, then md, the weights, the cascade pipeline's classes */
    uint8_t *h_body;
    size_t body_cap;
};

static void free_buffers(lsx_gpu_state *s)
{
    void *dev[] = {s->cma,    s->cmb,    s->ls[0],  s->ls[1],   s->af,   s->rv,        s->al[0],
                   s->al[1],  s->err,    s->emin[0], s->emin[1], s->emin[2], s->colerr,
                   s->res[0], s->res[1],  s->res[2],
                   s->act[0], s->act[1], s->act[2], s->itok[0], s->itok[1], s->itok[2], s->itok_hist,
                   s->info,   s->pxhist, s->pipes,  s->cands,   s->cand_pipe, s->ctx,   s->slots,
                   s->body,   s->hist,   s->table,  s->seg_len, s->bg_c,    s->bg_s,      s->bg_w, s->bg,
                   s->rl[0],  s->rl[1],  s->lg,     s->br_l,   s->br_s,  s->br_o,     s->rowmin,
                   s->thr_hist, s->dp_scratch, s->dp_ok, s->cas_res, s->cas_act,
                   s->cas_itok, s->cas_classes, s->cas_itok_hist, s->cas_ec, s->cas_w, s->cas_R, s->cas_Rd, s->cas_md,
                   s->cas_dm, s->cas_dn, s->cas_pair, s->cas_lag, s->cas_ok, s->bits,
                   s->spre[0], s->spre[1], s->spre[2], s->sbase[0], s->sbase[1], s->sbase[2], s->cas_sbase,
                   s->bin_hist, s->bin_f0, s->bin_bits};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++) cudaFree(dev[i]);
    cudaFreeHost(s->h_stage);
    cudaFreeHost(s->h_seg_len);
    cudaFreeHost(s->h_bits);
    cudaFreeHost(s->h_bin_bits);
    cudaFreeHost(s->h_dp_ok);
    cudaFreeHost(s->h_info);
    cudaFreeHost(s->h_cas);
    free(s->cas_plan);
    cudaFreeHost(s->h_body);
    const auto sync = s->sync;
    memset(s, 0, sizeof *s);
    s->sync = sync;
    s->guess_pipe = -1;
}

void lsx_gpu_free(lsx_gpu_state *s)
{
    if (!s) return;
    free_buffers(s);
    for (int i = 0; i < 2; i++) {
        if (s->sync.side[i]) cudaStreamDestroy(s->sync.side[i]);
        if (s->sync.pipe_done[i]) cudaEventDestroy(s->sync.pipe_done[i]);
    }
    if (s->sync.fork) cudaEventDestroy(s->sync.fork);
    if (s->sync.join) cudaEventDestroy(s->sync.join);
    if (s->sync.bg_columns) cudaEventDestroy(s->sync.bg_columns);
    if (s->sync.join_rl) cudaEventDestroy(s->sync.join_rl);
    for (int i = 0; i < 2; i++) {
        if (s->sync.set3[i]) cudaStreamDestroy(s->sync.set3[i]);
        if (s->sync.join_set3[i]) cudaEventDestroy(s->sync.join_set3[i]);
    }
    if (s->sync.ls_done) cudaEventDestroy(s->sync.ls_done);
    if (s->sync.pipes_fork) cudaEventDestroy(s->sync.pipes_fork);
    if (s->sync.dp_done) cudaEventDestroy(s->sync.dp_done);
    if (s->sync.cas_fit) cudaEventDestroy(s->sync.cas_fit);
    free(s);
}

static uint32_t nint_of(uint64_t px) { return lsx_table_index(px - 1) + 1; }
static uint32_t nseg_of(uint64_t px) { return (uint32_t)((px + ((uint64_t)1 << LSX_SEG_LOG2) - 1) >> LSX_SEG_LOG2); }
static const size_t seg_slot = 4 + 4 * ((size_t)1 << LSX_SEG_LOG2); /* the C encoder's segment capacity */
static const int max_cand = NPIPE * NKIND; /* and one more: the cascade's, at index max_cand */
#define H_CAS_MD (8 * LSX_CAS_MAXO)
#define H_CAS_W (H_CAS_MD + 8)
#define H_CAS_CLASSES (H_CAS_W + 2 * LSX_CAS_NL_MAX)
#define H_CAS_DEV_W (H_CAS_CLASSES + 8)              /* the device's wide weights (lsx_gpu_cas_cg) */
#define H_CAS_DEV_OK (H_CAS_DEV_W + 2 * LSX_CAS_NL_MAX) /* and whether it solved the system */
#define H_CAS_BYTES (H_CAS_DEV_OK + 8)

/* Buffers for frames up to px pixels (kept, grown when a larger frame comes). */
static cudaError_t reserve(lsx_gpu_state *s, size_t px)
{
    if (px <= s->px_cap) return cudaSuccess;
    free_buffers(s);
    const uint32_t nint = nint_of(px), nseg = nseg_of(px);
    const size_t tab = (size_t)nint * CTX_MAX * CTX_TOKENS;
    cudaError_t rc = cudaSuccess;
#define ALLOC(ptr, bytes) \
    if (rc == cudaSuccess) rc = cudaMalloc((void **)&(ptr), (bytes))
    ALLOC(s->cma, 4 * px);
    ALLOC(s->cmb, 4 * px);
    for (int i = 0; i < 2; i++) {
        ALLOC(s->ls[i], 8 * px);
        ALLOC(s->al[i], 8 * px);
    }
    ALLOC(s->af, 8 * px);
    ALLOC(s->rv, 8 * px);
    for (int i = 0; i < NPIPE; i++) ALLOC(s->emin[i], 4 * px);
    ALLOC(s->err, 4 * LSX_NPRED * px);
    ALLOC(s->colerr, 4 * LSX_NPRED * px);
    ALLOC(s->bg_c, 4 * px);
    ALLOC(s->bg_s, 4 * px);
    ALLOC(s->bg_w, 8 * px);
    ALLOC(s->bg, 8 * px);
    ALLOC(s->rl[0], 8 * px);
    ALLOC(s->rl[1], 8 * px);
    if (ROW_SET == 3) {
        ALLOC(s->lg, 8 * px);
        ALLOC(s->br_l, 4 * px);
        ALLOC(s->br_s, 4 * px);
        ALLOC(s->br_o, 4 * px);
        ALLOC(s->rowmin, 2 * px); /* (a word a row: H <= px) */
    }
    ALLOC(s->thr_hist, sizeof(uint32_t) * NPIPE * LSX_THR_CELLS);
    ALLOC(s->dp_scratch, lsx_gpu_dp_scratch_bytes(NPIPE));
    ALLOC(s->dp_ok, sizeof(int) * (NPIPE + 1));
    ALLOC(s->cas_res, 4 * px);
    ALLOC(s->cas_act, 4 * px);
    ALLOC(s->cas_itok, px);
    ALLOC(s->cas_classes, 8);
    ALLOC(s->cas_itok_hist, sizeof(unsigned long long) * CTX_TOKENS);
    ALLOC(s->cas_ec, 2 * px);
    ALLOC(s->cas_w, 2 * LSX_CAS_NL_MAX);
    ALLOC(s->cas_R, 8 * LSX_CAS_MAXO);
    ALLOC(s->cas_Rd, 8 * LSX_GPU_CAS_RD);
    ALLOC(s->cas_md, 4);
    ALLOC(s->cas_dm, sizeof(int) * LSX_CAS_MAXO);
    ALLOC(s->cas_dn, sizeof(int) * LSX_CAS_MAXO);
    ALLOC(s->cas_pair, sizeof(uint16_t) * LSX_CAS_NL_MAX * LSX_CAS_NL_MAX);
    ALLOC(s->cas_lag, sizeof(int) * LSX_CAS_NL_MAX);
    ALLOC(s->cas_ok, sizeof(int));
    ALLOC(s->cas_sbase, px);
    ALLOC(s->bin_hist, 2 * (size_t)nint * 2 * LSX_GPU_BIN_CTX);
    ALLOC(s->bin_f0, 2 * (size_t)nint * LSX_GPU_BIN_CTX);
    ALLOC(s->bin_bits, 2 * sizeof(unsigned long long));
    for (int i = 0; i < NPIPE; i++) {
        ALLOC(s->spre[i], 2 * px);
        ALLOC(s->sbase[i], px);
        ALLOC(s->res[i], 4 * px);
        ALLOC(s->act[i], 4 * px);
        ALLOC(s->itok[i], px);
    }
    ALLOC(s->itok_hist, sizeof(unsigned long long) * NPIPE * CTX_TOKENS);
    ALLOC(s->info, NPIPE * 8 + 8);
    ALLOC(s->pxhist, 4 * 65536);
    ALLOC(s->pipes, sizeof(lsx_gpu_pipe) * (NPIPE + 1));
    ALLOC(s->cands, sizeof(lsx_gpu_cand) * (max_cand + 1));
    ALLOC(s->cand_pipe, sizeof(int) * (max_cand + 1));
    ALLOC(s->ctx, (size_t)(max_cand + 1) * px);
    ALLOC(s->slots, (size_t)(max_cand + 1) * nseg * seg_slot);
    s->body_cap = (size_t)nseg * seg_slot;
    ALLOC(s->body, s->body_cap);
    ALLOC(s->hist, 2 * (size_t)(max_cand + 1) * tab);
    ALLOC(s->table, 4 * (size_t)(max_cand + 1) * tab);
    ALLOC(s->seg_len, 4 * (size_t)(max_cand + 1) * nseg);
    ALLOC(s->bits, sizeof(unsigned long long) * (max_cand + 1));
#undef ALLOC
    for (int i = 0; i < 2; i++) {
        /* side[0] carries the cascade trial, the frame's longest path: its
         * blocks go first where both streams have some waiting */
        int least = 0, greatest = 0;
        if (rc == cudaSuccess && i == 0) rc = cudaDeviceGetStreamPriorityRange(&least, &greatest);
        if (rc == cudaSuccess && !s->sync.side[i])
            rc = cudaStreamCreateWithPriority(&s->sync.side[i], cudaStreamNonBlocking, i == 0 ? greatest : least);
        if (rc == cudaSuccess && !s->sync.pipe_done[i])
            rc = cudaEventCreateWithFlags(&s->sync.pipe_done[i], cudaEventDisableTiming);
    }
    if (rc == cudaSuccess && !s->sync.fork) rc = cudaEventCreateWithFlags(&s->sync.fork, cudaEventDisableTiming);
    if (rc == cudaSuccess && !s->sync.join) rc = cudaEventCreateWithFlags(&s->sync.join, cudaEventDisableTiming);
    if (rc == cudaSuccess && !s->sync.bg_columns)
        rc = cudaEventCreateWithFlags(&s->sync.bg_columns, cudaEventDisableTiming);
    if (rc == cudaSuccess && !s->sync.join_rl) rc = cudaEventCreateWithFlags(&s->sync.join_rl, cudaEventDisableTiming);
    for (int i = 0; i < 2 && ROW_SET == 3; i++) {
        if (rc == cudaSuccess && !s->sync.set3[i])
            rc = cudaStreamCreateWithFlags(&s->sync.set3[i], cudaStreamNonBlocking);
        if (rc == cudaSuccess && !s->sync.join_set3[i])
            rc = cudaEventCreateWithFlags(&s->sync.join_set3[i], cudaEventDisableTiming);
    }
    if (ROW_SET == 3 && rc == cudaSuccess && !s->sync.ls_done)
        rc = cudaEventCreateWithFlags(&s->sync.ls_done, cudaEventDisableTiming);
    if (rc == cudaSuccess && !s->sync.pipes_fork)
        rc = cudaEventCreateWithFlags(&s->sync.pipes_fork, cudaEventDisableTiming);
    if (rc == cudaSuccess && !s->sync.dp_done) rc = cudaEventCreateWithFlags(&s->sync.dp_done, cudaEventDisableTiming);
    if (rc == cudaSuccess && !s->sync.cas_fit) rc = cudaEventCreateWithFlags(&s->sync.cas_fit, cudaEventDisableTiming);
    if (rc == cudaSuccess) rc = lsx_gpu_init_tables(0);
    if (rc == cudaSuccess) rc = cudaDeviceSynchronize();
    if (rc == cudaSuccess) rc = cudaHostAlloc((void **)&s->h_stage, 65536, cudaHostAllocPortable);
    if (rc == cudaSuccess)
        rc = cudaHostAlloc((void **)&s->h_seg_len, 4 * (size_t)(max_cand + 2) * nseg, cudaHostAllocPortable);
    if (rc == cudaSuccess)
        rc = cudaHostAlloc((void **)&s->h_bin_bits, 2 * sizeof(unsigned long long), cudaHostAllocPortable);
    if (rc == cudaSuccess)
        rc = cudaHostAlloc((void **)&s->h_bits, sizeof(unsigned long long) * (max_cand + 1), cudaHostAllocPortable);
    if (rc == cudaSuccess) rc = cudaHostAlloc((void **)&s->h_cas, H_CAS_BYTES, cudaHostAllocPortable);
    if (rc == cudaSuccess && !(s->cas_plan = (lsx_cas_plan *)malloc(sizeof *s->cas_plan))) rc = cudaErrorMemoryAllocation;
    if (rc == cudaSuccess) {
        lsx_cas_plan_make(s->cas_plan);
        rc = lsx_gpu_cas_setup(s->cas_plan, &s->cas_lags);
        if (rc == cudaSuccess)
            rc = cudaMemcpy(s->cas_dm, s->cas_plan->dm, sizeof(int) * s->cas_plan->no, cudaMemcpyHostToDevice);
        if (rc == cudaSuccess)
            rc = cudaMemcpy(s->cas_dn, s->cas_plan->dn, sizeof(int) * s->cas_plan->no, cudaMemcpyHostToDevice);
        const int nw = s->cas_plan->sup[1].nl;
        if (rc == cudaSuccess)
            rc = cudaMemcpy(s->cas_pair, s->cas_plan->sup[1].pair, sizeof(uint16_t) * nw * nw, cudaMemcpyHostToDevice);
        if (rc == cudaSuccess)
            rc = cudaMemcpy(s->cas_lag, s->cas_plan->sup[1].lag, sizeof(int) * nw, cudaMemcpyHostToDevice);
    }
    if (rc == cudaSuccess) rc = cudaHostAlloc((void **)&s->h_info, NPIPE * 8 + 8, cudaHostAllocPortable);
    if (rc == cudaSuccess) rc = cudaHostAlloc((void **)&s->h_dp_ok, sizeof(int) * (NPIPE + 1), cudaHostAllocPortable);
    if (rc == cudaSuccess) rc = cudaHostAlloc((void **)&s->h_body, s->body_cap, cudaHostAllocPortable);
    if (rc != cudaSuccess) {
        free_buffers(s);
        return rc;
    }
    s->px_cap = px;
    s->nint_cap = nint;
    s->nseg_cap = nseg;
    return cudaSuccess;
}

/* ---- the C encoder's choice, replayed on the candidates' estimates ---------- */

typedef struct {
    uint64_t px;      /* the frame's pixels */
    int nib[NPIPE];   /* each pipeline's intensity classes */
    int have_dp[NPIPE]; /* its DP candidate exists (lsx_dp_contexts succeeded) */
    uint64_t est[NPIPE * NKIND]; /* model_pass's estimate */
} choice_in;

static int cand_nib(const choice_in *in, int pipe, int k) { return kind_classes[k] == 1 ? in->nib[pipe] : 1; }

/* try_candidates of lsmix_codec.c on one pipeline. */
static void try_pipe(const choice_in *in, int pipe, unsigned want, uint64_t *best, int *choice, unsigned *mask)
{
    *mask = 0;
    for (int k = 0; k < NKIND; k++) {
        const int repeats =
            k > 0 && cand_nib(in, pipe, k) == cand_nib(in, pipe, k - 1) && kind_nctx[k] == kind_nctx[k - 1];
        if (!lsx_candidate_tried(k, want, in->px, in->have_dp[pipe], repeats)) continue;
        const int c = pipe * NKIND + k;
        if (*best != 0 && in->est[c] >= *best) continue;
        *best = in->est[c];
        *choice = c;
        *mask = 1u << k;
    }
}

/* ---- the cascade trial (try_cascade of lsmix_codec.c) ------------------------ */

/* The coding of candidates c .. c + n - 1 (the trial's: the spare slot
 * max_cand). */
static lsx_gpu_coding cands_coding(const lsx_gpu_state *s, uint32_t W, uint32_t H, uint32_t nint, uint32_t nseg,
                                   int c, int n)
{
    const uint64_t px = (uint64_t)W * H;
    return (lsx_gpu_coding){W, H, px, nint, nseg, n, LSX_PRIOR, s->cands + c, s->pipes,
                            s->cand_pipe + c, s->ctx + (size_t)c * px,
                            s->hist + (size_t)c * nint * CTX_MAX * CTX_TOKENS,
                            s->table + (size_t)c * nint * CTX_MAX * CTX_TOKENS,
                            s->slots + (size_t)c * nseg * seg_slot, seg_slot,
                            s->seg_len + (size_t)c * nseg, s->bits + c, s->bin_hist, s->bin_f0, NULL};
}

/* The winner cw (one candidate) coded as try_sign_model codes it, on
 * stream on: its binary contexts and their estimate, then cw coded with
 * the adaptive sign and top raw bit into candidate spare's slots (*cs) or
 * without into its own, as the estimate chose (both kernels are launched;
 * each reads the choice on the device, and lsx_gpu_gather_signed gathers
 * the one that ran). */
static cudaError_t code_winner(lsx_gpu_state *s, const lsx_gpu_coding *cw, int spare, lsx_gpu_coding *cs,
                               cudaStream_t on)
{
    *cs = *cw;
    if (!LSX_SIGN_MODEL) return lsx_gpu_rans(cw, on);
    cs->slots = s->slots + (size_t)spare * cw->nseg * seg_slot;
    cs->seg_len = s->seg_len + (size_t)spare * cw->nseg;
    cs->bin_bits = s->bin_bits;
    lsx_gpu_coding cu = *cw;
    cu.bin_bits = s->bin_bits;
    cudaError_t rc = lsx_gpu_bin_tables(cs, on);
    if (rc == cudaSuccess) rc = lsx_gpu_rans(&cu, on);
    if (rc == cudaSuccess) rc = lsx_gpu_rans_sgn(cs, on);
    return rc;
}

/* Part 1 on stream on: pipeline pipe's e1 clipped, the correlations and
 * the median, to the host. */
static cudaError_t trial_sums(lsx_gpu_state *s, uint32_t W, uint32_t H, int pipe, cudaStream_t on)
{
    cudaError_t rc = lsx_gpu_cas_sums(s->res[pipe], W, H, s->pxhist, s->cas_md, s->cas_ec, &s->cas_lags,
                                      s->cas_plan->no, s->cas_dm, s->cas_dn, s->cas_Rd, s->cas_R, on);
    if (rc == cudaSuccess)
        rc = cudaMemcpyAsync(s->h_cas, s->cas_R, 8 * (size_t)s->cas_plan->no, cudaMemcpyDeviceToHost, on);
    if (rc == cudaSuccess) rc = cudaMemcpyAsync(s->h_cas + H_CAS_MD, s->cas_md, 4, cudaMemcpyDeviceToHost, on);
    return rc;
}

/* The trial's device work on stream on, with the stage vc: the final
 * prediction, the contexts of kind (of the DP kind: the pipeline's DP
 * candidate's, candidate dp_cand, as try_candidates takes them) and the
 * model, the estimate and contexts to the host; where code, the rANS
 * segments too (the trial is expected to win).  vc NULL: the wide stage
 * whose weights lsx_gpu_cas_cg left in cas_w. */
static cudaError_t trial_launch(lsx_gpu_state *s, const uint16_t *x, uint32_t W, uint32_t H, uint32_t nint,
                                uint32_t nseg, int pipe, int kind, int dp_cand, const uint16_t *ioff, int code,
                                const lsx_view *vc, cudaStream_t on)
{
    lsx_gpu_pipe *hp = (lsx_gpu_pipe *)s->h_stage;
    lsx_gpu_cand *hk = (lsx_gpu_cand *)(s->h_stage + sizeof(lsx_gpu_pipe) * (NPIPE + 1)) + max_cand;
    if (vc) memcpy(s->h_cas + H_CAS_W, vc->cas_w, 2 * LSX_CAS_NL_MAX);
    lsx_gpu_pipe *pc = &hp[NPIPE];
    *pc = (lsx_gpu_pipe){pipe > 0 ? ROW_SET : 0, NULL, NULL, s->cas_res, s->emin[pipe], s->cas_act, s->cas_itok,
                         s->cas_itok_hist, s->cas_classes, s->spre[pipe], s->cas_sbase};
    /* the winner's context candidate on these residuals (try_candidates
     * with only its bit) */
    memset(hk, 0, sizeof *hk);
    hk->nctx = kind_nctx[kind];
    hk->use_classes = kind == KIND_DP ? 1 : kind_classes[kind];
    ctx_default_thresholds(hk->thr, hk->nctx);
    const lsx_gpu_coding cc = cands_coding(s, W, H, nint, nseg, max_cand, 1);
    cudaError_t rc =
        vc ? cudaMemcpyAsync(s->cas_w, s->h_cas + H_CAS_W, 2 * LSX_CAS_NL_MAX, cudaMemcpyHostToDevice, on) : cudaSuccess;
    if (rc == cudaSuccess) rc = cudaMemcpyAsync(s->pipes + NPIPE, pc, sizeof *pc, cudaMemcpyHostToDevice, on);
    if (rc == cudaSuccess)
        rc = lsx_gpu_cas_final(x, s->res[pipe], s->cas_ec, W, H, s->cas_w, vc ? vc->cas_wide : 1, ioff, pc, on);
    if (rc == cudaSuccess) rc = lsx_gpu_finish_pipe(W, H, pc, NULL, on);
    if (rc == cudaSuccess) rc = cudaMemcpyAsync(s->cands + max_cand, hk, sizeof *hk, cudaMemcpyHostToDevice, on);
    if (rc == cudaSuccess && kind == KIND_DP) { /* (the rest of the trial does not wait for the DP) */
        rc = cudaStreamWaitEvent(on, s->sync.dp_done, 0);
        if (rc == cudaSuccess)
            rc = cudaMemcpyAsync(s->cands + max_cand, s->cands + dp_cand, sizeof *hk, cudaMemcpyDeviceToDevice, on);
        if (rc == cudaSuccess)
            rc = cudaMemcpyAsync(s->dp_ok + NPIPE, s->dp_ok + pipe, sizeof(int), cudaMemcpyDeviceToDevice, on);
    }
    if (rc == cudaSuccess) rc = lsx_gpu_model(&cc, CTX_MAX, 1, on);
    if (rc == cudaSuccess)
        rc = cudaMemcpyAsync(s->h_bits + max_cand, cc.bits, sizeof *cc.bits, cudaMemcpyDeviceToHost, on);
    lsx_gpu_coding cs;
    if (rc == cudaSuccess && code) rc = code_winner(s, &cc, 0, &cs, on); /* (candidate 0 is not coded) */
    if (rc == cudaSuccess) rc = cudaMemcpyAsync(hk, s->cands + max_cand, sizeof *hk, cudaMemcpyDeviceToHost, on);
    if (rc == cudaSuccess)
        rc = cudaMemcpyAsync(s->h_dp_ok + NPIPE, s->dp_ok + NPIPE, sizeof(int), cudaMemcpyDeviceToHost, on);
    if (rc == cudaSuccess) rc = cudaMemcpyAsync(s->h_cas + H_CAS_CLASSES, s->cas_classes, 8, cudaMemcpyDeviceToHost, on);
    return rc;
}

/* Part 2, after part 1 (trial_sums) on the same stream, with no host in
 * between: the wide support's weights on the device (lsx_gpu_cas_cg, the
 * C encoder's lsx_cas_solve) and the trial's device work on them; the
 * weights and whether the system was solvable come back for the choice
 * (sync.cas_fit, with part 1's). */
static cudaError_t trial_fit(lsx_gpu_state *s, const uint16_t *x, uint32_t W, uint32_t H, uint32_t nint,
                             uint32_t nseg, int pipe, int kind, int dp_cand, const uint16_t *ioff, int code,
                             cudaStream_t on)
{
    const int nw = s->cas_plan->sup[1].nl;
    cudaError_t rc = lsx_gpu_cas_cg(s->cas_R, s->cas_plan->no, s->cas_md, s->cas_pair, s->cas_lag, nw, s->cas_w,
                                    s->cas_ok, on);
    if (rc == cudaSuccess)
        rc = cudaMemcpyAsync(s->h_cas + H_CAS_DEV_W, s->cas_w, 2 * (size_t)nw, cudaMemcpyDeviceToHost, on);
    if (rc == cudaSuccess) rc = cudaMemcpyAsync(s->h_cas + H_CAS_DEV_OK, s->cas_ok, sizeof(int), cudaMemcpyDeviceToHost, on);
    if (rc == cudaSuccess) rc = cudaEventRecord(s->sync.cas_fit, on);
    if (rc == cudaSuccess) rc = trial_launch(s, x, W, H, nint, nseg, pipe, kind, dp_cand, ioff, code, NULL, on);
    return rc;
}

/* Part 3, once trial_fit's results are on the host: the stage (vc;
 * *solved 0 where neither system is solvable: no trial).  The device's
 * trial is on the wide support, which wins on nearly every frame; where
 * the choice is the narrow one (lsx_cas_decide, the C encoder's), or the
 * device found the wide system not solvable, the trial runs again on the
 * chosen stage after the first is done. */
static cudaError_t trial_model(lsx_gpu_state *s, const uint16_t *x, uint32_t W, uint32_t H, uint32_t nint,
                               uint32_t nseg, int pipe, int kind, int dp_cand, const uint16_t *ioff, int code,
                               lsx_view *vc, int *solved, cudaStream_t on)
{
    memset(vc, 0, sizeof *vc);
    vc->W = W, vc->H = H;
    const int32_t clip = lsx_cas_clip_of_median(*(const uint32_t *)(s->h_cas + H_CAS_MD));
    const int64_t *R = (const int64_t *)s->h_cas;
    lsx_view wide = *vc;
    if (*(const int *)(s->h_cas + H_CAS_DEV_OK))
        lsx_cas_set_stage((const int16_t *)(s->h_cas + H_CAS_DEV_W), 1, clip, &wide);
    *solved = lsx_cas_decide(s->cas_plan, R, clip, (uint64_t)W * (H - 1), &wide, vc);
    if (!*solved || (wide.cas && vc->cas_wide)) return cudaSuccess;
    /* (the first trial's copies from the host's staging are done before it
     * is written again) */
    cudaError_t rc = cudaStreamSynchronize(on);
    if (rc == cudaSuccess) rc = trial_launch(s, x, W, H, nint, nseg, pipe, kind, dp_cand, ioff, code, vc, on);
    return rc;
}

/* ---- the pipelines --------------------------------------------------------- */

/* Pipeline i's residuals on stream on (its predictor set on its LS: 2 runs
 * on the LS of forgetting 1) and the histogram of its DP candidate
 * (try_residuals' candidate 4). */
static cudaError_t pipe_residuals(lsx_gpu_state *s, const uint16_t *x, uint32_t W, uint32_t H, int i,
                                  const uint16_t *ioff, cudaStream_t on)
{
    const int l = i == 2;
    lsx_gpu_planes pl = {W,        H,        x,        s->cma, s->cmb, s->ls[l], s->af, s->rv, s->al[l],
                         LSX_BG ? s->bg : NULL, {s->rl[0], s->rl[1]}, s->lg, s->br_l, s->br_o};
    const lsx_gpu_pipe *hp = (const lsx_gpu_pipe *)s->h_stage;
    return lsx_gpu_residuals(&pl, &hp[i], ioff, s->thr_hist + i * LSX_THR_CELLS, on);
}

/* Pipeline i's part of the choice from what came back to the host. */
static void pipe_estimates(const lsx_gpu_state *s, choice_in *in, int i, int nk, uint32_t nseg)
{
    const int nkc = nk + 1;
    const lsx_gpu_cand *hc = (const lsx_gpu_cand *)(s->h_stage + sizeof(lsx_gpu_pipe) * (NPIPE + 1));
    in->nib[i] = s->h_info[8 * i];
    in->have_dp[i] = s->h_dp_ok[i];
    for (int p = 0; p < nkc; p++) {
        const int c = i * nkc + p;
        const size_t head = lsx_header_len(hc[c].nctx, nseg, LSX_SEG_LENGTHS);
        in->est[i * NKIND + kind_at(nk, p)] = lsx_stream_estimate(s->h_bits[c], head, nseg);
    }
}

/* Pipeline 2 after the fact, where the last frame's choice left it out
 * and this one's asks for it: the LS of forgetting 1, in set 2 the row
 * fits again (their AL of that LS; set 3 has no AL), the pipeline, its DP
 * and models, and its part of the choice.  The trial on the side stream is let finish first: a rare
 * path (the choice of set changed between frames), kept apart from the
 * trial's work on this frame's planes without a case analysis. */
static cudaError_t run_pipe2(lsx_gpu_state *s, const uint16_t *x, uint32_t W, uint32_t H, const lsx_params *par,
                             const uint16_t *ioff, int nk, uint32_t nint, uint32_t nseg, choice_in *in,
                             cudaStream_t side, cudaStream_t st)
{
    const int nkc = nk + 1, c0 = 2 * nkc;
    lsx_gpu_cand *hc = (lsx_gpu_cand *)(s->h_stage + sizeof(lsx_gpu_pipe) * (NPIPE + 1));
    cudaError_t rc = cudaStreamSynchronize(side);
    /* every column here, also those a column split's bands would have
     * solved: they solved forgetting 2's training alone */
    if (rc == cudaSuccess)
        rc = lsx_gpu_ls_predict(x, s->cma, s->cmb, W, H, 0, W, par + 1, 1, s->ls + 1, W, 0, s->rowmin, st);
    if (rc == cudaSuccess && ROW_SET == 2)
        rc = lsx_gpu_row_fits(x, s->cmb, s->ls[0], s->ls[1], W, H, s->af, s->rv, s->al[0], s->al[1], st);
    if (rc == cudaSuccess) rc = pipe_residuals(s, x, W, H, 2, ioff, st);
    if (rc == cudaSuccess)
        rc = lsx_gpu_dp_contexts(s->thr_hist + 2 * LSX_THR_CELLS, s->info + 16, 1, s->cands + c0 + nk, nkc,
                                 s->dp_ok + 2, s->dp_scratch, st);
    const lsx_gpu_coding co = cands_coding(s, W, H, nint, nseg, c0, nkc);
    if (rc == cudaSuccess) rc = lsx_gpu_model(&co, CTX_MAX, 0, st);
    if (rc == cudaSuccess)
        rc = cudaMemcpyAsync(s->h_bits + c0, co.bits, sizeof *s->h_bits * (size_t)nkc, cudaMemcpyDeviceToHost, st);
    if (rc == cudaSuccess) rc = cudaMemcpyAsync(s->h_info + 16, s->info + 16, 8, cudaMemcpyDeviceToHost, st);
    if (rc == cudaSuccess)
        rc = cudaMemcpyAsync(hc + c0, s->cands + c0, sizeof *hc * (size_t)nkc, cudaMemcpyDeviceToHost, st);
    if (rc == cudaSuccess) rc = cudaMemcpyAsync(s->h_dp_ok + 2, s->dp_ok + 2, sizeof(int), cudaMemcpyDeviceToHost, st);
    if (rc == cudaSuccess) rc = cudaStreamSynchronize(st);
    if (rc == cudaSuccess) pipe_estimates(s, in, 2, nk, nseg);
    return rc;
}

/* ---- the encoder ------------------------------------------------------------- */

#define CK(call)                                                                               \
    do {                                                                                       \
        cudaError_t rc_ = (call);                                                              \
        if (rc_ != cudaSuccess)                                                                \
            return aurp_fail(err, AURP_ERR_BACKEND, "%s: lsmix: %s: %s", label, #call,        \
                             cudaGetErrorString(rc_));                                         \
    } while (0)
#define MARK(i) do { if (ev) CK(cudaEventRecord(ev[i], st)); } while (0)

aurp_status lsx_gpu_encode(lsx_gpu_state **state, const char *label, cudaStream_t st, cudaEvent_t *ev,
                           const uint16_t *x, uint32_t W, uint32_t H, int K, int M, uint32_t ls_c1,
                           lsx_gpu_bands_fn bands, void *bands_ctx, uint8_t *out, size_t cap, size_t *out_len,
                           aurp_error *err)
{
    *out_len = 0;
    if (!*state) {
        *state = (lsx_gpu_state *)calloc(1, sizeof **state);
        if (!*state) return aurp_fail(err, AURP_ERR_NOMEM, "%s: out of memory", label);
        (*state)->guess_pipe = -1;
    }
    lsx_gpu_state *s = *state;
    const uint64_t px = (uint64_t)W * H;
    CK(reserve(s, px));
    const uint32_t nint = nint_of(px), nseg = nseg_of(px);
    const int nk = px < ((uint64_t)1 << 16) ? 4 : 3;
    const lsx_params par[2] = {{K, M, LSX_FORGET, LSX_RIDGE, 0}, {K, M, LSX_ROW_FORGET, LSX_RIDGE, ROW_SET == 3}};

    /* the pipelines and candidates: they depend only on the buffers and on
     * nk, so they go to the device once per handle and frame size class */
    lsx_gpu_pipe *hp = (lsx_gpu_pipe *)s->h_stage;
    lsx_gpu_cand *hc = (lsx_gpu_cand *)(s->h_stage + sizeof(lsx_gpu_pipe) * (NPIPE + 1));
    int *hcp = (int *)(hc + max_cand + 1);
    const int nkc = nk + 1; /* and the DP candidate */
    /* pipeline 2 (set 2 on the LS of forgetting 1) counts only where
     * pipeline 1 beats pipeline 0; a station's consecutive frames mostly
     * agree, so where the last frame's did not, this one's LS of
     * forgetting 1 and pipeline 2 wait for the choice to ask for them
     * (run_pipe2; on device 0 alone, also where the frame is split). */
    const int npipe = s->skip_p2 ? 2 : NPIPE;
    const int nls = npipe == NPIPE ? 2 : 1; /* the LS trainings solved before the choice */
    const int ncand = npipe * nkc;
    MARK(1);
    if (s->staged_nk != nk) {
        for (int i = 0; i < NPIPE; i++) {
            hp[i] = (lsx_gpu_pipe){i > 0 ? ROW_SET : 0, i > 0 ? NULL : s->err, s->colerr,
                                   s->res[i],        s->emin[i],            s->act[i],
                                   s->itok[i],       s->itok_hist + (size_t)i * CTX_TOKENS,
                                   s->info + 8 * i,  s->spre[i],            s->sbase[i]};
            for (int p = 0; p < nkc; p++) { /* the DP candidate's contexts come per frame */
                const int k = kind_at(nk, p);
                lsx_gpu_cand *c = &hc[i * nkc + p];
                memset(c, 0, sizeof *c);
                c->nctx = kind_nctx[k];
                c->use_classes = k == KIND_DP ? 1 : kind_classes[k];
                ctx_default_thresholds(c->thr, c->nctx);
                hcp[i * nkc + p] = i;
            }
        }
        hcp[max_cand] = NPIPE; /* the cascade's candidate codes the cascade's pipeline */
        CK(cudaMemcpyAsync(s->pipes, hp, sizeof(lsx_gpu_pipe) * NPIPE, cudaMemcpyHostToDevice, st));
        CK(cudaMemcpyAsync(s->cands, hc, sizeof(lsx_gpu_cand) * NPIPE * nkc, cudaMemcpyHostToDevice, st));
        CK(cudaMemcpyAsync(s->cand_pipe, hcp, sizeof(int) * (max_cand + 1), cudaMemcpyHostToDevice, st));
        s->staged_nk = nk;
    }
    uint16_t *ioff = (uint16_t *)(s->info + NPIPE * 8);
    cudaStream_t side = s->sync.side[0];
    /* BG's column pass, then on side[0] its row pass and on side[1] RL,
     * which reads only the column pass's levels and scales: both beside
     * the LS stage, on the SMs its blocks leave.  The intensity offset
     * (read first by the pipelines) on side[1] too, off the LS stage's
     * path: the pixel histogram while the column means run, the quantile
     * (one block) after RL, when the LS blocks already hold their SMs. */
    cudaStream_t side_rl = s->sync.side[1];
    CK(cudaEventRecord(s->sync.fork, st));
    CK(cudaStreamWaitEvent(side, s->sync.fork, 0));
    CK(cudaStreamWaitEvent(side_rl, s->sync.fork, 0));
    /* (and set 3's BR column pass, in the same blocks) */
    CK(lsx_gpu_bg_columns(x, W, H, s->bg_c, s->bg_s, s->bg_w, s->br_l, s->br_s, side));
    CK(cudaEventRecord(s->sync.bg_columns, side));
    CK(lsx_gpu_pixel_histogram(x, px, s->pxhist, side_rl));
    CK(cudaStreamWaitEvent(side_rl, s->sync.bg_columns, 0));
    CK(lsx_gpu_bg_rows(x, W, H, s->bg_c, s->bg_s, s->bg_w, s->bg, side));
    CK(cudaEventRecord(s->sync.join, side));
    if (ROW_SET == 3) { /* BR's row pass: beside the LS stage like BG's, on a stream of its own */
        CK(cudaStreamWaitEvent(s->sync.set3[0], s->sync.bg_columns, 0));
        CK(lsx_gpu_br_rows(x, W, H, s->br_l, s->br_s, s->br_o, s->sync.set3[0]));
        CK(cudaEventRecord(s->sync.join_set3[0], s->sync.set3[0]));
    }
    CK(lsx_gpu_rl(x, W, H, s->bg_c, s->bg_s, s->rl[0], s->rl[1], side_rl));
    CK(lsx_gpu_ioff(s->pxhist, px, ioff, side_rl));
    CK(cudaEventRecord(s->sync.join_rl, side_rl));
    CK(lsx_gpu_column_means(x, W, H, s->cma, s->cmb, st));
    CK(lsx_gpu_ls_predict(x, s->cma, s->cmb, W, H, 0, ls_c1, par, nls, s->ls, W, 0, s->rowmin, st));
    if (bands) CK(bands(bands_ctx, s->ls, nls, st));
    MARK(2);
    if (ROW_SET == 3) {
        /* LG (on BG's column levels) beside the row fits: its warps (a
         * row each, FP64 work) wait for the LS stage (on the few SMs the
         * LS blocks leave it would take most of a millisecond), then fill
         * the SMs that the row fits leave (without AL, two groups of
         * blocks, not four); on a stream of its own, so that it does not
         * wait for BR's row pass either */
        CK(cudaEventRecord(s->sync.ls_done, st));
        CK(cudaStreamWaitEvent(s->sync.set3[1], s->sync.ls_done, 0));
        CK(cudaStreamWaitEvent(s->sync.set3[1], s->sync.bg_columns, 0));
        CK(lsx_gpu_lg(x, W, H, s->bg_c, s->bg_s, s->lg, s->sync.set3[1]));
        CK(cudaEventRecord(s->sync.join_set3[1], s->sync.set3[1]));
    }
    CK(lsx_gpu_row_fits(x, s->cmb, s->ls[0], s->ls[nls - 1], W, H, s->af, s->rv, ROW_SET == 2 ? s->al[0] : NULL,
                        s->al[1], st));
    CK(cudaStreamWaitEvent(st, s->sync.join, 0));
    CK(cudaStreamWaitEvent(st, s->sync.join_rl, 0));
    for (int i = 0; i < 2 && ROW_SET == 3; i++) CK(cudaStreamWaitEvent(st, s->sync.join_set3[i], 0));
    MARK(3);
    /* The cascade trial models the winner of every candidate below again
     * (try_cascade), which only their estimates name.  Consecutive frames
     * of a station mostly have the same winner, so the trial starts on the
     * last frame's winner as soon as that pipeline is done, beside the
     * other pipelines, the DP and the models, and where the last frame's
     * trial won it codes its candidate at once; if the winner turns out
     * other, it runs again after the choice.  The trial is the frame's
     * longest path, so its pipeline runs on side[0], the stream of the
     * greatest priority, and the trial after it there: with the guessed
     * pipeline on the caller's stream the trial waited for the pipeline
     * whose blocks went last (and for pipeline 1's, on side[0] before it). */
    const int spec = LSX_CASCADE && H >= 2 && s->guess_pipe >= 0 && s->guess_pipe < npipe;
    const int on_side0 = spec ? s->guess_pipe : 1; /* the pipeline on side[0] */
    CK(cudaEventRecord(s->sync.pipes_fork, st));
    /* the pipelines, each on a stream of its own, with the histogram of its
     * DP candidate (try_residuals' candidate 4) */
    for (int i = 0, on_caller = 0, next_side = 1; i < npipe; i++) {
        int k; /* pipeline i on side[k], or (k = -1) on the caller's stream: the first of the others */
        if (i == on_side0) k = 0;
        else if (!on_caller) k = -1, on_caller = 1;
        else k = next_side++;
        const cudaStream_t on = k < 0 ? st : s->sync.side[k];
        if (k >= 0) CK(cudaStreamWaitEvent(on, s->sync.pipes_fork, 0));
        CK(pipe_residuals(s, x, W, H, i, ioff, on));
        if (k >= 0) CK(cudaEventRecord(s->sync.pipe_done[k], on));
    }
    for (int k = 0; k < npipe - 1; k++) CK(cudaStreamWaitEvent(st, s->sync.pipe_done[k], 0));
    lsx_view vc;
    int solved = 0;
    if (spec) CK(trial_sums(s, W, H, s->guess_pipe, side));
    /* the DP (lsx_dp_contexts, from each pipeline's intensity classes)
     * into the DP candidates' contexts, on the device */
    CK(lsx_gpu_dp_contexts(s->thr_hist, s->info, npipe, s->cands + nk, nkc, s->dp_ok, s->dp_scratch, st));
    CK(cudaEventRecord(s->sync.dp_done, st));
    /* (after the DP's event: a trial of the DP kind waits for it) */
    if (spec)
        CK(trial_fit(s, x, W, H, nint, nseg, s->guess_pipe, s->guess_kind, s->guess_pipe * nkc + nk, ioff,
                     s->guess_cas, side));
    MARK(4);
    lsx_gpu_coding co = {W, H, px, nint, nseg, ncand, LSX_PRIOR, s->cands, s->pipes, s->cand_pipe, s->ctx, s->hist,
                         s->table, s->slots, seg_slot, s->seg_len, s->bits, NULL, NULL, NULL};
    CK(lsx_gpu_model(&co, CTX_MAX, 0, st)); /* the estimates: the winner's tables come after the choice */
    MARK(5);
    if (spec) /* the trial's sums and weights are back: the narrow support and the choice of stage */
        CK(cudaEventSynchronize(s->sync.cas_fit));
    if (spec)
        CK(trial_model(s, x, W, H, nint, nseg, s->guess_pipe, s->guess_kind, s->guess_pipe * nkc + nk, ioff,
                       s->guess_cas, &vc, &solved, side));
    /* what the choice and the header need: the estimates, each pipeline's
     * intensity classes and ioff, the DP candidates' contexts */
    CK(cudaMemcpyAsync(s->h_bits, s->bits, sizeof *s->h_bits * (size_t)ncand, cudaMemcpyDeviceToHost, st));
    CK(cudaMemcpyAsync(s->h_info, s->info, NPIPE * 8 + 8, cudaMemcpyDeviceToHost, st));
    CK(cudaMemcpyAsync(hc, s->cands, sizeof(lsx_gpu_cand) * ncand, cudaMemcpyDeviceToHost, st));
    CK(cudaMemcpyAsync(s->h_dp_ok, s->dp_ok, sizeof(int) * NPIPE, cudaMemcpyDeviceToHost, st)); /* not the trial's */
    CK(cudaStreamSynchronize(st));

    /* the C encoder's choice (try_pipe: pipeline 0, pipeline 1 with 0's
     * winning contexts, pipeline 2 where 1 won) */
    choice_in in;
    memset(&in, 0, sizeof in);
    in.px = px;
    for (int i = 0; i < npipe; i++) pipe_estimates(s, &in, i, nk, nseg);
    int pick = -1;
    uint64_t best_est = 0;
    unsigned mask;
    try_pipe(&in, 0, ~0u, &best_est, &pick, &mask);
    try_pipe(&in, 1, mask, &best_est, &pick, &mask);
    s->skip_p2 = mask == 0;
    if (mask != 0) {
        if (npipe < NPIPE) CK(run_pipe2(s, x, W, H, par, ioff, nk, nint, nseg, &in, side, st));
        try_pipe(&in, 2, ~0u, &best_est, &pick, &mask);
    }
    const int pipe = pick / NKIND, kind = pick % NKIND;
    int c = pipe * nkc + (kind == KIND_DP ? nk : kind);

    /* try_cascade: the winner again with the cascade stage fitted to its e1
     * (started above if the guess was right, else now) */
    uint64_t best = in.est[pick];
    int cas_won = 0, cas_coded = 0;
    if (LSX_CASCADE && H >= 2) {
        if (spec) CK(cudaStreamSynchronize(side));
        const int guessed = spec && s->guess_pipe == pipe && s->guess_kind == kind;
        if (!guessed) {
            CK(trial_sums(s, W, H, pipe, st));
            CK(trial_fit(s, x, W, H, nint, nseg, pipe, kind, pipe * nkc + nk, ioff, 0, st));
            CK(cudaEventSynchronize(s->sync.cas_fit));
            CK(trial_model(s, x, W, H, nint, nseg, pipe, kind, pipe * nkc + nk, ioff, 0, &vc, &solved, st));
            CK(cudaStreamSynchronize(st));
        }
        s->guess_pipe = pipe, s->guess_kind = kind;
        const lsx_gpu_cand *hk = &hc[max_cand];
        if (solved && (kind != KIND_DP || s->h_dp_ok[NPIPE])) {
            vc.nctx = hk->nctx;
            const size_t head = lsx_header_len(vc.nctx, nseg, LSX_SEG_LENGTHS) + lsx_cas_bytes(&vc);
            const uint64_t est = lsx_stream_estimate(s->h_bits[max_cand], head, nseg);
            if (est < best) best = est, cas_won = 1, c = max_cand, cas_coded = guessed && s->guess_cas;
        }
        s->guess_cas = cas_won;
    }
    MARK(6);

    /* the winner alone coded (unless the trial coded it already), its
     * segment lengths and its body to the host: the body's length is the
     * estimate's within a few bytes a segment, so that much (and a margin)
     * comes back with the lengths, the rest after them if it was more */
    const lsx_gpu_coding cw = cands_coding(s, W, H, nint, nseg, c, 1);
    if (c != max_cand) CK(lsx_gpu_tables(&cw, st)); /* (the trial's model made its tables) */
    /* try_sign_model (code_winner; unless the trial coded it already):
     * with the adaptive sign into the slots of a candidate that is not
     * coded (the trial's, or candidate 0's where the trial won), or
     * without; the choice comes back with the lengths */
    lsx_gpu_coding cs = cw;
    const int spare = c == max_cand ? 0 : max_cand; /* (the trial coded its own into candidate 0's) */
    if (!cas_coded) {
        CK(code_winner(s, &cw, spare, &cs, st));
    } else if (LSX_SIGN_MODEL) {
        cs.slots = s->slots + (size_t)spare * nseg * seg_slot;
        cs.seg_len = s->seg_len + (size_t)spare * nseg;
        cs.bin_bits = s->bin_bits;
    }
    if (LSX_SIGN_MODEL) {
        CK(cudaMemcpyAsync(s->h_seg_len + nseg, cs.seg_len, 4 * (size_t)nseg, cudaMemcpyDeviceToHost, st));
        CK(cudaMemcpyAsync(s->h_bin_bits, s->bin_bits, 2 * sizeof *s->h_bin_bits, cudaMemcpyDeviceToHost, st));
        CK(lsx_gpu_gather_signed(&cw, &cs, s->body, st));
    } else {
        CK(lsx_gpu_gather(&cw, 0, s->body, st));
    }
    CK(cudaMemcpyAsync(s->h_seg_len, cw.seg_len, 4 * (size_t)nseg, cudaMemcpyDeviceToHost, st));
    const size_t guess_body = (size_t)(best >> (LSX_COST_Q + 3)) + 64 * (size_t)nseg + 4096;
    const size_t first = guess_body < s->body_cap ? guess_body : s->body_cap;
    CK(cudaMemcpyAsync(s->h_body, s->body, first, cudaMemcpyDeviceToHost, st));
    MARK(7);
    CK(cudaStreamSynchronize(st));
    const int sgn = LSX_SIGN_MODEL && lsx_sign_model_wins(s->h_bin_bits[0], s->h_bin_bits[1]);
    const uint32_t *seg_len = s->h_seg_len + (sgn ? nseg : 0);
    size_t body = 0;
    for (uint32_t g = 0; g < nseg; g++) {
        if (seg_len[g] == 0) return aurp_fail(err, AURP_ERR_NOMEM, "image %ux%u: rANS segment failed", W, H);
        body += seg_len[g];
    }
    if (body > first) CK(cudaMemcpy(s->h_body + first, s->body + first, body - first, cudaMemcpyDeviceToHost));

    /* the winner's header and segments */
    lsx_view v;
    memset(&v, 0, sizeof v);
    v.p = par[pipe == 2];
    v.W = W;
    v.H = H;
    v.nctx = hc[c].nctx;
    v.seg_log2 = LSX_SEG_LOG2;
    memcpy(v.thr, hc[c].thr, sizeof v.thr);
    const uint8_t *pipe_classes = cas_won ? s->h_cas + H_CAS_CLASSES : s->h_info + 8 * pipe;
    if (kind == KIND_DP) {
        v.nib = hc[c].classes[0];
        memcpy(v.ibnd, hc[c].classes + 1, CTX_MAX_IB);
    } else {
        v.nib = kind_classes[kind] == 1 ? pipe_classes[0] : 1;
        if (v.nib > 1) memcpy(v.ibnd, pipe_classes + 1, (size_t)v.nib - 1);
    }
    v.set = pipe > 0 ? ROW_SET : 0;
    v.prior = LSX_PRIOR;
    v.bg = LSX_BG;
    v.ioff = (uint16_t)(s->h_info[NPIPE * 8] | s->h_info[NPIPE * 8 + 1] << 8);
    v.nseg = nseg;
    v.seg_lengths = LSX_SEG_LENGTHS;
    v.carry = LSX_CARRY && !LSX_SEG_LENGTHS;
    v.sgn = sgn;
    if (cas_won) {
        v.cas = 1;
        v.cas_wide = vc.cas_wide;
        v.cas_clip = vc.cas_clip;
        memcpy(v.cas_w, vc.cas_w, sizeof v.cas_w);
        memcpy(v.cas_wrev, vc.cas_wrev, sizeof v.cas_wrev);
    }
    const size_t head = lsx_header_len(v.nctx, nseg, v.seg_lengths) + lsx_cas_bytes(&v);
    if (head + body > cap)
        return aurp_fail(err, AURP_ERR_CAPACITY, "image %ux%u: output buffer of %zu bytes too small", W, H, cap);
    const size_t pos = lsx_write_header(out, &v, seg_len);
    memcpy(out + pos, s->h_body, body);
    *out_len = pos + body;
    return AURP_OK;
}

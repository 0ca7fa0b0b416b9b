/* Internal to gpu/: the kernels of the lsmix profile's encoder
 * (lsmix_kernels.cu), called by lsmix_encoder.cu.  Each launcher enqueues
 * on the given stream and returns the launch error.
 *
 * The stages (docs/GPU.md, "The lsmix profile on the GPU"):
 *   column means          a thread per column, down the rows
 *   LS predictions        a block per 8 columns: training sums down the rows
 *                         in chunks, then every (row, column) of the chunk
 *                         solved by its own thread
 *   row fits              a thread per row, along the row (AF, RV, AL)
 *   errors, column error levels, blend, residual, activity: per pixel (the
 *                         column levels a thread per column)
 *   the DP candidate's    its histogram per pixel; the DP's run costs a
 *   contexts              block per start (lsmix_dp_kernels.cu)
 *   contexts, token counts per table interval, the tables of every interval
 *                         (a warp per context, down the intervals), rANS (a
 *                         block per segment; one thread runs the chain)
 * Every value is the one the C core computes: the per-pixel arithmetic is
 * core/lsmix_arith.h itself. */
#ifndef AURP_GPU_LSMIX_KERNELS_H
#define AURP_GPU_LSMIX_KERNELS_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "lsmix.h"
#include "lsmix_split.h" /* LSX_GPU_LS_COLUMNS */

/* Per-pixel planes of one frame (device 0 holds them all). */
typedef struct {
    uint32_t W, H;
    const uint16_t *x;           /* the pixels */
    const int32_t *cma, *cmb;    /* column means before each row (Q4) */
    const double *p_ls;          /* LS prediction of the pipeline (rows >= 1) */
    const double *p_af, *p_rv, *p_al; /* row fits (rows >= 1); p_af not read in set 2, p_rv, p_al not in set 0 */
    const double *p_bg;          /* BG prediction (rows >= 1); NULL: no BG member */
    const double *p_rl[2];       /* sets 2, 3: the RL members (rows >= 1) */
    const double *p_lg;          /* set 3: LG (rows >= 1) */
    const int32_t *br_l, *br_o;  /* set 3: BR's column level before each row and row offset before each
                                  * pixel (Q8; rows >= 1): RC = L / 256, BR = (L + o) / 256 */
} lsx_gpu_planes;

/* One predictor set over one LS: its residual planes. */
typedef struct {
    int set;
    int32_t *err;      /* [np][px] set 0: the inputs of its column error levels (lsx_colerr_input) */
    int32_t *colerr;   /* [np][px] set 0: column error level before each row */
    int32_t *res;      /* [px] residuals */
    int32_t *emin;     /* [px] smallest error level of the blend */
    uint32_t *act;     /* [px] context activity (act16) */
    uint8_t *itok;     /* [px] intensity tokens */
    unsigned long long *itok_hist; /* [CTX_TOKENS] */
    uint8_t *classes;  /* [1 + CTX_MAX_IB]: nib, then the bounds */
    /* the adaptive sign (core/lsmix_sign.h): the blend's part of each
     * pixel's sign context (lsx_sign_pre; strip_blend_kernel writes it,
     * the cascade's final pass reads the winner's) and the sign bases
     * (lsx_sign_base: the blend's pass without the stage, the cascade's
     * final pass with it) */
    uint16_t *spre;    /* [px] */
    uint8_t *sbase;    /* [px] */
} lsx_gpu_pipe;

/* A context candidate of one pipeline. */
typedef struct {
    int nctx;                 /* activity contexts */
    int use_classes;          /* 1: x the pipeline's intensity classes; 2: x its own; 0: one class */
    uint32_t thr[CTX_MAX];    /* activity thresholds */
    uint8_t classes[1 + CTX_MAX_IB]; /* use_classes 2: nib, then the bounds */
} lsx_gpu_cand;

/* Row m and column n of pixel i of a W-wide frame by 32-bit division:
 * the GPU encoder's frames have fewer than 2^32 pixels (at most
 * AURP_GPU_MAX_SIDE = 4096 on a side), and a 64-bit division is a long
 * software routine on the device, run for every pixel of the per-pixel
 * kernels. */
static __device__ __forceinline__ void pixel_at(uint64_t i, uint32_t W, uint32_t *m, uint32_t *n)
{
    const uint32_t i32 = (uint32_t)i;
    *m = i32 / W;
    *n = i32 - *m * W;
}

/* Per-device constant tables (the rANS reciprocals, the estimate's log2
 * of every frequency); once per device. */
cudaError_t lsx_gpu_init_tables(cudaStream_t st);

cudaError_t lsx_gpu_pixel_histogram(const uint16_t *x, size_t px, uint32_t *hist, cudaStream_t st);
/* ioff (3.3) from the histogram, into *ioff on the device. */
cudaError_t lsx_gpu_ioff(const uint32_t *hist, uint64_t px, uint16_t *ioff, cudaStream_t st);

cudaError_t lsx_gpu_column_means(const uint16_t *x, uint32_t W, uint32_t H, int32_t *cma, int32_t *cmb,
                                 cudaStream_t st);

/* LS predictions of the columns [c0, c1), rows 1..H-1, for nls (1 or 2)
 * parameter sets p[] that differ only in the forgetting shift (and in
 * p[].weighted), into p_ls[l][m * pitch + (n - col0)].  rowmin: H words of
 * device scratch, where a weighted training keeps each row's least pixel
 * (read only where some p[l].weighted). */
cudaError_t lsx_gpu_ls_predict(const uint16_t *x, const int32_t *cma, const int32_t *cmb, uint32_t W,
                               uint32_t H, uint32_t c0, uint32_t c1, const lsx_params *p, int nls,
                               double *const *p_ls, size_t pitch, uint32_t col0, uint16_t *rowmin,
                               cudaStream_t st);

/* AF, RV and the AL of two LS planes (ls_a, ls_b) of every pixel; al_a
 * NULL: AF and RV alone (set 3 has no AL). */
cudaError_t lsx_gpu_row_fits(const uint16_t *x, const int32_t *cmb, const double *ls_a, const double *ls_b,
                             uint32_t W, uint32_t H, double *p_af, double *p_rv, double *al_a, double *al_b,
                             cudaStream_t st);

/* The BG member (core/lsmix_bg.h) of rows >= 1, in two passes: a thread
 * per column runs the column levels and scales down the frame into c, s
 * (Q4, Q8) and the weights w (the values before each row); then a thread
 * per row runs the row's offset along it into p_bg.  RL reads only the
 * column pass's c and s, so it may run beside the row pass. */
/* Set 3's BR (core/lsmix_br.h) in the same two passes: where br_l, the
 * column pass also writes BR's levels br_l and scales br_s before each
 * row (Q8; threads of their own in the same blocks); lsx_gpu_br_rows, a
 * thread per row m >= 1, BR's row offset br_o before each pixel (Q8). */
cudaError_t lsx_gpu_bg_columns(const uint16_t *x, uint32_t W, uint32_t H, int32_t *c, int32_t *s, int64_t *w,
                               int32_t *br_l, int32_t *br_s, cudaStream_t st);
cudaError_t lsx_gpu_bg_rows(const uint16_t *x, uint32_t W, uint32_t H, const int32_t *c, const int32_t *s,
                            const int64_t *w, double *p_bg, cudaStream_t st);
cudaError_t lsx_gpu_br_rows(const uint16_t *x, uint32_t W, uint32_t H, const int32_t *br_l, const int32_t *br_s,
                            int32_t *br_o, cudaStream_t st);

/* LG (core/lsmix_lg.h), a warp per row: set 3's log-gain member of rows >=
 * 1 into p_lg, from BG's column levels c and scales s (the column pass's). */
cudaError_t lsx_gpu_lg(const uint16_t *x, uint32_t W, uint32_t H, const int32_t *c, const int32_t *s,
                       double *p_lg, cudaStream_t st);

/* RL (core/lsmix_rl.h), a thread per row: the predictions of set 2's two
 * row members into p_rl0 and p_rl1, from BG's column levels c and scales s
 * (lsx_gpu_bg_columns', before each row). */
cudaError_t lsx_gpu_rl(const uint16_t *x, uint32_t W, uint32_t H, const int32_t *c, const int32_t *s,
                       double *p_rl0, double *p_rl1, cudaStream_t st);

/* A pipeline's residuals, then lsx_gpu_finish_pipe with thr_hist. */
cudaError_t lsx_gpu_residuals(const lsx_gpu_planes *pl, const lsx_gpu_pipe *pp, const uint16_t *ioff,
                              uint32_t *thr_hist, cudaStream_t st);

/* The activities (from pp's res and emin), the intensity-token histogram
 * and the intensity classes of a pipeline whose res and itok are made;
 * where thr_hist is not NULL, also the histogram of its DP context
 * candidate (lsx_thr_histogram of core/lsmix_thresholds.c) into thr_hist
 * [LSX_THR_CELLS] (zeroed here). */
cudaError_t lsx_gpu_finish_pipe(uint32_t W, uint32_t H, const lsx_gpu_pipe *pp, uint32_t *thr_hist,
                                cudaStream_t st);

/* lsx_gpu_cas_sums' scratch Rd, in entries: every row offset's run of 256
 * lags (the tensor cores' sums), and a count */
#define LSX_GPU_CAS_RD ((LSX_CAS_ROWS_MAX + 1) * 256 + 1)
/* The run of 256 lags d0[dm] .. d0[dm] + 255 of every row offset dm that
 * lsx_gpu_cas_sums' kernels sum, for a plan's offsets. */
typedef struct {
    int d0[LSX_CAS_ROWS_MAX + 1];
} lsx_gpu_cas_lags;
/* Once per device and plan, before lsx_gpu_cas_sums: the plan's runs of
 * lags into *lags (cudaErrorInvalidValue where an offset lies outside
 * what the kernels can sum), and the kernels' shared memory opted in to
 * the widest frame's need (with the device current). */
cudaError_t lsx_gpu_cas_setup(const lsx_cas_plan *pl, lsx_gpu_cas_lags *lags);
/* The cascade stage (core/lsmix_cascade.h) on a pipeline's residuals e1
 * (lsmix_cascade_kernels.cu).  lsx_gpu_cas_sums: the median |e1| of rows
 * 1.. into *md (lsx_cas_clip's), e1 clipped (lsx_cas_clip_of_median) into
 * ec, and the correlations R[k] of the plan's no offsets (lsx_cas_correlation's
 * sums; lags: lsx_gpu_cas_setup's of the plan, dm and dn its offsets on the
 * device); hist: 65536 words of scratch, Rd: LSX_GPU_CAS_RD entries of
 * scratch.
 * lsx_gpu_cas_final: with the weights w (device, lsx_cas_nl(wide) of them)
 * of the support wide, the final prediction of every pixel, its residual
 * into pp->res and its intensity token into pp->itok (then
 * lsx_gpu_finish_pipe). */
cudaError_t lsx_gpu_cas_sums(const int32_t *e1, uint32_t W, uint32_t H, uint32_t *hist, uint32_t *md, int16_t *ec,
                             const lsx_gpu_cas_lags *lags, int no, const int *dm, const int *dn, int64_t *Rd,
                             int64_t *R, cudaStream_t st);
cudaError_t lsx_gpu_cas_final(const uint16_t *x, const int32_t *e1, const int16_t *ec, uint32_t W, uint32_t H,
                              const int16_t *w, int wide, const uint16_t *ioff, const lsx_gpu_pipe *pp,
                              cudaStream_t st);

/* The stage's weights of one support on the device (lsmix_cascade_cg.cu):
 * from the correlations R (no of them) and the median md of
 * lsx_gpu_cas_sums, the system of n lags (the plan's pair table of the
 * support, n x n, and its lags' offsets, device arrays) solved as the C
 * encoder's lsx_cas_solve does it, the weights rounded into w (n of them;
 * 0 where not solvable) and *ok: 1 where solvable. */
cudaError_t lsx_gpu_cas_cg(const int64_t *R, int no, const uint32_t *md, const uint16_t *pair, const int *lag, int n,
                           int16_t *w, int *ok, cudaStream_t st);

/* The DP context candidate of npipe pipelines (lsx_dp_contexts of
 * core/lsmix_thresholds.c, the same contexts, lsmix_dp_kernels.cu): from
 * pipeline i's histogram hist[i * LSX_THR_CELLS] (lsx_gpu_finish_pipe)
 * and its intensity classes (info[8 i]: their count, then the bounds), the
 * contexts of candidate cand0[i * cand_stride] (nctx, thr, classes;
 * use_classes 2), written where its DP succeeds; ok[i] 1 where it does, 0
 * where the histogram is empty.  scratch: lsx_gpu_dp_scratch_bytes(npipe)
 * bytes of device memory. */
size_t lsx_gpu_dp_scratch_bytes(int npipe);
cudaError_t lsx_gpu_dp_contexts(const uint32_t *hist, const uint8_t *info, int npipe, lsx_gpu_cand *cand0,
                                int cand_stride, int *ok, void *scratch, cudaStream_t st);

/* The coding of ncand candidates at once: contexts, counts, tables, rANS
 * segments.  cand_pipe[c] names the pipeline of candidate c. */
typedef struct {
    uint32_t W, H;
    uint64_t px;
    uint32_t nint, nseg;
    int ncand;
    int prior;                  /* the counts start from the prior table (3.3) */
    const lsx_gpu_cand *cand;   /* device [ncand] */
    const lsx_gpu_pipe *pipe;   /* device [npipe] (res, act, itok, classes) */
    const int *cand_pipe;       /* device [ncand] */
    uint8_t *ctx;               /* [ncand][px] */
    uint16_t *hist;             /* [ncand][nint][CTX_MAX][CTX_TOKENS] */
    uint32_t *table;            /* [ncand][nint][CTX_MAX][CTX_TOKENS]: cum << 16 | freq */
    uint8_t *slots;             /* [ncand][nseg][slot] */
    size_t slot;
    uint32_t *seg_len;          /* [ncand][nseg]; 0 where the slot overflowed */
    unsigned long long *bits;   /* [ncand] the size estimate of the tokens (Q16 bits, model_pass) */
    /* the adaptive sign and top raw bit (lsx_gpu_bin_tables, lsx_gpu_rans_sgn) */
    uint16_t *bin_hist;         /* [nint][2 LSX_GPU_BIN_CTX] each interval's counts of 0 and 1 (one candidate) */
    uint16_t *bin_f0;           /* [nint][LSX_GPU_BIN_CTX] each interval's frequency of 0 */
    /* [2] the estimate of one candidate's binary symbols with the
     * adaptive sign, and as uniform bits (lsx_sign_model_wins; made by
     * lsx_gpu_bin_tables).  Where set, lsx_gpu_rans codes only where the
     * estimate keeps the uniform bits, lsx_gpu_rans_sgn only where it
     * takes the adaptive sign, and lsx_gpu_gather_signed gathers that one:
     * the choice never comes back to the host before the body does. */
    unsigned long long *bin_bits;
} lsx_gpu_coding;

/* The binary contexts: the sign's (LSX_SIGN_CTX), then the top raw bit's
 * (LSX_RAWBIT_CTX, by token). */
#define LSX_GPU_BIN_CTX (LSX_SIGN_CTX + LSX_RAWBIT_CTX)

/* Contexts, token counts and each candidate's size estimate into bits;
 * where tables, the tables of every interval too (else lsx_gpu_tables
 * makes them later, for the candidates that are coded). */
cudaError_t lsx_gpu_model(const lsx_gpu_coding *c, int max_ctx, int tables, cudaStream_t st);
/* The tables of every interval, after lsx_gpu_model without them. */
cudaError_t lsx_gpu_tables(const lsx_gpu_coding *c, cudaStream_t st);
/* The rANS segments. */
cudaError_t lsx_gpu_rans(const lsx_gpu_coding *c, cudaStream_t st);
/* The adaptive sign and top raw bit (header byte 23 bit 6, core/lsmix_sign.h)
 * of one candidate (ncand 1): the binary contexts' counts per interval
 * from its residuals and its pipeline's sbase, their tables (bin_f0:
 * sign_pass and ctx_bin_refresh of core) and the
 * estimate (bin_bits); then the rANS segments with them (after
 * lsx_gpu_tables: the token tables as lsx_gpu_rans). */
cudaError_t lsx_gpu_bin_tables(const lsx_gpu_coding *c, cudaStream_t st);
cudaError_t lsx_gpu_rans_sgn(const lsx_gpu_coding *c, cudaStream_t st);
/* The segments of off (coded by lsx_gpu_rans) or of on (lsx_gpu_rans_sgn),
 * as on's estimate (on->bin_bits) chose, back to back into body. */
cudaError_t lsx_gpu_gather_signed(const lsx_gpu_coding *off, const lsx_gpu_coding *on, uint8_t *body,
                                  cudaStream_t st);

/* The segments of candidate cand back to back into body. */
cudaError_t lsx_gpu_gather(const lsx_gpu_coding *c, int cand, uint8_t *body, cudaStream_t st);

#endif

/* Internal to gpu/: the kernel launchers the host-side encoder (encoder.cu)
 * calls.  Each launcher enqueues on the given stream and returns the launch
 * error; the caller turns any error into AURP_ERR_BACKEND. */
#ifndef AURP_GPU_KERNELS_H
#define AURP_GPU_KERNELS_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "imgstream.h"

#define AURP_GPU_HIST_BINS AURP_HIST_BINS /* the core's histogram: residual e at index e + 65535 */
#define AURP_GPU_SLICE_CAP 4094   /* bins of [T-, T+] sent with the range: 32 KB with its header */

/* be16 (FITS BITPIX=16 big-endian) -> u = bits XOR 0x8000. */
cudaError_t gpu_unpack(const uint8_t *be16, uint16_t *x, size_t count, cudaStream_t st);

/* Lag-product sums down the rows for the columns [lo, c1) of a band:
 * P[d][m][q-lo] = sum over i < m of x[i][q] * x[i][q+d], d = 0..N, exact in
 * uint64 (0 where q + d >= c1: no window of the band reaches it). */
cudaError_t gpu_lag_sums(const uint16_t *x, uint32_t width, uint32_t height, uint32_t lo,
                         uint32_t c1, int order, uint64_t *P, cudaStream_t st);

/* Residuals e = x - pred of the columns [c0, c1) of every row, the
 * arithmetic of core/predict.c, written to e[m * e_pitch + (n - e_col0)]. */
cudaError_t gpu_predict(const uint16_t *x, uint32_t width, uint32_t height, const uint64_t *P,
                        uint32_t lo, uint32_t c0, uint32_t c1, int order, int equations,
                        int32_t *e, size_t e_pitch, uint32_t e_col0, cudaStream_t st);

/* hist[e + 65535] += 1 for the count residuals (hist zeroed by the caller). */
cudaError_t gpu_histogram(const int32_t *e, size_t count, uint32_t *hist, cudaStream_t st);

/* out[0] = first bin with count >= tq, out[1] = last (first > last: none),
 * out[2..] = the counts of bins out[0].. (at most AURP_GPU_SLICE_CAP). */
cudaError_t gpu_hist_range(const uint32_t *hist, uint32_t tq, uint64_t *out, cudaStream_t st);

/* The coding stage after the plan: every segment of 2^seg_log2 symbols
 * rANS-coded by one thread into its slot of scratch (slot bytes each, written
 * back to front), then the body the stream carries after its count table
 *   u32 seg_len[nseg] | segments back to back | u16 escapes (raster order)
 * assembled in body; totals[0] = segment bytes, totals[1] = escapes. */
typedef struct {
    const int32_t *e;
    const uint16_t *x;
    uint64_t count;
    int32_t t_lo, t_hi;
    uint32_t esc_sym;
    const uint4 *sym_tab; /* [nsym] coder entries, built by gpu_code_segments */
    int prob_bits;
    int seg_log2;
    uint32_t nseg;
    uint8_t *scratch;
    size_t slot;
    uint32_t *seg_len, *seg_esc, *seg_off, *esc_off;
    uint64_t *totals;
    uint8_t *body;
} gpu_code_args;

cudaError_t gpu_code_segments(const gpu_code_args *a, const uint32_t *freq, const uint32_t *cum,
                              uint32_t nsym, uint4 *sym_tab, cudaStream_t st);

#endif

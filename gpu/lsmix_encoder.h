/* Internal to gpu/: the lsmix profile's GPU encoder (lsmix_encoder.cu),
 * called by encoder.cu with the frame already unpacked on the device. */
#ifndef AURP_GPU_LSMIX_ENCODER_H
#define AURP_GPU_LSMIX_ENCODER_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "imgstream.h"

typedef struct lsx_gpu_state lsx_gpu_state;

/* The column split: device 0 solves the LS of columns [0, ls_c1) itself;
 * bands(ctx, ls, nls, st) has the other devices solve the rest of the LS
 * planes ls[0..nls-1] (device 0 memory, W doubles a row; nls 2: both
 * trainings, 1: forgetting 2's alone) and makes stream st wait for them
 * (NULL when device 0 does every column). */
typedef cudaError_t (*lsx_gpu_bands_fn)(void *ctx, double *const *ls, int nls, cudaStream_t st);

/* Encodes the W x H pixels x (device memory, u = bits ^ 0x8000) with K
 * lags and window M into out: the bytes lsx_image_encode writes.  *state
 * holds the device buffers between frames (made on first use, grown for
 * larger frames; lsx_gpu_free).  ev: NULL, or 8 events of which 1..7 are
 * recorded after the stages (aurp_gpu_stage_times). */
aurp_status lsx_gpu_encode(lsx_gpu_state **state, const char *label, cudaStream_t st, cudaEvent_t *ev,
                           const uint16_t *x, uint32_t W, uint32_t H, int K, int M, uint32_t ls_c1,
                           lsx_gpu_bands_fn bands, void *bands_ctx, uint8_t *out, size_t cap, size_t *out_len,
                           aurp_error *err);
void lsx_gpu_free(lsx_gpu_state *s);

#endif

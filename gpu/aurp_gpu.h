/* The GPU backend of the image encoder: the same bytes as aurp_image_encode,
 * computed with CUDA on one or more devices.  Plain C interface.
 *
 * A handle owns its devices' buffers (pinned host and device memory,
 * allocated once, reused frame after frame).  One handle is used by one
 * thread at a time.  Column split: one handle over several devices splits
 * every frame by columns.  Frame-parallel: one handle per device, one
 * thread per handle.  Errors are returned, never abort the process; after
 * AURP_ERR_BACKEND the caller redoes the frame on the CPU.
 * Built without CUDA, every call reports that and nothing else changes.
 */
#ifndef AURP_GPU_H
#define AURP_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "aurp.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AURP_GPU_MAX_DEVICES 16
#define AURP_GPU_MAX_SIDE 4096 /* frames up to 4096 x 4096 */

/* Number of usable CUDA devices; 0 with the reason in why (no driver, no
 * device, built without CUDA). */
int aurp_gpu_count(char *why, size_t why_len);

typedef struct aurp_gpu aurp_gpu;

/* Opens devices[0..ndevices-1] (CUDA ordinals) for frames up to max_width x
 * max_height. */
aurp_status aurp_gpu_open(const int *devices, int ndevices, uint32_t max_width,
                          uint32_t max_height, aurp_gpu **out, aurp_error *err);

/* Encodes one image (FITS BITPIX=16 big-endian bytes) into out; the bytes
 * are those aurp_image_encode would write. */
aurp_status aurp_gpu_encode(aurp_gpu *g, const uint8_t *be16, uint32_t width, uint32_t height,
                            const aurp_params *p, uint8_t *out, size_t cap, size_t *out_len,
                            aurp_error *err);

/* Whether the GPU encoder has the profile (AURP_PROFILE_*): today only the
 * paper profile; callers encode the others on the CPU. */
int aurp_gpu_has_profile(int profile);

/* The handle's pinned input buffer (2 * max_width * max_height bytes, its
 * size in *cap): a caller that writes the frame there and passes it as be16
 * saves the copy into pinned memory.  NULL without CUDA. */
uint8_t *aurp_gpu_host_buffer(aurp_gpu *g, size_t *cap);

/* The handle as an aurp_image_encoder for aurp_pack / frame_pack. */
aurp_image_encoder aurp_gpu_encoder(aurp_gpu *g);

/* Stage timing on the first device, for the benchmark: after
 * aurp_gpu_profile(g, 1), each encode records the device time of its stages
 * (with G > 1, device 0's view), read with aurp_gpu_stage_times into
 * ms[0..AURP_GPU_STAGES-1], plus ms[AURP_GPU_STAGES] the host plan time.
 * Stages: 0 frame to device, 1 unpack + lag sums, 2 solve + residuals
 * (+ band gather), 3 histogram + to host, 4 table to device (includes the
 * host's plan time), 5 rANS + scan + compaction, 6 body to host. */
#define AURP_GPU_STAGES 7
void aurp_gpu_profile(aurp_gpu *g, int on);
int aurp_gpu_stage_times(const aurp_gpu *g, double *ms, int n);

/* "gpu:0+1" style label of the handle's devices. */
const char *aurp_gpu_label(const aurp_gpu *g);

void aurp_gpu_close(aurp_gpu *g);

#ifdef __cplusplus
}
#endif
#endif

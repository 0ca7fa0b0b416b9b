/* How many of a handle's devices the lsmix column split uses for a frame
 * (gpu/encoder.cu): plain C, no CUDA, so that the host tests check it.
 *
 * Only the LS stage is split.  Its blocks take LSX_GPU_LS_COLUMNS columns
 * each and walk every row of them one after another, one block an SM, so
 * the stage lasts one block's walk while the device has an SM for every
 * block: more devices shorten it only where one has fewer SMs than the
 * frame has blocks.  Where it has enough, a split adds the other devices'
 * copies and makes the stage no shorter (docs/GPU.md, "The lsmix column
 * split and four GPUs": 3.90 ms against 3.29 on one device for a 1024-wide
 * frame on H200s).  The bytes never depend on it. */
#ifndef AURP_LSMIX_SPLIT_H
#define AURP_LSMIX_SPLIT_H

#include <stdint.h>

#define LSX_GPU_LS_COLUMNS 8 /* columns an LS block takes */

/* The devices (1..ndev) for a frame W columns wide on devices of sms SMs:
 * as many as the frame's LS blocks need passes of one device's SMs. */
static inline int lsx_split_count(uint32_t W, int sms, int ndev)
{
    const uint32_t blocks = (W + LSX_GPU_LS_COLUMNS - 1) / LSX_GPU_LS_COLUMNS;
    const uint32_t per = sms > 0 ? (uint32_t)sms : 1;
    const uint32_t want = (blocks + per - 1) / per;
    if (ndev < 1) return 1;
    return want < 1 ? 1 : want < (uint32_t)ndev ? (int)want : ndev;
}

#endif

/* How many of a handle's devices the lsmix column split uses for a frame
 * (gpu/encoder.cu): plain C, no CUDA, so that the host tests check it.
 *
 * Only the LS stage is split.  Its blocks take LSX_GPU_LS_COLUMNS columns
 * each and walk every row of them one after another,
 * LSX_GPU_LS_BLOCKS_PER_SM blocks an SM, so the stage lasts one block's
 * walk while the device has room for every block: more devices shorten it
 * only where one holds fewer blocks at once than the frame has.  Where it
 * has enough, a split adds the other devices' copies and makes the stage
 * no shorter (docs/GPU.md, "The lsmix column split and four GPUs": 3.90
 * ms against 3.29 on one device for a 1024-wide frame on H200s).  The
 * bytes never depend on it. */
#ifndef AURP_LSMIX_SPLIT_H
#define AURP_LSMIX_SPLIT_H

#include <stdint.h>

/* Two blocks of 4 columns an SM rather than one of 8 (the same warps, the
 * same registers and shared memory): one block's solves run while the
 * other trains, where one block's warps all wait at the same barrier
 * (the stage 0.64 -> 0.62 ms on an H100, the edge blocks mended). */
#define LSX_GPU_LS_COLUMNS 4       /* columns an LS block takes */
#define LSX_GPU_LS_BLOCKS_PER_SM 2 /* LS blocks an SM holds at once */

/* The devices (1..ndev) for a frame W columns wide on devices of sms SMs:
 * as many as the frame's LS blocks need passes of one device's SMs. */
static inline int lsx_split_count(uint32_t W, int sms, int ndev)
{
    const uint32_t blocks = (W + LSX_GPU_LS_COLUMNS - 1) / LSX_GPU_LS_COLUMNS;
    const uint32_t per = (sms > 0 ? (uint32_t)sms : 1) * LSX_GPU_LS_BLOCKS_PER_SM;
    const uint32_t want = (blocks + per - 1) / per;
    if (ndev < 1) return 1;
    return want < 1 ? 1 : want < (uint32_t)ndev ? (int)want : ndev;
}

#endif

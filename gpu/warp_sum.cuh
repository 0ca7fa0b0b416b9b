/* An integer summed over a full warp, the result in every lane.  The
 * 32-bit sum is one REDUX instruction (sm_80 and later), not five
 * shuffles; the 64-bit sums (counts that can pass 2^32, the cascade's
 * signed products) shuffle, and the signed one adds as two's complement,
 * which is exact whatever the order. */
#ifndef AURP_WARP_SUM_CUH
#define AURP_WARP_SUM_CUH

#include <stdint.h>

static __device__ __forceinline__ uint32_t warp_sum(uint32_t v) { return __reduce_add_sync(0xffffffffu, v); }

static __device__ __forceinline__ uint64_t warp_sum(uint64_t v)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

static __device__ __forceinline__ long long warp_sum(long long v)
{
    return (long long)warp_sum((uint64_t)v);
}

#endif

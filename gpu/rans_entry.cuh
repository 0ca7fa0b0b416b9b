/* The rANS coder entry of one symbol, the one definition for both GPU
 * coders: the paper profile's symbol table (entropy_kernels.cu) and the
 * lsmix profile's token tables (lsmix_kernels.cu).
 *
 * Per symbol, the encoder step of FORMAT.md 2.5 without / and %
 * (ryg_rans RansEncSymbolInit, Alverson's reciprocal):
 *   q = umulhi(x, rcp) >> shift = x div f,   x' = x + bias + q * (2^P - f)
 * which is (x div f) * 2^P + (x mod f) + cum.  With S = ceil(log2 f),
 * rcp = ceil(2^(31+S) / f) (< 2^32 as f > 2^(S-1)) and shift = S - 1,
 * q = floor(x rcp / 2^(31+S)) = floor(x/f + err), err < x / 2^(31+S).  The
 * state before the step is below xmax = 2^11 f <= 2^31, so err < 2^-S <= 1/f,
 * too small to carry x/f (fraction at most (f-1)/f) past the next integer:
 * q is exact.  (The GPU tests' byte identity with the CPU coder checks it.)
 * f = 1 cannot use a reciprocal below 1: rcp = 2^32-1, shift 0 gives
 * q = x - 1, and bias = cum + 2^P - 1 restores x' = x * 2^P + cum.
 * Entry: {rcp, xmax, bias, (2^P - f) | shift << 24}. */
#ifndef AURP_GPU_RANS_ENTRY_CUH
#define AURP_GPU_RANS_ENTRY_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "hostdev.h"
#include "imgstream.h"

/* S = ceil(log2 f) of a frequency f >= 2. */
static __host__ __device__ __forceinline__ uint32_t aurp_rans_log2_ceil(uint32_t f)
{
#ifdef __CUDA_ARCH__
    return (uint32_t)(32 - __clz((int)(f - 1)));
#else
    return (uint32_t)(32 - __builtin_clz(f - 1));
#endif
}

/* rcp = ceil(2^(31+S) / f) of a frequency f >= 2 with S = shift. */
static __host__ __device__ __forceinline__ uint32_t aurp_rans_rcp_s(uint32_t f, uint32_t shift)
{
    return (uint32_t)((((uint64_t)1 << (shift + 31)) + f - 1) / f);
}

/* rcp of a frequency f >= 2. */
static __host__ __device__ __forceinline__ uint32_t aurp_rans_rcp(uint32_t f)
{
    return aurp_rans_rcp_s(f, aurp_rans_log2_ceil(f));
}

/* Where the entry of a symbol takes rcp from: computed in place... */
struct aurp_rans_rcp_computed {
    __host__ __device__ __forceinline__ uint32_t operator()(uint32_t f, uint32_t shift) const
    {
        return aurp_rans_rcp_s(f, shift);
    }
};

/* ...or read from a table of aurp_rans_rcp(f) indexed by f, made ahead. */
struct aurp_rans_rcp_table {
    const uint32_t *rcp;
    __host__ __device__ __forceinline__ uint32_t operator()(uint32_t f, uint32_t) const { return rcp[f]; }
};

/* The entry of a symbol of frequency f and cumulative frequency cum, the
 * frequencies summing to 2^prob_bits; rcp_of (one of the two above) is
 * asked for the reciprocal only when f >= 2. */
template <class RcpOf>
static __host__ __device__ __forceinline__ uint4 aurp_rans_entry(uint32_t f, uint32_t cum, int prob_bits,
                                                                RcpOf rcp_of)
{
    uint4 t;
    t.y = ((AURP_RANS_L >> prob_bits) << 8) * f;
    if (f < 2) {
        t.x = 0xffffffffu;
        t.z = cum + (1u << prob_bits) - 1;
        t.w = (1u << prob_bits) - f;
    } else {
        const uint32_t shift = aurp_rans_log2_ceil(f);
        t.x = rcp_of(f, shift);
        t.z = cum;
        t.w = ((1u << prob_bits) - f) | (shift - 1) << 24;
    }
    return t;
}

#endif

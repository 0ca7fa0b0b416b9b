/* AURP_HD marks the small inline functions whose arithmetic is part of the
 * format and that the CUDA kernels call as well as the C core: one
 * definition, compiled by gcc for the CPU and by nvcc for the GPU, so both
 * backends run the same sequence of operations. */
#ifndef AURP_HOSTDEV_H
#define AURP_HOSTDEV_H

#include <stdint.h>

#ifdef __CUDACC__
#define AURP_HD __host__ __device__
#define AURP_HD_FORCE __host__ __device__ __attribute__((always_inline))
#else
#define AURP_HD
#define AURP_HD_FORCE __attribute__((always_inline))
#endif

/* Unrolls the next loop completely where its trip count is a constant
 * after inlining (small fixed-size solves: the loop overhead and the
 * memory round trips otherwise cost more than the arithmetic). */
#if defined(__CUDA_ARCH__)
#define AURP_UNROLL _Pragma("unroll")
#elif defined(__CUDACC__) /* nvcc's host pass: neither pragma is known to both of its compilers */
#define AURP_UNROLL
#elif defined(__GNUC__) && !defined(__clang__)
#define AURP_UNROLL _Pragma("GCC unroll 8")
#else
#define AURP_UNROLL
#endif

/* Index of the highest set bit of v > 0. */
static inline AURP_HD int aurp_msb32(unsigned v)
{
#ifdef __CUDA_ARCH__
    return 31 - __clz((int)v);
#else
    return 31 - __builtin_clz(v);
#endif
}

/* num / den for 0 < den < 2^62, truncated toward zero as C's division.
 * On the device, where a 64-bit division is a long subroutine (and the BG
 * row pass waits on one a pixel), from a single-precision estimate, one
 * more estimate from its remainder where it is off, and steps of one:
 * exact for every input, fast where the quotient is below about 2^40
 * (BG's offsets are below 2^24). */
static inline AURP_HD int64_t aurp_div_s64(int64_t num, int64_t den)
{
#ifdef __CUDA_ARCH__
    const uint64_t a = num < 0 ? 0 - (uint64_t)num : (uint64_t)num, b = (uint64_t)den;
    uint64_t q = (uint64_t)__fdividef((float)a, (float)b);
    int64_t r = (int64_t)(a - q * b);
    if (r < 0 || (uint64_t)r >= b) {
        q += (uint64_t)(int64_t)__fdividef((float)r, (float)b);
        r = (int64_t)(a - q * b);
    }
    while (r < 0) q--, r += (int64_t)b;
    while ((uint64_t)r >= b) q++, r -= (int64_t)b;
    return num < 0 ? -(int64_t)q : (int64_t)q;
#else
    return num / den;
#endif
}

#endif

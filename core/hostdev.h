/* AURP_HD marks the small inline functions whose arithmetic is part of the
 * format and that the CUDA kernels call as well as the C core: one
 * definition, compiled by gcc for the CPU and by nvcc for the GPU, so both
 * backends run the same sequence of operations. */
#ifndef AURP_HOSTDEV_H
#define AURP_HOSTDEV_H

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

#endif

/* AURP_HD marks the small inline functions whose arithmetic is part of the
 * format and that the CUDA kernels call as well as the C core: one
 * definition, compiled by gcc for the CPU and by nvcc for the GPU, so both
 * backends run the same sequence of operations. */
#ifndef AURP_HOSTDEV_H
#define AURP_HOSTDEV_H

#ifdef __CUDACC__
#define AURP_HD __host__ __device__
#else
#define AURP_HD
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

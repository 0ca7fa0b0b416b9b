/* 1.0 / d, correctly rounded, without a branch, for 2^-1000 < d < 2^1000
 * (the LS solve's pivots that pass aurp_solve_ldl's test lie in
 * (2^-30, 2^64)).  It is the fast path of nvcc's IEEE double division
 * 1.0 / d, instruction for instruction on sm_90 (MUFU.RCP64H of d's high
 * word, the low word d's high word + 0x300402, two Newton steps by fused
 * multiply-add), which nvcc takes for every such d and which is correctly
 * rounded there, so the same bits as the CPU's division.  What it leaves
 * out is the test and the branch to the slow path (zeros, denormals,
 * infinities, the range's ends) that nvcc places after it: in the LS
 * solve that branch ended a basic block at each of the twelve pivots, so
 * the compiler could not overlap one row's work with the division before
 * it.  tests/gpu/test_gpu_arith.cu compares it with the division bit for
 * bit, on the device and against the host's. */
#ifndef AURP_RCP_IN_RANGE_CUH
#define AURP_RCP_IN_RANGE_CUH

__device__ __forceinline__ double rcp_in_range(double d)
{
    double r;
    asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(d));
    r = __hiloint2double(__double2hiint(r), __double2hiint(d) + 0x300402);
    double e = __fma_rn(-d, r, 1.0);
    e = __fma_rn(e, e, e);
    r = __fma_rn(r, e, r);
    e = __fma_rn(-d, r, 1.0);
    return __fma_rn(r, e, r);
}

#endif

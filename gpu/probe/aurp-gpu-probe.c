/* aurp-gpu-probe: prints how many CUDA devices this build can use, or why
 * none; exits 0 when there is at least one, 1 otherwise (scripts use it to
 * decide whether to run the GPU tests). */
#include "aurp_gpu.h"

#include <stdio.h>

int main(void)
{
    char why[256] = "";
    int n = aurp_gpu_count(why, sizeof why);
    if (n > 0) {
        printf("%d CUDA device(s)\n", n);
        return 0;
    }
    printf("no GPU: %s\n", why);
    return 1;
}

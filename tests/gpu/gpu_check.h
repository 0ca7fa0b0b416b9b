/* The GPU test programs' check (plain C and CUDA; no Criterion on the
 * device machine): counts passes and failures, prints each failure with
 * its place; a program ends "N passed, N failed". */
#ifndef GPU_CHECK_H
#define GPU_CHECK_H

#include <stdio.h>

static int passed, failed;

#define CHECK(cond, ...)                                                                       \
    do {                                                                                       \
        if (cond) {                                                                            \
            passed++;                                                                          \
        } else {                                                                               \
            failed++;                                                                          \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                        \
            printf(__VA_ARGS__);                                                               \
            printf("\n");                                                                      \
        }                                                                                      \
    } while (0)

#endif

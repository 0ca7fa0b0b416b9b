/* The lsmix column split's device count (gpu/lsmix_split.h): a GPU handle
 * over several devices splits an lsmix frame only over as many as its LS
 * blocks need passes of one device's SMs.  The GPU tests check the bytes of
 * every count; this checks the count itself, which the bytes cannot show
 * (a wrong count only makes frames slower: docs/GPU.md measured 3.90 ms
 * split against 3.29 on one device for a 1024-wide frame). */
#include <criterion/criterion.h>

#include "lsmix_split.h"

Test(gpu_split, frames_an_sm_each_stay_on_one_device)
{
    /* 1024 columns: 256 blocks of 4, two an SM: one pass of a 132-SM H100 or H200 */
    cr_assert_eq(lsx_split_count(1024, 132, 4), 1);
    cr_assert_eq(lsx_split_count(1024, 132, 2), 1);
    cr_assert_eq(lsx_split_count(132 * LSX_GPU_LS_BLOCKS_PER_SM * LSX_GPU_LS_COLUMNS, 132, 4), 1);
    cr_assert_eq(lsx_split_count(1, 132, 4), 1);
    /* a narrower card: 1024 columns need two passes of 64 SMs */
    cr_assert_eq(lsx_split_count(1024, 64, 4), 2);
}

Test(gpu_split, wider_frames_take_a_device_a_pass)
{
    cr_assert_eq(lsx_split_count(132 * LSX_GPU_LS_BLOCKS_PER_SM * LSX_GPU_LS_COLUMNS + 1, 132, 4), 2);
    cr_assert_eq(lsx_split_count(2112, 132, 4), 2); /* the Kast frames */
    cr_assert_eq(lsx_split_count(2048, 132, 4), 2);
    cr_assert_eq(lsx_split_count(4096, 132, 4), 4); /* 1024 blocks: four passes of 264 */
    cr_assert_eq(lsx_split_count(4096, 132, 3), 3); /* never more than the handle has */
    cr_assert_eq(lsx_split_count(4096, 132, 2), 2);
    cr_assert_eq(lsx_split_count(4096, 132, 1), 1);
}

Test(gpu_split, nonsense_inputs_give_one_device)
{
    cr_assert_eq(lsx_split_count(4096, 0, 4), 4); /* an SM count of 0 counts as 1: as many as there are */
    cr_assert_eq(lsx_split_count(1024, 132, 0), 1);
    cr_assert_eq(lsx_split_count(0, 132, 4), 1);
}

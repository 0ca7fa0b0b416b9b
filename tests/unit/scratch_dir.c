#include "scratch_dir.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

char scratch_dir[64];

void scratch_dir_make(void)
{
    snprintf(scratch_dir, sizeof scratch_dir, "/tmp/aurp-test-XXXXXX");
    cr_assert_not_null(mkdtemp(scratch_dir));
}

void scratch_dir_remove(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch_dir);
    cr_assert_eq(system(cmd), 0);
}

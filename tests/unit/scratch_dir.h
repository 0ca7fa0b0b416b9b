/* A fresh directory under /tmp for one test's files: a Criterion suite's
 * .init/.fini (each test runs in its own process, with its own copy). */
#ifndef AURP_TEST_SCRATCH_DIR_H
#define AURP_TEST_SCRATCH_DIR_H

extern char scratch_dir[64];

void scratch_dir_make(void);
void scratch_dir_remove(void);

#endif

/* A Criterion check shared by the lsmix tests: a stream decodes to the
 * frame's pixels at 1, 2 and 3 threads. */
#ifndef AURP_TEST_LSMIX_DECODES_H
#define AURP_TEST_LSMIX_DECODES_H

#include <stddef.h>
#include <stdint.h>

void lsmix_assert_decodes(const uint8_t *s, size_t len, uint32_t w, uint32_t h, const uint16_t *u);

#endif

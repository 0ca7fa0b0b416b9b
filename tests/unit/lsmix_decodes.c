#include "lsmix_decodes.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "lsmix.h"

void lsmix_assert_decodes(const uint8_t *s, size_t len, uint32_t w, uint32_t h, const uint16_t *u)
{
    uint16_t *back = malloc(2 * (size_t)w * h);
    aurp_error err = {{0}};
    for (int threads = 1; threads <= 3; threads++) {
        memset(back, 0xA5, 2 * (size_t)w * h);
        cr_assert_eq(lsx_image_decode(s, len, w, h, threads, back, &err), AURP_OK, "%s", err.msg);
        cr_assert(memcmp(back, u, 2 * (size_t)w * h) == 0, "set %d, flags %#x, %d threads: other pixels", s[22],
                  s[23], threads);
    }
    free(back);
}

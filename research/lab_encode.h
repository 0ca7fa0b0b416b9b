/* The lsmix encoder's image stream of a frame with the profile's defaults,
 * for the research tools built against a copy of core/ (codec_size.c,
 * r9_dectime.c, r17_size.c): the stream in a malloc'd buffer and its
 * length in *len, or NULL with the encoder's message on stderr. */
#ifndef LAB_ENCODE_H
#define LAB_ENCODE_H

#include <stdio.h>
#include <stdlib.h>

#include "aurp.h"
#include "lsmix.h"

static inline uint8_t *lab_lsmix_encode(const uint16_t *u, uint32_t W, uint32_t H, int threads, size_t *len)
{
    aurp_params p;
    aurp_params_for_profile(&p, AURP_PROFILE_LSMIX);
    const size_t cap = aurp_image_bound(W, H);
    uint8_t *out = malloc(cap);
    aurp_error err;
    *len = 0;
    if (!out) return NULL;
    if (lsx_image_encode(u, W, H, &p, threads, out, cap, len, &err) != AURP_OK) {
        fprintf(stderr, "lsmix encode: %s\n", err.msg);
        free(out);
        return NULL;
    }
    return out;
}

#endif

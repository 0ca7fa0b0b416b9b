/* libFuzzer target for the decoders (scripts/fuzz.sh builds and runs it).
 * Each input is tried three ways: as a container as is; as a container
 * whose stream checksum is made valid (so the fuzzer reaches the chunk,
 * image-stream and general-coder parsers behind it); and as a bare image
 * stream (into a separate buffer and in place).  Nothing may crash, leak or
 * read out of bounds.
 *
 * Every declared size reaches the decoder: it is the decoder's output limit
 * (as a user's --max-output) that must refuse what is too large, before any
 * allocation, so inputs that declare 2^62 bytes are exercised too. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aurp.h"
#include "frame.h"
#include "internal.h"

/* below libFuzzer's -malloc_limit_mb (= -rss_limit_mb, 2048 in fuzz.sh)
 * with the image decoder's working memory on top */
#define MAX_OUT ((uint64_t)64 << 20)

static void try_unpack(const uint8_t *in, size_t len)
{
    aurp_error err;
    uint8_t *out = NULL;
    size_t olen;
    /* the whole output in memory, as unpack does */
    if (frame_unpack_limited(in, len, 2, MAX_OUT, &out, &olen, &err) == AURP_OK)
        free(out);
    /* chunk by chunk without keeping the output, as verify does */
    uint64_t restored;
    aurp_unpack_chunks(in, len, 1, MAX_OUT, NULL, NULL, &restored, &err);
    aurp_info info;
    aurp_damage damage;
    aurp_inspect_partial(in, len, &info, &damage, &err);
    aurp_info_free(&info);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    try_unpack(data, size);
    if (size >= 40) {
        uint8_t *fixed = malloc(size);
        if (!fixed) return 0;
        memcpy(fixed, data, size);
        aurp_put_u64(fixed + 32, aurp_checksum(fixed + 40, size - 40));
        try_unpack(fixed, size);
        free(fixed);
    }
    aurp_stream_view v;
    aurp_error err;
    if (aurp_stream_parse_header(data, size, &v, &err) == AURP_OK &&
        (uint64_t)v.width * v.height <= (1u << 20)) {
        uint8_t *img = malloc(2 * (size_t)v.width * v.height);
        if (img) aurp_image_decode(data, size, v.width, v.height, 2, img, &err);
        if (img) aurp_image_decode_in_place(data, size, v.width, v.height, 1, img, &err);
        free(img);
    }
    return 0;
}

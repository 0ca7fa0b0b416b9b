/* libFuzzer target for the decoders (scripts/fuzz.sh builds and runs it).
 * Each input is tried three ways: as a container as is; as a container
 * whose stream checksum is made valid (so the fuzzer reaches the chunk,
 * image-stream and general-coder parsers behind it); and as a bare image
 * stream.  Nothing may crash, leak or read out of bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aurp.h"
#include "internal.h"

#define MAX_OUT (16u << 20)

static void try_unpack(const uint8_t *in, size_t len)
{
    uint64_t osz;
    aurp_error err;
    if (aurp_original_size(in, len, &osz, &err) != AURP_OK || osz > MAX_OUT) return;
    uint8_t *out = malloc(osz ? (size_t)osz : 1);
    if (!out) return;
    size_t olen;
    aurp_unpack(in, len, 2, out, (size_t)osz, &olen, &err);
    free(out);
    aurp_info info;
    if (aurp_inspect(in, len, &info, &err) == AURP_OK) aurp_info_free(&info);
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
        free(img);
    }
    return 0;
}

/* frame_pack / frame_unpack: a whole file through the codec core, with the
 * image regions the FITS layer found. */
#include "frame.h"

#include <stdio.h>
#include <stdlib.h>

const char *frame_kind_name(frame_kind kind)
{
    switch (kind) {
    case FRAME_FITS_IMAGE: return "fits-image";
    case FRAME_FITS_OTHER: return "fits-other";
    case FRAME_NOT_FITS: return "not-fits";
    }
    return "unknown";
}

aurp_status frame_pack(const uint8_t *file, size_t len, const frame_layout *layout,
                       const aurp_params *p, const aurp_image_encoder *enc, int threads,
                       uint8_t **out, size_t *out_len, aurp_error *err)
{
    *out = NULL;
    *out_len = 0;
    int nregions = layout->kind == FRAME_FITS_IMAGE ? layout->nregions : 0;
    size_t cap = aurp_pack_bound(len);
    uint8_t *buf = malloc(cap ? cap : 1);
    if (!buf) {
        snprintf(err->msg, sizeof err->msg, "out of memory (%zu bytes for the packed stream)", cap);
        return AURP_ERR_NOMEM;
    }
    size_t n = 0;
    aurp_status st = aurp_pack(file, len, layout->regions, nregions, p, enc,
                               threads < 1 ? 1 : threads, buf, cap, &n, err);
    if (st != AURP_OK) {
        free(buf);
        return st;
    }
    uint8_t *shrunk = realloc(buf, n ? n : 1);
    *out = shrunk ? shrunk : buf;
    *out_len = n;
    return AURP_OK;
}

aurp_status frame_unpack_limited(const uint8_t *packed, size_t len, int threads,
                                 uint64_t max_output, uint8_t **out, size_t *out_len,
                                 aurp_error *err)
{
    *out = NULL;
    *out_len = 0;
    uint64_t size = 0;
    /* every declared size against the stream and the limit first: a stream
     * of a few bytes that declares 2^62 must not reach malloc */
    aurp_status st = aurp_check_stream(packed, len, max_output, &size, err);
    if (st != AURP_OK) return st;
    if (size > SIZE_MAX - 1) {
        snprintf(err->msg, sizeof err->msg, "original size %llu too large for memory",
                 (unsigned long long)size);
        return AURP_ERR_NOMEM;
    }
    uint8_t *buf = malloc(size ? (size_t)size : 1);
    if (!buf) {
        snprintf(err->msg, sizeof err->msg, "out of memory (%llu bytes for the original)",
                 (unsigned long long)size);
        return AURP_ERR_NOMEM;
    }
    size_t n = 0;
    st = aurp_unpack(packed, len, threads < 1 ? 1 : threads, buf, (size_t)size, &n, err);
    if (st != AURP_OK) {
        free(buf);
        return st;
    }
    *out = buf;
    *out_len = n;
    return AURP_OK;
}

aurp_status frame_unpack(const uint8_t *packed, size_t len, int threads, uint8_t **out,
                         size_t *out_len, aurp_error *err)
{
    return frame_unpack_limited(packed, len, threads, 0, out, out_len, err);
}

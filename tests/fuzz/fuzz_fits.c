/* libFuzzer target: frame_layout_of on arbitrary bytes must classify without
 * crashing, give regions inside the file, sorted and disjoint; and whatever
 * it accepts must pack and unpack to the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    frame_layout l;
    frame_layout_of(data, size, &l);
    if (l.kind != FRAME_FITS_IMAGE && l.why[0] == '\0') abort();
    if (l.kind != FRAME_FITS_IMAGE && l.nregions != 0) abort();
    if (l.kind == FRAME_FITS_IMAGE && l.nregions < 1) abort();
    uint64_t end = 0;
    for (int i = 0; i < l.nregions; i++) {
        const aurp_region *r = &l.regions[i];
        if (r->width < 1 || r->height < 1 || r->offset < end) abort();
        end = r->offset + 2ull * r->width * r->height;
        if (end > size) abort();
    }
    if (l.kind == FRAME_NOT_FITS) return 0;

    aurp_params p;
    aurp_params_default(&p);
    aurp_error err;
    uint8_t *packed = NULL, *restored = NULL;
    size_t plen = 0, rlen = 0;
    if (frame_pack(data, size, &l, &p, NULL, 1, &packed, &plen, &err) != AURP_OK) abort();
    if (frame_unpack(packed, plen, 1, &restored, &rlen, &err) != AURP_OK) abort();
    if (rlen != size || (size && memcmp(restored, data, size) != 0)) abort();
    free(packed);
    free(restored);
    return 0;
}

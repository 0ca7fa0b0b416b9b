/* The real frames of $AURP_SHARED_DATA through the container, with each
 * profile: byte-identical round trips, identical bytes for 1 and 2 threads;
 * the paper profile's image chunk within 2% of the ideal static code length
 * of its residuals (the benchmark prints the exact ratios), and the lsmix
 * profile's whole stream smaller than the paper profile's.  The image region is found by
 * reading the primary header here (the FITS layer is fits/). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_fitshdr.h"
#include "internal.h"

static double ideal_bytes(const uint8_t *stream, size_t len)
{
    aurp_stream_view v;
    aurp_error err;
    cr_assert_eq(aurp_stream_parse(stream, len, &v, &err), AURP_OK, "%s", err.msg);
    double total = (double)v.width * v.height, bits = 16.0 * (double)v.escapes;
    for (uint32_t s = 0; s < v.nsym; s++)
        if (v.count[s]) bits += (double)v.count[s] * log2(total / v.count[s]);
    aurp_stream_view_free(&v);
    return bits / 8;
}

/* Packs path with the profile's defaults and checks the round trip; returns
 * the packed length. */
static size_t check_file(const char *path, int profile)
{
    size_t len = 0;
    uint8_t *file = core_read_file(path, &len);
    cr_assert(file, "%s: cannot read", path);
    aurp_region r;
    cr_assert_eq(core_fits_primary_image(file, len, &r.offset, &r.width, &r.height), 0,
                 "%s: no primary 16-bit image", path);
    aurp_params p;
    aurp_params_for_profile(&p, profile);
    size_t cap = aurp_pack_bound(len), l1, l2, bl;
    uint8_t *a = malloc(cap), *b = malloc(cap), *back = malloc(len);
    aurp_error err = {{0}};
    cr_assert_eq(aurp_pack(file, len, &r, 1, &p, NULL, 1, a, cap, &l1, &err), AURP_OK, "%s: %s", path, err.msg);
    cr_assert_eq(aurp_pack(file, len, &r, 1, &p, NULL, 2, b, cap, &l2, &err), AURP_OK, "%s: %s", path, err.msg);
    cr_assert(l1 == l2 && memcmp(a, b, l1) == 0, "%s: 1 and 2 threads differ", path);
    cr_assert_eq(aurp_unpack(a, l1, 2, back, len, &bl, &err), AURP_OK, "%s: %s", path, err.msg);
    cr_assert(bl == len && memcmp(back, file, len) == 0, "%s: restored bytes differ", path);

    aurp_info info;
    cr_assert_eq(aurp_inspect(a, l1, &info, &err), AURP_OK);
    size_t pos = 40;
    int images = 0;
    for (int c = 0; c < info.nchunks; c++) {
        if (info.chunks[c].method == AURP_CHUNK_IMAGE) {
            images++;
            if (profile != AURP_PROFILE_PAPER) continue;
            double ideal = ideal_bytes(a + pos + 24, info.chunks[c].enc_len);
            cr_assert_lt((double)info.chunks[c].enc_len, 1.02 * ideal, "%s: image chunk %llu bytes, ideal %.0f",
                         path, (unsigned long long)info.chunks[c].enc_len, ideal);
        }
        pos += 24 + info.chunks[c].enc_len;
    }
    cr_assert_eq(images, 1, "%s: the image was not coded", path);
    aurp_info_free(&info);
    free(a);
    free(b);
    free(back);
    free(file);
    return l1;
}

Test(core_real, shared_frames, .timeout = 300)
{
    const char *dir = getenv("AURP_SHARED_DATA");
    if (!dir || !*dir) cr_skip_test("AURP_SHARED_DATA is not set: no real frames to test");
    DIR *d = opendir(dir);
    cr_assert(d, "AURP_SHARED_DATA=%s: cannot open the directory", dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 5, ".fits") != 0) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t paper = check_file(path, AURP_PROFILE_PAPER), lsmix = check_file(path, AURP_PROFILE_LSMIX);
        cr_assert_lt(lsmix, paper, "%s: lsmix %zu bytes, paper %zu", path, lsmix, paper);
        n++;
    }
    closedir(d);
    cr_assert_gt(n, 0, "no .fits file in %s", dir);
}

/* frame_layout_of on real FITS files written by cfitsio into a temporary
 * directory, and on broken ones made from them. */
#include <criterion/criterion.h>
#include <fitsio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frame.h"
#include "scratch_dir.h"

TestSuite(fits_layout, .init = scratch_dir_make, .fini = scratch_dir_remove);

static void path_of(const char *name, char *buf, size_t len) { snprintf(buf, len, "%s/%s", scratch_dir, name); }

static fitsfile *create(const char *name)
{
    char path[256], bang[260];
    path_of(name, path, sizeof path);
    snprintf(bang, sizeof bang, "!%s", path);
    fitsfile *f = NULL;
    int status = 0;
    fits_create_file(&f, bang, &status);
    cr_assert_eq(status, 0, "cfitsio cannot create %s: %d", path, status);
    return f;
}

/* Appends an image HDU (or the primary one) with a ramp of values, so that
 * the region's bytes can be checked. */
static void add_image(fitsfile *f, int bitpix, int naxis, long *naxes)
{
    int status = 0;
    fits_create_img(f, bitpix, naxis, naxes, &status);
    cr_assert_eq(status, 0);
    long n = 1;
    for (int i = 0; i < naxis; i++) n *= naxes[i];
    if (naxis == 0 || n == 0) return;
    int *v = malloc(sizeof(int) * (size_t)n);
    for (long i = 0; i < n; i++)
        v[i] = (int)(bitpix == BYTE_IMG     ? i % 256
                     : bitpix == USHORT_IMG ? (i * 37) % 60000
                                            : (i * 37) % 30000 - 15000);
    if (bitpix == SHORT_IMG) { /* compressed images take only their own type */
        short *sv = malloc(sizeof(short) * (size_t)n);
        for (long i = 0; i < n; i++) sv[i] = (short)v[i];
        fits_write_img(f, TSHORT, 1, n, sv, &status);
        free(sv);
    } else {
        fits_write_img(f, TINT, 1, n, v, &status);
    }
    if (status) fits_report_error(stderr, status);
    free(v);
    cr_assert_eq(status, 0, "fits_write_img: %d", status);
}

static void add_table(fitsfile *f)
{
    int status = 0;
    char *ttype[] = {"WAVE", "FLUX"}, *tform[] = {"1D", "1J"}, *tunit[] = {"nm", "ADU"};
    fits_create_tbl(f, BINARY_TBL, 3, 2, ttype, tform, tunit, "SPECTRUM", &status);
    double w[3] = {557.7, 630.0, 636.4};
    long fl[3] = {100, 200, 300};
    fits_write_col(f, TDOUBLE, 1, 1, 1, 3, w, &status);
    fits_write_col(f, TLONG, 2, 1, 1, 3, fl, &status);
    cr_assert_eq(status, 0);
}

static void finish(fitsfile *f)
{
    int status = 0;
    fits_close_file(f, &status);
    cr_assert_eq(status, 0);
}

static uint8_t *load(const char *name, size_t *len)
{
    char path[256];
    path_of(name, path, sizeof path);
    FILE *fp = fopen(path, "rb");
    cr_assert_not_null(fp, "cannot open %s", path);
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)n + 8192);
    cr_assert_eq(fread(buf, 1, (size_t)n, fp), (size_t)n);
    fclose(fp);
    *len = (size_t)n;
    return buf;
}

/* Closes the file written through f, reads it back and lays it out. */
static uint8_t *close_and_layout(fitsfile *f, const char *name, size_t *len, frame_layout *l)
{
    finish(f);
    uint8_t *buf = load(name, len);
    frame_layout_of(buf, *len, l);
    return buf;
}

static void layout_of_image(int bitpix, int naxis, long *naxes, frame_layout *l, size_t *len_out)
{
    fitsfile *f = create("x.fits");
    add_image(f, bitpix, naxis, naxes);
    size_t len;
    free(close_and_layout(f, "x.fits", &len, l));
    if (len_out) *len_out = len;
}

/* The bytes at a region's offset are the ramp written by add_image. */
static void assert_ramp_at(const uint8_t *buf, const aurp_region *r)
{
    for (long i = 0; i < 5; i++) {
        int16_t want = (int16_t)((i * 37) % 30000 - 15000);
        int16_t got = (int16_t)((buf[r->offset + 2 * i] << 8) | buf[r->offset + 2 * i + 1]);
        cr_assert_eq(got, want, "sample %ld at offset %llu: %d, want %d", i,
                     (unsigned long long)r->offset, got, want);
    }
}

Test(fits_layout, bitpix16_image_is_found_at_its_data)
{
    long naxes[2] = {37, 11};
    fitsfile *f = create("a.fits");
    add_image(f, SHORT_IMG, 2, naxes);
    size_t len;
    frame_layout l;
    uint8_t *buf = close_and_layout(f, "a.fits", &len, &l);
    cr_assert_eq(l.kind, FRAME_FITS_IMAGE, "why: %s", l.why);
    cr_assert_eq(l.nregions, 1);
    cr_assert_eq(l.nhdus, 1);
    cr_assert_eq(l.regions[0].width, 37);
    cr_assert_eq(l.regions[0].height, 11);
    cr_assert_eq(l.regions[0].offset % 2880, 0);
    cr_assert_eq(l.trailing_bytes, 0);
    assert_ramp_at(buf, &l.regions[0]);
    free(buf);
}

Test(fits_layout, unsigned_bzero_image_is_an_image)
{
    long naxes[2] = {1, 1};
    frame_layout l;
    layout_of_image(USHORT_IMG, 2, naxes, &l, NULL);
    cr_assert_eq(l.kind, FRAME_FITS_IMAGE, "1x1 BZERO image: %s", l.why);
    cr_assert_eq(l.regions[0].width, 1);
}

static void assert_other(int bitpix, int naxis, long *naxes, const char *why)
{
    frame_layout l;
    layout_of_image(bitpix, naxis, naxes, &l, NULL);
    cr_assert_eq(l.kind, FRAME_FITS_OTHER, "kind %d why '%s'", l.kind, l.why);
    cr_assert_eq(l.nregions, 0);
    cr_assert_not_null(strstr(l.why, why), "why '%s' lacks '%s'", l.why, why);
}

Test(fits_layout, bitpix8_is_other) { long n[2] = {20, 10}; assert_other(BYTE_IMG, 2, n, "BITPIX=8"); }
Test(fits_layout, bitpix32_is_other) { long n[2] = {20, 10}; assert_other(LONG_IMG, 2, n, "BITPIX=32"); }
Test(fits_layout, bitpix_minus32_is_other) { long n[2] = {20, 10}; assert_other(FLOAT_IMG, 2, n, "BITPIX=-32"); }
Test(fits_layout, cube_is_other) { long n[3] = {8, 6, 3}; assert_other(SHORT_IMG, 3, n, "NAXIS=3 cube"); }
Test(fits_layout, one_d_is_other) { long n[1] = {100}; assert_other(SHORT_IMG, 1, n, "NAXIS=1"); }
Test(fits_layout, header_only_is_other) { assert_other(SHORT_IMG, 0, NULL, "NAXIS=0"); }

Test(fits_layout, image_extension_after_empty_primary)
{
    fitsfile *f = create("ext.fits");
    add_image(f, SHORT_IMG, 0, NULL);
    long naxes[2] = {64, 5};
    add_image(f, SHORT_IMG, 2, naxes);
    size_t len;
    frame_layout l;
    uint8_t *buf = close_and_layout(f, "ext.fits", &len, &l);
    cr_assert_eq(l.kind, FRAME_FITS_IMAGE, "why: %s", l.why);
    cr_assert_eq(l.nhdus, 2);
    cr_assert_eq(l.nregions, 1);
    cr_assert_geq(l.regions[0].offset, 2 * 2880);
    cr_assert_eq(l.regions[0].width, 64);
    cr_assert_eq(l.regions[0].height, 5);
    assert_ramp_at(buf, &l.regions[0]);
    free(buf);
}

Test(fits_layout, several_hdus_with_a_bintable)
{
    fitsfile *f = create("multi.fits");
    long a[2] = {30, 20}, b[2] = {7, 9}, c[2] = {5, 5};
    add_image(f, SHORT_IMG, 2, a);
    add_table(f);
    add_image(f, SHORT_IMG, 2, b);
    add_image(f, LONG_IMG, 2, c);
    size_t len;
    frame_layout l;
    uint8_t *buf = close_and_layout(f, "multi.fits", &len, &l);
    cr_assert_eq(l.kind, FRAME_FITS_IMAGE, "why: %s", l.why);
    cr_assert_eq(l.nhdus, 4);
    cr_assert_eq(l.nregions, 2);
    cr_assert_eq(l.regions[0].width, 30);
    cr_assert_eq(l.regions[1].width, 7);
    cr_assert_eq(l.regions[1].height, 9);
    cr_assert_gt(l.regions[1].offset, l.regions[0].offset + 2u * 30 * 20);
    assert_ramp_at(buf, &l.regions[0]);
    assert_ramp_at(buf, &l.regions[1]);
    free(buf);
}

Test(fits_layout, tile_compressed_image_is_not_an_image)
{
    fitsfile *f = create("comp.fits");
    int status = 0;
    fits_set_compression_type(f, RICE_1, &status);
    long naxes[2] = {40, 30};
    add_image(f, SHORT_IMG, 2, naxes);
    size_t len;
    frame_layout l;
    uint8_t *buf = close_and_layout(f, "comp.fits", &len, &l);
    cr_assert_eq(l.kind, FRAME_FITS_OTHER, "kind %d why '%s'", l.kind, l.why);
    cr_assert_not_null(strstr(l.why, "BINTABLE"), "why: %s", l.why);
    free(buf);
}

static uint8_t *image_file(size_t *len, const aurp_region **unused)
{
    (void)unused;
    long naxes[2] = {100, 50};
    fitsfile *f = create("t.fits");
    add_image(f, SHORT_IMG, 2, naxes);
    finish(f);
    return load("t.fits", len);
}

Test(fits_layout, truncated_data_is_not_fits)
{
    size_t len;
    uint8_t *buf = image_file(&len, NULL);
    frame_layout l;
    frame_layout_of(buf, 2880 + 5000, &l); /* data are 10000 bytes */
    cr_assert_eq(l.kind, FRAME_NOT_FITS);
    cr_assert_not_null(strstr(l.why, "truncated"), "why: %s", l.why);
    cr_assert_not_null(strstr(l.why, "HDU 1 ends at byte 12880"), "why: %s", l.why);
    cr_assert_not_null(strstr(l.why, "7880"), "why: %s", l.why);
    free(buf);
}

Test(fits_layout, truncated_header_is_not_fits)
{
    size_t len;
    uint8_t *buf = image_file(&len, NULL);
    frame_layout l;
    frame_layout_of(buf, 1000, &l);
    cr_assert_eq(l.kind, FRAME_NOT_FITS);
    cr_assert_not_null(strstr(l.why, "truncated"), "why: %s", l.why);
    free(buf);
}

Test(fits_layout, file_cut_inside_an_extension_header_is_not_fits)
{
    fitsfile *f = create("two.fits");
    long a[2] = {30, 20}, b[2] = {7, 9};
    add_image(f, SHORT_IMG, 2, a);
    add_image(f, SHORT_IMG, 2, b);
    size_t len;
    frame_layout l;
    uint8_t *buf = close_and_layout(f, "two.fits", &len, &l);
    cr_assert_eq(l.kind, FRAME_FITS_IMAGE, "why: %s", l.why);
    size_t second = 2 * 2880; /* 1 header block + 1 data block */
    cr_assert(memcmp(buf + second, "XTENSION=", 9) == 0);
    frame_layout_of(buf, second + 1000, &l);
    cr_assert_eq(l.kind, FRAME_NOT_FITS, "kind %d why %s", l.kind, l.why);
    cr_assert_not_null(strstr(l.why, "truncated: header of HDU 2"), "why: %s", l.why);
    /* cut inside the second HDU's data */
    frame_layout_of(buf, second + 2880 + 10, &l);
    cr_assert_eq(l.kind, FRAME_NOT_FITS, "kind %d why %s", l.kind, l.why);
    cr_assert_not_null(strstr(l.why, "data of HDU 2"), "why: %s", l.why);
    free(buf);
}

Test(fits_layout, missing_final_padding_is_accepted)
{
    size_t len;
    uint8_t *buf = image_file(&len, NULL);
    frame_layout l;
    frame_layout_of(buf, 2880 + 10000, &l);
    cr_assert_eq(l.kind, FRAME_FITS_IMAGE, "why: %s", l.why);
    cr_assert_eq(l.regions[0].offset, 2880);
    free(buf);
}

Test(fits_layout, trailing_junk_is_kept_as_trailing_bytes)
{
    size_t len;
    uint8_t *buf = image_file(&len, NULL);
    for (size_t extra = 1; extra <= 2 * 2880 + 7; extra += 2880 + 3) {
        for (size_t i = 0; i < extra; i++) buf[len + i] = (uint8_t)(i * 7 + 1);
        frame_layout l;
        frame_layout_of(buf, len + extra, &l);
        cr_assert_eq(l.kind, FRAME_FITS_IMAGE, "%zu junk bytes: kind %d why %s", extra, l.kind, l.why);
        cr_assert_eq(l.nhdus, 1);
        cr_assert_eq(l.trailing_bytes, extra);
    }
    free(buf);
}

Test(fits_layout, garbage_is_not_fits)
{
    uint8_t buf[8000];
    uint64_t x = 12345;
    for (size_t i = 0; i < sizeof buf; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        buf[i] = (uint8_t)(x >> 56);
    }
    frame_layout l;
    frame_layout_of(buf, sizeof buf, &l);
    cr_assert_eq(l.kind, FRAME_NOT_FITS);
    cr_assert_not_null(strstr(l.why, "SIMPLE"), "why: %s", l.why);
}

Test(fits_layout, simple_card_without_a_valid_header_is_not_fits)
{
    uint8_t buf[2880 * 2];
    memset(buf, ' ', sizeof buf);
    memcpy(buf, "SIMPLE  =                    T", 30); /* no BITPIX, no END */
    frame_layout l;
    frame_layout_of(buf, sizeof buf, &l);
    cr_assert_eq(l.kind, FRAME_NOT_FITS, "kind %d why %s", l.kind, l.why);
    cr_assert_neq(l.why[0], '\0');
}

Test(fits_layout, zero_length_is_not_fits)
{
    frame_layout l;
    frame_layout_of((const uint8_t *)"", 0, &l);
    cr_assert_eq(l.kind, FRAME_NOT_FITS);
    cr_assert_not_null(strstr(l.why, "empty"), "why: %s", l.why);
}

static void assert_shared(const char *name, uint32_t w, uint32_t h)
{
    const char *data = getenv("AURP_SHARED_DATA");
    char path[512];
    snprintf(path, sizeof path, "%s/%s", data ? data : "/work/shared/data", name);
    FILE *fp = fopen(path, "rb");
    if (!fp) cr_skip_test("shared frame %s not present", path);
    fseek(fp, 0, SEEK_END);
    size_t len = (size_t)ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint8_t *buf = malloc(len);
    cr_assert_eq(fread(buf, 1, len, fp), len);
    fclose(fp);
    frame_layout l;
    frame_layout_of(buf, len, &l);
    cr_assert_eq(l.kind, FRAME_FITS_IMAGE, "%s: %s", path, l.why);
    cr_assert_eq(l.nregions, 1);
    cr_assert_eq(l.regions[0].width, w);
    cr_assert_eq(l.regions[0].height, h);
    /* the data end where the file's last block ends, padding included */
    cr_assert_eq((l.regions[0].offset + 2ull * w * h + 2879) / 2880 * 2880, len);
    free(buf);
}

Test(fits_layout, shared_trex_frames)
{
    assert_shared("trex_20230503T060000_f0.fits", 1024, 256);
    assert_shared("trex_20230503T060000_f1.fits", 1024, 256);
}

Test(fits_layout, shared_kast_frames)
{
    assert_shared("kast_b27_science.fits", 2112, 350);
    assert_shared("kast_b1_arc.fits", 2112, 350);
}

/* ---- frame_pack / frame_unpack over the same files ------------------ */

TestSuite(frame_roundtrip, .init = scratch_dir_make, .fini = scratch_dir_remove);

static int image_chunks(const uint8_t *packed, size_t len)
{
    aurp_info info;
    aurp_error err;
    cr_assert_eq(aurp_inspect(packed, len, &info, &err), AURP_OK, "%s", err.msg);
    int n = 0;
    for (int i = 0; i < info.nchunks; i++) n += info.chunks[i].method == AURP_CHUNK_IMAGE;
    aurp_info_free(&info);
    return n;
}

/* Packs and unpacks buf; returns the number of image chunks in the stream. */
static int roundtrip(const uint8_t *buf, size_t len, frame_kind want_kind)
{
    frame_layout l;
    frame_layout_of(buf, len, &l);
    cr_assert_eq(l.kind, want_kind, "kind %d, why %s", l.kind, l.why);
    aurp_params p;
    aurp_params_default(&p);
    aurp_error err;
    uint8_t *packed, *restored;
    size_t plen, rlen;
    cr_assert_eq(frame_pack(buf, len, &l, &p, NULL, 2, &packed, &plen, &err), AURP_OK, "%s", err.msg);
    cr_assert_eq(frame_unpack(packed, plen, 2, &restored, &rlen, &err), AURP_OK, "%s", err.msg);
    cr_assert_eq(rlen, len);
    cr_assert(len == 0 || memcmp(restored, buf, len) == 0, "restored bytes differ");
    int n = image_chunks(packed, plen);
    free(packed);
    free(restored);
    return n;
}

Test(frame_roundtrip, several_hdus_with_images_table_and_junk)
{
    fitsfile *f = create("multi.fits");
    long a[2] = {30, 20}, b[2] = {7, 9}, c[2] = {5, 5};
    add_image(f, SHORT_IMG, 2, a);
    add_table(f);
    add_image(f, USHORT_IMG, 2, b);
    add_image(f, LONG_IMG, 2, c);
    finish(f);
    size_t len;
    uint8_t *buf = load("multi.fits", &len);
    cr_assert_eq(roundtrip(buf, len, FRAME_FITS_IMAGE), 2);
    memcpy(buf + len, "junk after the end", 18);
    cr_assert_eq(roundtrip(buf, len + 18, FRAME_FITS_IMAGE), 2);
    free(buf);
}

Test(frame_roundtrip, other_fits_and_not_fits_use_the_general_coder)
{
    long c[3] = {8, 6, 3};
    fitsfile *f = create("cube.fits");
    add_image(f, SHORT_IMG, 3, c);
    finish(f);
    size_t len;
    uint8_t *buf = load("cube.fits", &len);
    cr_assert_eq(roundtrip(buf, len, FRAME_FITS_OTHER), 0);
    cr_assert_eq(roundtrip(buf, len / 2, FRAME_NOT_FITS), 0);
    cr_assert_eq(roundtrip(buf, 0, FRAME_NOT_FITS), 0);
    free(buf);
}

Test(frame_roundtrip, shared_frames)
{
    const char *names[] = {"trex_20230503T060000_f0.fits", "kast_b1_arc.fits"};
    const char *data = getenv("AURP_SHARED_DATA");
    for (int i = 0; i < 2; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", data ? data : "/work/shared/data", names[i]);
        FILE *fp = fopen(path, "rb");
        if (!fp) cr_skip_test("shared frame %s not present", path);
        fseek(fp, 0, SEEK_END);
        size_t len = (size_t)ftell(fp);
        fseek(fp, 0, SEEK_SET);
        uint8_t *buf = malloc(len);
        cr_assert_eq(fread(buf, 1, len, fp), len);
        fclose(fp);
        cr_assert_eq(roundtrip(buf, len, FRAME_FITS_IMAGE), 1, "%s", path);
        free(buf);
    }
}

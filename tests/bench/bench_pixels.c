/* The pixels of a FITS frame for the size benchmark (scripts/bench-size.sh),
 * so that image-only coders are compared on the same samples and charged
 * for the rest of the file:
 *
 *   bench_pixels pgm FILE.fits OUT.pgm   the primary image as a 16-bit PGM
 *                                        (maxval 65535, big-endian samples
 *                                        u = stored bits XOR 0x8000)
 *   bench_pixels rest FILE.fits          every byte of the file except the
 *                                        image samples, to stdout (the
 *                                        header, padding, other HDUs)
 *   bench_pixels same FILE.fits IN.pgm   exit 0 if the PGM holds exactly
 *                                        the image's samples, 1 if not
 *   bench_pixels jpegls FILE.fits        JPEG-LS (CharLS) bytes of the
 *                                        image, decoded back and compared;
 *                                        exit 1 if it does not round-trip
 *
 * Only a primary BITPIX=16 NAXIS=2 image is handled (every frame of the
 * benchmark is one); anything else exits 2. */
#include <charls/charls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_fitshdr.h"
#include "core_frames.h"

typedef struct {
    uint8_t *file;
    size_t len;
    uint64_t offset;
    uint32_t width, height;
    uint16_t *u; /* samples, row-major */
} frame;

static int load(const char *path, frame *f)
{
    f->file = core_read_file(path, &f->len);
    if (!f->file) {
        fprintf(stderr, "bench_pixels: %s: cannot read\n", path);
        return -1;
    }
    if (core_fits_primary_image(f->file, f->len, &f->offset, &f->width, &f->height) ||
        f->offset + 2ull * f->width * f->height > f->len) {
        fprintf(stderr, "bench_pixels: %s: no primary 16-bit 2-D image\n", path);
        return -1;
    }
    size_t n = (size_t)f->width * f->height;
    f->u = malloc(n * sizeof *f->u);
    if (!f->u) return -1;
    core_frame_from_be16(f->file + f->offset, n, f->u);
    return 0;
}

static int write_pgm(const frame *f, const char *path)
{
    FILE *out = fopen(path, "wb");
    if (!out) return -1;
    fprintf(out, "P5\n%u %u\n65535\n", f->width, f->height);
    size_t n = (size_t)f->width * f->height;
    int ok = 1;
    for (size_t i = 0; i < n && ok; i++) {
        uint8_t be[2] = {(uint8_t)(f->u[i] >> 8), (uint8_t)f->u[i]};
        ok = fwrite(be, 1, 2, out) == 2;
    }
    return fclose(out) == 0 && ok ? 0 : -1;
}

/* Reads a binary PGM (one whitespace after maxval, no comments: what djxl
 * writes) and compares its samples. */
static int same_as_pgm(const frame *f, const char *path)
{
    size_t len;
    uint8_t *p = core_read_file(path, &len);
    if (!p) return 0;
    unsigned w, h, maxval;
    int header = 0;
    if (sscanf((const char *)p, "P5 %u %u %u%n", &w, &h, &maxval, &header) != 3 || w != f->width ||
        h != f->height || maxval != 65535) {
        free(p);
        return 0;
    }
    size_t at = (size_t)header + 1, n = (size_t)w * h;
    int same = at + 2 * n == len;
    for (size_t i = 0; i < n && same; i++)
        same = (uint16_t)((p[at + 2 * i] << 8) | p[at + 2 * i + 1]) == f->u[i];
    free(p);
    return same;
}

static int jpegls(const frame *f, size_t *bytes)
{
    size_t raw = (size_t)f->width * f->height * 2, cap = raw * 2 + 65536, written = 0;
    uint8_t *enc = malloc(cap);
    uint16_t *dec = malloc(raw);
    int rc = -1;
    if (!enc || !dec) goto done;
    charls_frame_info fi = {f->width, f->height, 16, 1};
    charls_jpegls_encoder *e = charls_jpegls_encoder_create();
    charls_jpegls_errc ec = charls_jpegls_encoder_set_frame_info(e, &fi);
    if (!ec) ec = charls_jpegls_encoder_set_destination_buffer(e, enc, cap);
    if (!ec) ec = charls_jpegls_encoder_encode_from_buffer(e, f->u, raw, 0);
    if (!ec) ec = charls_jpegls_encoder_get_bytes_written(e, &written);
    charls_jpegls_encoder_destroy(e);
    if (ec) goto done;
    charls_jpegls_decoder *d = charls_jpegls_decoder_create();
    ec = charls_jpegls_decoder_set_source_buffer(d, enc, written);
    if (!ec) ec = charls_jpegls_decoder_read_header(d);
    if (!ec) ec = charls_jpegls_decoder_decode_to_buffer(d, dec, raw, 0);
    charls_jpegls_decoder_destroy(d);
    if (!ec && memcmp(dec, f->u, raw) == 0) rc = 0, *bytes = written;
done:
    free(enc), free(dec);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_pixels pgm|rest|same|jpegls FILE.fits [PGM]\n");
        return 2;
    }
    const char *what = argv[1];
    frame f = {0};
    if (load(argv[2], &f)) return 2;
    int rc = 2;
    if (!strcmp(what, "pgm") && argc == 4) {
        rc = write_pgm(&f, argv[3]) ? 2 : 0;
    } else if (!strcmp(what, "rest") && argc == 3) {
        size_t image = 2 * (size_t)f.width * f.height;
        int ok = fwrite(f.file, 1, (size_t)f.offset, stdout) == (size_t)f.offset;
        size_t after = (size_t)f.offset + image;
        ok = ok && fwrite(f.file + after, 1, f.len - after, stdout) == f.len - after;
        rc = ok ? 0 : 2;
    } else if (!strcmp(what, "same") && argc == 4) {
        rc = same_as_pgm(&f, argv[3]) ? 0 : 1;
    } else if (!strcmp(what, "jpegls") && argc == 3) {
        size_t bytes = 0;
        rc = jpegls(&f, &bytes) ? 1 : 0;
        if (!rc) printf("%zu\n", bytes);
    } else {
        fprintf(stderr, "bench_pixels: unknown command or wrong arguments\n");
    }
    free(f.file), free(f.u);
    return rc;
}

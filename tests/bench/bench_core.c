/* Benchmark of the codec core, each profile, next to CharLS (JPEG-LS) on the
 * same pixels, and for the paper profile the compression check: the packed
 * size against the ideal static code length of the residuals (sum of
 * -log2(count/total) over the symbols, ESC included, + 16 bits an escape)
 * plus the coded non-image bytes.  (The lsmix coder adapts as it goes: it
 * has no static ideal; bench-size.sh compares it with the other codecs.)
 *
 *   bench_core [-t THREADS] [-r REPEATS] [FILE.fits ...]
 * Without files: a synthetic 1024 x 1024 spectrum frame.  Times are the
 * best of REPEATS runs (wall clock). */
#include <charls/charls.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aurp.h"
#include "core_fitshdr.h"
#include "core_frames.h"
#include "internal.h"

#define CHK(call)                                                        \
    do {                                                                 \
        if ((call) != CHARLS_JPEGLS_ERRC_SUCCESS) {                      \
            fprintf(stderr, "bench: CharLS failed: %s\n", #call);         \
            exit(1);                                                     \
        }                                                                \
    } while (0)

static double now_ms(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ideal bits of an image stream's residual coding */
static double ideal_bits(const uint8_t *stream, size_t len)
{
    aurp_stream_view v;
    aurp_error err;
    if (aurp_stream_parse(stream, len, &v, &err) != AURP_OK) {
        fprintf(stderr, "bench: cannot parse own stream: %s\n", err.msg);
        exit(1);
    }
    double total = (double)v.width * v.height, bits = 16.0 * (double)v.escapes;
    for (uint32_t s = 0; s < v.nsym; s++)
        if (v.count[s]) bits += (double)v.count[s] * log2(total / v.count[s]);
    aurp_stream_view_free(&v);
    return bits;
}

static int bench(const char *name, const uint8_t *file, size_t len, aurp_region r, int profile,
                 int threads, int reps)
{
    aurp_params p;
    aurp_params_for_profile(&p, profile);
    aurp_error err = {{0}};
    size_t cap = aurp_pack_bound(len), plen = 0, blen = 0;
    uint8_t *packed = malloc(cap), *back = malloc(len);
    double enc = 1e30, dec = 1e30;
    for (int i = 0; i < reps; i++) {
        double t0 = now_ms();
        if (aurp_pack(file, len, &r, 1, &p, NULL, threads, packed, cap, &plen, &err) != AURP_OK) {
            fprintf(stderr, "%s: pack: %s\n", name, err.msg);
            return 1;
        }
        double t1 = now_ms();
        if (aurp_unpack(packed, plen, threads, back, len, &blen, &err) != AURP_OK ||
            memcmp(back, file, len) != 0) {
            fprintf(stderr, "%s: unpack: %s\n", name, err.msg);
            return 1;
        }
        double t2 = now_ms();
        enc = fmin(enc, t1 - t0);
        dec = fmin(dec, t2 - t1);
    }

    /* CharLS on the same samples (u = bits ^ 0x8000, native uint16) */
    size_t npx = (size_t)r.width * r.height;
    uint16_t *u = malloc(npx * 2), *u2 = malloc(npx * 2);
    core_frame_from_be16(file + r.offset, npx, u);
    charls_jpegls_encoder *je = charls_jpegls_encoder_create();
    charls_frame_info fi = {r.width, r.height, 16, 1};
    CHK(charls_jpegls_encoder_set_frame_info(je, &fi));
    size_t jcap = 0;
    CHK(charls_jpegls_encoder_get_estimated_destination_size(je, &jcap));
    uint8_t *jbuf = malloc(jcap);
    size_t jlen = 0;
    double jenc = 1e30, jdec = 1e30;
    for (int i = 0; i < reps; i++) {
        double t0 = now_ms();
        CHK(charls_jpegls_encoder_set_destination_buffer(je, jbuf, jcap));
        if (charls_jpegls_encoder_encode_from_buffer(je, u, npx * 2, 0) != CHARLS_JPEGLS_ERRC_SUCCESS) {
            fprintf(stderr, "%s: charls encode failed\n", name);
            return 1;
        }
        CHK(charls_jpegls_encoder_get_bytes_written(je, &jlen));
        double t1 = now_ms();
        charls_jpegls_decoder *jd = charls_jpegls_decoder_create();
        CHK(charls_jpegls_decoder_set_source_buffer(jd, jbuf, jlen));
        CHK(charls_jpegls_decoder_read_header(jd));
        if (charls_jpegls_decoder_decode_to_buffer(jd, u2, npx * 2, 0) != CHARLS_JPEGLS_ERRC_SUCCESS ||
            memcmp(u, u2, npx * 2) != 0) {
            fprintf(stderr, "%s: charls decode failed\n", name);
            return 1;
        }
        charls_jpegls_decoder_destroy(jd);
        double t2 = now_ms();
        jenc = fmin(jenc, t1 - t0);
        jdec = fmin(jdec, t2 - t1);
        charls_jpegls_encoder_destroy(je);
        je = charls_jpegls_encoder_create();
        CHK(charls_jpegls_encoder_set_frame_info(je, &fi));
    }
    charls_jpegls_encoder_destroy(je);

    printf("%-34s %-5s %4ux%-4u thr %d | aurp pack %7.1f ms unpack %7.1f ms | charls enc %6.1f ms dec %6.1f ms"
           " | x%.2f x%.2f\n",
           name, aurp_profile_name(profile), r.width, r.height, threads, enc, dec, jenc, jdec, enc / jenc,
           dec / jdec);
    if (profile != AURP_PROFILE_PAPER) {
        printf("%-34s size %zu -> %zu (%.3f bpp image+header) | charls %.3f bpp\n", "", len, plen,
               8.0 * (double)plen / (double)npx, 8.0 * (double)jlen / (double)npx);
        goto out;
    }
    /* compression: image chunk against its ideal; other chunks as coded */
    aurp_info info;
    aurp_inspect(packed, plen, &info, &err);
    double ideal = 0, other = 40;
    size_t pos = 40;
    for (int c = 0; c < info.nchunks; c++) {
        other += 24;
        if (info.chunks[c].method == AURP_CHUNK_IMAGE) ideal += ideal_bits(packed + pos + 24, info.chunks[c].enc_len) / 8;
        else other += (double)info.chunks[c].enc_len;
        pos += 24 + info.chunks[c].enc_len;
    }
    aurp_info_free(&info);
    double bound = ideal + other;
    printf("%-34s size %zu -> %zu (%.3f bpp image+header) | ideal %.0f + other %.0f = %.0f | ratio %.4f"
           " | charls %.3f bpp\n",
           "", len, plen, 8.0 * (double)plen / (double)npx, ideal, other, bound, (double)plen / bound,
           8.0 * (double)jlen / (double)npx);
out:
    free(packed);
    free(back);
    free(u);
    free(u2);
    free(jbuf);
    return 0;
}

int main(int argc, char **argv)
{
    int threads = 2, reps = 3, i = 1, rc = 0;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "-t") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc) reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_core [-t THREADS] [-r REPEATS] [FILE.fits ...]\n");
            return 2;
        }
    }
    if (i == argc) {
        uint32_t w = 1024, h = 1024;
        size_t len = 2880 + 2 * (size_t)w * h;
        uint8_t *file = calloc(1, len);
        memset(file, ' ', 2880);
        memcpy(file, "SIMPLE  =                    T", 30);
        uint16_t *u = malloc(2 * (size_t)w * h);
        core_frame_make(CORE_FRAME_SPECTRUM, w, h, 1, u);
        core_frame_to_be16(u, (size_t)w * h, file + 2880);
        aurp_region r = {2880, w, h};
        for (int prof = AURP_PROFILE_PAPER; prof <= AURP_PROFILE_LSMIX; prof++)
            rc |= bench("synthetic spectrum", file, len, r, prof, threads, reps);
        free(u);
        free(file);
    }
    for (; i < argc; i++) {
        size_t len = 0;
        uint8_t *file = core_read_file(argv[i], &len);
        aurp_region r;
        if (!file || core_fits_primary_image(file, len, &r.offset, &r.width, &r.height) != 0) {
            fprintf(stderr, "%s: cannot read a primary BITPIX=16 image\n", argv[i]);
            rc = 1;
        } else {
            const char *base = strrchr(argv[i], '/');
            for (int prof = AURP_PROFILE_PAPER; prof <= AURP_PROFILE_LSMIX; prof++)
                rc |= bench(base ? base + 1 : argv[i], file, len, r, prof, threads, reps);
        }
        free(file);
    }
    return rc;
}

/* The in-process peer of `aurorapack bench`: JPEG-LS by CharLS.
 *
 * CharLS is opened with dlopen when `bench` first asks for it, not linked:
 * linking it made every aurorapack process load CharLS and the C++ runtime
 * it needs, about 2.3 ms a start on the 2-core machine (1.5 % of unpacking a
 * 1024 x 1024 frame, 3 % of a TREx frame), for a peer that only `bench`
 * uses.  The header gives the types; without it at build time, or without
 * the library at run time (libcharls.so.2, or AURP_CHARLS_LIB where that is
 * set), the row says why and the other peers run. */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#if defined(__has_include)
#if __has_include(<charls/charls.h>)
#include <charls/charls.h>
#include <dlfcn.h>
#define HAVE_CHARLS_HEADER 1
#endif
#endif

#ifdef HAVE_CHARLS_HEADER
#define CHARLS_SONAME "libcharls.so.2"

/* Every CharLS function the peer calls, each with its header's type. */
#define CHARLS_FUNCTIONS(X)                                                                        \
    X(charls_jpegls_encoder_create)                                                                \
    X(charls_jpegls_encoder_set_frame_info)                                                        \
    X(charls_jpegls_encoder_set_destination_buffer)                                                \
    X(charls_jpegls_encoder_encode_from_buffer)                                                    \
    X(charls_jpegls_encoder_get_bytes_written)                                                     \
    X(charls_jpegls_encoder_destroy)                                                               \
    X(charls_jpegls_decoder_create)                                                                \
    X(charls_jpegls_decoder_set_source_buffer)                                                     \
    X(charls_jpegls_decoder_read_header)                                                           \
    X(charls_jpegls_decoder_decode_to_buffer)                                                      \
    X(charls_jpegls_decoder_destroy)                                                               \
    X(charls_get_error_message)

typedef struct {
#define CHARLS_MEMBER(f) __typeof__(f) *f;
    CHARLS_FUNCTIONS(CHARLS_MEMBER)
#undef CHARLS_MEMBER
} charls_api;

/* NULL and a reason in *why when the library or one of its functions is
 * missing (fits/cfitsio_api.c opens cfitsio the same way). */
static const charls_api *charls_open(const char **why)
{
    static charls_api api;
    static int state; /* 0 not tried, 1 loaded, -1 failed */
    static char reason[160];
    if (state == 0) {
        const char *path = getenv("AURP_CHARLS_LIB");
        if (!path || !*path) path = CHARLS_SONAME;
        void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        state = lib ? 1 : -1;
        if (!lib) snprintf(reason, sizeof reason, "not installed (%s)", dlerror());
#define CHARLS_LOAD(f)                                                                             \
    if (state == 1) {                                                                              \
        api.f = (__typeof__(api.f))dlsym(lib, #f);                                                 \
        if (!api.f) state = -1, snprintf(reason, sizeof reason, "%s lacks %s", path, #f);          \
    }
        CHARLS_FUNCTIONS(CHARLS_LOAD)
#undef CHARLS_LOAD
    }
    *why = reason;
    return state == 1 ? &api : NULL;
}

/* Encode and decode the samples repeat times each; r gets the size, the
 * median times and whether the decoded samples are the input's. */
static void charls_run(const charls_api *cl, const uint16_t *pix, uint32_t width, uint32_t height,
                       int repeat, bench_result *r)
{
    size_t raw = (size_t)width * height * 2;
    size_t cap = raw * 2 + 65536;
    uint8_t *enc = malloc(cap);
    uint16_t *dec = malloc(raw);
    double *te = malloc(sizeof(double) * (size_t)repeat), *td = malloc(sizeof(double) * (size_t)repeat);
    if (!enc || !dec || !te || !td) {
        r->note = "out of memory";
        goto done;
    }
    charls_frame_info fi = {width, height, 16, 1};
    size_t written = 0;
    for (int i = 0; i < repeat; i++) {
        double t0 = cli_now_ms();
        charls_jpegls_encoder *e = cl->charls_jpegls_encoder_create();
        charls_jpegls_errc ec = cl->charls_jpegls_encoder_set_frame_info(e, &fi);
        if (!ec) ec = cl->charls_jpegls_encoder_set_destination_buffer(e, enc, cap);
        if (!ec) ec = cl->charls_jpegls_encoder_encode_from_buffer(e, pix, raw, 0);
        if (!ec) ec = cl->charls_jpegls_encoder_get_bytes_written(e, &written);
        cl->charls_jpegls_encoder_destroy(e);
        te[i] = cli_now_ms() - t0;
        if (ec) {
            r->note = cl->charls_get_error_message(ec);
            goto done;
        }
    }
    for (int i = 0; i < repeat; i++) {
        double t0 = cli_now_ms();
        charls_jpegls_decoder *d = cl->charls_jpegls_decoder_create();
        charls_jpegls_errc ec = cl->charls_jpegls_decoder_set_source_buffer(d, enc, written);
        if (!ec) ec = cl->charls_jpegls_decoder_read_header(d);
        if (!ec) ec = cl->charls_jpegls_decoder_decode_to_buffer(d, dec, raw, 0);
        cl->charls_jpegls_decoder_destroy(d);
        td[i] = cli_now_ms() - t0;
        if (ec) {
            r->note = cl->charls_get_error_message(ec);
            goto done;
        }
    }
    r->bytes = written;
    r->enc_ms = bench_median(te, repeat);
    r->dec_ms = bench_median(td, repeat);
    r->ok = memcmp(dec, pix, raw) == 0;
    r->note = r->ok ? "in process, pixels only" : "decoded pixels DIFFER";
done:
    free(enc), free(dec), free(te), free(td);
}
#endif

void bench_charls(const uint16_t *pix, uint32_t width, uint32_t height, int repeat,
                  bench_result *r)
{
    memset(r, 0, sizeof *r);
    r->name = "JPEG-LS (CharLS)";
    r->pixels_only = 1;
#ifndef HAVE_CHARLS_HEADER
    (void)pix, (void)width, (void)height, (void)repeat;
    r->note = "not installed (no CharLS headers at build time)";
#else
    const charls_api *cl = charls_open(&r->note);
    if (!cl) return;
    r->available = 1;
    charls_run(cl, pix, width, height, repeat, r);
#endif
}

/* libaurorapack: pack and unpack whole files (FITS frames) in memory.
 *
 * The public API of the shared library (libaurorapack.so.1) and of the
 * static one: this header and aurp.h, the codec core's API, which it
 * includes.  Build with `pkg-config --cflags --libs aurorapack`.
 *
 *   aurorapack_pack    a whole file (FITS or not) -> an .aurp stream; the
 *                      16-bit 2-D images are found through cfitsio
 *   aurorapack_unpack  an .aurp stream -> the original bytes, checked
 *   aurp_check_stream, aurp_unpack (into the caller's buffer),
 *   aurp_unpack_chunks (chunk by chunk, for verify), aurp_inspect,
 *   aurp_inspect_partial: see aurp.h.
 *
 * Every function is reentrant; errors come back as an aurp_status with the
 * reason in an aurp_error.  Memory the library returns is freed with
 * aurorapack_free. */
#ifndef AURORAPACK_H
#define AURORAPACK_H

#include <stddef.h>
#include <stdint.h>

#include "aurp.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AURORAPACK_VERSION_MAJOR 1
#define AURORAPACK_VERSION_MINOR 0
#define AURORAPACK_VERSION_PATCH 0

/* "1.0.0": the library's version (the soname follows the major). */
const char *aurorapack_version(void);

/* What aurorapack_pack found in the file. */
enum {
    AURORAPACK_FITS_IMAGE = 0, /* FITS with 16-bit 2-D images: predicted coding */
    AURORAPACK_FITS_OTHER = 1, /* valid FITS without one: general-purpose coding */
    AURORAPACK_NOT_FITS = 2,   /* not FITS or truncated */
};

typedef struct {
    int kind;      /* AURORAPACK_* above */
    int nimages;   /* images coded with the image codec */
    char why[256]; /* NOT_FITS: the reason; FITS_OTHER: why no image qualified */
} aurorapack_layout;

/* Packs a whole file.  params NULL: the defaults (aurp_params_default);
 * threads >= 1.  A file that is not FITS is refused (AURP_ERR_PARAM, the
 * reason in err) unless any != 0: then it is packed with the
 * general-purpose coder, as `aurorapack pack --any`.  *out is allocated by
 * the library (aurorapack_free); layout may be NULL. */
aurp_status aurorapack_pack(const uint8_t *file, size_t len, const aurp_params *params,
                            int threads, int any, uint8_t **out, size_t *out_len,
                            aurorapack_layout *layout, aurp_error *err);

/* Restores the original bytes, size and XXH3-64 checked.  max_output: the
 * largest original accepted (0: AURP_DEFAULT_MAX_OUTPUT, 4 GiB); a stream
 * that declares more is refused with AURP_ERR_LIMIT before any allocation.
 * *out is allocated by the library (aurorapack_free). */
aurp_status aurorapack_unpack(const uint8_t *packed, size_t len, int threads,
                              uint64_t max_output, uint8_t **out, size_t *out_len,
                              aurp_error *err);

void aurorapack_free(void *p);

#ifdef __cplusplus
}
#endif
#endif

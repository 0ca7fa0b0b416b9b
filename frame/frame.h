/* frame: whole files in memory <-> .aurp streams.
 *
 * The one layer the CLI and the daemon call to pack and unpack.  It finds the
 * images of a FITS file through cfitsio (fits/) and hands the bytes and the
 * image regions to the codec core; it knows nothing of how images are coded,
 * and its callers know nothing of FITS.
 */
#ifndef FRAME_H
#define FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "aurp.h"

#define FRAME_MAX_REGIONS 64

typedef enum {
    FRAME_FITS_IMAGE = 0, /* FITS with >= 1 2-D BITPIX=16 image: predicted coding */
    FRAME_FITS_OTHER = 1, /* valid FITS without one: general-purpose coding only */
    FRAME_NOT_FITS = 2,   /* not FITS, truncated, or structurally corrupt */
} frame_kind;

typedef struct {
    frame_kind kind;
    int nregions;
    aurp_region regions[FRAME_MAX_REGIONS];
    int nhdus;
    char why[256]; /* NOT_FITS: the reason; OTHER: why no image qualified */
    uint64_t trailing_bytes; /* bytes after the last HDU (kept, packed as general bytes) */
} frame_layout;

/* "fits-image", "fits-other", "not-fits". */
const char *frame_kind_name(frame_kind kind);

/* Classifies a file and finds its image regions.  Never fails on bad input:
 * bad input is kind FRAME_NOT_FITS with the reason in why.  Where cfitsio
 * cannot be loaded every file is FRAME_NOT_FITS, saying so in why. */
void frame_layout_of(const uint8_t *file, size_t len, frame_layout *out);

/* 0 when FITS headers can be read (cfitsio, opened on first use: see
 * fits/cfitsio_api.h), else -1 with the reason in why.  A program whose
 * job is FITS frames (the daemon) asks before it takes any. */
int frame_fits_ready(char *why, size_t why_len);

/* Packs a file with a known layout.  enc == NULL: CPU encoder, threads >= 1.
 * *out is malloc'd (free it).  A FRAME_NOT_FITS layout is packed with the
 * general-purpose coder only, so the bytes are never lost. */
aurp_status frame_pack(const uint8_t *file, size_t len, const frame_layout *layout,
                       const aurp_params *p, const aurp_image_encoder *enc, int threads,
                       uint8_t **out, size_t *out_len, aurp_error *err);

/* Restores the original bytes (checksum verified).  *out is malloc'd.
 * Refuses (AURP_ERR_LIMIT) a stream that declares more than
 * AURP_DEFAULT_MAX_OUTPUT bytes. */
aurp_status frame_unpack(const uint8_t *packed, size_t len, int threads, uint8_t **out,
                         size_t *out_len, aurp_error *err);

/* frame_unpack with the caller's output limit (0: AURP_DEFAULT_MAX_OUTPUT).
 * The whole stream is checked against itself and the limit before the
 * output is allocated. */
aurp_status frame_unpack_limited(const uint8_t *packed, size_t len, int threads,
                                 uint64_t max_output, uint8_t **out, size_t *out_len,
                                 aurp_error *err);

#endif

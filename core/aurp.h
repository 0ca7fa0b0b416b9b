/* aurorapack codec core: public API.
 *
 * Pure computation on memory buffers: no files, no clocks, no libraries
 * beyond libc and C11 threads.  Two levels:
 *   - the image codec: one 2-D 16-bit image (FITS BITPIX=16 big-endian
 *     bytes) <-> one image stream (docs/FORMAT.md, "Image stream");
 *   - the container: a whole original file <-> one .aurp stream, in which
 *     the caller-designated image regions use the image codec and every
 *     other byte a general-purpose coder, with the size and the XXH3-64 of
 *     the original checked on every decode.
 * The caller (the FITS layer) says where the images are; the core never
 * parses FITS.
 */
#ifndef AURP_H
#define AURP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AURP_EXTENSION ".aurp"
#define AURP_FORMAT_VERSION 1

typedef enum {
    AURP_OK = 0,
    AURP_ERR_PARAM,    /* bad argument or parameter out of range */
    AURP_ERR_NOMEM,    /* allocation failed */
    AURP_ERR_CAPACITY, /* output buffer too small */
    AURP_ERR_CORRUPT,  /* stream malformed or truncated */
    AURP_ERR_CHECKSUM, /* decoded bytes do not match the stored checksum */
    AURP_ERR_VERSION,  /* stream written by a newer, unknown format */
    AURP_ERR_BACKEND,  /* an image encoder backend (GPU) failed */
    AURP_ERR_LIMIT,    /* the stream declares more output than the caller's limit */
} aurp_status;

typedef struct {
    char msg[256];
} aurp_error;

const char *aurp_status_name(aurp_status s);

/* Profiles name a prediction + coding method.  The stream records the
 * profile and its parameters, so every decoder reads every stream. */
enum {
    AURP_PROFILE_PAPER = 1, /* the paper's online DPCM, static rANS (FORMAT.md section 2) */
    AURP_PROFILE_LSMIX = 2, /* ridge LS blended with column means, context-adaptive rANS (section 3) */
};

/* What the fields mean depends on the profile:
 *   paper: N = spectral order 1..32, M = equations per previous row 1..16,
 *          T = escape threshold >= 0 (0: no escapes);
 *   lsmix: N = spectral lags 1..16, M = training window in columns (odd,
 *          1..17), T unused (0). */
typedef struct {
    int profile;   /* AURP_PROFILE_* */
    int order;     /* N */
    int equations; /* M */
    int threshold; /* T */
} aurp_params;

/* The default profile (lsmix) with its defaults. */
void aurp_params_default(aurp_params *p);
/* A profile's defaults: paper N = 11, M = 7, T = 13 (the paper's best);
 * lsmix N = 6, M = 9, T = 0.  Returns 0, or -1 for an unknown profile. */
int aurp_params_for_profile(aurp_params *p, int profile);
aurp_status aurp_params_check(const aurp_params *p, aurp_error *err);
const char *aurp_profile_name(int profile);
int aurp_profile_from_name(const char *name); /* 0 if unknown */

/* ---- image codec --------------------------------------------------- */

/* Worst-case size of one image stream. */
size_t aurp_image_bound(uint32_t width, uint32_t height);

/* be16: width*height samples, row-major, as FITS stores BITPIX=16 (signed
 * big-endian); the codec works on u = bits XOR 0x8000.  threads >= 1. */
aurp_status aurp_image_encode(const uint8_t *be16, uint32_t width, uint32_t height,
                              const aurp_params *p, int threads, uint8_t *out, size_t cap,
                              size_t *out_len, aurp_error *err);

/* Decodes a stream whose dimensions must be width x height. */
aurp_status aurp_image_decode(const uint8_t *in, size_t in_len, uint32_t width, uint32_t height,
                              int threads, uint8_t *be16_out, aurp_error *err);

/* Another backend for the same image encoder (the GPU): it must write the
 * very bytes aurp_image_encode writes.  The container calls it for every
 * image region; returning an error makes the whole pack fail. */
typedef struct {
    aurp_status (*encode)(void *ctx, const uint8_t *be16, uint32_t width, uint32_t height,
                          const aurp_params *p, uint8_t *out, size_t cap, size_t *out_len,
                          aurp_error *err);
    void *ctx;
    const char *name; /* "cpu", "gpu:0", ... for reports */
} aurp_image_encoder;

/* ---- container ----------------------------------------------------- */

/* An image inside the original file: width*height 16-bit big-endian samples
 * starting at byte offset.  Regions must be sorted and must not overlap. */
typedef struct {
    uint64_t offset;
    uint32_t width;  /* FITS NAXIS1, the fast (spectral) axis */
    uint32_t height; /* FITS NAXIS2 */
} aurp_region;

/* aurp_pack takes at most this many regions (aurp_pack_bound counts on it). */
#define AURP_MAX_REGIONS 256

/* Enough output for aurp_pack of any input of this size (every chunk that
 * does not shrink is stored). */
size_t aurp_pack_bound(size_t original_size);

/* Packs the original bytes.  enc == NULL uses the CPU encoder with threads. */
aurp_status aurp_pack(const uint8_t *src, size_t src_len, const aurp_region *regions,
                      int nregions, const aurp_params *p, const aurp_image_encoder *enc,
                      int threads, uint8_t *out, size_t cap, size_t *out_len, aurp_error *err);

/* The original size recorded in a stream's header (to size the output). */
aurp_status aurp_original_size(const uint8_t *in, size_t in_len, uint64_t *size,
                               aurp_error *err);

/* Restores the original bytes and verifies size and checksum. */
aurp_status aurp_unpack(const uint8_t *in, size_t in_len, int threads, uint8_t *out, size_t cap,
                        size_t *out_len, aurp_error *err);

/* What `aurorapack info` prints. */
enum { AURP_CHUNK_STORED = 0, AURP_CHUNK_GENERAL = 1, AURP_CHUNK_IMAGE = 2, AURP_CHUNK_TEXT = 3 };

typedef struct {
    int method;           /* AURP_CHUNK_* */
    uint64_t raw_len;     /* bytes of the original it restores */
    uint64_t enc_len;     /* bytes in the stream */
    /* image chunks only: */
    uint32_t width, height;
    int profile, order, equations, threshold;
    int32_t t_lo, t_hi;   /* coded residual range, t_lo > t_hi when empty */
    uint64_t escapes;
} aurp_chunk_info;

typedef struct {
    int version;
    uint64_t original_size;
    uint64_t checksum; /* XXH3-64 of the original */
    int nchunks;
    aurp_chunk_info *chunks; /* malloc'd: aurp_info_free */
} aurp_info;

aurp_status aurp_inspect(const uint8_t *in, size_t in_len, aurp_info *info, aurp_error *err);
void aurp_info_free(aurp_info *info);

/* ---- decoding under a memory limit ----------------------------------
 * A stream of a few bytes can validly declare gigabytes of output (a flat
 * image codes to almost nothing), so a decoder cannot bound its memory by
 * the stream's size: it bounds it by a limit on the output, as zstd does.
 * The functions below check every declared size against the stream and the
 * limit before they allocate anything; decoding then needs the largest
 * chunk plus the image decoder's working memory (a few bytes per pixel),
 * never the whole output unless the caller asks for it. */

/* The default limit on the restored size: 4 GiB (a station frame is 2 MiB). */
#define AURP_DEFAULT_MAX_OUTPUT ((uint64_t)4 << 30)

/* Validates a stream without decoding it and without allocating: header,
 * stream checksum, every chunk header (and every image stream header),
 * raw lengths that add up to the original size, nothing after the last
 * chunk, and an original size <= max_output (0: AURP_DEFAULT_MAX_OUTPUT),
 * else AURP_ERR_LIMIT.  *original_size (may be NULL) is set on success. */
aurp_status aurp_check_stream(const uint8_t *in, size_t in_len, uint64_t max_output,
                              uint64_t *original_size, aurp_error *err);

/* Receives the restored bytes in order, a chunk at a time; returns 0 to go
 * on, nonzero to stop the decoding. */
typedef int (*aurp_write_fn)(void *ctx, const uint8_t *data, size_t len);

/* Decodes chunk by chunk after aurp_check_stream, hashing the restored
 * bytes as they come (XXH3 streaming) and handing each chunk to write
 * (NULL: verify only, nothing is kept).  write sees bytes before the final
 * checksum is known: a caller must discard them unless AURP_OK comes back.
 * A write that returns nonzero ends it with AURP_ERR_PARAM.  *restored
 * (may be NULL) is the number of bytes restored and verified. */
aurp_status aurp_unpack_chunks(const uint8_t *in, size_t in_len, int threads,
                               uint64_t max_output, aurp_write_fn write, void *ctx,
                               uint64_t *restored, aurp_error *err);

/* What can be said about a damaged stream (aurp_inspect_partial). */
typedef struct {
    int header_ok;         /* magic, version and flags readable */
    int checksum_ok;       /* the stream checksum matches the chunk bytes */
    int truncated;         /* the stream ends inside a chunk, or before its last chunk */
    uint64_t missing;      /* truncated: at least this many bytes are missing */
    uint32_t declared_chunks;
    uint64_t readable_raw; /* bytes of the original covered by the readable chunks */
} aurp_damage;

/* As aurp_inspect, but goes on past a stream checksum mismatch and, when a
 * chunk cannot be read, keeps the chunks before it in info (free it with
 * aurp_info_free whatever the result).  Returns AURP_OK only for a stream
 * aurp_inspect accepts; otherwise the first fault, with the reason in err
 * ("truncated: ..." for a stream cut short) and the facts in *damage. */
aurp_status aurp_inspect_partial(const uint8_t *in, size_t in_len, aurp_info *info,
                                 aurp_damage *damage, aurp_error *err);

/* XXH3-64 of a buffer, as stored in the container. */
uint64_t aurp_checksum(const void *data, size_t len);

#ifdef __cplusplus
}
#endif
#endif

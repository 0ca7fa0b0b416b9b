/* Declarations shared by the files of the codec core and its tests; not a
 * public API (aurp.h and imgstream.h are). */
#ifndef AURP_INTERNAL_H
#define AURP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "aurp.h"
#include "imgstream.h"

#ifdef __cplusplus
extern "C" { /* the GPU encoder (C++) calls the core's helpers too */
#endif

/* aurp_fail (errors) is declared in imgstream.h, for the backends too. */

/* ---- little-endian fields ------------------------------------------ */

static inline void aurp_put_u16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void aurp_put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline void aurp_put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint16_t aurp_get_u16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t aurp_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t aurp_get_u64(const uint8_t *p)
{
    return (uint64_t)aurp_get_u32(p) | ((uint64_t)aurp_get_u32(p + 4) << 32);
}

/* ---- varints: 7 bits a byte, low bits first, bit 7 set on every byte
 * but the last (the count table's, FORMAT.md 2.4; lsmix's cascade weights,
 * 3.1) ------------------------------------------------------------------ */

static inline size_t aurp_put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* The varint at p[*pos] (at most 10 bytes, within len): 0, *pos past it;
 * -1 where it does not end in time. */
static inline int aurp_get_varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *v)
{
    uint64_t x = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*pos >= len) return -1;
        uint8_t b = p[(*pos)++];
        x |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

/* ---- general-purpose byte coder (FORMAT.md section 5) --------------- */

/* Codes src[0..n-1] into out.  Returns the coded length, or 0 when it would
 * not fit in cap (callers use cap to stop early and store instead), or
 * (size_t)-1 when out of memory. */
size_t aurp_gc_encode(const uint8_t *src, size_t n, uint8_t *out, size_t cap);
/* Decodes exactly n bytes from in[0..in_len-1], which must be consumed
 * exactly.  Returns 0, -1 if corrupt, -2 if out of memory. */
int aurp_gc_decode(const uint8_t *in, size_t in_len, uint8_t *out, size_t n);

/* The text coder (FORMAT.md section 5.2), the same interface as the general
 * coder's; the container uses it for the non-image bytes of lsmix packs up
 * to AURP_TEXT_CHUNK_MAX bytes (it mixes seven estimates a bit: several
 * times slower than the general coder). */
#define AURP_TEXT_CHUNK_MAX ((size_t)1 << 20)
size_t aurp_tc_encode(const uint8_t *src, size_t n, uint8_t *out, size_t cap);
int aurp_tc_decode(const uint8_t *in, size_t in_len, uint8_t *out, size_t n);

/* ---- frequencies and rANS ------------------------------------------- */

/* aurp_normalize with probability bits P (12..20).  Returns AURP_OK, or
 * AURP_ERR_CORRUPT when more than 2^P symbols have a count (no valid
 * frequencies exist) or the counts are all zero. */
aurp_status aurp_normalize_bits(const uint32_t *count, uint32_t nsym, int P, uint32_t *freq,
                                uint32_t *cum);

/* Symbol lookup for the rANS decoder: a bucket table over the slot's top
 * bits gives the first candidate symbol; a short scan finds the one. */
#define AURP_RANS_BUCKET_BITS 12
typedef struct {
    int P;
    uint32_t nsym;
    const uint32_t *freq, *cum; /* cum has nsym + 1 entries */
    uint32_t bucket[1u << AURP_RANS_BUCKET_BITS];
} aurp_rans_table;

void aurp_rans_table_init(aurp_rans_table *t, const uint32_t *freq, const uint32_t *cum,
                          uint32_t nsym, int P);
/* Decodes n symbols of one segment; 0 when valid, -1 when corrupt. */
int aurp_rans_decode_segment(const aurp_rans_table *t, const uint8_t *in, size_t in_len,
                             uint32_t *sym, size_t n);
/* Encoder with explicit P (the public one uses AURP_PROB_BITS). */
size_t aurp_rans_encode_segment_bits(const uint32_t *sym, size_t n, const uint32_t *freq,
                                     const uint32_t *cum, int P, uint8_t *out, size_t cap);

/* ---- image decoding into the output's own memory ----------------------- */

/* aurp_image_decode (aurp.h) into out, whose 2 x width x height bytes also hold
 * the decoder's 16-bit samples before they become big-endian bytes in place:
 * out must be memory from malloc (no declared type; aligned), so that it may
 * be written as uint16_t.  The container's chunk-by-chunk decoding (unpack,
 * verify) uses it for its scratch: a frame's second sample plane cost its
 * first-touch page faults, about a quarter of an unpack's.  On failure out
 * holds garbage. */
aurp_status aurp_image_decode_in_place(const uint8_t *in, size_t in_len, uint32_t width,
                                       uint32_t height, int threads, void *out, aurp_error *err);

/* ---- image stream parsing ------------------------------------------- */

#define AURP_STREAM_HEADER 40

typedef struct {
    int profile, order, equations, prob_bits, seg_log2;
    uint32_t width, height, threshold;
    int32_t t_lo, t_hi;
    uint32_t nsym;
    uint64_t escapes;
    uint32_t table_len;
    /* filled by aurp_stream_parse only: */
    uint32_t *count, *freq, *cum; /* malloc'd, [nsym], [nsym], [nsym + 1] */
    uint32_t nseg;
    const uint8_t *seg_lens;   /* nseg u32 */
    uint64_t *seg_off;         /* malloc'd [nseg + 1]: offsets into segs */
    const uint8_t *segs;
    const uint8_t *esc;        /* escapes, u16 each */
} aurp_stream_view;

/* The header of an lsmix stream (lsmix_codec.c): fills profile, order (K),
 * equations (M), width, height, seg_log2, prob_bits; t_lo > t_hi. */
aurp_status lsx_parse_header(const uint8_t *in, size_t in_len, aurp_stream_view *v,
                             aurp_error *err);

/* Checks and reads the header only (whatever the profile). */
aurp_status aurp_stream_parse_header(const uint8_t *in, size_t in_len, aurp_stream_view *v,
                                     aurp_error *err);
/* Checks the whole layout and decodes the count table. */
aurp_status aurp_stream_parse(const uint8_t *in, size_t in_len, aurp_stream_view *v,
                              aurp_error *err);
void aurp_stream_view_free(aurp_stream_view *v);

/* ---- threads ----------------------------------------------------------- */

/* Decodes rows 0..height-1 of a row-trained predictor: for each row m,
 * prepare(ctx, b, m) for every band b (bands 1..nb-1 on threads of their
 * own, started once; band 0 on the caller's), then reconstruct(ctx, m) on
 * the caller's thread, which returns nonzero to stop.  prepare(b, m) may
 * read rows < m.  Returns the last reconstruct result (0: every row).
 * Without threads it does the same steps on the caller's thread. */
int aurp_decode_rows(int nb, uint32_t height, void (*prepare)(void *ctx, int band, uint32_t m),
                     int (*reconstruct)(void *ctx, uint32_t m), void *ctx);

/* Decodes rows 0..height-1 of a row-trained predictor whose columns are cut
 * into nchunks chunks, preparing row m+1 while row m is reconstructed
 * (wavefront.c).  prepare(ctx, k, m) prepares chunk k for row m and may read
 * rows < m-1 and columns < need[k] (<= width) of row m-1; it runs on any of
 * the threads, jobs of one chunk in row order.  reconstruct(ctx, m, wf)
 * runs on the caller's thread for each row in order; before it uses chunk k
 * it calls aurp_wavefront_await(wf, m, k) (every k, in increasing order),
 * and it says how far the row is final with aurp_wavefront_publish(wf, m,
 * columns) every few columns (the end of the row is published for it).  It
 * returns nonzero to stop.  threads - 1 helpers (fewer, or none, if they
 * cannot start).  Returns the last reconstruct result, or -2 when out of
 * memory before anything ran. */
typedef struct aurp_wavefront aurp_wavefront;
int aurp_decode_wavefront(int threads, uint32_t width, uint32_t height, uint32_t nchunks,
                          const uint32_t *need, void (*prepare)(void *ctx, uint32_t chunk, uint32_t m),
                          int (*reconstruct)(void *ctx, uint32_t m, aurp_wavefront *wf), void *ctx);
void aurp_wavefront_await(aurp_wavefront *wf, uint32_t m, uint32_t chunk);
void aurp_wavefront_publish(aurp_wavefront *wf, uint32_t m, uint32_t columns);

/* Runs fn(ctx, i) for i = 0..n-1 on n threads (i = 0 on the caller's).
 * Returns 0, or -1 when threads could not be started (then nothing ran
 * beyond what the caller's thread ran: the caller falls back to 1). */
int aurp_parallel(int n, void (*fn)(void *ctx, int i), void *ctx);

#ifdef __cplusplus
}
#endif

#endif

/* The residual coding stage of the image stream, shared by every encoder
 * backend: the CPU encoder and the GPU encoder compute residuals their own
 * way, then both use these functions (the GPU on the host side, for the
 * small serial parts) so that their streams are byte-identical.
 *
 * Pipeline of an encoder (docs/FORMAT.md, "Image stream"):
 *   1. residual e = u - pred for every pixel, raster order;
 *   2. histogram of e over [-65535, 65535]               (backend)
 *   3. aurp_plan_build: T-, T+, symbol counts, normalised frequencies;
 *   4. symbols: s = e - T- if T- <= e <= T+, else ESC = nsym - 1 with the
 *      pixel value u appended to the escape list          (backend)
 *   5. each segment of 2^AURP_SEG_LOG2 symbols rANS-coded independently
 *      with aurp_rans_encode_segment                      (backend)
 *   6. aurp_stream_write_* assemble header, table, segment sizes, segments
 *      and escapes.
 */
#ifndef AURP_IMGSTREAM_H
#define AURP_IMGSTREAM_H

#include <stddef.h>
#include <stdint.h>

#include "aurp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills err (may be NULL) with a printf-style reason and returns s: how
 * the core and the encoder backends (gpu/) report an error. */
aurp_status aurp_fail(aurp_error *err, aurp_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#define AURP_RESIDUAL_MAX 65535                       /* |e| <= 65535 */
#define AURP_HIST_BINS (2 * AURP_RESIDUAL_MAX + 1)    /* index e + 65535 */
#define AURP_PROB_BITS 20                             /* frequencies sum to 2^20 */
#define AURP_SEG_LOG2 12                              /* 4096 symbols a segment */
#define AURP_RANS_L (1u << 23)                        /* rANS lower bound */

typedef struct {
    int threshold;      /* T */
    int32_t t_lo, t_hi; /* coded range; t_lo > t_hi when no value reaches T */
    uint32_t nsym;      /* t_hi - t_lo + 2, or 1; symbol nsym-1 is ESC */
    uint64_t total;     /* pixels */
    uint64_t escapes;   /* count of ESC */
    uint32_t *count;    /* [nsym] occurrences */
    uint32_t *freq;     /* [nsym] normalised, sum 2^AURP_PROB_BITS */
    uint32_t *cum;      /* [nsym + 1] prefix of freq */
} aurp_plan;

/* From the histogram (hist[e + 65535]) and T.  Deterministic: every backend
 * gets the same plan.  Returns AURP_OK or AURP_ERR_NOMEM. */
aurp_status aurp_plan_build(const uint64_t *hist, int threshold, aurp_plan *plan);
void aurp_plan_free(aurp_plan *plan);

/* The same plan as aurp_plan_build, from a slice of the histogram:
 * hist[i] is the count of residual e_lo + i, i < n, and total the number of
 * pixels.  Every residual outside the slice must occur fewer than max(T, 1)
 * times (the caller's promise: the slice covers [T-, T+]), so that T-/T+ lie
 * in it and everything outside is an escape.  It lets a backend that finds
 * T-/T+ itself (the GPU) copy and scan a few hundred bins instead of 131071.
 * Returns AURP_OK, AURP_ERR_NOMEM, or AURP_ERR_PARAM for a slice outside
 * [-65535, 65535] or counts that cannot be normalised. */
aurp_status aurp_plan_build_range(const uint64_t *hist, int32_t e_lo, uint32_t n, uint64_t total,
                                  int threshold, aurp_plan *plan);

/* Normalises counts to frequencies summing to 2^AURP_PROB_BITS (used by
 * aurp_plan_build and by the decoder on the stored counts). */
aurp_status aurp_normalize(const uint32_t *count, uint32_t nsym, uint32_t *freq, uint32_t *cum);

/* Symbol of residual e under a plan. */
static inline uint32_t aurp_symbol_of(const aurp_plan *plan, int32_t e)
{
    return (e >= plan->t_lo && e <= plan->t_hi) ? (uint32_t)(e - plan->t_lo) : plan->nsym - 1;
}

/* rANS-encodes sym[0..n-1] (one segment) into out; returns the byte count,
 * or 0 if cap is too small.  cap >= 4 + 3*n always suffices. */
size_t aurp_rans_encode_segment(const uint32_t *sym, size_t n, const uint32_t *freq,
                                const uint32_t *cum, uint8_t *out, size_t cap);

/* Assembles a whole image stream from its parts; returns AURP_OK or
 * AURP_ERR_CAPACITY.  seg_data holds the nseg segments back to back with
 * seg_len[i] bytes each; escapes are the u values in raster order. */
aurp_status aurp_stream_write(uint8_t *out, size_t cap, size_t *out_len, uint32_t width,
                              uint32_t height, const aurp_params *p, const aurp_plan *plan,
                              const uint32_t *seg_len, uint32_t nseg, const uint8_t *seg_data,
                              const uint16_t *escapes);

#ifdef __cplusplus
}
#endif
#endif

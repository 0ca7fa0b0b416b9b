/* frame_layout_of: which parts of a FITS file are 16-bit 2-D images.
 *
 * cfitsio parses the headers (from the caller's buffer, read-only, never
 * copied); this file adds the structural checks cfitsio leaves to the
 * reader: the file must start with "SIMPLE  =" and must hold every data
 * byte its headers announce.  Decisions (docs/CLI.md, "What is an image"):
 *   - the last HDU may lack its final padding to 2880 bytes: the data are
 *     all there, and the missing padding costs nothing to restore;
 *   - bytes after the last HDU that do not form another HDU are "trailing
 *     bytes": the file stays FITS (its images are still found) and the
 *     trailing bytes are packed as general bytes like any other; but bytes
 *     that start with "XTENSION=" and do not form a whole header are a file
 *     cut inside that extension (or still being written): not FITS;
 *   - tile-compressed images (BINTABLE with ZIMAGE = T) are tables here:
 *     their bytes are already compressed.
 */
#include "frame.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cfitsio_api.h"

#define FITS_BLOCK 2880u

typedef struct {
    int ok;          /* header keywords read */
    int is_image;    /* primary HDU or XTENSION = 'IMAGE' */
    char xtension[FLEN_VALUE];
    long long bitpix, naxis, naxes[3], pcount, gcount;
    unsigned long long data_bytes; /* exact size of the data, unpadded */
} hdu_keys;

static void set_why(frame_layout *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->why, sizeof out->why, fmt, ap);
    va_end(ap);
}

static void append_why(frame_layout *out, const char *fmt, ...)
{
    size_t used = strlen(out->why);
    if (used + 1 >= sizeof out->why) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->why + used, sizeof out->why - used, fmt, ap);
    va_end(ap);
}

static long long key_or(const cfitsio_api *cf, fitsfile *f, const char *name, long long dflt)
{
    int status = 0;
    long long v;
    if (cf->read_key_lnglng(f, name, &v, NULL, &status)) return dflt;
    return v;
}

/* Reads the structural keywords of the current HDU and the exact size of its
 * data (FITS standard 4.4.1: |BITPIX|/8 * GCOUNT * (PCOUNT + prod NAXISn),
 * NAXIS1 left out of the product for random groups). */
static void read_hdu_keys(const cfitsio_api *cf, fitsfile *f, int hdu_index, hdu_keys *k)
{
    memset(k, 0, sizeof *k);
    int status = 0;
    k->bitpix = key_or(cf, f, "BITPIX", 0);
    k->naxis = key_or(cf, f, "NAXIS", -1);
    k->pcount = key_or(cf, f, "PCOUNT", 0);
    k->gcount = key_or(cf, f, "GCOUNT", 1);
    if (hdu_index == 0) {
        k->is_image = 1;
    } else if (cf->read_key_str(f, "XTENSION", k->xtension, NULL, &status) == 0) {
        k->is_image = strcmp(k->xtension, "IMAGE") == 0;
    }
    if (k->naxis < 0 || k->naxis > 999) return;
    unsigned long long prod = k->naxis > 0 ? 1 : 0;
    int groups = 0;
    for (long long i = 1; i <= k->naxis; i++) {
        char name[32];
        snprintf(name, sizeof name, "NAXIS%lld", i);
        long long n = key_or(cf, f, name, -1);
        if (n < 0) return;
        if (i <= 3) k->naxes[i - 1] = n;
        if (i == 1 && n == 0 && hdu_index == 0) { groups = 1; continue; }
        if (n != 0 && prod > (1ull << 62) / (unsigned long long)n) return;
        prod *= (unsigned long long)n;
    }
    if (groups && prod == 1 && k->naxis == 1) prod = 0;
    long long bytes = k->bitpix < 0 ? -k->bitpix / 8 : k->bitpix / 8;
    if (prod || k->pcount) prod = (unsigned long long)bytes * (unsigned long long)k->gcount *
                                  (prod + (unsigned long long)k->pcount);
    k->data_bytes = prod;
    k->ok = 1;
}

/* Why an HDU is not a qualifying image, or NULL if it is one. */
static const char *not_image_reason(const hdu_keys *k, char *buf, size_t len)
{
    if (!k->is_image) {
        if (strcmp(k->xtension, "BINTABLE") == 0) return "BINTABLE";
        if (strcmp(k->xtension, "TABLE") == 0) return "ASCII TABLE";
        snprintf(buf, len, "XTENSION='%.40s'", k->xtension);
        return buf;
    }
    if (k->naxis == 0) return "no data (NAXIS=0)";
    if (k->bitpix != 16) {
        snprintf(buf, len, "BITPIX=%lld", k->bitpix);
        return buf;
    }
    if (k->naxis == 1) return "NAXIS=1 (1-D)";
    if (k->naxis > 2) {
        snprintf(buf, len, "NAXIS=%lld %s", k->naxis, k->naxis == 3 ? "cube" : "array");
        return buf;
    }
    if (k->naxes[0] < 1 || k->naxes[1] < 1) return "an empty axis";
    if (k->naxes[0] > UINT32_MAX || k->naxes[1] > UINT32_MAX) return "an axis over 2^32-1";
    if (k->pcount != 0 || k->gcount != 1) return "PCOUNT/GCOUNT not 0/1";
    return NULL;
}

void frame_layout_of(const uint8_t *file, size_t len, frame_layout *out)
{
    memset(out, 0, sizeof *out);
    out->kind = FRAME_NOT_FITS;
    if (len == 0) {
        set_why(out, "empty file (0 bytes)");
        return;
    }
    if (len < 9 || memcmp(file, "SIMPLE  =", 9) != 0) {
        set_why(out, "does not start with \"SIMPLE  =\" (not a FITS file)");
        return;
    }
    if (len < FITS_BLOCK) {
        set_why(out, "truncated: %zu bytes, shorter than one 2880-byte FITS header block", len);
        return;
    }

    /* (a program that cannot read headers refuses FITS work before it
     * starts: frame_fits_ready; here the file is kept as general bytes) */
    char no_reader[sizeof out->why];
    const cfitsio_api *cf = cfitsio(no_reader, sizeof no_reader);
    if (!cf) {
        set_why(out, "FITS headers cannot be read here: %s", no_reader);
        return;
    }
    fitsfile *f = NULL;
    int status = 0;
    void *mem = (void *)file; /* READONLY: cfitsio reads the caller's bytes in place */
    size_t memsize = len;
    if (cf->open_memfile(&f, "frame.fits", READONLY, &mem, &memsize, 0, NULL, &status)) {
        char msg[FLEN_STATUS];
        cf->get_errstatus(status, msg);
        set_why(out, "cfitsio cannot read the primary header: %s (status %d)", msg, status);
        cf->clear_errmsg();
        return;
    }

    unsigned long long end_of_hdus = 0; /* padded end of the last HDU read */
    int nhdus = 0, nother = 0;
    char buf[128];
    for (;;) {
        long long head_start, data_start, data_end;
        status = 0;
        if (cf->get_hduaddrll(f, &head_start, &data_start, &data_end, &status)) break;
        hdu_keys k;
        read_hdu_keys(cf, f, nhdus, &k);
        if (!k.ok) {
            set_why(out, "HDU %d: unreadable NAXIS keywords", nhdus + 1);
            goto not_fits;
        }
        unsigned long long exact_end = (unsigned long long)data_start + k.data_bytes;
        if (exact_end > len) {
            set_why(out, "truncated: data of HDU %d ends at byte %llu, file has %zu", nhdus + 1,
                    exact_end, len);
            goto not_fits;
        }
        const char *why = not_image_reason(&k, buf, sizeof buf);
        if (why == NULL) {
            if (out->nregions == FRAME_MAX_REGIONS) {
                set_why(out, "more than %d images", FRAME_MAX_REGIONS);
                goto not_fits;
            }
            aurp_region *r = &out->regions[out->nregions++];
            r->offset = (uint64_t)data_start;
            r->width = (uint32_t)k.naxes[0];
            r->height = (uint32_t)k.naxes[1];
        } else if (nother++ < 4) {
            append_why(out, "%sHDU %d: %s", nother > 1 ? "; " : "", nhdus + 1, why);
        }
        nhdus++;
        end_of_hdus = (unsigned long long)data_end;
        if (end_of_hdus >= len) break;
        int type;
        status = 0;
        if (cf->movrel_hdu(f, 1, &type, &status)) break; /* the rest is trailing bytes */
    }
    cf->close_file(f, &status);
    cf->clear_errmsg();
    out->nhdus = nhdus;
    if (nhdus == 0) {
        set_why(out, "cfitsio finds no HDU");
        out->kind = FRAME_NOT_FITS;
        return;
    }
    out->trailing_bytes = end_of_hdus < len ? len - end_of_hdus : 0;
    /* An extension header that cfitsio could not read is a file cut (or
     * still being written) inside that HDU, not junk after the end. */
    if (out->trailing_bytes >= 9 && memcmp(file + end_of_hdus, "XTENSION=", 9) == 0) {
        set_why(out, "truncated: header of HDU %d at byte %llu is incomplete, file has %zu",
                nhdus + 1, end_of_hdus, len);
        out->kind = FRAME_NOT_FITS;
        out->nregions = 0;
        out->trailing_bytes = 0;
        return;
    }
    if (out->nregions > 0) {
        out->kind = FRAME_FITS_IMAGE;
        out->why[0] = '\0';
    } else {
        out->kind = FRAME_FITS_OTHER;
    }
    return;

not_fits:
    status = 0;
    cf->close_file(f, &status);
    cf->clear_errmsg();
    out->kind = FRAME_NOT_FITS;
    out->nregions = 0;
    out->nhdus = nhdus;
}

int frame_fits_ready(char *why, size_t why_len)
{
    return cfitsio(why, why_len) ? 0 : -1;
}

/* Is a FITS file in the incoming directory complete on disk yet?
 *
 * The daemon's only knowledge of FITS: it walks the header cards of every
 * HDU (SIMPLE/XTENSION, BITPIX, NAXISn, PCOUNT, GCOUNT, END) to learn how
 * long the file must be.  This decides *when* to take a file, never how to
 * code it (frame/ and the codec do that, and they judge broken files).
 */
#ifndef AURORAD_FITSREADY_H
#define AURORAD_FITSREADY_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    FITSREADY_INCOMPLETE = 0, /* a prefix of a FITS file: wait for more bytes */
    FITSREADY_COMPLETE = 1,   /* every HDU's header and padded data are present */
    FITSREADY_BROKEN = 2,     /* not FITS, or a header that cannot be read */
} fitsready_state;

typedef struct {
    fitsready_state state;
    uint64_t needed;  /* bytes the structure read so far needs */
    int nhdus;
    char why[160];
} fitsready_result;

/* Reads the headers of the open file fd (size bytes long) with pread. */
void fitsready_check_fd(int fd, uint64_t size, fitsready_result *r);

#endif

/* For the core's tests and benchmark only: finds the primary image of a
 * simple FITS file by reading its header cards (the real FITS layer is
 * fits/, through cfitsio).  Also reads a whole file into memory. */
#ifndef CORE_FITSHDR_H
#define CORE_FITSHDR_H

#include <stddef.h>
#include <stdint.h>

/* Primary HDU with BITPIX = 16, NAXIS = 2: returns 0 and the data offset and
 * axes, or -1. */
int core_fits_primary_image(const uint8_t *file, size_t len, uint64_t *offset, uint32_t *width,
                            uint32_t *height);

/* malloc'd contents of path, or NULL. */
uint8_t *core_read_file(const char *path, size_t *len);

#endif

/* The cfitsio functions the FITS layer calls, from the library opened on
 * first use instead of linked.
 *
 * Why: libcfitsio brings in libcurl, GnuTLS, Kerberos and LDAP (35
 * libraries on Debian 12) whose constructors cost about 3 ms at the start
 * of every process that links it: 2.5 % of an `aurorapack unpack` of a
 * 1024 x 1024 frame, which never reads a FITS header (docs/BENCHMARKS.md).
 * Packing and the daemon load it once, on their first header.
 *
 * The library is the one the build linked against (its SONAME, found by
 * the Makefile), or AURP_CFITSIO_LIB where that is set. */
#ifndef AURP_CFITSIO_API_H
#define AURP_CFITSIO_API_H

#include <fitsio.h>
#include <stddef.h>

typedef struct {
    __typeof__(ffomem) *open_memfile;
    __typeof__(ffclos) *close_file;
    __typeof__(ffgerr) *get_errstatus;
    __typeof__(ffcmsg) *clear_errmsg;
    __typeof__(ffgkys) *read_key_str;
    __typeof__(ffgkyjj) *read_key_lnglng;
    __typeof__(ffghadll) *get_hduaddrll;
    __typeof__(ffmrhd) *movrel_hdu;
} cfitsio_api;

/* The functions, or NULL with the reason in why (the library or one of its
 * functions cannot be loaded; the same answer on every later call).
 * Thread-safe. */
const cfitsio_api *cfitsio(char *why, size_t why_len);

#endif

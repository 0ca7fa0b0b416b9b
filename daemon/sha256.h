/* SHA-256 (FIPS 180-4) of a buffer, as lowercase hex: the checksum in the
 * outbox's NAME.aurp.sha256 sidecars, which a receiver checks with
 * `sha256sum -c` and no aurorapack. */
#ifndef AURORAD_SHA256_H
#define AURORAD_SHA256_H

#include <stddef.h>

#define SHA256_HEX_LEN 64

/* Writes 64 hex digits and a NUL into hex (65 bytes). */
void sha256_hex(const void *data, size_t len, char hex[SHA256_HEX_LEN + 1]);

#endif

/* The capture time of a frame, which names its packed copy in the outbox:
 * "YYYYMMDDTHHMMSS.fffZ_NAME.aurp", so that the outbox sorts in capture
 * order whatever order the frames were committed in (a frame captured
 * later can be committed first: workers finish in any order).
 *
 * The time is DATE-OBS of the primary header (ISO 8601, UTC; a date alone
 * is combined with TIME-OBS when present), else DATE, else the file's
 * mtime (the writer's clock when it finished the frame). */
#ifndef AURORAD_CAPTURE_H
#define AURORAD_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "20140715T132940.000Z_" is 21 bytes */
#define CAPTURE_PREFIX_LEN 21

/* Capture time in milliseconds since the epoch from the primary header of
 * FITS bytes; false when no usable DATE-OBS or DATE card is there. */
bool capture_time_from_header(const uint8_t *data, size_t len, int64_t *epoch_ms);

/* Writes the "YYYYMMDDTHHMMSS.fffZ_" prefix (CAPTURE_PREFIX_LEN + NUL). */
void capture_prefix(int64_t epoch_ms, char out[CAPTURE_PREFIX_LEN + 1]);

/* Whether name starts with a capture prefix (the outbox's own names). */
bool capture_has_prefix(const char *name);

#endif
